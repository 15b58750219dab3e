/* tiler.c - libFuzzer harness: CuTe tilers (tiler.c): a layout, or nested tuples of layouts,
** integers and `_`; each parsed tiler also divides a fixed layout, as cute.logical_divide does. */
#include "fuzz.h"

#include "../layout/layout.h"

static int
one(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	Tiler t, t2;
	Layout a, out;
	Buf b, b2;
	Err e = { "" };

	buf_init(&b);
	buf_init(&b2);
	if (tiler_parse(s, &t, &e) < 0) {
		FUZZ_ERRMSG(&e, "tiler_parse");
		goto done;
	}
	tiler_print(&b, &t);
	FUZZ_CHECK(tiler_parse(b.s, &t2, &e) == 0, "'%s' printed as '%s', which does not parse: %s", s, b.s, e.msg);
	tiler_print(&b2, &t2);
	FUZZ_CHECK(strcmp(b.s, b2.s) == 0, "'%s': print '%s', reparsed print '%s'", s, b.s, b2.s);
	/* the division itself is the CuTe engineer's (cute.c); here only what a tiler reaches */
	if (cute_parse("(8,8):(8,1)", &a, &e) < 0)
		abort();
	if (cute_logical_divide(&a, &t, &out, &e) < 0)
		FUZZ_ERRMSG(&e, "logical_divide");
	if (cute_composition_tiler(&a, &t, &out, &e) < 0)
		FUZZ_ERRMSG(&e, "composition");
done:
	buf_free(&b);
	buf_free(&b2);
	free(s);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_scribble(64 << 10);
	return one(data, size);
}

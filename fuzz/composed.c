/* composed.c - libFuzzer harness: swizzles Sw<B,M,S> and composed layouts
** `Sw<B,M,S> o OFFSET o LAYOUT` (swizzle.c). */
#include "fuzz.h"

#include "../layout/layout.h"

static int
one(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	Swizzle sw;
	Composed c, c2;
	Buf b, b2;
	Err e = { "" };
	int64_t v, sz;

	buf_init(&b);
	buf_init(&b2);
	if (swizzle_parse(s, &sw, &e) == 0) {
		swizzle_print(&b, &sw);
		FUZZ_CHECK(swizzle_parse(b.s, &sw, &e) == 0, "'%s' printed as '%s': %s", s, b.s, e.msg);
		(void)swizzle_apply(&sw, INT64_MAX);
		(void)swizzle_apply(&sw, 12345);
		buf_reset(&b);
	} else {
		FUZZ_ERRMSG(&e, "swizzle_parse");
	}
	if (composed_parse(s, &c, &e) == 0) {
		composed_print(&b, &c);
		FUZZ_CHECK(composed_parse(b.s, &c2, &e) == 0, "'%s' printed as '%s', which does not parse: %s",
		           s, b.s, e.msg);
		composed_print(&b2, &c2);
		FUZZ_CHECK(strcmp(b.s, b2.s) == 0, "'%s': print '%s', reparsed print '%s'", s, b.s, b2.s);
		sz = cute_size(&c.layout);
		if (composed_eval_idx(&c, 0, &v, &e) < 0)
			FUZZ_ERRMSG(&e, "composed_eval_idx(0)");
		if (composed_eval_idx(&c, sz - 1, &v, &e) < 0)
			FUZZ_ERRMSG(&e, "composed_eval_idx(size-1)");
	} else {
		FUZZ_ERRMSG(&e, "composed_parse");
	}
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

/* axe.c - libFuzzer harness: Axe layouts in TVM TIRx notation (axe.c), e.g.
** `S[(8,2):(4@lane,1@warp)] + R[2:4@warp] + 5@warp`, and logical shapes `(4,8)`.
** An input `LAYOUT|SHAPE` also groups the layout by the shape. */
#include "fuzz.h"

#include "../layout/layout.h"

static void
layout_props(const char *in, const AxeLayout *l)
{
	AxeLayout l2, c;
	AxeCoord crd[4];
	Buf b, b2;
	Err e = { "" };
	int gc, n;
	int64_t sz = axe_size(l);

	buf_init(&b);
	buf_init(&b2);
	axe_print(&b, l);
	FUZZ_CHECK(axe_parse(b.s, &l2, &e) == 0, "'%s' printed as '%s', which does not parse: %s", in, b.s, e.msg);
	axe_print(&b2, &l2);
	FUZZ_CHECK(strcmp(b.s, b2.s) == 0, "'%s': print '%s', reparsed print '%s'", in, b.s, b2.s);
	FUZZ_CHECK(axe_equal(l, &l2), "'%s': reparsed layout differs", in);
	FUZZ_CHECK(sz >= 1 && sz < CUTE_SIZE_LIMIT, "'%s': size %lld", in, (long long)sz);
	FUZZ_CHECK(axe_nreplicas(l) >= 1, "'%s': replicas", in);
	(void)axe_span_total(l);
	if (axe_canonicalize(l, &c, &gc, &e) < 0)
		FUZZ_ERRMSG(&e, "canonicalize");
	else
		FUZZ_CHECK(axe_size(&c) == sz, "'%s': canonicalize changed the size", in);
	if (axe_apply(l, 0, crd, 4, &n, &e) < 0)
		FUZZ_ERRMSG(&e, "apply(0)");
	if (axe_apply(l, sz - 1, crd, 4, &n, &e) < 0)
		FUZZ_ERRMSG(&e, "apply(size-1)");
	buf_free(&b);
	buf_free(&b2);
}

static int
one(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size), *bar = strchr(s, '|');
	AxeLayout l, g;
	AxeShape sh, sh2;
	Buf b;
	Err e = { "" };
	int ok, seps[AXE_RANK + 1];

	if (bar)
		*bar = '\0';
	if ((ok = axe_parse(s, &l, &e) == 0))
		layout_props(s, &l);
	else
		FUZZ_ERRMSG(&e, "axe_parse");
	if (bar) {
		if (axe_shape_parse(bar + 1, &sh, &e) == 0) {
			buf_init(&b);
			axe_shape_print(&b, &sh);
			FUZZ_CHECK(axe_shape_parse(b.s, &sh2, &e) == 0, "shape '%s' printed as '%s': %s", bar + 1, b.s, e.msg);
			buf_free(&b);
			if (ok && axe_group(&l, &sh, &g, seps, &e) < 0)
				FUZZ_ERRMSG(&e, "group");
		} else {
			FUZZ_ERRMSG(&e, "axe_shape_parse");
		}
	}
	free(s);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_scribble(64 << 10);
	return one(data, size);
}

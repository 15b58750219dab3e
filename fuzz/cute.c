/* cute.c - libFuzzer harness: CuTe tuples and layouts in Shape:Stride notation (tuple.c, cute.c). */
#include "fuzz.h"

#include "../layout/layout.h"

/* What a parsed layout must satisfy: print -> parse -> print is the identity,
** the reparsed layout is the same value, and the cheap queries stay in range. */
static void
layout_props(const char *in, const Layout *l)
{
	Buf b, b2;
	Layout l2, c;
	Err e = { "" };
	int64_t sz = cute_size(l), cs = cute_cosize(l), v;

	buf_init(&b);
	buf_init(&b2);
	cute_print(&b, l);
	FUZZ_CHECK(!b.oom, "print ran out of memory");
	FUZZ_CHECK(cute_parse(b.s, &l2, &e) == 0, "'%s' printed as '%s', which does not parse: %s", in, b.s, e.msg);
	cute_print(&b2, &l2);
	FUZZ_CHECK(strcmp(b.s, b2.s) == 0, "'%s': print '%s', reparsed print '%s'", in, b.s, b2.s);
	FUZZ_CHECK(cute_equal(l, &l2), "'%s': reparsed layout differs", in);
	FUZZ_CHECK(sz >= 1 && sz < CUTE_SIZE_LIMIT, "'%s': size %lld", in, (long long)sz);
	FUZZ_CHECK(cs >= 0 && cs <= CUTE_SIZE_LIMIT, "'%s': cosize %lld", in, (long long)cs);
	FUZZ_CHECK(cute_rank(l) >= 0 && cute_depth(l) >= 0, "'%s': rank/depth", in);
	if (cute_eval_idx(l, 0, &v, &e) < 0)
		FUZZ_ERRMSG(&e, "eval_idx(0)");
	if (cute_eval_idx(l, sz - 1, &v, &e) < 0)
		FUZZ_ERRMSG(&e, "eval_idx(size-1)");
	else
		FUZZ_CHECK(v >= -CUTE_SIZE_LIMIT && v <= CUTE_SIZE_LIMIT, "'%s': L(size-1) = %lld", in, (long long)v);
	if (cute_coalesce(l, &c, &e) < 0)
		FUZZ_ERRMSG(&e, "coalesce");
	else
		FUZZ_CHECK(cute_size(&c) == sz, "'%s': coalesce changed the size", in);
	if (cute_flatten(l, &c, &e) < 0)
		FUZZ_ERRMSG(&e, "flatten");
	buf_free(&b);
	buf_free(&b2);
}

static void
tuple_props(const char *in, const Tuple *t)
{
	Buf b, b2;
	Tuple t2;
	Err e = { "" };

	buf_init(&b);
	buf_init(&b2);
	tuple_print(&b, t);
	FUZZ_CHECK(tuple_parse(b.s, &t2, &e) == 0, "'%s' printed as '%s', which does not parse: %s", in, b.s, e.msg);
	tuple_print(&b2, &t2);
	FUZZ_CHECK(strcmp(b.s, b2.s) == 0, "'%s': print '%s', reparsed print '%s'", in, b.s, b2.s);
	FUZZ_CHECK(tuple_equal(t, &t2), "'%s': reparsed tuple differs", in);
	FUZZ_CHECK(tuple_rank(t) >= 0 && tuple_depth(t) >= 0, "'%s': rank/depth", in);
	buf_free(&b);
	buf_free(&b2);
}

static int
one(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	Layout l;
	Tuple t;
	Err e = { "" };

	if (tuple_parse(s, &t, &e) == 0)
		tuple_props(s, &t);
	else
		FUZZ_ERRMSG(&e, "tuple_parse");
	if (cute_parse(s, &l, &e) == 0)
		layout_props(s, &l);
	else
		FUZZ_ERRMSG(&e, "cute_parse");
	free(s);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_scribble(64 << 10);
	return one(data, size);
}

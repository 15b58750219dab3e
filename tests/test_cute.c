/* test_cute.c - CuTe tuples and layouts: worked examples from CuTe's docs and brute-force properties. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../layout/layout.h"
#include "prop.h"

static Layout
L(const char *s)
{
	Layout l;
	Err e;

	if (cute_parse(s, &l, &e) < 0)
		fail_msg("parse %s: %s", s, e.msg);
	return l;
}

static Tiler
T(const char *s)
{
	Tiler t;
	Err e;

	if (tiler_parse(s, &t, &e) < 0)
		fail_msg("tiler %s: %s", s, e.msg);
	return t;
}

static char *
str(const Layout *l)
{
	static char out[4][512];
	static int k;
	Buf b;

	buf_init(&b);
	cute_print(&b, l);
	k = (k + 1) % 4;
	snprintf(out[k], sizeof out[k], "%s", b.s);
	buf_free(&b);
	return out[k];
}

static int64_t
at(const Layout *l, int64_t i)
{
	int64_t v;
	Err e;

	if (cute_eval_idx(l, i, &v, &e) < 0)
		fail_msg("eval: %s", e.msg);
	return v;
}

#define EXPECT(got, want) assert_string_equal(str(&(got)), want)

/* print -> parse -> print is the identity; spaces and _4 are accepted. */
static void
test_notation(void **state)
{
	const char *same[] = { "8:1", "(4):(1)", "(4,2):(1,4)", "((2,2),4):((1,4),2)", "(3,(2,4)):(-1,(0,3))",
	                       "():()", "1:0" };
	Layout l;
	Tuple t;
	Buf b;
	Err e;
	size_t i;

	for (i = 0; i < sizeof same / sizeof same[0]; i++) {
		l = L(same[i]);
		EXPECT(l, same[i]);
	}
	l = L(" ( _4 , ( 2 , 2 ) ) : ( _1 , ( 4 , 8 ) ) ");
	EXPECT(l, "(4,(2,2)):(1,(4,8))");
	l = L("(4,2)");
	EXPECT(l, "(4,2):(1,4)");
	assert_int_equal(tuple_parse("(4)", &t, &e), 0);
	assert_int_equal(tuple_rank(&t), 1);
	assert_false(tuple_is_int(&t));
	buf_init(&b);
	tuple_print(&b, &t);
	assert_string_equal(b.s, "(4)");
	buf_free(&b);
	assert_int_equal(cute_parse("(4,2):(1)", &l, &e), -1);
	assert_non_null(strstr(e.msg, "not congruent"));
	assert_int_equal(cute_parse("(4,2):(1,4", &l, &e), -1);
	assert_non_null(strstr(e.msg, "column"));
	assert_int_equal(cute_parse("(0,2):(1,4)", &l, &e), -1);
	assert_int_equal(cute_parse("(4294967296,4294967296):(1,4294967296)", &l, &e), -1);
	assert_non_null(strstr(e.msg, "too large"));
}

static void
test_tuples(void **state)
{
	Tuple a, b, r;
	int64_t v;
	Err e;
	Buf buf;

	tuple_parse("((2,3),4)", &a, &e);
	assert_int_equal(tuple_product(&a, &v, &e), 0);
	assert_int_equal(v, 24);
	tuple_prefix_product(&a, &r, &e);
	buf_init(&buf);
	tuple_print(&buf, &r);
	assert_string_equal(buf.s, "((1,2),6)");
	buf_reset(&buf);
	/* shape_div((4,5,6),40) -> (1,1,3) as in CuTe's comment */
	tuple_parse("(4,5,6)", &a, &e);
	tuple_int(&b, 40);
	assert_int_equal(tuple_shape_div(&a, &b, &r, &e), 0);
	tuple_print(&buf, &r);
	assert_string_equal(buf.s, "(1,1,3)");
	buf_reset(&buf);
	tuple_int(&b, 7);
	assert_int_equal(tuple_shape_div(&a, &b, &r, &e), -1);
	assert_non_null(strstr(e.msg, "divisibility"));
	/* idx2crd: colexicographic, last mode overflows; crd2idx inverts it */
	tuple_parse("(4,(2,3))", &a, &e);
	assert_int_equal(tuple_idx2crd(13, &a, &r, &e), 0);
	tuple_print(&buf, &r);
	assert_string_equal(buf.s, "(1,(1,1))");
	buf_reset(&buf);
	assert_int_equal(tuple_idx2crd(30, &a, &r, &e), 0);
	tuple_print(&buf, &r);
	assert_string_equal(buf.s, "(2,(1,3))");
	buf_reset(&buf);
	assert_int_equal(tuple_crd2idx_colex(&r, &a, &v, &e), 0);
	assert_int_equal(v, 30);
	/* crd2crd between shapes of equal size */
	tuple_parse("(1,5)", &a, &e);
	tuple_parse("(4,6)", &b, &e);
	{
		Tuple dst;
		tuple_parse("(8,3)", &dst, &e);
		assert_int_equal(tuple_crd2crd(&a, &b, &dst, &r, &e), 0);
		tuple_print(&buf, &r);
		assert_string_equal(buf.s, "(1,5)");
		buf_reset(&buf);
		tuple_int(&a, 21);
		assert_int_equal(tuple_crd2crd(&a, &b, &dst, &r, &e), 0);
		tuple_print(&buf, &r);
		assert_string_equal(buf.s, "(5,2)");
		buf_reset(&buf);
	}
	tuple_parse("(2,(3,4))", &a, &e);
	tuple_parse("(2,12)", &b, &e);
	assert_true(tuple_weakly_congruent(&b, &a));
	assert_false(tuple_weakly_congruent(&a, &b));
	assert_false(tuple_congruent(&a, &b));
	assert_true(tuple_compatible(&b, &a));
	assert_int_equal(tuple_inner_product(&a, &a, &v, &e), 0);
	assert_int_equal(v, 4 + 9 + 16);
	buf_free(&buf);
}

/* The worked examples of CuTe's 02_layout_algebra.md. */
static void
test_examples(void **state)
{
	Layout a, b, r;
	Tiler t;
	Tuple ct;
	Err e;
	struct { const char *a, *b, *want; } comp[] = {
		{ "(6,2):(8,2)", "(4,3):(3,1)", "((2,2),3):((24,2),8)" },
		{ "20:2", "(5,4):(4,1)", "(5,4):(8,2)" },
		{ "(10,2):(16,4)", "(5,4):(1,5)", "(5,(2,2)):(16,(80,4))" },
		{ "(4,6,8,10):(2,3,5,7)", "6:12", "(2,3):(9,5)" },
		{ "((4,8),3):((1,4),64)", "(4,4):(8,1)", "(4,4):(8,1)" },
	};
	struct { const char *l; int cot; const char *want; } compl[] = {
		{ "4:1", 24, "6:4" }, { "6:4", 24, "4:1" }, { "(4,6):(1,4)", 24, "1:0" },
		{ "4:2", 24, "(2,3):(1,8)" }, { "(2,4):(1,6)", 24, "3:2" }, { "(2,2):(1,6)", 24, "(3,2):(2,12)" },
	};
	size_t i;

	for (i = 0; i < sizeof comp / sizeof comp[0]; i++) {
		a = L(comp[i].a);
		b = L(comp[i].b);
		assert_int_equal(cute_composition(&a, &b, &r, &e), 0);
		EXPECT(r, comp[i].want);
	}
	for (i = 0; i < sizeof compl / sizeof compl[0]; i++) {
		a = L(compl[i].l);
		tuple_int(&ct, compl[i].cot);
		assert_int_equal(cute_complement(&a, &ct, &r, &e), 0);
		EXPECT(r, compl[i].want);
	}
	a = L("(4,2,3):(2,1,8)");
	t = T("4:2");
	assert_int_equal(cute_logical_divide(&a, &t, &r, &e), 0);
	EXPECT(r, "((2,2),(2,3)):((4,1),(2,8))");
	a = L("(9,(4,8)):(59,(13,1))");
	t = T("(3:3,(2,4):(1,8))");
	assert_int_equal(cute_logical_divide(&a, &t, &r, &e), 0);
	EXPECT(r, "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))");
	assert_int_equal(cute_zipped_divide(&a, &t, &r, &e), 0);
	EXPECT(r, "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))");
	assert_int_equal(cute_tiled_divide(&a, &t, &r, &e), 0);
	EXPECT(r, "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))");
	assert_int_equal(cute_flat_divide(&a, &t, &r, &e), 0);
	EXPECT(r, "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))");
	a = L("(2,2):(4,1)");
	t = T("6:1");
	assert_int_equal(cute_logical_product(&a, &t, &r, &e), 0);
	EXPECT(r, "((2,2),(2,3)):((4,1),(2,8))");
	a = L("(2,5):(5,1)");
	b = L("(3,4):(1,3)");
	assert_int_equal(cute_blocked_product(&a, &b, &r, &e), 0);
	EXPECT(r, "((2,3),(5,4)):((5,10),(1,30))");
	assert_int_equal(cute_raked_product(&a, &b, &r, &e), 0);
	EXPECT(r, "((3,2),(4,5)):((10,5),(30,1))");
	a = L("(2,5):(5,1)");
	t = T("(3:1,4:3)");
	assert_int_equal(cute_zipped_product(&a, &t, &r, &e), 0);
	EXPECT(r, "((2,5),(3,4)):((5,1),(1,15))");
	assert_int_equal(cute_tiled_product(&a, &t, &r, &e), 0);
	EXPECT(r, "((2,5),3,4):((5,1),1,15)");
	/* C++ keeps a 1-tuple rest where pycute unwraps it */
	a = L("24:1");
	t = T("(2)");
	assert_int_equal(cute_tiled_divide(&a, &t, &r, &e), 0);
	EXPECT(r, "((2),(12)):((1),(2))");
	/* composition with a tiler: `_` keeps a mode, missing modes are dropped */
	a = L("(6,8):(2,12)");
	t = T("(2,_)");
	assert_int_equal(cute_composition_tiler(&a, &t, &r, &e), 0);
	EXPECT(r, "(2,8):(2,12)");
	t = T("(3)");
	assert_int_equal(cute_composition_tiler(&a, &t, &r, &e), 0);
	EXPECT(r, "(3):(2)");
	a = L("4:2");
	assert_int_equal(cute_left_inverse(&a, &r, &e), 0);
	EXPECT(r, "(2,4):(0,1)");
	a = L("(4,2):(2,1)");
	assert_int_equal(cute_right_inverse(&a, &r, &e), 0);
	EXPECT(r, "(2,4):(4,1)");
	a = L("(2,3):(3,0)");
	assert_int_equal(cute_right_inverse(&a, &r, &e), 0);
	EXPECT(r, "1:0");
	/* modes of equal stride in the order of C++'s exchange sort, which is not stable */
	a = L("(((2,2)),((2,2,2),2,(1,2,1)),2):(((16,16)),((6,8,2),2,(8,1,1)),8)");
	assert_int_equal(cute_right_inverse(&a, &r, &e), 0);
	EXPECT(r, "(2,2):(64,32)");
	a = L("(2,(1,6)):(1,(6,2))");
	assert_int_equal(cute_coalesce(&a, &r, &e), 0);
	EXPECT(r, "12:1");
	a = L("(2,(3,4)):(1,(2,6))");
	{
		Tuple p;
		tuple_parse("(1,1)", &p, &e);
		assert_int_equal(cute_coalesce_profile(&a, &p, &r, &e), 0);
		EXPECT(r, "(2,12):(1,2)");
	}
	a = L("(4,(2,3)):(0,(1,0))");
	assert_int_equal(cute_filter(&a, &r, &e), 0);
	EXPECT(r, "2:1");
	/* filter by a profile, as CuTe C++ (g++ on its headers): each named mode alone, the rest kept */
	{
		static const char *const cases[][3] = {
			{ "(2,3):(1,2)", "(1,1)", "(2,3):(1,2)" },
			{ "((2,1),(3,4)):((0,1),(2,0))", "(1,1)", "(1,3):(0,2)" },
			{ "(2,3,4):(0,1,2)", "(1)", "(1,3,4):(0,1,2)" },
		};
		Tuple p;
		int i;

		for (i = 0; i < 3; i++) {
			a = L(cases[i][0]);
			assert_int_equal(tuple_parse(cases[i][1], &p, &e), 0);
			assert_int_equal(cute_filter_profile(&a, &p, &r, &e), 0);
			EXPECT(r, cases[i][2]);
		}
		a = L("(2,3):(0,1)");
		assert_int_equal(tuple_parse("(1,1,1)", &p, &e), 0);
		assert_int_equal(cute_filter_profile(&a, &p, &r, &e), -1);
		assert_non_null(strstr(e.msg, "profile (1,1,1) has more modes than layout (2,3):(0,1)"));
	}
}

static void
test_slice_eval(void **state)
{
	Layout l = L("((2,2),4):((1,4),2)"), r;
	Tuple c;
	int64_t v, off;
	Err e;

	tuple_parse("((1,0),2)", &c, &e);
	assert_int_equal(cute_eval(&l, &c, &v, &e), 0);
	assert_int_equal(v, 5);
	tuple_parse("(3,2)", &c, &e);  /* mixed: 3 is a 1-D coordinate of mode (2,2) */
	assert_int_equal(cute_eval(&l, &c, &v, &e), 0);
	assert_int_equal(v, 1 + 4 + 4);
	assert_int_equal(at(&l, 7), 1 + 4 + 2);
	tuple_parse("(4,0)", &c, &e);
	assert_int_equal(cute_eval(&l, &c, &v, &e), -1);
	assert_non_null(strstr(e.msg, "outside"));
	assert_int_equal(cute_eval_idx(&l, 16, &v, &e), -1);
	tuple_parse("(_,2)", &c, &e);
	assert_int_equal(cute_slice(&c, &l, &r, &off, &e), 0);
	EXPECT(r, "((2,2)):((1,4))");
	assert_int_equal(off, 4);
	tuple_parse("((_,1),_)", &c, &e);
	assert_int_equal(cute_slice(&c, &l, &r, &off, &e), 0);
	EXPECT(r, "(2,4):(1,2)");
	assert_int_equal(off, 4);
}

static void
test_errors(void **state)
{
	Layout a, b, r;
	Tiler t;
	Tuple ct;
	Swizzle sw;
	Err e;

	a = L("(4,3):(1,5)");
	b = L("3:3");  /* stride 3 < shape 4 passes C++'s stride condition; 2 elements fit, 3 do not split */
	assert_int_equal(cute_composition(&a, &b, &r, &e), -1);
	assert_non_null(strstr(e.msg, "shape divisibility"));
	assert_non_null(strstr(e.msg, "(4,3):(1,5) o 3:3"));
	b = L("2:5");  /* 5 is neither a multiple of 4 nor smaller: C++'s stride condition */
	assert_int_equal(cute_composition(&a, &b, &r, &e), -1);
	assert_non_null(strstr(e.msg, "stride divisibility"));
	b = L("2:3");  /* fits inside mode 0: 0, 3 */
	assert_int_equal(cute_composition(&a, &b, &r, &e), 0);
	EXPECT(r, "2:3");
	a = L("(4,6):(1,5)");
	b = L("3:2");  /* 2 elements fit in mode 0 (shape 4), 3 do not split into blocks of 2 */
	assert_int_equal(cute_composition(&a, &b, &r, &e), -1);
	assert_non_null(strstr(e.msg, "shape divisibility"));
	a = L("(2,2):(1,1)");
	assert_int_equal(cute_complement(&a, NULL, &r, &e), -1);
	assert_non_null(strstr(e.msg, "not injective"));
	a = L("(3,2):(2,3)");
	assert_int_equal(cute_left_inverse(&a, &r, &e), -1);
	assert_non_null(strstr(e.msg, "divisibility"));
	assert_int_equal(swizzle_make(&sw, 3, 4, 2, &e), -1);
	assert_non_null(strstr(e.msg, "smaller than the number of bits"));
	a = L("(4,4):(1,4)");
	t = T("(2,2,2)");
	assert_int_equal(cute_logical_divide(&a, &t, &r, &e), -1);
	assert_non_null(strstr(e.msg, "3 modes"));
	tuple_int(&ct, 0);
	assert_int_equal(cute_complement(&a, &ct, &r, &e), -1);
	/* C++'s layout where tessel cannot enumerate A(B(i)) far enough to know */
	a = L("(5,3):(0,2)");
	b = L("(4,524288):(3,20)");
	assert_int_equal(cute_composition(&a, &b, &r, &e), -1);
	assert_non_null(strstr(e.msg, "CuTe C++ computes ((2,2),524288):((0,2),8), which tessel cannot check"));
	tiler_from_layout(&t, &b);
	assert_int_equal(cute_algebra(CUTE_COMPOSITION, &a, &t, CUTE_CPP, &r, &e), 0);
	EXPECT(r, "((2,2),524288):((0,2),8)");
	/* the complement of a layout that filters away is the compact cotarget */
	a = L("4:0");
	tuple_int(&ct, 1);
	assert_int_equal(cute_complement(&a, &ct, &r, &e), 0);
	EXPECT(r, "1:0");
	a = L("(1048576,1048576):(1,1048576)");
	b = L("(1048576,1048576):(1048576,1)");
	assert_int_equal(cute_blocked_product(&a, &b, &r, &e), -1);
	assert_true(strstr(e.msg, "too large") || strstr(e.msg, "overflow"));
}

static void
test_swizzle(void **state)
{
	Swizzle sw;
	Composed c;
	Buf b;
	Err e;
	int64_t v;
	int x;

	assert_int_equal(swizzle_make(&sw, 3, 4, 3, &e), 0);
	assert_int_equal(swizzle_apply(&sw, 128), 128 ^ 16);
	for (x = 0; x < 1024; x++) {
		int64_t y = swizzle_apply(&sw, x);
		assert_int_equal(y, x ^ ((x & (7 << 7)) >> 3));
		assert_int_equal(swizzle_apply(&sw, y), x);  /* an involution */
	}
	assert_int_equal(swizzle_make(&sw, 0, 5, 0, &e), 0);
	for (x = 0; x < 64; x++)
		assert_int_equal(swizzle_apply(&sw, x), x);
	assert_int_equal(swizzle_make(&sw, 2, 0, -3, &e), 0);  /* shift left */
	assert_int_equal(swizzle_apply(&sw, 1), 1 ^ 8);
	assert_int_equal(composed_parse("Sw<2,0,2> o 0 o (4,4):(4,1)", &c, &e), 0);
	buf_init(&b);
	composed_print(&b, &c);
	assert_string_equal(b.s, "Sw<2,0,2> o 0 o (4,4):(4,1)");
	buf_free(&b);
	assert_int_equal(composed_eval_idx(&c, 1, &v, &e), 0);  /* (1,0) -> 4 -> 4 ^ 1 */
	assert_int_equal(v, 5);
	assert_int_equal(composed_parse("Sw<3,4,3> o (8,64):(64,1)", &c, &e), 0);
	assert_int_equal(c.offset, 0);
	/* a composition into the identity swizzle at offset 0 is the plain layout, as in CuTe */
	assert_false(composed_is_plain(&c));
	assert_int_equal(composed_parse("Sw<0,3,3> o 0 o 8:1", &c, &e), 0);
	assert_true(composed_is_plain(&c));
	assert_int_equal(composed_parse("Sw<0,3,3> o 2 o 8:1", &c, &e), 0);
	assert_false(composed_is_plain(&c));
}

/*
** make_ordered_layout, make_layout_like, make_fragment_like, filter_zeros, tile_to_shape and
** max_common_*,
** against CuTe C++ (g++ on CUTLASS's headers, static integers; the expected strings are its
** print with the _ dropped). 1300 random cases agreed in that run; these are a sample.
*/
static void
test_orders(void **state)
{
	static const char *const ordered[][3] = {
		{ "(2,2,2,2)", "(0,2,3,1)", "(2,2,2,2):(1,4,8,2)" },
		{ "(5,1,4,4)", "(4,3,4,1)", "(5,1,4,4):(4,0,4,1)" },
		{ "(2,2,1)", "(1,1,2)", "(2,2,1):(1,1,0)" },
		{ "((2,3),4)", "(1,0)", "((2,3),4):((4,8),1)" },
	};
	static const char *const like[][2] = {
		{ "(2,2,2,2):(0,2,4,1)", "(2,2,2,2):(0,2,4,1)" },
		{ "(2,(6,6),3):(0,(8,0),6)", "(2,(6,6),3):(0,(3,0),1)" },
		{ "((4,6,4),2,(4,5)):((2,3,0),3,(12,2))", "((4,6,4),2,(4,5)):((1,20,0),20,(240,1))" },
	};
	static const char *const tile[][4] = {
		{ "(4,4):(1,4)", "(16,8)", "(1,2)", "((4,4),(4,2)):((1,16),(4,64))" },
		{ "(4):(1)", "(16)", NULL, "((4,4)):((1,4))" },
		{ "(1):(0)", "(1,4,2)", NULL, "((1,1),(1,4),(1,2)):((0,0),(0,1),(0,4))" },
	};
	static const char *const common[][4] = {
		{ "(2,4,3):(4,1,8)", "(2,4,3):(4,1,8)", "(4,2,3):(2,1,8)", "24" },
		{ "(3,8,3):(1,9,3)", "(3,8,3):(8,1,24)", "1:0", "1" },
		{ "(4,8):(8,1)", "(4,8):(1,4)", "1:0", "1" },
	};
	Layout a, b, r;
	Tuple s, o;
	int64_t n;
	Err e;
	int i;

	(void)state;
	for (i = 0; i < 4; i++) {
		assert_int_equal(tuple_parse(ordered[i][0], &s, &e), 0);
		assert_int_equal(tuple_parse(ordered[i][1], &o, &e), 0);
		assert_int_equal(cute_make_ordered(&r, &s, &o, &e), 0);
		EXPECT(r, ordered[i][2]);
	}
	for (i = 0; i < 3; i++) {
		a = L(like[i][0]);
		assert_int_equal(cute_make_layout_like(&a, &r, &e), 0);
		EXPECT(r, like[i][1]);
	}
	a = L("((4,4),2,4):((0,0),3,0)");
	assert_int_equal(cute_filter_zeros(&a, &r, &e), 0);
	EXPECT(r, "((1,1),2,1):((0,0),3,0)");
	{
		static const char *const frag[][2] = {
			{ "(4,3):(12,16)", "(4,(3)):(1,(4))" },
			{ "(1,(5,2,2),3):(0,(8,8,32),12)", "(1,(5,2,2),3):(0,(1,1,30),10)" },
			{ "8:1", "8:1" },
			{ "(8):(8)", "(8):(1)" },
		};

		for (i = 0; i < 4; i++) {
			a = L(frag[i][0]);
			assert_int_equal(cute_make_fragment_like(&a, &r, &e), 0);
			EXPECT(r, frag[i][1]);
		}
	}
	for (i = 0; i < 3; i++) {
		a = L(tile[i][0]);
		assert_int_equal(tuple_parse(tile[i][1], &s, &e), 0);
		if (tile[i][2])
			assert_int_equal(tuple_parse(tile[i][2], &o, &e), 0);
		assert_int_equal(cute_tile_to_shape(&a, &s, tile[i][2] ? &o : NULL, 0, &r, &e), 0);
		EXPECT(r, tile[i][3]);
	}
	for (i = 0; i < 3; i++) {
		a = L(common[i][0]);
		b = L(common[i][1]);
		assert_int_equal(cute_max_common_layout(&a, &b, &r, &e), 0);
		EXPECT(r, common[i][2]);
		assert_int_equal(cute_max_common_vector(&a, &b, &n, &e), 0);
		assert_int_equal(n, atoll(common[i][3]));
	}
	/* refusals name CuTe's conditions */
	assert_int_equal(tuple_parse("(2,3)", &s, &e), 0);
	assert_int_equal(tuple_parse("(1,0,2)", &o, &e), 0);
	assert_int_equal(cute_make_ordered(&r, &s, &o, &e), -1);
	assert_non_null(strstr(e.msg, "Need equal rank of shape and order"));
	a = L("(3,2):(1,3)");
	assert_int_equal(tuple_parse("(8,6)", &s, &e), 0);
	assert_int_equal(cute_tile_to_shape(&a, &s, NULL, 0, &r, &e), -1);
	assert_non_null(strstr(e.msg, "mode 0 has 3 elements in the block, 8 in the target"));
	/* C++'s blocked_product is not the product here: refused, and CUTE_CPP returns it */
	a = L("(1,4):(2,4)");
	assert_int_equal(tuple_parse("(3,16)", &s, &e), 0);
	assert_int_equal(cute_tile_to_shape(&a, &s, NULL, 0, &r, &e), -1);
	assert_non_null(strstr(e.msg, "tile_to_shape((1,4):(2,4), (3,16)): blocked_product"));
	assert_int_equal(cute_tile_to_shape(&a, &s, NULL, CUTE_CPP, &r, &e), 0);
	EXPECT(r, "((1,3),(4,(2,2))):((2,1),(4,(3,16)))");
}

static void
test_tv_mma(void **state)
{
	Layout thr = L("(4,8):(8,1)"), val = L("(4,1):(1,0)"), mn, tv;
	MmaAtom a;
	Err e;
	int64_t t, v, i, seen[128];
	int k;

	assert_int_equal(cute_make_layout_tv(&thr, &val, &mn, &tv, &e), 0);
	EXPECT(tv, "((8,4),4):((16,4),1)");
	/* mn and tv are inverse bijections of the 16x8 tile */
	for (i = 0; i < 128; i++) {
		int64_t x = at(&tv, i);
		assert_int_equal(at(&mn, x), i);
	}
	assert_int_equal(cute_mma_atom("SM80_16x8x16_F32F16F16F32_TN", &a, &e), 0);
	assert_int_equal(a.m * a.k, 256);
	/* every element of each panel is held by exactly one (thread, value) */
	memset(seen, 0, sizeof seen);
	for (t = 0; t < 32; t++) {
		for (v = 0; v < 4; v++) {
			Tuple c;
			int64_t x;
			Tuple tt, vv;
			const Tuple *m[2] = { &tt, &vv };
			tuple_int(&tt, t);
			tuple_int(&vv, v);
			tuple_make(&c, m, 2, &e);
			assert_int_equal(cute_eval(&a.c, &c, &x, &e), 0);
			assert_true(x >= 0 && x < 128);
			seen[x]++;
		}
	}
	for (i = 0; i < 128; i++)
		assert_int_equal(seen[i], 1);
	/* C fragment: thread 5 value 0 holds (m,n) = (1, 2) of the 16x8 tile (lane/4, 2*(lane%4)) */
	{
		Tuple c;
		int64_t x;
		tuple_parse("(5,0)", &c, &e);
		cute_eval(&a.c, &c, &x, &e);
		assert_int_equal(x % 16, 1);
		assert_int_equal(x / 16, 2);
	}
	for (k = 0; k < cute_mma_count(); k++)
		assert_int_equal(cute_mma_atom(cute_mma_name(k), &a, &e), 0);
	assert_int_equal(cute_mma_atom("SM90_64x128x16_F32F16F16_SS", &a, &e), 0);
	assert_int_equal(cute_size(&a.c), 128 * 64);
	assert_int_equal(cute_mma_atom("nope", &a, &e), -1);
}

/*
** Property tests: random layouts checked against the definitions by
** enumeration. The seed comes from TESSEL_SEED or the clock and is printed.
*/


/* A random layout with nesting, shapes 1..5, strides 0..12 (some negative when neg). */
static void
rand_layout(Layout *l, int leaves_max, int neg)
{
	Tuple s, d;
	Err e;
	int n = rint_(1, leaves_max), i, nest = rint_(0, 2), at;

	s.n = d.n = 0;
	if (n == 1 && rint_(0, 1)) {
		tuple_push(&s, rint_(1, 6), &e);
		tuple_push(&d, rint_(0, 12) * (neg && rint_(0, 3) == 0 ? -1 : 1), &e);
	} else {
		at = tuple_open(&s, &e);
		tuple_open(&d, &e);
		for (i = 0; i < n; i++) {
			if (nest && i + 1 < n && rint_(0, 2) == 0) {
				int a2 = tuple_open(&s, &e);
				tuple_open(&d, &e);
				tuple_push(&s, rint_(1, 4), &e);
				tuple_push(&d, rint_(0, 12), &e);
				tuple_push(&s, rint_(1, 4), &e);
				tuple_push(&d, rint_(0, 12), &e);
				tuple_close(&s, a2);
				tuple_close(&d, a2);
				i++;
				continue;
			}
			tuple_push(&s, rint_(1, 5), &e);
			tuple_push(&d, rint_(0, 12) * (neg && rint_(0, 3) == 0 ? -1 : 1), &e);
		}
		tuple_close(&s, at);
		tuple_close(&d, at);
	}
	if (cute_make(l, &s, &d, &e) < 0)
		fail_msg("rand_layout: %s", e.msg);
}

/* A random injective layout with divisible strides: a compact layout of a
** random shape, its modes permuted, some dropped (they become holes). */
static void
rand_injective(Layout *l, int64_t *total)
{
	int64_t sh[6], st[6], p = 1;
	int n = rint_(1, 5), i, ord[6], keep = 0;
	Tuple s, d;
	Err e;

	for (i = 0; i < n; i++) {
		sh[i] = rint_(2, 4);
		st[i] = p;
		p *= sh[i];
		ord[i] = i;
	}
	*total = p;
	for (i = n - 1; i > 0; i--) {
		int j = rint_(0, i), t = ord[i];
		ord[i] = ord[j];
		ord[j] = t;
	}
	s.n = d.n = 0;
	tuple_open(&s, &e);
	tuple_open(&d, &e);
	for (i = 0; i < n; i++) {
		if (i > 0 && rint_(0, 3) == 0)
			continue;
		tuple_push(&s, sh[ord[i]], &e);
		tuple_push(&d, st[ord[i]], &e);
		keep++;
	}
	tuple_close(&s, 0);
	tuple_close(&d, 0);
	if (cute_make(l, &s, &d, &e) < 0)
		fail_msg("rand_injective: %s", e.msg);
}

static void
test_prop_coalesce_filter(void **state)
{
	int iter;

	for (iter = 0; iter < 3000; iter++) {
		Layout l, c, f;
		Err e;
		int64_t i, n;
		char seen[4096];
		int64_t kept = 1;

		rand_layout(&l, 5, 1);
		assert_int_equal(cute_coalesce(&l, &c, &e), 0);
		n = cute_size(&l);
		assert_int_equal(cute_size(&c), n);
		assert_true(cute_depth(&c) <= 1);
		for (i = 0; i < n; i++)
			if (at(&l, i) != at(&c, i))
				fail_msg("coalesce %s -> %s differs at %lld (seed %llu)", str(&l), str(&c),
				         (long long)i, (unsigned long long)*(uint64_t *)*state);
		/* filter: same image, size = product of the shapes with a nonzero stride */
		assert_int_equal(cute_filter(&l, &f, &e), 0);
		for (i = 0; i < l.shape.n; i++)
			if (l.shape.node[i].kids == T_LEAF && l.stride.node[i].v != 0)
				kept *= l.shape.node[i].v;
		assert_int_equal(cute_size(&f), kept);
		if (cute_cosize(&l) > 4096 || cute_cosize(&f) > 4096)
			continue;
		memset(seen, 0, sizeof seen);
		for (i = 0; i < n; i++) {
			int64_t v = at(&l, i);
			if (v >= 0)
				seen[v] |= 1;
		}
		for (i = 0; i < cute_size(&f); i++) {
			int64_t v = at(&f, i);
			if (v >= 0)
				seen[v] |= 2;
		}
		for (i = 0; i < 4096; i++)
			if (seen[i] == 1 || seen[i] == 2)
				fail_msg("filter %s -> %s: image differs at %lld (seed %llu)", str(&l), str(&f),
				         (long long)i, (unsigned long long)*(uint64_t *)*state);
	}
}

static void
test_prop_composition(void **state)
{
	int iter, ok = 0;

	/* until 500 compositions were defined: a rare seed (1796699108) draws fewer in 4000 */
	for (iter = 0; iter < 40000 && ok <= 500; iter++) {
		Layout a, b, r;
		Err e;
		int64_t i;

		rand_layout(&a, 4, 0);
		rand_layout(&b, 3, 0);
		if (cute_cosize(&b) > cute_size(&a))
			continue;
		if (cute_composition(&a, &b, &r, &e) < 0) {
			/* refusals name one of CuTe's conditions, or C++'s layout where it is not A o B */
			if (!strstr(e.msg, "divisibility") && !strstr(e.msg, "CuTe C++ computes"))
				fail_msg("composition %s o %s: unexpected error %s", str(&a), str(&b), e.msg);
			continue;
		}
		ok++;
		assert_int_equal(cute_size(&r), cute_size(&b));
		assert_true(tuple_weakly_congruent(&b.shape, &r.shape));
		for (i = 0; i < cute_size(&b); i++)
			if (at(&r, i) != at(&a, at(&b, i)))
				fail_msg("composition %s o %s = %s wrong at %lld (seed %llu)", str(&a), str(&b),
				         str(&r), (long long)i, (unsigned long long)*(uint64_t *)*state);
	}
	assert_true(ok > 500);
}

static void
test_prop_complement_inverse(void **state)
{
	int iter;

	for (iter = 0; iter < 3000; iter++) {
		Layout l, c, both, ri, li;
		const Layout *m[2];
		Tuple cot;
		Err e;
		int64_t total, i, n, *hit;

		rand_injective(&l, &total);
		tuple_int(&cot, total);
		if (cute_complement(&l, &cot, &c, &e) < 0)
			fail_msg("complement %s: %s", str(&l), e.msg);
		m[0] = &l;
		m[1] = &c;
		assert_int_equal(cute_concat(&both, m, 2, &e), 0);
		/* (L, C) is a bijection onto [0, total) */
		n = cute_size(&both);
		assert_int_equal(n, total);
		hit = calloc((size_t)total, sizeof *hit);
		for (i = 0; i < n; i++) {
			int64_t v = at(&both, i);
			if (v < 0 || v >= total || hit[v]++)
				fail_msg("complement %s = %s: (L,C) not a bijection at %lld (seed %llu)", str(&l),
				         str(&c), (long long)i, (unsigned long long)*(uint64_t *)*state);
		}
		free(hit);
		/* C is ordered, and disjoint from L except at 0 */
		for (i = 1; i < cute_size(&c); i++)
			assert_true(at(&c, i) > at(&c, i - 1));
		/* right inverse: L(R(i)) == i; left inverse: R(L(i)) == i */
		assert_int_equal(cute_right_inverse(&l, &ri, &e), 0);
		for (i = 0; i < cute_size(&ri); i++)
			assert_int_equal(at(&l, at(&ri, i)), i);
		assert_int_equal(cute_left_inverse(&l, &li, &e), 0);
		for (i = 0; i < cute_size(&l); i++)
			if (at(&li, at(&l, i)) != i)
				fail_msg("left_inverse %s = %s wrong at %lld (seed %llu)", str(&l), str(&li),
				         (long long)i, (unsigned long long)*(uint64_t *)*state);
	}
}

static void
test_prop_divide_product(void **state)
{
	int iter, ok = 0, products = 0;

	for (iter = 0; iter < 2000; iter++) {
		Layout l, t, d, p, tile, rest, b;
		Tiler tl;
		Err e;
		int64_t total, i, n;

		/* divide a compact layout by an injective tiler of the same size class */
		rand_injective(&t, &total);
		{
			Tuple s;
			tuple_int(&s, total * rint_(1, 3));
			cute_make_compact(&l, &s, 0, &e);
		}
		tiler_from_layout(&tl, &t);
		if (cute_logical_divide(&l, &tl, &d, &e) < 0)
			fail_msg("logical_divide %s / %s: %s (seed %llu)", str(&l), str(&t), e.msg,
			         (unsigned long long)*(uint64_t *)*state);
		ok++;
		assert_int_equal(cute_size(&d), cute_size(&l));
		cute_mode(&d, 0, &tile, &e);
		cute_mode(&d, 1, &rest, &e);
		assert_int_equal(cute_size(&tile), cute_size(&t));
		/* the tile mode is L o T */
		for (i = 0; i < cute_size(&t); i++)
			assert_int_equal(at(&tile, i), at(&l, at(&t, i)));
		/* the whole is a permutation of L's domain */
		{
			char *hit = calloc((size_t)cute_size(&l), 1);
			for (i = 0; i < cute_size(&d); i++) {
				int64_t v = at(&d, i);
				assert_true(v >= 0 && v < cute_size(&l) && !hit[v]);
				hit[v] = 1;
			}
			free(hit);
		}
		/* logical_product: mode 0 is the block, size multiplies, image injective */
		rand_injective(&b, &n);
		tiler_from_layout(&tl, &b);
		if (cute_logical_product(&t, &tl, &p, &e) < 0) {
			if (!strstr(e.msg, "divisibility") && !strstr(e.msg, "CuTe C++ returns"))
				fail_msg("logical_product %s x %s: %s", str(&t), str(&b), e.msg);
			continue;
		}
		products++;
		assert_int_equal(cute_size(&p), cute_size(&t) * cute_size(&b));
		cute_mode(&p, 0, &tile, &e);
		assert_true(cute_equal(&tile, &t));
		{
			int64_t co = cute_cosize(&p);
			char *hit = calloc((size_t)co, 1);
			for (i = 0; i < cute_size(&p); i++) {
				int64_t v = at(&p, i);
				assert_true(v >= 0 && v < co && !hit[v]);
				hit[v] = 1;
			}
			free(hit);
		}
	}
	assert_true(ok > 100 && products > 100);
}

static void
test_prop_same_function(void **state)
{
	int iter;

	for (iter = 0; iter < 2000; iter++) {
		Layout a, b;
		Err e;
		int same, brute = 1;
		int64_t where, i;

		rand_layout(&a, 3, 1);
		if (rint_(0, 1))
			cute_coalesce(&a, &b, &e);
		else
			rand_layout(&b, 3, 1);
		assert_int_equal(cute_same_function(&a, &b, &same, &where, &e), 0);
		if (cute_size(&a) != cute_size(&b))
			brute = 0;
		for (i = 0; brute && i < cute_size(&a); i++)
			if (at(&a, i) != at(&b, i))
				brute = 0;
		if (same != brute)
			fail_msg("same_function(%s, %s) = %d, enumeration says %d", str(&a), str(&b), same, brute);
	}
}

/* slice: every element of the sub-layout plus the offset is the layout at
** the coordinate with the `_` modes filled in; idx2crd and crd2idx invert
** each other on the domain. */
static void
test_prop_slice_coords(void **state)
{
	int iter;

	for (iter = 0; iter < 2000; iter++) {
		Layout l, sub;
		Tuple crd, full, shape = { 0 };
		int64_t off, i, v, w, idx;
		Err e;
		int k, r, under[8];

		rand_layout(&l, 4, 1);
		if (tuple_is_int(&l.shape) || cute_rank(&l) > 8)
			continue;
		r = cute_rank(&l);
		/* a coordinate: each top mode either `_` or a 1-D coordinate in it */
		crd.n = 0;
		tuple_open(&crd, &e);
		for (k = 0; k < r; k++) {
			Layout m;
			cute_mode(&l, k, &m, &e);
			under[k] = rint_(0, 1);
			if (under[k])
				tuple_push_under(&crd, &e);
			else
				tuple_push(&crd, rint_(0, (int)cute_size(&m) - 1), &e);
		}
		tuple_close(&crd, 0);
		assert_int_equal(cute_slice(&crd, &l, &sub, &off, &e), 0);
		for (i = 0; i < cute_size(&sub); i++) {
			/* spread i over the `_` modes, colexicographically */
			int64_t rest = i;
			full.n = 0;
			tuple_open(&full, &e);
			for (k = 0; k < r; k++) {
				Layout m;
				cute_mode(&l, k, &m, &e);
				if (under[k]) {
					tuple_push(&full, rest % cute_size(&m), &e);
					rest /= cute_size(&m);
				} else {
					tuple_push(&full, crd.node[tuple_child(&crd, 0, k)].v, &e);
				}
			}
			tuple_close(&full, 0);
			assert_int_equal(cute_eval(&l, &full, &v, &e), 0);
			if (at(&sub, i) + off != v)
				fail_msg("slice of %s at %s: element %lld is %lld + %lld, the layout says %lld",
				         str(&l), "(...)", (long long)i, (long long)at(&sub, i), (long long)off,
				         (long long)v);
		}
		/* coordinates round-trip */
		shape = l.shape;
		for (i = 0; i < cute_size(&l); i++) {
			Tuple c;
			assert_int_equal(tuple_idx2crd(i, &shape, &c, &e), 0);
			assert_true(tuple_congruent(&c, &shape));
			assert_int_equal(tuple_crd2idx_colex(&c, &shape, &idx, &e), 0);
			assert_int_equal(idx, i);
			assert_int_equal(cute_eval(&l, &c, &w, &e), 0);
			assert_int_equal(w, at(&l, i));
		}
	}
}

/*
** Tilers whose elements are layouts with tuple shapes (issue 16): an element
** is one node of the tiler's profile and a whole subtree of its layout, and
** must be found by its path. Each mode of a by-mode result is the operation
** on that mode alone.
*/
static void
rand_tiler_text(Buf *b, int depth)
{
	int k, i, x = (int)rint_(0, 9);
	Layout l;

	if (x == 0) {
		emit(b, "_");
	} else if (x <= 2) {
		emit(b, "%d", (int)rint_(1, 4));
	} else if (x <= 3 && depth > 0) {
		k = (int)rint_(1, 3);
		emit(b, "(");
		for (i = 0; i < k; i++) {
			if (i)
				emit(b, ",");
			rand_tiler_text(b, depth - 1);
		}
		emit(b, ")");
	} else {
		rand_layout(&l, 4, 0);
		cute_print(b, &l);
	}
}

static void
test_tiler_paths(void **state)
{
	static const struct { const char *a, *t, *want; } gold[] = {
		/* issue 16's example; CuTe C++ 4.x gives the same */
		{ "(4,4,4):(64,2,16)", "((1,4):(1,1),4:1,2:1)", "((1,4),4,2):((64,64),2,16)" },
		{ "(4,4,4):(64,2,16)", "((2):(1),(2,2):(1,2),2:1)", "((2),(2,2),2):((64),(2,4),16)" },
		{ "(8,8):(8,1)", "((2,2):(4,1),4)", "((2,2),4):((32,8),1)" },
	};
	Layout a, r, m, want;
	Tiler t;
	Err e;
	size_t i;
	int iter, checked = 0;

	for (i = 0; i < sizeof gold / sizeof gold[0]; i++) {
		a = L(gold[i].a);
		t = T(gold[i].t);
		assert_int_equal(cute_composition_tiler(&a, &t, &r, &e), 0);
		EXPECT(r, gold[i].want);
	}
	for (iter = 0; iter < 3000; iter++) {
		Buf tb;
		Layout am, tm;
		int k, j;

		rand_layout(&a, 5, 0);
		if (tuple_is_int(&a.shape))
			continue;
		buf_init(&tb);
		k = (int)rint_(1, cute_rank(&a));
		emit(&tb, "(");
		for (j = 0; j < k; j++) {
			if (j)
				emit(&tb, ",");
			rand_tiler_text(&tb, 1);
		}
		emit(&tb, ")");
		if (tiler_parse(tb.s, &t, &e) < 0)
			fail_msg("tiler %s: %s (seed %llu)", tb.s, e.msg, (unsigned long long)seed);
		/* it prints as written; print -> parse -> print is the identity, and parsing
		** what prints gives the tiler back */
		{
			Buf pb, qb;
			Tiler t2;
			buf_init(&pb);
			buf_init(&qb);
			tiler_print(&pb, &t);
			if (strcmp(pb.s, tb.s) != 0)
				fail_msg("tiler %s prints as %s", tb.s, pb.s);
			if (tiler_parse(pb.s, &t2, &e) < 0)
				fail_msg("tiler %s prints as %s, which does not parse: %s", tb.s, pb.s, e.msg);
			tiler_print(&qb, &t2);
			if (strcmp(pb.s, qb.s) != 0 || !tuple_equal(&t.prof, &t2.prof) || !cute_equal(&t.l, &t2.l))
				fail_msg("tiler %s prints as %s, which parses to %s", tb.s, pb.s, qb.s);
			buf_free(&pb);
			buf_free(&qb);
		}
		for (j = 0; j < k; j++) {
			int ip = tuple_child(&t.prof, 0, j), kind = t.prof.node[ip].kids;
			cute_mode(&a, j, &am, &e);
			/* composition: mode j of the result is mode j of A o element j */
			if (cute_composition_tiler(&a, &t, &r, &e) < 0)
				break;
			cute_mode(&r, j, &m, &e);
			if (kind == T_UNDER) {
				want = am;
			} else if (kind == T_LEAF) {
				/* an integer n is n:1 to composition */
				assert_int_equal(tiler_element(&t, ip, &tm, &e), 0);
				if (cute_composition(&am, &tm, &want, &e) < 0)
					fail_msg("%s o %s: whole succeeds, mode %d fails: %s", str(&a), tb.s, j, e.msg);
			} else {
				Tiler sub;
				assert_int_equal(tiler_sub(&t, ip, &sub, &e), 0);
				assert_int_equal(cute_composition_tiler(&am, &sub, &want, &e), 0);
			}
			if (!cute_equal(&m, &want))
				fail_msg("composition %s o %s: mode %d is %s, %s alone gives %s (seed %llu)", str(&a),
				         tb.s, j, str(&m), str(&am), str(&want), (unsigned long long)seed);
			checked++;
		}
		/* logical_divide: mode j is the division of mode j by element j */
		if (cute_logical_divide(&a, &t, &r, &e) == 0) {
			for (j = 0; j < k; j++) {
				int ip = tuple_child(&t.prof, 0, j);
				if (t.prof.node[ip].kids != T_LEAF)
					continue;
				cute_mode(&a, j, &am, &e);
				cute_mode(&r, j, &m, &e);
				{
					Tiler one;
					assert_int_equal(tiler_sub(&t, ip, &one, &e), 0);
					assert_int_equal(cute_logical_divide(&am, &one, &want, &e), 0);
				}
				if (!cute_equal(&m, &want))
					fail_msg("logical_divide %s / %s: mode %d is %s, alone %s (seed %llu)", str(&a), tb.s,
					         j, str(&m), str(&want), (unsigned long long)seed);
			}
		}
		buf_free(&tb);
	}
	assert_true(checked > 1000);
}

/* Tilers whose tuple levels the parser closed at the wrong node crashed or
** grew past the node limit (issue 16, item 5). */
static void
test_tiler_robust(void **state)
{
	Layout a, r;
	Tiler t;
	Err e;

	a = L("9:1");
	t = T("((8,8):(8,1),(7,2))");
	assert_int_equal(t.l.shape.node[0].kids, 2);
	assert_int_equal(cute_tiled_divide(&a, &t, &r, &e), -1);
	assert_non_null(strstr(e.msg, "has 2 modes"));
	a = L("(4,3)");
	t = T("((4,3):(3,1),(2,3))");
	assert_int_equal(cute_tiled_divide(&a, &t, &r, &e), -1);
	assert_null(strstr(e.msg, "nodes"));
	assert_non_null(strstr(e.msg, "(2,3)"));
	t = T("((4,3):(3,1),2)");
	assert_int_equal(cute_tiled_divide(&a, &t, &r, &e), 0);
	EXPECT(r, "(((4,3),2),1,2):(((3,1),4),0,8)");
}

/*
** Composition as CuTe C++ computes it. With CUTE_CPP the result is C++'s; without,
** the same layout when it is A o B (every element checked), else a refusal
** that names C++'s layout and the first index where it differs from A(B(i)),
** which must be right.
*/
static int64_t
ext_eval(const Layout *l, int64_t x)
{
	Tuple c;
	int64_t v;
	Err e;

	tuple_int(&c, x);
	if (tuple_crd2idx(&c, &l->shape, &l->stride, &v, &e) < 0)
		fail_msg("evaluating %s at %lld: %s", str(l), (long long)x, e.msg);
	return v;
}

static void
test_prop_composition_cpp(void **state)
{
	int iter, same = 0, refused = 0;

	for (iter = 0; iter < 6000; iter++) {
		Layout a, b, cpp, r;
		Tiler t;
		Err e, ce;
		int64_t i, k;
		char want[600];
		Buf pb;
		const char *p;

		rand_layout(&a, 4, iter % 4 == 0);
		rand_layout(&b, 3, iter % 8 == 0);
		tiler_from_layout(&t, &b);
		if (cute_algebra(CUTE_COMPOSITION, &a, &t, CUTE_CPP, &cpp, &ce) < 0) {
			if (!strstr(ce.msg, "divisibility condition") && !strstr(ce.msg, "too large") &&
			    !strstr(ce.msg, "overflow"))
				fail_msg("cpp composition %s o %s: %s", str(&a), str(&b), ce.msg);
			assert_int_equal(cute_composition(&a, &b, &r, &e), -1);
			continue;
		}
		if (cute_composition(&a, &b, &r, &e) == 0) {
			same++;
			if (!cute_equal(&r, &cpp))
				fail_msg("%s o %s: %s, but C++ computes %s", str(&a), str(&b), str(&r), str(&cpp));
			for (i = 0; i < cute_size(&b); i++)
				if (at(&r, i) != ext_eval(&a, at(&b, i)))
					fail_msg("%s o %s = %s wrong at %lld (seed %llu)", str(&a), str(&b), str(&r),
					         (long long)i, (unsigned long long)seed);
			continue;
		}
		refused++;
		buf_init(&pb);
		cute_print(&pb, &cpp);
		snprintf(want, sizeof want, "CuTe C++ computes %s, which differs from A(B(i)) first at i = ", pb.s);
		buf_free(&pb);
		if (!(p = strstr(e.msg, want)))
			fail_msg("%s o %s: refusal %s does not name C++'s layout %s", str(&a), str(&b), e.msg, str(&cpp));
		k = strtoll(p + strlen(want), NULL, 10);
		for (i = 0; i < k; i++)
			assert_int_equal(at(&cpp, i), ext_eval(&a, at(&b, i)));
		if (at(&cpp, k) == ext_eval(&a, at(&b, k)))
			fail_msg("%s o %s: C++'s %s is right at %lld", str(&a), str(&b), str(&cpp), (long long)k);
	}
	assert_true(same > 1000 && refused > 20);
}

/* print -> parse -> print is the identity for random layouts, tuples and
** swizzled layouts, negative strides and offsets included (issue 16, item 2). */
static void
test_prop_notation(void **state)
{
	int iter;

	for (iter = 0; iter < 3000; iter++) {
		Layout l, l2;
		Composed c, c2;
		Swizzle sw;
		Tuple t;
		Buf b, b2;
		Err e;
		int bb = (int)rint_(0, 3), m = (int)rint_(0, 4), sh = (int)rint_(bb, 5);

		rand_layout(&l, 6, 1);
		buf_init(&b);
		buf_init(&b2);
		cute_print(&b, &l);
		if (cute_parse(b.s, &l2, &e) < 0 || !cute_equal(&l, &l2))
			fail_msg("layout %s does not parse back (seed %llu)", b.s, (unsigned long long)seed);
		buf_reset(&b);
		tuple_print(&b, &l.stride);
		if (tuple_parse(b.s, &t, &e) < 0 || !tuple_equal(&t, &l.stride))
			fail_msg("tuple %s does not parse back", b.s);
		assert_int_equal(swizzle_make(&sw, bb, m, rint_(0, 1) ? sh : -sh, &e), 0);
		assert_int_equal(composed_make(&c, &sw, rint_(-64, 64), &l, &e), 0);
		buf_reset(&b);
		composed_print(&b, &c);
		if (composed_parse(b.s, &c2, &e) < 0)
			fail_msg("composed layout %s does not parse back: %s", b.s, e.msg);
		composed_print(&b2, &c2);
		assert_string_equal(b.s, b2.s);
		assert_true(c2.sw.b == c.sw.b && c2.sw.m == c.sw.m && c2.sw.s == c.sw.s &&
		            c2.offset == c.offset && cute_equal(&c2.layout, &c.layout));
		buf_free(&b);
		buf_free(&b2);
	}
}

/*
** Golden cases: inputs drawn at random (tuple tilers with multi-mode layout
** elements among them) and the results of CuTe C++ 4.x headers (CUTLASS 4.7)
** compiled with g++ on static integers, written out by hand here. cpp is
** NULL where C++ does not compile the call (a static assertion); not_aob
** marks a C++ result that is not A o B, which tessel refuses by name unless
** asked for it with CUTE_CPP.
*/
static const struct {
	const char *op, *a, *t, *cpp;
	int not_aob;
} golden[] = {
	/* issue 16's examples, and the classes the differential run found */
	{ "composition", "(4,4,4):(64,2,16)", "((1,4):(1,1),4:1,2:1)", "((1,4),4,2):((64,64),2,16)", 0 },
	{ "blocked_product", "2:3", "8:2", "((2,(2,4))):((3,(2,6)))", 1 },
	{ "raked_product", "2:3", "8:2", NULL, 0 },
	{ "composition", "(2,(2,2,3),(2,2),3):(2,(6,4,2),(2,6),4)", "((2,4):(1,6),1,(2,2):(0,6),4:1)",
	  "((2,4),1,(2,2),4):((2,12),2,(0,18),4)", 0 },
	{ "logical_divide", "6:1", "(1)", "((1,6)):((0,1))", 0 },
	{ "logical_product", "((4,5,3),1):((15,3,1),1)", "((((2,2),4):((8,4),1)),1:1)",
	  "(((4,((2,2),4)),5,3),(1,1)):(((15,((8,4),1)),3,1),(1,0))", 1 },
	{ "right_inverse", "(((2,2)),((2,2,2),2,(1,2,1)),2):(((16,16)),((6,8,2),2,(8,1,1)),8)", NULL,
	  "(2,2):(64,32)", 0 },
	{ "complement", "1:1", NULL, "1:0", 0 },
	{ "composition", "((3,4),2,2,4):((32,4),96,16,1)", "4:1", NULL, 0 },
	{ "composition", "(2,2,(2,3,2),(2,3)):(23328,1296,(27,3,324),(162,7776))", "(4,2,2,1):(2,2,12,32)", NULL, 0 },
	{ "composition", "((6,8,6)):((8,1,48))", "(((4):(1),_,1:1))", "(((4),8,1)):(((8),1,48))", 0 },
	{ "composition", "((5),(5,2),(2,2),2):((12),(16,4),(3,4),8)", "((_),(5:1),((2,4,4):(24,2,144),(3,1,2):(1,3,3)),2)", "((5),(5),((2,4,4),(3,1,2)),2):((12),(16),((72,6,432),(4,12,12)),8)", 0 },
	{ "composition", "8:16", "((1,2,2):(2,2,1))", "((1,2,2)):((32,32,16))", 0 },
	{ "composition", "((6,5),2):((1,24),6)", "(3:2,((1,1,2),2):((1,1,2),1))", "(3,((1,1,2),2)):(2,((6,6,12),6))", 0 },
	{ "composition", "8:1", "((1,2):(1,1))", "((1,2)):((1,1))", 0 },
	{ "composition", "5:2", "2:1", "2:2", 0 },
	{ "composition", "5:1", "(6,4):(24,24)", "(6,4):(24,24)", 0 },
	{ "composition", "5:4", "(2:24)", "(2):(96)", 0 },
	{ "composition", "((8,1,2,2)):((24,8,4,2))", "(2)", "(2):(24)", 0 },
	{ "composition", "1:2", "(_)", "(1):(2)", 0 },
	{ "logical_divide", "((5,4),2):((16,16),32)", "((4):(1),4:3)", "(((4),(2,4)),(4,3)):(((16),(64,16)),(96,32))", 1 },
	{ "logical_divide", "((3,2,2),(2,3)):((12,1,2),(36,4))", "(((3,2)):((6,2)),(4):(1))", "((((3,2)),2),(((2,2)),2)):((((2,24)),12),(((36,4)),8))", 1 },
	{ "logical_divide", "((1,3),(4,6)):((72,8),(1,144))", "((((2,2),(2,2,1))):(((3,4),(0,12,2))))", NULL, 0 },
	{ "logical_divide", "(3,(8,2),4):(8,(24,1),2)", "(((2,1,3),2):((12,0,1),2),(3,_))", NULL, 0 },
	{ "logical_divide", "((2,3,5),8):((4,1,4),6)", "(_,(((1,1),(1,1,1),(1,2),2)):(((24,0),(8,24,8),(4,0),8)))", "((2,3,5),((((1,1),(1,1,1),(1,2),2)),8)):((4,1,4),((((144,0),(48,144,48),(24,0),48)),6))", 0 },
	{ "logical_divide", "((3,2),(2),(4)):((1,3),(24),(6))", "(((2,2,(2,2))):((4,1,(8,2))),4:1)", "((((2,2,(2,2))),1),(4,1),(4)):((((4,1,(8,2))),0),(24,0),(6))", 0 },
	{ "logical_divide", "4:2", "((2,3,3):(3,1,6))", "(((2,3,3),1)):(((6,2,12),0))", 0 },
	{ "logical_divide", "1:1", "(3,3):(6,2)", "((3,3),2):((6,2),1)", 0 },
	{ "logical_divide", "2:1", "(_)", "(2):(1)", 0 },
	{ "logical_divide", "(6):(1)", "(3)", "((3,2)):((1,3))", 0 },
	{ "zipped_divide", "(6,2):(2,1)", "2:2", "(2,(2,(2,2))):(4,(2,(8,1)))", 1 },
	{ "zipped_divide", "((3,4,2)):((6,8,6))", "(((1,1,2,1)):((1,1,1,1)))", "((((1,1,2,1))),((2,4,2))):((((6,6,6,6))),((12,8,6)))", 1 },
	{ "zipped_divide", "((8,2,2,8)):((16,8,128,1))", "4:24", NULL, 0 },
	{ "zipped_divide", "((2,2,2,3),(3,4,1,2)):((1296,3,648,216),(1,18,7776,7776))", "(3:4,2:2)", NULL, 0 },
	{ "zipped_divide", "((2),(2,2,4,2),(2,2,3)):((0),(8,6,6,12),(1,3,1))", "((1):(3))", "(((1)),(2,(2,2,4,2),(2,2,3))):(((0)),(0,(8,6,6,12),(1,3,1)))", 0 },
	{ "zipped_divide", "((5,1),1):((0,2),32)", "(1:1,(2):(1))", "((1,(2)),(5,1)):((2,(32)),(0,0))", 0 },
	{ "zipped_divide", "2:1", "((4):(1))", "(((4)),(1)):(((1)),(0))", 0 },
	{ "zipped_divide", "((2,1,1),(2,4,6,3)):((18,288,6),(36,72,1,6))", "((2:1))", "(((2)),((1,1,1),(2,4,6,3))):(((18)),((0,288,6),(36,72,1,6)))", 0 },
	{ "zipped_divide", "2:1", "(3,2):(1,3)", "((3,2),1):((1,3),0)", 0 },
	{ "zipped_divide", "2:1", "(1)", "((1),(2)):((0),(1))", 0 },
	{ "tiled_divide", "((8,1),(3,2,8)):((32,4608),(512,2,4))", "((2):(1),2:1)", "(((2),2),4,(2,16)):(((32),512),64,(1024,2))", 1 },
	{ "tiled_divide", "((4,4,2,2),(4,3)):((6,24,1,6912),(96,1152))", "((2,1):(3,12))", "(((2,1)),(3,(3,2,2)),(4,3)):(((18,6912)),(6,(36,1,6912)),(96,1152))", 1 },
	{ "tiled_divide", "((2,4,3,4)):((48,3,1,12))", "(_)", NULL, 0 },
	{ "tiled_divide", "(2,(4,3,4),2,3):(2,(12,16,8),16,4)", "(1,4,2,3):(12,12,2,48)", NULL, 0 },
	{ "tiled_divide", "((1),2):((1),1)", "((8),(1):(1))", "(((8),(1)),(1),2):(((1),(1)),(0),1)", 0 },
	{ "tiled_divide", "(2):(1)", "((8):(1))", "(((8)),(1)):(((1)),(0))", 0 },
	{ "tiled_divide", "3:3", "((2,1):(1,2))", "(((2,1)),(2)):(((3,6)),(6))", 0 },
	{ "tiled_divide", "5:1", "2:1", "(2,3):(1,2)", 0 },
	{ "tiled_divide", "4:3", "(4:1)", "((4),(1)):((3),(0))", 0 },
	{ "tiled_divide", "8:1", "(4)", "((4),(2)):((1),(4))", 0 },
	{ "flat_divide", "(4,(2,2,2),2,(4,1,2)):(6,(2,8,2),8,(4,1,1))", "(2:1,(_,8:1,_),(1):(1),(_,3))", NULL, 0 },
	{ "flat_divide", "(8,(1,2)):(24,(1,4))", "(_,((1,2,2),(2)):((2,1,4),(2)))", NULL, 0 },
	{ "flat_divide", "(4,(4,5,2,4)):(2880,(15,3,180,360))", "((4,2,1,2):(4,16,4,2))", "(((4,2,1,2)),2,(4,5,2,4)):(((11520,46080,11520,5760)),2880,(15,3,180,360))", 0 },
	{ "flat_divide", "(1,2):(1,1)", "(1:1,(1,2,2):(2,4,2))", "(1,(1,2,2),1,2):(1,(2,4,2),0,1)", 0 },
	{ "flat_divide", "((4,2,5,2),(3)):((2,12,1,6),(4))", "(((2,4,2):(1,2,8),1:1,2:1,4))", "((((2,4,2),1,2,4)),(1,2,3,1),(3)):((((2,4,16),12,1,6)),(0,12,2,0),(4))", 0 },
	{ "flat_divide", "4:1", "(4)", "((4),(1)):((1),(0))", 0 },
	{ "flat_divide", "(1,1):(1,1)", "(2,8:1)", "(2,8,1,1):(1,1,0,0)", 0 },
	{ "flat_divide", "5:2", "(6:1)", "((6),(1)):((2),(0))", 0 },
	{ "logical_product", "(2,(4,2,3)):(3,(144,36,6))", "((2,2):(2,1))", "((2,(2,2)),(4,2,3)):((3,(2,1)),(144,36,6))", 1 },
	{ "logical_product", "(2,(2,4),(1,4)):(16,(32,1),(4,4))", "((2,4):(4,4),(3):(1))", "((2,(2,4)),((2,4),(3)),(1,4)):((16,(4,4)),((32,1),(4)),(4,4))", 1 },
	{ "logical_product", "3:3", "(8)", NULL, 0 },
	{ "logical_product", "4:2", "(5:1)", NULL, 0 },
	{ "logical_product", "((2),(2,4,2)):((24),(12,1,48))", "(1,((4):(3),_))", "(((2),1),((2,(4)),4,2)):(((24),0),((12,(3)),1,48))", 0 },
	{ "logical_product", "(5,6):(1,5)", "(3,((2,1,1)):((2,4,2)))", "((5,3),(6,((2,1,1)))):((1,5),(5,((2,4,2))))", 0 },
	{ "logical_product", "((2,1,3),(2,3)):((18,648,3),(36,72))", "(((8):(1)),(2,5):(1,2))", "(((2,(8)),1,3),((2,3),(2,5))):(((18,(1)),648,3),((36,72),(1,2)))", 0 },
	{ "logical_product", "(8,2):(2,1)", "(6:1)", "((8,(2,3)),2):((2,(1,16)),1)", 0 },
	{ "logical_product", "8:1", "(2,8):(1,2)", "(8,(2,8)):(1,(8,16))", 0 },
	{ "logical_product", "((2,2),(2,2),4):((1,2),(4,8),16)", "2:4", "(((2,2),(2,2),4),2):(((1,2),(4,8),16),256)", 0 },
	{ "zipped_product", "((1,2,2),(1,2,2,2),(2)):((2,4,32),(2,1,2,8),(16))", "(8:3,(2):(1))", "(((1,2,2),(1,2,2,2)),((2,4),(2),(2))):(((2,4,32),(2,1,2,8)),((3,8),(4),(16)))", 1 },
	{ "zipped_product", "(2):(1)", "(_)", NULL, 0 },
	{ "zipped_product", "((2,2),(2,1,2,2)):((3,6),(24,96,48,12))", "((1,2,1,2):(4,2,4,1),8:8)", NULL, 0 },
	{ "zipped_product", "((1,1,1),1,(2,2,2),(2,2,2)):((24,48,4),384,(1,2,4),(48,24,96))", "(((2):(1)),(3):(2),(4):(2))", "(((1),1,(2,2,2)),(((2),1,1),(3),(4),(2,2,2))):(((24),384,(1,2,4)),(((1),48,4),(2),(16),(48,24,96)))", 0 },
	{ "zipped_product", "(2,(1,2,2,2),(2,2)):(16,(64,1,32,8),(2,4))", "(6:1,1,(((2,2,1),(2,1)):((1,2,4),(4,8)),(4):(1)))", "((2,(1,2,2,2),(2,2)),(6,1,(((2,2,1),(2,1)),(4)))):((16,(64,1,32,8),(2,4)),(1,0,(((1,4,8),(8,16)),(1))))", 0 },
	{ "zipped_product", "4:1", "(((1,1,1,1),(2,2),(2,1,2)):((1,32,3,1),(4,16),(1,3,3)))", "((4),(((1,1,1,1),(2,2),(2,1,2)))):((1),(((4,128,12,4),(16,64),(4,12,12))))", 0 },
	{ "zipped_product", "((1,2,1,2),4):((8,1,16,8),2)", "(2,4):(1,24)", "(((1,2,1,2),4),(2,4)):(((8,1,16,8),2),(16,384))", 0 },
	{ "zipped_product", "((3),4,2):((6),18,3)", "2:3", "(((3),4,2),2):(((6),18,3),72)", 0 },
	{ "zipped_product", "2:1", "(3,2,3):(18,54,2)", "(2,(3,2,3)):(1,(36,108,4))", 0 },
	{ "tiled_product", "(1,(2,2,4)):(2,(2,4,24))", "(1,2):(3,4)", NULL, 0 },
	{ "tiled_product", "(3,(3,2),3):(18,(6,54),2)", "((2,4):(1,2),5:24)", NULL, 0 },
	{ "tiled_product", "4:1", "((2,2):(2,2))", "((4),((2,2))):((1),((8,8)))", 0 },
	{ "tiled_product", "4:1", "((2):(0))", "((4),((2))):((1),((0)))", 0 },
	{ "tiled_product", "((2,2),(2,2,3)):((2,4),(24,1,8))", "(((6):(1)),2:1)", "(((2),(2,2,3)),(((2,3)),2),2):(((2),(24,1,8)),(((1,4)),4),2)", 0 },
	{ "tiled_product", "5:3", "(3)", "((5),(3)):((3),(1))", 0 },
	{ "tiled_product", "(5,1):(1,5)", "(2:1)", "((5),2,1):((1),5,5)", 0 },
	{ "tiled_product", "4:2", "(2)", "((4),(2)):((2),(1))", 0 },
	{ "flat_product", "((1,1,2,2),(2,2,1,1),(2,2)):((32,16,16,1),(2,4,1,16),(32,8))", "((3,2,4):(1,3,6))", "(((1,1,2,2)),(3,2,(2,2)),(2,2,1,1),(2,2)):(((32,16,16,1)),(2,6,(12,32)),(2,4,1,16),(32,8))", 1 },
	{ "flat_product", "((1,1),(2,2,1,2),3,1):((1,1),(1,2,4,4),8,24)", "((4),_,1:8,_)", NULL, 0 },
	{ "flat_product", "4:1", "(_)", NULL, 0 },
	{ "flat_product", "1:1", "((8):(1))", "((1),((8))):((1),((1)))", 0 },
	{ "flat_product", "(3,1):(2,6)", "((4,4,2):(1,4,16),(2):(4))", "(3,1,((2,2),4,2),(2)):(2,6,((1,6),12,48),(4))", 0 },
	{ "flat_product", "((3),(4,4)):((3),(72,9))", "(((2):(1)))", "(((3)),((2)),(4,4)):(((3)),((1)),(72,9))", 0 },
	{ "flat_product", "1:2", "(4,3,2):(1,24,1)", "(1,4,3,2):(2,1,24,1)", 0 },
	{ "flat_product", "((2),(2,4)):((1),(2,4))", "(3)", "(((2)),3,(2,4)):(((1)),2,(2,4))", 0 },
	{ "flat_product", "(1,(2,2),(2,1),(2,3)):(1,(1,2),(4,8),(8,16))", "(2:2,(4:1))", "(1,(2),2,(4,2),(2,1),(2,3)):(1,(1),2,(2,2),(4,8),(8,16))", 0 },
	{ "blocked_product", "(3,2,4):(6,6,24)", "(2,6):(18,3)", NULL, 0 },
	{ "blocked_product", "(6):(12)", "6:1", NULL, 0 },
	{ "blocked_product", "4:6", "(5,1):(1,5)", "((4,5),(1,1)):((6,1),(0,5))", 0 },
	{ "blocked_product", "1:1", "(4,2,3):(16,6,6)", "((1,4),(1,2),(1,3)):((1,16),(0,6),(0,6))", 0 },
	{ "blocked_product", "1:6", "(2,5):(45,3)", "((1,2),(1,5)):((6,45),(0,3))", 0 },
	{ "raked_product", "8:3", "5:2", NULL, 0 },
	{ "raked_product", "4:4", "(5,4):(1,5)", NULL, 0 },
	{ "raked_product", "(4):(8)", "(2,2,3,2):(2,72,8,4)", "((2,4),(2,1),(3,1),(2,1)):((2,8),(288,0),(32,0),(4,0))", 0 },
	{ "raked_product", "2:32", "(2,3,4):(12,4,1)", "((2,2),(3,1),(4,1)):((12,32),(4,0),(1,0))", 0 },
	{ "raked_product", "(5,2,1):(1,5,5)", "2:1", "((2,5),(1,2),(1,1)):((10,1),(0,5),(0,5))", 0 },
	{ "complement", "((2,4,2),(2,4)):((8,2,1),(1,12))", "(9,14)", NULL, 0 },
	{ "complement", "((3,2,3),(2,2,1,3)):((1,3,3),(4,32,12,0))", NULL, NULL, 0 },
	{ "complement", "((2),(1,3)):((1),(1,4))", NULL, "2:2", 0 },
	{ "complement", "6:1", NULL, "1:0", 0 },
	{ "complement", "6:1", NULL, "1:0", 0 },
	{ "right_inverse", "(4,((1,5),(1))):(5,((20,1),(1)))", NULL, "(5,4):(4,1)", 0 },
	{ "right_inverse", "(2,(1,(1,2,2)),2,((2,2),(2,2,2,1))):(1,(2,(2,2,4)),8,((16,32),(64,128,256,512)))", NULL, "512:1", 0 },
	{ "right_inverse", "4:32", NULL, "1:0", 0 },
	{ "left_inverse", "((1,2,(2,2)),2,(2,(2,2,2),2)):((2,3,(2,24)),24,(1,(1,4,6),16))", NULL, NULL, 0 },
	{ "left_inverse", "((2,(2,2),2,(1,2,1)),((1),(1),1,(2,1,3,2))):((16,(2,1),1,(24,1,2)),((0),(1),16,(2,32,6,16)))", NULL, NULL, 0 },
	{ "left_inverse", "5:1", NULL, "5:1", 0 },
	{ "left_inverse", "(3):(1)", NULL, "3:1", 0 },
	{ "left_inverse", "6:1", NULL, "6:1", 0 },
	{ "coalesce", "(8,3):(1,8)", NULL, "24:1", 0 },
	{ "coalesce", "(((1,1,1),(1,1,1)),(1,(1,1,2),(2,2),(2,1,2,1)),2,((2,2),(2,1))):(((24,4,8),(1,1,3)),(32,(4,32,0),(6,2),(16,6,24,16)),2,((0,32),(1,4)))", NULL, "(2,2,2,2,2,2,2,2,2):(0,6,2,16,24,2,0,32,1)", 0 },
	{ "coalesce", "(((3,2,3),(2,2)),3):(((648,324,18),(1944,54)),3)", NULL, "(3,2,3,2,2,3):(648,324,18,1944,54,3)", 0 },
};

static int
golden_run(const char *op, const Layout *a, const char *ts, int flags, Layout *r, Err *e)
{
	Tiler t;
	Tuple cot;
	int i;

	if (strcmp(op, "complement") == 0) {
		if (!ts)
			return cute_complement(a, NULL, r, e);
		if (tuple_parse(ts, &cot, e) < 0)
			return -1;
		return cute_complement(a, &cot, r, e);
	}
	if (strcmp(op, "right_inverse") == 0)
		return cute_right_inverse(a, r, e);
	if (strcmp(op, "left_inverse") == 0)
		return cute_left_inverse(a, r, e);
	if (strcmp(op, "coalesce") == 0)
		return cute_coalesce(a, r, e);
	if (tiler_parse(ts, &t, e) < 0)
		fail_msg("golden tiler %s: %s", ts, e->msg);
	for (i = 0; i < CUTE_NOPS; i++)
		if (strcmp(op, cute_op_name((CuteOp)i)) == 0)
			return cute_algebra((CuteOp)i, a, &t, flags, r, e);
	fail_msg("golden: unknown op %s", op);
	return -1;
}

static void
test_cpp_golden(void **state)
{
	size_t i;

	for (i = 0; i < sizeof golden / sizeof golden[0]; i++) {
		Layout a = L(golden[i].a), r;
		Err e;
		int st = golden_run(golden[i].op, &a, golden[i].t, CUTE_CPP, &r, &e);

		if (!golden[i].cpp) {
			if (st == 0)
				fail_msg("%s(%s, %s): C++ refuses, tessel gives %s", golden[i].op, golden[i].a,
				         golden[i].t, str(&r));
			assert_int_equal(golden_run(golden[i].op, &a, golden[i].t, 0, &r, &e), -1);
			continue;
		}
		if (st < 0)
			fail_msg("%s(%s, %s) with CUTE_CPP: %s; C++ gives %s", golden[i].op, golden[i].a,
			         golden[i].t, e.msg, golden[i].cpp);
		if (strcmp(str(&r), golden[i].cpp) != 0)
			fail_msg("%s(%s, %s) with CUTE_CPP: %s; C++ gives %s", golden[i].op, golden[i].a,
			         golden[i].t, str(&r), golden[i].cpp);
		st = golden_run(golden[i].op, &a, golden[i].t, 0, &r, &e);
		if (golden[i].not_aob) {
			if (st == 0 || !strstr(e.msg, golden[i].cpp))
				fail_msg("%s(%s, %s): C++'s %s is not A o B, tessel says %s", golden[i].op,
				         golden[i].a, golden[i].t, golden[i].cpp, st == 0 ? str(&r) : e.msg);
		} else if (st < 0 || strcmp(str(&r), golden[i].cpp) != 0) {
			fail_msg("%s(%s, %s): %s; C++ gives %s", golden[i].op, golden[i].a, golden[i].t,
			         st < 0 ? e.msg : str(&r), golden[i].cpp);
		}
	}
}


int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notation),
		cmocka_unit_test(test_tuples),
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_slice_eval),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_swizzle),
		cmocka_unit_test(test_tv_mma),
		cmocka_unit_test(test_orders),
		cmocka_unit_test_setup(test_prop_coalesce_filter, seed_setup),
		cmocka_unit_test_setup(test_prop_composition, seed_setup),
		cmocka_unit_test_setup(test_prop_complement_inverse, seed_setup),
		cmocka_unit_test_setup(test_prop_divide_product, seed_setup),
		cmocka_unit_test_setup(test_prop_same_function, seed_setup),
		cmocka_unit_test_setup(test_prop_slice_coords, seed_setup),
		cmocka_unit_test_setup(test_tiler_paths, seed_setup),
		cmocka_unit_test(test_tiler_robust),
		cmocka_unit_test_setup(test_prop_composition_cpp, seed_setup),
		cmocka_unit_test_setup(test_prop_notation, seed_setup),
		cmocka_unit_test(test_cpp_golden),
	};

	return cmocka_run_group_tests_name("cute", tests, NULL, NULL);
}

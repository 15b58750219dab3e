/* test_viz.c - cmocka tests of the scene model and the terminal pictures of viz/. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../viz/viz.h"

/* Each test gets an empty Buf in *state; teardown frees it. */
static int
setup(void **state)
{
	Buf *b = malloc(sizeof *b);

	if (!b)
		return -1;
	buf_init(b);
	*state = b;
	return 0;
}

static int
teardown(void **state)
{
	buf_free(*state);
	free(*state);
	return 0;
}

static Layout
L(const char *s)
{
	Layout l;
	Err e;

	if (cute_parse(s, &l, &e) < 0)
		fail_msg("cute_parse %s: %s", s, e.msg);
	return l;
}

static Composed
C(const char *s)
{
	Composed c;
	Err e;

	if (composed_parse(s, &c, &e) < 0)
		fail_msg("composed_parse %s: %s", s, e.msg);
	return c;
}

static const char *
show(Buf *b, const char *s, const VizOpts *o)
{
	Layout l = L(s);
	Err e;

	buf_reset(b);
	if (viz_show_layout(b, &l, o, &e) < 0)
		fail_msg("viz_show_layout %s: %s", s, e.msg);
	return b->s;
}

static const char *
show_composed(Buf *b, const char *s, const VizOpts *o)
{
	Composed c = C(s);
	Err e;

	buf_reset(b);
	if (viz_show_composed(b, &c, o, &e) < 0)
		fail_msg("viz_show_composed %s: %s", s, e.msg);
	return b->s;
}

static const char *
show_tv(Buf *b, const char *s, int64_t m, int64_t n, const VizOpts *o)
{
	Layout l = L(s);
	Err e;

	buf_reset(b);
	if (viz_show_tv(b, &l, m, n, o, &e) < 0)
		fail_msg("viz_show_tv %s: %s", s, e.msg);
	return b->s;
}

/* Remove CSI escapes; the caller frees. */
static char *
strip(const char *s)
{
	char *o = malloc(strlen(s) + 1), *p = o;

	assert_non_null(o);
	while (*s) {
		if (s[0] == '\033' && s[1] == '[') {
			s += 2;
			while (*s && !(*s >= 0x40 && *s <= 0x7e))
				s++;
			if (*s)
				s++;
		} else {
			*p++ = *s++;
		}
	}
	*p = '\0';
	return o;
}

static int
count(const char *s, const char *sub)
{
	int n = 0;

	while ((s = strstr(s, sub))) {
		n++;
		s += strlen(sub);
	}
	return n;
}

/* The goldens below follow print_tensor.hpp's print_layout by hand:
** idx_width = num_digits(cosize)+2; "    " then "  %*d " per column;
** "+" and idx_width dashes per column; "%2d  " then "| %*d " per cell. */

static void
test_print_layout_4x2(void **state)
{
	const char *want =
		"(4,2):(1,4)\n"
		"      0   1 \n"
		"    +---+---+\n"
		" 0  | 0 | 4 |\n"
		"    +---+---+\n"
		" 1  | 1 | 5 |\n"
		"    +---+---+\n"
		" 2  | 2 | 6 |\n"
		"    +---+---+\n"
		" 3  | 3 | 7 |\n"
		"    +---+---+\n";

	assert_string_equal(show(*state, "(4,2):(1,4)", NULL), want);
}

static void
test_print_layout_hier(void **state)
{
	/* m = (m0,m1) in (2,2): 4*m0 + m1; n: 2*n. */
	const char *want =
		"((2,2),2):((4,1),2)\n"
		"      0   1 \n"
		"    +---+---+\n"
		" 0  | 0 | 2 |\n"
		"    +---+---+\n"
		" 1  | 4 | 6 |\n"
		"    +---+---+\n"
		" 2  | 1 | 3 |\n"
		"    +---+---+\n"
		" 3  | 5 | 7 |\n"
		"    +---+---+\n";

	assert_string_equal(show(*state, "((2,2),2):((4,1),2)", NULL), want);
}

static void
test_print_layout_width(void **state)
{
	/* cosize 16: two digits, idx_width 4. */
	const char *want =
		"(2,2):(1,8)\n"
		"       0    1 \n"
		"    +----+----+\n"
		" 0  |  0 |  8 |\n"
		"    +----+----+\n"
		" 1  |  1 |  9 |\n"
		"    +----+----+\n";

	assert_string_equal(show(*state, "(2,2):(1,8)", NULL), want);
}

static void
test_rank1(void **state)
{
	const char *want =
		"8:1\n"
		"      0   1   2   3   4   5   6   7 \n"
		"    +---+---+---+---+---+---+---+---+\n"
		" 0  | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 |\n"
		"    +---+---+---+---+---+---+---+---+\n";

	assert_string_equal(show(*state, "8:1", NULL), want);
}

static void
test_rank3(void **state)
{
	/* columns are modes 1..2 together: cell (m,n) = l(m + 2n). */
	const char *want =
		"(2,2,2):(1,2,4)\n"
		"      0   1   2   3 \n"
		"    +---+---+---+---+\n"
		" 0  | 0 | 2 | 4 | 6 |\n"
		"    +---+---+---+---+\n"
		" 1  | 1 | 3 | 5 | 7 |\n"
		"    +---+---+---+---+\n"
		"rank 3: modes 1..2 grouped into the columns (4 columns)\n";

	assert_string_equal(show(*state, "(2,2,2):(1,2,4)", NULL), want);
	assert_non_null(strstr(show(*state, "(2,3,4,5)", NULL),
	                       "rank 4: modes 1..3 grouped into the columns (60 columns)"));
}

static void
test_rank0_size1(void **state)
{
	const char *want =
		"1:0\n"
		"      0 \n"
		"    +---+\n"
		" 0  | 0 |\n"
		"    +---+\n";

	assert_string_equal(show(*state, "1:0", NULL), want);
	assert_non_null(strstr(show(*state, "()", NULL), " 0  | 0 |\n"));
}

static void
test_scene_of_layout(void **state)
{
	Layout l = L("(3,5):(5,1)");
	Scene s;
	Err e;
	Grid *g;

	assert_int_equal(cute_scene_layout(&s, &l, NULL, &e), 0);
	assert_int_equal(s.ngrid, 1);
	g = &s.grid[0];
	assert_int_equal(g->rows, 3);
	assert_int_equal(g->cols, 5);
	assert_int_equal(g->scheme, VIZ_SCHEME_VALUE);
	assert_int_equal(scene_cell(g, 2, 4)->value, 14);
	assert_string_equal(scene_cell(g, 2, 4)->line[0], "14");
	assert_int_equal(scene_cell(g, 2, 4)->color, 14 % 8);
	assert_string_equal(s.title.s, "(3,5):(5,1)");
	scene_free(&s);
	scene_free(&s);
}

static void
test_elision(void **state)
{
	VizOpts o;
	Layout l = L("(200,200):(200,1)");
	Scene s;
	Err e;

	assert_non_null(strstr(show(*state, "(200,200):(200,1)", NULL),
	                       "\nelided: showing 64 of 200 rows and 64 of 200 columns\n"));
	assert_non_null(strstr(show(*state, "(4,128)", NULL), "\nelided: showing 64 of 128 columns\n"));
	assert_non_null(strstr(show(*state, "(128,4)", NULL), "\nelided: showing 64 of 128 rows\n"));
	viz_opts_default(&o);
	o.max_rows = 32;
	o.max_cols = 8;
	assert_non_null(strstr(show(*state, "(200,200):(200,1)", &o),
	                       "elided: showing 32 of 200 rows and 8 of 200 columns"));
	assert_int_equal(cute_scene_layout(&s, &l, &o, &e), 0);
	assert_int_equal(s.grid[0].rows, 32);
	assert_int_equal(s.grid[0].cols, 8);
	assert_int_equal(s.grid[0].nrows, 200);
	assert_int_equal(s.grid[0].ncols, 200);
	assert_int_equal(scene_cell(&s.grid[0], 31, 7)->value, 31 * 200 + 7);
	scene_free(&s);
}

static void
test_huge_not_enumerated(void **state)
{
	/* 2^40 elements: only the 64x64 cells shown are evaluated. */
	const char *out = show(*state, "(1048576,1048576):(1,1048576)", NULL);

	assert_non_null(strstr(out, "elided: showing 64 of 1048576 rows and 64 of 1048576 columns"));
	assert_non_null(strstr(out, " 66060351 |\n"));   /* (63,63) = 63 + 63*2^20 */
	out = show_composed(*state, "Sw<3,4,3> o 0 o (4096,4096):(4096,1)", NULL);
	assert_non_null(strstr(out, "bank conflicts not analysed: 16777216 elements are more than 4194304"));
}

static void
test_tv_2x2_threads(void **state)
{
	/* thr = (t0,t1) in (2,2), index t0 + 4*t1 + 2*v in a 4x2 tile:
	** T0 -> (0,0),(2,0); T1 -> (1,0),(3,0); T2 -> (0,1),(2,1); T3 -> (1,1),(3,1). */
	const char *two =
		"((2,2),2):((1,4),2)  (thr,val) -> m + n*4 in a 4x2 tile\n"
		"       0    1 \n"
		"    +----+----+\n"
		" 0  | T0 | T2 |\n"
		"    | V0 | V0 |\n"
		"    +----+----+\n"
		" 1  | T1 | T3 |\n"
		"    | V0 | V0 |\n"
		"    +----+----+\n"
		" 2  | T0 | T2 |\n"
		"    | V1 | V1 |\n"
		"    +----+----+\n"
		" 3  | T1 | T3 |\n"
		"    | V1 | V1 |\n"
		"    +----+----+\n";
	const char *compact =
		"((2,2),2):((1,4),2)  (thr,val) -> m + n*4 in a 4x2 tile\n"
		"         0      1 \n"
		"    +------+------+\n"
		" 0  | T0V0 | T2V0 |\n"
		"    +------+------+\n"
		" 1  | T1V0 | T3V0 |\n"
		"    +------+------+\n"
		" 2  | T0V1 | T2V1 |\n"
		"    +------+------+\n"
		" 3  | T1V1 | T3V1 |\n"
		"    +------+------+\n";
	VizOpts o;

	assert_string_equal(show_tv(*state, "((2,2),2):((1,4),2)", 4, 2, NULL), two);
	viz_opts_default(&o);
	o.compact = 1;
	assert_string_equal(show_tv(*state, "((2,2),2):((1,4),2)", 4, 2, &o), compact);
}

static void
test_tv_shared_and_unmapped(void **state)
{
	/* Both threads hold indices 0 and 1: column 1 is never reached. */
	Layout tv = L("(2,2):(0,1)");
	Scene s;
	Err e;
	Grid *g;

	assert_int_equal(cute_scene_tv(&s, &tv, 2, 2, NULL, &e), 0);
	g = &s.grid[0];
	assert_int_equal(g->scheme, VIZ_SCHEME_THREAD);
	assert_int_equal(scene_cell(g, 0, 0)->flags, CELL_SHARED);
	assert_string_equal(scene_cell(g, 1, 0)->line[0], "T0");
	assert_string_equal(scene_cell(g, 1, 0)->line[1], "V1");
	assert_int_equal(scene_cell(g, 0, 1)->flags, CELL_EMPTY);
	assert_int_equal(scene_cell(g, 0, 1)->nline, 0);
	assert_string_equal(g->caption.s,
	                    "2 cells are reached by several (thr,val); each shows the first\n"
	                    "2 cells are not mapped (blank)");
	scene_free(&s);
	assert_non_null(strstr(show_tv(*state, "(2,2):(0,1)", 2, 2, NULL),
	                       " 0  | T0 |    |\n    | V0 |    |\n"));
}

static void
test_tv_errors(void **state)
{
	Layout tv = L("4:2"), big = L("4194305:1");
	Scene s;
	Err e;
	VizOpts o;

	assert_int_equal(viz_show_tv(*state, &tv, 2, 2, NULL, &e), -1);
	assert_string_equal(e.msg, "viz.tv: tv layout 4:2 maps (thr,val) = (2,0) to index 4, "
	                    "outside the 2x2 tile");
	assert_int_equal(((Buf *)*state)->len, 0);
	assert_int_equal(cute_scene_tv(&s, &big, 4194305, 1, NULL, &e), -1);
	assert_non_null(strstr(e.msg, "4194305 (thr,val) pairs; more than 4194304"));
	assert_int_equal(s.ngrid, 0);
	assert_int_equal(viz_show_tv(*state, &tv, 0, 2, NULL, &e), -1);
	assert_string_equal(e.msg, "viz.tv: tile 0x2 is empty or too large");
	assert_int_equal(viz_show_tv(*state, &tv, (int64_t)1 << 40, (int64_t)1 << 40, NULL, &e), -1);
	viz_opts_default(&o);
	o.scheme = VIZ_SCHEME_BANK;
	assert_int_equal(viz_show_tv(*state, &tv, 8, 1, &o, &e), -1);
	assert_non_null(strstr(e.msg, "bank colour scheme applies to layouts"));
}

static const char *
bank_line(Buf *b, const char *s, int eb)
{
	VizOpts o;
	const char *p;

	viz_opts_default(&o);
	o.elem_bytes = eb;
	p = strstr(show_composed(b, s, &o), "banks: ");
	assert_non_null(p);
	return p;
}

#define BANKS(layout, eb, want) \
	assert_true(strncmp(bank_line(*state, layout, eb), want, strlen(want)) == 0)

static void
test_bank_conflicts(void **state)
{
	/* Column-major 32x32 floats: row m holds m + 32n, all in bank m; a column
	** holds 32 consecutive words. */
	BANKS("Sw<0,0,0> o 0 o (32,32):(1,32)", 4,
	      "banks: reading rows 32-way (first at row 0), reading columns conflict-free "
	      "(4-byte elements, 32 per 128-byte access)");
	/* Sw<5,0,5> xors n into the low 5 bits: bank m^n, distinct along rows and columns. */
	BANKS("Sw<5,0,5> o 0 o (32,32):(1,32)", 4, "banks: reading rows conflict-free, reading columns conflict-free");
	/* 8 rows of 128 bytes as 16-byte vectors: a row covers the 32 banks once;
	** a column hits banks 4c..4c+3 in every row: 8-way. Sw<3,0,3> xors the row
	** into the vector index and makes both conflict-free. */
	BANKS("Sw<0,0,0> o 0 o (8,8):(8,1)", 16,
	      "banks: reading rows conflict-free, reading columns 8-way (first at column 0) "
	      "(16-byte elements, 8 per 128-byte access)");
	BANKS("Sw<3,0,3> o 0 o (8,8):(8,1)", 16, "banks: reading rows conflict-free, reading columns conflict-free");
	/* 8-byte elements, 16 per access: two rows of (4,8):(8,1) are 32 words;
	** down the columns, 4 rows x 4 columns hit words 16r + 2c, rows 0 and 2 collide. */
	BANKS("Sw<0,0,0> o 0 o (4,8):(8,1)", 8, "banks: reading rows conflict-free, reading columns 2-way (first at column 0)");
	/* 1-byte elements: a row is 8 words; a column is bytes 32r, words 8r, 4 banks. */
	BANKS("Sw<0,0,0> o 0 o (32,32):(32,1)", 1, "banks: reading rows conflict-free, reading columns 8-way");
	/* 16x16 halves, column-major: two rows are words m/2 + 8n, 4 banks, 4-way. */
	BANKS("Sw<0,0,0> o 0 o (16,16):(1,16)", 2, "banks: reading rows 4-way (first at row 0), reading columns conflict-free");
}

static void
test_bank_scheme(void **state)
{
	Composed c = C("Sw<0,0,0> o 0 o (16,16):(1,16)");
	Layout l = L("(16,16):(1,16)");
	VizOpts o;
	Scene s;
	Err e;

	assert_int_equal(cute_scene_composed(&s, &c, NULL, &e), 0);
	assert_int_equal(s.grid[0].scheme, VIZ_SCHEME_BANK);
	/* value 16 at (0,1): byte 32, word 8, bank 8; value 3 at (3,0): word 1. */
	assert_int_equal(scene_cell(&s.grid[0], 0, 1)->color, 8);
	assert_int_equal(scene_cell(&s.grid[0], 3, 0)->color, 1);
	scene_free(&s);
	viz_opts_default(&o);
	o.scheme = VIZ_SCHEME_BANK;
	o.elem_bytes = 4;
	assert_int_equal(cute_scene_layout(&s, &l, &o, &e), 0);
	assert_int_equal(scene_cell(&s.grid[0], 0, 1)->color, 16);
	/* rows 0,1 are words m + 16n: banks 0, 1, 16, 17 with 8 words each. */
	assert_non_null(strstr(s.grid[0].caption.s, "reading rows 8-way"));
	scene_free(&s);
	o.scheme = VIZ_SCHEME_THREAD;
	assert_int_equal(cute_scene_composed(&s, &c, &o, &e), 0);
	assert_int_equal(scene_cell(&s.grid[0], 0, 1)->color, 0);
	assert_int_equal(scene_cell(&s.grid[0], 3, 0)->color, 3);
	assert_non_null(strstr(s.grid[0].caption.s, "reading rows 8-way"));
	scene_free(&s);
}

static void
test_color(void **state)
{
	VizOpts o;
	char *plain, *colored;
	Buf *b = *state;
	MmaAtom a;
	Err e;

	viz_opts_default(&o);
	plain = strdup(show(b, "((2,2),2):((4,1),2)", &o));
	o.color = 1;
	colored = strip(show(b, "((2,2),2):((4,1),2)", &o));
	assert_int_equal(count(b->s, "\033[48;5;"), 8);
	assert_int_equal(count(b->s, "\033[0m"), 8);
	/* value 0 is white (black!00) with black text; value 3 is black!60. */
	assert_non_null(strstr(b->s, "|\033[38;5;16m\033[48;5;231m 0 \033[0m|"));
	assert_non_null(strstr(b->s, "\033[38;5;231m\033[48;5;"));
	assert_string_equal(colored, plain);
	free(plain);
	free(colored);

	o.color = 0;
	plain = strdup(show_tv(b, "(2,2):(0,1)", 2, 2, &o));
	o.color = 1;
	colored = strip(show_tv(b, "(2,2):(0,1)", 2, 2, &o));
	assert_int_equal(count(b->s, "\033[48;5;"), 4);   /* 2 cells x 2 lines, blanks uncoloured */
	assert_string_equal(colored, plain);
	free(plain);
	free(colored);

	assert_int_equal(cute_mma_atom("SM80_16x8x8_F16F16F16F16_TN", &a, &e), 0);
	o.color = 0;
	buf_reset(b);
	assert_int_equal(viz_show_mma(b, &a, &o, &e), 0);
	plain = strdup(b->s);
	o.color = 1;
	buf_reset(b);
	assert_int_equal(viz_show_mma(b, &a, &o, &e), 0);
	colored = strip(b->s);
	assert_int_equal(count(b->s, "\033[48;5;"), 2 * (16 * 8 + 8 * 8 + 16 * 8));
	assert_string_equal(colored, plain);
	free(plain);
	free(colored);

	o.color = 1;
	o.scheme = VIZ_SCHEME_NONE;
	assert_null(strchr(show(b, "(4,2):(1,4)", &o), '\033'));
}

static void
test_mma_panels(void **state)
{
	/* A(t,v) = t + 2v: m = t, k = v. B(t,v) = t + 2v: n = t, k = v, drawn
	** k x n. C(t,v) = 2t + v: m = v, n = t. B sits above C, A left of C. */
	const char *want =
		"TEST_2x2x2  (M,N,K) = (2,2,2)\n"
		"                         B (K x N)  (2,2):(1,2)\n"
		"                                  0      1 \n"
		"                             +------+------+\n"
		"                          0  | T0V0 | T1V0 |\n"
		"                             +------+------+\n"
		"                          1  | T0V1 | T1V1 |\n"
		"                             +------+------+\n"
		"\n"
		"A (M x K)  (2,2):(1,2)   C (M x N)  (2,2):(2,1)\n"
		"         0      1                 0      1 \n"
		"    +------+------+          +------+------+\n"
		" 0  | T0V0 | T0V1 |       0  | T0V0 | T1V0 |\n"
		"    +------+------+          +------+------+\n"
		" 1  | T1V0 | T1V1 |       1  | T0V1 | T1V1 |\n"
		"    +------+------+          +------+------+\n";
	MmaAtom a;
	VizOpts o;
	Err e;
	Buf *b = *state;

	memset(&a, 0, sizeof a);
	strcpy(a.name, "TEST_2x2x2");
	a.m = a.n = a.k = 2;
	a.thr_id = L("2:1");
	a.a = L("(2,2):(1,2)");
	a.b = L("(2,2):(1,2)");
	a.c = L("(2,2):(2,1)");
	viz_opts_default(&o);
	o.compact = 1;
	assert_int_equal(viz_show_mma(b, &a, &o, &e), 0);
	assert_string_equal(b->s, want);

	/* A C layout leaving the tile is refused, and nothing is written. */
	a.c = L("(2,2):(4,1)");
	buf_reset(b);
	assert_int_equal(viz_show_mma(b, &a, &o, &e), -1);
	assert_string_equal(e.msg, "viz.mma: C layout (2,2):(4,1) maps (thr,val) = (1,0) to index 4, "
	                    "outside the 2x2 tile");
	assert_int_equal(b->len, 0);
}

static void
test_mma_atoms(void **state)
{
	Buf *b = *state;
	MmaAtom a;
	Scene s;
	Err e;
	int i;

	for (i = 0; i < cute_mma_count(); i++) {
		const char *name = cute_mma_name(i);

		assert_int_equal(cute_mma_atom(name, &a, &e), 0);
		buf_reset(b);
		if (viz_show_mma(b, &a, NULL, &e) < 0)
			fail_msg("viz_show_mma %s: %s", name, e.msg);
		assert_non_null(strstr(b->s, name));
	}
	/* SM70's quadpair: logical threads, said in the caption. */
	assert_int_equal(cute_mma_atom("SM70_8x8x4_F32F16F16F32_TN", &a, &e), 0);
	assert_int_equal(cute_scene_mma(&s, &a, NULL, &e), 0);
	assert_int_equal(s.ngrid, 3);
	assert_string_equal(s.caption.s, "T is the logical thread; the hardware thread is thr_id(T), "
	                    "thr_id = (4,2):(1,16)");
	assert_int_equal(s.grid[1].prow, 0);       /* B on top, drawn K x N */
	assert_int_equal(s.grid[1].pcol, 1);
	assert_int_equal(s.grid[1].rows, 4);
	assert_int_equal(s.grid[1].cols, 8);
	scene_free(&s);
}

static void
test_errors(void **state)
{
	Buf *b = *state;
	Layout l = L("(4,2):(1,4)");
	VizOpts o;
	Scene s;
	Err e;

	assert_int_equal(viz_show_layout(b, NULL, NULL, &e), -1);
	assert_string_equal(e.msg, "viz.layout: no layout");
	assert_int_equal(viz_show_layout(NULL, &l, NULL, &e), -1);
	assert_int_equal(viz_show_composed(b, NULL, NULL, &e), -1);
	assert_int_equal(viz_show_tv(b, NULL, 2, 2, NULL, &e), -1);
	assert_int_equal(viz_show_mma(b, NULL, NULL, &e), -1);
	assert_int_equal(viz_show_layout(b, NULL, NULL, NULL), -1);      /* NULL Err too */
	assert_int_equal(cute_scene_layout(NULL, &l, NULL, &e), -1);
	assert_int_equal(term_render(NULL, NULL, NULL, &e), -1);
	assert_int_equal(b->len, 0);
	scene_free(NULL);

	viz_opts_default(&o);
	o.max_rows = 0;
	assert_int_equal(viz_show_layout(b, &l, &o, &e), -1);
	assert_string_equal(e.msg, "viz.layout: max_rows 0 is out of range 1..4096");
	viz_opts_default(&o);
	o.max_cols = 4096;
	o.max_rows = 4096;
	assert_int_equal(viz_show_layout(b, &l, &o, &e), -1);
	assert_non_null(strstr(e.msg, "is more than 262144 cells"));
	viz_opts_default(&o);
	o.elem_bytes = 3;
	assert_int_equal(cute_scene_layout(&s, &l, &o, &e), -1);
	assert_string_equal(e.msg, "viz.layout: elem_bytes 3 is not 1, 2, 4, 8 or 16");
	assert_int_equal(s.ngrid, 0);
	viz_opts_default(&o);
	o.scheme = 99;
	assert_int_equal(viz_show_layout(b, &l, &o, &e), -1);
	assert_string_equal(e.msg, "viz.layout: unknown colour scheme 99");
	assert_int_equal(b->len, 0);
}

static void
test_scene_model(void **state)
{
	Scene s;
	Err e;
	Grid *g;
	Cell *c;
	Buf *b = *state;
	int i;

	scene_init(&s);
	assert_null(scene_grid(&s, 0, 3, 0, 0, &e));
	assert_null(scene_grid(&s, 2, 2, 0, SCENE_GRIDS, &e));
	assert_null(scene_grid(&s, 1024, 1024, 0, 0, &e));
	for (i = 0; i < SCENE_GRIDS; i++)
		assert_non_null(scene_grid(&s, 2, 3, 0, i, &e));
	assert_null(scene_grid(&s, 2, 3, 1, 0, &e));
	assert_string_equal(e.msg, "scene: more than 16 panels");
	g = &s.grid[0];
	c = scene_cell(g, 1, 2);
	assert_int_equal(c->color, VIZ_NOCOLOR);
	scene_label(c, "%s", "a label much longer than a cell can hold");
	scene_label(c, "b");
	scene_label(c, "c");
	scene_label(c, "d");
	assert_int_equal(c->nline, VIZ_LINES);
	assert_int_equal(strlen(c->line[0]), VIZ_LABEL - 1);
	scene_note(&s.caption, "one");
	scene_note(&s.caption, "two %d", 2);
	assert_string_equal(s.caption.s, "one\ntwo 2");
	assert_int_equal(term_render(b, &s, NULL, &e), 0);
	assert_non_null(strstr(b->s, "\none\ntwo 2\n"));
	scene_free(&s);
	scene_free(&s);

	assert_int_equal(scene_rgb(VIZ_SCHEME_VALUE, 0), 0xffffff);
	assert_int_equal(scene_rgb(VIZ_SCHEME_VALUE, 9), 0x999999);
	assert_int_equal(scene_rgb(VIZ_SCHEME_THREAD, 0), 0xafafff);
	assert_int_equal(scene_rgb(VIZ_SCHEME_THREAD, 11), 0xffafaf);
	assert_true(scene_rgb(VIZ_SCHEME_BANK, 31) >= 0);
	assert_int_equal(scene_rgb(VIZ_SCHEME_NONE, 3), -1);
	assert_int_equal(scene_rgb(VIZ_SCHEME_VALUE, VIZ_NOCOLOR), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_print_layout_4x2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_print_layout_hier, setup, teardown),
		cmocka_unit_test_setup_teardown(test_print_layout_width, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rank1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rank3, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rank0_size1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scene_of_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_elision, setup, teardown),
		cmocka_unit_test_setup_teardown(test_huge_not_enumerated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tv_2x2_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tv_shared_and_unmapped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tv_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bank_conflicts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bank_scheme, setup, teardown),
		cmocka_unit_test_setup_teardown(test_color, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mma_panels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mma_atoms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scene_model, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

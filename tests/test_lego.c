/* test_lego.c - LEGO layouts: the paper's figures, LEGO's benchmark layouts, brute-force properties, CuTe conversion. */
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
#include "../layout/lower.h"
#include "../viz/viz.h"
#include "prop.h"



static char *
str(const Lego *g)
{
	static char out[4][1024];
	static int k;
	Buf b;

	buf_init(&b);
	lego_print(&b, g);
	k = (k + 1) % 4;
	snprintf(out[k], sizeof out[k], "%s", b.s);
	buf_free(&b);
	return out[k];
}

static Lego
regp(int n, const int64_t *d, const int *p)
{
	Lego g;
	Err e;

	if (lego_regp(&g, d, n, p, &e) < 0)
		fail_msg("regp: %s", e.msg);
	return g;
}

static Lego
genp(int n, const int64_t *d, int gen)
{
	Lego g;
	Err e;

	if (lego_genp(&g, d, n, gen, 0, &e) < 0)
		fail_msg("genp: %s", e.msg);
	return g;
}

static Lego
order2(const Lego *a, const Lego *b)
{
	const Lego *p[2] = { a, b };
	Lego g;
	Err e;

	if (lego_orderby(&g, p, b ? 2 : 1, &e) < 0)
		fail_msg("orderby: %s", e.msg);
	return g;
}

static Lego
group(int n, const int64_t *d, const Lego *a, const Lego *b)
{
	const Lego *p[2] = { a, b };
	Lego g;
	Err e;

	if (lego_groupby(&g, d, n, NULL, 1, p, a ? (b ? 2 : 1) : 0, &e) < 0)
		fail_msg("groupby: %s", e.msg);
	return g;
}

static int64_t
ap(const Lego *g, int64_t a, int64_t b)
{
	int64_t x[2] = { a, b }, f;
	Err e;

	if (lego_apply(g, x, &f, &e) < 0)
		fail_msg("apply %s: %s", str(g), e.msg);
	return f;
}

static void
inv2(const Lego *g, int64_t f, int64_t a, int64_t b)
{
	int64_t x[LEGO_DIMS];
	Err e;

	if (lego_inv(g, f, x, &e) < 0)
		fail_msg("inv %s: %s", str(g), e.msg);
	if (x[0] != a || x[1] != b)
		fail_msg("inv(%lld) of %s = (%lld,%lld), want (%lld,%lld)", (long long)f, str(g),
		         (long long)x[0], (long long)x[1], (long long)a, (long long)b);
}

/*
** Lowering (layout/lower.c): the apply and inv expressions, raw and
** simplified, evaluated at every point equal lego_apply and lego_inv; for
** layouts of RegP parts only, apply composed with inv simplifies to k.
*/
/* 1: a GenP or ExpandBy; 2: a user GenP (lowered only through Lua). */
static int
has_genp(const Lego *g)
{
	int i, k, r = g->erank != 0;

	for (i = 0; i < g->nchain; i++)
		for (k = 0; k < g->chain[i].nparts; k++)
			if (g->chain[i].part[k].kind == LEGO_GENP)
				r = g->chain[i].part[k].gen == LEGO_GEN_USER ? 2 : r > 1 ? r : 1;
	return r;
}

static void
lowered(const Lego *g, int want_identity)
{
	UCtx *c = uctx_new();
	UOp *in[LEGO_DIMS], *ap[2], *iv[2][LEGO_DIMS], *id;
	UBind b[LEGO_DIMS];
	int64_t x[LEGO_DIMS], y[LEGO_DIMS], f, a, v, size = lego_size(g);
	int n, k, s;
	Err e;

	if (size > 4096 || has_genp(g) == 2) {
		uctx_free(c);
		return;
	}
	if (lower_lego_vars(c, g, 0, NULL, in, &n, &e) < 0 ||
	    lower_lego(c, g, 0, in, &ap[0], NULL, NULL, &e) < 0 ||
	    uop_simplify(c, ap[0], &ap[1], &e) < 0)
		fail_msg("lower apply %s: %s", str(g), e.msg);
	for (k = 0; k < g->rank; k++)
		b[k].name = in[k]->name;
	for (a = 0; a < size; a++) {
		for (k = g->rank - 1, f = a; k >= 0; k--) {
			x[k] = f % g->dim[k];
			f /= g->dim[k];
			b[k].value = x[k];
		}
		if (lego_apply(g, x, &f, &e) < 0)
			fail_msg("apply %s: %s", str(g), e.msg);
		for (s = 0; s < 2; s++)
			if (uop_eval(ap[s], b, g->rank, &v, &e) < 0 || v != f)
				fail_msg("%s apply expression of %s at element %lld: %lld, lego_apply %lld (%s)",
				         s ? "simplified" : "raw", str(g), (long long)a, (long long)v,
				         (long long)f, e.msg);
	}
	if (lower_lego_vars(c, g, 1, NULL, in, &n, &e) < 0 ||
	    lower_lego(c, g, 1, in, iv[0], NULL, NULL, &e) < 0)
		fail_msg("lower inv %s: %s", str(g), e.msg);
	for (k = 0; k < g->rank; k++)
		if (uop_simplify(c, iv[0][k], &iv[1][k], &e) < 0)
			fail_msg("simplify inv %s: %s", str(g), e.msg);
	b[0].name = "k";
	for (f = 0; f < lego_cosize(g); f++) {
		b[0].value = f;
		if (lego_inv(g, f, y, &e) < 0)
			fail_msg("inv %s: %s", str(g), e.msg);
		for (s = 0; s < 2; s++)
			for (k = 0; k < g->rank; k++)
				if (uop_eval(iv[s][k], b, 1, &v, &e) < 0 || v != y[k])
					fail_msg("%s inv expression %d of %s at %lld: %lld, lego_inv %lld (%s)",
					         s ? "simplified" : "raw", k, str(g), (long long)f, (long long)v,
					         (long long)y[k], e.msg);
	}
	/* apply(inv(k)) == k: at every point, and proved by the simplifier for
	** the RegP-only layouts of the paper's figures and LEGO's benchmarks */
	if (!has_genp(g)) {
		int eq;
		if (lower_lego(c, g, 0, iv[1], &id, NULL, NULL, &e) < 0 || uop_simplify(c, id, &id, &e) < 0)
			fail_msg("compose %s: %s", str(g), e.msg);
		if (uop_equivalent(id, in[0], 1 << 20, &eq, NULL, NULL, NULL, &e) < 0 || !eq)
			fail_msg("apply(inv(k)) of %s is not k", str(g));
		if (want_identity && id != in[0]) {
			Buf t;
			buf_init(&t);
			uop_print(&t, id, D_INFIX);
			fail_msg("apply(inv(k)) of %s simplifies to %s, not k", str(g), t.s);
		}
	}
	uctx_free(c);
}

static void
checked(const Lego *g)
{
	Err e;

	if (lego_check(g, 1 << 20, &e) != 1)
		fail_msg("check %s: %s", str(g), e.msg);
	lowered(g, 1);
}

/* Figure 6: B tiles the 6x6 view into 2x2 tiles of 3x3; C transposes the
** tiles and orders each tile by antidiagonals. Chain B then C. */
static Lego fig_b, fig_c, fig6;

static void
make_fig6(void)
{
	int64_t d6[2] = { 6, 6 }, d2[2] = { 2, 2 }, d3[2] = { 3, 3 }, tiles[4] = { 2, 2, 3, 3 };
	int tr[2] = { 1, 0 };
	Lego t, a;
	Err e;

	assert_int_equal(lego_tileorderby(&fig_b, tiles, 2, 2, &e), 0);
	t = regp(2, d2, tr);
	a = genp(2, d3, LEGO_GEN_ANTIDIAG);
	fig_c = order2(&t, &a);
	fig6 = group(2, d6, &fig_c, &fig_b);
}

static void
test_figure6(void **state)
{
	int64_t d6[2] = { 6, 6 }, x[4], f, s[4] = { 2, 3, 2, 3 };
	int p[4] = { 0, 2, 1, 3 };
	Lego bonly, b2, ch;
	Err e;

	make_fig6();
	/* B is the paper's OrderBy(RegP([2,3,2,3], [1,3,2,4])), 0-based here */
	b2 = regp(4, s, p);
	b2 = order2(&b2, NULL);
	bonly = group(2, d6, &fig_b, NULL);
	/* logical (4,2) = 26 goes to 23 = [1,0,1,2] under B ... */
	assert_int_equal(ap(&bonly, 4, 2), 23);
	b2 = group(2, d6, &b2, NULL);
	assert_int_equal(ap(&b2, 4, 2), 23);
	/* ... and to 15 = [0,1,2,0] under C after B */
	assert_int_equal(ap(&fig6, 4, 2), 15);
	inv2(&fig6, 15, 4, 2);
	assert_int_equal(lego_inv(&fig6, 15, x, &e), 0);
	/* the fluent form OrderBy(C):OrderBy(B):GroupBy({6,6}) is the same value */
	assert_int_equal(lego_then(&ch, &fig_c, &fig_b, &e), 0);
	{
		const Lego *p1[1] = { &ch };
		Lego g;
		assert_int_equal(lego_groupby(&g, d6, 2, NULL, 1, p1, 1, &e), 0);
		assert_string_equal(str(&g), str(&fig6));
		for (f = 0; f < 36; f++)
			assert_int_equal(ap(&g, f / 6, f % 6), ap(&fig6, f / 6, f % 6));
	}
	/* the opposite chain (C first, then B) is another layout */
	{
		Lego cb = group(2, d6, &fig_b, &fig_c);
		int differ = 0;
		for (f = 0; f < 36; f++)
			differ += ap(&cb, f / 6, f % 6) != ap(&fig6, f / 6, f % 6);
		assert_true(differ > 0);
		assert_int_equal(ap(&cb, 0, 3), 2);
		checked(&cb);
	}
	checked(&fig6);
	assert_string_equal(str(&fig6), "lego.GroupBy({6,6}, lego.OrderBy(lego.RegP({2,2}, {1,0}), "
	                    "lego.GenP({3,3}, \"antidiagonal\")), lego.TileOrderBy({2,2}, {3,3}))");
	b2 = regp(4, s, p);
	b2 = order2(&b2, NULL);
	assert_string_equal(str(&b2), "lego.OrderBy(lego.RegP({2,3,2,3}, {0,2,1,3}))");
}

/* Figure 2: the 6x6 view reshaped to 2x2 tiles of 3x3 (no stripmining), the
** tiles transposed, each tile reversed in both dimensions. */
static void
test_figure2(void **state)
{
	int64_t d6[2] = { 6, 6 }, d2[2] = { 2, 2 }, d3[2] = { 3, 3 };
	int tr[2] = { 1, 0 };
	Lego t = regp(2, d2, tr), r = genp(2, d3, LEGO_GEN_REVERSE), o = order2(&t, &r);
	Lego g = group(2, d6, &o, NULL);

	/* 17 = [0,1,2,2]: tile (0,1) -> (1,0), in-tile (2,2) -> (0,0): 18 = [1,0,0,0] */
	assert_int_equal(ap(&g, 2, 5), 18);
	inv2(&g, 18, 2, 5);
	/* 26 = [1,0,2,2] -> [0,1,0,0] = 9; 35 = [1,1,2,2] -> [1,1,0,0] = 27; 0 -> [0,0,2,2] = 8 */
	assert_int_equal(ap(&g, 4, 2), 9);
	assert_int_equal(ap(&g, 5, 5), 27);
	assert_int_equal(ap(&g, 0, 0), 8);
	checked(&g);
	assert_string_equal(str(&g), "lego.GroupBy({6,6}, lego.OrderBy(lego.RegP({2,2}, {1,0}), "
	                    "lego.GenP({3,3}, \"reverse\")))");
}

/* LEGO's antidiag() for an n x n tile (Figure 7), transcribed. */
static int64_t
lego_antidiag(int64_t n, int64_t i, int64_t j)
{
	int64_t a = i + j + 1;

	if (a <= n)
		return a * (a - 1) / 2 + i;
	return n * n - n + i - (2 * n - a) * (2 * n - a - 1) / 2;
}

static void
test_figure7_antidiagonal(void **state)
{
	static const int64_t want3[9] = { 0, 1, 3, 2, 4, 6, 5, 7, 8 };
	int64_t n, i, j, d[2], r, c;

	for (n = 1; n <= 20; n++) {
		Lego g;
		d[0] = d[1] = n;
		g = genp(2, d, LEGO_GEN_ANTIDIAG);
		for (i = 0; i < n; i++)
			for (j = 0; j < n; j++)
				assert_int_equal(ap(&g, i, j), lego_antidiag(n, i, j));
		checked(&g);
	}
	d[0] = d[1] = 3;
	{
		Lego g3 = genp(2, d, LEGO_GEN_ANTIDIAG);
		for (i = 0; i < 9; i++)
			assert_int_equal(ap(&g3, i / 3, i % 3), want3[i]);
	}
	/* rectangles: still a bijection, diagonals in order, rows ascending within one */
	for (r = 1; r <= 7; r++)
		for (c = 1; c <= 7; c++) {
			Lego g;
			int64_t prevk = -1, prev = -1, f, x[2];
			Err e;
			d[0] = r;
			d[1] = c;
			g = genp(2, d, LEGO_GEN_ANTIDIAG);
			checked(&g);
			for (f = 0; f < r * c; f++) {
				assert_int_equal(lego_inv(&g, f, x, &e), 0);
				if (x[0] + x[1] == prevk)
					assert_true(x[0] > prev);
				else
					assert_true(x[0] + x[1] == prevk + 1);
				prevk = x[0] + x[1];
				prev = x[0];
			}
		}
}

/* Rodinia NW: the (16+1) x (16+1) shared buffer by antidiagonals, so that the
** threads updating one antidiagonal touch consecutive words. */
static void
test_nw(void **state)
{
	int64_t d[2] = { 17, 17 }, k, i;
	Lego a = genp(2, d, LEGO_GEN_ANTIDIAG), o = order2(&a, NULL), g = group(2, d, &o, NULL);

	checked(&g);
	for (k = 0; k <= 32; k++) {
		int64_t lo = k < 17 ? 0 : k - 16, first = ap(&g, lo, k - lo);
		for (i = lo; i <= k && i < 17; i++)
			assert_int_equal(ap(&g, i, k - i), first + (i - lo));
	}
	assert_int_equal(ap(&g, 16, 16), 288);
}

/* LEGO's LUD: logical (ii, jj, tx, ty) over {{R,R},{T,T}}, physical Row(R*T, R*T):
** a thread coarsened by R x R; inv of (ii*R + jj)*T*T + tid is (ii, jj, tid/T, tid%T). */
static void
test_lud(void **state)
{
	int64_t R = 4, T = 16, dims[4] = { 4, 4, 16, 16 }, rt[2] = { 64, 64 }, ii, jj, tid, x[4];
	int glen[2] = { 2, 2 };
	Lego row, g;
	const Lego *ch[1] = { &row };
	Err e;

	assert_int_equal(lego_row(&row, rt, 2, &e), 0);
	assert_int_equal(lego_groupby(&g, dims, 4, glen, 2, ch, 1, &e), 0);
	assert_string_equal(str(&g), "lego.GroupBy({{4,4},{16,16}}, lego.OrderBy(lego.Row(64,64)))");
	for (ii = 0; ii < R; ii++)
		for (jj = 0; jj < R; jj++)
			for (tid = 0; tid < T * T; tid += 7) {
				assert_int_equal(lego_inv(&g, (ii * R + jj) * T * T + tid, x, &e), 0);
				assert_int_equal(x[0], ii);
				assert_int_equal(x[1], jj);
				assert_int_equal(x[2], tid / T);
				assert_int_equal(x[3], tid % T);
			}
	checked(&g);
}

/* 3-D bricks (LEGO's bricks_f3d.py, N = 8, B = 2): the brick layout stores each
** 2x2x2 brick contiguously; the normal layout is row-major N^3. */
static void
test_bricks(void **state)
{
	int64_t n3[3] = { 8, 8, 8 }, g3[3] = { 4, 4, 4 }, b3[3] = { 2, 2, 2 };
	int64_t tiles[6] = { 4, 4, 4, 2, 2, 2 }, x[6], f, a;
	Lego rn, rg, rb, normal_o, bricks_o, normal, bricks;
	Err e;

	assert_int_equal(lego_row(&rn, n3, 3, &e), 0);
	assert_int_equal(lego_row(&rg, g3, 3, &e), 0);
	assert_int_equal(lego_row(&rb, b3, 3, &e), 0);
	normal_o = order2(&rn, NULL);
	bricks_o = order2(&rg, &rb);
	assert_int_equal(lego_tileby_group(&normal, &normal_o, tiles, 3, 2, &e), 0);
	assert_int_equal(lego_tileby_group(&bricks, &bricks_o, tiles, 3, 2, &e), 0);
	for (a = 0; a < 512; a++) {
		int64_t r = a;
		int k;
		for (k = 5; k >= 0; k--) {
			x[k] = r % tiles[k];
			r /= tiles[k];
		}
		assert_int_equal(lego_apply(&bricks, x, &f, &e), 0);
		assert_int_equal(f, ((x[0] * 4 + x[1]) * 4 + x[2]) * 8 + (x[3] * 2 + x[4]) * 2 + x[5]);
		assert_int_equal(lego_apply(&normal, x, &f, &e), 0);
		assert_int_equal(f, (x[0] * 2 + x[3]) * 64 + (x[1] * 2 + x[4]) * 8 + x[2] * 2 + x[5]);
	}
	checked(&bricks);
	checked(&normal);
	assert_string_equal(str(&bricks),
	    "lego.GroupBy({{4,4,4},{2,2,2}}, lego.OrderBy(lego.Row(4,4,4), lego.Row(2,2,2)), "
	    "lego.TileOrderBy({4,4,4}, {2,2,2}), lego.OrderBy(lego.TileBy({4,4,4}, {2,2,2})))");
}

/* Partial tiles: a 7x6 matrix in 4x4 tiles (2x2 of them, expanded to 8x8). */
static void
test_expand(void **state)
{
	int64_t t[4] = { 2, 2, 4, 4 }, ext[2] = { 7, 6 }, x[4], f, a, valid = 0;
	int glen[2] = { 2, 2 };
	Lego tb, g, ex;
	const Lego *ch[1] = { &tb };
	Err e;

	assert_int_equal(lego_tileby(&tb, t, 2, 2, &e), 0);
	assert_int_equal(lego_groupby(&g, t, 4, glen, 2, ch, 1, &e), 0);
	assert_int_equal(lego_expandby(&ex, &g, ext, 2, NULL, &e), 0);
	assert_int_equal(lego_cosize(&ex), 42);
	for (a = 0; a < 64; a++) {
		int64_t r, c;
		x[0] = a >> 5 & 1; x[1] = a >> 4 & 1; x[2] = a >> 2 & 3; x[3] = a & 3;
		r = x[0] * 4 + x[2];
		c = x[1] * 4 + x[3];
		assert_int_equal(lego_apply(&ex, x, &f, &e), 0);
		assert_int_equal(f, r < 7 && c < 6 ? r * 6 + c : -1);
		valid += f >= 0;
	}
	assert_int_equal(valid, 42);
	assert_int_equal(lego_inv(&ex, 41, x, &e), 0);
	assert_int_equal(x[0] * 4 + x[2], 6);
	assert_int_equal(x[1] * 4 + x[3], 5);
	checked(&ex);
	assert_string_equal(str(&ex), "lego.ExpandBy(lego.GroupBy({{2,2},{4,4}}, "
	                    "lego.OrderBy(lego.TileBy({2,2}, {4,4}))), {7,6})");
	assert_int_equal(lego_inv(&ex, 42, x, &e), -1);
	assert_non_null(strstr(e.msg, "outside 0..41"));
}

static void
test_builtins(void **state)
{
	int64_t d4[2] = { 4, 4 }, d24[2] = { 2, 8 }, d3[3] = { 2, 3, 4 }, a, f, x[3];
	/* LEGO's Morton2DFast: the row on the even bits, (0,1) -> 2; morton_rowmajor the other order */
	static const int64_t z44[16] = { 0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15 };
	static const int64_t r44[16] = { 0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15 };
	Lego m = genp(2, d4, LEGO_GEN_MORTON), r, id;
	Err e;

	for (a = 0; a < 16; a++)
		assert_int_equal(ap(&m, a / 4, a % 4), z44[a]);
	checked(&m);
	assert_string_equal(str(&m), "lego.GenP({4,4}, \"morton\")");
	m = genp(2, d4, LEGO_GEN_MORTON_ROW);
	for (a = 0; a < 16; a++)
		assert_int_equal(ap(&m, a / 4, a % 4), r44[a]);
	checked(&m);
	assert_string_equal(str(&m), "lego.GenP({4,4}, \"morton_rowmajor\")");
	r = genp(2, d24, LEGO_GEN_MORTON);
	checked(&r);
	assert_int_equal(lego_genp(&r, d3, 3, LEGO_GEN_REVERSE, 2u, &e), 0);
	assert_string_equal(str(&r), "lego.GenP({2,3,4}, \"reverse\", {1})");
	x[0] = 1; x[1] = 0; x[2] = 3;
	assert_int_equal(lego_apply(&r, x, &f, &e), 0);
	assert_int_equal(f, 1 * 12 + 2 * 4 + 3);
	checked(&r);
	id = genp(3, d3, LEGO_GEN_IDENTITY);
	assert_int_equal(lego_apply(&id, x, &f, &e), 0);
	assert_int_equal(f, 1 * 12 + 3);
	/* refusals */
	assert_int_equal(lego_genp(&r, d3, 3, LEGO_GEN_ANTIDIAG, 0, &e), -1);
	assert_non_null(strstr(e.msg, "2-D"));
	assert_int_equal(lego_genp(&r, d3, 3, LEGO_GEN_MORTON, 0, &e), -1);
	assert_non_null(strstr(e.msg, "dimension 1 is 3"));
	assert_int_equal(lego_genp(&r, d3, 3, LEGO_GEN_REVERSE, 8u, &e), -1);
}

/* User callbacks: ctx selects a behaviour. */
typedef struct Cb {
	int mode;   /* 0 transpose 3x3, 1 constant (not a bijection), 2 error, 3 bad inv */
	int calls;
} Cb;

static int
cb_apply(void *ctx, const int64_t *idx, int rank, int64_t *flat, Err *e)
{
	Cb *c = ctx;

	c->calls++;
	if (c->mode == 2 && idx[0] == 1 && idx[1] == 1)
		return err_set(e, "f: boom at (1,1)");
	*flat = c->mode == 1 ? (idx[0] + idx[1]) % 9 : idx[1] * 3 + idx[0];
	return 0;
}

static int
cb_inv(void *ctx, int64_t flat, int64_t *idx, int rank, Err *e)
{
	Cb *c = ctx;

	idx[0] = flat % 3;
	idx[1] = flat / 3;
	if (c->mode == 3 && flat == 4)
		idx[0] = 0;
	return 0;
}

static void
test_user_genp(void **state)
{
	int64_t d3[2] = { 3, 3 }, d6[2] = { 6, 6 };
	Cb ok = { 0, 0 }, bad = { 1, 0 }, boom = { 2, 0 }, badinv = { 3, 0 };
	Lego g, t, o, whole;
	Err e;

	assert_int_equal(lego_genp_user(&g, d3, 2, cb_apply, cb_inv, &ok, "tr, trinv", &e), 0);
	assert_true(ok.calls >= 9);   /* verified by enumeration */
	assert_string_equal(str(&g), "lego.GenP({3,3}, tr, trinv)");
	assert_int_equal(ap(&g, 1, 2), 7);
	o = order2(&g, NULL);
	{
		int64_t d2[2] = { 2, 2 };
		Lego four = genp(2, d2, LEGO_GEN_IDENTITY), o2 = order2(&four, &g);
		whole = group(2, d6, &o2, NULL);
		checked(&whole);
		(void)o;
	}
	assert_int_equal(lego_genp_user(&t, d3, 2, cb_apply, cb_inv, &bad, NULL, &e), -1);
	if (!strstr(e.msg, "not a bijection: apply(0,1) = 1 and apply(1,0) = 1"))
		fail_msg("%s", e.msg);
	assert_int_equal(lego_genp_user(&t, d3, 2, cb_apply, cb_inv, &boom, NULL, &e), -1);
	assert_string_equal(e.msg, "f: boom at (1,1)");
	assert_int_equal(lego_genp_user(&t, d3, 2, cb_apply, cb_inv, &badinv, "f, g", &e), -1);
	assert_non_null(strstr(e.msg, "inv does not invert apply: apply(1,1) = 4 but inv(4) = (0,1)"));
}

static void
test_errors(void **state)
{
	int64_t d6[2] = { 6, 6 }, d5[2] = { 5, 7 }, neg[2] = { 3, 0 };
	int p01[2] = { 0, 0 }, p5[2] = { 0, 5 };
	Lego r, o, g;
	const Lego *ch[1] = { &o };
	Err e;

	assert_int_equal(lego_regp(&r, d6, 2, p01, &e), -1);
	assert_non_null(strstr(e.msg, "names dimension 0 twice"));
	assert_int_equal(lego_regp(&r, d6, 2, p5, &e), -1);
	assert_non_null(strstr(e.msg, "0-based"));
	assert_int_equal(lego_regp(&r, neg, 2, p01, &e), -1);
	assert_non_null(strstr(e.msg, "dimension 1 is 0"));
	assert_int_equal(lego_row(&r, d5, 2, &e), 0);
	o = order2(&r, NULL);
	assert_int_equal(lego_groupby(&g, d6, 2, NULL, 1, ch, 1, &e), -1);
	assert_string_equal(e.msg, "lego.GroupBy: lego.OrderBy(lego.Row(5,7)) has 35 elements, "
	                    "the chain 36; sizes must agree");
	assert_int_equal(lego_then(&g, &o, &fig_b, &e), -1);
	assert_int_equal(lego_regp(&r, d6, 13, p01, &e), -1);
	{
		int64_t x[2] = { 6, 0 }, f;
		make_fig6();
		assert_int_equal(lego_apply(&fig6, x, &f, &e), -1);
		assert_string_equal(e.msg, "apply: coordinate 0 is 6, outside 0..5");
		assert_int_equal(lego_inv(&fig6, -1, x, &e), -1);
	}
}

static void
test_steps(void **state)
{
	LegoProg *p = malloc(sizeof *p);
	Buf b;
	Err e;

	make_fig6();
	assert_int_equal(lego_prog(&fig6, 0, p, &e), 0);
	buf_init(&b);
	lego_prog_print(&b, p);
	assert_string_equal(b.s,
	    " 1  flatten   x0..x1 over {6,6}\n"
	    " 2  unflatten x0..x0 over {2,3,2,3}\n"
	    " 3  gather    x0..x3 {0,2,1,3}\n"
	    " 4  flatten   x0..x3 over {2,2,3,3}\n"
	    " 5  unflatten x0..x0 over {2,2,3,3}\n"
	    " 6  gather    x0..x1 {1,0}\n"
	    " 7  flatten   x0..x1 over {2,2}\n"
	    " 8  genp      x1..x2 lego.GenP({3,3}, \"antidiagonal\")\n"
	    " 9  flatten   x0..x1 over {4,9}\n");
	buf_free(&b);
	free(p);
}

/*
** Random layouts: a size made of small factors, chains of OrderBys whose
** parts are random RegPs and built-in GenPs.
*/
static int
rand_dims(int64_t n, int64_t *d, int max)
{
	int k = 0, i;

	/* split n into up to max factors >= 1 */
	while (n > 1 && k < max - 1) {
		int64_t f = 1, cand[16];
		int nc = 0;
		for (i = 2; i <= n && nc < 16; i++)
			if (n % i == 0)
				cand[nc++] = i;
		f = cand[rint_(0, nc - 1)];
		d[k++] = f;
		n /= f;
		if (rint_(0, 3) == 0)
			break;
	}
	if (n > 1 || k == 0)
		d[k++] = n;
	return k;
}

static Lego
rand_perm(int64_t n, int regonly)
{
	int64_t d[LEGO_DIMS];
	int r = rand_dims(n, d, 4), p[LEGO_DIMS], k, pow2 = 1, choice;
	Lego g;
	Err e;

	for (k = 0; k < r; k++) {
		p[k] = k;
		pow2 &= (d[k] & (d[k] - 1)) == 0;
	}
	for (k = r - 1; k > 0; k--) {
		int j = rint_(0, k), t = p[k];
		p[k] = p[j];
		p[j] = t;
	}
	/* regonly: the parts to_cute accepts, RegP and morton */
	choice = regonly ? (rint_(0, 3) == 0 ? 2 : 0) : rint_(0, 4);
	if (choice == 1 && r == 2 && lego_genp(&g, d, r, LEGO_GEN_ANTIDIAG, 0, &e) == 0)
		return g;
	if (choice == 2 && pow2 && lego_genp(&g, d, r, rint_(0, 1) ? LEGO_GEN_MORTON : LEGO_GEN_MORTON_ROW,
	                                     0, &e) == 0)
		return g;
	if (choice == 3 && lego_genp(&g, d, r, LEGO_GEN_REVERSE, (uint32_t)rint_(0, (1 << r) - 1), &e) == 0)
		return g;
	if (lego_regp(&g, d, r, p, &e) < 0)
		fail_msg("rand_perm: %s", e.msg);
	return g;
}

static Lego
rand_order(int64_t n, int regonly)
{
	Lego parts[LEGO_PARTS];
	const Lego *ptr[LEGO_PARTS];
	int64_t d[LEGO_DIMS];
	int np = rand_dims(n, d, 3), k, tot = 0;
	Lego o;
	Err e;

	for (k = 0; k < np; k++) {
		parts[k] = rand_perm(d[k], regonly);
		if (tot + parts[k].rank > LEGO_DIMS) {
			parts[k] = rand_perm(1, regonly);
			parts[k] = regp(1, &d[k], (int[]){ 0 });
		}
		tot += parts[k].rank;
		ptr[k] = &parts[k];
	}
	if (lego_orderby(&o, ptr, np, &e) < 0)
		fail_msg("rand_order: %s", e.msg);
	return o;
}

static Lego
rand_group(int regonly, int maxchain)
{
	static const int64_t sizes[] = { 1, 2, 6, 8, 12, 16, 24, 36, 48, 64, 72, 96, 120, 144 };
	int64_t n = sizes[rint_(0, (int)(sizeof sizes / sizeof sizes[0]) - 1)], d[LEGO_DIMS];
	Lego ch[LEGO_CHAIN];
	const Lego *ptr[LEGO_CHAIN];
	int nc = rint_(1, maxchain), k, r = rand_dims(n, d, 4);
	Lego g;
	Err e;

	for (k = 0; k < nc; k++) {
		ch[k] = rand_order(n, regonly);
		ptr[k] = &ch[k];
	}
	if (lego_groupby(&g, d, r, NULL, 1, ptr, nc, &e) < 0)
		fail_msg("rand_group: %s", e.msg);
	return g;
}

static void
test_prop_bijection(void **state)
{
	int it;

	for (it = 0; it < 400; it++) {
		Lego g = rand_group(0, 3);
		Err e;
		if (lego_check(&g, 1 << 20, &e) != 1)
			fail_msg("seed %llu: %s", (unsigned long long)*(uint64_t *)*state, e.msg);
		if (it < 100)
			lowered(&g, 0);
	}
}

/* apply agrees with a direct transcription of LEGO's GroupBy.apply (Figure 5). */
static int64_t
ref_perm_apply(const LegoPerm *p, const int64_t *x)
{
	int64_t y[LEGO_DIMS], f = 0;
	int k;

	if (p->kind == LEGO_REGP) {
		for (k = 0; k < p->rank; k++)
			f = f * p->dim[p->perm[k]] + x[p->perm[k]];
		return f;
	}
	if (p->gen == LEGO_GEN_ANTIDIAG && p->dim[0] == p->dim[1])
		return lego_antidiag(p->dim[0], x[0], x[1]);
	{
		Lego one;
		int64_t v;
		Err e;
		memset(&one, 0, sizeof one);
		one.kind = LEGO_PERM;
		one.rank = p->rank;
		memcpy(one.dim, p->dim, sizeof one.dim);
		one.nchain = 1;
		one.chain[0].nparts = 1;
		one.chain[0].part[0] = *p;
		memcpy(y, x, (size_t)p->rank * sizeof *y);
		lego_apply(&one, y, &v, &e);
		return v;
	}
}

static int64_t
ref_apply(const Lego *g, const int64_t *idx)
{
	int64_t f = 0, x[LEGO_DIMS], d[LEGO_DIMS];
	int k, i, m;

	for (k = 0; k < g->rank; k++)
		f = f * g->dim[k] + idx[k];
	for (i = g->nchain - 1; i >= 0; i--) {
		const LegoOrder *o = &g->chain[i];
		int64_t out = 0;
		int at = 0;
		for (m = 0, k = 0; k < o->nparts; k++) {
			memcpy(d + m, o->part[k].dim, (size_t)o->part[k].rank * sizeof *d);
			m += o->part[k].rank;
		}
		for (k = m - 1; k >= 0; k--) {
			x[k] = f % d[k];
			f /= d[k];
		}
		for (k = 0; k < o->nparts; k++) {
			int64_t sz = 1;
			int j;
			for (j = 0; j < o->part[k].rank; j++)
				sz *= o->part[k].dim[j];
			out = out * sz + ref_perm_apply(&o->part[k], x + at);
			at += o->part[k].rank;
		}
		f = out;
	}
	return f;
}

static void
test_prop_reference(void **state)
{
	int it;

	for (it = 0; it < 300; it++) {
		Lego g = rand_group(0, 3);
		int64_t n = lego_size(&g), a, x[LEGO_DIMS], f;
		Err e;
		for (a = 0; a < n; a++) {
			int64_t r = a;
			int k;
			for (k = g.rank - 1; k >= 0; k--) {
				x[k] = r % g.dim[k];
				r /= g.dim[k];
			}
			assert_int_equal(lego_apply(&g, x, &f, &e), 0);
			if (f != ref_apply(&g, x))
				fail_msg("seed %llu: %s at %lld: %lld, reference %lld",
				         (unsigned long long)*(uint64_t *)*state, str(&g), (long long)a,
				         (long long)f, (long long)ref_apply(&g, x));
		}
	}
}

/* to_cute where affine: cute_eval at every natural coordinate equals apply. */
static void
test_prop_to_cute(void **state)
{
	int it, ok = 0;

	for (it = 0; it < 400; it++) {
		Lego g = rand_group(1, it % 2 ? 1 : 2);
		Layout l;
		int64_t n = lego_size(&g), a, x[LEGO_DIMS], f, v;
		Err e;

		if (lego_to_cute(&g, &l, &e) < 0) {
			assert_non_null(strstr(e.msg, "not affine"));
			continue;
		}
		ok++;
		for (a = 0; a < n; a++) {
			Tuple c;
			int64_t r = a;
			int k, at;
			for (k = g.rank - 1; k >= 0; k--) {
				x[k] = r % g.dim[k];
				r /= g.dim[k];
			}
			c.n = 0;
			at = tuple_open(&c, &e);
			for (k = 0; k < g.rank; k++)
				tuple_push(&c, x[k], &e);
			tuple_close(&c, at);
			assert_int_equal(lego_apply(&g, x, &f, &e), 0);
			if (cute_eval(&l, &c, &v, &e) < 0 || v != f) {
				Buf b;
				buf_init(&b);
				cute_print(&b, &l);
				fail_msg("seed %llu: %s -> %s differs at %lld: %lld vs %lld (%s)",
				         (unsigned long long)*(uint64_t *)*state, str(&g), b.s, (long long)a,
				         (long long)f, (long long)v, e.msg);
			}
		}
	}
	/* a single OrderBy of RegPs is affine (the paper's classification) */
	assert_true(ok > 100);
}

/* from_cute of random compact layouts: apply at the flattened coordinate is
** the CuTe layout's value, and to_cute gives the same function back. */
static void
test_prop_from_cute(void **state)
{
	int it;

	for (it = 0; it < 300; it++) {
		int64_t d[6], st[6], x[LEGO_DIMS], f, v, a, w = 1;
		int n = rint_(1, 5), ord[6], k;
		Tuple sh, sd;
		Layout l, back;
		Lego g;
		Err e;
		int same;
		int64_t where;

		for (k = 0; k < n; k++) {
			d[k] = rint_(1, 4);
			ord[k] = k;
		}
		for (k = n - 1; k > 0; k--) {
			int j = rint_(0, k), t = ord[k];
			ord[k] = ord[j];
			ord[j] = t;
		}
		for (k = 0; k < n; k++) {
			st[ord[k]] = w;
			w *= d[ord[k]];
		}
		sh.n = sd.n = 0;
		{
			int a1 = tuple_open(&sh, &e), a2 = tuple_open(&sd, &e);
			for (k = 0; k < n; k++) {
				tuple_push(&sh, d[k], &e);
				tuple_push(&sd, st[k], &e);
			}
			tuple_close(&sh, a1);
			tuple_close(&sd, a2);
		}
		assert_int_equal(cute_make(&l, &sh, &sd, &e), 0);
		if (lego_from_cute(&g, &l, &e) < 0)
			fail_msg("from_cute: %s", e.msg);
		for (a = 0; a < w; a++) {
			int64_t r = a;
			for (k = 0; k < n; k++) {   /* colexicographic, as CuTe's 1-D index */
				x[k] = r % d[k];
				r /= d[k];
			}
			assert_int_equal(lego_apply(&g, x, &f, &e), 0);
			assert_int_equal(cute_eval_idx(&l, a, &v, &e), 0);
			assert_int_equal(f, v);
		}
		assert_int_equal(lego_to_cute(&g, &back, &e), 0);
		assert_int_equal(cute_same_function(&l, &back, &same, &where, &e), 0);
		assert_true(same);
	}
}

static void
test_cute_examples(void **state)
{
	Layout l, c;
	Lego g;
	Buf b;
	Err e;

	make_fig6();
	/* Figure 6's B alone is the tiled CuTe layout of Table I */
	{
		int64_t d6[2] = { 6, 6 };
		Lego bo = group(2, d6, &fig_b, NULL);
		assert_int_equal(lego_to_cute(&bo, &c, &e), 0);
		buf_init(&b);
		cute_print(&b, &c);
		assert_string_equal(b.s, "((3,2),(3,2)):((3,18),(1,9))");
		buf_free(&b);
	}
	assert_int_equal(lego_to_cute(&fig6, &c, &e), -1);
	assert_non_null(strstr(e.msg, "antidiagonal\") is not affine"));
	assert_int_equal(cute_parse("(4,2):(1,4)", &l, &e), 0);
	assert_int_equal(lego_from_cute(&g, &l, &e), 0);
	assert_string_equal(str(&g), "lego.GroupBy({4,2}, lego.OrderBy(lego.Col(4,2)))");
	assert_int_equal(cute_parse("((2,2),4):((1,8),2)", &l, &e), 0);
	assert_int_equal(lego_from_cute(&g, &l, &e), 0);
	assert_string_equal(str(&g), "lego.GroupBy({2,2,4}, lego.OrderBy(lego.RegP({2,2,4}, {1,2,0})))");
	assert_int_equal(cute_parse("(4,2):(2,4)", &l, &e), 0);
	assert_int_equal(lego_from_cute(&g, &l, &e), -1);
	assert_non_null(strstr(e.msg, "not compact"));
	assert_int_equal(cute_parse("(4,2):(0,1)", &l, &e), 0);
	assert_int_equal(lego_from_cute(&g, &l, &e), -1);
}

static void
test_scene(void **state)
{
	Scene s;
	Buf b;
	Err e;
	VizOpts o;
	int64_t d2[2] = { 2, 2 }, d3[2] = { 3, 3 };
	int tr[2] = { 1, 0 };
	Lego t = regp(2, d2, tr), r = genp(2, d3, LEGO_GEN_REVERSE), oo = order2(&t, &r);
	int64_t d6[2] = { 6, 6 };
	Lego g = group(2, d6, &oo, NULL);

	viz_opts_default(&o);
	assert_int_equal(lego_scene(&s, &g, &o, &e), 0);
	assert_int_equal(s.ngrid, 2);
	assert_int_equal(s.grid[0].prow, 0);
	assert_int_equal(s.grid[1].pcol, 1);
	/* logical cell (2,5) holds physical 18; physical cell 18 = (3,0) holds (2,5) */
	assert_string_equal(scene_cell(&s.grid[0], 2, 5)->line[0], "18");
	assert_string_equal(scene_cell(&s.grid[1], 3, 0)->line[0], "2,5");
	assert_int_equal(scene_cell(&s.grid[0], 2, 5)->color, scene_cell(&s.grid[1], 3, 0)->color);
	buf_init(&b);
	assert_int_equal(term_render(&b, &s, &o, &e), 0);
	assert_non_null(strstr(b.s, "logical view"));
	assert_non_null(strstr(b.s, "physical view"));
	buf_free(&b);
	scene_free(&s);
}


/* Hostile values into every constructor and evaluator: errors, never a crash
** (the sanitizer build checks the memory side). */
static void
test_hostile(void **state)
{
	static const int64_t weird[] = { 0, 1, 2, 3, 4, 8, -1, -7, (int64_t)1 << 31, (int64_t)1 << 40,
	                                 INT64_MAX, INT64_MIN, 17 };
	int it, ok = 0, bad = 0;

	for (it = 0; it < 3000; it++) {
		int64_t d[LEGO_DIMS + 2], x[LEGO_DIMS + 2], f;
		int p[LEGO_DIMS + 2], n = rint_(-1, LEGO_DIMS + 1), k, rc;
		Lego a, b, c;
		const Lego *ptr[3];
		Err e;

		for (k = 0; k < LEGO_DIMS + 2; k++) {
			d[k] = weird[rint_(0, (int)(sizeof weird / sizeof weird[0]) - 1)];
			p[k] = rint_(-2, n + 1);
			x[k] = weird[rint_(0, (int)(sizeof weird / sizeof weird[0]) - 1)];
		}
		switch (rint_(0, 5)) {
		case 0: rc = lego_regp(&a, d, n, p, &e); break;
		case 1: rc = lego_genp(&a, d, n, rint_(0, 5), (uint32_t)rnd(), &e); break;
		case 2: rc = lego_tileby(&a, d, rint_(-1, 6), rint_(-1, 6), &e); break;
		case 3: rc = lego_tileorderby(&a, d, rint_(-1, 6), rint_(-1, 6), &e); break;
		case 4: rc = lego_row(&a, d, n, &e); break;
		default: rc = lego_col(&a, d, n, &e); break;
		}
		if (rc < 0) {
			bad++;
			assert_true(strlen(e.msg) > 0);
			continue;
		}
		ok++;
		ptr[0] = ptr[1] = ptr[2] = &a;
		if (lego_orderby(&b, ptr, rint_(-1, 3), &e) < 0)
			b = a;
		if (lego_groupby(&c, d, n, p, rint_(-1, 4), ptr, rint_(0, 3), &e) < 0)
			c = b;
		if (rint_(0, 1))
			lego_expandby(&c, &c, d, rint_(-1, 4), rint_(0, 1) ? d + 1 : NULL, &e);
		lego_apply(&c, x, &f, &e);
		lego_inv(&c, x[0], x, &e);
		lego_check(&c, 4096, &e);
		{
			Layout l;
			Buf bb;
			buf_init(&bb);
			lego_print(&bb, &c);
			buf_free(&bb);
			lego_to_cute(&c, &l, &e);
		}
	}
	assert_true(ok > 0 && bad > 0);
}


int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figure6),
		cmocka_unit_test(test_figure2),
		cmocka_unit_test(test_figure7_antidiagonal),
		cmocka_unit_test(test_nw),
		cmocka_unit_test(test_lud),
		cmocka_unit_test(test_bricks),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_builtins),
		cmocka_unit_test(test_user_genp),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_cute_examples),
		cmocka_unit_test(test_scene),
		cmocka_unit_test_setup(test_hostile, seed_setup),
		cmocka_unit_test_setup(test_prop_bijection, seed_setup),
		cmocka_unit_test_setup(test_prop_reference, seed_setup),
		cmocka_unit_test_setup(test_prop_to_cute, seed_setup),
		cmocka_unit_test_setup(test_prop_from_cute, seed_setup),
	};

	return cmocka_run_group_tests_name("lego", tests, NULL, NULL);
}

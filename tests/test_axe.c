/* test_axe.c - Axe layouts: the paper's worked examples and every operator against brute-force enumeration. */
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

static AxeLayout
A(const char *s)
{
	AxeLayout l;
	Err e;

	if (axe_parse(s, &l, &e) < 0)
		fail_msg("parse %s: %s", s, e.msg);
	return l;
}

static AxeShape
SH(int n, ...)
{
	AxeShape s;
	va_list ap;
	int i;

	va_start(ap, n);
	s.n = n;
	for (i = 0; i < n; i++)
		s.v[i] = va_arg(ap, int64_t);
	va_end(ap);
	return s;
}

static char *
str(const AxeLayout *l)
{
	static char out[8][1024];
	static int k;
	Buf b;

	buf_init(&b);
	axe_print(&b, l);
	k = (k + 1) % 8;
	snprintf(out[k], sizeof out[k], "%s", b.s);
	buf_free(&b);
	return out[k];
}

/*
** The oracle: the definition of the induced map written out again, with
** nothing from axe.c. A coordinate is kept as text "axis=v ..." over the
** axes with nonzero values in name order, so that equal points are equal
** strings; an element's image is the sorted set of those strings.
*/
enum { MAXPT = 4096, PTLEN = 160 };

typedef struct Img {
	int n;
	char pt[MAXPT][PTLEN];
} Img;

typedef struct Pt {
	int n;
	char ax[32][AXE_NAME];
	int64_t v[32];
} Pt;

static void
pt_add(Pt *p, const char *ax, int64_t v)
{
	int i;

	for (i = 0; i < p->n; i++)
		if (strcmp(p->ax[i], ax) == 0) {
			p->v[i] += v;
			return;
		}
	snprintf(p->ax[p->n], AXE_NAME, "%s", ax);
	p->v[p->n++] = v;
}

static int
cmpstr(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void
pt_text(const Pt *p, char *out)
{
	int idx[32], i, j, n = 0, len = 0;

	for (i = 0; i < p->n; i++)
		if (p->v[i])
			idx[n++] = i;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(p->ax[idx[j - 1]], p->ax[idx[j]]) > 0; j--) {
			int t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	out[0] = 0;
	for (i = 0; i < n; i++)
		len += snprintf(out + len, PTLEN - len, "%s=%lld ", p->ax[idx[i]], (long long)p->v[idx[i]]);
}

/* The image of x, optionally scaled per axis by span (from the layout sp) and shifted. */
static void
image(const AxeLayout *l, int64_t x, Img *img)
{
	int64_t nrep = 1, j, y, d;
	int i, k;

	for (i = 0; i < l->nr; i++)
		nrep *= l->r[i].e;
	assert_true(nrep <= MAXPT);
	img->n = 0;
	for (j = 0; j < nrep; j++) {
		Pt p;
		p.n = 0;
		y = x;
		for (i = l->nd - 1; i >= 0; i--) {
			d = y % l->d[i].e;
			y /= l->d[i].e;
			pt_add(&p, l->d[i].axis, d * l->d[i].s);
		}
		y = j;
		for (i = l->nr - 1; i >= 0; i--) {
			d = y % l->r[i].e;
			y /= l->r[i].e;
			pt_add(&p, l->r[i].axis, d * l->r[i].s);
		}
		for (i = 0; i < l->no; i++)
			pt_add(&p, l->o[i].axis, l->o[i].v);
		pt_text(&p, img->pt[img->n++]);
	}
	qsort(img->pt, (size_t)img->n, PTLEN, cmpstr);
	for (i = 0, k = 0; i < img->n; i++)
		if (k == 0 || strcmp(img->pt[k - 1], img->pt[i]) != 0)
			memmove(img->pt[k++], img->pt[i], PTLEN);
	img->n = k;
}

static int
img_eq(const Img *a, const Img *b)
{
	int i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->pt[i], b->pt[i]) != 0)
			return 0;
	return 1;
}

static int64_t
shape_prod(const AxeShape *s)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < s->n; i++)
		n *= s->v[i];
	return n;
}

static int64_t
osize(const AxeLayout *l)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < l->nd; i++)
		n *= l->d[i].e;
	return n;
}

/* Whether some point of img has value v on axis (absent axes are 0). */
static int
img_has(const Img *img, const char *axis, int64_t v)
{
	int j;

	for (j = 0; j < img->n; j++) {
		char buf[PTLEN], *tok, *save;
		int64_t got = 0;
		snprintf(buf, sizeof buf, "%s", img->pt[j]);
		for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			char name[AXE_NAME];
			long long w;
			if (sscanf(tok, "%15[^=]=%lld", name, &w) == 2 && strcmp(name, axis) == 0)
				got = w;
		}
		if (got == v)
			return 1;
	}
	return 0;
}

/* The first element where the maps differ, or -1. */
static int64_t
map_diff(const AxeLayout *a, const AxeLayout *b)
{
	static Img ia, ib;
	int64_t x;

	if (osize(a) != osize(b))
		return 0;
	for (x = 0; x < osize(a); x++) {
		image(a, x, &ia);
		image(b, x, &ib);
		if (!img_eq(&ia, &ib))
			return x;
	}
	return -1;
}

/* The oracle span: max - min + 1 over every coordinate of every element. */
static int64_t
ospan(const AxeLayout *l, const char *axis)
{
	int64_t lo = 0, hi = 0, x, j, nrep = axe_nreplicas(l);
	int first = 1, i;

	for (x = 0; x < osize(l); x++)
		for (j = 0; j < nrep; j++) {
			int64_t v = 0, y = x, r = j;
			for (i = l->nd - 1; i >= 0; i--) {
				if (strcmp(l->d[i].axis, axis) == 0)
					v += (y % l->d[i].e) * l->d[i].s;
				y /= l->d[i].e;
			}
			for (i = l->nr - 1; i >= 0; i--) {
				if (strcmp(l->r[i].axis, axis) == 0)
					v += (r % l->r[i].e) * l->r[i].s;
				r /= l->r[i].e;
			}
			if (first || v < lo)
				lo = v;
			if (first || v > hi)
				hi = v;
			first = 0;
		}
	return hi - lo + 1;
}

/*
** Worked examples
*/
static void
test_notation(void **state)
{
	static const char *const ok[][2] = {
		{ "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp",
		  "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp" },
		{ "S[8:4@laneid]", "S[8:4@laneid]" },
		{ "S[4, 8]", "S[(4,8):(8,1)]" },
		{ "S[(4,8)]", "S[(4,8):(8,1)]" },
		{ "  S [ ( 2 , 3 ) : ( -1 @ m , 2@warp ) ] + 3 + 2@m ", "S[(2,3):(-1,2@warp)] + 5" },
		{ "S[2:1] + R[(2,3):(1@lane,4@warp)] - 2@warp + 7", "S[2:1] + R[(2,3):(1@lane,4@warp)] + -2@warp + 7" },
		{ "5@warp + S[2:1]", "S[2:1] + 5@warp" },
		{ "S[2:1] + 1@warp + -1@warp", "S[2:1]" },
	};
	static const char *const bad[] = {
		"", "S", "S[", "S[2:0]", "S[0:1]", "S[(2,2):(1)]", "S[2:1] + S[2:1]", "R[2:1]",
		"S[2:1] + R[2:1] + R[2:1]", "S[2:1@]", "S[2:1@1x]", "S[2:1] +", "S[2:1] 3",
		"S[99999999999999999999:1]", "S[(1048576,1048576,1048576,4):(1,1,1,1)]",
		"S[2:1@abcdefghijklmnopq]", "S[2@lane:1]", "S[2:1152921504606846976]",
	};
	size_t i;
	AxeLayout l;
	Err e;

	(void)state;
	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		l = A(ok[i][0]);
		assert_string_equal(str(&l), ok[i][1]);
		l = A(str(&l));
		assert_string_equal(str(&l), ok[i][1]);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (axe_parse(bad[i], &l, &e) == 0)
			fail_msg("parsed %s as %s", bad[i], str(&l));
		assert_non_null(strstr(e.msg, "axe.layout"));
	}
}

/* Section 2.2: the 8x16 tensor-core tile over 2 warps, replicated and offset. */
static void
test_tensor_core_tile(void **state)
{
	AxeLayout l = A("S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp");
	AxeShape sh = SH(2, (int64_t)8, (int64_t)16);
	int64_t crd[2] = { 3, 9 }, x, xs[256], n;
	AxeCoord c[4], q;
	int k, w;
	Err e;

	(void)state;
	assert_int_equal(axe_size(&l), 128);
	assert_int_equal(axe_flatten(&sh, crd, &x, &e), 0);
	assert_int_equal(axe_apply(&l, x, c, 4, &k, &e), 0);
	assert_int_equal(k, 2);
	assert_int_equal(c[0].ax.n, 3);
	assert_string_equal(c[0].ax.name[0], "lane");
	assert_string_equal(c[0].ax.name[1], "warp");
	assert_string_equal(c[0].ax.name[2], "reg");
	assert_int_equal(c[0].v[0], 12);
	assert_int_equal(c[0].v[1], 6);
	assert_int_equal(c[0].v[2], 1);
	assert_int_equal(c[1].v[1], 10);
	/* warps 5, 6, 9, 10 hold the tile, 64 elements each */
	q.ax.n = 1;
	strcpy(q.ax.name[0], "warp");
	for (w = 0; w < 16; w++) {
		q.v[0] = w;
		assert_int_equal(axe_find(&l, &q, xs, NULL, 256, &n, &e), 0);
		assert_int_equal(n, (w == 5 || w == 6 || w == 9 || w == 10) ? 64 : 0);
	}
	/* which elements does warp 6, lane 12 hold: (3,8..9) and (3,12..13)? no: lanes 12..15 are rows 3 */
	q.ax.n = 2;
	strcpy(q.ax.name[1], "lane");
	q.v[0] = 6;
	q.v[1] = 12;
	assert_int_equal(axe_find(&l, &q, xs, NULL, 256, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_int_equal(xs[0], 3 * 16 + 8);
	assert_int_equal(xs[1], 3 * 16 + 9);
	assert_int_equal(axe_span(&l, "warp"), 6);
	assert_int_equal(axe_span(&l, "lane"), 32);
	assert_int_equal(axe_span(&l, "reg"), 2);
	assert_int_equal(axe_span(&l, "m"), 1);
	assert_int_equal(axe_span_total(&l), 6 * 32 * 2);
}

/* Section 2.2: a 64x128 tensor on a 2x2 mesh, device id = 2*row + column on one gpuid axis. */
static void
test_mesh(void **state)
{
	AxeShape sh = SH(2, (int64_t)64, (int64_t)128);
	AxeMesh mesh = { 2, { "gpuid", "gpuid" }, { 2, 2 } };
	AxeMesh xy = { 2, { "gpuid_x", "gpuid_y" }, { 2, 2 } };
	int s0s1[2] = { 0, 1 }, s0r[2] = { 0, AXE_REPLICATE }, back[2], same;
	AxeLayout l, want, got;
	AxeCoord c[4];
	int64_t crd[2] = { 40, 100 }, x, where;
	int n;
	Err e;

	(void)state;
	assert_int_equal(axe_dtensor(&sh, &mesh, s0s1, &l, &e), 0);
	want = A("S[(2,32,2,64):(2@gpuid,64,1@gpuid,1)]");
	assert_string_equal(str(&l), str(&want));
	assert_int_equal(axe_flatten(&sh, crd, &x, &e), 0);
	assert_int_equal(axe_apply(&l, x, c, 4, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].v[0], 3);                 /* gpuid 3: row 40 is in mesh row 1, column 100 in mesh column 1 */
	assert_int_equal(c[0].v[1], 8 * 64 + 36);       /* local (8, 36) */
	assert_int_equal(axe_to_dtensor(&l, &sh, &mesh, back, &e), 0);
	assert_int_equal(back[0], 0);
	assert_int_equal(back[1], 1);

	assert_int_equal(axe_dtensor(&sh, &mesh, s0r, &l, &e), 0);
	want = A("S[(2,32,128):(2@gpuid,128,1)] + R[2:1@gpuid]");
	assert_string_equal(str(&l), str(&want));
	assert_int_equal(axe_apply(&l, x, c, 4, &n, &e), 0);
	assert_int_equal(n, 2);                         /* devices 2 and 3 hold row 40 */
	assert_int_equal(c[0].v[0], 2);
	assert_int_equal(c[1].v[0], 3);
	assert_int_equal(c[0].v[1], 8 * 128 + 100);
	assert_int_equal(axe_to_dtensor(&l, &sh, &mesh, back, &e), 0);
	assert_int_equal(back[0], 0);
	assert_int_equal(back[1], AXE_REPLICATE);

	/* two named mesh axes, as the paper's gpuid_x (rows) and gpuid_y (columns) */
	assert_int_equal(axe_dtensor(&sh, &xy, s0s1, &l, &e), 0);
	assert_string_equal(str(&l), "S[(2,32,2,64):(1@gpuid_x,64,1@gpuid_y,1)]");
	/* the canonical form of a sharded-then-replicated layout is still recognized */
	got = A("S[(2,4096):(2@gpuid,1)] + R[2:1@gpuid]");
	assert_int_equal(axe_equivalent(&got, &want, &same, &where, &e), 0);
	assert_true(same);
	assert_int_equal(axe_to_dtensor(&got, &sh, &mesh, back, &e), 0);
	assert_int_equal(back[1], AXE_REPLICATE);
	got = A("S[(2,4096):(1@gpuid,1)]");
	assert_int_equal(axe_to_dtensor(&got, &sh, &mesh, back, &e), -1);
}

/* Section 2.2: Trainium SBUF (partitions P, free F) and Blackwell TMEM (TLane x TCol). */
static void
test_accelerator_memories(void **state)
{
	AxeLayout sbuf = A("S[(2,128,256):(256@F,1@P,1@F)]");
	AxeLayout tmem = A("S[(2,128,256):(256@TCol,1@TLane,1@TCol)]");
	AxeShape sh = SH(2, (int64_t)256, (int64_t)256);
	AxeCoord c[1];
	int64_t crd[2] = { 130, 7 }, x;
	int n;
	Err e;

	(void)state;
	assert_int_equal(axe_span(&sbuf, "P"), 128);
	assert_int_equal(axe_span(&sbuf, "F"), 512);
	assert_int_equal(axe_axis_kind("P"), AXE_MEMORY);
	assert_int_equal(axe_span(&tmem, "TLane"), 128);
	assert_int_equal(axe_span(&tmem, "TCol"), 512);   /* 256 columns per group, two groups */
	assert_int_equal(axe_flatten(&sh, crd, &x, &e), 0);
	assert_int_equal(axe_apply(&tmem, x, c, 1, &n, &e), 0);
	assert_string_equal(c[0].ax.name[0], "TCol");
	assert_int_equal(c[0].v[0], 256 + 7);
	assert_int_equal(c[0].v[1], 2);
}

/* Appendix F: the direct sum is contiguous, and no tiling reaches it. */
static void
test_direct_sum_example(void **state)
{
	AxeLayout blk = A("S[(2,2):(4,1)]"), quad = A("S[(2,2):(8,2)]"), ds, c, row = A("S[(4,4):(4,1)]");
	AxeShape s2 = SH(2, (int64_t)2, (int64_t)2), s4 = SH(2, (int64_t)4, (int64_t)4);
	int64_t where;
	int same;
	Err e;

	(void)state;
	assert_int_equal(axe_direct_sum(&quad, &s2, &blk, &s2, &ds, &e), 0);
	assert_string_equal(str(&ds), "S[(2,2,2,2):(8,4,2,1)]");
	assert_int_equal(axe_canonicalize(&ds, &c, NULL, &e), 0);
	assert_string_equal(str(&c), "S[16:1]");
	assert_int_equal(axe_equivalent(&ds, &row, &same, &where, &e), 0);
	assert_true(same);
	assert_int_equal(axe_span(&blk, "m"), 6);
	assert_int_equal(axe_tile_of(&row, &s4, &blk, &s2, &c, &where, &e), -1);
	assert_non_null(strstr(e.msg, "the tile at (0,2) starts at m=2, but tiles start at multiples of the atom's span 6"));
	/* a column-major 8x8 is no tile of a row-major 4x4: the first element that breaks the shift */
	{
		AxeLayout col = A("S[(8,8):(1,8)]");
		AxeShape s8 = SH(2, (int64_t)8, (int64_t)8);
		assert_int_equal(axe_tile_of(&col, &s8, &row, &s4, &c, &where, &e), -1);
		assert_non_null(strstr(e.msg, "element (0,1) maps to m=8 but the atom predicts m=1"));
	}
}

/* Appendix G: column-major 3x2 is no bit-linear map: L(1,1) != L(1,0) xor L(0,1). */
static void
test_non_bit_linear(void **state)
{
	AxeLayout l = A("S[(3,2):(1,3)]");
	AxeShape sh = SH(2, (int64_t)3, (int64_t)2);
	AxeCoord c[1];
	int64_t v[4], crd[2], x;
	int i, n;
	Err e;

	(void)state;
	for (i = 0; i < 4; i++) {
		crd[0] = i & 1;
		crd[1] = i >> 1;
		assert_int_equal(axe_flatten(&sh, crd, &x, &e), 0);
		assert_int_equal(axe_apply(&l, x, c, 1, &n, &e), 0);
		v[i] = c[0].v[0];
	}
	assert_int_equal(v[1], 1);
	assert_int_equal(v[2], 3);
	assert_int_equal(v[3], 4);
	assert_int_not_equal(v[3], v[1] ^ v[2]);
}

static void
test_operators_examples(void **state)
{
	AxeLayout l, g, t, c, s;
	AxeShape sh;
	int seps[AXE_RANK + 1], gc;
	int64_t begin[2], ext[2], where;
	Err e;

	(void)state;
	/* canonicalize: D0, D1, C0, C1, C2 */
	l = A("S[(1,4,2,3):(7@warp,2,1,5@lane)] + R[(1,2,3,2):(9,-3@lane,1@lane,2@lane)] + 0@warp");
	assert_int_equal(axe_canonicalize(&l, &c, &gc, &e), 0);
	assert_string_equal(str(&c), "S[(8,3):(1,5@lane)] + R[8:1@lane] + -3@lane");
	assert_int_equal(map_diff(&l, &c), -1);
	assert_int_equal(gc, 1);
	l = A("S[2:1] + R[(3,2):(2,5)]");
	assert_int_equal(axe_canonicalize(&l, &c, &gc, &e), 0);
	assert_int_equal(gc, 0);         /* 3 * 2 > 5, and 5 is no multiple of 2 */
	l = A("S[4:1] + R[(2,2):(4@warp,1@warp)]");
	assert_int_equal(axe_canonicalize(&l, &c, &gc, &e), 0);
	assert_string_equal(str(&c), "S[4:1] + R[(2,2):(1@warp,4@warp)]");
	assert_int_equal(gc, 1);
	/* group: split (e1*e2, s) -> (e1, e2*s), (e2, s) */
	l = A("S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)]");
	sh = SH(2, (int64_t)8, (int64_t)16);
	assert_int_equal(axe_group(&l, &sh, &g, seps, &e), 0);
	assert_int_equal(seps[1], 1);
	sh = SH(3, (int64_t)4, (int64_t)4, (int64_t)8);
	assert_int_equal(axe_group(&l, &sh, &g, seps, &e), 0);
	assert_string_equal(str(&g), "S[(4,2,2,4,2):(8@lane,4@lane,1@warp,1@lane,1@reg)]");
	sh = SH(2, (int64_t)3, (int64_t)4);
	l = A("S[12:1]");
	assert_int_equal(axe_group(&l, &sh, &g, seps, &e), 0);
	assert_string_equal(str(&g), "S[(3,4):(4,1)]");
	l = A("S[(2,6):(6,1)]");
	sh = SH(2, (int64_t)3, (int64_t)4);
	assert_int_equal(axe_canonicalize(&l, &c, NULL, &e), 0);
	l = A("S[(2,6):(1@lane,1)]");
	assert_int_equal(axe_group(&l, &sh, &g, seps, &e), -1);
	assert_non_null(strstr(e.msg, "mode 0"));
	/* tile: a 2x2 grid of row-major 4x4 tiles (Section 3.3) */
	{
		AxeLayout in = A("S[(4,4):(4,1)]"), out = A("S[(2,2):(2,1)]");
		AxeShape s2 = SH(2, (int64_t)2, (int64_t)2), s4 = SH(2, (int64_t)4, (int64_t)4);
		assert_int_equal(axe_tile(&out, &s2, &in, &s4, &t, &e), 0);
		assert_string_equal(str(&t), "S[(2,4,2,4):(32,4,16,1)]");
		assert_int_equal(axe_tile_of(&t, &(AxeShape){ 2, { 8, 8 } }, &in, &s4, &c, &where, &e), 0);
		assert_string_equal(str(&c), "S[(2,2):(2,1)]");
	}
	/* slice: no-wrap and symmetric one-wrap */
	l = A("S[(4,8):(8@lane,1)]");
	sh = SH(2, (int64_t)4, (int64_t)8);
	begin[0] = 1; ext[0] = 2; begin[1] = 2; ext[1] = 4;
	assert_int_equal(axe_slice(&l, &sh, begin, ext, &s, &e), 0);
	assert_string_equal(str(&s), "S[(2,4):(8@lane,1)] + 8@lane + 2");
	l = A("S[(4,4):(16,1)]");
	sh = SH(1, (int64_t)16);
	begin[0] = 2; ext[0] = 4;        /* elements 2..5 live at 2, 3, 16, 17 */
	assert_int_equal(axe_slice(&l, &sh, begin, ext, &s, &e), 0);
	assert_string_equal(str(&s), "S[(2,2):(14,1)] + 2");
	begin[0] = 1; ext[0] = 4;
	assert_int_equal(axe_slice(&l, &sh, begin, ext, &s, &e), -1);
	assert_non_null(strstr(e.msg, "one-wrap"));
}

static void
test_cute_conversion(void **state)
{
	static const char *const cl[] = {
		"(4,2):(1,4)", "((2,2),4):((1,4),2)", "(3,(2,4)):(8,(1,2))", "8:3", "(2,3,4):(12,4,1)",
	};
	size_t i;
	Layout c, back;
	AxeLayout a;
	AxeShape sh;
	int64_t x, v, crd[AXE_RANK];
	Err e;

	(void)state;
	for (i = 0; i < sizeof cl / sizeof cl[0]; i++) {
		assert_int_equal(cute_parse(cl[i], &c, &e), 0);
		assert_int_equal(axe_from_cute(&c, &a, &sh, &e), 0);
		for (x = 0; x < axe_size(&a); x++) {
			Tuple t;
			int k;
			AxeCoord pt[1];
			int n;
			axe_unflatten(&sh, x, crd);
			t.n = 0;
			if (sh.n > 1) {
				int at = tuple_open(&t, &e);
				for (k = 0; k < sh.n; k++)
					tuple_push(&t, crd[k], &e);
				tuple_close(&t, at);
			} else {
				tuple_push(&t, crd[0], &e);
			}
			assert_int_equal(cute_eval(&c, &t, &v, &e), 0);
			assert_int_equal(axe_apply(&a, x, pt, 1, &n, &e), 0);
			assert_int_equal(pt[0].ax.n ? pt[0].v[0] : 0, v);
		}
		assert_int_equal(axe_to_cute(&a, &sh, &back, &e), 0);
		{
			int same;
			int64_t where;
			assert_int_equal(cute_same_function(&c, &back, &same, &where, &e), 0);
			assert_true(same);
		}
	}
	a = A("S[4:1@lane]");
	sh = SH(1, (int64_t)4);
	assert_int_equal(axe_to_cute(&a, &sh, &back, &e), -1);
	assert_int_equal(cute_parse("(4,2):(0,1)", &c, &e), 0);
	assert_int_equal(axe_from_cute(&c, &a, &sh, &e), -1);
}

static void
test_mma_conversion(void **state)
{
	MmaAtom atom;
	AxeLayout a;
	Err e;

	(void)state;
	assert_int_equal(cute_mma_atom("SM80_16x8x16_F32F16F16F32_TN", &atom, &e), 0);
	assert_int_equal(axe_from_tv(&atom.c, &atom.thr_id, 16, 8, 0, &a, &e), 0);
	/* rows 8*r1 + r0, columns 2*c1 + c0: lane = 4*r0 + c1 merges into one iter */
	assert_string_equal(str(&a), "S[(2,32,2):(2@reg,1@lane,1@reg)]");
	assert_int_equal(axe_from_tv(&atom.a, &atom.thr_id, 16, 16, 1, &a, &e), 0);
	assert_string_equal(str(&a), "S[(2,8,2,4,2):(2@reg,4@lane,4@reg,1@lane,1@reg)]");
	/* SM70 quad pairs: thread ids are not contiguous and each element has one holder */
	assert_int_equal(cute_mma_atom("SM70_8x8x4_F32F16F16F32_TN", &atom, &e), 0);
	if (axe_from_tv(&atom.c, &atom.thr_id, 8, 8, 0, &a, &e) < 0)
		fail_msg("%s", e.msg);
	if (axe_from_tv(&atom.a, &atom.thr_id, 8, 4, 0, &a, &e) < 0)
		fail_msg("%s", e.msg);
}

static void
test_vector_width(void **state)
{
	AxeLayout g = A("S[(8,16):(64,1)]"), r = A("S[(8,4,4):(4@lane,1@lane,1@reg)]");
	AxeLayout r2 = A("S[(8,16):(4@lane,1@reg)]"), bad = A("S[(8,16):(16,1)] + 1");
	int64_t w;
	Err e;

	(void)state;
	assert_int_equal(axe_vector_width(&g, &r, 8, &w, &e), 0);
	assert_int_equal(w, 4);
	assert_int_equal(axe_vector_width(&g, &r2, 8, &w, &e), 0);
	assert_int_equal(w, 8);
	assert_int_equal(axe_vector_width(&bad, &r, 8, &w, &e), 0);
	assert_int_equal(w, 1);   /* misaligned by the offset */
}

/* Section 3.2 and 3.4: scopes, thread subsets and the TMA dispatch. */
static void
test_scopes_tma(void **state)
{
	AxeLayout p, g = A("S[(256,512):(512,1)]"), sm = A("S[(2,64,64):(8192,64,1)]");
	AxeShape gs = SH(2, (int64_t)256, (int64_t)512), ss = SH(2, (int64_t)128, (int64_t)64);
	AxeCoord q;
	AxeTma t;
	int64_t xs[1], n;
	Err e;

	(void)state;
	assert_int_equal(axe_warps(0, 4, &p, &e), 0);          /* producers: warps 0-3 of 8 */
	assert_string_equal(str(&p), "S[(4,32):(1@warp,1@lane)]");
	q.ax.n = 1;
	strcpy(q.ax.name[0], "warp");
	q.v[0] = 3;
	assert_int_equal(axe_find(&p, &q, xs, NULL, 1, &n, &e), 0);
	assert_int_equal(n, 32);
	q.v[0] = 4;
	assert_int_equal(axe_find(&p, &q, xs, NULL, 1, &n, &e), 0);
	assert_int_equal(n, 0);
	assert_int_equal(axe_warps(4, 8, &p, &e), 0);
	assert_string_equal(str(&p), "S[(4,32):(1@warp,1@lane)] + 4@warp");
	assert_int_equal(axe_scope("cta", 256, &p, &e), 0);
	assert_string_equal(str(&p), "S[(8,32):(1@warp,1@lane)]");
	assert_int_equal(axe_scope("cta", 100, &p, &e), -1);
	/* a 128x64 fp16 tile as two row-major 64-row halves 16 KB apart: tiles of the 128B atom (8 x 64) */
	assert_int_equal(axe_tma(&g, &gs, &sm, &ss, 2, 128, &t, &e), 0);
	assert_int_equal(t.rank, 2);
	assert_int_equal(t.global_dim[0], 512);
	assert_int_equal(t.global_dim[1], 256);
	assert_int_equal(t.global_stride[0], 1024);
	assert_int_equal(t.box_dim[0], 64);
	assert_int_equal(t.box_dim[1], 8);
	assert_string_equal(str(&t.outer), "S[(2,8):(16,1)]");
	assert_int_equal(t.outer_shape.v[0], 16);
	/* column-major shared memory is no tile of the atom; 64B swizzle takes 32 columns */
	sm = A("S[(64,64):(1,64)]");
	ss = SH(2, (int64_t)64, (int64_t)64);
	assert_int_equal(axe_tma(&g, &gs, &sm, &ss, 2, 128, &t, &e), -1);
	assert_non_null(strstr(e.msg, "no tile of the 128-byte swizzle atom"));
	sm = A("S[(64,2,32):(32,2048,1)]");   /* column halves stored as two 64x32 blocks */
	assert_int_equal(axe_tma(&g, &gs, &sm, &ss, 2, 64, &t, &e), 0);
	assert_int_equal(t.box_dim[0], 32);
	assert_string_equal(str(&t.outer), "S[(8,2):(1,8)]");
	g = A("S[(256,512):(1,256)]");
	assert_int_equal(axe_tma(&g, &gs, &sm, &ss, 2, 64, &t, &e), -1);
	assert_non_null(strstr(e.msg, "innermost"));
}

/* Appendix H: A[256,256], B[256,512] in SBUF with K split over two partition tiles, C in PSUM. */
static void
test_trn_matmul(void **state)
{
	AxeLayout a = A("S[(2,128,256):(256@F,1@P,1@F)]"), b = A("S[(2,128,512):(512@F,1@P,1@F)]");
	AxeLayout c = A("S[(2,128,512):(512@F,1@P,1@F)]"), bad = A("S[(128,64):(64@F,1@P)]");
	AxeMatmul r;
	Err e;

	(void)state;
	assert_int_equal(axe_trn_matmul(&a, 256, 256, &b, 512, &c, 128, 512, 128, &r, &e), 0);
	assert_int_equal(r.m, 128);
	assert_int_equal(r.n, 512);
	assert_int_equal(r.k, 128);
	assert_int_equal(r.k_loops.n, 1);
	assert_int_equal(r.k_loops.v[0], 2);
	assert_int_equal(r.m_loops.n, 1);
	assert_int_equal(r.n_loops.n, 0);
	/* a smaller N limit splits the N run: its outer half becomes a loop */
	assert_int_equal(axe_trn_matmul(&a, 256, 256, &b, 512, &c, 128, 256, 128, &r, &e), 0);
	assert_int_equal(r.n, 256);
	assert_int_equal(r.n_loops.n, 1);
	assert_int_equal(r.n_loops.v[0], 2);
	/* K on the free axis of A: no instruction */
	c = A("S[(64,64):(1@P,1@F)]");
	b = A("S[(128,64):(1@P,1@F)]");
	assert_int_equal(axe_trn_matmul(&bad, 128, 64, &b, 64, &c, 128, 512, 128, &r, &e), -1);
	assert_non_null(strstr(e.msg, "no legal instruction"));
}

/*
** Property tests: random layouts, every operator against the oracle.
*/

/* A uniform integer in [0, n). */
static int64_t
rndn(int64_t n)
{
	return (int64_t)(rnd() % (uint64_t)n);
}

static const char *const axes[] = { "m", "lane", "warp" };

static AxeIter
riter(int maxe)
{
	AxeIter it;

	it.e = 1 + rndn(maxe);
	it.s = (1 + rndn(6)) * (rndn(5) == 0 ? -1 : 1);
	snprintf(it.axis, AXE_NAME, "%s", axes[rndn(3)]);
	return it;
}

static AxeLayout
rlayout(int maxd, int maxr)
{
	AxeLayout l;
	Err e;
	int i;

	memset(&l, 0, sizeof l);
	l.nd = 1 + (int)rndn(maxd);
	for (i = 0; i < l.nd; i++)
		l.d[i] = riter(4);
	l.nr = (int)rndn(maxr + 1);
	for (i = 0; i < l.nr; i++)
		l.r[i] = riter(3);
	if (rndn(2)) {
		l.no = 1;
		snprintf(l.o[0].axis, AXE_NAME, "%s", axes[rndn(3)]);
		l.o[0].v = rndn(9) - 4;
		if (!l.o[0].v)
			l.no = 0;
	}
	if (axe_check(&l, &e) < 0)
		fail_msg("random layout invalid: %s", e.msg);
	return l;
}

/* A shape the layout admits: consecutive iters multiplied together, ones sprinkled in. */
static AxeShape
rshape(const AxeLayout *l, int maxrank)
{
	AxeShape s;
	int i;

	s.n = 1;
	s.v[0] = 1;
	for (i = 0; i < l->nd; i++) {
		if (i > 0 && s.n < maxrank && rndn(2))
			s.v[s.n++] = 1;
		s.v[s.n - 1] *= l->d[i].e;
	}
	return s;
}

static void
test_prop_parse_canon_equiv(void **state)
{
	uint64_t seed = **(uint64_t **)state;
	int it, gc, same, i;
	int64_t where;
	Err e;

	for (it = 0; it < 400; it++) {
		AxeLayout l = rlayout(5, 3), p, c, c2, m;
		assert_int_equal(axe_parse(str(&l), &p, &e), 0);
		assert_string_equal(str(&p), str(&l));
		assert_int_equal(axe_canonicalize(&l, &c, &gc, &e), 0);
		if (map_diff(&l, &c) >= 0)
			fail_msg("canonicalize %s -> %s changes the map at %lld (seed %llu)", str(&l), str(&c),
			         (long long)map_diff(&l, &c), (unsigned long long)seed);
		assert_int_equal(axe_canonicalize(&c, &c2, NULL, &e), 0);
		assert_string_equal(str(&c), str(&c2));
		/* span: closed form against max - min + 1 */
		{
			int a;
			for (a = 0; a < 3; a++)
				if (axe_span(&l, axes[a]) != ospan(&l, axes[a]))
					fail_msg("span %s on %s: %lld, enumeration %lld (seed %llu)", str(&l), axes[a],
					         (long long)axe_span(&l, axes[a]), (long long)ospan(&l, axes[a]),
					         (unsigned long long)seed);
		}
		/* equivalence against a perturbed copy and a random one of the same size */
		m = l;
		if (rndn(2))
			m.d[rndn(m.nd)].s += 1 + rndn(2);
		for (i = 0; i < m.nd; i++)
			if (m.d[i].s == 0)
				m.d[i].s = 1;
		if (axe_equivalent(&l, &m, &same, &where, &e) < 0)
			fail_msg("equivalent %s %s: %s", str(&l), str(&m), e.msg);
		if (same != (map_diff(&l, &m) < 0))
			fail_msg("equivalent %s %s = %d, enumeration disagrees (seed %llu)", str(&l), str(&m), same,
			         (unsigned long long)seed);
		if (!same && where >= 0 && map_diff(&l, &m) != where)
			fail_msg("equivalent %s %s: first difference %lld, enumeration %lld (seed %llu)", str(&l),
			         str(&m), (long long)where, (long long)map_diff(&l, &m), (unsigned long long)seed);
		if (axe_equivalent(&l, &c, &same, &where, &e) < 0 || !same)
			fail_msg("%s not equivalent to its canonical form %s (seed %llu)", str(&l), str(&c),
			         (unsigned long long)seed);
		/* canonical forms under GC are unique (Theorem A.14) */
		{
			AxeLayout cm;
			int gm;
			assert_int_equal(axe_canonicalize(&m, &cm, &gm, &e), 0);
			if (gc && gm && map_diff(&l, &m) < 0 && strcmp(str(&c), str(&cm)) != 0)
				fail_msg("same map, GC holds, canonical forms %s and %s (seed %llu)", str(&c), str(&cm),
				         (unsigned long long)seed);
		}
	}
}

static void
test_prop_group_tile(void **state)
{
	uint64_t seed = **(uint64_t **)state;
	int it, seps[AXE_RANK + 1], i, k, tiles = 0, found = 0;
	Err e;

	for (it = 0; it < 300; it++) {
		AxeLayout a = rlayout(3, 1), b = rlayout(3, 1), g, t, c, ds;
		AxeShape sa = rshape(&a, 3), sb;
		int64_t x, where;
		static Img ia, ib, it2, want;

		/* group preserves the map and blocks multiply to the shape */
		assert_int_equal(axe_group(&a, &sa, &g, seps, &e), 0);
		if (map_diff(&a, &g) >= 0)
			fail_msg("group %s -> %s changes the map (seed %llu)", str(&a), str(&g), (unsigned long long)seed);
		for (i = 0; i < sa.n; i++) {
			int64_t p = 1;
			for (k = seps[i]; k < seps[i + 1]; k++)
				p *= g.d[k].e;
			assert_int_equal(p, sa.v[i]);
		}
		/* tile and direct sum against their definitions */
		sb.n = sa.n;
		{
			AxeShape s = rshape(&b, sa.n);
			for (i = 0; i < sb.n; i++)
				sb.v[i] = i < s.n ? s.v[i] : 1;
			for (i = sb.n; i < s.n; i++)
				sb.v[sb.n - 1] *= s.v[i];
		}
		if (axe_tile(&a, &sa, &b, &sb, &t, &e) < 0)
			fail_msg("tile %s %s: %s", str(&a), str(&b), e.msg);
		assert_int_equal(axe_direct_sum(&a, &sa, &b, &sb, &ds, &e), 0);
		tiles++;
		for (x = 0; x < axe_size(&t); x++) {
			int64_t crd[AXE_RANK], co[AXE_RANK], ci[AXE_RANK], xo, xi;
			int p, q, na;
			AxeShape st;
			st.n = sa.n;
			for (i = 0; i < sa.n; i++)
				st.v[i] = sa.v[i] * sb.v[i];
			axe_unflatten(&st, x, crd);
			for (i = 0; i < sa.n; i++) {
				co[i] = crd[i] / sb.v[i];
				ci[i] = crd[i] % sb.v[i];
			}
			axe_flatten(&sa, co, &xo, &e);
			axe_flatten(&sb, ci, &xi, &e);
			image(&a, xo, &ia);
			image(&b, xi, &ib);
			/* want = { a * span(b) + b' } */
			want.n = 0;
			for (p = 0; p < ia.n; p++)
				for (q = 0; q < ib.n; q++) {
					Pt pt;
					char buf[PTLEN], *tok, *save;
					pt.n = 0;
					snprintf(buf, sizeof buf, "%s", ia.pt[p]);
					for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
						char name[AXE_NAME];
						long long v;
						sscanf(tok, "%15[^=]=%lld", name, &v);
						pt_add(&pt, name, v * axe_span(&b, name));
					}
					snprintf(buf, sizeof buf, "%s", ib.pt[q]);
					for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
						char name[AXE_NAME];
						long long v;
						sscanf(tok, "%15[^=]=%lld", name, &v);
						pt_add(&pt, name, v);
					}
					pt_text(&pt, want.pt[want.n++]);
				}
			qsort(want.pt, (size_t)want.n, PTLEN, cmpstr);
			for (p = 0, na = 0; p < want.n; p++)
				if (na == 0 || strcmp(want.pt[na - 1], want.pt[p]) != 0)
					memmove(want.pt[na++], want.pt[p], PTLEN);
			want.n = na;
			image(&t, x, &it2);
			if (!img_eq(&it2, &want))
				fail_msg("tile %s %s -> %s wrong at %lld: %s vs %s (seed %llu)", str(&a), str(&b), str(&t),
				         (long long)x, it2.pt[0], want.pt[0], (unsigned long long)seed);
		}
		/* tile_of recovers an outer layout of every tile (when the atom has no replicas
		** that the outer layout could also produce) */
		if (b.nr == 0) {
			AxeShape st;
			st.n = sa.n;
			for (i = 0; i < sa.n; i++)
				st.v[i] = sa.v[i] * sb.v[i];
			if (axe_tile_of(&t, &st, &b, &sb, &c, &where, &e) == 0) {
				AxeLayout t2;
				found++;
				assert_int_equal(axe_tile(&c, &sa, &b, &sb, &t2, &e), 0);
				if (map_diff(&t2, &t) >= 0)
					fail_msg("tile_of %s by %s gave %s, which does not tile back (seed %llu)", str(&t),
					         str(&b), str(&c), (unsigned long long)seed);
			} else if (a.nr == 0) {
				fail_msg("tile_of: %s = tile(%s, %s) not recognized: %s (seed %llu)", str(&t), str(&a),
				         str(&b), e.msg, (unsigned long long)seed);
			} else if (strstr(e.msg, "maps to") || strstr(e.msg, "tiles start at")) {
				fail_msg("tile_of: %s = tile(%s, %s) refused by a necessary condition: %s (seed %llu)",
				         str(&t), str(&a), str(&b), e.msg, (unsigned long long)seed);
			}
		}
	}
	print_message("# group/tile: %d tiles checked, %d tile_of recoveries\n", tiles, found);
}

static void
test_prop_direct_sum_slice(void **state)
{
	uint64_t seed = **(uint64_t **)state;
	int it, i, ok = 0, refused = 0;
	Err e;

	for (it = 0; it < 400; it++) {
		AxeLayout l = rlayout(4, 1), s;
		AxeShape sh = rshape(&l, 3), sub;
		int64_t begin[AXE_RANK], ext[AXE_RANK], x;
		static Img ia, ib;

		sub.n = sh.n;
		for (i = 0; i < sh.n; i++) {
			begin[i] = rndn(sh.v[i]);
			ext[i] = 1 + rndn(sh.v[i] - begin[i]);
			sub.v[i] = ext[i];
		}
		if (axe_slice(&l, &sh, begin, ext, &s, &e) < 0) {
			refused++;
			assert_non_null(strstr(e.msg, "slice"));
			continue;
		}
		ok++;
		assert_int_equal(axe_size(&s), shape_prod(&sub));
		for (x = 0; x < axe_size(&s); x++) {
			int64_t crd[AXE_RANK], y;
			axe_unflatten(&sub, x, crd);
			for (i = 0; i < sh.n; i++)
				crd[i] += begin[i];
			axe_flatten(&sh, crd, &y, &e);
			image(&l, y, &ia);
			image(&s, x, &ib);
			if (!img_eq(&ia, &ib))
				fail_msg("slice of %s is %s: wrong at %lld (seed %llu)", str(&l), str(&s), (long long)x,
				         (unsigned long long)seed);
		}
	}
	print_message("# slice: %d sliced and checked, %d refused\n", ok, refused);
	for (it = 0; it < 200; it++) {
		AxeLayout a = rlayout(3, 1), b = rlayout(3, 1), ds;
		AxeShape sa = rshape(&a, 1), sb = rshape(&b, 1);
		int64_t x;
		static Img ia, ib, id;
		assert_int_equal(axe_direct_sum(&a, &sa, &b, &sb, &ds, &e), 0);
		for (x = 0; x < axe_size(&ds); x++) {
			int p, q, k, found;
			image(&a, x / sb.v[0], &ia);
			image(&b, x % sb.v[0], &ib);
			image(&ds, x, &id);
			for (p = 0; p < ia.n; p++)
				for (q = 0; q < ib.n; q++) {
					Pt pt;
					char buf[PTLEN * 2], *tok, *save, t[PTLEN];
					pt.n = 0;
					snprintf(buf, sizeof buf, "%s%s", ia.pt[p], ib.pt[q]);
					for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
						char name[AXE_NAME];
						long long v;
						sscanf(tok, "%15[^=]=%lld", name, &v);
						pt_add(&pt, name, v);
					}
					pt_text(&pt, t);
					for (k = 0, found = 0; k < id.n; k++)
						found |= strcmp(id.pt[k], t) == 0;
					if (!found)
						fail_msg("direct_sum %s %s = %s misses %s at %lld (seed %llu)", str(&a), str(&b),
						         str(&ds), t, (long long)x, (unsigned long long)seed);
				}
		}
	}
}

static void
test_prop_find_fit(void **state)
{
	uint64_t seed = **(uint64_t **)state;
	int it;
	Err e;

	for (it = 0; it < 200; it++) {
		AxeLayout l = rlayout(4, 2), f;
		AxeAxes ax;
		AxeCoord q, pts[64];
		int64_t xs[512], n, x, cnt, *rows[512];
		int nf[512], k, i;
		static int64_t store[512 * 64 * AXE_AXES];
		static Img im;

		if (axe_size(&l) > 512 || axe_nreplicas(&l) > 64)
			continue;
		axe_axes(&l, &ax);
		/* find: the oracle's count of elements with some coordinate matching */
		q.ax.n = 1;
		strcpy(q.ax.name[0], ax.name[rndn(ax.n)]);
		q.v[0] = rndn(5);
		assert_int_equal(axe_find(&l, &q, xs, NULL, 512, &n, &e), 0);
		for (x = 0, cnt = 0; x < axe_size(&l); x++) {
			image(&l, x, &im);
			cnt += img_has(&im, q.ax.name[0], q.v[0]);
		}
		if (cnt != n)
			fail_msg("find %s=%lld in %s: %lld, oracle %lld (seed %llu)", q.ax.name[0], (long long)q.v[0],
			         str(&l), (long long)n, (long long)cnt, (unsigned long long)seed);
		/* fit: the layout is recovered from its own enumeration (same map) */
		for (x = 0; x < axe_size(&l); x++) {
			assert_int_equal(axe_apply(&l, x, pts, 64, &k, &e), 0);
			rows[x] = store + x * 64 * AXE_AXES;
			nf[x] = k;
			for (i = 0; i < k; i++)
				memcpy(rows[x] + i * ax.n, pts[i].v, (size_t)ax.n * sizeof(int64_t));
		}
		if (axe_fit(axe_size(&l), &ax, (const int64_t *const *)rows, nf, &f, &e) == 0) {
			if (map_diff(&l, &f) >= 0)
				fail_msg("fit of %s gave %s with another map (seed %llu)", str(&l), str(&f),
				         (unsigned long long)seed);
		}
	}
}

static void
test_errors(void **state)
{
	AxeLayout l = A("S[(4,4):(4,1)]"), b = A("S[3:1]"), o;
	AxeShape sh = SH(2, (int64_t)4, (int64_t)4), s3 = SH(1, (int64_t)3), bad = SH(2, (int64_t)4, (int64_t)0);
	int64_t begin[2] = { 0, 0 }, ext[2] = { 5, 1 }, where, x;
	AxeCoord c[1];
	int seps[AXE_RANK + 1], n;
	Err e;

	(void)state;
	assert_int_equal(axe_group(&l, &s3, &o, seps, &e), -1);
	assert_non_null(strstr(e.msg, "size"));
	assert_int_equal(axe_group(&l, &bad, &o, seps, &e), -1);
	assert_int_equal(axe_tile(&l, &sh, &b, &s3, &o, &e), -1);
	assert_int_equal(axe_tile_of(&l, &sh, &b, &s3, &o, &where, &e), -1);
	assert_int_equal(axe_slice(&l, &sh, begin, ext, &o, &e), -1);
	assert_int_equal(axe_apply(&l, 16, c, 1, &n, &e), -1);
	assert_int_equal(axe_apply(&l, -1, c, 1, &n, &e), -1);
	{
		int64_t crd[2] = { 4, 0 };
		assert_int_equal(axe_flatten(&sh, crd, &x, &e), -1);
	}
	/* huge layouts are refused, not enumerated */
	l = A("S[(1048576,1048576):(1048576,1)] + R[1024:1@warp]");
	{
		AxeCoord q;
		int64_t xs[1];
		q.ax.n = 1;
		strcpy(q.ax.name[0], "warp");
		q.v[0] = 0;
		assert_int_equal(axe_find(&l, &q, xs, NULL, 1, &x, &e), -1);
	}
	/* tile overflow */
	l = A("S[2:576460752303423487]");
	b = A("S[4:1]");
	{
		AxeShape s2 = SH(1, (int64_t)2), s4 = SH(1, (int64_t)4);
		assert_int_equal(axe_tile(&l, &s2, &b, &s4, &o, &e), -1);
	}
}

/* Random CuTe layouts: from_cute agrees with CuTe's evaluation on natural
** coordinates, and to_cute gives back the same function. */
static void
test_prop_cute_dtensor(void **state)
{
	uint64_t seed = **(uint64_t **)state;
	int it, i, k;
	Err e;

	for (it = 0; it < 200; it++) {
		char buf[256];
		int rank = 1 + (int)rndn(3), n = 0, same;
		int64_t where, x;
		Layout c, back;
		AxeLayout a;
		AxeShape sh;
		/* ((s,s),s,...):((d,d),d,...) with nonzero strides */
		char sbuf[128], dbuf[128];
		int ns = 0, nd = 0;
		ns += snprintf(sbuf + ns, sizeof sbuf - ns, "(");
		nd += snprintf(dbuf + nd, sizeof dbuf - nd, "(");
		for (i = 0; i < rank; i++) {
			int sub = rndn(3) == 0 ? 2 : 1;
			ns += snprintf(sbuf + ns, sizeof sbuf - ns, "%s%s", i ? "," : "", sub > 1 ? "(" : "");
			nd += snprintf(dbuf + nd, sizeof dbuf - nd, "%s%s", i ? "," : "", sub > 1 ? "(" : "");
			for (k = 0; k < sub; k++) {
				ns += snprintf(sbuf + ns, sizeof sbuf - ns, "%s%d", k ? "," : "", 1 + (int)rndn(4));
				nd += snprintf(dbuf + nd, sizeof dbuf - nd, "%s%d", k ? "," : "", (1 + (int)rndn(9)) * (rndn(4) ? 1 : -1));
			}
			ns += snprintf(sbuf + ns, sizeof sbuf - ns, "%s", sub > 1 ? ")" : "");
			nd += snprintf(dbuf + nd, sizeof dbuf - nd, "%s", sub > 1 ? ")" : "");
		}
		snprintf(sbuf + ns, sizeof sbuf - ns, ")");
		snprintf(dbuf + nd, sizeof dbuf - nd, ")");
		snprintf(buf, sizeof buf, "%s:%s", sbuf, dbuf);
		if (cute_parse(buf, &c, &e) < 0)
			fail_msg("cute_parse %s: %s", buf, e.msg);
		assert_int_equal(axe_from_cute(&c, &a, &sh, &e), 0);
		for (x = 0; x < axe_size(&a); x++) {
			int64_t crd[AXE_RANK], v, got = 0;
			Tuple t;
			AxeCoord pt[1];
			int np, at;
			axe_unflatten(&sh, x, crd);
			t.n = 0;
			at = tuple_open(&t, &e);
			for (k = 0; k < sh.n; k++)
				tuple_push(&t, crd[k], &e);
			tuple_close(&t, at);
			assert_int_equal(cute_eval(&c, &t, &v, &e), 0);
			assert_int_equal(axe_apply(&a, x, pt, 1, &np, &e), 0);
			for (k = 0; k < pt[0].ax.n; k++)
				got += pt[0].v[k];
			if (got != v)
				fail_msg("from_cute %s -> %s: element %lld is %lld, CuTe says %lld (seed %llu)", buf, str(&a),
				         (long long)x, (long long)got, (long long)v, (unsigned long long)seed);
		}
		assert_int_equal(axe_to_cute(&a, &sh, &back, &e), 0);
		assert_int_equal(cute_same_function(&c, &back, &same, &where, &e), 0);
		if (!same)
			fail_msg("to_cute(from_cute(%s)) differs at %lld (seed %llu)", buf, (long long)where,
			         (unsigned long long)seed);
		(void)n;
	}
	/* random DTensor placements: the device of element (i, j) by the definition, and back */
	for (it = 0; it < 200; it++) {
		AxeMesh mesh;
		AxeShape sh;
		AxeLayout l;
		int p[AXE_RANK], back[AXE_RANK], one = rndn(2), j;
		int64_t x;
		static Img im;
		sh.n = 1 + (int)rndn(2);
		for (i = 0; i < sh.n; i++)
			sh.v[i] = 4 << rndn(2);
		mesh.n = 1 + (int)rndn(2);
		for (j = 0; j < mesh.n; j++) {
			snprintf(mesh.name[j], AXE_NAME, one ? "gpuid" : (j ? "gpuid_y" : "gpuid_x"));
			mesh.size[j] = 2;
			p[j] = (int)rndn(sh.n + 1) - 1;
		}
		assert_int_equal(axe_dtensor(&sh, &mesh, p, &l, &e), 0);
		for (x = 0; x < axe_size(&l); x++) {
			int64_t crd[AXE_RANK], dev[AXE_RANK];
			int nrep = 1, r, q;
			axe_unflatten(&sh, x, crd);
			/* mesh coordinate of the shard holding crd: each sharded tensor dim is cut
			** by its mesh dims in mesh order (outer first) */
			for (j = 0; j < mesh.n; j++)
				dev[j] = -1;
			for (i = 0; i < sh.n; i++) {
				int64_t rest = sh.v[i], c = crd[i];
				for (j = 0; j < mesh.n; j++)
					if (p[j] == i) {
						rest /= mesh.size[j];
						dev[j] = c / rest;
						c %= rest;
					}
			}
			for (j = 0; j < mesh.n; j++)
				if (p[j] == AXE_REPLICATE)
					nrep *= (int)mesh.size[j];
			image(&l, x, &im);
			assert_int_equal(im.n, nrep);
			/* every replica's device coordinates agree with dev on the sharded mesh dims */
			for (r = 0; r < im.n; r++) {
				int64_t want = 0;
				for (q = 0; q < mesh.n; q++)
					if (p[q] != AXE_REPLICATE && one)
						want += dev[q] << (mesh.n - 1 - q);
				if (one && mesh.n >= 1) {
					char *g = strstr(im.pt[r], "gpuid=");
					int64_t got = g ? strtoll(g + 6, NULL, 10) : 0, mask = 0;
					for (q = 0; q < mesh.n; q++)
						if (p[q] != AXE_REPLICATE)
							mask |= (int64_t)1 << (mesh.n - 1 - q);
					if ((got & mask) != want)
						fail_msg("dtensor: element %lld on gpuid %lld, expected %lld (seed %llu)", (long long)x,
						         (long long)got, (long long)want, (unsigned long long)seed);
				}
			}
		}
		assert_int_equal(axe_to_dtensor(&l, &sh, &mesh, back, &e), 0);
		{
			AxeLayout l2;
			int same;
			int64_t where;
			assert_int_equal(axe_dtensor(&sh, &mesh, back, &l2, &e), 0);
			assert_int_equal(axe_equivalent(&l, &l2, &same, &where, &e), 0);
			assert_true(same);
		}
	}
}


int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notation),
		cmocka_unit_test(test_tensor_core_tile),
		cmocka_unit_test(test_mesh),
		cmocka_unit_test(test_accelerator_memories),
		cmocka_unit_test(test_direct_sum_example),
		cmocka_unit_test(test_non_bit_linear),
		cmocka_unit_test(test_operators_examples),
		cmocka_unit_test(test_cute_conversion),
		cmocka_unit_test(test_mma_conversion),
		cmocka_unit_test(test_vector_width),
		cmocka_unit_test(test_scopes_tma),
		cmocka_unit_test(test_trn_matmul),
		cmocka_unit_test(test_errors),
		cmocka_unit_test_setup(test_prop_parse_canon_equiv, seed_setup),
		cmocka_unit_test_setup(test_prop_group_tile, seed_setup),
		cmocka_unit_test_setup(test_prop_direct_sum_slice, seed_setup),
		cmocka_unit_test_setup(test_prop_find_fit, seed_setup),
		cmocka_unit_test_setup(test_prop_cute_dtensor, seed_setup),
	};

	return cmocka_run_group_tests_name("axe", tests, NULL, NULL);
}

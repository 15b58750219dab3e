/* cute_scene.c - scenes from CuTe layouts, composed (swizzled) layouts, TV layouts and MMA atoms. */
#include "viz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*EvalFn)(const void *src, int64_t i, int64_t *out, Err *e);

static int
eval_layout(const void *src, int64_t i, int64_t *out, Err *e)
{
	return cute_eval_idx(src, i, out, e);
}

static int
eval_composed(const void *src, int64_t i, int64_t *out, Err *e)
{
	return composed_eval_idx(src, i, out, e);
}

static int
pick(const VizOpts *o, int dflt)
{
	return o->scheme == VIZ_SCHEME_AUTO ? dflt : o->scheme;
}

static int
shown(int64_t full, int max)
{
	return full < max ? (int)full : max;
}

/*
** The grid of a layout: size<0> rows and everything else as columns, so
** that cell (m,n) is the 1-D index m + rows*n at every rank: CuTe's 1-D
** coordinates are colexicographic, so for rank 2 this is l(m,n) with m, n
** the 1-D coordinates of modes 0 and 1, and for rank >= 3 it groups modes
** 1.. into one. Rank 0 and 1 are one row.
*/
static int
dims(const Layout *l, int64_t *rows, int64_t *cols, Err *e)
{
	Layout m0;
	int64_t size = cute_size(l);

	if (cute_rank(l) < 2) {
		*rows = 1;
		*cols = size;
		return 0;
	}
	if (cute_mode(l, 0, &m0, e) < 0)
		return -1;
	*rows = cute_size(&m0);
	*cols = size / *rows;
	return 0;
}

static void
note_elided(Grid *g)
{
	if (g->rows < g->nrows && g->cols < g->ncols)
		scene_note(&g->caption, "elided: showing %d of %lld rows and %d of %lld columns",
		           g->rows, (long long)g->nrows, g->cols, (long long)g->ncols);
	else if (g->rows < g->nrows)
		scene_note(&g->caption, "elided: showing %d of %lld rows", g->rows, (long long)g->nrows);
	else if (g->cols < g->ncols)
		scene_note(&g->caption, "elided: showing %d of %lld columns", g->cols, (long long)g->ncols);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
** Bank conflicts. Shared memory serves 128 bytes per cycle from 32 banks of
** 4 bytes, so a warp access is split into phases of 128 bytes: 32 cells of
** up to 4 bytes, 16 of 8 bytes, 8 of 16 bytes. The cost of a phase is the
** largest number of distinct 4-byte words in one bank (equal words are
** broadcast). Phases take consecutive cells along a row (a warp reading rows)
** or down a column (reading columns, as ldmatrix does); both are reported.
*/
static int
worst_ways(const Grid *g, EvalFn f, const void *src, int eb, int down, int *worst,
           int64_t *at, Err *e)
{
	uint64_t w[32 * 4];
	int64_t total = g->nrows * g->ncols, start, i, v;
	int per_phase = eb >= 4 ? 128 / eb : 32, nw, k;

	if (per_phase < 1)
		per_phase = 1;
	*worst = 0;
	*at = 0;
	for (start = 0; start < total; start += per_phase) {
		int per[32] = {0}, ways = 0;

		nw = 0;
		for (i = start; i < start + per_phase && i < total; i++) {
			uint64_t first, last, wd;
			int64_t r = down ? i % g->nrows : i / g->ncols;
			int64_t c = down ? i / g->nrows : i % g->ncols;

			if (f(src, r + g->nrows * c, &v, e) < 0)
				return -1;
			first = (uint64_t)v * (uint64_t)eb / 4;
			last = ((uint64_t)v * (uint64_t)eb + (uint64_t)eb - 1) / 4;
			for (wd = first; wd <= last && nw < 32 * 4; wd++)
				w[nw++] = wd;
		}
		qsort(w, (size_t)nw, sizeof w[0], cmp_u64);
		for (k = 0; k < nw; k++)
			if (k == 0 || w[k] != w[k - 1])
				if (++per[w[k] % 32] > ways)
					ways = per[w[k] % 32];
		if (ways > *worst) {
			*worst = ways;
			*at = start;
		}
	}
	return 0;
}

static void
ways_text(char *dst, size_t n, int ways, int64_t at, const Grid *g, int down)
{
	if (ways <= 1)
		snprintf(dst, n, "conflict-free");
	else if (down)
		snprintf(dst, n, "%d-way (first at column %lld)", ways, (long long)(at / g->nrows));
	else
		snprintf(dst, n, "%d-way (first at row %lld)", ways, (long long)(at / g->ncols));
}

static int
bank_note(Grid *g, EvalFn f, const void *src, int eb, Err *e)
{
	int64_t total = g->nrows * g->ncols, at_r, at_c;
	int rows, cols, per_phase = eb >= 4 ? 128 / eb : 32;
	char tr[64], tc[64];

	if (total > VIZ_ENUM_LIMIT) {
		scene_note(&g->caption, "bank conflicts not analysed: %lld elements are more than %d",
		           (long long)total, VIZ_ENUM_LIMIT);
		return 0;
	}
	if (worst_ways(g, f, src, eb, 0, &rows, &at_r, e) < 0 ||
	    worst_ways(g, f, src, eb, 1, &cols, &at_c, e) < 0)
		return -1;
	ways_text(tr, sizeof tr, rows, at_r, g, 0);
	ways_text(tc, sizeof tc, cols, at_c, g, 1);
	scene_note(&g->caption, "banks: reading rows %s, reading columns %s "
	           "(%d-byte elements, %d per 128-byte access)", tr, tc, eb, per_phase < 1 ? 1 : per_phase);
	return 0;
}

/* The grid of values of a layout or composed layout; shape_of gives its shape. */
static int
value_grid(Scene *s, const Layout *shape_of, EvalFn f, const void *src, int scheme, int banks,
           const VizOpts *o, Err *e)
{
	int64_t rows, cols, v;
	int r, c, rank;
	Grid *g;

	if (dims(shape_of, &rows, &cols, e) < 0)
		return -1;
	if (!(g = scene_grid(s, shown(rows, o->max_rows), shown(cols, o->max_cols), 0, 0, e)))
		return -1;
	g->nrows = rows;
	g->ncols = cols;
	g->scheme = scheme;
	g->minw = num_digits(cute_cosize(shape_of));
	for (r = 0; r < g->rows; r++)
		for (c = 0; c < g->cols; c++) {
			Cell *cell = scene_cell(g, r, c);

			if (f(src, r + rows * c, &v, e) < 0)
				return -1;
			scene_label(cell, "%lld", (long long)v);
			cell->value = v;
			cell->color = scene_cell_color(g, cell, scheme, o->elem_bytes);
		}
	rank = cute_rank(shape_of);
	if (rank >= 3)
		scene_note(&g->caption, "rank %d: modes 1..%d grouped into the columns (%lld columns)",
		           rank, rank - 1, (long long)cols);
	note_elided(g);
	if (banks && bank_note(g, f, src, o->elem_bytes, e) < 0)
		return -1;
	return 0;
}

static const VizOpts *
opts(const VizOpts *o, VizOpts *d, const char *op, Err *e)
{
	if (o)
		return viz_opts_check(o, op, e) < 0 ? NULL : o;
	viz_opts_default(d);
	return d;
}

static int
fail(Scene *s)
{
	scene_free(s);
	return -1;
}

int
cute_scene_layout(Scene *s, const Layout *l, const VizOpts *o, Err *e)
{
	VizOpts d;
	int scheme;

	if (!s)
		return err_set(e, "viz.layout: no scene");
	scene_init(s);
	if (!l)
		return err_set(e, "viz.layout: no layout");
	if (!(o = opts(o, &d, "viz.layout", e)))
		return -1;
	cute_print(&s->title, l);
	scheme = pick(o, VIZ_SCHEME_VALUE);
	if (value_grid(s, l, eval_layout, l, scheme, scheme == VIZ_SCHEME_BANK, o, e) < 0)
		return fail(s);
	if (scene_oom(s)) {
		scene_free(s);
		return err_set(e, "viz.layout: out of memory");
	}
	return 0;
}

int
cute_scene_composed(Scene *s, const Composed *c, const VizOpts *o, Err *e)
{
	VizOpts d;

	if (!s)
		return err_set(e, "viz.composed: no scene");
	scene_init(s);
	if (!c)
		return err_set(e, "viz.composed: no layout");
	if (!(o = opts(o, &d, "viz.composed", e)))
		return -1;
	composed_print(&s->title, c);
	if (value_grid(s, &c->layout, eval_composed, c, pick(o, VIZ_SCHEME_BANK),
	               1, o, e) < 0)
		return fail(s);
	if (scene_oom(s)) {
		scene_free(s);
		return err_set(e, "viz.composed: out of memory");
	}
	return 0;
}

/* The scheme of a TV or MMA picture; banks mean nothing there. */
static int
tv_scheme(const VizOpts *o, const char *op, Err *e)
{
	int scheme = pick(o, VIZ_SCHEME_THREAD);

	if (scheme == VIZ_SCHEME_BANK)
		return err_set(e, "%s: the bank colour scheme applies to layouts, not to thread-value layouts", op);
	return scheme;
}

/*
** Fill a grid from tv: (thr,val) -> x + d0*y in the d0 x d1 tile. The cell
** of index (x,y) is (x,y), or (y,x) when transposed (B, drawn K x N).
** (thr,val) pairs are visited thread-major, as CuTe's print_latex does, so
** a cell reached twice keeps the first.
*/
static int
tv_fill(Grid *g, const char *op, const char *what, const Layout *tv, int64_t d0, int64_t d1,
        int transpose, int scheme, int compact, Err *e)
{
	Layout m0;
	int64_t size = cute_size(tv), nthr, nval, t, v, idx, x, y;
	int r, c, shared = 0, empty = 0;

	if (size > VIZ_ENUM_LIMIT)
		return err_set(e, "%s: %s has %lld (thr,val) pairs; more than %d are not enumerated",
		               op, what, (long long)size, VIZ_ENUM_LIMIT);
	if (cute_rank(tv) >= 2) {
		if (cute_mode(tv, 0, &m0, e) < 0)
			return -1;
		nthr = cute_size(&m0);
		nval = size / nthr;
	} else {
		nthr = size;
		nval = 1;
	}
	for (r = 0; r < g->rows * g->cols; r++)
		g->cell[r].flags = CELL_EMPTY;
	for (t = 0; t < nthr; t++)
		for (v = 0; v < nval; v++) {
			Cell *cell;

			if (cute_eval_idx(tv, t + nthr * v, &idx, e) < 0)
				return -1;
			if (idx < 0 || idx >= d0 * d1) {
				Buf b;

				buf_init(&b);
				cute_print(&b, tv);
				err_set(e, "%s: %s %s maps (thr,val) = (%lld,%lld) to index %lld, outside "
				        "the %lldx%lld tile", op, what, b.s ? b.s : "", (long long)t,
				        (long long)v, (long long)idx, (long long)d0, (long long)d1);
				buf_free(&b);
				return -1;
			}
			x = idx % d0;
			y = idx / d0;
			if (transpose) {
				int64_t tmp = x;
				x = y;
				y = tmp;
			}
			if (x >= g->rows || y >= g->cols)
				continue;
			cell = scene_cell(g, (int)x, (int)y);
			if (!(cell->flags & CELL_EMPTY)) {
				cell->flags |= CELL_SHARED;
				continue;
			}
			cell->flags = 0;
			cell->value = t;
			cell->aux = v;
			if (compact) {
				scene_label(cell, "T%lldV%lld", (long long)t, (long long)v);
			} else {
				scene_label(cell, "T%lld", (long long)t);
				scene_label(cell, "V%lld", (long long)v);
			}
			cell->color = scene_cell_color(g, cell, scheme, 0);
		}
	for (r = 0; r < g->rows; r++)
		for (c = 0; c < g->cols; c++) {
			int f = scene_cell(g, r, c)->flags;
			shared += (f & CELL_SHARED) != 0;
			empty += (f & CELL_EMPTY) != 0;
		}
	note_elided(g);
	if (shared)
		scene_note(&g->caption, "%d cell%s reached by several (thr,val); each shows the first",
		           shared, shared == 1 ? " is" : "s are");
	if (empty)
		scene_note(&g->caption, "%d cell%s not mapped (blank)", empty, empty == 1 ? " is" : "s are");
	return 0;
}

/* Refuse tiles that are empty or whose indices would not fit. */
static int
check_tile(const char *op, int64_t m, int64_t n, Err *e)
{
	if (m < 1 || n < 1 || m > CUTE_SIZE_LIMIT / n)
		return err_set(e, "%s: tile %lldx%lld is empty or too large", op, (long long)m, (long long)n);
	return 0;
}

static Grid *
tv_grid(Scene *s, const char *op, const VizOpts *o, int64_t rows, int64_t cols, int prow, int pcol,
        const char *rowaxis, const char *colaxis, int scheme, Err *e)
{
	Grid *g = scene_grid(s, shown(rows, o->max_rows), shown(cols, o->max_cols), prow, pcol, e);

	if (!g)
		return NULL;
	g->nrows = rows;
	g->ncols = cols;
	g->scheme = scheme;
	g->tv = 1;
	g->align = VIZ_ALIGN_CENTER;
	strcpy(g->rowaxis, rowaxis);
	strcpy(g->colaxis, colaxis);
	return g;
}

int
cute_scene_tv(Scene *s, const Layout *tv, int64_t m, int64_t n, const VizOpts *o, Err *e)
{
	const char *op = "viz.tv";
	VizOpts d;
	Grid *g;
	int scheme;

	if (!s)
		return err_set(e, "%s: no scene", op);
	scene_init(s);
	if (!tv)
		return err_set(e, "%s: no layout", op);
	if (!(o = opts(o, &d, op, e)) || check_tile(op, m, n, e) < 0 ||
	    (scheme = tv_scheme(o, op, e)) < 0)
		return -1;
	cute_print(&s->title, tv);
	emit(&s->title, "  (thr,val) -> m + n*%lld in a %lldx%lld tile",
	     (long long)m, (long long)m, (long long)n);
	if (!(g = tv_grid(s, op, o, m, n, 0, 0, "m", "n", scheme, e)) ||
	    tv_fill(g, op, "tv layout", tv, m, n, 0, scheme, o->compact, e) < 0)
		return fail(s);
	if (scene_oom(s)) {
		scene_free(s);
		return err_set(e, "%s: out of memory", op);
	}
	return 0;
}

/* Is thr_id the identity on its domain (logical thread = hardware thread)? */
static int
thr_identity(const Layout *thr)
{
	int64_t i, v, size = cute_size(thr);
	Err e;

	if (size > VIZ_ENUM_LIMIT)
		return 0;
	for (i = 0; i < size; i++)
		if (cute_eval_idx(thr, i, &v, &e) < 0 || v != i)
			return 0;
	return 1;
}

int
cute_scene_mma(Scene *s, const MmaAtom *a, const VizOpts *o, Err *e)
{
	const char *op = "viz.mma";
	int64_t M, N, K;
	VizOpts d;
	int scheme;

	if (!s)
		return err_set(e, "%s: no scene", op);
	scene_init(s);
	if (!a)
		return err_set(e, "%s: no atom", op);
	if (!(o = opts(o, &d, op, e)) || (scheme = tv_scheme(o, op, e)) < 0)
		return -1;
	M = a->m;
	N = a->n;
	K = a->k;
	if (check_tile(op, M, K, e) < 0 || check_tile(op, N, K, e) < 0 || check_tile(op, M, N, e) < 0)
		return -1;
	scene_note(&s->title, "%s  (M,N,K) = (%lld,%lld,%lld)", a->name, (long long)M,
	           (long long)N, (long long)K);
	if (a->ptx[0] || a->types[0])
		scene_note(&s->title, "%s%s%s", a->ptx, a->ptx[0] && a->types[0] ? "  " : "", a->types);
	/* CuTe's print_latex layout: B above C, A left of C, the corner empty.
	** B is stored N x K and drawn K x N, so its grid is transposed. */
	{
		const struct {
			const char *title, *what, *rax, *cax;
			const Layout *tv;
			int64_t d0, d1;
			int prow, pcol, transpose;
		} panel[3] = {
			{ "A (M x K)  ", "A layout", "m", "k", &a->a, M, K, 1, 0, 0 },
			{ "B (K x N)  ", "B layout", "k", "n", &a->b, N, K, 0, 1, 1 },
			{ "C (M x N)  ", "C layout", "m", "n", &a->c, M, N, 1, 1, 0 },
		};
		int i;

		for (i = 0; i < 3; i++) {
			int64_t rows = panel[i].transpose ? panel[i].d1 : panel[i].d0;
			int64_t cols = panel[i].transpose ? panel[i].d0 : panel[i].d1;
			Grid *g = tv_grid(s, op, o, rows, cols, panel[i].prow, panel[i].pcol,
			                  panel[i].rax, panel[i].cax, scheme, e);

			if (!g)
				return fail(s);
			emit(&g->title, "%s", panel[i].title);
			cute_print(&g->title, panel[i].tv);
			if (tv_fill(g, op, panel[i].what, panel[i].tv, panel[i].d0, panel[i].d1,
			            panel[i].transpose, scheme, o->compact, e) < 0)
				return fail(s);
		}
	}
	if (!thr_identity(&a->thr_id)) {
		scene_note(&s->caption, "T is the logical thread; the hardware thread is thr_id(T), thr_id = ");
		cute_print(&s->caption, &a->thr_id);
	}
	if (scene_oom(s)) {
		scene_free(s);
		return err_set(e, "%s: out of memory", op);
	}
	return 0;
}

int
cute_scene_copy(Scene *s, const Layout *src, const Layout *dst, int64_t m, int64_t n,
                const VizOpts *o, Err *e)
{
	const char *op = "viz.copy";
	const Layout *tv[2] = { src, dst };
	static const char *const title[2] = { "S (source)  ", "D (destination)  " };
	static const char *const what[2] = { "source layout", "destination layout" };
	VizOpts d;
	int scheme, i;

	if (!s)
		return err_set(e, "%s: no scene", op);
	scene_init(s);
	if (!src || !dst)
		return err_set(e, "%s: no layout", op);
	if (!(o = opts(o, &d, op, e)) || check_tile(op, m, n, e) < 0 ||
	    (scheme = tv_scheme(o, op, e)) < 0)
		return -1;
	scene_note(&s->title, "tiled copy over a %lldx%lld tile: (thr,val) -> m + n*%lld",
	           (long long)m, (long long)n, (long long)m);
	for (i = 0; i < 2; i++) {
		Grid *g = tv_grid(s, op, o, m, n, 0, i, "m", "n", scheme, e);

		if (!g)
			return fail(s);
		emit(&g->title, "%s", title[i]);
		cute_print(&g->title, tv[i]);
		if (tv_fill(g, op, what[i], tv[i], m, n, 0, scheme, o->compact, e) < 0)
			return fail(s);
	}
	if (scene_oom(s)) {
		scene_free(s);
		return err_set(e, "%s: out of memory", op);
	}
	return 0;
}

/* lego_scene.c - the logical and physical views of a LEGO layout as a two-panel scene. */
#include "viz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
** How the logical view is laid out: the grid row is the row-major index of
** the dimensions listed in rd, the column that of cd. Rank 1: one row; rank
** 2: rows x columns; tile groups of d >= 2 dimensions each (GroupBy({{2,2},
** {3,3}}), TileBy): the untiled matrix, its rows from the levels of the
** first d/2 dimensions, outer level first; otherwise the first rank/2
** dimensions in the rows.
*/
typedef struct View {
	int nr, nc, rd[LEGO_DIMS], cd[LEGO_DIMS];
	int64_t rows, cols;
} View;

static void
view_of(const Lego *g, View *v)
{
	int k, h, n = g->rank, d = g->ngroup > 1 ? g->glen[0] : 0;

	for (k = 1; k < g->ngroup && d; k++)
		if (g->glen[k] != d)
			d = 0;
	v->nr = v->nc = 0;
	if (d >= 2) {
		for (k = 0; k < d; k++)
			for (h = 0; h < g->ngroup; h++) {
				if (k < d / 2)
					v->rd[v->nr++] = h * d + k;
				else
					v->cd[v->nc++] = h * d + k;
			}
	} else {
		h = n <= 2 ? n - 1 : n / 2;
		for (k = 0; k < n; k++) {
			if (k < h)
				v->rd[v->nr++] = k;
			else
				v->cd[v->nc++] = k;
		}
	}
	v->rows = v->cols = 1;
	for (k = 0; k < v->nr; k++)
		v->rows *= g->dim[v->rd[k]];
	for (k = 0; k < v->nc; k++)
		v->cols *= g->dim[v->cd[k]];
}

/* The logical coordinate of grid cell (r, c). */
static void
view_crd(const Lego *g, const View *v, int64_t r, int64_t c, int64_t *x)
{
	int k;

	for (k = v->nr - 1; k >= 0; k--) {
		x[v->rd[k]] = r % g->dim[v->rd[k]];
		r /= g->dim[v->rd[k]];
	}
	for (k = v->nc - 1; k >= 0; k--) {
		x[v->cd[k]] = c % g->dim[v->cd[k]];
		c /= g->dim[v->cd[k]];
	}
}

static void
view_cell(const Lego *g, const View *v, const int64_t *x, int64_t *r, int64_t *c)
{
	int k;

	*r = *c = 0;
	for (k = 0; k < v->nr; k++)
		*r = *r * g->dim[v->rd[k]] + x[v->rd[k]];
	for (k = 0; k < v->nc; k++)
		*c = *c * g->dim[v->cd[k]] + x[v->cd[k]];
}

static int
shown(int64_t full, int max)
{
	return full < max ? (int)full : max;
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

static void
note_view(Grid *g, const Lego *l, const View *v)
{
	Buf b;
	int k;

	if (l->rank < 3)
		return;
	buf_init(&b);
	emit(&b, "rows: dimensions ");
	for (k = 0; k < v->nr; k++)
		emit(&b, "%s%d", k ? "," : "", v->rd[k]);
	emit(&b, "; columns: dimensions ");
	for (k = 0; k < v->nc; k++)
		emit(&b, "%s%d", k ? "," : "", v->cd[k]);
	scene_note(&g->caption, "%s (row-major)", b.s ? b.s : "");
	buf_free(&b);
}

static int
fail(Scene *s, LegoProg *a, LegoProg *b)
{
	free(a);
	free(b);
	scene_free(s);
	return -1;
}

int
lego_scene(Scene *s, const Lego *g, const VizOpts *o, Err *e)
{
	const char *op = "show";
	int64_t rows, cols, prow, pcol, x[LEGO_DIMS], f, lr, lc;
	int r, c, k, scheme;
	View v;
	LegoProg *pa = NULL, *pi = NULL;
	VizOpts d;
	Grid *lg, *pg;

	if (!s)
		return err_set(e, "%s: no scene", op);
	scene_init(s);
	if (!g)
		return err_set(e, "%s: no layout", op);
	if (!o) {
		viz_opts_default(&d);
		o = &d;
	} else if (viz_opts_check(o, op, e) < 0) {
		return -1;
	}
	scheme = o->scheme == VIZ_SCHEME_AUTO ? VIZ_SCHEME_THREAD : o->scheme;
	if (scheme == VIZ_SCHEME_BANK)
		scheme = VIZ_SCHEME_THREAD;
	pa = malloc(sizeof *pa);
	pi = malloc(sizeof *pi);
	if (!pa || !pi) {
		err_set(e, "%s: out of memory", op);
		return fail(s, pa, pi);
	}
	if (lego_prog(g, 0, pa, e) < 0 || lego_prog(g, 1, pi, e) < 0)
		return fail(s, pa, pi);
	lego_print(&s->title, g);
	view_of(g, &v);
	rows = v.rows;
	cols = v.cols;
	if (g->erank) {
		/* the original extents: the first half of the dimensions in the rows */
		int h = g->erank <= 2 ? g->erank - 1 : g->erank / 2;
		prow = pcol = 1;
		for (k = 0; k < g->erank; k++) {
			if (k < h)
				prow *= g->odim[k];
			else
				pcol *= g->odim[k];
		}
	} else {
		prow = rows;
		pcol = cols;
	}

	if (!(lg = scene_grid(s, shown(rows, o->max_rows), shown(cols, o->max_cols), 0, 0, e)))
		return fail(s, pa, pi);
	lg->nrows = rows;
	lg->ncols = cols;
	lg->scheme = scheme;
	lg->minw = num_digits(lego_cosize(g) - 1);
	strcpy(lg->rowaxis, "i");
	strcpy(lg->colaxis, "j");
	emit(&lg->title, "logical view: cell = physical index");
	for (r = 0; r < lg->rows; r++)
		for (c = 0; c < lg->cols; c++) {
			Cell *cell = scene_cell(lg, r, c);

			view_crd(g, &v, r, c, x);
			if (lego_run(pa, x, &f, e) < 0)
				return fail(s, pa, pi);
			cell->value = f;
			cell->aux = r;
			if (f < 0) {
				scene_label(cell, "-");
				cell->flags = CELL_EMPTY;
			} else {
				scene_label(cell, "%lld", (long long)f);
				cell->color = scheme == VIZ_SCHEME_NONE ? VIZ_NOCOLOR : r % 8;
			}
		}
	note_view(lg, g, &v);
	note_elided(lg);

	if (!(pg = scene_grid(s, shown(prow, o->max_rows), shown(pcol, o->max_cols), 0, 1, e)))
		return fail(s, pa, pi);
	pg->nrows = prow;
	pg->ncols = pcol;
	pg->scheme = scheme;
	pg->align = VIZ_ALIGN_CENTER;
	strcpy(pg->rowaxis, "p");
	strcpy(pg->colaxis, "q");
	emit(&pg->title, g->rank < 3 ? "physical view: cell = logical coordinate" :
	     "physical view: cell = (row,column) of the logical view");
	for (r = 0; r < pg->rows; r++)
		for (c = 0; c < pg->cols; c++) {
			Cell *cell = scene_cell(pg, r, c);
			char lab[VIZ_LABEL * 2];
			size_t len = 0;

			f = r * pcol + c;
			if (lego_run(pi, &f, x, e) < 0)
				return fail(s, pa, pi);
			view_cell(g, &v, x, &lr, &lc);
			if (g->rank < 3)
				for (k = 0; k < g->rank && len < sizeof lab; k++)
					len += (size_t)snprintf(lab + len, sizeof lab - len, "%s%lld", k ? "," : "",
					                        (long long)x[k]);
			else
				snprintf(lab, sizeof lab, "%lld,%lld", (long long)lr, (long long)lc);
			scene_label(cell, "%s", lab);
			cell->value = f;
			cell->aux = lr;
			cell->color = scheme == VIZ_SCHEME_NONE ? VIZ_NOCOLOR : (int)(lr % 8);
		}
	note_elided(pg);
	scene_note(&s->caption, "colour: the logical row (rows of the logical view), the same in both views");
	free(pa);
	free(pi);
	if (scene_oom(s)) {
		scene_free(s);
		return err_set(e, "%s: out of memory", op);
	}
	return 0;
}

int
viz_show_lego(Buf *out, const Lego *g, const VizOpts *o, Err *e)
{
	Scene s;
	int rc;

	if (!out)
		return err_set(e, "show: no output buffer");
	if (lego_scene(&s, g, o, e) < 0)
		return -1;
	rc = term_render(out, &s, o, e);
	scene_free(&s);
	return rc;
}

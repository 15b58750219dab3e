/* lego_scene.c - the logical and physical views of a LEGO layout as a two-panel scene. */
#include "viz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows and columns of a grid over dims: rank/2 dimensions in the rows. */
static void
grid_shape(const int64_t *d, int n, int64_t *rows, int64_t *cols, int *split)
{
	int k, h = n <= 2 ? n - 1 : n / 2;

	*rows = 1;
	*cols = 1;
	for (k = 0; k < h; k++)
		*rows *= d[k];
	for (k = h; k < n; k++)
		*cols *= d[k];
	*split = h;
}

static int
shown(int64_t full, int max)
{
	return full < max ? (int)full : max;
}

static void
note_elided(Grid *g)
{
	if (g->rows < g->nrows || g->cols < g->ncols)
		scene_note(&g->caption, "elided: showing %d of %lld rows and %d of %lld columns",
		           g->rows, (long long)g->nrows, g->cols, (long long)g->ncols);
}

static void
note_split(Grid *g, const char *what, int n, int h)
{
	if (n >= 3)
		scene_note(&g->caption, "%s dimensions 0..%d in the rows, %d..%d in the columns",
		           what, h - 1, h, n - 1);
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
	int64_t rows, cols, prow, pcol, x[LEGO_DIMS], f, lrow;
	int split, psplit, r, c, k, scheme;
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
	grid_shape(g->dim, g->rank, &rows, &cols, &split);
	if (g->erank)
		grid_shape(g->odim, g->erank, &prow, &pcol, &psplit);
	else {
		prow = rows;
		pcol = cols;
		psplit = split;
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
			int64_t a = r * cols + c;

			for (k = g->rank - 1; k >= 0; k--) {
				x[k] = a % g->dim[k];
				a /= g->dim[k];
			}
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
	note_split(lg, "logical", g->rank, split);
	note_elided(lg);

	if (!(pg = scene_grid(s, shown(prow, o->max_rows), shown(pcol, o->max_cols), 0, 1, e)))
		return fail(s, pa, pi);
	pg->nrows = prow;
	pg->ncols = pcol;
	pg->scheme = scheme;
	pg->align = VIZ_ALIGN_CENTER;
	strcpy(pg->rowaxis, "p");
	strcpy(pg->colaxis, "q");
	emit(&pg->title, "physical view: cell = logical coordinate");
	for (r = 0; r < pg->rows; r++)
		for (c = 0; c < pg->cols; c++) {
			Cell *cell = scene_cell(pg, r, c);
			char lab[VIZ_LABEL * 2];
			size_t len = 0;

			f = r * pcol + c;
			if (lego_run(pi, &f, x, e) < 0)
				return fail(s, pa, pi);
			for (k = 0; k < g->rank && len < sizeof lab; k++)
				len += (size_t)snprintf(lab + len, sizeof lab - len, "%s%lld", k ? "," : "",
				                        (long long)x[k]);
			scene_label(cell, "%s", lab);
			for (lrow = 0, k = 0; k < split; k++)
				lrow = lrow * g->dim[k] + x[k];
			cell->value = f;
			cell->aux = lrow;
			cell->color = scheme == VIZ_SCHEME_NONE ? VIZ_NOCOLOR : (int)(lrow % 8);
		}
	if (g->erank)
		note_split(pg, "physical", g->erank, psplit);
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

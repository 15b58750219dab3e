/* scene.c - the scene model shared by the renderers: grids of labelled, coloured cells placed as panels. */
#include "viz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CuTe print_latex's TikzColor_BWx8: black!00 40 20 60 10 50 30 70, as grey levels. */
static const int32_t greys[8] = {
	0xffffff, 0x999999, 0xcccccc, 0x666666, 0xe6e6e6, 0x808080, 0xb3b3b3, 0x4d4d4d
};

/* CuTe print_latex's TikzColor_TV. */
static const int32_t pastels[8] = {
	0xafafff, 0xafffaf, 0xffffaf, 0xffafaf, 0xd2d2ff, 0xd2ffd2, 0xffffd2, 0xffd2d2
};

void
viz_opts_default(VizOpts *o)
{
	o->color = 0;
	o->max_rows = 64;
	o->max_cols = 64;
	o->elem_bytes = 2;
	o->scheme = VIZ_SCHEME_AUTO;
	o->compact = 0;
}

int
viz_opts_check(const VizOpts *o, const char *op, Err *e)
{
	int eb;

	if (!o)
		return 0;
	if (o->max_rows < 1 || o->max_rows > VIZ_MAX_DIM)
		return err_set(e, "%s: max_rows %d is out of range 1..%d", op, o->max_rows, VIZ_MAX_DIM);
	if (o->max_cols < 1 || o->max_cols > VIZ_MAX_DIM)
		return err_set(e, "%s: max_cols %d is out of range 1..%d", op, o->max_cols, VIZ_MAX_DIM);
	if ((int64_t)o->max_rows * o->max_cols > VIZ_MAX_CELLS)
		return err_set(e, "%s: max_rows*max_cols = %d*%d is more than %d cells",
		               op, o->max_rows, o->max_cols, VIZ_MAX_CELLS);
	eb = o->elem_bytes;
	if (eb != 1 && eb != 2 && eb != 4 && eb != 8 && eb != 16)
		return err_set(e, "%s: elem_bytes %d is not 1, 2, 4, 8 or 16", op, eb);
	if (o->scheme < 0 || o->scheme >= VIZ_NSCHEME)
		return err_set(e, "%s: unknown colour scheme %d", op, o->scheme);
	return 0;
}

static void
grid_init(Grid *g)
{
	memset(g, 0, sizeof *g);
	buf_init(&g->title);
	buf_init(&g->caption);
	g->scheme = VIZ_SCHEME_NONE;
	g->cell = NULL;
}

void
scene_init(Scene *s)
{
	int i;

	buf_init(&s->title);
	buf_init(&s->caption);
	s->ngrid = 0;
	for (i = 0; i < SCENE_GRIDS; i++)
		grid_init(&s->grid[i]);
}

void
scene_free(Scene *s)
{
	int i;

	if (!s)
		return;
	buf_free(&s->title);
	buf_free(&s->caption);
	for (i = 0; i < SCENE_GRIDS; i++) {
		buf_free(&s->grid[i].title);
		buf_free(&s->grid[i].caption);
		free(s->grid[i].cell);
		grid_init(&s->grid[i]);
	}
	s->ngrid = 0;
}

Grid *
scene_grid(Scene *s, int rows, int cols, int prow, int pcol, Err *e)
{
	Grid *g;
	int i;

	if (s->ngrid >= SCENE_GRIDS)
		return err_set(e, "scene: more than %d panels", SCENE_GRIDS), NULL;
	if (prow < 0 || pcol < 0 || prow >= SCENE_GRIDS || pcol >= SCENE_GRIDS)
		return err_set(e, "scene: panel (%d,%d) is outside the %dx%d panel table",
		               prow, pcol, SCENE_GRIDS, SCENE_GRIDS), NULL;
	if (rows < 1 || cols < 1 || (int64_t)rows * cols > VIZ_MAX_CELLS)
		return err_set(e, "scene: a %dx%d grid is empty or has more than %d cells",
		               rows, cols, VIZ_MAX_CELLS), NULL;
	g = &s->grid[s->ngrid];
	grid_init(g);
	g->cell = calloc((size_t)rows * (size_t)cols, sizeof *g->cell);
	if (!g->cell)
		return err_set(e, "scene: out of memory for a %dx%d grid", rows, cols), NULL;
	for (i = 0; i < rows * cols; i++)
		g->cell[i].color = VIZ_NOCOLOR;
	g->rows = rows;
	g->cols = cols;
	g->nrows = rows;
	g->ncols = cols;
	strcpy(g->rowaxis, "m");
	strcpy(g->colaxis, "n");
	g->align = VIZ_ALIGN_RIGHT;
	g->minw = 1;
	g->prow = prow;
	g->pcol = pcol;
	s->ngrid++;
	return g;
}

Cell *
scene_cell(Grid *g, int r, int c)
{
	return &g->cell[(size_t)r * (size_t)g->cols + (size_t)c];
}

void
scene_label(Cell *c, const char *fmt, ...)
{
	va_list ap;

	if (c->nline >= VIZ_LINES)
		return;
	va_start(ap, fmt);
	vsnprintf(c->line[c->nline], VIZ_LABEL, fmt, ap);
	va_end(ap);
	c->nline++;
}

void
scene_note(Buf *b, const char *fmt, ...)
{
	va_list ap;

	if (b->len > 0)
		emit(b, "\n");
	va_start(ap, fmt);
	vemit(b, fmt, ap);
	va_end(ap);
}

/* Pastel hues for the 32 banks; neighbouring banks are 7 hue steps apart
** so that a conflict (two words in one bank) stands out next to its row. */
static int32_t
bank_rgb(int bank)
{
	int h = ((bank * 7) % 32) * 360 / 32, v = (bank & 1) ? 225 : 255, s = 110;
	int region = h / 60, rem = (h % 60) * 255 / 60;
	int p = v * (255 - s) / 255;
	int q = v * (255 - s * rem / 255) / 255;
	int t = v * (255 - s * (255 - rem) / 255) / 255;
	int r, g, b;

	switch (region) {
	case 0: r = v; g = t; b = p; break;
	case 1: r = q; g = v; b = p; break;
	case 2: r = p; g = v; b = t; break;
	case 3: r = p; g = q; b = v; break;
	case 4: r = t; g = p; b = v; break;
	default: r = v; g = p; b = q; break;
	}
	return (int32_t)(r << 16 | g << 8 | b);
}

int32_t
scene_rgb(int scheme, int color)
{
	if (color < 0)
		return -1;
	switch (scheme) {
	case VIZ_SCHEME_VALUE: return greys[color % 8];
	case VIZ_SCHEME_THREAD: return pastels[color % 8];
	case VIZ_SCHEME_BANK: return bank_rgb(color % 32);
	default: return -1;
	}
}

int
scene_oom(const Scene *s)
{
	int i, bad = s->title.oom || s->caption.oom;

	for (i = 0; i < s->ngrid; i++)
		bad |= s->grid[i].title.oom || s->grid[i].caption.oom;
	return bad;
}

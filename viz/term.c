/* term.c - terminal pictures of scenes: CuTe's print_layout text, ANSI 256-colour cells, panels side by side. */
#include "viz.h"

#include <stdlib.h>
#include <string.h>

enum { GAP = 3 };   /* spaces between panel columns */

/* A rendered panel: lines of text, each ended by '\n' in text. */
typedef struct Block {
	Buf text;
	size_t *off;        /* start of line i in text */
	int *w;             /* visible width of line i (escapes excluded) */
	int n, cap, oom;
	int head;           /* lines above the first rule: title and column indices */
	int width;
} Block;

static void
block_init(Block *b)
{
	buf_init(&b->text);
	b->off = NULL;
	b->w = NULL;
	b->n = b->cap = b->oom = b->head = b->width = 0;
}

static void
block_free(Block *b)
{
	buf_free(&b->text);
	free(b->off);
	free(b->w);
	block_init(b);
}

/* Columns of s, skipping CSI escape sequences (ESC [ ... final byte). */
static int
vis_width(const char *s, size_t n)
{
	size_t i = 0;
	int w = 0;

	while (i < n) {
		if (s[i] == '\033' && i + 1 < n && s[i + 1] == '[') {
			i += 2;
			while (i < n && !(s[i] >= 0x40 && s[i] <= 0x7e))
				i++;
			i++;
		} else {
			w++;
			i++;
		}
	}
	return w;
}

/* End the line that began at text offset start. */
static void
endline(Block *b, size_t start)
{
	int w;

	if (b->n == b->cap) {
		int cap = b->cap ? 2 * b->cap : 32;
		size_t *off = realloc(b->off, (size_t)cap * sizeof *off);
		int *ws;

		if (!off) {
			b->oom = 1;
			return;
		}
		b->off = off;
		if (!(ws = realloc(b->w, (size_t)cap * sizeof *ws))) {
			b->oom = 1;
			return;
		}
		b->w = ws;
		b->cap = cap;
	}
	w = b->text.s ? vis_width(b->text.s + start, b->text.len - start) : 0;
	emit(&b->text, "\n");
	b->off[b->n] = start;
	b->w[b->n] = w;
	b->n++;
	if (w > b->width)
		b->width = w;
}

/* One line of text per '\n'-separated line of src. */
static void
lines(Block *b, const Buf *src)
{
	const char *p, *q;

	if (!src->s || !src->len)
		return;
	for (p = src->s;; p = q + 1) {
		size_t start = b->text.len;

		q = strchr(p, '\n');
		emitn(&b->text, p, q ? (size_t)(q - p) : strlen(p));
		endline(b, start);
		if (!q)
			break;
	}
}

static void
spaces(Buf *b, int n)
{
	static const char sp[] = "                                ";

	while (n > 0) {
		int k = n < (int)sizeof sp - 1 ? n : (int)sizeof sp - 1;
		emitn(b, sp, (size_t)k);
		n -= k;
	}
}

/* The nearest xterm-256 colour: the 6x6x6 cube or the 24-step grey ramp. */
static int
xterm256(int32_t rgb)
{
	static const int lv[6] = { 0, 95, 135, 175, 215, 255 };
	int c[3] = { (rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255 }, q[3], i, j;
	int dc = 0, dg = 0, avg, gi, gl;

	for (i = 0; i < 3; i++) {
		q[i] = 0;
		for (j = 1; j < 6; j++)
			if (abs(lv[j] - c[i]) < abs(lv[q[i]] - c[i]))
				q[i] = j;
		dc += (lv[q[i]] - c[i]) * (lv[q[i]] - c[i]);
	}
	avg = (c[0] + c[1] + c[2]) / 3;
	gi = (avg - 8 + 5) / 10;
	gi = gi < 0 ? 0 : gi > 23 ? 23 : gi;
	gl = 8 + 10 * gi;
	for (i = 0; i < 3; i++)
		dg += (gl - c[i]) * (gl - c[i]);
	return dg < dc ? 232 + gi : 16 + 36 * q[0] + 6 * q[1] + q[2];
}

/* Black on light backgrounds, white on dark ones. */
static int
fg_for(int32_t rgb)
{
	int r = (rgb >> 16) & 255, g = (rgb >> 8) & 255, b = rgb & 255;

	return (299 * r + 587 * g + 114 * b) / 1000 >= 128 ? 16 : 231;
}

static void
rule(Block *b, const Grid *g, int w, int rw)
{
	size_t start = b->text.len;
	int c, i;

	spaces(&b->text, rw + 2);
	for (c = 0; c < g->cols; c++) {
		emit(&b->text, "+");
		for (i = 0; i < w + 2; i++)
			emitn(&b->text, "-", 1);
	}
	emit(&b->text, "+");
	endline(b, start);
}

/* One text line of one cell: "| v " with v aligned in w, coloured inside the bars. */
static void
cell_line(Buf *t, const Grid *g, const Cell *cell, int j, int w, int color)
{
	const char *s = j < cell->nline ? cell->line[j] : "";
	int len = (int)strlen(s), left, right;
	int32_t rgb = -1;

	if (color && !(cell->flags & CELL_EMPTY))
		rgb = scene_rgb(g->scheme, cell->color);
	left = g->align == VIZ_ALIGN_CENTER ? (w - len) / 2 : w - len;
	right = w - len - left;
	emit(t, "|");
	if (rgb >= 0)
		emit(t, "\033[38;5;%dm\033[48;5;%dm", fg_for(rgb), xterm256(rgb));
	spaces(t, 1 + left);
	emit(t, "%s", s);
	spaces(t, right + 1);
	if (rgb >= 0)
		emit(t, "\033[0m");
}

/*
** A grid as CuTe's print_layout draws it: the column indices "  %*d ",
** then per row a rule "+---" and the cells "| %*d ", the row index "%*d  "
** in front, a closing rule; then the grid's notes. w is the label width,
** rw the row-index width, nl the lines per cell, all shared by the scene
** so that panels above and beside each other line up.
*/
static void
grid_block(Block *b, const Grid *g, int w, int rw, int nl, int color)
{
	size_t start;
	int r, c, j;

	lines(b, &g->title);
	start = b->text.len;
	spaces(&b->text, rw + 2);
	for (c = 0; c < g->cols; c++)
		emit(&b->text, "  %*d ", w, c);
	endline(b, start);
	b->head = b->n;
	for (r = 0; r < g->rows; r++) {
		rule(b, g, w, rw);
		for (j = 0; j < nl; j++) {
			start = b->text.len;
			if (j == 0)
				emit(&b->text, "%*d  ", rw, r);
			else
				spaces(&b->text, rw + 2);
			for (c = 0; c < g->cols; c++)
				cell_line(&b->text, g, &g->cell[(size_t)r * (size_t)g->cols + (size_t)c], j, w, color);
			emit(&b->text, "|");
			endline(b, start);
		}
	}
	rule(b, g, w, rw);
	lines(b, &g->caption);
}

/* The label width, row-index width and lines per cell of the whole scene. */
static void
measure(const Scene *s, int *w, int *rw, int *nl)
{
	int i, k;

	*w = 1;
	*rw = 2;
	*nl = 1;
	for (i = 0; i < s->ngrid; i++) {
		const Grid *g = &s->grid[i];

		if (g->minw > *w)
			*w = g->minw;
		if (num_digits(g->cols - 1) > *w)
			*w = num_digits(g->cols - 1);
		if (num_digits(g->rows - 1) > *rw)
			*rw = num_digits(g->rows - 1);
		for (k = 0; k < g->rows * g->cols; k++) {
			const Cell *cell = &g->cell[k];
			int j;

			if (cell->nline > *nl)
				*nl = cell->nline;
			for (j = 0; j < cell->nline; j++)
				if ((int)strlen(cell->line[j]) > *w)
					*w = (int)strlen(cell->line[j]);
		}
	}
}

/*
** Place the blocks in the panel table: each panel column is as wide as its
** widest block, and in each panel row the blocks' first rules line up
** (shorter titles are padded above). Padding is written only before
** something visible, so lines carry no trailing blanks of their own.
*/
static void
place(Buf *out, const Scene *s, Block *blk)
{
	int colw[SCENE_GRIDS] = {0}, ncol = 0, nrow = 0, first = 1, pr, pc, i, y;

	for (i = 0; i < s->ngrid; i++) {
		const Grid *g = &s->grid[i];
		if (g->pcol + 1 > ncol)
			ncol = g->pcol + 1;
		if (g->prow + 1 > nrow)
			nrow = g->prow + 1;
		if (blk[i].width > colw[g->pcol])
			colw[g->pcol] = blk[i].width;
	}
	for (pr = 0; pr < nrow; pr++) {
		int head = 0, height = 0, any = 0;
		int at[SCENE_GRIDS];

		for (pc = 0; pc < ncol; pc++)
			at[pc] = -1;
		for (i = 0; i < s->ngrid; i++)
			if (s->grid[i].prow == pr) {
				at[s->grid[i].pcol] = i;
				if (blk[i].head > head)
					head = blk[i].head;
				any = 1;
			}
		if (!any)
			continue;
		for (pc = 0; pc < ncol; pc++)
			if (at[pc] >= 0 && head - blk[at[pc]].head + blk[at[pc]].n > height)
				height = head - blk[at[pc]].head + blk[at[pc]].n;
		if (!first)
			emit(out, "\n");
		first = 0;
		for (y = 0; y < height; y++) {
			int pad = 0;

			for (pc = 0; pc < ncol; pc++) {
				const Block *b = at[pc] >= 0 ? &blk[at[pc]] : NULL;
				int ly = b ? y - (head - b->head) : -1, w = 0;

				if (pc > 0)
					pad += GAP;
				if (b && ly >= 0 && ly < b->n && b->w[ly] > 0) {
					const char *p = b->text.s + b->off[ly];
					spaces(out, pad);
					emitn(out, p, (size_t)(strchr(p, '\n') - p));
					w = b->w[ly];
					pad = 0;
				}
				pad += colw[pc] - w;
			}
			emit(out, "\n");
		}
	}
}

/* A label on one line: its lines joined by two spaces. */
static void
one_line(Buf *out, const Buf *label)
{
	const char *p = label->s ? label->s : "";

	for (; *p; p++) {
		if (*p == '\n')
			emit(out, "  ");
		else
			emitn(out, p, 1);
	}
}

static void
edge_end(Buf *out, int node, const char *port)
{
	emit(out, "n%d%s%s", node, port[0] ? ":" : "", port);
}

/*
** A DAG in text (Graphviz draws it): a line per node, its label and the
** nodes its edges go to, "n4  mul  float32 (2, 2)  -> n2, n3 [1]", where
** [label] is an edge's label. Edges keep their order of creation.
*/
static void
dag(Buf *out, const Scene *s)
{
	int i, k;

	if (!s->nnode)
		return;
	emit(out, "%d node%s, %d edge%s (viz.render draws the graph)\n", s->nnode,
	     s->nnode == 1 ? "" : "s", s->nedge, s->nedge == 1 ? "" : "s");
	for (i = 0; i < s->nnode; i++) {
		int first = 1;

		emit(out, "  n%d  ", i);
		if (s->node[i].grid >= 0)
			emit(out, "(panel %d)", s->node[i].grid);
		else
			one_line(out, &s->node[i].label);
		for (k = 0; k < s->nedge; k++) {
			const SceneEdge *d = &s->edge[k];

			if (d->from != i)
				continue;
			emit(out, first ? "  -> " : ", ");
			first = 0;
			if (d->from_port[0])
				emit(out, "(:%s) ", d->from_port);
			edge_end(out, d->to, d->to_port);
			if (d->label.len) {
				emit(out, " [");
				one_line(out, &d->label);
				emit(out, "]");
			}
		}
		emit(out, "\n");
	}
}

int
term_render(Buf *out, const Scene *s, const VizOpts *o, Err *e)
{
	Block blk[SCENE_GRIDS];
	VizOpts d;
	size_t len0;
	int i, w, rw, nl, bad = 0;

	if (!out || !s)
		return err_set(e, "term_render: no %s", out ? "scene" : "output buffer");
	if (!o) {
		viz_opts_default(&d);
		o = &d;
	}
	len0 = out->len;
	measure(s, &w, &rw, &nl);
	for (i = 0; i < s->ngrid; i++) {
		block_init(&blk[i]);
		grid_block(&blk[i], &s->grid[i], w, rw, nl, o->color);
		bad |= blk[i].oom || blk[i].text.oom;
	}
	if (!bad) {
		Block t;

		block_init(&t);
		lines(&t, &s->title);
		emitn(out, t.text.s ? t.text.s : "", t.text.len);
		bad = t.oom || t.text.oom;
		block_free(&t);
		place(out, s, blk);
		dag(out, s);
		block_init(&t);
		lines(&t, &s->caption);
		emitn(out, t.text.s ? t.text.s : "", t.text.len);
		bad |= t.oom || t.text.oom;
		block_free(&t);
	}
	for (i = 0; i < s->ngrid; i++)
		block_free(&blk[i]);
	if (bad || out->oom) {
		out->len = len0;
		if (out->s)
			out->s[len0] = '\0';
		return err_set(e, "term_render: out of memory");
	}
	return 0;
}

/* Render the scene a cute_scene_* call filled (status < 0: it failed), then free it. */
static int
render(Buf *out, Scene *s, int status, const VizOpts *o, Err *e)
{
	int rc;

	if (status < 0)
		return -1;
	rc = term_render(out, s, o, e);
	scene_free(s);
	return rc;
}

int
viz_show_layout(Buf *out, const Layout *l, const VizOpts *o, Err *e)
{
	Scene s;

	if (!out)
		return err_set(e, "viz.layout: no output buffer");
	return render(out, &s, cute_scene_layout(&s, l, o, e), o, e);
}

int
viz_show_composed(Buf *out, const Composed *c, const VizOpts *o, Err *e)
{
	Scene s;

	if (!out)
		return err_set(e, "viz.composed: no output buffer");
	return render(out, &s, cute_scene_composed(&s, c, o, e), o, e);
}

int
viz_show_tv(Buf *out, const Layout *tv, int64_t m, int64_t n, const VizOpts *o, Err *e)
{
	Scene s;

	if (!out)
		return err_set(e, "viz.tv: no output buffer");
	return render(out, &s, cute_scene_tv(&s, tv, m, n, o, e), o, e);
}

int
viz_show_mma(Buf *out, const MmaAtom *a, const VizOpts *o, Err *e)
{
	Scene s;

	if (!out)
		return err_set(e, "viz.mma: no output buffer");
	return render(out, &s, cute_scene_mma(&s, a, o, e), o, e);
}

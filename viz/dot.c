/* dot.c - the DOT text of a scene: grids as HTML-like tables, panels in one table, DAG nodes and edges. */
#include "viz.h"

#include <string.h>

/* Sizes in points, for Helvetica at FONT_PT: a digit is about 0.56 em. */
enum { FONT_PT = 11, INDEX_PT = 8, CHAR_W = 8, LINE_H = 14, PAD = 4 };

/* Text inside an HTML-like label: the five characters HTML reserves. */
static void
html_text(Buf *b, const char *s, size_t n)
{
	size_t i, run = 0;

	for (i = 0; i < n; i++) {
		const char *rep = NULL;

		switch (s[i]) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default: break;
		}
		if (rep) {
			emitn(b, s + run, i - run);
			emit(b, "%s", rep);
			run = i + 1;
		}
	}
	emitn(b, s + run, n - run);
}

/* '\n'-separated lines as HTML text, left-aligned lines when left. */
static void
html_lines(Buf *b, const Buf *src, int left)
{
	const char *p, *q;

	if (!src->s)
		return;
	for (p = src->s;; p = q + 1) {
		q = strchr(p, '\n');
		html_text(b, p, q ? (size_t)(q - p) : strlen(p));
		if (left)
			emit(b, "<BR ALIGN=\"LEFT\"/>");
		else if (q)
			emit(b, "<BR/>");
		if (!q)
			break;
	}
}

/*
** Notes wider than their grid would widen it (Graphviz spreads a wide
** cell's width over the columns it spans, and a nested table fills its
** cell), so a grid's title and notes are broken at spaces into lines of
** at most width characters.
*/
static void
html_wrapped(Buf *b, const Buf *src, int width)
{
	const char *p, *q;

	if (!src->s)
		return;
	for (p = src->s;; p = q + 1) {
		size_t n;

		q = strchr(p, '\n');
		n = q ? (size_t)(q - p) : strlen(p);
		while (n > (size_t)width) {
			size_t cut = (size_t)width;

			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0)
				for (cut = (size_t)width; cut < n && p[cut] != ' '; cut++)
					;
			if (cut >= n)
				break;
			html_text(b, p, cut);
			emit(b, "<BR ALIGN=\"LEFT\"/>");
			p += cut + 1;
			n -= cut + 1;
		}
		html_text(b, p, n);
		emit(b, "<BR ALIGN=\"LEFT\"/>");
		if (!q)
			break;
	}
}

/* A DOT double-quoted string; '\n' becomes dot's centred line break. */
static void
dot_string(Buf *b, const char *s, int lines)
{
	emit(b, "\"");
	for (; *s; s++) {
		if (*s == '"')
			emit(b, "\\\"");
		else if (*s == '\\' && lines)
			emit(b, "\\\\");
		else if (*s == '\n' && lines)
			emit(b, "\\n");
		else
			emitn(b, s, 1);
	}
	emit(b, "\"");
}

static void
rgb_attr(Buf *b, const char *name, int32_t rgb)
{
	emit(b, " %s=\"#%06x\"", name, (unsigned)rgb & 0xffffff);
}

/* Black text on light fills, white on dark ones (CuTe's darkest grey is 0x4d4d4d). */
static int
dark(int32_t rgb)
{
	int r = (rgb >> 16) & 255, g = (rgb >> 8) & 255, bl = rgb & 255;

	return (299 * r + 587 * g + 114 * bl) / 1000 < 128;
}

static int
grid_width(const Grid *g)
{
	int w = g->minw > 1 ? g->minw : 1, k, j, n;

	n = num_digits(g->cols - 1);
	if (n > w)
		w = n;
	for (k = 0; k < g->rows * g->cols; k++)
		for (j = 0; j < g->cell[k].nline; j++) {
			n = (int)strlen(g->cell[k].line[j]);
			if (n > w)
				w = n;
		}
	return w;
}

static int
grid_lines(const Grid *g)
{
	int nl = 1, k;

	for (k = 0; k < g->rows * g->cols; k++)
		if (g->cell[k].nline > nl)
			nl = g->cell[k].nline;
	return nl;
}

/*
** A grid as CuTe's print_latex draws one: a box per cell with its label
** and fill, column indices above, row indices to the left, small and grey;
** the title above and the notes below. Every column is at least as wide as
** the widest label and every row as high as the most lines, so that the
** cells are uniform as in CuTe's pictures.
*/
static void
grid_table(Buf *b, const Grid *g)
{
	int w = grid_width(g), nl = grid_lines(g), r, c, j, wrap;
	int cw = w * CHAR_W + 2 * PAD, ch = nl * LINE_H + PAD;

	if (cw < 22)
		cw = 22;
	/* characters of the notes' font that fit the grid's width, at least 36 */
	wrap = (g->cols * cw + 24) * 10 / 56;
	if (wrap < 36)
		wrap = 36;
	/* Title and notes sit in a table around the grid's, so that a note wider
	** than the grid does not widen one of its columns. */
	if (g->title.len || g->caption.len)
		emit(b, "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"1\">\n");
	if (g->title.len) {
		emit(b, "<TR><TD ALIGN=\"LEFT\">");
		html_wrapped(b, &g->title, wrap * 10 / 11);
		emit(b, "</TD></TR>\n");
	}
	if (g->title.len || g->caption.len)
		emit(b, "<TR><TD ALIGN=\"LEFT\">");
	emit(b, "<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"1\" ALIGN=\"LEFT\">\n");
	emit(b, "<TR><TD BORDER=\"0\"></TD>");
	for (c = 0; c < g->cols; c++)
		emit(b, "<TD BORDER=\"0\" WIDTH=\"%d\"><FONT POINT-SIZE=\"%d\" COLOR=\"#777777\">%d</FONT></TD>",
		     cw, INDEX_PT, c);
	emit(b, "</TR>\n");
	for (r = 0; r < g->rows; r++) {
		emit(b, "<TR><TD BORDER=\"0\" ALIGN=\"RIGHT\" HEIGHT=\"%d\"><FONT POINT-SIZE=\"%d\" "
		     "COLOR=\"#777777\">%d</FONT></TD>", ch, INDEX_PT, r);
		for (c = 0; c < g->cols; c++) {
			const Cell *cell = &g->cell[(size_t)r * (size_t)g->cols + (size_t)c];
			int32_t rgb = cell->flags & CELL_EMPTY ? -1 : scene_rgb(g->scheme, cell->color);

			emit(b, "<TD");
			if (rgb >= 0)
				rgb_attr(b, "BGCOLOR", rgb);
			if (cell->port[0]) {
				emit(b, " PORT=\"");
				html_text(b, cell->port, strlen(cell->port));
				emit(b, "\"");
			}
			emit(b, ">");
			if (rgb >= 0 && dark(rgb) && cell->nline)
				emit(b, "<FONT COLOR=\"#ffffff\">");
			for (j = 0; j < cell->nline; j++) {
				if (j)
					emit(b, "<BR/>");
				html_text(b, cell->line[j], strlen(cell->line[j]));
			}
			if (rgb >= 0 && dark(rgb) && cell->nline)
				emit(b, "</FONT>");
			emit(b, "</TD>");
		}
		emit(b, "</TR>\n");
	}
	emit(b, "</TABLE>");
	if (g->title.len || g->caption.len)
		emit(b, "</TD></TR>\n");
	if (g->caption.len) {
		emit(b, "<TR><TD ALIGN=\"LEFT\"><FONT POINT-SIZE=\"%d\">", FONT_PT - 1);
		html_wrapped(b, &g->caption, wrap);
		emit(b, "</FONT></TD></TR>\n");
	}
	if (g->title.len || g->caption.len)
		emit(b, "</TABLE>");
}

static int
attached(const Scene *s, int grid)
{
	int i;

	for (i = 0; i < s->nnode; i++)
		if (s->node[i].grid == grid)
			return 1;
	return 0;
}

/*
** The panel table: the grids at their (prow, pcol), as the terminal places them, so an MMA atom has B above C and A
** to the left of C. Returns 0 when no grid is left for it.
*/
static int
panels(Buf *b, const Scene *s)
{
	int nrow = 0, ncol = 0, any = 0, i, pr, pc;

	for (i = 0; i < s->ngrid; i++) {
		if (attached(s, i))
			continue;
		any = 1;
		if (s->grid[i].prow + 1 > nrow)
			nrow = s->grid[i].prow + 1;
		if (s->grid[i].pcol + 1 > ncol)
			ncol = s->grid[i].pcol + 1;
	}
	if (!any)
		return 0;
	emit(b, "panels [shape=plaintext, margin=0, label=<\n"
	     "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"12\" CELLPADDING=\"0\">\n");
	for (pr = 0; pr < nrow; pr++) {
		int used = 0;

		for (i = 0; i < s->ngrid; i++)
			used |= s->grid[i].prow == pr && !attached(s, i);
		if (!used)
			continue;
		emit(b, "<TR>");
		for (pc = 0; pc < ncol; pc++) {
			int at = -1;

			for (i = 0; i < s->ngrid; i++)
				if (s->grid[i].prow == pr && s->grid[i].pcol == pc && !attached(s, i))
					at = i;
			emit(b, "<TD VALIGN=\"BOTTOM\" ALIGN=\"LEFT\">");
			if (at >= 0)
				grid_table(b, &s->grid[at]);
			emit(b, "</TD>");
		}
		emit(b, "</TR>\n");
	}
	emit(b, "</TABLE>>];\n");
	return 1;
}

static void
node(Buf *b, const Scene *s, int i)
{
	const SceneNode *n = &s->node[i];
	const char *label = n->label.s ? n->label.s : "";

	emit(b, "n%d [", i);
	if (n->grid >= 0) {
		emit(b, "shape=plaintext, margin=0, label=<");
		grid_table(b, &s->grid[n->grid]);
		emit(b, ">");
	} else if (n->kind == VIZ_NODE_RECORD) {
		emit(b, "shape=record, label=");
		dot_string(b, label, 0);
	} else if (n->kind == VIZ_NODE_HTML) {
		/* A table is the node; anything else goes in a box. */
		emit(b, "shape=%s, label=<%s>", strncmp(label, "<TABLE", 6) == 0 ||
		     strncmp(label, "<table", 6) == 0 ? "plaintext, margin=0" : "box", label);
	} else {
		emit(b, "shape=%s, label=", n->shape[0] ? n->shape : "box");
		dot_string(b, label, 1);
	}
	if (n->fill >= 0 && n->grid < 0) {
		emit(b, ", style=\"filled%s\", fillcolor=\"#%06x\"",
		     n->kind == VIZ_NODE_TEXT && !n->shape[0] ? ",rounded" : "", (unsigned)n->fill & 0xffffff);
		if (dark(n->fill))
			emit(b, ", fontcolor=\"#ffffff\"");
	} else if (n->kind == VIZ_NODE_TEXT && !n->shape[0] && n->grid < 0) {
		emit(b, ", style=\"rounded\"");
	}
	emit(b, "];\n");
}

static void
endpoint(Buf *b, int n, const char *port)
{
	emit(b, "n%d", n);
	if (port[0]) {
		emit(b, ":");
		dot_string(b, port, 0);
	}
}

static int
check(const Scene *s, Err *e)
{
	int i;

	for (i = 0; i < s->ngrid; i++) {
		const Grid *g = &s->grid[i];

		if (g->rows > VIZ_GV_MAX_DIM || g->cols > VIZ_GV_MAX_DIM)
			return err_set(e, "viz.render: panel %d is a %dx%d grid; Graphviz pictures show at most "
			               "%dx%d cells (pass max_rows and max_cols of at most %d)", i, g->rows,
			               g->cols, VIZ_GV_MAX_DIM, VIZ_GV_MAX_DIM, VIZ_GV_MAX_DIM);
	}
	if (s->nnode > VIZ_GV_MAX_NODES)
		return err_set(e, "viz.render: %d nodes are more than %d", s->nnode, VIZ_GV_MAX_NODES);
	for (i = 0; i < s->nnode; i++)
		if (s->node[i].grid >= s->ngrid)
			return err_set(e, "viz: node %d draws grid %d of %d", i, s->node[i].grid, s->ngrid);
	for (i = 0; i < s->nedge; i++)
		if (s->edge[i].from < 0 || s->edge[i].from >= s->nnode ||
		    s->edge[i].to < 0 || s->edge[i].to >= s->nnode)
			return err_set(e, "viz: edge %d joins nodes outside 0..%d", i, s->nnode - 1);
	return 0;
}

int
dot_render(Buf *out, const Scene *s, Err *e)
{
	size_t len0;
	int i, grids;

	if (!out || !s)
		return err_set(e, "dot_render: no %s", out ? "scene" : "output buffer");
	if (check(s, e) < 0)
		return -1;
	len0 = out->len;
	emit(out, "digraph tessel {\n"
	     "graph [rankdir=%s, pad=0.2, nodesep=0.35, ranksep=%s, fontname=\"Helvetica\", fontsize=%d];\n"
	     "node [fontname=\"Helvetica\", fontsize=%d];\n"
	     "edge [fontname=\"Helvetica\", fontsize=%d, color=\"#444444\"];\n",
	     strcmp(s->rankdir, "LR") == 0 ? "LR" : "TB", s->nnode ? "0.45" : "0.1", FONT_PT + 2,
	     FONT_PT, FONT_PT - 2);
	grids = panels(out, s);
	/*
	** The scene's title is the graph's label, above everything; its notes
	** are a node of their own under the panels. Neither is a cell of the
	** panel table, whose width would then follow theirs. Without panels
	** the notes join the label.
	*/
	if (s->title.len || (!grids && s->caption.len)) {
		emit(out, "labelloc=t; labeljust=l; label=<");
		html_lines(out, &s->title, 1);
		if (!grids && s->caption.len) {
			emit(out, "<FONT POINT-SIZE=\"%d\">", FONT_PT);
			html_lines(out, &s->caption, 1);
			emit(out, "</FONT>");
		}
		emit(out, ">;\n");
	}
	if (grids && s->caption.len) {
		emit(out, "notes [shape=plaintext, margin=0, label=<");
		html_lines(out, &s->caption, 1);
		emit(out, ">];\npanels -> notes [style=invis, minlen=1];\n");
	}
	for (i = 0; i < s->nnode; i++)
		node(out, s, i);
	for (i = 0; i < s->nedge; i++) {
		const SceneEdge *d = &s->edge[i];

		endpoint(out, d->from, d->from_port);
		emit(out, " -> ");
		endpoint(out, d->to, d->to_port);
		if (d->label.len || d->dashed) {
			emit(out, " [");
			if (d->label.len) {
				emit(out, "label=");
				dot_string(out, d->label.s, 1);
			}
			if (d->dashed)
				emit(out, "%sstyle=dashed", d->label.len ? ", " : "");
			emit(out, "]");
		}
		emit(out, ";\n");
	}
	emit(out, "}\n");
	if (out->oom) {
		out->len = len0;
		if (out->s)
			out->s[len0] = '\0';
		return err_set(e, "dot_render: out of memory");
	}
	return 0;
}

/* scene.c - the scene model shared by the renderers: grids of labelled, coloured cells placed as panels. */
#include "viz.h"

#include "../util/limits.h"

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

/* Warps: the pastels a step stronger, so that a warp reads as one block. */
static const int32_t warps[8] = {
	0x8fb8ff, 0x8fe08f, 0xffd75f, 0xff8f8f, 0xc39bff, 0x5fd7d7, 0xffaf5f, 0xd7d7d7
};

/* Devices: Tableau 10's hues, lightened so that black text stays readable. */
static const int32_t devices[8] = {
	0x9ecae1, 0xfdae6b, 0xa1d99b, 0xfc9272, 0xbcbddc, 0xd6b59c, 0xf4b6d9, 0xc7c7c7
};

static const char *const scheme_names[VIZ_NSCHEME] = {
	"auto", "none", "value", "thread", "bank", "warp", "device", "rgb"
};

const char *
viz_scheme_name(int scheme)
{
	return scheme >= 0 && scheme < VIZ_NSCHEME ? scheme_names[scheme] : "?";
}

int
viz_scheme_parse(const char *name)
{
	int i;

	for (i = 0; i < VIZ_NSCHEME; i++)
		if (i != VIZ_SCHEME_RGB && strcmp(name, scheme_names[i]) == 0)
			return i;
	return -1;
}

int
viz_color_parse(const char *s, size_t n, int32_t *rgb)
{
	int32_t v = 0;
	size_t i;

	/* exactly '#' and 3 or 6 hex digits: strtol would take signs, spaces and 0x */
	if (!s || (n != 4 && n != 7) || s[0] != '#')
		return -1;
	for (i = 1; i < n; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		      : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	if (n == 4)
		v = (v >> 8 & 15) * 0x110000 + (v >> 4 & 15) * 0x1100 + (v & 15) * 0x11;
	*rgb = v;
	return 0;
}

int
viz_dtype_bytes(const char *dtype)
{
	static const struct { const char *name; int bytes; } t[] = {
		{ "int8", 1 }, { "uint8", 1 }, { "i8", 1 }, { "u8", 1 }, { "s8", 1 }, { "bool", 1 },
		{ "fp8", 1 }, { "e4m3", 1 }, { "e5m2", 1 }, { "float8", 1 },
		{ "int16", 2 }, { "uint16", 2 }, { "i16", 2 }, { "u16", 2 }, { "half", 2 },
		{ "float16", 2 }, { "f16", 2 }, { "fp16", 2 }, { "bfloat16", 2 }, { "bf16", 2 },
		{ "int32", 4 }, { "uint32", 4 }, { "i32", 4 }, { "u32", 4 }, { "float", 4 },
		{ "float32", 4 }, { "f32", 4 }, { "fp32", 4 }, { "tf32", 4 },
		{ "int64", 8 }, { "uint64", 8 }, { "i64", 8 }, { "u64", 8 }, { "double", 8 },
		{ "float64", 8 }, { "f64", 8 }, { "fp64", 8 }, { "int128", 16 }, { "uint128", 16 },
	};
	size_t i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(dtype, t[i].name) == 0)
			return t[i].bytes;
	return -1;
}

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
	s->nnode = s->nedge = s->capnode = s->capedge = 0;
	s->node = NULL;
	s->edge = NULL;
	strcpy(s->rankdir, "TB");
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
	for (i = 0; i < s->nnode; i++)
		buf_free(&s->node[i].label);
	for (i = 0; i < s->nedge; i++)
		buf_free(&s->edge[i].label);
	free(s->node);
	free(s->edge);
	s->nnode = s->nedge = s->capnode = s->capedge = 0;
	s->node = NULL;
	s->edge = NULL;
}

Grid *
scene_grid(Scene *s, int rows, int cols, int prow, int pcol, Err *e)
{
	Grid *g;
	int64_t total;
	int i;

	if (s->ngrid >= SCENE_GRIDS)
		return err_set(e, "scene: more than %d panels", SCENE_GRIDS), NULL;
	if (prow < 0 || pcol < 0 || prow >= SCENE_GRIDS || pcol >= SCENE_GRIDS)
		return err_set(e, "scene: panel (%d,%d) is outside the %dx%d panel table",
		               prow, pcol, SCENE_GRIDS, SCENE_GRIDS), NULL;
	if (rows < 1 || cols < 1 || (int64_t)rows * cols > VIZ_MAX_CELLS)
		return err_set(e, "scene: a %dx%d grid is empty or has more than %d cells",
		               rows, cols, VIZ_MAX_CELLS), NULL;
	/* the scene's cells so far and this grid's, against the pixels limit */
	total = (int64_t)rows * cols;
	for (i = 0; i < s->ngrid; i++)
		total += (int64_t)s->grid[i].rows * s->grid[i].cols;
	if (limits_check(LIMIT_PIXELS, total, "a scene", e) < 0)
		return NULL;
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
	case VIZ_SCHEME_WARP: return warps[color % 8];
	case VIZ_SCHEME_DEVICE: return devices[color % 8];
	case VIZ_SCHEME_RGB: return color & 0xffffff;
	default: return -1;
	}
}

static int
mod8(int64_t v)
{
	return (int)(((v % 8) + 8) % 8);
}

/* Banks in unsigned arithmetic: a negative or huge value gets some bank, never UB. */
int
scene_cell_color(const Grid *g, const Cell *c, int scheme, int elem_bytes)
{
	int64_t thr = c->value;

	if (c->flags & CELL_EMPTY)
		return VIZ_NOCOLOR;
	switch (scheme) {
	case VIZ_SCHEME_VALUE: return mod8(g->tv ? c->aux : c->value);
	case VIZ_SCHEME_THREAD: return mod8(thr);
	case VIZ_SCHEME_WARP: return mod8(thr < 0 ? -1 - (-1 - thr) / 32 : thr / 32);
	case VIZ_SCHEME_DEVICE: return mod8(thr);
	case VIZ_SCHEME_BANK:
		if (g->tv)
			return VIZ_NOCOLOR;
		return (int)((uint64_t)c->value * (uint64_t)(elem_bytes > 0 ? elem_bytes : 4) / 4 % 32);
	default: return VIZ_NOCOLOR;
	}
}

int
scene_colorize(Scene *s, VizColorFn fn, void *ctx, Err *e)
{
	int i, r, c;

	for (i = 0; i < s->ngrid; i++) {
		Grid *g = &s->grid[i];

		g->scheme = VIZ_SCHEME_RGB;
		for (r = 0; r < g->rows; r++)
			for (c = 0; c < g->cols; c++) {
				Cell *cell = scene_cell(g, r, c);
				int32_t rgb = -1;

				if (fn(ctx, g, r, c, cell, &rgb, e) < 0)
					return -1;
				cell->color = rgb < 0 ? VIZ_NOCOLOR : (int)(rgb & 0xffffff);
			}
	}
	return 0;
}

int
scene_take_grid(Scene *dst, Scene *src, int i, Err *e)
{
	if (i < 0 || i >= src->ngrid || !src->grid[i].cell)
		return err_set(e, "scene: no grid %d to take", i);
	if (dst->ngrid >= SCENE_GRIDS)
		return err_set(e, "scene: more than %d panels", SCENE_GRIDS);
	dst->grid[dst->ngrid] = src->grid[i];
	grid_init(&src->grid[i]);
	return dst->ngrid++;
}

void
scene_name_ports(Grid *g)
{
	int r, c;

	/* rows and columns are at most VIZ_MAX_CELLS, so "r%dc%d" fits in VIZ_PORT */
	for (r = 0; r < g->rows; r++)
		for (c = 0; c < g->cols; c++)
			snprintf(scene_cell(g, r, c)->port, VIZ_PORT, "r%dc%d", r & 0x3ffff, c & 0x3ffff);
}

void
scene_unlabel(Scene *s)
{
	int i, k;

	for (i = 0; i < s->ngrid; i++)
		for (k = 0; k < s->grid[i].rows * s->grid[i].cols; k++)
			s->grid[i].cell[k].nline = 0;
}

static void
copy_port(char *dst, const char *src)
{
	snprintf(dst, VIZ_PORT, "%s", src ? src : "");
}

int
scene_node(Scene *s, int kind, const char *label, Err *e)
{
	SceneNode *n;

	if (kind < VIZ_NODE_TEXT || kind > VIZ_NODE_HTML)
		return err_set(e, "scene: unknown node kind %d", kind);
	if (s->nnode >= VIZ_GV_MAX_NODES)
		return err_set(e, "scene: more than %d nodes", VIZ_GV_MAX_NODES);
	if (s->nnode == s->capnode) {
		int cap = s->capnode ? 2 * s->capnode : 16;
		SceneNode *p = realloc(s->node, (size_t)cap * sizeof *p);

		if (!p)
			return err_set(e, "scene: out of memory for %d nodes", cap);
		s->node = p;
		s->capnode = cap;
	}
	n = &s->node[s->nnode];
	n->kind = kind;
	buf_init(&n->label);
	emit(&n->label, "%s", label ? label : "");
	n->grid = -1;
	n->fill = -1;
	n->shape[0] = '\0';
	if (n->label.oom) {
		buf_free(&n->label);
		return err_set(e, "scene: out of memory for a node label");
	}
	return s->nnode++;
}

int
scene_edge(Scene *s, int from, const char *from_port, int to, const char *to_port,
           const char *label, Err *e)
{
	SceneEdge *d;

	if (from < 0 || from >= s->nnode || to < 0 || to >= s->nnode)
		return err_set(e, "scene: edge %d -> %d names a node outside 0..%d", from, to, s->nnode - 1);
	if (s->nedge >= 4 * VIZ_GV_MAX_NODES)
		return err_set(e, "scene: more than %d edges", 4 * VIZ_GV_MAX_NODES);
	if (s->nedge == s->capedge) {
		int cap = s->capedge ? 2 * s->capedge : 16;
		SceneEdge *p = realloc(s->edge, (size_t)cap * sizeof *p);

		if (!p)
			return err_set(e, "scene: out of memory for %d edges", cap);
		s->edge = p;
		s->capedge = cap;
	}
	d = &s->edge[s->nedge];
	d->from = from;
	d->to = to;
	copy_port(d->from_port, from_port);
	copy_port(d->to_port, to_port);
	buf_init(&d->label);
	emit(&d->label, "%s", label ? label : "");
	d->dashed = 0;
	if (d->label.oom) {
		buf_free(&d->label);
		return err_set(e, "scene: out of memory for an edge label");
	}
	s->nedge++;
	return 0;
}

int
scene_oom(const Scene *s)
{
	int i, bad = s->title.oom || s->caption.oom;

	for (i = 0; i < s->ngrid; i++)
		bad |= s->grid[i].title.oom || s->grid[i].caption.oom;
	for (i = 0; i < s->nnode; i++)
		bad |= s->node[i].label.oom;
	for (i = 0; i < s->nedge; i++)
		bad |= s->edge[i].label.oom;
	return bad;
}

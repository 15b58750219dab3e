/* viz.h - pictures: a scene model (grids of cells placed as panels, DAGs) and its terminal and DOT renderers. */
#ifndef TESSEL_VIZ_H
#define TESSEL_VIZ_H

#include <stdint.h>

#include "../layout/layout.h"
#include "../util/buf.h"

/*
** The room viz/ (docs/architecture.md): scenes of layouts (CuTe, Axe, LEGO),
** expressions, tensors and kernels, drawn on the terminal (term.c) or as DOT
** (dot.c) for Graphviz (gv.h, gv.c: the only file that knows Graphviz). It may
** use interp/kernel/ and everything below it (layout/, interp/tensor/,
** interp/ir/, util/), nothing of schedules, backends or Lua.
*/

/*
** A picture is built in two steps, so that every renderer (the terminal,
** DOT text for Graphviz: dot.c here, gv.h to lay it out) draws the same thing:
**   1. cute_scene_* fills a Scene from a layout, a composed layout, a TV
**      layout or an MMA atom: which cells exist, what they say, which
**      colour index they carry, which notes go with them;
**   2. a renderer (term_render, dot_render) turns the Scene into text.
** viz_show_* do both in one call and are what the Lua binding wants.
**
** Colour indices are renderer-neutral: a cell holds an index into the
** palette of its grid's scheme, and scene_rgb() turns (scheme, index) into
** 0xRRGGBB, which each renderer maps to what it can show.
*/

/* Colour schemes (VizOpts.scheme, Grid.scheme). */
enum {
	VIZ_SCHEME_AUTO,    /* by kind: layout by value, composed by bank, TV/MMA by thread */
	VIZ_SCHEME_NONE,    /* no colour */
	VIZ_SCHEME_VALUE,   /* value mod 8 in CuTe's print_latex greys (TikzColor_BWx8);
	                    ** for TV/MMA cells the value index v */
	VIZ_SCHEME_THREAD,  /* mod 8 in CuTe's TV pastels (TikzColor_TV): the thread of a
	                    ** TV/MMA cell, the value of a plain layout (a thread map) */
	VIZ_SCHEME_BANK,    /* shared-memory bank of the value, 32 hues (layouts only) */
	VIZ_SCHEME_WARP,    /* the warp (thread / 32) mod 8 in stronger pastels: the thread of a
	                    ** TV/MMA cell, the value of a plain layout */
	VIZ_SCHEME_DEVICE,  /* a device index mod 8 in a third palette: the value of a plain layout,
	                    ** the thread of a TV cell (a device map); Axe fills it from its axis */
	VIZ_SCHEME_RGB,     /* the colour index is 0xRRGGBB itself (scene_colorize, a user function) */
	VIZ_NSCHEME
};

/* Limits: options beyond them are refused, inputs beyond them are refused
** or elided, never allocated. */
enum {
	VIZ_MAX_DIM = 4096,          /* max_rows, max_cols at most this */
	VIZ_MAX_CELLS = 1 << 18,     /* max_rows * max_cols at most this */
	VIZ_ENUM_LIMIT = 1 << 22,    /* most (thr,val) pairs or elements enumerated */
	VIZ_LINES = 3,               /* label lines per cell */
	VIZ_LABEL = 24,              /* bytes per label line, NUL included */
	VIZ_PORT = 16,               /* bytes of a Graphviz port name, NUL included */
	SCENE_GRIDS = 16,            /* panels per scene */
	VIZ_GV_MAX_DIM = 256,        /* Graphviz: at most this many rows and columns per grid */
	VIZ_GV_MAX_NODES = 4096      /* Graphviz: at most this many DAG nodes (and 4x edges) */
};

enum { VIZ_NOCOLOR = -1 };

/* Cell flags. */
enum {
	CELL_EMPTY = 1,     /* nothing maps here (TV/MMA): drawn blank */
	CELL_SHARED = 2,    /* several (thr,val) map here; the first is shown */
	CELL_MARK = 4       /* emphasis, reserved for renderers that can draw it */
};

typedef struct VizOpts {
	int color;          /* 1: ANSI 256-colour escapes (the caller decides, e.g. isatty) */
	int max_rows;       /* show at most this many rows per grid, elide the rest */
	int max_cols;       /* ... and columns */
	int elem_bytes;     /* element size for banks: 1, 2, 4, 8 or 16 */
	int scheme;         /* VIZ_SCHEME_* */
	int compact;        /* TV/MMA cells on one line, "T3V1", instead of "T3" over "V1" */
} VizOpts;

/*
** A cell. value is the number shown for layouts, the thread for TV/MMA
** cells (then aux is the value index). Unused label lines are "".
*/
typedef struct Cell {
	int nline;
	char line[VIZ_LINES][VIZ_LABEL];
	int color;          /* palette index in the grid's scheme, or VIZ_NOCOLOR */
	int flags;          /* CELL_* */
	int64_t value, aux;
	char port[VIZ_PORT];  /* Graphviz port name, "" for none (reserved) */
} Cell;

/*
** A grid: rows x cols cells (the top-left part of an nrows x ncols whole,
** when elided), row-major. Row r is headed by the index r on axis rowaxis,
** column c by c on colaxis. title and caption hold '\n'-separated lines
** (no trailing newline); the caption carries the notes ("elided: ...").
** (prow, pcol) places the grid in the scene's table of panels.
*/
enum { VIZ_ALIGN_RIGHT, VIZ_ALIGN_CENTER };

typedef struct Grid {
	Buf title, caption;
	int rows, cols;
	int64_t nrows, ncols;
	char rowaxis[8], colaxis[8];
	int scheme;         /* the palette the cells' colour indices name */
	int align;          /* VIZ_ALIGN_*: labels right-aligned (numbers) or centred */
	int minw;           /* minimum label width, e.g. digits of the cosize as CuTe */
	int prow, pcol;
	Cell *cell;
	int tv;             /* 1: cells are (thr,val) pairs, value the thread and aux the value index */
} Grid;

/*
** A scene: one or more grids placed in a small table of panels, with a
** title (first) and a caption (last). An MMA atom uses B at (0,1) drawn
** K x N, A at (1,0) drawn M x K, C at (1,1) drawn M x N, as CuTe's
** print_latex places them. A Scene owns its memory: scene_free it.
*/
/*
** A DAG: nodes and edges, drawn by Graphviz's dot (the terminal lists them).
** A node's label is plain text (lines split at '\n'), a record label
** ("{<in>a|b}", shape record, fields with <port> names) or an HTML-like
** label (the text between dot's < >), or a grid of the scene (grid >= 0:
** that grid is drawn as the node and left out of the panel table). An edge
** joins two nodes, optionally at ports (a record field, an HTML PORT, a
** cell's port), with an optional label. A scene may hold grids and a DAG:
** the panel table is then one more node.
*/
enum { VIZ_NODE_TEXT, VIZ_NODE_RECORD, VIZ_NODE_HTML };

typedef struct SceneNode {
	int kind;           /* VIZ_NODE_* */
	Buf label;
	int grid;           /* index of a grid drawn as this node, or -1 */
	int32_t fill;       /* 0xRRGGBB, or -1 for none */
	char shape[16];     /* a Graphviz shape for text labels ("box", "ellipse", ...), "" for box */
} SceneNode;

typedef struct SceneEdge {
	int from, to;       /* node indices */
	char from_port[VIZ_PORT], to_port[VIZ_PORT];
	Buf label;
	int dashed;
} SceneEdge;

typedef struct Scene {
	Buf title, caption;
	int ngrid;
	Grid grid[SCENE_GRIDS];
	int nnode, nedge, capnode, capedge;
	SceneNode *node;
	SceneEdge *edge;
	char rankdir[4];    /* "TB" (default) or "LR": the direction of the DAG */
} Scene;

/*
** A colour function: the colour of cell (r,c) of grid g, 0xRRGGBB or -1
** for none, in *rgb; 0, or -1 with a message (which stops colouring).
*/
typedef int (*VizColorFn)(void *ctx, const Grid *g, int r, int c, const Cell *cell,
                          int32_t *rgb, Err *e);

/* scene.c */
void viz_opts_default(VizOpts *o);
/* Check options (NULL means the defaults): 0, or -1 with a message. */
int viz_opts_check(const VizOpts *o, const char *op, Err *e);
void scene_init(Scene *s);
/* Free everything and leave s empty; NULL-safe and idempotent. */
void scene_free(Scene *s);
/* Add a rows x cols grid at panel (prow, pcol), its cells blank and
** uncoloured, nrows/ncols set to rows/cols. NULL with a message on failure. */
Grid *scene_grid(Scene *s, int rows, int cols, int prow, int pcol, Err *e);
Cell *scene_cell(Grid *g, int r, int c);
/* Append a label line (printf-style), truncated to VIZ_LABEL-1 bytes;
** ignored once the cell has VIZ_LINES lines. */
void scene_label(Cell *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append a note line to a Buf of '\n'-separated lines (a title or caption). */
void scene_note(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 0xRRGGBB of palette entry color in scheme, or -1 for no colour. */
int32_t scene_rgb(int scheme, int color);
/* Nonzero when some text of the scene could not be allocated. */
int scene_oom(const Scene *s);
/* Add a node (VIZ_NODE_*) with a label; its index, or -1 with a message. */
int scene_node(Scene *s, int kind, const char *label, Err *e);
/* Add an edge between nodes (ports and label may be NULL); 0 or -1. */
int scene_edge(Scene *s, int from, const char *from_port, int to, const char *to_port,
               const char *label, Err *e);
/* Move grid i of src to the end of dst's grids (its panel place kept);
** src's grid i is left empty (0x0), so free src next. The new index, or -1. */
int scene_take_grid(Scene *dst, Scene *src, int i, Err *e);
/* Name the port of every cell of grid g "rRcC" (r3c1), so edges can point at cells. */
void scene_name_ports(Grid *g);
/* Recolour every cell of every grid by fn (grids switch to VIZ_SCHEME_RGB). */
int scene_colorize(Scene *s, VizColorFn fn, void *ctx, Err *e);
/* The colour index of a cell in scheme (VIZ_SCHEME_*) from its value and
** aux (g->tv says which is the thread), as every scene builder colours. */
int scene_cell_color(const Grid *g, const Cell *c, int scheme, int elem_bytes);
/* Blank every cell's label (colour only pictures). */
void scene_unlabel(Scene *s);
/* The name of a scheme ("value", "thread", ...) and back (-1: unknown). */
const char *viz_scheme_name(int scheme);
int viz_scheme_parse(const char *name);
/* The element size of a dtype name ("f16", "float32", "int8", ...), or -1. */
int viz_dtype_bytes(const char *dtype);
/* "#rrggbb" or "#rgb" (n bytes, exactly) as 0xRRGGBB in *rgb: 0, or -1. */
int viz_color_parse(const char *s, size_t n, int32_t *rgb);

/* cute_scene.c
**
** Each fills s (which need not be initialized) and returns 0, or returns
** -1 with a message and leaves s empty. Only the cells shown are
** evaluated; a layout of 2^40 elements costs what its picture costs.
**
** cute_scene_layout: rank 2: cell (m,n) = l(m,n), m and n 1-D coordinates
**   of modes 0 and 1 (CuTe's print_layout); rank 1: one row; rank >= 3:
**   modes 1.. grouped into the columns (said in the caption); rank 0: one
**   cell. Colour by value (default).
** cute_scene_composed: the same grid of swizzled values, coloured by bank
**   (default), bank = (value*elem_bytes/4) % 32. The caption reports the
**   worst bank conflict: among each 32 consecutive cells of the whole grid
**   in row-major order (one warp access), the largest number of distinct
**   4-byte words in one bank (an element wider than 4 bytes counts all its
**   words): "worst access: 4-way bank conflict" or "conflict-free".
**   A plain layout with scheme VIZ_SCHEME_BANK gets the same note.
** cute_scene_tv: tv maps (thr,val) to m + n*M in the M x N tile; the cell
**   of each index shows its first (thr,val) in (thr-major) order, "T3/V1";
**   unmapped cells are blank, cells reached more than once are noted.
**   An index outside the tile is an error. Colour by thread (default).
** cute_scene_mma: the A, B, C panels of an atom (see Scene).
*/
int cute_scene_layout(Scene *s, const Layout *l, const VizOpts *o, Err *e);
int cute_scene_composed(Scene *s, const Composed *c, const VizOpts *o, Err *e);
int cute_scene_tv(Scene *s, const Layout *tv, int64_t m, int64_t n, const VizOpts *o, Err *e);
int cute_scene_mma(Scene *s, const MmaAtom *a, const VizOpts *o, Err *e);
/* A tiled copy as CuTe's print_latex draws one: the source TV layout (S) and
** the destination TV layout (D) over the same m x n tile, side by side. */
int cute_scene_copy(Scene *s, const Layout *src, const Layout *dst, int64_t m, int64_t n,
                    const VizOpts *o, Err *e);

/* dot.c
**
** dot_render appends the DOT text of a scene (Graphviz's input language;
** no Graphviz needed) to out: grids as HTML-like tables (title, column
** indices, row indices, cells with their fill colours and ports, caption),
** all the panels of the scene in one table node placed as the terminal
** places them; DAG nodes and edges as themselves. Grids larger than
** VIZ_GV_MAX_DIM rows or columns and DAGs of more than VIZ_GV_MAX_NODES
** nodes are refused (build the scene with max_rows/max_cols at most 256).
** gv.h renders the text with Graphviz.
*/
int dot_render(Buf *out, const Scene *s, Err *e);

/* term.c
**
** term_render appends the scene's text to out. A single-grid layout scene
** with colour off is CuTe's print_layout byte for byte (the layout, the
** column indices, +---+ rules, | v | cells of width num_digits(cosize)+2,
** row indices "%2d  "), except that cells and the row index column widen
** where CuTe's would misalign (100+ rows, column indices wider than the cells).
** Notes follow the grid. With o->color, cell interiors get 256-colour
** backgrounds with a readable foreground; removing the escapes gives the
** colourless text. Panels are placed side by side and stacked, their
** columns and rows aligned.
**
** viz_show_*: build the scene, render it into out, free it. 0, or -1 with
** a message (nothing appended).
*/
int term_render(Buf *out, const Scene *s, const VizOpts *o, Err *e);
int viz_show_layout(Buf *out, const Layout *l, const VizOpts *o, Err *e);
int viz_show_composed(Buf *out, const Composed *c, const VizOpts *o, Err *e);
int viz_show_tv(Buf *out, const Layout *tv, int64_t m, int64_t n, const VizOpts *o, Err *e);
int viz_show_mma(Buf *out, const MmaAtom *a, const VizOpts *o, Err *e);

/* lego_scene.c
**
** lego_scene: two panels of a LEGO layout. (0,0) the logical view: the
** logical index space as a grid (rank 2: rows x columns; rank 1: one row;
** rank >= 3: the first rank/2 dimensions flattened into the rows, the rest
** into the columns, row-major), each cell the physical index apply gives
** ("-" outside ExpandBy's extents). (0,1) the physical view: the physical
** indices in a grid of the same shape (with ExpandBy, of the original
** extents), each cell the logical coordinate inv gives ("2,5"). Cells are
** coloured by the logical row, the same colour in both panels. Only the
** cells shown are evaluated.
*/
int lego_scene(Scene *s, const Lego *g, const VizOpts *o, Err *e);
int viz_show_lego(Buf *out, const Lego *g, const VizOpts *o, Err *e);
/* axe_scene.c
**
** axe_scene_layout: the logical grid of an Axe layout (sh may be NULL: one
** row of size() cells; rank 2: rows x columns; rank >= 3: modes 1.. grouped
** into the columns). Each cell shows the coordinates of replica 0 on the
** layout's thread, device and other axes (all axes when it has only memory
** axes), one line per axis, the last of VIZ_LINES lines holding the rest;
** the title names them; labels (may be NULL) picks other axes. Colour (VIZ_SCHEME_THREAD palette) by color_axis,
** default the first non-memory axis. The caption lists the replicas and,
** for device axes, which device holds which rows and columns.
** viz_show_axe builds the scene and renders it with term_render.
*/
int axe_scene_layout(Scene *s, const AxeLayout *l, const AxeShape *sh, const char *color_axis,
                     const AxeAxes *labels, const VizOpts *o, Err *e);
int viz_show_axe(Buf *out, const AxeLayout *l, const AxeShape *sh, const char *color_axis,
                 const AxeAxes *labels, const VizOpts *o, Err *e);

/* uop_scene.c
**
** uop_scene: the DAG of a UOp expression, each distinct node once (as
** hash-consing shares them), edges from an operation to its operands,
** labelled 0, 1, ... where the operands' order matters. Variables show their
** range, operations their op and derived range. Refused beyond
** VIZ_GV_MAX_NODES nodes.
*/
struct UOp;
int uop_scene(Scene *s, const struct UOp *root, const VizOpts *o, Err *e);
/* tensor_scene: the same DAG for a tensor program, each node with its op, arguments,
** dtype, shape and device, coloured as the spec colours ops (uop_scene.c). */
int tensor_scene(Scene *s, const struct UOp *root, const VizOpts *o, Err *e);

/* kernel_scene.c: a kernel as a loop tree (stages, loops filled by axis
** type with their hardware binding, if-diamonds, statements as pseudo-code);
** the root names the buffers' layouts that are not row-major, under label
** (NULL: none) when several kernels share a picture. */
struct Kernel;
int kernel_scene(Scene *s, const struct Kernel *k, const char *label, const VizOpts *o, Err *e);

#endif

/* layout.h - the room layout/: the layout algebras of CuTe, Axe and LEGO on integers. */
#ifndef TESSEL_LAYOUT_H
#define TESSEL_LAYOUT_H

#include <stdint.h>

#include "../util/buf.h"
#include "../util/limits.h"

/*
** The layout algebras (docs/architecture.md): CuTe (tuple.c, cute_layout.c,
** cute.c, cute_order.c, tiler.c, swizzle.c, tv.c), Axe (axe*.c) and LEGO
** (lego.c), on integers, with checked arithmetic. They use util/ only; lower.h
** (lower.c) turns them into index expressions of the IR (interp/ir/) and is the
** room's one use of it. Files of the room share internal.h.
*/

/*
** Integer tuples are trees stored in preorder in a fixed array, so that every
** value is a plain struct: no allocation, nothing to free, copy by assignment.
** A node is a leaf (kids == T_LEAF, value v), the no-op marker `_` used in
** coordinates and tilers (kids == T_UNDER), or a tuple of `kids` children.
** span is the number of nodes in the subtree rooted at the node.
*/
enum { TUPLE_MAX = 128 };
enum { T_LEAF = -1, T_UNDER = -2 };

/* Sizes and cosizes must stay below this bound, so that every index a layout
** can produce, and every intermediate product of the algebra, fits in int64. */
#define CUTE_SIZE_LIMIT ((int64_t)1 << 62)

typedef struct TNode {
	int32_t kids;
	int32_t span;
	int64_t v;
} TNode;

typedef struct Tuple {
	int n;
	TNode node[TUPLE_MAX];
} Tuple;

/* A layout: congruent shape and stride tuples. Shapes are >= 1. */
typedef struct Layout {
	Tuple shape, stride;
} Layout;

/* Swizzle<B,M,S>: x ^ ((x & yyy_mask) >> S), yyy_mask = ((1<<B)-1) << (M + max(0,S)). */
typedef struct Swizzle {
	int b, m, s;
} Swizzle;

/* A composed (swizzled) layout: x -> sw(offset + layout(x)), printed as CuTe
** prints ComposedLayout: `Sw<3,4,3> o 0 o (8,64):(64,1)`. */
typedef struct Composed {
	Swizzle sw;
	int64_t offset;
	Layout layout;
} Composed;

/*
** A tiler, as CuTe's Tiler concept: a layout, or a tuple (possibly nested) of
** tilers where `_` leaves a mode alone and an integer n stands for n:1.
** prof is the tree of the tuple part; each of its leaves (T_LEAF or T_UNDER)
** names the sub-layout of l at the same path (a `_` has 1:0 there). The path,
** not the node index: an element with a tuple shape is one node of prof and
** a subtree of l, so use tiler_layout_node / tiler_element to reach it.
** A leaf's value says what the element was: an integer n (TILER_INT, held in
** l as n:1) or a layout. CuTe treats them differently: composition with n
** composes with n:1, the divides and products with make_layout(n), which is
** 1:0 for n = 1.
*/
enum { TILER_LAYOUT = 0, TILER_INT = 1 };
typedef struct Tiler {
	Tuple prof;
	Layout l;
} Tiler;

/* An MMA atom as in CuTe's MMA_Traits: thread-value layouts (thr, val) -> the
** column-major index of the coordinate in the M x K, N x K and M x N tiles. */
typedef struct MmaAtom {
	char name[48];        /* CuTe's name, e.g. "SM80_16x8x16_F32F16F16F32_TN" */
	char ptx[80];         /* the PTX instruction */
	char types[40];       /* "f32 = f16 * f16 + f32" */
	int m, n, k;
	Layout thr_id;        /* logical thread -> hardware thread */
	Layout a, b, c;
} MmaAtom;

/* tuple.c */
/*
** Building tuples in preorder: open a tuple node, append its children (leaves,
** copies of subtrees, or nested tuples), close it. All return the index of the
** new node, or -1 (with e filled) when the tuple would exceed TUPLE_MAX nodes.
*/
int tuple_push(Tuple *o, int64_t v, Err *e);
int tuple_push_under(Tuple *o, Err *e);
int tuple_open(Tuple *o, Err *e);
void tuple_close(Tuple *o, int at);
int tuple_push_copy(Tuple *o, const Tuple *t, int at, Err *e);

void tuple_int(Tuple *t, int64_t v);
int tuple_is_int(const Tuple *t);
int tuple_rank(const Tuple *t);
int tuple_depth(const Tuple *t);
int tuple_equal(const Tuple *a, const Tuple *b);
int tuple_congruent(const Tuple *a, const Tuple *b);
int tuple_weakly_congruent(const Tuple *a, const Tuple *b);
int tuple_compatible(const Tuple *a, const Tuple *b);
int tuple_has_under(const Tuple *t);
int tuple_mode(const Tuple *t, int i, Tuple *out, Err *e);
int tuple_make(Tuple *out, const Tuple *const *modes, int n, Err *e);
int tuple_flatten(const Tuple *t, Tuple *out, Err *e);
int tuple_product(const Tuple *t, int64_t *out, Err *e);
int tuple_sum(const Tuple *t, int64_t *out, Err *e);
int tuple_inner_product(const Tuple *a, const Tuple *b, int64_t *out, Err *e);
int tuple_prefix_product(const Tuple *t, Tuple *out, Err *e);
int tuple_shape_div(const Tuple *a, const Tuple *b, Tuple *out, Err *e);
int tuple_ceil_div(const Tuple *a, const Tuple *b, Tuple *out, Err *e);
int tuple_crd2idx(const Tuple *crd, const Tuple *shape, const Tuple *stride,
                  int64_t *out, Err *e);
int tuple_crd2idx_colex(const Tuple *crd, const Tuple *shape, int64_t *out, Err *e);
int tuple_idx2crd(int64_t idx, const Tuple *shape, Tuple *out, Err *e);
int tuple_crd2crd(const Tuple *crd, const Tuple *src, const Tuple *dst,
                  Tuple *out, Err *e);
int tuple_parse(const char *s, Tuple *out, Err *e);
void tuple_print(Buf *b, const Tuple *t);
/* Node-level access (for walkers): the index of child i of node at. */
int tuple_child(const Tuple *t, int at, int i);

/* cute.c */
int cute_make(Layout *l, const Tuple *shape, const Tuple *stride, Err *e);
int cute_make_compact(Layout *l, const Tuple *shape, int row_major, Err *e);
int cute_concat(Layout *out, const Layout *const *modes, int n, Err *e);
int cute_parse(const char *s, Layout *l, Err *e);
void cute_print(Buf *b, const Layout *l);
int64_t cute_size(const Layout *l);
int64_t cute_cosize(const Layout *l);
int cute_rank(const Layout *l);
int cute_depth(const Layout *l);
int cute_mode(const Layout *l, int i, Layout *out, Err *e);
int cute_select(const Layout *l, const int *modes, int n, Layout *out, Err *e);
int cute_flatten(const Layout *l, Layout *out, Err *e);
int cute_equal(const Layout *a, const Layout *b);
int cute_eval_idx(const Layout *l, int64_t i, int64_t *out, Err *e);
int cute_eval(const Layout *l, const Tuple *crd, int64_t *out, Err *e);
int cute_same_function(const Layout *a, const Layout *b, int *same, int64_t *where, Err *e);
int cute_coalesce(const Layout *l, Layout *out, Err *e);
int cute_coalesce_profile(const Layout *l, const Tuple *profile, Layout *out, Err *e);
int cute_filter(const Layout *l, Layout *out, Err *e);
/* filter each mode a profile names separately, the modes past it unchanged (CuTe's filter(L, profile)) */
int cute_filter_profile(const Layout *l, const Tuple *profile, Layout *out, Err *e);
/*
** The operations that take a tiler (blocked and raked products: a layout), by
** one entry point. A composition whose CuTe C++ result is not A o B (C++ does
** not check; see cute.c) is refused with C++'s layout and the first index
** where it differs, unless flags has CUTE_CPP: then the result is C++'s.
*/
#define CUTE_OPS(X) \
	X(CUTE_COMPOSITION, composition) \
	X(CUTE_LOGICAL_DIVIDE, logical_divide) \
	X(CUTE_ZIPPED_DIVIDE, zipped_divide) \
	X(CUTE_TILED_DIVIDE, tiled_divide) \
	X(CUTE_FLAT_DIVIDE, flat_divide) \
	X(CUTE_LOGICAL_PRODUCT, logical_product) \
	X(CUTE_ZIPPED_PRODUCT, zipped_product) \
	X(CUTE_TILED_PRODUCT, tiled_product) \
	X(CUTE_FLAT_PRODUCT, flat_product) \
	X(CUTE_BLOCKED_PRODUCT, blocked_product) \
	X(CUTE_RAKED_PRODUCT, raked_product)
typedef enum CuteOp {
#define X(id, name) id,
	CUTE_OPS(X)
#undef X
	CUTE_NOPS
} CuteOp;
enum { CUTE_CPP = 1 };
int cute_algebra(CuteOp op, const Layout *l, const Tiler *t, int flags, Layout *out, Err *e);
const char *cute_op_name(CuteOp op);
int cute_composition(const Layout *a, const Layout *b, Layout *out, Err *e);
int cute_composition_tiler(const Layout *a, const Tiler *t, Layout *out, Err *e);
int cute_complement(const Layout *l, const Tuple *cotarget, Layout *out, Err *e);
int cute_right_inverse(const Layout *l, Layout *out, Err *e);
int cute_left_inverse(const Layout *l, Layout *out, Err *e);
int cute_logical_divide(const Layout *l, const Tiler *t, Layout *out, Err *e);
int cute_zipped_divide(const Layout *l, const Tiler *t, Layout *out, Err *e);
int cute_tiled_divide(const Layout *l, const Tiler *t, Layout *out, Err *e);
int cute_flat_divide(const Layout *l, const Tiler *t, Layout *out, Err *e);
int cute_logical_product(const Layout *l, const Tiler *t, Layout *out, Err *e);
int cute_zipped_product(const Layout *l, const Tiler *t, Layout *out, Err *e);
int cute_tiled_product(const Layout *l, const Tiler *t, Layout *out, Err *e);
int cute_flat_product(const Layout *l, const Tiler *t, Layout *out, Err *e);
int cute_blocked_product(const Layout *a, const Layout *b, Layout *out, Err *e);
int cute_raked_product(const Layout *a, const Layout *b, Layout *out, Err *e);
int cute_slice(const Tuple *crd, const Layout *l, Layout *out, int64_t *offset, Err *e);
/* cute_order.c: CuTe's layouts from an order (stride.hpp's compact_order, static orders: a
** leaf of the order names a subtree of the shape; smaller orders are inner, ties share a
** start), filter_zeros, and the largest vector two layouts share (layout.hpp). */
int cute_make_ordered(Layout *l, const Tuple *shape, const Tuple *order, Err *e);
int cute_make_layout_like(const Layout *l, Layout *out, Err *e);
int cute_filter_zeros(const Layout *l, Layout *out, Err *e);
/* a compact layout for a fragment of l: mode 0 column-major, the rest in l's stride order */
int cute_make_fragment_like(const Layout *l, Layout *out, Err *e);
/* blocked_product of block (padded with 1:0 modes) over the target shape, the blocks in
** order (NULL: column-major); each mode of the block must divide the target's. flags:
** CUTE_CPP, as cute_algebra's, for the product. */
int cute_tile_to_shape(const Layout *block, const Tuple *target, const Tuple *order, int flags, Layout *out,
                       Err *e);
int cute_max_common_layout(const Layout *a, const Layout *b, Layout *out, Err *e);
int cute_max_common_vector(const Layout *a, const Layout *b, int64_t *n, Err *e);
int cute_with_shape(const Layout *l, const Tuple *shape, Layout *out, Err *e);

/* tiler.c */
void tiler_from_layout(Tiler *t, const Layout *l);
int tiler_parse(const char *s, Tiler *t, Err *e);
/* The node of t->l (and the element as a layout) at the leaf ip of t->prof. */
int tiler_layout_node(const Tiler *t, int ip);
int tiler_element(const Tiler *t, int ip, Layout *out, Err *e);
int tiler_sub(const Tiler *t, int ip, Tiler *out, Err *e);
int tiler_push_int(Tiler *t, int64_t n, Err *e);
void tiler_print(Buf *b, const Tiler *t);

/* swizzle.c */
int swizzle_make(Swizzle *sw, int b, int m, int s, Err *e);
int64_t swizzle_apply(const Swizzle *sw, int64_t x);
int swizzle_parse(const char *s, Swizzle *sw, Err *e);
void swizzle_print(Buf *b, const Swizzle *sw);
int composed_make(Composed *c, const Swizzle *sw, int64_t offset, const Layout *l, Err *e);
/* 1 when a composition's result c is its plain layout (an identity swizzle, offset 0), as in CuTe */
int composed_is_plain(const Composed *c);
int composed_parse(const char *s, Composed *c, Err *e);
void composed_print(Buf *b, const Composed *c);
int composed_eval_idx(const Composed *c, int64_t i, int64_t *out, Err *e);
int composed_eval(const Composed *c, const Tuple *crd, int64_t *out, Err *e);

/* tv.c */
int cute_make_layout_tv(const Layout *thr, const Layout *val, Layout *mn, Layout *tv, Err *e);
int cute_mma_atom(const char *name, MmaAtom *out, Err *e);
/* The built-in atoms by index: names 0 .. cute_mma_count()-1. */
int cute_mma_count(void);
const char *cute_mma_name(int i);

/* lego.c
**
** LEGO layouts (Tavakkoli, Oancea, Hall): bijections between a logical index
** space and a flat physical space, built from RegP (a regular permutation of
** a tile's dimensions), GenP (a general bijection: a built-in or a user
** callback pair), OrderBy (tile levels flattened outermost-in), GroupBy (a
** logical view plus a chain of OrderBys) and ExpandBy (partial tiles).
** Conventions of LEGO's implementation, which the paper leaves implicit:
**   - RegP is a gather: physical dimension t is logical dimension perm[t]
**     (0-based here; the paper writes perm 1-based);
**   - an OrderBy unflattens its input row-major over the concatenation of its
**     parts' dimensions, outer part first; it does not stripmine;
**   - in a chain GroupBy(dims, O1, ..., Ok) apply runs Ok first and O1 last
**     (fluent O1:OrderBy(O2):GroupBy(dims) is the same value).
** Flattening is row-major (last dimension fastest) everywhere. Sizes must
** agree exactly (LEGO accepts mismatches silently; tessel refuses them).
**
** A Lego is a plain value (no allocation) of one of four kinds: a single
** permutation, an OrderBy, a chain of OrderBys not yet grouped, a GroupBy.
** apply and inv of every kind are defined by compiling the value into a
** LegoProg, a list of primitive steps on a vector of integers (flatten,
** unflatten, gather, scatter, GenP apply/inv, bounds check); lowering to
** symbolic index expressions walks the same steps.
*/
enum { LEGO_DIMS = 12, LEGO_PARTS = 8, LEGO_CHAIN = 8, LEGO_STEPS = 192 };
/* GenPs of at most this many elements are checked by enumeration when made. */
enum { LEGO_VERIFY_LIMIT = 1 << 16 };

enum { LEGO_PERM, LEGO_ORDER, LEGO_CHAINED, LEGO_GROUP };        /* Lego.kind */
enum { LEGO_REGP, LEGO_GENP };                                    /* LegoPerm.kind */
enum { LEGO_GEN_USER, LEGO_GEN_IDENTITY, LEGO_GEN_REVERSE, LEGO_GEN_ANTIDIAG,
       LEGO_GEN_MORTON, LEGO_GEN_MORTON_ROW };                     /* LegoPerm.gen */
enum { LEGO_SUGAR_NONE, LEGO_SUGAR_ROW, LEGO_SUGAR_COL, LEGO_SUGAR_TILEBY };

/* A user GenP: apply maps idx[0..rank) to a flat index, inv the reverse.
** Both return 0, or -1 with a message in e (propagated as the caller's error). */
typedef int (*LegoApplyFn)(void *ctx, const int64_t *idx, int rank, int64_t *flat, Err *e);
typedef int (*LegoInvFn)(void *ctx, int64_t flat, int64_t *idx, int rank, Err *e);

typedef struct LegoPerm {
	int kind, rank;
	int64_t dim[LEGO_DIMS];
	int perm[LEGO_DIMS];      /* RegP: the gather */
	int sugar, q;             /* RegP: how it prints; TileBy's number of levels */
	int gen;                  /* GenP: LEGO_GEN_* */
	uint32_t mask;            /* GenP reverse: bit k set = dimension k reversed */
	LegoApplyFn apply;        /* GenP user */
	LegoInvFn inv;
	void *ctx;
	char label[48];           /* GenP user: printed as lego.GenP({dims}, label) */
} LegoPerm;

typedef struct LegoOrder {
	int nparts;
	int tiled, q;             /* made by TileOrderBy with q levels (prints so) */
	LegoPerm part[LEGO_PARTS];
} LegoOrder;

typedef struct Lego {
	int kind;
	int rank;                 /* logical dimensions */
	int64_t dim[LEGO_DIMS];
	int ngroup;               /* GroupBy: tile groups (printing only) */
	int glen[LEGO_DIMS];
	int nchain;               /* chain[0] is written first and runs last */
	LegoOrder chain[LEGO_CHAIN];
	int erank;                /* ExpandBy: 0, or the rank of the physical space */
	int64_t edim[LEGO_DIMS];  /* expanded physical dimensions (size = size of the layout) */
	int64_t odim[LEGO_DIMS];  /* original physical extents */
} Lego;

/* The primitive steps. Each acts on v[at .. at+n) of a vector v. */
enum {
	LS_FLATTEN,      /* v[at..at+n) over dim -> one index (row-major) */
	LS_UNFLATTEN,    /* v[at] -> n indices over dim */
	LS_GATHER,       /* w[t] = v[at + perm[t]] */
	LS_SCATTER,      /* w[perm[t]] = v[at + t] */
	LS_GENP_APPLY,   /* v[at..at+n) -> genp apply */
	LS_GENP_INV,     /* v[at] -> genp inv, n indices */
	LS_BOUND         /* ExpandBy: the result is -1 unless v[at+k] < dim[k] for all k */
};

typedef struct LegoStep {
	int op, at, n;
	int64_t dim[LEGO_DIMS];
	int perm[LEGO_DIMS];
	const LegoPerm *genp;     /* points into the Lego the program was made from */
} LegoStep;

typedef struct LegoProg {
	int inverse;              /* 0: apply (rank indices -> 1), 1: inv (1 -> rank) */
	int nin, nout, nstep;
	int64_t inlim[LEGO_DIMS]; /* the inputs' bounds: in[k] in [0, inlim[k]) */
	int64_t cosize;           /* apply's results lie in [0, cosize) or are -1 */
	LegoStep step[LEGO_STEPS];
} LegoProg;

int lego_regp(Lego *out, const int64_t *dims, int rank, const int *perm, Err *e);
int lego_row(Lego *out, const int64_t *dims, int rank, Err *e);
int lego_col(Lego *out, const int64_t *dims, int rank, Err *e);
/* TileBy(t1..tq): dims = q groups of d; logical (t1 coords, ..., tq coords)
** to the row-major index of the untiled shape (prod over levels per dim). */
int lego_tileby(Lego *out, const int64_t *dims, int d, int q, Err *e);
int lego_genp(Lego *out, const int64_t *dims, int rank, int gen, uint32_t mask, Err *e);
/* A morton GenP's bit positions: bit b of coordinate k goes to bit pos[k][b] of the flat
** index (bits[k] = log2 of dimension k). LEGO_GEN_MORTON hands positions out round-robin
** from dimension 0 (LEGO's Morton2DFast: the row on the even bits), LEGO_GEN_MORTON_ROW
** from the last dimension (a 2x2 tile is row-major). */
void lego_morton_pos(const LegoPerm *p, int pos[][64], int *bits);
/* A user GenP; verified by enumeration (every value in range, distinct, inv
** inverts apply) when it has at most LEGO_VERIFY_LIMIT elements. */
int lego_genp_user(Lego *out, const int64_t *dims, int rank, LegoApplyFn apply, LegoInvFn inv,
                   void *ctx, const char *label, Err *e);
int lego_orderby(Lego *out, const Lego *const *parts, int n, Err *e);
/* TileOrderBy(t1..tq): OrderBy(RegP(stripmined dims, sigma^-1)): the row-major
** index of the untiled shape to the tile-by-tile order. */
int lego_tileorderby(Lego *out, const int64_t *dims, int d, int q, Err *e);
/* O1:OrderBy(O2): a chain (not yet grouped). Each may be a perm, OrderBy or chain. */
int lego_then(Lego *out, const Lego *a, const Lego *b, Err *e);
/* GroupBy(dims, chain...): dims split into ngroup tile groups of glen[i]
** dimensions (glen NULL: one group). Each chain element is a perm, an OrderBy
** or a chain (spliced in place). */
int lego_groupby(Lego *out, const int64_t *dims, int rank, const int *glen, int ngroup,
                 const Lego *const *chain, int n, Err *e);
/* Fluent O:TileBy(t1..tq) as LEGO's Python API: GroupBy(t1..tq, each OrderBy
** of O followed by a TileOrderBy of its parts, OrderBy(TileBy(t1..tq))). */
int lego_tileby_group(Lego *out, const Lego *o, const int64_t *dims, int d, int q, Err *e);
/* ExpandBy(G, ext [, edims]): G's physical space viewed as edims (default:
** per dimension the product of G's tile levels), clipped to ext. */
int lego_expandby(Lego *out, const Lego *g, const int64_t *ext, int n, const int64_t *edims,
                  Err *e);

int64_t lego_size(const Lego *g);
/* The number of physical elements: size, or prod(odim) with ExpandBy. */
int64_t lego_cosize(const Lego *g);
int lego_prog(const Lego *g, int inverse, LegoProg *p, Err *e);
int lego_run(const LegoProg *p, const int64_t *in, int64_t *out, Err *e);
void lego_prog_print(Buf *b, const LegoProg *p);
/* apply: rank indices -> physical index (-1 outside ExpandBy's extents). */
int lego_apply(const Lego *g, const int64_t *idx, int64_t *out, Err *e);
int lego_inv(const Lego *g, int64_t flat, int64_t *idx, Err *e);
/* Whole-layout check by enumeration when size <= limit: apply is a bijection
** onto [0, cosize) and inv inverts it. 1 checked, 0 too large to enumerate,
** -1 with a counterexample. */
int lego_check(const Lego *g, int64_t limit, Err *e);
void lego_print(Buf *b, const Lego *g);
int lego_to_cute(const Lego *g, Layout *out, Err *e);
int lego_from_cute(Lego *out, const Layout *l, Err *e);
/* axe.c
**
** Axe layouts (DESIGN.md, ../shared/papers/axe-layout.txt): an iter is
** (extent e >= 1, stride s != 0, axis); a layout is (D, R, O) with D an
** ordered list of iters, R a set of replication iters and O an offset per
** axis. For x in [0, prod e_k), the digits of x row-major over D's extents
** (last iter fastest) give D(x) = sum d_k * s_k @ a_k, and
** L(x) = { D(x) + r + O : r in R }. Plain fixed-size structs: nothing to
** free, and a lowering can walk d[], r[] and o[] directly.
** Notation as TVM TIRx: S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp
** (a stride or offset without @ is on m).
*/
enum { AXE_NAME = 16, AXE_ITERS = 32, AXE_AXES = 16, AXE_RANK = 16 };
/* Most (element, replica) pairs an operation enumerates: tessel.limits check_elems. */
#define AXE_ENUM_LIMIT (limits_value(LIMIT_CHECK_ELEMS))

/* Axis kinds: well-known names carry one, other names are AXE_OTHER. */
enum { AXE_MEMORY, AXE_THREAD, AXE_DEVICE, AXE_OTHER };

typedef struct AxeIter {
	int64_t e, s;
	char axis[AXE_NAME];
} AxeIter;

typedef struct AxeOff {
	char axis[AXE_NAME];
	int64_t v;
} AxeOff;

typedef struct AxeLayout {
	int nd, nr, no;
	AxeIter d[AXE_ITERS];
	AxeIter r[AXE_ITERS];
	AxeOff o[AXE_AXES];
} AxeLayout;

/* A logical shape (row-major). */
typedef struct AxeShape {
	int n;
	int64_t v[AXE_RANK];
} AxeShape;

/* An ordered list of axis names; coordinates are int64 arrays indexed by it. */
typedef struct AxeAxes {
	int n;
	char name[AXE_AXES][AXE_NAME];
} AxeAxes;

/* A point of the axis space: v[i] on axis ax.name[i]; absent axes are 0. */
typedef struct AxeCoord {
	AxeAxes ax;
	int64_t v[AXE_AXES];
} AxeCoord;

/* A DTensor-style placement per mesh dimension: Shard(dim) or Replicate (-1). */
typedef struct AxeMesh {
	int n;
	char name[AXE_RANK][AXE_NAME];
	int64_t size[AXE_RANK];
} AxeMesh;
enum { AXE_REPLICATE = -1 };

int axe_axis_kind(const char *name);
const char *axe_kind_name(int kind);
/* Build and validate: extents >= 1, strides != 0, names, sizes and reach below 2^62. */
int axe_make(AxeLayout *l, const AxeIter *d, int nd, const AxeIter *r, int nr,
             const AxeOff *o, int no, Err *e);
int axe_check(const AxeLayout *l, Err *e);
int axe_parse(const char *s, AxeLayout *l, Err *e);
void axe_print(Buf *b, const AxeLayout *l);
int axe_shape_parse(const char *s, AxeShape *sh, Err *e);
void axe_shape_print(Buf *b, const AxeShape *sh);
int64_t axe_size(const AxeLayout *l);
int64_t axe_nreplicas(const AxeLayout *l);
/* The axes a layout names, in order of first use (D, then R, then O). */
void axe_axes(const AxeLayout *l, AxeAxes *ax);
int axe_axes_add(AxeAxes *ax, const char *name, Err *e);
int axe_axes_index(const AxeAxes *ax, const char *name);
/* Span on one axis (1 + sum over D and R iters of (e-1)|s|; 1 when unused),
** and the product over the layout's axes. */
int64_t axe_span(const AxeLayout *l, const char *axis);
int64_t axe_span_total(const AxeLayout *l);
/* Row-major flattening of a coordinate of shape sh. */
int axe_flatten(const AxeShape *sh, const int64_t *crd, int64_t *x, Err *e);
void axe_unflatten(const AxeShape *sh, int64_t x, int64_t *crd);
/* D(x) + O on the axes ax (the base coordinate, replica 0). */
int axe_base(const AxeLayout *l, int64_t x, const AxeAxes *ax, int64_t *v, Err *e);
/* All coordinates of element x, one per replica (R enumerated row-major),
** on the layout's axes; at most max are written, *n is the number there are. */
int axe_apply(const AxeLayout *l, int64_t x, AxeCoord *out, int max, int *n, Err *e);
/* The elements x whose coordinates agree with q on q's axes: at most max
** are written, *n counts them all; rep[i] is the replica that matches. */
int axe_find(const AxeLayout *l, const AxeCoord *q, int64_t *xs, int64_t *rep, int max,
             int64_t *n, Err *e);
/* Canonical form (D0, D1 on D; C0, C1, C2 on R; zero offsets dropped; R and O
** sorted by axis and stride). *gc (may be NULL): whether the gap condition holds. */
int axe_canonicalize(const AxeLayout *l, AxeLayout *out, int *gc, Err *e);
int axe_equal(const AxeLayout *a, const AxeLayout *b);
/* Equivalence of induced maps: *same; where a differing element exists,
** *where is the first (else -1). */
int axe_equivalent(const AxeLayout *a, const AxeLayout *b, int *same, int64_t *where, Err *e);
/* Appendix B: seps[0..sh->n] are the block boundaries in out->d. */
int axe_group(const AxeLayout *l, const AxeShape *sh, AxeLayout *out, int *seps, Err *e);
/* Appendix C: A (outer, shape sa) tiled by B (inner, shape sb); shape sa*sb. */
int axe_tile(const AxeLayout *a, const AxeShape *sa, const AxeLayout *b, const AxeShape *sb,
             AxeLayout *out, Err *e);
/* Appendix D: C with L = C (x) B and C's shape sl/sb; refusals name the
** first element where the candidate disagrees (*where, else -1). */
int axe_tile_of(const AxeLayout *l, const AxeShape *sl, const AxeLayout *b, const AxeShape *sb,
                AxeLayout *out, int64_t *where, Err *e);
/* Appendix E: the layout of the region begin[i] .. begin[i]+ext[i]-1. */
int axe_slice(const AxeLayout *l, const AxeShape *sh, const int64_t *begin, const int64_t *ext,
              AxeLayout *out, Err *e);
/* Appendix F: unscaled interleave, shape sa*sb. */
int axe_direct_sum(const AxeLayout *a, const AxeShape *sa, const AxeLayout *b, const AxeShape *sb,
                   AxeLayout *out, Err *e);
/* CuTe <-> Axe on axis m: the same function of the natural coordinate;
** the shape is the CuTe layout's top-level mode sizes. */
int axe_from_cute(const Layout *c, AxeLayout *out, AxeShape *sh, Err *e);
int axe_to_cute(const AxeLayout *l, const AxeShape *sh, Layout *out, Err *e);
/* A TV layout over an M x N tile (thr_id may be NULL: the identity) as an
** Axe layout over (lane, reg), or (warp, lane, reg) when warps; shape (M, N). */
int axe_from_tv(const Layout *tv, const Layout *thr_id, int64_t m, int64_t n, int warps,
                AxeLayout *out, Err *e);
/* Fit a layout to a set-valued map given by enumeration: fib[x] lists nf[x]
** coordinates (rows of ax->n values) of element x; refuses when no (D, R, O)
** reproduces it. */
int axe_fit(int64_t size, const AxeAxes *ax, const int64_t *const *fib, const int *nf,
            AxeLayout *out, Err *e);
/* Distributed tensors: placement[j] is the tensor dim sharded by mesh dim j,
** or AXE_REPLICATE; the local shard is row-major on m. Mesh dims that share
** an axis name are flattened row-major onto it (one gpuid axis). */
int axe_dtensor(const AxeShape *sh, const AxeMesh *mesh, const int *placement,
                AxeLayout *out, Err *e);
/* A placement as PyTorch writes it: "S(d)", "Shard(d)", "Sd" (d a tensor dimension) or
** "R", "Replicate" (AXE_REPLICATE): 0, or -1 when s is none of them. */
int axe_placement_parse(const char *s, int *dim);
int axe_to_dtensor(const AxeLayout *l, const AxeShape *sh, const AxeMesh *mesh,
                   int *placement, Err *e);
/* axe_dist.c
**
** A distributed tensor on one device axis (gpuid) of ndev devices: its layout
** read as sharded (each element on one device), replicated (every device
** holds all) or single (one device holds all), each device's storage dense in
** [0, count) because NCCL moves whole, contiguous buffers. Per D iter k
** (row-major digits of the logical index x): extent e[k] and its stride on
** the storage m[k] and on the device g[k] (0 where the iter is on the other
** axis). flat(x) = g(x) * count + m(x) is NCCL's rank-major order.
*/
typedef enum AxeDistKind { AXE_SHARDED, AXE_REPLICATED, AXE_SINGLE } AxeDistKind;
typedef struct AxeDist {
	AxeDistKind kind;
	char axis[AXE_NAME];
	int64_t ndev, size, count, root;   /* root: the device of a single tensor */
	int n;
	int64_t e[AXE_ITERS], m[AXE_ITERS], g[AXE_ITERS];
	int64_t moff, goff;
	int shard;          /* as a DTensor: the dimension sharded, -1 replicated, -2 not one */
	AxeShape local;     /* the local shard's shape when shard >= -1, else the logical shape */
} AxeDist;
int axe_dist(const AxeLayout *l, const AxeShape *sh, const char *axis, int64_t ndev, AxeDist *out, Err *e);
const char *axe_dist_kind_name(int k);
int64_t axe_dist_m(const AxeDist *d, int64_t x);
int64_t axe_dist_g(const AxeDist *d, int64_t x);
int64_t axe_dist_flat(const AxeDist *d, int64_t x);
void axe_dist_flat_strides(const AxeDist *d, int64_t *s);
/*
** The collective that turns src (partial: every device holds a summand of the
** whole) into dst (Section 4.2's analysis): pack is a local permute into NCCL's
** order before it, unpack one out of it after (slice: keeping only the device's
** own elements; copy: the permute is the identity). Refused, with the reason,
** where NCCL has no collective for it (a gather, send/recv).
*/
typedef enum AxeColl {
	AXE_COLL_NONE, AXE_COLL_ALLGATHER, AXE_COLL_REDUCE_SCATTER, AXE_COLL_ALLREDUCE, AXE_COLL_BROADCAST,
	AXE_COLL_REDUCE
} AxeColl;
typedef struct AxeRedist {
	AxeColl coll;
	int64_t root;
	int pack, unpack, slice, copy;
	char why[256];
} AxeRedist;
const char *axe_coll_name(int c);
int axe_redistribute(const AxeDist *src, int partial, const AxeDist *dst, AxeRedist *out, Err *e);

/* The widest vector (elements, a power of two up to max_elems) every thread
** can move at once: runs of logical elements that stay on one coordinate
** of every non-memory axis of dst and are consecutive and aligned on the
** memory axes of both src and dst (src may be NULL). */
int axe_vector_width(const AxeLayout *src, const AxeLayout *dst, int64_t max_elems,
                     int64_t *width, Err *e);

/* Execution scopes and thread subsets as layouts over (warp, lane): member
** index -> thread. name: "thread", "warp", "warpgroup", "cta" (threads, a
** multiple of 32). axe_warps: warps lo .. hi-1 (e.g. the producers 0-3). */
int axe_scope(const char *name, int64_t threads, AxeLayout *out, Err *e);
int axe_warps(int64_t lo, int64_t hi, AxeLayout *out, Err *e);

/* TMA dispatch (Section 3.4): smem (on m, shape ss) must be C (x) atom for the
** swizzle atom (8 rows of swizzle bytes; the whole inner extent without
** swizzle); global (on m, shape gs, same rank <= 5) gives the tensor map. Arrays
** are innermost first, as cuTensorMapEncodeTiled takes them; global_stride[i]
** is the byte stride of dim i+1. */
typedef struct AxeTma {
	int rank, swizzle;
	int64_t global_dim[5], global_stride[4], box_dim[5], elem_stride[5];
	AxeLayout outer;
	AxeShape outer_shape, atom_shape;
} AxeTma;
int axe_tma(const AxeLayout *global, const AxeShape *gs, const AxeLayout *smem, const AxeShape *ss,
            int elem_bytes, int swizzle, AxeTma *out, Err *e);

/* Appendix H: the largest Trainium TensorE matmul instruction for C[M,N] =
** A[K,M]^T B[K,N] from the layouts (A, B in SBUF, C in PSUM, axes P and F):
** K digits on P with the same partition in A and B; M digits on F in A and P
** in C forming one strided run of A containing its fastest F iter; N digits on
** F in B and C forming one run of B (or of C). Limits cap m, n, k; the digits
** left over become loops (extents, outer first). */
typedef struct AxeMatmul {
	int64_t m, n, k;
	AxeShape m_loops, n_loops, k_loops;
} AxeMatmul;
int axe_trn_matmul(const AxeLayout *a, int64_t K, int64_t M, const AxeLayout *b, int64_t N,
                   const AxeLayout *c, int64_t max_m, int64_t max_n, int64_t max_k, AxeMatmul *out, Err *e);

#endif

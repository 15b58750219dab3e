/* layout.h - the public API of tessel's layout algebras (CuTe Shape:Stride). */
#ifndef TESSEL_LAYOUT_H
#define TESSEL_LAYOUT_H

#include <stdint.h>

#include "../util/buf.h"

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
** names the sub-layout of l at the same path (a `_` has 1:0 there).
*/
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
int cute_with_shape(const Layout *l, const Tuple *shape, Layout *out, Err *e);

/* tiler.c */
void tiler_from_layout(Tiler *t, const Layout *l);
int tiler_parse(const char *s, Tiler *t, Err *e);
void tiler_print(Buf *b, const Tiler *t);

/* swizzle.c */
int swizzle_make(Swizzle *sw, int b, int m, int s, Err *e);
int64_t swizzle_apply(const Swizzle *sw, int64_t x);
int swizzle_parse(const char *s, Swizzle *sw, Err *e);
void swizzle_print(Buf *b, const Swizzle *sw);
int composed_make(Composed *c, const Swizzle *sw, int64_t offset, const Layout *l, Err *e);
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
       LEGO_GEN_MORTON };                                          /* LegoPerm.gen */
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

#endif

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

#endif

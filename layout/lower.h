/* lower.h - layouts to index expressions: the bridge from the layout algebras to the UOp IR. */
#ifndef TESSEL_LOWER_H
#define TESSEL_LOWER_H

#include "../interp/ir/uop.h"
#include "layout.h"

/*
** The building blocks every formalism lowers through (CuTe here; LEGO's
** apply/inv and Axe's per-axis maps compose the same three):
**   lower_split   a flat index -> its digits over a shape (colex: first digit
**                 fastest, CuTe; or row-major: last fastest, LEGO and Axe)
**   lower_dot     digits . strides (+ offset)
**   lower_join    digits -> a flat index over a shape (the inverse of split)
** They build raw expressions with the folding constructors only; run
** uop_simplify on the result (the ranges of the inputs drive it).
** Shapes are positive; every function fails with a message, never aborts.
*/
enum { LOWER_MAXDIM = 64 };

/* digits[k] of x over shape[0..n-1]. With `overflow` the slowest digit is
** x divided by the product of the others, not reduced (CuTe's idx2crd). */
int lower_split(UCtx *c, UOp *x, const int64_t *shape, int n, int colex, int overflow,
                UOp **digits, Err *e);
UOp *lower_dot(UCtx *c, UOp *const *digits, const int64_t *stride, int n, int64_t offset);
UOp *lower_join(UCtx *c, UOp *const *digits, const int64_t *shape, int n, int colex);
/* Swizzle<B,M,S>(x) = x ^ ((x & yyy_mask) >> S), with and, shift and xor. */
UOp *lower_swizzle(UCtx *c, const Swizzle *sw, UOp *x);

/* The flattened modes of a layout: n leaves, shape and stride. */
int lower_cute_modes(const Layout *l, int64_t *shape, int64_t *stride, int *n, Err *e);
/* Coordinate variables for a layout: one variable `name` in [0, size) when
** per_mode is 0; otherwise one per flattened mode, name0, name1, ..., each in
** [0, shape_k). *n gets the count. */
int lower_cute_vars(UCtx *c, const Layout *l, const char *name, int per_mode,
                    UOp **vars, int *n, Err *e);
/* L at a 1-D coordinate x (colexicographic, as cute_eval_idx). */
int lower_cute_idx(UCtx *c, const Layout *l, UOp *x, UOp **out, Err *e);
/* L at a natural coordinate given as one expression per flattened mode. */
int lower_cute_crd(UCtx *c, const Layout *l, UOp *const *crd, int n, UOp **out, Err *e);
/* A composed (swizzled) layout: sw(offset + L(x)). */
int lower_composed_idx(UCtx *c, const Composed *cl, UOp *x, UOp **out, Err *e);
int lower_composed_crd(UCtx *c, const Composed *cl, UOp *const *crd, int n, UOp **out, Err *e);

/*
** LEGO layouts. The lowering walks the steps of lego_prog (flatten,
** unflatten, gather, scatter, GenP apply/inv, bound) on a vector of
** expressions, with the building blocks above (row-major). Built-in GenPs
** lower through closed forms; a user GenP through `genp`, a callback that
** fills out[] with the GenP's apply (one expression) or inv (rank
** expressions) of in[] (NULL: user GenPs are refused).
** apply: in[] holds rank expressions (one per logical dimension), out[0]
** the physical index (-1 outside ExpandBy's extents, as a where()).
** inv: in[0] the physical index, out[] rank expressions.
** The inputs are assumed to lie in the layout's ranges (the slowest digit of
** an unflatten is not reduced), as lego_apply/lego_inv require them to.
*/
typedef int (*LowerGenpFn)(void *aux, UCtx *c, const LegoPerm *p, int inverse,
                           UOp *const *in, UOp **out, Err *e);
int lower_lego(UCtx *c, const Lego *g, int inverse, UOp *const *in, UOp **out,
               LowerGenpFn genp, void *aux, Err *e);
/* Variables for a layout's inputs: apply: names[k] (default i0, i1, ...) in
** [0, dim_k); inv: names[0] (default "k") in [0, cosize). NULL entries take
** the default. *n gets the count. */
int lower_lego_vars(UCtx *c, const Lego *g, int inverse, const char *const *names,
                    UOp **vars, int *n, Err *e);
/* A built-in GenP (identity, reverse, antidiagonal, Morton) in closed form. */
int lower_genp(UCtx *c, const LegoPerm *p, int inverse, UOp *const *in, UOp **out, Err *e);

/*
** Symbolic LEGO: dimensions are expressions (variables such as M, N, BM),
** so apply and inv exist only as expressions. The same shapes as Lego,
** restricted to RegP parts (Row, Col, RegP) in OrderBys, GroupBy chains and
** TileBy; a symbolic dimension is any expression with a positive range.
** Sizes cannot be compared in general: the lowering trusts that they agree
** (as LEGO does); lower_lego_sym_check tests it where every dimension is
** constant under a binding (the tests and bench do so on small ranges).
*/
typedef struct LegoSymPerm {
	int rank;
	UOp *dim[LEGO_DIMS];
	int perm[LEGO_DIMS];      /* gather: physical t is logical perm[t] */
} LegoSymPerm;
typedef struct LegoSymOrder {
	int nparts;
	LegoSymPerm part[LEGO_PARTS];
} LegoSymOrder;
typedef struct LegoSym {
	int rank;                 /* logical dimensions (GroupBy's, or the single order's) */
	UOp *dim[LEGO_DIMS];
	int nchain;               /* chain[0] runs last, as Lego */
	LegoSymOrder chain[LEGO_CHAIN];
} LegoSym;
int lower_lego_sym(UCtx *c, const LegoSym *g, int inverse, UOp *const *in, UOp **out, Err *e);

/*
** Axe layouts: one expression per axis of ax (axe_axes order): the digits of
** x row-major over D's extents times the strides, summed per axis, plus O.
** rep: NULL for replica 0 (the base coordinate), or nr expressions (the
** replica digits j_t in [0, r_t)) whose j_t * rho_t joins axis b_t.
*/
int lower_axe(UCtx *c, const AxeLayout *l, UOp *x, UOp *const *rep, const AxeAxes *ax,
              UOp **out, Err *e);

#endif

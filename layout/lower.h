/* lower.h - layouts to index expressions: the bridge from the layout algebras to the UOp IR. */
#ifndef TESSEL_LOWER_H
#define TESSEL_LOWER_H

#include "../interp/uop.h"
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

#endif

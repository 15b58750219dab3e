/* internal.h - what the compositions of interp/tensor/ share: constants, dtype steps, axes; nothing outside the room includes it. */
#ifndef TESSEL_TENSOR_INTERNAL_H
#define TESSEL_TENSOR_INTERNAL_H

#include <stdio.h>
#include <string.h>

#include "tensor.h"

/*
** Short builders over tensor_alu and friends, so that a composition reads as
** the formula it writes. Each passes a NULL operand through (the first
** failure's message stays in e), so chains need no checks in between.
*/

/* A constant of dtype t (integers wrapped: kd(c, t, -1) is all ones). */
static inline UOp *
kd(UCtx *c, DType t, double v)
{
	if (dtype_is_float(t))
		return uop_constf(c, t, v);
	if (t == DT_BOOL)
		return uop_constf(c, t, v != 0);
	return uop_new(c, OP_CONST, t, NULL, 0, dtype_wrap(t, (int64_t)v), 0, NULL, NULL, 0);
}

/* A float constant of a's float dtype (float32 next to an integer or bool tensor). */
static inline UOp *
kf(UCtx *c, const UOp *like, double v)
{
	return uop_constf(c, like && dtype_is_float(like->dtype) ? (DType)like->dtype : DT_FLOAT32, v);
}

/* tinygrad's least_upper_float: integers and bool become float32, floats stay. */
static inline UOp *
flt(UCtx *c, UOp *a, Err *e)
{
	if (!a)
		return NULL;
	return dtype_is_float(a->dtype) ? a : tensor_cast(c, DT_FLOAT32, a, e);
}

static inline int
is_intdt(DType t)
{
	return !dtype_is_float(t) && t != DT_BOOL;
}

static inline UOp *add(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_ADD, a, b, e); }
static inline UOp *sub(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_SUB, a, b, e); }
static inline UOp *mul(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_MUL, a, b, e); }
static inline UOp *lt(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_CMPLT, a, b, e); }
static inline UOp *ne(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_CMPNE, a, b, e); }
static inline UOp *band(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_AND, a, b, e); }
static inline UOp *bor(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_OR, a, b, e); }

/* a op v with v a constant of a's dtype (a float constant makes an integer a float32) */
static inline UOp *
addk(UCtx *c, UOp *a, double v, Err *e)
{
	return a ? add(c, a, kd(c, (DType)a->dtype, v), e) : NULL;
}

static inline UOp *
mulk(UCtx *c, UOp *a, double v, Err *e)
{
	return a ? mul(c, a, kd(c, (DType)a->dtype, v), e) : NULL;
}

/* cond:where(a, b) */
static inline UOp *
sel(UCtx *c, UOp *cond, UOp *a, UOp *b, Err *e)
{
	return tensor_where(c, cond, a, b, e);
}

/* An axis in [-nd, nd) made non-negative, or an error naming the op. */
static inline int
axis_norm(const char *what, int64_t *ax, int nd, Err *e)
{
	if (*ax < -nd || *ax >= nd)
		return err_set(e, "%s: axis %lld is out of range for rank %d (axes -%d..%d)", what, (long long)*ax,
		               nd, nd, nd - 1);
	if (*ax < 0)
		*ax += nd;
	return 0;
}

/* a with axes i and j exchanged */
static inline UOp *
swap_ax(UCtx *c, UOp *a, int i, int j, Err *e)
{
	int64_t o[T_MAXDIM];
	int k;

	if (!a)
		return NULL;
	for (k = 0; k < a->ndim; k++)
		o[k] = k;
	o[i] = j;
	o[j] = i;
	return tensor_permute(c, a, o, a->ndim, e);
}

/* a with an axis of size 1 inserted at position at (0..ndim) */
static inline UOp *
unsq(UCtx *c, UOp *a, int at, Err *e)
{
	int64_t s[T_MAXDIM];
	int k, j;

	if (!a)
		return NULL;
	if (a->ndim >= T_MAXDIM)
		return err_set(e, "tensor: rank %d leaves no room for another axis (at most %d)", a->ndim, T_MAXDIM),
		       NULL;
	for (k = j = 0; k <= a->ndim; k++)
		s[k] = k == at ? 1 : a->shape[j++];
	return tensor_reshape(c, a, s, a->ndim + 1, e);
}

/* r, or on failure e's message prefixed with the method's name when it names an inner op
** ("lerp: sub: shapes (4,) and (8,) do not broadcast ..."), so that the user sees the call */
static inline UOp *
named_err(UOp *r, Err *e, const char *what)
{
	size_t n = strlen(what);

	if (!r && e && (strncmp(e->msg, what, n) != 0 || e->msg[n] != ':')) {
		char m[sizeof e->msg];

		snprintf(m, sizeof m, "%s: %.*s", what, (int)(sizeof m - n - 3), e->msg);
		memcpy(e->msg, m, sizeof m);
	}
	return r;
}

/* tensor_pool.c: ceil_mode's extra padding after each of the last nk axes (tinygrad's
** _apply_ceil_mode), for the pools and max_pool2d's indices */
void tensor_ceil_pads(const UOp *a, const int64_t *k, const int64_t *s, const int64_t *d, const int64_t *before,
                      int64_t *after, int nk);

#endif

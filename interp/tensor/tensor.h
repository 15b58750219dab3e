/* tensor.h - tensor programs on the UOp IR: checked constructors, the spec's compositions, the reference evaluator. */
#ifndef TESSEL_TENSOR_H
#define TESSEL_TENSOR_H

#include "../ir/uop.h"

/*
** The room of tensor programs (tinygrad's Tensor level). It holds the checked
** constructors (shapes, broadcasting and dtype promotion made explicit), the
** spec's compositions of the primitives, and the reference evaluator, the oracle
** every kernel is checked against. It uses the IR (ir/uop.h) and util/ only.
*/

/* tensor.c */
/* The tensor_ constructors check shapes and fill e (naming both shapes and
** the axis); on failure they return NULL. */
UOp *tensor_new(UCtx *c, Op op, DType t, UOp *const *src, int nsrc, int64_t a0, int64_t a1,
                const char *name, const void *data, uint32_t ndata, Err *e);
UOp *tensor_param(UCtx *c, const char *name, int slot, const int64_t *shape, int n, DType t,
                  const char *device, Err *e);
/* A tensor of shape[n] from row-major values (converted to t). */
UOp *tensor_from(UCtx *c, DType t, const double *v, const int64_t *shape, int n, Err *e);
UOp *tensor_full(UCtx *c, DType t, double v, const int64_t *shape, int n, Err *e);
UOp *tensor_arange(UCtx *c, int64_t n, DType t, Err *e);
UOp *tensor_rand(UCtx *c, const int64_t *shape, int n, DType t, uint64_t seed, Err *e);
/* Movement; reshape accepts one -1; pad and shrink take per-axis (before, after)
** amounts and [begin, end) ranges. */
UOp *tensor_reshape(UCtx *c, UOp *a, const int64_t *shape, int n, Err *e);
UOp *tensor_expand(UCtx *c, UOp *a, const int64_t *shape, int n, Err *e);
UOp *tensor_permute(UCtx *c, UOp *a, const int64_t *order, int n, Err *e);
UOp *tensor_flip(UCtx *c, UOp *a, const int64_t *axes, int n, Err *e);
UOp *tensor_pad(UCtx *c, UOp *a, const int64_t *before, const int64_t *after, int n, Err *e);
UOp *tensor_shrink(UCtx *c, UOp *a, const int64_t *begin, const int64_t *end, int n, Err *e);
/* Elementwise with broadcasting and dtype promotion (both made explicit:
** the elementwise node's sources have equal shapes and dtypes). */
UOp *tensor_alu(UCtx *c, Op op, UOp *a, UOp *b, Err *e);
UOp *tensor_unary(UCtx *c, Op op, UOp *a, Err *e);
UOp *tensor_where(UCtx *c, UOp *cond, UOp *a, UOp *b, Err *e);
UOp *tensor_cast(UCtx *c, DType t, UOp *a, Err *e);
UOp *tensor_bitcast(UCtx *c, DType t, UOp *a, Err *e);
/* Reduce over axes (negative counts from the end); keepdim 0 drops them. */
UOp *tensor_reduce(UCtx *c, Op op, UOp *a, const int64_t *axes, int k, int keepdim, Err *e);
UOp *tensor_copy(UCtx *c, UOp *a, const char *device, Err *e);
UOp *tensor_replicated(UCtx *c, UOp *a, int axis, Err *e);
UOp *tensor_named(UCtx *c, UOp *a, const char *name, Err *e);
/* Function(Tuple(body...), args...): body's PARAM k is bound to args[k]. */
UOp *tensor_function(UCtx *c, UOp *const *body, int nbody, UOp *const *args, int nargs, Err *e);
UOp *tensor_gettuple(UCtx *c, UOp *f, int k, Err *e);

/* tensor_compose.c */
/*
** The spec's compositions of the primitives above (its "Common Ops as
** Compositions" and decomposed ops), named and typed as tinygrad's Tensor
** methods: one definition for the Lua binding, C users and the kernel
** lowering. Each comment in tensor_compose.c writes the graph it builds.
** Axes count from the end when negative. A NULL operand passes through.
*/
UOp *tensor_div(UCtx *c, UOp *a, UOp *b, Err *e);       /* Mul(A, Recip(B)) in float */
UOp *tensor_gt(UCtx *c, UOp *a, UOp *b, Err *e);        /* CmpLt(b, a) */
UOp *tensor_ge(UCtx *c, UOp *a, UOp *b, Err *e);        /* CmpNe(CmpLt(a, b), true) */
UOp *tensor_le(UCtx *c, UOp *a, UOp *b, Err *e);        /* CmpNe(CmpLt(b, a), true) */
UOp *tensor_eq(UCtx *c, UOp *a, UOp *b, Err *e);        /* CmpNe(CmpNe(a, b), true) */
UOp *tensor_minimum(UCtx *c, UOp *a, UOp *b, Err *e);   /* -max(-a, -b); ints: max(a^k, b^k)^k */
UOp *tensor_exp(UCtx *c, UOp *a, Err *e);               /* exp2(x * log2 e) */
UOp *tensor_log(UCtx *c, UOp *a, Err *e);               /* log2(x) * ln 2 */
UOp *tensor_cos(UCtx *c, UOp *a, Err *e);               /* sin(pi/2 - x) */
UOp *tensor_relu(UCtx *c, UOp *a, Err *e);              /* max(x, 0) */
UOp *tensor_sigmoid(UCtx *c, UOp *a, Err *e);           /* recip(1 + exp(-x)) */
UOp *tensor_tanh(UCtx *c, UOp *a, Err *e);              /* 2 sigmoid(2x) - 1 */
/* Reductions over axes (k < 0: all) as tensor_reduce takes them. sum accumulates
** in tinygrad's sum_acc_dtype (bool, int8, int16 -> int32; uint8, uint16 ->
** uint32: Reduce of a Cast); min is inv(max(inv(x))) with -x for floats and x ^ ~0
** otherwise; mean gives float32 for integers. */
UOp *tensor_sum(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, Err *e);
UOp *tensor_min(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, Err *e);
UOp *tensor_mean(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, Err *e);
UOp *tensor_softmax(UCtx *c, UOp *a, int axis, Err *e);
UOp *tensor_log_softmax(UCtx *c, UOp *a, int axis, Err *e);
/* numpy's matmul: rank 1 or more, batch axes broadcast; the spec's gemm per batch. */
UOp *tensor_matmul(UCtx *c, UOp *a, UOp *b, Err *e);
/* The spec's prefix_sum along an axis (two stages past 512 elements), in sum's dtype. */
UOp *tensor_cumsum(UCtx *c, UOp *a, int axis, Err *e);
/* tinygrad's gather(dim, index) and scatter_reduce(dim, index, src, "sum") by
** one-hot masks; an index outside the axis selects nothing. */
UOp *tensor_gather(UCtx *c, UOp *a, int dim, UOp *index, Err *e);
UOp *tensor_scatter_add(UCtx *c, UOp *a, int dim, UOp *index, UOp *src, Err *e);
/* pad with signed amounts (negative ones shrink) and a value (a CONST; NULL is 0). */
UOp *tensor_pad_constant(UCtx *c, UOp *a, const int64_t *before, const int64_t *after, int n, UOp *value,
                         Err *e);
/* arange(start, stop, step) in dtype t: ceil((stop - start) / step) values start + i*step;
** refused when an integer dtype cannot hold them. */
UOp *tensor_arange_step(UCtx *c, double start, double stop, double step, DType t, Err *e);
UOp *tensor_arange_int(UCtx *c, int64_t start, int64_t stop, int64_t step, DType t, Err *e);

/* tensor_eval.c */
/*
** The reference evaluator: realizes a tensor graph to a contiguous row-major
** buffer. Movement ops are views (strides, offset, validity mask) until an
** op needs contiguous memory; elementwise ops run over broadcast views in
** float64 (floats) or int64 (integers) and round to the node's dtype once;
** reductions accumulate in float64 for floats. PARAM slots are bound to
** tensors (other graphs of any context, realized first).
*/
typedef struct TBuf {
	DType dtype;
	int ndim;
	int64_t shape[T_MAXDIM];
	const char *device;   /* points into the graph; NULL for constants */
	int axis;
	int64_t numel;
	void *data;           /* numel elements of dtype, malloc'd: free with tbuf_free */
} TBuf;
typedef struct TEvalOpts {
	uint64_t mem_limit;        /* bytes of realized buffers; 0: limits_get()->tensor_bytes */
	const UOp *const *params;  /* params[k] binds PARAM slot k */
	int nparams;
} TEvalOpts;
int tensor_realize(const UOp *u, const TEvalOpts *o, TBuf *out, Err *e);
void tbuf_free(TBuf *b);
double tbuf_get(const TBuf *b, int64_t i);   /* element i (row-major) as a double */
/* Threefry 2x32 with 20 rounds (Random123's threefry2x32_20): ctr and key
** pack two 32-bit words, low word first. */
uint64_t tensor_threefry(uint64_t ctr, uint64_t key);

#endif

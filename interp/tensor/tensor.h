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

/* tensor_pool.c: tinygrad's _pool, conv2d, avg_pool2d, max_pool2d over the last nk axes
** (mixin/movement.py, mixin/op.py), from movement ops alone. */
/* The windows of the last nk axes: (..., i...) becomes (..., o..., k...) with
** o = ceil((i - d (k - 1)) / s), each element a view of a (no padding: pad first). */
UOp *tensor_pool(UCtx *c, UOp *a, const int64_t *k, const int64_t *stride, const int64_t *dilation, int nk, Err *e);
/* tinygrad's unfold: axis dim becomes (windows, size), windows of size every step elements
** (the window axis last): (n - size) // step + 1 of them; size 0 gives empty windows. */
UOp *tensor_unfold(UCtx *c, UOp *a, int64_t dim, int64_t size, int64_t step, Err *e);
/* x (batch, groups cin, *spatial) with weight (cout, cin, *kernel), nk = rank - 2 spatial
** axes, padded by before[i], after[i] (negative shrinks) with zeros; bias (cout) or NULL;
** the products summed in tensor_sum's accumulator: (batch, cout, *out). */
UOp *tensor_conv2d(UCtx *c, UOp *x, UOp *w, UOp *bias, int64_t groups, const int64_t *stride,
                   const int64_t *dilation, const int64_t *before, const int64_t *after, Err *e);
/* The mean (max) of each window of the last nk axes, padded by before/after with 0 (with
** the dtype's lowest value); ceil_mode adds padding for a last partial window, which the
** mean does not count; count_include_pad = 0 counts only the input's elements. */
UOp *tensor_avg_pool(UCtx *c, UOp *a, const int64_t *k, const int64_t *stride, const int64_t *dilation,
                     const int64_t *before, const int64_t *after, int nk, int ceil_mode, int count_include_pad,
                     Err *e);
UOp *tensor_max_pool(UCtx *c, UOp *a, const int64_t *k, const int64_t *stride, const int64_t *dilation,
                     const int64_t *before, const int64_t *after, int nk, int ceil_mode, Err *e);

/* tensor_resample.c */
/*
** tinygrad's interpolate, conv_transpose2d, max_pool2d(..., return_indices),
** max_unpool2d and scatter_reduce, composed as tinygrad's Tensor methods are
** (tensor_resample.c writes each graph). The names in messages are tinygrad's.
*/
/* the last n axes resized to size[n], the last first: gathers along each axis at
** indices from arange arithmetic; mode "linear" (lerp of the two neighbours, in float32;
** align_corners: corner to corner, else half-pixel centers), "nearest" (int(in/out i)),
** "nearest-exact" (int(in/out (i + 0.5))); the result cast back to a's dtype */
UOp *tensor_interpolate(UCtx *c, UOp *a, const int64_t *size, int n, const char *mode, int align_corners,
                        Err *e);
/* x (batch, cin, *spatial), w (cin, cout/groups, *kernel), any number of spatial axes:
** x spread by stride (s - 1 zeros between elements):conv2d(w:unflatten(0, {groups, -1})
** :transpose(1, 2):flip(kernel axes):flatten(0, 1), bias, groups, 1, dilation, padding
** (k-1) d - before, (k-1) d - after + output_padding); bias (groups cout/groups) or NULL */
UOp *tensor_conv_transpose2d(UCtx *c, UOp *x, UOp *w, UOp *bias, int64_t groups, const int64_t *stride,
                             const int64_t *dilation, const int64_t *before, const int64_t *after,
                             const int64_t *output_padding, Err *e);
/* max_pool2d's indices (return_indices): the flat position in the last nk axes of each
** window's first maximum, int32: S - (p == p:max):mul(windows of arange(S, 0, -1)):max,
** S their size; *values (may be NULL) the maxima, tensor_max_pool's values */
UOp *tensor_max_pool_indices(UCtx *c, UOp *a, const int64_t *k, const int64_t *stride, const int64_t *dilation,
                             const int64_t *before, const int64_t *after, int nk, int ceil_mode, UOp **values,
                             Err *e);
/* max_unpool2d: a and indices (batch, c, *spatial) put into zeros of output_size (the last
** a->ndim - 2 of os[nos], or with os NULL the pool's inverse size (i-1) s - before - after
** + d (k-1) + 1): (indices == arange(P)):where(a, 0):sum, values at one position added */
UOp *tensor_max_unpool(UCtx *c, UOp *a, UOp *indices, const int64_t *k, const int64_t *stride,
                       const int64_t *dilation, const int64_t *before, const int64_t *after, const int64_t *os,
                       int nos, Err *e);
/* scatter_reduce(dim, index, src, reduce, include_self): src's elements reduced into a at
** index along dim by "sum", "prod", "mean", "amax" or "amin" over one-hot masks; without
** include_self a's own value counts only where nothing lands; mean is float */
UOp *tensor_scatter_reduce(UCtx *c, UOp *a, int64_t dim, UOp *index, UOp *src, const char *reduce,
                           int include_self, Err *e);

/* tensor_math.c */
/*
** tinygrad's elementwise Tensor methods and activations (mixin/elementwise.py),
** each composed as its comment writes. A function of real numbers makes an
** integer or bool operand float32 (tinygrad's least_upper_float) and keeps
** float16/bfloat16; abs, sign, square, floor, ceil, relu6, clamp (integral
** bounds) keep integer dtypes; comparisons give bool.
*/
UOp *tensor_logical_not(UCtx *c, UOp *a, Err *e);   /* cast(x, bool) != true */
UOp *tensor_neg(UCtx *c, UOp *a, Err *e);           /* Neg(x); bool: logical_not */
UOp *tensor_bitwise_not(UCtx *c, UOp *a, Err *e);   /* x ^ ~0; bool: logical_not; floats refused */
UOp *tensor_sign(UCtx *c, UOp *a, Err *e);          /* (x != 0):where((x < 0):where(-1, 1), 0) */
UOp *tensor_abs(UCtx *c, UOp *a, Err *e);           /* x * sign(x) */
UOp *tensor_square(UCtx *c, UOp *a, Err *e);        /* x * x */
UOp *tensor_rsqrt(UCtx *c, UOp *a, Err *e);         /* Recip(Sqrt(x)) */
UOp *tensor_floor(UCtx *c, UOp *a, Err *e);         /* (x < t):where(t - 1, t), t = Trunc(x) */
UOp *tensor_ceil(UCtx *c, UOp *a, Err *e);          /* (x > t):where(t + 1, t), t = Trunc(x) */
UOp *tensor_round(UCtx *c, UOp *a, Err *e);         /* half to even: ((x > 0) == even(t)):where(ceil(x - .5), floor(x + .5)) */
UOp *tensor_isnan(UCtx *c, UOp *a, Err *e);         /* x != x */
UOp *tensor_isinf(UCtx *c, UOp *a, int pos, int neg, Err *e);   /* (x == inf) | (x == -inf), as asked */
UOp *tensor_isfinite(UCtx *c, UOp *a, Err *e);      /* logical_not(isinf(x) | isnan(x)) */
UOp *tensor_log10(UCtx *c, UOp *a, Err *e);         /* Log2(x) * log10(2) */
UOp *tensor_tan(UCtx *c, UOp *a, Err *e);           /* sin(x) / cos(x) */
UOp *tensor_sinh(UCtx *c, UOp *a, Err *e);          /* (exp(x) - exp(-x)) / 2 */
UOp *tensor_cosh(UCtx *c, UOp *a, Err *e);          /* (exp(x) + exp(-x)) / 2 */
UOp *tensor_asinh(UCtx *c, UOp *a, Err *e);         /* log(x + sqrt(x^2 + 1)) */
UOp *tensor_acosh(UCtx *c, UOp *a, Err *e);         /* log(x + sqrt(x^2 - 1)) */
UOp *tensor_atanh(UCtx *c, UOp *a, Err *e);         /* log((1 + x) / (1 - x)) / 2 */
UOp *tensor_asin(UCtx *c, UOp *a, Err *e);          /* sign(x) (pi/2 - sqrt(1 - |x|) poly(|x|)), A&S 4.4.46 */
UOp *tensor_acos(UCtx *c, UOp *a, Err *e);          /* pi/2 - asin(x) */
UOp *tensor_atan(UCtx *c, UOp *a, Err *e);          /* asin(x / sqrt(1 + x^2)) */
UOp *tensor_erf(UCtx *c, UOp *a, Err *e);           /* sign(x) (1 - t poly(t) exp(-x^2)), t = 1/(1 + .3275911|x|) */
UOp *tensor_relu6(UCtx *c, UOp *a, Err *e);         /* relu(x) - relu(x - 6), relu = (x > 0):where(x, 0) */
UOp *tensor_hardswish(UCtx *c, UOp *a, Err *e);     /* x relu6(x + 3) / 6 */
UOp *tensor_hardsigmoid(UCtx *c, UOp *a, double alpha, double beta, Err *e);   /* relu(ax+b) - relu(ax+b-1) */
UOp *tensor_clamp(UCtx *c, UOp *a, UOp *lo, UOp *hi, Err *e);   /* (r > hi):where(hi, r), r = (x < lo):where(lo, x) */
UOp *tensor_hardtanh(UCtx *c, UOp *a, double lo, double hi, Err *e);   /* clamp(x, lo, hi) */
UOp *tensor_leaky_relu(UCtx *c, UOp *a, double slope, Err *e);   /* (x < 0):where(slope x, x) */
UOp *tensor_elu(UCtx *c, UOp *a, double alpha, Err *e);          /* relu(x) - alpha relu(1 - exp(x)) */
UOp *tensor_celu(UCtx *c, UOp *a, double alpha, Err *e);         /* max(x, 0) + min(alpha (exp(x/alpha) - 1), 0) */
UOp *tensor_selu(UCtx *c, UOp *a, double alpha, double gamma, Err *e);   /* gamma (x >= 0):where(x, alpha (exp(x) - 1)) */
UOp *tensor_logaddexp(UCtx *c, UOp *a, UOp *b, Err *e);   /* log(exp(a - m) + exp(b - m)) + m, m = max(a, b) */
UOp *tensor_softplus(UCtx *c, UOp *a, double beta, Err *e);   /* logaddexp(beta x, 0) / beta */
UOp *tensor_mish(UCtx *c, UOp *a, Err *e);          /* x tanh(softplus(x)) */
UOp *tensor_logsigmoid(UCtx *c, UOp *a, Err *e);    /* -softplus(-x) */
UOp *tensor_softsign(UCtx *c, UOp *a, Err *e);      /* x / (1 + |x|) */
UOp *tensor_silu(UCtx *c, UOp *a, Err *e);          /* x sigmoid(x) (swish) */
UOp *tensor_quick_gelu(UCtx *c, UOp *a, Err *e);    /* x sigmoid(1.702 x) */
UOp *tensor_gelu(UCtx *c, UOp *a, int exact, Err *e);   /* .5x(1 + tanh(sqrt(2/pi)(x + .044715x^3))); exact: .5x(1 + erf(x/sqrt2)) */
UOp *tensor_pow(UCtx *c, UOp *a, UOp *b, Err *e);   /* Pow(a, b) */
UOp *tensor_div_mode(UCtx *c, UOp *a, UOp *b, int mode, Err *e);   /* 0: a/b; 1 trunc, 2 floor (ints: IDiv, fixed) */
UOp *tensor_fmod(UCtx *c, UOp *a, UOp *b, Err *e);  /* a - trunc(a/b) b; integers: a % b moved to a's sign */
UOp *tensor_copysign(UCtx *c, UOp *a, UOp *b, Err *e);   /* ((b < 0) | (recip(b) < 0)):where(-|a|, |a|) */
UOp *tensor_lerp(UCtx *c, UOp *a, UOp *end, UOp *w, Err *e);   /* a + (end - a) w */
UOp *tensor_masked_fill(UCtx *c, UOp *a, UOp *mask, UOp *v, Err *e);   /* mask:where(v, x) */
/* (isfinite(a) & isfinite(b) & |a - b| <= atol + rtol |b|) | ((isinf(a) | isinf(b)) & a == b)
** | (isnan(a) & isnan(b) & equal_nan) */
UOp *tensor_isclose(UCtx *c, UOp *a, UOp *b, double rtol, double atol, int equal_nan, Err *e);
/* randn: cos(2 pi u0) sqrt(-2 log(1 - u1)) with (u0, u1) = rand((2, n)) (Box-Muller);
** uniform: ((high - low) rand):cast(t) + low (an integer t: randint); normal: std randn + mean */
UOp *tensor_randn(UCtx *c, const int64_t *shape, int n, DType t, uint64_t seed, Err *e);
UOp *tensor_uniform(UCtx *c, const int64_t *shape, int n, double low, double high, DType t, uint64_t seed,
                    Err *e);
UOp *tensor_normal(UCtx *c, const int64_t *shape, int n, double mean, double std, DType t, uint64_t seed,
                   Err *e);

/* tensor_shape.c */
/*
** tinygrad's shape methods (mixin/movement.py): reshapes, expands, pads,
** shrinks and permutes, and a where over an arange comparison where an axis is
** selected by position. dim arguments follow tinygrad's _resolve_dim.
*/
UOp *tensor_squeeze(UCtx *c, UOp *a, const int64_t *dim, Err *e);   /* reshape without size-1 axes (dim: that one) */
UOp *tensor_unsqueeze(UCtx *c, UOp *a, int64_t dim, Err *e);        /* reshape with a 1 at dim */
UOp *tensor_flatten(UCtx *c, UOp *a, int64_t start, int64_t end, Err *e);   /* reshape merging start..end */
UOp *tensor_unflatten(UCtx *c, UOp *a, int64_t dim, const int64_t *sizes, int k, Err *e);
UOp *tensor_transpose(UCtx *c, UOp *a, int64_t d0, int64_t d1, Err *e);   /* permute swapping d0, d1 */
/* acc = pad(t0); acc = pad(ones_i):where(pad(ti), acc), each ti padded to the axis at its offset */
UOp *tensor_cat(UCtx *c, UOp *const *ts, int n, int64_t dim, Err *e);
/* shrinks along dim of the given sizes (summing to the axis) into out; returns n or -1 */
int tensor_split(UCtx *c, UOp *a, const int64_t *sizes, int n, int64_t dim, UOp **out, Err *e);
/* the sizes of tinygrad's split(size) and chunk(k) of an axis of length len (at most max) */
int tensor_split_sizes(int64_t len, int64_t size, int64_t *sizes, int max, Err *e);
int tensor_chunk_sizes(int64_t len, int64_t chunks, int64_t *sizes, int max, Err *e);
UOp *tensor_stack_dim(UCtx *c, UOp *const *ts, int n, int64_t dim, Err *e);   /* Stack, permuted to dim */
UOp *tensor_repeat(UCtx *c, UOp *a, const int64_t *reps, int n, Err *e);   /* reshape{1,s}:expand{r,s}:reshape{rs} */
/* reshape{s, 1}:expand{s, r}:reshape{s r} on dim (NULL: flattened) */
UOp *tensor_repeat_interleave(UCtx *c, UOp *a, int64_t repeats, const int64_t *dim, Err *e);
/* repeat(2 on dims):shrink{(s - k%s, 2s - k%s)}; dims NULL: flattened, one shift */
UOp *tensor_roll(UCtx *c, UOp *a, const int64_t *shifts, const int64_t *dims, int n, Err *e);
UOp *tensor_triu(UCtx *c, UOp *a, int64_t diagonal, Err *e);   /* (arange(r):reshape{r,1} + d <= arange(c)):where(x, 0) */
UOp *tensor_tril(UCtx *c, UOp *a, int64_t diagonal, Err *e);   /* (... + d + 1 <= arange(c)):where(0, x) */
UOp *tensor_eye(UCtx *c, int64_t n, int64_t m, DType t, Err *e);   /* (arange(n):reshape{n,1} == arange(m)):cast(t) */
UOp *tensor_diag(UCtx *c, UOp *a, Err *e);   /* v:reshape{n,1}:pad{0,n}:flatten():shrink{0,n*n}:reshape{n,n} */
UOp *tensor_diagonal(UCtx *c, UOp *a, int64_t offset, int64_t d1, int64_t d2, Err *e);   /* flatten, pad, take column 0 */
UOp *tensor_one_hot(UCtx *c, UOp *a, int64_t n, Err *e);   /* (x:reshape{..., 1} == arange(n)):where(1, 0), int32 */
UOp *tensor_linspace(UCtx *c, double start, double stop, int64_t n, DType t, Err *e);   /* start + arange(n) step */
/* each ti flattened, reshaped to -1 on its axis (xy: the first two swapped), expanded; returns n */
int tensor_meshgrid(UCtx *c, UOp *const *ts, int n, int xy, UOp **out, Err *e);
/* zeros after each axis's end up to shape[i] / its first shape[i] elements; -1 keeps the axis */
UOp *tensor_pad_to(UCtx *c, UOp *a, const int64_t *shape, int n, Err *e);
UOp *tensor_shrink_to(UCtx *c, UOp *a, const int64_t *shape, int n, Err *e);
/* einops' rearrange ("b (h w) c -> b h w c", "..." for the other axes, "1" an axis of size 1):
** reshape into the named axes, permute, reshape merging groups; sizes[i] sizes names[i] */
UOp *tensor_rearrange(UCtx *c, UOp *a, const char *formula, const char *const *names, const int64_t *sizes,
                      int nsizes, Err *e);

/* tensor_nn.c */
/*
** tinygrad's reductions, scans, sort and layers (mixin/op.py, mixin/reduce.py).
** Axes as tensor_reduce takes them (k < 0: all); argmax and sort give int32.
*/
UOp *tensor_any(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, Err *e);   /* cast(bool):max */
UOp *tensor_all(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, Err *e);   /* cast(bool):prod */
/* (x - mean(x, keepdim)):square():sum / max(n - correction, 0), float32 for integers */
UOp *tensor_var(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, double correction, Err *e);
UOp *tensor_std(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, double correction, Err *e);   /* sqrt(var) */
/* log(exp(x - m):sum) + m, m = x:max(keepdim) */
UOp *tensor_logsumexp(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, Err *e);
/* n - (x == x:max(axis, keepdim)):where(arange(n, 0, -1), 0):max(axis), int32; axis NULL: flattened */
UOp *tensor_argmax(UCtx *c, UOp *a, const int64_t *axis, int keepdim, Err *e);
UOp *tensor_argmin(UCtx *c, UOp *a, const int64_t *axis, int keepdim, Err *e);   /* argmax(inverse(x)) */
UOp *tensor_softmin(UCtx *c, UOp *a, int axis, Err *e);   /* softmax(-x) */
/* low(n):where(x:reshape{1, n}, 1):prod(-1) along axis (low[i][j] = j <= i) */
UOp *tensor_cumprod(UCtx *c, UOp *a, int64_t axis, Err *e);
/* the same scan with max; *index (may be NULL) the first position of the running max, int32 */
UOp *tensor_cummax(UCtx *c, UOp *a, int64_t axis, UOp **index, Err *e);
UOp *tensor_cummin(UCtx *c, UOp *a, int64_t axis, UOp **index, Err *e);   /* inverse(cummax(inverse(x))) */
/* log(low(n):where(x:reshape{1,n} - m:reshape{n,1}, -inf):exp():sum(-1)) + m, m = cummax(x) */
UOp *tensor_logcumsumexp(UCtx *c, UOp *a, int64_t axis, Err *e);
/* stable ranks from the n x n comparisons, index = one-hot inverse (int32), values = gather */
int tensor_sort(UCtx *c, UOp *a, int64_t dim, int descending, UOp **values, UOp **indices, Err *e);
int tensor_topk(UCtx *c, UOp *a, int64_t k, int64_t dim, int largest, UOp **values, UOp **indices, Err *e);
/* x / max((|x|^p):sum(dim, keepdim)^(1/p), eps) */
UOp *tensor_normalize(UCtx *c, UOp *a, double p, int64_t dim, double eps, Err *e);
/* y rsqrt(mean(y y) + eps), y = x - mean(x) over axes, keepdim */
UOp *tensor_layernorm(UCtx *c, UOp *a, const int64_t *axes, int k, double eps, Err *e);
/* (x - mean) weight invstd + bias, each reshaped to the channel shape; weight, bias may be NULL */
UOp *tensor_batchnorm(UCtx *c, UOp *x, UOp *w, UOp *b, UOp *mean, UOp *invstd, const int64_t *axes, int k,
                      Err *e);
UOp *tensor_linear(UCtx *c, UOp *x, UOp *w, UOp *b, Err *e);   /* x:matmul(w) (w 1-D: x * w) + b */
/* softmax(q:matmul(k^T) / sqrt(d) + mask):matmul(v); is_causal: mask = ones(bool):tril() (bool masks: where(0, -inf)) */
UOp *tensor_sdpa(UCtx *c, UOp *q, UOp *k, UOp *v, UOp *mask, int is_causal, int enable_gqa, Err *e);
/* operands aligned to the sorted letters, multiplied, summed over the letters not in the output, permuted */
UOp *tensor_einsum(UCtx *c, const char *formula, UOp *const *xs, int n, Err *e);
/* losses: the reduction of tinygrad's ReductionStr */
typedef enum TReduction { TRED_NONE, TRED_SUM, TRED_MEAN } TReduction;
int tensor_reduction_parse(const char *s, TReduction *r, Err *e);
UOp *tensor_binary_crossentropy(UCtx *c, UOp *x, UOp *y, TReduction red, Err *e);   /* -y log x - (1-y) log(1-x) */
/* -(pw y logsigmoid(x) + (1 - y) logsigmoid(-x)); pos_weight may be NULL */
UOp *tensor_binary_crossentropy_logits(UCtx *c, UOp *x, UOp *y, TReduction red, UOp *pos_weight, Err *e);
/* -(log_softmax(x, d) ((1 - ls) y + ls / n)):sum(d), integer labels one-hot along d (1, or 0 for 1-D x) */
UOp *tensor_cross_entropy(UCtx *c, UOp *x, UOp *y, TReduction red, double ls, Err *e);
/* -((1 - ls) (lp onehot(y) m):sum(-1) + ls lp:mean(-1) m), m = y != ignore_index; mean over m:sum() */
UOp *tensor_sparse_categorical_crossentropy(UCtx *c, UOp *x, UOp *y, int64_t ignore_index, double ls,
                                           TReduction red, Err *e);
/* -x:gather(1, y:unsqueeze(1)):squeeze(1) w, w = weight[y] (1) * (y != ignore_index) */
UOp *tensor_nll_loss(UCtx *c, UOp *x, UOp *y, UOp *weight, const int64_t *ignore_index, TReduction red, Err *e);
/* the elements where the bool mask (broadcast) is true, row-major; size < 0: all of them (counted
** from the values: refused where they are params), else size of them, padded with fill (NULL: 0) */
UOp *tensor_masked_select(UCtx *c, UOp *a, UOp *mask, int64_t size, UOp *fill, Err *e);
/* the indices of the nonzero elements, (count, rank) int32; size and fill as masked_select's */
UOp *tensor_nonzero(UCtx *c, UOp *a, int64_t size, UOp *fill, Err *e);
/* a + xs[0] + ... (| for bool); prod: * (& for bool) */
UOp *tensor_usum(UCtx *c, UOp *a, UOp *const *xs, int n, int prod, Err *e);

/* tensor_linalg.c */
/*
** tinygrad's qr, svd and newton_schulz over the last two axes (m, n) of a
** tensor of rank 2 or more, the axes before them a batch; integers and bool
** become float32. Their loops are unrolled into the graph, a count fixed by the
** shape. Each returns -1 (NULL) with e naming the method on failure.
*/
/* Householder per column i < min(m, n): R -= w (v^T R), Q -= (Q v) w^T; Q (.., m, m), R (.., m, n) */
int tensor_qr(UCtx *c, UOp *a, UOp **q, UOp **r, Err *e);
/* qr, then 4 min(m, n) rounds of one-sided Jacobi (round robin pairs), S sorted descending;
** U (.., m, m or min), S (.., min), V^T (.., min or n, n): A = U diag(S) V^T */
int tensor_svd(UCtx *c, UOp *a, int full_matrices, UOp **u, UOp **s, UOp **v, Err *e);
/* G = A / (|A|_F + eps), then steps times G = sum_i params[i] (G G^T)^i G (m > n: on A^T) */
UOp *tensor_newton_schulz(UCtx *c, UOp *a, int steps, const double *params, int np, double eps, Err *e);

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

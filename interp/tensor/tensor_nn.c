/* tensor_nn.c - tinygrad's reductions and networks: var, argmax, cummax, sort, topk, layernorm, attention, einsum, losses. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/*
** The compositions of tinygrad's Tensor methods (mixin/op.py, mixin/reduce.py
** of tinygrad 0.14) that reduce, scan, sort or combine several tensors, built
** from the primitives of tensor.c and the compositions of tensor_compose.c,
** tensor_math.c and tensor_shape.c. Axes are given as tensor_reduce takes them
** (k < 0: all). sort has no primitive: it is a rank count (an n x n comparison
** per row, then one-hot selection), stable like tinygrad's.
*/

static const char *
shp(char *b, size_t n, const UOp *a)
{
	return uop_shape_fmt(b, n, a->shape, a->ndim);
}

/* The reduced axes as a mask; returns the number of elements each output element reduces. */
static int64_t
reduced(const UOp *a, const int64_t *axes, int k, int *mask, const char *what, Err *e)
{
	int64_t n = 1, x;
	int i;

	memset(mask, 0, sizeof(int) * T_MAXDIM);
	if (k < 0) {
		for (i = 0; i < a->ndim; i++)
			mask[i] = 1;
	} else
		for (i = 0; i < k; i++) {
			x = axes[i];
			if (axis_norm(what, &x, a->ndim, e) < 0)
				return -1;
			mask[x] = 1;
		}
	for (i = 0; i < a->ndim; i++)
		if (mask[i])
			n *= a->shape[i];
	return n;
}

/* tinygrad's _inverse: -x for floats, x ^ ~0 otherwise (not x for bool) */
static UOp *
inverse(UCtx *c, UOp *a, Err *e)
{
	if (!a)
		return NULL;
	if (dtype_is_float(a->dtype))
		return tensor_unary(c, OP_NEG, a, e);
	return tensor_alu(c, OP_XOR, a, kd(c, (DType)a->dtype, -1), e);
}

/* any(x, axes) = cast(x, bool):max(axes); all(x, axes) = cast(x, bool):prod(axes) */
UOp *
tensor_any(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, Err *e)
{
	return tensor_reduce(c, OP_MAX, a ? tensor_cast(c, DT_BOOL, a, e) : NULL, axes, k, keepdim, e);
}

UOp *
tensor_all(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, Err *e)
{
	return tensor_reduce(c, OP_MUL, a ? tensor_cast(c, DT_BOOL, a, e) : NULL, axes, k, keepdim, e);
}

/*
** var(x, axes, correction) = ((x - mean(x, keepdim)):square():sum(axes)) /
** max(n - correction, 0), float32 for integers (float16 and bfloat16 computed
** in float32, rounded back once). tinygrad casts the squares of an integer x to
** its integer sum dtype, truncating them; tessel sums them as floats.
*/
UOp *
tensor_var(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, double correction, Err *e)
{
	int mask[T_MAXDIM];
	int64_t n;
	DType out;
	UOp *m, *sq, *r;
	double den;

	if (!a)
		return NULL;
	if ((n = reduced(a, axes, k, mask, "var", e)) < 0)
		return NULL;
	out = dtype_is_float(a->dtype) ? (DType)a->dtype : DT_FLOAT32;
	if (out != DT_FLOAT32 && out != DT_FLOAT64)
		a = tensor_cast(c, DT_FLOAT32, a, e);
	else
		a = flt(c, a, e);
	m = tensor_mean(c, a, axes, k, 1, e);
	sq = tensor_square(c, sub(c, a, m, e), e);
	r = tensor_sum(c, sq, axes, k, keepdim, e);
	den = (double)n - correction;
	r = r ? tensor_div(c, r, kf(c, r, den > 0 ? den : 0), e) : NULL;
	return tensor_cast(c, out, r, e);
}

/* std(x, axes, correction) = sqrt(var(x, axes, correction)) */
UOp *
tensor_std(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, double correction, Err *e)
{
	return tensor_unary(c, OP_SQRT, tensor_var(c, a, axes, k, keepdim, correction, e), e);
}

/* logsumexp(x, axes) = log(exp(x - m):sum(axes)) + m with m = x:max(axes, keepdim) */
UOp *
tensor_logsumexp(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, Err *e)
{
	UOp *m, *r;

	a = flt(c, a, e);
	m = tensor_reduce(c, OP_MAX, a, axes, k, 1, e);
	r = tensor_log(c, tensor_sum(c, tensor_exp(c, sub(c, a, m, e), e), axes, k, keepdim, e), e);
	if (r && !keepdim)
		m = tensor_reshape(c, m, r->shape, r->ndim, e);
	return add(c, r, m, e);
}

/*
** argmax(x, axis) = (n - ((x == x:max(axis, keepdim)):where(arange(n, 0, -1), 0)):max(axis)):cast(int32):
** the first index of the maximum; axis NULL: of the flattened tensor.
*/
UOp *
tensor_argmax(UCtx *c, UOp *a, const int64_t *axis, int keepdim, Err *e)
{
	int64_t ax, s[T_MAXDIM], n;
	UOp *m, *rev;
	int i;

	if (!a)
		return NULL;
	if (!axis) {
		a = tensor_flatten(c, a, 0, -1, e);
		ax = 0;
		keepdim = 0;
	} else {
		ax = *axis;
		if (a->ndim == 0)
			a = tensor_flatten(c, a, 0, -1, e);
		if (a && axis_norm("argmax", &ax, a->ndim, e) < 0)
			return NULL;
	}
	if (!a)
		return NULL;
	n = a->shape[ax];
	if (n == 0)
		return err_set(e, "argmax: axis %lld has no elements", (long long)ax), NULL;
	m = tensor_eq(c, a, tensor_reduce(c, OP_MAX, a, &ax, 1, 1, e), e);
	for (i = 0; i < a->ndim - (int)ax; i++)
		s[i] = i == 0 ? n : 1;
	rev = tensor_reshape(c, tensor_arange_int(c, n, 0, -1, DT_INT32, e), s, a->ndim - (int)ax, e);
	m = sel(c, m, rev, kd(c, DT_INT32, 0), e);
	m = tensor_reduce(c, OP_MAX, m, &ax, 1, keepdim, e);
	return m ? sub(c, kd(c, DT_INT32, (double)n), m, e) : NULL;
}

/* argmin(x, axis) = argmax(inverse(x), axis) */
UOp *
tensor_argmin(UCtx *c, UOp *a, const int64_t *axis, int keepdim, Err *e)
{
	return tensor_argmax(c, inverse(c, a, e), axis, keepdim, e);
}

/* softmin(x, axis) = softmax(-x, axis) */
UOp *
tensor_softmin(UCtx *c, UOp *a, int axis, Err *e)
{
	return tensor_softmax(c, tensor_unary(c, OP_NEG, flt(c, a, e), e), axis, e);
}

/* ---- scans by an n x n mask ---- */

/* low[i][j] = j <= i (j < i when strict): arange(n):reshape{n, 1} >= arange(n) */
static UOp *
lower(UCtx *c, int64_t n, int strict, Err *e)
{
	int64_t s[2] = { n, 1 };
	UOp *i = tensor_reshape(c, tensor_arange(c, n, DT_INT64, e), s, 2, e), *j = tensor_arange(c, n, DT_INT64, e);

	return strict ? tensor_gt(c, i, j, e) : tensor_ge(c, i, j, e);
}

/* The identity of op in dtype t (max: the lowest value, -inf for floats). */
static UOp *
identity(UCtx *c, Op op, DType t)
{
	int64_t lo, hi;

	if (op == OP_MUL)
		return kd(c, t, 1);
	if (op == OP_ADD)
		return kd(c, t, 0);
	if (dtype_is_float(t))
		return kd(c, t, -INFINITY);
	if (t == DT_BOOL)
		return kd(c, t, 0);
	dtype_range(t, &lo, &hi);
	return uop_new(c, OP_CONST, t, NULL, 0, lo, 0, NULL, NULL, 0);
}

/*
** A scan along axis: x moved last (L, n), then
** low(n):where(x:reshape{L, 1, n}, identity):reduce(op, -1) ((L, n, n) work), moved back.
*/
static UOp *
scan(UCtx *c, UOp *a, int64_t axis, Op op, const char *what, Err *e)
{
	int64_t last = -1;
	UOp *x;

	if (!a)
		return NULL;
	if (a->ndim == 0 || uop_numel(a) == 0)
		return a;
	if (axis_norm(what, &axis, a->ndim, e) < 0)
		return NULL;
	if (a->ndim + 1 > T_MAXDIM)
		return err_set(e, "%s: rank %d leaves no room for the scan (at most %d)", what, a->ndim, T_MAXDIM - 1),
		       NULL;
	x = swap_ax(c, a, (int)axis, a->ndim - 1, e);
	x = unsq(c, x, a->ndim - 1, e);
	x = sel(c, lower(c, a->shape[axis], 0, e), x, identity(c, op, (DType)a->dtype), e);
	x = tensor_reduce(c, op, x, &last, 1, 0, e);
	return swap_ax(c, x, (int)axis, a->ndim - 1, e);
}

/* cumprod(x, axis): the mask scan with Mul (dtype kept, as tinygrad's) */
UOp *
tensor_cumprod(UCtx *c, UOp *a, int64_t axis, Err *e)
{
	return scan(c, a, axis, OP_MUL, "cumprod", e);
}

/*
** cummax(x, axis) = the mask scan with Max; the index (int32) is the first
** position j <= i holding the running maximum:
**   n - (x:reshape{n, 1} == values:reshape{1, n} & upper(n)):where(arange(n, 0, -1), 0):max(-2)
*/
UOp *
tensor_cummax(UCtx *c, UOp *a, int64_t axis, UOp **index, Err *e)
{
	int64_t n, s[2], m2 = -2;
	UOp *v, *x, *vt, *match, *rev;

	if (index)
		*index = NULL;
	v = scan(c, a, axis, OP_MAX, "cummax", e);
	if (!v || !index)
		return v;
	if (a->ndim == 0 || uop_numel(a) == 0) {
		*index = tensor_full(c, DT_INT32, 0, a->shape, a->ndim, e);
		return *index ? v : NULL;
	}
	if (axis < 0)
		axis += a->ndim;
	n = a->shape[axis];
	x = swap_ax(c, a, (int)axis, a->ndim - 1, e);
	vt = swap_ax(c, v, (int)axis, a->ndim - 1, e);
	match = tensor_eq(c, unsq(c, x, a->ndim, e), unsq(c, vt, a->ndim - 1, e), e);
	match = band(c, match, swap_ax(c, lower(c, n, 0, e), 0, 1, e), e);
	s[0] = n;
	s[1] = 1;
	rev = tensor_reshape(c, tensor_arange_int(c, n, 0, -1, DT_INT32, e), s, 2, e);
	match = tensor_reduce(c, OP_MAX, sel(c, match, rev, kd(c, DT_INT32, 0), e), &m2, 1, 0, e);
	match = match ? sub(c, kd(c, DT_INT32, (double)n), match, e) : NULL;
	*index = swap_ax(c, match, (int)axis, a->ndim - 1, e);
	return *index ? v : NULL;
}

/* cummin(x, axis) = inverse(cummax(inverse(x), axis)), the same indices */
UOp *
tensor_cummin(UCtx *c, UOp *a, int64_t axis, UOp **index, Err *e)
{
	return inverse(c, tensor_cummax(c, inverse(c, a, e), axis, index, e), e);
}

/*
** logcumsumexp(x, axis) = log(low(n):where(x:reshape{1, n} - m:reshape{n, 1}, -inf):exp():sum(-1)) + m
** with m = cummax(x) (tinygrad's; x moved last and back)
*/
UOp *
tensor_logcumsumexp(UCtx *c, UOp *a, int64_t axis, Err *e)
{
	int64_t last = -1;
	UOp *x, *m, *d;

	a = flt(c, a, e);
	if (!a || a->ndim == 0 || uop_numel(a) == 0)
		return a;
	if (axis_norm("logcumsumexp", &axis, a->ndim, e) < 0)
		return NULL;
	x = swap_ax(c, a, (int)axis, a->ndim - 1, e);
	m = tensor_cummax(c, x, -1, NULL, e);
	d = sub(c, unsq(c, x, a->ndim - 1, e), unsq(c, m, a->ndim, e), e);
	d = sel(c, lower(c, a->shape[axis], 0, e), d, identity(c, OP_MAX, (DType)a->dtype), e);
	d = tensor_log(c, tensor_sum(c, tensor_exp(c, d, e), &last, 1, 0, e), e);
	return swap_ax(c, add(c, d, m, e), (int)axis, a->ndim - 1, e);
}

/* ---- sort ---- */

/*
** sort(x, dim, descending): along dim moved last, the stable rank of each element
**   rank[i] = #{j : x[j] < x[i]} + #{j < i : x[j] == x[i]}   (> when descending)
** from the n x n comparisons; the indices are the one-hot inverse
**   index[r] = (rank:reshape{1, n} == arange(n):reshape{n, 1}):where(arange(n), 0):sum(-1)
** (int32) and the values x:gather(-1, index). NaN has no place in the order.
*/
int
tensor_sort(UCtx *c, UOp *a, int64_t dim, int descending, UOp **values, UOp **indices, Err *e)
{
	int64_t n, s[2], last = -1;
	int nd;
	UOp *x, *xi, *xj, *cmp, *rank, *oh, *idx;

	*values = *indices = NULL;
	if (!a)
		return -1;
	if (a->ndim == 0) {
		*values = a;
		*indices = kd(c, DT_INT32, 0);
		return 0;
	}
	if (axis_norm("sort", &dim, a->ndim, e) < 0)
		return -1;
	nd = a->ndim;
	n = a->shape[dim];
	if (n <= 1) {
		*values = a;
		*indices = tensor_full(c, DT_INT32, 0, a->shape, nd, e);
		return *indices ? 0 : -1;
	}
	if (nd + 1 > T_MAXDIM)
		return err_set(e, "sort: rank %d leaves no room for the comparisons (at most %d)", nd, T_MAXDIM - 1);
	x = swap_ax(c, a, (int)dim, nd - 1, e);
	xi = unsq(c, x, nd, e);       /* (L, n, 1): x[i] */
	xj = unsq(c, x, nd - 1, e);   /* (L, 1, n): x[j] */
	cmp = descending ? tensor_gt(c, xj, xi, e) : lt(c, xj, xi, e);
	cmp = bor(c, cmp, band(c, tensor_eq(c, xj, xi, e), lower(c, n, 1, e), e), e);
	rank = tensor_sum(c, cmp, &last, 1, 0, e);   /* (L, n) int32 */
	s[0] = n;
	s[1] = 1;
	oh = tensor_eq(c, unsq(c, rank, nd - 1, e), tensor_reshape(c, tensor_arange(c, n, DT_INT32, e), s, 2, e), e);
	idx = tensor_sum(c, sel(c, oh, tensor_arange(c, n, DT_INT32, e), kd(c, DT_INT32, 0), e), &last, 1, 0, e);
	x = tensor_gather(c, x, nd - 1, idx, e);
	*values = swap_ax(c, x, (int)dim, nd - 1, e);
	*indices = swap_ax(c, idx, (int)dim, nd - 1, e);
	return *values && *indices ? 0 : -1;
}

/* topk(x, k, dim, largest) = sort(x, dim, largest) shrunk to the first k along dim */
int
tensor_topk(UCtx *c, UOp *a, int64_t k, int64_t dim, int largest, UOp **values, UOp **indices, Err *e)
{
	int64_t b[T_MAXDIM], en[T_MAXDIM];
	int i;

	*values = *indices = NULL;
	if (!a)
		return -1;
	if (a->ndim == 0)
		return err_set(e, "topk: a tensor of shape () has no axis");
	if (axis_norm("topk", &dim, a->ndim, e) < 0)
		return -1;
	if (k < 0 || k > a->shape[dim])
		return err_set(e, "topk: k = %lld is out of range for dim %lld of size %lld", (long long)k,
		               (long long)dim, (long long)a->shape[dim]);
	if (tensor_sort(c, a, dim, largest, values, indices, e) < 0)
		return -1;
	for (i = 0; i < a->ndim; i++) {
		b[i] = 0;
		en[i] = a->shape[i];
	}
	en[dim] = k;
	*values = tensor_shrink(c, *values, b, en, a->ndim, e);
	*indices = *values ? tensor_shrink(c, *indices, b, en, a->ndim, e) : NULL;
	return *values && *indices ? 0 : -1;
}

/* ---- normalization, layers ---- */

/* normalize(x, p, dim, eps) = x / max(den, eps), den = (|x|^p):sum(dim, keepdim)^(1/p) (p = 0: (x != 0):sum) */
UOp *
tensor_normalize(UCtx *c, UOp *a, double p, int64_t dim, double eps, Err *e)
{
	UOp *den;

	if (!a)
		return NULL;
	if (axis_norm("normalize", &dim, a->ndim, e) < 0)
		return NULL;
	if (p == 0)
		den = tensor_sum(c, ne(c, a, kd(c, (DType)a->dtype, 0), e), &dim, 1, 1, e);
	else {
		den = flt(c, tensor_abs(c, a, e), e);
		den = den ? tensor_pow(c, den, kf(c, den, p), e) : NULL;
		den = tensor_sum(c, den, &dim, 1, 1, e);
		den = den ? tensor_pow(c, den, kf(c, den, 1 / p), e) : NULL;
	}
	den = flt(c, den, e);
	den = den ? tensor_alu(c, OP_MAX, den, kf(c, den, eps), e) : NULL;
	return tensor_div(c, a, den, e);
}

/* layernorm(x, axes, eps) = y rsqrt(mean(y y, axes, keepdim) + eps) with y = x - mean(x, axes, keepdim) */
UOp *
tensor_layernorm(UCtx *c, UOp *a, const int64_t *axes, int k, double eps, Err *e)
{
	UOp *y;

	a = flt(c, a, e);
	y = sub(c, a, tensor_mean(c, a, axes, k, 1, e), e);
	return mul(c, y, tensor_rsqrt(c, addk(c, tensor_mean(c, mul(c, y, y, e), axes, k, 1, e), eps, e), e), e);
}

/* A per-channel tensor reshaped to s (the size on the axes, 1 elsewhere), or NULL unchanged. */
static UOp *
chan(UCtx *c, UOp *t, const int64_t *s, int nd, const char *what, const char *name, Err *e)
{
	char b1[160], b2[160];
	int64_t want = 1;
	int i;

	for (i = 0; i < nd; i++)
		want *= s[i];
	if (!t)
		return NULL;
	if (uop_numel(t) != want)
		return err_set(e, "batchnorm: %s has shape %s; the axes %s want %s elements", name,
		               shp(b1, sizeof b1, t), what, uop_shape_fmt(b2, sizeof b2, s, nd)), NULL;
	return tensor_reshape(c, t, s, nd, e);
}

/*
** batchnorm(x, weight, bias, mean, invstd, axes) (inference, tinygrad's):
** ((x - mean) weight invstd + bias), each reshaped to the channel shape (the
** size on the axes, 1 elsewhere); weight and bias may be NULL; an invstd whose
** rank is not the number of axes broadcasts as it is.
*/
UOp *
tensor_batchnorm(UCtx *c, UOp *x, UOp *w, UOp *b, UOp *mean, UOp *invstd, const int64_t *axes, int k,
                 Err *e)
{
	int64_t s[T_MAXDIM], ax;
	int mask[T_MAXDIM] = {0}, i;
	char b1[160];

	if (!x || !mean || !invstd)
		return NULL;
	if (k < 1 || k > x->ndim)
		return err_set(e, "batchnorm: %d axes for a tensor of rank %d", k, x->ndim), NULL;
	for (i = 0; i < k; i++) {
		ax = axes[i];
		if (axis_norm("batchnorm", &ax, x->ndim, e) < 0)
			return NULL;
		mask[ax] = 1;
	}
	for (i = 0; i < x->ndim; i++)
		s[i] = mask[i] ? x->shape[i] : 1;
	shp(b1, sizeof b1, x);
	x = sub(c, x, chan(c, mean, s, x->ndim, b1, "mean", e), e);
	if (x && w)
		x = mul(c, x, chan(c, w, s, x->ndim, b1, "weight", e), e);
	if (x)
		x = mul(c, x, invstd->ndim == k ? chan(c, invstd, s, x->ndim, b1, "invstd", e) : invstd, e);
	if (x && b)
		x = add(c, x, chan(c, b, s, x->ndim, b1, "bias", e), e);
	return named_err(x, e, "batchnorm");
}

/* linear(x, w, b) = x * w (w 1-D) or x:matmul(w), then + b */
UOp *
tensor_linear(UCtx *c, UOp *x, UOp *w, UOp *b, Err *e)
{
	if (!x || !w)
		return NULL;
	x = w->ndim == 1 ? mul(c, x, w, e) : tensor_matmul(c, x, w, e);
	return named_err(b ? add(c, x, b, e) : x, e, "linear");
}

/*
** scaled_dot_product_attention(q, k, v, mask, is_causal, enable_gqa) (tinygrad's):
**   qk = q:matmul(k:transpose(-2, -1)) / sqrt(q.shape[-1])   (in float32 or wider)
**   is_causal: mask = ones(bool):tril(); a bool mask becomes mask:where(0, -inf); qk = qk + mask
**   out = qk:cast(q.dtype):softmax(-1):matmul(v)
** enable_gqa repeats k and v along axis -3 to q's heads first.
*/
UOp *
tensor_sdpa(UCtx *c, UOp *q, UOp *k, UOp *v, UOp *mask, int is_causal, int enable_gqa, Err *e)
{
	DType t;
	UOp *qk;
	char b1[160], b2[160];

	if (!q || !k || !v)
		return NULL;
	if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2)
		return err_set(e, "scaled_dot_product_attention: q, k and v need at least 2 axes, got q %s and k %s "
		               "and v of rank %d", shp(b1, sizeof b1, q), shp(b2, sizeof b2, k), v->ndim), NULL;
	if (is_causal && mask)
		return err_set(e, "scaled_dot_product_attention: a mask and is_causal together (give one)"), NULL;
	if (enable_gqa) {
		int64_t ax = -3;

		if (q->ndim < 3 || k->ndim < 3 || v->ndim < 3)
			return err_set(e, "scaled_dot_product_attention: enable_gqa needs a heads axis (-3) in q, k and v"),
			       NULL;
		if (k->shape[k->ndim - 3] == 0 || q->shape[q->ndim - 3] % k->shape[k->ndim - 3]
		    || v->shape[v->ndim - 3] == 0 || q->shape[q->ndim - 3] % v->shape[v->ndim - 3])
			return err_set(e, "scaled_dot_product_attention: enable_gqa: q's %lld heads are not a multiple of "
			               "k's %lld and v's %lld", (long long)q->shape[q->ndim - 3],
			               (long long)k->shape[k->ndim - 3], (long long)v->shape[v->ndim - 3]), NULL;
		k = tensor_repeat_interleave(c, k, q->shape[q->ndim - 3] / k->shape[k->ndim - 3], &ax, e);
		v = tensor_repeat_interleave(c, v, q->shape[q->ndim - 3] / v->shape[v->ndim - 3], &ax, e);
		if (!k || !v)
			return NULL;
	}
	t = dtype_promote(dtype_promote(q->dtype, k->dtype), DT_FLOAT32);
	qk = tensor_matmul(c, tensor_cast(c, t, q, e), tensor_transpose(c, tensor_cast(c, t, k, e), -2, -1, e), e);
	qk = tensor_div(c, qk, kd(c, t, sqrt((double)q->shape[q->ndim - 1])), e);
	if (qk && is_causal)
		mask = tensor_tril(c, tensor_full(c, DT_BOOL, 1, qk->shape, qk->ndim, e), 0, e);
	if (qk && mask) {
		if (mask->dtype == DT_BOOL)
			mask = sel(c, mask, kd(c, DT_FLOAT32, 0), kd(c, DT_FLOAT32, -INFINITY), e);
		qk = add(c, qk, mask, e);
	}
	qk = tensor_cast(c, (DType)q->dtype, qk, e);
	return named_err(tensor_matmul(c, tensor_softmax(c, qk, -1, e), v, e), e, "scaled_dot_product_attention");
}

/* ---- einsum ---- */

static int
isletter(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/*
** einsum(formula, x0, x1, ...) as tinygrad's: "..." becomes letters not in the
** formula; a letter repeated in one input takes that diagonal; every operand is
** permuted to alphabetical order and reshaped with 1 for its missing letters,
** the operands are multiplied (and-ed for bool), the letters not in the output
** summed (sum's dtype), and the rest permuted to the output's order. Without
** "->", the output is the letters seen once, sorted.
*/
UOp *
tensor_einsum(UCtx *c, const char *formula, UOp *const *xs, int n, Err *e)
{
	enum { MAXF = 512 };
	char f[MAXF], in[T_MAXDIM][T_MAXDIM + 1], rhs[64], ell[64];
	int64_t sz[128], o[T_MAXDIM], s[T_MAXDIM], sumax[T_MAXDIM];
	int seen[128] = {0}, cnt[128] = {0}, i, j, k, nin = 0, len, maxell = 0, nell[T_MAXDIM] = {0}, hasarrow;
	UOp *x[T_MAXDIM], *r = NULL;
	const char *p, *arrow;
	char alpha[64];
	int na = 0, ns = 0;

	for (i = j = 0; formula[i]; i++)
		if (formula[i] != ' ') {
			if (j >= MAXF - 1)
				return err_set(e, "einsum: the formula is longer than %d characters", MAXF - 1), NULL;
			f[j++] = formula[i];
		}
	f[j] = 0;
	if (n < 1 || n > T_MAXDIM)
		return err_set(e, "einsum: 1 to %d operands, got %d", T_MAXDIM, n), NULL;
	for (i = 0; i < n; i++)
		if (!xs[i])
			return NULL;
	arrow = strstr(f, "->");
	hasarrow = arrow != NULL;
	/* the inputs, split at commas; "..." marked as '.' */
	for (p = f; *p && (!arrow || p < arrow);) {
		if (nin >= T_MAXDIM)
			return err_set(e, "einsum: \"%s\": more than %d inputs", formula, T_MAXDIM), NULL;
		len = 0;
		while (*p && *p != ',' && (!arrow || p < arrow)) {
			if (p[0] == '.' && p[1] == '.' && p[2] == '.') {
				if (len && memchr(in[nin], '.', (size_t)len))
					return err_set(e, "einsum: \"%s\": \"...\" twice in one input", formula), NULL;
				p += 3;
				in[nin][len++] = '.';
			} else if (isletter(*p))
				in[nin][len++] = *p++;
			else
				return err_set(e, "einsum: \"%s\": '%c' is neither a letter, ',', \"...\" nor \"->\"", formula,
				               *p), NULL;
			if (len > T_MAXDIM)
				return err_set(e, "einsum: \"%s\": an input has more than %d axes", formula, T_MAXDIM), NULL;
		}
		in[nin][len] = 0;
		nin++;
		if (*p == ',')
			p++;
	}
	if (nin == 0)
		nin = 1, in[0][0] = 0;
	if (nin != n)
		return err_set(e, "einsum: \"%s\" has %d inputs, but %d operands were given", formula, nin, n), NULL;
	/* letters not in the formula, for "..." (tinygrad: string.ascii_letters order) */
	for (i = 0, k = 0; i < 52; i++) {
		char ch = (char)(i < 26 ? 'a' + i : 'A' + i - 26);

		if (!strchr(f, ch) && k < 63)
			ell[k++] = ch;
	}
	ell[k] = 0;
	for (i = 0; i < n; i++) {
		int l = (int)strlen(in[i]);

		if (strchr(in[i], '.')) {
			nell[i] = xs[i]->ndim - (l - 1);
			if (nell[i] < 0)
				nell[i] = 0;
			if (nell[i] > maxell)
				maxell = nell[i];
		}
	}
	if (maxell > k)
		return err_set(e, "einsum: \"%s\": too few free letters for \"...\"", formula), NULL;
	for (i = 0; i < n; i++) {
		char t[T_MAXDIM + 1];
		int l = 0;

		for (p = in[i]; *p; p++) {
			if (*p == '.') {
				for (j = maxell - nell[i]; j < maxell; j++)
					t[l++] = ell[j];
			} else
				t[l++] = *p;
			if (l > T_MAXDIM)
				return err_set(e, "einsum: \"%s\": an input has more than %d axes", formula, T_MAXDIM), NULL;
		}
		t[l] = 0;
		memcpy(in[i], t, (size_t)l + 1);
	}
	/* the output */
	if (hasarrow) {
		len = 0;
		for (p = arrow + 2; *p; p++) {
			if (p[0] == '.' && p[1] == '.' && p[2] == '.') {
				for (j = 0; j < maxell && len < 63; j++)
					rhs[len++] = ell[j];
				p += 2;
			} else if (isletter(*p) && len < 63)
				rhs[len++] = *p;
			else
				return err_set(e, "einsum: \"%s\": '%c' in the output is not a letter", formula, *p), NULL;
		}
		rhs[len] = 0;
	} else {
		for (i = 0; i < n; i++)
			for (p = in[i]; *p; p++)
				cnt[(int)*p]++;
		len = 0;
		for (j = 0; j < maxell; j++)
			rhs[len++] = ell[j];
		for (i = 'A'; i <= 'z'; i++)
			if (isletter((char)i) && cnt[i] == 1 && !(strchr(ell, i) && memchr(ell, i, (size_t)maxell)))
				rhs[len++] = (char)i;
		rhs[len] = 0;
		memset(cnt, 0, sizeof cnt);
	}
	for (p = rhs; *p; p++) {
		if (cnt[(int)*p]++)
			return err_set(e, "einsum: \"%s\": '%c' appears twice in the output", formula, *p), NULL;
	}
	/* ranks, diagonals of repeated letters, sizes */
	for (i = 0; i < n; i++) {
		x[i] = xs[i];
		if ((int)strlen(in[i]) != x[i]->ndim)
			return err_set(e, "einsum: \"%s\": input %d names %d axes, but operand %d has shape %s", formula, i,
			               (int)strlen(in[i]), i, uop_shape_fmt((char[160]){0}, 160, x[i]->shape, x[i]->ndim)),
			       NULL;
		for (j = 0; in[i][j]; j++) {
			char *q2 = strchr(in[i] + j + 1, in[i][j]);

			if (q2) {
				int jj = (int)(q2 - in[i]), l = (int)strlen(in[i]);
				char ch = in[i][j];

				if (x[i]->shape[j] != x[i]->shape[jj])
					return err_set(e, "einsum: \"%s\": '%c' has sizes %lld and %lld in input %d", formula, ch,
					               (long long)x[i]->shape[j], (long long)x[i]->shape[jj], i), NULL;
				if (!(x[i] = tensor_diagonal(c, x[i], 0, j, jj, e)))
					return NULL;
				/* the diagonal is the new last axis */
				memmove(in[i] + jj, in[i] + jj + 1, (size_t)(l - jj));
				memmove(in[i] + j, in[i] + j + 1, (size_t)(l - 1 - j));
				in[i][l - 2] = ch;
				in[i][l - 1] = 0;
				j = -1;
			}
		}
		for (j = 0; in[i][j]; j++) {
			int ch = in[i][j];

			if (seen[ch] && sz[ch] != x[i]->shape[j])
				return err_set(e, "einsum: \"%s\": '%c' has sizes %lld and %lld", formula, ch, (long long)sz[ch],
				               (long long)x[i]->shape[j]), NULL;
			seen[ch] = 1;
			sz[ch] = x[i]->shape[j];
		}
	}
	for (p = rhs; *p; p++)
		if (!seen[(int)*p])
			return err_set(e, "einsum: \"%s\": '%c' of the output is in no input", formula, *p), NULL;
	for (i = 'A'; i <= 'z'; i++)
		if (seen[i])
			alpha[na++] = (char)i;
	if (na > T_MAXDIM)
		return err_set(e, "einsum: \"%s\": %d letters are more than %d axes", formula, na, T_MAXDIM), NULL;
	/* align every operand to the alphabet, multiply, sum, permute */
	for (i = 0; i < n; i++) {
		int l = (int)strlen(in[i]);

		for (j = k = 0; j < na; j++) {
			char *q2 = memchr(in[i], alpha[j], (size_t)l);

			if (q2)
				o[k++] = q2 - in[i];
			s[j] = q2 ? sz[(int)alpha[j]] : 1;
		}
		x[i] = tensor_permute(c, x[i], o, l, e);
		x[i] = tensor_reshape(c, x[i], s, na, e);
		r = i == 0 ? x[0] : tensor_alu(c, r && r->dtype == DT_BOOL && x[i] && x[i]->dtype == DT_BOOL ? OP_AND : OP_MUL,
		                               r, x[i], e);
	}
	for (j = 0; j < na; j++)
		if (!strchr(rhs, alpha[j]))
			sumax[ns++] = j;
	r = tensor_sum(c, r, sumax, ns, 0, e);
	/* r's axes are the output letters in alphabetical order */
	len = (int)strlen(rhs);
	for (i = 0; i < len; i++) {
		for (j = k = 0; j < len; j++)
			k += rhs[j] < rhs[i];
		o[i] = k;
	}
	return named_err(tensor_permute(c, r, o, len, e), e, "einsum");
}

/* ---- losses ---- */

/* "none", "sum" or "mean" */
int
tensor_reduction_parse(const char *s, TReduction *r, Err *e)
{
	if (strcmp(s, "none") == 0)
		*r = TRED_NONE;
	else if (strcmp(s, "sum") == 0)
		*r = TRED_SUM;
	else if (strcmp(s, "mean") == 0)
		*r = TRED_MEAN;
	else
		return err_set(e, "reduction \"%s\" must be \"none\", \"sum\" or \"mean\"", s);
	return 0;
}

static UOp *
reduce_as(UCtx *c, UOp *a, TReduction r, Err *e)
{
	if (r == TRED_SUM)
		return tensor_sum(c, a, NULL, -1, 0, e);
	if (r == TRED_MEAN)
		return tensor_mean(c, a, NULL, -1, 0, e);
	return a;
}

static int
same_shape(const UOp *a, const UOp *b)
{
	return a->ndim == b->ndim && (a->ndim == 0 || memcmp(a->shape, b->shape, sizeof a->shape[0] * a->ndim) == 0);
}

/* binary_crossentropy(x, y) = (-y log(x) - (1 - y) log(1 - x)):reduction */
UOp *
tensor_binary_crossentropy(UCtx *c, UOp *x, UOp *y, TReduction red, Err *e)
{
	UOp *a, *b, *one;

	if (!x || !y)
		return NULL;
	x = flt(c, x, e);
	one = kf(c, x, 1);
	a = mul(c, tensor_unary(c, OP_NEG, y, e), tensor_log(c, x, e), e);
	b = mul(c, sub(c, one, y, e), tensor_log(c, sub(c, one, x, e), e), e);
	return named_err(reduce_as(c, sub(c, a, b, e), red, e), e, "binary_crossentropy");
}

/* binary_crossentropy_logits(x, y, pos_weight) = -(pw y logsigmoid(x) + (1 - y) logsigmoid(-x)):reduction */
UOp *
tensor_binary_crossentropy_logits(UCtx *c, UOp *x, UOp *y, TReduction red, UOp *pos_weight, Err *e)
{
	UOp *lp, *lq, *a;

	if (!x || !y)
		return NULL;
	x = flt(c, x, e);
	lp = tensor_logsigmoid(c, x, e);
	lq = tensor_logsigmoid(c, tensor_unary(c, OP_NEG, x, e), e);
	a = mul(c, y, lp, e);
	if (pos_weight)
		a = mul(c, pos_weight, a, e);
	a = add(c, a, mul(c, x ? sub(c, kf(c, x, 1), y, e) : NULL, lq, e), e);
	return named_err(reduce_as(c, tensor_unary(c, OP_NEG, a, e), red, e), e, "binary_crossentropy_logits");
}

/* one-hot of integer labels y along axis d of the result: y:unsqueeze(d) == arange(n) along d (bool) */
static UOp *
onehot_along(UCtx *c, UOp *y, int64_t n, int d, Err *e)
{
	int64_t s[T_MAXDIM];
	int i, r;

	y = unsq(c, y, d, e);
	if (!y)
		return NULL;
	r = y->ndim - d;
	for (i = 0; i < r; i++)
		s[i] = i == 0 ? n : 1;
	return tensor_eq(c, y, tensor_reshape(c, tensor_arange(c, n, DT_INT64, e), s, r, e), e);
}

/*
** cross_entropy(x, y, label_smoothing) = -(log_softmax(x, d) * y'):sum(d):reduction,
** d the class axis (0 for 1-D x, else 1); integer labels y become one-hot along d;
** y' = (1 - ls) y + ls / n.
*/
UOp *
tensor_cross_entropy(UCtx *c, UOp *x, UOp *y, TReduction red, double ls, Err *e)
{
	int64_t d;
	char b1[160], b2[160];
	UOp *r;

	if (!x || !y)
		return NULL;
	if (!(ls >= 0 && ls <= 1))
		return err_set(e, "cross_entropy: label_smoothing %g is not in [0, 1]", ls), NULL;
	if (x->ndim == 0)
		return err_set(e, "cross_entropy: the logits need a class axis, got shape ()"), NULL;
	d = x->ndim == 1 ? 0 : 1;
	if (!same_shape(x, y)) {
		int ok = y->ndim == x->ndim - 1, i, j = 0;

		for (i = 0; ok && i < x->ndim; i++)
			if (i != d)
				ok = y->shape[j++] == x->shape[i];
		if (!ok)
			return err_set(e, "cross_entropy: logits %s and targets %s: the targets are class indices (the logits' "
			               "shape without axis %lld) or probabilities (the same shape)", shp(b1, sizeof b1, x),
			               shp(b2, sizeof b2, y), (long long)d), NULL;
		if (!is_intdt((DType)y->dtype))
			return err_set(e, "cross_entropy: class indices must be integers, got %s", dtype_name(y->dtype)), NULL;
		y = onehot_along(c, y, x->shape[d], (int)d, e);
	}
	y = flt(c, y, e);
	y = addk(c, mulk(c, y, 1 - ls, e), ls / (double)x->shape[d], e);
	r = tensor_sum(c, mul(c, tensor_log_softmax(c, x, (int)d, e), y, e), &d, 1, 0, e);
	return named_err(reduce_as(c, tensor_unary(c, OP_NEG, r, e), red, e), e, "cross_entropy");
}

/*
** sparse_categorical_crossentropy(x, y, ignore_index, ls): with lp = log_softmax(x, -1),
** m = y != ignore_index (all true when it is -1), h = one-hot(y) & m,
** u = (1 - ls) (lp h):sum(-1) + ls lp:mean(-1) m; mean: -u:sum() / m:sum(), else -u:reduction
*/
UOp *
tensor_sparse_categorical_crossentropy(UCtx *c, UOp *x, UOp *y, int64_t ignore_index, double ls, TReduction red,
                                       Err *e)
{
	int64_t last = -1;
	UOp *lp, *m, *h, *u, *sm;
	char b1[160], b2[160];
	int i, ok;

	if (!x || !y)
		return NULL;
	if (!(ls >= 0 && ls <= 1))
		return err_set(e, "sparse_categorical_crossentropy: label_smoothing %g is not in [0, 1]", ls), NULL;
	ok = x->ndim >= 1 && y->ndim == x->ndim - 1;
	for (i = 0; ok && i < y->ndim; i++)
		ok = y->shape[i] == x->shape[i];
	if (!ok)
		return err_set(e, "sparse_categorical_crossentropy: logits %s and labels %s: the labels have the logits' "
		               "shape without the last axis", shp(b1, sizeof b1, x), shp(b2, sizeof b2, y)), NULL;
	if (!is_intdt((DType)y->dtype))
		return err_set(e, "sparse_categorical_crossentropy: labels must be integers, got %s", dtype_name(y->dtype)),
		       NULL;
	lp = tensor_log_softmax(c, x, -1, e);
	m = ignore_index != -1 ? ne(c, y, kd(c, (DType)y->dtype, (double)ignore_index), e)
	                       : tensor_full(c, DT_BOOL, 1, y->shape, y->ndim, e);
	h = band(c, onehot_along(c, y, x->shape[x->ndim - 1], y->ndim, e), unsq(c, m, y->ndim, e), e);
	sm = mulk(c, mul(c, tensor_mean(c, lp, &last, 1, 0, e), m, e), ls, e);
	u = add(c, mulk(c, tensor_sum(c, mul(c, lp, h, e), &last, 1, 0, e), 1 - ls, e), sm, e);
	if (red == TRED_MEAN)
		return named_err(tensor_div(c, tensor_unary(c, OP_NEG, tensor_sum(c, u, NULL, -1, 0, e), e),
		                  tensor_sum(c, m, NULL, -1, 0, e), e), e, "sparse_categorical_crossentropy");
	return named_err(tensor_unary(c, OP_NEG, reduce_as(c, u, red, e), e), e, "sparse_categorical_crossentropy");
}

/*
** nll_loss(x, y, weight, ignore_index) = -x:gather(1, y:unsqueeze(1)):squeeze(1) * w,
** w = weight:gather(0, y) (or 1) times (y != ignore_index) when given;
** mean: the sum over w's sum, else reduction
*/
UOp *
tensor_nll_loss(UCtx *c, UOp *x, UOp *y, UOp *weight, const int64_t *ignore_index, TReduction red, Err *e)
{
	int64_t one = 1;
	UOp *w, *nll;
	char b1[160], b2[160];
	int i, ok;

	if (!x || !y)
		return NULL;
	ok = x->ndim >= 2 && y->ndim == x->ndim - 1;
	for (i = 0; ok && i < y->ndim; i++)
		ok = y->shape[i] == x->shape[i == 0 ? 0 : i + 1];
	if (!ok)
		return err_set(e, "nll_loss: log-probabilities %s and targets %s: the targets have the shape without axis 1",
		               shp(b1, sizeof b1, x), shp(b2, sizeof b2, y)), NULL;
	if (!is_intdt((DType)y->dtype))
		return err_set(e, "nll_loss: targets must be integers, got %s", dtype_name(y->dtype)), NULL;
	if (weight) {
		if (weight->ndim != 1 || weight->shape[0] != x->shape[1])
			return err_set(e, "nll_loss: weight has shape %s, not (%lld,) (one per class)",
			               shp(b1, sizeof b1, weight), (long long)x->shape[1]), NULL;
		w = tensor_gather(c, weight, 0, tensor_flatten(c, y, 0, -1, e), e);
		w = w ? tensor_reshape(c, w, y->shape, y->ndim, e) : NULL;
	} else
		w = tensor_full(c, (DType)y->dtype, 1, y->shape, y->ndim, e);
	if (ignore_index)
		w = mul(c, w, ne(c, y, kd(c, (DType)y->dtype, (double)*ignore_index), e), e);
	nll = tensor_gather(c, x, 1, unsq(c, y, 1, e), e);
	nll = tensor_squeeze(c, nll, &one, e);
	nll = mul(c, tensor_unary(c, OP_NEG, nll, e), w, e);
	if (red == TRED_MEAN)
		return named_err(tensor_div(c, tensor_sum(c, nll, NULL, -1, 0, e), tensor_sum(c, w, NULL, -1, 0, e), e), e, "nll_loss");
	return named_err(reduce_as(c, nll, red, e), e, "nll_loss");
}

/* ---- selection by a mask: masked_select, nonzero ---- */

/*
** The number of true elements of m (bool), realized: the length of a
** masked_select or nonzero without size, data as tinygrad's .item() reads it.
*/
static int64_t
count_true(UCtx *c, UOp *m, const char *what, Err *e)
{
	int64_t all = -1;
	UOp *s = tensor_reduce(c, OP_ADD, tensor_cast(c, DT_INT64, m, e), &all, 1, 0, e);
	TBuf b;
	Err t = { "" };
	int64_t n;

	(void)all;
	if (!s)
		return -1;
	if (tensor_realize(s, NULL, &b, &t) < 0)
		return err_set(e, "%s: without size, the length is the count of true elements, which needs the values "
		               "(%s); give size", what, t.msg);
	n = (int64_t)tbuf_get(&b, 0);
	tbuf_free(&b);
	return n;
}

/*
** The flat positions of the first size true elements of m (n, bool):
** idx[p] = sum_i (cumsum(m)[i] <= p), which is n for p past the count.
*/
static UOp *
true_positions(UCtx *c, UOp *m, int64_t size, Err *e)
{
	int64_t n = m->shape[0], rs[2] = { 1, n }, cs[2] = { size, 1 }, ax = 1;
	UOp *cum = tensor_cumsum(c, tensor_cast(c, DT_INT32, m, e), 0, e);
	UOp *p = tensor_arange(c, size, DT_INT32, e), *le;

	le = tensor_logical_not(c, lt(c, tensor_reshape(c, p, cs, 2, e), tensor_reshape(c, cum, rs, 2, e), e), e);
	return tensor_cast(c, DT_INT32, tensor_sum(c, le, &ax, 1, 0, e), e);
}

/*
** masked_select(a, mask, size, fill) (tinygrad's): the elements of a where the
** bool mask (broadcast to a's shape) is true, in row-major order; size < 0: as
** many as there are (counted from the values), else size of them, padded with
** fill (NULL: 0) or cut. out[p] = (p < count):where(a:flatten():gather(0, idx), fill).
*/
UOp *
tensor_masked_select(UCtx *c, UOp *a, UOp *mask, int64_t size, UOp *fill, Err *e)
{
	int64_t n, one = -1;
	UOp *m, *x, *idx, *g, *ok;

	if (!a || !mask)
		return NULL;
	if (mask->dtype != DT_BOOL)
		return err_set(e, "masked_select: the mask is %s; it must be bool", dtype_name((DType)mask->dtype)), NULL;
	{
		int64_t s[T_MAXDIM];
		int k, pad = a->ndim - mask->ndim;
		char b1[160], b2[160];

		for (k = 0; k < a->ndim; k++)
			s[k] = k < pad ? 1 : mask->shape[k - pad];
		for (k = 0; k < a->ndim && pad >= 0; k++)
			if (s[k] != 1 && s[k] != a->shape[k])
				pad = -1;
		if (pad < 0)
			return err_set(e, "masked_select: the mask %s does not broadcast to the tensor %s",
			               uop_shape_fmt(b1, sizeof b1, mask->shape, mask->ndim),
			               uop_shape_fmt(b2, sizeof b2, a->shape, a->ndim)), NULL;
		m = tensor_expand(c, tensor_reshape(c, mask, s, a->ndim, e), a->shape, a->ndim, e);
	}
	n = uop_numel(a);
	x = tensor_reshape(c, a, &n, 1, e);
	m = tensor_reshape(c, m, &n, 1, e);
	if (size < 0 && (size = count_true(c, m, "masked_select", e)) < 0)
		return NULL;
	if (size == 0)
		return tensor_full(c, (DType)a->dtype, 0, &size, 1, e);
	idx = true_positions(c, m, size, e);
	g = tensor_gather(c, x, 0, idx, e);
	ok = lt(c, tensor_arange(c, size, DT_INT32, e), tensor_reduce(c, OP_ADD, tensor_cast(c, DT_INT32, m, e), &one, 1, 1, e), e);
	fill = fill ? tensor_cast(c, (DType)a->dtype, fill, e) : kd(c, (DType)a->dtype, 0);
	return tensor_where(c, ok, g, fill, e);
}

/*
** nonzero(a, size, fill) (tinygrad's): the indices of the nonzero elements,
** (count, rank) int32 in row-major order; size as masked_select's, the rows
** past the count filled with fill. Row p: (idx // stride_k) % shape_k over the
** axes k, idx the flat position of the p-th nonzero element.
*/
UOp *
tensor_nonzero(UCtx *c, UOp *a, int64_t size, UOp *fill, Err *e)
{
	int64_t n, one = -1, stride = 1, col[2], shape[2];
	UOp *m, *idx, *ok, *cols[T_MAXDIM], *r;
	int k;

	if (!a)
		return NULL;
	n = uop_numel(a);
	m = ne(c, a, kd(c, (DType)a->dtype, 0), e);
	m = tensor_reshape(c, m, &n, 1, e);
	if (!m)
		return NULL;
	if (size < 0 && (size = count_true(c, m, "nonzero", e)) < 0)
		return NULL;
	shape[0] = size;
	shape[1] = a->ndim;
	if (size == 0 || a->ndim == 0)
		return tensor_full(c, DT_INT32, 0, shape, 2, e);
	idx = true_positions(c, m, size, e);
	for (k = a->ndim - 1; k >= 0; k--) {
		UOp *q = tensor_div_mode(c, idx, kd(c, DT_INT32, (double)stride), 1, e);

		cols[k] = tensor_alu(c, OP_MOD, q, kd(c, DT_INT32, (double)a->shape[k]), e);
		stride *= a->shape[k];
	}
	r = tensor_stack_dim(c, cols, a->ndim, -1, e);
	ok = lt(c, tensor_arange(c, size, DT_INT32, e), tensor_reduce(c, OP_ADD, tensor_cast(c, DT_INT32, m, e), &one, 1, 1, e), e);
	col[0] = size;
	col[1] = 1;
	ok = tensor_reshape(c, ok, col, 2, e);
	fill = fill ? tensor_cast(c, DT_INT32, fill, e) : kd(c, DT_INT32, 0);
	return tensor_where(c, ok, r, fill, e);
}

/* usum(a, xs...) = a + x0 + x1 ... (or for bool); uprod: * (and for bool) (tinygrad's) */
UOp *
tensor_usum(UCtx *c, UOp *a, UOp *const *xs, int n, int prod, Err *e)
{
	int i;

	for (i = 0; i < n && a; i++) {
		Op op = a->dtype == DT_BOOL ? (prod ? OP_AND : OP_OR) : (prod ? OP_MUL : OP_ADD);

		a = tensor_alu(c, op, a, xs[i], e);
	}
	return a;
}

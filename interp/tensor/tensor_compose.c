/* tensor_compose.c - the spec's compositions of the tensor primitives: exp, softmax, matmul, cumsum, gather, scatter_add, ... */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "tensor.h"

/*
** Each function builds the graph its comment writes, from the primitives of
** tensor.c only, so that the Lua binding, C users of libtessel.a and the
** kernel lowering see one definition. Where tinygrad's Tensor method and the
** spec's formula agree on values, the graph follows the spec; where tinygrad
** fixes what the spec leaves open (dtypes of sums, out-of-range indices,
** negative pads), tinygrad's Tensor decides. Every function returns NULL with
** e filled on failure, and passes a NULL operand through (so calls chain).
*/

/* ---- helpers ---- */

/* A float constant of a's float dtype (float32 next to an integer or bool tensor). */
static UOp *
fk(UCtx *c, const UOp *like, double v)
{
	return uop_constf(c, dtype_is_float(like->dtype) ? (DType)like->dtype : DT_FLOAT32, v);
}

/* An integer constant, wrapped to t (all ones: dtype_wrap(t, -1)). */
static UOp *
ik(UCtx *c, DType t, int64_t v)
{
	return uop_new(c, OP_CONST, t, NULL, 0, dtype_wrap(t, v), 0, NULL, NULL, 0);
}

static UOp *
to_float(UCtx *c, UOp *a, Err *e)
{
	if (!a)
		return NULL;
	return dtype_is_float(a->dtype) ? a : tensor_cast(c, DT_FLOAT32, a, e);
}

static int
norm(const char *what, int64_t *ax, int nd, Err *e)
{
	if (*ax < -nd || *ax >= nd)
		return err_set(e, "%s: axis %lld is out of range for rank %d", what, (long long)*ax, nd);
	if (*ax < 0)
		*ax += nd;
	return 0;
}

/* a with a trailing axis of size 1 */
static UOp *
unsqueeze_last(UCtx *c, UOp *a, Err *e)
{
	int64_t s[T_MAXDIM];

	if (!a)
		return NULL;
	if (a->ndim >= T_MAXDIM)
		return err_set(e, "tensor: rank %d leaves no room for another axis (at most %d)", a->ndim,
		               T_MAXDIM), NULL;
	if (a->ndim)
		memcpy(s, a->shape, (size_t)a->ndim * sizeof *s);
	s[a->ndim] = 1;
	return tensor_reshape(c, a, s, a->ndim + 1, e);
}

static int
is_int(DType t)
{
	return !dtype_is_float(t) && t != DT_BOOL;
}

/* ---- the decomposed elementwise ops ---- */

/* Div = Mul(A, Recip(B)), in float */
UOp *
tensor_div(UCtx *c, UOp *a, UOp *b, Err *e)
{
	a = to_float(c, a, e);
	b = a ? to_float(c, b, e) : NULL;
	b = b ? tensor_unary(c, OP_RECIP, b, e) : NULL;
	return b ? tensor_alu(c, OP_MUL, a, b, e) : NULL;
}

/* a > b = b < a; a >= b = (a < b) != true; a <= b = (b < a) != true; a == b = (a != b) != true */
UOp *
tensor_gt(UCtx *c, UOp *a, UOp *b, Err *e)
{
	return tensor_alu(c, OP_CMPLT, b, a, e);
}

UOp *
tensor_ge(UCtx *c, UOp *a, UOp *b, Err *e)
{
	UOp *r = tensor_alu(c, OP_CMPLT, a, b, e);

	return r ? tensor_alu(c, OP_CMPNE, r, uop_constf(c, DT_BOOL, 1), e) : NULL;
}

UOp *
tensor_le(UCtx *c, UOp *a, UOp *b, Err *e)
{
	return tensor_ge(c, b, a, e);
}

UOp *
tensor_eq(UCtx *c, UOp *a, UOp *b, Err *e)
{
	UOp *r = tensor_alu(c, OP_CMPNE, a, b, e);

	return r ? tensor_alu(c, OP_CMPNE, r, uop_constf(c, DT_BOOL, 1), e) : NULL;
}

/* exp(x) = exp2(x * log2 e) */
UOp *
tensor_exp(UCtx *c, UOp *a, Err *e)
{
	a = to_float(c, a, e);
	a = a ? tensor_alu(c, OP_MUL, a, fk(c, a, 1.4426950408889634), e) : NULL;
	return tensor_unary(c, OP_EXP2, a, e);
}

/* log(x) = log2(x) * ln 2 */
UOp *
tensor_log(UCtx *c, UOp *a, Err *e)
{
	a = tensor_unary(c, OP_LOG2, a, e);
	return a ? tensor_alu(c, OP_MUL, a, fk(c, a, 0.6931471805599453), e) : NULL;
}

/* cos(x) = sin(pi/2 - x) */
UOp *
tensor_cos(UCtx *c, UOp *a, Err *e)
{
	a = to_float(c, a, e);
	a = a ? tensor_alu(c, OP_SUB, fk(c, a, 1.5707963267948966), a, e) : NULL;
	return tensor_unary(c, OP_SIN, a, e);
}

/* relu(x) = max(x, 0) */
UOp *
tensor_relu(UCtx *c, UOp *a, Err *e)
{
	return a ? tensor_alu(c, OP_MAX, a, uop_constf(c, (DType)a->dtype, 0), e) : NULL;
}

/* sigmoid(x) = 1 / (1 + exp(-x)) */
UOp *
tensor_sigmoid(UCtx *c, UOp *a, Err *e)
{
	a = to_float(c, a, e);
	a = tensor_unary(c, OP_NEG, a, e);
	a = tensor_exp(c, a, e);
	a = a ? tensor_alu(c, OP_ADD, a, fk(c, a, 1), e) : NULL;
	return tensor_unary(c, OP_RECIP, a, e);
}

/* tanh(x) = 2 sigmoid(2x) - 1 */
UOp *
tensor_tanh(UCtx *c, UOp *a, Err *e)
{
	a = to_float(c, a, e);
	a = a ? tensor_alu(c, OP_MUL, a, fk(c, a, 2), e) : NULL;
	a = tensor_sigmoid(c, a, e);
	a = a ? tensor_alu(c, OP_MUL, a, fk(c, a, 2), e) : NULL;
	return a ? tensor_alu(c, OP_SUB, a, fk(c, a, 1), e) : NULL;
}

/*
** tinygrad's _inverse, an order-reversing map: -x for floats, x ^ k for
** integers and bool with k all ones of the dtype (~x; max - x unsigned;
** not x for bool), so min(x) = inv(max(inv(x))) never overflows.
*/
static UOp *
inverse(UCtx *c, UOp *a, Err *e)
{
	if (!a)
		return NULL;
	if (dtype_is_float(a->dtype))
		return tensor_unary(c, OP_NEG, a, e);
	return tensor_alu(c, OP_XOR, a, ik(c, (DType)a->dtype, -1), e);
}

/* minimum(a, b) = -max(-a, -b) for floats, max(a ^ k, b ^ k) ^ k otherwise (tinygrad's) */
UOp *
tensor_minimum(UCtx *c, UOp *a, UOp *b, Err *e)
{
	DType t;
	UOp *r;

	if (!a || !b)
		return NULL;
	t = dtype_promote(a->dtype, b->dtype);
	if (t != a->dtype && !(a = tensor_cast(c, t, a, e)))
		return NULL;
	if (t != b->dtype && !(b = tensor_cast(c, t, b, e)))
		return NULL;
	r = tensor_alu(c, OP_MAX, inverse(c, a, e), inverse(c, b, e), e);
	if (r || !e || strncmp(e->msg, "max: ", 5) != 0)
		return inverse(c, r, e);
	/* a broadcast failure names the op the user asked for */
	{
		char m[sizeof e->msg];

		snprintf(m, sizeof m, "minimum: %s", e->msg + 5);
		snprintf(e->msg, sizeof e->msg, "%s", m);
	}
	return NULL;
}

/* ---- reductions ---- */

/*
** tinygrad's sum_acc_dtype: bool and signed integers accumulate in at least
** int32, unsigned ones in at least uint32; floats keep their dtype (the
** evaluator accumulates them in float64 and rounds once).
*/
static DType
sum_dtype(DType t)
{
	switch (t) {
	case DT_BOOL: case DT_INT8: case DT_INT16: return DT_INT32;
	case DT_UINT8: case DT_UINT16: return DT_UINT32;
	default: return t;
	}
}

/* sum = Reduce(Add, Cast(a, acc)): int8 and int16 give int32, uint8 and uint16 uint32 */
UOp *
tensor_sum(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, Err *e)
{
	DType t;

	if (!a)
		return NULL;
	if ((t = sum_dtype((DType)a->dtype)) != a->dtype && !(a = tensor_cast(c, t, a, e)))
		return NULL;
	return tensor_reduce(c, OP_ADD, a, axes, k, keepdim, e);
}

/* min = inv(max(inv(a))) with tinygrad's inverse (-x for floats, x ^ ~0 otherwise) */
UOp *
tensor_min(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, Err *e)
{
	return inverse(c, tensor_reduce(c, OP_MAX, inverse(c, a, e), axes, k, keepdim, e), e);
}

/*
** mean = sum * (kept / total) in float: integers and bool sum in their
** accumulation dtype and give float32; float16 and bfloat16 sum and scale
** in float32 and round back once (tinygrad's mean).
*/
UOp *
tensor_mean(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, Err *e)
{
	DType out;
	int64_t before, after;
	UOp *r;

	if (!a)
		return NULL;
	out = dtype_is_float(a->dtype) ? (DType)a->dtype : DT_FLOAT32;
	if ((a->dtype == DT_FLOAT16 || a->dtype == DT_BFLOAT16) && !(a = tensor_cast(c, DT_FLOAT32, a, e)))
		return NULL;
	before = uop_numel(a);
	if (!(r = tensor_sum(c, a, axes, k, keepdim, e)))
		return NULL;
	after = uop_numel(r);
	r = to_float(c, r, e);
	r = r ? tensor_alu(c, OP_MUL, r, fk(c, r, after ? (double)after / before : 0), e) : NULL;
	return r && r->dtype != out ? tensor_cast(c, out, r, e) : r;
}

/* softmax(x, axis) = e * recip(e.sum(axis)) with e = exp(x - x.max(axis)); the
** log form is (x - m) - log(sum(exp(x - m))) */
static UOp *
softmax(UCtx *c, UOp *a, int axis, int logsm, Err *e)
{
	int64_t axes[1] = { axis };
	UOp *m, *x, *s;

	if (!a)
		return NULL;
	if (norm(logsm ? "log_softmax" : "softmax", &axes[0], a->ndim, e) < 0)
		return NULL;
	a = to_float(c, a, e);
	m = tensor_reduce(c, OP_MAX, a, axes, 1, 1, e);
	x = m ? tensor_alu(c, OP_SUB, a, m, e) : NULL;
	s = tensor_exp(c, x, e);
	if (!logsm) {
		UOp *sum = s ? tensor_reduce(c, OP_ADD, s, axes, 1, 1, e) : NULL;

		sum = tensor_unary(c, OP_RECIP, sum, e);
		return sum ? tensor_alu(c, OP_MUL, s, sum, e) : NULL;
	}
	s = s ? tensor_reduce(c, OP_ADD, s, axes, 1, 1, e) : NULL;
	s = tensor_log(c, s, e);
	return s ? tensor_alu(c, OP_SUB, x, s, e) : NULL;
}

UOp *
tensor_softmax(UCtx *c, UOp *a, int axis, Err *e)
{
	return softmax(c, a, axis, 0, e);
}

UOp *
tensor_log_softmax(UCtx *c, UOp *a, int axis, Err *e)
{
	return softmax(c, a, axis, 1, e);
}

/*
** matmul with numpy's rules, as the spec's gemm: A (..., M, K) and B (..., K, N)
** become (A:reshape{..., M, K, 1} * B:reshape{..., 1, K, N}):sum(-2), the batch
** axes broadcasting in the product; a 1-D A is (1, K) and a 1-D B (K, 1), their
** axis dropped from the result. The sum keeps the product's dtype (bool: the
** count cast back to bool, as tinygrad casts the sum to the operands' dtype).
*/
UOp *
tensor_matmul(UCtx *c, UOp *a, UOp *b, Err *e)
{
	int64_t sa[T_MAXDIM], sb[T_MAXDIM], o[T_MAXDIM], M, K, Kb, N, ax;
	int va, vb, na, nb, nd, i, j;
	char b1[160], b2[160];
	DType t;
	UOp *r;

	if (!a || !b)
		return NULL;
	if (a->ndim < 1 || b->ndim < 1)
		return err_set(e, "matmul: both operands need at least one axis, got shapes %s and %s",
		               uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim),
		               uop_shape_fmt(b2, sizeof b2, b->shape, b->ndim)), NULL;
	va = a->ndim == 1;
	vb = b->ndim == 1;
	na = va ? 0 : a->ndim - 2;   /* batch axes */
	nb = vb ? 0 : b->ndim - 2;
	nd = na > nb ? na : nb;
	if (nd + 3 > T_MAXDIM)
		return err_set(e, "matmul: %d batch axes leave no room for the product (rank at most %d)",
		               nd, T_MAXDIM), NULL;
	M = va ? 1 : a->shape[a->ndim - 2];
	K = a->shape[a->ndim - 1];
	Kb = vb ? b->shape[0] : b->shape[b->ndim - 2];
	N = vb ? 1 : b->shape[b->ndim - 1];
	if (K != Kb)
		return err_set(e, "matmul: %s @ %s: the inner sizes differ: %lld (the last axis of a) and "
		               "%lld (%s of b)", uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim),
		               uop_shape_fmt(b2, sizeof b2, b->shape, b->ndim), (long long)K, (long long)Kb,
		               vb ? "the axis" : "axis -2"), NULL;
	for (i = 1; i <= na && i <= nb; i++) {
		int64_t x = a->shape[na - i], y = b->shape[nb - i];

		if (x != y && x != 1 && y != 1)
			return err_set(e, "matmul: %s @ %s: the batch axes do not broadcast: sizes %lld and "
			               "%lld at batch axis -%d", uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim),
			               uop_shape_fmt(b2, sizeof b2, b->shape, b->ndim), (long long)x, (long long)y,
			               i), NULL;
	}
	for (i = 0; i < na; i++)
		sa[i] = a->shape[i];
	sa[na] = M; sa[na + 1] = K; sa[na + 2] = 1;
	for (i = 0; i < nb; i++)
		sb[i] = b->shape[i];
	sb[nb] = 1; sb[nb + 1] = K; sb[nb + 2] = N;
	t = dtype_promote(a->dtype, b->dtype);
	a = tensor_reshape(c, a, sa, na + 3, e);
	b = a ? tensor_reshape(c, b, sb, nb + 3, e) : NULL;
	r = b ? tensor_alu(c, OP_MUL, a, b, e) : NULL;
	ax = nd + 1;
	r = r ? tensor_reduce(c, OP_ADD, r, &ax, 1, 0, e) : NULL;
	if (r && r->dtype != t)
		r = tensor_cast(c, t, r, e);
	if (r && (va || vb)) {
		for (i = j = 0; i < nd; i++)
			o[j++] = r->shape[i];
		if (!va)
			o[j++] = M;
		if (!vb)
			o[j++] = N;
		r = tensor_reshape(c, r, o, j, e);
	}
	return r;
}

/* ---- scans ---- */

/*
** The spec's prefix_sum along the last axis of x (n > 0 elements), with the
** leading axes L carried along:
**   x:pad{..., {n-1, 0}}                    (L, 2n-1)
**    :reshape{L, 1, 2n-1}:expand{L, n+1, 2n-1}  (tile)
**    :reshape{L, (n+1)(2n-1)}:shrink{..., {0, 2n*n}}  (trim)
**    :reshape{L, n, 2n}:shrink{..., {0, n}, {0, n}}   (windows: row i is x[i-n+1..i])
**    :sum(-1)                               (in the accumulation dtype)
** n*n elements per row of L.
*/
static UOp *
windows(UCtx *c, UOp *x, Err *e)
{
	int64_t s[T_MAXDIM] = {0}, p[T_MAXDIM] = {0}, q[T_MAXDIM] = {0}, n, ax = -1;
	int r, i;

	if (!x)
		return NULL;
	r = x->ndim;
	n = x->shape[r - 1];
	if (r + 1 > T_MAXDIM)
		return err_set(e, "cumsum: rank %d leaves no room for the windows (at most %d)", r, T_MAXDIM - 1),
		       NULL;
	for (i = 0; i < r; i++) {
		p[i] = 0;
		q[i] = 0;
		s[i] = x->shape[i];
	}
	p[r - 1] = n - 1;
	x = tensor_pad(c, x, p, q, r, e);
	s[r - 1] = 1;
	s[r] = 2 * n - 1;
	x = tensor_reshape(c, x, s, r + 1, e);
	s[r - 1] = n + 1;
	x = tensor_expand(c, x, s, r + 1, e);
	s[r - 1] = (n + 1) * (2 * n - 1);
	x = tensor_reshape(c, x, s, r, e);
	for (i = 0; i < r; i++) {
		p[i] = 0;
		q[i] = s[i];
	}
	q[r - 1] = 2 * n * n;
	x = tensor_shrink(c, x, p, q, r, e);
	s[r - 1] = n;
	s[r] = 2 * n;
	x = tensor_reshape(c, x, s, r + 1, e);
	for (i = 0; i <= r; i++) {
		p[i] = 0;
		q[i] = s[i];
	}
	q[r] = n;
	x = tensor_shrink(c, x, p, q, r + 1, e);
	return tensor_sum(c, x, &ax, 1, 0, e);
}

/*
** Prefix sums along the last axis. Past 512 elements, tinygrad's two stages:
** pad the front to a multiple of 256, prefix-sum each chunk of 256, prefix-sum
** the chunks' totals (recursively), shift them one chunk right and add: about
** 256 n elements of work instead of n^2.
*/
enum { SPLIT = 256 };

static UOp *
scan_last(UCtx *c, UOp *x, Err *e)
{
	int64_t s[T_MAXDIM] = {0}, p[T_MAXDIM] = {0}, q[T_MAXDIM] = {0}, n, m, nc;
	int r, i;
	UOp *ch, *base;

	if (!x)
		return NULL;
	r = x->ndim;
	n = x->shape[r - 1];
	if (n <= 2 * SPLIT)
		return windows(c, x, e);
	if (r + 2 > T_MAXDIM)
		return err_set(e, "cumsum: rank %d leaves no room for the chunks (at most %d)", r, T_MAXDIM - 2),
		       NULL;
	m = (n + SPLIT - 1) / SPLIT * SPLIT;
	nc = m / SPLIT;
	for (i = 0; i < r; i++) {
		p[i] = q[i] = 0;
		s[i] = x->shape[i];
	}
	p[r - 1] = m - n;
	x = tensor_pad(c, x, p, q, r, e);
	s[r - 1] = nc;
	s[r] = SPLIT;
	ch = windows(c, tensor_reshape(c, x, s, r + 1, e), e);   /* (L, nc, SPLIT) */
	if (!ch)
		return NULL;
	for (i = 0; i <= r; i++) {
		p[i] = 0;
		q[i] = s[i];
	}
	p[r] = SPLIT - 1;   /* each chunk's total */
	base = tensor_shrink(c, ch, p, q, r + 1, e);
	base = tensor_reshape(c, base, s, r, e);
	base = scan_last(c, base, e);   /* (L, nc): totals up to and with chunk k */
	for (i = 0; i < r; i++) {
		p[i] = q[i] = 0;
	}
	p[r - 1] = 1;
	base = tensor_pad(c, base, p, q, r, e);   /* shifted: totals before chunk k */
	for (i = 0; i < r; i++) {
		p[i] = 0;
		q[i] = s[i];
	}
	base = tensor_shrink(c, base, p, q, r, e);
	s[r] = 1;
	base = tensor_reshape(c, base, s, r + 1, e);
	x = base ? tensor_alu(c, OP_ADD, ch, base, e) : NULL;
	s[r - 1] = m;
	x = tensor_reshape(c, x, s, r, e);
	for (i = 0; i < r; i++) {
		p[i] = 0;
		q[i] = s[i];
	}
	p[r - 1] = m - n;
	return tensor_shrink(c, x, p, q, r, e);
}

/* cumsum(a, axis): the spec's prefix_sum along axis, in sum's accumulation dtype
** (tinygrad's cumsum: int8 gives int32) */
UOp *
tensor_cumsum(UCtx *c, UOp *a, int axis, Err *e)
{
	int64_t ax = axis;
	DType t;
	UOp *r;

	if (!a)
		return NULL;
	t = sum_dtype((DType)a->dtype);
	if (a->ndim == 0 || uop_numel(a) == 0)
		return tensor_cast(c, t, a, e);
	if (norm("cumsum", &ax, a->ndim, e) < 0)
		return NULL;
	r = swap_ax(c, a, (int)ax, a->ndim - 1, e);
	r = scan_last(c, r, e);
	return swap_ax(c, r, (int)ax, a->ndim - 1, e);
}

/* ---- indexing by one-hot masks ---- */

static int
check_index(const char *what, const UOp *a, const UOp *idx, Err *e)
{
	if (idx->ndim != a->ndim)
		return err_set(e, "%s: the index has rank %d and the tensor rank %d (they must be equal)", what,
		               idx->ndim, a->ndim);
	if (!is_int((DType)idx->dtype))
		return err_set(e, "%s: the index is %s, not an integer tensor", what, dtype_name(idx->dtype));
	if (a->ndim + 1 > T_MAXDIM)
		return err_set(e, "%s: rank %d leaves no room for the one-hot axis (at most %d)", what, a->ndim,
		               T_MAXDIM - 1);
	return 0;
}

/* (index:reshape{..., 1} == arange(n)): the one-hot mask along a new last axis */
static UOp *
one_hot(UCtx *c, UOp *idx, int64_t n, Err *e)
{
	UOp *pos = tensor_arange(c, n, DT_INT32, e);

	return pos ? tensor_eq(c, unsqueeze_last(c, idx, e), pos, e) : NULL;
}

/*
** gather(a, dim, index) (tinygrad's, the spec's gather on any axis): the result
** has index's shape and out[..., i, ...] = a[..., index[..., i, ...], ...] along
** dim; index.shape[k] <= a.shape[k] on the other axes. An index outside
** 0..n-1 selects nothing and gives 0.
**   x    = a:shrink(to index's shape, dim whole):reshape{..., 1}:transpose(dim, -1)
**   mask = index:reshape{..., 1} == arange(n)
**   out  = mask:where(x, 0):sum(-1)      (in a's dtype)
*/
UOp *
tensor_gather(UCtx *c, UOp *a, int dim, UOp *index, Err *e)
{
	int64_t ax = dim, b[T_MAXDIM], en[T_MAXDIM], n;
	int k;
	char b1[160], b2[160];
	UOp *x, *m, *r;

	if (!a || !index)
		return NULL;
	if (check_index("gather", a, index, e) < 0 || norm("gather", &ax, a->ndim, e) < 0)
		return NULL;
	for (k = 0; k < a->ndim; k++) {
		if (k != ax && index->shape[k] > a->shape[k])
			return err_set(e, "gather: the index %s is larger than the tensor %s at axis %d",
			               uop_shape_fmt(b1, sizeof b1, index->shape, index->ndim),
			               uop_shape_fmt(b2, sizeof b2, a->shape, a->ndim), k), NULL;
		b[k] = 0;
		en[k] = k == ax ? a->shape[k] : index->shape[k];
	}
	n = a->shape[ax];
	x = tensor_shrink(c, a, b, en, a->ndim, e);
	x = swap_ax(c, unsqueeze_last(c, x, e), (int)ax, a->ndim, e);
	m = x ? one_hot(c, index, n, e) : NULL;
	r = m ? tensor_where(c, m, x, uop_constf(c, (DType)a->dtype, 0), e) : NULL;
	ax = -1;
	r = r ? tensor_reduce(c, OP_ADD, r, &ax, 1, 0, e) : NULL;
	return r && r->dtype != a->dtype ? tensor_cast(c, (DType)a->dtype, r, e) : r;
}

/*
** scatter_add(a, dim, index, src) (torch's scatter_add, tinygrad's
** scatter_reduce(..., "sum"); the spec's scatter_add on any axis): out = a, and
** out[..., index[..., i, ...], ...] += src[..., i, ...] along dim. index fits in
** src on every axis and in a on the others; a and src have one dtype.
**   s    = src:shrink(to index's shape):reshape{..., 1}:expand{..., n}:transpose(dim, -1)
**   mask = (index:reshape{..., 1} == arange(n)):transpose(dim, -1)
**   both padded to a's shape on the other axes, then
**   out  = mask:where(s, 0):sum(-1) + a  (sum in its accumulation dtype, as tinygrad)
*/
UOp *
tensor_scatter_add(UCtx *c, UOp *a, int dim, UOp *index, UOp *src, Err *e)
{
	int64_t ax = dim, b[T_MAXDIM], en[T_MAXDIM], s[T_MAXDIM], n, last = -1;
	int k, nd;
	char b1[160], b2[160], b3[160];
	UOp *x, *m, *r;

	if (!a || !index || !src)
		return NULL;
	if (check_index("scatter_add", a, index, e) < 0 || norm("scatter_add", &ax, a->ndim, e) < 0)
		return NULL;
	if (src->ndim != a->ndim)
		return err_set(e, "scatter_add: src has rank %d and the tensor rank %d (they must be equal)",
		               src->ndim, a->ndim), NULL;
	if (src->dtype != a->dtype)
		return err_set(e, "scatter_add: the tensor is %s and src %s (cast one: they must be equal)",
		               dtype_name(a->dtype), dtype_name(src->dtype)), NULL;
	nd = a->ndim;
	for (k = 0; k < nd; k++)
		if (index->shape[k] > src->shape[k] || (k != ax && index->shape[k] > a->shape[k]))
			return err_set(e, "scatter_add: the index %s does not fit at axis %d: src is %s and the "
			               "tensor %s", uop_shape_fmt(b1, sizeof b1, index->shape, nd), k,
			               uop_shape_fmt(b2, sizeof b2, src->shape, nd),
			               uop_shape_fmt(b3, sizeof b3, a->shape, nd)), NULL;
	n = a->shape[ax];
	for (k = 0; k < nd; k++) {
		b[k] = 0;
		en[k] = index->shape[k];
		s[k] = index->shape[k];
	}
	s[nd] = n;
	x = tensor_shrink(c, src, b, en, nd, e);
	x = tensor_expand(c, unsqueeze_last(c, x, e), s, nd + 1, e);
	x = swap_ax(c, x, (int)ax, nd, e);
	m = x ? swap_ax(c, one_hot(c, index, n, e), (int)ax, nd, e) : NULL;
	if (!m)
		return NULL;
	/* pad to a's shape on the other axes: padded cells are masked out */
	for (k = 0; k <= nd; k++) {
		b[k] = 0;
		en[k] = k < nd && k != ax ? a->shape[k] - index->shape[k] : 0;
	}
	x = tensor_pad(c, x, b, en, nd + 1, e);
	m = x ? tensor_pad(c, m, b, en, nd + 1, e) : NULL;
	r = m ? tensor_where(c, m, x, uop_constf(c, (DType)a->dtype, 0), e) : NULL;
	r = tensor_sum(c, r, &last, 1, 0, e);
	return r ? tensor_alu(c, OP_ADD, r, a, e) : NULL;
}

/* ---- pad with a value, arange with a step ---- */

/*
** pad with a value and signed amounts (tinygrad's _pad_constant): negative
** amounts shrink first; then Pad with the rest, and where the value is not 0,
** pad(ones(bool)):where(padded, value). value NULL is 0.
*/
UOp *
tensor_pad_constant(UCtx *c, UOp *a, const int64_t *before, const int64_t *after, int n, UOp *value,
                     Err *e)
{
	int64_t b[T_MAXDIM], en[T_MAXDIM], pb[T_MAXDIM], pa[T_MAXDIM];
	int k, neg = 0, any = 0;
	UOp *x, *m;

	if (!a)
		return NULL;
	if (n != a->ndim)
		return err_set(e, "pad: %d (before, after) pairs for a tensor of rank %d", n, a->ndim), NULL;
	for (k = 0; k < n; k++) {
		if (before[k] < -a->shape[k] || after[k] < -a->shape[k] || before[k] > ((int64_t)1 << 48)
		    || after[k] > ((int64_t)1 << 48))
			return err_set(e, "pad: axis %d: (%lld, %lld) for size %lld is out of range", k,
			               (long long)before[k], (long long)after[k], (long long)a->shape[k]), NULL;
		b[k] = before[k] < 0 ? -before[k] : 0;
		en[k] = after[k] < 0 ? a->shape[k] + after[k] : a->shape[k];
		if (b[k] > en[k])
			return err_set(e, "pad: axis %d: (%lld, %lld) removes more than its %lld elements", k,
			               (long long)before[k], (long long)after[k], (long long)a->shape[k]), NULL;
		pb[k] = before[k] > 0 ? before[k] : 0;
		pa[k] = after[k] > 0 ? after[k] : 0;
		neg |= before[k] < 0 || after[k] < 0;
		any |= pb[k] || pa[k];
	}
	x = neg ? tensor_shrink(c, a, b, en, n, e) : a;
	if (!x)
		return NULL;
	/* as tinygrad: a value other than 0 selects even when nothing is padded (its dtype promotes) */
	if (!value || (value->op == OP_CONST && uop_const_value(value) == 0))
		return any ? tensor_pad(c, x, pb, pa, n, e) : x;
	m = tensor_full(c, DT_BOOL, 1, x->shape, x->ndim, e);
	m = tensor_pad(c, m, pb, pa, n, e);
	x = m ? tensor_pad(c, x, pb, pa, n, e) : NULL;
	return x ? tensor_where(c, m, x, value, e) : NULL;
}

/* Python's float floor division (CPython's float_floor_div), so that counts
** agree with tinygrad's ceildiv on every float. */
static double
py_floordiv(double vx, double wx)
{
	double mod = fmod(vx, wx), div = (vx - mod) / wx, fl;

	if (mod && (wx < 0) != (mod < 0))
		div -= 1.0;
	if (div) {
		fl = floor(div);
		if (div - fl > 0.5)
			fl += 1.0;
	} else
		fl = copysign(0.0, vx / wx);
	return fl;
}

/* tinygrad refuses an integer arange whose values leave the dtype: its lo..hi
** is start..stop-step (or the reverse for a negative step) */
static int
arange_fits(double lo, double hi, DType t, Err *e)
{
	int64_t dl, dh;

	if (dtype_is_float(t))
		return 0;
	dtype_range(t, &dl, &dh);
	if (t == DT_UINT64)
		dh = INT64_MAX;
	if (lo < (double)dl || hi > (double)dh)
		return err_set(e, "tensor.arange: [%.17g, %.17g] does not fit in %s", lo, hi, dtype_name(t));
	return 0;
}

/* arange(n) * step + start, each step skipped when trivial */
static UOp *
arange_affine(UCtx *c, int64_t n, UOp *step, UOp *start, DType t, Err *e)
{
	UOp *r = tensor_arange(c, n, t, e);

	if (r && !(step->op == OP_CONST && uop_const_value(step) == 1))
		r = tensor_alu(c, OP_MUL, r, step, e);
	if (r && !(start->op == OP_CONST && uop_const_value(start) == 0))
		r = tensor_alu(c, OP_ADD, r, start, e);
	return r;
}

/*
** arange(start, stop, step) in dtype t: ceil((stop - start) / step) values
** start + i*step, built as arange(n) * step + start (tensor_arange's mixed
** radix, one multiply and one add, each skipped when trivial). The count is
** tinygrad's (Python's floor division of floats); a float dtype rounds i*step
** and the sum once each. tensor_arange_int is the same on exact integers.
*/
UOp *
tensor_arange_step(UCtx *c, double start, double stop, double step, DType t, Err *e)
{
	double nf;

	if (t == DT_VOID || t == DT_INDEX || t >= DT_COUNT)
		return err_set(e, "tensor.arange: %s is not a tensor dtype", dtype_name(t)), NULL;
	if (step == 0 || !isfinite(step) || !isfinite(start) || !isfinite(stop))
		return err_set(e, "tensor.arange: start %g, stop %g and step %g must be finite, the step not 0",
		               start, stop, step), NULL;
	if (arange_fits(step > 0 ? start : stop - step, step > 0 ? stop - step : start, t, e) < 0)
		return NULL;
	nf = -py_floordiv(-(stop - start), step);
	if (!(nf <= (double)((int64_t)1 << 48)))
		return err_set(e, "tensor.arange: %g values are more than 2^48", nf), NULL;
	return arange_affine(c, nf > 0 ? (int64_t)nf : 0, uop_constf(c, t, step), uop_constf(c, t, start),
	                     t, e);
}

UOp *
tensor_arange_int(UCtx *c, int64_t start, int64_t stop, int64_t step, DType t, Err *e)
{
	int64_t d, q, lo, hi;

	if (t == DT_VOID || t == DT_INDEX || t >= DT_COUNT)
		return err_set(e, "tensor.arange: %s is not a tensor dtype", dtype_name(t)), NULL;
	if (step == 0)
		return err_set(e, "tensor.arange: the step is 0"), NULL;
	if (uck_sub(stop, start, &d) < 0 || uck_sub(0, d, &d) < 0 || uck_fdiv(d, step, &q) < 0
	    || uck_sub(0, q, &q) < 0 || uck_sub(stop, step, &hi) < 0)
		return err_set(e, "tensor.arange: (%lld, %lld, %lld) overflows int64", (long long)start,
		               (long long)stop, (long long)step), NULL;
	lo = step > 0 ? start : hi;
	hi = step > 0 ? hi : start;
	if (!dtype_is_float(t)) {
		int64_t dl, dh;

		dtype_range(t, &dl, &dh);
		if (lo < dl || hi > dh)
			return err_set(e, "tensor.arange: [%lld, %lld] does not fit in %s", (long long)lo, (long long)hi,
			               dtype_name(t)), NULL;
	}
	if (q > ((int64_t)1 << 48))
		return err_set(e, "tensor.arange: %lld values are more than 2^48", (long long)q), NULL;
	if (dtype_is_float(t))
		return arange_affine(c, q > 0 ? q : 0, uop_constf(c, t, (double)step),
		                     uop_constf(c, t, (double)start), t, e);
	return arange_affine(c, q > 0 ? q : 0, ik(c, t, step), ik(c, t, start), t, e);
}

/* tensor_shape.c - tinygrad's shape methods: squeeze, flatten, cat, split, stack, repeat, roll, tril, eye, one_hot, ... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
** Movement compositions named and defined as tinygrad's Tensor methods
** (mixin/movement.py and mixin/op.py of tinygrad 0.14): each is reshapes,
** expands, pads, shrinks and permutes, and, where an axis is selected by
** position (cat, tril, eye), a where over an arange comparison. Bad axes,
** shapes and sizes are errors that name the method and its arguments.
*/

static const char *
shp(char *b, size_t n, const UOp *a)
{
	return uop_shape_fmt(b, n, a->shape, a->ndim);
}

/* tinygrad's _resolve_dim: [-max(1, nd), max(1, nd) - 1] (extra: one more axis) */
static int
resolve(const char *what, int64_t *d, int nd, int extra, Err *e)
{
	int total = nd + extra, m = total > 1 ? total : 1;

	if (*d < -m || *d > m - 1)
		return err_set(e, "%s: dim %lld is out of range [%d, %d] for rank %d", what, (long long)*d, -m, m - 1,
		               nd);
	if (*d < 0)
		*d += total;
	return 0;
}

/* squeeze(x) drops every axis of size 1; squeeze(x, dim) that one, when its size is 1 */
UOp *
tensor_squeeze(UCtx *c, UOp *a, const int64_t *dim, Err *e)
{
	int64_t s[T_MAXDIM], d;
	int i, n = 0;

	if (!a)
		return NULL;
	if (dim) {
		d = *dim;
		if (resolve("squeeze", &d, a->ndim, 0, e) < 0)
			return NULL;
		if (a->ndim == 0 || a->shape[d] != 1)
			return a;
		for (i = 0; i < a->ndim; i++)
			if (i != d)
				s[n++] = a->shape[i];
	} else
		for (i = 0; i < a->ndim; i++)
			if (a->shape[i] != 1)
				s[n++] = a->shape[i];
	return tensor_reshape(c, a, s, n, e);
}

/* unsqueeze(x, dim) = reshape with a 1 inserted at dim (-ndim-1 <= dim <= ndim) */
UOp *
tensor_unsqueeze(UCtx *c, UOp *a, int64_t dim, Err *e)
{
	if (!a)
		return NULL;
	if (resolve("unsqueeze", &dim, a->ndim, 1, e) < 0)
		return NULL;
	return unsq(c, a, (int)dim, e);
}

/* flatten(x, start, end) = reshape merging axes start..end into one */
UOp *
tensor_flatten(UCtx *c, UOp *a, int64_t start, int64_t end, Err *e)
{
	int64_t s[T_MAXDIM], p = 1;
	int i, n = 0;

	if (!a)
		return NULL;
	if (a->ndim == 0) {
		p = 1;
		if (resolve("flatten", &start, 0, 0, e) < 0 || resolve("flatten", &end, 0, 0, e) < 0)
			return NULL;
		return tensor_reshape(c, a, &p, 1, e);
	}
	if (resolve("flatten", &start, a->ndim, 0, e) < 0 || resolve("flatten", &end, a->ndim, 0, e) < 0)
		return NULL;
	if (start > end)
		return err_set(e, "flatten: start_dim %lld is after end_dim %lld", (long long)start, (long long)end), NULL;
	for (i = 0; i < start; i++)
		s[n++] = a->shape[i];
	for (; i <= end; i++)
		p *= a->shape[i];
	s[n++] = p;
	for (; i < a->ndim; i++)
		s[n++] = a->shape[i];
	return tensor_reshape(c, a, s, n, e);
}

/* unflatten(x, dim, sizes) = reshape splitting axis dim into sizes (one may be -1) */
UOp *
tensor_unflatten(UCtx *c, UOp *a, int64_t dim, const int64_t *sizes, int k, Err *e)
{
	int64_t s[T_MAXDIM], p = 1;
	int i, n = 0, free = 0;
	char b1[160], b2[160];

	if (!a)
		return NULL;
	if (resolve("unflatten", &dim, a->ndim, 0, e) < 0)
		return NULL;
	if (a->ndim == 0)
		return err_set(e, "unflatten: a tensor of shape () has no axis to split"), NULL;
	if (a->ndim - 1 + k > T_MAXDIM || k < 1)
		return err_set(e, "unflatten: %d sizes for axis %lld of %s (1 to %d)", k, (long long)dim,
		               shp(b1, sizeof b1, a), T_MAXDIM - a->ndim + 1), NULL;
	for (i = 0; i < k; i++) {
		if (sizes[i] == -1)
			free++;
		else if (sizes[i] < 0 || uck_mul(p, sizes[i], &p) < 0)
			return err_set(e, "unflatten: size %lld is not a size", (long long)sizes[i]), NULL;
	}
	if (free > 1 || (free == 0 && p != a->shape[dim]) || (free == 1 && (p == 0 || a->shape[dim] % p != 0)))
		return err_set(e, "unflatten: sizes %s do not split axis %lld of size %lld (shape %s)",
		               uop_shape_fmt(b2, sizeof b2, sizes, k), (long long)dim, (long long)a->shape[dim],
		               shp(b1, sizeof b1, a)), NULL;
	for (i = 0; i < dim; i++)
		s[n++] = a->shape[i];
	for (i = 0; i < k; i++)
		s[n++] = sizes[i] == -1 ? a->shape[dim] / p : sizes[i];
	for (i = (int)dim + 1; i < a->ndim; i++)
		s[n++] = a->shape[i];
	return tensor_reshape(c, a, s, n, e);
}

/* transpose(x, d0, d1) = permute exchanging axes d0 and d1 */
UOp *
tensor_transpose(UCtx *c, UOp *a, int64_t d0, int64_t d1, Err *e)
{
	if (!a)
		return NULL;
	if (axis_norm("transpose", &d0, a->ndim, e) < 0 || axis_norm("transpose", &d1, a->ndim, e) < 0)
		return NULL;
	return swap_ax(c, a, (int)d0, (int)d1, e);
}

/* The common dtype of n tensors (tinygrad's least_upper_dtype), each cast to it in out. */
static int
promote_all(UCtx *c, UOp *const *ts, int n, UOp **out, Err *e)
{
	DType t;
	int i;

	for (i = 0; i < n; i++)
		if (!ts[i])
			return -1;
	t = (DType)ts[0]->dtype;
	for (i = 1; i < n; i++)
		t = dtype_promote(t, ts[i]->dtype);
	for (i = 0; i < n; i++)
		if (!(out[i] = tensor_cast(c, t, ts[i], e)))
			return -1;
	return 0;
}

/*
** cat(t0, t1, ..., dim): each ti padded to the whole axis at its offset and
** selected where pad(ones(bool)) is true:
**   acc = pad(t0); acc = pad(ones_i):where(pad(ti), acc) for i >= 1
** (a where, not tinygrad's sum of pads, so -0.0 and NaN pass exactly);
** dtypes promote; every other axis must match.
*/
UOp *
tensor_cat(UCtx *c, UOp *const *ts, int n, int64_t dim, Err *e)
{
	UOp *x[256], *acc = NULL, *p, *m;
	int64_t total = 0, off = 0, pb[T_MAXDIM] = {0}, pa[T_MAXDIM] = {0};
	int i, k, nd;
	char b1[160], b2[160];

	if (n < 1 || n > 256)
		return err_set(e, "cat: 1 to 256 tensors, got %d", n), NULL;
	if (promote_all(c, ts, n, x, e) < 0)
		return NULL;
	nd = x[0]->ndim;
	if (nd == 0)
		return err_set(e, "cat: tensors of shape () cannot be concatenated (stack them)"), NULL;
	if (axis_norm("cat", &dim, nd, e) < 0)
		return NULL;
	for (i = 0; i < n; i++) {
		int bad = x[i]->ndim != nd;

		for (k = 0; !bad && k < nd; k++)
			bad = k != dim && x[i]->shape[k] != x[0]->shape[k];
		if (bad)
			return err_set(e, "cat: tensor %d has shape %s and tensor 0 %s: they must match except on dim %lld",
			               i, shp(b1, sizeof b1, x[i]), shp(b2, sizeof b2, x[0]), (long long)dim), NULL;
		if (uck_add(total, x[i]->shape[dim], &total) < 0)
			return err_set(e, "cat: the axis overflows"), NULL;
	}
	if (n == 1)
		return x[0];
	for (i = 0; i < n; i++) {
		int64_t s = x[i]->shape[dim];

		pb[dim] = off;
		pa[dim] = total - off - s;
		off += s;
		if (s == 0 && acc)
			continue;
		p = tensor_pad(c, x[i], pb, pa, nd, e);
		if (!acc) {
			acc = p;
			continue;
		}
		m = tensor_pad(c, tensor_full(c, DT_BOOL, 1, x[i]->shape, nd, e), pb, pa, nd, e);
		acc = sel(c, m, p, acc, e);
	}
	return acc;
}

/* split(x, sizes, dim): the pieces x:shrink along dim, of the given sizes (summing to the axis) */
int
tensor_split(UCtx *c, UOp *a, const int64_t *sizes, int n, int64_t dim, UOp **out, Err *e)
{
	int64_t b[T_MAXDIM], en[T_MAXDIM], sum = 0, off = 0;
	int i, k;
	char b1[160];

	if (!a)
		return -1;
	if (a->ndim == 0)
		return err_set(e, "split: a tensor of shape () has no axis to split");
	if (axis_norm("split", &dim, a->ndim, e) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (sizes[i] < 0 || uck_add(sum, sizes[i], &sum) < 0)
			return err_set(e, "split: size %lld is negative", (long long)sizes[i]);
	}
	if (sum != a->shape[dim])
		return err_set(e, "split: the sizes sum to %lld, but dim %lld of %s has %lld", (long long)sum,
		               (long long)dim, shp(b1, sizeof b1, a), (long long)a->shape[dim]);
	for (i = 0; i < n; i++) {
		for (k = 0; k < a->ndim; k++) {
			b[k] = 0;
			en[k] = a->shape[k];
		}
		b[dim] = off;
		en[dim] = off + sizes[i];
		off += sizes[i];
		if (!(out[i] = tensor_shrink(c, a, b, en, a->ndim, e)))
			return -1;
	}
	return n;
}

/* tinygrad's split(size): pieces of size, the last one shorter; at most max of them */
int
tensor_split_sizes(int64_t len, int64_t size, int64_t *sizes, int max, Err *e)
{
	int64_t i;
	int n = 0;

	if (size < 1)
		return err_set(e, "split: the size %lld must be at least 1", (long long)size);
	if (len == 0) {
		sizes[0] = 0;
		return 1;
	}
	if ((len + size - 1) / size > max)
		return err_set(e, "split: %lld pieces of size %lld are more than %d", (long long)((len + size - 1) / size),
		               (long long)size, max);
	for (i = 0; i < len; i += size)
		sizes[n++] = len - i < size ? len - i : size;
	return n;
}

/* tinygrad's chunk(k): split(ceil(len / k)) (so fewer than k pieces can come back) */
int
tensor_chunk_sizes(int64_t len, int64_t chunks, int64_t *sizes, int max, Err *e)
{
	int64_t i;

	if (chunks < 1)
		return err_set(e, "chunk: the number of chunks %lld must be at least 1", (long long)chunks);
	if (len == 0) {
		if (chunks > max)
			return err_set(e, "chunk: %lld chunks are more than %d", (long long)chunks, max);
		for (i = 0; i < chunks; i++)
			sizes[i] = 0;
		return (int)chunks;
	}
	return tensor_split_sizes(len, (len + chunks - 1) / chunks, sizes, max, e);
}

/* stack(t0, t1, ..., dim) = Stack(t0, t1, ...) (a new axis 0), permuted to dim; dtypes promote */
UOp *
tensor_stack_dim(UCtx *c, UOp *const *ts, int n, int64_t dim, Err *e)
{
	UOp *x[256], *r;
	int64_t o[T_MAXDIM];
	int i, k;
	char b1[160], b2[160];

	if (n < 1 || n > 256)
		return err_set(e, "stack: 1 to 256 tensors, got %d", n), NULL;
	if (promote_all(c, ts, n, x, e) < 0)
		return NULL;
	for (i = 1; i < n; i++) {
		int bad = x[i]->ndim != x[0]->ndim;

		for (k = 0; !bad && k < x[0]->ndim; k++)
			bad = x[i]->shape[k] != x[0]->shape[k];
		if (bad)
			return err_set(e, "stack: tensor %d has shape %s and tensor 0 %s: they must be equal", i,
			               shp(b1, sizeof b1, x[i]), shp(b2, sizeof b2, x[0])), NULL;
	}
	if (resolve("stack", &dim, x[0]->ndim, 1, e) < 0)
		return NULL;
	if (x[0]->ndim + 1 > T_MAXDIM)
		return err_set(e, "stack: rank %d leaves no room for the new axis", x[0]->ndim), NULL;
	r = tensor_new(c, OP_STACK, (DType)x[0]->dtype, x, n, 0, 0, NULL, NULL, 0, e);
	if (!r || dim == 0)
		return r;
	for (i = k = 0; i < r->ndim; i++)
		o[i] = i == dim ? 0 : ++k;
	return tensor_permute(c, r, o, r->ndim, e);
}

/* repeat(x, reps) = reshape{1, s, ...}:expand{r, s, ...}:reshape{r*s, ...} (axes with r == 1 stay) */
UOp *
tensor_repeat(UCtx *c, UOp *a, const int64_t *reps, int n, Err *e)
{
	int64_t base[T_MAXDIM], us[2 * T_MAXDIM], ex[2 * T_MAXDIM], fin[T_MAXDIM];
	int i, k = 0;
	char b1[160], b2[160];

	if (!a)
		return NULL;
	if (n < a->ndim || n > T_MAXDIM)
		return err_set(e, "repeat: %s repeats for a tensor of shape %s (one per axis, or more: leading axes)",
		               uop_shape_fmt(b2, sizeof b2, reps, n), shp(b1, sizeof b1, a)), NULL;
	for (i = 0; i < n; i++) {
		base[i] = i < n - a->ndim ? 1 : a->shape[i - (n - a->ndim)];
		if (reps[i] < 0 || uck_mul(reps[i], base[i], &fin[i]) < 0)
			return err_set(e, "repeat: repeat %lld of axis %d is not a count", (long long)reps[i], i), NULL;
		if (reps[i] != 1) {
			us[k] = 1;
			ex[k++] = reps[i];
		}
		us[k] = base[i];
		ex[k++] = base[i];
	}
	if (k > T_MAXDIM)
		return err_set(e, "repeat: the repeats need %d axes on the way (at most %d)", k, T_MAXDIM), NULL;
	a = tensor_reshape(c, a, us, k, e);
	a = tensor_expand(c, a, ex, k, e);
	return tensor_reshape(c, a, fin, n, e);
}

/* repeat_interleave(x, r, dim) = reshape{..., s, 1, ...}:expand{..., s, r, ...}:reshape{..., s*r, ...}
** (dim NULL: of the flattened tensor) */
UOp *
tensor_repeat_interleave(UCtx *c, UOp *a, int64_t repeats, const int64_t *dim, Err *e)
{
	int64_t s[T_MAXDIM], d = 0;
	int i;

	if (!a)
		return NULL;
	if (repeats < 0)
		return err_set(e, "repeat_interleave: repeats %lld is negative", (long long)repeats), NULL;
	if (!dim || a->ndim == 0)
		a = tensor_flatten(c, a, 0, -1, e);
	else {
		d = *dim;
		if (axis_norm("repeat_interleave", &d, a->ndim, e) < 0)
			return NULL;
	}
	if (!a)
		return NULL;
	memcpy(s, a->shape, sizeof s[0] * a->ndim);
	a = unsq(c, a, (int)d + 1, e);
	if (!a)
		return NULL;
	{
		int64_t x[T_MAXDIM];

		memcpy(x, a->shape, sizeof x[0] * a->ndim);
		x[d + 1] = repeats;
		a = tensor_expand(c, a, x, a->ndim, e);
	}
	if (uck_mul(s[d], repeats, &s[d]) < 0)
		return err_set(e, "repeat_interleave: the axis overflows"), NULL;
	(void)i;
	return a ? tensor_reshape(c, a, s, a->ndim - 1, e) : NULL;
}

/* roll(x, shifts, dims) = x:repeat(2 on dims):shrink{(s - shift % s, 2s - shift % s) on dims}
** (dims NULL: the flattened tensor rolled by shifts[0]) */
UOp *
tensor_roll(UCtx *c, UOp *a, const int64_t *shifts, const int64_t *dims, int n, Err *e)
{
	int64_t rep[T_MAXDIM], b[T_MAXDIM], en[T_MAXDIM], d, m;
	int i;

	if (!a)
		return NULL;
	if (!dims) {
		UOp *f;

		if (n != 1)
			return err_set(e, "roll: without dims, one shift (got %d)", n), NULL;
		f = tensor_flatten(c, a, 0, -1, e);
		f = tensor_roll(c, f, shifts, (int64_t[]){ 0 }, 1, e);
		return f ? tensor_reshape(c, f, a->shape, a->ndim, e) : NULL;
	}
	if (n > a->ndim)
		return err_set(e, "roll: %d dims for a tensor of rank %d", n, a->ndim), NULL;
	for (i = 0; i < a->ndim; i++) {
		rep[i] = 1;
		b[i] = 0;
		en[i] = a->shape[i];
	}
	for (i = 0; i < n; i++) {
		d = dims[i];
		if (axis_norm("roll", &d, a->ndim, e) < 0)
			return NULL;
		rep[d] = 2;
		if (a->shape[d] == 0)
			return a;
		m = shifts[i] % a->shape[d];
		if (m < 0)
			m += a->shape[d];
		b[d] = a->shape[d] - m;
		en[d] = b[d] + a->shape[d];
	}
	return tensor_shrink(c, tensor_repeat(c, a, rep, a->ndim, e), b, en, a->ndim, e);
}

/* tinygrad's _tri(r, c, d) = arange(r):reshape{r, 1} + d <= arange(c) (diagonals clamped to the matrix) */
static UOp *
tri(UCtx *c, int64_t r, int64_t cols, int64_t d, Err *e)
{
	UOp *i = tensor_arange(c, r, DT_INT64, e), *j;
	int64_t s[2] = { r, 1 };

	if (d < -r - 1)
		d = -r - 1;
	if (d > cols + 1)
		d = cols + 1;
	j = tensor_arange(c, cols, DT_INT64, e);
	i = addk(c, tensor_reshape(c, i, s, 2, e), (double)d, e);
	return tensor_le(c, i, j, e);
}

/* triu(x, d) = tri(r, c, d):where(x, 0); tril(x, d) = tri(r, c, d + 1):where(0, x) (the last two axes) */
static UOp *
triul(UCtx *c, UOp *a, int64_t d, int upper, Err *e)
{
	UOp *m;

	if (!a)
		return NULL;
	if (a->ndim < 2)
		return err_set(e, "%s: needs at least 2 axes, the tensor has %d", upper ? "triu" : "tril", a->ndim), NULL;
	m = tri(c, a->shape[a->ndim - 2], a->shape[a->ndim - 1], upper ? d : d + 1, e);
	if (upper)
		return sel(c, m, a, kd(c, (DType)a->dtype, 0), e);
	return sel(c, m, kd(c, (DType)a->dtype, 0), a, e);
}

UOp *tensor_triu(UCtx *c, UOp *a, int64_t d, Err *e) { return triul(c, a, d, 1, e); }
UOp *tensor_tril(UCtx *c, UOp *a, int64_t d, Err *e) { return triul(c, a, d, 0, e); }

/* eye(n, m) = (arange(n):reshape{n, 1} == arange(m)):cast(t) */
UOp *
tensor_eye(UCtx *c, int64_t n, int64_t m, DType t, Err *e)
{
	int64_t s[2] = { n, 1 };
	UOp *i;

	if (n < 0 || m < 0)
		return err_set(e, "tensor.eye: sizes %lld and %lld must not be negative", (long long)n, (long long)m), NULL;
	if (t == DT_VOID || t == DT_INDEX || t >= DT_COUNT)
		return err_set(e, "tensor.eye: %s is not a tensor dtype", dtype_name(t)), NULL;
	i = tensor_reshape(c, tensor_arange(c, n, DT_INT64, e), s, 2, e);
	return tensor_cast(c, t, tensor_eq(c, i, tensor_arange(c, m, DT_INT64, e), e), e);
}

/* diag(v) = v:reshape{n, 1}:pad{0, n}:flatten():shrink{0, n*n}:reshape{n, n} (v 1-D) */
UOp *
tensor_diag(UCtx *c, UOp *a, Err *e)
{
	int64_t pb[2] = { 0, 0 }, pa[2] = { 0, 0 }, n, s[2], z = 0, nn;
	char b1[160];

	if (!a)
		return NULL;
	if (a->ndim != 1)
		return err_set(e, "diag: needs a 1-D tensor, got shape %s", shp(b1, sizeof b1, a)), NULL;
	n = a->shape[0];
	pa[1] = n;
	a = tensor_pad(c, unsq(c, a, 1, e), pb, pa, 2, e);
	a = tensor_flatten(c, a, 0, -1, e);
	nn = n * n;
	a = tensor_shrink(c, a, &z, &nn, 1, e);
	s[0] = s[1] = n;
	return tensor_reshape(c, a, s, 2, e);
}

/*
** diagonal(x, offset, d1, d2): d1 and d2 permuted last and shrunk to the
** offset's square of side k, then flatten, pad to k(k+1), reshape{k, k+1}
** and take column 0: the new last axis holds x[..., i, i + offset].
*/
UOp *
tensor_diagonal(UCtx *c, UOp *a, int64_t offset, int64_t d1, int64_t d2, Err *e)
{
	int64_t o[T_MAXDIM], b[T_MAXDIM], en[T_MAXDIM], s[T_MAXDIM], r, cl, k;
	int i, j = 0, nd;

	if (!a)
		return NULL;
	if (a->ndim < 2)
		return err_set(e, "diagonal: needs at least 2 axes, the tensor has %d", a->ndim), NULL;
	if (axis_norm("diagonal", &d1, a->ndim, e) < 0 || axis_norm("diagonal", &d2, a->ndim, e) < 0)
		return NULL;
	if (d1 == d2)
		return err_set(e, "diagonal: dim1 and dim2 are both %lld", (long long)d1), NULL;
	nd = a->ndim;
	for (i = 0; i < nd; i++)
		if (i != d1 && i != d2)
			o[j++] = i;
	o[j++] = d1;
	o[j++] = d2;
	a = tensor_permute(c, a, o, nd, e);
	if (!a)
		return NULL;
	r = a->shape[nd - 2];
	cl = a->shape[nd - 1];
	for (i = 0; i < nd; i++) {
		b[i] = 0;
		en[i] = a->shape[i];
	}
	if (offset >= 0)
		b[nd - 1] = offset < cl ? offset : cl;
	else
		b[nd - 2] = -offset < r ? -offset : r;
	k = en[nd - 2] - b[nd - 2] < en[nd - 1] - b[nd - 1] ? en[nd - 2] - b[nd - 2] : en[nd - 1] - b[nd - 1];
	en[nd - 2] = b[nd - 2] + k;
	en[nd - 1] = b[nd - 1] + k;
	a = tensor_shrink(c, a, b, en, nd, e);
	if (!a)
		return NULL;
	memcpy(s, a->shape, sizeof s[0] * (nd - 2));
	if (k == 0) {
		s[nd - 2] = 0;
		return tensor_reshape(c, a, s, nd - 1, e);
	}
	a = tensor_flatten(c, a, nd - 2, nd - 1, e);
	for (i = 0; i < nd - 1; i++)
		b[i] = en[i] = 0;
	en[nd - 2] = k;   /* k*k + k = k(k+1) */
	a = tensor_pad(c, a, b, en, nd - 1, e);
	s[nd - 2] = k;
	s[nd - 1] = k + 1;
	a = tensor_reshape(c, a, s, nd, e);
	if (!a)
		return NULL;
	for (i = 0; i < nd; i++) {
		b[i] = 0;
		en[i] = a->shape[i];
	}
	en[nd - 1] = 1;
	a = tensor_shrink(c, a, b, en, nd, e);
	return a ? tensor_reshape(c, a, s, nd - 1, e) : NULL;
}

/* one_hot(x, n) = (x:reshape{..., 1} == arange(n)):where(1, 0) in int32 (x an integer tensor) */
UOp *
tensor_one_hot(UCtx *c, UOp *a, int64_t n, Err *e)
{
	if (!a)
		return NULL;
	if (!is_intdt((DType)a->dtype))
		return err_set(e, "one_hot: needs an integer tensor, got %s", dtype_name(a->dtype)), NULL;
	if (n < 0)
		return err_set(e, "one_hot: num_classes %lld is negative", (long long)n), NULL;
	a = tensor_eq(c, unsq(c, a, a->ndim, e), tensor_arange(c, n, DT_INT64, e), e);
	return sel(c, a, kd(c, DT_INT32, 1), kd(c, DT_INT32, 0), e);
}

/* linspace(start, stop, n) = (start + arange(n) (stop - start) / (n - 1)):cast(t) in float32 */
UOp *
tensor_linspace(UCtx *c, double start, double stop, int64_t n, DType t, Err *e)
{
	UOp *r;
	int64_t one = 1;

	if (n < 0)
		return err_set(e, "tensor.linspace: steps %lld is negative", (long long)n), NULL;
	if (t == DT_BOOL || t == DT_VOID || t == DT_INDEX || t >= DT_COUNT)
		return err_set(e, "tensor.linspace: %s is not a number dtype", dtype_name(t)), NULL;
	if (n == 1)
		return tensor_cast(c, t, tensor_full(c, DT_FLOAT32, start, &one, 1, e), e);
	r = tensor_arange(c, n, DT_FLOAT32, e);
	r = mulk(c, r, n > 1 ? (stop - start) / (double)(n - 1) : 0, e);
	return tensor_cast(c, t, addk(c, r, start, e), e);
}

/*
** meshgrid(t0, t1, ...) ("ij"; xy: the first two swapped): ti flattened,
** reshaped to -1 on its axis and 1 elsewhere, expanded to the common shape.
*/
int
tensor_meshgrid(UCtx *c, UOp *const *ts, int n, int xy, UOp **out, Err *e)
{
	int64_t s[T_MAXDIM], full[T_MAXDIM];
	int i, k, ax;

	if (n < 1 || n > T_MAXDIM)
		return err_set(e, "meshgrid: 1 to %d tensors, got %d", T_MAXDIM, n);
	for (i = 0; i < n; i++) {
		if (!ts[i])
			return -1;
		ax = xy && n > 1 && i < 2 ? 1 - i : i;
		full[ax] = uop_numel(ts[i]);
	}
	for (i = 0; i < n; i++) {
		ax = xy && n > 1 && i < 2 ? 1 - i : i;
		for (k = 0; k < n; k++)
			s[k] = k == ax ? full[ax] : 1;
		if (n == 1) {
			out[i] = ts[i];
			continue;
		}
		out[i] = tensor_expand(c, tensor_reshape(c, ts[i], s, n, e), full, n, e);
		if (!out[i])
			return -1;
	}
	return n;
}

/*
** pad_to(a, shape) and shrink_to(a, shape) (tinygrad's): zeros after the
** end of each axis up to shape[i], or the first shape[i] elements; -1 (None)
** keeps the axis. pad_to refuses a smaller size, shrink_to a larger one.
*/
UOp *
tensor_pad_to(UCtx *c, UOp *a, const int64_t *shape, int n, Err *e)
{
	int64_t b[T_MAXDIM], x[T_MAXDIM];
	int i;
	char b1[160], b2[160];

	if (!a)
		return NULL;
	if (n != a->ndim)
		return err_set(e, "pad_to: %d sizes for a tensor of rank %d (%s)", n, a->ndim, shp(b1, sizeof b1, a)), NULL;
	for (i = 0; i < n; i++) {
		b[i] = 0;
		x[i] = shape[i] < 0 ? 0 : shape[i] - a->shape[i];
		if (shape[i] < -1 || x[i] < 0)
			return err_set(e, "pad_to: %s to %s: axis %d of size %lld cannot pad to %lld", shp(b1, sizeof b1, a),
			               uop_shape_fmt(b2, sizeof b2, shape, n), i, (long long)a->shape[i],
			               (long long)shape[i]), NULL;
	}
	return tensor_pad(c, a, b, x, n, e);
}

UOp *
tensor_shrink_to(UCtx *c, UOp *a, const int64_t *shape, int n, Err *e)
{
	int64_t b[T_MAXDIM], x[T_MAXDIM];
	int i;
	char b1[160], b2[160];

	if (!a)
		return NULL;
	if (n != a->ndim)
		return err_set(e, "shrink_to: %d sizes for a tensor of rank %d (%s)", n, a->ndim, shp(b1, sizeof b1, a)),
		       NULL;
	for (i = 0; i < n; i++) {
		b[i] = 0;
		x[i] = shape[i] < 0 ? a->shape[i] : shape[i];
		if (shape[i] < -1 || x[i] > a->shape[i])
			return err_set(e, "shrink_to: %s to %s: axis %d of size %lld cannot shrink to %lld",
			               shp(b1, sizeof b1, a), uop_shape_fmt(b2, sizeof b2, shape, n), i,
			               (long long)a->shape[i], (long long)shape[i]), NULL;
	}
	return tensor_shrink(c, a, b, x, n, e);
}

/* ---- rearrange (einops' formula, as tinygrad reads it) ---- */

enum { R_ATOMS = 2 * T_MAXDIM, R_NAME = 32 };

/* One side of a formula: dims, each a run of atoms (a name alone, or a group's names). */
typedef struct RSide {
	int ndim, nat;
	int start[R_ATOMS + 1];    /* dim d holds atoms start[d] .. start[d + 1] - 1 */
	int group[R_ATOMS];        /* dim d was written in parentheses */
	char at[R_ATOMS][R_NAME];  /* "..." for the ellipsis */
} RSide;

static int
r_name_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (!strcmp(s, "..."))
		return 1;
	if (n == 0 || s[0] == '_' || s[n - 1] == '_' || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || ((s[i] | 32) >= 'a' && (s[i] | 32) <= 'z')))
			return 0;
	return 1;
}

/* the tokens of s[0..len): names, "..." (or the one-character ellipsis), "(", ")", and "1" as "()" */
static int
r_parse(const char *s, size_t len, RSide *r, const char *formula, Err *e)
{
	size_t i = 0;
	int open = -1;

	memset(r, 0, sizeof *r);
	while (i < len) {
		char tok[R_NAME];
		size_t n = 0;

		if (s[i] == ' ' || s[i] == '\t') {
			i++;
			continue;
		}
		if (s[i] == '(' || s[i] == ')') {
			if ((s[i] == '(') == (open >= 0))
				return err_set(e, "rearrange \"%s\": bracket mismatch", formula);
			if (s[i] == '(') {
				if (r->ndim >= R_ATOMS)
					return err_set(e, "rearrange \"%s\": more than %d axes", formula, R_ATOMS);
				open = r->ndim;
				r->group[r->ndim] = 1;
				r->start[r->ndim] = r->nat;
			} else {
				r->ndim++;
				open = -1;
			}
			i++;
			continue;
		}
		if (!strncmp(s + i, "\xe2\x80\xa6", 3)) {
			strcpy(tok, "...");
			i += 3;
		} else if (!strncmp(s + i, "...", 3)) {
			strcpy(tok, "...");
			i += 3;
		} else {
			while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '(' && s[i] != ')' && strncmp(s + i, "...", 3)
			       && strncmp(s + i, "\xe2\x80\xa6", 3)) {
				if (n + 1 == sizeof tok)
					return err_set(e, "rearrange \"%s\": an axis name longer than %d characters", formula,
					               (int)sizeof tok - 1);
				tok[n++] = s[i++];
			}
			tok[n] = 0;
		}
		if (!strcmp(tok, "1")) {   /* an axis of size 1: an empty group */
			if (open >= 0)
				return err_set(e, "rearrange \"%s\": bracket mismatch", formula);
			if (r->ndim >= R_ATOMS)
				return err_set(e, "rearrange \"%s\": more than %d axes", formula, R_ATOMS);
			r->group[r->ndim] = 1;
			r->start[r->ndim++] = r->nat;
			continue;
		}
		if (!r_name_ok(tok))
			return err_set(e, "rearrange \"%s\": invalid axis name %s", formula, tok);
		if (r->nat >= R_ATOMS || (open < 0 && r->ndim >= R_ATOMS))
			return err_set(e, "rearrange \"%s\": more than %d axes", formula, R_ATOMS);
		if (open < 0) {
			r->group[r->ndim] = 0;
			r->start[r->ndim++] = r->nat;
		}
		snprintf(r->at[r->nat++], R_NAME, "%s", tok);
	}
	if (open >= 0)
		return err_set(e, "rearrange \"%s\": bracket mismatch", formula);
	r->start[r->ndim] = r->nat;
	return 0;
}

static int
r_find(const RSide *r, const char *name)
{
	int i;

	for (i = 0; i < r->nat; i++)
		if (!strcmp(r->at[i], name))
			return i;
	return -1;
}

/* the ellipsis atom replaced by k atoms ...0 .. ...k-1, each a dim of its own unless in a group */
static int
r_expand(RSide *r, int k, const char *formula, Err *e)
{
	RSide o;
	int d, a, j;

	if (r_find(r, "...") < 0)
		return 0;
	memset(&o, 0, sizeof o);
	for (d = 0; d < r->ndim; d++) {
		int alone = !r->group[d] && r->start[d + 1] - r->start[d] == 1 && !strcmp(r->at[r->start[d]], "...");

		if (!alone) {
			if (o.ndim >= R_ATOMS)
				return err_set(e, "rearrange \"%s\": more than %d axes", formula, R_ATOMS);
			o.group[o.ndim] = r->group[d];
			o.start[o.ndim++] = o.nat;
		}
		for (a = r->start[d]; a < r->start[d + 1]; a++) {
			int ell = !strcmp(r->at[a], "...");

			for (j = 0; j < (ell ? k : 1); j++) {
				if (o.nat >= R_ATOMS || (alone && o.ndim >= R_ATOMS))
					return err_set(e, "rearrange \"%s\": more than %d axes", formula, R_ATOMS);
				if (alone)
					o.start[o.ndim++] = o.nat;
				if (ell)
					snprintf(o.at[o.nat++], R_NAME, "...%d", j);
				else
					snprintf(o.at[o.nat++], R_NAME, "%s", r->at[a]);
			}
		}
	}
	o.start[o.ndim] = o.nat;
	*r = o;
	return 0;
}

/*
** rearrange(a, formula, sizes) (einops' rearrange as tinygrad has it): the
** left side names a's axes, splitting an axis into a group "(h w)"; the right
** side orders the names and merges groups; "..." stands for the axes no name
** takes; "1" or "()" is an axis of size 1. sizes[i] gives the size of names[i]
** where a group has two unknowns. Built as a reshape into the named axes, a
** permute into the right side's order, and a reshape merging its groups.
*/
UOp *
tensor_rearrange(UCtx *c, UOp *a, const char *formula, const char *const *names, const int64_t *sizes, int nsizes,
                 Err *e)
{
	const char *arrow;
	RSide l, r;
	int64_t at[R_ATOMS], s[T_MAXDIM], order[T_MAXDIM];
	int i, d, k, ell = 0;
	char b1[160];

	if (!a)
		return NULL;
	if (!formula || !(arrow = strstr(formula, "->")) || strstr(arrow + 2, "->"))
		return err_set(e, "rearrange \"%s\": need exactly one \"->\"", formula ? formula : ""), NULL;
	if (r_parse(formula, (size_t)(arrow - formula), &l, formula, e) < 0 ||
	    r_parse(arrow + 2, strlen(arrow + 2), &r, formula, e) < 0)
		return NULL;
	for (i = 0; i < nsizes; i++) {
		if (r_find(&l, names[i]) < 0)
			return err_set(e, "rearrange \"%s\": axis %s is not used in the transform", formula, names[i]), NULL;
		if (sizes[i] < 0)
			return err_set(e, "rearrange \"%s\": size %lld of %s is negative", formula, (long long)sizes[i],
			               names[i]), NULL;
	}
	/* the same names on both sides, each once */
	for (i = 0; i < l.nat; i++)
		if (r_find(&l, l.at[i]) != i)
			return err_set(e, "rearrange \"%s\": %s appears twice on the left", formula, l.at[i]), NULL;
	for (i = 0; i < l.nat; i++) {
		if (r_find(&r, l.at[i]) < 0)
			return err_set(e, "rearrange \"%s\": %s is not on the right", formula, l.at[i]), NULL;
	}
	for (i = 0; i < r.nat; i++)
		if (r_find(&l, r.at[i]) < 0 || r_find(&r, r.at[i]) != i)
			return err_set(e, "rearrange \"%s\": %s %s", formula, r.at[i],
			               r_find(&l, r.at[i]) < 0 ? "is not on the left" : "appears twice on the right"), NULL;
	for (d = 0; d < l.ndim; d++)
		for (k = l.start[d]; k < l.start[d + 1]; k++)
			if (!strcmp(l.at[k], "...")) {
				if (l.group[d])
					return err_set(e, "rearrange \"%s\": an ellipsis in a group of the left side", formula), NULL;
				ell = 1;
			}
	if (ell) {
		int n = a->ndim - l.ndim + 1;

		if (n < 0)
			return err_set(e, "rearrange \"%s\": the left side names %d axes; %s has %d", formula, l.ndim - 1,
			               shp(b1, sizeof b1, a), a->ndim), NULL;
		if (r_expand(&l, n, formula, e) < 0 || r_expand(&r, n, formula, e) < 0)
			return NULL;
	}
	if (l.ndim != a->ndim)
		return err_set(e, "rearrange \"%s\": the left side has %d axes; %s has %d", formula, l.ndim,
		               shp(b1, sizeof b1, a), a->ndim), NULL;
	if (l.nat > T_MAXDIM)
		return err_set(e, "rearrange \"%s\": %d named axes (at most %d)", formula, l.nat, T_MAXDIM), NULL;
	/* each axis of the left side: its names' sizes, one unknown solved */
	for (d = 0; d < l.ndim; d++) {
		int64_t p = 1;
		int unknown = -1;

		for (k = l.start[d]; k < l.start[d + 1]; k++) {
			at[k] = -1;
			for (i = 0; i < nsizes; i++)
				if (!strcmp(names[i], l.at[k]))
					at[k] = sizes[i];
			if (l.start[d + 1] - l.start[d] == 1 && at[k] < 0)
				at[k] = a->shape[d];
			if (at[k] < 0) {
				if (unknown >= 0)
					return err_set(e, "rearrange \"%s\": %s and %s split axis %d of size %lld; give one of their "
					               "sizes", formula, l.at[unknown], l.at[k], d, (long long)a->shape[d]), NULL;
				unknown = k;
			} else
				p *= at[k];
		}
		if (unknown >= 0) {
			if (p == 0 || a->shape[d] % p)
				return err_set(e, "rearrange \"%s\": axis %d of size %lld does not split by %lld", formula, d,
				               (long long)a->shape[d], (long long)p), NULL;
			at[unknown] = a->shape[d] / p;
		} else if (p != a->shape[d])
			return err_set(e, "rearrange \"%s\": axis %d has size %lld, not %lld", formula, d,
			               (long long)a->shape[d], (long long)p), NULL;
	}
	a = tensor_reshape(c, a, at, l.nat, e);
	for (i = 0; i < r.nat; i++)
		order[i] = r_find(&l, r.at[i]);
	a = tensor_permute(c, a, order, r.nat, e);
	if (r.ndim > T_MAXDIM)
		return err_set(e, "rearrange \"%s\": %d axes on the right (at most %d)", formula, r.ndim, T_MAXDIM), NULL;
	for (d = 0; d < r.ndim; d++)
		for (s[d] = 1, k = r.start[d]; k < r.start[d + 1]; k++)
			s[d] *= at[order[k]];
	return tensor_reshape(c, a, s, r.ndim, e);
}

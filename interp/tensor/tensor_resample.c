/* tensor_resample.c - tinygrad's interpolate, conv_transpose2d, max_pool2d's indices, max_unpool2d and scatter_reduce, composed from the tensor primitives. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/*
** Each function builds the graph that tinygrad's Tensor method of the same
** name builds (tensor.py, 0.14), from the compositions of tensor_compose.c,
** tensor_shape.c and tensor_pool.c: interpolate gathers along each resized
** axis with indices made by arange arithmetic, conv_transpose2d is conv2d of
** the input spread out by the stride with the flipped weight, the pool's
** indices and the unpool are one-hot masks over the flat spatial positions,
** and scatter_reduce reduces one-hot masked copies of src. Every function
** returns NULL with e filled on failure, naming tinygrad's method.
*/

/* a constant of dtype t holding the integer v (wrapped to t) */
static UOp *
ik(UCtx *c, DType t, int64_t v)
{
	return uop_new(c, OP_CONST, t, NULL, 0, dtype_wrap(t, v), 0, NULL, NULL, 0);
}

/* the constant k (shape ()) broadcast to shape[n] */
static UOp *
fill(UCtx *c, UOp *k, const int64_t *shape, int n, Err *e)
{
	int64_t ones[T_MAXDIM];
	int i;

	if (n == 0)
		return k;
	for (i = 0; i < n; i++)
		ones[i] = 1;
	return tensor_expand(c, tensor_reshape(c, k, ones, n, e), shape, n, e);
}

/* tinygrad's dtype.min (hi = 0) or dtype.max (hi = 1): infinities for floats, false and true for bool */
static UOp *
extreme(UCtx *c, DType t, int hi)
{
	int64_t lo, top;

	if (dtype_is_float(t))
		return uop_constf(c, t, hi ? INFINITY : -INFINITY);
	if (t == DT_BOOL)
		return uop_constf(c, t, hi);
	if (dtype_is_unsigned(t))
		return ik(c, t, hi ? -1 : 0);   /* all ones: uint64's too */
	dtype_range(t, &lo, &top);
	return ik(c, t, hi ? top : lo);
}

/* ---- interpolate ---- */

/*
** interpolate(x, size, mode, align_corners): the last n axes resized to
** size, the last one first (tinygrad's loop), each by gathers along the axis:
**   linear, arr = arange(out) (int32):
**     num, den = arr (in-1), out-1            (align_corners)
**              = (2 arr + 1) in - out, 2 out  (otherwise: half-pixel centers)
**     num = num:clip(0, (in-1) den)
**     x = x:gather(ax, num // den):lerp(x:gather(ax, (num + den-1) // den), (num % den):float() / den)
**   nearest: x:gather(ax, (scale arr):int()), nearest-exact: (scale (arr + 0.5)):int(),
**     scale = in / out in float32, arr = arange(out) in float32
** the indices reshaped to the axis and expanded to x's shape; then x:cast(x's dtype).
** The lerp computes in float32 (float16 too) and the cast truncates integers.
** align_corners with out = 1 has den = 0: perc is 0/0 and the values NaN, as in
** tinygrad (its integer divisions by 0 give indices into the axis or none; here
** den 1 gives index 0: the NaN is the same).
*/
UOp *
tensor_interpolate(UCtx *c, UOp *a, const int64_t *size, int n, const char *mode, int align_corners, Err *e)
{
	int64_t exp[T_MAXDIM], rs[T_MAXDIM];
	int lin, exact, j, k;
	char b1[160];
	UOp *x;

	if (!a)
		return NULL;
	if (!mode)
		mode = "linear";
	lin = strcmp(mode, "linear") == 0;
	exact = strcmp(mode, "nearest-exact") == 0;
	if (!lin && !exact && strcmp(mode, "nearest") != 0)
		return err_set(e, "interpolate: mode \"%s\" is not one of linear, nearest, nearest-exact (bilinear and "
		               "trilinear are \"linear\" with 2 or 3 sizes)", mode), NULL;
	if (align_corners && !lin)
		return err_set(e, "interpolate: align_corners is for mode linear only, not %s", mode), NULL;
	if (n < 1 || n > a->ndim)
		return err_set(e, "interpolate: %d sizes for a tensor of shape %s: give 1 to %d (the last axes)", n,
		               uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim), a->ndim), NULL;
	for (j = 0; j < n; j++) {
		int64_t in = a->shape[a->ndim - n + j];

		if (size[j] < 0 || (size[j] == 0 && !lin))
			return err_set(e, "interpolate: size %lld for axis %d: sizes must be at least %d in mode %s",
			               (long long)size[j], a->ndim - n + j, lin ? 0 : 1, mode), NULL;
		if ((double)(in + 1) * (2.0 * (double)size[j] + 1) > 2147483647.0)
			return err_set(e, "interpolate: axis %d of %lld to %lld: the int32 index arithmetic overflows",
			               a->ndim - n + j, (long long)in, (long long)size[j]), NULL;
	}
	memcpy(exp, a->shape, sizeof(int64_t) * (size_t)a->ndim);
	x = a;
	for (j = n - 1; j >= 0 && x; j--) {
		int ax = a->ndim - n + j;
		int64_t in = a->shape[ax], out = size[j];
		UOp *idx;

		for (k = 0; k < a->ndim; k++)
			rs[k] = 1;
		rs[ax] = exp[ax] = out;
		if (lin) {
			int64_t den = align_corners ? out - 1 : 2 * out, d1 = den ? den : 1;
			UOp *arr = tensor_arange(c, out, DT_INT32, e), *num, *lo, *hi, *perc;

			num = align_corners ? mulk(c, arr, (double)(in - 1), e)
			                    : addk(c, mulk(c, addk(c, mulk(c, arr, 2, e), 1, e), (double)in, e), (double)-out, e);
			num = tensor_clamp(c, num, ik(c, DT_INT32, 0), ik(c, DT_INT32, (in - 1) * den), e);
			lo = tensor_alu(c, OP_IDIV, num, ik(c, DT_INT32, d1), e);
			hi = tensor_alu(c, OP_IDIV, addk(c, num, (double)(d1 - 1), e), ik(c, DT_INT32, d1), e);
			perc = tensor_div(c, tensor_cast(c, DT_FLOAT32, tensor_alu(c, OP_MOD, num, ik(c, DT_INT32, d1), e), e),
			                  uop_constf(c, DT_FLOAT32, (double)den), e);
			lo = tensor_expand(c, tensor_reshape(c, lo, rs, a->ndim, e), exp, a->ndim, e);
			hi = tensor_expand(c, tensor_reshape(c, hi, rs, a->ndim, e), exp, a->ndim, e);
			perc = tensor_expand(c, tensor_reshape(c, perc, rs, a->ndim, e), exp, a->ndim, e);
			x = tensor_lerp(c, tensor_gather(c, x, ax, lo, e), tensor_gather(c, x, ax, hi, e), perc, e);
		} else {
			/* Python's in / out, then a float32 constant as tinygrad's weak float becomes */
			UOp *scale = uop_constf(c, DT_FLOAT32, (double)in / (double)out);
			UOp *arr = tensor_arange(c, out, DT_FLOAT32, e);

			idx = mul(c, exact ? add(c, arr, uop_constf(c, DT_FLOAT32, 0.5), e) : arr, scale, e);
			idx = tensor_cast(c, DT_INT32, idx, e);
			idx = tensor_expand(c, tensor_reshape(c, idx, rs, a->ndim, e), exp, a->ndim, e);
			x = tensor_gather(c, x, ax, idx, e);
		}
	}
	if (x && x->dtype != a->dtype)
		x = tensor_cast(c, (DType)a->dtype, x, e);
	return named_err(x, e, "interpolate");
}

/* ---- conv_transpose2d ---- */

/*
** conv_transpose2d(x, w, bias, groups, stride, dilation, padding, output_padding):
** x (batch, cin, *spatial), w (cin, cout / groups, *kernel), any number of
** spatial axes. tinygrad's composition:
**   w' = w:unflatten(0, {groups, -1}):transpose(1, 2):flip(3, ...):flatten(0, 1)
**   x' = x with stride - 1 zeros between the elements of each spatial axis:
**        reshape (k) -> (k, 1), pad -> (k, s), reshape (k s), shrink to k s - (s - 1)
**   x':conv2d(w', bias, groups, stride 1, dilation, padding per axis
**             ((k-1) d - before, (k-1) d - after + output_padding))
** Negative amounts shrink (conv2d's pad), as in tinygrad.
*/
UOp *
tensor_conv_transpose2d(UCtx *c, UOp *x, UOp *w, UOp *bias, int64_t groups, const int64_t *stride,
                        const int64_t *dilation, const int64_t *before, const int64_t *after,
                        const int64_t *output_padding, Err *e)
{
	int64_t sh[T_MAXDIM], pb[T_MAXDIM], pa[T_MAXDIM], be[T_MAXDIM], en[T_MAXDIM], one[T_MAXDIM], ax[T_MAXDIM];
	int nk, i, strided = 0;
	char b1[160], b2[160];
	UOp *wt, *r;

	if (!x || !w)
		return NULL;
	nk = w->ndim - 2;
	if (w->ndim < 3 || x->ndim != w->ndim || 2 + 2 * nk > T_MAXDIM)
		return err_set(e, "conv_transpose2d: input %s and weight %s: the weight is (cin, cout/groups, *kernel), "
		               "the input (batch, cin, *spatial), of one rank (3 to %d)",
		               uop_shape_fmt(b1, sizeof b1, x->shape, x->ndim),
		               uop_shape_fmt(b2, sizeof b2, w->shape, w->ndim), T_MAXDIM / 2 + 1), NULL;
	if (groups < 1 || w->shape[0] % groups != 0 || x->shape[1] != w->shape[0])
		return err_set(e, "conv_transpose2d: input %s, weight %s, groups %lld: the input needs the weight's "
		               "%lld channels, a multiple of groups", uop_shape_fmt(b1, sizeof b1, x->shape, x->ndim),
		               uop_shape_fmt(b2, sizeof b2, w->shape, w->ndim), (long long)groups,
		               (long long)w->shape[0]), NULL;
	if (bias && (bias->ndim != 1 || bias->shape[0] != groups * w->shape[1]))
		return err_set(e, "conv_transpose2d: the bias has shape %s; it must be (%lld), one value an output "
		               "channel", uop_shape_fmt(b1, sizeof b1, bias->shape, bias->ndim),
		               (long long)(groups * w->shape[1])), NULL;
	for (i = 0; i < nk; i++) {
		if (stride[i] < 1 || dilation[i] < 1)
			return err_set(e, "conv_transpose2d: axis %d: stride %lld, dilation %lld: each must be at least 1",
			               2 + i, (long long)stride[i], (long long)dilation[i]), NULL;
		if (stride[i] > ((int64_t)1 << 24) || x->shape[2 + i] * stride[i] > ((int64_t)1 << 40))
			return err_set(e, "conv_transpose2d: axis %d: %lld elements spread by stride %lld: too large", 2 + i,
			               (long long)x->shape[2 + i], (long long)stride[i]), NULL;
		strided |= stride[i] > 1;
	}
	/* the weight as conv2d's: (groups, cin/g, cout/g, *k) -> (groups cout/g, cin/g, *k), kernel flipped */
	sh[0] = groups;
	sh[1] = -1;
	wt = tensor_transpose(c, tensor_unflatten(c, w, 0, sh, 2, e), 1, 2, e);
	for (i = 0; i < nk; i++)
		ax[i] = 3 + i;
	wt = tensor_flatten(c, tensor_flip(c, wt, ax, nk, e), 0, 1, e);
	if (strided) {
		/* (b, c, k...) -> (b, c, k, 1, ...) -> (b, c, k, s, ...) -> (b, c, k s, ...) -> (b, c, k s - s + 1, ...) */
		sh[0] = x->shape[0], sh[1] = x->shape[1];
		for (i = 0; i < 2 + 2 * nk; i++)
			pb[i] = pa[i] = 0;
		for (i = 0; i < nk; i++) {
			sh[2 + 2 * i] = x->shape[2 + i];
			sh[3 + 2 * i] = 1;
			pa[3 + 2 * i] = stride[i] - 1;
		}
		x = tensor_pad(c, tensor_reshape(c, x, sh, 2 + 2 * nk, e), pb, pa, 2 + 2 * nk, e);
		for (i = 0; i < nk; i++)
			sh[2 + i] = sh[2 + 2 * i] * stride[i];
		x = tensor_reshape(c, x, sh, 2 + nk, e);
		for (i = 0; i < 2 + nk; i++) {
			be[i] = 0;
			en[i] = i < 2 ? sh[i] : sh[i] - (stride[i - 2] - 1);
			if (en[i] < 0)
				en[i] = 0;
		}
		x = tensor_shrink(c, x, be, en, 2 + nk, e);
	}
	for (i = 0; i < nk; i++) {
		int64_t span = (w->shape[2 + i] - 1) * dilation[i];

		one[i] = 1;
		pb[i] = span - before[i];
		pa[i] = span - after[i] + output_padding[i];
	}
	r = x && wt ? tensor_conv2d(c, x, wt, bias, groups, one, dilation, pb, pa, e) : NULL;
	return named_err(r, e, "conv_transpose2d");
}

/* ---- max_pool2d's indices, max_unpool2d ---- */

/* the windows of a's last nk axes padded with the value v (tensor_pool's shape: (..., o..., k...)) */
static UOp *
windows(UCtx *c, UOp *a, const int64_t *k, const int64_t *s, const int64_t *d, const int64_t *before,
        const int64_t *after, int nk, UOp *v, Err *e)
{
	int64_t b[T_MAXDIM] = { 0 }, f[T_MAXDIM] = { 0 };
	int i;

	if (!a)
		return NULL;
	for (i = 0; i < nk; i++) {
		b[a->ndim - nk + i] = before[i];
		f[a->ndim - nk + i] = after[i];
	}
	return tensor_pool(c, tensor_pad_constant(c, a, b, f, a->ndim, v, e), k, s, d, nk, e);
}

/*
** max_pool2d(..., return_indices = True)'s indices (tinygrad's): the flat
** position in the last nk axes of each window's first maximum, int32:
**   p   = x padded with dtype.min, windows               (..., o..., k...)
**   idx = arange(S, 0, -1):reshape(spatial), padded with int32's min, windows
**   m   = p == p:max(window axes, keepdim)
**   indices = S - (m * idx):max(window axes),  S = prod(spatial)
** so the first maximum (the largest S - position) wins; values = p:max(window axes).
*/
UOp *
tensor_max_pool_indices(UCtx *c, UOp *a, const int64_t *k, const int64_t *s, const int64_t *d,
                        const int64_t *before, const int64_t *after, int nk, int ceil_mode, UOp **values, Err *e)
{
	int64_t axes[T_MAXDIM], pa[T_MAXDIM], sp = 1;
	UOp *p, *mx, *idx, *m, *r;
	int i;

	if (values)
		*values = NULL;
	if (!a)
		return NULL;
	if (nk < 1 || nk > a->ndim)
		return err_set(e, "max_pool2d: a %d-axis window for a tensor of rank %d", nk, a->ndim), NULL;
	for (i = 0; i < nk; i++) {
		if (k[i] < 1 || s[i] < 1 || d[i] < 1)
			return err_set(e, "max_pool2d: axis %d: kernel %lld, stride %lld, dilation %lld: each must be at "
			               "least 1", a->ndim - nk + i, (long long)k[i], (long long)s[i], (long long)d[i]), NULL;
		sp *= a->shape[a->ndim - nk + i];   /* a's numel is at most 2^48 */
		axes[i] = a->ndim + i;   /* the window axes: after the pooled tensor's own */
	}
	if (sp >= ((int64_t)1 << 31))
		return err_set(e, "max_pool2d: %lld spatial positions do not fit the int32 indices", (long long)sp), NULL;
	memcpy(pa, after, sizeof(int64_t) * (size_t)nk);
	if (ceil_mode)
		tensor_ceil_pads(a, k, s, d, before, pa, nk);
	p = windows(c, a, k, s, d, before, pa, nk, extreme(c, (DType)a->dtype, 0), e);
	if (!p)   /* the input's message (its axes), not the index windows' */
		return named_err(NULL, e, "max_pool2d");
	mx = tensor_reduce(c, OP_MAX, p, axes, nk, 1, e);
	idx = tensor_arange_int(c, sp, 0, -1, DT_INT32, e);
	idx = tensor_reshape(c, idx, a->shape + a->ndim - nk, nk, e);
	idx = windows(c, idx, k, s, d, before, pa, nk, extreme(c, DT_INT32, 0), e);
	m = tensor_eq(c, p, mx, e);
	r = tensor_reduce(c, OP_MAX, mul(c, m, idx, e), axes, nk, 0, e);
	r = tensor_alu(c, OP_SUB, ik(c, DT_INT32, sp), r, e);
	if (r && values && !(*values = tensor_reduce(c, OP_MAX, p, axes, nk, 0, e)))
		r = NULL;
	return named_err(r, e, "max_pool2d");
}

/*
** max_unpool2d(x, indices, ...) (tinygrad's): x and indices (batch, c, *spatial)
** as max_pool2d gives them; each value goes to its flat position in an output
** of output_size (the last nk of os, or (i-1) s - (before + after) + d (k-1) + 1
** an axis, the inverse of the pool's size):
**   (indices:reshape{b, c, 1, -1} == arange(P):reshape{P, 1}):where(x:reshape{b, c, 1, -1}, 0)
**     :sum(3):reshape{b, c, *output_size},  P = prod(output_size)
** Values at one position add up (overlapping windows); an index outside 0..P-1 is dropped.
*/
UOp *
tensor_max_unpool(UCtx *c, UOp *a, UOp *indices, const int64_t *k, const int64_t *s, const int64_t *d,
                  const int64_t *before, const int64_t *after, const int64_t *os, int nos, Err *e)
{
	int64_t out[T_MAXDIM], sh[T_MAXDIM], P = 1, ax = 3;
	int nk, i;
	char b1[160], b2[160];
	UOp *m, *x, *r;

	if (!a || !indices)
		return NULL;
	nk = a->ndim - 2;
	if (a->ndim < 3)
		return err_set(e, "max_unpool2d: the input has shape %s; it is (batch, channels, *spatial)",
		               uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim)), NULL;
	if (indices->ndim != a->ndim || memcmp(indices->shape, a->shape, sizeof(int64_t) * (size_t)a->ndim) != 0)
		return err_set(e, "max_unpool2d: the indices have shape %s and the input %s (they must be equal)",
		               uop_shape_fmt(b1, sizeof b1, indices->shape, indices->ndim),
		               uop_shape_fmt(b2, sizeof b2, a->shape, a->ndim)), NULL;
	if (!is_intdt((DType)indices->dtype))
		return err_set(e, "max_unpool2d: the indices are %s, not an integer tensor", dtype_name(indices->dtype)),
		       NULL;
	if (os && nos < nk)
		return err_set(e, "max_unpool2d: output_size has %d values for %d spatial axes", nos, nk), NULL;
	for (i = 0; i < nk; i++) {
		if (os)
			out[i] = os[nos - nk + i];
		else {
			if (k[i] < 1 || s[i] < 1 || d[i] < 1)
				return err_set(e, "max_unpool2d: axis %d: kernel %lld, stride %lld, dilation %lld: each must be "
				               "at least 1", 2 + i, (long long)k[i], (long long)s[i], (long long)d[i]), NULL;
			out[i] = (a->shape[2 + i] - 1) * s[i] - (before[i] + after[i]) + d[i] * (k[i] - 1) + 1;
		}
		if (out[i] < 0 || out[i] > ((int64_t)1 << 40) || (double)P * (double)out[i] > 0x1p48)
			return err_set(e, "max_unpool2d: output size %lld for axis %d is out of range", (long long)out[i],
			               2 + i), NULL;
		P *= out[i];
	}
	sh[0] = a->shape[0], sh[1] = a->shape[1], sh[2] = 1, sh[3] = -1;
	x = tensor_reshape(c, a, sh, 4, e);
	m = tensor_reshape(c, indices, sh, 4, e);
	sh[0] = P, sh[1] = 1;
	m = tensor_eq(c, m, tensor_reshape(c, tensor_arange(c, P, DT_INT32, e), sh, 2, e), e);
	r = tensor_sum(c, sel(c, m, x, kd(c, (DType)a->dtype, 0), e), &ax, 1, 0, e);
	sh[0] = a->shape[0], sh[1] = a->shape[1];
	memcpy(sh + 2, out, sizeof(int64_t) * (size_t)nk);
	return named_err(tensor_reshape(c, r, sh, 2 + nk, e), e, "max_unpool2d");
}

/* ---- scatter_reduce ---- */

/* the reduction of x's last axis by op (add in sum's dtype, mul, max); a max over an empty
** axis is ident (the evaluator's empty max of an integer is not tinygrad's dtype.min) */
static UOp *
reduce_last(UCtx *c, Op op, UOp *x, UOp *ident, Err *e)
{
	int64_t last = -1;

	if (!x)
		return NULL;
	if (op == OP_MAX && x->shape[x->ndim - 1] == 0)
		return fill(c, ident, x->shape, x->ndim - 1, e);
	return op == OP_ADD ? tensor_sum(c, x, &last, 1, 0, e) : tensor_reduce(c, op, x, &last, 1, 0, e);
}

/*
** scatter_reduce(x, dim, index, src, reduce, include_self) (tinygrad's): with
** tinygrad's _pre_scatter
**   s    = src:shrink(to index's shape):unsqueeze(-1):expand(..., n):transpose(-1, dim)
**   mask = (index:unsqueeze(-1) == arange(n)):transpose(-1, dim),  n = x.shape[dim]
** both padded to x's shape (the last axis the positions along dim), and
** inv(a, b) = mask:any(-1):logical_not():where(a, b) (a where nothing lands):
**   sum  mask:where(s, 0):sum(-1) + (x | inv(x, 0))
**   prod mask:where(s, 1):prod(-1) * (x | inv(x, 1))
**   amax mask:where(s, min):max(-1):maximum(x | inv(x, min))   (min, max: the dtype's)
**   amin mask:where(s, max):min(-1):minimum(x | inv(x, max))
**   mean (the sum above) / (mask:where(1, 0):sum(-1) + (1 | inv(1, 0)))
** "x | inv" is x with include_self, inv without. The sum is in sum's dtype (int8
** gives int32); the mean divides in x's float dtype, or float32 for integers.
*/
UOp *
tensor_scatter_reduce(UCtx *c, UOp *a, int64_t dim, UOp *index, UOp *src, const char *reduce, int include_self,
                      Err *e)
{
	static const char *const names[] = { "sum", "prod", "mean", "amax", "amin" };
	int64_t b[T_MAXDIM], en[T_MAXDIM], sh[T_MAXDIM], n, last = -1;
	int k, nd, red;
	char b1[160], b2[160], b3[160];
	DType t;
	UOp *s, *m, *inv = NULL, *r, *self, *lo, *hi;

	if (!a || !index || !src)
		return NULL;
	for (red = 0; red < 5 && !(reduce && strcmp(reduce, names[red]) == 0); red++)
		;
	if (red == 5)
		return err_set(e, "scatter_reduce: reduce \"%s\" is not one of sum, prod, mean, amax, amin",
		               reduce ? reduce : "(null)"), NULL;
	nd = a->ndim;
	if (axis_norm("scatter_reduce", &dim, nd, e) < 0)
		return NULL;
	if (index->ndim != nd || src->ndim != nd)
		return err_set(e, "scatter_reduce: the tensor, index and src have ranks %d, %d and %d (they must be equal)",
		               nd, index->ndim, src->ndim), NULL;
	if (!is_intdt((DType)index->dtype))
		return err_set(e, "scatter_reduce: the index is %s, not an integer tensor", dtype_name(index->dtype)), NULL;
	for (k = 0; k < nd; k++)
		if (index->shape[k] > src->shape[k] || (k != dim && index->shape[k] > a->shape[k]))
			return err_set(e, "scatter_reduce: the index %s does not fit at axis %d: src is %s and the tensor %s "
			               "(the index fits in src, and in the tensor but on dim %lld)",
			               uop_shape_fmt(b1, sizeof b1, index->shape, nd), k,
			               uop_shape_fmt(b2, sizeof b2, src->shape, nd), uop_shape_fmt(b3, sizeof b3, a->shape, nd),
			               (long long)dim), NULL;
	if (src->dtype != a->dtype)
		return err_set(e, "scatter_reduce: the tensor is %s and src %s (they must be equal)", dtype_name(a->dtype),
		               dtype_name(src->dtype)), NULL;
	if (nd + 1 > T_MAXDIM)
		return err_set(e, "scatter_reduce: rank %d leaves no room for the one-hot axis (at most %d)", nd,
		               T_MAXDIM - 1), NULL;
	t = (DType)a->dtype;
	n = a->shape[dim];
	for (k = 0; k < nd; k++) {
		b[k] = 0;
		en[k] = sh[k] = index->shape[k];
	}
	sh[nd] = n;
	s = tensor_expand(c, unsq(c, tensor_shrink(c, src, b, en, nd, e), nd, e), sh, nd + 1, e);
	s = swap_ax(c, s, (int)dim, nd, e);
	m = tensor_eq(c, unsq(c, index, nd, e), tensor_arange(c, n, DT_INT32, e), e);
	m = swap_ax(c, m, (int)dim, nd, e);
	/* padded to x's shape on the other axes: padded cells are masked out */
	for (k = 0; k <= nd; k++) {
		b[k] = 0;
		en[k] = k < nd && k != dim ? a->shape[k] - index->shape[k] : 0;
	}
	s = tensor_pad(c, s, b, en, nd + 1, e);
	m = tensor_pad(c, m, b, en, nd + 1, e);
	if (!s || !m)
		return named_err(NULL, e, "scatter_reduce");
	if (!include_self)
		inv = tensor_logical_not(c, reduce_last(c, OP_MAX, m, uop_constf(c, DT_BOOL, 0), e), e);
	lo = extreme(c, t, 0);
	hi = extreme(c, t, 1);
	switch (red) {
	case 0:   /* sum */
	case 2:   /* mean */
		self = include_self ? a : sel(c, inv, a, kd(c, t, 0), e);
		r = add(c, reduce_last(c, OP_ADD, sel(c, m, s, kd(c, t, 0), e), NULL, e), self, e);
		if (red == 2) {
			UOp *cnt = reduce_last(c, OP_ADD, sel(c, m, ik(c, DT_INT32, 1), ik(c, DT_INT32, 0), e), NULL, e);

			cnt = add(c, cnt, include_self ? ik(c, DT_INT32, 1) : sel(c, inv, ik(c, DT_INT32, 1),
			                                                         ik(c, DT_INT32, 0), e), e);
			/* tinygrad's div: a float sum keeps its dtype, the count joins it; integers go to float32 */
			if (r && !dtype_is_float(r->dtype))
				r = tensor_cast(c, DT_FLOAT32, r, e);
			r = r ? mul(c, r, tensor_unary(c, OP_RECIP, tensor_cast(c, (DType)r->dtype, cnt, e), e), e) : NULL;
		}
		break;
	case 1:   /* prod */
		self = include_self ? a : sel(c, inv, a, kd(c, t, 1), e);
		r = mul(c, reduce_last(c, OP_MUL, sel(c, m, s, kd(c, t, 1), e), NULL, e), self, e);
		break;
	case 3:   /* amax */
		self = include_self ? a : sel(c, inv, a, lo, e);
		r = tensor_alu(c, OP_MAX, reduce_last(c, OP_MAX, sel(c, m, s, lo, e), lo, e), self, e);
		break;
	default:   /* amin: min(x) = inv(max(inv(x))) (tensor_min), empty: the dtype's max */
		self = include_self ? a : sel(c, inv, a, hi, e);
		r = sel(c, m, s, hi, e);
		r = r && r->shape[nd] == 0 ? fill(c, hi, r->shape, nd, e) : tensor_min(c, r, &last, 1, 0, e);
		r = tensor_minimum(c, r, self, e);
		break;
	}
	return named_err(r, e, "scatter_reduce");
}

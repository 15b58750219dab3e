/* tensor_pool.c - sliding windows (tinygrad's _pool) and what tinygrad builds on them: conv2d, avg_pool2d, max_pool2d. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/*
** tinygrad's _pool (mixin/movement.py) makes the windows with movement ops
** only: the input repeated so that no padding is needed, shrunk, reshaped so
** that dilation and stride become axes, shrunk again, and permuted so that
** the window axes come last. Every element of the result is therefore a view
** of the input, and the kernel lowering sees plain index arithmetic. conv2d
** multiplies the windows by the weights and sums them; the pools reduce them
** (mixin/op.py). Any number of window axes: the last nk of the input.
*/

static int64_t
ceildiv(int64_t a, int64_t b)
{
	/* tinygrad's ceildiv: -(-a // b), floor division */
	int64_t q = -a / b, r = -a % b;

	if (r != 0 && (r < 0) != (b < 0))
		q--;
	return -q;
}

UOp *
tensor_pool(UCtx *c, UOp *a, const int64_t *k, const int64_t *s, const int64_t *dil, int nk, Err *e)
{
	int64_t o[T_MAXDIM], f[T_MAXDIM], sh[T_MAXDIM], be[T_MAXDIM], en[T_MAXDIM], perm[T_MAXDIM], d[T_MAXDIM];
	int n0, i, n;
	UOp *x;

	if (!a)
		return NULL;
	if (nk < 1 || nk > a->ndim || a->ndim - nk + 3 * nk > T_MAXDIM)
		return err_set(e, "pool: %d window axes for a tensor of rank %d (at most %d axes in all)", nk, a->ndim,
		               T_MAXDIM), NULL;
	n0 = a->ndim - nk;
	for (i = 0; i < nk; i++) {
		int64_t in = a->shape[n0 + i];

		if (k[i] < 1 || s[i] < 1 || dil[i] < 1)
			return err_set(e, "pool: axis %d: kernel %lld, stride %lld, dilation %lld: each must be at least 1",
			               n0 + i, (long long)k[i], (long long)s[i], (long long)dil[i]), NULL;
		/* a window of one element is the same for every dilation (tinygrad allows any then) */
		d[i] = k[i] == 1 ? 1 : dil[i];
		if (k[i] > in || d[i] > in || s[i] > ((int64_t)1 << 40) || (double)in * in * 4 > 0x1p60
		|| d[i] * (k[i] - 1) + 1 > in)
			return err_set(e, "pool: axis %d: a window of %lld (kernel %lld, dilation %lld) is larger than the "
			               "axis (%lld)", n0 + i, (long long)(d[i] * (k[i] - 1) + 1), (long long)k[i],
			               (long long)d[i], (long long)in), NULL;
		o[i] = ceildiv(in - d[i] * (k[i] - 1), s[i]);
		f[i] = ceildiv(o[i] * s[i] - d[i], in);
		if (f[i] < 1)
			f[i] = 1;
		if ((double)k[i] * ((double)in * (double)f[i] + (double)d[i]) > 0x1p60)
			return err_set(e, "pool: axis %d: windows of %lld every %lld over %lld elements: too large", n0 + i,
			               (long long)k[i], (long long)s[i], (long long)in), NULL;
	}
	/* repeated so that no padding is needed */
	for (i = 0; i < a->ndim; i++)
		sh[i] = i < n0 ? 1 : ceildiv(k[i - n0] * (a->shape[i] * f[i - n0] + d[i - n0]), a->shape[i]);
	x = tensor_repeat(c, a, sh, a->ndim, e);
	/* dilation: each window axis becomes (k, i*f + d) */
	for (i = 0; i < a->ndim; i++) {
		be[i] = 0;
		en[i] = i < n0 ? a->shape[i] : k[i - n0] * (a->shape[i] * f[i - n0] + d[i - n0]);
	}
	x = tensor_shrink(c, x, be, en, a->ndim, e);
	for (i = 0; i < n0; i++)
		sh[i] = a->shape[i];
	for (i = 0; i < nk; i++) {
		sh[n0 + 2 * i] = k[i];
		sh[n0 + 2 * i + 1] = a->shape[n0 + i] * f[i] + d[i];
	}
	x = tensor_reshape(c, x, sh, n0 + 2 * nk, e);
	/* stride: (k, o*s) becomes (k, o, s) */
	for (i = 0; i < n0 + 2 * nk; i++) {
		be[i] = 0;
		en[i] = i < n0 ? a->shape[i] : (i - n0) % 2 == 0 ? k[(i - n0) / 2] : o[(i - n0) / 2] * s[(i - n0) / 2];
	}
	x = tensor_shrink(c, x, be, en, n0 + 2 * nk, e);
	for (i = 0; i < nk; i++) {
		sh[n0 + 3 * i] = k[i];
		sh[n0 + 3 * i + 1] = o[i];
		sh[n0 + 3 * i + 2] = s[i];
	}
	x = tensor_reshape(c, x, sh, n0 + 3 * nk, e);
	for (i = 0; i < n0 + 3 * nk; i++) {
		be[i] = 0;
		en[i] = i < n0 ? a->shape[i] : (i - n0) % 3 == 2 ? 1 : sh[i];
	}
	x = tensor_shrink(c, x, be, en, n0 + 3 * nk, e);
	for (i = 0; i < nk; i++) {
		sh[n0 + 2 * i] = k[i];
		sh[n0 + 2 * i + 1] = o[i];
	}
	x = tensor_reshape(c, x, sh, n0 + 2 * nk, e);
	/* the output axes, then the window axes */
	n = 0;
	for (i = 0; i < n0; i++)
		perm[n++] = i;
	for (i = 0; i < nk; i++)
		perm[n++] = n0 + 2 * i + 1;
	for (i = 0; i < nk; i++)
		perm[n++] = n0 + 2 * i;
	return tensor_permute(c, x, perm, n, e);
}

UOp *
tensor_unfold(UCtx *c, UOp *a, int64_t dim, int64_t size, int64_t step, Err *e)
{
	int64_t perm[T_MAXDIM], back[T_MAXDIM], sh[T_MAXDIM], one = 1;
	int i, n = 0;
	UOp *x;

	if (!a)
		return NULL;
	if (a->ndim < 1 || a->ndim + 1 > T_MAXDIM || dim < -a->ndim || dim >= a->ndim)
		return err_set(e, "unfold: dim %lld for a tensor of rank %d", (long long)dim, a->ndim), NULL;
	if (dim < 0)
		dim += a->ndim;
	if (size < 0 || step <= 0 || size > a->shape[dim])
		return err_set(e, "unfold: size %lld, step %lld along an axis of %lld: the size must be 0 to the axis, the "
		               "step at least 1", (long long)size, (long long)step, (long long)a->shape[dim]), NULL;
	if (size == 0) {
		/* (n - 0) // step + 1 empty windows */
		for (i = 0; i < a->ndim; i++)
			sh[i] = i == dim ? a->shape[i] / step + 1 : a->shape[i];
		sh[a->ndim] = 0;
		return tensor_full(c, (DType)a->dtype, 0, sh, a->ndim + 1, e);
	}
	/* the axis last, its windows, then back in place with the window axis last */
	for (i = 0; i < a->ndim; i++)
		if (i != dim)
			perm[n++] = i;
	perm[n++] = dim;
	for (i = 0; i < a->ndim; i++)
		back[perm[i]] = i;
	back[a->ndim] = a->ndim;
	x = tensor_pool(c, tensor_permute(c, a, perm, a->ndim, e), &size, &step, &one, 1, e);
	return tensor_permute(c, x, back, a->ndim + 1, e);
}

/* a padded on its last nk axes by before[i], after[i] with value v (NULL: 0) */
static UOp *
pad_last(UCtx *c, UOp *a, const int64_t *before, const int64_t *after, int nk, UOp *v, Err *e)
{
	int64_t b[T_MAXDIM] = { 0 }, f[T_MAXDIM] = { 0 };
	int i;

	if (!a)
		return NULL;
	for (i = 0; i < nk; i++) {
		b[a->ndim - nk + i] = before[i];
		f[a->ndim - nk + i] = after[i];
	}
	return tensor_pad_constant(c, a, b, f, a->ndim, v, e);
}

UOp *
tensor_conv2d(UCtx *c, UOp *x, UOp *w, UOp *bias, int64_t groups, const int64_t *stride, const int64_t *dilation,
              const int64_t *before, const int64_t *after, Err *e)
{
	int64_t sh[T_MAXDIM], perm[T_MAXDIM], axes[T_MAXDIM];
	int64_t bs, cin, cout, rcout;
	int nk, no, i, n;
	UOp *p, *r;

	if (!x || !w)
		return NULL;
	nk = w->ndim - 2;
	if (w->ndim < 3 || x->ndim != w->ndim)
		return err_set(e, "conv2d: input of rank %d and weight of rank %d: the weight is (cout, cin, *kernel), "
		               "the input (batch, groups*cin, *spatial), of one rank", x->ndim, w->ndim), NULL;
	bs = x->shape[0];
	cin = w->shape[1];
	cout = w->shape[0];
	if (groups < 1 || groups * cin != x->shape[1] || cout % groups != 0)
		return err_set(e, "conv2d: input channels %lld, weight (%lld, %lld, ...), groups %lld: the input needs "
		               "groups*cin = %lld channels and cout a multiple of groups", (long long)x->shape[1],
		               (long long)cout, (long long)cin, (long long)groups, (long long)(groups * cin)), NULL;
	if (1 + 2 * nk + 2 + nk > T_MAXDIM)
		return err_set(e, "conv2d: %d spatial axes is too many", nk), NULL;
	if (bias && (bias->ndim != 1 || bias->shape[0] != cout)) {
		char b[64];

		return err_set(e, "conv2d: the bias has shape %s; it must be (%lld), one value an output channel",
		               uop_shape_fmt(b, sizeof b, bias->shape, bias->ndim), (long long)cout), NULL;
	}
	rcout = cout / groups;
	p = tensor_pool(c, pad_last(c, x, before, after, nk, NULL, e), w->shape + 2, stride, dilation, nk, e);
	if (!p)
		return NULL;
	no = nk;   /* (bs, groups*cin, *oyx, *HW) */
	/* (bs, groups, cin, 1, *oyx, *HW), expanded to rcout, then (bs, groups, rcout, *oyx, cin, *HW) */
	sh[0] = bs, sh[1] = groups, sh[2] = cin, sh[3] = 1;
	for (i = 0; i < no + nk; i++)
		sh[4 + i] = p->shape[2 + i];
	p = tensor_reshape(c, p, sh, 4 + no + nk, e);
	sh[3] = rcout;
	p = tensor_expand(c, p, sh, 4 + no + nk, e);
	n = 0;
	perm[n++] = 0, perm[n++] = 1, perm[n++] = 3;
	for (i = 0; i < no; i++)
		perm[n++] = 4 + i;
	perm[n++] = 2;
	for (i = 0; i < nk; i++)
		perm[n++] = 4 + no + i;
	p = tensor_permute(c, p, perm, n, e);
	/* the weight as (1, groups, rcout, 1..., cin, *HW) */
	sh[0] = 1, sh[1] = groups, sh[2] = rcout;
	for (i = 0; i < no; i++)
		sh[3 + i] = 1;
	sh[3 + no] = cin;
	for (i = 0; i < nk; i++)
		sh[4 + no + i] = w->shape[2 + i];
	r = mul(c, p, tensor_reshape(c, w, sh, 4 + no + nk, e), e);
	for (i = 0; i < 1 + nk; i++)
		axes[i] = 3 + no + i;
	r = tensor_sum(c, r, axes, 1 + nk, 1, e);
	if (!r)
		return NULL;
	sh[0] = bs, sh[1] = cout;
	for (i = 0; i < no; i++)
		sh[2 + i] = r->shape[3 + i];
	r = tensor_reshape(c, r, sh, 2 + no, e);
	if (!bias)
		return r;
	sh[0] = 1, sh[1] = cout;
	for (i = 0; i < no; i++)
		sh[2 + i] = 1;
	return add(c, r, tensor_reshape(c, bias, sh, 2 + no, e), e);
}

/*
** ceil_mode's extra padding after each axis (tinygrad's _apply_ceil_mode,
** arXiv 1603.07285 Section 5.1, relationship 15): enough for a last window
** that starts inside the input or its leading padding.
*/
void
tensor_ceil_pads(const UOp *a, const int64_t *k, const int64_t *s, const int64_t *d, const int64_t *before,
          int64_t *after, int nk)
{
	int i;

	for (i = 0; i < nk; i++) {
		int64_t in = a->shape[a->ndim - nk + i], pb = before[i], pa = after[i], full = d[i] * (k[i] - 1) + 1;
		int64_t o = ceildiv(in + pb + pa - full, s[i]) + 1, last = s[i] * (o - 1) - (pb + in - 1);

		after[i] = pa + s[i] * (o - 1) + full - (in + pb + pa) - (last > 0 ? last : 0);
	}
}

static UOp *
pooled(UCtx *c, UOp *a, const int64_t *k, const int64_t *s, const int64_t *d, const int64_t *before,
       const int64_t *after, int nk, UOp *v, Err *e)
{
	return tensor_pool(c, pad_last(c, a, before, after, nk, v, e), k, s, d, nk, e);
}

static int
window_axes(const UOp *a, int nk, int64_t *axes, const char *what, Err *e)
{
	int i;

	if (!a)
		return -1;
	if (nk < 1 || nk > a->ndim)
		return err_set(e, "%s: a %d-axis window for a tensor of rank %d", what, nk, a->ndim);
	for (i = 0; i < nk; i++)
		axes[i] = a->ndim + i;   /* the pool's window axes: after the input's axes */
	return 0;
}

UOp *
tensor_avg_pool(UCtx *c, UOp *a, const int64_t *k, const int64_t *s, const int64_t *d, const int64_t *before,
                const int64_t *after, int nk, int ceil_mode, int count_include_pad, Err *e)
{
	int64_t axes[T_MAXDIM], pa[T_MAXDIM], zero[T_MAXDIM] = { 0 }, extra[T_MAXDIM];
	UOp *ones, *sum;
	int i;

	if (window_axes(a, nk, axes, "avg_pool2d", e) < 0)
		return NULL;
	memcpy(pa, after, sizeof(int64_t) * (size_t)nk);
	if (ceil_mode)
		tensor_ceil_pads(a, k, s, d, before, pa, nk);
	sum = tensor_sum(c, pooled(c, a, k, s, d, before, pa, nk, NULL, e), axes, nk, 0, e);
	if (!count_include_pad) {
		ones = tensor_full(c, (DType)a->dtype, 1, a->shape, a->ndim, e);
		return tensor_div(c, sum, tensor_sum(c, pooled(c, ones, k, s, d, before, pa, nk, NULL, e), axes, nk, 0, e),
		                  e);
	}
	if (!ceil_mode)
		return tensor_mean(c, pooled(c, a, k, s, d, before, pa, nk, NULL, e), axes, nk, 0, e);
	/* the regular padding counts, ceil_mode's extra does not */
	ones = tensor_full(c, (DType)a->dtype, 1, a->shape, a->ndim, e);
	ones = pad_last(c, ones, before, after, nk, NULL, e);
	if (!ones)
		return NULL;
	ones = tensor_full(c, (DType)a->dtype, 1, ones->shape, ones->ndim, e);
	for (i = 0; i < nk; i++)
		extra[i] = pa[i] - after[i];
	return tensor_div(c, sum, tensor_sum(c, pooled(c, ones, k, s, d, zero, extra, nk, NULL, e), axes, nk, 0, e), e);
}

/* the smallest value of dtype t: -inf for floats, the minimum integer, false */
static UOp *
lowest(UCtx *c, DType t)
{
	int bits = dtype_bytes(t) * 8;

	if (dtype_is_float(t))
		return uop_constf(c, t, -INFINITY);
	if (t == DT_BOOL || dtype_is_unsigned(t))
		return kd(c, t, 0);
	return kd(c, t, -ldexp(1.0, bits - 1));
}

UOp *
tensor_max_pool(UCtx *c, UOp *a, const int64_t *k, const int64_t *s, const int64_t *d, const int64_t *before,
                const int64_t *after, int nk, int ceil_mode, Err *e)
{
	int64_t axes[T_MAXDIM], pa[T_MAXDIM];

	if (window_axes(a, nk, axes, "max_pool2d", e) < 0)
		return NULL;
	memcpy(pa, after, sizeof(int64_t) * (size_t)nk);
	if (ceil_mode)
		tensor_ceil_pads(a, k, s, d, before, pa, nk);
	return tensor_reduce(c, OP_MAX, pooled(c, a, k, s, d, before, pa, nk, lowest(c, (DType)a->dtype), e), axes, nk,
	                     0, e);
}

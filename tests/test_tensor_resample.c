/* test_tensor_resample.c - tensor_resample.c (interpolate, conv_transpose2d, max_pool2d's indices, max_unpool2d, scatter_reduce): values by the reference evaluator against brute-force definitions in C loops, dtypes, and every bad input an Err. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensor_test.h"

static UOp *
from(const double *v, const int64_t *shape, int n, DType t)
{
	Err e = { "" };
	UOp *u = tensor_from(C, t, v, shape, n, &e);

	if (!u)
		fail_msg("tensor_from: %s", e.msg);
	return u;
}

/* Realize u (failing with e's message when it is NULL), check its dtype and compare with want[n] within tol. */
#define CHECK(u, e, dt, want, n, tol) check_values((u), &(e), (dt), (want), (n), (tol), __LINE__)

static void
check_values(const UOp *u, const Err *e, DType dt, const double *want, int64_t n, double tol, int line)
{
	TBuf b;
	Err re = { "" };
	int64_t i;

	if (!u)
		fail_msg("line %d: built nothing: %s (seed %u)", line, e->msg, seed);
	if (u->dtype != dt)
		fail_msg("line %d: dtype %s, want %s", line, dtype_name(u->dtype), dtype_name(dt));
	if (tensor_realize(u, NULL, &b, &re) < 0)
		fail_msg("line %d: realize: %s", line, re.msg);
	if (b.numel != n)
		fail_msg("line %d: %lld elements, want %lld (seed %u)", line, (long long)b.numel, (long long)n, seed);
	for (i = 0; i < n; i++) {
		double g = tbuf_get(&b, i), w = want[i];

		if (isnan(w) ? !isnan(g) : isinf(w) ? g != w : fabs(g - w) > tol * (1 + fabs(w))) {
			tbuf_free(&b);
			fail_msg("line %d: element %lld is %.9g, want %.9g (seed %u)", line, (long long)i, g, w, seed);
		}
	}
	tbuf_free(&b);
}

/* u is NULL and e names the operation and contains frag */
#define REFUSED(u, e, op, frag) refused((u), &(e), (op), (frag), __LINE__)

static void
refused(const UOp *u, const Err *e, const char *op, const char *frag, int line)
{
	if (u)
		fail_msg("line %d: expected %s to refuse (%s)", line, op, frag);
	if (strncmp(e->msg, op, strlen(op)) != 0 || !strstr(e->msg, frag))
		fail_msg("line %d: message \"%s\" lacks \"%s\" or \"%s\"", line, e->msg, op, frag);
}

static int64_t
rint_in(int64_t lo, int64_t hi)
{
	return lo + rand() % (hi - lo + 1);
}

/* random values: floats with two decimals (ties happen) or small integers */
static void
fill_rand(double *v, int64_t n, DType t, int lo, int hi)
{
	int64_t i;

	for (i = 0; i < n; i++)
		v[i] = t == DT_FLOAT32 ? (double)(float)(rint_in(lo * 4, hi * 4) / 4.0) : (double)rint_in(lo, hi);
}

static int64_t
numel(const int64_t *s, int n)
{
	int64_t p = 1;
	int i;

	for (i = 0; i < n; i++)
		p *= s[i];
	return p;
}

/* the coordinates of flat index f in shape s[n] (row-major) */
static void
unravel(int64_t f, const int64_t *s, int n, int64_t *co)
{
	int i;

	for (i = n - 1; i >= 0; i--) {
		co[i] = s[i] ? f % s[i] : 0;
		f = s[i] ? f / s[i] : 0;
	}
}

static int64_t
ravel(const int64_t *co, const int64_t *s, int n)
{
	int64_t f = 0;
	int i;

	for (i = 0; i < n; i++)
		f = f * s[i] + co[i];
	return f;
}

enum { MAXN = 1 << 14 };
static double xv[MAXN], wv[MAXN], iv[MAXN], sv[MAXN], want[MAXN], want2[MAXN];

/* ---- interpolate ---- */

/*
** The definition, per output element: along each resized axis, linear reads
** the source coordinate p (align_corners: o (in-1)/(out-1), else (o + 1/2)
** in/out - 1/2, clipped to [0, in-1]) and weighs floor(p) and ceil(p) by
** 1 - frac and frac, all axes at once (the product of the weights over the
** 2^n corners); nearest reads int(o scale), nearest-exact int((o + 1/2) scale),
** scale = in/out in float32 as tinygrad computes it.
*/
static void
interp_want(const double *x, const int64_t *xs, int nd, const int64_t *size, int n, int mode, int ac, DType t,
            double *out, int64_t *nout)
{
	int64_t os[T_MAXDIM], co[T_MAXDIM], src[T_MAXDIM], lo[T_MAXDIM], hi[T_MAXDIM], f, m;
	double fr[T_MAXDIM];
	int i;

	memcpy(os, xs, sizeof(int64_t) * (size_t)nd);
	memcpy(os + nd - n, size, sizeof(int64_t) * (size_t)n);
	*nout = numel(os, nd);
	for (f = 0; f < *nout; f++) {
		double acc = 0;

		unravel(f, os, nd, co);
		for (i = 0; i < nd; i++) {
			int64_t in = xs[i], o = co[i], out = os[i];

			lo[i] = hi[i] = o;
			fr[i] = 0;
			if (i < nd - n)
				continue;
			if (mode == 0) {
				double p = ac ? (out > 1 ? (double)o * (double)(in - 1) / (double)(out - 1) : 0)
				              : ((double)o + 0.5) * (double)in / (double)out - 0.5;

				p = p < 0 ? 0 : p > (double)(in - 1) ? (double)(in - 1) : p;
				lo[i] = (int64_t)floor(p);
				hi[i] = (int64_t)ceil(p);
				fr[i] = p - floor(p);
			} else {
				float sc = (float)((double)in / (double)out);

				lo[i] = hi[i] = (int64_t)(mode == 1 ? (float)o * sc : ((float)o + 0.5f) * sc);
			}
		}
		for (m = 0; m < ((int64_t)1 << nd); m++) {
			double w = 1;

			for (i = 0; i < nd; i++) {
				int up = (int)(m >> i & 1);

				src[i] = up ? hi[i] : lo[i];
				w *= up ? fr[i] : 1 - fr[i];
			}
			if (w != 0)
				acc += w * x[ravel(src, xs, nd)];
		}
		out[f] = t == DT_FLOAT32 ? acc : trunc(acc);
	}
}

static void
test_interpolate(void **state)
{
	static const char *const modes[] = { "linear", "nearest", "nearest-exact" };
	int trial;

	for (trial = 0; trial < 60; trial++) {
		int nd = (int)rint_in(1, 4), n = (int)rint_in(1, nd < 3 ? nd : 3), mode = trial % 3, ac = mode == 0 && rand() % 2;
		int64_t xs[T_MAXDIM], size[T_MAXDIM], nout;
		DType t = mode && rand() % 3 == 0 ? DT_INT32 : DT_FLOAT32;
		Err e = { "" };
		int i;

		for (i = 0; i < nd; i++)
			xs[i] = rint_in(1, i < nd - n ? 2 : 5);
		for (i = 0; i < n; i++)
			size[i] = rint_in(ac ? 2 : 1, 7);
		fill_rand(xv, numel(xs, nd), t, -9, 9);
		interp_want(xv, xs, nd, size, n, mode, ac, t, want, &nout);
		CHECK(tensor_interpolate(C, from(xv, xs, nd, t), size, n, modes[mode], ac, &e), e, t, want, nout, 2e-6);
	}
	{
		/* tinygrad's docstring: [[1, 2, 3, 4], [21, 22, 23, 24], [41, 42, 43, 44]] to (2, 3), and integers truncate */
		double v[12] = { 1, 2, 3, 4, 21, 22, 23, 24, 41, 42, 43, 44 };
		double w[6] = { 37 / 6.0, 7.5, 53 / 6.0, 217 / 6.0, 37.5, 233 / 6.0 }, wi[6] = { 6, 7, 8, 36, 37, 38 };
		int64_t s[2] = { 3, 4 }, to[2] = { 2, 3 }, one[1] = { 1 }, five[1] = { 5 };
		double nan1[4] = { NAN, NAN, NAN, NAN }, up[5] = { 1, 1.75, 2.5, 3.25, 4 };
		Err e = { "" };
		UOp *x = from(v, s, 2, DT_FLOAT32), *xi = from(v, s, 2, DT_INT32), *row;

		CHECK(tensor_interpolate(C, x, to, 2, NULL, 0, &e), e, DT_FLOAT32, w, 6, 1e-6);
		CHECK(tensor_interpolate(C, xi, to, 2, "linear", 0, &e), e, DT_INT32, wi, 6, 0);
		/* align_corners with one output: 0/0, as tinygrad */
		CHECK(tensor_interpolate(C, tensor_transpose(C, x, 0, 1, &e), one, 1, "linear", 1, &e), e, DT_FLOAT32, nan1,
		      4, 0);
		row = tensor_shrink(C, x, (int64_t[]){ 0, 0 }, (int64_t[]){ 1, 4 }, 2, &e);
		CHECK(tensor_interpolate(C, row, five, 1, "linear", 1, &e), e, DT_FLOAT32, up, 5, 1e-6);
		/* bad input */
		REFUSED(tensor_interpolate(C, x, to, 2, "bilinear", 0, &e), e, "interpolate",
		        "mode \"bilinear\" is not one of linear, nearest, nearest-exact");
		REFUSED(tensor_interpolate(C, x, to, 2, "nearest", 1, &e), e, "interpolate",
		        "align_corners is for mode linear only, not nearest");
		REFUSED(tensor_interpolate(C, x, (int64_t[]){ 2, 2, 2 }, 3, "linear", 0, &e), e, "interpolate",
		        "3 sizes for a tensor of shape (3, 4): give 1 to 2");
		REFUSED(tensor_interpolate(C, x, to, 0, "linear", 0, &e), e, "interpolate", "0 sizes");
		REFUSED(tensor_interpolate(C, x, (int64_t[]){ -1 }, 1, "linear", 0, &e), e, "interpolate",
		        "size -1 for axis 1");
		REFUSED(tensor_interpolate(C, x, (int64_t[]){ 0 }, 1, "nearest", 0, &e), e, "interpolate",
		        "size 0 for axis 1: sizes must be at least 1 in mode nearest");
	}
}

/* ---- conv_transpose2d ---- */

/*
** The definition: every input element scatters its weight taps,
**   out[b][g rc + j][i s + k d - before] += x[b][g ci + c][i] w[g ci + c][j][k]
** over the output (i - 1) s - before - after + d (k - 1) + 1 + output_padding
** per axis, plus the bias.
*/
static void
test_conv_transpose(void **state)
{
	int trial;

	for (trial = 0; trial < 40; trial++) {
		int nk = (int)rint_in(1, 3), i;
		int64_t G = rint_in(1, 2), CI = rint_in(1, 2), RC = rint_in(1, 2), B = rint_in(1, 2);
		int64_t xs[T_MAXDIM], ws[T_MAXDIM], os[T_MAXDIM], st[3], dl[3], pb[3], pa[3], op[3], ks[3], in[3], o[3];
		int64_t nx, nw, nout, f, g;
		DType t = trial % 4 == 3 ? DT_INT32 : DT_FLOAT32;
		double bias[8];
		Err e = { "" };
		UOp *x, *w;

		for (i = 0; i < nk; i++) {
			ks[i] = rint_in(1, 3);
			in[i] = rint_in(1, nk == 3 ? 3 : 4);
			st[i] = rint_in(1, 3);
			dl[i] = rint_in(1, 2);
			pb[i] = rint_in(0, (ks[i] - 1) * dl[i]);
			pa[i] = rint_in(0, (ks[i] - 1) * dl[i] - pb[i]);   /* an output of at least one */
			op[i] = rint_in(0, (st[i] > dl[i] ? st[i] : dl[i]) - 1);
			o[i] = (in[i] - 1) * st[i] - pb[i] - pa[i] + dl[i] * (ks[i] - 1) + 1 + op[i];
		}
		xs[0] = B, xs[1] = G * CI;
		ws[0] = G * CI, ws[1] = RC;
		os[0] = B, os[1] = G * RC;
		for (i = 0; i < nk; i++) {
			xs[2 + i] = in[i];
			ws[2 + i] = ks[i];
			os[2 + i] = o[i];
		}
		nx = numel(xs, 2 + nk);
		nw = numel(ws, 2 + nk);
		nout = numel(os, 2 + nk);
		fill_rand(xv, nx, t, -3, 3);
		fill_rand(wv, nw, t, -3, 3);
		fill_rand(bias, G * RC, t, -3, 3);
		for (f = 0; f < nout; f++)
			want[f] = bias[f / numel(os + 2, nk) % (G * RC)];
		for (f = 0; f < nx; f++) {
			int64_t cx[T_MAXDIM], cw[T_MAXDIM], co[T_MAXDIM], kk, j;

			unravel(f, xs, 2 + nk, cx);
			g = cx[1] / CI;
			for (j = 0; j < RC; j++)
				for (kk = 0; kk < numel(ks, nk); kk++) {
					int inside = 1;

					unravel(kk, ks, nk, cw + 2);
					cw[0] = cx[1], cw[1] = j;
					co[0] = cx[0], co[1] = g * RC + j;
					for (i = 0; i < nk; i++) {
						co[2 + i] = cx[2 + i] * st[i] + cw[2 + i] * dl[i] - pb[i];
						inside &= co[2 + i] >= 0 && co[2 + i] < o[i];
					}
					if (inside)
						want[ravel(co, os, 2 + nk)] += xv[f] * wv[ravel(cw, ws, 2 + nk)];
				}
		}
		x = from(xv, xs, 2 + nk, t);
		w = from(wv, ws, 2 + nk, t);
		CHECK(tensor_conv_transpose2d(C, x, w, from(bias, (int64_t[]){ G * RC }, 1, t), G, st, dl, pb, pa, op, &e),
		      e, t, want, nout, 1e-5);
	}
	{
		/* tinygrad's docstring: arange(9):reshape(1, 1, 3, 3) with ones(1, 1, 2, 2) */
		double v[9] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 }, ones[4] = { 1, 1, 1, 1 };
		double w16[16] = { 0, 1, 3, 2, 3, 8, 12, 7, 9, 20, 24, 13, 6, 13, 15, 8 };
		int64_t xs[4] = { 1, 1, 3, 3 }, ws[4] = { 1, 1, 2, 2 }, w2[4] = { 2, 1, 2, 2 }, w1[3] = { 1, 1, 2 };
		int64_t one[2] = { 1, 1 }, zero[2] = { 0, 0 }, big[2] = { 9, 9 };
		Err e = { "" };
		UOp *x = from(v, xs, 4, DT_FLOAT32), *w = from(ones, ws, 4, DT_FLOAT32);

		CHECK(tensor_conv_transpose2d(C, x, w, NULL, 1, one, one, zero, zero, zero, &e), e, DT_FLOAT32, w16, 16, 0);
		/* a 1-wide kernel ignores its dilation, larger than the axis or not (as tinygrad's _pool) */
		CHECK(tensor_conv_transpose2d(C, x, tensor_full(C, DT_FLOAT32, 2, (int64_t[]){ 1, 1, 1, 1 }, 4, &e), NULL, 1, one,
		                              (int64_t[]){ 5, 5 }, zero, zero, zero, &e), e, DT_FLOAT32,
		      ((double[]){ 0, 2, 4, 6, 8, 10, 12, 14, 16 }), 9, 0);
		REFUSED(tensor_conv_transpose2d(C, x, tensor_full(C, DT_FLOAT32, 1, w2, 4, &e), NULL, 1, one, one, zero, zero,
		                                zero, &e), e, "conv_transpose2d", "the input needs the weight's 2 channels");
		REFUSED(tensor_conv_transpose2d(C, x, tensor_full(C, DT_FLOAT32, 1, w1, 3, &e), NULL, 1, one, one, zero, zero,
		                                zero, &e), e, "conv_transpose2d", "of one rank");
		REFUSED(tensor_conv_transpose2d(C, x, w, from(ones, (int64_t[]){ 2 }, 1, DT_FLOAT32), 1, one, one, zero,
		                                zero, zero, &e), e, "conv_transpose2d", "it must be (1), one value an output");
		REFUSED(tensor_conv_transpose2d(C, x, w, NULL, 1, zero, one, zero, zero, zero, &e), e, "conv_transpose2d",
		        "stride 0, dilation 1: each must be at least 1");
		REFUSED(tensor_conv_transpose2d(C, x, w, NULL, 1, one, one, big, big, zero, &e), e, "conv_transpose2d",
		        "pad: axis 2");
	}
}

/* ---- max_pool2d's indices and max_unpool2d ---- */

static void
test_pool_indices(void **state)
{
	int trial;

	for (trial = 0; trial < 40; trial++) {
		int nk = (int)rint_in(1, 3), i, cm = trial % 3 == 0;
		int64_t xs[T_MAXDIM], ps[T_MAXDIM], ks[3], st[3], dl[3], pb[3], pa[3], ots[T_MAXDIM];
		int64_t nx, np, f, S = 1;
		DType t = trial % 2 ? DT_INT32 : DT_FLOAT32;
		Err e = { "" };
		UOp *x, *vals, *idx;

		xs[0] = rint_in(1, 2), xs[1] = rint_in(1, 2);
		ps[0] = xs[0], ps[1] = xs[1];
		for (i = 0; i < nk; i++) {
			ks[i] = rint_in(1, 3);
			dl[i] = rint_in(1, 2);
			st[i] = rint_in(1, 3);
			xs[2 + i] = dl[i] * (ks[i] - 1) + 1 + rint_in(0, nk == 3 ? 2 : 3);
			pb[i] = rint_in(0, ks[i] / 2);
			pa[i] = rint_in(0, ks[i] / 2);
			if (cm) {
				/* ceil_mode: a last partial window, unless it would start past the input and its leading padding */
				int64_t full = dl[i] * (ks[i] - 1) + 1, num = xs[2 + i] + pb[i] + pa[i] - full;
				int64_t o = (num + st[i] - 1) / st[i] + 1;

				if (st[i] * (o - 1) >= xs[2 + i] + pb[i])
					o--;
				ps[2 + i] = o;
			} else
				ps[2 + i] = (xs[2 + i] + pb[i] + pa[i] - dl[i] * (ks[i] - 1) - 1) / st[i] + 1;
			S *= xs[2 + i];
		}
		nx = numel(xs, 2 + nk);
		np = numel(ps, 2 + nk);
		fill_rand(xv, nx, t, -2, 2);   /* ties: the first maximum wins */
		for (f = 0; f < np; f++) {
			int64_t co[T_MAXDIM], kc[T_MAXDIM], sp[T_MAXDIM], kk, best = -1, bc = f / numel(ps + 2, nk);
			double mx = -INFINITY;

			unravel(f, ps, 2 + nk, co);
			for (kk = 0; kk < numel(ks, nk); kk++) {
				int inside = 1;
				int64_t pos;

				unravel(kk, ks, nk, kc);
				for (i = 0; i < nk; i++) {
					sp[i] = co[2 + i] * st[i] + kc[i] * dl[i] - pb[i];
					inside &= sp[i] >= 0 && sp[i] < xs[2 + i];
				}
				if (!inside)
					continue;
				pos = ravel(sp, xs + 2, nk);
				if (xv[bc * S + pos] > mx || (xv[bc * S + pos] == mx && pos < best)) {
					mx = xv[bc * S + pos];
					best = pos;
				}
			}
			want[f] = mx;
			want2[f] = (double)best;
		}
		x = from(xv, xs, 2 + nk, t);
		idx = tensor_max_pool_indices(C, x, ks, st, dl, pb, pa, nk, cm, &vals, &e);
		CHECK(idx, e, DT_INT32, want2, np, 0);
		CHECK(vals, e, t, want, np, 0);
		CHECK(tensor_max_pool(C, x, ks, st, dl, pb, pa, nk, cm, &e), e, t, want, np, 0);
		/* the unpool puts each maximum back at its position, within output_size = x's shape */
		for (f = 0; f < nx; f++)
			want[f] = 0;
		for (f = 0; f < np; f++)
			want[f / numel(ps + 2, nk) * S + (int64_t)want2[f]] += xv[f / numel(ps + 2, nk) * S + (int64_t)want2[f]];
		CHECK(tensor_max_unpool(C, vals, idx, ks, st, dl, pb, pa, xs, 2 + nk, &e), e, t, want, nx, 0);
		/* without output_size: the inverse of the pool's size (without ceil_mode's extra) */
		if (!cm) {
			int64_t on, P = 1;

			for (i = 0; i < nk; i++) {
				ots[i] = (ps[2 + i] - 1) * st[i] - pb[i] - pa[i] + dl[i] * (ks[i] - 1) + 1;
				P *= ots[i];
			}
			on = xs[0] * xs[1] * P;
			for (f = 0; f < on; f++)
				want[f] = 0;
			for (f = 0; f < np; f++) {
				/* the flat position is read in the output's shape; past its end it is dropped */
				int64_t pos = (int64_t)want2[f], bc = f / numel(ps + 2, nk);

				if (pos < P)
					want[bc * P + pos] += xv[bc * S + pos];
			}
			CHECK(tensor_max_unpool(C, vals, idx, ks, st, dl, pb, pa, NULL, 0, &e), e, t, want, on, 0);
		}
	}
	{
		/* random indices: out of range ones dropped, repeated ones added */
		double v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, id[8] = { 0, 3, 3, -1, 8, 2, 0, 7 };
		double w[18] = { 1, 0, 0, 2 + 3, 0, 0, 0, 0, 0, 7, 0, 6, 0, 0, 0, 0, 8, 5 };
		int64_t s[4] = { 1, 2, 2, 2 }, k[2] = { 2, 2 }, os[2] = { 3, 3 }, z[2] = { 0, 0 };
		Err e = { "" };

		CHECK(tensor_max_unpool(C, from(v, s, 4, DT_FLOAT32), from(id, s, 4, DT_INT32), k, k, (int64_t[]){ 1, 1 }, z,
		                        z, os, 2, &e), e, DT_FLOAT32, w, 18, 0);
	}
	{
		/* tinygrad's docstring: arange(1, 17):reshape(1, 1, 4, 4) */
		double v[16], i4[4] = { 5, 7, 13, 15 }, m4[4] = { 6, 8, 14, 16 }, un[16] = { 0 };
		int64_t s[4] = { 1, 1, 4, 4 }, k[2] = { 2, 2 }, one[2] = { 1, 1 }, z[2] = { 0, 0 }, j;
		Err e = { "" };
		UOp *vals, *idx;

		for (j = 0; j < 16; j++)
			v[j] = (double)(j + 1);
		un[5] = 6, un[7] = 8, un[13] = 14, un[15] = 16;
		idx = tensor_max_pool_indices(C, from(v, s, 4, DT_INT32), k, k, one, z, z, 2, 0, &vals, &e);
		CHECK(idx, e, DT_INT32, i4, 4, 0);
		CHECK(vals, e, DT_INT32, m4, 4, 0);
		CHECK(tensor_max_unpool(C, vals, idx, k, k, one, z, z, NULL, 0, &e), e, DT_INT32, un, 16, 0);
		REFUSED(tensor_max_unpool(C, vals, tensor_cast(C, DT_FLOAT32, idx, &e), k, k, one, z, z, NULL, 0, &e), e,
		        "max_unpool2d", "the indices are float32, not an integer tensor");
		REFUSED(tensor_max_unpool(C, vals, from(v, s, 4, DT_INT32), k, k, one, z, z, NULL, 0, &e), e, "max_unpool2d",
		        "the indices have shape (1, 1, 4, 4) and the input (1, 1, 2, 2)");
		REFUSED(tensor_max_unpool(C, tensor_reshape(C, vals, (int64_t[]){ 4 }, 1, &e),
		                          tensor_reshape(C, idx, (int64_t[]){ 4 }, 1, &e), k, k, one, z, z, NULL, 0, &e), e,
		        "max_unpool2d", "it is (batch, channels, *spatial)");
		REFUSED(tensor_max_unpool(C, vals, idx, k, k, one, z, z, (int64_t[]){ 4 }, 1, &e), e, "max_unpool2d",
		        "output_size has 1 values for 2 spatial axes");
		REFUSED(tensor_max_unpool(C, vals, idx, k, k, one, (int64_t[]){ 5, 5 }, (int64_t[]){ 5, 5 }, NULL, 0, &e), e,
		        "max_unpool2d", "output size -6 for axis 2 is out of range");
		REFUSED(tensor_max_pool_indices(C, from(v, s, 4, DT_INT32), k, z, one, z, z, 2, 0, &vals, &e), e,
		        "max_pool2d", "stride 0");
		REFUSED(tensor_max_pool_indices(C, from(v, s, 4, DT_INT32), (int64_t[]){ 9, 1 }, k, one, z, z, 2, 0, NULL,
		                                &e), e, "max_pool2d", "pool: axis 2: a window of 9");
	}
}

/* ---- scatter_reduce ---- */

/*
** The definition: each src[p] (p over index's shape) lands at p with axis dim
** replaced by index[p] (inside the axis); each element of the result reduces
** what landed there, with its own value when include_self (or when nothing
** landed): sum, prod, mean (float), amax, amin.
*/
static void
scatter_want(const double *a, const int64_t *as, int nd, int dim, const double *idx, const int64_t *is,
             const double *src, const int64_t *ss, int red, int inc, DType t, double *out)
{
	int64_t na = numel(as, nd), ni = numel(is, nd), f, p, co[T_MAXDIM];
	static double acc[MAXN], cnt[MAXN];

	for (f = 0; f < na; f++) {
		cnt[f] = 0;
		acc[f] = red == 1 ? 1 : red == 3 ? -INFINITY : red == 4 ? INFINITY : 0;
	}
	for (p = 0; p < ni; p++) {
		int64_t j = (int64_t)idx[p];
		double v;

		unravel(p, is, nd, co);
		v = src[ravel(co, ss, nd)];
		if (j < 0 || j >= as[dim])
			continue;
		co[dim] = j;
		f = ravel(co, as, nd);
		cnt[f]++;
		switch (red) {
		case 0: case 2: acc[f] += v; break;
		case 1: acc[f] *= v; break;
		case 3: acc[f] = fmax(acc[f], v); break;
		default: acc[f] = fmin(acc[f], v); break;
		}
	}
	for (f = 0; f < na; f++) {
		int self = inc || cnt[f] == 0;

		switch (red) {
		case 0: out[f] = acc[f] + (self ? a[f] : 0); break;
		case 1: out[f] = acc[f] * (self ? a[f] : 1); break;
		case 2: out[f] = (acc[f] + (self ? a[f] : 0)) / (cnt[f] + self); break;
		case 3: out[f] = self ? fmax(acc[f], a[f]) : acc[f]; break;
		default: out[f] = self ? fmin(acc[f], a[f]) : acc[f]; break;
		}
		if (red == 2 && t == DT_FLOAT32)
			out[f] = (double)(float)out[f];
	}
}

static void
test_scatter_reduce(void **state)
{
	static const char *const reds[] = { "sum", "prod", "mean", "amax", "amin" };
	int trial;

	for (trial = 0; trial < 100; trial++) {
		int nd = (int)rint_in(1, 3), dim = (int)rint_in(0, nd - 1), red = trial % 5, inc = trial / 5 % 2, k;
		int64_t as[T_MAXDIM], is[T_MAXDIM], ss[T_MAXDIM], ni;
		DType t = trial / 10 % 2 ? DT_INT32 : DT_FLOAT32;
		Err e = { "" };
		UOp *r;

		for (k = 0; k < nd; k++) {
			as[k] = rint_in(1, 4);
			is[k] = k == dim ? rint_in(trial % 7 == 0 ? 0 : 1, 5) : rint_in(1, as[k]);
			ss[k] = is[k] + rint_in(0, 1);
		}
		ni = numel(is, nd);
		fill_rand(xv, numel(as, nd), t, red == 1 ? -2 : -9, red == 1 ? 2 : 9);
		fill_rand(sv, numel(ss, nd), t, red == 1 ? -2 : -9, red == 1 ? 2 : 9);
		for (k = 0; k < ni; k++)
			iv[k] = (double)rint_in(rand() % 5 ? 0 : -1, rand() % 5 ? as[dim] - 1 : as[dim]);
		scatter_want(xv, as, nd, dim, iv, is, sv, ss, red, inc, t, want);
		r = tensor_scatter_reduce(C, from(xv, as, nd, t), dim - (rand() % 2 ? nd : 0), from(iv, is, nd, DT_INT32),
		                          from(sv, ss, nd, t), reds[red], inc, &e);
		CHECK(r, e, red == 2 ? DT_FLOAT32 : t, want, numel(as, nd), red == 2 ? 1e-6 : 0);
	}
	{
		/* tinygrad's docstring: src = arange(1, 11):reshape(2, 5), every index 0, into ones(1, 5) or [[-10, 20, 0, 5, 10]] */
		double src[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, zero[10] = { 0 }, ones[5] = { 1, 1, 1, 1, 1 };
		double base[5] = { -10, 20, 0, 5, 10 };
		double wsum[5] = { 8, 10, 12, 14, 16 }, wprod[5] = { 6, 14, 24, 36, 50 }, wmean[5] = { 3.5, 4.5, 5.5, 6.5, 7.5 };
		double wmax[5] = { 6, 20, 8, 9, 10 }, wmin[5] = { -10, 2, 0, 4, 5 }, wmean_i[5] = { 8 / 3.0, 10 / 3.0, 4, 14 / 3.0, 16 / 3.0 };
		double wempty[6] = { -5, 7, 0, 1, -2, 3 };
		int64_t s2[2] = { 2, 5 }, s1[2] = { 1, 5 }, s0[2] = { 0, 3 }, s3[2] = { 2, 3 }, s4[2] = { 2, 4 };
		Err e = { "" };
		UOp *sf = from(src, s2, 2, DT_FLOAT32), *ix = from(zero, s2, 2, DT_INT32), *one = from(ones, s1, 2, DT_FLOAT32);
		UOp *b = from(base, s1, 2, DT_FLOAT32), *r;
		const char *bad = "max";
		int i;

		CHECK(tensor_scatter_reduce(C, one, 0, ix, sf, "sum", 1, &e), e, DT_FLOAT32, wsum, 5, 0);
		CHECK(tensor_scatter_reduce(C, one, 0, ix, sf, "prod", 1, &e), e, DT_FLOAT32, wprod, 5, 0);
		CHECK(tensor_scatter_reduce(C, one, 0, ix, sf, "mean", 0, &e), e, DT_FLOAT32, wmean, 5, 0);
		CHECK(tensor_scatter_reduce(C, b, 0, ix, sf, "amax", 1, &e), e, DT_FLOAT32, wmax, 5, 0);
		CHECK(tensor_scatter_reduce(C, b, 0, ix, sf, "amin", 1, &e), e, DT_FLOAT32, wmin, 5, 0);
		/* integers: the mean is float32, the sum of int8 int32 */
		CHECK(tensor_scatter_reduce(C, from(ones, s1, 2, DT_INT32), 0, ix, from(src, s2, 2, DT_INT32), "mean", 1, &e),
		      e, DT_FLOAT32, wmean_i, 5, 1e-6);
		CHECK(tensor_scatter_reduce(C, from(ones, s1, 2, DT_INT8), 0, ix, from(src, s2, 2, DT_INT8), "sum", 1, &e), e,
		      DT_INT32, wsum, 5, 0);
		/* nothing lands (an empty index): x itself in every mode, integers too (the identities are the dtype's) */
		for (i = 0; i < 5; i++) {
			r = tensor_scatter_reduce(C, from(wempty, s3, 2, DT_INT32), 0, from(zero, s0, 2, DT_INT32),
			                          from(zero, s0, 2, DT_INT32), reds[i], i % 2, &e);
			CHECK(r, e, i == 2 ? DT_FLOAT32 : DT_INT32, wempty, 6, 0);
		}
		/* bad input */
		REFUSED(tensor_scatter_reduce(C, one, 0, ix, sf, bad, 1, &e), e, "scatter_reduce",
		        "reduce \"max\" is not one of sum, prod, mean, amax, amin");
		REFUSED(tensor_scatter_reduce(C, one, 0, ix, from(src, s2, 2, DT_INT32), "sum", 1, &e), e, "scatter_reduce",
		        "the tensor is float32 and src int32 (they must be equal)");
		REFUSED(tensor_scatter_reduce(C, one, 0, tensor_cast(C, DT_FLOAT32, ix, &e), sf, "sum", 1, &e), e,
		        "scatter_reduce", "the index is float32, not an integer tensor");
		REFUSED(tensor_scatter_reduce(C, one, 2, ix, sf, "sum", 1, &e), e, "scatter_reduce",
		        "axis 2 is out of range for rank 2");
		REFUSED(tensor_scatter_reduce(C, tensor_shrink(C, one, (int64_t[]){ 0, 0 }, (int64_t[]){ 1, 3 }, 2, &e), 0, ix,
		                              sf, "sum", 1, &e), e, "scatter_reduce",
		        "the index (2, 5) does not fit at axis 1: src is (2, 5) and the tensor (1, 3)");
		REFUSED(tensor_scatter_reduce(C, one, 0, ix, from(src, s4, 2, DT_FLOAT32), "sum", 1, &e), e, "scatter_reduce",
		        "the index (2, 5) does not fit at axis 1: src is (2, 4)");
		REFUSED(tensor_scatter_reduce(C, one, 0, tensor_reshape(C, ix, (int64_t[]){ 10 }, 1, &e), sf, "sum", 1, &e),
		        e, "scatter_reduce", "ranks 2, 1 and 2");
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_interpolate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conv_transpose, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_indices, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scatter_reduce, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

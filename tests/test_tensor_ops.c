/* test_tensor_ops.c - tinygrad's Tensor methods of tensor_math.c, tensor_shape.c and tensor_nn.c: values by the reference evaluator against definitions, dtypes, and every bad input an Err. */
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
vec(const double *v, int64_t n, DType t)
{
	Err e = { "" };
	UOp *u = tensor_from(C, t, v, &n, 1, &e);

	if (!u)
		fail_msg("tensor_from: %s", e.msg);
	return u;
}

static UOp *
mat(const double *v, int64_t r, int64_t c, DType t)
{
	int64_t s[2] = { r, c };
	Err e = { "" };
	UOp *u = tensor_from(C, t, v, s, 2, &e);

	if (!u)
		fail_msg("tensor_from: %s", e.msg);
	return u;
}

/* Realize u (failing with e's message when it is NULL) and compare with want[n] within tol. */
#define CHECK(u, e, want, n, tol) check_values((u), &(e), (want), (n), (tol), __LINE__)

static void
check_values(const UOp *u, const Err *e, const double *want, int64_t n, double tol, int line)
{
	TBuf b;
	Err re = { "" };
	int64_t i;

	if (!u)
		fail_msg("line %d: built nothing: %s", line, e->msg);
	if (tensor_realize(u, NULL, &b, &re) < 0)
		fail_msg("line %d: realize: %s", line, re.msg);
	if (b.numel != n)
		fail_msg("line %d: %lld elements, want %lld", line, (long long)b.numel, (long long)n);
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
	if (!strstr(e->msg, op) || !strstr(e->msg, frag))
		fail_msg("line %d: message \"%s\" lacks \"%s\" or \"%s\"", line, e->msg, op, frag);
}

static double
rnd(double lo, double hi)
{
	return lo + (hi - lo) * rand() / (double)RAND_MAX;
}

/* the elementwise functions against libm on random float32 inputs */
static void
test_math_values(void **state)
{
	enum { N = 64 };
	double v[N], w[N];
	Err e = { "" };
	UOp *x;
	int i;

	for (i = 0; i < N; i++)
		v[i] = (float)rnd(-0.95, 0.95);
	x = vec(v, N, DT_FLOAT32);
#define FN(build, expr, tol) \
	for (i = 0; i < N; i++) { double a = v[i]; w[i] = (expr); } \
	CHECK(build, e, w, N, tol)
	FN(tensor_abs(C, x, &e), fabs(a), 0);
	FN(tensor_sign(C, x, &e), a > 0 ? 1 : a < 0 ? -1 : 0, 0);
	FN(tensor_square(C, x, &e), (float)(a * a), 1e-7);
	FN(tensor_floor(C, x, &e), floor(a), 0);
	FN(tensor_ceil(C, x, &e), ceil(a), 0);
	FN(tensor_round(C, tensor_alu(C, OP_MUL, x, uop_constf(C, DT_FLOAT32, 4), &e), &e), nearbyint(a * 4), 0);
	FN(tensor_tan(C, x, &e), tan(a), 1e-5);
	FN(tensor_sinh(C, x, &e), sinh(a), 1e-6);
	FN(tensor_cosh(C, x, &e), cosh(a), 1e-6);
	FN(tensor_asinh(C, x, &e), asinh(a), 1e-6);
	FN(tensor_atanh(C, x, &e), atanh(a), 1e-5);
	FN(tensor_asin(C, x, &e), asin(a), 1e-6);
	FN(tensor_acos(C, x, &e), acos(a), 1e-6);
	FN(tensor_atan(C, x, &e), atan(a), 1e-6);
	FN(tensor_erf(C, x, &e), erf(a), 1e-6);   /* A&S 1.5e-7, plus float32 cancellation near 0 */
	FN(tensor_log10(C, tensor_abs(C, x, &e), &e), log10(fabs(a)), 1e-6);
	FN(tensor_rsqrt(C, tensor_abs(C, x, &e), &e), 1 / sqrt(fabs(a)), 1e-6);
	FN(tensor_relu6(C, tensor_alu(C, OP_MUL, x, uop_constf(C, DT_FLOAT32, 8), &e), &e), fmin(fmax((float)(a * 8), 0), 6), 1e-7);
	FN(tensor_leaky_relu(C, x, 0.1, &e), a < 0 ? 0.1 * a : a, 1e-7);
	FN(tensor_elu(C, x, 1, &e), a > 0 ? a : expm1(a), 1e-6);
	FN(tensor_selu(C, x, 1.67326, 1.0507, &e), 1.0507 * (a >= 0 ? a : 1.67326 * expm1(a)), 1e-6);
	FN(tensor_softplus(C, x, 1, &e), log1p(exp(a)), 1e-6);
	FN(tensor_logsigmoid(C, x, &e), -log1p(exp(-a)), 1e-6);
	FN(tensor_silu(C, x, &e), a / (1 + exp(-a)), 1e-6);
	FN(tensor_mish(C, x, &e), a * tanh(log1p(exp(a))), 1e-6);
	FN(tensor_softsign(C, x, &e), a / (1 + fabs(a)), 1e-7);
	FN(tensor_gelu(C, x, 1, &e), 0.5 * a * (1 + erf(a / sqrt(2))), 1e-6);
	FN(tensor_gelu(C, x, 0, &e), 0.5 * a * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (a + 0.044715 * a * a * a))), 1e-6);
	FN(tensor_hardswish(C, x, &e), a * fmin(fmax(a + 3, 0), 6) / 6, 1e-7);
	FN(tensor_hardsigmoid(C, x, 1.0 / 6, 0.5, &e), fmin(fmax(a / 6 + 0.5, 0), 1), 1e-7);
	FN(tensor_hardtanh(C, x, -0.5, 0.5, &e), fmin(fmax(a, -0.5), 0.5), 0);
	FN(tensor_celu(C, x, 2, &e), fmax(a, 0) + fmin(2 * expm1(a / 2), 0), 1e-6);
	FN(tensor_quick_gelu(C, x, &e), a / (1 + exp(-1.702 * a)), 1e-6);
#undef FN
}

/* special values, integer dtypes, and the binary functions */
static void
test_math_special(void **state)
{
	static const double s[] = { -2.5, -0.5, 0.5, 1.5, 2.5, INFINITY, -INFINITY, NAN };
	static const double rnd_w[] = { -2, -0, 0, 2, 2, INFINITY, -INFINITY, NAN };
	static const double nan_w[] = { 0, 0, 0, 0, 0, 0, 0, 1 }, inf_w[] = { 0, 0, 0, 0, 0, 1, 1, 0 };
	static const double fin_w[] = { 1, 1, 1, 1, 1, 0, 0, 0 };
	static const double iv[] = { -7, 7, -7, 7 }, id[] = { 2, -2, -2, 2 };
	Err e = { "" };
	UOp *x = vec(s, 8, DT_FLOAT32), *a, *b, *r;

	CHECK(tensor_round(C, x, &e), e, rnd_w, 8, 0);
	CHECK(tensor_isnan(C, x, &e), e, nan_w, 8, 0);
	CHECK(tensor_isinf(C, x, 1, 1, &e), e, inf_w, 8, 0);
	CHECK(tensor_isfinite(C, x, &e), e, fin_w, 8, 0);
	assert_int_equal(tensor_isnan(C, x, &e)->dtype, DT_BOOL);
	/* integers keep their dtype where tinygrad's do, and become float32 in functions of reals */
	a = vec(iv, 4, DT_INT8);
	assert_int_equal(tensor_abs(C, a, &e)->dtype, DT_INT8);
	assert_int_equal(tensor_floor(C, a, &e)->dtype, DT_INT8);
	assert_int_equal(tensor_erf(C, a, &e)->dtype, DT_FLOAT32);
	assert_int_equal(tensor_round(C, a, &e)->dtype, DT_FLOAT32);
	assert_int_equal(tensor_gelu(C, vec(s, 8, DT_FLOAT16), 0, &e)->dtype, DT_FLOAT16);
	/* fmod and div's rounding modes on integers */
	b = vec(id, 4, DT_INT8);
	{
		static const double fm[] = { -1, 1, -1, 1 }, tr[] = { -3, -3, 3, 3 }, fl[] = { -4, -4, 3, 3 };

		CHECK(tensor_fmod(C, a, b, &e), e, fm, 4, 0);
		CHECK(tensor_div_mode(C, a, b, 1, &e), e, tr, 4, 0);
		CHECK(tensor_div_mode(C, a, b, 2, &e), e, fl, 4, 0);
	}
	{
		static const double cs[] = { 7, -7, -7, 7 };

		CHECK(tensor_copysign(C, a, b, &e), e, cs, 4, 0);
	}
	r = tensor_clamp(C, a, uop_constf(C, DT_INT8, -3), uop_constf(C, DT_INT8, 5), &e);
	{
		static const double cl[] = { -3, 5, -3, 5 };

		CHECK(r, e, cl, 4, 0);
		assert_int_equal(r->dtype, DT_INT8);
	}
	REFUSED(tensor_clamp(C, a, NULL, NULL, &e), e, "clamp", "at least one");
	REFUSED(tensor_bitwise_not(C, x, &e), e, "bitwise_not", "float32");
	REFUSED(tensor_masked_fill(C, x, x, x, &e), e, "masked_fill", "not bool");
	REFUSED(tensor_div_mode(C, a, b, 3, &e), e, "div", "rounding mode");
	REFUSED(tensor_lerp(C, x, a, vec(s, 3, DT_FLOAT32), &e), e, "lerp: sub", "do not broadcast");
	{
		static const double l1[] = { 0, 1 }, l2[] = { 1, 0 }, lw[] = { 1.3132616875182228, 1.3132616875182228 };

		CHECK(tensor_logaddexp(C, vec(l1, 2, DT_FLOAT64), vec(l2, 2, DT_FLOAT64), &e), e, lw, 2, 1e-12);
	}
}

/* shapes: squeeze ... one_hot, and their errors */
static void
test_shape(void **state)
{
	static const double m6[] = { 1, 2, 3, 4, 5, 6 }, m9[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	int64_t s4[4] = { 2, 1, 3, 1 }, d, sz[3];
	Err e = { "" };
	UOp *m = mat(m6, 2, 3, DT_INT32), *q = mat(m9, 3, 3, DT_INT32), *r, *ts[3], *out[8];

	r = tensor_reshape(C, m, s4, 4, &e);
	assert_int_equal(tensor_squeeze(C, r, NULL, &e)->ndim, 2);
	d = 1;
	assert_int_equal(tensor_squeeze(C, r, &d, &e)->ndim, 3);
	assert_int_equal(tensor_unsqueeze(C, m, -1, &e)->shape[2], 1);
	assert_int_equal(tensor_flatten(C, r, 1, 2, &e)->shape[1], 3);
	REFUSED(tensor_squeeze(C, r, (int64_t[]){ 4 }, &e), e, "squeeze", "dim 4 is out of range");
	REFUSED(tensor_unsqueeze(C, m, 3, &e), e, "unsqueeze", "dim 3");
	REFUSED(tensor_flatten(C, r, 3, 1, &e), e, "flatten", "after end_dim");
	REFUSED(tensor_unflatten(C, m, 1, (int64_t[]){ 2, 2 }, 2, &e), e, "unflatten", "do not split");
	{
		static const double t[] = { 1, 4, 2, 5, 3, 6 };

		CHECK(tensor_transpose(C, m, 0, 1, &e), e, t, 6, 0);
	}
	/* cat: promotion, shapes, -0.0 kept */
	ts[0] = m;
	ts[1] = mat(m6, 1, 3, DT_FLOAT32);
	r = tensor_cat(C, ts, 2, 0, &e);
	{
		static const double c[] = { 1, 2, 3, 4, 5, 6, 1, 2, 3 };

		CHECK(r, e, c, 9, 0);
		assert_int_equal(r->dtype, DT_FLOAT32);
	}
	ts[1] = mat(m6, 3, 2, DT_INT32);
	REFUSED(tensor_cat(C, ts, 2, 0, &e), e, "cat", "tensor 1 has shape (3, 2)");
	REFUSED(tensor_cat(C, ts, 2, 2, &e), e, "cat", "axis 2 is out of range");
	REFUSED(tensor_cat(C, (UOp *[]){ uop_constf(C, DT_INT32, 1) }, 1, 0, &e), e, "cat", "shape ()");
	{
		static const double nz[] = { -0.0 }, one[] = { 1 };
		TBuf b;
		Err re;

		ts[0] = vec(nz, 1, DT_FLOAT32);
		ts[1] = vec(one, 1, DT_FLOAT32);
		assert_int_equal(tensor_realize(tensor_cat(C, ts, 2, 0, &e), NULL, &b, &re), 0);
		assert_true(signbit(tbuf_get(&b, 0)));
		tbuf_free(&b);
	}
	/* split and chunk */
	assert_int_equal(tensor_split_sizes(5, 2, sz, 3, &e), 3);
	assert_int_equal(sz[2], 1);
	assert_int_equal(tensor_chunk_sizes(4, 3, sz, 3, &e), 2);
	assert_int_equal(tensor_split(C, m, (int64_t[]){ 1, 2 }, 2, 1, out, &e), 2);
	{
		static const double p[] = { 2, 3, 5, 6 };

		CHECK(out[1], e, p, 4, 0);
	}
	assert_int_equal(tensor_split(C, m, (int64_t[]){ 1, 1 }, 2, 1, out, &e), -1);
	REFUSED(NULL, e, "split", "the sizes sum to 2");
	assert_int_equal(tensor_split_sizes(5, 0, sz, 3, &e), -1);
	REFUSED(NULL, e, "split", "at least 1");
	assert_int_equal(tensor_split_sizes(50, 1, sz, 3, &e), -1);
	REFUSED(NULL, e, "split", "more than 3");
	/* tril, triu, eye, diagonal, roll, repeat */
	{
		static const double lo[] = { 1, 0, 0, 4, 5, 0, 7, 8, 9 }, up1[] = { 0, 2, 3, 0, 0, 6, 0, 0, 0 };
		static const double ey[] = { 1, 0, 0, 0, 1, 0 }, dg[] = { 2, 6 }, rl[] = { 3, 1, 2, 6, 4, 5 };
		static const double rp[] = { 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6 }, ri[] = { 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6 };

		CHECK(tensor_tril(C, q, 0, &e), e, lo, 9, 0);
		CHECK(tensor_triu(C, q, 1, &e), e, up1, 9, 0);
		CHECK(tensor_eye(C, 2, 3, DT_FLOAT32, &e), e, ey, 6, 0);
		CHECK(tensor_diagonal(C, q, 1, 0, 1, &e), e, dg, 2, 0);
		CHECK(tensor_roll(C, m, (int64_t[]){ 1 }, (int64_t[]){ 1 }, 1, &e), e, rl, 6, 0);
		CHECK(tensor_repeat(C, m, (int64_t[]){ 1, 2 }, 2, &e), e, rp, 12, 0);
		CHECK(tensor_repeat_interleave(C, m, 2, NULL, &e), e, ri, 12, 0);
	}
	REFUSED(tensor_tril(C, vec(m6, 3, DT_INT32), 0, &e), e, "tril", "at least 2 axes");
	REFUSED(tensor_eye(C, -1, 2, DT_FLOAT32, &e), e, "tensor.eye", "negative");
	REFUSED(tensor_diagonal(C, q, 0, 1, -1, &e), e, "diagonal", "both 1");
	REFUSED(tensor_repeat(C, m, (int64_t[]){ 2 }, 1, &e), e, "repeat", "one per axis");
	REFUSED(tensor_roll(C, m, (int64_t[]){ 1 }, (int64_t[]){ 2 }, 1, &e), e, "roll", "axis 2 is out of range");
	{
		static const double idx[] = { 0, 2 }, oh[] = { 1, 0, 0, 0, 0, 1 };

		r = tensor_one_hot(C, vec(idx, 2, DT_INT32), 3, &e);
		CHECK(r, e, oh, 6, 0);
		assert_int_equal(r->dtype, DT_INT32);
	}
	REFUSED(tensor_one_hot(C, vec(m6, 2, DT_FLOAT32), 3, &e), e, "one_hot", "integer tensor");
	REFUSED(tensor_stack_dim(C, (UOp *[]){ m, q }, 2, 0, &e), e, "stack", "must be equal");
}

/* reductions, scans, sort against loops */
static void
test_reduce_sort(void **state)
{
	enum { N = 24 };
	double v[N], w[N], mean = 0, ss = 0, lse = 0;
	int64_t ax = 0;
	Err e = { "" };
	UOp *x, *vals, *idx;
	int i, j;

	for (i = 0; i < N; i++)
		v[i] = (float)rnd(-3, 3);
	x = vec(v, N, DT_FLOAT32);
	for (i = 0; i < N; i++)
		mean += v[i] / N;
	for (i = 0; i < N; i++) {
		ss += (v[i] - mean) * (v[i] - mean);
		lse += exp(v[i]);
	}
	w[0] = ss / (N - 1);
	CHECK(tensor_var(C, x, NULL, -1, 0, 1, &e), e, w, 1, 1e-6);
	w[0] = sqrt(ss / N);
	CHECK(tensor_std(C, x, NULL, -1, 0, 0, &e), e, w, 1, 1e-6);
	w[0] = log(lse);
	CHECK(tensor_logsumexp(C, x, NULL, -1, 0, &e), e, w, 1, 1e-6);
	for (i = j = 0; i < N; i++)
		if (v[i] > v[j])
			j = i;
	w[0] = j;
	CHECK(tensor_argmax(C, x, NULL, 0, &e), e, w, 1, 0);
	assert_int_equal(tensor_argmax(C, x, NULL, 0, &e)->dtype, DT_INT32);
	REFUSED(tensor_argmax(C, x, (int64_t[]){ 1 }, 0, &e), e, "argmax", "axis 1 is out of range");
	/* cumprod, cummax against loops */
	w[0] = v[0];
	for (i = 1; i < N; i++)
		w[i] = fmax(w[i - 1], v[i]);
	CHECK(tensor_cummax(C, x, 0, &idx, &e), e, w, N, 0);
	for (i = 0; i < N; i++) {
		for (j = 0; v[j] != w[i]; j++)
			;
		w[i] = j;
	}
	CHECK(idx, e, w, N, 0);
	{
		static const double p[] = { 1, 2, -3, 0.5 }, pw[] = { 1, 2, -6, -3 };

		CHECK(tensor_cumprod(C, vec(p, 4, DT_FLOAT32), 0, &e), e, pw, 4, 0);
	}
	/* sort: values ascending, indices a permutation that gives them */
	assert_int_equal(tensor_sort(C, x, 0, 0, &vals, &idx, &e), 0);
	{
		TBuf bv, bi;
		Err re;

		assert_int_equal(tensor_realize(vals, NULL, &bv, &re), 0);
		assert_int_equal(tensor_realize(idx, NULL, &bi, &re), 0);
		assert_int_equal(bi.dtype, DT_INT32);
		for (i = 0; i < N; i++) {
			if (i && tbuf_get(&bv, i) < tbuf_get(&bv, i - 1))
				fail_msg("sort: element %d is below element %d (seed %u)", i, i - 1, seed);
			if (v[(int)tbuf_get(&bi, i)] != tbuf_get(&bv, i))
				fail_msg("sort: index %d does not give the value (seed %u)", i, seed);
		}
		tbuf_free(&bv);
		tbuf_free(&bi);
	}
	assert_int_equal(tensor_topk(C, x, N + 1, 0, 1, &vals, &idx, &e), -1);
	REFUSED(NULL, e, "topk", "out of range");
	assert_int_equal(tensor_sort(C, x, 1, 0, &vals, &idx, &e), -1);
	REFUSED(NULL, e, "sort", "axis 1 is out of range");
	{
		static const double b[] = { 0, 1, 0, 0 }, an[] = { 0, 1 }, al[] = { 0, 0 };
		UOp *bm = mat(b, 2, 2, DT_BOOL);

		CHECK(tensor_any(C, bm, &ax, 1, 0, &e), e, an, 2, 0);
		CHECK(tensor_all(C, bm, &ax, 1, 0, &e), e, al, 2, 0);
	}
}

/* layers, attention, einsum, losses */
static void
test_nn(void **state)
{
	static const double q[] = { 1, 0, 0, 1, 1, 1 }, k[] = { 1, 0, 0, 1, 1, 1 }, v[] = { 1, 2, 3, 4, 5, 6 };
	double w[6], s[3];
	Err e = { "" };
	UOp *Q = mat(q, 3, 2, DT_FLOAT32), *K = mat(k, 3, 2, DT_FLOAT32), *V = mat(v, 3, 2, DT_FLOAT32);
	int i, j, c;

	/* causal attention by hand: row i attends to keys 0..i */
	for (i = 0; i < 3; i++) {
		double z = 0;

		for (j = 0; j <= i; j++) {
			s[j] = exp((q[2 * i] * k[2 * j] + q[2 * i + 1] * k[2 * j + 1]) / sqrt(2));
			z += s[j];
		}
		for (c = 0; c < 2; c++) {
			w[2 * i + c] = 0;
			for (j = 0; j <= i; j++)
				w[2 * i + c] += s[j] / z * v[2 * j + c];
		}
	}
	CHECK(tensor_sdpa(C, Q, K, V, NULL, 1, 0, &e), e, w, 6, 1e-6);
	REFUSED(tensor_sdpa(C, Q, K, V, Q, 1, 0, &e), e, "scaled_dot_product_attention", "is_causal");
	REFUSED(tensor_sdpa(C, Q, K, V, NULL, 0, 1, &e), e, "scaled_dot_product_attention", "enable_gqa");
	/* einsum ij,kj->ik = Q K^T */
	{
		static const double qk[] = { 1, 0, 1, 0, 1, 1, 1, 1, 2 };

		CHECK(tensor_einsum(C, "ij,kj->ik", (UOp *[]){ Q, K }, 2, &e), e, qk, 9, 0);
		CHECK(tensor_einsum(C, "ij, kj", (UOp *[]){ Q, K }, 2, &e), e, qk, 9, 0);
	}
	REFUSED(tensor_einsum(C, "ij,jk->ik", (UOp *[]){ Q, K }, 2, &e), e, "einsum", "'j' has sizes 2 and 3");
	REFUSED(tensor_einsum(C, "ij->k", (UOp *[]){ Q }, 1, &e), e, "einsum", "in no input");
	REFUSED(tensor_einsum(C, "ij,jk->ik", (UOp *[]){ Q }, 1, &e), e, "einsum", "2 inputs");
	/* layernorm of (1, 2, 3) */
	{
		double m = 2, var = 2.0 / 3, ln[3];

		for (i = 0; i < 3; i++)
			ln[i] = (i + 1 - m) / sqrt(var + 1e-5);
		CHECK(tensor_layernorm(C, vec((double[]){ 1, 2, 3 }, 3, DT_FLOAT32), (int64_t[]){ -1 }, 1, 1e-5, &e), e, ln, 3,
		      1e-6);
	}
	/* cross entropy of (0, ln 3) with label 1: -log(3/4) */
	{
		double ce = -log(0.75);
		UOp *lg = mat((double[]){ 0, log(3) }, 1, 2, DT_FLOAT32), *y = vec((double[]){ 1 }, 1, DT_INT32);

		CHECK(tensor_cross_entropy(C, lg, y, TRED_MEAN, 0, &e), e, &ce, 1, 1e-6);
		CHECK(tensor_sparse_categorical_crossentropy(C, lg, y, -1, 0, TRED_SUM, &e), e, &ce, 1, 1e-6);
		CHECK(tensor_nll_loss(C, tensor_log_softmax(C, lg, 1, &e), y, NULL, NULL, TRED_MEAN, &e), e, &ce, 1, 1e-6);
		REFUSED(tensor_cross_entropy(C, lg, vec((double[]){ 1, 0 }, 2, DT_INT32), TRED_MEAN, 0, &e), e,
		        "cross_entropy", "targets (2,)");
		REFUSED(tensor_cross_entropy(C, lg, y, TRED_MEAN, 1.5, &e), e, "cross_entropy", "label_smoothing");
	}
	{
		TReduction r;

		assert_int_equal(tensor_reduction_parse("avg", &r, &e), -1);
		REFUSED(NULL, e, "reduction", "avg");
	}
	REFUSED(tensor_batchnorm(C, Q, NULL, NULL, vec(q, 3, DT_FLOAT32), vec(q, 2, DT_FLOAT32), (int64_t[]){ 1 }, 1, &e),
	        e, "batchnorm", "mean has shape (3,)");
}

/* conv2d and the pools against their definitions, by brute force over random sizes */
static void
test_windows(void **state)
{
	enum { MAXN = 4096 };
	static double xv[MAXN], wv[MAXN], bv[16], want[MAXN];
	int trial;

	for (trial = 0; trial < 24; trial++) {
		int64_t B = 1 + rand() % 2, G = 1 + rand() % 2, CI = 1 + rand() % 2, RC = 1 + rand() % 2;
		int64_t KH = 1 + rand() % 3, KW = 1 + rand() % 3, SH = 1 + rand() % 2, SW = 1 + rand() % 3;
		int64_t DH = 1 + rand() % 2, DW = 1, PT = rand() % 2, PB = rand() % 3, PL = rand() % 2, PR = rand() % 2;
		int64_t H = KH * DH + rand() % 4, W = KW + rand() % 5, OH, OW, n = 0, b, oc, oy, ox, c, ky, kx;
		int64_t xs[4] = { B, G * CI, H, W }, ws[4] = { G * RC, CI, KH, KW }, cout = G * RC;
		int64_t st[2] = { SH, SW }, dl[2] = { DH, DW }, before[2] = { PT, PL }, after[2] = { PB, PR }, i;
		Err e = { "" };
		UOp *x, *w, *bias;

		OH = (H + PT + PB - DH * (KH - 1) - 1) / SH + 1;
		OW = (W + PL + PR - DW * (KW - 1) - 1) / SW + 1;
		for (i = 0; i < B * G * CI * H * W; i++)
			xv[i] = (float)rnd(-2, 2);
		for (i = 0; i < cout * CI * KH * KW; i++)
			wv[i] = (float)rnd(-2, 2);
		for (i = 0; i < cout; i++)
			bv[i] = (float)rnd(-1, 1);
		x = tensor_from(C, DT_FLOAT32, xv, xs, 4, &e);
		w = tensor_from(C, DT_FLOAT32, wv, ws, 4, &e);
		bias = vec(bv, cout, DT_FLOAT32);
		for (b = 0; b < B; b++)
			for (oc = 0; oc < cout; oc++)
				for (oy = 0; oy < OH; oy++)
					for (ox = 0; ox < OW; ox++) {
						double acc = bv[oc];
						int64_t g = oc / RC;

						for (c = 0; c < CI; c++)
							for (ky = 0; ky < KH; ky++)
								for (kx = 0; kx < KW; kx++) {
									int64_t y = oy * SH + ky * DH - PT, xx = ox * SW + kx * DW - PL;

									if (y >= 0 && y < H && xx >= 0 && xx < W)
										acc += xv[((b * G * CI + g * CI + c) * H + y) * W + xx]
										       * wv[((oc * CI + c) * KH + ky) * KW + kx];
								}
						want[n++] = acc;
					}
		CHECK(tensor_conv2d(C, x, w, bias, G, st, dl, before, after, &e), e, want, n, 1e-5);
		/* max and mean of each window (padding: the lowest value, and zeros counted) */
		{
			int64_t ks[2] = { KH, KW }, m = 0;
			double want2[MAXN];

			for (b = 0; b < B * G * CI; b++)
				for (oy = 0; oy < OH; oy++)
					for (ox = 0; ox < OW; ox++) {
						double mx = -INFINITY, sum = 0;

						for (ky = 0; ky < KH; ky++)
							for (kx = 0; kx < KW; kx++) {
								int64_t y = oy * SH + ky * DH - PT, xx = ox * SW + kx * DW - PL;
								double v = y >= 0 && y < H && xx >= 0 && xx < W ? xv[(b * H + y) * W + xx] : 0;

								if (y >= 0 && y < H && xx >= 0 && xx < W)
									mx = fmax(mx, v);
								sum += v;
							}
						want[m] = mx;
						want2[m++] = sum / (double)(KH * KW);
					}
			CHECK(tensor_max_pool(C, x, ks, st, dl, before, after, 2, 0, &e), e, want, m, 0);
			CHECK(tensor_avg_pool(C, x, ks, st, dl, before, after, 2, 0, 1, &e), e, want2, m, 1e-6);
		}
	}
	{
		double one[16] = { 0 };
		int64_t s4[4] = { 1, 3, 4, 4 }, w4[4] = { 2, 2, 3, 3 }, w3[4] = { 2, 3, 3, 3 }, k1[2] = { 1, 1 };
		int64_t k0[2] = { 0, 0 }, big[2] = { 9, 1 };
		Err e = { "" };
		UOp *x = tensor_full(C, DT_FLOAT32, 1, s4, 4, &e), *w = tensor_full(C, DT_FLOAT32, 1, w4, 4, &e);
		UOp *wok = tensor_full(C, DT_FLOAT32, 1, w3, 4, &e);

		REFUSED(tensor_conv2d(C, x, w, NULL, 1, k1, k1, k0, k0, &e), e, "conv2d", "needs groups*cin = 2 channels");
		REFUSED(tensor_conv2d(C, x, wok, vec(one, 3, DT_FLOAT32), 1, k1, k1, k0, k0, &e), e, "conv2d",
		        "one value an output channel");
		REFUSED(tensor_max_pool(C, x, big, k1, k1, k0, k0, 2, 0, &e), e, "pool", "larger than the axis");
		REFUSED(tensor_pool(C, x, k1, k0, k1, 2, &e), e, "pool", "each must be at least 1");
		REFUSED(tensor_unfold(C, x, 3, 5, 1, &e), e, "unfold", "the size must be 0 to the axis");
	}
	{
		/* unfold of a 3 x 7 matrix along axis 1, windows of 3 every 2: out[r][w][j] = x[r][2w + j] */
		double v[21], want[27];
		int64_t r, w, j, n = 0;
		Err e = { "" };

		for (r = 0; r < 21; r++)
			v[r] = (double)(r * 3 % 11);
		for (r = 0; r < 3; r++)
			for (w = 0; w < 3; w++)
				for (j = 0; j < 3; j++)
					want[n++] = v[r * 7 + 2 * w + j];
		CHECK(tensor_unfold(C, mat(v, 3, 7, DT_FLOAT32), -1, 3, 2, &e), e, want, n, 0);
	}
}

/*
** rearrange against its definition: for "b (h w) c -> (c w) b h" every output
** element is the input element whose names carry the same values; pad_to and
** shrink_to by position; masked_select and nonzero by enumerating the mask.
*/
static void
test_select(void **state)
{
	enum { B = 2, H = 3, W = 2, Cc = 4 };
	double v[B * H * W * Cc], want[B * H * W * Cc], m[24];
	int64_t s[3] = { B, H * W, Cc }, k = 0, idx[24][2];
	const char *names[] = { "h" };
	int64_t sizes[] = { H };
	Err e = { "" };
	UOp *x, *r;
	int b, h, w, c, i, n;

	(void)state;
	for (i = 0; i < B * H * W * Cc; i++)
		v[i] = i;
	x = tensor_from(C, DT_FLOAT32, v, s, 3, &e);
	/* out[(c w), b, h] = x[b, (h w), c] */
	for (c = 0; c < Cc; c++)
		for (w = 0; w < W; w++)
			for (b = 0; b < B; b++)
				for (h = 0; h < H; h++)
					want[((c * W + w) * B + b) * H + h] = v[(b * H * W + h * W + w) * Cc + c];
	r = tensor_rearrange(C, x, "b (h w) c -> (c w) b h", names, sizes, 1, &e);
	CHECK(r, e, want, B * H * W * Cc, 0);
	assert_int_equal(r->ndim, 3);
	assert_int_equal(r->shape[0], Cc * W);
	/* the ellipsis and axes of size 1 */
	r = tensor_rearrange(C, x, "b ... -> 1 (...) b ()", NULL, NULL, 0, &e);
	assert_non_null(r);
	assert_int_equal(r->ndim, 4);
	assert_int_equal(r->shape[0], 1);
	assert_int_equal(r->shape[1], H * W * Cc);
	assert_int_equal(r->shape[3], 1);
	/* refusals */
	assert_null(tensor_rearrange(C, x, "b (h w) c -> b h w c", NULL, NULL, 0, &e));
	assert_non_null(strstr(e.msg, "h and w split axis 1 of size 6; give one of their sizes"));
	assert_null(tensor_rearrange(C, x, "b n c -> b n", NULL, NULL, 0, &e));
	assert_non_null(strstr(e.msg, "c is not on the right"));
	assert_null(tensor_rearrange(C, x, "b n c -> b c n -> n", NULL, NULL, 0, &e));
	assert_non_null(strstr(e.msg, "need exactly one \"->\""));
	assert_null(tensor_rearrange(C, x, "b (n c -> b n c", NULL, NULL, 0, &e));
	assert_non_null(strstr(e.msg, "bracket mismatch"));
	assert_null(tensor_rearrange(C, x, "b (h w) c -> b h w c", names, (int64_t[]){ 4 }, 1, &e));
	assert_non_null(strstr(e.msg, "axis 1 of size 6 does not split by 4"));
	assert_null(tensor_rearrange(C, x, "_b n c -> _b n c", NULL, NULL, 0, &e));
	assert_non_null(strstr(e.msg, "invalid axis name _b"));
	/* pad_to, shrink_to: -1 keeps an axis */
	r = tensor_shrink_to(C, tensor_pad_to(C, x, (int64_t[]){ 3, -1, 5 }, 3, &e), (int64_t[]){ 3, 1, -1 }, 3, &e);
	assert_non_null(r);
	for (b = 0; b < 3; b++)
		for (c = 0; c < 5; c++)
			want[b * 5 + c] = b < B && c < Cc ? v[b * H * W * Cc + c] : 0;
	CHECK(r, e, want, 15, 0);
	assert_null(tensor_pad_to(C, x, (int64_t[]){ 1, -1, 5 }, 3, &e));
	assert_non_null(strstr(e.msg, "pad_to: (2, 6, 4) to (1, -1, 5): axis 0 of size 2 cannot pad to 1"));
	/* masked_select and nonzero: a random mask, enumerated */
	for (i = 0, n = 0; i < 24; i++) {
		m[i] = rand() % 3 == 0;
		if (m[i]) {
			want[n] = v[i];
			idx[n][0] = i / 6, idx[n][1] = i % 6;
			n++;
		}
	}
	{
		int64_t ms[2] = { 4, 6 }, fs[2] = { 4, 6 };
		UOp *mask = tensor_from(C, DT_BOOL, m, ms, 2, &e), *xv = tensor_from(C, DT_FLOAT32, v, fs, 2, &e);
		double nz[48];

		CHECK(tensor_masked_select(C, xv, mask, -1, NULL, &e), e, want, n, 0);
		/* size past the count: filled */
		for (i = n; i < n + 3; i++)
			want[i] = -1;
		CHECK(tensor_masked_select(C, xv, mask, n + 3, uop_constf(C, DT_FLOAT32, -1), &e), e, want, n + 3, 0);
		for (i = 0; i < n; i++)
			nz[2 * i] = (double)idx[i][0], nz[2 * i + 1] = (double)idx[i][1];
		r = tensor_nonzero(C, tensor_cast(C, DT_INT32, mask, &e), -1, NULL, &e);
		CHECK(r, e, nz, 2 * n, 0);
		assert_int_equal(r->dtype, DT_INT32);
		k = n > 0 ? n - 1 : 0;   /* cut */
		CHECK(tensor_nonzero(C, tensor_cast(C, DT_INT32, mask, &e), k, NULL, &e), e, nz, 2 * k, 0);
		assert_null(tensor_masked_select(C, xv, xv, -1, NULL, &e));
		assert_non_null(strstr(e.msg, "masked_select: the mask is float32; it must be bool"));
		/* a count from params is data the graph does not have */
		{
			UOp *p = tensor_param(C, "p", 0, fs, 2, DT_BOOL, NULL, &e);

			assert_null(tensor_masked_select(C, xv, p, -1, NULL, &e));
			assert_non_null(strstr(e.msg, "masked_select: without size, the length is the count of true elements"));
			assert_non_null(tensor_masked_select(C, xv, p, 4, NULL, &e));
		}
	}
	/* usum of bools is or, uprod of ints a product */
	{
		double t1[3] = { 1, 0, 0 }, t2[3] = { 0, 0, 1 }, i1[3] = { 2, 3, 4 }, i2[3] = { 5, 6, 7 }, w1[3] = { 1, 0, 1 },
		       w2[3] = { 10, 18, 28 };
		UOp *xs[1];

		xs[0] = vec(t2, 3, DT_BOOL);
		CHECK(tensor_usum(C, vec(t1, 3, DT_BOOL), xs, 1, 0, &e), e, w1, 3, 0);
		xs[0] = vec(i2, 3, DT_INT32);
		CHECK(tensor_usum(C, vec(i1, 3, DT_INT32), xs, 1, 1, &e), e, w2, 3, 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_math_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_math_special, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reduce_sort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_windows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_select, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

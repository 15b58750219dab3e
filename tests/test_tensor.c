/* test_tensor.c - tensor programs: dtypes, derived properties, the evaluator against naive loops. */
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

#include "../interp/tensor/tensor.h"

static UCtx *C;
static unsigned seed;

static int
setup(void **state)
{
	const char *s = getenv("TESSEL_SEED");

	seed = s ? (unsigned)strtoul(s, NULL, 10) : (unsigned)time(NULL);
	srand(seed);
	C = uctx_new();
	return C ? 0 : -1;
}

static int
teardown(void **state)
{
	uctx_free(C);
	return 0;
}

/* float16 and bfloat16 against known bit patterns: ties go to even */
static void
test_half(void **state)
{
	static const struct { double x; uint16_t h; } f16[] = {
		{ 1.0, 0x3C00 }, { -2.0, 0xC000 }, { 65504, 0x7BFF }, { 65519, 0x7BFF },
		{ 65520, 0x7C00 }, { 1.0 / 3, 0x3555 }, { 0.1, 0x2E66 }, { 0x1p-24, 0x0001 },
		{ 0x1p-25, 0x0000 }, { 0x1.8p-24, 0x0002 }, { 0x1p-14, 0x0400 },
		{ 1 + 0x1p-11, 0x3C00 }, { 1 + 0x3p-11, 0x3C02 }, { -0.0, 0x8000 },
		{ INFINITY, 0x7C00 }, { 0x1.ffcp-15, 0x0400 },
	};
	static const struct { double x; uint16_t h; } bf[] = {
		{ 1.0, 0x3F80 }, { 3.14159265358979, 0x4049 }, { 0.1, 0x3DCD },
		{ 1 + 0x1p-8, 0x3F80 }, { 1 + 0x3p-8, 0x3F82 }, { -1.0, 0xBF80 },
		{ 3.3895313892515355e38, 0x7F7F }, { 0x1p-133, 0x0001 }, { INFINITY, 0x7F80 },
	};
	size_t i;

	for (i = 0; i < sizeof f16 / sizeof f16[0]; i++) {
		if (dtype_to_half(f16[i].x) != f16[i].h)
			fail_msg("float16(%a) = 0x%04x, want 0x%04x", f16[i].x, dtype_to_half(f16[i].x), f16[i].h);
		if (!isinf(f16[i].x) && f16[i].h != 0x7C00 && fabs(f16[i].x - dtype_from_half(f16[i].h)) > fabs(f16[i].x) * 0x1p-10 + 0x1p-24)
			fail_msg("float16 0x%04x decodes to %a", f16[i].h, dtype_from_half(f16[i].h));
	}
	for (i = 0; i < sizeof bf / sizeof bf[0]; i++)
		if (dtype_to_bf16(bf[i].x) != bf[i].h)
			fail_msg("bfloat16(%a) = 0x%04x, want 0x%04x", bf[i].x, dtype_to_bf16(bf[i].x), bf[i].h);
	assert_true(dtype_to_half(NAN) == 0x7E00);
	/* every float16 round-trips */
	for (i = 0; i < 0x7C00; i++)
		assert_int_equal(dtype_to_half(dtype_from_half((uint16_t)i)), i);
}

static void
test_wrap_promote(void **state)
{
	assert_int_equal(dtype_wrap(DT_INT8, 128), -128);
	assert_int_equal(dtype_wrap(DT_UINT8, -1), 255);
	assert_int_equal(dtype_wrap(DT_INT16, 40000), 40000 - 65536);
	assert_int_equal(dtype_wrap(DT_UINT32, -1), 4294967295LL);
	assert_int_equal(dtype_ftoi(DT_INT32, -2.7), -2);
	assert_int_equal(dtype_ftoi(DT_UINT8, 300.5), 44);
	assert_int_equal(dtype_promote(DT_INT8, DT_UINT8), DT_INT16);
	assert_int_equal(dtype_promote(DT_FLOAT16, DT_BFLOAT16), DT_FLOAT32);
	assert_int_equal(dtype_promote(DT_BOOL, DT_INT32), DT_INT32);
	assert_int_equal(dtype_promote(DT_INT32, DT_FLOAT16), DT_FLOAT16);
	assert_int_equal(dtype_promote(DT_UINT32, DT_INT32), DT_INT64);
	assert_int_equal(dtype_promote(DT_INT64, DT_UINT64), DT_FLOAT16);   /* tinygrad's lattice */
	assert_int_equal(dtype_promote(DT_FLOAT32, DT_FLOAT64), DT_FLOAT64);
}

/* Random123's known-answer vectors for threefry2x32_20 */
static void
test_threefry(void **state)
{
	assert_true(tensor_threefry(0, 0) == (0x99ba4efeull << 32 | 0x6b200159ull));
	assert_true(tensor_threefry(~0ull, ~0ull) == (0xbb002be7ull << 32 | 0x1cb996fcull));
	assert_true(tensor_threefry(0x85a308d3243f6a88ull, 0x0370734413198a2eull)
	            == (0x483df7a0ull << 32 | 0xc4923a9cull));
}

static UOp *
rnd(int64_t m, int64_t n, uint64_t s)
{
	int64_t sh[2] = { m, n };
	Err e;
	UOp *u = tensor_rand(C, sh, 2, DT_FLOAT32, s, &e);

	if (!u)
		fail_msg("%s", e.msg);
	return u;
}

static void
realize(const UOp *u, TBuf *b)
{
	Err e;

	if (tensor_realize(u, NULL, b, &e) < 0)
		fail_msg("%s", e.msg);
}

/* the spec's derived-property table, row by row */
static void
test_derived(void **state)
{
	int64_t s23[2] = { 2, 3 }, s3[1] = { 3 }, s13[2] = { 1, 3 }, o[2] = { 1, 0 }, ax = 1;
	Err e;
	UOp *p = tensor_param(C, "p", 0, s23, 2, DT_FLOAT32, "CPU", &e), *k, *u, *b, *w;

	/* Param: dtype, shape, device from arg; Const: shape (), no device, [v, v] */
	assert_int_equal(p->dtype, DT_FLOAT32);
	assert_int_equal(p->ndim, 2);
	assert_string_equal(p->device, "CPU");
	k = uop_constf(C, DT_INT32, 7);
	assert_int_equal(k->ndim, 0);
	assert_null(k->device);
	assert_true(k->vmin == 7 && k->vmax == 7);
	/* movement: src dtype/device, min_max of src */
	u = tensor_permute(C, tensor_full(C, DT_INT32, 5, s23, 2, &e), o, 2, &e);
	assert_true(u->shape[0] == 3 && u->shape[1] == 2 && u->vmin == 5 && u->vmax == 5);
	/* reduce: collapse to 1, dtype range */
	u = tensor_reduce(C, OP_ADD, tensor_full(C, DT_INT8, 5, s23, 2, &e), &ax, 1, 1, &e);
	assert_true(u->ndim == 2 && u->shape[1] == 1 && u->vmin == -128 && u->vmax == 127);
	/* cast: clamped to the dtype */
	u = tensor_cast(C, DT_UINT8, tensor_full(C, DT_INT32, 300, s3, 1, &e), &e);
	assert_true(u->vmin == 0 && u->vmax == 255);
	u = tensor_cast(C, DT_INT16, tensor_full(C, DT_INT8, 3, s3, 1, &e), &e);
	assert_true(u->vmin == 3 && u->vmax == 3);
	/* add: [a+b, A+B]; mul: products; max; cmplt: bool from intervals; where: [min(b,c), max(B,C)] */
	b = tensor_full(C, DT_INT32, 2, s13, 2, &e);
	u = tensor_alu(C, OP_ADD, tensor_full(C, DT_INT32, 5, s23, 2, &e), b, &e);
	assert_true(u->ndim == 2 && u->shape[0] == 2 && u->shape[1] == 3 && u->vmin == 7 && u->vmax == 7);
	u = tensor_alu(C, OP_CMPLT, tensor_full(C, DT_INT32, 5, s23, 2, &e), b, &e);
	assert_true(u->dtype == DT_BOOL && u->vmin == 0 && u->vmax == 0);
	w = tensor_where(C, u, tensor_full(C, DT_INT32, -4, s3, 1, &e), b, &e);
	assert_true(w->dtype == DT_INT32 && w->vmin == 2 && w->vmax == 2);   /* decided: false */
	u = tensor_alu(C, OP_CMPLT, p, uop_constf(C, DT_FLOAT32, 0), &e);
	w = tensor_where(C, u, tensor_full(C, DT_INT32, -4, s3, 1, &e), b, &e);
	assert_true(w->dtype == DT_INT32 && w->vmin == -4 && w->vmax == 2);
	/* broadcast errors name both shapes and the axis */
	assert_null(tensor_alu(C, OP_ADD, tensor_full(C, DT_INT32, 1, s23, 2, &e),
	                       tensor_full(C, DT_INT32, 1, (int64_t[]){ 4 }, 1, &e), &e));
	assert_non_null(strstr(e.msg, "(2, 3)"));
	assert_non_null(strstr(e.msg, "(4,)"));
	assert_non_null(strstr(e.msg, "axis 1"));
	assert_null(tensor_reshape(C, p, (int64_t[]){ 4, 2 }, 2, &e));
	assert_non_null(strstr(e.msg, "6 elements"));
	/* copy to a tuple: axis 0; permute follows; reduce on it -> none */
	u = tensor_copy(C, tensor_full(C, DT_INT32, 1, (int64_t[]){ 4, 3 }, 2, &e), "CPU:0,CPU:1", &e);
	assert_true(u->axis == 0 && uop_ndev(u->device) == 2);
	w = tensor_permute(C, u, o, 2, &e);
	assert_int_equal(w->axis, 1);
	ax = 1;
	assert_int_equal(tensor_reduce(C, OP_ADD, w, &ax, 1, 1, &e)->axis, -1);
	w = tensor_reshape(C, u, (int64_t[]){ 2, 2, 3 }, 3, &e);
	assert_int_equal(w->axis, 0);
	/* the scalar IR is untouched: index expressions have no shape */
	assert_int_equal(uop_add(C, uop_var(C, "i", 0, 7), uop_int(C, 1))->ndim, 0);
}

/* matmul and softmax against naive C loops */
static void
test_differential(void **state)
{
	enum { M = 13, K = 17, N = 11 };
	UOp *a = rnd(M, K, seed), *b = rnd(K, N, seed + 1), *ra, *rb, *m, *sm, *mx, *ex, *sum;
	int64_t s1[3] = { M, K, 1 }, s2[3] = { 1, K, N }, ax = 1;
	TBuf A, B, R, S;
	Err e;
	int i, j, k;

	realize(a, &A);
	realize(b, &B);
	ra = tensor_reshape(C, a, s1, 3, &e);
	rb = tensor_reshape(C, b, s2, 3, &e);
	m = tensor_reduce(C, OP_ADD, tensor_alu(C, OP_MUL, ra, rb, &e), &ax, 1, 0, &e);
	realize(m, &R);
	assert_true(R.ndim == 2 && R.shape[0] == M && R.shape[1] == N);
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			double acc = 0;
			float want;

			for (k = 0; k < K; k++)
				acc += (double)(float)(((float *)A.data)[i * K + k] * ((float *)B.data)[k * N + j]);
			want = (float)acc;
			if (((float *)R.data)[i * N + j] != want)
				fail_msg("seed %u: matmul[%d][%d] = %.9g, want %.9g", seed, i, j,
				         ((float *)R.data)[i * N + j], want);
		}
	/* softmax over axis 1 */
	ax = 1;
	mx = tensor_reduce(C, OP_MAX, a, &ax, 1, 1, &e);
	ex = tensor_unary(C, OP_EXP2, tensor_alu(C, OP_MUL, tensor_alu(C, OP_SUB, a, mx, &e),
	                  uop_constf(C, DT_FLOAT32, 1.4426950408889634), &e), &e);
	sum = tensor_reduce(C, OP_ADD, ex, &ax, 1, 1, &e);
	sm = tensor_alu(C, OP_MUL, ex, tensor_unary(C, OP_RECIP, sum, &e), &e);
	realize(sm, &S);
	for (i = 0; i < M; i++) {
		double mv = -INFINITY, tot = 0;

		for (k = 0; k < K; k++)
			mv = fmax(mv, ((float *)A.data)[i * K + k]);
		for (k = 0; k < K; k++)
			tot += exp(((float *)A.data)[i * K + k] - mv);
		for (k = 0; k < K; k++) {
			double want = exp(((float *)A.data)[i * K + k] - mv) / tot;

			if (fabs(((float *)S.data)[i * K + k] - want) > 1e-6)
				fail_msg("seed %u: softmax[%d][%d] = %.9g, want %.9g", seed, i, k,
				         ((float *)S.data)[i * K + k], want);
		}
	}
	tbuf_free(&A);
	tbuf_free(&B);
	tbuf_free(&R);
	tbuf_free(&S);
}

/* A tensor of shape s[n] and dtype t from values (row-major). */
static UOp *
vals(DType t, const double *v, const int64_t *s, int n)
{
	Err e;
	UOp *u = tensor_from(C, t, v, s, n, &e);

	if (!u)
		fail_msg("%s", e.msg);
	return u;
}

static UOp *
ok(UOp *u, const Err *e)
{
	if (!u)
		fail_msg("%s", e->msg);
	return u;
}

/* the compositions of tensor_compose.c build the spec's graphs: hash-consing makes them
** the very nodes a caller writing the formula out gets (the kernel lowering relies on it) */
static void
test_compose_graphs(void **state)
{
	int64_t sa[2] = { 3, 4 }, sb[2] = { 4, 2 }, s1[3] = { 3, 4, 1 }, s2[3] = { 1, 4, 2 }, ax = 1;
	Err e;
	UOp *a = ok(tensor_param(C, "a", 0, sa, 2, DT_FLOAT32, NULL, &e), &e);
	UOp *b = ok(tensor_param(C, "b", 1, sb, 2, DT_FLOAT32, NULL, &e), &e);
	UOp *gemm, *mx, *ex, *sum, *sm, *i8;

	gemm = tensor_reduce(C, OP_ADD, tensor_alu(C, OP_MUL, tensor_reshape(C, a, s1, 3, &e),
	                     tensor_reshape(C, b, s2, 3, &e), &e), &ax, 1, 0, &e);
	assert_ptr_equal(ok(tensor_matmul(C, a, b, &e), &e), gemm);
	mx = tensor_reduce(C, OP_MAX, a, &ax, 1, 1, &e);
	ex = tensor_unary(C, OP_EXP2, tensor_alu(C, OP_MUL, tensor_alu(C, OP_SUB, a, mx, &e),
	                  uop_constf(C, DT_FLOAT32, 1.4426950408889634), &e), &e);
	sum = tensor_reduce(C, OP_ADD, ex, &ax, 1, 1, &e);
	sm = tensor_alu(C, OP_MUL, ex, tensor_unary(C, OP_RECIP, sum, &e), &e);
	assert_ptr_equal(ok(tensor_softmax(C, a, 1, &e), &e), sm);
	assert_ptr_equal(ok(tensor_softmax(C, a, -1, &e), &e), sm);
	assert_ptr_equal(ok(tensor_gt(C, a, mx, &e), &e), tensor_alu(C, OP_CMPLT, mx, a, &e));
	/* sum of int8: Reduce of a Cast to int32 */
	i8 = ok(tensor_cast(C, DT_INT8, a, &e), &e);
	sum = ok(tensor_sum(C, i8, NULL, -1, 0, &e), &e);
	assert_int_equal(sum->dtype, DT_INT32);
	assert_int_equal(sum->src[0]->op, OP_REDUCE);
	assert_int_equal(sum->src[0]->src[0]->op, OP_CAST);
	assert_int_equal(ok(tensor_sum(C, a, NULL, -1, 0, &e), &e)->dtype, DT_FLOAT32);
	/* refusals name the operation */
	assert_null(tensor_softmax(C, a, 2, &e));
	assert_string_equal(e.msg, "softmax: axis 2 is out of range for rank 2");
	assert_null(tensor_matmul(C, a, a, &e));
	assert_non_null(strstr(e.msg, "matmul: (3, 4) @ (3, 4): the inner sizes differ: 4"));
	assert_null(tensor_exp(C, NULL, &e));
}

static double
at_(const TBuf *b, int64_t i)
{
	return tbuf_get(b, i);
}

/* values of the compositions against loops: minimum, min, sum, cumsum, gather,
** scatter_add, pad with a value, arange with a step, batched matmul */
static void
test_compose_values(void **state)
{
	static const double u8[2] = { 0, 5 }, i8[3] = { 100, 100, 100 }, g[4] = { 10, 20, 30, 40 },
	                    gi[4] = { 3, 0, 0, 2 }, one3[3] = { 1, 1, 1 }, si[3] = { 0, 2, 0 },
	                    sv[3] = { 5, 6, 7 }, p4[4] = { 1, 2, 3, 4 };
	int64_t n2 = 2, n3 = 3, n4 = 4, n600 = 600, bsa[4] = { 2, 1, 3, 4 }, bsb[3] = { 3, 4, 5 };
	int64_t pb = -1, pa = 2, i, j, k, bb;
	Err e;
	TBuf r, A, B;
	UOp *u;

	realize(ok(tensor_min(C, vals(DT_UINT8, u8, &n2, 1), NULL, -1, 0, &e), &e), &r);
	assert_true(r.dtype == DT_UINT8 && at_(&r, 0) == 0);
	tbuf_free(&r);
	realize(ok(tensor_minimum(C, vals(DT_UINT8, u8, &n2, 1), uop_constf(C, DT_UINT8, 3), &e), &e), &r);
	assert_true(at_(&r, 0) == 0 && at_(&r, 1) == 3);
	tbuf_free(&r);
	realize(ok(tensor_sum(C, vals(DT_INT8, i8, &n3, 1), NULL, -1, 0, &e), &e), &r);
	assert_true(r.dtype == DT_INT32 && at_(&r, 0) == 300);
	tbuf_free(&r);
	realize(ok(tensor_cumsum(C, vals(DT_INT8, i8, &n3, 1), 0, &e), &e), &r);
	assert_true(r.dtype == DT_INT32 && at_(&r, 0) == 100 && at_(&r, 1) == 200 && at_(&r, 2) == 300);
	tbuf_free(&r);
	/* past 512: the two-stage scan */
	realize(ok(tensor_cumsum(C, ok(tensor_arange(C, n600, DT_INT32, &e), &e), -1, &e), &e), &r);
	for (i = 0; i < n600; i++)
		if (at_(&r, i) != i * (i + 1) / 2)
			fail_msg("cumsum(arange(600))[%lld] = %g", (long long)i, at_(&r, i));
	tbuf_free(&r);
	realize(ok(tensor_gather(C, vals(DT_INT32, g, &n4, 1), 0, vals(DT_INT32, gi, &n4, 1), &e), &e), &r);
	assert_true(at_(&r, 0) == 40 && at_(&r, 1) == 10 && at_(&r, 2) == 10 && at_(&r, 3) == 30);
	tbuf_free(&r);
	realize(ok(tensor_scatter_add(C, vals(DT_INT32, one3, &n3, 1), 0, vals(DT_INT32, si, &n3, 1),
	                              vals(DT_INT32, sv, &n3, 1), &e), &e), &r);
	assert_true(at_(&r, 0) == 13 && at_(&r, 1) == 1 && at_(&r, 2) == 7);
	tbuf_free(&r);
	u = ok(tensor_pad_constant(C, vals(DT_INT32, p4, &n4, 1), &pb, &pa, 1, uop_constf(C, DT_INT32, 9), &e), &e);
	realize(u, &r);
	assert_true(r.numel == 5 && at_(&r, 0) == 2 && at_(&r, 2) == 4 && at_(&r, 3) == 9 && at_(&r, 4) == 9);
	tbuf_free(&r);
	pb = -3;
	pa = -2;
	assert_null(tensor_pad_constant(C, vals(DT_INT32, p4, &n4, 1), &pb, &pa, 1, NULL, &e));
	assert_non_null(strstr(e.msg, "removes more than its 4 elements"));
	realize(ok(tensor_arange_step(C, 0.0, 1.0, 0.25, DT_FLOAT32, &e), &e), &r);
	assert_true(r.numel == 4 && at_(&r, 3) == 0.75);
	tbuf_free(&r);
	realize(ok(tensor_arange_int(C, 5, 0, -2, DT_INT32, &e), &e), &r);
	assert_true(r.numel == 3 && at_(&r, 0) == 5 && at_(&r, 2) == 1);
	tbuf_free(&r);
	assert_null(tensor_arange_int(C, 0, 300, 1, DT_UINT8, &e));
	/* batched matmul: (2,1,3,4) @ (3,4,5) -> (2,3,3,5), the batch axes broadcast */
	{
		int64_t sa2[2] = { 2 * 3, 4 }, sb2[2] = { 3 * 4, 5 };
		UOp *a = ok(tensor_reshape(C, rnd(sa2[0], sa2[1], seed), bsa, 4, &e), &e);
		UOp *b = ok(tensor_reshape(C, rnd(sb2[0], sb2[1], seed + 1), bsb, 3, &e), &e);

		realize(a, &A);
		realize(b, &B);
		realize(ok(tensor_matmul(C, a, b, &e), &e), &r);
		assert_true(r.ndim == 4 && r.shape[0] == 2 && r.shape[1] == 3 && r.shape[2] == 3 && r.shape[3] == 5);
		for (bb = 0; bb < 6; bb++)
			for (i = 0; i < 3; i++)
				for (j = 0; j < 5; j++) {
					double acc = 0;
					float want;

					for (k = 0; k < 4; k++)
						acc += (double)(float)((float)at_(&A, (bb / 3) * 12 + i * 4 + k)
						                       * (float)at_(&B, (bb % 3) * 20 + k * 5 + j));
					want = (float)acc;
					if ((float)at_(&r, bb * 15 + i * 5 + j) != want)
						fail_msg("seed %u: batched matmul [%lld][%lld][%lld] = %.9g, want %.9g", seed,
						         (long long)bb, (long long)i, (long long)j, at_(&r, bb * 15 + i * 5 + j), want);
				}
		tbuf_free(&A);
		tbuf_free(&B);
		tbuf_free(&r);
		{
			int64_t sc[4] = { 3, 1, 4, 5 };
			UOp *c = ok(tensor_reshape(C, rnd(12, 5, seed + 2), sc, 4, &e), &e);

			assert_null(tensor_matmul(C, a, c, &e));
			assert_non_null(strstr(e.msg, "the batch axes do not broadcast: sizes 2 and 3 at batch axis -2"));
		}
	}
}

/* views: pad, shrink, flip, permute, expand compose without copies and read right */
static void
test_views(void **state)
{
	double v[6] = { 1, 2, 3, 4, 5, 6 };
	int64_t s[2] = { 2, 3 }, b[2] = { 1, 0 }, a[2] = { 0, 2 }, fl = 1, perm[2] = { 1, 0 };
	int64_t lo[2] = { 0, 1 }, hi[2] = { 3, 4 };
	static const double want[6] = { 6, 3, 5, 2, 4, 1 };
	Err e;
	UOp *t = tensor_from(C, DT_FLOAT32, v, s, 2, &e), *p;
	TBuf r;
	int i;

	/* pad to (3, 5), shrink to (3, 3) from column 1, flip axis 1 */
	p = tensor_pad(C, t, b, a, 2, &e);
	assert_true(p->shape[0] == 3 && p->shape[1] == 5);
	p = tensor_shrink(C, p, lo, hi, 2, &e);
	p = tensor_flip(C, p, &fl, 1, &e);
	realize(p, &r);
	/* rows: [0 0 0], [2 3 0]->flip->[0 3 2]... computed below by hand */
	{
		double got[9];

		for (i = 0; i < 9; i++)
			got[i] = tbuf_get(&r, i);
		assert_true(got[0] == 0 && got[1] == 0 && got[2] == 0);
		assert_true(got[3] == 0 && got[4] == 3 && got[5] == 2);
		assert_true(got[6] == 0 && got[7] == 6 && got[8] == 5);
	}
	tbuf_free(&r);
	p = tensor_flip(C, tensor_permute(C, t, perm, 2, &e), (int64_t[]){ 0, 1 }, 2, &e);
	p = tensor_reshape(C, p, (int64_t[]){ 6 }, 1, &e);
	realize(p, &r);
	for (i = 0; i < 6; i++)
		assert_true(tbuf_get(&r, i) == want[i]);
	tbuf_free(&r);
}

static void
test_guard(void **state)
{
	int64_t s[2] = { 1 << 16, 1 << 15 };
	TEvalOpts o = { 0, NULL, 0 };
	Err e;
	TBuf r;
	UOp *u = tensor_alu(C, OP_ADD, tensor_full(C, DT_FLOAT32, 1, s, 2, &e),
	                    uop_constf(C, DT_FLOAT32, 2), &e);

	assert_int_equal(tensor_realize(u, &o, &r, &e), -1);
	assert_non_null(strstr(e.msg, "limit 4.0 GiB"));
	assert_non_null(strstr(e.msg, "add float32 (65536, 32768)"));
	o.mem_limit = 1000;
	u = tensor_alu(C, OP_ADD, tensor_full(C, DT_FLOAT32, 1, (int64_t[]){ 300 }, 1, &e),
	               uop_constf(C, DT_FLOAT32, 2), &e);
	assert_int_equal(tensor_realize(u, &o, &r, &e), -1);
	o.mem_limit = 2000;
	assert_int_equal(tensor_realize(u, &o, &r, &e), 0);
	assert_true(tbuf_get(&r, 299) == 3);
	tbuf_free(&r);
}

/* Function: params substituted; the same function on new arguments */
static void
test_function(void **state)
{
	int64_t s[1] = { 3 };
	double x[3] = { 1, 2, 3 }, y[3] = { 10, 20, 30 };
	Err e;
	UOp *p0 = tensor_param(C, "a", 0, s, 1, DT_FLOAT32, "CPU", &e);
	UOp *p1 = tensor_param(C, "b", 1, s, 1, DT_FLOAT32, "CPU", &e);
	UOp *body = tensor_alu(C, OP_MUL, tensor_alu(C, OP_ADD, p0, p1, &e), p1, &e);
	UOp *a = tensor_from(C, DT_FLOAT32, x, s, 1, &e), *b = tensor_from(C, DT_FLOAT32, y, s, 1, &e);
	UOp *args[2] = { a, b }, *f, *g;
	TBuf r;

	f = tensor_gettuple(C, tensor_function(C, &body, 1, args, 2, &e), 0, &e);
	assert_non_null(f);
	realize(f, &r);
	assert_true(tbuf_get(&r, 0) == 110 && tbuf_get(&r, 2) == 990);
	tbuf_free(&r);
	args[0] = b;
	args[1] = a;
	g = tensor_gettuple(C, tensor_function(C, &body, 1, args, 2, &e), 0, &e);
	realize(g, &r);
	assert_true(tbuf_get(&r, 0) == 11 && tbuf_get(&r, 2) == 99);
	tbuf_free(&r);
	/* a wrong argument shape is refused at construction */
	args[1] = tensor_full(C, DT_FLOAT32, 1, (int64_t[]){ 4 }, 1, &e);
	assert_null(tensor_function(C, &body, 1, args, 2, &e));
	assert_non_null(strstr(e.msg, "param 1"));
}

/* assign: After(buf, Store(buf, val)) reads val; Sink of stores realizes to nothing */
static void
test_store(void **state)
{
	int64_t s[1] = { 3 };
	char dev[] = "CPU";
	char data[8 + 4];
	Err e;
	UOp *buf, *val, *st, *af, *sk;
	TBuf r;

	memcpy(data, s, 8);
	memcpy(data + 8, dev, 4);
	buf = tensor_new(C, OP_BUFFER, DT_INT32, NULL, 0, 0, 1, NULL, data, sizeof data, &e);
	assert_non_null(buf);
	val = tensor_alu(C, OP_ADD, tensor_full(C, DT_INT32, 4, s, 1, &e), uop_constf(C, DT_INT32, 1), &e);
	st = tensor_new(C, OP_STORE, DT_VOID, (UOp *[]){ buf, val }, 2, 0, 0, NULL, NULL, 0, &e);
	assert_non_null(st);
	af = tensor_new(C, OP_AFTER, DT_INT32, (UOp *[]){ buf, st }, 2, 0, 0, NULL, NULL, 0, &e);
	realize(af, &r);
	assert_true(tbuf_get(&r, 0) == 5 && tbuf_get(&r, 2) == 5);
	tbuf_free(&r);
	realize(buf, &r);   /* a fresh buffer is zeros */
	assert_true(tbuf_get(&r, 1) == 0);
	tbuf_free(&r);
	sk = tensor_new(C, OP_SINK, DT_VOID, &st, 1, 0, 0, NULL, NULL, 0, &e);
	realize(sk, &r);
	assert_int_equal(r.dtype, DT_VOID);
	/* a store of another shape is refused, naming both */
	assert_null(tensor_new(C, OP_STORE, DT_VOID, (UOp *[]){ buf, tensor_full(C, DT_INT32, 1, (int64_t[]){ 4 }, 1, &e) },
	                       2, 0, 0, NULL, NULL, 0, &e));
	assert_non_null(strstr(e.msg, "(3,)"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_half),
		cmocka_unit_test(test_wrap_promote),
		cmocka_unit_test(test_threefry),
		cmocka_unit_test_setup_teardown(test_derived, setup, teardown),
		cmocka_unit_test_setup_teardown(test_differential, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compose_graphs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compose_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_views, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_function, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

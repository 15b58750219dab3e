/* test_sched_cpu.c - TVM's CPU GEMM schedule: a register tile one per thread, packed B, vector lanes in C, checked bit for bit. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../interp/kernel/kernel.h"
#include "../interp/sched/sched.h"
#include "../backends/backend.h"
#include "../layout/layout.h"

#include "sched_test.h"

/* out = a @ b (m x k, k x n): an 8 x 32 register tile, B packed in panels of 32 columns */
static void
gemm_schedule(int64_t m, int64_t k, int64_t n)
{
	const char *unroll[3][3] = { { "out", "i1", "j1" }, { "out", "i10", "j10" }, { "out", "ax0", "ax1" } };
	const char *ji[2] = { "j", "i" }, *kij[3] = { "k", "i10", "j10" }, *ij[2] = { "i1", "j1" };
	char packed[96];
	Layout cl;
	SLayout pl = { 0 };
	int i;

	start(matmul(m, k, n));
	OK(sched_reorder(S, "out", ji, 2, &E));
	OK(sched_tile(S, "out", "j", "i", 32, 8, &E));
	OK(sched_reorder(S, "out", ij, 2, &E));
	OK(sched_cache_write(S, "out", "local", &E));
	OK(sched_reverse_compute_at(S, "out_local", "out", "i0", &E));
	OK(sched_fission(S, "out", "i1", 1, NULL, &E));
	OK(sched_reorder(S, "out", kij, 3, &E));
	OK(sched_set_scope(S, "out_local", "local", &E));
	for (i = 0; i < 3; i++) {
		OK(sched_unroll(S, unroll[i][0], unroll[i][1], &E));
		OK(sched_vectorize(S, unroll[i][0], unroll[i][2], &E));
	}
	OK(sched_parallel(S, "out", "j0", &E));
	OK(sched_cache_read(S, "out", "b", "global", &E));
	snprintf(packed, sizeof packed, "(%lld,(32,%lld)):(32,(1,%lld))", (long long)k, (long long)(n / 32),
	         (long long)(32 * k));
	if (cute_parse(packed, &cl, &E) < 0)
		fail_msg("%s", E.msg);
	pl.cute = &cl;
	OK(sched_set_layout(S, "b_global", &pl, &E));
	OK(sched_parallel(S, "b_global", "ax0", &E));
}

static void
test_register_tile(void **state)
{
	(void)state;
	gemm_schedule(16, 8, 64);
	assert_printed("# inputs: a: float32[16, 8], b: float32[8, 64]\n"
	               "# outputs: out: float32[16, 64]\n"
	               "# buffers: out_local: float32[8, 32] local, b_global: float32[8, 64] @ (8,(32,2)):(32,(1,256))\n"
	               "# b_global\n"
	               "for ax0, ax1 in grid(8, 64):  # ax0:THREAD\n"
	               "  b_global[ax0, ax1] = b[ax0, ax1]\n"
	               "# out\n"
	               "for j0, i0 in grid(2, 2):  # j0:THREAD\n"
	               "  for i1, j1 in grid(8, 32):  # i1:UNROLL j1:UPCAST\n"
	               "    out_local[i1, j1] = 0.0\n"
	               "  for k, i10, j10 in grid(8, 8, 32):  # k:REDUCE i10:UNROLL j10:UPCAST\n"
	               "    out_local[i10, j10] += a[i0*8 + i10, k] * b_global[k, j0*32 + j10]\n"
	               "  for ax0, ax1 in grid(8, 32):  # ax0:UNROLL ax1:UPCAST\n"
	               "    out[ax0 + i0*8, ax1 + j0*32] = out_local[ax0, ax1]\n");
	/* the order of every element's sum is the unscheduled one: the same bits */
	assert_same(0);
}

/* the C source: the tile declared in the parallel loop, lanes of 16 floats; run bit for bit */
static void
test_register_tile_c(void **state)
{
	BJitOpts jo = { 0 };
	TBuf bufs[8];
	Buf b;
	uint64_t seed = 3;
	int i, j;

	(void)state;
	gemm_schedule(16, 8, 64);
	buf_init(&b);
	if (backend_source(&b, S->k, D_C, &E) < 0)
		fail_msg("%s", E.msg);
	assert_non_null(strstr(b.s, "  #pragma omp parallel for\n"
	                            "  for (int64_t j0 = 0; j0 < 2; j0++) {  /* thread */\n"
	                            "    float out_local[256];  /* local, one per thread: row-major */\n"));
	assert_non_null(strstr(b.s, "      for (int64_t k = 0; k < 8; k++) {  /* reduce */\n"
	                            "        #pragma GCC unroll 8\n"
	                            "        for (int64_t i10 = 0; i10 < 8; i10++) {  /* unroll */\n"
	                            "          #pragma GCC unroll 2\n"
	                            "          for (int64_t j10 = 0; j10 < 32; j10 += 16) {  /* upcast: 16 lanes at once */\n"
	                            "            const float s_1 = a[i0 * 64 + i10 * 8 + k];\n"
	                            "            tessel_f32x16 out_local_v;\n"
	                            "            __builtin_memcpy(&out_local_v, &out_local[i10 * 32 + j10], sizeof out_local_v);\n"
	                            "            tessel_f32x16 b_global_v;\n"
	                            "            __builtin_memcpy(&b_global_v, &b_global[j0 * 256 + j10 + k * 32], "
	                            "sizeof b_global_v);\n"
	                            "            const tessel_f32x16 v_1 = out_local_v + s_1 * b_global_v;\n"
	                            "            __builtin_memcpy(&out_local[i10 * 32 + j10], &v_1, sizeof v_1);\n"));
	/* the init: one zero in every lane */
	assert_non_null(strstr(b.s, "const tessel_f32x16 v = {s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s};\n"));
	buf_free(&b);
	/* compiled and run: every output the interpreter's, bit for bit (backend_jit_run checks) */
	memset(bufs, 0, sizeof bufs);
	for (i = 0; i < S->k->nbuf; i++) {
		const KBuf *kb = &S->k->buf[i];

		if (kb->role != KB_INPUT)
			continue;
		bufs[i].dtype = kb->dtype;
		bufs[i].ndim = kb->ndim;
		bufs[i].numel = 1;
		for (j = 0; j < kb->ndim; j++) {
			bufs[i].shape[j] = kb->shape[j];
			bufs[i].numel *= kb->shape[j];
		}
		bufs[i].axis = -1;
		bufs[i].data = malloc((size_t)bufs[i].numel * sizeof(float));
		for (j = 0; j < bufs[i].numel; j++)
			((float *)bufs[i].data)[j] = (float)(rnd(&seed) % 2001) / 1000.0f - 1.0f;
	}
	if (backend_jit_run(S->k, bufs, &jo, &E) < 0)
		fail_msg("%s", E.msg);
	freebufs(bufs, S->k->nbuf);
}

/* a register buffer whose value crosses iterations: parallel refuses, naming it */
static void
test_private_refused(void **state)
{
	Kernel *k = kernel_new();
	int64_t n8 = 8, one = 1;
	int x, t, o;
	UOp *i, *zero, *body[2], *st, *sum;
	char *before;

	(void)state;
	x = kernel_add_buffer(k, "x", DT_FLOAT32, AS_GLOBAL, KB_INPUT, &n8, 1, &E);
	o = kernel_add_buffer(k, "out", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, &n8, 1, &E);
	t = kernel_add_buffer(k, "t", DT_FLOAT32, AS_REG, KB_TEMP, &one, 1, &E);
	assert_true(x >= 0 && o >= 0 && t >= 0);
	i = kernel_var(k, "i", 8);
	zero = uop_int(k->c, 0);
	/* t = 0; for i: t[0] = t[0] + x[i]; out[i] = t[0] (a running sum through a register) */
	st = kernel_store(k, kernel_index(k, t, &zero, 1), uop_constf(k->c, DT_FLOAT32, 0), NULL);
	assert_int_equal(kernel_add_stage(k, "t0", st, NULL, &E), 0);
	sum = uop_add(k->c, kernel_load(k, kernel_index(k, t, &zero, 1), NULL),
	              kernel_load(k, kernel_index(k, x, &i, 1), NULL));
	body[0] = kernel_store(k, kernel_index(k, t, &zero, 1), sum, NULL);
	body[1] = kernel_store(k, kernel_index(k, o, &i, 1), kernel_load(k, kernel_index(k, t, &zero, 1), NULL), NULL);
	st = kernel_loop(k, kernel_range(k, i, AX_LOOP, HW_NONE), body, 2);
	assert_int_equal(kernel_add_stage(k, "out", st, NULL, &E), 1);
	S = sched_new(k, NULL, &E);
	kernel_free(k);
	assert_non_null(S);
	before = now();
	assert_refused(sched_parallel(S, "out", "i", &E), before,
	               "parallel: stage out: loop i's iterations would run at once, and they depend on one "
	               "another: iterations (i=0) and (i=1) both access t[0] (a register buffer is one per thread "
	               "only when each iteration writes it before reading it; here in loop i, the first store to "
	               "t reads it)");
	free(before);
}

/* the tile's zeroing in one nest with its update: no statement writes it whole first, until fission */
static void
test_private_needs_overwrite(void **state)
{
	char *before;

	(void)state;
	start(matmul(16, 8, 64));
	{
		const char *ji[2] = { "j", "i" };

		OK(sched_reorder(S, "out", ji, 2, &E));
	}
	OK(sched_tile(S, "out", "j", "i", 32, 8, &E));
	OK(sched_cache_write(S, "out", "local", &E));
	OK(sched_reverse_compute_at(S, "out_local", "out", "i0", &E));
	OK(sched_set_scope(S, "out_local", "local", &E));
	before = now();
	assert_refused(sched_parallel(S, "out", "j0", &E), before,
	               "both access out_local[0, 0] (a register buffer is one per thread only when each "
	               "iteration writes it before reading it; here in loop i0, the first statement to touch "
	               "out_local is not a loop nest around one store to it (s:fission separates an init from "
	               "its update))");
	free(before);
	/* the init in a nest of its own writes the whole tile before it is read: accepted */
	OK(sched_fission(S, "out", "j1", 1, NULL, &E));
	OK(sched_parallel(S, "out", "j0", &E));
	assert_same(0);
	stop();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_register_tile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_register_tile_c, setup, teardown),
		cmocka_unit_test_setup_teardown(test_private_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_private_needs_overwrite, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

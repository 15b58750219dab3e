/* test_sched2.c - placement and memory primitives: compute_inline, compute_at, reverse_compute_at, caches, set_scope, decompose_reduction. */
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

#include "sched_test.h"

static UOp *
contiguous(UOp *a)
{
	return ok(tensor_new(C, OP_CONTIGUOUS, (DType)a->dtype, &a, 1, 0, 0, NULL, NULL, 0, &E));
}

/* softmax over rows with the exponentials in their own stage (xexp) */
static UOp *
softmax(UOp *a)
{
	int64_t ax = 1;
	UOp *m, *x, *sum;

	m = ok(tensor_reduce(C, OP_MAX, a, &ax, 1, 1, &E));
	x = ok(tensor_unary(C, OP_EXP2, ok(tensor_alu(C, OP_SUB, a, m, &E)), &E));
	x = contiguous(ok(tensor_named(C, x, "xexp", &E)));
	sum = ok(tensor_unary(C, OP_RECIP, ok(tensor_reduce(C, OP_ADD, x, &ax, 1, 1, &E)), &E));
	return ok(tensor_alu(C, OP_MUL, x, sum, &E));
}

/* y = 2 * x + 1 in its own stage, then out[i, j] = y[i, j] + y[i, j + 1]: a stencil over y */
static UOp *
stencil(int64_t m, int64_t n)
{
	int64_t b0[2] = { 0, 0 }, e0[2] = { m, n }, b1[2] = { 0, 1 }, e1[2] = { m, n + 1 };
	UOp *y = ok(tensor_alu(C, OP_MUL, param("x", 0, m, n + 1), uop_constf(C, DT_FLOAT32, 2), &E));

	y = ok(tensor_alu(C, OP_ADD, y, uop_constf(C, DT_FLOAT32, 1), &E));
	y = contiguous(ok(tensor_named(C, y, "y", &E)));
	return ok(tensor_alu(C, OP_ADD, ok(tensor_shrink(C, y, b0, e0, 2, &E)),
	                     ok(tensor_shrink(C, y, b1, e1, 2, &E)), &E));
}

/* ---- compute_inline ---- */

static void
test_compute_inline(void **state)
{
	char *before, *t;

	(void)state;
	start(softmax(param("x", 0, 2, 4)));
	show("softmax");
	before = now();
	assert_refused(sched_compute_inline(S, "xmax", &E), before,
	               "compute_inline: stage xmax reduces (loop j is REDUCE); TVM's compute_inline "
	               "takes an element-wise block, not a reduction");
	assert_refused(sched_compute_inline(S, "out", &E), before,
	               "compute_inline: stage out writes out, an output; TVM does not inline an output block");
	assert_refused(sched_compute_inline(S, "nope", &E), before,
	               "compute_inline: no stage nope (the stages: xmax, xexp, xsum, out)");
	free(before);
	OK(sched_compute_inline(S, "xexp", &E));
	show("inline xexp");
	assert_printed("# inputs: x: float32[2, 4]\n"
	               "# outputs: out: float32[2, 4]\n"
	               "# buffers: xmax: float32[2], xsum: float32[2]\n"
	               "# xmax\n"
	               "for i in range(2):\n"
	               "  xmax[i] = -inf\n"
	               "  for j in range(4):  # REDUCE\n"
	               "    xmax[i] = max(xmax[i], x[i, j])\n"
	               "# xsum\n"
	               "for i in range(2):\n"
	               "  xsum[i] = 0.0\n"
	               "  for j in range(4):  # REDUCE\n"
	               "    xsum[i] += exp2(x[i, j] - xmax[i])\n"
	               "# out\n"
	               "for i, j in grid(2, 4):\n"
	               "  out[i, j] = exp2(x[i, j] - xmax[i]) * 1/xsum[i]\n");
	assert_same(1e-6);
	t = trace();
	assert_string_equal(t, "s:compute_inline(\"xexp\")\n");
	free(t);
	OK(sched_undo(S, &E));
	/* a split with a tail guards the store */
	OK(sched_split(S, "xexp", "j", (int64_t[]){ 0, 3 }, 2, &E));
	before = now();
	assert_refused(sched_compute_inline(S, "xexp", &E), before,
	               "compute_inline: stage xexp: the store to xexp is under `if j0*3 + j1 < 4:`; "
	               "compute_inline does not carry a stage's guard into a where at its loads");
	free(before);
	OK(sched_undo(S, &E));
	OK(sched_split(S, "xexp", "j", (int64_t[]){ 0, 2 }, 2, &E));
	before = now();
	assert_refused(sched_compute_inline(S, "xexp", &E), before,
	               "compute_inline: stage xexp: the store xexp[i, j0*2 + j1] = ");
	assert_refused(sched_compute_inline(S, "xexp", &E), before,
	               "does not write xexp by its loop variables (index 1 is not a loop of extent 4 of "
	               "its own)");
	free(before);
	stop();

	/* a padded read is a gated load: the inlined value goes under a where */
	{
		int64_t b0[2] = { 1, 0 }, a0[2] = { 0, 0 };
		UOp *y = ok(tensor_alu(C, OP_MUL, param("x", 0, 3, 4), uop_constf(C, DT_FLOAT32, 2), &E));

		y = contiguous(ok(tensor_named(C, y, "y", &E)));
		start(ok(tensor_pad(C, y, b0, a0, 2, &E)));
	}
	show("padded");
	OK(sched_compute_inline(S, "y", &E));
	show("inline y into a padded read");
	t = now();
	assert_non_null(strstr(t, "where("));
	free(t);
	assert_same(0);
	stop();

	/* a stencil: each out element inlines y twice, at two indices */
	start(stencil(3, 4));
	show("stencil");
	OK(sched_compute_inline(S, "y", &E));
	show("inline y");
	assert_same(0);
	stop();
}

/* ---- cache_read, cache_write, set_scope ---- */

static void
test_cache(void **state)
{
	char *before, *t;

	(void)state;
	start(matmul(3, 4, 5));
	OK(sched_cache_read(S, "out", "a", "global", &E));
	show("cache_read a global");
	assert_printed("# inputs: a: float32[3, 4], b: float32[4, 5]\n"
	               "# outputs: out: float32[3, 5]\n"
	               "# buffers: a_global: float32[3, 4]\n"
	               "# a_global\n"
	               "for ax0, ax1 in grid(3, 4):\n"
	               "  a_global[ax0, ax1] = a[ax0, ax1]\n"
	               "# out\n"
	               "for i, j in grid(3, 5):\n"
	               "  out[i, j] = 0.0\n"
	               "  for k in range(4):  # REDUCE\n"
	               "    out[i, j] += a_global[i, k] * b[k, j]\n");
	assert_same(0);
	OK(sched_cache_write(S, "out", "global", &E));
	show("cache_write out global");
	t = now();
	assert_non_null(strstr(t, "    out_global[i, j] += a_global[i, k] * b[k, j]\n"
	                          "# out_global\n"
	                          "for ax0, ax1 in grid(3, 5):\n"
	                          "  out[ax0, ax1] = out_global[ax0, ax1]\n"));
	free(t);
	assert_same(0);
	/* a temporary changes scope; the whole kernel runs in one thread of one block, so the
	** launch boundaries are what decide: a shared a_global written in one stage and read in
	** the next is read uninitialized */
	OK(sched_set_scope(S, "out_global", "local", &E));
	t = now();
	assert_non_null(strstr(t, "out_global: float32[3, 5] local"));
	free(t);
	t = trace();
	assert_string_equal(t, "s:cache_read(\"out\", \"a\", \"global\")\n"
	                    "s:cache_write(\"out\", \"global\")\n"
	                    "s:set_scope(\"out_global\", \"local\")\n");
	free(t);
	{
		TBuf bufs[32];
		Err e;

		assert_int_equal(run(S->k, 1, bufs, &e), -1);
		assert_non_null(strstr(e.msg, "uninitialized: stage out_global"));
		freebufs(bufs, S->k->nbuf);
	}
	OK(sched_undo(S, &E));
	before = now();
	assert_refused(sched_set_scope(S, "a", "shared", &E), before,
	               "set_scope: a is an input; only temporaries change scope");
	assert_refused(sched_set_scope(S, "out", "shared", &E), before,
	               "set_scope: out is an output; only temporaries change scope");
	assert_refused(sched_set_scope(S, "a_global", "texture", &E), before,
	               "set_scope: unknown scope \"texture\" (global, shared, local)");
	assert_refused(sched_set_scope(S, "q", "shared", &E), before, "set_scope: no buffer q");
	assert_refused(sched_cache_read(S, "out", "a", "global", &E), before,
	               "cache_read: stage out does not read a");
	assert_refused(sched_cache_read(S, "out_global", "b", "shared", &E), before,
	               "cache_read: stage out_global does not read b");
	assert_refused(sched_cache_read(S, "out", "out_global", "shared", &E), before,
	               "cache_read: stage out writes out_global; cache_read caches a buffer the stage "
	               "only reads (cache_write caches what it writes)");
	assert_refused(sched_cache_read(S, "out", "b", "smem", &E), before,
	               "cache_read: unknown scope \"smem\"");
	free(before);
	stop();

	/* the init in a stage of its own: cache_write would lose it */
	start(matmul(3, 4, 5));
	OK(sched_decompose_reduction(S, "out", "k", &E));
	before = now();
	assert_refused(sched_cache_write(S, "out", "local", &E), before,
	               "cache_write: stage out_init also writes out; the copy back would lose what it "
	               "wrote (cache_write before decompose_reduction)");
	free(before);
}

/* ---- decompose_reduction ---- */

static void
test_decompose_reduction(void **state)
{
	char *before;

	(void)state;
	start(matmul(3, 4, 5));
	before = now();
	assert_refused(sched_decompose_reduction(S, "out", "i", &E), before,
	               "decompose_reduction: stage out: loop i encloses the init out[...]; the init "
	               "goes above the loop");
	assert_refused(sched_decompose_reduction(S, "out", "q", &E), before,
	               "decompose_reduction: stage out has no loop q (its loops: i, j, k)");
	free(before);
	OK(sched_decompose_reduction(S, "out", "k", &E));
	show("decompose_reduction out k");
	assert_printed("# inputs: a: float32[3, 4], b: float32[4, 5]\n"
	               "# outputs: out: float32[3, 5]\n"
	               "# out_init\n"
	               "for i, j in grid(3, 5):\n"
	               "  out[i, j] = 0.0\n"
	               "# out\n"
	               "for i, j, k in grid(3, 5, 4):  # k:REDUCE\n"
	               "  out[i, j] += a[i, k] * b[k, j]\n");
	assert_same(0);
	/* the update's nest is perfect now: k goes outside */
	OK(sched_reorder(S, "out", (const char *[]){ "k", "i" }, 2, &E));
	assert_same(1e-6);
	before = now();
	assert_refused(sched_decompose_reduction(S, "out", "k", &E), before,
	               "decompose_reduction: stage out has no reduction init");
	free(before);
}

/* ---- compute_at, reverse_compute_at ---- */

static void
test_compute_at(void **state)
{
	char *before;

	(void)state;
	start(stencil(3, 4));
	before = now();
	assert_refused(sched_compute_at(S, "out", "y", "j", &E), before,
	               "compute_at: stage out comes after stage y; compute_at moves a producer into a "
	               "later consumer");
	assert_refused(sched_compute_at(S, "y", "out", "q", &E), before,
	               "compute_at: stage out has no loop q (its loops: i, j)");
	free(before);
	OK(sched_compute_at(S, "y", "out", "j", &E));
	show("compute_at y out j");
	assert_printed("# inputs: x: float32[3, 5]\n"
	               "# outputs: out: float32[3, 4]\n"
	               "# buffers: y: float32[1, 2]\n"
	               "# out\n"
	               "for i, j in grid(3, 4):\n"
	               "  for j0 in range(2):\n"
	               "    y[0, j0] = x[i, j + j0] * 2.0 + 1.0\n"
	               "  out[i, j] = y[0, 0] + y[0, 1]\n");
	assert_same(0);
	OK(sched_undo(S, &E));
	OK(sched_compute_at(S, "y", "out", "i", &E));
	show("compute_at y out i");
	assert_same(0);
	OK(sched_undo(S, &E));
	stop();

	/* a span that moves with an outer loop: the extent is not a constant */
	{
		Kernel *k = kernel_new();
		int64_t n4 = 4, s2[2] = { 4, 3 };
		int x = kernel_add_buffer(k, "x", DT_FLOAT32, AS_GLOBAL, KB_INPUT, &n4, 1, &E);
		int y = kernel_add_buffer(k, "y", DT_FLOAT32, AS_GLOBAL, KB_TEMP, &n4, 1, &E);
		int o = kernel_add_buffer(k, "out", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, s2, 2, &E);
		UOp *i = kernel_var(k, "i", 4), *j = kernel_var(k, "j", 3), *ij[2] = { i, j }, *st, *ix;

		st = kernel_store(k, kernel_index(k, y, &i, 1), kernel_load(k, kernel_index(k, x, &i, 1), NULL), NULL);
		st = kernel_loop(k, kernel_range(k, i, AX_LOOP, HW_NONE), &st, 1);
		assert_int_equal(kernel_add_stage(k, "y", st, NULL, &E), 0);
		ix = uop_idiv(k->c, uop_add(k->c, uop_mul(k->c, i, uop_int(k->c, 2)), j), uop_int(k->c, 3));
		st = kernel_store(k, kernel_index(k, o, ij, 2), kernel_load(k, kernel_index(k, y, &ix, 1), NULL), NULL);
		st = kernel_loop(k, kernel_range(k, j, AX_LOOP, HW_NONE), &st, 1);
		st = kernel_loop(k, kernel_range(k, i, AX_LOOP, HW_NONE), &st, 1);
		assert_int_equal(kernel_add_stage(k, "out", st, NULL, &E), 1);
		S = sched_new(k, NULL, &E);
		kernel_free(k);
		assert_non_null(S);
	}
	before = now();
	assert_refused(sched_compute_at(S, "y", "out", "i", &E), before,
	               "compute_at: y[(i*2 + j)//3]: the extent of dimension 0 under loop i is not a "
	               "constant (its span depends on i, a loop outside it)");
	free(before);
	OK(sched_compute_at(S, "y", "out", "j", &E));
	assert_same(0);
	stop();

	/* a reduction producer: its reduce loop stays whole inside, renamed (the consumer has a j) */
	start(softmax(param("x", 0, 3, 5)));
	before = now();
	assert_refused(sched_compute_at(S, "xexp", "out", "i", &E), before,
	               "compute_at: stage xsum also reads xexp; compute_at computes only what stage out reads");
	assert_refused(sched_compute_at(S, "xmax", "out", "i", &E), before,
	               "compute_at: stage xexp also reads xmax; compute_at computes only what stage out reads");
	free(before);
	OK(sched_compute_inline(S, "xexp", &E));
	OK(sched_compute_at(S, "xsum", "out", "i", &E));
	show("compute_at xsum out i");
	assert_printed("# inputs: x: float32[3, 5]\n"
	               "# outputs: out: float32[3, 5]\n"
	               "# buffers: xmax: float32[3], xsum: float32[1]\n"
	               "# xmax\n"
	               "for i in range(3):\n"
	               "  xmax[i] = -inf\n"
	               "  for j in range(5):  # REDUCE\n"
	               "    xmax[i] = max(xmax[i], x[i, j])\n"
	               "# out\n"
	               "for i in range(3):\n"
	               "  xsum[0] = 0.0\n"
	               "  for j0 in range(5):  # REDUCE\n"
	               "    xsum[0] += exp2(x[i, j0] - xmax[i])\n"
	               "  for j in range(5):\n"
	               "    out[i, j] = exp2(x[i, j] - xmax[i]) * 1/xsum[0]\n");
	assert_same(1e-6);
	before = now();
	assert_refused(sched_compute_at(S, "xmax", "out", "j", &E), before,
	               "compute_at into a loop that does not cover the consumer's region: stage out reads "
	               "xmax[i] outside loop j");
	free(before);
	OK(sched_compute_at(S, "xmax", "out", "i", &E));
	assert_same(1e-6);
	stop();

	/* an output is not moved; a loop of the consumer bound to threads shares a shared buffer */
	start(stencil(3, 32));
	OK(sched_bind(S, "out", "j", "thread.x", &E));
	OK(sched_set_scope(S, "y", "shared", &E));
	before = now();
	assert_refused(sched_compute_at(S, "y", "out", "j", &E), before,
	               "compute_at: y is shared memory, which threads share: loop j is bound to thread.x, "
	               "and every thread runs what moves under loop j: iterations (j=0) and (j=1) both "
	               "access y[0, 1]");
	free(before);
	/* spread over the threads under i instead */
	OK(sched_compute_at(S, "y", "out", "i", &E));
	show("compute_at y out i, threads inside");
	assert_same(0);
	stop();
}

/* the classic GEMM: shared tiles of A and B per k-step, loaded by the block's threads */
static void
test_gemm_shared(void **state)
{
	char *t;

	(void)state;
	start(matmul(64, 64, 64));
	OK(sched_cache_read(S, "out", "a", "shared", &E));
	OK(sched_cache_read(S, "out", "b", "shared", &E));
	OK(sched_decompose_reduction(S, "out", "k", &E));
	OK(sched_tile(S, "out", "i", "j", 16, 16, &E));
	OK(sched_split(S, "out", "k", (int64_t[]){ 0, 16 }, 2, &E));
	OK(sched_reorder(S, "out", (const char *[]){ "k0", "i1", "j1" }, 3, &E));
	OK(sched_bind(S, "out", "i0", "blockIdx.y", &E));
	OK(sched_bind(S, "out", "j0", "blockIdx.x", &E));
	OK(sched_bind(S, "out", "i1", "threadIdx.y", &E));
	OK(sched_bind(S, "out", "j1", "threadIdx.x", &E));
	show("gemm before compute_at");
	OK(sched_compute_at(S, "a_shared", "out", "k0", &E));
	show("compute_at a_shared");
	OK(sched_compute_at(S, "b_shared", "out", "k0", &E));
	show("compute_at b_shared");
	assert_same(1e-5);
	t = now();
	assert_non_null(strstr(t, "    for k0 in range(4):  # REDUCE\n"
	                          "      barrier()\n"
	                          "      for ty0 in range(16):  # thread.y LOCAL\n"
	                          "        for tx0 in range(16):  # thread.x LOCAL\n"
	                          "          b_shared[ty0, tx0] = b[k0*16 + ty0, j0*16 + tx0]\n"
	                          "      for ty in range(16):  # thread.y LOCAL\n"
	                          "        for tx in range(16):  # thread.x LOCAL\n"
	                          "          a_shared[ty, tx] = a[i0*16 + ty, k0*16 + tx]\n"
	                          "      barrier()\n"
	                          "      for i1 in range(16):  # thread.y LOCAL\n"));
	free(t);
	t = trace();
	if (getenv("TESSEL_SHOW"))
		print_message("%s", t);
	free(t);
}

/* a register accumulator per thread, written back under the thread loop */
static void
test_reverse_compute_at(void **state)
{
	char *before;

	(void)state;
	start(matmul(8, 6, 8));
	OK(sched_cache_write(S, "out", "local", &E));
	OK(sched_tile(S, "out", "i", "j", 4, 4, &E));
	OK(sched_bind(S, "out", "i0", "block.y", &E));
	OK(sched_bind(S, "out", "j0", "block.x", &E));
	OK(sched_bind(S, "out", "i1", "thread.y", &E));
	OK(sched_bind(S, "out", "j1", "thread.x", &E));
	before = now();
	assert_refused(sched_reverse_compute_at(S, "out", "out_local", "ax0", &E), before,
	               "reverse_compute_at: stage out comes before stage out_local; reverse_compute_at "
	               "moves a consumer under an earlier producer");
	assert_refused(sched_reverse_compute_at(S, "out_local", "out", "k", &E), before,
	               "reverse_compute_at: loop k is reduction loop k of stage out: the elements of "
	               "out_local are not final at the end of one iteration");
	free(before);
	OK(sched_reverse_compute_at(S, "out_local", "out", "j1", &E));
	show("reverse_compute_at out_local out j1");
	assert_printed("# inputs: a: float32[8, 6], b: float32[6, 8]\n"
	               "# outputs: out: float32[8, 8]\n"
	               "# buffers: out_local: float32[8, 8] local\n"
	               "# out\n"
	               "for i0 in range(2):  # block.y GLOBAL\n"
	               "  for j0 in range(2):  # block.x GLOBAL\n"
	               "    for i1 in range(4):  # thread.y LOCAL\n"
	               "      for j1 in range(4):  # thread.x LOCAL\n"
	               "        out_local[i0*4 + i1, j0*4 + j1] = 0.0\n"
	               "        for k in range(6):  # REDUCE\n"
	               "          out_local[i0*4 + i1, j0*4 + j1] += a[i0*4 + i1, k] * b[k, j0*4 + j1]\n"
	               "        out[i0*4 + i1, j0*4 + j1] = out_local[i0*4 + i1, j0*4 + j1]\n");
	assert_same(1e-6);
	stop();

	/* two loads of the producer's buffer: no one-to-one region */
	start(stencil(3, 4));
	before = now();
	assert_refused(sched_reverse_compute_at(S, "out", "y", "i", &E), before,
	               "reverse_compute_at: stage out reads y[i, j + 1]; reverse_compute_at needs one load "
	               "of y whose indices are the loop variables over out's dimensions");
	free(before);
	stop();

	/* serial: each row of the result right after the row it needs */
	start(softmax(param("x", 0, 3, 5)));
	OK(sched_reverse_compute_at(S, "xexp", "xmax", "i", &E));
	show("reverse_compute_at xexp xmax i");
	assert_same(1e-6);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_compute_inline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decompose_reduction, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compute_at, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gemm_shared, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reverse_compute_at, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

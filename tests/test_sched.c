/* test_sched.c - schedule primitives: printed results, runs against the unscheduled kernel, refusals, undo, the trace. */
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



/* ---- graphs ---- */



/* softmax over rows as lua_tensor.c builds it: e / e.sum with e = exp(x - x.max) */
static UOp *
softmax(UOp *a)
{
	int64_t ax = 1;
	UOp *m, *x, *sum;

	m = ok(tensor_reduce(C, OP_MAX, a, &ax, 1, 1, &E));
	x = ok(tensor_alu(C, OP_SUB, a, m, &E));
	x = ok(tensor_alu(C, OP_MUL, x, uop_constf(C, DT_FLOAT32, 1.4426950408889634), &E));
	x = ok(tensor_unary(C, OP_EXP2, x, &E));
	sum = ok(tensor_unary(C, OP_RECIP, ok(tensor_reduce(C, OP_ADD, x, &ax, 1, 1, &E)), &E));
	return ok(tensor_alu(C, OP_MUL, x, sum, &E));
}


/* row sums of an (m, n) input */
static UOp *
rowsum(int64_t m, int64_t n)
{
	int64_t ax = 1;

	return ok(tensor_reduce(C, OP_ADD, param("x", 0, m, n), &ax, 1, 0, &E));
}

/* 2 * x + 1 over (m, n) */
static UOp *
affine(int64_t m, int64_t n)
{
	UOp *x = ok(tensor_alu(C, OP_MUL, param("x", 0, m, n), uop_constf(C, DT_FLOAT32, 2), &E));

	return ok(tensor_alu(C, OP_ADD, x, uop_constf(C, DT_FLOAT32, 1), &E));
}





/* ---- running ---- */







#define OK(call) do { if ((call) < 0) fail_msg("%s: %s", #call, E.msg); } while (0)



/* ---- hand-built kernels ---- */

/* out[i] = 0 in one stage, then out[i] += x[i, j] with j a REDUCE loop directly inside i */
static Kernel *
acc_kernel(int64_t m, int64_t n)
{
	Kernel *k = kernel_new();
	int64_t s2[2] = { m, n };
	int x = kernel_add_buffer(k, "x", DT_FLOAT32, AS_GLOBAL, KB_INPUT, s2, 2, &E);
	int o = kernel_add_buffer(k, "out", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, &m, 1, &E);
	UOp *i = kernel_var(k, "i", m), *j = kernel_var(k, "j", n), *ij[2] = { i, j }, *oi, *v, *st;

	oi = kernel_index(k, o, &i, 1);
	st = kernel_store(k, oi, kernel_const(k, DT_FLOAT32, 0), NULL);
	st = kernel_loop(k, kernel_range(k, i, AX_LOOP, HW_NONE), &st, 1);
	assert_int_equal(kernel_add_stage(k, "init", st, NULL, &E), 0);
	v = kernel_alu(k, OP_ADD, DT_FLOAT32, (UOp *[]){ kernel_load(k, oi, NULL),
	               kernel_load(k, kernel_index(k, x, ij, 2), NULL) }, 2);
	st = kernel_store(k, oi, v, NULL);
	st = kernel_loop(k, kernel_range(k, j, AX_REDUCE, HW_NONE), &st, 1);
	st = kernel_loop(k, kernel_range(k, i, AX_LOOP, HW_NONE), &st, 1);
	assert_int_equal(kernel_add_stage(k, "acc", st, NULL, &E), 1);
	return k;
}

/* y[i + j] = x[i, j]: the last iteration to write an element wins, so the order matters */
static Kernel *
diag_kernel(int64_t m, int64_t n)
{
	Kernel *k = kernel_new();
	int64_t s2[2] = { m, n }, sy = m + n - 1;
	int x = kernel_add_buffer(k, "x", DT_FLOAT32, AS_GLOBAL, KB_INPUT, s2, 2, &E);
	int y = kernel_add_buffer(k, "y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, &sy, 1, &E);
	UOp *i = kernel_var(k, "i", m), *j = kernel_var(k, "j", n), *ij[2] = { i, j }, *st, *d;

	d = uop_add(k->c, i, j);
	st = kernel_store(k, kernel_index(k, y, &d, 1), kernel_load(k, kernel_index(k, x, ij, 2), NULL), NULL);
	st = kernel_loop(k, kernel_range(k, j, AX_LOOP, HW_NONE), &st, 1);
	st = kernel_loop(k, kernel_range(k, i, AX_LOOP, HW_NONE), &st, 1);
	assert_int_equal(kernel_add_stage(k, "diag", st, NULL, &E), 0);
	return k;
}

static void
start_kernel(Kernel *k)
{
	S = sched_new(k, NULL, &E);
	kernel_free(k);
	if (!S)
		fail_msg("sched_new: %s", E.msg);
}

/* ---- split ---- */

static void
test_split(void **state)
{
	int64_t f[3] = { 0, 4 };
	char *before, *t;

	(void)state;
	/* 10 by 4: three outer iterations, the last guarded */
	start(rowsum(3, 10));
	OK(sched_split(S, "out", "j", f, 2, &E));
	show("split j {nil, 4}");
	assert_printed("# inputs: x: float32[3, 10]\n"
	               "# outputs: out: float32[3]\n"
	               "# out\n"
	               "for i in range(3):\n"
	               "  out[i] = 0.0\n"
	               "  for j0, j1 in grid(3, 4):  # j0:REDUCE j1:REDUCE\n"
	               "    if j0*4 + j1 < 10:\n"
	               "      out[i] += x[i, j0*4 + j1]\n");
	assert_same(0);
	/* split again: the new loops are loops like any other */
	f[0] = 3;
	f[1] = 0;
	OK(sched_split(S, "out", "i", f, 2, &E));
	show("split i {3, nil}");
	assert_same(0);
	t = trace();
	assert_string_equal(t, "s:split(\"out\", \"j\", {nil, 4})\ns:split(\"out\", \"i\", {3, 1})\n");
	free(t);
	sched_free(S);
	S = NULL;

	/* exact factors: no guard; three factors */
	start(softmax(param("x", 0, 4, 8)));
	f[0] = 2;
	f[1] = 0;
	f[2] = 2;
	OK(sched_split(S, "out", "j", f, 3, &E));
	show("softmax out j {2, nil, 2}");
	t = now();
	assert_non_null(strstr(t, "for i, j0, j1, j2 in grid(4, 2, 2, 2):\n"));
	assert_non_null(strstr(t, "x[i, j0*4 + j1*2 + j2]"));
	assert_null(strstr(t, "if "));
	free(t);
	assert_same(0);
	/* a product past the extent is allowed (TVM's predicate) */
	f[0] = 3;
	f[1] = 3;
	OK(sched_split(S, "xsum", "j", f, 2, &E));
	t = now();
	assert_non_null(strstr(t, "if j0*3 + j1 < 8:"));
	free(t);
	assert_same(0);

	/* refusals, each leaving the kernel as it was */
	before = now();
	f[0] = 2;
	f[1] = 3;
	assert_refused(sched_split(S, "xmax", "j", f, 2, &E), before,
	               "split: stage xmax: loop j: the factors' product 6 is less than the extent 8; "
	               "iteration j=6 would be lost");
	f[1] = -3;
	assert_refused(sched_split(S, "xmax", "j", f, 2, &E), before, "factor 2 is -3");
	f[0] = 0;
	f[1] = -1;
	assert_refused(sched_split(S, "xmax", "j", f, 2, &E), before, "factors 1 and 2 are both nil");
	assert_refused(sched_split(S, "xmax", "j", f, 1, &E), before, "give 2 to 8 factors, not 1");
	f[1] = 4;
	assert_refused(sched_split(S, "nope", "j", f, 2, &E), before,
	               "split: no stage nope (the stages: xmax, xsum, out)");
	assert_refused(sched_split(S, "xmax", "q", f, 2, &E), before,
	               "split: stage xmax has no loop q (its loops: i, j)");
	OK(sched_bind(S, "xmax", "i", "thread.x", &E));
	free(before);
	before = now();
	assert_refused(sched_split(S, "xmax", "i", f, 2, &E), before,
	               "split: stage xmax: loop i is bound to thread.x; TVM does not split a bound loop");
	free(before);
	assert_same(0);
}

/* ---- fuse ---- */

static void
test_fuse(void **state)
{
	const char *ij[2] = { "i", "j" }, *jk[2] = { "j", "k" }, *ik[2] = { "i", "k" };
	char *before, *t;

	(void)state;
	start(affine(3, 4));
	OK(sched_fuse(S, "out", ij, 2, &E));
	show("fuse i, j");
	assert_printed("# inputs: x: float32[3, 4]\n"
	               "# outputs: out: float32[3, 4]\n"
	               "# out\n"
	               "for i_j_fused in range(12):\n"
	               "  out[i_j_fused//4, i_j_fused%4] = x[i_j_fused//4, i_j_fused%4] * 2.0 + 1.0\n");
	assert_same(0);
	t = trace();
	assert_string_equal(t, "s:fuse(\"out\", {\"i\", \"j\"})\n");
	free(t);
	sched_free(S);
	S = NULL;

	/* matmul: the spatial loops fuse; k is REDUCE and not alone in j's body */
	start(matmul(3, 4, 5));
	show("matmul");
	before = now();
	assert_refused(sched_fuse(S, "out", jk, 2, &E), before,
	               "fuse: stage out: loops j and k are not perfectly nested: loop j's body holds 2 "
	               "statements; fuse needs loop k alone in it");
	assert_refused(sched_fuse(S, "out", ik, 2, &E), before,
	               "fuse: stage out: loop k is not directly inside loop i");
	OK(sched_fuse(S, "out", ij, 2, &E));
	show("matmul fuse i, j");
	assert_same(0);
	OK(sched_bind(S, "out", "i_j_fused", "block.x", &E));
	free(before);
	before = now();
	assert_refused(sched_split(S, "out", "i_j_fused", (int64_t[]){ 0, 4 }, 2, &E), before,
	               "bound to block.x");
	free(before);
	sched_free(S);
	S = NULL;

	/* a REDUCE loop alone inside a spatial one */
	start_kernel(acc_kernel(3, 5));
	before = now();
	assert_refused(sched_fuse(S, "acc", ij, 2, &E), before,
	               "fuse: stage acc: loop i is LOOP and loop j is REDUCE; TVM does not fuse a "
	               "reduction loop with a spatial one");
	OK(sched_bind(S, "acc", "i", "thread.x", &E));
	free(before);
	before = now();
	assert_refused(sched_fuse(S, "acc", ij, 2, &E), before,
	               "fuse: stage acc: loop i is bound to thread.x; fuse before binding");
	free(before);
}

/* ---- reorder ---- */

static void
test_reorder(void **state)
{
	const char *ji[2] = { "j", "i" }, *ki[2] = { "k", "i" }, *kj[2] = { "k", "j" };
	char *before;

	(void)state;
	start(matmul(3, 4, 5));
	OK(sched_reorder(S, "out", ji, 2, &E));
	show("matmul reorder j, i");
	assert_printed("# inputs: a: float32[3, 4], b: float32[4, 5]\n"
	               "# outputs: out: float32[3, 5]\n"
	               "# out\n"
	               "for j, i in grid(5, 3):\n"
	               "  out[i, j] = 0.0\n"
	               "  for k in range(4):  # REDUCE\n"
	               "    out[i, j] += a[i, k] * b[k, j]\n");
	assert_same(0);
	before = now();
	assert_refused(sched_reorder(S, "out", ki, 2, &E), before,
	               "reorder: stage out: the nest from loop i to loop k is not perfect: loop i's body "
	               "holds 2 statements");
	assert_refused(sched_reorder(S, "out", (const char *[]){ "i", "i" }, 2, &E), before,
	               "loop i is given twice");
	free(before);
	sched_free(S);
	S = NULL;

	/* a reduction loop moved outside the spatial one: each out[i] still sums j in order */
	start_kernel(acc_kernel(3, 5));
	OK(sched_reorder(S, "acc", ji, 2, &E));
	show("acc reorder j, i");
	assert_same(0);
	sched_free(S);
	S = NULL;

	/* two reduction loops trade places: the sums round differently */
	{
		int64_t ax[2] = { 1, 2 }, s3[3] = { 3, 4, 5 };
		UOp *x = ok(tensor_param(C, "x", 0, s3, 3, DT_FLOAT32, NULL, &E));

		start(ok(tensor_reduce(C, OP_ADD, x, ax, 2, 0, &E)));
	}
	show("sum over j, k");
	OK(sched_reorder(S, "out", kj, 2, &E));
	show("reorder k, j");
	assert_same(1e-5);
	sched_free(S);
	S = NULL;

	/* y[i + j] = x[i, j]: the order decides which write survives */
	start_kernel(diag_kernel(3, 4));
	before = now();
	assert_refused(sched_reorder(S, "diag", ji, 2, &E), before,
	               "reorder: stage diag: the order of the iterations of loops i to j matters: "
	               "iterations (i=0, j=1) and (i=1, j=0) both access y[1]");
	free(before);
}

/* ---- bind ---- */

static void
test_bind(void **state)
{
	char *before;

	(void)state;
	start(softmax(param("x", 0, 4, 8)));
	OK(sched_bind(S, "out", "i", "blockIdx.x", &E));
	OK(sched_bind(S, "out", "j", "thread.x", &E));
	show("bind out i, j");
	assert_same(0);
	before = now();
	assert_refused(sched_bind(S, "xsum", "j", "thread.x", &E), before,
	               "bind: stage xsum: loop j is REDUCE; TVM binds a reduction loop to threads only "
	               "with a cross-thread reduction (allreduce)");
	assert_refused(sched_bind(S, "xsum", "j", "block.y", &E), before,
	               "blocks would race on its accumulator");
	assert_refused(sched_bind(S, "xsum", "i", "threadIdx.q", &E), before,
	               "bind: unknown axis \"threadIdx.q\"");
	assert_refused(sched_bind(S, "out", "j", "thread.y", &E), before,
	               "bind: stage out: loop j is already bound to thread.x");
	free(before);
	assert_same(0);
	sched_free(S);
	S = NULL;

	/* a warp binding runs 32 lanes: the stores need a lane loop */
	start(affine(3, 20));
	before = now();
	assert_refused(sched_bind(S, "out", "i", "warp", &E), before,
	               "bind: stage out: the store out[i, j] = x[i, j] * 2.0 + 1.0 is not inside a loop "
	               "bound to lane, so every thread runs it and they race");
	free(before);
	OK(sched_bind(S, "out", "j", "lane", &E));
	OK(sched_bind(S, "out", "i", "warp", &E));
	show("warp and lane");
	assert_same(0);
	sched_free(S);
	S = NULL;

	start(affine(3, 4));
	before = now();
	assert_refused(sched_bind(S, "out", "j", "block.x", &E), before,
	               "bind: the result fails the verifier: check: stage out: loop j is bound to "
	               "block.x under loop i, which is not block-bound");
	free(before);
	sched_free(S);
	S = NULL;

	start_kernel(diag_kernel(3, 4));
	before = now();
	assert_refused(sched_bind(S, "diag", "i", "thread.x", &E), before,
	               "bind: stage diag: loop i bound to thread.x runs its iterations at once, and "
	               "they depend on one another: iterations (i=0) and (i=1) both access y[1]");
	free(before);
}

/* ---- parallel, vectorize, unroll ---- */

static void
test_annotate(void **state)
{
	char *before, *t;

	(void)state;
	start(softmax(param("x", 0, 4, 8)));
	OK(sched_parallel(S, "out", "i", &E));
	OK(sched_vectorize(S, "out", "j", &E));
	OK(sched_unroll(S, "xsum", "j", &E));
	show("parallel i, vectorize j, unroll xsum j");
	t = now();
	assert_non_null(strstr(t, "# out\nfor i, j in grid(4, 8):  # i:THREAD j:UPCAST\n"));
	assert_non_null(strstr(t, "for j in range(8):  # UNROLL\n"));
	free(t);
	assert_same(0);
	t = trace();
	assert_string_equal(t, "s:parallel(\"out\", \"i\")\ns:vectorize(\"out\", \"j\")\n"
	                    "s:unroll(\"xsum\", \"j\")\n");
	free(t);
	before = now();
	assert_refused(sched_parallel(S, "xmax", "j", &E), before,
	               "parallel: stage xmax: loop j is REDUCE; a parallel reduction races");
	assert_refused(sched_parallel(S, "out", "j", &E), before,
	               "parallel: stage out: loop j is inside loop i, which is parallel");
	assert_refused(sched_vectorize(S, "xmax", "i", &E), before,
	               "vectorize: stage xmax: loop i is not innermost");
	assert_refused(sched_vectorize(S, "xmax", "j", &E), before,
	               "vectorize: stage xmax: loop j is REDUCE");
	free(before);
	OK(sched_bind(S, "xmax", "i", "thread.x", &E));
	before = now();
	assert_refused(sched_parallel(S, "xmax", "j", &E), before, "REDUCE");
	assert_refused(sched_unroll(S, "xmax", "i", &E), before,
	               "unroll: stage xmax: loop i is bound to thread.x");
	free(before);
	sched_free(S);
	S = NULL;

	start(affine(2, 2000));
	before = now();
	assert_refused(sched_vectorize(S, "out", "j", &E), before,
	               "vectorize: stage out: loop j has extent 2000, more than the 64 lanes");
	assert_refused(sched_unroll(S, "out", "j", &E), before,
	               "unroll: stage out: loop j has extent 2000; unrolling copies the body at most 1024 times");
	free(before);
	OK(sched_split(S, "out", "j", (int64_t[]){ 0, 16 }, 2, &E));
	OK(sched_vectorize(S, "out", "j1", &E));
	OK(sched_unroll(S, "out", "j0", &E));
	assert_same(0);
	sched_free(S);
	S = NULL;

	start_kernel(diag_kernel(3, 4));
	before = now();
	assert_refused(sched_parallel(S, "diag", "i", &E), before, "both access y[");
	free(before);
	/* for one i, the j lanes write different elements */
	OK(sched_vectorize(S, "diag", "j", &E));
	OK(sched_unroll(S, "diag", "i", &E));   /* unrolling keeps the order */
	assert_same(0);
}

/* ---- tile ---- */

static void
test_tile(void **state)
{
	char *before, *t;

	(void)state;
	start(matmul(6, 3, 8));
	OK(sched_tile(S, "out", "i", "j", 4, 4, &E));
	show("tile i, j by 4, 4");
	assert_printed("# inputs: a: float32[6, 3], b: float32[3, 8]\n"
	               "# outputs: out: float32[6, 8]\n"
	               "# out\n"
	               "for i0, j0, i1, j1 in grid(2, 2, 4, 4):\n"
	               "  if i0*4 + i1 < 6:\n"
	               "    out[i0*4 + i1, j0*4 + j1] = 0.0\n"
	               "    for k in range(3):  # REDUCE\n"
	               "      out[i0*4 + i1, j0*4 + j1] += a[i0*4 + i1, k] * b[k, j0*4 + j1]\n");
	assert_same(0);
	t = trace();
	assert_string_equal(t, "s:tile(\"out\", \"i\", \"j\", 4, 4)\n");
	free(t);
	before = now();
	assert_refused(sched_tile(S, "out", "j1", "k", 2, 2, &E), before,
	               "tile: stage out: loop k is not directly inside loop j1; tile takes two "
	               "perfectly nested loops");
	assert_refused(sched_tile(S, "out", "i1", "j1", 0, 2, &E), before, "tile sizes are positive");
	free(before);
	t = trace();
	assert_string_equal(t, "s:tile(\"out\", \"i\", \"j\", 4, 4)\n");
	free(t);
	/* then bind the tile grid to blocks and the tile to threads */
	OK(sched_bind(S, "out", "i0", "block.y", &E));
	OK(sched_bind(S, "out", "j0", "block.x", &E));
	OK(sched_bind(S, "out", "i1", "thread.y", &E));
	OK(sched_bind(S, "out", "j1", "thread.x", &E));
	show("bound");
	assert_same(0);
}

/* ---- undo and the trace ---- */

static void
test_undo(void **state)
{
	char *k0, *k1, *t;

	(void)state;
	start(rowsum(4, 6));
	k0 = now();
	OK(sched_split(S, "out", "j", (int64_t[]){ 0, 3 }, 2, &E));
	k1 = now();
	OK(sched_parallel(S, "out", "i", &E));
	t = trace();
	assert_string_equal(t, "s:split(\"out\", \"j\", {nil, 3})\ns:parallel(\"out\", \"i\")\n");
	free(t);
	OK(sched_undo(S, &E));
	assert_printed(k1);
	OK(sched_undo(S, &E));
	assert_printed(k0);
	assert_int_equal(sched_undo(S, &E), -1);
	t = trace();
	assert_string_equal(t, "");
	free(t);
	free(k0);
	free(k1);
	/* stage and loop names are quoted as Lua's %q quotes them */
	{
		Buf b;

		buf_init(&b);
		sched_quote(&b, "a\"b\\c\n");
		assert_string_equal(b.s, "\"a\\\"b\\\\c\\n\"");
		buf_free(&b);
	}
}

/* ---- random schedules ---- */

static UOp *
graph(uint64_t *r)
{
	int64_t m = 1 + rnd(r) % 7, n = 1 + rnd(r) % 9, k = 1 + rnd(r) % 5;

	switch (rnd(r) % 4) {
	case 0: return softmax(param("x", 0, m, n));
	case 1: return matmul(m, k, n);
	case 2: return rowsum(m, n);
	default: return affine(m, n);
	}
}

static const char *
pick_loop(uint64_t *r, int st, const char **second)
{
	UOp *l[64];
	int n = sched_loops(S->k, st, l, 64), i;

	if (n == 0)
		return NULL;
	i = (int)(rnd(r) % n);
	/* the loop inside it, when there is one: fuse, reorder and tile take two */
	*second = l[i]->nsrc == 2 && l[i]->src[1]->op == OP_END ? krange_var(l[i]->src[1]->src[0])->name
	        : krange_var(l[rnd(r) % n]->src[0])->name;
	return krange_var(l[i]->src[0])->name;
}

static void
test_random(void **state)
{
	static const char *const axes[] = { "block.x", "block.y", "thread.x", "thread.y", "warp", "lane" };
	uint64_t seed;
	int kept = 0, tried = 0;

	(void)state;
	for (seed = 1; seed <= 60; seed++) {
		uint64_t r = seed * 0x9e3779b97f4a7c15ull;
		int step;
		char msg[600];

		start(graph(&r));
		for (step = 0; step < 6; step++) {
			int st = (int)(rnd(&r) % S->k->nstage), rc;
			const char *st_name = S->k->stage[st].name, *b = NULL, *a = pick_loop(&r, st, &b);
			const char *two[2] = { a, b }, *rev[2] = { b, a };
			int64_t f[2] = { 0, 1 + (int64_t)(rnd(&r) % 5) };
			Err e;

			if (!a)
				continue;
			switch (rnd(&r) % 9) {
			case 0: if (rnd(&r) % 2) { f[0] = f[1]; f[1] = 0; }
			        rc = sched_split(S, st_name, a, f, 2, &e); break;
			case 1: rc = sched_fuse(S, st_name, two, 2, &e); break;
			case 2: rc = sched_reorder(S, st_name, rev, 2, &e); break;
			case 3: rc = sched_bind(S, st_name, a, axes[rnd(&r) % 6], &e); break;
			case 4: rc = sched_parallel(S, st_name, a, &e); break;
			case 5: rc = sched_vectorize(S, st_name, a, &e); break;
			case 6: rc = sched_unroll(S, st_name, a, &e); break;
			case 7: rc = sched_tile(S, st_name, a, b, f[1], 1 + rnd(&r) % 4, &e); break;
			default: rc = sched_undo(S, &e); break;
			}
			tried++;
			if (rc < 0)
				continue;
			kept++;
			if (same(S->orig, S->k, 1e-5, seed, msg, sizeof msg) < 0) {
				char *t = trace(), *p = now();

				print_message("seed %llu, after:\n%s%s", (unsigned long long)seed, t, p);
				free(t);
				free(p);
				fail_msg("seed %llu: %s", (unsigned long long)seed, msg);
			}
		}
		sched_free(S);
		S = NULL;
		uctx_free(C);
		C = uctx_new();
	}
	if (getenv("TESSEL_SHOW"))
		print_message("%d of %d random steps committed\n", kept, tried);
	assert_true(kept > 20);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reorder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_annotate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_undo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

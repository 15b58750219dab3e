/* test_sched3.c - rfactor and reverse_compute_inline. */
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
reduce(Op op, UOp *a)
{
	int64_t ax = 1;

	return ok(tensor_reduce(C, op, a, &ax, 1, 0, &E));
}

static UOp *
named(UOp *a, const char *name)
{
	a = ok(tensor_named(C, a, name, &E));
	return ok(tensor_new(C, OP_CONTIGUOUS, (DType)a->dtype, &a, 1, 0, 0, NULL, NULL, 0, &E));
}

/* y = 2 * x + 1 in a stage of its own */
static UOp *
affine(int64_t m, int64_t n)
{
	UOp *y = ok(tensor_alu(C, OP_MUL, param("x", 0, m, n), uop_constf(C, DT_FLOAT32, 2), &E));

	return named(ok(tensor_alu(C, OP_ADD, y, uop_constf(C, DT_FLOAT32, 1), &E)), "y");
}

/* ---- rfactor ---- */

static void
test_rfactor(void **state)
{
	char *before;

	(void)state;
	start(reduce(OP_ADD, param("x", 0, 3, 8)));
	OK(sched_split(S, "out", "j", (int64_t[]){ 0, 4 }, 2, &E));
	before = now();
	assert_refused(sched_rfactor(S, "out", "i", 0, &E), before,
	               "rfactor: stage out: loop i is spatial: out is indexed by it (rfactor takes a "
	               "reduction loop)");
	assert_refused(sched_rfactor(S, "out", "j1", 2, &E), before,
	               "rfactor: factor_axis 2: out has 1 dimensions (0..1)");
	assert_refused(sched_rfactor(S, "out", "q", 0, &E), before,
	               "rfactor: stage out has no loop q (its loops: i, j0, j1)");
	free(before);
	OK(sched_rfactor(S, "out", "j1", 0, &E));
	show("rfactor out j1");
	/* the factored loop is spatial and outermost among the reduction loops: one partial
	** result per (i, j1), initialized and accumulated under it */
	assert_printed("# inputs: x: float32[3, 8]\n"
	               "# outputs: out: float32[3]\n"
	               "# buffers: out_rf: float32[4, 3]\n"
	               "# out_rf\n"
	               "for i, j1 in grid(3, 4):\n"
	               "  out_rf[j1, i] = 0.0\n"
	               "  for j0 in range(2):  # REDUCE\n"
	               "    out_rf[j1, i] += x[i, j0*4 + j1]\n"
	               "# out\n"
	               "for i in range(3):\n"
	               "  out[i] = 0.0\n"
	               "  for j1 in range(4):  # REDUCE\n"
	               "    out[i] += out_rf[j1, i]\n");
	assert_same(1e-6);
	/* the partial results are independent: the factored loop binds to threads */
	OK(sched_bind(S, "out_rf", "j1", "threadIdx.x", &E));
	OK(sched_bind(S, "out_rf", "i", "blockIdx.x", &E));
	assert_same(1e-6);
	stop();

	/* factor_axis 1; a max reduction starts from -inf; a tail guard stays with the partials */
	start(reduce(OP_MAX, param("x", 0, 3, 10)));
	OK(sched_split(S, "out", "j", (int64_t[]){ 0, 4 }, 2, &E));
	OK(sched_rfactor(S, "out", "j1", 1, &E));
	show("rfactor max, a tail");
	{
		char *t = now();

		assert_non_null(strstr(t, "out_rf: float32[3, 4]"));
		assert_non_null(strstr(t, "  out_rf[i, j1] = -inf\n"
		                          "  for j0 in range(3):  # REDUCE\n"
		                          "    if j0*4 + j1 < 10:\n"));
		assert_non_null(strstr(t, "    out[i] = max(out[i], out_rf[i, j1])\n"));
		free(t);
	}
	assert_same(0);
	stop();

	/* a matmul's k, after decompose_reduction: the init stays in its own stage */
	start(matmul(4, 6, 5));
	OK(sched_decompose_reduction(S, "out", "k", &E));
	OK(sched_split(S, "out", "k", (int64_t[]){ 2, 0 }, 2, &E));
	OK(sched_rfactor(S, "out", "k0", 0, &E));
	show("rfactor matmul k0");
	{
		char *t = now();

		assert_non_null(strstr(t, "out_rf: float32[2, 4, 5]"));
		assert_non_null(strstr(t, "# out_init\n"));
		free(t);
	}
	assert_same(1e-5);
	/* the trace replays */
	{
		char *t = trace();

		assert_string_equal(t, "s:decompose_reduction(\"out\", \"k\")\n"
		                       "s:split(\"out\", \"k\", {2, 3})\n"
		                       "s:rfactor(\"out\", \"k0\")\n");
		free(t);
	}
	stop();

	/* an element-wise stage has no reduction to factor */
	start(affine(2, 3));
	before = now();
	assert_refused(sched_rfactor(S, "y", "j", 0, &E), before,
	               "rfactor: stage y has no reduction (an update y[I] = y[I] op v)");
	free(before);
}

/* ---- reverse_compute_inline ---- */

static void
test_reverse_compute_inline(void **state)
{
	char *before;
	UOp *y;

	(void)state;
	/* out = 3 * y read transposed: the producer's store writes out at the swapped indices */
	y = affine(3, 4);
	start(ok(tensor_alu(C, OP_MUL, ok(tensor_permute(C, y, (int64_t[]){ 1, 0 }, 2, &E)),
	                    uop_constf(C, DT_FLOAT32, 3), &E)));
	show("affine, transposed");
	OK(sched_reverse_compute_inline(S, "out", &E));
	show("reverse_compute_inline out");
	assert_printed("# inputs: x: float32[3, 4]\n"
	               "# outputs: out: float32[4, 3]\n"
	               "# y\n"
	               "for i, j in grid(3, 4):\n"
	               "  out[j, i] = (x[i, j] * 2.0 + 1.0) * 3.0\n");
	assert_same(0);
	stop();

	/* a consumer of a reduction would see partial results (TVM refuses it too) */
	start(ok(tensor_unary(C, OP_EXP2, matmul(2, 3, 4), &E)));
	before = now();
	assert_refused(sched_reverse_compute_inline(S, "out", &E), before,
	               "reverse_compute_inline: producer");
	assert_non_null(strstr(E.msg, "is a reduction"));
	free(before);
	stop();

	/* a stencil reads its producer at two indices */
	{
		int64_t b0[2] = { 0, 0 }, e0[2] = { 3, 4 }, b1[2] = { 0, 1 }, e1[2] = { 3, 5 };

		y = affine(3, 5);
		start(ok(tensor_alu(C, OP_ADD, ok(tensor_shrink(C, y, b0, e0, 2, &E)),
		                    ok(tensor_shrink(C, y, b1, e1, 2, &E)), &E)));
	}
	before = now();
	assert_refused(sched_reverse_compute_inline(S, "out", &E), before,
	               "reverse_compute_inline: stage out loads y at several indices");
	assert_refused(sched_reverse_compute_inline(S, "y", &E), before,
	               "reverse_compute_inline: stage y reads no buffer an earlier stage writes");
	free(before);
	stop();

	/* two producers: which one would it go into? (TVM: a single producer) */
	start(ok(tensor_alu(C, OP_ADD, affine(2, 3), named(ok(tensor_unary(C, OP_EXP2,
	                    param("z", 1, 2, 3), &E)), "w"), &E)));
	before = now();
	assert_refused(sched_reverse_compute_inline(S, "out", &E), before,
	               "reverse_compute_inline: stage out reads y and w, both written by earlier stages");
	free(before);
}

/* ---- random programs: every committed step keeps the values ---- */

static UOp *
graph(uint64_t *r)
{
	int64_t m = 1 + rnd(r) % 5, n = 1 + rnd(r) % 9, k = 1 + rnd(r) % 6;

	switch (rnd(r) % 4) {
	case 0: return reduce(OP_ADD, param("x", 0, m, n));
	case 1: return matmul(m, k, n);
	case 2: return reduce(OP_MAX, affine(m, n));
	default: return ok(tensor_alu(C, OP_MUL, affine(m, n), uop_constf(C, DT_FLOAT32, 3), &E));
	}
}

static const char *
any_loop(uint64_t *r, int st)
{
	UOp *l[64];
	int n = sched_loops(S->k, st, l, 64);

	return n ? krange_var(l[rnd(r) % n]->src[0])->name : NULL;
}

static void
test_random(void **state)
{
	/* a shared or local cache lives for one launch: only compute_at makes it right */
	static const char *const scopes[] = { "global" };
	uint64_t seed;
	int kept = 0, tried = 0, hits[9] = { 0 }, i;

	(void)state;
	for (seed = 1; seed <= 80; seed++) {
		uint64_t r = seed * 0x9e3779b97f4a7c15ull;
		int step;
		char msg[600];

		start(graph(&r));
		for (step = 0; step < 6; step++) {
			int st = (int)(rnd(&r) % S->k->nstage), rc, b = (int)(rnd(&r) % S->k->nbuf), op;
			const char *sn = S->k->stage[st].name, *l = any_loop(&r, st);
			int64_t f[2] = { 0, 1 + (int64_t)(rnd(&r) % 4) };

			if (!l)
				continue;
			switch ((op = (int)(rnd(&r) % 9))) {
			case 0: rc = sched_split(S, sn, l, f, 2, &E); break;
			case 1: rc = sched_rfactor(S, sn, l, (int)(rnd(&r) % 2), &E); break;
			case 2: rc = sched_reverse_compute_inline(S, sn, &E); break;
			case 3: rc = sched_compute_inline(S, sn, &E); break;
			case 4: rc = sched_decompose_reduction(S, sn, l, &E); break;
			case 5: rc = sched_cache_read(S, sn, S->k->buf[b].name, scopes[rnd(&r) % 1], &E); break;
			case 6: rc = sched_cache_write(S, sn, scopes[rnd(&r) % 1], &E); break;
			case 7: rc = sched_reorder(S, sn, (const char *[]){ any_loop(&r, st), l }, 2, &E); break;
			default: rc = sched_undo(S, &E); break;
			}
			tried++;
			if (rc < 0)
				continue;
			kept++;
			hits[op]++;
			if (same(S->orig, S->k, 1e-5, seed, msg, sizeof msg) < 0) {
				char *t = trace(), *p = now();

				print_message("seed %llu, after:\n%s%s", (unsigned long long)seed, t, p);
				free(t);
				free(p);
				fail_msg("seed %llu: %s", (unsigned long long)seed, msg);
			}
		}
		stop();
		uctx_free(C);
		C = uctx_new();
	}
	if (getenv("TESSEL_SHOW"))
		for (i = 0; i < 9; i++)
			print_message("op %d: %d committed\n", i, hits[i]);
	/* every primitive took part, not only the refusals */
	for (i = 0; i < 9; i++)
		assert_true(hits[i] > 0);
	assert_true(kept > 60);
	(void)tried;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rfactor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reverse_compute_inline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_sched_sound.c - schedule steps that would make a program wrong are refused with the reason, and what stays legal still verifies. */
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

/* x * x.<op>(axis 0, keepdim): a reduction whose result every element of out reads */
static UOp *
times_reduced(Op op, int64_t m, int64_t n)
{
	int64_t ax = 0;
	UOp *x = param("x", 0, m, n);

	return ok(tensor_alu(C, OP_MUL, x, ok(tensor_reduce(C, op, x, &ax, 1, 1, &E)), &E));
}

/*
** compute_at under a loop bound to blocks: every block would recompute the
** producer into global memory, which blocks share (a race between blocks).
** Under a plain loop, or with the producer's buffer made block-private
** (shared memory), the same step stays legal.
*/
static void
test_compute_at_under_blocks(void **state)
{
	char *before;

	(void)state;
	start(times_reduced(OP_MAX, 8, 8));
	OK(sched_bind(S, "out", "i", "blockIdx.y", &E));
	before = now();
	assert_refused(sched_compute_at(S, "xmax", "out", "j", &E), before,
	               "compute_at: xmax is global memory, which blocks share: loop i is bound to "
	               "block.y, and every block would run what moves under loop j and write the same "
	               "elements of xmax (its index does not use i); set_scope(\"xmax\", \"shared\") "
	               "gives each block a copy of its own");
	free(before);
	/* block-private memory: each block computes its own copy */
	OK(sched_set_scope(S, "xmax", "shared", &E));
	OK(sched_compute_at(S, "xmax", "out", "j", &E));
	assert_same(1e-6);
	stop();

	/* not bound: one program recomputes it, legal */
	start(times_reduced(OP_MAX, 8, 8));
	OK(sched_compute_at(S, "xmax", "out", "j", &E));
	assert_same(1e-6);
	stop();
}

/*
** decompose_reduction after compute_at: the producer's nest runs again for
** every iteration of the consumer's loop i, so an init stage of its own would
** run once and the updates would add up all the recomputations.
*/
static void
test_decompose_after_compute_at(void **state)
{
	char *before;

	(void)state;
	start(times_reduced(OP_ADD, 8, 8));
	OK(sched_compute_at(S, "xsum", "out", "j", &E));
	assert_same(1e-5);
	before = now();
	assert_refused(sched_decompose_reduction(S, "out", "j0", &E), before,
	               "decompose_reduction: stage out: the init of xsum runs again for every "
	               "iteration of loop i, which its element does not depend on");
	free(before);
	stop();

	/* before compute_at it is the usual reduction: legal */
	start(times_reduced(OP_ADD, 8, 8));
	OK(sched_decompose_reduction(S, "xsum", "j", &E));
	assert_same(1e-5);
	stop();

	/* an init that writes an element twice through an index that does use every loop */
	start(times_reduced(OP_ADD, 8, 8));
	OK(sched_split(S, "xsum", "i", (int64_t[]){ 0, 2 }, 2, &E));
	OK(sched_decompose_reduction(S, "xsum", "j", &E));
	assert_same(1e-5);
	stop();
}

/*
** rfactor of a reduction loop split by tile: the reduction loop j0 above the
** spatial loop i1 would run the partial results' init and their combination
** again for every j0; a loop with a spatial one under it would leave the
** combination indexed by an unbound loop. Reordered, the same rfactor is legal.
*/
static void
test_rfactor_after_tile(void **state)
{
	int64_t ax = 1;
	char *before;

	(void)state;
	start(ok(tensor_reduce(C, OP_ADD, param("x", 0, 8, 16), &ax, 1, 0, &E)));
	OK(sched_decompose_reduction(S, "out", "j", &E));
	OK(sched_tile(S, "out", "i", "j", 4, 4, &E));
	before = now();
	assert_refused(sched_rfactor(S, "out", "j1", 0, &E), before,
	               "rfactor: stage out: loop j0, a reduction loop of out, encloses a spatial loop "
	               "around loop j1: the partial results' init and their combination would run "
	               "again for every iteration of j0");
	assert_refused(sched_rfactor(S, "out", "j0", 0, &E), before,
	               "rfactor: stage out: loop i1 under loop j0 is spatial (out is indexed by it)");
	free(before);
	OK(sched_reorder(S, "out", (const char *[]){ "i1", "j0" }, 2, &E));
	OK(sched_rfactor(S, "out", "j1", 0, &E));
	assert_same(1e-5);
	stop();
}

/* verify binds params by slot; slots number every param of a session, past any fixed table */
static void
test_verify_large_slots(void **state)
{
	int64_t ax = 1, shape[2] = { 4, 4 };
	SVerifyOpts vo = { 2, 5, 0, 0 };
	UOp *x = ok(tensor_param(C, "x", 100000, shape, 2, DT_FLOAT32, NULL, &E));

	(void)state;
	start(ok(tensor_reduce(C, OP_ADD, x, &ax, 1, 0, &E)));
	OK(sched_split(S, "out", "j", (int64_t[]){ 0, 2 }, 2, &E));
	OK(sched_verify(S, &vo, NULL, &E));
	stop();
}

/*
** The rolling update of sum(exp(x - min(x))): the predecessor is max(-x), which
** starts at -inf, and h(t, r, r') = t * exp(r' - r) is 0 * inf at the first
** iteration; the derivation reads the cache safely there. Split-k alike.
*/
static UOp *
exp_minus_min(void)
{
	int64_t ax = 1;
	UOp *x = param("x", 0, 4, 8), *m = ok(tensor_min(C, x, &ax, 1, 1, &E));

	return ok(tensor_sum(C, ok(tensor_exp(C, ok(tensor_alu(C, OP_SUB, x, m, &E)), &E)), &ax, 1, 0, &E));
}

static void
test_rolling_update_infinite_start(void **state)
{
	(void)state;
	start(exp_minus_min());
	OK(sched_rolling_update(S, "out", "j", &E));
	assert_same(1e-5);
	assert_non_null(strstr(S->step[S->nstep - 1].note, "xmin starts at -inf, and h(0, -inf, r') is NaN"));
	stop();

	start(exp_minus_min());
	OK(sched_split(S, "xmin", "j", (int64_t[]){ 0, 2 }, 2, &E));
	OK(sched_split_k_update(S, "out", "j0", &E));
	assert_same(1e-5);
	stop();
}

/*
** compute_at into a loop inside thread-bound loops: the copy does not depend
** on the threads, so each would write every element. Said structurally, not as
** an enumeration too large to finish; and the messages that compared a stage
** with itself.
*/
static void
test_compute_at_messages(void **state)
{
	int64_t ax = 1;
	char *before;

	(void)state;
	start(matmul(64, 64, 64));
	OK(sched_cache_read(S, "out", "a", "shared", &E));
	OK(sched_decompose_reduction(S, "out", "k", &E));
	OK(sched_tile(S, "out", "i", "j", 16, 16, &E));
	OK(sched_split(S, "out", "k", (int64_t[]){ 0, 16 }, 2, &E));
	OK(sched_bind(S, "out", "i1", "threadIdx.y", &E));
	OK(sched_bind(S, "out", "j1", "threadIdx.x", &E));
	before = now();
	assert_refused(sched_compute_at(S, "a_shared", "out", "k0", &E), before,
	               "write the same elements of a_shared (its index does not use j1); compute_at a "
	               "loop outside the bound loops: decompose_reduction, then reorder loop k0 above them");
	free(before);
	stop();

	start(ok(tensor_reduce(C, OP_ADD, param("x", 0, 4, 8), &ax, 1, 0, &E)));
	before = now();
	assert_refused(sched_compute_at(S, "out", "out", "j", &E), before,
	               "compute_at: stage out is both the producer and the consumer");
	assert_refused(sched_reverse_compute_at(S, "out", "out", "j", &E), before,
	               "reverse_compute_at: stage out is both the consumer and the producer");
	free(before);
	stop();
}

/* an inferred last factor (0 or -1 in C) is traced as its value: Lua reads {4, nil} as {4} */
static void
test_split_trace_replays(void **state)
{
	(void)state;
	start(ok(tensor_alu(C, OP_MUL, param("x", 0, 10, 4), uop_constf(C, DT_FLOAT32, 2), &E)));
	OK(sched_split(S, "out", "i", (int64_t[]){ 4, -1 }, 2, &E));
	assert_string_equal(S->step[S->nstep - 1].line, "s:split(\"out\", \"i\", {4, 3})");
	OK(sched_split(S, "out", "j", (int64_t[]){ 0, 2 }, 2, &E));
	assert_string_equal(S->step[S->nstep - 1].line, "s:split(\"out\", \"j\", {nil, 2})");
	assert_same(0);
	stop();
}

/*
** reverse_compute_at under a loop whose stores do not fill the box they span:
** with i split by 3 and i0 inside i1, one iteration of i1 writes rows i1 and
** i1 + 3 of a box of four; the rows between come later. Under j (all of i) and
** with the usual order (i1 inside i0) the box is filled, the guard's rows aside.
*/
static void
test_reverse_compute_at_box(void **state)
{
	char *before;
	int o;

	(void)state;
	for (o = 0; o < 3; o++) {
		UOp *y = ok(tensor_alu(C, OP_MUL, param("x", 0, 4, 4), uop_constf(C, DT_FLOAT32, 2), &E));

		y = ok(tensor_named(C, y, "y", &E));
		y = ok(tensor_new(C, OP_CONTIGUOUS, DT_FLOAT32, &y, 1, 0, 0, NULL, NULL, 0, &E));
		start(ok(tensor_alu(C, OP_ADD, y, uop_constf(C, DT_FLOAT32, 1), &E)));
		OK(sched_split(S, "y", "i", (int64_t[]){ 0, 3 }, 2, &E));
		if (o < 2) {
			OK(sched_reorder(S, "y", (const char *[]){ "j", "i1", "i0" }, 3, &E));
			if (o == 0) {
				before = now();
				assert_refused(sched_reverse_compute_at(S, "out", "y", "i1", &E), before,
				               "reverse_compute_at: the stores under loop i1 do not fill the box they "
				               "span: at i1=0, y[1, 0] is in the box but written in another iteration (the "
				               "stores: y[i0*3 + i1, j] = x[i0*3 + i1, j] * 2.0)");
				free(before);
			} else
				OK(sched_reverse_compute_at(S, "out", "y", "j", &E));
		} else
			OK(sched_reverse_compute_at(S, "out", "y", "i0", &E));
		assert_same(0);
		stop();
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_compute_at_under_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decompose_after_compute_at, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rfactor_after_tile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_large_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rolling_update_infinite_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compute_at_messages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_trace_replays, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reverse_compute_at_box, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

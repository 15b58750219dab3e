/* test_verify.c - schedules: steps, undo, the trace, and verify finding the first wrong element and step. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../interp/sched/sched.h"
#include "kernel_test.h"

/* softmax over rows of a (4, 8) param, as the tensor table builds it */
static UOp *
softmax(void)
{
	int64_t s[2] = { 4, 8 }, ax = 1;
	UOp *x = ok(tensor_param(C, "inp", 0, s, 2, DT_FLOAT32, NULL, &E)), *m, *d, *ex, *sum;

	m = ok(tensor_reduce(C, OP_MAX, x, &ax, 1, 1, &E));
	d = ok(tensor_alu(C, OP_SUB, x, m, &E));
	ex = ok(tensor_unary(C, OP_EXP2, ok(tensor_alu(C, OP_MUL, d, uop_constf(C, DT_FLOAT32, 1.4426950408889634), &E)), &E));
	sum = ok(tensor_reduce(C, OP_ADD, ex, &ax, 1, 1, &E));
	return ok(tensor_alu(C, OP_MUL, ex, ok(tensor_unary(C, OP_RECIP, sum, &E)), &E));
}

/* the stage's single store under its loops */
static UOp *
store_of(UOp *s)
{
	while (s->op == OP_END || s->op == OP_IF)
		s = s->src[s->nsrc - 1];
	return s;
}

static void
test_steps(void **state)
{
	UOp *g = softmax();
	Kernel *k = kernel_lower(g, NULL, &E), *n;
	Schedule *s;
	Buf b;

	(void)state;
	assert_non_null(k);
	s = sched_new(k, g, &E);
	assert_non_null(s);
	assert_int_equal(sched_verify(s, NULL, NULL, &E), 0);
	/* a step that changes nothing, then one the verifier refuses */
	n = sched_begin(s, &E);
	assert_int_equal(sched_commit(s, n, "noop", "s:noop()", &E), 0);
	n = sched_begin(s, &E);
	n->stage[0].body = kernel_barrier(n);
	n->stage[1].body = n->stage[0].body;
	n->stage[2].body = n->stage[0].body;
	assert_int_equal(sched_commit(s, n, "broken", "s:broken()", &E), -1);
	assert_non_null(strstr(E.msg, "broken: the result fails the verifier: check: output out is written by no stage"));
	assert_int_equal(s->nstep, 1);
	buf_init(&b);
	sched_trace(&b, s);
	assert_string_equal(b.s, "s:noop()\n");
	buf_free(&b);
	assert_int_equal(sched_undo(s, &E), 0);
	assert_int_equal(sched_undo(s, &E), -1);
	assert_non_null(strstr(E.msg, "no step"));
	/* lookups name what there is */
	assert_int_equal(sched_stage(s->k, "xsum", &E), 1);
	assert_int_equal(sched_stage(s->k, "nope", &E), -1);
	assert_string_equal(E.msg, "no stage nope (the stages: xmax, xsum, out)");
	assert_non_null(sched_loop(s->k, 1, "j", &E));
	assert_null(sched_loop(s->k, 1, "q", &E));
	assert_string_equal(E.msg, "stage xsum has no loop q (its loops: i, j)");
	sched_free(s);
	kernel_free(k);
}

static void
test_verify_finds_the_step(void **state)
{
	UOp *g = softmax(), *st, *v;
	Kernel *k = kernel_lower(g, NULL, &E), *n;
	Schedule *s = sched_new(k, g, &E);
	SVerifyOpts o = { 2, 7, 0, 0 };
	Buf report;
	int out;

	(void)state;
	assert_non_null(s);
	n = sched_begin(s, &E);
	assert_int_equal(sched_commit(s, n, "noop", "s:noop()", &E), 0);
	/* step 2 scales every output by 1.5 */
	n = sched_begin(s, &E);
	out = sched_stage(n, "out", &E);
	st = store_of(n->stage[out].body);
	v = kernel_alu(n, OP_MUL, DT_FLOAT32, (UOp *[]){ st->src[1], kernel_const(n, DT_FLOAT32, 1.5) }, 2);
	assert_int_equal(sched_replace(n, out, st, kernel_store(n, st->src[0], v, NULL), &E), 0);
	assert_int_equal(sched_commit(s, n, "scale", "s:scale()", &E), 0);
	buf_init(&report);
	assert_int_equal(sched_verify(s, &o, &report, &E), -1);
	if (!strstr(E.msg, "verify: out[0, 0] is ") || !strstr(E.msg, "(seed 7)")
	|| !strstr(E.msg, "written by stage out, block (0,0,0), thread (0,0,0), loops i=0, j=0")
	|| !strstr(E.msg, "it goes wrong at step 2: s:scale()"))
		fail_msg("%s", E.msg);
	assert_non_null(strstr(report.s, "trial 0 (seed 7): differs"));
	buf_free(&report);
	/* undone, it agrees again */
	assert_int_equal(sched_undo(s, &E), 0);
	assert_int_equal(sched_verify(s, &o, NULL, &E), 0);
	sched_free(s);
	kernel_free(k);
}

/* A hand-written kernel is checked against itself as scheduling began. */
static void
test_verify_without_graph(void **state)
{
	Kernel *k = kernel_new(), *n;
	int64_t sh = 16;
	int a = kernel_add_buffer(k, "A", DT_INT32, AS_GLOBAL, KB_INPUT, &sh, 1, &E);
	int b = kernel_add_buffer(k, "B", DT_INT32, AS_GLOBAL, KB_OUTPUT, &sh, 1, &E);
	UOp *i = kernel_var(k, "i", 16), *body, *x;
	Schedule *s;

	(void)state;
	x = kernel_load(k, kernel_index(k, a, &i, 1), NULL);
	body = kernel_store(k, kernel_index(k, b, &i, 1), kernel_alu(k, OP_ADD, DT_INT32, (UOp *[]){ x, x }, 2), NULL);
	assert_int_equal(kernel_add_stage(k, "dbl", kernel_loop(k, kernel_range(k, i, AX_LOOP, HW_NONE), &body, 1), NULL, &E), 0);
	s = sched_new(k, NULL, &E);
	assert_non_null(s);
	assert_int_equal(sched_verify(s, NULL, NULL, &E), 0);
	/* integers are compared exactly: reversing the loop is fine, an off-by-one is not */
	n = sched_begin(s, &E);
	{
		UOp *old = n->stage[0].body, *j = kernel_var(n, "i", 16), *rev = uop_sub(n->c, uop_int(n->c, 15), j);
		UOp *nb = kernel_substitute(n->c, old->src[1], &j, &rev, 1);

		assert_int_equal(sched_replace(n, 0, old, kernel_loop(n, old->src[0], &nb, 1), &E), 0);
	}
	assert_int_equal(sched_commit(s, n, "reverse", "s:reverse()", &E), 0);
	assert_int_equal(sched_verify(s, NULL, NULL, &E), 0);
	sched_free(s);
	kernel_free(k);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_finds_the_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_without_graph, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

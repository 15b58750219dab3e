/* test_sched_tiles.c - the steps that take attention to FlashAttention's shape: fission, reorder by its innermost loop, compaction by set_scope, reverse_compute_at after a fused stage, skip_masked. */
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
named(UOp *a, const char *name)
{
	return ok(tensor_named(C, a, name, &E));
}

static UOp *
fc(double v)
{
	return uop_constf(C, DT_FLOAT32, v);
}

/*
** Causal attention of M queries over N keys, head size D, float32, as
** scripts/neptune/attention.lua writes it: score, s_max, s_sum, pv, o.
*/
static UOp *
attention(int64_t M, int64_t N, int64_t D, int causal)
{
	int64_t col[2] = { M, 1 }, row[2] = { 1, N }, ax = 1, perm[2] = { 1, 0 };
	UOp *q = param("q", 0, M, D), *k = param("k", 1, N, D), *v = param("v", 2, N, D);
	UOp *s, *mx, *e, *sum, *pv;

	s = named(ok(tensor_matmul(C, q, ok(tensor_permute(C, k, perm, 2, &E)), &E)), "score");
	s = ok(tensor_alu(C, OP_MUL, s, fc(0.5), &E));
	if (causal) {
		UOp *i = ok(tensor_reshape(C, ok(tensor_arange(C, M, DT_INT32, &E)), col, 2, &E));
		UOp *j = ok(tensor_reshape(C, ok(tensor_arange(C, N, DT_INT32, &E)), row, 2, &E));

		s = ok(tensor_where(C, ok(tensor_ge(C, i, j, &E)), s, fc(-INFINITY), &E));
	}
	mx = named(ok(tensor_reduce(C, OP_MAX, s, &ax, 1, 1, &E)), "s_max");
	e = ok(tensor_exp(C, ok(tensor_alu(C, OP_SUB, s, mx, &E)), &E));
	sum = named(ok(tensor_sum(C, e, &ax, 1, 1, &E)), "s_sum");
	pv = named(ok(tensor_matmul(C, e, v, &E)), "pv");
	return ok(tensor_div(C, pv, sum, &E));
}

static int
has(const char *text, const char *want)
{
	if (!strstr(text, want)) {
		print_message("%s\n", text);
		fail_msg("\"%s\" is not in the kernel above", want);
	}
	return 1;
}

/* fission distributes a loop whose iterations are independent, and refuses one whose are not */
static void
test_fission(void **state)
{
	char *before;
	Buf made;

	(void)state;
	start(attention(8, 16, 4, 0));
	OK(sched_split(S, "s_max", "j", (int64_t[]){ 0, 8 }, 2, &E));
	OK(sched_rolling_update(S, "s_sum", "s_max.j0", &E));
	OK(sched_rolling_update(S, "pv", "s_max.j0", &E));
	assert_same(1e-5);
	/* the rows of s_max: each touches its own elements, so they distribute */
	buf_init(&made);
	OK(sched_fission(S, "s_max", "i", 0, &made, &E));
	assert_non_null(made.s);
	assert_non_null(strstr(made.s, "i0"));
	buf_free(&made);
	assert_same(1e-5);
	/* the key tiles carry the running max: they do not */
	before = now();
	assert_refused(sched_fission(S, "s_max", "j0", 0, NULL, &E), before,
	               "the iterations of loop j0 depend on one another");
	free(before);
	stop();
}

/*
** The prefill template's steps in C, on causal attention with tiles of 4
** queries and 8 keys: every step checked against the unscheduled kernel,
** and the buffers that one program uses compacted to its tile.
*/
static void
test_flash_attention(void **state)
{
	char *p, *before;
	Buf made;
	int b;

	(void)state;
	start(attention(8, 16, 4, 1));
	OK(sched_split(S, "s_max", "j", (int64_t[]){ 0, 8 }, 2, &E));
	OK(sched_rolling_update(S, "s_sum", "s_max.j0", &E));
	OK(sched_rolling_update(S, "pv", "s_max.j0", &E));
	OK(sched_split(S, "s_max", "i", (int64_t[]){ 0, 4 }, 2, &E));
	OK(sched_reverse_compute_at(S, "out", "s_max", "i0", &E));   /* after a stage of several buffers */
	assert_same(1e-5);
	buf_init(&made);
	OK(sched_fission(S, "s_max", "i1", 0, &made, &E));
	{
		const char *last = strrchr(made.s, ' ');
		const char *loops[2] = { "j0", last ? last + 1 : made.s };

		OK(sched_reorder(S, "s_max", loops, 2, &E));   /* j0 carries every dependence */
	}
	buf_free(&made);
	assert_same(1e-5);
	OK(sched_set_scope(S, "score", "local", &E));
	OK(sched_compute_at(S, "score", "s_max", "j0", &E));
	OK(sched_fission(S, "s_max", "j0", 1, NULL, &E));
	OK(sched_set_scope(S, "s_max", "local", &E));
	OK(sched_set_scope(S, "s_sum", "local", &E));
	OK(sched_set_scope(S, "pv", "local", &E));
	assert_same(1e-5);
	/* compacted: s_max to the 4 rows of a tile, pv to 4 x 4, the scores to 4 x 8 */
	b = kernel_find_buffer(S->k, "s_max");
	assert_int_equal(S->k->buf[b].ndim, 1);
	assert_int_equal(S->k->buf[b].shape[0], 4);
	b = kernel_find_buffer(S->k, "pv");
	assert_int_equal(S->k->buf[b].shape[0] * S->k->buf[b].shape[1], 16);
	b = kernel_find_buffer(S->k, "score");
	assert_int_equal(S->k->buf[b].shape[0] * S->k->buf[b].shape[1], 32);
	OK(sched_bind(S, "s_max", "i0", "blockIdx.x", &E));   /* registers are each program's own */
	/* s_max_prev is not compacted like s_max yet: prev == cur is not known, nothing is skipped */
	before = now();
	assert_refused(sched_skip_masked(S, "s_max", "j0", &E), before, "still changes s_sum");
	free(before);
	OK(sched_set_scope(S, "s_max_prev", "local", &E));
	/* the key tiles past the diagonal change nothing: skipped, under a guard on j0 and i0 */
	OK(sched_skip_masked(S, "s_max", "j0", &E));
	p = now();
	has(p, "if ");
	free(p);
	assert_same(1e-5);
	/* global attention has no mask: nothing to skip */
	stop();
	start(attention(8, 16, 4, 0));
	OK(sched_split(S, "s_max", "j", (int64_t[]){ 0, 8 }, 2, &E));
	OK(sched_rolling_update(S, "s_sum", "s_max.j0", &E));
	before = now();
	assert_refused(sched_skip_masked(S, "s_max", "j0", &E), before, "has no mask");
	free(before);
	stop();
}

/* a rolling update whose g rounds to a narrower float and back: refused, or derived without it */
static void
test_relax_casts(void **state)
{
	int64_t ax = 1;
	UOp *s, *mx, *e, *sum, *pv, *o;
	FusionOpts fo = { 1 };
	char *before;

	(void)state;
	s = named(ok(tensor_matmul(C, param("q", 0, 4, 4), param("k", 1, 4, 8), &E)), "score");
	mx = named(ok(tensor_reduce(C, OP_MAX, s, &ax, 1, 1, &E)), "s_max");
	e = ok(tensor_exp(C, ok(tensor_alu(C, OP_SUB, s, mx, &E)), &E));
	sum = named(ok(tensor_sum(C, e, &ax, 1, 1, &E)), "s_sum");
	e = ok(tensor_cast(C, DT_FLOAT32, ok(tensor_cast(C, DT_FLOAT16, e, &E)), &E));
	pv = named(ok(tensor_matmul(C, e, param("v", 2, 8, 4), &E)), "pv");
	o = ok(tensor_cast(C, DT_FLOAT16, ok(tensor_div(C, pv, sum, &E)), &E));   /* checked in float16 */
	start(o);
	OK(sched_split(S, "s_max", "j", (int64_t[]){ 0, 4 }, 2, &E));
	OK(sched_rolling_update(S, "s_sum", "s_max.j0", &E));
	before = now();
	assert_refused(sched_rolling_update(S, "pv", "s_max.j0", &E), before, "give {relax_casts = true}");
	free(before);
	OK(sched_rolling_update_opts(S, "pv", "s_max.j0", &fo, &E));
	assert_same(1e-2);   /* float16's rounding of p, before the rescale */
	stop();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fission, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flash_attention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relax_casts, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

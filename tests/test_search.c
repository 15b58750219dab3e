/* test_search.c - schedule search: grids of parameters and BEAM over OptOps, their rows, refusals, wrong candidates and the winner's trace. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "../backends/backend.h"
#include "../util/limits.h"
#include "sched_test.h"

/*
** Structure and correctness only: which candidate is fastest depends on the
** machine and its load, so no assertion compares two times except where the
** search guarantees the order (the winner is the fastest ok row).
*/

static BSearchResult R;

static int
setup_search(void **state)
{
	memset(&R, 0, sizeof R);
	return setup(state);
}

static int
teardown_search(void **state)
{
	backend_search_free(&R);
	return teardown(state);
}

/* 32x32x32, lowered with its output named c (stage c, loops i, j, k) */
static void
start_matmul(int64_t n)
{
	KLowerOpts lo = { "c" };
	UOp *root = matmul(n, n, n);
	Kernel *k = kernel_lower(root, &lo, &E);

	if (!k)
		fail_msg("lower: %s", E.msg);
	S = sched_new(k, root, &E);
	kernel_free(k);
	if (!S)
		fail_msg("sched_new: %s", E.msg);
}

static char *
table(void)
{
	Buf b;

	buf_init(&b);
	backend_search_table(&b, &R);
	if (getenv("TESSEL_SHOW"))
		print_message("%s", b.s);
	return buf_take(&b);
}

/*
** The grid's apply: bm by 8 tiles of c, then UPCAST of j1 by up; bm = 99
** fails in apply itself (a row, not an abort); up = 3 does not divide 8
** (sched_apply_opt refuses).
*/
static int
tile_upcast(Schedule *s, const int64_t *v, void *aux, Err *e)
{
	int *calls = aux;

	(*calls)++;
	if (v[0] == 99)
		return err_set(e, "tile_upcast: bm = 99 is not a tile size I take");
	if (sched_tile(s, "c", "i", "j", v[0], 8, e) < 0)
		return -1;
	return sched_apply_opt(s, "UPCAST", "c", "j1", v[1], NULL, e);
}

static int progress_calls, progress_last;

static void
count_progress(int done, int total, double best_s, void *aux)
{
	progress_calls++;
	assert_true(done <= total);
	progress_last = done;
}

static void
test_grid(void **state)
{
	static const int64_t bm[] = { 4, 8, 99 }, up[] = { 4, 3 };
	BSearchParam p[2] = { { "bm", bm, 3 }, { "up", up, 2 } };
	BSearchOpts o = { 0 };
	char *t, *tr, want[200];
	int calls = 0, i, nok = 0, nref = 0;

	start_matmul(32);
	o.param = p;
	o.nparam = 2;
	o.apply = tile_upcast;
	o.aux = &calls;
	o.reps = 3;
	o.progress = count_progress;
	progress_calls = 0;
	if (backend_search(S, &o, &R, &E) < 0)
		fail_msg("search: %s", E.msg);
	t = table();
	assert_int_equal(R.nrow, 6);
	assert_int_equal(calls, 6);
	assert_int_equal(progress_calls, 7);   /* 0 of 6, then after each */
	assert_int_equal(progress_last, 6);
	assert_false(R.beam);
	assert_true(R.baseline_s > 0);
	for (i = 0; i < R.nrow; i++) {
		const BSearchRow *w = &R.row[i];

		if (w->val[0] == 99) {
			assert_int_equal(w->status, BS_REFUSED);
			assert_non_null(strstr(w->msg, "bm = 99 is not a tile size"));
			nref++;
		} else if (w->val[1] == 3) {
			assert_int_equal(w->status, BS_REFUSED);
			assert_non_null(strstr(w->msg, "does not split by 3"));
			nref++;
		} else {
			assert_int_equal(w->status, BS_OK);
			assert_true(w->time_s > 0 && w->speedup > 0);
			nok++;
		}
	}
	assert_int_equal(nok, 2);
	assert_int_equal(nref, 4);
	/* the winner is the fastest ok row, its steps are s's now, and s verifies */
	assert_true(R.best >= 0 && R.row[R.best].status == BS_OK);
	for (i = 0; i < R.nrow; i++)
		if (R.row[i].status == BS_OK)
			assert_true(R.row[R.best].time_s <= R.row[i].time_s);
	assert_true(R.best_s == R.row[R.best].time_s);
	tr = trace();
	snprintf(want, sizeof want, "s:tile(\"c\", \"i\", \"j\", %lld, 8)\ns:apply_opt(\"UPCAST\", \"c\", \"j1\", 4)\n",
	         (long long)R.row[R.best].val[0]);
	assert_string_equal(tr, want);
	if (sched_verify(S, NULL, NULL, &E) < 0)
		fail_msg("the chosen schedule: %s", E.msg);
	/* the table: a header, the winner marked, the refusals with their reasons */
	assert_non_null(strstr(t, "search (grid): 6 candidates, 2 ok, 0 wrong"));
	assert_non_null(strstr(t, "  *"));
	assert_non_null(strstr(t, "refused: tile_upcast: bm = 99"));
	free(tr);
	free(t);
}

static int
tile_only(Schedule *s, const int64_t *v, void *aux, Err *e)
{
	return sched_tile(s, "c", "i", "j", v[0], v[1], e);
}

static int
tile_only_square(Schedule *s, const int64_t *v, void *aux, Err *e)
{
	return sched_tile(s, "c", "i", "j", v[0], v[0], e);
}

/* more points than the budget: budget of them, distinct, in a seeded order that repeats */
static void
test_grid_budget(void **state)
{
	static const int64_t f[] = { 1, 2, 4, 8 };
	BSearchParam p[2] = { { "fi", f, 4 }, { "fj", f, 4 } };
	BSearchOpts o = { 0 };
	int64_t first[5][2];
	int i, j;

	start_matmul(16);
	o.param = p;
	o.nparam = 2;
	o.apply = tile_only;
	o.budget = 5;
	o.reps = 1;
	o.seed = 7;
	o.no_verify = 1;
	if (backend_search(S, &o, &R, &E) < 0)
		fail_msg("search: %s", E.msg);
	assert_int_equal(R.nrow, 5);
	assert_int_equal(R.total, 5);
	assert_non_null(strstr(R.stop, "budget of 5 candidates (of 16)"));
	for (i = 0; i < 5; i++) {
		first[i][0] = R.row[i].val[0];
		first[i][1] = R.row[i].val[1];
		assert_int_equal(R.row[i].status, BS_OK);
		for (j = 0; j < i; j++)
			assert_false(first[i][0] == first[j][0] && first[i][1] == first[j][1]);
	}
	/* the same seed, the same order */
	backend_search_free(&R);
	stop();
	start_matmul(16);
	if (backend_search(S, &o, &R, &E) < 0)
		fail_msg("search: %s", E.msg);
	for (i = 0; i < 5; i++) {
		assert_int_equal(R.row[i].val[0], first[i][0]);
		assert_int_equal(R.row[i].val[1], first[i][1]);
	}
}

/* i replaced by j in the stage's body (only the diagonal of A B is written): a step no primitive would take */
static int
diagonal_only(Schedule *s, const int64_t *v, void *aux, Err *e)
{
	Kernel *k;
	UOp *l[8], *old, *new, *body[8];
	int st, i;

	if (v[0] == 0)
		return 0;   /* the starting schedule as it is */
	if (!(k = sched_begin(s, e)))
		return -1;
	st = sched_stage(k, "c", e);
	assert_true(st >= 0 && sched_loops(k, st, l, 8) == 3);
	/* inside loop j (its range keeps j): i := j */
	old = krange_var(l[0]->src[0]);
	new = krange_var(l[1]->src[0]);
	for (i = 1; i < l[1]->nsrc; i++)
		body[i - 1] = kernel_substitute(k->c, l[1]->src[i], &old, &new, 1);
	if (sched_replace(k, st, l[1], kernel_loop(k, l[1]->src[0], body, l[1]->nsrc - 1), e) < 0) {
		kernel_free(k);
		return -1;
	}
	return sched_commit(s, k, "diagonal_only", "s:diagonal_only()", e);
}

/* a wrong candidate is reported, never wins; without verify the outputs' comparison catches it */
static void
test_wrong(void **state)
{
	static const int64_t which[] = { 0, 1 };
	BSearchParam p[1] = { { "wrong", which, 2 } };
	BSearchOpts o = { 0 };
	int nv;

	for (nv = 0; nv < 2; nv++) {
		start_matmul(8);
		o.param = p;
		o.nparam = 1;
		o.apply = diagonal_only;
		o.reps = 1;
		o.no_verify = nv;
		if (backend_search(S, &o, &R, &E) < 0)
			fail_msg("search: %s", E.msg);
		assert_int_equal(R.nrow, 2);
		assert_int_equal(R.row[0].status, BS_OK);
		assert_non_null(strstr(R.row[0].msg, "the same kernel as the starting schedule"));
		if (R.row[1].status != BS_WRONG)
			fail_msg("row 2: %s: %s", backend_search_status(R.row[1].status), R.row[1].msg);
		if (!strstr(R.row[1].msg, nv ? "differs from the starting schedule's" : "verify"))
			fail_msg("row 2: %s", R.row[1].msg);
		assert_int_equal(R.best, 0);
		assert_int_equal(S->nstep, 0);
		backend_search_free(&R);
		stop();
	}
}

/* BEAM on a small matmul: rows of OptOps, the winner's steps in the trace, s verifies */
static void
test_beam(void **state)
{
	BSearchOpts o = { 0 };
	char *t, *tr;
	Buf ob;
	int i;

	start_matmul(32);
	o.budget = 10;
	o.beam = 2;
	o.reps = 3;
	o.seed = 1;
	if (backend_search(S, &o, &R, &E) < 0)
		fail_msg("search: %s", E.msg);
	t = table();
	assert_true(R.beam);
	assert_true(R.nrow >= 1 && R.nrow <= 10);
	assert_true(R.rounds >= 1);
	for (i = 0; i < R.nrow; i++) {
		assert_true(R.row[i].nopt >= 1);
		/* every candidate of a correct schedule with correct OptOps is correct */
		if (R.row[i].status != BS_OK)
			fail_msg("row %d: %s: %s", i + 1, backend_search_status(R.row[i].status), R.row[i].msg);
	}
	/* the winner beats the baseline by construction; with none, the schedule stays */
	assert_true(R.best_s <= R.baseline_s);
	tr = trace();
	if (R.best < 0)
		assert_string_equal(tr, "");
	else {
		const BSearchRow *w = &R.row[R.best];

		assert_int_equal(S->nstep, w->nopt);
		for (i = 0; i < w->nopt; i++)
			assert_non_null(strstr(S->step[i].line, w->opt[i].op));
	}
	if (sched_verify(S, NULL, NULL, &E) < 0)
		fail_msg("the chosen schedule: %s", E.msg);
	buf_init(&ob);
	backend_search_opts(&ob, R.row[0].opt, R.row[0].nopt);
	assert_non_null(strstr(t, ob.s));
	assert_non_null(strstr(t, "search (BEAM over OptOps)"));
	buf_free(&ob);
	free(tr);
	free(t);
}

/* BEAM from an already scheduled kernel: its steps stay first; ops chooses the OptOps */
static void
test_beam_scheduled(void **state)
{
	static const char *const ops[] = { "UNROLL", NULL };
	BSearchOpts o = { 0 };
	int i;

	start_matmul(16);
	if (sched_decompose_reduction(S, "c", "k", &E) < 0)
		fail_msg("decompose_reduction: %s", E.msg);
	o.ops = ops;
	o.budget = 4;
	o.reps = 1;
	if (backend_search(S, &o, &R, &E) < 0)
		fail_msg("search: %s", E.msg);
	assert_true(R.nrow >= 1 && R.nrow <= 4);
	for (i = 0; i < R.nrow; i++)
		assert_string_equal(R.row[i].opt[0].op, "UNROLL");
	assert_non_null(strstr(S->step[0].line, "decompose_reduction"));
	if (sched_verify(S, NULL, NULL, &E) < 0)
		fail_msg("the chosen schedule: %s", E.msg);
}

/* Ctrl-C during the search (the REPL's handler sets the flag): an error, the schedule untouched */
static void
interrupt_after_two(int done, int total, double best_s, void *aux)
{
	if (done == 2)
		limits_interrupt();
}

static void
test_interrupt(void **state)
{
	static const int64_t f[] = { 2, 4, 8, 16 };
	BSearchParam p[1] = { { "f", f, 4 } };
	BSearchOpts o = { 0 };

	start_matmul(16);
	o.param = p;
	o.nparam = 1;
	o.apply = tile_only_square;
	o.reps = 1;
	o.progress = interrupt_after_two;
	assert_int_equal(backend_search(S, &o, &R, &E), -1);
	limits_clear_interrupt();
	assert_string_equal(E.msg, "search: interrupted after 2 candidates; the schedule is as it was");
	assert_int_equal(S->nstep, 0);
	assert_int_equal(R.nrow, 0);
}

/* the time limit stops the search between candidates, with what it found so far */
static void
test_time_limit(void **state)
{
	static const int64_t f[] = { 2, 4, 8, 16 };
	BSearchParam p[1] = { { "f", f, 4 } };
	BSearchOpts o = { 0 };

	start_matmul(16);
	o.param = p;
	o.nparam = 1;
	o.apply = tile_only_square;
	o.reps = 1;
	o.time_s = 1e-9;
	if (backend_search(S, &o, &R, &E) < 0)
		fail_msg("search: %s", E.msg);
	assert_int_equal(R.nrow, 0);
	assert_int_equal(R.best, -1);
	assert_non_null(strstr(R.stop, "the time limit of 1e-09 s"));
	assert_int_equal(S->nstep, 0);
}

static void
test_bad_options(void **state)
{
	static const int64_t v[] = { 1 };
	static const char *const ops[] = { "UPCAST", "WIDEN", NULL };
	BSearchParam p[2] = { { "a", v, 1 }, { "a", v, 1 } };
	BSearchOpts o = { 0 };

	start_matmul(8);
	o.param = p;
	o.nparam = 1;
	assert_int_equal(backend_search(S, &o, &R, &E), -1);
	assert_string_equal(E.msg, "search: 1 parameters but no apply function to apply them");
	o.apply = tile_only;
	o.nparam = 2;
	assert_int_equal(backend_search(S, &o, &R, &E), -1);
	assert_string_equal(E.msg, "search: parameter a is given twice");
	memset(&o, 0, sizeof o);
	o.ops = ops;
	assert_int_equal(backend_search(S, &o, &R, &E), -1);
	assert_non_null(strstr(E.msg, "search: unknown OptOp WIDEN in ops"));
	o.ops = NULL;
	o.reps = -1;
	assert_int_equal(backend_search(S, &o, &R, &E), -1);
	assert_non_null(strstr(E.msg, "none may be negative"));
	assert_int_equal(R.nrow, 0);
	assert_int_equal(S->nstep, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_grid, setup_search, teardown_search),
		cmocka_unit_test_setup_teardown(test_grid_budget, setup_search, teardown_search),
		cmocka_unit_test_setup_teardown(test_wrong, setup_search, teardown_search),
		cmocka_unit_test_setup_teardown(test_beam, setup_search, teardown_search),
		cmocka_unit_test_setup_teardown(test_beam_scheduled, setup_search, teardown_search),
		cmocka_unit_test_setup_teardown(test_interrupt, setup_search, teardown_search),
		cmocka_unit_test_setup_teardown(test_time_limit, setup_search, teardown_search),
		cmocka_unit_test_setup_teardown(test_bad_options, setup_search, teardown_search),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

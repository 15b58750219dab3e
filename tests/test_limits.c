/* test_limits.c - util/limits: defaults, setting, the message of a limit, the Ctrl-C flag, and each hook that checks or polls them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../backends/backend.h"
#include "../interp/sched/sched.h"
#include "../layout/layout.h"
#include "../util/limits.h"

static void
test_defaults(void **state)
{
	const Limits *l = limits_get();
	int i;

	assert_int_equal(l->tensor_bytes, (int64_t)4 << 30);
	assert_int_equal(l->steps, 1000000000);
	assert_int_equal(l->check_elems, (int64_t)1 << 22);
	assert_int_equal(l->pixels, (int64_t)1 << 25);
	assert_int_equal(l->code_bytes, (int64_t)64 << 20);
	for (i = 0; i < LIMIT_COUNT; i++) {
		assert_int_equal(limits_index(limits_name(i)), i);
		assert_int_equal(limits_value(i), limits_default_value(i));
		assert_true(strlen(limits_what(i)) > 10);
	}
	assert_int_equal(limits_index("stepz"), -1);
	assert_int_equal(limits_index(NULL), -1);
}

static void
test_set(void **state)
{
	Limits l = *limits_get(), bad;
	Err e;

	bad = l;
	bad.pixels = 0;
	assert_int_equal(limits_set(&bad, &e), -1);
	assert_non_null(strstr(e.msg, "pixels must be at least 1"));
	assert_int_equal(limits_get()->pixels, l.pixels);   /* nothing changed */
	bad = l;
	bad.steps = 42;
	assert_int_equal(limits_set(&bad, &e), 0);
	assert_int_equal(limits_value(LIMIT_STEPS), 42);
	assert_int_equal(limits_set(&l, &e), 0);
}

static void
test_check(void **state)
{
	Err e;

	assert_int_equal(limits_check(LIMIT_CHECK_ELEMS, (int64_t)1 << 22, "x", &e), 0);
	assert_int_equal(limits_check(LIMIT_CHECK_ELEMS, ((int64_t)1 << 22) + 1, "enumerating L", &e), -1);
	assert_string_equal(e.msg, "check_elems limit: enumerating L needs 4194305 elements, more than the "
	                    "limit of 4194304 (raise it with tessel.limits{check_elems = N})");
	assert_int_equal(limits_check(LIMIT_PIXELS, INT64_MAX, "p", NULL), -1);   /* NULL e is allowed */
}

static void
test_interrupt(void **state)
{
	Err e;

	assert_int_equal(limits_poll(&e), 0);
	limits_interrupt();
	assert_int_equal(limits_poll(&e), -1);
	assert_non_null(strstr(e.msg, "interrupted"));
	assert_int_equal(limits_poll(NULL), -1);   /* stays set for every loop on the way out */
	limits_clear_interrupt();
	assert_int_equal(limits_poll(&e), 0);
}

/* ---- the hooks: each refuses past its limit with the limit's message, and stops on Ctrl-C ---- */

static Limits saved;
static UCtx *C;
static Err E;

static int
setup(void **state)
{
	saved = *limits_get();
	return (C = uctx_new()) ? 0 : -1;
}

/* the limits and the flag as they were, whatever a test did */
static int
teardown(void **state)
{
	limits_clear_interrupt();
	limits_set(&saved, &E);
	uctx_free(C);
	C = NULL;
	return 0;
}

/* the limits in force with one changed */
static void
set_limit(int which, int64_t v)
{
	Limits l = *limits_get();

	switch (which) {
	case LIMIT_TENSOR_BYTES: l.tensor_bytes = v; break;
	case LIMIT_CHECK_ELEMS: l.check_elems = v; break;
	case LIMIT_CODE_BYTES: l.code_bytes = v; break;
	}
	assert_int_equal(limits_set(&l, &E), 0);
}

static void
has(const char *want)
{
	if (!strstr(E.msg, want))
		fail_msg("\"%s\" is not in \"%s\"", want, E.msg);
}

static UOp *
ok(UOp *u)
{
	if (!u)
		fail_msg("building a graph: %s", E.msg);
	return u;
}

/* x + 2 over a (rows, cols) tensor of ones */
static UOp *
ones_plus_two(int64_t rows, int64_t cols)
{
	int64_t s[2] = { rows, cols };

	return ok(tensor_alu(C, OP_ADD, ok(tensor_full(C, DT_FLOAT32, 1, s, 2, &E)),
	                     tensor_const(C, DT_FLOAT32, 2), &E));
}

/* tensor_realize: the default mem_limit is tensor_bytes; TEvalOpts.mem_limit overrides it. */
static void
test_realize(void **state)
{
	UOp *u = ones_plus_two(512, 512);   /* 1 MiB of float32 */
	TEvalOpts big = { (uint64_t)2 << 20, NULL, 0 };
	TBuf r;

	set_limit(LIMIT_TENSOR_BYTES, 1000);
	assert_int_equal(tensor_realize(u, NULL, &r, &E), -1);
	has("realize: the graph needs 1.0 MiB of buffers (tensor_bytes limit 1000 bytes; raise it with "
	    "tessel.limits{tensor_bytes = N})");
	assert_int_equal(tensor_realize(u, &big, &r, &E), 0);   /* the per-call option wins */
	tbuf_free(&r);
	assert_int_equal(limits_set(&saved, &E), 0);
	assert_int_equal(tensor_realize(u, NULL, &r, &E), 0);
	assert_true(tbuf_get(&r, 512 * 512 - 1) == 3);
	tbuf_free(&r);
	/* Ctrl-C: the element loop polls every 2^16 elements (2^18 here) */
	limits_interrupt();
	assert_int_equal(tensor_realize(u, NULL, &r, &E), -1);
	has("interrupted");
	limits_clear_interrupt();
	assert_int_equal(tensor_realize(ones_plus_two(4, 4), NULL, &r, &E), 0);
	tbuf_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_interrupt),
		cmocka_unit_test_setup_teardown(test_realize, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

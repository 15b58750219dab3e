/* test_limits.c - util/limits: defaults, setting, the message of a limit, the Ctrl-C flag. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_interrupt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

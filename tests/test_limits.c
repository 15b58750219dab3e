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
	                     uop_constf(C, DT_FLOAT32, 2), &E));
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

static int
tr_apply(void *ctx, const int64_t *idx, int rank, int64_t *flat, Err *e)
{
	const int64_t *d = ctx;

	*flat = idx[1] * d[0] + idx[0];
	return 0;
}

static int
tr_inv(void *ctx, int64_t flat, int64_t *idx, int rank, Err *e)
{
	const int64_t *d = ctx;

	idx[0] = flat % d[0];
	idx[1] = flat / d[0];
	return 0;
}

/* lego_check and a user GenP's verification: check_elems and Ctrl-C. */
static void
test_lego(void **state)
{
	int64_t d64[2] = { 64, 64 }, d3[2] = { 3, 3 }, d512[2] = { 512, 512 };
	Lego g;

	assert_int_equal(lego_row(&g, d64, 2, &E), 0);
	assert_int_equal(lego_check(&g, 1000, &E), 0);   /* too large: 0, with the message */
	has("check_elems limit: checking ");
	has("needs 4096 elements, more than the limit of 1000 (raise it with tessel.limits{check_elems = N}");
	assert_int_equal(lego_check(&g, limits_value(LIMIT_CHECK_ELEMS), &E), 1);
	assert_int_equal(lego_row(&g, d512, 2, &E), 0);
	limits_interrupt();
	assert_int_equal(lego_check(&g, (int64_t)1 << 20, &E), -1);
	has("interrupted");
	limits_clear_interrupt();

	set_limit(LIMIT_CHECK_ELEMS, 8);
	assert_int_equal(lego_genp_user(&g, d3, 2, tr_apply, tr_inv, d3, "tr, trinv", &E), -1);
	assert_string_equal(E.msg, "check_elems limit: verifying the user lego.GenP (tr, trinv) needs 9 "
	                    "elements, more than the limit of 8 (raise it with tessel.limits{check_elems = N})");
	assert_int_equal(limits_set(&saved, &E), 0);
	assert_int_equal(lego_genp_user(&g, d3, 2, tr_apply, tr_inv, d3, "tr, trinv", &E), 0);
	limits_interrupt();
	assert_int_equal(lego_genp_user(&g, d512, 2, tr_apply, tr_inv, d512, "tr, trinv", &E), -1);
	has("interrupted");
}

/* cute_same_function: the search for the first difference stops at check_elems; Ctrl-C. */
static void
test_same_function(void **state)
{
	Layout a, b;
	int same;
	int64_t where;

	/* the same up to 4096, then b jumps by 8192 */
	assert_int_equal(cute_parse("8192:1", &a, &E), 0);
	assert_int_equal(cute_parse("(4096,2):(1,8192)", &b, &E), 0);
	assert_int_equal(cute_same_function(&a, &b, &same, &where, &E), 0);
	assert_int_equal(same, 0);
	assert_int_equal(where, 4096);
	set_limit(LIMIT_CHECK_ELEMS, 1000);
	assert_int_equal(cute_same_function(&a, &b, &same, &where, &E), 0);
	assert_int_equal(same, 0);   /* the answer stands; where is not searched past the limit */
	assert_int_equal(where, -1);
	assert_int_equal(limits_set(&saved, &E), 0);
	/* a first difference at 2^16: the poll at 2^16 - 1 comes first */
	assert_int_equal(cute_parse("131072:1", &a, &E), 0);
	assert_int_equal(cute_parse("(65536,2):(1,131072)", &b, &E), 0);
	limits_interrupt();
	assert_int_equal(cute_same_function(&a, &b, &same, &where, &E), -1);
	has("interrupted");
	limits_clear_interrupt();
	assert_int_equal(cute_same_function(&a, &b, &same, &where, &E), 0);
	assert_int_equal(where, 65536);
}

/* x * 2 over a (rows, cols) param, lowered to a kernel */
static Kernel *
scale_kernel(int64_t rows, int64_t cols, UOp **graph)
{
	int64_t s[2] = { rows, cols };
	UOp *x = ok(tensor_param(C, "x", 0, s, 2, DT_FLOAT32, NULL, &E));
	Kernel *k;

	*graph = ok(tensor_alu(C, OP_MUL, x, uop_constf(C, DT_FLOAT32, 2), &E));
	if (!(k = kernel_lower(*graph, NULL, &E)))
		fail_msg("kernel_lower: %s", E.msg);
	return k;
}

/* sched_verify: trials x output elements against check_elems; Ctrl-C. */
static void
test_verify(void **state)
{
	UOp *g;
	Kernel *k = scale_kernel(4, 8, &g);
	Schedule *s = sched_new(k, g, &E);
	SVerifyOpts o = { 5, 0, 0, 0 };

	assert_non_null(s);
	set_limit(LIMIT_CHECK_ELEMS, 100);
	assert_int_equal(sched_verify(s, &o, NULL, &E), -1);
	assert_string_equal(E.msg, "check_elems limit: verify: 5 trials of 32 output elements needs 160 "
	                    "elements, more than the limit of 100 (raise it with tessel.limits{check_elems = N})");
	assert_int_equal(sched_verify(s, NULL, NULL, &E), 0);   /* 3 trials: 96 */
	assert_int_equal(limits_set(&saved, &E), 0);
	sched_free(s);
	kernel_free(k);
	/* 2^17 random inputs per trial: drawing them polls */
	k = scale_kernel(512, 256, &g);
	s = sched_new(k, g, &E);
	assert_non_null(s);
	limits_interrupt();
	assert_int_equal(sched_verify(s, NULL, NULL, &E), -1);
	has("interrupted");
	limits_clear_interrupt();
	assert_int_equal(sched_verify(s, NULL, NULL, &E), 0);
	sched_free(s);
	kernel_free(k);
}

/* every dialect's source against code_bytes (one check at the end of emit_kernel) */
static void
test_code_bytes(void **state)
{
	static const struct { Dialect d; const char *what; } ds[] = {
		{ D_C, "code_bytes limit: the c source needs " },
		{ D_CUDA, "code_bytes limit: the cuda source needs " },
		{ D_OPENCL, "code_bytes limit: the opencl source needs " },
		{ D_TRITON, "code_bytes limit: the triton source needs " },
	};
	UOp *g;
	Kernel *k = scale_kernel(4, 8, &g);
	Buf b;
	size_t i;

	for (i = 0; i < sizeof ds / sizeof ds[0]; i++) {
		buf_init(&b);
		set_limit(LIMIT_CODE_BYTES, 100);
		assert_int_equal(backend_source(&b, k, ds[i].d, &E), -1);
		has(ds[i].what);
		has("bytes, more than the limit of 100 (raise it with tessel.limits{code_bytes = N})");
		buf_reset(&b);
		assert_int_equal(limits_set(&saved, &E), 0);
		if (backend_source(&b, k, ds[i].d, &E) < 0)
			fail_msg("%s", E.msg);
		assert_true(b.len > 100);
		buf_free(&b);
	}
	kernel_free(k);
}

/* the C JIT: Ctrl-C while the compiler runs stops and reaps it */
static void
test_jit_interrupt(void **state)
{
	UOp *g;
	Kernel *k = scale_kernel(4, 8, &g);
	TBuf bufs[2];
	float x[32];
	int i;

	for (i = 0; i < 32; i++)
		x[i] = (float)i;
	memset(bufs, 0, sizeof bufs);
	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_INPUT) {
			bufs[i].dtype = DT_FLOAT32;
			bufs[i].numel = 32;
			bufs[i].data = x;
		}
	limits_interrupt();
	assert_int_equal(backend_jit_run(k, bufs, NULL, &E), -1);
	has("jit: interrupted (Ctrl-C) while cc compiled k1.c");
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);   /* no child left, not even a zombie */
	assert_int_equal(errno, ECHILD);
	limits_clear_interrupt();
	if (backend_jit_run(k, bufs, NULL, &E) < 0)
		fail_msg("backend_jit_run: %s", E.msg);
	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_OUTPUT) {
			assert_true(tbuf_get(&bufs[i], 31) == 62);
			tbuf_free(&bufs[i]);
		}
	kernel_free(k);
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
		cmocka_unit_test_setup_teardown(test_lego, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_function, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify, setup, teardown),
		cmocka_unit_test_setup_teardown(test_code_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jit_interrupt, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_algebra.c - the canonical form of real expressions: the identities reduction fusion proves, and the ones it must not. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../interp/ir/algebra.h"

static UCtx *C;
static UOp *t, *r, *r2, *x, *y, *cc;

static int
setup(void **state)
{
	(void)state;
	C = uctx_new();
	t = alg_sym(C, "t");
	r = alg_sym(C, "r");
	r2 = alg_sym(C, "r'");
	x = alg_sym(C, "x");
	y = alg_sym(C, "y");
	cc = alg_sym(C, "c");
	return C ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	uctx_free(C);
	return 0;
}

static UOp *
k(double v)
{
	return uop_constf(C, DT_FLOAT32, v);
}

static UOp *
op2(Op op, UOp *a, UOp *b)
{
	return uop_new(C, op, DT_FLOAT32, (UOp *[]){ a, b }, 2, 0, 0, NULL, NULL, 0);
}

static UOp *
op1(Op op, UOp *a)
{
	return uop_new(C, op, DT_FLOAT32, &a, 1, 0, 0, NULL, NULL, 0);
}

static int
eq(UOp *a, UOp *b_)
{
	Err e;
	int rc = alg_equal(C, a, b_, &e);

	if (rc < 0) {
		Buf b;

		buf_init(&b);
		uop_print(&b, a, D_INFIX);
		emit(&b, "  vs  ");
		uop_print(&b, b_, D_INFIX);
		fail_msg("%s: %s", e.msg, b.s ? b.s : "?");
	}
	return rc;
}

/* exp(v) as the lowering writes it: exp2(v * log2(e)) in float32 */
static UOp *
ex(UOp *v)
{
	return op1(OP_EXP2, op2(OP_MUL, v, k(1.4426950408889634)));
}

static void
test_identities(void **state)
{
	(void)state;
	assert_true(eq(op1(OP_LOG2, op1(OP_EXP2, x)), x));
	assert_true(eq(op1(OP_EXP2, op1(OP_LOG2, x)), x));
	assert_true(eq(op2(OP_MUL, x, op1(OP_RECIP, x)), k(1)));
	assert_true(eq(op2(OP_MUL, op2(OP_ADD, x, y), op2(OP_SUB, x, y)),
	               op2(OP_SUB, op2(OP_MUL, x, x), op2(OP_MUL, y, y))));
	assert_true(eq(op2(OP_MUL, ex(x), ex(y)), ex(op2(OP_ADD, x, y))));
	assert_true(eq(op2(OP_ADD, op2(OP_MAX, x, y), t), op2(OP_MAX, op2(OP_ADD, y, t), op2(OP_ADD, x, t))));
	assert_true(eq(op2(OP_MUL, op2(OP_MAX, x, y), ex(t)), op2(OP_MAX, op2(OP_MUL, x, ex(t)), op2(OP_MUL, y, ex(t)))));
	assert_true(eq(op1(OP_NEG, op2(OP_MAX, x, y)), op2(OP_MIN, op1(OP_NEG, x), op1(OP_NEG, y))));
	/* and what is not an identity */
	assert_false(eq(op2(OP_ADD, x, y), op2(OP_MUL, x, y)));
	assert_false(eq(op2(OP_MUL, op2(OP_MAX, x, y), t), op2(OP_MAX, op2(OP_MUL, x, t), op2(OP_MUL, y, t))));
	assert_false(eq(op2(OP_ADD, op2(OP_ADD, x, y), t), op2(OP_ADD, op2(OP_ADD, x, t), op2(OP_ADD, y, t))));
}

/* Figure 10: g(r, c) = exp(c - r); the inverse in c gives h(t, r, r') = exp(r - r') t */
static void
test_figure10(void **state)
{
	UOp *g = ex(op2(OP_SUB, cc, r)), *inv, *h, *hn;
	Err e;

	(void)state;
	/* c = g_c^-1(r, t) = log(t) + r, written as the inversion of each node builds it */
	inv = op2(OP_ADD, op2(OP_MUL, op1(OP_LOG2, t), op1(OP_RECIP, k(1.4426950408889634))), r);
	h = ex(op2(OP_SUB, inv, r2));
	assert_int_equal(alg_normalize(C, h, &hn, &e), 0);
	assert_true(eq(hn, op2(OP_MUL, t, ex(op2(OP_SUB, r, r2)))));
	/* Eq. 4: h(g(r, c), r, r') = g(r', c) */
	{
		UOp *sub[1] = { t }, *val[1] = { g };
		UOp *hg = NULL;

		(void)sub;
		(void)val;
		hg = op2(OP_MUL, g, ex(op2(OP_SUB, r, r2)));
		assert_true(eq(hg, ex(op2(OP_SUB, cc, r2))));
	}
	/* Eq. 5 for f = +: h(x + y) = h(x) + h(y) */
	assert_true(eq(op2(OP_MUL, op2(OP_ADD, x, y), ex(op2(OP_SUB, r, r2))),
	               op2(OP_ADD, op2(OP_MUL, x, ex(op2(OP_SUB, r, r2))), op2(OP_MUL, y, ex(op2(OP_SUB, r, r2))))));
	/* idempotent: the canonical form is a fixed point */
	{
		UOp *again;

		assert_int_equal(alg_normalize(C, hn, &again, &e), 0);
		assert_ptr_equal(again, hn);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_identities, setup, teardown),
		cmocka_unit_test_setup_teardown(test_figure10, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

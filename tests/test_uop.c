/* test_uop.c - the UOp IR: hash-consing, min_max, the rewrite engine, each simplification rule, printers, lowering. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../interp/ir/uop.h"
#include "../layout/lower.h"
#include "prop.h"

static UCtx *C;

static int
setup(void **state)
{
	C = uctx_new();
	return C ? 0 : -1;
}

static int
teardown(void **state)
{
	uctx_free(C);
	C = NULL;
	return 0;
}

#define K(v) uop_int(C, v)
#define ADD(a, b) uop_add(C, a, b)
#define SUB(a, b) uop_sub(C, a, b)
#define MUL(a, b) uop_mul(C, a, b)
#define DIV(a, b) uop_idiv(C, a, b)
#define MOD(a, b) uop_mod(C, a, b)

static char *
str(const UOp *u, Dialect d)
{
	static char out[8][8192];
	static int k;
	Buf b;

	buf_init(&b);
	uop_print(&b, u, d);
	k = (k + 1) % 8;
	snprintf(out[k], sizeof out[k], "%s", b.s ? b.s : "");
	buf_free(&b);
	return out[k];
}

static UOp *
simp(UOp *u)
{
	UOp *r;
	Err e;

	if (uop_simplify(C, u, &r, &e) < 0)
		fail_msg("simplify %s: %s", str(u, D_INFIX), e.msg);
	return r;
}

static void
assert_equiv(UOp *a, UOp *b)
{
	int eq;
	Buf cex;
	Err e;

	buf_init(&cex);
	if (uop_equivalent(a, b, 1 << 22, &eq, &cex, NULL, NULL, &e) < 0)
		fail_msg("equivalent: %s", e.msg);
	if (!eq)
		fail_msg("%s and %s differ: %s", str(a, D_INFIX), str(b, D_INFIX), cex.s);
	buf_free(&cex);
}

/* The simplified form of u prints as want, and is equivalent to u. */
static void
simplifies_to(UOp *u, const char *want)
{
	UOp *s = simp(u);

	assert_equiv(u, s);
	if (strcmp(str(s, D_INFIX), want) != 0)
		fail_msg("%s simplified to %s, want %s", str(u, D_INFIX), str(s, D_INFIX), want);
}

static void
test_hashcons(void **state)
{
	UOp *i = uop_var(C, "i", 0, 63), *j = uop_var(C, "j", 0, 7);
	UCtx *d = uctx_new();
	UOp *x, *y;

	assert_ptr_equal(i, uop_var(C, "i", 0, 63));
	assert_ptr_not_equal(i, uop_var(C, "i", 0, 64));
	assert_ptr_equal(ADD(MUL(i, K(4)), j), ADD(MUL(i, K(4)), j));
	assert_ptr_not_equal(ADD(i, j), ADD(j, i));   /* order is the simplifier's business */
	assert_ptr_equal(K(5), uop_const(C, DT_INDEX, 5));
	assert_ptr_not_equal(K(1), uop_const(C, DT_BOOL, 1));
	/* the same structure in another context: structurally equal, imported back identical */
	x = uop_add(d, uop_mul(d, uop_var(d, "i", 0, 63), uop_int(d, 4)), uop_var(d, "j", 0, 7));
	y = ADD(MUL(i, K(4)), j);
	assert_int_equal(uop_cmp(x, y), 0);
	assert_ptr_equal(uop_import(C, x), y);
	uctx_free(d);
	/* names and ranges are checked */
	assert_null(uop_var(C, "1x", 0, 1));
	assert_null(uop_var(C, "i", 3, 2));
	assert_null(uop_var(C, "a-b", 0, 1));
}

static void
test_constructors(void **state)
{
	UOp *i = uop_var(C, "i", 0, 63), *o;

	assert_ptr_equal(MUL(i, K(1)), i);
	assert_ptr_equal(MUL(K(1), i), i);
	assert_ptr_equal(ADD(i, K(0)), i);
	assert_ptr_equal(ADD(K(0), i), i);
	assert_ptr_equal(SUB(i, K(0)), i);
	assert_ptr_equal(DIV(i, K(1)), i);
	assert_true(uop_is_const(MUL(i, K(0)), 0));
	assert_true(uop_is_const(MOD(i, K(1)), 0));
	assert_true(uop_is_const(SUB(i, i), 0));
	assert_true(uop_is_const(ADD(K(3), K(4)), 7));
	assert_true(uop_is_const(DIV(K(-7), K(2)), -4));     /* floor */
	assert_true(uop_is_const(MOD(K(-7), K(2)), 1));
	assert_true(uop_is_const(MOD(K(7), K(-2)), -1));
	assert_ptr_equal(uop_neg(C, uop_neg(C, i)), i);
	/* constants move right in commutative ops */
	assert_ptr_equal(MUL(K(4), i), MUL(i, K(4)));
	/* overflowing or undefined constant arithmetic is left unfolded */
	o = ADD(K(INT64_MAX), K(1));
	assert_int_equal(o->op, OP_ADD);
	o = DIV(K(1), K(0));
	assert_int_equal(o->op, OP_IDIV);
	o = MUL(K(INT64_MIN), K(-1));
	assert_int_equal(o->op, OP_MUL);
	assert_ptr_equal(uop_where(C, uop_const(C, DT_BOOL, 1), i, K(3)), i);
	assert_ptr_equal(uop_where(C, uop_alu(C, OP_CMPLT, i, K(3)), i, i), i);
	assert_int_equal(uop_alu(C, OP_CMPLT, i, K(3))->dtype, DT_BOOL);
}

/* Soundness of min_max for every binary op: every value over the operands'
** ranges lies in the derived interval; and the spec's exact cases. */
static void
test_minmax(void **state)
{
	static const int64_t r[][2] = { { 0, 7 }, { -5, 3 }, { 2, 9 }, { -9, -2 }, { 0, 0 }, { 3, 3 }, { -1, 1 } };
	int n = sizeof r / sizeof r[0], a, b, op;
	char na[16], nb[16];
	int64_t x, y, v, w[2];
	UOp *u, *p, *q;
	Err e;

	for (op = OP_NEG; op < OP_COUNT; op++) {
		if (op == OP_CAST || op == OP_WHERE || (uop_info[op].flags & U_TENSOR))
			continue;   /* tensor ops: tests/test_tensor.c */
		for (a = 0; a < n; a++)
			for (b = 0; b < n; b++) {
				snprintf(na, sizeof na, "a%d", a);
				snprintf(nb, sizeof nb, "b%d", b);
				p = uop_var(C, na, r[a][0], r[a][1]);
				q = uop_var(C, nb, r[b][0], r[b][1]);
				if ((op == OP_SHL || op == OP_SHR) && r[b][0] < 0)
					continue;
				u = uop_info[op].arity == 1 ? uop_new(C, (Op)op, DT_INDEX, &p, 1, 0, 0, NULL, NULL, 0)
				  : uop_new(C, (Op)op, (uop_info[op].flags & U_CMP) ? DT_BOOL : DT_INDEX,
				            (UOp *[]){ p, q }, 2, 0, 0, NULL, NULL, 0);
				for (x = r[a][0]; x <= r[a][1]; x++)
					for (y = r[b][0]; y <= r[b][1]; y++) {
						w[0] = x;
						w[1] = y;
						if (uop_fold((Op)op, (DType)u->dtype, w, uop_info[op].arity, &v) < 0)
							continue;   /* division by zero */
						if (v < u->vmin || v > u->vmax)
							fail_msg("%s over [%lld,%lld] x [%lld,%lld]: %lld at (%lld,%lld) "
							         "outside [%lld,%lld]", uop_info[op].name,
							         (long long)r[a][0], (long long)r[a][1], (long long)r[b][0],
							         (long long)r[b][1], (long long)v, (long long)x, (long long)y,
							         (long long)u->vmin, (long long)u->vmax);
					}
			}
	}
	/* the spec's table, exactly */
	p = uop_var(C, "p", -3, 5);
	q = uop_var(C, "q", 2, 4);
	u = ADD(p, q);
	assert_true(u->vmin == -1 && u->vmax == 9);
	u = MUL(p, q);
	assert_true(u->vmin == -12 && u->vmax == 20);
	u = uop_alu(C, OP_MAX, p, q);
	assert_true(u->vmin == 2 && u->vmax == 5);
	u = uop_where(C, uop_alu(C, OP_CMPLT, p, K(0)), q, K(10));
	assert_true(u->vmin == 2 && u->vmax == 10);
	u = uop_alu(C, OP_CMPLT, q, K(5));
	assert_true(u->vmin == 1 && u->vmax == 1);
	u = MOD(p, K(4));
	assert_true(u->vmin == 0 && u->vmax == 3);
	u = MOD(q, K(8));
	assert_true(u->vmin == 2 && u->vmax == 4);
	u = DIV(p, K(2));
	assert_true(u->vmin == -2 && u->vmax == 2);
	u = uop_cast(C, DT_INT32, MUL(p, K((int64_t)1 << 40)));
	assert_true(u->vmin == INT32_MIN && u->vmax == INT32_MAX);   /* wraps: the dtype range */
	u = uop_cast(C, DT_BOOL, q);
	assert_true(u->vmin == 1 && u->vmax == 1);
	u = ADD(uop_var(C, "big", 0, INT64_MAX), K(1));
	assert_true(u->vmin == INT64_MIN && u->vmax == INT64_MAX);   /* overflow: claim nothing */
	(void)e;
}

/* LEGO's Table II, each rule with its side condition holding and failing. */
static void
test_lego_rules(void **state)
{
	UOp *i = uop_var(C, "i", 0, 63), *j = uop_var(C, "j", 0, 7), *r = uop_var(C, "r", 0, 7);
	UOp *w = uop_var(C, "w", 0, 8), *n = uop_var(C, "n", -3, 3), *y = uop_var(C, "y", 0, 100);

	/* 1: (d*q + r) % d -> r % d (and r when 0 <= r < d) */
	simplifies_to(MOD(ADD(MUL(K(8), j), i), K(8)), "i%8");
	simplifies_to(MOD(ADD(MUL(K(8), j), r), K(8)), "r");
	simplifies_to(MOD(ADD(MUL(K(6), j), i), K(8)), "(i + j*6)%8");    /* 6 is no multiple of 8 */
	/* 2: (d*q + r) / d -> q when 0 <= r < d, else q + r / d */
	simplifies_to(DIV(ADD(MUL(K(8), j), r), K(8)), "j");
	simplifies_to(DIV(ADD(MUL(K(8), j), w), K(8)), "j + w//8");       /* r may be d */
	simplifies_to(DIV(ADD(MUL(K(8), j), i), K(8)), "j + i//8");
	/* 3: (x % d) / d -> 0 */
	simplifies_to(DIV(MOD(y, K(7)), K(7)), "0");
	simplifies_to(DIV(MOD(y, K(7)), K(6)), "y%7//6");
	/* 4 and 5: x / a -> 0 and x % a -> x when 0 <= x < a */
	simplifies_to(DIV(j, K(8)), "0");
	simplifies_to(MOD(j, K(8)), "j");
	simplifies_to(DIV(w, K(8)), "w//8");
	simplifies_to(MOD(w, K(8)), "w%8");
	simplifies_to(MOD(n, K(4)), "n%4");       /* n may be negative */
	simplifies_to(DIV(n, K(4)), "n//4");
	/* 6: (n + y) / 1 -> n + y */
	simplifies_to(DIV(ADD(n, y), K(1)), "n + y");
	/* 7: a*(x/a) + x%a -> x, in any order and scaled */
	simplifies_to(ADD(MUL(K(8), DIV(i, K(8))), MOD(i, K(8))), "i");
	simplifies_to(ADD(MOD(i, K(8)), MUL(DIV(i, K(8)), K(8))), "i");
	simplifies_to(ADD(MUL(K(24), DIV(i, K(8))), MUL(MOD(i, K(8)), K(3))), "i*3");
	simplifies_to(ADD(MUL(K(8), DIV(i, K(4))), MOD(i, K(8))), "i//4*8 + i%8");   /* a differs */
}

static void
test_tinygrad_rules(void **state)
{
	UOp *i = uop_var(C, "i", 0, 63), *j = uop_var(C, "j", 0, 7);
	UOp *m0 = uop_var(C, "m0", 0, 7), *m1 = uop_var(C, "m1", 0, 63), *m2 = uop_var(C, "m2", 0, 64);
	UOp *x = uop_var(C, "x", -20, 20);

	simplifies_to(DIV(DIV(i, K(2)), K(4)), "i//8");
	simplifies_to(DIV(MOD(i, K(12)), K(4)), "i//4%3");
	simplifies_to(MOD(MOD(i, K(12)), K(4)), "i%4");
	simplifies_to(MOD(MOD(i, K(4)), K(12)), "i%4");
	/* small terms: (64*m0 + m1) // 128 -> m0 // 2 when 0 <= m1 < 64 */
	simplifies_to(DIV(ADD(MUL(m0, K(64)), m1), K(128)), "m0//2");
	simplifies_to(DIV(ADD(MUL(m0, K(64)), m2), K(128)), "(m0*64 + m2)//128");
	/* a common divisor of the coefficients and the divisor */
	simplifies_to(DIV(ADD(MUL(i, K(6)), K(4)), K(4)), "(i*3 + 2)//2");
	/* remainders recombine: (x//c)%K*c + x%c -> x%(c*K); x//(c*K)*K + (x//c)%K -> x//c */
	simplifies_to(ADD(MUL(MOD(DIV(i, K(4)), K(4)), K(4)), MOD(i, K(4))), "i%16");
	simplifies_to(ADD(MUL(DIV(i, K(16)), K(4)), MOD(DIV(i, K(4)), K(4))), "i//4");
	/* negative operands: floor semantics are kept */
	simplifies_to(DIV(ADD(MUL(x, K(4)), K(3)), K(4)), "x");
	simplifies_to(MOD(ADD(MUL(x, K(4)), K(3)), K(4)), "3");
	simplifies_to(DIV(x, K(-4)), "x//-4");
	/* ranges decide comparisons, min, max and where */
	simplifies_to(uop_alu(C, OP_CMPLT, j, K(8)), "true");
	simplifies_to(uop_alu(C, OP_CMPLT, ADD(j, K(3)), K(5)), "j < 2");
	simplifies_to(uop_alu(C, OP_CMPLT, DIV(i, K(4)), K(3)), "i < 12");
	simplifies_to(uop_alu(C, OP_CMPLT, ADD(ADD(MUL(i, K(4)), MUL(j, K(4))), K(2)), K(10)), "i + j < 2");
	simplifies_to(uop_alu(C, OP_CMPLT, MUL(x, K(3)), K(-4)), "x < -1");
	simplifies_to(uop_alu(C, OP_MIN, j, K(9)), "j");
	simplifies_to(uop_alu(C, OP_MAX, j, i), "max(i, j)");
	simplifies_to(uop_where(C, uop_alu(C, OP_CMPLT, i, K(64)), j, i), "j");
	/* bit operations on non-negative values */
	simplifies_to(uop_alu(C, OP_SHR, i, K(3)), "i//8");
	simplifies_to(uop_alu(C, OP_AND, i, K(7)), "i%8");
	simplifies_to(uop_alu(C, OP_AND, j, K(15)), "j");
	simplifies_to(uop_alu(C, OP_AND, ADD(MUL(m0, K(64)), m1), K(896)), "m0//2*128");
	simplifies_to(uop_alu(C, OP_AND, x, K(7)), "x & 7");   /* x may be negative */
}

/* Division and modulo by a symbolic (runtime) size N > 0. */
static void
test_symbolic_divisor(void **state)
{
	UOp *N = uop_var(C, "N", 1, 64), *M = uop_var(C, "M", 1, 64), *a = uop_var(C, "a", 0, 63);
	UOp *b = uop_var(C, "b", 0, 7), *z = uop_var(C, "z", -1, 3), *x;

	simplifies_to(DIV(ADD(MUL(a, N), b), N), "a + b//N");
	simplifies_to(MOD(ADD(MUL(a, N), b), N), "b%N");
	simplifies_to(DIV(ADD(MUL(MUL(a, N), K(4)), b), MUL(N, K(2))), "a*2 + b//(N*2)");
	simplifies_to(MOD(ADD(MUL(a, N), MUL(MUL(b, N), M)), N), "0");
	simplifies_to(ADD(MUL(DIV(a, N), N), MOD(a, N)), "a");
	simplifies_to(DIV(b, ADD(N, K(8))), "0");                /* 0 <= b < min(N + 8) */
	simplifies_to(MOD(b, ADD(N, K(8))), "b");
	simplifies_to(DIV(b, N), "b//N");                         /* N may be 1 */
	simplifies_to(DIV(ADD(MUL(a, N), b), z), "(b + N*a)//z");  /* z may be 0 or negative */
	x = ADD(MUL(a, N), b);
	simplifies_to(ADD(MUL(DIV(x, N), N), MOD(x, N)), "b + N*a");   /* through the expanded form */
}

static void
test_terms_and_cost(void **state)
{
	UOp *i = uop_var(C, "i", 0, 63), *j = uop_var(C, "j", 0, 7), *k = uop_var(C, "k", 0, 5);
	UOp *a, *b;

	/* like terms, constants, canonical order */
	simplifies_to(SUB(ADD(ADD(i, K(3)), MUL(i, K(2))), ADD(j, K(1))), "i*3 - j + 2");
	a = simp(ADD(j, i));
	b = simp(ADD(i, j));
	assert_ptr_equal(a, b);
	a = simp(MUL(MUL(j, K(3)), MUL(i, K(2))));
	b = simp(MUL(i, MUL(K(6), j)));
	assert_ptr_equal(a, b);
	simplifies_to(SUB(K(3), i), "3 - i");
	simplifies_to(uop_neg(C, ADD(i, j)), "-i - j");
	/* a common factor, where it saves multiplications */
	simplifies_to(ADD(ADD(MUL(i, K(4)), MUL(j, K(4))), K(8)), "(i + j + 2)*4");
	simplifies_to(ADD(ADD(MUL(i, K(4)), MUL(j, K(4))), K(3)), "(i + j)*4 + 3");
	simplifies_to(ADD(MUL(i, K(4)), K(8)), "i*4 + 8");
	/* the expanded form wins when it cancels */
	simplifies_to(SUB(MUL(ADD(i, K(1)), k), k), "i*k");
	/* the unexpanded form wins otherwise */
	simplifies_to(MUL(ADD(i, j), ADD(k, K(1))), "(i + j)*(k + 1)");
	/* simplification is idempotent */
	a = simp(ADD(MUL(ADD(i, j), K(4)), DIV(ADD(i, K(3)), K(2))));
	assert_ptr_equal(simp(a), a);
}

/* A rule that only ever swaps would never end: the engine says so. */
static UOp *
swap(UCtx *c, UOp *u, UOp **cap, void *aux)
{
	(*(int *)aux)++;
	return uop_new(c, OP_ADD, (DType)u->dtype, (UOp *[]){ u->src[1], u->src[0] }, 2, 0, 0, NULL, NULL, 0);
}

/* x * 2^k -> x << k for x >= 0, through captures and predicates. */
static UOp *
to_shift(UCtx *c, UOp *u, UOp **cap, void *aux)
{
	int64_t v = cap[1]->arg[0];
	int k = 0;

	if (v <= 0 || (v & (v - 1)))
		return NULL;
	while (((int64_t)1 << k) != v)
		k++;
	return uop_alu(c, OP_SHL, cap[0], uop_int(c, k));
}

static void
test_rewrite_engine(void **state)
{
	static const UPat x = { UPAT_ANY, 0, UP_NONNEG, 0, { 0 } };
	static const UPat y = { UPAT_ANY, 1, 0, 0, { 0 } };
	static const UPat c = { OP_CONST, 1, UP_CONST | UP_POS, 0, { 0 } };
	static const UPat addp = { OP_ADD, -1, 0, 2, { &x, &y } };
	static const UPat mulp = { OP_MUL, -1, 0, 2, { &x, &c } };
	static const URule loop[] = { { "swap", &addp, swap } };
	static const URule shift[] = { { "shift", &mulp, to_shift } };
	UOp *i = uop_var(C, "i", 0, 63), *n = uop_var(C, "n", -4, 4), *r;
	int count = 0;
	Err e;

	assert_int_equal(uop_rewrite(C, ADD(i, n), loop, 1, &count, 1000, &r, &e), -1);
	assert_non_null(strstr(e.msg, "no fixpoint"));
	assert_true(count > 100);
	/* bottom-up: both products become shifts, the negative one does not */
	if (uop_rewrite(C, ADD(MUL(MUL(i, K(4)), K(8)), MUL(n, K(2))), shift, 1, NULL, 0, &r, &e) < 0)
		fail_msg("%s", e.msg);
	assert_string_equal(str(r, D_INFIX), "((i << 2) << 3) + n*2");
	/* commutative patterns match either order */
	assert_int_equal(uop_rewrite(C, uop_new(C, OP_MUL, DT_INDEX, (UOp *[]){ K(16), i }, 2, 0, 0, NULL, NULL, 0),
	                             shift, 1, NULL, 0, &r, &e), 0);
	assert_string_equal(str(r, D_INFIX), "i << 4");
}

static void
test_printers(void **state)
{
	UOp *i = uop_var(C, "i", 0, 63), *n = uop_var(C, "n", -8, 8), *j = uop_var(C, "j", 0, 7);
	UOp *e = ADD(MUL(DIV(i, K(4)), K(8)), MOD(i, K(4)));
	UOp *f = DIV(SUB(n, K(5)), K(4));
	UOp *g = uop_where(C, uop_alu(C, OP_CMPLT, i, K(10)), uop_alu(C, OP_MIN, i, j), MOD(n, K(3)));
	UOp *h = uop_alu(C, OP_XOR, i, uop_alu(C, OP_SHR, uop_alu(C, OP_AND, i, K(56)), K(3)));
	UOp *b = uop_alu(C, OP_AND, uop_alu(C, OP_CMPLT, i, K(3)), uop_alu(C, OP_CMPNE, j, K(2)));
	UOp *big = ADD(i, K((int64_t)1 << 40));
	static const char *want[][D_COUNT] = {
		{ "i//4*8 + i%4", "i / 4 * 8 + i % 4", "i / 4 * 8 + i % 4", "i / 4 * 8 + i % 4",
		  "i // 4 * 8 + i % 4", "i // 4 * 8 + i % 4", "i // 4 * 8 + i % 4" },
		/* a constant divisor: the dividend moved to n >= 0 by a multiple of 4 */
		{ "(n - 5)//4", "((n + 11) / 4 - 4)", "((n + 11) / 4 - 4)", "((n + 11) / 4 - 4)",
		  "(n - 5) // 4", "((n + 11) // 4 - 4)", "(n - 5) // 4" },
		/* a divisor known only by its range: the form correct for every sign */
		{ "n//(j + 1)", "((n - ((n % (j + 1) + (j + 1)) % (j + 1))) / (j + 1))",
		  "((n - ((n % (j + 1) + (j + 1)) % (j + 1))) / (j + 1))",
		  "((n - ((n % (j + 1) + (j + 1)) % (j + 1))) / (j + 1))", "n // (j + 1)",
		  "((n - ((n % (j + 1) + (j + 1)) % (j + 1))) // (j + 1))", "n // (j + 1)" },
		{ "where(i < 10, min(i, j), n%3)", "(i < 10 ? (i < j ? i : j) : ((n + 9) % 3))",
		  "(i < 10 ? min(i, j) : ((n + 9) % 3))", "(i < 10 ? min(i, j) : ((n + 9) % 3))",
		  "(min(i, j) if i < 10 else n % 3)", "tl.where(i < 10, tl.minimum(i, j), ((n + 9) % 3))",
		  "i < 10 and math.min(i, j) or n % 3" },
		{ "i ^ ((i & 56) >> 3)", "i ^ ((i & 56) >> 3)", "i ^ ((i & 56) >> 3)", "i ^ ((i & 56) >> 3)",
		  "i ^ ((i & 56) >> 3)", "i ^ ((i & 56) >> 3)", "i ~ ((i & 56) >> 3)" },
		{ "(i < 3) & (j != 2)", "i < 3 & j != 2", "i < 3 & j != 2", "i < 3 & j != 2",
		  "(i < 3) & (j != 2)", "(i < 3) & (j != 2)", "i < 3 and j ~= 2" },
		{ "i + 1099511627776", "i + 1099511627776LL", "i + 1099511627776LL", "i + 1099511627776L",
		  "i + 1099511627776", "i + 1099511627776", "i + 1099511627776" },
	};
	UOp *v = DIV(n, ADD(j, K(1)));
	UOp *all[] = { e, f, v, g, h, b, big };
	int k, d;

	for (k = 0; k < (int)(sizeof all / sizeof all[0]); k++)
		for (d = 0; d < D_COUNT; d++)
			if (strcmp(str(all[k], (Dialect)d), want[k][d]) != 0)
				fail_msg("%s of %s: got %s, want %s", dialect_name((Dialect)d),
				         str(all[k], D_INFIX), str(all[k], (Dialect)d), want[k][d]);
}

static void
test_eval_errors(void **state)
{
	UOp *i = uop_var(C, "i", 0, 63), *z = uop_var(C, "z", -1, 1);
	UBind b[] = { { "i", 3 }, { "z", 0 } };
	int64_t v;
	int eq;
	Buf cex;
	Err e;

	assert_int_equal(uop_eval(DIV(i, z), b, 2, &v, &e), -1);
	assert_non_null(strstr(e.msg, "division by zero"));
	assert_int_equal(uop_eval(i, b + 1, 1, &v, &e), -1);
	assert_non_null(strstr(e.msg, "no value for variable i"));
	b[0].value = 64;
	assert_int_equal(uop_eval(i, b, 1, &v, &e), -1);
	assert_non_null(strstr(e.msg, "outside its range"));
	assert_int_equal(uop_eval(ADD(uop_var(C, "big", 0, INT64_MAX), K(1)),
	                          (UBind[]){ { "big", INT64_MAX } }, 1, &v, &e), -1);
	assert_non_null(strstr(e.msg, "overflows"));
	/* two ranges for one name */
	assert_int_equal(uop_equivalent(i, uop_var(C, "i", 0, 7), 100, &eq, NULL, NULL, NULL, &e), -1);
	assert_non_null(strstr(e.msg, "two ranges"));
	/* too many points */
	assert_int_equal(uop_equivalent(uop_var(C, "p", 0, 1 << 20), uop_var(C, "q", 0, 1 << 20),
	                                1 << 22, &eq, NULL, NULL, NULL, &e), -1);
	assert_non_null(strstr(e.msg, "more than"));
	/* the counterexample */
	buf_init(&cex);
	assert_int_equal(uop_equivalent(MOD(i, K(8)), uop_alu(C, OP_AND, i, K(3)), 100, &eq, &cex, NULL, NULL, &e), 0);
	assert_false(eq);
	assert_string_equal(cex.s, "i=4: a = 4, b = 0");
	buf_free(&cex);
}

/*
** Property tests. The seed comes from TESSEL_SEED or the clock and is printed.
*/


static UOp *V[3];

static UOp *
gen(int depth)
{
	UOp *a, *b;
	int64_t c;

	if (depth == 0 || rnd() % 4 == 0)
		return rnd() % 3 ? V[rnd() % 3] : K(rint_(-9, 9));
	a = gen(depth - 1);
	switch (rnd() % 14) {
	case 0: case 1: return ADD(a, gen(depth - 1));
	case 2: return SUB(a, gen(depth - 1));
	case 3: return MUL(a, K(rint_(-4, 8)));
	case 4: return depth < 3 ? MUL(a, gen(depth - 1)) : ADD(a, K(rint_(-9, 9)));
	case 5: case 6:
		while ((c = rint_(-9, 12)) == 0)
			;
		return DIV(a, K(c));
	case 7: case 8:
		while ((c = rint_(-9, 12)) == 0)
			;
		return MOD(a, K(c));
	case 9: return uop_alu(C, rnd() % 2 ? OP_MIN : OP_MAX, a, gen(depth - 1));
	case 10:
		b = gen(depth - 1);
		return uop_where(C, uop_alu(C, rnd() % 2 ? OP_CMPLT : OP_CMPNE, a, b), gen(depth - 1), b);
	case 11: return uop_neg(C, a);
	case 12:
		if (rnd() % 2)
			return uop_alu(C, rnd() % 2 ? OP_SHR : OP_SHL, a, K(rint_(0, 3)));
		/* a symbolic positive divisor, and a multiple of it */
		b = ADD(V[2], K(rint_(1, 3)));
		return uop_alu(C, rnd() % 2 ? OP_IDIV : OP_MOD, rnd() % 2 ? ADD(MUL(a, b), gen(depth - 1)) : a, b);
	default:
		b = gen(depth - 1);
		return uop_alu(C, rnd() % 3 == 0 ? OP_AND : rnd() % 2 ? OP_OR : OP_XOR, a, b);
	}
}

static void
test_random_simplify(void **state)
{
	int k;
	UOp *e, *s;
	int64_t before = 0, after = 0;

	V[0] = uop_var(C, "i", 0, 7);
	V[1] = uop_var(C, "j", -4, 5);
	V[2] = uop_var(C, "k", 0, 12);
	for (k = 0; k < 400; k++) {
		e = gen(4);
		s = simp(e);
		before += uop_ops(e);
		after += uop_ops(s);
		assert_equiv(e, s);
		if (uop_ops(s) > uop_ops(e))
			fail_msg("seed %llu: %s (%lld ops) simplified to %s (%lld ops)",
			         (unsigned long long)**(uint64_t **)state, str(e, D_INFIX),
			         (long long)uop_ops(e), str(s, D_INFIX), (long long)uop_ops(s));
	}
	printf("# 400 random expressions: %lld operations before, %lld after simplification\n",
	       (long long)before, (long long)after);
}

/*
** One compiled program of 60 random expressions (shared subexpressions once)
** gives uop_eval's value for each at every point; the binding lists the
** variables in another order, with a name no expression uses. Errors are
** uop_eval's: an unbound variable, a value outside its range, a division by
** zero at one point only.
*/
static void
test_prog(void **state)
{
	enum { N = 60 };
	UOp *ex[N], *z;
	UBind b[4] = { { "k", 0 }, { "unused", 99 }, { "i", 0 }, { "j", 0 } };
	int64_t got[N], want, i, j, kk;
	UProg *p;
	Err e;
	int k;

	V[0] = uop_var(C, "i", 0, 7);
	V[1] = uop_var(C, "j", -4, 5);
	V[2] = uop_var(C, "k", 0, 12);
	for (k = 0; k < N; k++)
		ex[k] = gen(4);
	p = uop_prog_new((const UOp *const *)ex, N, b, 4, &e);
	if (!p)
		fail_msg("%s", e.msg);
	for (i = 0; i <= 7; i++)
		for (j = -4; j <= 5; j++)
			for (kk = 0; kk <= 12; kk++) {
				b[0].value = kk;
				b[2].value = i;
				b[3].value = j;
				if (uop_prog_run(p, b, got, &e) < 0)
					fail_msg("seed %llu: run: %s", (unsigned long long)**(uint64_t **)state, e.msg);
				for (k = 0; k < N; k++) {
					if (uop_eval(ex[k], b, 4, &want, &e) < 0)
						fail_msg("eval %s: %s", str(ex[k], D_INFIX), e.msg);
					if (got[k] != want)
						fail_msg("seed %llu: %s at i=%lld j=%lld k=%lld: the program %lld, uop_eval %lld",
						         (unsigned long long)**(uint64_t **)state, str(ex[k], D_INFIX),
						         (long long)i, (long long)j, (long long)kk, (long long)got[k],
						         (long long)want);
				}
			}
	b[2].value = 8;
	assert_int_equal(uop_prog_run(p, b, got, &e), -1);
	assert_string_equal(e.msg, "eval: i = 8 is outside its range [0, 7]");
	uop_prog_free(p);
	assert_null(uop_prog_new((const UOp *const *)ex, N, b + 1, 3, &e));
	assert_string_equal(e.msg, "eval: no value for variable k");
	/* 12 / (j + 4): fails at j = -4 only */
	z = DIV(K(12), ADD(V[1], K(4)));
	p = uop_prog_new((const UOp *const *)&z, 1, b, 4, &e);
	assert_non_null(p);
	b[2].value = 0;
	b[3].value = 2;
	assert_int_equal(uop_prog_run(p, b, got, &e), 0);
	assert_int_equal(got[0], 2);
	b[3].value = -4;
	assert_int_equal(uop_prog_run(p, b, got, &e), -1);
	assert_non_null(strstr(e.msg, "division by zero"));
	uop_prog_free(p);
	uop_prog_free(NULL);
}

/* Printed C of random expressions, compiled once with the system compiler,
** gives the evaluator's value at every point. */
static void
test_c_execution(void **state)
{
	enum { N = 150 };
	UOp *ex[N];
	char dir[] = "/tmp/tessel_uop_XXXXXX", path[256], cmd[800], line[64];
	FILE *f, *p;
	int k, ok = 1;
	int64_t i, j, kk, v, got;
	UBind b[3] = { { "i", 0 }, { "j", 0 }, { "k", 0 } };
	Err e;
	long points = 0;

	V[0] = uop_var(C, "i", 0, 7);
	V[1] = uop_var(C, "j", -4, 5);
	V[2] = uop_var(C, "k", 0, 12);
	for (k = 0; k < N; k++)
		ex[k] = k % 2 ? simp(gen(4)) : gen(4);
	if (!mkdtemp(dir))
		skip();
	snprintf(path, sizeof path, "%s/t.c", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#include <stdint.h>\n#include <stdio.h>\nint main(void) {\n"
	           "  for (int64_t i = 0; i <= 7; i++) for (int64_t j = -4; j <= 5; j++)\n"
	           "  for (int64_t k = 0; k <= 12; k++) {\n");
	for (k = 0; k < N; k++) {
		Buf code;
		buf_init(&code);
		uop_print(&code, ex[k], D_C);
		fprintf(f, "    printf(\"%%lld\\n\", (long long)(%s));\n", code.s);
		buf_free(&code);
	}
	fprintf(f, "  }\n  return 0;\n}\n");
	fclose(f);
	snprintf(cmd, sizeof cmd, "cc -std=c99 -O0 -w -o %s/t %s 2>&1 && %s/t", dir, path, dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	for (i = 0; i <= 7 && ok; i++)
		for (j = -4; j <= 5 && ok; j++)
			for (kk = 0; kk <= 12 && ok; kk++)
				for (k = 0; k < N && ok; k++) {
					if (!fgets(line, sizeof line, p)) {
						ok = 0;
						fail_msg("the compiled program stopped early (expression %d: %s)", k, str(ex[k], D_C));
					}
					b[0].value = i;
					b[1].value = j;
					b[2].value = kk;
					if (uop_eval(ex[k], b, 3, &v, &e) < 0)
						fail_msg("eval %s: %s", str(ex[k], D_INFIX), e.msg);
					got = strtoll(line, NULL, 10);
					if (got != v)
						fail_msg("seed %llu: C gives %lld, the evaluator %lld for %s at i=%lld j=%lld k=%lld",
						         (unsigned long long)**(uint64_t **)state, (long long)got, (long long)v,
						         str(ex[k], D_C), (long long)i, (long long)j, (long long)kk);
					points++;
				}
	pclose(p);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		print_message("could not remove %s\n", dir);
	printf("# %d expressions compiled as C agree with the evaluator at %ld points\n", N, points);
}

/* Lowered CuTe layouts, simplified, evaluated at every coordinate, equal cute_eval_idx. */
static void
check_layout(const char *s)
{
	Layout l;
	Composed cl;
	int composed = strncmp(s, "Sw<", 3) == 0, n, k, m;
	const Layout *lay = composed ? &cl.layout : &l;
	UOp *vars[LOWER_MAXDIM], *x, *raw, *simple;
	int64_t shape[LOWER_MAXDIM], stride[LOWER_MAXDIM], idx, want, got, rest;
	UBind b[LOWER_MAXDIM];
	char names[LOWER_MAXDIM][16];
	Err e;

	if (composed ? composed_parse(s, &cl, &e) < 0 : cute_parse(s, &l, &e) < 0)
		fail_msg("parse %s: %s", s, e.msg);
	for (m = 0; m < 2; m++) {
		if (lower_cute_vars(C, lay, "i", m, vars, &n, &e) < 0)
			fail_msg("%s", e.msg);
		if (m == 0)
			assert_int_equal(composed ? lower_composed_idx(C, &cl, vars[0], &raw, &e)
			                          : lower_cute_idx(C, &l, vars[0], &raw, &e), 0);
		else
			assert_int_equal(composed ? lower_composed_crd(C, &cl, vars, n, &raw, &e)
			                          : lower_cute_crd(C, &l, vars, n, &raw, &e), 0);
		simple = simp(raw);
		assert_int_equal(lower_cute_modes(lay, shape, stride, &n, &e), 0);
		for (idx = 0; idx < cute_size(lay); idx++) {
			if (composed ? composed_eval_idx(&cl, idx, &want, &e) < 0 : cute_eval_idx(&l, idx, &want, &e) < 0)
				fail_msg("%s", e.msg);
			if (m == 0) {
				b[0].name = "i";
				b[0].value = idx;
				k = 1;
			} else
				for (k = 0, rest = idx; k < n; k++) {
					snprintf(names[k], sizeof names[k], "i%d", k);
					b[k].name = names[k];
					b[k].value = rest % shape[k];
					rest /= shape[k];
				}
			for (x = raw; x; x = x == raw && simple != raw ? simple : NULL) {
				if (uop_eval(x, b, k, &got, &e) < 0)
					fail_msg("%s: %s", s, e.msg);
				if (got != want)
					fail_msg("%s at %lld: the expression %s gives %lld, the layout %lld", s,
					         (long long)idx, str(x, D_INFIX), (long long)got, (long long)want);
			}
		}
	}
}

static void
test_lower_cute(void **state)
{
	static const char *const ls[] = {
		"8:1", "(4,8):(8,1)", "(8,4):(1,8)", "((2,4),(3,8)):((24,1),(8,2))", "(2,3,4):(12,4,1)",
		"(4,(2,2)):(2,(1,8))", "(3,5):(0,3)", "((2,2),(2,2)):((1,4),(2,8))", "(7,3):(-1,10)",
		"(1,4,1):(5,1,9)", "Sw<3,4,3> o 0 o (8,64):(64,1)", "Sw<2,0,2> o 0 o (4,4):(4,1)",
		"Sw<1,2,-1> o 3 o (8,8):(1,8)", "Sw<3,3,3> o 0 o ((8,2),(8,4)):((64,8),(1,512))",
	};
	Layout a, b, r;
	Tiler t;
	Buf s;
	Err e;
	int k;

	for (k = 0; k < (int)(sizeof ls / sizeof ls[0]); k++)
		check_layout(ls[k]);
	/* results of the algebra: a divide and a product */
	buf_init(&s);
	assert_int_equal(cute_parse("(16,8):(8,1)", &a, &e), 0);
	assert_int_equal(tiler_parse("(4,2)", &t, &e), 0);
	assert_int_equal(cute_zipped_divide(&a, &t, &r, &e), 0);
	cute_print(&s, &r);
	check_layout(s.s);
	buf_reset(&s);
	assert_int_equal(cute_parse("(2,3):(3,1)", &b, &e), 0);
	assert_int_equal(cute_parse("(4,2):(1,4)", &a, &e), 0);
	assert_int_equal(cute_raked_product(&b, &a, &r, &e), 0);
	cute_print(&s, &r);
	check_layout(s.s);
	buf_free(&s);
}

/* The figures docs/expressions.md quotes. */
static void
test_lower_counts(void **state)
{
	Layout l;
	Composed cl;
	UOp *x = uop_var(C, "i", 0, 191), *raw, *s, *v[8];
	Err e;
	int n;

	assert_int_equal(cute_parse("((2,4),(3,8)):((24,1),(8,2))", &l, &e), 0);
	assert_int_equal(lower_cute_idx(C, &l, x, &raw, &e), 0);
	s = simp(raw);
	assert_int_equal(uop_ops(raw), 15);
	assert_int_equal(uop_ops(s), 12);
	assert_string_equal(str(s, D_INFIX), "i//24*2 + i%2*24 + i//2%4 + i//8%3*8");
	assert_int_equal(composed_parse("Sw<3,4,3> o 0 o (8,64):(64,1)", &cl, &e), 0);
	assert_int_equal(lower_cute_vars(C, &cl.layout, "i", 1, v, &n, &e), 0);
	assert_int_equal(lower_composed_crd(C, &cl, v, n, &raw, &e), 0);
	s = simp(raw);
	assert_string_equal(str(s, D_INFIX), "(i0*64 + i1) ^ (i0//2*16)");
	assert_int_equal(uop_ops(s), 5);
	assert_int_equal(cute_parse("(8,4):(1,8)", &l, &e), 0);
	assert_int_equal(lower_cute_idx(C, &l, uop_var(C, "i", 0, 31), &raw, &e), 0);
	assert_string_equal(str(simp(raw), D_INFIX), "i");
}

static int
prop_setup(void **state)
{
	seed_rng();
	return setup(state);
}

static int
seed_teardown(void **state)
{
	return teardown(state);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hashcons, setup, teardown),
		cmocka_unit_test_setup_teardown(test_constructors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_minmax, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lego_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tinygrad_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symbolic_divisor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_terms_and_cost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rewrite_engine, setup, teardown),
		cmocka_unit_test_setup_teardown(test_printers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eval_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_simplify, prop_setup, seed_teardown),
		cmocka_unit_test_setup_teardown(test_c_execution, prop_setup, seed_teardown),
		cmocka_unit_test_setup_teardown(test_prog, prop_setup, seed_teardown),
		cmocka_unit_test_setup_teardown(test_lower_cute, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lower_counts, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

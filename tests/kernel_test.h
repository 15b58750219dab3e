/* kernel_test.h - what the tests that build kernels share: a fixture, builders for kernels by hand, small graphs, values. */
#ifndef TESSEL_KERNEL_TEST_H
#define TESSEL_KERNEL_TEST_H

/*
** Static helpers, as sched_test.h: include after <cmocka.h>. A driver uses
** some of them; the Makefile builds the tests with -Wno-unused-function.
*/

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../interp/kernel/kernel.h"

static UCtx *C;            /* tensor graphs */
static Kernel *K;          /* the kernel a test builds by hand */
static Err E;
static unsigned seed;      /* rand()'s, from TESSEL_SEED or the clock: failures print it */

static int
setup(void **state)
{
	const char *s = getenv("TESSEL_SEED");

	seed = s ? (unsigned)strtoul(s, NULL, 10) : (unsigned)time(NULL);
	srand(seed);
	C = uctx_new();
	K = kernel_new();
	memset(&E, 0, sizeof E);
	return C && K ? 0 : -1;
}

static int
teardown(void **state)
{
	uctx_free(C);
	kernel_free(K);
	C = NULL;
	K = NULL;
	return 0;
}

/* ---- graphs ---- */

static UOp *
ok(UOp *u)
{
	if (!u)
		fail_msg("building: %s", E.msg);
	return u;
}

/* a float32 input of shape (a, b) */
static UOp *
param(const char *name, int slot, int64_t a, int64_t b)
{
	int64_t s[2] = { a, b };

	return ok(tensor_param(C, name, slot, s, 2, DT_FLOAT32, NULL, &E));
}

/* ---- building kernels by hand, into K ---- */

static UOp *I(int64_t v) { return uop_int(K->c, v); }
static UOp *add(UOp *a, UOp *b) { return uop_add(K->c, a, b); }
static UOp *mul(UOp *a, UOp *b) { return uop_mul(K->c, a, b); }
static UOp *var(const char *n, int64_t ext) { return kernel_var(K, n, ext); }
static UOp *fc(DType t, double v) { return kernel_const(K, t, v); }

/* the n UOps after n in ap, into v */
static void
uops(UOp **v, int n, va_list ap)
{
	int i;

	for (i = 0; i < n; i++)
		v[i] = va_arg(ap, UOp *);
}

/* a buffer of n dimensions, each extent an int64_t */
static int
mkbuf(const char *name, DType t, UAddrSpace sc, KRole r, int n, ...)
{
	int64_t shape[T_MAXDIM];
	va_list ap;
	int i, b;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		shape[i] = va_arg(ap, int64_t);
	va_end(ap);
	if ((b = kernel_add_buffer(K, name, t, sc, r, shape, n, &E)) < 0)
		fail_msg("add_buffer %s: %s", name, E.msg);
	return b;
}

/* the element of buffer b at n indices */
static UOp *
at(int b, int n, ...)
{
	UOp *idx[T_MAXDIM];
	va_list ap;

	va_start(ap, n);
	uops(idx, n, ap);
	va_end(ap);
	return kernel_index(K, b, idx, n);
}

static UOp *ld(UOp *ix) { return kernel_load(K, ix, NULL); }
static UOp *st(UOp *ix, UOp *v) { return kernel_store(K, ix, v, NULL); }

/* op on a and b in type t; b NULL: a unary op */
static UOp *
alu(Op op, DType t, UOp *a, UOp *b)
{
	UOp *s[2] = { a, b };

	return ok(kernel_alu(K, op, t, s, b ? 2 : 1));
}

/* a loop over v of type t bound to hw, around n statements */
static UOp *
loopt(UOp *v, AxisType t, HwAxis hw, int n, ...)
{
	UOp *body[64];
	va_list ap;

	va_start(ap, n);
	uops(body, n, ap);
	va_end(ap);
	return kernel_loop(K, kernel_range(K, v, t, hw), body, n);
}

/* a loop over v bound to hw (HW_NONE: a plain loop), of the type the binding implies */
static UOp *
loop(UOp *v, HwAxis hw, int n, ...)
{
	UOp *body[64];
	va_list ap;

	va_start(ap, n);
	uops(body, n, ap);
	va_end(ap);
	return kernel_loop(K, kernel_range(K, v, hwaxis_is_block(hw) ? AX_GLOBAL : hw ? AX_LOCAL : AX_LOOP, hw),
	                   body, n);
}

/* n statements in a row (under an if that always holds) */
static UOp *
seq(int n, ...)
{
	UOp *body[64];
	va_list ap;

	va_start(ap, n);
	uops(body, n, ap);
	va_end(ap);
	return kernel_if(K, kernel_const(K, DT_BOOL, 1), body, n);
}

static void
stage(const char *name, UOp *body)
{
	if (kernel_add_stage(K, name, body, NULL, &E) < 0)
		fail_msg("stage %s: %s", name, E.msg);
}

/* the kernel fn builds into K, in a kernel of its own (the caller frees it) */
static Kernel *
by_hand(void (*fn)(void))
{
	Kernel *save = K, *r;

	assert_non_null(K = kernel_new());
	fn();
	r = K;
	K = save;
	return r;
}

/* ---- values ---- */

static float
getf(const TBuf *b, int64_t i)
{
	return ((const float *)b->data)[i];
}

/* uniform in [-1, 1], from the seeded rand() */
static double
frand(void)
{
	return (double)rand() / RAND_MAX * 2 - 1;
}

#endif

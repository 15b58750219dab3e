/* test_sched.c - schedule primitives: printed results, runs against the unscheduled kernel, refusals, undo, the trace. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../interp/kernel.h"
#include "../interp/sched/sched.h"

static UCtx *C;
static Schedule *S;
static Err E;

static int
setup(void **state)
{
	(void)state;
	C = uctx_new();
	S = NULL;
	memset(&E, 0, sizeof E);
	return C ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	sched_free(S);
	S = NULL;
	uctx_free(C);
	C = NULL;
	return 0;
}

/* ---- graphs ---- */

static UOp *
ok(UOp *u)
{
	if (!u)
		fail_msg("graph: %s", E.msg);
	return u;
}

static UOp *
param(const char *name, int slot, int64_t m, int64_t n)
{
	int64_t s[2] = { m, n };

	return ok(tensor_param(C, name, slot, s, n ? 2 : 1, DT_FLOAT32, NULL, &E));
}

/* softmax over rows as lua_tensor.c builds it: e / e.sum with e = exp(x - x.max) */
static UOp *
softmax(UOp *a)
{
	int64_t ax = 1;
	UOp *m, *x, *sum;

	m = ok(tensor_reduce(C, OP_MAX, a, &ax, 1, 1, &E));
	x = ok(tensor_alu(C, OP_SUB, a, m, &E));
	x = ok(tensor_alu(C, OP_MUL, x, tensor_const(C, DT_FLOAT32, 1.4426950408889634), &E));
	x = ok(tensor_unary(C, OP_EXP2, x, &E));
	sum = ok(tensor_unary(C, OP_RECIP, ok(tensor_reduce(C, OP_ADD, x, &ax, 1, 1, &E)), &E));
	return ok(tensor_alu(C, OP_MUL, x, sum, &E));
}

/* (m, k) @ (k, n) */
static UOp *
matmul(int64_t m, int64_t k, int64_t n)
{
	int64_t sa[3] = { m, k, 1 }, sb[3] = { 1, k, n }, ax = 1;
	UOp *a = param("a", 0, m, k), *b = param("b", 1, k, n), *x;

	x = ok(tensor_alu(C, OP_MUL, ok(tensor_reshape(C, a, sa, 3, &E)), ok(tensor_reshape(C, b, sb, 3, &E)), &E));
	return ok(tensor_reduce(C, OP_ADD, x, &ax, 1, 0, &E));
}

/* row sums of an (m, n) input */
static UOp *
rowsum(int64_t m, int64_t n)
{
	int64_t ax = 1;

	return ok(tensor_reduce(C, OP_ADD, param("x", 0, m, n), &ax, 1, 0, &E));
}

/* 2 * x + 1 over (m, n) */
static UOp *
affine(int64_t m, int64_t n)
{
	UOp *x = ok(tensor_alu(C, OP_MUL, param("x", 0, m, n), tensor_const(C, DT_FLOAT32, 2), &E));

	return ok(tensor_alu(C, OP_ADD, x, tensor_const(C, DT_FLOAT32, 1), &E));
}

/* a schedule of the lowered graph in S */
static void
start(UOp *root)
{
	Kernel *k = kernel_lower(root, NULL, &E);

	if (!k)
		fail_msg("lower: %s", E.msg);
	S = sched_new(k, root, &E);
	kernel_free(k);
	if (!S)
		fail_msg("sched_new: %s", E.msg);
}

static char *
printed(const Kernel *k)
{
	Buf b;

	buf_init(&b);
	kernel_print(&b, k, 0);
	return buf_take(&b);
}

static char *
trace(void)
{
	Buf b;

	buf_init(&b);
	sched_trace(&b, S);
	return b.s ? buf_take(&b) : calloc(1, 1);
}

static void
assert_printed(const char *want)
{
	char *got = printed(S->k);

	if (strcmp(got, want) != 0) {
		print_message("got:\n%s\nwant:\n%s\n", got, want);
		free(got);
		fail_msg("the printed kernel differs");
	}
	free(got);
}

/* ---- running ---- */

static uint64_t
rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* random inputs from seed (the same for every kernel of one graph), then run */
static int
run(const Kernel *k, uint64_t seed, TBuf *b, Err *e)
{
	int i;
	int64_t j;

	memset(b, 0, k->nbuf * sizeof *b);
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		uint64_t r = seed * 7919 + i;
		int bytes = dtype_bytes(kb->dtype);

		if (kb->role != KB_INPUT)
			continue;
		b[i].dtype = kb->dtype;
		b[i].ndim = kb->ndim;
		memcpy(b[i].shape, kb->shape, sizeof b[i].shape);
		b[i].axis = -1;
		b[i].numel = 1;
		for (j = 0; j < kb->ndim; j++)
			b[i].numel *= kb->shape[j];
		b[i].data = malloc(b[i].numel * bytes);
		for (j = 0; j < b[i].numel; j++)
			dtype_store_f(kb->dtype, (unsigned char *)b[i].data + j * bytes,
			              (double)(rnd(&r) % 2001) / 1000.0 - 1.0);
	}
	return kernel_run(k, NULL, b, NULL, e);
}

static void
freebufs(TBuf *b, int n)
{
	int i;

	for (i = 0; i < n; i++)
		tbuf_free(&b[i]);
}

/* a and b compute the same outputs on seeded random inputs: 0, else -1 with msg */
static int
same(const Kernel *a, const Kernel *b, double tol, uint64_t seed, char *msg, size_t n)
{
	TBuf ba[32], bb[32];
	Err e;
	int i, rc = 0;
	int64_t j;

	assert_true(a->nbuf <= 32 && a->nbuf == b->nbuf);
	if (run(a, seed, ba, &e) < 0) {
		snprintf(msg, n, "the original kernel fails: %s", e.msg);
		freebufs(ba, a->nbuf);
		return -1;
	}
	if (run(b, seed, bb, &e) < 0) {
		snprintf(msg, n, "the scheduled kernel fails: %s", e.msg);
		freebufs(ba, a->nbuf);
		freebufs(bb, b->nbuf);
		return -1;
	}
	for (i = 0; i < a->nbuf && rc == 0; i++) {
		if (a->buf[i].role != KB_OUTPUT)
			continue;
		for (j = 0; j < ba[i].numel && rc == 0; j++) {
			double x = tbuf_get(&ba[i], j), y = tbuf_get(&bb[i], j);

			if (tol == 0 ? x != y : fabs(x - y) > tol * (1 + fabs(x))) {
				snprintf(msg, n, "%s element %lld: scheduled %.9g, original %.9g (seed %llu)",
				         a->buf[i].name, (long long)j, y, x, (unsigned long long)seed);
				rc = -1;
			}
		}
	}
	freebufs(ba, a->nbuf);
	freebufs(bb, b->nbuf);
	return rc;
}

/* the current kernel against the original */
static void
assert_same(double tol)
{
	char msg[600];
	uint64_t seed;

	for (seed = 1; seed <= 2; seed++)
		if (same(S->orig, S->k, tol, seed, msg, sizeof msg) < 0)
			fail_msg("%s", msg);
}

/* rc < 0 and E.msg holds want; the kernel is as it was */
static void
assert_refused(int rc, const char *before, const char *want)
{
	char *after = printed(S->k);

	if (rc == 0)
		fail_msg("accepted, expected a refusal with \"%s\"", want);
	if (!strstr(E.msg, want))
		fail_msg("\"%s\" is not in: %s", want, E.msg);
	if (strcmp(before, after) != 0)
		fail_msg("a refusal changed the kernel:\n%s", after);
	if (getenv("TESSEL_SHOW"))
		print_message("%s\n", E.msg);
	free(after);
}

#define OK(call) do { if ((call) < 0) fail_msg("%s: %s", #call, E.msg); } while (0)

/* ---- split ---- */

static void
test_split(void **state)
{
	int64_t f4[2] = { 0, 4 };
	char *p;

	(void)state;
	start(rowsum(3, 10));
	p = printed(S->k);
	print_message("%s\n", p);
	free(p);
	OK(sched_split(S, "out", "j", f4, 2, &E));
	p = printed(S->k);
	print_message("%s\n", p);
	free(p);
	assert_same(0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_split, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* sched_test.h - what the schedule tests share: a context, graphs, running a kernel against the unscheduled one, refusals. */
#ifndef TESSEL_SCHED_TEST_H
#define TESSEL_SCHED_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../interp/kernel/kernel.h"
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

/* (m, k) @ (k, n) */
static UOp *
matmul(int64_t m, int64_t k, int64_t n)
{
	int64_t sa[3] = { m, k, 1 }, sb[3] = { 1, k, n }, ax = 1;
	UOp *a = param("a", 0, m, k), *b = param("b", 1, k, n), *x;

	x = ok(tensor_alu(C, OP_MUL, ok(tensor_reshape(C, a, sa, 3, &E)), ok(tensor_reshape(C, b, sb, 3, &E)), &E));
	return ok(tensor_reduce(C, OP_ADD, x, &ax, 1, 0, &E));
}

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

static void
stop(void)
{
	sched_free(S);
	S = NULL;
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
now(void)
{
	return printed(S->k);
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
show(const char *what)
{
	if (getenv("TESSEL_SHOW")) {
		char *p = now();

		print_message("-- %s\n%s", what, p);
		free(p);
	}
}

static void
assert_printed(const char *want)
{
	char *got = now();

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

/* inputs from seed by buffer name (schedules add and drop buffers), then run */
static int
run(const Kernel *k, uint64_t seed, TBuf *b, Err *e)
{
	int i;
	int64_t j;

	memset(b, 0, k->nbuf * sizeof *b);
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		uint64_t r = seed * 7919;
		const char *p;
		int bytes = dtype_bytes(kb->dtype);

		if (kb->role != KB_INPUT)
			continue;
		for (p = kb->name; *p; p++)
			r = r * 31 + (unsigned char)*p;
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

/* the outputs of a and b (matched by name) agree on seeded random inputs */
static int
same(const Kernel *a, const Kernel *b, double tol, uint64_t seed, char *msg, size_t n)
{
	TBuf ba[32], bb[32];
	Err e;
	int i, q, rc = 0;
	int64_t j;

	assert_true(a->nbuf <= 32 && b->nbuf <= 32);
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
		q = kernel_find_buffer(b, a->buf[i].name);
		assert_true(q >= 0);
		for (j = 0; j < ba[i].numel && rc == 0; j++) {
			double x = tbuf_get(&ba[i], j), y = tbuf_get(&bb[q], j);

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

/* the current kernel: checked, run against the unscheduled one, verified against the graph */
static void
assert_same(double tol)
{
	char msg[600];
	uint64_t seed;
	SVerifyOpts vo = { 2, 5, 0, 0 };
	Err e;

	if (kernel_check(S->k, NULL, &e) < 0)
		fail_msg("%s", e.msg);
	for (seed = 1; seed <= 2; seed++)
		if (same(S->orig, S->k, tol, seed, msg, sizeof msg) < 0) {
			char *p = now();

			print_message("%s", p);
			free(p);
			fail_msg("%s", msg);
		}
	if (S->graph && sched_verify(S, &vo, NULL, &e) < 0)
		fail_msg("%s", e.msg);
}

/* rc < 0 and E.msg holds want; the kernel is as it was */
static void
assert_refused(int rc, const char *before, const char *want)
{
	char *after = now();

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

#endif

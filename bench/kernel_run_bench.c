/* kernel_run_bench.c - the kernel interpreter's speed on matmul 128^3 and softmax 1024x1024, checks off and on. */
/*
** Build and run (not wired into the Makefile):
**   make libtessel.a && cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -o build/kernel_run_bench \
**     bench/kernel_run_bench.c libtessel.a -lgvc -lcgraph -lcdt -lm && ./build/kernel_run_bench
** One line per (kernel, checks): instructions and arithmetic ops executed, time, rates.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../interp/kernel.h"

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static UOp *
loop1(Kernel *k, UOp *v, AxisType t, HwAxis hw, UOp *body)
{
	return kernel_loop(k, kernel_range(k, v, t, hw), &body, 1);
}

static UOp *
ld(Kernel *k, int b, UOp *i, UOp *j)
{
	UOp *ix[2] = { i, j };

	return kernel_load(k, kernel_index(k, b, ix, j ? 2 : 1), NULL);
}

static UOp *
st(Kernel *k, int b, UOp *i, UOp *j, UOp *v)
{
	UOp *ix[2] = { i, j };

	return kernel_store(k, kernel_index(k, b, ix, j ? 2 : 1), v, NULL);
}

static UOp *
f2(Kernel *k, Op op, UOp *a, UOp *b)
{
	UOp *s[2] = { a, b };

	return kernel_alu(k, op, DT_FLOAT32, s, b ? 2 : 1);
}

/* C[i, j] = sum_k A[i, k] * B[k, j]: blocks over rows, 128 threads over columns */
static Kernel *
matmul(int n)
{
	Kernel *k = kernel_new();
	int64_t sh[2] = { n, n };
	Err e;
	int a = kernel_add_buffer(k, "A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, sh, 2, &e);
	int b = kernel_add_buffer(k, "B", DT_FLOAT32, AS_GLOBAL, KB_INPUT, sh, 2, &e);
	int c = kernel_add_buffer(k, "C", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, sh, 2, &e);
	int acc = kernel_add_buffer(k, "acc", DT_FLOAT32, AS_REG, KB_TEMP, (int64_t[]){ 1 }, 1, &e);
	UOp *i = kernel_var(k, "i", n), *j = kernel_var(k, "j", n), *kk = kernel_var(k, "k", n);
	UOp *z = uop_int(k->c, 0), *body[3];

	body[0] = st(k, acc, z, NULL, kernel_const(k, DT_FLOAT32, 0));
	body[1] = loop1(k, kk, AX_REDUCE, HW_NONE, st(k, acc, z, NULL, f2(k, OP_ADD, ld(k, acc, z, NULL),
	          f2(k, OP_MUL, ld(k, a, i, kk), ld(k, b, kk, j)))));
	body[2] = st(k, c, i, j, ld(k, acc, z, NULL));
	kernel_add_stage(k, "C", loop1(k, i, AX_GLOBAL, HW_BLOCK_X, kernel_loop(k,
	                 kernel_range(k, j, AX_LOCAL, HW_THREAD_X), body, 3)), NULL, &e);
	return k;
}

/* three stages: row max, exp and row sum, normalize; one block per row */
static Kernel *
softmax(int r, int n)
{
	Kernel *k = kernel_new();
	int64_t sh[2] = { r, n };
	Err e;
	int x = kernel_add_buffer(k, "x", DT_FLOAT32, AS_GLOBAL, KB_INPUT, sh, 2, &e);
	int m = kernel_add_buffer(k, "m", DT_FLOAT32, AS_GLOBAL, KB_TEMP, sh, 1, &e);
	int ex = kernel_add_buffer(k, "ex", DT_FLOAT32, AS_GLOBAL, KB_TEMP, sh, 2, &e);
	int s = kernel_add_buffer(k, "s", DT_FLOAT32, AS_GLOBAL, KB_TEMP, sh, 1, &e);
	int y = kernel_add_buffer(k, "y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, sh, 2, &e);
	UOp *i = kernel_var(k, "i", r), *j = kernel_var(k, "j", n), *b[2], *ev;

	b[0] = st(k, m, i, NULL, kernel_const(k, DT_FLOAT32, -1e30));
	b[1] = loop1(k, j, AX_REDUCE, HW_NONE, st(k, m, i, NULL, f2(k, OP_MAX, ld(k, m, i, NULL), ld(k, x, i, j))));
	kernel_add_stage(k, "m", kernel_loop(k, kernel_range(k, i, AX_GLOBAL, HW_BLOCK_X), b, 2), NULL, &e);
	ev = f2(k, OP_EXP2, f2(k, OP_MUL, f2(k, OP_SUB, ld(k, x, i, j), ld(k, m, i, NULL)),
	        kernel_const(k, DT_FLOAT32, 1.4426950408889634)), NULL);
	{
		UOp *inner[2] = { st(k, ex, i, j, ev), st(k, s, i, NULL, f2(k, OP_ADD, ld(k, s, i, NULL), ld(k, ex, i, j))) };

		b[0] = st(k, s, i, NULL, kernel_const(k, DT_FLOAT32, 0));
		b[1] = kernel_loop(k, kernel_range(k, j, AX_REDUCE, HW_NONE), inner, 2);
	}
	kernel_add_stage(k, "s", kernel_loop(k, kernel_range(k, i, AX_GLOBAL, HW_BLOCK_X), b, 2), NULL, &e);
	kernel_add_stage(k, "y", loop1(k, i, AX_GLOBAL, HW_BLOCK_X, loop1(k, j, AX_LOCAL, HW_THREAD_X,
	                 st(k, y, i, j, f2(k, OP_MUL, ld(k, ex, i, j), f2(k, OP_RECIP, ld(k, s, i, NULL), NULL))))),
	                 NULL, &e);
	return k;
}

static void
fill(const Kernel *k, TBuf *bufs)
{
	int i, j;

	memset(bufs, 0, k->nbuf * sizeof *bufs);
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *b = &k->buf[i];
		int64_t n = 1, t;

		if (b->role != KB_INPUT)
			continue;
		for (j = 0; j < b->ndim; j++)
			n *= b->shape[j];
		bufs[i].dtype = b->dtype;
		bufs[i].ndim = b->ndim;
		memcpy(bufs[i].shape, b->shape, sizeof b->shape);
		bufs[i].numel = n;
		bufs[i].axis = -1;
		bufs[i].data = malloc(n * sizeof(float));
		for (t = 0; t < n; t++)
			((float *)bufs[i].data)[t] = (float)((t * 7919 % 1000) / 500.0 - 1);
	}
}

static void
bench(const char *name, Kernel *k)
{
	int checks;

	for (checks = 0; checks <= 1; checks++) {
		TBuf bufs[8];
		KCounts c;
		KRunOpts o = { checks, 1, 0, 0 };
		KRunOpts oc = { checks, 0, 0, 0 };
		Err e;
		double t0, t1;
		int i;

		fill(k, bufs);
		/* counts once for the op totals, then timed without counting */
		if (kernel_run(k, &o, bufs, &c, &e) < 0) {
			printf("%s: %s\n", name, e.msg);
			exit(1);
		}
		t0 = now();
		if (kernel_run(k, &oc, bufs, NULL, &e) < 0) {
			printf("%s: %s\n", name, e.msg);
			exit(1);
		}
		t1 = now();
		printf("%-16s %-6s %12lld %8.3f %10.1f\n", name, checks ? "on" : "off", (long long)c.ops,
		       t1 - t0, c.ops / (t1 - t0) / 1e6);
		for (i = 0; i < k->nbuf; i++)
			tbuf_free(&bufs[i]);
	}
}

int
main(void)
{
	Kernel *mm = matmul(128), *sm = softmax(1024, 1024);

	printf("%-16s %-6s %12s %8s %10s\n", "kernel", "checks", "ops", "seconds", "Mops/s");
	bench("matmul 128^3", mm);
	bench("softmax 1024^2", sm);
	kernel_free(mm);
	kernel_free(sm);
	return 0;
}

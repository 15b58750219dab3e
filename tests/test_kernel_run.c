/* test_kernel_run.c - the kernel interpreter: values against plain C loops, GPU semantics, checks, counts, limits. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../interp/kernel/kernel.h"
#include "../layout/layout.h"
#include "../layout/lower.h"
#include "../viz/viz.h"
#include "kernel_test.h"

/* ---- building helpers (and kernel_test.h) ---- */

static UOp *
when(UOp *g, int n, ...)
{
	UOp *body[64];
	va_list ap;
	int i;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		body[i] = va_arg(ap, UOp *);
	va_end(ap);
	return kernel_if(K, g, body, n);
}

static UOp *
where(DType t, UOp *c, UOp *a, UOp *b)
{
	UOp *s[3] = { c, a, b };

	return kernel_alu(K, OP_WHERE, t, s, 3);
}

/* an input of numel n from values */
static void
input(TBuf *b, int bi, const double *v)
{
	const KBuf *kb = &K->buf[bi];
	int64_t n = 1, i;
	int bytes = dtype_bytes(kb->dtype);

	for (i = 0; i < kb->ndim; i++)
		n *= kb->shape[i];
	memset(b, 0, sizeof *b);
	b->dtype = kb->dtype;
	b->ndim = kb->ndim;
	memcpy(b->shape, kb->shape, sizeof b->shape);
	b->numel = n;
	b->axis = -1;
	b->data = malloc(n * bytes);
	for (i = 0; i < n; i++)
		dtype_store_f(kb->dtype, (unsigned char *)b->data + i * bytes, v[i]);
}

static void
freebufs(TBuf *b, int n)
{
	int i;

	for (i = 0; i < n; i++)
		tbuf_free(&b[i]);
}

static void
run_ok(TBuf *b, const KRunOpts *o, KCounts *c)
{
	if (kernel_run(K, o, b, c, &E) < 0)
		fail_msg("kernel_run: %s", E.msg);
}

/* runs and expects an error starting with prefix; the message stays in E */
static void
run_fail(TBuf *b, const KRunOpts *o, const char *prefix)
{
	if (kernel_run(K, o, b, NULL, &E) == 0)
		fail_msg("kernel_run succeeded, expected \"%s...\"", prefix);
	if (strncmp(E.msg, prefix, strlen(prefix)) != 0)
		fail_msg("expected \"%s...\", got: %s", prefix, E.msg);
	if (getenv("TESSEL_SHOW"))
		print_message("%s\n", E.msg);
}

static void
has(const char *s)
{
	if (!strstr(E.msg, s))
		fail_msg("\"%s\" is not in: %s", s, E.msg);
}

/* ---- values ---- */

/* c[i, j] = a[i, j] * b[i, j] + 1 over a grid of 3 blocks x 5 threads (float32) */
static void
test_elementwise(void **state)
{
	int a = mkbuf("a", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)3, (int64_t)5);
	int b = mkbuf("b", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)3, (int64_t)5);
	int c = mkbuf("c", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)3, (int64_t)5);
	UOp *i = var("i", 3), *j = var("j", 5);
	double va[15], vb[15];
	TBuf bufs[3] = { 0 };
	KCounts cnt;
	KRunOpts o = { .checks = 1, .counts = 1 };
	int k;

	for (k = 0; k < 15; k++) {
		va[k] = frand();
		vb[k] = frand();
	}
	stage("c", loop(i, HW_BLOCK_X, 1, loop(j, HW_THREAD_X, 1,
	      st(at(c, 2, i, j), alu(OP_ADD, DT_FLOAT32, alu(OP_MUL, DT_FLOAT32, ld(at(a, 2, i, j)),
	         ld(at(b, 2, i, j))), fc(DT_FLOAT32, 1))))));
	input(&bufs[a], a, va);
	input(&bufs[b], b, vb);
	run_ok(bufs, &o, &cnt);
	assert_int_equal(bufs[c].dtype, DT_FLOAT32);
	assert_int_equal(bufs[c].numel, 15);
	assert_int_equal(bufs[c].ndim, 2);
	for (k = 0; k < 15; k++) {
		float x = (float)va[k], y = (float)vb[k], p = x * y, want = p + 1.0f;

		assert_true(getf(&bufs[c], k) == want);
	}
	assert_int_equal(cnt.blocks, 3);
	assert_int_equal(cnt.threads, 15);
	/* per thread: i*5 + j three times (2 ops each), mul, add */
	assert_int_equal(cnt.ops, 15 * 8);
	/* one warp of 5 lanes per block, bytes 20i..20i+19: sector 0; sectors 0 and 1;
	** sector 1: 4 sectors per access, 3 accesses (a, b, c) */
	assert_int_equal(cnt.global_loads, 6);
	assert_int_equal(cnt.global_stores, 3);
	assert_int_equal(cnt.global_sectors, 12);
	freebufs(bufs, 3);
}

/* s[i] = sum_j a[i, j]: an init store and a reduce loop; also float64 and int64 */
static void
test_row_reduce(void **state)
{
	int a = mkbuf("a", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)7, (int64_t)33);
	int s = mkbuf("s", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)7);
	UOp *i = var("i", 7), *j = var("j", 33);
	double va[7 * 33];
	TBuf bufs[2] = { 0 };
	int k, r;

	for (k = 0; k < 7 * 33; k++)
		va[k] = frand() * 100;
	stage("s", loop(i, HW_NONE, 2, st(at(s, 1, i), fc(DT_FLOAT32, 0)),
	      loop(j, HW_NONE, 1, st(at(s, 1, i), alu(OP_ADD, DT_FLOAT32, ld(at(s, 1, i)), ld(at(a, 2, i, j)))))));
	input(&bufs[a], a, va);
	run_ok(bufs, NULL, NULL);
	for (r = 0; r < 7; r++) {
		float acc = 0;

		for (k = 0; k < 33; k++)
			acc = acc + (float)va[r * 33 + k];
		assert_true(getf(&bufs[s], r) == acc);
	}
	freebufs(bufs, 2);
}

/* softmax over rows in three stages (max, exp and sum, normalize) */
static void
test_softmax(void **state)
{
	enum { R = 4, N = 40 };
	int x = mkbuf("x", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)R, (int64_t)N);
	int m = mkbuf("m", DT_FLOAT32, AS_GLOBAL, KB_TEMP, 1, (int64_t)R);
	int ex = mkbuf("ex", DT_FLOAT32, AS_GLOBAL, KB_TEMP, 2, (int64_t)R, (int64_t)N);
	int sm = mkbuf("sm", DT_FLOAT32, AS_GLOBAL, KB_TEMP, 1, (int64_t)R);
	int y = mkbuf("y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)R, (int64_t)N);
	UOp *i = var("i", R), *j = var("j", N), *e;
	double vx[R * N];
	TBuf bufs[5] = { 0 };
	float l2e = (float)1.4426950408889634;
	int k, r;

	for (k = 0; k < R * N; k++)
		vx[k] = frand() * 10;
	stage("m", loop(i, HW_BLOCK_X, 2, st(at(m, 1, i), fc(DT_FLOAT32, -INFINITY)),
	      loop(j, HW_NONE, 1, st(at(m, 1, i), alu(OP_MAX, DT_FLOAT32, ld(at(m, 1, i)), ld(at(x, 2, i, j)))))));
	e = alu(OP_EXP2, DT_FLOAT32, alu(OP_MUL, DT_FLOAT32, alu(OP_SUB, DT_FLOAT32, ld(at(x, 2, i, j)),
	        ld(at(m, 1, i))), fc(DT_FLOAT32, 1.4426950408889634)), NULL);
	stage("ex", loop(i, HW_BLOCK_X, 2, st(at(sm, 1, i), fc(DT_FLOAT32, 0)),
	      loop(j, HW_NONE, 2, st(at(ex, 2, i, j), e),
	           st(at(sm, 1, i), alu(OP_ADD, DT_FLOAT32, ld(at(sm, 1, i)), ld(at(ex, 2, i, j)))))));
	stage("y", loop(i, HW_BLOCK_X, 1, loop(j, HW_THREAD_X, 1, st(at(y, 2, i, j),
	      alu(OP_MUL, DT_FLOAT32, ld(at(ex, 2, i, j)), alu(OP_RECIP, DT_FLOAT32, ld(at(sm, 1, i)), NULL))))));
	input(&bufs[x], x, vx);
	run_ok(bufs, NULL, NULL);
	assert_null(bufs[m].data);
	assert_null(bufs[ex].data);
	for (r = 0; r < R; r++) {
		float mx = -INFINITY, sum = 0, ev[N];

		for (k = 0; k < N; k++)
			mx = (float)vx[r * N + k] > mx ? (float)vx[r * N + k] : mx;
		for (k = 0; k < N; k++) {
			float d = (float)vx[r * N + k] - mx, t = d * l2e;

			ev[k] = (float)exp2((double)t);
			sum = sum + ev[k];
		}
		for (k = 0; k < N; k++) {
			float rc = (float)(1.0 / (double)sum);

			assert_true(getf(&bufs[y], r * N + k) == ev[k] * rc);
		}
	}
	freebufs(bufs, 5);
}

/*
** C = A x B with 16x16 tiles in shared memory: blocks (N/16, M/16), threads
** (16, 16), a register accumulator, two barriers per k-tile.
*/
static void
build_matmul(int M, int N, int Kd, int T, int first_barrier)
{
	int a = mkbuf("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)M, (int64_t)Kd);
	int b = mkbuf("B", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)Kd, (int64_t)N);
	int c = mkbuf("C", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)M, (int64_t)N);
	int as = mkbuf("As", DT_FLOAT32, AS_LOCAL, KB_TEMP, 2, (int64_t)T, (int64_t)T);
	int bs = mkbuf("Bs", DT_FLOAT32, AS_LOCAL, KB_TEMP, 2, (int64_t)T, (int64_t)T);
	int acc = mkbuf("acc", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)1);
	UOp *bx = var("bx", N / T), *by = var("by", M / T), *tx = var("tx", T), *ty = var("ty", T);
	UOp *kt = var("kt", Kd / T), *kk = var("kk", T);
	UOp *row = add(mul(by, I(T)), ty), *col = add(mul(bx, I(T)), tx);
	UOp *load_tiles, *compute, *ktloop;

	load_tiles = loop(ty, HW_THREAD_Y, 1, loop(tx, HW_THREAD_X, 2,
	             st(at(as, 2, ty, tx), ld(at(a, 2, row, add(mul(kt, I(T)), tx)))),
	             st(at(bs, 2, ty, tx), ld(at(b, 2, add(mul(kt, I(T)), ty), col)))));
	compute = loop(ty, HW_THREAD_Y, 1, loop(tx, HW_THREAD_X, 1, loop(kk, HW_NONE, 1,
	          st(at(acc, 1, I(0)), alu(OP_ADD, DT_FLOAT32, ld(at(acc, 1, I(0))),
	             alu(OP_MUL, DT_FLOAT32, ld(at(as, 2, ty, kk)), ld(at(bs, 2, kk, tx))))))));
	if (first_barrier)
		ktloop = loop(kt, HW_NONE, 4, load_tiles, kernel_barrier(K), compute, kernel_barrier(K));
	else
		ktloop = loop(kt, HW_NONE, 3, load_tiles, compute, kernel_barrier(K));
	stage("C", loop(by, HW_BLOCK_Y, 1, loop(bx, HW_BLOCK_X, 3,
	      loop(ty, HW_THREAD_Y, 1, loop(tx, HW_THREAD_X, 1, st(at(acc, 1, I(0)), fc(DT_FLOAT32, 0)))),
	      ktloop,
	      loop(ty, HW_THREAD_Y, 1, loop(tx, HW_THREAD_X, 1, st(at(c, 2, row, col), ld(at(acc, 1, I(0)))))))));
}

static void
test_matmul_tiled(void **state)
{
	enum { M = 32, N = 48, KD = 64, T = 16 };
	double va[M * KD], vb[KD * N];
	TBuf bufs[6] = { 0 };
	KCounts cnt;
	KRunOpts o = { .checks = 1, .counts = 1 };
	int i, j, k;

	build_matmul(M, N, KD, T, 1);
	for (i = 0; i < M * KD; i++)
		va[i] = frand();
	for (i = 0; i < KD * N; i++)
		vb[i] = frand();
	input(&bufs[0], 0, va);
	input(&bufs[1], 1, vb);
	run_ok(bufs, &o, &cnt);
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			float acc = 0;

			for (k = 0; k < KD; k++) {
				float p = (float)va[i * KD + k] * (float)vb[k * N + j];

				acc = acc + p;
			}
			if (getf(&bufs[2], i * N + j) != acc)
				fail_msg("C[%d, %d] = %.9g, want %.9g", i, j, getf(&bufs[2], i * N + j), acc);
		}
	/* 6 blocks of 256 threads; 2 barriers per k-tile, 4 k-tiles */
	assert_int_equal(cnt.blocks, 6);
	assert_int_equal(cnt.threads, 6 * 256);
	assert_int_equal(cnt.barriers, 6 * 8);
	/* shared loads: As[ty][kk] is a broadcast (one word), Bs[kk][tx] 16 consecutive words:
	** a warp is two rows ty of 16 lanes: As reads two words in two banks, Bs the same 16
	** words twice: conflict-free either way */
	assert_int_equal(cnt.bank_conflicts, 0);
	assert_int_equal(cnt.shared_loads, 6 * 8 * 4 * 16 * 2);
	freebufs(bufs, 6);
}

/*
** Without the barrier between loading the tiles and using them. On a GPU the
** threads of a warp race ahead of the others; here threads run one after
** another, so thread (0,0) reads As[0, 1] before thread (1,0) writes it. The
** read of an element nothing wrote is held back to the end of the phase;
** the write that comes first makes it what it is, a race between the two.
*/
static void
test_matmul_missing_barrier(void **state)
{
	enum { M = 32, N = 32, KD = 32, T = 16 };
	double va[M * KD] = { 0 }, vb[KD * N] = { 0 };
	TBuf bufs[6] = { 0 };

	build_matmul(M, N, KD, T, 0);
	input(&bufs[0], 0, va);
	input(&bufs[1], 1, vb);
	run_fail(bufs, NULL, "race:");
	has("stage C, block (0,0,0), thread (1,0,0), loops by=0, bx=0, kt=0, ty=0, tx=1: writes As[0, 1]");
	has("while thread (0,0,0) of block (0,0,0) read it in the same phase (no barrier between)");
	freebufs(bufs, 6);
}

/*
** out = in^T for a 64x64 float32 matrix through a 32x32 shared tile per
** block: smem[ty][tx] = in[by*32+ty, bx*32+tx]; barrier; out[bx*32+ty,
** by*32+tx] = smem[tx][ty]. layout: 0 row-major, 1 padded to 33 columns,
** 2 swizzled with Sw<3,4,3>.
*/
static int
build_transpose(int layout, int barrier)
{
	int in = mkbuf("inp", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)64, (int64_t)64);
	int out = mkbuf("out", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)64, (int64_t)64);
	int sm = mkbuf("tile", DT_FLOAT32, AS_LOCAL, KB_TEMP, 2, (int64_t)32, (int64_t)32);
	UOp *bx = var("bx", 2), *by = var("by", 2), *tx = var("tx", 32), *ty = var("ty", 32);
	UOp *v[2] = { uop_var(K->c, "r", 0, 31), uop_var(K->c, "c", 0, 31) }, *lay;
	UOp *w, *rd;

	if (layout == 1)
		assert_int_equal(kernel_set_layout(K, sm, add(mul(v[0], I(33)), v[1]), v, 2, 32 * 33, "pad 33", &E), 0);
	else if (layout == 2) {
		Composed cl;

		assert_int_equal(composed_parse("Sw<3,4,3> o 0 o (32,32):(32,1)", &cl, &E), 0);
		assert_int_equal(lower_composed_crd(K->c, &cl, v, 2, &lay, &E), 0);
		if (kernel_set_layout(K, sm, lay, v, 2, 1024, "Sw<3,4,3>", &E) < 0)
			fail_msg("set_layout: %s", E.msg);
	}
	w = loop(ty, HW_THREAD_Y, 1, loop(tx, HW_THREAD_X, 1,
	    st(at(sm, 2, ty, tx), ld(at(in, 2, add(mul(by, I(32)), ty), add(mul(bx, I(32)), tx))))));
	rd = loop(ty, HW_THREAD_Y, 1, loop(tx, HW_THREAD_X, 1,
	     st(at(out, 2, add(mul(bx, I(32)), ty), add(mul(by, I(32)), tx)), ld(at(sm, 2, tx, ty)))));
	if (barrier)
		stage("transpose", loop(by, HW_BLOCK_Y, 1, loop(bx, HW_BLOCK_X, 3, w, kernel_barrier(K), rd)));
	else
		stage("transpose", loop(by, HW_BLOCK_Y, 1, loop(bx, HW_BLOCK_X, 2, w, rd)));
	return sm;
}

static void
transpose_run(int layout, KCounts *cnt)
{
	double v[64 * 64];
	TBuf bufs[3] = { 0 };
	KRunOpts o = { .checks = 1, .counts = 1 };
	int i, j;

	build_transpose(layout, 1);
	for (i = 0; i < 64 * 64; i++)
		v[i] = i;
	input(&bufs[0], 0, v);
	run_ok(bufs, &o, cnt);
	for (i = 0; i < 64; i++)
		for (j = 0; j < 64; j++)
			assert_true(getf(&bufs[1], i * 64 + j) == (float)(j * 64 + i));
	freebufs(bufs, 3);
}

/*
** Counts by hand, per block of 32x32 threads = 32 warps, warp w = row ty:
**   global loads: a warp reads in[row, 32 consecutive floats] = 128 bytes, 128-byte
**     aligned: 1 request, 4 sectors; global stores likewise: 32 + 32 requests, 256 sectors.
**   shared stores tile[ty][tx]: 32 consecutive words, banks 0..31: 1 wavefront.
**   shared loads tile[tx][ty]: words tx*32 + ty, all in bank ty: 32 distinct words,
**     32 wavefronts (31 extra).
** 4 blocks: global 128 + 128 requests, 1024 sectors; shared 128 + 128 requests,
** 4 * (32 * 1 + 32 * 32) = 4224 wavefronts, 4 * 32 * 31 = 3968 conflicts.
*/
static void
test_transpose_naive(void **state)
{
	KCounts c;

	transpose_run(0, &c);
	assert_int_equal(c.blocks, 4);
	assert_int_equal(c.threads, 4096);
	assert_int_equal(c.barriers, 4);
	assert_int_equal(c.global_loads, 128);
	assert_int_equal(c.global_stores, 128);
	assert_int_equal(c.global_sectors, 1024);
	assert_int_equal(c.shared_loads, 128);
	assert_int_equal(c.shared_stores, 128);
	assert_int_equal(c.shared_accesses, 4224);
	assert_int_equal(c.bank_conflicts, 3968);
}

/* Padded to 33 columns: tile[tx][ty] is word tx*33 + ty, bank (tx + ty) % 32: all
** distinct, so every request is one wavefront: 256 wavefronts, no conflicts. */
static void
test_transpose_padded(void **state)
{
	KCounts c;

	transpose_run(1, &c);
	assert_int_equal(c.shared_loads, 128);
	assert_int_equal(c.shared_stores, 128);
	assert_int_equal(c.shared_accesses, 256);
	assert_int_equal(c.bank_conflicts, 0);
	assert_int_equal(c.global_sectors, 1024);
}

/*
** Sw<3,4,3> on the offset x = 32r + c: x ^ ((x & 0b1110000000) >> 3) moves
** bits 7..9 (r bits 2..4) onto bits 4..6: c4 ^= r2, r0 ^= r3, r1 ^= r4. The
** bank is x % 32 = c0..c3 + 16*(c4 ^ r2).
**   stores tile[ty][tx] (r fixed, c = 0..31): c4 flipped or not, a bijection
**     of the banks: 1 wavefront.
**   loads tile[tx][ty] (c fixed, r = 0..31): the bank takes two values (r2 = 0
**     or 1), each hit by 16 rows, distinct words: 16 wavefronts (15 extra).
** 4 blocks: 4 * (32 * 1 + 32 * 16) = 2176 wavefronts, 4 * 32 * 15 = 1920 conflicts.
*/
static void
test_transpose_swizzled(void **state)
{
	KCounts c;

	transpose_run(2, &c);
	assert_int_equal(c.shared_loads, 128);
	assert_int_equal(c.shared_stores, 128);
	assert_int_equal(c.shared_accesses, 2176);
	assert_int_equal(c.bank_conflicts, 1920);
}

/* The same swizzled tile as viz sees it: its note on reading rows and columns
** agrees with the wavefronts per request of the kernel's stores (rows) and
** loads (columns). */
static void
test_swizzle_viz(void **state)
{
	Composed cl;
	Scene s;
	VizOpts vo;
	Buf cap;
	KCounts c;
	int g;

	assert_int_equal(composed_parse("Sw<3,4,3> o 0 o (32,32):(32,1)", &cl, &E), 0);
	viz_opts_default(&vo);
	vo.elem_bytes = 4;
	assert_int_equal(cute_scene_composed(&s, &cl, &vo, &E), 0);
	buf_init(&cap);
	for (g = 0; g < s.ngrid; g++)
		emit(&cap, "%s\n", s.grid[g].caption.s ? s.grid[g].caption.s : "");
	scene_free(&s);
	if (!strstr(cap.s, "reading rows conflict-free") || !strstr(cap.s, "reading columns 16-way"))
		fail_msg("viz says: %s", cap.s);
	buf_free(&cap);
	transpose_run(2, &c);
	/* rows: 1 wavefront per store request; columns: 16 per load request */
	assert_int_equal(c.shared_stores, 128);
	assert_int_equal(c.shared_loads, 128);
	assert_int_equal(c.shared_accesses - c.shared_stores, 128 * 16);
}

/* ---- checks ---- */

/* Without the barrier, thread (1,0) reads tile[1][0] before thread (0,1) writes it: a race. */
static void
test_transpose_no_barrier(void **state)
{
	double v[64 * 64] = { 0 };
	TBuf bufs[3] = { 0 };

	build_transpose(0, 0);
	input(&bufs[0], 0, v);
	run_fail(bufs, NULL, "race:");
	has("stage transpose");
	has("block (0,0,0)");
	has("thread (0,1,0)");
	has("writes tile[1, 0]");
	has("while thread (1,0,0) of block (0,0,0) read it");
	has("offset 32");
	freebufs(bufs, 3);
}

/* A shift through shared memory: s[t] = in[t]; (barrier); out[t] = s[t-1] for t > 0. */
static void
build_shift(int barrier)
{
	int in = mkbuf("inp", DT_INT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
	int out = mkbuf("out", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
	int s = mkbuf("s", DT_INT32, AS_LOCAL, KB_TEMP, 1, (int64_t)64);
	UOp *t = var("t", 64), *g = uop_alu(K->c, OP_CMPLT, I(0), t);
	UOp *rd = loop(t, HW_THREAD_X, 1, st(at(out, 1, t),
	          where(DT_INT32, g, ld(kernel_index(K, s, (UOp *[]){ uop_sub(K->c, t, I(1)) }, 1)), ld(at(in, 1, t)))));
	UOp *wr = loop(t, HW_THREAD_X, 1, st(at(s, 1, t), ld(at(in, 1, t))));

	/* where() evaluates both sides: the load of s[t-1] must be gated itself */
	rd = loop(t, HW_THREAD_X, 1, st(at(out, 1, t), where(DT_INT32, g,
	     kernel_load(K, kernel_index(K, s, (UOp *[]){ uop_sub(K->c, t, I(1)) }, 1), g), ld(at(in, 1, t)))));
	if (barrier)
		stage("shift", loop(var("b", 1), HW_BLOCK_X, 3, wr, kernel_barrier(K), rd));
	else
		stage("shift", loop(var("b", 1), HW_BLOCK_X, 2, wr, rd));
}

static void
test_race_missing_barrier(void **state)
{
	double v[64];
	TBuf bufs[3] = { 0 };
	int i;

	for (i = 0; i < 64; i++)
		v[i] = i * 3;
	build_shift(0);
	input(&bufs[0], 0, v);
	run_fail(bufs, NULL, "race:");
	has("thread (1,0,0)");
	has("reads s[0]");
	has("thread (0,0,0) of block (0,0,0) wrote it");
	has("same phase");
	freebufs(bufs, 3);
}

static void
test_shift_ok(void **state)
{
	double v[64];
	TBuf bufs[3] = { 0 };
	int i;

	for (i = 0; i < 64; i++)
		v[i] = i * 3;
	build_shift(1);
	input(&bufs[0], 0, v);
	run_ok(bufs, NULL, NULL);
	for (i = 0; i < 64; i++)
		assert_int_equal(((int32_t *)bufs[1].data)[i], i ? (i - 1) * 3 : 0);
	freebufs(bufs, 3);
}

/* Two blocks write one global element: blocks run concurrently on a GPU. */
static void
test_race_blocks(void **state)
{
	int out = mkbuf("out", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)1);
	UOp *b = var("b", 2);
	TBuf bufs[1] = { { 0 } };

	stage("w", loop(b, HW_BLOCK_X, 1, st(at(out, 1, I(0)), kernel_cast(K, DT_INT32, b))));
	run_fail(bufs, NULL, "race:");
	has("block (1,0,0)");
	has("writes out[0]");
	has("thread (0,0,0) of block (0,0,0) wrote it in the same launch");
	/* without checks it runs, and the last block wins */
	run_ok(bufs, &(KRunOpts){ .checks = 0 }, NULL);
	assert_int_equal(((int32_t *)bufs[0].data)[0], 1);
	freebufs(bufs, 1);
}

/* An off-by-one guard: i <= n instead of i < n. */
static void
test_out_of_bounds(void **state)
{
	int a = mkbuf("a", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)100);
	int y = mkbuf("y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)100);
	UOp *b = var("b", 4), *t = var("t", 32), *i = add(mul(b, I(32)), t);
	double v[100] = { 0 };
	TBuf bufs[2] = { 0 };

	stage("y", loop(b, HW_BLOCK_X, 1, loop(t, HW_THREAD_X, 1,
	      when(uop_alu(K->c, OP_CMPLT, i, I(101)), 1, st(at(y, 1, i), ld(at(a, 1, i)))))));
	input(&bufs[a], a, v);
	run_fail(bufs, NULL, "out of bounds:");
	has("stage y, block (3,0,0), thread (4,0,0), loops b=3, t=4");
	has("load a[100]");
	has("outside [0, 100)");
	/* without checks the logical index is not checked, the storage still is */
	run_fail(bufs, &(KRunOpts){ .checks = 0 }, "out of bounds:");
	has("physical offset 100 is outside the storage [0, 100)");
	freebufs(bufs, 2);
}

static void
test_out_of_bounds_ok(void **state)
{
	int a = mkbuf("a", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)100);
	int y = mkbuf("y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)100);
	UOp *b = var("b", 4), *t = var("t", 32), *i = add(mul(b, I(32)), t);
	double v[100];
	TBuf bufs[2] = { 0 };
	int k;

	for (k = 0; k < 100; k++)
		v[k] = k;
	stage("y", loop(b, HW_BLOCK_X, 1, loop(t, HW_THREAD_X, 1,
	      when(uop_alu(K->c, OP_CMPLT, i, I(100)), 1, st(at(y, 1, i), ld(at(a, 1, i)))))));
	input(&bufs[a], a, v);
	run_ok(bufs, NULL, NULL);
	for (k = 0; k < 100; k++)
		assert_true(getf(&bufs[y], k) == k);
	freebufs(bufs, 2);
}

/* A tile loaded only in its first 31 rows (guard ty < 31), then read whole. */
static void
test_uninitialized_tile(void **state)
{
	int in = mkbuf("inp", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)32, (int64_t)32);
	int out = mkbuf("out", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)32, (int64_t)32);
	int sm = mkbuf("tile", DT_FLOAT32, AS_LOCAL, KB_TEMP, 2, (int64_t)32, (int64_t)32);
	UOp *tx = var("tx", 32), *ty = var("ty", 32);
	double v[1024] = { 0 };
	TBuf bufs[3] = { 0 };

	stage("t", loop(var("b", 1), HW_BLOCK_X, 3,
	      loop(ty, HW_THREAD_Y, 1, loop(tx, HW_THREAD_X, 1, when(uop_alu(K->c, OP_CMPLT, ty, I(31)), 1,
	           st(at(sm, 2, ty, tx), ld(at(in, 2, ty, tx)))))),
	      kernel_barrier(K),
	      loop(ty, HW_THREAD_Y, 1, loop(tx, HW_THREAD_X, 1, st(at(out, 2, ty, tx), ld(at(sm, 2, tx, ty)))))));
	input(&bufs[0], 0, v);
	run_fail(bufs, NULL, "uninitialized:");
	/* thread (31,0) reads tile[31][0] first */
	has("thread (31,0,0)");
	has("tile[31, 0]");
	has("offset 992");
	freebufs(bufs, 3);
}

/* An output element nobody writes; a global temp read before it is written. */
static void
test_uninitialized_global(void **state)
{
	int y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)2, (int64_t)2);
	int tmp = mkbuf("tmp", DT_INT32, AS_GLOBAL, KB_TEMP, 1, (int64_t)4);
	UOp *i = var("i", 3);
	TBuf bufs[2] = { { 0 } };

	stage("y", loop(i, HW_NONE, 1, st(kernel_index(K, y, (UOp *[]){ uop_idiv(K->c, i, I(2)),
	      uop_mod(K->c, i, I(2)) }, 2), kernel_cast(K, DT_INT32, i))));
	run_fail(bufs, NULL, "uninitialized:");
	has("output y[1, 1]");
	has("never written");
	kernel_free(K);
	K = kernel_new();
	y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)4);
	tmp = mkbuf("tmp", DT_INT32, AS_GLOBAL, KB_TEMP, 1, (int64_t)4);
	i = var("i", 4);
	stage("t", loop(i, HW_NONE, 1, when(uop_alu(K->c, OP_CMPNE, i, I(2)), 1, st(at(tmp, 1, i), I(7)))));
	stage("y", loop(i, HW_NONE, 1, st(at(y, 1, i), ld(at(tmp, 1, i)))));
	run_fail(bufs, NULL, "uninitialized:");
	has("stage y");
	has("loops i=2");
	has("tmp[2]");
	freebufs(bufs, 2);
}

/* A barrier under a thread-dependent condition: some threads wait, some finish. */
static void
test_barrier_divergence(void **state)
{
	int y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)32);
	UOp *t = var("t", 32);
	TBuf bufs[1] = { { 0 } };

	stage("d", loop(t, HW_THREAD_X, 2, st(at(y, 1, t), I(1)),
	      when(uop_alu(K->c, OP_CMPLT, t, I(16)), 1, kernel_barrier(K))));
	run_fail(bufs, NULL, "barrier:");
	has("thread (0,0,0) waits at barrier #0 while thread (16,0,0) has finished");
	kernel_free(K);
	K = kernel_new();
	y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)32);
	t = var("t", 32);
	stage("d", loop(t, HW_THREAD_X, 2, when(uop_alu(K->c, OP_CMPLT, t, I(16)), 1, kernel_barrier(K)),
	      when(uop_alu(K->c, OP_CMPLT, I(15), t), 1, kernel_barrier(K))));
	run_fail(bufs, NULL, "barrier:");
	has("waits at barrier #1");
	freebufs(bufs, 1);
}

/* warp and lane bindings: thread = warp*32 + lane; a guard on lane < 20 */
static void
test_warp_lane(void **state)
{
	int y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)3, (int64_t)32);
	UOp *w = var("w", 3), *l = var("l", 32), *l2 = var("l2", 20);
	TBuf bufs[1] = { { 0 } };
	KCounts c;
	int i, j;

	stage("wl", loop(w, HW_WARP, 2, loop(l, HW_LANE, 1, st(at(y, 2, w, l), I(-1))),
	      loop(l2, HW_LANE, 1, st(at(y, 2, w, l2), kernel_cast(K, DT_INT32, add(mul(w, I(100)), l2))))));
	run_ok(bufs, &(KRunOpts){ .checks = 1, .counts = 1 }, &c);
	for (i = 0; i < 3; i++)
		for (j = 0; j < 32; j++)
			assert_int_equal(((int32_t *)bufs[0].data)[i * 32 + j], j < 20 ? i * 100 + j : -1);
	assert_int_equal(c.threads, 96);
	assert_int_equal(c.global_stores, 6);
	/* 20 lanes x 4 bytes = 80 bytes from a 128-byte boundary: 3 sectors; 128 bytes: 4 */
	assert_int_equal(c.global_sectors, 3 * 4 + 3 * 3);
	freebufs(bufs, 1);
}

/* ---- warp-synchronous ops ---- */

static UOp *ix(Op op, UOp *a, UOp *b) { return uop_alu(K->c, op, a, b); }

static void
check_ok(void)
{
	if (kernel_check(K, NULL, &E) < 0)
		fail_msg("kernel_check: %s", E.msg);
}

/* A butterfly sum over 2 warps: acc += shuffle(acc, lane ^ (16 >> i)) for i in 0..4. */
static void
test_shuffle_butterfly(void **state)
{
	int x = mkbuf("x", DT_INT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
	int y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
	int acc = mkbuf("acc", DT_INT32, AS_REG, KB_TEMP, 1, (int64_t)1);
	UOp *t = var("t", 64), *i = var("i", 5), *lane = ix(OP_MOD, t, I(32)), *a;
	double vx[64];
	int64_t sum[2] = { 0, 0 };
	TBuf bufs[3] = { { 0 } };
	KCounts c;
	Buf b;
	int k;

	for (k = 0; k < 64; k++) {
		vx[k] = rand() % 2001 - 1000;
		sum[k / 32] += (int64_t)vx[k];
	}
	a = ld(at(acc, 1, I(0)));
	stage("bfly", loop(t, HW_THREAD_X, 3, st(at(acc, 1, I(0)), ld(at(x, 1, t))),
	      loop(i, HW_NONE, 1, st(at(acc, 1, I(0)), alu(OP_ADD, DT_INT32, a,
	           kernel_shuffle(K, a, ix(OP_XOR, lane, ix(OP_SHR, I(16), i)))))),
	      st(at(y, 1, t), a)));
	check_ok();
	input(&bufs[x], x, vx);
	run_ok(bufs, &(KRunOpts){ .checks = 1, .counts = 1 }, &c);
	for (k = 0; k < 64; k++)
		assert_int_equal(((int32_t *)bufs[y].data)[k], sum[k / 32]);
	assert_int_equal(c.shuffles, 2 * 5);
	assert_int_equal(c.barriers, 0);
	assert_int_equal(c.mmas, 0);
	/* checks off: the same values */
	freebufs(bufs + y, 1);
	run_ok(bufs, &(KRunOpts){ .checks = 0 }, NULL);
	for (k = 0; k < 64; k++)
		assert_int_equal(((int32_t *)bufs[y].data)[k], sum[k / 32]);
	buf_init(&b);
	kernel_print(&b, K, 0);
	if (!strstr(b.s, "acc[0] += shuffle(acc[0], "))
		fail_msg("print: %s", b.s);
	buf_free(&b);
	freebufs(bufs, 3);
}

/* A shuffle-down reduction in one float32 expression: v += shuffle(v, lane + d
** if lane + d < 32 else lane) for d = 16 .. 1, as __shfl_down_sync. */
static void
test_shuffle_down(void **state)
{
	int x = mkbuf("x", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
	int y = mkbuf("y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
	UOp *t = var("t", 64), *lane = ix(OP_MOD, t, I(32)), *v;
	double vx[64];
	float want[64];
	TBuf bufs[2] = { { 0 } };
	KCounts c;
	int k, d, w, l;

	for (k = 0; k < 64; k++)
		want[k] = (float)(vx[k] = frand());
	v = ld(at(x, 1, t));
	for (d = 16; d >= 1; d /= 2)
		v = alu(OP_ADD, DT_FLOAT32, v, kernel_shuffle(K, v, uop_where(K->c,
		        ix(OP_CMPLT, add(lane, I(d)), I(32)), add(lane, I(d)), lane)));
	stage("down", loop(t, HW_THREAD_X, 1, st(at(y, 1, t), v)));
	check_ok();
	/* plain C: the same additions in the same order */
	for (w = 0; w < 2; w++)
		for (d = 16; d >= 1; d /= 2) {
			float nv[32];

			for (l = 0; l < 32; l++)
				nv[l] = want[w * 32 + l] + want[w * 32 + (l + d < 32 ? l + d : l)];
			memcpy(want + w * 32, nv, sizeof nv);
		}
	input(&bufs[x], x, vx);
	run_ok(bufs, &(KRunOpts){ .checks = 1, .counts = 1 }, &c);
	for (k = 0; k < 64; k++)
		assert_true(getf(&bufs[y], k) == want[k]);
	/* lane 0 holds the warp's sum */
	assert_true(fabs(getf(&bufs[y], 0) - (want[0])) == 0);
	assert_int_equal(c.shuffles, 2 * 5);
	freebufs(bufs, 2);
}

/* Lanes that do not meet at one shuffle, and sources outside the warp. */
static void
test_shuffle_errors(void **state)
{
	int y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)32);
	UOp *t = var("t", 32), *v = kernel_cast(K, DT_INT32, t);
	TBuf bufs[1] = { { 0 } };

	/* lane 0 waits at a barrier while its warp-mates wait at the shuffle */
	stage("s", loop(t, HW_THREAD_X, 2, when(ix(OP_CMPLT, t, I(1)), 1, kernel_barrier(K)),
	      st(at(y, 1, t), kernel_shuffle(K, v, ix(OP_XOR, t, I(1))))));
	run_fail(bufs, NULL, "shuffle:");
	has("stage s, block (0,0,0), warp 0: lane 1 waits at shuffle #0 while lane 0 waits at barrier #0");
	/* under `if lane < 16`: refused by the verifier; at run time lanes 16.. finish */
	kernel_free(K);
	K = kernel_new();
	y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)32);
	t = var("t", 32);
	v = kernel_cast(K, DT_INT32, t);
	stage("s", loop(t, HW_THREAD_X, 1, when(ix(OP_CMPLT, t, I(16)), 1,
	      st(at(y, 1, t), kernel_shuffle(K, v, ix(OP_XOR, t, I(1)))))));
	assert_int_equal(kernel_check(K, NULL, &E), -1);
	has("a shuffle under thread-divergent control flow");
	run_fail(bufs, NULL, "shuffle:");
	has("lane 0 waits at shuffle #0 while lane 16 has finished");
	/* two different shuffles */
	kernel_free(K);
	K = kernel_new();
	y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)32);
	t = var("t", 32);
	v = kernel_cast(K, DT_INT32, t);
	stage("s", loop(t, HW_THREAD_X, 2, when(ix(OP_CMPLT, t, I(16)), 1,
	      st(at(y, 1, t), kernel_shuffle(K, v, I(0)))), when(ix(OP_CMPLT, I(15), t), 1,
	      st(at(y, 1, t), kernel_shuffle(K, v, I(31))))));
	run_fail(bufs, NULL, "shuffle:");
	has("lane 0 waits at shuffle #0 while lane 16 waits at shuffle #1");
	/* a source lane past 31 */
	kernel_free(K);
	K = kernel_new();
	y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)32);
	t = var("t", 32);
	stage("s", loop(t, HW_THREAD_X, 1, st(at(y, 1, t), kernel_shuffle(K, kernel_cast(K, DT_INT32, t),
	      add(t, I(1))))));
	check_ok();
	run_fail(bufs, NULL, "shuffle:");
	has("lane 31 reads lane 32 at shuffle #0, outside the warp's lanes [0, 32)");
	/* a short warp: 40 threads, the second warp has 8 lanes */
	kernel_free(K);
	K = kernel_new();
	y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)40);
	t = var("t", 40);
	stage("s", loop(t, HW_THREAD_X, 1, st(at(y, 1, t), kernel_shuffle(K, kernel_cast(K, DT_INT32, t),
	      ix(OP_XOR, ix(OP_MOD, t, I(32)), I(16))))));
	run_fail(bufs, NULL, "shuffle:");
	has("warp 1: lane 0 reads lane 16");
	has("short warp");
	/* lane ^ 4 within the short warp is fine */
	kernel_free(K);
	K = kernel_new();
	y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)40);
	t = var("t", 40);
	stage("s", loop(t, HW_THREAD_X, 1, st(at(y, 1, t), kernel_shuffle(K, kernel_cast(K, DT_INT32, t),
	      ix(OP_XOR, ix(OP_MOD, t, I(32)), I(4))))));
	run_ok(bufs, NULL, NULL);
	for (int k = 0; k < 40; k++)
		assert_int_equal(((int32_t *)bufs[0].data)[k], (k / 32) * 32 + ((k % 32) ^ 4));
	freebufs(bufs, 1);
}

/*
** One warp, m16n8k16 (f32 = f16 * f16 + f32): A (M, K), B stored (N, K) and
** C (M, N) loaded into registers through the atom's TV layouts, the MMA, D
** stored back by C's layout; against a plain C matmul of the half inputs.
*/
enum { MM = 16, MN = 8, MK = 16 };

/* buffer[x % rows, x // rows] for x = L(lane + v*32): a tile element by the TV layout */
static UOp *
tv_at(const Layout *l, int b, int64_t rows, UOp *lane, UOp *v)
{
	UOp *x = NULL;

	if (lower_cute_idx(K->c, l, add(lane, mul(v, I(32))), &x, &E) < 0)
		fail_msg("lower_cute_idx: %s", E.msg);
	return at(b, 2, ix(OP_MOD, x, I(rows)), ix(OP_IDIV, x, I(rows)));
}

static void
mma_kernel(const char *atom, int64_t nthreads, int load_c)
{
	int A = mkbuf("A", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 2, (int64_t)MM, (int64_t)MK);
	int B = mkbuf("B", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 2, (int64_t)MN, (int64_t)MK);
	int C = mkbuf("C", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)MM, (int64_t)MN);
	int D = mkbuf("D", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)MM, (int64_t)MN);
	int ar = mkbuf("a_r", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)8);
	int br = mkbuf("b_r", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)4);
	int cr = mkbuf("c_r", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)4);
	int dr = mkbuf("d_r", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)4);
	UOp *lane = var("lane", nthreads), *va = var("va", 8), *vb = var("vb", 4), *vc = var("vc", 4);
	UOp *vd = var("vd", 4), *m;
	MmaAtom at_;

	assert_int_equal(cute_mma_atom(atom, &at_, &E), 0);
	m = kernel_mma(K, atom, dr, ar, br, cr, &E);
	if (!m)
		fail_msg("kernel_mma: %s", E.msg);
	stage("mma", loop(lane, HW_THREAD_X, 5,
	      loop(va, HW_NONE, 1, st(at(ar, 1, va), ld(tv_at(&at_.a, A, MM, lane, va)))),
	      loop(vb, HW_NONE, 1, st(at(br, 1, vb), ld(tv_at(&at_.b, B, MN, lane, vb)))),
	      load_c ? loop(vc, HW_NONE, 1, st(at(cr, 1, vc), ld(tv_at(&at_.c, C, MM, lane, vc))))
	             : kernel_if(K, kernel_const(K, DT_BOOL, 1), NULL, 0),
	      m,
	      loop(vd, HW_NONE, 1, st(tv_at(&at_.c, D, MM, lane, vd), ld(at(dr, 1, vd))))));
}

static void
test_mma_m16n8k16(void **state)
{
	double va[MM * MK], vb[MN * MK], vc[MM * MN];
	TBuf bufs[8] = { { 0 } };
	KCounts c;
	MmaAtom at_;
	int64_t x;
	Buf b;
	int i, j, k;

	/* the convention, pinned to PTX's fragment tables: lane 0 holds A[0,0], A[0,1],
	** A[8,0], ...; lane 1 A[0,2]; lane 4 A[1,0] (m + k*16 = A(lane + v*32)) */
	assert_int_equal(cute_mma_atom("SM80_16x8x16_F32F16F16F32_TN", &at_, &E), 0);
	assert_int_equal(cute_eval_idx(&at_.a, 0 + 1 * 32, &x, &E), 0);
	assert_int_equal(x, 0 + 1 * 16);
	assert_int_equal(cute_eval_idx(&at_.a, 0 + 2 * 32, &x, &E), 0);
	assert_int_equal(x, 8);
	assert_int_equal(cute_eval_idx(&at_.a, 1, &x, &E), 0);
	assert_int_equal(x, 2 * 16);
	assert_int_equal(cute_eval_idx(&at_.a, 4, &x, &E), 0);
	assert_int_equal(x, 1);
	mma_kernel("SM80_16x8x16_F32F16F16F32_TN", 32, 1);
	check_ok();
	for (i = 0; i < MM * MK; i++)
		va[i] = frand();
	for (i = 0; i < MN * MK; i++)
		vb[i] = frand();
	for (i = 0; i < MM * MN; i++)
		vc[i] = frand();
	input(&bufs[0], 0, va);
	input(&bufs[1], 1, vb);
	input(&bufs[2], 2, vc);
	run_ok(bufs, &(KRunOpts){ .checks = 1, .counts = 1 }, &c);
	for (i = 0; i < MM; i++)
		for (j = 0; j < MN; j++) {
			double acc = (float)vc[i * MN + j];

			for (k = 0; k < MK; k++)
				acc += dtype_from_half(dtype_to_half(va[i * MK + k]))
				     * dtype_from_half(dtype_to_half(vb[j * MK + k]));
			if (getf(&bufs[3], i * MN + j) != (float)acc)
				fail_msg("D[%d, %d] = %g, plain C %g", i, j, getf(&bufs[3], i * MN + j), (float)acc);
		}
	assert_int_equal(c.mmas, 1);
	assert_int_equal(c.shuffles, 0);
	assert_true(c.ops >= 2 * MM * MN * MK);
	buf_init(&b);
	kernel_print(&b, K, 0);
	if (!strstr(b.s, "mma.SM80_16x8x16_F32F16F16F32_TN(d_r, a_r, b_r, c_r)\n"))
		fail_msg("print: %s", b.s);
	buf_free(&b);
	freebufs(bufs, 8);

	/* the C registers never loaded: the MMA reads them uninitialized */
	kernel_free(K);
	K = kernel_new();
	mma_kernel("SM80_16x8x16_F32F16F16F32_TN", 32, 0);
	input(&bufs[0], 0, va);
	input(&bufs[1], 1, vb);
	input(&bufs[2], 2, vc);
	run_fail(bufs, NULL, "uninitialized:");
	has("mma.SM80_16x8x16_F32F16F16F32_TN reads C register c_r[0]");
	/* a block of 48 threads: partial warps */
	kernel_free(K);
	K = kernel_new();
	mma_kernel("SM80_16x8x16_F32F16F16F32_TN", 48, 1);
	run_fail(bufs, NULL, "mma:");
	has("blocks of 48 threads");
	freebufs(bufs, 8);
}

/*
** ldmatrix over one warp: a 16x16 float16 tile X (X[r, c] = 16r + c) copied
** to shared memory S by lane 0 alone (its stores are whole requests of one
** lane: no bank conflicts), then an x4 of the whole tile into a_r (the
** m16n8k16 A fragment) and an x2.trans of columns 8..15 into b_r (the B
** fragment of a k-major 16x8 tile). off: a column offset of the x4's rows
** (1 is misaligned); fill 0 leaves S unwritten; guard puts the x4 under an if
** on the lane.
*/
static void
ldsm_kernel(const char *layout, int off, int fill, int guard)
{
	int X = mkbuf("X", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 2, (int64_t)16, (int64_t)16);
	int OA = mkbuf("OA", DT_FLOAT16, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)32, (int64_t)8);
	int OB = mkbuf("OB", DT_FLOAT16, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)32, (int64_t)4);
	int S = mkbuf("S", DT_FLOAT16, AS_LOCAL, KB_TEMP, 2, (int64_t)16, (int64_t)16);
	int ar = mkbuf("a_r", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)8);
	int br = mkbuf("b_r", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)4);
	UOp *lane = var("lane", 32), *e = var("e", 256), *va = var("va", 8), *vb = var("vb", 4), *la, *lb, *r, *c;
	Composed cl;

	if (layout && (composed_parse(layout, &cl, &E) < 0 || kernel_layout_cute(K, S, NULL, &cl, &E) < 0))
		fail_msg("layout %s: %s", layout, E.msg);
	r = ix(OP_IDIV, e, I(16));
	c = ix(OP_MOD, e, I(16));
	la = kernel_ldmatrix(K, ar, at(S, 2, add(ix(OP_MOD, lane, I(8)), mul(ix(OP_MOD, ix(OP_IDIV, lane, I(8)), I(2)), I(8))),
	                     add(mul(ix(OP_IDIV, lane, I(16)), I(8)), I(off))), 4, 0, &E);
	if (!la)
		fail_msg("kernel_ldmatrix: %s", E.msg);
	lb = kernel_ldmatrix(K, br, at(S, 2, ix(OP_MOD, lane, I(16)), I(8)), 2, 1, &E);
	if (!lb)
		fail_msg("kernel_ldmatrix: %s", E.msg);
	stage("ldsm", loop(lane, HW_THREAD_X, 6,
	      fill ? when(kernel_alu(K, OP_CMPEQ, DT_BOOL, (UOp *[]){ lane, I(0) }, 2), 1,
	                  loop(e, HW_NONE, 1, st(at(S, 2, r, c), ld(at(X, 2, r, c)))))
	           : kernel_if(K, kernel_const(K, DT_BOOL, 1), NULL, 0),
	      kernel_barrier(K),
	      guard ? when(kernel_alu(K, OP_CMPLT, DT_BOOL, (UOp *[]){ lane, I(16) }, 2), 1, la) : la,
	      lb,
	      loop(va, HW_NONE, 1, st(at(OA, 2, lane, va), ld(at(ar, 1, va)))),
	      loop(vb, HW_NONE, 1, st(at(OB, 2, lane, vb), ld(at(br, 1, vb))))));
}

/*
** cp.async: a 16x32 float32 tile X copied into shared S by the 64 threads of
** one block with kernel.copy's cp_async (16-byte units, 2 a thread), then
** read back transposed into Y (Y[c, r] = S[r, c]), so that most elements are
** read by another thread than the one that copied them. commit 0 leaves the
** group open; wait < 0 leaves out the wait; barrier 0 the barrier; layout
** of S (Sw<2,0,5> breaks the 16-byte runs).
*/
static UOp *
cpa_kernel(int commit, int wait, int barrier, const char *layout)
{
	int x = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)16, (int64_t)32);
	int y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)32, (int64_t)16);
	int sh = mkbuf("S", DT_FLOAT32, AS_LOCAL, KB_TEMP, 2, (int64_t)16, (int64_t)32);
	UOp *tx = var("tx", 64), *e = var("e", 8), *th[3] = { tx }, *ops[5], *el;
	KScope sc;
	KDispatch d;
	KRegion rs, rx;
	Composed cl;
	int n = 0, i;

	if (layout && (composed_parse(layout, &cl, &E) < 0 || kernel_layout_cute(K, sh, NULL, &cl, &E) < 0))
		fail_msg("layout %s: %s", layout, E.msg);
	if (kernel_scope(K, KS_CTA, th, NULL, 0, 0, &sc, &E) < 0)
		fail_msg("scope: %s", E.msg);
	memset(&rs, 0, sizeof rs);
	memset(&rx, 0, sizeof rx);
	rs.buf = sh;
	rx.buf = x;
	for (i = 0; i < 2; i++) {
		rs.begin[i] = rx.begin[i] = I(0);
		rs.extent[i] = rx.extent[i] = i ? 32 : 16;
	}
	if (!(ops[n++] = kernel_op_copy(K, &sc, &rs, &rx, "cp_async", &d, &E)))
		return NULL;
	assert_string_equal(d.impl, "cp_async");
	if (commit)
		ops[n++] = kernel_cp_commit(K);
	if (wait >= 0 && !(ops[n++] = kernel_cp_wait(K, wait, &E)))
		fail_msg("cp_wait: %s", E.msg);
	if (barrier)
		ops[n++] = kernel_barrier(K);
	el = add(mul(e, I(64)), tx);
	ops[n++] = loop(e, HW_NONE, 1, st(at(y, 2, uop_mod(K->c, el, I(32)), uop_idiv(K->c, el, I(32))),
	                                   ld(at(sh, 2, uop_idiv(K->c, el, I(32)), uop_mod(K->c, el, I(32))))));
	stage("cpa", loop(tx, HW_THREAD_X, 1, kernel_if(K, kernel_const(K, DT_BOOL, 1), ops, n)));
	return ops[0];
}

static void
renew(void)
{
	kernel_free(K);
	K = kernel_new();
}

static void
test_cp_async(void **state)
{
	double vx[512];
	TBuf bufs[3] = { { 0 } };
	KCounts cnt;
	Buf b;
	int i, r, c;

	for (i = 0; i < 512; i++)
		vx[i] = i;
	/* the landed tile, through a swizzle too */
	for (i = 0; i < 2; i++) {
		if (i)
			renew();
		assert_non_null(cpa_kernel(1, 0, 1, i ? "Sw<3,2,3> o 0 o (16,32):(32,1)" : NULL));
		check_ok();
		input(&bufs[0], 0, vx);
		run_ok(bufs, &(KRunOpts){ .checks = 1, .counts = 1 }, &cnt);
		for (r = 0; r < 16; r++)
			for (c = 0; c < 32; c++)
				if (getf(&bufs[1], c * 16 + r) != 32 * r + c)
					fail_msg("Y[%d, %d] = %g, want %d", c, r, getf(&bufs[1], c * 16 + r), 32 * r + c);
		/* 128 copies of 16 bytes: 4 warp requests of 512 bytes, 16 sectors each; Y's
		** transposed stores touch 32 sectors in each of their 16 requests */
		assert_int_equal(cnt.cp_asyncs, 128);
		assert_int_equal(cnt.global_loads, 4);
		assert_int_equal(cnt.global_sectors, 64 + 16 * 32);
		freebufs(bufs, 3);
		input(&bufs[0], 0, vx);
		run_ok(bufs, &(KRunOpts){ .checks = 0 }, NULL);
		assert_true(getf(&bufs[1], 17) == 33);
		freebufs(bufs, 3);
	}
	buf_init(&b);
	kernel_print(&b, K, 0);
	if (!strstr(b.s, "cp_async.4(S[it*8 + tx//8, tx%8*4], X[it*8 + tx//8, tx%8*4])\n")
	|| !strstr(b.s, "cp_async_commit()\n") || !strstr(b.s, "cp_async_wait(0)\n"))
		fail_msg("print: %s", b.s);
	buf_free(&b);

	/* the verifier: a read with no wait since the copy, a wait for an uncommitted copy */
	renew();
	cpa_kernel(1, -1, 1, NULL);
	assert_int_equal(kernel_check(K, NULL, &E), -1);
	has("reads S while a cp.async into it may be in flight: no cp_async_wait");
	renew();
	cpa_kernel(0, 0, 1, NULL);
	assert_int_equal(kernel_check(K, NULL, &E), -1);
	has("issued and not committed");

	/* the interpreter: wait_group 1 with one group retires nothing, and the read comes first */
	renew();
	cpa_kernel(1, 1, 1, NULL);
	check_ok();
	input(&bufs[0], 0, vx);
	run_fail(bufs, NULL, "cp_async: stage cpa, block (0,0,0), thread (0,0,0)");
	has("reads S[0, 0] (offset 0, shared memory) while a cp.async into it is in flight (issued by thread (0,0,0)");
	freebufs(bufs, 3);
	/* no barrier: thread 1 reads what thread 0's wait landed, in the same phase */
	renew();
	cpa_kernel(1, 0, 0, NULL);
	check_ok();
	input(&bufs[0], 0, vx);
	run_fail(bufs, NULL, "race:");
	freebufs(bufs, 3);

	/* refusals: a tile swizzled within 16 bytes has no 16-byte runs; shared to global is not cp.async */
	renew();
	assert_null(cpa_kernel(1, 0, 1, "Sw<2,0,5> o 0 o (16,32):(32,1)"));
	has("copy: cp_async is not possible: it moves 16-byte runs (4 elements), and S element");
	{
		int g = mkbuf("G", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)8);
		int s2 = mkbuf("T", DT_FLOAT32, AS_LOCAL, KB_TEMP, 1, (int64_t)8);

		assert_null(kernel_cp_async(K, at(g, 1, I(0)), at(s2, 1, I(0)), 4, &E));
		has("the destination G is a global buffer; cp.async writes shared memory");
		assert_null(kernel_cp_async(K, at(s2, 1, I(0)), at(g, 1, I(0)), 3, &E));
		has("3 elements of float32 are 12 bytes");
		assert_null(kernel_cp_wait(K, 64, &E));
	}
	(void)state;
}

/*
** A 3-stage cp.async pipeline in the usual order: the prologue issues tiles 0
** and 1; step kt waits for all but the newest group, passes a barrier, issues
** tile kt+2 into slot (kt+lead)%3 under kt+2 < 4, commits, and copies slot
** kt%3 into Y, row by row of another thread. lead 2 is the slot step kt-1
** read; lead 3 is the slot this step reads.
*/
static void
pipe_kernel(int lead)
{
	enum { NT = 4 };
	int x = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)NT * 8, (int64_t)4);
	int y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)NT * 8, (int64_t)4);
	int sh = mkbuf("S", DT_FLOAT32, AS_LOCAL, KB_TEMP, 3, (int64_t)3, (int64_t)8, (int64_t)4);
	UOp *tx = var("tx", 8), *kt = var("kt", NT), *j = var("j", 4), *c[2], *nt, *body;

	for (int s = 0; s < 2; s++)
		if (!(c[s] = kernel_cp_async(K, at(sh, 3, I(s), tx, I(0)), at(x, 2, add(I(8 * s), tx), I(0)), 4, &E)))
			fail_msg("cp_async: %s", E.msg);
	nt = alu(OP_MIN, DT_INDEX, add(kt, I(2)), I(NT - 1));
	body = loop(kt, HW_NONE, 5,
	            kernel_cp_wait(K, 1, &E),
	            kernel_barrier(K),
	            when(alu(OP_CMPLT, DT_BOOL, add(kt, I(2)), I(NT)), 1,
	                 kernel_cp_async(K, at(sh, 3, uop_mod(K->c, add(kt, I(lead)), I(3)), tx, I(0)),
	                                 at(x, 2, add(mul(nt, I(8)), tx), I(0)), 4, &E)),
	            kernel_cp_commit(K),
	            loop(j, HW_NONE, 1, st(at(y, 2, add(mul(kt, I(8)), tx), j),
	                                   ld(at(sh, 3, uop_mod(K->c, kt, I(3)), uop_mod(K->c, add(tx, I(1)), I(8)), j)))));
	stage("pipe", loop(tx, HW_THREAD_X, 5, c[0], kernel_cp_commit(K), c[1], kernel_cp_commit(K), body));
}

static void
test_cp_async_slots(void **state)
{
	double vx[128];
	TBuf bufs[3] = { { 0 } };
	int i;

	/* issue before compute: the copy's slot (kt+2)%3 is proved apart from the read's kt%3 */
	for (i = 0; i < 128; i++)
		vx[i] = i;
	pipe_kernel(2);
	check_ok();
	input(&bufs[0], 0, vx);
	run_ok(bufs, &(KRunOpts){ .checks = 1 }, NULL);
	for (i = 0; i < 128; i++) {
		int r = i / 4, t = r % 8;

		/* Y[kt*8 + t, j] = X[kt*8 + (t+1)%8, j] */
		if (getf(&bufs[1], i) != (r - t + (t + 1) % 8) * 4 + i % 4)
			fail_msg("Y[%d, %d] = %g", r, i % 4, getf(&bufs[1], i));
	}
	freebufs(bufs, 3);

	/* the copy into the slot being read: refused, with the iteration where they meet */
	renew();
	pipe_kernel(3);
	assert_int_equal(kernel_check(K, NULL, &E), -1);
	has("reads S while a cp.async into it may be in flight");
	has("the copy's index 0 is (kt + 3)%3, this access's kt%3: both reach index 0 = 0 at kt=0");
	(void)state;
}

static void
test_ldmatrix(void **state)
{
	static const char *const layouts[2] = { NULL, "Sw<1,3,3> o 0 o (16,16):(16,1)" };
	double vx[256];
	TBuf bufs[6] = { { 0 } };
	KCounts cnt;
	Buf b;
	int i, t, v, l;

	for (i = 0; i < 256; i++)
		vx[i] = i;
	for (l = 0; l < 2; l++) {
		if (l) {
			kernel_free(K);
			K = kernel_new();
		}
		ldsm_kernel(layouts[l], 0, 1, 0);
		check_ok();
		input(&bufs[0], 0, vx);
		run_ok(bufs, &(KRunOpts){ .checks = 1, .counts = 1 }, &cnt);
		/* lane t's A fragment: (row t/4 + 8(v/2%2), column 2(t%4) + v%2 + 8(v/4)); its B
		** fragment: (k 2(t%4) + v%2 + 8(v/2), n 8 + t/4), both through any layout of S */
		for (t = 0; t < 32; t++) {
			for (v = 0; v < 8; v++) {
				double want = 16 * (t / 4 + 8 * (v / 2 % 2)) + 2 * (t % 4) + v % 2 + 8 * (v / 4);
				double got = dtype_load_f(DT_FLOAT16, (unsigned char *)bufs[1].data + 2 * (t * 8 + v));

				if (got != want)
					fail_msg("%s: lane %d a_r[%d] = %g, want %g", layouts[l] ? layouts[l] : "row-major", t, v,
					         got, want);
			}
			for (v = 0; v < 4; v++) {
				double want = 16 * (2 * (t % 4) + v % 2 + 8 * (v / 2)) + 8 + t / 4;
				double got = dtype_load_f(DT_FLOAT16, (unsigned char *)bufs[2].data + 2 * (t * 4 + v));

				if (got != want)
					fail_msg("%s: lane %d b_r[%d] = %g, want %g", layouts[l] ? layouts[l] : "row-major", t, v,
					         got, want);
			}
		}
		/* 6 matrices of 8 rows: row-major rows 32 bytes apart pair up in the banks (2-way), the
		** swizzle spreads them */
		assert_int_equal(cnt.ldmatrices, 2);
		assert_int_equal(cnt.shared_loads, 6);
		assert_int_equal(cnt.bank_conflicts, l ? 0 : 6);
		freebufs(bufs, 6);
	}
	buf_init(&b);
	kernel_print(&b, K, 0);
	if (!strstr(b.s, "ldmatrix.x4(a_r, S[lane%8 + lane//8%2*8, lane//16*8])\n")
	|| !strstr(b.s, "ldmatrix.x2.trans(b_r, S[lane%16, 8])\n"))
		fail_msg("print: %s", b.s);
	buf_free(&b);

	/* a row one element past a 16-byte boundary */
	kernel_free(K);
	K = kernel_new();
	ldsm_kernel(NULL, 1, 1, 0);
	input(&bufs[0], 0, vx);
	run_fail(bufs, NULL, "ldmatrix:");
	has("lane 0 names row 0 of matrix 0 at offset 1 of S");
	freebufs(bufs, 6);
	/* nothing wrote S */
	kernel_free(K);
	K = kernel_new();
	ldsm_kernel(NULL, 0, 0, 0);
	input(&bufs[0], 0, vx);
	run_fail(bufs, NULL, "uninitialized:");
	has("load of S[0, 0]");
	freebufs(bufs, 6);
	/* under an if on the lane: the verifier refuses it */
	kernel_free(K);
	K = kernel_new();
	ldsm_kernel(NULL, 0, 1, 1);
	assert_int_equal(kernel_check(K, NULL, &E), -1);
	has("an ldmatrix under thread-divergent control flow");
	/* the builder's refusals */
	{
		int g = mkbuf("G", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
		int s32 = mkbuf("S32", DT_FLOAT32, AS_LOCAL, KB_TEMP, 1, (int64_t)64);
		int r4 = mkbuf("r4", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)4);
		int s = kernel_find_buffer(K, "S");

		assert_null(kernel_ldmatrix(K, r4, at(s, 2, I(0), I(0)), 4, 0, &E));
		has("the destination r4 holds 4 elements; x4 gives a lane 8");
		assert_null(kernel_ldmatrix(K, r4, at(g, 1, I(0)), 2, 0, &E));
		has("the source G is a global buffer; ldmatrix reads shared memory");
		assert_null(kernel_ldmatrix(K, r4, at(s32, 1, I(0)), 2, 0, &E));
		has("the source S32 is float32; ldmatrix moves 16-bit elements");
		assert_null(kernel_ldmatrix(K, r4, at(s, 2, I(0), I(0)), 3, 0, &E));
		has("x3; ldmatrix loads 1, 2 or 4 matrices");
	}
}

/*
** SM70's m8n8k4 runs as four quadpairs per warp (thr_id (4,2):(1,16)): lane L
** is logical thread L%4 + 4*(L/16) of quadpair (L/4)%4, and each quadpair
** multiplies its own tiles.
*/
static void
test_mma_quadpair(void **state)
{
	int A = mkbuf("A", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 3, (int64_t)4, (int64_t)8, (int64_t)4);
	int B = mkbuf("B", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 3, (int64_t)4, (int64_t)8, (int64_t)4);
	int D = mkbuf("D", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 3, (int64_t)4, (int64_t)8, (int64_t)8);
	int ar = mkbuf("a_r", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)4);
	int br = mkbuf("b_r", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)4);
	int cr = mkbuf("c_r", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)8);
	UOp *l = var("l", 32), *v4 = var("v", 4), *v8 = var("w", 8), *v8b = var("u", 8);
	UOp *qp = ix(OP_MOD, ix(OP_IDIV, l, I(4)), I(4));
	UOp *t = add(ix(OP_MOD, l, I(4)), mul(ix(OP_IDIV, l, I(16)), I(4)));
	UOp *xa, *xb, *xc, *m;
	MmaAtom at_;
	double va[128], vb[128];
	TBuf bufs[6] = { { 0 } };
	int q, i, j, k;

	assert_int_equal(cute_mma_atom("SM70_8x8x4_F32F16F16F32_TN", &at_, &E), 0);
	assert_int_equal(lower_cute_idx(K->c, &at_.a, add(t, mul(v4, I(8))), &xa, &E), 0);
	assert_int_equal(lower_cute_idx(K->c, &at_.b, add(t, mul(v4, I(8))), &xb, &E), 0);
	assert_int_equal(lower_cute_idx(K->c, &at_.c, add(t, mul(v8b, I(8))), &xc, &E), 0);
	/* C = 0, D = A B + C accumulated in place (D and C one buffer) */
	m = kernel_mma(K, "SM70_8x8x4_F32F16F16F32_TN", cr, ar, br, cr, &E);
	if (!m)
		fail_msg("kernel_mma: %s", E.msg);
	stage("qp", loop(l, HW_LANE, 4,
	      loop(v4, HW_NONE, 2, st(at(ar, 1, v4), ld(at(A, 3, qp, ix(OP_MOD, xa, I(8)), ix(OP_IDIV, xa, I(8))))),
	           st(at(br, 1, v4), ld(at(B, 3, qp, ix(OP_MOD, xb, I(8)), ix(OP_IDIV, xb, I(8)))))),
	      loop(v8, HW_NONE, 1, st(at(cr, 1, v8), fc(DT_FLOAT32, 0))),
	      m,
	      loop(v8b, HW_NONE, 1, st(at(D, 3, qp, ix(OP_MOD, xc, I(8)), ix(OP_IDIV, xc, I(8))),
	           ld(at(cr, 1, v8b))))));
	check_ok();
	for (i = 0; i < 128; i++) {
		va[i] = frand();
		vb[i] = frand();
	}
	input(&bufs[A], A, va);
	input(&bufs[B], B, vb);
	run_ok(bufs, NULL, NULL);
	for (q = 0; q < 4; q++)
		for (i = 0; i < 8; i++)
			for (j = 0; j < 8; j++) {
				double acc = 0;

				for (k = 0; k < 4; k++)
					acc += dtype_from_half(dtype_to_half(va[q * 32 + i * 4 + k]))
					     * dtype_from_half(dtype_to_half(vb[q * 32 + j * 4 + k]));
				assert_true(getf(&bufs[D], q * 64 + i * 8 + j) == (float)acc);
			}
	freebufs(bufs, 6);
}

/* kernel_mma refuses what the atom does not take. */
static void
test_mma_errors(void **state)
{
	int ar = mkbuf("a_r", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)8);
	int br = mkbuf("b_r", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)4);
	int cr = mkbuf("c_r", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)4);
	int a4 = mkbuf("a4", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)4);
	int af = mkbuf("af", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)8);
	int as = mkbuf("as", DT_FLOAT16, AS_LOCAL, KB_TEMP, 1, (int64_t)8);
	int ch = mkbuf("ch", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)4);
	const char *at_ = "SM80_16x8x16_F32F16F16F32_TN";

	assert_non_null(kernel_mma(K, at_, cr, ar, br, cr, &E));
	assert_non_null(kernel_mma(K, "sm80_16x8x16_f32f16f16f32_tn", cr, ar, br, cr, &E));
	assert_null(kernel_mma(K, at_, cr, a4, br, cr, &E));
	has("mma: SM80_16x8x16_F32F16F16F32_TN: operand A is a4, of 4 elements; a thread holds 8 values");
	assert_null(kernel_mma(K, at_, cr, as, br, cr, &E));
	has("operand A is as, a shared buffer; MMA operands are registers");
	assert_null(kernel_mma(K, at_, cr, af, br, cr, &E));
	has("operand A is af, of float32; the atom takes float16");
	assert_null(kernel_mma(K, at_, ch, ar, br, cr, &E));
	has("operand D is ch, of float16; the atom takes float32");
	assert_null(kernel_mma(K, "SM80_16x8x16_F32F16F16F32_XX", cr, ar, br, cr, &E));
	has("mma: unknown atom 'SM80_16x8x16_F32F16F16F32_XX'");
	assert_null(kernel_mma(K, NULL, cr, ar, br, cr, &E));
	assert_null(kernel_mma(K, "SM90_64x8x16_F32F16F16_SS", cr, ar, br, cr, &E));
	has("a warpgroup MMA (128 threads)");
	assert_null(kernel_mma(K, at_, cr, ar, br, 99, &E));
	has("operand C: no buffer 99");
	/* under `if lane < 16` the verifier refuses it, as a barrier */
	{
		UOp *l = var("l", 32);

		stage("div", loop(l, HW_LANE, 2, st(at(ar, 1, I(0)), fc(DT_FLOAT16, 1)),
		      when(ix(OP_CMPLT, l, I(16)), 1, kernel_mma(K, at_, cr, ar, br, cr, &E))));
		assert_int_equal(kernel_check(K, NULL, &E), -1);
		has("check: stage div: an mma under thread-divergent control flow");
	}
	/* tf32 lives in float32 registers; f16 accumulators for the f16 atoms */
	{
		int ta = mkbuf("ta", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)4);
		int tb = mkbuf("tb", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)2);
		int hc = mkbuf("hc", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)4);

		assert_non_null(kernel_mma(K, "SM80_16x8x8_F32TF32TF32F32_TN", cr, ta, tb, cr, &E));
		assert_non_null(kernel_mma(K, "SM80_16x8x16_F16F16F16F16_TN", hc, ar, br, hc, &E));
	}
}

/* ---- limits ---- */

static void
test_limits(void **state)
{
	int y = mkbuf("y", DT_INT64, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)1000);
	UOp *i = var("i", 1000);
	TBuf bufs[1] = { { 0 } };

	stage("y", loop(i, HW_NONE, 1, st(at(y, 1, i), kernel_cast(K, DT_INT64, i))));
	run_fail(bufs, &(KRunOpts){ .checks = 1, .max_steps = 100 }, "steps limit:");
	has("max_steps");
	run_fail(bufs, &(KRunOpts){ .checks = 1, .mem_limit = 4000 }, "tensor_bytes limit:");
	has("mem_limit");
	/* 8000 bytes of data and 52 bytes of shadow state per element */
	run_fail(bufs, &(KRunOpts){ .checks = 1, .mem_limit = 20000 }, "tensor_bytes limit:");
	run_ok(bufs, &(KRunOpts){ .mem_limit = 20000 }, NULL);
	assert_int_equal(((int64_t *)bufs[0].data)[999], 999);
	freebufs(bufs, 1);
	/* the limits in force stand in for zero options; Ctrl-C stops a run */
	{
		Limits l = *limits_get(), low = l;
		low.steps = 100;
		assert_int_equal(limits_set(&low, &E), 0);
		run_fail(bufs, &(KRunOpts){ .checks = 1 }, "steps limit:");
		has("tessel.limits{steps = N}");
		low.steps = l.steps;
		low.tensor_bytes = 4000;
		assert_int_equal(limits_set(&low, &E), 0);
		run_fail(bufs, &(KRunOpts){ .checks = 1 }, "tensor_bytes limit:");
		assert_int_equal(limits_set(&l, &E), 0);
		freebufs(bufs, 1);
		limits_interrupt();
		run_fail(bufs, &(KRunOpts){ .checks = 1 }, "interrupted");
		limits_clear_interrupt();
		run_ok(bufs, NULL, NULL);
		freebufs(bufs, 1);
	}
}

/* ---- dtypes against the reference evaluator ---- */

/* op over two inputs of dtype t, elementwise, in the interpreter and in tensor_realize */
static void
differential(Op op, DType t, DType rt, const double *va, const double *vb, int n)
{
	UCtx *c = uctx_new();
	int64_t sh = n;
	UOp *ta = tensor_from(c, t, va, &sh, 1, &E), *tb = tensor_from(c, t, vb, &sh, 1, &E), *tr;
	TBuf ref, bufs[3] = { { 0 } };
	int a, b, y, i;
	UOp *x;

	kernel_free(K);
	K = kernel_new();
	a = mkbuf("a", t, AS_GLOBAL, KB_INPUT, 1, sh);
	b = mkbuf("b", t, AS_GLOBAL, KB_INPUT, 1, sh);
	y = mkbuf("y", rt, AS_GLOBAL, KB_OUTPUT, 1, sh);
	x = var("i", n);
	tr = op == OP_CAST ? tensor_cast(c, rt, ta, &E) : tensor_alu(c, op, ta, tb, &E);
	assert_non_null(tr);
	assert_int_equal(tensor_realize(tr, NULL, &ref, &E), 0);
	stage("y", loop(x, HW_NONE, 1, st(at(y, 1, x), op == OP_CAST ? kernel_cast(K, rt, ld(at(a, 1, x)))
	      : alu(op, t, ld(at(a, 1, x)), ld(at(b, 1, x))))));
	input(&bufs[a], a, va);
	input(&bufs[b], b, vb);
	run_ok(bufs, NULL, NULL);
	assert_int_equal(ref.dtype, rt);
	for (i = 0; i < n; i++)
		if (memcmp((char *)ref.data + i * dtype_bytes(rt), (char *)bufs[y].data + i * dtype_bytes(rt),
		           dtype_bytes(rt)) != 0)
			fail_msg("%s %s: element %d (%g, %g): interpreter %g, reference %g", uop_info[op].name,
			         dtype_name(t), i, va[i], vb[i], tbuf_get(&bufs[y], i), tbuf_get(&ref, i));
	tbuf_free(&ref);
	freebufs(bufs, 3);
	uctx_free(c);
}

static void
test_dtypes(void **state)
{
	static const double ia[] = { -7, 7, -7, 7, 5, -1, 2147483647, -2147483647 - 1.0, 0, 3, -8, 100 };
	static const double ib[] = { 2, -2, -2, 2, 0, 3, 1, -1, 0, -5, 3, 7 };
	static const double fa[] = { 1, 1 + 0x1.8p-11, 65504, 0.1, -3.5, 1e-8, 7, -7 };
	static const double fb[] = { 0x1p-11, 0x1p-12, 16, 0.2, 2, 1e-8, -2, 2 };
	static const Op iops[] = { OP_ADD, OP_SUB, OP_MUL, OP_IDIV, OP_MOD, OP_MAX, OP_MIN, OP_CMPLT,
	                           OP_CMPNE, OP_AND, OP_OR, OP_XOR, OP_SHL, OP_SHR };
	static const Op fops[] = { OP_ADD, OP_SUB, OP_MUL, OP_IDIV, OP_MOD, OP_MAX, OP_POW, OP_CMPLT };
	static const DType its[] = { DT_INT32, DT_INT8, DT_UINT8, DT_INT64, DT_UINT32, DT_INT16 };
	static const DType fts[] = { DT_FLOAT16, DT_BFLOAT16, DT_FLOAT32, DT_FLOAT64 };
	size_t i, j;
	int n = (int)(sizeof ia / sizeof ia[0]);

	for (i = 0; i < sizeof its / sizeof its[0]; i++)
		for (j = 0; j < sizeof iops / sizeof iops[0]; j++)
			differential(iops[j], its[i], (uop_info[iops[j]].flags & U_CMP) ? DT_BOOL : its[i], ia, ib, n);
	for (i = 0; i < sizeof fts / sizeof fts[0]; i++)
		for (j = 0; j < sizeof fops / sizeof fops[0]; j++)
			differential(fops[j], fts[i], (uop_info[fops[j]].flags & U_CMP) ? DT_BOOL : fts[i], fa, fb, 8);
	/* casts between kinds */
	differential(OP_CAST, DT_FLOAT32, DT_INT8, fa, fb, 8);
	differential(OP_CAST, DT_FLOAT64, DT_FLOAT16, fa, fb, 8);
	differential(OP_CAST, DT_INT32, DT_FLOAT16, ia, ib, n);
	differential(OP_CAST, DT_INT32, DT_UINT8, ia, ib, n);
	differential(OP_CAST, DT_INT32, DT_BOOL, ia, ib, n);
}

/* The same facts written out: float16 rounds after each op, int32 wraps,
** integer division floors on negative operands and x // 0 is 0. */
static void
test_dtype_facts(void **state)
{
	double a[3] = { 1, 2147483647, -7 };
	int fa, ia, y1, y2, y3, y4;
	UOp *i;
	TBuf bufs[6] = { { 0 } };

	fa = mkbuf("fa", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 1, (int64_t)3);
	ia = mkbuf("ia", DT_INT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)3);
	y1 = mkbuf("y1", DT_FLOAT16, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)1);
	y2 = mkbuf("y2", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)1);
	y3 = mkbuf("y3", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)2);
	y4 = mkbuf("y4", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)1);
	i = var("i", 1);
	/* (1 + 1.5*2^-11) + (1.5*2^-11): in float16 the first sum is already rounded */
	stage("s", loop(i, HW_NONE, 5,
	      st(at(y1, 1, I(0)), alu(OP_ADD, DT_FLOAT16, alu(OP_ADD, DT_FLOAT16, ld(at(fa, 1, I(0))),
	         fc(DT_FLOAT16, 0x1.8p-11)), fc(DT_FLOAT16, 0x1.8p-11))),
	      st(at(y2, 1, I(0)), alu(OP_ADD, DT_INT32, ld(at(ia, 1, I(1))), ld(at(ia, 1, I(0))))),
	      st(at(y3, 1, I(0)), alu(OP_IDIV, DT_INT32, ld(at(ia, 1, I(2))), kernel_const(K, DT_INT32, 2))),
	      st(at(y3, 1, I(1)), alu(OP_MOD, DT_INT32, ld(at(ia, 1, I(2))), kernel_const(K, DT_INT32, 2))),
	      st(at(y4, 1, I(0)), alu(OP_IDIV, DT_INT32, ld(at(ia, 1, I(2))), kernel_const(K, DT_INT32, 0)))));
	input(&bufs[fa], fa, (double[]){ 1, 0, 0 });
	input(&bufs[ia], ia, a);
	run_ok(bufs, NULL, NULL);
	{
		double h = dtype_from_half(dtype_to_half(1 + 0x1.8p-11));

		h = dtype_from_half(dtype_to_half(h + dtype_from_half(dtype_to_half(0x1.8p-11))));
		assert_true(tbuf_get(&bufs[y1], 0) == h);
		assert_true(h == 1 + 0x1p-9);     /* 1 + 2^-10, then + 1.5*2^-11 rounds up to 1 + 2^-9 */
	}
	assert_int_equal(((int32_t *)bufs[y2].data)[0], INT32_MIN);
	assert_int_equal(((int32_t *)bufs[y3].data)[0], -4);
	assert_int_equal(((int32_t *)bufs[y3].data)[1], 1);
	assert_int_equal(((int32_t *)bufs[y4].data)[0], 0);
	freebufs(bufs, 6);
}

/* index arithmetic divides by zero: an error, not a crash */
static void
test_index_div_zero(void **state)
{
	int y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)4);
	UOp *i = var("i", 4);
	TBuf bufs[1] = { { 0 } };

	stage("y", loop(i, HW_NONE, 1, st(at(y, 1, uop_idiv(K->c, I(3), uop_sub(K->c, I(3), i))), I(1))));
	run_fail(bufs, NULL, "kernel.run:");
	has("division by zero");
	has("i=3");
	freebufs(bufs, 1);
}

/* a statement that is not one, an unbound variable: errors naming the stage */
static void
test_bad_programs(void **state)
{
	int y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)4);
	UOp *i = var("i", 4), *j = var("j", 4);
	TBuf bufs[1] = { { 0 } };

	stage("s1", loop(i, HW_NONE, 1, st(at(y, 1, j), I(1))));
	run_fail(bufs, NULL, "kernel.run: stage s1: the variable j");
	kernel_free(K);
	K = kernel_new();
	y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)4);
	i = var("i", 4);
	j = var("j", 4);
	stage("s2", loop(i, HW_NONE, 1, st(at(y, 1, i), kernel_range(K, j, AX_LOOP, HW_NONE))));
	run_fail(bufs, NULL, "kernel.run: stage s2: range is not a value");
	freebufs(bufs, 1);
}

/* deep programs: a long expression chain runs (compiled without recursion);
** statements nested past the limit are refused with a message */
static void
test_deep(void **state)
{
	int a = mkbuf("a", DT_INT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)1);
	int y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)1);
	UOp *i = var("i", 1), *x = kernel_const(K, DT_INT32, 0), *s, *g;
	TBuf bufs[2] = { { 0 } };
	int k;

	/* loads are not folded: a chain 5000 deep */
	for (k = 0; k < 5000; k++)
		x = alu(OP_ADD, DT_INT32, x, ld(at(a, 1, I(0))));
	assert_true(x->depth > 5000);
	stage("deep", loop(i, HW_NONE, 1, st(at(y, 1, I(0)), x)));
	input(&bufs[a], a, (double[]){ 1 });
	run_ok(bufs, NULL, NULL);
	assert_int_equal(((int32_t *)bufs[y].data)[0], 5000);
	freebufs(bufs, 2);
	kernel_free(K);
	K = kernel_new();
	y = mkbuf("y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)1);
	g = uop_alu(K->c, OP_CMPLT, var("j", 2), I(5));
	s = st(at(y, 1, I(0)), I(1));
	for (k = 0; k < 3000; k++)
		s = when(g, 1, s);
	stage("nest", loop(var("j", 2), HW_NONE, 1, s));
	run_fail(bufs, NULL, "kernel.run: stage nest: statements nest deeper than");
}

/* ---- layouts, inputs ---- */

/* an input stored column-major and an output stored with padding: the
** interpreter places and reads back through the layouts */
static void
test_layouts_io(void **state)
{
	int a = mkbuf("a", DT_FLOAT64, AS_GLOBAL, KB_INPUT, 2, (int64_t)3, (int64_t)4);
	int y = mkbuf("y", DT_FLOAT64, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)4, (int64_t)3);
	UOp *v[2] = { uop_var(K->c, "r", 0, 2), uop_var(K->c, "c", 0, 3) };
	UOp *w[2] = { uop_var(K->c, "r", 0, 3), uop_var(K->c, "c", 0, 2) };
	UOp *i = var("i", 4), *j = var("j", 3);
	double va[12];
	TBuf bufs[2] = { { 0 } };
	int k, r;

	assert_int_equal(kernel_set_layout(K, a, add(v[0], mul(v[1], I(3))), v, 2, 12, "col", &E), 0);
	assert_int_equal(kernel_set_layout(K, y, add(mul(w[0], I(5)), w[1]), w, 2, 20, "pad", &E), 0);
	for (k = 0; k < 12; k++)
		va[k] = k + 0.5;
	stage("y", loop(i, HW_NONE, 1, loop(j, HW_NONE, 1, st(at(y, 2, i, j), ld(at(a, 2, j, i))))));
	input(&bufs[a], a, va);
	run_ok(bufs, NULL, NULL);
	for (r = 0; r < 4; r++)
		for (k = 0; k < 3; k++)
			assert_true(((double *)bufs[y].data)[r * 3 + k] == va[k * 4 + r]);
	freebufs(bufs, 2);
}

static void
test_inputs(void **state)
{
	UCtx *c = uctx_new();
	int64_t sh[2] = { 2, 3 };
	double v[6] = { 1, 2, 3, 4, 5, 6 };
	UOp *t = tensor_from(c, DT_FLOAT32, v, sh, 2, &E);
	int a = mkbuf("a", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)2, (int64_t)3);
	int y = mkbuf("y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)2, (int64_t)3);
	UOp *i = var("i", 2), *j = var("j", 3);
	TBuf bufs[2] = { { 0 } };
	int k;

	K->buf[a].tensor = t;
	stage("y", loop(i, HW_NONE, 1, loop(j, HW_NONE, 1, st(at(y, 2, i, j),
	      alu(OP_MUL, DT_FLOAT32, ld(at(a, 2, i, j)), fc(DT_FLOAT32, 2))))));
	assert_int_equal(kernel_inputs(K, NULL, bufs, &E), 0);
	run_ok(bufs, NULL, NULL);
	for (k = 0; k < 6; k++)
		assert_true(getf(&bufs[y], k) == 2 * v[k]);
	freebufs(bufs, 2);
	/* a dtype mismatch names the buffer */
	K->buf[a].tensor = tensor_from(c, DT_FLOAT64, v, sh, 2, &E);
	assert_int_equal(kernel_inputs(K, NULL, bufs, &E), -1);
	assert_non_null(strstr(E.msg, "a:"));
	assert_null(bufs[a].data);
	/* and so does a missing input at run time */
	run_fail(bufs, NULL, "kernel.run: no data for input a");
	uctx_free(c);
}

/* ---- randomized: random expression trees against direct C evaluation ---- */

typedef struct RNode {
	int op;             /* -1: load a, -2: load b, -3: constant */
	int l, r;
	double k;
} RNode;

static double
reval(const RNode *n, int at, double a, double b, DType t)
{
	const RNode *x = &n[at];
	double l, r;

	if (x->op == -1)
		return a;
	if (x->op == -2)
		return b;
	if (x->op == -3)
		return x->k;
	l = reval(n, x->l, a, b, t);
	r = reval(n, x->r, a, b, t);
	if (t == DT_FLOAT32) {
		float fl = (float)l, fr = (float)r;

		switch (x->op) {
		case OP_ADD: return fl + fr;
		case OP_SUB: return fl - fr;
		case OP_MUL: return fl * fr;
		case OP_MAX: return fl > fr ? fl : fr;
		default: return fl < fr ? fl : fr;
		}
	} else {
		int32_t il = (int32_t)l, ir = (int32_t)r;
		int64_t q;

		switch (x->op) {
		case OP_ADD: return (int32_t)((uint32_t)il + (uint32_t)ir);
		case OP_SUB: return (int32_t)((uint32_t)il - (uint32_t)ir);
		case OP_MUL: return (int32_t)((uint32_t)il * (uint32_t)ir);
		case OP_MAX: return il > ir ? il : ir;
		case OP_XOR: return il ^ ir;
		default:
			/* floor division, x // 0 == 0 */
			if (ir == 0)
				return 0;
			q = (int64_t)il / ir;
			if ((int64_t)il % ir != 0 && ((il < 0) != (ir < 0)))
				q--;
			return (int32_t)q;
		}
	}
}

static UOp *
rbuild(const RNode *n, int at, UOp *la, UOp *lb, DType t)
{
	const RNode *x = &n[at];

	if (x->op == -1)
		return la;
	if (x->op == -2)
		return lb;
	if (x->op == -3)
		return kernel_const(K, t, x->k);
	return alu((Op)x->op, t, rbuild(n, x->l, la, lb, t), rbuild(n, x->r, la, lb, t));
}

static void
test_random(void **state)
{
	static const Op fo[] = { OP_ADD, OP_SUB, OP_MUL, OP_MAX, OP_MIN };
	static const Op io[] = { OP_ADD, OP_SUB, OP_MUL, OP_MAX, OP_XOR, OP_IDIV };
	int round;

	for (round = 0; round < 40; round++) {
		DType t = round % 2 ? DT_INT32 : DT_FLOAT32;
		RNode nd[32];
		int nn = 0, k, i, rows = 1 + rand() % 5, cols = 1 + rand() % 40, a, b, y, nb;
		UOp *vi, *vj, *la, *lb;
		double va[200], vb[200];
		TBuf bufs[3] = { { 0 } };

		kernel_free(K);
		K = kernel_new();
		/* leaves first, then each op over two earlier nodes */
		nd[nn++] = (RNode){ -1, 0, 0, 0 };
		nd[nn++] = (RNode){ -2, 0, 0, 0 };
		nd[nn++] = (RNode){ -3, 0, 0, (double)(rand() % 9 - 4) };
		for (k = 0; k < 12; k++) {
			int op = t == DT_FLOAT32 ? fo[rand() % 5] : io[rand() % 6];

			nd[nn] = (RNode){ op, rand() % nn, rand() % nn, 0 };
			nn++;
		}
		a = mkbuf("a", t, AS_GLOBAL, KB_INPUT, 2, (int64_t)rows, (int64_t)cols);
		b = mkbuf("b", t, AS_GLOBAL, KB_INPUT, 2, (int64_t)cols, (int64_t)rows);   /* read transposed */
		y = mkbuf("y", t, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)rows, (int64_t)cols);
		vi = var("i", rows);
		vj = var("j", cols);
		la = ld(at(a, 2, vi, vj));
		lb = ld(at(b, 2, vj, vi));
		nb = rand() % 3;
		stage("y", loop(vi, nb == 0 ? HW_BLOCK_X : HW_NONE, 1, loop(vj, nb == 2 ? HW_NONE : HW_THREAD_X, 1,
		      st(at(y, 2, vi, vj), rbuild(nd, nn - 1, la, lb, t)))));
		for (i = 0; i < rows * cols; i++) {
			va[i] = t == DT_FLOAT32 ? (double)(float)(frand() * 4) : (double)(rand() % 41 - 20);
			vb[i] = t == DT_FLOAT32 ? (double)(float)(frand() * 4) : (double)(rand() % 41 - 20);
		}
		input(&bufs[a], a, va);
		input(&bufs[b], b, vb);
		if (kernel_run(K, NULL, bufs, NULL, &E) < 0)
			fail_msg("seed %u round %d: %s", seed, round, E.msg);
		for (i = 0; i < rows * cols; i++) {
			int r = i / cols, c = i % cols;
			double want = reval(nd, nn - 1, va[i], vb[c * rows + r], t), got = tbuf_get(&bufs[y], i);

			if (t == DT_FLOAT32)
				want = (float)want;
			if (!(got == want || (isnan(got) && isnan(want))))
				fail_msg("seed %u round %d: y[%d, %d] = %.9g, want %.9g", seed, round, r, c, got, want);
		}
		freebufs(bufs, 3);
	}
}

/* ---- wgmma: the GMMA descriptor an operand's layout is ---- */

static int
swizzled(const char *name, int n, const int64_t *shape, const char *layout)
{
	Composed cl;
	int b = kernel_add_buffer(K, name, DT_FLOAT16, AS_LOCAL, KB_TEMP, shape, n, &E);

	if (b < 0 || composed_parse(layout, &cl, &E) < 0 || kernel_layout_cute(K, b, NULL, &cl, &E) < 0)
		fail_msg("%s: %s", name, E.msg);
	return b;
}

static KRegion
reg3(int b, UOp *b0, UOp *b1, UOp *b2, int64_t e0, int64_t e1, int64_t e2)
{
	KRegion r;

	memset(&r, 0, sizeof r);
	r.buf = b;
	r.begin[0] = b0;
	r.begin[1] = b1;
	r.begin[2] = b2;
	r.extent[0] = e0;
	r.extent[1] = e1;
	r.extent[2] = e2;
	return r;
}

static KRegion
reg2(int b, int64_t e0, int64_t e1)
{
	KRegion r;

	memset(&r, 0, sizeof r);
	r.buf = b;
	r.begin[0] = I(0);
	r.begin[1] = I(0);
	r.extent[0] = e0;
	r.extent[1] = e1;
	return r;
}

static void
desc_is(const KRegion *r, int op, int mn, int lt, int64_t lbo, int64_t sbo)
{
	KGmmaDesc d;

	if (kernel_wgmma_desc(K, r, op, NULL, 0, &d, &E) < 0)
		fail_msg("wgmma_desc %c: %s", op, E.msg);
	assert_int_equal(d.mn_major, mn);
	assert_int_equal(d.layout_type, lt);
	assert_int_equal(d.lbo, lbo);
	assert_int_equal(d.sbo, sbo);
}

static void
test_wgmma_desc(void **state)
{
	int64_t sa[3] = { 2, 128, 64 }, sb[3] = { 2, 64, 256 };
	int a = swizzled("As", 3, sa, "Sw<3,3,3> o 0 o (2,128,64):(8192,64,1)");
	int b = swizzled("Bs", 3, sb, "Sw<3,3,3> o 0 o (2,64,(64,4)):(16384,64,(1,4096))");
	UOp *s = var("s", 2), *w = var("w", 2), *kk = var("kk", 4);
	KRegion ra = reg3(a, s, mul(w, I(64)), mul(kk, I(16)), 1, 64, 16);
	KRegion rb = reg3(b, s, mul(kk, I(16)), I(0), 1, 16, 256);
	UBind bind[3] = { { "s", 1 }, { "w", 1 }, { "kk", 3 } };
	KGmmaDesc d;

	/* the worked examples: K-major A and MN-major B, both 128B, at every start their loops give */
	if (kernel_wgmma_desc(K, &ra, 'A', bind, 3, &d, &E) < 0)
		fail_msg("A: %s", E.msg);
	assert_int_equal(d.mn_major, 0);
	assert_int_equal(d.layout_type, 1);
	assert_int_equal(d.lbo, 16);
	assert_int_equal(d.sbo, 1024);
	assert_int_equal(d.start, 16384 + 8192 + 96);
	assert_int_equal(d.nstarts, 16);
	assert_true(d.desc == ((uint64_t)1 << 62 | (uint64_t)(1024 >> 4) << 32 | (uint64_t)1 << 16 | (24672 >> 4)));
	bind[2].value = 2;
	if (kernel_wgmma_desc(K, &rb, 'B', bind, 3, &d, &E) < 0)
		fail_msg("B: %s", E.msg);
	assert_int_equal(d.mn_major, 1);
	assert_int_equal(d.layout_type, 1);
	assert_int_equal(d.lbo, 8192);
	assert_int_equal(d.sbo, 1024);
	assert_int_equal(d.start, 32768 + 4096);
	assert_int_equal(d.nstarts, 8);
	/* the other forms */
	{
		int64_t s64[2] = { 64, 32 }, s32[2] = { 64, 16 }, bmn[2] = { 16, 64 };
		int a64 = swizzled("A64", 2, s64, "Sw<2,3,3> o 0 o (64,32):(32,1)");
		int a32 = swizzled("A32", 2, s32, "Sw<1,3,3> o 0 o (64,16):(16,1)");
		int ail = swizzled("AIL", 2, s32, "Sw<0,3,3> o 0 o ((8,8),(8,2)):((8,128),(1,64))");
		int b64 = swizzled("B64", 2, bmn, "Sw<2,3,3> o 0 o (16,(32,2)):(32,(1,512))");
		int b32 = swizzled("B32", 2, bmn, "Sw<1,3,3> o 0 o (16,(16,4)):(16,(1,256))");
		int bil = swizzled("BIL", 2, bmn, "Sw<0,3,3> o 0 o ((8,2),(8,8)):((8,512),(1,64))");
		KRegion r;

		r = reg2(a64, 64, 16);
		desc_is(&r, 'A', 0, 2, 16, 512);
		r = reg2(a32, 64, 16);
		desc_is(&r, 'A', 0, 3, 16, 256);
		r = reg2(ail, 64, 16);
		desc_is(&r, 'A', 0, 0, 128, 256);
		r = reg2(b64, 16, 64);
		desc_is(&r, 'B', 1, 2, 1024, 512);
		r = reg2(b32, 16, 64);
		desc_is(&r, 'B', 1, 3, 512, 256);
		r = reg2(bil, 16, 64);
		desc_is(&r, 'B', 1, 0, 1024, 128);
	}
	/* refused, with the element that breaks the closest form: unswizzled rows of 16 halves, padded rows */
	{
		int64_t s16[2] = { 64, 16 }, s64[2] = { 64, 64 };
		int rm = swizzled("RM", 2, s16, "Sw<0,3,3> o 0 o (64,16):(16,1)");
		int pad = swizzled("PAD", 2, s64, "Sw<0,3,3> o 0 o (64,64):(72,1)");
		KRegion r = reg2(rm, 64, 16);

		assert_int_equal(kernel_wgmma_desc(K, &r, 'A', NULL, 0, &d, &E), -1);
		assert_non_null(strstr(E.msg, "no GMMA canonical form fits"));
		assert_non_null(strstr(E.msg, "K-major 32B"));
		assert_non_null(strstr(E.msg, "element (4, 0), RM[4, 0], is at byte 128 where the form puts it at 144"));
		r = reg2(pad, 64, 16);
		assert_int_equal(kernel_wgmma_desc(K, &r, 'A', NULL, 0, &d, &E), -1);
		assert_non_null(strstr(E.msg, "operand A PAD[0, 0] {64, 16} (layout"));
		r = reg2(pad, 64, 16);
		r.extent[0] = 32;
		assert_int_equal(kernel_wgmma_desc(K, &r, 'A', NULL, 0, &d, &E), -1);
		assert_non_null(strstr(E.msg, "A is 64 x 16 (m, k)"));
	}
}

/* ---- wgmma with A from registers (the RS form) ---- */

static void
test_wgmma_rs(void **state)
{
	int64_t sb[2] = { 16, 64 }, sp[2] = { 4, 8 }, s4[1] = { 4 }, sd[1] = { 32 };
	int b = swizzled("Vs", 2, sb, "Sw<3,3,3> o 0 o (16,64):(64,1)");
	int p = kernel_add_buffer(K, "P", DT_FLOAT16, AS_REG, KB_TEMP, sp, 2, &E);
	int p4 = kernel_add_buffer(K, "P4", DT_FLOAT16, AS_REG, KB_TEMP, s4, 1, &E);
	int pf = kernel_add_buffer(K, "Pf", DT_FLOAT32, AS_REG, KB_TEMP, sp, 2, &E);
	int d = kernel_add_buffer(K, "o", DT_FLOAT32, AS_REG, KB_TEMP, sd, 1, &E);
	UOp *j = var("j", 4), *u;
	KRegion ra = reg2(p, 1, 8), rb = reg2(b, 16, 64);
	KGmmaDesc da, db;

	assert_true(p >= 0 && p4 >= 0 && pf >= 0 && d >= 0);
	/* row j of P: a thread's fragment; B's descriptor as in the SS form, A none */
	ra.begin[0] = j;
	u = kernel_wgmma(K, d, &ra, &rb, &E);
	if (!u)
		fail_msg("rs: %s", E.msg);
	if (kernel_wgmma_check(K, u, &da, &db, &E) < 0)
		fail_msg("rs check: %s", E.msg);
	assert_int_equal(da.regs, 1);
	assert_int_equal(db.regs, 0);
	assert_int_equal(db.mn_major, 1);
	assert_int_equal(db.layout_type, 1);
	/* refused: 4 elements, a fragment across rows, float32 registers */
	ra = reg2(p, 2, 4);
	assert_null(kernel_wgmma(K, d, &ra, &rb, &E));
	assert_non_null(strstr(E.msg, "operand A P[0, 0] {2, 4} (registers): extent 0 is 2"));
	memset(&ra, 0, sizeof ra);
	ra.buf = p4;
	ra.begin[0] = I(0);
	ra.extent[0] = 8;
	assert_null(kernel_wgmma(K, d, &ra, &rb, &E));
	assert_non_null(strstr(E.msg, "the last dimension of P4 has 4 elements"));
	ra = reg2(pf, 1, 8);
	assert_null(kernel_wgmma(K, d, &ra, &rb, &E));
	assert_non_null(strstr(E.msg, "operand A: Pf is float32"));
	(void)state;
}

/* ---- TMA: the dispatch's plans, exactly ---- */

static int
tma_shared(const char *name, const char *layout, int64_t a, int64_t b, int64_t c)
{
	Composed cl;
	int sb = mkbuf(name, DT_FLOAT16, AS_LOCAL, KB_TEMP, 3, a, b, c);

	if (composed_parse(layout, &cl, &E) < 0 || kernel_layout_cute(K, sb, NULL, &cl, &E) < 0)
		fail_msg("layout %s: %s", layout, E.msg);
	return sb;
}

static void
test_tma_plan(void **state)
{
	int ga = mkbuf("A", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 2, (int64_t)4096, (int64_t)4096);
	int as = tma_shared("As", "Sw<3,3,3> o 0 o (4,128,64):(8192,64,1)", 4, 128, 64);
	int bs = tma_shared("Bs", "Sw<3,3,3> o 0 o (4,64,(64,4)):(16384,64,(1,4096))", 4, 64, 256);
	int ps = mkbuf("P", DT_FLOAT16, AS_LOCAL, KB_TEMP, 2, (int64_t)64, (int64_t)72);
	int bar = mkbuf("bar", DT_UINT64, AS_LOCAL, KB_TEMP, 1, (int64_t)4);
	UOp *st = var("s", 4), *kt = var("kt", 64), *m = var("m", 32), *u, *idx[3];
	KRegion d = { as, { st, I(0), I(0) }, { 1, 128, 64 } }, g = { ga, { mul(m, I(128)), mul(kt, I(64)) }, { 128, 64 } };
	KTma t;
	int j;

	/* A's tile {128, 64}: one box {64 cols, 128 rows}, 128B, starts s*16384 bytes */
	if (kernel_tma_plan(K, &d, &g, &t, &E) < 0)
		fail_msg("plan: %s", E.msg);
	assert_int_equal(t.swizzle, 128);
	assert_int_equal(t.nbox, 1);
	assert_int_equal(t.box[0], 128);
	assert_int_equal(t.box[1], 64);
	assert_int_equal(t.bytes, 16384);
	assert_int_equal(t.global_dim[0], 4096);
	assert_int_equal(t.global_stride[0], 2);
	assert_int_equal(t.global_stride[1], 8192);
	for (j = 0; j < 4; j++) {
		idx[0] = I(j), idx[1] = I(0), idx[2] = I(0);
		assert_int_equal(kernel_offset(K, as, idx)->arg[0] * 2, j * 16384);
	}
	/* B's tile {64, 256}: four boxes {64, 64}, starts s*32768 + j*8192 bytes */
	d = (KRegion){ bs, { st, I(0), I(0) }, { 1, 64, 256 } };
	g = (KRegion){ ga, { mul(kt, I(64)), mul(var("n", 16), I(256)) }, { 64, 256 } };
	if (!(u = kernel_tma(K, &d, &g, kernel_index(K, bar, &st, 1), &t, &E)))
		fail_msg("tma: %s", E.msg);
	assert_int_equal(t.swizzle, 128);
	assert_int_equal(t.nbox, 4);
	assert_int_equal(t.box[0], 64);
	assert_int_equal(t.box[1], 64);
	assert_int_equal(u->nsrc, 5);
	for (j = 0; j < 4; j++) {
		const UOp *x = u->src[j + 1];
		UOp *o, *zero = I(0);

		assert_int_equal(x->op, OP_TMA_LOAD);
		assert_int_equal(x->arg[0], 128);
		o = kernel_offset(K, bs, (UOp *const *)x->src[0]->src + 1);
		o = kernel_substitute(K->c, o, &st, &zero, 1);
		assert_true(uop_simplify(K->c, o, &o, &E) == 0 && o->op == OP_CONST);
		assert_int_equal(o->arg[0] * 2, j * 8192);
	}
	/* rows of 72 elements with 64 used: no box */
	d = (KRegion){ ps, { I(0), I(0) }, { 64, 64 } };
	g = (KRegion){ ga, { I(0), I(0) }, { 64, 64 } };
	assert_int_equal(kernel_tma_plan(K, &d, &g, &t, &E), -1);
	if (!strstr(E.msg, "without swizzle: element (1,0) is at byte 144, TMA writes it at byte 128 (TMA writes a box densely"))
		fail_msg("%s", E.msg);
	/* a barrier that is not a shared uint64 */
	assert_null(kernel_mbar_init(K, kernel_index(K, ps, (UOp *[]){ I(0), I(0) }, 2), 1, &E));
	if (!strstr(E.msg, "an mbarrier is an element of a shared uint64 buffer"))
		fail_msg("%s", E.msg);
}

/* ---- atomics and fences ---- */

/* h[x[i] % 8] += 1 by an atomic add from 5 blocks of 48 threads: exact counts, no race */
static void
test_atomic_histogram(void **state)
{
	int x = mkbuf("x", DT_INT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)240);
	int h = mkbuf("h", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)8);
	int t = mkbuf("t", DT_INT32, AS_GLOBAL, KB_TEMP, 1, (int64_t)8);
	int m = mkbuf("m", DT_UINT32, AS_GLOBAL, KB_TEMP, 1, (int64_t)1);
	int f = mkbuf("f", DT_FLOAT32, AS_GLOBAL, KB_TEMP, 1, (int64_t)1);
	int o = mkbuf("o", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)2);
	UOp *b = var("b", 5), *i = var("i", 48), *b2 = var("b", 5), *i2 = var("i", 48), *g, *xv;
	double vx[240];
	int want[8] = { 0 }, k, mx = 0;
	TBuf bufs[6] = { 0 };
	KCounts cnt;
	KRunOpts opt = { .checks = 1, .counts = 1 };

	for (k = 0; k < 240; k++) {
		vx[k] = (k * 37 + 11) % 101;
		want[(int)vx[k] % 8]++;
		mx = (int)vx[k] > mx ? (int)vx[k] : mx;
	}
	xv = ld(at(x, 1, add(mul(b, I(48)), i)));
	stage("hist", loop(b, HW_BLOCK_X, 1, loop(i, HW_THREAD_X, 3,
	      ok(kernel_atomic(K, KA_ADD, at(t, 1, uop_mod(K->c, kernel_cast(K, DT_INDEX, xv), I(8))),
	                       fc(DT_INT32, 1), NULL, &E)),
	      ok(kernel_atomic(K, KA_MAX, at(m, 1, I(0)), kernel_cast(K, DT_UINT32, xv), NULL, &E)),
	      ok(kernel_atomic(K, KA_ADD, at(f, 1, I(0)), fc(DT_FLOAT32, 0.5), NULL, &E)))));
	/* the next launch: block 0 reads them (launches are ordered) */
	g = alu(OP_CMPEQ, DT_BOOL, b2, I(0));
	stage("out", loop(b2, HW_BLOCK_X, 1, loop(i2, HW_THREAD_X, 1, when(g, 3,
	      when(alu(OP_CMPLT, DT_BOOL, i2, I(8)), 1, st(at(h, 1, i2), ld(at(t, 1, i2)))),
	      when(alu(OP_CMPEQ, DT_BOOL, i2, I(0)), 1, st(at(o, 1, I(0)), kernel_cast(K, DT_FLOAT32, ld(at(m, 1, I(0)))))),
	      when(alu(OP_CMPEQ, DT_BOOL, i2, I(1)), 1, st(at(o, 1, I(1)), ld(at(f, 1, I(0)))))))));
	if (kernel_check(K, NULL, &E) < 0)
		fail_msg("check: %s", E.msg);
	input(&bufs[x], x, vx);
	run_ok(bufs, &opt, &cnt);
	for (k = 0; k < 8; k++)
		assert_int_equal(((int32_t *)bufs[h].data)[k], want[k]);
	assert_true(getf(&bufs[o], 0) == (float)mx);
	assert_true(getf(&bufs[o], 1) == 120.0f);
	assert_int_equal(cnt.atomics, 3 * 240);
	freebufs(bufs, 6);
}

/*
** The last block of 4 sums the blocks' partials: each block writes p[b],
** a barrier, thread 0 fences, counts with an atomic add (the old value to
** a register), fences again, hands the count over in shared memory; the
** block that counted 3 reads every p and resets the count with an exch.
** mode 0: as written (no race); 1: no fence before the count; 2: no fence
** after it; 3: the count reset with a plain store (a race with the other
** blocks' atomics: the acquire orders what they did before their fences).
*/
static void
last_block(int mode)
{
	int x = mkbuf("x", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)128);
	int y = mkbuf("y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)1);
	int p = mkbuf("p", DT_FLOAT32, AS_GLOBAL, KB_TEMP, 1, (int64_t)4);
	int cnt = mkbuf("cnt", DT_INT32, AS_GLOBAL, KB_TEMP, 1, (int64_t)1);
	int last = mkbuf("last", DT_INT32, AS_LOCAL, KB_TEMP, 1, (int64_t)1);
	int s = mkbuf("s", DT_FLOAT32, AS_LOCAL, KB_TEMP, 1, (int64_t)32);
	int old = mkbuf("old", DT_INT32, AS_REG, KB_TEMP, 1, (int64_t)1);
	int acc = mkbuf("acc", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)1);
	UOp *b = var("b", 4), *t = var("t", 32), *j = var("j", 32), *u = var("u", 4);
	UOp *t0 = alu(OP_CMPEQ, DT_BOOL, t, I(0)), *sum, *count, *tail[8];
	double vx[128];
	TBuf bufs[8] = { 0 };
	int k, n = 0;

	for (k = 0; k < 128; k++)
		vx[k] = k + 1;
	count = ok(kernel_atomic(K, KA_ADD, at(cnt, 1, I(0)), fc(DT_INT32, 1), at(old, 1, I(0)), &E));
	if (mode != 1)
		tail[n++] = kernel_fence(K, KF_GPU);
	tail[n++] = count;
	if (mode != 2)
		tail[n++] = kernel_fence(K, KF_GPU);
	tail[n++] = st(at(last, 1, I(0)), ld(at(old, 1, I(0))));
	sum = when(alu(OP_CMPEQ, DT_BOOL, ld(at(last, 1, I(0))), fc(DT_INT32, 3)), 1, when(t0, 4,
	      st(at(acc, 1, I(0)), fc(DT_FLOAT32, 0)),
	      loop(u, HW_NONE, 1, st(at(acc, 1, I(0)), alu(OP_ADD, DT_FLOAT32, ld(at(acc, 1, I(0))), ld(at(p, 1, u))))),
	      st(at(y, 1, I(0)), ld(at(acc, 1, I(0)))),
	      mode == 3 ? st(at(cnt, 1, I(0)), fc(DT_INT32, 0))
	                : ok(kernel_atomic(K, KA_EXCH, at(cnt, 1, I(0)), fc(DT_INT32, 0), NULL, &E))));
	stage("sum", loop(b, HW_BLOCK_X, 1, loop(t, HW_THREAD_X, 7,
	      st(at(s, 1, t), ld(at(x, 1, add(mul(b, I(32)), t)))),
	      kernel_barrier(K),
	      when(t0, 3, st(at(acc, 1, I(0)), fc(DT_FLOAT32, 0)),
	           loop(j, HW_NONE, 1, st(at(acc, 1, I(0)), alu(OP_ADD, DT_FLOAT32, ld(at(acc, 1, I(0))), ld(at(s, 1, j))))),
	           st(at(p, 1, b), ld(at(acc, 1, I(0))))),
	      kernel_barrier(K),
	      kernel_if(K, t0, tail, n),
	      kernel_barrier(K),
	      sum)));
	if (kernel_check(K, NULL, &E) < 0)
		fail_msg("check: %s", E.msg);
	input(&bufs[x], x, vx);
	if (mode == 0) {
		run_ok(bufs, NULL, NULL);
		assert_true(getf(&bufs[y], 0) == 128.0f * 129 / 2);
	} else {
		run_fail(bufs, NULL, "race:");
		/* the last block's read of block 0's partial, or its plain reset of the count */
		has(mode == 3 ? "cnt[0]" : "p[0]");
		has("in the same launch");
	}
	freebufs(bufs, 8);
}

static void test_atomic_last_block(void **state) { last_block(0); }
static void test_atomic_no_release(void **state) { last_block(1); }
static void test_atomic_no_acquire(void **state) { last_block(2); }
static void test_atomic_plain_count(void **state) { last_block(3); }

/* what kernel_atomic refuses, and the interpreter's printing of both statements */
static void
test_atomic_refusals(void **state)
{
	int g = mkbuf("g", DT_FLOAT32, AS_GLOBAL, KB_TEMP, 1, (int64_t)4);
	int r = mkbuf("r", DT_INT32, AS_REG, KB_TEMP, 1, (int64_t)1);
	int w = mkbuf("w", DT_INT64, AS_GLOBAL, KB_TEMP, 1, (int64_t)1);
	int c = mkbuf("c", DT_INT32, AS_GLOBAL, KB_TEMP, 1, (int64_t)1);
	Buf out;

	assert_null(kernel_atomic(K, KA_MAX, at(g, 1, I(0)), fc(DT_FLOAT32, 1), NULL, &E));
	has("float max");
	assert_null(kernel_atomic(K, KA_ADD, at(r, 1, I(0)), fc(DT_INT32, 1), NULL, &E));
	has("register buffer");
	assert_null(kernel_atomic(K, KA_ADD, at(w, 1, I(0)), fc(DT_INT64, 1), NULL, &E));
	has("int64");
	assert_null(kernel_atomic(K, KA_ADD, at(c, 1, I(0)), fc(DT_FLOAT32, 1), NULL, &E));
	has("the value is float32, c is int32");
	assert_null(kernel_atomic(K, KA_ADD, at(c, 1, I(0)), fc(DT_INT32, 1), at(g, 1, I(0)), &E));
	has("takes a register buffer of int32");
	/* an atomic on an output nothing wrote: uninitialized (only temporaries start at zero) */
	{
		int o = mkbuf("o", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)1);
		UOp *b = var("b", 2);
		TBuf bufs[5] = { 0 };

		stage("s", loop(b, HW_BLOCK_X, 2, kernel_fence(K, KF_BLOCK),
		      ok(kernel_atomic(K, KA_ADD, at(o, 1, I(0)), fc(DT_INT32, 1), at(r, 1, I(0)), &E))));
		buf_init(&out);
		kernel_print(&out, K, 0);
		if (!strstr(out.s, "r[0] = atomic_add(o[0], 1)") || !strstr(out.s, "fence_block()"))
			fail_msg("printed:\n%s", out.s);
		buf_free(&out);
		run_fail(bufs, NULL, "uninitialized:");
		has("atomic of o[0]");
		freebufs(bufs, 5);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_elementwise, setup, teardown),
		cmocka_unit_test_setup_teardown(test_row_reduce, setup, teardown),
		cmocka_unit_test_setup_teardown(test_softmax, setup, teardown),
		cmocka_unit_test_setup_teardown(test_matmul_tiled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_matmul_missing_barrier, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transpose_naive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transpose_padded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transpose_swizzled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swizzle_viz, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transpose_no_barrier, setup, teardown),
		cmocka_unit_test_setup_teardown(test_race_missing_barrier, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shift_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_race_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_bounds_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uninitialized_tile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uninitialized_global, setup, teardown),
		cmocka_unit_test_setup_teardown(test_barrier_divergence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_warp_lane, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shuffle_butterfly, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shuffle_down, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shuffle_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mma_m16n8k16, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ldmatrix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cp_async, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cp_async_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mma_quadpair, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mma_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dtypes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dtype_facts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_index_div_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_programs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layouts_io, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inputs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wgmma_desc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wgmma_rs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tma_plan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_histogram, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_last_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_no_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_no_acquire, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_plain_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_refusals, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

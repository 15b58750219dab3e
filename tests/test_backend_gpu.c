/* test_backend_gpu.c - the CUDA and OpenCL backends: golden sources, nvcc compiles (with resource usage), PoCL runs against the interpreter, refusals, exports built and run by make. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../backends/backend.h"
#include "../interp/sched/sched.h"
#include "../layout/layout.h"
#include "kernel_test.h"

extern char **environ;

static BClSession *Cl;     /* one OpenCL session for the driver */

/* ---- building (and kernel_test.h) ---- */

static void
layout(int b, const char *notation)
{
	Layout l;

	if (cute_parse(notation, &l, &E) < 0 || kernel_layout_cute(K, b, &l, NULL, &E) < 0)
		fail_msg("layout %s: %s", notation, E.msg);
}

/* softmax as lua_tensor.c builds it: e / e.sum with e = exp(x - x.max) */
static Kernel *
softmax_kernel(void)
{
	int64_t axes[1] = { 1 };
	UOp *a = param("x", 0, 4, 8), *m, *x, *s, *sum;
	KLowerOpts o = { "out" };
	Kernel *k;

	m = ok(tensor_reduce(C, OP_MAX, a, axes, 1, 1, &E));
	x = ok(tensor_alu(C, OP_SUB, a, m, &E));
	x = ok(tensor_alu(C, OP_MUL, x, uop_constf(C, DT_FLOAT32, 1.4426950408889634), &E));
	s = ok(tensor_unary(C, OP_EXP2, x, &E));
	sum = ok(tensor_reduce(C, OP_ADD, s, axes, 1, 1, &E));
	sum = ok(tensor_unary(C, OP_RECIP, sum, &E));
	if (!(k = kernel_lower(ok(tensor_alu(C, OP_MUL, s, sum, &E)), &o, &E)))
		fail_msg("kernel_lower: %s", E.msg);
	return k;
}

/* a:matmul(b) as lua_tensor.c builds it, lowered into stage `name` */
static Kernel *
matmul_kernel(const char *name, int64_t n)
{
	int64_t sa[3] = { n, n, 1 }, sb[3] = { 1, n, n }, ax[1] = { 1 };
	UOp *a = param("a", 0, n, n), *b = param("b", 1, n, n), *x;
	KLowerOpts o = { name };
	Kernel *k;

	a = ok(tensor_reshape(C, a, sa, 3, &E));
	b = ok(tensor_reshape(C, b, sb, 3, &E));
	x = ok(tensor_alu(C, OP_MUL, a, b, &E));
	if (!(k = kernel_lower(ok(tensor_reduce(C, OP_ADD, x, ax, 1, 0, &E)), &o, &E)))
		fail_msg("kernel_lower: %s", E.msg);
	return k;
}

static Kernel *
scheduled(Schedule *s, Kernel *k)
{
	Kernel *r;

	if (!(r = kernel_clone(s->k, &E)))
		fail_msg("clone: %s", E.msg);
	sched_free(s);
	kernel_free(k);
	return r;
}

/* tiled by 16 x 16, bound to 4 x 4 blocks of 16 x 16 threads (scripts/gemm_schedule.lua) */
static Kernel *
matmul_tiled(void)
{
	Kernel *k = matmul_kernel("c", 64);
	Schedule *s = sched_new(k, NULL, &E);

	if (!s || sched_tile(s, "c", "i", "j", 16, 16, &E) < 0 || sched_bind(s, "c", "i0", "blockIdx.y", &E) < 0
	|| sched_bind(s, "c", "j0", "blockIdx.x", &E) < 0 || sched_bind(s, "c", "i1", "threadIdx.y", &E) < 0
	|| sched_bind(s, "c", "j1", "threadIdx.x", &E) < 0)
		fail_msg("schedule: %s", E.msg);
	return scheduled(s, k);
}

/* TVM's classic schedule: shared tiles of a and b per step of k, barriers around them */
static Kernel *
matmul_shared(void)
{
	static const char *const order[3] = { "k0", "i1", "j1" };
	int64_t f[2] = { 0, 16 };
	Kernel *k = matmul_kernel("out", 64);
	Schedule *s = sched_new(k, NULL, &E);

	if (!s || sched_cache_read(s, "out", "a", "shared", &E) < 0 || sched_cache_read(s, "out", "b", "shared", &E) < 0
	|| sched_decompose_reduction(s, "out", "k", &E) < 0 || sched_tile(s, "out", "i", "j", 16, 16, &E) < 0
	|| sched_split(s, "out", "k", f, 2, &E) < 0 || sched_reorder(s, "out", order, 3, &E) < 0
	|| sched_bind(s, "out", "i0", "blockIdx.y", &E) < 0 || sched_bind(s, "out", "j0", "blockIdx.x", &E) < 0
	|| sched_bind(s, "out", "i1", "threadIdx.y", &E) < 0 || sched_bind(s, "out", "j1", "threadIdx.x", &E) < 0
	|| sched_compute_at(s, "a_shared", "out", "k0", &E) < 0 || sched_compute_at(s, "b_shared", "out", "k0", &E) < 0)
		fail_msg("schedule: %s", E.msg);
	return scheduled(s, k);
}

/* kernel.new{grid = {2, 2}, block = {32, 32}}: a transpose through a padded shared tile */
static void
transpose(void)
{
	int a = mkbuf("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)64, (int64_t)64);
	int b = mkbuf("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)64, (int64_t)64);
	int t = mkbuf("tile", DT_FLOAT32, AS_LOCAL, KB_TEMP, 2, (int64_t)32, (int64_t)32);
	UOp *bx = kernel_var(K, "bx", 2), *by = kernel_var(K, "by", 2), *tx = kernel_var(K, "tx", 32);
	UOp *ty = kernel_var(K, "ty", 32);

	layout(t, "(32,32):(33,1)");
	stage("transpose", loop(bx, HW_BLOCK_X, 1, loop(by, HW_BLOCK_Y, 1, loop(tx, HW_THREAD_X, 1,
	      loop(ty, HW_THREAD_Y, 3,
	           st(at(t, 2, ty, tx), ld(at(a, 2, add(mul(by, I(32)), ty), add(mul(bx, I(32)), tx)))),
	           kernel_barrier(K),
	           st(at(b, 2, add(mul(bx, I(32)), ty), add(mul(by, I(32)), tx)), ld(at(t, 2, tx, ty))))))));
}

static KRegion
region(int b, int n, ...)
{
	KRegion r;
	va_list ap;
	int i;

	memset(&r, 0, sizeof r);
	r.buf = b;
	va_start(ap, n);
	for (i = 0; i < n; i++) {
		r.begin[i] = va_arg(ap, UOp *);
		r.extent[i] = va_arg(ap, int64_t);
	}
	va_end(ap);
	return r;
}

/* kernel.new{block = {64}}: each warp sums a row of 100 by kernel.reduce at warp scope (shuffles) */
static void
warp_reduce(int64_t threads)
{
	int x = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (threads + 31) / 32, (int64_t)100);
	int s = mkbuf("S", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (threads + 31) / 32);
	UOp *tx = kernel_var(K, "tx", threads), *th[3] = { tx }, *bl[3] = { NULL }, *warp, *r;
	KScope sc;
	KDispatch d;
	KRegion rs, rx;

	if (kernel_scope(K, KS_WARP, th, bl, 0, 0, &sc, &E) < 0)
		fail_msg("scope: %s", E.msg);
	warp = uop_idiv(K->c, tx, I(32));
	rs = region(s, 1, warp, (int64_t)1);
	rx = region(x, 2, warp, (int64_t)1, I(0), (int64_t)100);
	r = ok(kernel_op_reduce(K, &sc, OP_ADD, &rs, &rx, NULL, &d, &E));
	assert_string_equal(d.impl, "shuffle");
	stage("rowsum", loop(tx, HW_THREAD_X, 1, r));
}

/* kernel.new{block = {128}}: C = 0, a barrier, C += A B by kernel.gemm (the m16n8k16 atom) */
static void
mma_gemm(void)
{
	int a = mkbuf("A", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 2, (int64_t)32, (int64_t)32);
	int b = mkbuf("B", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 2, (int64_t)32, (int64_t)16);
	int c = mkbuf("C", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)32, (int64_t)16);
	UOp *tx = kernel_var(K, "tx", 128), *th[3] = { tx }, *bl[3] = { NULL }, *fill, *gemm;
	KScope sc;
	KDispatch d;
	KRegion rc, ra, rb;

	if (kernel_scope(K, KS_CTA, th, bl, 0, 0, &sc, &E) < 0)
		fail_msg("scope: %s", E.msg);
	rc = region(c, 2, I(0), (int64_t)32, I(0), (int64_t)16);
	ra = region(a, 2, I(0), (int64_t)32, I(0), (int64_t)32);
	rb = region(b, 2, I(0), (int64_t)32, I(0), (int64_t)16);
	fill = ok(kernel_op_fill(K, &sc, &rc, fc(DT_FLOAT32, 0), NULL, &d, &E));
	gemm = ok(kernel_op_gemm(K, &sc, &rc, &ra, &rb, NULL, &d, &E));
	assert_string_equal(d.impl, "mma");
	stage("mm", loop(tx, HW_THREAD_X, 1, seq(3, fill, kernel_barrier(K), gemm)));
}

/* collectives at cta scope: a vector copy into shared memory, rows and a tree reduce (barriers in steps) */
static void
collectives(void)
{
	int x = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)64, (int64_t)256);
	int s = mkbuf("S", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
	int m = mkbuf("M", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)4);
	int sh = mkbuf("buf", DT_FLOAT32, AS_LOCAL, KB_TEMP, 2, (int64_t)16, (int64_t)256);
	UOp *bx = kernel_var(K, "bx", 4), *tx = kernel_var(K, "tx", 128), *th[3] = { tx }, *bl[3] = { bx }, *ops[4];
	KScope sc;
	KDispatch d;
	KRegion rsh, rx, rs, rm;

	if (kernel_scope(K, KS_CTA, th, bl, 0, 0, &sc, &E) < 0)
		fail_msg("scope: %s", E.msg);
	rsh = region(sh, 2, I(0), (int64_t)16, I(0), (int64_t)256);
	rx = region(x, 2, mul(bx, I(16)), (int64_t)16, I(0), (int64_t)256);
	rs = region(s, 1, mul(bx, I(16)), (int64_t)16);
	rm = region(m, 1, bx, (int64_t)1);
	ops[0] = ok(kernel_op_copy(K, &sc, &rsh, &rx, NULL, &d, &E));
	ops[1] = kernel_barrier(K);
	ops[2] = ok(kernel_op_reduce(K, &sc, OP_ADD, &rs, &rsh, NULL, &d, &E));
	ops[3] = ok(kernel_op_reduce(K, &sc, OP_MAX, &rm, &rsh, NULL, &d, &E));
	assert_string_equal(d.impl, "tree");
	stage("rows", loop(bx, HW_BLOCK_X, 1, loop(tx, HW_THREAD_X, 1, kernel_if(K, kernel_const(K, DT_BOOL, 1), ops, 4))));
}

/*
** Guards and layouts: a column-major input, thread loops shorter than the
** block (48 and 16 of 64) that share a variable, a barrier between them,
** exp2 and max on floats, floor division and modulo of negative integers.
*/
static void
guards(void)
{
	int x = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)3, (int64_t)64);
	int y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)3, (int64_t)64);
	int n = mkbuf("N", DT_INT64, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)3, (int64_t)64);
	int t = mkbuf("T", DT_FLOAT32, AS_LOCAL, KB_TEMP, 1, (int64_t)64);
	UOp *bx = kernel_var(K, "bx", 3), *tt = kernel_var(K, "t", 64), *i = kernel_var(K, "i", 48);
	UOp *i2 = kernel_var(K, "i", 16), *v;

	layout(x, "(3,64):(1,3)");
	v = alu(OP_SUB, DT_INT64, kernel_cast(K, DT_INT64, tt), uop_const(K->c, DT_INT64, 40));
	stage("g", loop(bx, HW_BLOCK_X, 4,
	      loop(tt, HW_THREAD_X, 2, st(at(t, 1, tt), alu(OP_MUL, DT_FLOAT32, ld(at(x, 2, bx, tt)), fc(DT_FLOAT32, 2))),
	           st(at(n, 2, bx, tt), alu(OP_ADD, DT_INT64, alu(OP_IDIV, DT_INT64, v, uop_const(K->c, DT_INT64, 3)),
	                                    alu(OP_MOD, DT_INT64, v, uop_const(K->c, DT_INT64, 7))))),
	      kernel_barrier(K),
	      loop(i, HW_THREAD_X, 1, st(at(y, 2, bx, i), alu(OP_ADD, DT_FLOAT32, ld(at(t, 1, uop_sub(K->c, I(63), i))),
	                                                     ld(at(t, 1, i))))),
	      loop(i2, HW_THREAD_X, 1, st(at(y, 2, bx, add(i2, I(48))),
	           alu(OP_SUB, DT_FLOAT32, alu(OP_MAX, DT_FLOAT32, ld(at(t, 1, i2)), ld(at(t, 1, add(i2, I(48))))),
	               alu(OP_EXP2, DT_FLOAT32, ld(at(t, 1, i2)), NULL))))));
}

/* float16 and bfloat16 arithmetic: each op rounds once to its dtype, as the interpreter's */
static void
halves(void)
{
	int a = mkbuf("A", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
	int b = mkbuf("B", DT_BFLOAT16, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
	int h = mkbuf("H", DT_FLOAT16, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
	int f = mkbuf("F", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
	UOp *tx = kernel_var(K, "tx", 64), *x = ld(at(a, 1, tx));
	UOp *y = kernel_cast(K, DT_FLOAT16, ld(at(b, 1, tx)));

	stage("h", loop(tx, HW_THREAD_X, 2,
	      st(at(h, 1, tx), alu(OP_ADD, DT_FLOAT16, alu(OP_MUL, DT_FLOAT16, x, y), fc(DT_FLOAT16, 0.1))),
	      st(at(f, 1, tx), kernel_cast(K, DT_FLOAT32, alu(OP_EXP2, DT_BFLOAT16, ld(at(b, 1, tx)), NULL)))));
}

/* one MMA of `atom` on registers filled from global tiles by its TV layouts (kernel.mma by hand) */
static void
mma_atom(const char *atom)
{
	MmaAtom at_;
	DType ta, tc, td;
	Layout m;
	int64_t nv[4];
	int A, B, Cb, D, ra, rb, rc, rd, i;
	UOp *lane = kernel_var(K, "lane", 32), *va, *vb, *vc, *vd, *mm;

	assert_int_equal(cute_mma_atom(atom, &at_, &E), 0);
	ta = strstr(atom, "BF16") ? DT_BFLOAT16 : strstr(atom, "TF32") ? DT_FLOAT32 : DT_FLOAT16;
	tc = strstr(atom, "_F32") ? DT_FLOAT32 : DT_FLOAT16;
	td = tc;
	for (i = 0; i < 4; i++) {
		assert_int_equal(cute_mode(i == 1 ? &at_.a : i == 2 ? &at_.b : &at_.c, 1, &m, &E), 0);
		nv[i] = cute_size(&m);
	}
	A = mkbuf("A", ta, AS_GLOBAL, KB_INPUT, 1, (int64_t)(at_.m * at_.k));
	B = mkbuf("B", ta, AS_GLOBAL, KB_INPUT, 1, (int64_t)(at_.n * at_.k));
	Cb = mkbuf("C", tc, AS_GLOBAL, KB_INPUT, 1, (int64_t)(at_.m * at_.n));
	D = mkbuf("D", td, AS_GLOBAL, KB_OUTPUT, 1, 32 * nv[0]);
	ra = mkbuf("a_r", ta, AS_REG, KB_TEMP, 1, nv[1]);
	rb = mkbuf("b_r", ta, AS_REG, KB_TEMP, 1, nv[2]);
	rc = mkbuf("c_r", tc, AS_REG, KB_TEMP, 1, nv[3]);
	rd = mkbuf("d_r", td, AS_REG, KB_TEMP, 1, nv[0]);
	va = kernel_var(K, "va", nv[1]);
	vb = kernel_var(K, "vb", nv[2]);
	vc = kernel_var(K, "vc", nv[3]);
	vd = kernel_var(K, "vd", nv[0]);
	if (!(mm = kernel_mma(K, atom, rd, ra, rb, rc, &E)))
		fail_msg("kernel_mma %s: %s", atom, E.msg);
	/* registers from the tiles (any element: the test compiles; the interpreter's tests check values) */
	stage("mma", loop(lane, HW_THREAD_X, 5,
	      loop(va, HW_NONE, 1, st(at(ra, 1, va), ld(at(A, 1, uop_mod(K->c, add(lane, mul(va, I(32))), I(at_.m * at_.k)))))),
	      loop(vb, HW_NONE, 1, st(at(rb, 1, vb), ld(at(B, 1, uop_mod(K->c, add(lane, mul(vb, I(32))), I(at_.n * at_.k)))))),
	      loop(vc, HW_NONE, 1, st(at(rc, 1, vc), ld(at(Cb, 1, uop_mod(K->c, add(lane, mul(vc, I(32))), I(at_.m * at_.n)))))),
	      mm,
	      loop(vd, HW_NONE, 1, st(at(D, 1, add(mul(lane, I(nv[0])), vd)), ld(at(rd, 1, vd))))));
}

/* ---- sources ---- */

static char *
source(const Kernel *k, Dialect d)
{
	Buf b;

	buf_init(&b);
	if (backend_source(&b, k, d, &E) < 0)
		fail_msg("backend_source %s: %s", dialect_name(d), E.msg);
	return buf_take(&b);
}

static void
refused(const Kernel *k, Dialect d, const char *want)
{
	Buf b;

	buf_init(&b);
	if (backend_source(&b, k, d, &E) == 0)
		fail_msg("backend_source %s accepted a kernel it should refuse (%s):\n%s", dialect_name(d), want, b.s);
	buf_free(&b);
	if (!strstr(E.msg, want))
		fail_msg("\"%s\" is not in: %s", want, E.msg);
}

static void
has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("\"%s\" is not in:\n%s", want, text);
}

/* Compare with tests/golden/NAME, or write it when TESSEL_GOLDEN_UPDATE is set. */
static void
golden(const char *name, const char *got)
{
	char path[256], *want;
	FILE *f;
	long n;

	snprintf(path, sizeof path, "tests/golden/%s", name);
	if (getenv("TESSEL_GOLDEN_UPDATE")) {
		assert_non_null(f = fopen(path, "wb"));
		fputs(got, f);
		fclose(f);
		return;
	}
	if (!(f = fopen(path, "rb")))
		fail_msg("%s is missing (run with TESSEL_GOLDEN_UPDATE=1 to write it)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	assert_non_null(want = malloc((size_t)n + 1));
	assert_int_equal(fread(want, 1, (size_t)n, f), (size_t)n);
	want[n] = '\0';
	fclose(f);
	if (strcmp(want, got) != 0) {
		free(want);
		fail_msg("the emitted source differs from %s:\n%s", path, got);
	}
	free(want);
}

static void
golden_of(const Kernel *k, Dialect d, const char *name)
{
	char *s = source(k, d);

	golden(name, s);
	free(s);
}

/* ---- the examples, each an owned kernel ---- */

typedef struct Example {
	const char *name;
	Kernel *(*make)(void);
	const char *opencl;     /* NULL: OpenCL takes it; else what its refusal says */
} Example;

/*
** 16-byte loads: Y[b, 4t + e] = X[b, 4t + e] * W[4t + e] over an UPCAST loop e of 4 (runs of X and
** W, each one float4), then a sum over an UNROLL loop whose W run is not contiguous (modulo) and
** whose X run starts one element past a multiple of 4: scalar loads there.
*/
static void
vector_loads(void)
{
	int x = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)2, (int64_t)64);
	int w = mkbuf("W", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)68);
	int y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)2, (int64_t)64);
	int z = mkbuf("Z", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)2, (int64_t)16);
	UOp *bx = kernel_var(K, "bx", 2), *tx = kernel_var(K, "tx", 16), *e = kernel_var(K, "e", 4);
	UOp *f = kernel_var(K, "f", 4);
	UOp *col = uop_add(K->c, uop_mul(K->c, tx, I(4)), e), *colf = uop_add(K->c, uop_mul(K->c, tx, I(4)), f);
	UOp *st1 = ok(kernel_store(K, at(y, 2, bx, col), alu(OP_ADD, DT_FLOAT32, alu(OP_MUL, DT_FLOAT32,
	              ok(kernel_load(K, at(x, 2, bx, col), NULL)), ok(kernel_load(K, at(w, 1, col), NULL))),
	              ok(kernel_load(K, at(x, 2, bx, col), NULL))), NULL));
	UOp *shifted = uop_add(K->c, colf, I(1));
	UOp *st2 = ok(kernel_store(K, at(z, 2, bx, tx), alu(OP_ADD, DT_FLOAT32, ok(kernel_load(K, at(z, 2, bx, tx), NULL)),
	              alu(OP_MUL, DT_FLOAT32, ok(kernel_load(K, at(x, 2, bx, uop_mod(K->c, shifted, I(64))), NULL)),
	              ok(kernel_load(K, at(w, 1, shifted), NULL)))), NULL));
	UOp *l1 = kernel_loop(K, kernel_range(K, e, AX_UPCAST, HW_NONE), &st1, 1);
	UOp *l2 = kernel_loop(K, kernel_range(K, f, AX_UNROLL, HW_NONE), &st2, 1);
	UOp *init = ok(kernel_store(K, at(z, 2, bx, tx), kernel_const(K, DT_FLOAT32, 0), NULL));

	stage("v", loop(bx, HW_BLOCK_X, 1, loop(tx, HW_THREAD_X, 1, seq(3, l1, init, l2))));
}

/*
** 16-byte copies: a float16 tile global -> swizzled shared (Sw<3,3,3>: the 16-byte chunk XOR the
** row mod 8) -> global, by kernel_op_copy at cta scope (vector8 on both sides); each copy's
** 8-iteration loop is one uint4 move. The A tile's start is bx*16 rows: the shared side's run
** starts at (it*1024 + tx*8) ^ mask, which the emitter proves a multiple of 8.
*/
static void
vector_copies(void)
{
	int a = mkbuf("A", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 2, (int64_t)64, (int64_t)64);
	int b = mkbuf("B", DT_FLOAT16, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)64, (int64_t)64);
	int sh = mkbuf("S", DT_FLOAT16, AS_LOCAL, KB_TEMP, 2, (int64_t)16, (int64_t)64);
	UOp *bx = kernel_var(K, "bx", 4), *tx = kernel_var(K, "tx", 64), *th[3] = { tx }, *bl[3] = { bx }, *ops[3];
	KScope sc;
	KDispatch d;
	KRegion rs, ra, rb;
	Composed cl;

	if (composed_parse("Sw<3,3,3> o 0 o (16,64):(64,1)", &cl, &E) < 0 || kernel_layout_cute(K, sh, NULL, &cl, &E) < 0)
		fail_msg("swizzle: %s", E.msg);
	if (kernel_scope(K, KS_CTA, th, bl, 0, 0, &sc, &E) < 0)
		fail_msg("scope: %s", E.msg);
	rs = region(sh, 2, I(0), (int64_t)16, I(0), (int64_t)64);
	ra = region(a, 2, mul(bx, I(16)), (int64_t)16, I(0), (int64_t)64);
	rb = region(b, 2, mul(bx, I(16)), (int64_t)16, I(0), (int64_t)64);
	ops[0] = ok(kernel_op_copy(K, &sc, &rs, &ra, NULL, &d, &E));
	assert_string_equal(d.impl, "vector8");
	ops[1] = kernel_barrier(K);
	ops[2] = ok(kernel_op_copy(K, &sc, &rb, &rs, NULL, &d, &E));
	assert_string_equal(d.impl, "vector8");
	stage("vc", loop(bx, HW_BLOCK_X, 1, loop(tx, HW_THREAD_X, 1, kernel_if(K, kernel_const(K, DT_BOOL, 1), ops, 3))));
}

/*
** Register pairs to global memory (the wgmma GEMM's epilogue): thread tx converts two floats
** into h (float16, __align__(4)) and copies h to C[tx*2:+2] as one 4-byte move. Four halves of
** q to D[tx*4:+4] are a vector4 by the dispatch, but a 16-bit register array is aligned to 4
** bytes only, so the emitter keeps those 2-byte stores.
*/
static void
register_pairs(void)
{
	int c = mkbuf("C", DT_FLOAT16, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
	int d = mkbuf("D", DT_FLOAT16, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)128);
	int h = mkbuf("h", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)2);
	int q = mkbuf("q", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)4);
	UOp *tx = kernel_var(K, "tx", 32), *th[3] = { tx }, *bl[3] = { NULL }, *ops[8], *x;
	KScope sc;
	KDispatch dd;
	KRegion rc, rh, rd, rq;
	int i;

	if (kernel_scope(K, KS_THREAD, th, bl, 0, 0, &sc, &E) < 0)
		fail_msg("scope: %s", E.msg);
	x = alu(OP_CAST, DT_FLOAT16, tx, NULL);
	for (i = 0; i < 2; i++)
		ops[i] = st(at(h, 1, I(i)), alu(OP_ADD, DT_FLOAT16, x, fc(DT_FLOAT16, 0.5 * i)));
	for (i = 0; i < 4; i++)
		ops[2 + i] = st(at(q, 1, I(i)), alu(OP_ADD, DT_FLOAT16, x, fc(DT_FLOAT16, 0.25 * i)));
	rc = region(c, 1, mul(tx, I(2)), (int64_t)2);
	rh = region(h, 1, I(0), (int64_t)2);
	rd = region(d, 1, mul(tx, I(4)), (int64_t)4);
	rq = region(q, 1, I(0), (int64_t)4);
	ops[6] = ok(kernel_op_copy(K, &sc, &rc, &rh, NULL, &dd, &E));
	assert_string_equal(dd.impl, "vector2");
	ops[7] = ok(kernel_op_copy(K, &sc, &rd, &rq, NULL, &dd, &E));
	assert_string_equal(dd.impl, "vector4");
	stage("rp", loop(tx, HW_THREAD_X, 1, seq(8, ops[0], ops[1], ops[2], ops[3], ops[4], ops[5], ops[6], ops[7])));
}

/*
** ldmatrix into an MMA: a 16x16 float16 tile of A and a k-major 16x8 tile of B staged in a
** swizzled shared buffer (Sw<1,3,3>: the 8 rows of each matrix in distinct banks) by 16-byte
** copies, then an x4 of A and an x2.trans of B into the m16n8k16 fragments, one MMA, D out.
*/
static void
ldsm_mma(void)
{
	int a = mkbuf("A", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 2, (int64_t)16, (int64_t)16);
	int b = mkbuf("B", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 2, (int64_t)16, (int64_t)8);
	int d = mkbuf("D", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)32, (int64_t)4);
	int sa = mkbuf("SA", DT_FLOAT16, AS_LOCAL, KB_TEMP, 2, (int64_t)16, (int64_t)16);
	int sb = mkbuf("SB", DT_FLOAT16, AS_LOCAL, KB_TEMP, 2, (int64_t)16, (int64_t)8);
	int ar = mkbuf("a_r", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)8);
	int br = mkbuf("b_r", DT_FLOAT16, AS_REG, KB_TEMP, 1, (int64_t)4);
	int cr = mkbuf("c_r", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)4);
	UOp *lane = kernel_var(K, "lane", 32), *th[3] = { lane }, *v = kernel_var(K, "v", 4), *w = kernel_var(K, "w", 4);
	UOp *ops[8], *row;
	KScope sc;
	KDispatch dd;
	KRegion rsa, ra, rsb, rb;
	Composed cl;

	if (composed_parse("Sw<1,3,3> o 0 o (16,16):(16,1)", &cl, &E) < 0 || kernel_layout_cute(K, sa, NULL, &cl, &E) < 0)
		fail_msg("swizzle: %s", E.msg);
	if (kernel_scope(K, KS_WARP, th, NULL, 0, 0, &sc, &E) < 0)
		fail_msg("scope: %s", E.msg);
	rsa = region(sa, 2, I(0), (int64_t)16, I(0), (int64_t)16);
	ra = region(a, 2, I(0), (int64_t)16, I(0), (int64_t)16);
	rsb = region(sb, 2, I(0), (int64_t)16, I(0), (int64_t)8);
	rb = region(b, 2, I(0), (int64_t)16, I(0), (int64_t)8);
	ops[0] = ok(kernel_op_copy(K, &sc, &rsa, &ra, NULL, &dd, &E));
	ops[1] = ok(kernel_op_copy(K, &sc, &rsb, &rb, NULL, &dd, &E));
	ops[2] = kernel_barrier(K);
	row = add(uop_mod(K->c, lane, I(8)), mul(uop_mod(K->c, uop_idiv(K->c, lane, I(8)), I(2)), I(8)));
	ops[3] = ok(kernel_ldmatrix(K, ar, at(sa, 2, row, mul(uop_idiv(K->c, lane, I(16)), I(8))), 4, 0, &E));
	ops[4] = ok(kernel_ldmatrix(K, br, at(sb, 2, uop_mod(K->c, lane, I(16)), I(0)), 2, 1, &E));
	ops[5] = loop(v, HW_NONE, 1, st(at(cr, 1, v), fc(DT_FLOAT32, 0)));
	ops[6] = ok(kernel_mma(K, "SM80_16x8x16_F32F16F16F32_TN", cr, ar, br, cr, &E));
	ops[7] = loop(w, HW_NONE, 1, st(at(d, 2, lane, w), ld(at(cr, 1, w))));
	stage("lm", loop(lane, HW_THREAD_X, 1, kernel_if(K, kernel_const(K, DT_BOOL, 1), ops, 8)));
}

/*
** wgmma: a 64x64x64 product over one warpgroup, A (K-major) and B (MN-major) staged by 16-byte
** copies in 128-byte swizzled shared tiles, four m64n64k16 wgmmas, D out by CUTLASS's C layout.
*/
/* the wgmma example's variations: its block size, a guard tx < wg_guard around the warpgroup's
** statements (0: none) and a setmaxnreg in the guard (0: none); the copies at cta scope then */
static int64_t wg_threads = 128, wg_guard, wg_regs;

static void
wgmma_gemm(void)
{
	int a = mkbuf("A", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 2, (int64_t)64, (int64_t)64);
	int b = mkbuf("B", DT_FLOAT16, AS_GLOBAL, KB_INPUT, 2, (int64_t)64, (int64_t)64);
	int o = mkbuf("O", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)64, (int64_t)64);
	int sa = mkbuf("As", DT_FLOAT16, AS_LOCAL, KB_TEMP, 2, (int64_t)64, (int64_t)64);
	int sb = mkbuf("Bs", DT_FLOAT16, AS_LOCAL, KB_TEMP, 2, (int64_t)64, (int64_t)64);
	int c = mkbuf("c", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)32);
	UOp *tx = kernel_var(K, "tx", wg_threads), *th[3] = { tx }, *v = kernel_var(K, "v", 32), *kk = kernel_var(K, "kk", 4);
	UOp *u = kernel_var(K, "u", 32), *ops[9], *w = uop_idiv(K->c, tx, I(32)), *l = uop_mod(K->c, tx, I(32)), *row, *col;
	KScope sc;
	KDispatch dd;
	KRegion rsa, ra, rsb, rb, ta, tb;
	Composed cl;

	if (composed_parse("Sw<3,3,3> o 0 o (64,64):(64,1)", &cl, &E) < 0 || kernel_layout_cute(K, sa, NULL, &cl, &E) < 0
	|| kernel_layout_cute(K, sb, NULL, &cl, &E) < 0)
		fail_msg("swizzle: %s", E.msg);
	if (kernel_scope(K, wg_guard ? KS_CTA : KS_WARPGROUP, th, NULL, 0, 0, &sc, &E) < 0)
		fail_msg("scope: %s", E.msg);
	rsa = region(sa, 2, I(0), (int64_t)64, I(0), (int64_t)64);
	ra = region(a, 2, I(0), (int64_t)64, I(0), (int64_t)64);
	rsb = region(sb, 2, I(0), (int64_t)64, I(0), (int64_t)64);
	rb = region(b, 2, I(0), (int64_t)64, I(0), (int64_t)64);
	ta = region(sa, 2, I(0), (int64_t)64, mul(kk, I(16)), (int64_t)16);
	tb = region(sb, 2, mul(kk, I(16)), (int64_t)16, I(0), (int64_t)64);
	ops[0] = ok(kernel_op_copy(K, &sc, &rsa, &ra, NULL, &dd, &E));
	ops[1] = ok(kernel_op_copy(K, &sc, &rsb, &rb, NULL, &dd, &E));
	ops[2] = loop(v, HW_NONE, 1, st(at(c, 1, v), fc(DT_FLOAT32, 0)));
	ops[3] = kernel_barrier(K);
	ops[4] = kernel_wg_fence(K);
	ops[5] = loop(kk, HW_NONE, 1, ok(kernel_wgmma(K, c, &ta, &tb, &E)));
	ops[6] = kernel_wg_commit(K);
	ops[7] = ok(kernel_wg_wait(K, 0, &E));
	row = add(add(mul(w, I(16)), uop_idiv(K->c, l, I(4))), mul(uop_mod(K->c, uop_idiv(K->c, u, I(2)), I(2)), I(8)));
	col = add(add(mul(uop_idiv(K->c, u, I(4)), I(8)), mul(uop_mod(K->c, l, I(4)), I(2))), uop_mod(K->c, u, I(2)));
	ops[8] = loop(u, HW_NONE, 1, st(at(o, 2, row, col), ld(at(c, 1, u))));
	if (wg_guard) {
		/* the warpgroup's part under tx < wg_guard, a setmaxnreg first */
		UOp *g[7], *lt = kernel_alu(K, OP_CMPLT, DT_BOOL, (UOp *[]){ tx, I(wg_guard) }, 2);
		int n = 0, i;

		if (wg_regs)
			g[n++] = ok(kernel_setmaxnreg(K, (int)wg_regs, 1, &E));
		for (i = 4; i < 9; i++)
			g[n++] = ops[i];
		ops[4] = kernel_if(K, lt, g, n);
		stage("wg", loop(tx, HW_THREAD_X, 1, kernel_if(K, kernel_const(K, DT_BOOL, 1), ops, 5)));
		return;
	}
	stage("wg", loop(tx, HW_THREAD_X, 1, kernel_if(K, kernel_const(K, DT_BOOL, 1), ops, 9)));
}

/*
** cp.async in two stages: each of 4 blocks of 64 threads issues its 16x64 float32 rows of X into
** one of two shared tiles (cp_async, 16 bytes a copy) as a group, then both groups are waited for
** in turn (wait_group 1: the first landed, the second in flight; wait_group 0), each followed by
** a barrier and a vector copy back to Y. barrier 0 (for C) leaves out the barriers: every thread
** reads back what it copied itself.
*/
static int cp_barriers = 1;

static void
cp_async2(void)
{
	int a = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)64, (int64_t)64);
	int b = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)64, (int64_t)64);
	int s0 = mkbuf("S0", DT_FLOAT32, AS_LOCAL, KB_TEMP, 2, (int64_t)8, (int64_t)64);
	int s1 = mkbuf("S1", DT_FLOAT32, AS_LOCAL, KB_TEMP, 2, (int64_t)8, (int64_t)64);
	UOp *bx = kernel_var(K, "bx", 4), *tx = kernel_var(K, "tx", 64), *th[3] = { tx }, *bl[3] = { bx }, *ops[10];
	KScope sc;
	KDispatch d;
	KRegion r0, r1, x0, x1, y0, y1;
	int n = 0;

	if (kernel_scope(K, KS_CTA, th, bl, 0, 0, &sc, &E) < 0)
		fail_msg("scope: %s", E.msg);
	r0 = region(s0, 2, I(0), (int64_t)8, I(0), (int64_t)64);
	r1 = region(s1, 2, I(0), (int64_t)8, I(0), (int64_t)64);
	x0 = region(a, 2, mul(bx, I(16)), (int64_t)8, I(0), (int64_t)64);
	x1 = region(a, 2, add(mul(bx, I(16)), I(8)), (int64_t)8, I(0), (int64_t)64);
	y0 = region(b, 2, mul(bx, I(16)), (int64_t)8, I(0), (int64_t)64);
	y1 = region(b, 2, add(mul(bx, I(16)), I(8)), (int64_t)8, I(0), (int64_t)64);
	ops[n++] = ok(kernel_op_copy(K, &sc, &r0, &x0, "cp_async", &d, &E));
	ops[n++] = kernel_cp_commit(K);
	ops[n++] = ok(kernel_op_copy(K, &sc, &r1, &x1, "cp_async", &d, &E));
	ops[n++] = kernel_cp_commit(K);
	ops[n++] = ok(kernel_cp_wait(K, 1, &E));
	if (cp_barriers)
		ops[n++] = kernel_barrier(K);
	ops[n++] = ok(kernel_op_copy(K, &sc, &y0, &r0, NULL, &d, &E));
	ops[n++] = ok(kernel_cp_wait(K, 0, &E));
	if (cp_barriers)
		ops[n++] = kernel_barrier(K);
	ops[n++] = ok(kernel_op_copy(K, &sc, &y1, &r1, NULL, &d, &E));
	stage("cpa", loop(bx, HW_BLOCK_X, 1, loop(tx, HW_THREAD_X, 1, kernel_if(K, kernel_const(K, DT_BOOL, 1), ops, n))));
}

/*
** TMA: two 32x32 float32 tiles of X into the two slots of S (row-major, so
** SWIZZLE_NONE, one box each), each completing on its mbarrier; thread 0
** initializes the barriers and issues, every thread waits and copies the
** slot into Y.
*/
static void
tma_pipe(void)
{
	int x = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)64, (int64_t)64);
	int y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)64, (int64_t)64);
	int sb = mkbuf("S", DT_FLOAT32, AS_LOCAL, KB_TEMP, 3, (int64_t)2, (int64_t)32, (int64_t)32);
	int bar = mkbuf("bar", DT_UINT64, AS_LOCAL, KB_TEMP, 1, (int64_t)2);
	UOp *bx = kernel_var(K, "bx", 2), *tx = kernel_var(K, "tx", 64), *kt = kernel_var(K, "kt", 2);
	UOp *j = kernel_var(K, "j", 16), *one = alu(OP_CMPLT, DT_BOOL, tx, I(1)), *init[2], *issue[2], *r, *c;
	KRegion dst, src;
	KTma t;

	init[0] = ok(kernel_mbar_init(K, at(bar, 1, I(0)), 1, &E));
	init[1] = ok(kernel_mbar_init(K, at(bar, 1, I(1)), 1, &E));
	dst = region(sb, 3, kt, (int64_t)1, I(0), (int64_t)32, I(0), (int64_t)32);
	src = region(x, 2, mul(bx, I(32)), (int64_t)32, mul(kt, I(32)), (int64_t)32);
	issue[0] = ok(kernel_mbar_arrive(K, at(bar, 1, kt), 4096, &E));
	issue[1] = ok(kernel_tma(K, &dst, &src, at(bar, 1, kt), &t, &E));
	assert_int_equal(t.swizzle, 0);
	assert_int_equal(t.nbox, 1);
	r = kernel_alu(K, OP_IDIV, DT_INDEX, (UOp *[]){ tx, I(2) }, 2);
	c = add(mul(kernel_alu(K, OP_MOD, DT_INDEX, (UOp *[]){ tx, I(2) }, 2), I(16)), j);
	stage("tma", loop(bx, HW_BLOCK_X, 1, loop(tx, HW_THREAD_X, 3,
	      kernel_if(K, one, init, 2),
	      kernel_barrier(K),
	      loop(kt, HW_NONE, 3,
	           kernel_if(K, one, issue, 2),
	           ok(kernel_mbar_wait(K, at(bar, 1, kt), I(0), &E)),
	           loop(j, HW_NONE, 1, st(at(y, 2, add(mul(bx, I(32)), r), add(mul(kt, I(32)), c)),
	                                  ld(at(sb, 3, kt, r, c))))))));
}

/*
** Shared buffers past 48 KiB (32768 + 48 + 16384 bytes): CUDA carves them from one dynamic
** array at offsets 0, 32768 and 32816. Each of 2 blocks of 256 threads fills them from X,
** passes a barrier and sums elements that other threads wrote into Y.
*/
static void
big_shared(void)
{
	int x = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)2, (int64_t)8192);
	int y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)2, (int64_t)8192);
	int s0 = mkbuf("S0", DT_FLOAT32, AS_LOCAL, KB_TEMP, 1, (int64_t)8192);
	int s1 = mkbuf("S1", DT_FLOAT32, AS_LOCAL, KB_TEMP, 1, (int64_t)12);
	int s2 = mkbuf("S2", DT_FLOAT32, AS_LOCAL, KB_TEMP, 1, (int64_t)4096);
	UOp *bx = kernel_var(K, "bx", 2), *t = kernel_var(K, "t", 256), *j = kernel_var(K, "j", 32);
	UOp *j2 = kernel_var(K, "j2", 16), *jj = kernel_var(K, "jj", 32), *e = add(mul(t, I(32)), jj);

	stage("big", loop(bx, HW_BLOCK_X, 1, loop(t, HW_THREAD_X, 5,
	      loop(j, HW_NONE, 1, st(at(s0, 1, add(mul(t, I(32)), j)), ld(at(x, 2, bx, add(mul(t, I(32)), j))))),
	      loop(j2, HW_NONE, 1, st(at(s2, 1, add(mul(t, I(16)), j2)), ld(at(x, 2, bx, add(mul(t, I(16)), j2))))),
	      kernel_if(K, alu(OP_CMPLT, DT_BOOL, t, I(12)), (UOp *[]){ st(at(s1, 1, t), ld(at(x, 2, bx, add(t, I(100))))) }, 1),
	      kernel_barrier(K),
	      loop(jj, HW_NONE, 1, st(at(y, 2, bx, e),
	           alu(OP_ADD, DT_FLOAT32, alu(OP_ADD, DT_FLOAT32, ld(at(s0, 1, uop_mod(K->c, add(e, I(1)), I(8192)))),
	               ld(at(s2, 1, uop_mod(K->c, e, I(4096))))), ld(at(s1, 1, uop_mod(K->c, jj, I(12))))))))));
}

/*
** The last block of 4 sums the blocks' partials (the threadfence reduction):
** p[b] written, a barrier, thread 0 fences, counts with an atomic add,
** fences, hands the count over in shared memory; the block that counted 3
** sums p and resets the count with an exchange.
*/
static void
last_block(void)
{
	int x = mkbuf("x", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)128);
	int y = mkbuf("y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)1);
	int p = mkbuf("p", DT_FLOAT32, AS_GLOBAL, KB_TEMP, 1, (int64_t)4);
	int cnt = mkbuf("cnt", DT_INT32, AS_GLOBAL, KB_TEMP, 1, (int64_t)1);
	int last = mkbuf("last", DT_INT32, AS_LOCAL, KB_TEMP, 1, (int64_t)1);
	int old = mkbuf("old", DT_INT32, AS_REG, KB_TEMP, 1, (int64_t)1);
	int acc = mkbuf("acc", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)1);
	UOp *b = kernel_var(K, "b", 4), *t = kernel_var(K, "t", 32), *j = kernel_var(K, "j", 32);
	UOp *u = kernel_var(K, "u", 4), *t0 = alu(OP_CMPEQ, DT_BOOL, t, I(0));
	UOp *a0 = at(acc, 1, I(0)), *tail[4], *part[3], *fin[4];

	tail[0] = kernel_fence(K, KF_GPU);
	tail[1] = ok(kernel_atomic(K, KA_ADD, at(cnt, 1, I(0)), fc(DT_INT32, 1), at(old, 1, I(0)), &E));
	tail[2] = kernel_fence(K, KF_GPU);
	tail[3] = st(at(last, 1, I(0)), ld(at(old, 1, I(0))));
	part[0] = st(a0, fc(DT_FLOAT32, 0));
	part[1] = loop(j, HW_NONE, 1, st(a0, alu(OP_ADD, DT_FLOAT32, ld(a0), ld(at(x, 1, add(mul(b, I(32)), j))))));
	part[2] = st(at(p, 1, b), ld(a0));
	fin[0] = st(a0, fc(DT_FLOAT32, 0));
	fin[1] = loop(u, HW_NONE, 1, st(a0, alu(OP_ADD, DT_FLOAT32, ld(a0), ld(at(p, 1, u)))));
	fin[2] = st(at(y, 1, I(0)), ld(a0));
	fin[3] = ok(kernel_atomic(K, KA_EXCH, at(cnt, 1, I(0)), fc(DT_INT32, 0), NULL, &E));
	stage("sum", loop(b, HW_BLOCK_X, 1, loop(t, HW_THREAD_X, 5,
	      kernel_if(K, t0, part, 3),
	      kernel_barrier(K),
	      kernel_if(K, t0, tail, 4),
	      kernel_barrier(K),
	      kernel_if(K, alu(OP_CMPEQ, DT_BOOL, ld(at(last, 1, I(0))), fc(DT_INT32, 3)), (UOp *[]){
	          kernel_if(K, t0, fin, 4) }, 1))));
}

static void warp_reduce64(void) { warp_reduce(64); }
static Kernel *ex_softmax(void) { return softmax_kernel(); }
static Kernel *ex_matmul(void) { return matmul_tiled(); }
static Kernel *ex_matmul_shared(void) { return matmul_shared(); }
static Kernel *ex_transpose(void) { return by_hand(transpose); }
static Kernel *ex_warp_reduce(void) { return by_hand(warp_reduce64); }
static Kernel *ex_mma_gemm(void) { return by_hand(mma_gemm); }
static Kernel *ex_collectives(void) { return by_hand(collectives); }
static Kernel *ex_guards(void) { return by_hand(guards); }
static Kernel *ex_halves(void) { return by_hand(halves); }
static Kernel *ex_vector_loads(void) { return by_hand(vector_loads); }
static Kernel *ex_vector_copies(void) { return by_hand(vector_copies); }
static Kernel *ex_register_pairs(void) { return by_hand(register_pairs); }
static Kernel *ex_ldsm_mma(void) { return by_hand(ldsm_mma); }
static Kernel *ex_cp_async(void) { return by_hand(cp_async2); }
static Kernel *ex_wgmma(void) { return by_hand(wgmma_gemm); }
static Kernel *ex_big_shared(void) { return by_hand(big_shared); }
static Kernel *ex_tma(void) { return by_hand(tma_pipe); }
static Kernel *ex_last_block(void) { return by_hand(last_block); }

static const Example examples[] = {
	{ "softmax", ex_softmax, NULL },
	{ "matmul", ex_matmul, NULL },
	{ "matmul_shared", ex_matmul_shared, NULL },
	{ "transpose", ex_transpose, NULL },
	{ "warp_reduce", ex_warp_reduce, "a shuffle; OpenCL C has no warp of 32 lanes" },
	{ "mma_gemm", ex_mma_gemm, "buffer A is float16" },
	{ "collectives", ex_collectives, NULL },
	{ "guards", ex_guards, NULL },
	{ "halves", ex_halves, "buffer A is float16" },
	{ "vector_loads", ex_vector_loads, NULL },
	{ "vector_copies", ex_vector_copies, "buffer A is float16" },
	{ "register_pairs", ex_register_pairs, "buffer C is float16" },
	{ "ldsm_mma", ex_ldsm_mma, "buffer A is float16" },
	{ "cp_async", ex_cp_async, "opencl: stage cpa: a cp_async; asynchronous global-to-shared copies are sm_80's cp.async" },
	{ "big_shared", ex_big_shared, NULL },
	{ "wgmma", ex_wgmma, "buffer A is float16" },
	{ "tma", ex_tma, "opencl: stage tma: a mbar_init; mbarriers and bulk tensor copies (TMA) are sm_90's" },
	{ "last_block", ex_last_block, NULL },
};
enum { NEX = sizeof examples / sizeof examples[0] };

/* ---- child processes: fork and execv, output into a file, no shell ---- */

static int
find_exe(const char *name, const char *fallback, char *out, size_t n)
{
	const char *path = getenv("PATH"), *p, *q;

	for (p = path ? path : "/usr/bin:/bin"; ; p = q + 1) {
		size_t len;

		q = strchr(p, ':');
		len = q ? (size_t)(q - p) : strlen(p);
		if ((size_t)snprintf(out, n, "%.*s/%s", (int)len, len ? p : ".", name) < n && access(out, X_OK) == 0)
			return 0;
		if (!q)
			break;
	}
	if (fallback && access(fallback, X_OK) == 0) {
		snprintf(out, n, "%s", fallback);
		return 0;
	}
	return -1;
}

/* Run argv (argv[0] the executable's path); its output into *log (malloc'd); the exit status, or -1. */
static int
run_child(char *const *argv, const char *logpath, char **log)
{
	int fd, st;
	pid_t pid;
	FILE *f;
	long n;

	*log = NULL;
	if ((fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
		return -1;
	fflush(stdout);
	if ((pid = fork()) == 0) {
		if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		close(fd);
		execve(argv[0], argv, environ);
		_exit(127);
	}
	close(fd);
	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if ((f = fopen(logpath, "rb"))) {
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		fseek(f, 0, SEEK_SET);
		if (n >= 0 && (*log = malloc((size_t)n + 1))) {
			n = (long)fread(*log, 1, (size_t)n, f);
			(*log)[n] = 0;
		}
		fclose(f);
	}
	unlink(logpath);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *
tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	char *d = malloc(512);

	assert_non_null(d);
	snprintf(d, 512, "%s/tessel-gpu-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(d))
		fail_msg("mkdtemp %s: %s", d, strerror(errno));
	return d;
}

static void
write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		fail_msg("cannot write %s", path);
}

/* Remove dir and the files named in names (one a line) and extra. */
static void
remove_dir(const char *dir, const char *names, const char *const *extra)
{
	char p[1024];
	const char *s, *nl;

	for (s = names; s && *s; s = nl + 1) {
		if (!(nl = strchr(s, '\n')))
			break;
		snprintf(p, sizeof p, "%s/%.*s", dir, (int)(nl - s), s);
		unlink(p);
	}
	for (; extra && *extra; extra++) {
		snprintf(p, sizeof p, "%s/%s", dir, *extra);
		unlink(p);
	}
	rmdir(dir);
}

/* ---- golden sources ---- */

/* Runs of 4 floats at a multiple of 4 are one float4 (CUDA) or vload4 (OpenCL); others stay scalar. */
static void
test_vector_loads(void **state)
{
	Kernel *k = ex_vector_loads();
	char *cu = source(k, D_CUDA), *cl = source(k, D_OPENCL);

	has(cu, "  /* e: 4 iterations unrolled, 2 runs loaded as float4 */\n"
	        "  const float4 X_v = *(const float4 *)&X[bx * 64 + tx * 4];\n"
	        "  const float4 W_v = *(const float4 *)&W[tx * 4];\n"
	        "  Y[bx * 64 + tx * 4] = X_v.x * W_v.x + X_v.x;\n");
	has(cu, "  Y[bx * 64 + tx * 4 + 3] = X_v.w * W_v.w + X_v.w;\n");
	has(cl, "  const float4 X_v = vload4(0, X + (bx * 64 + tx * 4));\n");
	/* the second loop's runs start one past a multiple of 4 (or wrap): scalar loads, unrolled */
	assert_null(strstr(cu, "X_v_1"));
	has(cu, "#pragma unroll\n  for (int64_t f = 0; f < 4; f++) {");
	free(cu);
	free(cl);
	kernel_free(k);
}

static void
test_vector_copies(void **state)
{
	Kernel *k = ex_vector_copies();
	char *cu = source(k, D_CUDA);
	TBuf bufs[3];
	Err e;
	int i;

	has(cu, "  __shared__ __align__(16) __half S[1024];");
	has(cu, "    /* v: 8 elements moved as one 16-byte uint4 */\n"
	        "    *(uint4 *)&S[(it * 512 + tx * 8) ^ (tx / 8 * 8)] = *(const uint4 *)&A[bx * 1024 + it * 512 + tx * 8];\n");
	has(cu, "    *(uint4 *)&B[bx * 1024 + it * 512 + tx * 8] = *(const uint4 *)&S[(it * 512 + tx * 8) ^ (tx / 8 * 8)];\n");
	/* the interpreter moves the same values: B (buffer 1) is A */
	memset(bufs, 0, sizeof bufs);
	bufs[0].dtype = DT_FLOAT16;
	bufs[0].ndim = 2;
	bufs[0].shape[0] = bufs[0].shape[1] = 64;
	bufs[0].numel = 64 * 64;
	assert_non_null(bufs[0].data = malloc(64 * 64 * 2));
	for (i = 0; i < 64 * 64; i++)
		dtype_store_f(DT_FLOAT16, (unsigned char *)bufs[0].data + 2 * i, (double)(i % 2048) / 8);
	if (kernel_run(k, NULL, bufs, NULL, &e) < 0)
		fail_msg("kernel_run: %s", e.msg);
	assert_memory_equal(bufs[1].data, bufs[0].data, 64 * 64 * 2);
	for (i = 0; i < 3; i++)
		tbuf_free(&bufs[i]);
	free(cu);
	kernel_free(k);
}

static void
test_register_pairs(void **state)
{
	Kernel *k = ex_register_pairs();
	char *cu = source(k, D_CUDA);
	TBuf bufs[4];
	Err e;
	int i;

	has(cu, "  __align__(4) __half h[2];");
	has(cu, "  /* v: 2 elements moved as one 4-byte unsigned */\n"
	        "  *(unsigned *)&C[tx * 2] = *(const unsigned *)&h[0];\n");
	assert_null(strstr(cu, "uint2"));
	has(cu, "    D[tx * 4 + v] = q[v];\n");
	/* the values: C[2t + j] = t + j/2, D[4t + j] = t + j/4 */
	memset(bufs, 0, sizeof bufs);
	if (kernel_run(k, NULL, bufs, NULL, &e) < 0)
		fail_msg("kernel_run: %s", e.msg);
	for (i = 0; i < 64; i++)
		assert_true(dtype_load_f(DT_FLOAT16, (unsigned char *)bufs[0].data + 2 * i) == i / 2 + 0.5 * (i % 2));
	for (i = 0; i < 128; i++)
		assert_true(dtype_load_f(DT_FLOAT16, (unsigned char *)bufs[1].data + 2 * i) == i / 4 + 0.25 * (i % 4));
	for (i = 0; i < 4; i++)
		tbuf_free(&bufs[i]);
	free(cu);
	kernel_free(k);
}

/* wgmma: the interpreter's product against float64, then the CUDA text: descriptors, the instruction, alignment, fences */
/* control flow that keeps warpgroups whole may hold a wgmma and a setmaxnreg: a warpgroup and a
** producer warp (160 threads), the warpgroup's part under tx < 128; under tx < 64 it is refused */
static void
test_wgmma_uniform(void **state)
{
	Kernel *k;
	Buf notes;
	char *cu;

	(void)state;
	wg_threads = 160;
	wg_guard = 128;
	wg_regs = 232;
	k = by_hand(wgmma_gemm);
	buf_init(&notes);
	if (kernel_check(k, &notes, &E) < 0)
		fail_msg("check: %s", E.msg);
	buf_free(&notes);
	cu = source(k, D_CUDA);
	has(cu, "__global__ void __launch_bounds__(160, 1)");
	has(cu, "asm volatile(\"setmaxnreg.inc.sync.aligned.u32 232;\\n\");");
	free(cu);
	kernel_free(k);
	wg_guard = 64;
	k = by_hand(wgmma_gemm);
	assert_int_equal(kernel_check(k, NULL, &E), -1);
	has(E.msg, "a setmaxnreg under control flow that divides a warpgroup (an if whose condition depends on a "
	    "thread index");
	kernel_free(k);
	wg_threads = 128;
	wg_guard = wg_regs = 0;
	assert_null(kernel_setmaxnreg(K, 20, 1, &E));
	has(E.msg, "setmaxnreg takes a multiple of 8 from 24 to 256");
}

static void
test_wgmma(void **state)
{
	Kernel *k = ex_wgmma();
	TBuf bufs[6];
	Err e = { "" };
	char *cu;
	int i, j, kk;
	double worst = 0;

	memset(bufs, 0, sizeof bufs);
	for (i = 0; i < 2; i++) {
		bufs[i].dtype = DT_FLOAT16;
		bufs[i].ndim = 2;
		bufs[i].shape[0] = bufs[i].shape[1] = 64;
		bufs[i].numel = 64 * 64;
		assert_non_null(bufs[i].data = malloc(64 * 64 * 2));
		for (j = 0; j < 64 * 64; j++)
			dtype_store_f(DT_FLOAT16, (unsigned char *)bufs[i].data + 2 * j, (double)((j * 7 + i * 3) % 17 - 8) / 8);
	}
	if (kernel_check(k, NULL, &e) < 0 || kernel_run(k, NULL, bufs, NULL, &e) < 0)
		fail_msg("wgmma: %s", e.msg);
	for (i = 0; i < 64; i++)
		for (j = 0; j < 64; j++) {
			double want = 0, got = ((float *)bufs[2].data)[i * 64 + j];

			for (kk = 0; kk < 64; kk++)
				want += dtype_load_f(DT_FLOAT16, (unsigned char *)bufs[0].data + 2 * (i * 64 + kk))
				      * dtype_load_f(DT_FLOAT16, (unsigned char *)bufs[1].data + 2 * (kk * 64 + j));
			worst = fabs(got - want) > worst ? fabs(got - want) : worst;
		}
	assert_true(worst < 1e-5);
	for (i = 0; i < 6; i++)
		tbuf_free(&bufs[i]);
	cu = source(k, D_CUDA);
	has(cu, "  __shared__ __align__(1024) __half As[4096];");
	has(cu, "  asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");\n  __syncthreads();\n");
	has(cu, "const uint64_t tessel_da = ((uint64_t)((unsigned)__cvta_generic_to_shared(&As[kk * 16]) >> 4) & 0x3FFFull) | "
	        "0x4000004000010000ull;  /* K-major, 128B, LBO 16, SBO 1024 */");
	has(cu, "const uint64_t tessel_db = ((uint64_t)((unsigned)__cvta_generic_to_shared(&Bs[kk * 1024]) >> 4) & 0x3FFFull) | "
	        "0x4000004000000000ull;  /* MN-major, 128B, LBO 0, SBO 1024 */");
	has(cu, "\"wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1,");
	has(cu, "%31}, %32, %33, p, 1, 1, 0, 1;\\n}\\n\"");
	has(cu, ": \"l\"(tessel_da), \"l\"(tessel_db), \"r\"(1)");
	has(cu, "asm volatile(\"wgmma.wait_group.sync.aligned 0;\\n\" ::: \"memory\");\n");
	has(cu, "nvcc -gencode=arch=compute_90a,code=sm_90a");
	free(cu);
	refused(k, D_TRITON, "triton:");
	kernel_free(k);
}

static void
test_ldmatrix(void **state)
{
	Kernel *k = ex_ldsm_mma();
	char *cu = source(k, D_CUDA);

	has(cu, "  {  /* ldmatrix.x4(a_r, SA[...]): this lane's row */\n"
	        "    unsigned tessel_r0, tessel_r1, tessel_r2, tessel_r3;\n\n"
	        "    asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\"\n"
	        "        : \"=r\"(tessel_r0), \"=r\"(tessel_r1), \"=r\"(tessel_r2), \"=r\"(tessel_r3)\n"
	        "        : \"r\"((unsigned)__cvta_generic_to_shared(&SA[");
	has(cu, "    a_r[0] = __ushort_as_half((unsigned short)(tessel_r0 & 0xffffu));\n"
	        "    a_r[1] = __ushort_as_half((unsigned short)(tessel_r0 >> 16));\n");
	has(cu, "asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\"");
	free(cu);
	kernel_free(k);
}

static void
test_cp_async(void **state)
{
	Kernel *k = ex_cp_async();
	char *cu = source(k, D_CUDA);
	Buf notes;

	has(cu, "    asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\\n\"\n"
	        "        :: \"r\"((unsigned)__cvta_generic_to_shared(&S0[");
	has(cu, "\"l\"(&X[");
	has(cu, "  asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");\n");
	has(cu, "  asm volatile(\"cp.async.wait_group 1;\\n\" ::: \"memory\");\n");
	has(cu, "  asm volatile(\"cp.async.wait_group 0;\\n\" ::: \"memory\");\n");
	free(cu);
	/* the verifier takes the wait_group 1 with a note; the interpreter runs it (run_example) */
	buf_init(&notes);
	if (kernel_check(k, &notes, &E) < 0)
		fail_msg("check: %s", E.msg);
	has(notes.s ? notes.s : "", "rely on the copies into the slots read being older");
	buf_free(&notes);
	refused(k, D_TRITON, "triton: stage cpa: ");
	kernel_free(k);
	cp_barriers = 0;
	k = ex_cp_async();
	cp_barriers = 1;
	refused(k, D_C, "c: stage cpa: a cp_async; asynchronous global-to-shared copies are sm_80's cp.async, which "
	        "only the cuda dialect writes");
	kernel_free(k);
}

static int have_nvcc(char *path, size_t n);

static void
test_tma(void **state)
{
	Kernel *k = ex_tma();
	char *cu = source(k, D_CUDA), nvcc[1024], cuobj[1024], *dir, path[600], obj[600], logp[600], *log = NULL;
	int rc;

	has(cu, "tma(const float *__restrict__ X, float *__restrict__ Y, const __grid_constant__ CUtensorMap tessel_tmap0)");
	has(cu, "__shared__ __align__(1024) float S[2048];");
	has(cu, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];");
	has(cu, "\"l\"(&tessel_tmap0)");
	has(cu, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 4096;");
	has(cu, "tessel_wait:\\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\\n @!p bra.uni tessel_wait;");
	has(cu, "CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE");
	has(cu, "static const cuuint64_t dims[] = {64ull, 64ull}, strides[] = {256ull};");
	refused(k, D_TRITON, "triton: stage tma: ");
	kernel_free(k);
	/* the SASS has the TMA load when cuobjdump is there to show it */
	if (!have_nvcc(nvcc, sizeof nvcc) || find_exe("cuobjdump", "/usr/local/cuda/bin/cuobjdump", cuobj, sizeof cuobj) < 0) {
		print_message("note: no nvcc or no cuobjdump: the TMA's SASS is not checked\n");
		free(cu);
		return;
	}
	dir = tmpdir();
	snprintf(path, sizeof path, "%s/t.cu", dir);
	snprintf(obj, sizeof obj, "%s/t.o", dir);
	snprintf(logp, sizeof logp, "%s/log", dir);
	write_text(path, cu);
	free(cu);
	{
		char *const argv[] = { nvcc, "-arch=sm_90", "-c", path, "-o", obj, NULL };

		if ((rc = run_child(argv, logp, &log)) != 0)
			fail_msg("nvcc (exit %d):\n%s", rc, log ? log : "");
		free(log);
		log = NULL;
	}
	{
		char *const argv[] = { cuobj, "-sass", obj, NULL };

		if ((rc = run_child(argv, logp, &log)) != 0)
			fail_msg("cuobjdump (exit %d):\n%s", rc, log ? log : "");
		has(log ? log : "", "UTMALDG");
		free(log);
	}
	unlink(path);
	unlink(obj);
	unlink(logp);
	rmdir(dir);
	free(dir);
}

static void
test_golden_cuda(void **state)
{
	Kernel *k;

	golden_of(k = ex_softmax(), D_CUDA, "gpu_softmax.cu");
	kernel_free(k);
	golden_of(k = ex_matmul(), D_CUDA, "gpu_matmul.cu");
	kernel_free(k);
	golden_of(k = ex_transpose(), D_CUDA, "gpu_transpose.cu");
	kernel_free(k);
	golden_of(k = ex_warp_reduce(), D_CUDA, "gpu_warp_reduce.cu");
	kernel_free(k);
	golden_of(k = ex_mma_gemm(), D_CUDA, "gpu_mma_gemm.cu");
	kernel_free(k);
}

/* atomics and fences: CUDA's calls, OpenCL's (float add refused), C's plain read-modify-write */
static void
test_atomics(void **state)
{
	Kernel *k = ex_last_block();
	char *cu = source(k, D_CUDA), *cl = source(k, D_OPENCL);
	int f = mkbuf("f", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)1);
	UOp *b = kernel_var(K, "b", 2);
	Buf out;

	has(cu, "  __threadfence();\n    old[0] = atomicAdd(&cnt[0], 1);\n    __threadfence();\n");
	has(cu, "atomicExch(&cnt[0], 0);");
	has(cl, "old[0] = atomic_add(&cnt[0], 1);");
	has(cl, "mem_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);");
	has(cl, "atomic_xchg(&cnt[0], 0);");
	free(cu);
	free(cl);
	kernel_free(k);
	/* a float add: CUDA has it, OpenCL 1.2 does not; C updates in place */
	stage("s", loop(b, HW_BLOCK_X, 1, ok(kernel_atomic(K, KA_ADD, at(f, 1, I(0)), fc(DT_FLOAT32, 1), NULL, &E))));
	cu = source(K, D_CUDA);
	has(cu, "atomicAdd(&f[0], 1.0f);");
	free(cu);
	buf_init(&out);
	if (backend_source(&out, K, D_OPENCL, &E) == 0)
		fail_msg("opencl wrote a float atomic add:\n%s", out.s);
	if (!strstr(E.msg, "atomic add of float32 f") || !strstr(E.msg, "OpenCL C 1.2 has atomic_add for int"))
		fail_msg("opencl: %s", E.msg);
	buf_reset(&out);
	if (backend_source(&out, K, D_C, &E) < 0)
		fail_msg("c: %s", E.msg);
	has(out.s, "const float atomic_old = f[0];\n");
	has(out.s, "f[0] = atomic_old + atomic_value;\n");
	buf_free(&out);
}

static void
test_golden_opencl(void **state)
{
	Kernel *k;

	golden_of(k = ex_softmax(), D_OPENCL, "gpu_softmax.cl");
	kernel_free(k);
	golden_of(k = ex_matmul(), D_OPENCL, "gpu_matmul.cl");
	kernel_free(k);
	golden_of(k = ex_transpose(), D_OPENCL, "gpu_transpose.cl");
	kernel_free(k);
}

/* ---- what the GPU walk does ---- */

static void
test_guards_and_barriers(void **state)
{
	char *s;

	guards();
	s = source(K, D_CUDA);
	golden("gpu_guards.cu", s);
	/* the first loop is as long as the block: no guard; its sibling loops share `i`: braces */
	has(s, "  {\n    const int64_t t = threadIdx.x;  /* thread.x */\n    T[t] = X[bx + t * 3] * 2.0f;\n");
	has(s, "  __syncthreads();\n  {\n    const int64_t i = threadIdx.x;  /* thread.x */\n    if (i < 48) {\n");
	has(s, "  const int64_t i = threadIdx.x;  /* thread.x */\n  if (i < 16) {\n");
	/* exp2 of a float32 through the double function, as the interpreter computes it */
	has(s, "(float)exp2((double)T[i])");
	/* the column-major input is placed by a host function */
	has(s, "extern \"C\" int\ntessel_place(int b, void *dst, const void *src)");
	has(s, "tessel_d[x0 + x1 * 3] = tessel_s[tessel_i++];");
	free(s);
	s = source(K, D_OPENCL);
	has(s, "  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n");
	has(s, "    const int64_t i = get_local_id(0);  /* thread.x */\n    if (i < 48) {\n");
	has(s, "**   g: grid (3, 1, 1), block (64, 1, 1); X, Y, N\n");
	free(s);
}

static void
test_barrier_under_guard(void **state)
{
	int x = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
	int y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
	UOp *t = kernel_var(K, "t", 64), *u = kernel_var(K, "u", 32);

	/* a barrier inside a loop of 32 threads in a block of 64: threads 32..63 would skip it */
	stage("s", seq(2, loop(t, HW_THREAD_X, 1, st(at(y, 1, t), fc(DT_FLOAT32, 0))),
	          loop(u, HW_THREAD_X, 2, st(at(y, 1, u), ld(at(x, 1, u))), kernel_barrier(K))));
	refused(K, D_CUDA, "cuda: stage s: the barrier in loop u lies under the guard of loop u (bound to "
	        "thread.x, 32 of the 64 threads)");
	refused(K, D_OPENCL, "opencl: stage s: the barrier in loop u lies under the guard of loop u");
}

static void
test_shuffles(void **state)
{
	char *s;

	int x, y;
	UOp *t;

	warp_reduce(64);
	s = source(K, D_CUDA);
	has(s, "acc[0] += __shfl_sync(0xffffffffu, acc[0], (int32_t)((tx % 32) ^ 16));");
	free(s);
	refused(K, D_OPENCL, "opencl: stage rowsum: a shuffle; OpenCL C has no warp of 32 lanes");
	/* 48 threads: the second warp is short, its shuffles name its 16 lanes */
	kernel_free(K);
	K = kernel_new();
	x = mkbuf("X", DT_INT8, AS_GLOBAL, KB_INPUT, 1, (int64_t)48);
	y = mkbuf("Y", DT_INT8, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)48);
	t = kernel_var(K, "t", 48);
	stage("s", loop(t, HW_THREAD_X, 1, st(at(y, 1, t), kernel_shuffle(K, ld(at(x, 1, t)),
	      uop_alu(K->c, OP_XOR, uop_mod(K->c, t, I(32)), I(1))))));
	s = source(K, D_CUDA);
	has(s, "  const unsigned tessel_mask = threadIdx.x / 32 == 1 ? 0xffffu : 0xffffffffu;\n");
	/* an int8 goes as an int */
	has(s, "Y[t] = (int8_t)__shfl_sync(tessel_mask, (int32_t)X[t], (int32_t)((t % 32) ^ 1));");
	free(s);
}

static void
test_shuffle_guards(void **state)
{
	int x = mkbuf("X", DT_INT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)128);
	int y = mkbuf("Y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)128);
	UOp *t = kernel_var(K, "t", 128), *u = kernel_var(K, "u", 64), *w = kernel_var(K, "w", 48);
	char *s;

	/* a guard that keeps whole warps (64 of 128 threads) may hold a shuffle; one of 48 may not */
	stage("s", seq(2, loop(t, HW_THREAD_X, 1, st(at(y, 1, t), ld(at(x, 1, t)))),
	          loop(u, HW_THREAD_X, 1, st(at(y, 1, u), kernel_shuffle(K, ld(at(x, 1, u)),
	                                                              uop_alu(K->c, OP_XOR, uop_mod(K->c, u, I(32)), I(1)))))));
	s = source(K, D_CUDA);
	has(s, "if (u < 64) {\n    Y[u] = __shfl_sync(0xffffffffu, X[u], (int32_t)((u % 32) ^ 1));\n");
	free(s);
	kernel_free(K);
	K = kernel_new();
	x = mkbuf("X", DT_INT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)128);
	y = mkbuf("Y", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)128);
	t = kernel_var(K, "t", 128);
	w = kernel_var(K, "w", 48);
	stage("s", seq(2, loop(t, HW_THREAD_X, 1, st(at(y, 1, t), ld(at(x, 1, t)))),
	          loop(w, HW_THREAD_X, 1, st(at(y, 1, w), kernel_shuffle(K, ld(at(x, 1, w)), I(0))))));
	refused(K, D_CUDA, "cuda: stage s: the shuffle in loop w lies under the guard of loop w (bound to thread.x, "
	        "48 of the 128 threads): the lanes of a warp past it would skip the shuffle");
}

static void
test_limits(void **state)
{
	int y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)2048);
	int sh = mkbuf("S", DT_FLOAT32, AS_LOCAL, KB_TEMP, 1, (int64_t)16384);
	UOp *t = kernel_var(K, "t", 2048), *j = kernel_var(K, "j", 8);

	/* 2048 threads a block: past CUDA's 1024, within PoCL's */
	stage("big", loop(t, HW_THREAD_X, 1, st(at(y, 1, t), fc(DT_FLOAT32, 1))));
	refused(K, D_CUDA, "cuda: stage big: a block of (2048, 1, 1) threads; a CUDA block holds at most 1024");
	kernel_free(K);
	K = kernel_new();
	y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)2048);
	sh = mkbuf("S", DT_FLOAT32, AS_LOCAL, KB_TEMP, 1, (int64_t)16384);
	t = kernel_var(K, "t", 256);
	j = kernel_var(K, "j", 8);
	stage("smem", loop(t, HW_THREAD_X, 1, loop(j, HW_NONE, 2, st(at(sh, 1, add(mul(t, I(8)), j)), fc(DT_FLOAT32, 1)),
	      st(at(y, 1, add(mul(t, I(8)), j)), ld(at(sh, 1, add(mul(t, I(8)), j)))))));
	{
		char *cu = source(K, D_CUDA);

		/* past 48 KiB: one dynamic array, and the launch opts in to its bytes */
		has(cu, "  extern __shared__ __align__(16) unsigned char tessel_smem[];\n"
		        "  float *const S = (float *)(tessel_smem + 0);  /* shared, one per block, 16384 elements: ");
		has(cu, "  cudaFuncSetAttribute(smem, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);\n"
		        "  smem<<<dim3(1, 1, 1), dim3(256, 1, 1), 65536, tessel_stream>>>(");
		free(cu);
	}
	kernel_free(K);
	K = kernel_new();
	y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)2048);
	sh = mkbuf("S", DT_FLOAT32, AS_LOCAL, KB_TEMP, 1, (int64_t)60000);
	t = kernel_var(K, "t", 256);
	stage("smem", loop(t, HW_THREAD_X, 1, st(at(sh, 1, t), fc(DT_FLOAT32, 1)),
	      st(at(y, 1, t), ld(at(sh, 1, t)))));
	refused(K, D_CUDA, "cuda: stage smem: 240000 bytes of shared buffers (at offsets of 16 bytes), the largest "
	        "S with 240000; a block's shared memory holds at most 227 KiB on sm_90");
	(void)y;
}

static void
test_mma_refusals(void **state)
{
	char *s;

	mma_gemm();
	s = source(K, D_CUDA);
	has(s, "asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32\"\n");
	has(s, "\"r\"(tessel_pack_f16(a_frag[0], a_frag[1]))");
	free(s);
	refused(K, D_OPENCL, "opencl: buffer A is float16");
	refused(K, D_C, "float16");
	kernel_free(K);
	K = kernel_new();
	mma_atom("SM80_16x8x16_F32F16F16F32_TN");
	refused(K, D_OPENCL, "opencl: buffer A is float16");
	kernel_free(K);
	K = kernel_new();
	mma_atom("SM80_16x8x8_F32TF32TF32F32_TN");
	refused(K, D_OPENCL, "opencl: stage mma: an mma (SM80_16x8x8_F32TF32TF32F32_TN); OpenCL C has no "
	        "tensor-core instructions");
}

static void
test_halves(void **state)
{
	char *s;

	halves();
	s = source(K, D_CUDA);
	/* widened exactly, computed in double as the interpreter does, rounded once */
	has(s, "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n");
	has(s, "__double2half((double)__half2float(A[tx]) * (double)__half2float(__float2half_rn("
	    "__bfloat162float(B[tx]))))");
	has(s, "F[tx] = __bfloat162float(__double2bfloat16(exp2((double)__bfloat162float(B[tx]))));");
	golden("gpu_halves.cu", s);
	free(s);
	refused(K, D_OPENCL, "opencl: buffer A is float16; the OpenCL backend has float32 and float64 only");
}

static void
test_triton_refused(void **state)
{
	int y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)4);
	UOp *t = kernel_var(K, "t", 4);

	stage("s", loop(t, HW_THREAD_X, 1, st(at(y, 1, t), fc(DT_FLOAT32, 1))));
	refused(K, D_TRITON, "triton: stage s: loop t is bound to thread.x; a Triton program has no threads");
}

/* ---- nvcc: every example compiles for sm_90; its resource usage in a note ---- */

static int
have_nvcc(char *path, size_t n)
{
	return find_exe("nvcc", "/usr/local/cuda/bin/nvcc", path, n) == 0;
}

/* "Used 20 registers, used 1 barriers, 4220 bytes smem" one line per kernel; no stack frame, no spills */
static void
resource_note(const char *name, const char *log)
{
	const char *p = log, *fn = NULL;
	char kernel[128] = "?";

	for (; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);

		if ((fn = strstr(p, "Function properties for ")) && fn < p + len) {
			/* _Z9transposePKfPf: the stage's name */
			const char *m = fn + 24;
			int nl2 = 0;

			if (strncmp(m, "_Z", 2) == 0)
				for (m += 2; *m >= '0' && *m <= '9'; m++)
					nl2 = nl2 * 10 + (*m - '0');
			snprintf(kernel, sizeof kernel, "%.*s", nl2 ? nl2 : (int)(p + len - m), m);
		}
		else if (strstr(p, "spill stores") && strstr(p, "spill stores") < p + len) {
			/* a register array indexed at run time would have gone to the stack */
			if (!strstr(p, " 0 bytes stack frame") || !strstr(p, " 0 bytes spill stores")
			|| !strstr(p, " 0 bytes spill loads"))
				fail_msg("nvcc: %s: %s uses local memory: %.*s", name, kernel, len, p);
		} else if (strstr(p, "Used ") && strstr(p, "Used ") < p + len) {
			const char *u = strstr(p, "Used ");

			print_message("note: nvcc sm_90 %-30s %-10s %.*s, no stack, no spills\n", name, kernel,
			              (int)(p + len - u), u);
		}
		if (!nl)
			break;
	}
}

static void
test_nvcc(void **state)
{
	char nvcc[1024], *dir, cu[600], obj[600], logp[600], *log = NULL;
	int i, rc;

	if (!have_nvcc(nvcc, sizeof nvcc)) {
		print_message("note: nvcc is not in PATH nor /usr/local/cuda/bin: the CUDA compile checks are skipped\n");
		skip();
	}
	dir = tmpdir();
	snprintf(cu, sizeof cu, "%s/k.cu", dir);
	snprintf(obj, sizeof obj, "%s/k.o", dir);
	snprintf(logp, sizeof logp, "%s/nvcc.log", dir);
	for (i = 0; i < (int)NEX + 9; i++) {
		static const char *const atoms[9] = {
			"SM70_8x8x4_F16F16F16F16_TN", "SM70_8x8x4_F16F16F16F16_NT", "SM70_8x8x4_F32F16F16F32_TN",
			"SM80_16x8x8_F16F16F16F16_TN", "SM80_16x8x16_F16F16F16F16_TN", "SM80_16x8x16_F32F16F16F32_TN",
			"SM80_16x8x16_F32BF16BF16F32_TN", "SM80_16x8x8_F32TF32TF32F32_TN", "SM80_16x8x4_F32TF32TF32F32_TN"
		};
		char *const argv[] = { nvcc, "-arch=sm_90", "-fmad=false", "-c", cu, "-o", obj, "--resource-usage", NULL };
		/* wgmma is sm_90a's: the arch-specific target */
		char *const argv_a[] = { nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-fmad=false", "-c", cu, "-o", obj,
		                         "--resource-usage", NULL };
		const char *name = i < NEX ? examples[i].name : atoms[i - NEX];
		Kernel *k;
		char *s;
		int wg;

		if (i < NEX)
			k = examples[i].make();
		else {
			Kernel *save = K;

			K = kernel_new();
			mma_atom(atoms[i - NEX]);
			k = K;
			K = save;
		}
		s = source(k, D_CUDA);
		wg = kernel_has_wgmma(k);
		kernel_free(k);
		write_text(cu, s);
		free(s);
		rc = run_child(wg ? argv_a : argv, logp, &log);
		if (rc != 0)
			fail_msg("nvcc %s (exit %d):\n%s", name, rc, log ? log : "");
		resource_note(name, log ? log : "");
		free(log);
		log = NULL;
		if (wg) {
			/* the SASS holds the warpgroup MMA, where cuobjdump (and its nvdisasm) can say so */
			char co[1024];
			char *const argv_s[] = { co, "-sass", obj, NULL };

			if (find_exe("cuobjdump", "/usr/local/cuda/bin/cuobjdump", co, sizeof co) < 0)
				print_message("note: no cuobjdump: the SASS of %s is not checked for HGMMA\n", name);
			else if (run_child(argv_s, logp, &log) != 0 || !log || !strstr(log, "HGMMA.64x64x16.F32"))
				print_message("note: cuobjdump -sass %s found no HGMMA (or did not run): %.200s\n", name,
				              log ? log : "");
			else
				print_message("note: nvcc sm_90a %s: HGMMA.64x64x16.F32 in the SASS\n", name);
			free(log);
			log = NULL;
		}
	}
	unlink(cu);
	unlink(obj);
	rmdir(dir);
	free(dir);
}

/* ---- PoCL: every example OpenCL takes runs and agrees with the interpreter bit for bit ---- */

static int
have_opencl(void)
{
	char dev[256];
	Err e;

	if (backend_cl_available(Cl, dev, sizeof dev, &e) < 0) {
		print_message("note: %s: the OpenCL runs are skipped\n", e.msg);
		return 0;
	}
	return 1;
}

static void
test_opencl_runs(void **state)
{
	int i, j;

	if (!have_opencl())
		skip();
	for (i = 0; i < NEX; i++) {
		Kernel *k = examples[i].make();
		TBuf *bufs = calloc(k->nbuf, sizeof *bufs);
		BClStats st;
		BClOpts o = { 0, Cl, NULL, &st };

		assert_non_null(bufs);
		for (j = 0; j < k->nbuf; j++) {
			const KBuf *kb = &k->buf[j];

			if (kb->role != KB_INPUT)
				continue;
			bufs[j].dtype = kb->dtype;
			bufs[j].ndim = kb->ndim;
			memcpy(bufs[j].shape, kb->shape, sizeof kb->shape);
			bufs[j].numel = 1;
			for (int d = 0; d < kb->ndim; d++)
				bufs[j].numel *= kb->shape[d];
			bufs[j].axis = -1;
			assert_non_null(bufs[j].data = malloc((size_t)bufs[j].numel * dtype_bytes(kb->dtype)));
			backend_draw(k, j, &bufs[j]);
		}
		if (examples[i].opencl) {
			assert_int_equal(backend_cl_run(k, bufs, &o, &E), -1);
			if (!strstr(E.msg, examples[i].opencl))
				fail_msg("%s: \"%s\" is not in: %s", examples[i].name, examples[i].opencl, E.msg);
		} else {
			if (backend_cl_run(k, bufs, &o, &E) < 0)
				fail_msg("opencl %s: %s", examples[i].name, E.msg);
			print_message("note: PoCL ran %-14s bit for bit with the interpreter (%s)\n", examples[i].name,
			              st.device);
		}
		for (j = 0; j < k->nbuf; j++)
			tbuf_free(&bufs[j]);
		free(bufs);
		kernel_free(k);
	}
}

/* ---- exports, built and run by make ---- */

/* Export k in d into a fresh directory and run `make -C dir target`; the output in *log. */
static int
export_make(const Kernel *k, Dialect d, const char *target, char **log)
{
	char make[1024], logp[600], *dir;
	BExportOpts o;
	Buf files;
	int rc;

	if (find_exe("make", NULL, make, sizeof make) < 0)
		fail_msg("make is not in PATH");
	dir = tmpdir();
	buf_init(&files);
	memset(&o, 0, sizeof o);
	o.files = &files;
	o.reps = 5;
	if (backend_export(k, d, dir, &o, &E) < 0)
		fail_msg("export %s: %s", dialect_name(d), E.msg);
	{
		char *const argv[] = { make, "-C", dir, (char *)target, NULL };

		snprintf(logp, sizeof logp, "%s.log", dir);
		rc = run_child(argv, logp, log);
	}
	{
		static const char *const extra[] = { "main", NULL };

		remove_dir(dir, files.s, extra);
	}
	buf_free(&files);
	free(dir);
	return rc;
}

static void
test_export_c(void **state)
{
	Kernel *k = ex_softmax();
	char *log = NULL;
	int rc = export_make(k, D_C, "run", &log);

	if (rc != 0 || !strstr(log ? log : "", "  out: match, 32 elements bit for bit\n") || !strstr(log, "\nmatch\n"))
		fail_msg("make (exit %d):\n%s", rc, log ? log : "");
	has(log, "tessel harness (c): kernel.c\n");
	has(log, "  time: median ");
	free(log);
	kernel_free(k);
}

static void
test_export_files(void **state)
{
	Kernel *k = by_hand(guards);
	char *dir = tmpdir(), path[700];
	BExportOpts o;
	Buf files;
	struct stat st;

	buf_init(&files);
	memset(&o, 0, sizeof o);
	o.files = &files;
	assert_int_equal(backend_export(k, D_CUDA, dir, &o, &E), 0);
	/* the inputs are drawn by the host: only the outputs' references are files */
	assert_string_equal(files.s, "kernel.cu\nmain.cu\nMakefile\nref_Y.bin\nref_N.bin\n");
	snprintf(path, sizeof path, "%s/ref_Y.bin", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 3 * 64 * 4);
	remove_dir(dir, files.s, NULL);
	free(dir);
	buf_free(&files);
	/* a refused kernel writes nothing; a directory that cannot be made is an environmental error (-2) */
	assert_int_equal(backend_export(k, D_OPENCL, "/dev/null/tessel/x", NULL, &E), -2);
	has(E.msg, "export: cannot make the directory /dev/null/tessel/x: /dev/null is not a directory");
	kernel_free(k);
	k = by_hand(halves);
	assert_int_equal(backend_export(k, D_OPENCL, "/nonexistent/tessel/x", NULL, &E), -1);
	has(E.msg, "opencl: buffer A is float16");
	kernel_free(k);
}

static void
test_export_opencl(void **state)
{
	Kernel *k;
	char *log = NULL, inc[64];
	int rc;

	if (!have_opencl())
		skip();
	if (access("/usr/include/CL/cl.h", R_OK) != 0) {
		print_message("note: no CL/cl.h (opencl-headers): the OpenCL export is not built\n");
		skip();
	}
	(void)inc;
	k = by_hand(guards);
	rc = export_make(k, D_OPENCL, "run", &log);
	if (rc != 0 || !strstr(log ? log : "", "  Y: match, 192 elements bit for bit\n")
	|| !strstr(log, "  N: match, 192 elements bit for bit\n"))
		fail_msg("make (exit %d):\n%s", rc, log ? log : "");
	free(log);
	kernel_free(k);
}

static void
test_export_cuda(void **state)
{
	char nvcc[1024], *log = NULL;
	Kernel *k;
	int rc;

	if (!have_nvcc(nvcc, sizeof nvcc)) {
		print_message("note: no nvcc: the CUDA export is not built\n");
		skip();
	}
	k = ex_mma_gemm();
	/* built only: running it takes a GPU (docs/export.md) */
	rc = export_make(k, D_CUDA, "build", &log);
	if (rc != 0)
		fail_msg("make build (exit %d):\n%s", rc, log ? log : "");
	free(log);
	kernel_free(k);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_golden_cuda, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vector_loads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vector_copies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_register_pairs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ldmatrix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wgmma, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wgmma_uniform, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cp_async, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tma, setup, teardown),
		cmocka_unit_test_setup_teardown(test_golden_opencl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guards_and_barriers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_barrier_under_guard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shuffles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shuffle_guards, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mma_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_halves, setup, teardown),
		cmocka_unit_test_setup_teardown(test_triton_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvcc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opencl_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_c, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_opencl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_cuda, setup, teardown),
	};
	int rc;

	Cl = backend_cl_new();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	backend_cl_free(Cl);
	return rc;
}

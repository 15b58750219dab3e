/* test_backend_c.c - the C backend: golden sources, JIT runs bit for bit against the interpreter and plain C, refusals, compiler errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backends/backend.h"
#include "../interp/sched/sched.h"
#include "../layout/layout.h"
#include "kernel_test.h"

static BJitCache *Cache;   /* each test's own */

/* kernel_test.h's fixture, and a JIT cache */
static int
setup_jit(void **state)
{
	if (setup(state) < 0)
		return -1;
	Cache = backend_jit_cache_new();
	return Cache ? 0 : -1;
}

static int
teardown_jit(void **state)
{
	teardown(state);
	backend_jit_cache_free(Cache);
	Cache = NULL;
	return 0;
}

/* ---- graphs and lowering ---- */

/* softmax as lua_tensor.c builds it: e / e.sum with e = exp(x - x.max) */
static UOp *
softmax(UOp *a)
{
	int64_t axes[1] = { 1 };
	UOp *m, *x, *s, *sum;

	m = ok(tensor_reduce(C, OP_MAX, a, axes, 1, 1, &E));
	x = ok(tensor_alu(C, OP_SUB, a, m, &E));
	x = ok(tensor_alu(C, OP_MUL, x, uop_constf(C, DT_FLOAT32, 1.4426950408889634), &E));
	s = ok(tensor_unary(C, OP_EXP2, x, &E));
	sum = ok(tensor_reduce(C, OP_ADD, s, axes, 1, 1, &E));
	sum = ok(tensor_unary(C, OP_RECIP, sum, &E));
	return ok(tensor_alu(C, OP_MUL, s, sum, &E));
}

/* a:matmul(b) as lua_tensor.c builds it: (a:reshape{M,K,1} * b:reshape{1,K,N}):sum(1) */
static UOp *
matmul(UOp *a, UOp *b)
{
	int64_t sa[3] = { a->shape[0], a->shape[1], 1 }, sb[3] = { 1, b->shape[0], b->shape[1] }, ax[1] = { 1 };
	UOp *x;

	a = ok(tensor_reshape(C, a, sa, 3, &E));
	b = ok(tensor_reshape(C, b, sb, 3, &E));
	x = ok(tensor_alu(C, OP_MUL, a, b, &E));
	return ok(tensor_reduce(C, OP_ADD, x, ax, 1, 0, &E));
}

static Kernel *
lower(const UOp *root, const char *name)
{
	KLowerOpts o = { name };
	Kernel *k = kernel_lower(root, &o, &E);

	if (!k)
		fail_msg("kernel_lower: %s", E.msg);
	return k;
}

static Kernel *
softmax_kernel(int64_t m, int64_t n)
{
	return lower(softmax(param("x", 0, m, n)), NULL);
}

static Kernel *
matmul_kernel(int64_t m, int64_t k, int64_t n)
{
	return lower(matmul(param("a", 0, m, k), param("b", 1, k, n)), "c");
}

/* the tiled, parallel, vectorized CPU schedule of a matmul (docs/export.md) */
static Kernel *
matmul_scheduled(int64_t m, int64_t kk, int64_t n, int64_t tile)
{
	static const char *const order[2] = { "k", "j1" };
	Kernel *k = matmul_kernel(m, kk, n), *r;
	Schedule *s = sched_new(k, NULL, &E);

	if (!s)
		fail_msg("sched_new: %s", E.msg);
	if (sched_tile(s, "c", "i", "j", tile, tile, &E) < 0 || sched_decompose_reduction(s, "c", "k", &E) < 0
	|| sched_reorder(s, "c", order, 2, &E) < 0 || sched_parallel(s, "c", "i0", &E) < 0
	|| sched_vectorize(s, "c", "j1", &E) < 0)
		fail_msg("schedule: %s", E.msg);
	if (!(r = kernel_clone(s->k, &E)))
		fail_msg("clone: %s", E.msg);
	sched_free(s);
	kernel_free(k);
	return r;
}

/* ---- sources ---- */

static char *
source(const Kernel *k)
{
	Buf b;

	buf_init(&b);
	if (backend_source(&b, k, D_C, &E) < 0)
		fail_msg("backend_source: %s", E.msg);
	return buf_take(&b);
}

/* the refusal's message, which must contain want */
static void
refused(const Kernel *k, const char *want)
{
	Buf b;

	buf_init(&b);
	if (backend_source(&b, k, D_C, &E) == 0)
		fail_msg("backend_source accepted a kernel it should refuse (%s):\n%s", want, b.s);
	buf_free(&b);
	if (!strstr(E.msg, want))
		fail_msg("\"%s\" is not in: %s", want, E.msg);
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
		f = fopen(path, "wb");
		assert_non_null(f);
		fputs(got, f);
		fclose(f);
		return;
	}
	f = fopen(path, "rb");
	if (!f)
		fail_msg("%s is missing (run with TESSEL_GOLDEN_UPDATE=1 to write it)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	want = malloc((size_t)n + 1);
	assert_non_null(want);
	assert_int_equal(fread(want, 1, (size_t)n, f), (size_t)n);
	want[n] = '\0';
	fclose(f);
	if (strcmp(want, got) != 0) {
		free(want);
		fail_msg("the emitted C differs from %s:\n%s", path, got);
	}
	free(want);
}

/* ---- buffers and runs ---- */

/* buffer b of k filled from v (or seeded random values when v is NULL) */
static void
fill(const Kernel *k, TBuf *t, int b, const double *v)
{
	const KBuf *kb = &k->buf[b];
	int64_t n = 1, i;
	int bytes = dtype_bytes(kb->dtype);

	for (i = 0; i < kb->ndim; i++)
		n *= kb->shape[i];
	memset(t, 0, sizeof *t);
	t->dtype = kb->dtype;
	t->ndim = kb->ndim;
	memcpy(t->shape, kb->shape, sizeof t->shape);
	t->numel = n;
	t->axis = -1;
	t->data = malloc((size_t)n * bytes + 1);
	assert_non_null(t->data);
	for (i = 0; i < n; i++)
		dtype_store_f(kb->dtype, (unsigned char *)t->data + i * bytes, v ? v[i] : frand());
}

static TBuf *
inputs(const Kernel *k)
{
	TBuf *t = calloc(k->nbuf, sizeof *t);
	int i;

	assert_non_null(t);
	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_INPUT)
			fill(k, &t[i], i, NULL);
	return t;
}

static void
freebufs(TBuf *t, int n)
{
	int i;

	for (i = 0; t && i < n; i++)
		tbuf_free(&t[i]);
	free(t);
}

static TBuf *
copy_inputs(const Kernel *k, const TBuf *in)
{
	TBuf *t = calloc(k->nbuf, sizeof *t);
	int i;

	assert_non_null(t);
	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_INPUT) {
			size_t bytes = (size_t)in[i].numel * dtype_bytes(in[i].dtype);

			t[i] = in[i];
			t[i].data = malloc(bytes + 1);
			assert_non_null(t[i].data);
			memcpy(t[i].data, in[i].data, bytes);
		}
	return t;
}

static int
same_bits(DType t, const void *a, const void *b, int bytes)
{
	return memcmp(a, b, bytes) == 0 || (dtype_is_float(t) && isnan(dtype_load_f(t, a)) && isnan(dtype_load_f(t, b)));
}

/*
** k through the JIT (its own cross-check on) and through the interpreter
** separately; every output must agree bit for bit. The JIT's buffers come
** back (the caller frees them).
*/
static TBuf *
run_both(const Kernel *k, const TBuf *in, BJitStats *st)
{
	BJitOpts o = { 0 };
	TBuf *jb = copy_inputs(k, in), *ib = copy_inputs(k, in);
	int i;
	int64_t j;

	o.cache = Cache;
	o.stats = st;
	if (backend_jit_run(k, jb, &o, &E) < 0) {
		if (getenv("TESSEL_SHOW")) {
			Buf b;
			Err e2;

			buf_init(&b);
			kernel_print(&b, k, 0);
			fprintf(stderr, "%s\n", b.s ? b.s : "");
			buf_reset(&b);
			if (backend_source(&b, k, D_C, &e2) == 0)
				fprintf(stderr, "%s\n", b.s);
			buf_free(&b);
		}
		fail_msg("backend_jit_run: %s (seed %u)", E.msg, seed);
	}
	if (kernel_run(k, NULL, ib, NULL, &E) < 0)
		fail_msg("kernel_run: %s", E.msg);
	for (i = 0; i < k->nbuf; i++) {
		int bytes = dtype_bytes(k->buf[i].dtype);

		if (k->buf[i].role != KB_OUTPUT)
			continue;
		assert_non_null(jb[i].data);
		assert_int_equal(jb[i].numel, ib[i].numel);
		for (j = 0; j < jb[i].numel; j++)
			if (!same_bits(jb[i].dtype, (char *)jb[i].data + j * bytes, (char *)ib[i].data + j * bytes, bytes))
				fail_msg("%s[%lld]: compiled %.9g, interpreted %.9g (seed %u)", k->buf[i].name, (long long)j,
				         tbuf_get(&jb[i], j), tbuf_get(&ib[i], j), seed);
	}
	freebufs(ib, k->nbuf);
	return jb;
}

/* ---- building kernels by hand (kernel_test.h) ---- */

static void
checked(void)
{
	if (kernel_check(K, NULL, &E) < 0)
		fail_msg("kernel_check: %s", E.msg);
}

/* ---- golden sources ---- */

static void
test_golden_softmax(void **state)
{
	Kernel *k = softmax_kernel(4, 8);
	char *s = source(k);

	golden("backend_c_softmax.c", s);
	free(s);
	kernel_free(k);
}

static void
test_golden_matmul_scheduled(void **state)
{
	Kernel *k = matmul_scheduled(64, 64, 64, 16);
	char *s = source(k);

	golden("backend_c_matmul.c", s);
	free(s);
	kernel_free(k);
}

/* ---- runs ---- */

static void
test_jit_softmax(void **state)
{
	Kernel *k = softmax_kernel(33, 100);
	TBuf *in = inputs(k), *out;
	int out_b = kernel_find_buffer(k, "out"), i, j;

	assert_true(out_b >= 0);
	out = run_both(k, in, NULL);
	/* against the definition in double: close, and rows sum to 1 */
	for (i = 0; i < 33; i++) {
		double mx = -INFINITY, sum = 0, rs = 0;
		const float *x = (const float *)in[0].data + i * 100;

		for (j = 0; j < 100; j++)
			mx = fmax(mx, x[j]);
		for (j = 0; j < 100; j++)
			sum += exp(x[j] - mx);
		for (j = 0; j < 100; j++) {
			double want = exp(x[j] - mx) / sum;

			assert_true(fabs(getf(&out[out_b], i * 100 + j) - want) <= 1e-6);
			rs += getf(&out[out_b], i * 100 + j);
		}
		assert_true(fabs(rs - 1) <= 1e-5);
	}
	freebufs(out, k->nbuf);
	freebufs(in, k->nbuf);
	kernel_free(k);
}

/* c = a b summed in k order in float32, as the lowered kernel and the interpreter do */
static void
plain_matmul(const float *a, const float *b, float *c, int m, int kk, int n)
{
	int i, j, l;

	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			float acc = 0;

			for (l = 0; l < kk; l++) {
				float p = a[i * kk + l] * b[l * n + j];

				acc = acc + p;
			}
			c[i * n + j] = acc;
		}
}

static void
matmul_case(Kernel *k, int m, int kk, int n)
{
	TBuf *in = inputs(k), *out;
	int cb = kernel_find_buffer(k, "c"), i;
	float *want = malloc(sizeof *want * m * n);

	assert_non_null(want);
	out = run_both(k, in, NULL);
	plain_matmul(in[0].data, in[1].data, want, m, kk, n);
	for (i = 0; i < m * n; i++)
		if (memcmp(&want[i], (float *)out[cb].data + i, 4) != 0)
			fail_msg("c[%d]: %.9g, plain C %.9g", i, getf(&out[cb], i), want[i]);
	free(want);
	freebufs(out, k->nbuf);
	freebufs(in, k->nbuf);
}

static void
test_jit_matmul(void **state)
{
	Kernel *k = matmul_kernel(24, 40, 56);

	matmul_case(k, 24, 40, 56);
	kernel_free(k);
}

static void
test_jit_matmul_scheduled(void **state)
{
	Kernel *k = matmul_scheduled(64, 48, 64, 16);
	char *s = source(k);

	assert_non_null(strstr(s, "#pragma omp parallel for\n"));
	/* the 16 columns as one vector of the dtype (vector_lanes.c), checked bit for bit below */
	assert_non_null(strstr(s, " += 16) {  /* upcast: 16 lanes at once */\n"));
	assert_non_null(strstr(s, "tessel_f32x16 b_v;\n"));
	free(s);
	matmul_case(k, 64, 48, 64);
	kernel_free(k);
}

/* A[64, 64] -> B transposed through a 32x32 shared tile: blocks (by, bx), threads (ty, tx) */
static void
build_transpose(int barrier)
{
	UOp *by = var("by", 2), *bx = var("bx", 2), *ty = var("ty", 32), *tx = var("tx", 32), *body;
	int A = mkbuf("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)64, (int64_t)64);
	int B = mkbuf("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)64, (int64_t)64);
	int T = mkbuf("tile", DT_FLOAT32, AS_LOCAL, KB_TEMP, 2, (int64_t)32, (int64_t)32);
	UOp *load = st(at(T, 2, ty, tx), ld(at(A, 2, add(mul(by, I(32)), ty), add(mul(bx, I(32)), tx))));
	UOp *out = st(at(B, 2, add(mul(bx, I(32)), ty), add(mul(by, I(32)), tx)), ld(at(T, 2, tx, ty)));

	body = barrier ? seq(3, load, kernel_barrier(K), out) : seq(2, load, out);
	stage("transpose", loop(by, HW_BLOCK_Y, 1, loop(bx, HW_BLOCK_X, 1, loop(ty, HW_THREAD_Y, 1,
	      loop(tx, HW_THREAD_X, 1, body)))));
}

static void
test_transpose_barrier_refused(void **state)
{
	TBuf bufs[3] = { { 0 } };
	BJitOpts o = { 0 };

	build_transpose(1);
	checked();
	refused(K, "c: stage transpose: the barrier in loops by, bx, ty, tx needs the threads of a block to "
	        "run together; C runs a block's threads one after another");
	/* the JIT says the same before it compiles or allocates anything */
	fill(K, &bufs[0], 0, NULL);
	o.cache = Cache;
	assert_int_equal(backend_jit_run(K, bufs, &o, &E), -1);
	assert_non_null(strstr(E.msg, "c: stage transpose: the barrier in loops by, bx, ty, tx"));
	assert_null(bufs[1].data);
	assert_int_equal(backend_jit_cache_size(Cache), 0);
	tbuf_free(&bufs[0]);
}

/* One thread per block copies its tile through shared memory: no barrier needed, C runs it. */
static void
test_transpose_shared(void **state)
{
	UOp *by = var("by", 2), *bx = var("bx", 2), *i = var("i", 32), *j = var("j", 32);
	int A = mkbuf("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)64, (int64_t)64);
	int B = mkbuf("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)64, (int64_t)64);
	int T = mkbuf("tile", DT_FLOAT32, AS_LOCAL, KB_TEMP, 2, (int64_t)32, (int64_t)33);
	UOp *in = loop(i, HW_NONE, 1, loop(j, HW_NONE, 1, st(at(T, 2, i, j),
	              ld(at(A, 2, add(mul(by, I(32)), i), add(mul(bx, I(32)), j))))));
	UOp *out = loop(i, HW_NONE, 1, loop(j, HW_NONE, 1, st(at(B, 2, add(mul(bx, I(32)), i),
	               add(mul(by, I(32)), j)), ld(at(T, 2, j, i)))));
	TBuf *bin, *bo;
	char *s;
	int r, c;

	stage("transpose", loop(by, HW_BLOCK_Y, 1, loop(bx, HW_BLOCK_X, 1, seq(2, in, out))));
	checked();
	s = source(K);
	/* the tile is an array per block, declared inside the block loops */
	assert_non_null(strstr(s, "    for (int64_t bx = 0; bx < 2; bx++) {  /* block.x */\n"
	                          "      float tile[1056];  /* shared, one per block: row-major */\n"));
	free(s);
	bin = inputs(K);
	bo = run_both(K, bin, NULL);
	for (r = 0; r < 64; r++)
		for (c = 0; c < 64; c++)
			assert_true(getf(&bo[B], r * 64 + c) == getf(&bin[A], c * 64 + r));
	freebufs(bo, 3);
	freebufs(bin, 3);
}

/*
** Bound loops that are not one perfect nest: a register set by every thread
** outside the thread loops, then two thread loops of 8 and 4 threads in a
** block of 8. The stage runs per thread; the short loop is a guard.
*/
static void
test_threads_guarded(void **state)
{
	UOp *bx = var("bx", 3), *tx = var("tx", 8), *t4 = var("q", 4);
	int X = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)24);
	int Y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)24);
	int Z = mkbuf("Z", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)12);
	int R = mkbuf("r", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)1);
	UOp *body = seq(3, st(at(R, 1, I(0)), fc(DT_FLOAT32, 3)),
	                loop(tx, HW_THREAD_X, 1, st(at(Y, 1, add(mul(bx, I(8)), tx)),
	                     alu(OP_MUL, DT_FLOAT32, ld(at(X, 1, add(mul(bx, I(8)), tx))), ld(at(R, 1, I(0)))))),
	                loop(t4, HW_THREAD_X, 1, st(at(Z, 1, add(mul(bx, I(4)), t4)),
	                     alu(OP_ADD, DT_FLOAT32, ld(at(X, 1, add(mul(bx, I(8)), t4))), ld(at(R, 1, I(0)))))));
	TBuf *in, *out;
	char *s;
	int i;

	stage("guarded", loop(bx, HW_BLOCK_X, 1, body));
	checked();
	s = source(K);
	assert_non_null(strstr(s, "for (int64_t thread_x = 0; thread_x < 8; thread_x++) {  /* thread.x */\n"));
	assert_non_null(strstr(s, "float r[1];  /* local, one per thread: row-major */"));
	assert_non_null(strstr(s, "if (thread_x < 4) {  /* q: thread.x */\n"));
	assert_non_null(strstr(s, "{  /* tx: thread.x */\n"));
	free(s);
	in = inputs(K);
	out = run_both(K, in, NULL);
	for (i = 0; i < 24; i++)
		assert_true(getf(&out[Y], i) == getf(&in[X], i) * 3.0f);
	for (i = 0; i < 12; i++)
		assert_true(getf(&out[Z], i) == getf(&in[X], i / 4 * 8 + i % 4) + 3.0f);
	freebufs(out, 4);
	freebufs(in, 4);
}

/* warp and lane bound as one nest: thread = warp*32 + lane */
static void
test_warp_lane(void **state)
{
	UOp *w = var("w", 2), *l = var("l", 32);
	int X = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
	int Y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
	UOp *t = add(mul(w, I(32)), l);
	TBuf *in, *out;
	int i;

	stage("neg", loop(w, HW_WARP, 1, loop(l, HW_LANE, 1, st(at(Y, 1, t), alu(OP_NEG, DT_FLOAT32, ld(at(X, 1, t)), NULL)))));
	checked();
	in = inputs(K);
	out = run_both(K, in, NULL);
	for (i = 0; i < 64; i++)
		assert_true(getf(&out[Y], i) == -getf(&in[X], i));
	freebufs(out, 2);
	freebufs(in, 2);
}

/* a column-major input (CuTe (16,8):(1,16)) and a swizzled output: offsets go through the layouts */
static void
test_layouts(void **state)
{
	UOp *i = var("i", 8), *j = var("j", 16);
	int X = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)16, (int64_t)8);
	int Y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)8, (int64_t)16);
	Layout l;
	Composed cl;
	TBuf *in, *out;
	char *s;
	int r, c;

	assert_int_equal(cute_parse("(16,8):(1,16)", &l, &E), 0);
	if (kernel_layout_cute(K, X, &l, NULL, &E) < 0)
		fail_msg("layout: %s", E.msg);
	assert_int_equal(composed_parse("Sw<2,0,2> o 0 o (8,16):(16,1)", &cl, &E), 0);
	if (kernel_layout_cute(K, Y, NULL, &cl, &E) < 0)
		fail_msg("layout: %s", E.msg);
	stage("t", loop(i, HW_NONE, 1, loop(j, HW_NONE, 1, st(at(Y, 2, i, j),
	      alu(OP_MUL, DT_FLOAT32, ld(at(X, 2, j, i)), fc(DT_FLOAT32, 0.5))))));
	checked();
	s = source(K);
	assert_non_null(strstr(s, "int\ntessel_place(int b, void *dst, const void *src)\n"));
	assert_non_null(strstr(s, "int\ntessel_take(int b, void *dst, const void *src)\n"));
	free(s);
	in = inputs(K);
	out = run_both(K, in, NULL);
	for (r = 0; r < 8; r++)
		for (c = 0; c < 16; c++)
			assert_true(getf(&out[Y], r * 16 + c) == getf(&in[X], c * 8 + r) * 0.5f);
	freebufs(out, 2);
	freebufs(in, 2);
}

/* a split whose factors overshoot the extent: the body under if i0*4 + i1 < 10 */
static void
test_split_tail(void **state)
{
	int64_t ax[1] = { 1 }, f[2] = { 0, 4 };
	Kernel *k = lower(ok(tensor_reduce(C, OP_ADD, param("x", 0, 10, 6), ax, 1, 0, &E)), "out"), *sk;
	Schedule *s = sched_new(k, NULL, &E);
	TBuf *in, *out;
	char *src;
	int i, j;

	assert_non_null(s);
	if (sched_split(s, "out", "i", f, 2, &E) < 0)
		fail_msg("split: %s", E.msg);
	sk = s->k;
	src = source(sk);
	assert_non_null(strstr(src, "      if (i0 * 4 + i1 < 10) {\n"));
	free(src);
	in = inputs(sk);
	out = run_both(sk, in, NULL);
	for (i = 0; i < 10; i++) {
		float acc = 0;

		for (j = 0; j < 6; j++)
			acc = acc + ((float *)in[0].data)[i * 6 + j];
		assert_memory_equal(&acc, (float *)out[1].data + i, 4);
	}
	freebufs(out, sk->nbuf);
	freebufs(in, sk->nbuf);
	sched_free(s);
	kernel_free(k);
}

/* row max and sum over NaN, infinities and signed zeros: the interpreter's max, bit for bit */
static void
test_reductions(void **state)
{
	static const double v[4 * 3] = {
		1, NAN, 3,
		NAN, 2, 5,
		-INFINITY, -INFINITY, -INFINITY,
		-0.0, 0.0, INFINITY,
	};
	UOp *i = var("i", 4), *j = var("j", 3);
	int X = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)4, (int64_t)3);
	int M = mkbuf("M", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)4);
	int S = mkbuf("S", DT_FLOAT64, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)4);
	TBuf *in = calloc(3, sizeof *in), *out;

	assert_non_null(in);
	stage("M", loop(i, HW_NONE, 2, st(at(M, 1, i), kernel_identity(K, OP_MAX, DT_FLOAT32)),
	      loopt(j, AX_REDUCE, HW_NONE, 1, st(at(M, 1, i), alu(OP_MAX, DT_FLOAT32, ld(at(M, 1, i)),
	      ld(at(X, 2, i, j)))))));
	/* a float64 sum of float32 values: in double, as the interpreter adds */
	stage("S", loop(i, HW_NONE, 2, st(at(S, 1, i), fc(DT_FLOAT64, 0)),
	      loopt(j, AX_REDUCE, HW_NONE, 1, st(at(S, 1, i), alu(OP_ADD, DT_FLOAT64, ld(at(S, 1, i)),
	      kernel_cast(K, DT_FLOAT64, ld(at(X, 2, i, j))))))));
	checked();
	fill(K, &in[X], X, v);
	out = run_both(K, in, NULL);
	assert_true(isnan(getf(&out[M], 0)) && isnan(getf(&out[M], 1)));
	assert_true(getf(&out[M], 2) == -INFINITY);
	assert_true(getf(&out[M], 3) == INFINITY);
	assert_true(isnan(tbuf_get(&out[S], 0)) && tbuf_get(&out[S], 2) == -INFINITY);
	assert_true(tbuf_get(&out[S], 3) == INFINITY);
	freebufs(out, 3);
	freebufs(in, 3);
}

/* integers: floor division and modulo of negatives, x // 0, float to int32 saturating then wrapping */
/*
** A reduction into one element accumulates in a local variable; one that
** also reads its buffer at another element (a running sum, P[i] = P[i] +
** P[i - 1] + X[i, j]) stays in memory. Both agree with the interpreter.
*/
static void
test_promotion(void **state)
{
	UOp *i = var("i", 4), *j = var("j", 3), *i1 = var("i1", 3);
	int X = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)4, (int64_t)3);
	int S = mkbuf("S", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)4);
	int P = mkbuf("P", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)4);
	TBuf *in, *out;
	char *src;

	stage("S", loop(i, HW_NONE, 2, st(at(S, 1, i), fc(DT_FLOAT32, 1)),
	      loopt(j, AX_REDUCE, HW_NONE, 1, st(at(S, 1, i), alu(OP_ADD, DT_FLOAT32, ld(at(S, 1, i)),
	      ld(at(X, 2, i, j)))))));
	stage("P0", loop(i, HW_NONE, 1, st(at(P, 1, i), fc(DT_FLOAT32, 0))));
	stage("P", loop(i1, HW_NONE, 1, loopt(j, AX_REDUCE, HW_NONE, 1, st(at(P, 1, add(i1, I(1))),
	      alu(OP_ADD, DT_FLOAT32, alu(OP_ADD, DT_FLOAT32, ld(at(P, 1, add(i1, I(1)))), ld(at(P, 1, i1))),
	      ld(at(X, 2, i1, j)))))));
	checked();
	src = source(K);
	assert_non_null(strstr(src, "    float acc = 1.0f;\n    for (int64_t j = 0; j < 3; j++) {  /* reduce */\n"
	                            "      acc += X[i * 3 + j];\n    }\n    S[i] = acc;\n"));
	assert_non_null(strstr(src, "P[i1 + 1] = P[i1 + 1] + P[i1] + X[i1 * 3 + j];"));
	free(src);
	in = inputs(K);
	out = run_both(K, in, NULL);
	freebufs(out, K->nbuf);
	freebufs(in, K->nbuf);
}

/* Fast source: float32 functions, plain max, -O3 -ffast-math, within backend_tolerance. */
static void
test_fast(void **state)
{
	Kernel *k = softmax_kernel(33, 1000);
	TBuf *in = inputs(k), *jb = copy_inputs(k, in), *ib = copy_inputs(k, in);
	BSourceOpts so = { .fast = 1 };
	BJitOpts o = { 0 };
	int out_b = kernel_find_buffer(k, "out"), diff = 0;
	double worst = 0;
	int64_t j;
	Buf b;

	buf_init(&b);
	if (backend_source_opts(&b, k, D_C, &so, &E) < 0)
		fail_msg("backend_source_opts: %s", E.msg);
	assert_non_null(strstr(b.s, "exp2f("));
	assert_non_null(strstr(b.s, "tessel_fmaxf(acc, x[i * 1000 + j])"));
	assert_null(strstr(b.s, "(double)"));
	buf_free(&b);
	o.cache = Cache;
	o.fast = 1;
	if (backend_jit_run(k, jb, &o, &E) < 0)
		fail_msg("backend_jit_run fast: %s", E.msg);
	if (kernel_run(k, NULL, ib, NULL, &E) < 0)
		fail_msg("kernel_run: %s", E.msg);
	for (j = 0; j < jb[out_b].numel; j++) {
		double g = getf(&jb[out_b], j), w = getf(&ib[out_b], j);

		diff += g != w;
		worst = fmax(worst, fabs(g - w) / fmax(fabs(w), 1e-30));
	}
	/* close (a few float32 ulps: exp2f and a reassociated sum), and not the interpreter's bits */
	assert_true(worst < 1e-5);
	assert_true(diff > 0);
	assert_true(backend_tolerance(DT_FLOAT32) == 1e-4 && backend_tolerance(DT_INT32) == 0);
	freebufs(jb, k->nbuf);
	freebufs(ib, k->nbuf);
	freebufs(in, k->nbuf);
	kernel_free(k);
}

static void
test_integers(void **state)
{
	static const double a[6] = { -7, 7, -7, 7, 9, -1 }, b[6] = { 2, -2, -2, 0, 4, 3 };
	static const double f[6] = { 2.9, -2.9, 1e10, -1e30, NAN, 2147483648.0 };
	UOp *i = var("i", 6);
	int A = mkbuf("A", DT_INT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)6);
	int B = mkbuf("B", DT_INT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)6);
	int F = mkbuf("F", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)6);
	int Q = mkbuf("Q", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)6);
	int R = mkbuf("R", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)6);
	int T = mkbuf("T", DT_INT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)6);
	TBuf *in = calloc(6, sizeof *in), *out;
	static const int32_t q[6] = { -4, -4, 3, 0, 2, -1 }, r[6] = { 1, -1, -1, 0, 1, 2 };
	int k;

	assert_non_null(in);
	stage("ints", loop(i, HW_NONE, 3,
	      st(at(Q, 1, i), alu(OP_IDIV, DT_INT32, ld(at(A, 1, i)), ld(at(B, 1, i)))),
	      st(at(R, 1, i), alu(OP_MOD, DT_INT32, ld(at(A, 1, i)), ld(at(B, 1, i)))),
	      st(at(T, 1, i), kernel_cast(K, DT_INT32, ld(at(F, 1, i))))));
	checked();
	fill(K, &in[A], A, a);
	fill(K, &in[B], B, b);
	fill(K, &in[F], F, f);
	out = run_both(K, in, NULL);
	for (k = 0; k < 6; k++) {
		assert_int_equal(((int32_t *)out[Q].data)[k], q[k]);
		assert_int_equal(((int32_t *)out[R].data)[k], r[k]);
		assert_int_equal(((int32_t *)out[T].data)[k], (int32_t)dtype_ftoi(DT_INT32, (float)f[k]));
	}
	assert_int_equal(((int32_t *)out[T].data)[0], 2);
	assert_int_equal(((int32_t *)out[T].data)[1], -2);
	assert_int_equal(((int32_t *)out[T].data)[4], 0);
	freebufs(out, 6);
	freebufs(in, 6);
}

/* names C reserves: a buffer int, a loop variable double, a stage main, a buffer named like a libm function */
static void
test_names(void **state)
{
	UOp *d = var("double", 4);
	int X = mkbuf("exp2", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)4);
	int Y = mkbuf("int", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)4);
	TBuf *in, *out;
	char *s;
	int i;

	stage("main", loop(d, HW_NONE, 1, st(at(Y, 1, d), alu(OP_EXP2, DT_FLOAT32, ld(at(X, 1, d)), NULL))));
	checked();
	s = source(K);
	assert_non_null(strstr(s, "static void\nmain_stage(const float *restrict exp2_buf, float *restrict int_buf)\n"));
	assert_non_null(strstr(s, "for (int64_t double_ = 0; double_ < 4; double_++) {"));
	assert_non_null(strstr(s, "int_buf[double_] = (float)exp2(exp2_buf[double_]);"));
	free(s);
	in = inputs(K);
	out = run_both(K, in, NULL);
	for (i = 0; i < 4; i++)
		assert_true(getf(&out[Y], i) == (float)exp2(getf(&in[X], i)));
	freebufs(out, 2);
	freebufs(in, 2);
}

/* Names in the emitter's own namespace (tessel_*, __*, _X*) get k_ before them: no suffix
** leaves that namespace (a stage named tessel_kernel once renamed itself forever). */
static void
test_names_reserved(void **state)
{
	UOp *v = var("tessel_i", 4);
	int X = mkbuf("tessel_maxf", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)4);
	int Y = mkbuf("__y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)4);
	TBuf *in, *out;
	char *s;

	stage("tessel_kernel", loop(v, HW_NONE, 1, st(at(Y, 1, v), alu(OP_MAX, DT_FLOAT32, ld(at(X, 1, v)),
	      fc(DT_FLOAT32, 0)))));
	stage("tessel_kernel_stage", loop(v, HW_NONE, 1, st(at(Y, 1, v), alu(OP_ADD, DT_FLOAT32, ld(at(Y, 1, v)),
	      fc(DT_FLOAT32, 1)))));
	checked();
	s = source(K);
	assert_non_null(strstr(s, "static void\nk_tessel_kernel(const float *restrict k_tessel_maxf, float *restrict k___y)\n"));
	assert_non_null(strstr(s, "static void\nk_tessel_kernel_stage(float *restrict k___y)\n"));
	assert_non_null(strstr(s, "k___y[k_tessel_i] = tessel_maxf(k_tessel_maxf[k_tessel_i], 0.0f);"));
	free(s);
	in = inputs(K);
	out = run_both(K, in, NULL);
	freebufs(out, 2);
	freebufs(in, 2);
}

/* A parallel loop whose iterations depend on one another (hand-written): serial, and right. */
static void
test_parallel_dependent(void **state)
{
	UOp *i = var("i", 8);
	int X = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)8);
	int S = mkbuf("S", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)1);
	TBuf *in, *out;
	char *s;
	float acc = 0;
	int k;

	stage("S", seq(2, st(at(S, 1, I(0)), fc(DT_FLOAT32, 0)), loopt(i, AX_THREAD, HW_NONE, 1,
	      st(at(S, 1, I(0)), alu(OP_ADD, DT_FLOAT32, ld(at(S, 1, I(0))), ld(at(X, 1, i)))))));
	s = source(K);
	assert_null(strstr(s, "#pragma omp"));
	assert_non_null(strstr(s, "  /* serial: "));
	free(s);
	in = inputs(K);
	out = run_both(K, in, NULL);
	for (k = 0; k < 8; k++)
		acc = acc + getf(&in[X], k);
	assert_memory_equal(&acc, out[S].data, 4);
	freebufs(out, 2);
	freebufs(in, 2);
}

/*
** A parallel loop inside a vector (UPCAST) loop: OpenMP admits no parallel
** region inside simd, so it runs serial there; and a reduction kept in a local
** across a loop is loaded only where every variable of its index is declared
** (after decompose_reduction and a reorder, j is inside k: no local across k).
*/
static void
test_nesting(void **state)
{
	UOp *i = var("i", 2), *j = var("j", 8), *k = var("k", 4);
	int X = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)2, (int64_t)8);
	int Y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)2, (int64_t)8);
	int A = mkbuf("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)4, (int64_t)8);
	int Z = mkbuf("Z", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2, (int64_t)2, (int64_t)8);
	TBuf *in, *out;
	char *s;

	stage("V", loopt(i, AX_UPCAST, HW_NONE, 1, loopt(j, AX_THREAD, HW_NONE, 1,
	      st(at(Y, 2, i, j), alu(OP_MUL, DT_FLOAT32, ld(at(X, 2, i, j)), fc(DT_FLOAT32, 2))))));
	stage("R0", loop(i, HW_NONE, 1, loop(j, HW_NONE, 1, st(at(Z, 2, i, j), fc(DT_FLOAT32, 0)))));
	stage("R", loop(i, HW_NONE, 1, loopt(k, AX_REDUCE, HW_NONE, 1, loop(j, HW_NONE, 1,
	      st(at(Z, 2, i, j), alu(OP_ADD, DT_FLOAT32, ld(at(Z, 2, i, j)), ld(at(A, 2, k, j))))))));
	s = source(K);
	assert_null(strstr(s, "#pragma omp parallel"));
	assert_non_null(strstr(s, "/* serial: inside the vector loop i */"));
	assert_null(strstr(s, "acc"));
	free(s);
	in = inputs(K);
	out = run_both(K, in, NULL);
	freebufs(out, 4);
	freebufs(in, 4);
}

static void
test_refusals(void **state)
{
	UOp *i = var("i", 8), *j = var("j", 4);
	int X = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)8);
	int Y = mkbuf("Y", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)8);
	Kernel *h;

	/* an index divided by a loop variable that can be 0 */
	stage("div", loop(i, HW_NONE, 1, loop(j, HW_NONE, 1, st(at(Y, 1, i), ld(at(X, 1, uop_idiv(K->c, i, j)))))));
	refused(K, "c: stage div: the index expression i//j may divide by zero (its divisor ranges over [0, 3])");
	/* float16 */
	h = kernel_new();
	assert_non_null(h);
	{
		int64_t sh[1] = { 4 };

		assert_true(kernel_add_buffer(h, "hx", DT_FLOAT16, AS_GLOBAL, KB_INPUT, sh, 1, &E) >= 0);
		refused(h, "c: buffer hx is float16; the C backend has no float16 arithmetic");
	}
	kernel_free(h);
	/* a dialect that is not a device's */
	{
		Buf b;

		buf_init(&b);
		assert_int_equal(backend_source(&b, K, D_LUA, &E), -1);
		assert_non_null(strstr(E.msg, "not a device dialect"));
		buf_free(&b);
	}
}

static void
test_compiler_errors(void **state)
{
	Kernel *k = softmax_kernel(2, 3);
	TBuf *in = inputs(k);
	BJitOpts o = { 0 };
	const char *bad[] = { "-fno-such-flag-tessel", NULL }, *strict[] = { "-Werror=missing-prototypes", NULL };

	/* an invalid flag: the compiler's message */
	o.flags = bad;
	assert_int_equal(backend_jit_run(k, in, &o, &E), -1);
	assert_non_null(strstr(E.msg, "jit: cc failed (exit 1): "));
	assert_non_null(strstr(E.msg, "-fno-such-flag-tessel"));
	/* an error in the source: the message and the emitted line it points at */
	o.flags = strict;
	assert_int_equal(backend_jit_run(k, in, &o, &E), -1);
	assert_non_null(strstr(E.msg, "jit: cc failed (exit 1): k1.c:"));
	assert_non_null(strstr(E.msg, ": error: no previous prototype for 'tessel_kernel' [-Werror=missing-prototypes]\n"
	                              "  emitted line: tessel_kernel(void **bufs)"));
	/* no compiler */
	o.flags = NULL;
	o.cc = "no-such-compiler-tessel";
	assert_int_equal(backend_jit_run(k, in, &o, &E), -1);
	assert_string_equal(E.msg, "jit: the C compiler no-such-compiler-tessel is not in PATH (install gcc: "
	                    "apt-get install gcc)");
	/* nothing came back */
	assert_null(in[3].data);
	freebufs(in, k->nbuf);
	kernel_free(k);
}

static void
test_cache(void **state)
{
	Kernel *k = softmax_kernel(8, 16);
	TBuf *in = inputs(k), *a, *b;
	BJitStats st;

	a = run_both(k, in, &st);
	assert_int_equal(st.cached, 0);
	assert_true(st.compile_s > 0);
	b = run_both(k, in, &st);
	assert_int_equal(st.cached, 1);
	assert_true(st.compile_s == 0);
	assert_true(st.check_s > 0);
	assert_int_equal(backend_jit_cache_size(Cache), 1);
	assert_memory_equal(a[3].data, b[3].data, 8 * 16 * 4);
	freebufs(a, k->nbuf);
	freebufs(b, k->nbuf);
	freebufs(in, k->nbuf);
	kernel_free(k);
}

/* the JIT refuses bad inputs as kernel_run does, before compiling */
static void
test_bad_inputs(void **state)
{
	Kernel *k = softmax_kernel(2, 3);
	TBuf in[4] = { { 0 } };
	BJitOpts o = { 0 };

	o.cache = Cache;
	assert_int_equal(backend_jit_run(k, in, &o, &E), -1);
	assert_string_equal(E.msg, "jit: no data for input x");
	fill(k, &in[0], 0, NULL);
	in[0].numel = 5;
	assert_int_equal(backend_jit_run(k, in, &o, &E), -1);
	assert_string_equal(E.msg, "jit: input x: 5 elements of float32 given, 6 of float32 declared");
	assert_int_equal(backend_jit_cache_size(Cache), 0);
	tbuf_free(&in[0]);
	kernel_free(k);
}


/* ---- random expressions: every operation the emitter knows, against the interpreter ---- */

typedef struct Gen {
	UOp *i;
	int X, Y, N;        /* float32, float64, int32 inputs */
} Gen;

static DType
rdtype(void)
{
	static const DType t[] = { DT_FLOAT32, DT_FLOAT32, DT_FLOAT64, DT_INT32, DT_INT64, DT_UINT8, DT_BOOL,
	                           DT_FLOAT32, DT_INT8, DT_INT16, DT_UINT16, DT_UINT32, DT_UINT64 };

	return t[rand() % (int)(sizeof t / sizeof t[0])];
}

static UOp *
leaf(Gen *g)
{
	static const double c[] = { 0.0, -0.0, 1.0, -2.5, 0.1, 3.0, 1e30, -7.0, 0.3333333333 };

	switch (rand() % 8) {
	case 7: {
		/* a gated load: 0 where the gate fails, memory untouched */
		UOp *c[2] = { g->i, I(rand() % 64) };

		return kernel_load(K, at(g->Y, 1, g->i), kernel_alu(K, OP_CMPLT, DT_BOOL, c, 2));
	}
	case 0: return ld(at(g->X, 1, g->i));
	case 1: return ld(at(g->Y, 1, g->i));
	case 2: return ld(at(g->N, 1, g->i));
	case 3: return ld(at(g->X, 1, uop_sub(K->c, I(63), g->i)));
	case 4: return kernel_cast(K, DT_INT64, g->i);   /* not index arithmetic: x // 0 is 0 */
	case 5: return fc(rand() % 2 ? DT_FLOAT32 : DT_FLOAT64, c[rand() % (int)(sizeof c / sizeof c[0])]);
	default: return uop_const(K->c, DT_INT32, rand() % 9 - 4);
	}
}

static UOp *
rexpr(Gen *g, int depth)
{
	static const Op bin[] = { OP_ADD, OP_SUB, OP_MUL, OP_IDIV, OP_MOD, OP_MIN, OP_MAX, OP_POW, OP_CMPLT,
	                          OP_CMPNE, OP_CMPEQ, OP_AND, OP_OR, OP_XOR, OP_SHL, OP_SHR };
	static const Op un[] = { OP_NEG, OP_RECIP, OP_TRUNC, OP_EXP2, OP_LOG2, OP_SIN, OP_SQRT };
	UOp *s[3];
	int r = rand() % 10;
	DType t = rdtype();

	if (depth <= 0 || r < 2)
		return leaf(g);
	if (r < 4) {
		s[0] = rexpr(g, depth - 1);
		return kernel_alu(K, un[rand() % (int)(sizeof un / sizeof un[0])], t, s, 1);
	}
	if (r < 5)
		return kernel_cast(K, t, rexpr(g, depth - 1));
	if (r < 6) {
		s[0] = rexpr(g, depth - 1);
		s[1] = rexpr(g, depth - 1);
		s[2] = rexpr(g, depth - 1);
		return kernel_alu(K, rand() % 2 ? OP_WHERE : OP_MULACC, t, s, 3);
	}
	s[0] = rexpr(g, depth - 1);
	s[1] = rexpr(g, depth - 1);
	return kernel_alu(K, bin[rand() % (int)(sizeof bin / sizeof bin[0])], t, s, 2);
}

/* TESSEL_FUZZ=n runs n kernels instead of 12 */
static void
test_random_values(void **state)
{
	const char *env = getenv("TESSEL_FUZZ");
	int round, rounds = env ? atoi(env) : 12;

	for (round = 0; round < rounds; round++) {
		Gen g;
		UOp *st_[8];
		TBuf *in, *out;
		int outs[8], k;
		char name[16];

		kernel_free(K);
		K = kernel_new();
		assert_non_null(K);
		g.i = var("i", 64);
		g.X = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
		g.Y = mkbuf("Y", DT_FLOAT64, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
		g.N = mkbuf("N", DT_INT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
		for (k = 0; k < 8; k++) {
			snprintf(name, sizeof name, "o%d", k);
			outs[k] = mkbuf(name, rdtype(), AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
			st_[k] = st(at(outs[k], 1, g.i), rexpr(&g, 4));
			if (k % 3 == 2) {
				/* a shared subexpression, used twice (a named constant), under a data-dependent if */
				UOp *e = rexpr(&g, 3), *two[2], *gate[2];

				two[0] = e;
				two[1] = e;
				gate[0] = rexpr(&g, 2);
				gate[1] = fc(DT_FLOAT32, 0.25);
				st_[k] = kernel_if(K, kernel_alu(K, OP_CMPLT, DT_BOOL, gate, 2), (UOp *[]){
				         st(at(outs[k], 1, g.i), kernel_alu(K, OP_ADD, (DType)e->dtype, two, 2)) }, 1);
				st_[k] = seq(2, st(at(outs[k], 1, g.i), fc(DT_FLOAT32, 0)), st_[k]);
			}
		}
		stage("values", kernel_loop(K, kernel_range(K, g.i, AX_LOOP, HW_NONE), st_, 8));
		in = inputs(K);
		/* special values among the random ones */
		((float *)in[g.X].data)[0] = NAN;
		((float *)in[g.X].data)[1] = INFINITY;
		((float *)in[g.X].data)[2] = -0.0f;
		((double *)in[g.Y].data)[3] = -INFINITY;
		for (k = 0; k < 64; k++)
			((int32_t *)in[g.N].data)[k] = rand() % 21 - 10;
		((int32_t *)in[g.N].data)[4] = INT32_MIN;
		out = run_both(K, in, NULL);
		freebufs(out, K->nbuf);
		freebufs(in, K->nbuf);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_golden_softmax, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_golden_matmul_scheduled, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_jit_softmax, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_jit_matmul, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_jit_matmul_scheduled, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_transpose_barrier_refused, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_transpose_shared, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_threads_guarded, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_warp_lane, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_layouts, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_split_tail, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_reductions, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_promotion, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_fast, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_integers, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_names, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_names_reserved, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_parallel_dependent, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_refusals, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_compiler_errors, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_cache, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_bad_inputs, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_random_values, setup_jit, teardown_jit),
		cmocka_unit_test_setup_teardown(test_nesting, setup_jit, teardown_jit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

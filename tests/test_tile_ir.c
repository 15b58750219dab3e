/* test_tile_ir.c - the tile view: Neptune's Figures 4 and 14, partitioning, relaxation, reconciliation. */
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
#include "../interp/sched/tile_ir.h"
#include "kernel_test.h"

#define LOG2E 1.4426950408889634

/* ---- building kernels by hand (and kernel_test.h) ---- */

static int
buf(const char *name, KRole r, int n, int64_t d0, int64_t d1)
{
	int64_t s[2] = { d0, d1 };
	int b = kernel_add_buffer(K, name, DT_FLOAT32, AS_GLOBAL, r, s, n, &E);

	if (b < 0)
		fail_msg("buffer %s: %s", name, E.msg);
	return b;
}

static UOp *
ix(int b, UOp *i, UOp *j)
{
	UOp *idx[2] = { i, j };

	return kernel_index(K, b, idx, j ? 2 : 1);
}

/* b at (i), or at (i, j) where j is not NULL */
static UOp *ldij(int b, UOp *i, UOp *j) { return kernel_load(K, ix(b, i, j), NULL); }
static UOp *stij(int b, UOp *i, UOp *j, UOp *v) { return kernel_store(K, ix(b, i, j), v, NULL); }

/* op on a and b in float32; b NULL: a unary op */
static UOp *
falu(Op op, UOp *a, UOp *b)
{
	UOp *s[2] = { a, b };

	return kernel_alu(K, op, DT_FLOAT32, s, b ? 2 : 1);
}

/* exp(x) as tensor programs write it: exp2(x * log2 e) */
static UOp *
fexp(UOp *x)
{
	return falu(OP_EXP2, falu(OP_MUL, x, kernel_const(K, DT_FLOAT32, LOG2E)), NULL);
}

/* X[I] = op(X[I], v) */
static UOp *
update(int b, UOp *i, UOp *j, Op op, UOp *v)
{
	UOp *x = ix(b, i, j);

	return kernel_store(K, x, falu(op, kernel_load(K, x, NULL), v), NULL);
}

static UOp *
loopn(UOp *v, AxisType t, HwAxis hw, UOp *const *body, int n)
{
	return kernel_loop(K, kernel_range(K, v, t, hw), body, n);
}

/* a plain loop over v around one statement */
static UOp *
loop1(UOp *v, UOp *body)
{
	return loopn(v, AX_LOOP, HW_NONE, &body, 1);
}

/* the kernel passes the verifier and prints as want */
static void
assert_tile_ir(const char *want)
{
	Buf b;

	buf_init(&b);
	if (kernel_check(K, &b, &E) < 0)
		fail_msg("kernel_check: %s", E.msg);
	buf_reset(&b);
	if (tile_ir_print(&b, K, &E) < 0)
		fail_msg("tile_ir_print: %s", E.msg);
	if (getenv("TESSEL_SHOW"))
		print_message("%s", b.s);
	if (strcmp(b.s, want) != 0) {
		print_message("got:\n%s\nwant:\n%s\n", b.s, want);
		buf_free(&b);
		fail_msg("the tile IR differs");
	}
	buf_free(&b);
}

/* the names of the inner loops of store s in stage st, joined by spaces */
static void
assert_inner(int st, const UOp *s, const char *want)
{
	const UOp *r[16];
	char got[128] = "";
	int n = tile_ir_inner(K, st, s, r, 16, &E), i;

	if (n < 0)
		fail_msg("tile_ir_inner: %s", E.msg);
	for (i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", krange_var(r[i])->name);
	assert_string_equal(got, want);
}

/* ---- the paper's figures ---- */

/*
** Figure 4 with N=2, M=3, R=4, C=5: the two (r, c) nests of one (i, j)
** iteration are a sequence, so partitioning stops at j; the exp2d nest reads
** inp transposed (permute), the max1d nest reduces c (dim 1 of the exp2d
** tile). The figure's reduce drops the running max1d; the view keeps it.
*/
static void
test_figure4(void **state)
{
	int inp = buf("inp", KB_INPUT, 2, 15, 8), out = buf("max1d", KB_OUTPUT, 1, 8, 0);
	int e2 = buf("exp2d", KB_TEMP, 2, 8, 15);
	UOp *i = var("i", 2), *j = var("j", 3), *r = var("r", 4), *c = var("c", 5), *row, *col, *s1, *s2, *seq[2];

	(void)state;
	row = add(mul(i, I(4)), r);
	col = add(mul(j, I(5)), c);
	s1 = stij(e2, row, col, fexp(ldij(inp, col, row)));
	s2 = update(out, row, NULL, OP_MAX, ldij(e2, row, col));
	seq[0] = loop1(r, loop1(c, s1));
	seq[1] = loop1(r, loop1(c, s2));
	stage("fig4", loop1(i, loopn(j, AX_LOOP, HW_NONE, seq, 2)));
	assert_tile_ir("# inputs: inp: float32[15, 8]\n"
	               "# outputs: max1d: float32[8]\n"
	               "# buffers: exp2d: float32[8, 15]\n"
	               "# fig4\n"
	               "for i, j in grid(2, 3):\n"
	               "  exp2d[i*4 : i*4 + 4, j*5 : j*5 + 5] = "
	               "exp(permute(inp[j*5 : j*5 + 5, i*4 : i*4 + 4], order=(1, 0)))\n"
	               "  max1d[i*4 : i*4 + 4] = max(max1d[i*4 : i*4 + 4], "
	               "reduce(max, exp2d[i*4 : i*4 + 4, j*5 : j*5 + 5], dim=1))\n");
	assert_inner(0, s1, "r c");
	assert_inner(0, s2, "r c");
}

/*
** Figure 14 from Figure 11: the body of j1 is a sequence, so the partitions
** of max_local and sum_local are ((i, j1), (j2)); every other store keeps no
** inner loop. The reduce numbers the dimensions of its argument's tile (one
** here: dim=0); the figure writes dim=1, the dimension of inputs.
*/
static void
test_figure14(void **state)
{
	int in = buf("inputs", KB_INPUT, 2, 2, 4), xsum = buf("xsum", KB_OUTPUT, 1, 2, 0);
	int x0 = buf("xmax_0", KB_TEMP, 1, 2, 0), x1 = buf("xmax_1", KB_TEMP, 1, 2, 0);
	int x1p = buf("xmax_1p", KB_TEMP, 2, 2, 2), sp = buf("xsump", KB_TEMP, 2, 2, 2);
	UOp *i = var("i", 2), *j1 = var("j1", 2), *j2 = var("j2", 2), *col, *maxl, *suml, *body[5], *outer[2];

	(void)state;
	col = add(mul(j1, I(2)), j2);
	maxl = update(x1p, i, j1, OP_MAX, ldij(in, i, col));
	suml = update(sp, i, j1, OP_ADD, fexp(falu(OP_SUB, ldij(in, i, col), ldij(x1, i, NULL))));
	body[0] = loop1(j2, maxl);
	body[1] = update(x1, i, NULL, OP_MAX, ldij(x1p, i, j1));
	body[2] = loop1(j2, suml);
	body[3] = stij(xsum, i, NULL, falu(OP_ADD, falu(OP_MUL, fexp(falu(OP_SUB, ldij(x0, i, NULL), ldij(x1, i, NULL))),
	             ldij(xsum, i, NULL)), ldij(sp, i, j1)));
	body[4] = stij(x0, i, NULL, ldij(x1, i, NULL));
	outer[0] = stij(x0, i, NULL, kernel_const(K, DT_FLOAT32, -INFINITY));
	outer[1] = loopn(j1, AX_LOOP, HW_NONE, body, 5);
	stage("fig11", loopn(i, AX_LOOP, HW_NONE, outer, 2));
	assert_tile_ir("# inputs: inputs: float32[2, 4]\n"
	               "# outputs: xsum: float32[2]\n"
	               "# buffers: xmax_0: float32[2], xmax_1: float32[2], xmax_1p: float32[2, 2], xsump: float32[2, 2]\n"
	               "# fig11\n"
	               "for i in range(2):\n"
	               "  xmax_0[i] = -inf\n"
	               "  for j1 in range(2):\n"
	               "    xmax_1p[i, j1] = max(xmax_1p[i, j1], reduce(max, inputs[i, j1*2 : j1*2 + 2], dim=0))\n"
	               "    xmax_1[i] = max(xmax_1[i], xmax_1p[i, j1])\n"
	               "    xsump[i, j1] += reduce(+, exp(inputs[i, j1*2 : j1*2 + 2] - xmax_1[i]), dim=0)\n"
	               "    xsum[i] = exp(xmax_0[i] - xmax_1[i]) * xsum[i] + xsump[i, j1]\n"
	               "    xmax_0[i] = xmax_1[i]\n");
	assert_inner(0, maxl, "j2");
	assert_inner(0, suml, "j2");
	assert_inner(0, body[1], "");
	assert_inner(0, outer[0], "");
}

/* ---- partitioning ---- */

static void
test_copy(void **state)
{
	int x = buf("x", KB_INPUT, 2, 3, 4), y = buf("y", KB_OUTPUT, 2, 3, 4);
	UOp *i = var("i", 3), *j = var("j", 4), *s = stij(y, i, j, ldij(x, i, j));

	(void)state;
	stage("y", loop1(i, loop1(j, s)));
	assert_tile_ir("# inputs: x: float32[3, 4]\n"
	               "# outputs: y: float32[3, 4]\n"
	               "# y\n"
	               "y[0 : 3, 0 : 4] = x[0 : 3, 0 : 4]\n");
	assert_inner(0, s, "i j");
}

/* a loop bound to a thread is an annotation: the nest under it is the inner part; a bound loop inside leaves none */
static void
test_bound(void **state)
{
	int x = buf("x", KB_INPUT, 2, 4, 8), y = buf("y", KB_OUTPUT, 2, 4, 8), z = buf("z", KB_OUTPUT, 2, 4, 8);
	UOp *t = var("t", 4), *j = var("j", 8), *s1, *s2, *two = kernel_const(K, DT_FLOAT32, 2);

	(void)state;
	s1 = stij(y, t, j, falu(OP_MUL, ldij(x, t, j), two));
	s2 = stij(z, t, j, falu(OP_MUL, ldij(x, t, j), two));
	stage("y", loopn(t, AX_LOCAL, HW_THREAD_X, (UOp *[]){ loop1(j, s1) }, 1));
	stage("z", loop1(t, loopn(j, AX_LOCAL, HW_THREAD_X, &s2, 1)));
	assert_tile_ir("# inputs: x: float32[4, 8]\n"
	               "# outputs: y: float32[4, 8], z: float32[4, 8]\n"
	               "# y\n"
	               "for t in range(4):  # thread.x LOCAL\n"
	               "  y[t, 0 : 8] = x[t, 0 : 8] * 2.0\n"
	               "# z\n"
	               "for t in range(4):\n"
	               "  for j in range(8):  # thread.x LOCAL\n"
	               "    z[t, j] = x[t, j] * 2.0\n");
	assert_inner(0, s1, "j");
	assert_inner(1, s2, "");
}

/* axis types other than LOOP and REDUCE annotate a loop (parallel, vectorized, unrolled); a guard stops too */
static void
test_annotations_and_guards(void **state)
{
	int x = buf("x", KB_INPUT, 2, 4, 8), y = buf("y", KB_OUTPUT, 2, 4, 8), z = buf("z", KB_OUTPUT, 2, 4, 8);
	UOp *i = var("i", 4), *j = var("j", 8), *s1, *s2, *g;

	(void)state;
	s1 = stij(y, i, j, ldij(x, i, j));
	stage("y", loop1(i, loopn(j, AX_UPCAST, HW_NONE, &s1, 1)));
	s2 = stij(z, i, j, ldij(x, i, j));
	g = kernel_if(K, kernel_alu(K, OP_CMPLT, DT_BOOL, (UOp *[]){ i, I(3) }, 2), (UOp *[]){ loop1(j, s2) }, 1);
	stage("z", loopn(i, AX_THREAD, HW_NONE, &g, 1));
	assert_tile_ir("# inputs: x: float32[4, 8]\n"
	               "# outputs: y: float32[4, 8], z: float32[4, 8]\n"
	               "# y\n"
	               "for i, j in grid(4, 8):  # j:UPCAST\n"
	               "  y[i, j] = x[i, j]\n"
	               "# z\n"
	               "for i in range(4):  # THREAD\n"
	               "  if i < 3:\n"
	               "    z[i, 0 : 8] = x[i, 0 : 8]\n");
	assert_inner(0, s1, "");
	assert_inner(1, s2, "j");
}

/* ---- relaxation ---- */

/* x[r + c]: two inner variables in one dimension; r moves out and the rest is a tile */
static void
test_not_1_sparse(void **state)
{
	int x = buf("x", KB_INPUT, 1, 6, 0), y = buf("y", KB_OUTPUT, 2, 3, 4), d = buf("d", KB_OUTPUT, 1, 3, 0);
	int m = buf("m", KB_INPUT, 2, 3, 3);
	UOp *r = var("r", 3), *c = var("c", 4), *s, *s2;

	(void)state;
	s = stij(y, r, c, ldij(x, add(r, c), NULL));
	stage("y", loop1(r, loop1(c, s)));
	/* the diagonal m[r, r]: one variable in two dimensions; no tile is left */
	s2 = stij(d, r, NULL, ldij(m, r, r));
	stage("d", loop1(r, s2));
	assert_tile_ir("# inputs: x: float32[6], m: float32[3, 3]\n"
	               "# outputs: y: float32[3, 4], d: float32[3]\n"
	               "# y\n"
	               "for r in range(3):\n"
	               "  y[r, 0 : 4] = x[r : r + 4]\n"
	               "# d\n"
	               "for r in range(3):\n"
	               "  d[r] = m[r, r]\n");
	assert_inner(0, s, "c");
	assert_inner(1, s2, "");
}

/* steps, reversed and non-affine indices, and inner variables outside indices */
static void
test_relaxation(void **state)
{
	int x = buf("x", KB_INPUT, 1, 16, 0), a = buf("a", KB_OUTPUT, 1, 4, 0), b = buf("b", KB_OUTPUT, 1, 4, 0);
	int c = buf("c", KB_OUTPUT, 1, 4, 0), d = buf("d", KB_OUTPUT, 2, 2, 4);
	UOp *i = var("i", 2), *r = var("r", 4), *f, *sd;

	(void)state;
	/* x[3*r + 1]: a step */
	stage("a", loop1(r, stij(a, r, NULL, ldij(x, add(mul(r, I(3)), I(1)), NULL))));
	/* x[3 - r]: a flip is not a tile */
	stage("b", loop1(r, stij(b, r, NULL, ldij(x, uop_sub(K->c, I(3), r), NULL))));
	/* x[r // 2]: not affine; and r as a value: no tile either */
	f = kernel_cast(K, DT_FLOAT32, r);
	stage("c", loop1(r, stij(c, r, NULL, falu(OP_ADD, ldij(x, uop_idiv(K->c, r, I(2)), NULL), f))));
	/* d[i, r] = x[i*8 + r*2]: i*8 stays the base */
	sd = stij(d, i, r, ldij(x, add(mul(i, I(8)), mul(r, I(2))), NULL));
	stage("d", loop1(i, loop1(r, sd)));
	assert_tile_ir("# inputs: x: float32[16]\n"
	               "# outputs: a: float32[4], b: float32[4], c: float32[4], d: float32[2, 4]\n"
	               "# a\n"
	               "a[0 : 4] = x[1 : 11 : 3]\n"
	               "# b\n"
	               "for r in range(4):\n"
	               "  b[r] = x[3 - r]\n"
	               "# c\n"
	               "for r in range(4):\n"
	               "  c[r] = x[r//2] + float32(r)\n"
	               "# d\n"
	               "for i in range(2):\n"
	               "  d[i, 0 : 4] = x[i*8 : i*8 + 7 : 2]\n");
	assert_inner(3, sd, "r");
}

/* ---- dimension order reconciliation ---- */

/* out[i, j] = a[j] + b[i] * t[j, i]: None where a tile lacks a dimension, permute where its order differs */
static void
test_broadcast_permute(void **state)
{
	int a = buf("a", KB_INPUT, 1, 5, 0), b = buf("b", KB_INPUT, 1, 3, 0), t = buf("t", KB_INPUT, 2, 5, 3);
	int o = buf("out", KB_OUTPUT, 2, 3, 5), u = buf("u", KB_INPUT, 2, 5, 2), o3 = buf("o3", KB_OUTPUT, 2, 3, 10);
	UOp *i = var("i", 3), *j = var("j", 5), *k = var("k", 2), *v;

	(void)state;
	v = falu(OP_ADD, ldij(a, j, NULL), falu(OP_MUL, ldij(b, i, NULL), ldij(t, j, i)));
	stage("out", loop1(i, loop1(j, stij(o, i, j, v))));
	/* o3[i, j*2 + k] is 2-D over three loops: not a tile (j and k share a dimension) ... */
	/* ... so k alone stays inner; u[j, k] then needs no None */
	stage("o3", loop1(i, loop1(j, loop1(k, stij(o3, i, add(mul(j, I(2)), k), ldij(u, j, k))))));
	assert_tile_ir("# inputs: a: float32[5], b: float32[3], t: float32[5, 3], u: float32[5, 2]\n"
	               "# outputs: out: float32[3, 5], o3: float32[3, 10]\n"
	               "# out\n"
	               "out[0 : 3, 0 : 5] = a[None, 0 : 5] + b[0 : 3, None] * permute(t[0 : 5, 0 : 3], order=(1, 0))\n"
	               "# o3\n"
	               "for i, j in grid(3, 5):\n"
	               "  o3[i, j*2 : j*2 + 2] = u[j, 0 : 2]\n");
}

/* a None and a permute on one tile; a reduction over two loops */
static void
test_reduce_dims(void **state)
{
	int x = buf("x", KB_INPUT, 2, 4, 3), w = buf("w", KB_INPUT, 1, 2, 0), y = buf("y", KB_OUTPUT, 1, 3, 0);
	int s = buf("s", KB_OUTPUT, 1, 1, 0), z = buf("z", KB_OUTPUT, 2, 3, 4);
	UOp *i = var("i", 3), *j = var("j", 4), *k = var("k", 2), *zero = I(0), *s1;

	(void)state;
	/* y[i] += x[j, i] * w[k] over (i, j, k): reduce j and k; x's tile is (j, i) -> permuted, gets None for k */
	s1 = update(y, i, NULL, OP_ADD, falu(OP_MUL, ldij(x, j, i), ldij(w, k, NULL)));
	stage("y", loop1(i, loopn(j, AX_REDUCE, HW_NONE, (UOp *[]){ loopn(k, AX_REDUCE, HW_NONE, &s1, 1) }, 1)));
	/* s[0] = min(s[0], x[j, i]) over everything: the stored tile is a scalar */
	stage("s", loop1(j, loop1(i, update(s, zero, NULL, OP_MIN, ldij(x, j, i)))));
	/* an update without reduced loops stays element-wise */
	stage("z", loop1(i, loop1(j, update(z, i, j, OP_ADD, ldij(x, j, i)))));
	assert_tile_ir("# inputs: x: float32[4, 3], w: float32[2]\n"
	               "# outputs: y: float32[3], s: float32[1], z: float32[3, 4]\n"
	               "# y\n"
	               "y[0 : 3] += reduce(+, permute(x[0 : 4, 0 : 3, None], order=(1, 0, 2)) * w[None, None, 0 : 2], "
	               "dim=(1, 2))\n"
	               "# s\n"
	               "s[0] = min(s[0], reduce(min, x[0 : 4, 0 : 3], dim=(0, 1)))\n"
	               "# z\n"
	               "z[0 : 3, 0 : 4] += permute(x[0 : 4, 0 : 3], order=(1, 0))\n");
}

/* what a tile store cannot do: read what it writes, overwrite without a reduce op, repeat itself */
static void
test_dependences(void **state)
{
	int x = buf("x", KB_INPUT, 2, 3, 4), p = buf("p", KB_OUTPUT, 1, 5, 0), q = buf("q", KB_OUTPUT, 1, 3, 0);
	int m = buf("m", KB_OUTPUT, 1, 3, 0), c = buf("cnt", KB_OUTPUT, 1, 3, 0);
	UOp *i = var("i", 3), *j = var("j", 4), *s1, *s2, *s3, *s4, *one = kernel_const(K, DT_FLOAT32, 1);

	(void)state;
	/* p[r + 1] = p[r] * 2: a recurrence; the tile form would read p before the nest writes it */
	s1 = stij(p, add(j, I(1)), NULL, falu(OP_MUL, ldij(p, j, NULL), kernel_const(K, DT_FLOAT32, 2)));
	stage("p", loop1(j, s1));
	/* q[i] = x[i, j]: the last j wins; not a reduction */
	s2 = stij(q, i, NULL, ldij(x, i, j));
	stage("q", loop1(i, loop1(j, s2)));
	/* m[i] = max(m[i], m[i] * x[i, j]): the reduced value reads the running max */
	s3 = update(m, i, NULL, OP_MAX, falu(OP_MUL, ldij(m, i, NULL), ldij(x, i, j)));
	stage("m", loop1(i, loop1(j, s3)));
	/* cnt[i] += 1 over j: j indexes nothing */
	s4 = update(c, i, NULL, OP_ADD, one);
	stage("cnt", loop1(i, loop1(j, s4)));
	assert_tile_ir("# inputs: x: float32[3, 4]\n"
	               "# outputs: p: float32[5], q: float32[3], m: float32[3], cnt: float32[3]\n"
	               "# p\n"
	               "for j in range(4):\n"
	               "  p[j + 1] = p[j] * 2.0\n"
	               "# q\n"
	               "for i, j in grid(3, 4):\n"
	               "  q[i] = x[i, j]\n"
	               "# m\n"
	               "for i, j in grid(3, 4):\n"
	               "  m[i] = max(m[i], m[i] * x[i, j])\n"
	               "# cnt\n"
	               "for i, j in grid(3, 4):\n"
	               "  cnt[i] += 1.0\n");
	assert_inner(0, s1, "");
	assert_inner(1, s2, "");
	assert_inner(2, s3, "");
	assert_inner(3, s4, "");
}

/* a padded read is a gated load: the gate stays one condition when it names outer loops only */
static void
test_gated_load(void **state)
{
	int x = buf("x", KB_INPUT, 2, 3, 4), y = buf("y", KB_OUTPUT, 2, 4, 4), z = buf("z", KB_OUTPUT, 1, 4, 0);
	UOp *i = var("i", 4), *j = var("j", 4), *gi, *gj, *im1 = uop_sub(K->c, i, I(1));

	(void)state;
	gi = kernel_alu(K, OP_CMPLT, DT_BOOL, (UOp *[]){ I(0), i }, 2);
	stage("y", loop1(i, loop1(j, stij(y, i, j, kernel_load(K, ix(x, im1, j), gi)))));
	gj = kernel_alu(K, OP_CMPLT, DT_BOOL, (UOp *[]){ j, I(3) }, 2);
	stage("z", loop1(j, stij(z, j, NULL, kernel_load(K, ix(x, I(0), j), gj))));
	assert_tile_ir("# inputs: x: float32[3, 4]\n"
	               "# outputs: y: float32[4, 4], z: float32[4]\n"
	               "# y\n"
	               "for i in range(4):\n"
	               "  y[i, 0 : 4] = (x[i - 1, 0 : 4] if 0 < i else 0)\n"
	               "# z\n"
	               "for j in range(4):\n"
	               "  z[j] = (x[0, j] if j < 3 else 0)\n");
}

/* ---- lowered kernels ---- */

/* softmax over rows: the reductions become reduce tiles, the last stage one tile store */
static void
test_lowered_softmax(void **state)
{
	UCtx *c = uctx_new();
	int64_t s[2] = { 4, 8 }, ax = 1;
	KLowerOpts lo = { "out" };
	UOp *x, *m, *ex, *sum;
	Kernel *k;

	(void)state;
	x = ok(tensor_param(c, "x", 0, s, 2, DT_FLOAT32, NULL, &E));
	m = ok(tensor_reduce(c, OP_MAX, x, &ax, 1, 1, &E));
	ex = ok(tensor_unary(c, OP_EXP2, ok(tensor_alu(c, OP_SUB, x, m, &E)), &E));
	sum = ok(tensor_unary(c, OP_RECIP, ok(tensor_reduce(c, OP_ADD, ex, &ax, 1, 1, &E)), &E));
	if (!(k = kernel_lower(ok(tensor_alu(c, OP_MUL, ex, sum, &E)), &lo, &E)))
		fail_msg("lower: %s", E.msg);
	kernel_free(K);
	K = k;
	assert_tile_ir("# inputs: x: float32[4, 8]\n"
	               "# outputs: out: float32[4, 8]\n"
	               "# buffers: xmax: float32[4], xsum: float32[4]\n"
	               "# xmax\n"
	               "for i in range(4):\n"
	               "  xmax[i] = -inf\n"
	               "  xmax[i] = max(xmax[i], reduce(max, x[i, 0 : 8], dim=0))\n"
	               "# xsum\n"
	               "for i in range(4):\n"
	               "  xsum[i] = 0.0\n"
	               "  xsum[i] += reduce(+, exp2(x[i, 0 : 8] - xmax[i]), dim=0)\n"
	               "# out\n"
	               "out[0 : 4, 0 : 8] = exp2(x[0 : 4, 0 : 8] - xmax[0 : 4, None]) * 1/xsum[0 : 4, None]\n");
	uctx_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_figure4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_figure14, setup, teardown),
		cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_annotations_and_guards, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_1_sparse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relaxation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_broadcast_permute, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reduce_dims, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dependences, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gated_load, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lowered_softmax, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_kernel.c - kernels: the builder, buffer layouts, the verifier, the pseudo-code, collective operators. */
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
#include "kernel_test.h"

static int
buf1(const char *name, DType t, UAddrSpace sc, KRole r, int64_t n)
{
	int b = kernel_add_buffer(K, name, t, sc, r, &n, 1, &E);

	assert_true(b >= 0);
	return b;
}

static int
buf2(const char *name, DType t, UAddrSpace sc, KRole r, int64_t m, int64_t n)
{
	int64_t s[2] = { m, n };
	int b = kernel_add_buffer(K, name, t, sc, r, s, 2, &E);

	assert_true(b >= 0);
	return b;
}

/* b at (i), or at (i, j) where j is not NULL */
static UOp *
ldij(int b, UOp *i, UOp *j)
{
	UOp *idx[2] = { i, j };

	return kernel_load(K, kernel_index(K, b, idx, j ? 2 : 1), NULL);
}

static UOp *
stij(int b, UOp *i, UOp *j, UOp *v)
{
	UOp *idx[2] = { i, j };

	return kernel_store(K, kernel_index(K, b, idx, j ? 2 : 1), v, NULL);
}

static char *
printed(void)
{
	Buf b;

	buf_init(&b);
	kernel_print(&b, K, 0);
	return buf_take(&b);
}

static int
check(void)
{
	Buf notes;
	int rc;

	buf_init(&notes);
	rc = kernel_check(K, &notes, &E);
	buf_free(&notes);
	return rc;
}

/* ---- the builder ---- */

static void
test_buffers(void **state)
{
	int64_t s[2] = { 4, 0 };

	(void)state;
	assert_int_equal(buf1("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 8), 0);
	assert_int_equal(kernel_add_buffer(K, "A", DT_FLOAT32, AS_GLOBAL, KB_TEMP, s, 1, &E), -1);
	assert_non_null(strstr(E.msg, "taken"));
	assert_int_equal(kernel_add_buffer(K, "9x", DT_FLOAT32, AS_GLOBAL, KB_TEMP, s, 1, &E), -1);
	assert_non_null(strstr(E.msg, "not a name"));
	assert_int_equal(kernel_add_buffer(K, "B", DT_FLOAT32, AS_GLOBAL, KB_TEMP, s, 2, &E), -1);
	assert_non_null(strstr(E.msg, "not positive"));
	assert_int_equal(kernel_add_buffer(K, "C", DT_VOID, AS_GLOBAL, KB_TEMP, s, 1, &E), -1);
	assert_int_equal(kernel_find_buffer(K, "A"), 0);
	assert_int_equal(kernel_find_buffer(K, "B"), -1);
	/* row-major by default: x0*n + x1 */
	buf2("M", DT_FLOAT32, AS_GLOBAL, KB_TEMP, 3, 5);
	{
		UOp *o = kernel_offset(K, 1, (UOp *[]){ I(2), I(4) });

		assert_true(o->op == OP_CONST && o->arg[0] == 14);
	}
	{
		char n[K_NAME];

		kernel_fresh_name(K, "A", n, sizeof n);
		assert_string_equal(n, "A_1");
		kernel_fresh_name(K, "a b", n, sizeof n);
		assert_string_equal(n, "a_b");
	}
}

static void
test_clone(void **state)
{
	int a = buf1("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 8), b = buf1("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 8);
	UOp *i = kernel_var(K, "i", 8);
	Kernel *c;
	char *p1, *p2;
	Buf bb;

	(void)state;
	assert_int_equal(kernel_add_stage(K, "copy", loopt(i, AX_LOOP, HW_NONE, 1, stij(b, i, NULL, ldij(a, i, NULL))), NULL, &E), 0);
	assert_int_equal(kernel_add_stage(K, "copy", loopt(i, AX_LOOP, HW_NONE, 1, stij(b, i, NULL, ldij(a, i, NULL))), NULL, &E), -1);
	c = kernel_clone(K, &E);
	assert_non_null(c);
	p1 = printed();
	buf_init(&bb);
	kernel_print(&bb, c, 0);
	p2 = buf_take(&bb);
	assert_string_equal(p1, p2);
	assert_ptr_not_equal(c->stage[0].body, K->stage[0].body);
	free(p1);
	free(p2);
	kernel_free(c);
}

/* ---- layouts from the three formalisms, against brute force ---- */

static void
offsets_equal(int b, int64_t (*f)(int64_t, int64_t, const void *), const void *aux)
{
	const KBuf *x = &K->buf[b];
	int64_t i, j, v;

	for (i = 0; i < x->shape[0]; i++)
		for (j = 0; j < x->shape[1]; j++) {
			UBind bind[2] = { { "x0", i }, { "x1", j } };

			assert_int_equal(uop_eval(x->layout, bind, 2, &v, &E), 0);
			assert_int_equal(v, f(i, j, aux));
		}
}

static int64_t
cute_at(int64_t i, int64_t j, const void *aux)
{
	const Layout *l = aux;
	Layout m0;
	int64_t v;
	Err e;

	/* (i, j) is the 1-D coordinate i + j*size(mode 0), colexicographic */
	assert_int_equal(cute_mode(l, 0, &m0, &e), 0);
	assert_int_equal(cute_eval_idx(l, i + j * cute_size(&m0), &v, &e), 0);
	return v;
}

static int64_t
composed_at(int64_t i, int64_t j, const void *aux)
{
	const Composed *cl = aux;
	int64_t v;

	v = cute_at(i, j, &cl->layout) + cl->offset;
	return swizzle_apply(&cl->sw, v);
}

static void
test_layout_cute(void **state)
{
	Layout l;
	Composed cl;
	int b;

	(void)state;
	b = buf2("P", DT_FLOAT32, AS_LOCAL, KB_TEMP, 32, 32);
	assert_int_equal(cute_parse("(32,32):(33,1)", &l, &E), 0);
	assert_int_equal(kernel_layout_cute(K, b, &l, NULL, &E), 0);
	assert_int_equal(K->buf[b].size, 32 * 33 - 1);
	offsets_equal(b, cute_at, &l);
	/* hierarchical modes unflatten colexicographically, as CuTe does */
	b = buf2("H", DT_FLOAT32, AS_LOCAL, KB_TEMP, 4, 8);
	assert_int_equal(cute_parse("((2,2),(2,4)):((1,16),(2,4))", &l, &E), 0);
	assert_int_equal(kernel_layout_cute(K, b, &l, NULL, &E), 0);
	offsets_equal(b, cute_at, &l);
	b = buf2("S", DT_FLOAT16, AS_LOCAL, KB_TEMP, 8, 64);
	assert_int_equal(composed_parse("Sw<3,3,3> o 0 o (8,64):(64,1)", &cl, &E), 0);
	assert_int_equal(kernel_layout_cute(K, b, NULL, &cl, &E), 0);
	offsets_equal(b, composed_at, &cl);
	assert_string_equal(K->buf[b].layout_desc, "Sw<3,3,3> o 0 o (8,64):(64,1)");
	/* refusals name the sizes */
	assert_int_equal(cute_parse("(32,16):(1,32)", &l, &E), 0);
	assert_int_equal(kernel_layout_cute(K, b, &l, NULL, &E), -1);
	assert_string_equal(E.msg, "set_layout: mode 0 of (32,16):(1,32) has size 32, dimension 0 of S has 8");
	assert_int_equal(cute_parse("(32,32):(1,32)", &l, &E), 0);
	assert_int_equal(kernel_layout_cute(K, b, &l, NULL, &E), -1);
	assert_string_equal(E.msg, "set_layout: S has 512 elements, the CuTe layout 1024");
	/* a buffer the kernel writes needs a one-to-one layout; an input may broadcast */
	assert_int_equal(cute_parse("(8,64):(64,2)", &l, &E), 0);
	assert_int_equal(kernel_layout_cute(K, b, &l, NULL, &E), -1);
	assert_string_equal(E.msg, "set_layout: S: elements (0, 32) and (1, 0) both map to offset 64; the "
	                    "kernel writes S, so its layout must be one-to-one (only an input may repeat "
	                    "offsets, as a broadcast)");
	assert_string_equal(K->buf[b].layout_desc, "Sw<3,3,3> o 0 o (8,64):(64,1)");   /* kept */
	assert_int_equal(composed_parse("Sw<3,3,3> o 0 o (8,64):(64,0)", &cl, &E), 0);
	assert_int_equal(kernel_layout_cute(K, b, NULL, &cl, &E), -1);
	assert_string_equal(E.msg, "set_layout: S: 512 elements in a storage of 449: some share an offset, "
	                    "and the kernel writes S (only an input may repeat offsets)");
	b = buf2("O", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 64, 64);
	assert_int_equal(composed_parse("Sw<3,4,3> o 0 o (64,64):(64,1)", &cl, &E), 0);
	assert_int_equal(kernel_layout_cute(K, b, NULL, &cl, &E), 0);
	offsets_equal(b, composed_at, &cl);
	/* xor into itself: in range, yet (0, 0) and (0, 1) share offset 0 */
	assert_int_equal(composed_parse("Sw<1,0,1> o 0 o (64,64):(2,0)", &cl, &E), 0);
	assert_int_equal(kernel_layout_cute(K, b, NULL, &cl, &E), -1);
	b = buf2("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 8, 64);
	assert_int_equal(cute_parse("(8,64):(0,1)", &l, &E), 0);
	assert_int_equal(kernel_layout_cute(K, b, &l, NULL, &E), 0);
	offsets_equal(b, cute_at, &l);
}

static int64_t
lego_at(int64_t i, int64_t j, const void *aux)
{
	int64_t idx[2] = { i, j }, v;
	Err e;

	assert_int_equal(lego_apply(aux, idx, &v, &e), 0);
	return v;
}

static void
test_layout_lego_axe(void **state)
{
	Lego g;
	AxeLayout a;
	int64_t dims[2] = { 6, 4 };
	int b, perm[2] = { 1, 0 };
	int64_t i, j, v;

	(void)state;
	b = buf2("T", DT_FLOAT32, AS_GLOBAL, KB_TEMP, 6, 4);
	assert_int_equal(lego_regp(&g, dims, 2, perm, &E), 0);
	assert_int_equal(kernel_layout_lego(K, b, &g, &E), 0);
	offsets_equal(b, lego_at, &g);
	/* Axe on m: (6,4):(1,6) is column-major */
	b = buf2("U", DT_FLOAT32, AS_GLOBAL, KB_TEMP, 6, 4);
	assert_int_equal(axe_parse("S[(6,4):(1,6)]", &a, &E), 0);
	assert_int_equal(kernel_layout_axe(K, b, &a, &E), 0);
	for (i = 0; i < 6; i++)
		for (j = 0; j < 4; j++) {
			UBind bind[2] = { { "x0", i }, { "x1", j } };

			assert_int_equal(uop_eval(K->buf[b].layout, bind, 2, &v, &E), 0);
			assert_int_equal(v, i + 6 * j);
		}
	assert_int_equal(axe_parse("S[(6,4):(1@lane,6)]", &a, &E), 0);
	assert_int_equal(kernel_layout_axe(K, b, &a, &E), -1);
	assert_non_null(strstr(E.msg, "memory axis m"));
}

/* ---- the verifier: one planted fault per rule ---- */

static void
refused(const char *what)
{
	if (check() == 0)
		fail_msg("the check passed; expected \"%s\"", what);
	if (!strstr(E.msg, what))
		fail_msg("expected \"%s\" in: %s", what, E.msg);
}

static void
test_check_reads_writes(void **state)
{
	int a = buf1("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 8), b = buf1("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 8);
	int c = buf1("C", DT_FLOAT32, AS_GLOBAL, KB_TEMP, 8);
	UOp *i = kernel_var(K, "i", 8);

	(void)state;
	kernel_add_stage(K, "use", loopt(i, AX_LOOP, HW_NONE, 1, stij(b, i, NULL, ldij(c, i, NULL))), NULL, &E);
	refused("reads C, which no stage before it writes");
	K->nstage = 0;
	kernel_add_stage(K, "fill", loopt(i, AX_LOOP, HW_NONE, 1, stij(c, i, NULL, ldij(a, i, NULL))), NULL, &E);
	refused("output B is written by no stage");
	kernel_add_stage(K, "use", loopt(i, AX_LOOP, HW_NONE, 1, stij(b, i, NULL, ldij(c, i, NULL))), NULL, &E);
	assert_int_equal(check(), 0);
	/* an unbound variable, a variable bound twice */
	kernel_add_stage(K, "free", loopt(i, AX_LOOP, HW_NONE, 1, stij(b, i, NULL, ldij(a, kernel_var(K, "q", 8), NULL))), NULL, &E);
	refused("variable q is not bound");
	K->nstage = 2;
	kernel_add_stage(K, "twice", loopt(i, AX_LOOP, HW_NONE, 1, loopt(i, AX_LOOP, HW_NONE, 1, stij(b, i, NULL, ldij(a, i, NULL)))), NULL, &E);
	refused("loop variable i is bound twice");
}

static void
test_check_bounds(void **state)
{
	int a = buf1("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 8), b = buf1("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 8);
	UOp *i = kernel_var(K, "i", 8), *g, *x;
	Buf notes;

	(void)state;
	kernel_add_stage(K, "shift", loopt(i, AX_LOOP, HW_NONE, 1, stij(b, i, NULL, ldij(a, add(i, I(1)), NULL))), NULL, &E);
	refused("index 0 is 8 at i=7, outside [0, 8)");
	/* the same access under a gate is proved by enumeration */
	K->nstage = 0;
	g = uop_alu(K->c, OP_CMPLT, i, I(7));
	x = kernel_load(K, kernel_index(K, a, (UOp *[]){ add(i, I(1)) }, 1), g);
	kernel_add_stage(K, "gated", loopt(i, AX_LOOP, HW_NONE, 1, stij(b, i, NULL, x)), NULL, &E);
	assert_int_equal(check(), 0);
	/* and under an enclosing if */
	K->nstage = 0;
	kernel_add_stage(K, "under_if", loopt(i, AX_LOOP, HW_NONE, 1,
	                 kernel_if(K, g, (UOp *[]){ stij(b, i, NULL, ldij(a, add(i, I(1)), NULL)) }, 1)), NULL, &E);
	assert_int_equal(check(), 0);
	/* a data-dependent index is a note, not an error */
	K->nstage = 0;
	x = kernel_cast(K, DT_INDEX, kernel_cast(K, DT_INT32, ldij(a, i, NULL)));
	kernel_add_stage(K, "gather", loopt(i, AX_LOOP, HW_NONE, 1, stij(b, i, NULL, ldij(a, x, NULL))), NULL, &E);
	buf_init(&notes);
	assert_int_equal(kernel_check(K, &notes, &E), 0);
	assert_non_null(notes.s);
	assert_non_null(strstr(notes.s, "depends on loaded data"));
	buf_free(&notes);
	/* wrong arity */
	K->nstage = 0;
	kernel_add_stage(K, "arity", loopt(i, AX_LOOP, HW_NONE, 1, stij(b, i, NULL, ldij(a, i, i))), NULL, &E);
	refused("A has 1 dimensions, an access gives 2 indices");
}

static void
test_check_bindings(void **state)
{
	int a = buf1("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 256), b = buf1("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 256);
	int s = buf1("s", DT_FLOAT32, AS_LOCAL, KB_TEMP, 64);
	UOp *bx = kernel_var(K, "bx", 4), *tx = kernel_var(K, "tx", 64), *i = kernel_var(K, "i", 2);
	UOp *e = add(mul(bx, I(64)), tx), *body, *lane = kernel_var(K, "lane", 64);

	(void)state;
	/* a block loop under a plain loop */
	body = loopt(i, AX_LOOP, HW_NONE, 1, loopt(bx, AX_GLOBAL, HW_BLOCK_X, 1, loopt(tx, AX_LOCAL, HW_THREAD_X, 1, stij(b, e, NULL, ldij(a, e, NULL)))));
	kernel_add_stage(K, "s0", body, NULL, &E);
	refused("bound to block.x under loop i");
	/* a thread loop outside the block loops of its stage */
	K->nstage = 0;
	body = kernel_if(K, kernel_const(K, DT_BOOL, 1), (UOp *[]){
		loopt(bx, AX_GLOBAL, HW_BLOCK_X, 1, loopt(tx, AX_LOCAL, HW_THREAD_X, 1, stij(b, e, NULL, ldij(a, e, NULL)))),
		loopt(tx, AX_LOCAL, HW_THREAD_X, 1, stij(b, tx, NULL, ldij(a, tx, NULL))) }, 2);
	kernel_add_stage(K, "s1", body, NULL, &E);
	refused("outside the block-bound loops");
	/* a barrier under an if on the thread index */
	K->nstage = 0;
	body = loopt(bx, AX_GLOBAL, HW_BLOCK_X, 1, loopt(tx, AX_LOCAL, HW_THREAD_X, 1, kernel_if(K, kernel_const(K, DT_BOOL, 1), (UOp *[]){
		stij(s, tx, NULL, ldij(a, e, NULL)),
		kernel_if(K, uop_alu(K->c, OP_CMPLT, tx, I(32)), (UOp *[]){ kernel_barrier(K) }, 1),
		stij(b, e, NULL, ldij(s, add(I(63), uop_neg(K->c, tx)), NULL)) }, 3)));
	kernel_add_stage(K, "s2", body, NULL, &E);
	refused("barrier under thread-divergent control flow");
	/* lane past 32, and thread.x mixed with lane */
	K->nstage = 0;
	kernel_add_stage(K, "s3", loopt(lane, AX_LOCAL, HW_LANE, 1, stij(b, lane, NULL, ldij(a, lane, NULL))), NULL, &E);
	refused("a warp has 32 lanes");
	K->nstage = 0;
	lane = kernel_var(K, "lane", 32);
	kernel_add_stage(K, "s4", loopt(tx, AX_LOCAL, HW_THREAD_X, 1, loopt(lane, AX_LOCAL, HW_LANE, 1,
	                 stij(b, add(tx, lane), NULL, ldij(a, tx, NULL)))), NULL, &E);
	refused("not both");
	/* the correct version passes */
	K->nstage = 0;
	body = loopt(bx, AX_GLOBAL, HW_BLOCK_X, 1, loopt(tx, AX_LOCAL, HW_THREAD_X, 1, kernel_if(K, kernel_const(K, DT_BOOL, 1), (UOp *[]){
		stij(s, tx, NULL, ldij(a, e, NULL)), kernel_barrier(K),
		stij(b, e, NULL, ldij(s, add(I(63), uop_neg(K->c, tx)), NULL)) }, 3)));
	kernel_add_stage(K, "ok", body, NULL, &E);
	assert_int_equal(check(), 0);
}

/* ---- the pseudo-code ---- */

static void
test_print(void **state)
{
	int a = buf2("inp", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, 4), m = buf1("xmax", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2);
	int s = buf1("xsum", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 2);
	UOp *i = kernel_var(K, "i", 2), *j = kernel_var(K, "j", 4), *x, *init, *red;
	char *p;

	(void)state;
	/* Figure 1(a)'s s_max and s_sum */
	x = kernel_index(K, m, &i, 1);
	init = kernel_store(K, x, kernel_const(K, DT_FLOAT32, -INFINITY), NULL);
	red = kernel_store(K, x, kernel_alu(K, OP_MAX, DT_FLOAT32, (UOp *[]){ kernel_load(K, x, NULL), ldij(a, i, j) }, 2), NULL);
	kernel_add_stage(K, "xmax", kernel_loop(K, kernel_range(K, i, AX_LOOP, HW_NONE), (UOp *[]){ init,
	                 loopt(j, AX_REDUCE, HW_NONE, 1, red) }, 2), NULL, &E);
	x = kernel_index(K, s, &i, 1);
	red = kernel_store(K, x, kernel_alu(K, OP_ADD, DT_FLOAT32, (UOp *[]){ kernel_load(K, x, NULL),
	                   kernel_alu(K, OP_EXP2, DT_FLOAT32, (UOp *[]){ kernel_alu(K, OP_MUL, DT_FLOAT32, (UOp *[]){
	                   kernel_alu(K, OP_SUB, DT_FLOAT32, (UOp *[]){ ldij(a, i, j), ldij(m, i, NULL) }, 2),
	                   kernel_const(K, DT_FLOAT32, 1.4426950408889634) }, 2) }, 1) }, 2), NULL);
	kernel_add_stage(K, "xsum", loopt(i, AX_LOOP, HW_NONE, 1, loopt(j, AX_REDUCE, HW_NONE, 1, red)), NULL, &E);
	p = printed();
	assert_string_equal(p,
		"# inputs: inp: float32[2, 4]\n"
		"# outputs: xmax: float32[2], xsum: float32[2]\n"
		"# xmax\n"
		"for i in range(2):\n"
		"  xmax[i] = -inf\n"
		"  for j in range(4):  # REDUCE\n"
		"    xmax[i] = max(xmax[i], inp[i, j])\n"
		"# xsum\n"
		"for i, j in grid(2, 4):  # j:REDUCE\n"
		"  xsum[i] += exp(inp[i, j] - xmax[i])\n");
	free(p);
}

/* ---- collective operators, run ---- */

static void
fill_in(TBuf *t, const KBuf *b)
{
	int64_t i;

	memset(t, 0, sizeof *t);
	t->dtype = b->dtype;
	t->ndim = b->ndim;
	memcpy(t->shape, b->shape, b->ndim * sizeof *b->shape);
	t->numel = 1;
	for (i = 0; i < b->ndim; i++)
		t->numel *= b->shape[i];
	t->axis = -1;
	t->data = malloc(t->numel * dtype_bytes(b->dtype));
	assert_non_null(t->data);
	for (i = 0; i < t->numel; i++)
		dtype_store_f(b->dtype, (char *)t->data + i * dtype_bytes(b->dtype), (double)((i * 7919) % 101) - 50);
}

static void
run(TBuf *bufs)
{
	KRunOpts o = { .checks = 1 };
	int i;

	for (i = 0; i < K->nbuf; i++)
		if (K->buf[i].role == KB_INPUT)
			fill_in(&bufs[i], &K->buf[i]);
	if (kernel_run(K, &o, bufs, NULL, &E) < 0)
		fail_msg("%s", E.msg);
}

static void
free_bufs(TBuf *bufs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		tbuf_free(&bufs[i]);
}

static void
test_ops(void **state)
{
	int a = buf2("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 64, 64), c = buf2("C", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 64, 64);
	int r = buf1("R", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 64), t = buf1("T", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 4);
	int g = buf2("G", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 16, 16);
	int sm = buf2("tile", DT_FLOAT32, AS_LOCAL, KB_TEMP, 16, 64), pad;
	UOp *bx = kernel_var(K, "bx", 4), *tx = kernel_var(K, "tx", 128), *th[3] = { tx }, *bl[3] = { bx };
	UOp *s[8];
	KScope sc;
	KDispatch d;
	KRegion rg, ra, rc, rr, rt, rgm, ra2, rb2;
	TBuf bufs[8] = { 0 };
	const float *A, *C, *R, *T, *G;
	int64_t i, j, k;
	Layout l;

	(void)state;
	assert_int_equal(kernel_scope(K, KS_CTA, th, bl, 0, 0, &sc, &E), 0);
	assert_int_equal(sc.n, 128);
	memset(&rg, 0, sizeof rg);
	rg.buf = sm;
	rg.begin[0] = rg.begin[1] = I(0);
	rg.extent[0] = 16;
	rg.extent[1] = 64;
	ra = rg;
	ra.buf = a;
	ra.begin[0] = mul(bx, I(16));
	rc = ra;
	rc.buf = c;
	s[0] = kernel_op_copy(K, &sc, &rg, &ra, NULL, &d, &E);
	assert_non_null(s[0]);
	assert_string_equal(d.impl, "vector4");
	s[1] = kernel_barrier(K);
	s[2] = kernel_op_copy(K, &sc, &rc, &rg, "scalar", &d, &E);
	assert_string_equal(d.impl, "scalar");
	memset(&rr, 0, sizeof rr);
	rr.buf = r;
	rr.begin[0] = mul(bx, I(16));
	rr.extent[0] = 16;
	s[3] = kernel_op_reduce(K, &sc, OP_ADD, &rr, &rg, NULL, &d, &E);
	assert_string_equal(d.impl, "rows");
	memset(&rt, 0, sizeof rt);
	rt.buf = t;
	rt.begin[0] = bx;
	rt.extent[0] = 1;
	s[4] = kernel_op_reduce(K, &sc, OP_MAX, &rt, &rg, NULL, &d, &E);
	assert_string_equal(d.impl, "tree");
	/* G[16, 16] += A[0:16, 0:8] @ A[8:16, 0:16] in block 0's view of every block: G is
	** written by block 0 only */
	memset(&rgm, 0, sizeof rgm);
	rgm.buf = g;
	rgm.begin[0] = rgm.begin[1] = I(0);
	rgm.extent[0] = rgm.extent[1] = 16;
	ra2 = rgm;
	ra2.buf = a;
	ra2.extent[1] = 8;
	rb2 = rgm;
	rb2.buf = a;
	rb2.begin[0] = I(8);
	rb2.extent[0] = 8;
	s[5] = kernel_op_fill(K, &sc, &rgm, kernel_const(K, DT_FLOAT32, 1), NULL, &d, &E);
	s[6] = kernel_op_gemm(K, &sc, &rgm, &ra2, &rb2, NULL, &d, &E);
	assert_string_equal(d.impl, "fma");
	assert_null(kernel_op_gemm(K, &sc, &rgm, &ra2, &rb2, "mma", &d, &E));
	assert_non_null(strstr(E.msg, "mma is not possible: SM80_16x8x16_F32F16F16F32_TN takes float16 A and B"));
	{
		UOp *gate = uop_alu(K->c, OP_CMPEQ, bx, I(0));
		UOp *seq[3] = { s[5], kernel_barrier(K), s[6] };

		/* every thread of block 0 reaches the barrier: the if is on the block index */
		s[5] = kernel_if(K, gate, seq, 3);
	}
	{
		UOp *body = kernel_if(K, kernel_const(K, DT_BOOL, 1), s, 6);

		body = loopt(tx, AX_LOCAL, HW_THREAD_X, 1, body);
		body = loopt(bx, AX_GLOBAL, HW_BLOCK_X, 1, body);
		assert_int_equal(kernel_add_stage(K, "ops", body, NULL, &E), 0);
	}
	if (check() < 0)
		fail_msg("%s", E.msg);
	assert_true(K->nbuf <= 8);
	run(bufs);
	A = bufs[a].data;
	C = bufs[c].data;
	R = bufs[r].data;
	T = bufs[t].data;
	G = bufs[g].data;
	for (i = 0; i < 64 * 64; i++)
		assert_true(C[i] == A[i]);
	for (i = 0; i < 64; i++) {
		double sum = 0;

		for (j = 0; j < 64; j++)
			sum += A[i * 64 + j];
		assert_true(fabs(R[i] - sum) < 1e-3);
	}
	for (k = 0; k < 4; k++) {
		float mx = -INFINITY;

		for (i = k * 16 * 64; i < (k + 1) * 16 * 64; i++)
			mx = A[i] > mx ? A[i] : mx;
		assert_true(T[k] == mx);
	}
	for (i = 0; i < 16; i++)
		for (j = 0; j < 16; j++) {
			double sum = 1;

			for (k = 0; k < 8; k++)
				sum += (double)A[i * 64 + k] * A[(8 + k) * 64 + j];
			assert_true(fabs(G[i * 16 + j] - sum) < 1e-3);
		}
	free_bufs(bufs, K->nbuf);
	/* a padded tile: no vector fits, and the reason names the element */
	pad = buf2("pad", DT_FLOAT32, AS_LOCAL, KB_TEMP, 16, 64);
	assert_int_equal(cute_parse("(16,64):(65,1)", &l, &E), 0);
	assert_int_equal(kernel_layout_cute(K, pad, &l, NULL, &E), 0);
	rg.buf = pad;
	assert_non_null(kernel_op_copy(K, &sc, &rg, &ra, NULL, &d, &E));
	assert_string_equal(d.impl, "scalar");
	assert_non_null(strstr(d.reason, "not vector4: pad element 64 of the region (offset 65) is not 4-aligned"));
	assert_null(kernel_op_copy(K, &sc, &rg, &ra, "vector2", &d, &E));
	assert_non_null(strstr(E.msg, "vector2 is not possible: pad element 64"));
}

/* The watch names the thread whose store last wrote an element. */
static void
test_watch(void **state)
{
	int a = buf1("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 64), b = buf1("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 64);
	UOp *bx = kernel_var(K, "bx", 2), *tx = kernel_var(K, "tx", 32), *i = add(mul(bx, I(32)), tx);
	TBuf bufs[2] = { 0 };
	char msg[300];
	KRunOpts o = { .checks = 1, .watch_buf = 2, .watch_off = 37, .watch_msg = msg, .watch_len = sizeof msg };

	(void)state;
	kernel_add_stage(K, "copy", loopt(bx, AX_GLOBAL, HW_BLOCK_X, 1, loopt(tx, AX_LOCAL, HW_THREAD_X, 1,
	                 stij(b, i, NULL, ldij(a, i, NULL)))), NULL, &E);
	fill_in(&bufs[a], &K->buf[a]);
	if (kernel_run(K, &o, bufs, NULL, &E) < 0)
		fail_msg("%s", E.msg);
	if (!strstr(msg, "stage copy, block (1,0,0), thread (5,0,0)"))
		fail_msg("watch: %s", msg);
	free_bufs(bufs, 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_buffers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layout_cute, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layout_lego_axe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_reads_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_bindings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_print, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_fusion.c - Neptune's reduction fusion: rolling update (Figures 1 and 10), attention, and the refusals. */
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
#include "../interp/sched/sched.h"

#include "sched_test.h"

static const double LOG2E = 1.4426950408889634;

static UOp *
fc(double v)
{
	return uop_constf(C, DT_FLOAT32, v);
}

static UOp *
alu(Op op, UOp *a, UOp *b)
{
	return ok(tensor_alu(C, op, a, b, &E));
}

static UOp *
red(Op op, UOp *a, int keep)
{
	int64_t ax = 1;

	return ok(tensor_reduce(C, op, a, &ax, 1, keep, &E));
}

static UOp *
ex(UOp *a)
{
	return ok(tensor_unary(C, OP_EXP2, alu(OP_MUL, a, fc(LOG2E)), &E));
}

static char *
explained(void)
{
	Buf b;

	buf_init(&b);
	sched_explain(&b, S);
	return buf_take(&b);
}

static void
assert_has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("missing \"%s\" in:\n%s", want, text);
}

/* Figure 1(a): xmax, then xsum = sum exp(inp - xmax); scale multiplies the input */
static UOp *
figure1(int64_t m, int64_t n, double scale)
{
	UOp *x = param("inp", 0, m, n);

	if (scale != 1)
		x = alu(OP_MUL, x, fc(scale));
	return red(OP_ADD, ex(alu(OP_SUB, x, red(OP_MAX, x, 1))), 1);
}

static void
test_figure1(void **state)
{
	char *t;

	(void)state;
	start(figure1(2, 4, 1));
	OK(sched_rolling_update(S, "out", "j", &E));
	show("rolling_update out j");
	/* Figure 1(c), with xmax_0 as xmax_prev and xmax_1 as xmax */
	assert_printed("# inputs: inp: float32[2, 4]\n"
	               "# outputs: out: float32[2]\n"
	               "# buffers: xmax: float32[2], xmax_prev: float32[2]\n"
	               "# xmax\n"
	               "for i in range(2):\n"
	               "  xmax[i] = -inf\n"
	               "  xmax_prev[i] = -inf\n"
	               "  out[i] = 0.0\n"
	               "  for j in range(4):  # REDUCE\n"
	               "    xmax[i] = max(xmax[i], inp[i, j])\n"
	               "    out[i] = out[i] * exp(xmax_prev[i] - xmax[i]) + exp(inp[i, j] - xmax[i])\n"
	               "    xmax_prev[i] = xmax[i]\n");
	assert_same(1e-5);
	/* Figure 10: the derivation */
	t = explained();
	assert_has(t, "3. match   X_t = out, f = +, X_r = xmax[i] (r), C = inp[i, j] (c)");
	assert_has(t, "g = exp(c - r)");
	assert_has(t, "4. invert  y = g(r, c)  =>  c = r + log(y)   (Theorem 4.3)");
	assert_has(t, "h(t, r, r') = t * exp(r - r')");
	assert_has(t, "h(g(r, c), r, r') = g(r', c)                     holds (Eq. 4)");
	assert_has(t, "h(x + y, r, r') = h(x, r, r') + h(y, r, r')   holds (Eq. 5)");
	free(t);
	stop();

	/* rows whose naive exp overflows float32 (inputs up to 300): the repair keeps them finite */
	start(figure1(3, 37, 300));
	OK(sched_rolling_update(S, "out", "j", &E));
	assert_same(1e-5);
}

/* attention: o = softmax(q k^T / sqrt(d)) v, rolled twice: the sum, then the output */
static UOp *
attention(int64_t sq, int64_t skv, int64_t d, double scale)
{
	int64_t sa[3] = { sq, d, 1 }, sb[3] = { 1, d, skv }, ax1 = 1, ax2 = 1;
	UOp *q = param("q", 0, sq, d), *k = param("k", 1, skv, d), *v = param("v", 2, skv, d), *s, *p;
	UOp *kt = ok(tensor_permute(C, k, (int64_t[]){ 1, 0 }, 2, &E));

	s = alu(OP_MUL, ok(tensor_reshape(C, q, sa, 3, &E)), ok(tensor_reshape(C, kt, sb, 3, &E)));
	s = alu(OP_MUL, ok(tensor_reduce(C, OP_ADD, s, &ax1, 1, 0, &E)), fc(scale));
	p = ex(alu(OP_SUB, s, red(OP_MAX, s, 1)));
	p = alu(OP_MUL, p, ok(tensor_unary(C, OP_RECIP, red(OP_ADD, p, 1), &E)));
	{
		int64_t pa[3] = { sq, skv, 1 }, vb[3] = { 1, skv, d };

		s = alu(OP_MUL, ok(tensor_reshape(C, p, pa, 3, &E)), ok(tensor_reshape(C, v, vb, 3, &E)));
	}
	return ok(tensor_reduce(C, OP_ADD, s, &ax2, 1, 0, &E));
}

static void
test_attention(void **state)
{
	char *t;

	(void)state;
	start(attention(5, 7, 4, 0.5));
	show("attention");
	OK(sched_rolling_update(S, "xsum", "xmax.j", &E));
	OK(sched_rolling_update(S, "out", "j", &E));
	show("attention, rolled");
	t = now();
	/* one stage computes the scores' max, the sum and the output, in one pass over the keys */
	assert_has(t, "# buffers: xmatmul: float32[5, 7], xmax: float32[5], xsum: float32[5], "
	              "xmax_prev: float32[5], xsum_prev: float32[5]\n");
	assert_int_equal(S->k->nstage, 2);
	free(t);
	t = explained();
	/* two reduce predecessors: g separates into a factor of r and one of c */
	assert_has(t, "4. separate g into a factor of r and a factor of c");
	assert_has(t, "h(t, r, r') = r2 * 1/r2' * t * exp(r1 - r1')");
	free(t);
	assert_same(1e-4);
	stop();

	/* scores large enough that a naive softmax overflows */
	start(attention(3, 33, 4, 40));
	OK(sched_rolling_update(S, "xsum", "j", &E));
	OK(sched_rolling_update(S, "out", "j", &E));
	assert_same(1e-4);
}

static void
test_refusals(void **state)
{
	char *before;
	UOp *x, *m;

	(void)state;
	/* g = max(c - r, 0) has no inverse in c and does not separate */
	x = param("inp", 0, 2, 4);
	m = red(OP_MAX, x, 1);
	start(red(OP_ADD, alu(OP_MAX, alu(OP_SUB, x, m), fc(0)), 1));
	before = now();
	assert_refused(sched_rolling_update(S, "out", "j", &E), before,
	               "rolling_update: stage out: no repair function");
	assert_has(E.msg, "has no inverse in c (max)");
	free(before);
	stop();

	/* g = c - r: h(t, r, r') = t + r - r' solves Eq. 4 but does not commute with + */
	uctx_free(C);
	C = uctx_new();
	x = param("inp", 0, 2, 4);
	m = red(OP_MAX, x, 1);
	start(red(OP_ADD, alu(OP_SUB, x, m), 1));
	before = now();
	assert_refused(sched_rolling_update(S, "out", "j", &E), before,
	               "rolling_update: stage out: h does not commute with f = + (Eq. 5 fails)");
	free(before);
	stop();

	/* a fused intermediate read elsewhere: the exponentials feed the sum and the output */
	uctx_free(C);
	C = uctx_new();
	x = param("inp", 0, 2, 4);
	{
		UOp *e = ex(alu(OP_SUB, x, red(OP_MAX, x, 1)));

		e = ok(tensor_new(C, OP_CONTIGUOUS, (DType)e->dtype, &e, 1, 0, 0, NULL, NULL, 0, &E));
		start(alu(OP_MUL, e, ok(tensor_unary(C, OP_RECIP, red(OP_ADD, e, 1), &E))));
	}
	show("softmax, exp materialized");
	before = now();
	assert_refused(sched_rolling_update(S, "xsum", "j", &E), before, "is also read by stage out");
	assert_refused(sched_rolling_update(S, "xsum", "q", &E), before, "no stage before xsum has a loop q around a reduction");
	assert_refused(sched_rolling_update(S, "xmax", "j", &E), before, "no stage before xmax has a loop j around a reduction");
	free(before);
}

/* Figure 3: split-k update of Figure 1(a) */
static void
test_split_k(void **state)
{
	char *t;

	(void)state;
	start(figure1(2, 4, 1));
	OK(sched_split(S, "xmax", "j", (int64_t[]){ 0, 2 }, 2, &E));
	OK(sched_split_k_update(S, "out", "j0", &E));
	show("split_k_update");
	assert_printed("# inputs: inp: float32[2, 4]\n"
	               "# outputs: out: float32[2]\n"
	               "# buffers: xmax: float32[2], xmax_local: float32[2, 2], out_local: float32[2, 2]\n"
	               "# xmax_local\n"
	               "for i, j0 in grid(2, 2):\n"
	               "  xmax_local[i, j0] = -inf\n"
	               "  for j1 in range(2):  # REDUCE\n"
	               "    xmax_local[i, j0] = max(xmax_local[i, j0], inp[i, j0*2 + j1])\n"
	               "  out_local[i, j0] = 0.0\n"
	               "  for j10 in range(2):  # REDUCE\n"
	               "    out_local[i, j0] += exp(inp[i, j0*2 + j10] - xmax_local[i, j0])\n"
	               "# xmax\n"
	               "for i in range(2):\n"
	               "  xmax[i] = -inf\n"
	               "  for j0 in range(2):  # REDUCE\n"
	               "    xmax[i] = max(xmax[i], xmax_local[i, j0])\n"
	               "# out\n"
	               "for i in range(2):\n"
	               "  out[i] = 0.0\n"
	               "  for j0 in range(2):  # REDUCE\n"
	               "    out[i] += out_local[i, j0] * exp(xmax_local[i, j0] - xmax[i])\n");
	assert_same(1e-5);
	t = explained();
	assert_has(t, "split_k_update(out, xmax.j0): Algorithm 2");
	assert_has(t, "apply   out[i] += out_local[i, j0] * exp(xmax_local[i, j0] - xmax[i])   (Eq. 8)");
	free(t);
	stop();

	/* decoding attention (FlashDecoding): one query row, the keys in slices of 8 */
	uctx_free(C);
	C = uctx_new();
	start(attention(1, 48, 4, 30));
	OK(sched_split(S, "xmax", "j", (int64_t[]){ 0, 8 }, 2, &E));
	OK(sched_split_k_update(S, "xsum", "xmax.j0", &E));
	OK(sched_split_k_update(S, "out", "xmax_local.j0", &E));
	show("flash decoding");
	t = now();
	assert_has(t, "out_local: float32[1, 4, 6]");
	assert_has(t, "xsum_local[0, k0] * 1/xsum[0] * out_local[i, j, k0] * exp(xmax_local[0, k0] - xmax[0])");
	free(t);
	assert_same(1e-4);
	/* the loop must be privatized, and the predecessor split first */
	{
		char *before = now();

		assert_refused(sched_split_k_update(S, "out", "xmax.j0", &E), before,
		               "split_k_update: xmax is not reduced under loop j0 of stage xmax, nor privatized there");
		free(before);
	}
}

/* Figure 11: the predecessor privatized, then the sum rolled under the slices */
static void
test_privatize(void **state)
{
	char *t, *before;
	UOp *x;

	(void)state;
	start(figure1(2, 4, 1));
	OK(sched_privatize_reduce(S, "xmax", "j", 2, &E));
	OK(sched_rolling_update(S, "out", "xmax.j0", &E));
	show("figure 11");
	t = now();
	assert_has(t, "    xmax[i] = max(xmax[i], xmax_local[i, j0])\n"
	              "    out[i] *= exp(xmax_prev[i] - xmax[i])\n"
	              "    for j1 in range(2):  # REDUCE\n"
	              "      out[i] += exp(inp[i, j0*2 + j1] - xmax[i])\n"
	              "    xmax_prev[i] = xmax[i]\n");
	free(t);
	assert_same(1e-5);
	before = now();
	assert_refused(sched_privatize_reduce(S, "xmax", "j0", 0, &E), before,
	               "privatize_reduce: 0 parts; give at least 1");
	free(before);
	stop();

	/* two independent reductions of one input fuse with no repair */
	uctx_free(C);
	C = uctx_new();
	x = param("inp", 0, 3, 8);
	start(alu(OP_ADD, red(OP_MAX, x, 1), red(OP_ADD, x, 1)));
	OK(sched_split(S, "xmax", "j", (int64_t[]){ 0, 4 }, 2, &E));
	OK(sched_fuse_and_privatize(S, "xsum", "xmax.j0", &E));
	assert_int_equal(S->k->nstage, 4);
	assert_same(1e-5);
	stop();

	/* a dependent one needs the repair */
	uctx_free(C);
	C = uctx_new();
	start(figure1(2, 4, 1));
	OK(sched_split(S, "xmax", "j", (int64_t[]){ 0, 2 }, 2, &E));
	before = now();
	assert_refused(sched_fuse_and_privatize(S, "out", "xmax.j0", &E), before,
	               "fuse_and_privatize: stage out reads xmax, which stage xmax computes: fusing it "
	               "under loop j0 needs a repair (split_k_update)");
	free(before);
}

/* ---- random programs: every committed fusion step keeps the values ---- */

static UOp *
random_graph(uint64_t *r)
{
	int64_t m = 1 + rnd(r) % 4, n = 2 + rnd(r) % 9;
	UOp *x = param("inp", 0, m, n);

	if (rnd(r) % 3 == 0)
		x = alu(OP_MUL, x, fc(1 + (double)(rnd(r) % 200)));
	switch (rnd(r) % 5) {
	case 0: return figure1(m, n, 1 + (double)(rnd(r) % 50));
	case 1: return attention(m, n, 1 + rnd(r) % 4, 0.5);
	case 2: return alu(OP_ADD, red(OP_MAX, x, 1), red(OP_ADD, x, 1));
	case 3: return red(OP_MAX, ex(alu(OP_SUB, x, red(OP_ADD, x, 1))), 1);
	default: {
		/* softmax normalized: exp / sum */
		UOp *e = ex(alu(OP_SUB, x, red(OP_MAX, x, 1)));

		return alu(OP_MUL, e, ok(tensor_unary(C, OP_RECIP, red(OP_ADD, e, 1), &E)));
	}
	}
}

static void
test_random(void **state)
{
	static const char *const loopn[] = { "j", "j0", "j1", "k", "k0", "i" };
	uint64_t seed;
	int kept = 0, tried = 0, hits[6] = { 0 }, i;

	(void)state;
	for (seed = 1; seed <= 200; seed++) {
		uint64_t r = seed * 0x9e3779b97f4a7c15ull;
		int step;
		char msg[600];

		start(random_graph(&r));
		for (step = 0; step < 6; step++) {
			int st = (int)(rnd(&r) % S->k->nstage), rc, op = (int)(rnd(&r) % 6);
			const char *sn = S->k->stage[st].name;
			char spec[2 * K_NAME];
			int sp = (int)(rnd(&r) % S->k->nstage);

			/* mostly a real loop of an earlier stage, sometimes anything */
			if (st > 0 && rnd(&r) % 4) {
				UOp *ls[64];
				int nl;

				sp = (int)(rnd(&r) % st);
				nl = sched_loops(S->k, sp, ls, 64);
				snprintf(spec, sizeof spec, "%s.%s", S->k->stage[sp].name,
				         nl ? krange_var(ls[rnd(&r) % nl]->src[0])->name : "j");
			} else
				snprintf(spec, sizeof spec, rnd(&r) % 2 ? "%s.%s" : "%.0s%s", S->k->stage[sp].name,
				         loopn[rnd(&r) % 6]);
			switch (op) {
			case 0: rc = sched_split(S, sn, loopn[rnd(&r) % 6], (int64_t[]){ 0, 1 + (int64_t)(rnd(&r) % 4) },
			                         2, &E); break;
			case 1: rc = sched_rolling_update(S, sn, spec, &E); break;
			case 2: rc = sched_split_k_update(S, sn, spec, &E); break;
			case 3: rc = sched_privatize_reduce(S, sn, loopn[rnd(&r) % 6], 1 + (int64_t)(rnd(&r) % 3), &E); break;
			case 4: rc = sched_fuse_and_privatize(S, sn, spec, &E); break;
			default: rc = sched_undo(S, &E); break;
			}
			tried++;
			if (rc < 0)
				continue;
			kept++;
			hits[op]++;
			if (same(S->orig, S->k, 1e-4, seed, msg, sizeof msg) < 0) {
				char *t = trace(), *p = now();

				print_message("seed %llu, after:\n%s%s", (unsigned long long)seed, t, p);
				free(t);
				free(p);
				fail_msg("seed %llu: %s", (unsigned long long)seed, msg);
			}
		}
		stop();
		uctx_free(C);
		C = uctx_new();
	}
	if (getenv("TESSEL_SHOW"))
		for (i = 0; i < 6; i++)
			print_message("op %d: %d committed\n", i, hits[i]);
	for (i = 0; i < 6; i++)
		assert_true(hits[i] > 0);
	(void)tried;
	(void)kept;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_figure1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_k, setup, teardown),
		cmocka_unit_test_setup_teardown(test_privatize, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

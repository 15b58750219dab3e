/* test_lower.c - Axe and symbolic LEGO lowering, and the simplifier rules they rely on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../layout/lower.h"
#include "prop.h"



static char *
text(const UOp *u)
{
	static char out[4][4096];
	static int k;
	Buf b;

	buf_init(&b);
	uop_print(&b, u, D_INFIX);
	k = (k + 1) % 4;
	snprintf(out[k], sizeof out[k], "%s", b.s ? b.s : "");
	buf_free(&b);
	return out[k];
}

static UOp *
simp(UCtx *c, UOp *u)
{
	Err e;

	if (uop_simplify(c, u, &u, &e) < 0)
		fail_msg("simplify: %s", e.msg);
	return u;
}

/* Axe: every axis expression, with replica variables, equals axe_apply at
** every element and replica. */
static void
check_axe(const char *notation)
{
	AxeLayout l;
	AxeAxes ax;
	AxeCoord *co;
	UCtx *c = uctx_new();
	UOp *x, *rep[AXE_ITERS], *out[AXE_AXES];
	UBind b[AXE_ITERS + 1];
	char nm[AXE_ITERS][16];
	int64_t el, j, v, nrep;
	int i, n, t;
	Err e;

	if (axe_parse(notation, &l, &e) < 0)
		fail_msg("%s: %s", notation, e.msg);
	nrep = axe_nreplicas(&l);
	co = malloc((size_t)nrep * sizeof *co);
	x = uop_var(c, "x", 0, axe_size(&l) - 1);
	for (i = 0; i < l.nr; i++) {
		snprintf(nm[i], sizeof nm[i], "r%d", i);
		rep[i] = uop_var(c, nm[i], 0, l.r[i].e - 1);
		b[i + 1].name = nm[i];
	}
	b[0].name = "x";
	axe_axes(&l, &ax);
	if (lower_axe(c, &l, x, rep, &ax, out, &e) < 0)
		fail_msg("%s: %s", notation, e.msg);
	for (i = 0; i < ax.n; i++)
		out[i] = simp(c, out[i]);
	for (el = 0; el < axe_size(&l); el++) {
		if (axe_apply(&l, el, co, (int)nrep, &n, &e) < 0)
			fail_msg("%s: %s", notation, e.msg);
		b[0].value = el;
		for (j = 0; j < nrep; j++) {
			int64_t r = j;
			for (t = l.nr - 1; t >= 0; t--) {
				b[t + 1].value = r % l.r[t].e;
				r /= l.r[t].e;
			}
			for (i = 0; i < ax.n; i++) {
				if (uop_eval(out[i], b, l.nr + 1, &v, &e) < 0)
					fail_msg("%s: %s", notation, e.msg);
				if (v != co[j].v[axe_axes_index(&co[j].ax, ax.name[i])])
					fail_msg("%s: axis %s of element %lld replica %lld: %s gives %lld, axe_apply %lld",
					         notation, ax.name[i], (long long)el, (long long)j, text(out[i]),
					         (long long)v, (long long)co[j].v[axe_axes_index(&co[j].ax, ax.name[i])]);
			}
		}
	}
	free(co);
	uctx_free(c);
}

static void
test_axe(void **state)
{
	check_axe("S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp");
	check_axe("S[(4,8):(1@lane,4@lane)]");
	check_axe("S[(2,3,4):(12,4,1)]");
	check_axe("S[(4,4):(1@P,-1@F)] + R[(2,3):(1@gpuid,4@F)] + 3@F");
	check_axe("S[(2,2,2):(1@warp,2@lane,1@lane)] + R[2:2@warp]");
}

/* The grouped program-id ordering of Triton's matmul as a symbolic LEGO
** layout: OrderBy(Row(TG, 1), Col(GM, n)) tiled by (TG*GM, n), inverted. */
static void
test_sym_grouped(void **state)
{
	UCtx *c = uctx_new();
	UOp *tg = uop_var(c, "TG", 1, 4), *gm = uop_var(c, "GM", 1, 4), *nn = uop_var(c, "n", 1, 5);
	UOp *pid, *out[2], *m = uop_mul(c, tg, gm);
	LegoSym g;
	UBind b[4] = { { "TG", 0 }, { "GM", 0 }, { "n", 0 }, { "pid", 0 } };
	int64_t v0, v1;
	Err e;

	memset(&g, 0, sizeof g);
	g.rank = 2;
	g.dim[0] = m;
	g.dim[1] = nn;
	g.nchain = 2;
	/* chain[0] runs last: the OrderBy of the two groups */
	g.chain[0].nparts = 2;
	g.chain[0].part[0] = (LegoSymPerm){ 2, { tg, uop_int(c, 1) }, { 0, 1 } };
	g.chain[0].part[1] = (LegoSymPerm){ 2, { gm, nn }, { 1, 0 } };
	/* chain[1]: the TileBy of one level, Row(m, n) */
	g.chain[1].nparts = 1;
	g.chain[1].part[0] = (LegoSymPerm){ 2, { m, nn }, { 0, 1 } };
	pid = uop_var(c, "pid", 0, 4 * 4 * 5 - 1);
	if (lower_lego_sym(c, &g, 1, &pid, out, &e) < 0)
		fail_msg("%s", e.msg);
	out[0] = simp(c, out[0]);
	out[1] = simp(c, out[1]);
	assert_string_equal(text(out[0]), "GM*(pid//(GM*n)) + pid%GM");
	assert_string_equal(text(out[1]), "pid//GM%n");
	/* Triton's grouped ordering at every point where pid < TG*GM*n */
	for (b[0].value = 1; b[0].value <= 4; b[0].value++)
		for (b[1].value = 1; b[1].value <= 4; b[1].value++)
			for (b[2].value = 1; b[2].value <= 5; b[2].value++)
				for (b[3].value = 0; b[3].value < b[0].value * b[1].value * b[2].value; b[3].value++) {
					int64_t p = b[3].value, G = b[1].value, N = b[2].value;
					int64_t grp = p / (G * N), first = grp * G;
					int64_t gs = b[0].value * G - first < G ? b[0].value * G - first : G;
					if (uop_eval(out[0], b, 4, &v0, &e) < 0 || uop_eval(out[1], b, 4, &v1, &e) < 0)
						fail_msg("%s", e.msg);
					assert_int_equal(v0, first + (p % (G * N)) % gs);
					assert_int_equal(v1, (p % (G * N)) / gs);
				}
	uctx_free(c);
}

/* (z % w) % y -> z % y and (z % w) // y -> (z // y) % (w / y) for y | w:
** random shapes, checked at every point. */
static void
test_modchain(void **state)
{
	int it;

	for (it = 0; it < 300; it++) {
		UCtx *c = uctx_new();
		UOp *a = uop_var(c, "a", 1, rint_(1, 4)), *y = uop_var(c, "y", 1, rint_(1, 4));
		UOp *z = uop_var(c, "z", rint_(-20, 0), rint_(0, 40)), *w, *u, *s;
		int eq, k = rint_(1, 3);
		Err e;

		switch (rint_(0, 3)) {
		case 0: w = uop_mul(c, a, y); break;
		case 1: w = uop_mul(c, uop_mul(c, a, y), uop_int(c, k)); break;
		case 2: w = y; break;
		default: w = uop_mul(c, uop_int(c, 2 * k), a); y = uop_int(c, k); break;
		}
		u = uop_mod(c, z, w);
		u = rint_(0, 1) ? uop_mod(c, u, y) : uop_idiv(c, u, y);
		if (rint_(0, 1))
			u = uop_add(c, u, uop_mul(c, z, uop_int(c, rint_(-2, 2))));
		s = simp(c, u);
		if (uop_equivalent(u, s, 1 << 20, &eq, NULL, NULL, NULL, &e) < 0)
			fail_msg("seed %llu: %s", (unsigned long long)seed, e.msg);
		if (!eq)
			fail_msg("seed %llu: %s simplified to %s, not equal", (unsigned long long)seed,
			         text(u), text(s));
		uctx_free(c);
	}
	{
		UCtx *c = uctx_new();
		UOp *p = uop_var(c, "pid", 0, 1000), *g = uop_var(c, "G", 1, 8), *n = uop_var(c, "n", 1, 8);
		UOp *u = uop_idiv(c, uop_mod(c, p, uop_mul(c, g, n)), g);
		assert_string_equal(text(simp(c, u)), "pid//G%n");
		u = uop_mod(c, uop_mod(c, p, uop_mul(c, g, n)), g);
		assert_string_equal(text(simp(c, u)), "pid%G");
		uctx_free(c);
	}
}


int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_axe),
		cmocka_unit_test(test_sym_grouped),
		cmocka_unit_test_setup(test_modchain, seed_setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

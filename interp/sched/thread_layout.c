/* thread_layout.c - the Axe layout a stage's schedule induces: each element it writes -> the hardware coordinates that write it. */
#include <stdio.h>
#include <string.h>

#include "../../layout/layout.h"
#include "sched.h"

/*
** The stage's last store (a reduction's update) names the element it writes
** by index expressions in the loop variables. Each index must be a sum of
** digits times constants, a digit being a loop variable v, v // a, v % b or
** (v // a) % b: what split (i0*16 + i1) and fuse (f // 4, f % 4) leave. When
** the coefficients of one coordinate's digits are the products of the inner
** digits' extents (a mixed-radix number), and the digits of each loop cover
** it exactly, the stage is a tiling of its element space, and each digit is
** an iter of an Axe layout: extent b, stride a on the axis the loop's binding
** names (bx, by, bz, tx, ty, tz, warp, lane), or on `reg` for unbound loops
** (a thread's serial iterations, numbered over the unbound loops that index
** an element, in nest order). Bound loops that index nothing write every
** element several times: replicas. D lists the digits coordinate by
** coordinate, outer first, as Axe's row-major convention reads them.
*/
enum { MAXL = 64, MAXD = 64 };

static const char *const axname[HW_COUNT] = { "reg", "bx", "by", "bz", "tx", "ty", "tz", "warp", "lane" };

typedef struct Digit {
	int loop;           /* index into the loops */
	int64_t a, b;       /* (v // a) % b */
	int64_t coef;
} Digit;

static AxeIter
iter(int64_t e, int64_t s, const char *axis)
{
	AxeIter it;

	memset(&it, 0, sizeof it);
	it.e = e;
	it.s = s;
	snprintf(it.axis, sizeof it.axis, "%s", axis);
	return it;
}

static int
loop_of(const UOp *v, UOp *const *vars, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (vars[i] == v)
			return i;
	return -1;
}

/* u as sum coef * digit + k; -1 when it is not that */
static int
digits(const UOp *u, UOp *const *vars, const int64_t *ext, int n, Digit *d, int *nd, int64_t *k,
       int64_t scale, int depth)
{
	const UOp *x = u, *v;
	int64_t a = 1, b = 0;
	int l;

	if (depth > 200 || *nd >= MAXD)
		return -1;
	switch (u->op) {
	case OP_CONST:
		*k += scale * u->arg[0];
		return 0;
	case OP_ADD:
		return digits(u->src[0], vars, ext, n, d, nd, k, scale, depth + 1) < 0 ? -1
		     : digits(u->src[1], vars, ext, n, d, nd, k, scale, depth + 1);
	case OP_SUB:
		return digits(u->src[0], vars, ext, n, d, nd, k, scale, depth + 1) < 0 ? -1
		     : digits(u->src[1], vars, ext, n, d, nd, k, -scale, depth + 1);
	case OP_MUL:
		if (u->src[1]->op == OP_CONST)
			return digits(u->src[0], vars, ext, n, d, nd, k, scale * u->src[1]->arg[0], depth + 1);
		if (u->src[0]->op == OP_CONST)
			return digits(u->src[1], vars, ext, n, d, nd, k, scale * u->src[0]->arg[0], depth + 1);
		return -1;
	default:
		break;
	}
	/* a digit: v, v // a, v % b, (v // a) % b */
	if (x->op == OP_MOD && x->src[1]->op == OP_CONST && x->src[1]->arg[0] > 0) {
		b = x->src[1]->arg[0];
		x = x->src[0];
	}
	if (x->op == OP_IDIV && x->src[1]->op == OP_CONST && x->src[1]->arg[0] > 0) {
		a = x->src[1]->arg[0];
		x = x->src[0];
	}
	v = x;
	if (v->op != OP_VAR || (l = loop_of(v, vars, n)) < 0)
		return -1;
	if (!b || b > (ext[l] + a - 1) / a)
		b = (ext[l] + a - 1) / a;
	d[*nd].loop = l;
	d[*nd].a = a;
	d[*nd].b = b;
	d[*nd].coef = scale;
	(*nd)++;
	return 0;
}

/* the last store of a statement, and the loops around it */
static const UOp *
last_store(const UOp *s, const UOp **loops, int *nl, int depth)
{
	const UOp *r = NULL;
	int i, saved = *nl;

	if (depth > 1000)
		return NULL;
	if (s->op == OP_STORE)
		return s;
	if (s->op == OP_END && *nl < MAXL)
		loops[(*nl)++] = s->src[0];
	for (i = s->nsrc - 1; i >= 1 && !r; i--)
		if (s->src[i]->op == OP_STORE || s->src[i]->op == OP_END || s->src[i]->op == OP_IF)
			r = last_store(s->src[i], loops, nl, depth + 1);
	if (!r)
		*nl = saved;
	return r;
}

int
sched_thread_layout(const Kernel *k, const char *stage, AxeLayout *out, AxeShape *sh, Err *e)
{
	const UOp *loops[MAXL], *st, *ix;
	UOp *vars[MAXL];
	Digit dg[AXE_RANK][MAXD];
	int nd[AXE_RANK], nl = 0, si, i, j, c, nD = 0, nR = 0, used[MAXL] = { 0 };
	int64_t ext[MAXL], regstride[MAXL], stride = 1;
	AxeIter D[AXE_ITERS], R[AXE_ITERS];
	const char *sn;

	if ((si = sched_stage(k, stage, e)) < 0)
		return -1;
	sn = k->stage[si].name;
	if (!(st = last_store(k->stage[si].body, loops, &nl, 0)))
		return err_set(e, "thread_layout: stage %s stores nothing", sn);
	ix = st->src[0];
	if (ix->nsrc - 1 > AXE_RANK)
		return err_set(e, "thread_layout: stage %s writes a %d-d buffer (at most %d)", sn, ix->nsrc - 1, AXE_RANK);
	for (i = 0; i < nl; i++) {
		vars[i] = krange_var(loops[i]);
		ext[i] = krange_extent(loops[i]);
	}
	sh->n = ix->nsrc - 1;
	for (c = 0; c < sh->n; c++) {
		int64_t kk = 0, expect = 1;
		int a, b;

		nd[c] = 0;
		if (digits(ix->src[c + 1], vars, ext, nl, dg[c], &nd[c], &kk, 1, 0) < 0)
			return err_set(e, "thread_layout: stage %s: coordinate %d of the store is not a sum of loop "
			               "digits (v, v//a, v%%b) times constants", sn, c);
		/* outer digit first: by coefficient, descending; then a mixed-radix check */
		for (a = 1; a < nd[c]; a++)
			for (b = a; b > 0 && dg[c][b].coef > dg[c][b - 1].coef; b--) {
				Digit t = dg[c][b];

				dg[c][b] = dg[c][b - 1];
				dg[c][b - 1] = t;
			}
		for (a = nd[c] - 1; a >= 0; a--) {
			if (dg[c][a].coef != expect)
				return err_set(e, "thread_layout: stage %s: coordinate %d is not a tiling of its loops: a "
				               "digit of loop %s has coefficient %lld where %lld would tile", sn, c,
				               vars[dg[c][a].loop]->name, (long long)dg[c][a].coef, (long long)expect);
			expect *= dg[c][a].b;
			used[dg[c][a].loop] = 1;
		}
		sh->v[c] = expect;
		if (expect > k->buf[ix->src[0]->arg[0]].shape[c])
			return err_set(e, "thread_layout: stage %s: its loops cover %lld elements of coordinate %d, "
			               "%s has %lld (a split's tail guard?): not a tiling of the buffer", sn,
			               (long long)expect, c, ix->src[0]->name,
			               (long long)k->buf[ix->src[0]->arg[0]].shape[c]);
	}
	/* each loop's digits cover it exactly: strides 1, b0, b0*b1, ... up to its extent */
	for (i = 0; i < nl; i++) {
		int64_t next = 1;
		int found;

		if (!used[i])
			continue;
		do {
			found = 0;
			for (c = 0; c < sh->n && !found; c++)
				for (j = 0; j < nd[c] && !found; j++)
					if (dg[c][j].loop == i && dg[c][j].a == next) {
						next *= dg[c][j].b;
						found = 1;
					}
		} while (found && next < ext[i]);
		if (next != ext[i])
			return err_set(e, "thread_layout: stage %s: the digits of loop %s do not cover it once (each "
			               "iteration would write %s)", sn, vars[i]->name, next < ext[i] ? "an element "
			               "others write too" : "outside the elements");
	}
	/* serial iterations over the unbound loops that index an element, innermost fastest */
	for (i = nl - 1; i >= 0; i--)
		if (krange_hw(loops[i]) == HW_NONE && used[i]) {
			regstride[i] = stride;
			stride *= ext[i];
		}
	for (c = 0; c < sh->n; c++)
		for (j = 0; j < nd[c]; j++) {
			const Digit *g = &dg[c][j];
			HwAxis h = krange_hw(loops[g->loop]);

			if (nD == AXE_ITERS)
				return err_set(e, "thread_layout: stage %s has more than %d digits", sn, AXE_ITERS);
			D[nD++] = iter(g->b, h == HW_NONE ? regstride[g->loop] * g->a : g->a, axname[h]);
		}
	for (i = 0; i < nl; i++)
		if (!used[i] && krange_hw(loops[i]) != HW_NONE && nR < AXE_ITERS)
			R[nR++] = iter(ext[i], 1, axname[krange_hw(loops[i])]);
	if (nD == 0)
		D[nD++] = iter(1, 1, "reg");
	return axe_make(out, D, nD, R, nR, NULL, 0, e);
}

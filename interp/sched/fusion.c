/* fusion.c - what Neptune's reduction fusions share: dataflow reorganization, the repair function, naive loop fusion. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/algebra.h"
#include "sched.h"

enum { MAXL = 64, MAXV = 64 };

/* ---- small helpers ---- */

int
fusion_accumulates(const Kernel *k, const UOp *s)
{
	return s->op == OP_STORE && sched_reads(k, s->src[1], (int)s->src[0]->src[0]->arg[0]);
}

static int
mentions(const UOp *u, const UOp *var)
{
	const UOp *v[MAXV];
	int n = uop_vars(u, v, MAXV), i;

	for (i = 0; i < n && i < MAXV; i++)
		if (v[i] == var)
			return 1;
	return n > MAXV;
}

/* whether the index of store/load access ix mentions var */
static int
indexes(const UOp *ix, const UOp *var)
{
	int d;

	for (d = 1; d < ix->nsrc; d++)
		if (mentions(ix->src[d], var))
			return 1;
	return 0;
}

/* the loads under value v, distinct, at most max */
static void
loads(UOp *v, UOp **out, int *n, int max, int depth)
{
	int i;

	if (depth > 1000 || *n >= max)
		return;
	if (v->op == OP_LOAD) {
		for (i = 0; i < *n && out[i] != v; i++)
			;
		if (i == *n)
			out[(*n)++] = v;
		return;
	}
	for (i = 0; i < v->nsrc; i++)
		loads(v->src[i], out, n, max, depth + 1);
}

static const char *
opname(int op)
{
	return op == OP_ADD ? "+" : op == OP_MUL ? "*" : op == OP_MAX ? "max" : "min";
}

static void
show(Buf *b, const Kernel *k, UCtx *c, UOp *u)
{
	UOp *n;
	Err e;

	kernel_print_expr(b, k, alg_display(c, alg_normalize(c, u, &n, &e) == 0 ? n : u));
}

/* u with its float arithmetic rebuilt in dtype t (constants rounded to t) */
static UOp *
retype(UCtx *c, UOp *u, DType t, int depth)
{
	UOp *s[8];
	int i, changed = 0;

	if (!u || depth > 400)
		return NULL;
	if (u->op == OP_CONST && dtype_is_float(u->dtype))
		return u->dtype == t ? u : uop_constf(c, t, uop_const_value(u));
	if (u->op == OP_LOAD || u->op == OP_INDEX || !dtype_is_float(u->dtype) || u->nsrc > 8)
		return u;
	for (i = 0; i < u->nsrc; i++) {
		if (!(s[i] = retype(c, u->src[i], t, depth + 1)))
			return NULL;
		changed |= s[i] != u->src[i];
	}
	if (!changed && (u->dtype == t || u->op == OP_CAST))
		return u;
	return uop_new(c, (Op)u->op, u->op == OP_CAST ? (DType)u->dtype : t, s, u->nsrc, u->arg[0], u->arg[1],
	               u->name, u->data, u->ndata);
}

/* ---- step 1: dataflow reorganization ---- */

/* the stage that writes buffer b, searching stages [lo, hi), or -1 */
static int
writer(const Kernel *k, int b, int lo, int hi)
{
	int j;

	for (j = lo; j < hi; j++)
		if (sched_writes(k, k->stage[j].body, b))
			return j;
	return -1;
}

int
fusion_inline_maps(Kernel *k, int S, int *t, Buf *ex, Err *e)
{
	int again = 1, any = 0;

	while (again) {
		UOp *sv[8], *ld[MAXL];
		int n = sched_stores(k, *t, sv, 8), nl = 0, i, j, op;
		UOp *other = NULL;

		again = 0;
		if (n < 1)
			return err_set(e, "stage %s stores nothing", k->stage[*t].name);
		for (i = 0; i < n && !sched_update(sv[i], &op, &other); i++)
			;
		if (i == n)
			return 0;   /* the caller says what is missing */
		loads(other, ld, &nl, MAXL, 0);
		for (i = 0; i < nl && !again; i++) {
			int b = (int)ld[i]->src[0]->src[0]->arg[0], m = writer(k, b, S + 1, *t);
			const UOp *rl = NULL;
			UOp *ms[4];

			if (m < 0)
				continue;
			/* a map stage on a path from the target to a reduce predecessor */
			if (sched_not_elementwise(k->stage[m].body, &rl) || sched_stores(k, m, ms, 4) != 1
			|| sched_update(ms[0], &op, NULL))
				continue;
			for (j = 0; j < k->nstage; j++)
				if (j != m && j != *t && sched_reads(k, k->stage[j].body, b))
					return err_set(e, "stage %s, a map stage between the reduction and %s, is also "
					               "read by stage %s: inlining it into %s would compute it twice "
					               "(compute_inline it first if that is meant)", k->stage[m].name,
					               k->stage[*t].name, k->stage[j].name, k->stage[*t].name);
			if (ex)
				emit(ex, "%s%s", any ? ", " : "", k->stage[m].name);
			if (sched_compute_inline_in(k, m, e) < 0)
				return -1;
			if (m < *t)
				(*t)--;
			any = again = 1;
		}
	}
	return any;
}

/* ---- steps 3 and 4: the pattern and the repair function ---- */

/* an infinite float constant under value u */
static int
has_inf(const UOp *u, int depth)
{
	int i;

	if (depth > 400)
		return 0;
	if (u->op == OP_CONST)
		return dtype_is_float(u->dtype) && isinf(uop_const_value(u));
	if (u->op == OP_LOAD)
		return 0;
	for (i = 0; i < u->nsrc; i++)
		if (has_inf(u->src[i], depth + 1))
			return 1;
	return 0;
}

UOp *
fusion_safe(Kernel *k, const FRepair *rp, int q, UOp *x)
{
	DType t = (DType)x->dtype;
	double I = rp->init[q];
	UOp *eq;

	if (!rp->safe[q])
		return x;
	eq = kernel_alu(k, OP_CMPEQ, t, (UOp *[]){ x, kernel_const(k, t, I) }, 2);
	return kernel_alu(k, OP_WHERE, t, (UOp *[]){ eq, kernel_const(k, t, isinf(I) ? 0 : I == 0 ? 1 : I), x }, 3);
}

UOp *
fusion_safe_prev(Kernel *k, const FRepair *rp, int q, UOp *prev, UOp *cur_safe)
{
	DType t = (DType)prev->dtype;
	UOp *eq;

	if (!rp->safe[q] && !rp->prev_safe[q])
		return prev;
	eq = kernel_alu(k, OP_CMPEQ, t, (UOp *[]){ prev, kernel_const(k, t, rp->init[q]) }, 2);
	return kernel_alu(k, OP_WHERE, t, (UOp *[]){ eq, cur_safe, prev }, 3);
}

static int
has_sym(const UOp *u, UOp *const *sym, int n, int depth)
{
	int i;

	if (depth > 400)
		return 1;
	for (i = 0; i < n; i++)
		if (u == sym[i])
			return 1;
	if (u->op == OP_LOAD)
		return 0;
	for (i = 0; i < u->nsrc; i++)
		if (has_sym(u->src[i], sym, n, depth + 1))
			return 1;
	return 0;
}

/* the maximal subtrees of g free of the r symbols that are not constants */
static void
cparts(UOp *g, UOp *const *sym, int n, UOp **out, int *nc, int max, int depth)
{
	int i;

	if (g->op == OP_CONST || depth > 400)
		return;
	if (!has_sym(g, sym, n, 0)) {
		for (i = 0; i < *nc && out[i] != g; i++)
			;
		if (i == *nc && *nc < max)
			out[(*nc)++] = g;
		return;
	}
	for (i = 0; i < g->nsrc; i++)
		cparts(g->src[i], sym, n, out, nc, max, depth + 1);
}

static int
occurrences(const UOp *g, const UOp *x, int depth)
{
	int i, n = 0;

	if (g == x)
		return 1;
	if (depth > 400 || g->op == OP_LOAD)
		return 0;
	for (i = 0; i < g->nsrc; i++)
		n += occurrences(g->src[i], x, depth + 1);
	return n;
}

static UOp *
b2(UCtx *c, Op op, UOp *x, UOp *y)
{
	return uop_new(c, op, DT_FLOAT64, (UOp *[]){ x, y }, 2, 0, 0, NULL, NULL, 0);
}

static UOp *
b1(UCtx *c, Op op, UOp *x)
{
	return uop_new(c, op, DT_FLOAT64, &x, 1, 0, 0, NULL, NULL, 0);
}

/*
** Theorem 4.3: y = g(r, c) solved for c along the one path from the root
** of g to c: each node on it inverted in the argument the path takes. NULL
** with *why set when a node has no inverse there (max, min, where, ...).
*/
static UOp *
invert(UCtx *c, UOp *g, UOp *cpart, UOp *y, const char **why)
{
	while (g != cpart) {
		int p, i;

		for (p = -1, i = 0; i < g->nsrc; i++)
			if (occurrences(g->src[i], cpart, 0)) {
				if (p >= 0) {
					*why = "c occurs in two arguments of one node";
					return NULL;
				}
				p = i;
			}
		if (p < 0) {
			*why = "c is not in g";
			return NULL;
		}
		switch (g->op) {
		case OP_EXP2: y = b1(c, OP_LOG2, y); break;
		case OP_LOG2: y = b1(c, OP_EXP2, y); break;
		case OP_NEG: y = b1(c, OP_NEG, y); break;
		case OP_RECIP: y = b1(c, OP_RECIP, y); break;
		case OP_CAST: break;   /* a rounding: the algebra is over the reals */
		case OP_ADD: y = b2(c, OP_SUB, y, g->src[1 - p]); break;
		case OP_SUB: y = p == 0 ? b2(c, OP_ADD, y, g->src[1]) : b2(c, OP_SUB, g->src[0], y); break;
		case OP_MUL: y = b2(c, OP_MUL, y, b1(c, OP_RECIP, g->src[1 - p])); break;
		default:
			*why = uop_info[g->op].name;
			return NULL;
		}
		g = g->src[p];
	}
	return y;
}

/*
** Separation: g, normalized, as A(r) (x) B(c), (x) the product (sum = 0) or the sum:
** h(t, r, r') = t A(r') / A(r), or t + A(r') - A(r). Each factor (term)
** must depend on r or on c, not both; an exp2 factor whose exponent mixes
** them splits (exp2(a + b) = exp2 a exp2 b).
*/
static UOp *
separate_as(UCtx *c, UOp *gn, UOp *const *r, UOp *const *r2, int n, UOp *t, int sum, const char **why)
{
	UOp *A = NULL, *A2, *u;

	for (u = gn; u; ) {
		UOp *f = (u->op == (sum ? OP_ADD : OP_MUL)) ? u->src[1] : u;

		u = u->op == (sum ? OP_ADD : OP_MUL) ? u->src[0] : NULL;
		if (!has_sym(f, r, n, 0))
			continue;
		if (!sum && f->op == OP_EXP2) {
			/* the r-terms of the exponent */
			UOp *s = f->src[0], *ra = NULL;

			for (; s; ) {
				UOp *term = s->op == OP_ADD ? s->src[1] : s;

				s = s->op == OP_ADD ? s->src[0] : NULL;
				if (!has_sym(term, r, n, 0))
					continue;
				{
					UOp *cp[4];
					int nc = 0;

					cparts(term, r, n, cp, &nc, 4, 0);
					if (nc) {
						*why = "a term of an exponent of g depends on r and on c together";
						return NULL;
					}
				}
				ra = ra ? b2(c, OP_ADD, ra, term) : term;
			}
			f = b1(c, OP_EXP2, ra);
		} else {
			UOp *cp[4];
			int nc = 0;

			cparts(f, r, n, cp, &nc, 4, 0);
			if (nc) {
				*why = sum ? "a term of g depends on r and on c together"
				           : "a factor of g depends on r and on c together";
				return NULL;
			}
		}
		A = A ? b2(c, sum ? OP_ADD : OP_MUL, A, f) : f;
	}
	if (!A) {
		*why = "g does not depend on r";
		return NULL;
	}
	A2 = kernel_substitute(c, A, r, r2, n);
	return sum ? b2(c, OP_SUB, b2(c, OP_ADD, t, A2), A)
	           : b2(c, OP_MUL, t, b2(c, OP_MUL, A2, b1(c, OP_RECIP, A)));
}

/*
** g a sum whose terms do not separate additively may still be one factor of r
** times a sum of factors of c: A(r) B1(c) + A(r) B2(c) (the normal form
** distributes products over sums, so P V with V = data - 1 reaches here as
** A data + -A). Each term then separates as a product with the same
** h(t, r, r') = t A(r') / A(r), and that h serves the sum, h being linear in t.
*/
static UOp *
separate(UCtx *c, UOp *gn, UOp *const *r, UOp *const *r2, int n, UOp *t, const char **why)
{
	UOp *h = separate_as(c, gn, r, r2, n, t, gn->op == OP_ADD, why), *u, *hk = NULL;
	const char *why1 = *why, *w2;
	Err e;

	if (h || gn->op != OP_ADD)
		return h;
	for (u = gn; u; ) {
		UOp *term = u->op == OP_ADD ? u->src[1] : u, *h1;

		u = u->op == OP_ADD ? u->src[0] : NULL;
		if (!(h1 = separate_as(c, term, r, r2, n, t, 0, &w2))) {
			*why = why1;
			return NULL;
		}
		if (hk && alg_equal(c, hk, h1, &e) != 1) {
			*why = "a term of g depends on r and on c together, and the terms' factors of r differ";
			return NULL;
		}
		hk = h1;
	}
	return hk;
}

static void prev_denominators(const FRepair *rp, UOp *u, UOp **out, int *n, int max, int depth);

/*
** h in doubles at t = tv, predecessor q's previous value at rq and every other
** value at 0.5 (a finite stand-in): what the fused update computes at the first
** iteration. NaN for an op the algebra does not write.
*/
static double
h_at_node(const UOp *u, const FRepair *rp, int q, double tv, double rq, int depth)
{
	double a, b;
	int i;

	if (depth > 400)
		return NAN;
	if (u == rp->t)
		return tv;
	for (i = 0; i < rp->nr; i++)
		if (u == rp->r[i] || u == rp->r2[i])
			return u == rp->r[i] && i == q ? rq : 0.5;
	if (u->op == OP_CONST)
		return uop_const_value(u);
	if (u->nsrc < 1 || u->nsrc > 2)
		return NAN;
	a = h_at_node(u->src[0], rp, q, tv, rq, depth + 1);
	b = u->nsrc == 2 ? h_at_node(u->src[1], rp, q, tv, rq, depth + 1) : 0;
	switch (u->op) {
	case OP_ADD: return a + b;
	case OP_SUB: return a - b;
	case OP_MUL: return a * b;
	case OP_NEG: return -a;
	case OP_RECIP: return 1 / a;
	case OP_EXP2: return exp2(a);
	case OP_LOG2: return log2(a);
	case OP_MAX: return isnan(a) || isnan(b) ? NAN : fmax(a, b);
	case OP_MIN: return isnan(a) || isnan(b) ? NAN : fmin(a, b);
	case OP_CAST: return a;
	default: return NAN;
	}
}

static double
h_at(const FRepair *rp, int q, double tv, double rq, int depth)
{
	return h_at_node(rp->h, rp, q, tv, rq, depth);
}

/* u with every rounding to a narrower float and back (float32(float16(x))) taken out */
static UOp *
unround(UCtx *c, UOp *u, int depth)
{
	UOp *s[16];
	int i, changed = 0;

	if (depth > 500 || u->nsrc > 16)
		return u;
	if (u->op == OP_CAST && dtype_is_float((DType)u->dtype) && u->src[0]->op == OP_CAST
	&& u->src[0]->src[0]->dtype == u->dtype && dtype_is_float((DType)u->src[0]->dtype)
	&& dtype_bytes((DType)u->src[0]->dtype) < dtype_bytes((DType)u->dtype))
		return unround(c, u->src[0]->src[0], depth + 1);
	for (i = 0; i < u->nsrc; i++) {
		if (!(s[i] = unround(c, u->src[i], depth + 1)))
			return NULL;
		changed |= s[i] != u->src[i];
	}
	return changed ? uop_new(c, (Op)u->op, (DType)u->dtype, s, u->nsrc, u->arg[0], u->arg[1], u->name,
	                         u->data, u->ndata) : u;
}

int
fusion_derive(const Kernel *k0, int t, int lo, int hi, FRepair *rp, Err *e)
{
	Kernel *k = (Kernel *)k0;   /* only its context grows */
	UCtx *c = k->c;
	UOp *sv[64], *ld[MAXL], *other = NULL, *g, *h = NULL, *hn, *cp[8], *gn, *red[MAXL];
	int n = sched_stores(k, t, sv, 64), nl = 0, i, q, nc = 0, nred = 0, relaxed = 0;
	const char *why = NULL;
	char name[K_NAME + 2];
	Buf *ex = &rp->explain;

	memset(rp->rbuf, 0, sizeof rp->rbuf);
	rp->nr = 0;
	rp->upd = NULL;
	for (i = 0; i < n; i++)
		if (sched_update(sv[i], &rp->f, &other)) {
			if (rp->upd)
				return err_set(e, "stage %s updates twice; the pattern X_t = X_t f g(X_r, C) takes one "
				               "update", k->stage[t].name);
			rp->upd = sv[i];
		}
	if (!rp->upd)
		return err_set(e, "stage %s is not a reduction X_t[I] = X_t[I] f g(...) (f one of +, *, max, "
		               "min): no pattern to match", k->stage[t].name);
	(void)sched_update(rp->upd, &rp->f, &other);
	if (rp->upd->nsrc > 2)
		return err_set(e, "stage %s: its update is gated; fuse before splitting with a tail",
		               k->stage[t].name);
	rp->xt = (int)rp->upd->src[0]->src[0]->arg[0];
	/* the target's reduce loops: the loops around the update that do not index X_t */
	{
		UOp *p[256];
		int np = sched_path(k, t, rp->upd, p, 256);

		for (i = 0, nred = 0; i + 1 < np; i++)
			if (p[i]->op == OP_END && !indexes(rp->upd->src[0], krange_var(p[i]->src[0])) && nred < MAXL)
				red[nred++] = krange_var(p[i]->src[0]);
	}
	/* the reduce predecessors: reductions of stages [lo, hi) that g reads at the target's map loops */
	loads(other, ld, &nl, MAXL, 0);
	for (i = 0; i < nl; i++) {
		int b = (int)ld[i]->src[0]->src[0]->arg[0], w, j, isred = 0;
		UOp *ws[64];
		int nw;

		if (b == rp->xt)
			return err_set(e, "stage %s: its update reads %s beside the accumulator; no pattern to "
			               "match", k->stage[t].name, k->buf[b].name);
		for (j = 0; j < nred && !indexes(ld[i]->src[0], red[j]); j++)
			;
		if (j < nred)
			continue;   /* read along the reduction: an input C */
		if ((w = writer(k, b, lo, hi)) < 0) {
			if ((w = writer(k, b, hi, t)) >= 0)
				return err_set(e, "stage %s reads %s, which stage %s computes after the loop's stage "
				               "%s: fuse it under the loop first", k->stage[t].name, k->buf[b].name,
				               k->stage[w].name, k->stage[hi - 1].name);
			continue;   /* complete before: an input C */
		}
		nw = sched_stores(k, w, ws, 64);
		for (j = 0; j < nw; j++)
			isred |= ws[j]->src[0]->src[0]->arg[0] == b && fusion_accumulates(k, ws[j]);
		if (!isred)
			continue;
		if (rp->nr == FMAXR)
			return err_set(e, "stage %s has more than %d reduce predecessors", k->stage[t].name, FMAXR);
		for (j = 0; j < rp->nr && rp->rbuf[j] != b; j++)
			;
		if (j < rp->nr) {
			if (rp->rload[j] != ld[i])
				return err_set(e, "stage %s reads the reduction %s at two indices", k->stage[t].name,
				               k->buf[b].name);
			continue;
		}
		rp->rbuf[rp->nr] = b;
		rp->rload[rp->nr] = ld[i];
		rp->nr++;
	}
	if (rp->nr == 0)
		return err_set(e, "stage %s reads no reduction of stage %s at its map loops: it has no reduce "
		               "predecessor under the loop, and fusing it needs no repair", k->stage[t].name,
		               k->stage[lo].name);
	/* g with the predecessors as symbols r (r1, r2, ... when several) */
	rp->t = alg_sym(c, "t");
	for (q = 0; q < rp->nr; q++) {
		if (rp->nr == 1)
			snprintf(name, sizeof name, "r");
		else
			snprintf(name, sizeof name, "r%d", q + 1);
		rp->r[q] = alg_sym(c, name);
		strcat(name, "'");
		rp->r2[q] = alg_sym(c, name);
	}
	if (!(g = kernel_substitute(c, other, rp->rload, rp->r, rp->nr)))
		return err_set(e, "out of memory");
	{
		UOp *g2 = unround(c, g, 0);
		Buf gb;

		if (!g2)
			return err_set(e, "out of memory");
		if (g2 != g && !rp->relax_casts) {
			buf_init(&gb);
			show(&gb, k, c, g);
			err_set(e, "stage %s: g = %s rounds to a narrower float and back; the repair holds for g "
			        "without the rounding, up to it (FlashAttention rounds p before the rescale): "
			        "give {relax_casts = true} to derive it so", k->stage[t].name, gb.s ? gb.s : "?");
			buf_free(&gb);
			return -1;
		}
		relaxed = g2 != g;
		g = g2;
	}
	rp->g = g;
	emit(ex, "  3. match   X_t = %s, f = %s", k->buf[rp->xt].name, opname(rp->f));
	for (q = 0; q < rp->nr; q++) {
		emit(ex, ", X_r = ");
		kernel_print_expr(ex, k, rp->rload[q]);
		emit(ex, " (%s)", rp->r[q]->name);
	}
	cparts(g, rp->r, rp->nr, cp, &nc, 8, 0);
	for (i = 0; i < nc; i++) {
		emit(ex, ", C = ");
		kernel_print_expr(ex, k, cp[i]);
		if (nc == 1)
			emit(ex, " (c)");
	}
	emit(ex, "\n             g = ");
	if (nc == 1)
		show(ex, k, c, kernel_substitute(c, g, &cp[0], (UOp *[]){ alg_sym(c, "c") }, 1));
	else
		show(ex, k, c, g);
	emit(ex, "\n");
	if (relaxed)
		emit(ex, "             (relax_casts: g rounds to a narrower float and back; h is derived for g "
		     "without the rounding and holds up to it)\n");
	/* Theorem 4.3 first: one c, reached by one path of invertible nodes */
	/*
	** A mask makes g see -inf (where(mask, s, -inf)); a max predecessor is then
	** -inf while every key so far is masked, and g(r, c) = exp(c - r) is
	** exp(-inf + inf). Reading r as 0 there keeps Eq. 4 (it holds for every
	** finite r, used alike in g and h) and gives 0 for the masked terms; the
	** final r is the true one wherever the row has an unmasked key.
	*/
	if (has_inf(other, 0))
		for (q = 0; q < rp->nr; q++) {
			UOp *ws[64];
			int w = writer(k, rp->rbuf[q], lo, hi), nw = w < 0 ? 0 : sched_stores(k, w, ws, 64), j;

			for (j = 0; j < nw && !rp->safe[q]; j++) {
				double v;

				if ((int)ws[j]->src[0]->src[0]->arg[0] != rp->rbuf[q] || ws[j]->src[1]->op != OP_CONST
				|| !dtype_is_float(ws[j]->src[1]->dtype))
					continue;
				v = uop_const_value(ws[j]->src[1]);
				rp->safe[q] = 1;
				rp->init[q] = v;
				emit(ex, "             (g reads a masked -inf: %s, while still %s%s, is read as %g)\n",
				     k->buf[rp->rbuf[q]].name, v < 0 && isinf(v) ? "-" : "", isinf(v) ? "inf" : v == 0 ? "0" : "its init",
				     isinf(v) ? 0.0 : v == 0 ? 1.0 : v);
			}
		}
	rp->method = NULL;
	if (nc == 1 && occurrences(g, cp[0], 0) == 1) {
		UOp *inv = invert(c, g, cp[0], alg_sym(c, "y"), &why), *invn;

		if (inv && alg_normalize(c, kernel_substitute(c, inv, (UOp *[]){ alg_sym(c, "y") },
		                                              (UOp *[]){ rp->t }, 1), &invn, e) == 0) {
			UOp *old[FMAXR + 1], *new[FMAXR + 1];

			for (q = 0; q < rp->nr; q++) {
				old[q] = rp->r[q];
				new[q] = rp->r2[q];
			}
			old[q] = cp[0];
			new[q] = invn;
			h = kernel_substitute(c, g, old, new, rp->nr + 1);
			rp->method = "inverse";
			emit(ex, "  4. invert  y = g(r, c)  =>  c = ");
			show(ex, k, c, kernel_substitute(c, invn, &rp->t, (UOp *[]){ alg_sym(c, "y") }, 1));
			emit(ex, "   (Theorem 4.3)\n");
		}
	} else if (nc == 0)
		why = "g reads nothing but the reduce predecessors";
	else
		why = nc > 1 ? "g reads several inputs" : "c occurs more than once in g";
	if (!h) {
		const char *why2 = NULL;

		if (alg_normalize(c, g, &gn, e) < 0)
			return -1;
		if ((h = separate(c, gn, rp->r, rp->r2, rp->nr, rp->t, &why2))) {
			rp->method = "separation";
			emit(ex, "  4. separate g into a factor of r and a factor of c (no inverse in c: %s)\n",
			     why ? why : "none tried");
		} else {
			Buf gb;

			buf_init(&gb);
			show(&gb, k, c, g);
			err_set(e, "stage %s: no repair function: g = %s has no inverse in c (%s) and does not "
			        "separate into factors of r and c (%s)", k->stage[t].name, gb.s ? gb.s : "?",
			        why ? why : "?", why2 ? why2 : "?");
			buf_free(&gb);
			return -1;
		}
	}
	if (alg_normalize(c, h, &hn, e) < 0)
		return -1;
	rp->h = hn;
	emit(ex, "             h(t, r, r') = ");
	show(ex, k, c, hn);
	emit(ex, "\n");
	/*
	** h may divide by an expression of the previous values (g = c r inverts to
	** c = y / r, so h = t r' / r). Where that expression is 0 (a max that has
	** been 0) the terms summed so far are 0 whatever c was, and nothing recovers
	** them for the new r': Eqs. 4 and 5 hold only where it is not 0. Refused,
	** unless every factor that can be 0 is absent (exp2, recip and positive
	** factors are never 0 in real arithmetic).
	*/
	{
		UOp *den[8];
		int nd = 0;

		prev_denominators(rp, hn, den, &nd, 8, 0);
		if (nd > 0) {
			Buf hb, db;

			buf_init(&hb);
			buf_init(&db);
			show(&hb, k, c, hn);
			show(&db, k, c, den[0]);
			err_set(e, "stage %s: no repair where %s is 0: h(t, r, r') = %s divides by it, and there "
			        "the terms so far are 0 whatever they were (g loses c), so h cannot recover them",
			        k->stage[t].name, db.s ? db.s : "?", hb.s ? hb.s : "?");
			buf_free(&hb);
			buf_free(&db);
			return -1;
		}
	}
	/*
	** The cache of a predecessor starts at its init. An infinite init (-inf for
	** a max, +inf for a min) can make h(X_t, init, r') an inf - inf or a 0 * inf
	** at the first iteration (g = exp(c + r) gives h = t * exp(r' - r)), although
	** X_t is still f's identity there, which h keeps in exact arithmetic (Eq. 5).
	** Where h in floats does not give the identity back, h reads the current
	** value as the previous one while the cache holds the init: exact.
	*/
	for (q = 0; q < rp->nr; q++) {
		UOp *ws[64];
		int w = writer(k, rp->rbuf[q], lo, hi), nw = w < 0 ? 0 : sched_stores(k, w, ws, 64), j;
		double v, id = rp->f == OP_ADD ? 0 : rp->f == OP_MUL ? 1 : rp->f == OP_MAX ? -INFINITY : INFINITY, got;

		for (j = 0; j < nw && !rp->safe[q] && !rp->prev_safe[q]; j++) {
			if ((int)ws[j]->src[0]->src[0]->arg[0] != rp->rbuf[q] || ws[j]->src[1]->op != OP_CONST
			|| !dtype_is_float(ws[j]->src[1]->dtype) || !isinf(v = uop_const_value(ws[j]->src[1])))
				continue;
			got = h_at(rp, q, id, v, 0);
			if (got == id)
				continue;
			rp->prev_safe[q] = 1;
			rp->init[q] = v;
			emit(ex, "             (%s starts at %sinf, and h(%g, %sinf, r') is ", k->buf[rp->rbuf[q]].name,
			     v < 0 ? "-" : "+", id, v < 0 ? "-" : "+");
			emit(ex, isnan(got) ? "NaN" : "%g", got);
			emit(ex, ", not %g: while the cache holds %sinf, h reads the current value as the "
			     "previous one)\n", id, v < 0 ? "-" : "+");
		}
	}
	/* Eq. 4: h(g(r, c), r, r') = g(r', c) */
	{
		UOp *lhs = kernel_substitute(c, hn, &rp->t, &g, 1), *rhs = kernel_substitute(c, g, rp->r, rp->r2, rp->nr);
		int ok = alg_equal(c, lhs, rhs, e);

		if (ok < 0)
			return -1;
		if (!ok)
			return err_set(e, "stage %s: the derived h does not satisfy h(g(r, c), r, r') = g(r', c) "
			               "(Eq. 4)", k->stage[t].name);
		emit(ex, "     prove   h(g(r, c), r, r') = g(r', c)                     holds (Eq. 4)\n");
	}
	/* Eq. 5: h(x f y, r, r') = h(x, r, r') f h(y, r, r') */
	{
		UOp *x = alg_sym(c, "x"), *y = alg_sym(c, "y"), *fxy, *lhs, *rhs;
		Op f = (Op)rp->f;
		int ok;

		fxy = b2(c, f, x, y);
		lhs = kernel_substitute(c, hn, &rp->t, &fxy, 1);
		rhs = b2(c, f, kernel_substitute(c, hn, &rp->t, &x, 1), kernel_substitute(c, hn, &rp->t, &y, 1));
		if ((ok = alg_equal(c, lhs, rhs, e)) < 0)
			return -1;
		if (!ok) {
			Buf a, b;

			buf_init(&a);
			buf_init(&b);
			show(&a, k, c, lhs);
			show(&b, k, c, rhs);
			err_set(e, "stage %s: h does not commute with f = %s (Eq. 5 fails): h(x %s y, r, r') = %s, "
			        "but h(x, r, r') %s h(y, r, r') = %s", k->stage[t].name, opname(f), opname(f),
			        a.s ? a.s : "?", opname(f), b.s ? b.s : "?");
			buf_free(&a);
			buf_free(&b);
			return -1;
		}
		emit(ex, "     prove   h(x %s y, r, r') = h(x, r, r') %s h(y, r, r')   holds (Eq. 5)\n",
		     opname(f), opname(f));
	}
	return 0;
}

/* whether u mentions a previous value (rp->r), not only current ones */
static int
mentions_prev(const FRepair *rp, const UOp *u, int depth)
{
	int i, q;

	if (depth > 400)
		return 1;
	for (q = 0; q < rp->nr; q++)
		if (u == rp->r[q])
			return 1;
	for (i = 0; i < u->nsrc; i++)
		if (mentions_prev(rp, u->src[i], depth + 1))
			return 1;
	return 0;
}

static UOp *zero_part(UCtx *c, UOp *a, int depth);

/* the factors that can be 0 of the denominators in u that read a previous value */
static void
prev_denominators(const FRepair *rp, UOp *u, UOp **out, int *n, int max, int depth)
{
	int i;

	if (depth > 400 || *n == max)
		return;
	if (u->op == OP_RECIP && mentions_prev(rp, u->src[0], 0)) {
		UOp *z = zero_part(NULL, u->src[0], 0);

		for (i = 0; z && i < *n && out[i] != z; i++)
			;
		if (z && i == *n)
			out[(*n)++] = z;
		return;
	}
	for (i = 0; i < u->nsrc; i++)
		prev_denominators(rp, u->src[i], out, n, max, depth + 1);
}

/* the factors of a that can be 0 (not exp2, recip or provably positive), or NULL; c NULL: the first */
static UOp *
zero_part(UCtx *c, UOp *a, int depth)
{
	UOp *l, *r;

	if (depth > 400)
		return a;
	if (a->op == OP_MUL) {
		l = zero_part(c, a->src[0], depth + 1);
		r = zero_part(c, a->src[1], depth + 1);
		return l && r && c ? b2(c, OP_MUL, l, r) : l ? l : r;
	}
	if (a->op == OP_EXP2 || a->op == OP_RECIP || alg_positive(a))
		return NULL;
	return a;
}

UOp *
fusion_apply_h(Kernel *k, const FRepair *rp, UOp *tv, UOp *const *prev, UOp *const *cur)
{
	UOp *old[2 * FMAXR + 1], *new[2 * FMAXR + 1], *h;
	int q, n = 0;

	old[n] = rp->t;
	new[n++] = tv;
	for (q = 0; q < rp->nr; q++) {
		old[n] = rp->r[q];
		new[n++] = prev[q];
		old[n] = rp->r2[q];
		new[n++] = cur[q];
	}
	h = kernel_substitute(k->c, alg_display(k->c, rp->h), old, new, n);
	h = retype(k->c, h, (DType)k->buf[rp->xt].dtype, 0);
	return h;
}

/* ---- step 2: naive loop fusion ---- */

/* the loops (END nodes) on the path to target, outermost first; -1 when a guard is on it */
static int
loops_to(const Kernel *k, int st, const UOp *target, UOp **out, int max)
{
	UOp *p[256];
	int np = sched_path(k, st, target, p, 256), i, n = 0;

	for (i = 0; i + 1 < np; i++) {
		if (p[i]->op == OP_IF && p[i]->src[0]->op != OP_CONST)
			return -1;
		if (p[i]->op == OP_END && n < max)
			out[n++] = p[i];
	}
	if (np > 0 && target->op == OP_END && n < max)
		out[n++] = (UOp *)target;
	return n;
}

/* a statement list as one statement */
static UOp *
seq(Kernel *k, UOp *const *s, int n)
{
	return n == 1 ? s[0] : kernel_if(k, kernel_const(k, DT_BOOL, 1), s, n);
}

/* body under the loops (their ranges with vars vv), innermost last */
static UOp *
nest(Kernel *k, UOp *body, UOp *const *loops, UOp *const *vv, int n)
{
	int i;

	for (i = n - 1; i >= 0 && body; i--) {
		UOp *r = loops[i]->src[0];

		body = kernel_loop(k, kernel_range(k, vv[i], krange_type(r), krange_hw(r)), &body, 1);
	}
	return body;
}

/* a copy back into a cache of the previous value: P[I] = X[I] with P named <X>_prev */
static int
is_prev_copy(const Kernel *k, const UOp *s)
{
	const UOp *v;
	const KBuf *P, *X;
	size_t n;

	if (s->op != OP_STORE || s->nsrc != 2 || (v = s->src[1])->op != OP_LOAD)
		return 0;
	P = &k->buf[s->src[0]->src[0]->arg[0]];
	X = &k->buf[v->src[0]->src[0]->arg[0]];
	n = strlen(X->name);
	return strncmp(P->name, X->name, n) == 0 && strncmp(P->name + n, "_prev", 5) == 0;
}

/* stage t's update, its other stores (the inits) in inits[0..*n-1] (at most 32) */
static UOp *
target(const Kernel *k, int t, UOp **inits, int *n)
{
	UOp *sv[64], *U = NULL;
	int ns = sched_stores(k, t, sv, 64), i, op;

	for (i = 0, *n = 0; i < ns; i++)
		if (sched_update(sv[i], &op, NULL))
			U = sv[i];
		else if (*n < 32)
			inits[(*n)++] = sv[i];
	return U;
}

/* loop l with stmts inserted before its trailing previous-value copies */
static UOp *
append(Kernel *k, UOp *l, UOp *const *stmts, int n)
{
	UOp *b[1024];
	int nb = 0, i, at;

	if (l->nsrc - 1 + n > 1024)
		return NULL;
	for (at = l->nsrc; at > 1 && is_prev_copy(k, l->src[at - 1]); at--)
		;
	for (i = 1; i < at; i++)
		b[nb++] = l->src[i];
	for (i = 0; i < n; i++)
		b[nb++] = stmts[i];
	for (i = at; i < l->nsrc; i++)
		b[nb++] = l->src[i];
	return kernel_loop(k, l->src[0], b, nb);
}

/*
** The extent of the reduce loop the target's split leaves inside, to match
** S's loops under l: a key tile of S (l0 over l1 of extent w, a tail guarded
** when w does not divide the reduction) is matched by the same w, so both
** tile alike (the tail guarded in both). With no single reduce loop of S
** under l that fits, the target's extent divided by S's outer ones, when it
** divides. 0: no split matches.
*/
static int64_t
inner_width(const Kernel *k, int S, const UOp *l, const UOp *upd, int64_t ext, int64_t prod)
{
	UOp *p[256];
	int np = sched_path(k, S, upd, p, 256), i, at = -1, n = 0;
	int64_t w = 0;

	for (i = 0; i < np; i++) {
		if (p[i] == l)
			at = i;
		else if (at >= 0 && p[i]->op == OP_END && !indexes(upd->src[0], krange_var(p[i]->src[0]))) {
			w = krange_extent(p[i]->src[0]);
			n++;
		}
	}
	if (n == 1 && w > 0 && (ext + w - 1) / w == prod)
		return w;
	return ext % prod == 0 ? ext / prod : 0;
}

int
fusion_fuse(Kernel *k, int t, int S, const char *loop, FRepairFn fn, void *aux, Buf *ex, Err *e)
{
	const char *tn = k->stage[t].name;
	UOp *sv[64], *U = NULL, *l, *PS[MAXL], *PT[MAXL], *inits[32], *ix;
	UOp *ms[MAXL], *rs[MAXL], *mt[MAXL], *rt[MAXL], *old[2 * MAXL], *new[2 * MAXL];
	UOp *pre = NULL, *body, *stmts[64], *Xr_upd = NULL;
	int n = sched_stores(k, t, sv, 64), nps, npt, nms = 0, nrs = 0, nmt = 0, nrt = 0, ninit = 0;
	int i, j, op, nsub = 0, nst = 0, xt, reordered = 0;

	for (i = 0; i < n; i++)
		if (sched_update(sv[i], &op, NULL))
			U = sv[i];
	if (!U)
		return err_set(e, "stage %s has no reduction update to fuse", tn);
	xt = (int)U->src[0]->src[0]->arg[0];
	ix = U->src[0];
	for (i = 0; i < n; i++)
		if (sv[i] != U) {
			if (sv[i]->src[0]->src[0]->arg[0] != xt)
				return err_set(e, "stage %s writes %s and %s; it fuses as one reduction", tn,
				               k->buf[xt].name, sv[i]->src[0]->src[0]->name);
			if (ninit == 32)
				return err_set(e, "stage %s has too many inits", tn);
			inits[ninit++] = sv[i];
		}
	if (!(l = sched_loop(k, S, loop, e)))
		return -1;
	if (krange_hw(l->src[0]) != HW_NONE || krange_type(l->src[0]) == AX_THREAD)
		return err_set(e, "loop %s of stage %s runs in parallel (%s); the fused reduction needs its "
		               "iterations in order", loop, k->stage[S].name,
		               krange_hw(l->src[0]) ? hwaxis_name(krange_hw(l->src[0])) : "THREAD");
	/* S's loops down to l: map loops (indexing what S writes under l), then reduce loops */
	if ((nps = loops_to(k, S, l, PS, MAXL)) < 0)
		return err_set(e, "stage %s: a guard stands above loop %s; fuse before splitting with a tail",
		               k->stage[S].name, loop);
	{
		UOp *ss[64];
		int nss = sched_stores(k, S, ss, 64);

		for (i = 0; i < nss && !Xr_upd; i++) {
			UOp *p2[256];
			int np2 = sched_path(k, S, ss[i], p2, 256);

			for (j = 0; j < np2; j++)
				if (p2[j] == l && !is_prev_copy(k, ss[i]))
					Xr_upd = ss[i];
		}
		if (!Xr_upd)
			return err_set(e, "stage %s stores nothing under loop %s", k->stage[S].name, loop);
	}
	for (i = 0; i < nps; i++) {
		UOp *v = krange_var(PS[i]->src[0]);

		if (indexes(Xr_upd->src[0], v)) {
			if (nrs)
				return err_set(e, "stage %s: map loop %s is inside reduce loop %s; fuse before "
				               "reordering", k->stage[S].name, v->name,
				               krange_var(rs[nrs - 1]->src[0])->name);
			ms[nms++] = PS[i];
		} else
			rs[nrs++] = PS[i];
	}
	/* the target: map loops, then reduce loops, the inits beside the first reduce loop */
	for (;;) {
		if ((npt = loops_to(k, t, U, PT, MAXL)) < 0)
			return err_set(e, "stage %s: its update is guarded; fuse before splitting with a tail", tn);
		for (nmt = nrt = 0, i = 0; i < npt; i++) {
			UOp *v = krange_var(PT[i]->src[0]);

			if (indexes(ix, v)) {
				if (nrt)
					return err_set(e, "stage %s: map loop %s is inside reduce loop %s", tn, v->name,
					               krange_var(rt[nrt - 1]->src[0])->name);
				mt[nmt++] = PT[i];
			} else
				rt[nrt++] = PT[i];
		}
		if (nmt < nms)
			return err_set(e, "stage %s has %d map loops; loop %s of stage %s sits under %d", tn, nmt,
			               loop, k->stage[S].name, nms);
		/* S's map loops paired with the target's through what S writes and the target reads there */
		if (nms > 0 && !reordered) {
			UOp *ld[MAXL], *ldb = NULL;
			int nl = 0, pair[MAXL], d, x, y, np = 0, inorder = 1;
			const char *names[MAXL];

			loads(U->src[1], ld, &nl, MAXL, 0);
			for (i = 0; i < nl && !ldb; i++)
				if (ld[i]->src[0]->src[0] == Xr_upd->src[0]->src[0])
					ldb = ld[i];
			for (x = 0; x < nms; x++)
				pair[x] = -1;
			for (d = 1; ldb && d < Xr_upd->src[0]->nsrc && d < ldb->src[0]->nsrc; d++)
				for (x = 0; x < nms; x++)
					for (y = 0; y < nmt; y++)
						if (Xr_upd->src[0]->src[d] == krange_var(ms[x]->src[0])
						&& ldb->src[0]->src[d] == krange_var(mt[y]->src[0]) && pair[x] < 0) {
							pair[x] = y;
							np++;
						}
			/* a loop of one iteration folds to 0 in indices: pair it with one of the target's */
			for (x = 0; x < nms; x++)
				for (y = 0; y < nmt && pair[x] < 0 && krange_extent(ms[x]->src[0]) == 1; y++) {
					int used = 0, z;

					for (z = 0; z < nms; z++)
						used |= pair[z] == y;
					if (!used && krange_extent(mt[y]->src[0]) == 1) {
						pair[x] = y;
						np++;
					}
				}
			if (np == nms) {
				for (x = 0; x < nms; x++) {
					names[x] = krange_var(mt[pair[x]]->src[0])->name;
					inorder &= pair[x] == x;
				}
				for (y = 0, x = nms; y < nmt; y++) {
					int used = 0, z;

					for (z = 0; z < nms; z++)
						used |= pair[z] == y;
					if (!used)
						names[x++] = krange_var(mt[y]->src[0])->name;
				}
				if (!inorder) {
					if (sched_reorder_in(k, t, names, nmt, e) < 0)
						return err_set(e, "stage %s: its map loops must be reordered to put %s first, "
						               "and cannot be: %s", tn, names[0], e->msg);
					if (ex)
						emit(ex, "             (the map loops of %s reordered to match %s)\n", tn,
						     k->stage[S].name);
					reordered = 1;
					if (!(U = target(k, t, inits, &ninit)))
						return err_set(e, "stage %s lost its update", tn);
					ix = U->src[0];
					continue;
				}
			}
		}
		if (nrt < nrs)
			return err_set(e, "stage %s has %d reduce loops; loop %s of stage %s sits under %d", tn,
			               nrt, loop, k->stage[S].name, nrs);
		/* one reduce loop where S has several down to l: split it the same way */
		if (nrs > 0 && krange_extent(rt[0]->src[0]) != krange_extent(rs[0]->src[0]) && nrt == 1) {
			int64_t f[MAXL], prod = 1;
			char vn[K_NAME];

			for (i = 0; i < nrs; i++)
				prod *= f[i] = krange_extent(rs[i]->src[0]);
			f[nrs] = inner_width(k, S, l, Xr_upd, krange_extent(rt[0]->src[0]), prod);
			if (!f[nrs])
				break;
			snprintf(vn, sizeof vn, "%s", krange_var(rt[0]->src[0])->name);
			if (sched_split_in(k, t, vn, f, nrs + (f[nrs] > 1), NULL, e) < 0)
				return -1;
			if (ex)
				emit(ex, "             (loop %s of %s split like the loops of %s down to %s)\n", vn, tn,
				     k->stage[S].name, loop);
			if (!(U = target(k, t, inits, &ninit)))
				return err_set(e, "stage %s lost its update", tn);
			ix = U->src[0];
			continue;
		}
		break;
	}
	for (i = 0; i < nms; i++)
		if (krange_extent(mt[i]->src[0]) != krange_extent(ms[i]->src[0]))
			return err_set(e, "stage %s: map loop %s has %lld iterations, loop %s of stage %s has %lld",
			               tn, krange_var(mt[i]->src[0])->name, (long long)krange_extent(mt[i]->src[0]),
			               krange_var(ms[i]->src[0])->name, k->stage[S].name,
			               (long long)krange_extent(ms[i]->src[0]));
	for (i = 0; i < nrs; i++)
		if (krange_extent(rt[i]->src[0]) != krange_extent(rs[i]->src[0]))
			return err_set(e, "stage %s: reduce loop %s has %lld iterations, loop %s of stage %s has %lld",
			               tn, krange_var(rt[i]->src[0])->name, (long long)krange_extent(rt[i]->src[0]),
			               krange_var(rs[i]->src[0])->name, k->stage[S].name,
			               (long long)krange_extent(rs[i]->src[0]));
	/* the inits sit beside the first unmatched-or-reduce statement: under the map loops only */
	for (i = 0; i < ninit; i++) {
		UOp *p2[MAXL];
		int n2 = loops_to(k, t, inits[i], p2, MAXL);

		if (n2 != nmt)
			return err_set(e, "stage %s: an init of %s is not right inside the map loops", tn,
			               k->buf[xt].name);
	}
	/* variables: matched ones become S's; unmatched ones keep theirs unless a loop around l has it */
	for (i = 0; i < nmt + nrt; i++) {
		UOp *lp = i < nmt ? mt[i] : rt[i - nmt], *v = krange_var(lp->src[0]);
		int matched = i < nmt ? i < nms : i - nmt < nrs, q, clash = 0;

		old[nsub] = v;
		if (matched) {
			new[nsub++] = krange_var((i < nmt ? ms[i] : rs[i - nmt])->src[0]);
			continue;
		}
		for (q = 0; q < nps; q++)
			clash |= strcmp(krange_var(PS[q]->src[0])->name, v->name) == 0;
		new[nsub++] = clash ? sched_fresh_var(k, S, v->name, krange_extent(lp->src[0])) : v;
	}
	for (i = 0; i < nsub; i++)
		if (!new[i])
			return err_set(e, "out of memory");
	/* the derivation above spoke the target's names; what follows speaks the fused stage's */
	if (ex) {
		int said = 0;

		for (i = 0; i < nsub; i++)
			if (strcmp(old[i]->name, new[i]->name) != 0) {
				emit(ex, said ? ", %s is %s" : "     names   in the fused stage, %s's loop %s is %s", said ? old[i]->name : tn,
				     said ? new[i]->name : old[i]->name, new[i]->name);
				said = 1;
			}
		if (said)
			emit(ex, " (steps 3 and 4 use %s's own names)\n", tn);
	}
	if (nrs > 0) {
		/* the inits go before S's first reduce loop, under the unmatched map loops */
		UOp *is[32];

		for (i = 0; i < ninit; i++)
			if (!(is[i] = kernel_substitute(k->c, inits[i], old, new, nsub)))
				return err_set(e, "out of memory");
		if (ninit && !(pre = nest(k, seq(k, is, ninit), mt + nms, new + nms, nmt - nms)))
			return err_set(e, "out of memory");
		/* the body of the last matched reduce loop, the update repaired, under the unmatched map loops */
		{
			UOp *lt = rt[nrs - 1];

			for (i = 1; i < lt->nsrc; i++)
				if (!(stmts[nst++] = kernel_substitute(k->c, lt->src[i], old, new, nsub)))
					return err_set(e, "out of memory");
		}
	} else {
		UOp *lt = nms ? mt[nms - 1] : NULL;

		if (!lt)
			return err_set(e, "stage %s: nothing to fuse under loop %s", tn, loop);
		for (i = 1; i < lt->nsrc; i++)
			if (!(stmts[nst++] = kernel_substitute(k->c, lt->src[i], old, new, nsub)))
				return err_set(e, "out of memory");
	}
	if (fn) {
		UOp *U2 = kernel_substitute(k->c, U, old, new, nsub);

		if (!U2 || fn(k, aux, U2, stmts, &nst, e) < 0)
			return e->msg[0] ? -1 : err_set(e, "out of memory");
	}
	body = seq(k, stmts, nst);
	if (nrs > 0 && !(body = nest(k, body, mt + nms, new + nms, nmt - nms)))
		return err_set(e, "out of memory");
	/* into S: the body at the end of l's body, the inits before its first reduce loop */
	{
		UOp *l2 = append(k, l, &body, 1), *p2[256], *first;
		int np2;

		if (!l2 || sched_replace(k, S, l, l2, e) < 0)
			return e->msg[0] ? -1 : err_set(e, "out of memory");
		if (pre) {
			/* the init nest's own loop names: the update's nest now has the fused ones */
			UOp *fv[MAXL];

			for (i = nms; i < nmt; i++)
				if (!(fv[i - nms] = sched_fresh_var(k, S, new[i]->name, krange_extent(mt[i]->src[0]))))
					return err_set(e, "out of memory");
			if (nmt > nms && !(pre = kernel_substitute(k->c, pre, new + nms, fv, nmt - nms)))
				return err_set(e, "out of memory");
			np2 = loops_to(k, S, l2, p2, 256);
			first = p2[nms];
			if (np2 <= nms || sched_replace(k, S, first, kernel_if(k, kernel_const(k, DT_BOOL, 1),
			                                (UOp *[]){ pre, first }, 2), e) < 0)
				return e->msg[0] ? -1 : err_set(e, "out of memory");
		}
	}
	sched_remove_stage(k, t);
	return 0;
}

int
fusion_step(Schedule *s, const char *what, const char *stage, const char *loop, const FusionOpts *o,
            int (*fn)(Kernel *, int, const char *, const FusionOpts *, Buf *, Err *), Err *e)
{
	static const FusionOpts none;
	Kernel *next;
	Buf line, ex;
	Err ie;
	int t, rc;

	memset(&ie, 0, sizeof ie);
	if ((t = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "%s: %s", what, ie.msg);
	if (!(next = sched_begin(s, e)))
		return -1;
	buf_init(&ex);
	if (!o)
		o = &none;
	if (fn(next, t, loop, o, &ex, &ie) < 0) {
		kernel_free(next);
		buf_free(&ex);
		return err_set(e, "%s: %s", what, ie.msg);
	}
	/* the fused nests may share a loop name (the target's init and update nests): one each */
	for (t = 0; t < next->nstage; t++)
		if (sched_unique_loops(next, t, &ie) < 0) {
			kernel_free(next);
			buf_free(&ex);
			return err_set(e, "%s: %s", what, ie.msg);
		}
	buf_init(&line);
	emit(&line, "s:%s(", what);
	sched_quote(&line, stage);
	emit(&line, ", ");
	sched_quote(&line, loop);
	emit(&line, o->relax_casts ? ", {relax_casts = true})" : ")");
	rc = line.oom || ex.oom ? (kernel_free(next), err_set(e, "%s: out of memory", what))
	   : sched_commit(s, next, what, line.s, e);
	if (rc == 0 && ex.s)
		sched_note(s, ex.s);
	buf_free(&line);
	buf_free(&ex);
	return rc;
}

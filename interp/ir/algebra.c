/* algebra.c - real algebra over float UOps: a canonical form (sums of monomials, exp2/log2, max/min) run by the rewrite engine. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/pmap.h"
#include "algebra.h"

enum { MAXT = 256 };

typedef struct Term {
	double k;
	UOp *m;      /* the monomial; NULL for the constant term */
} Term;

typedef struct Fac {
	UOp *b;
	int e;
} Fac;

typedef struct A {
	UCtx *c;
	PMap memo;
	int bad;     /* too large, or out of memory */
	int depth;
} A;

static UOp *norm(A *a, UOp *u);

static int
is_arith(const UOp *u)
{
	if (!dtype_is_float(u->dtype))
		return 0;
	switch (u->op) {
	case OP_CONST: case OP_ADD: case OP_SUB: case OP_NEG: case OP_MUL: case OP_RECIP:
	case OP_EXP2: case OP_LOG2: case OP_MAX: case OP_MIN:
		return 1;
	default:
		return 0;
	}
}

/* x, with values within a relative 1e-9 of an integer made that integer */
static double
snap(double x)
{
	double r = nearbyint(x);

	return fabs(x - r) <= 1e-9 * fmax(1, fabs(x)) ? r : x;
}

static UOp *
fc(A *a, double v)
{
	return uop_constf(a->c, DT_FLOAT64, v);
}

static int
fconst(const UOp *u, double *v)
{
	if (u->op != OP_CONST || !dtype_is_float(u->dtype))
		return 0;
	*v = uop_const_value(u);
	return 1;
}

static UOp *
mk(A *a, Op op, UOp *x, UOp *y)
{
	UOp *s[2] = { x, y };
	UOp *r;

	if (!x || (y == NULL && op != OP_RECIP && op != OP_EXP2 && op != OP_LOG2 && op != OP_NEG)) {
		a->bad = 1;
		return NULL;
	}
	r = uop_new(a->c, op, DT_FLOAT64, s, y ? 2 : 1, 0, 0, NULL, NULL, 0);
	if (!r)
		a->bad = 1;
	return r;
}

/* a total structural order: deterministic across runs (never by address) */
static int
cmp(const UOp *x, const UOp *y)
{
	int i, r;

	if (x == y)
		return 0;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	if (x->dtype != y->dtype)
		return x->dtype < y->dtype ? -1 : 1;
	if (x->nsrc != y->nsrc)
		return x->nsrc < y->nsrc ? -1 : 1;
	if (x->arg[0] != y->arg[0])
		return x->arg[0] < y->arg[0] ? -1 : 1;
	if (x->arg[1] != y->arg[1])
		return x->arg[1] < y->arg[1] ? -1 : 1;
	if ((x->name != NULL) != (y->name != NULL))
		return x->name ? 1 : -1;
	if (x->name && (r = strcmp(x->name, y->name)) != 0)
		return r;
	for (i = 0; i < x->nsrc; i++)
		if ((r = cmp(x->src[i], y->src[i])) != 0)
			return r;
	return x < y ? -1 : 1;   /* distinct data (unreachable for expression nodes) */
}

/* ---- sums ---- */

/* the coefficient of a canonical product and the monomial without it */
static UOp *
split_coef(A *a, UOp *u, double *k)
{
	UOp *m;

	*k = 1;
	if (fconst(u, k))
		return NULL;
	if (u->op != OP_MUL)
		return u;
	m = split_coef(a, u->src[0], k);
	return m ? mk(a, OP_MUL, m, u->src[1]) : u->src[1];
}

/* k * m as a canonical product: the coefficient leftmost in the chain */
static UOp *
with_coef(A *a, double k, UOp *m)
{
	if (k == 1)
		return m;
	if (m->op == OP_MUL)
		return mk(a, OP_MUL, with_coef(a, k, m->src[0]), m->src[1]);
	return mk(a, OP_MUL, fc(a, k), m);
}

/* the terms of canonical u, times k, appended */
static void
terms(A *a, UOp *u, double k, Term *t, int *n)
{
	double c;
	UOp *m;

	if (u->op == OP_ADD) {
		terms(a, u->src[0], k, t, n);
		terms(a, u->src[1], k, t, n);
		return;
	}
	if (*n >= MAXT) {
		a->bad = 1;
		return;
	}
	m = split_coef(a, u, &c);
	t[*n].k = k * c;
	t[(*n)++].m = m;
}

static int
term_cmp(const void *x, const void *y)
{
	const Term *p = x, *q = y;

	if (!p->m || !q->m)
		return p->m ? -1 : q->m ? 1 : 0;   /* the constant last */
	return cmp(p->m, q->m);
}

/* canonical sum of raw terms */
static UOp *
build_sum(A *a, Term *t, int n)
{
	UOp *r = NULL;
	int i, j, m = 0;

	/* like terms combine */
	for (i = 0; i < n; i++) {
		for (j = 0; j < m && t[j].m != t[i].m; j++)
			;
		if (j < m)
			t[j].k += t[i].k;
		else
			t[m++] = t[i];
	}
	for (i = j = 0; i < m; i++) {
		t[i].k = snap(t[i].k);
		if (t[i].k != 0)
			t[j++] = t[i];
	}
	m = j;
	/* max(x, y) + rest = max(x + rest, y + rest) */
	for (i = 0; i < m; i++)
		if (t[i].m && (t[i].m->op == OP_MAX || t[i].m->op == OP_MIN) && t[i].k == 1 && m > 1) {
			UOp *mx = t[i].m, *rest = NULL, *x, *y;

			for (j = 0; j < m; j++) {
				UOp *tj;

				if (j == i)
					continue;
				tj = t[j].m ? (t[j].k == 1 ? t[j].m : mk(a, OP_MUL, fc(a, t[j].k), t[j].m)) : fc(a, t[j].k);
				rest = rest ? mk(a, OP_ADD, rest, tj) : tj;
			}
			x = norm(a, mk(a, OP_ADD, mx->src[0], rest));
			y = norm(a, mk(a, OP_ADD, mx->src[1], rest));
			return a->bad ? NULL : norm(a, mk(a, mx->op, x, y));
		}
	qsort(t, m, sizeof *t, term_cmp);
	for (i = 0; i < m; i++) {
		UOp *x = !t[i].m ? fc(a, t[i].k) : with_coef(a, t[i].k, t[i].m);

		r = r ? mk(a, OP_ADD, r, x) : x;
	}
	return r ? r : fc(a, 0);
}

static UOp *
norm_sum(A *a, UOp *x, UOp *y, double ky)
{
	Term t[MAXT];
	int n = 0;

	terms(a, x, 1, t, &n);
	terms(a, y, ky, t, &n);
	return a->bad ? NULL : build_sum(a, t, n);
}

/* ---- products ---- */

static void
factors(A *a, UOp *u, int e, double *k, Fac *f, int *n, UOp **ex)
{
	double v;

	if (u->op == OP_MUL) {
		factors(a, u->src[0], e, k, f, n, ex);
		factors(a, u->src[1], e, k, f, n, ex);
		return;
	}
	if (fconst(u, &v)) {
		*k *= pow(v, e);
		return;
	}
	if (u->op == OP_RECIP) {
		factors(a, u->src[0], -e, k, f, n, ex);
		return;
	}
	if (u->op == OP_EXP2) {
		UOp *s = e == 1 ? u->src[0] : mk(a, OP_MUL, fc(a, e), u->src[0]);

		*ex = *ex ? mk(a, OP_ADD, *ex, s) : s;
		return;
	}
	if (*n >= MAXT) {
		a->bad = 1;
		return;
	}
	f[*n].b = u;
	f[(*n)++].e = e;
}

static int
fac_cmp(const void *x, const void *y)
{
	const Fac *p = x, *q = y;

	return cmp(p->b, q->b);
}

static UOp *norm_exp2(A *a, UOp *s);

static UOp *
build_product(A *a, double k, Fac *f, int n, UOp *ex)
{
	UOp *r = NULL;
	int i, j, m = 0, e;

	k = snap(k);
	if (k == 0)
		return fc(a, 0);
	/* the exp2 factors as one */
	if (ex) {
		UOp *E = norm_exp2(a, norm(a, ex)), *ex2 = NULL;
		int n0 = n;

		if (a->bad)
			return NULL;
		factors(a, E, 1, &k, f, &n, &ex2);
		for (i = n0; i < n; i++)
			if (f[i].b->op == OP_EXP2)
				a->bad = 1;   /* norm_exp2 returns at most one exp2, held in ex2 */
		ex = ex2;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < m && f[j].b != f[i].b; j++)
			;
		if (j < m)
			f[j].e += f[i].e;
		else
			f[m++] = f[i];
	}
	for (i = j = 0; i < m; i++)
		if (f[i].e != 0)
			f[j++] = f[i];
	m = j;
	/* distribute over a sum */
	for (i = 0; i < m; i++)
		if (f[i].b->op == OP_ADD && f[i].e > 0) {
			Term t[MAXT];
			UOp *rest = fc(a, k), *sum = NULL;
			int nt = 0, q;

			for (j = 0; j < m; j++)
				for (e = 0; e < abs(f[j].e) - (j == i); e++)
					rest = mk(a, OP_MUL, rest, f[j].e > 0 ? f[j].b : mk(a, OP_RECIP, f[j].b, NULL));
			if (ex)
				rest = mk(a, OP_MUL, rest, mk(a, OP_EXP2, ex, NULL));
			terms(a, f[i].b, 1, t, &nt);
			for (q = 0; q < nt && !a->bad; q++) {
				UOp *x = norm(a, mk(a, OP_MUL, rest, t[q].m ? mk(a, OP_MUL, fc(a, t[q].k), t[q].m)
				                                             : fc(a, t[q].k)));

				sum = sum ? norm(a, mk(a, OP_ADD, sum, x)) : x;
			}
			return a->bad ? NULL : sum;
		}
	/* distribute a positive (or negative) rest over a max or min */
	for (i = 0; i < m; i++)
		if ((f[i].b->op == OP_MAX || f[i].b->op == OP_MIN) && f[i].e == 1) {
			UOp *rest = fc(a, k), *x, *y, *mx = f[i].b;
			int pos = 1;
			Op op = (Op)mx->op;

			for (j = 0; j < m; j++)
				if (j != i) {
					pos &= alg_positive(f[j].b) || f[j].e % 2 == 0;
					for (e = 0; e < abs(f[j].e); e++)
						rest = mk(a, OP_MUL, rest, f[j].e > 0 ? f[j].b : mk(a, OP_RECIP, f[j].b, NULL));
				}
			if (!pos)
				continue;
			if (ex)
				rest = mk(a, OP_MUL, rest, mk(a, OP_EXP2, ex, NULL));
			if (k < 0)
				op = op == OP_MAX ? OP_MIN : OP_MAX;
			x = norm(a, mk(a, OP_MUL, mx->src[0], rest));
			y = norm(a, mk(a, OP_MUL, mx->src[1], rest));
			return a->bad ? NULL : norm(a, mk(a, op, x, y));
		}
	qsort(f, m, sizeof *f, fac_cmp);
	if (k != 1 || (m == 0 && !ex))
		r = fc(a, k);
	for (i = 0; i < m; i++)
		for (e = 0; e < abs(f[i].e); e++) {
			UOp *x = f[i].e > 0 ? f[i].b : mk(a, OP_RECIP, f[i].b, NULL);

			r = r ? mk(a, OP_MUL, r, x) : x;
		}
	if (ex) {
		UOp *x = mk(a, OP_EXP2, ex, NULL);

		r = r ? mk(a, OP_MUL, r, x) : x;
	}
	return r;
}

static UOp *
norm_product(A *a, UOp *u)
{
	Fac f[MAXT];
	double k = 1;
	int n = 0;
	UOp *ex = NULL;

	factors(a, u, 1, &k, f, &n, &ex);
	return a->bad ? NULL : build_product(a, k, f, n, ex);
}

/* exp2 of a canonical sum: log2 terms with integer coefficients leave it */
static UOp *
norm_exp2(A *a, UOp *s)
{
	Term t[MAXT];
	Fac f[MAXT];
	int n = 0, nf = 0, i, j;
	double v;

	if (fconst(s, &v))
		return fc(a, exp2(v));
	terms(a, s, 1, t, &n);
	for (i = j = 0; i < n; i++) {
		double r = snap(t[i].k);

		if (t[i].m && t[i].m->op == OP_LOG2 && r == nearbyint(r) && fabs(r) < 64 && nf < MAXT) {
			f[nf].b = t[i].m->src[0];
			f[nf++].e = (int)r;
		} else
			t[j++] = t[i];
	}
	if (nf == 0)
		return mk(a, OP_EXP2, s, NULL);
	{
		UOp *rest = build_sum(a, t, j), *x;

		if (a->bad)
			return NULL;
		x = fconst(rest, &v) ? fc(a, exp2(v)) : mk(a, OP_EXP2, rest, NULL);
		for (i = 0; i < nf; i++)
			for (j = 0; j < abs(f[i].e); j++)
				x = mk(a, OP_MUL, x, f[i].e > 0 ? f[i].b : mk(a, OP_RECIP, f[i].b, NULL));
		return norm_product(a, x);
	}
}

static UOp *
norm_log2(A *a, UOp *x)
{
	Fac f[MAXT];
	double k = 1, v;
	int n = 0, i;
	UOp *ex = NULL, *s;

	if (fconst(x, &v))
		return fc(a, log2(v));
	if (x->op == OP_EXP2)
		return x->src[0];
	if (x->op != OP_MUL && x->op != OP_RECIP)
		return mk(a, OP_LOG2, x, NULL);
	/* log2 of a product: the sum of the logs (the factors are positive where it is defined) */
	factors(a, x, 1, &k, f, &n, &ex);
	s = k != 1 ? fc(a, log2(fabs(k))) : fc(a, 0);
	for (i = 0; i < n; i++)
		s = mk(a, OP_ADD, s, mk(a, OP_MUL, fc(a, f[i].e), mk(a, OP_LOG2, f[i].b, NULL)));
	if (ex)
		s = mk(a, OP_ADD, s, ex);
	return a->bad ? NULL : norm(a, s);
}

static UOp *
norm_minmax(A *a, Op op, UOp *x, UOp *y)
{
	double u, v;

	if (x == y)
		return x;
	if (fconst(x, &u) && fconst(y, &v))
		return fc(a, op == OP_MAX ? fmax(u, v) : fmin(u, v));
	if (cmp(x, y) > 0) {
		UOp *t = x;

		x = y;
		y = t;
	}
	return mk(a, op, x, y);
}

static UOp *
norm_node(A *a, UOp *u)
{
	UOp *s[8], *x;
	double v;
	int i, changed = 0;

	if (!is_arith(u)) {
		/* an atom: its float sources normalized, the rest kept */
		if (u->nsrc > 8 || u->op == OP_LOAD || u->op == OP_INDEX)
			return u;
		for (i = 0; i < u->nsrc; i++) {
			s[i] = dtype_is_float(u->src[i]->dtype) ? norm(a, u->src[i]) : u->src[i];
			if (!s[i])
				return NULL;
			changed |= s[i] != u->src[i];
		}
		return changed ? uop_new(a->c, (Op)u->op, (DType)u->dtype, s, u->nsrc, u->arg[0], u->arg[1],
		                         u->name, u->data, u->ndata) : u;
	}
	if (fconst(u, &v))
		return fc(a, v);
	for (i = 0; i < u->nsrc; i++)
		if (!(s[i] = norm(a, u->src[i])))
			return NULL;
	switch (u->op) {
	case OP_ADD: return norm_sum(a, s[0], s[1], 1);
	case OP_SUB: return norm_sum(a, s[0], s[1], -1);
	case OP_NEG: return norm_product(a, mk(a, OP_MUL, fc(a, -1), s[0]));
	case OP_MUL: return norm_product(a, mk(a, OP_MUL, s[0], s[1]));
	case OP_RECIP: return norm_product(a, mk(a, OP_RECIP, s[0], NULL));
	case OP_EXP2: return norm_product(a, mk(a, OP_EXP2, s[0], NULL));
	case OP_LOG2: return norm_log2(a, s[0]);
	case OP_MAX:
	case OP_MIN: return norm_minmax(a, (Op)u->op, s[0], s[1]);
	default:
		x = NULL;
	}
	return x;
}

static UOp *
norm(A *a, UOp *u)
{
	UOp *r;

	if (!u || a->bad)
		return NULL;
	if ((r = pmap_get(&a->memo, u)))
		return r;
	if (++a->depth > 400) {
		a->bad = 1;
		return NULL;
	}
	r = norm_node(a, u);
	a->depth--;
	if (!r || pmap_put(&a->memo, u, r) < 0) {
		a->bad = 1;
		return NULL;
	}
	/* canonical forms are fixed points */
	if (r != u && pmap_put(&a->memo, r, r) < 0)
		a->bad = 1;
	return r;
}

/* ---- the rule the engine runs ---- */

static const UPat p_any = { UPAT_ANY, -1, 0, 0, { 0 } };

static UOp *
r_canon(UCtx *c, UOp *root, UOp **cap, void *aux)
{
	A a = { c, { 0 }, 0, 0 };
	UOp *r;

	(void)cap;
	(void)aux;
	if (!is_arith(root))
		return NULL;
	r = norm(&a, root);
	pmap_free(&a.memo);
	return r && r != root ? r : NULL;
}

const URule alg_rules[] = {
	{ "real canonical form", &p_any, r_canon },
};
const int alg_nrules = 1;

int
alg_normalize(UCtx *c, UOp *u, UOp **out, Err *e)
{
	A a = { c, { 0 }, 0, 0 };
	UOp *r;

	/* the whole tree at once (atoms keep float subexpressions the engine does not visit) */
	r = norm(&a, u);
	pmap_free(&a.memo);
	if (!r)
		return err_set(e, "algebra: the expression is too large to normalize");
	return uop_rewrite(c, r, alg_rules, alg_nrules, NULL, 100000, out, e);
}

int
alg_equal(UCtx *c, UOp *x, UOp *y, Err *e)
{
	UOp *p, *q;

	if (alg_normalize(c, x, &p, e) < 0 || alg_normalize(c, y, &q, e) < 0)
		return -1;
	return p == q;
}

UOp *
alg_sym(UCtx *c, const char *name)
{
	return uop_new(c, OP_VAR, DT_FLOAT64, NULL, 0, 0, 0, name, NULL, 0);
}

int
alg_positive(const UOp *u)
{
	double v;

	if (fconst(u, &v))
		return v > 0;
	switch (u->op) {
	case OP_EXP2: return 1;
	case OP_MUL:
	case OP_ADD: return alg_positive(u->src[0]) && alg_positive(u->src[1]);
	case OP_RECIP: return alg_positive(u->src[0]);
	case OP_MAX: return alg_positive(u->src[0]) || alg_positive(u->src[1]);
	case OP_MIN: return alg_positive(u->src[0]) && alg_positive(u->src[1]);
	default: return 0;
	}
}

UOp *
alg_display(UCtx *c, UOp *u)
{
	static const double L2E = 1.4426950408889634;
	UOp *s[8], *r = u;
	int i, changed = 0;
	double v;

	if (!u || u->nsrc > 8 || u->op == OP_LOAD || u->op == OP_INDEX)
		return u;
	if (u->op == OP_EXP2 && dtype_is_float(u->dtype)) {
		/* exp2(s) as exp(s / log2(e)), the coefficients rounded to 6 digits where that is exact to 1e-6 */
		A a = { c, { 0 }, 0, 0 };
		Term t[MAXT];
		int n = 0;
		UOp *x;

		terms(&a, u->src[0], 1 / L2E, t, &n);
		for (i = 0; i < n && !a.bad; i++) {
			double q = t[i].k, rq = nearbyint(q * 1e6) / 1e6;

			if (fabs(q - rq) <= 1e-6 * fabs(q))
				t[i].k = rq;
		}
		x = a.bad ? NULL : build_sum(&a, t, n);
		pmap_free(&a.memo);
		if (!x)
			return u;
		return uop_new(c, OP_EXP2, (DType)u->dtype, (UOp *[]){ uop_new(c, OP_MUL, (DType)u->dtype,
		               (UOp *[]){ alg_display(c, x), uop_constf(c, DT_FLOAT64, L2E) }, 2, 0, 0, NULL,
		               NULL, 0) }, 1, 0, 0, NULL, NULL, 0);
	}
	for (i = 0; i < u->nsrc; i++) {
		s[i] = alg_display(c, u->src[i]);
		changed |= s[i] != u->src[i];
	}
	if (changed)
		r = uop_new(c, (Op)u->op, (DType)u->dtype, s, u->nsrc, u->arg[0], u->arg[1], u->name, u->data,
		            u->ndata);
	/* x + (-k)*y is x - k*y */
	if (r && r->op == OP_ADD && dtype_is_float(r->dtype)) {
		for (i = 1; i >= 0; i--) {
			UOp *m = r->src[i], *o = r->src[1 - i];

			if (m->op == OP_NEG)
				return uop_new(c, OP_SUB, (DType)r->dtype, (UOp *[]){ o, m->src[0] }, 2, 0, 0, NULL,
				               NULL, 0);
			if (m->op == OP_MUL && fconst(m->src[0], &v) && v < 0) {
				UOp *y = v == -1 ? m->src[1] : uop_new(c, OP_MUL, (DType)m->dtype,
				         (UOp *[]){ uop_constf(c, (DType)m->src[0]->dtype, -v), m->src[1] }, 2, 0, 0,
				         NULL, NULL, 0);

				return uop_new(c, OP_SUB, (DType)r->dtype, (UOp *[]){ o, y }, 2, 0, 0, NULL, NULL, 0);
			}
		}
	}
	/* (-1)*y is -y */
	if (r && r->op == OP_MUL && dtype_is_float(r->dtype) && fconst(r->src[0], &v) && v == -1)
		return uop_new(c, OP_NEG, (DType)r->dtype, &r->src[1], 1, 0, 0, NULL, NULL, 0);
	return r;
}

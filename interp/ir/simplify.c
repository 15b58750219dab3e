/* simplify.c - the symbolic rule set (folding, like terms, LEGO's Table II, div/mod folding) and the cost model. */
#include <stdlib.h>
#include <string.h>

#include "uop.h"

/*
** Sums are handled as a whole: a linear combination sum(coef_i * base_i) + k
** of distinct non-linear bases. Every rule on + - * (by a constant) // % first
** flattens its operand into that form, so the rules see through any
** association and order. The canonical sum is a left chain of
** base*coef terms in uop_cmp order with the constant last: ((i + j*4) + 3).
*/
enum { MAXTERMS = 128 };

typedef struct Term {
	UOp *base;
	int64_t coef;
} Term;

typedef struct Sum {
	Term t[MAXTERMS];
	int n;
	int64_t k;
	int bad;       /* overflow or too many terms: leave the expression alone */
} Sum;

static int
islinear(const UOp *u)
{
	return u->dtype != DT_BOOL && (u->op == OP_ADD || u->op == OP_SUB || u->op == OP_NEG
	    || (u->op == OP_MUL && (u->src[0]->op == OP_CONST || u->src[1]->op == OP_CONST)));
}

static int
issum(const UOp *u)
{
	return u->op == OP_ADD || u->op == OP_SUB || u->op == OP_NEG;
}

/* deep: distribute constants over sums; shallow keeps (a+b)*c as one term. */
static void
flatten(Sum *s, UOp *u, int64_t coef, int deep)
{
	int64_t v;

	if (s->bad)
		return;
	if (u->dtype == DT_BOOL) {
		goto term;
	}
	switch (u->op) {
	case OP_CONST:
		if (uck_mul(coef, u->arg[0], &v) < 0 || uck_add(s->k, v, &s->k) < 0)
			s->bad = 1;
		return;
	case OP_ADD:
		flatten(s, u->src[0], coef, deep);
		flatten(s, u->src[1], coef, deep);
		return;
	case OP_SUB:
		flatten(s, u->src[0], coef, deep);
		if (coef == INT64_MIN)
			s->bad = 1;
		else
			flatten(s, u->src[1], -coef, deep);
		return;
	case OP_NEG:
		if (coef == INT64_MIN)
			s->bad = 1;
		else
			flatten(s, u->src[0], -coef, deep);
		return;
	case OP_MUL:
		if (u->src[1]->op == OP_CONST || u->src[0]->op == OP_CONST) {
			UOp *x = u->src[1]->op == OP_CONST ? u->src[0] : u->src[1];
			UOp *c = u->src[1]->op == OP_CONST ? u->src[1] : u->src[0];
			if (uck_mul(coef, c->arg[0], &v) < 0) {
				s->bad = 1;
				return;
			}
			if (!deep && issum(x)) {
				coef = v;
				u = x;
				goto term;
			}
			flatten(s, x, v, deep);
			return;
		}
		break;
	default:
		break;
	}
term:
	if (s->n >= MAXTERMS) {
		s->bad = 1;
		return;
	}
	s->t[s->n].base = u;
	s->t[s->n].coef = coef;
	s->n++;
}

static int
termcmp(const void *a, const void *b)
{
	return uop_cmp(((const Term *)a)->base, ((const Term *)b)->base);
}

/* Sort by base, add up equal bases, drop zero coefficients. */
static void
collect(Sum *s)
{
	int i, j;

	qsort(s->t, s->n, sizeof s->t[0], termcmp);
	for (i = 0, j = -1; i < s->n; i++) {
		if (j >= 0 && s->t[j].base == s->t[i].base) {
			if (uck_add(s->t[j].coef, s->t[i].coef, &s->t[j].coef) < 0)
				s->bad = 1;
		} else
			s->t[++j] = s->t[i];
	}
	s->n = j + 1;
	for (i = j = 0; i < s->n; i++)
		if (s->t[i].coef != 0)
			s->t[j++] = s->t[i];
	s->n = j;
}

static int
find(const Sum *s, Op op, const UOp *x, int64_t c, int64_t coef)
{
	int i;

	for (i = 0; i < s->n; i++) {
		const UOp *b = s->t[i].base;
		if (b->op == op && b->src[0] == x && b->src[1]->op == OP_CONST
		&& b->src[1]->arg[0] == c && s->t[i].coef == coef)
			return i;
	}
	return -1;
}

/* A term (x // y) * y with coefficient coef (the product in either order). */
static int
findprod(const Sum *s, const UOp *x, const UOp *y, int64_t coef)
{
	int i;

	for (i = 0; i < s->n; i++) {
		const UOp *b = s->t[i].base;
		const UOp *q;
		if (b->op != OP_MUL || s->t[i].coef != coef)
			continue;
		q = b->src[0] == y ? b->src[1] : b->src[1] == y ? b->src[0] : NULL;
		if (q && q->op == OP_IDIV && q->src[0] == x && q->src[1] == y)
			return i;
	}
	return -1;
}

static void
drop(Sum *s, int i)
{
	s->t[i] = s->t[--s->n];
}

/*
** Recombine quotient and remainder pairs (c, K > 0, m the coefficient):
**   (x//c)*c*m + (x%c)*m         -> x*m                 (LEGO's a*(x/a) + x%a -> x)
**   (x//(c*K))*K*m + ((x//c)%K)*m -> (x//c)*m
**   ((x//c)%K)*c*m + (x%c)*m      -> (x%(c*K))*m
*/
static int
recombine(UCtx *c, Sum *s)
{
	int i, j, any = 0;
	int64_t m, K, cc, v;
	UOp *b, *x, *n;

again:
	for (i = 0; i < s->n && !s->bad; i++) {
		b = s->t[i].base;
		m = s->t[i].coef;
		if (b->op == OP_MOD && b->src[1]->op != OP_CONST && b->src[1]->vmin > 0
		&& (j = findprod(s, b->src[0], b->src[1], m)) >= 0) {
			/* symbolic: (x//y)*y*m + (x%y)*m -> x*m */
			x = b->src[0];
			if (j > i) { drop(s, j); drop(s, i); } else { drop(s, i); drop(s, j); }
			flatten(s, x, m, 1);
			any = 1;
			goto again;
		}
		if (b->op != OP_MOD || b->src[1]->op != OP_CONST || (K = b->src[1]->arg[0]) <= 0)
			continue;
		x = b->src[0];
		if (uck_mul(m, K, &v) == 0 && (j = find(s, OP_IDIV, x, K, v)) >= 0) {
			if (j > i) { drop(s, j); drop(s, i); } else { drop(s, i); drop(s, j); }
			flatten(s, x, m, 1);
			any = 1;
			goto again;
		}
		if (x->op == OP_IDIV && x->src[1]->op == OP_CONST && (cc = x->src[1]->arg[0]) > 0) {
			int64_t cK;
			if (uck_mul(cc, K, &cK) == 0 && uck_mul(m, K, &v) == 0
			&& (j = find(s, OP_IDIV, x->src[0], cK, v)) >= 0) {
				if (j > i) { drop(s, j); drop(s, i); } else { drop(s, i); drop(s, j); }
				flatten(s, x, m, 1);
				any = 1;
				goto again;
			}
			if (m % cc == 0 && uck_mul(cc, K, &cK) == 0
			&& (j = find(s, OP_MOD, x->src[0], cc, m / cc)) >= 0) {
				if (j > i) { drop(s, j); drop(s, i); } else { drop(s, i); drop(s, j); }
				n = uop_mod(c, x->src[0], uop_const(c, (DType)x->dtype, cK));
				if (!n) {
					s->bad = 1;
					return any;
				}
				flatten(s, n, m / cc, 1);
				any = 1;
				goto again;
			}
		}
	}
	if (any)
		collect(s);
	return any;
}

static UOp *
build(UCtx *c, DType t, const Sum *s)
{
	UOp *acc = NULL, *x;
	int i;

	for (i = 0; i < s->n; i++) {
		x = s->t[i].coef == 1 ? s->t[i].base
		  : uop_mul(c, s->t[i].base, uop_const(c, t, s->t[i].coef));
		acc = acc ? uop_add(c, acc, x) : x;
	}
	if (!acc)
		return uop_const(c, t, s->k);
	if (s->k)
		acc = uop_add(c, acc, uop_const(c, t, s->k));
	return acc;
}

static int
sumof(UCtx *c, UOp *u, Sum *s)
{
	s->n = 0;
	s->k = 0;
	s->bad = 0;
	flatten(s, u, 1, 1);
	if (!s->bad)
		collect(s);
	if (!s->bad)
		recombine(c, s);
	return s->bad ? -1 : 0;
}

/* The range of a sum of terms, from the ranges of the bases; -1 on overflow. */
static int
sumrange(const Sum *s, int64_t *lo, int64_t *hi)
{
	int64_t a, b, l = s->k, h = s->k;
	int i;

	for (i = 0; i < s->n; i++) {
		const Term *t = &s->t[i];
		if (uck_mul(t->base->vmin, t->coef, &a) < 0 || uck_mul(t->base->vmax, t->coef, &b) < 0)
			return -1;
		if (a > b) {
			int64_t x = a;
			a = b;
			b = x;
		}
		if (uck_add(l, a, &l) < 0 || uck_add(h, b, &h) < 0)
			return -1;
	}
	*lo = l;
	*hi = h;
	return 0;
}

static int64_t
gcd(int64_t a, int64_t b)
{
	if (a < 0)
		a = a == INT64_MIN ? INT64_MAX : -a;
	if (b < 0)
		b = b == INT64_MIN ? INT64_MAX : -b;
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static int64_t
fdiv(int64_t a, int64_t b)
{
	int64_t r;

	uck_fdiv(a, b, &r);
	return r;
}

/*
** The rules. Each returns the replacement or NULL when it does not apply.
*/

/* Any node whose range is one value is that value. */
static UOp *
r_const(UCtx *c, UOp *u, UOp **cap, void *aux)
{
	if (u->op == OP_CONST || u->op == OP_VAR || u->vmin != u->vmax || u->dtype == DT_VOID)
		return NULL;
	return uop_const(c, (DType)u->dtype, u->vmin);
}

/* Constant folding, like terms, canonical order of a linear combination. */
static UOp *
r_linear(UCtx *c, UOp *u, UOp **cap, void *aux)
{
	Sum s;

	if (!islinear(u) || sumof(c, u, &s) < 0)
		return NULL;
	return build(c, (DType)u->dtype, &s);
}

/* Products of non-constants: factors sorted, constants multiplied out last. */
static void
factors(UOp *u, UOp **f, int *n, int64_t *k, int *bad)
{
	if (*bad)
		return;
	if (u->op == OP_MUL && u->dtype != DT_BOOL) {
		factors(u->src[0], f, n, k, bad);
		factors(u->src[1], f, n, k, bad);
	} else if (u->op == OP_CONST) {
		if (uck_mul(*k, u->arg[0], k) < 0)
			*bad = 1;
	} else if (*n < MAXTERMS)
		f[(*n)++] = u;
	else
		*bad = 1;
}

static int
ucmp(const void *a, const void *b)
{
	return uop_cmp(*(UOp *const *)a, *(UOp *const *)b);
}

static UOp *
r_product(UCtx *c, UOp *u, UOp **cap, void *aux)
{
	UOp *f[MAXTERMS], *acc;
	int n = 0, bad = 0, i;
	int64_t k = 1;

	if (u->op != OP_MUL || islinear(u))
		return NULL;
	factors(u, f, &n, &k, &bad);
	if (bad)
		return NULL;
	qsort(f, n, sizeof f[0], ucmp);
	for (acc = f[0], i = 1; i < n; i++)
		acc = uop_mul(c, acc, f[i]);
	return uop_mul(c, acc, uop_const(c, (DType)u->dtype, k));
}

/* Terms by decreasing magnitude of coefficient. */
static int
bycoef(const void *a, const void *b)
{
	int64_t x = ((const Term *)a)->coef, y = ((const Term *)b)->coef;

	x = x < 0 ? -(x + 1) : x;
	y = y < 0 ? -(y + 1) : y;
	return x > y ? -1 : x < y ? 1 : termcmp(a, b);
}

/*
** x // C for a constant C > 0 (LEGO's rules 2-4 and 6, tinygrad's div folding):
**   the quotient is one value over x's range                        -> that value
**   (y // a) // C                                                   -> y // (a*C)
**   (y % (C*K)) // C                                                -> (y // C) % K
**   (sum of terms divisible by C) + rest: (d*q + r) // d            -> q + r // d
**       (and q alone when r // d is one value over its range)
**   gcd g of the rest's coefficients and C: (g*y + b) // (g*h)      -> (y + b//g) // h
*/
/*
** A modulo under a division or modulo by a divisor of its modulus (y, w > 0,
** y | w proved from the factors):
**   (z % w) % y  -> z % y
**   (z % w) // y -> (z // y) % (w / y)
** (floor semantics: both hold for every integer z). This is what unflatten
** chains over symbolic sizes need: pid % (GM*n) // GM -> pid // GM % n.
*/
static int divides(UOp *base, int64_t coef, UOp *y, UCtx *c, DType t, UOp **quot, int64_t *qcoef);

static UOp *
modchain(UCtx *c, UOp *u)
{
	UOp *x = u->src[0], *y = u->src[1], *w, *q = NULL, *f[MAXTERMS];
	DType t = (DType)u->dtype;
	int64_t qc = 1, kw = 1;
	int n = 0, bad = 0, i;

	if (x->op != OP_MOD || t == DT_BOOL || y->vmin <= 0 || x->src[1]->vmin <= 0)
		return NULL;
	w = x->src[1];
	if (y->op == OP_CONST) {
		factors(w, f, &n, &kw, &bad);
		if (bad || kw % y->arg[0] != 0)
			return NULL;
		qc = kw / y->arg[0];
		for (i = 0; i < n; i++)
			q = q ? uop_mul(c, q, f[i]) : f[i];
		if (!q)
			q = uop_const(c, t, 1);
	} else if (!divides(w, 1, y, c, t, &q, &qc))
		return NULL;
	if (u->op == OP_MOD)
		return uop_mod(c, x->src[0], y);
	if (qc != 1)
		q = uop_mul(c, q, uop_const(c, t, qc));
	return uop_mod(c, uop_idiv(c, x->src[0], y), q);
}

static UOp *
r_div(UCtx *c, UOp *u, UOp **cap, void *aux)
{
	UOp *x = u->src[0], *y;
	DType t = (DType)u->dtype;
	int64_t C, v, lo, hi, g, K;
	Sum s, d, n;
	int i, k;

	if (u->src[1]->op != OP_CONST || t == DT_BOOL)
		return NULL;
	if ((y = modchain(c, u)))
		return y;
	C = u->src[1]->arg[0];
	if (C == 0 || C == INT64_MIN)
		return NULL;
	if (fdiv(x->vmin, C) == fdiv(x->vmax, C))
		return uop_const(c, t, fdiv(x->vmin, C));
	if (C < 0)
		return NULL;
	if (x->op == OP_IDIV && x->src[1]->op == OP_CONST && x->src[1]->arg[0] > 0
	&& uck_mul(x->src[1]->arg[0], C, &v) == 0)
		return uop_idiv(c, x->src[0], uop_const(c, t, v));
	if (x->op == OP_MOD && x->src[1]->op == OP_CONST && (K = x->src[1]->arg[0]) > C
	&& K % C == 0)
		return uop_mod(c, uop_idiv(c, x->src[0], u->src[1]), uop_const(c, t, K / C));
	if (sumof(c, x, &s) < 0)
		return NULL;
	d.n = n.n = 0;
	d.k = n.k = 0;
	d.bad = n.bad = 0;
	for (i = 0; i < s.n; i++) {
		if (s.t[i].coef % C == 0) {
			d.t[d.n] = s.t[i];
			d.t[d.n++].coef /= C;
		} else
			n.t[n.n++] = s.t[i];
	}
	n.k = s.k;
	if (sumrange(&n, &lo, &hi) == 0 && fdiv(lo, C) == fdiv(hi, C)) {
		d.k = fdiv(lo, C);
		return build(c, t, &d);
	}
	if (d.n > 0) {
		y = uop_idiv(c, build(c, t, &n), u->src[1]);
		return uop_add(c, build(c, t, &d), y);
	}
	/* small terms: (g*Y + r) // C -> Y // (C/g) when g | C and 0 <= r < g,
	** where Y collects the terms with the largest coefficients (tinygrad's
	** "remove small terms") */
	qsort(n.t, n.n, sizeof n.t[0], bycoef);
	for (k = 1; k < n.n; k++) {
		Sum big = n, small = n;
		int64_t slo, shi;
		for (g = C, i = 0; i < k; i++)
			g = gcd(g, n.t[i].coef);
		if (g <= 1)
			break;
		small.n = 0;
		for (i = k; i < n.n; i++)
			small.t[small.n++] = n.t[i];
		if (sumrange(&small, &slo, &shi) < 0 || slo < 0 || shi >= g)
			continue;
		big.n = k;
		big.k = 0;
		for (i = 0; i < k; i++)
			big.t[i].coef /= g;
		collect(&big);
		return uop_idiv(c, build(c, t, &big), uop_const(c, t, C / g));
	}
	for (g = C, i = 0; i < n.n; i++)
		g = gcd(g, n.t[i].coef);
	if (g > 1) {
		for (i = 0; i < n.n; i++)
			n.t[i].coef /= g;
		n.k = fdiv(n.k, g);
		return uop_idiv(c, build(c, t, &n), uop_const(c, t, C / g));
	}
	return NULL;
}

/*
** x % C for a constant C > 0 (LEGO's rules 1 and 5, tinygrad's mod folding):
**   x's range lies in one band [q*C, q*C + C)                       -> x - q*C
**   (y % (C*K)) % C                                                 -> y % C
**   (d*q + r) % d: coefficients reduced mod C, multiples dropped    -> r % d
*/
static UOp *
r_mod(UCtx *c, UOp *u, UOp **cap, void *aux)
{
	UOp *x = u->src[0];
	DType t = (DType)u->dtype;
	int64_t C, q, r;
	Sum s;
	int i, changed = 0;

	if (u->src[1]->op != OP_CONST || t == DT_BOOL)
		return NULL;
	if ((x = modchain(c, u)))
		return x;
	x = u->src[0];
	C = u->src[1]->arg[0];
	if (C <= 0)
		return NULL;
	q = fdiv(x->vmin, C);
	if (q == fdiv(x->vmax, C) && uck_mul(q, C, &r) == 0 && r != INT64_MIN)
		return uop_add(c, x, uop_const(c, t, -r));
	if (x->op == OP_MOD && x->src[1]->op == OP_CONST && x->src[1]->arg[0] > 0
	&& x->src[1]->arg[0] % C == 0)
		return uop_mod(c, x->src[0], u->src[1]);
	if (sumof(c, x, &s) < 0)
		return NULL;
	for (i = 0; i < s.n; i++) {
		uck_fmod(s.t[i].coef, C, &r);
		changed |= r != s.t[i].coef;
		s.t[i].coef = r;
	}
	uck_fmod(s.k, C, &r);
	changed |= r != s.k;
	s.k = r;
	if (!changed)
		return NULL;
	collect(&s);
	return uop_mod(c, build(c, t, &s), u->src[1]);
}

/* min and max decided by ranges. */
static UOp *
r_minmax(UCtx *c, UOp *u, UOp **cap, void *aux)
{
	UOp *a = u->src[0], *b = u->src[1];

	if (u->op == OP_MIN)
		return a->vmax <= b->vmin ? a : b->vmax <= a->vmin ? b : NULL;
	return a->vmin >= b->vmax ? a : b->vmin >= a->vmax ? b : NULL;
}

/* Canonical order of the other commutative binary ops. */
static UOp *
r_order(UCtx *c, UOp *u, UOp **cap, void *aux)
{
	if (u->nsrc != 2 || !(uop_info[u->op].flags & U_COMM) || u->op == OP_ADD
	|| u->op == OP_MUL || uop_cmp(u->src[0], u->src[1]) <= 0)
		return NULL;
	return uop_alu(c, (Op)u->op, u->src[1], u->src[0]);
}

/*
** Comparisons with a constant (tinygrad's lt folding):
**   x + k < c  -> x < c - k           x // d < c -> x < c*d      (d > 0)
**   g*x < c    -> x < ceil(c / g)     (g the common factor of the terms, g > 1)
** so that ranges decide more and masks shed their divisions.
*/
static UOp *
r_cmp(UCtx *c, UOp *u, UOp **cap, void *aux)
{
	UOp *a = u->src[0], *b = u->src[1];
	Sum s;
	int64_t v, g = 0;
	int i;

	if (b->op != OP_CONST)
		return NULL;
	if (u->op == OP_CMPLT && a->op == OP_IDIV && a->src[1]->op == OP_CONST && a->src[1]->arg[0] > 0
	&& uck_mul(b->arg[0], a->src[1]->arg[0], &v) == 0)
		return uop_alu(c, OP_CMPLT, a->src[0], uop_const(c, (DType)b->dtype, v));
	if (!islinear(a) || sumof(c, a, &s) < 0)
		return NULL;
	if (u->op == OP_CMPLT && s.k == 0) {
		for (i = 0; i < s.n; i++)
			g = gcd(g, s.t[i].coef);
		if (g <= 1)
			return NULL;
		for (i = 0; i < s.n; i++)
			s.t[i].coef /= g;
		/* x*g < c  <=>  x < ceil(c/g) */
		v = -fdiv(-b->arg[0] == INT64_MIN ? INT64_MAX : -b->arg[0], g);
		return uop_alu(c, OP_CMPLT, build(c, (DType)a->dtype, &s), uop_const(c, (DType)b->dtype, v));
	}
	if (s.k == 0)
		return NULL;
	if (uck_sub(b->arg[0], s.k, &v) < 0)
		return NULL;
	s.k = 0;
	return uop_alu(c, (Op)u->op, build(c, (DType)a->dtype, &s), uop_const(c, (DType)b->dtype, v));
}

/* c < x + k -> c - k < x: the constant on the left, as masks like 1 <= i come */
static UOp *
r_cmp_left(UCtx *c, UOp *u, UOp **cap, void *aux)
{
	UOp *a = u->src[0], *b = u->src[1];
	Sum s;
	int64_t v;

	if (a->op != OP_CONST || b->op == OP_CONST || !islinear(b) || sumof(c, b, &s) < 0 || s.k == 0
	|| uck_sub(a->arg[0], s.k, &v) < 0)
		return NULL;
	s.k = 0;
	return uop_alu(c, OP_CMPLT, uop_const(c, (DType)a->dtype, v), build(c, (DType)b->dtype, &s));
}

/*
** x & M for x >= 0 and a contiguous mask M of w bits from bit lo is
** ((x // 2^lo) % 2^w) * 2^lo. That form costs more operations unless the
** div/mod rules shrink it (a swizzle's mask over a sum of disjoint bit
** fields does), so it is kept only when its normal form is cheaper.
*/
static UOp *
mask(UCtx *c, UOp *u, UOp *x, int64_t m, DType t)
{
	int lo = 0, w = 0;
	UOp *y;
	Err e;

	while (!((m >> lo) & 1))
		lo++;
	while (lo + w < 63 && ((m >> (lo + w)) & 1))
		w++;
	if (lo + w > 62 || (m >> (lo + w)) != 0)
		return NULL;
	y = uop_mul(c, uop_mod(c, uop_idiv(c, x, uop_const(c, t, (int64_t)1 << lo)),
	                       uop_const(c, t, (int64_t)1 << w)),
	            uop_const(c, t, (int64_t)1 << lo));
	if (!y || uop_normalize(c, y, &y, &e) < 0)
		return NULL;
	return uop_ops(y) < uop_ops(u) ? y : NULL;
}

/*
** Bit operations on non-negative values become arithmetic, so that the div/mod
** rules apply to swizzles: x >> k -> x // 2^k, x << k -> x * 2^k,
** x & (2^k - 1) -> x % 2^k.
*/
static UOp *
r_bits(UCtx *c, UOp *u, UOp **cap, void *aux)
{
	UOp *x = u->src[0], *k = u->src[1];
	DType t = (DType)u->dtype;
	int64_t m;

	if (k->op != OP_CONST || t == DT_BOOL)
		return NULL;
	m = k->arg[0];
	switch (u->op) {
	case OP_SHR:
		if (m >= 0 && m <= 62 && x->vmin >= 0)
			return uop_idiv(c, x, uop_const(c, t, (int64_t)1 << m));
		break;
	case OP_SHL:
		if (m >= 0 && m <= 62 && (u->vmin != INT64_MIN || u->vmax != INT64_MAX))
			return uop_mul(c, x, uop_const(c, t, (int64_t)1 << m));
		break;
	case OP_AND:
		if (x->vmin >= 0 && m >= 0 && m < INT64_MAX && ((m + 1) & m) == 0)
			return uop_mod(c, x, uop_const(c, t, m + 1));
		if (x->vmin >= 0 && m > 0)
			return mask(c, u, x, m, t);
		break;
	default:
		break;
	}
	return NULL;
}

/*
** Division and modulo by a symbolic divisor y > 0 (a runtime size such as
** num_pid_n): a term whose factors include y's divides exactly,
**   (a*y + r) // y -> a + r // y      (a*y + r) % y -> r % y
** and then x // y -> 0, x % y -> x when 0 <= x < min(y).
*/
static int
divides(UOp *base, int64_t coef, UOp *y, UCtx *c, DType t, UOp **quot, int64_t *qcoef)
{
	UOp *fb[MAXTERMS], *fy[MAXTERMS], *acc = NULL;
	int nb = 0, ny = 0, bad = 0, i, k, used[MAXTERMS] = { 0 };
	int64_t kb = 1, ky = 1, v;

	factors(base, fb, &nb, &kb, &bad);
	factors(y, fy, &ny, &ky, &bad);
	if (bad || ky <= 0 || ny == 0 || uck_mul(coef, kb, &v) < 0 || v % ky != 0)
		return 0;
	for (k = 0; k < ny; k++) {
		for (i = 0; i < nb && (used[i] || fb[i] != fy[k]); i++)
			;
		if (i == nb)
			return 0;
		used[i] = 1;
	}
	for (i = 0; i < nb; i++)
		if (!used[i])
			acc = acc ? uop_mul(c, acc, fb[i]) : fb[i];
	*quot = acc ? acc : uop_const(c, t, 1);
	*qcoef = v / ky;
	return 1;
}

static UOp *
r_divmod_sym(UCtx *c, UOp *u, UOp **cap, void *aux)
{
	UOp *x = u->src[0], *y = u->src[1], *q;
	DType t = (DType)u->dtype;
	Sum s, d, r;
	int i;
	int64_t qc;

	if (y->op == OP_CONST || y->vmin <= 0 || t == DT_BOOL)
		return NULL;
	if ((q = modchain(c, u)))
		return q;
	if (x->vmin >= 0 && x->vmax < y->vmin)
		return u->op == OP_IDIV ? uop_const(c, t, 0) : x;
	if (sumof(c, x, &s) < 0)
		return NULL;
	d.n = r.n = 0;
	d.k = r.k = 0;
	d.bad = r.bad = 0;
	r.k = s.k;
	for (i = 0; i < s.n; i++) {
		if (divides(s.t[i].base, s.t[i].coef, y, c, t, &q, &qc)) {
			d.t[d.n].base = q;
			d.t[d.n++].coef = qc;
		} else
			r.t[r.n++] = s.t[i];
	}
	if (d.n == 0)
		return NULL;
	collect(&d);
	if (u->op == OP_MOD)
		return uop_mod(c, build(c, t, &r), y);
	return uop_add(c, build(c, t, &d), uop_idiv(c, build(c, t, &r), y));
}

static const UPat p_any = { UPAT_ANY, -1, 0, 0, { 0 } };
static const UPat p_c = { OP_CONST, -1, UP_CONST, 0, { 0 } };
static const UPat p_add = { OP_ADD, -1, 0, 0, { 0 } };
static const UPat p_sub = { OP_SUB, -1, 0, 0, { 0 } };
static const UPat p_neg = { OP_NEG, -1, 0, 0, { 0 } };
static const UPat p_mulc = { OP_MUL, -1, 0, 2, { &p_any, &p_c } };
static const UPat p_mul = { OP_MUL, -1, 0, 0, { 0 } };
static const UPat p_div = { OP_IDIV, -1, 0, 2, { &p_any, &p_c } };
static const UPat p_mod = { OP_MOD, -1, 0, 2, { &p_any, &p_c } };
static const UPat p_pos = { UPAT_ANY, -1, UP_POS, 0, { 0 } };
static const UPat p_divs = { OP_IDIV, -1, 0, 2, { &p_any, &p_pos } };
static const UPat p_mods = { OP_MOD, -1, 0, 2, { &p_any, &p_pos } };
static const UPat p_min = { OP_MIN, -1, 0, 0, { 0 } };
static const UPat p_max = { OP_MAX, -1, 0, 0, { 0 } };
static const UPat p_lt = { OP_CMPLT, -1, 0, 2, { &p_any, &p_c } };
static const UPat p_ltl = { OP_CMPLT, -1, 0, 2, { &p_c, &p_any } };
static const UPat p_ne = { OP_CMPNE, -1, 0, 2, { &p_any, &p_c } };
static const UPat p_eq = { OP_CMPEQ, -1, 0, 2, { &p_any, &p_c } };
static const UPat p_shr = { OP_SHR, -1, 0, 2, { &p_any, &p_c } };
static const UPat p_shl = { OP_SHL, -1, 0, 2, { &p_any, &p_c } };
static const UPat p_and = { OP_AND, -1, 0, 2, { &p_any, &p_c } };

const URule uop_symbolic_rules[] = {
	{ "fold range", &p_any, r_const },
	{ "linear +", &p_add, r_linear },
	{ "linear -", &p_sub, r_linear },
	{ "linear neg", &p_neg, r_linear },
	{ "linear *c", &p_mulc, r_linear },
	{ "product", &p_mul, r_product },
	{ "div", &p_div, r_div },
	{ "mod", &p_mod, r_mod },
	{ "div symbolic", &p_divs, r_divmod_sym },
	{ "mod symbolic", &p_mods, r_divmod_sym },
	{ "min", &p_min, r_minmax },
	{ "max", &p_max, r_minmax },
	{ "cmp <", &p_lt, r_cmp },
	{ "cmp c <", &p_ltl, r_cmp_left },
	{ "cmp !=", &p_ne, r_cmp },
	{ "cmp ==", &p_eq, r_cmp },
	{ "shr", &p_shr, r_bits },
	{ "shl", &p_shl, r_bits },
	{ "and mask", &p_and, r_bits },
	{ "order", &p_any, r_order },
};
const int uop_nsymbolic_rules = sizeof uop_symbolic_rules / sizeof uop_symbolic_rules[0];

int
uop_normalize(UCtx *c, UOp *u, UOp **out, Err *e)
{
	return uop_rewrite(c, u, uop_symbolic_rules, uop_nsymbolic_rules, NULL, 0, out, e);
}

/* (a + b) * y -> a*y + b*y for a non-constant y. */
static UOp *
r_distribute(UCtx *c, UOp *u, UOp **cap, void *aux)
{
	UOp *a = u->src[0], *b = u->src[1];

	if (b->op == OP_CONST || a->op == OP_CONST)
		return NULL;
	if (!issum(a)) {
		UOp *x = a;
		a = b;
		b = x;
	}
	if (a->op == OP_ADD)
		return uop_add(c, uop_mul(c, a->src[0], b), uop_mul(c, a->src[1], b));
	if (a->op == OP_SUB)
		return uop_sub(c, uop_mul(c, a->src[0], b), uop_mul(c, a->src[1], b));
	if (a->op == OP_NEG)
		return uop_neg(c, uop_mul(c, a->src[0], b));
	return NULL;
}

static const URule expand_rules[] = { { "distribute", &p_mul, r_distribute } };

int
uop_expand(UCtx *c, UOp *u, UOp **out, Err *e)
{
	return uop_rewrite(c, u, expand_rules, 1, NULL, 0, out, e);
}

/*
** The printing form, top-down on a normalized expression: a sum keeps its
** positive terms first and subtracts the others (x + y*-1 -> x - y), and
** takes out a common constant factor where that saves multiplications
** (i*4 + j*4 + 8 -> (i + j + 2)*4). Memoized by node id.
*/
typedef struct Pretty {
	UCtx *c;
	UOp **memo;
	size_t n;
	int depth, bad;
} Pretty;

static UOp *pretty(Pretty *p, UOp *u);

static int
mulcost(const Sum *s, int64_t g)
{
	int i, n = 0;

	for (i = 0; i < s->n; i++)
		n += s->t[i].coef / g != 1 && s->t[i].coef / g != -1;
	return n;
}

static UOp *
pretty_sum(Pretty *p, UOp *u)
{
	Sum s;
	UOp *acc = NULL, *x, *b;
	DType t = (DType)u->dtype;
	int i, pass, withk;
	int64_t g = 0, gk, best = 1, v;

	s.n = 0;
	s.k = 0;
	s.bad = 0;
	flatten(&s, u, 1, 0);
	if (s.bad)
		return NULL;
	collect(&s);
	/* a common factor: over all terms and the constant, or over the terms only */
	for (i = 0; i < s.n; i++)
		g = gcd(g, s.t[i].coef);
	gk = s.k ? gcd(g, s.k) : g;
	for (withk = 1; withk >= 0; withk--) {
		int64_t h = withk ? gk : g;
		if (h > 1 && s.n > 1 && 1 + mulcost(&s, h) < mulcost(&s, 1)) {
			best = h;
			break;
		}
	}
	if (best > 1) {
		Sum in = s;
		for (i = 0; i < in.n; i++)
			in.t[i].coef /= best;
		if (s.k % best == 0 && gk == best) {
			in.k = s.k / best;
			s.k = 0;
		} else
			in.k = 0;
		x = uop_mul(p->c, pretty(p, build(p->c, t, &in)), uop_const(p->c, t, best));
		return s.k ? uop_add(p->c, x, uop_const(p->c, t, s.k)) : x;
	}
	/* no positive term: the constant goes first (3 - i, not -i + 3) */
	for (i = 0; i < s.n && s.t[i].coef < 0; i++)
		;
	if (i == s.n && s.k > 0) {
		acc = uop_const(p->c, t, s.k);
		s.k = 0;
	}
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < s.n; i++) {
			v = s.t[i].coef;
			if ((v > 0) != (pass == 0))
				continue;
			if (!(b = pretty(p, s.t[i].base)))
				return NULL;
			if (v > 0) {
				x = v == 1 ? b : uop_mul(p->c, b, uop_const(p->c, t, v));
				acc = acc ? uop_add(p->c, acc, x) : x;
			} else if (v == INT64_MIN) {
				x = uop_mul(p->c, b, uop_const(p->c, t, v));
				acc = acc ? uop_add(p->c, acc, x) : x;
			} else {
				x = v == -1 ? b : uop_mul(p->c, b, uop_const(p->c, t, -v));
				acc = acc ? uop_sub(p->c, acc, x) : uop_neg(p->c, x);
			}
		}
	if (!acc)
		return uop_const(p->c, t, s.k);
	if (s.k > 0 || s.k == INT64_MIN)
		acc = uop_add(p->c, acc, uop_const(p->c, t, s.k));
	else if (s.k < 0)
		acc = uop_sub(p->c, acc, uop_const(p->c, t, -s.k));
	return acc;
}

static UOp *
pretty(Pretty *p, UOp *u)
{
	UOp *s[3], *r;
	int i;

	if (!u || p->bad)
		return NULL;
	if (u->id < p->n && p->memo[u->id])
		return p->memo[u->id];
	if (++p->depth > 20000) {
		p->bad = 1;
		return NULL;
	}
	if (islinear(u) && (u->op != OP_MUL || issum(u->src[0]) || issum(u->src[1])
	                    || uop_is_const(u->src[1], -1)))
		r = pretty_sum(p, u);
	else if (u->nsrc > 0 && u->nsrc <= 3) {
		for (i = 0; i < u->nsrc; i++)
			s[i] = pretty(p, u->src[i]);
		r = i == u->nsrc && s[u->nsrc - 1] ? uop_rebuild(p->c, u, s) : NULL;
		for (i = 0; i < u->nsrc; i++)
			if (!s[i])
				r = NULL;
	} else
		r = u;
	p->depth--;
	if (!r) {
		p->bad = 1;
		return NULL;
	}
	if (u->id < p->n)
		p->memo[u->id] = r;
	return r;
}

static int
prettify(UCtx *c, UOp *u, UOp **out, Err *e)
{
	Pretty p;

	memset(&p, 0, sizeof p);
	p.c = c;
	p.n = uctx_nodes(c);
	if (!(p.memo = calloc(p.n ? p.n : 1, sizeof *p.memo)))
		return err_set(e, "simplify: out of memory");
	*out = pretty(&p, u);
	free(p.memo);
	if (!*out)
		return err_set(e, "simplify: %s", p.bad ? "expression too deep or out of memory" : "out of memory");
	return 0;
}

int
uop_simplify(UCtx *c, UOp *u, UOp **out, Err *e)
{
	UOp *n, *a, *b, *x;
	int round;

	if (uop_normalize(c, u, &n, e) < 0 || prettify(c, n, &a, e) < 0)
		return -1;
	/* never worse than the input: canonical forms may cost an operation */
	if (uop_ops(a) > uop_ops(u))
		a = u;
	*out = a;
	/* the expanded form, when it is cheaper (LEGO's cost model); expanding
	** the normal form can expose new rules, so a few rounds */
	for (round = 0, x = n; round < 3; round++) {
		if (uop_expand(c, x, &b, e) < 0)
			return -1;
		if (b == x)
			break;
		if (uop_normalize(c, b, &x, e) < 0)
			return -1;
	}
	if (x == n)
		return 0;
	if (prettify(c, x, &b, e) < 0)
		return -1;
	if (uop_ops(b) < uop_ops(*out))
		*out = b;
	return 0;
}

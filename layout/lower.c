/* lower.c - CuTe layouts and swizzles to index expressions of symbolic coordinates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

int
lower_split(UCtx *c, UOp *x, const int64_t *shape, int n, int colex, int overflow,
            UOp **digits, Err *e)
{
	int k, i;
	UOp *rest = x;

	if (!x)
		return err_set(e, "lower: no expression (out of memory)");
	if (n < 1 || n > LOWER_MAXDIM)
		return err_set(e, "lower: %d dimensions (1 to %d)", n, LOWER_MAXDIM);
	for (k = 0; k < n; k++)
		if (shape[k] < 1)
			return err_set(e, "lower: shape entry %lld is not positive", (long long)shape[k]);
	/* fastest digit first: rest % s is the digit, rest // s the rest */
	for (i = 0; i < n; i++) {
		k = colex ? i : n - 1 - i;
		if (i == n - 1 && overflow)
			digits[k] = rest;
		else
			digits[k] = uop_mod(c, rest, uop_int(c, shape[k]));
		rest = uop_idiv(c, rest, uop_int(c, shape[k]));
		if (!digits[k] || !rest)
			return err_set(e, "lower: out of memory");
	}
	return 0;
}

UOp *
lower_dot(UCtx *c, UOp *const *digits, const int64_t *stride, int n, int64_t offset)
{
	UOp *acc = uop_int(c, offset);
	int k;

	for (k = 0; k < n; k++)
		acc = uop_add(c, acc, uop_mul(c, digits[k], uop_int(c, stride[k])));
	return acc;
}

UOp *
lower_join(UCtx *c, UOp *const *digits, const int64_t *shape, int n, int colex)
{
	UOp *acc = uop_int(c, 0);
	int i, k;

	/* Horner from the slowest digit */
	for (i = n - 1; i >= 0; i--) {
		k = colex ? i : n - 1 - i;
		acc = uop_add(c, uop_mul(c, acc, uop_int(c, shape[k])), digits[k]);
	}
	return acc;
}

UOp *
lower_swizzle(UCtx *c, const Swizzle *sw, UOp *x)
{
	int64_t bits = ((int64_t)1 << sw->b) - 1;
	int64_t yyy = bits << (sw->m + (sw->s > 0 ? sw->s : 0));
	UOp *y;

	if (sw->b == 0 || (sw->s == 0))
		return x;
	y = uop_alu(c, OP_AND, x, uop_int(c, yyy));
	y = sw->s > 0 ? uop_alu(c, OP_SHR, y, uop_int(c, sw->s))
	              : uop_alu(c, OP_SHL, y, uop_int(c, -sw->s));
	return uop_alu(c, OP_XOR, x, y);
}

int
lower_cute_modes(const Layout *l, int64_t *shape, int64_t *stride, int *n, Err *e)
{
	int i;

	*n = 0;
	for (i = 0; i < l->shape.n; i++) {
		if (l->shape.node[i].kids != T_LEAF)
			continue;
		if (*n >= LOWER_MAXDIM)
			return err_set(e, "lower: more than %d modes", LOWER_MAXDIM);
		if (l->stride.node[i].kids != T_LEAF)
			return err_set(e, "lower: shape and stride are not congruent");
		shape[*n] = l->shape.node[i].v;
		stride[*n] = l->stride.node[i].v;
		(*n)++;
	}
	return 0;
}

int
lower_cute_vars(UCtx *c, const Layout *l, const char *name, int per_mode,
                UOp **vars, int *n, Err *e)
{
	int64_t shape[LOWER_MAXDIM], stride[LOWER_MAXDIM];
	char nm[80];
	int k;

	if (!uop_valid_name(name) || strlen(name) > 40)
		return err_set(e, "lower: '%s' is not a variable name", name);
	if (!per_mode) {
		*n = 1;
		vars[0] = uop_var(c, name, 0, cute_size(l) - 1);
		return vars[0] ? 0 : err_set(e, "lower: out of memory");
	}
	if (lower_cute_modes(l, shape, stride, n, e) < 0)
		return -1;
	for (k = 0; k < *n; k++) {
		snprintf(nm, sizeof nm, "%s%d", name, k);
		if (!(vars[k] = uop_var(c, nm, 0, shape[k] - 1)))
			return err_set(e, "lower: out of memory");
	}
	return 0;
}

int
lower_cute_crd(UCtx *c, const Layout *l, UOp *const *crd, int n, UOp **out, Err *e)
{
	int64_t shape[LOWER_MAXDIM], stride[LOWER_MAXDIM];
	int m;

	if (lower_cute_modes(l, shape, stride, &m, e) < 0)
		return -1;
	if (n != m)
		return err_set(e, "lower: %d coordinates for a layout of %d flattened modes", n, m);
	*out = lower_dot(c, crd, stride, m, 0);
	return *out ? 0 : err_set(e, "lower: out of memory");
}

int
lower_cute_idx(UCtx *c, const Layout *l, UOp *x, UOp **out, Err *e)
{
	int64_t shape[LOWER_MAXDIM], stride[LOWER_MAXDIM];
	UOp *d[LOWER_MAXDIM];
	int m;

	if (lower_cute_modes(l, shape, stride, &m, e) < 0
	|| lower_split(c, x, shape, m, 1, 1, d, e) < 0)
		return -1;
	*out = lower_dot(c, d, stride, m, 0);
	return *out ? 0 : err_set(e, "lower: out of memory");
}

static int
compose(UCtx *c, const Composed *cl, UOp **out, Err *e)
{
	*out = lower_swizzle(c, &cl->sw, uop_add(c, *out, uop_int(c, cl->offset)));
	return *out ? 0 : err_set(e, "lower: out of memory");
}

int
lower_composed_idx(UCtx *c, const Composed *cl, UOp *x, UOp **out, Err *e)
{
	if (lower_cute_idx(c, &cl->layout, x, out, e) < 0)
		return -1;
	return compose(c, cl, out, e);
}

int
lower_composed_crd(UCtx *c, const Composed *cl, UOp *const *crd, int n, UOp **out, Err *e)
{
	if (lower_cute_crd(c, &cl->layout, crd, n, out, e) < 0)
		return -1;
	return compose(c, cl, out, e);
}

/*
** LEGO. A step list with expression dimensions: the numeric LegoProg's steps
** (constants) and the symbolic layouts' steps share one walker.
*/
typedef struct SStep {
	int op, at, n;
	UOp *dim[LEGO_DIMS];
	int perm[LEGO_DIMS];
	const LegoPerm *genp;
} SStep;

/*
** Row-major digits of x over dims d[0..n). Digits over a constant 1 are 0.
** The slowest other digit is x divided by the faster dimensions, reduced by
** its own dimension only when that is a constant (then the simplifier drops
** the reduction whenever the ranges allow): inputs lie in range, so a
** symbolic size never needs the reduction, and leaving it out is what lets
** pid // (GM*n) stand alone in a grouped ordering.
*/
static int
ssplit(UCtx *c, UOp *x, UOp *const *d, int n, UOp **out)
{
	int k, s = 0;

	while (s < n - 1 && uop_is_const(d[s], 1))
		s++;
	for (k = n - 1; k > s; k--) {
		out[k] = uop_mod(c, x, d[k]);
		x = uop_idiv(c, x, d[k]);
	}
	out[s] = d[s]->op == OP_CONST ? uop_mod(c, x, d[s]) : x;
	for (k = 0; k < s; k++)
		out[k] = uop_int(c, 0);
	for (k = 0; k < n; k++)
		if (!out[k])
			return -1;
	return 0;
}

static UOp *
sjoin(UCtx *c, UOp *const *x, UOp *const *d, int n)
{
	UOp *acc = x[0];
	int k;

	for (k = 1; k < n; k++)
		acc = uop_add(c, uop_mul(c, acc, d[k]), x[k]);
	return acc;
}

static UOp *
k_int(UCtx *c, int64_t v)
{
	return uop_int(c, v);
}

/* T(t) = max(t,0) * (max(t,0)+1) // 2, the cells strictly above antidiagonal t. */
static UOp *
tri_expr(UCtx *c, UOp *t)
{
	UOp *m;

	if (t && t->op == OP_CONST) {
		int64_t v = t->arg[0] > 0 ? t->arg[0] : 0;
		return k_int(c, v * (v + 1) / 2);
	}
	m = uop_alu(c, OP_MAX, t, k_int(c, 0));
	return uop_idiv(c, uop_mul(c, m, uop_add(c, m, k_int(c, 1))), k_int(c, 2));
}

/* B(k) = T(k) - T(k-r) - T(k-c) + T(k-r-c): cells with i + j < k (r x c). */
static UOp *
before_expr(UCtx *c, UOp *k, int64_t r, int64_t cc)
{
	UOp *t0 = tri_expr(c, k), *t1 = NULL, *t2 = NULL, *t3 = NULL;

	/* terms that vanish on k's range are left out: k < r makes T(k-r) = 0 */
	if (k && k->vmax - r > 0)
		t1 = tri_expr(c, uop_sub(c, k, k_int(c, r)));
	if (k && k->vmax - cc > 0)
		t2 = tri_expr(c, uop_sub(c, k, k_int(c, cc)));
	if (k && k->vmax - r - cc > 0)
		t3 = tri_expr(c, uop_sub(c, k, k_int(c, r + cc)));
	if (t1)
		t0 = uop_sub(c, t0, t1);
	if (t2)
		t0 = uop_sub(c, t0, t2);
	if (t3)
		t0 = uop_add(c, t0, t3);
	return t0;
}

/* T(t) in 128 bits: B(t) below fits in int64 (it counts cells of a tile), but T(t) alone
** overflows for t past 2^32. */
static __int128
tri_i(int64_t t)
{
	return t > 0 ? (__int128)t * (t + 1) / 2 : 0;
}

int
lower_genp(UCtx *c, const LegoPerm *p, int inverse, UOp *const *in, UOp **out, Err *e)
{
	UOp *d[LEGO_DIMS] = {0}, *y[LEGO_DIMS] = {0}, *k, *i, *f;
	int pos[LEGO_DIMS][64], bits[LEGO_DIMS], j, b;
	int64_t r, cc, t;

	for (j = 0; j < p->rank; j++)
		d[j] = k_int(c, p->dim[j]);
	switch (p->gen) {
	case LEGO_GEN_IDENTITY:
	case LEGO_GEN_REVERSE:
		if (!inverse) {
			for (j = 0; j < p->rank; j++)
				y[j] = p->gen == LEGO_GEN_REVERSE && (p->mask >> j & 1)
				       ? uop_sub(c, k_int(c, p->dim[j] - 1), in[j]) : in[j];
			out[0] = sjoin(c, y, d, p->rank);
		} else {
			if (ssplit(c, in[0], d, p->rank, out) < 0)
				return err_set(e, "lower: out of memory");
			for (j = 0; j < p->rank; j++)
				if (p->gen == LEGO_GEN_REVERSE && (p->mask >> j & 1))
					out[j] = uop_sub(c, k_int(c, p->dim[j] - 1), out[j]);
		}
		return 0;
	case LEGO_GEN_ANTIDIAG:
		r = p->dim[0];
		cc = p->dim[1];
		if (!inverse) {
			/* f = B(i + j) + i - max(0, i + j - (c - 1)) */
			k = uop_add(c, in[0], in[1]);
			f = uop_add(c, before_expr(c, k, r, cc), in[0]);
			if (k && k->vmax > cc - 1)
				f = uop_sub(c, f, uop_alu(c, OP_MAX, uop_sub(c, k, k_int(c, cc - 1)), k_int(c, 0)));
			out[0] = f;
			return 0;
		}
		/* No square root in the IR: k = the number of t in 1..r+c-2 with
		** B(t) <= f (comparisons with constants), and i = f - off(k) with
		** off(t) = B(t) - max(0, t - (c-1)) selected by a chain of where()s
		** on the same comparisons; j = k - i. */
		/* r + c - 2 nested links, each printed in some 64 bytes: a chain deeper than an
		** expression may nest, or longer than the code it may print as, is refused before
		** it is built (found by fuzzing: GenP({72, 9213327}, "antidiagonal"):inv_expr()
		** built where()s until memory ran out) */
		if (r + cc - 2 > UOP_MAXDEPTH - 64)
			return err_set(e, "lower: the inverse of an antidiagonal %lldx%lld tile nests %lld "
			               "where()s, deeper than an expression may (%d)", (long long)r,
			               (long long)cc, (long long)(r + cc - 2), UOP_MAXDEPTH - 64);
		if (r + cc - 2 > limits_value(LIMIT_CODE_BYTES) / 64)
			return err_set(e, "code_bytes limit: the inverse of an antidiagonal %lldx%lld tile is a "
			               "chain of %lld where()s, more than the limit of %lld bytes of code allows "
			               "(raise it with tessel.limits{code_bytes = N})", (long long)r, (long long)cc,
			               (long long)(r + cc - 2), (long long)limits_value(LIMIT_CODE_BYTES));
		f = in[0];
		k = k_int(c, 0);
		i = NULL;
		for (t = r + cc - 2; t >= 0; t--) {
			int64_t bt = (int64_t)(tri_i(t) - tri_i(t - r) - tri_i(t - cc) + tri_i(t - r - cc));
			int64_t off = bt - (t - (cc - 1) > 0 ? t - (cc - 1) : 0);
			UOp *lt;
			if (!i) {
				i = k_int(c, off);
				continue;
			}
			bt = (int64_t)(tri_i(t + 1) - tri_i(t + 1 - r) - tri_i(t + 1 - cc) + tri_i(t + 1 - r - cc));
			lt = uop_alu(c, OP_CMPLT, f, k_int(c, bt));
			k = uop_add(c, k, uop_where(c, lt, k_int(c, 0), k_int(c, 1)));
			i = uop_where(c, lt, k_int(c, off), i);
		}
		i = uop_sub(c, f, i);
		out[0] = i;
		out[1] = uop_sub(c, k, i);
		return 0;
	case LEGO_GEN_MORTON:
	case LEGO_GEN_MORTON_ROW:
		lego_morton_pos(p, pos, bits);
		if (!inverse) {
			f = k_int(c, 0);
			for (j = 0; j < p->rank; j++)
				for (b = 0; b < bits[j]; b++) {
					UOp *bit = uop_alu(c, OP_AND, uop_alu(c, OP_SHR, in[j], k_int(c, b)), k_int(c, 1));
					f = uop_alu(c, OP_OR, f, uop_alu(c, OP_SHL, bit, k_int(c, pos[j][b])));
				}
			out[0] = f;
		} else {
			for (j = 0; j < p->rank; j++) {
				f = k_int(c, 0);
				for (b = 0; b < bits[j]; b++) {
					UOp *bit = uop_alu(c, OP_AND, uop_alu(c, OP_SHR, in[0], k_int(c, pos[j][b])),
					                   k_int(c, 1));
					f = uop_alu(c, OP_OR, f, uop_alu(c, OP_SHL, bit, k_int(c, b)));
				}
				out[j] = f;
			}
		}
		return 0;
	}
	return err_set(e, "lower: %s GenP has no closed form", p->label[0] ? p->label : "a user");
}

/*
** Sizes compared for regrouping. LEGO's Python API divides sizes as rationals
** (M/BM * BM == M); here a product in which x // b meets b counts as x: a
** layout's sizes are trusted to agree, so a tile count written M // BM does
** divide M. Factors are collected, such pairs cancelled, and the rest
** compared as a sorted product after simplification.
*/
static int
mulfactors(UOp *u, UOp **f, int n, int max)
{
	if (u->op == OP_MUL && n >= 0) {
		n = mulfactors(u->src[0], f, n, max);
		return mulfactors(u->src[1], f, n, max);
	}
	if (n < 0 || n >= max)
		return -1;
	f[n] = u;
	return n + 1;
}

static int
cmpu(const void *a, const void *b)
{
	return uop_cmp(*(UOp *const *)a, *(UOp *const *)b);
}

static UOp *
size_form(UCtx *c, UOp *u)
{
	UOp *f[32], *acc = NULL;
	int n = mulfactors(u, f, 0, 32), i, j, again = 1;
	Err e;

	if (n < 0)
		return u;
	while (again) {
		again = 0;
		for (i = 0; i < n && !again; i++)
			for (j = 0; j < n && !again; j++)
				if (i != j && f[i]->op == OP_IDIV && f[i]->src[1] == f[j]) {
					f[i] = f[i]->src[0];
					f[j] = f[--n];
					again = 1;
				}
	}
	for (i = 0; i < n; i++)
		if (uop_simplify(c, f[i], &f[i], &e) < 0)
			return u;
	qsort(f, (size_t)n, sizeof f[0], cmpu);
	for (i = 0; i < n; i++)
		acc = acc ? uop_mul(c, acc, f[i]) : f[i];
	if (!acc)
		acc = uop_int(c, 1);
	if (acc && uop_simplify(c, acc, &acc, &e) < 0)
		return u;
	return acc;
}

static int
same_size(UCtx *c, UOp *a, UOp *b)
{
	if (a == b)
		return 1;
	if (!a || !b)
		return 0;
	return size_form(c, a) == size_form(c, b);
}

/*
** A flatten over D followed by an unflatten over E at the same place, where
** one of D and E groups the other into consecutive runs of equal products:
** the digits regroup run by run, without the round trip through one flat
** index (which symbolic sizes could not simplify back: i1 // N with i1 < N
** unknown to the ranges). Exact for inputs in range. n: |D|, m: |E|; the
** new values go to w[0..m). Returns 0 when the shapes do not nest.
*/
static int
regroup(UCtx *c, UOp *const *v, UOp *const *d, int n, UOp *const *ed, int m, UOp **w)
{
	int i = 0, j = 0, k;

	while (i < n && j < m) {
		int i0 = i, j0 = j;
		UOp *pd = d[i++], *pe = ed[j++];
		/* grow the shorter side until the products agree */
		while (!same_size(c, pd, pe)) {
			if (i - i0 == 1 && j < m && (j - j0 > 1 || i == n || m - j >= n - i))
				pe = uop_mul(c, pe, ed[j++]);
			else if (j - j0 == 1 && i < n)
				pd = uop_mul(c, pd, d[i++]);
			else
				return 0;
			if (!pd || !pe)
				return 0;
		}
		if (i - i0 > 1 && j - j0 > 1)
			return 0;
		if (i - i0 == 1 && j - j0 == 1)   /* the same digit */
			w[j0] = v[i0];
		else if (i - i0 > 1)     /* several digits of D make one of E */
			w[j0] = sjoin(c, v + i0, d + i0, i - i0);
		else if (ssplit(c, v[i0], ed + j0, j - j0, w + j0) < 0)
			return 0;
	}
	if (i != n || j != m)
		return 0;
	for (k = 0; k < m; k++)
		if (!w[k])
			return 0;
	return 1;
}

static int
walk(UCtx *c, const SStep *s, int nstep, UOp **v, int len, int nout, UOp *const *bound_dims,
     LowerGenpFn genp, void *aux, UOp **out, Err *e)
{
	UOp *w[LEGO_DIMS + 1], *valid = NULL;
	int i, k;

	for (i = 0; i < nstep; i++, s++) {
		int at = s->at, n = s->n;

		if (s->op == LS_FLATTEN && i + 1 < nstep && s[1].op == LS_UNFLATTEN && s[1].at == at
		&& regroup(c, v + at, s->dim, n, s[1].dim, s[1].n, w)) {
			int m = s[1].n;
			memmove(v + at + m, v + at + n, (size_t)(len - at - n) * sizeof *v);
			memcpy(v + at, w, (size_t)m * sizeof *w);
			len += m - n;
			i++;
			s++;
			continue;
		}
		switch (s->op) {
		case LS_FLATTEN:
		case LS_GENP_APPLY:
			if (s->op == LS_FLATTEN)
				w[0] = sjoin(c, v + at, s->dim, n);
			else if (s->genp->gen != LEGO_GEN_USER) {
				if (lower_genp(c, s->genp, 0, v + at, w, e) < 0)
					return -1;
			} else if (!genp)
				return err_set(e, "lower: the user GenP %s has no expression form",
				               s->genp->label);
			else if (genp(aux, c, s->genp, 0, v + at, w, e) < 0)
				return -1;
			v[at] = w[0];
			memmove(v + at + 1, v + at + n, (size_t)(len - at - n) * sizeof *v);
			len -= n - 1;
			break;
		case LS_UNFLATTEN:
		case LS_GENP_INV:
			if (s->op == LS_UNFLATTEN) {
				if (ssplit(c, v[at], s->dim, n, w) < 0)
					return err_set(e, "lower: out of memory");
			} else if (s->genp->gen != LEGO_GEN_USER) {
				if (lower_genp(c, s->genp, 1, v + at, w, e) < 0)
					return -1;
			} else if (!genp)
				return err_set(e, "lower: the user GenP %s has no expression form",
				               s->genp->label);
			else if (genp(aux, c, s->genp, 1, v + at, w, e) < 0)
				return -1;
			memmove(v + at + n, v + at + 1, (size_t)(len - at - 1) * sizeof *v);
			memcpy(v + at, w, (size_t)n * sizeof *w);
			len += n - 1;
			break;
		case LS_GATHER:
			for (k = 0; k < n; k++)
				w[k] = v[at + s->perm[k]];
			memcpy(v + at, w, (size_t)n * sizeof *w);
			break;
		case LS_SCATTER:
			for (k = 0; k < n; k++)
				w[s->perm[k]] = v[at + k];
			memcpy(v + at, w, (size_t)n * sizeof *w);
			break;
		case LS_BOUND:
			/* valid when every digit is below its extent; digits that cannot
			** reach the extent add no comparison */
			for (k = 0; k < n; k++) {
				UOp *lt;
				if (v[at + k] && v[at + k]->vmax < s->dim[k]->arg[0])
					continue;
				lt = uop_alu(c, OP_CMPLT, v[at + k], s->dim[k]);
				valid = valid ? uop_alu(c, OP_AND, valid, lt) : lt;
			}
			break;
		}
	}
	(void)bound_dims;
	if (len != nout)
		return err_set(e, "lower: internal: %d values left, %d expected", len, nout);
	for (k = 0; k < nout; k++) {
		out[k] = v[k];
		if (valid)
			out[k] = uop_where(c, valid, out[k], k_int(c, -1));
		if (!out[k])
			return err_set(e, "lower: out of memory, or the expression nests too deep");
	}
	return 0;
}

int
lower_lego(UCtx *c, const Lego *g, int inverse, UOp *const *in, UOp **out,
           LowerGenpFn genp, void *aux, Err *e)
{
	LegoProg *p = malloc(sizeof *p);   /* large: not on the stack */
	SStep *s = NULL;
	UOp *v[LEGO_DIMS + 1];
	int i, k, rc = -1;

	if (!p || !(s = malloc(LEGO_STEPS * sizeof *s))) {
		err_set(e, "lower: out of memory");
		goto done;
	}
	if (lego_prog(g, inverse, p, e) < 0)
		goto done;
	for (i = 0; i < p->nstep; i++) {
		const LegoStep *t = &p->step[i];
		s[i].op = t->op;
		s[i].at = t->at;
		s[i].n = t->n;
		s[i].genp = t->genp;
		memcpy(s[i].perm, t->perm, sizeof t->perm);
		for (k = 0; k < t->n; k++)
			if (!(s[i].dim[k] = k_int(c, t->dim[k]))) {
				err_set(e, "lower: out of memory");
				goto done;
			}
	}
	for (k = 0; k < p->nin; k++) {
		if (!in[k]) {
			err_set(e, "lower: no expression (out of memory)");
			goto done;
		}
		v[k] = in[k];
	}
	rc = walk(c, s, p->nstep, v, p->nin, p->nout, NULL, genp, aux, out, e);
done:
	free(s);
	free(p);
	return rc;
}

int
lower_lego_vars(UCtx *c, const Lego *g, int inverse, const char *const *names,
                UOp **vars, int *n, Err *e)
{
	char nm[80];
	const char *name;
	int k;

	*n = inverse ? 1 : g->rank;
	for (k = 0; k < *n; k++) {
		name = names ? names[k] : NULL;
		if (!name) {
			if (inverse)
				snprintf(nm, sizeof nm, "k");
			else
				snprintf(nm, sizeof nm, "i%d", k);
			name = nm;
		}
		if (!uop_valid_name(name))
			return err_set(e, "lower: '%s' is not a variable name", name);
		vars[k] = uop_var(c, name, 0, (inverse ? lego_cosize(g) : g->dim[k]) - 1);
		if (!vars[k])
			return err_set(e, "lower: out of memory");
	}
	return 0;
}

/*
** Symbolic LEGO: the same steps as lego_prog (RegP parts only), with
** expression dimensions.
*/
static int
sstep(SStep *s, int *ns, int op, int at, int n, UOp *const *dim, const int *perm, Err *e)
{
	SStep *t;

	if (*ns >= LEGO_STEPS)
		return err_set(e, "lower: more than %d steps", LEGO_STEPS);
	t = &s[(*ns)++];
	memset(t, 0, sizeof *t);
	t->op = op;
	t->at = at;
	t->n = n;
	if (dim)
		memcpy(t->dim, dim, (size_t)n * sizeof *dim);
	if (perm)
		memcpy(t->perm, perm, (size_t)n * sizeof *perm);
	return 0;
}

static int
sym_is_identity(const int *perm, int n)
{
	int k;

	for (k = 0; k < n; k++)
		if (perm[k] != k)
			return 0;
	return 1;
}

static UOp *
sym_prod(UCtx *c, UOp *const *d, int n)
{
	UOp *acc = d[0];
	int k;

	for (k = 1; k < n; k++)
		acc = uop_mul(c, acc, d[k]);
	return acc;
}

static int
sym_order_steps(UCtx *c, SStep *s, int *ns, const LegoSymOrder *o, int inverse, Err *e)
{
	UOp *d[LEGO_DIMS], *sizes[LEGO_PARTS], *pd[LEGO_DIMS];
	int m = 0, k, t, rc = 0;

	for (k = 0; k < o->nparts; k++) {
		const LegoSymPerm *q = &o->part[k];
		for (t = 0; t < q->rank; t++)
			d[m++] = q->dim[t];
		sizes[k] = sym_prod(c, q->dim, q->rank);
	}
	if (!inverse) {
		if (m > 1)
			rc |= sstep(s, ns, LS_UNFLATTEN, 0, m, d, NULL, e);
		for (k = 0; k < o->nparts; k++) {
			const LegoSymPerm *q = &o->part[k];
			if (!sym_is_identity(q->perm, q->rank))
				rc |= sstep(s, ns, LS_GATHER, k, q->rank, q->dim, q->perm, e);
			for (t = 0; t < q->rank; t++)
				pd[t] = q->dim[q->perm[t]];
			if (q->rank > 1)
				rc |= sstep(s, ns, LS_FLATTEN, k, q->rank, pd, NULL, e);
		}
		if (o->nparts > 1)
			rc |= sstep(s, ns, LS_FLATTEN, 0, o->nparts, sizes, NULL, e);
	} else {
		if (o->nparts > 1)
			rc |= sstep(s, ns, LS_UNFLATTEN, 0, o->nparts, sizes, NULL, e);
		for (k = o->nparts - 1; k >= 0; k--) {
			const LegoSymPerm *q = &o->part[k];
			for (t = 0; t < q->rank; t++)
				pd[t] = q->dim[q->perm[t]];
			if (q->rank > 1)
				rc |= sstep(s, ns, LS_UNFLATTEN, k, q->rank, pd, NULL, e);
			if (!sym_is_identity(q->perm, q->rank))
				rc |= sstep(s, ns, LS_SCATTER, k, q->rank, q->dim, q->perm, e);
		}
		if (m > 1)
			rc |= sstep(s, ns, LS_FLATTEN, 0, m, d, NULL, e);
	}
	return rc ? -1 : 0;
}

int
lower_lego_sym(UCtx *c, const LegoSym *g, int inverse, UOp *const *in, UOp **out, Err *e)
{
	SStep *s = malloc(LEGO_STEPS * sizeof *s);
	UOp *v[LEGO_DIMS + 1];
	int ns = 0, i, k, rc = -1;

	if (!s)
		return err_set(e, "lower: out of memory");
	if (g->rank < 1 || g->rank > LEGO_DIMS || g->nchain < 1 || g->nchain > LEGO_CHAIN) {
		err_set(e, "lower: a symbolic layout of %d dimensions and %d orders", g->rank, g->nchain);
		goto done;
	}
	for (k = 0; k < g->rank; k++)
		if (!g->dim[k]) {
			err_set(e, "lower: out of memory");
			goto done;
		}
	/* the walker's vector holds at most LEGO_DIMS values: check the shapes */
	for (i = 0; i < g->nchain; i++) {
		const LegoSymOrder *o = &g->chain[i];
		int m = 0, t;
		if (o->nparts < 1 || o->nparts > LEGO_PARTS) {
			err_set(e, "lower: an OrderBy of %d parts (1 to %d)", o->nparts, LEGO_PARTS);
			goto done;
		}
		for (k = 0; k < o->nparts; k++) {
			unsigned seen = 0;
			if (o->part[k].rank < 1 || o->part[k].rank > LEGO_DIMS - m) {
				err_set(e, "lower: an OrderBy of more than %d dimensions", LEGO_DIMS);
				goto done;
			}
			m += o->part[k].rank;
			for (t = 0; t < o->part[k].rank; t++) {
				int q = o->part[k].perm[t];
				if (q < 0 || q >= o->part[k].rank || (seen >> q & 1) || !o->part[k].dim[t]) {
					err_set(e, "lower: a part's permutation is not a permutation");
					goto done;
				}
				seen |= 1u << q;
			}
		}
	}
	if (!inverse) {
		if (g->rank > 1 && sstep(s, &ns, LS_FLATTEN, 0, g->rank, g->dim, NULL, e) < 0)
			goto done;
		for (i = g->nchain - 1; i >= 0; i--)
			if (sym_order_steps(c, s, &ns, &g->chain[i], 0, e) < 0)
				goto done;
	} else {
		for (i = 0; i < g->nchain; i++)
			if (sym_order_steps(c, s, &ns, &g->chain[i], 1, e) < 0)
				goto done;
		if (g->rank > 1 && sstep(s, &ns, LS_UNFLATTEN, 0, g->rank, g->dim, NULL, e) < 0)
			goto done;
	}
	for (k = 0; k < (inverse ? 1 : g->rank); k++) {
		if (!in[k]) {
			err_set(e, "lower: no expression (out of memory)");
			goto done;
		}
		v[k] = in[k];
	}
	rc = walk(c, s, ns, v, inverse ? 1 : g->rank, inverse ? g->rank : 1, NULL, NULL, NULL, out, e);
done:
	free(s);
	return rc;
}

int
lower_axe(UCtx *c, const AxeLayout *l, UOp *x, UOp *const *rep, const AxeAxes *ax,
          UOp **out, Err *e)
{
	int i, a;

	if (!x)
		return err_set(e, "lower: no expression (out of memory)");
	for (i = 0; i < ax->n; i++) {
		int64_t o = 0;
		for (a = 0; a < l->no; a++)
			if (strcmp(l->o[a].axis, ax->name[i]) == 0)
				o += l->o[a].v;
		out[i] = k_int(c, o);
	}
	/* fastest digit (last iter) first */
	for (i = l->nd - 1; i >= 0; i--) {
		UOp *d = i > 0 ? uop_mod(c, x, k_int(c, l->d[i].e)) : x;
		if ((a = axe_axes_index(ax, l->d[i].axis)) < 0)
			return err_set(e, "lower: axis %s is not among the axes", l->d[i].axis);
		out[a] = uop_add(c, out[a], uop_mul(c, d, k_int(c, l->d[i].s)));
		if (i > 0)
			x = uop_idiv(c, x, k_int(c, l->d[i].e));
	}
	for (i = 0; rep && i < l->nr; i++) {
		if ((a = axe_axes_index(ax, l->r[i].axis)) < 0)
			return err_set(e, "lower: axis %s is not among the axes", l->r[i].axis);
		out[a] = uop_add(c, out[a], uop_mul(c, rep[i], k_int(c, l->r[i].s)));
	}
	for (i = 0; i < ax->n; i++)
		if (!out[i])
			return err_set(e, "lower: out of memory, or the expression nests too deep");
	return 0;
}

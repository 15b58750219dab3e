/* skip_masked.c - skip_masked: the iterations of a loop in which every mask of its body is false, proved to change nothing, are skipped (FlexAttention's block sparsity). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/pmap.h"
#include "sched.h"

/*
** A mask is a where(c, x, -inf) whose condition c is index arithmetic over
** the loops of the stage (causal: key <= query; a window; a tail's bound).
** An iteration of loop L in which every mask condition is false for all
** the points of its tiles can be skipped when the body then changes
** nothing. The proof is symbolic, statement by statement, with every mask
** condition false:
**
**   - a value is simplified with the identities of IEEE arithmetic on
**     finite inputs (the assumption: the inputs hold no inf or NaN):
**     where(false, x, y) = y, max(x, -inf) = x, exp2(-inf) = 0, x + 0 = x,
**     x * 0 = 0, x - x = 0, exp2(0) = 1, ...;
**   - a store is an identity when its value is the load of the element it
**     stores (X = max(X, -inf), X = X * exp2(0), X = X + 0 all become X);
**   - a buffer only the body uses, whose first access in the body
**     overwrites it (the scores of a tile), is the iteration's own: its
**     stores need no proof;
**   - a copy P = C that ends the body, P and C initialized alike before L and
**     P written nowhere else, makes P equal to C at the start of every
**     iteration (a rolling update's previous value): loads of P read C.
**
** If every store is then an identity, L's body is guarded by "some mask
** condition holds somewhere in the tile": for each condition, a conjunction
** of comparisons of affine index expressions, that is decided per
** comparison by its extreme over the tile's loops (conservative: a
** comparison that is not affine is taken to hold). The Triton emitter turns
** a loop whose body is one affine guard into loop bounds.
*/

enum { MAXC = 64, MAXA = 16, MAXS = 1024 };

typedef struct Sk {
	Kernel *k;
	int st;
	const UOp *L;
	PMap memo;
	const UOp *cond[MAXC];      /* the mask conditions (each false in a skipped iteration) */
	const UOp *inner[MAXC][32]; /* per condition: the loops between L and its store */
	int ninner[MAXC];
	int ncond;
	UOp *from[MAXA], *to[MAXA]; /* aliases: loads of buffer from[i] read to[i] */
	int nalias;
	const UOp *path[32];        /* the loops between L and the store being simplified */
	int npath;
} Sk;

static int
isconstf(const UOp *u, double v)
{
	double x;

	if (u->op != OP_CONST || !dtype_is_float((DType)u->dtype))
		return u->op == OP_CONST && !dtype_is_float((DType)u->dtype) && u->dtype != DT_BOOL && !isinf(v)
		    && (double)u->arg[0] == v;
	x = uop_const_value(u);
	return x == v || (isnan(v) && isnan(x));
}

/* index arithmetic: no load, no float */
static int
pure_index(const UOp *u, int depth)
{
	int i;

	if (depth > 200 || u->op == OP_LOAD || dtype_is_float((DType)u->dtype))
		return 0;
	for (i = 0; i < u->nsrc; i++)
		if (!pure_index(u->src[i], depth + 1))
			return 0;
	return 1;
}

static UOp *fs(Sk *S, UOp *u, int depth);

/* where(c, x, -inf) with c a condition on indices: a mask; its condition is recorded */
static int
mask_cond(Sk *S, const UOp *u)
{
	int i;

	if (u->op != OP_WHERE || !isconstf(u->src[2], -INFINITY) || !pure_index(u->src[0], 0))
		return 0;
	for (i = 0; i < S->ncond; i++)
		if (S->cond[i] == u->src[0])
			return 1;
	if (S->ncond == MAXC)
		return 0;
	S->cond[S->ncond] = u->src[0];
	memcpy(S->inner[S->ncond], S->path, S->npath * sizeof *S->path);
	S->ninner[S->ncond++] = S->npath;
	return 1;
}

static UOp *
cf(Sk *S, DType t, double v)
{
	return uop_constf(S->k->c, t, v);
}

static UOp *
where3(UCtx *c, DType t, UOp *a, UOp *b, UOp *d)
{
	UOp *s[3] = { a, b, d };

	return uop_new(c, OP_WHERE, t, s, 3, 0, 0, NULL, NULL, 0);
}

/* the simplification of u under the assumptions (NULL when memory runs out) */
static UOp *
fs(Sk *S, UOp *u, int depth)
{
	UCtx *c = S->k->c;
	UOp *r = pmap_get(&S->memo, u), *s[4], *a, *b;
	DType t = (DType)u->dtype;
	int i, changed = 0;

	if (r)
		return r;
	if (depth > 400 || u->nsrc > 4)
		return u;
	if (u->op == OP_LOAD) {
		int j;

		for (j = 0; j < S->nalias; j++)
			if (u->src[0]->src[0] == S->from[j]) {
				/* the same index over buffer to[j] */
				UOp *src[1 + T_MAXDIM], *ix;

				memcpy(src, u->src[0]->src, u->src[0]->nsrc * sizeof *src);
				src[0] = S->to[j];
				ix = uop_new(c, OP_INDEX, (DType)S->to[j]->dtype, src, u->src[0]->nsrc, 0, 0, NULL, NULL, 0);
				r = ix ? uop_new(c, OP_LOAD, t, &ix, 1, 0, 0, NULL, NULL, 0) : NULL;
				goto done;
			}
		r = u;
		goto done;
	}
	if (mask_cond(S, u)) {   /* the mask is false: its -inf */
		r = u->src[2];
		goto done;
	}
	for (i = 0; i < u->nsrc; i++) {
		if (!(s[i] = fs(S, u->src[i], depth + 1)))
			return NULL;
		changed |= s[i] != u->src[i];
	}
	r = changed ? uop_new(c, (Op)u->op, t, s, u->nsrc, u->arg[0], u->arg[1], u->name, u->data, u->ndata) : u;
	if (!r)
		return NULL;
	a = r->nsrc > 0 ? r->src[0] : NULL;
	b = r->nsrc > 1 ? r->src[1] : NULL;
	switch (r->op) {
	case OP_WHERE:
		if (a->op == OP_CONST)
			r = a->arg[0] ? b : r->src[2];
		else if (b == r->src[2])
			r = b;
		else if (b->op == OP_WHERE && b->src[0] == a)
			r = where3(c, t, a, b->src[1], r->src[2]);
		else if (r->src[2]->op == OP_WHERE && r->src[2]->src[0] == a)
			r = where3(c, t, a, b, r->src[2]->src[2]);
		break;
	case OP_MAX:
		if (isconstf(a, -INFINITY) || a == b)
			r = b;
		else if (isconstf(b, -INFINITY))
			r = a;
		break;
	case OP_MIN:
		if (isconstf(a, INFINITY) || a == b)
			r = b;
		else if (isconstf(b, INFINITY))
			r = a;
		break;
	case OP_ADD:
		if (isconstf(a, 0))
			r = b;
		else if (isconstf(b, 0))
			r = a;
		else if (isconstf(a, -INFINITY) || isconstf(b, -INFINITY))
			r = cf(S, t, -INFINITY);   /* the other term is finite */
		break;
	case OP_SUB:
		if (a == b && dtype_is_float(t))
			r = cf(S, t, 0);
		else if (isconstf(b, 0))
			r = a;
		else if (isconstf(a, -INFINITY))
			r = cf(S, t, -INFINITY);
		break;
	case OP_MUL:
		if (isconstf(a, 1))
			r = b;
		else if (isconstf(b, 1))
			r = a;
		else if (isconstf(a, 0) || isconstf(b, 0))
			r = cf(S, t, 0);   /* the other factor is finite */
		else if ((isconstf(a, -INFINITY) && b->op == OP_CONST && uop_const_value(b) > 0)
		      || (isconstf(b, -INFINITY) && a->op == OP_CONST && uop_const_value(a) > 0))
			r = cf(S, t, -INFINITY);
		break;
	case OP_EXP2:
		if (isconstf(a, -INFINITY))
			r = cf(S, t, 0);
		else if (isconstf(a, 0))
			r = cf(S, t, 1);
		break;
	case OP_CAST:
		if (a->op == OP_CONST && dtype_is_float((DType)a->dtype) && dtype_is_float(t))
			r = cf(S, t, uop_const_value(a));
		break;
	case OP_CMPEQ: case OP_CMPNE:
		if (a->op == OP_CONST && b->op == OP_CONST && !dtype_is_float((DType)a->dtype))
			r = uop_const(c, DT_BOOL, (a->arg[0] == b->arg[0]) == (r->op == OP_CMPEQ));
		else if (a->op == OP_CONST && b->op == OP_CONST)
			r = uop_const(c, DT_BOOL, (uop_const_value(a) == uop_const_value(b)) == (r->op == OP_CMPEQ));
		break;
	default:
		break;
	}
done:
	if (r && pmap_put(&S->memo, u, r) < 0)
		return NULL;
	return r;
}

/* ---- the statements of the body ---- */

typedef struct Store {
	const UOp *s;
	const UOp *path[32];   /* the loops between L and the store */
	int npath;
	const UOp *gate[8];
	int ngate;
} Store;

static int
stores(const UOp *s, Store *out, int n, const UOp **path, int np, const UOp **gate, int ng, int depth)
{
	int i;

	if (depth > 200 || n < 0)
		return -1;
	if (s->op == OP_STORE) {
		if (n == MAXS)
			return -1;
		out[n].s = s;
		memcpy(out[n].path, path, np * sizeof *path);
		out[n].npath = np;
		memcpy(out[n].gate, gate, ng * sizeof *gate);
		out[n].ngate = ng;
		return n + 1;
	}
	if (s->op == OP_END) {
		if (np == 32)
			return -1;
		path[np] = s->src[0];
		for (i = 1; i < s->nsrc && n >= 0; i++)
			n = stores(s->src[i], out, n, path, np + 1, gate, ng, depth + 1);
		return n;
	}
	if (s->op == OP_IF) {
		int g = !(s->src[0]->op == OP_CONST && s->src[0]->arg[0]);

		if (g && ng == 8)
			return -1;
		if (g)
			gate[ng] = s->src[0];
		for (i = 1; i < s->nsrc && n >= 0; i++)
			n = stores(s->src[i], out, n, path, np, gate, ng + g, depth + 1);
		return n;
	}
	return n;   /* barriers and the like are refused by the caller's walk */
}

static int
buf_of(const UOp *s)
{
	return (int)s->src[0]->src[0]->arg[0];
}

/* whether the stage accesses buffer b outside loop L */
static int
used_outside(const Kernel *k, const UOp *s, const UOp *L, int b, int depth)
{
	int i;

	if (s == L || depth > 200)
		return 0;
	if (s->op == OP_STORE)
		return sched_reads(k, s, b) || sched_writes(k, s, b);
	if (s->op == OP_IF && sched_reads(k, s->src[0], b))
		return 1;
	if (s->op != OP_END && s->op != OP_IF)
		return 0;
	for (i = 1; i < s->nsrc; i++)
		if (used_outside(k, s->src[i], L, b, depth + 1))
			return 1;
	return 0;
}

/* the constant stored to buffer b outside L (one store, a constant value), or NULL */
static const UOp *
init_of(const Kernel *k, int st, const UOp *L, int b)
{
	UOp *sv[MAXS], *p[256];
	const UOp *v = NULL;
	int n = sched_stores(k, st, sv, MAXS), i, j, np, under;

	for (i = 0; i < n; i++) {
		if (buf_of(sv[i]) != b)
			continue;
		np = sched_path(k, st, sv[i], p, 256);
		for (under = 0, j = 0; j < np; j++)
			under |= p[j] == L;
		if (under)
			continue;
		if (v || sv[i]->src[1]->op != OP_CONST || sv[i]->nsrc > 2)
			return NULL;
		v = sv[i]->src[1];
	}
	return v;
}

/* ---- the guard: some point of the tile satisfies a condition ---- */

/*
** The least (or greatest) of affine index expression d over the box of
** vars[0..n) (each from 0 to its extent - 1), or NULL when d is not affine
** in them (its differences are not constant).
*/
static UOp *
extreme(Kernel *k, UOp *d, UOp *const *vars, int n, int greatest)
{
	int64_t at[32], c;
	UOp *rest;
	int i;

	for (i = 0; i < n; i++) {
		if (!kernel_affine_in(k->c, d, vars[i], &c, &rest))
			return NULL;
		at[i] = (c > 0) == greatest ? vars[i]->arg[1] : 0;
	}
	return kernel_at(k->c, d, vars, at, n);
}

/* an index condition that some point of the box satisfies, as a condition on the outer loops */
static UOp *
satisfiable(Kernel *k, const UOp *c, UOp *const *vars, int n, int depth)
{
	UCtx *x = k->c;
	UOp *d, *e;

	if (depth > 50)
		return uop_const(x, DT_BOOL, 1);
	switch (c->op) {
	case OP_AND: {
		UOp *a = satisfiable(k, c->src[0], vars, n, depth + 1), *b = satisfiable(k, c->src[1], vars, n, depth + 1);

		return a && b ? uop_alu(x, OP_AND, a, b) : NULL;
	}
	case OP_CMPLT:   /* a < b somewhere: the least of a - b is below 0 */
		if (c->src[0]->dtype != DT_INDEX || !(d = uop_sub(x, c->src[0], c->src[1])))
			break;
		if ((e = extreme(k, d, vars, n, 0)))
			return uop_alu(x, OP_CMPLT, e, uop_int(x, 0));
		break;
	case OP_CMPNE:   /* (a < b) != true, a >= b: the greatest of a - b is at least 0 */
		if (c->src[1]->op == OP_CONST && c->src[1]->arg[0] == 1 && c->src[0]->op == OP_CMPLT
		&& c->src[0]->src[0]->dtype == DT_INDEX && (d = uop_sub(x, c->src[0]->src[0], c->src[0]->src[1]))
		&& (e = extreme(k, d, vars, n, 1)))
			return uop_alu(x, OP_CMPLT, uop_int(x, -1), e);
		break;
	default:
		break;
	}
	return uop_const(x, DT_BOOL, 1);   /* not decided: taken to hold */
}

int
sched_skip_masked_in(Kernel *k, int st, const char *loop, Buf *why, Err *e)
{
	const char *sn = k->stage[st].name;
	UOp *L, *g = NULL, *body, *o;
	Store *sv;
	int n, i, j, rc = -1, *own = NULL;
	const UOp *path[32], *gate[8];
	Sk S;

	memset(&S, 0, sizeof S);
	if (!(L = sched_loop(k, st, loop, e)))
		return -1;
	if (krange_hw(L->src[0]) != HW_NONE)
		return err_set(e, "stage %s: loop %s is bound to %s; skip_masked restricts a serial loop (the key "
		               "tiles)", sn, loop, hwaxis_name(krange_hw(L->src[0])));
	if (!(sv = malloc(MAXS * sizeof *sv)) || !(own = calloc(k->nbuf ? k->nbuf : 1, sizeof *own))) {
		free(sv);
		return err_set(e, "out of memory");
	}
	for (n = 0, i = 1; i < L->nsrc && n >= 0; i++)
		n = stores(L->src[i], sv, n, path, 0, gate, 0, 0);
	if (n < 0) {
		err_set(e, "stage %s: loop %s's body is too large to analyze", sn, loop);
		goto out;
	}
	S.k = k;
	S.st = st;
	S.L = L;
	/* the iteration's own buffers: only the body uses them, and it overwrites them first */
	for (i = 0; i < n; i++) {
		int b = buf_of(sv[i].s), first = 1;

		if (own[b] || k->buf[b].role != KB_TEMP || used_outside(k, k->stage[st].body, L, b, 0))
			continue;
		for (j = 0; j < i && first; j++)
			first = !sched_reads(k, sv[j].s, b) && buf_of(sv[j].s) != b;
		if (first && !sched_reads(k, sv[i].s->src[1], b) && sv[i].ngate == 0)
			own[b] = 1;
	}
	/* aliases: a copy P = C that is the last store to P in the body, P and C initialized alike */
	for (i = 0; i < n; i++) {
		const UOp *s = sv[i].s, *v = s->src[1];
		int p = buf_of(s), cb, later = 0;
		const UOp *ip, *ic;

		if (v->op != OP_LOAD || v->nsrc != 1 || s->nsrc > 2 || sv[i].ngate || S.nalias == MAXA)
			continue;
		cb = (int)v->src[0]->src[0]->arg[0];
		if (cb == p || k->buf[p].role != KB_TEMP || k->buf[p].ndim != k->buf[cb].ndim
		|| memcmp(k->buf[p].shape, k->buf[cb].shape, k->buf[p].ndim * sizeof *k->buf[p].shape) != 0)
			continue;
		for (j = 0; j < n; j++)
			if (j != i && (buf_of(sv[j].s) == p || (j > i && buf_of(sv[j].s) == cb)))
				later = 1;
		for (j = 1; j < s->src[0]->nsrc; j++)
			later |= s->src[0]->src[j] != v->src[0]->src[j];
		if (later || !(ip = init_of(k, st, L, p)) || !(ic = init_of(k, st, L, cb)) || ip != ic)
			continue;
		S.from[S.nalias] = k->buf[p].def;
		S.to[S.nalias++] = k->buf[cb].def;
	}
	/* every store, under the masks all false: an identity */
	for (i = 0; i < n; i++) {
		const UOp *s = sv[i].s;
		int b = buf_of(s), alias = 0;
		UOp *v, *want;

		if (own[b])
			continue;
		for (j = 0; j < S.nalias; j++)
			alias |= S.from[j] == k->buf[b].def;
		memcpy(S.path, sv[i].path, sv[i].npath * sizeof *S.path);
		S.npath = sv[i].npath;
		if (!(v = fs(&S, s->src[1], 0)) || !(want = kernel_load(k, s->src[0], NULL))) {
			err_set(e, "out of memory");
			goto out;
		}
		if (alias && s->src[1]->op == OP_LOAD)
			continue;   /* P = C, with P equal to C and C unchanged so far */
		if (v != want && S.ncond == 0) {
			err_set(e, "stage %s: loop %s's body has no mask (a where(c, x, -inf) on indices) before its "
			        "store to %s: no iteration is known to leave it unchanged", sn, loop, k->buf[b].name);
			goto out;
		}
		if (v != want) {
			Buf a;

			buf_init(&a);
			kernel_print_store(&a, k, s);
			emit(why, "%s", a.s ? a.s : "?");
			buf_free(&a);
			buf_init(&a);
			kernel_print_expr(&a, k, v);
			emit(why, "  (with every mask false: = %s)", a.s ? a.s : "?");
			buf_free(&a);
			err_set(e, "stage %s: an iteration of loop %s whose masks are all false still changes %s: "
			        "%s", sn, loop, k->buf[b].name, why->s ? why->s : "?");
			goto out;
		}
	}
	if (S.ncond == 0) {
		err_set(e, "stage %s: loop %s's body has no mask (a where(c, x, -inf) on indices): no iteration "
		        "is known to be empty", sn, loop);
		goto out;
	}
	/* the guard: some mask condition holds somewhere in its statement's tile */
	for (i = 0; i < S.ncond; i++) {
		UOp *vars[32], *c;
		int m;

		for (m = 0; m < S.ninner[i]; m++)
			vars[m] = (UOp *)krange_var(S.inner[i][m]);
		if (!(c = satisfiable(k, S.cond[i], vars, m, 0))) {
			err_set(e, "out of memory");
			goto out;
		}
		g = g ? uop_alu(k->c, OP_OR, g, c) : c;
	}
	if (uop_simplify(k->c, g, &o, e) < 0)
		goto out;
	if (o->op == OP_CONST) {
		err_set(e, "stage %s: every iteration of loop %s may hold a point where a mask is true (no "
		        "affine bound decides a tile): nothing to skip", sn, loop);
		goto out;
	}
	body = kernel_if(k, o, L->src + 1, L->nsrc - 1);
	rc = body ? sched_replace(k, st, L, kernel_loop(k, L->src[0], &body, 1), e)
	          : err_set(e, "out of memory");
	if (rc == 0) {
		Buf gb;

		buf_init(&gb);
		kernel_print_expr(&gb, k, o);
		emit(why, "skip_masked(%s, %s): %d masks; an iteration runs only if %s", sn, loop, S.ncond,
		     gb.s ? gb.s : "?");
		buf_free(&gb);
	}
out:
	pmap_free(&S.memo);
	free(sv);
	free(own);
	return rc;
}

int
sched_skip_masked(Schedule *s, const char *stage, const char *loop, Err *e)
{
	Kernel *next;
	Buf line, why;
	Err ie;
	int st, rc;

	if ((st = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "skip_masked: %s", ie.msg);
	if (!(next = sched_begin(s, e)))
		return -1;
	buf_init(&why);
	if (sched_skip_masked_in(next, st, loop, &why, &ie) < 0) {
		kernel_free(next);
		buf_free(&why);
		return err_set(e, "skip_masked: %s", ie.msg);
	}
	buf_init(&line);
	emit(&line, "s:skip_masked(");
	sched_quote(&line, stage);
	emit(&line, ", ");
	sched_quote(&line, loop);
	emit(&line, ")");
	rc = line.oom ? (kernel_free(next), err_set(e, "skip_masked: out of memory"))
	   : sched_commit(s, next, "skip_masked", line.s, e);
	if (rc == 0 && why.s)
		sched_note(s, why.s);
	buf_free(&line);
	buf_free(&why);
	return rc;
}

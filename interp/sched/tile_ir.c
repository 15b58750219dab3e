/* tile_ir.c - the tile view: Neptune's loop-to-tile translation (Section 5, Appendix E), printed in its tile IR. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/pmap.h"
#include "tile_ir.h"

/*
** One pass per store, printing as it goes. Loops are chain positions 0..n-1
** from the outermost loop of the candidate nest down to the store; the inner
** part is positions p..n-1, and sets of loops are bit masks over positions.
** Analysis reads the kernel's nodes; what the view builds (tile bounds,
** values with their loads replaced) lives in a scratch context, so printing
** leaves the kernel's arena as it was.
*/
enum { MAXCHAIN = 16 };
#define SEEN 0x80000000u

/* a candidate nest: loops each the only statement of the one above, down to one store */
typedef struct Chain {
	const UOp *range[MAXCHAIN];   /* RANGE nodes, outermost first */
	int direct[MAXCHAIN];         /* loop c's END is the body of loop c-1's (one grid) */
	int n;
	const UOp *store;
} Chain;

/* an access relaxed over the inner loops */
typedef struct Access {
	int ndim;
	UOp *base[T_MAXDIM];          /* the index with the inner variables at 0 (scratch) */
	int loop[T_MAXDIM];           /* the inner loop of each dimension, or -1 (a scalar index) */
	int64_t step[T_MAXDIM];
	uint32_t loops;               /* the inner loops it spans */
} Access;

/* what a store becomes for one choice of inner part */
typedef struct Plan {
	Access st;                    /* the stored tile */
	const UOp *acc, *other;       /* X[I] = X[I] op other: the load of X[I], or NULL */
	uint32_t used;                /* inner loops the value spans (acc aside) */
	uint32_t red;                 /* of those, the ones the stored tile does not: reduced */
	int self;                     /* the value reads the stored element */
	int dim[MAXCHAIN], ns, nd;    /* the value's dimensions: ns stored, then reduced */
} Plan;

typedef struct Tr {
	Buf *b;
	const Kernel *k;
	UCtx *x;                      /* scratch */
	int oom;
	const Chain *ch;
	int p;
	PMap mask;                    /* node -> SEEN | the chain loops it mentions (per chain) */
	PMap vis[2];                  /* nodes scanned (per plan): value, index context */
	PMap memo;                    /* node -> rebuilt node (per rebuild) */
	char **ph;                    /* placeholder texts (per statement) */
	int nph, capph;
} Tr;

static void stmt(Tr *t, const UOp *s, int ind, int depth);

static int
tensorizable(const UOp *r)
{
	return krange_hw(r) == HW_NONE && (krange_type(r) == AX_LOOP || krange_type(r) == AX_REDUCE);
}

static uint32_t
inner(const Tr *t)
{
	return ((1u << t->ch->n) - 1) & ~((1u << t->p) - 1);
}

/* ---- AST partitioning ---- */

/*
** Whether loop s heads a candidate nest: s and the loops under it are each
** the only statement of the body above (through sequences of one
** statement), unannotated, down to one store. A sequence of several
** statements, a guard, a named sequence (a collective operator) or an
** annotated loop ends it. The paper finds the outermost such loop per store;
** the printer meets loops outermost first, so the first that heads one is it.
*/
static int
heads(const UOp *s, Chain *ch)
{
	const UOp *cur = s;
	int direct = 0;

	ch->n = 0;
	for (;;) {
		switch (cur->op) {
		case OP_END:
			if (!tensorizable(cur->src[0]) || ch->n == MAXCHAIN || cur->nsrc != 2)
				return 0;
			ch->direct[ch->n] = direct;
			ch->range[ch->n++] = cur->src[0];
			cur = cur->src[1];
			direct = 1;
			break;
		case OP_IF:
			if (cur->src[0]->op != OP_CONST || !cur->src[0]->arg[0] || cur->name || cur->nsrc != 2)
				return 0;
			cur = cur->src[1];
			direct = 0;
			break;
		case OP_STORE:
			ch->store = cur;
			return ch->n > 0;
		default:
			return 0;
		}
	}
}

/* ---- access function relaxation ---- */

static uint32_t
mentions(Tr *t, const UOp *u)
{
	uintptr_t v = (uintptr_t)pmap_get(&t->mask, u);
	uint32_t m = 0;
	int i;

	if (v)
		return (uint32_t)v & ~SEEN;
	if (u->op == OP_VAR) {
		for (i = 0; i < t->ch->n; i++)
			if (krange_var(t->ch->range[i]) == u)
				m |= 1u << i;
	} else
		for (i = 0; i < u->nsrc; i++)
			m |= mentions(t, u->src[i]);
	if (pmap_put(&t->mask, u, (void *)(uintptr_t)(m | SEEN)) < 0)
		t->oom = 1;
	return m;
}

static UOp *
made(Tr *t, UOp *u)
{
	if (!u)
		t->oom = 1;
	return u;
}

/*
** u as base + sum coef[c] * (variable of loop c) over the inner loops, the
** base built in the scratch context: 0, or -1 when u is not affine in them
** (a product of two of them, a division, a load, a coefficient that is not
** a constant, an overflow). The walk is structural: index expressions reach
** here simplified, so x*2 + y stays a sum and needs no algebra.
*/
static int
affine(Tr *t, const UOp *u, UOp **base, int64_t *coef)
{
	int64_t ca[MAXCHAIN], cb[MAXCHAIN];
	UOp *ba, *bb;
	int i, c;

	for (c = 0; c < t->ch->n; c++)
		coef[c] = 0;
	if (!(mentions(t, u) & inner(t)))
		return (*base = made(t, uop_import(t->x, u))) ? 0 : -1;
	switch (u->op) {
	case OP_VAR:
		for (c = t->p; krange_var(t->ch->range[c]) != u; c++)
			;
		coef[c] = 1;
		*base = made(t, uop_int(t->x, 0));
		break;
	case OP_ADD:
	case OP_SUB:
		if (affine(t, u->src[0], &ba, ca) < 0 || affine(t, u->src[1], &bb, cb) < 0)
			return -1;
		for (c = t->p; c < t->ch->n; c++)
			if ((u->op == OP_ADD ? uck_add : uck_sub)(ca[c], cb[c], &coef[c]) < 0)
				return -1;
		*base = made(t, u->op == OP_ADD ? uop_add(t->x, ba, bb) : uop_sub(t->x, ba, bb));
		break;
	case OP_MUL:
		for (i = 0; i < 2; i++)
			if (u->src[i]->op == OP_CONST && !dtype_is_float(u->src[i]->dtype))
				break;
		if (i == 2 || affine(t, u->src[1 - i], &ba, ca) < 0)
			return -1;
		for (c = t->p; c < t->ch->n; c++)
			if (uck_mul(ca[c], u->src[i]->arg[0], &coef[c]) < 0)
				return -1;
		*base = made(t, uop_mul(t->x, ba, uop_int(t->x, u->src[i]->arg[0])));
		break;
	case OP_NEG:
		if (affine(t, u->src[0], &ba, ca) < 0)
			return -1;
		for (c = t->p; c < t->ch->n; c++)
			if (uck_sub(0, ca[c], &coef[c]) < 0)
				return -1;
		*base = made(t, uop_neg(t->x, ba));
		break;
	default:
		return -1;
	}
	return *base ? 0 : -1;
}

/*
** Access ix (an INDEX) as a tile over the inner loops: 0, or -1 when it is
** not one. Each dimension takes one inner variable at most and each
** variable one dimension at most (the paper's V is 1-sparse by columns; a
** dimension with two variables, x[r + c], is a tile too, but no einops
** dimension of one loop, so it is refused as well), with a positive step
** (a reversed dimension is a flip, which the tile IR does not have).
*/
static int
relax(Tr *t, const UOp *ix, Access *a)
{
	int64_t coef[MAXCHAIN], hi;
	int d, c;

	if (ix->op != OP_INDEX || ix->nsrc < 1 || ix->src[0]->op != OP_DEFINE || ix->nsrc - 1 > T_MAXDIM)
		return -1;
	a->ndim = ix->nsrc - 1;
	a->loops = 0;
	for (d = 0; d < a->ndim; d++) {
		if (affine(t, ix->src[d + 1], &a->base[d], coef) < 0)
			return -1;
		a->loop[d] = -1;
		for (c = t->p; c < t->ch->n; c++) {
			if (!coef[c])
				continue;
			if (a->loop[d] >= 0 || (a->loops & 1u << c) || coef[c] < 0)
				return -1;
			if (uck_mul(coef[c], krange_extent(t->ch->range[c]) - 1, &hi) < 0 || uck_add(hi, 1, &hi) < 0)
				return -1;
			a->loop[d] = c;
			a->step[d] = coef[c];
			a->loops |= 1u << c;
		}
	}
	return 0;
}

/*
** Whether value u (ctx 0) or an index or gate (ctx 1) reads as tiles. In a
** value every inner variable sits in an access index; an access's gate
** mentions none (it stays one condition for the whole tile); the stored
** buffer is read only at the stored element (pl->self), since a tile store
** reads everything before it writes, where the loops would see their own
** earlier writes.
*/
static int
scan(Tr *t, const UOp *u, Plan *pl, int ctx)
{
	const UOp *def = t->ch->store->src[0]->src[0];
	Access a;
	int i;

	if (pmap_get(&t->vis[ctx], u))
		return 0;
	if (pmap_put(&t->vis[ctx], u, (void *)1) < 0) {
		t->oom = 1;
		return -1;
	}
	switch (u->op) {
	case OP_LOAD:
		if (u->src[0]->op != OP_INDEX || u->src[0]->nsrc < 1 || u->src[0]->src[0]->op != OP_DEFINE)
			return -1;
		if (u->src[0]->src[0] == def) {
			if (ctx || u->src[0] != t->ch->store->src[0])
				return -1;
			pl->self = 1;
		}
		if (u->nsrc > 1 && ((mentions(t, u->src[1]) & inner(t)) || scan(t, u->src[1], pl, 1) < 0))
			return -1;
		if (relax(t, u->src[0], &a) < 0)
			return -1;
		if (ctx && a.loops)
			return -1;
		pl->used |= a.loops;
		for (i = 1; i < u->src[0]->nsrc; i++)
			if (scan(t, u->src[0]->src[i], pl, 1) < 0)
				return -1;
		return 0;
	case OP_VAR:
		/* in a value, an inner variable is an index tile (a mask's i >= j, ALiBi's j - i) */
		if (!ctx)
			pl->used |= mentions(t, u) & inner(t);
		return 0;
	case OP_SHUFFLE:
	case OP_INDEX:
		return -1;   /* a warp exchange, a bare access: no tile form */
	default:
		for (i = 0; i < u->nsrc; i++)
			if (scan(t, u->src[i], pl, ctx) < 0)
				return -1;
		return 0;
	}
}

/*
** The store's tile and its value's for the inner part p..n-1: 0, or -1
** when it does not translate and the partition must shrink.
*/
static int
plan(Tr *t, Plan *pl)
{
	const UOp *s = t->ch->store, *v = s->src[1];
	uint32_t in = inner(t);
	int i, c, d;

	memset(pl, 0, sizeof *pl);
	pmap_free(&t->vis[0]);
	pmap_free(&t->vis[1]);
	if (s->nsrc > 2 && ((mentions(t, s->src[2]) & in) || scan(t, s->src[2], pl, 1) < 0))
		return -1;   /* a guard on the inner loops */
	if (relax(t, s->src[0], &pl->st) < 0)
		return -1;
	for (i = 1; i < s->src[0]->nsrc; i++)
		if (scan(t, s->src[0]->src[i], pl, 1) < 0)
			return -1;
	if ((v->op == OP_ADD || v->op == OP_MUL || v->op == OP_MAX || v->op == OP_MIN) && v->nsrc == 2)
		for (i = 0; i < 2 && !pl->acc; i++)
			if (v->src[i]->op == OP_LOAD && v->src[i]->nsrc == 1 && v->src[i]->src[0] == s->src[0]) {
				pl->acc = v->src[i];
				pl->other = v->src[1 - i];
			}
	if (scan(t, pl->acc ? pl->other : v, pl, 0) < 0)
		return -1;
	pl->red = pl->used & ~pl->st.loops;
	/* a reduction needs an update X[I] = X[I] op v whose v does not read X[I] */
	if (pl->red && (!pl->acc || pl->self))
		return -1;
	/* a loop that indexes nothing would repeat the statement */
	for (c = t->p; c < t->ch->n; c++)
		if (!((pl->st.loops | pl->used) & 1u << c) && krange_extent(t->ch->range[c]) > 1)
			return -1;
	for (d = 0; d < pl->st.ndim; d++)
		if (pl->st.loop[d] >= 0)
			pl->dim[pl->nd++] = pl->st.loop[d];
	pl->ns = pl->nd;
	for (c = t->p; c < t->ch->n; c++)
		if (pl->red & 1u << c)
			pl->dim[pl->nd++] = c;
	return 0;
}

/* ---- dimension order reconciliation, printing ---- */

/*
** Values print through kernel_print_expr, the one printer of values: each
** tile (and each reduce) is a variable @n in a copy of the value, replaced
** by its text afterwards. A tile prints as an atom, as a load does.
*/
static UOp *
ph(Tr *t, DType dt, char *s)
{
	char name[16];

	if (!s) {
		t->oom = 1;
		return NULL;
	}
	if (t->nph == t->capph) {
		int cap = t->capph ? 2 * t->capph : 16;
		char **n = realloc(t->ph, cap * sizeof *n);

		if (!n) {
			free(s);
			t->oom = 1;
			return NULL;
		}
		t->ph = n;
		t->capph = cap;
	}
	t->ph[t->nph] = s;
	snprintf(name, sizeof name, "@%d", t->nph++);
	return made(t, uop_new(t->x, OP_VAR, dt, NULL, 0, 0, 0, name, NULL, 0));
}

static void
splice(Tr *t, Buf *o, const char *s)
{
	const char *q;
	char *end;
	long n;

	for (q = s; *q; q++)
		if (*q == '@' && q[1] >= '0' && q[1] <= '9') {
			n = strtol(q + 1, &end, 10);
			if (n < t->nph)
				emit(o, "%s", t->ph[n]);
			q = end - 1;
		} else
			emitn(o, q, 1);
}

/* u (in the scratch context) printed with its placeholders replaced, appended to o */
static void
expr(Tr *t, Buf *o, const UOp *u)
{
	Buf s;

	if (!u) {
		t->oom = 1;
		return;
	}
	buf_init(&s);
	kernel_print_expr(&s, t->k, u);
	if (s.oom)
		t->oom = 1;
	splice(t, o, s.s ? s.s : "");
	buf_free(&s);
}

static int
fpos(const int *frame, int nf, int c)
{
	int q;

	for (q = 0; q < nf; q++)
		if (frame[q] == c)
			return q;
	return -1;
}

/*
** Access ix as a tile in frame[0..nf-1] (the order of the value's
** dimensions): a tile lacking some of them gets None there (broadcast), a
** tile whose dimensions come in another order is permuted; a scalar access
** (no inner loop) stays a scalar. A None goes after the tile dimension that
** precedes it in the frame, so that an ordered tile needs no permute.
*/
static char *
tile(Tr *t, const UOp *ix, const int *frame, int nf)
{
	Access a;
	int item[2 * T_MAXDIM], q[2 * T_MAXDIM], ni = 0, ntile = 0, perm = 0, i, j, f, at;
	Buf o;

	if (relax(t, ix, &a) < 0) {
		t->oom = 1;   /* plan accepted it: cannot happen */
		return NULL;
	}
	/* item d >= 0: dimension d of the access; -1 - f: None for frame position f */
	for (i = 0; i < a.ndim; i++) {
		item[ni] = i;
		q[ni++] = a.loop[i] >= 0 ? fpos(frame, nf, a.loop[i]) : -1;
		ntile += a.loop[i] >= 0;
	}
	for (f = 0; ntile && ntile < nf && f < nf; f++) {
		if (a.loops & 1u << frame[f])
			continue;
		for (at = -1, i = 0; i < ni; i++)
			if (q[i] >= 0 && q[i] < f)
				at = i + 1;
		for (i = 0; at < 0 && i < ni; i++)
			if (q[i] >= 0)
				at = i;
		memmove(item + at + 1, item + at, (ni - at) * sizeof *item);
		memmove(q + at + 1, q + at, (ni - at) * sizeof *q);
		item[at] = -1 - f;
		q[at] = f;
		ni++;
	}
	for (i = 0, j = 0; i < ni; i++)
		if (q[i] >= 0)
			perm |= q[i] != j++;
	buf_init(&o);
	if (perm)
		emit(&o, "permute(");
	emit(&o, "%s[", ix->src[0]->name ? ix->src[0]->name : "?");
	if (!ni)
		emit(&o, "()");
	for (i = 0; i < ni; i++) {
		int d = item[i];

		if (i)
			emit(&o, ", ");
		if (d < 0) {
			emit(&o, "None");
			continue;
		}
		expr(t, &o, a.base[d]);
		if (a.loop[d] < 0)
			continue;
		emit(&o, " : ");
		expr(t, &o, uop_add(t->x, a.base[d], uop_int(t->x, a.step[d] *
		     (krange_extent(t->ch->range[a.loop[d]]) - 1) + 1)));
		if (a.step[d] != 1)
			emit(&o, " : %lld", (long long)a.step[d]);
	}
	emit(&o, "]");
	if (perm) {
		/* result dimension f is the tile's dimension order[f] (torch's permute) */
		int cur[2 * T_MAXDIM], order[2 * T_MAXDIM];

		for (i = 0, j = 0; i < ni; i++)
			if (q[i] >= 0)
				cur[j++] = q[i];
		for (i = 0; i < j; i++)
			order[cur[i]] = i;
		emit(&o, ", order=(");
		for (f = 0; f < j; f++)
			emit(&o, "%s%d", f ? ", " : "", order[f]);
		emit(&o, "))");
	}
	if (o.oom) {
		t->oom = 1;
		buf_free(&o);
		return NULL;
	}
	return buf_take(&o);
}

/* u with every load replaced by its tile in frame (see ph), in the scratch context */
static UOp *
rebuild(Tr *t, const UOp *u, const int *frame, int nf)
{
	UOp *r, *s[16], **ss = s;
	int i;

	if ((r = pmap_get(&t->memo, u)))
		return r;
	if (u->op == OP_LOAD) {
		char *tx = tile(t, u->src[0], frame, nf);

		if (tx && u->nsrc > 1) {   /* a gated load: the gate is one scalar for the whole tile */
			Buf o;

			buf_init(&o);
			emit(&o, "(%s if ", tx);
			expr(t, &o, rebuild(t, u->src[1], frame, nf));
			emit(&o, " else 0)");
			free(tx);
			tx = o.oom ? (buf_free(&o), NULL) : buf_take(&o);
		}
		r = ph(t, (DType)u->dtype, tx);
	} else if (u->op == OP_VAR && (mentions(t, u) & inner(t))) {
		/* an index tile: arange(0, n) in its frame position, None in the others */
		Buf o;
		int c = 0, f, at;

		while (krange_var(t->ch->range[c]) != u)
			c++;
		at = fpos(frame, nf, c);
		buf_init(&o);
		emit(&o, "arange(0, %lld)", (long long)krange_extent(t->ch->range[c]));
		if (nf > 1) {
			emit(&o, "[");
			for (f = 0; f < nf; f++)
				emit(&o, "%s%s", f ? ", " : "", f == at ? ":" : "None");
			emit(&o, "]");
		}
		r = o.oom ? (buf_free(&o), NULL) : ph(t, (DType)u->dtype, buf_take(&o));
	} else {
		if (u->nsrc > 16 && !(ss = malloc(u->nsrc * sizeof *ss))) {
			t->oom = 1;
			return NULL;
		}
		for (i = 0; i < u->nsrc; i++)
			if (!(ss[i] = rebuild(t, u->src[i], frame, nf)))
				break;
		r = i < u->nsrc ? NULL : made(t, uop_new(t->x, (Op)u->op, (DType)u->dtype, ss, u->nsrc,
		                                         u->arg[0], u->arg[1], u->name, u->data, u->ndata));
		if (ss != s)
			free(ss);
	}
	if (r && pmap_put(&t->memo, u, r) < 0)
		t->oom = 1;
	return r;
}

static UOp *
value(Tr *t, const UOp *u, const int *frame, int nf)
{
	pmap_free(&t->memo);
	return rebuild(t, u, frame, nf);
}

/* reduce(op, other, dim=d): other over the value's frame, reduced over the loops past the stored ones */
static UOp *
reduction(Tr *t, const Plan *pl, Op op)
{
	Buf o;
	int d;

	buf_init(&o);
	emit(&o, "reduce(%s, ", op == OP_ADD ? "+" : op == OP_MUL ? "*" : op == OP_MAX ? "max" : "min");
	expr(t, &o, value(t, pl->other, pl->dim, pl->nd));
	emit(&o, ", dim=%s", pl->nd - pl->ns > 1 ? "(" : "");
	for (d = pl->ns; d < pl->nd; d++)
		emit(&o, "%s%d", d > pl->ns ? ", " : "", d);
	emit(&o, "%s)", pl->nd - pl->ns > 1 ? ")" : "");
	if (o.oom) {
		buf_free(&o);
		return ph(t, (DType)pl->other->dtype, NULL);
	}
	return ph(t, (DType)pl->other->dtype, buf_take(&o));
}

static void
indent(Tr *t, int n)
{
	emit(t->b, "%*s", 2 * n, "");
}

/* the tile store: the store as the loop-scalar printer writes it, over tiles */
static void
tile_store(Tr *t, const Plan *pl, int ind)
{
	const UOp *s = t->ch->store, *v = s->src[1];
	char *target = tile(t, s->src[0], pl->dim, pl->ns);
	UOp *val;

	if (!target)
		return;
	indent(t, ind);
	if (s->nsrc > 2) {
		emit(t->b, "if ");
		kernel_print_expr(t->b, t->k, s->src[2]);
		emit(t->b, ": ");
	}
	emit(t->b, "%s", target);
	if (pl->acc && (v->op == OP_ADD || v->op == OP_MUL)) {
		emit(t->b, " %s ", v->op == OP_ADD ? "+=" : "*=");
		val = pl->red ? reduction(t, pl, (Op)v->op) : value(t, pl->other, pl->dim, pl->ns);
	} else if (pl->red) {
		/* max(X[T], reduce(max, v, dim=d)), the operands in the update's order */
		UOp *src[2];
		char *acc = malloc(strlen(target) + 1);

		if (acc)
			strcpy(acc, target);
		src[v->src[0] == pl->acc ? 0 : 1] = ph(t, (DType)v->dtype, acc);
		src[v->src[0] == pl->acc ? 1 : 0] = reduction(t, pl, (Op)v->op);
		emit(t->b, " = ");
		val = src[0] && src[1] ? made(t, uop_new(t->x, (Op)v->op, (DType)v->dtype, src, 2, v->arg[0],
		                                         v->arg[1], v->name, v->data, v->ndata)) : NULL;
	} else {
		emit(t->b, " = ");
		val = value(t, v, pl->dim, pl->ns);
	}
	expr(t, t->b, val);
	emit(t->b, "\n");
	free(target);
}

/* one for line over loops r[0..n-1], as kernel_print writes it */
static void
header(Tr *t, const UOp *const *r, int n, int ind)
{
	int i, typed = 0;

	indent(t, ind);
	emit(t->b, "for ");
	for (i = 0; i < n; i++) {
		emit(t->b, "%s%s", i ? ", " : "", krange_var(r[i])->name);
		typed |= krange_type(r[i]) != AX_LOOP;
	}
	if (n == 1)
		emit(t->b, " in range(%lld):", (long long)krange_extent(r[0]));
	else {
		emit(t->b, " in grid(");
		for (i = 0; i < n; i++)
			emit(t->b, "%s%lld", i ? ", " : "", (long long)krange_extent(r[i]));
		emit(t->b, "):");
	}
	if (krange_hw(r[0]) != HW_NONE || typed) {
		emit(t->b, "  #");
		for (i = 0; i < n; i++) {
			if (krange_hw(r[i]) != HW_NONE)
				emit(t->b, " %s", hwaxis_name(krange_hw(r[i])));
			if (krange_type(r[i]) != AX_LOOP || krange_hw(r[i]) != HW_NONE)
				emit(t->b, n > 1 ? " %s:%s" : " %s%s", n > 1 ? krange_var(r[i])->name : "",
				     axistype_name(krange_type(r[i])));
		}
	}
	emit(t->b, "\n");
}

/* the first inner part (from the top) that translates: ch->n when none does */
static int
partition(Tr *t, const Chain *ch, Plan *pl)
{
	int p;

	t->ch = ch;
	pmap_free(&t->mask);
	for (p = 0; p < ch->n && !t->oom; p++) {
		t->p = p;
		if (plan(t, pl) == 0)
			return p;
	}
	t->p = ch->n;
	return ch->n;
}

/* a nest that heads a partition: its outer loops, then the tile store (or the scalar store) */
static void
nest(Tr *t, const Chain *ch, int ind)
{
	Plan pl;
	int p = partition(t, ch, &pl), c, g, i;

	for (c = 0; c < p; c = g) {
		for (g = c + 1; g < p && ch->direct[g]; g++)
			;
		header(t, ch->range + c, g - c, ind++);
	}
	if (p < ch->n && !t->oom)
		tile_store(t, &pl, ind);
	else {
		indent(t, ind);
		kernel_print_store(t->b, t->k, ch->store);
		emit(t->b, "\n");
	}
	for (i = 0; i < t->nph; i++)
		free(t->ph[i]);
	t->nph = 0;
}

static void
body(Tr *t, const UOp *s, int from, int ind, int depth)
{
	int i;

	if (s->nsrc <= from) {
		indent(t, ind);
		emit(t->b, "pass\n");
	}
	for (i = from; i < s->nsrc; i++)
		stmt(t, s->src[i], ind, depth + 1);
}

/*
** A loop that heads no partition: perfectly nested unbound loops print as
** one grid, as kernel_print does, up to a loop that heads a partition.
*/
static void
loop(Tr *t, const UOp *s, int ind, int depth)
{
	const UOp *r[16], *cur = s;
	Chain ch;
	int n = 0;

	if (heads(s, &ch)) {
		nest(t, &ch, ind);
		return;
	}
	for (;;) {
		r[n++] = cur->src[0];
		if (krange_hw(cur->src[0]) != HW_NONE || n == 16 || cur->nsrc != 2
		|| cur->src[1]->op != OP_END || krange_hw(cur->src[1]->src[0]) != HW_NONE
		|| heads(cur->src[1], &ch))
			break;
		cur = cur->src[1];
	}
	header(t, r, n, ind);
	body(t, cur, 1, ind + 1, depth);
}

static void
stmt(Tr *t, const UOp *s, int ind, int depth)
{
	int i;

	if (depth > 200) {
		indent(t, ind);
		emit(t->b, "...\n");
		return;
	}
	switch (s->op) {
	case OP_END:
		loop(t, s, ind, depth);
		break;
	case OP_IF:
		if (s->src[0]->op == OP_CONST && s->src[0]->arg[0]) {
			if (s->name) {
				indent(t, ind);
				emit(t->b, "# %s\n", s->name);
			}
			body(t, s, 1, ind, depth);
			break;
		}
		indent(t, ind);
		emit(t->b, "if ");
		kernel_print_expr(t->b, t->k, s->src[0]);
		emit(t->b, ":\n");
		body(t, s, 1, ind + 1, depth);
		break;
	case OP_BARRIER:
		indent(t, ind);
		emit(t->b, "barrier()\n");
		break;
	case OP_STORE:
		indent(t, ind);
		kernel_print_store(t->b, t->k, s);
		emit(t->b, "\n");
		break;
	case OP_MMA:
		indent(t, ind);
		emit(t->b, "mma.%s(", s->name ? s->name : "?");
		for (i = 0; i < s->nsrc; i++)
			emit(t->b, "%s%s", i ? ", " : "", s->src[i]->name ? s->src[i]->name : "?");
		emit(t->b, ")\n");
		break;
	case OP_LDMATRIX:
		indent(t, ind);
		emit(t->b, "ldmatrix.x%lld%s(%s, ", (long long)s->arg[0], s->arg[1] ? ".trans" : "",
		     s->nsrc == 2 && s->src[0]->name ? s->src[0]->name : "?");
		if (s->nsrc == 2)
			kernel_print_expr(t->b, t->k, s->src[1]);
		emit(t->b, ")\n");
		break;
	case OP_CP_ASYNC:
		indent(t, ind);
		emit(t->b, "cp_async.%lld(", (long long)s->arg[0]);
		if (s->nsrc == 2) {
			kernel_print_expr(t->b, t->k, s->src[0]);
			emit(t->b, ", ");
			kernel_print_expr(t->b, t->k, s->src[1]);
		}
		emit(t->b, ")\n");
		break;
	case OP_CP_COMMIT:
		indent(t, ind);
		emit(t->b, "cp_async_commit()\n");
		break;
	case OP_WGMMA:
		indent(t, ind);
		emit(t->b, "wgmma.m64n%lldk16(%s", (long long)s->arg[0], s->nsrc == 3 && s->src[0]->name ? s->src[0]->name : "?");
		if (s->nsrc == 3) {
			emit(t->b, ", ");
			kernel_print_expr(t->b, t->k, s->src[1]);
			emit(t->b, ", ");
			kernel_print_expr(t->b, t->k, s->src[2]);
		}
		emit(t->b, "%s)\n", s->arg[1] & KWG_B_NK ? ", b_nk" : "");
		break;
	case OP_WG_FENCE:
	case OP_WG_COMMIT:
		indent(t, ind);
		emit(t->b, "%s()\n", s->op == OP_WG_FENCE ? "wgmma_fence" : "wgmma_commit");
		break;
	case OP_WG_WAIT:
		indent(t, ind);
		emit(t->b, "wgmma_wait(%lld)\n", (long long)s->arg[0]);
		break;
	case OP_SETMAXNREG:
		indent(t, ind);
		emit(t->b, "setmaxnreg(%lld, %s)\n", (long long)s->arg[0], s->arg[1] ? "inc" : "dec");
		break;
	case OP_CP_WAIT:
		indent(t, ind);
		emit(t->b, "cp_async_wait(%lld)\n", (long long)s->arg[0]);
		break;
	case OP_MBAR_INIT:
	case OP_MBAR_ARRIVE:
	case OP_MBAR_WAIT:
	case OP_TMA_LOAD:
		indent(t, ind);
		kernel_print_tma(t->b, t->k, s);
		emit(t->b, "\n");
		break;
	default:
		indent(t, ind);
		emit(t->b, "<%s>\n", uop_info[s->op].name);
		break;
	}
}

/* the # inputs / # outputs / # buffers lines, as kernel_print writes them */
static void
buffers(Tr *t, KRole role, const char *label)
{
	int i, d, n = 0;

	for (i = 0; i < t->k->nbuf; i++) {
		const KBuf *x = &t->k->buf[i];

		if (x->role != role)
			continue;
		emit(t->b, n++ ? ", " : "# %s: ", label);
		emit(t->b, "%s: %s[", x->name, dtype_name(x->dtype));
		for (d = 0; d < x->ndim; d++)
			emit(t->b, "%s%lld", d ? ", " : "", (long long)x->shape[d]);
		emit(t->b, "]");
		if (x->scope != AS_GLOBAL)
			emit(t->b, " %s", kscope_name(x->scope));
		if (strcmp(x->layout_desc, "row-major") != 0)
			emit(t->b, " @ %s", x->layout_desc);
	}
	if (n)
		emit(t->b, "\n");
}

static void
done(Tr *t)
{
	int i;

	for (i = 0; i < t->nph; i++)
		free(t->ph[i]);
	free(t->ph);
	pmap_free(&t->mask);
	pmap_free(&t->vis[0]);
	pmap_free(&t->vis[1]);
	pmap_free(&t->memo);
	uctx_free(t->x);
}

int
tile_ir_print(Buf *b, const Kernel *k, Err *e)
{
	Tr t;
	int i;

	memset(&t, 0, sizeof t);
	t.b = b;
	t.k = k;
	if (!(t.x = uctx_new()))
		return err_set(e, "tile_ir: out of memory");
	buffers(&t, KB_INPUT, "inputs");
	buffers(&t, KB_OUTPUT, "outputs");
	buffers(&t, KB_TEMP, "buffers");
	for (i = 0; i < k->nstage && !t.oom; i++) {
		emit(b, "# %s\n", k->stage[i].name);
		stmt(&t, k->stage[i].body, 0, 0);
	}
	done(&t);
	if (t.oom || b->oom)
		return err_set(e, "tile_ir: out of memory");
	return 0;
}

int
tile_ir_inner(const Kernel *k, int st, const UOp *store, const UOp **out, int max, Err *e)
{
	UOp *path[256];
	Chain ch;
	Plan pl;
	Tr t;
	int np = sched_path(k, st, store, path, 256), i, n = 0, p;

	if (np == 0 || path[np - 1] != store || store->op != OP_STORE)
		return err_set(e, "tile_ir: the statement is not a store of stage %d", st);
	/* the loop that heads the partition is the first one from the top that heads a nest */
	for (i = 0; i < np - 1 && !(path[i]->op == OP_END && heads(path[i], &ch)); i++)
		;
	if (i == np - 1)
		return 0;
	memset(&t, 0, sizeof t);
	t.k = k;
	if (!(t.x = uctx_new()))
		return err_set(e, "tile_ir: out of memory");
	p = partition(&t, &ch, &pl);
	for (i = p; i < ch.n; i++, n++)
		if (n < max)
			out[n] = ch.range[i];
	done(&t);
	return t.oom ? err_set(e, "tile_ir: out of memory") : n;
}

int
tile_ir_stmt(const Kernel *k, int st, const UOp *store, TileStmt *out, Err *e)
{
	UOp *path[256];
	Chain ch;
	Plan pl;
	Tr t;
	int np = sched_path(k, st, store, path, 256), i, p;

	memset(out, 0, sizeof *out);
	if (np == 0 || path[np - 1] != store || store->op != OP_STORE)
		return err_set(e, "tile_ir: the statement is not a store of stage %d", st);
	for (i = 0; i < np - 1 && !(path[i]->op == OP_END && heads(path[i], &ch)); i++)
		;
	if (i == np - 1)
		return 0;
	memset(&t, 0, sizeof t);
	t.k = k;
	if (!(t.x = uctx_new()))
		return err_set(e, "tile_ir: out of memory");
	p = partition(&t, &ch, &pl);
	if (p < ch.n && !t.oom) {
		/* the value's frame: stored dimensions, then reduced loops (plan's dim) */
		for (i = 0; i < pl.nd && i < TILE_MAXLOOPS; i++)
			out->loop[i] = ch.range[pl.dim[i]];
		out->n = i;
		out->nstored = pl.ns < i ? pl.ns : i;
		if (pl.acc) {
			out->acc = pl.acc;
			out->other = pl.other;
			out->op = (Op)store->src[1]->op;
		}
	}
	done(&t);
	return t.oom ? err_set(e, "tile_ir: out of memory") : out->n;
}

/* emit.c - the walk every dialect shares: the kernel's copy, names, stage shapes, the DAG walk, offsets, the header comment. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/limits.h"
#include "emit.h"

/* ---- bookkeeping ---- */

int
emit_oom(Emit *E)
{
	return err_set(E->e, "%s: out of memory", E->D->name);
}

/* A copy of s kept until the walk ends (the maps point at these). */
char *
emit_own(Emit *E, const char *s)
{
	char *c;

	if (E->nowned == E->capowned) {
		int cap = E->capowned ? 2 * E->capowned : 64;
		char **n = realloc(E->owned, cap * sizeof *n);

		if (!n)
			return NULL;
		E->owned = n;
		E->capowned = cap;
	}
	if (!(c = malloc(strlen(s) + 1)))
		return NULL;
	strcpy(c, s);
	E->owned[E->nowned++] = c;
	return c;
}

/* the dialect's words, the emitter's prefix and the implementation's */
static int
reserved(const Emit *E, const char *name)
{
	int i;

	if (strncmp(name, "tessel_", 7) == 0 || strncmp(name, "__", 2) == 0
	|| (name[0] == '_' && isupper((unsigned char)name[1])))
		return 1;
	for (i = 0; E->D->reserved[i]; i++)
		if (strcmp(E->D->reserved[i], name) == 0)
			return 1;
	return 0;
}

int
emit_taken(const Emit *E, const char *name)
{
	int i;

	if (reserved(E, name))
		return 1;
	for (i = 0; i < E->ntaken; i++)
		if (strcmp(E->taken[i], name) == 0)
			return 1;
	return 0;
}

static int
take(Emit *E, const char *name)
{
	char *c;

	if (E->ntaken == E->captaken) {
		int cap = E->captaken ? 2 * E->captaken : 64;
		char **n = realloc(E->taken, cap * sizeof *n);

		if (!n)
			return -1;
		E->taken = n;
		E->captaken = cap;
	}
	if (!(c = emit_own(E, name)))
		return -1;
	E->taken[E->ntaken++] = c;
	return 0;
}

const char *
emit_fresh(Emit *E, const char *base)
{
	char n[K_NAME + 16];
	int i;

	snprintf(n, sizeof n, "%s", base);
	for (i = 1; emit_taken(E, n); i++)
		snprintf(n, sizeof n, "%s_%d", base, i);
	if (take(E, n) < 0)
		return NULL;
	return E->taken[E->ntaken - 1];
}

void
emit_indent(Buf *b, int ind)
{
	emit(b, "%*s", 2 * ind, "");
}

int64_t
emit_numel(const KBuf *b)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < b->ndim; i++)
		n *= b->shape[i];
	return n;
}

/* ---- walking the DAG without recursion ---- */

/* The i-th source of u as the walk sees it: with E, an INDEX stands for its offset. */
const UOp *
emit_child(Emit *E, const UOp *u, int i)
{
	const UOp *c = u->src[i];

	return E && c->op == OP_INDEX && (u->op == OP_LOAD || u->op == OP_STORE) ? emit_index_offset(E, c) : c;
}

/* Every node under the roots once, sources first (post-order); fn may stop
** the walk with -1 (-2: out of memory). With E, loads and stores reach the
** offsets of their INDEX nodes instead of the INDEX nodes. */
int
emit_walk(Emit *E, const UOp *const *roots, int nroots, int (*fn)(void *, const UOp *), void *aux)
{
	PMap seen = { 0 };
	const UOp **st = NULL;
	int *nx = NULL;
	size_t sp = 0, cap = 0;
	int r, r2, rc = 0;

	for (r = 0; r < nroots && rc == 0; r++) {
		if (!roots[r] || pmap_get(&seen, roots[r]))
			continue;
		if (sp == cap) {
			cap = cap ? 2 * cap : 256;
			if (!(st = realloc(st, cap * sizeof *st)) || !(nx = realloc(nx, cap * sizeof *nx))) {
				rc = -2;
				break;
			}
		}
		st[sp] = roots[r];
		nx[sp++] = 0;
		if (pmap_put(&seen, roots[r], (void *)1) < 0) {
			rc = -2;
			break;
		}
		while (sp && rc == 0) {
			const UOp *u = st[sp - 1];

			if (nx[sp - 1] < u->nsrc) {
				const UOp *c = emit_child(E, u, nx[sp - 1]++);

				if (!c) {
					rc = -1;
					break;
				}
				if (pmap_get(&seen, c))
					continue;
				if (pmap_put(&seen, c, (void *)1) < 0) {
					rc = -2;
					break;
				}
				if (sp == cap) {
					const UOp **ns;
					int *nn;

					cap *= 2;
					ns = realloc(st, cap * sizeof *st);
					if (ns)
						st = ns;
					nn = realloc(nx, cap * sizeof *nx);
					if (nn)
						nx = nn;
					if (!ns || !nn) {
						rc = -2;
						break;
					}
				}
				st[sp] = c;
				nx[sp++] = 0;
				continue;
			}
			sp--;
			if ((r2 = fn(aux, u)) < 0)
				rc = r2;
		}
	}
	free(st);
	free(nx);
	pmap_free(&seen);
	return rc;
}

/* Whether u mentions var (memo: node -> 1 no, 2 yes). */
int
emit_mentions(PMap *memo, const UOp *u, const UOp *var, int depth)
{
	void *m;
	int i, r = 0;

	if (u == var)
		return 1;
	if ((m = pmap_get(memo, u)))
		return m == (void *)2;
	if (depth > E_MAXDEPTH)
		return 1;   /* too deep to tell: as if it did */
	for (i = 0; i < u->nsrc && !r; i++)
		r = emit_mentions(memo, u->src[i], var, depth + 1);
	if (pmap_put(memo, u, (void *)(uintptr_t)(r ? 2 : 1)) < 0)
		return 1;
	return r;
}

/* ---- pure index arithmetic: printed by uop_print ---- */

int
emit_index_op(int op)
{
	switch (op) {
	case OP_CONST: case OP_VAR: case OP_NEG: case OP_ADD: case OP_SUB: case OP_MUL: case OP_IDIV:
	case OP_MOD: case OP_MIN: case OP_MAX: case OP_CMPLT: case OP_CMPNE: case OP_CMPEQ: case OP_WHERE:
	case OP_AND: case OP_OR: case OP_XOR: case OP_SHL: case OP_SHR:
		return 1;
	default:
		return 0;
	}
}

static int
pure_fn(void *aux, const UOp *u)
{
	Emit *E = aux;
	/* bool arithmetic wraps (-true is true): only truth values (constants, comparisons, logic) */
	int p = emit_index_op(u->op) && (u->dtype == DT_INDEX || (u->dtype == DT_BOOL && (u->op == OP_CONST
	        || (uop_info[u->op].flags & U_CMP) || u->op == OP_AND || u->op == OP_OR || u->op == OP_XOR
	        || u->op == OP_WHERE))), i;

	for (i = 0; i < u->nsrc && p; i++)
		p = pmap_get(&E->pure, u->src[i]) == (void *)1;
	return pmap_put(&E->pure, u, (void *)(uintptr_t)(p ? 1 : 2));
}

/* Index arithmetic on index and bool values only, no memory: uop_print prints it. */
int
emit_pure(Emit *E, const UOp *u)
{
	void *v = pmap_get(&E->pure, u);

	if (!v) {
		if (emit_walk(NULL, &u, 1, pure_fn, E) < 0)
			return 0;
		v = pmap_get(&E->pure, u);
	}
	return v == (void *)1;
}

/* ---- offsets ---- */

/* the row-major offset of (v[0], ..., v[n-1]), as kernel_add_buffer builds it */
static UOp *
row_major(UCtx *c, UOp *const *v, const int64_t *shape, int n)
{
	UOp *o = uop_int(c, 0);
	int i;

	for (i = 0; i < n && o; i++)
		o = uop_add(c, uop_mul(c, o, uop_int(c, shape[i])), v[i]);
	return o;
}

int
emit_row_major(Emit *E, int b)
{
	KBuf *kb = &E->k->buf[b];

	return kb->size == emit_numel(kb) && kb->layout == row_major(E->k->c, kb->lvar, kb->shape, kb->ndim);
}

UOp *
emit_offset(Emit *E, int b, UOp *const *idx)
{
	UOp *o = kernel_offset(E->k, b, idx), *s;
	Err ie;

	if (o && emit_pure(E, o) && uop_simplify(E->k->c, o, &s, &ie) == 0 && s)
		o = s;
	return o;
}

UOp *
emit_index_offset(Emit *E, const UOp *ix)
{
	UOp *o = pmap_get(&E->off, ix);

	if (o)
		return o;
	if (ix->nsrc < 1 || ix->src[0]->op != OP_DEFINE || ix->src[0]->arg[0] < 0
	|| ix->src[0]->arg[0] >= E->k->nbuf || ix->nsrc - 1 != E->k->buf[ix->src[0]->arg[0]].ndim) {
		err_set(E->e, "%s: an access to something that is not a buffer of this kernel", E->D->name);
		return NULL;
	}
	if (!(o = emit_offset(E, (int)ix->src[0]->arg[0], (UOp *const *)ix->src + 1))
	|| pmap_put(&E->off, ix, o) < 0) {
		emit_oom(E);
		return NULL;
	}
	return o;
}

/* ---- stages ---- */

/* The loops from the stage's body down to s, "in loops i, j" (or "at the top of the stage"). */
typedef struct Path {
	const UOp *target;
	const UOp *loop[64];
	int n, found;
} Path;

static void
find(Path *p, const UOp *s, const UOp **stack, int n, int depth)
{
	int i;

	if (p->found || depth > 200)
		return;
	if (s == p->target) {
		p->found = 1;
		p->n = n < 64 ? n : 64;
		memcpy(p->loop, stack, p->n * sizeof *stack);
		return;
	}
	if (s->op != OP_END && s->op != OP_IF && s->op != OP_STORE)
		return;
	if (s->op == OP_END && n < 64)
		stack[n++] = s->src[0];
	for (i = 1; i < s->nsrc; i++)
		find(p, s->src[i], stack, n, depth + 1);
	/* a shuffle is a value: look into stores */
	if (s->op == OP_STORE && !p->found) {
		for (i = 0; i < s->nsrc; i++)
			if (s->src[i] == p->target)
				find(p, s->src[i], stack, n, depth + 1);
	}
}

void
emit_where(const EStage *S, const UOp *s, char *out, size_t n)
{
	Path p;
	const UOp *stack[64];
	size_t at;
	int i;

	memset(&p, 0, sizeof p);
	p.target = s;
	find(&p, S->body, stack, 0, 0);
	if (!p.found || p.n == 0) {
		snprintf(out, n, "%s", p.found ? "at the top of the stage" : "in the stage");
		return;
	}
	at = snprintf(out, n, "in loop%s ", p.n > 1 ? "s" : "");
	for (i = 0; i < p.n && at < n; i++)
		at += snprintf(out + at, n - at, "%s%s", i ? ", " : "", krange_var(p.loop[i])->name);
}

typedef struct Scan {
	Emit *E;
	EStage *S;
} Scan;

static int
scan_fn(void *aux, const UOp *u)
{
	Scan *c = aux;
	EStage *S = c->S;
	int b;

	switch (u->op) {
	case OP_LOAD:
	case OP_STORE:
		if (u->nsrc > 0 && u->src[0]->op == OP_INDEX && u->src[0]->nsrc > 0 && u->src[0]->src[0]->op == OP_DEFINE) {
			b = (int)u->src[0]->src[0]->arg[0];
			if (b >= 0 && b < c->E->k->nbuf)
				S->use[b] |= u->op == OP_STORE ? 2 : 1;
		}
		break;
	case OP_MMA:
		for (b = 0; b < u->nsrc; b++)
			if (u->src[b]->op == OP_DEFINE && u->src[b]->arg[0] >= 0 && u->src[b]->arg[0] < c->E->k->nbuf)
				S->use[u->src[b]->arg[0]] |= b == 0 ? 2 : 1;
		/* fall through */
	case OP_LDMATRIX:
		if (u->op == OP_LDMATRIX && u->nsrc == 2) {
			if (u->src[0]->op == OP_DEFINE && u->src[0]->arg[0] >= 0 && u->src[0]->arg[0] < c->E->k->nbuf)
				S->use[u->src[0]->arg[0]] |= 2;
			if (u->src[1]->op == OP_INDEX && (b = (int)u->src[1]->src[0]->arg[0]) >= 0 && b < c->E->k->nbuf)
				S->use[b] |= 1;
		}
		/* fall through */
	case OP_BARRIER:
	case OP_SHUFFLE:
		if (!S->sync)
			S->sync = u;
		break;
	case OP_WGMMA:
		if (u->nsrc == 3) {
			if (u->src[0]->op == OP_DEFINE && u->src[0]->arg[0] >= 0 && u->src[0]->arg[0] < c->E->k->nbuf)
				S->use[u->src[0]->arg[0]] |= 3;
			for (b = 1; b < 3; b++)
				if (u->src[b]->op == OP_INDEX && u->src[b]->src[0]->op == OP_DEFINE
				&& u->src[b]->src[0]->arg[0] >= 0 && u->src[b]->src[0]->arg[0] < c->E->k->nbuf)
					S->use[u->src[b]->src[0]->arg[0]] |= 1;
		}
		break;
	case OP_TMA_LOAD:
	case OP_MBAR_INIT:
	case OP_MBAR_ARRIVE:
	case OP_MBAR_WAIT:
		/* a TMA writes its destination, reads its source; an mbarrier statement writes its barrier */
		for (b = 0; b < 3 && b < u->nsrc; b++)
			if (u->src[b]->op == OP_INDEX && u->src[b]->src[0]->op == OP_DEFINE
			&& u->src[b]->src[0]->arg[0] >= 0 && u->src[b]->src[0]->arg[0] < c->E->k->nbuf)
				S->use[u->src[b]->src[0]->arg[0]] |= b == 1 && u->op == OP_TMA_LOAD ? 1 : 2;
		break;
	case OP_ATOMIC:
		/* the element is read and written, the old value's register written */
		for (b = 0; b < u->nsrc; b += 2)
			if (u->src[b]->op == OP_INDEX && u->src[b]->src[0]->op == OP_DEFINE
			&& u->src[b]->src[0]->arg[0] >= 0 && u->src[b]->src[0]->arg[0] < c->E->k->nbuf)
				S->use[u->src[b]->src[0]->arg[0]] |= b == 0 ? 3 : 2;
		break;
	case OP_CP_ASYNC:
		for (b = 0; b < 2 && u->nsrc == 2; b++)
			if (u->src[b]->op == OP_INDEX && u->src[b]->src[0]->op == OP_DEFINE
			&& u->src[b]->src[0]->arg[0] >= 0 && u->src[b]->src[0]->arg[0] < c->E->k->nbuf)
				S->use[u->src[b]->src[0]->arg[0]] |= b == 0 ? 2 : 1;
		break;
	case OP_RANGE: {
		HwAxis hw = krange_hw(u);
		int64_t ext = krange_extent(u), *d = NULL, v = ext;

		if (hw == HW_NONE || hw >= HW_COUNT)
			break;
		S->nbound++;
		S->hwused |= 1u << hw;
		switch (hw) {
		case HW_BLOCK_X: case HW_BLOCK_Y: case HW_BLOCK_Z: d = &S->grid[hw - HW_BLOCK_X]; break;
		case HW_THREAD_X: case HW_THREAD_Y: case HW_THREAD_Z: d = &S->blk[hw - HW_THREAD_X]; break;
		case HW_WARP: d = &S->blk[0]; v = ext > INT64_MAX / 32 ? INT64_MAX : ext * 32; break;
		case HW_LANE: d = &S->blk[0]; break;
		default: break;
		}
		if (d && v > *d)
			*d = v;
		break;
	}
	default:
		break;
	}
	return 0;
}

/*
** The bound loops form one perfect nest on top of the stage when each of
** them holds only the next, and each hardware axis is bound once (warp only
** with lane): then every thread of every block runs the innermost body once,
** for the nest's coordinates, and a dialect without threads may print the
** nest as loops. Anything else (a statement beside a bound loop, an axis
** bound twice, a loop shorter than its block) runs the whole stage per
** thread, with bound loops as guards.
*/
/* bound loops in the statement tree (a node shared by two places counts twice) */
static int
count_bound(const UOp *s, int depth)
{
	int i, n = 0;

	if (depth > E_MAXDEPTH || (s->op != OP_END && s->op != OP_IF))
		return 0;
	if (s->op == OP_END && s->nsrc >= 1 && krange_hw(s->src[0]) != HW_NONE)
		n++;
	for (i = 1; i < s->nsrc; i++)
		n += count_bound(s->src[i], depth + 1);
	return n;
}

static void
nest(EStage *S)
{
	const UOp *s = S->body, *last = NULL, *lastblock = NULL;
	int n = 0, seen[HW_COUNT] = { 0 };

	while (s->op == OP_END && s->nsrc >= 1 && krange_hw(s->src[0]) != HW_NONE) {
		HwAxis hw = krange_hw(s->src[0]);

		if (seen[hw]++)
			return;
		n++;
		last = s;
		if (hwaxis_is_block(hw))
			lastblock = s;
		if (s->nsrc != 2)
			break;
		s = s->src[1];
	}
	if (n != count_bound(S->body, 0) || (seen[HW_WARP] && !seen[HW_LANE]))
		return;
	S->nest = 1;
	S->inner = last;
	S->blockin = lastblock;
}

static int
stage(Emit *E, int st)
{
	EStage S;
	Scan c;
	const UOp *root;
	int i;

	memset(&S, 0, sizeof S);
	S.st = st;
	S.body = E->k->stage[st].body;
	for (i = 0; i < 3; i++)
		S.grid[i] = S.blk[i] = 1;
	if (!S.body)
		return err_set(E->e, "%s: stage %s has no body", E->D->name, E->k->stage[st].name);
	S.use = E->use + (size_t)st * E->k->nbuf;
	c.E = E;
	c.S = &S;
	root = S.body;
	if (emit_walk(NULL, &root, 1, scan_fn, &c) < 0)
		return emit_oom(E);
	nest(&S);
	E->ntemp = 0;
	return E->D->stage(E, &S);
}

/* ---- names ---- */

typedef struct Vars {
	Emit *E;
	const UOp **v;
	int n, cap;
} Vars;

static int
vars_fn(void *aux, const UOp *u)
{
	Vars *w = aux;

	if (u->op != OP_RANGE || u->nsrc != 1 || u->src[0]->op != OP_VAR)
		return 0;
	if (w->n == w->cap) {
		int cap = w->cap ? 2 * w->cap : 32;
		const UOp **n = realloc(w->v, cap * sizeof *n);

		if (!n)
			return -1;
		w->v = n;
		w->cap = cap;
	}
	w->v[w->n++] = u->src[0];
	return 0;
}

/*
** Loop variables keep their names; one the dialect reserves is renamed in
** the copy (name_, ...). Buffers keep theirs unless a loop variable or a
** reserved word has it (name_buf). Stage functions keep the stage names.
*/
/*
** A name the source may declare in place of a reserved one: k_ before a name
** in the emitter's own namespace (tessel_*, __*, _X*), which no suffix leaves;
** the suffix after a dialect's keyword (for_ for a variable named for).
*/
static void
unreserve(const char *name, const char *suffix, char *out, size_t n)
{
	if (strncmp(name, "tessel_", 7) == 0 || name[0] == '_')
		snprintf(out, n, "k_%s", name);
	else
		snprintf(out, n, "%s%s", name, suffix);
}

static int
names(Emit *E)
{
	Kernel *k = E->k;
	Vars w = { E, NULL, 0, 0 };
	const UOp **roots;
	UOp **from = NULL, **to = NULL;
	int i, j, nren = 0, rc = -1;
	char tmp[K_NAME + 16];

	if (!(roots = malloc((k->nstage ? k->nstage : 1) * sizeof *roots)))
		return emit_oom(E);
	for (i = 0; i < k->nstage; i++)
		roots[i] = k->stage[i].body;
	if (emit_walk(NULL, roots, k->nstage, vars_fn, &w) < 0)
		goto out;
	if (!(from = malloc((w.n ? w.n : 1) * sizeof *from)) || !(to = malloc((w.n ? w.n : 1) * sizeof *to)))
		goto out;
	for (i = 0; i < w.n; i++)
		if (!reserved(E, w.v[i]->name) && !emit_taken(E, w.v[i]->name) && take(E, w.v[i]->name) < 0)
			goto out;
	for (i = 0; i < w.n; i++) {
		const char *n;

		if (!reserved(E, w.v[i]->name))
			continue;
		for (j = 0; j < nren && from[j] != w.v[i]; j++)
			;
		if (j < nren)
			continue;
		/* a reserved word: a fresh variable of the same range */
		unreserve(w.v[i]->name, "_", tmp, sizeof tmp);
		if (!(n = emit_fresh(E, tmp)))
			goto out;
		from[nren] = (UOp *)w.v[i];
		if (!(to[nren] = uop_var(k->c, n, w.v[i]->arg[0], w.v[i]->arg[1])))
			goto out;
		nren++;
	}
	if (nren)
		for (i = 0; i < k->nstage; i++)
			if (!(k->stage[i].body = kernel_substitute(k->c, k->stage[i].body, from, to, nren)))
				goto out;
	for (i = 0; i < k->nbuf; i++) {
		const char *n;

		snprintf(tmp, sizeof tmp, "%s", k->buf[i].name);
		if (reserved(E, tmp))
			unreserve(k->buf[i].name, "_buf", tmp, sizeof tmp);
		else if (emit_taken(E, tmp))
			snprintf(tmp, sizeof tmp, "%s_buf", k->buf[i].name);
		if (!(n = emit_fresh(E, tmp)))
			goto out;
		snprintf(E->bname[i], sizeof E->bname[i], "%s", n);
	}
	for (i = 0; i < k->nstage; i++) {
		const char *s = k->stage[i].name;
		size_t a = 0;

		if (isdigit((unsigned char)s[0]))
			tmp[a++] = '_';
		for (; *s && a + 1 < sizeof tmp && a < K_NAME; s++)
			tmp[a++] = isalnum((unsigned char)*s) ? *s : '_';
		tmp[a] = 0;
		if (!a)
			snprintf(tmp, sizeof tmp, "stage");
		if (reserved(E, tmp)) {
			char base[K_NAME + 16];

			memcpy(base, tmp, sizeof base);
			unreserve(base, "_stage", tmp, sizeof tmp);
		}
		/* a stage function may share a buffer's or a variable's name (the inner one hides it) */
		{
			char base[K_NAME + 16];

			memcpy(base, tmp, sizeof base);
			for (j = 1;; j++) {
				int clash = reserved(E, tmp), d;

				for (d = 0; d < i && !clash; d++)
					clash = strcmp(E->sname[d], tmp) == 0;
				if (!clash)
					break;
				snprintf(tmp, sizeof tmp, "%.*s_%d", K_NAME, base, j);
			}
		}
		snprintf(E->sname[i], sizeof E->sname[i], "%.*s", (int)sizeof E->sname[i] - 1, tmp);
	}
	rc = 0;
out:
	if (rc < 0 && !E->e->msg[0])
		emit_oom(E);
	free(roots);
	free(w.v);
	free(from);
	free(to);
	return rc;
}

int
emit_kernel(Buf *b, const Kernel *k, const EmitDialect *D, EmitInfo *info, Err *e)
{
	Emit E;
	Buf body;
	size_t b0 = b->len;   /* what the caller's buffer held before */
	char what[64];
	int i, rc = -1;

	memset(&E, 0, sizeof E);
	E.D = D;
	E.k0 = k;
	E.aux = info ? info->aux : NULL;
	E.fast = info ? info->fast : 0;
	E.e = e;
	e->msg[0] = 0;
	buf_init(&body);
	E.out = &body;
	if (!k)
		return err_set(e, "%s: no kernel", D->name);
	if (!(E.k = kernel_clone(k, e)))
		return -1;
	if (!(E.bname = calloc(k->nbuf ? k->nbuf : 1, sizeof *E.bname))
	|| !(E.sname = calloc(k->nstage ? k->nstage : 1, sizeof *E.sname))
	|| !(E.use = calloc((size_t)(k->nbuf ? k->nbuf : 1) * (k->nstage ? k->nstage : 1), 1))) {
		emit_oom(&E);
		goto out;
	}
	if (names(&E) < 0 || (D->check && D->check(&E) < 0))
		goto out;
	for (i = 0; i < E.k->nstage; i++)
		if (stage(&E, i) < 0)
			goto out;
	if (D->head(&E, b) < 0)
		goto out;
	emitn(b, body.s ? body.s : "", body.len);
	if (D->tail(&E, b) < 0)
		goto out;
	if (b->oom || body.oom) {
		emit_oom(&E);
		goto out;
	}
	/* one check of the whole source for every dialect (C, CUDA, OpenCL, Triton) */
	snprintf(what, sizeof what, "the %s source", D->name);
	if (limits_check(LIMIT_CODE_BYTES, (int64_t)(b->len - b0), what, e) < 0)
		goto out;
	if (info) {
		info->omp = E.uses_omp;
		info->simd = E.uses_simd;
		info->place = E.has_place;
		info->take = E.has_take;
	}
	rc = 0;
out:
	buf_free(&body);
	pmap_free(&E.pure);
	pmap_free(&E.off);
	pmap_free(&E.hoist);
	pmap_free(&E.vec);
	for (i = 0; i < E.nowned; i++)
		free(E.owned[i]);
	free(E.owned);
	free(E.taken);
	free(E.bname);
	free(E.sname);
	free(E.use);
	kernel_free(E.k);
	return rc;
}

/* ---- the header comment, shared by the C family ---- */

void
emit_comment_text(Buf *b, const char *s)
{
	const char *q;

	while ((q = strstr(s, "*/"))) {
		emitn(b, s, (size_t)(q - s));
		emit(b, "* /");
		s = q + 2;
	}
	emit(b, "%s", s);
}

static void
buffer_shape(Buf *b, const KBuf *x)
{
	int i;

	emit(b, "%s: %s[", x->name, dtype_name(x->dtype));
	for (i = 0; i < x->ndim; i++)
		emit(b, "%s%lld", i ? ", " : "", (long long)x->shape[i]);
	emit(b, "]");
	if (x->scope != AS_GLOBAL)
		emit(b, " %s", kscope_name(x->scope));
	if (strcmp(x->layout_desc, "row-major") != 0) {
		emit(b, " @ ");
		emit_comment_text(b, x->layout_desc);
	}
}

void
emit_header_line(Buf *b, const Kernel *k, KRole role, const char *label)
{
	int i, n = 0;
	size_t col = 0;

	for (i = 0; i < k->nbuf; i++) {
		Buf t;

		if (k->buf[i].role != role)
			continue;
		buf_init(&t);
		buffer_shape(&t, &k->buf[i]);
		if (!n)
			col = b->len, emit(b, "**   %-9s", label);
		else if (b->len - col + t.len > 96)
			col = b->len, emit(b, ",\n**   %-9s", "");
		else
			emit(b, ", ");
		emit(b, "%s", t.s ? t.s : "");
		buf_free(&t);
		n++;
	}
	if (n)
		emit(b, "\n");
}

int
emit_each_node(Emit *E, int st, int (*fn)(Emit *E, int st, const UOp *u, void *aux), void *aux)
{
	PMap seen = { 0 };
	const UOp **stack;
	size_t sp = 0, cap = 256;
	int rc = 0, j;

	/* depth-first, with an explicit stack: a stage body may nest deeper than the C stack */
	if (!(stack = malloc(cap * sizeof *stack)))
		return emit_oom(E);
	stack[sp++] = E->k->stage[st].body;
	while (sp && rc == 0) {
		const UOp *u = stack[--sp];

		if (pmap_get(&seen, u))
			continue;
		if (pmap_put(&seen, u, (void *)1) < 0) {
			rc = emit_oom(E);
			break;
		}
		if ((rc = fn(E, st, u, aux)) < 0)
			break;
		for (j = 0; j < u->nsrc; j++) {
			if (sp == cap) {
				const UOp **n = realloc(stack, 2 * cap * sizeof *n);

				if (!n) {
					rc = emit_oom(E);
					break;
				}
				stack = n;
				cap *= 2;
			}
			stack[sp++] = u->src[j];
		}
	}
	free(stack);
	pmap_free(&seen);
	return rc < 0 ? -1 : 0;
}

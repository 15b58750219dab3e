/* rewrite.c - the rewrite engine: patterns to replacements, bottom-up to a fixpoint, memoized. */
#include <stdlib.h>
#include <string.h>

#include "uop.h"

static int
preds(const UPat *p, const UOp *u)
{
	if ((p->pred & UP_CONST) && u->op != OP_CONST)
		return 0;
	if ((p->pred & UP_POS) && u->vmin <= 0)
		return 0;
	if ((p->pred & UP_NONNEG) && u->vmin < 0)
		return 0;
	if ((p->pred & UP_NONZERO) && u->vmin <= 0 && u->vmax >= 0)
		return 0;
	return 1;
}

static int
match(const UPat *p, UOp *u, UOp **cap, int swap)
{
	int i, k;

	if (p->op != UPAT_ANY && p->op != u->op)
		return 0;
	if (!preds(p, u))
		return 0;
	if (p->nsrc) {
		if (p->nsrc != u->nsrc)
			return 0;
		for (i = 0; i < p->nsrc; i++) {
			k = swap && u->nsrc == 2 ? 1 - i : i;
			if (p->src[i] && !upat_match(p->src[i], u->src[k], cap))
				return 0;
		}
	}
	if (p->capture >= 0 && p->capture < UPAT_MAXCAP)
		cap[p->capture] = u;
	return 1;
}

int
upat_match(const UPat *p, UOp *u, UOp **cap)
{
	UOp *save[UPAT_MAXCAP];

	memcpy(save, cap, sizeof save);
	if (match(p, u, cap, 0))
		return 1;
	memcpy(cap, save, sizeof save);
	if (p->nsrc == 2 && u->nsrc == 2 && (uop_info[u->op].flags & U_COMM)
	&& (p->op == UPAT_ANY || p->op == u->op) && match(p, u, cap, 1))
		return 1;
	memcpy(cap, save, sizeof save);
	return 0;
}

/*
** The memo maps every node already rewritten to its normal form. It is keyed
** by node id, which is dense in the context, so it is a plain array that
** grows as rules create nodes.
*/
typedef struct RW {
	UCtx *c;
	const URule *rules;
	int nrules;
	void *aux;
	UOp **memo;
	size_t nmemo;
	long steps, max_steps;
	int depth;
	Err *e;
	int failed;
} RW;

static UOp **
slot(RW *w, const UOp *u)
{
	if (u->id >= w->nmemo) {
		size_t n = w->nmemo ? w->nmemo : 256;
		UOp **m;
		while (n <= u->id)
			n *= 2;
		if (!(m = realloc(w->memo, n * sizeof *m)))
			return NULL;
		memset(m + w->nmemo, 0, (n - w->nmemo) * sizeof *m);
		w->memo = m;
		w->nmemo = n;
	}
	return &w->memo[u->id];
}

static UOp *
rw(RW *w, UOp *u)
{
	UOp *s[3], **ss = s, *v, *r, *cap[UPAT_MAXCAP], **sl;
	int i, k, changed = 0;

	if (w->failed)
		return NULL;
	if (!(sl = slot(w, u)))
		goto oom;
	if (*sl)
		return *sl;
	if (++w->depth > 20000) {
		err_set(w->e, "rewrite: the expression is nested too deep (more than 20000 levels)");
		w->failed = 1;
		return NULL;
	}
	if (u->nsrc > 3 && !(ss = malloc(u->nsrc * sizeof *ss)))
		goto oom;
	for (i = 0; i < u->nsrc; i++) {
		if (!(ss[i] = rw(w, u->src[i])))
			break;
		changed |= ss[i] != u->src[i];
	}
	v = i < u->nsrc ? NULL : changed ? uop_rebuild(w->c, u, ss) : u;
	if (ss != s)
		free(ss);
	if (!v)
		goto oom;
	if (v != u) {
		/* the rebuilt node may itself be known or need its own pass */
		v = rw(w, v);
		goto done;
	}
	for (k = 0; k < w->nrules; k++) {
		memset(cap, 0, sizeof cap);
		if (!upat_match(w->rules[k].pat, v, cap))
			continue;
		r = w->rules[k].fn(w->c, v, cap, w->aux);
		if (!r || r == v)
			continue;
		if (++w->steps > w->max_steps) {
			err_set(w->e, "rewrite: no fixpoint after %ld rule applications (last rule: %s)",
			        w->max_steps, w->rules[k].name);
			w->failed = 1;
			return NULL;
		}
		v = rw(w, r);
		goto done;
	}
done:
	w->depth--;
	if (!v || w->failed)
		return NULL;
	if (!(sl = slot(w, u)))
		goto oom;
	*sl = v;
	if ((sl = slot(w, v)))
		*sl = v;
	return v;
oom:
	if (!w->failed)
		err_set(w->e, "rewrite: out of memory");
	w->failed = 1;
	return NULL;
}

int
uop_rewrite(UCtx *c, UOp *root, const URule *rules, int nrules, void *aux,
            long max_steps, UOp **out, Err *e)
{
	RW w;

	if (!root)
		return err_set(e, "rewrite: no expression");
	memset(&w, 0, sizeof w);
	w.c = c;
	w.rules = rules;
	w.nrules = nrules;
	w.aux = aux;
	w.max_steps = max_steps > 0 ? max_steps : 1000000;
	w.e = e;
	*out = rw(&w, root);
	free(w.memo);
	if (!*out) {
		if (!w.failed)
			err_set(e, "rewrite: out of memory");
		return -1;
	}
	return 0;
}

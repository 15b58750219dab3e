/* privatize.c - Neptune's reduction privatization: privatize_reduce, and fuse_and_privatize (naive fusion, then privatization). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

int
fusion_privatize(Kernel *k, int st, const char *loop, int *local, Err *e)
{
	UOp *sv[64];
	int n = sched_stores(k, st, sv, 64), i;

	for (i = 0; i < n && !fusion_accumulates(k, sv[i]); i++)
		;
	if (i == n)
		return err_set(e, "stage %s is not a reduction", k->stage[st].name);
	return sched_rfactor_in(k, st, loop, sv[i]->src[0]->nsrc - 1, "_local", local, e);
}

/* the loops enclosing stage st's reduction from `loop` down: their extents; the count */
static int
chain(const Kernel *k, int st, const char *loop, int64_t *ext, int max)
{
	UOp *sv[64], *p[256];
	int n = sched_stores(k, st, sv, 64), i, np, m = 0, on = 0;

	for (i = 0; i < n && !fusion_accumulates(k, sv[i]); i++)
		;
	if (i == n)
		return 0;
	np = sched_path(k, st, sv[i], p, 256);
	for (i = 0; i + 1 < np && m < max; i++)
		if (p[i]->op == OP_END) {
			on |= strcmp(krange_var(p[i]->src[0])->name, loop) == 0;
			if (on)
				ext[m++] = krange_extent(p[i]->src[0]);
		}
	return m;
}

int
fusion_split_like(Kernel *k, int t, int S, const char *loop, char *first, size_t nfirst, Err *e)
{
	UOp *sv[64], *p[256], *rl = NULL;
	int64_t ext[16], prod = 1;
	int n = sched_stores(k, t, sv, 64), i, np, m = chain(k, S, loop, ext, 16), nred = 0;

	if (m == 0)
		return err_set(e, "stage %s: loop %s encloses no reduction", k->stage[S].name, loop);
	for (i = 0; i < n && !fusion_accumulates(k, sv[i]); i++)
		;
	if (i == n)
		return err_set(e, "stage %s is not a reduction", k->stage[t].name);
	np = sched_path(k, t, sv[i], p, 256);
	for (i = 0; i + 1 < np; i++) {
		int d, idx = 0;

		if (p[i]->op != OP_END)
			continue;
		for (d = 1; d < sv[0]->src[0]->nsrc && !idx; d++) {
			const UOp *v[64];
			int nv = uop_vars(sv[0]->src[0]->src[d], v, 64), q;

			for (q = 0; q < nv && q < 64; q++)
				idx |= v[q] == krange_var(p[i]->src[0]);
		}
		if (!idx && !rl)
			rl = p[i];
		nred += !idx;
	}
	if (!rl)
		return err_set(e, "stage %s has no reduce loop", k->stage[t].name);
	snprintf(first, nfirst, "%s", krange_var(rl->src[0])->name);
	if (krange_extent(rl->src[0]) == ext[0])
		return 0;   /* already split alike (or one loop of the same extent) */
	for (i = 0; i < m; i++)
		prod *= ext[i];
	if (nred != 1 || krange_extent(rl->src[0]) != prod)
		return err_set(e, "stage %s: its reduction over %s (%lld iterations) does not split like "
		               "loop %s of stage %s and the loops inside it (%lld)", k->stage[t].name, first,
		               (long long)krange_extent(rl->src[0]), loop, k->stage[S].name, (long long)prod);
	{
		char base[K_NAME];
		UOp *vars[16];

		snprintf(base, sizeof base, "%s", first);
		if (sched_split_in(k, t, base, ext, m, vars, e) < 0)
			return -1;
		snprintf(first, nfirst, "%s", vars[0]->name);
	}
	return 0;
}

/* ---- privatize_reduce ---- */

int
sched_privatize_reduce(Schedule *s, const char *stage, const char *loop, int64_t parts, Err *e)
{
	Kernel *next;
	Buf line;
	Err ie;
	UOp *vars[2];
	int st, rc;
	int64_t f[2] = { parts, 0 };

	memset(&ie, 0, sizeof ie);
	if ((st = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "privatize_reduce: %s", ie.msg);
	if (parts < 1)
		return err_set(e, "privatize_reduce: %lld parts; give at least 1", (long long)parts);
	if (!(next = sched_begin(s, e)))
		return -1;
	if (sched_split_in(next, st, loop, f, 2, vars, &ie) < 0
	|| fusion_privatize(next, st, vars[0]->name, NULL, &ie) < 0) {
		kernel_free(next);
		return err_set(e, "privatize_reduce: %s", ie.msg);
	}
	buf_init(&line);
	emit(&line, "s:privatize_reduce(");
	sched_quote(&line, stage);
	emit(&line, ", ");
	sched_quote(&line, loop);
	emit(&line, ", %lld)", (long long)parts);
	rc = line.oom ? (kernel_free(next), err_set(e, "privatize_reduce: out of memory"))
	   : sched_commit(s, next, "privatize_reduce", line.s, e);
	buf_free(&line);
	return rc;
}

/* ---- fuse_and_privatize ---- */

int
fusion_fuse_privatized(Kernel *k, int *t, int *S, const char *var, Buf *ex, Err *e)
{
	UOp *l = sched_loop(k, *S, var, e);
	char first[K_NAME];

	if (!l)
		return -1;
	/* the loop's stage privatized on it, unless it is already (the loop indexes what it writes) */
	if (krange_type(l->src[0]) == AX_REDUCE || krange_type(l->src[0]) == AX_GROUP_REDUCE) {
		if (fusion_privatize(k, *S, var, NULL, e) < 0)
			return -1;
		if (ex)
			emit(ex, "  2. privatize %s on %s: a local stage %s and the global %s\n",
			     k->stage[*S + 1].name, var, k->stage[*S].name, k->stage[*S + 1].name);
		(*t)++;
	}
	if (fusion_split_like(k, *t, *S, var, first, sizeof first, e) < 0)
		return -1;
	if (fusion_privatize(k, *t, first, NULL, e) < 0)
		return -1;
	if (ex)
		emit(ex, "     privatize %s on %s: %s and %s\n", k->stage[*t + 1].name, first,
		     k->stage[*t].name, k->stage[*t + 1].name);
	return 0;
}

int
sched_fuse_and_privatize(Schedule *s, const char *stage, const char *loop, Err *e)
{
	Kernel *next;
	Buf line;
	Err ie;
	char var[K_NAME];
	int t, S, rc, b;

	memset(&ie, 0, sizeof ie);
	if ((t = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "fuse_and_privatize: %s", ie.msg);
	if (!(next = sched_begin(s, e)))
		return -1;
	if ((S = fusion_loop_stage(next, t, loop, var, sizeof var, &ie)) < 0)
		goto fail;
	/* without a repair, the target may read nothing computed from the loop's stage on */
	for (b = 0; b < next->nbuf; b++) {
		int j;

		for (j = S; j < t; j++)
			if (sched_writes(next, next->stage[j].body, b) && sched_reads(next, next->stage[t].body, b)) {
				err_set(&ie, "stage %s reads %s, which stage %s computes: fusing it under loop %s "
				        "needs a repair (split_k_update)", next->stage[t].name, next->buf[b].name,
				        next->stage[j].name, var);
				goto fail;
			}
	}
	if (fusion_fuse_privatized(next, &t, &S, var, NULL, &ie) < 0
	|| fusion_fuse(next, t, S, var, NULL, NULL, NULL, &ie) < 0)
		goto fail;
	buf_init(&line);
	emit(&line, "s:fuse_and_privatize(");
	sched_quote(&line, stage);
	emit(&line, ", ");
	sched_quote(&line, loop);
	emit(&line, ")");
	rc = line.oom ? (kernel_free(next), err_set(e, "fuse_and_privatize: out of memory"))
	   : sched_commit(s, next, "fuse_and_privatize", line.s, e);
	buf_free(&line);
	return rc;
fail:
	kernel_free(next);
	return err_set(e, "fuse_and_privatize: %s", ie.msg);
}

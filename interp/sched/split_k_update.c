/* split_k_update.c - Neptune's split-k update (Algorithm 2): local reductions fused and parallel, the global one repaired (Eq. 8). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/*
** The local of X: the buffer Y, written by stage S, that X's global stage
** combines, X[I] = X[I] f v with v reading Y[I, ...] (repaired, it reads
** the locals of X's own predecessors too: then Y is the one named
** <X>_local, as fusion_privatize names it); or -1.
*/
static int
local_of(const Kernel *k, int X, int S)
{
	UOp *sv[64], *ld[64];
	int j, n, i;

	for (j = S + 1; j < k->nstage; j++) {
		if (!sched_writes(k, k->stage[j].body, X))
			continue;
		n = sched_stores(k, j, sv, 64);
		for (i = 0; i < n; i++) {
			int op, q, nl = 0, cand = -1, ncand = 0;
			UOp *other = NULL, *stack[256];
			int sp = 0;

			if ((int)sv[i]->src[0]->src[0]->arg[0] != X || !sched_update(sv[i], &op, &other))
				continue;
			stack[sp++] = other;
			while (sp && nl < 64) {
				UOp *u = stack[--sp];

				if (u->op == OP_LOAD) {
					ld[nl++] = u;
					continue;
				}
				for (q = 0; q < u->nsrc && sp < 256; q++)
					stack[sp++] = u->src[q];
			}
			for (q = 0; q < nl; q++) {
				int b = (int)ld[q]->src[0]->src[0]->arg[0];
				size_t m = strlen(k->buf[X].name);

				if (!sched_writes(k, k->stage[S].body, b))
					continue;
				if (strncmp(k->buf[b].name, k->buf[X].name, m) == 0
				&& strcmp(k->buf[b].name + m, "_local") == 0)
					return b;
				if (b != cand) {
					cand = b;
					ncand++;
				}
			}
			if (ncand == 1)
				return cand;
		}
	}
	return -1;
}

static int
split_k(Kernel *k, int t, const char *spec, const FusionOpts *o, Buf *ex, Err *e)
{
	FRepair rp;
	Buf names;
	char var[K_NAME];
	int S, q, rc = -1, local[FMAXR], g, step2 = 0;
	UOp *l;

	memset(&rp, 0, sizeof rp);
	rp.relax_casts = o->relax_casts;
	buf_init(&rp.explain);
	buf_init(&names);
	if ((S = fusion_loop_stage(k, t, spec, var, sizeof var, e)) < 0)
		goto out;
	emit(ex, "split_k_update(%s, %s.%s): Algorithm 2\n", k->stage[t].name, k->stage[S].name, var);
	if (fusion_inline_maps(k, S, &t, &names, e) < 0)
		goto out;
	emit(ex, "  1. inline  %s\n", names.s ? names.s : "(no map stage between them)");
	if (fusion_derive(k, t, S, t, &rp, e) < 0)
		goto out;
	if (!(l = sched_loop(k, S, var, e)))
		goto out;
	/* the reduce predecessors privatized under the loop: their local buffers */
	for (q = 0; q < rp.nr; q++) {
		if ((local[q] = local_of(k, rp.rbuf[q], S)) >= 0)
			continue;
		if (!sched_writes(k, k->stage[S].body, rp.rbuf[q]) || rp.nr > 1
		|| (krange_type(l->src[0]) != AX_REDUCE && krange_type(l->src[0]) != AX_GROUP_REDUCE)) {
			err_set(e, "%s is not reduced under loop %s of stage %s, nor privatized there (split_k_update "
			        "the reductions it depends on first)", k->buf[rp.rbuf[q]].name, var, k->stage[S].name);
			goto out;
		}
		if (fusion_privatize(k, S, var, &local[q], e) < 0)
			goto out;
		emit(ex, "  %s privatize %s on %s: the local %s, the global %s\n", step2++ ? "  " : "2.",
		     k->buf[rp.rbuf[q]].name, var, k->stage[S].name, k->stage[S + 1].name);
		t++;
	}
	/* the target privatized alike; its local reads the predecessors' locals (ReplaceTensorReads) */
	{
		char first[K_NAME];
		UOp *old[FMAXR], *new[FMAXR], *body, *v;
		int tl;

		if (fusion_split_like(k, t, S, var, first, sizeof first, e) < 0 || fusion_privatize(k, t, first, &tl, e) < 0)
			goto out;
		if (!(l = sched_loop(k, t, first, e)))
			goto out;
		v = krange_var(l->src[0]);
		for (q = 0; q < rp.nr; q++) {
			UOp *idx[T_MAXDIM + 1];
			int d, nd = rp.rload[q]->src[0]->nsrc - 1;

			for (d = 0; d < nd; d++)
				idx[d] = rp.rload[q]->src[0]->src[d + 1];
			idx[nd] = v;
			old[q] = rp.rload[q];
			new[q] = fusion_safe(k, &rp, q, kernel_load(k, kernel_index(k, local[q], idx, nd + 1), NULL));
			if (!new[q]) {
				err_set(e, "out of memory");
				goto out;
			}
		}
		if (!(body = kernel_substitute(k->c, k->stage[t].body, old, new, rp.nr))) {
			err_set(e, "out of memory");
			goto out;
		}
		k->stage[t].body = body;
		emit(ex, "  %s privatize %s on %s, its local reading the predecessors' locals\n",
		     step2++ ? "  " : "2.", k->stage[t + 1].name, first);
		emit(ex, "%s", rp.explain.s ? rp.explain.s : "");
		/* the local fused under the loop: no repair, each local is final for its iteration */
		if (fusion_fuse(k, t, S, var, NULL, NULL, ex, e) < 0)
			goto out;
		emit(ex, "  5. fuse    %s under loop %s of %s\n", k->buf[tl].name, var, k->stage[S].name);
		/* Eq. 8: the global combines the locals repaired to the global predecessors */
		g = t;   /* the target's global stage took the local's place */
		{
			UOp *sv[8], *other = NULL, *prev[FMAXR], *cur[FMAXR], *H, *s, *acc;
			int n = sched_stores(k, g, sv, 8), i, op;
			const UOp *tv;

			for (i = 0; i < n && !sched_update(sv[i], &op, &other); i++)
				;
			if (i == n || other->op != OP_LOAD) {
				err_set(e, "the global stage %s lost its form", k->stage[g].name);
				goto out;
			}
			tv = other;
			for (q = 0; q < rp.nr; q++) {
				UOp *idx[T_MAXDIM + 1];
				int d, nd = rp.rload[q]->src[0]->nsrc - 1;

				for (d = 0; d < nd; d++)
					idx[d] = rp.rload[q]->src[0]->src[d + 1];
				idx[nd] = other->src[0]->src[other->src[0]->nsrc - 1];
				cur[q] = fusion_safe(k, &rp, q, rp.rload[q]);
				prev[q] = fusion_safe_prev(k, &rp, q, kernel_load(k, kernel_index(k, local[q], idx, nd + 1),
				                                                  NULL), cur[q]);
			}
			H = fusion_apply_h(k, &rp, (UOp *)tv, prev, cur);
			acc = (UOp *)sched_update(sv[i], &op, NULL);
			s = H ? kernel_store(k, sv[i]->src[0], kernel_alu(k, (Op)op, (DType)k->buf[rp.xt].dtype,
			                                                  (UOp *[]){ acc, H }, 2), NULL) : NULL;
			if (!s || sched_replace(k, g, sv[i], s, e) < 0) {
				if (!e->msg[0])
					err_set(e, "out of memory");
				goto out;
			}
			emit(ex, "     apply   ");
			kernel_print_store(ex, k, s);
			emit(ex, "   (Eq. 8)\n");
		}
	}
	rc = 0;
out:
	buf_free(&rp.explain);
	buf_free(&names);
	return rc;
}

int
sched_split_k_update(Schedule *s, const char *stage, const char *loop, Err *e)
{
	return fusion_step(s, "split_k_update", stage, loop, NULL, split_k, e);
}

int
sched_split_k_update_opts(Schedule *s, const char *stage, const char *loop, const FusionOpts *o, Err *e)
{
	return fusion_step(s, "split_k_update", stage, loop, o, split_k, e);
}

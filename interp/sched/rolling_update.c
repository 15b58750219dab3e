/* rolling_update.c - Neptune's rolling update (Algorithm 1): a reduction fused under the loop of its reduce predecessor, repaired by a derived h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

typedef struct Roll {
	FRepair *rp;
	int prev[FMAXR];     /* <X_r>_prev for each reduce predecessor */
	UOp *applied;        /* the repaired store, for the derivation */
} Roll;

/* the stage named by spec ("stage.loop", or "loop": the nearest stage before t with such a loop) */
int
fusion_loop_stage(const Kernel *k, int t, const char *spec, char *var, size_t nvar, Err *e)
{
	const char *dot = strchr(spec, '.');
	int j;

	if (dot) {
		char sn[K_NAME];
		Err ie;

		snprintf(sn, sizeof sn, "%.*s", (int)(dot - spec), spec);
		snprintf(var, nvar, "%s", dot + 1);
		if ((j = sched_stage(k, sn, &ie)) < 0)
			return err_set(e, "%s", ie.msg);
		if (j == t)
			return err_set(e, "stage %s is the target itself; the loop must be a predecessor's", sn);
		if (j > t)
			return err_set(e, "stage %s comes after stage %s; the loop must be a predecessor's",
			               sn, k->stage[t].name);
		return sched_loop(k, j, var, e) ? j : -1;
	}
	/* the nearest earlier stage where a loop of that name encloses a reduction */
	snprintf(var, nvar, "%s", spec);
	for (j = t - 1; j >= 0; j--) {
		UOp *l[256], *sv[256];
		int n = sched_loops(k, j, l, 256), ns = sched_stores(k, j, sv, 256), i, q;

		for (i = 0; i < n; i++) {
			if (strcmp(krange_var(l[i]->src[0])->name, spec) != 0)
				continue;
			for (q = 0; q < ns; q++) {
				UOp *p[256];
				int np = sched_path(k, j, sv[q], p, 256), m;

				for (m = 0; m < np; m++)
					if (p[m] == l[i] && fusion_accumulates(k, sv[q]))
						return j;
			}
		}
	}
	return err_set(e, "no stage before %s has a loop %s around a reduction (name it as "
	               "\"stage.loop\")", k->stage[t].name, spec);
}

/* the store of X in stage S that is an update (x = x op v), or the first that is not */
static UOp *
store_of(const Kernel *k, int S, int X, int upd)
{
	UOp *sv[256];
	int n = sched_stores(k, S, sv, 256), i;

	for (i = 0; i < n; i++)
		if ((int)sv[i]->src[0]->src[0]->arg[0] == X && fusion_accumulates(k, sv[i]) == upd)
			return sv[i];
	return NULL;
}

static int
repair(Kernel *k, void *aux, UOp *U, UOp **stmts, int *n, Err *e)
{
	Roll *R = aux;
	FRepair *rp = R->rp;
	UOp *ld[64], *cur[FMAXR], *prev[FMAXR], *other = NULL, *other0, *H, *s;
	const UOp *tv;
	int op, q, i, nl = 0;

	if (!(tv = sched_update(U, &op, &other)))
		return err_set(e, "the fused update lost its form");
	/* the predecessors' loads, now at the fused loop's variables */
	{
		UOp *stack[256];
		int sp = 0;

		stack[sp++] = other;
		while (sp && nl < 64) {
			UOp *u = stack[--sp];

			if (u->op == OP_LOAD) {
				ld[nl++] = u;
				continue;
			}
			for (i = 0; i < u->nsrc && sp < 256; i++)
				stack[sp++] = u->src[i];
		}
	}
	for (q = 0; q < rp->nr; q++) {
		for (i = 0; i < nl && (int)ld[i]->src[0]->src[0]->arg[0] != rp->rbuf[q]; i++)
			;
		if (i == nl)
			return err_set(e, "the fused update no longer reads %s", k->buf[rp->rbuf[q]].name);
		cur[q] = ld[i];
		prev[q] = kernel_load(k, kernel_index(k, R->prev[q], ld[i]->src[0]->src + 1, ld[i]->src[0]->nsrc - 1),
		                      NULL);
		if (!prev[q])
			return err_set(e, "out of memory");
	}
	/* masked inputs: the predecessors read safely in g and in h alike */
	other0 = other;
	{
		UOp *sc[FMAXR];
		int ns = 0;

		for (q = 0; q < rp->nr; q++) {
			UOp *c0 = cur[q];

			cur[q] = fusion_safe(k, rp, q, cur[q]);
			prev[q] = fusion_safe_prev(k, rp, q, prev[q], cur[q]);
			if (cur[q] != c0)
				sc[ns++] = c0;
		}
		if (ns) {
			UOp *sn[FMAXR];
			int m = 0;

			for (q = 0; q < rp->nr; q++)
				if (rp->safe[q])
					sn[m++] = cur[q];
			if (!(other = kernel_substitute(k->c, other, sc, sn, ns)))
				return err_set(e, "out of memory");
		}
	}
	if (!(H = fusion_apply_h(k, rp, (UOp *)tv, prev, cur)))
		return err_set(e, "out of memory");
	for (i = 0; i < *n && stmts[i] != U; i++)
		;
	if (i < *n) {
		/* Eq. 7 in one store: X_t = h(X_t, r_prev, r) f g(r, c) */
		s = kernel_store(k, U->src[0], kernel_alu(k, (Op)op, (DType)k->buf[rp->xt].dtype,
		                                          (UOp *[]){ H, other }, 2), NULL);
		stmts[i] = s;
	} else {
		/* the repair before the rest of the reduction: X_t = h(X_t, r_prev, r), then X_t = X_t f g */
		if (*n >= 63)
			return err_set(e, "too many statements");
		if (other != other0) {
			/* g reads the predecessors safely in the rest of the reduction too */
			UOp *u2 = kernel_store(k, U->src[0], kernel_alu(k, (Op)op, (DType)k->buf[rp->xt].dtype,
			                                                (UOp *[]){ (UOp *)tv, other }, 2), NULL);

			for (i = 0; i < *n; i++)
				if (!u2 || !(stmts[i] = kernel_substitute(k->c, stmts[i], &U, &u2, 1)))
					return err_set(e, "out of memory");
		}
		s = kernel_store(k, U->src[0], H, NULL);
		memmove(stmts + 1, stmts, *n * sizeof *stmts);
		stmts[0] = s;
		(*n)++;
	}
	if (!s)
		return err_set(e, "out of memory");
	R->applied = s;
	return 0;
}

static int
rolling(Kernel *k, int t, const char *spec, const FusionOpts *o, Buf *ex, Err *e)
{
	FRepair rp;
	Roll R;
	Buf names;
	char var[K_NAME], pn[2 * K_NAME];
	const char *tn;
	int S, q, j, rc = -1, fresh[FMAXR];
	UOp *l, *copies[FMAXR];
	int ncopy = 0;

	memset(&rp, 0, sizeof rp);
	rp.relax_casts = o->relax_casts;
	memset(&R, 0, sizeof R);
	buf_init(&rp.explain);
	buf_init(&names);
	if ((S = fusion_loop_stage(k, t, spec, var, sizeof var, e)) < 0)
		goto out;
	tn = k->stage[t].name;
	emit(ex, "rolling_update(%s, %s.%s): Algorithm 1\n", tn, k->stage[S].name, var);
	if (fusion_inline_maps(k, S, &t, &names, e) < 0)
		goto out;
	emit(ex, "  1. inline  %s\n", names.s ? names.s : "(no map stage between them)");
	if (fusion_derive(k, t, S, S + 1, &rp, e) < 0)
		goto out;
	/* what moves earlier must find what it reads unchanged there */
	for (j = S + 1; j < t; j++) {
		int b;

		for (b = 0; b < k->nbuf; b++)
			if (sched_writes(k, k->stage[j].body, b)
			&& (sched_reads(k, k->stage[t].body, b) || b == rp.xt)) {
				err_set(e, "stage %s, between %s and %s, writes %s, which %s reads: %s cannot move "
				        "under loop %s", k->stage[j].name, k->stage[S].name, k->stage[t].name,
				        k->buf[b].name, k->stage[t].name, k->stage[t].name, var);
				goto out;
			}
	}
	/* the rolling loop runs over the reduction: it indexes none of what the stage accumulates under it */
	{
		UOp *l0 = sched_loop(k, S, var, e), *sv[256];
		int ns = l0 ? sched_stores(k, S, sv, 256) : 0, i, red = 0;

		if (!l0)
			goto out;
		for (i = 0; i < ns; i++) {
			UOp *p[256];
			int np = sched_path(k, S, sv[i], p, 256), m, d, in = 0, idx = 0;

			for (m = 0; m < np; m++)
				in |= p[m] == l0;
			if (!in || !fusion_accumulates(k, sv[i]))
				continue;
			for (d = 1; d < sv[i]->src[0]->nsrc; d++) {
				const UOp *v[64];
				int nv = uop_vars(sv[i]->src[0]->src[d], v, 64), q;

				for (q = 0; q < nv && q < 64; q++)
					idx |= v[q] == krange_var(l0->src[0]);
			}
			red |= !idx;
		}
		if (!red) {
			err_set(e, "loop %s of stage %s indexes what the stage reduces (a map loop); rolling update "
			        "fuses under the reduction's loop", var, k->stage[S].name);
			goto out;
		}
	}
	/* a cache of each predecessor's previous value */
	R.rp = &rp;
	for (q = 0; q < rp.nr; q++) {
		const KBuf *X = &k->buf[rp.rbuf[q]];
		int64_t shape[T_MAXDIM];

		snprintf(pn, sizeof pn, "%s_prev", X->name);
		fresh[q] = 0;
		if ((R.prev[q] = kernel_find_buffer(k, pn)) >= 0)
			continue;
		memcpy(shape, X->shape, sizeof shape);
		if ((R.prev[q] = kernel_add_buffer(k, pn, X->dtype, X->scope, KB_TEMP, shape, X->ndim, e)) < 0)
			goto out;
		fresh[q] = 1;
	}
	emit(ex, "  2. fuse    %s under loop %s of %s\n", tn, var, k->stage[S].name);
	emit(ex, "%s", rp.explain.s ? rp.explain.s : "");
	if (fusion_fuse(k, t, S, var, repair, &R, ex, e) < 0)
		goto out;
	/* cache: P = X at the end of each iteration, P = X's init before the loop */
	if (!(l = sched_loop(k, S, var, e)))
		goto out;
	for (q = 0; q < rp.nr; q++) {
		UOp *u = store_of(k, S, rp.rbuf[q], 1), *init = store_of(k, S, rp.rbuf[q], 0), *ix, *pi;

		if (!fresh[q])
			continue;
		if (!u || !init) {
			err_set(e, "stage %s has no init and update of %s", k->stage[S].name, k->buf[rp.rbuf[q]].name);
			goto out;
		}
		ix = kernel_index(k, R.prev[q], u->src[0]->src + 1, u->src[0]->nsrc - 1);
		copies[ncopy++] = kernel_store(k, ix, kernel_load(k, u->src[0], NULL), NULL);
		pi = kernel_store(k, kernel_index(k, R.prev[q], init->src[0]->src + 1, init->src[0]->nsrc - 1),
		                  init->src[1], NULL);
		if (!copies[ncopy - 1] || !pi
		|| sched_replace(k, S, init, kernel_if(k, kernel_const(k, DT_BOOL, 1), (UOp *[]){ init, pi }, 2), e) < 0) {
			if (!e->msg[0])
				err_set(e, "out of memory");
			goto out;
		}
		emit(ex, "  5. cache   %s holds %s of the previous iteration of %s\n", k->buf[R.prev[q]].name,
		     k->buf[rp.rbuf[q]].name, var);
	}
	if (ncopy) {
		UOp *b[1024], *l2;
		int nb = 0, i;

		if (!(l = sched_loop(k, S, var, e)))
			goto out;
		for (i = 1; i < l->nsrc && nb < 1000; i++)
			b[nb++] = l->src[i];
		for (i = 0; i < ncopy; i++)
			b[nb++] = copies[i];
		if (!(l2 = kernel_loop(k, l->src[0], b, nb)) || sched_replace(k, S, l, l2, e) < 0) {
			if (!e->msg[0])
				err_set(e, "out of memory");
			goto out;
		}
	}
	emit(ex, "     apply   ");
	kernel_print_store(ex, k, R.applied);
	emit(ex, "   (Eq. 7)\n");
	rc = 0;
out:
	buf_free(&rp.explain);
	buf_free(&names);
	return rc;
}

int
sched_rolling_update(Schedule *s, const char *stage, const char *loop, Err *e)
{
	return fusion_step(s, "rolling_update", stage, loop, NULL, rolling, e);
}

int
sched_rolling_update_opts(Schedule *s, const char *stage, const char *loop, const FusionOpts *o, Err *e)
{
	return fusion_step(s, "rolling_update", stage, loop, o, rolling, e);
}

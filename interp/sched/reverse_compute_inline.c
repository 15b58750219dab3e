/* reverse_compute_inline.c - reverse_compute_inline: an element-wise consumer folded into its producer's stores (TVM's reverse_compute_inline). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

enum { MAXLOADS = 256 };

/* the stage before st that writes buffer b, or -1 */
static int
writer(const Kernel *k, int st, int b)
{
	int j;

	for (j = st - 1; j >= 0; j--)
		if (sched_writes(k, k->stage[j].body, b))
			return j;
	return -1;
}

/*
** The consumer must be C[J] = f, one store under a nest of loops (no
** guard, no reduction), where f loads the producer's buffer B at one index
** only, B[v0, ..., v{n-1}]: the consumer's loop variables, each once, of
** B's extents, so that consumer iterations and elements of B correspond
** one to one. The producer P is the only stage that writes B, by one plain
** store B[I] = v (no update: a reduction's stores are partial results), and
** B is a temporary that nothing else reads. Then P's store becomes
** C[J'] = f' with v_d := I[d] in J and f and the load of B := v; the
** consumer and B go. Between P and the consumer no stage may touch C, nor
** write what f reads (f now runs earlier), and P itself may not read C.
*/
static int
reverse_compute_inline(Kernel *k, int st, Err *e)
{
	const char *sn = k->stage[st].name, *why;
	const UOp *rl = NULL;
	UOp *sv[2], *path[256], *ld[MAXLOADS], *vars[T_MAXDIM], *vals[T_MAXDIM + 1], *old[T_MAXDIM + 1];
	UOp *store, *f, *pst, *ns, *ix;
	int n, np, nl, b, c, p, d, i, j, q, nloop = 0;
	KBuf *B;

	if ((why = sched_not_elementwise(k->stage[st].body, &rl)))
		return err_set(e, "stage %s holds %s; reverse_compute_inline takes an element-wise "
		               "consumer", sn, why);
	if ((n = sched_stores(k, st, sv, 2)) != 1)
		return err_set(e, "stage %s has %s stores; reverse_compute_inline takes a stage of one "
		               "store", sn, n == 0 ? "no" : "several");
	store = sv[0];
	f = store->src[1];
	c = (int)store->src[0]->src[0]->arg[0];
	if (sched_reads(k, f, c))
		return err_set(e, "stage %s reads %s while it writes it (a reduction); "
		               "reverse_compute_inline takes an element-wise consumer", sn, k->buf[c].name);
	if (store->nsrc > 2)
		return err_set(e, "stage %s: the store to %s is gated; reverse_compute_inline takes an "
		               "unguarded consumer", sn, k->buf[c].name);
	/* the one buffer the consumer reads that an earlier stage writes */
	for (b = -1, q = 0; q < k->nbuf; q++) {
		if (q == c || !sched_reads(k, f, q) || writer(k, st, q) < 0)
			continue;
		if (b >= 0)
			return err_set(e, "stage %s reads %s and %s, both written by earlier stages; "
			               "reverse_compute_inline takes a consumer of a single producer", sn,
			               k->buf[b].name, k->buf[q].name);
		b = q;
	}
	if (b < 0)
		return err_set(e, "stage %s reads no buffer an earlier stage writes; there is no producer "
		               "to inline it into", sn);
	p = writer(k, st, b);
	nl = sched_loads(f, k->buf[b].def, ld, MAXLOADS);
	B = &k->buf[b];
	if (nl != 1 || ld[0]->nsrc > 1)
		return err_set(e, "stage %s loads %s %s; reverse_compute_inline takes a consumer that "
		               "reads one element of it, ungated", sn, B->name,
		               nl != 1 ? "at several indices" : "under a gate");
	np = sched_path(k, st, store, path, 256);
	for (i = 0; i + 1 < np; i++) {
		if (path[i]->op == OP_IF && path[i]->src[0]->op == OP_CONST)
			continue;   /* a sequence */
		if (path[i]->op == OP_IF)
			return err_set(e, "stage %s: the store to %s is under a guard; reverse_compute_inline "
			               "takes an unguarded consumer (inline before splitting)", sn,
			               k->buf[c].name);
		nloop++;
	}
	ix = ld[0]->src[0];
	for (d = 0; d < B->ndim; d++) {
		const UOp *x = ix->src[d + 1];

		for (i = 0; i + 1 < np; i++)
			if (path[i]->op == OP_END && krange_var(path[i]->src[0]) == x)
				break;
		for (j = 0; j < d; j++)
			if (vars[j] == x)
				i = np;
		if (i + 1 >= np || krange_extent(path[i]->src[0]) != B->shape[d])
			return err_set(e, "stage %s: index %d of its load of %s is not a loop variable of "
			               "extent %lld of its own; reverse_compute_inline takes a consumer that "
			               "reads %s element by element (before splitting or fusing)", sn, d,
			               B->name, (long long)B->shape[d], B->name);
		vars[d] = (UOp *)x;
	}
	if (nloop != B->ndim)
		return err_set(e, "stage %s has %d loops for the %d dimensions of %s: it would write %s "
		               "more than once per element", sn, nloop, B->ndim, B->name, k->buf[c].name);
	if (B->role != KB_TEMP)
		return err_set(e, "%s is %s; reverse_compute_inline removes the producer's buffer, "
		               "which must be a temporary", B->name, krole_name(B->role));
	for (j = 0; j < k->nstage; j++)
		if (j != st && j != p && sched_reads(k, k->stage[j].body, b))
			return err_set(e, "stage %s reads %s too; reverse_compute_inline takes the only "
			               "reader of the producer's buffer", k->stage[j].name, B->name);
	for (j = 0; j < k->nstage; j++)
		if (j != p && sched_writes(k, k->stage[j].body, b))
			return err_set(e, "stage %s writes %s too; the producer must be the only writer",
			               k->stage[j].name, B->name);
	n = sched_stores(k, p, sv, 2);
	for (i = 0; i < n; i++)
		if (sched_reads(k, sv[i]->src[1], b))
			return err_set(e, "producer %s is a reduction (it reads %s while it writes it): the "
			               "consumer would see partial results", k->stage[p].name, B->name);
	if (n != 1)
		return err_set(e, "producer %s has several stores; reverse_compute_inline takes a "
		               "producer of one store", k->stage[p].name);
	pst = sv[0];
	if (sched_reads(k, k->stage[p].body, c) || sched_writes(k, k->stage[p].body, c))
		return err_set(e, "producer %s touches %s, which the consumer writes", k->stage[p].name,
		               k->buf[c].name);
	for (j = p + 1; j < st; j++) {
		if (sched_reads(k, k->stage[j].body, c) || sched_writes(k, k->stage[j].body, c))
			return err_set(e, "stage %s, between %s and %s, touches %s: it would see %s "
			               "written early", k->stage[j].name, k->stage[p].name, sn, k->buf[c].name,
			               k->buf[c].name);
		for (q = 0; q < k->nbuf; q++)
			if (q != b && sched_reads(k, f, q) && sched_writes(k, k->stage[j].body, q))
				return err_set(e, "stage %s, between %s and %s, writes %s, which %s reads: the "
				               "inlined value would see the old %s", k->stage[j].name,
				               k->stage[p].name, sn, k->buf[q].name, sn, k->buf[q].name);
	}
	/* the producer's store becomes the consumer's, at the producer's indices */
	for (d = 0; d < B->ndim; d++) {
		old[d] = vars[d];
		vals[d] = pst->src[0]->src[d + 1];
	}
	old[d] = ld[0];
	vals[d] = pst->src[1];
	f = kernel_substitute(k->c, f, old, vals, B->ndim + 1);
	ix = f ? kernel_substitute(k->c, store->src[0], old, vals, B->ndim) : NULL;
	ns = ix ? kernel_store(k, ix, f, pst->nsrc > 2 ? pst->src[2] : NULL) : NULL;
	if (!ns || !(ns = sched_simplify_stmt(k, ns, e)))
		return e->msg[0] ? -1 : err_set(e, "out of memory");
	if (sched_replace(k, p, pst, ns, e) < 0)
		return -1;
	sched_remove_stage(k, st);
	return sched_drop_buffer(k, b, e);
}

int
sched_reverse_compute_inline(Schedule *s, const char *stage, Err *e)
{
	return sched_apply_stage(s, "reverse_compute_inline", stage, reverse_compute_inline, e);
}

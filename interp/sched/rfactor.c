/* rfactor.c - rfactor: a reduction loop made a spatial axis of a partial-result buffer, reduced after (TVM's rfactor). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/* whether expression u mentions one of the variables vars[0..n-1] */
static int
mentions(const UOp *u, UOp *const *vars, int n)
{
	const UOp *v[64];
	int nv = uop_vars(u, v, 64), i, j;

	if (nv > 64)
		return 1;
	for (i = 0; i < nv; i++)
		for (j = 0; j < n; j++)
			if (v[i] == vars[j])
				return 1;
	return 0;
}

/* whether every variable of expression u is one of vars[0..n-1] */
static int
only(const UOp *u, UOp *const *vars, int n)
{
	const UOp *v[64];
	int nv = uop_vars(u, v, 64), i, j;

	if (nv > 64)
		return 0;
	for (i = 0; i < nv; i++) {
		for (j = 0; j < n && v[i] != vars[j]; j++)
			;
		if (j == n)
			return 0;
	}
	return 1;
}

/* D's index I with v inserted at position axis: the index of rf */
static UOp *
rf_index(Kernel *k, int rf, const UOp *ix, int axis, UOp *v)
{
	UOp *idx[T_MAXDIM];
	int n = 0, i;

	for (i = 1; i < ix->nsrc; i++) {
		if (i - 1 == axis)
			idx[n++] = v;
		idx[n++] = ix->src[i];
	}
	if (axis == ix->nsrc - 1)
		idx[n++] = v;
	return kernel_index(k, rf, idx, n);
}

/* body under the gates gates[0..n-1], outermost first */
static UOp *
gated(Kernel *k, UOp *body, UOp *const *gates, int n)
{
	while (n-- > 0 && body)
		body = kernel_if(k, gates[n], &body, 1);
	return body;
}

/*
** The stage writes one buffer D: init stores D[I] = c, and one update
** D[I] = D[I] op v (op add, mul, max or min) under reduction loops, loops
** whose variables I does not mention. R is the outermost such loop above
** the update with only reduction loops and ifs between it and the update;
** `loop` (F iterations, variable r) is one of them. rfactor splits the
** stage in two:
**
**   <stage>_rf:  the stage without D's inits; R becomes
**                  for r in F:
**                    rf[r, I] = identity(op)
**                    R without the loop, its update rf[r, I] = rf[r, I] op v
**   <stage>:     the stage with R replaced by
**                  for r in F: D[I] = D[I] op rf[r, I]
**
** with rf = <D>_rf a new temporary of D's dtype and scope, shaped D's shape
** with F inserted at factor_axis. Each rf[r, I] sums the iterations of the
** reduction loops with that r; the second stage combines the F partial
** results in D after D's own init (kept, whatever its value: rf starts at
** the identity). The loop, no longer a reduction, moves above the other
** reduction loops, so that binding it puts the whole of a partial result
** (its init and its updates) on one thread. Ifs between R and the update that test spatial variables
** only guard both new statements; ifs on reduction variables stay in the
** rf stage; an if on both refuses. The rf axis is the parallelism rfactor
** buys: bind r in both stages (TVM's cross-thread reduction).
*/
int
sched_rfactor_in(Kernel *k, int st, const char *loop, int axis, const char *suffix, int *rfbuf, Err *e)
{
	const char *sn = k->stage[st].name;
	UOp *sv[1024], *path[256], *rvars[256], *sgates[256], *l, *upd = NULL, *other = NULL;
	UOp *ix, *ixrf, *r, *lb, *rfv, *ld, *s, *body, *wb, *seq[2];
	int ns = sched_stores(k, st, sv, 1024), np, li, R, i, d, rf, op = 0, nr = 0, ng = 0;
	int64_t shape[T_MAXDIM], F;
	char base[2 * K_NAME], bname[K_NAME], name[K_NAME];
	const KBuf *D;

	if (ns == 0)
		return err_set(e, "stage %s stores nothing", sn);
	d = (int)sv[0]->src[0]->src[0]->arg[0];
	for (i = 0; i < ns; i++) {
		UOp *o;

		if (sv[i]->src[0]->src[0] != sv[0]->src[0]->src[0])
			return err_set(e, "stage %s writes %s and %s; rfactor takes a stage that writes one "
			               "buffer", sn, k->buf[d].name, sv[i]->src[0]->src[0]->name);
		if (sched_update(sv[i], &op, &o)) {
			if (upd)
				return err_set(e, "stage %s updates %s twice; rfactor takes one reduction", sn,
				               k->buf[d].name);
			upd = sv[i];
			other = o;
		} else if (sched_reads(k, sv[i]->src[1], d)) {
			return err_set(e, "stage %s: a store to %s reads %s and is no update D[I] = D[I] op v "
			               "(op add, mul, max, min)", sn, k->buf[d].name, k->buf[d].name);
		}
	}
	if (!upd)
		return err_set(e, "stage %s has no reduction (an update %s[I] = %s[I] op v)", sn,
		               k->buf[d].name, k->buf[d].name);
	(void)sched_update(upd, &op, &other);
	D = &k->buf[d];
	if (sched_reads(k, other, d))
		return err_set(e, "stage %s: the update's operand reads %s", sn, D->name);
	if (!(l = sched_loop(k, st, loop, e)))
		return -1;
	np = sched_path(k, st, upd, path, 256);
	for (li = 0; li < np && path[li] != l; li++)
		;
	if (li == np)
		return err_set(e, "stage %s: loop %s does not enclose the update of %s", sn, loop, D->name);
	ix = upd->src[0];
	if (mentions(ix, &l->src[0]->src[0], 1))
		return err_set(e, "stage %s: loop %s is spatial: %s is indexed by it (rfactor takes a "
		               "reduction loop)", sn, loop, D->name);
	if (krange_hw(l->src[0]) != HW_NONE)
		return err_set(e, "stage %s: loop %s is bound to %s; rfactor before binding", sn, loop,
		               hwaxis_name(krange_hw(l->src[0])));
	/* R: up from the loop through reduction loops and ifs */
	for (R = li, i = li - 1; i >= 0; i--)
		if (path[i]->op == OP_END) {
			if (mentions(ix, &path[i]->src[0]->src[0], 1))
				break;
			R = i;
		}
	/* only reduction loops from R down to the update: the combination replaces them all */
	for (i = R + 1; i < np - 1; i++)
		if (path[i]->op == OP_END && mentions(ix, &path[i]->src[0]->src[0], 1))
			return err_set(e, "stage %s: loop %s under loop %s is spatial (%s is indexed by it); "
			               "rfactor takes a reduction loop with only reduction loops under it "
			               "(reorder %s above %s first)", sn, krange_var(path[i]->src[0])->name, loop,
			               D->name, krange_var(path[i]->src[0])->name, loop);
	/* a reduction loop above a spatial one above R would run R's init and combine again */
	for (i = 0; i < R; i++)
		if (path[i]->op == OP_END && krange_extent(path[i]->src[0]) > 1
		&& !mentions(ix, &path[i]->src[0]->src[0], 1))
			return err_set(e, "stage %s: loop %s, a reduction loop of %s, encloses a spatial loop "
			               "around loop %s: the partial results' init and their combination would "
			               "run again for every iteration of %s (reorder %s below the spatial loops "
			               "first)", sn, krange_var(path[i]->src[0])->name, D->name, loop,
			               krange_var(path[i]->src[0])->name, krange_var(path[i]->src[0])->name);
	for (i = R; i < np - 1; i++)
		if (path[i]->op == OP_END)
			rvars[nr++] = krange_var(path[i]->src[0]);
	for (i = R + 1; i < np - 1; i++) {
		if (path[i]->op != OP_IF)
			continue;
		if (!mentions(path[i]->src[0], rvars, nr))
			sgates[ng++] = path[i]->src[0];
		else if (!only(path[i]->src[0], rvars, nr))
			return err_set(e, "stage %s: a guard of the update tests reduction and spatial loops "
			               "together; rfactor cannot split it", sn);
	}
	if (upd->nsrc == 3) {
		if (mentions(upd->src[2], rvars, nr))
			return err_set(e, "stage %s: the update's gate tests a reduction loop; rfactor cannot "
			               "keep it in the combining stage", sn);
		sgates[ng++] = upd->src[2];
	}
	for (i = 0; i < ns; i++) {
		UOp *p2[256];
		int n2 = sv[i] == upd ? 0 : sched_path(k, st, sv[i], p2, 256), j;

		for (j = 0; j < n2; j++)
			if (p2[j] == path[R])
				return err_set(e, "stage %s: loop %s encloses an init of %s; rfactor takes the "
				               "reduction loops below the init", sn,
				               krange_var(path[R]->src[0])->name, D->name);
	}
	if (D->ndim + 1 > T_MAXDIM)
		return err_set(e, "stage %s: %s has %d dimensions; the rf buffer would have more than %d",
		               sn, D->name, D->ndim, T_MAXDIM);
	if (axis < 0 || axis > D->ndim)
		return err_set(e, "factor_axis %d: %s has %d dimensions (0..%d)", axis, D->name, D->ndim,
		               D->ndim);
	F = krange_extent(l->src[0]);
	for (i = 0; i < D->ndim; i++)
		shape[i + (i >= axis)] = D->shape[i];
	shape[axis] = F;
	snprintf(base, sizeof base, "%s%s", sn, suffix);
	kernel_fresh_name(k, base, name, sizeof name);
	snprintf(base, sizeof base, "%s%s", D->name, suffix);
	kernel_fresh_name(k, base, bname, sizeof bname);
	if ((rf = kernel_add_buffer(k, bname, D->dtype, D->scope, KB_TEMP, shape, D->ndim + 1, e)) < 0)
		return -1;
	D = &k->buf[d];   /* adding a buffer may move the array */

	/* the rf stage: the loop hoisted above R, over the init and R without it */
	r = krange_var(l->src[0]);
	if (!(ixrf = rf_index(k, rf, ix, axis, r)))
		return err_set(e, "out of memory");
	if (!(s = kernel_substitute(k->c, upd, &ix, &ixrf, 1)))
		return err_set(e, "out of memory");
	lb = l->nsrc == 2 ? l->src[1] : kernel_if(k, kernel_const(k, DT_BOOL, 1), l->src + 1, l->nsrc - 1);
	lb = lb ? kernel_substitute(k->c, lb, &upd, &s, 1) : NULL;
	seq[1] = lb && path[R] != l ? kernel_substitute(k->c, path[R], &l, &lb, 1) : lb;
	s = kernel_store(k, ixrf, kernel_identity(k, (Op)op, D->dtype), NULL);
	seq[0] = s ? gated(k, s, sgates, ng) : NULL;
	if (!seq[0] || !seq[1] || !(body = kernel_loop(k, kernel_range(k, r, AX_LOOP, HW_NONE), seq, 2)))
		return err_set(e, "out of memory");
	if (sched_insert_stage(k, st, name, k->stage[st].body, e) < 0)
		return -1;
	if (sched_replace(k, st, path[R], body, e) < 0)
		return -1;
	for (i = 0; i < ns; i++)
		if (sv[i] != upd && sched_replace(k, st, sv[i], NULL, e) < 0)
			return -1;

	/* the combining stage */
	rfv = kernel_var(k, krange_var(l->src[0])->name, F);
	ld = kernel_load(k, rf_index(k, rf, ix, axis, rfv), NULL);
	s = ld ? kernel_store(k, ix, kernel_alu(k, (Op)op, D->dtype,
	                                        (UOp *[]){ kernel_load(k, ix, NULL), ld }, 2), NULL) : NULL;
	wb = s ? kernel_loop(k, kernel_range(k, rfv, AX_REDUCE, HW_NONE),
	                     (UOp *[]){ gated(k, s, sgates, ng) }, 1) : NULL;
	if (!wb)
		return err_set(e, "out of memory");
	if (sched_replace(k, st + 1, path[R], wb, e) < 0)
		return -1;
	if (rfbuf)
		*rfbuf = rf;
	return 0;
}

int
sched_rfactor(Schedule *s, const char *stage, const char *loop, int factor_axis, Err *e)
{
	Kernel *next;
	Buf line;
	Err ie;
	int st, rc;

	if ((st = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "rfactor: %s", ie.msg);
	if (!(next = sched_begin(s, e)))
		return -1;
	if (sched_rfactor_in(next, st, loop, factor_axis, "_rf", NULL, &ie) < 0) {
		kernel_free(next);
		return err_set(e, "rfactor: %s", ie.msg);
	}
	buf_init(&line);
	emit(&line, "s:rfactor(");
	sched_quote(&line, stage);
	emit(&line, ", ");
	sched_quote(&line, loop);
	if (factor_axis != 0)
		emit(&line, ", %d", factor_axis);
	emit(&line, ")");
	rc = line.oom ? (kernel_free(next), err_set(e, "rfactor: out of memory"))
	   : sched_commit(s, next, "rfactor", line.s, e);
	buf_free(&line);
	return rc;
}

/* decompose_reduction.c - decompose_reduction: a reduction's init store into a stage of its own (TVM's decompose_reduction, at stage level). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/* s is an update x[I] = x[I] op v of the buffer def */
static int
is_update(const UOp *s, const UOp *def)
{
	int op;

	return s->src[0]->src[0] == def && sched_update(s, &op, NULL) != NULL;
}

/*
** The init stage runs the init once for each iteration of its loops, before
** every update. That is the stage's meaning only when the init writes each
** element once: an init inside a loop that recomputes the reduction (after
** compute_at, the producer's nest runs again for every iteration of the
** consumer's loops) would run all its copies first and the updates would then
** add up every recomputation. nest is the init under copies of its loops.
*/
static int
init_once(Kernel *k, int st, UOp *nest, const UOp *init, Err *e)
{
	UOp *loops[256], *cur = nest;
	const UOp *ix = init->src[0];
	char name[K_NAME];
	int n = 0, tmp, rc, i, d;
	int64_t pts = 1;
	Err ie;

	while (cur->op == OP_END || cur->op == OP_IF) {
		if (cur->op == OP_END && n < 256)
			loops[n++] = cur;
		cur = cur->src[cur->nsrc - 1];
	}
	/* a loop the element does not depend on runs the same init again: certain, at any size */
	for (i = 0; i < n; i++) {
		const UOp *v = krange_var(loops[i]->src[0]), *iv[64];
		int found = 0;

		if (krange_extent(loops[i]->src[0]) < 2)
			continue;
		for (d = 1; d < ix->nsrc && !found; d++) {
			int nv = uop_vars(ix->src[d], iv, 64), j;

			for (j = 0; j < nv && !found; j++)
				found = iv[j] == v;
		}
		if (!found)
			return err_set(e, "stage %s: the init of %s runs again for every iteration of loop %s, "
			               "which its element does not depend on: the stage recomputes the "
			               "reduction inside loop %s, and an init stage of its own would run "
			               "before all the updates", k->stage[st].name, ix->src[0]->name, v->name,
			               v->name);
		if (uck_mul(pts, krange_extent(loops[i]->src[0]), &pts) < 0)
			pts = INT64_MAX;
	}
	/* each element once across the loops, by enumeration where it is small enough */
	if (n == 0 || pts > SCHED_ENUM_LIMIT)
		return 0;
	kernel_fresh_name(k, "scratch", name, sizeof name);
	if ((tmp = kernel_add_stage(k, name, nest, NULL, e)) < 0)
		return -1;
	rc = sched_independent(k, tmp, loops, n, 0, &ie);
	sched_remove_stage(k, tmp);
	if (rc < 0)
		return err_set(e, "stage %s: the init of %s runs more than once for one element (%s): "
		               "the stage recomputes the reduction inside a loop around it, and an init "
		               "stage of its own would run before all the updates", k->stage[st].name,
		               ix->src[0]->name, ie.msg);
	return 0;
}

/*
** The init is the first store of the stage to a buffer D that a later store
** of the stage updates (D[I] = D[I] op v), and that does not read D itself.
** It moves, with copies of the loops and ifs around it (bindings kept), to a
** new stage <stage>_init just before the stage. TVM places the init block
** right above `loop`, inside the same kernel; here it becomes its own stage,
** which is what lets reorder and compute_at treat the update's nest as a
** perfect nest. `loop` must enclose an update of D and not the init (TVM's
** condition that the init goes above it). Every element the stage updates
** is initialized first either way; the init's value may not read what the
** stage writes.
*/
static int
decompose(Kernel *k, int st, const char *loop, char *name, size_t nname, Err *e)
{
	const char *sn = k->stage[st].name;
	UOp *sv[1024], *path[256], *l, *init = NULL, *upd = NULL, *cur;
	int n = sched_stores(k, st, sv, 1024), np, i, j, q;
	char base[2 * K_NAME];

	for (i = 0; i < n && !init; i++) {
		const UOp *def = sv[i]->src[0]->src[0];

		if (sched_reads(k, sv[i]->src[1], (int)def->arg[0]) || is_update(sv[i], def))
			continue;
		for (j = i + 1; j < n && !upd; j++)
			if (is_update(sv[j], def))
				upd = sv[j];
		if (upd)
			init = sv[i];
	}
	if (!init)
		return err_set(e, "stage %s has no reduction init (a store followed by updates x[I] = "
		               "x[I] op v of the same buffer)", sn);
	{
		const KBuf *D = &k->buf[init->src[0]->src[0]->arg[0]];

		/* an init stage of its own is another launch: shared and local memory do not outlive one */
		if (D->scope != AS_GLOBAL)
			return err_set(e, "stage %s: the accumulator %s is %s memory, which lives for one stage; "
			               "its init stays in the stage (TVM puts it above the loop, which this "
			               "decompose_reduction does not)", sn, D->name, kscope_name(D->scope));
	}
	if (!(l = sched_loop(k, st, loop, e)))
		return -1;
	np = sched_path(k, st, l, path, 256);
	if (sched_path(k, st, init, path, 256) > np && path[np - 1] == l)
		return err_set(e, "stage %s: loop %s encloses the init %s[...]; the init goes above the "
		               "loop (give the reduction loop, or one around it inside the init's loops)",
		               sn, loop, init->src[0]->src[0]->name);
	{
		UOp *p2[256];
		int np2 = sched_path(k, st, upd, p2, 256);

		for (i = 0; i < np2 && p2[i] != l; i++)
			;
		if (i == np2)
			return err_set(e, "stage %s: loop %s does not enclose the update of %s", sn, loop,
			               init->src[0]->src[0]->name);
	}
	for (q = 0; q < k->nbuf; q++)
		if (sched_reads(k, init->src[1], q) && sched_writes(k, k->stage[st].body, q))
			return err_set(e, "stage %s: the init reads %s, which the stage writes", sn,
			               k->buf[q].name);
	/* the init under copies of its loops and ifs */
	np = sched_path(k, st, init, path, 256);
	cur = init;
	for (i = np - 2; i >= 0 && cur; i--)
		cur = path[i]->op == OP_END ? kernel_loop(k, path[i]->src[0], &cur, 1)
		    : kernel_if(k, path[i]->src[0], &cur, 1);
	if (!cur)
		return err_set(e, "out of memory");
	if (init_once(k, st, cur, init, e) < 0)
		return -1;
	if (sched_replace(k, st, init, NULL, e) < 0)
		return -1;
	/* init_once may have grown the stage array: sn is stale */
	snprintf(base, sizeof base, "%s_init", k->stage[st].name);
	kernel_fresh_name(k, base, name, nname);
	return sched_insert_stage(k, st, name, cur, e) < 0 ? -1 : 0;
}

int
sched_decompose_reduction(Schedule *s, const char *stage, const char *loop, Err *e)
{
	Kernel *next;
	char name[K_NAME];
	Buf line;
	Err ie;
	int st, rc;

	if ((st = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "decompose_reduction: %s", ie.msg);
	if (!(next = sched_begin(s, e)))
		return -1;
	if (decompose(next, st, loop, name, sizeof name, &ie) < 0) {
		kernel_free(next);
		return err_set(e, "decompose_reduction: %s", ie.msg);
	}
	buf_init(&line);
	emit(&line, "s:decompose_reduction(");
	sched_quote(&line, stage);
	emit(&line, ", ");
	sched_quote(&line, loop);
	emit(&line, ")");
	rc = line.oom ? (kernel_free(next), err_set(e, "decompose_reduction: out of memory"))
	   : sched_commit(s, next, "decompose_reduction", line.s, e);
	buf_free(&line);
	return rc;
}

/* regs_private.c - whether the register buffers under a loop carry no value from one iteration to the next. */
#include <stdio.h>
#include <string.h>

#include "sched.h"

/*
** A register (local) buffer used inside a parallel loop can be one per
** thread, declared inside the loop, when no value flows through it between
** iterations. The proof, for each such buffer:
**   1. every access to it in the stage is inside the loop;
**   2. L is the innermost loop around all of them (the loop itself or one
**      inside it);
**   3. in L's body, the first statement that touches the buffer writes every
**      element of it and reads none: a nest of loops around one unguarded
**      store whose index is, dimension by dimension, a mixed-radix number of
**      the nest's variables covering the dimension exactly (i1 of extent 4
**      and j1 of extent 64 over a 4x64 buffer; or j1 = j10*16 + j11).
** Each iteration of L then starts by overwriting the whole buffer, so what
** an iteration reads it wrote itself, and so does each iteration of the
** loop. This is the shape cache_write's register tile takes once its init
** sits before the reduction (fission) and set_scope compacts it.
*/

static int
touches(const Kernel *k, const UOp *s, int b)
{
	return sched_reads(k, s, b) || sched_writes(k, s, b);
}

/* does a statement outside the subtree of l (in s) touch b? */
static int
outside(const Kernel *k, const UOp *s, const UOp *l, int b, int depth)
{
	int i;

	if (s == l || depth > 1000)
		return 0;
	if (s->op != OP_END && s->op != OP_IF)
		return touches(k, s, b);
	if (s->op == OP_IF && sched_reads(k, s->src[0], b))
		return 1;
	for (i = 1; i < s->nsrc; i++)
		if (outside(k, s->src[i], l, b, depth + 1))
			return 1;
	return 0;
}

/* s writes every element of buffer b and reads none (the header's rule 3) */
static int
overwrites(const Kernel *k, const UOp *L, const UOp *s, int b, char *why, size_t n)
{
	const KBuf *B = &k->buf[b];
	UOp *var[T_MAXDIM * 4];
	int64_t ext[T_MAXDIM * 4];
	int nv = 0, used[T_MAXDIM * 4] = { 0 }, d, i, j;

	while (s->op == OP_END && s->nsrc == 2 && nv < T_MAXDIM * 4) {
		var[nv] = krange_var(s->src[0]);
		ext[nv++] = krange_extent(s->src[0]);
		s = s->src[1];
	}
	if (s->op != OP_STORE || s->nsrc != 2 || s->src[0]->src[0] != B->def) {   /* a gated store writes some */
		snprintf(why, n, "in loop %s, the first statement to touch %s is not a loop nest around one store "
		         "to it (s:fission separates an init from its update)", krange_var(L->src[0])->name, B->name);
		return 0;
	}
	if (sched_reads(k, s->src[1], b)) {
		snprintf(why, n, "in loop %s, the first store to %s reads it",
		         krange_var(L->src[0])->name, B->name);
		return 0;
	}
	for (d = 0; d < B->ndim; d++) {
		UOp *ix = s->src[0]->src[1 + d], *rest;
		int64_t coef[T_MAXDIM * 4], span = 1;
		int order[T_MAXDIM * 4], no = 0;

		for (i = 0; i < nv; i++) {
			if (!kernel_affine_in(k->c, ix, var[i], &coef[i], &rest))
				goto partial;
			ix = rest;
			if (coef[i] == 0)
				continue;
			if (coef[i] < 0 || used[i]++)
				goto partial;
			order[no++] = i;
		}
		if (ix->op != OP_CONST || ix->arg[0] != 0)
			goto partial;
		/* the terms, by increasing coefficient, must count 0 .. shape-1 once each */
		for (i = 0; i < no; i++)
			for (j = i + 1; j < no; j++)
				if (coef[order[j]] < coef[order[i]]) {
					int t = order[i];

					order[i] = order[j];
					order[j] = t;
				}
		for (i = 0; i < no; i++) {
			if (coef[order[i]] != span)
				goto partial;
			span *= ext[order[i]];
		}
		if (span != B->shape[d])
			goto partial;
	}
	for (i = 0; i < nv; i++)
		if (!used[i] && ext[i] > 1)
			goto partial;
	return 1;
partial:
	snprintf(why, n, "in loop %s, the first store to %s does not write each of its elements once",
	         krange_var(L->src[0])->name, B->name);
	return 0;
}

/* the first statement of s[0..n-1] that touches b, looking into guards that are always true
** (compute_at leaves them around what it moves) */
static const UOp *
first_touch(const Kernel *k, UOp *const *s, int n, int b, int depth)
{
	int i;

	for (i = 0; i < n && depth < 100; i++) {
		if (!touches(k, s[i], b))
			continue;
		if (s[i]->op == OP_IF && s[i]->src[0]->op == OP_CONST && s[i]->src[0]->arg[0])
			return first_touch(k, s[i]->src + 1, s[i]->nsrc - 1, b, depth + 1);
		return s[i];
	}
	return NULL;
}

int
sched_regs_private(const Kernel *k, int st, const UOp *loop, char *why, size_t n)
{
	int b, i;

	for (b = 0; b < k->nbuf; b++) {
		const UOp *L = loop, *first;

		if (k->buf[b].scope != AS_REG || !touches(k, loop, b))
			continue;
		if (outside(k, k->stage[st].body, loop, b, 0)) {
			snprintf(why, n, "register buffer %s is used outside loop %s too", k->buf[b].name,
			         krange_var(loop->src[0])->name);
			return 0;
		}
		/* the innermost loop around every access */
		for (;;) {
			const UOp *only = NULL;
			int count = 0;

			for (i = 1; i < L->nsrc; i++)
				if (touches(k, L->src[i], b)) {
					count++;
					only = L->src[i];
				}
			if (count != 1 || only->op != OP_END)
				break;
			L = only;
		}
		first = first_touch(k, L->src + 1, L->nsrc - 1, b, 0);
		if (!first || !overwrites(k, L, first, b, why, n))
			return 0;
	}
	return 1;
}

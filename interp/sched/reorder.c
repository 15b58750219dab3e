/* reorder.c - reorder: loops of one perfect nest take a given order (TVM's reorder); the others keep their places. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

enum { MAXNEST = 64 };

/*
** The loops given must lie on one chain of the loop tree, and the chain from
** the outermost of them to the innermost must be a perfect nest (each loop
** the only statement of the one before): a statement between two loops
** (an init store, a guard) would run a different number of times. Loops of
** the chain that are not given keep their positions; the given ones fill
** their positions in the order given. The iterations change order, so the
** nest must be free of dependences between iterations (sched_independent):
** updates by one commutative op (reductions) may be reordered, at the cost
** of rounding when two reduction loops trade places. Or the dependences run
** along the innermost loop of the nest alone: each loop outside it is free
** of them (checked outermost first), so the nest may take any order, as
** when the rows of a tile go inside the loop over key tiles of a rolling
** update (Neptune's attention).
*/
int
sched_reorder_in(Kernel *k, int st, const char *const *names, int n, Err *e)
{
	const char *sn = k->stage[st].name;
	UOp *l[MAXNEST], *chain[1024], *nest[MAXNEST], *rng[MAXNEST], *cur;
	int pos[MAXNEST], sorted[MAXNEST], nc = 0, deep = 0, i, j, a, b, cnt;
	Err ie;

	if (n < 2 || n > MAXNEST)
		return err_set(e, "stage %s: give 2 to %d loops, not %d", sn, MAXNEST, n);
	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0)
				return err_set(e, "stage %s: loop %s is given twice", sn, names[i]);
		if (!(l[i] = sched_loop(k, st, names[i], e)))
			return -1;
	}
	/* the chain down to the deepest loop given; every other must be on it */
	for (i = 0; i < n; i++) {
		UOp *p[1024];
		int np = sched_path(k, st, l[i], p, 1024);

		if (np > nc) {
			memcpy(chain, p, np * sizeof *p);
			nc = np;
			deep = i;
		}
	}
	for (i = 0; i < n; i++) {
		for (pos[i] = 0; pos[i] < nc && chain[pos[i]] != l[i]; pos[i]++)
			;
		if (pos[i] == nc)
			return err_set(e, "stage %s: loops %s and %s are not in one nest (neither is inside "
			               "the other)", sn, names[i], names[deep]);
	}
	for (a = nc, b = -1, i = 0; i < n; i++) {
		a = pos[i] < a ? pos[i] : a;
		b = pos[i] > b ? pos[i] : b;
	}
	for (i = a; i < b; i++) {
		const UOp *x = chain[i];

		if (x->op != OP_END)
			return err_set(e, "stage %s: an if stands between loops %s and %s; reorder needs a "
			               "perfect nest", sn, krange_var(chain[a]->src[0])->name,
			               krange_var(chain[b]->src[0])->name);
		if (x->nsrc != 2)
			return err_set(e, "stage %s: the nest from loop %s to loop %s is not perfect: loop %s's "
			               "body holds %d statements, so a statement sits between loops being "
			               "reordered", sn, krange_var(chain[a]->src[0])->name,
			               krange_var(chain[b]->src[0])->name, krange_var(x->src[0])->name,
			               x->nsrc - 1);
	}
	cnt = b - a + 1;
	if (cnt > MAXNEST)
		return err_set(e, "stage %s: the nest is deeper than %d loops", sn, MAXNEST);
	for (i = 0; i < cnt; i++) {
		if (chain[a + i]->op != OP_END)
			return err_set(e, "stage %s: an if stands between the loops", sn);
		nest[i] = chain[a + i];
		rng[i] = nest[i]->src[0];
	}
	if (sched_independent(k, st, nest, cnt, 1, &ie) < 0) {
		/* the dependences may all run along the innermost loop: then every
		** loop outside it, checked outermost first with the ones above fixed,
		** carries none, and any order keeps them (an interchange) */
		Err ie2;

		for (i = 0; i + 1 < cnt; i++)
			if (sched_independent(k, st, &nest[i], 1, 1, &ie2) < 0)
				return err_set(e, "stage %s: the order of the iterations of loops %s to %s matters: "
				               "%s", sn, krange_var(rng[0])->name, krange_var(rng[cnt - 1])->name,
				               ie.msg);
	}
	/* the positions of the given loops, in nest order, take them in the given order */
	for (i = 0; i < n; i++)
		sorted[i] = pos[i];
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
			int t = sorted[j];

			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	for (i = 0; i < n; i++)
		rng[sorted[i] - a] = l[i]->src[0];
	cur = kernel_loop(k, rng[cnt - 1], nest[cnt - 1]->src + 1, nest[cnt - 1]->nsrc - 1);
	for (i = cnt - 2; i >= 0 && cur; i--)
		cur = kernel_loop(k, rng[i], &cur, 1);
	if (!cur)
		return err_set(e, "out of memory");
	return sched_replace(k, st, nest[0], cur, e);
}

int
sched_reorder(Schedule *s, const char *stage, const char *const *loops, int n, Err *e)
{
	return sched_apply_loops(s, "reorder", stage, loops, n, sched_reorder_in, e);
}

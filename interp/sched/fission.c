/* fission.c - fission: a loop distributed over the statements of its body (loop fission), when its iterations are independent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

enum { MAXSTMT = 1024 };

/*
** for i: { s1; s2; ...; sn }  becomes  for i: s1; for i': s2; ...; for i'': sn
**
** Each iteration of i still runs its statements in their order, but s1 now
** runs for every i before s2 runs for any. That is the same program when no
** iteration touches an element another one writes (sched_independent, exact:
** not even commutative updates, whose rounding would change). The first loop
** keeps the name; the others take fresh ones (i0, i1, ... when taken), named
** in the step's note. A bound loop is refused (distribute before binding: a
** launch per statement is not what binding asked for).
**
** What it is for: a loop that cannot move inside another because a sequence
** of statements sits between them (a reduction's init, a rolling update's
** repair) is distributed first; then each statement's nest reorders on its
** own. Neptune's attention template needs the query rows of a tile inside
** the key-tile loop: for i1: { init; for j0: ... } becomes
** for i1: init; for i1': for j0: ..., and reorder takes j0 outside i1'.
*/
/* a loop variable name from base that no loop of stage st and none of taken[0..n) has */
static UOp *
fresh(Kernel *k, int st, const char *base, int64_t extent, UOp *const *taken, int n)
{
	char name[48];
	int j, i, used;
	Err ie;

	for (j = -1; j < 1000; j++) {
		if (j < 0)
			snprintf(name, sizeof name, "%s", base);
		else
			snprintf(name, sizeof name, "%s%d", base, j);
		used = sched_loop(k, st, name, &ie) != NULL;
		for (i = 0; i < n && !used; i++)
			used = strcmp(krange_var(taken[i]->src[0])->name, name) == 0;
		if (!used)
			return kernel_var(k, name, extent);
	}
	return NULL;
}

/* the statements of a body, with the sequences in it (always-true ifs, as
** fusion steps leave them) spliced in: at most max; the count, or -1 */
static int
flat(UOp *const *body, int n, UOp **out, int m, int max)
{
	int i;

	for (i = 0; i < n && m >= 0; i++) {
		UOp *s = body[i];

		if (s->op == OP_IF && s->src[0]->op == OP_CONST && s->src[0]->arg[0] != 0)
			m = flat(s->src + 1, s->nsrc - 1, out, m, max);
		else if (m < max)
			out[m++] = s;
		else
			return -1;
	}
	return m;
}

int
sched_fission_in(Kernel *k, int st, const char *loop, Buf *names, Err *e)
{
	const char *sn = k->stage[st].name;
	UOp *l, *p[1024], **seq, **v, *nb, *stmts[MAXSTMT];
	int np, n, i, m = 0, rc = -1;
	Err ie;

	if (!(l = sched_loop(k, st, loop, e)))
		return -1;
	if (krange_hw(l->src[0]) != HW_NONE)
		return err_set(e, "stage %s: loop %s is bound to %s; distribute it before binding", sn, loop,
		               hwaxis_name(krange_hw(l->src[0])));
	if ((n = flat(l->src + 1, l->nsrc - 1, stmts, 0, MAXSTMT)) < 0)
		return err_set(e, "stage %s: loop %s's body holds more than %d statements", sn, loop, MAXSTMT);
	if (n < 2)
		return err_set(e, "stage %s: loop %s's body is one statement; there is nothing to distribute",
		               sn, loop);
	if (sched_independent(k, st, &l, 1, 0, &ie) < 0)
		return err_set(e, "stage %s: the iterations of loop %s depend on one another (%s); distributed, "
		               "each statement would run for every iteration before the next statement runs "
		               "for any", sn, loop, ie.msg);
	np = sched_path(k, st, l, p, 1024);
	if (np < 1)
		return err_set(e, "stage %s: loop %s is not in the stage", sn, loop);
	if (!(seq = malloc(n * sizeof *seq)))
		return err_set(e, "out of memory");
	v = NULL;
	for (i = 0; i < n; i++) {
		UOp *var = (UOp *)krange_var(l->src[0]), *nv = var, *r = l->src[0], *s = stmts[i];

		if (i > 0) {
			if (!(nv = fresh(k, st, var->name, krange_extent(l->src[0]), seq, i))
			|| !(r = kernel_range(k, nv, krange_type(l->src[0]), HW_NONE))
			|| !(s = kernel_substitute(k->c, s, &var, &nv, 1)))
				goto oom;
			emit(names, "%s%s", i > 1 ? ", " : "", nv->name);
		}
		if (!(seq[i] = kernel_loop(k, r, &s, 1)))
			goto oom;
	}
	if (np == 1) {
		/* the stage's body: a sequence in an always-true if, as the IR writes one */
		nb = kernel_if(k, kernel_const(k, DT_BOOL, 1), seq, n);
	} else {
		UOp *par = p[np - 2];

		if (!(v = malloc((par->nsrc + n) * sizeof *v)))
			goto oom;
		for (i = 1; i < par->nsrc; i++) {
			if (par->src[i] != l) {
				v[m++] = par->src[i];
				continue;
			}
			memcpy(v + m, seq, n * sizeof *seq);
			m += n;
		}
		nb = par->op == OP_END ? kernel_loop(k, par->src[0], v, m) : kernel_if(k, par->src[0], v, m);
		l = par;
	}
	if (!nb)
		goto oom;
	rc = sched_replace(k, st, l, nb, e);
	goto out;
oom:
	err_set(e, "out of memory");
out:
	free(v);
	free(seq);
	return rc;
}

/* the loops directly in the statements s[0..n) (through ifs): their names pushed on todo */
static int
children(UOp *const *s, int n, char (*todo)[K_NAME], int *nt, int max)
{
	int i;

	for (i = 0; i < n; i++) {
		if (s[i]->op == OP_END) {
			if (*nt == max)
				return -1;
			snprintf(todo[(*nt)++], K_NAME, "%s", krange_var(s[i]->src[0])->name);
		} else if (s[i]->op == OP_IF && children(s[i]->src + 1, s[i]->nsrc - 1, todo, nt, max) < 0)
			return -1;
	}
	return 0;
}

/*
** Deep fission: loop distributed, then every loop inside the copies whose
** body holds several statements, as far as each is allowed (a refusal leaves
** that loop whole and the walk goes on inside it): each statement under a
** perfect nest of its own where the dependences allow, the form the tile
** view turns into tile statements.
*/
static int
fission_deep(Kernel *k, int st, const char *loop, Buf *names, Err *e)
{
	enum { MAXTODO = 1024 };
	char (*todo)[K_NAME] = malloc(MAXTODO * sizeof *todo);
	int nt = 0, rc = -1;

	if (!todo)
		return err_set(e, "out of memory");
	/* to a fixpoint: a loop distributed inside another may leave that one several statements */
again:
	nt = 0;
	snprintf(todo[nt++], K_NAME, "%s", loop);
	while (nt > 0) {
		char name[K_NAME];
		UOp *l, *stmts[MAXSTMT];
		Buf made;
		Err ie;
		int n;

		snprintf(name, sizeof name, "%s", todo[--nt]);
		if (!(l = sched_loop(k, st, name, e)))
			goto out;
		n = flat(l->src + 1, l->nsrc - 1, stmts, 0, MAXSTMT);
		buf_init(&made);
		if (n >= 2 && krange_hw(l->src[0]) == HW_NONE && sched_fission_in(k, st, name, &made, &ie) == 0) {
			emit(names, "%s%s", names->len ? ", " : "", made.s ? made.s : "");
			buf_free(&made);
			goto again;
		}
		buf_free(&made);
		if (n < 0 || children(stmts, n, todo, &nt, MAXTODO) < 0) {
			err_set(e, "stage %s: too many loops under %s", k->stage[st].name, name);
			goto out;
		}
	}
	rc = 0;
out:
	free(todo);
	return rc;
}

int
sched_fission(Schedule *s, const char *stage, const char *loop, int deep, Buf *made, Err *e)
{
	Kernel *next;
	Buf line, names;
	Err ie;
	int st, rc;

	if ((st = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "fission: %s", ie.msg);
	if (!(next = sched_begin(s, e)))
		return -1;
	buf_init(&names);
	if ((deep ? fission_deep(next, st, loop, &names, &ie) : sched_fission_in(next, st, loop, &names, &ie)) < 0) {
		kernel_free(next);
		buf_free(&names);
		return err_set(e, "fission: %s", ie.msg);
	}
	buf_init(&line);
	emit(&line, "s:fission(");
	sched_quote(&line, stage);
	emit(&line, ", ");
	sched_quote(&line, loop);
	emit(&line, deep ? ", {deep = true})" : ")");
	rc = line.oom ? (kernel_free(next), err_set(e, "fission: out of memory"))
	   : sched_commit(s, next, "fission", line.s, e);
	if (rc == 0 && names.s) {
		Buf note;

		buf_init(&note);
		emit(&note, "fission(%s, %s): the new loops %s", stage, loop, names.s);
		sched_note(s, note.s);
		buf_free(&note);
	}
	if (rc == 0 && made && names.s)
		emit(made, "%s", names.s);
	buf_free(&line);
	buf_free(&names);
	return rc;
}

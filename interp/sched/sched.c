/* sched.c - the schedule: the current kernel, the steps that led to it, undo, the trace, finding loops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

Schedule *
sched_new(const Kernel *k, const UOp *graph, Err *e)
{
	Schedule *s = calloc(1, sizeof *s);

	if (!s)
		return err_set(e, "schedule: out of memory"), NULL;
	if (kernel_check(k, NULL, e) < 0) {
		free(s);
		return NULL;
	}
	if (!(s->k = kernel_clone(k, e)) || !(s->orig = kernel_clone(k, e))) {
		sched_free(s);
		return NULL;
	}
	s->graph = graph;
	return s;
}

void
sched_free(Schedule *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < s->nstep; i++) {
		free(s->step[i].line);
		kernel_free(s->step[i].before);
	}
	free(s->step);
	kernel_free(s->k);
	kernel_free(s->orig);
	free(s);
}

Kernel *
sched_begin(Schedule *s, Err *e)
{
	return kernel_clone(s->k, e);
}

int
sched_commit(Schedule *s, Kernel *next, const char *what, const char *line, Err *e)
{
	Err ce;
	char *l;

	if (!next)
		return -1;
	if (kernel_check(next, NULL, &ce) < 0) {
		kernel_free(next);
		return err_set(e, "%s: the result fails the verifier: %s", what, ce.msg);
	}
	if (s->nstep == s->capstep) {
		int cap = s->capstep ? 2 * s->capstep : 8;
		SStep *ns = realloc(s->step, cap * sizeof *ns);

		if (!ns) {
			kernel_free(next);
			return err_set(e, "%s: out of memory", what);
		}
		s->step = ns;
		s->capstep = cap;
	}
	if (!(l = malloc(strlen(line) + 1))) {
		kernel_free(next);
		return err_set(e, "%s: out of memory", what);
	}
	strcpy(l, line);
	s->step[s->nstep].line = l;
	s->step[s->nstep].before = s->k;
	s->nstep++;
	s->k = next;
	return 0;
}

int
sched_undo(Schedule *s, Err *e)
{
	SStep *t;

	if (s->nstep == 0)
		return err_set(e, "undo: no step to undo");
	t = &s->step[--s->nstep];
	kernel_free(s->k);
	s->k = t->before;
	free(t->line);
	return 0;
}

void
sched_trace(Buf *b, const Schedule *s)
{
	int i;

	for (i = 0; i < s->nstep; i++)
		emit(b, "%s\n", s->step[i].line);
}

int
sched_stage(const Kernel *k, const char *name, Err *e)
{
	Buf b;
	int i;

	for (i = 0; i < k->nstage; i++)
		if (strcmp(k->stage[i].name, name) == 0)
			return i;
	buf_init(&b);
	for (i = 0; i < k->nstage; i++)
		emit(&b, "%s%s", i ? ", " : "", k->stage[i].name);
	err_set(e, "no stage %s (the stages: %s)", name, b.s ? b.s : "none");
	buf_free(&b);
	return -1;
}

/* depth-first over the statements, loops collected in order */
static void
collect(UOp *s, UOp **out, int *n, int max, int depth)
{
	int i;

	if (depth > 1000)
		return;
	if (s->op == OP_END && *n < max)
		out[(*n)++] = s;
	if (s->op == OP_END || s->op == OP_IF)
		for (i = 1; i < s->nsrc; i++)
			collect(s->src[i], out, n, max, depth + 1);
}

int
sched_loops(const Kernel *k, int st, UOp **out, int max)
{
	int n = 0;

	if (st >= 0 && st < k->nstage)
		collect(k->stage[st].body, out, &n, max, 0);
	return n;
}

UOp *
sched_loop(const Kernel *k, int st, const char *var, Err *e)
{
	UOp *l[256];
	int n = sched_loops(k, st, l, 256), i;
	Buf b;

	for (i = 0; i < n; i++)
		if (strcmp(krange_var(l[i]->src[0])->name, var) == 0)
			return l[i];
	buf_init(&b);
	for (i = 0; i < n; i++)
		emit(&b, "%s%s", i ? ", " : "", krange_var(l[i]->src[0])->name);
	err_set(e, "stage %s has no loop %s (its loops: %s)", k->stage[st].name, var, b.s ? b.s : "none");
	buf_free(&b);
	return NULL;
}

UOp *
sched_fresh_var(Kernel *k, int st, const char *base, int64_t extent)
{
	UOp *l[256];
	char name[48];
	int n = sched_loops(k, st, l, 256), i, j, taken;

	snprintf(name, sizeof name, "%s", base);
	for (j = 0;; j++) {
		for (taken = 0, i = 0; i < n && !taken; i++)
			taken = strcmp(krange_var(l[i]->src[0])->name, name) == 0;
		if (!taken)
			break;
		snprintf(name, sizeof name, "%s%d", base, j);
	}
	return kernel_var(k, name, extent);
}

/* old replaced by new below s; NULL new drops it from its block */
static UOp *
replace(Kernel *k, UOp *s, const UOp *old, UOp *new, int depth, int *found)
{
	UOp *src[1024], **v = src, *r;
	int i, n = 0, changed = 0;

	if (s == old) {
		(*found)++;
		return new;
	}
	if ((s->op != OP_END && s->op != OP_IF) || depth > 1000)
		return s;
	if (s->nsrc > 1024 && !(v = malloc(s->nsrc * sizeof *v)))
		return NULL;
	v[n++] = s->src[0];
	for (i = 1; i < s->nsrc; i++) {
		UOp *c = replace(k, s->src[i], old, new, depth + 1, found);

		changed |= c != s->src[i];
		if (c)
			v[n++] = c;
	}
	r = !changed ? s : s->op == OP_END ? kernel_loop(k, v[0], v + 1, n - 1) : kernel_if(k, v[0], v + 1, n - 1);
	if (v != src)
		free(v);
	return r;
}

int
sched_replace(Kernel *k, int st, const UOp *old, UOp *new, Err *e)
{
	int found = 0;
	UOp *b;

	if (st < 0 || st >= k->nstage)
		return err_set(e, "schedule: no stage %d", st);
	b = replace(k, k->stage[st].body, old, new, 0, &found);
	if (!found)
		return err_set(e, "schedule: the statement is not in stage %s", k->stage[st].name);
	if (!b)
		return err_set(e, "schedule: stage %s would be empty, or out of memory", k->stage[st].name);
	k->stage[st].body = b;
	return 0;
}

/* ---- diff: the previous kernel against the current one, line by line ---- */

typedef struct Lines {
	char **l;
	int n;
	char *text;
} Lines;

static int
split_lines(Lines *x, const Kernel *k)
{
	Buf b;
	char *p;
	int cap = 64;

	buf_init(&b);
	kernel_print(&b, k, 0);
	x->text = buf_take(&b);
	x->n = 0;
	if (!x->text || !(x->l = malloc(cap * sizeof *x->l)))
		return -1;
	for (p = x->text; *p;) {
		char *nl = strchr(p, '\n');

		if (x->n == cap) {
			char **nlines = realloc(x->l, (cap *= 2) * sizeof *nlines);

			if (!nlines)
				return -1;
			x->l = nlines;
		}
		x->l[x->n++] = p;
		if (!nl)
			break;
		*nl = 0;
		p = nl + 1;
	}
	return 0;
}

int
sched_diff(Buf *b, const Schedule *s, Err *e)
{
	const Kernel *before = s->nstep ? s->step[s->nstep - 1].before : s->orig;
	Lines x = { 0 }, y = { 0 };
	int *t = NULL, i, j, rc = -1;

	if (split_lines(&x, before) < 0 || split_lines(&y, s->k) < 0)
		goto out;
	if ((int64_t)(x.n + 1) * (y.n + 1) > 4000000) {
		rc = err_set(e, "diff: the kernels have too many lines (%d and %d)", x.n, y.n);
		goto out;
	}
	/* longest common subsequence from the ends: t[i][j] for x[i..], y[j..] */
	if (!(t = calloc((size_t)(x.n + 1) * (y.n + 1), sizeof *t)))
		goto out;
#define T(i, j) t[(size_t)(i) * (y.n + 1) + (j)]
	for (i = x.n - 1; i >= 0; i--)
		for (j = y.n - 1; j >= 0; j--)
			T(i, j) = strcmp(x.l[i], y.l[j]) == 0 ? T(i + 1, j + 1) + 1
			        : T(i + 1, j) > T(i, j + 1) ? T(i + 1, j) : T(i, j + 1);
	emit(b, "--- before%s%s\n+++ after\n", s->nstep ? ": " : " (no step yet)",
	     s->nstep ? s->step[s->nstep - 1].line : "");
	for (i = j = 0; i < x.n || j < y.n;) {
		if (i < x.n && j < y.n && strcmp(x.l[i], y.l[j]) == 0) {
			emit(b, "  %s\n", x.l[i]);
			i++, j++;
		} else if (i < x.n && (j == y.n || T(i + 1, j) >= T(i, j + 1)))
			emit(b, "- %s\n", x.l[i++]);
		else
			emit(b, "+ %s\n", y.l[j++]);
	}
#undef T
	rc = 0;
out:
	if (rc < 0 && !e->msg[0])
		err_set(e, "diff: out of memory");
	free(t);
	free(x.l);
	free(x.text);
	free(y.l);
	free(y.text);
	return rc;
}

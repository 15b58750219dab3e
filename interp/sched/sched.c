/* sched.c - the schedule: the current kernel, the steps that led to it, undo, the trace, finding loops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/pmap.h"
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
		free(s->step[i].note);
		kernel_free(s->step[i].before);
	}
	free(s->step);
	kernel_free(s->k);
	kernel_free(s->orig);
	free(s);
}

static char *
dupstr(const char *s)
{
	char *d;

	if (!s || !(d = malloc(strlen(s) + 1)))
		return NULL;
	return strcpy(d, s);
}

Schedule *
sched_clone(const Schedule *s, Err *e)
{
	Schedule *c = calloc(1, sizeof *c);
	int i;

	if (!c)
		return err_set(e, "schedule: out of memory"), NULL;
	c->graph = s->graph;
	if (!(c->k = kernel_clone(s->k, e)) || !(c->orig = kernel_clone(s->orig, e)))
		goto fail;
	if (s->nstep && !(c->step = calloc(s->nstep, sizeof *c->step))) {
		err_set(e, "schedule: out of memory");
		goto fail;
	}
	c->capstep = s->nstep;
	/* nstep counts the steps copied so far, so that sched_free frees exactly those */
	for (i = 0; i < s->nstep; i++) {
		SStep *d = &c->step[i];

		d->line = dupstr(s->step[i].line);
		d->note = s->step[i].note ? dupstr(s->step[i].note) : NULL;
		d->before = kernel_clone(s->step[i].before, e);
		c->nstep++;
		if (!d->line || (s->step[i].note && !d->note) || !d->before) {
			if (d->before)
				err_set(e, "schedule: out of memory");
			goto fail;
		}
	}
	return c;
fail:
	sched_free(c);
	return NULL;
}

Kernel *
sched_begin(Schedule *s, Err *e)
{
	return kernel_clone(s->k, e);
}

/*
** Statements outside the loops bound to an axis run on every thread (every
** block) of it: a store to memory the threads share (global; shared for
** thread axes) that is not under a loop bound to each axis the stage uses
** is made by many threads at once. A warp binding gives each warp 32 lanes,
** so it needs a lane loop around such stores too. Registers are per thread.
*/
typedef struct Rep {
	int used[HW_COUNT];
	int in[HW_COUNT];
	const UOp *bad;
	HwAxis axis;
} Rep;

static void
axes_used(Rep *r, const UOp *s, int depth)
{
	int i;

	if (depth > 1000 || (s->op != OP_END && s->op != OP_IF))
		return;
	if (s->op == OP_END)
		r->used[krange_hw(s->src[0])] = 1;
	for (i = 1; i < s->nsrc; i++)
		axes_used(r, s->src[i], depth + 1);
}

static void
stores(Rep *r, const Kernel *k, const UOp *s, int depth)
{
	int i, h;

	if (depth > 1000 || r->bad)
		return;
	if (s->op == OP_STORE) {
		const UOp *d = s->src[0]->src[0];
		UAddrSpace as = (UAddrSpace)d->arg[1];

		if (as == AS_REG)
			return;
		for (h = HW_BLOCK_X; h < HW_COUNT && !r->bad; h++)
			if (r->used[h] && !r->in[h] && (as == AS_GLOBAL || hwaxis_is_thread(h))) {
				r->bad = s;
				r->axis = (HwAxis)h;
			}
		return;
	}
	if (s->op != OP_END && s->op != OP_IF)
		return;
	h = s->op == OP_END ? krange_hw(s->src[0]) : HW_NONE;
	r->in[h]++;
	for (i = 1; i < s->nsrc; i++)
		stores(r, k, s->src[i], depth + 1);
	r->in[h]--;
}

int
sched_replicated(const Kernel *k, int st, Err *e)
{
	Rep r;

	memset(&r, 0, sizeof r);
	axes_used(&r, k->stage[st].body, 0);
	r.used[HW_NONE] = 0;
	if (r.used[HW_WARP])
		r.used[HW_LANE] = 1;
	stores(&r, k, k->stage[st].body, 0);
	if (r.bad) {
		Buf b;

		buf_init(&b);
		kernel_print_store(&b, k, r.bad);
		err_set(e, "stage %s: the store %s is not inside a loop bound to %s, so every %s runs it "
		        "and they race%s", k->stage[st].name, b.s ? b.s : "?", hwaxis_name(r.axis),
		        hwaxis_is_block(r.axis) ? "block" : "thread",
		        r.axis == HW_LANE ? " (a warp binding runs 32 lanes)" : "");
		buf_free(&b);
		return -1;
	}
	return 0;
}

/* stage st of k has a name that stage of before has, with no replicated store there */
static int
was_clean(const Kernel *before, const Kernel *k, int st)
{
	int j;
	Err ie;

	for (j = 0; j < before->nstage; j++)
		if (strcmp(before->stage[j].name, k->stage[st].name) == 0)
			return sched_replicated(before, j, &ie) == 0;
	return 1;   /* a new stage: it had none */
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
	/*
	** A step that moves a store out of a bound loop, or a bound loop away from a
	** store (compute_at beside a thread loop, reverse_compute_at after a block
	** loop, set_scope to memory more instances share, folding a local store into a
	** global one), makes every instance of that axis run it: refused, whichever
	** primitive it is. A stage that had such a store before the step keeps it.
	*/
	{
		int st;

		for (st = 0; st < next->nstage; st++)
			if (sched_replicated(next, st, &ce) < 0 && was_clean(s->k, next, st)) {
				kernel_free(next);
				return err_set(e, "%s: the result would race: %s", what, ce.msg);
			}
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
	s->step[s->nstep].note = NULL;
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
	free(t->note);
	return 0;
}

int
sched_note(Schedule *s, const char *note)
{
	char *n;

	if (s->nstep == 0 || !note || !(n = malloc(strlen(note) + 1)))
		return -1;
	strcpy(n, note);
	free(s->step[s->nstep - 1].note);
	s->step[s->nstep - 1].note = n;
	return 0;
}

void
sched_explain(Buf *b, const Schedule *s)
{
	int i, any = 0;

	for (i = 0; i < s->nstep; i++)
		if (s->step[i].note) {
			emit(b, "%s%s\n%s", any ? "\n" : "", s->step[i].line, s->step[i].note);
			any = 1;
		}
	if (!any)
		emit(b, "no step of this schedule derives anything (rolling_update and split_k_update do)\n");
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

/* a path from the stage body down to target: the enclosing statements, target last */
static int
path(const UOp *s, const UOp *target, UOp **out, int n, int max, int depth)
{
	int i, r;

	if (n >= max || depth > 1000)
		return 0;
	out[n] = (UOp *)s;
	if (s == target)
		return n + 1;
	if (s->op == OP_END || s->op == OP_IF)
		for (i = 1; i < s->nsrc; i++)
			if ((r = path(s->src[i], target, out, n + 1, max, depth + 1)) > 0)
				return r;
	return 0;
}

int
sched_path(const Kernel *k, int st, const UOp *target, UOp **out, int max)
{
	if (st < 0 || st >= k->nstage)
		return 0;
	return path(k->stage[st].body, target, out, 0, max, 0);
}

void
sched_quote(Buf *b, const char *s)
{
	emit(b, "\"");
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			emit(b, "\\%c", ch);
		else if (ch == '\n')
			emit(b, "\\n");
		else if (ch == '\r')
			emit(b, "\\r");
		else if (ch < 32 || ch == 127)
			emit(b, "\\%03d", ch);
		else
			emit(b, "%c", ch);
	}
	emit(b, "\"");
}

static int
has_load(const UOp *u, int depth)
{
	int i;

	if (u->op == OP_LOAD || u->op == OP_SHUFFLE || depth > 500)
		return 1;
	for (i = 0; i < u->nsrc; i++)
		if (has_load(u->src[i], depth + 1))
			return 1;
	return 0;
}

/* an index expression or gate simplified; data-dependent ones are left alone */
static UOp *
simp(Kernel *k, UOp *x, Err *e)
{
	UOp *y;

	if (has_load(x, 0))
		return x;
	if (uop_simplify(k->c, x, &y, e) < 0)
		return NULL;
	return y;
}

/*
** A memoized rebuild of a statement (loops, ifs, stores) and of the values
** under it (loads have indices and gates too); the value arithmetic is rebuilt
** raw, as kernel_substitute does, so float expressions never fold.
*/
static UOp *
resimp(Kernel *k, UOp *u, PMap *m, int depth, Err *e)
{
	UOp *src[64], **s = src, *r;
	int i, changed = 0;

	if ((r = pmap_get(m, u)))
		return r;
	if (depth > 2000)
		return err_set(e, "schedule: the statement nests too deep"), NULL;
	if (u->nsrc == 0 || u->op == OP_RANGE || u->op == OP_DEFINE)
		return u;
	if (u->nsrc > 64 && !(s = malloc(u->nsrc * sizeof *s)))
		return err_set(e, "schedule: out of memory"), NULL;
	for (i = 0; i < u->nsrc; i++) {
		UOp *x = u->src[i];
		int is_ix = (u->op == OP_INDEX && i > 0) || (u->op == OP_IF && i == 0)
		|| (u->op == OP_LOAD && i == 1) || (u->op == OP_STORE && i == 2);

		s[i] = is_ix ? simp(k, x, e) : resimp(k, x, m, depth + 1, e);
		if (!s[i]) {
			r = NULL;
			goto out;
		}
		changed |= s[i] != x;
	}
	if (!changed)
		r = u;
	else if (u->op == OP_LOAD)
		r = kernel_load(k, s[0], u->nsrc > 1 ? s[1] : NULL);
	else if (u->op == OP_STORE)
		r = kernel_store(k, s[0], s[1], u->nsrc > 2 ? s[2] : NULL);
	else
		r = uop_new(k->c, (Op)u->op, (DType)u->dtype, s, u->nsrc, u->arg[0], u->arg[1], u->name,
		            u->data, u->ndata);
	if (!r)
		err_set(e, "schedule: out of memory");
	else if (pmap_put(m, u, r) < 0)
		r = NULL, err_set(e, "schedule: out of memory");
out:
	if (s != src)
		free(s);
	return r;
}

UOp *
sched_simplify_stmt(Kernel *k, UOp *s, Err *e)
{
	PMap m = { 0 };
	UOp *r = resimp(k, s, &m, 0, e);

	pmap_free(&m);
	return r;
}

/*
** Independence of iterations. An access is a store or a load of one element
** (its INDEX node); the walk collects every access under the nest's body.
** For each buffer the body writes, either every access to it is an update
** x[I] = x[I] op v by one commutative op (when commute: the order changes
** only the rounding), or every access uses the same index I and I maps
** different iterations of the nest to different elements (proved by
** enumerating the iterations; outer loops are part of the element, inner
** loops are free), so that each element is touched by one iteration only.
*/

typedef struct Acc {
	const UOp *ix;       /* INDEX */
	const UOp *node;     /* the LOAD or STORE */
	int store;
} Acc;

typedef struct Walk {
	Acc *a;
	int n, cap;
	PMap seen;
	const char *bad;     /* a statement that forbids reordering */
	const UOp *local[64];/* the variables of loops inside the walked body */
	int nlocal;
} Walk;

static int
add_acc(Walk *w, const UOp *ix, const UOp *node, int store)
{
	if (w->n == w->cap) {
		int cap = w->cap ? 2 * w->cap : 32;
		Acc *na = realloc(w->a, cap * sizeof *na);

		if (!na)
			return -1;
		w->a = na;
		w->cap = cap;
	}
	w->a[w->n].ix = ix;
	w->a[w->n].node = node;
	w->a[w->n].store = store;
	w->n++;
	return 0;
}

static int
walk_value(Walk *w, const UOp *u, int depth)
{
	int i;

	if (pmap_get(&w->seen, u))
		return 0;
	if (depth > 2000 || pmap_put(&w->seen, u, (void *)u) < 0)
		return -1;
	if (u->op == OP_LOAD && add_acc(w, u->src[0], u, 0) < 0)
		return -1;
	for (i = 0; i < u->nsrc; i++)
		if (walk_value(w, u->src[i], depth + 1) < 0)
			return -1;
	return 0;
}

static int
walk_stmt(Walk *w, const UOp *s, int depth)
{
	int i;

	if (depth > 1000)
		return -1;
	switch (s->op) {
	case OP_END:
		if (w->nlocal < 64)
			w->local[w->nlocal++] = krange_var(s->src[0]);
		for (i = 1; i < s->nsrc; i++)
			if (walk_stmt(w, s->src[i], depth + 1) < 0)
				return -1;
		return 0;
	case OP_IF:
		if (walk_value(w, s->src[0], 0) < 0)
			return -1;
		for (i = 1; i < s->nsrc; i++)
			if (walk_stmt(w, s->src[i], depth + 1) < 0)
				return -1;
		return 0;
	case OP_STORE:
		if (add_acc(w, s->src[0], s, 1) < 0)
			return -1;
		for (i = 0; i < s->nsrc; i++)
			if (walk_value(w, s->src[i], 0) < 0)
				return -1;
		return 0;
	case OP_BARRIER:
		w->bad = "a barrier";
		return 0;
	case OP_MMA:
		w->bad = "an mma";
		return 0;
	case OP_LDMATRIX:
		w->bad = "an ldmatrix";
		return 0;
	case OP_CP_ASYNC:
	case OP_CP_COMMIT:
	case OP_CP_WAIT:
		w->bad = "a cp_async";
		return 0;
	case OP_WGMMA:
	case OP_WG_FENCE:
	case OP_WG_COMMIT:
	case OP_WG_WAIT:
	case OP_SETMAXNREG:
		w->bad = "a wgmma";
		return 0;
	case OP_MBAR_INIT:
	case OP_MBAR_ARRIVE:
	case OP_MBAR_WAIT:
	case OP_TMA_LOAD:
		w->bad = "an mbarrier or TMA statement";
		return 0;
	case OP_ATOMIC:
	case OP_FENCE:
		w->bad = "an atomic or a fence";
		return 0;
	default:
		w->bad = "an unknown statement";
		return 0;
	}
}

const UOp *
sched_update(const UOp *s, int *op, UOp **other)
{
	UOp *v;
	int i;

	if (!s || s->op != OP_STORE)
		return NULL;
	v = s->src[1];
	if (v->op != OP_ADD && v->op != OP_MUL && v->op != OP_MAX && v->op != OP_MIN)
		return NULL;
	for (i = 0; i < 2; i++)
		if (v->src[i]->op == OP_LOAD && v->src[i]->nsrc == 1 && v->src[i]->src[0] == s->src[0]) {
			*op = v->op;
			if (other)
				*other = v->src[1 - i];
			return v->src[i];
		}
	return NULL;
}

static uint64_t
hkey(const int64_t *v, int n)
{
	uint64_t h = 1469598103934665603ull;
	int i;

	for (i = 0; i < n; i++)
		h = (h ^ (uint64_t)v[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

static void
point_str(Buf *b, const UBind *bind, int n)
{
	int i;

	emit(b, "(");
	for (i = 0; i < n; i++)
		emit(b, "%s%s=%lld", i ? ", " : "", bind[i].name, (long long)bind[i].value);
	emit(b, ")");
}

/*
** Injectivity without enumeration: nest variable v owns dimension d when
** index d is c*v + lo, lo free of the nest variables, the part of lo that
** moves with the loops inside the nest spanning less than |c|: two
** iterations that differ in v then differ in dimension d, whatever the inner
** loops do. When every nest variable owns a dimension, the nest's
** iterations touch different elements.
*/
static int
owned(const Kernel *k, const UOp *ix, const UOp *const *nv, int n, const UOp *const *outer, int nout)
{
	int i, d, j, nd = ix->nsrc - 1;

	for (i = 0; i < n; i++) {
		int ok = 0;

		for (d = 0; d < nd && !ok; d++) {
			const UOp *x = ix->src[d + 1], *vs[64];
			UOp *v = (UOp *)nv[i], *lo, *in[64];
			int64_t c;
			int nvs = uop_vars(x, vs, 64), mine = 0, other = 0, nin = 0;

			if (nvs > 64 || has_load(x, 0))
				continue;
			for (j = 0; j < nvs; j++) {
				int q, isnest = 0, isout = 0;

				for (q = 0; q < n; q++)
					isnest |= vs[j] == nv[q];
				for (q = 0; q < nout; q++)
					isout |= vs[j] == outer[q];
				mine |= vs[j] == v;
				other |= isnest && vs[j] != v;
				if (!isnest && !isout)
					in[nin++] = (UOp *)vs[j];
			}
			if (!mine || other)
				continue;
			if (!kernel_affine_in(k->c, (UOp *)x, v, &c, &lo) || c == 0)
				continue;
			/* lo's inner part: lo - lo(inner = 0) must not depend on the outer loops */
			if (nin) {
				UOp *lo0 = kernel_at(k->c, lo, in, NULL, nin), *g;
				const UOp *gv[64];
				int ng, q, bad = 0;

				if (!lo0 || !(g = kernel_at(k->c, uop_sub(k->c, lo, lo0), NULL, NULL, 0)))
					continue;
				ng = uop_vars(g, gv, 64);
				for (j = 0; j < ng && !bad; j++)
					for (q = 0; q < nout; q++)
						bad |= gv[j] == outer[q];
				if (bad || g->vmax - g->vmin >= (c < 0 ? -c : c))
					continue;
			}
			ok = 1;
		}
		if (!ok)
			return 0;
	}
	return 1;
}

/*
** Does index ix (of an access below the nest) map different iterations of
** the nest vars nv[0..n-1] to one element? Outer variables (not nest vars,
** bound outside the nest: outer[0..nout-1]) are part of the element.
*/
static int
injective(const Kernel *k, const UOp *ix, const UOp *const *nv, int n, const UOp *const *outer,
          int nout, Err *e)
{
	const UOp *vars[64], *iv[64];
	UBind bind[64];
	int nvar = 0, niv, i, j, d, nd = ix->nsrc - 1, klen, rc = 0, nout_used = 0;
	int64_t pts = 1, p, *rec = NULL, *slot = NULL, size;
	int isout[64];

	for (d = 0; d < nd; d++)
		if (has_load(ix->src[d + 1], 0))
			return err_set(e, "index %d of %s depends on loaded data", d, ix->src[0]->name);
	/* a nest variable that is itself an index, for every nest variable: one iteration per element */
	for (i = 0; i < n; i++) {
		for (d = 0; d < nd && ix->src[d + 1] != nv[i]; d++)
			;
		if (d == nd)
			break;
	}
	if (i == n || owned(k, ix, nv, n, outer, nout))
		return 0;
	for (i = 0; i < n; i++)
		vars[nvar++] = nv[i];
	for (d = 0; d < nd; d++) {
		niv = uop_vars(ix->src[d + 1], iv, 64);
		for (i = 0; i < niv; i++) {
			for (j = 0; j < nvar && vars[j] != iv[i]; j++)
				;
			if (j == nvar) {
				if (nvar == 64)
					return err_set(e, "%s: too many variables to check", ix->src[0]->name);
				vars[nvar++] = iv[i];
			}
		}
	}
	for (i = 0; i < nvar; i++) {
		bind[i].name = vars[i]->name;
		bind[i].value = vars[i]->arg[0];
		isout[i] = 0;
		for (j = 0; j < nout; j++)
			isout[i] |= outer[j] == vars[i];
		if (uck_mul(pts, vars[i]->arg[1] - vars[i]->arg[0] + 1, &pts) < 0 || pts > SCHED_ENUM_LIMIT)
			return err_set(e, "too many iterations to check that the accesses to %s are "
			               "independent (more than %d)", ix->src[0]->name, SCHED_ENUM_LIMIT);
	}
	/* a record: the element (outer values, then the index), then the nest values */
	klen = nvar + nd + n;
	for (size = 1; size < 2 * pts; size *= 2)
		;
	rec = malloc(pts * klen * sizeof *rec);
	slot = malloc(size * sizeof *slot);
	if (!rec || !slot) {
		rc = err_set(e, "out of memory");
		goto out;
	}
	for (p = 0; p < size; p++)
		slot[p] = -1;
	for (p = 0; p < pts; p++) {
		int64_t *r = rec + p * klen, h;
		int kn = 0;

		for (i = 0; i < nvar; i++)
			if (isout[i])
				r[kn++] = bind[i].value;
		nout_used = kn;
		for (d = 0; d < nd; d++)
			if (uop_eval(ix->src[d + 1], bind, nvar, &r[kn++], e) < 0) {
				rc = -1;
				goto out;
			}
		for (; kn < nvar + nd; kn++)
			r[kn] = 0;
		for (i = 0; i < n; i++)
			r[nvar + nd + i] = bind[i].value;
		for (h = hkey(r, nvar + nd) & (size - 1);; h = (h + 1) & (size - 1)) {
			int64_t *o;

			if (slot[h] < 0) {
				slot[h] = p;
				break;
			}
			o = rec + slot[h] * klen;
			if (memcmp(o, r, (nvar + nd) * sizeof *r) != 0)
				continue;
			if (memcmp(o + nvar + nd, r + nvar + nd, n * sizeof *r) != 0) {
				Buf b;
				UBind ob[64];

				buf_init(&b);
				for (i = 0; i < n; i++) {
					ob[i].name = bind[i].name;
					ob[i].value = o[nvar + nd + i];
				}
				emit(&b, "iterations ");
				point_str(&b, ob, n);
				emit(&b, " and ");
				point_str(&b, bind, n);
				emit(&b, " both access %s[", ix->src[0]->name);
				for (d = 0; d < nd; d++)
					emit(&b, "%s%lld", d ? ", " : "", (long long)r[nout_used + d]);
				emit(&b, "]");
				err_set(e, "%s", b.s ? b.s : "");
				buf_free(&b);
				rc = -2;
				break;
			}
			break;
		}
		if (rc)
			break;
		for (i = nvar - 1; i >= 0 && ++bind[i].value > vars[i]->arg[1]; i--)
			bind[i].value = vars[i]->arg[0];
	}
out:
	free(rec);
	free(slot);
	return rc;
}

/* a with every variable of one value (a loop of one iteration) at that value */
static const UOp *
pinned(const Kernel *k, const UOp *a)
{
	const UOp *v[64];
	UOp *old[64], *val[64];
	int nv = uop_vars(a, v, 64), i, n = 0;

	for (i = 0; i < nv && i < 64; i++)
		if (v[i]->arg[0] == v[i]->arg[1]) {
			old[n] = (UOp *)v[i];
			val[n++] = uop_int(k->c, v[i]->arg[0]);
		}
	return n ? kernel_substitute(k->c, (UOp *)a, old, val, n) : a;
}

/*
** a with the variables of loops inside the body renamed in their order
** (__local0, __local1, ...; each keeps its range): two accesses equal after
** that touch one set of elements per iteration of the nest, as the init and
** the update nest of a fused target do through loops of two names.
*/
static const UOp *
canonical(const Kernel *k, const Walk *w, const UOp *a)
{
	const UOp *v[64];
	UOp *old[64], *val[64];
	char name[32];
	int nv, i, j, q, d, n = 0, seen;

	/* in the order they appear, index by index (an INDEX's dimensions; else the whole value) */
	for (d = a->op == OP_INDEX ? 1 : 0; d < (a->op == OP_INDEX ? a->nsrc : 1); d++) {
		nv = uop_vars(a->op == OP_INDEX ? a->src[d] : a, v, 64);
		for (i = 0; i < nv && i < 64 && n < 64; i++) {
			for (seen = 0, q = 0; q < n && !seen; q++)
				seen = old[q] == v[i];
			if (seen)
				continue;
			for (j = 0; j < w->nlocal; j++)
				if (v[i] == w->local[j] && v[i]->arg[0] == 0) {
					snprintf(name, sizeof name, "__local%d", n);
					old[n] = (UOp *)v[i];
					if (!(val[n] = kernel_var((Kernel *)k, name, v[i]->arg[1] + 1)))
						return a;
					n++;
					break;
				}
		}
	}
	if (!n)
		return a;
	a = kernel_substitute(k->c, (UOp *)a, old, val, n);
	/* in normal form, so that i0*4 + x and x + i0*4 compare equal */
	if (a && a->op == OP_INDEX && a->nsrc <= 1 + T_MAXDIM) {
		UOp *src[1 + T_MAXDIM], *o;
		Err ie;

		src[0] = a->src[0];
		for (i = 1; i < a->nsrc; i++)
			src[i] = uop_simplify(k->c, a->src[i], &o, &ie) == 0 ? o : a->src[i];
		a = uop_new(k->c, OP_INDEX, (DType)a->dtype, src, a->nsrc, a->arg[0], a->arg[1], a->name, a->data,
		            a->ndata);
	}
	return a;
}

/* the same element: the same index, or one that differs by loops of one iteration (i and 0), or
** by the names of loops inside the body */
static int
same_index(const Kernel *k, const Walk *w, const UOp *a, const UOp *b)
{
	return a == b || pinned(k, a) == pinned(k, b)
	    || canonical(k, w, pinned(k, a)) == canonical(k, w, pinned(k, b));
}

int
sched_independent(const Kernel *k, int st, UOp *const *loops, int n, int commute, Err *e)
{
	return sched_independent_private(k, st, loops, n, commute, 0, e);
}

int
sched_independent_private(const Kernel *k, int st, UOp *const *loops, int n, int commute,
                          unsigned scopes, Err *e)
{
	Walk w = { 0 };
	UOp *p[256];
	const UOp *nv[64], *outer[256];
	int np, nout = 0, i, j, rc = 0;

	if (n < 1 || n > 64)
		return err_set(e, "schedule: %d loops", n);
	for (i = 0; i < n; i++)
		nv[i] = krange_var(loops[i]->src[0]);
	np = sched_path(k, st, loops[0], p, 256);
	for (i = 0; i + 1 < np; i++)
		if (p[i]->op == OP_END)
			outer[nout++] = krange_var(p[i]->src[0]);
	for (i = 1; i < loops[n - 1]->nsrc; i++)
		if (walk_stmt(&w, loops[n - 1]->src[i], 0) < 0) {
			rc = err_set(e, "the loop body is too large to analyze");
			goto out;
		}
	if (w.bad) {
		rc = err_set(e, "the loop body holds %s", w.bad);
		goto out;
	}
	for (i = 0; i < w.n && rc == 0; i++) {
		const UOp *def = w.a[i].ix->src[0], *same = NULL;
		int written = 0, first = 1, op = -1, allupd = 1, op1;

		/* each written buffer once: at its first access */
		for (j = 0; j < i && first; j++)
			first = w.a[j].ix->src[0] != def;
		if (!first || (scopes >> def->arg[1] & 1))
			continue;
		for (j = i; j < w.n; j++)
			if (w.a[j].ix->src[0] == def && w.a[j].store)
				written = 1;
		if (!written)
			continue;
		/* commutative updates only? */
		for (j = i; j < w.n && allupd; j++) {
			const UOp *a = w.a[j].node;

			if (w.a[j].ix->src[0] != def)
				continue;
			if (w.a[j].store) {
				if (!sched_update(a, &op1, NULL) || (op >= 0 && op1 != op))
					allupd = 0;
				op = op1;
			} else {
				int m, isupd = 0;

				for (m = i; m < w.n && !isupd; m++)
					isupd = w.a[m].store && w.a[m].ix->src[0] == def && sched_update(w.a[m].node, &op1, NULL) == a;
				allupd = isupd;
			}
		}
		if (commute && allupd)
			continue;
		/* one index for every access, each element touched by one iteration */
		for (j = i; j < w.n; j++) {
			if (w.a[j].ix->src[0] != def)
				continue;
			if (same && !same_index(k, &w, w.a[j].ix, same)) {
				Buf b;

				buf_init(&b);
				kernel_print_expr(&b, k, same);
				emit(&b, " and ");
				kernel_print_expr(&b, k, w.a[j].ix);
				rc = err_set(e, "the body accesses %s as %s, and writes it: one iteration may "
				             "touch what another wrote", def->name, b.s ? b.s : "");
				buf_free(&b);
				break;
			}
			same = w.a[j].ix;
		}
		if (rc == 0 && injective(k, same, nv, n, outer, nout, e) < 0)
			rc = -1;
	}
out:
	free(w.a);
	pmap_free(&w.seen);
	return rc;
}

int
sched_apply_loops(Schedule *s, const char *what, const char *stage, const char *const *loops, int n,
                  int (*fn)(Kernel *, int, const char *const *, int, Err *), Err *e)
{
	Kernel *next;
	Buf line;
	Err ie;
	int st, i, rc;

	if ((st = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "%s: %s", what, ie.msg);
	if (!(next = sched_begin(s, e)))
		return -1;
	if (fn(next, st, loops, n, &ie) < 0) {
		kernel_free(next);
		return err_set(e, "%s: %s", what, ie.msg);
	}
	buf_init(&line);
	emit(&line, "s:%s(", what);
	sched_quote(&line, stage);
	emit(&line, ", {");
	for (i = 0; i < n; i++) {
		emit(&line, "%s", i ? ", " : "");
		sched_quote(&line, loops[i]);
	}
	emit(&line, "})");
	rc = line.oom ? (kernel_free(next), err_set(e, "%s: out of memory", what))
	   : sched_commit(s, next, what, line.s, e);
	buf_free(&line);
	return rc;
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

/* ---- editing stages and buffers (placement and caches) ---- */

int
sched_insert_stage(Kernel *k, int at, const char *name, UOp *body, Err *e)
{
	KStage s;
	int n;

	if (at < 0 || at > k->nstage)
		return err_set(e, "schedule: no stage position %d", at);
	if ((n = kernel_add_stage(k, name, body, NULL, e)) < 0)
		return -1;
	s = k->stage[n];
	memmove(&k->stage[at + 1], &k->stage[at], (size_t)(n - at) * sizeof *k->stage);
	k->stage[at] = s;
	return at;
}

void
sched_remove_stage(Kernel *k, int st)
{
	if (st < 0 || st >= k->nstage)
		return;
	memmove(&k->stage[st], &k->stage[st + 1], (size_t)(k->nstage - st - 1) * sizeof *k->stage);
	k->nstage--;
}

int
sched_rewrite_all(Kernel *k, UOp *const *old, UOp *const *new, int n, Err *e)
{
	int i;

	for (i = 0; i < k->nstage; i++) {
		UOp *b = kernel_substitute(k->c, k->stage[i].body, old, new, n);

		if (!b)
			return err_set(e, "schedule: out of memory");
		k->stage[i].body = b;
	}
	return 0;
}

/*
** A DEFINE carries its buffer's number and scope, so dropping a buffer
** renumbers the ones after it: each gets a new DEFINE, and every access in
** every stage is rebuilt on it (one simultaneous substitution).
*/
int
sched_drop_buffer(Kernel *k, int b, Err *e)
{
	UOp **old, **new;
	int i, n = 0, rc = 0;

	if (b < 0 || b >= k->nbuf)
		return err_set(e, "schedule: no buffer %d", b);
	old = malloc((k->nbuf + 1) * sizeof *old);
	new = malloc((k->nbuf + 1) * sizeof *new);
	if (!old || !new) {
		rc = err_set(e, "schedule: out of memory");
		goto out;
	}
	for (i = b + 1; i < k->nbuf; i++) {
		KBuf *x = &k->buf[i];

		old[n] = x->def;
		new[n] = uop_new(k->c, OP_DEFINE, x->dtype, NULL, 0, i - 1, x->scope, x->name, NULL, 0);
		if (!new[n]) {
			rc = err_set(e, "schedule: out of memory");
			goto out;
		}
		n++;
	}
	if (n && sched_rewrite_all(k, old, new, n, e) < 0) {
		rc = -1;
		goto out;
	}
	memmove(&k->buf[b], &k->buf[b + 1], (size_t)(k->nbuf - b - 1) * sizeof *k->buf);
	k->nbuf--;
	for (i = b; i < k->nbuf; i++)
		k->buf[i].def = new[i - b];
out:
	free(old);
	free(new);
	return rc;
}

/* does statement or value u access (load, store or mma) the buffer defined by def? */
static int
touches(const UOp *u, const UOp *def, int store, PMap *seen, int depth)
{
	int i;

	if (depth > 4000 || pmap_get(seen, u))
		return 0;
	if (pmap_put(seen, u, (void *)u) < 0)
		return 1;
	if (u->op == OP_STORE && store >= 0 && u->src[0]->src[0] == def)
		return store == 1 || store == 2;
	if (u->op == OP_LOAD && u->src[0]->src[0] == def && (store == 0 || store == 2))
		return 1;
	if (u->op == OP_MMA)
		for (i = 0; i < u->nsrc; i++)
			if (u->src[i] == def && (store == 2 || (store == 1) == (i == 0)))
				return 1;
	/* an ldmatrix writes its destination and reads the row its index names */
	if (u->op == OP_LDMATRIX && u->nsrc == 2) {
		if (u->src[0] == def && store >= 1)
			return 1;
		if (u->src[1]->src[0] == def && (store == 0 || store == 2))
			return 1;
	}
	/* a wgmma reads and writes its accumulator and reads its two tiles */
	if (u->op == OP_WGMMA && u->nsrc == 3) {
		if (u->src[0] == def && store >= 0)
			return 1;
		if ((u->src[1]->src[0] == def || u->src[2]->src[0] == def) && (store == 0 || store == 2))
			return 1;
	}
	/* a TMA writes its destination and reads its source; an mbarrier statement writes its barrier */
	if (u->op == OP_TMA_LOAD && u->nsrc == 3) {
		if (u->src[0]->src[0] == def && store >= 1)
			return 1;
		if ((u->src[1]->src[0] == def || u->src[2]->src[0] == def) && (store == 0 || store == 2))
			return 1;
	}
	if ((u->op == OP_MBAR_INIT || u->op == OP_MBAR_ARRIVE || u->op == OP_MBAR_WAIT) && u->src[0]->src[0] == def
	&& store >= 1)
		return 1;
	/* a cp.async writes its destination and reads its source */
	if (u->op == OP_CP_ASYNC && u->nsrc == 2) {
		if (u->src[0]->src[0] == def && store >= 1)
			return 1;
		if (u->src[1]->src[0] == def && (store == 0 || store == 2))
			return 1;
	}
	for (i = 0; i < u->nsrc; i++)
		if (touches(u->src[i], def, store, seen, depth + 1))
			return 1;
	return 0;
}

int
sched_reads(const Kernel *k, const UOp *s, int b)
{
	PMap seen = { 0 };
	int r = touches(s, k->buf[b].def, 0, &seen, 0);

	pmap_free(&seen);
	return r;
}

int
sched_writes(const Kernel *k, const UOp *s, int b)
{
	PMap seen = { 0 };
	int r = touches(s, k->buf[b].def, 1, &seen, 0);

	pmap_free(&seen);
	return r;
}

static void
loads_of(const UOp *u, const UOp *def, UOp **out, int *n, int max, PMap *seen, int depth)
{
	int i;

	if (depth > 4000 || pmap_get(seen, u) || pmap_put(seen, u, (void *)u) < 0)
		return;
	if (u->op == OP_LOAD && u->src[0]->src[0] == def && *n < max)
		out[(*n)++] = (UOp *)u;
	for (i = 0; i < u->nsrc; i++)
		loads_of(u->src[i], def, out, n, max, seen, depth + 1);
}

int
sched_loads(const UOp *s, const UOp *def, UOp **out, int max)
{
	PMap seen = { 0 };
	int n = 0;

	loads_of(s, def, out, &n, max, &seen, 0);
	pmap_free(&seen);
	return n;
}

static void
stores_of(UOp *s, UOp **out, int *n, int max, int depth)
{
	int i;

	if (depth > 1000)
		return;
	if (s->op == OP_STORE && *n < max)
		out[(*n)++] = s;
	if (s->op == OP_END || s->op == OP_IF)
		for (i = 1; i < s->nsrc; i++)
			stores_of(s->src[i], out, n, max, depth + 1);
}

int
sched_stores(const Kernel *k, int st, UOp **out, int max)
{
	int n = 0;

	if (st >= 0 && st < k->nstage)
		stores_of(k->stage[st].body, out, &n, max, 0);
	return n;
}

UOp *
sched_copy_nest(Kernel *k, int dst, int src)
{
	const KBuf *d = &k->buf[dst];
	UOp *v[T_MAXDIM], *s;
	int i;

	for (i = 0; i < d->ndim; i++) {
		char name[16];

		snprintf(name, sizeof name, "ax%d", i);
		if (!(v[i] = kernel_var(k, name, d->shape[i])))
			return NULL;
	}
	s = kernel_store(k, kernel_index(k, dst, v, d->ndim),
	                 kernel_load(k, kernel_index(k, src, v, d->ndim), NULL), NULL);
	for (i = d->ndim - 1; i >= 0 && s; i--)
		s = kernel_loop(k, kernel_range(k, v[i], AX_LOOP, HW_NONE), &s, 1);
	return s;
}

static int
is_reduce(AxisType t)
{
	return t == AX_REDUCE || t == AX_GROUP_REDUCE;
}

static const char *
not_elementwise(const UOp *s, const UOp **loop, int depth)
{
	const char *r;
	int i;

	if (depth > 1000)
		return "a statement nested too deep";
	if (s->op == OP_BARRIER)
		return "a barrier";
	if (s->op == OP_MMA)
		return "an mma";
	if (s->op == OP_LDMATRIX)
		return "an ldmatrix";
	if (s->op == OP_CP_ASYNC || s->op == OP_CP_COMMIT || s->op == OP_CP_WAIT)
		return "a cp_async";
	if (s->op == OP_WGMMA || s->op == OP_WG_FENCE || s->op == OP_WG_COMMIT || s->op == OP_WG_WAIT
	|| s->op == OP_SETMAXNREG)
		return "a wgmma";
	if (s->op == OP_MBAR_INIT || s->op == OP_MBAR_ARRIVE || s->op == OP_MBAR_WAIT || s->op == OP_TMA_LOAD)
		return "an mbarrier or TMA statement";
	if (s->op == OP_ATOMIC || s->op == OP_FENCE)
		return "an atomic or a fence";
	if (s->op == OP_END && is_reduce(krange_type(s->src[0]))) {
		*loop = s;
		return "a reduction loop";
	}
	if (s->op == OP_END || s->op == OP_IF)
		for (i = 1; i < s->nsrc; i++)
			if ((r = not_elementwise(s->src[i], loop, depth + 1)))
				return r;
	return NULL;
}

const char *
sched_not_elementwise(const UOp *s, const UOp **loop)
{
	return not_elementwise(s, loop, 0);
}

int
sched_apply_stage(Schedule *s, const char *what, const char *stage, int (*fn)(Kernel *, int, Err *),
                  Err *e)
{
	Kernel *next;
	Buf line;
	Err ie;
	int st, rc;

	memset(&ie, 0, sizeof ie);
	if ((st = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "%s: %s", what, ie.msg);
	if (!(next = sched_begin(s, e)))
		return -1;
	if (fn(next, st, &ie) < 0) {
		kernel_free(next);
		return err_set(e, "%s: %s", what, ie.msg);
	}
	buf_init(&line);
	emit(&line, "s:%s(", what);
	sched_quote(&line, stage);
	emit(&line, ")");
	rc = line.oom ? (kernel_free(next), err_set(e, "%s: out of memory", what))
	   : sched_commit(s, next, what, line.s, e);
	buf_free(&line);
	return rc;
}


int
sched_unique_loops(Kernel *k, int st, Err *e)
{
	UOp *l[256], *nl, *nv;
	const UOp *v;
	int n, i, j, rounds;

	for (rounds = 0; rounds < 256; rounds++) {
		n = sched_loops(k, st, l, 256);
		for (i = 1; i < n; i++) {
			for (j = 0; j < i && strcmp(krange_var(l[j]->src[0])->name, krange_var(l[i]->src[0])->name); j++)
				;
			if (j < i)
				break;
		}
		if (i >= n)
			return 0;
		/* the later loop of the two takes a fresh name, in its own subtree only */
		v = krange_var(l[i]->src[0]);
		if (!(nv = sched_fresh_var(k, st, v->name, krange_extent(l[i]->src[0])))
		|| !(nl = kernel_substitute(k->c, l[i], (UOp *const *)&v, &nv, 1)))
			return err_set(e, "out of memory");
		if (sched_replace(k, st, l[i], nl, e) < 0)
			return -1;
	}
	return err_set(e, "stage %s: too many loops of one name", k->stage[st].name);
}

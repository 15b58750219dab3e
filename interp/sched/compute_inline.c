/* compute_inline.c - compute_inline: an element-wise stage folded into the loads that read its buffer (TVM's compute_inline). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

enum { MAXLOADS = 256 };

static void
all_loads(UOp *u, UOp **out, int *n, int max, int depth)
{
	int i;

	if (depth > 2000 || *n >= max)
		return;
	if (u->op == OP_LOAD) {
		for (i = 0; i < *n && out[i] != u; i++)
			;
		if (i == *n)
			out[(*n)++] = u;
	}
	for (i = 0; i < u->nsrc; i++)
		all_loads(u->src[i], out, n, max, depth + 1);
}

/*
** v under gate: a where does not keep its untaken side from being
** evaluated, so every load in v is gated too (a padded read inlines a value
** whose loads would leave the buffer where the gate is false).
*/
static UOp *
gated(Kernel *k, UOp *v, UOp *gate, DType t)
{
	UOp *ld[MAXLOADS], *ng[MAXLOADS];
	int n = 0, i;

	all_loads(v, ld, &n, MAXLOADS, 0);
	if (n == MAXLOADS)
		return NULL;
	for (i = 0; i < n; i++) {
		UOp *g = ld[i]->nsrc > 1 ? uop_alu(k->c, OP_AND, gate, ld[i]->src[1]) : gate;

		if (!(ng[i] = kernel_load(k, ld[i]->src[0], g)))
			return NULL;
	}
	if (!(v = kernel_substitute(k->c, v, ld, ng, n)))
		return NULL;
	return kernel_alu(k, OP_WHERE, t, (UOp *[]){ gate, v, kernel_const(k, t, 0) }, 3);
}

/*
** The stage must be B[v0, ..., v{n-1}] = f, one store under a nest of loops
** whose variables are B's coordinates (each loop one dimension, its whole
** extent): then f with v_d replaced by the d-th index of a load of B is that
** element's value, and every load of B in a later stage becomes f at its
** indices (a gated load, which reads 0 when its gate is false, becomes
** where(gate, f, 0) with f's own loads gated). f reads other buffers; none
** of them may change between the stage and a load that now computes f (a
** later stage writing one would make the inlined value see the new
** contents). TVM refuses the same blocks: reductions, blocks of several
** stores, outputs.
*/
int
sched_compute_inline_in(Kernel *k, int st, Err *e)
{
	const char *sn = k->stage[st].name, *why;
	const UOp *rl = NULL;
	UOp *sv[2], *path[256], *store, *f, *vars[T_MAXDIM];
	int reads[MAXLOADS], ns, np, nd, nr, b, d, i, j, q, nloop = 0;
	KBuf *B;

	if ((why = sched_not_elementwise(k->stage[st].body, &rl))) {
		if (rl)
			return err_set(e, "stage %s reduces (loop %s is %s); TVM's compute_inline takes an "
			               "element-wise block, not a reduction", sn, krange_var(rl->src[0])->name,
			               axistype_name(krange_type(rl->src[0])));
		return err_set(e, "stage %s holds %s; compute_inline takes an element-wise stage", sn, why);
	}
	ns = sched_stores(k, st, sv, 2);
	if (ns != 1)
		return err_set(e, "stage %s has %s stores; compute_inline takes a stage of one store",
		               sn, ns == 0 ? "no" : "several");
	store = sv[0];
	b = (int)store->src[0]->src[0]->arg[0];
	B = &k->buf[b];
	if (B->role == KB_OUTPUT)
		return err_set(e, "stage %s writes %s, an output; TVM does not inline an output block", sn,
		               B->name);
	if (B->role == KB_INPUT)
		return err_set(e, "stage %s writes %s, an input, in place; compute_inline takes a stage "
		               "that computes a temporary", sn, B->name);
	f = store->src[1];
	if (sched_reads(k, f, b))
		return err_set(e, "stage %s reads %s while it writes it; TVM's compute_inline takes an "
		               "element-wise block, not a reduction", sn, B->name);
	if (store->nsrc > 2) {
		Buf g;

		buf_init(&g);
		kernel_print_expr(&g, k, store->src[2]);
		err_set(e, "stage %s: the store to %s is gated by %s; compute_inline does not carry a "
		        "stage's guard into a where at its loads", sn, B->name, g.s ? g.s : "?");
		buf_free(&g);
		return -1;
	}
	np = sched_path(k, st, store, path, 256);
	for (i = 0; i + 1 < np; i++) {
		if (path[i]->op == OP_IF && path[i]->src[0]->op == OP_CONST)
			continue;   /* a sequence */
		if (path[i]->op == OP_IF) {
			Buf g;

			buf_init(&g);
			kernel_print_expr(&g, k, path[i]->src[0]);
			err_set(e, "stage %s: the store to %s is under `if %s:`; compute_inline does not carry "
			        "a stage's guard into a where at its loads (inline before splitting by a "
			        "factor that leaves a tail)", sn, B->name, g.s ? g.s : "?");
			buf_free(&g);
			return -1;
		}
		nloop++;
	}
	nd = B->ndim;
	for (d = 0; d < nd; d++) {
		const UOp *x = store->src[0]->src[d + 1];
		Buf g;

		for (i = 0; i + 1 < np; i++)
			if (path[i]->op == OP_END && krange_var(path[i]->src[0]) == x)
				break;
		for (j = 0; j < d && i + 1 < np; j++)
			if (vars[j] == x)
				i = np;
		if (i + 1 < np && krange_extent(path[i]->src[0]) == B->shape[d]) {
			vars[d] = (UOp *)x;
			continue;
		}
		buf_init(&g);
		kernel_print_store(&g, k, store);
		err_set(e, "stage %s: the store %s does not write %s by its loop variables (index %d is "
		        "not a loop of extent %lld of its own); inline before splitting or fusing its loops",
		        sn, g.s ? g.s : "?", B->name, d, (long long)B->shape[d]);
		buf_free(&g);
		return -1;
	}
	if (nloop != nd) {
		for (i = 0; i + 1 < np; i++) {
			if (path[i]->op != OP_END)
				continue;
			for (d = 0; d < nd && vars[d] != krange_var(path[i]->src[0]); d++)
				;
			if (d == nd)
				break;
		}
		return err_set(e, "stage %s: loop %s does not index %s, so the stage writes each element "
		               "more than once", sn, krange_var(path[i]->src[0])->name, B->name);
	}
	for (j = 0; j < k->nstage; j++) {
		if (j == st)
			continue;
		if (sched_writes(k, k->stage[j].body, b))
			return err_set(e, "stage %s also writes %s; compute_inline takes the only stage that "
			               "writes its buffer", k->stage[j].name, B->name);
		if (j < st && sched_reads(k, k->stage[j].body, b))
			return err_set(e, "stage %s reads %s before stage %s writes it", k->stage[j].name,
			               B->name, sn);
	}
	/* what f reads must stay as it is up to the last stage that loads B */
	nr = 0;
	for (q = 0; q < k->nbuf; q++)
		if (q != b && sched_reads(k, f, q) && nr < MAXLOADS)
			reads[nr++] = q;
	for (j = st + 1; j < k->nstage; j++) {
		int last;

		if (!sched_reads(k, k->stage[j].body, b))
			continue;
		for (last = st + 1; last <= j; last++)
			for (i = 0; i < nr; i++)
				if (sched_writes(k, k->stage[last].body, reads[i]))
					return err_set(e, "stage %s writes %s, which %s's value reads, before stage %s "
					               "reads %s: the inlined value would see the new %s",
					               k->stage[last].name, k->buf[reads[i]].name, sn,
					               k->stage[j].name, B->name, k->buf[reads[i]].name);
	}
	/* every load of B in a later stage becomes f at its indices */
	for (j = st + 1; j < k->nstage; j++) {
		UOp *ld[MAXLOADS], *val[MAXLOADS], *body;
		int nl = sched_loads(k->stage[j].body, B->def, ld, MAXLOADS);

		if (nl == 0)
			continue;
		if (nl == MAXLOADS)
			return err_set(e, "stage %s loads %s in more than %d ways", k->stage[j].name, B->name,
			               MAXLOADS - 1);
		for (i = 0; i < nl; i++) {
			UOp *v = kernel_substitute(k->c, f, vars, ld[i]->src[0]->src + 1, nd);

			if (v && ld[i]->nsrc > 1)
				v = gated(k, v, ld[i]->src[1], B->dtype);
			if (!(val[i] = v))
				return err_set(e, "out of memory");
		}
		if (!(body = kernel_substitute(k->c, k->stage[j].body, ld, val, nl))
		|| !(body = sched_simplify_stmt(k, body, e)))
			return e->msg[0] ? -1 : err_set(e, "out of memory");
		k->stage[j].body = body;
	}
	sched_remove_stage(k, st);
	return sched_drop_buffer(k, b, e);
}

int
sched_compute_inline(Schedule *s, const char *stage, Err *e)
{
	return sched_apply_stage(s, "compute_inline", stage, sched_compute_inline_in, e);
}

/* optops.c - tinygrad's OptOps on the schedule: Split to a target axis type, Padto, Swap, Nolocals. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sched.h"

/*
** tinygrad's table (tinygrad-spec.tex, "Kernel Optimizations"): an OptOp
** splits an axis by k and gives the new sub-axis a type, inner or outer:
**   LOCAL     from g, L (spatial)   inner   workgroup-local dimension
**   UPCAST    from g, l, L          inner   register-level vectorization
**   UNROLL    from R, G (reduce)    inner   fully unrolled loop
**   GROUP     from R                inner   shared-memory group reduction (GROUP_REDUCE)
**   GROUPTOP  from R                outer   the same, the sub-axis outside
**   THREAD    from g (spatial)      outer   CPU thread parallelism
** and Padto pads an axis to a multiple with a validity guard, Swap swaps two
** axes, Nolocals forbids LOCAL axes. Each is one step of the schedule (one
** line of its trace), built from the same split as TVM's. TC (tensor cores)
** is kernel.gemm's mma dispatch, not an OptOp here.
*/
typedef struct OptInfo {
	const char *name;
	AxisType target;
	int outer;      /* the new sub-axis is the outer one (top) */
	int reduce;     /* applies to reduce axes (else spatial) */
} OptInfo;

static const OptInfo opts[] = {
	{ "LOCAL", AX_LOCAL, 0, 0 },
	{ "UPCAST", AX_UPCAST, 0, 0 },
	{ "UNROLL", AX_UNROLL, 0, 1 },
	{ "GROUP", AX_GROUP_REDUCE, 0, 1 },
	{ "GROUPTOP", AX_GROUP_REDUCE, 1, 1 },
	{ "THREAD", AX_THREAD, 1, 0 },
};

static int
is_reduce(AxisType t)
{
	return t == AX_REDUCE || t == AX_GROUP_REDUCE || t == AX_UNROLL;
}

/* loop var (an END node's) retyped */
static int
retype(Kernel *k, int st, const char *var, AxisType t, Err *e)
{
	UOp *l = sched_loop(k, st, var, e), *r, *nl;

	if (!l)
		return -1;
	r = kernel_range(k, krange_var(l->src[0]), t, krange_hw(l->src[0]));
	nl = r ? kernel_loop(k, r, l->src + 1, l->nsrc - 1) : NULL;
	if (!nl)
		return err_set(e, "out of memory");
	return sched_replace(k, st, l, nl, e);
}

/* any LOCAL loop in the kernel */
static const char *
has_local(const Kernel *k)
{
	UOp *l[256];
	int st, n, i;

	for (st = 0; st < k->nstage; st++)
		for (n = sched_loops(k, st, l, 256), i = 0; i < n; i++)
			if (krange_type(l[i]->src[0]) == AX_LOCAL)
				return krange_var(l[i]->src[0])->name;
	return NULL;
}

static int
nolocals(const Schedule *s)
{
	int i;

	for (i = 0; i < s->nstep; i++)
		if (strstr(s->step[i].line, "apply_opt(\"NOLOCALS\""))
			return 1;
	return 0;
}

/* Padto: loop i of extent E runs to ceil(E/m)*m with its body under `if i < E`. */
static int
padto(Kernel *k, int st, const char *var, int64_t m, Err *e)
{
	UOp *l = sched_loop(k, st, var, e), *old, *nv, *r, *g, *body, *nl;
	int64_t ext, pad;

	if (!l)
		return -1;
	if (m < 1)
		return err_set(e, "stage %s: loop %s: the multiple %lld is not positive", k->stage[st].name, var,
		               (long long)m);
	old = krange_var(l->src[0]);
	ext = krange_extent(l->src[0]);
	pad = (ext + m - 1) / m * m;
	if (pad == ext)
		return 0;
	if (krange_hw(l->src[0]) != HW_NONE)
		return err_set(e, "stage %s: loop %s is bound to %s; pad it before binding", k->stage[st].name, var,
		               hwaxis_name(krange_hw(l->src[0])));
	nv = kernel_var(k, var, pad);
	r = kernel_range(k, nv, krange_type(l->src[0]), HW_NONE);
	g = uop_alu(k->c, OP_CMPLT, nv, uop_int(k->c, ext));
	body = kernel_if(k, kernel_const(k, DT_BOOL, 1), l->src + 1, l->nsrc - 1);
	body = body ? kernel_substitute(k->c, body, &old, &nv, 1) : NULL;
	body = body ? kernel_if(k, g, &body, 1) : NULL;
	nl = body && r ? kernel_loop(k, r, &body, 1) : NULL;
	if (!nl)
		return err_set(e, "out of memory");
	return sched_replace(k, st, l, nl, e);
}

int
sched_apply_opt(Schedule *s, const char *op, const char *stage, const char *loop, int64_t arg,
                const char *other, Err *e)
{
	const OptInfo *oi = NULL;
	Kernel *next;
	UOp *l, *vars[2];
	Err ie;
	char line[400];
	int st, i;
	size_t n;

	for (i = 0; i < (int)(sizeof opts / sizeof opts[0]); i++)
		if (strcasecmp(op, opts[i].name) == 0)
			oi = &opts[i];
	if (strcasecmp(op, "NOLOCALS") == 0) {
		const char *lv = has_local(s->k);

		if (lv)
			return err_set(e, "apply_opt NOLOCALS: loop %s is LOCAL already", lv);
		if (!(next = sched_begin(s, e)))
			return -1;
		return sched_commit(s, next, "apply_opt", "s:apply_opt(\"NOLOCALS\")", e);
	}
	if (strcasecmp(op, "TC") == 0)
		return err_set(e, "apply_opt TC: tensor cores come through kernel.gemm's mma dispatch, which "
		               "places fragments by the atom's TV layouts");
	if (!oi && strcasecmp(op, "PADTO") != 0 && strcasecmp(op, "SWAP") != 0)
		return err_set(e, "apply_opt: unknown OptOp %s (LOCAL, UPCAST, UNROLL, GROUP, GROUPTOP, THREAD, "
		               "PADTO, SWAP, NOLOCALS)", op);
	if ((st = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "apply_opt %s: %s", op, ie.msg);
	if (!(l = sched_loop(s->k, st, loop, &ie)))
		return err_set(e, "apply_opt %s: %s", op, ie.msg);
	if (!(next = sched_begin(s, e)))
		return -1;
	n = (size_t)snprintf(line, sizeof line, "s:apply_opt(\"%s\", \"%s\", \"%s\"", oi ? oi->name : op,
	                     stage, loop);
	if (strcasecmp(op, "SWAP") == 0) {
		const char *pair[2] = { other ? other : "", loop };

		if (!other || sched_reorder_in(next, st, pair, 2, &ie) < 0) {
			kernel_free(next);
			return err_set(e, "apply_opt SWAP: %s", other ? ie.msg : "give the other loop");
		}
		snprintf(line + n, sizeof line - n, ", \"%s\")", other);
		return sched_commit(s, next, "apply_opt", line, e);
	}
	if (strcasecmp(op, "PADTO") == 0) {
		if (padto(next, st, loop, arg, &ie) < 0) {
			kernel_free(next);
			return err_set(e, "apply_opt PADTO: %s", ie.msg);
		}
		snprintf(line + n, sizeof line - n, ", %lld)", (long long)arg);
		return sched_commit(s, next, "apply_opt", line, e);
	}
	{
		AxisType t = krange_type(l->src[0]);
		int64_t ext = krange_extent(l->src[0]), k = arg ? arg : ext;
		int64_t f[2];

		if (oi->reduce != is_reduce(t)) {
			kernel_free(next);
			return err_set(e, "apply_opt %s: stage %s: loop %s is %s; %s splits %s axes", oi->name, stage,
			               loop, axistype_name(t), oi->name, oi->reduce ? "reduce" : "spatial");
		}
		if (oi->target == AX_LOCAL && nolocals(s)) {
			kernel_free(next);
			return err_set(e, "apply_opt LOCAL: NOLOCALS was applied (step \"s:apply_opt(\\\"NOLOCALS\\\")\")");
		}
		if (k < 1 || ext % k) {
			kernel_free(next);
			return err_set(e, "apply_opt %s: stage %s: loop %s of extent %lld does not split by %lld "
			               "(PADTO first)", oi->name, stage, loop, (long long)ext, (long long)k);
		}
		f[0] = oi->outer ? k : ext / k;
		f[1] = oi->outer ? ext / k : k;
		if (sched_split_in(next, st, loop, f, 2, vars, &ie) < 0
		|| retype(next, st, vars[oi->outer ? 0 : 1]->name, oi->target, &ie) < 0) {
			kernel_free(next);
			return err_set(e, "apply_opt %s: %s", oi->name, ie.msg);
		}
		snprintf(line + n, sizeof line - n, ", %lld)", (long long)arg);
		return sched_commit(s, next, "apply_opt", line, e);
	}
}

/* annotate.c - parallel, vectorize, unroll: a loop's axis type (TVM's annotations, tinygrad's THREAD, UPCAST, UNROLL). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/*
** The three change only the axis type of a loop's RANGE; the interpreter runs
** the loop as before, the emitters read the type. One file for the three,
** as they share everything but their preconditions:
**   parallel   THREAD (a CPU thread per iteration, OpenMP's parallel for):
**              not a reduction loop (a parallel reduction races on its
**              accumulator), not inside a bound or parallel loop (nested
**              parallelism), iterations independent; a register buffer
**              counts as one per thread when sched_regs_private proves
**              that no value crosses iterations through it
**   vectorize  UPCAST: an innermost loop (no loop in its body) of extent at
**              most 64, not a reduction loop, iterations independent (the
**              lanes of a vector run at once)
**   unroll     UNROLL: extent at most 1024 (the body is copied that often)
** None applies to a bound loop: it is not a loop but a thread's coordinate.
*/
enum { VEC_MAX = 64, UNROLL_MAX = 1024 };

static int
has_loop(const UOp *s, int depth)
{
	int i;

	if (depth > 1000)
		return 1;
	if (s->op == OP_END)
		return 1;
	if (s->op == OP_IF)
		for (i = 1; i < s->nsrc; i++)
			if (has_loop(s->src[i], depth + 1))
				return 1;
	return 0;
}

static int
check(Kernel *k, int st, UOp *l, AxisType t, const char *what, Err *e)
{
	const char *sn = k->stage[st].name, *ln = krange_var(l->src[0])->name;
	UOp *r = l->src[0], *p[1024];
	int64_t ext = krange_extent(r);
	int reduce = krange_type(r) == AX_REDUCE || krange_type(r) == AX_GROUP_REDUCE, i, np;
	char why[200] = "";
	Err ie;

	if (krange_hw(r) != HW_NONE)
		return err_set(e, "stage %s: loop %s is bound to %s; a bound loop is a thread's coordinate, "
		               "not a loop to %s", sn, ln, hwaxis_name(krange_hw(r)), what);
	switch (t) {
	case AX_THREAD:
		if (reduce)
			return err_set(e, "stage %s: loop %s is %s; a parallel reduction races on its "
			               "accumulator (rfactor first)", sn, ln, axistype_name(krange_type(r)));
		np = sched_path(k, st, l, p, 1024);
		for (i = 0; i + 1 < np; i++) {
			const UOp *o;

			if (p[i]->op != OP_END)
				continue;
			o = p[i]->src[0];
			if (krange_hw(o) != HW_NONE)
				return err_set(e, "stage %s: loop %s is inside loop %s, bound to %s; nested "
				               "parallelism is not supported", sn, ln, krange_var(o)->name,
				               hwaxis_name(krange_hw(o)));
			if (krange_type(o) == AX_THREAD)
				return err_set(e, "stage %s: loop %s is inside loop %s, which is parallel; nested "
				               "parallelism is not supported", sn, ln, krange_var(o)->name);
			if (krange_type(o) == AX_UPCAST)
				return err_set(e, "stage %s: loop %s is inside loop %s, an UPCAST (vector) loop; a "
				               "parallel loop cannot run inside the lanes of a vector (OpenMP admits "
				               "no parallel region inside simd): parallel an outer loop", sn, ln,
				               krange_var(o)->name);
		}
		break;
	case AX_UPCAST:
		if (reduce)
			return err_set(e, "stage %s: loop %s is %s; the lanes of a vector would race on the "
			               "accumulator (unroll a reduction loop instead)", sn, ln,
			               axistype_name(krange_type(r)));
		for (i = 1; i < l->nsrc; i++)
			if (has_loop(l->src[i], 0))
				return err_set(e, "stage %s: loop %s is not innermost (its body holds a loop); "
				               "only an innermost loop is vectorized", sn, ln);
		if (ext > VEC_MAX)
			return err_set(e, "stage %s: loop %s has extent %lld, more than the %d lanes a vector "
			               "takes (split it first)", sn, ln, (long long)ext, VEC_MAX);
		break;
	case AX_UNROLL:
		if (ext > UNROLL_MAX)
			return err_set(e, "stage %s: loop %s has extent %lld; unrolling copies the body at most "
			               "%d times (split it first)", sn, ln, (long long)ext, UNROLL_MAX);
		return 0;
	default:
		return err_set(e, "stage %s: no annotation %s", sn, axistype_name(t));
	}
	/* a register buffer no value crosses between iterations is one per thread (c.c) */
	if (sched_independent_private(k, st, &l, 1, 0, t == AX_THREAD && sched_regs_private(k, st, l, why,
	                              sizeof why) ? 1u << AS_REG : 0, &ie) < 0) {
		if (t == AX_THREAD && why[0] && strstr(ie.msg, "access"))
			return err_set(e, "stage %s: loop %s's iterations would run at once, and they depend on one "
			               "another: %s (a register buffer is one per thread only when each iteration "
			               "writes it before reading it; here %s)", sn, ln, ie.msg, why);
		return err_set(e, "stage %s: loop %s's iterations would run at once, and they depend on one "
		               "another: %s", sn, ln, ie.msg);
	}
	return 0;
}

static int
annotate(Schedule *s, const char *what, const char *stage, const char *loop, AxisType t, Err *e)
{
	Kernel *next;
	UOp *l, *nl;
	Buf line;
	Err ie;
	int st, rc;

	if ((st = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "%s: %s", what, ie.msg);
	if (!(next = sched_begin(s, e)))
		return -1;
	if (!(l = sched_loop(next, st, loop, &ie)) || check(next, st, l, t, what, &ie) < 0) {
		kernel_free(next);
		return err_set(e, "%s: %s", what, ie.msg);
	}
	nl = kernel_loop(next, kernel_range(next, krange_var(l->src[0]), t, HW_NONE), l->src + 1,
	                 l->nsrc - 1);
	if (!nl || sched_replace(next, st, l, nl, &ie) < 0) {
		kernel_free(next);
		return err_set(e, "%s: %s", what, nl ? ie.msg : "out of memory");
	}
	buf_init(&line);
	emit(&line, "s:%s(", what);
	sched_quote(&line, stage);
	emit(&line, ", ");
	sched_quote(&line, loop);
	emit(&line, ")");
	rc = line.oom ? (kernel_free(next), err_set(e, "%s: out of memory", what))
	   : sched_commit(s, next, what, line.s, e);
	buf_free(&line);
	return rc;
}

int
sched_parallel(Schedule *s, const char *stage, const char *loop, Err *e)
{
	return annotate(s, "parallel", stage, loop, AX_THREAD, e);
}

int
sched_vectorize(Schedule *s, const char *stage, const char *loop, Err *e)
{
	return annotate(s, "vectorize", stage, loop, AX_UPCAST, e);
}

int
sched_unroll(Schedule *s, const char *stage, const char *loop, Err *e)
{
	return annotate(s, "unroll", stage, loop, AX_UNROLL, e);
}

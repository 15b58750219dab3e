/* bind.c - bind: a loop to a hardware axis (TVM's bind), with the axis type tinygrad gives it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/*
** The loop's RANGE gets the binding: block.x/y/z are GLOBAL, thread.x/y/z
** and lane LOCAL, warp WARP (tinygrad's types). Bound iterations run at
** once, so they must not depend on one another (sched_independent without
** reordering updates: two threads adding into one element race). A reduction
** loop is refused: TVM binds one to threads only through a cross-thread
** reduction (allreduce), which needs rfactor and a combine this schedule
** does not build. Stores left outside the bound loops would run on every
** thread and race (sched_replicated, which every commit runs too). Where the loop stands (block loops outermost, threads
** inside them, extents of one axis) is the verifier's to say at commit.
*/
static int
bind(Kernel *k, int st, const char *loop, HwAxis hw, Err *e)
{
	const char *sn = k->stage[st].name;
	UOp *l, *r, *nl;
	AxisType t;
	Err ie;

	if (!(l = sched_loop(k, st, loop, e)))
		return -1;
	r = l->src[0];
	if (krange_hw(r) != HW_NONE)
		return err_set(e, "stage %s: loop %s is already bound to %s", sn, loop, hwaxis_name(krange_hw(r)));
	if (krange_type(r) == AX_REDUCE || krange_type(r) == AX_GROUP_REDUCE) {
		if (hwaxis_is_thread(hw))
			return err_set(e, "stage %s: loop %s is %s; TVM binds a reduction loop to threads only "
			               "with a cross-thread reduction (allreduce), which this schedule does not "
			               "build (rfactor first)", sn, loop, axistype_name(krange_type(r)));
		return err_set(e, "stage %s: loop %s is %s; blocks would race on its accumulator", sn, loop,
		               axistype_name(krange_type(r)));
	}
	/* registers are each thread's, shared memory each block's: instances do not share them */
	if (sched_independent_private(k, st, &l, 1, 0, 1u << AS_REG | (hwaxis_is_block(hw) ? 1u << AS_LOCAL : 0),
	                              &ie) < 0)
		return err_set(e, "stage %s: loop %s bound to %s runs its iterations at once, and they "
		               "depend on one another: %s", sn, loop, hwaxis_name(hw), ie.msg);
	t = hwaxis_is_block(hw) ? AX_GLOBAL : hw == HW_WARP ? AX_WARP : AX_LOCAL;
	nl = kernel_loop(k, kernel_range(k, krange_var(r), t, hw), l->src + 1, l->nsrc - 1);
	if (!nl)
		return err_set(e, "out of memory");
	if (sched_replace(k, st, l, nl, e) < 0)
		return -1;
	return sched_replicated(k, st, e);
}

int
sched_bind(Schedule *s, const char *stage, const char *loop, const char *axis, Err *e)
{
	Kernel *next;
	HwAxis hw;
	Buf line;
	Err ie;
	int st, rc;

	if (!axis || hwaxis_parse(axis, &hw) < 0)
		return err_set(e, "bind: unknown axis \"%s\" (block.x/y/z, thread.x/y/z, warp, lane, "
		               "or CUDA's blockIdx.x, threadIdx.x, ...)", axis ? axis : "");
	if ((st = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "bind: %s", ie.msg);
	if (!(next = sched_begin(s, e)))
		return -1;
	if (bind(next, st, loop, hw, &ie) < 0) {
		kernel_free(next);
		return err_set(e, "bind: %s", ie.msg);
	}
	buf_init(&line);
	emit(&line, "s:bind(");
	sched_quote(&line, stage);
	emit(&line, ", ");
	sched_quote(&line, loop);
	emit(&line, ", ");
	sched_quote(&line, axis);
	emit(&line, ")");
	rc = line.oom ? (kernel_free(next), err_set(e, "bind: out of memory"))
	   : sched_commit(s, next, "bind", line.s, e);
	buf_free(&line);
	return rc;
}

/* tile.c - tile: two nested loops into a tile grid and the tile's loops (x, y -> x0, y0, x1, y1), one step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/*
** TVM's old tile (and Halide's): split x by fx, y by fy, then reorder to
** x0, y0, x1, y1 (x0, y0 walk the tiles, x1, y1 a tile). The three are
** composed on one copy of the kernel and committed once, so the trace has
** one line and one undo takes it back. y must be the only statement of x's
** body (the reorder's perfect nest); a tile past the extent is guarded, as
** split guards it.
*/
int
sched_tile(Schedule *s, const char *stage, const char *x, const char *y, int64_t fx, int64_t fy,
           Err *e)
{
	int64_t f[2] = { 0, fx };
	UOp *vx[2], *vy[2];
	const char *order[4];
	Kernel *next;
	Buf line;
	Err ie;
	int st, rc;

	if ((st = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "tile: %s", ie.msg);
	if (fx < 1 || fy < 1)
		return err_set(e, "tile: stage %s: tile sizes are positive, not %lld x %lld", stage,
		               (long long)fx, (long long)fy);
	if (x && y && strcmp(x, y) == 0)
		return err_set(e, "tile: stage %s: loop %s is given twice", stage, x);
	{
		UOp *lx = sched_loop(s->k, st, x, &ie), *ly = lx ? sched_loop(s->k, st, y, &ie) : NULL;

		if (!ly)
			return err_set(e, "tile: %s", ie.msg);
		if (lx->nsrc != 2)
			return err_set(e, "tile: stage %s: loop %s is not alone in loop %s's body (it holds %d "
			               "statements); tile takes two perfectly nested loops", stage, y, x,
			               lx->nsrc - 1);
		if (lx->src[1] != ly)
			return err_set(e, "tile: stage %s: loop %s is not directly inside loop %s; tile takes "
			               "two perfectly nested loops", stage, y, x);
	}
	if (!(next = sched_begin(s, e)))
		return -1;
	if (sched_split_in(next, st, x, f, 2, vx, &ie) < 0)
		goto fail;
	f[1] = fy;
	if (sched_split_in(next, st, y, f, 2, vy, &ie) < 0)
		goto fail;
	order[0] = vx[0]->name;
	order[1] = vy[0]->name;
	order[2] = vx[1]->name;
	order[3] = vy[1]->name;
	if (sched_reorder_in(next, st, order, 4, &ie) < 0)
		goto fail;
	buf_init(&line);
	emit(&line, "s:tile(");
	sched_quote(&line, stage);
	emit(&line, ", ");
	sched_quote(&line, x);
	emit(&line, ", ");
	sched_quote(&line, y);
	emit(&line, ", %lld, %lld)", (long long)fx, (long long)fy);
	rc = line.oom ? (kernel_free(next), err_set(e, "tile: out of memory"))
	   : sched_commit(s, next, "tile", line.s, e);
	buf_free(&line);
	return rc;
fail:
	kernel_free(next);
	return err_set(e, "tile: %s", ie.msg);
}

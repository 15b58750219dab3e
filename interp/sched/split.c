/* split.c - split: one loop into nested loops by factors (TVM's split, tinygrad's Split), a guard for the tail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

enum { MAXFACTOR = 8 };

/*
** The guard sinks through a perfect nest to the innermost body (TVM puts
** the predicate on the block): the loops below still form a perfect nest
** with the new ones, so reorder and tile can move them. It depends only on
** the new loops, so `for j: if c: s` is `if c: for j: s`.
*/
static UOp *
guard(Kernel *k, UOp *gate, UOp *const *body, int n, int depth)
{
	UOp *in;

	if (n == 1 && body[0]->op == OP_END && depth < 1000) {
		if (!(in = guard(k, gate, body[0]->src + 1, body[0]->nsrc - 1, depth + 1)))
			return NULL;
		return kernel_loop(k, body[0]->src[0], &in, 1);
	}
	return kernel_if(k, gate, body, n);
}

/*
** Loop i of extent E becomes i0, i1, ..., i{n-1} of extents f0, ..., f{n-1}
** with i = ((i0*f1 + i1)*f2 + i2)...; one factor may be unknown (0 or -1, nil
** in Lua) and is E divided by the others, rounded up. A product larger than E
** is allowed, as TVM allows it: the body runs under `if i < E` (TVM's
** predicate), so the iterations past the end do nothing. A product smaller
** than E would drop iterations and is refused. The order of the iterations
** is unchanged, so the result is exact.
*/
int
sched_split_in(Kernel *k, int st, const char *loop, const int64_t *factors, int n, UOp **vars,
               Err *e)
{
	const char *sn = k->stage[st].name;
	int64_t f[MAXFACTOR], known = 1, ext;
	int unknown = -1, i, nb, rc = -1;
	UOp *l, *r, *old, *x, **body = NULL, *cur, *own[MAXFACTOR];
	AxisType t;

	if (!vars)
		vars = own;
	if (n < 2 || n > MAXFACTOR)
		return err_set(e, "stage %s: loop %s: give 2 to %d factors, not %d", sn, loop, MAXFACTOR, n);
	for (i = 0; i < n; i++) {
		if (factors[i] == 0 || factors[i] == -1) {
			if (unknown >= 0)
				return err_set(e, "stage %s: loop %s: factors %d and %d are both nil; at most one "
				               "factor is inferred", sn, loop, unknown + 1, i + 1);
			unknown = i;
			continue;
		}
		if (factors[i] < 1)
			return err_set(e, "stage %s: loop %s: factor %d is %lld; factors are positive (nil "
			               "for the one to infer)", sn, loop, i + 1, (long long)factors[i]);
		if (uck_mul(known, factors[i], &known) < 0 || known > ((int64_t)1 << 40))
			return err_set(e, "stage %s: loop %s: the factors' product overflows", sn, loop);
	}
	if (!(l = sched_loop(k, st, loop, e)))
		return -1;
	r = l->src[0];
	ext = krange_extent(r);
	t = krange_type(r);
	if (krange_hw(r) != HW_NONE)
		return err_set(e, "stage %s: loop %s is bound to %s; TVM does not split a bound loop "
		               "(split before binding)", sn, loop, hwaxis_name(krange_hw(r)));
	for (i = 0; i < n; i++)
		f[i] = i == unknown ? (ext + known - 1) / known : factors[i];
	if (unknown < 0 && known < ext)
		return err_set(e, "stage %s: loop %s: the factors' product %lld is less than the extent "
		               "%lld; iteration %s=%lld would be lost", sn, loop, (long long)known,
		               (long long)ext, loop, (long long)known);
	if (unknown >= 0)
		known *= f[unknown];
	for (i = 0; i < n; i++) {
		char base[80];

		snprintf(base, sizeof base, "%s%d", loop, i);
		if (!(vars[i] = sched_fresh_var(k, st, base, f[i])))
			return err_set(e, "split: out of memory");
	}
	/* i = ((i0*f1 + i1)*f2 + i2)... */
	x = vars[0];
	for (i = 1; i < n; i++)
		x = uop_add(k->c, uop_mul(k->c, x, uop_int(k->c, f[i])), vars[i]);
	old = krange_var(r);
	nb = l->nsrc - 1;
	if (!x || !(body = malloc((nb + 1) * sizeof *body)))
		return err_set(e, "split: out of memory");
	for (i = 0; i < nb; i++) {
		UOp *s = kernel_substitute(k->c, l->src[i + 1], &old, &x, 1);

		if (!s || !(body[i] = sched_simplify_stmt(k, s, e)))
			goto out;
	}
	if (known != ext) {
		UOp *g = uop_alu(k->c, OP_CMPLT, x, uop_int(k->c, ext)), *gs;

		if (!g || uop_simplify(k->c, g, &gs, e) < 0 || !(body[0] = guard(k, gs, body, nb, 0)))
			goto out;
		nb = 1;
	}
	cur = kernel_loop(k, kernel_range(k, vars[n - 1], t, HW_NONE), body, nb);
	for (i = n - 2; i >= 0 && cur; i--)
		cur = kernel_loop(k, kernel_range(k, vars[i], t, HW_NONE), &cur, 1);
	if (!cur) {
		err_set(e, "split: out of memory");
		goto out;
	}
	rc = sched_replace(k, st, l, cur, e);
out:
	free(body);
	return rc;
}

int
sched_split(Schedule *s, const char *stage, const char *loop, const int64_t *factors, int n, Err *e)
{
	UOp *vars[MAXFACTOR];
	Kernel *next;
	Buf line;
	Err ie;
	int st, i, rc;

	if ((st = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "split: %s", ie.msg);
	if (!(next = sched_begin(s, e)))
		return -1;
	if (sched_split_in(next, st, loop, factors, n, vars, &ie) < 0) {
		kernel_free(next);
		return err_set(e, "split: %s", ie.msg);
	}
	buf_init(&line);
	emit(&line, "s:split(");
	sched_quote(&line, stage);
	emit(&line, ", ");
	sched_quote(&line, loop);
	emit(&line, ", {");
	for (i = 0; i < n; i++) {
		/* {4, nil} reads back as {4} in Lua: an inferred last factor is written as inferred */
		if ((factors[i] == 0 || factors[i] == -1) && i < n - 1)
			emit(&line, "%snil", i ? ", " : "");
		else if (factors[i] == 0 || factors[i] == -1)
			emit(&line, "%s%lld", i ? ", " : "", (long long)(vars[i]->arg[1] + 1));
		else
			emit(&line, "%s%lld", i ? ", " : "", (long long)factors[i]);
	}
	emit(&line, "})");
	rc = line.oom ? (kernel_free(next), err_set(e, "split: out of memory"))
	   : sched_commit(s, next, "split", line.s, e);
	buf_free(&line);
	return rc;
}

/* fuse.c - fuse: perfectly nested loops into one (TVM's fuse), the old indices by division and modulo. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

enum { MAXFUSE = 8 };

static int
is_reduce(AxisType t)
{
	return t == AX_REDUCE || t == AX_GROUP_REDUCE;
}

/*
** Loops l0 (outermost), ..., l{n-1} of extents e0, ..., e{n-1}, each the
** only statement of the one before's body, become one loop f of extent
** e0*...*e{n-1} named l0_..._l{n-1}_fused, with l{n-1} = f % e{n-1},
** l{k} = f // (e{k+1}*...*e{n-1}) % e{k}. The iterations keep their order,
** so the result is exact. Loops of different axis types are refused (TVM
** does not fuse a reduction loop with a spatial one; for the other types
** the fused loop would have no single meaning: annotate after fusing), and
** so are bound loops (bind the fused loop).
*/
static int
fuse(Kernel *k, int st, const char *const *names, int n, Err *e)
{
	const char *sn = k->stage[st].name;
	UOp *l[MAXFUSE], *old[MAXFUSE], *val[MAXFUSE], *f, *x, *cur, **body = NULL;
	int64_t ext = 1, inner = 1;
	char fname[600];
	size_t len = 0;
	int i, j, nb, rc = -1;

	if (n < 2 || n > MAXFUSE)
		return err_set(e, "stage %s: give 2 to %d loops, not %d", sn, MAXFUSE, n);
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0)
				return err_set(e, "stage %s: loop %s is given twice", sn, names[i]);
	if (!(l[0] = sched_loop(k, st, names[0], e)))
		return -1;
	for (i = 1; i < n; i++) {
		UOp *prev = l[i - 1], *want;
		const char *pn = names[i - 1];

		if (!(want = sched_loop(k, st, names[i], e)))
			return -1;
		if (prev->nsrc == 2 && prev->src[1] == want) {
			l[i] = want;
			continue;
		}
		if (prev->nsrc != 2) {
			int m, inside = 0;

			for (m = 1; m < prev->nsrc; m++)
				inside |= prev->src[m] == want;
			if (inside)
				return err_set(e, "stage %s: loops %s and %s are not perfectly nested: loop %s's "
				               "body holds %d statements; fuse needs loop %s alone in it", sn, pn,
				               names[i], pn, prev->nsrc - 1, names[i]);
		}
		return err_set(e, "stage %s: loop %s is not directly inside loop %s; fuse takes adjacent "
		               "loops, outermost first", sn, names[i], pn);
	}
	for (i = 0; i < n; i++) {
		UOp *r = l[i]->src[0];

		if (krange_hw(r) != HW_NONE)
			return err_set(e, "stage %s: loop %s is bound to %s; fuse before binding", sn, names[i],
			               hwaxis_name(krange_hw(r)));
		if (krange_type(r) != krange_type(l[0]->src[0])) {
			AxisType a = krange_type(l[0]->src[0]), b = krange_type(r);

			if (is_reduce(a) != is_reduce(b))
				return err_set(e, "stage %s: loop %s is %s and loop %s is %s; TVM does not fuse a "
				               "reduction loop with a spatial one", sn, names[0], axistype_name(a),
				               names[i], axistype_name(b));
			return err_set(e, "stage %s: loop %s is %s and loop %s is %s; fuse loops of one axis "
			               "type (annotate the fused loop)", sn, names[0], axistype_name(a), names[i],
			               axistype_name(b));
		}
		if (uck_mul(ext, krange_extent(r), &ext) < 0 || ext > ((int64_t)1 << 40))
			return err_set(e, "stage %s: the fused extent overflows", sn);
		old[i] = krange_var(r);
	}
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(fname + len, len < sizeof fname ? sizeof fname - len : 0, "%s_",
		                        names[i]);
	if (len + 6 >= 64)
		snprintf(fname, sizeof fname, "%s_fused", names[0]);
	else
		snprintf(fname + len, sizeof fname - len, "fused");
	if (!(f = sched_fresh_var(k, st, fname, ext)))
		return err_set(e, "out of memory");
	for (i = n - 1; i >= 0; i--) {
		x = inner == 1 ? f : uop_idiv(k->c, f, uop_int(k->c, inner));
		val[i] = i == 0 ? x : uop_mod(k->c, x, uop_int(k->c, krange_extent(l[i]->src[0])));
		inner *= krange_extent(l[i]->src[0]);
	}
	nb = l[n - 1]->nsrc - 1;
	if (!(body = malloc((nb + 1) * sizeof *body)))
		return err_set(e, "out of memory");
	for (i = 0; i < nb; i++) {
		UOp *s = kernel_substitute(k->c, l[n - 1]->src[i + 1], old, val, n);

		if (!s || !(body[i] = sched_simplify_stmt(k, s, e)))
			goto out;
	}
	cur = kernel_loop(k, kernel_range(k, f, krange_type(l[0]->src[0]), HW_NONE), body, nb);
	if (!cur) {
		err_set(e, "out of memory");
		goto out;
	}
	rc = sched_replace(k, st, l[0], cur, e);
out:
	free(body);
	return rc;
}

int
sched_fuse(Schedule *s, const char *stage, const char *const *loops, int n, Err *e)
{
	return sched_apply_loops(s, "fuse", stage, loops, n, fuse, e);
}

/* lower.c - CuTe layouts and swizzles to index expressions of symbolic coordinates. */
#include <stdio.h>
#include <string.h>

#include "lower.h"

int
lower_split(UCtx *c, UOp *x, const int64_t *shape, int n, int colex, int overflow,
            UOp **digits, Err *e)
{
	int k, i;
	UOp *rest = x;

	if (!x)
		return err_set(e, "lower: no expression (out of memory)");
	if (n < 1 || n > LOWER_MAXDIM)
		return err_set(e, "lower: %d dimensions (1 to %d)", n, LOWER_MAXDIM);
	for (k = 0; k < n; k++)
		if (shape[k] < 1)
			return err_set(e, "lower: shape entry %lld is not positive", (long long)shape[k]);
	/* fastest digit first: rest % s is the digit, rest // s the rest */
	for (i = 0; i < n; i++) {
		k = colex ? i : n - 1 - i;
		if (i == n - 1 && overflow)
			digits[k] = rest;
		else
			digits[k] = uop_mod(c, rest, uop_int(c, shape[k]));
		rest = uop_idiv(c, rest, uop_int(c, shape[k]));
		if (!digits[k] || !rest)
			return err_set(e, "lower: out of memory");
	}
	return 0;
}

UOp *
lower_dot(UCtx *c, UOp *const *digits, const int64_t *stride, int n, int64_t offset)
{
	UOp *acc = uop_int(c, offset);
	int k;

	for (k = 0; k < n; k++)
		acc = uop_add(c, acc, uop_mul(c, digits[k], uop_int(c, stride[k])));
	return acc;
}

UOp *
lower_join(UCtx *c, UOp *const *digits, const int64_t *shape, int n, int colex)
{
	UOp *acc = uop_int(c, 0);
	int i, k;

	/* Horner from the slowest digit */
	for (i = n - 1; i >= 0; i--) {
		k = colex ? i : n - 1 - i;
		acc = uop_add(c, uop_mul(c, acc, uop_int(c, shape[k])), digits[k]);
	}
	return acc;
}

UOp *
lower_swizzle(UCtx *c, const Swizzle *sw, UOp *x)
{
	int64_t bits = ((int64_t)1 << sw->b) - 1;
	int64_t yyy = bits << (sw->m + (sw->s > 0 ? sw->s : 0));
	UOp *y;

	if (sw->b == 0 || (sw->s == 0))
		return x;
	y = uop_alu(c, OP_AND, x, uop_int(c, yyy));
	y = sw->s > 0 ? uop_alu(c, OP_SHR, y, uop_int(c, sw->s))
	              : uop_alu(c, OP_SHL, y, uop_int(c, -sw->s));
	return uop_alu(c, OP_XOR, x, y);
}

int
lower_cute_modes(const Layout *l, int64_t *shape, int64_t *stride, int *n, Err *e)
{
	int i;

	*n = 0;
	for (i = 0; i < l->shape.n; i++) {
		if (l->shape.node[i].kids != T_LEAF)
			continue;
		if (*n >= LOWER_MAXDIM)
			return err_set(e, "lower: more than %d modes", LOWER_MAXDIM);
		if (l->stride.node[i].kids != T_LEAF)
			return err_set(e, "lower: shape and stride are not congruent");
		shape[*n] = l->shape.node[i].v;
		stride[*n] = l->stride.node[i].v;
		(*n)++;
	}
	return 0;
}

int
lower_cute_vars(UCtx *c, const Layout *l, const char *name, int per_mode,
                UOp **vars, int *n, Err *e)
{
	int64_t shape[LOWER_MAXDIM], stride[LOWER_MAXDIM];
	char nm[80];
	int k;

	if (!uop_valid_name(name) || strlen(name) > 40)
		return err_set(e, "lower: '%s' is not a variable name", name);
	if (!per_mode) {
		*n = 1;
		vars[0] = uop_var(c, name, 0, cute_size(l) - 1);
		return vars[0] ? 0 : err_set(e, "lower: out of memory");
	}
	if (lower_cute_modes(l, shape, stride, n, e) < 0)
		return -1;
	for (k = 0; k < *n; k++) {
		snprintf(nm, sizeof nm, "%s%d", name, k);
		if (!(vars[k] = uop_var(c, nm, 0, shape[k] - 1)))
			return err_set(e, "lower: out of memory");
	}
	return 0;
}

int
lower_cute_crd(UCtx *c, const Layout *l, UOp *const *crd, int n, UOp **out, Err *e)
{
	int64_t shape[LOWER_MAXDIM], stride[LOWER_MAXDIM];
	int m;

	if (lower_cute_modes(l, shape, stride, &m, e) < 0)
		return -1;
	if (n != m)
		return err_set(e, "lower: %d coordinates for a layout of %d flattened modes", n, m);
	*out = lower_dot(c, crd, stride, m, 0);
	return *out ? 0 : err_set(e, "lower: out of memory");
}

int
lower_cute_idx(UCtx *c, const Layout *l, UOp *x, UOp **out, Err *e)
{
	int64_t shape[LOWER_MAXDIM], stride[LOWER_MAXDIM];
	UOp *d[LOWER_MAXDIM];
	int m;

	if (lower_cute_modes(l, shape, stride, &m, e) < 0
	|| lower_split(c, x, shape, m, 1, 1, d, e) < 0)
		return -1;
	*out = lower_dot(c, d, stride, m, 0);
	return *out ? 0 : err_set(e, "lower: out of memory");
}

static int
compose(UCtx *c, const Composed *cl, UOp **out, Err *e)
{
	*out = lower_swizzle(c, &cl->sw, uop_add(c, *out, uop_int(c, cl->offset)));
	return *out ? 0 : err_set(e, "lower: out of memory");
}

int
lower_composed_idx(UCtx *c, const Composed *cl, UOp *x, UOp **out, Err *e)
{
	if (lower_cute_idx(c, &cl->layout, x, out, e) < 0)
		return -1;
	return compose(c, cl, out, e);
}

int
lower_composed_crd(UCtx *c, const Composed *cl, UOp *const *crd, int n, UOp **out, Err *e)
{
	if (lower_cute_crd(c, &cl->layout, crd, n, out, e) < 0)
		return -1;
	return compose(c, cl, out, e);
}

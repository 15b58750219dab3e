/* tensor.c - tensor programs on the UOp IR: the checked constructors of the spec's primitives. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor.h"

UOp *
tensor_new(UCtx *c, Op op, DType t, UOp *const *src, int nsrc, int64_t a0, int64_t a1,
           const char *name, const void *data, uint32_t ndata, Err *e)
{
	UOp *p, *u;
	UDerived d;
	int i, rc;

	if (!c)
		return err_set(e, "tensor: no context"), NULL;
	for (i = 0; i < nsrc; i++)
		if (!src[i])
			return err_set(e, "%s: out of memory, or the graph nests deeper than %d",
			               uop_info[op].name, UOP_MAXDEPTH), NULL;
	/* a probe node on the heap gives the message; uop_new then builds the real one */
	if (!(p = calloc(1, sizeof *p + (size_t)nsrc * sizeof p->src[0])))
		return err_set(e, "tensor: out of memory"), NULL;
	p->op = (uint8_t)op;
	p->dtype = (uint8_t)t;
	p->nsrc = (uint16_t)nsrc;
	p->arg[0] = a0;
	p->arg[1] = a1;
	p->name = name;
	p->data = data;
	p->ndata = ndata;
	p->id = UINT32_MAX;
	for (i = 0; i < nsrc; i++) {
		p->src[i] = src[i];
		if (src[i]->id + 1 > p->id + 1 || p->id == UINT32_MAX)
			p->id = src[i]->id + 1;
	}
	if (p->id == UINT32_MAX)
		p->id = 0;
	rc = uop_derive(p, &d, e);
	free(p);
	if (rc < 0)
		return NULL;
	if (!(u = uop_new(c, op, t, src, nsrc, a0, a1, name, data, ndata)))
		err_set(e, "%s: out of memory, or the graph nests deeper than %d", uop_info[op].name,
		        UOP_MAXDEPTH);
	return u;
}

/* ---- constructors ---- */

static UOp *
iconst(UCtx *c, DType t, int64_t v)
{
	if (dtype_is_float(t))
		return uop_constf(c, t, (double)v);
	return uop_new(c, OP_CONST, t, NULL, 0, dtype_wrap(t, v), 0, NULL, NULL, 0);
}

UOp *
tensor_param(UCtx *c, const char *name, int slot, const int64_t *shape, int n, DType t,
             const char *device, Err *e)
{
	char buf[T_MAXDIM * 8 + 512];
	size_t dl;

	if (uop_shape_check("param", shape, n, e) < 0)
		return NULL;
	if (!device)
		device = "CPU";
	if ((dl = strlen(device)) >= 512)
		return err_set(e, "param: the device name is too long"), NULL;
	memcpy(buf, shape, n * 8);
	memcpy(buf + n * 8, device, dl + 1);
	return tensor_new(c, OP_PARAM, t, NULL, 0, slot, n, name, buf, n * 8 + dl + 1, e);
}

UOp *
tensor_from(UCtx *c, DType t, const double *v, const int64_t *shape, int n, Err *e)
{
	int64_t total = 1, i;
	unsigned char *bytes;
	int nb = dtype_bytes(t);
	UOp *b, *u;
	int64_t one;

	if (uop_shape_check("tensor.from", shape, n, e) < 0)
		return NULL;
	if (t == DT_VOID || t == DT_INDEX)
		return err_set(e, "tensor.from: %s is not a tensor dtype", dtype_name(t)), NULL;
	for (i = 0; i < n; i++)
		total *= shape[i];
	if (total * nb > 0xffffffffLL - 16)
		return err_set(e, "tensor.from: %lld bytes do not fit in one binary", (long long)(total * nb)), NULL;
	if (total == 0)
		return tensor_full(c, t, 0, shape, n, e);
	if (!(bytes = malloc(total * nb)))
		return err_set(e, "tensor.from: out of memory"), NULL;
	for (i = 0; i < total; i++)
		dtype_store_f(t, bytes + i * nb, v[i]);
	b = tensor_new(c, OP_BINARY, DT_UINT8, NULL, 0, 0, 0, NULL, bytes, (uint32_t)(total * nb), e);
	free(bytes);
	if (!b)
		return NULL;
	u = t == DT_UINT8 ? b : tensor_new(c, OP_BITCAST, t, &b, 1, 0, 0, NULL, NULL, 0, e);
	one = total;
	if (u && !(n == 1 && shape[0] == one))
		u = tensor_reshape(c, u, shape, n, e);
	return u;
}

UOp *
tensor_full(UCtx *c, DType t, double v, const int64_t *shape, int n, Err *e)
{
	int64_t ones[T_MAXDIM];
	UOp *k = uop_constf(c, t, v);
	int i;

	if (uop_shape_check("tensor.full", shape, n, e) < 0)
		return NULL;
	if (n == 0)
		return k;
	for (i = 0; i < n; i++)
		ones[i] = 1;
	k = tensor_reshape(c, k, ones, n, e);
	return k ? tensor_expand(c, k, shape, n, e) : NULL;
}

/*
** arange(n) from the primitives without the spec's quadratic prefix sum:
** in mixed radix, i = q*B + r, so arange(a*B) = arange(a)*B (as a column)
** + arange(B) (as a row); arange(2) is a stack of two constants and a power
** of two doubles the same way. The work is a few passes over n elements.
*/
static UOp *
arange_pow2(UCtx *c, int k, DType t, Err *e)
{
	UOp *r, *two, *s[2];
	int64_t col[2], row[2], flat;

	s[0] = iconst(c, t, 0);
	s[1] = iconst(c, t, 1);
	r = tensor_new(c, OP_STACK, t, s, 2, 0, 0, NULL, NULL, 0, e);
	two = r;
	for (flat = 2; r && k-- > 1; flat *= 2) {
		/* r has flat elements: r*2 + {0,1} */
		UOp *a, *b;

		col[0] = flat; col[1] = 1;
		row[0] = 1; row[1] = 2;
		a = tensor_reshape(c, r, col, 2, e);
		a = a ? tensor_alu(c, OP_MUL, a, iconst(c, t, 2), e) : NULL;
		b = a ? tensor_reshape(c, two, row, 2, e) : NULL;
		a = b ? tensor_alu(c, OP_ADD, a, b, e) : NULL;
		col[0] = flat * 2;
		r = a ? tensor_reshape(c, a, col, 1, e) : NULL;
	}
	return r;
}

UOp *
tensor_arange(UCtx *c, int64_t n, DType t, Err *e)
{
	enum { LOGB = 10, B = 1 << LOGB };
	int64_t a, col[2], row[2], flat, lo = 0, hi;
	UOp *r, *q, *base;
	int k;

	if (n < 0 || n > ((int64_t)1 << 48))
		return err_set(e, "tensor.arange: %lld is not in [0, 2^48]", (long long)n), NULL;
	if (n <= 1) {
		int64_t s = n;

		if (n == 0)
			return tensor_full(c, t, 0, &s, 1, e);
		r = iconst(c, t, 0);
		return tensor_reshape(c, r, &s, 1, e);
	}
	if (n <= B) {
		for (k = 1; ((int64_t)1 << k) < n; k++)
			;
		r = arange_pow2(c, k, t, e);
		hi = n;
		return r && n != ((int64_t)1 << k) ? tensor_shrink(c, r, &lo, &hi, 1, e) : r;
	}
	a = (n + B - 1) / B;
	if (!(q = tensor_arange(c, a, t, e)) || !(base = arange_pow2(c, LOGB, t, e)))
		return NULL;
	col[0] = a; col[1] = 1;
	row[0] = 1; row[1] = B;
	r = tensor_reshape(c, q, col, 2, e);
	r = r ? tensor_alu(c, OP_MUL, r, iconst(c, t, B), e) : NULL;
	base = r ? tensor_reshape(c, base, row, 2, e) : NULL;
	r = base ? tensor_alu(c, OP_ADD, r, base, e) : NULL;
	flat = a * B;
	r = r ? tensor_reshape(c, r, &flat, 1, e) : NULL;
	hi = n;
	return r && n != flat ? tensor_shrink(c, r, &lo, &hi, 1, e) : r;
}

/*
** rand: bits = threefry(i, seed) for the element index i (uint64), the top
** 23 bits as the mantissa of a float32 in [1, 2), minus 1: uniform on [0, 1)
** in steps of 2^-23, then cast to the dtype.
*/
UOp *
tensor_rand(UCtx *c, const int64_t *shape, int n, DType t, uint64_t seed, Err *e)
{
	int64_t total = 1;
	UOp *r;
	int i;

	if (uop_shape_check("tensor.rand", shape, n, e) < 0)
		return NULL;
	if (!dtype_is_float(t))
		return err_set(e, "tensor.rand: %s is not a float dtype", dtype_name(t)), NULL;
	for (i = 0; i < n; i++)
		total *= shape[i];
	r = tensor_arange(c, total, DT_UINT64, e);
	r = r ? tensor_alu(c, OP_THREEFRY, r, uop_new(c, OP_CONST, DT_UINT64, NULL, 0, (int64_t)seed, 0,
	                                                NULL, NULL, 0), e) : NULL;
	r = r ? tensor_alu(c, OP_SHR, r, iconst(c, DT_UINT64, 41), e) : NULL;
	r = r ? tensor_alu(c, OP_OR, r, iconst(c, DT_UINT64, 0x3f800000), e) : NULL;
	r = r ? tensor_cast(c, DT_UINT32, r, e) : NULL;
	r = r ? tensor_bitcast(c, DT_FLOAT32, r, e) : NULL;
	r = r ? tensor_alu(c, OP_SUB, r, uop_constf(c, DT_FLOAT32, 1.0), e) : NULL;
	if (r && t != DT_FLOAT32)
		r = tensor_cast(c, t, r, e);
	return r && !(n == 1 && shape[0] == total) ? tensor_reshape(c, r, shape, n, e) : r;
}

/* ---- movement ---- */

UOp *
tensor_reshape(UCtx *c, UOp *a, const int64_t *shape, int n, Err *e)
{
	int64_t s[T_MAXDIM], known = 1;
	int i, free_at = -1;
	char b1[160], b2[160];

	if (!a)
		return NULL;
	if (n < 0 || n > T_MAXDIM)
		return err_set(e, "reshape: rank %d is not in [0, %d]", n, T_MAXDIM), NULL;
	for (i = 0; i < n; i++) {
		s[i] = shape[i];
		if (s[i] == -1) {
			if (free_at >= 0)
				return err_set(e, "reshape: %s has more than one -1", uop_shape_fmt(b1, sizeof b1, shape, n)), NULL;
			free_at = i;
		} else if (s[i] < 0)
			return err_set(e, "reshape: size %lld of axis %d is negative", (long long)s[i], i), NULL;
		else if (uck_mul(known, s[i], &known) < 0)
			return err_set(e, "reshape: the shape overflows"), NULL;
	}
	if (free_at >= 0) {
		if (known == 0 || uop_numel(a) % known != 0)
			return err_set(e, "reshape: %s cannot take %s (%lld elements)",
			               uop_shape_fmt(b2, sizeof b2, shape, n), uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim),
			               (long long)uop_numel(a)), NULL;
		s[free_at] = uop_numel(a) / known;
	}
	if (n == a->ndim && (n == 0 || memcmp(s, a->shape, n * 8) == 0))
		return a;
	return tensor_new(c, OP_RESHAPE, a->dtype, &a, 1, 0, n, NULL, s, n * 8, e);
}

UOp *
tensor_expand(UCtx *c, UOp *a, const int64_t *shape, int n, Err *e)
{
	int64_t s[T_MAXDIM];
	int i;

	if (!a)
		return NULL;
	if (n < 0 || n > T_MAXDIM)
		return err_set(e, "expand: rank %d is not in [0, %d]", n, T_MAXDIM), NULL;
	for (i = 0; i < n; i++)   /* -1 keeps the size */
		s[i] = shape[i] == -1 && i < a->ndim ? a->shape[i] : shape[i];
	if (n == a->ndim && (n == 0 || memcmp(s, a->shape, n * 8) == 0))
		return a;
	return tensor_new(c, OP_EXPAND, a->dtype, &a, 1, 0, n, NULL, s, n * 8, e);
}

static int
norm_axis(const char *what, int64_t *ax, int nd, Err *e)
{
	if (*ax < -nd || *ax >= nd)
		return err_set(e, "%s: axis %lld is out of range for rank %d", what, (long long)*ax, nd);
	if (*ax < 0)
		*ax += nd;
	return 0;
}

UOp *
tensor_permute(UCtx *c, UOp *a, const int64_t *order, int n, Err *e)
{
	int64_t o[T_MAXDIM];
	int i, id = 1;

	if (!a)
		return NULL;
	if (n != a->ndim)
		return err_set(e, "permute: %d axes for a tensor of rank %d", n, a->ndim), NULL;
	for (i = 0; i < n; i++) {
		o[i] = order[i];
		if (norm_axis("permute", &o[i], n, e) < 0)
			return NULL;
		id &= o[i] == i;
	}
	if (id)
		return a;
	return tensor_new(c, OP_PERMUTE, a->dtype, &a, 1, 0, 0, NULL, o, n * 8, e);
}

UOp *
tensor_flip(UCtx *c, UOp *a, const int64_t *axes, int n, Err *e)
{
	int64_t f[T_MAXDIM] = {0}, ax;
	int i;

	if (!a)
		return NULL;
	if (n > a->ndim)
		return err_set(e, "flip: %d axes for a tensor of rank %d", n, a->ndim), NULL;
	for (i = 0; i < n; i++) {
		ax = axes[i];
		if (norm_axis("flip", &ax, a->ndim, e) < 0)
			return NULL;
		f[ax] = 1;
	}
	if (n == 0)
		return a;
	return tensor_new(c, OP_FLIP, a->dtype, &a, 1, 0, 0, NULL, f, a->ndim * 8, e);
}

UOp *
tensor_pad(UCtx *c, UOp *a, const int64_t *before, const int64_t *after, int n, Err *e)
{
	int64_t d[2 * T_MAXDIM];
	int i, zero = 1;

	if (!a)
		return NULL;
	if (n != a->ndim)
		return err_set(e, "pad: %d (before, after) pairs for a tensor of rank %d", n, a->ndim), NULL;
	for (i = 0; i < n; i++) {
		if (before[i] < 0 || after[i] < 0)
			return err_set(e, "pad: axis %d: negative amounts (%lld, %lld); use shrink",
			               i, (long long)before[i], (long long)after[i]), NULL;
		d[i] = before[i];
		if (uck_add(a->shape[i], before[i], &d[n + i]) < 0 || uck_add(d[n + i], after[i], &d[n + i]) < 0)
			return err_set(e, "pad: axis %d overflows", i), NULL;
		zero &= before[i] == 0 && after[i] == 0;
	}
	if (zero)
		return a;
	return tensor_new(c, OP_PAD, a->dtype, &a, 1, 0, 0, NULL, d, 2 * n * 8, e);
}

UOp *
tensor_shrink(UCtx *c, UOp *a, const int64_t *begin, const int64_t *end, int n, Err *e)
{
	int64_t d[2 * T_MAXDIM];
	int i, id = 1;

	if (!a)
		return NULL;
	if (n != a->ndim)
		return err_set(e, "shrink: %d (begin, end) pairs for a tensor of rank %d", n, a->ndim), NULL;
	for (i = 0; i < n; i++) {
		if (begin[i] < 0 || end[i] < begin[i] || end[i] > a->shape[i])
			return err_set(e, "shrink: axis %d: [%lld, %lld) is not inside [0, %lld)", i,
			               (long long)begin[i], (long long)end[i], (long long)a->shape[i]), NULL;
		d[i] = begin[i];
		d[n + i] = end[i] - begin[i];
		id &= begin[i] == 0 && end[i] == a->shape[i];
	}
	if (id)
		return a;
	return tensor_new(c, OP_SHRINK, a->dtype, &a, 1, 0, 0, NULL, d, 2 * n * 8, e);
}

/* ---- elementwise ---- */

/* Broadcast u to shape s[n] (reshape to add leading 1s, then expand). */
static UOp *
bcast_to(UCtx *c, UOp *u, const int64_t *s, int n, Err *e)
{
	int64_t r[T_MAXDIM];
	int i, off = n - u->ndim;

	if (!u)
		return NULL;
	for (i = 0; i < n; i++)
		r[i] = i < off ? 1 : u->shape[i - off];
	u = tensor_reshape(c, u, r, n, e);
	return u ? tensor_expand(c, u, s, n, e) : NULL;
}

/* Make the sources one shape and (from index `first`) one dtype t. */
static int
unify(UCtx *c, UOp **s, int n, int first, DType t, Op op, Err *e)
{
	UOp *probe;
	int i;

	if (!(probe = tensor_new(c, OP_ADD, t, s, n == 3 ? 2 : n, 0, 0, NULL, NULL, 0, e)))
		goto fail;
	if (n == 3) {   /* where: broadcast all three */
		UOp *pp[2] = { probe, s[2] };

		if (!(probe = tensor_new(c, OP_ADD, t, pp, 2, 0, 0, NULL, NULL, 0, e)))
			goto fail;
	}
	for (i = 0; i < n; i++) {
		if (i >= first && s[i]->dtype != t && !(s[i] = tensor_cast(c, t, s[i], e)))
			return -1;
		if (!(s[i] = bcast_to(c, s[i], probe->shape, probe->ndim, e)))
			return -1;
	}
	return 0;
fail:
	/* rename the probe's message after the op the user asked for */
	if (e && strncmp(e->msg, "add: ", 5) == 0) {
		char m[sizeof e->msg];

		snprintf(m, sizeof m, "%s: %s", uop_info[op].name, e->msg + 5);
		snprintf(e->msg, sizeof e->msg, "%s", m);
	}
	return -1;
}

UOp *
tensor_alu(UCtx *c, Op op, UOp *a, UOp *b, Err *e)
{
	UOp *s[2] = { a, b };
	DType t;

	if (!a || !b)
		return NULL;
	if (op >= OP_COUNT || uop_info[op].arity != 2 || !(uop_info[op].flags & U_ALU))
		return err_set(e, "tensor: %s is not a binary elementwise op", uop_info[op].name), NULL;
	t = dtype_promote(a->dtype, b->dtype);
	if (op == OP_THREEFRY)
		t = DT_UINT64;
	if ((op == OP_AND || op == OP_OR || op == OP_XOR || op == OP_SHL || op == OP_SHR)
	    && dtype_is_float(t))
		return err_set(e, "%s: needs integer or bool operands, got %s and %s", uop_info[op].name,
		               dtype_name(a->dtype), dtype_name(b->dtype)), NULL;
	if (unify(c, s, 2, 0, t, op, e) < 0)
		return NULL;
	return tensor_new(c, op, (uop_info[op].flags & U_CMP) ? DT_BOOL : t, s, 2, 0, 0, NULL, NULL, 0, e);
}

UOp *
tensor_unary(UCtx *c, Op op, UOp *a, Err *e)
{
	if (!a)
		return NULL;
	if (op >= OP_COUNT || uop_info[op].arity != 1 || !(uop_info[op].flags & U_ALU) || op == OP_CAST)
		return err_set(e, "tensor: %s is not a unary elementwise op", uop_info[op].name), NULL;
	if (op != OP_NEG && op != OP_TRUNC && !dtype_is_float(a->dtype))
		a = tensor_cast(c, DT_FLOAT32, a, e);
	return a ? tensor_new(c, op, a->dtype, &a, 1, 0, 0, NULL, NULL, 0, e) : NULL;
}

UOp *
tensor_where(UCtx *c, UOp *cond, UOp *a, UOp *b, Err *e)
{
	UOp *s[3] = { cond, a, b };
	DType t;

	if (!cond || !a || !b)
		return NULL;
	t = dtype_promote(a->dtype, b->dtype);
	if (cond->dtype != DT_BOOL && !(s[0] = tensor_cast(c, DT_BOOL, cond, e)))
		return NULL;
	if (unify(c, s, 3, 1, t, OP_WHERE, e) < 0)
		return NULL;
	return tensor_new(c, OP_WHERE, t, s, 3, 0, 0, NULL, NULL, 0, e);
}

UOp *
tensor_cast(UCtx *c, DType t, UOp *a, Err *e)
{
	if (!a)
		return NULL;
	if (t == DT_VOID || t == DT_INDEX || t >= DT_COUNT)
		return err_set(e, "cast: %s is not a tensor dtype", dtype_name(t)), NULL;
	if (a->dtype == t)
		return a;
	if (a->op == OP_CONST)
		return dtype_is_float(a->dtype) ? uop_constf(c, t, uop_const_value(a)) : iconst(c, t, a->arg[0]);
	return tensor_new(c, OP_CAST, t, &a, 1, 0, 0, NULL, NULL, 0, e);
}

UOp *
tensor_bitcast(UCtx *c, DType t, UOp *a, Err *e)
{
	if (!a)
		return NULL;
	if (t == DT_VOID || t == DT_INDEX || t == DT_BOOL || t >= DT_COUNT || a->dtype == DT_BOOL)
		return err_set(e, "bitcast: %s to %s is not a reinterpretation", dtype_name(a->dtype),
		               dtype_name(t)), NULL;
	if (a->dtype == t)
		return a;
	return tensor_new(c, OP_BITCAST, t, &a, 1, 0, 0, NULL, NULL, 0, e);
}

UOp *
tensor_reduce(UCtx *c, Op op, UOp *a, const int64_t *axes, int k, int keepdim, Err *e)
{
	int64_t ax[T_MAXDIM], s[T_MAXDIM];
	int i, j, n = 0, red[T_MAXDIM] = {0};
	UOp *r;

	if (!a)
		return NULL;
	if (op != OP_ADD && op != OP_MAX && op != OP_MUL)
		return err_set(e, "reduce: %s is not add, max or mul", uop_info[op].name), NULL;
	if (k < 0) {   /* all axes */
		for (i = 0; i < a->ndim; i++)
			ax[n++] = i;
	} else {
		if (k > a->ndim)
			return err_set(e, "reduce: %d axes for a tensor of rank %d", k, a->ndim), NULL;
		for (i = 0; i < k; i++) {
			int64_t x = axes[i];

			if (norm_axis("reduce", &x, a->ndim, e) < 0)
				return NULL;
			if (red[x])
				return err_set(e, "reduce: axis %lld appears twice", (long long)x), NULL;
			red[x] = 1;
			ax[n++] = x;
		}
	}
	for (i = 0; i < n; i++)
		red[ax[i]] = 1;
	/* sorted axes: equal reductions are one node */
	for (i = 0, j = 0; i < a->ndim; i++)
		if (red[i])
			ax[j++] = i;
	if (a->dtype == DT_BOOL && op == OP_ADD && !(a = tensor_cast(c, DT_INT32, a, e)))
		return NULL;
	r = n ? tensor_new(c, OP_REDUCE, a->dtype, &a, 1, op, n, NULL, ax, n * 8, e) : a;
	if (!r || keepdim)
		return r;
	for (i = 0, j = 0; i < a->ndim; i++)
		if (!red[i])
			s[j++] = a->shape[i];
	return tensor_reshape(c, r, s, j, e);
}

UOp *
tensor_copy(UCtx *c, UOp *a, const char *device, Err *e)
{
	size_t n;

	if (!a)
		return NULL;
	n = strlen(device);
	if (n == 0 || n > 4000)
		return err_set(e, "copy: bad device name"), NULL;
	return tensor_new(c, OP_COPY, a->dtype, &a, 1, 0, 0, NULL, device, (uint32_t)n + 1, e);
}

UOp *
tensor_replicated(UCtx *c, UOp *a, int axis, Err *e)
{
	if (!a)
		return NULL;
	return tensor_new(c, OP_REPLICATED, a->dtype, &a, 1, axis, 0, NULL, NULL, 0, e);
}

UOp *
tensor_named(UCtx *c, UOp *a, const char *name, Err *e)
{
	if (!a)
		return NULL;
	if (!uop_valid_name(name))
		return err_set(e, "named: \"%s\" is not an identifier of at most 63 characters", name), NULL;
	return tensor_new(c, (Op)a->op, a->dtype, a->src, a->nsrc, a->arg[0], a->arg[1], name,
	                  a->data, a->ndata, e);
}

UOp *
tensor_function(UCtx *c, UOp *const *body, int nbody, UOp *const *args, int nargs, Err *e)
{
	UOp *s[256], *t;
	int i;

	if (nbody < 1 || nargs < 0 || nargs > 255)
		return err_set(e, "function: needs a body and at most 255 arguments"), NULL;
	if (!(t = tensor_new(c, OP_TUPLE, body[0] ? body[0]->dtype : DT_VOID, body, nbody, 0, 0,
	                     NULL, NULL, 0, e)))
		return NULL;
	s[0] = t;
	for (i = 0; i < nargs; i++)
		s[i + 1] = args[i];
	return tensor_new(c, OP_FUNCTION, t->dtype, s, nargs + 1, 0, 0, NULL, NULL, 0, e);
}

UOp *
tensor_gettuple(UCtx *c, UOp *f, int k, Err *e)
{
	if (!f)
		return NULL;
	if ((f->op == OP_FUNCTION || f->op == OP_CALL) && k >= 0 && k < f->src[0]->nsrc)
		return tensor_new(c, OP_GETTUPLE, f->src[0]->src[k]->dtype, &f, 1, k, 0, NULL, NULL, 0, e);
	return tensor_new(c, OP_GETTUPLE, f->dtype, &f, 1, k, 0, NULL, NULL, 0, e);
}

/* derive.c - the spec's derived properties of a UOp: shape, device, shard axis and address space. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uop.h"

/*
** What a node's shape is follows the spec's table of derived properties (its
** "Derived Properties" section), as minmax.c follows it for min_max. The rules
** read only the node and its sources: uop_new stores what they give, and the
** tensor constructors run them first on a probe node for their messages.
*/

int64_t
uop_numel(const UOp *u)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < u->ndim; i++)
		n *= u->shape[i];
	return n;
}

int
uop_ndev(const char *d)
{
	int n = 1;

	if (!d)
		return 0;
	for (; *d; d++)
		n += *d == ',';
	return n;
}

void
uop_devname(const char *d, int k, char *out, size_t n)
{
	size_t len;
	const char *end;

	out[0] = 0;
	if (!d || n == 0)
		return;
	while (k-- > 0 && (d = strchr(d, ',')))
		d++;
	if (!d)
		return;
	end = strchr(d, ',');
	len = end ? (size_t)(end - d) : strlen(d);
	if (len >= n)
		len = n - 1;
	memcpy(out, d, len);
	out[len] = 0;
}

void
uop_shape_str(Buf *b, const int64_t *s, int n)
{
	int i;

	emit(b, "(");
	for (i = 0; i < n; i++)
		emit(b, "%s%lld", i ? ", " : "", (long long)s[i]);
	emit(b, n == 1 ? ",)" : ")");
}

const char *
uop_shape_fmt(char *out, size_t n, const int64_t *s, int nd)
{
	Buf b;

	buf_init(&b);
	uop_shape_str(&b, s, nd);
	snprintf(out, n, "%s", b.s ? b.s : "?");
	buf_free(&b);
	return out;
}

/* memcpy of sizes: a rank-0 shape is a NULL pointer */
static void
cpy(int64_t *d, const int64_t *s, size_t bytes)
{
	if (bytes)
		memcpy(d, s, bytes);
}

static int
same_shape(const UOp *a, const UOp *b)
{
	return a->ndim == b->ndim && (a->ndim == 0 || memcmp(a->shape, b->shape, a->ndim * sizeof *a->shape) == 0);
}

static const char *
data_dev(const UOp *u, size_t off)
{
	const char *p = (const char *)u->data + off;

	if (!u->data || u->ndata <= off || ((const char *)u->data)[u->ndata - 1] != 0 || !*p)
		return NULL;
	return p;
}

int
uop_shape_check(const char *what, const int64_t *s, int n, Err *e)
{
	int i;
	int64_t total = 1;

	if (n < 0 || n > T_MAXDIM)
		return err_set(e, "%s: rank %d is not in [0, %d]", what, n, T_MAXDIM);
	for (i = 0; i < n; i++) {
		if (s[i] < 0)
			return err_set(e, "%s: size %lld of axis %d is negative", what, (long long)s[i], i);
		if (uck_mul(total, s[i], &total) < 0 || total > ((int64_t)1 << 48))
			return err_set(e, "%s: the shape has more than 2^48 elements", what);
	}
	return 0;
}

/* Broadcast the shapes of the sources (right-aligned: each axis equal or 1). */
static int
broadcast(const UOp *u, UDerived *d, Err *e)
{
	const char *nm = uop_info[u->op].name;
	char b1[160], b2[160];
	int i, k, nd = 0;

	for (i = 0; i < u->nsrc; i++)
		if (u->src[i]->ndim > nd)
			nd = u->src[i]->ndim;
	d->ndim = nd;
	for (k = 0; k < nd; k++)
		d->shape[k] = 1;
	for (i = 0; i < u->nsrc; i++) {
		const UOp *s = u->src[i];
		int off = nd - s->ndim;

		for (k = 0; k < s->ndim; k++) {
			int64_t *o = &d->shape[off + k];

			if (s->shape[k] == *o || s->shape[k] == 1)
				continue;
			if (*o != 1) {
				int j;

				for (j = 0; j < i && u->src[j]->ndim < nd - off - k; j++)
					;
				return err_set(e, "%s: shapes %s and %s do not broadcast: axis %d (from the "
				               "right: %d) has sizes %lld and %lld", nm,
				               uop_shape_fmt(b1, sizeof b1, u->src[0]->shape, u->src[0]->ndim),
				               uop_shape_fmt(b2, sizeof b2, s->shape, s->ndim), off + k, nd - off - k,
				               (long long)*o, (long long)s->shape[k]);
			}
			*o = s->shape[k];
		}
		if (s->axis >= 0 && d->axis < 0)
			d->axis = s->axis + off;
	}
	return 0;
}

/* The device of an elementwise node: every source with a device agrees. */
static int
common_device(const UOp *u, UDerived *d, Err *e)
{
	int i;

	for (i = 0; i < u->nsrc; i++) {
		const char *dv = u->src[i]->device;

		if (!dv)
			continue;
		if (!d->device)
			d->device = dv;
		else if (strcmp(d->device, dv) != 0)
			return err_set(e, "%s: sources on different devices %s and %s (copy one first)",
			               uop_info[u->op].name, d->device, dv);
	}
	return 0;
}

/* New shard axis of a reshape: the axis with the same prefix product, divisible by n. */
static int
reshape_axis(const UOp *a, const int64_t *s, int n)
{
	int64_t pre = 1, p = 1;
	int nd = uop_ndev(a->device), k;

	for (k = 0; k < a->axis; k++)
		pre *= a->shape[k];
	for (k = 0; k < n; p *= s[k], k++)
		if (p == pre && s[k] % nd == 0 && s[k] > 0 && (s[k] > 1 || nd == 1))
			return k;
	return -1;
}

/* The message of a parameter whose argument has another shape (kept out of
** param_scan's frame, which recurses as deep as the body nests). */
static int __attribute__((noinline))
param_mismatch(const UOp *u, const UOp *a, Err *e)
{
	char b1[160], b2[160];

	return err_set(e, "function: param %lld (%s) has shape %s but its argument has shape %s",
	               (long long)u->arg[0], u->name ? u->name : "?",
	               uop_shape_fmt(b1, sizeof b1, u->shape, u->ndim), uop_shape_fmt(b2, sizeof b2, a->shape, a->ndim));
}

static int
param_scan(const UOp *u, const UOp *f, unsigned char *seen, uint32_t nseen, Err *e)
{
	int i;

	if (u->id < nseen) {
		if (seen[u->id])
			return 0;
		seen[u->id] = 1;
	}
	if (u->op == OP_PARAM) {
		int64_t k = u->arg[0];

		if (k < 0 || k + 1 >= f->nsrc)
			return err_set(e, "function: the body uses param %lld but %d argument%s given",
			               (long long)k, f->nsrc - 1, f->nsrc == 2 ? " is" : "s are");
		return same_shape(u, f->src[k + 1]) ? 0 : param_mismatch(u, f->src[k + 1], e);
	}
	if (u->op == OP_FUNCTION || u->op == OP_CALL) {   /* its own params: check its arguments only */
		for (i = 1; i < u->nsrc; i++)
			if (param_scan(u->src[i], f, seen, nseen, e) < 0)
				return -1;
		return 0;
	}
	for (i = 0; i < u->nsrc; i++)
		if (param_scan(u->src[i], f, seen, nseen, e) < 0)
			return -1;
	return 0;
}

static int
derive(const UOp *u, UDerived *d, Err *e)
{
	const char *nm = uop_info[u->op].name;
	const UOp *a = u->nsrc > 0 ? u->src[0] : NULL;
	const int64_t *v = u->data;
	char b1[160], b2[160];
	int64_t n = u->ndata / 8;
	int i, k, nd;

	d->ndim = 0;
	d->axis = -1;
	d->device = NULL;
	switch ((Op)u->op) {
	case OP_CONST:
	case OP_VAR:
		return 0;
	case OP_PARAM:
	case OP_BUFFER:
		if (u->arg[1] < 0 || u->arg[1] > T_MAXDIM || (uint64_t)u->arg[1] * 8 > u->ndata)
			return err_set(e, "%s: bad rank %lld", nm, (long long)u->arg[1]);
		if (uop_shape_check(nm, v, (int)u->arg[1], e) < 0)
			return -1;
		d->ndim = (int)u->arg[1];
		cpy(d->shape, v, d->ndim * 8);
		d->device = data_dev(u, d->ndim * 8);
		if (uop_ndev(d->device) > 1) {
			if (d->ndim == 0 || d->shape[0] % uop_ndev(d->device) != 0)
				return err_set(e, "%s: shape %s cannot be split over the %d devices %s on axis 0",
				               nm, uop_shape_fmt(b1, sizeof b1, d->shape, d->ndim), uop_ndev(d->device), d->device);
			d->axis = 0;
		}
		return 0;
	case OP_BINARY:
		d->ndim = 1;
		d->shape[0] = u->ndata;
		d->device = "CPU";
		return 0;
	case OP_PERMUTE:
	case OP_FLIP:
		if (n != a->ndim)
			return err_set(e, "%s: %lld entries for a tensor of rank %d", nm, (long long)n, a->ndim);
		d->ndim = a->ndim;
		d->device = a->device;
		if (u->op == OP_FLIP) {
			cpy(d->shape, a->shape, a->ndim * 8);
			d->axis = a->axis;
			return 0;
		}
		{
			unsigned seen = 0;

			for (i = 0; i < n; i++) {
				if (v[i] < 0 || v[i] >= a->ndim || (seen >> v[i] & 1))
					return err_set(e, "permute: the order is not a permutation of 0..%d (entry %d is %lld)",
					               a->ndim - 1, i, (long long)v[i]);
				seen |= 1u << v[i];
				d->shape[i] = a->shape[v[i]];
				if (v[i] == a->axis)
					d->axis = i;
			}
		}
		return 0;
	case OP_RESHAPE:
	case OP_EXPAND:
		if (u->arg[1] != n || uop_shape_check(nm, v, (int)n, e) < 0)
			return u->arg[1] != n ? err_set(e, "%s: bad rank", nm) : -1;
		d->ndim = (int)n;
		cpy(d->shape, v, n * 8);
		d->device = a->device;
		if (u->op == OP_RESHAPE) {
			{
				int64_t t = 1;

				for (i = 0; i < n; i++)
					t *= v[i];
				if (t != uop_numel(a))
					return err_set(e, "reshape: %s has %lld elements, %s has %lld",
					               uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim), (long long)uop_numel(a),
					               uop_shape_fmt(b2, sizeof b2, v, (int)n), (long long)t);
			}
			if (a->axis >= 0 && (d->axis = reshape_axis(a, v, (int)n)) < 0)
				return err_set(e, "reshape: %s to %s splits the shard axis %d over %d devices",
				               uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim), uop_shape_fmt(b2, sizeof b2, v, (int)n),
				               a->axis, uop_ndev(a->device));
			return 0;
		}
		if (n != a->ndim)
			return err_set(e, "expand: %s to %s changes the rank (reshape first)",
			               uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim), uop_shape_fmt(b2, sizeof b2, v, (int)n));
		for (i = 0; i < n; i++)
			if (a->shape[i] != v[i] && a->shape[i] != 1)
				return err_set(e, "expand: %s to %s: axis %d has size %lld, which is neither 1 nor %lld",
				               uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim), uop_shape_fmt(b2, sizeof b2, v, (int)n),
				               i, (long long)a->shape[i], (long long)v[i]);
		d->axis = a->axis;
		return 0;
	case OP_PAD:
	case OP_SHRINK:
		if (n != 2 * a->ndim)
			return err_set(e, "%s: %lld entries for a tensor of rank %d", nm, (long long)n, a->ndim);
		if (uop_shape_check(nm, v + a->ndim, a->ndim, e) < 0)
			return -1;
		for (i = 0; i < a->ndim; i++) {
			int64_t o = v[i], s = v[a->ndim + i];
			int bad = u->op == OP_PAD ? (o < 0 || o + a->shape[i] > s)
			                          : (o < 0 || s > a->shape[i] - o);
			if (bad)
				return err_set(e, "%s: axis %d of %s: offset %lld and size %lld do not fit in %lld",
				               nm, i, uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim), (long long)o,
				               (long long)s, (long long)(u->op == OP_PAD ? s : a->shape[i]));
			d->shape[i] = s;
		}
		d->ndim = a->ndim;
		d->device = a->device;
		d->axis = a->axis;
		return 0;
	case OP_STACK:
		if (u->nsrc < 1 || a->ndim + 1 > T_MAXDIM)
			return err_set(e, "stack: needs 1 to %d sources of rank < %d", 0xffff, T_MAXDIM);
		for (i = 1; i < u->nsrc; i++)
			if (!same_shape(a, u->src[i]))
				return err_set(e, "stack: source %d has shape %s, source 0 has %s", i,
				               uop_shape_fmt(b1, sizeof b1, u->src[i]->shape, u->src[i]->ndim),
				               uop_shape_fmt(b2, sizeof b2, a->shape, a->ndim));
		d->ndim = a->ndim + 1;
		d->shape[0] = u->nsrc;
		cpy(d->shape + 1, a->shape, a->ndim * 8);
		return common_device(u, d, e);
	case OP_INDEX:
		if (u->nsrc - 1 > a->ndim)
			return err_set(e, "index: %d indices for a tensor of rank %d", u->nsrc - 1, a->ndim);
		nd = 0;
		for (i = 1; i < u->nsrc; i++) {
			const UOp *x = u->src[i];

			if (dtype_is_float(x->dtype) || x->ndim > 1)
				return err_set(e, "index: index %d must be an integer of shape () or (k,), got %s %s",
				               i - 1, dtype_name(x->dtype), uop_shape_fmt(b1, sizeof b1, x->shape, x->ndim));
			if (x->ndim == 1)
				d->shape[nd++] = x->shape[0];
		}
		for (k = u->nsrc - 1; k < a->ndim; k++)
			d->shape[nd++] = a->shape[k];
		d->ndim = nd;
		d->device = a->device;
		return 0;
	case OP_BITCAST: {
		int ob = dtype_bytes(a->dtype), nb = dtype_bytes(u->dtype);

		d->ndim = a->ndim;
		cpy(d->shape, a->shape, a->ndim * 8);
		d->device = a->device;
		if (ob != nb) {
			if (a->ndim == 0 || nb == 0 || (a->shape[a->ndim - 1] * ob) % nb != 0)
				return err_set(e, "bitcast: %s %s does not fill whole %s elements on its last axis",
				               dtype_name(a->dtype), uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim),
				               dtype_name(u->dtype));
			d->shape[a->ndim - 1] = a->shape[a->ndim - 1] * ob / nb;
		}
		return 0;
	}
	case OP_REDUCE:
		if (u->arg[0] != OP_ADD && u->arg[0] != OP_MAX && u->arg[0] != OP_MUL)
			return err_set(e, "reduce: the op must be add, max or mul");
		d->ndim = a->ndim;
		cpy(d->shape, a->shape, a->ndim * 8);
		d->device = a->device;
		d->axis = a->axis;
		for (i = 0; i < n; i++) {
			if (v[i] < 0 || v[i] >= a->ndim)
				return err_set(e, "reduce: axis %lld is out of range for %s", (long long)v[i],
				               uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim));
			d->shape[v[i]] = 1;
			if (v[i] == a->axis)
				d->axis = -1;
		}
		return 0;
	case OP_COPY:
		d->ndim = a->ndim;
		cpy(d->shape, a->shape, a->ndim * 8);
		if (!(d->device = data_dev(u, 0)))
			return err_set(e, "copy: no device");
		if ((k = uop_ndev(d->device)) > 1) {
			if (a->ndim == 0 || a->shape[0] % k != 0)
				return err_set(e, "copy: %s cannot be split over the %d devices %s on axis 0",
				               uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim), k, d->device);
			d->axis = 0;
		}
		return 0;
	case OP_REPLICATED:
		k = (int)u->arg[0];
		if (a->axis < 0 || k != a->axis || a->shape[k] != uop_ndev(a->device))
			return err_set(e, "replicated: axis %d of %s on %s is not its shard axis of size %d",
			               k, uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim), a->device ? a->device : "no device",
			               uop_ndev(a->device));
		d->ndim = a->ndim - 1;
		for (i = 0, nd = 0; i < a->ndim; i++)
			if (i != k)
				d->shape[nd++] = a->shape[i];
		d->device = a->device;
		return 0;
	case OP_CONTIGUOUS:
	case OP_DETACH:
	case OP_LOAD:
	case OP_AFTER:
		d->ndim = a->ndim;
		cpy(d->shape, a->shape, a->ndim * 8);
		d->device = a->device;
		d->axis = a->axis;
		return 0;
	case OP_STORE:
		if (u->nsrc < 2 || !same_shape(a, u->src[1]))
			return err_set(e, "store: the buffer has shape %s, the value %s",
			               uop_shape_fmt(b1, sizeof b1, a->shape, a->ndim),
			               u->nsrc < 2 ? "is missing" : uop_shape_fmt(b2, sizeof b2, u->src[1]->shape, u->src[1]->ndim));
		d->device = a->device;
		return 0;
	case OP_GROUP:
	case OP_SINK:
	case OP_TUPLE:
		return u->nsrc ? common_device(u, d, e) : 0;
	case OP_FUNCTION:
	case OP_CALL: {
		unsigned char *seen;
		int rc;

		if (u->nsrc < 1 || a->op != OP_TUPLE || a->nsrc < 1)
			return err_set(e, "%s: the body must be a non-empty tuple", nm);
		d->ndim = a->src[0]->ndim;
		cpy(d->shape, a->src[0]->shape, d->ndim * 8);
		d->device = u->nsrc > 1 ? u->src[1]->device : a->src[0]->device;
		if (!(seen = calloc(u->id + 1, 1)))
			return err_set(e, "%s: out of memory", nm);
		rc = param_scan(a, u, seen, u->id + 1, e);
		free(seen);
		return rc;
	}
	case OP_GETTUPLE: {
		const UOp *t;

		if (a->op != OP_FUNCTION && a->op != OP_CALL)
			return err_set(e, "gettuple: the source is a %s, not a function", uop_info[a->op].name);
		t = a->src[0];
		if (u->arg[0] < 0 || u->arg[0] >= t->nsrc)
			return err_set(e, "gettuple: element %lld of a tuple of %d", (long long)u->arg[0], t->nsrc);
		t = t->src[u->arg[0]];
		d->ndim = t->ndim;
		cpy(d->shape, t->shape, d->ndim * 8);
		d->device = a->device;
		return 0;
	}
	default:
		break;
	}
	/* elementwise: broadcast */
	if (broadcast(u, d, e) < 0)
		return -1;
	return common_device(u, d, e);
}

int
uop_derive(const UOp *u, UDerived *d, Err *e)
{
	int i, plain = !(uop_info[u->op].flags & U_TENSOR);

	d->ndim = 0;
	d->axis = -1;
	d->addrspace = AS_NONE;
	d->device = NULL;
	/* the loop IR (kernel.h) is scalar: buffers, accesses and statements */
	if (uop_info[u->op].flags & U_KERNEL) {
		if (u->op == OP_DEFINE)
			d->addrspace = (int)u->arg[1];
		return 0;
	}
	if ((u->op == OP_INDEX || u->op == OP_LOAD || u->op == OP_STORE) && u->nsrc > 0
	&& (u->src[0]->op == OP_DEFINE || (u->src[0]->op == OP_INDEX && u->src[0]->nsrc > 0
	    && u->src[0]->src[0]->op == OP_DEFINE))) {
		d->addrspace = u->src[0]->addrspace;
		return 0;
	}
	for (i = 0; plain && i < u->nsrc; i++)
		plain = u->src[i]->ndim == 0 && !u->src[i]->device && u->src[i]->axis < 0;
	if (plain)
		return 0;   /* index arithmetic and scalar constants */
	if (derive(u, d, e) < 0)
		return -1;
	switch (u->op) {
	case OP_CONST: case OP_VAR:
		d->addrspace = AS_NONE;
		break;
	case OP_PARAM: case OP_BUFFER: case OP_BINARY:
		d->addrspace = AS_GLOBAL;
		break;
	case OP_LOAD:
		d->addrspace = u->arg[0] > AS_NONE && u->arg[0] <= AS_REG ? (int)u->arg[0] : AS_GLOBAL;
		break;
	default:
		d->addrspace = AS_NONE;
		for (i = 0; i < u->nsrc && !d->addrspace; i++)
			d->addrspace = u->src[i]->addrspace;
		break;
	}
	return 0;
}

const char *
addrspace_name(int a)
{
	static const char *const n[] = { "none", "GLOBAL", "LOCAL", "REG" };

	return a >= 0 && a <= AS_REG ? n[a] : "?";
}


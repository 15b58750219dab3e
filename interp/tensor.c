/* tensor.c - tensor programs on the UOp IR: derived shape, device and shard axis; checked constructors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uop.h"

int64_t
tensor_numel(const UOp *u)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < u->ndim; i++)
		n *= u->shape[i];
	return n;
}

int
tensor_ndev(const char *d)
{
	int n = 1;

	if (!d)
		return 0;
	for (; *d; d++)
		n += *d == ',';
	return n;
}

void
tensor_devname(const char *d, int k, char *out, size_t n)
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
tensor_shape_str(Buf *b, const int64_t *s, int n)
{
	int i;

	emit(b, "(");
	for (i = 0; i < n; i++)
		emit(b, "%s%lld", i ? ", " : "", (long long)s[i]);
	emit(b, n == 1 ? ",)" : ")");
}

static const char *
shp(char *out, size_t n, const int64_t *s, int nd)
{
	Buf b;

	buf_init(&b);
	tensor_shape_str(&b, s, nd);
	snprintf(out, n, "%s", b.s ? b.s : "?");
	buf_free(&b);
	return out;
}

double
tensor_const_value(const UOp *u)
{
	double d;

	if (dtype_is_float(u->dtype)) {
		memcpy(&d, &u->arg[0], sizeof d);
		return d;
	}
	if (u->dtype == DT_UINT64)
		return (double)(uint64_t)u->arg[0];
	return (double)u->arg[0];
}

/*
** The derived properties. What a node's shape is follows the spec's table;
** d receives it. The device string points into the node's data or a source
** (both live in the arena).
*/
typedef struct Derived {
	int ndim, axis, as;
	int64_t s[T_MAXDIM];
	const char *dev;
} Derived;

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

static int
check_shape(const char *what, const int64_t *s, int n, Err *e)
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
broadcast(const UOp *u, Derived *d, Err *e)
{
	const char *nm = uop_info[u->op].name;
	char b1[160], b2[160];
	int i, k, nd = 0;

	for (i = 0; i < u->nsrc; i++)
		if (u->src[i]->ndim > nd)
			nd = u->src[i]->ndim;
	d->ndim = nd;
	for (k = 0; k < nd; k++)
		d->s[k] = 1;
	for (i = 0; i < u->nsrc; i++) {
		const UOp *s = u->src[i];
		int off = nd - s->ndim;

		for (k = 0; k < s->ndim; k++) {
			int64_t *o = &d->s[off + k];

			if (s->shape[k] == *o || s->shape[k] == 1)
				continue;
			if (*o != 1) {
				int j;

				for (j = 0; j < i && u->src[j]->ndim < nd - off - k; j++)
					;
				return err_set(e, "%s: shapes %s and %s do not broadcast: axis %d (from the "
				               "right: %d) has sizes %lld and %lld", nm,
				               shp(b1, sizeof b1, u->src[0]->shape, u->src[0]->ndim),
				               shp(b2, sizeof b2, s->shape, s->ndim), off + k, nd - off - k,
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
common_device(const UOp *u, Derived *d, Err *e)
{
	int i;

	for (i = 0; i < u->nsrc; i++) {
		const char *dv = u->src[i]->device;

		if (!dv)
			continue;
		if (!d->dev)
			d->dev = dv;
		else if (strcmp(d->dev, dv) != 0)
			return err_set(e, "%s: sources on different devices %s and %s (copy one first)",
			               uop_info[u->op].name, d->dev, dv);
	}
	return 0;
}

/* New shard axis of a reshape: the axis with the same prefix product, divisible by n. */
static int
reshape_axis(const UOp *a, const int64_t *s, int n)
{
	int64_t pre = 1, p = 1;
	int nd = tensor_ndev(a->device), k;

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
	               shp(b1, sizeof b1, u->shape, u->ndim), shp(b2, sizeof b2, a->shape, a->ndim));
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
derive(const UOp *u, Derived *d, Err *e)
{
	const char *nm = uop_info[u->op].name;
	const UOp *a = u->nsrc > 0 ? u->src[0] : NULL;
	const int64_t *v = u->data;
	char b1[160], b2[160];
	int64_t n = u->ndata / 8;
	int i, k, nd;

	d->ndim = 0;
	d->axis = -1;
	d->dev = NULL;
	switch ((Op)u->op) {
	case OP_CONST:
	case OP_VAR:
		return 0;
	case OP_PARAM:
	case OP_BUFFER:
		if (u->arg[1] < 0 || u->arg[1] > T_MAXDIM || (uint64_t)u->arg[1] * 8 > u->ndata)
			return err_set(e, "%s: bad rank %lld", nm, (long long)u->arg[1]);
		if (check_shape(nm, v, (int)u->arg[1], e) < 0)
			return -1;
		d->ndim = (int)u->arg[1];
		cpy(d->s, v, d->ndim * 8);
		d->dev = data_dev(u, d->ndim * 8);
		if (tensor_ndev(d->dev) > 1) {
			if (d->ndim == 0 || d->s[0] % tensor_ndev(d->dev) != 0)
				return err_set(e, "%s: shape %s cannot be split over the %d devices %s on axis 0",
				               nm, shp(b1, sizeof b1, d->s, d->ndim), tensor_ndev(d->dev), d->dev);
			d->axis = 0;
		}
		return 0;
	case OP_BINARY:
		d->ndim = 1;
		d->s[0] = u->ndata;
		d->dev = "CPU";
		return 0;
	case OP_PERMUTE:
	case OP_FLIP:
		if (n != a->ndim)
			return err_set(e, "%s: %lld entries for a tensor of rank %d", nm, (long long)n, a->ndim);
		d->ndim = a->ndim;
		d->dev = a->device;
		if (u->op == OP_FLIP) {
			cpy(d->s, a->shape, a->ndim * 8);
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
				d->s[i] = a->shape[v[i]];
				if (v[i] == a->axis)
					d->axis = i;
			}
		}
		return 0;
	case OP_RESHAPE:
	case OP_EXPAND:
		if (u->arg[1] != n || check_shape(nm, v, (int)n, e) < 0)
			return u->arg[1] != n ? err_set(e, "%s: bad rank", nm) : -1;
		d->ndim = (int)n;
		cpy(d->s, v, n * 8);
		d->dev = a->device;
		if (u->op == OP_RESHAPE) {
			{
				int64_t t = 1;

				for (i = 0; i < n; i++)
					t *= v[i];
				if (t != tensor_numel(a))
					return err_set(e, "reshape: %s has %lld elements, %s has %lld",
					               shp(b1, sizeof b1, a->shape, a->ndim), (long long)tensor_numel(a),
					               shp(b2, sizeof b2, v, (int)n), (long long)t);
			}
			if (a->axis >= 0 && (d->axis = reshape_axis(a, v, (int)n)) < 0)
				return err_set(e, "reshape: %s to %s splits the shard axis %d over %d devices",
				               shp(b1, sizeof b1, a->shape, a->ndim), shp(b2, sizeof b2, v, (int)n),
				               a->axis, tensor_ndev(a->device));
			return 0;
		}
		if (n != a->ndim)
			return err_set(e, "expand: %s to %s changes the rank (reshape first)",
			               shp(b1, sizeof b1, a->shape, a->ndim), shp(b2, sizeof b2, v, (int)n));
		for (i = 0; i < n; i++)
			if (a->shape[i] != v[i] && a->shape[i] != 1)
				return err_set(e, "expand: %s to %s: axis %d has size %lld, which is neither 1 nor %lld",
				               shp(b1, sizeof b1, a->shape, a->ndim), shp(b2, sizeof b2, v, (int)n),
				               i, (long long)a->shape[i], (long long)v[i]);
		d->axis = a->axis;
		return 0;
	case OP_PAD:
	case OP_SHRINK:
		if (n != 2 * a->ndim)
			return err_set(e, "%s: %lld entries for a tensor of rank %d", nm, (long long)n, a->ndim);
		if (check_shape(nm, v + a->ndim, a->ndim, e) < 0)
			return -1;
		for (i = 0; i < a->ndim; i++) {
			int64_t o = v[i], s = v[a->ndim + i];
			int bad = u->op == OP_PAD ? (o < 0 || o + a->shape[i] > s)
			                          : (o < 0 || s > a->shape[i] - o);
			if (bad)
				return err_set(e, "%s: axis %d of %s: offset %lld and size %lld do not fit in %lld",
				               nm, i, shp(b1, sizeof b1, a->shape, a->ndim), (long long)o,
				               (long long)s, (long long)(u->op == OP_PAD ? s : a->shape[i]));
			d->s[i] = s;
		}
		d->ndim = a->ndim;
		d->dev = a->device;
		d->axis = a->axis;
		return 0;
	case OP_STACK:
		if (u->nsrc < 1 || a->ndim + 1 > T_MAXDIM)
			return err_set(e, "stack: needs 1 to %d sources of rank < %d", 0xffff, T_MAXDIM);
		for (i = 1; i < u->nsrc; i++)
			if (!same_shape(a, u->src[i]))
				return err_set(e, "stack: source %d has shape %s, source 0 has %s", i,
				               shp(b1, sizeof b1, u->src[i]->shape, u->src[i]->ndim),
				               shp(b2, sizeof b2, a->shape, a->ndim));
		d->ndim = a->ndim + 1;
		d->s[0] = u->nsrc;
		cpy(d->s + 1, a->shape, a->ndim * 8);
		return common_device(u, d, e);
	case OP_INDEX:
		if (u->nsrc - 1 > a->ndim)
			return err_set(e, "index: %d indices for a tensor of rank %d", u->nsrc - 1, a->ndim);
		nd = 0;
		for (i = 1; i < u->nsrc; i++) {
			const UOp *x = u->src[i];

			if (dtype_is_float(x->dtype) || x->ndim > 1)
				return err_set(e, "index: index %d must be an integer of shape () or (k,), got %s %s",
				               i - 1, dtype_name(x->dtype), shp(b1, sizeof b1, x->shape, x->ndim));
			if (x->ndim == 1)
				d->s[nd++] = x->shape[0];
		}
		for (k = u->nsrc - 1; k < a->ndim; k++)
			d->s[nd++] = a->shape[k];
		d->ndim = nd;
		d->dev = a->device;
		return 0;
	case OP_BITCAST: {
		int ob = dtype_bytes(a->dtype), nb = dtype_bytes(u->dtype);

		d->ndim = a->ndim;
		cpy(d->s, a->shape, a->ndim * 8);
		d->dev = a->device;
		if (ob != nb) {
			if (a->ndim == 0 || nb == 0 || (a->shape[a->ndim - 1] * ob) % nb != 0)
				return err_set(e, "bitcast: %s %s does not fill whole %s elements on its last axis",
				               dtype_name(a->dtype), shp(b1, sizeof b1, a->shape, a->ndim),
				               dtype_name(u->dtype));
			d->s[a->ndim - 1] = a->shape[a->ndim - 1] * ob / nb;
		}
		return 0;
	}
	case OP_REDUCE:
		if (u->arg[0] != OP_ADD && u->arg[0] != OP_MAX && u->arg[0] != OP_MUL)
			return err_set(e, "reduce: the op must be add, max or mul");
		d->ndim = a->ndim;
		cpy(d->s, a->shape, a->ndim * 8);
		d->dev = a->device;
		d->axis = a->axis;
		for (i = 0; i < n; i++) {
			if (v[i] < 0 || v[i] >= a->ndim)
				return err_set(e, "reduce: axis %lld is out of range for %s", (long long)v[i],
				               shp(b1, sizeof b1, a->shape, a->ndim));
			d->s[v[i]] = 1;
			if (v[i] == a->axis)
				d->axis = -1;
		}
		return 0;
	case OP_COPY:
		d->ndim = a->ndim;
		cpy(d->s, a->shape, a->ndim * 8);
		if (!(d->dev = data_dev(u, 0)))
			return err_set(e, "copy: no device");
		if ((k = tensor_ndev(d->dev)) > 1) {
			if (a->ndim == 0 || a->shape[0] % k != 0)
				return err_set(e, "copy: %s cannot be split over the %d devices %s on axis 0",
				               shp(b1, sizeof b1, a->shape, a->ndim), k, d->dev);
			d->axis = 0;
		}
		return 0;
	case OP_REPLICATED:
		k = (int)u->arg[0];
		if (a->axis < 0 || k != a->axis || a->shape[k] != tensor_ndev(a->device))
			return err_set(e, "replicated: axis %d of %s on %s is not its shard axis of size %d",
			               k, shp(b1, sizeof b1, a->shape, a->ndim), a->device ? a->device : "no device",
			               tensor_ndev(a->device));
		d->ndim = a->ndim - 1;
		for (i = 0, nd = 0; i < a->ndim; i++)
			if (i != k)
				d->s[nd++] = a->shape[i];
		d->dev = a->device;
		return 0;
	case OP_CONTIGUOUS:
	case OP_DETACH:
	case OP_LOAD:
	case OP_AFTER:
		d->ndim = a->ndim;
		cpy(d->s, a->shape, a->ndim * 8);
		d->dev = a->device;
		d->axis = a->axis;
		return 0;
	case OP_STORE:
		if (u->nsrc < 2 || !same_shape(a, u->src[1]))
			return err_set(e, "store: the buffer has shape %s, the value %s",
			               shp(b1, sizeof b1, a->shape, a->ndim),
			               u->nsrc < 2 ? "is missing" : shp(b2, sizeof b2, u->src[1]->shape, u->src[1]->ndim));
		d->dev = a->device;
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
		cpy(d->s, a->src[0]->shape, d->ndim * 8);
		d->dev = u->nsrc > 1 ? u->src[1]->device : a->src[0]->device;
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
		cpy(d->s, t->shape, d->ndim * 8);
		d->dev = a->device;
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
uop_derive(UCtx *c, UOp *u, Err *e)
{
	Derived d;
	int i, plain = !(uop_info[u->op].flags & U_TENSOR);

	/* the loop IR (kernel.h) is scalar: buffers, accesses and statements */
	if (uop_info[u->op].flags & U_KERNEL) {
		u->axis = -1;
		u->addrspace = u->op == OP_DEFINE ? (uint8_t)u->arg[1] : AS_NONE;
		return 0;
	}
	if ((u->op == OP_INDEX || u->op == OP_LOAD || u->op == OP_STORE) && u->nsrc > 0
	&& (u->src[0]->op == OP_DEFINE || (u->src[0]->op == OP_INDEX && u->src[0]->nsrc > 0
	    && u->src[0]->src[0]->op == OP_DEFINE))) {
		u->axis = -1;
		u->addrspace = u->src[0]->addrspace;
		return 0;
	}
	for (i = 0; plain && i < u->nsrc; i++)
		plain = u->src[i]->ndim == 0 && !u->src[i]->device && u->src[i]->axis < 0;
	u->axis = -1;
	if (plain && u->op != OP_CONST && u->op != OP_VAR)
		return 0;   /* index arithmetic: a scalar */
	if (plain)
		return 0;
	if (derive(u, &d, e) < 0)
		return -1;
	if (c && d.ndim > 0) {
		int64_t *s = uctx_alloc(c, d.ndim * sizeof *s);

		if (!s)
			return err_set(e, "tensor: out of memory");
		memcpy(s, d.s, d.ndim * sizeof *s);
		u->shape = s;
	} else if (!c && d.ndim > 0) {
		/* a probe (tensor_new): shape needed by no one after the check */
	}
	u->ndim = (int16_t)d.ndim;
	u->axis = (int16_t)d.axis;
	u->device = d.dev;
	switch (u->op) {
	case OP_CONST: case OP_VAR:
		u->addrspace = AS_NONE;
		break;
	case OP_PARAM: case OP_BUFFER: case OP_BINARY:
		u->addrspace = AS_GLOBAL;
		break;
	case OP_LOAD:
		u->addrspace = u->arg[0] > AS_NONE && u->arg[0] <= AS_REG ? (uint8_t)u->arg[0] : AS_GLOBAL;
		break;
	default:
		u->addrspace = AS_NONE;
		for (i = 0; i < u->nsrc && !u->addrspace; i++)
			u->addrspace = u->src[i]->addrspace;
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

UOp *
tensor_new(UCtx *c, Op op, DType t, UOp *const *src, int nsrc, int64_t a0, int64_t a1,
           const char *name, const void *data, uint32_t ndata, Err *e)
{
	UOp *p, *u;
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
	rc = uop_derive(NULL, p, e);
	free(p);
	if (rc < 0)
		return NULL;
	if (!(u = uop_new(c, op, t, src, nsrc, a0, a1, name, data, ndata)))
		err_set(e, "%s: out of memory, or the graph nests deeper than %d", uop_info[op].name,
		        UOP_MAXDEPTH);
	return u;
}

/* ---- constructors ---- */

UOp *
tensor_const(UCtx *c, DType t, double v)
{
	int64_t bits;

	if (dtype_is_float(t)) {
		/* the value as the dtype holds it */
		unsigned char tmp[8];

		dtype_store_f(t, tmp, v);
		v = dtype_load_f(t, tmp);
		memcpy(&bits, &v, 8);
	} else
		bits = dtype_ftoi(t, v);
	return uop_new(c, OP_CONST, t, NULL, 0, bits, 0, NULL, NULL, 0);
}

static UOp *
iconst(UCtx *c, DType t, int64_t v)
{
	if (dtype_is_float(t))
		return tensor_const(c, t, (double)v);
	return uop_new(c, OP_CONST, t, NULL, 0, dtype_wrap(t, v), 0, NULL, NULL, 0);
}

UOp *
tensor_param(UCtx *c, const char *name, int slot, const int64_t *shape, int n, DType t,
             const char *device, Err *e)
{
	char buf[T_MAXDIM * 8 + 512];
	size_t dl;

	if (check_shape("param", shape, n, e) < 0)
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

	if (check_shape("tensor.from", shape, n, e) < 0)
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
	UOp *k = tensor_const(c, t, v);
	int i;

	if (check_shape("tensor.full", shape, n, e) < 0)
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

	if (check_shape("tensor.rand", shape, n, e) < 0)
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
	r = r ? tensor_alu(c, OP_SUB, r, tensor_const(c, DT_FLOAT32, 1.0), e) : NULL;
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
				return err_set(e, "reshape: %s has more than one -1", shp(b1, sizeof b1, shape, n)), NULL;
			free_at = i;
		} else if (s[i] < 0)
			return err_set(e, "reshape: size %lld of axis %d is negative", (long long)s[i], i), NULL;
		else if (uck_mul(known, s[i], &known) < 0)
			return err_set(e, "reshape: the shape overflows"), NULL;
	}
	if (free_at >= 0) {
		if (known == 0 || tensor_numel(a) % known != 0)
			return err_set(e, "reshape: %s cannot take %s (%lld elements)",
			               shp(b2, sizeof b2, shape, n), shp(b1, sizeof b1, a->shape, a->ndim),
			               (long long)tensor_numel(a)), NULL;
		s[free_at] = tensor_numel(a) / known;
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
		return dtype_is_float(a->dtype) ? tensor_const(c, t, tensor_const_value(a)) : iconst(c, t, a->arg[0]);
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

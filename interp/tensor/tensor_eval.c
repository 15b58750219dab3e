/* tensor_eval.c - the reference evaluator of tensor programs: views, elementwise, reduce, calls. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/limits.h"
#include "tensor.h"

/*
** A value is a view of a storage: element i (a multi-index) lives at
** off + sum(i[k] * st[k]) elements into the storage when lo[k] <= i[k] < hi[k]
** on every axis, and reads as 0 elsewhere (the padding). Movement ops only
** rewrite the view; kernels write fresh contiguous storage. Storages are
** reference counted because views share them.
*/
enum { CH = 512 };

typedef struct Store {
	int refs;
	int owned;          /* 0: points into a BINARY node's data */
	unsigned char *p;
} Store;

typedef struct View View;
struct View {
	DType dt;
	int nd, masked;
	int64_t shape[T_MAXDIM], st[T_MAXDIM], lo[T_MAXDIM], hi[T_MAXDIM];
	int64_t off;
	Store *s;
	View **tup;         /* FUNCTION, CALL, TUPLE: the values of the tuple */
	int ntup;
};

typedef struct Slot {
	const UOp *k;
	View *v;
} Slot;

typedef struct Ev {
	const TEvalOpts *o;
	View **env;         /* PARAM k inside a function body */
	int nenv;
	Slot *tab;
	size_t cap, n;
	uint64_t used, limit;
	Err *e;
	int64_t tick;       /* elements computed since the last Ctrl-C poll */
} Ev;

static void
store_unref(Store *s)
{
	if (s && --s->refs == 0) {
		if (s->owned)
			free(s->p);
		free(s);
	}
}

static void
view_free(View *v)
{
	int i;

	if (!v)
		return;
	store_unref(v->s);
	for (i = 0; i < v->ntup; i++)
		view_free(v->tup[i]);
	free(v->tup);
	free(v);
}

static View *
view_dup(const View *v)
{
	View *w = malloc(sizeof *w);

	if (!w)
		return NULL;
	*w = *v;
	w->tup = NULL;
	w->ntup = 0;
	if (w->s)
		w->s->refs++;
	return w;
}

static int64_t
numel(const int64_t *s, int n)
{
	int64_t t = 1;
	int i;

	for (i = 0; i < n; i++)
		t *= s[i];
	return t;
}

/* A fresh contiguous view of shape s[n] and dtype t (charged to the guard). */
static View *
view_new(Ev *ev, DType t, const int64_t *s, int n)
{
	int64_t total = numel(s, n), bytes = total * dtype_bytes(t);
	View *v;
	int i;

	if (ev->used + (uint64_t)bytes > ev->limit) {
		err_set(ev->e, "tensor_bytes limit: realize needs %lld more bytes for a buffer, past the limit of "
		        "%llu bytes (raise it with tessel.limits{tensor_bytes = N})", (long long)bytes,
		        (unsigned long long)ev->limit);
		return NULL;
	}
	if (!(v = calloc(1, sizeof *v)) || !(v->s = calloc(1, sizeof *v->s))
	|| !(v->s->p = malloc(bytes ? bytes : 1))) {
		if (v)
			free(v->s);
		free(v);
		err_set(ev->e, "realize: out of memory for %lld bytes", (long long)bytes);
		return NULL;
	}
	ev->used += bytes;
	v->s->refs = 1;
	v->s->owned = 1;
	v->dt = t;
	v->nd = n;
	for (i = n - 1, total = 1; i >= 0; i--) {
		v->shape[i] = s[i];
		v->st[i] = total;
		v->lo[i] = 0;
		v->hi[i] = s[i];
		total *= s[i];
	}
	return v;
}

static int
contiguous(const View *v)
{
	int64_t t = 1;
	int i;

	if (v->masked)
		return 0;
	for (i = v->nd - 1; i >= 0; i--) {
		if (v->shape[i] != 1 && v->st[i] != t)
			return 0;
		t *= v->shape[i];
	}
	return 1;
}

/* ---- reading and writing rows ---- */

/*
** Read len elements of row `idx` (the outer indices; nd-1 of them) from
** column j0 on, as doubles (f) or int64s (i). A view of rank 0 is one element.
*/
static void
read_row(const View *v, const int64_t *idx, int64_t j0, int64_t len, double *f, int64_t *iv)
{
	int nd = v->nd, k, last = nd - 1, bytes = dtype_bytes(v->dt);
	int64_t base = v->off, st = nd ? v->st[last] : 0, lo = 0, hi = len + j0, j;
	int valid = 1;
	const unsigned char *p = v->s ? v->s->p : NULL;

	for (k = 0; k < last; k++) {
		base += idx[k] * v->st[k];
		if (v->masked && (idx[k] < v->lo[k] || idx[k] >= v->hi[k]))
			valid = 0;
	}
	if (nd && v->masked) {
		lo = v->lo[last];
		hi = v->hi[last];
	}
	if (!valid) {
		lo = 0;
		hi = 0;
	}
	if (f) {
		if (v->dt == DT_FLOAT32 && !v->masked && valid) {
			const float *q = (const float *)p + base + j0 * st;

			if (st == 1)
				for (j = 0; j < len; j++)
					f[j] = q[j];
			else
				for (j = 0; j < len; j++)
					f[j] = q[j * st];
			return;
		}
		for (j = 0; j < len; j++) {
			int64_t c = j0 + j;

			f[j] = c >= lo && c < hi ? dtype_load_f(v->dt, p + (base + c * st) * bytes) : 0;
		}
	} else {
		if ((v->dt == DT_INT32 || v->dt == DT_INT64) && !v->masked && valid) {
			if (v->dt == DT_INT32) {
				const int32_t *q = (const int32_t *)p + base + j0 * st;

				for (j = 0; j < len; j++)
					iv[j] = q[j * st];
			} else {
				const int64_t *q = (const int64_t *)p + base + j0 * st;

				for (j = 0; j < len; j++)
					iv[j] = q[j * st];
			}
			return;
		}
		for (j = 0; j < len; j++) {
			int64_t c = j0 + j;

			iv[j] = c >= lo && c < hi ? dtype_load_i(v->dt, p + (base + c * st) * bytes) : 0;
		}
	}
}

/* Write len values into a contiguous view at flat position at. */
static void
write_run(View *o, int64_t at, int64_t len, const double *f, const int64_t *iv)
{
	int b = dtype_bytes(o->dt);
	unsigned char *p = o->s->p + at * b;
	int64_t j;

	if (f) {
		if (o->dt == DT_FLOAT32) {
			float *q = (float *)p;

			for (j = 0; j < len; j++)
				q[j] = (float)f[j];
		} else if (o->dt == DT_FLOAT64)
			memcpy(p, f, len * 8);
		else
			for (j = 0; j < len; j++)
				dtype_store_f(o->dt, p + j * b, f[j]);
	} else {
		if (o->dt == DT_INT32) {
			int32_t *q = (int32_t *)p;

			for (j = 0; j < len; j++)
				q[j] = (int32_t)(uint32_t)(uint64_t)iv[j];
		} else
			for (j = 0; j < len; j++)
				dtype_store_i(o->dt, p + j * b, iv[j]);
	}
}

/* Step the outer multi-index of shape s (n axes) to the next row; 0 at the end. */
static int
next_row(int64_t *idx, const int64_t *s, int n)
{
	int k;

	for (k = n - 1; k >= 0; k--) {
		if (++idx[k] < s[k])
			return 1;
		idx[k] = 0;
	}
	return 0;
}

/* v broadcast to shape s[n] (right-aligned, size-1 axes get stride 0). */
static void
bview(const View *v, const int64_t *s, int n, View *w)
{
	int i, off = n - v->nd;

	*w = *v;
	w->nd = n;
	w->masked = v->masked;
	for (i = 0; i < n; i++) {
		int k = i - off;

		w->shape[i] = s[i];
		if (k < 0 || (v->shape[k] == 1 && s[i] != 1)) {
			int empty = k >= 0 && v->masked && v->lo[k] >= v->hi[k];

			w->st[i] = 0;
			w->lo[i] = 0;
			w->hi[i] = empty ? 0 : s[i];
		} else {
			w->st[i] = v->st[k];
			w->lo[i] = v->lo[k];
			w->hi[i] = v->hi[k];
		}
	}
}

/* ---- elementwise ---- */

static int
is_unsigned64(DType t)
{
	return t == DT_UINT64;
}

uint64_t
tensor_threefry(uint64_t ctr, uint64_t key)
{
	static const int rot[8] = { 13, 15, 26, 6, 17, 29, 16, 24 };
	uint32_t x0 = (uint32_t)ctr, x1 = (uint32_t)(ctr >> 32);
	uint32_t ks[3];
	int r;

	ks[0] = (uint32_t)key;
	ks[1] = (uint32_t)(key >> 32);
	ks[2] = 0x1BD11BDAu ^ ks[0] ^ ks[1];
	x0 += ks[0];
	x1 += ks[1];
	for (r = 0; r < 20; r++) {
		x0 += x1;
		x1 = (x1 << rot[r % 8]) | (x1 >> (32 - rot[r % 8]));
		x1 ^= x0;
		if (r % 4 == 3) {
			int s = r / 4 + 1;

			x0 += ks[s % 3];
			x1 += ks[(s + 1) % 3] + (uint32_t)s;
		}
	}
	return (uint64_t)x1 << 32 | x0;
}

static void
fop(Op op, int64_t n, double *r, const double *a, const double *b, const double *c)
{
	int64_t j;

	switch (op) {
	case OP_NEG: for (j = 0; j < n; j++) r[j] = -a[j]; break;
	case OP_CAST: if (r != a) memcpy(r, a, n * 8); break;
	case OP_RECIP: for (j = 0; j < n; j++) r[j] = 1.0 / a[j]; break;
	case OP_TRUNC: for (j = 0; j < n; j++) r[j] = trunc(a[j]); break;
	case OP_EXP2: for (j = 0; j < n; j++) r[j] = exp2(a[j]); break;
	case OP_LOG2: for (j = 0; j < n; j++) r[j] = log2(a[j]); break;
	case OP_SIN: for (j = 0; j < n; j++) r[j] = sin(a[j]); break;
	case OP_SQRT: for (j = 0; j < n; j++) r[j] = sqrt(a[j]); break;
	case OP_ADD: for (j = 0; j < n; j++) r[j] = a[j] + b[j]; break;
	case OP_SUB: for (j = 0; j < n; j++) r[j] = a[j] - b[j]; break;
	case OP_MUL: for (j = 0; j < n; j++) r[j] = a[j] * b[j]; break;
	case OP_POW: for (j = 0; j < n; j++) r[j] = pow(a[j], b[j]); break;
	case OP_IDIV: for (j = 0; j < n; j++) r[j] = floor(a[j] / b[j]); break;
	case OP_MOD:
		for (j = 0; j < n; j++) {
			double m = fmod(a[j], b[j]);

			r[j] = m != 0 && (m < 0) != (b[j] < 0) ? m + b[j] : m;
		}
		break;
	case OP_MIN: for (j = 0; j < n; j++) r[j] = a[j] < b[j] || isnan(a[j]) ? a[j] : b[j]; break;
	case OP_MAX: for (j = 0; j < n; j++) r[j] = a[j] > b[j] || isnan(a[j]) ? a[j] : b[j]; break;
	case OP_CMPLT: for (j = 0; j < n; j++) r[j] = a[j] < b[j]; break;
	case OP_CMPNE: for (j = 0; j < n; j++) r[j] = a[j] != b[j]; break;
	case OP_CMPEQ: for (j = 0; j < n; j++) r[j] = a[j] == b[j]; break;
	case OP_WHERE: for (j = 0; j < n; j++) r[j] = a[j] != 0 ? b[j] : c[j]; break;
	case OP_MULACC: for (j = 0; j < n; j++) r[j] = a[j] * b[j] + c[j]; break;
	default: for (j = 0; j < n; j++) r[j] = NAN; break;
	}
}

static void
iop(Op op, int uns, int64_t n, int64_t *r, const int64_t *a, const int64_t *b, const int64_t *c)
{
	int64_t j;

#define U(x) ((uint64_t)(x))
	switch (op) {
	case OP_NEG: for (j = 0; j < n; j++) r[j] = (int64_t)(0 - U(a[j])); break;
	case OP_CAST: if (r != a) memcpy(r, a, n * 8); break;
	case OP_TRUNC: if (r != a) memcpy(r, a, n * 8); break;
	case OP_RECIP: for (j = 0; j < n; j++) r[j] = a[j] == 0 ? 0 : a[j] == 1 ? 1 : a[j] == -1 ? -1 : 0; break;
	case OP_ADD: for (j = 0; j < n; j++) r[j] = (int64_t)(U(a[j]) + U(b[j])); break;
	case OP_SUB: for (j = 0; j < n; j++) r[j] = (int64_t)(U(a[j]) - U(b[j])); break;
	case OP_MUL: for (j = 0; j < n; j++) r[j] = (int64_t)(U(a[j]) * U(b[j])); break;
	case OP_MULACC: for (j = 0; j < n; j++) r[j] = (int64_t)(U(a[j]) * U(b[j]) + U(c[j])); break;
	case OP_IDIV:
		for (j = 0; j < n; j++)
			if (uns)
				r[j] = b[j] ? (int64_t)(U(a[j]) / U(b[j])) : 0;
			else if (uck_fdiv(a[j], b[j], &r[j]) < 0)
				r[j] = b[j] == 0 ? 0 : a[j];   /* x // 0 is 0; INT64_MIN // -1 wraps */
		break;
	case OP_MOD:
		for (j = 0; j < n; j++)
			if (uns)
				r[j] = b[j] ? (int64_t)(U(a[j]) % U(b[j])) : 0;
			else if (uck_fmod(a[j], b[j], &r[j]) < 0)
				r[j] = 0;
		break;
	case OP_MIN:
		for (j = 0; j < n; j++)
			r[j] = (uns ? U(a[j]) < U(b[j]) : a[j] < b[j]) ? a[j] : b[j];
		break;
	case OP_MAX:
		for (j = 0; j < n; j++)
			r[j] = (uns ? U(a[j]) > U(b[j]) : a[j] > b[j]) ? a[j] : b[j];
		break;
	case OP_CMPLT: for (j = 0; j < n; j++) r[j] = uns ? U(a[j]) < U(b[j]) : a[j] < b[j]; break;
	case OP_CMPNE: for (j = 0; j < n; j++) r[j] = a[j] != b[j]; break;
	case OP_CMPEQ: for (j = 0; j < n; j++) r[j] = a[j] == b[j]; break;
	case OP_WHERE: for (j = 0; j < n; j++) r[j] = a[j] ? b[j] : c[j]; break;
	case OP_AND: for (j = 0; j < n; j++) r[j] = a[j] & b[j]; break;
	case OP_OR: for (j = 0; j < n; j++) r[j] = a[j] | b[j]; break;
	case OP_XOR: for (j = 0; j < n; j++) r[j] = a[j] ^ b[j]; break;
	case OP_SHL: for (j = 0; j < n; j++) r[j] = b[j] < 0 || b[j] > 63 ? 0 : (int64_t)(U(a[j]) << b[j]); break;
	case OP_SHR:
		for (j = 0; j < n; j++)
			r[j] = b[j] < 0 || b[j] > 63 ? (uns || a[j] >= 0 ? 0 : -1)
			     : uns ? (int64_t)(U(a[j]) >> b[j]) : a[j] >> b[j];
		break;
	case OP_THREEFRY: for (j = 0; j < n; j++) r[j] = (int64_t)tensor_threefry(U(a[j]), U(b[j])); break;
	case OP_POW:   /* by squaring, wrapping; a negative exponent leaves only 1/1 and 1/-1 */
		for (j = 0; j < n; j++) {
			uint64_t x = U(a[j]), p = 1;
			int64_t y = b[j];

			if (y < 0 && !uns) {
				r[j] = a[j] == 1 ? 1 : a[j] == -1 ? (y % 2 ? -1 : 1) : 0;
				continue;
			}
			for (; y; y = (int64_t)((uint64_t)y >> 1), x *= x)
				if (y & 1)
					p *= x;
			r[j] = (int64_t)p;
		}
		break;
	default: for (j = 0; j < n; j++) r[j] = 0; break;
	}
#undef U
}

/* Ctrl-C: the element loops count what they compute and poll every 2^16 elements. */
static int
poll_elems(Ev *ev, int64_t n)
{
	if ((ev->tick += n) < ((int64_t)1 << 16))
		return 0;
	ev->tick = 0;
	return limits_poll(ev->e);
}

/*
** An elementwise node over views of its sources broadcast to its shape:
** computed in float64 when the operands are floats (a float32 +, -, *, /
** or sqrt rounded once to float32 is the correctly rounded float32 result),
** in int64 otherwise, then stored in the node's dtype (rounding or wrapping).
*/
static View *
ewise(Ev *ev, const UOp *u, View **src)
{
	DType od = u->op == OP_WHERE ? (DType)u->src[1]->dtype : (DType)u->src[0]->dtype;
	int fl = dtype_is_float(od), uns = is_unsigned64(od), n = u->nsrc, i, nd = u->ndim;
	int64_t idx[T_MAXDIM] = {0}, one = 1, at = 0, L, j0, len;
	const int64_t *shape = nd ? u->shape : &one;
	View b[3], *o;
	double *fb = NULL;
	int64_t *ib = NULL;

	if (n > 3)
		return err_set(ev->e, "realize: %s has %d sources", uop_info[u->op].name, n), NULL;
	if (!(o = view_new(ev, (DType)u->dtype, u->shape, nd)))
		return NULL;
	if (nd == 0)
		nd = 1;
	for (i = 0; i < n; i++)
		bview(src[i], shape, nd, &b[i]);
	if (fl)
		fb = malloc(4 * CH * sizeof *fb);
	else
		ib = malloc(4 * CH * sizeof *ib);
	if (!fb && !ib) {
		view_free(o);
		return err_set(ev->e, "realize: out of memory"), NULL;
	}
	L = shape[nd - 1];
	if (numel(shape, nd) > 0)
		do {
			for (j0 = 0; j0 < L; j0 += CH) {
				len = L - j0 < CH ? L - j0 : CH;
				for (i = 0; i < n; i++) {
					/* WHERE's condition is bool: read it in the operands' kind */
					read_row(&b[i], idx, j0, len, fl ? fb + (i + 1) * CH : NULL, fl ? NULL : ib + (i + 1) * CH);
				}
				if (fl)
					fop((Op)u->op, len, fb, fb + CH, fb + 2 * CH, fb + 3 * CH);
				else
					iop((Op)u->op, uns, len, ib, ib + CH, ib + 2 * CH, ib + 3 * CH);
				if (fl && !dtype_is_float(o->dt) && (uop_info[u->op].flags & U_CMP)) {
					/* a comparison of floats: 0 or 1 */
					write_run(o, at, len, fb, NULL);
				} else
					write_run(o, at, len, fl ? fb : NULL, fl ? NULL : ib);
				at += len;
				if (poll_elems(ev, len) < 0) {
					free(fb);
					free(ib);
					view_free(o);
					return NULL;
				}
			}
		} while (next_row(idx, shape, nd - 1));
	free(fb);
	free(ib);
	return o;
}

/* A contiguous copy of v in dtype t (also the cast between kinds). */
static View *
materialize(Ev *ev, const View *v, DType t)
{
	int64_t idx[T_MAXDIM] = {0}, one = 1, at = 0, L, j0, len;
	int nd = v->nd ? v->nd : 1, fl = dtype_is_float(v->dt);
	const int64_t *shape = v->nd ? v->shape : &one;
	View b, *o;
	double *fb = NULL;
	int64_t *ib = NULL;

	if (!(o = view_new(ev, t, v->shape, v->nd)))
		return NULL;
	bview(v, shape, nd, &b);
	if (fl)
		fb = malloc(CH * sizeof *fb);
	else
		ib = malloc(CH * sizeof *ib);
	if (!fb && !ib) {
		view_free(o);
		return err_set(ev->e, "realize: out of memory"), NULL;
	}
	L = shape[nd - 1];
	if (numel(shape, nd) > 0)
		do {
			for (j0 = 0; j0 < L; j0 += CH) {
				len = L - j0 < CH ? L - j0 : CH;
				read_row(&b, idx, j0, len, fb, ib);
				if (!fl && dtype_is_float(t)) {   /* int to float: convert here */
					int bb = dtype_bytes(t);
					int64_t j;

					for (j = 0; j < len; j++) {
						double d = v->dt == DT_UINT64 ? (double)(uint64_t)ib[j] : (double)ib[j];

						dtype_store_f(t, o->s->p + (at + j) * bb, d);
					}
				} else
					write_run(o, at, len, fb, ib);
				at += len;
				if (poll_elems(ev, len) < 0) {
					free(fb);
					free(ib);
					view_free(o);
					return NULL;
				}
			}
		} while (next_row(idx, shape, nd - 1));
	free(fb);
	free(ib);
	return o;
}

/* ---- reduce ---- */

static View *
reduce(Ev *ev, const UOp *u, const View *v)
{
	Op op = (Op)u->arg[0];
	int fl = dtype_is_float(v->dt), uns = is_unsigned64(v->dt), nd = v->nd, k;
	int64_t nout = uop_numel(u), ost[T_MAXDIM], idx[T_MAXDIM] = {0}, t = 1, L, j0, len, j;
	double *facc = NULL, *fb = NULL;
	int64_t *iacc = NULL, *ib = NULL;
	View *o;

	if (!(o = view_new(ev, (DType)u->dtype, u->shape, u->ndim)))
		return NULL;
	for (k = nd - 1; k >= 0; k--) {
		ost[k] = u->shape[k] == 1 ? 0 : t;
		t *= u->shape[k];
	}
	if (fl) {
		facc = malloc(nout * sizeof *facc);
		fb = malloc(CH * sizeof *fb);
	} else {
		iacc = malloc(nout * sizeof *iacc);
		ib = malloc(CH * sizeof *ib);
	}
	if ((fl && (!facc || !fb)) || (!fl && (!iacc || !ib))) {
		free(facc); free(fb); free(iacc); free(ib);
		view_free(o);
		return err_set(ev->e, "realize: out of memory"), NULL;
	}
	for (j = 0; j < nout; j++) {
		/* max's identity is the dtype's lowest value: an empty axis gives it (int32: -2^31, not the
		** wrapped low bits of INT64_MIN), as tinygrad's */
		int bits = 8 * dtype_bytes(v->dt);

		if (fl)
			facc[j] = op == OP_ADD ? 0 : op == OP_MUL ? 1 : -INFINITY;
		else
			iacc[j] = op == OP_ADD ? 0 : op == OP_MUL ? 1 : uns || v->dt == DT_BOOL || dtype_is_unsigned(v->dt) ? 0
			          : bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
	}
	L = nd ? v->shape[nd - 1] : 1;
	if (numel(v->shape, nd) > 0)
		do {
			int64_t base = 0, os = nd ? ost[nd - 1] : 0;

			for (k = 0; k + 1 < nd; k++)
				base += idx[k] * ost[k];
			for (j0 = 0; j0 < L; j0 += CH) {
				len = L - j0 < CH ? L - j0 : CH;
				read_row(v, idx, j0, len, fb, ib);
				if (fl) {
					double *a = facc + base + j0 * os;

					if (op == OP_ADD) {
						if (os == 0) {
							double s = 0;

							for (j = 0; j < len; j++)
								s += fb[j];
							a[0] += s;
						} else
							for (j = 0; j < len; j++)
								a[j] += fb[j];
					} else if (op == OP_MUL)
						for (j = 0; j < len; j++)
							a[j * os] *= fb[j];
					else
						for (j = 0; j < len; j++)
							if (fb[j] > a[j * os] || isnan(fb[j]))
								a[j * os] = fb[j];
				} else {
					int64_t *a = iacc + base + j0 * os;

					for (j = 0; j < len; j++) {
						int64_t *p = a + j * os;

						if (op == OP_ADD)
							*p = (int64_t)((uint64_t)*p + (uint64_t)ib[j]);
						else if (op == OP_MUL)
							*p = (int64_t)((uint64_t)*p * (uint64_t)ib[j]);
						else if (uns ? (uint64_t)ib[j] > (uint64_t)*p : ib[j] > *p)
							*p = ib[j];
					}
				}
				if (poll_elems(ev, len) < 0) {
					free(facc); free(fb); free(iacc); free(ib);
					view_free(o);
					return NULL;
				}
			}
		} while (next_row(idx, v->shape, nd - 1));
	write_run(o, 0, nout, facc, iacc);
	free(facc); free(fb); free(iacc); free(ib);
	return o;
}

/* ---- the walk ---- */

static size_t
hslot(const Ev *ev, const UOp *u)
{
	size_t h = (size_t)(uintptr_t)u * 0x9E3779B97F4A7C15ull, m = ev->cap - 1;

	for (h = (h >> 7) & m; ev->tab[h].k && ev->tab[h].k != u; h = (h + 1) & m)
		;
	return h;
}

static int
memo_put(Ev *ev, const UOp *u, View *v)
{
	size_t h;

	if (2 * (ev->n + 1) > ev->cap) {
		Slot *old = ev->tab;
		size_t oc = ev->cap, i;

		ev->cap = oc ? oc * 2 : 64;
		if (!(ev->tab = calloc(ev->cap, sizeof *ev->tab))) {
			ev->tab = old;
			ev->cap = oc;
			return err_set(ev->e, "realize: out of memory");
		}
		for (i = 0; i < oc; i++)
			if (old[i].k)
				ev->tab[hslot(ev, old[i].k)] = old[i];
		free(old);
	}
	h = hslot(ev, u);
	if (ev->tab[h].k)
		view_free(ev->tab[h].v);
	else
		ev->n++;
	ev->tab[h].k = u;
	ev->tab[h].v = v;
	return 0;
}

static View *
memo_get(const Ev *ev, const UOp *u)
{
	size_t h;

	if (!ev->cap)
		return NULL;
	h = hslot(ev, u);
	return ev->tab[h].k ? ev->tab[h].v : NULL;
}

static void
memo_free(Ev *ev)
{
	size_t i;

	for (i = 0; i < ev->cap; i++)
		if (ev->tab[i].k)
			view_free(ev->tab[i].v);
	free(ev->tab);
	ev->tab = NULL;
	ev->cap = ev->n = 0;
}

static View *eval(Ev *ev, const UOp *u, int depth);
static View *src_of(Ev *ev, const UOp *u);

static View *
const_view(Ev *ev, const UOp *u)
{
	View *v = view_new(ev, (DType)u->dtype, NULL, 0);

	if (!v)
		return NULL;
	if (dtype_is_float(u->dtype))
		dtype_store_f((DType)u->dtype, v->s->p, uop_const_value(u));
	else
		dtype_store_i((DType)u->dtype, v->s->p, u->arg[0]);
	return v;
}

/* Movement: a new view of the same storage (reshape copies when it must). */
static View *
move(Ev *ev, const UOp *u, const View *a)
{
	const int64_t *d = u->data;
	View *v;
	int i, n = a->nd;

	if (u->op == OP_RESHAPE && !contiguous(a)) {
		View *c = materialize(ev, a, a->dt), *r;

		if (!c)
			return NULL;
		r = move(ev, u, c);
		view_free(c);
		return r;
	}
	if (!(v = view_dup(a)))
		return err_set(ev->e, "realize: out of memory"), NULL;
	switch (u->op) {
	case OP_RESHAPE: {
		int64_t t = 1;

		v->nd = u->ndim;
		for (i = u->ndim - 1; i >= 0; i--) {
			v->shape[i] = u->shape[i];
			v->st[i] = t;
			v->lo[i] = 0;
			v->hi[i] = u->shape[i];
			t *= u->shape[i];
		}
		break;
	}
	case OP_EXPAND:
		for (i = 0; i < n; i++)
			if (a->shape[i] != u->shape[i]) {
				v->shape[i] = u->shape[i];
				v->st[i] = 0;
				v->lo[i] = 0;
				v->hi[i] = a->lo[i] < a->hi[i] ? u->shape[i] : 0;
			}
		break;
	case OP_PERMUTE:
		for (i = 0; i < n; i++) {
			v->shape[i] = a->shape[d[i]];
			v->st[i] = a->st[d[i]];
			v->lo[i] = a->lo[d[i]];
			v->hi[i] = a->hi[d[i]];
		}
		break;
	case OP_FLIP:
		for (i = 0; i < n; i++)
			if (d[i]) {
				v->off += (a->shape[i] - 1) * a->st[i];
				v->st[i] = -a->st[i];
				v->lo[i] = a->shape[i] - a->hi[i];
				v->hi[i] = a->shape[i] - a->lo[i];
			}
		break;
	case OP_PAD:
		for (i = 0; i < n; i++) {
			v->off -= d[i] * a->st[i];
			v->shape[i] = d[n + i];
			v->lo[i] = a->lo[i] + d[i];
			v->hi[i] = a->hi[i] + d[i];
		}
		v->masked = 1;
		break;
	case OP_SHRINK:
		for (i = 0; i < n; i++) {
			int64_t lo = a->lo[i] - d[i], hi = a->hi[i] - d[i];

			v->off += d[i] * a->st[i];
			v->shape[i] = d[n + i];
			v->lo[i] = lo < 0 ? 0 : lo;
			v->hi[i] = hi > d[n + i] ? d[n + i] : hi;
			if (v->hi[i] < v->lo[i])
				v->hi[i] = v->lo[i];
		}
		break;
	}
	if (v->masked) {   /* a mask that covers everything is no mask */
		int full = 1;

		for (i = 0; i < v->nd; i++)
			full &= v->lo[i] <= 0 && v->hi[i] >= v->shape[i];
		if (full) {
			for (i = 0; i < v->nd; i++) {
				v->lo[i] = 0;
				v->hi[i] = v->shape[i];
			}
			v->masked = 0;
		}
	}
	return v;
}

static View *
stack(Ev *ev, const UOp *u, View **s)
{
	View *o = view_new(ev, (DType)u->dtype, u->shape, u->ndim), *c;
	int64_t each = uop_numel(u->src[0]) * dtype_bytes(u->dtype);
	int i;

	if (!o)
		return NULL;
	for (i = 0; i < u->nsrc; i++) {
		if (!(c = materialize(ev, s[i], (DType)u->dtype))) {
			view_free(o);
			return NULL;
		}
		memcpy(o->s->p + i * each, c->s->p, each);
		ev->used -= each;
		view_free(c);
	}
	return o;
}

/* INDEX: outer indexing by integer tensors of shape () or (k,). */
static View *
indexed(Ev *ev, const UOp *u, View **s)
{
	const View *a = s[0];
	int ni = u->nsrc - 1, i, k, nd = u->ndim;
	View *o = view_new(ev, (DType)u->dtype, u->shape, nd), *ix[T_MAXDIM] = {0};
	int64_t oi[T_MAXDIM] = {0}, at = 0, total = uop_numel(u), b = dtype_bytes(u->dtype);

	if (!o)
		return NULL;
	for (i = 0; i < ni; i++)
		if (!(ix[i] = materialize(ev, s[i + 1], DT_INT64)))
			goto fail;
	for (at = 0; at < total; at++) {
		int64_t src[T_MAXDIM], pos = a->off, t = at;
		int valid = 1, od = 0;

		if (poll_elems(ev, 1) < 0)
			goto fail;
		for (k = nd - 1; k >= 0; k--) {
			oi[k] = t % u->shape[k];
			t /= u->shape[k];
		}
		for (i = 0; i < ni; i++) {
			int64_t x;

			if (ix[i]->nd == 0)
				x = ((int64_t *)ix[i]->s->p)[0];
			else
				x = ((int64_t *)ix[i]->s->p)[oi[od++]];
			if (x < 0)
				x += a->shape[i];
			if (x < 0 || x >= a->shape[i]) {
				err_set(ev->e, "index: index %lld is out of range for axis %d of size %lld",
				        (long long)x, i, (long long)a->shape[i]);
				goto fail;
			}
			src[i] = x;
		}
		for (k = ni; k < a->nd; k++)
			src[k] = oi[od++];
		for (k = 0; k < a->nd; k++) {
			pos += src[k] * a->st[k];
			valid &= !a->masked || (src[k] >= a->lo[k] && src[k] < a->hi[k]);
		}
		if (valid)
			memcpy(o->s->p + at * b, a->s->p + pos * b, b);
		else
			memset(o->s->p + at * b, 0, b);
	}
	for (i = 0; i < ni; i++)
		view_free(ix[i]);
	return o;
fail:
	for (i = 0; i < ni; i++)
		view_free(ix[i]);
	view_free(o);
	return NULL;
}

/* REPLICATED: every shard along the axis must hold the same values. */
static View *
replicated(Ev *ev, const UOp *u, const View *a)
{
	int k = (int)u->arg[0], nd = a->nd, i;
	View *c = materialize(ev, a, a->dt), *v;
	int64_t outer = 1, inner = 1, d, j, o, b = dtype_bytes(a->dt);

	if (!c)
		return NULL;
	for (i = 0; i < k; i++)
		outer *= a->shape[i];
	for (i = k + 1; i < nd; i++)
		inner *= a->shape[i];
	for (o = 0; o < outer; o++)
		for (d = 1; d < a->shape[k]; d++) {
			if (poll_elems(ev, inner) < 0) {
				view_free(c);
				return NULL;
			}
			for (j = 0; j < inner; j++) {
				const unsigned char *p0 = c->s->p + ((o * a->shape[k]) * inner + j) * b;
				const unsigned char *pd = c->s->p + ((o * a->shape[k] + d) * inner + j) * b;

				if (memcmp(p0, pd, b) != 0) {
					char d0[64], dd[64];

					uop_devname(u->src[0]->device, 0, d0, sizeof d0);
					uop_devname(u->src[0]->device, (int)d, dd, sizeof dd);
					err_set(ev->e, "replicated: the shards differ: %s holds %g and %s holds %g at "
					        "element %lld of the shard", d0, dtype_load_f(a->dt, p0), dd,
					        dtype_load_f(a->dt, pd), (long long)(o * inner + j));
					view_free(c);
					return NULL;
				}
			}
		}
	/* keep shard 0: shrink the axis to one and drop it */
	if (!(v = view_dup(c))) {
		view_free(c);
		return err_set(ev->e, "realize: out of memory"), NULL;
	}
	view_free(c);
	for (i = k; i + 1 < nd; i++) {
		v->shape[i] = v->shape[i + 1];
		v->st[i] = v->st[i + 1];
		v->lo[i] = 0;
		v->hi[i] = v->shape[i];
	}
	v->nd = nd - 1;
	return v;
}

/* FUNCTION and CALL: the body's tuple evaluated with PARAM k bound to argument k. */
static View *
call(Ev *ev, const UOp *u, View **s, int depth)
{
	Ev sub = { ev->o, s + 1, u->nsrc - 1, NULL, 0, 0, ev->used, ev->limit, ev->e, 0 };
	const UOp *t = u->src[0];
	View *r = calloc(1, sizeof *r);
	int i;

	if (!r || !(r->tup = calloc(t->nsrc, sizeof *r->tup))) {
		free(r);
		return err_set(ev->e, "realize: out of memory"), NULL;
	}
	r->ntup = t->nsrc;
	for (i = 0; i < t->nsrc; i++) {
		View *v = eval(&sub, t->src[i], depth + 1);

		if (!v || !(r->tup[i] = view_dup(v))) {
			memo_free(&sub);
			view_free(r);
			return NULL;
		}
	}
	ev->used = sub.used;
	memo_free(&sub);
	*r = (View){ .tup = r->tup, .ntup = r->ntup };
	return r;
}

static View *
param(Ev *ev, const UOp *u, int depth)
{
	int64_t k = u->arg[0];
	TBuf b;
	TEvalOpts o;
	View *v;

	if (ev->env) {
		if (k < 0 || k >= ev->nenv)
			return err_set(ev->e, "realize: param %lld is not bound", (long long)k), NULL;
		return view_dup(ev->env[k]);
	}
	if (!ev->o || k < 0 || k >= ev->o->nparams || !ev->o->params[k])
		return err_set(ev->e, "realize: param %lld (%s) is not bound", (long long)k,
		               u->name ? u->name : "?"), NULL;
	if (ev->o->params[k]->ndim != u->ndim
	|| (u->ndim && memcmp(ev->o->params[k]->shape, u->shape, u->ndim * 8) != 0))
		return err_set(ev->e, "realize: param %lld (%s) wants another shape than its binding",
		               (long long)k, u->name ? u->name : "?"), NULL;
	o = *ev->o;
	o.params = NULL;
	o.nparams = 0;
	o.mem_limit = ev->limit > ev->used ? ev->limit - ev->used : 1;   /* 0 would be the whole limit */
	if (tensor_realize(ev->o->params[k], &o, &b, ev->e) < 0)
		return NULL;
	if (!(v = view_new(ev, (DType)u->dtype, u->shape, u->ndim))) {
		tbuf_free(&b);
		return NULL;
	}
	{
		View tmp = *v, *c;
		Store st = { 1, 0, b.data };

		tmp.dt = b.dtype;
		tmp.s = &st;
		st.refs = 2;
		c = materialize(ev, &tmp, (DType)u->dtype);
		tbuf_free(&b);
		view_free(v);
		return c;
	}
	(void)depth;
}

static View *
eval_node(Ev *ev, const UOp *u, int depth)
{
	View *s[64], **sp = s, *r = NULL;
	int i, n = u->nsrc;

	if ((r = memo_get(ev, u)))
		return r;
	if (depth > UOP_MAXDEPTH + 10)
		return err_set(ev->e, "realize: the graph nests too deep"), NULL;
	if (u->op == OP_AFTER) {   /* deps first, then the buffer (a store may have replaced it) */
		/* the walk evaluated the deps after the buffer: a store has replaced it by now */
		if (!(r = src_of(ev, u->src[0])) || !(r = view_dup(r)))
			return NULL;
		return memo_put(ev, u, r) < 0 ? NULL : r;
	}
	if (n > 64 && !(sp = malloc(n * sizeof *sp)))
		return err_set(ev->e, "realize: out of memory"), NULL;
	for (i = 0; i < n; i++) {
		if ((u->op == OP_FUNCTION || u->op == OP_CALL) && i == 0)
			continue;   /* the body is evaluated by call */
		if (!(sp[i] = src_of(ev, u->src[i])))
			goto done;
		if (!sp[i]->s && u->op != OP_GROUP && u->op != OP_SINK && u->op != OP_GETTUPLE
		&& u->op != OP_TUPLE && !(u->op == OP_STORE && i == 0)) {
			err_set(ev->e, "realize: source %d of %s is a %s, not a tensor", i,
			        uop_info[u->op].name, uop_info[u->src[i]->op].name);
			goto done;
		}
	}
	switch ((Op)u->op) {
	case OP_CONST:
		r = const_view(ev, u);
		break;
	case OP_VAR:
		err_set(ev->e, "realize: %s is an index variable, not a tensor", u->name ? u->name : "?");
		break;
	case OP_PARAM:
		r = param(ev, u, depth);
		break;
	case OP_BUFFER: {
		r = view_new(ev, (DType)u->dtype, u->shape, u->ndim);
		if (r)
			memset(r->s->p, 0, uop_numel(u) * dtype_bytes(u->dtype));
		break;
	}
	case OP_BINARY:
		if ((r = calloc(1, sizeof *r)) && (r->s = calloc(1, sizeof *r->s))) {
			r->s->refs = 1;
			r->s->p = (unsigned char *)u->data;
			r->dt = DT_UINT8;
			r->nd = 1;
			r->shape[0] = r->hi[0] = u->ndata;
			r->st[0] = 1;
		} else {
			free(r);
			r = NULL;
			err_set(ev->e, "realize: out of memory");
		}
		break;
	case OP_RESHAPE: case OP_EXPAND: case OP_PERMUTE: case OP_FLIP: case OP_PAD: case OP_SHRINK:
		r = move(ev, u, sp[0]);
		break;
	case OP_BITCAST: {
		/* the bytes from the view's start: a contiguous view at offset 0, else a copy */
		View *c = contiguous(sp[0]) && sp[0]->off == 0 ? view_dup(sp[0])
		        : materialize(ev, sp[0], sp[0]->dt);
		int64_t t = 1;

		if (!c)
			break;
		c->dt = (DType)u->dtype;
		c->nd = u->ndim;
		for (i = u->ndim - 1; i >= 0; i--) {
			c->shape[i] = c->hi[i] = u->shape[i];
			c->lo[i] = 0;
			c->st[i] = t;
			t *= u->shape[i];
		}
		r = c;
		break;
	}
	case OP_STACK:
		r = stack(ev, u, sp);
		break;
	case OP_INDEX:
		r = indexed(ev, u, sp);
		break;
	case OP_REDUCE:
		r = reduce(ev, u, sp[0]);
		break;
	case OP_CAST:
		r = materialize(ev, sp[0], (DType)u->dtype);
		break;
	case OP_CONTIGUOUS:
		r = contiguous(sp[0]) ? view_dup(sp[0]) : materialize(ev, sp[0], sp[0]->dt);
		break;
	case OP_DETACH: case OP_LOAD: case OP_COPY:
		r = view_dup(sp[0]);
		break;
	case OP_REPLICATED:
		r = replicated(ev, u, sp[0]);
		break;
	case OP_STORE:
		/* the buffer now holds the value: an AFTER on it reads the value */
		if ((r = view_dup(sp[1])) && memo_put(ev, u->src[0], r) == 0)
			r = calloc(1, sizeof *r);
		else
			r = NULL;
		break;
	case OP_GROUP: case OP_SINK:
		r = calloc(1, sizeof *r);
		break;
	case OP_TUPLE:
		if ((r = calloc(1, sizeof *r)) && (r->tup = calloc(n ? n : 1, sizeof *r->tup))) {
			r->ntup = n;
			for (i = 0; i < n; i++)
				r->tup[i] = view_dup(sp[i]);
		}
		break;
	case OP_FUNCTION: case OP_CALL:
		r = call(ev, u, sp, depth);
		break;
	case OP_GETTUPLE:
		if (sp[0]->ntup <= u->arg[0] || !sp[0]->tup[u->arg[0]])
			err_set(ev->e, "realize: gettuple %lld of a tuple of %d", (long long)u->arg[0], sp[0]->ntup);
		else
			r = view_dup(sp[0]->tup[u->arg[0]]);
		break;
	default:
		if (uop_info[u->op].flags & U_ALU)
			r = ewise(ev, u, sp);
		else
			err_set(ev->e, "realize: %s is not evaluated", uop_info[u->op].name);
		break;
	}
	if (r && memo_put(ev, u, r) < 0) {
		view_free(r);
		r = NULL;
	}
done:
	if (sp != s)
		free(sp);
	if (!r && !ev->e->msg[0])
		err_set(ev->e, "realize: out of memory");
	return r;
}


/*
** Post-order walk without recursion (graphs nest UOP_MAXDEPTH deep, more than
** the C stack holds frames of the evaluator): fn sees every node once, after
** its sources. With skip_bodies, a Function's or Call's body is not entered
** (it is evaluated with its own bindings).
*/
typedef struct Frame {
	const UOp *u;
	int next;
} Frame;

typedef struct PSet {
	const UOp **k;
	size_t cap, n;
} PSet;

/* 1 when u is new (inserted), 0 when seen, -1 out of memory */
static int
pset_add(PSet *p, const UOp *u)
{
	size_t h, m;

	if (2 * (p->n + 1) > p->cap) {
		const UOp **old = p->k;
		size_t oc = p->cap, j;

		p->cap = oc ? oc * 2 : 256;
		if (!(p->k = calloc(p->cap, sizeof *p->k))) {
			p->k = old;
			p->cap = oc;
			return -1;
		}
		for (j = 0; j < oc; j++)
			if (old[j]) {
				m = p->cap - 1;
				for (h = ((uintptr_t)old[j] * 0x9E3779B97F4A7C15ull >> 7) & m; p->k[h]; h = (h + 1) & m)
					;
				p->k[h] = old[j];
			}
		free(old);
	}
	m = p->cap - 1;
	for (h = ((uintptr_t)u * 0x9E3779B97F4A7C15ull >> 7) & m; p->k[h]; h = (h + 1) & m)
		if (p->k[h] == u)
			return 0;
	p->k[h] = u;
	p->n++;
	return 1;
}

static int
walk(const UOp *root, int skip_bodies, int (*fn)(const UOp *, void *), void *arg, Err *e)
{
	Frame *st = NULL;
	size_t n = 0, cap = 0;
	PSet seen = { NULL, 0, 0 };
	int rc = 0;

	if (pset_add(&seen, root) < 0)
		return err_set(e, "realize: out of memory");
	if (!(st = malloc((cap = 64) * sizeof *st))) {
		free(seen.k);
		return err_set(e, "realize: out of memory");
	}
	st[n++] = (Frame){ root, 0 };
	while (n) {
		Frame *f = &st[n - 1];
		const UOp *u = f->u;

		if (f->next == 0 && skip_bodies && (u->op == OP_FUNCTION || u->op == OP_CALL))
			f->next = 1;
		if (f->next < u->nsrc) {
			const UOp *s = u->src[f->next++];
			int added = pset_add(&seen, s);

			if (added < 0) {
				rc = err_set(e, "realize: out of memory");
				break;
			}
			if (!added)
				continue;
			if (n == cap) {
				Frame *ns = realloc(st, 2 * cap * sizeof *st);

				if (!ns) {
					rc = err_set(e, "realize: out of memory");
					break;
				}
				st = ns;
				cap *= 2;
			}
			st[n++] = (Frame){ s, 0 };
			continue;
		}
		n--;
		if ((rc = fn(u, arg)) < 0)
			break;
	}
	free(st);
	free(seen.k);
	return rc;
}

typedef struct EvWalk {
	Ev *ev;
	int depth;
} EvWalk;

static int
eval_one(const UOp *u, void *arg)
{
	EvWalk *w = arg;

	if (memo_get(w->ev, u))
		return 0;
	return eval_node(w->ev, u, w->depth) ? 0 : -1;
}

static View *
src_of(Ev *ev, const UOp *u)
{
	View *v = memo_get(ev, u);

	if (!v)
		err_set(ev->e, "realize: %s was not evaluated before its user", uop_info[u->op].name);
	return v;
}

static View *
eval(Ev *ev, const UOp *u, int depth)
{
	EvWalk w = { ev, depth };

	if (depth > 64)
		return err_set(ev->e, "realize: functions nest more than 64 deep"), NULL;
	if (walk(u, 1, eval_one, &w, ev->e) < 0) {
		if (!ev->e->msg[0])
			err_set(ev->e, "realize: out of memory");
		return NULL;
	}
	return memo_get(ev, u);
}

/* The memory guard: every node that computes holds a buffer of its size. */
typedef struct Plan {
	uint64_t total, largest;
	const UOp *big;
} Plan;

static int
plan(const UOp *u, void *arg)
{
	Plan *p = arg;

	if (!(uop_info[u->op].flags & U_MOVE) && u->op != OP_CONST && u->op != OP_BINARY
	&& u->op != OP_TUPLE && u->op != OP_COPY && u->op != OP_DETACH && u->op != OP_LOAD) {
		uint64_t b = (uint64_t)uop_numel(u) * dtype_bytes(u->dtype);

		p->total += b;
		if (b > p->largest) {
			p->largest = b;
			p->big = u;
		}
	}
	return 0;
}

static void
bytes_str(char *out, size_t n, uint64_t b)
{
	if (b >= (1ull << 30))
		snprintf(out, n, "%.1f GiB", b / 1073741824.0);
	else if (b >= (1ull << 20))
		snprintf(out, n, "%.1f MiB", b / 1048576.0);
	else
		snprintf(out, n, "%llu bytes", (unsigned long long)b);
}

int
tensor_realize(const UOp *u, const TEvalOpts *o, TBuf *out, Err *e)
{
	Ev ev = { o, NULL, 0, NULL, 0, 0, 0, 0, e, 0 };
	Plan p = { 0 };
	View *v, *c;
	int i;

	memset(out, 0, sizeof *out);
	e->msg[0] = 0;
	/* tensor.options{mem_limit} (TEvalOpts.mem_limit) overrides the limit in force */
	ev.limit = o && o->mem_limit ? o->mem_limit : (uint64_t)limits_get()->tensor_bytes;
	if (walk(u, 0, plan, &p, e) < 0)
		return -1;
	if (p.total > ev.limit) {
		char t[32], l[32], b[32];
		Buf s;

		bytes_str(t, sizeof t, p.total);
		bytes_str(l, sizeof l, ev.limit);
		bytes_str(b, sizeof b, p.largest);
		buf_init(&s);
		uop_shape_str(&s, p.big->shape, p.big->ndim);
		err_set(e, "realize: the graph needs %s of buffers (tensor_bytes limit %s; raise it with "
		        "tessel.limits{tensor_bytes = N}); the largest is %s %s %s%s%s (%s)", t, l, uop_info[p.big->op].name, dtype_name(p.big->dtype), s.s ? s.s : "?",
		        p.big->name ? " named " : "", p.big->name ? p.big->name : "", b);
		buf_free(&s);
		return -1;
	}
	if (u->op == OP_STORE || u->op == OP_SINK || u->op == OP_GROUP || u->dtype == DT_VOID) {
		v = eval(&ev, u, 0);
		memo_free(&ev);
		if (!v)
			return -1;
		out->dtype = DT_VOID;
		out->axis = -1;
		return 0;
	}
	if (!(v = eval(&ev, u, 0))) {
		memo_free(&ev);
		return -1;
	}
	if (v->tup) {
		memo_free(&ev);
		return err_set(e, "realize: a %s is a tuple (take an element with gettuple)",
		               uop_info[u->op].name);
	}
	/* the result's storage is taken as it is when it is a fresh contiguous buffer */
	if (!(v = view_dup(v))) {
		memo_free(&ev);
		return err_set(e, "realize: out of memory");
	}
	memo_free(&ev);
	if (contiguous(v) && v->off == 0 && v->s->owned && v->s->refs == 1)
		c = v;
	else {
		c = materialize(&ev, v, v->dt);
		view_free(v);
		if (!c)
			return -1;
	}
	out->dtype = c->dt;
	out->ndim = u->ndim;
	for (i = 0; i < u->ndim; i++)
		out->shape[i] = u->shape[i];
	out->device = u->device;
	out->axis = u->axis;
	out->numel = uop_numel(u);
	out->data = c->s->p;   /* take the storage */
	c->s->owned = 0;
	view_free(c);
	return 0;
}

void
tbuf_free(TBuf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
}

double
tbuf_get(const TBuf *b, int64_t i)
{
	return dtype_load_f(b->dtype, (const unsigned char *)b->data + i * dtype_bytes(b->dtype));
}

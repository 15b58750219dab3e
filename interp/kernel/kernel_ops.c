/* kernel_ops.c - collective operators at an execution scope (Axe Section 3.2), dispatched by layout analysis. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../layout/layout.h"
#include "../../layout/lower.h"
#include "kernel.h"

/*
** An operator works on regions of buffers for a group of threads (a scope):
** each thread of the group takes units u = it*n + id (n threads in the group,
** id its index in it), so that consecutive threads touch consecutive units
** (coalescing). What a unit is comes from the layouts: for copy and fill the
** widest vector both regions allow (runs of N elements that are consecutive
** and N-aligned in memory for every element of the region), for reduce a
** whole output (rows) or a slice combined through a shared-memory tree, for
** gemm one element of C (a per-thread FMA loop). The statement an operator
** returns is a sequence named after the choice, so the pseudo-code says what
** was dispatched and why.
*/
enum { ENUM_LIMIT = 1 << 20, MAXVEC = 16 };   /* bytes of the widest vector access */

const char *
kscope_kind_name(int k)
{
	static const char *const n[] = { "thread", "warp", "warpgroup", "cta", "kernel" };

	return k >= 0 && k <= KS_KERNEL ? n[k] : "?";
}

int
kscope_kind_parse(const char *s, KScopeKind *k)
{
	int i;

	for (i = 0; i <= KS_KERNEL; i++)
		if (strcmp(s, kscope_kind_name(i)) == 0) {
			*k = (KScopeKind)i;
			return 0;
		}
	return -1;
}

static int64_t
extent_of(const UOp *v)
{
	return v ? v->arg[1] + 1 : 1;
}

int
kernel_scope(Kernel *k, KScopeKind kind, UOp *const *thread, UOp *const *block, int64_t w0,
             int64_t w1, KScope *out, Err *e)
{
	UCtx *c = k->c;
	int64_t nt = 1, nb = 1;
	UOp *tid = uop_int(c, 0), *bid = uop_int(c, 0);
	int i;

	memset(out, 0, sizeof *out);
	/* linear thread and block ids, x fastest, as CUDA numbers them */
	for (i = 2; i >= 0; i--) {
		if (thread && thread[i]) {
			tid = uop_add(c, uop_mul(c, tid, uop_int(c, extent_of(thread[i]))), thread[i]);
			nt *= extent_of(thread[i]);
		}
		if (block && block[i]) {
			bid = uop_add(c, uop_mul(c, bid, uop_int(c, extent_of(block[i]))), block[i]);
			nb *= extent_of(block[i]);
		}
	}
	out->kind = kind;
	switch (kind) {
	case KS_THREAD:
		out->id = uop_int(c, 0);
		out->n = 1;
		snprintf(out->desc, sizeof out->desc, "thread");
		break;
	case KS_WARP:
		if (nt % 32)
			return err_set(e, "scope warp: the block has %lld threads, not a multiple of 32", (long long)nt);
		out->id = uop_mod(c, tid, uop_int(c, 32));
		out->n = 32;
		snprintf(out->desc, sizeof out->desc, "warp");
		break;
	case KS_WARPGROUP:
		if (nt % 128)
			return err_set(e, "scope warpgroup: the block has %lld threads, not a multiple of 128", (long long)nt);
		out->id = uop_mod(c, tid, uop_int(c, 128));
		out->n = 128;
		snprintf(out->desc, sizeof out->desc, "warpgroup");
		break;
	case KS_CTA:
		out->id = tid;
		out->n = nt;
		snprintf(out->desc, sizeof out->desc, "cta (%lld threads)", (long long)nt);
		break;
	case KS_KERNEL:
		out->id = uop_add(c, uop_mul(c, bid, uop_int(c, nt)), tid);
		out->n = nt * nb;
		snprintf(out->desc, sizeof out->desc, "kernel (%lld threads)", (long long)(nt * nb));
		break;
	default:
		return err_set(e, "scope: unknown kind %d", kind);
	}
	if (w1 > w0) {
		if (kind != KS_CTA)
			return err_set(e, "scope: a warp subset is a subset of the cta");
		if (w0 < 0 || w1 * 32 > nt)
			return err_set(e, "scope: warps [%lld, %lld) of a cta of %lld warps", (long long)w0,
			               (long long)w1, (long long)(nt / 32));
		out->guard = uop_alu(c, OP_AND, uop_alu(c, OP_CMPLT, uop_int(c, w0 * 32 - 1), tid),
		                     uop_alu(c, OP_CMPLT, tid, uop_int(c, w1 * 32)));
		out->id = uop_sub(c, tid, uop_int(c, w0 * 32));
		out->n = (w1 - w0) * 32;
		snprintf(out->desc, sizeof out->desc, "warps %lld-%lld of the cta", (long long)w0, (long long)(w1 - 1));
	}
	if (!out->id)
		return err_set(e, "scope: out of memory");
	return 0;
}

/* ---- regions ---- */

/* The region's dimensions of extent > 1, outermost first. */
typedef struct Sq {
	int n;
	int dim[T_MAXDIM];
	int64_t ext[T_MAXDIM];
	int64_t total;
} Sq;

static int
squeeze(const Kernel *k, const KRegion *r, Sq *q, const char *op, Err *e)
{
	const KBuf *b;
	int i;

	if (r->buf < 0 || r->buf >= k->nbuf)
		return err_set(e, "%s: no buffer %d", op, r->buf);
	b = &k->buf[r->buf];
	q->n = 0;
	q->total = 1;
	for (i = 0; i < b->ndim; i++) {
		if (!r->begin[i])
			return err_set(e, "%s: the region of %s has no start in dimension %d", op, b->name, i);
		if (r->extent[i] < 1 || r->extent[i] > b->shape[i])
			return err_set(e, "%s: the region of %s has extent %lld in dimension %d of size %lld", op,
			               b->name, (long long)r->extent[i], i, (long long)b->shape[i]);
		if (r->begin[i]->vmin < 0 || r->begin[i]->vmax + r->extent[i] > b->shape[i])
			return err_set(e, "%s: the region of %s starts in [%lld, %lld] in dimension %d, and %lld "
			               "elements from there leave its %lld", op, b->name, (long long)r->begin[i]->vmin,
			               (long long)r->begin[i]->vmax, i, (long long)r->extent[i], (long long)b->shape[i]);
		if (r->extent[i] > 1) {
			q->dim[q->n] = i;
			q->ext[q->n++] = r->extent[i];
			q->total *= r->extent[i];
		}
	}
	return 0;
}

void
kernel_region_str(char *out, size_t n, const Kernel *k, const KRegion *r)
{
	const KBuf *b = &k->buf[r->buf];
	Buf s;
	int i;

	buf_init(&s);
	emit(&s, "%s[", b->name);
	for (i = 0; i < b->ndim; i++) {
		if (i)
			emit(&s, ", ");
		if (r->extent[i] == b->shape[i] && r->begin[i]->op == OP_CONST && r->begin[i]->arg[0] == 0)
			emit(&s, ":");
		else {
			uop_print(&s, r->begin[i], D_INFIX);
			if (r->extent[i] > 1)
				emit(&s, ":+%lld", (long long)r->extent[i]);
		}
	}
	emit(&s, "]");
	snprintf(out, n, "%s", s.s ? s.s : "?");
	buf_free(&s);
}

/* The indices of the element of r at squeezed digits d[] (fixed dims at begin). */
static void
coords(Kernel *k, const KRegion *r, const Sq *q, UOp *const *d, UOp **idx)
{
	const KBuf *b = &k->buf[r->buf];
	int i, j = 0;

	for (i = 0; i < b->ndim; i++)
		if (j < q->n && q->dim[j] == i)
			idx[i] = uop_add(k->c, r->begin[i], d[j++]);
		else
			idx[i] = r->begin[i];
}

/*
** The physical offsets of every element of region r (row-major over its
** squeezed extents), at every value of the variables its start depends on:
** *npts rows of q->total offsets. NULL when there are too many to list (why
** says so, *npts = 0) or on an error (e filled, *npts = -1).
*/
static int64_t *
region_offsets(Kernel *k, const KRegion *r, const Sq *q, int64_t *npts, char *why, size_t nwhy, Err *e)
{
	const KBuf *b = &k->buf[r->buf];
	const UOp *vars[16];
	int nv = 0, i, j;
	int64_t pts = 1, p, el, *off, base[T_MAXDIM];
	UBind bind[16 + T_MAXDIM];
	UProg *begins = NULL, *layout = NULL;

	*npts = 0;
	for (i = 0; i < b->ndim; i++) {
		const UOp *v[16];
		int n = uop_vars(r->begin[i], v, 16), a, c;

		for (a = 0; a < n; a++) {
			for (c = 0; c < nv && vars[c] != v[a]; c++)
				;
			if (c == nv && nv < 16)
				vars[nv++] = v[a];
		}
	}
	for (i = 0; i < nv; i++)
		if (uck_mul(pts, vars[i]->arg[1] - vars[i]->arg[0] + 1, &pts) < 0 || pts * q->total > ENUM_LIMIT) {
			snprintf(why, nwhy, "%s's region is too large to check", b->name);
			return NULL;
		}
	if (!(off = malloc((size_t)(pts * q->total) * sizeof *off))) {
		*npts = -1;
		err_set(e, "kernel: out of memory");
		return NULL;
	}
	for (i = 0; i < nv; i++) {
		bind[i].name = vars[i]->name;
		bind[i].value = vars[i]->arg[0];
	}
	for (i = 0; i < b->ndim; i++) {
		bind[nv + i].name = b->lvar[i]->name;
		bind[nv + i].value = 0;
	}
	if (!(begins = uop_prog_new((const UOp *const *)r->begin, b->ndim, bind, nv, e)) ||
	    !(layout = uop_prog_new((const UOp *const *)&b->layout, 1, bind + nv, b->ndim, e)))
		goto fail;
	for (p = 0; p < pts; p++) {
		if (uop_prog_run(begins, bind, base, e) < 0)
			goto fail;
		for (el = 0; el < q->total; el++) {
			int64_t x = el;

			for (i = 0; i < b->ndim; i++)
				bind[nv + i].value = base[i];
			for (j = q->n - 1; j >= 0; j--) {
				bind[nv + q->dim[j]].value += x % q->ext[j];
				x /= q->ext[j];
			}
			if (uop_prog_run(layout, bind + nv, &off[p * q->total + el], e) < 0)
				goto fail;
		}
		for (i = nv - 1; i >= 0 && ++bind[i].value > vars[i]->arg[1]; i--)
			bind[i].value = vars[i]->arg[0];
	}
	uop_prog_free(begins);
	uop_prog_free(layout);
	*npts = pts;
	return off;
fail:
	uop_prog_free(begins);
	uop_prog_free(layout);
	*npts = -1;
	free(off);
	return NULL;
}

/*
** The runs of vector_ok proved symbolically, for regions too large to list:
** the element at digits (d0, ..., j*w + v), every digit a variable over its
** extent, lies at offset o(v) with o(v) - o(0) = v and o(0) = 0 mod w, as
** the simplifier shows from the ranges of the digits and of the variables of
** the start. 1 proved, 0 not, -1 an error.
*/
static int
vector_proved(Kernel *k, const KRegion *r, const Sq *q, int64_t w, Err *e)
{
	UOp *dig[T_MAXDIM], *idx[T_MAXDIM], *v, *zero, *off, *off0, *d, *m;
	char name[32];
	int i;

	for (i = 0; i < q->n; i++) {
		snprintf(name, sizeof name, "tessel_vd%d", i);
		if (!(dig[i] = kernel_var(k, name, i == q->n - 1 ? q->ext[i] / w : q->ext[i])))
			return err_set(e, "kernel: out of memory");
	}
	if (!(v = kernel_var(k, "tessel_vv", w)) || !(zero = uop_int(k->c, 0)))
		return err_set(e, "kernel: out of memory");
	dig[q->n - 1] = uop_add(k->c, uop_mul(k->c, dig[q->n - 1], uop_int(k->c, w)), v);
	coords(k, r, q, dig, idx);
	if (!(off = kernel_offset(k, r->buf, idx)))
		return err_set(e, "kernel: out of memory");
	off0 = kernel_substitute(k->c, off, &v, &zero, 1);
	if (uop_simplify(k->c, uop_sub(k->c, off, off0), &d, e) < 0
	|| uop_simplify(k->c, uop_mod(k->c, off0, uop_int(k->c, w)), &m, e) < 0)
		return -1;
	return d == v && m->op == OP_CONST && m->arg[0] == 0;
}

/*
** Whether region r is made of runs of w elements along its innermost
** squeezed dimension that are consecutive and w-aligned in memory, at every
** element and every value of the variables its start depends on. On failure,
** why[] names the first element that breaks it.
*/
static int
vector_ok(Kernel *k, const KRegion *r, const Sq *q, int64_t w, char *why, size_t nwhy, Err *e)
{
	const char *name = k->buf[r->buf].name;
	int64_t pts, p, el, j, *off, *o;
	int rc = 1;

	if (q->n == 0 || q->ext[q->n - 1] % w != 0) {
		snprintf(why, nwhy, "the innermost extent %lld of %s is not a multiple of %lld",
		         (long long)(q->n ? q->ext[q->n - 1] : 1), name, (long long)w);
		return 0;
	}
	if (!(off = region_offsets(k, r, q, &pts, why, nwhy, e))) {
		/* too many points to list: a proof from the ranges may still hold */
		if (pts == 0 && (rc = vector_proved(k, r, q, w, e)) != 0)
			return rc;
		return pts < 0 ? -1 : 0;
	}
	for (p = 0; p < pts && rc == 1; p++)
		for (o = off + p * q->total, el = 0; el < q->total && rc == 1; el += w) {
			if (o[el] % w) {
				snprintf(why, nwhy, "%s element %lld of the region (offset %lld) is not %lld-aligned",
				         name, (long long)el, (long long)o[el], (long long)w);
				rc = 0;
			}
			for (j = 1; j < w && rc == 1; j++)
				if (o[el + j] != o[el] + j) {
					snprintf(why, nwhy, "%s element %lld of the region is at offset %lld, not %lld "
					         "after element %lld at %lld", name, (long long)(el + j), (long long)o[el + j],
					         (long long)j, (long long)el, (long long)o[el]);
					rc = 0;
				}
		}
	free(off);
	return rc;
}

/* The squeezed dimension along which r's elements are consecutive in memory
** (offset + 1 per step, everywhere), or -1. */
static int
contiguous_dim(Kernel *k, const KRegion *r, const Sq *q, Err *e)
{
	char why[200];
	int64_t pts, p, el, stride = 1, *off;
	int j, best = -1;

	if (!(off = region_offsets(k, r, q, &pts, why, sizeof why, e)))
		return pts < 0 ? -2 : -1;
	for (j = q->n - 1; j >= 0 && best < 0; stride *= q->ext[j--]) {
		int ok = 1;

		for (p = 0; p < pts && ok; p++)
			for (el = 0; el < q->total && ok; el++)
				if ((el / stride) % q->ext[j] + 1 < q->ext[j])
					ok = off[p * q->total + el + stride] == off[p * q->total + el] + 1;
		if (ok)
			best = j;
	}
	free(off);
	return best;
}

/* A sequence named by what was dispatched and why: kernel_print shows the name. */
static UOp *
named(Kernel *k, const char *head, UOp *body)
{
	UOp *src[2];

	src[0] = kernel_const(k, DT_BOOL, 1);
	src[1] = body;
	if (!src[0] || !body)
		return NULL;
	return uop_new(k->c, OP_IF, DT_VOID, src, 2, 0, 0, head, NULL, 0);
}

/* guard and the tail of the partition: u < units */
static UOp *
guarded(Kernel *k, const KScope *s, UOp *u, int64_t units, int64_t iters, UOp *body)
{
	UOp *g = s->guard;

	if (iters * s->n != units) {
		UOp *t = uop_alu(k->c, OP_CMPLT, u, uop_int(k->c, units));

		g = g ? uop_alu(k->c, OP_AND, g, t) : t;
	}
	if (g) {
		UOp *sg;
		Err e;

		if (uop_simplify(k->c, g, &sg, &e) == 0)
			g = sg;
		if (!(g->op == OP_CONST && g->arg[0]))
			body = kernel_if(k, g, &body, 1);
	}
	return body;
}

/*
** The partition of `total` elements in units of w: unit u = it*n + id;
** digits of the element at (u, v) over the squeezed extents (innermost
** scaled by w), simplified.
*/
static int
partition(Kernel *k, const KScope *s, const Sq *q, int64_t w, UOp **it, UOp **vv, UOp **u, UOp **dig,
          int64_t *units, int64_t *iters, Err *e)
{
	int64_t ext[T_MAXDIM];
	UOp *x;
	int i;

	*units = q->total / w;
	*iters = (*units + s->n - 1) / s->n;
	/* one unit per thread needs no loop */
	*it = *iters > 1 ? kernel_var(k, "it", *iters) : NULL;
	*vv = w > 1 ? kernel_var(k, "v", w) : NULL;
	*u = *it ? uop_add(k->c, uop_mul(k->c, *it, uop_int(k->c, s->n)), s->id) : s->id;
	if ((*iters > 1 && !*it) || !*u)
		return err_set(e, "kernel: out of memory");
	for (i = 0; i < q->n; i++)
		ext[i] = q->ext[i];
	ext[q->n - 1] /= w;
	x = *u;
	for (i = q->n - 1; i >= 0; i--) {
		UOp *d = i ? uop_mod(k->c, x, uop_int(k->c, ext[i])) : x, *sd;

		if (i == q->n - 1 && w > 1)
			d = uop_add(k->c, uop_mul(k->c, d, uop_int(k->c, w)), *vv);
		if (uop_simplify(k->c, d, &sd, e) < 0)
			return -1;
		dig[i] = sd;
		x = uop_idiv(k->c, x, uop_int(k->c, ext[i]));
	}
	return 0;
}

static int
same_shape(const Sq *a, const Sq *b)
{
	int i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (a->ext[i] != b->ext[i])
			return 0;
	return 1;
}

/* The widest vector both regions allow (src may be NULL), or the forced one. */
static int
choose_vector(Kernel *k, const KRegion *dst, const Sq *qd, const KRegion *src, const Sq *qs,
              const char *force, KDispatch *d, Err *e)
{
	int bytes = dtype_bytes(k->buf[dst->buf].dtype);
	int64_t w, fw = 0;
	char why[240] = "", first[300] = "";
	int ok;

	if (force) {
		if (strcmp(force, "scalar") == 0)
			fw = 1;
		else if (strncmp(force, "vector", 6) == 0 && (fw = atoll(force + 6)) >= 1 && (fw & (fw - 1)) == 0)
			;
		else
			return err_set(e, "unknown implementation %s (scalar, vector2, vector4, ...)", force);
	}
	for (w = fw ? fw : MAXVEC / (bytes ? bytes : 1); w > 1; w /= 2) {
		if ((ok = vector_ok(k, dst, qd, w, why, sizeof why, e)) < 0)
			return -1;
		if (ok && src && (ok = vector_ok(k, src, qs, w, why, sizeof why, e)) < 0)
			return -1;
		if (ok)
			break;
		if (fw)
			return err_set(e, "vector%lld is not possible: %s", (long long)fw, why);
		if (!first[0])
			snprintf(first, sizeof first, "not vector%lld: %s", (long long)w, why);
	}
	if (w < 1)
		w = 1;
	snprintf(d->impl, sizeof d->impl, w > 1 ? "vector%lld" : "scalar", (long long)w);
	if (fw)
		snprintf(d->reason, sizeof d->reason, "forced");
	else if (w > 1)
		snprintf(d->reason, sizeof d->reason, "%lld-element runs (%lld bytes) are consecutive and aligned "
		         "in %s%s", (long long)w, (long long)(w * bytes), src ? "both layouts" : "the layout",
		         first[0] ? "; wider: " : "");
	else
		snprintf(d->reason, sizeof d->reason, "no vector access fits: ");
	if (!fw && first[0])
		strncat(d->reason, first, sizeof d->reason - strlen(d->reason) - 1);
	return (int)w;
}

static UOp *
elementwise(Kernel *k, const KScope *s, const KRegion *dst, const KRegion *src, UOp *value,
            const char *force, KDispatch *d, const char *op, Err *e)
{
	Sq qd, qs;
	UOp *it, *vv, *u, *dig[T_MAXDIM], *di[T_MAXDIM], *si[T_MAXDIM], *st, *body;
	int64_t units, iters, w;
	char rd[160], rs[160], head[1200];
	Err ee;

	if (squeeze(k, dst, &qd, op, e) < 0 || (src && squeeze(k, src, &qs, op, e) < 0))
		return NULL;
	if (src && !same_shape(&qd, &qs)) {
		kernel_region_str(rd, sizeof rd, k, dst);
		kernel_region_str(rs, sizeof rs, k, src);
		return err_set(e, "%s: %s and %s have different shapes", op, rd, rs), NULL;
	}
	if (src && k->buf[dst->buf].dtype != k->buf[src->buf].dtype)
		return err_set(e, "%s: %s is %s, %s is %s (cast first)", op, k->buf[dst->buf].name,
		               dtype_name(k->buf[dst->buf].dtype), k->buf[src->buf].name,
		               dtype_name(k->buf[src->buf].dtype)), NULL;
	if (qd.n == 0) {   /* one element */
		qd.n = 1;
		qd.dim[0] = 0;
		qd.ext[0] = 1;
		if (src)
			qs = qd;
	}
	if ((w = choose_vector(k, dst, &qd, src, src ? &qs : NULL, force, d, &ee)) < 0)
		return err_set(e, "%s: %s", op, ee.msg), NULL;
	if (partition(k, s, &qd, w, &it, &vv, &u, dig, &units, &iters, e) < 0)
		return NULL;
	coords(k, dst, &qd, dig, di);
	if (src)
		coords(k, src, &qs, dig, si);
	st = kernel_store(k, kernel_index(k, dst->buf, di, k->buf[dst->buf].ndim),
	                  src ? kernel_load(k, kernel_index(k, src->buf, si, k->buf[src->buf].ndim), NULL)
	                      : kernel_cast(k, k->buf[dst->buf].dtype, value), NULL);
	body = st;
	if (vv)
		body = kernel_loop(k, kernel_range(k, vv, AX_UPCAST, HW_NONE), &body, 1);
	body = guarded(k, s, u, units, iters, body);
	if (it)
		body = kernel_loop(k, kernel_range(k, it, AX_LOOP, HW_NONE), &body, 1);
	kernel_region_str(rd, sizeof rd, k, dst);
	if (src) {
		kernel_region_str(rs, sizeof rs, k, src);
		snprintf(head, sizeof head, "%s %s <- %s at %s: %s (%s)", op, rd, rs, s->desc, d->impl, d->reason);
	} else
		snprintf(head, sizeof head, "%s %s at %s: %s (%s)", op, rd, s->desc, d->impl, d->reason);
	if (!(body = named(k, head, body)))
		err_set(e, "%s: out of memory", op);
	return body;
}

/* The digits of unit u over the squeezed extents, walked with dimension
** `inner` fastest and the others row-major: a partition that runs along one
** side's contiguous dimension. */
static int
digits_along(Kernel *k, UOp *u, const Sq *q, int inner, UOp **dig, Err *e)
{
	UOp *x = u;
	int i, order[T_MAXDIM], n = 0;

	for (i = 0; i < q->n; i++)
		if (i != inner)
			order[n++] = i;
	order[n++] = inner;
	for (i = n - 1; i >= 0; i--) {
		UOp *d = i ? uop_mod(k->c, x, uop_int(k->c, q->ext[order[i]])) : x, *sd;

		if (uop_simplify(k->c, d, &sd, e) < 0)
			return -1;
		dig[order[i]] = sd;
		x = uop_idiv(k->c, x, uop_int(k->c, q->ext[order[i]]));
	}
	return 0;
}

/* One side of a staged copy: every unit of the scope's threads moves tile <-> side. */
static UOp *
stage_side(Kernel *k, const KScope *s, const Sq *q, int inner, int tile, const KRegion *side,
           int to_tile, Err *e)
{
	int64_t iters = (q->total + s->n - 1) / s->n;
	UOp *it = iters > 1 ? kernel_var(k, to_tile ? "it" : "jt", iters) : NULL;
	UOp *u = it ? uop_add(k->c, uop_mul(k->c, it, uop_int(k->c, s->n)), s->id) : s->id;
	UOp *dig[T_MAXDIM], *ti[T_MAXDIM], *si[T_MAXDIM], *a, *b, *body;
	int i;

	if (digits_along(k, u, q, inner, dig, e) < 0)
		return NULL;
	coords(k, side, q, dig, si);
	for (i = 0; i < q->n; i++)
		ti[i] = dig[i];
	a = kernel_index(k, tile, ti, q->n);
	b = kernel_index(k, side->buf, si, k->buf[side->buf].ndim);
	body = to_tile ? kernel_store(k, a, kernel_load(k, b, NULL), NULL) : kernel_store(k, b, kernel_load(k, a, NULL), NULL);
	body = guarded(k, s, u, q->total, iters, body);
	return it ? kernel_loop(k, kernel_range(k, it, AX_LOOP, HW_NONE), &body, 1) : body;
}

/*
** A copy whose two sides are contiguous along different dimensions (a
** transpose) moves through a shared tile: the cta reads the source along its
** contiguous dimension, waits at a barrier, and writes the destination along
** its own; both sides coalesce. The tile's rows are padded by one element so
** that its column accesses spread over the banks. Returns NULL with *why set
** when the copy does not call for it (or cannot have it).
*/
static UOp *
staged_copy(Kernel *k, const KScope *s, const KRegion *dst, const KRegion *src, int forced,
            KDispatch *d, char *why, size_t nwhy, Err *e)
{
	Sq qd, qs;
	int cd, cs, tile, i;
	int64_t shape[T_MAXDIM], bytes;
	char name[K_NAME];
	UOp *x, *st[3];

	if (squeeze(k, dst, &qd, "copy", e) < 0 || squeeze(k, src, &qs, "copy", e) < 0)
		return NULL;
	if (qd.n != 2 || !same_shape(&qd, &qs)) {
		snprintf(why, nwhy, "staging takes a 2-D region");
		return NULL;
	}
	if (s->kind != KS_CTA || s->guard || s->n < 2) {
		snprintf(why, nwhy, "staging needs a whole cta (a barrier), not %s", s->desc);
		return NULL;
	}
	if (k->buf[dst->buf].scope == AS_LOCAL || k->buf[src->buf].scope == AS_LOCAL) {
		snprintf(why, nwhy, "one side is in shared memory already");
		return NULL;
	}
	if ((cd = contiguous_dim(k, dst, &qd, e)) < -1 || (cs = contiguous_dim(k, src, &qs, e)) < -1)
		return NULL;
	if (!forced && (cd < 0 || cs < 0 || cd == cs)) {
		snprintf(why, nwhy, "both sides run along the same dimension");
		return NULL;
	}
	bytes = qd.ext[0] * (qd.ext[1] + 1) * dtype_bytes(k->buf[dst->buf].dtype);
	if (bytes > 48 * 1024) {
		snprintf(why, nwhy, "a %lldx%lld tile needs %lld bytes of shared memory (48 KB at most)",
		         (long long)qd.ext[0], (long long)qd.ext[1], (long long)bytes);
		return NULL;
	}
	for (i = 0; i < 2; i++)
		shape[i] = qd.ext[i];
	kernel_fresh_name(k, "stage", name, sizeof name);
	if ((tile = kernel_add_buffer(k, name, k->buf[dst->buf].dtype, AS_LOCAL, KB_TEMP, shape, 2, e)) < 0)
		return NULL;
	x = uop_add(k->c, uop_mul(k->c, k->buf[tile].lvar[0], uop_int(k->c, shape[1] + 1)), k->buf[tile].lvar[1]);
	{
		char desc[64];

		snprintf(desc, sizeof desc, "(%lld,%lld):(%lld,1)", (long long)shape[0], (long long)shape[1],
		         (long long)(shape[1] + 1));
		if (kernel_set_layout(k, tile, x, k->buf[tile].lvar, 2, shape[0] * (shape[1] + 1), desc, e) < 0)
			return NULL;
	}
	st[0] = stage_side(k, s, &qs, cs < 0 ? 1 : cs, tile, src, 1, e);
	st[1] = kernel_barrier(k);
	st[2] = st[0] ? stage_side(k, s, &qd, cd < 0 ? 1 : cd, tile, dst, 0, e) : NULL;
	if (!st[0] || !st[2])
		return NULL;
	snprintf(d->impl, sizeof d->impl, "staged");
	snprintf(d->reason, sizeof d->reason, "%s%s runs along dimension %d, %s along dimension %d: each "
	         "side moves along its own through a shared %lldx%lld tile padded to %lld",
	         forced ? "forced; " : "", k->buf[src->buf].name, cs, k->buf[dst->buf].name, cd,
	         (long long)shape[0], (long long)shape[1], (long long)(shape[1] + 1));
	return kernel_if(k, kernel_const(k, DT_BOOL, 1), st, 3);
}

/*
** A global-to-shared copy as cp.async: the units of the vector16 copy (runs
** of 16 bytes, consecutive and aligned in both layouts, proved as for
** vector copies), each one asynchronous 16-byte copy of its thread. The
** statements wait for nothing: the caller commits the group
** (kernel_cp_commit) and waits for it (kernel_cp_wait) before the tile is
** read, and a barrier makes it visible to the other threads.
*/
static UOp *
cp_async_copy(Kernel *k, const KScope *s, const KRegion *dst, const KRegion *src, KDispatch *d, Err *e)
{
	Sq qd, qs;
	UOp *it, *vv, *u, *zero, *dig[T_MAXDIM], *di[T_MAXDIM], *si[T_MAXDIM], *body;
	int64_t units, iters, w;
	int bytes, ok, i;
	char why[240] = "", rd[160], rs[160], head[1200];
	const KBuf *db, *sb;

	if (squeeze(k, dst, &qd, "copy", e) < 0 || squeeze(k, src, &qs, "copy", e) < 0)
		return NULL;
	kernel_region_str(rd, sizeof rd, k, dst);
	kernel_region_str(rs, sizeof rs, k, src);
	db = &k->buf[dst->buf];
	sb = &k->buf[src->buf];
	if (!same_shape(&qd, &qs))
		return err_set(e, "copy: %s and %s have different shapes", rd, rs), NULL;
	if (db->scope != AS_LOCAL || sb->scope != AS_GLOBAL)
		return err_set(e, "copy: cp_async is not possible: it copies global to shared memory, and %s is %s, "
		               "%s is %s", rs, kscope_name(sb->scope), rd, kscope_name(db->scope)), NULL;
	if (db->dtype != sb->dtype)
		return err_set(e, "copy: %s is %s, %s is %s (cast first)", db->name, dtype_name(db->dtype), sb->name,
		               dtype_name(sb->dtype)), NULL;
	bytes = dtype_bytes(db->dtype);
	if (bytes < 1 || 16 % bytes)
		return err_set(e, "copy: cp_async is not possible: %s elements do not make 16 bytes",
		               dtype_name(db->dtype)), NULL;
	w = 16 / bytes;
	if (qd.n == 0)
		return err_set(e, "copy: cp_async is not possible: one element is not a 16-byte run"), NULL;
	if ((ok = vector_ok(k, dst, &qd, w, why, sizeof why, e)) < 0
	|| (ok && (ok = vector_ok(k, src, &qs, w, why, sizeof why, e)) < 0))
		return NULL;
	if (!ok)
		return err_set(e, "copy: cp_async is not possible: it moves 16-byte runs (%lld elements), and %s", (long long)w,
		               why), NULL;
	if (partition(k, s, &qd, w, &it, &vv, &u, dig, &units, &iters, e) < 0)
		return NULL;
	coords(k, dst, &qd, dig, di);
	coords(k, src, &qs, dig, si);
	if (!(zero = uop_int(k->c, 0)))
		return err_set(e, "copy: out of memory"), NULL;
	for (i = 0; i < db->ndim; i++) {
		di[i] = kernel_substitute(k->c, di[i], &vv, &zero, 1);
		if (di[i] && uop_simplify(k->c, di[i], &di[i], e) < 0)
			return NULL;
	}
	for (i = 0; i < sb->ndim; i++) {
		si[i] = kernel_substitute(k->c, si[i], &vv, &zero, 1);
		if (si[i] && uop_simplify(k->c, si[i], &si[i], e) < 0)
			return NULL;
	}
	if (!(body = kernel_cp_async(k, kernel_index(k, dst->buf, di, db->ndim),
	                             kernel_index(k, src->buf, si, sb->ndim), (int)w, e)))
		return NULL;
	body = guarded(k, s, u, units, iters, body);
	if (it)
		body = kernel_loop(k, kernel_range(k, it, AX_LOOP, HW_NONE), &body, 1);
	snprintf(d->impl, sizeof d->impl, "cp_async");
	snprintf(d->reason, sizeof d->reason, "forced; %lld-element runs (16 bytes) are consecutive and aligned in "
	         "both layouts: one cp.async.cg each, landed by the group's cp_async_wait", (long long)w);
	snprintf(head, sizeof head, "copy %s <- %s at %s: %s (%s)", rd, rs, s->desc, d->impl, d->reason);
	if (!(body = named(k, head, body)))
		err_set(e, "copy: out of memory");
	return body;
}

UOp *
kernel_op_copy(Kernel *k, const KScope *s, const KRegion *dst, const KRegion *src, const char *force,
               KDispatch *d, Err *e)
{
	char why[200] = "", rd[160], rs[160], head[1200];
	UOp *body;
	Err ee = { "" };

	if (force && strcmp(force, "cp_async") == 0)
		return cp_async_copy(k, s, dst, src, d, e);
	if (!force || strcmp(force, "staged") == 0) {
		body = staged_copy(k, s, dst, src, force != NULL, d, why, sizeof why, &ee);
		if (ee.msg[0])
			return err_set(e, "copy: %s", ee.msg), NULL;
		if (force && !body)
			return err_set(e, "copy: staged is not possible: %s", why), NULL;
		if (body) {
			kernel_region_str(rd, sizeof rd, k, dst);
			kernel_region_str(rs, sizeof rs, k, src);
			snprintf(head, sizeof head, "copy %s <- %s at %s: %s (%s)", rd, rs, s->desc, d->impl, d->reason);
			if (!(body = named(k, head, body)))
				err_set(e, "copy: out of memory");
			return body;
		}
	}
	return elementwise(k, s, dst, src, NULL, force, d, "copy", e);
}

UOp *
kernel_op_fill(Kernel *k, const KScope *s, const KRegion *dst, UOp *value, const char *force,
               KDispatch *d, Err *e)
{
	if (!value)
		return err_set(e, "fill: no value"), NULL;
	return elementwise(k, s, dst, NULL, value, force, d, "fill", e);
}

static UOp *
combine(Kernel *k, Op op, DType t, UOp *a, UOp *b)
{
	UOp *src[2] = { a, b };

	return kernel_alu(k, op, t, src, 2);
}

/* The digits of x over the squeezed extents of q, row-major, simplified. */
static int
digits(Kernel *k, UOp *x, const Sq *q, UOp **dig, Err *e)
{
	int i;

	for (i = q->n - 1; i >= 0; i--) {
		UOp *d = i > 0 ? uop_mod(k->c, x, uop_int(k->c, q->ext[i])) : x, *sd;

		if (uop_simplify(k->c, d, &sd, e) < 0)
			return -1;
		dig[i] = sd;
		x = uop_idiv(k->c, x, uop_int(k->c, q->ext[i]));
	}
	return 0;
}

/* A per-thread register buffer of n elements named after base. */
static int
registers(Kernel *k, const char *base, DType t, int64_t n, Err *e)
{
	char name[K_NAME];

	kernel_fresh_name(k, base, name, sizeof name);
	return kernel_add_buffer(k, name, t, AS_REG, KB_TEMP, &n, 1, e);
}

/*
** A warp's reduce: each lane folds elements lane, lane + 32, ... into a
** register, then five butterfly steps (lane ^ 16, 8, 4, 2, 1) leave the whole
** warp's result in every lane, and lane 0 stores it (CUB's WarpReduce).
*/
static UOp *
warp_reduce(Kernel *k, const KScope *s, Op op, DType t, const KRegion *dst, const KRegion *src,
            const Sq *qs, int64_t red, Err *e)
{
	int acc, i, n = 0;
	int64_t iters = (red + 31) / 32, m;
	UOp *st[12], *zero = uop_int(k->c, 0), *ax, *it, *rr, *dig[T_MAXDIM], *si[T_MAXDIM], *v, *body, *di[T_MAXDIM];

	if ((acc = registers(k, "acc", t, 1, e)) < 0)
		return NULL;
	ax = kernel_index(k, acc, &zero, 1);
	st[n++] = kernel_store(k, ax, kernel_identity(k, op, t), NULL);
	it = iters > 1 ? kernel_var(k, "it", iters) : NULL;
	rr = it ? uop_add(k->c, uop_mul(k->c, it, uop_int(k->c, 32)), s->id) : s->id;
	if (digits(k, rr, qs, dig, e) < 0)
		return NULL;
	coords(k, src, qs, dig, si);
	v = kernel_cast(k, t, kernel_load(k, kernel_index(k, src->buf, si, k->buf[src->buf].ndim), NULL));
	body = kernel_store(k, ax, combine(k, op, t, kernel_load(k, ax, NULL), v), NULL);
	if (iters * 32 != red)
		body = kernel_if(k, uop_alu(k->c, OP_CMPLT, rr, uop_int(k->c, red)), &body, 1);
	st[n++] = it ? kernel_loop(k, kernel_range(k, it, AX_REDUCE, HW_NONE), &body, 1) : body;
	for (m = 16; m >= 1; m /= 2) {
		UOp *x = kernel_load(k, ax, NULL);

		st[n++] = kernel_store(k, ax, combine(k, op, t, x, kernel_shuffle(k, x,
		                       uop_alu(k->c, OP_XOR, s->id, uop_int(k->c, m)))), NULL);
	}
	for (i = 0; i < k->buf[dst->buf].ndim; i++)
		di[i] = dst->begin[i];
	body = kernel_store(k, kernel_index(k, dst->buf, di, k->buf[dst->buf].ndim), kernel_load(k, ax, NULL), NULL);
	st[n++] = kernel_if(k, uop_alu(k->c, OP_CMPEQ, s->id, uop_int(k->c, 0)), &body, 1);
	return kernel_if(k, kernel_const(k, DT_BOOL, 1), st, n);
}

/*
** reduce: dst (the outer dimensions of src, squeezed) = op over the inner
** ones. rows: each thread owns whole outputs, a serial loop each. tree: one
** output for a cta: strided partials per thread into a shared scratch
** buffer, then log2(n) halving steps between barriers (CUB's
** BlockReduce in shared memory).
*/
UOp *
kernel_op_reduce(Kernel *k, const KScope *s, Op op, const KRegion *dst, const KRegion *src,
                 const char *force, KDispatch *d, Err *e)
{
	Sq qd, qs, qo;
	DType t;
	int64_t outs, red = 1, units, iters;
	int i, tree, shuffle;
	UOp *it, *vv, *u, *dig[T_MAXDIM], *sd[T_MAXDIM], *di[T_MAXDIM], *si[T_MAXDIM], *body;
	char rd[160], rs[160], head[1200];

	if (op != OP_ADD && op != OP_MAX && op != OP_MUL)
		return err_set(e, "reduce: the op is add, max or mul"), NULL;
	if (squeeze(k, dst, &qd, "reduce", e) < 0 || squeeze(k, src, &qs, "reduce", e) < 0)
		return NULL;
	kernel_region_str(rd, sizeof rd, k, dst);
	kernel_region_str(rs, sizeof rs, k, src);
	if (qd.n >= qs.n && qs.n > 0)
		return err_set(e, "reduce: %s reduces nothing into %s (the outputs are the outer dimensions "
		               "of the source)", rs, rd), NULL;
	for (i = 0; i < qd.n; i++)
		if (qd.ext[i] != qs.ext[i])
			return err_set(e, "reduce: %s does not match the outer dimensions of %s", rd, rs), NULL;
	t = k->buf[dst->buf].dtype;
	outs = qd.total;
	for (i = qd.n; i < qs.n; i++)
		red *= qs.ext[i];
	tree = s->n > 1 && s->kind == KS_CTA && (s->n & (s->n - 1)) == 0 && outs == 1;
	shuffle = s->kind == KS_WARP && outs == 1;
	if (force) {
		if (strcmp(force, "rows") == 0)
			tree = shuffle = 0;
		else if (strcmp(force, "tree") == 0) {
			if (!tree)
				return err_set(e, "reduce: tree is not possible: it needs one output (%lld here) at cta "
				               "scope (%s here) with a power-of-two number of threads (%lld)",
				               (long long)outs, s->desc, (long long)s->n), NULL;
			shuffle = 0;
		} else if (strcmp(force, "shuffle") == 0) {
			if (!shuffle)
				return err_set(e, "reduce: shuffle is not possible: it needs one output (%lld here) for "
				               "a warp (the scope is %s)", (long long)outs, s->desc), NULL;
		} else
			return err_set(e, "reduce: unknown implementation %s (rows, tree, shuffle)", force), NULL;
		snprintf(d->reason, sizeof d->reason, "forced");
	} else if (shuffle)
		snprintf(d->reason, sizeof d->reason, "one output for a warp: strided partials in a register, "
		         "then a butterfly of 5 shuffles");
	else if (tree)
		snprintf(d->reason, sizeof d->reason, "one output for %lld threads: strided partials, then a "
		         "shared-memory tree of halving steps", (long long)s->n);
	else
		snprintf(d->reason, sizeof d->reason, "%lld output%s for %lld thread%s: each thread reduces "
		         "whole outputs%s", (long long)outs, outs == 1 ? "" : "s", (long long)s->n,
		         s->n == 1 ? "" : "s", s->n > 1 && outs < s->n ? " (a tree needs one output at cta "
		         "scope and a power-of-two thread count)" : "");
	snprintf(d->impl, sizeof d->impl, shuffle ? "shuffle" : tree ? "tree" : "rows");
	/* the output digits: rows partition outputs; a tree has one */
	qo = qd;
	if (qo.n == 0) {
		qo.n = 1;
		qo.dim[0] = 0;
		qo.ext[0] = 1;
		qo.total = 1;
	}
	if (shuffle) {
		if (!(body = warp_reduce(k, s, op, t, dst, src, &qs, red, e)))
			return NULL;
	} else if (!tree) {
		UOp *r, *rd_[T_MAXDIM], *x, *init, *upd;

		if (partition(k, s, &qo, 1, &it, &vv, &u, dig, &units, &iters, e) < 0)
			return NULL;
		r = kernel_var(k, "r", red);
		/* src digits: the output's, then the reduced ones from r */
		for (i = 0; i < qd.n; i++)
			sd[i] = dig[i];
		x = r;
		for (i = qs.n - 1; i >= qd.n; i--) {
			UOp *dd = i > qd.n ? uop_mod(k->c, x, uop_int(k->c, qs.ext[i])) : x, *ss;

			if (uop_simplify(k->c, dd, &ss, e) < 0)
				return NULL;
			rd_[i] = ss;
			x = uop_idiv(k->c, x, uop_int(k->c, qs.ext[i]));
		}
		for (i = qd.n; i < qs.n; i++)
			sd[i] = rd_[i];
		coords(k, dst, &qd, dig, di);
		coords(k, src, &qs, sd, si);
		{
			UOp *dix = kernel_index(k, dst->buf, di, k->buf[dst->buf].ndim);
			UOp *v = kernel_cast(k, t, kernel_load(k, kernel_index(k, src->buf, si, k->buf[src->buf].ndim), NULL));

			init = kernel_store(k, dix, kernel_identity(k, op, t), NULL);
			upd = kernel_store(k, dix, combine(k, op, t, kernel_load(k, dix, NULL), v), NULL);
			upd = kernel_loop(k, kernel_range(k, r, AX_REDUCE, HW_NONE), &upd, 1);
			body = kernel_if(k, kernel_const(k, DT_BOOL, 1), (UOp *[]){ init, upd }, 2);
		}
		body = guarded(k, s, u, units, iters, body);
		if (it)
			body = kernel_loop(k, kernel_range(k, it, AX_LOOP, HW_NONE), &body, 1);
	} else {
		char sname[K_NAME];
		int64_t sh = s->n, step;
		int sb, n = 0;
		UOp *st[40], *x, *rr, *sidx, *v, *g;
		Err ee;

		kernel_fresh_name(k, "red", sname, sizeof sname);
		if ((sb = kernel_add_buffer(k, sname, t, AS_LOCAL, KB_TEMP, &sh, 1, e)) < 0)
			return NULL;
		sidx = kernel_index(k, sb, &s->id, 1);
		st[n++] = kernel_store(k, sidx, kernel_identity(k, op, t), NULL);
		iters = (red + s->n - 1) / s->n;
		it = iters > 1 ? kernel_var(k, "it", iters) : NULL;
		rr = it ? uop_add(k->c, uop_mul(k->c, it, uop_int(k->c, s->n)), s->id) : s->id;
		x = rr;
		for (i = qs.n - 1; i >= 0; i--) {
			UOp *dd = i > 0 ? uop_mod(k->c, x, uop_int(k->c, qs.ext[i])) : x, *ss;

			if (uop_simplify(k->c, dd, &ss, &ee) < 0)
				return err_set(e, "%s", ee.msg), NULL;
			sd[i] = ss;
			x = uop_idiv(k->c, x, uop_int(k->c, qs.ext[i]));
		}
		coords(k, src, &qs, sd, si);
		v = kernel_cast(k, t, kernel_load(k, kernel_index(k, src->buf, si, k->buf[src->buf].ndim), NULL));
		body = kernel_store(k, sidx, combine(k, op, t, kernel_load(k, sidx, NULL), v), NULL);
		if (iters * s->n != red)
			body = kernel_if(k, uop_alu(k->c, OP_CMPLT, rr, uop_int(k->c, red)), &body, 1);
		st[n++] = it ? kernel_loop(k, kernel_range(k, it, AX_REDUCE, HW_NONE), &body, 1) : body;
		st[n++] = kernel_barrier(k);
		for (step = s->n / 2; step >= 1 && n < 36; step /= 2) {
			UOp *other = kernel_index(k, sb, (UOp *[]){ uop_add(k->c, s->id, uop_int(k->c, step)) }, 1);

			body = kernel_store(k, sidx, combine(k, op, t, kernel_load(k, sidx, NULL), kernel_load(k, other, NULL)), NULL);
			st[n++] = kernel_if(k, uop_alu(k->c, OP_CMPLT, s->id, uop_int(k->c, step)), &body, 1);
			st[n++] = kernel_barrier(k);
		}
		for (i = 0; i < k->buf[dst->buf].ndim; i++)
			di[i] = dst->begin[i];
		body = kernel_store(k, kernel_index(k, dst->buf, di, k->buf[dst->buf].ndim),
		                    kernel_load(k, kernel_index(k, sb, (UOp *[]){ uop_int(k->c, 0) }, 1), NULL), NULL);
		g = uop_alu(k->c, OP_CMPEQ, s->id, uop_int(k->c, 0));
		st[n++] = kernel_if(k, g, &body, 1);
		body = kernel_if(k, kernel_const(k, DT_BOOL, 1), st, n);
		if (s->guard)
			return err_set(e, "reduce: a tree over a warp subset would need a barrier for those warps alone"), NULL;
	}
	snprintf(head, sizeof head, "reduce %s %s <- %s at %s: %s (%s)", uop_info[op].name, rd, rs, s->desc,
	         d->impl, d->reason);
	if (!(body = named(k, head, body)))
		err_set(e, "reduce: out of memory");
	return body;
}

/* The last two dimensions of a region as (rows, cols); others must be single. */
static int
matrix(const Kernel *k, const KRegion *r, int *dr, int *dc, const char *what, Err *e)
{
	const KBuf *b = &k->buf[r->buf];
	int i;

	if (b->ndim < 2)
		return err_set(e, "gemm: %s (%s) is not a matrix", what, b->name);
	for (i = 0; i < b->ndim - 2; i++)
		if (r->extent[i] != 1)
			return err_set(e, "gemm: %s (%s) spans %lld along dimension %d; a matrix region spans only "
			               "the last two", what, b->name, (long long)r->extent[i], i);
	*dr = b->ndim - 2;
	*dc = b->ndim - 1;
	return 0;
}

#define MMA_ATOM "SM80_16x8x16_F32F16F16F32_TN"

/* The (row, col) of register v of `lane` in an atom's TV layout over a rows x
** cols tile (colexicographic: row + col*rows), simplified. */
static int
frag(Kernel *k, const Layout *tv, int64_t rows, UOp *lane, UOp *v, UOp **row, UOp **col, Err *e)
{
	UOp *x;

	if (lower_cute_idx(k->c, tv, uop_add(k->c, lane, uop_mul(k->c, v, uop_int(k->c, 32))), &x, e) < 0)
		return -1;
	if (uop_simplify(k->c, uop_mod(k->c, x, uop_int(k->c, rows)), row, e) < 0
	|| uop_simplify(k->c, uop_idiv(k->c, x, uop_int(k->c, rows)), col, e) < 0)
		return -1;
	return 0;
}

/* Why the SM80 m16n8k16 atom cannot serve this gemm, or NULL. */
static const char *
mma_unfit(const Kernel *k, const KScope *s, const KRegion *c, const KRegion *a, const KRegion *b,
          int64_t M, int64_t N, int64_t K, char *why, size_t n)
{
	int64_t tiles = (M / 16) * (N / 8), warps = s->n / 32;

	if (k->buf[a->buf].dtype != DT_FLOAT16 || k->buf[b->buf].dtype != DT_FLOAT16
	|| k->buf[c->buf].dtype != DT_FLOAT32)
		snprintf(why, n, "%s takes float16 A and B and a float32 C (here %s, %s, %s)", MMA_ATOM,
		         dtype_name(k->buf[a->buf].dtype), dtype_name(k->buf[b->buf].dtype),
		         dtype_name(k->buf[c->buf].dtype));
	else if (M % 16 || N % 8 || K % 16)
		snprintf(why, n, "(%lld, %lld, %lld) is not a multiple of the atom's (16, 8, 16)", (long long)M,
		         (long long)N, (long long)K);
	else if (s->n % 32 || s->n == 0)
		snprintf(why, n, "the scope (%s) is not whole warps", s->desc);
	else if (s->guard)
		snprintf(why, n, "the atom runs on whole blocks' warps; a warp subset's guard would make it divergent");
	else if (tiles % warps)
		snprintf(why, n, "%lld tiles of 16x8 do not divide among %lld warps", (long long)tiles, (long long)warps);
	else
		return NULL;
	return why;
}

/*
** mma: each warp of the scope takes 16x8 tiles of C; per tile, its lanes load
** C's fragment into registers by the atom's C layout, and for each 16-wide
** step of K load A's and B's fragments by theirs, run the atom, and finally
** store the fragment back: the TV layouts say which element every (lane,
** register) holds.
*/
static UOp *
mma_gemm(Kernel *k, const KScope *s, const KRegion *c, const KRegion *a, const KRegion *b, int cr,
         int cc, int ar, int ac, int br, int bc, int64_t M, int64_t N, int64_t K, Err *e)
{
	MmaAtom at;
	int ra, rb, rcb, i;
	int64_t warps = s->n / 32, tiles = (M / 16) * (N / 8), iters = tiles / warps;
	UOp *lane = uop_mod(k->c, s->id, uop_int(k->c, 32)), *warp = uop_idiv(k->c, s->id, uop_int(k->c, 32));
	UOp *it, *tile, *tm, *tn, *kt, *va, *vb, *vc, *vs, *r0, *r1, *idx[T_MAXDIM], *st[4], *ld[3], *body;

	if (cute_mma_atom(MMA_ATOM, &at, e) < 0)
		return NULL;
	if ((ra = registers(k, "a_frag", DT_FLOAT16, 8, e)) < 0 || (rb = registers(k, "b_frag", DT_FLOAT16, 4, e)) < 0
	|| (rcb = registers(k, "c_frag", DT_FLOAT32, 4, e)) < 0)
		return NULL;
	it = iters > 1 ? kernel_var(k, "it", iters) : NULL;
	tile = it ? uop_add(k->c, uop_mul(k->c, it, uop_int(k->c, warps)), warp) : warp;
	tm = uop_mul(k->c, uop_idiv(k->c, tile, uop_int(k->c, N / 8)), uop_int(k->c, 16));
	tn = uop_mul(k->c, uop_mod(k->c, tile, uop_int(k->c, N / 8)), uop_int(k->c, 8));
	kt = kernel_var(k, "kt", K / 16);
	va = kernel_var(k, "va", 8);
	vb = kernel_var(k, "vb", 4);
	vc = kernel_var(k, "vc", 4);
	vs = kernel_var(k, "vs", 4);
	/* C's fragment in and out: (m, n) = C layout (lane, v) */
	if (frag(k, &at.c, 16, lane, vc, &r0, &r1, e) < 0)
		return NULL;
	for (i = 0; i < k->buf[c->buf].ndim; i++)
		idx[i] = c->begin[i];
	idx[cr] = uop_add(k->c, uop_add(k->c, c->begin[cr], tm), r0);
	idx[cc] = uop_add(k->c, uop_add(k->c, c->begin[cc], tn), r1);
	body = kernel_store(k, kernel_index(k, rcb, &vc, 1),
	                    kernel_load(k, kernel_index(k, c->buf, idx, k->buf[c->buf].ndim), NULL), NULL);
	st[0] = kernel_loop(k, kernel_range(k, vc, AX_UPCAST, HW_NONE), &body, 1);
	/* A's: (m, k) = A layout (lane, v); B's: (n, k) = B layout (lane, v), B stored (K, N) */
	if (frag(k, &at.a, 16, lane, va, &r0, &r1, e) < 0)
		return NULL;
	for (i = 0; i < k->buf[a->buf].ndim; i++)
		idx[i] = a->begin[i];
	idx[ar] = uop_add(k->c, uop_add(k->c, a->begin[ar], tm), r0);
	idx[ac] = uop_add(k->c, uop_add(k->c, a->begin[ac], uop_mul(k->c, kt, uop_int(k->c, 16))), r1);
	body = kernel_store(k, kernel_index(k, ra, &va, 1),
	                    kernel_load(k, kernel_index(k, a->buf, idx, k->buf[a->buf].ndim), NULL), NULL);
	ld[0] = kernel_loop(k, kernel_range(k, va, AX_UPCAST, HW_NONE), &body, 1);
	if (frag(k, &at.b, 8, lane, vb, &r0, &r1, e) < 0)
		return NULL;
	for (i = 0; i < k->buf[b->buf].ndim; i++)
		idx[i] = b->begin[i];
	idx[br] = uop_add(k->c, uop_add(k->c, b->begin[br], uop_mul(k->c, kt, uop_int(k->c, 16))), r1);
	idx[bc] = uop_add(k->c, uop_add(k->c, b->begin[bc], tn), r0);
	body = kernel_store(k, kernel_index(k, rb, &vb, 1),
	                    kernel_load(k, kernel_index(k, b->buf, idx, k->buf[b->buf].ndim), NULL), NULL);
	ld[1] = kernel_loop(k, kernel_range(k, vb, AX_UPCAST, HW_NONE), &body, 1);
	if (!(ld[2] = kernel_mma(k, MMA_ATOM, rcb, ra, rb, rcb, e)))
		return NULL;
	st[1] = kernel_loop(k, kernel_range(k, kt, AX_REDUCE, HW_NONE), ld, 3);
	if (frag(k, &at.c, 16, lane, vs, &r0, &r1, e) < 0)
		return NULL;
	for (i = 0; i < k->buf[c->buf].ndim; i++)
		idx[i] = c->begin[i];
	idx[cr] = uop_add(k->c, uop_add(k->c, c->begin[cr], tm), r0);
	idx[cc] = uop_add(k->c, uop_add(k->c, c->begin[cc], tn), r1);
	body = kernel_store(k, kernel_index(k, c->buf, idx, k->buf[c->buf].ndim),
	                    kernel_load(k, kernel_index(k, rcb, &vs, 1), NULL), NULL);
	st[2] = kernel_loop(k, kernel_range(k, vs, AX_UPCAST, HW_NONE), &body, 1);
	body = kernel_if(k, kernel_const(k, DT_BOOL, 1), st, 3);
	return it ? kernel_loop(k, kernel_range(k, it, AX_LOOP, HW_NONE), &body, 1) : body;
}

/* gemm: C += A B; mma: the SM80 tensor-core atom, fma: each thread owns elements of C and loops over K. */
UOp *
kernel_op_gemm(Kernel *k, const KScope *s, const KRegion *c, const KRegion *a, const KRegion *b,
               const char *force, KDispatch *d, Err *e)
{
	Sq q;
	int cr, cc, ar, ac, br, bc, i;
	int64_t M, N, K, units, iters;
	DType t;
	UOp *it, *vv, *u, *dig[T_MAXDIM], *ci[T_MAXDIM], *ai[T_MAXDIM], *bi[T_MAXDIM], *kk, *body, *cix, *prod;
	char rc[160], ra[160], rb[160], head[1200];

	if (squeeze(k, c, &q, "gemm", e) < 0 || matrix(k, c, &cr, &cc, "C", e) < 0
	|| matrix(k, a, &ar, &ac, "A", e) < 0 || matrix(k, b, &br, &bc, "B", e) < 0)
		return NULL;
	{
		Sq tmp;

		if (squeeze(k, a, &tmp, "gemm", e) < 0 || squeeze(k, b, &tmp, "gemm", e) < 0)
			return NULL;
	}
	M = c->extent[cr];
	N = c->extent[cc];
	K = a->extent[ac];
	kernel_region_str(rc, sizeof rc, k, c);
	kernel_region_str(ra, sizeof ra, k, a);
	kernel_region_str(rb, sizeof rb, k, b);
	if (a->extent[ar] != M || b->extent[bc] != N || b->extent[br] != K)
		return err_set(e, "gemm: %s += %s %s: shapes (%lld, %lld) += (%lld, %lld) (%lld, %lld) do not "
		               "match", rc, ra, rb, (long long)M, (long long)N, (long long)a->extent[ar],
		               (long long)K, (long long)b->extent[br], (long long)b->extent[bc]), NULL;
	if (force && strcmp(force, "fma") != 0 && strcmp(force, "mma") != 0)
		return err_set(e, "gemm: unknown implementation %s (mma, fma)", force), NULL;
	{
		char why[200];
		const char *unfit = mma_unfit(k, s, c, a, b, M, N, K, why, sizeof why);

		if (force && strcmp(force, "mma") == 0 && unfit)
			return err_set(e, "gemm: mma is not possible: %s", unfit), NULL;
		if (!unfit && (!force || strcmp(force, "mma") == 0)) {
			snprintf(d->impl, sizeof d->impl, "mma");
			snprintf(d->reason, sizeof d->reason, "%s%s: %lld tiles of 16x8 over %lld warps, K in steps of "
			         "16; fragments placed by the atom's TV layouts", force ? "forced; " : "", MMA_ATOM,
			         (long long)((M / 16) * (N / 8)), (long long)(s->n / 32));
			if (!(body = mma_gemm(k, s, c, a, b, cr, cc, ar, ac, br, bc, M, N, K, e)))
				return NULL;
			goto named;
		}
		if (!force)
			snprintf(d->reason, sizeof d->reason, "not mma: %s; ", unfit);
		else
			d->reason[0] = 0;
	}
	t = k->buf[c->buf].dtype;
	snprintf(d->impl, sizeof d->impl, "fma");
	{
		size_t l = strlen(d->reason);

		snprintf(d->reason + l, sizeof d->reason - l, "%s%lld elements of C over %lld thread%s, a K loop "
		         "of %lld each", force ? "forced; " : "", (long long)(M * N), (long long)s->n,
		         s->n == 1 ? "" : "s", (long long)K);
	}
	q.n = 2;
	q.dim[0] = cr;
	q.dim[1] = cc;
	q.ext[0] = M;
	q.ext[1] = N;
	q.total = M * N;
	if (partition(k, s, &q, 1, &it, &vv, &u, dig, &units, &iters, e) < 0)
		return NULL;
	kk = kernel_var(k, "kk", K);
	for (i = 0; i < k->buf[c->buf].ndim; i++)
		ci[i] = c->begin[i];
	ci[cr] = uop_add(k->c, c->begin[cr], dig[0]);
	ci[cc] = uop_add(k->c, c->begin[cc], dig[1]);
	for (i = 0; i < k->buf[a->buf].ndim; i++)
		ai[i] = a->begin[i];
	ai[ar] = uop_add(k->c, a->begin[ar], dig[0]);
	ai[ac] = uop_add(k->c, a->begin[ac], kk);
	for (i = 0; i < k->buf[b->buf].ndim; i++)
		bi[i] = b->begin[i];
	bi[br] = uop_add(k->c, b->begin[br], kk);
	bi[bc] = uop_add(k->c, b->begin[bc], dig[1]);
	cix = kernel_index(k, c->buf, ci, k->buf[c->buf].ndim);
	prod = combine(k, OP_MUL, t, kernel_cast(k, t, kernel_load(k, kernel_index(k, a->buf, ai, k->buf[a->buf].ndim), NULL)),
	               kernel_cast(k, t, kernel_load(k, kernel_index(k, b->buf, bi, k->buf[b->buf].ndim), NULL)));
	body = kernel_store(k, cix, combine(k, OP_ADD, t, kernel_load(k, cix, NULL), prod), NULL);
	body = kernel_loop(k, kernel_range(k, kk, AX_REDUCE, HW_NONE), &body, 1);
	body = guarded(k, s, u, units, iters, body);
	if (it)
		body = kernel_loop(k, kernel_range(k, it, AX_LOOP, HW_NONE), &body, 1);
named:
	snprintf(head, sizeof head, "gemm %s += %s @ %s at %s: %s (%s)", rc, ra, rb, s->desc, d->impl, d->reason);
	if (!(body = named(k, head, body)))
		err_set(e, "gemm: out of memory");
	return body;
}

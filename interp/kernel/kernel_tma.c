/* kernel_tma.c - Hopper's bulk tensor copies (TMA) and shared-memory barriers (mbarrier): the statements and the dispatch analysis. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../layout/layout.h"
#include "kernel.h"

/*
** What a TMA writes. A tensor map describes the global buffer (its
** dimensions and byte strides, innermost first, the innermost of stride 1),
** a box (at most 256 elements a dimension) and a swizzle mode. One
** cp.async.bulk.tensor copies the box at the given coordinates into shared
** memory densely: box element (..., r, c) at byte base + linear * elem,
** linear row-major over the box, then the address's bits [4:6] XORed by
** bits [7:9] (128B; 64B: [4:5] by [7:8]; 32B: [4] by [7]); the base must
** be aligned to the swizzle's repeat (1024, 512, 256 bytes; 128 without).
** A swizzled box's inner extent is at most the swizzle's width, so a wider
** tile is several boxes along the inner dimension.
**
** The analysis (kernel_tma_plan) follows axe_tma's rules for the global side
** and decides the shared side by enumeration: for each mode, widest first,
** every element of every box at every value of the variables the start
** depends on is compared with the shared buffer's layout (the brute-force
** map is the oracle); the first mode under which they all agree is taken,
** and a refusal names the element that breaks each mode. Padding is never a
** box: TMA writes a box densely, so rows of 72 elements with 64 used leave
** holes a box cannot skip.
*/

enum { TMA_ENUM = 1 << 21 };   /* layout evaluations the analysis spends */

static int
swz_align(int sw)
{
	return sw ? 8 * sw : 128;
}

/* The byte address TMA writes for the dense address a, under swizzle sw (bytes). */
int64_t
kernel_tma_swizzle(int sw, int64_t a)
{
	int64_t m = sw == 128 ? 7 : sw == 64 ? 3 : sw == 32 ? 1 : 0;

	return a ^ (((a >> 7) & m) << 4);
}

int
kernel_mbar_check(const Kernel *k, int b, const char *op, Err *e)
{
	const KBuf *kb;

	if (b < 0 || b >= k->nbuf)
		return err_set(e, "%s: no buffer %d", op, b);
	kb = &k->buf[b];
	if (kb->scope != AS_LOCAL || kb->dtype != DT_UINT64)
		return err_set(e, "%s: %s is a %s %s buffer; an mbarrier is an element of a shared uint64 buffer "
		               "(k:shared(\"bar\", \"uint64\", {n}))", op, kb->name, kscope_name(kb->scope),
		               dtype_name(kb->dtype));
	return 0;
}

static int
bar_of(const Kernel *k, const UOp *bar, const char *op, Err *e)
{
	if (!bar || bar->op != OP_INDEX || bar->nsrc < 1 || bar->src[0]->op != OP_DEFINE)
		return err_set(e, "%s: the barrier must be an element of a buffer", op);
	return kernel_mbar_check(k, (int)bar->src[0]->arg[0], op, e) < 0 ? -1 : (int)bar->src[0]->arg[0];
}

UOp *
kernel_mbar_init(Kernel *k, UOp *bar, int64_t count, Err *e)
{
	UOp *u;

	if (bar_of(k, bar, "mbarrier_init", e) < 0)
		return NULL;
	if (count < 1 || count > (1 << 20) - 1)
		return err_set(e, "mbarrier_init: an expected count of %lld arrivals; mbarrier.init takes 1 to 2^20-1",
		               (long long)count), NULL;
	if (!(u = uop_new(k->c, OP_MBAR_INIT, DT_VOID, &bar, 1, count, 0, NULL, NULL, 0)))
		err_set(e, "mbarrier_init: out of memory");
	return u;
}

UOp *
kernel_mbar_arrive(Kernel *k, UOp *bar, int64_t tx, Err *e)
{
	UOp *u;

	if (bar_of(k, bar, "mbarrier_arrive", e) < 0)
		return NULL;
	if (tx < 0 || tx > (1 << 20) - 1)
		return err_set(e, "mbarrier_arrive: expect_tx of %lld bytes; the transaction count takes 0 to 2^20-1",
		               (long long)tx), NULL;
	if (!(u = uop_new(k->c, OP_MBAR_ARRIVE, DT_VOID, &bar, 1, tx, 0, NULL, NULL, 0)))
		err_set(e, "mbarrier_arrive: out of memory");
	return u;
}

UOp *
kernel_mbar_wait(Kernel *k, UOp *bar, UOp *parity, Err *e)
{
	UOp *s[2], *u;

	if (bar_of(k, bar, "mbarrier_wait", e) < 0)
		return NULL;
	if (!parity || parity->dtype != DT_INDEX || parity->vmin < 0 || parity->vmax > 1)
		return err_set(e, "mbarrier_wait: the parity must be an index expression in [0, 1]%s",
		               parity ? " (write kt // S % 2, not kt // S)" : ""), NULL;
	s[0] = bar;
	s[1] = parity;
	if (!(u = uop_new(k->c, OP_MBAR_WAIT, DT_VOID, s, 2, 0, 0, NULL, NULL, 0)))
		err_set(e, "mbarrier_wait: out of memory");
	return u;
}

/*
** The tensor map's global side from buffer g's layout: dims[] and bytes
** strides[] innermost first (strides[0] is the element size). The layout
** must be strided: offset 0 at the origin, stride 1 innermost, the others
** multiples of 16 bytes below 2^40 (axe_tma's rules). A row-major layout
** is strided by construction; another is enumerated when it has at most
** 2^16 elements and otherwise checked at each dimension's last index and at
** the last element.
*/
int
kernel_tma_map(const Kernel *k, int g, int64_t *dims, int64_t *strides, Err *e)
{
	const KBuf *kb;
	UBind bind[T_MAXDIM];
	int64_t st[T_MAXDIM], o, want, n, i;
	int r, d, eb;

	if (g < 0 || g >= k->nbuf)
		return err_set(e, "tma: no buffer %d", g);
	kb = &k->buf[g];
	r = kb->ndim;
	eb = dtype_bytes(kb->dtype);
	if (kb->scope != AS_GLOBAL)
		return err_set(e, "tma: the source %s is a %s buffer; a tensor map describes global memory", kb->name,
		               kscope_name(kb->scope));
	if (r < 1 || r > 5)
		return err_set(e, "tma: %s has %d dimensions; a tensor map has 1 to 5", kb->name, r);
	for (d = 0; d < r; d++) {
		bind[d].name = kb->lvar[d]->name;
		bind[d].value = 0;
	}
	if (uop_eval(kb->layout, bind, r, &o, e) < 0)
		return -1;
	if (o != 0)
		return err_set(e, "tma: %s's layout (%s) puts element 0 at offset %lld; a tensor map starts at the "
		               "pointer", kb->name, kb->layout_desc, (long long)o);
	for (d = 0; d < r; d++) {
		bind[d].value = kb->shape[d] > 1 ? 1 : 0;
		if (uop_eval(kb->layout, bind, r, &st[d], e) < 0)
			return -1;
		bind[d].value = 0;
	}
	/* the map is linear in the strides: enumerate, or check the corners */
	n = strcmp(kb->layout_desc, "row-major") == 0 ? 0 : kb->size <= (1 << 16) ? kb->size : r + 1;
	for (i = 0; i < n; i++) {
		int64_t x = i;

		want = 0;
		for (d = r - 1; d >= 0; d--) {
			if (kb->size <= (1 << 16)) {
				bind[d].value = x % kb->shape[d];
				x /= kb->shape[d];
			} else
				bind[d].value = i == r || i == d ? kb->shape[d] - 1 : 0;
			want += bind[d].value * st[d];
		}
		if (uop_eval(kb->layout, bind, r, &o, e) < 0)
			return -1;
		if (o != want) {
			Buf c;

			buf_init(&c);
			for (d = 0; d < r; d++)
				emit(&c, "%s%lld", d ? "," : "(", (long long)bind[d].value);
			emit(&c, ")");
			err_set(e, "tma: %s's layout (%s) is not strided: element %s is at offset %lld, the strides of "
			        "its neighbours predict %lld", kb->name, kb->layout_desc, c.s ? c.s : "?", (long long)o,
			        (long long)want);
			buf_free(&c);
			return -1;
		}
	}
	for (d = r - 1; d >= 0; d--) {   /* innermost first: a unit dimension takes the span inside it */
		int i2 = r - 1 - d;

		if (kb->shape[d] > ((int64_t)1 << 32))
			return err_set(e, "tma: dimension %d of %s has %lld elements; a tensor map takes at most 2^32", d,
			               kb->name, (long long)kb->shape[d]);
		dims[i2] = kb->shape[d];
		if (i2 == 0) {
			if (st[d] != 1 && kb->shape[d] > 1)
				return err_set(e, "tma: the innermost dimension of %s has stride %lld (%s); TMA needs 1",
				               kb->name, (long long)st[d], kb->layout_desc);
			strides[0] = eb;
			continue;
		}
		if (kb->shape[d] == 1) {
			/* a unit dimension's stride is free: the span of the ones inside it */
			int64_t s = strides[i2 - 1] * dims[i2 - 1];

			st[d] = (s + 15) / 16 * 16 / eb;
		}
		strides[i2] = st[d] * eb;
		if (strides[i2] <= 0 || strides[i2] % 16 || strides[i2] >= ((int64_t)1 << 40))
			return err_set(e, "tma: dimension %d of %s has a stride of %lld bytes (%s); TMA needs a multiple "
			               "of 16 below 2^40", d, kb->name, (long long)strides[i2], kb->layout_desc);
	}
	return 0;
}

/* The variables the region's start depends on (at most 16). */
static int
start_vars(const KRegion *r, int nd, const UOp **vars)
{
	int nv = 0, i, a, c;

	for (i = 0; i < nd; i++) {
		const UOp *v[16];
		int n = uop_vars(r->begin[i], v, 16);

		for (a = 0; a < n; a++) {
			for (c = 0; c < nv && vars[c] != v[a]; c++)
				;
			if (c == nv && nv < 16)
				vars[nv++] = v[a];
		}
	}
	return nv;
}

static void
crd_str(char *out, size_t n, const int64_t *x, int nd)
{
	size_t at = 0;
	int i;

	for (i = 0; i < nd && at < n; i++)
		at += snprintf(out + at, n - at, "%s%lld", i ? "," : "(", (long long)x[i]);
	if (at < n)
		snprintf(out + at, n - at, ")");
}

/* Squeezed dimensions of a region (extent > 1), checked to lie in the buffer. */
static int
squeezed(const Kernel *k, const KRegion *r, int *dim, int *n, Err *e)
{
	const KBuf *b = &k->buf[r->buf];
	int i;

	*n = 0;
	for (i = 0; i < b->ndim; i++) {
		if (!r->begin[i])
			return err_set(e, "tma: the region of %s has no start in dimension %d", b->name, i);
		if (r->extent[i] < 1 || r->extent[i] > b->shape[i] || r->begin[i]->vmin < 0
		|| r->begin[i]->vmax + r->extent[i] > b->shape[i])
			return err_set(e, "tma: the region of %s starts in [%lld, %lld] in dimension %d with extent %lld, "
			               "past its %lld", b->name, (long long)r->begin[i]->vmin, (long long)r->begin[i]->vmax,
			               i, (long long)r->extent[i], (long long)b->shape[i]);
		if (r->extent[i] > 1)
			dim[(*n)++] = i;
	}
	return 0;
}

/*
** Whether mode sw writes the shared region: 1 yes, 0 no (why says which
** element breaks it), -1 an error. full: every start gets every element
** checked (else the first and the last start, and the alignment of all).
*/
static int
verify_at(const Kernel *k, const KRegion *dst, const KRegion *src, const int *sd, const int *gd, int nq,
          const KTma *t, const UOp **vars, int nv, int64_t pts, int full, char *why, size_t nwhy,
          UProg *begins, UProg *layout, Err *e)
{
	const KBuf *S = &k->buf[dst->buf], *G = &k->buf[src->buf];
	UBind bind[16], lb[T_MAXDIM];
	int64_t p, j, l, nel = 1, base[T_MAXDIM], x[T_MAXDIM], gx[T_MAXDIM], off, b0, want;
	int eb = dtype_bytes(S->dtype), r = G->ndim, i, d;

	for (d = 0; d < r; d++)
		nel *= t->box[d];
	for (i = 0; i < nv; i++) {
		bind[i].name = vars[i]->name;
		bind[i].value = vars[i]->arg[0];
	}
	for (d = 0; d < S->ndim; d++)
		lb[d].name = S->lvar[d]->name;
	for (p = 0; p < pts; p++) {
		int all = full || p == 0 || p == pts - 1;

		if (uop_prog_run(begins, bind, base, e) < 0)
			return -1;
		for (j = 0; j < t->nbox; j++) {
			for (l = 0; l < (all ? nel : 1); l++) {
				int64_t y = l;

				/* box coordinates, row-major; the global region's relative coordinates */
				for (d = r - 1; d >= 0; d--) {
					gx[d] = y % t->box[d];
					y /= t->box[d];
				}
				gx[r - 1] += j * t->box[r - 1];
				for (d = 0; d < S->ndim; d++)
					x[d] = base[d];
				for (i = 0; i < nq; i++)
					x[sd[i]] += gx[gd[i]];
				for (d = 0; d < S->ndim; d++)
					lb[d].value = x[d];
				if (uop_prog_run(layout, lb, &off, e) < 0)
					return -1;
				if (l == 0) {
					b0 = off * eb;
					if (b0 % swz_align(t->swizzle)) {
						char c[96];

						crd_str(c, sizeof c, x, S->ndim);
						snprintf(why, nwhy, "box %lld starts at element %s, byte %lld of %s, not a multiple of "
						         "%d", (long long)j, c, (long long)b0, S->name, swz_align(t->swizzle));
						return 0;
					}
				}
				want = kernel_tma_swizzle(t->swizzle, b0 + l * eb);
				if (off * eb != want) {
					char c[96];

					crd_str(c, sizeof c, x, S->ndim);
					snprintf(why, nwhy, "element %s is at byte %lld, TMA writes it at byte %lld", c,
					         (long long)(off * eb), (long long)want);
					return 0;
				}
			}
		}
		for (i = nv - 1; i >= 0 && ++bind[i].value > vars[i]->arg[1]; i--)
			bind[i].value = vars[i]->arg[0];
	}
	return 1;
}

/* verify_at with the starts and the shared layout compiled once */
static int
verify(const Kernel *k, const KRegion *dst, const KRegion *src, const int *sd, const int *gd, int nq,
       const KTma *t, const UOp **vars, int nv, int64_t pts, int full, char *why, size_t nwhy, Err *e)
{
	const KBuf *S = &k->buf[dst->buf];
	UBind bind[16], lb[T_MAXDIM];
	UProg *begins, *layout = NULL;
	int i, rc = -1;

	for (i = 0; i < nv; i++) {
		bind[i].name = vars[i]->name;
		bind[i].value = vars[i]->arg[0];
	}
	for (i = 0; i < S->ndim; i++) {
		lb[i].name = S->lvar[i]->name;
		lb[i].value = 0;
	}
	if ((begins = uop_prog_new((const UOp *const *)dst->begin, S->ndim, bind, nv, e)) &&
	    (layout = uop_prog_new((const UOp *const *)&S->layout, 1, lb, S->ndim, e)))
		rc = verify_at(k, dst, src, sd, gd, nq, t, vars, nv, pts, full, why, nwhy, begins, layout, e);
	uop_prog_free(begins);
	uop_prog_free(layout);
	return rc;
}

int
kernel_tma_plan(const Kernel *k, const KRegion *dst, const KRegion *src, KTma *t, Err *e)
{
	static const int modes[4] = { 128, 64, 32, 0 };
	const KBuf *S, *G;
	int sd[T_MAXDIM], gd[T_MAXDIM], ns, ng, r, eb, m, i, d, rc, full;
	const UOp *vars[16];
	int nv;
	int64_t pts = 1, nel, inner;
	char rd[160], rs[160], why[4][320];

	memset(t, 0, sizeof *t);
	if (dst->buf < 0 || dst->buf >= k->nbuf || src->buf < 0 || src->buf >= k->nbuf)
		return err_set(e, "tma: no buffer %d", dst->buf < 0 || dst->buf >= k->nbuf ? dst->buf : src->buf);
	S = &k->buf[dst->buf];
	G = &k->buf[src->buf];
	if (S->scope != AS_LOCAL)
		return err_set(e, "tma: the destination %s is a %s buffer; TMA writes shared memory", S->name,
		               kscope_name(S->scope));
	if (S->dtype != G->dtype)
		return err_set(e, "tma: the destination %s is %s, the source %s is %s", S->name, dtype_name(S->dtype),
		               G->name, dtype_name(G->dtype));
	if (kernel_tma_map(k, src->buf, t->global_dim, t->global_stride, e) < 0)
		return -1;
	if (squeezed(k, dst, sd, &ns, e) < 0 || squeezed(k, src, gd, &ng, e) < 0)
		return -1;
	kernel_region_str(rd, sizeof rd, k, dst);
	kernel_region_str(rs, sizeof rs, k, src);
	if (ns != ng)
		return err_set(e, "tma: %s and %s have different shapes", rd, rs);
	for (i = 0; i < ns; i++)
		if (dst->extent[sd[i]] != src->extent[gd[i]])
			return err_set(e, "tma: %s and %s have different shapes (extent %lld against %lld)", rd, rs,
			               (long long)dst->extent[sd[i]], (long long)src->extent[gd[i]]);
	r = G->ndim;
	eb = dtype_bytes(G->dtype);
	t->rank = r;
	inner = src->extent[r - 1];
	for (d = 0; d < r - 1; d++)
		if (src->extent[d] > 256)
			return err_set(e, "tma: %s is %lld elements along dimension %d; a box takes at most 256 (copy it in "
			               "parts)", rs, (long long)src->extent[d], d);
	nv = start_vars(dst, S->ndim, vars);
	for (i = 0; i < nv; i++)
		if (uck_mul(pts, vars[i]->arg[1] - vars[i]->arg[0] + 1, &pts) < 0 || pts > TMA_ENUM)
			return err_set(e, "tma: the start of %s takes too many values to check", rd);
	nel = 1;
	for (d = 0; d < r; d++)
		nel *= src->extent[d];
	full = pts * nel <= TMA_ENUM;
	for (m = 0; m < 4; m++) {
		int sw = modes[m];
		int64_t bi = sw ? (inner < sw / eb ? inner : sw / eb) : inner;

		why[m][0] = 0;
		if (!sw && bi > 256)
			bi = 256;
		if (inner % bi) {
			snprintf(why[m], sizeof why[m], "%lld elements are no whole number of %lld-element boxes",
			         (long long)inner, (long long)bi);
			continue;
		}
		if (bi * eb % 16) {
			snprintf(why[m], sizeof why[m], "a box row of %lld bytes is no multiple of 16", (long long)(bi * eb));
			continue;
		}
		t->swizzle = sw;
		for (d = 0; d < r; d++)
			t->box[d] = src->extent[d];
		t->box[r - 1] = bi;
		t->nbox = (int)(inner / bi);
		if ((rc = verify(k, dst, src, sd, gd, ns, t, vars, nv, pts, full, why[m], sizeof why[m], e)) < 0)
			return -1;
		if (rc)
			break;
	}
	if (m == 4)
		return err_set(e, "tma: %s <- %s: the shared layout is no TMA box: 128B swizzle: %s; without swizzle: %s%s",
		               rd, rs, why[0], why[3], why[3][0] && strstr(why[3], "byte") ?
		               " (TMA writes a box densely: padding and holes are no box)" : "");
	t->box_bytes = eb;
	for (d = 0; d < r; d++)
		t->box_bytes *= t->box[d];
	t->bytes = t->box_bytes * t->nbox;
	{
		/* the box, innermost first, spelled out */
		char bx[80];
		size_t at = 0;

		for (d = r - 1; d >= 0 && at < sizeof bx; d--)
			at += snprintf(bx + at, sizeof bx - at, "%s%lld", d == r - 1 ? "" : ", ", (long long)t->box[d]);
		snprintf(t->reason, sizeof t->reason, "%d box%s of {%s} (innermost first), %s, %lld bytes; the shared "
		         "layout enumerated at %s", t->nbox, t->nbox > 1 ? "es" : "", bx,
		         t->swizzle ? (t->swizzle == 128 ? "SWIZZLE_128B" : t->swizzle == 64 ? "SWIZZLE_64B" : "SWIZZLE_32B")
		         : "SWIZZLE_NONE", (long long)t->bytes,
		         full ? "every start" : "the first and last start (every start's alignment)");
	}
	return 0;
}

int
kernel_tma_check(const Kernel *k, const UOp *s, Err *e)
{
	const KBuf *S, *G;
	const int64_t *box;
	int64_t d0[5], st[5];
	int db, gb, r, d, eb;

	if (s->op != OP_TMA_LOAD || s->nsrc != 3 || s->src[0]->op != OP_INDEX || s->src[1]->op != OP_INDEX
	|| s->src[0]->src[0]->op != OP_DEFINE || s->src[1]->src[0]->op != OP_DEFINE || !s->data)
		return err_set(e, "tma: a tma_load without a destination, a source, a barrier and a box");
	db = (int)s->src[0]->src[0]->arg[0];
	gb = (int)s->src[1]->src[0]->arg[0];
	if (db < 0 || db >= k->nbuf || gb < 0 || gb >= k->nbuf)
		return err_set(e, "tma: no buffer %d", db < 0 || db >= k->nbuf ? db : gb);
	if (bar_of(k, s->src[2], "tma", e) < 0 || kernel_tma_map(k, gb, d0, st, e) < 0)
		return -1;
	S = &k->buf[db];
	G = &k->buf[gb];
	r = G->ndim;
	eb = dtype_bytes(G->dtype);
	if (S->scope != AS_LOCAL || S->dtype != G->dtype)
		return err_set(e, "tma: the destination %s must be a shared buffer of the source's dtype %s", S->name,
		               dtype_name(G->dtype));
	if (s->ndata != (uint32_t)r * sizeof(int64_t))
		return err_set(e, "tma: a box of %u dimensions for %s of %d", (unsigned)(s->ndata / sizeof(int64_t)),
		               G->name, r);
	if (s->arg[0] != 0 && s->arg[0] != 32 && s->arg[0] != 64 && s->arg[0] != 128)
		return err_set(e, "tma: swizzle %lld is not 0, 32, 64 or 128 bytes", (long long)s->arg[0]);
	box = s->data;
	for (d = 0; d < r; d++)
		if (box[d] < 1 || box[d] > 256)
			return err_set(e, "tma: box dimension %d is %lld; TMA takes 1 to 256", d, (long long)box[d]);
	if (box[r - 1] * eb % 16 || (s->arg[0] && box[r - 1] * eb > s->arg[0]))
		return err_set(e, "tma: a box row of %lld bytes; TMA needs a multiple of 16%s", (long long)(box[r - 1] * eb),
		               s->arg[0] ? ", at most the swizzle's width" : "");
	return 0;
}

int64_t
kernel_tma_bytes(const Kernel *k, const UOp *s)
{
	const int64_t *box = s->data;
	const KBuf *G = &k->buf[s->src[1]->src[0]->arg[0]];
	int64_t b = dtype_bytes(G->dtype);
	int d;

	for (d = 0; d < G->ndim; d++)
		b *= box[d];
	return b;
}

UOp *
kernel_tma(Kernel *k, const KRegion *dst, const KRegion *src, UOp *bar, KTma *plan, Err *e)
{
	KTma t;
	UOp *body[64], *di[T_MAXDIM], *si[T_MAXDIM], *s[3];
	const KBuf *S, *G;
	int sd[T_MAXDIM], gd[T_MAXDIM], ns, ng, j, d, i;
	char head[700], rd[160], rs[160];

	if (bar_of(k, bar, "tma", e) < 0 || kernel_tma_plan(k, dst, src, &t, e) < 0)
		return NULL;
	if (t.nbox > 64)
		return err_set(e, "tma: %d boxes in one statement (at most 64)", t.nbox), NULL;
	S = &k->buf[dst->buf];
	G = &k->buf[src->buf];
	squeezed(k, dst, sd, &ns, e);
	squeezed(k, src, gd, &ng, e);
	for (j = 0; j < t.nbox; j++) {
		UOp *dj = uop_int(k->c, j * t.box[G->ndim - 1]);

		for (d = 0; d < S->ndim; d++)
			di[d] = dst->begin[d];
		for (i = 0; i < ns; i++)
			if (gd[i] == G->ndim - 1)
				di[sd[i]] = uop_add(k->c, dst->begin[sd[i]], dj);
		for (d = 0; d < G->ndim; d++)
			si[d] = d == G->ndim - 1 ? uop_add(k->c, src->begin[d], dj) : src->begin[d];
		s[0] = kernel_index(k, dst->buf, di, S->ndim);
		s[1] = kernel_index(k, src->buf, si, G->ndim);
		s[2] = bar;
		if (!s[0] || !s[1] || !(body[j] = uop_new(k->c, OP_TMA_LOAD, DT_VOID, s, 3, t.swizzle, 0, NULL, t.box,
		                                          (uint32_t)(G->ndim * sizeof(int64_t)))))
			return err_set(e, "tma: out of memory"), NULL;
	}
	kernel_region_str(rd, sizeof rd, k, dst);
	kernel_region_str(rs, sizeof rs, k, src);
	snprintf(head, sizeof head, "tma %s <- %s: %s", rd, rs, t.reason);
	if (plan)
		*plan = t;
	{
		UOp *src2[65];

		src2[0] = kernel_const(k, DT_BOOL, 1);
		for (j = 0; j < t.nbox; j++)
			src2[j + 1] = body[j];
		if (!src2[0])
			return err_set(e, "tma: out of memory"), NULL;
		return uop_new(k->c, OP_IF, DT_VOID, src2, t.nbox + 1, 0, 0, head, NULL, 0);
	}
}

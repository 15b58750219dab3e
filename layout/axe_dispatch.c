/* axe_dispatch.c - dispatch analyses of the Axe paper (Section 3.4): vector width, execution scopes, TMA tiles, Trainium matmul tiles. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
** Vector width: the largest power of two v <= max_elems such that every
** aligned run of v logical elements stays on one coordinate of dst's
** non-memory axes and is consecutive and v-aligned on every memory axis
** that moves (of dst, and of src when given).
*/
static int
run_ok(const AxeLayout *l, int64_t v, Err *e)
{
	AxeAxes ax;
	int64_t size = axe_size(l), x, k, b0[AXE_AXES], b[AXE_AXES];
	int i, mem = -1;

	axe_axes(l, &ax);
	for (x = 0; x < size; x += v) {
		axe_base_into(l, x, &ax, b0);
		mem = -1;
		for (k = 1; k < v; k++) {
			axe_base_into(l, x + k, &ax, b);
			for (i = 0; i < ax.n; i++) {
				int64_t d = b[i] - b0[i];
				if (axe_axis_kind(ax.name[i]) != AXE_MEMORY) {
					if (d)
						return 0;
				} else if (d) {
					if ((mem >= 0 && mem != i) || d != k)
						return 0;
					mem = i;
				}
			}
		}
		if (v > 1 && mem < 0)
			return 0;
		if (mem >= 0 && ((b0[mem] % v) + v) % v != 0)
			return 0;
	}
	(void)e;
	return 1;
}

int
axe_vector_width(const AxeLayout *src, const AxeLayout *dst, int64_t max_elems, int64_t *width, Err *e)
{
	int64_t v, size = axe_size(dst);

	if (axe_check(dst, e) < 0 || (src && axe_check(src, e) < 0))
		return -1;
	if (src && axe_size(src) != size)
		return err_set(e, "vector_width: sizes %lld and %lld differ", (long long)axe_size(src), (long long)size);
	if (size > AXE_ENUM_LIMIT)
		return err_set(e, "vector_width: %lld elements are too many to enumerate (check_elems limit; "
		               "raise it with tessel.limits{check_elems = N})", (long long)size);
	if (max_elems < 1)
		return err_set(e, "vector_width: max_elems %lld is not >= 1", (long long)max_elems);
	for (v = 1; v * 2 <= max_elems && size % (v * 2) == 0; v *= 2)
		;
	for (; v > 1; v /= 2)
		if (run_ok(dst, v, e) && (!src || run_ok(src, v, e)))
			break;
	*width = v;
	return 0;
}

/*
** Scopes and thread subsets
*/
int
axe_scope(const char *name, int64_t threads, AxeLayout *out, Err *e)
{
	AxeIter it[2];

	if (strcmp(name, "thread") == 0) {
		it[0] = axe_mkiter(1, 1, "lane");
		return axe_make(out, it, 1, NULL, 0, NULL, 0, e);
	}
	if (strcmp(name, "warp") == 0) {
		it[0] = axe_mkiter(32, 1, "lane");
		return axe_make(out, it, 1, NULL, 0, NULL, 0, e);
	}
	if (strcmp(name, "warpgroup") == 0)
		threads = 128;
	else if (strcmp(name, "cta") != 0)
		return err_set(e, "scope: '%s' is not thread, warp, warpgroup or cta", name);
	if (threads < 32 || threads % 32 != 0 || threads > 1024)
		return err_set(e, "scope: a cta of %lld threads is not a multiple of 32 in 32..1024", (long long)threads);
	it[0] = axe_mkiter(threads / 32, 1, "warp");
	it[1] = axe_mkiter(32, 1, "lane");
	return axe_make(out, it, 2, NULL, 0, NULL, 0, e);
}

int
axe_warps(int64_t lo, int64_t hi, AxeLayout *out, Err *e)
{
	AxeIter it[2];
	AxeOff o;

	if (lo < 0 || hi <= lo || hi > 32)
		return err_set(e, "warps: [%lld, %lld) is not a nonempty range of warps 0..32", (long long)lo, (long long)hi);
	it[0] = axe_mkiter(hi - lo, 1, "warp");
	it[1] = axe_mkiter(32, 1, "lane");
	axe_setname(o.axis, "warp");
	o.v = lo;
	return axe_make(out, it, 2, NULL, 0, &o, lo ? 1 : 0, e);
}

/*
** TMA
*/
static int
on_m_only(const AxeLayout *l, const char *what, Err *e)
{
	char s1[FMT_MAX];
	int i;

	if (l->nr)
		return err_set(e, "tma: the %s layout %s has replicas", what, axe_fmt(s1, l));
	for (i = 0; i < l->nd; i++)
		if (strcmp(l->d[i].axis, "m") != 0)
			return err_set(e, "tma: the %s layout %s uses axis %s; it must be on m", what, axe_fmt(s1, l),
			               l->d[i].axis);
	return 0;
}

int
axe_tma(const AxeLayout *global, const AxeShape *gs, const AxeLayout *smem, const AxeShape *ss,
        int elem_bytes, int swizzle, AxeTma *out, Err *e)
{
	AxeLayout atom, g;
	AxeShape as;
	AxeIter it[2];
	int64_t w, rows, where;
	int r = ss->n, i, seps[AXE_RANK + 1];
	char s1[FMT_MAX];

	memset(out, 0, sizeof *out);
	if (axe_check_shape(gs, "tma", e) < 0 || axe_check_shape(ss, "tma", e) < 0)
		return -1;
	if (gs->n != r || r > 5)
		return err_set(e, "tma: the global shape and the shared shape need the same rank, at most 5");
	if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8)
		return err_set(e, "tma: element size %d is not 1, 2, 4 or 8 bytes", elem_bytes);
	if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
		return err_set(e, "tma: swizzle %d is not 0, 32, 64 or 128 bytes", swizzle);
	if (on_m_only(global, "global", e) < 0 || on_m_only(smem, "shared", e) < 0)
		return -1;
	/* the atom: 8 rows of swizzle bytes (the swizzle itself is a separate XOR) */
	w = swizzle ? swizzle / elem_bytes : ss->v[r - 1];
	if (w > 256)
		w = 256;
	rows = r >= 2 ? (ss->v[r - 2] < 8 ? ss->v[r - 2] : 8) : 1;
	if (!swizzle && r >= 2)
		rows = ss->v[r - 2] < 256 ? ss->v[r - 2] : 256;
	as.n = r;
	for (i = 0; i < r; i++)
		as.v[i] = 1;
	as.v[r - 1] = w;
	if (r >= 2)
		as.v[r - 2] = rows;
	it[0] = axe_mkiter(rows, w, "m");
	it[1] = axe_mkiter(w, 1, "m");
	if (axe_make(&atom, r >= 2 ? it : it + 1, r >= 2 ? 2 : 1, NULL, 0, NULL, 0, e) < 0)
		return -1;
	if (w * elem_bytes % 16 != 0)
		return err_set(e, "tma: the box's inner extent %lld x %d bytes is not a multiple of 16 bytes",
		               (long long)w, elem_bytes);
	if (axe_tile_of(smem, ss, &atom, &as, &out->outer, &where, e) < 0) {
		Err t = *e;
		return err_set(e, "tma: shared memory is no tile of the %d-byte swizzle atom %s: %s", swizzle,
		               axe_fmt(s1, &atom), t.msg);
	}
	out->outer_shape.n = r;
	for (i = 0; i < r; i++)
		out->outer_shape.v[i] = ss->v[i] / as.v[i];
	out->atom_shape = as;
	/* the tensor map: one iter per global dim, unit stride innermost */
	if (axe_group(global, gs, &g, seps, e) < 0) {
		Err t = *e;
		return err_set(e, "tma: the global layout: %s", t.msg);
	}
	for (i = 0; i < r; i++) {
		int d = r - 1 - i;  /* innermost first */
		int nb = seps[d + 1] - seps[d];
		int64_t stride = nb ? g.d[seps[d]].s : 0;
		if (nb > 1)
			return err_set(e, "tma: global dim %d (extent %lld) is not one strided run: %s", d,
			               (long long)gs->v[d], axe_fmt(s1, global));
		if (nb == 1 && stride < 0)
			return err_set(e, "tma: global dim %d has a negative stride", d);
		if (i == 0 && nb == 1 && stride != 1)
			return err_set(e, "tma: the innermost global dim has stride %lld; TMA needs 1", (long long)stride);
		if (gs->v[d] > ((int64_t)1 << 32))
			return err_set(e, "tma: global dim %d is larger than 2^32", d);
		out->global_dim[i] = gs->v[d];
		if (i > 0) {
			int64_t b = stride * elem_bytes;
			if (nb == 0)
				b = out->global_stride[i - 1] ? out->global_stride[i - 1] : (int64_t)elem_bytes * gs->v[r - 1];
			if (b % 16 != 0 || b >= ((int64_t)1 << 40))
				return err_set(e, "tma: global dim %d has a stride of %lld bytes; TMA needs a multiple "
				               "of 16 below 2^40", d, (long long)b);
			out->global_stride[i - 1] = b;
		}
		out->box_dim[i] = as.v[d];
		out->elem_stride[i] = 1;
		if (as.v[d] > 256)
			return err_set(e, "tma: box dim %d is %lld, more than 256", d, (long long)as.v[d]);
		if (ss->v[d] > gs->v[d])
			return err_set(e, "tma: shared dim %d (%lld) is larger than global (%lld)", d,
			               (long long)ss->v[d], (long long)gs->v[d]);
	}
	out->rank = r;
	out->swizzle = swizzle;
	return 0;
}

/*
** Trainium matmul dispatch (Appendix H)
*/

/* The common refinement of two iter lists over the same logical extent: both
** split (never reordered) at the union of their digit boundaries, so that
** piece i of one covers the same logical digit as piece i of the other. */
static int
refine(const AxeIter *a, int na, const AxeIter *b, int nb, AxeIter *ra, AxeIter *rb, int *n, Err *e)
{
	int i = na - 1, j = nb - 1, m = 0, k;
	int64_t ea = i >= 0 ? a[i].e : 1, eb = j >= 0 ? b[j].e : 1, sa = i >= 0 ? a[i].s : 0, sb = j >= 0 ? b[j].s : 0;
	AxeIter ta[AXE_ITERS * 2], tb[AXE_ITERS * 2];

	while (i >= 0 && j >= 0) {
		int64_t step;
		if (ea % eb != 0 && eb % ea != 0)
			return err_set(e, "the two layouts split a logical dimension at incompatible places (%lld vs %lld)",
			               (long long)ea, (long long)eb);
		step = ea < eb ? ea : eb;
		if (m >= AXE_ITERS * 2)
			return err_set(e, "too many pieces");
		ta[m] = axe_mkiter(step, sa, a[i].axis);
		tb[m] = axe_mkiter(step, sb, b[j].axis);
		m++;
		ea /= step;
		eb /= step;
		sa *= step;
		sb *= step;
		if (ea == 1 && --i >= 0) {
			ea = a[i].e;
			sa = a[i].s;
		}
		if (eb == 1 && --j >= 0) {
			eb = b[j].e;
			sb = b[j].s;
		}
	}
	if (m > AXE_ITERS)
		return err_set(e, "more than %d pieces", AXE_ITERS);
	for (k = 0; k < m; k++) {
		ra[k] = ta[m - 1 - k];
		rb[k] = tb[m - 1 - k];
	}
	*n = m;
	return 0;
}

/* Cap the product of the kept pieces at max, outermost kept piece first; the
** rest goes to loops (a piece may split: its inner part is kept). */
static int64_t
cap_kept(AxeIter *p, int n, int *keep, int64_t max, int64_t *cut)
{
	int64_t prod = 1;
	int i;

	for (i = 0; i < n; i++)
		cut[i] = 1;
	for (i = n - 1; i >= 0; i--) {
		if (!keep[i])
			continue;
		if (prod * p[i].e <= max) {
			prod *= p[i].e;
			continue;
		}
		{
			int64_t d = max / prod;
			while (d > 1 && p[i].e % d != 0)
				d--;
			cut[i] = p[i].e / d;        /* outer part of the piece becomes a loop */
			prod *= d;
			keep[i] = d > 1;
		}
		for (i--; i >= 0; i--)
			keep[i] = 0;
		break;
	}
	return prod;
}

static void
loops_of(const AxeIter *p, int n, const int *keep, const int64_t *cut, AxeShape *out)
{
	int i;

	out->n = 0;
	for (i = 0; i < n && out->n < AXE_RANK; i++) {
		if (!keep[i])
			out->v[out->n++] = p[i].e;
		else if (cut[i] > 1)
			out->v[out->n++] = cut[i];
	}
}

/* Among the kept pieces, the chain of x's iters (on axis ax) that merges into one
** iter and holds x's smallest |stride| on that axis; keep is narrowed to it. */
static void
run_through_smallest(const AxeIter *x, int n, int *keep)
{
	int i, best = -1, cur;
	int in[AXE_ITERS] = {0};

	for (i = 0; i < n; i++)
		if (keep[i] && (best < 0 || llabs(x[i].s) < llabs(x[best].s)))
			best = i;
	if (best < 0)
		return;
	in[best] = 1;
	cur = best;
	for (i = best - 1; i >= 0; i--) {
		if (!keep[i])
			continue;
		if (x[i].s != x[cur].e * x[cur].s)
			break;
		in[i] = 1;
		cur = i;
	}
	for (i = 0; i < n; i++)
		keep[i] = in[i];
}

static int64_t
kept_prod(const AxeIter *p, int n, const int *keep)
{
	int64_t prod = 1;
	int i;

	for (i = 0; i < n; i++)
		if (keep[i])
			prod *= p[i].e;
	return prod;
}

int
axe_trn_matmul(const AxeLayout *a, int64_t K, int64_t M, const AxeLayout *b, int64_t N,
               const AxeLayout *c, int64_t max_m, int64_t max_n, int64_t max_k, AxeMatmul *out, Err *e)
{
	AxeLayout ga, gb, gc;
	AxeShape sa = { 2, { K, M } }, sb = { 2, { K, N } }, sc = { 2, { M, N } };
	int pa[3], pb[3], pc[3], n, i, keep[AXE_ITERS], keep2[AXE_ITERS];
	AxeIter x[AXE_ITERS], y[AXE_ITERS];
	int64_t cut[AXE_ITERS];
	Err t;

	memset(out, 0, sizeof *out);
	if (max_m < 1 || max_n < 1 || max_k < 1)
		return err_set(e, "trn_matmul: limits must be >= 1");
	if (axe_group(a, &sa, &ga, pa, &t) < 0)
		return err_set(e, "trn_matmul: A[K,M]: %s", t.msg);
	if (axe_group(b, &sb, &gb, pb, &t) < 0)
		return err_set(e, "trn_matmul: B[K,N]: %s", t.msg);
	if (axe_group(c, &sc, &gc, pc, &t) < 0)
		return err_set(e, "trn_matmul: C[M,N]: %s", t.msg);
	/* K: pieces on P in both A and B with the same partition stride */
	if (refine(ga.d, pa[1], gb.d, pb[1], x, y, &n, &t) < 0)
		return err_set(e, "trn_matmul: K: %s", t.msg);
	for (i = 0; i < n; i++)
		keep[i] = strcmp(x[i].axis, "P") == 0 && strcmp(y[i].axis, "P") == 0 && x[i].s == y[i].s;
	out->k = cap_kept(x, n, keep, max_k, cut);
	loops_of(x, n, keep, cut, &out->k_loops);
	/* M: on F in A, on P in C, one run of A through A's fastest F iter */
	if (refine(ga.d + pa[1], pa[2] - pa[1], gc.d, pc[1], x, y, &n, &t) < 0)
		return err_set(e, "trn_matmul: M: %s", t.msg);
	for (i = 0; i < n; i++)
		keep[i] = strcmp(x[i].axis, "F") == 0 && strcmp(y[i].axis, "P") == 0;
	run_through_smallest(x, n, keep);
	out->m = cap_kept(x, n, keep, max_m, cut);
	loops_of(x, n, keep, cut, &out->m_loops);
	/* N: on F in B and in C, one run of B or of C, whichever is larger */
	if (refine(gb.d + pb[1], pb[2] - pb[1], gc.d + pc[1], pc[2] - pc[1], x, y, &n, &t) < 0)
		return err_set(e, "trn_matmul: N: %s", t.msg);
	for (i = 0; i < n; i++)
		keep[i] = keep2[i] = strcmp(x[i].axis, "F") == 0 && strcmp(y[i].axis, "F") == 0;
	run_through_smallest(x, n, keep);
	run_through_smallest(y, n, keep2);
	if (kept_prod(x, n, keep2) > kept_prod(x, n, keep))
		memcpy(keep, keep2, sizeof keep);
	out->n = cap_kept(x, n, keep, max_n, cut);
	loops_of(x, n, keep, cut, &out->n_loops);
	if (out->k == 1 || out->m == 1 || out->n == 1)
		return err_set(e, "trn_matmul: no legal instruction: K on P in A and B gives %lld, M on F in A "
		               "and P in C gives %lld, N on F in B and C gives %lld", (long long)out->k,
		               (long long)out->m, (long long)out->n);
	return 0;
}


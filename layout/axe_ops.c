/* axe_ops.c - the Axe operators of the paper's appendices: canonicalize, equivalence, group, tile, tile_of, slice, direct sum. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
** Canonicalization (Appendix A)
*/
static int
iter_cmp(const void *a, const void *b)
{
	const AxeIter *x = a, *y = b;
	int c = strcmp(x->axis, y->axis);

	if (c)
		return c;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->e < y->e ? -1 : x->e > y->e;
}

static int
off_cmp(const void *a, const void *b)
{
	return strcmp(((const AxeOff *)a)->axis, ((const AxeOff *)b)->axis);
}

/* D0 and D1: drop unit iters, merge (e1, e2*s2) (e2, s2) on one axis into (e1*e2, s2). */
static void
canon_d(AxeLayout *l)
{
	AxeIter out[AXE_ITERS];
	int n = 0, i;

	for (i = 0; i < l->nd; i++) {
		if (l->d[i].e == 1)
			continue;
		out[n++] = l->d[i];
		while (n >= 2 && strcmp(out[n - 2].axis, out[n - 1].axis) == 0 &&
		       out[n - 2].s == out[n - 1].e * out[n - 1].s) {
			out[n - 2].e *= out[n - 1].e;
			out[n - 2].s = out[n - 1].s;
			n--;
		}
	}
	memcpy(l->d, out, (size_t)n * sizeof out[0]);
	l->nd = n;
}

/* C0, C1, C2 on R; then sort. Returns -1 only on an offset overflow (cannot
** happen for a checked layout, whose reach is bounded). */
static int
canon_r(AxeLayout *l, Err *e)
{
	int i, j, n = 0, changed;

	for (i = 0; i < l->nr; i++) {
		AxeIter it = l->r[i];
		if (it.e == 1)
			continue;                                   /* C0 */
		if (it.s < 0) {                                 /* C1 */
			if (axe_add_offset(l, it.axis, (it.e - 1) * it.s, e) < 0)
				return -1;
			it.s = -it.s;
		}
		l->r[n++] = it;
	}
	l->nr = n;
	do {                                                    /* C2 to a fixpoint */
		changed = 0;
		qsort(l->r, (size_t)l->nr, sizeof l->r[0], iter_cmp);
		for (i = 0; i < l->nr && !changed; i++)
			for (j = 0; j < l->nr && !changed; j++) {
				AxeIter *a = &l->r[i], *b = &l->r[j];
				int64_t k;
				if (i == j || strcmp(a->axis, b->axis) != 0 || b->s % a->s != 0)
					continue;
				k = b->s / a->s;
				if (k > a->e || (k == 1 && j < i))
					continue;
				a->e = a->e + k * (b->e - 1);
				memmove(b, b + 1, (size_t)(l->nr - j - 1) * sizeof *b);
				l->nr--;
				changed = 1;
			}
	} while (changed);
	qsort(l->r, (size_t)l->nr, sizeof l->r[0], iter_cmp);
	return 0;
}

/* The gap condition on a saturated, sorted R: r_i * rho_i <= rho_{i+1} per axis. */
static int
gap_condition(const AxeLayout *l)
{
	int i;

	for (i = 0; i + 1 < l->nr; i++)
		if (strcmp(l->r[i].axis, l->r[i + 1].axis) == 0 && l->r[i].e * l->r[i].s > l->r[i + 1].s)
			return 0;
	return 1;
}

int
axe_canonicalize(const AxeLayout *l, AxeLayout *out, int *gc, Err *e)
{
	AxeLayout c = *l;
	int i, n = 0;

	if (axe_check(l, e) < 0)
		return -1;
	canon_d(&c);
	if (canon_r(&c, e) < 0)
		return -1;
	for (i = 0; i < c.no; i++)
		if (c.o[i].v != 0)
			c.o[n++] = c.o[i];
	c.no = n;
	qsort(c.o, (size_t)c.no, sizeof c.o[0], off_cmp);
	if (gc)
		*gc = gap_condition(&c);
	*out = c;
	return 0;
}

int
axe_equal(const AxeLayout *a, const AxeLayout *b)
{
	int i;

	if (a->nd != b->nd || a->nr != b->nr || a->no != b->no)
		return 0;
	for (i = 0; i < a->nd; i++)
		if (a->d[i].e != b->d[i].e || a->d[i].s != b->d[i].s || strcmp(a->d[i].axis, b->d[i].axis))
			return 0;
	for (i = 0; i < a->nr; i++)
		if (a->r[i].e != b->r[i].e || a->r[i].s != b->r[i].s || strcmp(a->r[i].axis, b->r[i].axis))
			return 0;
	for (i = 0; i < a->no; i++)
		if (a->o[i].v != b->o[i].v || strcmp(a->o[i].axis, b->o[i].axis))
			return 0;
	return 1;
}

/* Rows of na values compared lexicographically; heapsort, so no comparator state. */
static int
row_cmp(const int64_t *x, const int64_t *y, int na)
{
	int i;

	for (i = 0; i < na; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

static void
row_swap(int64_t *a, int64_t *b, int na)
{
	int i;

	for (i = 0; i < na; i++) {
		int64_t t = a[i];
		a[i] = b[i];
		b[i] = t;
	}
}

static void
sift(int64_t *r, int64_t i, int64_t n, int na)
{
	for (;;) {
		int64_t c = 2 * i + 1;
		if (c >= n)
			return;
		if (c + 1 < n && row_cmp(r + (c + 1) * na, r + c * na, na) > 0)
			c++;
		if (row_cmp(r + i * na, r + c * na, na) >= 0)
			return;
		row_swap(r + i * na, r + c * na, na);
		i = c;
	}
}

/* Sort n rows and drop duplicates; returns the number left. */
int64_t
axe_sort_rows(int64_t *r, int64_t n, int na)
{
	int64_t i, k = 0;

	for (i = n / 2 - 1; i >= 0; i--)
		sift(r, i, n, na);
	for (i = n - 1; i > 0; i--) {
		row_swap(r, r + i * na, na);
		sift(r, 0, i, na);
	}
	for (i = 0; i < n; i++)
		if (k == 0 || row_cmp(r + (k - 1) * na, r + i * na, na) != 0) {
			if (k != i)
				memmove(r + k * na, r + i * na, (size_t)na * sizeof *r);
			k++;
		}
	return k;
}

/*
** The coordinate set of element x on axes ax: rows of ax->n values, sorted
** and without duplicates (L(x) is a set). buf holds nrep rows.
*/
int64_t
axe_fiber(const AxeLayout *l, int64_t x, const AxeAxes *ax, int64_t *buf)
{
	int64_t nrep = axe_nreplicas(l), j, k = 0, base[AXE_AXES];
	int na = ax->n;

	axe_base_into(l, x, ax, base);
	for (j = 0; j < nrep; j++) {
		memcpy(buf + j * na, base, (size_t)na * sizeof base[0]);
		axe_replica_into(l, j, ax, buf + j * na);
	}
	(void)k;
	return axe_sort_rows(buf, nrep, na);
}

/* Enumerate both maps; *where = the first differing element or -1. */
static int
compare_maps(const AxeLayout *a, const AxeLayout *b, int64_t *where, Err *e)
{
	AxeAxes ax;
	int64_t size = axe_size(a), na = axe_nreplicas(a), nb = axe_nreplicas(b), x, ka, kb;
	int64_t *fa, *fb;
	int i;

	*where = -1;
	axe_axes(a, &ax);
	{
		AxeAxes bx;
		axe_axes(b, &bx);
		for (i = 0; i < bx.n; i++)
			if (axe_axes_add(&ax, bx.name[i], e) < 0)
				return -1;
	}
	if (size > AXE_ENUM_LIMIT / (na > nb ? na : nb))
		return err_set(e, "%lld elements x %lld replicas are too many to enumerate (check_elems "
		               "limit; raise it with tessel.limits{check_elems = N})", (long long)size,
		               (long long)(na > nb ? na : nb));
	fa = malloc((size_t)na * AXE_AXES * sizeof *fa);
	fb = malloc((size_t)nb * AXE_AXES * sizeof *fb);
	if (!fa || !fb) {
		free(fa);
		free(fb);
		return err_set(e, "out of memory");
	}
	for (x = 0; x < size; x++) {
		if ((x & 0xffff) == 0xffff && limits_poll(e) < 0) {
			free(fa);
			free(fb);
			return -1;
		}
		ka = axe_fiber(a, x, &ax, fa);
		kb = axe_fiber(b, x, &ax, fb);
		if (ka != kb || memcmp(fa, fb, (size_t)(ka * ax.n) * sizeof *fa) != 0) {
			*where = x;
			break;
		}
	}
	free(fa);
	free(fb);
	return 0;
}

int
axe_equivalent(const AxeLayout *a, const AxeLayout *b, int *same, int64_t *where, Err *e)
{
	AxeLayout ca, cb;
	int ga, gb;
	Err tmp;

	*where = -1;
	if (axe_canonicalize(a, &ca, &ga, e) < 0 || axe_canonicalize(b, &cb, &gb, e) < 0)
		return -1;
	if (axe_size(a) != axe_size(b)) {
		*same = 0;
		return 0;
	}
	if (axe_equal(&ca, &cb)) {
		*same = 1;
		return 0;
	}
	/* Different canonical forms: under GC the maps differ (Theorem A.14);
	** enumeration names the element, and decides when GC fails. */
	if (compare_maps(&ca, &cb, where, &tmp) == 0) {
		*same = *where < 0;
		return 0;
	}
	if (limits_poll(e) < 0)   /* interrupted: no answer, not the gap condition's */
		return -1;
	if (ga && gb) {
		*same = 0;
		return 0;
	}
	return err_set(e, "equivalent: the gap condition fails and %s", tmp.msg);
}

/*
** Grouping (Appendix B): split iters, never reorder them, so that consecutive
** blocks have the shape's extents; a split is (e1*e2, s) -> (e1, e2*s), (e2, s).
*/
int
axe_group(const AxeLayout *l, const AxeShape *sh, AxeLayout *out, int *seps, Err *e)
{
	AxeLayout c;
	char a[FMT_MAX], b[FMT_MAX];
	int i, k = 0, n = 0;
	int64_t acc = 1;

	if (axe_check(l, e) < 0 || axe_check_shape(sh, "group", e) < 0)
		return -1;
	if (axe_shape_size(sh) != axe_size(l))
		return err_set(e, "group: %s has size %lld, shape %s has %lld", axe_fmt(a, l),
		               (long long)axe_size(l), axe_shape_fmt(b, sh), (long long)axe_shape_size(sh));
	c = *l;
	canon_d(&c);
	seps[0] = 0;
	for (i = 0; i < c.nd; i++) {
		int64_t ext = c.d[i].e;
		while (ext > 1) {
			int64_t need;
			while (k < sh->n && acc == sh->v[k]) {    /* close finished blocks */
				seps[++k] = n;
				acc = 1;
			}
			if (k >= sh->n)
				return err_set(e, "group: internal error: iters left after the last mode");
			need = sh->v[k] / acc;
			if (n >= AXE_ITERS)
				return err_set(e, "group: more than %d iters", AXE_ITERS);
			if (need % ext == 0) {
				out->d[n++] = axe_mkiter(ext, c.d[i].s, c.d[i].axis);
				acc *= ext;
				ext = 1;
			} else if (ext % need == 0) {
				out->d[n++] = axe_mkiter(need, c.d[i].s * (ext / need), c.d[i].axis);
				acc *= need;
				ext /= need;
			} else {
				return err_set(e, "group: %s cannot be grouped by %s: mode %d (extent %lld) "
				               "needs a factor %lld more, but iter %lld:%lld@%s neither divides "
				               "it nor splits by it", axe_fmt(a, l), axe_shape_fmt(b, sh), k,
				               (long long)sh->v[k], (long long)need, (long long)c.d[i].e,
				               (long long)c.d[i].s, c.d[i].axis);
			}
		}
	}
	while (k < sh->n) {
		seps[++k] = n;
		acc = 1;
	}
	out->nd = n;
	memcpy(out->r, c.r, sizeof c.r);
	memcpy(out->o, c.o, sizeof c.o);
	out->nr = c.nr;
	out->no = c.no;
	return 0;
}

/*
** Tiling (Appendix C)
*/
static int
scale_iter(AxeIter *it, const AxeLayout *inner, Err *e)
{
	return ck_mul(it->s, axe_span(inner, it->axis), &it->s, e);
}

static int
check_pair(const AxeShape *sa, const AxeShape *sb, const char *op, AxeShape *prod, Err *e)
{
	int i;

	if (axe_check_shape(sa, op, e) < 0 || axe_check_shape(sb, op, e) < 0)
		return -1;
	if (sa->n != sb->n)
		return err_set(e, "%s: shapes of rank %d and %d; both need the same rank", op, sa->n, sb->n);
	prod->n = sa->n;
	for (i = 0; i < sa->n; i++)
		if (ck_mul(sa->v[i], sb->v[i], &prod->v[i], e) < 0)
			return -1;
	return axe_check_shape(prod, op, e);
}

/* Interleave blocks of a and b per rank; when scale, a is scaled by b's span. */
static int
interleave(const AxeLayout *a, const AxeShape *sa, const AxeLayout *b, const AxeShape *sb,
           int scale, const char *op, AxeLayout *out, Err *e)
{
	AxeLayout ga, gb, o;
	AxeShape prod;
	int pa[AXE_RANK + 1], pb[AXE_RANK + 1], i, k, n = 0;

	if (check_pair(sa, sb, op, &prod, e) < 0)
		return -1;
	if (axe_group(a, sa, &ga, pa, e) < 0 || axe_group(b, sb, &gb, pb, e) < 0) {
		Err t = *e;
		return err_set(e, "%s: %s", op, t.msg);
	}
	memset(&o, 0, sizeof o);
	for (i = 0; i < sa->n; i++) {
		for (k = pa[i]; k < pa[i + 1]; k++) {
			if (n >= AXE_ITERS)
				return err_set(e, "%s: more than %d iters", op, AXE_ITERS);
			o.d[n] = ga.d[k];
			if (scale && scale_iter(&o.d[n], b, e) < 0)
				return -1;
			n++;
		}
		for (k = pb[i]; k < pb[i + 1]; k++) {
			if (n >= AXE_ITERS)
				return err_set(e, "%s: more than %d iters", op, AXE_ITERS);
			o.d[n++] = gb.d[k];
		}
	}
	o.nd = n;
	if (a->nr + b->nr > AXE_ITERS)
		return err_set(e, "%s: more than %d replica iters", op, AXE_ITERS);
	for (i = 0; i < a->nr; i++) {
		o.r[o.nr] = a->r[i];
		if (scale && scale_iter(&o.r[o.nr], b, e) < 0)
			return -1;
		o.nr++;
	}
	for (i = 0; i < b->nr; i++)
		o.r[o.nr++] = b->r[i];
	for (i = 0; i < a->no; i++) {
		int64_t v = a->o[i].v;
		if (scale && ck_mul(v, axe_span(b, a->o[i].axis), &v, e) < 0)
			return -1;
		if (axe_add_offset(&o, a->o[i].axis, v, e) < 0)
			return -1;
	}
	for (i = 0; i < b->no; i++)
		if (axe_add_offset(&o, b->o[i].axis, b->o[i].v, e) < 0)
			return -1;
	if (axe_check(&o, e) < 0) {
		Err t = *e;
		return err_set(e, "%s: the result is not a valid layout: %s", op, t.msg);
	}
	*out = o;
	return 0;
}

int
axe_tile(const AxeLayout *a, const AxeShape *sa, const AxeLayout *b, const AxeShape *sb,
         AxeLayout *out, Err *e)
{
	return interleave(a, sa, b, sb, 1, "tile", out, e);
}

int
axe_direct_sum(const AxeLayout *a, const AxeShape *sa, const AxeLayout *b, const AxeShape *sb,
               AxeLayout *out, Err *e)
{
	return interleave(a, sa, b, sb, 0, "direct_sum", out, e);
}

/* A coordinate's notation "(1,2)" for messages. */
static const char *
cfmt(char *dst, const AxeShape *sh, int64_t x)
{
	int64_t crd[AXE_RANK];
	int i, n = 0;

	axe_unflatten(sh, x, crd);
	n += snprintf(dst + n, FMT_MAX - n, "(");
	for (i = 0; i < sh->n && n < FMT_MAX - 24; i++)
		n += snprintf(dst + n, FMT_MAX - n, "%s%lld", i ? "," : "", (long long)crd[i]);
	snprintf(dst + n, FMT_MAX - n, ")");
	return dst;
}

static const char *
pfmt(char *dst, const AxeAxes *ax, const int64_t *v)
{
	int i, n = 0;

	dst[0] = 0;
	for (i = 0; i < ax->n && n < FMT_MAX - 40; i++)
		n += snprintf(dst + n, FMT_MAX - n, "%s%s=%lld", i ? " " : "", ax->name[i], (long long)v[i]);
	if (ax->n == 0)
		snprintf(dst, FMT_MAX, "the origin");
	return dst;
}

/* "element (1,2) maps to lane=3 m=6 but B predicts m=9" for a differing element x. */
static int
disagree(const char *op, const AxeLayout *l, const AxeShape *sl, const AxeLayout *t, int64_t x,
         const char *what, Err *e)
{
	AxeAxes ax, tx;
	int64_t vl[AXE_AXES], vt[AXE_AXES];
	char a[FMT_MAX], c[FMT_MAX], p1[FMT_MAX], p2[FMT_MAX];
	int i;

	axe_axes(l, &ax);
	axe_axes(t, &tx);
	for (i = 0; i < tx.n; i++)
		if (axe_axes_add(&ax, tx.name[i], e) < 0)
			return -1;
	axe_base_into(l, x, &ax, vl);
	axe_base_into(t, x, &ax, vt);
	return err_set(e, "%s: %s is not %s: element %s maps to %s but %s", op, axe_fmt(a, l), what,
	               cfmt(c, sl, x), pfmt(p1, &ax, vl), pfmt(p2, &ax, vt));
}

/*
** Why L is no tile of B, by element: in a tile L = C (x) B every tile of L is
** B shifted by the image of its origin, and the origins are C scaled by B's
** span. The first element (row-major) that breaks either is named; 0 when
** none is found (the structural reason stands), -1 with the message set.
*/
static int
diagnose(const AxeLayout *ul, const AxeShape *sl, const AxeLayout *ub, const AxeShape *sb, Err *e)
{
	/* canonical forms: with positive replica strides the base coordinate D(x) + O
	** is the fiber's minimum (Lemma A.13), whatever the representation */
	AxeLayout cl, cb, *l = &cl, *b = &cb;
	AxeAxes ax, bx;
	char s1[FMT_MAX], s2[FMT_MAX], c1[FMT_MAX], p1[FMT_MAX], p2[FMT_MAX];
	int64_t size = axe_size(ul), x, crd[AXE_RANK], ci[AXE_RANK], co[AXE_RANK], xo, xi;
	int64_t vl[AXE_AXES], vo[AXE_AXES], vb[AXE_AXES], vb0[AXE_AXES], want[AXE_AXES];
	int i, k;

	if (size > AXE_ENUM_LIMIT || axe_canonicalize(ul, &cl, NULL, NULL) < 0 ||
	    axe_canonicalize(ub, &cb, NULL, NULL) < 0)
		return 0;
	axe_axes(l, &ax);
	axe_axes(b, &bx);
	for (i = 0; i < bx.n; i++)
		if (axe_axes_add(&ax, bx.name[i], NULL) < 0)
			return 0;
	axe_base_into(b, 0, &ax, vb0);
	for (x = 0; x < size; x++) {
		int64_t origin[AXE_RANK];
		axe_unflatten(sl, x, crd);
		for (i = 0; i < sl->n; i++) {
			co[i] = crd[i] / sb->v[i];
			ci[i] = crd[i] % sb->v[i];
			origin[i] = co[i] * sb->v[i];
		}
		axe_flatten(sb, ci, &xi, NULL);
		axe_flatten(sl, origin, &xo, NULL);
		axe_base_into(l, x, &ax, vl);
		axe_base_into(l, xo, &ax, vo);
		axe_base_into(b, xi, &ax, vb);
		for (k = 0; k < ax.n; k++)
			want[k] = vo[k] + vb[k] - vb0[k];
		for (k = 0; k < ax.n; k++)
			if (want[k] != vl[k])
				return err_set(e, "tile_of: %s is not a tile of %s: element %s maps to %s but the atom "
				               "predicts %s (from its tile's origin)", axe_fmt(s1, ul), axe_fmt(s2, ub),
				               cfmt(c1, sl, x), pfmt(p1, &ax, vl), pfmt(p2, &ax, want));
		if (x == xo)  /* a tile origin: minus B(0), a multiple of B's span on every axis */
			for (k = 0; k < ax.n; k++) {
				int64_t sp = axe_span(b, ax.name[k]), d = vl[k] - vb0[k];
				if (d % sp != 0)
					return err_set(e, "tile_of: %s is not a tile of %s: the tile at %s starts at "
					               "%s=%lld, but tiles start at multiples of the atom's span %lld "
					               "(plus the atom's own origin %lld)", axe_fmt(s1, ul), axe_fmt(s2, ub),
					               cfmt(c1, sl, x), ax.name[k], (long long)vl[k], (long long)sp,
					               (long long)vb0[k]);
			}
	}
	(void)co;
	return 0;
}

/*
** Tile-of (Appendix D). Group L by the interleaved shape (sc_0, sb_0, sc_1,
** sb_1, ...): at each rank the scan matches B's block against the iters of
** L's block left to right; the iters before the match are the span-scaled
** iters of C. A Kronecker tile puts C's digits before B's in every block, so
** the match must be the block's tail. The candidate C is then checked by
** building C (x) B and comparing it with L, which names the first element
** where they disagree.
*/
int
axe_tile_of(const AxeLayout *l, const AxeShape *sl, const AxeLayout *b, const AxeShape *sb,
            AxeLayout *out, int64_t *where, Err *e)
{
	AxeLayout cl, cb, gl, gb, c, t;
	AxeShape sc, inter;
	char s1[FMT_MAX], s2[FMT_MAX], s3[FMT_MAX], s4[FMT_MAX];
	int pl[2 * AXE_RANK + 1], pb[AXE_RANK + 1], i, k, same, used[AXE_ITERS] = {0};
	int64_t w;

	*where = -1;
	if (axe_canonicalize(l, &cl, NULL, e) < 0 || axe_canonicalize(b, &cb, NULL, e) < 0 ||
	    axe_check_shape(sl, "tile_of", e) < 0 || axe_check_shape(sb, "tile_of", e) < 0)
		return -1;
	if (sl->n != sb->n)
		return err_set(e, "tile_of: shapes %s and %s differ in rank", axe_shape_fmt(s1, sl), axe_shape_fmt(s2, sb));
	if (2 * sl->n > AXE_RANK)
		return err_set(e, "tile_of: rank %d is more than %d", sl->n, AXE_RANK / 2);
	sc.n = sl->n;
	inter.n = 2 * sl->n;
	for (i = 0; i < sl->n; i++) {
		if (sl->v[i] % sb->v[i] != 0)
			return err_set(e, "tile_of: the atom's shape %s does not divide %s (mode %d: %lld by %lld)",
			               axe_shape_fmt(s1, sb), axe_shape_fmt(s2, sl), i, (long long)sl->v[i], (long long)sb->v[i]);
		sc.v[i] = sl->v[i] / sb->v[i];
		inter.v[2 * i] = sc.v[i];
		inter.v[2 * i + 1] = sb->v[i];
	}
	if (axe_group(&cb, sb, &gb, pb, e) < 0) {
		Err tmp = *e;
		return err_set(e, "tile_of: the atom: %s", tmp.msg);
	}
	if (axe_group(&cl, &inter, &gl, pl, e) < 0) {
		Err tmp = *e;
		return err_set(e, "tile_of: %s is not a tile of %s: %s", axe_fmt(s1, l), axe_fmt(s2, b), tmp.msg);
	}
	memset(&c, 0, sizeof c);
	for (i = 0; i < sl->n; i++) {
		int lo = pl[2 * i], mid = pl[2 * i + 1], hi = pl[2 * i + 2];
		if (hi - mid != pb[i + 1] - pb[i])
			goto mismatch;
		for (k = 0; k < hi - mid; k++) {
			const AxeIter *x = &gl.d[mid + k], *y = &gb.d[pb[i] + k];
			if (x->e != y->e || x->s != y->s || strcmp(x->axis, y->axis) != 0)
				goto mismatch;
		}
		for (k = lo; k < mid; k++) {
			int64_t sp = axe_span(&cb, gl.d[k].axis);
			if (gl.d[k].s % sp != 0 && diagnose(l, sl, b, sb, e) < 0)
				return -1;
			if (gl.d[k].s % sp != 0)
				return err_set(e, "tile_of: %s is not a tile of %s: iter %lld:%lld@%s is not a "
				               "multiple of the atom's span %lld on %s", axe_fmt(s1, l), axe_fmt(s2, b),
				               (long long)gl.d[k].e, (long long)gl.d[k].s, gl.d[k].axis,
				               (long long)sp, gl.d[k].axis);
			c.d[c.nd++] = axe_mkiter(gl.d[k].e, gl.d[k].s / sp, gl.d[k].axis);
		}
	}
	/* R_C: L's replicas that are not the atom's, descaled */
	for (i = 0; i < cl.nr; i++) {
		for (k = 0; k < cb.nr; k++)
			if (!used[k] && cl.r[i].e == cb.r[k].e && cl.r[i].s == cb.r[k].s &&
			    strcmp(cl.r[i].axis, cb.r[k].axis) == 0)
				break;
		if (k < cb.nr) {
			used[k] = 1;
			continue;
		}
		w = axe_span(&cb, cl.r[i].axis);
		if (cl.r[i].s % w != 0)
			return err_set(e, "tile_of: replica %lld:%lld@%s of %s is not a multiple of the atom's "
			               "span %lld", (long long)cl.r[i].e, (long long)cl.r[i].s, cl.r[i].axis,
			               axe_fmt(s1, l), (long long)w);
		c.r[c.nr++] = axe_mkiter(cl.r[i].e, cl.r[i].s / w, cl.r[i].axis);
	}
	/* O_C = (O_L - O_B) / span(B), axis by axis */
	{
		AxeAxes ax;
		axe_axes(&cl, &ax);
		for (i = 0; i < cb.no; i++)
			if (axe_axes_add(&ax, cb.o[i].axis, e) < 0)
				return -1;
		for (i = 0; i < ax.n; i++) {
			int64_t d = axe_offset_on(&cl, ax.name[i]) - axe_offset_on(&cb, ax.name[i]);
			w = axe_span(&cb, ax.name[i]);
			if (d % w != 0)
				return err_set(e, "tile_of: %s is not a tile of %s: the offset difference %lld on "
				               "%s is not a multiple of the atom's span %lld", axe_fmt(s1, l),
				               axe_fmt(s2, b), (long long)d, ax.name[i], (long long)w);
			if (axe_add_offset(&c, ax.name[i], d / w, e) < 0)
				return -1;
		}
	}
	if (axe_check(&c, e) < 0 || axe_tile(&c, &sc, b, sb, &t, e) < 0)
		return -1;
	if (axe_equivalent(&t, l, &same, where, e) < 0)
		return -1;
	if (!same) {
		if (*where >= 0)
			return disagree("tile_of", l, sl, &t, *where, "a tile of the atom", e);
		return err_set(e, "tile_of: %s is not a tile of %s: %s (x) atom has other replicas",
		               axe_fmt(s1, l), axe_fmt(s2, b), axe_fmt(s3, &c));
	}
	*out = c;
	return 0;
mismatch:
	/* the structural scan failed: name the element where possible */
	if (diagnose(l, sl, b, sb, e) < 0)
		return -1;
	return err_set(e, "tile_of: %s is not a tile of %s: at mode %d the atom's iters are not the "
	               "tail of L's block (L grouped by %s is %s)", axe_fmt(s1, l), axe_fmt(s2, b), i,
	               axe_shape_fmt(s3, &inter), axe_fmt(s4, &gl));
}

/*
** Slicing (Appendix E), one rank block at a time, after grouping (which
** canonicalizes D, so no block holds a chain (e1, e2*s) (e2, s)).
*/
int
axe_slice(const AxeLayout *l, const AxeShape *sh, const int64_t *begin, const int64_t *ext,
          AxeLayout *out, Err *e)
{
	AxeLayout g, o;
	AxeAxes ax;
	char s1[FMT_MAX];
	int seps[AXE_RANK + 1], i, k, n = 0;
	int64_t x0, v[AXE_AXES];

	if (axe_group(l, sh, &g, seps, e) < 0) {
		Err t = *e;
		return err_set(e, "slice: %s", t.msg);
	}
	for (i = 0; i < sh->n; i++)
		if (begin[i] < 0 || ext[i] < 1 || begin[i] >= sh->v[i] || ext[i] > sh->v[i] - begin[i])
			return err_set(e, "slice: region [%lld, %lld) of mode %d is empty or outside [0, %lld)",
			               (long long)begin[i], (long long)(begin[i] + ext[i]), i, (long long)sh->v[i]);
	memset(&o, 0, sizeof o);
	for (i = 0; i < sh->n; i++) {
		AxeIter *blk = &g.d[seps[i]], peeled[AXE_ITERS];
		int nb = seps[i + 1] - seps[i], np = 0, p;
		int64_t u[AXE_ITERS], b = begin[i], w = ext[i];

		for (k = nb - 1; k >= 0; k--) {
			u[k] = b % blk[k].e;
			b /= blk[k].e;
		}
		/* peel the fastest digits while they start at 0 and divide the width */
		for (p = nb - 1; p >= 0 && w > 1 && u[p] == 0 && w % blk[p].e == 0; p--) {
			peeled[np++] = blk[p];
			w /= blk[p].e;
		}
		if (n + np + 2 > AXE_ITERS)
			return err_set(e, "slice: the result would have more than %d iters", AXE_ITERS);
		if (w > 1) {
			if (p < 0)
				return err_set(e, "slice: internal error: region wider than its block");
			if (u[p] + w <= blk[p].e) {                           /* no wrap */
				o.d[n++] = axe_mkiter(w, blk[p].s, blk[p].axis);
			} else if (w % 2 == 0 && u[p] + w / 2 == blk[p].e && p > 0 &&
			           u[p - 1] + 1 < blk[p - 1].e && strcmp(blk[p - 1].axis, blk[p].axis) == 0 &&
			           blk[p - 1].s - u[p] * blk[p].s != 0) {     /* symmetric one-wrap */
				o.d[n++] = axe_mkiter(2, blk[p - 1].s - u[p] * blk[p].s, blk[p].axis);
				o.d[n++] = axe_mkiter(w / 2, blk[p].s, blk[p].axis);
			} else {
				const char *why =
					w % 2 != 0 ? "the width is odd" :
					u[p] + w / 2 != blk[p].e ? "the midpoint is not the next boundary" :
					p == 0 ? "the pivot has no digit to its left" :
					u[p - 1] + 1 >= blk[p - 1].e ? "the digit to the left would carry" :
					strcmp(blk[p - 1].axis, blk[p].axis) != 0 ? "the pivot and the digit to its left are on different axes" :
					"the two chunks would coincide";
				return err_set(e, "slice: %s, mode %d, region [%lld, %lld): pivot iter %lld:%lld@%s "
				               "starts at digit %lld and needs %lld more: neither the no-wrap form "
				               "(start + width <= extent) nor the symmetric one-wrap form holds (%s)",
				               axe_fmt(s1, l), i, (long long)begin[i], (long long)(begin[i] + ext[i]),
				               (long long)blk[p].e, (long long)blk[p].s, blk[p].axis, (long long)u[p],
				               (long long)w, why);
			}
		}
		while (np > 0)
			o.d[n++] = peeled[--np];
	}
	o.nd = n;
	o.nr = g.nr;
	memcpy(o.r, g.r, sizeof g.r);
	/* O' = O + D(origin) */
	if (axe_flatten(sh, begin, &x0, e) < 0)
		return -1;
	axe_axes(&g, &ax);
	axe_base_into(&g, x0, &ax, v);
	for (i = 0; i < ax.n; i++)
		if (v[i] != 0 && axe_add_offset(&o, ax.name[i], v[i], e) < 0)
			return -1;
	if (axe_check(&o, e) < 0)
		return -1;
	*out = o;
	return 0;
}


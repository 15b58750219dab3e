/* cute.c - the layout algebra of CuTe C++ v4: coalesce, filter, composition, complement, inverses, divides, products, slices. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
** Coalesce (CuTe's bw_coalesce): walk the flattened modes from the back,
** keeping a front mode that absorbs what it can:
**   s:d with s == 1         skip it
**   front is the initial 1  replace the front
**   s*d == front stride     merge: front becomes (s*front_shape):d
**   otherwise               prepend s:d
*/
static int
bw_coalesce(const Flat *f, int last, int64_t s0, int64_t d0, Layout *out, Err *e)
{
	Flat r;  /* reversed: r.s[r.n-1] is the front */
	int i, is_tuple = 0;

	r.n = 1;
	r.s[0] = s0;
	r.d[0] = d0;
	for (i = last; i >= 0; i--) {
		int64_t s = f->s[i], d = f->d[i], sd;
		if (s == 1)
			continue;
		if (!is_tuple && r.s[0] == 1) {
			r.s[0] = s;
			r.d[0] = d;
		} else if (!__builtin_mul_overflow(s, d, &sd) && sd == r.d[r.n - 1]) {
			if (ck_mul(s, r.s[r.n - 1], &r.s[r.n - 1], e) < 0)
				return -1;
			r.d[r.n - 1] = d;
		} else {
			r.s[r.n] = s;
			r.d[r.n] = d;
			r.n++;
			is_tuple = 1;
		}
	}
	if (!is_tuple)
		return r.s[0] == 1 ? lb_scalar(out, 1, 0, e) : lb_scalar(out, r.s[0], r.d[0], e);
	{
		Flat o;
		o.n = r.n;
		for (i = 0; i < r.n; i++) {
			o.s[i] = r.s[r.n - 1 - i];
			o.d[i] = r.d[r.n - 1 - i];
		}
		return flat_to_layout(&o, 1, out, e);
	}
}

int
cute_coalesce(const Layout *l, Layout *out, Err *e)
{
	Flat f;

	flat_of(l, &f);
	if (f.n == 0)
		return lb_scalar(out, 1, 0, e);
	return bw_coalesce(&f, f.n - 2, f.s[f.n - 1], f.d[f.n - 1], out, e);
}

/* coalesce_x keeps the function outside the domain too: a trailing shape-1
** mode still contributes its stride when the last mode overflows. Only the
** strides of the result matter to composition, never its last shape. */
static int
coalesce_x(const Layout *l, Flat *out, int *scalar, Err *e)
{
	Flat f;
	Layout c;

	flat_of(l, &f);
	if (f.n == 0) {
		out->n = 1;
		out->s[0] = 1;
		out->d[0] = 0;
		*scalar = 1;
		return 0;
	}
	if (bw_coalesce(&f, f.n - 2, f.s[f.n - 1] == 1 ? 2 : f.s[f.n - 1], f.d[f.n - 1], &c, e) < 0)
		return -1;
	*scalar = c.shape.node[0].kids < 0;
	flat_of(&c, out);
	return 0;
}

typedef int (*ModeFn)(const Layout *l, Layout *out, Err *e);

/* Apply f at the terminals of a profile; modes past the profile pass through
** (CuTe's transform_layout of a layout and a shorter tuple). */
static int
by_profile(const Layout *l, const Tuple *p, int ip, ModeFn f, Layout *o, Err *e)
{
	char a[FMT_MAX], b[FMT_MAX];
	int i, k = p->node[ip].kids, r = cute_rank(l), at;
	Layout m, res;

	if (k < 0) {
		if (f(l, &res, e) < 0)
			return -1;
		return lb_copy(o, &res, 0, e);
	}
	if (k > r)
		return err_set(e, "profile %s has more modes than layout %s", tfmt(a, p), lfmt(b, l));
	if ((at = lb_open(o, e)) < 0)
		return -1;
	for (i = 0; i < r; i++) {
		if (lb_mode(l, i, &m, e) < 0)
			return -1;
		if (i < k) {
			if (by_profile(&m, p, tuple_child(p, ip, i), f, o, e) < 0)
				return -1;
		} else if (lb_copy(o, &m, 0, e) < 0) {
			return -1;
		}
	}
	lb_close(o, at);
	return 0;
}

static int
profile_apply(const Layout *l, const Tuple *profile, ModeFn f, Layout *out, Err *e)
{
	Layout t;

	lb_init(&t);
	if (by_profile(l, profile, 0, f, &t, e) < 0)
		return -1;
	*out = t;
	return 0;
}

int
cute_coalesce_profile(const Layout *l, const Tuple *profile, Layout *out, Err *e)
{
	return profile_apply(l, profile, cute_coalesce, out, e);
}

int
cute_filter(const Layout *l, Layout *out, Err *e)
{
	Layout z = *l;
	int i;

	for (i = 0; i < z.shape.n; i++)
		if (z.shape.node[i].kids == T_LEAF && z.stride.node[i].v == 0)
			z.shape.node[i].v = 1;
	return cute_coalesce(&z, out, e);
}

int
cute_filter_profile(const Layout *l, const Tuple *profile, Layout *out, Err *e)
{
	return profile_apply(l, profile, cute_filter, out, e);
}

/*
** The options of one call of the algebra, passed down to every composition
** it makes.
*/
typedef struct Alg {
	int cpp;        /* return what CuTe C++ returns, A o B or not */
	int diverged;   /* a composition was refused because C++'s layout is not A o B */
} Alg;

/*
** Composition A o B, as CuTe's composition_impl computes it: B distributes
** over its modes; each integral mode s:d of B walks the modes of coalesce_x(A),
** dividing d out of A's shapes and then taking s elements. CuTe asserts its
** stride and shape divisibility conditions (statically, on static integers);
** here both are errors.
**
** C++ does not check that its answer is A o B, and in two cases it is not:
**   - a stride smaller than a mode that does not divide it walks past the end
**     of that mode, and C++ proceeds as if it stopped there;
**   - the modes of B are composed one by one, which assumes
**     A(B1(c1) + B2(c2)) = A(B1(c1)) + A(B2(c2)); that fails where their digits
**     in one mode of A add up and carry.
** tessel computes C++'s layout and notes when either case occurs. When neither
** does, C++'s layout is A o B. When one does, it compares C++'s layout with
** A(B(i)) element by element: equal, it is the answer; different, it refuses
** with C++'s layout and the first i where they differ, unless the caller asked
** for C++'s layout whatever it computes (Alg.cpp).
*/
enum { COMP_VERIFY_LIMIT = 1 << 20 };

typedef struct Comp {
	const Layout *a, *b;  /* the operands, for messages */
	Flat l;               /* coalesce_x(A) */
	int scalar;
	int64_t use[TUPLE_MAX];  /* per mode of l: the digits the modes of B reach there, summed */
	int proven;           /* neither case above occurred: the result is A o B */
	char why[200];        /* else the first one, in words */
} Comp;

static int
comp_fail(const Comp *c, Err *e, const char *why)
{
	char a[FMT_MAX], b[FMT_MAX];

	return err_set(e, "composition: %s o %s: %s", lfmt(a, c->a), lfmt(b, c->b), why);
}


static int
comp_mode(Comp *c, int64_t rs, int64_t rd, Layout *o, Err *e)
{
	const Flat *l = &c->l;
	char why[300];
	Flat r;
	int64_t rest_shape = rs, rest_stride = rd, t;
	int i, R = l->n;

	if (rd == 0)
		return lb_leaf(o, rs, 0, e);
	if (c->scalar) {
		if (ck_mul(rd, l->d[0], &t, e) < 0)
			return -1;
		return lb_leaf(o, rs, t, e);
	}
	/* A(B(i)) evaluates A at negative integers, splitting them with C's
	** truncating division, which is not additive across signs: check them. */
	if (rd < 0 && c->proven) {
		c->proven = 0;
		snprintf(c->why, sizeof c->why, "the right-hand side has the negative stride %lld", (long long)rd);
	}
	r.n = 0;
	for (i = 0; i < R - 1; i++) {
		int64_t cs = l->s[i], cd = l->d[i];
		int64_t ars = rest_stride < 0 ? -rest_stride : rest_stride;
		int64_t next_shape = cs / ars + (cs % ars != 0);
		int64_t next_stride = (ars / cs + (ars % cs != 0)) * (rest_stride < 0 ? -1 : 1);

		if (!(rest_stride % cs == 0 || rest_stride < cs)) {
			snprintf(why, sizeof why, "stride divisibility condition fails: stride %lld is "
			         "not a multiple of %lld, the shape of mode %d of the coalesced left-hand side",
			         (long long)rest_stride, (long long)cs, i);
			return comp_fail(c, e, why);
		}
		if (c->proven && !(rest_stride % cs == 0 || cs % ars == 0 || rest_shape <= next_shape)) {
			c->proven = 0;
			snprintf(c->why, sizeof c->why, "stride %lld does not divide %lld, the shape of mode %d "
			         "of the coalesced left-hand side, and %lld elements walk past it",
			         (long long)rest_stride, (long long)cs, i, (long long)rest_shape);
		}
		if (next_shape == 1 || rest_shape == 1) {
			rest_stride = next_stride;
			continue;
		}
		{
			int64_t ns = next_shape < rest_shape ? next_shape : rest_shape;
			if (rest_shape % ns != 0) {
				snprintf(why, sizeof why, "shape divisibility condition fails: %lld elements do not "
				         "split into whole blocks of %lld along mode %d (shape %lld) of the coalesced "
				         "left-hand side", (long long)rest_shape, (long long)ns, i, (long long)cs);
				return comp_fail(c, e, why);
			}
			r.s[r.n] = ns;
			if (ck_mul(rest_stride, cd, &r.d[r.n], e) < 0)
				return -1;
			c->use[i] += (ns - 1) * ars;
			r.n++;
			rest_shape /= ns;
			rest_stride = next_stride;
		}
	}
	if (ck_mul(rest_stride, l->d[R - 1], &t, e) < 0)
		return -1;
	if (r.n == 0)
		return lb_leaf(o, rest_shape, t, e);
	if (rest_shape != 1) {
		r.s[r.n] = rest_shape;
		r.d[r.n] = t;
		r.n++;
	}
	if (r.n == 1)
		return lb_leaf(o, r.s[0], r.d[0], e);
	{
		int at = lb_open(o, e);
		if (at < 0)
			return -1;
		for (i = 0; i < r.n; i++)
			if (lb_leaf(o, r.s[i], r.d[i], e) < 0)
				return -1;
		lb_close(o, at);
	}
	return 0;
}

static int
comp_at(Comp *c, const Layout *b, int at, Layout *o, Err *e)
{
	int i, k = b->shape.node[at].kids, open, ch;

	if (k < 0)
		return comp_mode(c, b->shape.node[at].v, b->stride.node[at].v, o, e);
	if ((open = lb_open(o, e)) < 0)
		return -1;
	for (i = 0, ch = at + 1; i < k; i++, ch += b->shape.node[ch].span)
		if (comp_at(c, b, ch, o, e) < 0)
			return -1;
	lb_close(o, open);
	return 0;
}

/*
** A layout at any integer, inside its domain or not, as CuTe evaluates it: the
** integer is split colexicographically (C's truncating / and %), the last mode
** taking the rest. 0 on success, -1 on overflow.
*/
static int
flat_eval(const Flat *f, int64_t x, int64_t *out)
{
	int64_t acc = 0, t;
	int i;

	for (i = 0; i < f->n; i++) {
		int64_t c = x;
		if (i + 1 < f->n) {
			c = x % f->s[i];
			x /= f->s[i];
		}
		if (__builtin_mul_overflow(c, f->d[i], &t) || __builtin_add_overflow(acc, t, &acc))
			return -1;
	}
	*out = acc;
	return 0;
}

/*
** Compare r with A(B(i)) for i in [0, size(B)): 1 equal, 0 different (the
** first such i and both values returned), -1 equal on the first
** COMP_VERIFY_LIMIT elements and too large to go on, -2 an index overflows
** (*where is that i).
*/
static int
comp_verify(const Comp *c, const Layout *r, int64_t *where, int64_t *bi, int64_t *got, int64_t *want)
{
	Flat fa, fb, fr;
	int64_t i, n = cute_size(c->b), x, y, z;

	flat_of(c->a, &fa);
	flat_of(c->b, &fb);
	flat_of(r, &fr);
	for (i = 0; i < n && i < COMP_VERIFY_LIMIT; i++) {
		if (flat_eval(&fb, i, &x) < 0 || flat_eval(&fa, x, &y) < 0 || flat_eval(&fr, i, &z) < 0) {
			*where = i;
			return -2;
		}
		if (y != z) {
			*where = i;
			*bi = x;
			*got = z;
			*want = y;
			return 0;
		}
	}
	return n > COMP_VERIFY_LIMIT ? -1 : 1;
}

static int
compose(Alg *g, const Layout *a, const Layout *b, Layout *out, Err *e)
{
	char sa[FMT_MAX], sb[FMT_MAX], sr[FMT_MAX];
	Comp c;
	Layout t;
	int i, v;
	int64_t where, got, want, bi;

	c.a = a;
	c.b = b;
	c.proven = 1;
	memset(c.use, 0, sizeof c.use);
	if (coalesce_x(a, &c.l, &c.scalar, e) < 0)
		return -1;
	lb_init(&t);
	if (comp_at(&c, b, 0, &t, e) < 0 || lb_check(&t, "composition", e) < 0)
		return -1;
	for (i = 0; c.proven && !c.scalar && i < c.l.n - 1; i++) {
		if (c.use[i] >= c.l.s[i]) {
			c.proven = 0;
			snprintf(c.why, sizeof c.why, "the modes of the right-hand side overlap in mode %d "
			         "(shape %lld) of the coalesced left-hand side, where their coordinates add up "
			         "to %lld and carry", i, (long long)c.l.s[i], (long long)c.use[i]);
		}
	}
	if (c.proven || g->cpp) {
		*out = t;
		return 0;
	}
	v = comp_verify(&c, &t, &where, &bi, &got, &want);
	if (v == 1) {
		*out = t;
		return 0;
	}
	g->diverged = 1;
	if (v == -1)
		return err_set(e, "composition: %s o %s: CuTe C++ computes %s, which tessel cannot check "
		               "against A(B(i)) beyond i = %d (%s); cpp = true returns it",
		               lfmt(sa, a), lfmt(sb, b), lfmt(sr, &t), COMP_VERIFY_LIMIT, c.why);
	if (v == -2)
		return err_set(e, "composition: %s o %s: CuTe C++ computes %s, which tessel cannot check "
		               "against A(B(i)) (%s; the index overflows at i = %lld); cpp = true returns it",
		               lfmt(sa, a), lfmt(sb, b), lfmt(sr, &t), c.why, (long long)where);
	return err_set(e, "composition: %s o %s: CuTe C++ computes %s, which differs from A(B(i)) first "
	               "at i = %lld: %lld, but A(B(%lld)) = A(%lld) = %lld (%s); cpp = true returns it",
	               lfmt(sa, a), lfmt(sb, b), lfmt(sr, &t), (long long)where, (long long)got,
	               (long long)where, (long long)bi, (long long)want, c.why);
}

/*
** Complement (CuTe's detail::complement on the filtered layout): take the
** modes by increasing stride; each contributes the gap below it. The gap
** is min_stride / (previous stride * shape); a zero gap means two modes
** overlap (CuTe: "Non-injective Layout detected in complement").
*/
int
cute_complement(const Layout *l, const Tuple *cotarget, Layout *out, Err *e)
{
	char a[FMT_MAX];
	Layout fl, res;
	Flat f, r;
	Tuple cot, rs, pv;
	int64_t prev, rest;
	int i, j;

	if (cute_filter(l, &fl, e) < 0)
		return -1;
	if (cotarget) {
		if (tuple_has_under(cotarget))
			return err_set(e, "complement: cotarget %s contains '_'", tfmt(a, cotarget));
		for (i = 0; i < cotarget->n; i++)
			if (cotarget->node[i].kids == T_LEAF && cotarget->node[i].v < 1)
				return err_set(e, "complement: cotarget %s must be positive", tfmt(a, cotarget));
		cot = *cotarget;
	} else {
		tuple_int(&cot, cute_cosize(&fl));
	}
	flat_of(&fl, &f);
	if (f.n == 1 && f.d[0] == 0) {
		/* The filtered layout is 1:0: the complement is the whole cotarget,
		** compact (1:0 for a cotarget of 1, as make_layout(_1{})). */
		Tuple p;
		int64_t n;
		if (tuple_product(&cot, &n, e) < 0)
			return -1;
		tuple_int(&p, n);
		if (cute_make_compact(&res, &p, 0, e) < 0 || lb_check(&res, "complement", e) < 0)
			return -1;
		*out = res;
		return 0;
	}
	for (i = 0; i < f.n; i++)
		if (f.d[i] < 0)
			return err_set(e, "complement: %s has the negative stride %lld; complement needs positive strides",
			               lfmt(a, l), (long long)f.d[i]);
	r.n = 0;
	prev = 1;
	for (j = 0; j < f.n; j++) {
		int m = 0;
		for (i = 1; i < f.n - j; i++)
			if (f.d[i] < f.d[m])
				m = i;
		if (f.d[m] / prev == 0)
			return err_set(e, "complement: %s is not injective: the mode %lld:%lld overlaps the modes "
			               "of smaller stride, which already reach %lld", lfmt(a, l),
			               (long long)f.s[m], (long long)f.d[m], (long long)prev);
		r.s[r.n] = f.d[m] / prev;
		r.d[r.n] = prev;
		r.n++;
		if (ck_mul(f.d[m], f.s[m], &prev, e) < 0)
			return -1;
		/* remove mode m, keeping the order of the others */
		memmove(&f.s[m], &f.s[m + 1], (size_t)(f.n - j - 1 - m) * sizeof f.s[0]);
		memmove(&f.d[m], &f.d[m + 1], (size_t)(f.n - j - 1 - m) * sizeof f.d[0]);
	}
	/* The rest covers the cotarget: coalesce(ceil_div(cotarget, prev)) with stride prev. */
	tuple_int(&pv, prev);
	if (tuple_ceil_div(&cot, &pv, &rs, e) < 0 || tuple_product(&rs, &rest, e) < 0)
		return -1;
	r.s[r.n] = rest;
	r.d[r.n] = prev;
	r.n++;
	if (flat_to_layout(&r, 1, &res, e) < 0 || cute_coalesce(&res, &res, e) < 0 ||
	    lb_check(&res, "complement", e) < 0)
		return -1;
	*out = res;
	return 0;
}

/*
** The flat modes ordered by stride as CuTe's SortByKey orders them: an
** exchange sort, which is not stable, so that modes of equal stride come in
** the order C++ puts them (for right_inverse and left_inverse that order
** decides which of them is taken).
*/
static void
sort_by_stride(const Flat *f, int *ord)
{
	int i, j, t;

	for (i = 0; i < f->n; i++)
		ord[i] = i;
	for (i = 0; i < f->n; i++)
		for (j = i + 1; j < f->n; j++)
			if (f->d[ord[j]] < f->d[ord[i]]) {
				t = ord[j];
				ord[j] = ord[i];
				ord[i] = t;
			}
}

/* right_inverse: follow the strides from 1 upward through the coalesced modes;
** modes whose stride is never reached (stride 0, negative, gaps) are skipped. */
int
cute_right_inverse(const Layout *l, Layout *out, Err *e)
{
	Layout c, res;
	Flat f, r;
	int64_t pre[TUPLE_MAX], curr = 1;
	int ord[TUPLE_MAX], i;

	if (cute_coalesce(l, &c, e) < 0)
		return -1;
	flat_of(&c, &f);
	pre[0] = 1;
	for (i = 1; i < f.n; i++)
		pre[i] = pre[i - 1] * f.s[i - 1];
	sort_by_stride(&f, ord);
	r.n = 1;
	r.s[0] = 1;
	r.d[0] = 0;
	for (i = 0; i < f.n; i++) {
		int m = ord[i];
		if (f.d[m] != curr)
			continue;
		r.s[r.n] = f.s[m];
		r.d[r.n] = pre[m];
		r.n++;
		if (ck_mul(f.s[m], f.d[m], &curr, e) < 0)
			return -1;
	}
	if (flat_to_layout(&r, 1, &res, e) < 0 || cute_coalesce(&res, out, e) < 0)
		return -1;
	return lb_check(out, "right_inverse", e);
}

/* left_inverse: the quasi-inverse, with stride 0 in the holes of the codomain. */
int
cute_left_inverse(const Layout *l, Layout *out, Err *e)
{
	char a[FMT_MAX];
	Layout c, res;
	Flat f, r;
	int64_t pre[TUPLE_MAX], size = 1;
	int ord[TUPLE_MAX], i, n = 0;

	if (cute_coalesce(l, &c, e) < 0)
		return -1;
	flat_of(&c, &f);
	pre[0] = 1;
	for (i = 1; i < f.n; i++)
		pre[i] = pre[i - 1] * f.s[i - 1];
	for (i = 0; i < f.n; i++)
		if (f.d[i] < 0)
			return err_set(e, "left_inverse: %s has the negative stride %lld", lfmt(a, l),
			               (long long)f.d[i]);
	sort_by_stride(&f, ord);
	/* shapes r.s[0..n) pair with strides r.d[0..n]: r.d[0] = 0 for the first hole */
	r.d[0] = 0;
	for (i = 0; i < f.n; i++) {
		int m = ord[i];
		if (f.d[m] == 0)
			continue;
		if (f.d[m] % size != 0)
			return err_set(e, "left_inverse: %s fails the divisibility condition: stride %lld is not "
			               "a multiple of %lld, the extent of the modes of smaller stride",
			               lfmt(a, l), (long long)f.d[m], (long long)size);
		r.s[n] = f.d[m] / size;
		r.d[n + 1] = pre[m];
		n++;
		size = f.d[m];
	}
	r.s[n] = f.s[ord[f.n - 1]];
	r.n = n + 1;
	if (flat_to_layout(&r, 1, &res, e) < 0 || cute_coalesce(&res, out, e) < 0)
		return -1;
	return lb_check(out, "left_inverse", e);
}

/*
** Tilers. A tuple tiler applies by mode. composition drops the modes of the
** layout that the tiler does not reach; the divides and products keep them
** (keep), and read an integer element n as make_layout(n) where composition
** reads it as n:1, as CuTe does.
*/
typedef int (*TileFn)(Alg *g, const Layout *l, const Layout *t, Layout *out, Err *e);

static int
by_tiler(Alg *g, const char *op, const Layout *l, const Tiler *T, int ip, TileFn f, int keep,
         Layout *o, Err *e)
{
	char b[FMT_MAX];
	const Tuple *p = &T->prof;
	int i, k = p->node[ip].kids, r = cute_rank(l), at;
	Layout m, res;

	if (k == T_UNDER)
		return lb_copy(o, l, 0, e);
	if (k == T_LEAF) {
		if (tiler_element(T, ip, &m, e) < 0)
			return -1;
		/* an integer is n:1 to composition, make_layout(n) to the others */
		if (p->node[ip].v == TILER_INT && keep && cute_make_compact(&m, &m.shape, 0, e) < 0)
			return -1;
		if (f(g, l, &m, &res, e) < 0)
			return -1;
		return lb_copy(o, &res, 0, e);
	}
	if (k > r) {
		/* name the part of the tiler and the mode of the layout that disagree */
		Tiler sub;
		Buf tb;
		buf_init(&tb);
		if (tiler_sub(T, ip, &sub, NULL) == 0)
			tiler_print(&tb, &sub);
		err_set(e, "%s: the tiler %s has %d modes but the %s %s has only %d", op,
		        tb.s ? tb.s : "?", k, ip ? "mode" : "layout", lfmt(b, l), r);
		buf_free(&tb);
		return -1;
	}
	if ((at = lb_open(o, e)) < 0)
		return -1;
	for (i = 0; i < (keep ? r : k); i++) {
		if (lb_mode(l, i, &m, e) < 0)
			return -1;
		if (i < k) {
			if (by_tiler(g, op, &m, T, tuple_child(p, ip, i), f, keep, o, e) < 0)
				return -1;
		} else if (lb_copy(o, &m, 0, e) < 0) {
			return -1;
		}
	}
	lb_close(o, at);
	return 0;
}

static int
tiled(Alg *g, const char *op, const Layout *l, const Tiler *T, TileFn f, int keep, Layout *out, Err *e)
{
	Layout t;

	lb_init(&t);
	if (by_tiler(g, op, l, T, 0, f, keep, &t, e) < 0 || lb_check(&t, op, e) < 0)
		return -1;
	*out = t;
	return 0;
}

/*
** Divides and products.
*/
static int
divide1(Alg *g, const Layout *l, const Layout *t, Layout *out, Err *e)
{
	Layout cl, comp, both;

	if (cute_coalesce(l, &cl, e) < 0 || cute_complement(t, &cl.shape, &comp, e) < 0 ||
	    lb_pair(t, &comp, &both, e) < 0)
		return -1;
	return compose(g, l, &both, out, e);
}

static int
product1(Alg *g, const Layout *l, const Layout *t, Layout *out, Err *e)
{
	Layout comp, c;
	Tuple cot;
	int64_t n;

	if (ck_mul(cute_size(l), cute_cosize(t), &n, e) < 0)
		return -1;
	tuple_int(&cot, n);
	if (cute_complement(l, &cot, &comp, e) < 0 || compose(g, &comp, t, &c, e) < 0)
		return -1;
	return lb_pair(l, &c, out, e);
}

/*
** zip2_by: gather the rank-2 modes found at the terminals of the tiler into
** ((tiles...), (rests..., untouched modes...)).
*/
static int
zip2_by(const char *op, const Layout *l, const Tuple *p, int ip, Layout *out, Err *e)
{
	char a[FMT_MAX];
	int i, k = p->node[ip].kids, at, inner;
	Layout split[8], m;

	if (k < 0) {
		if (l->shape.node[0].kids != 2)
			return err_set(e, "%s: mode %s is not rank 2 (a '_' in the tiler needs a rank-2 mode here)",
			               op, lfmt(a, l));
		*out = *l;
		return 0;
	}
	if (l->shape.node[0].kids < k)
		return err_set(e, "%s: %s has fewer modes than the tiler", op, lfmt(a, l));
	if (k > (int)(sizeof split / sizeof split[0]))
		return err_set(e, "%s: tilers of more than %d modes are not supported", op,
		               (int)(sizeof split / sizeof split[0]));
	for (i = 0; i < k; i++) {
		if (lb_mode(l, i, &m, e) < 0 || zip2_by(op, &m, p, tuple_child(p, ip, i), &split[i], e) < 0)
			return -1;
	}
	lb_init(out);
	if ((at = lb_open(out, e)) < 0)
		return -1;
	if ((inner = lb_open(out, e)) < 0)
		return -1;
	for (i = 0; i < k; i++)
		if (lb_copy(out, &split[i], tuple_child(&split[i].shape, 0, 0), e) < 0)
			return -1;
	lb_close(out, inner);
	if ((inner = lb_open(out, e)) < 0)
		return -1;
	for (i = 0; i < k; i++)
		if (lb_copy(out, &split[i], tuple_child(&split[i].shape, 0, 1), e) < 0)
			return -1;
	for (i = k; i < l->shape.node[0].kids; i++)
		if (lb_copy(out, l, tuple_child(&l->shape, 0, i), e) < 0)
			return -1;
	lb_close(out, inner);
	lb_close(out, at);
	return 0;
}

/* zipped -> tiled / flat: unpack the second (and for flat, the first) mode one
** level, as CuTe's result(_, repeat<R1>(_)) does; a rank-1 mode stays as is. */
static int
unpack(const Layout *z, int first, Layout *out, Err *e)
{
	Layout t;
	int i, at, m;

	lb_init(&t);
	if ((at = lb_open(&t, e)) < 0)
		return -1;
	for (m = 0; m < 2; m++) {
		int c = tuple_child(&z->shape, 0, m), k = z->shape.node[c].kids;
		if ((m == 1 || first) && k >= 2) {
			for (i = 0; i < k; i++)
				if (lb_copy(&t, z, tuple_child(&z->shape, c, i), e) < 0)
					return -1;
		} else if (lb_copy(&t, z, c, e) < 0) {
			return -1;
		}
	}
	lb_close(&t, at);
	*out = t;
	return 0;
}

static int
zipped(Alg *g, const char *op, TileFn f, const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	Layout r;

	if (tiled(g, op, l, t, f, 1, &r, e) < 0)
		return -1;
	return zip2_by(op, &r, &t->prof, 0, out, e);
}

/* append<R>(l): pad with 1:0 modes up to rank R (a rank-R layout is unchanged). */
static int
append_to(const Layout *l, int R, Layout *out, Err *e)
{
	int i, at, r = cute_rank(l);

	if (r >= R) {
		*out = *l;
		return 0;
	}
	lb_init(out);
	if ((at = lb_open(out, e)) < 0)
		return -1;
	if (l->shape.node[0].kids < 0) {
		if (lb_copy(out, l, 0, e) < 0)
			return -1;
	} else {
		for (i = 0; i < r; i++)
			if (lb_copy(out, l, tuple_child(&l->shape, 0, i), e) < 0)
				return -1;
	}
	for (i = r; i < R; i++)
		if (lb_leaf(out, 1, 0, e) < 0)
			return -1;
	lb_close(out, at);
	return 0;
}

/* zip(a, b) of two layouts: ((a0,b0),(a1,b1),...), or ((a,b)) when a is not
** a tuple. As in CuTe, a tuple a needs a tuple b of the same rank. */
static int
zip2(const char *op, const Layout *x, const Layout *y, Layout *out, Err *e)
{
	char sx[FMT_MAX], sy[FMT_MAX];
	Layout t, mx, my;
	int i, at, in, r;

	lb_init(&t);
	if ((at = lb_open(&t, e)) < 0)
		return -1;
	if (x->shape.node[0].kids < 0) {
		if ((in = lb_open(&t, e)) < 0 || lb_copy(&t, x, 0, e) < 0 || lb_copy(&t, y, 0, e) < 0)
			return -1;
		lb_close(&t, in);
	} else {
		r = cute_rank(x);
		if (y->shape.node[0].kids != r)
			return err_set(e, "%s: zip(%s, %s): mismatched ranks (CuTe's static assertion)", op,
			               lfmt(sx, x), lfmt(sy, y));
		for (i = 0; i < r; i++) {
			if (lb_mode(x, i, &mx, e) < 0 || lb_mode(y, i, &my, e) < 0)
				return -1;
			if ((in = lb_open(&t, e)) < 0 || lb_copy(&t, &mx, 0, e) < 0 || lb_copy(&t, &my, 0, e) < 0)
				return -1;
			lb_close(&t, in);
		}
	}
	lb_close(&t, at);
	*out = t;
	return 0;
}

static int
rank_product(Alg *g, const char *op, const Layout *a, const Layout *b, int raked, Layout *out, Err *e)
{
	Layout pa, pb, r, c, zz;
	int R = cute_rank(a) > cute_rank(b) ? cute_rank(a) : cute_rank(b);

	if (append_to(a, R, &pa, e) < 0 || append_to(b, R, &pb, e) < 0 ||
	    product1(g, &pa, &pb, &r, e) < 0 || lb_mode(&r, 1, &c, e) < 0)
		return -1;
	if ((raked ? zip2(op, &c, &pa, &zz, e) : zip2(op, &pa, &c, &zz, e)) < 0 || lb_check(&zz, op, e) < 0)
		return -1;
	*out = zz;
	return 0;
}


/*
** The operations that take a tiler, by name, behind one entry point. Each
** runs with its Alg; when a composition inside it is refused because CuTe
** C++'s layout is not A o B, the message says what C++ returns for the whole
** operation.
*/
typedef int (*AlgFn)(Alg *g, const char *op, const Layout *l, const Tiler *t, Layout *out, Err *e);

static int
op_composition(Alg *g, const char *op, const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return tiled(g, op, l, t, compose, 0, out, e);
}

static int
op_logical_divide(Alg *g, const char *op, const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return tiled(g, op, l, t, divide1, 1, out, e);
}

static int
op_logical_product(Alg *g, const char *op, const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return tiled(g, op, l, t, product1, 1, out, e);
}

/* zipped, then unpacked: 0 zipped, 1 tiled, 2 flat */
static int
zip_unpack(Alg *g, const char *op, TileFn f, int how, const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	Layout z;

	if (zipped(g, op, f, l, t, how ? &z : out, e) < 0)
		return -1;
	return how ? unpack(&z, how == 2, out, e) : 0;
}

static int
op_zipped_divide(Alg *g, const char *op, const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return zip_unpack(g, op, divide1, 0, l, t, out, e);
}

static int
op_tiled_divide(Alg *g, const char *op, const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return zip_unpack(g, op, divide1, 1, l, t, out, e);
}

static int
op_flat_divide(Alg *g, const char *op, const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return zip_unpack(g, op, divide1, 2, l, t, out, e);
}

static int
op_zipped_product(Alg *g, const char *op, const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return zip_unpack(g, op, product1, 0, l, t, out, e);
}

static int
op_tiled_product(Alg *g, const char *op, const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return zip_unpack(g, op, product1, 1, l, t, out, e);
}

static int
op_flat_product(Alg *g, const char *op, const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return zip_unpack(g, op, product1, 2, l, t, out, e);
}

/* blocked_product and raked_product take a layout, not a tuple tiler. */
static int
rank_product_op(Alg *g, const char *op, const Layout *l, const Tiler *t, int raked, Layout *out, Err *e)
{
	Buf tb;

	if (t->prof.node[0].kids == T_LEAF)
		return rank_product(g, op, l, &t->l, raked, out, e);
	buf_init(&tb);
	tiler_print(&tb, t);
	err_set(e, "%s: the second argument must be a layout, not the tiler %s", op, tb.s ? tb.s : "?");
	buf_free(&tb);
	return -1;
}

static int
op_blocked_product(Alg *g, const char *op, const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return rank_product_op(g, op, l, t, 0, out, e);
}

static int
op_raked_product(Alg *g, const char *op, const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return rank_product_op(g, op, l, t, 1, out, e);
}

static const struct {
	const char *name;
	AlgFn f;
} ops[] = {
#define X(id, name) { #name, op_##name },
	CUTE_OPS(X)
#undef X
};

const char *
cute_op_name(CuteOp op)
{
	return op >= 0 && op < CUTE_NOPS ? ops[op].name : "?";
}

int
cute_algebra(CuteOp op, const Layout *l, const Tiler *t, int flags, Layout *out, Err *e)
{
	char sa[FMT_MAX], sr[FMT_MAX];
	Alg g = { (flags & CUTE_CPP) != 0, 0 }, c = { 1, 0 };
	Layout r;
	Err inner, ce;
	Buf tb;

	if (op < 0 || op >= CUTE_NOPS)
		return err_set(e, "cute_algebra: unknown operation %d", (int)op);
	if (ops[op].f(&g, ops[op].name, l, t, &r, e) == 0) {
		*out = r;
		return 0;
	}
	/* A composition with a layout says it all; the others add C++'s whole answer. */
	if (!g.diverged || (op == CUTE_COMPOSITION && t->prof.node[0].kids == T_LEAF))
		return -1;
	if (ops[op].f(&c, ops[op].name, l, t, &r, &ce) < 0) {
		/* C++ gets no further either: the composition's promise of a result would be false */
		char *cut;

		inner = *e;
		if ((cut = strstr(inner.msg, "; cpp = true returns it")))
			*cut = '\0';
		buf_init(&tb);
		tiler_print(&tb, t);
		err_set(e, "%s(%s, %s): a composition inside is not A o B (%s), and with CuTe C++'s layout "
		        "for it the %s then fails too (%s): C++ has no result, and cpp = true refuses",
		        ops[op].name, lfmt(sa, l), tb.s ? tb.s : "?", inner.msg, ops[op].name, ce.msg);
		buf_free(&tb);
		return -1;
	}
	inner = *e;
	buf_init(&tb);
	tiler_print(&tb, t);
	err_set(e, "%s(%s, %s): CuTe C++ returns %s, which is not the %s: its %s", ops[op].name, lfmt(sa, l),
	        tb.s ? tb.s : "?", lfmt(sr, &r), op == CUTE_COMPOSITION ? "composition" :
	        strstr(ops[op].name, "divide") ? "division" : "product", inner.msg);
	buf_free(&tb);
	return -1;
}

int
cute_composition(const Layout *a, const Layout *b, Layout *out, Err *e)
{
	Tiler t;

	tiler_from_layout(&t, b);
	return cute_algebra(CUTE_COMPOSITION, a, &t, 0, out, e);
}

int
cute_composition_tiler(const Layout *a, const Tiler *t, Layout *out, Err *e)
{
	return cute_algebra(CUTE_COMPOSITION, a, t, 0, out, e);
}

int
cute_logical_divide(const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return cute_algebra(CUTE_LOGICAL_DIVIDE, l, t, 0, out, e);
}

int
cute_zipped_divide(const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return cute_algebra(CUTE_ZIPPED_DIVIDE, l, t, 0, out, e);
}

int
cute_tiled_divide(const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return cute_algebra(CUTE_TILED_DIVIDE, l, t, 0, out, e);
}

int
cute_flat_divide(const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return cute_algebra(CUTE_FLAT_DIVIDE, l, t, 0, out, e);
}

int
cute_logical_product(const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return cute_algebra(CUTE_LOGICAL_PRODUCT, l, t, 0, out, e);
}

int
cute_zipped_product(const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return cute_algebra(CUTE_ZIPPED_PRODUCT, l, t, 0, out, e);
}

int
cute_tiled_product(const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return cute_algebra(CUTE_TILED_PRODUCT, l, t, 0, out, e);
}

int
cute_flat_product(const Layout *l, const Tiler *t, Layout *out, Err *e)
{
	return cute_algebra(CUTE_FLAT_PRODUCT, l, t, 0, out, e);
}

int
cute_blocked_product(const Layout *a, const Layout *b, Layout *out, Err *e)
{
	Tiler t;

	tiler_from_layout(&t, b);
	return cute_algebra(CUTE_BLOCKED_PRODUCT, a, &t, 0, out, e);
}

int
cute_raked_product(const Layout *a, const Layout *b, Layout *out, Err *e)
{
	Tiler t;

	tiler_from_layout(&t, b);
	return cute_algebra(CUTE_RAKED_PRODUCT, a, &t, 0, out, e);
}


/*
** slice(crd, layout): keep the modes paired with `_`. A tuple coordinate
** lifts its pieces into one flat tuple; a bare `_` keeps the whole layout.
*/
static int
lift_slice(const Tuple *c, int ic, const Layout *l, int il, Layout *o, Err *e)
{
	char a[FMT_MAX], b[FMT_MAX];
	int i, k = c->node[ic].kids;

	if (k == T_UNDER)
		return lb_copy(o, l, il, e);
	if (k == T_LEAF)
		return 0;
	if (l->shape.node[il].kids != k)
		return err_set(e, "slice: coordinate %s does not match layout %s", tfmt(a, c), lfmt(b, l));
	for (i = 0; i < k; i++)
		if (lift_slice(c, tuple_child(c, ic, i), l, tuple_child(&l->shape, il, i), o, e) < 0)
			return -1;
	return 0;
}

int
cute_slice(const Tuple *crd, const Layout *l, Layout *out, int64_t *offset, Err *e)
{
	char a[FMT_MAX], b[FMT_MAX];
	Layout t;
	int at, k = crd->node[0].kids;
	int64_t off;

	if (node_crd2idx(crd, 0, &l->shape, 0, &l->stride, 0, &off, e) < 0)
		return err_set(e, "slice: coordinate %s does not match layout %s", tfmt(a, crd), lfmt(b, l));
	lb_init(&t);
	if (k == T_UNDER) {
		t = *l;
	} else {
		if ((at = lb_open(&t, e)) < 0)
			return -1;
		if (k >= 0 && lift_slice(crd, 0, l, 0, &t, e) < 0)
			return -1;
		lb_close(&t, at);
	}
	*out = t;
	if (offset)
		*offset = off;
	return 0;
}

int
cute_with_shape(const Layout *l, const Tuple *shape, Layout *out, Err *e)
{
	Layout m;

	if (cute_make_compact(&m, shape, 0, e) < 0)
		return -1;
	return cute_composition(l, &m, out, e);
}

int
cute_same_function(const Layout *a, const Layout *b, int *same, int64_t *where, Err *e)
{
	Layout ca, cb;
	int64_t i, n = cute_size(a), x, y;

	*where = -1;
	if (cute_coalesce(a, &ca, e) < 0 || cute_coalesce(b, &cb, e) < 0)
		return -1;
	/* The coalesced form is canonical for the function on [0, size). */
	*same = n == cute_size(b) && cute_equal(&ca, &cb);
	if (*same || n != cute_size(b))
		return 0;
	/*
	** Only *where is left to find: the search for it stops at check_elems (the answer
	** stands without it), and polls Ctrl-C every 2^16 indices.
	*/
	for (i = 0; i < n && i < limits_value(LIMIT_CHECK_ELEMS); i++) {
		if ((i & 0xffff) == 0xffff && limits_poll(e) < 0)
			return -1;
		if (cute_eval_idx(a, i, &x, e) < 0 || cute_eval_idx(b, i, &y, e) < 0)
			return -1;
		if (x != y) {
			*where = i;
			break;
		}
	}
	return 0;
}

/* cute_layout.c - CuTe layouts as values: building, parsing, printing, sizes, modes, evaluation. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
** Shape and stride are congruent, so one node index addresses both trees.
** These builders grow them in lockstep.
*/
int
lb_open(Layout *o, Err *e)
{
	int at = tuple_open(&o->shape, e);

	if (at < 0 || tuple_open(&o->stride, e) < 0)
		return -1;
	return at;
}

void
lb_close(Layout *o, int at)
{
	tuple_close(&o->shape, at);
	tuple_close(&o->stride, at);
}

int
lb_leaf(Layout *o, int64_t s, int64_t d, Err *e)
{
	if (tuple_push(&o->shape, s, e) < 0 || tuple_push(&o->stride, d, e) < 0)
		return -1;
	return 0;
}

int
lb_copy(Layout *o, const Layout *l, int at, Err *e)
{
	if (tuple_push_copy(&o->shape, &l->shape, at, e) < 0 || tuple_push_copy(&o->stride, &l->stride, at, e) < 0)
		return -1;
	return 0;
}

void
lb_init(Layout *o)
{
	o->shape.n = o->stride.n = 0;
}

int
lb_scalar(Layout *o, int64_t s, int64_t d, Err *e)
{
	lb_init(o);
	return lb_leaf(o, s, d, e);
}

/* make_layout(a, b): the rank-2 layout with modes a and b. */
int
lb_pair(const Layout *a, const Layout *b, Layout *o, Err *e)
{
	int at;

	lb_init(o);
	if ((at = lb_open(o, e)) < 0 || lb_copy(o, a, 0, e) < 0 || lb_copy(o, b, 0, e) < 0)
		return -1;
	lb_close(o, at);
	return 0;
}

/*
** Validation: every layout that leaves cute_layout.c or cute.c went through here, so sizes
** and cosizes below CUTE_SIZE_LIMIT are an invariant the algebra relies on.
*/
int
lb_check(const Layout *l, const char *op, Err *e)
{
	char a[FMT_MAX], b[FMT_MAX];
	int64_t size = 1, co = 0, t;
	int i;

	if (l->shape.n == 0 || !node_congruent(&l->shape, 0, &l->stride, 0))
		return err_set(e, "%s: shape %s and stride %s are not congruent", op,
		               tfmt(a, &l->shape), tfmt(b, &l->stride));
	for (i = 0; i < l->shape.n; i++) {
		const TNode *s = &l->shape.node[i], *d = &l->stride.node[i];
		if (s->kids == T_UNDER || d->kids == T_UNDER)
			return err_set(e, "%s: '_' is not allowed in a layout: %s:%s", op,
			               tfmt(a, &l->shape), tfmt(b, &l->stride));
		if (s->kids != T_LEAF)
			continue;
		if (s->v < 1)
			return err_set(e, "%s: shape %s has a mode of size %lld; sizes must be >= 1", op,
			               tfmt(a, &l->shape), (long long)s->v);
		/* |INT64_MIN| has no int64 (fuzz F5); any stride past 2^62 makes no layout tessel takes */
		if (d->v == INT64_MIN)
			return err_set(e, "%s: layout %s:%s has a stride of -2^63; strides must be within "
			               "(-2^63, 2^63)", op, tfmt(a, &l->shape), tfmt(b, &l->stride));
		if (__builtin_mul_overflow(size, s->v, &size) || size >= CUTE_SIZE_LIMIT ||
		    __builtin_mul_overflow(s->v - 1, d->v < 0 ? -d->v : d->v, &t) ||
		    __builtin_add_overflow(co, t, &co) || co >= CUTE_SIZE_LIMIT - 1)
			return err_set(e, "%s: layout %s:%s is too large (size or cosize reaches 2^62)", op,
			               tfmt(a, &l->shape), tfmt(b, &l->stride));
	}
	return 0;
}

int
cute_make(Layout *l, const Tuple *shape, const Tuple *stride, Err *e)
{
	Layout t;

	t.shape = *shape;
	t.stride = *stride;
	if (lb_check(&t, "make_layout", e) < 0)
		return -1;
	*l = t;
	return 0;
}

/* Compact strides: column-major is CuTe's exclusive prefix product; row-major
** (LayoutRight) runs from the last mode backwards, at every level; size-1
** modes get stride 0 in both. */
static int
row_major_at(const Tuple *t, int at, int64_t init, Tuple *o, Err *e)
{
	int i, j, c, d, k = t->node[at].kids, open;
	int64_t after;

	if (k < 0)
		return tuple_push(o, init, e) < 0 ? -1 : 0;
	if ((open = tuple_open(o, e)) < 0)
		return -1;
	for (i = 0, c = at + 1; i < k; i++, c += t->node[c].span) {
		after = init;
		for (j = i + 1, d = c + t->node[c].span; j < k; j++, d += t->node[d].span)
			if (ck_mul(after, node_product(t, d), &after, e) < 0)
				return -1;
		if (row_major_at(t, c, after, o, e) < 0)
			return -1;
	}
	tuple_close(o, open);
	return 0;
}

int
cute_make_compact(Layout *l, const Tuple *shape, int row_major, Err *e)
{
	char a[FMT_MAX];
	Layout t;
	int i;

	t.shape = *shape;
	t.stride.n = 0;
	if (tuple_has_under(shape))
		return err_set(e, "make_layout: a shape cannot contain '_'");
	for (i = 0; i < shape->n; i++)
		if (shape->node[i].kids == T_LEAF && shape->node[i].v < 1)
			return err_set(e, "make_layout: shape %s has a mode of size %lld; sizes must be >= 1",
			               tfmt(a, shape), (long long)shape->node[i].v);
	if (row_major) {
		if (row_major_at(shape, 0, 1, &t.stride, e) < 0)
			return -1;
	} else if (tuple_prefix_product(shape, &t.stride, e) < 0) {
		return -1;
	}
	/* CuTe's compact_major gives a size-1 mode the stride 0 (make_layout(_1{})
	** is _1:_0): tessel's integers are CuTe's static ones. */
	for (i = 0; i < shape->n; i++)
		if (shape->node[i].kids == T_LEAF && shape->node[i].v == 1)
			t.stride.node[i].v = 0;
	if (lb_check(&t, "make_layout", e) < 0)
		return -1;
	*l = t;
	return 0;
}

int
cute_concat(Layout *out, const Layout *const *modes, int n, Err *e)
{
	Layout t;
	int i, at;

	lb_init(&t);
	if ((at = lb_open(&t, e)) < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (lb_copy(&t, modes[i], 0, e) < 0)
			return -1;
	lb_close(&t, at);
	if (lb_check(&t, "make_layout", e) < 0)
		return -1;
	*out = t;
	return 0;
}

int
cute_parse(const char *s, Layout *l, Err *e)
{
	const char *p = s;
	Tuple shape, stride;

	if (tuple_parse_prefix(s, &p, &shape, e) < 0)
		return -1;
	if (*p == '\0')
		return cute_make_compact(l, &shape, 0, e);
	if (*p != ':')
		return err_set(e, "cannot parse '%s': expected ':' at column %d", s, (int)(p - s) + 1);
	p++;
	if (tuple_parse_prefix(s, &p, &stride, e) < 0)
		return -1;
	if (*p != '\0')
		return err_set(e, "cannot parse '%s': unexpected text at column %d", s, (int)(p - s) + 1);
	return cute_make(l, &shape, &stride, e);
}

void
cute_print(Buf *b, const Layout *l)
{
	tuple_print(b, &l->shape);
	emit(b, ":");
	tuple_print(b, &l->stride);
}

int64_t
cute_size(const Layout *l)
{
	return node_product(&l->shape, 0);
}

int64_t
cute_cosize(const Layout *l)
{
	int64_t co = 0;
	int i;

	for (i = 0; i < l->shape.n; i++) {
		const TNode *s = &l->shape.node[i], *d = &l->stride.node[i];
		if (s->kids == T_LEAF)
			co += (s->v - 1) * (d->v < 0 ? -d->v : d->v);
	}
	return co + 1;
}

int
cute_rank(const Layout *l)
{
	return tuple_rank(&l->shape);
}

int
cute_depth(const Layout *l)
{
	return tuple_depth(&l->shape);
}

/* Mode i as a layout; a rank-1 integer layout is its own mode 0, as in CuTe. */
int
lb_mode(const Layout *l, int i, Layout *out, Err *e)
{
	if (l->shape.node[0].kids < 0) {
		*out = *l;
		return 0;
	}
	lb_init(out);
	return lb_copy(out, l, tuple_child(&l->shape, 0, i), e);
}

int
cute_mode(const Layout *l, int i, Layout *out, Err *e)
{
	char a[FMT_MAX];
	int r = cute_rank(l);

	if (i < 0 || i >= r)
		return err_set(e, "layout<%d>(%s): mode index out of range [0,%d)", i, lfmt(a, l), r);
	return lb_mode(l, i, out, e);
}

int
cute_select(const Layout *l, const int *modes, int n, Layout *out, Err *e)
{
	char a[FMT_MAX];
	Layout t;
	int i, at, r = cute_rank(l);

	lb_init(&t);
	if ((at = lb_open(&t, e)) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (modes[i] < 0 || modes[i] >= r)
			return err_set(e, "select: mode %d of %s is out of range [0,%d)", modes[i], lfmt(a, l), r);
		if (l->shape.node[0].kids < 0) {
			if (lb_copy(&t, l, 0, e) < 0)
				return -1;
		} else if (lb_copy(&t, l, tuple_child(&l->shape, 0, modes[i]), e) < 0) {
			return -1;
		}
	}
	lb_close(&t, at);
	*out = t;
	return 0;
}

void
flat_of(const Layout *l, Flat *f)
{
	int i;

	f->n = 0;
	for (i = 0; i < l->shape.n; i++) {
		if (l->shape.node[i].kids == T_LEAF) {
			f->s[f->n] = l->shape.node[i].v;
			f->d[f->n] = l->stride.node[i].v;
			f->n++;
		}
	}
}

int
flat_to_layout(const Flat *f, int as_tuple, Layout *out, Err *e)
{
	int i, at;

	lb_init(out);
	if (!as_tuple && f->n == 1)
		return lb_leaf(out, f->s[0], f->d[0], e);
	if ((at = lb_open(out, e)) < 0)
		return -1;
	for (i = 0; i < f->n; i++)
		if (lb_leaf(out, f->s[i], f->d[i], e) < 0)
			return -1;
	lb_close(out, at);
	return 0;
}

int
cute_flatten(const Layout *l, Layout *out, Err *e)
{
	Flat f;

	if (l->shape.node[0].kids < 0) {
		*out = *l;
		return 0;
	}
	flat_of(l, &f);
	return flat_to_layout(&f, 1, out, e);
}

int
cute_equal(const Layout *a, const Layout *b)
{
	return tuple_equal(&a->shape, &b->shape) && tuple_equal(&a->stride, &b->stride);
}

/*
** Evaluation. L(i) takes a 1-D coordinate in [0, size); L(crd) a natural or
** mixed coordinate whose every integer lies inside the mode it addresses.
*/
int
cute_eval_idx(const Layout *l, int64_t i, int64_t *out, Err *e)
{
	char a[FMT_MAX];
	Tuple c;

	if (i < 0 || i >= cute_size(l))
		return err_set(e, "%s(%lld): index outside the domain [0,%lld)", lfmt(a, l),
		               (long long)i, (long long)cute_size(l));
	tuple_int(&c, i);
	return node_crd2idx(&c, 0, &l->shape, 0, &l->stride, 0, out, e);
}

static int
check_crd(const Layout *l, const Tuple *c, int ic, int is, Err *e)
{
	char a[FMT_MAX], b[FMT_MAX];
	int kc = c->node[ic].kids, ks = l->shape.node[is].kids, i;

	if (kc == T_UNDER)
		return err_set(e, "%s(%s): '_' selects a slice; use slice(coord, layout)",
		               lfmt(a, l), tfmt(b, c));
	if (kc >= 0) {
		if (ks != kc)
			return err_set(e, "%s(%s): the coordinate does not match the shape (%d modes against %d)",
			               lfmt(a, l), tfmt(b, c), kc, node_rank(&l->shape, is));
		for (i = 0; i < kc; i++)
			if (check_crd(l, c, tuple_child(c, ic, i), tuple_child(&l->shape, is, i), e) < 0)
				return -1;
		return 0;
	}
	if (c->node[ic].v < 0 || c->node[ic].v >= node_product(&l->shape, is))
		return err_set(e, "%s(%s): coordinate %lld is outside its mode (valid: 0..%lld)",
		               lfmt(a, l), tfmt(b, c), (long long)c->node[ic].v,
		               (long long)node_product(&l->shape, is) - 1);
	return 0;
}

int
cute_eval(const Layout *l, const Tuple *crd, int64_t *out, Err *e)
{
	if (check_crd(l, crd, 0, 0, e) < 0)
		return -1;
	return node_crd2idx(crd, 0, &l->shape, 0, &l->stride, 0, out, e);
}

const char *
lfmt(char *dst, const Layout *l)
{
	Buf b;

	buf_init(&b);
	cute_print(&b, l);
	return fmt_trunc(dst, &b);
}

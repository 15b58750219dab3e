/* cute_order.c - CuTe's layouts built from an order (make_ordered_layout, make_layout_like, tile_to_shape), filter_zeros, and the largest common vector of two layouts. */
#include <string.h>

#include "internal.h"

/* Column-major strides of the subtree (s, at), starting at *cur: a size-1 leaf gets 0, as
** CuTe's compact (stride.hpp) gives a static _1 the stride _0. */
static int
compact_from(const Tuple *s, int at, int64_t *cur, Tuple *o, Err *e)
{
	int i, c, k = s->node[at].kids, open;

	if (k < 0) {
		int64_t v = s->node[at].v;

		if (v == 1)
			return tuple_push(o, 0, e) < 0 ? -1 : 0;
		if (tuple_push(o, *cur, e) < 0)
			return -1;
		return ck_mul(*cur, v, cur, e);
	}
	if ((open = tuple_open(o, e)) < 0)
		return -1;
	for (i = 0, c = at + 1; i < k; i++, c += s->node[c].span)
		if (compact_from(s, c, cur, o, e) < 0)
			return -1;
	tuple_close(o, open);
	return 0;
}

/* The leaves of an order with the size of the shape's subtree under each (CuTe's
** flatten(product_like(shape, order)) and flatten(order)). */
typedef struct Ord {
	int n;
	int64_t size[TUPLE_MAX], ord[TUPLE_MAX];
} Ord;

static int
leaves(const Tuple *s, int is, const Tuple *o, int io, Ord *r, const char *op, Err *e)
{
	char a[FMT_MAX], b[FMT_MAX];
	int i, cs, co, ko = o->node[io].kids, ks = s->node[is].kids;

	if (ko == T_UNDER)
		return err_set(e, "%s: an order cannot contain '_'", op);
	if (ko < 0) {
		r->size[r->n] = node_product(s, is);
		r->ord[r->n++] = o->node[io].v;
		return 0;
	}
	if (ks < 0 || ks != ko)
		return err_set(e, "%s: shape %s and order %s have different ranks (CuTe's static assertion: "
		               "\"Need equal rank of shape and order\")", op, tfmt(a, s), tfmt(b, o));
	for (i = 0, cs = is + 1, co = io + 1; i < ko; i++, cs += s->node[cs].span, co += o->node[co].span)
		if (leaves(s, cs, o, co, r, op, e) < 0)
			return -1;
	return 0;
}

/* The strides, mirroring the shape down to the order's leaves; leaf j of the order starts
** at the product of the sizes of the leaves of a smaller order (ties share a start). */
static int
strides(const Tuple *s, int is, const Tuple *o, int io, const Ord *r, int *j, Tuple *out, Err *e)
{
	int i, cs, co, ko = o->node[io].kids, open;

	if (ko < 0) {
		int64_t start = 1;
		int m;

		for (m = 0; m < r->n; m++)
			if (r->ord[m] < r->ord[*j] && ck_mul(start, r->size[m], &start, e) < 0)
				return -1;
		(*j)++;
		return compact_from(s, is, &start, out, e);
	}
	if ((open = tuple_open(out, e)) < 0)
		return -1;
	for (i = 0, cs = is + 1, co = io + 1; i < ko; i++, cs += s->node[cs].span, co += o->node[co].span)
		if (strides(s, cs, o, co, r, j, out, e) < 0)
			return -1;
	tuple_close(out, open);
	return 0;
}

/* CuTe's compact_order(shape, order) for static orders. */
static int
compact_order(const Tuple *shape, const Tuple *order, Tuple *out, const char *op, Err *e)
{
	Ord r;
	int j = 0;

	if (tuple_has_under(shape))
		return err_set(e, "%s: a shape cannot contain '_'", op);
	r.n = 0;
	if (leaves(shape, 0, order, 0, &r, op, e) < 0)
		return -1;
	out->n = 0;
	return strides(shape, 0, order, 0, &r, &j, out, e);
}

int
cute_make_ordered(Layout *l, const Tuple *shape, const Tuple *order, Err *e)
{
	Tuple st;

	if (compact_order(shape, order, &st, "make_ordered_layout", e) < 0)
		return -1;
	return cute_make(l, shape, &st, e);
}

/* filter_zeros(stride, shape): the shape with 1 where the stride is 0 */
static void
zeros_to_one(const Layout *l, Tuple *out)
{
	int i;

	*out = l->shape;
	for (i = 0; i < out->n; i++)
		if (out->node[i].kids == T_LEAF && l->stride.node[i].v == 0)
			out->node[i].v = 1;
}

int
cute_filter_zeros(const Layout *l, Layout *out, Err *e)
{
	Tuple s;

	zeros_to_one(l, &s);
	return cute_make(out, &s, &l->stride, e);
}

int
cute_make_layout_like(const Layout *l, Layout *out, Err *e)
{
	Tuple s, st;

	zeros_to_one(l, &s);
	if (compact_order(&s, &l->stride, &st, "make_layout_like", e) < 0)
		return -1;
	return cute_make(out, &l->shape, &st, e);
}

/*
** make_fragment_like (layout.hpp): a compact layout for a thread's fragment of L. Mode 0
** (the atom's values) column-major, its stride-0 modes kept 0; the other modes compact in
** the order of L's strides; the two joined by tiled_product. Rank 1: make_layout(shape).
*/
int
cute_make_fragment_like(const Layout *l, Layout *out, Err *e)
{
	enum { MAXR = 16 };
	char a[FMT_MAX];
	int r = cute_rank(l), i, modes[MAXR];
	Layout m0, f0, rest, ordered;
	Tuple s0, st;
	Tiler t;
	int64_t cur = 1;

	if (r <= 1 || l->shape.node[0].kids < 0)
		return cute_make_compact(out, &l->shape, 0, e);
	if (r > MAXR)
		return err_set(e, "make_fragment_like: %s has rank %d; at most %d", lfmt(a, l), r, MAXR);
	if (cute_mode(l, 0, &m0, e) < 0)
		return -1;
	zeros_to_one(&m0, &s0);
	st.n = 0;
	if (compact_from(&s0, 0, &cur, &st, e) < 0 || cute_make(&f0, &m0.shape, &st, e) < 0)
		return -1;
	for (i = 1; i < r; i++)
		modes[i - 1] = i;
	if (cute_select(l, modes, r - 1, &rest, e) < 0 ||
	    cute_make_ordered(&ordered, &rest.shape, &rest.stride, e) < 0)
		return -1;
	tiler_from_layout(&t, &ordered);
	return cute_algebra(CUTE_TILED_PRODUCT, &f0, &t, 0, out, e);
}

int
cute_tile_to_shape(const Layout *block, const Tuple *target, const Tuple *order, int flags, Layout *out,
                   Err *e)
{
	enum { MAXR = 16 };
	char a[FMT_MAX], b[FMT_MAX];
	const Layout *modes[MAXR];
	Layout m[MAXR], padded, ordered, unit;
	Tuple prod, one;
	Tiler t;
	int i, r = tuple_is_int(target) ? 1 : tuple_rank(target), rb = cute_rank(block), open;

	if (tuple_has_under(target))
		return err_set(e, "tile_to_shape: a shape cannot contain '_'");
	if (r > MAXR)
		return err_set(e, "tile_to_shape: the target shape %s has rank %d; at most %d", tfmt(a, target), r, MAXR);
	if (rb > r)
		return err_set(e, "tile_to_shape: block %s has rank %d, the target shape %s rank %d (CuTe's "
		               "static assertion: \"Rank of layout must be <= rank of target shape.\")",
		               lfmt(a, block), rb, tfmt(b, target), r);
	/* append<R>(block): 1:0 modes up to the target's rank */
	tuple_int(&one, 1);
	if (cute_make_compact(&unit, &one, 0, e) < 0)
		return -1;
	for (i = 0; i < r; i++) {
		if (i < rb && cute_mode(block, i, &m[i], e) < 0)
			return -1;
		modes[i] = i < rb ? &m[i] : &unit;
	}
	if (rb == r)
		padded = *block;
	else if (cute_concat(&padded, modes, r, e) < 0)
		return -1;
	/* the product shape: each mode of the target over the block's, which must divide it */
	prod.n = 0;
	if ((open = tuple_open(&prod, e)) < 0)
		return -1;
	for (i = 0; i < r; i++) {
		Tuple ti;
		int64_t tsz, bsz = cute_size(modes[i]);

		if (tuple_is_int(target))
			ti = *target;
		else if (tuple_mode(target, i, &ti, e) < 0)
			return -1;
		if (tuple_product(&ti, &tsz, e) < 0)
			return -1;
		if (tsz % bsz != 0)
			return err_set(e, "tile_to_shape: block %s does not divide the target shape %s: mode %d "
			               "has %lld elements in the block, %lld in the target (CuTe's static "
			               "assertion: \"block shape does not divide the target shape.\")",
			               lfmt(a, block), tfmt(b, target), i, (long long)bsz, (long long)tsz);
		if (tuple_push(&prod, tsz / bsz, e) < 0)
			return -1;
	}
	tuple_close(&prod, open);
	if (order ? cute_make_ordered(&ordered, &prod, order, e) < 0 : cute_make_compact(&ordered, &prod, 0, e) < 0)
		return -1;
	tiler_from_layout(&t, &ordered);
	if (cute_algebra(CUTE_BLOCKED_PRODUCT, &padded, &t, flags, out, e) < 0) {
		Err inner = *e;

		return err_set(e, "tile_to_shape(%s, %s): %s", lfmt(a, block), tfmt(b, target), inner.msg);
	}
	return 0;
}

/*
** max_common_layout / max_common_vector (layout.hpp): coalesce(a o right_inverse(b)); when
** its first mode has stride 1, that many elements correspond in a and b, contiguously in
** both. The layout is right_inverse(b) o that mode, else 1:0; the vector its size, else 1.
*/
static int
common(const Layout *a, const Layout *b, Layout *inv, Layout *m0, int *unit, Err *e)
{
	Layout c, cc;

	if (cute_right_inverse(b, inv, e) < 0 || cute_composition(a, inv, &c, e) < 0 ||
	    cute_coalesce(&c, &cc, e) < 0 || cute_mode(&cc, 0, m0, e) < 0)
		return -1;
	*unit = m0->shape.n == 1 && m0->stride.node[0].v == 1;
	return 0;
}

int
cute_max_common_layout(const Layout *a, const Layout *b, Layout *out, Err *e)
{
	Layout inv, m0;
	Tuple one;
	int unit;

	if (common(a, b, &inv, &m0, &unit, e) < 0)
		return -1;
	if (unit)
		return cute_composition(&inv, &m0, out, e);
	tuple_int(&one, 1);
	return cute_make_compact(out, &one, 0, e);
}

int
cute_max_common_vector(const Layout *a, const Layout *b, int64_t *n, Err *e)
{
	Layout inv, m0;
	int unit;

	if (common(a, b, &inv, &m0, &unit, e) < 0)
		return -1;
	*n = unit ? cute_size(&m0) : 1;
	return 0;
}

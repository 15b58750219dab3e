/* tuple.c - CuTe integer tuples: build, parse, print, and the IntTuple algebra. */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/*
** Builders
*/

static int
grow(Tuple *o, Err *e)
{
	if (o->n >= TUPLE_MAX)
		return err_set(e, "tuple too large: tessel's tuples hold at most %d nodes", TUPLE_MAX);
	return o->n++;
}

int
tuple_push(Tuple *o, int64_t v, Err *e)
{
	int at = grow(o, e);

	if (at < 0)
		return -1;
	o->node[at] = (TNode){ T_LEAF, 1, v };
	return at;
}

int
tuple_push_under(Tuple *o, Err *e)
{
	int at = grow(o, e);

	if (at < 0)
		return -1;
	o->node[at] = (TNode){ T_UNDER, 1, 0 };
	return at;
}

int
tuple_open(Tuple *o, Err *e)
{
	int at = grow(o, e);

	if (at < 0)
		return -1;
	o->node[at] = (TNode){ 0, 1, 0 };
	return at;
}

/* Children are complete subtrees laid out after the open node: count them. */
void
tuple_close(Tuple *o, int at)
{
	int k = 0, i = at + 1;

	while (i < o->n) {
		i += o->node[i].span;
		k++;
	}
	o->node[at].kids = k;
	o->node[at].span = o->n - at;
}

int
tuple_push_copy(Tuple *o, const Tuple *t, int at, Err *e)
{
	int span = t->node[at].span;

	if (o->n + span > TUPLE_MAX)
		return err_set(e, "tuple too large: tessel's tuples hold at most %d nodes", TUPLE_MAX);
	memcpy(&o->node[o->n], &t->node[at], (size_t)span * sizeof(TNode));
	o->n += span;
	return o->n - span;
}

int
node_extract(const Tuple *t, int at, Tuple *out, Err *e)
{
	out->n = 0;
	return tuple_push_copy(out, t, at, e) < 0 ? -1 : 0;
}

/*
** Node-level views
*/

int
tuple_child(const Tuple *t, int at, int i)
{
	int c = at + 1;

	while (i-- > 0)
		c += t->node[c].span;
	return c;
}

int
node_rank(const Tuple *t, int at)
{
	return t->node[at].kids >= 0 ? t->node[at].kids : 1;
}

int64_t
node_product(const Tuple *t, int at)
{
	int64_t p = 1;
	int i, end = at + t->node[at].span;

	for (i = at; i < end; i++)
		if (t->node[i].kids == T_LEAF)
			p *= t->node[i].v;
	return p;
}

int
node_equal(const Tuple *a, int ia, const Tuple *b, int ib)
{
	int i, span = a->node[ia].span;

	if (span != b->node[ib].span)
		return 0;
	for (i = 0; i < span; i++) {
		const TNode *x = &a->node[ia + i], *y = &b->node[ib + i];
		if (x->kids != y->kids || (x->kids == T_LEAF && x->v != y->v))
			return 0;
	}
	return 1;
}

int
node_congruent(const Tuple *a, int ia, const Tuple *b, int ib)
{
	int i, span = a->node[ia].span;

	if (span != b->node[ib].span)
		return 0;
	for (i = 0; i < span; i++) {
		int x = a->node[ia + i].kids, y = b->node[ib + i].kids;
		if ((x < 0) != (y < 0) || (x >= 0 && x != y))
			return 0;
	}
	return 1;
}

void
node_print(Buf *b, const Tuple *t, int at)
{
	const TNode *n = &t->node[at];
	int i, c;

	if (n->kids == T_LEAF) {
		emit(b, "%lld", (long long)n->v);
		return;
	}
	if (n->kids == T_UNDER) {
		emit(b, "_");
		return;
	}
	emit(b, "(");
	for (i = 0, c = at + 1; i < n->kids; i++, c += t->node[c].span) {
		if (i)
			emit(b, ",");
		node_print(b, t, c);
	}
	emit(b, ")");
}

/*
** Checked arithmetic
*/

int
ck_add(int64_t a, int64_t b, int64_t *r, Err *e)
{
	if (__builtin_add_overflow(a, b, r))
		return err_set(e, "integer overflow: %lld + %lld", (long long)a, (long long)b);
	return 0;
}

int
ck_mul(int64_t a, int64_t b, int64_t *r, Err *e)
{
	if (__builtin_mul_overflow(a, b, r))
		return err_set(e, "integer overflow: %lld * %lld", (long long)a, (long long)b);
	return 0;
}

const char *
fmt_trunc(char *dst, Buf *b)
{
	size_t n = b->len;

	if (!b->s) {
		strcpy(dst, "?");
	} else if (n < FMT_MAX) {
		memcpy(dst, b->s, n + 1);
	} else {
		memcpy(dst, b->s, FMT_MAX - 4);
		strcpy(dst + FMT_MAX - 4, "...");
	}
	buf_free(b);
	return dst;
}

const char *
tfmt(char *dst, const Tuple *t)
{
	Buf b;

	buf_init(&b);
	tuple_print(&b, t);
	return fmt_trunc(dst, &b);
}

/*
** Whole-tuple operations
*/

void
tuple_int(Tuple *t, int64_t v)
{
	t->n = 1;
	t->node[0] = (TNode){ T_LEAF, 1, v };
}

int
tuple_is_int(const Tuple *t)
{
	return t->node[0].kids == T_LEAF;
}

int
tuple_rank(const Tuple *t)
{
	return node_rank(t, 0);
}

static int
depth_at(const Tuple *t, int at)
{
	int i, c, d = 0, k = t->node[at].kids;

	if (k < 0)
		return 0;
	for (i = 0, c = at + 1; i < k; i++, c += t->node[c].span) {
		int x = depth_at(t, c);
		if (x > d)
			d = x;
	}
	return d + 1;
}

int
tuple_depth(const Tuple *t)
{
	return depth_at(t, 0);
}

int
tuple_equal(const Tuple *a, const Tuple *b)
{
	return node_equal(a, 0, b, 0);
}

int
tuple_congruent(const Tuple *a, const Tuple *b)
{
	return node_congruent(a, 0, b, 0);
}

static int
weakly_at(const Tuple *a, int ia, const Tuple *b, int ib)
{
	int i, ka = a->node[ia].kids, kb = b->node[ib].kids;

	if (ka < 0)
		return 1;
	if (kb < 0 || ka != kb)
		return 0;
	for (i = 0; i < ka; i++)
		if (!weakly_at(a, tuple_child(a, ia, i), b, tuple_child(b, ib, i)))
			return 0;
	return 1;
}

int
tuple_weakly_congruent(const Tuple *a, const Tuple *b)
{
	return weakly_at(a, 0, b, 0);
}

static int
compatible_at(const Tuple *a, int ia, const Tuple *b, int ib)
{
	int i, ka = a->node[ia].kids, kb = b->node[ib].kids;

	if (ka < 0) {
		Tuple sub;
		int64_t p;
		if (node_extract(b, ib, &sub, NULL) < 0 || tuple_product(&sub, &p, NULL) < 0)
			return 0;
		return a->node[ia].v == p;
	}
	if (kb < 0 || ka != kb)
		return 0;
	for (i = 0; i < ka; i++)
		if (!compatible_at(a, tuple_child(a, ia, i), b, tuple_child(b, ib, i)))
			return 0;
	return 1;
}

int
tuple_compatible(const Tuple *a, const Tuple *b)
{
	return compatible_at(a, 0, b, 0);
}

int
tuple_has_under(const Tuple *t)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (t->node[i].kids == T_UNDER)
			return 1;
	return 0;
}

int
tuple_mode(const Tuple *t, int i, Tuple *out, Err *e)
{
	char a[FMT_MAX];
	int r = tuple_rank(t);

	if (i < 0 || i >= r)
		return err_set(e, "mode %d of %s: index out of range [0,%d)", i, tfmt(a, t), r);
	if (t->node[0].kids < 0) {
		*out = *t;
		return 0;
	}
	return node_extract(t, tuple_child(t, 0, i), out, e);
}

int
tuple_make(Tuple *out, const Tuple *const *modes, int n, Err *e)
{
	int i, at;

	out->n = 0;
	if ((at = tuple_open(out, e)) < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (tuple_push_copy(out, modes[i], 0, e) < 0)
			return -1;
	tuple_close(out, at);
	return 0;
}

int
tuple_flatten(const Tuple *t, Tuple *out, Err *e)
{
	int i, at;

	if (t->node[0].kids < 0) {
		*out = *t;
		return 0;
	}
	out->n = 0;
	if ((at = tuple_open(out, e)) < 0)
		return -1;
	for (i = 1; i < t->n; i++)
		if (t->node[i].kids < 0 && tuple_push_copy(out, t, i, e) < 0)
			return -1;
	tuple_close(out, at);
	return 0;
}

/* A shape given by the user: positive integers whose product stays below
** CUTE_SIZE_LIMIT, so that node_product and the colexicographic splits
** below are safe on it. */
static int
shape_ok(const Tuple *t, const char *op, Err *e)
{
	char a[FMT_MAX];
	int64_t p = 1;
	int i;

	for (i = 0; i < t->n; i++) {
		const TNode *n = &t->node[i];
		if (n->kids == T_UNDER)
			return err_set(e, "%s: shape %s contains '_'", op, tfmt(a, t));
		if (n->kids != T_LEAF)
			continue;
		if (n->v < 1)
			return err_set(e, "%s: shape %s has the non-positive extent %lld", op, tfmt(a, t), (long long)n->v);
		if (__builtin_mul_overflow(p, n->v, &p) || p >= CUTE_SIZE_LIMIT)
			return err_set(e, "%s: shape %s is too large (its size reaches 2^62)", op, tfmt(a, t));
	}
	return 0;
}

static int
no_under(const Tuple *t, const char *op, Err *e)
{
	char a[FMT_MAX];

	if (tuple_has_under(t))
		return err_set(e, "%s: %s contains '_'", op, tfmt(a, t));
	return 0;
}

int
tuple_product(const Tuple *t, int64_t *out, Err *e)
{
	int64_t p = 1;
	int i;

	if (no_under(t, "product", e) < 0)
		return -1;
	for (i = 0; i < t->n; i++)
		if (t->node[i].kids == T_LEAF && ck_mul(p, t->node[i].v, &p, e) < 0)
			return -1;
	*out = p;
	return 0;
}

int
tuple_sum(const Tuple *t, int64_t *out, Err *e)
{
	int64_t p = 0;
	int i;

	if (no_under(t, "sum", e) < 0)
		return -1;
	for (i = 0; i < t->n; i++)
		if (t->node[i].kids == T_LEAF && ck_add(p, t->node[i].v, &p, e) < 0)
			return -1;
	*out = p;
	return 0;
}

static int
inner_at(const Tuple *a, int ia, const Tuple *b, int ib, int64_t *out, Err *e)
{
	char x[FMT_MAX], y[FMT_MAX];
	int i, ka = a->node[ia].kids, kb = b->node[ib].kids;
	int64_t acc = 0, v;

	if (ka == T_UNDER || kb == T_UNDER)
		return err_set(e, "inner_product: '_' has no value");
	if (ka < 0 && kb < 0)
		return ck_mul(a->node[ia].v, b->node[ib].v, out, e);
	if (ka < 0 || kb < 0 || ka != kb)
		return err_set(e, "inner_product: %s and %s are not congruent", tfmt(x, a), tfmt(y, b));
	for (i = 0; i < ka; i++) {
		if (inner_at(a, tuple_child(a, ia, i), b, tuple_child(b, ib, i), &v, e) < 0 ||
		    ck_add(acc, v, &acc, e) < 0)
			return -1;
	}
	*out = acc;
	return 0;
}

int
tuple_inner_product(const Tuple *a, const Tuple *b, int64_t *out, Err *e)
{
	return inner_at(a, 0, b, 0, out, e);
}

/* Exclusive prefix product (CuTe's compact column-major strides). */
static int
prefix_at(const Tuple *t, int at, int64_t init, Tuple *o, Err *e)
{
	int i, c, k = t->node[at].kids, open;

	if (k < 0)
		return tuple_push(o, init, e) < 0 ? -1 : 0;
	if ((open = tuple_open(o, e)) < 0)
		return -1;
	for (i = 0, c = at + 1; i < k; i++, c += t->node[c].span) {
		if (prefix_at(t, c, init, o, e) < 0 ||
		    ck_mul(init, node_product(t, c), &init, e) < 0)
			return -1;
	}
	tuple_close(o, open);
	return 0;
}

int
tuple_prefix_product(const Tuple *t, Tuple *out, Err *e)
{
	if (shape_ok(t, "prefix_product", e) < 0)
		return -1;
	out->n = 0;
	return prefix_at(t, 0, 1, out, e);
}

/*
** shape_div and ceil_div share their shape: tuple/tuple elementwise, tuple/int
** folds the divisor across the modes, int/tuple divides by the product.
*/
typedef int (*DivFn)(int64_t a, int64_t b, int64_t *r, Err *e);

static int
div_at(DivFn f, const char *op, int pad, const Tuple *a, int ia, const Tuple *b, int ib,
       int64_t bint, Tuple *o, Err *e)
{
	char x[FMT_MAX], y[FMT_MAX];
	int i, c, open, ka = a->node[ia].kids;
	int64_t r;

	if (ka < 0) {
		int64_t d = b ? node_product(b, ib) : bint;
		if (f(a->node[ia].v, d, &r, e) < 0)
			return -1;
		return tuple_push(o, r, e) < 0 ? -1 : 0;
	}
	if ((open = tuple_open(o, e)) < 0)
		return -1;
	if (b && b->node[ib].kids >= 0) {
		int kb = b->node[ib].kids;
		if (kb != ka && !(pad && kb < ka))
			return err_set(e, "%s: %s and %s have different ranks", op, tfmt(x, a), tfmt(y, b));
		for (i = 0, c = ia + 1; i < ka; i++, c += a->node[c].span) {
			int err = i < kb ? div_at(f, op, pad, a, c, b, tuple_child(b, ib, i), 0, o, e)
			                 : div_at(f, op, pad, a, c, NULL, 0, 1, o, e);
			if (err < 0)
				return -1;
		}
	} else {
		int64_t rest = b ? node_product(b, ib) : bint;
		for (i = 0, c = ia + 1; i < ka; i++, c += a->node[c].span) {
			int64_t ai = node_product(a, c);
			if (div_at(f, op, pad, a, c, NULL, 0, rest, o, e) < 0 || f(rest, ai, &rest, e) < 0)
				return -1;
		}
	}
	tuple_close(o, open);
	return 0;
}

/* Shapes are positive, so a / b rounds up to 1 when b is the multiple. */
static int
shape_div1(int64_t a, int64_t b, int64_t *r, Err *e)
{
	if (a < 1 || b < 1)
		return err_set(e, "shape_div: %lld and %lld must be positive", (long long)a, (long long)b);
	if (a % b != 0 && b % a != 0)
		return err_set(e, "shape_div: divisibility condition fails: neither %lld nor %lld divides the other",
		               (long long)a, (long long)b);
	*r = a % b == 0 ? a / b : 1;
	return 0;
}

static int
ceil_div1(int64_t a, int64_t b, int64_t *r, Err *e)
{
	if (b <= 0)
		return err_set(e, "ceil_div: divisor %lld is not positive", (long long)b);
	*r = a / b + (a % b > 0);
	return 0;
}

int
tuple_shape_div(const Tuple *a, const Tuple *b, Tuple *out, Err *e)
{
	if (shape_ok(a, "shape_div", e) < 0 || shape_ok(b, "shape_div", e) < 0)
		return -1;
	out->n = 0;
	return div_at(shape_div1, "shape_div", 0, a, 0, b, 0, 0, out, e);
}

int
tuple_ceil_div(const Tuple *a, const Tuple *b, Tuple *out, Err *e)
{
	if (shape_ok(a, "ceil_div", e) < 0 || shape_ok(b, "ceil_div", e) < 0)
		return -1;
	out->n = 0;
	return div_at(ceil_div1, "ceil_div", 1, a, 0, b, 0, 0, out, e);
}

/*
** Coordinates. crd2idx follows CuTe: an integer coordinate against a tuple
** shape is split colexicographically, and the last mode takes the remainder
** (it may overflow, as in CuTe). A `_` counts as 0 (slice offsets).
*/
int
node_crd2idx(const Tuple *c, int ic, const Tuple *s, int is, const Tuple *d, int id,
             int64_t *out, Err *e)
{
	char x[FMT_MAX], y[FMT_MAX];
	int kc = c->node[ic].kids, ks = s->node[is].kids, i;
	int64_t acc = 0, v;

	if (kc == T_UNDER) {
		*out = 0;
		return 0;
	}
	if (kc >= 0) {
		if (ks != kc)
			return err_set(e, "crd2idx: coordinate %s does not match shape %s",
			               tfmt(x, c), tfmt(y, s));
		for (i = 0; i < kc; i++) {
			if (node_crd2idx(c, tuple_child(c, ic, i), s, tuple_child(s, is, i),
			                 d, tuple_child(d, id, i), &v, e) < 0 ||
			    ck_add(acc, v, &acc, e) < 0)
				return -1;
		}
		*out = acc;
		return 0;
	}
	if (ks < 0)
		return ck_mul(c->node[ic].v, d->node[id].v, out, e);
	{
		int64_t idx = c->node[ic].v;
		int cs = is + 1, cd = id + 1;
		for (i = 0; i < ks; i++) {
			int64_t p = node_product(s, cs), ci = idx;
			Tuple one;
			if (i + 1 < ks) {
				ci = idx % p;
				idx /= p;
			}
			tuple_int(&one, ci);
			if (node_crd2idx(&one, 0, s, cs, d, cd, &v, e) < 0 || ck_add(acc, v, &acc, e) < 0)
				return -1;
			cs += s->node[cs].span;
			cd += d->node[cd].span;
		}
		*out = acc;
		return 0;
	}
}

int
tuple_crd2idx(const Tuple *crd, const Tuple *shape, const Tuple *stride, int64_t *out, Err *e)
{
	char x[FMT_MAX], y[FMT_MAX];

	if (!node_congruent(shape, 0, stride, 0))
		return err_set(e, "crd2idx: shape %s and stride %s are not congruent",
		               tfmt(x, shape), tfmt(y, stride));
	if (shape_ok(shape, "crd2idx", e) < 0 || no_under(stride, "crd2idx", e) < 0)
		return -1;
	return node_crd2idx(crd, 0, shape, 0, stride, 0, out, e);
}

int
tuple_crd2idx_colex(const Tuple *crd, const Tuple *shape, int64_t *out, Err *e)
{
	Tuple stride;

	if (crd->node[0].kids == T_LEAF) {
		*out = crd->node[0].v;
		return 0;
	}
	if (tuple_prefix_product(shape, &stride, e) < 0)
		return -1;
	return tuple_crd2idx(crd, shape, &stride, out, e);
}

/* idx2crd(idx, shape): colexicographic, the last mode takes what is left. */
static int
idx2crd_at(int64_t idx, const Tuple *s, int is, Tuple *o, Err *e)
{
	int i, c, open, k = s->node[is].kids;

	if (k < 0)
		return tuple_push(o, idx, e) < 0 ? -1 : 0;
	if ((open = tuple_open(o, e)) < 0)
		return -1;
	for (i = 0, c = is + 1; i < k; i++, c += s->node[c].span) {
		int64_t p = node_product(s, c), ci = idx;
		if (i + 1 < k) {
			ci = idx % p;
			idx /= p;
		}
		if (idx2crd_at(ci, s, c, o, e) < 0)
			return -1;
	}
	tuple_close(o, open);
	return 0;
}

int
tuple_idx2crd(int64_t idx, const Tuple *shape, Tuple *out, Err *e)
{
	if (shape_ok(shape, "idx2crd", e) < 0)
		return -1;
	out->n = 0;
	return idx2crd_at(idx, shape, 0, out, e);
}

static int
crd2crd_at(const Tuple *c, int ic, const Tuple *s, int is, const Tuple *d, int id,
           Tuple *o, Err *e)
{
	char x[FMT_MAX], y[FMT_MAX];
	int kc = c->node[ic].kids, ks = s->node[is].kids, kd = d->node[id].kids, i, open;
	Tuple sub, sshape;
	int64_t idx;

	if (kc >= 0 && kd >= 0) {
		if (kc != kd || ks != kc)
			return err_set(e, "crd2crd: coordinate %s, source shape and target shape %s have different ranks",
			               tfmt(x, c), tfmt(y, d));
		if ((open = tuple_open(o, e)) < 0)
			return -1;
		for (i = 0; i < kc; i++)
			if (crd2crd_at(c, tuple_child(c, ic, i), s, tuple_child(s, is, i),
			               d, tuple_child(d, id, i), o, e) < 0)
				return -1;
		tuple_close(o, open);
		return 0;
	}
	if (node_extract(c, ic, &sub, e) < 0 || node_extract(s, is, &sshape, e) < 0 ||
	    tuple_crd2idx_colex(&sub, &sshape, &idx, e) < 0)
		return -1;
	return idx2crd_at(idx, d, id, o, e);
}

int
tuple_crd2crd(const Tuple *crd, const Tuple *src, const Tuple *dst, Tuple *out, Err *e)
{
	if (shape_ok(src, "crd2crd", e) < 0 || shape_ok(dst, "crd2crd", e) < 0)
		return -1;
	out->n = 0;
	return crd2crd_at(crd, 0, src, 0, dst, 0, out, e);
}

/*
** Parsing: tuple := int | '_' | '(' [tuple {',' tuple}] ')', with spaces
** anywhere and CuTe's static spelling `_4` accepted for integers.
*/
typedef struct Lex {
	const char *s, *p;
	Err *e;
} Lex;

static void
skip(Lex *x)
{
	while (isspace((unsigned char)*x->p))
		x->p++;
}

static int
syntax(Lex *x, const char *what)
{
	return err_set(x->e, "cannot parse '%s': %s at column %d", x->s, what, (int)(x->p - x->s) + 1);
}

static int
parse_int(Lex *x, int64_t *v)
{
	int neg = 0;
	int64_t r = 0;

	if (*x->p == '-') {
		neg = 1;
		x->p++;
	}
	if (*x->p == '_')
		x->p++;
	if (!isdigit((unsigned char)*x->p))
		return syntax(x, "expected an integer");
	while (isdigit((unsigned char)*x->p)) {
		if (__builtin_mul_overflow(r, 10, &r) || __builtin_add_overflow(r, *x->p - '0', &r))
			return syntax(x, "integer too large");
		x->p++;
	}
	*v = neg ? -r : r;
	return 0;
}

static int
parse_node(Lex *x, Tuple *o, int depth)
{
	int at;
	int64_t v = 0;

	skip(x);
	if (depth > 32)
		return syntax(x, "nesting too deep");
	if (*x->p == '(') {
		x->p++;
		if ((at = tuple_open(o, x->e)) < 0)
			return -1;
		skip(x);
		if (*x->p != ')') {
			for (;;) {
				if (parse_node(x, o, depth + 1) < 0)
					return -1;
				skip(x);
				if (*x->p == ',') {
					x->p++;
					continue;
				}
				if (*x->p == ')')
					break;
				return syntax(x, "expected ',' or ')'");
			}
		}
		x->p++;
		tuple_close(o, at);
		return 0;
	}
	if (x->p[0] == '_' && !isdigit((unsigned char)x->p[1])) {
		x->p++;
		return tuple_push_under(o, x->e) < 0 ? -1 : 0;
	}
	if (parse_int(x, &v) < 0)
		return -1;
	return tuple_push(o, v, x->e) < 0 ? -1 : 0;
}

int
tuple_parse_prefix(const char *s, const char **pp, Tuple *out, Err *e)
{
	Lex x = { s, *pp, e };

	out->n = 0;
	if (parse_node(&x, out, 0) < 0)
		return -1;
	skip(&x);
	*pp = x.p;
	return 0;
}

int
tuple_parse(const char *s, Tuple *out, Err *e)
{
	const char *p = s;

	if (tuple_parse_prefix(s, &p, out, e) < 0)
		return -1;
	if (*p != '\0') {
		Lex x = { s, p, e };
		return syntax(&x, "unexpected text after the tuple");
	}
	return 0;
}

void
tuple_print(Buf *b, const Tuple *t)
{
	if (t->n == 0) {
		emit(b, "()");
		return;
	}
	node_print(b, t, 0);
}

/* tiler.c - CuTe tilers: a layout, or a (nested) tuple of layouts, integers and `_`. */
#include "internal.h"

#include <ctype.h>
#include <string.h>

void
tiler_from_layout(Tiler *t, const Layout *l)
{
	tuple_int(&t->prof, 0);
	t->l = *l;
}

/*
** prof and l share their tuple levels but not their node indices: a layout
** element is one leaf of prof and a whole subtree of l. Walk both in preorder
** to find where the element at prof node ip lies in l.
*/
int
tiler_layout_node(const Tiler *t, int ip)
{
	int p = 0, q = 0;

	while (p < ip) {
		if (t->prof.node[p].kids >= 0) {
			p++;
			q++;
		} else {
			p++;
			q += t->l.shape.node[q].span;
		}
	}
	return q;
}

/* The sub-tiler rooted at prof node ip. */
int
tiler_sub(const Tiler *t, int ip, Tiler *out, Err *e)
{
	int q = tiler_layout_node(t, ip);

	out->prof.n = out->l.shape.n = out->l.stride.n = 0;
	if (tuple_push_copy(&out->prof, &t->prof, ip, e) < 0 ||
	    tuple_push_copy(&out->l.shape, &t->l.shape, q, e) < 0 ||
	    tuple_push_copy(&out->l.stride, &t->l.stride, q, e) < 0)
		return -1;
	return 0;
}

/* The element at prof node ip as a layout (1:0 for a `_`). */
int
tiler_element(const Tiler *t, int ip, Layout *out, Err *e)
{
	int q = tiler_layout_node(t, ip);

	out->shape.n = out->stride.n = 0;
	if (tuple_push_copy(&out->shape, &t->l.shape, q, e) < 0 ||
	    tuple_push_copy(&out->stride, &t->l.stride, q, e) < 0)
		return -1;
	return 0;
}

typedef struct TLex {
	const char *s, *p;
	Err *e;
} TLex;

static void
tskip(TLex *x)
{
	while (isspace((unsigned char)*x->p))
		x->p++;
}

static int
tsyntax(TLex *x, const char *what)
{
	return err_set(x->e, "cannot parse tiler '%s': %s at column %d", x->s, what,
	               (int)(x->p - x->s) + 1);
}

/* Append an element: prof gets a leaf (TILER_INT for an integer, which l
** holds as n:1), l the layout's tree. */
static int
put_layout(Tiler *t, const Layout *l, int kind, Err *e)
{
	if (tuple_push(&t->prof, kind, e) < 0 || tuple_push_copy(&t->l.shape, &l->shape, 0, e) < 0 ||
	    tuple_push_copy(&t->l.stride, &l->stride, 0, e) < 0)
		return -1;
	return 0;
}

/* Append the integer element n: n:1 in l, marked in prof. */
int
tiler_push_int(Tiler *t, int64_t n, Err *e)
{
	Tuple s, d;
	Layout l;

	tuple_int(&s, n);
	tuple_int(&d, 1);
	if (cute_make(&l, &s, &d, e) < 0)
		return -1;
	return put_layout(t, &l, TILER_INT, e);
}

/* Where the parenthesised group starting at p ends (just after its ')'). */
static const char *
group_end(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && --depth == 0)
			return p + 1;
	}
	return NULL;
}

static int
parse_elem(TLex *x, Tiler *t, int depth)
{
	const char *q;
	Tuple shape, stride;
	Layout l;
	int at, al;

	tskip(x);
	if (depth > 32)
		return tsyntax(x, "nesting too deep");
	if (x->p[0] == '_' && !isdigit((unsigned char)x->p[1])) {
		x->p++;
		if (tuple_push_under(&t->prof, x->e) < 0 || tuple_push(&t->l.shape, 1, x->e) < 0 ||
		    tuple_push(&t->l.stride, 0, x->e) < 0)
			return -1;
		return 0;
	}
	if (*x->p == '(') {
		if (!(q = group_end(x->p)))
			return tsyntax(x, "unbalanced parentheses");
		while (isspace((unsigned char)*q))
			q++;
		if (*q != ':') {
			/* a by-mode tuple of tilers */
			x->p++;
			if ((at = tuple_open(&t->prof, x->e)) < 0 || (al = tuple_open(&t->l.shape, x->e)) < 0 ||
			    tuple_open(&t->l.stride, x->e) < 0)
				return -1;
			tskip(x);
			if (*x->p != ')') {
				for (;;) {
					if (parse_elem(x, t, depth + 1) < 0)
						return -1;
					tskip(x);
					if (*x->p == ',') {
						x->p++;
						continue;
					}
					if (*x->p == ')')
						break;
					return tsyntax(x, "expected ',' or ')'");
				}
			}
			x->p++;
			/* prof and l open this tuple at different indices (see layout.h) */
			tuple_close(&t->prof, at);
			tuple_close(&t->l.shape, al);
			tuple_close(&t->l.stride, al);
			return 0;
		}
	} else if (*x->p != '-' && !isdigit((unsigned char)*x->p) && *x->p != '_') {
		return tsyntax(x, "expected an integer, '_', a layout or '('");
	}
	/* a layout SHAPE:STRIDE, or an integer (a '(' without ':' is a tuple of tilers) */
	if (tuple_parse_prefix(x->s, &x->p, &shape, x->e) < 0)
		return -1;
	if (*x->p == ':') {
		x->p++;
		if (tuple_parse_prefix(x->s, &x->p, &stride, x->e) < 0 ||
		    cute_make(&l, &shape, &stride, x->e) < 0)
			return -1;
		return put_layout(t, &l, TILER_LAYOUT, x->e);
	}
	return tiler_push_int(t, shape.node[0].v, x->e);
}

int
tiler_parse(const char *s, Tiler *t, Err *e)
{
	TLex x = { s, s, e };
	Tiler r;

	r.prof.n = r.l.shape.n = r.l.stride.n = 0;
	if (parse_elem(&x, &r, 0) < 0)
		return -1;
	tskip(&x);
	if (*x.p != '\0')
		return tsyntax(&x, "unexpected text");
	*t = r;
	return 0;
}

static void
print_at(Buf *b, const Tiler *t, int at)
{
	const TNode *n = &t->prof.node[at];
	int i, c;

	if (n->kids == T_UNDER) {
		emit(b, "_");
	} else if (n->kids == T_LEAF) {
		Layout l;
		tiler_element(t, at, &l, NULL);
		if (n->v == TILER_INT)
			emit(b, "%lld", (long long)l.shape.node[0].v);
		else
			cute_print(b, &l);
	} else {
		emit(b, "(");
		for (i = 0, c = at + 1; i < n->kids; i++, c += t->prof.node[c].span) {
			if (i)
				emit(b, ",");
			print_at(b, t, c);
		}
		emit(b, ")");
	}
}

void
tiler_print(Buf *b, const Tiler *t)
{
	if (t->prof.node[0].kids == T_LEAF)
		cute_print(b, &t->l);
	else
		print_at(b, t, 0);
}

/* swizzle.c - CuTe's Swizzle<B,M,S> functor and swizzled (composed) layouts. */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int
swizzle_make(Swizzle *sw, int b, int m, int s, Err *e)
{
	int as = s < 0 ? -s : s;

	if (b < 0 || m < 0)
		return err_set(e, "Sw<%d,%d,%d>: B and M must be >= 0", b, m, s);
	if (as < b)
		return err_set(e, "Sw<%d,%d,%d>: the shift |S| = %d is smaller than the number of bits B = %d "
		               "(CuTe: \"abs(SShift) must be more than BBits\")", b, m, s, as, b);
	if (b + m + as > 62)
		return err_set(e, "Sw<%d,%d,%d>: the swizzle reaches bit %d; at most 62 bits are supported",
		               b, m, s, b + m + as);
	sw->b = b;
	sw->m = m;
	sw->s = s;
	return 0;
}

/* x ^ ((x & yyy) >> S): the B bits at M + max(0,S) are xor-ed into the B bits at
** M - min(0,S). A negative S shifts left. Sw<0,M,S> is the identity. */
int64_t
swizzle_apply(const Swizzle *sw, int64_t x)
{
	uint64_t bits = ((uint64_t)1 << sw->b) - 1;
	uint64_t yyy = bits << (sw->m + (sw->s > 0 ? sw->s : 0));
	uint64_t u = (uint64_t)x, y = u & yyy;

	y = sw->s >= 0 ? y >> sw->s : y << -sw->s;
	return (int64_t)(u ^ y);
}

void
swizzle_print(Buf *b, const Swizzle *sw)
{
	emit(b, "Sw<%d,%d,%d>", sw->b, sw->m, sw->s);
}

int
composed_make(Composed *c, const Swizzle *sw, int64_t offset, const Layout *l, Err *e)
{
	Swizzle t;

	if (swizzle_make(&t, sw->b, sw->m, sw->s, e) < 0)
		return -1;
	/* a slice of a layout with negative strides has a negative offset */
	if (offset <= -CUTE_SIZE_LIMIT || offset >= CUTE_SIZE_LIMIT)
		return err_set(e, "composed layout: offset %lld is out of range", (long long)offset);
	c->sw = t;
	c->offset = offset;
	c->layout = *l;
	return 0;
}

/*
** Whether composing into c gives the plain layout: CuTe's composition of
** Swizzle<0,M,S> (the identity) at offset 0 with a layout is that layout
** (swizzle_layout.hpp), so every composition, divide and product of such a
** composed layout comes back plain; only make_composed_layout keeps it.
*/
int
composed_is_plain(const Composed *c)
{
	return c->sw.b == 0 && c->offset == 0;
}

static int
read_int(const char **pp, int *v)
{
	char *end;
	long x = strtol(*pp, &end, 10);

	if (end == *pp || x < -1000 || x > 1000)
		return -1;
	*v = (int)x;
	*pp = end;
	return 0;
}

static const char *
spaces(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* Sw<B,M,S>, with spaces allowed; *pp is left after the '>'. */
static int
parse_swizzle(const char *s, const char **pp, Swizzle *sw, Err *e)
{
	const char *p = spaces(*pp);
	int v[3], i;

	if (strncmp(p, "Sw<", 3) != 0)
		return err_set(e, "cannot parse '%s': expected Sw<B,M,S>", s);
	p += 3;
	for (i = 0; i < 3; i++) {
		p = spaces(p);
		if (read_int(&p, &v[i]) < 0)
			return err_set(e, "cannot parse '%s': expected an integer in Sw<B,M,S>", s);
		p = spaces(p);
		if (*p != (i < 2 ? ',' : '>'))
			return err_set(e, "cannot parse '%s': expected '%c' in Sw<B,M,S>", s, i < 2 ? ',' : '>');
		p++;
	}
	*pp = spaces(p);
	return swizzle_make(sw, v[0], v[1], v[2], e);
}

int
swizzle_parse(const char *s, Swizzle *sw, Err *e)
{
	const char *p = s;

	if (parse_swizzle(s, &p, sw, e) < 0)
		return -1;
	if (*p != '\0')
		return err_set(e, "cannot parse '%s': unexpected text after the swizzle", s);
	return 0;
}

/* "Sw<B,M,S> o OFFSET o LAYOUT", or "Sw<B,M,S> o LAYOUT" with offset 0. */
int
composed_parse(const char *s, Composed *c, Err *e)
{
	const char *p = s, *q;
	Swizzle sw;
	Layout l;
	int64_t off = 0;
	char *end;

	if (parse_swizzle(s, &p, &sw, e) < 0)
		return -1;
	if (*p != 'o' || !isspace((unsigned char)p[1]))
		return err_set(e, "cannot parse '%s': expected ' o ' after the swizzle", s);
	p = spaces(p + 1);
	/* an offset is an integer followed by " o " */
	off = strtoll(p, &end, 10);
	q = spaces(end);
	if (end != p && *q == 'o' && isspace((unsigned char)q[1])) {
		p = spaces(q + 1);
	} else {
		off = 0;
	}
	if (cute_parse(p, &l, e) < 0)
		return -1;
	return composed_make(c, &sw, off, &l, e);
}

void
composed_print(Buf *b, const Composed *c)
{
	swizzle_print(b, &c->sw);
	emit(b, " o %lld o ", (long long)c->offset);
	cute_print(b, &c->layout);
}

int
composed_eval_idx(const Composed *c, int64_t i, int64_t *out, Err *e)
{
	int64_t v;

	if (cute_eval_idx(&c->layout, i, &v, e) < 0 || ck_add(v, c->offset, &v, e) < 0)
		return -1;
	*out = swizzle_apply(&c->sw, v);
	return 0;
}

int
composed_eval(const Composed *c, const Tuple *crd, int64_t *out, Err *e)
{
	int64_t v;

	if (cute_eval(&c->layout, crd, &v, e) < 0 || ck_add(v, c->offset, &v, e) < 0)
		return -1;
	*out = swizzle_apply(&c->sw, v);
	return 0;
}

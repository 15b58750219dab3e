/* axe.c - Axe layouts: named axes, iters, the notation, evaluation and span (the operators are in axe_ops.c). */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every coordinate a layout can produce stays below this in magnitude, so
** sums of a few of them (differences, offsets) never overflow. */
#define AXE_REACH_LIMIT ((int64_t)1 << 60)

/*
** Axis names and kinds
*/
static const struct {
	const char *name;
	int kind;
} known[] = {
	{ "m", AXE_MEMORY }, { "reg", AXE_MEMORY }, { "P", AXE_MEMORY }, { "F", AXE_MEMORY },
	{ "TLane", AXE_MEMORY }, { "TCol", AXE_MEMORY }, { "smem", AXE_MEMORY },
	{ "lane", AXE_THREAD }, { "laneid", AXE_THREAD }, { "warp", AXE_THREAD },
	{ "warpid", AXE_THREAD }, { "warpgroup", AXE_THREAD }, { "thread", AXE_THREAD },
	{ "tx", AXE_THREAD }, { "cta", AXE_THREAD }, { "cluster", AXE_THREAD },
	{ "gpuid", AXE_DEVICE }, { "gpuid_x", AXE_DEVICE }, { "gpuid_y", AXE_DEVICE },
	{ "gpuid_z", AXE_DEVICE }, { "device", AXE_DEVICE }, { "node", AXE_DEVICE },
};

int
axe_axis_kind(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(name, known[i].name) == 0)
			return known[i].kind;
	return AXE_OTHER;
}

const char *
axe_kind_name(int kind)
{
	switch (kind) {
	case AXE_MEMORY: return "memory";
	case AXE_THREAD: return "thread";
	case AXE_DEVICE: return "device";
	default: return "other";
	}
}

int
axe_valid_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n >= AXE_NAME || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	return 1;
}

void
axe_setname(char *dst, const char *src)
{
	snprintf(dst, AXE_NAME, "%s", src);
}

AxeIter
axe_mkiter(int64_t e, int64_t s, const char *axis)
{
	AxeIter it;

	it.e = e;
	it.s = s;
	axe_setname(it.axis, axis);
	return it;
}

int
axe_axes_index(const AxeAxes *ax, const char *name)
{
	int i;

	for (i = 0; i < ax->n; i++)
		if (strcmp(ax->name[i], name) == 0)
			return i;
	return -1;
}

int
axe_axes_add(AxeAxes *ax, const char *name, Err *e)
{
	int i = axe_axes_index(ax, name);

	if (i >= 0)
		return i;
	if (ax->n >= AXE_AXES)
		return err_set(e, "more than %d axes", AXE_AXES);
	axe_setname(ax->name[ax->n], name);
	return ax->n++;
}

void
axe_axes(const AxeLayout *l, AxeAxes *ax)
{
	int i;

	ax->n = 0;
	/* a checked layout names at most AXE_AXES axes, so these cannot fail */
	for (i = 0; i < l->nd; i++)
		axe_axes_add(ax, l->d[i].axis, NULL);
	for (i = 0; i < l->nr; i++)
		axe_axes_add(ax, l->r[i].axis, NULL);
	for (i = 0; i < l->no; i++)
		axe_axes_add(ax, l->o[i].axis, NULL);
}

/*
** Printing
*/
static void
print_stride(Buf *b, int64_t s, const char *axis)
{
	if (strcmp(axis, "m") == 0)
		emit(b, "%lld", (long long)s);
	else
		emit(b, "%lld@%s", (long long)s, axis);
}

static void
print_iters(Buf *b, const AxeIter *it, int n)
{
	int i;

	if (n == 0) {
		emit(b, "1:1");
		return;
	}
	if (n == 1) {
		emit(b, "%lld:", (long long)it[0].e);
		print_stride(b, it[0].s, it[0].axis);
		return;
	}
	emit(b, "(");
	for (i = 0; i < n; i++)
		emit(b, "%s%lld", i ? "," : "", (long long)it[i].e);
	emit(b, "):(");
	for (i = 0; i < n; i++) {
		if (i)
			emit(b, ",");
		print_stride(b, it[i].s, it[i].axis);
	}
	emit(b, ")");
}

void
axe_print(Buf *b, const AxeLayout *l)
{
	int i;

	emit(b, "S[");
	print_iters(b, l->d, l->nd);
	emit(b, "]");
	if (l->nr) {
		emit(b, " + R[");
		print_iters(b, l->r, l->nr);
		emit(b, "]");
	}
	for (i = 0; i < l->no; i++) {
		emit(b, " + ");
		print_stride(b, l->o[i].v, l->o[i].axis);
	}
}

void
axe_shape_print(Buf *b, const AxeShape *sh)
{
	int i;

	emit(b, "(");
	for (i = 0; i < sh->n; i++)
		emit(b, "%s%lld", i ? "," : "", (long long)sh->v[i]);
	emit(b, sh->n == 1 ? ",)" : ")");
}

/* The notation of l into dst (truncated), for messages. */
const char *
axe_fmt(char *dst, const AxeLayout *l)
{
	Buf b;

	buf_init(&b);
	axe_print(&b, l);
	if (!b.s)
		snprintf(dst, FMT_MAX, "?");
	else if (b.len < FMT_MAX)
		snprintf(dst, FMT_MAX, "%s", b.s);
	else
		snprintf(dst, FMT_MAX, "%.*s...", FMT_MAX - 4, b.s);
	buf_free(&b);
	return dst;
}

const char *
axe_shape_fmt(char *dst, const AxeShape *sh)
{
	Buf b;

	buf_init(&b);
	axe_shape_print(&b, sh);
	snprintf(dst, FMT_MAX, "%s", b.s ? b.s : "?");
	buf_free(&b);
	return dst;
}

/*
** Validation
*/
int64_t
axe_size(const AxeLayout *l)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < l->nd; i++)
		n *= l->d[i].e;
	return n;
}

int64_t
axe_nreplicas(const AxeLayout *l)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < l->nr; i++)
		n *= l->r[i].e;
	return n;
}

static int
check_iters(const AxeIter *it, int n, const char *what, int64_t *prod, Err *e)
{
	int i;

	*prod = 1;
	for (i = 0; i < n; i++) {
		if (!axe_valid_name(it[i].axis))
			return err_set(e, "%s iter %d: '%s' is not an axis name (a letter or _, then "
			               "letters, digits or _, at most %d characters)",
			               what, i, it[i].axis, AXE_NAME - 1);
		if (it[i].e < 1)
			return err_set(e, "%s iter %d: extent %lld is not >= 1", what, i, (long long)it[i].e);
		if (it[i].s == 0)
			return err_set(e, "%s iter %d: stride 0 is not allowed (an iter's stride is nonzero)",
			               what, i);
		if (it[i].s >= AXE_REACH_LIMIT || it[i].s <= -AXE_REACH_LIMIT ||
		    __builtin_mul_overflow(*prod, it[i].e, prod) || *prod >= CUTE_SIZE_LIMIT)
			return err_set(e, "%s: extents or strides too large (the limit is 2^60)", what);
	}
	return 0;
}

/* Reach on every axis: |O| + sum (e-1)|s| over D and R stays below the limit. */
static int
check_reach(const AxeLayout *l, Err *e)
{
	AxeAxes ax;
	int64_t reach[AXE_AXES] = {0}, t;
	int i, k;
	const AxeIter *it;

	ax.n = 0;
	for (i = 0; i < l->nd + l->nr + l->no; i++) {
		const char *name = i < l->nd ? l->d[i].axis : i < l->nd + l->nr ? l->r[i - l->nd].axis
		                                                             : l->o[i - l->nd - l->nr].axis;
		if ((k = axe_axes_add(&ax, name, e)) < 0)
			return err_set(e, "a layout names at most %d axes", AXE_AXES);
		if (i < l->nd + l->nr) {
			it = i < l->nd ? &l->d[i] : &l->r[i - l->nd];
			t = it->s < 0 ? -it->s : it->s;
			if (__builtin_mul_overflow(t, it->e - 1, &t) || __builtin_add_overflow(reach[k], t, &reach[k]))
				reach[k] = AXE_REACH_LIMIT;
		} else {
			t = l->o[i - l->nd - l->nr].v;
			if (t <= -AXE_REACH_LIMIT || t >= AXE_REACH_LIMIT)
				reach[k] = AXE_REACH_LIMIT;
			else
				reach[k] += t < 0 ? -t : t;
		}
		if (reach[k] >= AXE_REACH_LIMIT)
			return err_set(e, "coordinates on axis %s reach 2^60 or more", name);
	}
	return 0;
}

int
axe_check(const AxeLayout *l, Err *e)
{
	int64_t p;
	int i, j;

	if (l->nd < 0 || l->nd > AXE_ITERS || l->nr < 0 || l->nr > AXE_ITERS || l->no < 0 || l->no > AXE_AXES)
		return err_set(e, "at most %d shard and %d replica iters and %d offsets", AXE_ITERS,
		               AXE_ITERS, AXE_AXES);
	if (check_iters(l->d, l->nd, "S", &p, e) < 0 || check_iters(l->r, l->nr, "R", &p, e) < 0)
		return -1;
	for (i = 0; i < l->no; i++) {
		if (!axe_valid_name(l->o[i].axis))
			return err_set(e, "offset %d: '%s' is not an axis name", i, l->o[i].axis);
		for (j = 0; j < i; j++)
			if (strcmp(l->o[i].axis, l->o[j].axis) == 0)
				return err_set(e, "offset: axis %s appears twice", l->o[i].axis);
	}
	return check_reach(l, e);
}

int
axe_make(AxeLayout *l, const AxeIter *d, int nd, const AxeIter *r, int nr, const AxeOff *o,
         int no, Err *e)
{
	if (nd < 0 || nd > AXE_ITERS || nr < 0 || nr > AXE_ITERS || no < 0 || no > AXE_AXES)
		return err_set(e, "axe.make: at most %d shard iters, %d replica iters and %d offsets",
		               AXE_ITERS, AXE_ITERS, AXE_AXES);
	memset(l, 0, sizeof *l);
	l->nd = nd;
	l->nr = nr;
	l->no = no;
	if (nd)
		memcpy(l->d, d, (size_t)nd * sizeof *d);
	if (nr)
		memcpy(l->r, r, (size_t)nr * sizeof *r);
	if (no)
		memcpy(l->o, o, (size_t)no * sizeof *o);
	return axe_check(l, e);
}

/* Add v on axis to the offsets (dropping a zero sum). */
int
axe_add_offset(AxeLayout *l, const char *axis, int64_t v, Err *e)
{
	int i;

	for (i = 0; i < l->no; i++)
		if (strcmp(l->o[i].axis, axis) == 0) {
			if (ck_add(l->o[i].v, v, &l->o[i].v, e) < 0)
				return -1;
			if (l->o[i].v == 0) {
				memmove(&l->o[i], &l->o[i + 1], (size_t)(l->no - i - 1) * sizeof l->o[0]);
				l->no--;
			}
			return 0;
		}
	if (v == 0)
		return 0;
	if (l->no >= AXE_AXES)
		return err_set(e, "more than %d offsets", AXE_AXES);
	axe_setname(l->o[l->no].axis, axis);
	l->o[l->no++].v = v;
	return 0;
}

int64_t
axe_offset_on(const AxeLayout *l, const char *axis)
{
	int i;

	for (i = 0; i < l->no; i++)
		if (strcmp(l->o[i].axis, axis) == 0)
			return l->o[i].v;
	return 0;
}

/*
** Parsing: S[...] once, R[...] at most once, offsets summed per axis.
*/
typedef struct P {
	const char *s, *p;
	Err *e;
} P;

static void
ws(P *p)
{
	while (isspace((unsigned char)*p->p))
		p->p++;
}

static int
perr(P *p, const char *what)
{
	return err_set(p->e, "axe.layout: %s at column %d of \"%.100s\"", what, (int)(p->p - p->s) + 1, p->s);
}

static int
pint(P *p, int64_t *v)
{
	int neg = 0;
	int64_t x = 0;

	ws(p);
	if (*p->p == '-' || *p->p == '+') {
		neg = *p->p == '-';
		p->p++;
		ws(p);
	}
	if (!isdigit((unsigned char)*p->p))
		return perr(p, "expected an integer");
	while (isdigit((unsigned char)*p->p)) {
		if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, *p->p - '0', &x))
			return perr(p, "integer too large");
		p->p++;
	}
	*v = neg ? -x : x;
	ws(p);
	return 0;
}

static int
pname(P *p, char *dst)
{
	int n = 0;

	ws(p);
	if (!(isalpha((unsigned char)*p->p) || *p->p == '_'))
		return perr(p, "expected an axis name");
	while (isalnum((unsigned char)*p->p) || *p->p == '_') {
		if (n >= AXE_NAME - 1)
			return perr(p, "axis name too long");
		dst[n++] = *p->p++;
	}
	dst[n] = 0;
	ws(p);
	return 0;
}

/* value [@ axis] */
static int
paxval(P *p, int64_t *v, char *axis)
{
	if (pint(p, v) < 0)
		return -1;
	strcpy(axis, "m");
	if (*p->p == '@') {
		p->p++;
		return pname(p, axis);
	}
	return 0;
}

/* A parenthesized list or a single item of integers (with axes when ax). */
static int
plist(P *p, int64_t *v, char (*axis)[AXE_NAME], int *n, int bare_commas)
{
	int paren;
	char dummy[AXE_NAME];

	ws(p);
	paren = *p->p == '(';
	if (paren)
		p->p++;
	*n = 0;
	for (;;) {
		if (*n >= AXE_ITERS)
			return perr(p, "too many iters");
		if ((axis ? paxval(p, &v[*n], axis[*n]) : paxval(p, &v[*n], dummy)) < 0)
			return -1;
		if (!axis && strcmp(dummy, "m") != 0)
			return perr(p, "an extent has no axis");
		(*n)++;
		if (*p->p == ',' && (paren || bare_commas)) {
			p->p++;
			continue;
		}
		break;
	}
	if (paren) {
		if (*p->p != ')')
			return perr(p, "expected ')'");
		p->p++;
		ws(p);
	}
	return 0;
}

static int
pspec(P *p, AxeIter *it, int *n)
{
	int64_t ext[AXE_ITERS], str[AXE_ITERS];
	char axis[AXE_ITERS][AXE_NAME];
	int ne, ns, i;

	if (*p->p != '[')
		return perr(p, "expected '['");
	p->p++;
	if (plist(p, ext, NULL, &ne, 1) < 0)
		return -1;
	if (*p->p == ':') {
		p->p++;
		if (plist(p, str, axis, &ns, 0) < 0)
			return -1;
		if (ns != ne)
			return perr(p, "extents and strides differ in number");
	} else {
		/* extents only: compact row-major on m */
		int64_t s = 1;
		for (i = ne - 1; i >= 0; i--) {
			str[i] = s;
			strcpy(axis[i], "m");
			if (ext[i] > 0 && __builtin_mul_overflow(s, ext[i], &s))
				return perr(p, "extents too large");
		}
	}
	if (*p->p != ']')
		return perr(p, "expected ']'");
	p->p++;
	ws(p);
	for (i = 0; i < ne; i++)
		it[i] = axe_mkiter(ext[i], str[i], axis[i]);
	*n = ne;
	return 0;
}

int
axe_parse(const char *s, AxeLayout *l, Err *e)
{
	P p = { s, s, e };
	int seen_s = 0, seen_r = 0, neg;

	memset(l, 0, sizeof *l);
	ws(&p);
	for (;;) {
		ws(&p);
		if (*p.p == 'S' && p.p[1] != '_' && !isalnum((unsigned char)p.p[1])) {
			if (seen_s)
				return perr(&p, "a second S[...]");
			p.p++;
			ws(&p);
			if (pspec(&p, l->d, &l->nd) < 0)
				return -1;
			seen_s = 1;
		} else if (*p.p == 'R' && p.p[1] != '_' && !isalnum((unsigned char)p.p[1])) {
			if (seen_r)
				return perr(&p, "a second R[...]");
			p.p++;
			ws(&p);
			if (pspec(&p, l->r, &l->nr) < 0)
				return -1;
			seen_r = 1;
		} else {
			int64_t v;
			char axis[AXE_NAME];
			if (paxval(&p, &v, axis) < 0)
				return -1;
			if (axe_add_offset(l, axis, v, e) < 0)
				return err_set(e, "axe.layout: more than %d offset axes in \"%.100s\"", AXE_AXES, s);
		}
		ws(&p);
		if (*p.p == 0)
			break;
		neg = *p.p == '-';
		if (*p.p != '+' && !neg)
			return perr(&p, "expected '+' or the end");
		if (!neg)
			p.p++;
	}
	if (!seen_s)
		return err_set(e, "axe.layout: \"%.100s\" has no S[...] part", s);
	if (axe_check(l, e) < 0) {
		Err tmp = *e;
		return err_set(e, "axe.layout: \"%.100s\": %s", s, tmp.msg);
	}
	return 0;
}

/* "(4,8)", "(4,)", "4" or "4,8". */
int
axe_shape_parse(const char *s, AxeShape *sh, Err *e)
{
	P p = { s, s, e };
	int paren, n = 0;
	int64_t v;

	ws(&p);
	paren = *p.p == '(';
	if (paren)
		p.p++;
	for (;;) {
		if (n >= AXE_RANK)
			return err_set(e, "shape %.100s: more than %d modes", s, AXE_RANK);
		if (pint(&p, &v) < 0)
			return -1;
		if (v < 1)
			return err_set(e, "shape %.100s: extent %lld is not >= 1", s, (long long)v);
		sh->v[n++] = v;
		if (*p.p != ',')
			break;
		p.p++;
		ws(&p);
		if (*p.p == ')' || *p.p == 0)
			break;
	}
	if (paren) {
		if (*p.p != ')')
			return perr(&p, "expected ')' in a shape");
		p.p++;
		ws(&p);
	}
	if (*p.p)
		return perr(&p, "unexpected text after the shape");
	sh->n = n;
	return 0;
}

/*
** Evaluation
*/
int
axe_flatten(const AxeShape *sh, const int64_t *crd, int64_t *x, Err *e)
{
	int64_t r = 0;
	int i;

	for (i = 0; i < sh->n; i++) {
		if (crd[i] < 0 || crd[i] >= sh->v[i]) {
			char b[FMT_MAX];
			return err_set(e, "coordinate %lld is outside mode %d of shape %s", (long long)crd[i],
			               i, axe_shape_fmt(b, sh));
		}
		r = r * sh->v[i] + crd[i];
	}
	*x = r;
	return 0;
}

void
axe_unflatten(const AxeShape *sh, int64_t x, int64_t *crd)
{
	int i;

	for (i = sh->n - 1; i >= 0; i--) {
		crd[i] = x % sh->v[i];
		x /= sh->v[i];
	}
}

int64_t
axe_shape_size(const AxeShape *sh)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < sh->n; i++)
		if (__builtin_mul_overflow(n, sh->v[i], &n))
			return -1;
	return n;
}

int
axe_check_shape(const AxeShape *sh, const char *op, Err *e)
{
	int i;

	if (sh->n < 1 || sh->n > AXE_RANK)
		return err_set(e, "%s: a shape has 1 to %d modes", op, AXE_RANK);
	for (i = 0; i < sh->n; i++)
		if (sh->v[i] < 1)
			return err_set(e, "%s: shape extent %lld is not >= 1", op, (long long)sh->v[i]);
	if (axe_shape_size(sh) < 0 || axe_shape_size(sh) >= CUTE_SIZE_LIMIT)
		return err_set(e, "%s: shape too large", op);
	return 0;
}

/* D(x) + O, added into v on the axes ax (which must hold the layout's axes). */
void
axe_base_into(const AxeLayout *l, int64_t x, const AxeAxes *ax, int64_t *v)
{
	int i;

	for (i = 0; i < ax->n; i++)
		v[i] = axe_offset_on(l, ax->name[i]);
	for (i = l->nd - 1; i >= 0; i--) {
		int64_t d = x % l->d[i].e;
		x /= l->d[i].e;
		v[axe_axes_index(ax, l->d[i].axis)] += d * l->d[i].s;
	}
}

/* Replica j (row-major over R's extents), added into v. */
void
axe_replica_into(const AxeLayout *l, int64_t j, const AxeAxes *ax, int64_t *v)
{
	int i;

	for (i = l->nr - 1; i >= 0; i--) {
		int64_t d = j % l->r[i].e;
		j /= l->r[i].e;
		v[axe_axes_index(ax, l->r[i].axis)] += d * l->r[i].s;
	}
}

static int
covers(const AxeAxes *ax, const AxeLayout *l, Err *e)
{
	AxeAxes mine;
	int i;

	axe_axes(l, &mine);
	for (i = 0; i < mine.n; i++)
		if (axe_axes_index(ax, mine.name[i]) < 0)
			return err_set(e, "axis %s is not in the coordinate's axes", mine.name[i]);
	return 0;
}

int
axe_base(const AxeLayout *l, int64_t x, const AxeAxes *ax, int64_t *v, Err *e)
{
	if (x < 0 || x >= axe_size(l))
		return err_set(e, "element %lld is outside [0, %lld)", (long long)x, (long long)axe_size(l));
	if (covers(ax, l, e) < 0)
		return -1;
	axe_base_into(l, x, ax, v);
	return 0;
}

int
axe_apply(const AxeLayout *l, int64_t x, AxeCoord *out, int max, int *n, Err *e)
{
	int64_t nrep = axe_nreplicas(l), j;
	AxeAxes ax;
	int64_t base[AXE_AXES];

	if (x < 0 || x >= axe_size(l))
		return err_set(e, "apply: element %lld is outside [0, %lld)", (long long)x, (long long)axe_size(l));
	if (nrep > AXE_ENUM_LIMIT)
		return err_set(e, "apply: %lld replicas are more than %lld (check_elems limit; raise it with "
		               "tessel.limits{check_elems = N})", (long long)nrep, (long long)AXE_ENUM_LIMIT);
	axe_axes(l, &ax);
	axe_base_into(l, x, &ax, base);
	for (j = 0; j < nrep && j < max; j++) {
		out[j].ax = ax;
		memcpy(out[j].v, base, sizeof base);
		axe_replica_into(l, j, &ax, out[j].v);
	}
	*n = (int)nrep;
	return 0;
}

int
axe_find(const AxeLayout *l, const AxeCoord *q, int64_t *xs, int64_t *rep, int max, int64_t *n, Err *e)
{
	int64_t size = axe_size(l), nrep = axe_nreplicas(l), x, j, v[AXE_AXES];
	AxeAxes ax;
	int i, at[AXE_AXES], off = 0;

	axe_axes(l, &ax);
	if (size > AXE_ENUM_LIMIT / nrep)
		return err_set(e, "find: %lld elements x %lld replicas are more than %lld to enumerate "
		               "(check_elems limit; raise it with tessel.limits{check_elems = N})",
		               (long long)size, (long long)nrep, (long long)AXE_ENUM_LIMIT);
	for (i = 0; i < q->ax.n; i++)
		at[i] = axe_axes_index(&ax, q->ax.name[i]);
	*n = 0;
	for (x = 0; x < size; x++) {
		if ((x & 0xffff) == 0xffff && limits_poll(e) < 0)
			return -1;
		for (j = 0; j < nrep; j++) {
			int ok = 1;
			axe_base_into(l, x, &ax, v);
			axe_replica_into(l, j, &ax, v);
			for (i = 0; i < q->ax.n && ok; i++)
				ok = (at[i] < 0 ? 0 : v[at[i]]) == q->v[i];
			if (ok) {
				if (off < max) {
					xs[off] = x;
					if (rep)
						rep[off] = j;
					off++;
				}
				(*n)++;
				break;  /* an element counts once */
			}
		}
	}
	return 0;
}

/*
** Span (Lemma C.1)
*/
int64_t
axe_span(const AxeLayout *l, const char *axis)
{
	int64_t s = 1;
	int i;

	for (i = 0; i < l->nd; i++)
		if (strcmp(l->d[i].axis, axis) == 0)
			s += (l->d[i].e - 1) * (l->d[i].s < 0 ? -l->d[i].s : l->d[i].s);
	for (i = 0; i < l->nr; i++)
		if (strcmp(l->r[i].axis, axis) == 0)
			s += (l->r[i].e - 1) * (l->r[i].s < 0 ? -l->r[i].s : l->r[i].s);
	return s;
}

int64_t
axe_span_total(const AxeLayout *l)
{
	AxeAxes ax;
	int64_t t = 1;
	int i;

	axe_axes(l, &ax);
	for (i = 0; i < ax.n; i++)
		if (__builtin_mul_overflow(t, axe_span(l, ax.name[i]), &t))
			return -1;
	return t;
}


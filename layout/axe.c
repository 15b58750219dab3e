/* axe.c - Axe layouts: named axes, shard / replica / offset, and the operators of the Axe paper. */
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

static int
valid_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n >= AXE_NAME || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	return 1;
}

static void
setname(char *dst, const char *src)
{
	snprintf(dst, AXE_NAME, "%s", src);
}

static AxeIter
mkiter(int64_t e, int64_t s, const char *axis)
{
	AxeIter it;

	it.e = e;
	it.s = s;
	setname(it.axis, axis);
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
	setname(ax->name[ax->n], name);
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
static const char *
afmt(char *dst, const AxeLayout *l)
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

static const char *
sfmt(char *dst, const AxeShape *sh)
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
		if (!valid_name(it[i].axis))
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
		if (!valid_name(l->o[i].axis))
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
static int
add_offset(AxeLayout *l, const char *axis, int64_t v, Err *e)
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
	setname(l->o[l->no].axis, axis);
	l->o[l->no++].v = v;
	return 0;
}

static int64_t
offset_on(const AxeLayout *l, const char *axis)
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
		it[i] = mkiter(ext[i], str[i], axis[i]);
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
			if (add_offset(l, axis, v, e) < 0)
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
			               i, sfmt(b, sh));
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

static int64_t
shape_size(const AxeShape *sh)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < sh->n; i++)
		if (__builtin_mul_overflow(n, sh->v[i], &n))
			return -1;
	return n;
}

static int
check_shape(const AxeShape *sh, const char *op, Err *e)
{
	int i;

	if (sh->n < 1 || sh->n > AXE_RANK)
		return err_set(e, "%s: a shape has 1 to %d modes", op, AXE_RANK);
	for (i = 0; i < sh->n; i++)
		if (sh->v[i] < 1)
			return err_set(e, "%s: shape extent %lld is not >= 1", op, (long long)sh->v[i]);
	if (shape_size(sh) < 0 || shape_size(sh) >= CUTE_SIZE_LIMIT)
		return err_set(e, "%s: shape too large", op);
	return 0;
}

/* D(x) + O, added into v on the axes ax (which must hold the layout's axes). */
static void
base_into(const AxeLayout *l, int64_t x, const AxeAxes *ax, int64_t *v)
{
	int i;

	for (i = 0; i < ax->n; i++)
		v[i] = offset_on(l, ax->name[i]);
	for (i = l->nd - 1; i >= 0; i--) {
		int64_t d = x % l->d[i].e;
		x /= l->d[i].e;
		v[axe_axes_index(ax, l->d[i].axis)] += d * l->d[i].s;
	}
}

/* Replica j (row-major over R's extents), added into v. */
static void
replica_into(const AxeLayout *l, int64_t j, const AxeAxes *ax, int64_t *v)
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
	base_into(l, x, ax, v);
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
		return err_set(e, "apply: %lld replicas are more than %lld", (long long)nrep,
		               (long long)AXE_ENUM_LIMIT);
	axe_axes(l, &ax);
	base_into(l, x, &ax, base);
	for (j = 0; j < nrep && j < max; j++) {
		out[j].ax = ax;
		memcpy(out[j].v, base, sizeof base);
		replica_into(l, j, &ax, out[j].v);
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
		return err_set(e, "find: %lld elements x %lld replicas are more than %lld to enumerate",
		               (long long)size, (long long)nrep, (long long)AXE_ENUM_LIMIT);
	for (i = 0; i < q->ax.n; i++)
		at[i] = axe_axes_index(&ax, q->ax.name[i]);
	*n = 0;
	for (x = 0; x < size; x++)
		for (j = 0; j < nrep; j++) {
			int ok = 1;
			base_into(l, x, &ax, v);
			replica_into(l, j, &ax, v);
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
			if (add_offset(l, it.axis, (it.e - 1) * it.s, e) < 0)
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
static int64_t
sort_rows(int64_t *r, int64_t n, int na)
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
static int64_t
fiber(const AxeLayout *l, int64_t x, const AxeAxes *ax, int64_t *buf)
{
	int64_t nrep = axe_nreplicas(l), j, k = 0, base[AXE_AXES];
	int na = ax->n;

	base_into(l, x, ax, base);
	for (j = 0; j < nrep; j++) {
		memcpy(buf + j * na, base, (size_t)na * sizeof base[0]);
		replica_into(l, j, ax, buf + j * na);
	}
	(void)k;
	return sort_rows(buf, nrep, na);
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
		return err_set(e, "%lld elements x %lld replicas are too many to enumerate", (long long)size,
		               (long long)(na > nb ? na : nb));
	fa = malloc((size_t)na * AXE_AXES * sizeof *fa);
	fb = malloc((size_t)nb * AXE_AXES * sizeof *fb);
	if (!fa || !fb) {
		free(fa);
		free(fb);
		return err_set(e, "out of memory");
	}
	for (x = 0; x < size; x++) {
		ka = fiber(a, x, &ax, fa);
		kb = fiber(b, x, &ax, fb);
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

	if (axe_check(l, e) < 0 || check_shape(sh, "group", e) < 0)
		return -1;
	if (shape_size(sh) != axe_size(l))
		return err_set(e, "group: %s has size %lld, shape %s has %lld", afmt(a, l),
		               (long long)axe_size(l), sfmt(b, sh), (long long)shape_size(sh));
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
				out->d[n++] = mkiter(ext, c.d[i].s, c.d[i].axis);
				acc *= ext;
				ext = 1;
			} else if (ext % need == 0) {
				out->d[n++] = mkiter(need, c.d[i].s * (ext / need), c.d[i].axis);
				acc *= need;
				ext /= need;
			} else {
				return err_set(e, "group: %s cannot be grouped by %s: mode %d (extent %lld) "
				               "needs a factor %lld more, but iter %lld:%lld@%s neither divides "
				               "it nor splits by it", afmt(a, l), sfmt(b, sh), k,
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

	if (check_shape(sa, op, e) < 0 || check_shape(sb, op, e) < 0)
		return -1;
	if (sa->n != sb->n)
		return err_set(e, "%s: shapes of rank %d and %d; both need the same rank", op, sa->n, sb->n);
	prod->n = sa->n;
	for (i = 0; i < sa->n; i++)
		if (ck_mul(sa->v[i], sb->v[i], &prod->v[i], e) < 0)
			return -1;
	return check_shape(prod, op, e);
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
		if (add_offset(&o, a->o[i].axis, v, e) < 0)
			return -1;
	}
	for (i = 0; i < b->no; i++)
		if (add_offset(&o, b->o[i].axis, b->o[i].v, e) < 0)
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
	base_into(l, x, &ax, vl);
	base_into(t, x, &ax, vt);
	return err_set(e, "%s: %s is not %s: element %s maps to %s but %s", op, afmt(a, l), what,
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
	base_into(b, 0, &ax, vb0);
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
		base_into(l, x, &ax, vl);
		base_into(l, xo, &ax, vo);
		base_into(b, xi, &ax, vb);
		for (k = 0; k < ax.n; k++)
			want[k] = vo[k] + vb[k] - vb0[k];
		for (k = 0; k < ax.n; k++)
			if (want[k] != vl[k])
				return err_set(e, "tile_of: %s is not a tile of %s: element %s maps to %s but the atom "
				               "predicts %s (from its tile's origin)", afmt(s1, ul), afmt(s2, ub),
				               cfmt(c1, sl, x), pfmt(p1, &ax, vl), pfmt(p2, &ax, want));
		if (x == xo)  /* a tile origin: minus B(0), a multiple of B's span on every axis */
			for (k = 0; k < ax.n; k++) {
				int64_t sp = axe_span(b, ax.name[k]), d = vl[k] - vb0[k];
				if (d % sp != 0)
					return err_set(e, "tile_of: %s is not a tile of %s: the tile at %s starts at "
					               "%s=%lld, but tiles start at multiples of the atom's span %lld "
					               "(plus the atom's own origin %lld)", afmt(s1, ul), afmt(s2, ub),
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
	    check_shape(sl, "tile_of", e) < 0 || check_shape(sb, "tile_of", e) < 0)
		return -1;
	if (sl->n != sb->n)
		return err_set(e, "tile_of: shapes %s and %s differ in rank", sfmt(s1, sl), sfmt(s2, sb));
	if (2 * sl->n > AXE_RANK)
		return err_set(e, "tile_of: rank %d is more than %d", sl->n, AXE_RANK / 2);
	sc.n = sl->n;
	inter.n = 2 * sl->n;
	for (i = 0; i < sl->n; i++) {
		if (sl->v[i] % sb->v[i] != 0)
			return err_set(e, "tile_of: the atom's shape %s does not divide %s (mode %d: %lld by %lld)",
			               sfmt(s1, sb), sfmt(s2, sl), i, (long long)sl->v[i], (long long)sb->v[i]);
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
		return err_set(e, "tile_of: %s is not a tile of %s: %s", afmt(s1, l), afmt(s2, b), tmp.msg);
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
				               "multiple of the atom's span %lld on %s", afmt(s1, l), afmt(s2, b),
				               (long long)gl.d[k].e, (long long)gl.d[k].s, gl.d[k].axis,
				               (long long)sp, gl.d[k].axis);
			c.d[c.nd++] = mkiter(gl.d[k].e, gl.d[k].s / sp, gl.d[k].axis);
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
			               afmt(s1, l), (long long)w);
		c.r[c.nr++] = mkiter(cl.r[i].e, cl.r[i].s / w, cl.r[i].axis);
	}
	/* O_C = (O_L - O_B) / span(B), axis by axis */
	{
		AxeAxes ax;
		axe_axes(&cl, &ax);
		for (i = 0; i < cb.no; i++)
			if (axe_axes_add(&ax, cb.o[i].axis, e) < 0)
				return -1;
		for (i = 0; i < ax.n; i++) {
			int64_t d = offset_on(&cl, ax.name[i]) - offset_on(&cb, ax.name[i]);
			w = axe_span(&cb, ax.name[i]);
			if (d % w != 0)
				return err_set(e, "tile_of: %s is not a tile of %s: the offset difference %lld on "
				               "%s is not a multiple of the atom's span %lld", afmt(s1, l),
				               afmt(s2, b), (long long)d, ax.name[i], (long long)w);
			if (add_offset(&c, ax.name[i], d / w, e) < 0)
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
		               afmt(s1, l), afmt(s2, b), afmt(s3, &c));
	}
	*out = c;
	return 0;
mismatch:
	/* the structural scan failed: name the element where possible */
	if (diagnose(l, sl, b, sb, e) < 0)
		return -1;
	return err_set(e, "tile_of: %s is not a tile of %s: at mode %d the atom's iters are not the "
	               "tail of L's block (L grouped by %s is %s)", afmt(s1, l), afmt(s2, b), i,
	               sfmt(s3, &inter), afmt(s4, &gl));
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
				o.d[n++] = mkiter(w, blk[p].s, blk[p].axis);
			} else if (w % 2 == 0 && u[p] + w / 2 == blk[p].e && p > 0 &&
			           u[p - 1] + 1 < blk[p - 1].e && strcmp(blk[p - 1].axis, blk[p].axis) == 0 &&
			           blk[p - 1].s - u[p] * blk[p].s != 0) {     /* symmetric one-wrap */
				o.d[n++] = mkiter(2, blk[p - 1].s - u[p] * blk[p].s, blk[p].axis);
				o.d[n++] = mkiter(w / 2, blk[p].s, blk[p].axis);
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
				               afmt(s1, l), i, (long long)begin[i], (long long)(begin[i] + ext[i]),
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
	base_into(&g, x0, &ax, v);
	for (i = 0; i < ax.n; i++)
		if (v[i] != 0 && add_offset(&o, ax.name[i], v[i], e) < 0)
			return -1;
	if (axe_check(&o, e) < 0)
		return -1;
	*out = o;
	return 0;
}

/*
** CuTe <-> Axe on m. CuTe unflattens a mode's 1-D coordinate colexicographically
** (first sub-mode fastest), Axe row-major (last iter fastest): each top-level
** mode becomes a block of its leaves in reverse order.
*/
static int
leaves_rev(const Layout *c, int at, AxeIter *it, int *n, Err *e)
{
	int k = c->shape.node[at].kids, i, ch;

	if (k == T_LEAF) {
		int64_t s = c->shape.node[at].v, d = c->stride.node[at].v;
		if (s == 1)
			return 0;
		if (d == 0)
			return err_set(e, "from_cute: a mode of extent %lld has stride 0 (a broadcast); "
			               "an Axe iter's stride is nonzero", (long long)s);
		if (*n >= AXE_ITERS)
			return err_set(e, "from_cute: more than %d leaves", AXE_ITERS);
		/* leaves come in reverse: shift the block right by one */
		memmove(it + 1, it, (size_t)*n * sizeof *it);
		it[0] = mkiter(s, d, "m");
		(*n)++;
		return 0;
	}
	for (i = 0; i < k; i++) {
		ch = tuple_child(&c->shape, at, i);
		if (leaves_rev(c, ch, it, n, e) < 0)
			return -1;
	}
	return 0;
}

int
axe_from_cute(const Layout *c, AxeLayout *out, AxeShape *sh, Err *e)
{
	AxeIter blk[AXE_ITERS];
	int rank = cute_rank(c), i, nb, at;

	memset(out, 0, sizeof *out);
	if (rank > AXE_RANK)
		return err_set(e, "from_cute: rank %d is more than %d", rank, AXE_RANK);
	sh->n = rank;
	for (i = 0; i < rank; i++) {
		at = c->shape.node[0].kids == T_LEAF ? 0 : tuple_child(&c->shape, 0, i);
		nb = 0;
		if (leaves_rev(c, at, blk, &nb, e) < 0)
			return -1;
		if (out->nd + nb > AXE_ITERS)
			return err_set(e, "from_cute: more than %d leaves", AXE_ITERS);
		memcpy(out->d + out->nd, blk, (size_t)nb * sizeof blk[0]);
		out->nd += nb;
		sh->v[i] = node_product(&c->shape, at);
	}
	return axe_check(out, e);
}

int
axe_to_cute(const AxeLayout *l, const AxeShape *sh, Layout *out, Err *e)
{
	AxeLayout g;
	char s1[FMT_MAX];
	int seps[AXE_RANK + 1], i, k, top = -1, at;

	if (l->nr)
		return err_set(e, "to_cute: %s has replicas; a CuTe layout has none", afmt(s1, l));
	for (i = 0; i < l->no; i++)
		if (l->o[i].v)
			return err_set(e, "to_cute: %s has an offset; a CuTe layout has none", afmt(s1, l));
	for (i = 0; i < l->nd; i++)
		if (strcmp(l->d[i].axis, "m") != 0)
			return err_set(e, "to_cute: %s uses axis %s; a CuTe layout is on m only", afmt(s1, l),
			               l->d[i].axis);
	if (axe_group(l, sh, &g, seps, e) < 0) {
		Err t = *e;
		return err_set(e, "to_cute: %s", t.msg);
	}
	out->shape.n = out->stride.n = 0;
	if (sh->n > 1 && ((top = tuple_open(&out->shape, e)) < 0 || tuple_open(&out->stride, e) < 0))
		return -1;
	for (i = 0; i < sh->n; i++) {
		int nb = seps[i + 1] - seps[i];
		if (nb == 0) {
			if (tuple_push(&out->shape, 1, e) < 0 || tuple_push(&out->stride, 0, e) < 0)
				return -1;
			continue;
		}
		if (nb == 1) {
			if (tuple_push(&out->shape, g.d[seps[i]].e, e) < 0 ||
			    tuple_push(&out->stride, g.d[seps[i]].s, e) < 0)
				return -1;
			continue;
		}
		if ((at = tuple_open(&out->shape, e)) < 0 || tuple_open(&out->stride, e) < 0)
			return -1;
		for (k = seps[i + 1] - 1; k >= seps[i]; k--)
			if (tuple_push(&out->shape, g.d[k].e, e) < 0 || tuple_push(&out->stride, g.d[k].s, e) < 0)
				return -1;
		tuple_close(&out->shape, at);
		tuple_close(&out->stride, at);
	}
	if (top >= 0) {
		tuple_close(&out->shape, top);
		tuple_close(&out->stride, top);
	}
	return cute_make(out, &out->shape, &out->stride, e);
}

/*
** Fitting a layout to an enumerated map. Row-major D is recovered from the
** base map g(x) = min(fiber(x)) - O (Lemma A.13: with positive replica
** strides the fiber minimum under positive weights is D(x) + O): the fastest
** iter's stride is the first difference g(1) - g(0), its extent the first x
** where the difference changes (a normalized list has no mergeable chain, so
** the carry always changes it); then recurse on g(k * e). The replica set is
** fitted the same way from the sorted fiber of element 0. The result is
** checked against the whole map.
*/
static int
fit_list(int64_t n, int na, const int64_t *g, AxeIter *it, int *nit, const AxeAxes *ax, Err *e)
{
	int64_t step = 1, cnt = n, x, k;
	int m = 0, i;
	AxeIter rev[AXE_ITERS];

	while (cnt > 1) {
		const int64_t *a = g + step * na * 0, *b = g + step * na;
		int64_t ext = cnt;
		int nz = -1, same;
		for (i = 0; i < na; i++)
			if (b[i] != a[i]) {
				if (nz >= 0)
					return err_set(e, "fit: one step moves two axes (%s and %s)", ax->name[nz], ax->name[i]);
				nz = i;
			}
		if (nz < 0)
			return err_set(e, "fit: two consecutive elements have the same coordinate (a stride 0)");
		for (x = 1; x + 1 < cnt; x++) {
			const int64_t *p = g + step * na * x, *q = g + step * na * (x + 1);
			same = 1;
			for (i = 0; i < na && same; i++)
				same = q[i] - p[i] == b[i] - a[i];
			if (!same) {
				ext = x + 1;
				break;
			}
		}
		while (cnt % ext != 0 && ext < cnt)
			ext++;
		if (m >= AXE_ITERS)
			return err_set(e, "fit: more than %d iters", AXE_ITERS);
		rev[m++] = mkiter(ext, b[nz] - a[nz], ax->name[nz]);
		step *= ext;
		cnt /= ext;
	}
	for (k = 0; k < m; k++)
		it[k] = rev[m - 1 - k];
	*nit = m;
	return 0;
}

int
axe_fit(int64_t size, const AxeAxes *ax, const int64_t *const *fib, const int *nf, AxeLayout *out, Err *e)
{
	int na = ax->n, i, j, best, same;
	int64_t x, *g, off[AXE_AXES], *r0 = NULL, where;
	AxeLayout o;

	if (size < 1 || size > AXE_ENUM_LIMIT)
		return err_set(e, "fit: %lld elements", (long long)size);
	if (!(g = malloc((size_t)(size * na + 1) * sizeof *g)))
		return err_set(e, "fit: out of memory");
	memset(&o, 0, sizeof o);
	for (x = 0; x < size; x++) {
		int64_t bw = 0, w;
		if (nf[x] < 1) {
			free(g);
			return err_set(e, "fit: element %lld has no coordinate", (long long)x);
		}
		best = 0;
		for (j = 0; j < nf[x]; j++) {
			for (w = 0, i = 0; i < na; i++)
				w += fib[x][j * na + i];
			if (j == 0 || w < bw) {
				bw = w;
				best = j;
			}
		}
		memcpy(g + x * na, fib[x] + best * na, (size_t)na * sizeof *g);
		if (x == 0)
			memcpy(off, g, (size_t)na * sizeof *g);
		for (i = 0; i < na; i++)
			g[x * na + i] -= off[i];
	}
	if (fit_list(size, na, g, o.d, &o.nd, ax, e) < 0)
		goto fail;
	for (i = 0; i < na; i++)
		if (off[i] && add_offset(&o, ax->name[i], off[i], e) < 0)
			goto fail;
	if (nf[0] > 1) {
		/* replica offsets of element 0, sorted by weight then lexicographically */
		if (!(r0 = malloc((size_t)nf[0] * na * sizeof *r0))) {
			err_set(e, "fit: out of memory");
			goto fail;
		}
		for (j = 0; j < nf[0]; j++)
			for (i = 0; i < na; i++)
				r0[j * na + i] = fib[0][j * na + i] - off[i];
		if (fit_list(sort_rows(r0, nf[0], na), na, r0, o.r, &o.nr, ax, e) < 0)
			goto fail;
	}
	if (axe_check(&o, e) < 0)
		goto fail;
	/* check the whole map */
	{
		int64_t *buf = malloc((size_t)axe_nreplicas(&o) * na * sizeof *buf + 1);
		same = 1;
		where = -1;
		if (!buf) {
			err_set(e, "fit: out of memory");
			goto fail;
		}
		for (x = 0; x < size && same; x++) {
			int64_t k = fiber(&o, x, ax, buf), m;
			int64_t *want = malloc((size_t)nf[x] * na * sizeof *want + 1);
			if (!want) {
				same = 0;
				break;
			}
			memcpy(want, fib[x], (size_t)nf[x] * na * sizeof *want);
			m = sort_rows(want, nf[x], na);
			same = k == m && memcmp(buf, want, (size_t)(k * na) * sizeof *buf) == 0;
			free(want);
			where = x;
		}
		free(buf);
		if (!same) {
			err_set(e, "fit: no Axe layout reproduces the map (the best candidate differs at element %lld)",
			        (long long)where);
			goto fail;
		}
	}
	free(g);
	free(r0);
	*out = o;
	return 0;
fail:
	free(g);
	free(r0);
	return -1;
}

int
axe_from_tv(const Layout *tv, const Layout *thr_id, int64_t m, int64_t n, int warps,
            AxeLayout *out, Err *e)
{
	Layout m0;
	AxeAxes ax;
	int64_t size = cute_size(tv), nthr, nval, t, v, idx, hw, tot, x;
	int64_t **fib = NULL, *store = NULL;
	int *nf = NULL, r = -1, na;

	if (m < 1 || n < 1 || m > AXE_ENUM_LIMIT / n || size > AXE_ENUM_LIMIT)
		return err_set(e, "from_tv: tile %lldx%lld or %lld (thr,val) pairs too large", (long long)m,
		               (long long)n, (long long)size);
	tot = m * n;
	if (cute_rank(tv) >= 2) {
		if (cute_mode(tv, 0, &m0, e) < 0)
			return -1;
		nthr = cute_size(&m0);
	} else {
		nthr = size;
	}
	nval = size / nthr;
	ax.n = 0;
	if (warps)
		axe_axes_add(&ax, "warp", e);
	axe_axes_add(&ax, "lane", e);
	axe_axes_add(&ax, "reg", e);
	na = ax.n;
	/* each element gets the (thr,val) pairs that hold it; cap = most per element */
	nf = calloc((size_t)tot, sizeof *nf);
	fib = calloc((size_t)tot, sizeof *fib);
	store = malloc((size_t)(size + tot) * na * sizeof *store);
	if (!nf || !fib || !store) {
		err_set(e, "from_tv: out of memory");
		goto done;
	}
	/* two passes: count, then place */
	for (t = 0; t < nthr; t++)
		for (v = 0; v < nval; v++) {
			if (cute_eval_idx(tv, t + nthr * v, &idx, e) < 0)
				goto done;
			if (idx < 0 || idx >= tot) {
				err_set(e, "from_tv: (thr,val) = (%lld,%lld) maps to %lld, outside the %lldx%lld tile",
				        (long long)t, (long long)v, (long long)idx, (long long)m, (long long)n);
				goto done;
			}
			nf[(idx % m) * n + idx / m]++;
		}
	{
		int64_t pos = 0;
		for (x = 0; x < tot; x++) {
			if (nf[x] == 0) {
				err_set(e, "from_tv: element (%lld,%lld) of the %lldx%lld tile is held by no thread",
				        (long long)(x / n), (long long)(x % n), (long long)m, (long long)n);
				goto done;
			}
			fib[x] = store + pos * na;
			pos += nf[x];
			nf[x] = 0;
		}
	}
	for (t = 0; t < nthr; t++) {
		hw = t;
		if (thr_id && cute_eval_idx(thr_id, t, &hw, e) < 0)
			goto done;
		if (!warps && hw >= 32) {
			err_set(e, "from_tv: thread %lld is not in one warp; ask for (warp, lane, reg)", (long long)hw);
			goto done;
		}
		for (v = 0; v < nval; v++) {
			int64_t *row;
			cute_eval_idx(tv, t + nthr * v, &idx, e);
			x = (idx % m) * n + idx / m;
			row = fib[x] + (int64_t)nf[x]++ * na;
			if (warps) {
				row[0] = hw / 32;
				row[1] = hw % 32;
				row[2] = v;
			} else {
				row[0] = hw;
				row[1] = v;
			}
		}
	}
	if (axe_fit(tot, &ax, (const int64_t *const *)fib, nf, out, e) < 0) {
		Err tmp = *e;
		err_set(e, "from_tv: %s", tmp.msg);
		goto done;
	}
	r = 0;
done:
	free(nf);
	free(fib);
	free(store);
	return r;
}

/*
** Distributed tensors
*/
static int
check_mesh(const AxeMesh *mesh, const int *placement, int rank, Err *e)
{
	int j;

	if (mesh->n < 1 || mesh->n > AXE_RANK)
		return err_set(e, "dtensor: a mesh has 1 to %d dimensions", AXE_RANK);
	for (j = 0; j < mesh->n; j++) {
		if (!valid_name(mesh->name[j]))
			return err_set(e, "dtensor: '%s' is not an axis name", mesh->name[j]);
		if (mesh->size[j] < 1 || mesh->size[j] > (1 << 20))
			return err_set(e, "dtensor: mesh dimension %s has size %lld", mesh->name[j],
			               (long long)mesh->size[j]);
		if (placement && (placement[j] < AXE_REPLICATE || placement[j] >= rank))
			return err_set(e, "dtensor: mesh dimension %s shards dimension %d of a rank-%d tensor",
			               mesh->name[j], placement[j], rank);
	}
	return 0;
}

/* The stride of mesh dim j on its axis: mesh dims sharing a name flatten row-major. */
static int64_t
mesh_stride(const AxeMesh *mesh, int j)
{
	int64_t s = 1;
	int k;

	for (k = j + 1; k < mesh->n; k++)
		if (strcmp(mesh->name[k], mesh->name[j]) == 0)
			s *= mesh->size[k];
	return s;
}

int
axe_dtensor(const AxeShape *sh, const AxeMesh *mesh, const int *placement, AxeLayout *out, Err *e)
{
	AxeLayout o;
	int64_t local[AXE_RANK], mstride[AXE_RANK], s = 1;
	int d, j;

	if (check_shape(sh, "dtensor", e) < 0 || check_mesh(mesh, placement, sh->n, e) < 0)
		return -1;
	for (d = 0; d < sh->n; d++) {
		local[d] = sh->v[d];
		for (j = 0; j < mesh->n; j++)
			if (placement[j] == d) {
				if (local[d] % mesh->size[j] != 0)
					return err_set(e, "dtensor: dimension %d (%lld) does not split evenly over %s (%lld)",
					               d, (long long)sh->v[d], mesh->name[j], (long long)mesh->size[j]);
				local[d] /= mesh->size[j];
			}
	}
	for (d = sh->n - 1; d >= 0; d--) {
		mstride[d] = s;
		s *= local[d];
	}
	memset(&o, 0, sizeof o);
	for (d = 0; d < sh->n; d++) {
		for (j = 0; j < mesh->n; j++)
			if (placement[j] == d && o.nd < AXE_ITERS)
				o.d[o.nd++] = mkiter(mesh->size[j], mesh_stride(mesh, j), mesh->name[j]);
		if (o.nd >= AXE_ITERS)
			return err_set(e, "dtensor: too many iters");
		o.d[o.nd++] = mkiter(local[d], mstride[d], "m");
	}
	for (j = 0; j < mesh->n; j++)
		if (placement[j] == AXE_REPLICATE)
			o.r[o.nr++] = mkiter(mesh->size[j], mesh_stride(mesh, j), mesh->name[j]);
	if (axe_check(&o, e) < 0)
		return -1;
	*out = o;
	return 0;
}

int
axe_to_dtensor(const AxeLayout *l, const AxeShape *sh, const AxeMesh *mesh, int *placement, Err *e)
{
	int p[AXE_RANK], j, same;
	int64_t combos = 1, c, k, where;
	AxeLayout cand;
	Err tmp;
	char s1[FMT_MAX];

	if (check_shape(sh, "to_dtensor", e) < 0 || check_mesh(mesh, NULL, sh->n, e) < 0)
		return -1;
	for (j = 0; j < mesh->n; j++)
		if (__builtin_mul_overflow(combos, sh->n + 1, &combos) || combos > 100000)
			return err_set(e, "to_dtensor: too many placements to try");
	/* try every placement: (rank+1)^(mesh dims) candidates */
	for (c = 0; c < combos; c++) {
		for (k = c, j = 0; j < mesh->n; j++, k /= sh->n + 1)
			p[j] = (int)(k % (sh->n + 1)) - 1;
		if (axe_dtensor(sh, mesh, p, &cand, &tmp) < 0)
			continue;
		/* candidates satisfy GC, so equal canonical forms decide; enumerate only small ones */
		{
			AxeLayout c1, c2;
			if (axe_canonicalize(&cand, &c1, NULL, &tmp) == 0 && axe_canonicalize(l, &c2, NULL, &tmp) == 0 &&
			    axe_equal(&c1, &c2))
				same = 1;
			else if (axe_size(l) * axe_nreplicas(l) <= 65536 && axe_size(l) == axe_size(&cand))
				same = axe_equivalent(&cand, l, &same, &where, &tmp) == 0 && same;
			else
				same = 0;
		}
		if (same) {
			memcpy(placement, p, (size_t)mesh->n * sizeof *p);
			return 0;
		}
	}
	return err_set(e, "to_dtensor: %s is no Shard/Replicate placement of shape over the mesh", afmt(s1, l));
}

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
		base_into(l, x, &ax, b0);
		mem = -1;
		for (k = 1; k < v; k++) {
			base_into(l, x + k, &ax, b);
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
		return err_set(e, "vector_width: %lld elements are too many to enumerate", (long long)size);
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
		it[0] = mkiter(1, 1, "lane");
		return axe_make(out, it, 1, NULL, 0, NULL, 0, e);
	}
	if (strcmp(name, "warp") == 0) {
		it[0] = mkiter(32, 1, "lane");
		return axe_make(out, it, 1, NULL, 0, NULL, 0, e);
	}
	if (strcmp(name, "warpgroup") == 0)
		threads = 128;
	else if (strcmp(name, "cta") != 0)
		return err_set(e, "scope: '%s' is not thread, warp, warpgroup or cta", name);
	if (threads < 32 || threads % 32 != 0 || threads > 1024)
		return err_set(e, "scope: a cta of %lld threads is not a multiple of 32 in 32..1024", (long long)threads);
	it[0] = mkiter(threads / 32, 1, "warp");
	it[1] = mkiter(32, 1, "lane");
	return axe_make(out, it, 2, NULL, 0, NULL, 0, e);
}

int
axe_warps(int64_t lo, int64_t hi, AxeLayout *out, Err *e)
{
	AxeIter it[2];
	AxeOff o;

	if (lo < 0 || hi <= lo || hi > 32)
		return err_set(e, "warps: [%lld, %lld) is not a nonempty range of warps 0..32", (long long)lo, (long long)hi);
	it[0] = mkiter(hi - lo, 1, "warp");
	it[1] = mkiter(32, 1, "lane");
	setname(o.axis, "warp");
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
		return err_set(e, "tma: the %s layout %s has replicas", what, afmt(s1, l));
	for (i = 0; i < l->nd; i++)
		if (strcmp(l->d[i].axis, "m") != 0)
			return err_set(e, "tma: the %s layout %s uses axis %s; it must be on m", what, afmt(s1, l),
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
	if (check_shape(gs, "tma", e) < 0 || check_shape(ss, "tma", e) < 0)
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
	it[0] = mkiter(rows, w, "m");
	it[1] = mkiter(w, 1, "m");
	if (axe_make(&atom, r >= 2 ? it : it + 1, r >= 2 ? 2 : 1, NULL, 0, NULL, 0, e) < 0)
		return -1;
	if (w * elem_bytes % 16 != 0)
		return err_set(e, "tma: the box's inner extent %lld x %d bytes is not a multiple of 16 bytes",
		               (long long)w, elem_bytes);
	if (axe_tile_of(smem, ss, &atom, &as, &out->outer, &where, e) < 0) {
		Err t = *e;
		return err_set(e, "tma: shared memory is no tile of the %d-byte swizzle atom %s: %s", swizzle,
		               afmt(s1, &atom), t.msg);
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
			               (long long)gs->v[d], afmt(s1, global));
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
		ta[m] = mkiter(step, sa, a[i].axis);
		tb[m] = mkiter(step, sb, b[j].axis);
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

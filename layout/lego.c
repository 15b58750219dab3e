/* lego.c - LEGO layouts: RegP, GenP, OrderBy, GroupBy, ExpandBy as plain values, evaluated as step programs. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
** Notation, for printing and for messages
*/
static void
dims_print(Buf *b, const int64_t *d, int n)
{
	int k;

	emit(b, "{");
	for (k = 0; k < n; k++)
		emit(b, "%s%lld", k ? "," : "", (long long)d[k]);
	emit(b, "}");
}

static void
ints_print(Buf *b, const int *d, int n)
{
	int k;

	emit(b, "{");
	for (k = 0; k < n; k++)
		emit(b, "%s%d", k ? "," : "", d[k]);
	emit(b, "}");
}

/* A coordinate as (1,2), for messages. */
static void
crd_print(Buf *b, const int64_t *x, int n)
{
	int k;

	emit(b, "(");
	for (k = 0; k < n; k++)
		emit(b, "%s%lld", k ? "," : "", (long long)x[k]);
	emit(b, ")");
}

static const char *const gen_name[] = {
	[LEGO_GEN_USER] = "user", [LEGO_GEN_IDENTITY] = "identity", [LEGO_GEN_REVERSE] = "reverse",
	[LEGO_GEN_ANTIDIAG] = "antidiagonal", [LEGO_GEN_MORTON] = "morton",
	[LEGO_GEN_MORTON_ROW] = "morton_rowmajor",
};

static void
perm_print(Buf *b, const LegoPerm *p)
{
	int k, d;

	if (p->kind == LEGO_REGP) {
		switch (p->sugar) {
		case LEGO_SUGAR_ROW:
		case LEGO_SUGAR_COL:
			emit(b, "lego.%s(", p->sugar == LEGO_SUGAR_ROW ? "Row" : "Col");
			for (k = 0; k < p->rank; k++)
				emit(b, "%s%lld", k ? "," : "", (long long)p->dim[k]);
			emit(b, ")");
			return;
		case LEGO_SUGAR_TILEBY:
			d = p->rank / p->q;
			emit(b, "lego.TileBy(");
			for (k = 0; k < p->q; k++) {
				if (k)
					emit(b, ", ");
				dims_print(b, p->dim + k * d, d);
			}
			emit(b, ")");
			return;
		default:
			emit(b, "lego.RegP(");
			dims_print(b, p->dim, p->rank);
			emit(b, ", ");
			ints_print(b, p->perm, p->rank);
			emit(b, ")");
			return;
		}
	}
	emit(b, "lego.GenP(");
	dims_print(b, p->dim, p->rank);
	if (p->gen == LEGO_GEN_USER) {
		emit(b, ", %s)", p->label);
		return;
	}
	emit(b, ", \"%s\"", gen_name[p->gen]);
	if (p->gen == LEGO_GEN_REVERSE && p->mask != (1u << p->rank) - 1) {
		int first = 1;
		emit(b, ", {");
		for (k = 0; k < p->rank; k++)
			if (p->mask >> k & 1) {
				emit(b, "%s%d", first ? "" : ",", k);
				first = 0;
			}
		emit(b, "}");
	}
	emit(b, ")");
}

static void
order_print(Buf *b, const LegoOrder *o, int bare)
{
	int k, d;

	if (o->tiled) {
		d = o->part[0].rank / o->q;
		emit(b, "lego.TileOrderBy(");
		for (k = 0; k < o->q; k++) {
			int j;
			emit(b, "%s{", k ? ", " : "");
			/* the stripmined dimensions are interleaved: level k of dim j at j*q + k */
			for (j = 0; j < d; j++)
				emit(b, "%s%lld", j ? "," : "", (long long)o->part[0].dim[j * o->q + k]);
			emit(b, "}");
		}
		emit(b, ")");
		return;
	}
	if (!bare)
		emit(b, "lego.OrderBy(");
	for (k = 0; k < o->nparts; k++) {
		if (k)
			emit(b, ", ");
		perm_print(b, &o->part[k]);
	}
	if (!bare)
		emit(b, ")");
}

static int
default_edims(const Lego *g, int n, int64_t *edim)
{
	int k, h, q;

	if (n < 1 || g->rank % n)
		return -1;
	q = g->rank / n;
	for (k = 0; k < n; k++) {
		edim[k] = 1;
		for (h = 0; h < q; h++)
			edim[k] *= g->dim[h * n + k];   /* no overflow: the product is the size */
	}
	return 0;
}

void
lego_print(Buf *b, const Lego *g)
{
	int i, k, at;

	switch (g->kind) {
	case LEGO_PERM:
		perm_print(b, &g->chain[0].part[0]);
		return;
	case LEGO_ORDER:
		order_print(b, &g->chain[0], 0);
		return;
	case LEGO_CHAINED:
		order_print(b, &g->chain[0], 0);
		for (i = 1; i < g->nchain; i++) {
			emit(b, ":OrderBy(");
			order_print(b, &g->chain[i], 1);
			emit(b, ")");
		}
		return;
	}
	if (g->erank)
		emit(b, "lego.ExpandBy(");
	emit(b, "lego.GroupBy(");
	if (g->ngroup <= 1) {
		dims_print(b, g->dim, g->rank);
	} else {
		emit(b, "{");
		for (i = 0, at = 0; i < g->ngroup; at += g->glen[i], i++) {
			if (i)
				emit(b, ",");
			dims_print(b, g->dim + at, g->glen[i]);
		}
		emit(b, "}");
	}
	for (i = 0; i < g->nchain; i++) {
		emit(b, ", ");
		order_print(b, &g->chain[i], 0);
	}
	emit(b, ")");
	if (g->erank) {
		int64_t d[LEGO_DIMS];
		int same = default_edims(g, g->erank, d) == 0;

		for (k = 0; same && k < g->erank; k++)
			same = d[k] == g->edim[k];
		emit(b, ", ");
		dims_print(b, g->odim, g->erank);
		if (!same) {
			emit(b, ", ");
			dims_print(b, g->edim, g->erank);
		}
		emit(b, ")");
	}
}

/* The notation of a value in dst (truncated), for messages. */
enum { NOTE_MAX = 200 };

static const char *
note(char *dst, const Lego *g)
{
	Buf b;

	buf_init(&b);
	lego_print(&b, g);
	snprintf(dst, NOTE_MAX, "%s%s", b.s ? b.s : "?", b.len >= NOTE_MAX ? "..." : "");
	if (b.len >= NOTE_MAX)
		memcpy(dst + NOTE_MAX - 4, "...", 4);
	buf_free(&b);
	return dst;
}

static const char *
pnote(char *dst, const LegoPerm *p)
{
	Buf b;

	buf_init(&b);
	perm_print(&b, p);
	snprintf(dst, NOTE_MAX, "%s", b.s ? b.s : "?");
	if (b.len >= NOTE_MAX)
		memcpy(dst + NOTE_MAX - 4, "...", 4);
	buf_free(&b);
	return dst;
}

static const char *
cnote(char *dst, size_t n, const int64_t *x, int r)
{
	Buf b;

	buf_init(&b);
	crd_print(&b, x, r);
	snprintf(dst, n, "%s", b.s ? b.s : "?");
	buf_free(&b);
	return dst;
}

/*
** Dimensions
*/
static int
check_dims(const char *op, const int64_t *dims, int rank, int64_t *size, Err *e)
{
	int64_t s = 1;
	int k;

	if (rank < 1 || rank > LEGO_DIMS)
		return err_set(e, "%s: %d dimensions; 1 to %d are supported", op, rank, LEGO_DIMS);
	for (k = 0; k < rank; k++) {
		if (dims[k] < 1)
			return err_set(e, "%s: dimension %d is %lld; dimensions must be >= 1", op, k,
			               (long long)dims[k]);
		if (s > CUTE_SIZE_LIMIT / dims[k])
			return err_set(e, "%s: the dimensions have more than 2^62 elements", op);
		s *= dims[k];
	}
	if (size)
		*size = s;
	return 0;
}

static int64_t
prod(const int64_t *d, int n)
{
	int64_t s = 1;
	int k;

	for (k = 0; k < n; k++)
		s *= d[k];
	return s;
}

static int64_t
perm_size(const LegoPerm *p)
{
	return prod(p->dim, p->rank);
}

static int64_t
order_size(const LegoOrder *o)
{
	int64_t s = 1;
	int k;

	for (k = 0; k < o->nparts; k++)
		s *= perm_size(&o->part[k]);
	return s;
}

static int
order_dims(const LegoOrder *o, int64_t *d)
{
	int k, j, n = 0;

	for (k = 0; k < o->nparts; k++)
		for (j = 0; j < o->part[k].rank; j++)
			d[n++] = o->part[k].dim[j];
	return n;
}

static void
lego_zero(Lego *g)
{
	memset(g, 0, sizeof *g);
}

/* A value holding one permutation. */
static void
from_perm(Lego *out, const LegoPerm *p)
{
	lego_zero(out);
	out->kind = LEGO_PERM;
	out->rank = p->rank;
	memcpy(out->dim, p->dim, sizeof p->dim);
	out->nchain = 1;
	out->chain[0].nparts = 1;
	out->chain[0].part[0] = *p;
}

/*
** Constructors
*/
int
lego_regp(Lego *out, const int64_t *dims, int rank, const int *perm, Err *e)
{
	LegoPerm p;
	int seen[LEGO_DIMS] = {0}, k;

	if (check_dims("lego.RegP", dims, rank, NULL, e) < 0)
		return -1;
	for (k = 0; k < rank; k++) {
		if (perm[k] < 0 || perm[k] >= rank)
			return err_set(e, "lego.RegP: perm[%d] = %d is outside 0..%d (the permutation is "
			               "0-based: physical dimension t is logical dimension perm[t])",
			               k, perm[k], rank - 1);
		if (seen[perm[k]]++)
			return err_set(e, "lego.RegP: perm names dimension %d twice; it must be a "
			               "permutation of 0..%d", perm[k], rank - 1);
	}
	memset(&p, 0, sizeof p);
	p.kind = LEGO_REGP;
	p.rank = rank;
	memcpy(p.dim, dims, (size_t)rank * sizeof *dims);
	memcpy(p.perm, perm, (size_t)rank * sizeof *perm);
	from_perm(out, &p);
	return 0;
}

int
lego_row(Lego *out, const int64_t *dims, int rank, Err *e)
{
	int perm[LEGO_DIMS], k;

	if (check_dims("lego.Row", dims, rank, NULL, e) < 0)
		return -1;
	for (k = 0; k < rank; k++)
		perm[k] = k;
	lego_regp(out, dims, rank, perm, e);
	out->chain[0].part[0].sugar = LEGO_SUGAR_ROW;
	return 0;
}

int
lego_col(Lego *out, const int64_t *dims, int rank, Err *e)
{
	int perm[LEGO_DIMS], k;

	if (check_dims("lego.Col", dims, rank, NULL, e) < 0)
		return -1;
	for (k = 0; k < rank; k++)
		perm[k] = rank - 1 - k;
	lego_regp(out, dims, rank, perm, e);
	out->chain[0].part[0].sugar = LEGO_SUGAR_COL;
	return 0;
}

/* sigma_{d,q}: position k*q + h holds k + d*h (LEGO's get_sigma_perm). */
static void
sigma(int d, int q, int *s)
{
	int k, h;

	for (k = 0; k < d; k++)
		for (h = 0; h < q; h++)
			s[k * q + h] = k + d * h;
}

static int
check_tiles(const char *op, int d, int q, Err *e)
{
	if (d < 1 || q < 1 || d * q > LEGO_DIMS)
		return err_set(e, "%s: %d levels of %d dimensions; at most %d dimensions in all",
		               op, q, d, LEGO_DIMS);
	return 0;
}

int
lego_tileby(Lego *out, const int64_t *dims, int d, int q, Err *e)
{
	int s[LEGO_DIMS];

	if (check_tiles("lego.TileBy", d, q, e) < 0 || check_dims("lego.TileBy", dims, d * q, NULL, e) < 0)
		return -1;
	sigma(d, q, s);
	lego_regp(out, dims, d * q, s, e);
	out->chain[0].part[0].sugar = LEGO_SUGAR_TILEBY;
	out->chain[0].part[0].q = q;
	return 0;
}

int
lego_tileorderby(Lego *out, const int64_t *dims, int d, int q, Err *e)
{
	int64_t sm[LEGO_DIMS];
	int s[LEGO_DIMS], inv[LEGO_DIMS], k, h;

	if (check_tiles("lego.TileOrderBy", d, q, e) < 0 ||
	    check_dims("lego.TileOrderBy", dims, d * q, NULL, e) < 0)
		return -1;
	/* stripmined: dimension k's levels side by side, outer level first */
	for (k = 0; k < d; k++)
		for (h = 0; h < q; h++)
			sm[k * q + h] = dims[h * d + k];
	sigma(d, q, s);
	for (k = 0; k < d * q; k++)
		inv[s[k]] = k;
	lego_regp(out, sm, d * q, inv, e);
	out->kind = LEGO_ORDER;
	out->chain[0].tiled = 1;
	out->chain[0].q = q;
	return 0;
}

/* Antidiagonals need k*k to fit: rows + cols below 2^31. */
static int
check_gen(const char *op, const int64_t *dims, int rank, int gen, uint32_t mask, Err *e)
{
	int k;

	switch (gen) {
	case LEGO_GEN_IDENTITY:
		return 0;
	case LEGO_GEN_REVERSE:
		if (rank < 32 && (mask >> rank) != 0)
			return err_set(e, "%s: reverse names a dimension beyond the %d dimensions", op, rank);
		return 0;
	case LEGO_GEN_ANTIDIAG:
		if (rank != 2)
			return err_set(e, "%s: antidiagonal orders a 2-D tile; this one has %d dimensions",
			               op, rank);
		if (dims[0] + dims[1] > ((int64_t)1 << 31))
			return err_set(e, "%s: antidiagonal tile %lldx%lld is too large", op,
			               (long long)dims[0], (long long)dims[1]);
		return 0;
	case LEGO_GEN_MORTON:
	case LEGO_GEN_MORTON_ROW:
		for (k = 0; k < rank; k++)
			if (dims[k] & (dims[k] - 1))
				return err_set(e, "%s: morton needs power-of-two dimensions; dimension %d is %lld",
				               op, k, (long long)dims[k]);
		return 0;
	}
	return err_set(e, "%s: unknown built-in permutation %d", op, gen);
}

int
lego_genp(Lego *out, const int64_t *dims, int rank, int gen, uint32_t mask, Err *e)
{
	LegoPerm p;

	if (check_dims("lego.GenP", dims, rank, NULL, e) < 0 ||
	    check_gen("lego.GenP", dims, rank, gen, mask, e) < 0)
		return -1;
	memset(&p, 0, sizeof p);
	p.kind = LEGO_GENP;
	p.rank = rank;
	memcpy(p.dim, dims, (size_t)rank * sizeof *dims);
	p.gen = gen;
	p.mask = gen == LEGO_GEN_REVERSE ? (mask ? mask : (uint32_t)((1u << rank) - 1)) : 0;
	from_perm(out, &p);
	return 0;
}

/*
** The built-in GenPs. Each is written with integer operations only, so that
** the lowering to UOps can emit the same formulas (x = (x0..x_{r-1}) the
** tile coordinate, n the dimensions, f the flat index):
**
**   identity   apply f = sum_k x_k * prod_{j>k} n_j            (row-major)
**              inv   x_k = (f / prod_{j>k} n_j) % n_k
**   reverse    apply as identity on y_k = where(k reversed, n_k - 1 - x_k, x_k)
**              inv   unflatten, then the same where() (an involution)
**   antidiagonal (Figure 7; LEGO's antidiag() for n x n, here any r x c):
**              T(t) = max(t,0) * (max(t,0) + 1) / 2   cells strictly above diagonal t
**              B(k) = T(k) - T(k - r) - T(k - c) + T(k - r - c)   cells with i+j < k
**              apply f = B(i + j) + i - max(0, i + j - (c - 1))
**              inv   k = sum_{t=1}^{r+c-2} (B(t) <= f)   (comparisons with constants;
**                      equivalently, for r = c = n and f < n(n+1)/2,
**                      k = (isqrt(8f + 1) - 1) / 2)
**                    i = f - B(k) + max(0, k - (c - 1)),  j = k - i
**   morton     (Z-order; power-of-two dimensions) bit b of x_k goes to bit
**              p(k,b) of f, positions handed out round-robin from the first
**              dimension: for b = 0, 1, ...: for k = 0 to r-1: if
**              b < log2 n_k: p(k,b) = next++. For a square 2-D tile this is
**              LEGO's Morton2DFast, spread(i) | spread(j) << 1: the row index
**              on the even bits, so (0,1) -> 2 and a 2x2 tile is column-major.
**   morton_rowmajor  the same with positions handed out from the last
**              dimension (k = r-1 down to 0): the column on the even bits,
**              (0,1) -> 1, a 2x2 tile row-major.
**              apply f = sum_{k,b} ((x_k >> b) & 1) << p(k,b)
**              inv   x_k = sum_b ((f >> p(k,b)) & 1) << b
*/
static int64_t
tri(int64_t t)
{
	return t > 0 ? t * (t + 1) / 2 : 0;
}

static int64_t
before(int64_t k, int64_t r, int64_t c)
{
	return tri(k) - tri(k - r) - tri(k - c) + tri(k - r - c);
}

static int
log2i(int64_t n)
{
	int b = 0;

	while (((int64_t)1 << b) < n)
		b++;
	return b;
}

static int64_t
flatten(const int64_t *x, const int64_t *d, int n)
{
	int64_t f = 0;
	int k;

	for (k = 0; k < n; k++)
		f = f * d[k] + x[k];
	return f;
}

static void
unflatten(int64_t f, const int64_t *d, int n, int64_t *x)
{
	int k;

	for (k = n - 1; k >= 0; k--) {
		x[k] = f % d[k];
		f /= d[k];
	}
}

void
lego_morton_pos(const LegoPerm *p, int pos[][64], int *bits)
{
	int k, i, b, next = 0, maxb = 0;

	for (k = 0; k < p->rank; k++) {
		bits[k] = log2i(p->dim[k]);
		if (bits[k] > maxb)
			maxb = bits[k];
	}
	for (b = 0; b < maxb; b++)
		for (i = 0; i < p->rank; i++) {
			k = p->gen == LEGO_GEN_MORTON_ROW ? p->rank - 1 - i : i;
			if (b < bits[k])
				pos[k][b] = next++;
		}
}

static int
genp_apply(const LegoPerm *p, const int64_t *x, int64_t *f, Err *e)
{
	int64_t y[LEGO_DIMS], r, c, k, i;
	int pos[LEGO_DIMS][64], bits[LEGO_DIMS], j, b;
	char s[NOTE_MAX], cs[128];

	switch (p->gen) {
	case LEGO_GEN_IDENTITY:
		*f = flatten(x, p->dim, p->rank);
		return 0;
	case LEGO_GEN_REVERSE:
		for (j = 0; j < p->rank; j++)
			y[j] = p->mask >> j & 1 ? p->dim[j] - 1 - x[j] : x[j];
		*f = flatten(y, p->dim, p->rank);
		return 0;
	case LEGO_GEN_ANTIDIAG:
		r = p->dim[0];
		c = p->dim[1];
		i = x[0];
		k = x[0] + x[1];
		*f = before(k, r, c) + i - (k - (c - 1) > 0 ? k - (c - 1) : 0);
		return 0;
	case LEGO_GEN_MORTON:
	case LEGO_GEN_MORTON_ROW:
		lego_morton_pos(p, pos, bits);
		*f = 0;
		for (j = 0; j < p->rank; j++)
			for (b = 0; b < bits[j]; b++)
				*f |= ((x[j] >> b) & 1) << pos[j][b];
		return 0;
	}
	if (p->apply(p->ctx, x, p->rank, f, e) < 0)
		return -1;
	if (*f < 0 || *f >= perm_size(p))
		return err_set(e, "%s: apply%s = %lld is outside 0..%lld", pnote(s, p),
		               cnote(cs, sizeof cs, x, p->rank), (long long)*f,
		               (long long)perm_size(p) - 1);
	return 0;
}

static int
genp_inv(const LegoPerm *p, int64_t f, int64_t *x, Err *e)
{
	int64_t r, c, lo, hi, k, i;
	int pos[LEGO_DIMS][64], bits[LEGO_DIMS], j, b;
	char s[NOTE_MAX], cs[128];
	Buf d;

	switch (p->gen) {
	case LEGO_GEN_IDENTITY:
		unflatten(f, p->dim, p->rank, x);
		return 0;
	case LEGO_GEN_REVERSE:
		unflatten(f, p->dim, p->rank, x);
		for (j = 0; j < p->rank; j++)
			if (p->mask >> j & 1)
				x[j] = p->dim[j] - 1 - x[j];
		return 0;
	case LEGO_GEN_ANTIDIAG:
		/* the largest k with before(k) <= f; before is increasing on 0..r+c-1 */
		r = p->dim[0];
		c = p->dim[1];
		lo = 0;
		hi = r + c - 2;
		while (lo < hi) {
			int64_t mid = lo + (hi - lo + 1) / 2;
			if (before(mid, r, c) <= f)
				lo = mid;
			else
				hi = mid - 1;
		}
		k = lo;
		i = f - before(k, r, c) + (k - (c - 1) > 0 ? k - (c - 1) : 0);
		x[0] = i;
		x[1] = k - i;
		return 0;
	case LEGO_GEN_MORTON:
	case LEGO_GEN_MORTON_ROW:
		lego_morton_pos(p, pos, bits);
		for (j = 0; j < p->rank; j++) {
			x[j] = 0;
			for (b = 0; b < bits[j]; b++)
				x[j] |= ((f >> pos[j][b]) & 1) << b;
		}
		return 0;
	}
	for (j = 0; j < p->rank; j++)
		x[j] = -1;
	if (p->inv(p->ctx, f, x, p->rank, e) < 0)
		return -1;
	for (j = 0; j < p->rank; j++)
		if (x[j] < 0 || x[j] >= p->dim[j])
		{
			buf_init(&d);
			dims_print(&d, p->dim, p->rank);
			err_set(e, "%s: inv(%lld) = %s is outside the dimensions %s", pnote(s, p),
			        (long long)f, cnote(cs, sizeof cs, x, p->rank), d.s ? d.s : "");
			buf_free(&d);
			return -1;
		}
	return 0;
}

/* Enumerate a GenP: every value in range and distinct, inv inverts apply; Ctrl-C every 2^16. */
static int
genp_verify(const LegoPerm *p, Err *e)
{
	int64_t n = perm_size(p), x[LEGO_DIMS], y[LEGO_DIMS], f, g, a;
	unsigned char *seen;
	char s[NOTE_MAX], c1[128], c2[128];
	int k, rc = 0;

	if (!(seen = calloc((size_t)n / 8 + 1, 1)))
		return err_set(e, "lego.GenP: out of memory checking %lld elements", (long long)n);
	for (a = 0; a < n && rc == 0; a++) {
		if ((a & 0xffff) == 0xffff && limits_poll(e) < 0) {
			rc = -1;
			break;
		}
		unflatten(a, p->dim, p->rank, x);
		if (genp_apply(p, x, &f, e) < 0) {
			rc = -1;
			break;
		}
		if (seen[f / 8] >> (f % 8) & 1) {
			int64_t b;
			for (b = 0; b < a; b++) {
				unflatten(b, p->dim, p->rank, y);
				if (genp_apply(p, y, &g, e) < 0 || g == f)
					break;
			}
			rc = err_set(e, "%s is not a bijection: apply%s = %lld and apply%s = %lld",
			             pnote(s, p), cnote(c1, sizeof c1, y, p->rank), (long long)f,
			             cnote(c2, sizeof c2, x, p->rank), (long long)f);
			break;
		}
		seen[f / 8] |= (unsigned char)(1u << (f % 8));
	}
	/* a second pass, so that a collision is reported before a wrong inverse */
	for (a = 0; a < n && rc == 0; a++) {
		if ((a & 0xffff) == 0xffff && limits_poll(e) < 0) {
			rc = -1;
			break;
		}
		unflatten(a, p->dim, p->rank, x);
		if (genp_apply(p, x, &f, e) < 0 || genp_inv(p, f, y, e) < 0) {
			rc = -1;
			break;
		}
		for (k = 0; k < p->rank; k++)
			if (y[k] != x[k]) {
				rc = err_set(e, "%s: inv does not invert apply: apply%s = %lld but inv(%lld) = %s",
				             pnote(s, p), cnote(c1, sizeof c1, x, p->rank), (long long)f,
				             (long long)f, cnote(c2, sizeof c2, y, p->rank));
				break;
			}
	}
	free(seen);
	return rc;
}

int
lego_genp_user(Lego *out, const int64_t *dims, int rank, LegoApplyFn apply, LegoInvFn inv,
               void *ctx, const char *label, Err *e)
{
	LegoPerm p;
	char what[sizeof p.label + 40];

	if (check_dims("lego.GenP", dims, rank, NULL, e) < 0)
		return -1;
	if (!apply || !inv)
		return err_set(e, "lego.GenP: a user permutation needs both apply and inv");
	memset(&p, 0, sizeof p);
	p.kind = LEGO_GENP;
	p.rank = rank;
	memcpy(p.dim, dims, (size_t)rank * sizeof *dims);
	p.gen = LEGO_GEN_USER;
	p.apply = apply;
	p.inv = inv;
	p.ctx = ctx;
	snprintf(p.label, sizeof p.label, "%s", label && *label ? label : "f, finv");
	/* a user function is trusted only once enumerated: past check_elems it is refused */
	snprintf(what, sizeof what, "verifying the user lego.GenP (%s)", p.label);
	if (limits_check(LIMIT_CHECK_ELEMS, perm_size(&p), what, e) < 0 || genp_verify(&p, e) < 0)
		return -1;
	from_perm(out, &p);
	return 0;
}

int
lego_orderby(Lego *out, const Lego *const *parts, int n, Err *e)
{
	Lego t;
	int64_t s = 1;
	int k, m = 0;

	if (n < 1 || n > LEGO_PARTS)
		return err_set(e, "lego.OrderBy: %d parts; 1 to %d are supported", n, LEGO_PARTS);
	lego_zero(&t);
	t.kind = LEGO_ORDER;
	t.nchain = 1;
	t.chain[0].nparts = n;
	for (k = 0; k < n; k++) {
		const LegoPerm *p;
		if (parts[k]->kind != LEGO_PERM)
			return err_set(e, "lego.OrderBy: part %d is not a RegP or GenP", k + 1);
		p = &parts[k]->chain[0].part[0];
		if (m + p->rank > LEGO_DIMS)
			return err_set(e, "lego.OrderBy: the parts have more than %d dimensions", LEGO_DIMS);
		if (s > CUTE_SIZE_LIMIT / perm_size(p))
			return err_set(e, "lego.OrderBy: more than 2^62 elements");
		s *= perm_size(p);
		memcpy(t.dim + m, p->dim, (size_t)p->rank * sizeof *p->dim);
		m += p->rank;
		t.chain[0].part[k] = *p;
	}
	t.rank = m;
	*out = t;
	return 0;
}

/* Append the orders of x (any kind but a group) to t's chain. */
static int
splice(const char *op, Lego *t, const Lego *x, int64_t size, Err *e)
{
	char s[NOTE_MAX];
	int i;

	if (x->kind == LEGO_GROUP)
		return err_set(e, "%s: %s is a GroupBy; a chain holds OrderBys", op, note(s, x));
	for (i = 0; i < x->nchain; i++) {
		if (order_size(&x->chain[i]) != size)
			return err_set(e, "%s: %s has %lld elements, the chain %lld; sizes must agree",
			               op, note(s, x), (long long)order_size(&x->chain[i]), (long long)size);
		if (t->nchain >= LEGO_CHAIN)
			return err_set(e, "%s: more than %d OrderBys in a chain", op, LEGO_CHAIN);
		t->chain[t->nchain] = x->chain[i];
		/* a perm spliced into a chain is an OrderBy of one part */
		t->nchain++;
	}
	return 0;
}

int
lego_then(Lego *out, const Lego *a, const Lego *b, Err *e)
{
	Lego t;
	char s[NOTE_MAX];

	if (a->kind == LEGO_GROUP)
		return err_set(e, "OrderBy: %s is already grouped", note(s, a));
	lego_zero(&t);
	t.kind = LEGO_CHAINED;
	if (splice("OrderBy", &t, a, order_size(&a->chain[0]), e) < 0 ||
	    splice("OrderBy", &t, b, order_size(&a->chain[0]), e) < 0)
		return -1;
	t.rank = order_dims(&t.chain[t.nchain - 1], t.dim);
	*out = t;
	return 0;
}

int
lego_groupby(Lego *out, const int64_t *dims, int rank, const int *glen, int ngroup,
             const Lego *const *chain, int n, Err *e)
{
	Lego t;
	int64_t size;
	int i, sum = 0;

	if (check_dims("lego.GroupBy", dims, rank, &size, e) < 0)
		return -1;
	lego_zero(&t);
	t.kind = LEGO_GROUP;
	t.rank = rank;
	memcpy(t.dim, dims, (size_t)rank * sizeof *dims);
	if (glen && ngroup > rank)
		return err_set(e, "lego.GroupBy: %d tile groups for %d dimensions", ngroup, rank);
	if (glen && ngroup > 1) {
		for (i = 0; i < ngroup; i++) {
			if (glen[i] < 1)
				return err_set(e, "lego.GroupBy: tile group %d is empty", i + 1);
			sum += glen[i];
			t.glen[i] = glen[i];
		}
		if (sum != rank)
			return err_set(e, "lego.GroupBy: the groups have %d dimensions, not %d", sum, rank);
		t.ngroup = ngroup;
	} else {
		t.ngroup = 1;
		t.glen[0] = rank;
	}
	for (i = 0; i < n; i++)
		if (splice("lego.GroupBy", &t, chain[i], size, e) < 0)
			return -1;
	*out = t;
	return 0;
}

int
lego_tileby_group(Lego *out, const Lego *o, const int64_t *dims, int d, int q, Err *e)
{
	Lego *parts, tb;
	const Lego *ptr[LEGO_CHAIN * 2 + 1];
	int64_t tile[LEGO_DIMS];
	int glen[LEGO_DIMS], i, n = 0, k;
	char s[NOTE_MAX];

	if (check_tiles("TileBy", d, q, e) < 0 || check_dims("TileBy", dims, d * q, NULL, e) < 0)
		return -1;
	if (o->kind == LEGO_GROUP)
		return err_set(e, "TileBy: %s is already grouped", note(s, o));
	/* Legos are large values: keep these off the stack */
	if (!(parts = malloc((LEGO_CHAIN * 2 + 1) * sizeof *parts)))
		return err_set(e, "TileBy: out of memory");
	for (i = 0; i < o->nchain; i++) {
		const LegoOrder *ord = &o->chain[i];
		lego_zero(&parts[n]);
		parts[n].kind = LEGO_ORDER;
		parts[n].nchain = 1;
		parts[n].chain[0] = *ord;
		parts[n].rank = order_dims(ord, parts[n].dim);
		n++;
		if (ord->nparts > 1) {
			/* LEGO stripmines the untiled index into this OrderBy's tile levels */
			int dd = ord->part[0].rank;
			for (k = 0; k < ord->nparts; k++)
				if (ord->part[k].rank != dd) {
					free(parts);
					return err_set(e, "TileBy: the parts of %s differ in rank; TileBy needs "
					               "levels of one rank", note(s, o));
				}
			order_dims(ord, tile);
			if (lego_tileorderby(&parts[n], tile, dd, ord->nparts, e) < 0) {
				free(parts);
				return -1;
			}
			n++;
		}
	}
	if (lego_tileby(&tb, dims, d, q, e) < 0) {
		free(parts);
		return -1;
	}
	parts[n++] = tb;
	for (i = 0; i < n; i++)
		ptr[i] = &parts[i];
	for (i = 0; i < q; i++)
		glen[i] = d;
	k = lego_groupby(out, dims, d * q, glen, q, ptr, n, e);
	free(parts);
	return k;
}

int
lego_expandby(Lego *out, const Lego *g, const int64_t *ext, int n, const int64_t *edims, Err *e)
{
	Lego t;
	int64_t ed[LEGO_DIMS];
	char s[NOTE_MAX];
	int k;

	if (g->erank)
		return err_set(e, "lego.ExpandBy: %s is already expanded", note(s, g));
	if (check_dims("lego.ExpandBy", ext, n, NULL, e) < 0)
		return -1;
	t = *g;
	if (t.kind != LEGO_GROUP) {
		t.kind = LEGO_GROUP;
		t.ngroup = 1;
		t.glen[0] = t.rank;
	}
	if (edims) {
		memcpy(ed, edims, (size_t)n * sizeof *ed);
		if (check_dims("lego.ExpandBy", ed, n, NULL, e) < 0)
			return -1;
	} else if (default_edims(&t, n, ed) < 0) {
		return err_set(e, "lego.ExpandBy: %s has %d logical dimensions, not a multiple of the "
		               "%d extents; give the expanded dimensions", note(s, g), t.rank, n);
	}
	if (prod(ed, n) != lego_size(&t))
		return err_set(e, "lego.ExpandBy: the expanded dimensions have %lld elements, %s has %lld",
		               (long long)prod(ed, n), note(s, g), (long long)lego_size(&t));
	for (k = 0; k < n; k++)
		if (ext[k] > ed[k])
			return err_set(e, "lego.ExpandBy: extent %lld of dimension %d exceeds the expanded "
			               "%lld", (long long)ext[k], k, (long long)ed[k]);
	t.erank = n;
	memcpy(t.edim, ed, (size_t)n * sizeof *ed);
	memcpy(t.odim, ext, (size_t)n * sizeof *ext);
	*out = t;
	return 0;
}

int64_t
lego_size(const Lego *g)
{
	return prod(g->dim, g->rank);
}

int64_t
lego_cosize(const Lego *g)
{
	return g->erank ? prod(g->odim, g->erank) : lego_size(g);
}

/*
** Step programs. apply: the logical index is flattened over the logical
** dimensions; each OrderBy, last written first, unflattens the flat index
** over its parts' dimensions, maps each part to its flat index (gather and
** flatten for RegP, the GenP's apply) and flattens the parts' indices over
** the parts' sizes; ExpandBy unflattens over the expanded dimensions, checks
** the original extents and flattens over them. inv runs the inverse steps
** in the opposite order.
*/
static int
step(LegoProg *p, int op, int at, int n, const int64_t *dim, const int *perm, const LegoPerm *g,
     Err *e)
{
	LegoStep *s;

	if (p->nstep >= LEGO_STEPS)
		return err_set(e, "lego: more than %d steps", LEGO_STEPS);
	s = &p->step[p->nstep++];
	memset(s, 0, sizeof *s);
	s->op = op;
	s->at = at;
	s->n = n;
	if (dim)
		memcpy(s->dim, dim, (size_t)n * sizeof *dim);
	if (perm)
		memcpy(s->perm, perm, (size_t)n * sizeof *perm);
	s->genp = g;
	return 0;
}

static int
is_identity(const int *perm, int n)
{
	int k;

	for (k = 0; k < n; k++)
		if (perm[k] != k)
			return 0;
	return 1;
}

static void
physical_dims(const LegoPerm *p, int64_t *d)
{
	int t;

	for (t = 0; t < p->rank; t++)
		d[t] = p->dim[p->perm[t]];
}

static int
order_apply_steps(LegoProg *p, const LegoOrder *o, Err *e)
{
	int64_t d[LEGO_DIMS], sizes[LEGO_PARTS];
	int m = order_dims(o, d), k, rc = 0;

	if (m > 1)
		rc |= step(p, LS_UNFLATTEN, 0, m, d, NULL, NULL, e);
	for (k = 0; k < o->nparts; k++) {
		const LegoPerm *q = &o->part[k];
		sizes[k] = perm_size(q);
		if (q->kind == LEGO_GENP) {
			rc |= step(p, LS_GENP_APPLY, k, q->rank, q->dim, NULL, q, e);
			continue;
		}
		if (!is_identity(q->perm, q->rank))
			rc |= step(p, LS_GATHER, k, q->rank, q->dim, q->perm, NULL, e);
		physical_dims(q, d);
		if (q->rank > 1)
			rc |= step(p, LS_FLATTEN, k, q->rank, d, NULL, NULL, e);
	}
	if (o->nparts > 1)
		rc |= step(p, LS_FLATTEN, 0, o->nparts, sizes, NULL, NULL, e);
	return rc ? -1 : 0;
}

static int
order_inv_steps(LegoProg *p, const LegoOrder *o, Err *e)
{
	int64_t d[LEGO_DIMS], sizes[LEGO_PARTS];
	int m, k, rc = 0;

	for (k = 0; k < o->nparts; k++)
		sizes[k] = perm_size(&o->part[k]);
	if (o->nparts > 1)
		rc |= step(p, LS_UNFLATTEN, 0, o->nparts, sizes, NULL, NULL, e);
	/* last part first, so that the parts before it keep their positions */
	for (k = o->nparts - 1; k >= 0; k--) {
		const LegoPerm *q = &o->part[k];
		if (q->kind == LEGO_GENP) {
			rc |= step(p, LS_GENP_INV, k, q->rank, q->dim, NULL, q, e);
			continue;
		}
		physical_dims(q, d);
		if (q->rank > 1)
			rc |= step(p, LS_UNFLATTEN, k, q->rank, d, NULL, NULL, e);
		if (!is_identity(q->perm, q->rank))
			rc |= step(p, LS_SCATTER, k, q->rank, q->dim, q->perm, NULL, e);
	}
	m = order_dims(o, d);
	if (m > 1)
		rc |= step(p, LS_FLATTEN, 0, m, d, NULL, NULL, e);
	return rc ? -1 : 0;
}

int
lego_prog(const Lego *g, int inverse, LegoProg *p, Err *e)
{
	int i, rc = 0, n = g->erank;

	p->inverse = inverse;
	p->nstep = 0;
	p->cosize = lego_cosize(g);
	if (!inverse) {
		p->nin = g->rank;
		p->nout = 1;
		memcpy(p->inlim, g->dim, sizeof g->dim);
		if (g->rank > 1)
			rc |= step(p, LS_FLATTEN, 0, g->rank, g->dim, NULL, NULL, e);
		for (i = g->nchain - 1; i >= 0 && !rc; i--)
			rc |= order_apply_steps(p, &g->chain[i], e);
		if (n) {
			if (n > 1)
				rc |= step(p, LS_UNFLATTEN, 0, n, g->edim, NULL, NULL, e);
			rc |= step(p, LS_BOUND, 0, n, g->odim, NULL, NULL, e);
			if (n > 1)
				rc |= step(p, LS_FLATTEN, 0, n, g->odim, NULL, NULL, e);
		}
	} else {
		p->nin = 1;
		p->nout = g->rank;
		p->inlim[0] = p->cosize;
		if (n > 1) {
			rc |= step(p, LS_UNFLATTEN, 0, n, g->odim, NULL, NULL, e);
			rc |= step(p, LS_FLATTEN, 0, n, g->edim, NULL, NULL, e);
		}
		for (i = 0; i < g->nchain && !rc; i++)
			rc |= order_inv_steps(p, &g->chain[i], e);
		if (g->rank > 1)
			rc |= step(p, LS_UNFLATTEN, 0, g->rank, g->dim, NULL, NULL, e);
	}
	return rc ? -1 : 0;
}

int
lego_run(const LegoProg *p, const int64_t *in, int64_t *out, Err *e)
{
	int64_t v[LEGO_DIMS + 1], w[LEGO_DIMS], f;
	int len = p->nin, i, k, valid = 1;

	for (k = 0; k < p->nin; k++) {
		if (in[k] < 0 || in[k] >= p->inlim[k]) {
			if (p->inverse)
				return err_set(e, "inv: index %lld is outside 0..%lld", (long long)in[k],
				               (long long)p->inlim[k] - 1);
			return err_set(e, "apply: coordinate %d is %lld, outside 0..%lld", k,
			               (long long)in[k], (long long)p->inlim[k] - 1);
		}
		v[k] = in[k];
	}
	for (i = 0; i < p->nstep; i++) {
		const LegoStep *s = &p->step[i];
		int at = s->at, n = s->n;

		switch (s->op) {
		case LS_FLATTEN:
		case LS_GENP_APPLY:
			if (s->op == LS_FLATTEN)
				f = flatten(v + at, s->dim, n);
			else if (genp_apply(s->genp, v + at, &f, e) < 0)
				return -1;
			v[at] = f;
			memmove(v + at + 1, v + at + n, (size_t)(len - at - n) * sizeof *v);
			len -= n - 1;
			break;
		case LS_UNFLATTEN:
		case LS_GENP_INV:
			f = v[at];
			memmove(v + at + n, v + at + 1, (size_t)(len - at - 1) * sizeof *v);
			len += n - 1;
			if (s->op == LS_UNFLATTEN)
				unflatten(f, s->dim, n, v + at);
			else if (genp_inv(s->genp, f, v + at, e) < 0)
				return -1;
			break;
		case LS_GATHER:
			for (k = 0; k < n; k++)
				w[k] = v[at + s->perm[k]];
			memcpy(v + at, w, (size_t)n * sizeof *w);
			break;
		case LS_SCATTER:
			for (k = 0; k < n; k++)
				w[s->perm[k]] = v[at + k];
			memcpy(v + at, w, (size_t)n * sizeof *w);
			break;
		case LS_BOUND:
			for (k = 0; k < n; k++)
				if (v[at + k] >= s->dim[k])
					valid = 0;
			break;
		}
	}
	if (!valid) {
		out[0] = -1;
		return 0;
	}
	memcpy(out, v, (size_t)p->nout * sizeof *v);
	return 0;
}

void
lego_prog_print(Buf *b, const LegoProg *p)
{
	static const char *const name[] = {
		[LS_FLATTEN] = "flatten", [LS_UNFLATTEN] = "unflatten", [LS_GATHER] = "gather",
		[LS_SCATTER] = "scatter", [LS_GENP_APPLY] = "genp", [LS_GENP_INV] = "genp_inv",
		[LS_BOUND] = "bound",
	};
	int i;

	for (i = 0; i < p->nstep; i++) {
		const LegoStep *s = &p->step[i];

		emit(b, "%2d  %-9s x%d..x%d ", i + 1, name[s->op], s->at, s->at + (s->op == LS_UNFLATTEN ||
		     s->op == LS_GENP_INV ? 0 : s->n - 1));
		switch (s->op) {
		case LS_GATHER:
		case LS_SCATTER:
			ints_print(b, s->perm, s->n);
			break;
		case LS_GENP_APPLY:
		case LS_GENP_INV:
			perm_print(b, s->genp);
			break;
		case LS_BOUND:
			emit(b, "< ");
			dims_print(b, s->dim, s->n);
			emit(b, ", else -1");
			break;
		default:
			emit(b, "over ");
			dims_print(b, s->dim, s->n);
		}
		emit(b, "\n");
	}
}

int
lego_apply(const Lego *g, const int64_t *idx, int64_t *out, Err *e)
{
	LegoProg *q = malloc(sizeof *q);   /* large: not on the stack */
	int rc;

	if (!q)
		return err_set(e, "apply: out of memory");
	rc = lego_prog(g, 0, q, e) < 0 ? -1 : lego_run(q, idx, out, e);
	free(q);
	return rc;
}

int
lego_inv(const Lego *g, int64_t flat, int64_t *idx, Err *e)
{
	LegoProg *q = malloc(sizeof *q);
	int rc;

	if (!q)
		return err_set(e, "inv: out of memory");
	rc = lego_prog(g, 1, q, e) < 0 ? -1 : lego_run(q, &flat, idx, e);
	free(q);
	return rc;
}

int
lego_check(const Lego *g, int64_t limit, Err *e)
{
	int64_t n = lego_size(g), cos = lego_cosize(g), a, f, f2, x[LEGO_DIMS], y[LEGO_DIMS], hits = 0;
	LegoProg *pa, *pi;
	unsigned char *seen;
	char s[NOTE_MAX], c1[128], c2[128];
	int k, rc = 1;

	if (n > limit) {   /* 0, and the message for callers that show one */
		err_set(e, "check_elems limit: checking %s needs %lld elements, more than the limit of %lld "
		        "(raise it with tessel.limits{check_elems = N}, or G:check(N))", note(s, g),
		        (long long)n, (long long)limit);
		return 0;
	}
	pa = malloc(sizeof *pa);
	pi = malloc(sizeof *pi);
	seen = calloc((size_t)cos / 8 + 1, 1);
	if (!pa || !pi || !seen) {
		rc = err_set(e, "check: out of memory");
		goto done;
	}
	if (lego_prog(g, 0, pa, e) < 0 || lego_prog(g, 1, pi, e) < 0) {
		rc = -1;
		goto done;
	}
	for (a = 0; a < n; a++) {
		if ((a & 0xffff) == 0xffff && limits_poll(e) < 0) {
			rc = -1;
			goto done;
		}
		unflatten(a, g->dim, g->rank, x);
		if (lego_run(pa, x, &f, e) < 0) {
			rc = -1;
			goto done;
		}
		if (f == -1 && g->erank)
			continue;
		if (f < 0 || f >= cos) {
			rc = err_set(e, "%s: apply%s = %lld is outside 0..%lld", note(s, g),
			             cnote(c1, sizeof c1, x, g->rank), (long long)f, (long long)cos - 1);
			goto done;
		}
		if (seen[f / 8] >> (f % 8) & 1) {
			int64_t b;
			for (b = 0; b < a; b++) {
				unflatten(b, g->dim, g->rank, y);
				if (lego_run(pa, y, &f2, e) < 0 || f2 == f)
					break;
			}
			rc = err_set(e, "%s is not a bijection: apply%s = apply%s = %lld", note(s, g),
			             cnote(c1, sizeof c1, y, g->rank), cnote(c2, sizeof c2, x, g->rank),
			             (long long)f);
			goto done;
		}
		seen[f / 8] |= (unsigned char)(1u << (f % 8));
		hits++;
		if (lego_run(pi, &f, y, e) < 0) {
			rc = -1;
			goto done;
		}
		for (k = 0; k < g->rank; k++)
			if (x[k] != y[k]) {
				rc = err_set(e, "%s: inv does not invert apply: apply%s = %lld, inv(%lld) = %s",
				             note(s, g), cnote(c1, sizeof c1, x, g->rank), (long long)f,
				             (long long)f, cnote(c2, sizeof c2, y, g->rank));
				goto done;
			}
	}
	if (hits != cos) {
		for (f = 0; f < cos && (seen[f / 8] >> (f % 8) & 1); f++)
			;
		rc = err_set(e, "%s: physical index %lld is reached by no logical index", note(s, g),
		             (long long)f);
	}
done:
	free(pa);
	free(pi);
	free(seen);
	return rc;
}

/*
** CuTe conversion. An OrderBy of RegPs maps its flat input f, unflattened
** row-major over its dimensions E, to sum_k e_k * s_k: as a CuTe layout
** (1-D coordinates are colexicographic) that is the layout of shape
** reverse(E) and the strides reversed alike. The logical view is the
** row-major layout of the GroupBy's dimensions, and the whole apply is the
** composition O1 o ... o Ok o Logical, which CuTe's composition computes
** exactly when it is affine (its divisibility conditions hold). A morton
** GenP is affine in the bits of its coordinates: dimension k becomes the
** mode (2,2,...):(2^p(k,0), 2^p(k,1), ...).
*/
static int
order_layout(const LegoOrder *o, Layout *out, Err *e)
{
	Tuple sh, st;
	int64_t d[LEGO_DIMS], s[LEGO_DIMS], w = 1, ps;
	int m = order_dims(o, d), k, t, off = m, a, b, c0, c1;
	int pos[LEGO_DIMS][64], bits[LEGO_DIMS], zk[LEGO_DIMS];
	int64_t zw[LEGO_DIMS];
	const LegoPerm *zp[LEGO_DIMS];
	char c[NOTE_MAX];

	/* zk[dim] >= 0: the dimension is dimension zk of a morton part (bits become modes) */
	for (k = 0; k < m; k++)
		zk[k] = -1;
	for (k = o->nparts - 1; k >= 0; k--) {
		const LegoPerm *q = &o->part[k];
		off -= q->rank;
		if (q->kind == LEGO_GENP && (q->gen == LEGO_GEN_MORTON || q->gen == LEGO_GEN_MORTON_ROW)) {
			for (t = 0; t < q->rank; t++) {
				zk[off + t] = t;
				zp[off + t] = q;
				zw[off + t] = w;
			}
			w *= perm_size(q);
			continue;
		}
		if (q->kind != LEGO_REGP && q->gen != LEGO_GEN_IDENTITY)
			return err_set(e, "to_cute: %s is not affine", pnote(c, q));
		ps = 1;
		for (t = q->rank - 1; t >= 0; t--) {
			int src = q->kind == LEGO_REGP ? q->perm[t] : t;
			s[off + src] = ps * w;
			ps *= q->dim[src];
		}
		w *= perm_size(q);
	}
	sh.n = st.n = 0;
	if ((a = tuple_open(&sh, e)) < 0 || (b = tuple_open(&st, e)) < 0)
		return -1;
	for (k = m - 1; k >= 0; k--) {
		if (zk[k] < 0 || d[k] == 1) {
			if (tuple_push(&sh, d[k], e) < 0 || tuple_push(&st, zk[k] < 0 ? s[k] : 0, e) < 0)
				return -1;
			continue;
		}
		/* morton: bit j of the coordinate is a mode of size 2, stride 2^pos */
		lego_morton_pos(zp[k], pos, bits);
		if ((c0 = tuple_open(&sh, e)) < 0 || (c1 = tuple_open(&st, e)) < 0)
			return -1;
		for (t = 0; t < bits[zk[k]]; t++)
			if (tuple_push(&sh, 2, e) < 0 ||
			    tuple_push(&st, ((int64_t)1 << pos[zk[k]][t]) * zw[k], e) < 0)
				return -1;
		tuple_close(&sh, c0);
		tuple_close(&st, c1);
	}
	tuple_close(&sh, a);
	tuple_close(&st, b);
	return cute_make(out, &sh, &st, e);
}

int
lego_to_cute(const Lego *g, Layout *out, Err *e)
{
	Layout r, o, c;
	Tuple sh, st, prof;
	int k, a, b, pa, i;
	char n[NOTE_MAX];

	if (g->erank)
		return err_set(e, "to_cute: %s clips partial tiles (ExpandBy); CuTe layouts cannot",
		               note(n, g));
	sh.n = st.n = prof.n = 0;
	if ((a = tuple_open(&sh, e)) < 0 || (b = tuple_open(&st, e)) < 0 ||
	    (pa = tuple_open(&prof, e)) < 0)
		return -1;
	for (k = 0; k < g->rank; k++) {
		int64_t stride = prod(g->dim + k + 1, g->rank - k - 1);
		if (tuple_push(&sh, g->dim[k], e) < 0 || tuple_push(&st, stride, e) < 0 ||
		    tuple_push(&prof, 1, e) < 0)
			return -1;
	}
	tuple_close(&sh, a);
	tuple_close(&st, b);
	tuple_close(&prof, pa);
	if (cute_make(&r, &sh, &st, e) < 0)
		return -1;
	for (i = g->nchain - 1; i >= 0; i--) {
		Err ce;
		if (order_layout(&g->chain[i], &o, e) < 0)
			return -1;
		if (cute_composition(&o, &r, &c, &ce) < 0)
			return err_set(e, "to_cute: %s is not affine in its logical coordinates (%s)",
			               note(n, g), ce.msg);
		r = c;
	}
	if (cute_coalesce_profile(&r, &prof, out, e) < 0)
		return -1;
	return 0;
}

int
lego_from_cute(Lego *out, const Layout *l, Err *e)
{
	Flat f;
	int64_t dims[LEGO_DIMS], want = 1;
	int order[TUPLE_MAX], perm[LEGO_DIMS], n, i, j, k;
	char s[FMT_MAX];
	Lego rp;
	const Lego *ch[1];

	flat_of(l, &f);
	n = f.n;
	if (n > LEGO_DIMS)
		return err_set(e, "from_cute: %s has %d modes; at most %d are supported", lfmt(s, l),
		               n, LEGO_DIMS);
	if (n == 0) {
		dims[0] = 1;
		perm[0] = 0;
		n = 1;
	} else {
		/* physical order: largest stride first; size-1 modes last (they do not move) */
		for (i = 0; i < n; i++)
			order[i] = i;
		for (i = 1; i < n; i++)
			for (j = i; j > 0; j--) {
				int x = order[j - 1], y = order[j];
				int swap = (f.s[x] == 1 && f.s[y] != 1) ||
				           (f.s[x] != 1 && f.s[y] != 1 && f.d[x] < f.d[y]);
				if (!swap)
					break;
				order[j - 1] = y;
				order[j] = x;
			}
		for (k = n - 1; k >= 0; k--) {
			int m = order[k];
			if (f.s[m] == 1)
				continue;
			if (f.d[m] != want)
				return err_set(e, "from_cute: %s is not compact (a bijection onto 0..%lld): sorted "
				               "by stride its modes should have strides 1, s0, s0*s1, ...; found "
				               "stride %lld where %lld was due", lfmt(s, l),
				               (long long)cute_size(l) - 1, (long long)f.d[m], (long long)want);
			want *= f.s[m];
		}
		for (i = 0; i < n; i++) {
			dims[i] = f.s[i];
			perm[i] = order[i];
		}
	}
	if (lego_regp(&rp, dims, n, perm, e) < 0)
		return -1;
	if (is_identity(perm, n))
		rp.chain[0].part[0].sugar = LEGO_SUGAR_ROW;
	else {
		for (i = 0; i < n && perm[i] == n - 1 - i; i++)
			;
		if (i == n)
			rp.chain[0].part[0].sugar = LEGO_SUGAR_COL;
	}
	ch[0] = &rp;
	return lego_groupby(out, dims, n, NULL, 1, ch, 1, e);
}

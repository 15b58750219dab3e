/* kernel_wgmma.c - Hopper's warpgroup MMA: the statement, and which GMMA shared-memory descriptor an operand's layout is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

/*
** The analysis is brute force on purpose: a candidate descriptor is read off
** a few elements of the tile, then every element of the tile is checked
** against it, at every start the region can take. What the hardware reads
** is then exactly what the layout says, whatever layout algebra built it.
** Offsets are in bytes, relative to the buffer, whose base the emitter
** aligns to 1024 bytes (so buffer offsets and absolute addresses agree on
** the bits the swizzle reads).
*/

enum { MAXVARS = 8, MAXEVALS = 1 << 22, MAXVALS = 256 };   /* MAXVALS: distinct values of one start coordinate */

static const char *const lnames[4] = { "interleave", "128B", "64B", "32B" };
static const int lwidth[4] = { 1, 8, 4, 2 };   /* 16-byte chunks a swizzle row */

const char *
kgmma_layout_name(int t)
{
	return t >= 0 && t < 4 ? lnames[t] : "?";
}

/* The swizzle XOR of layout type t on a byte address. */
static int64_t
swz(int t, int64_t a)
{
	int64_t mask = t == 1 ? 7 : t == 2 ? 3 : t == 3 ? 1 : 0;

	return a ^ (((a >> 7) & mask) << 4);
}

/* The canonical byte offset of element (i: M or N, j: K) from the start. */
static int64_t
canon(int mn, int t, int64_t i, int64_t j, int64_t lbo, int64_t sbo)
{
	int64_t w = lwidth[t];

	if (!mn)
		return (i % 8) * 16 * w + (i / 8) * sbo + (j / 8) * (t == 0 ? lbo : 16) + (j % 8) * 2;
	if (t == 0)
		return (i % 8) * 2 + (i / 8) * sbo + (j % 8) * 16 + (j / 8) * lbo;
	return (i % 8) * 2 + ((i / 8) % w) * 16 + (i / (8 * w)) * lbo + (j % 8) * 16 * w + (j / 8) * sbo;
}

/* One operand being analysed: the buffer, the tile's shape, the start now. */
typedef struct Opnd {
	const Kernel *k;
	const KBuf *kb;
	const KRegion *r;
	int operand;          /* 'A' or 'B' */
	int nk;               /* B given (n, k) (KWG_B_NK): its tile is read like A's */
	int64_t e;            /* the M (A) or N (B) extent */
	int64_t begin[T_MAXDIM];
	int64_t evals;
	UProg **prog;         /* the buffer's layout, compiled at the first element */
	Err *err;
} Opnd;

/* The byte offset of tile element (i: M/N, j: K) at the current start. */
static int
phys(Opnd *o, int64_t i, int64_t j, int64_t *out)
{
	const KBuf *kb = o->kb;
	UBind bind[T_MAXDIM];
	int64_t c[T_MAXDIM], off;
	int d, n = kb->ndim;

	for (d = 0; d < n; d++)
		c[d] = o->begin[d];
	c[n - 2] += o->operand == 'A' || o->nk ? i : j;
	c[n - 1] += o->operand == 'A' || o->nk ? j : i;
	for (d = 0; d < n; d++) {
		if (c[d] < 0 || c[d] >= kb->shape[d])
			return err_set(o->err, "wgmma: operand %c: element (%lld, %lld) of the tile is outside %s "
			               "(coordinate %d is %lld, the dimension %lld)", o->operand, (long long)i,
			               (long long)j, kb->name, d, (long long)c[d], (long long)kb->shape[d]);
		bind[d].name = kb->lvar[d]->name;
		bind[d].value = c[d];
	}
	o->evals++;
	if (!*o->prog && !(*o->prog = uop_prog_new((const UOp *const *)&kb->layout, 1, bind, n, o->err)))
		return -1;
	if (uop_prog_run(*o->prog, bind, &off, o->err) < 0)
		return -1;
	*out = off * dtype_bytes(kb->dtype);
	return 0;
}

typedef struct Cand {
	int mn, t;
	int64_t lbo, sbo;
	int64_t good;         /* elements verified before the first mismatch */
	int64_t bi, bj, got, want;
} Cand;

/* Read a candidate of form (mn, t) off the tile at the current start. */
static int
derive(Opnd *o, Cand *c, int64_t start)
{
	int64_t w = lwidth[c->t], x;

	c->lbo = c->sbo = 0;
	if (!c->mn) {
		if (o->e > 8) {
			if (phys(o, 8, 0, &x) < 0)
				return -1;
			c->sbo = swz(c->t, x) - start;
		}
		if (c->t == 0) {
			if (phys(o, 0, 8, &x) < 0)
				return -1;
			c->lbo = x - start;
		} else
			c->lbo = 16;   /* ignored by the hardware; CUTLASS writes 1 */
	} else if (c->t == 0) {
		if (o->e > 8) {
			if (phys(o, 8, 0, &x) < 0)
				return -1;
			c->sbo = x - start;
		}
		if (phys(o, 0, 8, &x) < 0)
			return -1;
		c->lbo = x - start;
	} else {
		if (o->e > 8 * w) {
			if (phys(o, 8 * w, 0, &x) < 0)
				return -1;
			c->lbo = swz(c->t, x) - start;
		}
		if (phys(o, 0, 8, &x) < 0)
			return -1;
		c->sbo = swz(c->t, x) - start;
	}
	return 0;
}

/* Every element against candidate c at the current start: 1 verified, 0 not (c->bi.. say where), -1 error. */
static int
verify(Opnd *o, Cand *c, int64_t start)
{
	int64_t i, j, x, want;

	c->good = 0;
	if (start % 16 || start < 0 || (start >> 4) > 0x3fff) {
		c->bi = c->bj = 0;
		c->got = c->want = start;
		return 0;
	}
	if (c->lbo < 0 || c->sbo < 0 || c->lbo % 16 || c->sbo % 16 || (c->lbo >> 4) > 0x3fff || (c->sbo >> 4) > 0x3fff) {
		c->bi = c->bj = -1;
		return 0;
	}
	for (i = 0; i < o->e; i++)
		for (j = 0; j < 16; j++) {
			if (o->evals > MAXEVALS)
				return err_set(o->err, "wgmma: operand %c of %s: verifying the tile at every start takes "
				               "more than %d layout evaluations; fewer loop variables in the start, or "
				               "smaller ranges", o->operand, o->kb->name, MAXEVALS);
			if (phys(o, i, j, &x) < 0)
				return -1;
			want = swz(c->t, start + canon(c->mn, c->t, i, j, c->lbo, c->sbo));
			if (x != want) {
				c->bi = i;
				c->bj = j;
				c->got = x;
				c->want = want;
				return 0;
			}
			c->good++;
		}
	return 1;
}

static uint64_t
descriptor(const Cand *c, int64_t start)
{
	return (uint64_t)((start >> 4) & 0x3fff) | (uint64_t)((c->lbo >> 4) & 0x3fff) << 16
	     | (uint64_t)((c->sbo >> 4) & 0x3fff) << 32 | (uint64_t)c->t << 62;
}

/* "As[s, 64*w, 16*kk] {1, 64, 16}" */
static void
region_desc(const Kernel *k, const KRegion *r, char *out, size_t n)
{
	const KBuf *kb = &k->buf[r->buf];
	Buf b;
	int d;

	buf_init(&b);
	emit(&b, "%s[", kb->name);
	for (d = 0; d < kb->ndim; d++) {
		emit(&b, "%s", d ? ", " : "");
		kernel_print_expr(&b, k, r->begin[d]);
	}
	emit(&b, "] {");
	for (d = 0; d < kb->ndim; d++)
		emit(&b, "%s%lld", d ? ", " : "", (long long)r->extent[d]);
	emit(&b, "}");
	snprintf(out, n, "%s", b.s ? b.s : "?");
	buf_free(&b);
}

/* The tile's element (i, j) as buffer coordinates: "As[0, 3, 8]" */
static void
elem_desc(const Opnd *o, int64_t i, int64_t j, char *out, size_t n)
{
	size_t at = snprintf(out, n, "%s[", o->kb->name);
	int d, nd = o->kb->ndim;

	for (d = 0; d < nd && at < n; d++) {
		int rowi = o->operand == 'A' || o->nk;
		int64_t c = o->begin[d] + (d == nd - 2 ? (rowi ? i : j) : d == nd - 1 ? (rowi ? j : i) : 0);

		at += snprintf(out + at, n - at, "%s%lld", d ? ", " : "", (long long)c);
	}
	if (at < n)
		snprintf(out + at, n - at, "]");
}

static int
refuse(Opnd *o, const Cand *c, const char *at)
{
	char rd[200], el[120];

	region_desc(o->k, o->r, rd, sizeof rd);
	if (c->bi < 0)
		return err_set(o->err, "wgmma: operand %c %s (layout %s): no GMMA canonical form fits%s; the closest, "
		               "%s-major %s, needs LBO %lld and SBO %lld bytes (multiples of 16 in [0, 2^18))",
		               o->operand, rd, o->kb->layout_desc, at, c->mn ? "MN" : "K", lnames[c->t],
		               (long long)c->lbo, (long long)c->sbo);
	elem_desc(o, c->bi, c->bj, el, sizeof el);
	if (c->good == 0 && c->bi == 0 && c->bj == 0 && c->got == c->want)
		return err_set(o->err, "wgmma: operand %c %s (layout %s): the tile starts at byte %lld%s, not a "
		               "multiple of 16 under 256 KiB: no GMMA descriptor can address it", o->operand, rd,
		               o->kb->layout_desc, (long long)c->got, at);
	return err_set(o->err, "wgmma: operand %c %s (layout %s): no GMMA canonical form fits%s; the closest, "
	               "%s-major %s (LBO %lld, SBO %lld), holds for %lld elements, then element (%lld, %lld), %s, "
	               "is at byte %lld where the form puts it at %lld", o->operand, rd, o->kb->layout_desc, at,
	               c->mn ? "MN" : "K", lnames[c->t], (long long)c->lbo, (long long)c->sbo, (long long)c->good,
	               (long long)c->bi, (long long)c->bj, el, (long long)c->got, (long long)c->want);
}

/* Set o->begin from the region's start expressions under a binding. */
static int
starts(Opnd *o, const UBind *bind, int nbind)
{
	int d;

	for (d = 0; d < o->kb->ndim; d++)
		if (uop_eval(o->r->begin[d], bind, nbind, &o->begin[d], o->err) < 0)
			return -1;
	return 0;
}

/*
** The distinct values of start expression x over its own variables (their
** product at most 2^16 points), sorted into vals[0..*n), at most max of them:
** 0, or 1 when there are more (or too many points), or -1.
*/
static int
coord_values(const UOp *x, int64_t *vals, int max, int *n, Err *e)
{
	const UOp *v[MAXVARS];
	UBind b[MAXVARS];
	int nv = uop_vars(x, v, MAXVARS), i, j;
	int64_t pts = 1, p, val;

	*n = 0;
	if (nv > MAXVARS)
		return 1;
	for (i = 0; i < nv; i++) {
		b[i].name = v[i]->name;
		b[i].value = v[i]->arg[0];
		if (uck_mul(pts, v[i]->arg[1] - v[i]->arg[0] + 1, &pts) < 0 || pts > (1 << 16))
			return 1;
	}
	for (p = 0; p < pts; p++) {
		if (uop_eval(x, b, nv, &val, e) < 0)
			return -1;
		for (i = 0; i < *n && vals[i] < val; i++)
			;
		if (i == *n || vals[i] != val) {
			if (*n == max)
				return 1;
			for (j = (*n)++; j > i; j--)
				vals[j] = vals[j - 1];
			vals[i] = val;
		}
		for (i = nv - 1; i >= 0 && ++b[i].value > v[i]->arg[1]; i--)
			b[i].value = v[i]->arg[0];
	}
	return 0;
}

static int
shape_check(const Kernel *k, const KRegion *r, int operand, int flags, Err *e)
{
	const KBuf *kb;
	char rd[200];
	int d;

	if (r->buf < 0 || r->buf >= k->nbuf)
		return err_set(e, "wgmma: operand %c: no buffer %d", operand, r->buf);
	kb = &k->buf[r->buf];
	if (kb->scope != AS_LOCAL)
		return err_set(e, "wgmma: operand %c: %s is a %s buffer; wgmma reads its operands from shared memory",
		               operand, kb->name, kscope_name(kb->scope));
	if (kb->dtype != DT_FLOAT16 && kb->dtype != DT_BFLOAT16)
		return err_set(e, "wgmma: operand %c: %s is %s; this wgmma takes float16 or bfloat16", operand,
		               kb->name, dtype_name(kb->dtype));
	if (kb->ndim < 2)
		return err_set(e, "wgmma: operand %c: %s has %d dimension; the tile is its last two", operand,
		               kb->name, kb->ndim);
	for (d = 0; d < kb->ndim; d++)
		if (!r->begin[d] || dtype_is_float(r->begin[d]->dtype))
			return err_set(e, "wgmma: operand %c: start %d of %s is not an index", operand, d, kb->name);
	region_desc(k, r, rd, sizeof rd);
	for (d = 0; d < kb->ndim - 2; d++)
		if (r->extent[d] != 1)
			return err_set(e, "wgmma: operand %c %s: extent %d is %lld; every extent but the last two is 1",
			               operand, rd, d, (long long)r->extent[d]);
	if (operand == 'A' && (r->extent[kb->ndim - 2] != 64 || r->extent[kb->ndim - 1] != 16))
		return err_set(e, "wgmma: operand A %s: the tile is %lld x %lld; A is 64 x 16 (m, k)", rd,
		               (long long)r->extent[kb->ndim - 2], (long long)r->extent[kb->ndim - 1]);
	if (operand == 'B' && (flags & KWG_B_NK) && (r->extent[kb->ndim - 1] != 16 || r->extent[kb->ndim - 2] % 8
	|| r->extent[kb->ndim - 2] < 8 || r->extent[kb->ndim - 2] > 256))
		return err_set(e, "wgmma: operand B %s (b_nk): the tile is %lld x %lld; B given (n, k) is N x 16, N a "
		               "multiple of 8 from 8 to 256", rd, (long long)r->extent[kb->ndim - 2],
		               (long long)r->extent[kb->ndim - 1]);
	if (operand == 'B' && !(flags & KWG_B_NK) && (r->extent[kb->ndim - 2] != 16 || r->extent[kb->ndim - 1] % 8
	|| r->extent[kb->ndim - 1] < 8 || r->extent[kb->ndim - 1] > 256))
		return err_set(e, "wgmma: operand B %s: the tile is %lld x %lld; B is 16 x N (k, n), N a multiple "
		               "of 8 from 8 to 256", rd, (long long)r->extent[kb->ndim - 2],
		               (long long)r->extent[kb->ndim - 1]);
	return 0;
}

/*
** A from registers (the RS form): the 8 elements of a register buffer from
** the region's start along its last dimension, each thread's fragment of the
** 64 x 16 tile (kernel.h, KGmmaDesc.regs).
*/
static int
areg_check(const Kernel *k, const KRegion *r, Err *e)
{
	const KBuf *kb = &k->buf[r->buf];
	char rd[200];
	int d;

	if (kb->dtype != DT_FLOAT16 && kb->dtype != DT_BFLOAT16)
		return err_set(e, "wgmma: operand A: %s is %s; this wgmma takes float16 or bfloat16", kb->name,
		               dtype_name(kb->dtype));
	for (d = 0; d < kb->ndim; d++)
		if (!r->begin[d] || dtype_is_float(r->begin[d]->dtype))
			return err_set(e, "wgmma: operand A: start %d of %s is not an index", d, kb->name);
	region_desc(k, r, rd, sizeof rd);
	for (d = 0; d < kb->ndim; d++)
		if (r->extent[d] != (d == kb->ndim - 1 ? 8 : 1))
			return err_set(e, "wgmma: operand A %s (registers): extent %d is %lld; A from registers is a thread's "
			               "8 elements of the 64 x 16 tile, along the last dimension (every other extent 1)", rd,
			               d, (long long)r->extent[d]);
	if (kb->shape[kb->ndim - 1] < 8)
		return err_set(e, "wgmma: operand A %s (registers): the last dimension of %s has %lld elements; the "
		               "fragment is 8", rd, kb->name, (long long)kb->shape[kb->ndim - 1]);
	return 0;
}

/* Whether operand A of a wgmma over buffer a is the register form. */
static int
a_regs(const Kernel *k, int a)
{
	return a >= 0 && a < k->nbuf && k->buf[a].scope == AS_REG;
}

int
kernel_wgmma_desc(const Kernel *k, const KRegion *r, int operand, const UBind *bind, int nbind,
                  KGmmaDesc *out, Err *e)
{
	return kernel_wgmma_desc_flags(k, r, operand, 0, bind, nbind, out, e);
}

static int
desc_flags(const Kernel *k, const KRegion *r, int operand, int flags, const UBind *bind, int nbind,
           KGmmaDesc *out, UProg **prog, Err *e)
{
	const UOp *vars[MAXVARS], *tmp[MAXVARS];
	UBind vb[MAXVARS];
	int nv = 0, d, i, j, n, found = 0, cross, nval[T_MAXDIM];
	int64_t combos = 1, ncross, at, start, rep = -1, cval[T_MAXDIM][MAXVALS];
	Cand best, c;
	Opnd o;
	char where[200];

	if (operand != 'A' && operand != 'B')
		return err_set(e, "wgmma: operand %c; a wgmma's operands are A and B", operand);
	if (flags & ~KWG_B_NK || (operand == 'A' && flags))
		return err_set(e, "wgmma: operand %c: flags %d; b_nk is the only flag, and for B", operand, flags);
	if (shape_check(k, r, operand, flags, e) < 0)
		return -1;
	memset(&o, 0, sizeof o);
	o.k = k;
	o.kb = &k->buf[r->buf];
	o.r = r;
	o.operand = operand;
	o.prog = prog;
	o.err = e;
	o.nk = operand == 'B' && (flags & KWG_B_NK);
	o.e = operand == 'A' ? 64 : r->extent[o.kb->ndim - (o.nk ? 2 : 1)];
	/* the variables the start depends on, each over its range */
	for (d = 0; d < o.kb->ndim; d++) {
		n = uop_vars(r->begin[d], tmp, MAXVARS);
		if (n > MAXVARS)
			return err_set(e, "wgmma: operand %c: the start depends on more than %d variables", operand, MAXVARS);
		for (i = 0; i < n; i++) {
			for (j = 0; j < nv && vars[j] != tmp[i]; j++)
				;
			if (j < nv)
				continue;
			if (nv == MAXVARS)
				return err_set(e, "wgmma: operand %c: the start depends on more than %d variables", operand,
				               MAXVARS);
			vars[nv++] = tmp[i];
			combos = combos > KGMMA_MAXSTARTS ? combos : combos * (tmp[i]->arg[1] - tmp[i]->arg[0] + 1);
		}
	}
	/* Too many bindings: every combination of each coordinate's own values
	** instead (a superset of the starts the region takes; pipeline slots and
	** warpgroup rows have a few values each however long the loops are). */
	cross = combos > KGMMA_MAXSTARTS;
	for (d = 0, ncross = 1; cross && d < o.kb->ndim; d++) {
		int rc = coord_values(r->begin[d], cval[d], MAXVALS, &nval[d], e);

		if (rc < 0)
			return -1;
		if (rc > 0 || (ncross *= nval[d]) > KGMMA_MAXSTARTS) {
			region_desc(k, r, where, sizeof where);
			return err_set(e, "wgmma: operand %c %s: the start takes more than %d values; the descriptor "
			               "is verified at each, so fewer or shorter loops in the start", operand, where,
			               KGMMA_MAXSTARTS);
		}
	}
	if (cross)
		combos = ncross;
	memset(&best, 0, sizeof best);
	best.bi = best.bj = -1;
	for (at = 0; at < combos; at++) {
		int64_t x = at;

		if (cross) {
			for (d = o.kb->ndim - 1; d >= 0; d--) {
				o.begin[d] = cval[d][x % nval[d]];
				x /= nval[d];
			}
		} else {
			for (i = 0; i < nv; i++) {
				int64_t span = vars[i]->arg[1] - vars[i]->arg[0] + 1;

				vb[i].name = vars[i]->name;
				vb[i].value = vars[i]->arg[0] + x % span;
				x /= span;
			}
			if (starts(&o, vb, nv) < 0)
				return -1;
		}
		if (phys(&o, 0, 0, &start) < 0)
			return -1;
		if (!found) {
			int mn, t;

			/* the first start chooses the form: K-major first, the widest swizzle first */
			for (mn = 0; mn < 2 && !found; mn++)
				for (t = 1; t <= 4 && !found; t++) {
					int rc;

					memset(&c, 0, sizeof c);
					c.mn = mn;
					c.t = t % 4;
					if (derive(&o, &c, start) < 0 || (rc = verify(&o, &c, start)) < 0)
						return -1;
					if (rc == 1) {
						best = c;
						found = 1;
					} else if (c.good > best.good || best.bi == -1) {
						best = c;
					}
				}
			if (!found)
				return refuse(&o, &best, "");
			continue;
		}
		c = best;
		if ((n = verify(&o, &c, start)) < 0)
			return -1;
		if (!n) {
			size_t w = snprintf(where, sizeof where, " at the start where");

			if (cross) {
				w = snprintf(where, sizeof where, " at the start (");
				for (d = 0; d < o.kb->ndim && w < sizeof where; d++)
					w += snprintf(where + w, sizeof where - w, "%s%lld", d ? ", " : "", (long long)o.begin[d]);
				if (w < sizeof where)
					snprintf(where + w, sizeof where - w, ")");
			}
			for (i = 0; !cross && i < nv && w < sizeof where; i++)
				w += snprintf(where + w, sizeof where - w, "%s %s = %lld", i ? "," : "", vb[i].name,
				              (long long)vb[i].value);
			return refuse(&o, &c, where);
		}
	}
	/* the start asked for */
	for (i = 0; i < nv; i++) {
		vb[i].name = vars[i]->name;
		vb[i].value = vars[i]->arg[0];
		for (j = 0; j < nbind; j++)
			if (bind[j].name && strcmp(bind[j].name, vars[i]->name) == 0)
				vb[i].value = bind[j].value;
	}
	if (starts(&o, vb, nv) < 0 || phys(&o, 0, 0, &rep) < 0)
		return -1;
	if (out) {
		memset(out, 0, sizeof *out);
		out->mn_major = best.mn;
		out->layout_type = best.t;
		out->lbo = best.lbo;
		out->sbo = best.sbo;
		out->start = rep;
		out->nstarts = combos;
		out->desc = descriptor(&best, rep);
	}
	return 0;
}

int
kernel_wgmma_desc_flags(const Kernel *k, const KRegion *r, int operand, int flags, const UBind *bind,
                        int nbind, KGmmaDesc *out, Err *e)
{
	UProg *prog = NULL;
	int rc = desc_flags(k, r, operand, flags, bind, nbind, out, &prog, e);

	uop_prog_free(prog);
	return rc;
}

/* ---- the statements ---- */

static int
d_check(const Kernel *k, int d, int64_t n, Err *e)
{
	const KBuf *db;
	int64_t numel = 1;
	int j;

	if (d < 0 || d >= k->nbuf)
		return err_set(e, "wgmma: no buffer %d", d);
	db = &k->buf[d];
	if (db->scope != AS_REG)
		return err_set(e, "wgmma: the accumulator %s is a %s buffer; wgmma accumulates in registers (local)",
		               db->name, kscope_name(db->scope));
	if (db->dtype != DT_FLOAT32)
		return err_set(e, "wgmma: the accumulator %s is %s; this wgmma accumulates in float32", db->name,
		               dtype_name(db->dtype));
	for (j = 0; j < db->ndim; j++)
		numel *= db->shape[j];
	if (numel != n / 2)
		return err_set(e, "wgmma: the accumulator %s holds %lld elements; m64n%lldk16 gives a thread %lld",
		               db->name, (long long)numel, (long long)n, (long long)(n / 2));
	return 0;
}

/* A region from a statement's index: its start, the extents of operand 'A' or 'B'. */
static int
region_of(const Kernel *k, const UOp *ix, int operand, int64_t n, int nk, KRegion *r, Err *e)
{
	const KBuf *kb;
	int d;

	if (!ix || ix->op != OP_INDEX || ix->nsrc < 1 || ix->src[0]->op != OP_DEFINE || ix->src[0]->arg[0] < 0
	|| ix->src[0]->arg[0] >= k->nbuf)
		return err_set(e, "wgmma: operand %c is not an element of a buffer of this kernel", operand);
	memset(r, 0, sizeof *r);
	r->buf = (int)ix->src[0]->arg[0];
	kb = &k->buf[r->buf];
	if (ix->nsrc - 1 != kb->ndim || kb->ndim < (operand == 'A' && a_regs(k, r->buf) ? 1 : 2))
		return err_set(e, "wgmma: operand %c: %s has %d dimensions, indexed with %d", operand, kb->name,
		               kb->ndim, ix->nsrc - 1);
	for (d = 0; d < kb->ndim; d++) {
		r->begin[d] = ix->src[d + 1];
		r->extent[d] = 1;
	}
	if (operand == 'A' && a_regs(k, r->buf)) {
		r->extent[kb->ndim - 1] = 8;
		return 0;
	}
	r->extent[kb->ndim - 2] = operand == 'A' ? 64 : nk ? n : 16;
	r->extent[kb->ndim - 1] = operand == 'A' || nk ? 16 : n;
	return 0;
}

int
kernel_wgmma_check(const Kernel *k, const UOp *s, KGmmaDesc *a, KGmmaDesc *b, Err *e)
{
	KRegion ra, rb;

	if (!s || s->op != OP_WGMMA || s->nsrc != 3 || s->src[0]->op != OP_DEFINE)
		return err_set(e, "wgmma: not a (D, A, B) statement");
	if (s->arg[1] & ~(int64_t)KWG_FLAGS)
		return err_set(e, "wgmma: flags %lld; the flags are b_nk (%d) and zero (%d)", (long long)s->arg[1],
		               KWG_B_NK, KWG_ZERO);
	if (d_check(k, (int)s->src[0]->arg[0], s->arg[0], e) < 0
	|| region_of(k, s->src[1], 'A', s->arg[0], 0, &ra, e) < 0
	|| region_of(k, s->src[2], 'B', s->arg[0], (int)(s->arg[1] & KWG_B_NK), &rb, e) < 0)
		return -1;
	if (k->buf[ra.buf].dtype != k->buf[rb.buf].dtype)
		return err_set(e, "wgmma: A (%s) is %s, B (%s) is %s; one dtype for both", k->buf[ra.buf].name,
		               dtype_name(k->buf[ra.buf].dtype), k->buf[rb.buf].name, dtype_name(k->buf[rb.buf].dtype));
	if (a_regs(k, ra.buf)) {
		if (areg_check(k, &ra, e) < 0)
			return -1;
		if (a) {
			memset(a, 0, sizeof *a);
			a->regs = 1;
		}
	} else if (kernel_wgmma_desc(k, &ra, 'A', NULL, 0, a, e) < 0)
		return -1;
	return kernel_wgmma_desc_flags(k, &rb, 'B', (int)(s->arg[1] & KWG_B_NK), NULL, 0, b, e) < 0 ? -1 : 0;
}

UOp *
kernel_wgmma(Kernel *k, int d, const KRegion *a, const KRegion *b, Err *e)
{
	return kernel_wgmma_flags(k, d, a, b, 0, e);
}

UOp *
kernel_wgmma_flags(Kernel *k, int d, const KRegion *a, const KRegion *b, int flags, Err *e)
{
	UOp *src[3], *u;
	int64_t n;

	if (!a || !b || a->buf < 0 || a->buf >= k->nbuf || b->buf < 0 || b->buf >= k->nbuf)
		return err_set(e, "wgmma: the operands must be regions of buffers of this kernel"), NULL;
	if (flags & ~KWG_FLAGS)
		return err_set(e, "wgmma: flags %d; the flags are b_nk (%d) and zero (%d)", flags, KWG_B_NK, KWG_ZERO), NULL;
	if (shape_check(k, b, 'B', flags & KWG_B_NK, e) < 0)
		return NULL;
	n = b->extent[k->buf[b->buf].ndim - (flags & KWG_B_NK ? 2 : 1)];
	if (d_check(k, d, n, e) < 0 || (a_regs(k, a->buf) ? areg_check(k, a, e) : shape_check(k, a, 'A', 0, e)) < 0)
		return NULL;
	src[0] = k->buf[d].def;
	if (!(src[1] = kernel_index(k, a->buf, (UOp *const *)a->begin, k->buf[a->buf].ndim))
	|| !(src[2] = kernel_index(k, b->buf, (UOp *const *)b->begin, k->buf[b->buf].ndim)))
		return err_set(e, "wgmma: out of memory"), NULL;
	if (!(u = uop_new(k->c, OP_WGMMA, DT_VOID, src, 3, n, flags, NULL, NULL, 0)))
		return err_set(e, "wgmma: out of memory"), NULL;
	if (kernel_wgmma_check(k, u, NULL, NULL, e) < 0)
		return NULL;
	return u;
}

static int
has_wgmma(const UOp *s, int depth)
{
	int i;

	if (s->op == OP_WGMMA)
		return 1;
	if (depth > 2000 || (s->op != OP_END && s->op != OP_IF))
		return 0;
	for (i = 1; i < s->nsrc; i++)
		if (has_wgmma(s->src[i], depth + 1))
			return 1;
	return 0;
}

int
kernel_has_wgmma(const Kernel *k)
{
	int i;

	for (i = 0; i < k->nstage; i++)
		if (k->stage[i].body && has_wgmma(k->stage[i].body, 0))
			return 1;
	return 0;
}

UOp *
kernel_wg_fence(Kernel *k)
{
	return uop_new(k->c, OP_WG_FENCE, DT_VOID, NULL, 0, 0, 0, NULL, NULL, 0);
}

UOp *
kernel_setmaxnreg(Kernel *k, int n, int inc, Err *e)
{
	if (n < 24 || n > 256 || n % 8)
		return err_set(e, "setmaxnreg: %d registers; setmaxnreg takes a multiple of 8 from 24 to 256", n), NULL;
	return uop_new(k->c, OP_SETMAXNREG, DT_VOID, NULL, 0, n, inc != 0, NULL, NULL, 0);
}

UOp *
kernel_wg_commit(Kernel *k)
{
	return uop_new(k->c, OP_WG_COMMIT, DT_VOID, NULL, 0, 0, 0, NULL, NULL, 0);
}

UOp *
kernel_wg_wait(Kernel *k, int n, Err *e)
{
	UOp *u;

	if (n < 0 || n > 7)
		return err_set(e, "wgmma_wait: %d groups; wgmma.wait_group takes 0 to 7", n), NULL;
	if (!(u = uop_new(k->c, OP_WG_WAIT, DT_VOID, NULL, 0, n, 0, NULL, NULL, 0)))
		err_set(e, "wgmma_wait: out of memory");
	return u;
}

/* dist_flow.c - what a distributed program's steps read and write: the write-once rule over storage ranges, the two streams and their waits, parts of a collective (checked element by element and simulated), and the simulation in any order the waits allow. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int64_t
kbuf_count(const KBuf *b)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < b->ndim; i++)
		n *= b->shape[i];
	return n;
}

/*
** A part's ranges of the source's and the destination's storage, as NCCL
** sees them: a reduce_scatter reads n * c elements and leaves c on each
** device, an allgather reads c and leaves n * c, an allreduce both c
** (c: the part's count, a parts'th of what each device receives or sends).
*/
static void
part_ranges(const DistProgram *p, const DistStep *s, int64_t *slo, int64_t *shi, int64_t *dlo, int64_t *dhi)
{
	const DistTensor *src = &p->t[s->src], *dst = &p->t[s->dst];
	int64_t n = p->ndev, j = s->part, c;

	switch (s->r.coll) {
	case AXE_COLL_REDUCE_SCATTER:
		c = dst->dist.count / s->parts;
		*slo = j * c * n, *shi = *slo + c * n, *dlo = j * c, *dhi = *dlo + c;
		break;
	case AXE_COLL_ALLGATHER:
		c = src->dist.count / s->parts;
		*slo = j * c, *shi = *slo + c, *dlo = j * c * n, *dhi = *dlo + c * n;
		break;
	default:
		c = src->dist.size / s->parts;
		*slo = *dlo = j * c, *shi = *dhi = *slo + c;
		break;
	}
}

int
dist_step_ranges(const DistProgram *p, int i, DistRange *out, int max)
{
	const DistStep *s = &p->s[i];
	int n = 0, b;
	DistRange r[2];

	if (s->kind == DIST_LAUNCH) {
		for (b = 0; b < s->k->nbuf; b++) {
			int64_t lo = s->at && s->at[b] >= 0 ? s->at[b] : 0;

			if (s->bind[b] < 0)
				continue;
			if (n < max) {
				out[n].t = s->bind[b];
				out[n].write = s->k->buf[b].role == KB_OUTPUT;
				out[n].lo = lo;
				out[n].hi = lo + kbuf_count(&s->k->buf[b]);
			}
			n++;
		}
		return n;
	}
	r[0].t = s->src, r[0].write = 0;
	r[1].t = s->dst, r[1].write = 1;
	if (s->parts) {
		part_ranges(p, s, &r[0].lo, &r[0].hi, &r[1].lo, &r[1].hi);
	} else {
		r[0].lo = r[1].lo = 0;
		r[0].hi = p->t[s->src].dist.count;
		r[1].hi = p->t[s->dst].dist.count;
	}
	for (; n < 2; n++)
		if (n < max)
			out[n] = r[n];
	return n;
}

/* the ranges of step i, allocated (*n of them) */
static DistRange *
ranges(const DistProgram *p, int i, int *n, Err *e)
{
	DistRange *r;

	*n = dist_step_ranges(p, i, NULL, 0);
	if (!(r = malloc((size_t)(*n ? *n : 1) * sizeof *r))) {
		err_set(e, "dist: out of memory");
		return NULL;
	}
	dist_step_ranges(p, i, r, *n);
	return r;
}

static int
overlap(const DistRange *a, const DistRange *b)
{
	return a->t == b->t && a->lo < b->hi && b->lo < a->hi;
}

/* Was tensor t read by a step before step `before`? (-1: out of memory) */
static int
read_before(const DistProgram *p, int t, int before, Err *e)
{
	DistRange *r;
	int i, j, n, hit = 0;

	for (i = 0; i < before && !hit; i++) {
		if (!(r = ranges(p, i, &n, e)))
			return -1;
		for (j = 0; j < n; j++)
			hit |= r[j].t == t && !r[j].write;
		free(r);
	}
	return hit;
}

static int
by_lo(const void *a, const void *b)
{
	const DistRange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The first element of [lo, hi) of tensor t that no step before `before` wrote, or hi. */
static int64_t
first_unwritten(const DistProgram *p, int t, int64_t lo, int64_t hi, int before, Err *e)
{
	DistRange *w = NULL, *r;
	int i, j, n, nw = 0;

	for (i = 0; i < before; i++) {
		if (!(r = ranges(p, i, &n, e))) {
			free(w);
			return -1;
		}
		for (j = 0; j < n; j++) {
			DistRange *nw_;

			if (r[j].t != t || !r[j].write)
				continue;
			if (!(nw_ = realloc(w, (size_t)(nw + 1) * sizeof *w))) {
				free(r);
				free(w);
				err_set(e, "dist: out of memory");
				return -1;
			}
			w = nw_;
			w[nw++] = r[j];
		}
		free(r);
	}
	if (nw)
		qsort(w, (size_t)nw, sizeof *w, by_lo);
	for (j = 0; j < nw && lo < hi; j++)
		if (w[j].lo <= lo && w[j].hi > lo)
			lo = w[j].hi;
	free(w);
	return lo < hi ? lo : hi;
}

int
dist_flow_admit(DistProgram *p, const char *who, Err *e)
{
	DistStep *s = &p->s[p->ns];
	DistRange *a, *q;
	int na, nq, i, j, k, w;

	s->stream = s->kind == DIST_REDIST;
	s->end = s->via == DIST_VIA_COPY && s->r.coll == AXE_COLL_REDUCE_SCATTER ? 2 : s->stream;
	s->wait[0] = s->wait[1] = -1;
	if (!(a = ranges(p, p->ns, &na, e)))
		return -1;
	for (i = 0; i < na; i++) {
		const DistTensor *t = &p->t[a[i].t];

		for (k = 0; k < i; k++)
			if (overlap(&a[i], &a[k]) && (a[i].write || a[k].write)) {
				err_set(e, "%s: the step both reads and writes elements [%lld, %lld) of %s", who,
				        (long long)(a[i].lo > a[k].lo ? a[i].lo : a[k].lo),
				        (long long)(a[i].hi < a[k].hi ? a[i].hi : a[k].hi), t->name);
				goto fail;
			}
		if (a[i].lo < 0 || a[i].hi > t->dist.count) {
			err_set(e, "%s: elements [%lld, %lld) of %s; it stores %lld on each device", who, (long long)a[i].lo,
			        (long long)a[i].hi, t->name, (long long)t->dist.count);
			goto fail;
		}
		if (a[i].write) {
			int rb = t->producer < 0 ? read_before(p, a[i].t, p->ns, e) : 0;

			if (rb < 0)
				goto fail;
			if (rb) {
				err_set(e, "%s: %s is read already as an input (no step wrote it); a tensor is an input or "
				        "computed, and written once, before it is read", who, t->name);
				goto fail;
			}
			for (j = 0; j < p->ns; j++) {
				if (!(q = ranges(p, j, &nq, e)))
					goto fail;
				for (k = 0; k < nq; k++)
					if (q[k].write && overlap(&a[i], &q[k])) {
						err_set(e, "%s: %s is written already (elements [%lld, %lld) by step %d); a tensor is written "
						        "once, before it is read", who, t->name,
						        (long long)(a[i].lo > q[k].lo ? a[i].lo : q[k].lo),
						        (long long)(a[i].hi < q[k].hi ? a[i].hi : q[k].hi), j + 1);
						free(q);
						goto fail;
					}
				free(q);
			}
		} else if (t->producer >= 0) {
			int64_t u = first_unwritten(p, a[i].t, a[i].lo, a[i].hi, p->ns, e);

			if (u < 0)
				goto fail;
			if (u < a[i].hi) {
				err_set(e, "%s: reads element %lld of %s's storage, which no step before it writes", who,
				        (long long)u, t->name);
				goto fail;
			}
		} else if (t->partial) {
			err_set(e, "%s: %s is partial and written by no step; a program's inputs hold values", who, t->name);
			goto fail;
		}
	}
	/* per other stream, the last step ending there that touches what this one does, one of them writing */
	for (w = 0; w < 3; w++) {
		int *slot = &s->wait[s->wait[0] >= 0];

		if (w == s->stream)
			continue;
		for (j = p->ns - 1; j >= 0 && *slot < 0; j--) {
			if (p->s[j].end != w)
				continue;
			if (!(q = ranges(p, j, &nq, e)))
				goto fail;
			for (i = 0; i < na && *slot < 0; i++)
				for (k = 0; k < nq; k++)
					if (overlap(&a[i], &q[k]) && (a[i].write || q[k].write)) {
						*slot = j;
						break;
					}
			free(q);
		}
	}
	for (i = 0; i < na; i++)
		if (a[i].write)
			p->t[a[i].t].producer = p->ns;
	free(a);
	return 0;
fail:
	free(a);
	return -1;
}

/* ---- parts of a collective ---- */

/* The digits of x row-major over a layout's extents, stepped one element at a time. */
typedef struct Odometer {
	const AxeDist *d;
	int64_t dig[AXE_ITERS];
	int64_t m, g;
} Odometer;

static void
odo_start(Odometer *o, const AxeDist *d)
{
	memset(o, 0, sizeof *o);
	o->d = d;
}

static void
odo_next(Odometer *o)
{
	const AxeDist *d = o->d;
	int i;

	for (i = d->n - 1; i >= 0; i--) {
		o->m += d->m[i];
		o->g += d->g[i];
		if (++o->dig[i] < d->e[i])
			return;
		o->m -= d->m[i] * d->e[i];
		o->g -= d->g[i] * d->e[i];
		o->dig[i] = 0;
	}
}

static int64_t
odo_device(const Odometer *o)
{
	return o->d->kind == AXE_SINGLE ? o->d->root : o->g;
}

static void
coords(char *out, size_t n, const AxeShape *sh, int64_t x)
{
	int64_t c[AXE_ITERS];
	int i;
	size_t k;

	for (i = sh->n - 1; i >= 0; i--) {
		c[i] = x % sh->v[i];
		x /= sh->v[i];
	}
	k = (size_t)snprintf(out, n, "(");
	for (i = 0; i < sh->n && k < n; i++)
		k += (size_t)snprintf(out + k, n - k, "%s%lld", i ? ", " : "", (long long)c[i]);
	if (k < n)
		snprintf(out + k, n - k, ")");
}

int
dist_part_check(const DistProgram *p, const DistStep *s, Err *e)
{
	const DistTensor *src = &p->t[s->src], *dst = &p->t[s->dst];
	int64_t n = p->ndev, c, x, have, want;
	Odometer os, od;
	int i;
	const char *verb = axe_coll_name(s->r.coll);

	if (s->r.coll != AXE_COLL_REDUCE_SCATTER && s->r.coll != AXE_COLL_ALLGATHER && s->r.coll != AXE_COLL_ALLREDUCE)
		return err_set(e, "redistribute %s -> %s, part %d of %d: the layouts call for %s; a part is of a reduce_scatter, "
		               "allgather or allreduce", src->name, dst->name, s->part + 1, s->parts,
		               s->r.coll == AXE_COLL_NONE ? "no collective" : verb);
	c = s->r.coll == AXE_COLL_REDUCE_SCATTER ? dst->dist.count : s->r.coll == AXE_COLL_ALLGATHER ? src->dist.count
	    : src->dist.size;
	if (c % s->parts)
		return err_set(e, "redistribute %s -> %s: %lld elements a device in %d parts; the parts must be equal", src->name,
		               dst->name, (long long)c, s->parts);
	c /= s->parts;
	/* one check of every element a program, for the first part of a pair */
	for (i = 0; i < p->ns; i++)
		if (p->s[i].kind == DIST_REDIST && p->s[i].src == s->src && p->s[i].dst == s->dst && p->s[i].parts == s->parts)
			return 0;
	odo_start(&os, &src->dist);
	odo_start(&od, &dst->dist);
	for (x = 0; x < src->dist.size; x++, odo_next(&os), odo_next(&od)) {
		int64_t j;

		switch (s->r.coll) {
		case AXE_COLL_REDUCE_SCATTER:   /* device q's j-th c elements come from the source's [j c n + q c, ...) */
			j = od.m / c;
			have = os.m;
			want = j * c * n + odo_device(&od) * c + od.m % c;
			break;
		case AXE_COLL_ALLGATHER:        /* device q's j-th c elements go to [j c n + q c, ...) of every device */
			j = os.m / c;
			have = od.m;
			want = j * c * n + odo_device(&os) * c + os.m % c;
			break;
		default:
			have = od.m;
			want = os.m;
			break;
		}
		if (have != want) {
			char at[128];

			coords(at, sizeof at, &src->shape, x);
			if (s->r.coll == AXE_COLL_REDUCE_SCATTER)
				return err_set(e, "reduce_scatter %s -> %s in %d parts: element %s lands at %s[%lld] on device %lld, so "
				               "NCCL takes it from %s[%lld]; %s's layout stores it at %lld (lay each part's elements "
				               "out rank-major: the parts outermost, then the devices)", src->name, dst->name, s->parts, at,
				               dst->name, (long long)od.m, (long long)odo_device(&od), src->name, (long long)want,
				               src->name, (long long)have);
			if (s->r.coll == AXE_COLL_ALLGATHER)
				return err_set(e, "allgather %s -> %s in %d parts: element %s is at %s[%lld] on device %lld, so NCCL "
				               "puts it at %s[%lld]; %s's layout stores it at %lld (lay each part's elements out "
				               "rank-major: the parts outermost, then the devices)", src->name, dst->name, s->parts, at,
				               src->name, (long long)os.m, (long long)odo_device(&os), dst->name, (long long)want,
				               dst->name, (long long)have);
			return err_set(e, "allreduce %s -> %s in %d parts: element %s is at %s[%lld] and at %s[%lld]; the parts need "
			               "the same storage order", src->name, dst->name, s->parts, at, src->name, (long long)want,
			               dst->name, (long long)have);
		}
	}
	return 0;
}

/* NCCL on the part's ranges: sums in double rounded once, as the whole collective */
int
dist_part_sim(const DistProgram *p, const DistStep *s, DistState *st, Err *e)
{
	const DistTensor *src = &p->t[s->src], *dst = &p->t[s->dst];
	int64_t slo, shi, dlo, dhi, c, i;
	int r, q, nd = p->ndev;

	part_ranges(p, s, &slo, &shi, &dlo, &dhi);
	for (r = 0; r < nd; r++) {
		TBuf *d = dist_store(st, r, s->dst);

		if (!d->data && dist_alloc_buf(d, dst->dtype, dst->dist.count, e) < 0)
			return -1;
		if (!dist_store(st, r, s->src)->data)
			return err_set(e, "dist: %s has no value on device %d", src->name, r);
	}
	switch (s->r.coll) {
	case AXE_COLL_REDUCE_SCATTER:
		c = dhi - dlo;
		for (r = 0; r < nd; r++)
			for (i = 0; i < c; i++) {
				double v = 0;

				for (q = 0; q < nd; q++)
					v += tbuf_get(dist_store(st, q, s->src), slo + r * c + i);
				dist_put(dist_store(st, r, s->dst), dlo + i, v);
			}
		break;
	case AXE_COLL_ALLGATHER:
		c = shi - slo;
		for (r = 0; r < nd; r++)
			for (q = 0; q < nd; q++)
				for (i = 0; i < c; i++)
					dist_put(dist_store(st, r, s->dst), dlo + q * c + i, tbuf_get(dist_store(st, q, s->src), slo + i));
		break;
	default:
		for (i = slo; i < shi; i++) {
			double v = 0;

			for (q = 0; q < nd; q++)
				v += tbuf_get(dist_store(st, q, s->src), i);
			for (r = 0; r < nd; r++)
				dist_put(dist_store(st, r, s->dst), dlo + (i - slo), v);
		}
		break;
	}
	return 0;
}

/* axe_dist.c - distributed tensors on one device axis: where each device stores its elements, and the NCCL collective a redistribution needs (the Axe paper, Sections 3.2 and 4.2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
** A distributed tensor's Axe layout places each logical element x on the
** device axis (gpuid) and the memory axis m. NCCL moves contiguous chunks:
** allgather leaves rank q's `count` elements at q*count of every receive
** buffer, reduce_scatter gives rank q the sum of every rank's chunk q. So a
** layout is usable when every device's storage is dense, [0, count), and the
** analysis reads each layout as one of three kinds:
**   sharded     D has iters on gpuid, R is empty: each element on one device;
**               x -> gpuid(x) * count + m(x) ("flat") is then a bijection
**               onto [0, size), NCCL's rank-major order;
**   replicated  D has none, R covers every device: each device holds all;
**   single      neither: every element on the device O names (root).
** Strides are positive and compact on each axis (sorted, each the product of
** the extents below it), which is what makes the storage dense.
*/

static int
cmp_stride(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Do the iters (e[k], s[k]) with s[k] != 0 cover [0, total) exactly once? A
** reason otherwise. */
static int
compact(const int64_t *e, const int64_t *s, int n, int64_t total, const char **why)
{
	int64_t it[AXE_ITERS * 2][2], next = 1;
	int i, m = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == 0 || e[i] == 1)
			continue;
		if (s[i] < 0) {
			*why = "a negative stride";
			return 0;
		}
		it[m][0] = e[i];
		it[m][1] = s[i];
		m++;
	}
	qsort(it, (size_t)m, sizeof it[0], cmp_stride);
	for (i = 0; i < m; i++) {
		if (it[i][1] != next) {
			*why = it[i][1] < next ? "two elements share an offset" : "a gap between offsets";
			return 0;
		}
		next *= it[i][0];
	}
	if (next != total) {
		*why = "the offsets do not fill it";
		return 0;
	}
	return 1;
}

const char *
axe_dist_kind_name(int k)
{
	switch (k) {
	case AXE_SHARDED: return "sharded";
	case AXE_REPLICATED: return "replicated";
	case AXE_SINGLE: return "single";
	default: return "?";
	}
}

int
axe_dist(const AxeLayout *l, const AxeShape *sh, const char *axis, int64_t ndev, AxeDist *out, Err *e)
{
	AxeDist d;
	int64_t size = 1, ge[AXE_ITERS], gs[AXE_ITERS], re[AXE_ITERS], rs[AXE_ITERS];
	int i, ng = 0, nr = 0;
	const char *why = "";
	char s1[FMT_MAX];

	if (axe_check(l, e) < 0 || axe_check_shape(sh, "dist", e) < 0)
		return -1;
	if (!axis || !*axis || strlen(axis) >= AXE_NAME || axe_axis_kind(axis) != AXE_DEVICE)
		return err_set(e, "dist: %s is not a device axis (gpuid, gpuid_x, device, node ...)", axis ? axis : "(null)");
	if (ndev < 1 || ndev > 4096)
		return err_set(e, "dist: %lld devices on %s; 1 to 4096 are supported", (long long)ndev, axis);
	for (i = 0; i < sh->n; i++)
		size *= sh->v[i];
	if (size != axe_size(l))
		return err_set(e, "dist: %s has %lld elements, the shape %lld", axe_fmt(s1, l),
		               (long long)axe_size(l), (long long)size);
	memset(&d, 0, sizeof d);
	snprintf(d.axis, sizeof d.axis, "%s", axis);
	d.ndev = ndev;
	d.size = size;
	d.n = l->nd;
	for (i = 0; i < l->nd; i++) {
		const AxeIter *it = &l->d[i];

		d.e[i] = it->e;
		if (strcmp(it->axis, "m") == 0)
			d.m[i] = it->s;
		else if (strcmp(it->axis, axis) == 0)
			d.g[i] = it->s, ge[ng] = it->e, gs[ng++] = it->s;
		else
			return err_set(e, "dist: %s places elements on %s; a distributed tensor's layout uses m and %s only",
			               axe_fmt(s1, l), it->axis, axis);
	}
	for (i = 0; i < l->nr; i++) {
		if (strcmp(l->r[i].axis, axis) != 0)
			return err_set(e, "dist: %s replicates on %s; a device stores each element once (replicas on %s only)",
			               axe_fmt(s1, l), l->r[i].axis, axis);
		re[nr] = l->r[i].e;
		rs[nr++] = l->r[i].s;
	}
	for (i = 0; i < l->no; i++) {
		if (strcmp(l->o[i].axis, "m") == 0)
			d.moff = l->o[i].v;
		else if (strcmp(l->o[i].axis, axis) == 0)
			d.goff = l->o[i].v;
		else
			return err_set(e, "dist: %s has an offset on %s; m and %s only", axe_fmt(s1, l), l->o[i].axis, axis);
	}
	if (d.moff != 0)
		return err_set(e, "dist: %s starts at m = %lld; a device's storage starts at 0 (NCCL sends whole buffers)",
		               axe_fmt(s1, l), (long long)d.moff);
	if (ng && nr)
		return err_set(e, "dist: %s both shards and replicates over %s: that needs a communicator per replica "
		               "group, which is not supported", axe_fmt(s1, l), axis);
	if (ng) {
		d.kind = AXE_SHARDED;
		if (d.goff != 0 || !compact(ge, gs, ng, ndev, &why))
			return err_set(e, "dist: %s does not spread over devices 0..%lld of %s evenly (%s)", axe_fmt(s1, l),
			               (long long)ndev - 1, axis, d.goff ? "an offset on the device axis" : why);
		d.count = size / ndev;
	} else if (nr || ndev == 1) {
		d.kind = AXE_REPLICATED;
		if (d.goff != 0 || (nr && !compact(re, rs, nr, ndev, &why)) || (!nr && ndev != 1))
			return err_set(e, "dist: %s does not replicate over devices 0..%lld of %s (%s)", axe_fmt(s1, l),
			               (long long)ndev - 1, axis, d.goff ? "an offset on the device axis" : why);
		d.count = size;
	} else {
		d.kind = AXE_SINGLE;
		if (d.goff < 0 || d.goff >= ndev)
			return err_set(e, "dist: %s lives on device %lld of %s, which has %lld", axe_fmt(s1, l),
			               (long long)d.goff, axis, (long long)ndev);
		d.root = d.goff;
		d.count = size;
	}
	if (!compact(d.e, d.m, d.n, d.count, &why))
		return err_set(e, "dist: %s: a device's storage is not dense, [0, %lld) (%s on m); NCCL sends whole buffers",
		               axe_fmt(s1, l), (long long)d.count, why);
	/* the same tensor as a DTensor, when it is one: its local shape */
	d.shard = -2;
	d.local = *sh;
	if (d.kind != AXE_SINGLE) {
		AxeMesh mesh;
		int p;
		Err tmp;

		mesh.n = 1;
		snprintf(mesh.name[0], sizeof mesh.name[0], "%s", axis);
		mesh.size[0] = ndev;
		if (axe_to_dtensor(l, sh, &mesh, &p, &tmp) == 0) {
			d.shard = p;
			if (p >= 0)
				d.local.v[p] /= ndev;
		}
	}
	*out = d;
	return 0;
}

/* The digits of x row-major over d's extents, dotted with the strides s. */
static int64_t
dot(const AxeDist *d, const int64_t *s, int64_t x)
{
	int64_t v = 0;
	int i;

	for (i = d->n - 1; i >= 0; i--) {
		v += (x % d->e[i]) * s[i];
		x /= d->e[i];
	}
	return v;
}

int64_t axe_dist_m(const AxeDist *d, int64_t x) { return dot(d, d->m, x); }
int64_t axe_dist_g(const AxeDist *d, int64_t x) { return d->kind == AXE_SINGLE ? d->root : dot(d, d->g, x); }

void
axe_dist_flat_strides(const AxeDist *d, int64_t *s)
{
	int i;

	for (i = 0; i < d->n; i++)
		s[i] = d->m[i] + d->g[i] * d->count;
}

int64_t
axe_dist_flat(const AxeDist *d, int64_t x)
{
	int64_t s[AXE_ITERS];

	axe_dist_flat_strides(d, s);
	return dot(d, s, x);
}

/*
** Are x -> dot(a, sa, x) and x -> dot(b, sb, x) the same function? Each is
** determined by its value at every digit's unit step, so refining both to
** the common factorization of their extents and comparing strides decides
** it; where the extents share no refinement, the first differing element.
*/
static int
same_map(const AxeDist *a, const int64_t *sa, const AxeDist *b, const int64_t *sb)
{
	int64_t ea[AXE_ITERS], eb[AXE_ITERS], ta[AXE_ITERS], tb[AXE_ITERS];
	int i = a->n - 1, j = b->n - 1;

	if (a->size != b->size)
		return 0;
	memcpy(ea, a->e, sizeof ea);
	memcpy(eb, b->e, sizeof eb);
	memcpy(ta, sa, (size_t)a->n * sizeof *sa);
	memcpy(tb, sb, (size_t)b->n * sizeof *sb);
	/* walk from the fastest digit: strides must agree on each common factor */
	while (i >= 0 && j >= 0) {
		int64_t f;

		if (ea[i] == 1) { i--; continue; }
		if (eb[j] == 1) { j--; continue; }
		if (ta[i] != tb[j])
			return 0;
		f = ea[i] < eb[j] ? ea[i] : eb[j];
		if (ea[i] % f || eb[j] % f)
			break;   /* no common refinement: decide by elements */
		ea[i] /= f, eb[j] /= f;
		ta[i] *= f, tb[j] *= f;
	}
	if (i < 0 || j < 0) {
		for (; i >= 0; i--)
			if (ea[i] != 1)
				return 0;
		for (; j >= 0; j--)
			if (eb[j] != 1)
				return 0;
		return 1;
	}
	{
		int64_t x;

		for (x = 0; x < a->size; x++)
			if (dot(a, sa, x) != dot(b, sb, x))
				return 0;
		return 1;
	}
}

const char *
axe_coll_name(int c)
{
	switch (c) {
	case AXE_COLL_NONE: return "none";
	case AXE_COLL_ALLGATHER: return "allgather";
	case AXE_COLL_REDUCE_SCATTER: return "reduce_scatter";
	case AXE_COLL_ALLREDUCE: return "allreduce";
	case AXE_COLL_BROADCAST: return "broadcast";
	case AXE_COLL_REDUCE: return "reduce";
	default: return "?";
	}
}

int
axe_redistribute(const AxeDist *src, int partial, const AxeDist *dst, AxeRedist *out, Err *e)
{
	AxeRedist r;
	int64_t sf[AXE_ITERS], df[AXE_ITERS];

	if (src->ndev != dst->ndev || strcmp(src->axis, dst->axis) != 0 || src->size != dst->size)
		return err_set(e, "redistribute: the tensors differ in devices (%lld on %s against %lld on %s) or size "
		               "(%lld against %lld)", (long long)src->ndev, src->axis, (long long)dst->ndev, dst->axis,
		               (long long)src->size, (long long)dst->size);
	if (partial && src->kind != AXE_REPLICATED)
		return err_set(e, "redistribute: a partial tensor holds a whole summand on every device, so its layout "
		               "replicates over %s; this one is %s", src->axis, axe_dist_kind_name(src->kind));
	memset(&r, 0, sizeof r);
	axe_dist_flat_strides(src, sf);
	axe_dist_flat_strides(dst, df);
#define WHY(...) snprintf(r.why, sizeof r.why, __VA_ARGS__)
	if (partial) {
		switch (dst->kind) {
		case AXE_SHARDED:
			r.coll = AXE_COLL_REDUCE_SCATTER;
			r.pack = !same_map(src, src->m, dst, df);
			WHY("every device holds a partial sum of the whole tensor and the result is sharded: reduce_scatter "
			    "sums and leaves each device its shard%s", r.pack ? ", after a pack into rank-major order" : "");
			break;
		case AXE_REPLICATED:
			r.coll = AXE_COLL_ALLREDUCE;
			r.unpack = !same_map(src, src->m, dst, dst->m);
			WHY("every device holds a partial sum and every device needs the total: allreduce%s",
			    r.unpack ? ", then a local permute" : "");
			break;
		case AXE_SINGLE:
			r.coll = AXE_COLL_REDUCE;
			r.root = dst->root;
			r.unpack = !same_map(src, src->m, dst, dst->m);
			WHY("every device holds a partial sum and device %lld needs the total: reduce%s", (long long)r.root,
			    r.unpack ? ", then a local permute" : "");
			break;
		}
	} else if (src->kind == AXE_SHARDED) {
		if (dst->kind == AXE_SINGLE)
			return err_set(e, "redistribute: from shards to device %lld alone needs a gather, which NCCL does not "
			               "have: redistribute to a replicated layout (allgather) first", (long long)dst->root);
		if (dst->kind == AXE_SHARDED && same_map(src, src->g, dst, dst->g)) {
			r.coll = AXE_COLL_NONE;
			r.unpack = 1;
			r.slice = 1;
			r.copy = same_map(src, src->m, dst, dst->m);
			WHY("every device already holds its elements of the result: %s", r.copy ? "a copy" : "a local permute");
		} else {
			r.coll = AXE_COLL_ALLGATHER;
			r.slice = dst->kind == AXE_SHARDED;
			r.unpack = r.slice || !same_map(src, sf, dst, dst->m);
			if (r.slice)
				WHY("the shards move between devices: allgather, then each device keeps its own (NCCL has no "
				    "all-to-all; grouped send/recv would move %lld times fewer bytes)", (long long)src->ndev);
			else
				WHY("each device holds a shard and every device needs the whole: allgather%s",
				    r.unpack ? ", then a local permute out of rank-major order" : "");
		}
	} else if (src->kind == AXE_REPLICATED) {
		r.coll = AXE_COLL_NONE;
		r.unpack = 1;
		r.slice = dst->kind != AXE_REPLICATED;
		r.copy = !r.slice && same_map(src, src->m, dst, dst->m);
		if (dst->kind == AXE_SINGLE)
			WHY("every device holds the whole: device %lld copies it", (long long)dst->root);
		else if (dst->kind == AXE_SHARDED)
			WHY("every device holds the whole: each keeps its shard (no communication)");
		else
			WHY("every device holds the whole: %s", r.copy ? "a copy" : "a local permute");
	} else {
		if (dst->kind == AXE_SINGLE) {
			if (dst->root != src->root)
				return err_set(e, "redistribute: from device %lld to device %lld needs send/recv, which is not "
				               "supported", (long long)src->root, (long long)dst->root);
			r.coll = AXE_COLL_NONE;
			r.unpack = 1;
			r.copy = same_map(src, src->m, dst, dst->m);
			WHY("the tensor stays on device %lld: %s", (long long)src->root, r.copy ? "a copy" : "a local permute");
		} else {
			r.coll = AXE_COLL_BROADCAST;
			r.root = src->root;
			r.slice = dst->kind == AXE_SHARDED;
			r.unpack = r.slice || !same_map(src, src->m, dst, dst->m);
			WHY("device %lld holds the whole and every device needs %s: broadcast%s", (long long)r.root,
			    r.slice ? "its shard" : "all of it", r.slice ? ", then each keeps its shard (NCCL's scatter is "
			    "grouped send/recv)" : r.unpack ? ", then a local permute" : "");
		}
	}
#undef WHY
	*out = r;
	return 0;
}

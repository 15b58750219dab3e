/* kernel_async.c - the interpreter's asynchronous engines: cp.async, wgmmas in flight, mbarriers and TMA. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

/* ---- cp.async ---- */

/*
** A CP_ASYNC: the source is read now (checked as this thread's load), the
** destination is claimed (checked as its store, then marked in flight, so
** that any access before the landing is an error), and the bytes wait in
** the thread's list for the CP_WAIT that retires their group.
*/
int
kasync_cp_issue(Run *r, Thr *th, const Ins *in, int64_t doff, int64_t soff)
{
	const MemAux *ad = &r->P->aux[in->b], *as = &r->P->aux[in->c];
	RBuf *D = &r->rb[ad->buf], *S = &r->rb[as->buf];
	Ins li = *in, si = *in;
	int n = (int)in->imm, j;
	Cpa *c;

	li.op = I_LOAD;
	li.imm = as->buf;
	si.op = I_STORE;
	si.imm = ad->buf;
	si.c = in->b;
	if (soff % n || doff % n) {
		char w[256];

		kmem_where(r, th, &li, w, sizeof w);
		return err_set(r->e, "cp_async: %s: the %s offset %lld is not a multiple of %d elements (%d bytes)",
		               w, soff % n ? "source" : "destination", (long long)(soff % n ? soff : doff), n, n * S->bytes);
	}
	for (j = 0; j < n; j++) {
		if (r->checks) {
			if (kmem_check(r, th, &li, soff + j, 0) < 0 || kmem_check(r, th, &si, doff + j, 1) < 0)
				return -1;
			D->sh[doff + j].async = (uint32_t)th->tid + 1;
		} else if ((uint64_t)(soff + j) >= (uint64_t)S->size)
			return kmem_fail_oob(r, th, &li, soff + j, -1);
		else if ((uint64_t)(doff + j) >= (uint64_t)D->size)
			return kmem_fail_oob(r, th, &si, doff + j, -1);
		/* the global side is one request of the whole run (aligned, so in one sector); the
		** shared side is counted by its elements, whose words decide the wavefronts */
		if (r->counting && ((j == 0 && kcount_access(r, th, &li, soff) < 0) || kcount_access(r, th, &si, doff + j) < 0))
			return -1;
	}
	if (r->cnt)
		r->cnt->cp_asyncs++;
	if (th->ncpa == th->capcpa) {
		int nc = th->capcpa ? 2 * th->capcpa : 16;
		Cpa *p;

		if (kmem_charge(r, (uint64_t)(nc - th->capcpa) * sizeof *p, "the copies in flight") < 0)
			return -1;
		if (!(p = realloc(th->cpa, (size_t)nc * sizeof *p)))
			return err_set(r->e, "kernel.run: out of memory (copies in flight)");
		th->cpa = p;
		th->capcpa = nc;
	}
	c = &th->cpa[th->ncpa++];
	c->dst = ad->buf;
	c->n = n;
	c->off = doff;
	c->group = th->ncommit;
	memcpy(c->data, S->p + soff * S->bytes, (size_t)n * S->bytes);
	return 0;
}

/* CP_WAIT n: the copies of every committed group but the n most recent land,
** each a store of this thread in this phase. */
void
kasync_cp_wait(Run *r, Thr *th, int64_t n)
{
	int i, j, kept = 0;

	for (i = 0; i < th->ncpa; i++) {
		Cpa *c = &th->cpa[i];
		RBuf *D = &r->rb[c->dst];

		if ((int64_t)c->group + n >= (int64_t)th->ncommit) {
			th->cpa[kept++] = *c;
			continue;
		}
		memcpy(D->p + c->off * D->bytes, c->data, (size_t)c->n * D->bytes);
		if (D->sh)
			for (j = 0; j < c->n; j++) {
				Shadow *s = &D->sh[c->off + j];

				s->async = 0;
				s->w.launch = r->launch;
				s->w.block = r->blin;
				s->w.phase = r->phase;
				s->w.thread = (uint32_t)th->tid;
				memset(s->r, 0, sizeof s->r);
				s->init = 1;
			}
	}
	th->ncpa = kept;
}

int
kasync_fail_cp_end(Run *r, Thr *th)
{
	return err_set(r->e, "cp_async: stage %s, block (%lld,%lld,%lld), thread (%lld,%lld,%lld) ends with %d "
	               "cp.async in flight (the oldest into %s at offset %lld), which no cp_async_wait retired: "
	               "commit them and wait (cp_async_wait(0)) before the end", r->P->name, (long long)r->bc[0],
	               (long long)r->bc[1], (long long)r->bc[2], (long long)th->tc[0], (long long)th->tc[1],
	               (long long)th->tc[2], th->ncpa, r->k->buf[th->cpa[0].dst].name, (long long)th->cpa[0].off);
}

/* ---- wgmma: the thread's side, and what is in flight until its wgmma_wait ---- */

/* A wgmma in flight reads element off of buf, for thread th's slot, until th retires it. */
int
kasync_wg_note(Run *r, const Thr *th, int buf, int64_t off)
{
	struct WgRd *g;

	if (r->nwgr == r->capwgr) {
		int64_t nc = r->capwgr ? 2 * r->capwgr : 1024;
		void *q;

		if (kmem_charge(r, (uint64_t)(nc - r->capwgr) * sizeof *r->wgr, "the wgmmas' tiles in flight") < 0)
			return -1;
		if (!(q = realloc(r->wgr, (size_t)nc * sizeof *r->wgr)))
			return err_set(r->e, "kernel.run: out of memory (wgmma tiles in flight)");
		r->wgr = q;
		r->capwgr = nc;
	}
	g = &r->wgr[r->nwgr++];
	g->tid = th->tid;
	g->buf = buf;
	g->group = th->wgcommit;
	g->off = off;
	return 0;
}

/* A wgmma of warpgroup l is in flight in each of its threads (its accumulator,
** its A registers) until the thread's WG_WAIT retires its group. */
int
kasync_wg_issue(Run *r, Thr *l, const WgmmaProg *W)
{
	int t;

	for (t = 0; t < WG; t++) {
		Thr *th = &l[t];

		if (th->nwg == th->capwg) {
			int nc = th->capwg ? 2 * th->capwg : 8;
			void *q;

			if (kmem_charge(r, (uint64_t)(nc - th->capwg) * sizeof *th->wg, "the wgmmas in flight") < 0)
				return -1;
			if (!(q = realloc(th->wg, (size_t)nc * sizeof *th->wg)))
				return err_set(r->e, "kernel.run: out of memory (wgmmas in flight)");
			th->wg = q;
			th->capwg = nc;
		}
		th->wg[th->nwg].d = W->d;
		th->wg[th->nwg].a = W->areg ? W->a : -1;
		th->wg[th->nwg++].group = th->wgcommit;
		th->wgs[W->d]++;
		if (W->areg)
			th->wgs[W->a]++;
	}
	return 0;
}

/* WG_WAIT n: the wgmmas of every committed group but the n most recent retire,
** and the shared elements this thread's slot records them reading are read
** until now. */
void
kasync_wg_wait(Run *r, Thr *th, int64_t n)
{
	int64_t j, keptr = 0;
	int i, kept = 0;

	for (j = 0; j < r->nwgr; j++) {
		const struct WgRd *g = &r->wgr[j];
		Shadow *s;

		if (g->tid != th->tid || (int64_t)g->group + n >= (int64_t)th->wgcommit) {
			r->wgr[keptr++] = *g;
			continue;
		}
		s = &r->rb[g->buf].sh[g->off];
		for (i = 0; i < 2; i++)
			if (s->r[i].thread == (uint32_t)th->tid && s->r[i].ev == WG_READING && s->r[i].block == r->blin)
				s->r[i].ev = th->ev;
	}
	r->nwgr = keptr;

	for (i = 0; i < th->nwg; i++) {
		if ((int64_t)th->wg[i].group + n >= (int64_t)th->wgcommit) {
			th->wg[kept++] = th->wg[i];
			continue;
		}
		th->wgs[th->wg[i].d]--;
		if (th->wg[i].a >= 0)
			th->wgs[th->wg[i].a]--;
	}
	th->nwg = kept;
}

int
kasync_fail_wg_end(Run *r, Thr *th)
{
	return err_set(r->e, "wgmma: stage %s, block (%lld,%lld,%lld), thread (%lld,%lld,%lld) ends with %d wgmma in "
	               "flight (the oldest into %s), which no wgmma_wait retired: kernel.wgmma_commit() and "
	               "kernel.wgmma_wait(0) before the end", r->P->name, (long long)r->bc[0], (long long)r->bc[1],
	               (long long)r->bc[2], (long long)th->tc[0], (long long)th->tc[1], (long long)th->tc[2], th->nwg,
	               r->k->buf[th->wg[0].d].name);
}

/* ---- mbarriers and TMA ---- */

/*
** An mbarrier's state lives beside its uint64 element (MBar), not in it. Its
** statements are checked as accesses of the element: an init is a write (a
** use by another thread in the same phase, without a barrier between, is a
** race), arrive and wait are atomic (never races among themselves; a race
** with the init is reported). A phase completes when its pending arrivals and
** its transaction count reach 0: the TMAs attached to the barrier land then.
**
** Ordering. Data a TMA landed records the barrier and the completion that
** landed it; a thread may touch it once it has seen that completion by
** waiting (Thr.obs), whatever the phase (a bar.sync after another thread's
** wait does not count: stricter than PTX, never weaker). A TMA's writes
** meet the earlier reads of its destination as a store would (a reader in
** the same phase, another thread: a race), unless the reader arrived on a
** barrier after its read and the issuing thread has seen the completion that
** arrival counted toward (the producer waited on the empty barrier the
** consumers released). Only each thread's last arrival per barrier is kept,
** which is exact for the usual rings (a consumer arrives on a slot's empty
** barrier again only after reading it again).
*/

static MBar *
mbar_at(Run *r, Thr *th, const Ins *in, int64_t off, int write, int *id)
{
	const MemAux *a = &r->P->aux[in->c];
	RBuf *B = &r->rb[a->buf];
	Ins fi = *in;

	fi.op = write ? I_STORE : I_LOAD;
	fi.imm = a->buf;
	if ((uint64_t)off >= (uint64_t)B->size || !B->mb) {
		kmem_fail_oob(r, th, &fi, off, -1);
		return NULL;
	}
	if (r->checks) {
		Shadow *s = &B->sh[off];
		Acc cur = { r->launch, r->blin, r->phase, (uint32_t)th->tid, th->ev, th->fc };

		if (write) {
			if (kmem_check(r, th, &fi, off, 1) < 0)
				return NULL;
		} else if (kmem_conflict(&s->w, &cur)) {
			kmem_fail_race(r, th, &fi, off, &s->w, 1);
			return NULL;
		}
	}
	*id = B->mbase + (int)off;
	return &B->mb[off];
}

static int
fail_mbar(Run *r, Thr *th, const Ins *in, int id, const char *what)
{
	char w[256], bn[80];

	kmem_where(r, th, NULL, w, sizeof w);
	kmem_mbar_name(r, id, bn, sizeof bn);
	(void)in;
	return err_set(r->e, "mbarrier: %s: %s %s", w, what, bn);
}

/* The phase of barrier id completed: TMAs attached to it land. */
static void
mbar_complete(Run *r, MBar *m, int id)
{
	int i, kept = 0;
	int64_t j;

	m->phase++;
	m->pending = m->count;
	for (i = 0; i < r->ntf; i++) {
		TmaF *f = &r->tf[i];
		RBuf *D = &r->rb[f->dst];

		if (f->bar != id) {
			r->tf[kept++] = *f;
			continue;
		}
		for (j = 0; j < f->n; j++) {
			memcpy(D->p + f->off[j] * D->bytes, f->data + j * D->bytes, (size_t)D->bytes);
			if (D->sh) {
				Shadow *s = &D->sh[f->off[j]];

				memset(s, 0, sizeof *s);
				s->init = 1;
				s->mbar = (uint32_t)id + 1;
				s->mphase = m->phase;
			}
		}
		free(f->off);
		free(f->data);
	}
	r->ntf = kept;
}

int
kasync_mbar_init(Run *r, Thr *th, const Ins *in, int64_t off)
{
	int id;
	MBar *m = mbar_at(r, th, in, off, 1, &id);

	if (!m)
		return -1;
	m->init = 1;
	m->count = m->pending = (uint32_t)in->imm;
	m->phase = 0;
	m->tx = 0;
	return 0;
}

int
kasync_mbar_arrive(Run *r, Thr *th, const Ins *in, int64_t off)
{
	int id;
	MBar *m = mbar_at(r, th, in, off, 0, &id);
	char what[200];

	if (!m)
		return -1;
	if (!m->init)
		return fail_mbar(r, th, in, id, "arrives on an uninitialized mbarrier (no mbarrier_init before it):");
	if (m->pending == 0) {
		snprintf(what, sizeof what, "arrives once too often (phase %u has all its %u arrivals and waits for "
		         "%lld tx bytes) on", (unsigned)m->phase, (unsigned)m->count, (long long)m->tx);
		return fail_mbar(r, th, in, id, what);
	}
	th->ev++;
	if (th->arr) {
		th->arr[2 * id] = th->ev;
		th->arr[2 * id + 1] = m->phase + 1;
	}
	m->tx += in->imm;
	if (--m->pending == 0 && m->tx == 0)
		mbar_complete(r, m, id);
	return 0;
}

/* 1: the phase of that parity has completed; 0: not yet (the thread stops); -1 an error. */
int
kasync_mbar_wait(Run *r, Thr *th, const Ins *in, int64_t off, int64_t parity, int quiet)
{
	const MemAux *a = &r->P->aux[in->c];
	RBuf *B = &r->rb[a->buf];
	MBar *m;
	int id;

	if (quiet) {
		/* a stopped thread's retry: checked at its first try */
		m = &B->mb[off];
		id = B->mbase + (int)off;
	} else if (!(m = mbar_at(r, th, in, off, 0, &id)))
		return -1;
	if (!m->init)
		return fail_mbar(r, th, in, id, "waits on an uninitialized mbarrier (no mbarrier_init before it):");
	if ((int64_t)(m->phase & 1) == parity)
		return 0;
	if (m->phase && th->obs && th->obs[id] < m->phase)
		th->obs[id] = m->phase;
	return 1;
}

/* The readers of a TMA's destination element before it: ordered by an mbarrier? */
static int
released(const Run *r, const Thr *th, const Acc *p)
{
	const Thr *rt = &r->th[p->thread];
	int id;

	for (id = 0; id < r->nmb; id++)
		if (rt->arr[2 * id] > p->ev && th->obs[id] >= rt->arr[2 * id + 1])
			return 1;
	return 0;
}

/*
** A TMA_LOAD: the box is read from global memory now (coordinates past the
** tensor read as zeros, as TMA fills them), each element's shared address
** is TMA's (dense, swizzled), checked as a store of this thread and then in
** flight; the bytes complete_tx on the barrier at once and land with its
** phase.
*/
int
kasync_tma_issue(Run *r, Thr *th, const Ins *in, int64_t doff, int64_t boff)
{
	const TmaProg *T = &r->P->tma[in->imm];
	const MemAux *as = &r->P->aux[in->c];
	RBuf *D = &r->rb[T->dst], *S = &r->rb[T->src];
	const KBuf *G = &r->k->buf[T->src];
	Ins li = *in, si = *in, bi = *in;
	int64_t n = 1, j, crd[5], base, g, x, sh;
	int d, id, eb = D->bytes, inside;
	MBar *m;
	TmaF *f;

	li.op = I_LOAD;
	li.imm = T->src;
	si.op = I_STORE;
	si.imm = T->dst;
	si.c = T->adst;
	bi.c = T->abar;
	if (!(m = mbar_at(r, th, &bi, boff, 0, &id)))
		return -1;
	if (!m->init)
		return fail_mbar(r, th, in, id, "issues a TMA on an uninitialized mbarrier (no mbarrier_init before it):");
	base = doff * eb;
	if (base % (T->swizzle ? 8 * T->swizzle : 128)) {
		char w[256];

		kmem_where(r, th, &si, w, sizeof w);
		return err_set(r->e, "tma: %s: the box starts at byte %lld of %s, not a multiple of %d (%s)", w,
		               (long long)base, r->k->buf[T->dst].name, T->swizzle ? 8 * T->swizzle : 128,
		               T->swizzle ? "the swizzle's repeat" : "TMA's alignment");
	}
	for (d = 0; d < T->rank; d++)
		n *= T->box[d];
	if (r->ntf == r->captf) {
		int nc = r->captf ? 2 * r->captf : 16;
		TmaF *p = realloc(r->tf, (size_t)nc * sizeof *p);

		if (!p)
			return err_set(r->e, "kernel.run: out of memory (TMAs in flight)");
		r->tf = p;
		r->captf = nc;
	}
	f = &r->tf[r->ntf];
	f->dst = T->dst;
	f->bar = id;
	f->tid = th->tid;
	f->n = n;
	f->off = malloc((size_t)n * sizeof *f->off);
	f->data = calloc((size_t)n, (size_t)eb);
	if (!f->off || !f->data) {
		free(f->off);
		free(f->data);
		return err_set(r->e, "kernel.run: out of memory (a TMA in flight)");
	}
	r->ntf++;
	for (j = 0; j < n; j++) {
		x = j;
		for (d = T->rank - 1; d >= 0; d--) {
			crd[d] = x % T->box[d];
			x /= T->box[d];
		}
		for (d = 0, g = 0, inside = 1; d < T->rank; d++) {
			int64_t c = th->v[as->idx[d]].i + crd[d];

			inside &= c >= 0 && c < G->shape[d];
			g += c * T->stride[d];
		}
		sh = kernel_tma_swizzle(T->swizzle, base + j * eb) / eb;
		if ((uint64_t)sh >= (uint64_t)D->size)
			return kmem_fail_oob(r, th, &si, sh, -1);
		if (inside) {
			if (r->checks && kmem_check(r, th, &li, g, 0) < 0)
				return -1;
			if ((uint64_t)g >= (uint64_t)S->size)
				return kmem_fail_oob(r, th, &li, g, -1);
			memcpy(f->data + j * eb, S->p + g * eb, (size_t)eb);
		}
		f->off[j] = sh;
		if (r->checks) {
			Shadow *s = &D->sh[sh];
			Acc cur = { r->launch, r->blin, r->phase, (uint32_t)th->tid, th->ev, th->fc };
			int i;

			if (s->async)
				return kmem_fail_inflight(r, th, &si, sh, s->async);
			if (kmem_wg_reading(r, s))
				return kmem_fail_wg_reading(r, th, &si, sh, kmem_wg_reading(r, s), "a TMA writes");
			if (kmem_conflict(&s->w, &cur))
				return kmem_fail_race(r, th, &si, sh, &s->w, 1);
			for (i = 0; i < 2; i++)
				if (kmem_conflict(&s->r[i], &cur) && !released(r, th, &s->r[i])) {
					char w[256];
					const char *bn = r->k->buf[T->dst].name;
					int64_t pt[3];

					kmem_where(r, th, &si, w, sizeof w);
					coords(s->r[i].thread, r->blk, pt);
					return err_set(r->e, "race: %s: a TMA writes %s at offset %lld while thread (%lld,%lld,%lld) "
					               "read it in this phase, and no mbarrier orders them (the reader arrives on a "
					               "barrier after its read, the issuing thread waits on that barrier's phase "
					               "first)", w, bn, (long long)sh, (long long)pt[0], (long long)pt[1],
					               (long long)pt[2]);
				}
			s->async = ((uint32_t)th->tid + 1) | TMA_BIT;
		}
	}
	if (r->cnt) {
		r->cnt->tmas++;
		r->cnt->tma_bytes += T->bytes;
	}
	m->tx -= T->bytes;
	if (m->pending == 0 && m->tx == 0)
		mbar_complete(r, m, id);
	return 0;
}

/* The block ends with TMA boxes that never landed. */
int
kasync_fail_tma_end(Run *r)
{
	const TmaF *f = &r->tf[0];
	const MBar *m = NULL;
	char bn[80];
	int64_t pt[3];
	int b;

	for (b = 0; b < r->k->nbuf; b++)
		if (r->rb[b].mb && f->bar >= r->rb[b].mbase && f->bar < r->rb[b].mbase + r->rb[b].size)
			m = &r->rb[b].mb[f->bar - r->rb[b].mbase];
	kmem_mbar_name(r, f->bar, bn, sizeof bn);
	coords(f->tid, r->blk, pt);
	return err_set(r->e, "tma: stage %s, block (%lld,%lld,%lld): %d TMA box%s never landed (the first into %s, "
	               "issued by thread (%lld,%lld,%lld)): its mbarrier %s is at phase %u with %u of %u arrivals "
	               "pending and %lld tx bytes outstanding at the end of the stage", r->P->name, (long long)r->bc[0],
	               (long long)r->bc[1], (long long)r->bc[2], r->ntf, r->ntf > 1 ? "es" : "",
	               r->k->buf[f->dst].name, (long long)pt[0], (long long)pt[1], (long long)pt[2], bn,
	               m ? (unsigned)m->phase : 0u, m ? (unsigned)m->pending : 0u, m ? (unsigned)m->count : 0u,
	               m ? (long long)m->tx : 0LL);
}

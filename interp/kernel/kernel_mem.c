/* kernel_mem.c - the interpreter's memory model: its allocations, the checks of every access (bounds, uninitialized, races), atomics and release/acquire. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

/* ---- allocations charged to the tensor_bytes limit ---- */

int
kmem_charge(Run *r, uint64_t bytes, const char *what)
{
	if (bytes > r->limit || r->used > r->limit - bytes)
		return err_set(r->e, "tensor_bytes limit: %s needs %llu more bytes, past the limit of %llu "
		               "bytes (raise it with tessel.limits{tensor_bytes = N}, or KRunOpts.mem_limit)",
		               what, (unsigned long long)bytes, (unsigned long long)r->limit);
	r->used += bytes;
	return 0;
}

void *
kmem_alloc(Run *r, uint64_t bytes, int zero, const char *what)
{
	void *p;

	if (kmem_charge(r, bytes, what) < 0)
		return NULL;
	p = zero ? calloc(1, bytes ? bytes : 1) : malloc(bytes ? bytes : 1);
	if (!p)
		err_set(r->e, "kernel.run: out of memory (%llu bytes for %s)", (unsigned long long)bytes, what);
	return p;
}

/* ---- the checks of an access: bounds, uninitialized, races ---- */

/* "stage s, block (x,y,z), thread (x,y,z), loops i=1, j=2" */
void
kmem_where(const Run *r, const Thr *th, const Ins *in, char *out, size_t n)
{
	const Prog *P = r->P;
	size_t at;
	int i;

	if (!P || !th) {
		snprintf(out, n, "placing a buffer through its layout");
		return;
	}
	at = snprintf(out, n, "stage %s, block (%lld,%lld,%lld), thread (%lld,%lld,%lld)", P->name,
	              (long long)r->bc[0], (long long)r->bc[1], (long long)r->bc[2],
	              (long long)th->tc[0], (long long)th->tc[1], (long long)th->tc[2]);
	if (in && (in->op == I_LOAD || in->op == I_STORE || in->op == I_ATOM || in->op == I_XDIV || in->op == I_XMOD
	|| in->op == I_LDSM)) {
		const MemAux *a = &P->aux[in->c];

		for (i = 0; i < a->nloop && at < n; i++)
			at += snprintf(out + at, n - at, "%s%s=%lld", i ? ", " : ", loops ",
			               P->lvar[a->loop0 + i]->name, (long long)th->v[P->lslot[a->loop0 + i]].i);
	}
}

/* "name[i, j]" of the element an access names */
static void
element(const Run *r, const Thr *th, const Ins *in, char *out, size_t n)
{
	const MemAux *a = &r->P->aux[in->c];
	size_t at = snprintf(out, n, "%s[", r->k->buf[a->buf].name);
	int i;

	for (i = 0; i < a->ndim && at < n; i++)
		at += snprintf(out + at, n - at, "%s%lld", i ? ", " : "", (long long)th->v[a->idx[i]].i);
	if (at < n)
		snprintf(out + at, n - at, "]");
}

int
kmem_fail_oob(Run *r, Thr *th, const Ins *in, int64_t off, int dim)
{
	const RBuf *B = &r->rb[in->imm];
	const KBuf *kb = &r->k->buf[in->imm];
	char w[256], el[160];

	kmem_where(r, th, in, w, sizeof w);
	element(r, th, in, el, sizeof el);
	if (dim >= 0)
		return err_set(r->e, "out of bounds: %s: %s %s (physical offset %lld): coordinate %d is "
		               "outside [0, %lld)", w, in->op == I_ATOM ? "atomic" : in->op == I_STORE ? "store" : "load",
		               el, (long long)off,
		               dim, (long long)kb->shape[dim]);
	return err_set(r->e, "out of bounds: %s: %s %s: physical offset %lld is outside the storage "
	               "[0, %lld)", w, in->op == I_ATOM ? "atomic" : in->op == I_STORE ? "store" : "load", el,
	               (long long)off,
	               (long long)B->size);
}

int
kmem_conflict(const Acc *p, const Acc *c)
{
	return p->launch == c->launch && p->launch != 0
	&& (p->block != c->block || (p->phase == c->phase && p->thread != c->thread));
}

/* Whether the current thread's acquires order access p before it (kernel.h). */
static int
covered(const Run *r, const Thr *th, const Acc *p)
{
	int i;

	for (i = 0; i < r->nacq; i++) {
		const Acq *q = &r->acq[i];

		if (q->block != p->block || (q->ua != (uint32_t)th->tid && r->phase <= q->qa))
			continue;
		if (p->phase < q->phase
		|| (p->phase == q->phase && p->thread == q->thread && (p->fc & ~ATOMIC_BIT) < q->fc))
			return 1;
	}
	return 0;
}

/* p and c conflict, and neither both are atomics nor an acquire orders them */
static int
racing(const Run *r, const Thr *th, const Acc *p, const Acc *c)
{
	return kmem_conflict(p, c) && !(p->fc & c->fc & ATOMIC_BIT) && !(r->nacq && covered(r, th, p));
}

static const char *
acc_verb(const Ins *in)
{
	return in->op == I_ATOM ? "atomically updates" : in->op == I_STORE ? "writes" : "reads";
}

int
kmem_fail_race(Run *r, Thr *th, const Ins *in, int64_t off, const Acc *p, int pwrite)
{
	const RBuf *B = &r->rb[in->imm];
	char w[256], el[160];
	int64_t pt[3], pb[3];

	kmem_where(r, th, in, w, sizeof w);
	element(r, th, in, el, sizeof el);
	coords(p->thread, r->blk, pt);
	coords(p->block, r->grid, pb);
	return err_set(r->e, "race: %s: %s %s (offset %lld, %s memory) while thread (%lld,%lld,%lld) "
	               "of block (%lld,%lld,%lld) %s it %s", w, acc_verb(in),
	               el, (long long)off, B->scope == AS_LOCAL ? "shared" : "global",
	               (long long)pt[0], (long long)pt[1], (long long)pt[2],
	               (long long)pb[0], (long long)pb[1], (long long)pb[2],
	               p->fc & ATOMIC_BIT ? "atomically updated" : pwrite ? "wrote" : "read",
	               p->block != r->blin ? "in the same launch (blocks run concurrently; no fence and atomic "
	               "order the two)" : "in the same phase (no barrier between)");
}

static int
fail_uninit(Run *r, Thr *th, const Ins *in, int64_t off)
{
	char w[256], el[160];

	kmem_where(r, th, in, w, sizeof w);
	element(r, th, in, el, sizeof el);
	return err_set(r->e, "uninitialized: %s: %s of %s (offset %lld), which nothing wrote%s", w,
	               in->op == I_ATOM ? "atomic" : "load", el,
	               (long long)off, r->rb[in->imm].scope == AS_LOCAL ? " in this block"
	               : r->rb[in->imm].scope == AS_REG ? " in this thread" : "");
}

int
kmem_fail_inflight(Run *r, Thr *th, const Ins *in, int64_t off, uint32_t by)
{
	char w[256], el[160];
	int64_t pt[3];

	kmem_where(r, th, in, w, sizeof w);
	element(r, th, in, el, sizeof el);
	coords((by & ~TMA_BIT) - 1, r->blk, pt);
	if (by & TMA_BIT)
		return err_set(r->e, "tma: %s: %s %s (offset %lld, shared memory) while its TMA is in flight (issued "
		               "by thread (%lld,%lld,%lld)); wait on the mbarrier first", w,
		               in->op == I_STORE ? "writes" : "reads", el, (long long)off, (long long)pt[0],
		               (long long)pt[1], (long long)pt[2]);
	return err_set(r->e, "cp_async: %s: %s %s (offset %lld, shared memory) while a cp.async into it is in "
	               "flight (issued by thread (%lld,%lld,%lld), not yet retired by its cp_async_wait)", w,
	               in->op == I_STORE ? "writes" : "reads", el, (long long)off, (long long)pt[0],
	               (long long)pt[1], (long long)pt[2]);
}

static int
fail_wg_inflight(Run *r, Thr *th, const Ins *in, int64_t off)
{
	char w[256], el[160];

	kmem_where(r, th, in, w, sizeof w);
	element(r, th, in, el, sizeof el);
	return err_set(r->e, "wgmma: %s: %s %s (register offset %lld) while a wgmma that uses it is in flight; "
	               "kernel.wgmma_commit() and kernel.wgmma_wait(n) first", w, in->op == I_STORE ? "writes" : "reads",
	               el, (long long)off);
}

/* "bar[1]": mbarrier id's buffer and element */
void
kmem_mbar_name(const Run *r, int id, char *out, size_t n)
{
	int b;

	for (b = r->k->nbuf - 1; b >= 0; b--)
		if (r->rb[b].mb && id >= r->rb[b].mbase) {
			snprintf(out, n, "%s[%d]", r->k->buf[b].name, id - r->rb[b].mbase);
			return;
		}
	snprintf(out, n, "mbarrier %d", id);
}

static int
fail_unwaited(Run *r, Thr *th, const Ins *in, int64_t off, const Shadow *s)
{
	char w[256], el[160], bn[80];

	kmem_where(r, th, in, w, sizeof w);
	element(r, th, in, el, sizeof el);
	kmem_mbar_name(r, (int)s->mbar - 1, bn, sizeof bn);
	return err_set(r->e, "race: %s: %s %s (offset %lld, shared memory), which a TMA landed at completion %u of "
	               "mbarrier %s, and this thread has not waited on it (it has seen %u completions): wait on the "
	               "mbarrier first", w, in->op == I_STORE ? "writes" : "reads", el, (long long)off,
	               (unsigned)s->mphase, bn, (unsigned)th->obs[s->mbar - 1]);
}

/*
** An atomic's checks past bounds and copies in flight: races with plain
** accesses (racing() lets atomics pass each other), then the record. The
** element's writer becomes the atomic; an atomic writer before it from
** another thread moves to the readers, so that a plain access after
** several blocks' atomics meets more than the last of them. A global
** temporary starts at zero, so an atomic may be its first access.
*/
static int
check_atomic(Run *r, Thr *th, const Ins *in, int64_t off, Shadow *s, const Acc *cur)
{
	const MemAux *a = &r->P->aux[in->c];
	const KBuf *kb = &r->k->buf[a->buf];
	int i;

	if (racing(r, th, &s->w, cur))
		return kmem_fail_race(r, th, in, off, &s->w, 1);
	for (i = 0; i < 2; i++)
		if (racing(r, th, &s->r[i], cur))
			return kmem_fail_race(r, th, in, off, &s->r[i], 0);
	if (!s->init && !(kb->role == KB_TEMP && kb->scope == AS_GLOBAL) && !r->pending) {
		fail_uninit(r, th, in, off);
		memcpy(r->pend, r->e->msg, sizeof r->pend);
		r->pending = r->rb[a->buf].scope;
	}
	if ((s->w.fc & ATOMIC_BIT) && s->w.launch == cur->launch
	&& (s->w.block != cur->block || s->w.thread != cur->thread)) {
		s->r[1] = s->r[0];
		s->r[0] = s->w;
	}
	s->w = *cur;
	s->init = 1;
	s->mbar = 0;
	return 0;
}

/* Keep the two most recent distinct readers. A wgmma of the same thread that
** still reads the element stays in flight. */
void
kmem_note_read(Shadow *s, const Acc *cur)
{
	int i;

	for (i = 0; i < 2; i++)
		if (s->r[i].thread == cur->thread && s->r[i].block == cur->block) {
			uint32_t ev = s->r[i].ev == WG_READING && s->r[i].launch == cur->launch ? WG_READING : cur->ev;

			s->r[i] = *cur;
			s->r[i].ev = ev;
			return;
		}
	s->r[1] = s->r[0];
	s->r[0] = *cur;
}

/* A wgmma in flight that reads element s of this launch and block: its reader slot, or NULL. */
const Acc *
kmem_wg_reading(const Run *r, const Shadow *s)
{
	int i;

	for (i = 0; i < 2; i++)
		if (s->r[i].ev == WG_READING && s->r[i].launch == r->launch && s->r[i].block == r->blin)
			return &s->r[i];
	return NULL;
}

int
kmem_fail_wg_reading(Run *r, Thr *th, const Ins *in, int64_t off, const Acc *p, const char *who)
{
	char w[256], el[160];
	int64_t pt[3];

	kmem_where(r, th, in, w, sizeof w);
	element(r, th, in, el, sizeof el);
	coords(p->thread, r->blk, pt);
	return err_set(r->e, "wgmma: %s: %s %s (offset %lld, shared memory) while a wgmma of thread "
	               "(%lld,%lld,%lld)'s warpgroup reads it: a wgmma reads its shared tiles until the "
	               "kernel.wgmma_wait that retires it, and neither a barrier nor an mbarrier arrival "
	               "before that wait orders the read", w, who, el, (long long)off, (long long)pt[0],
	               (long long)pt[1], (long long)pt[2]);
}

/* The checks of one access (bounds, uninitialized, races); 0 when it may
** go on. write: 0 a read, 1 a write, 2 an atomic (both). */
int
kmem_check(Run *r, Thr *th, const Ins *in, int64_t off, int write)
{
	const MemAux *a = &r->P->aux[in->c];
	const KBuf *kb = &r->k->buf[a->buf];
	RBuf *B = &r->rb[a->buf];
	Shadow *s;
	Acc cur;
	int i;

	for (i = 0; i < a->ndim; i++) {
		int64_t x = th->v[a->idx[i]].i;

		if (x < 0 || x >= kb->shape[i])
			return kmem_fail_oob(r, th, in, off, i);
	}
	if ((uint64_t)off >= (uint64_t)B->size)
		return kmem_fail_oob(r, th, in, off, -1);
	if (B->scope == AS_REG) {
		uint8_t *p = B->init + (int64_t)th->tid * B->size + off;

		if (B->wgd && th->wgs) {
			if (th->wgs[a->buf])
				return fail_wg_inflight(r, th, in, off);
			th->wgs[r->k->nbuf + a->buf] = 1;
		}

		if (write)
			*p = 1;
		else if (!*p)
			return fail_uninit(r, th, in, off);
		return 0;
	}
	s = &B->sh[off];
	if (s->async)
		return kmem_fail_inflight(r, th, in, off, s->async);
	/* data a TMA landed is ordered by its mbarrier phase, and only for threads that waited on it */
	if (s->mbar && th->obs[s->mbar - 1] < s->mphase)
		return fail_unwaited(r, th, in, off, s);
	cur.launch = r->launch;
	cur.block = r->blin;
	cur.phase = r->phase;
	cur.thread = (uint32_t)th->tid;
	cur.ev = th->ev;
	cur.fc = th->fc | (write == 2 ? ATOMIC_BIT : 0);
	if (write && r->o->watch_buf == a->buf + 1 && off == r->o->watch_off && r->o->watch_msg)
		kmem_where(r, th, in, r->o->watch_msg, r->o->watch_len);
	if (write && B->scope == AS_LOCAL && kmem_wg_reading(r, s))
		return kmem_fail_wg_reading(r, th, in, off, kmem_wg_reading(r, s), acc_verb(in));
	if (write == 2)
		return check_atomic(r, th, in, off, s, &cur);
	if (write) {
		if (racing(r, th, &s->w, &cur))
			return kmem_fail_race(r, th, in, off, &s->w, 1);
		for (i = 0; i < 2; i++)
			if (racing(r, th, &s->r[i], &cur))
				return kmem_fail_race(r, th, in, off, &s->r[i], 0);
		s->w = cur;
		memset(s->r, 0, sizeof s->r);
		s->init = 1;
		s->mbar = 0;
		return 0;
	}
	if (!s->init) {
		if (!r->pending) {
			fail_uninit(r, th, in, off);
			memcpy(r->pend, r->e->msg, sizeof r->pend);
			r->pending = B->scope;
		}
	} else if (racing(r, th, &s->w, &cur))
		return kmem_fail_race(r, th, in, off, &s->w, 1);
	kmem_note_read(s, &cur);
	return 0;
}

/* ---- atomics and fences ---- */

enum { KR_MAXREL = 1 << 20 };

/*
** An atomic's part in release and acquire (kernel.h): remembered, with the
** element's release chain as it stands, for the thread's next gpu fence;
** after a gpu fence of this thread it is a release, put at the head of the
** element's chain. Past KR_MAXREL releases a run records no more: fewer
** orderings, so more reports, never fewer.
*/
static int
atomic_sync(Run *r, Thr *th, int b, int64_t off)
{
	Shadow *s = &r->rb[b].sh[off];
	uint32_t head = s->rel && r->rel[s->rel - 1].launch == r->launch ? s->rel : 0;
	Rel *q;

	if (th->nat == KR_ATREC) {
		memmove(th->at, th->at + 1, (KR_ATREC - 1) * sizeof *th->at);
		th->nat--;
	}
	th->at[th->nat].buf = b;
	th->at[th->nat].off = off;
	th->at[th->nat].head = head;
	th->nat++;
	if (!th->fc || r->nrel >= KR_MAXREL)
		return 0;
	if (r->nrel == r->caprel) {
		uint32_t nc = r->caprel ? 2 * r->caprel : 256;

		if (kmem_charge(r, (uint64_t)(nc - r->caprel) * sizeof *q, "the releases of atomics") < 0)
			return -1;
		if (!(q = realloc(r->rel, nc * sizeof *q)))
			return err_set(r->e, "kernel.run: out of memory (releases)");
		r->rel = q;
		r->caprel = nc;
	}
	q = &r->rel[r->nrel++];
	q->launch = r->launch;
	q->block = r->blin;
	q->phase = th->fphase;
	q->thread = (uint32_t)th->tid;
	q->fc = th->fc;
	q->next = head;
	s->rel = r->nrel;
	return 0;
}

/* A gpu fence: the releases the thread's atomics since its last fence read become its block's acquires. */
int
kmem_acquire(Run *r, Thr *th)
{
	int i, j;
	uint32_t x;

	for (i = 0; i < th->nat; i++)
		for (x = th->at[i].head; x && r->rel[x - 1].launch == r->launch; x = r->rel[x - 1].next) {
			const Rel *q = &r->rel[x - 1];
			Acq n = { q->block, q->phase, q->thread, q->fc, (uint32_t)th->tid, r->phase };

			/* one acquire per (releasing thread, acquiring thread): the one that covers most */
			for (j = 0; j < r->nacq; j++) {
				Acq *o = &r->acq[j];

				if (o->block == n.block && o->thread == n.thread && o->ua == n.ua) {
					if (n.phase > o->phase || (n.phase == o->phase && n.fc > o->fc))
						*o = n;
					break;
				}
			}
			if (j < r->nacq || r->nacq >= KR_MAXACQ)
				continue;
			if (r->nacq == r->capacq) {
				int nc = r->capacq ? 2 * r->capacq : 64;
				Acq *na;

				if (kmem_charge(r, (uint64_t)(nc - r->capacq) * sizeof *na, "the acquires of atomics") < 0)
					return -1;
				if (!(na = realloc(r->acq, nc * sizeof *na)))
					return err_set(r->e, "kernel.run: out of memory (acquires)");
				r->acq = na;
				r->capacq = nc;
			}
			r->acq[r->nacq++] = n;
		}
	th->nat = 0;
	return 0;
}

/*
** One ATOMIC on element off of buffer in->imm, value v; old gets the value
** before. The element is a 32-bit word (kernel_atomic_check); a float add
** rounds once to float32, as the device's does (the double sum of two
** floats rounds to the float sum).
*/
int
kmem_atomic(Run *r, Thr *th, const Ins *in, int64_t off, const Val *v, Val *old)
{
	RBuf *b = &r->rb[in->imm];
	unsigned char *p;

	if (r->checks) {
		if (kmem_check(r, th, in, off, 2) < 0)
			return -1;
	} else if ((uint64_t)off >= (uint64_t)b->size)
		return kmem_fail_oob(r, th, in, off, -1);
	p = b->p + off * b->bytes;
	if (b->t == DT_FLOAT32) {
		float f, n;

		memcpy(&f, p, 4);
		old->f = f;
		n = in->w == KA_ADD ? (float)((double)f + v->f) : (float)v->f;
		memcpy(p, &n, 4);
	} else if (b->t == DT_INT32) {
		int32_t x, y = (int32_t)(uint32_t)(uint64_t)v->i, n;

		memcpy(&x, p, 4);
		old->i = x;
		n = in->w == KA_ADD ? (int32_t)((uint32_t)x + (uint32_t)y) : in->w == KA_MAX ? (x > y ? x : y)
		  : in->w == KA_MIN ? (x < y ? x : y) : y;
		memcpy(p, &n, 4);
	} else {
		uint32_t x, y = (uint32_t)(uint64_t)v->i, n;

		memcpy(&x, p, 4);
		old->i = x;
		n = in->w == KA_ADD ? x + y : in->w == KA_MAX ? (x > y ? x : y) : in->w == KA_MIN ? (x < y ? x : y) : y;
		memcpy(p, &n, 4);
	}
	if (r->counting)
		r->cnt->atomics++;
	return r->checks ? atomic_sync(r, th, (int)in->imm, off) : 0;
}

/* kernel_run.c - the kernel interpreter's executor: stages, blocks and barrier phases, threads run to their stops round after round; the entry points. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/limits.h"
#include "run.h"

/* No thread can move and some wait on an mbarrier. */
static int
fail_deadlock(Run *r, Thr *th, int nthr, int t)
{
	const Prog *P = r->P;
	const Ins *in = &P->code[th[t].pc];
	const MemAux *a = &P->aux[in->c];
	const MBar *m = &r->rb[a->buf].mb[th[t].v[in->d].i];
	char bn[80], d[120];
	int i, nm = 0, nb = 0, nd = 0, nw = 0, other = -1;

	kmem_mbar_name(r, r->rb[a->buf].mbase + (int)th[t].v[in->d].i, bn, sizeof bn);
	for (i = 0; i < nthr; i++) {
		if (th[i].done)
			nd++;
		else if (th[i].wait == W_MBAR)
			nm++;
		else if (th[i].wait == W_BAR)
			nb++;
		else
			nw++;
		if (other < 0 && i != t && (th[i].done || th[i].wait != W_MBAR))
			other = i;
	}
	d[0] = 0;
	if (other >= 0) {
		char sd[80];

		kwarp_stop_desc(P, &th[other], sd, sizeof sd);
		snprintf(d, sizeof d, "; thread (%lld,%lld,%lld) %s", (long long)th[other].tc[0], (long long)th[other].tc[1],
		         (long long)th[other].tc[2], sd);
	}
	return err_set(r->e, "mbarrier: deadlock: stage %s, block (%lld,%lld,%lld): thread (%lld,%lld,%lld) waits on %s "
	               "for parity %lld, and its phase %u (parity %u) never completes: %u of %u arrivals pending, %lld tx "
	               "bytes outstanding; of %d threads, %d wait on mbarriers, %d at a barrier, %d at a warp op, %d "
	               "have finished%s", P->name, (long long)r->bc[0], (long long)r->bc[1], (long long)r->bc[2],
	               (long long)th[t].tc[0], (long long)th[t].tc[1], (long long)th[t].tc[2], bn,
	               (long long)th[t].v[in->a].i, (unsigned)m->phase, (unsigned)(m->phase & 1), (unsigned)m->pending,
	               (unsigned)m->count, (long long)m->tx, nthr, nm, nb, nw, nd, d);
}

/* One stage: every block of the grid, phase by phase. */
static int
run_stage(Run *r, const Prog *P, int si)
{
	const Kernel *k = r->k;
	int64_t nthr = P->blk[0], nblk = P->grid[0], b, t, u;
	int nslot = P->nstack + P->nconst, rc = -1, i, all_done, gathered = 0;
	Thr *th = NULL;
	Val *slots = NULL;
	uint32_t *kc = NULL, *obs = NULL;
	int32_t *wgs = NULL;
	uint64_t before = r->used;
	char what[K_NAME + 32];

	for (i = 1; i < 3; i++) {
		if (uck_mul(nthr, P->blk[i], &nthr) < 0)
			nthr = INT64_MAX;
		if (uck_mul(nblk, P->grid[i], &nblk) < 0)
			nblk = INT64_MAX;
	}
	if (nthr > KR_MAXTHREADS)
		return err_set(r->e, "kernel.run: stage %s: blocks of %lld threads (at most %d)", P->name,
		               (long long)nthr, KR_MAXTHREADS);
	if (nblk > INT32_MAX)
		return err_set(r->e, "kernel.run: stage %s: a grid of %lld blocks (at most 2^31-1)", P->name,
		               (long long)nblk);
	r->P = P;
	r->launch = (uint32_t)si + 1;
	r->nthr = (int)nthr;
	memcpy(r->grid, P->grid, sizeof r->grid);
	memcpy(r->blk, P->blk, sizeof r->blk);
	if (!(th = kmem_alloc(r, (uint64_t)nthr * sizeof *th, 1, "the threads"))
	|| !(slots = kmem_alloc(r, (uint64_t)nthr * nslot * sizeof *slots, 0, "the threads' slots")))
		goto out;
	if (r->counting && !(kc = kmem_alloc(r, (uint64_t)nthr * (P->naux + 1) * sizeof *kc, 0, "the counts")))
		goto out;
	/* shared buffers live per block, registers per thread of a block */
	for (i = 0; i < k->nbuf; i++) {
		RBuf *B = &r->rb[i];
		uint64_t n = B->scope == AS_REG ? (uint64_t)nthr * B->size : (uint64_t)B->size;

		if (B->scope == AS_GLOBAL)
			continue;
		B->tstride = B->scope == AS_REG ? B->size * B->bytes : 0;
		snprintf(what, sizeof what, "%s buffer %s", kscope_name(B->scope), k->buf[i].name);
		if (!(B->p = kmem_alloc(r, n * B->bytes, 0, what)))
			goto out;
		snprintf(what, sizeof what, "the shadow state of %s", k->buf[i].name);
		if (r->checks && B->scope == AS_LOCAL && !(B->sh = kmem_alloc(r, n * sizeof *B->sh, 0, what)))
			goto out;
		if (r->checks && B->scope == AS_REG && !(B->init = kmem_alloc(r, n, 0, what)))
			goto out;
	}
	for (i = 0; i < k->nbuf; i++)
		r->rb[i].wgd = 0;
	for (i = 0; i < P->nwgmma; i++) {
		r->rb[P->wgmma[i].d].wgd = 1;
		if (P->wgmma[i].areg)
			r->rb[P->wgmma[i].a].wgd = 1;
	}
	if (P->nwgmma && !(wgs = kmem_alloc(r, (uint64_t)nthr * 2 * k->nbuf * sizeof *wgs, 0, "the wgmma state")))
		goto out;
	/* mbarriers: every shared uint64 buffer of a stage with mbarrier statements */
	r->nmb = 0;
	r->th = th;
	for (i = 0; P->nmbw && i < k->nbuf; i++) {
		RBuf *B = &r->rb[i];

		if (B->scope != AS_LOCAL || k->buf[i].dtype != DT_UINT64 || r->nmb + B->size > (1 << 16))
			continue;
		B->mbase = r->nmb;
		r->nmb += (int)B->size;
		if (!(B->mb = kmem_alloc(r, (uint64_t)B->size * sizeof *B->mb, 1, "the mbarriers")))
			goto out;
	}
	if (r->nmb && !(obs = kmem_alloc(r, (uint64_t)nthr * r->nmb * 3 * sizeof *obs, 1, "the mbarrier observations")))
		goto out;
	if ((P->nmma || P->nldsm) && nthr % WARP) {
		err_set(r->e, "%s: stage %s: blocks of %lld threads; an %s runs on whole warps (a multiple "
		        "of %d threads)", P->nmma ? "mma" : "ldmatrix", P->name, (long long)nthr,
		        P->nmma ? "MMA" : "ldmatrix", WARP);
		goto out;
	}
	if (r->cnt) {
		r->cnt->blocks += nblk;
		r->cnt->threads += nblk * nthr;
	}
	for (b = 0; b < nblk; b++) {
		r->blin = (uint32_t)b;
		r->nacq = 0;
		coords(b, P->grid, r->bc);
		for (i = 0; i < k->nbuf; i++) {
			RBuf *B = &r->rb[i];
			uint64_t n = B->scope == AS_REG ? (uint64_t)nthr * B->size : (uint64_t)B->size;

			if (B->scope == AS_GLOBAL)
				continue;
			/* fresh per block: zeros, so that runs without checks are deterministic */
			memset(B->p, 0, n * B->bytes);
			if (B->sh)
				memset(B->sh, 0, n * sizeof *B->sh);
			if (B->init)
				memset(B->init, 0, n);
			if (B->mb)
				memset(B->mb, 0, B->size * sizeof *B->mb);
		}
		if (obs)
			memset(obs, 0, (size_t)nthr * r->nmb * 3 * sizeof *obs);
		for (t = 0; t < nthr; t++) {
			Val *v = slots + t * nslot;

			th[t].pc = 0;
			th[t].done = 0;
			th[t].ncpa = 0;
			th[t].ncommit = 0;
			th[t].nwg = 0;
			th[t].wgcommit = 0;
			r->nwgr = 0;
			th[t].wgs = NULL;
			if (wgs) {
				/* nothing in flight; every accumulator needs a fence before its first wgmma */
				th[t].wgs = wgs + t * 2 * k->nbuf;
				for (i = 0; i < k->nbuf; i++) {
					th[t].wgs[i] = 0;
					th[t].wgs[k->nbuf + i] = 1;
				}
			}
			th[t].ev = 0;
			th[t].fc = th[t].fphase = 0;
			th[t].nat = 0;
			th[t].obs = obs ? obs + t * r->nmb * 3 : NULL;
			th[t].arr = obs ? obs + t * r->nmb * 3 + r->nmb : NULL;
			th[t].tid = (int)t;
			th[t].v = v;
			th[t].kc = kc ? kc + t * (P->naux + 1) : NULL;
			coords(t, P->blk, th[t].tc);
			memset(v, 0, (size_t)P->nstack * sizeof *v);
			if (P->nconst)
				memcpy(v + P->nstack, P->cval, (size_t)P->nconst * sizeof *v);
		}
		for (r->phase = 0;; r->phase++) {
			if (kc)
				memset(kc, 0, (size_t)nthr * (P->naux + 1) * sizeof *kc);
			for (t = 0; t < nthr; t++)
				th[t].wait = W_RUN;
			/* rounds: every thread to its next stop; warps that gathered exchange; threads
			** whose mbarrier phase completed resume */
			for (;;) {
				int ran = 0;

				for (t = 0; t < nthr; t++) {
					if (r->counting && t % WARP == 0)
						kcount_flush(r);
					if (th[t].done)
						continue;
					if (th[t].wait == W_MBAR) {
						const Ins *in = &P->code[th[t].pc];

						if (kasync_mbar_wait(r, &th[t], in, th[t].v[in->d].i, th[t].v[in->a].i, 1) <= 0)
							continue;
						th[t].wait = W_RUN;
					}
					if (th[t].wait == W_RUN) {
						ran = 1;
						if ((th[t].wait = kexec_thread(r, P, &th[t])) < 0)
							goto out;
					}
				}
				if (r->counting)
					kcount_flush(r);
				gathered = 0;
				if (P->nshfl + P->nmma + P->nldsm + P->nwgmma && (gathered = kwarp_gather(r, th, (int)nthr)) < 0)
					goto out;
				if (!gathered && (!ran || !P->nmbw))
					break;
			}
			for (t = 0; t < nthr; t++)
				if (!th[t].done && th[t].wait == W_MBAR) {
					fail_deadlock(r, th, (int)nthr, (int)t);
					goto out;
				}
			if (r->pending == AS_LOCAL) {
				memcpy(r->e->msg, r->pend, sizeof r->pend);
				goto out;
			}
			for (t = 0, all_done = 1, u = -1; t < nthr; t++) {
				all_done &= th[t].done;
				if (u < 0 && !th[t].done)
					u = t;
			}
			if (all_done) {
				if (r->ntf) {
					kasync_fail_tma_end(r);
					goto out;
				}
				break;
			}
			/* every thread must wait at the barrier the first waiting one waits at */
			for (t = 0; t < nthr; t++)
				if (th[t].done || th[t].bar != th[u].bar) {
					char w[200];

					snprintf(w, sizeof w, "stage %s, block (%lld,%lld,%lld): thread (%lld,%lld,%lld) "
					         "waits at barrier #%d", P->name, (long long)r->bc[0], (long long)r->bc[1],
					         (long long)r->bc[2], (long long)th[u].tc[0], (long long)th[u].tc[1],
					         (long long)th[u].tc[2], th[u].bar);
					if (th[t].done)
						err_set(r->e, "barrier: %s while thread (%lld,%lld,%lld) has finished", w,
						        (long long)th[t].tc[0], (long long)th[t].tc[1], (long long)th[t].tc[2]);
					else
						err_set(r->e, "barrier: %s while thread (%lld,%lld,%lld) waits at barrier #%d", w,
						        (long long)th[t].tc[0], (long long)th[t].tc[1], (long long)th[t].tc[2],
						        th[t].bar);
					goto out;
				}
			if (r->cnt)
				r->cnt->barriers++;
		}
	}
	if (r->pending) {
		memcpy(r->e->msg, r->pend, sizeof r->pend);
		goto out;
	}
	rc = 0;
out:
	for (i = 0; i < k->nbuf; i++) {
		RBuf *B = &r->rb[i];

		if (B->scope == AS_GLOBAL)
			continue;
		free(B->p);
		free(B->sh);
		free(B->init);
		B->p = NULL;
		B->sh = NULL;
		B->init = NULL;
	}
	for (t = 0; th && t < nthr; t++) {
		free(th[t].cpa);
		free(th[t].wg);
	}
	free(wgs);
	for (i = 0; i < r->ntf; i++) {
		free(r->tf[i].off);
		free(r->tf[i].data);
	}
	free(r->tf);
	r->tf = NULL;
	r->ntf = r->captf = 0;
	free(r->wgr);
	r->wgr = NULL;
	r->nwgr = r->capwgr = 0;
	for (i = 0; i < k->nbuf; i++) {
		free(r->rb[i].mb);
		r->rb[i].mb = NULL;
	}
	r->th = NULL;
	r->nmb = 0;
	free(obs);
	free(th);
	free(slots);
	free(kc);
	r->used = before;
	return rc;
}

/* "X[0, 3]": element lin (row-major) of kb */
static void
elem_str(const KBuf *kb, int64_t lin, char *el, size_t n)
{
	int64_t c[T_MAXDIM];
	size_t at;
	int j;

	for (j = kb->ndim - 1; j >= 0; j--) {
		c[j] = lin % kb->shape[j];
		lin /= kb->shape[j];
	}
	at = snprintf(el, n, "%s[", kb->name);
	for (j = 0; j < kb->ndim && at < n; j++)
		at += snprintf(el + at, n - at, "%s%lld", j ? ", " : "", (long long)c[j]);
	if (at < n)
		snprintf(el + at, n - at, "]");
}

/*
** Place input b (row-major logical order) through its layout. A layout that
** repeats offsets (a broadcast) takes a binding only where the elements that
** share an offset agree (checked when the run keeps shadow state).
*/
static int
place(Run *r, int b, const TBuf *in)
{
	const KBuf *kb = &r->k->buf[b];
	RBuf *B = &r->rb[b];
	Val *s = kexec_lay_slots(r, B);
	int64_t n = in->numel, i, j, off, o2;
	const unsigned char *src = in->data;

	if (!s)
		return -1;
	for (i = 0; i < n; i++) {
		if (kexec_lay_offset(r, B, kb, i, s, &off) < 0) {
			free(s);
			return -1;
		}
		if (B->sh && B->sh[off].init && memcmp(B->p + off * B->bytes, src + i * B->bytes, B->bytes)) {
			char e1[160], e2[160];

			for (j = 0; j < i; j++)
				if (kexec_lay_offset(r, B, kb, j, s, &o2) < 0 || o2 == off)
					break;
			free(s);
			elem_str(kb, j, e1, sizeof e1);
			elem_str(kb, i, e2, sizeof e2);
			return err_set(r->e, "kernel.run: input %s: %s and %s share offset %lld of its layout "
			               "(%s), and the binding gives them different values", kb->name, e1, e2,
			               (long long)off, kb->layout_desc);
		}
		memcpy(B->p + off * B->bytes, src + i * B->bytes, B->bytes);
		if (B->sh)
			B->sh[off].init = 1;
	}
	free(s);
	return 0;
}

/* Read output b back through its layout into row-major logical order. */
static int
readback(Run *r, int b, TBuf *out)
{
	const KBuf *kb = &r->k->buf[b];
	RBuf *B = &r->rb[b];
	Val *s = kexec_lay_slots(r, B);
	int64_t n = 1, i, off;
	unsigned char *d;

	if (!s)
		return -1;
	for (i = 0; i < kb->ndim; i++)
		n *= kb->shape[i];
	if (!(d = malloc(n > 0 ? (size_t)n * B->bytes : 1))) {
		free(s);
		return err_set(r->e, "kernel.run: out of memory for output %s", kb->name);
	}
	for (i = 0; i < n; i++) {
		if (kexec_lay_offset(r, B, kb, i, s, &off) < 0)
			goto fail;
		if (B->sh && !B->sh[off].init) {
			char el[160];

			elem_str(kb, i, el, sizeof el);
			err_set(r->e, "uninitialized: output %s (offset %lld) was never written by the end of "
			        "the run", el, (long long)off);
			goto fail;
		}
		memcpy(d + i * B->bytes, B->p + off * B->bytes, B->bytes);
	}
	free(s);
	memset(out, 0, sizeof *out);
	out->dtype = kb->dtype;
	out->ndim = kb->ndim;
	memcpy(out->shape, kb->shape, sizeof kb->shape);
	out->device = NULL;
	out->axis = -1;
	out->numel = n;
	out->data = d;
	return 0;
fail:
	free(s);
	free(d);
	return -1;
}

int
kernel_run(const Kernel *k, const KRunOpts *o, TBuf *bufs, KCounts *counts, Err *e)
{
	KRunOpts dflt = { .checks = 1 };
	Run r;
	Prog *progs = NULL;
	TBuf *outs = NULL;
	char what[K_NAME + 32];
	int i, rc = -1;

	if (!o)
		o = &dflt;
	memset(&r, 0, sizeof r);
	r.k = k;
	r.e = e;
	r.checks = o->checks;
	r.o = o;
	if (o->watch_msg && o->watch_len)
		o->watch_msg[0] = 0;
	r.counting = o->counts && counts;
	r.cnt = counts;
	r.limit = o->mem_limit ? o->mem_limit : (uint64_t)limits_get()->tensor_bytes;
	r.max_steps = o->max_steps > 0 ? o->max_steps : limits_get()->steps;
	r.left = r.max_steps;
	e->msg[0] = 0;
	if (limits_poll(e) < 0)   /* a Ctrl-C already pending */
		return -1;
	if (counts)
		memset(counts, 0, sizeof *counts);
	if (!k)
		return err_set(e, "kernel.run: no kernel");
	if (!bufs && k->nbuf)
		return err_set(e, "kernel.run: no buffer table");
	/* check the caller's inputs before allocating anything */
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		int64_t n = 1;
		int j;

		for (j = 0; j < kb->ndim; j++)
			n *= kb->shape[j];
		if (kb->role != KB_TEMP && kb->scope != AS_GLOBAL)
			return err_set(e, "kernel.run: %s %s is in %s memory; inputs and outputs are global",
			               krole_name(kb->role), kb->name, kscope_name(kb->scope));
		if (kb->role != KB_INPUT)
			continue;
		if (!bufs || !bufs[i].data)
			return err_set(e, "kernel.run: no data for input %s", kb->name);
		if (bufs[i].dtype != kb->dtype || bufs[i].numel != n)
			return err_set(e, "kernel.run: input %s: %lld elements of %s given, %lld of %s declared",
			               kb->name, (long long)bufs[i].numel, dtype_name(bufs[i].dtype), (long long)n,
			               dtype_name(kb->dtype));
	}
	if (!(r.rb = calloc(k->nbuf ? k->nbuf : 1, sizeof *r.rb))
	|| !(progs = calloc(k->nstage ? k->nstage : 1, sizeof *progs))
	|| !(outs = calloc(k->nbuf ? k->nbuf : 1, sizeof *outs))) {
		err_set(e, "kernel.run: out of memory");
		goto out;
	}
	for (i = 0; i < k->nstage; i++)
		if (kcomp_stage(k, &k->stage[i], &progs[i], e) < 0)
			goto out;
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		RBuf *B = &r.rb[i];

		B->t = kb->dtype;
		B->bytes = dtype_bytes(kb->dtype);
		B->scope = kb->scope;
		B->size = kb->size;
		if (kcomp_layout(k, i, &B->lay, e) < 0)
			goto out;
		if (kb->scope != AS_GLOBAL)
			continue;
		snprintf(what, sizeof what, "buffer %s", kb->name);
		if (!(B->p = kmem_alloc(&r, (uint64_t)B->size * B->bytes, 1, what)))
			goto out;
		snprintf(what, sizeof what, "the shadow state of %s", kb->name);
		if (r.checks && !(B->sh = kmem_alloc(&r, (uint64_t)B->size * sizeof *B->sh, 1, what)))
			goto out;
		if (kb->role == KB_INPUT && place(&r, i, &bufs[i]) < 0)
			goto out;
	}
	for (i = 0; i < k->nstage; i++)
		if (run_stage(&r, &progs[i], i) < 0)
			goto out;
	r.P = NULL;
	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_OUTPUT && readback(&r, i, &outs[i]) < 0)
			goto out;
	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_OUTPUT)
			bufs[i] = outs[i];
		else if (k->buf[i].role == KB_TEMP)
			memset(&bufs[i], 0, sizeof bufs[i]);
	rc = 0;
out:
	if (counts)
		counts->ops = r.ops;
	if (rc < 0 && outs)
		for (i = 0; i < k->nbuf; i++)
			free(outs[i].data);
	if (r.rb)
		for (i = 0; i < k->nbuf; i++) {
			free(r.rb[i].p);
			free(r.rb[i].sh);
			free(r.rb[i].init);
			kcomp_free(&r.rb[i].lay);
		}
	if (progs)
		for (i = 0; i < k->nstage; i++)
			kcomp_free(&progs[i]);
	free(progs);
	free(outs);
	free(r.rb);
	free(r.log);
	free(r.rel);
	free(r.acq);
	return rc;
}

int
kernel_inputs(const Kernel *k, const TEvalOpts *o, TBuf *bufs, Err *e)
{
	int i, j;

	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		int64_t n = 1;

		if (kb->role != KB_INPUT || !kb->tensor)
			continue;
		for (j = 0; j < kb->ndim; j++)
			n *= kb->shape[j];
		if (tensor_realize(kb->tensor, o, &bufs[i], e) < 0) {
			char m[sizeof e->msg];

			snprintf(m, sizeof m, "%s", e->msg);
			err_set(e, "kernel.inputs: %s: %s", kb->name, m);
			goto fail;
		}
		if (bufs[i].dtype != kb->dtype || bufs[i].numel != n) {
			err_set(e, "kernel.inputs: %s: the tensor realizes to %lld elements of %s, the buffer "
			        "holds %lld of %s", kb->name, (long long)bufs[i].numel, dtype_name(bufs[i].dtype),
			        (long long)n, dtype_name(kb->dtype));
			tbuf_free(&bufs[i]);
			goto fail;
		}
	}
	return 0;
fail:
	for (j = 0; j < i; j++)
		if (k->buf[j].role == KB_INPUT && k->buf[j].tensor)
			tbuf_free(&bufs[j]);
	return -1;
}

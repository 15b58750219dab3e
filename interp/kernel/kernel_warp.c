/* kernel_warp.c - the interpreter's warp-synchronous ops: lanes gathered at SHUFFLE, MMA, LDMATRIX and WGMMA, and what each computes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

/* ---- warps ---- */

/* "stage s, block (x,y,z), warp w" */
static void
where_warp(const Run *r, int w, char *out, size_t n)
{
	snprintf(out, n, "stage %s, block (%lld,%lld,%lld), warp %d", r->P->name, (long long)r->bc[0],
	         (long long)r->bc[1], (long long)r->bc[2], w);
}

/* "waits at shuffle #2", "waits at barrier #0", "has finished" */
void
kwarp_stop_desc(const Prog *P, const Thr *t, char *out, size_t n)
{
	const Ins *in = &P->code[t->pc];

	if (t->done)
		snprintf(out, n, "has finished");
	else if (t->wait == W_BAR)
		snprintf(out, n, "waits at barrier #%d", t->bar);
	else if (t->wait == W_MBAR)
		snprintf(out, n, "waits on an mbarrier (parity %lld)", (long long)t->v[in->a].i);
	else if (in->op == I_SHFL)
		snprintf(out, n, "waits at shuffle #%lld", (long long)in->imm);
	else if (in->op == I_LDSM)
		snprintf(out, n, "waits at ldmatrix #%d", in->b);
	else if (in->op == I_WGMMA)
		snprintf(out, n, "waits at wgmma #%lld", (long long)in->imm);
	else
		snprintf(out, n, "waits at mma #%lld (%s)", (long long)in->imm, P->mma[in->imm].name);
}

/* Lane a waits at a warp op, lane b somewhere else: they never meet. */
static int
fail_warp(Run *r, int w, const Thr *l, int a, int b)
{
	const Prog *P = r->P;
	char wh[200], da[120], db[120];

	where_warp(r, w, wh, sizeof wh);
	kwarp_stop_desc(P, &l[a], da, sizeof da);
	kwarp_stop_desc(P, &l[b], db, sizeof db);
	const char *op = P->code[l[a].pc].op == I_SHFL ? "shuffle" : P->code[l[a].pc].op == I_LDSM ? "ldmatrix"
	               : P->code[l[a].pc].op == I_WGMMA ? "wgmma" : "mma";

	return err_set(r->e, "%s: %s: lane %d %s while lane %d %s (every lane of a warp must reach the "
	               "same %s)", op, wh, a, da, b, db, op);
}

/* SHUFFLE over the nl lanes of warp w: each reads its source lane's value. */
static int
shuffle(Run *r, int w, Thr *l, int nl, const Ins *in)
{
	int i;

	for (i = 0; i < nl; i++) {
		int64_t src = l[i].v[in->b].i;

		if (src < 0 || src >= nl) {
			char wh[200];

			where_warp(r, w, wh, sizeof wh);
			return err_set(r->e, "shuffle: %s: lane %d reads lane %lld at shuffle #%lld, outside "
			               "the warp's lanes [0, %d)%s", wh, i, (long long)src, (long long)in->imm, nl,
			               nl < WARP ? " (a short warp: the block ends there)" : "");
		}
	}
	/* the destination slot is not the value's: one pass reads every source first */
	for (i = 0; i < nl; i++)
		l[i].v[in->d] = l[l[i].v[in->b].i].v[in->a];
	if (r->cnt)
		r->cnt->shuffles++;
	return 0;
}

static double
tf32(double x)
{
	/* the tensor cores read the top 19 bits of a float32: 13 mantissa bits dropped */
	float f = (float)x;
	uint32_t u;

	memcpy(&u, &f, 4);
	u &= ~(uint32_t)0x1fff;
	memcpy(&f, &u, 4);
	return f;
}

static int
fail_mma_uninit(Run *r, const Thr *t, const MmaProg *M, int op, int v)
{
	static const char *const role[4] = { "D", "A", "B", "C" };
	const KBuf *kb = &r->k->buf[M->buf[op]];
	char w[256], el[160];
	int64_t c[T_MAXDIM], x = v;
	size_t at;
	int j;

	kmem_where(r, t, NULL, w, sizeof w);
	for (j = kb->ndim - 1; j >= 0; j--) {
		c[j] = x % kb->shape[j];
		x /= kb->shape[j];
	}
	at = snprintf(el, sizeof el, "%s[", kb->name);
	for (j = 0; j < kb->ndim && at < sizeof el; j++)
		at += snprintf(el + at, sizeof el - at, "%s%lld", j ? ", " : "", (long long)c[j]);
	if (at < sizeof el)
		snprintf(el + at, sizeof el - at, "]");
	return err_set(r->e, "uninitialized: %s: mma.%s reads %s register %s (offset %lld), which nothing "
	               "wrote in this thread", w, M->name, role[op], el, (long long)M->off[op][v]);
}

/* MMA over warp w (whole: run_stage refuses blocks of partial warps). */
static int
mma(Run *r, int w, Thr *l, const Ins *in)
{
	const MmaProg *M = &r->P->mma[in->imm];
	double ta[MMA_MAXTILE], tb[MMA_MAXTILE], tc[MMA_MAXTILE];
	int g, i, L, v, m, n, kk;
	RBuf *D = &r->rb[M->buf[0]];

	for (g = 0; g < M->ngroup; g++) {
		memset(ta, 0, sizeof ta);
		memset(tb, 0, sizeof tb);
		memset(tc, 0, sizeof tc);
		/* gather the operands: every register read is checked */
		for (L = 0; L < WARP; L++) {
			if (M->group[L] != g)
				continue;
			for (i = 1; i < 4; i++) {
				const RBuf *B = &r->rb[M->buf[i]];
				double *t = i == 1 ? ta : i == 2 ? tb : tc;

				for (v = 0; v < M->nv[i]; v++) {
					int64_t off = M->off[i][v];
					double x;

					if (B->init && !B->init[(int64_t)l[L].tid * B->size + off])
						return fail_mma_uninit(r, &l[L], M, i, v);
					x = dtype_load_f(B->t, B->p + l[L].tid * B->tstride + off * B->bytes);
					t[M->crd[i][L][v]] = M->tf32 && i < 3 ? tf32(x) : x;
				}
			}
		}
		/* D = A B + C in float64, into tc */
		for (m = 0; m < M->m; m++)
			for (n = 0; n < M->n; n++) {
				double acc = tc[m + n * M->m];

				for (kk = 0; kk < M->k; kk++)
					acc += ta[m + kk * M->m] * tb[n + kk * M->n];
				tc[m + n * M->m] = acc;
			}
		for (L = 0; L < WARP; L++) {
			if (M->group[L] != g)
				continue;
			for (v = 0; v < M->nv[0]; v++) {
				int64_t off = M->off[0][v];

				dtype_store_f(D->t, D->p + l[L].tid * D->tstride + off * D->bytes,
				              fround(D->t, tc[M->crd[0][L][v]]));
				if (D->init)
					D->init[(int64_t)l[L].tid * D->size + off] = 1;
			}
		}
		r->ops += 2 * (int64_t)M->m * M->n * M->k;
	}
	if (r->cnt)
		r->cnt->mmas++;
	(void)w;
	return 0;
}

/*
** LDMATRIX over warp w (whole: run_stage refuses blocks of partial warps):
** lane 8j + r names row r of matrix j, 8 elements from its offset; each
** lane t takes (row t/4, columns 2(t%4), 2(t%4)+1) of every matrix, or
** transposed (rows 2(t%4), 2(t%4)+1, column t/4). Every element read is
** checked as that lane's load (bounds, uninitialized, races); the bits are
** moved as they are. Counts: kcount_ldsm.
*/
static int
ldsm(Run *r, int w, Thr *l, const Ins *in)
{
	const LdsmProg *L = &r->P->ldsm[in->b];
	RBuf *S = &r->rb[L->src], *D = &r->rb[L->dst];
	int64_t base[32];
	int j, row, c, t, h;

	for (j = 0; j < L->n; j++)
		for (row = 0; row < 8; row++) {
			Thr *th = &l[8 * j + row];
			int64_t off = th->v[in->a].i;

			if (off % 8 != 0 || off < 0 || off > S->size - 8) {
				char wh[256];

				kmem_where(r, th, in, wh, sizeof wh);
				return err_set(r->e, "ldmatrix: %s: lane %d names row %d of matrix %d at offset %lld of %s; "
				               "a row is 8 elements (16 bytes) from an offset that is a multiple of 8, inside "
				               "the buffer's %lld", wh, 8 * j + row, row, j, (long long)off,
				               r->k->buf[L->src].name, (long long)S->size);
			}
			if (r->checks)
				for (c = 0; c < 8; c++)
					if (kmem_check(r, th, in, off + c, 0) < 0)
						return -1;
			base[8 * j + row] = off;
		}
	for (t = 0; t < WARP; t++)
		for (j = 0; j < L->n; j++)
			for (h = 0; h < 2; h++) {
				int rr = L->trans ? 2 * (t % 4) + h : t / 4, cc = L->trans ? t / 4 : 2 * (t % 4) + h;
				int64_t o = L->off[2 * j + h];

				memcpy(D->p + l[t].tid * D->tstride + o * D->bytes, S->p + (base[8 * j + rr] + cc) * S->bytes,
				       (size_t)S->bytes);
				if (D->init)
					D->init[(int64_t)l[t].tid * D->size + o] = 1;
			}
	if (r->cnt)
		kcount_ldsm(r, S, base, L->n);
	(void)w;
	return 0;
}

/* ---- wgmma: the warpgroup's side ---- */

/* The physical offset of the element at coordinates c of buffer kb (its layout program). */
/* "As[0, 3, 8]" */
static void
crd_desc(const KBuf *kb, const int64_t *c, char *out, size_t n)
{
	size_t at = snprintf(out, n, "%s[", kb->name);
	int i;

	for (i = 0; i < kb->ndim && at < n; i++)
		at += snprintf(out + at, n - at, "%s%lld", i ? ", " : "", (long long)c[i]);
	if (at < n)
		snprintf(out + at, n - at, "]");
}

/*
** One operand tile into t (row-major over its last two dimensions, rows x
** cols from the start coordinates c0): each element read through the
** layout, checked as a read of the thread whose rows of D it feeds (A: the
** first lane of warp m/16; B: the warpgroup's first thread).
*/
static int
wg_tile(Run *r, Thr *l, int buf, const int64_t *c0, int rows, int cols, int isa, double *t)
{
	const KBuf *kb = &r->k->buf[buf];
	RBuf *B = &r->rb[buf];
	int64_t c[T_MAXDIM], off;
	int i, j, d, nd = kb->ndim;
	Val *slots = kexec_lay_slots(r, B);
	char w[256], el[160];

	if (!slots)
		return -1;
	for (d = 0; d < nd; d++)
		c[d] = c0[d];
	for (d = 0; d < nd; d++)
		if (c0[d] < 0 || c0[d] + (d == nd - 2 ? rows : d == nd - 1 ? cols : 1) > kb->shape[d]) {
			kmem_where(r, &l[0], NULL, w, sizeof w);
			crd_desc(kb, c0, el, sizeof el);
			free(slots);
			return err_set(r->e, "out of bounds: %s: wgmma's %s tile from %s (%d x %d) leaves dimension %d of %s "
			               "(%lld)", w, isa ? "A" : "B", el, rows, cols, d, kb->name, (long long)kb->shape[d]);
		}
	for (i = 0; i < rows; i++)
		for (j = 0; j < cols; j++) {
			Thr *th = isa ? &l[32 * (i / 16)] : &l[0];

			c[nd - 2] = c0[nd - 2] + i;
			c[nd - 1] = c0[nd - 1] + j;
			if (kexec_lay_at(r, B, kb, c, slots, &off) < 0) {
				free(slots);
				return -1;
			}
			if (r->checks) {
				Shadow *s = &B->sh[off];
				Acc cur;

				cur.launch = r->launch;
				cur.block = r->blin;
				cur.phase = r->phase;
				cur.thread = (uint32_t)th->tid;
				cur.ev = WG_READING;
				cur.fc = th->fc;
				if (s->async || !s->init || kmem_conflict(&s->w, &cur)) {
					int64_t pt[3];

					kmem_where(r, th, NULL, w, sizeof w);
					crd_desc(kb, c, el, sizeof el);
					free(slots);
					if (s->async) {
						coords(s->async - 1, r->blk, pt);
						return err_set(r->e, "cp_async: %s: wgmma reads %s (offset %lld, shared memory) while a "
						               "cp.async into it is in flight (issued by thread (%lld,%lld,%lld))", w, el,
						               (long long)off, (long long)pt[0], (long long)pt[1], (long long)pt[2]);
					}
					if (!s->init)
						return err_set(r->e, "uninitialized: %s: wgmma reads %s (offset %lld) of its %s tile, "
						               "which nothing wrote in this block", w, el, (long long)off, isa ? "A" : "B");
					coords(s->w.thread, r->blk, pt);
					return err_set(r->e, "race: %s: wgmma reads %s (offset %lld, shared memory) while thread "
					               "(%lld,%lld,%lld) wrote it in the same phase (no barrier between)", w, el,
					               (long long)off, (long long)pt[0], (long long)pt[1], (long long)pt[2]);
				}
				kmem_note_read(s, &cur);
				if (kasync_wg_note(r, th, buf, off) < 0) {
					free(slots);
					return -1;
				}
			}
			t[i * cols + j] = dtype_load_f(B->t, B->p + off * B->bytes);
		}
	free(slots);
	return 0;
}

/*
** A from registers: each thread's 8 elements (from its own start, along the
** last dimension) into t (64 x 16, row-major) at its fragment's places
** (kernel.h, kernel_wgmma). Each must be written, and not since the
** thread's last wgmma_fence.
*/
static int
wg_afrag(Run *r, Thr *l, const WgmmaProg *W, const MemAux *xa, double *t)
{
	const KBuf *kb = &r->k->buf[W->a];
	RBuf *B = &r->rb[W->a];
	int64_t c[T_MAXDIM], off;
	int nd = kb->ndim, th, i, d;
	Val *slots = kexec_lay_slots(r, B);
	char w[256], el[160];

	if (!slots)
		return -1;
	for (th = 0; th < WG; th++) {
		int wp = th / 32, ln = th % 32;

		for (d = 0; d < nd; d++)
			c[d] = l[th].v[xa->idx[d]].i;
		for (d = 0; d < nd; d++)
			if (c[d] < 0 || c[d] + (d == nd - 1 ? 8 : 1) > kb->shape[d]) {
				kmem_where(r, &l[th], NULL, w, sizeof w);
				crd_desc(kb, c, el, sizeof el);
				free(slots);
				return err_set(r->e, "out of bounds: %s: wgmma's A fragment from %s (8 registers) leaves "
				               "dimension %d of %s (%lld)", w, el, d, kb->name, (long long)kb->shape[d]);
			}
		if (l[th].wgs[r->k->nbuf + W->a]) {
			kmem_where(r, &l[th], NULL, w, sizeof w);
			free(slots);
			return err_set(r->e, "wgmma: %s: the wgmma reads its A fragment from %s, which this thread "
			               "accessed since its last wgmma_fence (or never fenced): kernel.wgmma_fence() "
			               "between the accesses and the wgmma", w, kb->name);
		}
		for (i = 0; i < 8; i++) {
			int row = 16 * wp + ln / 4 + 8 * ((i / 2) % 2), col = 2 * (ln % 4) + i % 2 + 8 * (i / 4);

			if (i)
				c[nd - 1]++;
			if (kexec_lay_at(r, B, kb, c, slots, &off) < 0) {
				free(slots);
				return -1;
			}
			if (B->init && !B->init[(int64_t)l[th].tid * B->size + off]) {
				kmem_where(r, &l[th], NULL, w, sizeof w);
				crd_desc(kb, c, el, sizeof el);
				free(slots);
				return err_set(r->e, "uninitialized: %s: wgmma reads %s (register offset %lld) of its A "
				               "fragment, which nothing wrote in this thread", w, el, (long long)off);
			}
			t[row * 16 + col] = dtype_load_f(B->t, B->p + l[th].tid * B->tstride + off * B->bytes);
		}
	}
	free(slots);
	return 0;
}

/*
** WGMMA over the warpgroup l[0..127] (whole: run_stage refuses blocks of
** partial warpgroups). Every thread must name the same tiles; each needs a
** wgmma_fence since it last accessed D. The product is computed now (in
** float64, rounded to float32 once), which is what D will hold when the
** wgmma retires: until then the thread may not touch D (kmem_check()).
*/
static int
wgmma(Run *r, int g, Thr *l, const Ins *in)
{
	const WgmmaProg *W = &r->P->wgmma[in->imm];
	const MemAux *xa = &r->P->aux[W->auxa], *xb = &r->P->aux[W->auxb];
	RBuf *D = &r->rb[W->d];
	int nbuf = r->k->nbuf, t, i, v, kk;
	int64_t ca[T_MAXDIM], cb[T_MAXDIM];
	double *ta = NULL, *tb = NULL;
	char w[256];

	for (i = 0; i < xa->ndim; i++)
		ca[i] = l[0].v[xa->idx[i]].i;
	for (i = 0; i < xb->ndim; i++)
		cb[i] = l[0].v[xb->idx[i]].i;
	for (t = 0; t < WG; t++) {
		for (i = 0; i < xa->ndim && (W->areg || l[t].v[xa->idx[i]].i == ca[i]); i++)
			;
		for (v = 0; v < xb->ndim && l[t].v[xb->idx[v]].i == cb[v]; v++)
			;
		if (i < xa->ndim || v < xb->ndim) {
			char e0[120], e1[120];
			int64_t c[T_MAXDIM];
			const MemAux *x = i < xa->ndim ? xa : xb;
			const KBuf *kb = &r->k->buf[x->buf];

			for (kk = 0; kk < x->ndim; kk++)
				c[kk] = l[t].v[x->idx[kk]].i;
			kmem_where(r, &l[t], NULL, w, sizeof w);
			crd_desc(kb, i < xa->ndim ? ca : cb, e0, sizeof e0);
			crd_desc(kb, c, e1, sizeof e1);
			return err_set(r->e, "wgmma: %s: names the %s tile at %s while thread %d of its warpgroup names %s "
			               "(wgmma #%lld: one tile for the whole warpgroup)", w, i < xa->ndim ? "A" : "B", e1,
			               (int)l[0].tid, e0, (long long)in->imm);
		}
		if (l[t].wgs[nbuf + W->d]) {
			kmem_where(r, &l[t], NULL, w, sizeof w);
			return err_set(r->e, "wgmma: %s: wgmma #%lld accumulates in %s, which this thread accessed since its "
			               "last wgmma_fence (or never fenced): kernel.wgmma_fence() between the accesses and the "
			               "wgmma", w, (long long)in->imm, r->k->buf[W->d].name);
		}
	}
	if (!(ta = malloc(64 * 16 * sizeof *ta)) || !(tb = malloc(16 * (size_t)W->n * sizeof *tb))) {
		free(ta);
		return err_set(r->e, "kernel.run: out of memory (wgmma tiles)");
	}
	if ((W->areg ? wg_afrag(r, l, W, xa, ta) : wg_tile(r, l, W->a, ca, 64, 16, 1, ta)) < 0
	|| wg_tile(r, l, W->b, cb, W->nk ? W->n : 16, W->nk ? 16 : W->n, 0, tb) < 0)
		goto fail;
	for (t = 0; t < WG; t++) {
		int wp = t / 32, ln = t % 32;

		for (v = 0; v < W->n / 2; v++) {
			int row = 16 * wp + ln / 4 + 8 * ((v / 2) % 2), col = 8 * (v / 4) + 2 * (ln % 4) + v % 2;
			unsigned char *p = D->p + l[t].tid * D->tstride + W->off[v] * D->bytes;
			double acc;

			if (!W->zero && D->init && !D->init[(int64_t)l[t].tid * D->size + W->off[v]]) {
				kmem_where(r, &l[t], NULL, w, sizeof w);
				err_set(r->e, "uninitialized: %s: wgmma #%lld accumulates into %s element %d (register offset "
				        "%lld), which nothing wrote in this thread (fill D before the first wgmma)", w,
				        (long long)in->imm, r->k->buf[W->d].name, v, (long long)W->off[v]);
				goto fail;
			}
			acc = W->zero ? 0 : dtype_load_f(D->t, p);
			if (D->init)
				D->init[(int64_t)l[t].tid * D->size + W->off[v]] = 1;
			for (kk = 0; kk < 16; kk++)
				acc += ta[row * 16 + kk] * (W->nk ? tb[col * 16 + kk] : tb[kk * W->n + col]);
			dtype_store_f(D->t, p, fround(D->t, acc));
		}
	}
	if (kasync_wg_issue(r, l, W) < 0)
		goto fail;
	r->ops += 2 * 64 * (int64_t)W->n * 16;
	if (r->cnt)
		r->cnt->wgmmas++;
	free(ta);
	free(tb);
	(void)g;
	return 0;
fail:
	free(ta);
	free(tb);
	return -1;
}

/* Whether the warpgroup of warp w (waiting at the I_WGMMA at pc) can gather now:
** 1 yes, 0 not yet (another warp of it is still on its way), -1 never (an error). */
static int
wg_ready(Run *r, Thr *th, int nthr, int w, int pc)
{
	const Prog *P = r->P;
	int base = (w / 4) * WG, t;
	char wh[200], da[120], db[120];

	if (base + WG > nthr)
		/* a block may end in a partial warpgroup (a producer warp), which must not reach a wgmma */
		return err_set(r->e, "wgmma: stage %s, block (%lld,%lld,%lld): warpgroup %d reaches a wgmma with %d "
		               "threads; a wgmma runs on a whole warpgroup of %d (the block ends at thread %d)",
		               P->name, (long long)r->bc[0], (long long)r->bc[1], (long long)r->bc[2], w / 4, nthr - base,
		               WG, nthr);
	for (t = base; t < base + WG; t++) {
		const Thr *x = &th[t];

		if (!x->done && x->wait == W_WARP && x->pc == pc)
			continue;
		if (!x->done && (x->wait == W_RUN || x->wait == W_MBAR
		                 || (x->wait == W_WARP && P->code[x->pc].op != I_WGMMA)))
			return 0;
		snprintf(wh, sizeof wh, "stage %s, block (%lld,%lld,%lld), warpgroup %d", P->name, (long long)r->bc[0],
		         (long long)r->bc[1], (long long)r->bc[2], w / 4);
		kwarp_stop_desc(P, &th[w * WARP], da, sizeof da);
		kwarp_stop_desc(P, x, db, sizeof db);
		return err_set(r->e, "wgmma: %s: thread %d %s while thread %d %s (every thread of a warpgroup must reach "
		               "the same wgmma)", wh, w * WARP, da, t, db);
	}
	return 1;
}

/*
** After a round: every warp whose lanes wait at a warp op exchanges, and its
** lanes may run on. Returns the number of warps that did, or -1. A warp with
** some lanes at a warp op and others elsewhere is an error: every thread ran
** as far as it can, so they would never meet.
*/
int
kwarp_gather(Run *r, Thr *th, int nthr)
{
	const Prog *P = r->P;
	int w, i, first, nl, n = 0, deferred = 0;

	for (w = 0; w * WARP < nthr; w++) {
		Thr *l = th + (int64_t)w * WARP;
		const Ins *in;

		nl = nthr - w * WARP < WARP ? nthr - w * WARP : WARP;
		for (first = 0; first < nl && (l[first].done || l[first].wait != W_WARP); first++)
			;
		if (first == nl)
			continue;
		/* lanes still waiting on an mbarrier may come later */
		for (i = 0; i < nl && (l[i].done || l[i].wait != W_MBAR); i++)
			;
		if (i < nl)
			continue;
		for (i = 0; i < nl; i++)
			if (l[i].done || l[i].wait != W_WARP || l[i].pc != l[first].pc)
				return fail_warp(r, w, l, first, i);
		in = &P->code[l[first].pc];
		if (in->op == I_WGMMA) {
			/* the whole warpgroup gathers, once its four warps are there */
			int rd = wg_ready(r, th, nthr, w, l[first].pc), t;
			Thr *g = th + (int64_t)(w / 4) * WG;

			if (rd < 0)
				return -1;
			if (!rd) {
				deferred++;
				continue;
			}
			if (wgmma(r, w / 4, g, in) < 0)
				return -1;
			for (t = 0; t < WG; t++) {
				g[t].wait = W_RUN;
				g[t].pc++;
			}
			n++;
			continue;
		}
		if ((in->op == I_SHFL ? shuffle(r, w, l, nl, in) : in->op == I_LDSM ? ldsm(r, w, l, in)
		     : mma(r, w, l, in)) < 0)
			return -1;
		for (i = 0; i < nl; i++) {
			l[i].wait = W_RUN;
			l[i].pc++;
		}
		n++;
	}
	/* threads waiting on an mbarrier may still join their warpgroup's wgmma in a later round */
	for (i = 0; !n && deferred && i < nthr; i++)
		if (!th[i].done && th[i].wait == W_MBAR)
			deferred = 0;
	if (!n && deferred)
		return err_set(r->e, "wgmma: stage %s, block (%lld,%lld,%lld): the threads of a warpgroup wait at "
		               "different places and cannot meet", P->name, (long long)r->bc[0], (long long)r->bc[1],
		               (long long)r->bc[2]);
	return n;
}

/* kernel_count.c - the interpreter's traffic counters: warp-level requests, global sectors, shared wavefronts and bank conflicts. */
#include <stdlib.h>

#include "run.h"

/* ---- counts: warp-level requests ---- */

static void
count_group(Run *r, const LogE *g, size_t n)
{
	const MemAux *a = &r->P->aux[g[0].mem];
	const RBuf *B = &r->rb[a->buf];
	KCounts *c = r->cnt;
	size_t i;

	if (B->scope == AS_GLOBAL) {
		int64_t last = -1, sec;

		if (a->write)
			c->global_stores++;
		else
			c->global_loads++;
		for (i = 0; i < n; i++)
			if ((sec = g[i].addr >> 5) != last) {
				c->global_sectors++;
				last = sec;
			}
	} else if (B->scope == AS_LOCAL) {
		int bank[32] = { 0 }, worst = 0;
		int64_t last = -1, wd;

		if (a->write)
			c->shared_stores++;
		else
			c->shared_loads++;
		/* entries are sorted by address: words ascend, so distinct words are runs */
		for (i = 0; i < n; i++)
			for (wd = g[i].addr >> 2; wd <= (g[i].addr + B->bytes - 1) >> 2; wd++)
				if (wd != last) {
					if (++bank[wd % 32] > worst)
						worst = bank[wd % 32];
					last = wd;
				}
		c->shared_accesses += worst;
		c->bank_conflicts += worst - 1;
	}
}

static int
logcmp(const void *x, const void *y)
{
	const LogE *a = x, *b = y;

	if (a->mem != b->mem)
		return a->mem < b->mem ? -1 : 1;
	if (a->k != b->k)
		return a->k < b->k ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* The accesses of one warp in one phase, grouped into requests. */
void
kcount_flush(Run *r)
{
	size_t i, j;

	if (!r->nlog)
		return;
	qsort(r->log, r->nlog, sizeof *r->log, logcmp);
	for (i = 0; i < r->nlog; i = j) {
		for (j = i + 1; j < r->nlog && r->log[j].mem == r->log[i].mem && r->log[j].k == r->log[i].k; j++)
			;
		count_group(r, r->log + i, j - i);
	}
	r->nlog = 0;
}

int
kcount_access(Run *r, Thr *th, const Ins *in, int64_t off)
{
	const RBuf *B = &r->rb[in->imm];
	LogE e;

	e.mem = (uint32_t)in->c;
	e.k = th->kc[in->c]++;
	e.addr = off * B->bytes;
	if (B->scope == AS_REG)
		return 0;
	if (r->nthr == 1) {
		count_group(r, &e, 1);
		return 0;
	}
	if (r->nlog == r->caplog) {
		size_t nc = r->caplog ? 2 * r->caplog : 1024;
		LogE *nl;

		if (kmem_charge(r, (nc - r->caplog) * sizeof *nl, "the access log of the counts") < 0)
			return -1;
		if (!(nl = realloc(r->log, nc * sizeof *nl)))
			return err_set(r->e, "kernel.run: out of memory (access log)");
		r->log = nl;
		r->caplog = nc;
	}
	r->log[r->nlog++] = e;
	return 0;
}

/*
** One LDMATRIX (kernel_warp.c's ldsm): one shared request per matrix, its
** wavefronts from the banks of its 8 rows of 16 bytes; base[8j + row] is
** the offset in S of row `row` of matrix j.
*/
void
kcount_ldsm(Run *r, const RBuf *S, const int64_t *base, int n)
{
	int j, row;

	r->cnt->ldmatrices++;
	for (j = 0; j < n; j++) {
		int64_t words[32], nw = 0, wf = 1, q, a, b;

		for (row = 0; row < 8; row++)
			for (q = 0; q < 4; q++)
				words[nw++] = base[8 * j + row] * S->bytes / 4 + q;
		/* the most distinct words in one bank */
		for (a = 0; a < nw; a++) {
			int64_t cnt = 0;

			for (b = 0; b < nw; b++)
				if (words[b] % 32 == words[a] % 32) {
					for (q = 0; q < b && words[q] != words[b]; q++)
						;
					cnt += q == b;
				}
			if (cnt > wf)
				wf = cnt;
		}
		r->cnt->shared_loads++;
		r->cnt->shared_accesses += wf;
		r->cnt->bank_conflicts += wf - 1;
	}
}

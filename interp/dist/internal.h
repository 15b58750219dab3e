/* internal.h - what dist.c and dist_flow.c share: the simulation's storage and the step checks; nothing outside the room includes it. */
#ifndef TESSEL_DIST_INTERNAL_H
#define TESSEL_DIST_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "dist.h"

/* Device r's storage of tensor t. */
static inline TBuf *
dist_store(const DistState *st, int r, int t)
{
	return &st->store[(size_t)r * (size_t)st->nt + (size_t)t];
}

/* A 1-D buffer of n zeros of dtype t. */
static inline int
dist_alloc_buf(TBuf *b, DType t, int64_t n, Err *e)
{
	memset(b, 0, sizeof *b);
	b->dtype = t;
	b->ndim = 1;
	b->shape[0] = n;
	b->numel = n;
	if (!(b->data = calloc((size_t)(n ? n : 1), (size_t)dtype_bytes(t))))
		return err_set(e, "dist: out of memory for %lld elements", (long long)n);
	return 0;
}

/* Element i of b set to v, rounded once to b's dtype. */
static inline void
dist_put(TBuf *b, int64_t i, double v)
{
	int n = dtype_bytes(b->dtype);

	if (dtype_is_float(b->dtype))
		dtype_store_f(b->dtype, (char *)b->data + i * n, v);
	else
		dtype_store_i(b->dtype, (char *)b->data + i * n, (int64_t)v);
}

/*
** The step being added (p->s[p->ns], complete but not counted yet): its
** accesses checked against the earlier steps' (every element written once,
** before it is read), its stream and the step it waits for set, and the
** tensors it writes given their producer. who names the call in errors.
*/
int dist_flow_admit(DistProgram *p, const char *who, Err *e);

/* Part s->part of s->parts of a redistribution whose s->r NCCL runs: checked
** (dist_part_check, before the step is added) and simulated. */
int dist_part_check(const DistProgram *p, const DistStep *s, Err *e);
int dist_part_sim(const DistProgram *p, const DistStep *s, DistState *st, Err *e);

#endif

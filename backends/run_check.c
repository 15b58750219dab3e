/* run_check.c - a run's inputs checked as kernel_run checks them, its outputs compared with the interpreter's (the C JIT, OpenCL, exports). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

double
backend_tolerance(DType t)
{
	switch (t) {
	case DT_FLOAT32: return 1e-4;
	case DT_FLOAT64: return 1e-9;
	case DT_FLOAT16: case DT_BFLOAT16: return 1e-2;
	default: return 0;
	}
}

double
emit_unit(DType t)
{
	return t == DT_FLOAT32 ? 0x1p-24 : t == DT_FLOAT64 ? 0x1p-53 : t == DT_FLOAT16 ? 0x1p-11
	       : t == DT_BFLOAT16 ? 0x1p-8 : 0;
}

void
emit_kinds(const Kernel *k, EKinds *kd)
{
	int i, j;

	memset(kd, 0, sizeof *kd);
	for (i = 0; i < k->nstage; i++) {
		PMap seen = { 0 };
		const UOp **st;
		size_t sp = 0, cap = 256;

		if (!(st = malloc(cap * sizeof *st)))
			return;
		st[sp++] = k->stage[i].body;
		while (sp) {
			const UOp *u = st[--sp];

			if (pmap_get(&seen, u) || pmap_put(&seen, u, (void *)1) < 0)
				continue;
			kd->mma |= u->op == OP_MMA;
			kd->approx |= u->op == OP_EXP2 || u->op == OP_LOG2 || u->op == OP_SIN || u->op == OP_POW;
			for (j = 0; j < u->nsrc; j++) {
				if (sp == cap) {
					const UOp **n = realloc(st, 2 * cap * sizeof *n);

					if (!n)
						break;
					st = n;
					cap *= 2;
				}
				st[sp++] = u->src[j];
			}
		}
		free(st);
		pmap_free(&seen);
	}
}

/* ---- checking a run's buffers and outputs, shared by the C JIT and OpenCL ---- */

int
emit_check_inputs(const Kernel *k, const TBuf *bufs, const char *who, Err *e)
{
	int i;

	if (!bufs && k->nbuf)
		return err_set(e, "%s: no buffer table", who);
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		int64_t n = emit_numel(kb);

		if (kb->role != KB_TEMP && kb->scope != AS_GLOBAL)
			return err_set(e, "%s: %s %s is in %s memory; inputs and outputs are global", who,
			               krole_name(kb->role), kb->name, kscope_name(kb->scope));
		if (kb->role != KB_INPUT)
			continue;
		if (!bufs[i].data)
			return err_set(e, "%s: no data for input %s", who, kb->name);
		if (bufs[i].dtype != kb->dtype || bufs[i].numel != n)
			return err_set(e, "%s: input %s: %lld elements of %s given, %lld of %s declared", who, kb->name,
			               (long long)bufs[i].numel, dtype_name(bufs[i].dtype), (long long)n,
			               dtype_name(kb->dtype));
	}
	return 0;
}

/* Whether two elements agree: the same bits, or two NaNs; within tol of
** max(|b|, 1) when tol is not 0, infinities of one sign alike. */
static int
same_element(DType t, const unsigned char *a, const unsigned char *b, int bytes, double tol)
{
	double x, y;

	if (memcmp(a, b, bytes) == 0)
		return 1;
	if (!dtype_is_float(t))
		return 0;
	x = dtype_load_f(t, a);
	y = dtype_load_f(t, b);
	if (isnan(x) || isnan(y))
		return isnan(x) && isnan(y);
	if (tol == 0 || isinf(x) || isinf(y))
		return x == y;
	return fabs(x - y) <= tol * fmax(fabs(y), 1);
}

int
emit_mismatch(const Kernel *k, const TBuf *got, const TBuf *want, int how, EMismatch *m)
{
	int i;

	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		int bytes = dtype_bytes(kb->dtype);
		int64_t j, n = emit_numel(kb);

		if (kb->role != KB_OUTPUT)
			continue;
		m->buf = i;
		m->n = n;
		m->bad = 0;
		m->first = -1;
		m->tol = how == EM_FAST ? backend_tolerance(kb->dtype) : how == EM_DEVICE ? 8 * emit_unit(kb->dtype) : 0;
		for (j = 0; j < n; j++)
			if (!same_element(kb->dtype, (const unsigned char *)got[i].data + j * bytes,
			                  (const unsigned char *)want[i].data + j * bytes, bytes, m->tol)) {
				if (m->first < 0)
					m->first = j;
				m->bad++;
			}
		if (m->bad) {
			int64_t c[T_MAXDIM], lin = m->first;
			int d;

			buf_init(&m->where);
			for (d = kb->ndim - 1; d >= 0; d--) {
				c[d] = lin % kb->shape[d];
				lin /= kb->shape[d];
			}
			emit(&m->where, "%s[", kb->name);
			for (d = 0; d < kb->ndim; d++)
				emit(&m->where, "%s%lld", d ? ", " : "", (long long)c[d]);
			emit(&m->where, "]");
			m->got = tbuf_get(&got[i], m->first);
			m->want = tbuf_get(&want[i], m->first);
			return 1;
		}
	}
	return 0;
}

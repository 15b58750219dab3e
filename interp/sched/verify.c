/* verify.c - a scheduled kernel against the reference on random inputs, with the first wrong element and the step that broke it. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/limits.h"
#include "sched.h"

/*
** The reference is the tensor graph's evaluator when the kernel was lowered
** from one (every output is then the graph's root), else the kernel as
** scheduling began, run by the interpreter. Inputs are matched by buffer name:
** a schedule may add buffers (caches) but keeps its inputs. Params get seeded
** random values; data inputs (tensor.from, tensor.rand) are realized as they
** are. A wrong element is traced back to the store that wrote it (the
** interpreter's watch) and to the first step whose kernel is wrong.
*/

typedef struct In {
	const char *name;
	TBuf t;
} In;

typedef struct Ref {
	In *in;
	int nin;
	TBuf *out;          /* per output of orig, by name */
	const char **oname;
	int nout;
} Ref;

static void
ref_free(Ref *r)
{
	int i;

	for (i = 0; i < r->nin; i++)
		tbuf_free(&r->in[i].t);
	for (i = 0; i < r->nout; i++)
		tbuf_free(&r->out[i]);
	free(r->in);
	free(r->out);
	free(r->oname);
	memset(r, 0, sizeof *r);
}

static int64_t
numel(const KBuf *b)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < b->ndim; i++)
		n *= b->shape[i];
	return n;
}

static int
tbuf_alloc(TBuf *t, const KBuf *b, Err *e)
{
	memset(t, 0, sizeof *t);
	t->dtype = b->dtype;
	t->ndim = b->ndim;
	memcpy(t->shape, b->shape, b->ndim * sizeof *b->shape);
	t->numel = numel(b);
	t->axis = -1;
	if (!(t->data = malloc((size_t)t->numel * dtype_bytes(b->dtype) + 1)))
		return err_set(e, "verify: out of memory");
	return 0;
}

/* Seeded values a kernel can be told apart by: floats in [-1, 1), small integers. Ctrl-C every 2^16. */
static int
fill_random(TBuf *t, uint64_t seed, int which, Err *e)
{
	int64_t i;
	int nb = dtype_bytes(t->dtype);

	for (i = 0; i < t->numel; i++) {
		uint64_t v = tensor_threefry((uint64_t)i, seed * 1000003u + (uint64_t)which);
		char *p = (char *)t->data + i * nb;

		if ((i & 0xffff) == 0xffff && limits_poll(e) < 0)
			return -1;

		if (dtype_is_float(t->dtype))
			dtype_store_f(t->dtype, p, (double)(v >> 11) / 4503599627370496.0 - 1.0);
		else if (t->dtype == DT_BOOL)
			dtype_store_i(t->dtype, p, (int64_t)(v & 1));
		else
			dtype_store_i(t->dtype, p, dtype_is_unsigned(t->dtype) ? (int64_t)(v % 8) : (int64_t)(v % 9) - 4);
	}
	return 0;
}

static int
tbuf_copy(TBuf *d, const TBuf *s, Err *e)
{
	size_t n = (size_t)s->numel * dtype_bytes(s->dtype);

	*d = *s;
	if (!(d->data = malloc(n + 1)))
		return err_set(e, "verify: out of memory");
	memcpy(d->data, s->data, n);
	return 0;
}

/* Run k on the inputs of r (copies); bufs gets k->nbuf entries. */
static int
run(const Kernel *k, const Ref *r, TBuf *bufs, const KRunOpts *o, Err *e)
{
	int i, j;

	memset(bufs, 0, k->nbuf * sizeof *bufs);
	for (i = 0; i < k->nbuf; i++) {
		if (k->buf[i].role != KB_INPUT)
			continue;
		for (j = 0; j < r->nin && strcmp(r->in[j].name, k->buf[i].name) != 0; j++)
			;
		if (j == r->nin)
			return err_set(e, "verify: the scheduled kernel has an input %s the original has not",
			               k->buf[i].name);
		if (tbuf_copy(&bufs[i], &r->in[j].t, e) < 0)
			return -1;
	}
	return kernel_run(k, o, bufs, NULL, e);
}

static void
free_bufs(TBuf *bufs, int n)
{
	int i;

	for (i = 0; bufs && i < n; i++)
		tbuf_free(&bufs[i]);
	free(bufs);
}

/* Inputs and reference outputs of one trial. */
static int
reference(Schedule *s, uint64_t seed, Ref *r, Err *e)
{
	const Kernel *k = s->orig;
	const UOp **params = NULL;
	UCtx *c = NULL;
	int i, np = 0, rc = -1;
	int64_t maxslot = -1;
	TBuf *bufs = NULL;

	memset(r, 0, sizeof *r);
	if (!(r->in = calloc(k->nbuf + 1, sizeof *r->in)) || !(r->out = calloc(k->nbuf + 1, sizeof *r->out))
	|| !(r->oname = calloc(k->nbuf + 1, sizeof *r->oname)))
		return err_set(e, "verify: out of memory");
	if (s->graph && !(c = uctx_new()))
		return err_set(e, "verify: out of memory");
	/* PARAM slots number every param of a session: a table as long as the largest here */
	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_INPUT && k->buf[i].tensor && k->buf[i].tensor->op == OP_PARAM
		&& k->buf[i].tensor->arg[0] > maxslot)
			maxslot = k->buf[i].tensor->arg[0];
	if (maxslot >= INT_MAX || !(params = calloc((size_t)maxslot + 2, sizeof *params))) {
		uctx_free(c);
		return err_set(e, "verify: out of memory");
	}
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *b = &k->buf[i];
		In *in = &r->in[r->nin];

		if (b->role == KB_OUTPUT)
			r->oname[r->nout++] = b->name;
		if (b->role != KB_INPUT)
			continue;
		in->name = b->name;
		r->nin++;
		if (b->tensor && b->tensor->op != OP_PARAM) {
			/* data: the same values on both sides */
			if (tensor_realize(b->tensor, NULL, &in->t, e) < 0)
				goto out;
			continue;
		}
		if (tbuf_alloc(&in->t, b, e) < 0 || fill_random(&in->t, seed, i, e) < 0)
			goto out;
		if (s->graph && b->tensor) {
			double *v = malloc((size_t)in->t.numel * sizeof *v + 1);
			int64_t j, slot = b->tensor->arg[0];

			if (!v)
				goto oom;
			for (j = 0; j < in->t.numel; j++)
				v[j] = tbuf_get(&in->t, j);
			if (slot < 0 || slot > maxslot) {
				free(v);
				err_set(e, "verify: param %s has slot %lld", b->name, (long long)slot);
				goto out;
			}
			params[slot] = tensor_from(c, b->dtype, v, b->shape, b->ndim, e);
			free(v);
			if (!params[slot])
				goto out;
			if (slot + 1 > np)
				np = (int)slot + 1;
		}
	}
	if (s->graph) {
		TEvalOpts o = { 0, params, np };

		if (r->nout != 1) {
			err_set(e, "verify: a kernel lowered from a graph has one output, this one %d", r->nout);
			goto out;
		}
		if (tensor_realize(s->graph, &o, &r->out[0], e) < 0)
			goto out;
	} else {
		KRunOpts o = { .checks = 1 };
		int j;

		if (!(bufs = calloc(k->nbuf + 1, sizeof *bufs)))
			goto oom;
		if (run(k, r, bufs, &o, e) < 0) {
			char m[sizeof e->msg];

			snprintf(m, sizeof m, "%s", e->msg);
			err_set(e, "verify: the original kernel fails: %s", m);
			goto out;
		}
		for (i = j = 0; i < k->nbuf; i++)
			if (k->buf[i].role == KB_OUTPUT) {
				r->out[j++] = bufs[i];
				memset(&bufs[i], 0, sizeof bufs[i]);
			}
	}
	rc = 0;
	goto out;
oom:
	err_set(e, "verify: out of memory");
out:
	free_bufs(bufs, k->nbuf);
	free(params);
	uctx_free(c);
	return rc;
}

static void
tolerance(DType t, const SVerifyOpts *o, double *rtol, double *atol)
{
	switch (t) {
	case DT_FLOAT16: *rtol = 1e-2; *atol = 1e-3; break;
	case DT_BFLOAT16: *rtol = 2e-2; *atol = 1e-2; break;
	case DT_FLOAT32: *rtol = 1e-4; *atol = 1e-5; break;
	case DT_FLOAT64: *rtol = 1e-9; *atol = 1e-12; break;
	default: *rtol = *atol = 0; break;
	}
	if (o && o->rtol > 0)
		*rtol = o->rtol;
	if (o && o->atol > 0)
		*atol = o->atol;
}

/* The first element where got and want differ, or -1; -2 on Ctrl-C (polled every 2^16). */
static int64_t
first_wrong(const TBuf *got, const TBuf *want, const SVerifyOpts *o, Err *e)
{
	double rtol, atol;
	int64_t i;

	tolerance(got->dtype, o, &rtol, &atol);
	for (i = 0; i < got->numel && i < want->numel; i++) {
		double g = tbuf_get(got, i), w = tbuf_get(want, i);

		if ((i & 0xffff) == 0xffff && limits_poll(e) < 0)
			return -2;

		if (isnan(g) && isnan(w))
			continue;
		if (!(fabs(g - w) <= atol + rtol * fabs(w)))
			return i;
	}
	return got->numel == want->numel ? -1 : i;
}

/* Whether kernel v gives the reference's outputs; *wrong the output and element if not. */
static int
agrees(const Kernel *v, const Ref *r, const SVerifyOpts *o, int *out, int64_t *at, double *got,
       double *want, Err *e)
{
	TBuf *bufs = calloc(v->nbuf + 1, sizeof *bufs);
	KRunOpts ro = { .checks = 1 };
	int i, j, ok = 1;

	if (!bufs)
		return err_set(e, "verify: out of memory");
	if (run(v, r, bufs, &ro, e) < 0) {
		free_bufs(bufs, v->nbuf);
		return -1;
	}
	for (j = 0; j < r->nout && ok; j++) {
		for (i = 0; i < v->nbuf && !(v->buf[i].role == KB_OUTPUT && strcmp(v->buf[i].name, r->oname[j]) == 0); i++)
			;
		if (i == v->nbuf) {
			free_bufs(bufs, v->nbuf);
			return err_set(e, "verify: the scheduled kernel lost the output %s", r->oname[j]);
		}
		if ((*at = first_wrong(&bufs[i], &r->out[j], o, e)) == -2) {
			free_bufs(bufs, v->nbuf);
			return -1;
		}
		if (*at >= 0) {
			ok = 0;
			*out = i;
			*got = *at < bufs[i].numel ? tbuf_get(&bufs[i], *at) : NAN;
			*want = *at < r->out[j].numel ? tbuf_get(&r->out[j], *at) : NAN;
		}
	}
	free_bufs(bufs, v->nbuf);
	return ok;
}

/* Where the last store to element `at` (row-major) of buffer b happened. */
static void
who_wrote(const Kernel *v, const Ref *r, int b, int64_t at, char *msg, size_t n)
{
	const KBuf *kb = &v->buf[b];
	UBind bind[T_MAXDIM];
	int64_t x = at, off;
	TBuf *bufs = calloc(v->nbuf + 1, sizeof *bufs);
	KRunOpts ro = { .checks = 1, .watch_buf = b + 1, .watch_msg = msg, .watch_len = n };
	Err e;
	int i;

	msg[0] = 0;
	for (i = kb->ndim - 1; i >= 0; i--) {
		bind[i].name = kb->lvar[i]->name;
		bind[i].value = x % kb->shape[i];
		x /= kb->shape[i];
	}
	if (!bufs || uop_eval(kb->layout, bind, kb->ndim, &off, &e) < 0) {
		free(bufs);
		return;
	}
	ro.watch_off = off;
	run(v, r, bufs, &ro, &e);
	free_bufs(bufs, v->nbuf);
}

static void
coords(const KBuf *b, int64_t at, char *out, size_t n)
{
	int64_t c[T_MAXDIM];
	size_t len = 0;
	int i;

	for (i = b->ndim - 1; i >= 0; i--) {
		c[i] = at % b->shape[i];
		at /= b->shape[i];
	}
	len += snprintf(out, n, "[");
	for (i = 0; i < b->ndim && len < n; i++)
		len += snprintf(out + len, n - len, "%s%lld", i ? ", " : "", (long long)c[i]);
	if (len < n)
		snprintf(out + len, n - len, "]");
}

int
sched_verify(Schedule *s, const SVerifyOpts *o, Buf *report, Err *e)
{
	int trials = o && o->trials > 0 ? o->trials : 3, t, ok = 1, out = 0, j;
	uint64_t seed = o ? o->seed : 0;
	Ref r;
	int64_t at = 0;
	double got = 0, want = 0;
	char where[300], crd[160], step[400] = "", what[120];
	int64_t per = 0, need;

	/* each trial compares every output element: trials x elements is what check_elems bounds */
	for (j = 0; j < s->orig->nbuf; j++)
		if (s->orig->buf[j].role == KB_OUTPUT)
			per += numel(&s->orig->buf[j]);
	need = per > 0 && trials > INT64_MAX / per ? INT64_MAX : trials * per;
	snprintf(what, sizeof what, "verify: %d trials of %lld output elements", trials, (long long)per);
	if (limits_check(LIMIT_CHECK_ELEMS, need, what, e) < 0)
		return -1;
	for (t = 0; t < trials && ok == 1; t++) {
		if (reference(s, seed + t, &r, e) < 0) {
			ref_free(&r);
			return -1;
		}
		ok = agrees(s->k, &r, o, &out, &at, &got, &want, e);
		if (report && ok >= 0)
			emit(report, "trial %d (seed %llu): %s\n", t, (unsigned long long)(seed + t),
			     ok ? "every output element agrees" : "differs");
		if (ok == 0) {
			who_wrote(s->k, &r, out, at, where, sizeof where);
			coords(&s->k->buf[out], at, crd, sizeof crd);
			/* the first step after which the kernel is wrong */
			for (j = 0; s->nstep > 0 && j <= s->nstep; j++) {
				const Kernel *v = j < s->nstep ? s->step[j].before : s->k;
				int o2;
				int64_t at2;
				double g2, w2;
				Err e2;

				if (limits_poll(e) < 0) {   /* Ctrl-C: no answer, not a wrong one */
					ref_free(&r);
					return -1;
				}
				if (agrees(v, &r, o, &o2, &at2, &g2, &w2, &e2) == 0) {
					if (j == 0)
						snprintf(step, sizeof step, "; the kernel was already wrong before the first step");
					else
						snprintf(step, sizeof step, "; it goes wrong at step %d: %s", j, s->step[j - 1].line);
					break;
				}
			}
		}
		ref_free(&r);
	}
	if (ok < 0)
		return -1;
	if (ok == 0)
		return err_set(e, "verify: %s%s is %.9g, the reference says %.9g (seed %llu)%s%s%s",
		               s->k->buf[out].name, crd, got, want, (unsigned long long)(seed + t - 1),
		               where[0] ? "; written by " : "; no store wrote it", where, step);
	return 0;
}

/* cache_write.c - cache_write: a stage writes a copy in another scope, copied back after it (TVM's cache_write). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/*
** The stage's one written buffer D is replaced in the stage (stores and the
** loads of its updates) by a new buffer <D>_<scope>, and a new stage of that
** name right after it copies the whole cache into D. D must be written by
** this stage only: elements another stage wrote would be lost in the copy
** back (decompose_reduction's init stage, say: cache before decomposing).
** As with cache_read, a shared or local cache lives for one launch: it is
** meant for reverse_compute_at to move the copy back into the stage.
*/
static int
cache_write(Kernel *k, int st, UAddrSpace as, char *name, size_t nname, Err *e)
{
	const char *sn = k->stage[st].name;
	UOp *sv[1024], *body, *old, *new;
	char base[2 * K_NAME];
	int64_t shape[T_MAXDIM];
	int n = sched_stores(k, st, sv, 1024), d, i, j, nb;
	KBuf *D;

	if (n == 0)
		return err_set(e, "stage %s stores nothing", sn);
	d = (int)sv[0]->src[0]->src[0]->arg[0];
	for (i = 1; i < n; i++)
		if (sv[i]->src[0]->src[0] != sv[0]->src[0]->src[0])
			return err_set(e, "stage %s writes %s and %s; cache_write caches a stage that writes "
			               "one buffer", sn, k->buf[d].name, sv[i]->src[0]->src[0]->name);
	D = &k->buf[d];
	if (D->role == KB_INPUT)
		return err_set(e, "stage %s writes %s, an input, in place; cache_write caches a computed "
		               "buffer", sn, D->name);
	for (j = 0; j < k->nstage; j++)
		if (j != st && sched_writes(k, k->stage[j].body, d))
			return err_set(e, "stage %s also writes %s; the copy back would lose what it wrote "
			               "(cache_write before decompose_reduction)", k->stage[j].name, D->name);
	snprintf(base, sizeof base, "%s_%s", D->name, kscope_name(as));
	kernel_fresh_name(k, base, name, nname);
	/* the shape is copied: adding a buffer may move the buffer array it lives in */
	memcpy(shape, D->shape, sizeof shape);
	if ((nb = kernel_add_buffer(k, name, D->dtype, as, KB_TEMP, shape, D->ndim, e)) < 0)
		return -1;
	old = k->buf[d].def;
	new = k->buf[nb].def;
	if (!(body = kernel_substitute(k->c, k->stage[st].body, &old, &new, 1)))
		return err_set(e, "out of memory");
	k->stage[st].body = body;
	if (!(body = sched_copy_nest(k, d, nb)))
		return err_set(e, "out of memory");
	return sched_insert_stage(k, st + 1, name, body, e) < 0 ? -1 : 0;
}

int
sched_cache_write(Schedule *s, const char *stage, const char *scope, Err *e)
{
	Kernel *next;
	UAddrSpace as;
	char name[K_NAME];
	Buf line;
	Err ie;
	int st, rc;

	if (!scope || kscope_parse(scope, &as) < 0)
		return err_set(e, "cache_write: unknown scope \"%s\" (global, shared, local)", scope ? scope : "");
	if ((st = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "cache_write: %s", ie.msg);
	if (!(next = sched_begin(s, e)))
		return -1;
	if (cache_write(next, st, as, name, sizeof name, &ie) < 0) {
		kernel_free(next);
		return err_set(e, "cache_write: %s", ie.msg);
	}
	buf_init(&line);
	emit(&line, "s:cache_write(");
	sched_quote(&line, stage);
	emit(&line, ", ");
	sched_quote(&line, scope);
	emit(&line, ")");
	rc = line.oom ? (kernel_free(next), err_set(e, "cache_write: out of memory"))
	   : sched_commit(s, next, "cache_write", line.s, e);
	buf_free(&line);
	return rc;
}

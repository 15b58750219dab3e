/* cache_read.c - cache_read: a stage reads a buffer through a copy in another scope (TVM's cache_read). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/*
** A new buffer <buffer>_<scope> of the buffer's dtype and shape (row-major)
** and a new stage of the same name, just before the stage, that copies the
** whole buffer into it; the stage's loads of the buffer read the copy (its
** DEFINE is swapped, so indices and gates stay as they were). Other stages
** keep reading the original. A stage is a launch, and shared and local
** buffers live for one launch: a shared or local copy is meant to be moved
** into the reader's stage by compute_at, and until then running the kernel
** reports the reads of the copy as uninitialized.
*/
static int
cache_read(Kernel *k, int st, int b, UAddrSpace as, char *name, size_t nname, Err *e)
{
	const char *sn = k->stage[st].name;
	KBuf *B = &k->buf[b];
	char base[2 * K_NAME];
	int64_t shape[T_MAXDIM];
	UOp *body, *old, *new;
	int nb;

	if (sched_writes(k, k->stage[st].body, b))
		return err_set(e, "stage %s writes %s; cache_read caches a buffer the stage only reads "
		               "(cache_write caches what it writes)", sn, B->name);
	if (!sched_reads(k, k->stage[st].body, b))
		return err_set(e, "stage %s does not read %s", sn, B->name);
	snprintf(base, sizeof base, "%s_%s", B->name, kscope_name(as));
	kernel_fresh_name(k, base, name, nname);
	/* the shape is copied: adding a buffer may move the buffer array it lives in */
	memcpy(shape, B->shape, sizeof shape);
	if ((nb = kernel_add_buffer(k, name, B->dtype, as, KB_TEMP, shape, B->ndim, e)) < 0)
		return -1;
	B = &k->buf[b];
	old = B->def;
	new = k->buf[nb].def;
	if (!(body = kernel_substitute(k->c, k->stage[st].body, &old, &new, 1)))
		return err_set(e, "out of memory");
	k->stage[st].body = body;
	if (!(body = sched_copy_nest(k, nb, b)))
		return err_set(e, "out of memory");
	return sched_insert_stage(k, st, name, body, e) < 0 ? -1 : 0;
}

int
sched_cache_read(Schedule *s, const char *stage, const char *buffer, const char *scope, Err *e)
{
	Kernel *next;
	UAddrSpace as;
	char name[K_NAME];
	Buf line;
	Err ie;
	int st, b, rc;

	if (!scope || kscope_parse(scope, &as) < 0)
		return err_set(e, "cache_read: unknown scope \"%s\" (global, shared, local)", scope ? scope : "");
	if ((st = sched_stage(s->k, stage, &ie)) < 0)
		return err_set(e, "cache_read: %s", ie.msg);
	if ((b = kernel_find_buffer(s->k, buffer)) < 0)
		return err_set(e, "cache_read: no buffer %s", buffer);
	if (!(next = sched_begin(s, e)))
		return -1;
	if (cache_read(next, st, b, as, name, sizeof name, &ie) < 0) {
		kernel_free(next);
		return err_set(e, "cache_read: %s", ie.msg);
	}
	buf_init(&line);
	emit(&line, "s:cache_read(");
	sched_quote(&line, stage);
	emit(&line, ", ");
	sched_quote(&line, buffer);
	emit(&line, ", ");
	sched_quote(&line, scope);
	emit(&line, ")");
	rc = line.oom ? (kernel_free(next), err_set(e, "cache_read: out of memory"))
	   : sched_commit(s, next, "cache_read", line.s, e);
	buf_free(&line);
	return rc;
}

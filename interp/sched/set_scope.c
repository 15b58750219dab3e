/* set_scope.c - set_scope: a temporary buffer moves to another scope (TVM's set_scope). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/*
** The scope lives in the buffer's DEFINE, so the buffer gets a new one and
** every access in every stage is rebuilt on it. Inputs and outputs are the
** caller's global memory and keep it. Whether the new scope works is the
** verifier's and the interpreter's to say: a shared buffer lives for one
** launch (one stage) and one block, a local one for one thread.
*/
static int
set_scope(Kernel *k, int b, UAddrSpace as, Err *e)
{
	KBuf *B = &k->buf[b];
	UOp *old = B->def, *new;

	if (B->role != KB_TEMP)
		return err_set(e, "%s is an %s; only temporaries change scope", B->name, krole_name(B->role));
	if (!(new = uop_new(k->c, OP_DEFINE, B->dtype, NULL, 0, b, as, B->name, NULL, 0)))
		return err_set(e, "out of memory");
	if (sched_rewrite_all(k, &old, &new, 1, e) < 0)
		return -1;
	B = &k->buf[b];
	B->def = new;
	B->scope = as;
	return 0;
}

int
sched_set_scope(Schedule *s, const char *buffer, const char *scope, Err *e)
{
	Kernel *next;
	UAddrSpace as;
	Buf line;
	Err ie;
	int b, rc;

	if (!scope || kscope_parse(scope, &as) < 0)
		return err_set(e, "set_scope: unknown scope \"%s\" (global, shared, local)", scope ? scope : "");
	if ((b = kernel_find_buffer(s->k, buffer)) < 0)
		return err_set(e, "set_scope: no buffer %s", buffer);
	if (!(next = sched_begin(s, e)))
		return -1;
	if (set_scope(next, b, as, &ie) < 0) {
		kernel_free(next);
		return err_set(e, "set_scope: %s", ie.msg);
	}
	buf_init(&line);
	emit(&line, "s:set_scope(");
	sched_quote(&line, buffer);
	emit(&line, ", ");
	sched_quote(&line, scope);
	emit(&line, ")");
	rc = line.oom ? (kernel_free(next), err_set(e, "set_scope: out of memory"))
	   : sched_commit(s, next, "set_scope", line.s, e);
	buf_free(&line);
	return rc;
}

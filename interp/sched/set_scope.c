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
/* whether u mentions v */
static int
mentions(const UOp *u, const UOp *v)
{
	const UOp *vs[64];
	int n = uop_vars(u, vs, 64), i;

	for (i = 0; i < n && i < 64; i++)
		if (vs[i] == v)
			return 1;
	return n > 64;
}

/*
** A store to def under s, inside the bound loops around[0..n-1], whose index
** does not use one of them that now shares the buffer (a block loop for global
** memory, a thread loop for shared or global): every instance of that loop
** writes the same elements. That loop, or NULL.
*/
static const UOp *
alike(const UOp *s, const UOp *def, UAddrSpace was, UAddrSpace as, const UOp **around, int n, int depth)
{
	const UOp *r;
	int i, d;

	if (depth > 1000)
		return NULL;
	if (s->op == OP_STORE && s->src[0]->src[0] == def) {
		for (i = 0; i < n; i++) {
			int hw = krange_hw(around[i]), found = 0;
			int shares = as == AS_GLOBAL || (as == AS_LOCAL && hwaxis_is_thread(hw));
			int shared = was == AS_GLOBAL || (was == AS_LOCAL && hwaxis_is_thread(hw));

			if (!shares || shared || krange_extent(around[i]) < 2)
				continue;
			for (d = 1; d < s->src[0]->nsrc && !found; d++)
				found = mentions(s->src[0]->src[d], krange_var(around[i]));
			if (!found)
				return around[i];
		}
		return NULL;
	}
	if (s->op != OP_END && s->op != OP_IF)
		return NULL;
	if (s->op == OP_END && krange_hw(s->src[0]) != HW_NONE && n < 64)
		around[n++] = s->src[0];
	for (i = 1; i < s->nsrc; i++)
		if ((r = alike(s->src[i], def, was, as, around, n, depth + 1)))
			return r;
	return NULL;
}

static int
set_scope(Kernel *k, int b, UAddrSpace as, Err *e)
{
	KBuf *B = &k->buf[b];
	UOp *old = B->def, *new;

	if (B->role != KB_TEMP)
		return err_set(e, "%s is an %s; only temporaries change scope", B->name, krole_name(B->role));
	/* memory more instances share: what each block or thread wrote alike now collides */
	{
		const UOp *around[64], *r;
		int st;

		for (st = 0; st < k->nstage; st++)
			if ((r = alike(k->stage[st].body, B->def, B->scope, as, around, 0, 0)))
				return err_set(e, "stage %s: every %s of loop %s (bound to %s) writes the same "
				               "elements of %s, its own copy in %s memory; in %s memory they would "
				               "collide", k->stage[st].name, hwaxis_is_block(krange_hw(r)) ? "block" : "thread",
				               krange_var(r)->name, hwaxis_name(krange_hw(r)), B->name,
				               kscope_name(B->scope), kscope_name(as));
	}
	if (!(new = uop_new(k->c, OP_DEFINE, B->dtype, NULL, 0, b, as, B->name, NULL, 0)))
		return err_set(e, "out of memory");
	if (sched_rewrite_all(k, &old, &new, 1, e) < 0)
		return -1;
	B = &k->buf[b];
	B->def = new;
	B->scope = as;
	/* registers and shared memory hold what one thread or block uses: the
	** region under the innermost loop around every access */
	return as == AS_GLOBAL ? 0 : sched_compact(k, b, e) < 0 ? -1 : 0;
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

/* set_layout.c - a buffer takes another layout (CuTe, swizzled, LEGO or Axe); accesses stay logical, so only the offsets change. */
#include <stdio.h>
#include <string.h>

#include "../../layout/layout.h"
#include "sched.h"

/*
** Accesses name elements by logical coordinates and the layout maps them to
** storage, so a new layout rewrites every access at once: the interpreter,
** the counts and (later) the emitters compute offsets through it. Inputs and
** outputs keep their logical values; only where they sit changes.
*/
int
sched_set_layout(Schedule *s, const char *buffer, const SLayout *l, Err *e)
{
	Kernel *n;
	int b, rc;
	char line[400];
	Err le;

	if ((b = kernel_find_buffer(s->k, buffer)) < 0)
		return err_set(e, "set_layout: the kernel has no buffer %s", buffer);
	if (!(n = sched_begin(s, e)))
		return -1;
	if (l->lego)
		rc = kernel_layout_lego(n, b, l->lego, &le);
	else if (l->axe)
		rc = kernel_layout_axe(n, b, l->axe, &le);
	else if (l->cute || l->swz)
		rc = kernel_layout_cute(n, b, l->cute, l->swz, &le);
	else
		rc = err_set(&le, "set_layout: no layout");
	if (rc < 0) {
		kernel_free(n);
		return err_set(e, "%s", le.msg);
	}
	/* the replay: the notation pastes back (LEGO prints its constructor) */
	if (l->lego)
		snprintf(line, sizeof line, "s:set_layout(\"%s\", %s)", buffer, n->buf[b].layout_desc);
	else if (l->axe)
		snprintf(line, sizeof line, "s:set_layout(\"%s\", axe.layout(\"%s\"))", buffer, n->buf[b].layout_desc);
	else
		snprintf(line, sizeof line, "s:set_layout(\"%s\", \"%s\")", buffer, n->buf[b].layout_desc);
	return sched_commit(s, n, "set_layout", line, e);
}

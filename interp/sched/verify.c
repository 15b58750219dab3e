/* verify.c - a scheduled kernel against the reference on random inputs (placeholder until it lands). */
#include "sched.h"

int
sched_verify(Schedule *s, const SVerifyOpts *o, Buf *report, Err *e)
{
	(void)s; (void)o; (void)report;
	return err_set(e, "verify: not built yet");
}

/* kernel_run.c - the kernel interpreter (placeholder until it lands). */
#include "kernel.h"

int
kernel_run(const Kernel *k, const KRunOpts *o, TBuf *bufs, KCounts *counts, Err *e)
{
	(void)k; (void)o; (void)bufs; (void)counts;
	return err_set(e, "kernel.run: not built yet");
}

int
kernel_inputs(const Kernel *k, const TEvalOpts *o, TBuf *bufs, Err *e)
{
	(void)k; (void)o; (void)bufs;
	return err_set(e, "kernel.run: not built yet");
}

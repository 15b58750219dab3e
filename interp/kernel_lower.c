/* kernel_lower.c - tensor graphs to kernels (placeholder until the lowering lands). */
#include "kernel.h"

Kernel *
kernel_lower(const UOp *root, const KLowerOpts *o, Err *e)
{
	(void)root;
	(void)o;
	return err_set(e, "kernel.lower: not built yet"), NULL;
}

/* source.c - the public entry points: a kernel's source in a dialect, each dialect's walk chosen here, above them all. */
#include <string.h>

#include "gpu.h"

int
backend_source(Buf *b, const Kernel *k, Dialect d, Err *e)
{
	return backend_source_opts(b, k, d, NULL, e);
}

int
backend_source_opts(Buf *b, const Kernel *k, Dialect d, const BSourceOpts *o, Err *e)
{
	EmitInfo info;

	memset(&info, 0, sizeof info);
	info.fast = o && o->fast;
	switch (d) {
	case D_C:
		return emit_kernel(b, k, &emit_c, &info, e);
	case D_CUDA: case D_OPENCL:
		return gpu_source(b, k, d, info.fast, NULL, e);
	case D_TRITON:
		return triton_source_opts(b, k, o, e);
	default:
		return err_set(e, "source: %s is not a device dialect (c, cuda, opencl, triton)",
		               dialect_name(d));
	}
}

/* CUDA or OpenCL: the walk keeps its GPU state (gpu.h) in Emit.aux; the
** launches go to the caller (the harness, OpenCL runs). */
int
gpu_source(Buf *b, const Kernel *k, Dialect d, int fast, GpuLaunches *l, Err *e)
{
	GpuState G;
	EmitInfo info;
	int rc;

	memset(&G, 0, sizeof G);
	memset(&info, 0, sizeof info);
	info.aux = &G;
	info.fast = fast;
	rc = emit_kernel(b, k, d == D_CUDA ? &emit_cuda : &emit_opencl, &info, e);
	pmap_free(&G.tail);
	pmap_free(&G.sync);
	if (rc == 0 && l) {
		*l = G.launches;
		memset(&G.launches, 0, sizeof G.launches);
	}
	gpu_launches_free(&G.launches);
	return rc;
}

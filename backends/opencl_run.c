/* opencl_run.c - k:run through OpenCL: the emitted OpenCL C built and run by the ICD loader (dlopen: tessel builds and runs without it), checked against the interpreter. */
#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"

/*
** The OpenCL API as far as tessel calls it, declared here so that building
** tessel needs no OpenCL headers: the handles are opaque pointers and the
** constants are the Khronos ABI's (CL/cl.h). The loader, libOpenCL.so.1
** (ocl-icd), is opened when a session first runs a kernel; it finds the
** platforms (PoCL on the CPU here: pocl-opencl-icd) through
** /etc/OpenCL/vendors.
*/
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_ulong cl_bitfield;
typedef struct ClOpaque *cl_handle;
typedef cl_handle cl_platform_id, cl_device_id, cl_context, cl_command_queue, cl_program, cl_kernel, cl_mem;

enum {
	CL_SUCCESS = 0, CL_PLATFORM_NOT_FOUND_KHR = -1001,
	CL_TRUE = 1, CL_PLATFORM_NAME = 0x0902, CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004,
	CL_DEVICE_MAX_WORK_ITEM_SIZES = 0x1005, CL_DEVICE_SINGLE_FP_CONFIG = 0x101B,
	CL_DEVICE_LOCAL_MEM_SIZE = 0x1023, CL_DEVICE_NAME = 0x102B, CL_DEVICE_EXTENSIONS = 0x1030,
	CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT = 1 << 7, CL_MEM_READ_WRITE = 1 << 0,
	CL_PROGRAM_BUILD_LOG = 0x1183
};
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFFull

#define CL_FUNCS(X) \
	X(cl_int, clGetPlatformIDs, (cl_uint, cl_platform_id *, cl_uint *)) \
	X(cl_int, clGetPlatformInfo, (cl_platform_id, cl_uint, size_t, void *, size_t *)) \
	X(cl_int, clGetDeviceIDs, (cl_platform_id, cl_bitfield, cl_uint, cl_device_id *, cl_uint *)) \
	X(cl_int, clGetDeviceInfo, (cl_device_id, cl_uint, size_t, void *, size_t *)) \
	X(cl_context, clCreateContext, (const intptr_t *, cl_uint, const cl_device_id *, \
	  void (*)(const char *, const void *, size_t, void *), void *, cl_int *)) \
	X(cl_command_queue, clCreateCommandQueue, (cl_context, cl_device_id, cl_bitfield, cl_int *)) \
	X(cl_program, clCreateProgramWithSource, (cl_context, cl_uint, const char **, const size_t *, cl_int *)) \
	X(cl_int, clBuildProgram, (cl_program, cl_uint, const cl_device_id *, const char *, \
	  void (*)(cl_program, void *), void *)) \
	X(cl_int, clGetProgramBuildInfo, (cl_program, cl_device_id, cl_uint, size_t, void *, size_t *)) \
	X(cl_kernel, clCreateKernel, (cl_program, const char *, cl_int *)) \
	X(cl_int, clSetKernelArg, (cl_kernel, cl_uint, size_t, const void *)) \
	X(cl_mem, clCreateBuffer, (cl_context, cl_bitfield, size_t, void *, cl_int *)) \
	X(cl_int, clEnqueueWriteBuffer, (cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void *, \
	  cl_uint, const void *, void *)) \
	X(cl_int, clEnqueueReadBuffer, (cl_command_queue, cl_mem, cl_uint, size_t, size_t, void *, cl_uint, \
	  const void *, void *)) \
	X(cl_int, clEnqueueNDRangeKernel, (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, \
	  const size_t *, cl_uint, const void *, void *)) \
	X(cl_int, clFinish, (cl_command_queue)) \
	X(cl_int, clReleaseMemObject, (cl_mem)) \
	X(cl_int, clReleaseKernel, (cl_kernel)) \
	X(cl_int, clReleaseProgram, (cl_program)) \
	X(cl_int, clReleaseCommandQueue, (cl_command_queue)) \
	X(cl_int, clReleaseContext, (cl_context))

struct BClSession {
	void *dl;
#define FIELD(ret, name, args) ret (*name) args;
	CL_FUNCS(FIELD)
#undef FIELD
	cl_platform_id platform;
	cl_device_id device;
	cl_context ctx;
	cl_command_queue q;
	char name[256];          /* "platform: device" */
	int exact_div;           /* CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT */
	int fp64;
	size_t max_group, max_items[3];
	cl_ulong local_mem;
	char why[320];           /* why the session could not open ("" when it did or has not tried) */
	int opened;
};

BClSession *
backend_cl_new(void)
{
	return calloc(1, sizeof(BClSession));
}

void
backend_cl_free(BClSession *s)
{
	if (!s)
		return;
	if (s->q)
		s->clReleaseCommandQueue(s->q);
	if (s->ctx)
		s->clReleaseContext(s->ctx);
	/* the loader stays loaded (no dlclose): ICD loaders keep their platform list until the
	** process ends, and implementations such as PoCL keep worker threads */
	free(s);
}

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Open the loader, the first platform that has a device, a context and a queue; 0 or -1 with s->why. */
static int
session_open(BClSession *s)
{
	cl_platform_id plats[16];
	cl_uint np = 0, nd = 0, i;
	cl_int rc;
	cl_bitfield fp = 0;
	char pname[128] = "", ext[4096] = "";
	static const char *const libs[] = { "libOpenCL.so.1", "libOpenCL.so" };
	size_t j;

	if (s->opened)
		return s->why[0] ? -1 : 0;
	s->opened = 1;
	for (j = 0; j < sizeof libs / sizeof libs[0] && !s->dl; j++)
		s->dl = dlopen(libs[j], RTLD_NOW | RTLD_LOCAL);
	if (!s->dl) {
		snprintf(s->why, sizeof s->why, "opencl: no OpenCL loader (libOpenCL.so.1) on this machine: install "
		         "ocl-icd-libopencl1 and an implementation, such as pocl-opencl-icd for the CPU (make deps)");
		return -1;
	}
#define LOAD(ret, name, args) \
	if (!(*(void **)&s->name = dlsym(s->dl, #name))) { \
		snprintf(s->why, sizeof s->why, "opencl: the OpenCL loader has no %s", #name); \
		return -1; \
	}
	CL_FUNCS(LOAD)
#undef LOAD
	rc = s->clGetPlatformIDs(16, plats, &np);
	if (rc == CL_PLATFORM_NOT_FOUND_KHR || (rc == CL_SUCCESS && np == 0)) {
		snprintf(s->why, sizeof s->why, "opencl: no OpenCL platform: the loader found no implementation in "
		         "/etc/OpenCL/vendors (install pocl-opencl-icd for the CPU, or a GPU driver's ICD)");
		return -1;
	}
	if (rc != CL_SUCCESS) {
		snprintf(s->why, sizeof s->why, "opencl: clGetPlatformIDs failed (%d)", rc);
		return -1;
	}
	for (i = 0; i < np && i < 16; i++)
		if (s->clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, &s->device, &nd) == CL_SUCCESS && nd > 0) {
			s->platform = plats[i];
			break;
		}
	if (!s->platform) {
		snprintf(s->why, sizeof s->why, "opencl: %u OpenCL platform%s, none with a device", np, np == 1 ? "" : "s");
		return -1;
	}
	s->clGetPlatformInfo(s->platform, CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
	snprintf(s->name, sizeof s->name, "%s: ", pname);
	s->clGetDeviceInfo(s->device, CL_DEVICE_NAME, sizeof s->name - strlen(s->name) - 1, s->name + strlen(s->name),
	                   NULL);
	s->clGetDeviceInfo(s->device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL);
	s->exact_div = (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
	s->clGetDeviceInfo(s->device, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
	s->fp64 = strstr(ext, "cl_khr_fp64") != NULL;
	s->clGetDeviceInfo(s->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof s->max_group, &s->max_group, NULL);
	s->clGetDeviceInfo(s->device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof s->max_items, s->max_items, NULL);
	s->clGetDeviceInfo(s->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof s->local_mem, &s->local_mem, NULL);
	if (!(s->ctx = s->clCreateContext(NULL, 1, &s->device, NULL, NULL, &rc)) || rc != CL_SUCCESS) {
		snprintf(s->why, sizeof s->why, "opencl: %s: clCreateContext failed (%d)", s->name, rc);
		return -1;
	}
	if (!(s->q = s->clCreateCommandQueue(s->ctx, s->device, 0, &rc)) || rc != CL_SUCCESS) {
		snprintf(s->why, sizeof s->why, "opencl: %s: clCreateCommandQueue failed (%d)", s->name, rc);
		return -1;
	}
	return 0;
}

int
backend_cl_available(BClSession *s, char *device, size_t n, Err *e)
{
	if (session_open(s) < 0)
		return err_set(e, "%s", s->why);
	if (device)
		snprintf(device, n, "%s", s->name);
	return 0;
}

/* ---- layouts: logical element i of buffer b is at offset off[i] of its storage ---- */

static int
offsets(const KBuf *kb, int64_t **out, Err *e)
{
	int64_t n = emit_numel(kb), i, *off;
	UBind bind[T_MAXDIM];
	UProg *p;
	int j;

	*out = NULL;
	for (j = 0; j < kb->ndim; j++) {
		bind[j].name = kb->lvar[j]->name;
		bind[j].value = 0;
	}
	if (!(p = uop_prog_new((const UOp *const *)&kb->layout, 1, bind, kb->ndim, e)))
		return -1;
	if (!(off = malloc((n ? n : 1) * sizeof *off))) {
		uop_prog_free(p);
		return err_set(e, "opencl: out of memory");
	}
	for (i = 0; i < n; i++) {
		int64_t x = i;

		for (j = kb->ndim - 1; j >= 0; j--) {
			bind[j].value = x % kb->shape[j];
			x /= kb->shape[j];
		}
		if (uop_prog_run(p, bind, &off[i], e) < 0) {
			uop_prog_free(p);
			free(off);
			return -1;
		}
	}
	uop_prog_free(p);
	*out = off;
	return 0;
}

/* ---- comparison ---- */

/*
** The outputs against the interpreter's: the first disagreement is the
** error. Bit for bit, except in a kernel that calls exp2, log2, sin or pow:
** the device's double functions are within a few units in the last place of
** the C library's, not the same (PoCL's exp2 of a float64 differs in the last
** bit now and then), so those outputs agree within 8 units of their rounding
** error, as the exported harness allows (harness.c).
*/
static int
compare(const Kernel *k, const TBuf *got, const TBuf *want, Err *e)
{
	EMismatch m;
	EKinds kd;

	emit_kinds(k, &kd);
	if (!emit_mismatch(k, got, want, kd.approx ? EM_DEVICE : EM_EXACT, &m))
		return 0;
	err_set(e, "opencl: the kernel disagrees with the interpreter at %lld of %lld elements of %s; first %s: "
	        "opencl %.17g, interpreter %.17g (%s; {compare = false} skips this check)", (long long)m.bad,
	        (long long)m.n, k->buf[m.buf].name, m.where.s ? m.where.s : "?", m.got, m.want,
	        m.tol ? "beyond 8 units of its rounding error, which the device's exp2, log2, sin and pow may take"
	        : "bit for bit: the kernel calls no exp2, log2, sin or pow");
	buf_free(&m.where);
	return -1;
}

/* ---- running ---- */

static const char *
first_error(const char *log, char *out, size_t n)
{
	const char *at, *nl;

	for (at = log; at && *at; at = nl ? nl + 1 : NULL) {
		nl = strchr(at, '\n');
		if (strstr(at, "error") && (!nl || strstr(at, "error") < nl))
			break;
	}
	if (!at || !*at)
		at = log;
	nl = strchr(at, '\n');
	snprintf(out, n, "%.*s", nl ? (int)(nl - at) : (int)strlen(at), at);
	return out;
}

/* Checks of the launches against the device's limits. */
static int
fits(const BClSession *s, const GpuLaunches *L, Err *e)
{
	int i;

	for (i = 0; i < L->n; i++) {
		const GpuLaunch *l = &L->l[i];
		int64_t nthr = l->block[0] * l->block[1] * l->block[2];

		if ((uint64_t)nthr > s->max_group || (uint64_t)l->block[0] > s->max_items[0]
		|| (uint64_t)l->block[1] > s->max_items[1] || (uint64_t)l->block[2] > s->max_items[2])
			return err_set(e, "opencl: stage %s: a work-group of (%lld, %lld, %lld); %s takes at most %zu "
			               "work-items, (%zu, %zu, %zu) along each dimension", l->name, (long long)l->block[0],
			               (long long)l->block[1], (long long)l->block[2], s->name, s->max_group,
			               s->max_items[0], s->max_items[1], s->max_items[2]);
		if ((cl_ulong)l->shared_bytes > s->local_mem)
			return err_set(e, "opencl: stage %s: %lld bytes of local memory; %s has %llu", l->name,
			               (long long)l->shared_bytes, s->name, (unsigned long long)s->local_mem);
	}
	return 0;
}

static int
build(BClSession *s, const Buf *src, cl_program *prog, Err *e)
{
	const char *text = src->s ? src->s : "";
	size_t len = src->len;
	char log[16384] = "", first[400];
	cl_int rc;
	int saved, nul;

	if (!s->fp64 && strstr(text, "double"))
		return err_set(e, "opencl: %s has no float64 (cl_khr_fp64), which the kernel computes in where the "
		               "interpreter does", s->name);
	if (!(*prog = s->clCreateProgramWithSource(s->ctx, 1, &text, &len, &rc)) || rc != CL_SUCCESS)
		return err_set(e, "opencl: clCreateProgramWithSource failed (%d)", rc);
	/*
	** OpenCL's float / and sqrt may be off by 2.5 and 3 ulp unless asked. PoCL's
	** compiler prints its diagnostics to the process's stderr ("1 error
	** generated."), before the build log this function turns into the error:
	** stderr goes to /dev/null for the build.
	*/
	fflush(stderr);
	saved = dup(2);
	nul = open("/dev/null", O_WRONLY);
	if (saved >= 0 && nul >= 0)
		dup2(nul, 2);
	rc = s->clBuildProgram(*prog, 1, &s->device, s->exact_div ? "-cl-fp32-correctly-rounded-divide-sqrt" : "",
	                       NULL, NULL);
	if (saved >= 0 && nul >= 0) {
		fflush(stderr);
		dup2(saved, 2);
	}
	if (saved >= 0)
		close(saved);
	if (nul >= 0)
		close(nul);
	if (rc != CL_SUCCESS) {
		s->clGetProgramBuildInfo(*prog, s->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
		return err_set(e, "opencl: %s could not build the kernel (%d): %s", s->name, rc,
		               first_error(log, first, sizeof first));
	}
	return 0;
}

/* Buffer b's storage on the host: zeros, and an input's elements placed through its layout. */
static unsigned char *
storage(const KBuf *kb, const TBuf *in, size_t *total, Err *e)
{
	size_t bytes = (size_t)dtype_bytes(kb->dtype);
	int64_t n = emit_numel(kb), x, *off;
	unsigned char *host;

	*total = (size_t)(kb->size ? kb->size : 1) * bytes;
	if (!(host = calloc(*total, 1))) {
		err_set(e, "opencl: out of memory (%zu bytes for %s)", *total, kb->name);
		return NULL;
	}
	if (kb->role != KB_INPUT)
		return host;
	if (gpu_row_major(kb)) {
		memcpy(host, in->data, (size_t)n * bytes);
		return host;
	}
	if (offsets(kb, &off, e) < 0) {
		free(host);
		return NULL;
	}
	for (x = 0; x < n; x++)
		memcpy(host + off[x] * bytes, (const unsigned char *)in->data + x * bytes, bytes);
	free(off);
	return host;
}

/* Output b from its storage into row-major logical order in out. */
static int
take(const KBuf *kb, const unsigned char *host, TBuf *out, Err *e)
{
	size_t bytes = (size_t)dtype_bytes(kb->dtype);
	int64_t n = emit_numel(kb), x, *off;

	if (!(out->data = malloc(n ? (size_t)n * bytes : 1)))
		return err_set(e, "opencl: out of memory for output %s", kb->name);
	out->dtype = kb->dtype;
	out->ndim = kb->ndim;
	memcpy(out->shape, kb->shape, sizeof kb->shape);
	out->axis = -1;
	out->numel = n;
	if (gpu_row_major(kb)) {
		memcpy(out->data, host, (size_t)n * bytes);
		return 0;
	}
	if (offsets(kb, &off, e) < 0)
		return -1;
	for (x = 0; x < n; x++)
		memcpy((unsigned char *)out->data + x * bytes, host + off[x] * bytes, bytes);
	free(off);
	return 0;
}

static int
launch(BClSession *s, cl_program prog, const GpuLaunch *l, cl_mem *mem, Err *e)
{
	size_t global[3], local[3];
	cl_kernel kn;
	cl_int rc;
	int j;

	if (!(kn = s->clCreateKernel(prog, l->name, &rc)) || rc != CL_SUCCESS)
		return err_set(e, "opencl: no kernel %s in the program (%d)", l->name, rc);
	for (j = 0; j < l->narg && rc == CL_SUCCESS; j++)
		rc = s->clSetKernelArg(kn, (cl_uint)j, sizeof(cl_mem), &mem[l->arg[j]]);
	for (j = 0; j < 3; j++) {
		local[j] = (size_t)l->block[j];
		global[j] = (size_t)(l->grid[j] * l->block[j]);
	}
	if (rc == CL_SUCCESS)
		rc = s->clEnqueueNDRangeKernel(s->q, kn, 3, NULL, global, local, 0, NULL, NULL);
	s->clReleaseKernel(kn);
	if (rc != CL_SUCCESS)
		return err_set(e, "opencl: launching %s failed (%d)", l->name, rc);
	return 0;
}

int
backend_cl_run(const Kernel *k, TBuf *bufs, const BClOpts *o, Err *e)
{
	BClOpts dflt;
	BClSession *tmp = NULL, *s = NULL;
	GpuLaunches L = { 0 };
	Buf src;
	cl_program prog = NULL;
	cl_mem *mem = NULL;
	TBuf *ref = NULL, *outs = NULL;
	unsigned char *host = NULL;
	size_t total;
	cl_int rc;
	double t0;
	int i, j, rv = -1;

	memset(&dflt, 0, sizeof dflt);
	if (!o)
		o = &dflt;
	e->msg[0] = 0;
	if (o->stats)
		memset(o->stats, 0, sizeof *o->stats);
	if (!k)
		return err_set(e, "opencl: no kernel");
	/* the caller's inputs, as kernel_run checks them, before anything is allocated */
	if (emit_check_inputs(k, bufs, "opencl", e) < 0)
		return -1;
	t0 = now();
	buf_init(&src);
	if (gpu_source(&src, k, D_OPENCL, 0, &L, e) < 0)
		goto out;
	if (!(s = o->session) && !(s = tmp = backend_cl_new())) {
		err_set(e, "opencl: out of memory");
		goto out;
	}
	if (session_open(s) < 0) {
		err_set(e, "%s", s->why);
		goto out;
	}
	if (o->stats)
		snprintf(o->stats->device, sizeof o->stats->device, "%s", s->name);
	if (fits(s, &L, e) < 0 || build(s, &src, &prog, e) < 0)
		goto out;
	if (o->stats)
		o->stats->build_s = now() - t0;
	/* the interpreter first: its checks stop a race or a bad access before the device runs */
	if (!o->no_check) {
		KRunOpts io = { .checks = 1 };

		if (!(ref = calloc(k->nbuf ? k->nbuf : 1, sizeof *ref))) {
			err_set(e, "opencl: out of memory");
			goto out;
		}
		for (i = 0; i < k->nbuf; i++)
			if (k->buf[i].role == KB_INPUT)
				ref[i] = bufs[i];   /* shared, not owned: kernel_run only reads inputs */
		t0 = now();
		if (kernel_run(k, o->interp ? o->interp : &io, ref, NULL, e) < 0) {
			for (i = 0; i < k->nbuf; i++)
				memset(&ref[i], 0, sizeof ref[i]);
			goto out;
		}
		if (o->stats)
			o->stats->check_s = now() - t0;
	}
	if (!(mem = calloc(k->nbuf ? k->nbuf : 1, sizeof *mem)) || !(outs = calloc(k->nbuf ? k->nbuf : 1, sizeof *outs))) {
		err_set(e, "opencl: out of memory");
		goto out;
	}
	/* global buffers zeroed, as the interpreter's */
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];

		if (kb->scope != AS_GLOBAL)
			continue;
		if (!(host = storage(kb, &bufs[i], &total, e)))
			goto out;
		if (!(mem[i] = s->clCreateBuffer(s->ctx, CL_MEM_READ_WRITE, total, NULL, &rc)) || rc != CL_SUCCESS
		|| (rc = s->clEnqueueWriteBuffer(s->q, mem[i], CL_TRUE, 0, total, host, 0, NULL, NULL)) != CL_SUCCESS) {
			err_set(e, "opencl: %s: a buffer of %zu bytes for %s failed (%d)", s->name, total, kb->name, rc);
			goto out;
		}
		free(host);
		host = NULL;
	}
	t0 = now();
	for (i = 0; i < L.n; i++)
		if (launch(s, prog, &L.l[i], mem, e) < 0)
			goto out;
	if ((rc = s->clFinish(s->q)) != CL_SUCCESS) {
		err_set(e, "opencl: the kernel failed on %s (%d)", s->name, rc);
		goto out;
	}
	if (o->stats)
		o->stats->run_s = now() - t0;
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];

		if (kb->role != KB_OUTPUT)
			continue;
		total = (size_t)(kb->size ? kb->size : 1) * (size_t)dtype_bytes(kb->dtype);
		if (!(host = malloc(total))) {
			err_set(e, "opencl: out of memory for output %s", kb->name);
			goto out;
		}
		if ((rc = s->clEnqueueReadBuffer(s->q, mem[i], CL_TRUE, 0, total, host, 0, NULL, NULL)) != CL_SUCCESS) {
			err_set(e, "opencl: reading %s back failed (%d)", kb->name, rc);
			goto out;
		}
		if (take(kb, host, &outs[i], e) < 0)
			goto out;
		free(host);
		host = NULL;
	}
	if (ref && compare(k, outs, ref, e) < 0)
		goto out;
	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_OUTPUT) {
			bufs[i] = outs[i];
			memset(&outs[i], 0, sizeof outs[i]);
		} else if (k->buf[i].role == KB_TEMP)
			memset(&bufs[i], 0, sizeof bufs[i]);
	rv = 0;
out:
	free(host);
	if (ref)
		for (j = 0; j < k->nbuf; j++)
			if (k->buf[j].role == KB_OUTPUT)
				free(ref[j].data);
	free(ref);
	if (outs)
		for (j = 0; j < k->nbuf; j++)
			free(outs[j].data);
	free(outs);
	if (mem)
		for (j = 0; j < k->nbuf; j++)
			if (mem[j])
				s->clReleaseMemObject(mem[j]);
	free(mem);
	if (prog)
		s->clReleaseProgram(prog);
	buf_free(&src);
	gpu_launches_free(&L);
	backend_cl_free(tmp);
	return rv;
}

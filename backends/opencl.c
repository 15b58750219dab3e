/* opencl.c - the OpenCL C dialect: a __kernel per stage, __local buffers, barriers; warp shuffles and MMAs refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/*
** OpenCL C 1.2, as PoCL and the GPU vendors' drivers take it. gpu.c lays out
** the stages: a work-group is a block, get_group_id and get_local_id are the
** coordinates. Values follow the interpreter as in CUDA (cuda.c): doubles
** where the interpreter computes in double (cl_khr_fp64), FP_CONTRACT off,
** and the host builds with -cl-fp32-correctly-rounded-divide-sqrt where the
** device offers it (OpenCL's float / and sqrt may be 2.5 and 3 ulp off
** otherwise). OpenCL has no fixed warp: sub-groups have the device's size
** (cl_khr_subgroups, cl_khr_subgroup_shuffle), so shuffles and MMAs are
** refused; float16 (cl_khr_fp16 is optional) and bfloat16 too.
*/

static const char *const reserved[] = {
	/* C99 keywords */
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
	"extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
	"short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
	"volatile", "while", "_Bool", "_Complex", "_Imaginary",
	/* OpenCL C */
	"kernel", "global", "local", "constant", "private", "read_only", "write_only", "read_write",
	"uniform", "pipe", "bool", "true", "false", "half", "uchar", "ushort", "uint", "ulong", "size_t",
	"ptrdiff_t", "intptr_t", "uintptr_t", "event_t", "sampler_t", "image1d_t", "image2d_t", "image3d_t",
	"complex", "imaginary", "quad", "vec_step", "as_int", "as_uint", "as_float", "as_long", "as_ulong",
	"as_double", "convert_int", "convert_long", "convert_float", "convert_double",
	/* vector types */
	"char2", "char3", "char4", "char8", "char16", "uchar2", "uchar3", "uchar4", "uchar8", "uchar16",
	"short2", "short3", "short4", "short8", "short16", "ushort2", "ushort3", "ushort4", "ushort8", "ushort16",
	"int2", "int3", "int4", "int8", "int16", "uint2", "uint3", "uint4", "uint8", "uint16",
	"long2", "long3", "long4", "long8", "long16", "ulong2", "ulong3", "ulong4", "ulong8", "ulong16",
	"float2", "float3", "float4", "float8", "float16", "double2", "double3", "double4", "double8",
	"double16", "half2", "half3", "half4", "half8", "half16",
	/* built-in functions a kernel may meet */
	"get_global_id", "get_local_id", "get_group_id", "get_global_size", "get_local_size",
	"get_num_groups", "get_work_dim", "get_global_offset", "barrier", "mem_fence", "read_mem_fence",
	"write_mem_fence", "min", "max", "clamp", "mad", "mix", "step", "smoothstep", "sign", "select",
	"dot", "cross", "length", "distance", "normalize", "abs", "fabs", "exp", "exp2", "log", "log2",
	"sin", "cos", "tan", "pow", "sqrt", "rsqrt", "trunc", "floor", "ceil", "round", "rint", "fmod",
	"isnan", "isinf", "fma", "fmin", "fmax", "printf", "any", "all",
	/* what the prelude defines */
	"NULL", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
	"INT64_MAX", "INT64_MIN", "UINT64_MAX", "INFINITY", "NAN", "HUGE_VAL", "LONG_MAX", "LONG_MIN",
	"ULONG_MAX", "CLK_LOCAL_MEM_FENCE", "CLK_GLOBAL_MEM_FENCE",
	NULL
};

/* bool is uchar: OpenCL leaves the size of its bool to the device, and a kernel may not take a
** pointer to it; tessel's bool is a byte holding 0 or 1, and every conversion to bool the emitter
** writes (x != 0, comparisons) gives 0 or 1, so the byte is the value in memory and in registers */
static const char *
ctype(DType t)
{
	return t == DT_BOOL ? "uchar" : gpu_ctype(t, NULL, NULL);
}

/* ---- refusals ---- */

static int
node(Emit *E, int st, const UOp *u)
{
	const char *stn = E->k->stage[st].name;

	if (u->op == OP_SHUFFLE)
		return err_set(E->e, "opencl: stage %s: a shuffle; OpenCL C has no warp of 32 lanes (sub-groups have "
		               "the device's size, and shuffles need cl_khr_subgroup_shuffle), so tessel refuses "
		               "warp shuffles there: export to cuda, or reduce through shared memory "
		               "(kernel.reduce's tree)", stn);
	if (u->op == OP_MMA)
		return err_set(E->e, "opencl: stage %s: an mma (%s); OpenCL C has no tensor-core instructions: export "
		               "to cuda, or use kernel.gemm's fma", stn, u->name ? u->name : "?");
	if (u->op == OP_WGMMA)
		return err_set(E->e, "opencl: stage %s: a wgmma; OpenCL C has no tensor-core instructions: export to "
		               "cuda, or use kernel.gemm's fma", stn);
	if (u->op == OP_LDMATRIX)
		return err_set(E->e, "opencl: stage %s: an ldmatrix; OpenCL C has no warp-collective loads: export to "
		               "cuda, or load the fragment element by element", stn);
	if (u->dtype == DT_FLOAT16 || u->dtype == DT_BFLOAT16)
		return err_set(E->e, "opencl: stage %s: a %s value; the OpenCL backend has float32 and float64 only "
		               "(cl_khr_fp16 is optional, bfloat16 absent)", stn, dtype_name((DType)u->dtype));
	return 0;
}

static int
opencl_check(Emit *E)
{
	const Kernel *k = E->k;
	int b;

	for (b = 0; b < k->nbuf; b++) {
		const KBuf *kb = &k->buf[b];

		if (!ctype(kb->dtype))
			return err_set(E->e, "opencl: buffer %s is %s; the OpenCL backend has float32 and float64 only "
			               "(cl_khr_fp16 is optional, bfloat16 absent)", kb->name, dtype_name(kb->dtype));
	}
	return gpu_check(E, node);
}

static int
opencl_sync(Emit *E, EStage *S, const UOp *s, int ind)
{
	if (s->op == OP_BARRIER)
		return gpu_barrier(E, S, s, ind);
	return err_set(E->e, "opencl: stage %s: an mma", E->k->stage[S->st].name);   /* opencl_check refused it */
}

/* ---- the translation unit ---- */

static int
opencl_head(Emit *E, Buf *b)
{
	gpu_header(E, b, "A tessel kernel as OpenCL C 1.2: a __kernel per stage, launched in the order the table\n"
	           "** at the end gives.",
	           "A kernel takes the global buffers its stage uses, laid out by their layouts, in the\n"
	           "** order",
	           "Values follow tessel's interpreter (docs/export.md): build with\n"
	           "** -cl-fp32-correctly-rounded-divide-sqrt where the device has it.");
	emit(b, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#pragma OPENCL FP_CONTRACT OFF\n\n");
	emit(b, "typedef char int8_t;\ntypedef short int16_t;\ntypedef int int32_t;\ntypedef long int64_t;\n"
	     "typedef uchar uint8_t;\ntypedef ushort uint16_t;\ntypedef uint uint32_t;\ntypedef ulong uint64_t;\n");
	if (E->need & (H_FTOI | H_FTOU))
		emit(b, "#define INT64_MAX LONG_MAX\n#define INT64_MIN LONG_MIN\n#define UINT64_MAX ULONG_MAX\n");
	gpu_helpers(E, b, "static inline");
	return 0;
}

static int
opencl_tail(Emit *E, Buf *b)
{
	GpuState *G = E->aux;
	const Kernel *k = E->k;
	int i, j;

	emit(b, "\n/*\n** Launches, in order: global size grid * block, local size block; the arguments are\n"
	     "** buffers, by name.\n");
	for (i = 0; i < G->launches.n; i++) {
		const GpuLaunch *L = &G->launches.l[i];

		emit(b, "**   %s: grid (%lld, %lld, %lld), block (%lld, %lld, %lld); ", L->name, (long long)L->grid[0],
		     (long long)L->grid[1], (long long)L->grid[2], (long long)L->block[0], (long long)L->block[1],
		     (long long)L->block[2]);
		for (j = 0; j < L->narg; j++)
			emit(b, "%s%s", j ? ", " : "", k->buf[L->arg[j]].name);
		emit(b, "%s\n", L->narg ? "" : "no arguments");
	}
	emit(b, "*/\n");
	return 0;
}

/* vloadw: w floats from offset off of buffer b, global or local */
static void
opencl_vload(Emit *E, int b, int w, const Ex *off)
{
	emit(E->out, "vload%d(0, %s + ", w, E->bname[b]);
	emit_operand(E->out, off, P_ADD + 1);
	emit(E->out, ")");
}

/*
** OpenCL C 1.2's atomic_add, atomic_max, atomic_min and atomic_xchg on 32-bit
** words (int and uint; atomic_xchg also float): no float add, refused. A
** fence is mem_fence on both address spaces; OpenCL 1.2 promises no order
** between work-groups beyond what the device does (docs/export.md).
*/
static const char *
opencl_atomic(Emit *E, EStage *S, const UOp *s)
{
	static const char *const fn[KA_COUNT] = { "atomic_add", "atomic_max", "atomic_min", "atomic_xchg" };
	int b;

	if (s->op == OP_FENCE)
		return s->arg[0] == KF_BLOCK ? "mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"
		                             : "mem_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);";
	b = (int)s->src[0]->src[0]->arg[0];
	if (s->arg[0] == KA_ADD && E->k->buf[b].dtype == DT_FLOAT32) {
		err_set(E->e, "opencl: stage %s: atomic add of float32 %s; OpenCL C 1.2 has atomic_add for int and "
		        "uint only (a compare-and-swap loop is not written): export to cuda, or accumulate in int32",
		        E->k->stage[S->st].name, E->k->buf[b].name);
		return NULL;
	}
	return fn[s->arg[0] >= 0 && s->arg[0] < KA_COUNT ? s->arg[0] : 0];
}

const EmitDialect emit_opencl = {
	"opencl", D_C, reserved, ctype, opencl_check, gpu_stage, opencl_head, opencl_tail, gpu_loop, opencl_sync,
	1, NULL, NULL, opencl_vload, 1u << AS_GLOBAL | 1u << AS_LOCAL, NULL, 0, NULL, opencl_atomic, NULL, 1
};

/* cuda.c - the CUDA dialect: a __global__ function per stage, __shared__ buffers, barriers, warp shuffles, mma.sync in inline PTX, and tessel_launch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../layout/layout.h"
#include "gpu.h"

/*
** gpu.c lays out the stages; this file adds what only CUDA has. Values
** follow the interpreter as closely as the device allows (docs/export.md):
** float32 + - * / sqrt are IEEE operations with the default -prec-div and
** -prec-sqrt, and contraction into FMAs must be off (-fmad=false); what the
** interpreter computes in double (exp2, log2, sin, pow, ...) is computed in
** double here too, by CUDA's double functions, which are within 1 or 2
** units in the last place of double but not correctly rounded: a float32
** result differs from the interpreter's only where the double lands that
** close to a float32 rounding boundary. float16 and bfloat16 are __half and
** __nv_bfloat16 in memory, used as their float32 values, rounded once from
** the double result when stored (__double2half, as dtype_to_half). An MMA
** is the tensor cores' own arithmetic: products exact, sums not rounded as
** the interpreter's double sum is. Integer arithmetic wraps in the
** interpreter; signed overflow is undefined in CUDA C++.
*/

static const char *const reserved[] = {
	/* C and C++ keywords */
	"alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case",
	"catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval",
	"constexpr", "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype",
	"default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern",
	"false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
	"noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
	"register", "reinterpret_cast", "requires", "restrict", "return", "short", "signed", "sizeof",
	"static", "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
	"throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
	"void", "volatile", "wchar_t", "while", "xor", "xor_eq", "main", "std",
	/* CUDA */
	"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "half", "half2", "nv_bfloat16",
	"nv_bfloat162", "cudaStream_t",
	/* what the headers define that the source uses */
	"NULL", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
	"INT64_MAX", "INT64_MIN", "UINT64_MAX", "INFINITY", "NAN", "HUGE_VAL", "isnan", "exp2", "log2", "sin",
	"sqrt", "sqrtf", "trunc", "truncf", "floor", "fmod", "pow", "min", "max",
	NULL
};

static const char *
ctype(DType t)
{
	return gpu_ctype(t, "__half", "__nv_bfloat16");
}

/* cuda_fp16.h and cuda_bf16.h: exact widening, one rounding from float32 or double */
static const char *
hconv(DType from, DType to)
{
	if (to == DT_FLOAT32)
		return from == DT_FLOAT16 ? "__half2float" : from == DT_BFLOAT16 ? "__bfloat162float" : NULL;
	if (to == DT_FLOAT16)
		return from == DT_FLOAT32 ? "__float2half_rn" : from == DT_FLOAT64 ? "__double2half" : NULL;
	if (to == DT_BFLOAT16)
		return from == DT_FLOAT32 ? "__float2bfloat16_rn" : from == DT_FLOAT64 ? "__double2bfloat16" : NULL;
	return NULL;
}

/* ---- refusals and what the prelude needs ---- */

static int
mma_buffers(Emit *E, const UOp *s, int *buf)
{
	int i;

	if (s->nsrc != 4 || !s->name)
		return err_set(E->e, "cuda: an MMA without (D, A, B, C) and an atom");
	for (i = 0; i < 4; i++) {
		const UOp *d = s->src[i];

		if (d->op != OP_DEFINE || d->arg[0] < 0 || d->arg[0] >= E->k->nbuf)
			return err_set(E->e, "cuda: mma %s: operand %d is not a buffer of this kernel", s->name, i);
		buf[i] = (int)d->arg[0];
	}
	return 0;
}

static int
node(Emit *E, int st, const UOp *u)
{
	GpuState *G = E->aux;
	int buf[4];
	MmaAtom at;
	Err ie;

	G->half |= u->dtype == DT_FLOAT16;
	G->bf16 |= u->dtype == DT_BFLOAT16;
	if (u->op == OP_LDMATRIX) {
		if (u->nsrc != 2 || u->src[0]->op != OP_DEFINE || u->src[1]->op != OP_INDEX
		|| kernel_ldmatrix_check(E->k, (int)u->src[0]->arg[0], (int)u->src[1]->src[0]->arg[0], (int)u->arg[0],
		                         &ie) < 0)
			return err_set(E->e, "cuda: stage %s: %s", E->k->stage[st].name,
			               u->nsrc == 2 ? ie.msg : "an ldmatrix without a destination and a row address");
		return 0;
	}
	if (u->op == OP_WGMMA) {
		if (kernel_wgmma_check(E->k, u, NULL, NULL, &ie) < 0)
			return err_set(E->e, "cuda: stage %s: %s", E->k->stage[st].name, ie.msg);
		G->wgmma = 1;
		return 0;
	}
	if (u->op != OP_MMA)
		return 0;
	if (mma_buffers(E, u, buf) < 0)
		return -1;
	if (kernel_mma_atom(E->k, u->name, buf, &at, NULL, &ie) < 0)
		return err_set(E->e, "cuda: stage %s: %s", E->k->stage[st].name, ie.msg);
	G->mma = 1;
	return 0;
}

static int
cuda_check(Emit *E)
{
	GpuState *G = E->aux;
	int b;

	for (b = 0; b < E->k->nbuf; b++) {
		G->half |= E->k->buf[b].dtype == DT_FLOAT16;
		G->bf16 |= E->k->buf[b].dtype == DT_BFLOAT16;
		if (!ctype(E->k->buf[b].dtype))
			return err_set(E->e, "cuda: buffer %s is %s, which CUDA has no type for", E->k->buf[b].name,
			               dtype_name(E->k->buf[b].dtype));
	}
	return gpu_check(E, node);
}

/* ---- warp operations ---- */

static int
cuda_shuffle(Emit *E, const UOp *u, Ex *x)
{
	GpuState *G = E->aux;
	Ex v, l;
	DType t;
	int rc = -1;

	buf_init(&v.s);
	buf_init(&l.s);
	if (u->nsrc != 2 || emit_value(E, u->src[0], &v) < 0 || emit_value(E, u->src[1], &l) < 0
	|| emit_convert(E, &l, DT_INT32) < 0)
		goto out;
	t = v.ct;
	/* __shfl_sync takes 32- and 64-bit integers, floats, halves: narrower values go as int */
	if ((t == DT_BOOL || t == DT_INT8 || t == DT_INT16 || t == DT_UINT8 || t == DT_UINT16)
	&& emit_convert(E, &v, DT_INT32) < 0)
		goto out;
	emit(&x->s, "__shfl_sync(%s, ", G->mask);
	emit_operand(&x->s, &v, 0);
	emit(&x->s, ", ");
	emit_operand(&x->s, &l, 0);
	emit(&x->s, ")");
	x->prec = P_ATOM;
	x->ct = v.ct;
	rc = t == DT_BOOL ? emit_convert(E, x, DT_BOOL) : 0;
out:
	buf_free(&v.s);
	buf_free(&l.s);
	return rc;
}

/* The physical offset of logical element v (row-major) of register buffer b. */
static int
reg_offset(Emit *E, int b, int64_t v, int64_t *off)
{
	const KBuf *kb = &E->k->buf[b];
	UBind bind[T_MAXDIM];
	Err ie;
	int i;

	for (i = kb->ndim - 1; i >= 0; i--) {
		bind[i].name = kb->lvar[i]->name;
		bind[i].value = v % kb->shape[i];
		v /= kb->shape[i];
	}
	if (uop_eval(kb->layout, bind, kb->ndim, off, &ie) < 0)
		return err_set(E->e, "cuda: register buffer %s: %s", kb->name, ie.msg);
	return 0;
}

/*
** An MMA as its PTX instruction. CuTe's value order of each operand is the
** PTX fragment's register order (mma_sm80.hpp passes recast<uint32_t> of the
** fragments), two 16-bit values to a 32-bit register, the first in the low
** half: value v of an operand is register v / 2 (v for 32-bit types). The
** interpreter reads the same values through the same TV layouts, so the
** registers hold what it holds. Results go through temporaries: D may be C.
*/
static int
cuda_mma(Emit *E, EStage *S, const UOp *s, int ind)
{
	static const char *const role[4] = { "D", "A", "B", "C" };
	int buf[4], nv[4], nreg[4], packed[4], i, r, v, n = 0, tf32 = 0;
	int64_t off[4][16];
	MmaAtom at;
	Err ie;
	Buf b;

	if (mma_buffers(E, s, buf) < 0)
		return -1;
	if (kernel_mma_atom(E->k, s->name, buf, &at, &tf32, &ie) < 0)
		return err_set(E->e, "cuda: stage %s: %s", E->k->stage[S->st].name, ie.msg);
	for (i = 0; i < 4; i++) {
		const Layout *l = i == 1 ? &at.a : i == 2 ? &at.b : &at.c;
		DType t = E->k->buf[buf[i]].dtype;
		Layout m;

		if (cute_mode(l, 1, &m, &ie) < 0)
			return err_set(E->e, "cuda: %s: %s", at.name, ie.msg);
		nv[i] = (int)cute_size(&m);
		packed[i] = t == DT_FLOAT16 || t == DT_BFLOAT16;
		if (nv[i] > 16 || (packed[i] && nv[i] % 2))
			return err_set(E->e, "cuda: %s: operand %s holds %d values a thread", at.name, role[i], nv[i]);
		nreg[i] = packed[i] ? nv[i] / 2 : nv[i];
		for (v = 0; v < nv[i]; v++)
			if (reg_offset(E, buf[i], v, &off[i][v]) < 0)
				return -1;
	}
	emit_indent(E->out, ind);
	emit(E->out, "{  /* mma.%s(%s, %s, %s, %s): %s */\n", at.name, E->bname[buf[0]], E->bname[buf[1]],
	     E->bname[buf[2]], E->bname[buf[3]], at.types);
	emit_indent(E->out, ind + 1);
	emit(E->out, "%s", packed[0] ? "unsigned" : "float");
	for (r = 0; r < nreg[0]; r++)
		emit(E->out, "%s tessel_d%d", r ? "," : "", r);
	emit(E->out, ";\n\n");
	emit_indent(E->out, ind + 1);
	emit(E->out, "asm volatile(\"%s\"\n", at.ptx);
	buf_init(&b);
	for (i = 0; i < 4; i++) {
		emit(&b, "%s{", i ? ", " : " ");
		for (r = 0; r < nreg[i]; r++)
			emit(&b, "%s%%%d", r ? ", " : "", n++);
		emit(&b, "}");
	}
	emit_indent(E->out, ind + 3);
	emit(E->out, "\"%s;\"\n", b.s);
	buf_free(&b);
	/* outputs, then inputs */
	emit_indent(E->out, ind + 3);
	emit(E->out, ":");
	for (r = 0; r < nreg[0]; r++)
		emit(E->out, "%s \"=%c\"(tessel_d%d)", r ? "," : "", packed[0] ? 'r' : 'f', r);
	for (i = 1; i < 4; i++) {
		DType t = E->k->buf[buf[i]].dtype;
		const char *nm = E->bname[buf[i]];

		/* an operand a line (four registers at most, two packed ones), each register an input */
		for (r = 0; r < nreg[i]; r++) {
			if (r % (packed[i] ? 2 : 4) == 0) {
				emit(E->out, "%s\n", i == 1 && r == 0 ? "" : ",");
				emit_indent(E->out, ind + 3);
				emit(E->out, "%c", i == 1 && r == 0 ? ':' : ' ');
			} else
				emit(E->out, ",");
			if (packed[i])
				emit(E->out, " \"r\"(tessel_pack_%s(%s[%lld], %s[%lld]))", t == DT_FLOAT16 ? "f16" : "bf16",
				     nm, (long long)off[i][2 * r], nm, (long long)off[i][2 * r + 1]);
			else if (tf32 && i < 3)
				emit(E->out, " \"r\"(__float_as_uint(%s[%lld]))", nm, (long long)off[i][r]);
			else
				emit(E->out, " \"f\"(%s[%lld])", nm, (long long)off[i][r]);
		}
	}
	emit(E->out, ");\n");
	for (r = 0; r < nreg[0]; r++) {
		const char *nm = E->bname[buf[0]];
		const char *un = E->k->buf[buf[0]].dtype == DT_BFLOAT16 ? "__ushort_as_bfloat16" : "__ushort_as_half";

		emit_indent(E->out, ind + 1);
		if (!packed[0]) {
			emit(E->out, "%s[%lld] = tessel_d%d;\n", nm, (long long)off[0][r], r);
			continue;
		}
		emit(E->out, "%s[%lld] = %s((unsigned short)(tessel_d%d & 0xffffu));\n", nm, (long long)off[0][2 * r],
		     un, r);
		emit_indent(E->out, ind + 1);
		emit(E->out, "%s[%lld] = %s((unsigned short)(tessel_d%d >> 16));\n", nm, (long long)off[0][2 * r + 1],
		     un, r);
	}
	emit_indent(E->out, ind);
	emit(E->out, "}\n");
	return 0;
}

/*
** An ldmatrix as its PTX instruction: this lane's row address converted to
** a shared-window address, n 32-bit registers out, each split into the two
** 16-bit values of the register buffer (low half first, the order the MMA
** packs them back in). The memory clobber keeps the compiler's own shared
** accesses on their side of it, as the interpreter orders them.
*/
static int
cuda_ldmatrix(Emit *E, EStage *S, const UOp *s, int ind)
{
	const UOp *ix = s->src[1];
	int d = (int)s->src[0]->arg[0], src = (int)ix->src[0]->arg[0], n = (int)s->arg[0], r;
	DType t = E->k->buf[d].dtype;
	const char *nm = E->bname[d];
	const char *un = t == DT_FLOAT16 ? "__ushort_as_half" : t == DT_BFLOAT16 ? "__ushort_as_bfloat16" : "";
	int64_t off[8];
	UOp *o;
	Ex x;

	for (r = 0; r < 2 * n; r++)
		if (reg_offset(E, d, r, &off[r]) < 0)
			return -1;
	if (!(o = emit_offset(E, src, ix->src + 1)))
		return -1;
	buf_init(&x.s);
	if (emit_value(E, o, &x) < 0) {
		buf_free(&x.s);
		return -1;
	}
	emit_indent(E->out, ind);
	emit(E->out, "{  /* ldmatrix.x%d%s(%s, %s[...]): this lane's row */\n", n, s->arg[1] ? ".trans" : "", nm,
	     E->bname[src]);
	emit_indent(E->out, ind + 1);
	emit(E->out, "unsigned");
	for (r = 0; r < n; r++)
		emit(E->out, "%s tessel_r%d", r ? "," : "", r);
	emit(E->out, ";\n\n");
	emit_indent(E->out, ind + 1);
	emit(E->out, "asm volatile(\"ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 {", n, s->arg[1] ? ".trans" : "");
	for (r = 0; r < n; r++)
		emit(E->out, "%s%%%d", r ? ", " : "", r);
	emit(E->out, "}, [%%%d];\"\n", n);
	emit_indent(E->out, ind + 3);
	emit(E->out, ":");
	for (r = 0; r < n; r++)
		emit(E->out, "%s \"=r\"(tessel_r%d)", r ? "," : "", r);
	emit(E->out, "\n");
	emit_indent(E->out, ind + 3);
	emit(E->out, ": \"r\"((unsigned)__cvta_generic_to_shared(&%s[", E->bname[src]);
	emit_operand(E->out, &x, 0);
	emit(E->out, "]))\n");
	emit_indent(E->out, ind + 3);
	emit(E->out, ": \"memory\");\n");
	buf_free(&x.s);
	for (r = 0; r < n; r++) {
		emit_indent(E->out, ind + 1);
		emit(E->out, "%s[%lld] = %s((unsigned short)(tessel_r%d & 0xffffu));\n", nm, (long long)off[2 * r], un, r);
		emit_indent(E->out, ind + 1);
		emit(E->out, "%s[%lld] = %s((unsigned short)(tessel_r%d >> 16));\n", nm, (long long)off[2 * r + 1], un, r);
	}
	emit_indent(E->out, ind);
	emit(E->out, "}\n");
	return 0;
}

/*
** cp.async as inline PTX: the destination converted to a shared-window
** address as for ldmatrix, the source a generic pointer (global memory's
** generic and global addresses coincide, as CUTLASS's SM80_CP_ASYNC
** assumes); .cg (L2 only) for 16 bytes, .ca for 4 and 8. The memory
** clobbers keep the compiler's own shared accesses on their side of the
** commit and the wait, as the interpreter orders them.
*/
/* ---- wgmma ---- */

/* The accumulators of the stage's wgmmas, marked in acc (one byte per buffer). */
static void
wg_accumulators(const UOp *s, unsigned char *acc, int nbuf, int depth)
{
	int i;

	if (s->op == OP_WGMMA && s->nsrc == 3 && s->src[0]->arg[0] >= 0 && s->src[0]->arg[0] < nbuf)
		acc[s->src[0]->arg[0]] = 1;
	if (depth > 2000 || (s->op != OP_END && s->op != OP_IF))
		return;
	for (i = 1; i < s->nsrc; i++)
		wg_accumulators(s->src[i], acc, nbuf, depth + 1);
}

/*
** CUTLASS's warpgroup_fence_operand on every accumulator of the stage: an
** empty asm that reads and writes each register, so that the compiler
** keeps the accumulators' own reads and writes on their side of a fence
** or a wait (the wgmma's registers are not operands of either).
*/
static int
wg_fence_operands(Emit *E, EStage *S, int ind)
{
	const Kernel *k = E->k;
	unsigned char *acc = calloc(k->nbuf ? (size_t)k->nbuf : 1, 1);
	int b;
	int64_t v, off;

	if (!acc)
		return err_set(E->e, "cuda: out of memory");
	wg_accumulators(k->stage[S->st].body, acc, k->nbuf, 0);
	for (b = 0; b < k->nbuf; b++)
		if (acc[b]) {
			emit_indent(E->out, ind);
			emit(E->out, "/* %s: the accumulator's registers stay on their side */\n", E->bname[b]);
			int64_t numel = 1;
			int j;

			for (j = 0; j < k->buf[b].ndim; j++)
				numel *= k->buf[b].shape[j];
			for (v = 0; v < numel; v++) {
				if (reg_offset(E, b, v, &off) < 0) {
					free(acc);
					return -1;
				}
				emit_indent(E->out, ind);
				emit(E->out, "asm volatile(\"\" : \"+f\"(%s[%lld]) :: \"memory\");\n", E->bname[b], (long long)off);
			}
		}
	free(acc);
	return 0;
}

/* One operand's 64-bit descriptor: the start address from the tile's first element, the rest constant. */
static int
wg_desc(Emit *E, const UOp *ix, const KGmmaDesc *d, const char *var, int ind)
{
	int b = (int)ix->src[0]->arg[0];
	UOp *o;
	Ex x;

	if (!(o = emit_offset(E, b, ix->src + 1)))
		return -1;
	buf_init(&x.s);
	if (emit_value(E, o, &x) < 0) {
		buf_free(&x.s);
		return -1;
	}
	emit_indent(E->out, ind);
	emit(E->out, "const uint64_t %s = (((uint64_t)__cvta_generic_to_shared(&%s[", var, E->bname[b]);
	emit_operand(E->out, &x, 0);
	emit(E->out, "]) >> 4) & 0x3FFFull) | 0x%016llxull;  /* %s-major, %s, LBO %lld, SBO %lld */\n",
	     (unsigned long long)(d->desc & ~(uint64_t)0x3fff), d->mn_major ? "MN" : "K", kgmma_layout_name(d->layout_type),
	     (long long)d->lbo, (long long)d->sbo);
	buf_free(&x.s);
	return 0;
}

/*
** A wgmma as CUTLASS's SS form: the descriptors of A and B, N/2 "+f"
** accumulators (D's registers by their physical offsets), scale-d 1 through
** a predicate, imm-scale-a and -b 1, tnspA and tnspB 1 for MN-major tiles.
*/
static int
cuda_wgmma(Emit *E, EStage *S, const UOp *s, int ind)
{
	KGmmaDesc da, db;
	Err ie;
	int d, n, v, t;
	int64_t off;
	const char *ty;

	if (kernel_wgmma_check(E->k, s, &da, &db, &ie) < 0)
		return err_set(E->e, "cuda: stage %s: %s", E->k->stage[S->st].name, ie.msg);
	d = (int)s->src[0]->arg[0];
	n = (int)s->arg[0];
	t = E->k->buf[s->src[1]->src[0]->arg[0]].dtype;
	ty = t == DT_BFLOAT16 ? "bf16" : "f16";
	emit_indent(E->out, ind);
	emit(E->out, "{  /* wgmma.m64n%dk16(%s, %s[...], %s[...]) */\n", n, E->bname[d],
	     E->bname[s->src[1]->src[0]->arg[0]], E->bname[s->src[2]->src[0]->arg[0]]);
	if (wg_desc(E, s->src[1], &da, "tessel_da", ind + 1) < 0 || wg_desc(E, s->src[2], &db, "tessel_db", ind + 1) < 0)
		return -1;
	emit_indent(E->out, ind + 1);
	emit(E->out, "asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n", n / 2 + 2);
	emit_indent(E->out, ind + 3);
	emit(E->out, "\"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {", n, ty, ty);
	for (v = 0; v < n / 2; v++)
		emit(E->out, "%s%%%d", v ? ", " : "", v);
	emit(E->out, "}, %%%d, %%%d, p, 1, 1, %d, %d;\\n}\\n\"\n", n / 2, n / 2 + 1, da.mn_major, db.mn_major);
	emit_indent(E->out, ind + 3);
	emit(E->out, ":");
	for (v = 0; v < n / 2; v++) {
		if (reg_offset(E, d, v, &off) < 0)
			return -1;
		if (v && v % 8 == 0) {
			emit(E->out, "\n");
			emit_indent(E->out, ind + 3);
			emit(E->out, " ");
		}
		emit(E->out, "%s \"+f\"(%s[%lld])", v ? "," : "", E->bname[d], (long long)off);
	}
	emit(E->out, "\n");
	emit_indent(E->out, ind + 3);
	emit(E->out, ": \"l\"(tessel_da), \"l\"(tessel_db), \"r\"(1)\n");
	emit_indent(E->out, ind + 3);
	emit(E->out, ": \"memory\");\n");
	emit_indent(E->out, ind);
	emit(E->out, "}\n");
	return 0;
}

static int
cuda_async(Emit *E, EStage *S, const UOp *s, int ind)
{
	const UOp *dx, *sx;
	int db, sb, bytes, i;
	UOp *o[2];
	Ex x[2];

	switch (s->op) {
	case OP_WGMMA:
		return cuda_wgmma(E, S, s, ind);
	case OP_WG_FENCE:
		if (wg_fence_operands(E, S, ind) < 0)
			return -1;
		emit_indent(E->out, ind);
		emit(E->out, "asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n");
		return 0;
	case OP_WG_COMMIT:
		emit_indent(E->out, ind);
		emit(E->out, "asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");\n");
		return 0;
	case OP_WG_WAIT:
		emit_indent(E->out, ind);
		emit(E->out, "asm volatile(\"wgmma.wait_group.sync.aligned %lld;\\n\" ::: \"memory\");\n",
		     (long long)s->arg[0]);
		return wg_fence_operands(E, S, ind);
	default:
		break;
	}
	emit_indent(E->out, ind);
	if (s->op == OP_CP_COMMIT) {
		emit(E->out, "asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");\n");
		return 0;
	}
	if (s->op == OP_CP_WAIT) {
		emit(E->out, "asm volatile(\"cp.async.wait_group %lld;\\n\" ::: \"memory\");\n", (long long)s->arg[0]);
		return 0;
	}
	if (s->nsrc != 2 || s->src[0]->op != OP_INDEX || s->src[1]->op != OP_INDEX)
		return err_set(E->e, "cuda: stage %s: a cp_async without a destination and a source element",
		               E->k->stage[S->st].name);
	dx = s->src[0];
	sx = s->src[1];
	db = (int)dx->src[0]->arg[0];
	sb = (int)sx->src[0]->arg[0];
	{
		Err ie;

		if (kernel_cp_async_check(E->k, db, sb, (int)s->arg[0], &ie) < 0)
			return err_set(E->e, "cuda: stage %s: %s", E->k->stage[S->st].name, ie.msg);
	}
	bytes = (int)s->arg[0] * dtype_bytes(E->k->buf[db].dtype);
	if (!(o[0] = emit_offset(E, db, dx->src + 1)) || !(o[1] = emit_offset(E, sb, sx->src + 1)))
		return -1;
	for (i = 0; i < 2; i++)
		buf_init(&x[i].s);
	if (emit_value(E, o[0], &x[0]) < 0 || emit_value(E, o[1], &x[1]) < 0) {
		buf_free(&x[0].s);
		buf_free(&x[1].s);
		return -1;
	}
	emit(E->out, "asm volatile(\"cp.async.%s.shared.global [%%0], [%%1], %d;\\n\"\n", bytes == 16 ? "cg" : "ca",
	     bytes);
	emit_indent(E->out, ind + 2);
	emit(E->out, ":: \"r\"((unsigned)__cvta_generic_to_shared(&%s[", E->bname[db]);
	emit_operand(E->out, &x[0], 0);
	emit(E->out, "])), \"l\"(&%s[", E->bname[sb]);
	emit_operand(E->out, &x[1], 0);
	emit(E->out, "])\n");
	emit_indent(E->out, ind + 2);
	emit(E->out, ": \"memory\");\n");
	buf_free(&x[0].s);
	buf_free(&x[1].s);
	return 0;
}

static int
cuda_sync(Emit *E, EStage *S, const UOp *s, int ind)
{
	return s->op == OP_BARRIER ? gpu_barrier(E, S, s, ind) : s->op == OP_LDMATRIX ? cuda_ldmatrix(E, S, s, ind)
	     : cuda_mma(E, S, s, ind);
}

/* ---- the translation unit ---- */

static int
cuda_head(Emit *E, Buf *b)
{
	GpuState *G = E->aux;

	gpu_header(E, b, "A tessel kernel as CUDA C++: a __global__ function per stage; tessel_launch at the end\n"
	           "** launches them in order.",
	           "dbufs[i] is buffer i's device storage, laid out by its layout (NULL for shared and\n"
	           "** local buffers); the order is",
	           G->wgmma ? (E->fast ? "Fast: float32 functions (exp2f), max and min without NaN rules; values agree with\n"
	           "** tessel's interpreter within a tolerance (docs/export.md). wgmma (Hopper's warpgroup MMA) needs\n"
	           "** sm_90a: nvcc -gencode=arch=compute_90a,code=sm_90a."
	           : "Values follow tessel's interpreter (docs/export.md). wgmma (Hopper's warpgroup MMA) needs\n"
	           "** sm_90a: nvcc -gencode=arch=compute_90a,code=sm_90a -fmad=false.")
	           : E->fast ? "Fast: float32 functions (exp2f), max and min without NaN rules; values agree with\n"
	           "** tessel's interpreter within a tolerance (docs/export.md): nvcc -arch=sm_90."
	           : "Values follow tessel's interpreter (docs/export.md): nvcc -arch=sm_90 -fmad=false.");
	emit(b, "#include <math.h>\n#include <stdint.h>\n#include <cuda_runtime.h>\n");
	if (G->half || G->mma)
		emit(b, "#include <cuda_fp16.h>\n");
	if (G->bf16)
		emit(b, "#include <cuda_bf16.h>\n");
	gpu_helpers(E, b, "static __device__ inline");
	if (G->mma) {
		emit(b, "\n/* two 16-bit values in one 32-bit register, the first in the low half (MMA operands) */\n");
		emit(b, "static __device__ inline unsigned\ntessel_pack_f16(__half lo, __half hi)\n{\n"
		     "  return (unsigned)__half_as_ushort(lo) | (unsigned)__half_as_ushort(hi) << 16;\n}\n");
		if (G->bf16)
			emit(b, "\nstatic __device__ inline unsigned\ntessel_pack_bf16(__nv_bfloat16 lo, __nv_bfloat16 hi)\n{\n"
			     "  return (unsigned)__bfloat16_as_ushort(lo) | (unsigned)__bfloat16_as_ushort(hi) << 16;\n}\n");
	}
	return 0;
}

static int
cuda_tail(Emit *E, Buf *b)
{
	GpuState *G = E->aux;
	const Kernel *k = E->k;
	int i, j;

	emit(b, "\n/* the kernel: its stages in order, on one stream (dbufs: device pointers, kernel order) */\n"
	     "extern \"C\" void\ntessel_launch(void **tessel_dbufs, cudaStream_t tessel_stream)\n{\n");
	for (i = 0; i < G->launches.n; i++) {
		const GpuLaunch *L = &G->launches.l[i];

		/* past 48 KiB of shared memory, the kernel opts in to its bytes (per device: each launch) */
		if (L->dynamic)
			emit(b, "  cudaFuncSetAttribute(%s, cudaFuncAttributeMaxDynamicSharedMemorySize, %lld);\n", L->name,
			     (long long)L->shared_bytes);
		emit(b, "  %s<<<dim3(%lld, %lld, %lld), dim3(%lld, %lld, %lld), %lld, tessel_stream>>>(", L->name,
		     (long long)L->grid[0], (long long)L->grid[1], (long long)L->grid[2], (long long)L->block[0],
		     (long long)L->block[1], (long long)L->block[2], L->dynamic ? (long long)L->shared_bytes : 0LL);
		for (j = 0; j < L->narg; j++) {
			int a = L->arg[j];

			emit(b, "%s(%s%s *)tessel_dbufs[%d]", j ? ", " : "", E->use[(size_t)i * k->nbuf + a] == 1 ? "const " : "",
			     ctype(k->buf[a].dtype), a);
		}
		emit(b, ");\n");
	}
	emit(b, "}\n");
	gpu_layout_copies(b, k, "extern \"C\" ");
	return 0;
}

/* w floats from offset off of buffer b (global: cudaMalloc aligns it, and off is a multiple of w) */
static void
cuda_vload(Emit *E, int b, int w, const Ex *off)
{
	emit(E->out, "*(const float%d *)&%s[", w, E->bname[b]);
	emit_operand(E->out, off, 0);
	emit(E->out, "]");
}

/* a vector copy's move: global buffers are aligned by cudaMalloc, shared arrays declared __align__(16) */
static const char *
cuda_vcopy(int n)
{
	return n == 4 ? "unsigned" : n == 8 ? "uint2" : n == 16 ? "uint4" : NULL;
}

const EmitDialect emit_cuda = {
	"cuda", D_C, reserved, ctype, cuda_check, gpu_stage, cuda_head, cuda_tail, gpu_loop, cuda_sync,
	1, cuda_shuffle, hconv, cuda_vload, 1u << AS_GLOBAL, cuda_vcopy, 1u << AS_GLOBAL | 1u << AS_LOCAL,
	cuda_async
};

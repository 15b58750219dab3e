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

/* The accumulators of the stage's wgmmas marked 1 in acc (one byte per buffer), their
** register A operands 2. */
static void
wg_accumulators(const UOp *s, unsigned char *acc, int nbuf, int depth)
{
	int i;

	if (s->op == OP_WGMMA && s->nsrc == 3 && s->src[0]->arg[0] >= 0 && s->src[0]->arg[0] < nbuf) {
		acc[s->src[0]->arg[0]] = 1;
		if (s->src[1]->op == OP_INDEX && s->src[1]->src[0]->arg[0] >= 0 && s->src[1]->src[0]->arg[0] < nbuf)
			acc[s->src[1]->src[0]->arg[0]] |= 2;
	}
	if (depth > 2000 || (s->op != OP_END && s->op != OP_IF))
		return;
	for (i = 1; i < s->nsrc; i++)
		wg_accumulators(s->src[i], acc, nbuf, depth + 1);
}

/*
** CUTLASS's warpgroup_fence_operand on every accumulator of the stage: an
** empty asm that reads and writes each register, so that the compiler
** keeps the accumulators' own reads and writes on their side of a fence
** or a wait (the wgmma's registers are not operands of either). A register
** A operand (16-bit, __align__(4)) is fenced as 32-bit words: its values are
** then packed before the fence, and ptxas need not add a warpgroup.arrive
** of its own before the wgmma (C7519).
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
		if (acc[b] == 2 && k->buf[b].scope == AS_REG && dtype_bytes(k->buf[b].dtype) == 2 && k->buf[b].size % 2 == 0) {
			emit_indent(E->out, ind);
			emit(E->out, "/* %s: the A fragments' registers stay on their side, packed */\n", E->bname[b]);
			for (v = 0; v < k->buf[b].size; v += 2) {
				emit_indent(E->out, ind);
				emit(E->out, "asm volatile(\"\" : \"+r\"(reinterpret_cast<unsigned &>(%s[%lld])) :: \"memory\");\n",
				     E->bname[b], (long long)v);
			}
		} else if (acc[b] & 1) {
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

/* The shared-window address of an element: "(unsigned)__cvta_generic_to_shared(&b[off])". */
static int
smem_addr(Emit *E, const UOp *ix, Buf *out)
{
	int b = (int)ix->src[0]->arg[0];
	UOp *o;
	Ex x;

	if (!(o = emit_offset(E, b, (UOp *const *)ix->src + 1)))
		return -1;
	buf_init(&x.s);
	if (emit_value(E, o, &x) < 0) {
		buf_free(&x.s);
		return -1;
	}
	emit(out, "(unsigned)__cvta_generic_to_shared(&%s[", E->bname[b]);
	emit_operand(out, &x, 0);
	emit(out, "])");
	buf_free(&x.s);
	return 0;
}

/* One operand's 64-bit descriptor: the start address from the tile's first element, the rest constant. */
static int
wg_desc(Emit *E, const UOp *ix, const KGmmaDesc *d, const char *var, int ind)
{
	Buf a;

	buf_init(&a);
	if (smem_addr(E, ix, &a) < 0 || !a.s) {
		buf_free(&a);
		return -1;
	}
	emit_indent(E->out, ind);
	emit(E->out, "const uint64_t %s = ((uint64_t)(%s >> 4) & 0x3FFFull) | 0x%016llxull;  "
	     "/* %s-major, %s, LBO %lld, SBO %lld */\n", var, a.s, (unsigned long long)(d->desc & ~(uint64_t)0x3fff),
	     d->mn_major ? "MN" : "K", kgmma_layout_name(d->layout_type), (long long)d->lbo, (long long)d->sbo);
	buf_free(&a);
	return 0;
}

/*
** A from registers (the RS form): the four 32-bit registers of the thread's
** fragment, each two 16-bit elements, as "r" operands into a; the elements
** are those of the region's start and the 7 after it along the last
** dimension. A pair at constant offsets 2w and 2w + 1 is the buffer's word
** w as it is (the buffer is __align__(4)); any other pair is packed.
*/
static int
wg_afrag(Emit *E, const UOp *ix, Buf *a)
{
	const Kernel *k = E->k;
	int b = (int)ix->src[0]->arg[0], nd = k->buf[b].ndim, i;
	UOp *idx[T_MAXDIM], *o[8];
	Ex x[8];
	int rc = 0;

	for (i = 0; i < 8; i++)
		buf_init(&x[i].s);
	for (i = 0; i < nd; i++)
		idx[i] = ix->src[i + 1];
	for (i = 0; i < 8 && !rc; i++) {
		idx[nd - 1] = uop_add(k->c, ix->src[nd], uop_int(k->c, i));
		if (!idx[nd - 1] || !(o[i] = emit_offset(E, b, idx)))
			rc = err_set(E->e, "cuda: out of memory");
		else
			rc = emit_value(E, o[i], &x[i]);
	}
	for (i = 0; i < 8 && !rc; i += 2) {
		if (o[i]->op == OP_CONST && o[i + 1]->op == OP_CONST && o[i]->arg[0] % 2 == 0
		&& o[i + 1]->arg[0] == o[i]->arg[0] + 1) {
			emit(a, "%s\"r\"(reinterpret_cast<unsigned &>(%s[%lld]))", i ? ", " : "", E->bname[b],
			     (long long)o[i]->arg[0]);
			continue;
		}
		((GpuState *)E->aux)->pack = 1;
		emit(a, "%s\"r\"(tessel_pack_%s(%s[", i ? ", " : "", k->buf[b].dtype == DT_BFLOAT16 ? "bf16" : "f16",
		     E->bname[b]);
		emit_operand(a, &x[i], 0);
		emit(a, "], %s[", E->bname[b]);
		emit_operand(a, &x[i + 1], 0);
		emit(a, "]))");
	}
	for (i = 0; i < 8; i++)
		buf_free(&x[i].s);
	return rc;
}

/*
** A wgmma as CUTLASS's SS form: the descriptors of A and B, N/2 "+f"
** accumulators (D's registers by their physical offsets), scale-d through a
** predicate (1, or 0 for KWG_ZERO), imm-scale-a and -b 1, tnspA and tnspB 1 for MN-major tiles.
** With A from registers (the RS form) A is four "r" operands and there is
** no tnspA.
*/
static int
cuda_wgmma(Emit *E, EStage *S, const UOp *s, int ind)
{
	KGmmaDesc da, db;
	Err ie;
	int d, n, v, t, na;
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
	if ((!da.regs && wg_desc(E, s->src[1], &da, "tessel_da", ind + 1) < 0)
	|| wg_desc(E, s->src[2], &db, "tessel_db", ind + 1) < 0)
		return -1;
	/* operands: D's n/2, then A (1 descriptor or 4 registers), B's descriptor, scale-d */
	na = da.regs ? 4 : 1;
	emit_indent(E->out, ind + 1);
	emit(E->out, "asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n", n / 2 + na + 1);
	emit_indent(E->out, ind + 3);
	emit(E->out, "\"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {", n, ty, ty);
	for (v = 0; v < n / 2; v++)
		emit(E->out, "%s%%%d", v ? ", " : "", v);
	if (da.regs)
		emit(E->out, "}, {%%%d, %%%d, %%%d, %%%d}, %%%d, p, 1, 1, %d;\\n}\\n\"\n", n / 2, n / 2 + 1, n / 2 + 2,
		     n / 2 + 3, n / 2 + 4, db.mn_major);
	else
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
	if (da.regs) {
		Buf a;
		int rc;

		buf_init(&a);
		if ((rc = wg_afrag(E, s->src[1], &a)) == 0)
			emit(E->out, ": %s, \"l\"(tessel_db), \"r\"(%d)\n", a.s ? a.s : "", !(s->arg[1] & KWG_ZERO));
		buf_free(&a);
		if (rc < 0)
			return -1;
	} else
		emit(E->out, ": \"l\"(tessel_da), \"l\"(tessel_db), \"r\"(%d)\n", !(s->arg[1] & KWG_ZERO));
	emit_indent(E->out, ind + 3);
	emit(E->out, ": \"memory\");\n");
	emit_indent(E->out, ind);
	emit(E->out, "}\n");
	return 0;
}

/*
** mbarriers and TMA as inline PTX. An mbarrier is a uint64 element of a
** shared array, named by its shared-window address; the wait is a C loop
** around try_wait.parity (which itself waits a while in hardware). A TMA
** box: cp.async.bulk.tensor of the tensor map kernel parameter
** tessel_tmap<i> at int32 coordinates, innermost first, into the box's
** first shared element, completing its bytes on the barrier.
*/
static int
cuda_tma(Emit *E, EStage *S, const UOp *s, int ind)
{
	Buf a, t;
	int rc = -1, i, m = 0, r;

	buf_init(&a);
	buf_init(&t);
	if (s->nsrc < 1 || smem_addr(E, s->op == OP_TMA_LOAD ? s->src[2] : s->src[0], &a) < 0 || !a.s)
		goto out;
	emit_indent(E->out, ind);
	switch (s->op) {
	case OP_MBAR_INIT:
		emit(E->out, "asm volatile(\"mbarrier.init.shared::cta.b64 [%%0], %lld;\\n\"\n", (long long)s->arg[0]);
		emit_indent(E->out, ind + 2);
		emit(E->out, ":: \"r\"(%s) : \"memory\");\n", a.s);
		/* visible to the async proxy (the TMA unit) before any use */
		emit_indent(E->out, ind);
		emit(E->out, "asm volatile(\"fence.mbarrier_init.release.cluster;\\n\" ::: \"memory\");\n");
		break;
	case OP_MBAR_ARRIVE:
		if (s->arg[0])
			emit(E->out, "asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%0], %lld;\\n\"\n",
			     (long long)s->arg[0]);
		else
			emit(E->out, "asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%%0];\\n\"\n");
		emit_indent(E->out, ind + 2);
		emit(E->out, ":: \"r\"(%s) : \"memory\");\n", a.s);
		break;
	case OP_MBAR_WAIT: {
		Ex p;

		buf_init(&p.s);
		if (s->nsrc != 2 || emit_value(E, s->src[1], &p) < 0) {
			buf_free(&p.s);
			goto out;
		}
		/* the retry loop inside one asm block: a C loop here would put a branch between a
		** wgmma and its wait, and ptxas then serializes the wgmmas (warning C7514) */
		emit(E->out, "asm volatile(\"{\\n .reg .pred p;\\n tessel_wait:\\n mbarrier.try_wait.parity.shared::cta.b64 p, "
		     "[%%0], %%1;\\n @!p bra.uni tessel_wait;\\n}\\n\"\n");
		emit_indent(E->out, ind + 2);
		emit(E->out, ":: \"r\"(%s), \"r\"((unsigned)(", a.s);
		emit_operand(E->out, &p, 0);
		emit(E->out, ")) : \"memory\");\n");
		buf_free(&p.s);
		break;
	}
	default:
		if ((m = gpu_tmap(E, s)) < 0 || smem_addr(E, s->src[0], &t) < 0 || !t.s)
			goto out;
		r = E->k->buf[s->src[1]->src[0]->arg[0]].ndim;
		emit(E->out, "asm volatile(\"cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
		     " [%%0], [%%1, {", r);
		for (i = 0; i < r; i++)
			emit(E->out, "%s%%%d", i ? ", " : "", i + 3);
		emit(E->out, "}], [%%2];\\n\"\n");
		emit_indent(E->out, ind + 2);
		emit(E->out, ":: \"r\"(%s), \"l\"(&tessel_tmap%d), \"r\"(%s)", t.s, m, a.s);
		/* coordinates innermost first */
		for (i = r - 1; i >= 0; i--) {
			Ex c;

			buf_init(&c.s);
			if (emit_value(E, s->src[1]->src[i + 1], &c) < 0) {
				buf_free(&c.s);
				goto out;
			}
			emit(E->out, ", \"r\"((int)(");
			emit_operand(E->out, &c, 0);
			emit(E->out, "))");
			buf_free(&c.s);
		}
		emit(E->out, "\n");
		emit_indent(E->out, ind + 2);
		emit(E->out, ": \"memory\");\n");
		break;
	}
	rc = 0;
out:
	buf_free(&a);
	buf_free(&t);
	return rc;
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
	case OP_SETMAXNREG:
		emit_indent(E->out, ind);
		emit(E->out, "asm volatile(\"setmaxnreg.%s.sync.aligned.u32 %lld;\\n\");\n", s->arg[1] ? "inc" : "dec",
		     (long long)s->arg[0]);
		return 0;
	case OP_WG_WAIT:
		emit_indent(E->out, ind);
		emit(E->out, "asm volatile(\"wgmma.wait_group.sync.aligned %lld;\\n\" ::: \"memory\");\n",
		     (long long)s->arg[0]);
		return wg_fence_operands(E, S, ind);
	case OP_MBAR_INIT:
	case OP_MBAR_ARRIVE:
	case OP_MBAR_WAIT:
	case OP_TMA_LOAD:
		return cuda_tma(E, S, s, ind);
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
	           G->wgmma ? (E->fast ? "Fast: float32 functions (exp2 as ex2.approx), max and min without NaN rules; values agree with\n"
	           "** tessel's interpreter within a tolerance (docs/export.md). wgmma (Hopper's warpgroup MMA) needs\n"
	           "** sm_90a: nvcc -gencode=arch=compute_90a,code=sm_90a."
	           : "Values follow tessel's interpreter (docs/export.md). wgmma (Hopper's warpgroup MMA) needs\n"
	           "** sm_90a: nvcc -gencode=arch=compute_90a,code=sm_90a -fmad=false.")
	           : E->fast ? "Fast: float32 functions (exp2 as ex2.approx), max and min without NaN rules; values agree with\n"
	           "** tessel's interpreter within a tolerance (docs/export.md): nvcc -arch=sm_90."
	           : "Values follow tessel's interpreter (docs/export.md): nvcc -arch=sm_90 -fmad=false.");
	emit(b, "#include <math.h>\n#include <stdint.h>\n#include <cuda_runtime.h>\n");
	if (G->wgmma)
		/* the fences pass every accumulator and register A through an empty asm, the first
		** time before anything wrote them (a wgmma with zero = true writes them later) */
		emit(b, "#pragma nv_diag_suppress 549  /* \"used before its value is set\": the wgmma fences' operands */\n");
	if (G->tma)
		emit(b, "#include <stdio.h>\n#include <cuda.h>  /* CUtensorMap (the driver entry point comes through the runtime: no -lcuda) */\n");
	if (G->half || G->mma || G->pack)
		emit(b, "#include <cuda_fp16.h>\n");
	if (G->bf16)
		emit(b, "#include <cuda_bf16.h>\n");
	gpu_helpers(E, b, "static __device__ inline");
	if (G->mma || G->pack) {
		emit(b, "\n/* two 16-bit values in one 32-bit register, the first in the low half (MMA operands) */\n");
		emit(b, "static __device__ inline unsigned\ntessel_pack_f16(__half lo, __half hi)\n{\n"
		     "  return (unsigned)__half_as_ushort(lo) | (unsigned)__half_as_ushort(hi) << 16;\n}\n");
		if (G->bf16)
			emit(b, "\nstatic __device__ inline unsigned\ntessel_pack_bf16(__nv_bfloat16 lo, __nv_bfloat16 hi)\n{\n"
			     "  return (unsigned)__bfloat16_as_ushort(lo) | (unsigned)__bfloat16_as_ushort(hi) << 16;\n}\n");
	}
	return 0;
}

static const char *
tma_dtype(DType t)
{
	switch (t) {
	case DT_FLOAT16: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
	case DT_BFLOAT16: return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
	case DT_FLOAT32: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
	case DT_FLOAT64: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT64";
	case DT_INT32: return "CU_TENSOR_MAP_DATA_TYPE_INT32";
	case DT_UINT32: return "CU_TENSOR_MAP_DATA_TYPE_UINT32";
	case DT_INT64: return "CU_TENSOR_MAP_DATA_TYPE_INT64";
	case DT_UINT64: return "CU_TENSOR_MAP_DATA_TYPE_UINT64";
	case DT_INT16: case DT_UINT16: return "CU_TENSOR_MAP_DATA_TYPE_UINT16";
	default: return "CU_TENSOR_MAP_DATA_TYPE_UINT8";
	}
}

/*
** The host side of the tensor maps: cuTensorMapEncodeTiled, a driver
** function, reached through the runtime's cudaGetDriverEntryPoint (by
** version since CUDA 12.5; CUDA 13 has only that one), so that the program
** links without -lcuda.
*/
static void
tma_host(Buf *b)
{
	emit(b, "\n/* TMA tensor maps: cuTensorMapEncodeTiled through the runtime's driver entry point */\n"
	     "typedef CUresult (*tessel_encode_t)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,\n"
	     "    const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,\n"
	     "    CUtensorMapL2promotion, CUtensorMapFloatOOBfill);\n\n"
	     "static void\ntessel_tmap(CUtensorMap *m, void *p, CUtensorMapDataType t, cuuint32_t rank, const cuuint64_t *dims,\n"
	     "            const cuuint64_t *strides, const cuuint32_t *box, CUtensorMapSwizzle sw)\n{\n"
	     "  static thread_local tessel_encode_t encode;\n"
	     "  static const cuuint32_t one[5] = {1, 1, 1, 1, 1};\n"
	     "  cudaDriverEntryPointQueryResult q;\n\n"
	     "  if (!encode) {\n"
	     "#if CUDART_VERSION >= 12050\n"
	     "    cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\", (void **)&encode, 12000, cudaEnableDefault, &q);\n"
	     "#else\n"
	     "    cudaGetDriverEntryPoint(\"cuTensorMapEncodeTiled\", (void **)&encode, cudaEnableDefault, &q);\n"
	     "#endif\n"
	     "  }\n"
	     "  if (!encode || encode(m, t, rank, p, dims, strides, box, one, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,\n"
	     "                      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)\n"
	     "    fprintf(stderr, \"tessel: cuTensorMapEncodeTiled failed\\n\");\n"
	     "}\n");
}

static int
cuda_tail(Emit *E, Buf *b)
{
	GpuState *G = E->aux;
	const Kernel *k = E->k;
	int i, j;

	if (G->tma)
		tma_host(b);
	emit(b, "\n/* the kernel: its stages in order, on one stream (dbufs: device pointers, kernel order) */\n"
	     "extern \"C\" void\ntessel_launch(void **tessel_dbufs, cudaStream_t tessel_stream)\n{\n");
	for (i = 0; i < G->launches.n; i++) {
		const GpuLaunch *L = &G->launches.l[i];

		for (j = 0; j < L->ntmap; j++) {
			const GpuTmap *t = &L->tmap[j];
			int d;

			/* encoded once per device pointer, kept per host thread: a multi-GPU host launches
			** from one thread a device (backends/nccl.c), each with its own pointers */
			emit(b, "  static thread_local CUtensorMap %s_tmap%d;\n  static thread_local void *%s_tptr%d;\n", L->name, j,
			     L->name, j);
			emit(b, "  if (%s_tptr%d != tessel_dbufs[%d]) {\n", L->name, j, t->buf);
			emit(b, "    static const cuuint64_t dims[] = {");
			for (d = 0; d < t->rank; d++)
				emit(b, "%s%lluull", d ? ", " : "", (unsigned long long)t->dims[d]);
			emit(b, "}, strides[] = {");
			for (d = 1; d < t->rank; d++)
				emit(b, "%s%lluull", d > 1 ? ", " : "", (unsigned long long)t->strides[d]);
			emit(b, "%s};\n    static const cuuint32_t box[] = {", t->rank == 1 ? "0" : "");
			for (d = 0; d < t->rank; d++)
				emit(b, "%s%lluu", d ? ", " : "", (unsigned long long)t->box[d]);
			emit(b, "};\n    tessel_tmap(&%s_tmap%d, tessel_dbufs[%d], %s, %d, dims, strides, box, "
			     "CU_TENSOR_MAP_SWIZZLE_%s);\n    %s_tptr%d = tessel_dbufs[%d];\n  }\n", L->name, j, t->buf,
			     tma_dtype(k->buf[t->buf].dtype), t->rank, t->swizzle == 128 ? "128B" : t->swizzle == 64 ? "64B"
			     : t->swizzle == 32 ? "32B" : "NONE", L->name, j, t->buf);
		}

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
		for (j = 0; j < L->ntmap; j++)
			emit(b, "%s%s_tmap%d", L->narg + j ? ", " : "", L->name, j);
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

/* a vector copy's move: global buffers are aligned by cudaMalloc, shared arrays declared
** __align__(16), register arrays to their element (16-bit ones to 4 bytes: a pair moves) */
static const char *
cuda_vcopy(int n)
{
	return n == 4 ? "unsigned" : n == 8 ? "uint2" : n == 16 ? "uint4" : NULL;
}

/*
** CUDA's atomics on 32-bit words (kernel_atomic_check allows no others)
** and its fences: __threadfence is fence.sc.gpu on sm_70 and later, at
** least the acq_rel the interpreter's release and acquire assume.
*/
static const char *
cuda_atomic(Emit *E, EStage *S, const UOp *s)
{
	static const char *const fn[KA_COUNT] = { "atomicAdd", "atomicMax", "atomicMin", "atomicExch" };

	(void)E;
	(void)S;
	if (s->op == OP_FENCE)
		return s->arg[0] == KF_BLOCK ? "__threadfence_block();" : "__threadfence();";
	return fn[s->arg[0] >= 0 && s->arg[0] < KA_COUNT ? s->arg[0] : 0];
}

const EmitDialect emit_cuda = {
	"cuda", D_C, reserved, ctype, cuda_check, gpu_stage, cuda_head, cuda_tail, gpu_loop, cuda_sync,
	1, cuda_shuffle, hconv, cuda_vload, 1u << AS_GLOBAL, cuda_vcopy, 1u << AS_GLOBAL | 1u << AS_LOCAL | 1u << AS_REG,
	cuda_async, cuda_atomic, "tessel_ex2f", 0
};

/* c.c - the C dialect: a kernel as one C11 translation unit, OpenMP for parallel loops, bound loops run one thread after another. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../interp/sched/sched.h"
#include "emit.h"

/*
** A stage is a function; the entry runs them in order. C has no threads of
** a block, so a stage runs its blocks and threads one after another, which
** is what the interpreter does between barriers: without a barrier or a
** warp operation (refused) a thread runs from start to end alone. When the
** bound loops form one perfect nest (EStage.nest) they print as loops, block
** loops outermost; otherwise the stage loops over its grid and its block
** and each bound loop becomes its guard and coordinate, as CUDA would run it.
** Shared buffers are arrays per block, local ones per thread.
**
** Loop types: THREAD is `#pragma omp parallel for` (outermost only), UPCAST
** `#pragma omp simd`, UNROLL `#pragma GCC unroll n`, each only where the
** iterations are independent (sched_independent, as the schedule checked;
** a hand-written kernel may not be): otherwise the loop stays serial and
** says why.
*/

enum { C_MAXARRAY = 256 * 1024 };   /* bytes of one shared or local array on the stack */

static const char *const reserved[] = {
	/* C11 keywords */
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
	"extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
	"short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
	"volatile", "while", "_Bool", "_Complex", "_Imaginary", "_Alignas", "_Alignof", "_Atomic",
	"_Generic", "_Noreturn", "_Static_assert", "_Thread_local",
	/* what the headers define that the source uses */
	"bool", "true", "false", "NULL", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
	"uint32_t", "uint64_t", "INT64_MAX", "INT64_MIN", "UINT64_MAX", "INFINITY", "NAN", "HUGE_VAL",
	"isnan", "exp2", "log2", "sin", "sqrt", "sqrtf", "trunc", "truncf", "floor", "fmod", "pow",
	"main", "bufs", "omp", "pragma",
	NULL
};

static const char *
ctype(DType t)
{
	switch (t) {
	case DT_BOOL: return "bool";
	case DT_INT8: return "int8_t";
	case DT_INT16: return "int16_t";
	case DT_INT32: return "int32_t";
	case DT_INT64: case DT_INDEX: return "int64_t";
	case DT_UINT8: return "uint8_t";
	case DT_UINT16: return "uint16_t";
	case DT_UINT32: return "uint32_t";
	case DT_UINT64: return "uint64_t";
	case DT_FLOAT32: return "float";
	case DT_FLOAT64: return "double";
	default: return NULL;   /* float16, bfloat16: no arithmetic that rounds as the interpreter does */
	}
}

/* ---- what C refuses ---- */

static int
chk_fn(Emit *E, int st, const UOp *u, void *aux)
{
	const char *stage = E->k->stage[st].name;
	Buf t;

	if ((u->op == OP_IDIV || u->op == OP_MOD) && u->nsrc == 2 && u->dtype == DT_INDEX
	&& u->src[1]->vmin <= 0 && u->src[1]->vmax >= 0) {
		buf_init(&t);
		uop_print(&t, u, D_INFIX);
		err_set(E->e, "c: stage %s: the index expression %s may divide by zero (its divisor ranges over "
		        "[%lld, %lld]); the interpreter stops there, compiled C would trap", stage,
		        t.s ? t.s : "", (long long)u->src[1]->vmin, (long long)u->src[1]->vmax);
		buf_free(&t);
		return -1;
	}
	if (dtype_is_float((DType)u->dtype) && !ctype((DType)u->dtype)) {
		err_set(E->e, "c: stage %s: a %s value; the C backend has no %s arithmetic that rounds as the "
		        "interpreter does (float32 and float64 only)", stage, dtype_name((DType)u->dtype),
		        dtype_name((DType)u->dtype));
		return -1;
	}
	return 0;
}

static int
c_check(Emit *E)
{
	const Kernel *k = E->k;
	int i;

	for (i = 0; i < k->nbuf; i++)
		if (!ctype(k->buf[i].dtype))
			return err_set(E->e, "c: buffer %s is %s; the C backend has no %s arithmetic that rounds as "
			               "the interpreter does (float32 and float64 only)", k->buf[i].name,
			               dtype_name(k->buf[i].dtype), dtype_name(k->buf[i].dtype));
	for (i = 0; i < k->nstage; i++)
		if (emit_each_node(E, i, chk_fn, NULL) < 0)
			return -1;
	return 0;
}

/* ---- the translation unit ---- */

static const struct {
	unsigned bit;
	const char *text;
} helpers[] = {
	{ H_MAXF | H_MINF | H_MAX | H_MIN, "/* max and min as the interpreter takes them: a NaN first operand wins, a NaN second one too */\n" },
	{ H_VEC32,
	  "/* a vectorized loop's float32 lanes, up to 64 bytes at a time (GCC's and Clang's vector types) */\n"
	  "typedef float tessel_f32x16 __attribute__((vector_size(64)));\n"
	  "typedef float tessel_f32x8 __attribute__((vector_size(32)));\n"
	  "typedef float tessel_f32x4 __attribute__((vector_size(16)));\n" },
	{ H_VMAX32,
	  "/* max and min of float32 vectors lane by lane, with tessel_maxf's and tessel_minf's rule for NaNs */\n"
	  "typedef int32_t tessel_i32x16 __attribute__((vector_size(64)));\n"
	  "typedef int32_t tessel_i32x8 __attribute__((vector_size(32)));\n"
	  "typedef int32_t tessel_i32x4 __attribute__((vector_size(16)));\n"
	  "static inline tessel_f32x16 tessel_maxf_x16(tessel_f32x16 a, tessel_f32x16 b)\n"
	  "{ tessel_i32x16 m = (a > b) | (a != a); return (tessel_f32x16)(((tessel_i32x16)a & m) | ((tessel_i32x16)b & ~m)); }\n"
	  "static inline tessel_f32x16 tessel_minf_x16(tessel_f32x16 a, tessel_f32x16 b)\n"
	  "{ tessel_i32x16 m = (a < b) | (a != a); return (tessel_f32x16)(((tessel_i32x16)a & m) | ((tessel_i32x16)b & ~m)); }\n"
	  "static inline tessel_f32x8 tessel_maxf_x8(tessel_f32x8 a, tessel_f32x8 b)\n"
	  "{ tessel_i32x8 m = (a > b) | (a != a); return (tessel_f32x8)(((tessel_i32x8)a & m) | ((tessel_i32x8)b & ~m)); }\n"
	  "static inline tessel_f32x8 tessel_minf_x8(tessel_f32x8 a, tessel_f32x8 b)\n"
	  "{ tessel_i32x8 m = (a < b) | (a != a); return (tessel_f32x8)(((tessel_i32x8)a & m) | ((tessel_i32x8)b & ~m)); }\n"
	  "static inline tessel_f32x4 tessel_maxf_x4(tessel_f32x4 a, tessel_f32x4 b)\n"
	  "{ tessel_i32x4 m = (a > b) | (a != a); return (tessel_f32x4)(((tessel_i32x4)a & m) | ((tessel_i32x4)b & ~m)); }\n"
	  "static inline tessel_f32x4 tessel_minf_x4(tessel_f32x4 a, tessel_f32x4 b)\n"
	  "{ tessel_i32x4 m = (a < b) | (a != a); return (tessel_f32x4)(((tessel_i32x4)a & m) | ((tessel_i32x4)b & ~m)); }\n" },
	{ H_VEC64,
	  "/* a vectorized loop's float64 lanes, up to 64 bytes at a time */\n"
	  "typedef double tessel_f64x8 __attribute__((vector_size(64)));\n"
	  "typedef double tessel_f64x4 __attribute__((vector_size(32)));\n"
	  "typedef double tessel_f64x2 __attribute__((vector_size(16)));\n" },
	{ H_FMAXF | H_FMINF, "/* fast: max and min as the vector units take them (a NaN operand may or may not win) */\n" },
	{ H_FMAXF, "static inline float tessel_fmaxf(float a, float b) { return a > b ? a : b; }\n" },
	{ H_FMINF, "static inline float tessel_fminf(float a, float b) { return a < b ? a : b; }\n" },
	{ H_MAXF, "static inline float tessel_maxf(float a, float b) { return a > b || isnan(a) ? a : b; }\n" },
	{ H_MINF, "static inline float tessel_minf(float a, float b) { return a < b || isnan(a) ? a : b; }\n" },
	{ H_MAX, "static inline double tessel_max(double a, double b) { return a > b || isnan(a) ? a : b; }\n" },
	{ H_MIN, "static inline double tessel_min(double a, double b) { return a < b || isnan(a) ? a : b; }\n" },
	{ H_FMOD,
	  "/* floor modulo of floats: the remainder takes the divisor's sign */\n"
	  "static inline double\ntessel_fmod(double a, double b)\n{\n"
	  "  double m = fmod(a, b);\n\n"
	  "  return m != 0 && (m < 0) != (b < 0) ? m + b : m;\n}\n" },
	{ H_FTOI,
	  "/* a float to an integer: truncated toward zero, NaN is 0, saturated */\n"
	  "static inline int64_t\ntessel_ftoi(double x)\n{\n"
	  "  if (isnan(x))\n    return 0;\n"
	  "  x = trunc(x);\n"
	  "  return x >= 9223372036854775808.0 ? INT64_MAX : x < -9223372036854775808.0 ? INT64_MIN : (int64_t)x;\n}\n" },
	{ H_FTOU,
	  "/* a float to uint64: truncated toward zero, NaN is 0, saturated, negative values wrapped */\n"
	  "static inline uint64_t\ntessel_ftou(double x)\n{\n"
	  "  if (isnan(x))\n    return 0;\n"
	  "  x = trunc(x);\n"
	  "  if (x >= 9223372036854775808.0)\n"
	  "    return x >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)x;\n"
	  "  return x < -9223372036854775808.0 ? (uint64_t)INT64_MIN : (uint64_t)(int64_t)x;\n}\n" },
	{ H_IDIV | H_IMOD | H_UDIV | H_UMOD, "/* floor division and modulo of integers; x // 0 and x % 0 are 0 */\n" },
	{ H_IDIV,
	  "static inline int64_t\ntessel_idiv(int64_t a, int64_t b)\n{\n"
	  "  if (b == 0)\n    return 0;\n"
	  "  if (b == -1)\n    return -a;\n"
	  "  return a / b - (a % b != 0 && (a < 0) != (b < 0));\n}\n" },
	{ H_IMOD,
	  "static inline int64_t\ntessel_imod(int64_t a, int64_t b)\n{\n"
	  "  if (b == 0 || b == -1)\n    return 0;\n"
	  "  return a % b != 0 && (a % b < 0) != (b < 0) ? a % b + b : a % b;\n}\n" },
	{ H_UDIV, "static inline uint64_t tessel_udiv(uint64_t a, uint64_t b) { return b ? a / b : 0; }\n" },
	{ H_UMOD, "static inline uint64_t tessel_umod(uint64_t a, uint64_t b) { return b ? a % b : 0; }\n" },
	{ H_IMAX, "static inline int64_t tessel_imax(int64_t a, int64_t b) { return a > b ? a : b; }\n" },
	{ H_IMIN, "static inline int64_t tessel_imin(int64_t a, int64_t b) { return a < b ? a : b; }\n" },
	{ H_UMAX, "static inline uint64_t tessel_umax(uint64_t a, uint64_t b) { return a > b ? a : b; }\n" },
	{ H_UMIN, "static inline uint64_t tessel_umin(uint64_t a, uint64_t b) { return a < b ? a : b; }\n" },
	{ H_SHL | H_SHR | H_USHR, "/* shifts by a count outside [0, 63] give 0 (-1 for a negative value shifted right) */\n" },
	{ H_SHL, "static inline int64_t tessel_shl(int64_t x, int64_t y) { return y < 0 || y > 63 ? 0 : (int64_t)((uint64_t)x << y); }\n" },
	{ H_SHR, "static inline int64_t tessel_shr(int64_t x, int64_t y) { return y < 0 || y > 63 ? (x >= 0 ? 0 : -1) : x >> y; }\n" },
	{ H_USHR, "static inline uint64_t tessel_ushr(uint64_t x, int64_t y) { return y < 0 || y > 63 ? 0 : x >> y; }\n" },
	{ H_IPOW,
	  "/* integer powers by squaring, wrapping; a negative exponent leaves only 1 and -1 */\n"
	  "static inline int64_t\ntessel_ipow(int64_t x, int64_t y)\n{\n"
	  "  uint64_t r = 1, b = (uint64_t)x;\n\n"
	  "  if (y < 0)\n    return x == 1 ? 1 : x == -1 ? (y % 2 ? -1 : 1) : 0;\n"
	  "  for (; y; y = (int64_t)((uint64_t)y >> 1), b *= b)\n"
	  "    if (y & 1)\n      r *= b;\n"
	  "  return (int64_t)r;\n}\n" },
	{ H_UPOW,
	  "static inline uint64_t\ntessel_upow(uint64_t x, uint64_t y)\n{\n"
	  "  uint64_t r = 1;\n\n"
	  "  for (; y; y >>= 1, x *= x)\n"
	  "    if (y & 1)\n      r *= x;\n"
	  "  return r;\n}\n" },
	{ H_IRECIP, "static inline int64_t tessel_irecip(int64_t x) { return x == 1 ? 1 : x == -1 ? -1 : 0; }\n" },
	{ H_THREEFRY,
	  "/* Threefry 2x32 with 20 rounds (Random123's threefry2x32_20), as tensor.rand draws */\n"
	  "static inline uint64_t\ntessel_threefry(uint64_t ctr, uint64_t key)\n{\n"
	  "  static const int rot[8] = { 13, 15, 26, 6, 17, 29, 16, 24 };\n"
	  "  uint32_t x0 = (uint32_t)ctr, x1 = (uint32_t)(ctr >> 32), ks[3];\n\n"
	  "  ks[0] = (uint32_t)key;\n  ks[1] = (uint32_t)(key >> 32);\n"
	  "  ks[2] = 0x1BD11BDAu ^ ks[0] ^ ks[1];\n"
	  "  x0 += ks[0];\n  x1 += ks[1];\n"
	  "  for (int r = 0; r < 20; r++) {\n"
	  "    x0 += x1;\n"
	  "    x1 = (x1 << rot[r % 8]) | (x1 >> (32 - rot[r % 8]));\n"
	  "    x1 ^= x0;\n"
	  "    if (r % 4 == 3) {\n"
	  "      x0 += ks[(r / 4 + 1) % 3];\n"
	  "      x1 += ks[(r / 4 + 2) % 3] + (uint32_t)(r / 4 + 1);\n"
	  "    }\n  }\n"
	  "  return (uint64_t)x1 << 32 | x0;\n}\n" },
};

static int
c_head(Emit *E, Buf *b)
{
	const Kernel *k = E->k;
	size_t i;
	int j, first = 1, prevmulti = 0;

	emit(b, "/*\n** A tessel kernel as C11 (tessel_kernel at the end runs its stages in order).\n");
	emit_header_line(b, k, KB_INPUT, "inputs:");
	emit_header_line(b, k, KB_OUTPUT, "outputs:");
	emit_header_line(b, k, KB_TEMP, "buffers:");
	emit(b, "** bufs[i] is buffer i's storage, laid out by its layout; the order is");
	for (j = 0; j < k->nbuf; j++)
		emit(b, "%s%s", j ? ", " : " ", k->buf[j].name);
	if (E->fast)
		emit(b, ".\n** Fast: float32 functions (exp2f), max and min without NaN rules, sums the compiler may\n"
		     "** reassociate; build with -O3 -ffast-math -fwrapv, and -fno-tree-sra for speed. Values agree\n"
		     "** with tessel's interpreter within a tolerance, not bit for bit (docs/export.md).\n*/\n");
	else
		emit(b, ".\n** Values agree bit for bit with tessel's interpreter: build with -ffp-contract=off -fwrapv\n"
		     "** -frounding-math, and -fno-tree-sra for speed (backends/jit.c says why).\n*/\n");
	emit(b, "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n");
	/* a blank line before a comment or a function of several lines, and after one */
	for (i = 0; i < sizeof helpers / sizeof helpers[0]; i++) {
		const char *t = helpers[i].text;
		int multi = strchr(t, '\n') != t + strlen(t) - 1 || strncmp(t, "/*", 2) == 0;

		if (!(E->need & helpers[i].bit))
			continue;
		if (first || multi || prevmulti)
			emit(b, "\n");
		emit(b, "%s", t);
		first = 0;
		prevmulti = multi && strchr(t, '{');
	}
	return 0;
}

/* The storage of every shared (scope AS_LOCAL) or local (AS_REG) buffer the stage uses. */
static int
arrays(Emit *E, EStage *S, UAddrSpace scope, int ind)
{
	int b;

	for (b = 0; b < E->k->nbuf; b++) {
		const KBuf *kb = &E->k->buf[b];

		if (kb->scope != scope || !S->use[b])
			continue;
		if (kb->size > C_MAXARRAY / dtype_bytes(kb->dtype))
			return err_set(E->e, "c: stage %s: %s buffer %s holds %lld bytes; the C backend keeps shared "
			               "and local buffers on the stack, at most %d bytes each", E->k->stage[S->st].name,
			               kscope_name(kb->scope), kb->name, (long long)kb->size * dtype_bytes(kb->dtype),
			               C_MAXARRAY);
		emit_indent(E->out, ind);
		emit(E->out, "%s %s[%lld];  /* %s: ", ctype(kb->dtype), E->bname[b], (long long)kb->size,
		     scope == AS_LOCAL ? "shared, one per block" : "local, one per thread");
		emit_comment_text(E->out, kb->layout_desc);
		emit(E->out, " */\n");
	}
	return 0;
}


/*
** The outermost parallel loop of a stage without bound loops, when the
** register arrays can be declared in its body, one per thread: no value
** crosses its iterations through them (sched_regs_private); else NULL, and
** they are declared at the top, shared by the threads, so the loop stays
** parallel only if it does not touch them.
*/
static const UOp *
private_loop(Emit *E, EStage *S, const UOp *s)
{
	char why[200];
	int b;

	for (b = 0; b < E->k->nbuf; b++)
		if (E->k->buf[b].scope == AS_REG && S->use[b])
			break;
	if (b == E->k->nbuf)
		return NULL;
	/* serial loops whose body is one loop, down to the first parallel one */
	while (s->op == OP_END && s->nsrc == 2 && krange_hw(s->src[0]) == HW_NONE
	&& krange_type(s->src[0]) != AX_THREAD)
		s = s->src[1];
	if (s->op != OP_END || krange_type(s->src[0]) != AX_THREAD || krange_hw(s->src[0]) != HW_NONE)
		return NULL;
	return sched_regs_private(E->k, S->st, s, why, sizeof why) ? s : NULL;
}

static int
c_stage(Emit *E, EStage *S)
{
	const Kernel *k = E->k;
	const char *stn = k->stage[S->st].name;
	char names[HW_COUNT][K_NAME + 16];
	int b, n = 0, i, ind = 1, open = 0;

	if (S->sync) {
		char w[200];

		emit_where(S, S->sync, w, sizeof w);
		return err_set(E->e, "c: stage %s: %s %s needs the threads of a block to run together; C runs a "
		               "block's threads one after another, so it takes kernels without barriers, shuffles "
		               "or MMAs (the interpreter runs this one, and so do the cuda and opencl dialects)", stn,
		               S->sync->op == OP_BARRIER ? "the barrier" : S->sync->op == OP_SHUFFLE ? "a shuffle"
		               : S->sync->op == OP_LDMATRIX ? "an ldmatrix" : "an mma", w);
	}
	emit(E->out, "\nstatic void\n%s(", E->sname[S->st]);
	for (b = 0; b < k->nbuf; b++) {
		if (!S->use[b] || k->buf[b].scope != AS_GLOBAL)
			continue;
		emit(E->out, "%s%s%s *restrict %s", n++ ? ", " : "", S->use[b] == 1 ? "const " : "",
		     ctype(k->buf[b].dtype), E->bname[b]);
	}
	emit(E->out, "%s)\n{\n", n ? "" : "void");
	if (S->nest) {
		/* the bound loops print as loops; arrays go inside the innermost block and thread loops */
		if (!S->blockin && arrays(E, S, AS_LOCAL, 1) < 0)
			return -1;
		if (!S->inner && !(S->regin = private_loop(E, S, S->body)) && arrays(E, S, AS_REG, 1) < 0)
			return -1;
		if (emit_stmt(E, S, S->body, 1) < 0)
			return -1;
		emit(E->out, "}\n");
		return 0;
	}
	/* every thread of every block runs the whole stage, one after another */
	memset(names, 0, sizeof names);
	for (i = HW_BLOCK_Z; i >= HW_BLOCK_X; i--) {
		const char *nm;
		char base[16];
		int64_t ext = S->grid[i - HW_BLOCK_X];

		if (!(S->hwused & (1u << i)))
			continue;
		snprintf(base, sizeof base, "block_%c", "xyz"[i - HW_BLOCK_X]);
		if (!(nm = emit_fresh(E, base)))
			return err_set(E->e, "c: out of memory");
		snprintf(names[i], sizeof names[i], "%s", nm);
		emit_indent(E->out, ind);
		emit(E->out, "for (int64_t %s = 0; %s < %lld; %s++) {  /* %s */\n", nm, nm, (long long)ext, nm,
		     hwaxis_name(i));
		ind++;
		open++;
	}
	if (arrays(E, S, AS_LOCAL, ind) < 0)
		return -1;
	if (S->hwused & (1u << HW_WARP | 1u << HW_LANE))
		S->hwused |= 1u << HW_THREAD_X;
	for (i = HW_THREAD_Z; i >= HW_THREAD_X; i--) {
		const char *nm;
		char base[16];
		int64_t ext = S->blk[i - HW_THREAD_X];

		if (!(S->hwused & (1u << i)))
			continue;
		snprintf(base, sizeof base, "thread_%c", "xyz"[i - HW_THREAD_X]);
		if (!(nm = emit_fresh(E, base)))
			return err_set(E->e, "c: out of memory");
		snprintf(names[i], sizeof names[i], "%s", nm);
		emit_indent(E->out, ind);
		emit(E->out, "for (int64_t %s = 0; %s < %lld; %s++) {  /* %s */\n", nm, nm, (long long)ext, nm,
		     hwaxis_name(i));
		ind++;
		open++;
	}
	if (arrays(E, S, AS_REG, ind) < 0)
		return -1;
	/* the coordinates bound loops read (c_loop) */
	for (i = 0; i < HW_COUNT; i++) {
		if (i == HW_WARP)
			snprintf(S->hw[i], sizeof S->hw[i], "%.*s / 32", K_NAME, names[HW_THREAD_X]);
		else if (i == HW_LANE)
			snprintf(S->hw[i], sizeof S->hw[i], "%.*s %% 32", K_NAME, names[HW_THREAD_X]);
		else
			snprintf(S->hw[i], sizeof S->hw[i], "%.*s", K_NAME, names[i]);
	}
	if (emit_stmt(E, S, S->body, ind) < 0)
		return -1;
	while (open--) {
		emit_indent(E->out, --ind);
		emit(E->out, "}\n");
	}
	emit(E->out, "}\n");
	return 0;
}

/* Whether the iterations of loop s may run at once; why not into why. */
static int
independent(Emit *E, EStage *S, const UOp *s, char *why, size_t n)
{
	UOp *l = (UOp *)s;
	Err ie;

	ie.msg[0] = 0;
	/* the register arrays declared in this loop's body are one per thread */
	if (sched_independent_private(E->k, S->st, &l, 1, 0, s == S->regin ? 1u << AS_REG : 0, &ie) == 0)
		return 1;
	/*
	** Too many iterations to enumerate proves nothing either way: the loop's
	** type stands, as the schedule (parallel, apply_opt) or the author gave
	** it, and the JIT's comparison with the interpreter catches a lie. Only
	** two iterations shown to touch one element make the loop serial.
	*/
	if (strstr(ie.msg, "too many iterations") || strstr(ie.msg, "too large to analyze"))
		return 1;
	snprintf(why, n, "%.*s", (int)(n ? n - 1 : 0), ie.msg);
	return 0;
}

static int
c_loop(Emit *E, EStage *S, const UOp *s, int ind)
{
	const UOp *r = s->src[0], *v = krange_var(r);
	HwAxis hw = krange_hw(r);
	AxisType t = krange_type(r);
	int64_t ext = krange_extent(r);
	const UOp *par = NULL, *simd = NULL;
	char note[64], why[200];

	if (r->nsrc != 1 || v->op != OP_VAR || v->arg[0] != 0)
		return err_set(E->e, "c: stage %s: a loop that does not start at 0", E->k->stage[S->st].name);
	emit_loop_note(r, note, sizeof note);
	if (hw != HW_NONE && !S->nest) {
		/* a thread's or a block's coordinate, guarded where the loop is shorter than its axis */
		int64_t dim = hwaxis_is_block(hw) ? S->grid[hw - HW_BLOCK_X] : hw == HW_WARP ? (S->blk[0] + 31) / 32
		            : hw == HW_LANE ? (S->blk[0] < 32 ? S->blk[0] : 32) : S->blk[hw - HW_THREAD_X];

		emit_indent(E->out, ind);
		if (ext < dim)
			emit(E->out, "if (%s < %lld) {  /* %s: %s */\n", S->hw[hw], (long long)ext, v->name, note);
		else
			emit(E->out, "{  /* %s: %s */\n", v->name, note);
		emit_indent(E->out, ind + 1);
		emit(E->out, "const int64_t %s = %s;\n", v->name, S->hw[hw]);
		if (emit_stmts(E, S, s->src + 1, s->nsrc - 1, ind + 1) < 0)
			return -1;
		emit_indent(E->out, ind);
		emit(E->out, "}\n");
		return 0;
	}
	if (t == AX_THREAD && hw == HW_NONE && !S->parallel && S->simd) {
		/* OpenMP admits no parallel region inside simd (the parallel step refuses it too) */
		emit_indent(E->out, ind);
		emit(E->out, "/* serial: inside the vector loop %s */\n", krange_var(S->simd->src[0])->name);
	} else if (t == AX_THREAD && hw == HW_NONE && !S->parallel) {
		if (independent(E, S, s, why, sizeof why)) {
			emit_indent(E->out, ind);
			emit(E->out, "#pragma omp parallel for\n");
			E->uses_omp = 1;
			S->parallel = par = s;
		} else {
			emit_indent(E->out, ind);
			emit(E->out, "/* serial: %s */\n", why);
		}
	} else if (t == AX_UPCAST && hw == HW_NONE) {
		if (independent(E, S, s, why, sizeof why)) {
			int vl = emit_vector_lanes(E, S, s, ind);

			if (vl)
				return vl < 0 ? -1 : 0;
			emit_indent(E->out, ind);
			emit(E->out, "#pragma omp simd\n");
			E->uses_simd = 1;
			if (!S->simd)
				S->simd = simd = s;
		} else {
			emit_indent(E->out, ind);
			emit(E->out, "/* not vectorized: %s */\n", why);
		}
	} else if (t == AX_UNROLL && hw == HW_NONE && ext > 1 && ext <= 65534) {
		emit_indent(E->out, ind);
		emit(E->out, "#pragma GCC unroll %lld\n", (long long)ext);
	}
	emit_indent(E->out, ind);
	emit(E->out, "for (int64_t %s = 0; %s < %lld; %s++) {", v->name, v->name, (long long)ext, v->name);
	emit(E->out, note[0] ? "  /* %s */\n" : "%s\n", note);
	if (S->nest && s == S->blockin && arrays(E, S, AS_LOCAL, ind + 1) < 0)
		return -1;
	if (S->nest && (s == S->inner || s == S->regin) && arrays(E, S, AS_REG, ind + 1) < 0)
		return -1;
	if (emit_stmts(E, S, s->src + 1, s->nsrc - 1, ind + 1) < 0)
		return -1;
	emit_indent(E->out, ind);
	emit(E->out, "}\n");
	if (par)
		S->parallel = NULL;
	if (simd)
		S->simd = NULL;
	return 0;
}

static int
c_sync(Emit *E, EStage *S, const UOp *s, int ind)
{
	/* c_stage refused the stage already */
	return err_set(E->e, "c: stage %s: %s", E->k->stage[S->st].name, uop_info[s->op].name);
}

/* tessel_place / tessel_take: buffers whose layout is not row-major, element by element */
static int
copies(Emit *E, Buf *b, KRole role, const char *fn, const char *what)
{
	const Kernel *k = E->k;
	int i, j, n = 0;

	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		Ex x;

		if (kb->role != role || kb->scope != AS_GLOBAL || emit_row_major(E, i))
			continue;
		if (!n++)
			emit(b, "\n/*\n** %s: %s.\n** 0 for a buffer stored row-major: a plain copy does.\n*/\nint\n%s(int b, void *dst, "
			     "const void *src)\n{\n  switch (b) {\n", fn, what, fn);
		emit(b, "  case %d: {  /* %s @ ", i, kb->name);
		emit_comment_text(b, kb->layout_desc);
		emit(b, " */\n");
		emit(b, "    %s *restrict d = dst;\n    const %s *restrict s = src;\n    int64_t i = 0;\n\n",
		     ctype(kb->dtype), ctype(kb->dtype));
		for (j = 0; j < kb->ndim; j++) {
			emit_indent(b, j + 2);
			emit(b, "for (int64_t %s = 0; %s < %lld; %s++) {\n", kb->lvar[j]->name, kb->lvar[j]->name,
			     (long long)kb->shape[j], kb->lvar[j]->name);
		}
		buf_init(&x.s);
		if (emit_value(E, kb->layout, &x) < 0) {
			buf_free(&x.s);
			return -1;
		}
		emit_indent(b, kb->ndim + 2);
		if (role == KB_INPUT)
			emit(b, "d[%s] = s[i++];\n", x.s.s ? x.s.s : "");
		else
			emit(b, "d[i++] = s[%s];\n", x.s.s ? x.s.s : "");
		buf_free(&x.s);
		for (j = kb->ndim - 1; j >= 0; j--) {
			emit_indent(b, j + 2);
			emit(b, "}\n");
		}
		emit(b, "    return 1;\n  }\n");
	}
	if (n) {
		emit(b, "  default:\n    return 0;\n  }\n}\n");
		*(role == KB_INPUT ? &E->has_place : &E->has_take) = 1;
	}
	return 0;
}

static int
c_tail(Emit *E, Buf *b)
{
	const Kernel *k = E->k;
	int i, j, n;

	emit(b, "\n/* the kernel: its stages in order */\nvoid\ntessel_kernel(void **bufs)\n{\n");
	for (i = 0; i < k->nstage; i++) {
		/* the stage's global buffers in kernel order, as c_stage declared them */
		emit(b, "  %s(", E->sname[i]);
		for (j = 0, n = 0; j < k->nbuf; j++)
			if (k->buf[j].scope == AS_GLOBAL && E->use[(size_t)i * k->nbuf + j])
				emit(b, "%sbufs[%d]", n++ ? ", " : "", j);
		emit(b, ");\n");
	}
	emit(b, "}\n");
	if (copies(E, b, KB_INPUT, "tessel_place", "input b's elements from row-major logical order (src)\n"
	           "** into its storage (dst)") < 0
	|| copies(E, b, KB_OUTPUT, "tessel_take", "output b's elements from its storage (src) into\n"
	          "** row-major logical order (dst)") < 0)
		return -1;
	return 0;
}

/*
** C runs blocks and threads one after another, so an atomic is a plain
** read-modify-write and a fence orders nothing that is not ordered already;
** except inside an OpenMP parallel loop, where the read-modify-write would
** race: refused there.
*/
static const char *
c_atomic(Emit *E, EStage *S, const UOp *s)
{
	if (S->parallel) {
		err_set(E->e, "c: stage %s: an %s inside the parallel loop %s; C writes an atomic as a plain "
		        "read-modify-write, which races under OpenMP (leave the loop serial)", E->k->stage[S->st].name,
		        uop_info[s->op].name, krange_var(S->parallel->src[0])->name);
		return NULL;
	}
	return s->op == OP_FENCE ? "/* fence: blocks and threads run one after another here */" : "";
}

const EmitDialect emit_c = {
	"c", D_C, reserved, ctype, c_check, c_stage, c_head, c_tail, c_loop, c_sync, 0, NULL, NULL, NULL, 0, NULL, 0,
	NULL, c_atomic, NULL, 0
};

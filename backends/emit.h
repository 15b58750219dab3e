/* emit.h - the emitter helpers below every dialect: the shared walk over a kernel, names, stage shapes, statements, value expressions (backends-internal). */
#ifndef TESSEL_EMIT_H
#define TESSEL_EMIT_H

#include "../util/pmap.h"
#include "backend.h"

/*
** One walk serves every dialect of the C family (C, CUDA, OpenCL); a
** dialect is a table of hooks (EmitDialect) over it. What does not depend
** on the dialect is in these files, below every dialect:
**   - emit.c: a private copy of the kernel (offsets are built in its
**     context); names: buffers, stages and loop variables keep the
**     program's names, suffixed with _ where they would clash with the
**     dialect's reserved words, with each other or with the emitter's own
**     (EmitDialect.reserved); per stage: the buffers it reads and writes,
**     its grid and block (as the interpreter derives them), whether its
**     bound loops form one perfect nest (EStage.nest: then a dialect without
**     threads can print them as loops), and its first barrier or warp
**     operation; offsets through the buffers' layouts (kernel_offset,
**     simplified);
**   - expr.c: value expressions with the interpreter's semantics
**     (backend.h), index arithmetic through uop_print in the dialect's
**     syntax, and shared subexpressions of a statement hoisted into named
**     constants;
**   - stmt.c: statements: loops through the dialect's hook, if, stores
**     (x[i] += v for an update), atomics, sequences;
**   - vector_loop.c: short unrolled loops as vector loads or copies.
** A dialect writes the translation unit around that: headers, helpers, one
** function per stage (its signature, its shared and local arrays, how
** bound loops run), the entry point.
**
** Calls go one way, down: source.c (backend_source, which picks the
** dialect) -> the dialects (c.c, cuda.c, opencl.c, triton.c) -> gpu.c (what
** CUDA and OpenCL share, gpu.h) -> vector_loop.c -> stmt.c -> expr.c ->
** emit.c. A file never calls one above it: a dialect's table is known to
** source.c and to the users of emitted code (jit.c, harness.c), not to
** what it is built on.
*/

enum { E_MAXDEPTH = 2000 };

/* C binding strengths, as uop_info's C column has them */
enum {
	P_COND = 3, P_OR = 6, P_XOR = 7, P_AND = 8, P_EQ = 9, P_REL = 10, P_SHIFT = 11, P_ADD = 12,
	P_MUL = 13, P_UNARY = 14, P_ATOM = 100
};

/* An emitted expression: its text, the binding strength of its top
** operator, and its C type as a dtype (DT_FLOAT32 float, DT_FLOAT64
** double, DT_INDEX int64_t, ...). */
typedef struct Ex {
	Buf s;
	int prec;
	DType ct;
} Ex;

/* Helpers a dialect's prelude defines on demand (E->need bits). */
enum {
	H_MAXF = 1 << 0, H_MINF = 1 << 1, H_MAX = 1 << 2, H_MIN = 1 << 3, H_FMOD = 1 << 4,
	H_FTOI = 1 << 5, H_FTOU = 1 << 6, H_IDIV = 1 << 7, H_IMOD = 1 << 8, H_UDIV = 1 << 9,
	H_UMOD = 1 << 10, H_IMAX = 1 << 11, H_IMIN = 1 << 12, H_UMAX = 1 << 13, H_UMIN = 1 << 14,
	H_SHL = 1 << 15, H_SHR = 1 << 16, H_USHR = 1 << 17, H_IPOW = 1 << 18, H_UPOW = 1 << 19,
	H_IRECIP = 1 << 20, H_THREEFRY = 1 << 21,
	H_FMAXF = 1 << 22, H_FMINF = 1 << 23,  /* fast: max and min without the NaN rules */
	H_EX2F = 1 << 24,                      /* fast: the dialect's exp2 of a float32 (fast_exp2) */
	H_VEC32 = 1 << 25, H_VEC64 = 1 << 26,  /* C: the vector types of vector_lanes.c */
	H_VMAX32 = 1 << 27                     /* C: max and min of float32 vectors */
};

typedef struct EStage {
	int st;
	const UOp *body;
	uint8_t *use;          /* per buffer: 1 read, 2 written, 3 both */
	int64_t grid[3], blk[3];
	int nbound;            /* bound loops in the stage */
	unsigned hwused;       /* 1 << HwAxis of every axis a loop binds */
	int nest;              /* the bound loops are one perfect nest on top (below) */
	const UOp *inner;      /* nest: the innermost bound loop (END), or NULL when none */
	const UOp *blockin;    /* nest: the innermost block-bound loop, or NULL */
	const UOp *sync;       /* the first barrier, shuffle or MMA, or NULL */
	const UOp *parallel;   /* the outermost parallel loop being emitted, or NULL */
	const UOp *simd;       /* the outermost omp simd loop being emitted, or NULL */
	const UOp *regin;      /* C: the parallel loop whose body declares the register arrays */
	char hw[HW_COUNT][K_NAME + 24];   /* not nest: each hardware axis's coordinate as an expression */
} EStage;

typedef struct Emit Emit;

typedef struct EmitDialect {
	const char *name;
	Dialect d;                      /* uop_print's dialect for index arithmetic */
	const char *const *reserved;    /* NULL-terminated: names the source must not declare */
	/* The C type of a value of dtype t ("float", "int64_t"); NULL: refused. */
	const char *(*type)(DType t);
	/* Refusals that need the whole kernel, before anything is written. */
	int (*check)(Emit *E);
	/* The translation unit: E->out gets the stages (stage), then head and tail
	** are wrapped around (head sees E->need, filled by the stages). */
	int (*stage)(Emit *E, EStage *S);
	int (*head)(Emit *E, Buf *b);
	int (*tail)(Emit *E, Buf *b);
	/* A loop statement (END), bound or not; the hook prints the body with
	** emit_stmts. */
	int (*loop)(Emit *E, EStage *S, const UOp *s, int ind);
	/* A barrier or an MMA statement. */
	int (*sync)(Emit *E, EStage *S, const UOp *s, int ind);
	/* Math functions are overloaded (C++, OpenCL C): a float32 argument of an
	** operation the interpreter computes in double is cast to double first. */
	int overloads;
	/* A SHUFFLE value into x (x->s initialized); NULL: refused. */
	int (*shuffle)(Emit *E, const UOp *u, Ex *x);
	/* The function converting a value of dtype from to dtype to where either
	** is float16 or bfloat16 (from float32 or float64, or to float32); NULL:
	** the dialect has no such values. Half values widen to float32 (exact)
	** wherever they are used, and round once from the value as a double
	** where they are stored, as the interpreter rounds them. */
	const char *(*hconv)(DType from, DType to);
	/* A vector load (emit_vector_loop): w float32 values of buffer b from
	** offset off, which is a multiple of w, written to E->out as the right
	** side of `const floatw name = ...;`; NULL: no vector loads. vscopes:
	** the buffer scopes it takes (1 << AS_GLOBAL, ...). */
	void (*vload)(Emit *E, int b, int w, const Ex *off);
	unsigned vscopes;
	/* The type that moves n = 4, 8 or 16 bytes at once (a vector copy,
	** emit_vector_loop), or NULL; vcscopes: the buffer scopes it takes. */
	const char *(*vcopy)(int n);
	unsigned vcscopes;
	/* An asynchronous statement (CP_ASYNC, CP_COMMIT, CP_WAIT; WGMMA,
	** WG_FENCE, WG_COMMIT, WG_WAIT); NULL: refused, naming the statement. */
	int (*async)(Emit *E, EStage *S, const UOp *s, int ind);
	/* An ATOMIC: the function that updates the element and returns its old
	** value, called as fn(&buf[off], value) ("atomicAdd"), or "" for a plain
	** read-modify-write (blocks run one after another); a FENCE: the
	** statement ("__threadfence();"). NULL, with E->e set: refused. NULL
	** hook: every atomic and fence refused. */
	const char *(*atomic)(Emit *E, EStage *S, const UOp *s);
	/* fast: the function a float32 exp2 calls (the prelude defines it under
	** H_EX2F), or NULL for exp2f. */
	const char *fast_exp2;
	/* Its float32 math functions take the double ones' names, overloaded (OpenCL C
	** has sqrt(float), no sqrtf); 0: the C names (sqrtf). */
	int f32_overloaded;
} EmitDialect;

struct Emit {
	const EmitDialect *D;
	const Kernel *k0;      /* the caller's kernel */
	Kernel *k;             /* the copy walked and extended (offsets) */
	Buf *out;              /* where statements go */
	Err *e;
	unsigned need;         /* H_* helpers used */
	int fast;              /* EmitInfo.fast */
	int uses_omp, uses_simd, has_place, has_take;
	uint8_t *use;          /* use[st * nbuf + b]: stage st reads (1), writes (2) buffer b */
	char (*bname)[K_NAME + 16];  /* the buffers' names in the source */
	char (*sname)[K_NAME + 16];  /* the stages' names in the source */
	char **taken;          /* every name in use: reserved, buffers, stages, loop variables */
	int ntaken, captaken;
	PMap pure;             /* node -> (void *)1 pure index arithmetic, (void *)2 not */
	PMap off;              /* INDEX node -> its offset expression */
	PMap hoist;            /* node -> its C type (a byte) and name within the current statement */
	int ntemp;             /* hoisted constants so far in the stage */
	/* a reduction accumulated in a local variable (promote in stmt.c): the store it
	** replaces, the load of the element it stands for, and its name */
	const UOp *accstore, *accload;
	const char *accname;
	PMap vec;              /* LOAD node -> its component of a vector load ("K_v.x") */
	char **owned;          /* strings the maps point at */
	int nowned, capowned;
	void *aux;             /* the dialect's state for this walk (EmitInfo.aux) */
};

/* What a translation unit needs from its compiler. */
typedef struct EmitInfo {
	int omp;     /* a parallel loop: -fopenmp */
	int simd;    /* a vectorized loop: -fopenmp-simd at least */
	int place;   /* tessel_place is defined (an input is not row-major) */
	int take;    /* tessel_take is defined */
	int fast;    /* in: BSourceOpts.fast (backend.h) */
	void *aux;   /* in: the dialect's state for the walk (Emit.aux) */
} EmitInfo;

/* run_check.c: a run's inputs checked as kernel_run checks them (who names the
** backend in the message), and its outputs compared with the interpreter's. */
int emit_check_inputs(const Kernel *k, const TBuf *bufs, const char *who, Err *e);
typedef struct EMismatch {
	int buf;               /* the output that differs */
	int64_t n, bad, first; /* its elements, how many differ, the first (row-major) */
	double tol;            /* the tolerance applied (0: bit for bit) */
	double got, want;      /* the first pair */
	Buf where;             /* "out[2, 7]" (the caller frees it) */
} EMismatch;
/* How outputs compare: bit for bit (NaNs alike), within backend_tolerance (fast
** source), or within 8 units of the output's rounding error (emit_unit) for a
** device's double exp2, log2, sin and pow, which are not the C library's. */
enum { EM_EXACT, EM_FAST, EM_DEVICE };
/* 1 and m filled at the first output with elements that differ (how: EM_*),
** 0 when all agree. */
int emit_mismatch(const Kernel *k, const TBuf *got, const TBuf *want, int how, EMismatch *m);
/* What a device computes differently from the interpreter: MMAs (the tensor
** cores' sums), exp2, log2, sin and pow (its double functions, within a few
** units in the last place of the C library's, not correctly rounded). */
typedef struct EKinds {
	int mma, approx;
} EKinds;
void emit_kinds(const Kernel *k, EKinds *kd);
/* The unit of t's rounding error relative to the value (2^-24 for float32,
** 2^-53 float64, 2^-11 float16, 2^-8 bfloat16), 0 for integers and bool. */
double emit_unit(DType t);

/* emit.c */
int emit_kernel(Buf *b, const Kernel *k, const EmitDialect *D, EmitInfo *info, Err *e);
/* Every node of stage st's body once (depth-first); fn's -1 stops the walk and is returned. */
int emit_each_node(Emit *E, int st, int (*fn)(Emit *E, int st, const UOp *u, void *aux), void *aux);
/* "<dialect>: out of memory" into E->e; returns -1. */
int emit_oom(Emit *E);
/* A copy of s kept until the walk ends; NULL when out of memory. */
char *emit_own(Emit *E, const char *s);
/* s inside a C comment: a star followed by a slash is written with a space between. */
void emit_comment_text(Buf *b, const char *s);
/* The header comment's line for the buffers of one role: "**   inputs:  X: float32[4, 8], ..."
** (shape, scope when not global, layout when not row-major), wrapped at 96 columns. */
void emit_header_line(Buf *b, const Kernel *k, KRole role, const char *label);
/* A name not in use, base or base_1, base_2, ... (now taken); NULL when out of memory. */
const char *emit_fresh(Emit *E, const char *base);
/* An op of index arithmetic (what uop_print writes in every dialect). */
int emit_index_op(int op);
int emit_taken(const Emit *E, const char *name);
/* Indentation: two spaces a level. */
void emit_indent(Buf *b, int ind);
/* Every node under the roots once, sources first; fn's -1 stops the walk
** (-2: out of memory). With E, loads and stores reach the offsets of their
** INDEX nodes (emit_child). */
int emit_walk(Emit *E, const UOp *const *roots, int nroots, int (*fn)(void *, const UOp *), void *aux);
const UOp *emit_child(Emit *E, const UOp *u, int i);
/* Whether u mentions var (memo: node -> 1 no, 2 yes; too deep counts as yes). */
int emit_mentions(PMap *memo, const UOp *u, const UOp *var, int depth);
/* Whether u is index arithmetic on index and bool values only, which uop_print prints. */
int emit_pure(Emit *E, const UOp *u);
/* Whether buffer b's layout is row-major over its shape with storage of its size. */
int emit_row_major(Emit *E, int b);
/* The physical offset of element (idx[0..ndim-1]) of buffer b, simplified. */
UOp *emit_offset(Emit *E, int b, UOp *const *idx);
/* The offset of an INDEX node (kept in E->off), or NULL with E->e set. */
UOp *emit_index_offset(Emit *E, const UOp *ix);
/* The statement path to s as text ("in loops i, j"), for refusals. */
void emit_where(const EStage *S, const UOp *s, char *out, size_t n);
int64_t emit_numel(const KBuf *b);

/* expr.c */
void ex_init(Ex *x);
void ex_free(Ex *x, int n);
/* A value expression into x (x->s initialized by the caller). */
int emit_value(Emit *E, const UOp *u, Ex *x);
/* x converted to dtype t as the interpreter's CAST converts. */
int emit_convert(Emit *E, Ex *x, DType t);
/* x's text into b, parenthesized when it binds looser than prec. */
void emit_operand(Buf *b, const Ex *x, int prec);
/* The dialect's C type of dtype t, or "?". */
const char *emit_ctype(Emit *E, DType t);
/* The values the roots use more than once, written before the statement as
** named constants (at indentation ind) that emit_value then prints by name,
** until emit_unhoist; 0, or -1 with E->e set. */
int emit_hoist(Emit *E, UOp *const *roots, int n, int ind);
void emit_unhoist(Emit *E);

/* float32 and float64: the dtypes C computes in */
static inline int
isf(DType t)
{
	return t == DT_FLOAT32 || t == DT_FLOAT64;
}

/* float16 and bfloat16: a dialect's 16-bit storage types, computed through float32 (EmitDialect.hconv) */
static inline int
ishalf(DType t)
{
	return t == DT_FLOAT16 || t == DT_BFLOAT16;
}

/* stmt.c */
/* Statements of a body, one a line, at indentation ind. */
int emit_stmts(Emit *E, EStage *S, UOp *const *s, int n, int ind);
int emit_stmt(Emit *E, EStage *S, const UOp *s, int ind);
/* A loop's comment: its axis type and hardware axis ("reduce", "block.x"), "" for a plain loop. */
const char *emit_loop_note(const UOp *range, char *buf, size_t n);

/* vector_loop.c */
/* The loop s (UPCAST or UNROLL) written as one vector copy, or (2 or 4
** iterations) as vector loads and its body once per iteration, when that
** applies (vector_loop.c says when):
** 1 written, 0 not taken (the caller writes the loop), -1 an error. */
int emit_vector_loop(Emit *E, EStage *S, const UOp *s, int ind);

/* vector_lanes.c */
/* The C dialect's vectorized loop s (UPCAST, its iterations independent) as
** GCC vector types, 64 bytes a step, when its body allows (vector_lanes.c
** says when): 1 written, 0 not taken (the caller writes omp simd), -1 an error. */
int emit_vector_lanes(Emit *E, EStage *S, const UOp *s, int ind);

/* harness.c: write dir/name (its name appended to files, which may be NULL);
** make dir and its missing parents. Both return -2 with e set on failure. */
int export_write(const char *dir, Buf *files, const char *name, const void *data, size_t len, Err *e);
int export_mkdir(const char *dir, Err *e);

/* c.c */
extern const EmitDialect emit_c;

#endif

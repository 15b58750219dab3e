/* backend.h - device code: a kernel as source in a dialect (C now; CUDA, OpenCL, Triton to come), and the C JIT. */
#ifndef TESSEL_BACKEND_H
#define TESSEL_BACKEND_H

#include "../interp/kernel.h"

/* emit.c */
/*
** The kernel as one translation unit in dialect d, appended to b. D_C is
** implemented (c.c); other dialects are refused with a message naming what
** exists. A construct the dialect cannot express is refused, naming the
** stage and the statement: for C, barriers, shuffles and MMAs (the threads
** of a block would have to run together), float16 and bfloat16 values, and
** an index division whose divisor may be zero.
**
** The C source (docs/export.md) holds one `static void <stage>(...)` per
** stage, taking the global buffers it uses as restrict pointers, and the
** entry `void tessel_kernel(void **bufs)`, bufs[i] the storage of buffer i
** (kernel order; NULL for shared and local ones) laid out by its layout.
** When a global input or output has a layout other than row-major it also
** defines `void tessel_place(int b, void *dst, const void *src)` (row-major
** logical order to storage) and `void tessel_take(int b, void *dst, const
** void *src)` (storage to row-major logical order).
**
** Values follow the interpreter bit for bit (kernel_run.c): a float32
** operation is one IEEE float32 operation where that equals the
** interpreter's double operation rounded once to float32 (+ - * / sqrt,
** comparisons, min, max, select); everything else (exp2, log2, sin, pow,
** floor division, modulo, multiply-add, mixed operands) is computed in
** double with the same libm and rounded once, as the interpreter does. The
** compiler must not contract a*b+c (the JIT passes -ffp-contract=off),
** integers wrap (-fwrapv), and GCC must not fold 0.0 - x into -x
** (-frounding-math).
*/
int backend_source(Buf *b, const Kernel *k, Dialect d, Err *e);

/* jit.c */
/*
** A cache of compiled kernels: source and flags hashed, each compiled once
** into a shared object in one private directory (mkdtemp under $TMPDIR or
** /tmp) that lives as long as the cache. Per process, owned by the caller
** (the Lua front end keeps one per Lua state); freeing it unloads the
** objects and removes the directory.
*/
typedef struct BJitCache BJitCache;
BJitCache *backend_jit_cache_new(void);
void backend_jit_cache_free(BJitCache *c);
int backend_jit_cache_size(const BJitCache *c);   /* kernels held */

typedef struct BJitStats {
	int cached;            /* the shared object came from the cache */
	double compile_s;      /* wall seconds emitting and compiling (0 when cached) */
	double run_s;          /* wall seconds of tessel_kernel alone */
	double check_s;        /* wall seconds of the interpreter's run (the cross-check) */
} BJitStats;

typedef struct BJitOpts {
	int no_check;          /* skip the cross-check against the interpreter */
	const char *cc;        /* the compiler: NULL is "cc", searched in PATH */
	const char *const *flags;   /* more flags after the fixed ones, NULL-terminated (or NULL) */
	BJitCache *cache;      /* NULL: compile into a fresh directory, removed afterwards */
	const KRunOpts *interp;     /* the cross-check's interpreter options (NULL: checks on) */
	BJitStats *stats;      /* filled when not NULL */
} BJitOpts;

/*
** Run k as compiled C, with kernel_run's contract on bufs: the caller fills
** the inputs (row-major logical order); outputs come back allocated,
** row-major; temporaries are left empty. The source is compiled with
**   cc -std=c11 -O2 -march=native -fPIC -shared -ffp-contract=off -fwrapv
**      -frounding-math [-fopenmp | -fopenmp-simd] <flags> -o k1.so k1.c -lm
** (-fopenmp when a loop is parallel, -fopenmp-simd when one is only
** vectorized) by fork and execv of the compiler (no shell), the compiler's
** path looked up in PATH before the fork. Unless o->no_check, the
** interpreter runs first on the same inputs (its checks catch races and
** out-of-bounds accesses before native code runs) and every output must
** agree bit for bit (NaNs with NaNs); the first disagreement is an error.
** Compiler errors come back in e with the compiler's first message and the
** emitted line it points at.
*/
int backend_jit_run(const Kernel *k, TBuf *bufs, const BJitOpts *o, Err *e);
/* The fixed flags, space-separated, with the OpenMP flag a kernel needs (for docs and messages). */
void backend_jit_flags(Buf *b, const Kernel *k);

#endif

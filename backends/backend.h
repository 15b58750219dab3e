/* backend.h - device code: a kernel as source in a dialect (C, CUDA, OpenCL, Triton), the C JIT, OpenCL runs, exported harnesses. */
#ifndef TESSEL_BACKEND_H
#define TESSEL_BACKEND_H

#include "../interp/kernel/kernel.h"

/*
** The room backends/ (docs/architecture.md): device code from kernels. It uses
** interp/sched/ (search, tile IR), interp/dist/ (the NCCL export), interp/kernel/
** and what is below them; nothing in it knows Lua, and viz/ is its sibling.
** Inside, calls go one way (emit.h says it in full): source.c picks the dialect
** -> c.c, cuda.c, opencl.c, triton.c -> gpu.c -> vector_loop.c -> stmt.c ->
** expr.c -> emit.c; jit.c, opencl_run.c, harness.c, nccl.c and search.c run or
** write what the dialects print.
*/

/* source.c */
/*
** The kernel as one translation unit in dialect d, appended to b: D_C
** (c.c), D_CUDA (cuda.c), D_OPENCL (opencl.c) and D_TRITON (triton.c,
** below). A construct the dialect cannot express is
** refused, naming the stage and the statement: for C, barriers, shuffles
** and MMAs (the threads of a block would have to run together), float16 and
** bfloat16 values, and an index division whose divisor may be zero; for
** CUDA and OpenCL, a barrier under a thread guard (gpu.h), blocks past the
** device's limits, the index division; for OpenCL also shuffles, MMAs,
** float16 and bfloat16 (bool is a uchar there).
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
** Values follow the interpreter bit for bit (interp/kernel/run.h): a float32
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
/*
** Fast source trades the interpreter's bits for speed: a float32 operation
** the interpreter computes in double (exp2, log2, sin, pow, floor division,
** multiply-add) is one float32 operation (exp2f, ...), and float32 max and
** min are a > b ? a : b (vector max instructions; a NaN operand may or may
** not win). The C JIT then builds with -O3 -ffast-math (sums reassociate,
** loops with exp2f vectorize through glibc's libmvec), CUDA exports without
** -fmad=false, and results are compared with the interpreter's within a
** tolerance (backend_tolerance) instead of bit for bit.
*/
typedef struct BSourceOpts {
	int fast;
	int num_warps, num_stages;   /* Triton: every launch's (0: Triton's defaults, 4 and 3) */
} BSourceOpts;
int backend_source_opts(Buf *b, const Kernel *k, Dialect d, const BSourceOpts *o, Err *e);
/* run_check.c: how far a fast (or approximate) float result of dtype t may
** be from the interpreter's, relative to max(|want|, 1): 1e-4 float32, 1e-9
** float64, 1e-2 float16 and bfloat16, 0 (exact) for integers and bool. */
double backend_tolerance(DType t);
/*
** The Triton source (triton.c, docs/export.md) is a Python module: one
** @triton.jit function <stage>_kernel per stage, its tiles those of the tile
** view (tile_ir_stmt), block-bound loops (or, in a stage without bound
** loops, its leading independent loops) as tl.program_id, and the host
** function tessel_launch(bufs), bufs the storage of every buffer (kernel
** order) as device tensors. Values are close to the interpreter's, within
** the tolerances the header states, not bit for bit. Refused, naming the
** stage and the statement: barriers, shuffles, MMAs, thread-bound loops,
** shared and register buffers, pow, threefry, shifts and integer division
** of values, tiles over 2^20 elements.
*/
int triton_source(Buf *b, const Kernel *k, Err *e);
int triton_source_opts(Buf *b, const Kernel *k, const BSourceOpts *o, Err *e);
/*
** The CUDA source (docs/export.md) holds one `__global__ void <stage>(...)`
** per stage, taking the global buffers it uses, and the host entry
** `extern "C" void tessel_launch(void **dbufs, cudaStream_t s)`, which
** launches the stages in order, each on its grid and block; dbufs[i] is
** buffer i's device storage laid out by its layout (NULL for shared and
** local ones). tessel_place and tessel_take are host functions as in C.
** Build with nvcc -arch=sm_90 -fmad=false. The OpenCL source holds one
** `__kernel void <stage>(...)` per stage; a table at its end says how to
** launch them (global size grid * block, local size block, the arguments).
*/

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
	int fast;              /* fast source (BSourceOpts), -O3 -ffast-math, compared within backend_tolerance */
} BJitOpts;

/*
** Run k as compiled C, with kernel_run's contract on bufs: the caller fills
** the inputs (row-major logical order); outputs come back allocated,
** row-major; temporaries are left empty. The source is compiled with
**   cc -std=c11 -O2 -march=native -fPIC -shared -ffp-contract=off -fwrapv
**      -frounding-math -fno-tree-sra [-fopenmp | -fopenmp-simd] <flags> -o k1.so k1.c -lm
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

/* opencl_run.c */
/*
** OpenCL through the ICD loader, opened with dlopen when a session first
** runs a kernel (tessel builds and runs without OpenCL). A session holds the
** loader, the first platform that has a device, a context and a queue; the
** Lua front end keeps one per Lua state.
*/
typedef struct BClSession BClSession;
BClSession *backend_cl_new(void);
void backend_cl_free(BClSession *s);
/* Whether s can run kernels; device (may be NULL) gets "platform: device", e why not. */
int backend_cl_available(BClSession *s, char *device, size_t n, Err *e);

typedef struct BClStats {
	double build_s;        /* wall seconds emitting and building the program */
	double run_s;          /* wall seconds of the launches, to the queue's end */
	double check_s;        /* wall seconds of the interpreter's run (the cross-check) */
	char device[256];      /* "platform: device" */
} BClStats;

typedef struct BClOpts {
	int no_check;          /* skip the cross-check against the interpreter */
	BClSession *session;   /* NULL: one for this call */
	const KRunOpts *interp;     /* the cross-check's interpreter options (NULL: checks on) */
	BClStats *stats;       /* filled when not NULL */
} BClOpts;

/*
** Run k as OpenCL C (backend_source D_OPENCL), with kernel_run's contract
** on bufs, as backend_jit_run. The program is built with
** -cl-fp32-correctly-rounded-divide-sqrt where the device offers it; global
** buffers start zeroed, inputs placed through their layouts. Unless
** o->no_check, the interpreter runs first and every output must agree bit
** for bit (NaNs with NaNs). No loader, no platform, a build error or a
** launch past the device's limits come back in e.
*/
int backend_cl_run(const Kernel *k, TBuf *bufs, const BClOpts *o, Err *e);

/* harness.c */
/* Input b of k drawn as tessel draws unbound inputs (k:counts, exports):
** element i from Threefry(i, b + 1), a float in [0, 1) or an integer in
** [0, 7). t->data holds numel elements of b's dtype. */
void backend_draw(const Kernel *k, int b, TBuf *t);

typedef struct BExportOpts {
	const TBuf *inputs;    /* per buffer (kernel order), or NULL: an input without data is
	                       ** realized from its tensor (lowered kernels) or drawn (backend_draw) */
	int reps;              /* timed runs (0: 20) */
	int warmup;            /* warm-up runs (0: 3; negative: none) */
	Buf *files;            /* gets the names of the files written, one a line (may be NULL) */
	int fast;              /* fast source (BSourceOpts); outputs compared within backend_tolerance */
} BExportOpts;

/*
** Write into dir (made if missing, with its parents) the kernel's
** source in dialect d (c, cuda, opencl), a host program that draws the
** inputs as tessel does, runs the kernel, compares its outputs with the
** interpreter's (run now, saved as ref_<buffer>.bin) and prints the median
** time of repeated runs, and a Makefile: `make -C dir` builds and runs it
** where the toolchain is (docs/export.md). Returns 0; -1 when the dialect
** refuses the kernel or the interpreter fails (nothing written); -2 when
** the directory or a file cannot be written.
*/
int backend_export(const Kernel *k, Dialect d, const char *dir, const BExportOpts *o, Err *e);

/* nccl.c */
/*
** A distributed program (interp/dist.h) as CUDA and host code on NCCL, one
** thread a GPU: dir gets plan.txt, a .cu file per kernel, dist.cu (the
** program, includable by a bench), main.cu (`./dist check` against the CPU
** simulation's outputs saved in data/, `./dist time`) and a Makefile
** (docs/distributed.md). inputs: per tensor, logical values (row-major), or
** NULL entries drawn as dist_scatter draws them; no_check: no data/ and no
** simulation (sizes the interpreter cannot run). Returns 0, -1 when a kernel
** or a dtype is refused (nothing written), -2 when a file cannot be written.
*/
struct DistProgram;
typedef struct BDistExportOpts {
	const TBuf *inputs;
	int fast;
	int no_check;
	Buf *files;
} BDistExportOpts;
int backend_export_dist(const struct DistProgram *p, const char *dir, const BDistExportOpts *o, Err *e);

/* search.c */
/*
** Schedule search, timed on the C JIT. Two modes:
**   a grid (TVM's knobs): parameters, each a list of integers, and apply,
**     which takes one value per parameter and applies its steps to a copy of
**     the schedule as it is now (so a scheduled kernel is searched further);
**     the cartesian product in order, or, when it holds more than budget
**     points, budget of them in a seeded random order;
**   BEAM (tinygrad's, when apply is NULL): OptOps on the stages' loops
**     with tinygrad's amounts (search.c lists them; ops chooses which), the
**     beam fastest candidates kept per round, a round applying every action
**     to each of them, until a round's best gains less than min_progress on
**     the beam's best (that round is not taken), or the budget or the time
**     runs out. A candidate whose kernel (printed) was tried already is skipped.
** Every candidate is checked by sched_verify (unless no_verify) before
** native code runs, compiled and run once (the warm-up), its outputs
** compared with the starting schedule's compiled outputs (tolerances per
** dtype, as sched_verify's), then timed: the median of reps runs of
** tessel_kernel alone, on inputs drawn once (backend_draw) and reused.
** The starting schedule is timed the same way first (the baseline). A wrong
** candidate never wins; a refused one (apply failed, or sched_apply_opt
** refused) is a row in a grid and a count in BEAM. The winner's steps end
** up in s (sched_trace replays them); nothing changes on an error.
*/
enum { BSEARCH_MAXPARAM = 16, BSEARCH_MAXOPT = 32 };
struct Schedule;   /* interp/sched/sched.h */

typedef struct BSearchParam {
	const char *name;
	const int64_t *vals;
	int nvals;
} BSearchParam;

/* one OptOp of a BEAM candidate: s:apply_opt(op, stage, loop, arg), SWAP with other */
typedef struct BSearchOpt {
	char op[12];
	char stage[K_NAME];
	char loop[K_NAME];
	int64_t arg;
	char other[K_NAME];
} BSearchOpt;

typedef enum BSearchStatus {
	BS_OK,
	BS_REFUSED,          /* apply (or an OptOp) refused the step */
	BS_WRONG,            /* sched_verify failed, or the outputs differ from the baseline's */
	BS_COMPILE,          /* the C backend refused the kernel or the compiler failed */
} BSearchStatus;
const char *backend_search_status(BSearchStatus st);   /* "ok", "refused", "wrong", "compile error" */

typedef struct BSearchRow {
	int64_t val[BSEARCH_MAXPARAM];   /* grid: the parameters' values */
	BSearchOpt *opt;     /* BEAM: the OptOps after the starting schedule (owned) */
	int nopt;
	BSearchStatus status;
	char *msg;           /* why it is not ok (owned), or NULL */
	double time_s;       /* median seconds; 0 when not timed */
	double speedup;      /* baseline_s / time_s; 0 when not timed */
	int same_as;         /* grid: the earlier row whose kernel this one repeats, or -1 */
} BSearchRow;

typedef struct BSearchOpts {
	const BSearchParam *param;   /* the grid (nparam <= BSEARCH_MAXPARAM) */
	int nparam;
	/* the candidate's steps on s (a copy): 0, or -1 with e saying why (a refused row) */
	int (*apply)(struct Schedule *s, const int64_t *vals, void *aux, Err *e);
	void *aux;
	const char *const *ops;      /* BEAM: the OptOps tried, NULL-terminated; NULL: UPCAST, UNROLL,
	                             ** THREAD, SWAP (LOCAL, GROUP, GROUPTOP, PADTO on request) */
	int beam;            /* BEAM width (0: 4) */
	int budget;          /* candidates tried at most (0: 64) */
	int reps;            /* timed runs per candidate (0: 5) */
	int no_verify;       /* skip sched_verify: a wrong candidate then runs natively, unchecked */
	int trials;          /* sched_verify's trials per candidate (0: 1) */
	double time_s;       /* wall-clock limit in seconds (0: none) */
	uint64_t seed;       /* the grid's random order, BEAM's order within a round */
	double min_progress; /* BEAM: the relative gain a round must make to go on (0: 0.01) */
	const TBuf *inputs;  /* per buffer of s->k (kernel order), or NULL: an input without data
	                     ** is realized from its tensor (lowered kernels) or drawn */
	BJitCache *cache;    /* NULL: one for this search */
	/* before the first candidate and after each (a front end's progress bar); best_s is
	** the fastest correct time so far, the baseline's included */
	void (*progress)(int done, int total, double best_s, void *aux);
	void *progress_aux;
} BSearchOpts;

typedef struct BSearchResult {
	int beam;            /* the mode: 1 BEAM, 0 grid */
	int nparam;
	char pname[BSEARCH_MAXPARAM][K_NAME];
	BSearchRow *row;     /* in the order tried */
	int nrow, caprow;
	int best;            /* the winning row, or -1: the starting schedule stays (BEAM) */
	double baseline_s;   /* the starting schedule's median seconds */
	double best_s;       /* the winner's (baseline_s when best is -1) */
	int total;           /* candidates the search meant to try (the grid's size, or budget) */
	int refused;         /* BEAM: actions sched_apply_opt refused (no row) */
	int duplicates;      /* BEAM: candidates whose kernel was tried already (no row) */
	int rounds;          /* BEAM: rounds run */
	double wall_s;       /* seconds the search took */
	char stop[128];      /* why it ended: "every candidate tried", "budget", "time limit", ... */
} BSearchResult;

/* Search as above; 0 with r filled (free with backend_search_free), or -1
** with e saying why: bad options, the starting schedule does not run as C
** or fails verification, Ctrl-C ("interrupted"). */
int backend_search(struct Schedule *s, const BSearchOpts *o, BSearchResult *r, Err *e);
void backend_search_free(BSearchResult *r);
/* r as an aligned table: a summary line, then one row a candidate, fastest
** first (the winner marked *), then those that failed, in the order tried. */
void backend_search_table(Buf *b, const BSearchResult *r);
/* A BEAM row's OptOps as text: "UPCAST c.j 4, THREAD c.i 2" ("(none)" when n is 0). */
void backend_search_opts(Buf *b, const BSearchOpt *opt, int n);

/* jit.c, for the search: backend_jit_run, then reps more runs of the same
** compiled kernel on the same inputs (every other buffer zeroed again first),
** tessel_kernel alone timed into run_s[0..reps-1]; one emission, one lookup.
** Stops with "interrupted" on Ctrl-C. */
int backend_jit_time(const Kernel *k, TBuf *bufs, const BJitOpts *o, int reps, double *run_s, Err *e);

#endif

/* gpu.h - what the GPU dialects (CUDA, OpenCL C) share: stages as kernels, bound loops as thread coordinates, guards, barriers, launches (backends-internal). */
#ifndef TESSEL_GPU_H
#define TESSEL_GPU_H

#include "emit.h"

/*
** A stage is one kernel launched over its grid and block (EStage.grid,
** EStage.blk, as the interpreter derives them). Every thread runs the
** stage's statements; a loop bound to a hardware axis is not a loop but the
** thread's or block's coordinate on that axis,
**
**     const int64_t tx = threadIdx.x;  (get_local_id(0) in OpenCL)
**
** and where the loop is shorter than its axis, a guard around its body:
**
**     if (tx < 16) { ... }
**
** A thread past the guard skips the body, as in the interpreter. A barrier
** (or a shuffle or MMA, which gather a warp) that some threads of a block
** skip is undefined on a GPU, and the interpreter stops there too (its
** barriers are numbered: a thread that skips one waits at another, or has
** finished). So guards hold the statements between barriers, never a
** barrier: the IR already puts barriers between thread loops, the loops as
** long as their axis need no guard, and a guarded barrier is refused with the
** loop that guards it. A warp operation under a guard that keeps or drops
** whole warps is kept.
**
** Declarations of coordinates go where the loop stands when nothing follows
** it in its C block (the usual nest of bound loops on top of a stage prints
** flat); otherwise in braces, since sibling loops may share a variable.
*/

/* One stage's launch: its kernel's name in the source, its grid and block,
** the global buffers it takes (kernel order), its shared memory (dynamic:
** one extern array, passed in the launch, past 48 KiB in CUDA). */
/* A TMA tensor map a stage takes (CUDA): the global buffer, innermost first
** its dims, byte strides (strides[0] the element's) and box, the swizzle in
** bytes; dst the shared buffer it writes (aligned to 1024 bytes). */
enum { GPU_MAXTMAP = 8 };
typedef struct GpuTmap {
	int buf, dst, rank, swizzle;
	int64_t dims[5], strides[5], box[5];
} GpuTmap;

typedef struct GpuLaunch {
	GpuTmap tmap[GPU_MAXTMAP];
	int ntmap;
	char name[K_NAME + 8];
	int64_t grid[3], block[3];
	int *arg;
	int narg;
	int64_t shared_bytes;
	int dynamic;
} GpuLaunch;

typedef struct GpuLaunches {
	GpuLaunch *l;
	int n, cap;
} GpuLaunches;

/* Emit.aux while a GPU dialect walks a kernel. */
typedef struct GpuState {
	GpuLaunches launches;  /* the stages emitted so far */
	PMap tail;             /* this stage: statement -> 1 last in its C block wherever it stands, 2 not */
	PMap sync;             /* this stage: node -> 1 | barrier bits (1) | warp-op bits (2) under it */
	int64_t nthr;          /* threads in a block of this stage */
	int shuffles;          /* the stage has shuffles */
	const char *mask;      /* this stage's shuffle mask */
	const UOp *open[256];  /* the loop variables around the statement being emitted */
	int nopen;
	int half, bf16, mma;   /* the kernel has float16 values, bfloat16 values, MMAs (the dialect's check) */
	int pack;              /* a wgmma's register A packs a pair of halves (tessel_pack_*; the stages) */
	int wgmma;             /* the kernel has wgmmas: sm_90a, shared buffers aligned to 1024 bytes */
	int tma;               /* the kernel has TMAs (CUDA: cuda.h, the tensor maps' host code) */
	GpuTmap tmap[GPU_MAXTMAP];   /* this stage's tensor maps (kernel parameters tessel_tmap0, ...) */
	int ntmap;
} GpuState;

/* source.c: the kernel's source in d (D_CUDA or D_OPENCL); l (may be NULL) gets the launches. */
int gpu_source(Buf *b, const Kernel *k, Dialect d, int fast, GpuLaunches *l, Err *e);

/* gpu.c */
void gpu_launches_free(GpuLaunches *l);
/* The hooks both dialects use. */
int gpu_stage(Emit *E, EStage *S);
int gpu_loop(Emit *E, EStage *S, const UOp *s, int ind);
int gpu_barrier(Emit *E, EStage *S, const UOp *s, int ind);
/* Refusals both share (an index division that may divide by zero), then
** fn on every node of every stage (fn may be NULL): -1 stops. */
int gpu_check(Emit *E, int (*fn)(Emit *E, int st, const UOp *u));
/* The opening comment: what the file is, the buffers (bufs, then their names), how to build it. */
void gpu_header(Emit *E, Buf *b, const char *title, const char *bufs, const char *build);
/* The helpers E->need asks for, each function declared with qual ("static __device__ inline"). */
void gpu_helpers(Emit *E, Buf *b, const char *qual);
/* tessel_place and tessel_take (backend.h) for the global inputs and
** outputs whose layout is not row-major, host C with qual before each;
** returns the number of buffers they cover. */
int gpu_layout_copies(Buf *b, const Kernel *k, const char *qual);
/* Whether buffer b is stored row-major, with storage of its size (no tessel_place, tessel_take). */
int gpu_row_major(const KBuf *b);
/* The C type of a value of dtype t in the GPU dialects (int64_t, ...); halves: half and bf16 names. */
const char *gpu_ctype(DType t, const char *half, const char *bf16);

/* The tensor map of a TMA_LOAD among G->tmap (added if new), or -1 with E->e set. */
int gpu_tmap(Emit *E, const UOp *s);

/* cuda.c */
extern const EmitDialect emit_cuda;
/* opencl.c */
extern const EmitDialect emit_opencl;

#endif

/* dist.h - distributed programs: tensors with Axe layouts over a device axis, kernels every device runs, and the collectives between them. */
#ifndef TESSEL_DIST_H
#define TESSEL_DIST_H

#include "../kernel/kernel.h"
#include "../../layout/layout.h"

/*
** The room interp/dist/ (docs/architecture.md): programs over several devices and
** their CPU simulation. It uses interp/kernel/, layout/ (Axe layouts over gpuid)
** and what is below them; its NCCL export is in backends/ (nccl.c).
*/

/*
** A distributed program runs on ndev devices of one device axis (gpuid). Its
** tensors carry Axe layouts over that axis and the memory axis m
** (axe_dist: sharded, replicated or on a single device); a partial tensor
** holds on every device a summand of its value (what a GEMM leaves when K is
** sharded). Its steps, in order:
**   launch        a kernel every device runs on its own storage: the kernel's
**                 global buffers are bound to tensors, and a kernel buffer
**                 sees its tensor's local storage in row-major order, so its
**                 shape must hold exactly the tensor's count per device;
**   redistribute  one tensor into another of the same shape and dtype: the
**                 collective axe_redistribute chooses, with the pack and
**                 unpack kernels (one per device, built here and checked by
**                 kernel_check) that move elements into and out of NCCL's
**                 rank-major order.
** Every element is written once, before it is read: a tensor is an input
** (written by no step) or computed (its reads lie in what earlier steps
** wrote). A launch may bind a kernel buffer to a range of a tensor's storage
** (at: the first element; the buffer's count long), and a redistribution may
** move one part of parts (dist_redistribute_part): the collective NCCL runs on
** a contiguous 1/parts of each device's buffers, where the layouts put every
** part in NCCL's rank-major order (checked element by element).
**
** Steps run on streams: kernels on one, collectives with their pack and
** unpack kernels on another, and the sums of peer reduce_scatters (which
** start among the collectives) on a third. A step waits for the last step
** ending on each other stream whose storage it overlaps (one of them
** writing), so a part's collective runs while the kernels of later parts
** compute (wait below); dist_simulate_order runs the steps in any order
** these waits allow.
**
** dist_simulate runs the program on the CPU: kernels through the kernel
** interpreter, collectives as sums and copies in double rounded once to the
** dtype. dist_gather reads a tensor's logical value back from the devices'
** storage (summing a partial one). Both are the reference an export is
** checked against.
*/

typedef struct DistTensor {
	char name[K_NAME];
	DType dtype;
	AxeShape shape;
	AxeLayout layout;
	AxeDist dist;
	int partial;
	int producer;          /* the step that writes it, -1 for an input */
} DistTensor;

typedef enum DistStepKind { DIST_LAUNCH, DIST_REDIST } DistStepKind;

typedef struct DistStep {
	DistStepKind kind;
	char name[K_NAME];
	Kernel *k;             /* launch: the kernel every device runs */
	int *bind;             /* launch: kernel buffer -> tensor, -1 for a temporary */
	int src, dst;          /* redistribute */
	AxeRedist r;
	Kernel **pack, **unpack;   /* redistribute: per device, NULL where none is needed */
	int64_t staging;       /* elements of the step's staging buffer per device (0: none) */
	int64_t *at;           /* launch: buffer i sees its tensor's storage from element at[i] (NULL: 0) */
	int part, parts;       /* redistribute: part `part` of `parts` (parts 0: the whole) */
	int via;               /* redistribute: a DistVia */
	int blocks;            /* DIST_VIA_LOAD: the blocks (SMs) of its kernel */
	int64_t peer_at;       /* DIST_VIA_COPY reduce_scatter: its bytes in each device's peer buffer */
	int stream;            /* where it starts: 0 kernels, 1 collectives */
	int end;               /* where it ends: its stream, or 2 (the sums of a peer reduce_scatter) */
	int wait[2];           /* the last steps ending on the other streams it waits for, -1 for none */
} DistStep;

/* What a step reads or writes: elements [lo, hi) of tensor t's storage on each device. */
typedef struct DistRange {
	int t, write;
	int64_t lo, hi;
} DistRange;

typedef struct DistProgram {
	int ndev;
	char axis[AXE_NAME];
	DistTensor *t;
	int nt, capt;
	DistStep *s;
	int ns, caps;
	int64_t peer_bytes;    /* each device's buffer for what peers copy in (reduce_scatter) */
} DistProgram;

DistProgram *dist_new(int ndev, const char *axis, Err *e);
void dist_free(DistProgram *p);
/* A tensor: returns its number, or -1 (a taken name, a layout that does not
** fit the shape or the devices, a partial tensor that is not replicated). */
int dist_tensor(DistProgram *p, const char *name, DType t, const AxeShape *sh, const AxeLayout *l,
                int partial, Err *e);
int dist_find(const DistProgram *p, const char *name);
/* Launch k (copied) on every device; bind[i] names the tensor of kernel
** buffer i (bind or bind[i] NULL: the tensor of the buffer's own name; none
** for shared, local and temporary buffers). Inputs must be
** tensors already written or inputs of the program, outputs tensors not
** written yet. Returns the step's number or -1. */
int dist_launch(DistProgram *p, const Kernel *k, const char *const *bind, Err *e);
/* The same, kernel buffer i bound from element at[i] of its tensor's storage
** (at or at[i] negative: the whole storage, whose count the buffer holds). */
int dist_launch_at(DistProgram *p, const Kernel *k, const char *const *bind, const int64_t *at, Err *e);
int dist_redistribute(DistProgram *p, const char *src, const char *dst, Err *e);
/*
** How a redistribution moves data between the GPUs:
**   NCCL   NCCL's collective (its kernels);
**   COPY   the copy engines (no SMs taken from the kernels) copy each
**          device's part into its peers' memory; a reduce_scatter's copies
**          land in the owner's peer buffer and a sum kernel adds them;
**   LOAD   a kernel on a few SMs loads the part from every device's memory
**          (NVLink loads) and stores it, or its sum, into its own.
** COPY and LOAD do a reduce_scatter or an allgather; sums are in double,
** rounded once, as the simulation's.
*/
typedef enum DistVia { DIST_VIA_NCCL, DIST_VIA_COPY, DIST_VIA_LOAD } DistVia;

typedef struct DistRedistOpts {
	int part, parts;       /* part `part` (0-based) of `parts`; parts 0: the whole */
	DistVia via;
	int blocks;            /* LOAD: its kernel's blocks, 0 for 16 */
} DistRedistOpts;

/* The redistribution src -> dst, or part o->part of o->parts of it: a
** reduce_scatter, allgather or allreduce on the part's contiguous range of
** each device's buffers. Refused, with an element that is out of place, where
** the layouts do not put the part's elements in NCCL's rank-major order. A
** whole redistribution through COPY or LOAD is one part. */
int dist_redistribute_opts(DistProgram *p, const char *src, const char *dst, const DistRedistOpts *o, Err *e);
const char *dist_via_name(int via);
/* Step s's accesses into out (at most max); returns their number. */
int dist_step_ranges(const DistProgram *p, int s, DistRange *out, int max);
/* The same, named as the tensor spec names it: refused unless the layouts call for want. */
int dist_collective(DistProgram *p, AxeColl want, const char *src, const char *dst, Err *e);
/* The plan: devices, every tensor's kind and local shape, every step with its
** collective, the reason, and the bytes each device sends. */
void dist_plan(Buf *b, const DistProgram *p);
/* Bytes each device contributes to step s's collective (0 for none). */
int64_t dist_step_bytes(const DistProgram *p, int s);

/* Per device r and tensor t, store[r * p->nt + t]: a 1-D TBuf of the
** tensor's count (empty until written). */
typedef struct DistState {
	int ndev, nt;
	TBuf *store;
} DistState;
/* Fill the inputs from their logical values (row-major), one TBuf per
** tensor (entries for non-inputs ignored; NULL entries are drawn as
** backend_draw draws: Threefry(i, t + 1) in [0, 1)). */
int dist_scatter(const DistProgram *p, const TBuf *logical, DistState *st, Err *e);
int dist_simulate(const DistProgram *p, const KRunOpts *o, DistState *st, Err *e);
/* The steps in order[0 .. p->ns): refused unless every step comes after the
** steps before it on its stream and the steps it waits for. */
int dist_simulate_order(const DistProgram *p, const KRunOpts *o, const int *order, DistState *st, Err *e);
/* The logical value of tensor t (row-major, its dtype; a partial tensor's
** summands added in double). A replicated tensor must agree on every device. */
int dist_gather(const DistProgram *p, const DistState *st, int t, TBuf *out, Err *e);
void dist_state_free(DistState *st);

#endif

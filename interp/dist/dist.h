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
** Every tensor is written once: an input is written by no step.
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
} DistStep;

typedef struct DistProgram {
	int ndev;
	char axis[AXE_NAME];
	DistTensor *t;
	int nt, capt;
	DistStep *s;
	int ns, caps;
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
int dist_redistribute(DistProgram *p, const char *src, const char *dst, Err *e);
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
/* The logical value of tensor t (row-major, its dtype; a partial tensor's
** summands added in double). A replicated tensor must agree on every device. */
int dist_gather(const DistProgram *p, const DistState *st, int t, TBuf *out, Err *e);
void dist_state_free(DistState *st);

#endif

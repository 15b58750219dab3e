/* run.h - the kernel interpreter's private header: its bytecode, its run state, and the functions its files share. */
#ifndef TESSEL_KERNEL_RUN_H
#define TESSEL_KERNEL_RUN_H

#include "kernel.h"

/*
** How it works. Each stage's statement tree is compiled once into a flat
** array of instructions over per-thread slots (int64 or double): loops become
** a counter and a backward jump, thread- and block-bound loops a read of the
** hardware coordinate and a guard, accesses an offset computed by the
** buffer's layout expression (compiled with the logical indices as inputs)
** and a load or store on a resolved buffer. Then every block of the grid
** runs, one after another; within a block each thread runs until a barrier,
** a warp-synchronous op (SHUFFLE, MMA) or its end, then the next thread;
** warps whose lanes all wait at the same warp op exchange and run on, until
** every thread waits at a barrier or has finished; phase after phase
** (kernel.h).
**
** Value semantics are tensor_eval.c's: floats are computed in double and
** rounded to the node's dtype after each operation; integers in int64 and
** wrapped to their dtype, with iop's rules (floor division, x // 0 == 0, ...);
** dtype index arithmetic follows eval.c (floor division, and division by
** zero is an error), except that overflow wraps instead of failing.
**
** Common subexpressions: a UOp is compiled once per statement (a STORE, or
** an IF's gate); nothing is reused across statements, so a value computed in
** a loop is recomputed each iteration and no load moves across a store or a
** barrier.
**
** Counts: `ops` is every executed arithmetic instruction, on values and on
** indices alike (layout arithmetic included, implicit conversions included):
** what a GPU's integer and float pipes would execute for this program
** without common-subexpression elimination across statements.
**
** The files, one concern each: kernel_compile.c compiles (Prog);
** kernel_run.c runs the stages, their blocks and barrier phases, and
** holds the entry points; kernel_exec.c runs one thread's instructions;
** kernel_warp.c the warp-synchronous ops; kernel_async.c the asynchronous
** engines (cp.async, wgmmas in flight, mbarriers, TMA); kernel_mem.c the
** memory model and its checks; kernel_count.c the traffic counters. Calls
** go one way: run -> warp -> exec -> async -> count -> mem, each file
** calling only files after it (run also calls compile, which calls none of
** them). The prototypes below go lowest first.
*/

enum {
	KR_MAXNEST = 2000,          /* nested statements (the C stack bounds the compiler) */
	KR_MAXTHREADS = 1 << 16,    /* threads per block */
	WARP = 32,
	MMA_MAXV = 16,              /* values per thread of a warp-wide atom's operand */
	MMA_MAXTILE = 256,          /* elements of an atom's A, B or C tile */
	NOLEAF = INT32_MIN
};

typedef union Val {
	int64_t i;
	double f;
} Val;

enum {
	/* control */
	I_EXIT, I_BAR, I_SHFL, I_MMA, I_LDSM, I_CPA, I_CPC, I_CPW, I_WGMMA, I_WGF, I_WGC, I_WGW, I_MBI, I_MBA, I_MBW,
	I_TMA, I_JZ, I_SET0, I_LOOP, I_HW, I_GUARD, I_FENCE,
	/* memory */
	I_LOAD, I_STORE, I_ATOM,
	/* conversions */
	I_ITOF, I_UTOF, I_FTOI, I_FROUND, I_IWRAP,
	/* floats */
	I_FNEG, I_FRECIP, I_FTRUNC, I_FEXP2, I_FLOG2, I_FSIN, I_FSQRT,
	I_FADD, I_FSUB, I_FMUL, I_FPOW, I_FIDIV, I_FMOD, I_FMIN, I_FMAX,
	I_FLT, I_FNE, I_FEQ, I_FWHERE, I_FMULACC, I_FNAN,
	/* integers */
	I_INEG, I_IRECIP, I_IADD, I_ISUB, I_IMUL, I_IMULACC, I_IDIV, I_UDIV, I_IMOD, I_UMOD,
	I_XDIV, I_XMOD, I_IMIN, I_UMIN, I_IMAX, I_UMAX, I_ILT, I_ULT, I_INE, I_IEQ, I_IWHERE,
	I_AND, I_OR, I_XOR, I_SHL, I_SHR, I_USHR, I_THREEFRY, I_IPOW, I_UPOW, I_IZERO,
	I_COUNT
};

/* d, a, b, c are slots (c of LOAD/STORE: the access record; b of JZ, LOOP,
** GUARD: the jump target); imm: an extent, a hardware axis, a buffer. t is
** the result dtype; w: integers wrap to t / a STORE's value is a float. */
typedef struct Ins {
	uint8_t op, t, w, pad;
	int32_t d, a, b, c;
	int64_t imm;
} Ins;

/* One memory instruction: what a check message and a count need. */
typedef struct MemAux {
	int buf, ndim, write, nloop, loop0;
	int idx[T_MAXDIM];
} MemAux;

/*
** One MMA statement, resolved at compile time: for each hardware lane its
** atom instance (group: SM70's quadpairs are four atoms per warp) and, per
** value v of each operand, the element of the operand's tile (A: m + k*M,
** B: n + k*N, C and D: m + n*M) and the register's physical offset.
*/
typedef struct MmaProg {
	const char *name;
	int buf[4];               /* D, A, B, C */
	int m, n, k, tf32, ngroup;
	int nv[4];
	int8_t group[WARP];
	int16_t crd[4][WARP][MMA_MAXV];
	int64_t off[4][MMA_MAXV];
} MmaProg;

/*
** One LDMATRIX statement: its buffers, x1/x2/x4, .trans, and the physical
** offsets of the destination's 2n values. Its instruction (I_LDSM) has the
** lane's row address in slot a, the statement's number in b, the source
** buffer in imm and the access record in c (bounds, races and messages, as
** a load by that lane).
*/
/* (I_CPA, a CP_ASYNC: d the destination's offset, a the source's, b and c
** their access records, imm the elements; I_CPC a commit; I_CPW a wait
** for all but the imm most recent groups.) */
typedef struct LdsmProg {
	int dst, src, n, trans;
	int64_t off[8];
} LdsmProg;

/*
** One WGMMA statement: its buffers, N, the access records of the A and B
** tiles' first elements (their coordinates are in the slots the records
** name, evaluated by each thread of the warpgroup before it stops at the
** I_WGMMA), and the physical offsets of D's N/2 registers. (I_WGF a fence,
** I_WGC a commit, I_WGW a wait for all but the imm most recent groups.)
*/
enum { WG = 128 };
typedef struct WgmmaProg {
	int d, a, b, n;
	int nk;               /* KWG_B_NK: B's tile is read N x 16, (n, k) */
	int areg;             /* A from registers: each thread's 8 elements from its start */
	int zero;             /* KWG_ZERO: D = A B, D's old values not read */
	int auxa, auxb;
	int64_t off[128];
} WgmmaProg;

/*
** mbarrier statements: I_MBI (init; d the barrier's offset, c its access
** record, imm the count), I_MBA (arrive; imm the expect_tx bytes), I_MBW
** (wait; a the parity). A TMA_LOAD: I_TMA with d the destination's offset,
** a the barrier's, c the source's access record (its indices are the box's
** coordinates), imm its TmaProg.
*/
typedef struct TmaProg {
	int dst, src, bar, adst, abar, rank, swizzle;
	int64_t box[5], stride[5];   /* logical order; the source's element strides */
	int64_t bytes;
} TmaProg;

typedef struct Prog {
	const char *name;
	Ins *code;
	int n, cap;
	Val *cval;                /* constants: slots nstack .. nstack+nconst-1 */
	int nconst, capconst;
	MemAux *aux;
	int naux, capaux;
	const UOp **lvar;         /* enclosing loops of the access records */
	int *lslot;
	int nl, capl, capl2;
	int nslot, nstack;        /* slots in use while compiling; the most used */
	int nbar, nshfl;
	MmaProg *mma;
	int nmma, capmma;
	LdsmProg *ldsm;
	int nldsm, capldsm;
	WgmmaProg *wgmma;
	int nwgmma, capwgmma;
	TmaProg *tma;
	int ntma, captma;
	int nmbw;                 /* mbarrier waits and TMAs: the rounds of a phase look for them */
	int64_t grid[3], blk[3];
	int res;                  /* layout programs: the slot of the offset */
} Prog;

/* ---- running ---- */

/* One access for the race detector: launch 0 is "none". */
typedef struct Acc {
	uint32_t launch, block, phase, thread;
	uint32_t ev;        /* the thread's mbarrier arrivals before the access */
	uint32_t fc;        /* the thread's gpu fences before it; | ATOMIC_BIT: an atomic */
} Acc;

#define ATOMIC_BIT 0x80000000u
/* ev of a wgmma's read of its shared tile while the wgmma is in flight: the
** hardware reads until the wgmma_wait that retires it, which sets the ev then */
#define WG_READING 0xffffffffu

/*
** Release and acquire (kernel.h). A release: thread `thread` of `block` ran
** a gpu fence (its fc-th, in phase `phase`) and then an atomic on an
** element; the element's Shadow.rel heads the chain of its releases in this
** launch (next: 1 + the one before). An acquire: the current block's thread
** ua took release x by a fence in phase qa; accesses it covers (covered())
** are ordered before the acquiring thread from then on and before every
** thread of the block from phase qa + 1.
*/
typedef struct Rel {
	uint32_t launch, block, phase, thread, fc;
	uint32_t next;
} Rel;

typedef struct Acq {
	uint32_t block, phase, thread, fc;   /* the release */
	uint32_t ua, qa;
} Acq;

enum { KR_ATREC = 8, KR_MAXACQ = 1 << 16 };

/* async: 1 + the thread whose cp.async into it is in flight (| TMA_BIT: a
** TMA), or 0; mbar: 1 + the mbarrier whose completion number mphase landed
** it (a TMA), 0 once a thread writes it */
typedef struct Shadow {
	Acc w, r[2];
	uint32_t rel;       /* 1 + the latest release on it (Rel), or 0 */
	uint32_t init;
	uint32_t async;
	uint32_t mbar, mphase;
} Shadow;

#define TMA_BIT 0x80000000u

/* One mbarrier: phase counts completed phases. */
typedef struct MBar {
	uint32_t init, count, pending, phase;
	int64_t tx;
} MBar;

typedef struct RBuf {
	unsigned char *p;
	int64_t tstride;    /* registers: bytes per thread (0 otherwise) */
	int64_t size;
	int bytes, scope;
	DType t;
	Shadow *sh;         /* checks: global and shared */
	uint8_t *init;      /* checks: registers, size per thread */
	int wgd;            /* registers a wgmma of the stage accumulates in or reads as A */
	MBar *mb;           /* shared uint64 buffers of a stage with mbarrier statements */
	int mbase;          /* the id of its element 0 among the stage's mbarriers */
	Prog lay;
} RBuf;

/* wait: what a thread that has not finished stopped at in this phase */
enum { W_RUN, W_BAR, W_WARP, W_MBAR };

/* A cp.async in flight: the bytes read at issue, landed at the wait that
** retires its group (group: the thread's commits before it). */
typedef struct Cpa {
	int dst, n;
	int64_t off;
	uint32_t group;
	unsigned char data[16];
} Cpa;

typedef struct Thr {
	int pc, done, bar, tid, wait;
	int64_t tc[3];
	Val *v;
	uint32_t *kc;       /* counts: executions of each memory instruction this phase */
	Cpa *cpa;           /* cp.async in flight, oldest first */
	int ncpa, capcpa;
	uint32_t ncommit;   /* groups committed */
	/* wgmma: those in flight (the accumulator's buffer, A's register buffer
	** or -1, its group), oldest first; per buffer b, wgs[b] how many of them
	** use it and wgs[nbuf + b] whether the thread accessed it since its last
	** wgmma_fence */
	struct { int d, a; uint32_t group; } *wg;
	int nwg, capwg;
	uint32_t wgcommit;
	int32_t *wgs;
	uint32_t ev;        /* mbarrier arrivals so far */
	uint32_t *obs;      /* per mbarrier: the completions this thread has seen by waiting */
	uint32_t *arr;      /* per mbarrier: [0] ev of the thread's last arrival, [1] the completion it counts toward */
	uint32_t fc, fphase;   /* gpu fences so far; the phase of the last */
	/* its atomics since its last gpu fence (the most recent KR_ATREC): the
	** element and its release chain when the atomic ran */
	struct { int buf; int64_t off; uint32_t head; } at[KR_ATREC];
	int nat;
} Thr;

/* A TMA box in flight: its bytes read at issue, landed when its barrier's phase completes. */
typedef struct TmaF {
	int dst, bar, tid;
	int64_t n, *off;
	unsigned char *data;
} TmaF;

typedef struct LogE {
	uint32_t mem, k;
	int64_t addr;
} LogE;

typedef struct Run {
	const Kernel *k;
	const Prog *P;      /* the stage running */
	int checks, counting;
	KCounts *cnt;
	Err *e;
	RBuf *rb;
	uint32_t launch, blin, phase;
	int64_t bc[3];      /* the block's coordinates */
	int64_t grid[3], blk[3];
	int nthr;
	int64_t left;       /* instructions left before max_steps */
	int64_t max_steps;
	uint64_t used, limit;
	LogE *log;
	size_t nlog, caplog;
	int64_t ops;
	/* A read of memory nothing wrote yet is held back until its phase (shared
	** memory) or launch (global) ends: if another thread writes the element
	** first, the fault is the race between them (a missing barrier), not the
	** read. pending: 0, AS_LOCAL or AS_GLOBAL; pend the message to give. */
	int pending;
	char pend[sizeof ((Err *)0)->msg];
	const KRunOpts *o;  /* the watch */
	Thr *th;            /* the block's threads */
	int nmb;            /* mbarriers of the stage */
	TmaF *tf;           /* TMA boxes in flight */
	int ntf, captf;
	Rel *rel;           /* releases, every launch's (Rel) */
	uint32_t nrel, caprel;
	Acq *acq;           /* the block's acquires */
	int nacq, capacq;
	/* the shared elements the block's wgmmas in flight read: the reading
	** thread (shadow), the issuing thread's commit group */
	struct WgRd { int tid, buf; uint32_t group; int64_t off; } *wgr;
	int64_t nwgr, capwgr;
} Run;

/* Helpers of several files, inline: kernel_exec.c's inner loop rounds every float result with fround. */
static inline int
isf(int t)
{
	return dtype_is_float((DType)t);
}

static inline double
fround(int t, double x)
{
	switch (t) {
	case DT_FLOAT32: return (float)x;
	case DT_FLOAT16: return dtype_from_half(dtype_to_half(x));
	case DT_BFLOAT16: return dtype_from_bf16(dtype_to_bf16(x));
	default: return x;
	}
}

static inline void
coords(int64_t lin, const int64_t *d, int64_t *c)
{
	c[0] = lin % d[0];
	c[1] = lin / d[0] % d[1];
	c[2] = lin / (d[0] * d[1]);
}

/* kernel_compile.c */
void kcomp_free(Prog *p);
int kcomp_stage(const Kernel *k, const KStage *st, Prog *p, Err *e);
int kcomp_layout(const Kernel *k, int b, Prog *p, Err *e);

/* kernel_mem.c */
int kmem_charge(Run *r, uint64_t bytes, const char *what);
void *kmem_alloc(Run *r, uint64_t bytes, int zero, const char *what);
void kmem_where(const Run *r, const Thr *th, const Ins *in, char *out, size_t n);
int kmem_fail_oob(Run *r, Thr *th, const Ins *in, int64_t off, int dim);
int kmem_conflict(const Acc *p, const Acc *c);
int kmem_fail_race(Run *r, Thr *th, const Ins *in, int64_t off, const Acc *p, int pwrite);
int kmem_fail_inflight(Run *r, Thr *th, const Ins *in, int64_t off, uint32_t by);
void kmem_mbar_name(const Run *r, int id, char *out, size_t n);
void kmem_note_read(Shadow *s, const Acc *cur);
const Acc *kmem_wg_reading(const Run *r, const Shadow *s);
int kmem_fail_wg_reading(Run *r, Thr *th, const Ins *in, int64_t off, const Acc *p, const char *who);
int kmem_check(Run *r, Thr *th, const Ins *in, int64_t off, int write);
int kmem_acquire(Run *r, Thr *th);
int kmem_atomic(Run *r, Thr *th, const Ins *in, int64_t off, const Val *v, Val *old);

/* kernel_count.c */
void kcount_flush(Run *r);
int kcount_access(Run *r, Thr *th, const Ins *in, int64_t off);
void kcount_ldsm(Run *r, const RBuf *S, const int64_t *base, int n);

/* kernel_async.c */
int kasync_cp_issue(Run *r, Thr *th, const Ins *in, int64_t doff, int64_t soff);
void kasync_cp_wait(Run *r, Thr *th, int64_t n);
int kasync_fail_cp_end(Run *r, Thr *th);
int kasync_wg_note(Run *r, const Thr *th, int buf, int64_t off);
int kasync_wg_issue(Run *r, Thr *l, const WgmmaProg *W);
void kasync_wg_wait(Run *r, Thr *th, int64_t n);
int kasync_fail_wg_end(Run *r, Thr *th);
int kasync_mbar_init(Run *r, Thr *th, const Ins *in, int64_t off);
int kasync_mbar_arrive(Run *r, Thr *th, const Ins *in, int64_t off);
int kasync_mbar_wait(Run *r, Thr *th, const Ins *in, int64_t off, int64_t parity, int quiet);
int kasync_tma_issue(Run *r, Thr *th, const Ins *in, int64_t doff, int64_t boff);
int kasync_fail_tma_end(Run *r);

/* kernel_exec.c */
int kexec_thread(Run *r, const Prog *P, Thr *th);
int kexec_lay_at(Run *r, RBuf *B, const KBuf *kb, const int64_t *c, Val *slots, int64_t *off);
int kexec_lay_offset(Run *r, RBuf *B, const KBuf *kb, int64_t lin, Val *slots, int64_t *off);
Val *kexec_lay_slots(Run *r, RBuf *B);

/* kernel_warp.c */
void kwarp_stop_desc(const Prog *P, const Thr *t, char *out, size_t n);
int kwarp_gather(Run *r, Thr *th, int nthr);

#endif

/* kernel.h - the room interp/kernel/: the loop IR on UOps, lowering from tensor programs, the verifier, the interpreter. */
#ifndef TESSEL_KERNEL_H
#define TESSEL_KERNEL_H

#include "../tensor/tensor.h"

/*
** The room of kernels (docs/architecture.md). It uses interp/tensor/ (graphs to
** lower, the evaluator to check against), layout/ (buffer layouts lowered to
** index expressions) and interp/ir/; schedules (interp/sched/), distributed
** programs (interp/dist/), pictures and device code build on it. The files:
** kernel.c (building), kernel_layout.c, kernel_check.c (the verifier),
** kernel_print.c, kernel_lower.c, the interpreter (kernel_run*.c), kernel_ops.c
** (collectives dispatched by layout), kernel_wgmma.c and kernel_tma.c.
*/

/*
** A kernel is a program of stages, each one loop nest written in UOps of the
** one IR (ops.h, "kernels"): loops are END(RANGE(var), body...), conditionals
** IF(gate, body...) (a sequence of statements is IF(true, ...), printed
** without its header), barriers BARRIER, warp-synchronous MMA statements
** and SHUFFLE values (below), and every memory access goes through
** INDEX(DEFINE, i0, i1, ...) by logical coordinates, read by LOAD and written
** by STORE. Loop variables are ordinary index variables (OP_VAR with the
** range [0, n-1]), so the simplifier, the printers, the evaluator and the
** equivalence checker apply to loop indices unchanged; tinygrad's Range is its
** own index value, tessel keeps the variable as the Range's source instead.
** Hardware indices (tinygrad's Special: gidx0, lidx1) are the variables of
** loops bound to a hardware axis.
**
** Values are scalars of the buffers' dtypes: ALU ops on floats are built raw
** (kernel_alu folds integer constants only), index expressions through the
** folding constructors and the simplifier.
**
** Buffers carry a scope (global, shared, per-thread registers), a shape and a
** layout: the physical offset of an element as an index expression in one
** variable per logical dimension. Row-major by default; any CuTe, Axe or LEGO
** layout lowered by layout/lower.c can replace it (kernel_set_layout), and
** every access then goes through it without being rewritten.
**
** Execution model (kernel_run), as a GPU runs it. Each stage is one launch.
** Loops bound to block.x/y/z form the grid and must be the outermost loops of
** the stage; loops bound to thread.x/y/z (or to warp and lane: thread =
** warp*32 + lane) select the threads of a block: a thread-bound loop is not a
** loop but the statement "this thread's coordinate on that axis", and a thread
** whose coordinate is past the loop's extent skips its body (TVM's guard).
** Everything else runs on every thread of the block. Blocks run one after
** another; within a block each thread runs until it reaches a barrier (or its
** end), then the next thread; when all have arrived the next phase starts.
** Shared buffers live per block, register buffers per thread.
**
** Warps are 32 consecutive thread linear ids of a block (x fastest; the last
** warp of a block may be short). Warp-synchronous ops (SHUFFLE, MMA) stop a
** thread as a barrier does, but only its warp gathers: once every lane of
** the warp waits at the same one, they exchange and go on, within the same
** phase (phases, which the race detector uses, advance only at barriers).
** Lanes of a warp waiting at different places (a barrier, another warp op,
** their end) can never meet: an error. A phase runs every thread to its next
** stop, lets the warps that gathered exchange and resume, and repeats until
** every thread waits at a barrier or has finished.
**
** Atomics and fences (kernel_atomic, kernel_fence). An ATOMIC is one
** indivisible read-modify-write of a global or shared element; atomics never
** race with each other, in any block or phase. A plain access and an atomic
** of the same element conflict as two plain accesses would (a write and
** another block, or the same phase of another thread), unless ordered by
** release and acquire, as the CUDA memory model orders them: a block X
** releases when one of its threads runs a gpu-scope FENCE and then an ATOMIC
** on an element L; that release covers X's accesses in phases before the
** fence's phase (the barrier made them the fencing thread's) and the fencing
** thread's own accesses before the fence. A thread of block Y acquires those
** releases when it runs an ATOMIC on L after them (blocks run in order, so
** every earlier atomic on L is in its modification order) and then a
** gpu-scope FENCE; the acquire covers that thread from the fence on, and
** every thread of Y from the next phase on. A covered access is ordered: no
** race. The atomic itself is not covered: a plain access of a counter other
** blocks update is a race (reset it with an exch). What is left out errs on
** the side of a report: only the acquiring thread's 8 most recent atomics
** before its fence acquire, orderings through a third block (transitivity)
** are not followed, and a block-scope fence orders nothing across blocks.
** Global temporaries start at zero (the exporters clear them, kernel_run
** allocates them cleared): an atomic may read an element nothing wrote; a
** plain load of one is still reported as uninitialized.
*/

typedef enum AxisType {
	AX_GLOBAL, AX_LOCAL, AX_WARP, AX_THREAD, AX_LOOP, AX_REDUCE, AX_GROUP_REDUCE,
	AX_UPCAST, AX_UNROLL, AX_COUNT
} AxisType;
const char *axistype_name(int t);       /* "GLOBAL", ... */
char axistype_letter(int t);            /* tinygrad's letters: g l w t L R G u r */
int axistype_parse(const char *s, AxisType *t);   /* a name, either case, or a letter */

typedef enum HwAxis {
	HW_NONE, HW_BLOCK_X, HW_BLOCK_Y, HW_BLOCK_Z, HW_THREAD_X, HW_THREAD_Y, HW_THREAD_Z,
	HW_WARP, HW_LANE, HW_COUNT
} HwAxis;
const char *hwaxis_name(int h);         /* "block.x", ..., "warp", "lane"; "" for none */
const char *hwaxis_cuda(int h);         /* "blockIdx.x", ..., "threadIdx.x / 32", ... */
int hwaxis_parse(const char *s, HwAxis *h);   /* also blockIdx.x / threadIdx.x */
int hwaxis_is_block(int h);
int hwaxis_is_thread(int h);            /* thread.x/y/z, warp, lane */

/* Scopes are address spaces (uop.h): AS_GLOBAL, AS_LOCAL (shared memory, per
** block: tinygrad's LOCAL) and AS_REG (registers, per thread: TVM's "local"). */
const char *kscope_name(int as);        /* "global", "shared", "local" */
int kscope_parse(const char *s, UAddrSpace *as);   /* also "register", "reg" */

typedef enum KRole { KB_INPUT, KB_OUTPUT, KB_TEMP } KRole;
const char *krole_name(int r);

enum { K_NAME = 64, K_DESC = 160 };

typedef struct KBuf {
	char name[K_NAME];
	DType dtype;
	UAddrSpace scope;
	KRole role;
	int ndim;
	int64_t shape[T_MAXDIM];
	/* The physical offset of element (x0, ..., x{n-1}) is layout with lvar[k]
	** bound to xk; lvar[k] ranges over [0, shape[k]-1]. size is the number of
	** elements of storage: every offset the layout takes is in [0, size). */
	UOp *layout;
	UOp *lvar[T_MAXDIM];
	int64_t size;
	char layout_desc[K_DESC];   /* "row-major" or the layout's notation */
	const UOp *tensor;          /* the tensor node it holds (lowering), or NULL */
	UOp *def;                   /* its DEFINE node */
} KBuf;

typedef struct KStage {
	char name[K_NAME];
	UOp *body;          /* one statement: END, IF, STORE, BARRIER or MMA */
	const UOp *tensor;  /* the tensor node it computes (lowering), or NULL */
} KStage;

typedef struct Kernel {
	UCtx *c;            /* owns every UOp of the kernel */
	KBuf *buf;
	int nbuf, capbuf;
	KStage *stage;
	int nstage, capstage;
} Kernel;

/* kernel.c: building */
Kernel *kernel_new(void);
void kernel_free(Kernel *k);
/* A deep copy into a fresh context (schedules keep the version they started from). */
Kernel *kernel_clone(const Kernel *k, Err *e);
/* A buffer; returns its number, or -1 (a taken or invalid name, a bad shape).
** The layout starts row-major. */
int kernel_add_buffer(Kernel *k, const char *name, DType t, UAddrSpace scope, KRole role,
                      const int64_t *shape, int n, Err *e);
int kernel_find_buffer(const Kernel *k, const char *name);   /* -1 if none */
/* Buffer b, row-major, takes a new shape (compute_at compacts a temporary to
** the region a loop needs); its accesses are the caller's to rewrite. */
int kernel_reshape_buffer(Kernel *k, int b, const int64_t *shape, Err *e);
/* A name taken by no buffer and no stage: base, base_1, base_2, ... (made an
** identifier). Buffers and stages have separate namespaces; a stage usually
** shares its name with the buffer it writes. */
void kernel_fresh_name(const Kernel *k, const char *base, char *out, size_t n);
/* Replace buffer b's layout: expr in vars[0..ndim-1] (each with the range of
** its dimension), size the storage. Checked: every offset is proved (from
** ranges) or enumerated to lie in [0, size); a counterexample otherwise. */
int kernel_set_layout(Kernel *k, int b, UOp *expr, UOp *const *vars, int n, int64_t size,
                      const char *desc, Err *e);
/* kernel_layout.c: a layout from a formalism, lowered (layout/lower.h) and
** simplified. CuTe (cl: a swizzled layout, else l): a layout of the buffer's
** rank maps coordinate k through mode k, unflattened colexicographically in a
** hierarchical mode; a 1-D buffer takes any layout of its size. LEGO: apply,
** its logical dimensions the buffer's (built-in GenPs only). Axe: the
** row-major index through D on the one memory axis m, without replicas. */
struct Layout;
struct Composed;
struct Lego;
struct AxeLayout;
int kernel_layout_cute(Kernel *k, int b, const struct Layout *l, const struct Composed *cl, Err *e);
int kernel_layout_lego(Kernel *k, int b, const struct Lego *g, Err *e);
int kernel_layout_axe(Kernel *k, int b, const struct AxeLayout *l, Err *e);
/* The physical offset of an element of b: its layout at idx[0..ndim-1]. */
UOp *kernel_offset(Kernel *k, int b, UOp *const *idx);
/* A loop variable in [0, extent-1] named hint (made an identifier). Variables
** are scoped by their loops: sibling loops may share one, nested loops may not
** (kernel_check). */
UOp *kernel_var(Kernel *k, const char *hint, int64_t extent);
UOp *kernel_range(Kernel *k, UOp *var, AxisType t, HwAxis hw);
UOp *kernel_loop(Kernel *k, UOp *range, UOp *const *body, int n);   /* END */
UOp *kernel_if(Kernel *k, UOp *gate, UOp *const *body, int n);
UOp *kernel_barrier(Kernel *k);
UOp *kernel_index(Kernel *k, int b, UOp *const *idx, int n);
UOp *kernel_load(Kernel *k, UOp *index, UOp *gate);                 /* gate may be NULL */
UOp *kernel_store(Kernel *k, UOp *index, UOp *value, UOp *gate);    /* gate may be NULL */
/* Value arithmetic of dtype t (src already of dtype t, except WHERE's gate and
** comparisons, whose result is bool): integer constants fold, nothing else. */
UOp *kernel_alu(Kernel *k, Op op, DType t, UOp *const *src, int n);
UOp *kernel_const(Kernel *k, DType t, double v);
/* The identity of the reduction op (add 0, mul 1, max -inf or the least
** integer, min +inf or the greatest), or NULL for another op. */
UOp *kernel_identity(Kernel *k, Op op, DType t);
UOp *kernel_cast(Kernel *k, DType t, UOp *v);
/* SHUFFLE: value as lane `lane` (an index expression, 0..31) of the same warp
** holds it (__shfl_sync with a full mask); dtype the value's. */
UOp *kernel_shuffle(Kernel *k, UOp *value, UOp *lane);
/* MMA: D = A B + C by CuTe's MMA atom `atom` (cute_mma_atom; warp-wide atoms
** only), over the warp. d, a, b, c: register buffers holding a thread's
** values of the atom's TV layouts (mode 1 of the A, B and C layouts: for
** m16n8k16, 8, 4 and 4 elements, in row-major logical order), of the atom's
** dtypes (tf32: float32 registers); lane t's register v of A holds
** A[m, k] with m + k*M = A_layout(t, v), B holds B[n, k] (n + k*N), C and D
** hold C[m, n] (m + n*M). The statement, or NULL with e saying why. */
UOp *kernel_mma(Kernel *k, const char *atom, int d, int a, int b, int c, Err *e);
/* kernel_mma's checks of an atom and its buffers buf[0..3] = D, A, B, C,
** shared by the verifier and the interpreter; out (may be NULL) gets the
** atom, tf32 whether its inputs are tf32. */
struct MmaAtom;
int kernel_mma_atom(const Kernel *k, const char *atom, const int *buf, struct MmaAtom *out,
                    int *tf32, Err *e);
/* LDMATRIX: the warp's ldmatrix.sync.aligned.m8n8.x{n}[.trans].shared.b16, n
** = 1, 2 or 4 8x8 matrices of 16-bit elements. Lane 8j + r (j < n, r < 8)
** supplies row r of matrix j: index names an element of a shared buffer,
** and the row is the 8 elements at its physical offset and the 7 after it
** (16 bytes, the offset a multiple of 8); the other lanes' indices are not
** read. Lane t receives elements 2j and 2j+1 of d (a register buffer of 2n
** elements, of the shared buffer's 16-bit dtype) from matrix j: (row t/4,
** columns 2(t%4) and 2(t%4)+1), or with trans (rows 2(t%4) and 2(t%4)+1,
** column t/4). This is the m16n8k16 fragment order: x4 of a 16x16 tile of A
** stored row-major, x2 with trans of a 16x8 tile of B stored k-major. The
** statement, or NULL with e saying why. */
UOp *kernel_ldmatrix(Kernel *k, int d, UOp *index, int n, int trans, Err *e);
/* kernel_ldmatrix's checks of a statement's buffers d (registers) and s
** (shared), shared by the verifier, the interpreter and the emitters. */
int kernel_ldmatrix_check(const Kernel *k, int d, int s, int n, Err *e);
/* CP_ASYNC: one thread's cp.async.{ca,cg}.shared.global of n elements (4, 8
** or 16 bytes; cg for 16) from the element src (a global buffer) names and
** the n - 1 after it in storage to the element dst (a shared buffer of the
** same dtype) names and the n - 1 after it; both offsets multiples of n. It
** belongs to the group the thread's next CP_COMMIT closes and lands at the
** CP_WAIT that retires that group: the destination must not be touched in
** between (the interpreter reports it). kernel.copy's cp_async
** implementation proves the runs; built by hand, the interpreter checks
** the alignment as it runs. The statement, or NULL with e saying why. */
UOp *kernel_cp_async(Kernel *k, UOp *dst, UOp *src, int n, Err *e);
/* kernel_cp_async's checks of the buffers d (shared) and s (global). */
int kernel_cp_async_check(const Kernel *k, int d, int s, int n, Err *e);
/* CP_COMMIT and CP_WAIT(n), n in [0, 63]: the thread's groups of copies. */
UOp *kernel_cp_commit(Kernel *k);
UOp *kernel_cp_wait(Kernel *k, int n, Err *e);
/* ATOMIC: the atomic read-modify-write op of the element index names (a
** global or shared buffer) with value (of the element's dtype): add (int32,
** uint32, float32), max and min (int32, uint32), exch (int32, uint32,
** float32); the old value goes to the element old names (an INDEX of a
** register buffer of the same dtype), or nowhere (old NULL). The statement,
** or NULL with e saying why. */
typedef enum KAtomicOp { KA_ADD, KA_MAX, KA_MIN, KA_EXCH, KA_COUNT } KAtomicOp;
const char *katomic_name(int op);                  /* "add", "max", "min", "exch" */
int katomic_parse(const char *s, KAtomicOp *op);
UOp *kernel_atomic(Kernel *k, KAtomicOp op, UOp *index, UOp *value, UOp *old, Err *e);
/* kernel_atomic's checks of a statement's target buffer b, value dtype and
** old buffer (-1: none), shared by the verifier, the interpreter and the
** emitters. */
int kernel_atomic_check(const Kernel *k, int op, int b, DType value, int old, Err *e);
/* FENCE: __threadfence() (KF_GPU: fence.acq_rel.gpu, what orders memory
** between blocks) or __threadfence_block() (KF_BLOCK). */
typedef enum KFenceScope { KF_GPU, KF_BLOCK } KFenceScope;
UOp *kernel_fence(Kernel *k, KFenceScope scope);
int kernel_add_stage(Kernel *k, const char *name, UOp *body, const UOp *tensor, Err *e);
/* Accessors of loop nodes. */
static inline UOp *krange_var(const UOp *r) { return r->src[0]; }
static inline int64_t krange_extent(const UOp *r) { return r->src[0]->arg[1] + 1; }
static inline AxisType krange_type(const UOp *r) { return (AxisType)r->arg[0]; }
static inline HwAxis krange_hw(const UOp *r) { return (HwAxis)r->arg[1]; }
/* u with the variables vars[k] replaced by vals[k] (folding constructors;
** loads, stores and loops are rebuilt around the new sources). */
UOp *kernel_substitute(UCtx *c, UOp *u, UOp *const *vars, UOp *const *vals, int n);
/* u with vars[i] at the index constants val[i] (all at 0 when val is NULL), simplified; NULL
** when memory runs out or the simplifier fails. */
UOp *kernel_at(UCtx *c, UOp *u, UOp *const *vars, const int64_t *val, int n);
/* u = coef*v + rest, coef a constant (0 when u does not depend on v) and rest free of v
** (rest simplified): 1, else 0.
** Checked: rest is u at v = 0, coef is u(1) - u(0), and u - rest - coef*v simplifies to 0. */
int kernel_affine_in(UCtx *c, UOp *u, UOp *v, int64_t *coef, UOp **rest);

/* kernel_ops.c: collective operators at an execution scope (Axe Section 3.2) */
/*
** A scope is a group of threads that runs an operator together: the thread
** itself, its warp, its warpgroup (128 threads), its cta (block), the whole
** kernel, or warps [w0, w1) of the cta (producer warps). Operators take
** regions of buffers (a start per dimension, which may depend on loop
** indices, and constant extents), choose an implementation from the layouts
** and the scope (KDispatch says which and why), and return the statement to
** record: a sequence whose name (printed as a comment) is that choice.
** force names an implementation; one the layouts do not allow is refused
** with the element that breaks it.
**   copy, fill  vectorN (the widest runs both layouts keep consecutive and
**               aligned, at most 16 bytes) or scalar; units spread over the
**               scope's threads, consecutive threads on consecutive units;
**               copy: staged (global to global at cta scope when the two
**               sides are contiguous along different dimensions: through a
**               padded shared tile, each side along its own dimension)
**   reduce      rows (each thread owns whole outputs) or tree (one output
**               for a power-of-two cta: strided partials, then halving steps
**               in a shared scratch buffer between barriers)
**   gemm        fma (each thread owns elements of C and loops over K)
*/
typedef enum KScopeKind { KS_THREAD, KS_WARP, KS_WARPGROUP, KS_CTA, KS_KERNEL } KScopeKind;
const char *kscope_kind_name(int k);
int kscope_kind_parse(const char *s, KScopeKind *k);
typedef struct KScope {
	KScopeKind kind;
	UOp *id;            /* the thread's index in its group */
	int64_t n;          /* threads in a group */
	UOp *guard;         /* the threads that take part (a warp subset), or NULL */
	char desc[64];
} KScope;
/* thread[3], block[3]: the variables of the loops bound to thread.x/y/z and
** block.x/y/z around the operator (NULL where unbound); w1 > w0 selects
** warps [w0, w1) of the cta. */
int kernel_scope(Kernel *k, KScopeKind kind, UOp *const *thread, UOp *const *block, int64_t w0,
                 int64_t w1, KScope *out, Err *e);
typedef struct KRegion {
	int buf;
	UOp *begin[T_MAXDIM];
	int64_t extent[T_MAXDIM];
} KRegion;
/* "A[i*16:+16, :]": region r of its buffer, for messages (out gets at most n bytes). */
void kernel_region_str(char *out, size_t n, const Kernel *k, const KRegion *r);
typedef struct KDispatch {
	char impl[32];
	char reason[400];
} KDispatch;
UOp *kernel_op_copy(Kernel *k, const KScope *s, const KRegion *dst, const KRegion *src,
                    const char *force, KDispatch *d, Err *e);
UOp *kernel_op_fill(Kernel *k, const KScope *s, const KRegion *dst, UOp *value, const char *force,
                    KDispatch *d, Err *e);
/* dst: the outer (squeezed) dimensions of src; op OP_ADD, OP_MAX or OP_MUL. */
UOp *kernel_op_reduce(Kernel *k, const KScope *s, Op op, const KRegion *dst, const KRegion *src,
                      const char *force, KDispatch *d, Err *e);
/* C += A B on the last two dimensions of each region. */
UOp *kernel_op_gemm(Kernel *k, const KScope *s, const KRegion *c, const KRegion *a,
                    const KRegion *b, const char *force, KDispatch *d, Err *e);

/* kernel_wgmma.c: Hopper's warpgroup MMA (sm_90a) */
/*
** WGMMA is wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16}:
** D (64xN, float32) += A (64x16) B (16xN) over one warpgroup (128
** consecutive threads from a thread id divisible by 128). A and B are tiles
** of shared buffers of one 16-bit float dtype, named by regions: the last
** two extents 64 x 16 (m, k) for A, 16 x N (k, n) for B, every leading
** extent 1 (with KWG_B_NK, B's region is N x 16 (n, k)); N a multiple of 8
** in [8, 256]. D is a register buffer of N/2
** float32 elements a thread (row-major logical order, through its layout):
** thread t of the warpgroup, warp w = t/32, lane l, holds in element v
** C[16w + l/4 + 8((v/2)%2), 8(v/4) + 2(l%4) + v%2] (CUTLASS's CLayout_64xN).
**
** The hardware reads each tile through a 64-bit descriptor of one of the
** GMMA canonical shared-memory layouts (CUTLASS make_gmma_desc), in 16-byte
** chunks of 8 elements (T), with W = 8, 4, 2, 1 chunks a swizzle row for the
** 128B, 64B, 32B and interleave (unswizzled) forms; i indexes M (or N), j K:
**   K-major:     (i%8) 16W + (i/8) SBO + (j/8) (16, or LBO unswizzled) + 2 (j%8)
**   MN-major:    2 (i%8) + 16 ((i/8)%W) + (i/8W) LBO + 16W (j%8) + (j/8) SBO
**   (unswizzled: 2 (i%8) + (i/8) SBO + 16 (j%8) + (j/8) LBO)
** bytes from the start address, then the swizzle XOR on the absolute shared
** address (128B: bits [4:6] ^= [7:9]; 64B: [4:5] ^= [7:8]; 32B: [4] ^=
** [7]). kernel_wgmma_desc reads a candidate off the buffer's layout (start:
** the tile's first element; LBO and SBO: the offsets one group away) and
** keeps the first form that every element of the tile verifies, at every
** start the region's variables can take (enumerated over their ranges, at
** most KGMMA_MAXSTARTS). The buffer is taken to start at a shared address
** that is a multiple of 1024 (the CUDA emitter aligns it so). MN-major is
** the transposed form (tnspA / tnspB). A layout no form fits is refused,
** naming the element that breaks the closest form.
*/
enum { KGMMA_MAXSTARTS = 4096 };
typedef struct KGmmaDesc {
	int mn_major;        /* 0: K-major; 1: MN-major (transposed) */
	int layout_type;     /* descriptor bits 62-63: 0 interleave, 1 128B, 2 64B, 3 32B swizzle */
	int64_t lbo, sbo;    /* leading and stride byte offsets (0: the tile has one group there) */
	int64_t start;       /* byte offset of the tile's first element at the binding asked */
	int64_t nstarts;     /* the starts verified */
	uint64_t desc;       /* the descriptor at that start, the buffer at shared address 0 */
	int regs;            /* A only: a register fragment (the RS form), no descriptor; the rest 0 */
} KGmmaDesc;
const char *kgmma_layout_name(int layout_type);   /* "interleave", "128B", "64B", "32B" */
/*
** KWG_B_NK (the WGMMA's arg[1]): B is given (n, k), its region's last two
** extents N x 16 and B[k][n] the buffer's element [.., n, k] (attention's
** K^T from a tile stored (key, d)); the analysis then reads B's tile as A's,
** and a buffer with k contiguous is the K-major form (tnspB 0). KWG_ZERO:
** D = A B, D's old values not read (the instruction's scale-d 0): the first
** product of an accumulation needs no zeroing of D first (D's registers are
** still held as for any wgmma: a fence after other accesses, none in flight).
*/
enum { KWG_B_NK = 1, KWG_ZERO = 2, KWG_FLAGS = KWG_B_NK | KWG_ZERO };
/* The descriptor of region r as operand 'A' or 'B' of a wgmma; start is
** reported at bind (unbound variables at their least value). */
int kernel_wgmma_desc(const Kernel *k, const KRegion *r, int operand, const UBind *bind, int nbind,
                      KGmmaDesc *out, Err *e);
/* The same, with flags (KWG_B_NK, for B only). */
int kernel_wgmma_desc_flags(const Kernel *k, const KRegion *r, int operand, int flags, const UBind *bind,
                            int nbind, KGmmaDesc *out, Err *e);
/*
** The WGMMA statement (D a register buffer), or NULL with e saying why. A
** is a shared tile (64 x 16, by descriptor) or, the RS form, a register
** buffer: the region is 8 elements along its last dimension (every other
** extent 1), a thread's fragment a0..a7 of the 64 x 16 tile, element i at
** row 16 (warp % 4) + lane/4 + 8 ((i/2) % 2), column 2 (lane % 4) + i % 2
** + 8 (i/4) (the m16n8k16 A fragment a warp, warps stacked): the layout of
** an m64nN accumulator's 8 values 8j..8j+7 for columns 16j..16j+15, so P =
** softmax(S) of attention goes from S's registers to P V's A operand
** without shared memory. Like D, A's registers may not be touched while
** the wgmma is in flight, and need a wgmma_fence after they are written.
*/
UOp *kernel_wgmma(Kernel *k, int d, const KRegion *a, const KRegion *b, Err *e);
/* The same, with flags (KWG_B_NK, KWG_ZERO). */
UOp *kernel_wgmma_flags(Kernel *k, int d, const KRegion *a, const KRegion *b, int flags, Err *e);
/* A WGMMA statement's buffers and both operands' analysis (a, b may be
** NULL), shared by the verifier, the interpreter and the emitters. */
int kernel_wgmma_check(const Kernel *k, const UOp *s, KGmmaDesc *a, KGmmaDesc *b, Err *e);
/* Whether a stage of k holds a WGMMA (it needs sm_90a). */
int kernel_has_wgmma(const Kernel *k);
/* SETMAXNREG: the warpgroup's threads raise (inc) or lower their register
** budget to n (24..256, a multiple of 8): setmaxnreg, which lets a producer
** warpgroup hand registers to the consumers' accumulators. Warpgroup-wide;
** the CUDA emitter then caps the kernel at entry (__launch_bounds__(n, 1)). */
UOp *kernel_setmaxnreg(Kernel *k, int n, int inc, Err *e);
/* WG_FENCE, WG_COMMIT and WG_WAIT(n), n in [0, 7]. */
UOp *kernel_wg_fence(Kernel *k);
UOp *kernel_wg_commit(Kernel *k);
UOp *kernel_wg_wait(Kernel *k, int n, Err *e);
/* kernel_tma.c: Hopper's mbarriers and bulk tensor copies */
/*
** An mbarrier is an element of a shared uint64 buffer. MBAR_INIT sets its
** expected arrivals (count) at phase 0; MBAR_ARRIVE arrives once, after
** adding tx bytes to the transactions the phase waits for (expect_tx, tx >
** 0); a phase completes when its pending arrivals and its transaction count
** both reach 0 (a TMA's bytes count down as they land), and the next starts
** with count arrivals pending. MBAR_WAIT(parity) waits until the phase of
** that parity has completed: it passes when the current phase's parity
** differs (so parity 1 passes on a fresh barrier, as producers rely on).
** bar: an INDEX of a shared uint64 buffer; parity an index in [0, 1].
*/
UOp *kernel_mbar_init(Kernel *k, UOp *bar, int64_t count, Err *e);
UOp *kernel_mbar_arrive(Kernel *k, UOp *bar, int64_t tx, Err *e);
UOp *kernel_mbar_wait(Kernel *k, UOp *bar, UOp *parity, Err *e);
/* Buffer b holds mbarriers (shared, uint64); op names the caller in e. */
int kernel_mbar_check(const Kernel *k, int b, const char *op, Err *e);
/*
** The dispatch of a global-to-shared tile copy to TMA: the tensor map
** (global_dim, global_stride in bytes, innermost first), the box (logical
** order, the inner extent split into nbox boxes when a swizzle's width is
** narrower than the tile), the swizzle (bytes: 128, 64, 32 or 0, widest
** first) under which every element of every box lands where the shared
** buffer's layout puts it, at every start (enumerated; kernel_tma.c).
*/
typedef struct KTma {
	int rank, swizzle, nbox;
	int64_t box[T_MAXDIM];
	int64_t global_dim[5], global_stride[5];
	int64_t box_bytes, bytes;
	char reason[300];
} KTma;
int kernel_tma_plan(const Kernel *k, const KRegion *dst, const KRegion *src, KTma *t, Err *e);
/* The global side alone: buffer g's dims and byte strides, innermost first. */
int kernel_tma_map(const Kernel *k, int g, int64_t *dims, int64_t *strides, Err *e);
/* TMA_LOAD statements, one per box, in a sequence named by the plan (plan,
** if not NULL, gets it): issued by the thread that runs them (put them
** under kernel_if(tx == 0)), completing on the mbarrier bar. */
UOp *kernel_tma(Kernel *k, const KRegion *dst, const KRegion *src, UOp *bar, KTma *plan, Err *e);
/* A TMA_LOAD's own checks (buffers, box, swizzle), and its bytes. */
int kernel_tma_check(const Kernel *k, const UOp *s, Err *e);
int64_t kernel_tma_bytes(const Kernel *k, const UOp *s);
/* The byte address TMA writes for dense address a under swizzle sw. */
int64_t kernel_tma_swizzle(int sw, int64_t a);

/* kernel_check.c: the verifier */
/*
** What must hold after every transform. Errors (return -1, e says what and
** where, naming the stage): a read of a buffer no stage writes and no caller
** provides (an input), an output no stage writes, a block-bound loop under a
** loop that is not block-bound, a thread-bound loop in a stage with block
** loops that is not under them, loops bound to one hardware axis with
** different extents (block axes; a thread-bound loop shorter than its block
** dimension is a guard), a barrier, shuffle or MMA under thread-divergent
** control flow (inside a thread-bound loop's guard, or an if or loop whose
** condition or extent depends on a thread index), an MMA on buffers that are
** not registers, thread.* and warp/lane bindings mixed, a lane extent over
** 32, an access with the wrong number of indices, an index that can leave
** its dimension (proved from ranges). Indices not proved inside
** (data-dependent, or ranges too loose) are notes, not errors: one line each
** in notes (may be NULL).
*/
int kernel_check(const Kernel *k, Buf *notes, Err *e);

/* kernel_print.c */
/*
** The loop-scalar pseudo-code Neptune prints: perfectly nested unbound loops
** merge into `for i, j in grid(2, 4):`, a reduce store prints as
** `xsum[i] += xexp[i, j]` or `xmax[i] = max(xmax[i], inp[i, j])`, bound loops
** name their hardware axis, stage names are comments. color: ANSI colours per
** axis type (tinygrad's palette).
*/
void kernel_print(Buf *b, const Kernel *k, int color);
/* One store as the pseudo-code writes it (x[i] += v), without a newline. */
void kernel_print_store(Buf *b, const Kernel *k, const UOp *store);
/* One mbarrier or TMA statement, without a newline. */
void kernel_print_tma(Buf *b, const Kernel *k, const UOp *s);
/* One value or index expression as the pseudo-code writes it. */
void kernel_print_expr(Buf *b, const Kernel *k, const UOp *u);
/* The buffers as a table: name, scope, role, dtype, shape, layout. */
void kernel_print_buffers(Buf *b, const Kernel *k);
/* Every UOp of the kernel, one a line, sources before users (tinygrad's listing). */
void kernel_print_uops(Buf *b, const Kernel *k);

/* kernel_lower.c */
/*
** A tensor graph to a kernel. Kernel boundaries at reductions, at CONTIGUOUS
** marks and at the root; elementwise chains inline; movement ops become index
** expressions (simplified); padding becomes guarded loads. Inputs are PARAMs
** and realized data (BINARY); each becomes an input buffer whose `tensor` is
** the node to realize for it (kernel_inputs). Stages are named after the
** nodes (tensor_named) or their op (xmax, xsum, ...), made unique.
*/
typedef struct KLowerOpts {
	const char *out_name;   /* the root's buffer name (NULL: its node name or "out") */
} KLowerOpts;
Kernel *kernel_lower(const UOp *root, const KLowerOpts *o, Err *e);

/* kernel_run.c (with kernel_compile, _exec, _warp, _async, _mem, _count.c): the interpreter */
typedef struct KCounts {
	int64_t global_loads, global_stores;   /* warp-level requests */
	int64_t global_sectors;                /* 32-byte sectors those requests touch */
	int64_t shared_loads, shared_stores;   /* warp-level requests */
	int64_t shared_accesses;               /* wavefronts: requests plus conflicts */
	int64_t bank_conflicts;                /* extra wavefronts from bank conflicts */
	int64_t ops;                           /* arithmetic operations (per thread) */
	int64_t barriers;                      /* barriers passed (per block) */
	int64_t shuffles;                      /* warp-level shuffles */
	int64_t mmas;                          /* warp-level MMAs (ops += 2MNK each) */
	int64_t ldmatrices;                    /* warp-level ldmatrix (shared_loads += one per 8x8 matrix) */
	int64_t cp_asyncs;                     /* cp.async per thread (each also a global load and a shared store per element) */
	int64_t wgmmas;                        /* warpgroup-level wgmma (ops += 2*64*N*16 each) */
	int64_t tmas, tma_bytes;               /* TMA boxes issued (cp.async.bulk.tensor), their bytes */
	int64_t blocks, threads;               /* launched */
	int64_t atomics, fences;               /* per thread */
} KCounts;
typedef struct KRunOpts {
	int checks;            /* races, bounds, uninitialized reads (default on: 1) */
	int counts;            /* fill KCounts */
	uint64_t mem_limit;    /* bytes of buffers and shadow state; 0: tessel.limits tensor_bytes */
	int64_t max_steps;     /* instructions; 0: tessel.limits steps (util/limits.h) */
	/* With checks on: watch_msg (watch_len bytes) gets where the last store to
	** element watch_off (physical) of buffer watch_buf - 1 happened: stage,
	** block, thread, loop indices ("" when none did). watch_buf 0: no watch. */
	int watch_buf;
	int64_t watch_off;
	char *watch_msg;
	size_t watch_len;
} KRunOpts;
/*
** Run k. bufs[0..k->nbuf-1]: the caller fills the inputs (dtype and shape as
** the buffer declares, row-major logical order: the interpreter places them
** through the buffer's layout); kernel_run allocates and fills the outputs
** (row-major, logical order) and leaves temporaries empty. Free every entry
** with tbuf_free. Errors: `race: ...`, `out of bounds: ...`, `uninitialized:
** ...` (with stage, block, thread, buffer and element), `barrier: ...`
** (threads of a block reach different barriers), `shuffle: ...` and `mma:
** ...` (lanes of a warp at different places, a source lane outside the warp,
** blocks of partial warps for an MMA), limits.
*/
int kernel_run(const Kernel *k, const KRunOpts *o, TBuf *bufs, KCounts *counts, Err *e);
/* Realize the inputs of a lowered kernel (their `tensor` nodes) into bufs,
** with PARAM slots bound as tensor_realize binds them. */
int kernel_inputs(const Kernel *k, const TEvalOpts *o, TBuf *bufs, Err *e);

#endif

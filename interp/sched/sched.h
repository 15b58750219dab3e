/* sched.h - schedules: replayable, verified transforms of kernels with TVM's and tinygrad's primitives. */
#ifndef TESSEL_SCHED_H
#define TESSEL_SCHED_H

#include "../kernel/kernel.h"

/*
** The room interp/sched/ (docs/architecture.md): schedule primitives and fusion
** transforms, one per file, the trace, verify, the loop-to-tile translation
** (tile_ir.h). It uses interp/kernel/ and what is below it; it knows nothing of
** device code (backends/), of distributed programs or of Lua.
*/

/*
** A schedule holds the kernel it transforms and the steps so far. Every
** primitive works on a copy (sched_begin), and the copy becomes current only
** when the verifier (kernel_check) accepts it (sched_commit): a refusal leaves
** the schedule as it was. Each step keeps the kernel before it (for undo and
** for bisecting a wrong result) and the Lua line that replays it. Loops are
** named by their stage and variable; a primitive that makes new loops names
** them after the old one (i -> i0, i1), made unique in the stage.
**
** One primitive per file (split.c, fuse.c, reorder.c, ...), each with the
** prototype below; each checks its preconditions and refuses with the reason.
*/
typedef struct SStep {
	char *line;          /* Lua that replays the step: s:split("xsum", "j", {nil, 4}) */
	Kernel *before;      /* the kernel before the step (owned) */
	char *note;          /* what the step derived (fusion), or NULL (owned) */
} SStep;

typedef struct Schedule {
	Kernel *k;           /* the current kernel (owned) */
	Kernel *orig;        /* the kernel as scheduling began (owned) */
	const UOp *graph;    /* the tensor graph orig was lowered from, or NULL; the caller keeps it alive */
	SStep *step;
	int nstep, capstep;
} Schedule;

/* sched.c */
Schedule *sched_new(const Kernel *k, const UOp *graph, Err *e);
void sched_free(Schedule *s);
/* A deep copy: its kernels, steps and notes (the graph shared), to try steps on. */
Schedule *sched_clone(const Schedule *s, Err *e);
Kernel *sched_begin(Schedule *s, Err *e);
/* Check next; make it current with line as its replay; or free it and refuse:
** "what: the result fails the verifier: ...". */
int sched_commit(Schedule *s, Kernel *next, const char *what, const char *line, Err *e);
int sched_undo(Schedule *s, Err *e);
/* The last step's note (a copy): the derivation a fusion step shows. */
int sched_note(Schedule *s, const char *note);
/* Every note, each under the line of its step; a sentence when there is none. */
void sched_explain(Buf *b, const Schedule *s);
/* A step on one stage: fn on a copy (stage st), committed as s:what(stage). */
int sched_apply_stage(Schedule *s, const char *what, const char *stage, int (*fn)(Kernel *, int, Err *),
                      Err *e);
/* The Lua lines that replay the schedule, one a line. */
void sched_trace(Buf *b, const Schedule *s);
/* A step that transforms loops loops[0..n-1] of a stage with fn on the copy,
** replayed as s:<what>(stage, {loops...}); fn's message gets what as prefix. */
int sched_apply_loops(Schedule *s, const char *what, const char *stage, const char *const *loops, int n,
                      int (*fn)(Kernel *, int, const char *const *, int, Err *), Err *e);
/* The last step as a line diff of the pseudo-code ("- " before, "+ " after). */
int sched_diff(Buf *b, const Schedule *s, Err *e);
/* The stage named name, or -1 (e names the stages there are). */
int sched_stage(const Kernel *k, const char *name, Err *e);
/* The loop (its END node) of stage st whose variable is named var, or NULL. */
UOp *sched_loop(const Kernel *k, int st, const char *var, Err *e);
/* The loops (END nodes) of stage st, depth-first, outermost first: at most max; the count. */
int sched_loops(const Kernel *k, int st, UOp **out, int max);
/* Stage st's body with every occurrence of the statement old replaced by new
** (NULL new: removed from its block). */
int sched_replace(Kernel *k, int st, const UOp *old, UOp *new, Err *e);
/* A loop variable named after base not used by any loop of stage st
** (base0, base1, ... when base is taken). */
UOp *sched_fresh_var(Kernel *k, int st, const char *base, int64_t extent);
/* Every loop of stage st named once: a later loop with an earlier one's name
** takes a fresh one (sched_fresh_var) in its own subtree. */
int sched_unique_loops(Kernel *k, int st, Err *e);
/* The statements from stage st's body down to target (END and IF nodes,
** target last): their count, 0 when target is not in the stage. */
int sched_path(const Kernel *k, int st, const UOp *target, UOp **out, int max);
/* s as a Lua string literal (string.format's %q) for replay lines. */
void sched_quote(Buf *b, const char *s);
/* s with every index expression and gate under it re-simplified (INDEX
** sources, load, store and if gates); values are rebuilt, never folded. */
UOp *sched_simplify_stmt(Kernel *k, UOp *s, Err *e);
/*
** May the iterations of the nest loops[0..n-1] (END nodes, each the only
** statement of the one before's body) of stage st run in another order?
** Yes when, for every buffer the innermost body writes, each of its elements
** is touched by one iteration only (one index for every access, which maps
** different iterations to different elements: proved by enumeration), or,
** with commute, every access to it is an update x[I] = x[I] op v by one op of
** add, mul, max, min (only the rounding changes). Barriers and MMAs in the
** body refuse. -1 with e naming two iterations that touch one element.
*/
int sched_independent(const Kernel *k, int st, UOp *const *loops, int n, int commute, Err *e);
/* The same, with the buffers of the scopes in the mask (1 << AS_REG, ...)
** left out: each instance of a bound loop has its own copy of them. */
int sched_independent_private(const Kernel *k, int st, UOp *const *loops, int n, int commute,
                              unsigned scopes, Err *e);
/* 1 when no value flows between iterations of loop (an END of stage st) through
** any register buffer it touches: each is used only inside the loop, and the
** innermost loop around its accesses overwrites all of it before any read
** (regs_private.c). Such buffers can be one per iteration (per CPU thread). 0
** with why saying which buffer and what fails. */
int sched_regs_private(const Kernel *k, int st, const UOp *loop, char *why, size_t n);
/* -1 when stage st stores to memory an axis's instances share (global; shared
** for thread axes) outside the loops bound to an axis the stage uses, so every
** thread or block of it runs the store (a warp binding needs a lane loop too);
** e names the store and the axis. sched_commit refuses a step that makes one. */
int sched_replicated(const Kernel *k, int st, Err *e);
/* The most points sched_independent enumerates. */
enum { SCHED_ENUM_LIMIT = 1 << 18 };

/* Stage and buffer editing for placement and caches. A stage named name
** with body inserted at position at (the stages from at on move down): at,
** or -1. */
int sched_insert_stage(Kernel *k, int at, const char *name, UOp *body, Err *e);
void sched_remove_stage(Kernel *k, int st);
/* Every stage body with the nodes old[k] replaced by new[k] (kernel_substitute). */
int sched_rewrite_all(Kernel *k, UOp *const *old, UOp *const *new, int n, Err *e);
/* Buffer b, which no stage may access any more, removed; the buffers after it
** are renumbered (new DEFINEs, every access rebuilt). */
int sched_drop_buffer(Kernel *k, int b, Err *e);
/* Whether statement s (and everything under it) loads, or stores to, buffer b. */
int sched_reads(const Kernel *k, const UOp *s, int b);
int sched_writes(const Kernel *k, const UOp *s, int b);

/* The update x[I] = x[I] op v (op add, mul, max, min; gated or not) that
** statement s is: its load of x, with op and v (other may be NULL); or NULL. */
const UOp *sched_update(const UOp *s, int *op, UOp **other);

/* The distinct loads of the buffer defined by def under s (a statement or a
** value), at most max; their count. */
int sched_loads(const UOp *s, const UOp *def, UOp **out, int max);
/* The stores of stage st, depth-first in program order, at most max; their count. */
int sched_stores(const Kernel *k, int st, UOp **out, int max);

/* A reduction loop (*loop set), a barrier or an mma anywhere under s: what
** it is ("a reduction loop"), or NULL for an element-wise statement. */
const char *sched_not_elementwise(const UOp *s, const UOp **loop);

/* for ax0, ax1, ... in grid(shape): dst[ax...] = src[ax...] (buffers of one
** shape), or NULL when out of memory. */
UOp *sched_copy_nest(Kernel *k, int dst, int src);

/* fission.c */
/* Loop `loop` of the stage distributed over the statements of its body: each
** statement under a loop of its own (the first keeps the name, the others take
** fresh ones). Refused when the loop is bound or its iterations are not
** independent (sched_independent, exactly). deep: then every loop inside the
** copies that holds several statements, as far as each is allowed. The new
** loops' names, ", "-separated, are appended to made (may be NULL) and named
** in the step's note. */
int sched_fission(Schedule *s, const char *stage, const char *loop, int deep, Buf *made, Err *e);
int sched_fission_in(Kernel *k, int st, const char *loop, Buf *names, Err *e);

/* skip_masked.c */
/* The iterations of loop `loop` of the stage in which every mask of its body
** (where(c, x, -inf), c on indices) is false everywhere in the tile are
** skipped: the body goes under "some mask holds in the tile", once every
** store is proved to change nothing there (inputs finite); refused with the
** store that would still change a buffer. The note names the guard. */
int sched_skip_masked(Schedule *s, const char *stage, const char *loop, Err *e);
int sched_skip_masked_in(Kernel *k, int st, const char *loop, Buf *why, Err *e);

/* split.c */
/* Loop `loop` into n nested loops (loop0, loop1, ...) of extents
** factors[0..n-1]; one factor may be 0 or -1 (Lua's nil): the extent divided
** by the others, rounded up. A product past the extent guards the body. */
int sched_split(Schedule *s, const char *stage, const char *loop, const int64_t *factors, int n, Err *e);
/* The same on a kernel being built (compositions: tile); vars gets the new
** loops' variables, outermost first (may be NULL). e has no "split: " prefix. */
int sched_split_in(Kernel *k, int st, const char *loop, const int64_t *factors, int n, UOp **vars,
                   Err *e);

/* fuse.c */
/* Loops loops[0..n-1], outermost first, each alone in the one before's body,
** into one loop named loops[0]_..._fused. */
int sched_fuse(Schedule *s, const char *stage, const char *const *loops, int n, Err *e);

/* reorder.c */
/* Loops loops[0..n-1] of one perfect nest in this order, outermost first;
** loops of the nest between them that are not given keep their places. */
int sched_reorder(Schedule *s, const char *stage, const char *const *loops, int n, Err *e);
/* The same on a kernel being built (tile); e has no "reorder: " prefix. */
int sched_reorder_in(Kernel *k, int st, const char *const *loops, int n, Err *e);

/* bind.c */
/* Loop `loop` bound to a hardware axis (hwaxis_parse: block.x, thread.y,
** warp, lane, blockIdx.x, ...), typed GLOBAL (blocks), LOCAL (threads,
** lanes) or WARP. */
int sched_bind(Schedule *s, const char *stage, const char *loop, const char *axis, Err *e);

/* annotate.c */
/* The axis type of a loop: THREAD (parallel), UPCAST (vectorize: an
** innermost loop of extent <= 64), UNROLL (unroll: extent <= 1024). */
int sched_parallel(Schedule *s, const char *stage, const char *loop, Err *e);
int sched_vectorize(Schedule *s, const char *stage, const char *loop, Err *e);
int sched_unroll(Schedule *s, const char *stage, const char *loop, Err *e);

/* tile.c */
/* Loops x and y (y alone in x's body) into x0, y0, x1, y1: split x by
** {nil, fx}, y by {nil, fy}, reorder; one step. */
int sched_tile(Schedule *s, const char *stage, const char *x, const char *y, int64_t fx, int64_t fy,
               Err *e);

/* optops.c: tinygrad's OptOps: op LOCAL, UPCAST, UNROLL, GROUP, GROUPTOP,
** THREAD split loop by arg (0: the whole extent) and type the new sub-axis;
** PADTO pads it to a multiple of arg under a guard; SWAP swaps it with
** other; NOLOCALS forbids LOCAL from then on (stage and loop unused). */
int sched_apply_opt(Schedule *s, const char *op, const char *stage, const char *loop, int64_t arg,
                    const char *other, Err *e);

/* set_layout.c: buffer takes the layout l (one of its members set); the
** accesses are logical, so only the offsets change. */
struct Layout;
struct Composed;
struct Lego;
struct AxeLayout;
typedef struct SLayout {
	const struct Layout *cute;
	const struct Composed *swz;
	const struct Lego *lego;
	const struct AxeLayout *axe;
} SLayout;
int sched_set_layout(Schedule *s, const char *buffer, const SLayout *l, Err *e);

/* thread_layout.c: the Axe layout from the elements stage writes (its
** last store's coordinates, row-major over shape sh) to the hardware
** coordinates that write them: bound loops on bx..tz, warp, lane; unbound
** ones on reg (serial iterations). Refused when a coordinate is not a tiling
** of its loops (a mixed-radix sum). */
struct AxeShape;
int sched_thread_layout(const Kernel *k, const char *stage, struct AxeLayout *out, struct AxeShape *sh,
                        Err *e);

/* compute_inline.c */
/* Stage `stage`, an element-wise B[v...] = f (one store, its loop variables
** as B's coordinates, no reduction, no guard), removed with its buffer;
** every later load of B becomes f at the load's indices. */
int sched_compute_inline(Schedule *s, const char *stage, Err *e);
/* The same on a kernel being built (e has no "compute_inline: " prefix). */
int sched_compute_inline_in(Kernel *k, int st, Err *e);

/* compute_at.c */
/* Stage `stage` (a nest of loops over the buffer B it writes, whole extents,
** any inner body) moved to the start of loop `loop` of stage `consumer`,
** over the region of B the consumer reads in one iteration of the loop. With
** threads bound inside the loop (and B not local) the region is spread over
** them between barriers. */
/* Buffer b, a temporary that one stage alone accesses, compacted to the
** region one iteration of the innermost loop around all its accesses touches
** (TVM's CompactBufferAllocation), when those regions do not overlap for any
** two iterations of the loops down to it (enumerated) and no loop around runs
** at once with another onto the storage: 1 when it shrank, 0 when it keeps
** its shape, -1 with e set. */
int sched_compact(Kernel *k, int b, Err *e);
int sched_compute_at(Schedule *s, const char *stage, const char *consumer, const char *loop, Err *e);
/* Stage `stage` (such a nest over the buffer it writes, reading the
** producer's buffer by its loop variables) moved to the end of loop `loop`
** of stage `producer`, over the region the producer writes there. */
int sched_reverse_compute_at(Schedule *s, const char *stage, const char *producer, const char *loop,
                             Err *e);

/* cache_read.c */
/* A copy <buffer>_<scope> (scope: global, shared, local) of the whole
** buffer, made by a new stage of that name just before `stage`; the stage
** reads the copy. */
int sched_cache_read(Schedule *s, const char *stage, const char *buffer, const char *scope, Err *e);

/* cache_write.c */
/* The stage writes a new <D>_<scope> instead of its buffer D; a new stage of
** that name right after it copies it into D. */
int sched_cache_write(Schedule *s, const char *stage, const char *scope, Err *e);

/* set_scope.c */
/* A temporary buffer's scope (global, shared, local). */
int sched_set_scope(Schedule *s, const char *buffer, const char *scope, Err *e);

/* decompose_reduction.c */
/* The reduction init of `stage` into a new stage <stage>_init before it;
** loop encloses the updates, not the init (the init goes above it). */
int sched_decompose_reduction(Schedule *s, const char *stage, const char *loop, Err *e);

/* reverse_compute_inline.c */
/* Stage `stage`, an element-wise consumer C[J] = f that reads its
** producer's buffer B element by element (by its own loop variables, one
** load), folded into the producer's one store B[I] = v, which becomes
** C[J'] = f' (its variables at I, the load of B as v); the stage and B go. */
int sched_reverse_compute_inline(Schedule *s, const char *stage, Err *e);

/* rfactor.c */
/* The reduction of `stage` (one update D[I] = D[I] op v) factored on its
** reduction loop `loop` (F iterations): a new stage <stage>_rf before it
** accumulates partial results in a new <D>_rf, D's shape with F inserted at
** factor_axis (0..ndim), over the loops it had, `loop` now spatial; the
** stage then reduces the F partial results into D. */
int sched_rfactor(Schedule *s, const char *stage, const char *loop, int factor_axis, Err *e);
/* The same on a kernel being built: the new stage and buffer are named
** <stage><suffix> and <D><suffix>; the new stage is st, the reduction
** st + 1; *rfbuf (may be NULL) gets the new buffer. */
int sched_rfactor_in(Kernel *k, int st, const char *loop, int axis, const char *suffix, int *rfbuf,
                     Err *e);

/* fusion.c: what rolling_update, split_k_update and fuse_and_privatize
** share (Neptune, Section 4 and Appendix C) */
enum { FMAXR = 8 };
typedef struct FRepair {
	UOp *upd;            /* the target's update X_t[I] = X_t[I] f g */
	int f;               /* the reducer: OP_ADD, OP_MUL, OP_MAX, OP_MIN */
	int xt;              /* X_t */
	int nr;              /* the reduce predecessors */
	int rbuf[FMAXR];     /* their buffers */
	UOp *rload[FMAXR];   /* their loads in g */
	UOp *g, *h;          /* g(r, c) and h(t, r, r'), over the symbols below */
	UOp *t, *r[FMAXR], *r2[FMAXR];
	const char *method;  /* "inverse" (Theorem 4.3) or "separation" */
	int safe[FMAXR];     /* g sees masked (-inf) inputs: predecessor q is read safely */
	int prev_safe[FMAXR];/* its init is infinite: h reads the previous value safely (not g) */
	double init[FMAXR];  /* its value while no (unmasked) input has reached it */
	int relax_casts;     /* in: derive h for g without its float roundings (FusionOpts) */
	Buf explain;         /* the derivation, as Figure 10 shows it */
} FRepair;
/* Options of the fusion steps. relax_casts: g may round a value to a narrower
** float and widen it back (float32(float16(exp(c - r))), Figure 8's
** softmax_exp_f16); h is derived and proved for g without those roundings, and
** holds up to them (the fused kernel rounds before the rescale, as
** FlashAttention does); the derivation says so. Without it such a g is refused. */
typedef struct FusionOpts {
	int relax_casts;
} FusionOpts;
/* upd (the target's update, its variables those of the fused loops) among
** the fused statements stmts[0..*n-1]: rewrite them (repair). */
typedef int (*FRepairFn)(Kernel *k, void *aux, UOp *upd, UOp **stmts, int *n, Err *e);
/* Whether store s reads the buffer it writes (a reduction, repaired or not). */
int fusion_accumulates(const Kernel *k, const UOp *s);
/* Step 1 (InlineMapReturnReduce): the element-wise stages between stage S
** and the target *t whose buffers the target's update reads, inlined (the
** target's index follows); refused when such a stage has another reader.
** The number inlined; ex (may be NULL) gets their names. */
int fusion_inline_maps(Kernel *k, int S, int *t, Buf *ex, Err *e);
/* Steps 3 and 4: match X_t = X_t f g(X_r, C) in stage t, with the reduce
** predecessors X_r the reductions of stages [lo, hi) read at the target's
** map loops; solve h(g(r, c), r, r') = g(r', c) by inverting g in c
** (Theorem 4.3) or by separating g into factors of r and c; prove Eq. 4
** and Eq. 5 in the algebra (algebra.h). rp->explain must be initialized. */
int fusion_derive(const Kernel *k, int t, int lo, int hi, FRepair *rp, Err *e);
/* Predecessor q's value x as the fused program reads it in g: x, or, when
** rp->safe[q], x with its init value (-inf for a max, 0 for a sum) read as
** a finite stand-in (0, 1) that keeps g finite (and 0) on masked inputs. */
UOp *fusion_safe(Kernel *k, const FRepair *rp, int q, UOp *x);
/* Its previous value as h reads it: prev, or, when rp->safe[q] or
** rp->prev_safe[q] and prev is still the init, the current one read safely
** (then h is the identity: on the masked terms accumulated so far, which are
** 0, or on X_t's init before the first term). */
UOp *fusion_safe_prev(Kernel *k, const FRepair *rp, int q, UOp *prev, UOp *cur_safe);
/* h(tv, prev, cur) in the dtype of X_t: the repair term as kernel values. */
UOp *fusion_apply_h(Kernel *k, const FRepair *rp, UOp *tv, UOp *const *prev, UOp *const *cur);
/* Step 2 (naive loop fusion): the reduction of stage t moved under loop
** `loop` of stage S: its map and reduce loops matched, outermost first, by
** extent with S's loops down to `loop` (a lone reduce loop split like S's),
** its inits before S's first reduce loop, the rest of it at the end of
** the loop's body (before the copies into <X>_prev), fn (may be NULL)
** rewriting it; stage t goes. */
int fusion_fuse(Kernel *k, int t, int S, const char *loop, FRepairFn fn, void *aux, Buf *ex, Err *e);

/* A fusion step: fn on a copy of the kernel (stage t, the loop spec, the
** derivation into ex), committed as s:what(stage, loop) with the
** derivation as its note. */
int fusion_step(Schedule *s, const char *what, const char *stage, const char *loop, const FusionOpts *o,
                int (*fn)(Kernel *, int, const char *, const FusionOpts *, Buf *, Err *), Err *e);
/* The stage of the loop named by spec before stage t: "stage.loop", or
** "loop" for the nearest earlier stage with a loop of that name; var gets
** the loop's name. */
int fusion_loop_stage(const Kernel *k, int t, const char *spec, char *var, size_t nvar, Err *e);

/* rolling_update.c: Neptune's Algorithm 1. The reduction `stage` fused under
** `loop` (see fusion_loop_stage) of its reduce predecessor's stage: map
** stages between them inlined, the repair h derived and proved, each
** predecessor's previous value cached in <X_r>_prev, and the update
** rewritten X_t = h(X_t, X_r_prev, X_r) f g(X_r, C) (Eq. 7). The derivation
** is the step's note (sched_explain). */
int sched_rolling_update(Schedule *s, const char *stage, const char *loop, Err *e);
int sched_rolling_update_opts(Schedule *s, const char *stage, const char *loop, const FusionOpts *o, Err *e);

/* privatize.c */
/* Stage st's reduction privatized on its reduce loop `loop` (rfactor with
** the loop as the last axis): a local stage <stage>_local at st and the
** global stage at st + 1; *local (may be NULL) gets <X>_local. */
int fusion_privatize(Kernel *k, int st, const char *loop, int *local, Err *e);
/* Stage t's lone reduce loop split like loop `loop` of stage S and the
** loops inside it that enclose S's reduction; first gets the name of t's
** loop that matches `loop`. */
int fusion_split_like(Kernel *k, int t, int S, const char *loop, char *first, size_t nfirst, Err *e);
/* Steps of FuseAndPrivatize: stage *S privatized on var (unless it is a
** local stage already), stage *t split alike and privatized (indices follow). */
int fusion_fuse_privatized(Kernel *k, int *t, int *S, const char *var, Buf *ex, Err *e);
/* Neptune's PrivatizeReduce: loop split into an outer loop of `parts`
** iterations and an inner one; the reduction privatized on the outer one. */
int sched_privatize_reduce(Schedule *s, const char *stage, const char *loop, int64_t parts, Err *e);
/* Neptune's FuseAndPrivatize: the reduction `stage` and the reduction under
** `loop` both privatized on it, the stage's local fused under the loop's
** local; refused when the stage reads what needs a repair (split_k_update). */
int sched_fuse_and_privatize(Schedule *s, const char *stage, const char *loop, Err *e);

/* split_k_update.c: Neptune's Algorithm 2. The reduce predecessors
** privatized under `loop` (a local stage, its reductions in parallel over
** the loop, and a global one), the target privatized alike with its local
** reading theirs and fused into the local stage, and its global repaired:
** X_t = X_t f h(X_t_local, X_r_local, X_r) (Eq. 8). */
int sched_split_k_update(Schedule *s, const char *stage, const char *loop, Err *e);
int sched_split_k_update_opts(Schedule *s, const char *stage, const char *loop, const FusionOpts *o, Err *e);

/* verify.c */
typedef struct SVerifyOpts {
	int trials;          /* random inputs tried (0: 3) */
	uint64_t seed;       /* of the first trial; trial t uses seed + t */
	double rtol, atol;   /* 0: per dtype (float32 1e-4, float16 1e-2, bfloat16 2e-2, float64 1e-9; integers exact) */
} SVerifyOpts;
/*
** The current kernel against the reference on random inputs: the tensor
** graph's evaluator when there is one, else the original kernel run by the
** interpreter. 0 when every output element agrees; -1 with e saying what
** differs: the output, the element, got and want, the seed, the store that
** wrote it (stage, block, thread, loop indices) and the first step after
** which the schedule goes wrong. report (may be NULL) gets one line per trial.
*/
int sched_verify(Schedule *s, const SVerifyOpts *o, Buf *report, Err *e);

#endif

/* ops.h - the properties of every UOp op, one line each (QBE's ops.h style). */
/*
** Include with O defined:
**   O(NAME, name, arity, flags, identity, infix, c, python, lua, pinfix, pc, ppy, plua)
** arity    number of sources (-1: variable, for the tensor ops to come)
** flags    U_COMM commutative, U_ASSOC associative, U_CMP result is bool,
**          U_ALU elementwise arithmetic, U_LEAF no sources
** identity e with x op e == x (and e op x == x when commutative); U_NOID if none
** infix..lua the operator in each syntax ("" for ops printed as calls or specially)
** pinfix..plua  binding strength in that syntax (higher binds tighter; 0 = atom/call)
** Adding an op touches one line here, one case in minmax.c and one in eval.c
** (tensor ops: tensor.c derives their shape, tensor_eval.c evaluates them).
** The tensor ops follow the index ops, so the index ops keep their numbers; their
** arguments are described in uop.h ("Tensor programs").
*/
/* leaves */
O(CONST, "const", 0, U_LEAF, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(VAR,   "var",   0, U_LEAF, U_NOID, "", "", "", "", 0, 0, 0, 0)
/* unary */
O(NEG,   "neg",   1, U_ALU,  U_NOID, "-", "-", "-", "-", 14, 14, 14, 11)
O(CAST,  "cast",  1, U_ALU,  U_NOID, "", "", "", "", 0, 0, 0, 0)
/* binary arithmetic */
O(ADD,   "add",   2, U_ALU | U_COMM | U_ASSOC, 0, "+", "+", "+", "+", 12, 12, 12, 9)
O(SUB,   "sub",   2, U_ALU,  0,      "-", "-", "-", "-", 12, 12, 12, 9)
O(MUL,   "mul",   2, U_ALU | U_COMM | U_ASSOC, 1, "*", "*", "*", "*", 13, 13, 13, 10)
O(IDIV,  "idiv",  2, U_ALU,  1,      "//", "/", "//", "//", 13, 13, 13, 10)
O(MOD,   "mod",   2, U_ALU,  U_NOID, "%", "%", "%", "%", 13, 13, 13, 10)
O(MIN,   "min",   2, U_ALU | U_COMM | U_ASSOC, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(MAX,   "max",   2, U_ALU | U_COMM | U_ASSOC, U_NOID, "", "", "", "", 0, 0, 0, 0)
/* comparisons: bool results */
O(CMPLT, "cmplt", 2, U_ALU | U_CMP, U_NOID, "<", "<", "<", "<", 7, 10, 7, 3)
O(CMPNE, "cmpne", 2, U_ALU | U_CMP | U_COMM, U_NOID, "!=", "!=", "!=", "~=", 7, 9, 7, 3)
O(CMPEQ, "cmpeq", 2, U_ALU | U_CMP | U_COMM, U_NOID, "==", "==", "==", "==", 7, 9, 7, 3)
/* select */
O(WHERE, "where", 3, U_ALU,  U_NOID, "", "", "", "", 0, 3, 3, 0)
/* bitwise (logical on bool) */
O(AND,   "and",   2, U_ALU | U_COMM | U_ASSOC, -1, "&", "&", "&", "&", 10, 8, 10, 6)
O(OR,    "or",    2, U_ALU | U_COMM | U_ASSOC, 0, "|", "|", "|", "|", 8, 6, 8, 4)
O(XOR,   "xor",   2, U_ALU | U_COMM | U_ASSOC, 0, "^", "^", "^", "~", 9, 7, 9, 5)
O(SHL,   "shl",   2, U_ALU,  0,      "<<", "<<", "<<", "<<", 11, 11, 11, 7)
O(SHR,   "shr",   2, U_ALU,  0,      ">>", ">>", ">>", ">>", 11, 11, 11, 7)
/* tensor elementwise (the spec's primitives and decomposed ops) */
O(RECIP, "recip", 1, U_ALU | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(TRUNC, "trunc", 1, U_ALU | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(EXP2,  "exp2",  1, U_ALU | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(LOG2,  "log2",  1, U_ALU | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(SIN,   "sin",   1, U_ALU | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(SQRT,  "sqrt",  1, U_ALU | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(POW,   "pow",   2, U_ALU | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(MULACC, "mulacc", 3, U_ALU | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(THREEFRY, "threefry", 2, U_ALU | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
/* tensor sources */
O(PARAM, "param", 0, U_LEAF | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(BUFFER, "buffer", 0, U_LEAF | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(BINARY, "binary", 0, U_LEAF | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
/* movement: views, no arithmetic */
O(PERMUTE, "permute", 1, U_MOVE | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(FLIP,  "flip",  1, U_MOVE | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(RESHAPE, "reshape", 1, U_MOVE | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(EXPAND, "expand", 1, U_MOVE | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(PAD,   "pad",   1, U_MOVE | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(SHRINK, "shrink", 1, U_MOVE | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(INDEX, "index", -1, U_MOVE | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(STACK, "stack", -1, U_MOVE | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(BITCAST, "bitcast", 1, U_MOVE | U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
/* reduce: arg[0] the op (add, max, mul), data the axes */
O(REDUCE, "reduce", 1, U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
/* load, store, ordering */
O(LOAD,  "load",  -1, U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(STORE, "store", -1, U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(AFTER, "after", -1, U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(GROUP, "group", -1, U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(SINK,  "sink",  -1, U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
/* calls */
O(FUNCTION, "function", -1, U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(CALL,  "call",  -1, U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(TUPLE, "tuple", -1, U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(GETTUPLE, "gettuple", 1, U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
/* multi-device */
O(COPY,  "copy",  1, U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(REPLICATED, "replicated", 1, U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
/* markers: identity on data */
O(CONTIGUOUS, "contiguous", 1, U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(DETACH, "detach", 1, U_TENSOR, U_NOID, "", "", "", "", 0, 0, 0, 0)
/* kernels: the loop IR (kernel.h); statements have dtype void.
** RANGE   src (var,): a loop over the variable's range [0, n-1]; arg[0] AxisType,
**         arg[1] HwAxis (the hardware axis it is bound to, 0 for none)
** END     src (range, stmt...): the loop, with its body in order
** IF      src (gate, stmt...): the body runs where gate is true
** BARRIER ():  every thread of a block waits here (__syncthreads)
** DEFINE  (): a kernel buffer; arg[0] its number in the kernel, arg[1] its
**         UAddrSpace; name its name; dtype its element type
** Accesses reuse INDEX, LOAD and STORE: INDEX(define, i0, i1, ...) is one
** element by its logical coordinates, LOAD(index [, gate]) its value (0 where
** gate is false, without touching memory), STORE(index, value [, gate]).
** Warp-synchronous ops (appended, so that no op is renumbered):
** SHUFFLE src (value, lane): the value `value` has in lane `lane` (0..31) of
**         the same warp (__shfl_sync with a full mask); dtype the value's
** MMA     src (D, A, B, C): DEFINEs of register buffers; D = A B + C by a
**         CuTe MMA atom over the warp; name the atom's name; dtype void
** LDMATRIX src (D, index): ldmatrix.sync.aligned.m8n8.x{arg[0]}[.trans]
**         (arg[1] 1: .trans) over the warp: lane 8j + r names, by index into
**         a 16-bit shared buffer, the first of the 8 consecutive elements of
**         row r of matrix j; each lane receives 2 elements of each matrix
**         into the register buffer D (kernel_ldmatrix); dtype void
** Asynchronous copies (per thread, sm_80's cp.async; kernel_cp_async):
** CP_ASYNC src (dst index, src index): arg[0] elements (4, 8 or 16 bytes)
**         from the global source's physical offset to the shared
**         destination's, started now and landed at the CP_WAIT that retires
**         its group; dtype void
** CP_COMMIT (): closes the thread's copies issued since the last commit
**         into a group (cp.async.commit_group)
** CP_WAIT (): arg[0] = n: waits until at most the n most recent committed
**         groups of the thread are in flight (cp.async.wait_group n)
** Warpgroup MMA (sm_90a's wgmma; kernel_wgmma, kernel_wgmma.c):
** WGMMA   src (D, A index, B index): D (a DEFINE of float32 registers, N/2 a
**         thread) += A (64x16) B (16xN) over the warpgroup, A and B shared
**         tiles from the elements the indices name (the last two dimensions;
**         leading extents 1), or A a register fragment (8 elements from the
**         index along the last dimension); arg[0] = N; arg[1] = flags
**         (KWG_B_NK: B's tile given (n, k); KWG_ZERO: D = A B); dtype void
** WG_FENCE (), WG_COMMIT (): wgmma.fence, wgmma.commit_group
** WG_WAIT (): arg[0] = n: wgmma.wait_group n
** SETMAXNREG (): arg[0] = n, arg[1] = 1 (inc) or 0 (dec): setmaxnreg, the
**         warpgroup's registers a thread (a hint: no value changes)
** Hopper's shared-memory barriers and bulk tensor copies (kernel_tma.c):
** MBAR_INIT src (bar index): arg[0] = count: mbarrier.init of the uint64
**         shared element (expected arrivals count, phase 0)
** MBAR_ARRIVE src (bar index): arg[0] = tx bytes: mbarrier.arrive (tx > 0:
**         .expect_tx of tx bytes first)
** MBAR_WAIT src (bar index, parity): waits until the phase of that parity
**         has completed (try_wait.parity in a loop)
** TMA_LOAD src (dst index, src index, bar index): one box of
**         cp.async.bulk.tensor: data holds int64 box[rank of the global
**         buffer] (logical order), arg[0] the swizzle in bytes (0, 32, 64,
**         128); dst names the box's first shared element, src its first
**         global element; its bytes complete_tx on the barrier and land when
**         the barrier's phase completes; dtype void
** Atomics and fences (appended; kernel_atomic, kernel.h says how the
** interpreter orders them):
** ATOMIC  src (index, value [, old index]): one atomic read-modify-write
**         of the element index names (a global or shared buffer): arg[0]
**         the KAtomicOp (add, max, min, exch); value of the element's
**         dtype; the old value goes to the register element old names
**         (when given); dtype void
** FENCE   (): arg[0] the KFenceScope: __threadfence (fence.acq_rel.gpu)
**         or __threadfence_block */
O(RANGE, "range", 1, U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(END,   "end",  -1, U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(IF,    "if",   -1, U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(BARRIER, "barrier", 0, U_LEAF | U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(DEFINE, "define", 0, U_LEAF | U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(SHUFFLE, "shuffle", 2, U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(MMA,   "mma",   4, U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(LDMATRIX, "ldmatrix", 2, U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(CP_ASYNC, "cp_async", 2, U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(CP_COMMIT, "cp_commit", 0, U_LEAF | U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(CP_WAIT, "cp_wait", 0, U_LEAF | U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(WGMMA, "wgmma", 3, U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(WG_FENCE, "wg_fence", 0, U_LEAF | U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(SETMAXNREG, "setmaxnreg", 0, U_LEAF | U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(WG_COMMIT, "wg_commit", 0, U_LEAF | U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(WG_WAIT, "wg_wait", 0, U_LEAF | U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(MBAR_INIT, "mbar_init", 1, U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(MBAR_ARRIVE, "mbar_arrive", 1, U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(MBAR_WAIT, "mbar_wait", 2, U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(TMA_LOAD, "tma_load", 3, U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(ATOMIC, "atomic", -1, U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(FENCE, "fence", 0, U_LEAF | U_KERNEL, U_NOID, "", "", "", "", 0, 0, 0, 0)

/* uop.h - the room interp/ir/: the UOp IR, its ops table, derived properties, rewriting, simplifying, printing, evaluating. */
#ifndef TESSEL_UOP_H
#define TESSEL_UOP_H

#include <stddef.h>
#include <stdint.h>

#include "../../util/buf.h"

/*
** The room at the bottom of the house (docs/architecture.md): one IR for index
** arithmetic, tensor programs and kernels. It uses util/ only; every other room
** builds on it. It holds the ops table (ops.h, ops.c), the context and its
** constructors (uop.c), the spec's derived properties (minmax.c, derive.c), the
** rewrite engine, the simplifier, the printers, the evaluator of expressions,
** dtypes and the real algebra of float expressions (algebra.h). It knows no
** tensor constructor, kernel, layout or schedule.
*/

/*
** One IR for the whole project (tinygrad's UOp): a UOp is (op, dtype, src[], arg).
** This file holds its scalar corner: index arithmetic. The tensor-program ops
** (movement, reduce, load/store, ...) and the float dtypes join the same enums
** and the same struct; ops with larger arguments (shapes, axes, device tuples)
** carry them in `data`, interned in the arena like the nodes themselves.
**
** Every UOp lives in the arena of a UCtx and is hash-consed there: building a
** node equal to an existing one (same op, dtype, sources, arg, name, data)
** returns the existing pointer, so equality of expressions is pointer
** equality. Nodes are immutable and freed only all at once with uctx_free.
** Constructors never fail on user input; they return NULL only when memory
** runs out or the expression would nest deeper than UOP_MAXDEPTH (and then
** every constructor given a NULL source returns NULL). The depth bound is what
** lets every walker recurse without exhausting the C stack.
*/
enum { UOP_MAXDEPTH = 10000 };

enum { U_LEAF = 1, U_ALU = 2, U_COMM = 4, U_ASSOC = 8, U_CMP = 16,
       U_MOVE = 32,     /* movement op: a view of its source, no arithmetic */
       U_TENSOR = 64,   /* tensor-level op: never part of an index expression */
       U_KERNEL = 128 }; /* loop-IR op (kernel.h): loops, conditionals, barriers, buffers */
#define U_NOID INT64_MIN

typedef enum Op {
#define O(NAME, name, ar, fl, id, inf, c, py, lua, p0, p1, p2, p3) OP_##NAME,
#include "ops.h"
#undef O
	OP_COUNT
} Op;

/* dtypes: index is the 64-bit integer of index arithmetic (tinygrad's
** dtypes.index); floats and the narrow integers come with tensors. */
#define DTYPES(D) \
	D(VOID, "void", 0) D(BOOL, "bool", 1) D(INT32, "int32", 4) \
	D(INT64, "int64", 8) D(INDEX, "index", 8) \
	D(INT8, "int8", 1) D(INT16, "int16", 2) D(UINT8, "uint8", 1) \
	D(UINT16, "uint16", 2) D(UINT32, "uint32", 4) D(UINT64, "uint64", 8) \
	D(FLOAT16, "float16", 2) D(BFLOAT16, "bfloat16", 2) D(FLOAT32, "float32", 4) \
	D(FLOAT64, "float64", 8)
typedef enum DType {
#define D(N, s, b) DT_##N,
	DTYPES(D)
#undef D
	DT_COUNT
} DType;

typedef struct UOp UOp;
struct UOp {
	uint8_t op;        /* Op */
	uint8_t dtype;     /* DType */
	uint16_t nsrc;
	uint32_t id;       /* creation order in its context: dense, a key for side tables */
	uint32_t hash;
	uint32_t ndata;
	uint32_t depth;    /* 1 + the deepest source: bounded by UOP_MAXDEPTH */
	int16_t ndim;      /* tensor rank: 0 for scalars and every index expression */
	int16_t axis;      /* multi-device shard axis, -1 for none */
	uint8_t addrspace; /* UAddrSpace: where a tensor's values live */
	const int64_t *shape; /* ndim sizes (derived at construction, tensor.c) */
	const char *device;   /* NULL (constants, index arithmetic), "CPU" or a tuple "CPU:0,CPU:1" */
	int64_t arg[2];    /* CONST: value; VAR: [min, max] */
	int64_t vmin, vmax;/* min_max, derived once at construction (minmax.c) */
	const char *name;  /* VAR: its name */
	const void *data;  /* larger arguments of later ops (copied into the arena) */
	UOp *chain;        /* hash bucket chain */
	UOp *src[];
};

typedef struct UCtx UCtx;

/* Op properties from ops.h. */
typedef struct OpInfo {
	const char *name;
	int arity, flags;
	int64_t identity;
	const char *sym[4];   /* infix, C, Python, Lua */
	int prec[4];
} OpInfo;
extern const OpInfo uop_info[OP_COUNT];
const char *dtype_name(DType t);
int dtype_parse(const char *s, DType *t);
/* The range of values of a dtype (index and int64 are the full int64 range;
** uint64 stops at INT64_MAX; floats claim the full int64 range: min_max of a
** float value is the enclosing integer interval). */
void dtype_range(DType t, int64_t *lo, int64_t *hi);
int dtype_bytes(DType t);
int dtype_is_float(DType t);
int dtype_is_unsigned(DType t);

/* uop.c */
UCtx *uctx_new(void);
void uctx_free(UCtx *c);
size_t uctx_nodes(const UCtx *c);   /* distinct nodes built so far */
size_t uctx_bytes(const UCtx *c);   /* arena bytes held */
/* The raw constructor: no folding, only hash-consing and min_max. */
UOp *uop_new(UCtx *c, Op op, DType t, UOp *const *src, int nsrc,
             int64_t a0, int64_t a1, const char *name, const void *data, uint32_t ndata);
UOp *uop_const(UCtx *c, DType t, int64_t v);
UOp *uop_int(UCtx *c, int64_t v);             /* an index constant */
/* A constant of any dtype from a double: floats hold the value as the dtype
** rounds it (arg[0] has the bits of that double), integers truncate and wrap. */
UOp *uop_constf(UCtx *c, DType t, double v);
double uop_const_value(const UOp *u);         /* a CONST as a double */
/* Raw arena memory that lives as long as c (derived shapes). */
void *uctx_alloc(UCtx *c, size_t n);
/* A variable of dtype index with the inclusive range [lo, hi]; NULL if lo > hi or
** the name is not an identifier of at most 63 characters (uop_valid_name). */
UOp *uop_var(UCtx *c, const char *name, int64_t lo, int64_t hi);
int uop_valid_name(const char *name);
/* Folding constructors: constants fold (overflow-checked: an overflowing or
** undefined constant operation is left unfolded), identities vanish
** (x+0, x*1, x//1), absorbing elements win (x*0, x&0, x%1), and x-x, x^x,
** min(x,x), where(c,x,x) and the like shrink. */
UOp *uop_alu(UCtx *c, Op op, UOp *a, UOp *b);
UOp *uop_unary(UCtx *c, Op op, UOp *a);
UOp *uop_add(UCtx *c, UOp *a, UOp *b);
UOp *uop_sub(UCtx *c, UOp *a, UOp *b);
UOp *uop_mul(UCtx *c, UOp *a, UOp *b);
UOp *uop_idiv(UCtx *c, UOp *a, UOp *b);
UOp *uop_mod(UCtx *c, UOp *a, UOp *b);
UOp *uop_neg(UCtx *c, UOp *a);
UOp *uop_where(UCtx *c, UOp *cond, UOp *a, UOp *b);
UOp *uop_cast(UCtx *c, DType t, UOp *a);
/* Rebuild u with new sources through the folding constructors. */
UOp *uop_rebuild(UCtx *c, const UOp *u, UOp *const *src);
/* Copy u (built in any context) into c. */
UOp *uop_import(UCtx *c, const UOp *u);
/* A total order on structure (not on pointers), stable across contexts: the
** canonical order of commutative operands. Constants sort last. */
int uop_cmp(const UOp *a, const UOp *b);
int uop_is_const(const UOp *u, int64_t v);
/* Operation count: non-leaf nodes of the expression as a tree (a shared
** subexpression counts each time it is printed), and as a DAG. */
int64_t uop_ops(const UOp *u);
int64_t uop_ops_dag(const UOp *u);
/* The variables of u, sorted by name, without duplicates; returns how many
** (at most max are stored). */
int uop_vars(const UOp *u, const UOp **out, int max);

/* minmax.c */
/* The derived interval [lo, hi] of op applied to sources with the given ranges. */
void uop_minmax(Op op, DType t, UOp *const *src, int nsrc, const int64_t *arg,
                int64_t *lo, int64_t *hi);
/* Checked arithmetic: 0 on success, -1 on overflow (or division by zero). */
int uck_add(int64_t a, int64_t b, int64_t *r);
int uck_sub(int64_t a, int64_t b, int64_t *r);
int uck_mul(int64_t a, int64_t b, int64_t *r);
int uck_fdiv(int64_t a, int64_t b, int64_t *r);  /* floor division */
int uck_fmod(int64_t a, int64_t b, int64_t *r);  /* floor modulo: sign of b */
/* op on constants with overflow checks; -1 when undefined or out of t's range. */
int uop_fold(Op op, DType t, const int64_t *v, int n, int64_t *r);

/* rewrite.c */
/*
** Pattern rewriting. A pattern matches a node by op (UPAT_ANY for any),
** optional predicates on its range or constant value, and patterns for its
** sources (tried in both orders for commutative ops); `capture` stores the
** matched node in slot cap[capture]. A rule's function receives the root
** and the captures and returns the replacement, or NULL when its side
** conditions fail. uop_rewrite applies the rules bottom-up until no rule
** applies anywhere (a fixpoint), memoizing every node it has finished.
*/
enum { UPAT_ANY = -1, UPAT_MAXCAP = 8 };
enum {
	UP_CONST = 1,    /* a constant */
	UP_POS = 2,      /* range > 0 */
	UP_NONNEG = 4,   /* range >= 0 */
	UP_NONZERO = 8   /* range excludes 0 */
};
typedef struct UPat UPat;
struct UPat {
	int op;
	int capture;     /* -1: none */
	int pred;
	int nsrc;        /* 0: sources not looked at */
	const UPat *src[3];
};
typedef UOp *(*URewriteFn)(UCtx *c, UOp *root, UOp **cap, void *aux);
typedef struct URule {
	const char *name;
	const UPat *pat;
	URewriteFn fn;
} URule;
/* max_steps bounds the number of rule applications (0: a default of 1e6). */
int uop_rewrite(UCtx *c, UOp *root, const URule *rules, int nrules, void *aux,
                long max_steps, UOp **out, Err *e);
/* Whether pattern p matches u (captures filled). */
int upat_match(const UPat *p, UOp *u, UOp **cap);

/* simplify.c */
/* The symbolic rule set to a fixpoint, the cheaper (by uop_ops) of the
** expanded and unexpanded forms, then the printing form (x + y*-1 -> x - y). */
int uop_simplify(UCtx *c, UOp *u, UOp **out, Err *e);
/* Only the rule set (canonical form, no cost model, no printing form). */
int uop_normalize(UCtx *c, UOp *u, UOp **out, Err *e);
/* Distribute every product over sums (the expanded form). */
int uop_expand(UCtx *c, UOp *u, UOp **out, Err *e);
extern const URule uop_symbolic_rules[];
extern const int uop_nsymbolic_rules;

/* print.c */
typedef enum Dialect { D_INFIX, D_C, D_CUDA, D_OPENCL, D_PYTHON, D_TRITON, D_LUA, D_COUNT } Dialect;
const char *dialect_name(Dialect d);
int dialect_parse(const char *s, Dialect *d);
/* One expression in a dialect's syntax. Floor division and modulo print as the
** plain operator where the dialect's operator is already floor (Python, Lua) or
** the ranges prove both operands non-negative; otherwise as an inline form
** that is correct for every sign. */
void uop_print(Buf *b, const UOp *u, Dialect d);
/* uop_print for code: -1 with a message naming the code_bytes limit (util/limits.h)
** when the text would be longer; what was printed stays in b, cut short. */
int uop_print_code(Buf *b, const UOp *u, Dialect d, Err *e);
/* The expression as an indented tree, one node a line (show(e)); at most
** max_lines lines. */
void uop_print_tree(Buf *b, const UOp *u, int max_lines);

/* eval.c */
typedef struct UBind {
	const char *name;
	int64_t value;
} UBind;
/* Evaluate with the variables bound by name. Errors: an unbound variable, a
** value outside its variable's range, division by zero, overflow of the dtype. */
int uop_eval(const UOp *u, const UBind *bind, int nbind, int64_t *out, Err *e);
/*
** uop_eval compiled once for many points. roots[] are compiled together
** (shared subexpressions once); every variable is matched by name to an entry
** of bind[], whose layout uop_prog_run's bind[] must keep: only the values
** change between runs. out[] gets one value per root. A program holds its
** scratch space: one run at a time. Errors as uop_eval's.
*/
typedef struct UProg UProg;
UProg *uop_prog_new(const UOp *const *roots, int nroots, const UBind *bind, int nbind, Err *e);
int uop_prog_run(UProg *p, const UBind *bind, int64_t *out, Err *e);
void uop_prog_free(UProg *p);
/*
** Whether a and b agree at every point of their variables' ranges (variables
** are matched by name). Refuses (-1) when there are more than limit points.
** *equal is set; when 0, cex gets the counterexample "i=3, j=5: a = 7, b = 8"
** (cex may be NULL) and bind (if not NULL, room for 16) its values.
*/
int uop_equivalent(const UOp *a, const UOp *b, int64_t limit, int *equal,
                   Buf *cex, UBind *bind, int *nbind, Err *e);

/* dtype.c */
/* float16 and bfloat16: round to nearest, ties to even, from a double (one
** rounding, never through float32); NaN stays NaN, overflow goes to infinity. */
uint16_t dtype_to_half(double x);
double dtype_from_half(uint16_t h);
uint16_t dtype_to_bf16(double x);
double dtype_from_bf16(uint16_t h);
/* The smallest dtype both a and b convert to (tinygrad's promotion lattice). */
DType dtype_promote(DType a, DType b);
/* Integers wrap (two's complement) to the width of t. */
int64_t dtype_wrap(DType t, int64_t v);
/* A float converted to an integer dtype: truncated toward zero, NaN is 0,
** saturated to int64, then wrapped to t. */
int64_t dtype_ftoi(DType t, double x);
/* Store a value into / load a value from memory of dtype t. */
void dtype_store_f(DType t, void *p, double v);
void dtype_store_i(DType t, void *p, int64_t v);
double dtype_load_f(DType t, const void *p);
int64_t dtype_load_i(DType t, const void *p);

/* derive.c */
/*
** The spec's derived properties of the tensor-program ops (the ops after SHR in
** ops.h, on the same UOp): every node has a shape (ndim sizes), device, shard
** axis and address space, computed when it is built (uop_new calls uop_derive;
** the tensor constructors of tensor/tensor.h call it first for their messages);
** index expressions are scalars (ndim 0, no device). Arguments of the tensor ops:
**   CONST      of a float dtype: arg[0] holds the bits of the double value
**   PARAM, BUFFER  arg[0] slot, arg[1] rank; data: int64 shape[rank], then
**              the device string with its NUL; PARAM's name is its name
**   BINARY     data: the bytes (dtype uint8, shape (ndata,))
**   PERMUTE    data: int64 order[rank];  FLIP: int64 flags[rank]
**   RESHAPE, EXPAND  arg[1] rank'; data: int64 shape'[rank']
**   PAD, SHRINK  data: int64 offset[rank], then int64 shape'[rank]
**   CAST, BITCAST  the target dtype is the node's dtype
**   REDUCE     arg[0] OP_ADD, OP_MAX or OP_MUL; arg[1] k; data: int64 axes[k]
**              (a reduced axis stays, with size 1)
**   COPY       data: the device string (with its NUL)
**   REPLICATED arg[0] the shard axis it drops
**   GETTUPLE   arg[0] the element
**   LOAD       arg[0] the address space of the new buffer (UAddrSpace; 0: GLOBAL)
**   any node   name: a label given by tensor_named (schedules refer to it)
** A device is "CPU", "CPU:1" or a tuple "CPU:0,CPU:1" (simulated devices).
*/
enum { T_MAXDIM = 16, T_MAXDEV = 64 };
/* addrspace: none for constants and index arithmetic; Param, Buffer and Binary
** are GLOBAL; Load takes arg[0] (0: GLOBAL); every other op its first
** source's that has one. */
typedef enum UAddrSpace { AS_NONE, AS_GLOBAL, AS_LOCAL, AS_REG } UAddrSpace;
const char *addrspace_name(int a);
/* The derived properties of a node whose sources are built. The device string points into the node's data or a source's. -1 with e naming
** the op, the shapes and the axis when the node is ill-formed. */
typedef struct UDerived {
	int ndim, axis, addrspace;
	int64_t shape[T_MAXDIM];
	const char *device;
} UDerived;
int uop_derive(const UOp *u, UDerived *d, Err *e);
int64_t uop_numel(const UOp *u);
int uop_ndev(const char *device);   /* 0 for NULL */
/* The k-th device name of a tuple into out (at most n bytes). */
void uop_devname(const char *device, int k, char *out, size_t n);
void uop_shape_str(Buf *b, const int64_t *s, int n);
/* The same into out (at most n bytes), returned. */
const char *uop_shape_fmt(char *out, size_t n, const int64_t *s, int nd);
/* A shape's rank in [0, T_MAXDIM], its sizes non-negative, at most 2^48 elements;
** -1 with e naming what (the operation) otherwise. */
int uop_shape_check(const char *what, const int64_t *s, int n, Err *e);

#endif

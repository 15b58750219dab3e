/* triton.c - the Triton dialect: a kernel as a Python module, one @triton.jit function per stage, tiles from the tile view. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../interp/sched/tile_ir.h"
#include "gpu.h"

/*
** A stage is one Triton program launched over a grid; the host function
** tessel_launch runs the stages in order. Triton has programs, not threads:
** a program computes on tiles (tensors of power-of-two extents), so a stage
** maps as follows.
**
** The grid. Loops bound to block.x/y/z are tl.program_id(0/1/2), with the
** extents the interpreter gives the grid (EStage.grid, as CUDA launches it).
** A stage with no bound loop takes the leading loops of its body, while each
** is the only statement of the one above, its iterations are independent
** (sched_independent, as the C dialect checks a parallel loop) and it is no
** tile's inner loop: one program per iteration. Thread-bound loops are
** refused: a Triton program has no threads to bind them to.
**
** Tiles. Every store the tile view (tile_ir_stmt) turns into a tile
** statement becomes one: each inner loop is an axis, its variable the
** arange offs_<v> of its extent padded to a power of two (BLOCK_<V>, a
** tl.constexpr argument), reshaped into the statement's frame with None
** (offs_j[None, :]). The tile view's frame is the value's dimensions: the
** stored tile's, then the reduced ones. Offsets are the buffers' layouts at
** the access's indices with the loop variables replaced by these aranges, so
** broadcasts and permutes are pointer arithmetic (a transposed tile is
** loaded through transposed offsets, as Triton code does). Padded axes are
** masked: loads by the axes their offsets use (other=0), stores by the
** stored axes, and a reduced padded axis puts the reduction's identity in
** the padding (tl.where) before tl.sum, tl.max, tl.min or tl.reduce (mul).
** Stores that stay scalar statements are scalar Triton; unbound loops that
** are no tile's become `for v in range(n)` (tl.static_range when unrolled).
**
** Memory. Every buffer is global: the caller passes storage for every one,
** temporaries included (kernel order, as the CUDA harness does); shared and
** register buffers, barriers, shuffles and MMAs are refused. Values live in
** memory between statements (each statement loads what it reads): correct
** first, at the price of memory traffic (and a tl.debug_barrier before a
** statement that reads what the program stored) where a hand-written kernel
** keeps values in registers.
**
** Values are close to the interpreter's, not equal: Triton's exp2, log2,
** sin and sqrt are the device's, reductions sum in a tree, max and min
** treat NaN as the device does. docs/export.md states the tolerances.
*/

enum {
	T_MAXTILE = 1 << 20,   /* elements of one tile: Triton's TRITON_MAX_TENSOR_NUMEL */
	T_UNROLL = 64,         /* tl.static_range up to this extent */
	T_BLOCKED = 4096,      /* elements of a tile whose outer axis is spread over programs */
	P_TOR = 8, P_TXOR = 9, P_TAND = 10, P_TSHIFT = 11, P_TADD = 12, P_TMUL = 13, P_TUNARY = 14,
	P_TCMP = 7, P_TATOM = 100
};

static const char *const reserved[] = {
	/* Python keywords and soft keywords */
	"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
	"def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in",
	"is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with",
	"yield", "match", "case", "type",
	/* the modules and builtins the source uses */
	"tl", "triton", "torch", "float", "int", "range", "len", "min", "max", "print", "bufs", "self",
	NULL
};

/* A loop as an axis of the statement being written. */
typedef struct Axis {
	const UOp *var;        /* the loop variable */
	UOp *as;               /* the variable that prints as the arange in the frame */
	const char *offs;      /* offs_j */
	int64_t n, pad;
	int masked;            /* its arange passes the extent somewhere */
} Axis;

/* An arange of a stage: offs = tl.arange(0, block), block = pad. */
typedef struct Ar {
	const char *var, *offs, *block;
	int64_t pad;
} Ar;

typedef struct TLaunch {
	char name[K_NAME + 24];
	int64_t grid[3];
	int ngrid;
	int *arg, narg;
	Ar *cx;                /* the stage's constexprs */
	int ncx;
} TLaunch;

/* Emit.aux while the Triton dialect walks a kernel. */
typedef struct TState {
	const char **pname;    /* per buffer: its pointer argument (x_ptr) */
	const char **rname;    /* per buffer: the variable of a register buffer's tile */
	TLaunch *l;
	int nl, capl;
	int mul;               /* tessel_mul is used (a product reduction) */
	/* the stage being written */
	EStage *S;
	Buf pre;               /* the stage's aranges, after the grid */
	Ar *ar;
	int nar, capar;
	PMap inner;            /* RANGE -> 1: an inner loop of a tile statement */
	PMap grid;             /* RANGE -> axis + 1: a loop that is a program id */
	int64_t gext[3];
	int ngrid;
	const UOp *blk;        /* a loop spread over program ids: blk_size of its iterations each */
	int64_t blk_size;
	PMap hoist;            /* node -> its name within the statement */
	PMap pure;             /* node -> 1 index arithmetic, 2 not */
	Axis fr[TILE_MAXLOOPS];
	int nfr;
	int stored, loops;     /* stores written so far in the stage; for loops open */
} TState;

static int
oom(Emit *E)
{
	return err_set(E->e, "triton: out of memory");
}

static const char *
stname(Emit *E, int st)
{
	return E->k->stage[st].name;
}

static const char *
ttype(DType t)
{
	switch (t) {
	case DT_BOOL: return "tl.int1";
	case DT_INT8: return "tl.int8";
	case DT_INT16: return "tl.int16";
	case DT_INT32: return "tl.int32";
	case DT_INT64: case DT_INDEX: return "tl.int64";
	case DT_UINT8: return "tl.uint8";
	case DT_UINT16: return "tl.uint16";
	case DT_UINT32: return "tl.uint32";
	case DT_UINT64: return "tl.uint64";
	case DT_FLOAT16: return "tl.float16";
	case DT_BFLOAT16: return "tl.bfloat16";
	case DT_FLOAT32: return "tl.float32";
	case DT_FLOAT64: return "tl.float64";
	default: return NULL;
	}
}

static int
isfloat(DType t)
{
	return t == DT_FLOAT32 || t == DT_FLOAT64 || t == DT_FLOAT16 || t == DT_BFLOAT16;
}

static int64_t
pow2(int64_t n)
{
	int64_t p = 1;

	while (p < n)
		p *= 2;
	return p;
}

/* ---- refusals ---- */

static int
refuse(Emit *E, int st, const UOp *at, const char *what)
{
	EStage S;
	char w[200];

	memset(&S, 0, sizeof S);
	S.st = st;
	S.body = E->k->stage[st].body;
	emit_where(&S, at, w, sizeof w);
	return err_set(E->e, "triton: stage %s: %s %s", stname(E, st), what, w);
}

static int
check_fn(Emit *E, int st, const UOp *u)
{
	switch (u->op) {
	case OP_BARRIER:
		return refuse(E, st, u, "a barrier has no Triton form (a program has no threads to synchronize; "
		              "tile statements replace thread loops and shared tiles): the barrier");
	case OP_MMA:
		return refuse(E, st, u, "an MMA statement is warp-level; Triton writes tl.dot on tiles instead: "
		              "the mma");
	case OP_LDMATRIX:
		return refuse(E, st, u, "an ldmatrix is warp-level; Triton loads tiles with tl.load and places "
		              "fragments itself: the ldmatrix");
	case OP_CP_ASYNC:
	case OP_CP_COMMIT:
	case OP_CP_WAIT:
		return refuse(E, st, u, "a cp.async is a thread's asynchronous copy; Triton pipelines its loads "
		              "itself (num_stages): the cp_async");
	case OP_WGMMA:
	case OP_WG_FENCE:
	case OP_WG_COMMIT:
	case OP_WG_WAIT:
	case OP_SETMAXNREG:
		return refuse(E, st, u, "a wgmma is a warpgroup's asynchronous MMA; Triton's tl.dot chooses it "
		              "itself on sm_90: the wgmma");
	case OP_MBAR_INIT:
	case OP_MBAR_ARRIVE:
	case OP_MBAR_WAIT:
	case OP_TMA_LOAD:
		return refuse(E, st, u, "mbarriers and TMA are one thread's view of Hopper's copy engine; Triton "
		              "issues its own (tl.make_tensor_descriptor): the mbarrier or TMA statement");
	case OP_ATOMIC:
	case OP_FENCE:
		return refuse(E, st, u, "tessel writes no Triton atomics or fences yet (tl.atomic_add exists; a "
		              "last-block combine needs the threads' view): export to cuda, or split the stage in two "
		              "launches: the atomic or fence");
	case OP_SHUFFLE:
		return refuse(E, st, u, "a warp shuffle has no Triton form (a program has no lanes); reduce a tile "
		              "with tl.sum instead: the shuffle");
	case OP_RANGE:
		if (hwaxis_is_thread(krange_hw(u))) {
			char m[160];

			snprintf(m, sizeof m, "loop %s is bound to %s; a Triton program has no threads (tiles replace "
			         "them): unbind it (the tile view makes its nest a tile) or export to cuda",
			         krange_var(u)->name, hwaxis_name(krange_hw(u)));
			return err_set(E->e, "triton: stage %s: %s", stname(E, st), m);
		}
		return 0;
	case OP_POW:
	case OP_THREEFRY:
	case OP_SHL:
	case OP_SHR:
		if (u->op == OP_SHL || u->op == OP_SHR) {
			if (u->dtype == DT_INDEX)
				return 0;
		}
		return err_set(E->e, "triton: stage %s: the value %s (%s) has no Triton form tessel writes yet",
		               stname(E, st), uop_info[u->op].name, dtype_name((DType)u->dtype));
	case OP_DEFINE: {
		const KBuf *kb;

		if (u->arg[0] < 0 || u->arg[0] >= E->k->nbuf)
			return 0;
		kb = &E->k->buf[u->arg[0]];
		if (kb->scope == AS_LOCAL)
			return err_set(E->e, "triton: stage %s: buffer %s is %s; Triton places tiles in shared "
			               "memory itself, so tessel takes global and register (local) buffers only "
			               "(set_scope it local, or export to cuda)", stname(E, st), kb->name,
			               kscope_name(kb->scope));
		if (kb->size > 2147483647)
			return err_set(E->e, "triton: stage %s: buffer %s holds %lld elements; offsets are 32-bit "
			               "in the emitted code", stname(E, st), kb->name, (long long)kb->size);
		return 0;
	}
	default:
		return 0;
	}
}

static int
check(Emit *E)
{
	return gpu_check(E, check_fn);
}

/* ---- index arithmetic ---- */

static int
index_op(int op)
{
	switch (op) {
	case OP_CONST: case OP_VAR: case OP_NEG: case OP_ADD: case OP_SUB: case OP_MUL: case OP_IDIV:
	case OP_MOD: case OP_MIN: case OP_MAX: case OP_CMPLT: case OP_CMPNE: case OP_CMPEQ: case OP_WHERE:
	case OP_AND: case OP_OR: case OP_XOR: case OP_SHL: case OP_SHR:
		return 1;
	default:
		return 0;
	}
}

/* Index arithmetic (index and bool values, no memory): uop_print writes it. */
static int
pure(TState *T, const UOp *u, int depth)
{
	uintptr_t v = (uintptr_t)pmap_get(&T->pure, u);
	int p, i;

	if (v)
		return v == 1;
	p = index_op(u->op) && depth < E_MAXDEPTH && (u->dtype == DT_INDEX || (u->dtype == DT_BOOL
	    && (u->op == OP_CONST || (uop_info[u->op].flags & U_CMP) || u->op == OP_AND || u->op == OP_OR
	        || u->op == OP_XOR || u->op == OP_WHERE)));
	for (i = 0; i < u->nsrc && p; i++)
		p = pure(T, u->src[i], depth + 1);
	pmap_put(&T->pure, u, (void *)(uintptr_t)(p ? 1 : 2));
	return p;
}

/* print.c's binding strength of a pure expression in Triton (Python's, the floor forms atoms) */
static int
index_prec(const UOp *u)
{
	int p;

	switch (u->op) {
	case OP_CONST: return u->arg[0] < 0 ? P_TUNARY : P_TATOM;
	case OP_VAR: case OP_WHERE: case OP_MIN: case OP_MAX: case OP_CAST: return P_TATOM;
	case OP_IDIV: case OP_MOD:
		if (!(u->src[0]->vmin >= 0 && u->src[1]->vmin > 0))
			return P_TATOM;
		break;
	default:
		break;
	}
	p = uop_info[u->op].prec[2];
	return p ? p : P_TATOM;
}

/* ---- values ---- */

typedef struct Tx {
	Buf s;
	int prec;
} Tx;

static void
tx_init(Tx *x)
{
	buf_init(&x->s);
	x->prec = P_TATOM;
}

static void
operand(Buf *b, const Tx *x, int prec)
{
	int paren = x->prec < prec;

	emit(b, "%s%s%s", paren ? "(" : "", x->s.s ? x->s.s : "", paren ? ")" : "");
}

/*
** A float constant: the shortest decimal that reads back as the value. Triton
** 3.1 makes a Python float a float32 constant whenever float32's range holds
** it (x * 0.1 of a float64 x multiplies by 0.1f), so a float64 constant that
** float32 cannot hold exactly is a float64 tensor of its own.
*/
static void
flit(Buf *b, double v, DType t)
{
	char s[64];
	int p;

	if (isnan(v)) {
		emit(b, "float(\"nan\")");
		return;
	}
	if (isinf(v)) {
		emit(b, "%sfloat(\"inf\")", v < 0 ? "-" : "");
		return;
	}
	for (p = 1; p <= 17; p++) {
		snprintf(s, sizeof s, "%.*g", p, v);
		if (t == DT_FLOAT32 ? (float)strtod(s, NULL) == (float)v : strtod(s, NULL) == v)
			break;
	}
	if (t == DT_FLOAT64 && (double)(float)v != v)
		emit(b, "tl.full((), %s, tl.float64)", s);
	else
		emit(b, "%s%s", s, strpbrk(s, ".en") ? "" : ".0");
}

/* The axes of the frame an expression mentions (bit f: axis f). */
static unsigned
axes_of(TState *T, const UOp *u)
{
	const UOp *v[64];
	int n = uop_vars(u, v, 64), i, f;
	unsigned m = 0;

	for (i = 0; i < n && i < 64; i++)
		for (f = 0; f < T->nfr; f++)
			if (v[i] == T->fr[f].as)
				m |= 1u << f;
	return m;
}

/* The mask of the padded axes in m, "" when none is padded; the number of its terms. */
static int
mask_text(TState *T, Buf *b, unsigned m)
{
	int f, n = 0, k = 0;

	for (f = 0; f < T->nfr; f++)
		if ((m & 1u << f) && T->fr[f].masked)
			n++;
	for (f = 0; f < T->nfr; f++) {
		if (!(m & 1u << f) || !T->fr[f].masked)
			continue;
		emit(b, n > 1 ? "%s(%s < %lld)" : "%s%s < %lld", k++ ? " & " : "", T->fr[f].as->name,
		     (long long)T->fr[f].n);
	}
	return n;
}

static int value(Emit *E, const UOp *u, Tx *x, int depth);
static const Ar *arange(Emit *E, const UOp *v, int64_t pad);

/*
** Register buffers. A buffer in registers (set_scope "local", compacted to
** what one program uses) is one tile, a variable of the program: each access
** must cover it whole, its dimensions of one element at 0 and each other one
** a frame axis of the same extent, in its own order. reg_axes gives the frame
** position of each dimension (-1 for the unit ones), or -1 with e set.
*/
static int
reg_axes(Emit *E, const UOp *ix, int *at)
{
	TState *T = E->aux;
	const KBuf *B = &E->k->buf[ix->src[0]->arg[0]];
	int d, f;

	for (d = 0; d < B->ndim; d++) {
		const UOp *x = ix->src[d + 1];

		at[d] = -1;
		if (B->shape[d] == 1 && x->vmin == 0 && x->vmax == 0)
			continue;
		for (f = 0; f < T->nfr && T->fr[f].as != x; f++)
			;
		if (f == T->nfr || T->fr[f].n != B->shape[d])
			return err_set(E->e, "triton: stage %s: buffer %s is in registers, one tile of the program, "
			               "but an access reads or writes part of it (dimension %d); split and fission "
			               "so that each statement covers it whole, or give it global scope",
			               stname(E, T->S->st), B->name, d);
		at[d] = f;
	}
	return 0;
}

/* the register tile of buffer bi in the frame: None where it lacks an axis, permuted where its
** order differs */
static int
reg_load(Emit *E, const UOp *ix, Tx *x)
{
	TState *T = E->aux;
	const KBuf *B = &E->k->buf[ix->src[0]->arg[0]];
	int at[T_MAXDIM], ord[T_MAXDIM], pos[TILE_MAXLOOPS], n = 0, d, f, perm = 0;

	if (reg_axes(E, ix, at) < 0)
		return -1;
	for (d = 0; d < B->ndim; d++)
		if (at[d] >= 0)
			ord[n++] = at[d];
	for (d = 1; d < n; d++)
		perm |= ord[d] < ord[d - 1];
	if (perm) {
		/* tl.permute into frame order: result dimension q is the tile's dimension of the q-th
		** smallest frame position */
		int q, r, by[T_MAXDIM];

		for (q = 0; q < n; q++)
			by[q] = q;
		for (q = 1; q < n; q++)
			for (r = q; r > 0 && ord[by[r - 1]] > ord[by[r]]; r--) {
				int t = by[r];

				by[r] = by[r - 1];
				by[r - 1] = t;
			}
		emit(&x->s, "tl.permute(%s, (", T->rname[ix->src[0]->arg[0]]);
		for (q = 0; q < n; q++)
			emit(&x->s, "%s%d", q ? ", " : "", by[q]);
		emit(&x->s, n == 1 ? ",))" : "))");
		for (q = 0; q < n; q++)
			ord[q] = ord[by[q]];
	} else
		emit(&x->s, "%s", T->rname[ix->src[0]->arg[0]]);
	x->prec = P_TATOM;
	if (n == 0 || n == T->nfr)
		return 0;
	for (f = 0; f < T->nfr; f++)
		pos[f] = 0;
	for (d = 0; d < n; d++)
		pos[ord[d]] = 1;
	emit(&x->s, "[");
	for (f = 0; f < T->nfr; f++)
		emit(&x->s, "%s%s", f ? ", " : "", pos[f] ? ":" : "None");
	emit(&x->s, "]");
	return 0;
}

/* name = value over the whole register tile of the store's buffer (a where keeps the old
** elements under a gate) */
static int
reg_put(Emit *E, const UOp *s, const Tx *v, const Tx *gate, int ind)
{
	TState *T = E->aux;
	int bi = (int)s->src[0]->src[0]->arg[0], at[T_MAXDIM], d, n = 0, ok = 1;
	const KBuf *B = &E->k->buf[bi];
	Buf shape;

	if (reg_axes(E, s->src[0], at) < 0)
		return -1;
	buf_init(&shape);
	for (d = 0; d < B->ndim; d++) {
		const Ar *a;

		if (at[d] < 0)
			continue;
		ok &= at[d] == n;
		a = arange(E, T->fr[at[d]].var, T->fr[at[d]].pad);
		if (!a)
			return oom(E);
		emit(&shape, "%s%s", n++ ? ", " : "", a->block);
	}
	if (!ok || n != T->nfr) {
		buf_free(&shape);
		return err_set(E->e, "triton: stage %s: a store to register buffer %s that does not cover it in "
		               "its own order", stname(E, T->S->st), B->name);
	}
	emit_indent(E->out, 2 * ind);
	emit(E->out, "%s = ", T->rname[bi]);
	if (gate)
		emit(E->out, "tl.where(%s, ", gate->s.s ? gate->s.s : "True");
	/* the value over the whole tile, in the buffer's dtype: a constant fills it; a value over
	** every axis of the frame is already whole; another is broadcast */
	if (s->src[1]->op == OP_CONST && n)
		emit(E->out, "tl.full((%s,), %s, %s)", shape.s, v->s.s ? v->s.s : "", ttype(B->dtype));
	else if (s->src[1]->op == OP_CONST)
		emit(E->out, "tl.full((), %s, %s)", v->s.s ? v->s.s : "", ttype(B->dtype));
	else if (axes_of(T, s->src[1]) == (1u << n) - 1 && s->src[1]->dtype == B->dtype)
		emit(E->out, "%s", v->s.s ? v->s.s : "");
	else if (n == 0)
		emit(E->out, "(%s).to(%s)", v->s.s ? v->s.s : "", ttype(B->dtype));
	else
		emit(E->out, "tl.broadcast_to((%s).to(%s), (%s,))", v->s.s ? v->s.s : "", ttype(B->dtype), shape.s);
	if (gate)
		emit(E->out, ", %s)", T->rname[bi]);
	emit(E->out, "\n");
	buf_free(&shape);
	return 0;
}

static int
is_reg(Emit *E, const UOp *ix)
{
	return ix->op == OP_INDEX && ix->nsrc >= 1 && ix->src[0]->op == OP_DEFINE && ix->src[0]->arg[0] >= 0
	    && ix->src[0]->arg[0] < E->k->nbuf && E->k->buf[ix->src[0]->arg[0]].scope == AS_REG;
}

/* x_ptr + off, off the buffer's layout at the access's indices */
static int
pointer(Emit *E, const UOp *ix, Buf *b, unsigned *axes, int depth)
{
	TState *T = E->aux;
	UOp *off;
	Tx o;
	int bi;

	if (ix->op != OP_INDEX || ix->nsrc < 1 || ix->src[0]->op != OP_DEFINE || ix->src[0]->arg[0] < 0
	|| ix->src[0]->arg[0] >= E->k->nbuf || ix->nsrc - 1 != E->k->buf[ix->src[0]->arg[0]].ndim)
		return err_set(E->e, "triton: an access to something that is not a buffer of this kernel");
	bi = (int)ix->src[0]->arg[0];
	if (!(off = emit_offset(E, bi, (UOp *const *)ix->src + 1)))
		return oom(E);
	tx_init(&o);
	if (value(E, off, &o, depth + 1) < 0) {
		buf_free(&o.s);
		return -1;
	}
	*axes = axes_of(T, off);
	if (off->op == OP_CONST && off->arg[0] == 0)
		emit(b, "%s", T->pname[bi]);
	else {
		emit(b, "%s + ", T->pname[bi]);
		operand(b, &o, P_TADD + 1);
	}
	buf_free(&o.s);
	return 0;
}

static int
load(Emit *E, const UOp *u, Tx *x, int depth)
{
	TState *T = E->aux;
	unsigned axes;
	Buf m;
	Tx g;
	int rc, nm;

	if (u->nsrc < 1 || u->nsrc > 2)
		return err_set(E->e, "triton: a load of something that is not an index");
	if (is_reg(E, u->src[0])) {
		if (u->nsrc == 2)
			return err_set(E->e, "triton: stage %s: a gated read of register buffer %s",
			               stname(E, T->S->st), u->src[0]->src[0]->name);
		return reg_load(E, u->src[0], x);
	}
	emit(&x->s, "tl.load(");
	if (pointer(E, u->src[0], &x->s, &axes, depth) < 0)
		return -1;
	buf_init(&m);
	nm = mask_text(T, &m, axes);
	tx_init(&g);
	rc = u->nsrc == 2 ? value(E, u->src[1], &g, depth + 1) : 0;
	if (rc == 0 && (m.len || u->nsrc == 2)) {
		emit(&x->s, ", mask=");
		if (m.len && u->nsrc == 2) {
			emit(&x->s, nm > 1 ? "%s & " : "(%s) & ", m.s);
			operand(&x->s, &g, P_TAND + 1);
		} else if (m.len)
			emit(&x->s, "%s", m.s);
		else
			operand(&x->s, &g, 0);
		emit(&x->s, ", other=%s", isfloat(E->k->buf[u->src[0]->src[0]->arg[0]].dtype) ? "0.0" : "0");
	}
	emit(&x->s, ")");
	x->prec = P_TATOM;
	buf_free(&m);
	buf_free(&g.s);
	return rc;
}

static void
call(Tx *x, const char *f, Tx *s, int n)
{
	int i;

	emit(&x->s, "%s(", f);
	for (i = 0; i < n; i++) {
		if (i)
			emit(&x->s, ", ");
		operand(&x->s, &s[i], 0);
	}
	emit(&x->s, ")");
	x->prec = P_TATOM;
}

static void
binop(Tx *x, Tx *l, const char *op, Tx *r, int p)
{
	operand(&x->s, l, p);
	emit(&x->s, " %s ", op);
	operand(&x->s, r, p + 1);
	x->prec = p;
}

/* Python chains comparisons (a != b != True is a != b and b != True, and Triton refuses a
** chain): both operands of a comparison that are comparisons themselves are parenthesized */
static void
cmpop(Tx *x, Tx *l, const char *op, Tx *r)
{
	operand(&x->s, l, P_TCMP + 1);
	emit(&x->s, " %s ", op);
	operand(&x->s, r, P_TCMP + 1);
	x->prec = P_TCMP;
}

/* A float operand of Triton's math functions: exp2, log2, sin, floor and ceil take float32 and
** float64, sqrt_rn float32 alone; a float16 or bfloat16 operand is widened (exactly) */
static void
widen(Tx *x, DType t)
{
	Buf n;

	if (t != DT_FLOAT16 && t != DT_BFLOAT16)
		return;
	buf_init(&n);
	operand(&n, x, P_TATOM);
	emit(&n, ".to(tl.float32)");
	buf_free(&x->s);
	x->s = n;
	x->prec = P_TATOM;
}

static int
alu(Emit *E, const UOp *u, Tx *s, Tx *x)
{
	DType od = (DType)(u->op == OP_WHERE ? u->src[1]->dtype : u->src[0]->dtype);
	int fl = isfloat(od);

	if (u->op == OP_SQRT || u->op == OP_EXP2 || u->op == OP_LOG2 || u->op == OP_SIN || u->op == OP_TRUNC)
		widen(&s[0], od);

	switch (u->op) {
	case OP_ADD: binop(x, &s[0], "+", &s[1], P_TADD); break;
	case OP_SUB: binop(x, &s[0], "-", &s[1], P_TADD); break;
	case OP_MUL: binop(x, &s[0], "*", &s[1], P_TMUL); break;
	case OP_NEG:
		emit(&x->s, "-");
		operand(&x->s, &s[0], P_TUNARY + (s[0].s.s && s[0].s.s[0] == '-'));
		x->prec = P_TUNARY;
		break;
	case OP_RECIP:
		if (!fl)
			return err_set(E->e, "triton: the reciprocal of an integer");
		emit(&x->s, "1.0 / ");
		operand(&x->s, &s[0], P_TMUL + 1);
		x->prec = P_TMUL;
		break;
	case OP_SQRT: call(x, od == DT_FLOAT64 ? "tl.sqrt" : "tl.sqrt_rn", s, 1); break;   /* float64's is IEEE */
	case OP_EXP2: call(x, "tl.exp2", s, 1); break;
	case OP_LOG2: call(x, "tl.log2", s, 1); break;
	case OP_SIN: call(x, "tl.sin", s, 1); break;
	case OP_TRUNC:
		if (!fl) {
			buf_free(&x->s);
			*x = s[0];
			tx_init(&s[0]);
			return 0;
		}
		emit(&x->s, "tl.where(");
		operand(&x->s, &s[0], P_TCMP + 1);
		emit(&x->s, " < 0, tl.ceil(%s), tl.floor(%s))", s[0].s.s, s[0].s.s);
		break;
	case OP_MAX: call(x, "tl.maximum", s, 2); break;
	case OP_MIN: call(x, "tl.minimum", s, 2); break;
	case OP_WHERE: call(x, "tl.where", s, 3); break;
	case OP_MULACC: {
		Tx p;

		tx_init(&p);
		binop(&p, &s[0], "*", &s[1], P_TMUL);
		binop(x, &p, "+", &s[2], P_TADD);
		buf_free(&p.s);
		break;
	}
	case OP_CMPLT: cmpop(x, &s[0], "<", &s[1]); break;
	case OP_CMPNE: cmpop(x, &s[0], "!=", &s[1]); break;
	case OP_CMPEQ: cmpop(x, &s[0], "==", &s[1]); break;
	case OP_AND: binop(x, &s[0], "&", &s[1], P_TAND); break;
	case OP_OR: binop(x, &s[0], "|", &s[1], P_TOR); break;
	case OP_XOR: binop(x, &s[0], "^", &s[1], P_TXOR); break;
	case OP_IDIV:
		if (!fl)
			return err_set(E->e, "triton: an integer division of values (the interpreter floors, Triton's "
			               "// truncates)");
		emit(&x->s, "tl.floor(");
		operand(&x->s, &s[0], P_TMUL);
		emit(&x->s, " / ");
		operand(&x->s, &s[1], P_TMUL + 1);
		emit(&x->s, ")");
		break;
	case OP_MOD:
		if (!fl)
			return err_set(E->e, "triton: an integer modulo of values (the interpreter floors, Triton's "
			               "%% truncates)");
		/* floor modulo: the remainder takes the divisor's sign */
		operand(&x->s, &s[0], P_TADD);
		emit(&x->s, " - ");
		operand(&x->s, &s[1], P_TMUL);
		emit(&x->s, " * tl.floor(");
		operand(&x->s, &s[0], P_TMUL);
		emit(&x->s, " / ");
		operand(&x->s, &s[1], P_TMUL + 1);
		emit(&x->s, ")");
		x->prec = P_TADD;
		break;
	default:
		return err_set(E->e, "triton: the value %s has no Triton form tessel writes yet", uop_info[u->op].name);
	}
	return 0;
}

static int
value(Emit *E, const UOp *u, Tx *x, int depth)
{
	TState *T = E->aux;
	const char *h;
	Tx s[3];
	int i, rc = 0;

	if (depth > E_MAXDEPTH)
		return err_set(E->e, "triton: an expression nests deeper than %d", E_MAXDEPTH);
	if ((h = pmap_get(&T->hoist, u))) {
		emit(&x->s, "%s", h);
		x->prec = P_TATOM;
		return 0;
	}
	if (pure(T, u, 0)) {
		uop_print(&x->s, u, D_TRITON);
		x->prec = index_prec(u);
		return 0;
	}
	switch (u->op) {
	case OP_CONST:
		if (isfloat((DType)u->dtype))
			flit(&x->s, uop_const_value(u), (DType)u->dtype);
		else if (u->dtype == DT_BOOL)
			emit(&x->s, "%s", u->arg[0] ? "True" : "False");
		else if (u->dtype == DT_UINT64)
			emit(&x->s, "%llu", (unsigned long long)u->arg[0]);
		else
			emit(&x->s, "%lld", (long long)u->arg[0]);
		x->prec = x->s.s && x->s.s[0] == '-' ? P_TUNARY : P_TATOM;
		return 0;
	case OP_VAR:
		emit(&x->s, "%s", u->name);
		return 0;
	case OP_LOAD:
		return load(E, u, x, depth);
	case OP_CAST:
		tx_init(&s[0]);
		if (value(E, u->src[0], &s[0], depth + 1) < 0) {
			buf_free(&s[0].s);
			return -1;
		}
		if (u->dtype == DT_BOOL) {
			operand(&x->s, &s[0], P_TCMP + 1);
			emit(&x->s, " != 0");
			x->prec = P_TCMP;
		} else if (!ttype((DType)u->dtype)) {
			rc = err_set(E->e, "triton: a %s value", dtype_name((DType)u->dtype));
		} else if (isfloat((DType)u->src[0]->dtype) && !isfloat((DType)u->dtype)) {
			/* the interpreter's float to integer (dtype_ftoi): truncated, NaN 0, saturated to
			** int64, then wrapped to the dtype; Triton's own conversion gives NaN as INT64_MIN and
			** clamps a negative value to an unsigned dtype at 0. uint64 takes [2^63, 2^64) as is */
			Buf v;

			buf_init(&v);
			operand(&v, &s[0], P_TATOM);
			if (u->dtype == DT_UINT64)
				emit(&x->s, "tl.where(%s != %s, 0, tl.where(%s < 9223372036854775808.0, %s.to(tl.int64).to(tl.uint64), "
				     "%s.to(tl.uint64)))", v.s, v.s, v.s, v.s, v.s);
			else
				emit(&x->s, "tl.where(%s != %s, 0, %s.to(tl.int64))%s%s%s", v.s, v.s, v.s,
				     u->dtype == DT_INT64 ? "" : ".to(", u->dtype == DT_INT64 ? "" : ttype((DType)u->dtype),
				     u->dtype == DT_INT64 ? "" : ")");
			buf_free(&v);
			x->prec = P_TATOM;
		} else {
			operand(&x->s, &s[0], P_TATOM);
			emit(&x->s, ".to(%s)", ttype((DType)u->dtype));
			x->prec = P_TATOM;
		}
		buf_free(&s[0].s);
		return rc;
	default:
		break;
	}
	if (!(uop_info[u->op].flags & U_ALU) || u->nsrc != uop_info[u->op].arity || u->nsrc > 3)
		return err_set(E->e, "triton: %s is not a value the emitter knows", uop_info[u->op].name);
	for (i = 0; i < u->nsrc; i++)
		tx_init(&s[i]);
	for (i = 0; i < u->nsrc && rc == 0; i++)
		rc = value(E, u->src[i], &s[i], depth + 1);
	if (rc == 0)
		rc = alu(E, u, s, x);
	for (i = 0; i < u->nsrc; i++)
		buf_free(&s[i].s);
	return rc;
}

/* ---- shared subexpressions of a statement ---- */

static int
count(PMap *c, const UOp *u, int depth)
{
	uintptr_t n = (uintptr_t)pmap_get(c, u);
	int i;

	if (pmap_put(c, u, (void *)(n ? n + 1 : 2)) < 0)
		return -1;
	if (n || depth > E_MAXDEPTH)
		return 0;
	for (i = 0; i < u->nsrc; i++)
		if (u->op != OP_INDEX && count(c, u->src[i], depth + 1) < 0)
			return -1;
	return 0;
}

static int
hoistable(TState *T, const UOp *u)
{
	return (u->op == OP_LOAD || ((uop_info[u->op].flags & U_ALU) && u->nsrc > 0 && u->op != OP_CAST))
	       && !pure(T, u, 0);
}

/* sources first: a node two users share becomes t<n> = ... before the statement */
static int
hoist_walk(Emit *E, PMap *c, PMap *done, const UOp *u, int ind, int depth)
{
	TState *T = E->aux;
	char name[32];
	const char *nm;
	Tx x;
	int i, n = 0;

	if (pmap_get(done, u) || depth > E_MAXDEPTH || u->op == OP_INDEX)
		return 0;
	if (pmap_put(done, u, (void *)1) < 0)
		return oom(E);
	for (i = 0; i < u->nsrc; i++)
		if (hoist_walk(E, c, done, u->src[i], ind, depth + 1) < 0)
			return -1;
	if ((uintptr_t)pmap_get(c, u) < 3 || !hoistable(T, u))
		return 0;
	tx_init(&x);
	if (value(E, u, &x, 0) < 0) {
		buf_free(&x.s);
		return -1;
	}
	do
		snprintf(name, sizeof name, "t%d", n++);
	while (emit_taken(E, name));
	if (!(nm = emit_fresh(E, name)) || pmap_put(&T->hoist, u, (void *)nm) < 0) {
		buf_free(&x.s);
		return oom(E);
	}
	emit_indent(E->out, 2 * ind);
	emit(E->out, "%s = %s\n", nm, x.s.s ? x.s.s : "");
	buf_free(&x.s);
	return 0;
}

static int
hoist(Emit *E, UOp *const *roots, int n, int ind)
{
	PMap c = { 0 }, done = { 0 };
	int i, rc = 0;

	for (i = 0; i < n && rc == 0; i++)
		if (roots[i] && count(&c, roots[i], 0) < 0)
			rc = oom(E);
	for (i = 0; i < n && rc == 0; i++)
		if (roots[i])
			rc = hoist_walk(E, &c, &done, roots[i], ind, 0);
	pmap_free(&c);
	pmap_free(&done);
	return rc;
}

/* ---- frames ---- */

/* The arange of loop variable v padded to pad, made once per stage. */
static const Ar *
arange(Emit *E, const UOp *v, int64_t pad)
{
	TState *T = E->aux;
	char nm[K_NAME + 16];
	Ar *a;
	int i;

	for (i = 0; i < T->nar; i++)
		if (strcmp(T->ar[i].var, v->name) == 0 && T->ar[i].pad == pad)
			return &T->ar[i];
	if (T->nar == T->capar) {
		int cap = T->capar ? 2 * T->capar : 8;
		Ar *n = realloc(T->ar, cap * sizeof *n);

		if (!n)
			return NULL;
		T->ar = n;
		T->capar = cap;
	}
	a = &T->ar[T->nar];
	a->var = v->name;
	a->pad = pad;
	snprintf(nm, sizeof nm, "offs_%s", v->name);
	if (!(a->offs = emit_fresh(E, nm)))
		return NULL;
	snprintf(nm, sizeof nm, "BLOCK_%s", v->name);
	for (i = 0; nm[i]; i++)
		nm[i] = (char)toupper((unsigned char)nm[i]);
	if (!(a->block = emit_fresh(E, nm)))
		return NULL;
	if (T->blk && v == krange_var(T->blk))
		/* the loop spread over programs: this program's block of its iterations */
		emit(&T->pre, "    %s = tl.program_id(0) * %s + tl.arange(0, %s)\n", a->offs, a->block, a->block);
	else
		emit(&T->pre, "    %s = tl.arange(0, %s)\n", a->offs, a->block);
	T->nar++;
	return a;
}

/*
** The frame of loops r[0..n-1]: each variable prints as its arange with
** None in the other axes (offs_j[None, :]). Returns 0, or -1.
*/
static int
frame(Emit *E, int st, const UOp *const *r, int n)
{
	TState *T = E->aux;
	int64_t numel = 1;
	int f, g;

	T->nfr = 0;
	for (f = 0; f < n; f++) {
		const UOp *v = krange_var(r[f]);
		int64_t ext = krange_extent(r[f]), pad = T->blk == r[f] ? T->blk_size : pow2(ext);
		const Ar *a = arange(E, v, pad);
		Buf nm;

		if (!a)
			return oom(E);
		if (numel > T_MAXTILE / pad)
			return err_set(E->e, "triton: stage %s: a tile of more than %d elements over loops ending in %s "
			               "(Triton's limit on a tensor); split a loop so that fewer are tiled together",
			               stname(E, st), T_MAXTILE, v->name);
		numel *= pad;
		buf_init(&nm);
		emit(&nm, "%s", a->offs);
		if (n > 1) {
			emit(&nm, "[");
			for (g = 0; g < n; g++)
				emit(&nm, "%s%s", g ? ", " : "", g == f ? ":" : "None");
			emit(&nm, "]");
		}
		if (nm.oom) {
			buf_free(&nm);
			return oom(E);
		}
		T->fr[f].var = v;
		T->fr[f].offs = a->offs;
		T->fr[f].n = ext;
		T->fr[f].pad = pad;
		T->fr[f].masked = T->blk == r[f] ? ext % pad != 0 : pad > ext;
		/* a variable of the loop's range whose name is the reshaped arange */
		T->fr[f].as = uop_new(E->k->c, OP_VAR, DT_INDEX, NULL, 0, v->arg[0], v->arg[1], nm.s, NULL, 0);
		buf_free(&nm);
		if (!T->fr[f].as)
			return oom(E);
		T->nfr++;
	}
	return 0;
}

/* u with the frame's loop variables replaced by their aranges */
static UOp *
in_frame(Emit *E, UOp *u)
{
	TState *T = E->aux;
	UOp *from[TILE_MAXLOOPS], *to[TILE_MAXLOOPS];
	int f;

	if (!u || !T->nfr)
		return u;
	for (f = 0; f < T->nfr; f++) {
		from[f] = (UOp *)T->fr[f].var;
		to[f] = T->fr[f].as;
	}
	return kernel_substitute(E->k->c, u, from, to, T->nfr);
}

/* ---- statements ---- */

static int stmt(Emit *E, EStage *S, const UOp *s, int ind);

static void
line(Emit *E, int ind, const char *s)
{
	emit_indent(E->out, 2 * ind);
	emit(E->out, "%s\n", s);
}

/* tl.store(pointer, value, mask=...) of store s (substituted), value text v */
static int
put(Emit *E, const UOp *s, const Tx *v, const Tx *gate, int ind)
{
	TState *T = E->aux;
	unsigned axes;
	Buf p, m;
	int rc, nm;

	if (is_reg(E, s->src[0]))
		return reg_put(E, s, v, gate, ind);
	buf_init(&p);
	buf_init(&m);
	if ((rc = pointer(E, s->src[0], &p, &axes, 0)) == 0) {
		nm = mask_text(T, &m, axes);
		if (gate && !nm) {
			/* a gate alone is control flow: a scalar mask is a value, and Triton's interpreter
			** tests its truth where the compiler tests that it exists (`if not mask`) */
			emit_indent(E->out, 2 * ind++);
			emit(E->out, "if ");
			operand(E->out, gate, 0);
			emit(E->out, ":\n");
			gate = NULL;
		}
		emit_indent(E->out, 2 * ind);
		emit(E->out, "tl.store(%s, ", p.s ? p.s : "");
		operand(E->out, v, 0);
		if (m.len || gate) {
			emit(E->out, ", mask=");
			if (m.len && gate) {
				emit(E->out, nm > 1 ? "%s & " : "(%s) & ", m.s);
				operand(E->out, gate, P_TAND + 1);
			} else if (m.len)
				emit(E->out, "%s", m.s);
			else
				operand(E->out, gate, 0);
		}
		emit(E->out, ")\n");
	}
	buf_free(&p);
	buf_free(&m);
	return rc;
}

static int
scalar_store(Emit *E, EStage *S, const UOp *s, int ind)
{
	TState *T = E->aux;
	UOp *roots[3] = { s->src[0], s->src[1], s->nsrc > 2 ? s->src[2] : NULL };
	Tx v, g;
	int rc;

	T->nfr = 0;
	tx_init(&v);
	tx_init(&g);
	rc = hoist(E, roots, 3, ind);
	if (rc == 0)
		rc = value(E, s->src[1], &v, 0);
	if (rc == 0 && s->nsrc > 2)
		rc = value(E, s->src[2], &g, 0);
	if (rc == 0)
		rc = put(E, s, &v, s->nsrc > 2 ? &g : NULL, ind);
	pmap_free(&T->hoist);
	buf_free(&v.s);
	buf_free(&g.s);
	return rc;
}

static const char *
identity(Op op, DType t)
{
	int fl = isfloat(t);

	switch (op) {
	case OP_ADD: return fl ? "0.0" : "0";
	case OP_MUL: return fl ? "1.0" : "1";
	/* an unsigned operand promotes the int64 identity to uint64 (-2^63 is 2^63): its own are 0 and 2^64 - 1 */
	case OP_MAX: return fl ? "-float(\"inf\")" : t == DT_INT32 ? "-2147483648" : t == DT_UINT64 ? "0"
	                    : "-9223372036854775808";
	default: return fl ? "float(\"inf\")" : t == DT_INT32 ? "2147483647" : t == DT_UINT64 ? "18446744073709551615"
	                : "9223372036854775807";
	}
}

/*
** A tile statement: the stored tile's frame for the pointer and the
** accumulator, the value's frame (stored axes, then reduced ones) for what
** is reduced.
*/
static int
tile_store(Emit *E, EStage *S, const UOp *s, const TileStmt *ts, int ind)
{
	TState *T = E->aux;
	UOp *st = NULL, *other = NULL, *roots[3];
	Tx v, g, r, a;
	Buf m;
	int f, rc = -1, red = ts->n > ts->nstored;

	tx_init(&v);
	tx_init(&g);
	tx_init(&r);
	tx_init(&a);
	buf_init(&m);
	/* the reduced value first, in the whole frame */
	if (red) {
		int padded = 0;

		if (frame(E, S->st, ts->loop, ts->n) < 0 || !(other = in_frame(E, (UOp *)ts->other)))
			goto out;
		roots[0] = other;
		if (hoist(E, roots, 1, ind) < 0 || value(E, other, &r, 0) < 0)
			goto out;
		for (f = ts->nstored; f < ts->n; f++)
			padded |= T->fr[f].masked;
		if (padded) {
			Tx w;

			/* the padding of a reduced axis holds the identity */
			tx_init(&w);
			emit(&w.s, "tl.where(");
			mask_text(T, &w.s, ((1u << ts->n) - 1) & ~((1u << ts->nstored) - 1));
			emit(&w.s, ", ");
			operand(&w.s, &r, 0);
			emit(&w.s, ", %s)", identity(ts->op, (DType)ts->other->dtype));
			buf_free(&r.s);
			r = w;
		}
		for (f = ts->n - 1; f >= ts->nstored; f--) {
			Tx w;

			tx_init(&w);
			if (ts->op == OP_MUL) {
				emit(&w.s, "tl.reduce(");
				operand(&w.s, &r, 0);
				emit(&w.s, ", %d, tessel_mul)", f);
				T->mul = 1;
			} else {
				emit(&w.s, "%s(", ts->op == OP_ADD ? "tl.sum" : ts->op == OP_MAX ? "tl.max" : "tl.min");
				operand(&w.s, &r, 0);
				emit(&w.s, ", axis=%d)", f);
			}
			buf_free(&r.s);
			r = w;
		}
	}
	if (frame(E, S->st, ts->loop, ts->nstored) < 0 || !(st = in_frame(E, (UOp *)s)))
		goto out;
	if (red) {
		const UOp *acc = NULL, *val = st->src[1];
		int i;

		/* the substituted accumulator: the load of the stored element in the update */
		for (i = 0; i < 2; i++)
			if (val->src[i]->op == OP_LOAD && val->src[i]->nsrc == 1 && val->src[i]->src[0] == st->src[0])
				acc = val->src[i];
		if (!acc || val->nsrc != 2)
			goto bad;
		roots[0] = (UOp *)acc;
		roots[1] = st->nsrc > 2 ? st->src[2] : NULL;
		if (hoist(E, roots, 2, ind) < 0 || value(E, acc, &a, 0) < 0)
			goto out;
		switch (ts->op) {
		case OP_ADD: case OP_MUL:
			if (val->src[0] == acc)
				binop(&v, &a, ts->op == OP_ADD ? "+" : "*", &r, ts->op == OP_ADD ? P_TADD : P_TMUL);
			else
				binop(&v, &r, ts->op == OP_ADD ? "+" : "*", &a, ts->op == OP_ADD ? P_TADD : P_TMUL);
			break;
		default: {
			Tx two[2];

			two[0] = val->src[0] == acc ? a : r;
			two[1] = val->src[0] == acc ? r : a;
			call(&v, ts->op == OP_MAX ? "tl.maximum" : "tl.minimum", two, 2);
			break;
		}
		}
	} else {
		roots[0] = st->src[0];
		roots[1] = st->src[1];
		roots[2] = st->nsrc > 2 ? st->src[2] : NULL;
		if (hoist(E, roots, 3, ind) < 0 || value(E, st->src[1], &v, 0) < 0)
			goto out;
	}
	if (st->nsrc > 2 && value(E, st->src[2], &g, 0) < 0)
		goto out;
	rc = put(E, st, &v, st->nsrc > 2 ? &g : NULL, ind);
	goto out;
bad:
	rc = err_set(E->e, "triton: stage %s: a reduction that is not an update X[I] = X[I] op v", stname(E, S->st));
out:
	T->nfr = 0;
	pmap_free(&T->hoist);
	buf_free(&v.s);
	buf_free(&g.s);
	buf_free(&r.s);
	buf_free(&a.s);
	buf_free(&m);
	return rc;
}

/* Whether u loads a buffer in memory that the stage writes (a register tile is the program's own). */
static int
reads_written(const Kernel *k, EStage *S, const UOp *u, PMap *seen, int depth)
{
	int i;

	if (pmap_get(seen, u) || depth > E_MAXDEPTH)
		return 0;
	pmap_put(seen, u, (void *)1);
	if (u->op == OP_LOAD && u->nsrc > 0 && u->src[0]->op == OP_INDEX && u->src[0]->nsrc > 0
	&& u->src[0]->src[0]->op == OP_DEFINE && (S->use[u->src[0]->src[0]->arg[0]] & 2)
	&& k->buf[u->src[0]->src[0]->arg[0]].scope != AS_REG)
		return 1;
	for (i = 0; i < u->nsrc; i++)
		if (reads_written(k, S, u->src[i], seen, depth + 1))
			return 1;
	return 0;
}

static int
store(Emit *E, EStage *S, const UOp *s, int ind)
{
	TState *T = E->aux;
	TileStmt ts;
	PMap seen = { 0 };
	int n, i, rd = 0;

	if (s->nsrc < 2 || s->nsrc > 3 || s->src[0]->op != OP_INDEX)
		return err_set(E->e, "triton: stage %s: a store to something that is not an index", stname(E, S->st));
	if ((n = tile_ir_stmt(E->k, S->st, s, &ts, E->e)) < 0)
		return -1;
	for (i = 1; i < s->nsrc && !rd; i++)
		rd = reads_written(E->k, S, s->src[i], &seen, 0);
	for (i = 1; i < s->src[0]->nsrc && !rd; i++)
		rd = reads_written(E->k, S, s->src[0]->src[i], &seen, 0);
	pmap_free(&seen);
	/*
	** A statement reading what the program stored (before it, or in an earlier
	** iteration: a for loop is open) may read an element another thread of the program stored: the
	** layouts of two statements differ, and a scalar is stored by one thread and
	** loaded by all. Triton orders one thread's accesses only, so a barrier.
	*/
	if (rd && (T->stored || T->loops))
		line(E, ind, "tl.debug_barrier()");
	T->stored += !is_reg(E, s->src[0]);
	return n ? tile_store(E, S, s, &ts, ind) : scalar_store(E, S, s, ind);
}

static int
body(Emit *E, EStage *S, UOp *const *s, int n, int ind)
{
	size_t len = E->out->len;
	int i;

	for (i = 0; i < n; i++)
		if (stmt(E, S, s[i], ind) < 0)
			return -1;
	if (E->out->len == len)
		line(E, ind, "pass");
	return 0;
}

static int
loop(Emit *E, EStage *S, const UOp *s, int ind)
{
	TState *T = E->aux;
	const UOp *r = s->src[0], *v = krange_var(r);
	uintptr_t ax = (uintptr_t)pmap_get(&T->grid, r);
	HwAxis hw = krange_hw(r);
	int64_t ext = krange_extent(r);
	int rc;

	if (r->nsrc != 1 || v->op != OP_VAR || v->arg[0] != 0)
		return err_set(E->e, "triton: stage %s: a loop that does not start at 0", stname(E, S->st));
	if (pmap_get(&T->inner, r))
		return body(E, S, s->src + 1, s->nsrc - 1, ind);   /* a tile's axis: the store writes it */
	if (ax || hwaxis_is_block(hw)) {
		int a = ax ? (int)ax - 1 : (int)hw - (int)HW_BLOCK_X;
		char t[K_NAME + 48];

		snprintf(t, sizeof t, "%s = tl.program_id(%d)", v->name, a);
		line(E, ind, t);
		if (!ax && ext < S->grid[a]) {
			/* a block loop shorter than the grid: the blocks past it skip its body */
			snprintf(t, sizeof t, "if %s < %lld:", v->name, (long long)ext);
			line(E, ind, t);
			return body(E, S, s->src + 1, s->nsrc - 1, ind + 1);
		}
		return body(E, S, s->src + 1, s->nsrc - 1, ind);
	}
	emit_indent(E->out, 2 * ind);
	if ((krange_type(r) == AX_UNROLL || krange_type(r) == AX_UPCAST) && ext <= T_UNROLL)
		emit(E->out, "for %s in tl.static_range(%lld):\n", v->name, (long long)ext);
	else
		emit(E->out, "for %s in range(%lld):\n", v->name, (long long)ext);
	T->loops++;
	rc = body(E, S, s->src + 1, s->nsrc - 1, ind + 1);
	T->loops--;
	return rc;
}

static int
stmt(Emit *E, EStage *S, const UOp *s, int ind)
{
	TState *T = E->aux;
	Tx g;
	UOp *root;
	int rc;

	if (ind > E_MAXDEPTH)
		return err_set(E->e, "triton: stage %s: statements nest too deep", stname(E, S->st));
	switch (s->op) {
	case OP_STORE:
		return store(E, S, s, ind);
	case OP_END:
		if (s->nsrc < 1 || s->src[0]->op != OP_RANGE)
			return err_set(E->e, "triton: stage %s: a loop without a range", stname(E, S->st));
		return loop(E, S, s, ind);
	case OP_IF:
		if (s->nsrc < 1)
			return err_set(E->e, "triton: stage %s: an if without a condition", stname(E, S->st));
		if (s->src[0]->op == OP_CONST && s->src[0]->arg[0]) {
			int i;

			if (s->name) {
				emit_indent(E->out, 2 * ind);
				emit(E->out, "# %s\n", s->name);
			}
			for (i = 1; i < s->nsrc; i++)
				if (stmt(E, S, s->src[i], ind) < 0)
					return -1;
			return 0;
		}
		root = s->src[0];
		T->nfr = 0;
		tx_init(&g);
		rc = hoist(E, &root, 1, ind);
		if (rc == 0)
			rc = value(E, root, &g, 0);
		pmap_free(&T->hoist);
		if (rc == 0) {
			emit_indent(E->out, 2 * ind);
			emit(E->out, "if %s:\n", g.s.s ? g.s.s : "");
		}
		buf_free(&g.s);
		return rc < 0 ? -1 : body(E, S, s->src + 1, s->nsrc - 1, ind + 1);
	default:
		return refuse(E, S->st, s, "a statement with no Triton form:");
	}
}

/* ---- stages ---- */

/* every store's tile loops into T->inner */
static int
mark_inner(Emit *E, EStage *S, const UOp *s, int depth)
{
	TState *T = E->aux;
	TileStmt ts;
	int i, n;

	if (depth > E_MAXDEPTH)
		return 0;
	if (s->op == OP_STORE) {
		if ((n = tile_ir_stmt(E->k, S->st, s, &ts, E->e)) < 0)
			return -1;
		for (i = 0; i < n; i++)
			if (pmap_put(&T->inner, ts.loop[i], (void *)1) < 0)
				return oom(E);
		/* the first tile loop on the path heads the inner part: every loop under it is the tile's
		** (one of extent 1 that indexes nothing is no axis, and no loop either) */
		{
			UOp *path[256];
			int np = sched_path(E->k, S->st, s, path, 256), j;

			for (j = 0; n && j < np; j++)
				if (path[j]->op == OP_END)
					for (i = 0; i < n; i++)
						if (path[j]->src[0] == ts.loop[i])
							goto found;
			return 0;
found:
			/* the first inner loop on the path heads the tile: every loop under it is the tile's */
			for (; j < np; j++)
				if (path[j]->op == OP_END && pmap_put(&T->inner, path[j]->src[0], (void *)1) < 0)
					return oom(E);
		}
		return 0;
	}
	if (s->op != OP_END && s->op != OP_IF)
		return 0;
	for (i = 1; i < s->nsrc; i++)
		if (mark_inner(E, S, s->src[i], depth + 1) < 0)
			return -1;
	return 0;
}

/*
** A stage that is one tile statement and nothing else (a lowered
** elementwise stage): its outermost loop, when the tile stores along it, is
** spread over programs, blocks of it as large as keeps the tile within
** T_BLOCKED elements, as a Triton kernel over rows does.
*/
static int
spread(Emit *E, EStage *S, const UOp *s)
{
	TState *T = E->aux;
	const UOp *top = s;
	TileStmt ts;
	int64_t rest = 1, ext, b;
	int f, at = -1;

	if (s->op != OP_END || !pmap_get(&T->inner, s->src[0]))
		return 0;
	while (s->op == OP_END || (s->op == OP_IF && s->src[0]->op == OP_CONST && s->src[0]->arg[0] && !s->name)) {
		if (s->nsrc != 2)
			return 0;
		s = s->src[1];
	}
	if (s->op != OP_STORE || tile_ir_stmt(E->k, S->st, s, &ts, E->e) <= 0)
		return ts.n < 0 ? -1 : 0;
	for (f = 0; f < ts.n; f++)
		if (ts.loop[f] == top->src[0])
			at = f;
		else
			rest *= pow2(krange_extent(ts.loop[f]));
	if (at < 0 || at >= ts.nstored)
		return 0;
	ext = krange_extent(top->src[0]);
	for (b = pow2(ext); b > 1 && b * rest > T_BLOCKED; b /= 2)
		;
	T->blk = top->src[0];
	T->blk_size = b;
	T->gext[0] = (ext + b - 1) / b;
	T->ngrid = 1;
	return 0;
}

/*
** Program ids for a stage without bound loops: the leading nest of loops
** each the only statement of the one above, independent together, no
** tile's axis, at most three (axis 0 the outermost: it takes 2^31-1
** programs, axes 1 and 2 65535).
*/
static int
choose_grid(Emit *E, EStage *S)
{
	TState *T = E->aux;
	UOp *loops[3];
	const UOp *s = S->body;
	Err ie;
	int n = 0;

	T->ngrid = 0;
	if (S->nbound)
		return 0;
	while (n < 3) {
		while (s->op == OP_IF && s->src[0]->op == OP_CONST && s->src[0]->arg[0] && !s->name && s->nsrc == 2)
			s = s->src[1];
		if (s->op != OP_END || s->nsrc < 2 || krange_hw(s->src[0]) != HW_NONE
		|| pmap_get(&T->inner, s->src[0]) || (n && krange_extent(s->src[0]) > 65535))
			break;
		loops[n] = (UOp *)s;
		if (sched_independent(E->k, S->st, loops, n + 1, 0, &ie) < 0) {
			break;
		}
		if (pmap_put(&T->grid, s->src[0], (void *)(uintptr_t)(n + 1)) < 0)
			return oom(E);
		T->gext[n++] = krange_extent(s->src[0]);
		if (s->nsrc != 2)
			break;   /* the next loop would not be the only statement of this one */
		s = s->src[1];
	}
	T->ngrid = n;
	return n ? 0 : spread(E, S, s);
}

static int
add_launch(Emit *E, EStage *S)
{
	TState *T = E->aux;
	TLaunch *L;
	int b, i;

	if (T->nl == T->capl) {
		int cap = T->capl ? 2 * T->capl : 8;
		TLaunch *n = realloc(T->l, cap * sizeof *n);

		if (!n)
			return oom(E);
		T->l = n;
		T->capl = cap;
	}
	L = &T->l[T->nl];
	memset(L, 0, sizeof *L);
	snprintf(L->name, sizeof L->name, "%s_kernel", E->sname[S->st]);
	if (S->nbound) {
		for (i = 0; i < 3; i++)
			L->grid[i] = S->grid[i];
		L->ngrid = S->grid[2] > 1 ? 3 : S->grid[1] > 1 ? 2 : 1;
	} else {
		for (i = 0; i < 3; i++)
			L->grid[i] = i < T->ngrid ? T->gext[i] : 1;
		L->ngrid = T->ngrid ? T->ngrid : 1;
	}
	if (!(L->arg = malloc((E->k->nbuf ? E->k->nbuf : 1) * sizeof *L->arg)))
		return oom(E);
	for (b = 0; b < E->k->nbuf; b++)
		if (S->use[b] && E->k->buf[b].scope != AS_REG)
			L->arg[L->narg++] = b;
	T->nl++;
	if (T->nar && !(L->cx = malloc(T->nar * sizeof *L->cx)))
		return oom(E);
	for (i = 0; i < T->nar; i++)
		L->cx[L->ncx++] = T->ar[i];
	return 0;
}

static int
stage(Emit *E, EStage *S)
{
	TState *T = E->aux;
	const Kernel *k = E->k;
	Buf *out = E->out, b;
	int i, n = 0, rc = -1;

	T->S = S;
	T->nar = 0;
	T->blk = NULL;
	T->stored = T->loops = 0;
	pmap_free(&T->inner);
	pmap_free(&T->grid);
	buf_init(&T->pre);
	buf_init(&b);
	if (S->grid[0] > 2147483647 || S->grid[1] > 65535 || S->grid[2] > 65535) {
		err_set(E->e, "triton: stage %s: a grid of (%lld, %lld, %lld) programs; Triton's reaches (2^31-1, "
		        "65535, 65535)", stname(E, S->st), (long long)S->grid[0], (long long)S->grid[1],
		        (long long)S->grid[2]);
		goto out;
	}
	if (mark_inner(E, S, S->body, 0) < 0 || choose_grid(E, S) < 0)
		goto out;
	/* the statements first (they make the aranges), then the function around them */
	E->out = &b;
	rc = body(E, S, (UOp *const *)&S->body, 1, 1);
	E->out = out;
	if (rc < 0)
		goto out;
	rc = -1;
	emit(out, "\n\n@triton.jit\ndef %s_kernel(", E->sname[S->st]);
	for (i = 0; i < k->nbuf; i++)
		if (S->use[i] && k->buf[i].scope != AS_REG)
			emit(out, "%s%s", n++ ? ", " : "", T->pname[i]);
	for (i = 0; i < T->nar; i++)
		emit(out, "%s%s: tl.constexpr", n++ ? ", " : "", T->ar[i].block);
	emit(out, "):\n");
	emit(out, "    # %s\n", S->nbound ? "block-bound loops are program ids" : T->blk ? "blocks of the outer "
	     "tile axis are program ids" : T->ngrid ? "independent outer loops are program ids"
	     : "one program runs the stage");
	emit(out, "%s%s", T->pre.s ? T->pre.s : "", b.s ? b.s : "");
	if (add_launch(E, S) < 0)
		goto out;
	rc = b.oom || T->pre.oom ? oom(E) : 0;
out:
	E->out = out;
	buf_free(&b);
	buf_free(&T->pre);
	return rc;
}

/* ---- the module ---- */

static void
shape(Buf *b, const KBuf *x)
{
	int i;

	emit(b, "%s: %s[", x->name, dtype_name(x->dtype));
	for (i = 0; i < x->ndim; i++)
		emit(b, "%s%lld", i ? ", " : "", (long long)x->shape[i]);
	emit(b, "]");
	if (strcmp(x->layout_desc, "row-major") != 0)
		emit(b, " @ %s", x->layout_desc);
}

static void
role_line(Buf *b, const Kernel *k, KRole role, const char *label)
{
	int i, n = 0;

	for (i = 0; i < k->nbuf; i++) {
		if (k->buf[i].role != role)
			continue;
		emit(b, n++ ? ", " : "  %-9s", label);
		shape(b, &k->buf[i]);
	}
	if (n)
		emit(b, "\n");
}

static int
head(Emit *E, Buf *b)
{
	TState *T = E->aux;
	const Kernel *k = E->k;
	int i;

	emit(b, "\"\"\"\nA tessel kernel as Triton (tessel_launch at the end runs its stages in order).\n");
	role_line(b, k, KB_INPUT, "inputs:");
	role_line(b, k, KB_OUTPUT, "outputs:");
	role_line(b, k, KB_TEMP, "buffers:");
	emit(b, "bufs[i] is buffer i's storage, a tensor on the device laid out by its layout; the order is");
	for (i = 0; i < k->nbuf; i++)
		emit(b, "%s%s", i ? ", " : " ", k->buf[i].name);
	emit(b, ".\nValues are close to tessel's interpreter, not equal: Triton's exp2, log2, sin and sqrt\n"
	     "are the device's and its reductions add in a tree. Compare with |got - ref| <= atol + rtol * |ref|:\n"
	     "float32 rtol 1e-4 atol 1e-5, float64 rtol 1e-9 atol 1e-12, float16 and bfloat16 rtol 1e-2\n"
	     "atol 1e-2, integers and bool exactly (docs/export.md).\n\"\"\"\n");
	emit(b, "import triton\nimport triton.language as tl\n");
	if (T->mul)
		emit(b, "\n\n@triton.jit\ndef tessel_mul(a, b):\n    return a * b\n");
	return 0;
}

static int
tail(Emit *E, Buf *b)
{
	TState *T = E->aux;
	const Kernel *k = E->k;
	int i, j;

	emit(b, "\n\ndef tessel_launch(bufs):\n    \"\"\"The stages in order, each on its grid; bufs in kernel order.\"\"\"\n");
	if (k->nbuf) {
		emit(b, "    ");
		for (i = 0; i < k->nbuf; i++)
			emit(b, "%s%s", i ? ", " : "", E->bname[i]);
		emit(b, "%s = bufs\n", k->nbuf == 1 ? "," : "");
	}
	for (i = 0; i < T->nl; i++) {
		const TLaunch *L = &T->l[i];

		emit(b, "    %s[(", L->name);
		for (j = 0; j < L->ngrid; j++)
			emit(b, "%s%lld", j ? ", " : "", (long long)L->grid[j]);
		emit(b, "%s)](", L->ngrid == 1 ? "," : "");
		for (j = 0; j < L->narg; j++)
			emit(b, "%s%s", j ? ", " : "", E->bname[L->arg[j]]);
		for (j = 0; j < L->ncx; j++)
			emit(b, "%s%s=%lld", j || L->narg ? ", " : "", L->cx[j].block, (long long)L->cx[j].pad);
		emit(b, ")\n");
	}
	return 0;
}

static int
no_loop(Emit *E, EStage *S, const UOp *s, int ind)
{
	return err_set(E->e, "triton: stage %s: internal: the C walk reached the Triton dialect", stname(E, S->st));
}

/* The pointer arguments, named once the walk's names are taken (EmitDialect.check runs after them). */
static int
triton_check(Emit *E)
{
	TState *T = E->aux;
	char nm[K_NAME + 24];
	int i;

	if (check(E) < 0)
		return -1;
	if (!(T->pname = calloc(E->k->nbuf ? E->k->nbuf : 1, sizeof *T->pname)))
		return oom(E);
	if (!(T->rname = calloc(E->k->nbuf ? E->k->nbuf : 1, sizeof *T->rname)))
		return oom(E);
	for (i = 0; i < E->k->nbuf; i++) {
		snprintf(nm, sizeof nm, "%s_ptr", E->bname[i]);
		if (!(T->pname[i] = emit_fresh(E, nm)))
			return oom(E);
		if (E->k->buf[i].scope == AS_REG && !(T->rname[i] = emit_fresh(E, E->bname[i])))
			return oom(E);
	}
	for (i = 0; i < E->k->nstage; i++) {
		snprintf(nm, sizeof nm, "%s_kernel", E->sname[i]);
		if (!emit_fresh(E, nm))
			return oom(E);
	}
	return 0;
}

static const EmitDialect emit_triton = {
	"triton", D_TRITON, reserved, ttype, triton_check, stage, head, tail, no_loop, no_loop, 0, NULL, NULL,
	NULL, 0, NULL, 0, NULL, NULL, NULL, 0
};

int
triton_source(Buf *b, const Kernel *k, Err *e)
{
	TState T;
	EmitInfo info;
	int i, rc;

	memset(&T, 0, sizeof T);
	memset(&info, 0, sizeof info);
	info.aux = &T;
	rc = emit_kernel(b, k, &emit_triton, &info, e);
	for (i = 0; i < T.nl; i++) {
		free(T.l[i].arg);
		free(T.l[i].cx);
	}
	free(T.l);
	free(T.ar);
	free(T.pname);
	free(T.rname);
	pmap_free(&T.inner);
	pmap_free(&T.grid);
	pmap_free(&T.hoist);
	pmap_free(&T.pure);
	return rc;
}

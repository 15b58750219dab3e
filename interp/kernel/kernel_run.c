/* kernel_run.c - the kernel interpreter: stages compiled once to register bytecode, run with GPU thread semantics, checked and counted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../layout/layout.h"
#include "../../util/limits.h"
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

/* ---- compiling ---- */

/* A map from UOps to slots, emptied in O(1) by a new generation. */
typedef struct Map {
	const UOp **key;
	int *val;
	uint32_t *gen;
	size_t cap, n;
	uint32_t g;
} Map;

static void
map_free(Map *m)
{
	free(m->key);
	free(m->val);
	free(m->gen);
	memset(m, 0, sizeof *m);
}

static void
map_clear(Map *m)
{
	m->g++;
	m->n = 0;
}

static size_t
map_hash(const UOp *u, size_t cap)
{
	return (size_t)(((uintptr_t)u >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1);
}

static int
map_get(const Map *m, const UOp *u, int *v)
{
	size_t h;

	if (!m->cap)
		return 0;
	for (h = map_hash(u, m->cap); m->gen[h] == m->g; h = (h + 1) & (m->cap - 1))
		if (m->key[h] == u) {
			*v = m->val[h];
			return 1;
		}
	return 0;
}

static int
map_put(Map *m, const UOp *u, int v)
{
	size_t h, i;

	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		const UOp **nk = malloc(cap * sizeof *nk);
		int *nv = malloc(cap * sizeof *nv);
		uint32_t *ng = calloc(cap, sizeof *ng);

		if (!nk || !nv || !ng) {
			free(nk);
			free(nv);
			free(ng);
			return -1;
		}
		for (i = 0; i < m->cap; i++)
			if (m->gen[i] == m->g) {
				for (h = map_hash(m->key[i], cap); ng[h] == 1; h = (h + 1) & (cap - 1))
					;
				ng[h] = 1;
				nk[h] = m->key[i];
				nv[h] = m->val[i];
			}
		free(m->key);
		free(m->val);
		free(m->gen);
		m->key = nk;
		m->val = nv;
		m->gen = ng;
		m->cap = cap;
		m->g = 1;
	}
	for (h = map_hash(u, m->cap); m->gen[h] == m->g; h = (h + 1) & (m->cap - 1))
		;
	m->gen[h] = m->g;
	m->key[h] = u;
	m->val[h] = v;
	m->n++;
	return 0;
}

typedef struct Scope {
	const UOp *var;
	int slot;
} Scope;

typedef struct Comp {
	const Kernel *k;
	Prog *p;
	Err *e;
	Map memo;           /* node -> slot within one statement */
	Map lmemo;          /* node -> slot within one layout expression */
	Map cmap;           /* constant node -> constant slot, for the whole stage */
	Scope *sc;          /* the enclosing loops, outermost first */
	int nsc, capsc;
	const UOp *ov[T_MAXDIM];  /* layout compilation: lvar[k] is slot ovs[k] */
	int ovs[T_MAXDIM], nov;
} Comp;

static int
isf(int t)
{
	return dtype_is_float((DType)t);
}

static int
grow(void **p, int *cap, int need, size_t size)
{
	int nc;
	void *np;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap : 16;
	while (nc < need)
		nc *= 2;
	if (!(np = realloc(*p, (size_t)nc * size)))
		return -1;
	*p = np;
	*cap = nc;
	return 0;
}

static int
oom(Comp *C)
{
	return err_set(C->e, "kernel.run: out of memory compiling stage %s", C->p->name);
}

static int
emit_ins(Comp *C, int op, int t, int w, int d, int a, int b, int c, int64_t imm)
{
	Prog *p = C->p;
	Ins *in;

	if (grow((void **)&p->code, &p->cap, p->n + 1, sizeof *p->code) < 0)
		return oom(C);
	in = &p->code[p->n];
	in->op = (uint8_t)op;
	in->t = (uint8_t)t;
	in->w = (uint8_t)w;
	in->pad = 0;
	in->d = d;
	in->a = a;
	in->b = b;
	in->c = c;
	in->imm = imm;
	return p->n++;
}

static int
newslot(Comp *C)
{
	Prog *p = C->p;

	if (p->nslot >= (1 << 24))
		return err_set(C->e, "kernel.run: stage %s needs more than 2^24 slots", p->name);
	if (++p->nslot > p->nstack)
		p->nstack = p->nslot;
	return p->nslot - 1;
}

/* A constant's slot, coded -(index+2) until the stack size is known. */
static int
cconst(Comp *C, const UOp *u)
{
	Prog *p = C->p;
	int v;

	if (map_get(&C->cmap, u, &v))
		return v;
	if (grow((void **)&p->cval, &p->capconst, p->nconst + 1, sizeof *p->cval) < 0)
		return oom(C);
	if (isf(u->dtype))
		p->cval[p->nconst].f = uop_const_value(u);
	else
		p->cval[p->nconst].i = u->arg[0];
	v = -(p->nconst++ + 2);
	if (map_put(&C->cmap, u, v) < 0)
		return oom(C);
	return v;
}

/* An instruction with a fresh destination; returns the destination. */
static int
emit_val(Comp *C, int op, int t, int w, int a, int b, int c)
{
	int d = newslot(C);

	if (d < 0 || emit_ins(C, op, t, w, d, a, b, c, 0) < 0)
		return -1;
	return d;
}

static int
needs_wrap(int t)
{
	return t != DT_INDEX && t != DT_INT64 && t != DT_UINT64;
}

/* The value in slot s of dtype from, read in the other kind (read_row's
** conversions: an integer as a double, a float truncated to int64). */
static int
tokind(Comp *C, int s, int from, int fl)
{
	if (isf(from) == fl)
		return s;
	if (fl)
		return emit_val(C, from == DT_UINT64 ? I_UTOF : I_ITOF, DT_FLOAT64, 0, s, -1, -1);
	return emit_val(C, I_FTOI, DT_INT64, 0, s, -1, -1);
}

/* The value in slot s of dtype from as a truth value 0/1. */
static int
tobool(Comp *C, int s, int from)
{
	if (from == DT_BOOL)
		return s;
	if (isf(from))
		return emit_val(C, I_FTOI, DT_BOOL, 0, s, -1, -1);
	return emit_val(C, I_IWRAP, DT_BOOL, 1, s, -1, -1);
}

/* CAST of the value in slot s from dtype `from` to t. */
static int
ccast(Comp *C, int s, int from, int t)
{
	if (isf(from) && isf(t))
		return emit_val(C, I_FROUND, t, 0, s, -1, -1);
	if (isf(from))
		return emit_val(C, I_FTOI, t, 0, s, -1, -1);
	if (isf(t))
		return emit_val(C, from == DT_UINT64 ? I_UTOF : I_ITOF, t, 0, s, -1, -1);
	return emit_val(C, I_IWRAP, t, needs_wrap(t), s, -1, -1);
}

static int
fop_code(int op)
{
	switch (op) {
	case OP_NEG: return I_FNEG;
	case OP_RECIP: return I_FRECIP;
	case OP_TRUNC: return I_FTRUNC;
	case OP_EXP2: return I_FEXP2;
	case OP_LOG2: return I_FLOG2;
	case OP_SIN: return I_FSIN;
	case OP_SQRT: return I_FSQRT;
	case OP_ADD: return I_FADD;
	case OP_SUB: return I_FSUB;
	case OP_MUL: return I_FMUL;
	case OP_POW: return I_FPOW;
	case OP_IDIV: return I_FIDIV;
	case OP_MOD: return I_FMOD;
	case OP_MIN: return I_FMIN;
	case OP_MAX: return I_FMAX;
	case OP_CMPLT: return I_FLT;
	case OP_CMPNE: return I_FNE;
	case OP_CMPEQ: return I_FEQ;
	case OP_WHERE: return I_FWHERE;
	case OP_MULACC: return I_FMULACC;
	default: return I_FNAN;     /* fop: bit operations on floats are NaN */
	}
}

static int
iop_code(int op, int uns, int index)
{
	switch (op) {
	case OP_NEG: return I_INEG;
	case OP_RECIP: return I_IRECIP;
	case OP_ADD: return I_IADD;
	case OP_SUB: return I_ISUB;
	case OP_MUL: return I_IMUL;
	case OP_MULACC: return I_IMULACC;
	case OP_IDIV: return index ? I_XDIV : uns ? I_UDIV : I_IDIV;
	case OP_MOD: return index ? I_XMOD : uns ? I_UMOD : I_IMOD;
	case OP_MIN: return uns ? I_UMIN : I_IMIN;
	case OP_MAX: return uns ? I_UMAX : I_IMAX;
	case OP_CMPLT: return uns ? I_ULT : I_ILT;
	case OP_CMPNE: return I_INE;
	case OP_CMPEQ: return I_IEQ;
	case OP_WHERE: return I_IWHERE;
	case OP_AND: return I_AND;
	case OP_OR: return I_OR;
	case OP_XOR: return I_XOR;
	case OP_SHL: return I_SHL;
	case OP_SHR: return uns ? I_USHR : I_SHR;
	case OP_THREEFRY: return I_THREEFRY;
	case OP_POW: return uns ? I_UPOW : I_IPOW;
	default: return I_IZERO;    /* iop: transcendental ops on integers are 0 */
	}
}

static int cexpr(Comp *C, const UOp *root, int lay);
static int aux_new(Comp *C, int buf, const UOp *x, int write);

/* An ALU node whose sources are compiled (slots in s[]). The operation runs
** in the kind of its operands (WHERE: of its values), as ewise does. */
static int
calu(Comp *C, const UOp *u, int *s)
{
	int op = u->op, t = u->dtype, i, r, od, fl, code;

	if (u->nsrc != uop_info[op].arity)
		return err_set(C->e, "kernel.run: stage %s: %s with %d sources", C->p->name,
		               uop_info[op].name, u->nsrc);
	if (t == DT_VOID)
		return err_set(C->e, "kernel.run: stage %s: %s of dtype void", C->p->name, uop_info[op].name);
	if (op == OP_CAST)
		return ccast(C, s[0], u->src[0]->dtype, t);
	od = op == OP_WHERE ? u->src[1]->dtype : u->src[0]->dtype;
	fl = isf(od);
	if (op == OP_TRUNC && !fl)
		return ccast(C, s[0], od, t);    /* iop: trunc of an integer is itself */
	for (i = 0; i < u->nsrc; i++) {
		if (op == OP_WHERE && i == 0)
			s[0] = tobool(C, s[0], u->src[0]->dtype);
		else
			s[i] = tokind(C, s[i], u->src[i]->dtype, fl);
		if (s[i] == -1)
			return -1;
	}
	if (fl) {
		code = fop_code(op);
		if (uop_info[op].flags & U_CMP)
			return emit_val(C, code, DT_BOOL, 0, s[0], u->nsrc > 1 ? s[1] : -1, -1);
		r = emit_val(C, code, isf(t) ? t : DT_FLOAT64, 0, s[0], u->nsrc > 1 ? s[1] : -1,
		             u->nsrc > 2 ? s[2] : -1);
		return r < 0 || isf(t) ? r : ccast(C, r, DT_FLOAT64, t);
	}
	code = iop_code(op, od == DT_UINT64, od == DT_INDEX);
	if (code == I_XDIV || code == I_XMOD) {
		/* c: a record of the enclosing loops, for the message on a zero divisor */
		int a = aux_new(C, -1, NULL, 0);

		return a < 0 ? -1 : emit_val(C, code, t, 0, s[0], s[1], a);
	}
	if (uop_info[op].flags & U_CMP)
		return emit_val(C, code, DT_BOOL, 0, s[0], s[1], -1);
	r = emit_val(C, code, isf(t) ? DT_INT64 : t, !isf(t) && needs_wrap(t), s[0],
	             u->nsrc > 1 ? s[1] : -1, u->nsrc > 2 ? s[2] : -1);
	return r < 0 || !isf(t) ? r : ccast(C, r, DT_INT64, t);
}


/* The buffer an INDEX names, checked. */
static int
index_buf(Comp *C, const UOp *x)
{
	const UOp *d = x->src[0];
	int b;

	if (x->nsrc < 1 || d->op != OP_DEFINE || d->arg[0] < 0 || d->arg[0] >= C->k->nbuf
	|| C->k->buf[d->arg[0]].def != d)
		return err_set(C->e, "kernel.run: stage %s: an index of something that is not a buffer "
		               "of this kernel", C->p->name);
	b = (int)d->arg[0];
	if (x->nsrc - 1 != C->k->buf[b].ndim)
		return err_set(C->e, "kernel.run: stage %s: %s has %d dimensions, indexed with %d",
		               C->p->name, C->k->buf[b].name, C->k->buf[b].ndim, x->nsrc - 1);
	return b;
}

/* INDEX: the physical offset, the buffer's layout with lvar[k] bound to the
** k-th index (compiled afresh for each INDEX node of a statement). */
static int
cindex(Comp *C, const UOp *x, const int *s)
{
	const KBuf *kb;
	int b = index_buf(C, x), i, r;

	if (b < 0)
		return -1;
	kb = &C->k->buf[b];
	for (i = 0; i < kb->ndim; i++) {
		if (isf(x->src[i + 1]->dtype))
			return err_set(C->e, "kernel.run: stage %s: index %d of %s is a %s value", C->p->name,
			               i, kb->name, dtype_name((DType)x->src[i + 1]->dtype));
		C->ov[i] = kb->lvar[i];
		C->ovs[i] = s[i + 1];
	}
	C->nov = kb->ndim;
	map_clear(&C->lmemo);
	r = cexpr(C, kb->layout, 1);
	C->nov = 0;
	return r;
}

static int
aux_new(Comp *C, int buf, const UOp *x, int write)
{
	Prog *p = C->p;
	MemAux *a;
	int i;

	if (grow((void **)&p->aux, &p->capaux, p->naux + 1, sizeof *p->aux) < 0
	|| grow((void **)&p->lvar, &p->capl, p->nl + C->nsc, sizeof *p->lvar) < 0
	|| grow((void **)&p->lslot, &p->capl2, p->nl + C->nsc, sizeof *p->lslot) < 0)
		return oom(C);
	a = &p->aux[p->naux];
	memset(a, 0, sizeof *a);
	a->buf = buf;
	a->write = write;
	a->ndim = x ? x->nsrc - 1 : 0;
	for (i = 0; i < a->ndim; i++)
		if (!map_get(&C->memo, x->src[i + 1], &a->idx[i]))
			return err_set(C->e, "kernel.run: internal: index not compiled");
	a->loop0 = p->nl;
	a->nloop = C->nsc;
	for (i = 0; i < C->nsc; i++) {
		p->lvar[p->nl] = C->sc[i].var;
		p->lslot[p->nl++] = C->sc[i].slot;
	}
	return p->naux++;
}

/* One node whose sources are compiled. */
static int
cnode(Comp *C, const UOp *x, int lay)
{
	Map *m = lay ? &C->lmemo : &C->memo;
	int s[T_MAXDIM + 1] = { 0 }, i, r, g = -1, b, a;

	if (x->op == OP_LOAD) {
		if (lay)
			return err_set(C->e, "kernel.run: a layout expression loads");
		if (x->nsrc < 1 || x->nsrc > 2 || x->src[0]->op != OP_INDEX)
			return err_set(C->e, "kernel.run: stage %s: a load of something that is not an index",
			               C->p->name);
		if (!map_get(m, x->src[0], &s[0]))
			return err_set(C->e, "kernel.run: internal: load source not compiled");
		if (x->nsrc == 2) {
			if (!map_get(m, x->src[1], &g) || (g = tobool(C, g, x->src[1]->dtype)) == -1)
				return -1;
		}
		if ((b = index_buf(C, x->src[0])) < 0 || (a = aux_new(C, b, x->src[0], 0)) < 0)
			return -1;
		r = newslot(C);
		if (r < 0 || emit_ins(C, I_LOAD, C->k->buf[b].dtype, 0, r, s[0], g, a, b) < 0)
			return -1;
		return r;
	}
	if (x->op == OP_INDEX) {
		if (lay)
			return err_set(C->e, "kernel.run: a layout expression indexes a buffer");
		if (x->nsrc > T_MAXDIM + 1)
			return err_set(C->e, "kernel.run: stage %s: an index with %d coordinates",
			               C->p->name, x->nsrc - 1);
		for (i = 1; i < x->nsrc; i++)
			if (!map_get(m, x->src[i], &s[i]))
				return err_set(C->e, "kernel.run: internal: index source not compiled");
		return cindex(C, x, s);
	}
	if (x->op == OP_SHUFFLE) {
		/* stops the thread until its warp gathers (run_stage) */
		if (lay)
			return err_set(C->e, "kernel.run: a layout expression shuffles");
		if (x->nsrc != 2 || isf(x->src[1]->dtype) || x->dtype != x->src[0]->dtype)
			return err_set(C->e, "kernel.run: stage %s: a shuffle that is not (value, integer lane)",
			               C->p->name);
		if (!map_get(m, x->src[0], &s[0]) || !map_get(m, x->src[1], &s[1]))
			return err_set(C->e, "kernel.run: internal: shuffle source not compiled");
		r = newslot(C);
		if (r < 0 || emit_ins(C, I_SHFL, x->dtype, 0, r, s[0], s[1], -1, C->p->nshfl++) < 0)
			return -1;
		return r;
	}
	if (!(uop_info[x->op].flags & U_ALU) || x->nsrc > 3)
		return err_set(C->e, "kernel.run: stage %s: %s is not a value the interpreter runs%s",
		               C->p->name, uop_info[x->op].name,
		               x->op == OP_RANGE ? " (a loop's value is its variable, the RANGE's source)" : "");
	for (i = 0; i < x->nsrc; i++)
		if (!map_get(m, x->src[i], &s[i]))
			return err_set(C->e, "kernel.run: internal: source not compiled");
	return calu(C, x, s);
}

/* A leaf's slot, or -1 with e set (NOLEAF for "not a leaf"). */
static int
cleaf(Comp *C, const UOp *x, int lay)
{
	int i;

	if (x->op == OP_CONST)
		return cconst(C, x);
	if (x->op == OP_VAR) {
		if (lay) {
			for (i = 0; i < C->nov; i++)
				if (C->ov[i] == x)
					return C->ovs[i];
			return err_set(C->e, "kernel.run: a layout expression uses the variable %s, not one of "
			               "its coordinates", x->name);
		}
		for (i = C->nsc - 1; i >= 0; i--)
			if (C->sc[i].var == x)
				return C->sc[i].slot;
		return err_set(C->e, "kernel.run: stage %s: the variable %s is not the variable of an "
		               "enclosing loop", C->p->name, x->name);
	}
	if (x->op == OP_DEFINE)
		return err_set(C->e, "kernel.run: stage %s: the buffer %s used as a value", C->p->name,
		               x->name ? x->name : "?");
	return NOLEAF;
}

/* An expression's slot: post-order over the nodes not yet compiled in this
** statement, with an explicit stack (expressions nest UOP_MAXDEPTH deep). */
static int
cexpr(Comp *C, const UOp *root, int lay)
{
	Map *m = lay ? &C->lmemo : &C->memo;
	const UOp **st;
	int sp = 0, cap = 64, v, i, r = -1;

	if (map_get(m, root, &v))
		return v;
	if (!(st = malloc(cap * sizeof *st)))
		return oom(C);
	st[sp++] = root;
	while (sp) {
		const UOp *x = st[sp - 1];
		int pending = 0;

		if (map_get(m, x, &v)) {
			sp--;
			continue;
		}
		if ((v = cleaf(C, x, lay)) != NOLEAF) {
			if (v == -1 || map_put(m, x, v) < 0)
				goto out;
			sp--;
			continue;
		}
		if (x->op != OP_INDEX && x->op != OP_LOAD && x->op != OP_SHUFFLE
		&& !(uop_info[x->op].flags & U_ALU)) {
			cnode(C, x, lay);   /* says why, before its sources say something less to the point */
			goto out;
		}
		for (i = x->op == OP_INDEX ? 1 : 0; i < x->nsrc; i++)
			if (!map_get(m, x->src[i], &v)) {
				if (grow((void **)&st, &cap, sp + 1, sizeof *st) < 0) {
					oom(C);
					goto out;
				}
				st[sp++] = x->src[i];
				pending = 1;
			}
		if (pending)
			continue;
		sp--;
		if ((v = cnode(C, x, lay)) == -1 || map_put(m, x, v) < 0)
			goto out;
	}
	if (!map_get(m, root, &r))
		r = -1;
out:
	free(st);
	if (r == -1 && !C->e->msg[0])
		oom(C);
	return r;
}

static int
gate_slot(Comp *C, const UOp *g)
{
	int s = cexpr(C, g, 0);

	return s == -1 ? -1 : tobool(C, s, g->dtype);
}

static void
dims(Prog *p, int hw, int64_t ext)
{
	int64_t *d = NULL, v = ext;

	switch (hw) {
	case HW_BLOCK_X: case HW_BLOCK_Y: case HW_BLOCK_Z: d = &p->grid[hw - HW_BLOCK_X]; break;
	case HW_THREAD_X: case HW_THREAD_Y: case HW_THREAD_Z: d = &p->blk[hw - HW_THREAD_X]; break;
	case HW_WARP: d = &p->blk[0]; v = ext > INT64_MAX / WARP ? INT64_MAX : ext * WARP; break;
	case HW_LANE: d = &p->blk[0]; break;
	}
	if (d && v > *d)
		*d = v;
}

static int cstmts(Comp *C, UOp *const *s, int n, int depth);

/* The physical offset of logical element v (row-major) of buffer b. */
static int
reg_offset(Comp *C, int b, int64_t v, int64_t *off)
{
	const KBuf *kb = &C->k->buf[b];
	UBind bind[T_MAXDIM];
	int i;

	for (i = kb->ndim - 1; i >= 0; i--) {
		bind[i].name = kb->lvar[i]->name;
		bind[i].value = v % kb->shape[i];
		v /= kb->shape[i];
	}
	return uop_eval(kb->layout, bind, kb->ndim, off, C->e);
}

/*
** An MMA: the atom checked against its buffers (kernel_mma_atom), then its
** lanes resolved. Logical thread t of an atom is hardware lane thr_id(t);
** atoms of fewer than 32 threads repeat across the warp, each instance at
** the lowest lane no earlier one took (SM70: quadpairs at lanes +0, +4, +8, +12).
*/
static int
cmma(Comp *C, const UOp *s)
{
	Prog *p = C->p;
	const Kernel *k = C->k;
	MmaAtom at;
	MmaProg *M;
	int buf[4], i, j, L, v, tf32 = 0;
	int64_t nthr, x, o;
	char m[sizeof C->e->msg];

	if (s->nsrc != 4 || !s->name)
		return err_set(C->e, "mma: stage %s: an MMA without (D, A, B, C) and an atom", p->name);
	for (i = 0; i < 4; i++) {
		const UOp *d = s->src[i];

		if (d->op != OP_DEFINE || d->arg[0] < 0 || d->arg[0] >= k->nbuf || k->buf[d->arg[0]].def != d)
			return err_set(C->e, "mma: stage %s: operand %d is not a buffer of this kernel", p->name, i);
		buf[i] = (int)d->arg[0];
	}
	if (kernel_mma_atom(k, s->name, buf, &at, &tf32, C->e) < 0) {
		snprintf(m, sizeof m, "%s", C->e->msg + 5);
		return err_set(C->e, "mma: stage %s: %s", p->name, m);
	}
	if (grow((void **)&p->mma, &p->capmma, p->nmma + 1, sizeof *p->mma) < 0)
		return oom(C);
	M = &p->mma[p->nmma];
	memset(M, 0, sizeof *M);
	M->name = s->name;
	memcpy(M->buf, buf, sizeof buf);
	M->m = at.m;
	M->n = at.n;
	M->k = at.k;
	M->tf32 = tf32;
	nthr = cute_size(&at.thr_id);
	if (at.m * at.k > MMA_MAXTILE || at.n * at.k > MMA_MAXTILE || at.m * at.n > MMA_MAXTILE)
		return err_set(C->e, "mma: stage %s: %s: tiles over %d elements", p->name, at.name, MMA_MAXTILE);
	for (i = 0; i < 4; i++) {
		const Layout *l = i == 1 ? &at.a : i == 2 ? &at.b : &at.c;
		Layout m0, m1;

		if (cute_mode(l, 0, &m0, C->e) < 0 || cute_mode(l, 1, &m1, C->e) < 0)
			return -1;
		M->nv[i] = (int)cute_size(&m1);
		if (cute_size(&m0) != nthr || M->nv[i] > MMA_MAXV)
			return err_set(C->e, "mma: stage %s: %s: a TV layout of %lld threads and %d values",
			               p->name, at.name, (long long)cute_size(&m0), M->nv[i]);
		for (v = 0; v < M->nv[i]; v++)
			if (reg_offset(C, buf[i], v, &M->off[i][v]) < 0)
				return -1;
	}
	memset(M->group, -1, sizeof M->group);
	for (o = 0; o < WARP; o++) {
		if (M->group[o] >= 0)
			continue;
		for (j = 0; j < nthr; j++) {
			if (cute_eval_idx(&at.thr_id, j, &x, C->e) < 0)
				return -1;
			L = (int)(x + o);
			if (x < 0 || L >= WARP || M->group[L] >= 0)
				return err_set(C->e, "mma: stage %s: %s: the atom's threads do not tile a warp "
				               "(logical thread %d of the instance at lane %lld is lane %lld)", p->name,
				               at.name, j, (long long)o, (long long)(x + o));
			M->group[L] = (int8_t)M->ngroup;
			for (i = 0; i < 4; i++) {
				const Layout *l = i == 1 ? &at.a : i == 2 ? &at.b : &at.c;
				int64_t lim = i == 1 ? at.m * at.k : i == 2 ? at.n * at.k : at.m * at.n;

				for (v = 0; v < M->nv[i]; v++) {
					if (cute_eval_idx(l, j + v * nthr, &x, C->e) < 0)
						return -1;
					if (x < 0 || x >= lim)
						return err_set(C->e, "mma: stage %s: %s: (thread %d, value %d) maps outside "
						               "its tile", p->name, at.name, j, v);
					M->crd[i][L][v] = (int16_t)x;
				}
			}
		}
		M->ngroup++;
	}
	return emit_ins(C, I_MMA, 0, 0, -1, -1, -1, -1, p->nmma++) < 0 ? -1 : 0;
}

/* An LDMATRIX: its buffers checked (kernel_ldmatrix_check), the lane's row address compiled. */
static int
cldsm(Comp *C, const UOp *s)
{
	Prog *p = C->p;
	const Kernel *k = C->k;
	const UOp *d = s->nsrc == 2 ? s->src[0] : NULL, *ix = s->nsrc == 2 ? s->src[1] : NULL;
	LdsmProg *L;
	int at, a, src, v;
	char m[sizeof C->e->msg];

	if (!d || d->op != OP_DEFINE || d->arg[0] < 0 || d->arg[0] >= k->nbuf || k->buf[d->arg[0]].def != d
	|| ix->op != OP_INDEX)
		return err_set(C->e, "ldmatrix: stage %s: an ldmatrix without a register buffer and a row address",
		               p->name);
	if ((src = index_buf(C, ix)) < 0)
		return -1;
	if (kernel_ldmatrix_check(k, (int)d->arg[0], src, (int)s->arg[0], C->e) < 0) {
		snprintf(m, sizeof m, "%s", C->e->msg + 10);
		return err_set(C->e, "ldmatrix: stage %s: %s", p->name, m);
	}
	if (grow((void **)&p->ldsm, &p->capldsm, p->nldsm + 1, sizeof *p->ldsm) < 0)
		return oom(C);
	L = &p->ldsm[p->nldsm];
	L->dst = (int)d->arg[0];
	L->src = src;
	L->n = (int)s->arg[0];
	L->trans = s->arg[1] != 0;
	for (v = 0; v < 2 * L->n; v++)
		if (reg_offset(C, L->dst, v, &L->off[v]) < 0)
			return -1;
	map_clear(&C->memo);
	if ((at = cexpr(C, ix, 0)) == -1 || (a = aux_new(C, src, ix, 0)) < 0)
		return -1;
	return emit_ins(C, I_LDSM, 0, 0, -1, at, p->nldsm++, a, src) < 0 ? -1 : 0;
}

/* A WGMMA: its buffers checked (kernel_wgmma_check), the tiles' start coordinates compiled. */
static int
cwgmma(Comp *C, const UOp *s)
{
	Prog *p = C->p;
	const Kernel *k = C->k;
	WgmmaProg *W;
	int i, j, v;
	char m[sizeof C->e->msg];

	if (kernel_wgmma_check(k, s, NULL, NULL, C->e) < 0) {
		snprintf(m, sizeof m, "%s", strncmp(C->e->msg, "wgmma: ", 7) ? C->e->msg : C->e->msg + 7);
		return err_set(C->e, "wgmma: stage %s: %s", p->name, m);
	}
	if (grow((void **)&p->wgmma, &p->capwgmma, p->nwgmma + 1, sizeof *p->wgmma) < 0)
		return oom(C);
	W = &p->wgmma[p->nwgmma];
	memset(W, 0, sizeof *W);
	W->d = (int)s->src[0]->arg[0];
	W->a = (int)s->src[1]->src[0]->arg[0];
	W->b = (int)s->src[2]->src[0]->arg[0];
	W->n = (int)s->arg[0];
	W->nk = (s->arg[1] & KWG_B_NK) != 0;
	W->areg = k->buf[W->a].scope == AS_REG;
	W->zero = (s->arg[1] & KWG_ZERO) != 0;
	for (v = 0; v < W->n / 2; v++)
		if (reg_offset(C, W->d, v, &W->off[v]) < 0)
			return -1;
	map_clear(&C->memo);
	for (i = 1; i <= 2; i++)
		for (j = 1; j < s->src[i]->nsrc; j++)
			if (cexpr(C, s->src[i]->src[j], 0) == -1)
				return -1;
	if ((W->auxa = aux_new(C, W->a, s->src[1], 0)) < 0 || (W->auxb = aux_new(C, W->b, s->src[2], 0)) < 0)
		return -1;
	return emit_ins(C, I_WGMMA, 0, 0, -1, -1, -1, -1, p->nwgmma++) < 0 ? -1 : 0;
}

/* A CP_ASYNC: both offsets compiled, an access record for each side. */
static int
ccpa(Comp *C, const UOp *s)
{
	Prog *p = C->p;
	const UOp *dx = s->nsrc == 2 ? s->src[0] : NULL, *sx = s->nsrc == 2 ? s->src[1] : NULL;
	int db, sb, ad, as, od, os;
	char m[sizeof C->e->msg];

	if (!dx || dx->op != OP_INDEX || sx->op != OP_INDEX)
		return err_set(C->e, "cp_async: stage %s: a cp_async without a destination and a source element",
		               p->name);
	if ((db = index_buf(C, dx)) < 0 || (sb = index_buf(C, sx)) < 0)
		return -1;
	if (kernel_cp_async_check(C->k, db, sb, (int)s->arg[0], C->e) < 0) {
		snprintf(m, sizeof m, "%s", C->e->msg + 10);
		return err_set(C->e, "cp_async: stage %s: %s", p->name, m);
	}
	map_clear(&C->memo);
	if ((od = cexpr(C, dx, 0)) == -1 || (os = cexpr(C, sx, 0)) == -1
	|| (ad = aux_new(C, db, dx, 1)) < 0 || (as = aux_new(C, sb, sx, 0)) < 0)
		return -1;
	return emit_ins(C, I_CPA, 0, 0, od, os, ad, as, s->arg[0]) < 0 ? -1 : 0;
}

/* An mbarrier statement: the barrier's offset and access record. */
static int
cmbar(Comp *C, const UOp *s)
{
	Prog *p = C->p;
	const UOp *bx = s->nsrc >= 1 ? s->src[0] : NULL;
	int bb, ab, ob, op, par = -1;
	char m[sizeof C->e->msg];

	if (!bx || bx->op != OP_INDEX)
		return err_set(C->e, "mbarrier: stage %s: an %s without a barrier element", p->name, uop_info[s->op].name);
	if ((bb = index_buf(C, bx)) < 0)
		return -1;
	if (kernel_mbar_check(C->k, bb, uop_info[s->op].name, C->e) < 0) {
		snprintf(m, sizeof m, "%s", C->e->msg);
		return err_set(C->e, "mbarrier: stage %s: %s", p->name, m);
	}
	map_clear(&C->memo);
	if ((ob = cexpr(C, bx, 0)) == -1 || (ab = aux_new(C, bb, bx, s->op == OP_MBAR_INIT)) < 0)
		return -1;
	if (s->op == OP_MBAR_WAIT && (s->nsrc != 2 || (par = cexpr(C, s->src[1], 0)) == -1))
		return s->nsrc != 2 ? err_set(C->e, "mbarrier: stage %s: a wait without a parity", p->name) : -1;
	op = s->op == OP_MBAR_INIT ? I_MBI : s->op == OP_MBAR_ARRIVE ? I_MBA : I_MBW;
	p->nmbw += op == I_MBW;
	return emit_ins(C, op, 0, 0, ob, par, -1, ab, s->op == OP_MBAR_WAIT ? 0 : s->arg[0]) < 0 ? -1 : 0;
}

/* A TMA_LOAD: the box's first shared element, its first global element (whose
** indices are the coordinates), the barrier. */
static int
ctma(Comp *C, const UOp *s)
{
	Prog *p = C->p;
	TmaProg *T;
	int od, ob, as, ad, ab, d;
	int64_t dims[5], st[5];
	char m[sizeof C->e->msg];

	if (kernel_tma_check(C->k, s, C->e) < 0 || kernel_tma_map(C->k, (int)s->src[1]->src[0]->arg[0], dims, st, C->e) < 0) {
		snprintf(m, sizeof m, "%s", C->e->msg);
		return err_set(C->e, "tma: stage %s: %s", p->name, m);
	}
	if (grow((void **)&p->tma, &p->captma, p->ntma + 1, sizeof *p->tma) < 0)
		return oom(C);
	T = &p->tma[p->ntma];
	memset(T, 0, sizeof *T);
	if ((T->dst = index_buf(C, s->src[0])) < 0 || (T->src = index_buf(C, s->src[1])) < 0
	|| (T->bar = index_buf(C, s->src[2])) < 0)
		return -1;
	T->rank = C->k->buf[T->src].ndim;
	T->swizzle = (int)s->arg[0];
	T->bytes = kernel_tma_bytes(C->k, s);
	for (d = 0; d < T->rank; d++) {
		T->box[d] = ((const int64_t *)s->data)[d];
		T->stride[d] = st[T->rank - 1 - d] / dtype_bytes(C->k->buf[T->src].dtype);
	}
	map_clear(&C->memo);
	if ((od = cexpr(C, s->src[0], 0)) == -1 || (ob = cexpr(C, s->src[2], 0)) == -1 || cexpr(C, s->src[1], 0) == -1
	|| (ad = aux_new(C, T->dst, s->src[0], 1)) < 0 || (ab = aux_new(C, T->bar, s->src[2], 0)) < 0
	|| (as = aux_new(C, T->src, s->src[1], 0)) < 0)
		return -1;
	T = &p->tma[p->ntma];
	T->adst = ad;
	T->abar = ab;
	p->nmbw++;
	return emit_ins(C, I_TMA, 0, 0, od, ob, -1, as, p->ntma++) < 0 ? -1 : 0;
}

/*
** An ATOMIC: I_ATOM (d the old value's slot, a the offset, b the value, c
** the access record, imm the buffer, w the KAtomicOp), then the old value
** stored to its register element as an ordinary I_STORE.
*/
static int
catomic(Comp *C, const UOp *s)
{
	Prog *p = C->p;
	int at, v, a, b, o = -1, r, oat = -1, oa = -1;
	Err ie;

	if (s->nsrc < 2 || s->nsrc > 3 || s->src[0]->op != OP_INDEX || (s->nsrc == 3 && s->src[2]->op != OP_INDEX))
		return err_set(C->e, "kernel.run: stage %s: an atomic that is not (element, value [, old element])",
		               p->name);
	map_clear(&C->memo);
	if ((at = cexpr(C, s->src[0], 0)) == -1 || (v = cexpr(C, s->src[1], 0)) == -1
	|| (s->nsrc == 3 && (oat = cexpr(C, s->src[2], 0)) == -1))
		return -1;
	if ((b = index_buf(C, s->src[0])) < 0 || (s->nsrc == 3 && (o = index_buf(C, s->src[2])) < 0))
		return -1;
	if (kernel_atomic_check(C->k, (int)s->arg[0], b, (DType)s->src[1]->dtype, o, &ie) < 0)
		return err_set(C->e, "kernel.run: stage %s: %s", p->name, ie.msg);
	if ((a = aux_new(C, b, s->src[0], 1)) < 0 || (o >= 0 && (oa = aux_new(C, o, s->src[2], 1)) < 0))
		return -1;
	if ((r = newslot(C)) < 0 || emit_ins(C, I_ATOM, C->k->buf[b].dtype, (int)s->arg[0], r, at, v, a, b) < 0)
		return -1;
	if (o >= 0 && emit_ins(C, I_STORE, C->k->buf[o].dtype, isf(C->k->buf[o].dtype), r, oat, -1, oa, o) < 0)
		return -1;
	return 0;
}

static int
cstmt(Comp *C, const UOp *s, int depth)
{
	Prog *p = C->p;
	int mark = p->nslot, a, v, g = -1, at, slot, i;

	if (depth > KR_MAXNEST)
		return err_set(C->e, "kernel.run: stage %s: statements nest deeper than %d", p->name, KR_MAXNEST);
	switch (s->op) {
	case OP_STORE:
		if (s->nsrc < 2 || s->nsrc > 3 || s->src[0]->op != OP_INDEX)
			return err_set(C->e, "kernel.run: stage %s: a store to something that is not an index",
			               p->name);
		map_clear(&C->memo);
		if ((at = cexpr(C, s->src[0], 0)) == -1 || (v = cexpr(C, s->src[1], 0)) == -1)
			return -1;
		if (s->nsrc == 3 && (g = gate_slot(C, s->src[2])) == -1)
			return -1;
		if ((i = index_buf(C, s->src[0])) < 0 || (a = aux_new(C, i, s->src[0], 1)) < 0)
			return -1;
		if (emit_ins(C, I_STORE, C->k->buf[i].dtype, isf(s->src[1]->dtype), v, at, g, a, i) < 0)
			return -1;
		p->nslot = mark;
		return 0;
	case OP_BARRIER:
		return emit_ins(C, I_BAR, 0, 0, -1, -1, -1, -1, p->nbar++) < 0 ? -1 : 0;
	case OP_MMA:
		return cmma(C, s);
	case OP_LDMATRIX:
	case OP_CP_ASYNC:
	case OP_WGMMA:
	case OP_MBAR_INIT:
	case OP_MBAR_ARRIVE:
	case OP_MBAR_WAIT:
	case OP_TMA_LOAD:
		/* statements with their own tables (the slots their indices took are free after) */
		if ((s->op == OP_LDMATRIX ? cldsm(C, s) : s->op == OP_CP_ASYNC ? ccpa(C, s) : s->op == OP_WGMMA ? cwgmma(C, s)
		     : s->op == OP_TMA_LOAD ? ctma(C, s) : cmbar(C, s)) < 0)
			return -1;
		p->nslot = mark;
		return 0;
	case OP_ATOMIC:
		if (catomic(C, s) < 0)
			return -1;
		p->nslot = mark;
		return 0;
	case OP_FENCE:
		return emit_ins(C, I_FENCE, 0, 0, -1, -1, -1, -1, s->arg[0]) < 0 ? -1 : 0;
	case OP_CP_COMMIT:
		return emit_ins(C, I_CPC, 0, 0, -1, -1, -1, -1, 0) < 0 ? -1 : 0;
	case OP_WG_FENCE:
		return emit_ins(C, I_WGF, 0, 0, -1, -1, -1, -1, 0) < 0 ? -1 : 0;
	case OP_WG_COMMIT:
		return emit_ins(C, I_WGC, 0, 0, -1, -1, -1, -1, 0) < 0 ? -1 : 0;
	case OP_SETMAXNREG:
		return 0;   /* a register budget: nothing to run */
	case OP_WG_WAIT:
		if (s->arg[0] < 0 || s->arg[0] > 7)
			return err_set(C->e, "wgmma_wait: stage %s: %lld groups (0 to 7)", p->name, (long long)s->arg[0]);
		return emit_ins(C, I_WGW, 0, 0, -1, -1, -1, -1, s->arg[0]) < 0 ? -1 : 0;
	case OP_CP_WAIT:
		return emit_ins(C, I_CPW, 0, 0, -1, -1, -1, -1, s->arg[0]) < 0 ? -1 : 0;
	case OP_IF:
		if (s->nsrc < 1)
			return err_set(C->e, "kernel.run: stage %s: an if without a condition", p->name);
		map_clear(&C->memo);
		if ((g = gate_slot(C, s->src[0])) == -1 || (at = emit_ins(C, I_JZ, 0, 0, -1, g, -1, -1, 0)) < 0)
			return -1;
		p->nslot = mark;
		if (cstmts(C, s->src + 1, s->nsrc - 1, depth + 1) < 0)
			return -1;
		p->code[at].b = p->n;
		return 0;
	case OP_END: {
		const UOp *rg = s->nsrc ? s->src[0] : NULL, *var;
		int hw;
		int64_t ext;

		if (!rg || rg->op != OP_RANGE || rg->nsrc != 1 || rg->src[0]->op != OP_VAR)
			return err_set(C->e, "kernel.run: stage %s: a loop without a range", p->name);
		var = krange_var(rg);
		ext = krange_extent(rg);
		hw = krange_hw(rg);
		if (var->arg[0] != 0 || ext < 1)
			return err_set(C->e, "kernel.run: stage %s: loop %s over [%lld, %lld] does not start at 0",
			               p->name, var->name, (long long)var->arg[0], (long long)var->arg[1]);
		for (i = 0; i < C->nsc; i++)
			if (C->sc[i].var == var)
				return err_set(C->e, "kernel.run: stage %s: nested loops share the variable %s",
				               p->name, var->name);
		if (hw < 0 || hw >= HW_COUNT)
			return err_set(C->e, "kernel.run: stage %s: loop %s is bound to an unknown axis",
			               p->name, var->name);
		if ((slot = newslot(C)) < 0
		|| grow((void **)&C->sc, &C->capsc, C->nsc + 1, sizeof *C->sc) < 0)
			return slot < 0 ? -1 : oom(C);
		C->sc[C->nsc].var = var;
		C->sc[C->nsc++].slot = slot;
		if (hw != HW_NONE) {
			/* a binding, not a loop: this block's or thread's coordinate, guarded */
			dims(p, hw, ext);
			if (emit_ins(C, I_HW, DT_INDEX, 0, slot, -1, -1, -1, hw) < 0
			|| (at = emit_ins(C, I_GUARD, 0, 0, -1, slot, -1, -1, ext)) < 0
			|| cstmts(C, s->src + 1, s->nsrc - 1, depth + 1) < 0)
				return -1;
			p->code[at].b = p->n;
		} else {
			if (emit_ins(C, I_SET0, DT_INDEX, 0, slot, -1, -1, -1, 0) < 0)
				return -1;
			at = p->n;
			if (cstmts(C, s->src + 1, s->nsrc - 1, depth + 1) < 0
			|| emit_ins(C, I_LOOP, 0, 0, -1, slot, at, -1, ext) < 0)
				return -1;
		}
		C->nsc--;
		p->nslot = mark;
		return 0;
	}
	default:
		return err_set(C->e, "kernel.run: stage %s: %s is not a statement (store, loop, if, barrier, mma, "
		               "ldmatrix, cp_async, cp_commit, cp_wait, wgmma, wg_fence, wg_commit, wg_wait, mbar_init, "
		               "mbar_arrive, mbar_wait, tma_load)",
		               p->name, uop_info[s->op].name);
	}
}

static int
cstmts(Comp *C, UOp *const *s, int n, int depth)
{
	int i;

	for (i = 0; i < n; i++)
		if (cstmt(C, s[i], depth) < 0)
			return -1;
	return 0;
}

/* Constants go after the stack slots: patch their codes now that its size is known. */
static void
patch_consts(Prog *p)
{
	int i;

#define FIX(x) do { if ((x) < -1) (x) = p->nstack + (-(x) - 2); } while (0)
	for (i = 0; i < p->n; i++) {
		FIX(p->code[i].d);
		FIX(p->code[i].a);
		if (p->code[i].op != I_JZ && p->code[i].op != I_LOOP && p->code[i].op != I_GUARD
		&& p->code[i].op != I_CPA)
			FIX(p->code[i].b);
		if (p->code[i].op != I_LOAD && p->code[i].op != I_STORE && p->code[i].op != I_ATOM && p->code[i].op != I_XDIV
		&& p->code[i].op != I_XMOD && p->code[i].op != I_LDSM && p->code[i].op != I_CPA
		&& p->code[i].op != I_MBI && p->code[i].op != I_MBA && p->code[i].op != I_MBW && p->code[i].op != I_TMA)
			FIX(p->code[i].c);
	}
	for (i = 0; i < p->naux; i++) {
		int k;

		for (k = 0; k < p->aux[i].ndim; k++)
			FIX(p->aux[i].idx[k]);
	}
	for (i = 0; i < p->nl; i++)
		FIX(p->lslot[i]);
	FIX(p->res);
#undef FIX
}

static void
prog_free(Prog *p)
{
	free(p->code);
	free(p->cval);
	free(p->aux);
	free(p->lvar);
	free(p->lslot);
	free(p->mma);
	free(p->ldsm);
	free(p->wgmma);
	free(p->tma);
	memset(p, 0, sizeof *p);
}

static void
comp_free(Comp *C)
{
	map_free(&C->memo);
	map_free(&C->lmemo);
	map_free(&C->cmap);
	free(C->sc);
}

static int
compile_stage(const Kernel *k, const KStage *st, Prog *p, Err *e)
{
	Comp C;
	int rc;

	memset(&C, 0, sizeof C);
	memset(p, 0, sizeof *p);
	C.k = k;
	C.p = p;
	C.e = e;
	p->name = st->name;
	p->res = -1;
	p->grid[0] = p->grid[1] = p->grid[2] = 1;
	p->blk[0] = p->blk[1] = p->blk[2] = 1;
	rc = st->body ? cstmt(&C, st->body, 0) : err_set(e, "kernel.run: stage %s has no body", st->name);
	if (rc == 0 && emit_ins(&C, I_EXIT, 0, 0, -1, -1, -1, -1, 0) < 0)
		rc = -1;
	comp_free(&C);
	if (rc == 0)
		patch_consts(p);
	return rc;
}

/* A buffer's layout as a program: slots 0..ndim-1 hold the coordinates. */
static int
compile_layout(const Kernel *k, int b, Prog *p, Err *e)
{
	const KBuf *kb = &k->buf[b];
	Comp C;
	int i, rc = 0;

	memset(&C, 0, sizeof C);
	memset(p, 0, sizeof *p);
	C.k = k;
	C.p = p;
	C.e = e;
	p->name = kb->name;
	for (i = 0; i < kb->ndim; i++) {
		C.ov[i] = kb->lvar[i];
		C.ovs[i] = newslot(&C);
	}
	C.nov = kb->ndim;
	if ((p->res = cexpr(&C, kb->layout, 1)) == -1
	|| emit_ins(&C, I_EXIT, 0, 0, -1, -1, -1, -1, 0) < 0)
		rc = -1;
	comp_free(&C);
	if (rc == 0)
		patch_consts(p);
	return rc;
}

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

static int
charge(Run *r, uint64_t bytes, const char *what)
{
	if (bytes > r->limit || r->used > r->limit - bytes)
		return err_set(r->e, "tensor_bytes limit: %s needs %llu more bytes, past the limit of %llu "
		               "bytes (raise it with tessel.limits{tensor_bytes = N}, or KRunOpts.mem_limit)",
		               what, (unsigned long long)bytes, (unsigned long long)r->limit);
	r->used += bytes;
	return 0;
}

static void *
rmalloc(Run *r, uint64_t bytes, int zero, const char *what)
{
	void *p;

	if (charge(r, bytes, what) < 0)
		return NULL;
	p = zero ? calloc(1, bytes ? bytes : 1) : malloc(bytes ? bytes : 1);
	if (!p)
		err_set(r->e, "kernel.run: out of memory (%llu bytes for %s)", (unsigned long long)bytes, what);
	return p;
}

static double
fround(int t, double x)
{
	switch (t) {
	case DT_FLOAT32: return (float)x;
	case DT_FLOAT16: return dtype_from_half(dtype_to_half(x));
	case DT_BFLOAT16: return dtype_from_bf16(dtype_to_bf16(x));
	default: return x;
	}
}

static void
coords(int64_t lin, const int64_t *d, int64_t *c)
{
	c[0] = lin % d[0];
	c[1] = lin / d[0] % d[1];
	c[2] = lin / (d[0] * d[1]);
}

/* "stage s, block (x,y,z), thread (x,y,z), loops i=1, j=2" */
static void
where(const Run *r, const Thr *th, const Ins *in, char *out, size_t n)
{
	const Prog *P = r->P;
	size_t at;
	int i;

	if (!P || !th) {
		snprintf(out, n, "placing a buffer through its layout");
		return;
	}
	at = snprintf(out, n, "stage %s, block (%lld,%lld,%lld), thread (%lld,%lld,%lld)", P->name,
	              (long long)r->bc[0], (long long)r->bc[1], (long long)r->bc[2],
	              (long long)th->tc[0], (long long)th->tc[1], (long long)th->tc[2]);
	if (in && (in->op == I_LOAD || in->op == I_STORE || in->op == I_ATOM || in->op == I_XDIV || in->op == I_XMOD
	|| in->op == I_LDSM)) {
		const MemAux *a = &P->aux[in->c];

		for (i = 0; i < a->nloop && at < n; i++)
			at += snprintf(out + at, n - at, "%s%s=%lld", i ? ", " : ", loops ",
			               P->lvar[a->loop0 + i]->name, (long long)th->v[P->lslot[a->loop0 + i]].i);
	}
}

/* "name[i, j]" of the element an access names */
static void
element(const Run *r, const Thr *th, const Ins *in, char *out, size_t n)
{
	const MemAux *a = &r->P->aux[in->c];
	size_t at = snprintf(out, n, "%s[", r->k->buf[a->buf].name);
	int i;

	for (i = 0; i < a->ndim && at < n; i++)
		at += snprintf(out + at, n - at, "%s%lld", i ? ", " : "", (long long)th->v[a->idx[i]].i);
	if (at < n)
		snprintf(out + at, n - at, "]");
}

static int
fail_oob(Run *r, Thr *th, const Ins *in, int64_t off, int dim)
{
	const RBuf *B = &r->rb[in->imm];
	const KBuf *kb = &r->k->buf[in->imm];
	char w[256], el[160];

	where(r, th, in, w, sizeof w);
	element(r, th, in, el, sizeof el);
	if (dim >= 0)
		return err_set(r->e, "out of bounds: %s: %s %s (physical offset %lld): coordinate %d is "
		               "outside [0, %lld)", w, in->op == I_ATOM ? "atomic" : in->op == I_STORE ? "store" : "load",
		               el, (long long)off,
		               dim, (long long)kb->shape[dim]);
	return err_set(r->e, "out of bounds: %s: %s %s: physical offset %lld is outside the storage "
	               "[0, %lld)", w, in->op == I_ATOM ? "atomic" : in->op == I_STORE ? "store" : "load", el,
	               (long long)off,
	               (long long)B->size);
}

static int
conflict(const Acc *p, const Acc *c)
{
	return p->launch == c->launch && p->launch != 0
	&& (p->block != c->block || (p->phase == c->phase && p->thread != c->thread));
}

/* Whether the current thread's acquires order access p before it (kernel.h). */
static int
covered(const Run *r, const Thr *th, const Acc *p)
{
	int i;

	for (i = 0; i < r->nacq; i++) {
		const Acq *q = &r->acq[i];

		if (q->block != p->block || (q->ua != (uint32_t)th->tid && r->phase <= q->qa))
			continue;
		if (p->phase < q->phase
		|| (p->phase == q->phase && p->thread == q->thread && (p->fc & ~ATOMIC_BIT) < q->fc))
			return 1;
	}
	return 0;
}

/* p and c conflict, and neither both are atomics nor an acquire orders them */
static int
racing(const Run *r, const Thr *th, const Acc *p, const Acc *c)
{
	return conflict(p, c) && !(p->fc & c->fc & ATOMIC_BIT) && !(r->nacq && covered(r, th, p));
}

static const char *
acc_verb(const Ins *in)
{
	return in->op == I_ATOM ? "atomically updates" : in->op == I_STORE ? "writes" : "reads";
}

static int
fail_race(Run *r, Thr *th, const Ins *in, int64_t off, const Acc *p, int pwrite)
{
	const RBuf *B = &r->rb[in->imm];
	char w[256], el[160];
	int64_t pt[3], pb[3];

	where(r, th, in, w, sizeof w);
	element(r, th, in, el, sizeof el);
	coords(p->thread, r->blk, pt);
	coords(p->block, r->grid, pb);
	return err_set(r->e, "race: %s: %s %s (offset %lld, %s memory) while thread (%lld,%lld,%lld) "
	               "of block (%lld,%lld,%lld) %s it %s", w, acc_verb(in),
	               el, (long long)off, B->scope == AS_LOCAL ? "shared" : "global",
	               (long long)pt[0], (long long)pt[1], (long long)pt[2],
	               (long long)pb[0], (long long)pb[1], (long long)pb[2],
	               p->fc & ATOMIC_BIT ? "atomically updated" : pwrite ? "wrote" : "read",
	               p->block != r->blin ? "in the same launch (blocks run concurrently; no fence and atomic "
	               "order the two)" : "in the same phase (no barrier between)");
}

static int
fail_uninit(Run *r, Thr *th, const Ins *in, int64_t off)
{
	char w[256], el[160];

	where(r, th, in, w, sizeof w);
	element(r, th, in, el, sizeof el);
	return err_set(r->e, "uninitialized: %s: %s of %s (offset %lld), which nothing wrote%s", w,
	               in->op == I_ATOM ? "atomic" : "load", el,
	               (long long)off, r->rb[in->imm].scope == AS_LOCAL ? " in this block"
	               : r->rb[in->imm].scope == AS_REG ? " in this thread" : "");
}

static int
fail_inflight(Run *r, Thr *th, const Ins *in, int64_t off, uint32_t by)
{
	char w[256], el[160];
	int64_t pt[3];

	where(r, th, in, w, sizeof w);
	element(r, th, in, el, sizeof el);
	coords((by & ~TMA_BIT) - 1, r->blk, pt);
	if (by & TMA_BIT)
		return err_set(r->e, "tma: %s: %s %s (offset %lld, shared memory) while its TMA is in flight (issued "
		               "by thread (%lld,%lld,%lld)); wait on the mbarrier first", w,
		               in->op == I_STORE ? "writes" : "reads", el, (long long)off, (long long)pt[0],
		               (long long)pt[1], (long long)pt[2]);
	return err_set(r->e, "cp_async: %s: %s %s (offset %lld, shared memory) while a cp.async into it is in "
	               "flight (issued by thread (%lld,%lld,%lld), not yet retired by its cp_async_wait)", w,
	               in->op == I_STORE ? "writes" : "reads", el, (long long)off, (long long)pt[0],
	               (long long)pt[1], (long long)pt[2]);
}

static int
fail_wg_inflight(Run *r, Thr *th, const Ins *in, int64_t off)
{
	char w[256], el[160];

	where(r, th, in, w, sizeof w);
	element(r, th, in, el, sizeof el);
	return err_set(r->e, "wgmma: %s: %s %s (register offset %lld) while a wgmma that uses it is in flight; "
	               "kernel.wgmma_commit() and kernel.wgmma_wait(n) first", w, in->op == I_STORE ? "writes" : "reads",
	               el, (long long)off);
}

/* "bar[1]": mbarrier id's buffer and element */
static void
mbar_name(const Run *r, int id, char *out, size_t n)
{
	int b;

	for (b = r->k->nbuf - 1; b >= 0; b--)
		if (r->rb[b].mb && id >= r->rb[b].mbase) {
			snprintf(out, n, "%s[%d]", r->k->buf[b].name, id - r->rb[b].mbase);
			return;
		}
	snprintf(out, n, "mbarrier %d", id);
}

static int
fail_unwaited(Run *r, Thr *th, const Ins *in, int64_t off, const Shadow *s)
{
	char w[256], el[160], bn[80];

	where(r, th, in, w, sizeof w);
	element(r, th, in, el, sizeof el);
	mbar_name(r, (int)s->mbar - 1, bn, sizeof bn);
	return err_set(r->e, "race: %s: %s %s (offset %lld, shared memory), which a TMA landed at completion %u of "
	               "mbarrier %s, and this thread has not waited on it (it has seen %u completions): wait on the "
	               "mbarrier first", w, in->op == I_STORE ? "writes" : "reads", el, (long long)off,
	               (unsigned)s->mphase, bn, (unsigned)th->obs[s->mbar - 1]);
}

/*
** An atomic's checks past bounds and copies in flight: races with plain
** accesses (racing() lets atomics pass each other), then the record. The
** element's writer becomes the atomic; an atomic writer before it from
** another thread moves to the readers, so that a plain access after
** several blocks' atomics meets more than the last of them. A global
** temporary starts at zero, so an atomic may be its first access.
*/
static int
check_atomic(Run *r, Thr *th, const Ins *in, int64_t off, Shadow *s, const Acc *cur)
{
	const MemAux *a = &r->P->aux[in->c];
	const KBuf *kb = &r->k->buf[a->buf];
	int i;

	if (racing(r, th, &s->w, cur))
		return fail_race(r, th, in, off, &s->w, 1);
	for (i = 0; i < 2; i++)
		if (racing(r, th, &s->r[i], cur))
			return fail_race(r, th, in, off, &s->r[i], 0);
	if (!s->init && !(kb->role == KB_TEMP && kb->scope == AS_GLOBAL) && !r->pending) {
		fail_uninit(r, th, in, off);
		memcpy(r->pend, r->e->msg, sizeof r->pend);
		r->pending = r->rb[a->buf].scope;
	}
	if ((s->w.fc & ATOMIC_BIT) && s->w.launch == cur->launch
	&& (s->w.block != cur->block || s->w.thread != cur->thread)) {
		s->r[1] = s->r[0];
		s->r[0] = s->w;
	}
	s->w = *cur;
	s->init = 1;
	s->mbar = 0;
	return 0;
}

/* Keep the two most recent distinct readers. A wgmma of the same thread that
** still reads the element stays in flight. */
static void
note_read(Shadow *s, const Acc *cur)
{
	int i;

	for (i = 0; i < 2; i++)
		if (s->r[i].thread == cur->thread && s->r[i].block == cur->block) {
			uint32_t ev = s->r[i].ev == WG_READING && s->r[i].launch == cur->launch ? WG_READING : cur->ev;

			s->r[i] = *cur;
			s->r[i].ev = ev;
			return;
		}
	s->r[1] = s->r[0];
	s->r[0] = *cur;
}

/* A wgmma in flight that reads element s of this launch and block: its reader slot, or NULL. */
static const Acc *
wg_reading(const Run *r, const Shadow *s)
{
	int i;

	for (i = 0; i < 2; i++)
		if (s->r[i].ev == WG_READING && s->r[i].launch == r->launch && s->r[i].block == r->blin)
			return &s->r[i];
	return NULL;
}

static int
fail_wg_reading(Run *r, Thr *th, const Ins *in, int64_t off, const Acc *p, const char *who)
{
	char w[256], el[160];
	int64_t pt[3];

	where(r, th, in, w, sizeof w);
	element(r, th, in, el, sizeof el);
	coords(p->thread, r->blk, pt);
	return err_set(r->e, "wgmma: %s: %s %s (offset %lld, shared memory) while a wgmma of thread "
	               "(%lld,%lld,%lld)'s warpgroup reads it: a wgmma reads its shared tiles until the "
	               "kernel.wgmma_wait that retires it, and neither a barrier nor an mbarrier arrival "
	               "before that wait orders the read", w, who, el, (long long)off, (long long)pt[0],
	               (long long)pt[1], (long long)pt[2]);
}

/* The checks of one access (bounds, uninitialized, races); 0 when it may
** go on. write: 0 a read, 1 a write, 2 an atomic (both). */
static int
check(Run *r, Thr *th, const Ins *in, int64_t off, int write)
{
	const MemAux *a = &r->P->aux[in->c];
	const KBuf *kb = &r->k->buf[a->buf];
	RBuf *B = &r->rb[a->buf];
	Shadow *s;
	Acc cur;
	int i;

	for (i = 0; i < a->ndim; i++) {
		int64_t x = th->v[a->idx[i]].i;

		if (x < 0 || x >= kb->shape[i])
			return fail_oob(r, th, in, off, i);
	}
	if ((uint64_t)off >= (uint64_t)B->size)
		return fail_oob(r, th, in, off, -1);
	if (B->scope == AS_REG) {
		uint8_t *p = B->init + (int64_t)th->tid * B->size + off;

		if (B->wgd && th->wgs) {
			if (th->wgs[a->buf])
				return fail_wg_inflight(r, th, in, off);
			th->wgs[r->k->nbuf + a->buf] = 1;
		}

		if (write)
			*p = 1;
		else if (!*p)
			return fail_uninit(r, th, in, off);
		return 0;
	}
	s = &B->sh[off];
	if (s->async)
		return fail_inflight(r, th, in, off, s->async);
	/* data a TMA landed is ordered by its mbarrier phase, and only for threads that waited on it */
	if (s->mbar && th->obs[s->mbar - 1] < s->mphase)
		return fail_unwaited(r, th, in, off, s);
	cur.launch = r->launch;
	cur.block = r->blin;
	cur.phase = r->phase;
	cur.thread = (uint32_t)th->tid;
	cur.ev = th->ev;
	cur.fc = th->fc | (write == 2 ? ATOMIC_BIT : 0);
	if (write && r->o->watch_buf == a->buf + 1 && off == r->o->watch_off && r->o->watch_msg)
		where(r, th, in, r->o->watch_msg, r->o->watch_len);
	if (write && B->scope == AS_LOCAL && wg_reading(r, s))
		return fail_wg_reading(r, th, in, off, wg_reading(r, s), acc_verb(in));
	if (write == 2)
		return check_atomic(r, th, in, off, s, &cur);
	if (write) {
		if (racing(r, th, &s->w, &cur))
			return fail_race(r, th, in, off, &s->w, 1);
		for (i = 0; i < 2; i++)
			if (racing(r, th, &s->r[i], &cur))
				return fail_race(r, th, in, off, &s->r[i], 0);
		s->w = cur;
		memset(s->r, 0, sizeof s->r);
		s->init = 1;
		s->mbar = 0;
		return 0;
	}
	if (!s->init) {
		if (!r->pending) {
			fail_uninit(r, th, in, off);
			memcpy(r->pend, r->e->msg, sizeof r->pend);
			r->pending = B->scope;
		}
	} else if (racing(r, th, &s->w, &cur))
		return fail_race(r, th, in, off, &s->w, 1);
	note_read(s, &cur);
	return 0;
}

/* ---- counts: warp-level requests ---- */

static void
count_group(Run *r, const LogE *g, size_t n)
{
	const MemAux *a = &r->P->aux[g[0].mem];
	const RBuf *B = &r->rb[a->buf];
	KCounts *c = r->cnt;
	size_t i;

	if (B->scope == AS_GLOBAL) {
		int64_t last = -1, sec;

		if (a->write)
			c->global_stores++;
		else
			c->global_loads++;
		for (i = 0; i < n; i++)
			if ((sec = g[i].addr >> 5) != last) {
				c->global_sectors++;
				last = sec;
			}
	} else if (B->scope == AS_LOCAL) {
		int bank[32] = { 0 }, worst = 0;
		int64_t last = -1, wd;

		if (a->write)
			c->shared_stores++;
		else
			c->shared_loads++;
		/* entries are sorted by address: words ascend, so distinct words are runs */
		for (i = 0; i < n; i++)
			for (wd = g[i].addr >> 2; wd <= (g[i].addr + B->bytes - 1) >> 2; wd++)
				if (wd != last) {
					if (++bank[wd % 32] > worst)
						worst = bank[wd % 32];
					last = wd;
				}
		c->shared_accesses += worst;
		c->bank_conflicts += worst - 1;
	}
}

static int
logcmp(const void *x, const void *y)
{
	const LogE *a = x, *b = y;

	if (a->mem != b->mem)
		return a->mem < b->mem ? -1 : 1;
	if (a->k != b->k)
		return a->k < b->k ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* The accesses of one warp in one phase, grouped into requests. */
static void
flush(Run *r)
{
	size_t i, j;

	if (!r->nlog)
		return;
	qsort(r->log, r->nlog, sizeof *r->log, logcmp);
	for (i = 0; i < r->nlog; i = j) {
		for (j = i + 1; j < r->nlog && r->log[j].mem == r->log[i].mem && r->log[j].k == r->log[i].k; j++)
			;
		count_group(r, r->log + i, j - i);
	}
	r->nlog = 0;
}

static int
log_access(Run *r, Thr *th, const Ins *in, int64_t off)
{
	const RBuf *B = &r->rb[in->imm];
	LogE e;

	e.mem = (uint32_t)in->c;
	e.k = th->kc[in->c]++;
	e.addr = off * B->bytes;
	if (B->scope == AS_REG)
		return 0;
	if (r->nthr == 1) {
		count_group(r, &e, 1);
		return 0;
	}
	if (r->nlog == r->caplog) {
		size_t nc = r->caplog ? 2 * r->caplog : 1024;
		LogE *nl;

		if (charge(r, (nc - r->caplog) * sizeof *nl, "the access log of the counts") < 0)
			return -1;
		if (!(nl = realloc(r->log, nc * sizeof *nl)))
			return err_set(r->e, "kernel.run: out of memory (access log)");
		r->log = nl;
		r->caplog = nc;
	}
	r->log[r->nlog++] = e;
	return 0;
}

/* ---- cp.async ---- */

/*
** A CP_ASYNC: the source is read now (checked as this thread's load), the
** destination is claimed (checked as its store, then marked in flight, so
** that any access before the landing is an error), and the bytes wait in
** the thread's list for the CP_WAIT that retires their group.
*/
static int
cp_issue(Run *r, Thr *th, const Ins *in, int64_t doff, int64_t soff)
{
	const MemAux *ad = &r->P->aux[in->b], *as = &r->P->aux[in->c];
	RBuf *D = &r->rb[ad->buf], *S = &r->rb[as->buf];
	Ins li = *in, si = *in;
	int n = (int)in->imm, j;
	Cpa *c;

	li.op = I_LOAD;
	li.imm = as->buf;
	si.op = I_STORE;
	si.imm = ad->buf;
	si.c = in->b;
	if (soff % n || doff % n) {
		char w[256];

		where(r, th, &li, w, sizeof w);
		return err_set(r->e, "cp_async: %s: the %s offset %lld is not a multiple of %d elements (%d bytes)",
		               w, soff % n ? "source" : "destination", (long long)(soff % n ? soff : doff), n, n * S->bytes);
	}
	for (j = 0; j < n; j++) {
		if (r->checks) {
			if (check(r, th, &li, soff + j, 0) < 0 || check(r, th, &si, doff + j, 1) < 0)
				return -1;
			D->sh[doff + j].async = (uint32_t)th->tid + 1;
		} else if ((uint64_t)(soff + j) >= (uint64_t)S->size)
			return fail_oob(r, th, &li, soff + j, -1);
		else if ((uint64_t)(doff + j) >= (uint64_t)D->size)
			return fail_oob(r, th, &si, doff + j, -1);
		/* the global side is one request of the whole run (aligned, so in one sector); the
		** shared side is counted by its elements, whose words decide the wavefronts */
		if (r->counting && ((j == 0 && log_access(r, th, &li, soff) < 0) || log_access(r, th, &si, doff + j) < 0))
			return -1;
	}
	if (r->cnt)
		r->cnt->cp_asyncs++;
	if (th->ncpa == th->capcpa) {
		int nc = th->capcpa ? 2 * th->capcpa : 16;
		Cpa *p;

		if (charge(r, (uint64_t)(nc - th->capcpa) * sizeof *p, "the copies in flight") < 0)
			return -1;
		if (!(p = realloc(th->cpa, (size_t)nc * sizeof *p)))
			return err_set(r->e, "kernel.run: out of memory (copies in flight)");
		th->cpa = p;
		th->capcpa = nc;
	}
	c = &th->cpa[th->ncpa++];
	c->dst = ad->buf;
	c->n = n;
	c->off = doff;
	c->group = th->ncommit;
	memcpy(c->data, S->p + soff * S->bytes, (size_t)n * S->bytes);
	return 0;
}

/* CP_WAIT n: the copies of every committed group but the n most recent land,
** each a store of this thread in this phase. */
static void
cp_wait(Run *r, Thr *th, int64_t n)
{
	int i, j, kept = 0;

	for (i = 0; i < th->ncpa; i++) {
		Cpa *c = &th->cpa[i];
		RBuf *D = &r->rb[c->dst];

		if ((int64_t)c->group + n >= (int64_t)th->ncommit) {
			th->cpa[kept++] = *c;
			continue;
		}
		memcpy(D->p + c->off * D->bytes, c->data, (size_t)c->n * D->bytes);
		if (D->sh)
			for (j = 0; j < c->n; j++) {
				Shadow *s = &D->sh[c->off + j];

				s->async = 0;
				s->w.launch = r->launch;
				s->w.block = r->blin;
				s->w.phase = r->phase;
				s->w.thread = (uint32_t)th->tid;
				memset(s->r, 0, sizeof s->r);
				s->init = 1;
			}
	}
	th->ncpa = kept;
}

static int
fail_cp_end(Run *r, Thr *th)
{
	return err_set(r->e, "cp_async: stage %s, block (%lld,%lld,%lld), thread (%lld,%lld,%lld) ends with %d "
	               "cp.async in flight (the oldest into %s at offset %lld), which no cp_async_wait retired: "
	               "commit them and wait (cp_async_wait(0)) before the end", r->P->name, (long long)r->bc[0],
	               (long long)r->bc[1], (long long)r->bc[2], (long long)th->tc[0], (long long)th->tc[1],
	               (long long)th->tc[2], th->ncpa, r->k->buf[th->cpa[0].dst].name, (long long)th->cpa[0].off);
}

/* ---- wgmma: the thread's side ---- */

/* WG_WAIT n: the wgmmas of every committed group but the n most recent retire,
** and the shared elements this thread's slot records them reading are read
** until now. */
static void
wg_wait(Run *r, Thr *th, int64_t n)
{
	int64_t j, keptr = 0;
	int i, kept = 0;

	for (j = 0; j < r->nwgr; j++) {
		const struct WgRd *g = &r->wgr[j];
		Shadow *s;

		if (g->tid != th->tid || (int64_t)g->group + n >= (int64_t)th->wgcommit) {
			r->wgr[keptr++] = *g;
			continue;
		}
		s = &r->rb[g->buf].sh[g->off];
		for (i = 0; i < 2; i++)
			if (s->r[i].thread == (uint32_t)th->tid && s->r[i].ev == WG_READING && s->r[i].block == r->blin)
				s->r[i].ev = th->ev;
	}
	r->nwgr = keptr;

	for (i = 0; i < th->nwg; i++) {
		if ((int64_t)th->wg[i].group + n >= (int64_t)th->wgcommit) {
			th->wg[kept++] = th->wg[i];
			continue;
		}
		th->wgs[th->wg[i].d]--;
		if (th->wg[i].a >= 0)
			th->wgs[th->wg[i].a]--;
	}
	th->nwg = kept;
}

static int
fail_wg_end(Run *r, Thr *th)
{
	return err_set(r->e, "wgmma: stage %s, block (%lld,%lld,%lld), thread (%lld,%lld,%lld) ends with %d wgmma in "
	               "flight (the oldest into %s), which no wgmma_wait retired: kernel.wgmma_commit() and "
	               "kernel.wgmma_wait(0) before the end", r->P->name, (long long)r->bc[0], (long long)r->bc[1],
	               (long long)r->bc[2], (long long)th->tc[0], (long long)th->tc[1], (long long)th->tc[2], th->nwg,
	               r->k->buf[th->wg[0].d].name);
}

/* ---- mbarriers and TMA ---- */

/*
** An mbarrier's state lives beside its uint64 element (MBar), not in it. Its
** statements are checked as accesses of the element: an init is a write (a
** use by another thread in the same phase, without a barrier between, is a
** race), arrive and wait are atomic (never races among themselves; a race
** with the init is reported). A phase completes when its pending arrivals and
** its transaction count reach 0: the TMAs attached to the barrier land then.
**
** Ordering. Data a TMA landed records the barrier and the completion that
** landed it; a thread may touch it once it has seen that completion by
** waiting (Thr.obs), whatever the phase (a bar.sync after another thread's
** wait does not count: stricter than PTX, never weaker). A TMA's writes
** meet the earlier reads of its destination as a store would (a reader in
** the same phase, another thread: a race), unless the reader arrived on a
** barrier after its read and the issuing thread has seen the completion that
** arrival counted toward (the producer waited on the empty barrier the
** consumers released). Only each thread's last arrival per barrier is kept,
** which is exact for the usual rings (a consumer arrives on a slot's empty
** barrier again only after reading it again).
*/

static MBar *
mbar_at(Run *r, Thr *th, const Ins *in, int64_t off, int write, int *id)
{
	const MemAux *a = &r->P->aux[in->c];
	RBuf *B = &r->rb[a->buf];
	Ins fi = *in;

	fi.op = write ? I_STORE : I_LOAD;
	fi.imm = a->buf;
	if ((uint64_t)off >= (uint64_t)B->size || !B->mb) {
		fail_oob(r, th, &fi, off, -1);
		return NULL;
	}
	if (r->checks) {
		Shadow *s = &B->sh[off];
		Acc cur = { r->launch, r->blin, r->phase, (uint32_t)th->tid, th->ev, th->fc };

		if (write) {
			if (check(r, th, &fi, off, 1) < 0)
				return NULL;
		} else if (conflict(&s->w, &cur)) {
			fail_race(r, th, &fi, off, &s->w, 1);
			return NULL;
		}
	}
	*id = B->mbase + (int)off;
	return &B->mb[off];
}

static int
fail_mbar(Run *r, Thr *th, const Ins *in, int id, const char *what)
{
	char w[256], bn[80];

	where(r, th, NULL, w, sizeof w);
	mbar_name(r, id, bn, sizeof bn);
	(void)in;
	return err_set(r->e, "mbarrier: %s: %s %s", w, what, bn);
}

/* The phase of barrier id completed: TMAs attached to it land. */
static void
mbar_complete(Run *r, MBar *m, int id)
{
	int i, kept = 0;
	int64_t j;

	m->phase++;
	m->pending = m->count;
	for (i = 0; i < r->ntf; i++) {
		TmaF *f = &r->tf[i];
		RBuf *D = &r->rb[f->dst];

		if (f->bar != id) {
			r->tf[kept++] = *f;
			continue;
		}
		for (j = 0; j < f->n; j++) {
			memcpy(D->p + f->off[j] * D->bytes, f->data + j * D->bytes, (size_t)D->bytes);
			if (D->sh) {
				Shadow *s = &D->sh[f->off[j]];

				memset(s, 0, sizeof *s);
				s->init = 1;
				s->mbar = (uint32_t)id + 1;
				s->mphase = m->phase;
			}
		}
		free(f->off);
		free(f->data);
	}
	r->ntf = kept;
}

static int
mbar_init(Run *r, Thr *th, const Ins *in, int64_t off)
{
	int id;
	MBar *m = mbar_at(r, th, in, off, 1, &id);

	if (!m)
		return -1;
	m->init = 1;
	m->count = m->pending = (uint32_t)in->imm;
	m->phase = 0;
	m->tx = 0;
	return 0;
}

static int
mbar_arrive(Run *r, Thr *th, const Ins *in, int64_t off)
{
	int id;
	MBar *m = mbar_at(r, th, in, off, 0, &id);
	char what[200];

	if (!m)
		return -1;
	if (!m->init)
		return fail_mbar(r, th, in, id, "arrives on an uninitialized mbarrier (no mbarrier_init before it):");
	if (m->pending == 0) {
		snprintf(what, sizeof what, "arrives once too often (phase %u has all its %u arrivals and waits for "
		         "%lld tx bytes) on", (unsigned)m->phase, (unsigned)m->count, (long long)m->tx);
		return fail_mbar(r, th, in, id, what);
	}
	th->ev++;
	if (th->arr) {
		th->arr[2 * id] = th->ev;
		th->arr[2 * id + 1] = m->phase + 1;
	}
	m->tx += in->imm;
	if (--m->pending == 0 && m->tx == 0)
		mbar_complete(r, m, id);
	return 0;
}

/* 1: the phase of that parity has completed; 0: not yet (the thread stops); -1 an error. */
static int
mbar_wait(Run *r, Thr *th, const Ins *in, int64_t off, int64_t parity, int quiet)
{
	const MemAux *a = &r->P->aux[in->c];
	RBuf *B = &r->rb[a->buf];
	MBar *m;
	int id;

	if (quiet) {
		/* a stopped thread's retry: checked at its first try */
		m = &B->mb[off];
		id = B->mbase + (int)off;
	} else if (!(m = mbar_at(r, th, in, off, 0, &id)))
		return -1;
	if (!m->init)
		return fail_mbar(r, th, in, id, "waits on an uninitialized mbarrier (no mbarrier_init before it):");
	if ((int64_t)(m->phase & 1) == parity)
		return 0;
	if (m->phase && th->obs && th->obs[id] < m->phase)
		th->obs[id] = m->phase;
	return 1;
}

/* The readers of a TMA's destination element before it: ordered by an mbarrier? */
static int
released(const Run *r, const Thr *th, const Acc *p)
{
	const Thr *rt = &r->th[p->thread];
	int id;

	for (id = 0; id < r->nmb; id++)
		if (rt->arr[2 * id] > p->ev && th->obs[id] >= rt->arr[2 * id + 1])
			return 1;
	return 0;
}

/*
** A TMA_LOAD: the box is read from global memory now (coordinates past the
** tensor read as zeros, as TMA fills them), each element's shared address
** is TMA's (dense, swizzled), checked as a store of this thread and then in
** flight; the bytes complete_tx on the barrier at once and land with its
** phase.
*/
static int
tma_issue(Run *r, Thr *th, const Ins *in, int64_t doff, int64_t boff)
{
	const TmaProg *T = &r->P->tma[in->imm];
	const MemAux *as = &r->P->aux[in->c];
	RBuf *D = &r->rb[T->dst], *S = &r->rb[T->src];
	const KBuf *G = &r->k->buf[T->src];
	Ins li = *in, si = *in, bi = *in;
	int64_t n = 1, j, crd[5], base, g, x, sh;
	int d, id, eb = D->bytes, inside;
	MBar *m;
	TmaF *f;

	li.op = I_LOAD;
	li.imm = T->src;
	si.op = I_STORE;
	si.imm = T->dst;
	si.c = T->adst;
	bi.c = T->abar;
	if (!(m = mbar_at(r, th, &bi, boff, 0, &id)))
		return -1;
	if (!m->init)
		return fail_mbar(r, th, in, id, "issues a TMA on an uninitialized mbarrier (no mbarrier_init before it):");
	base = doff * eb;
	if (base % (T->swizzle ? 8 * T->swizzle : 128)) {
		char w[256];

		where(r, th, &si, w, sizeof w);
		return err_set(r->e, "tma: %s: the box starts at byte %lld of %s, not a multiple of %d (%s)", w,
		               (long long)base, r->k->buf[T->dst].name, T->swizzle ? 8 * T->swizzle : 128,
		               T->swizzle ? "the swizzle's repeat" : "TMA's alignment");
	}
	for (d = 0; d < T->rank; d++)
		n *= T->box[d];
	if (r->ntf == r->captf) {
		int nc = r->captf ? 2 * r->captf : 16;
		TmaF *p = realloc(r->tf, (size_t)nc * sizeof *p);

		if (!p)
			return err_set(r->e, "kernel.run: out of memory (TMAs in flight)");
		r->tf = p;
		r->captf = nc;
	}
	f = &r->tf[r->ntf];
	f->dst = T->dst;
	f->bar = id;
	f->tid = th->tid;
	f->n = n;
	f->off = malloc((size_t)n * sizeof *f->off);
	f->data = calloc((size_t)n, (size_t)eb);
	if (!f->off || !f->data) {
		free(f->off);
		free(f->data);
		return err_set(r->e, "kernel.run: out of memory (a TMA in flight)");
	}
	r->ntf++;
	for (j = 0; j < n; j++) {
		x = j;
		for (d = T->rank - 1; d >= 0; d--) {
			crd[d] = x % T->box[d];
			x /= T->box[d];
		}
		for (d = 0, g = 0, inside = 1; d < T->rank; d++) {
			int64_t c = th->v[as->idx[d]].i + crd[d];

			inside &= c >= 0 && c < G->shape[d];
			g += c * T->stride[d];
		}
		sh = kernel_tma_swizzle(T->swizzle, base + j * eb) / eb;
		if ((uint64_t)sh >= (uint64_t)D->size)
			return fail_oob(r, th, &si, sh, -1);
		if (inside) {
			if (r->checks && check(r, th, &li, g, 0) < 0)
				return -1;
			if ((uint64_t)g >= (uint64_t)S->size)
				return fail_oob(r, th, &li, g, -1);
			memcpy(f->data + j * eb, S->p + g * eb, (size_t)eb);
		}
		f->off[j] = sh;
		if (r->checks) {
			Shadow *s = &D->sh[sh];
			Acc cur = { r->launch, r->blin, r->phase, (uint32_t)th->tid, th->ev, th->fc };
			int i;

			if (s->async)
				return fail_inflight(r, th, &si, sh, s->async);
			if (wg_reading(r, s))
				return fail_wg_reading(r, th, &si, sh, wg_reading(r, s), "a TMA writes");
			if (conflict(&s->w, &cur))
				return fail_race(r, th, &si, sh, &s->w, 1);
			for (i = 0; i < 2; i++)
				if (conflict(&s->r[i], &cur) && !released(r, th, &s->r[i])) {
					char w[256];
					const char *bn = r->k->buf[T->dst].name;
					int64_t pt[3];

					where(r, th, &si, w, sizeof w);
					coords(s->r[i].thread, r->blk, pt);
					return err_set(r->e, "race: %s: a TMA writes %s at offset %lld while thread (%lld,%lld,%lld) "
					               "read it in this phase, and no mbarrier orders them (the reader arrives on a "
					               "barrier after its read, the issuing thread waits on that barrier's phase "
					               "first)", w, bn, (long long)sh, (long long)pt[0], (long long)pt[1],
					               (long long)pt[2]);
				}
			s->async = ((uint32_t)th->tid + 1) | TMA_BIT;
		}
	}
	if (r->cnt) {
		r->cnt->tmas++;
		r->cnt->tma_bytes += T->bytes;
	}
	m->tx -= T->bytes;
	if (m->pending == 0 && m->tx == 0)
		mbar_complete(r, m, id);
	return 0;
}

/* ---- the interpreter loop ---- */

/* ---- atomics and fences ---- */

enum { KR_MAXREL = 1 << 20 };

/*
** An atomic's part in release and acquire (kernel.h): remembered, with the
** element's release chain as it stands, for the thread's next gpu fence;
** after a gpu fence of this thread it is a release, put at the head of the
** element's chain. Past KR_MAXREL releases a run records no more: fewer
** orderings, so more reports, never fewer.
*/
static int
atomic_sync(Run *r, Thr *th, int b, int64_t off)
{
	Shadow *s = &r->rb[b].sh[off];
	uint32_t head = s->rel && r->rel[s->rel - 1].launch == r->launch ? s->rel : 0;
	Rel *q;

	if (th->nat == KR_ATREC) {
		memmove(th->at, th->at + 1, (KR_ATREC - 1) * sizeof *th->at);
		th->nat--;
	}
	th->at[th->nat].buf = b;
	th->at[th->nat].off = off;
	th->at[th->nat].head = head;
	th->nat++;
	if (!th->fc || r->nrel >= KR_MAXREL)
		return 0;
	if (r->nrel == r->caprel) {
		uint32_t nc = r->caprel ? 2 * r->caprel : 256;

		if (charge(r, (uint64_t)(nc - r->caprel) * sizeof *q, "the releases of atomics") < 0)
			return -1;
		if (!(q = realloc(r->rel, nc * sizeof *q)))
			return err_set(r->e, "kernel.run: out of memory (releases)");
		r->rel = q;
		r->caprel = nc;
	}
	q = &r->rel[r->nrel++];
	q->launch = r->launch;
	q->block = r->blin;
	q->phase = th->fphase;
	q->thread = (uint32_t)th->tid;
	q->fc = th->fc;
	q->next = head;
	s->rel = r->nrel;
	return 0;
}

/* A gpu fence: the releases the thread's atomics since its last fence read become its block's acquires. */
static int
acquire(Run *r, Thr *th)
{
	int i, j;
	uint32_t x;

	for (i = 0; i < th->nat; i++)
		for (x = th->at[i].head; x && r->rel[x - 1].launch == r->launch; x = r->rel[x - 1].next) {
			const Rel *q = &r->rel[x - 1];
			Acq n = { q->block, q->phase, q->thread, q->fc, (uint32_t)th->tid, r->phase };

			/* one acquire per (releasing thread, acquiring thread): the one that covers most */
			for (j = 0; j < r->nacq; j++) {
				Acq *o = &r->acq[j];

				if (o->block == n.block && o->thread == n.thread && o->ua == n.ua) {
					if (n.phase > o->phase || (n.phase == o->phase && n.fc > o->fc))
						*o = n;
					break;
				}
			}
			if (j < r->nacq || r->nacq >= KR_MAXACQ)
				continue;
			if (r->nacq == r->capacq) {
				int nc = r->capacq ? 2 * r->capacq : 64;
				Acq *na;

				if (charge(r, (uint64_t)(nc - r->capacq) * sizeof *na, "the acquires of atomics") < 0)
					return -1;
				if (!(na = realloc(r->acq, nc * sizeof *na)))
					return err_set(r->e, "kernel.run: out of memory (acquires)");
				r->acq = na;
				r->capacq = nc;
			}
			r->acq[r->nacq++] = n;
		}
	th->nat = 0;
	return 0;
}

/*
** One ATOMIC on element off of buffer in->imm, value v; old gets the value
** before. The element is a 32-bit word (kernel_atomic_check); a float add
** rounds once to float32, as the device's does (the double sum of two
** floats rounds to the float sum).
*/
static int
atomic_rmw(Run *r, Thr *th, const Ins *in, int64_t off, const Val *v, Val *old)
{
	RBuf *b = &r->rb[in->imm];
	unsigned char *p;

	if (r->checks) {
		if (check(r, th, in, off, 2) < 0)
			return -1;
	} else if ((uint64_t)off >= (uint64_t)b->size)
		return fail_oob(r, th, in, off, -1);
	p = b->p + off * b->bytes;
	if (b->t == DT_FLOAT32) {
		float f, n;

		memcpy(&f, p, 4);
		old->f = f;
		n = in->w == KA_ADD ? (float)((double)f + v->f) : (float)v->f;
		memcpy(p, &n, 4);
	} else if (b->t == DT_INT32) {
		int32_t x, y = (int32_t)(uint32_t)(uint64_t)v->i, n;

		memcpy(&x, p, 4);
		old->i = x;
		n = in->w == KA_ADD ? (int32_t)((uint32_t)x + (uint32_t)y) : in->w == KA_MAX ? (x > y ? x : y)
		  : in->w == KA_MIN ? (x < y ? x : y) : y;
		memcpy(p, &n, 4);
	} else {
		uint32_t x, y = (uint32_t)(uint64_t)v->i, n;

		memcpy(&x, p, 4);
		old->i = x;
		n = in->w == KA_ADD ? x + y : in->w == KA_MAX ? (x > y ? x : y) : in->w == KA_MIN ? (x < y ? x : y) : y;
		memcpy(p, &n, 4);
	}
	if (r->counting)
		r->cnt->atomics++;
	return r->checks ? atomic_sync(r, th, (int)in->imm, off) : 0;
}

static int
fail_div(Run *r, Thr *th, const Ins *in)
{
	char w[256];

	where(r, th, in, w, sizeof w);
	return err_set(r->e, "kernel.run: %s: index %s by zero", w, in->op == I_XDIV ? "division" : "modulo");
}

static int
fail_steps(Run *r, Thr *th, const Ins *in)
{
	char w[256];

	where(r, th, in, w, sizeof w);
	if (limits_poll(r->e) < 0)
		return err_set(r->e, "kernel.run: interrupted (Ctrl-C) at %s", w);
	return err_set(r->e, "steps limit: kernel.run needs more than %lld instructions, at %s "
	               "(raise it with tessel.limits{steps = N}, or k:run{max_steps = N} / KRunOpts.max_steps "
	               "for one run)",
	               (long long)r->max_steps, w);
}

/* Run thread th from its pc to a barrier (W_BAR), a warp op (W_WARP, pc at
** it), its end (0) or an error (-1). */
static int
exec(Run *r, const Prog *P, Thr *th)
{
	const Ins *code = P->code, *in;
	Val *v = th->v;
	RBuf *rb = r->rb;
	int pc = th->pc, chk = r->checks, cnt = r->counting;
	int64_t left = r->left, ops = 0, x, y, off;
	unsigned char *p;
	uint64_t ux, uy;

#define A v[in->a]
#define B v[in->b]
#define CC v[in->c]
#define D v[in->d]
#define FR(e) fround(in->t, (e))
#define IW(e) (in->w ? dtype_wrap((DType)in->t, (e)) : (e))
#define U(e) ((uint64_t)(e))
	for (;;) {
		in = code + pc++;
		/* the step limit, and every 2^16 steps Ctrl-C */
		if (--left < 0 || ((left & 0xffff) == 0 && limits_poll(NULL) < 0)) {
			r->left = 0;
			return fail_steps(r, th, in);
		}
		switch (in->op) {
		case I_EXIT:
			th->done = 1;
			th->pc = pc - 1;
			r->left = left;
			r->ops += ops;
			return th->ncpa ? fail_cp_end(r, th) : th->nwg ? fail_wg_end(r, th) : 0;
		case I_CPA:
			if (cp_issue(r, th, in, D.i, A.i) < 0)
				goto fail;
			break;
		case I_CPC: th->ncommit++; break;
		case I_WGF:
			if (th->wgs)
				memset(th->wgs + r->k->nbuf, 0, (size_t)r->k->nbuf * sizeof *th->wgs);
			break;
		case I_WGC: th->wgcommit++; break;
		case I_WGW: wg_wait(r, th, in->imm); break;
		case I_CPW: cp_wait(r, th, in->imm); break;
		case I_MBI:
			if (mbar_init(r, th, in, D.i) < 0)
				goto fail;
			break;
		case I_MBA:
			if (mbar_arrive(r, th, in, D.i) < 0)
				goto fail;
			break;
		case I_MBW:
			if ((x = mbar_wait(r, th, in, D.i, A.i, 0)) < 0)
				goto fail;
			if (!x) {
				th->pc = pc - 1;
				r->left = left;
				r->ops += ops;
				return W_MBAR;
			}
			break;
		case I_TMA:
			if (tma_issue(r, th, in, D.i, A.i) < 0)
				goto fail;
			break;
		case I_BAR:
			th->bar = (int)in->imm;
			th->pc = pc;
			r->left = left;
			r->ops += ops;
			return W_BAR;
		case I_ATOM:
			if (atomic_rmw(r, th, in, A.i, &B, &D) < 0)
				goto fail;
			break;
		case I_FENCE:
			if (cnt)
				r->cnt->fences++;
			if (in->imm == KF_GPU) {
				if (th->fc < ATOMIC_BIT - 1)
					th->fc++;
				th->fphase = r->phase;
				if (chk && acquire(r, th) < 0)
					goto fail;
			}
			break;
		case I_SHFL: case I_MMA: case I_LDSM: case I_WGMMA:
			th->pc = pc - 1;
			r->left = left;
			r->ops += ops;
			return W_WARP;
		case I_JZ: if (!A.i) pc = in->b; break;
		case I_SET0: D.i = 0; break;
		case I_LOOP: if (++A.i < in->imm) pc = in->b; break;
		case I_GUARD: if (A.i >= in->imm) pc = in->b; break;
		case I_HW:
			switch (in->imm) {
			case HW_BLOCK_X: case HW_BLOCK_Y: case HW_BLOCK_Z: D.i = r->bc[in->imm - HW_BLOCK_X]; break;
			case HW_THREAD_X: case HW_THREAD_Y: case HW_THREAD_Z: D.i = th->tc[in->imm - HW_THREAD_X]; break;
			case HW_WARP: D.i = th->tc[0] / WARP; break;
			default: D.i = th->tc[0] % WARP; break;
			}
			break;
		case I_LOAD: {
			RBuf *b = &rb[in->imm];

			if (in->b >= 0 && !B.i) {
				/* gated off: 0, and no memory touched */
				D.i = 0;
				if (cnt)
					th->kc[in->c]++;
				break;
			}
			off = A.i;
			if (chk) {
				if (check(r, th, in, off, 0) < 0)
					goto fail;
			} else if ((uint64_t)off >= (uint64_t)b->size) {
				fail_oob(r, th, in, off, -1);
				goto fail;
			}
			if (cnt && log_access(r, th, in, off) < 0)
				goto fail;
			p = b->p + th->tid * b->tstride + off * b->bytes;
			switch (b->t) {
			case DT_FLOAT32: { float f; memcpy(&f, p, 4); D.f = f; break; }
			case DT_FLOAT64: memcpy(&D.f, p, 8); break;
			case DT_INT32: { int32_t i; memcpy(&i, p, 4); D.i = i; break; }
			case DT_INT64: case DT_UINT64: memcpy(&D.i, p, 8); break;
			default:
				if (isf(b->t))
					D.f = dtype_load_f(b->t, p);
				else
					D.i = dtype_load_i(b->t, p);
				break;
			}
			break;
		}
		case I_STORE: {
			/* the same checks as I_LOAD's, written out again: one shared helper
			** cost 10-17% of the fast path (bench/kernel_bench.lua) */
			RBuf *b = &rb[in->imm];

			if (in->b >= 0 && !B.i) {
				if (cnt)
					th->kc[in->c]++;
				break;
			}
			off = A.i;
			if (chk) {
				if (check(r, th, in, off, 1) < 0)
					goto fail;
			} else if ((uint64_t)off >= (uint64_t)b->size) {
				fail_oob(r, th, in, off, -1);
				goto fail;
			}
			if (cnt && log_access(r, th, in, off) < 0)
				goto fail;
			p = b->p + th->tid * b->tstride + off * b->bytes;
			if (in->w) {
				if (b->t == DT_FLOAT32) {
					float f = (float)D.f;

					memcpy(p, &f, 4);
				} else
					dtype_store_f(b->t, p, D.f);
			} else if (b->t == DT_INT32) {
				int32_t i = (int32_t)(uint32_t)U(D.i);

				memcpy(p, &i, 4);
			} else
				dtype_store_i(b->t, p, D.i);
			break;
		}
		/* conversions */
		case I_ITOF: D.f = FR((double)A.i); ops++; break;
		case I_UTOF: D.f = FR((double)U(A.i)); ops++; break;
		case I_FTOI: D.i = dtype_ftoi((DType)in->t, A.f); ops++; break;
		case I_FROUND: D.f = FR(A.f); ops++; break;
		case I_IWRAP: D.i = IW(A.i); ops++; break;
		/* floats: fop's semantics, rounded to the dtype */
		case I_FNEG: D.f = FR(-A.f); ops++; break;
		case I_FRECIP: D.f = FR(1.0 / A.f); ops++; break;
		case I_FTRUNC: D.f = FR(trunc(A.f)); ops++; break;
		case I_FEXP2: D.f = FR(exp2(A.f)); ops++; break;
		case I_FLOG2: D.f = FR(log2(A.f)); ops++; break;
		case I_FSIN: D.f = FR(sin(A.f)); ops++; break;
		case I_FSQRT: D.f = FR(sqrt(A.f)); ops++; break;
		case I_FADD: D.f = FR(A.f + B.f); ops++; break;
		case I_FSUB: D.f = FR(A.f - B.f); ops++; break;
		case I_FMUL: D.f = FR(A.f * B.f); ops++; break;
		case I_FPOW: D.f = FR(pow(A.f, B.f)); ops++; break;
		case I_FIDIV: D.f = FR(floor(A.f / B.f)); ops++; break;
		case I_FMOD: {
			double m = fmod(A.f, B.f);

			D.f = FR(m != 0 && (m < 0) != (B.f < 0) ? m + B.f : m);
			ops++;
			break;
		}
		case I_FMIN: D.f = FR(A.f < B.f || isnan(A.f) ? A.f : B.f); ops++; break;
		case I_FMAX: D.f = FR(A.f > B.f || isnan(A.f) ? A.f : B.f); ops++; break;
		case I_FLT: D.i = A.f < B.f; ops++; break;
		case I_FNE: D.i = A.f != B.f; ops++; break;
		case I_FEQ: D.i = A.f == B.f; ops++; break;
		case I_FWHERE: D.f = FR(A.i ? B.f : CC.f); ops++; break;
		case I_FMULACC: D.f = FR(A.f * B.f + CC.f); ops++; break;
		case I_FNAN: D.f = NAN; ops++; break;
		/* integers: iop's semantics, wrapped to the dtype */
		case I_INEG: D.i = IW((int64_t)(0 - U(A.i))); ops++; break;
		case I_IRECIP: x = A.i; D.i = IW(x == 1 ? 1 : x == -1 ? -1 : 0); ops++; break;
		case I_IADD: D.i = IW((int64_t)(U(A.i) + U(B.i))); ops++; break;
		case I_ISUB: D.i = IW((int64_t)(U(A.i) - U(B.i))); ops++; break;
		case I_IMUL: D.i = IW((int64_t)(U(A.i) * U(B.i))); ops++; break;
		case I_IMULACC: D.i = IW((int64_t)(U(A.i) * U(B.i) + U(CC.i))); ops++; break;
		case I_IDIV:
			x = A.i;
			y = B.i;
			if (uck_fdiv(x, y, &off) < 0)
				off = y == 0 ? 0 : x;   /* x // 0 is 0; INT64_MIN // -1 wraps */
			D.i = IW(off);
			ops++;
			break;
		case I_UDIV: D.i = IW(B.i ? (int64_t)(U(A.i) / U(B.i)) : 0); ops++; break;
		case I_IMOD:
			if (uck_fmod(A.i, B.i, &off) < 0)
				off = 0;
			D.i = IW(off);
			ops++;
			break;
		case I_UMOD: D.i = IW(B.i ? (int64_t)(U(A.i) % U(B.i)) : 0); ops++; break;
		case I_XDIV:
			x = A.i;
			y = B.i;
			if (y == 0) {
				fail_div(r, th, in);
				goto fail;
			}
			if (uck_fdiv(x, y, &off) < 0)
				off = x;
			D.i = off;
			ops++;
			break;
		case I_XMOD:
			if (B.i == 0) {
				fail_div(r, th, in);
				goto fail;
			}
			uck_fmod(A.i, B.i, &off);
			D.i = off;
			ops++;
			break;
		case I_IMIN: D.i = A.i < B.i ? A.i : B.i; ops++; break;
		case I_UMIN: D.i = U(A.i) < U(B.i) ? A.i : B.i; ops++; break;
		case I_IMAX: D.i = A.i > B.i ? A.i : B.i; ops++; break;
		case I_UMAX: D.i = U(A.i) > U(B.i) ? A.i : B.i; ops++; break;
		case I_ILT: D.i = A.i < B.i; ops++; break;
		case I_ULT: D.i = U(A.i) < U(B.i); ops++; break;
		case I_INE: D.i = A.i != B.i; ops++; break;
		case I_IEQ: D.i = A.i == B.i; ops++; break;
		case I_IWHERE: D.i = IW(A.i ? B.i : CC.i); ops++; break;
		case I_AND: D.i = IW(A.i & B.i); ops++; break;
		case I_OR: D.i = IW(A.i | B.i); ops++; break;
		case I_XOR: D.i = IW(A.i ^ B.i); ops++; break;
		case I_SHL:
			y = B.i;
			D.i = IW(y < 0 || y > 63 ? 0 : (int64_t)(U(A.i) << y));
			ops++;
			break;
		case I_SHR:
			x = A.i;
			y = B.i;
			D.i = IW(y < 0 || y > 63 ? (x >= 0 ? 0 : -1) : x >> y);
			ops++;
			break;
		case I_USHR:
			y = B.i;
			D.i = IW(y < 0 || y > 63 ? 0 : (int64_t)(U(A.i) >> y));
			ops++;
			break;
		case I_THREEFRY: D.i = IW((int64_t)tensor_threefry(U(A.i), U(B.i))); ops++; break;
		case I_IPOW: case I_UPOW:
			/* by squaring, wrapping; a negative exponent leaves only 1/1 and 1/-1 */
			x = A.i;
			y = B.i;
			if (y < 0 && in->op == I_IPOW)
				off = x == 1 ? 1 : x == -1 ? (y % 2 ? -1 : 1) : 0;
			else {
				for (ux = U(x), uy = 1; y; y = (int64_t)(U(y) >> 1), ux *= ux)
					if (y & 1)
						uy *= ux;
				off = (int64_t)uy;
			}
			D.i = IW(off);
			ops++;
			break;
		case I_IZERO: D.i = 0; ops++; break;
		default:
			err_set(r->e, "kernel.run: internal: bad instruction %d", in->op);
			goto fail;
		}
	}
fail:
	r->left = left;
	r->ops += ops;
	th->pc = pc - 1;
	return -1;
#undef A
#undef B
#undef CC
#undef D
#undef FR
#undef IW
#undef U
}

/* The physical offset of logical element lin (row-major) of buffer b. */
/* The physical offset of element c (logical coordinates) of buffer B through its layout program. */
static int
lay_at(Run *r, RBuf *B, const KBuf *kb, const int64_t *c, Val *slots, int64_t *off)
{
	Thr th;
	const Prog *save = r->P;
	int64_t left = r->left, ops = r->ops;
	int i, rc;
	char cs[160];
	size_t at;

	for (i = 0; i < kb->ndim; i++)
		slots[i].i = c[i];
	memset(&th, 0, sizeof th);
	th.v = slots;
	r->P = NULL;
	/* placing data is not the kernel's work: neither steps nor ops */
	r->left = INT64_MAX;
	rc = exec(r, &B->lay, &th);
	r->P = save;
	r->left = left;
	r->ops = ops;
	if (rc < 0)
		return -1;
	*off = slots[B->lay.res].i;
	if (*off >= 0 && *off < B->size)
		return 0;
	for (i = 0, at = 0; i < kb->ndim && at < sizeof cs; i++)
		at += snprintf(cs + at, sizeof cs - at, "%s%lld", i ? ", " : "", (long long)c[i]);
	return err_set(r->e, "out of bounds: buffer %s: its layout maps element (%s) outside [0, %lld)", kb->name, cs,
	               (long long)B->size);
}

/* The same for element lin of the row-major logical order. */
static int
lay_offset(Run *r, RBuf *B, const KBuf *kb, int64_t lin, Val *slots, int64_t *off)
{
	int64_t c[T_MAXDIM];
	int i;

	for (i = kb->ndim - 1; i >= 0; i--) {
		c[i] = lin % kb->shape[i];
		lin /= kb->shape[i];
	}
	return lay_at(r, B, kb, c, slots, off);
}

static Val *
lay_slots(Run *r, RBuf *B)
{
	Val *s = malloc((size_t)(B->lay.nstack + B->lay.nconst + 1) * sizeof *s);

	if (!s) {
		err_set(r->e, "kernel.run: out of memory");
		return NULL;
	}
	memset(s, 0, (size_t)B->lay.nstack * sizeof *s);
	if (B->lay.nconst)
		memcpy(s + B->lay.nstack, B->lay.cval, (size_t)B->lay.nconst * sizeof *s);
	return s;
}

/* ---- warps ---- */

/* "stage s, block (x,y,z), warp w" */
static void
where_warp(const Run *r, int w, char *out, size_t n)
{
	snprintf(out, n, "stage %s, block (%lld,%lld,%lld), warp %d", r->P->name, (long long)r->bc[0],
	         (long long)r->bc[1], (long long)r->bc[2], w);
}

/* "waits at shuffle #2", "waits at barrier #0", "has finished" */
static void
stop_desc(const Prog *P, const Thr *t, char *out, size_t n)
{
	const Ins *in = &P->code[t->pc];

	if (t->done)
		snprintf(out, n, "has finished");
	else if (t->wait == W_BAR)
		snprintf(out, n, "waits at barrier #%d", t->bar);
	else if (t->wait == W_MBAR)
		snprintf(out, n, "waits on an mbarrier (parity %lld)", (long long)t->v[in->a].i);
	else if (in->op == I_SHFL)
		snprintf(out, n, "waits at shuffle #%lld", (long long)in->imm);
	else if (in->op == I_LDSM)
		snprintf(out, n, "waits at ldmatrix #%d", in->b);
	else if (in->op == I_WGMMA)
		snprintf(out, n, "waits at wgmma #%lld", (long long)in->imm);
	else
		snprintf(out, n, "waits at mma #%lld (%s)", (long long)in->imm, P->mma[in->imm].name);
}

/* Lane a waits at a warp op, lane b somewhere else: they never meet. */
static int
fail_warp(Run *r, int w, const Thr *l, int a, int b)
{
	const Prog *P = r->P;
	char wh[200], da[120], db[120];

	where_warp(r, w, wh, sizeof wh);
	stop_desc(P, &l[a], da, sizeof da);
	stop_desc(P, &l[b], db, sizeof db);
	const char *op = P->code[l[a].pc].op == I_SHFL ? "shuffle" : P->code[l[a].pc].op == I_LDSM ? "ldmatrix"
	               : P->code[l[a].pc].op == I_WGMMA ? "wgmma" : "mma";

	return err_set(r->e, "%s: %s: lane %d %s while lane %d %s (every lane of a warp must reach the "
	               "same %s)", op, wh, a, da, b, db, op);
}

/* SHUFFLE over the nl lanes of warp w: each reads its source lane's value. */
static int
shuffle(Run *r, int w, Thr *l, int nl, const Ins *in)
{
	int i;

	for (i = 0; i < nl; i++) {
		int64_t src = l[i].v[in->b].i;

		if (src < 0 || src >= nl) {
			char wh[200];

			where_warp(r, w, wh, sizeof wh);
			return err_set(r->e, "shuffle: %s: lane %d reads lane %lld at shuffle #%lld, outside "
			               "the warp's lanes [0, %d)%s", wh, i, (long long)src, (long long)in->imm, nl,
			               nl < WARP ? " (a short warp: the block ends there)" : "");
		}
	}
	/* the destination slot is not the value's: one pass reads every source first */
	for (i = 0; i < nl; i++)
		l[i].v[in->d] = l[l[i].v[in->b].i].v[in->a];
	if (r->cnt)
		r->cnt->shuffles++;
	return 0;
}

static double
tf32(double x)
{
	/* the tensor cores read the top 19 bits of a float32: 13 mantissa bits dropped */
	float f = (float)x;
	uint32_t u;

	memcpy(&u, &f, 4);
	u &= ~(uint32_t)0x1fff;
	memcpy(&f, &u, 4);
	return f;
}

static int
fail_mma_uninit(Run *r, const Thr *t, const MmaProg *M, int op, int v)
{
	static const char *const role[4] = { "D", "A", "B", "C" };
	const KBuf *kb = &r->k->buf[M->buf[op]];
	char w[256], el[160];
	int64_t c[T_MAXDIM], x = v;
	size_t at;
	int j;

	where(r, t, NULL, w, sizeof w);
	for (j = kb->ndim - 1; j >= 0; j--) {
		c[j] = x % kb->shape[j];
		x /= kb->shape[j];
	}
	at = snprintf(el, sizeof el, "%s[", kb->name);
	for (j = 0; j < kb->ndim && at < sizeof el; j++)
		at += snprintf(el + at, sizeof el - at, "%s%lld", j ? ", " : "", (long long)c[j]);
	if (at < sizeof el)
		snprintf(el + at, sizeof el - at, "]");
	return err_set(r->e, "uninitialized: %s: mma.%s reads %s register %s (offset %lld), which nothing "
	               "wrote in this thread", w, M->name, role[op], el, (long long)M->off[op][v]);
}

/* MMA over warp w (whole: run_stage refuses blocks of partial warps). */
static int
mma(Run *r, int w, Thr *l, const Ins *in)
{
	const MmaProg *M = &r->P->mma[in->imm];
	double ta[MMA_MAXTILE], tb[MMA_MAXTILE], tc[MMA_MAXTILE];
	int g, i, L, v, m, n, kk;
	RBuf *D = &r->rb[M->buf[0]];

	for (g = 0; g < M->ngroup; g++) {
		memset(ta, 0, sizeof ta);
		memset(tb, 0, sizeof tb);
		memset(tc, 0, sizeof tc);
		/* gather the operands: every register read is checked */
		for (L = 0; L < WARP; L++) {
			if (M->group[L] != g)
				continue;
			for (i = 1; i < 4; i++) {
				const RBuf *B = &r->rb[M->buf[i]];
				double *t = i == 1 ? ta : i == 2 ? tb : tc;

				for (v = 0; v < M->nv[i]; v++) {
					int64_t off = M->off[i][v];
					double x;

					if (B->init && !B->init[(int64_t)l[L].tid * B->size + off])
						return fail_mma_uninit(r, &l[L], M, i, v);
					x = dtype_load_f(B->t, B->p + l[L].tid * B->tstride + off * B->bytes);
					t[M->crd[i][L][v]] = M->tf32 && i < 3 ? tf32(x) : x;
				}
			}
		}
		/* D = A B + C in float64, into tc */
		for (m = 0; m < M->m; m++)
			for (n = 0; n < M->n; n++) {
				double acc = tc[m + n * M->m];

				for (kk = 0; kk < M->k; kk++)
					acc += ta[m + kk * M->m] * tb[n + kk * M->n];
				tc[m + n * M->m] = acc;
			}
		for (L = 0; L < WARP; L++) {
			if (M->group[L] != g)
				continue;
			for (v = 0; v < M->nv[0]; v++) {
				int64_t off = M->off[0][v];

				dtype_store_f(D->t, D->p + l[L].tid * D->tstride + off * D->bytes,
				              fround(D->t, tc[M->crd[0][L][v]]));
				if (D->init)
					D->init[(int64_t)l[L].tid * D->size + off] = 1;
			}
		}
		r->ops += 2 * (int64_t)M->m * M->n * M->k;
	}
	if (r->cnt)
		r->cnt->mmas++;
	(void)w;
	return 0;
}

/*
** LDMATRIX over warp w (whole: run_stage refuses blocks of partial warps):
** lane 8j + r names row r of matrix j, 8 elements from its offset; each
** lane t takes (row t/4, columns 2(t%4), 2(t%4)+1) of every matrix, or
** transposed (rows 2(t%4), 2(t%4)+1, column t/4). Every element read is
** checked as that lane's load (bounds, uninitialized, races); the bits are
** moved as they are. Counts: one shared request per matrix, its wavefronts
** from the banks of its 8 rows of 16 bytes.
*/
static int
ldsm(Run *r, int w, Thr *l, const Ins *in)
{
	const LdsmProg *L = &r->P->ldsm[in->b];
	RBuf *S = &r->rb[L->src], *D = &r->rb[L->dst];
	int64_t base[32];
	int j, row, c, t, h;

	for (j = 0; j < L->n; j++)
		for (row = 0; row < 8; row++) {
			Thr *th = &l[8 * j + row];
			int64_t off = th->v[in->a].i;

			if (off % 8 != 0 || off < 0 || off > S->size - 8) {
				char wh[256];

				where(r, th, in, wh, sizeof wh);
				return err_set(r->e, "ldmatrix: %s: lane %d names row %d of matrix %d at offset %lld of %s; "
				               "a row is 8 elements (16 bytes) from an offset that is a multiple of 8, inside "
				               "the buffer's %lld", wh, 8 * j + row, row, j, (long long)off,
				               r->k->buf[L->src].name, (long long)S->size);
			}
			if (r->checks)
				for (c = 0; c < 8; c++)
					if (check(r, th, in, off + c, 0) < 0)
						return -1;
			base[8 * j + row] = off;
		}
	for (t = 0; t < WARP; t++)
		for (j = 0; j < L->n; j++)
			for (h = 0; h < 2; h++) {
				int rr = L->trans ? 2 * (t % 4) + h : t / 4, cc = L->trans ? t / 4 : 2 * (t % 4) + h;
				int64_t o = L->off[2 * j + h];

				memcpy(D->p + l[t].tid * D->tstride + o * D->bytes, S->p + (base[8 * j + rr] + cc) * S->bytes,
				       (size_t)S->bytes);
				if (D->init)
					D->init[(int64_t)l[t].tid * D->size + o] = 1;
			}
	if (r->cnt) {
		r->cnt->ldmatrices++;
		for (j = 0; j < L->n; j++) {
			int64_t words[32], nw = 0, wf = 1, q, a, b;

			for (row = 0; row < 8; row++)
				for (q = 0; q < 4; q++)
					words[nw++] = base[8 * j + row] * S->bytes / 4 + q;
			/* the most distinct words in one bank */
			for (a = 0; a < nw; a++) {
				int64_t cnt = 0;

				for (b = 0; b < nw; b++)
					if (words[b] % 32 == words[a] % 32) {
						for (q = 0; q < b && words[q] != words[b]; q++)
							;
						cnt += q == b;
					}
				if (cnt > wf)
					wf = cnt;
			}
			r->cnt->shared_loads++;
			r->cnt->shared_accesses += wf;
			r->cnt->bank_conflicts += wf - 1;
		}
	}
	(void)w;
	return 0;
}

/* ---- wgmma: the warpgroup's side ---- */

/* The physical offset of the element at coordinates c of buffer kb (its layout program). */
/* "As[0, 3, 8]" */
static void
crd_desc(const KBuf *kb, const int64_t *c, char *out, size_t n)
{
	size_t at = snprintf(out, n, "%s[", kb->name);
	int i;

	for (i = 0; i < kb->ndim && at < n; i++)
		at += snprintf(out + at, n - at, "%s%lld", i ? ", " : "", (long long)c[i]);
	if (at < n)
		snprintf(out + at, n - at, "]");
}

/*
** One operand tile into t (row-major over its last two dimensions, rows x
** cols from the start coordinates c0): each element read through the
** layout, checked as a read of the thread whose rows of D it feeds (A: the
** first lane of warp m/16; B: the warpgroup's first thread).
*/
/* A wgmma in flight reads element off of buf, for thread th's slot, until th retires it. */
static int
wg_note(Run *r, const Thr *th, int buf, int64_t off)
{
	struct WgRd *g;

	if (r->nwgr == r->capwgr) {
		int64_t nc = r->capwgr ? 2 * r->capwgr : 1024;
		void *q;

		if (charge(r, (uint64_t)(nc - r->capwgr) * sizeof *r->wgr, "the wgmmas' tiles in flight") < 0)
			return -1;
		if (!(q = realloc(r->wgr, (size_t)nc * sizeof *r->wgr)))
			return err_set(r->e, "kernel.run: out of memory (wgmma tiles in flight)");
		r->wgr = q;
		r->capwgr = nc;
	}
	g = &r->wgr[r->nwgr++];
	g->tid = th->tid;
	g->buf = buf;
	g->group = th->wgcommit;
	g->off = off;
	return 0;
}

static int
wg_tile(Run *r, Thr *l, int buf, const int64_t *c0, int rows, int cols, int isa, double *t)
{
	const KBuf *kb = &r->k->buf[buf];
	RBuf *B = &r->rb[buf];
	int64_t c[T_MAXDIM], off;
	int i, j, d, nd = kb->ndim;
	Val *slots = lay_slots(r, B);
	char w[256], el[160];

	if (!slots)
		return -1;
	for (d = 0; d < nd; d++)
		c[d] = c0[d];
	for (d = 0; d < nd; d++)
		if (c0[d] < 0 || c0[d] + (d == nd - 2 ? rows : d == nd - 1 ? cols : 1) > kb->shape[d]) {
			where(r, &l[0], NULL, w, sizeof w);
			crd_desc(kb, c0, el, sizeof el);
			free(slots);
			return err_set(r->e, "out of bounds: %s: wgmma's %s tile from %s (%d x %d) leaves dimension %d of %s "
			               "(%lld)", w, isa ? "A" : "B", el, rows, cols, d, kb->name, (long long)kb->shape[d]);
		}
	for (i = 0; i < rows; i++)
		for (j = 0; j < cols; j++) {
			Thr *th = isa ? &l[32 * (i / 16)] : &l[0];

			c[nd - 2] = c0[nd - 2] + i;
			c[nd - 1] = c0[nd - 1] + j;
			if (lay_at(r, B, kb, c, slots, &off) < 0) {
				free(slots);
				return -1;
			}
			if (r->checks) {
				Shadow *s = &B->sh[off];
				Acc cur;

				cur.launch = r->launch;
				cur.block = r->blin;
				cur.phase = r->phase;
				cur.thread = (uint32_t)th->tid;
				cur.ev = WG_READING;
				cur.fc = th->fc;
				if (s->async || !s->init || conflict(&s->w, &cur)) {
					int64_t pt[3];

					where(r, th, NULL, w, sizeof w);
					crd_desc(kb, c, el, sizeof el);
					free(slots);
					if (s->async) {
						coords(s->async - 1, r->blk, pt);
						return err_set(r->e, "cp_async: %s: wgmma reads %s (offset %lld, shared memory) while a "
						               "cp.async into it is in flight (issued by thread (%lld,%lld,%lld))", w, el,
						               (long long)off, (long long)pt[0], (long long)pt[1], (long long)pt[2]);
					}
					if (!s->init)
						return err_set(r->e, "uninitialized: %s: wgmma reads %s (offset %lld) of its %s tile, "
						               "which nothing wrote in this block", w, el, (long long)off, isa ? "A" : "B");
					coords(s->w.thread, r->blk, pt);
					return err_set(r->e, "race: %s: wgmma reads %s (offset %lld, shared memory) while thread "
					               "(%lld,%lld,%lld) wrote it in the same phase (no barrier between)", w, el,
					               (long long)off, (long long)pt[0], (long long)pt[1], (long long)pt[2]);
				}
				note_read(s, &cur);
				if (wg_note(r, th, buf, off) < 0) {
					free(slots);
					return -1;
				}
			}
			t[i * cols + j] = dtype_load_f(B->t, B->p + off * B->bytes);
		}
	free(slots);
	return 0;
}

/*
** A from registers: each thread's 8 elements (from its own start, along the
** last dimension) into t (64 x 16, row-major) at its fragment's places
** (kernel.h, kernel_wgmma). Each must be written, and not since the
** thread's last wgmma_fence.
*/
static int
wg_afrag(Run *r, Thr *l, const WgmmaProg *W, const MemAux *xa, double *t)
{
	const KBuf *kb = &r->k->buf[W->a];
	RBuf *B = &r->rb[W->a];
	int64_t c[T_MAXDIM], off;
	int nd = kb->ndim, th, i, d;
	Val *slots = lay_slots(r, B);
	char w[256], el[160];

	if (!slots)
		return -1;
	for (th = 0; th < WG; th++) {
		int wp = th / 32, ln = th % 32;

		for (d = 0; d < nd; d++)
			c[d] = l[th].v[xa->idx[d]].i;
		for (d = 0; d < nd; d++)
			if (c[d] < 0 || c[d] + (d == nd - 1 ? 8 : 1) > kb->shape[d]) {
				where(r, &l[th], NULL, w, sizeof w);
				crd_desc(kb, c, el, sizeof el);
				free(slots);
				return err_set(r->e, "out of bounds: %s: wgmma's A fragment from %s (8 registers) leaves "
				               "dimension %d of %s (%lld)", w, el, d, kb->name, (long long)kb->shape[d]);
			}
		if (l[th].wgs[r->k->nbuf + W->a]) {
			where(r, &l[th], NULL, w, sizeof w);
			free(slots);
			return err_set(r->e, "wgmma: %s: the wgmma reads its A fragment from %s, which this thread "
			               "accessed since its last wgmma_fence (or never fenced): kernel.wgmma_fence() "
			               "between the accesses and the wgmma", w, kb->name);
		}
		for (i = 0; i < 8; i++) {
			int row = 16 * wp + ln / 4 + 8 * ((i / 2) % 2), col = 2 * (ln % 4) + i % 2 + 8 * (i / 4);

			if (i)
				c[nd - 1]++;
			if (lay_at(r, B, kb, c, slots, &off) < 0) {
				free(slots);
				return -1;
			}
			if (B->init && !B->init[(int64_t)l[th].tid * B->size + off]) {
				where(r, &l[th], NULL, w, sizeof w);
				crd_desc(kb, c, el, sizeof el);
				free(slots);
				return err_set(r->e, "uninitialized: %s: wgmma reads %s (register offset %lld) of its A "
				               "fragment, which nothing wrote in this thread", w, el, (long long)off);
			}
			t[row * 16 + col] = dtype_load_f(B->t, B->p + l[th].tid * B->tstride + off * B->bytes);
		}
	}
	free(slots);
	return 0;
}

/*
** WGMMA over the warpgroup l[0..127] (whole: run_stage refuses blocks of
** partial warpgroups). Every thread must name the same tiles; each needs a
** wgmma_fence since it last accessed D. The product is computed now (in
** float64, rounded to float32 once), which is what D will hold when the
** wgmma retires: until then the thread may not touch D (check()).
*/
static int
wgmma(Run *r, int g, Thr *l, const Ins *in)
{
	const WgmmaProg *W = &r->P->wgmma[in->imm];
	const MemAux *xa = &r->P->aux[W->auxa], *xb = &r->P->aux[W->auxb];
	RBuf *D = &r->rb[W->d];
	int nbuf = r->k->nbuf, t, i, v, kk;
	int64_t ca[T_MAXDIM], cb[T_MAXDIM];
	double *ta = NULL, *tb = NULL;
	char w[256];

	for (i = 0; i < xa->ndim; i++)
		ca[i] = l[0].v[xa->idx[i]].i;
	for (i = 0; i < xb->ndim; i++)
		cb[i] = l[0].v[xb->idx[i]].i;
	for (t = 0; t < WG; t++) {
		for (i = 0; i < xa->ndim && (W->areg || l[t].v[xa->idx[i]].i == ca[i]); i++)
			;
		for (v = 0; v < xb->ndim && l[t].v[xb->idx[v]].i == cb[v]; v++)
			;
		if (i < xa->ndim || v < xb->ndim) {
			char e0[120], e1[120];
			int64_t c[T_MAXDIM];
			const MemAux *x = i < xa->ndim ? xa : xb;
			const KBuf *kb = &r->k->buf[x->buf];

			for (kk = 0; kk < x->ndim; kk++)
				c[kk] = l[t].v[x->idx[kk]].i;
			where(r, &l[t], NULL, w, sizeof w);
			crd_desc(kb, i < xa->ndim ? ca : cb, e0, sizeof e0);
			crd_desc(kb, c, e1, sizeof e1);
			return err_set(r->e, "wgmma: %s: names the %s tile at %s while thread %d of its warpgroup names %s "
			               "(wgmma #%lld: one tile for the whole warpgroup)", w, i < xa->ndim ? "A" : "B", e1,
			               (int)l[0].tid, e0, (long long)in->imm);
		}
		if (l[t].wgs[nbuf + W->d]) {
			where(r, &l[t], NULL, w, sizeof w);
			return err_set(r->e, "wgmma: %s: wgmma #%lld accumulates in %s, which this thread accessed since its "
			               "last wgmma_fence (or never fenced): kernel.wgmma_fence() between the accesses and the "
			               "wgmma", w, (long long)in->imm, r->k->buf[W->d].name);
		}
	}
	if (!(ta = malloc(64 * 16 * sizeof *ta)) || !(tb = malloc(16 * (size_t)W->n * sizeof *tb))) {
		free(ta);
		return err_set(r->e, "kernel.run: out of memory (wgmma tiles)");
	}
	if ((W->areg ? wg_afrag(r, l, W, xa, ta) : wg_tile(r, l, W->a, ca, 64, 16, 1, ta)) < 0
	|| wg_tile(r, l, W->b, cb, W->nk ? W->n : 16, W->nk ? 16 : W->n, 0, tb) < 0)
		goto fail;
	for (t = 0; t < WG; t++) {
		int wp = t / 32, ln = t % 32;

		for (v = 0; v < W->n / 2; v++) {
			int row = 16 * wp + ln / 4 + 8 * ((v / 2) % 2), col = 8 * (v / 4) + 2 * (ln % 4) + v % 2;
			unsigned char *p = D->p + l[t].tid * D->tstride + W->off[v] * D->bytes;
			double acc;

			if (!W->zero && D->init && !D->init[(int64_t)l[t].tid * D->size + W->off[v]]) {
				where(r, &l[t], NULL, w, sizeof w);
				err_set(r->e, "uninitialized: %s: wgmma #%lld accumulates into %s element %d (register offset "
				        "%lld), which nothing wrote in this thread (fill D before the first wgmma)", w,
				        (long long)in->imm, r->k->buf[W->d].name, v, (long long)W->off[v]);
				goto fail;
			}
			acc = W->zero ? 0 : dtype_load_f(D->t, p);
			if (D->init)
				D->init[(int64_t)l[t].tid * D->size + W->off[v]] = 1;
			for (kk = 0; kk < 16; kk++)
				acc += ta[row * 16 + kk] * (W->nk ? tb[col * 16 + kk] : tb[kk * W->n + col]);
			dtype_store_f(D->t, p, fround(D->t, acc));
		}
	}
	for (t = 0; t < WG; t++) {
		Thr *th = &l[t];

		if (th->nwg == th->capwg) {
			int nc = th->capwg ? 2 * th->capwg : 8;
			void *q;

			if (charge(r, (uint64_t)(nc - th->capwg) * sizeof *th->wg, "the wgmmas in flight") < 0)
				goto fail;
			if (!(q = realloc(th->wg, (size_t)nc * sizeof *th->wg))) {
				err_set(r->e, "kernel.run: out of memory (wgmmas in flight)");
				goto fail;
			}
			th->wg = q;
			th->capwg = nc;
		}
		th->wg[th->nwg].d = W->d;
		th->wg[th->nwg].a = W->areg ? W->a : -1;
		th->wg[th->nwg++].group = th->wgcommit;
		th->wgs[W->d]++;
		if (W->areg)
			th->wgs[W->a]++;
	}
	r->ops += 2 * 64 * (int64_t)W->n * 16;
	if (r->cnt)
		r->cnt->wgmmas++;
	free(ta);
	free(tb);
	(void)g;
	return 0;
fail:
	free(ta);
	free(tb);
	return -1;
}

/* Whether the warpgroup of warp w (waiting at the I_WGMMA at pc) can gather now:
** 1 yes, 0 not yet (another warp of it is still on its way), -1 never (an error). */
static int
wg_ready(Run *r, Thr *th, int nthr, int w, int pc)
{
	const Prog *P = r->P;
	int base = (w / 4) * WG, t;
	char wh[200], da[120], db[120];

	if (base + WG > nthr)
		/* a block may end in a partial warpgroup (a producer warp), which must not reach a wgmma */
		return err_set(r->e, "wgmma: stage %s, block (%lld,%lld,%lld): warpgroup %d reaches a wgmma with %d "
		               "threads; a wgmma runs on a whole warpgroup of %d (the block ends at thread %d)",
		               P->name, (long long)r->bc[0], (long long)r->bc[1], (long long)r->bc[2], w / 4, nthr - base,
		               WG, nthr);
	for (t = base; t < base + WG; t++) {
		const Thr *x = &th[t];

		if (!x->done && x->wait == W_WARP && x->pc == pc)
			continue;
		if (!x->done && (x->wait == W_RUN || x->wait == W_MBAR
		                 || (x->wait == W_WARP && P->code[x->pc].op != I_WGMMA)))
			return 0;
		snprintf(wh, sizeof wh, "stage %s, block (%lld,%lld,%lld), warpgroup %d", P->name, (long long)r->bc[0],
		         (long long)r->bc[1], (long long)r->bc[2], w / 4);
		stop_desc(P, &th[w * WARP], da, sizeof da);
		stop_desc(P, x, db, sizeof db);
		return err_set(r->e, "wgmma: %s: thread %d %s while thread %d %s (every thread of a warpgroup must reach "
		               "the same wgmma)", wh, w * WARP, da, t, db);
	}
	return 1;
}

/*
** After a round: every warp whose lanes wait at a warp op exchanges, and its
** lanes may run on. Returns the number of warps that did, or -1. A warp with
** some lanes at a warp op and others elsewhere is an error: every thread ran
** as far as it can, so they would never meet.
*/
static int
warps(Run *r, Thr *th, int nthr)
{
	const Prog *P = r->P;
	int w, i, first, nl, n = 0, deferred = 0;

	for (w = 0; w * WARP < nthr; w++) {
		Thr *l = th + (int64_t)w * WARP;
		const Ins *in;

		nl = nthr - w * WARP < WARP ? nthr - w * WARP : WARP;
		for (first = 0; first < nl && (l[first].done || l[first].wait != W_WARP); first++)
			;
		if (first == nl)
			continue;
		/* lanes still waiting on an mbarrier may come later */
		for (i = 0; i < nl && (l[i].done || l[i].wait != W_MBAR); i++)
			;
		if (i < nl)
			continue;
		for (i = 0; i < nl; i++)
			if (l[i].done || l[i].wait != W_WARP || l[i].pc != l[first].pc)
				return fail_warp(r, w, l, first, i);
		in = &P->code[l[first].pc];
		if (in->op == I_WGMMA) {
			/* the whole warpgroup gathers, once its four warps are there */
			int rd = wg_ready(r, th, nthr, w, l[first].pc), t;
			Thr *g = th + (int64_t)(w / 4) * WG;

			if (rd < 0)
				return -1;
			if (!rd) {
				deferred++;
				continue;
			}
			if (wgmma(r, w / 4, g, in) < 0)
				return -1;
			for (t = 0; t < WG; t++) {
				g[t].wait = W_RUN;
				g[t].pc++;
			}
			n++;
			continue;
		}
		if ((in->op == I_SHFL ? shuffle(r, w, l, nl, in) : in->op == I_LDSM ? ldsm(r, w, l, in)
		     : mma(r, w, l, in)) < 0)
			return -1;
		for (i = 0; i < nl; i++) {
			l[i].wait = W_RUN;
			l[i].pc++;
		}
		n++;
	}
	/* threads waiting on an mbarrier may still join their warpgroup's wgmma in a later round */
	for (i = 0; !n && deferred && i < nthr; i++)
		if (!th[i].done && th[i].wait == W_MBAR)
			deferred = 0;
	if (!n && deferred)
		return err_set(r->e, "wgmma: stage %s, block (%lld,%lld,%lld): the threads of a warpgroup wait at "
		               "different places and cannot meet", P->name, (long long)r->bc[0], (long long)r->bc[1],
		               (long long)r->bc[2]);
	return n;
}

/* No thread can move and some wait on an mbarrier. */
static int
fail_deadlock(Run *r, Thr *th, int nthr, int t)
{
	const Prog *P = r->P;
	const Ins *in = &P->code[th[t].pc];
	const MemAux *a = &P->aux[in->c];
	const MBar *m = &r->rb[a->buf].mb[th[t].v[in->d].i];
	char bn[80], d[120];
	int i, nm = 0, nb = 0, nd = 0, nw = 0, other = -1;

	mbar_name(r, r->rb[a->buf].mbase + (int)th[t].v[in->d].i, bn, sizeof bn);
	for (i = 0; i < nthr; i++) {
		if (th[i].done)
			nd++;
		else if (th[i].wait == W_MBAR)
			nm++;
		else if (th[i].wait == W_BAR)
			nb++;
		else
			nw++;
		if (other < 0 && i != t && (th[i].done || th[i].wait != W_MBAR))
			other = i;
	}
	d[0] = 0;
	if (other >= 0) {
		char sd[80];

		stop_desc(P, &th[other], sd, sizeof sd);
		snprintf(d, sizeof d, "; thread (%lld,%lld,%lld) %s", (long long)th[other].tc[0], (long long)th[other].tc[1],
		         (long long)th[other].tc[2], sd);
	}
	return err_set(r->e, "mbarrier: deadlock: stage %s, block (%lld,%lld,%lld): thread (%lld,%lld,%lld) waits on %s "
	               "for parity %lld, and its phase %u (parity %u) never completes: %u of %u arrivals pending, %lld tx "
	               "bytes outstanding; of %d threads, %d wait on mbarriers, %d at a barrier, %d at a warp op, %d "
	               "have finished%s", P->name, (long long)r->bc[0], (long long)r->bc[1], (long long)r->bc[2],
	               (long long)th[t].tc[0], (long long)th[t].tc[1], (long long)th[t].tc[2], bn,
	               (long long)th[t].v[in->a].i, (unsigned)m->phase, (unsigned)(m->phase & 1), (unsigned)m->pending,
	               (unsigned)m->count, (long long)m->tx, nthr, nm, nb, nw, nd, d);
}

/* The block ends with TMA boxes that never landed. */
static int
fail_tma_end(Run *r)
{
	const TmaF *f = &r->tf[0];
	const MBar *m = NULL;
	char bn[80];
	int64_t pt[3];
	int b;

	for (b = 0; b < r->k->nbuf; b++)
		if (r->rb[b].mb && f->bar >= r->rb[b].mbase && f->bar < r->rb[b].mbase + r->rb[b].size)
			m = &r->rb[b].mb[f->bar - r->rb[b].mbase];
	mbar_name(r, f->bar, bn, sizeof bn);
	coords(f->tid, r->blk, pt);
	return err_set(r->e, "tma: stage %s, block (%lld,%lld,%lld): %d TMA box%s never landed (the first into %s, "
	               "issued by thread (%lld,%lld,%lld)): its mbarrier %s is at phase %u with %u of %u arrivals "
	               "pending and %lld tx bytes outstanding at the end of the stage", r->P->name, (long long)r->bc[0],
	               (long long)r->bc[1], (long long)r->bc[2], r->ntf, r->ntf > 1 ? "es" : "",
	               r->k->buf[f->dst].name, (long long)pt[0], (long long)pt[1], (long long)pt[2], bn,
	               m ? (unsigned)m->phase : 0u, m ? (unsigned)m->pending : 0u, m ? (unsigned)m->count : 0u,
	               m ? (long long)m->tx : 0LL);
}

/* One stage: every block of the grid, phase by phase. */
static int
run_stage(Run *r, const Prog *P, int si)
{
	const Kernel *k = r->k;
	int64_t nthr = P->blk[0], nblk = P->grid[0], b, t, u;
	int nslot = P->nstack + P->nconst, rc = -1, i, all_done, gathered = 0;
	Thr *th = NULL;
	Val *slots = NULL;
	uint32_t *kc = NULL, *obs = NULL;
	int32_t *wgs = NULL;
	uint64_t before = r->used;
	char what[K_NAME + 32];

	for (i = 1; i < 3; i++) {
		if (uck_mul(nthr, P->blk[i], &nthr) < 0)
			nthr = INT64_MAX;
		if (uck_mul(nblk, P->grid[i], &nblk) < 0)
			nblk = INT64_MAX;
	}
	if (nthr > KR_MAXTHREADS)
		return err_set(r->e, "kernel.run: stage %s: blocks of %lld threads (at most %d)", P->name,
		               (long long)nthr, KR_MAXTHREADS);
	if (nblk > INT32_MAX)
		return err_set(r->e, "kernel.run: stage %s: a grid of %lld blocks (at most 2^31-1)", P->name,
		               (long long)nblk);
	r->P = P;
	r->launch = (uint32_t)si + 1;
	r->nthr = (int)nthr;
	memcpy(r->grid, P->grid, sizeof r->grid);
	memcpy(r->blk, P->blk, sizeof r->blk);
	if (!(th = rmalloc(r, (uint64_t)nthr * sizeof *th, 1, "the threads"))
	|| !(slots = rmalloc(r, (uint64_t)nthr * nslot * sizeof *slots, 0, "the threads' slots")))
		goto out;
	if (r->counting && !(kc = rmalloc(r, (uint64_t)nthr * (P->naux + 1) * sizeof *kc, 0, "the counts")))
		goto out;
	/* shared buffers live per block, registers per thread of a block */
	for (i = 0; i < k->nbuf; i++) {
		RBuf *B = &r->rb[i];
		uint64_t n = B->scope == AS_REG ? (uint64_t)nthr * B->size : (uint64_t)B->size;

		if (B->scope == AS_GLOBAL)
			continue;
		B->tstride = B->scope == AS_REG ? B->size * B->bytes : 0;
		snprintf(what, sizeof what, "%s buffer %s", kscope_name(B->scope), k->buf[i].name);
		if (!(B->p = rmalloc(r, n * B->bytes, 0, what)))
			goto out;
		snprintf(what, sizeof what, "the shadow state of %s", k->buf[i].name);
		if (r->checks && B->scope == AS_LOCAL && !(B->sh = rmalloc(r, n * sizeof *B->sh, 0, what)))
			goto out;
		if (r->checks && B->scope == AS_REG && !(B->init = rmalloc(r, n, 0, what)))
			goto out;
	}
	for (i = 0; i < k->nbuf; i++)
		r->rb[i].wgd = 0;
	for (i = 0; i < P->nwgmma; i++) {
		r->rb[P->wgmma[i].d].wgd = 1;
		if (P->wgmma[i].areg)
			r->rb[P->wgmma[i].a].wgd = 1;
	}
	if (P->nwgmma && !(wgs = rmalloc(r, (uint64_t)nthr * 2 * k->nbuf * sizeof *wgs, 0, "the wgmma state")))
		goto out;
	/* mbarriers: every shared uint64 buffer of a stage with mbarrier statements */
	r->nmb = 0;
	r->th = th;
	for (i = 0; P->nmbw && i < k->nbuf; i++) {
		RBuf *B = &r->rb[i];

		if (B->scope != AS_LOCAL || k->buf[i].dtype != DT_UINT64 || r->nmb + B->size > (1 << 16))
			continue;
		B->mbase = r->nmb;
		r->nmb += (int)B->size;
		if (!(B->mb = rmalloc(r, (uint64_t)B->size * sizeof *B->mb, 1, "the mbarriers")))
			goto out;
	}
	if (r->nmb && !(obs = rmalloc(r, (uint64_t)nthr * r->nmb * 3 * sizeof *obs, 1, "the mbarrier observations")))
		goto out;
	if ((P->nmma || P->nldsm) && nthr % WARP) {
		err_set(r->e, "%s: stage %s: blocks of %lld threads; an %s runs on whole warps (a multiple "
		        "of %d threads)", P->nmma ? "mma" : "ldmatrix", P->name, (long long)nthr,
		        P->nmma ? "MMA" : "ldmatrix", WARP);
		goto out;
	}
	if (r->cnt) {
		r->cnt->blocks += nblk;
		r->cnt->threads += nblk * nthr;
	}
	for (b = 0; b < nblk; b++) {
		r->blin = (uint32_t)b;
		r->nacq = 0;
		coords(b, P->grid, r->bc);
		for (i = 0; i < k->nbuf; i++) {
			RBuf *B = &r->rb[i];
			uint64_t n = B->scope == AS_REG ? (uint64_t)nthr * B->size : (uint64_t)B->size;

			if (B->scope == AS_GLOBAL)
				continue;
			/* fresh per block: zeros, so that runs without checks are deterministic */
			memset(B->p, 0, n * B->bytes);
			if (B->sh)
				memset(B->sh, 0, n * sizeof *B->sh);
			if (B->init)
				memset(B->init, 0, n);
			if (B->mb)
				memset(B->mb, 0, B->size * sizeof *B->mb);
		}
		if (obs)
			memset(obs, 0, (size_t)nthr * r->nmb * 3 * sizeof *obs);
		for (t = 0; t < nthr; t++) {
			Val *v = slots + t * nslot;

			th[t].pc = 0;
			th[t].done = 0;
			th[t].ncpa = 0;
			th[t].ncommit = 0;
			th[t].nwg = 0;
			th[t].wgcommit = 0;
			r->nwgr = 0;
			th[t].wgs = NULL;
			if (wgs) {
				/* nothing in flight; every accumulator needs a fence before its first wgmma */
				th[t].wgs = wgs + t * 2 * k->nbuf;
				for (i = 0; i < k->nbuf; i++) {
					th[t].wgs[i] = 0;
					th[t].wgs[k->nbuf + i] = 1;
				}
			}
			th[t].ev = 0;
			th[t].fc = th[t].fphase = 0;
			th[t].nat = 0;
			th[t].obs = obs ? obs + t * r->nmb * 3 : NULL;
			th[t].arr = obs ? obs + t * r->nmb * 3 + r->nmb : NULL;
			th[t].tid = (int)t;
			th[t].v = v;
			th[t].kc = kc ? kc + t * (P->naux + 1) : NULL;
			coords(t, P->blk, th[t].tc);
			memset(v, 0, (size_t)P->nstack * sizeof *v);
			if (P->nconst)
				memcpy(v + P->nstack, P->cval, (size_t)P->nconst * sizeof *v);
		}
		for (r->phase = 0;; r->phase++) {
			if (kc)
				memset(kc, 0, (size_t)nthr * (P->naux + 1) * sizeof *kc);
			for (t = 0; t < nthr; t++)
				th[t].wait = W_RUN;
			/* rounds: every thread to its next stop; warps that gathered exchange; threads
			** whose mbarrier phase completed resume */
			for (;;) {
				int ran = 0;

				for (t = 0; t < nthr; t++) {
					if (r->counting && t % WARP == 0)
						flush(r);
					if (th[t].done)
						continue;
					if (th[t].wait == W_MBAR) {
						const Ins *in = &P->code[th[t].pc];

						if (mbar_wait(r, &th[t], in, th[t].v[in->d].i, th[t].v[in->a].i, 1) <= 0)
							continue;
						th[t].wait = W_RUN;
					}
					if (th[t].wait == W_RUN) {
						ran = 1;
						if ((th[t].wait = exec(r, P, &th[t])) < 0)
							goto out;
					}
				}
				if (r->counting)
					flush(r);
				gathered = 0;
				if (P->nshfl + P->nmma + P->nldsm + P->nwgmma && (gathered = warps(r, th, (int)nthr)) < 0)
					goto out;
				if (!gathered && (!ran || !P->nmbw))
					break;
			}
			for (t = 0; t < nthr; t++)
				if (!th[t].done && th[t].wait == W_MBAR) {
					fail_deadlock(r, th, (int)nthr, (int)t);
					goto out;
				}
			if (r->pending == AS_LOCAL) {
				memcpy(r->e->msg, r->pend, sizeof r->pend);
				goto out;
			}
			for (t = 0, all_done = 1, u = -1; t < nthr; t++) {
				all_done &= th[t].done;
				if (u < 0 && !th[t].done)
					u = t;
			}
			if (all_done) {
				if (r->ntf) {
					fail_tma_end(r);
					goto out;
				}
				break;
			}
			/* every thread must wait at the barrier the first waiting one waits at */
			for (t = 0; t < nthr; t++)
				if (th[t].done || th[t].bar != th[u].bar) {
					char w[200];

					snprintf(w, sizeof w, "stage %s, block (%lld,%lld,%lld): thread (%lld,%lld,%lld) "
					         "waits at barrier #%d", P->name, (long long)r->bc[0], (long long)r->bc[1],
					         (long long)r->bc[2], (long long)th[u].tc[0], (long long)th[u].tc[1],
					         (long long)th[u].tc[2], th[u].bar);
					if (th[t].done)
						err_set(r->e, "barrier: %s while thread (%lld,%lld,%lld) has finished", w,
						        (long long)th[t].tc[0], (long long)th[t].tc[1], (long long)th[t].tc[2]);
					else
						err_set(r->e, "barrier: %s while thread (%lld,%lld,%lld) waits at barrier #%d", w,
						        (long long)th[t].tc[0], (long long)th[t].tc[1], (long long)th[t].tc[2],
						        th[t].bar);
					goto out;
				}
			if (r->cnt)
				r->cnt->barriers++;
		}
	}
	if (r->pending) {
		memcpy(r->e->msg, r->pend, sizeof r->pend);
		goto out;
	}
	rc = 0;
out:
	for (i = 0; i < k->nbuf; i++) {
		RBuf *B = &r->rb[i];

		if (B->scope == AS_GLOBAL)
			continue;
		free(B->p);
		free(B->sh);
		free(B->init);
		B->p = NULL;
		B->sh = NULL;
		B->init = NULL;
	}
	for (t = 0; th && t < nthr; t++) {
		free(th[t].cpa);
		free(th[t].wg);
	}
	free(wgs);
	for (i = 0; i < r->ntf; i++) {
		free(r->tf[i].off);
		free(r->tf[i].data);
	}
	free(r->tf);
	r->tf = NULL;
	r->ntf = r->captf = 0;
	free(r->wgr);
	r->wgr = NULL;
	r->nwgr = r->capwgr = 0;
	for (i = 0; i < k->nbuf; i++) {
		free(r->rb[i].mb);
		r->rb[i].mb = NULL;
	}
	r->th = NULL;
	r->nmb = 0;
	free(obs);
	free(th);
	free(slots);
	free(kc);
	r->used = before;
	return rc;
}

/* "X[0, 3]": element lin (row-major) of kb */
static void
elem_str(const KBuf *kb, int64_t lin, char *el, size_t n)
{
	int64_t c[T_MAXDIM];
	size_t at;
	int j;

	for (j = kb->ndim - 1; j >= 0; j--) {
		c[j] = lin % kb->shape[j];
		lin /= kb->shape[j];
	}
	at = snprintf(el, n, "%s[", kb->name);
	for (j = 0; j < kb->ndim && at < n; j++)
		at += snprintf(el + at, n - at, "%s%lld", j ? ", " : "", (long long)c[j]);
	if (at < n)
		snprintf(el + at, n - at, "]");
}

/*
** Place input b (row-major logical order) through its layout. A layout that
** repeats offsets (a broadcast) takes a binding only where the elements that
** share an offset agree (checked when the run keeps shadow state).
*/
static int
place(Run *r, int b, const TBuf *in)
{
	const KBuf *kb = &r->k->buf[b];
	RBuf *B = &r->rb[b];
	Val *s = lay_slots(r, B);
	int64_t n = in->numel, i, j, off, o2;
	const unsigned char *src = in->data;

	if (!s)
		return -1;
	for (i = 0; i < n; i++) {
		if (lay_offset(r, B, kb, i, s, &off) < 0) {
			free(s);
			return -1;
		}
		if (B->sh && B->sh[off].init && memcmp(B->p + off * B->bytes, src + i * B->bytes, B->bytes)) {
			char e1[160], e2[160];

			for (j = 0; j < i; j++)
				if (lay_offset(r, B, kb, j, s, &o2) < 0 || o2 == off)
					break;
			free(s);
			elem_str(kb, j, e1, sizeof e1);
			elem_str(kb, i, e2, sizeof e2);
			return err_set(r->e, "kernel.run: input %s: %s and %s share offset %lld of its layout "
			               "(%s), and the binding gives them different values", kb->name, e1, e2,
			               (long long)off, kb->layout_desc);
		}
		memcpy(B->p + off * B->bytes, src + i * B->bytes, B->bytes);
		if (B->sh)
			B->sh[off].init = 1;
	}
	free(s);
	return 0;
}

/* Read output b back through its layout into row-major logical order. */
static int
readback(Run *r, int b, TBuf *out)
{
	const KBuf *kb = &r->k->buf[b];
	RBuf *B = &r->rb[b];
	Val *s = lay_slots(r, B);
	int64_t n = 1, i, off;
	unsigned char *d;

	if (!s)
		return -1;
	for (i = 0; i < kb->ndim; i++)
		n *= kb->shape[i];
	if (!(d = malloc(n > 0 ? (size_t)n * B->bytes : 1))) {
		free(s);
		return err_set(r->e, "kernel.run: out of memory for output %s", kb->name);
	}
	for (i = 0; i < n; i++) {
		if (lay_offset(r, B, kb, i, s, &off) < 0)
			goto fail;
		if (B->sh && !B->sh[off].init) {
			char el[160];

			elem_str(kb, i, el, sizeof el);
			err_set(r->e, "uninitialized: output %s (offset %lld) was never written by the end of "
			        "the run", el, (long long)off);
			goto fail;
		}
		memcpy(d + i * B->bytes, B->p + off * B->bytes, B->bytes);
	}
	free(s);
	memset(out, 0, sizeof *out);
	out->dtype = kb->dtype;
	out->ndim = kb->ndim;
	memcpy(out->shape, kb->shape, sizeof kb->shape);
	out->device = NULL;
	out->axis = -1;
	out->numel = n;
	out->data = d;
	return 0;
fail:
	free(s);
	free(d);
	return -1;
}

int
kernel_run(const Kernel *k, const KRunOpts *o, TBuf *bufs, KCounts *counts, Err *e)
{
	KRunOpts dflt = { .checks = 1 };
	Run r;
	Prog *progs = NULL;
	TBuf *outs = NULL;
	char what[K_NAME + 32];
	int i, rc = -1;

	if (!o)
		o = &dflt;
	memset(&r, 0, sizeof r);
	r.k = k;
	r.e = e;
	r.checks = o->checks;
	r.o = o;
	if (o->watch_msg && o->watch_len)
		o->watch_msg[0] = 0;
	r.counting = o->counts && counts;
	r.cnt = counts;
	r.limit = o->mem_limit ? o->mem_limit : (uint64_t)limits_get()->tensor_bytes;
	r.max_steps = o->max_steps > 0 ? o->max_steps : limits_get()->steps;
	r.left = r.max_steps;
	e->msg[0] = 0;
	if (limits_poll(e) < 0)   /* a Ctrl-C already pending */
		return -1;
	if (counts)
		memset(counts, 0, sizeof *counts);
	if (!k)
		return err_set(e, "kernel.run: no kernel");
	if (!bufs && k->nbuf)
		return err_set(e, "kernel.run: no buffer table");
	/* check the caller's inputs before allocating anything */
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		int64_t n = 1;
		int j;

		for (j = 0; j < kb->ndim; j++)
			n *= kb->shape[j];
		if (kb->role != KB_TEMP && kb->scope != AS_GLOBAL)
			return err_set(e, "kernel.run: %s %s is in %s memory; inputs and outputs are global",
			               krole_name(kb->role), kb->name, kscope_name(kb->scope));
		if (kb->role != KB_INPUT)
			continue;
		if (!bufs || !bufs[i].data)
			return err_set(e, "kernel.run: no data for input %s", kb->name);
		if (bufs[i].dtype != kb->dtype || bufs[i].numel != n)
			return err_set(e, "kernel.run: input %s: %lld elements of %s given, %lld of %s declared",
			               kb->name, (long long)bufs[i].numel, dtype_name(bufs[i].dtype), (long long)n,
			               dtype_name(kb->dtype));
	}
	if (!(r.rb = calloc(k->nbuf ? k->nbuf : 1, sizeof *r.rb))
	|| !(progs = calloc(k->nstage ? k->nstage : 1, sizeof *progs))
	|| !(outs = calloc(k->nbuf ? k->nbuf : 1, sizeof *outs))) {
		err_set(e, "kernel.run: out of memory");
		goto out;
	}
	for (i = 0; i < k->nstage; i++)
		if (compile_stage(k, &k->stage[i], &progs[i], e) < 0)
			goto out;
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		RBuf *B = &r.rb[i];

		B->t = kb->dtype;
		B->bytes = dtype_bytes(kb->dtype);
		B->scope = kb->scope;
		B->size = kb->size;
		if (compile_layout(k, i, &B->lay, e) < 0)
			goto out;
		if (kb->scope != AS_GLOBAL)
			continue;
		snprintf(what, sizeof what, "buffer %s", kb->name);
		if (!(B->p = rmalloc(&r, (uint64_t)B->size * B->bytes, 1, what)))
			goto out;
		snprintf(what, sizeof what, "the shadow state of %s", kb->name);
		if (r.checks && !(B->sh = rmalloc(&r, (uint64_t)B->size * sizeof *B->sh, 1, what)))
			goto out;
		if (kb->role == KB_INPUT && place(&r, i, &bufs[i]) < 0)
			goto out;
	}
	for (i = 0; i < k->nstage; i++)
		if (run_stage(&r, &progs[i], i) < 0)
			goto out;
	r.P = NULL;
	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_OUTPUT && readback(&r, i, &outs[i]) < 0)
			goto out;
	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_OUTPUT)
			bufs[i] = outs[i];
		else if (k->buf[i].role == KB_TEMP)
			memset(&bufs[i], 0, sizeof bufs[i]);
	rc = 0;
out:
	if (counts)
		counts->ops = r.ops;
	if (rc < 0 && outs)
		for (i = 0; i < k->nbuf; i++)
			free(outs[i].data);
	if (r.rb)
		for (i = 0; i < k->nbuf; i++) {
			free(r.rb[i].p);
			free(r.rb[i].sh);
			free(r.rb[i].init);
			prog_free(&r.rb[i].lay);
		}
	if (progs)
		for (i = 0; i < k->nstage; i++)
			prog_free(&progs[i]);
	free(progs);
	free(outs);
	free(r.rb);
	free(r.log);
	free(r.rel);
	free(r.acq);
	return rc;
}

int
kernel_inputs(const Kernel *k, const TEvalOpts *o, TBuf *bufs, Err *e)
{
	int i, j;

	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		int64_t n = 1;

		if (kb->role != KB_INPUT || !kb->tensor)
			continue;
		for (j = 0; j < kb->ndim; j++)
			n *= kb->shape[j];
		if (tensor_realize(kb->tensor, o, &bufs[i], e) < 0) {
			char m[sizeof e->msg];

			snprintf(m, sizeof m, "%s", e->msg);
			err_set(e, "kernel.inputs: %s: %s", kb->name, m);
			goto fail;
		}
		if (bufs[i].dtype != kb->dtype || bufs[i].numel != n) {
			err_set(e, "kernel.inputs: %s: the tensor realizes to %lld elements of %s, the buffer "
			        "holds %lld of %s", kb->name, (long long)bufs[i].numel, dtype_name(bufs[i].dtype),
			        (long long)n, dtype_name(kb->dtype));
			tbuf_free(&bufs[i]);
			goto fail;
		}
	}
	return 0;
fail:
	for (j = 0; j < i; j++)
		if (k->buf[j].role == KB_INPUT && k->buf[j].tensor)
			tbuf_free(&bufs[j]);
	return -1;
}

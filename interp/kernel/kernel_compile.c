/* kernel_compile.c - the kernel interpreter's compiler: a stage's statement tree, or a buffer's layout, to register bytecode (run.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../layout/layout.h"
#include "run.h"

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

void
kcomp_free(Prog *p)
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

int
kcomp_stage(const Kernel *k, const KStage *st, Prog *p, Err *e)
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
int
kcomp_layout(const Kernel *k, int b, Prog *p, Err *e)
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

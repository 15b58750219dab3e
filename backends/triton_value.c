/* triton_value.c - the Triton dialect's values: index arithmetic, values and loads, shared subexpressions, the frames of tile statements, register tiles read. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "triton.h"

int
tr_oom(Emit *E)
{
	return err_set(E->e, "triton: out of memory");
}

const char *
tr_stname(Emit *E, int st)
{
	return E->k->stage[st].name;
}

const char *
tr_ttype(DType t)
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

int
tr_isfloat(DType t)
{
	return t == DT_FLOAT32 || t == DT_FLOAT64 || t == DT_FLOAT16 || t == DT_BFLOAT16;
}

int64_t
tr_pow2(int64_t n)
{
	int64_t p = 1;

	while (p < n)
		p *= 2;
	return p;
}

/* ---- index arithmetic ---- */

/* Index arithmetic (index and bool values, no memory): uop_print writes it. */
int
tr_pure(TState *T, const UOp *u, int depth)
{
	uintptr_t v = (uintptr_t)pmap_get(&T->pure, u);
	int p, i;

	if (v)
		return v == 1;
	p = emit_index_op(u->op) && depth < E_MAXDEPTH && (u->dtype == DT_INDEX || (u->dtype == DT_BOOL
	    && (u->op == OP_CONST || (uop_info[u->op].flags & U_CMP) || u->op == OP_AND || u->op == OP_OR
	        || u->op == OP_XOR || u->op == OP_WHERE)));
	for (i = 0; i < u->nsrc && p; i++)
		p = tr_pure(T, u->src[i], depth + 1);
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


void
tr_tx_init(Tx *x)
{
	buf_init(&x->s);
	x->prec = P_TATOM;
}

void
tr_operand(Buf *b, const Tx *x, int prec)
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
unsigned
tr_axes_of(TState *T, const UOp *u)
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
int
tr_mask_text(TState *T, Buf *b, unsigned m)
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


/* x_ptr + off, off the buffer's layout at the access's indices */
int
tr_pointer(Emit *E, const UOp *ix, Buf *b, unsigned *axes, int depth)
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
		return tr_oom(E);
	tr_tx_init(&o);
	if (tr_value(E, off, &o, depth + 1) < 0) {
		buf_free(&o.s);
		return -1;
	}
	*axes = tr_axes_of(T, off);
	if (off->op == OP_CONST && off->arg[0] == 0)
		emit(b, "%s", T->pname[bi]);
	else {
		emit(b, "%s + ", T->pname[bi]);
		tr_operand(b, &o, P_TADD + 1);
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
	if (tr_is_reg(E, u->src[0])) {
		if (u->nsrc == 2)
			return err_set(E->e, "triton: stage %s: a gated read of register buffer %s",
			               tr_stname(E, T->S->st), u->src[0]->src[0]->name);
		return tr_reg_load(E, u->src[0], x);
	}
	emit(&x->s, "tl.load(");
	if (tr_pointer(E, u->src[0], &x->s, &axes, depth) < 0)
		return -1;
	buf_init(&m);
	nm = tr_mask_text(T, &m, axes);
	tr_tx_init(&g);
	rc = u->nsrc == 2 ? tr_value(E, u->src[1], &g, depth + 1) : 0;
	if (rc == 0 && (m.len || u->nsrc == 2)) {
		emit(&x->s, ", mask=");
		if (m.len && u->nsrc == 2) {
			emit(&x->s, nm > 1 ? "%s & " : "(%s) & ", m.s);
			tr_operand(&x->s, &g, P_TAND + 1);
		} else if (m.len)
			emit(&x->s, "%s", m.s);
		else
			tr_operand(&x->s, &g, 0);
		emit(&x->s, ", other=%s", tr_isfloat(E->k->buf[u->src[0]->src[0]->arg[0]].dtype) ? "0.0" : "0");
	}
	emit(&x->s, ")");
	x->prec = P_TATOM;
	buf_free(&m);
	buf_free(&g.s);
	return rc;
}

void
tr_call(Tx *x, const char *f, Tx *s, int n)
{
	int i;

	emit(&x->s, "%s(", f);
	for (i = 0; i < n; i++) {
		if (i)
			emit(&x->s, ", ");
		tr_operand(&x->s, &s[i], 0);
	}
	emit(&x->s, ")");
	x->prec = P_TATOM;
}

void
tr_binop(Tx *x, Tx *l, const char *op, Tx *r, int p)
{
	tr_operand(&x->s, l, p);
	emit(&x->s, " %s ", op);
	tr_operand(&x->s, r, p + 1);
	x->prec = p;
}

/* Python chains comparisons (a != b != True is a != b and b != True, and Triton refuses a
** chain): both operands of a comparison that are comparisons themselves are parenthesized */
static void
cmpop(Tx *x, Tx *l, const char *op, Tx *r)
{
	tr_operand(&x->s, l, P_TCMP + 1);
	emit(&x->s, " %s ", op);
	tr_operand(&x->s, r, P_TCMP + 1);
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
	tr_operand(&n, x, P_TATOM);
	emit(&n, ".to(tl.float32)");
	buf_free(&x->s);
	x->s = n;
	x->prec = P_TATOM;
}

static int
alu(Emit *E, const UOp *u, Tx *s, Tx *x)
{
	DType od = (DType)(u->op == OP_WHERE ? u->src[1]->dtype : u->src[0]->dtype);
	int fl = tr_isfloat(od);

	if (u->op == OP_SQRT || u->op == OP_EXP2 || u->op == OP_LOG2 || u->op == OP_SIN || u->op == OP_TRUNC)
		widen(&s[0], od);

	switch (u->op) {
	case OP_ADD: tr_binop(x, &s[0], "+", &s[1], P_TADD); break;
	case OP_SUB: tr_binop(x, &s[0], "-", &s[1], P_TADD); break;
	case OP_MUL: tr_binop(x, &s[0], "*", &s[1], P_TMUL); break;
	case OP_NEG:
		emit(&x->s, "-");
		tr_operand(&x->s, &s[0], P_TUNARY + (s[0].s.s && s[0].s.s[0] == '-'));
		x->prec = P_TUNARY;
		break;
	case OP_RECIP:
		if (!fl)
			return err_set(E->e, "triton: the reciprocal of an integer");
		emit(&x->s, "1.0 / ");
		tr_operand(&x->s, &s[0], P_TMUL + 1);
		x->prec = P_TMUL;
		break;
	case OP_SQRT: tr_call(x, od == DT_FLOAT64 ? "tl.sqrt" : "tl.sqrt_rn", s, 1); break;   /* float64's is IEEE */
	case OP_EXP2: tr_call(x, "tl.exp2", s, 1); break;
	case OP_LOG2: tr_call(x, "tl.log2", s, 1); break;
	case OP_SIN: tr_call(x, "tl.sin", s, 1); break;
	case OP_TRUNC:
		if (!fl) {
			buf_free(&x->s);
			*x = s[0];
			tr_tx_init(&s[0]);
			return 0;
		}
		emit(&x->s, "tl.where(");
		tr_operand(&x->s, &s[0], P_TCMP + 1);
		emit(&x->s, " < 0, tl.ceil(%s), tl.floor(%s))", s[0].s.s, s[0].s.s);
		break;
	case OP_MAX: tr_call(x, "tl.maximum", s, 2); break;
	case OP_MIN: tr_call(x, "tl.minimum", s, 2); break;
	case OP_WHERE: tr_call(x, "tl.where", s, 3); break;
	case OP_MULACC: {
		Tx p;

		tr_tx_init(&p);
		tr_binop(&p, &s[0], "*", &s[1], P_TMUL);
		tr_binop(x, &p, "+", &s[2], P_TADD);
		buf_free(&p.s);
		break;
	}
	case OP_CMPLT: cmpop(x, &s[0], "<", &s[1]); break;
	case OP_CMPNE: cmpop(x, &s[0], "!=", &s[1]); break;
	case OP_CMPEQ: cmpop(x, &s[0], "==", &s[1]); break;
	case OP_AND: tr_binop(x, &s[0], "&", &s[1], P_TAND); break;
	case OP_OR: tr_binop(x, &s[0], "|", &s[1], P_TOR); break;
	case OP_XOR: tr_binop(x, &s[0], "^", &s[1], P_TXOR); break;
	case OP_IDIV:
		if (!fl)
			return err_set(E->e, "triton: an integer division of values (the interpreter floors, Triton's "
			               "// truncates)");
		emit(&x->s, "tl.floor(");
		tr_operand(&x->s, &s[0], P_TMUL);
		emit(&x->s, " / ");
		tr_operand(&x->s, &s[1], P_TMUL + 1);
		emit(&x->s, ")");
		break;
	case OP_MOD:
		if (!fl)
			return err_set(E->e, "triton: an integer modulo of values (the interpreter floors, Triton's "
			               "%% truncates)");
		/* floor modulo: the remainder takes the divisor's sign */
		tr_operand(&x->s, &s[0], P_TADD);
		emit(&x->s, " - ");
		tr_operand(&x->s, &s[1], P_TMUL);
		emit(&x->s, " * tl.floor(");
		tr_operand(&x->s, &s[0], P_TMUL);
		emit(&x->s, " / ");
		tr_operand(&x->s, &s[1], P_TMUL + 1);
		emit(&x->s, ")");
		x->prec = P_TADD;
		break;
	default:
		return err_set(E->e, "triton: the value %s has no Triton form tessel writes yet", uop_info[u->op].name);
	}
	return 0;
}

int
tr_value(Emit *E, const UOp *u, Tx *x, int depth)
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
	if (tr_pure(T, u, 0)) {
		uop_print(&x->s, u, D_TRITON);
		x->prec = index_prec(u);
		return 0;
	}
	switch (u->op) {
	case OP_CONST:
		if (tr_isfloat((DType)u->dtype))
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
		tr_tx_init(&s[0]);
		if (tr_value(E, u->src[0], &s[0], depth + 1) < 0) {
			buf_free(&s[0].s);
			return -1;
		}
		if (u->dtype == DT_BOOL) {
			tr_operand(&x->s, &s[0], P_TCMP + 1);
			emit(&x->s, " != 0");
			x->prec = P_TCMP;
		} else if (!tr_ttype((DType)u->dtype)) {
			rc = err_set(E->e, "triton: a %s value", dtype_name((DType)u->dtype));
		} else if (tr_isfloat((DType)u->src[0]->dtype) && !tr_isfloat((DType)u->dtype)) {
			/* the interpreter's float to integer (dtype_ftoi): truncated, NaN 0, saturated to
			** int64, then wrapped to the dtype; Triton's own conversion gives NaN as INT64_MIN and
			** clamps a negative value to an unsigned dtype at 0. uint64 takes [2^63, 2^64) as is */
			Buf v;

			buf_init(&v);
			tr_operand(&v, &s[0], P_TATOM);
			if (u->dtype == DT_UINT64)
				emit(&x->s, "tl.where(%s != %s, 0, tl.where(%s < 9223372036854775808.0, %s.to(tl.int64).to(tl.uint64), "
				     "%s.to(tl.uint64)))", v.s, v.s, v.s, v.s, v.s);
			else
				emit(&x->s, "tl.where(%s != %s, 0, %s.to(tl.int64))%s%s%s", v.s, v.s, v.s,
				     u->dtype == DT_INT64 ? "" : ".to(", u->dtype == DT_INT64 ? "" : tr_ttype((DType)u->dtype),
				     u->dtype == DT_INT64 ? "" : ")");
			buf_free(&v);
			x->prec = P_TATOM;
		} else {
			tr_operand(&x->s, &s[0], P_TATOM);
			emit(&x->s, ".to(%s)", tr_ttype((DType)u->dtype));
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
		tr_tx_init(&s[i]);
	for (i = 0; i < u->nsrc && rc == 0; i++)
		rc = tr_value(E, u->src[i], &s[i], depth + 1);
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
	       && !tr_pure(T, u, 0);
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
		return tr_oom(E);
	for (i = 0; i < u->nsrc; i++)
		if (hoist_walk(E, c, done, u->src[i], ind, depth + 1) < 0)
			return -1;
	if ((uintptr_t)pmap_get(c, u) < 3 || !hoistable(T, u))
		return 0;
	tr_tx_init(&x);
	if (tr_value(E, u, &x, 0) < 0) {
		buf_free(&x.s);
		return -1;
	}
	do
		snprintf(name, sizeof name, "t%d", n++);
	while (emit_taken(E, name));
	if (!(nm = emit_fresh(E, name)) || pmap_put(&T->hoist, u, (void *)nm) < 0) {
		buf_free(&x.s);
		return tr_oom(E);
	}
	emit_indent(E->out, 2 * ind);
	emit(E->out, "%s = %s\n", nm, x.s.s ? x.s.s : "");
	buf_free(&x.s);
	return 0;
}

int
tr_hoist(Emit *E, UOp *const *roots, int n, int ind)
{
	PMap c = { 0 }, done = { 0 };
	int i, rc = 0;

	for (i = 0; i < n && rc == 0; i++)
		if (roots[i] && count(&c, roots[i], 0) < 0)
			rc = tr_oom(E);
	for (i = 0; i < n && rc == 0; i++)
		if (roots[i])
			rc = hoist_walk(E, &c, &done, roots[i], ind, 0);
	pmap_free(&c);
	pmap_free(&done);
	return rc;
}

/* ---- frames ---- */

/* The arange of loop variable v padded to pad, made once per stage. */
const Ar *
tr_arange(Emit *E, const UOp *v, int64_t pad)
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
int
tr_frame(Emit *E, int st, const UOp *const *r, int n)
{
	TState *T = E->aux;
	int64_t numel = 1;
	int f, g;

	T->nfr = 0;
	for (f = 0; f < n; f++) {
		const UOp *v = krange_var(r[f]);
		int64_t ext = krange_extent(r[f]), pad = T->blk == r[f] ? T->blk_size : tr_pow2(ext);
		const Ar *a = tr_arange(E, v, pad);
		Buf nm;

		if (!a)
			return tr_oom(E);
		if (numel > T_MAXTILE / pad)
			return err_set(E->e, "triton: stage %s: a tile of more than %d elements over loops ending in %s "
			               "(Triton's limit on a tensor); split a loop so that fewer are tiled together",
			               tr_stname(E, st), T_MAXTILE, v->name);
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
			return tr_oom(E);
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
			return tr_oom(E);
		T->nfr++;
	}
	return 0;
}

/* u with the frame's loop variables replaced by their aranges */
UOp *
tr_in_frame(Emit *E, UOp *u)
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

/*
** Register buffers. A buffer in registers (set_scope "local", compacted to
** what one program uses) is one tile, a variable of the program: each access
** must cover it whole, its dimensions of one element at 0 and each other one
** a frame axis of the same extent, in its own order. reg_axes gives the frame
** position of each dimension (-1 for the unit ones), or -1 with e set.
*/
int
tr_reg_axes(Emit *E, const UOp *ix, int *at)
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
			               tr_stname(E, T->S->st), B->name, d);
		at[d] = f;
	}
	return 0;
}

/* the register tile of buffer bi in the frame: None where it lacks an axis, permuted where its
** order differs */
int
tr_reg_load(Emit *E, const UOp *ix, Tx *x)
{
	TState *T = E->aux;
	const KBuf *B = &E->k->buf[ix->src[0]->arg[0]];
	int at[T_MAXDIM], ord[T_MAXDIM], pos[TILE_MAXLOOPS], n = 0, d, f, perm = 0;

	if (tr_reg_axes(E, ix, at) < 0)
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


int
tr_is_reg(Emit *E, const UOp *ix)
{
	return ix->op == OP_INDEX && ix->nsrc >= 1 && ix->src[0]->op == OP_DEFINE && ix->src[0]->arg[0] >= 0
	    && ix->src[0]->arg[0] < E->k->nbuf && E->k->buf[ix->src[0]->arg[0]].scope == AS_REG;
}

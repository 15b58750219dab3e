/* expr.c - value expressions of the C family with the interpreter's semantics, and a statement's shared subexpressions as named constants. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

/* a libm function in float32 (sqrtf) or double (sqrt); OpenCL C overloads one name for both */
#define F32(E, single, name) ((single) && !(E)->D->f32_overloaded ? name "f" : name)

/* ---- value expressions ---- */

/* uop_print's binding strength of a pure expression (print.c's prec for C) */
static int
index_prec(const UOp *u)
{
	int p;

	switch (u->op) {
	case OP_CONST: return u->arg[0] < 0 ? P_UNARY : P_ATOM;
	case OP_VAR: case OP_WHERE: case OP_MIN: case OP_MAX: case OP_CAST: return P_ATOM;
	case OP_IDIV: case OP_MOD:
		if (!(u->src[0]->vmin >= 0 && u->src[1]->vmin > 0))
			return P_ATOM;
		break;
	default:
		break;
	}
	p = uop_info[u->op].prec[1];
	return p ? p : P_ATOM;
}

void
ex_init(Ex *x)
{
	buf_init(&x->s);
	x->prec = P_ATOM;
	x->ct = DT_VOID;
}

static void
ex_set(Ex *x, int prec, DType ct)
{
	x->prec = prec;
	x->ct = ct;
}

void
emit_operand(Buf *b, const Ex *x, int prec)
{
	int paren = x->prec < prec;

	emit(b, "%s%s%s", paren ? "(" : "", x->s.s ? x->s.s : "", paren ? ")" : "");
}

const char *
emit_ctype(Emit *E, DType t)
{
	const char *s = E->D->type(t);

	return s ? s : "?";
}

static int
is64(DType t)
{
	return t == DT_INT64 || t == DT_INDEX || t == DT_UINT64;
}

/* Replace x's text by fmt around its old text: "%s" marks where (once). */
static void
wrap(Ex *x, const char *pre, int inner, const char *post, int prec)
{
	Buf n;

	buf_init(&n);
	emit(&n, "%s", pre);
	emit_operand(&n, x, inner);
	emit(&n, "%s", post);
	buf_free(&x->s);
	x->s = n;
	x->prec = prec;
}

/* A float constant: the shortest decimal that reads back as the value. */
static void
flit(Buf *b, double v, int single)
{
	char t[64];
	int p;

	if (isnan(v)) {
		emit(b, single ? "NAN" : "(double)NAN");
		return;
	}
	if (isinf(v)) {
		emit(b, "%s%s", v < 0 ? "-" : "", single ? "INFINITY" : "HUGE_VAL");
		return;
	}
	for (p = 1; p <= 17; p++) {
		snprintf(t, sizeof t, "%.*g", p, v);
		if (single ? (float)strtod(t, NULL) == (float)v : strtod(t, NULL) == v)
			break;
	}
	emit(b, "%s%s%s", t, strpbrk(t, ".en") ? "" : ".0", single ? "f" : "");
}

static int
konst(Emit *E, const UOp *u, Ex *x)
{
	DType t = (DType)u->dtype;

	if (isf(t) || t == DT_FLOAT16 || t == DT_BFLOAT16) {
		double v = uop_const_value(u);
		/* a float32 constant the dtype cannot hold computes in double, as the interpreter's does */
		int single = t == DT_FLOAT32 && (isnan(v) || (double)(float)v == v);

		/* a half constant is the interpreter's double, rounded where it is stored */
		if (!isf(t) && !(E->D->hconv && E->D->type(t)))
			return err_set(E->e, "%s: a %s constant", E->D->name, dtype_name(t));
		flit(&x->s, v, single);
		ex_set(x, x->s.s[0] == '-' ? P_UNARY : P_ATOM, single ? DT_FLOAT32 : DT_FLOAT64);
		return 0;
	}
	if (t == DT_BOOL) {
		emit(&x->s, "%s", u->arg[0] ? "true" : "false");
		ex_set(x, P_ATOM, DT_BOOL);
		return 0;
	}
	/* the literal's own C type is its ct: int, unsigned, long long or unsigned long long */
	{
		int64_t v = u->arg[0], lo, hi;

		dtype_range(t, &lo, &hi);
		if (t == DT_UINT64) {
			emit(&x->s, "%lluull", (unsigned long long)v);
			ex_set(x, P_ATOM, DT_UINT64);
		} else if (t == DT_UINT32 && v > INT32_MAX && v <= hi) {
			emit(&x->s, "%lldu", (long long)v);
			ex_set(x, P_ATOM, DT_UINT32);
		} else if (v > INT32_MIN && v <= INT32_MAX) {
			emit(&x->s, "%lld", (long long)v);
			ex_set(x, v < 0 ? P_UNARY : P_ATOM, DT_INT32);
		} else if (v == INT64_MIN) {
			emit(&x->s, "(-9223372036854775807ll - 1)");
			ex_set(x, P_ATOM, DT_INT64);
		} else {
			emit(&x->s, v == INT32_MIN ? "(-2147483647ll - 1)" : "%lldll", (long long)v);
			ex_set(x, v < 0 && v != INT32_MIN ? P_UNARY : P_ATOM, DT_INT64);
		}
	}
	return 0;
}

int
emit_convert(Emit *E, Ex *x, DType t)
{
	DType f = x->ct;
	char pre[48];

	if (f == t || (is64(f) && is64(t) && f != DT_UINT64 && t != DT_UINT64)) {
		x->ct = t;   /* index and int64 are both int64_t */
		return 0;
	}
	if (!E->D->type(t))
		return err_set(E->e, "%s: no %s values", E->D->name, dtype_name(t));
	if (ishalf(f) || ishalf(t)) {
		const char *fn;

		if (!E->D->hconv)
			return err_set(E->e, "%s: no %s values", E->D->name, dtype_name(ishalf(f) ? f : t));
		if (ishalf(f)) {
			/* widened to float32, exactly, then converted from there */
			if (!(fn = E->D->hconv(f, DT_FLOAT32)))
				return err_set(E->e, "%s: no %s values", E->D->name, dtype_name(f));
			snprintf(pre, sizeof pre, "%s(", fn);
			wrap(x, pre, 0, ")", P_ATOM);
			x->ct = DT_FLOAT32;
			return emit_convert(E, x, t);
		}
		/* rounded once from the value as the interpreter holds it (a double) */
		if (!isf(f) && emit_convert(E, x, DT_FLOAT64) < 0)
			return -1;
		if (!(fn = E->D->hconv(x->ct, t)))
			return err_set(E->e, "%s: no %s values", E->D->name, dtype_name(t));
		snprintf(pre, sizeof pre, "%s(", fn);
		wrap(x, pre, 0, ")", P_ATOM);
		x->ct = t;
		return 0;
	}
	if (t == DT_BOOL) {
		/* the interpreter's x != 0 (a NaN is true) */
		wrap(x, "", P_EQ + 1, " != 0", P_EQ);
	} else if (isf(f) && isf(t)) {
		snprintf(pre, sizeof pre, "(%s)", emit_ctype(E, t));
		wrap(x, pre, P_UNARY, "", P_UNARY);
	} else if (isf(f)) {
		/* truncated toward zero, NaN 0, saturated (dtype_ftoi) */
		E->need |= t == DT_UINT64 ? H_FTOU : H_FTOI;
		if (t == DT_UINT64)
			wrap(x, "tessel_ftou(", 0, ")", P_ATOM);
		else {
			wrap(x, "tessel_ftoi(", 0, ")", P_ATOM);
			if (!is64(t)) {
				snprintf(pre, sizeof pre, "(%s)", emit_ctype(E, t));
				wrap(x, pre, P_UNARY, "", P_UNARY);
			}
		}
	} else if (isf(t)) {
		/* integers go through double, rounded once more to float32 */
		if (t == DT_FLOAT32 && is64(f))
			wrap(x, "(float)(double)", P_UNARY, "", P_UNARY);
		else {
			snprintf(pre, sizeof pre, "(%s)", emit_ctype(E, t));
			wrap(x, pre, P_UNARY, "", P_UNARY);
		}
	} else {
		/* integers wrap to the width of t */
		snprintf(pre, sizeof pre, "(%s)", emit_ctype(E, t));
		wrap(x, pre, P_UNARY, "", P_UNARY);
	}
	x->ct = t;
	return 0;
}

void
ex_free(Ex *x, int n)
{
	int i;

	for (i = 0; i < n; i++)
		buf_free(&x[i].s);
}

/* a binary operator: left binds at p, right one tighter (C's operators associate left) */
static void
binop(Buf *b, const Ex *l, const char *op, const Ex *r, int p)
{
	emit_operand(b, l, p);
	emit(b, " %s ", op);
	emit_operand(b, r, p + 1);
}

static void
fcall(Buf *b, const char *f, const Ex *s, int n)
{
	int i;

	emit(b, "%s(", f);
	for (i = 0; i < n; i++) {
		if (i)
			emit(b, ", ");
		emit_operand(b, &s[i], 0);
	}
	emit(b, ")");
}

/*
** A float operation (operands of a float dtype), kernel_run's fop: computed
** in double, rounded to the node's dtype. Where all operands are float32
** and the operation is correctly rounded (+ - * / sqrt) or exact (min, max,
** select, neg, trunc, comparisons), one float32 operation gives the same
** bits; otherwise the operation runs in double and the result is cast.
*/
static int
falu(Emit *E, const UOp *u, Ex *s, Ex *x)
{
	int cmp = (uop_info[u->op].flags & U_CMP) != 0;
	int op = u->op, n = u->nsrc, i, single = cmp || u->dtype == DT_FLOAT32, any64 = 0;
	Buf *b = &x->s;

	for (i = op == OP_WHERE ? 1 : 0; i < n; i++) {
		if (!isf(s[i].ct))
			emit_convert(E, &s[i], DT_FLOAT64);   /* an integer operand is exact in double */
		if (s[i].ct != DT_FLOAT32)
			single = 0;
		any64 |= s[i].ct == DT_FLOAT64;
	}
	switch (op) {
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_NEG: case OP_RECIP: case OP_SQRT: case OP_TRUNC:
	case OP_MIN: case OP_MAX: case OP_WHERE: case OP_CMPLT: case OP_CMPNE: case OP_CMPEQ:
		break;
	default:
		single = 0;
	}
	/* fast: float32 in, float32 out is one float32 operation, whatever it is (exp2f, powf) */
	if (E->fast && u->dtype == DT_FLOAT32 && !any64 && op != OP_MOD) {
		single = 1;
		for (i = op == OP_WHERE ? 1 : 0; i < n; i++)
			single &= s[i].ct == DT_FLOAT32;
	}
	if (!single && ((!any64 && (op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_IDIV))
	|| (op == OP_MULACC && s[0].ct != DT_FLOAT64 && s[1].ct != DT_FLOAT64))) {
		/* float32 operands of a double operator: promote the first (calls promote by their
		** prototypes); a*b of mulacc is a double product whatever c is */
		for (i = 0; i < n; i++)
			if (s[i].ct == DT_FLOAT32) {
				wrap(&s[i], "(double)", P_UNARY, "", P_UNARY);
				s[i].ct = DT_FLOAT64;
				break;
			}
	}
	if (!single && E->D->overloads && (op == OP_SQRT || op == OP_TRUNC || op == OP_EXP2 || op == OP_LOG2
	                                   || op == OP_SIN || op == OP_POW))
		/* overloads would pick the float32 function (exp2f): the double one is the interpreter's */
		for (i = 0; i < n; i++)
			if (s[i].ct == DT_FLOAT32) {
				wrap(&s[i], "(double)", P_UNARY, "", P_UNARY);
				s[i].ct = DT_FLOAT64;
			}
	ex_set(x, P_ATOM, single ? DT_FLOAT32 : DT_FLOAT64);
	switch (op) {
	case OP_ADD: binop(b, &s[0], "+", &s[1], P_ADD); x->prec = P_ADD; break;
	case OP_SUB: binop(b, &s[0], "-", &s[1], P_ADD); x->prec = P_ADD; break;
	case OP_MUL: binop(b, &s[0], "*", &s[1], P_MUL); x->prec = P_MUL; break;
	case OP_NEG:
		/* exact: the operand's C type stays */
		emit(b, "-");
		emit_operand(b, &s[0], P_UNARY + (s[0].s.s && s[0].s.s[0] == '-'));
		ex_set(x, P_UNARY, s[0].ct);
		break;
	case OP_RECIP:
		emit(b, "%s / ", single ? "1.0f" : "1.0");
		emit_operand(b, &s[0], P_MUL + 1);
		x->prec = P_MUL;
		break;
	case OP_SQRT: fcall(b, F32(E, single, "sqrt"), s, 1); break;
	case OP_TRUNC: fcall(b, F32(E, single, "trunc"), s, 1); break;
	case OP_EXP2:
		if (single && E->fast && E->D->fast_exp2) {
			E->need |= H_EX2F;
			fcall(b, E->D->fast_exp2, s, 1);
		} else
			fcall(b, F32(E, single, "exp2"), s, 1);
		break;
	case OP_LOG2: fcall(b, F32(E, single, "log2"), s, 1); break;
	case OP_SIN: fcall(b, F32(E, single, "sin"), s, 1); break;
	case OP_POW: fcall(b, F32(E, single, "pow"), s, 2); break;
	case OP_IDIV: {
		Ex q;

		ex_init(&q);
		binop(&q.s, &s[0], "/", &s[1], P_MUL);
		q.prec = P_MUL;
		fcall(b, F32(E, single, "floor"), &q, 1);
		buf_free(&q.s);
		break;
	}
	case OP_MOD: E->need |= H_FMOD; fcall(b, "tessel_fmod", s, 2); break;
	case OP_MIN: case OP_MAX:
		if (single && E->fast) {
			/* a > b ? a : b, which the compiler turns into vector max instructions */
			E->need |= op == OP_MIN ? H_FMINF : H_FMAXF;
			fcall(b, op == OP_MIN ? "tessel_fminf" : "tessel_fmaxf", s, 2);
			break;
		}
		E->need |= op == OP_MIN ? (single ? H_MINF : H_MIN) : (single ? H_MAXF : H_MAX);
		fcall(b, op == OP_MIN ? (single ? "tessel_minf" : "tessel_min") : (single ? "tessel_maxf" : "tessel_max"),
		      s, 2);
		break;
	case OP_MULACC: {
		Ex p;

		ex_init(&p);
		binop(&p.s, &s[0], "*", &s[1], P_MUL);
		p.prec = P_MUL;
		binop(b, &p, "+", &s[2], P_ADD);
		x->prec = P_ADD;
		buf_free(&p.s);
		break;
	}
	case OP_WHERE:
		/* exact: C's type of the choice is the wider of the two */
		emit_operand(b, &s[0], P_COND + 3);
		emit(b, " ? ");
		emit_operand(b, &s[1], P_COND + 1);
		emit(b, " : ");
		emit_operand(b, &s[2], P_COND);
		ex_set(x, P_COND, s[1].ct == DT_FLOAT64 || s[2].ct == DT_FLOAT64 ? DT_FLOAT64 : DT_FLOAT32);
		break;
	case OP_CMPLT: binop(b, &s[0], "<", &s[1], P_REL); ex_set(x, P_REL, DT_BOOL); return 0;
	case OP_CMPNE: binop(b, &s[0], "!=", &s[1], P_EQ); ex_set(x, P_EQ, DT_BOOL); return 0;
	case OP_CMPEQ: binop(b, &s[0], "==", &s[1], P_EQ); ex_set(x, P_EQ, DT_BOOL); return 0;
	default:
		/* fop: bit operations on floats are NaN */
		emit(b, "%s", single ? "NAN" : "(double)NAN");
		break;
	}
	return emit_convert(E, x, (DType)u->dtype);
}

static int
narrow(DType t)
{
	return t == DT_INT8 || t == DT_INT16 || t == DT_INT32 || t == DT_UINT8 || t == DT_UINT16 || t == DT_UINT32;
}

/*
** An integer operation (kernel_run's iop): in int64 (uint64 when the first
** operand is uint64), wrapped to the node's dtype. Operands of one C type
** compute in that type: with -fwrapv its +, -, * and comparisons agree with
** int64's wrapped to it; mixed operands go through int64 first.
*/
/* An int-typed decimal literal, as konst writes it. */
static int
int_literal(const Ex *x)
{
	const char *p = x->s.s;

	if (x->ct != DT_INT32 || !p)
		return 0;
	p += *p == '-';
	if (!*p)
		return 0;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

static int
ialu(Emit *E, const UOp *u, Ex *s, Ex *x)
{
	int op = u->op, n = u->nsrc, i, same = 1, first = op == OP_WHERE ? 1 : 0;
	DType t = (DType)u->dtype, od = (DType)u->src[first]->dtype, wide = od == DT_UINT64 ? DT_UINT64 : DT_INT64;
	int uns = wide == DT_UINT64;
	Buf *b = &x->s;

	for (i = first; i < n; i++)
		if (isf(s[i].ct) || ishalf(s[i].ct))
			emit_convert(E, &s[i], DT_INT64);   /* tokind: truncated toward zero */
	for (i = first; i < n; i++)
		same &= s[i].ct == s[first].ct || (s[i].ct != DT_UINT64 && s[first].ct != DT_UINT64
		                                    && is64(s[i].ct) && is64(s[first].ct));
	switch (op) {
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_NEG: case OP_AND: case OP_OR: case OP_XOR:
	case OP_MULACC: case OP_WHERE: case OP_CMPLT: case OP_CMPNE: case OP_CMPEQ:
		/* C computes in 32 bits at least: a result wrapped to 32 bits or fewer agrees with
		** int64's; any other (64 bits, bool, a float taking the whole int64) needs 64-bit operands */
		if (!same || (uns && s[first].ct != DT_UINT64) || (!uns && s[first].ct == DT_UINT64)
		|| (!narrow(t) && !is64(s[first].ct) && op != OP_WHERE && !(uop_info[op].flags & U_CMP))) {
			int has_wide = 0;

			for (i = first; i < n; i++)
				has_wide |= is64(s[i].ct) && s[i].ct != DT_UINT64;
			/* an int literal beside one int64_t operand is converted by C itself: t - 40
			** (not in a mulacc, whose product could overflow int before the sum) */
			for (i = first; i < n; i++)
				if (has_wide && !uns && n - first == 2 && int_literal(&s[i]))
					s[i].ct = wide;
				else
					emit_convert(E, &s[i], wide);
		}
		break;
	default:
		break;
	}
	/* the type C computes in: int for the narrow types (promotion) */
	ex_set(x, P_ATOM, s[first].ct == DT_INT8 || s[first].ct == DT_INT16 || s[first].ct == DT_UINT8
	       || s[first].ct == DT_UINT16 || s[first].ct == DT_BOOL ? DT_INT32 : s[first].ct);
	switch (op) {
	case OP_ADD: binop(b, &s[0], "+", &s[1], P_ADD); x->prec = P_ADD; break;
	case OP_SUB: binop(b, &s[0], "-", &s[1], P_ADD); x->prec = P_ADD; break;
	case OP_MUL: binop(b, &s[0], "*", &s[1], P_MUL); x->prec = P_MUL; break;
	case OP_AND: case OP_OR: case OP_XOR:
		/* arithmetic under a bitwise operator is parenthesized, for the reader */
		binop(b, &s[0], op == OP_AND ? "&" : op == OP_OR ? "|" : "^", &s[1], P_ATOM - 1);
		x->prec = op == OP_AND ? P_AND : op == OP_OR ? P_OR : P_XOR;
		if (s[0].ct == DT_BOOL && s[1].ct == DT_BOOL)
			x->ct = DT_BOOL;   /* 0 and 1 stay 0 and 1 */
		break;
	case OP_NEG:
		emit(b, "-");
		emit_operand(b, &s[0], P_UNARY + (s[0].s.s && s[0].s.s[0] == '-'));
		x->prec = P_UNARY;
		break;
	case OP_MULACC: {
		Ex p;

		ex_init(&p);
		binop(&p.s, &s[0], "*", &s[1], P_MUL);
		p.prec = P_MUL;
		binop(b, &p, "+", &s[2], P_ADD);
		x->prec = P_ADD;
		buf_free(&p.s);
		break;
	}
	case OP_WHERE:
		emit_operand(b, &s[0], P_COND + 3);
		emit(b, " ? ");
		emit_operand(b, &s[1], P_COND + 1);
		emit(b, " : ");
		emit_operand(b, &s[2], P_COND);
		x->prec = P_COND;
		x->ct = s[1].ct;
		break;
	case OP_CMPLT: binop(b, &s[0], "<", &s[1], P_REL); ex_set(x, P_REL, DT_BOOL); return 0;
	case OP_CMPNE: binop(b, &s[0], "!=", &s[1], P_EQ); ex_set(x, P_EQ, DT_BOOL); return 0;
	case OP_CMPEQ: binop(b, &s[0], "==", &s[1], P_EQ); ex_set(x, P_EQ, DT_BOOL); return 0;
	default: {
		/* helpers in int64 or uint64, their arguments converted by their prototypes */
		const char *f = NULL;
		unsigned h = 0;

		switch (op) {
		case OP_IDIV: h = uns ? H_UDIV : H_IDIV; f = uns ? "tessel_udiv" : "tessel_idiv"; break;
		case OP_MOD: h = uns ? H_UMOD : H_IMOD; f = uns ? "tessel_umod" : "tessel_imod"; break;
		case OP_MIN: h = uns ? H_UMIN : H_IMIN; f = uns ? "tessel_umin" : "tessel_imin"; break;
		case OP_MAX: h = uns ? H_UMAX : H_IMAX; f = uns ? "tessel_umax" : "tessel_imax"; break;
		case OP_SHL: h = H_SHL; f = "tessel_shl"; break;
		case OP_SHR: h = uns ? H_USHR : H_SHR; f = uns ? "tessel_ushr" : "tessel_shr"; break;
		case OP_POW: h = uns ? H_UPOW : H_IPOW; f = uns ? "tessel_upow" : "tessel_ipow"; break;
		case OP_RECIP: h = H_IRECIP; f = "tessel_irecip"; break;
		case OP_THREEFRY: h = H_THREEFRY; f = "tessel_threefry"; break;
		default: break;
		}
		if (f) {
			E->need |= h;
			fcall(b, f, s, n);
			/* the helper's return type, then the operation's kind (shl and recip are signed helpers) */
			x->ct = strncmp(f, "tessel_u", 8) == 0 || op == OP_THREEFRY ? DT_UINT64 : DT_INT64;
			if (op != OP_THREEFRY)
				emit_convert(E, x, wide);
			/* kernel_run's min and max do not wrap: the int64 (uint64 for a uint64 node)
			** value stands for an integer node's */
			if ((op == OP_MIN || op == OP_MAX) && !isf(t)) {
				emit_convert(E, x, t == DT_UINT64 ? DT_UINT64 : DT_INT64);
				return 0;
			}
		} else {
			/* iop: transcendental operations on integers are 0 */
			emit(b, "0");
			x->ct = DT_INT64;
		}
		break;
	}
	}
	if (x->ct == DT_BOOL && t != DT_BOOL)
		x->ct = DT_INT32;
	/* an integer result of a float node is an int64 to the interpreter, whatever the operands were */
	if (isf(t) && x->ct == DT_UINT64)
		emit_convert(E, x, DT_INT64);
	return emit_convert(E, x, t);
}

static int value(Emit *E, const UOp *u, Ex *x, int depth);

static int
load(Emit *E, const UOp *u, Ex *x, int depth)
{
	const UOp *ix = u->src[0];
	UOp *off;
	Ex o, g;
	int b;

	if (u->nsrc < 1 || u->nsrc > 2 || ix->op != OP_INDEX)
		return err_set(E->e, "%s: a load of something that is not an index", E->D->name);
	if (!(off = emit_index_offset(E, ix)))
		return -1;
	b = (int)ix->src[0]->arg[0];
	ex_init(&o);
	ex_init(&g);
	if (value(E, off, &o, depth + 1) < 0 || (u->nsrc == 2 && value(E, u->src[1], &g, depth + 1) < 0)) {
		ex_free(&o, 1);
		ex_free(&g, 1);
		return -1;
	}
	{
		Ex el;
		DType t = E->k->buf[b].dtype;

		ex_init(&el);
		emit(&el.s, "%s[", E->bname[b]);
		emit_operand(&el.s, &o, 0);
		emit(&el.s, "]");
		ex_set(&el, P_ATOM, t);
		/* a gated half value is used as its float32 value (0 is no half) */
		if (ishalf(t) && u->nsrc == 2 && emit_convert(E, &el, DT_FLOAT32) < 0) {
			ex_free(&el, 1);
			ex_free(&o, 1);
			ex_free(&g, 1);
			return -1;
		}
		if (u->nsrc == 2) {
			/* gated: 0 where the gate is false, memory untouched */
			emit_operand(&x->s, &g, P_COND + 3);
			emit(&x->s, " ? ");
			emit_operand(&x->s, &el, P_COND + 1);
			emit(&x->s, " : %s", isf(el.ct) ? (el.ct == DT_FLOAT32 ? "0.0f" : "0.0")
			     : el.ct == DT_BOOL ? "false" : "0");
			ex_set(x, P_COND, el.ct);
			ex_free(&el, 1);
		} else {
			buf_free(&x->s);
			*x = el;
		}
	}
	ex_free(&o, 1);
	ex_free(&g, 1);
	return 0;
}

static int
value(Emit *E, const UOp *u, Ex *x, int depth)
{
	const char *name;
	Ex s[3];
	const char *h;
	int i, rc;

	if (depth > E_MAXDEPTH)
		return err_set(E->e, "%s: an expression nests deeper than %d", E->D->name, E_MAXDEPTH);
	if ((h = pmap_get(&E->hoist, u))) {
		/* a named constant: its C type is the first byte */
		emit(&x->s, "%s", h + 1);
		ex_set(x, P_ATOM, (DType)h[0]);
		return 0;
	}
	if (E->vec.n && (name = pmap_get(&E->vec, u))) {
		/* a value written before the statement: a vector load's component, a vector's name */
		emit(&x->s, "%s", name);
		ex_set(x, P_ATOM, u->dtype == DT_FLOAT64 ? DT_FLOAT64 : DT_FLOAT32);
		return 0;
	}
	if (emit_pure(E, u)) {
		/* index arithmetic in the dialect's syntax, floor division included */
		uop_print(&x->s, u, E->D->d);
		ex_set(x, index_prec(u), (DType)u->dtype);
		return 0;
	}
	switch (u->op) {
	case OP_CONST:
		return konst(E, u, x);
	case OP_VAR:
		emit(&x->s, "%s", u->name);
		ex_set(x, P_ATOM, DT_INDEX);
		return 0;
	case OP_LOAD:
		if (u == E->accload) {
			emit(&x->s, "%s", E->accname);
			ex_set(x, P_ATOM, (DType)E->k->buf[u->src[0]->src[0]->arg[0]].dtype);
			return 0;
		}
		return load(E, u, x, depth);
	case OP_SHUFFLE:
		if (!E->D->shuffle)
			return err_set(E->e, "%s: a shuffle", E->D->name);
		return E->D->shuffle(E, u, x);
	case OP_CAST:
		if (u->nsrc != 1)
			break;
		ex_init(&s[0]);
		if (value(E, u->src[0], &s[0], depth + 1) < 0) {
			ex_free(s, 1);
			return -1;
		}
		buf_free(&x->s);
		*x = s[0];
		return emit_convert(E, x, (DType)u->dtype);
	default:
		break;
	}
	if (!(uop_info[u->op].flags & U_ALU) || u->nsrc != uop_info[u->op].arity || u->nsrc > 3)
		return err_set(E->e, "%s: %s is not a value the emitter knows", E->D->name, uop_info[u->op].name);
	if (!E->D->type((DType)u->dtype))
		return err_set(E->e, "%s: a %s value (%s)", E->D->name, dtype_name((DType)u->dtype),
		               uop_info[u->op].name);
	for (i = 0; i < u->nsrc; i++)
		ex_init(&s[i]);
	rc = 0;
	for (i = 0; i < u->nsrc && rc == 0; i++)
		rc = value(E, u->src[i], &s[i], depth + 1);
	if (rc == 0) {
		DType od = (DType)(u->op == OP_WHERE ? u->src[1]->dtype : u->src[0]->dtype);

		if (u->op == OP_TRUNC && !isf(od) && !ishalf(od)) {
			/* iop: trunc of an integer is itself */
			buf_free(&x->s);
			*x = s[0];
			ex_init(&s[0]);
			rc = emit_convert(E, x, (DType)u->dtype);
		} else
			rc = isf(od) || ishalf(od) ? falu(E, u, s, x) : ialu(E, u, s, x);
	}
	ex_free(s, u->nsrc);
	return rc;
}

int
emit_value(Emit *E, const UOp *u, Ex *x)
{
	return value(E, u, x, 0);
}

/* ---- shared subexpressions of a statement ---- */

typedef struct Refs {
	Emit *E;
	PMap count;     /* node -> count + 1 */
} Refs;

static int
bump(Refs *r, const UOp *u)
{
	uintptr_t c = (uintptr_t)pmap_get(&r->count, u);

	return pmap_put(&r->count, u, (void *)(c ? c + 1 : 2));
}

/* every edge of the statement's DAG, an access reaching its offset */
static int
refs_fn(void *aux, const UOp *u)
{
	Refs *r = aux;
	int i;

	for (i = 0; i < u->nsrc; i++)
		if (bump(r, emit_child(r->E, u, i)) < 0)
			return -2;
	return 0;
}

static int
hoistable(Emit *E, const UOp *u)
{
	return (uop_info[u->op].flags & U_ALU) && u->nsrc > 0 && u->op != OP_CAST && !emit_pure(E, u);
}

typedef struct Hoist {
	Emit *E;
	Refs *r;
	int ind;
	int rc;
} Hoist;

static int
hoist_fn(void *aux, const UOp *u)
{
	Hoist *h = aux;
	Emit *E = h->E;
	char name[32];
	const char *nm;
	Ex x;

	if ((uintptr_t)pmap_get(&h->r->count, u) < 3 || !hoistable(E, u))
		return 0;
	ex_init(&x);
	if (value(E, u, &x, 0) < 0) {
		ex_free(&x, 1);
		return -1;
	}
	do
		snprintf(name + 1, sizeof name - 1, "t%d", E->ntemp++);
	while (emit_taken(E, name + 1));
	name[0] = (char)x.ct;
	if (!(nm = emit_own(E, name)) || pmap_put(&E->hoist, u, (void *)nm) < 0) {
		ex_free(&x, 1);
		return emit_oom(E);
	}
	emit_indent(E->out, h->ind);
	emit(E->out, "const %s %s = %s;\n", emit_ctype(E, x.ct), nm + 1, x.s.s ? x.s.s : "");
	ex_free(&x, 1);
	return 0;
}

/*
** Values a statement uses more than once (a DAG node with two users) become
** named constants before it, sources first, so that the text grows with the
** DAG and not with the tree. Index arithmetic, loads and casts are printed
** where they are used.
*/
int
emit_hoist(Emit *E, UOp *const *roots, int n, int ind)
{
	Refs r = { E, { 0 } };
	Hoist h = { E, &r, ind, 0 };
	const UOp *rt[8];
	int i, k = 0, rc;

	for (i = 0; i < n; i++) {
		const UOp *u = roots[i];

		if (!u)
			continue;
		if (u->op == OP_INDEX && !(u = emit_index_offset(E, u)))
			return -1;
		rt[k++] = u;
		if (bump(&r, u) < 0) {
			pmap_free(&r.count);
			return emit_oom(E);
		}
	}
	rc = emit_walk(E, rt, k, refs_fn, &r);
	if (rc == 0)
		rc = emit_walk(E, rt, k, hoist_fn, &h);
	pmap_free(&r.count);
	if (rc == -2)
		return emit_oom(E);
	return rc;
}

void
emit_unhoist(Emit *E)
{
	pmap_free(&E->hoist);
}

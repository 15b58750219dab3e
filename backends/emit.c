/* emit.c - the dialect-independent walk of the emitters: names, stage shapes, statements, value expressions with the interpreter's semantics. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/limits.h"
#include "emit.h"

/* ---- bookkeeping ---- */

static int
oom(Emit *E)
{
	return err_set(E->e, "%s: out of memory", E->D->name);
}

/* A copy of s kept until the walk ends (the maps point at these). */
static char *
own(Emit *E, const char *s)
{
	char *c;

	if (E->nowned == E->capowned) {
		int cap = E->capowned ? 2 * E->capowned : 64;
		char **n = realloc(E->owned, cap * sizeof *n);

		if (!n)
			return NULL;
		E->owned = n;
		E->capowned = cap;
	}
	if (!(c = malloc(strlen(s) + 1)))
		return NULL;
	strcpy(c, s);
	E->owned[E->nowned++] = c;
	return c;
}

/* the dialect's words, the emitter's prefix and the implementation's */
static int
reserved(const Emit *E, const char *name)
{
	int i;

	if (strncmp(name, "tessel_", 7) == 0 || strncmp(name, "__", 2) == 0
	|| (name[0] == '_' && isupper((unsigned char)name[1])))
		return 1;
	for (i = 0; E->D->reserved[i]; i++)
		if (strcmp(E->D->reserved[i], name) == 0)
			return 1;
	return 0;
}

int
emit_taken(const Emit *E, const char *name)
{
	int i;

	if (reserved(E, name))
		return 1;
	for (i = 0; i < E->ntaken; i++)
		if (strcmp(E->taken[i], name) == 0)
			return 1;
	return 0;
}

static int
take(Emit *E, const char *name)
{
	char *c;

	if (E->ntaken == E->captaken) {
		int cap = E->captaken ? 2 * E->captaken : 64;
		char **n = realloc(E->taken, cap * sizeof *n);

		if (!n)
			return -1;
		E->taken = n;
		E->captaken = cap;
	}
	if (!(c = own(E, name)))
		return -1;
	E->taken[E->ntaken++] = c;
	return 0;
}

const char *
emit_fresh(Emit *E, const char *base)
{
	char n[K_NAME + 16];
	int i;

	snprintf(n, sizeof n, "%s", base);
	for (i = 1; emit_taken(E, n); i++)
		snprintf(n, sizeof n, "%s_%d", base, i);
	if (take(E, n) < 0)
		return NULL;
	return E->taken[E->ntaken - 1];
}

void
emit_indent(Buf *b, int ind)
{
	emit(b, "%*s", 2 * ind, "");
}

int64_t
emit_numel(const KBuf *b)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < b->ndim; i++)
		n *= b->shape[i];
	return n;
}

/* ---- walking the DAG without recursion ---- */

static UOp *index_offset(Emit *E, const UOp *ix);

/* The i-th source of u as the walk sees it: with E, an INDEX stands for its offset. */
static const UOp *
child(Emit *E, const UOp *u, int i)
{
	const UOp *c = u->src[i];

	return E && c->op == OP_INDEX && (u->op == OP_LOAD || u->op == OP_STORE) ? index_offset(E, c) : c;
}

/* Every node under the roots once, sources first (post-order); fn may stop
** the walk with -1 (-2: out of memory). With E, loads and stores reach the
** offsets of their INDEX nodes instead of the INDEX nodes. */
static int
walk(Emit *E, const UOp *const *roots, int nroots, int (*fn)(void *, const UOp *), void *aux)
{
	PMap seen = { 0 };
	const UOp **st = NULL;
	int *nx = NULL;
	size_t sp = 0, cap = 0;
	int r, r2, rc = 0;

	for (r = 0; r < nroots && rc == 0; r++) {
		if (!roots[r] || pmap_get(&seen, roots[r]))
			continue;
		if (sp == cap) {
			cap = cap ? 2 * cap : 256;
			if (!(st = realloc(st, cap * sizeof *st)) || !(nx = realloc(nx, cap * sizeof *nx))) {
				rc = -2;
				break;
			}
		}
		st[sp] = roots[r];
		nx[sp++] = 0;
		if (pmap_put(&seen, roots[r], (void *)1) < 0) {
			rc = -2;
			break;
		}
		while (sp && rc == 0) {
			const UOp *u = st[sp - 1];

			if (nx[sp - 1] < u->nsrc) {
				const UOp *c = child(E, u, nx[sp - 1]++);

				if (!c) {
					rc = -1;
					break;
				}
				if (pmap_get(&seen, c))
					continue;
				if (pmap_put(&seen, c, (void *)1) < 0) {
					rc = -2;
					break;
				}
				if (sp == cap) {
					const UOp **ns;
					int *nn;

					cap *= 2;
					ns = realloc(st, cap * sizeof *st);
					if (ns)
						st = ns;
					nn = realloc(nx, cap * sizeof *nx);
					if (nn)
						nx = nn;
					if (!ns || !nn) {
						rc = -2;
						break;
					}
				}
				st[sp] = c;
				nx[sp++] = 0;
				continue;
			}
			sp--;
			if ((r2 = fn(aux, u)) < 0)
				rc = r2;
		}
	}
	free(st);
	free(nx);
	pmap_free(&seen);
	return rc;
}

/* ---- pure index arithmetic: printed by uop_print ---- */

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

static int
pure_fn(void *aux, const UOp *u)
{
	Emit *E = aux;
	/* bool arithmetic wraps (-true is true): only truth values (constants, comparisons, logic) */
	int p = index_op(u->op) && (u->dtype == DT_INDEX || (u->dtype == DT_BOOL && (u->op == OP_CONST
	        || (uop_info[u->op].flags & U_CMP) || u->op == OP_AND || u->op == OP_OR || u->op == OP_XOR
	        || u->op == OP_WHERE))), i;

	for (i = 0; i < u->nsrc && p; i++)
		p = pmap_get(&E->pure, u->src[i]) == (void *)1;
	return pmap_put(&E->pure, u, (void *)(uintptr_t)(p ? 1 : 2));
}

/* Index arithmetic on index and bool values only, no memory: uop_print prints it. */
static int
pure(Emit *E, const UOp *u)
{
	void *v = pmap_get(&E->pure, u);

	if (!v) {
		if (walk(NULL, &u, 1, pure_fn, E) < 0)
			return 0;
		v = pmap_get(&E->pure, u);
	}
	return v == (void *)1;
}

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

/* ---- offsets ---- */

/* the row-major offset of (v[0], ..., v[n-1]), as kernel_add_buffer builds it */
static UOp *
row_major(UCtx *c, UOp *const *v, const int64_t *shape, int n)
{
	UOp *o = uop_int(c, 0);
	int i;

	for (i = 0; i < n && o; i++)
		o = uop_add(c, uop_mul(c, o, uop_int(c, shape[i])), v[i]);
	return o;
}

int
emit_row_major(Emit *E, int b)
{
	KBuf *kb = &E->k->buf[b];

	return kb->size == emit_numel(kb) && kb->layout == row_major(E->k->c, kb->lvar, kb->shape, kb->ndim);
}

UOp *
emit_offset(Emit *E, int b, UOp *const *idx)
{
	UOp *o = kernel_offset(E->k, b, idx), *s;
	Err ie;

	if (o && pure(E, o) && uop_simplify(E->k->c, o, &s, &ie) == 0 && s)
		o = s;
	return o;
}

static UOp *
index_offset(Emit *E, const UOp *ix)
{
	UOp *o = pmap_get(&E->off, ix);

	if (o)
		return o;
	if (ix->nsrc < 1 || ix->src[0]->op != OP_DEFINE || ix->src[0]->arg[0] < 0
	|| ix->src[0]->arg[0] >= E->k->nbuf || ix->nsrc - 1 != E->k->buf[ix->src[0]->arg[0]].ndim) {
		err_set(E->e, "%s: an access to something that is not a buffer of this kernel", E->D->name);
		return NULL;
	}
	if (!(o = emit_offset(E, (int)ix->src[0]->arg[0], (UOp *const *)ix->src + 1))
	|| pmap_put(&E->off, ix, o) < 0) {
		oom(E);
		return NULL;
	}
	return o;
}

/* ---- value expressions ---- */

static void
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

static const char *
ctype(Emit *E, DType t)
{
	const char *s = E->D->type(t);

	return s ? s : "?";
}

static int
isf(DType t)
{
	return t == DT_FLOAT32 || t == DT_FLOAT64;
}

/* float16 and bfloat16: a dialect's 16-bit storage types, computed through float32 (EmitDialect.hconv) */
static int
ishalf(DType t)
{
	return t == DT_FLOAT16 || t == DT_BFLOAT16;
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
		snprintf(pre, sizeof pre, "(%s)", ctype(E, t));
		wrap(x, pre, P_UNARY, "", P_UNARY);
	} else if (isf(f)) {
		/* truncated toward zero, NaN 0, saturated (dtype_ftoi) */
		E->need |= t == DT_UINT64 ? H_FTOU : H_FTOI;
		if (t == DT_UINT64)
			wrap(x, "tessel_ftou(", 0, ")", P_ATOM);
		else {
			wrap(x, "tessel_ftoi(", 0, ")", P_ATOM);
			if (!is64(t)) {
				snprintf(pre, sizeof pre, "(%s)", ctype(E, t));
				wrap(x, pre, P_UNARY, "", P_UNARY);
			}
		}
	} else if (isf(t)) {
		/* integers go through double, rounded once more to float32 */
		if (t == DT_FLOAT32 && is64(f))
			wrap(x, "(float)(double)", P_UNARY, "", P_UNARY);
		else {
			snprintf(pre, sizeof pre, "(%s)", ctype(E, t));
			wrap(x, pre, P_UNARY, "", P_UNARY);
		}
	} else {
		/* integers wrap to the width of t */
		snprintf(pre, sizeof pre, "(%s)", ctype(E, t));
		wrap(x, pre, P_UNARY, "", P_UNARY);
	}
	x->ct = t;
	return 0;
}

static void
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
	case OP_SQRT: fcall(b, single ? "sqrtf" : "sqrt", s, 1); break;
	case OP_TRUNC: fcall(b, single ? "truncf" : "trunc", s, 1); break;
	case OP_EXP2:
		if (single && E->fast && E->D->fast_exp2) {
			E->need |= H_EX2F;
			fcall(b, E->D->fast_exp2, s, 1);
		} else
			fcall(b, single ? "exp2f" : "exp2", s, 1);
		break;
	case OP_LOG2: fcall(b, single ? "log2f" : "log2", s, 1); break;
	case OP_SIN: fcall(b, single ? "sinf" : "sin", s, 1); break;
	case OP_POW: fcall(b, single ? "powf" : "pow", s, 2); break;
	case OP_IDIV: {
		Ex q;

		ex_init(&q);
		binop(&q.s, &s[0], "/", &s[1], P_MUL);
		q.prec = P_MUL;
		fcall(b, single ? "floorf" : "floor", &q, 1);
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
	if (!(off = index_offset(E, ix)))
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
	if (pure(E, u)) {
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
		if (E->vec.n && (name = pmap_get(&E->vec, u))) {
			emit(&x->s, "%s", name);
			ex_set(x, P_ATOM, DT_FLOAT32);
			return 0;
		}
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
		if (bump(r, child(r->E, u, i)) < 0)
			return -2;
	return 0;
}

static int
hoistable(Emit *E, const UOp *u)
{
	return (uop_info[u->op].flags & U_ALU) && u->nsrc > 0 && u->op != OP_CAST && !pure(E, u);
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
	if (!(nm = own(E, name)) || pmap_put(&E->hoist, u, (void *)nm) < 0) {
		ex_free(&x, 1);
		return oom(E);
	}
	emit_indent(E->out, h->ind);
	emit(E->out, "const %s %s = %s;\n", ctype(E, x.ct), nm + 1, x.s.s ? x.s.s : "");
	ex_free(&x, 1);
	return 0;
}

/*
** Values a statement uses more than once (a DAG node with two users) become
** named constants before it, sources first, so that the text grows with the
** DAG and not with the tree. Index arithmetic, loads and casts are printed
** where they are used.
*/
static int
hoist(Emit *E, UOp *const *roots, int n, int ind)
{
	Refs r = { E, { 0 } };
	Hoist h = { E, &r, ind, 0 };
	const UOp *rt[8];
	int i, k = 0, rc;

	for (i = 0; i < n; i++) {
		const UOp *u = roots[i];

		if (!u)
			continue;
		if (u->op == OP_INDEX && !(u = index_offset(E, u)))
			return -1;
		rt[k++] = u;
		if (bump(&r, u) < 0) {
			pmap_free(&r.count);
			return oom(E);
		}
	}
	rc = walk(E, rt, k, refs_fn, &r);
	if (rc == 0)
		rc = walk(E, rt, k, hoist_fn, &h);
	pmap_free(&r.count);
	if (rc == -2)
		return oom(E);
	return rc;
}

static void
unhoist(Emit *E)
{
	pmap_free(&E->hoist);
}

/* ---- statements ---- */

const char *
emit_loop_note(const UOp *r, char *buf, size_t n)
{
	AxisType t = krange_type(r);
	HwAxis hw = krange_hw(r);
	char ty[24];
	int i;

	snprintf(ty, sizeof ty, "%s", axistype_name(t));
	for (i = 0; ty[i]; i++)
		ty[i] = (char)tolower((unsigned char)ty[i]);
	if (hw != HW_NONE)
		snprintf(buf, n, "%s", hwaxis_name(hw));
	else if (t != AX_LOOP)
		snprintf(buf, n, "%s", ty);
	else
		buf[0] = 0;
	return buf;
}

static int
store(Emit *E, EStage *S, const UOp *s, int ind)
{
	const UOp *ix = s->src[0], *v = s->src[1];
	const KBuf *kb;
	UOp *off, *roots[3];
	Ex o, x, g;
	const char *op = NULL;
	int b, rc = -1;

	if (s->nsrc < 2 || s->nsrc > 3 || ix->op != OP_INDEX)
		return err_set(E->e, "%s: stage %s: a store to something that is not an index", E->D->name,
		               E->k->stage[S->st].name);
	if (!(off = index_offset(E, ix)))
		return -1;
	b = (int)ix->src[0]->arg[0];
	kb = &E->k->buf[b];
	roots[0] = (UOp *)ix;
	roots[1] = (UOp *)v;
	roots[2] = s->nsrc > 2 ? s->src[2] : NULL;
	ex_init(&o);
	ex_init(&x);
	ex_init(&g);
	if (hoist(E, roots, 3, ind) < 0)
		goto out;
	/* an update x[i] = x[i] op v of the buffer's dtype prints as x[i] op= v */
	if ((v->op == OP_ADD || v->op == OP_MUL) && v->dtype == kb->dtype && !ishalf(kb->dtype)
	&& !pmap_get(&E->hoist, v)) {
		int w = v->src[0]->op == OP_LOAD && v->src[0]->nsrc == 1 && v->src[0]->src[0] == ix ? 1
		      : v->src[1]->op == OP_LOAD && v->src[1]->nsrc == 1 && v->src[1]->src[0] == ix ? 0 : -1;

		if (w >= 0) {
			if (value(E, v->src[w], &x, 0) < 0)
				goto out;
			/* C converts the right side to the left's type first: only where that is exact */
			if (x.ct == kb->dtype || (kb->dtype == DT_FLOAT32 && x.ct == DT_FLOAT64)
			|| (isf(kb->dtype) && x.ct == DT_FLOAT32))
				op = v->op == OP_ADD ? "+=" : "*=";
			else
				buf_reset(&x.s);
		}
	}
	if (!op && value(E, v, &x, 0) < 0)
		goto out;
	/* dtype_store_i puts an integer into a float buffer as a signed one, uint64 included */
	if (!op && isf(kb->dtype) && x.ct == DT_UINT64)
		emit_convert(E, &x, DT_INT64);
	if (!op && emit_convert(E, &x, kb->dtype) < 0)
		goto out;
	if (value(E, off, &o, 0) < 0 || (s->nsrc > 2 && value(E, s->src[2], &g, 0) < 0))
		goto out;
	emit_indent(E->out, ind);
	if (s->nsrc > 2) {
		emit(E->out, "if (");
		emit_operand(E->out, &g, 0);
		emit(E->out, ")\n");
		emit_indent(E->out, ind + 1);
	}
	if (s == E->accstore)
		emit(E->out, "%s %s ", E->accname, op ? op : "=");
	else {
		emit(E->out, "%s[", E->bname[b]);
		emit_operand(E->out, &o, 0);
		emit(E->out, "] %s ", op ? op : "=");
	}
	emit_operand(E->out, &x, 0);
	emit(E->out, ";\n");
	rc = 0;
out:
	unhoist(E);
	ex_free(&o, 1);
	ex_free(&x, 1);
	ex_free(&g, 1);
	return rc;
}

/*
** An ATOMIC through the dialect's function, fn(&buf[off], value), its result
** stored to the old value's register element when there is one; or, where
** the dialect runs blocks one after another (fn ""), as a plain
** read-modify-write in a block of its own, the integer add wrapping as the
** interpreter's does. The value is converted to the element's type first,
** as a store converts it.
*/
static int
atomic(Emit *E, EStage *S, const UOp *s, int ind)
{
	const UOp *ix, *ox;
	const char *fn, *ty;
	UOp *off, *ooff = NULL, *roots[3];
	Ex o, x, oo;
	int b, ob = -1, rc = -1;
	DType t;

	if (!E->D->atomic)
		return err_set(E->e, "%s: stage %s: an %s; the %s dialect has no atomics", E->D->name,
		               E->k->stage[S->st].name, uop_info[s->op].name, E->D->name);
	if (!(fn = E->D->atomic(E, S, s)))
		return -1;
	if (s->op == OP_FENCE) {
		emit_indent(E->out, ind);
		emit(E->out, "%s\n", fn);
		return 0;
	}
	if (s->nsrc < 2 || s->nsrc > 3 || s->src[0]->op != OP_INDEX || (s->nsrc == 3 && s->src[2]->op != OP_INDEX))
		return err_set(E->e, "%s: stage %s: an atomic that is not (element, value [, old element])", E->D->name,
		               E->k->stage[S->st].name);
	ix = s->src[0];
	ox = s->nsrc == 3 ? s->src[2] : NULL;
	b = (int)ix->src[0]->arg[0];
	t = E->k->buf[b].dtype;
	ty = E->D->type(t);
	if (!(off = index_offset(E, ix)) || (ox && !(ooff = index_offset(E, ox))))
		return -1;
	if (ox)
		ob = (int)ox->src[0]->arg[0];
	roots[0] = (UOp *)ix;
	roots[1] = s->src[1];
	roots[2] = (UOp *)ox;
	ex_init(&o);
	ex_init(&x);
	ex_init(&oo);
	if (hoist(E, roots, 3, ind) < 0 || value(E, s->src[1], &x, 0) < 0 || emit_convert(E, &x, t) < 0
	|| value(E, off, &o, 0) < 0 || (ooff && value(E, ooff, &oo, 0) < 0))
		goto out;
	emit_indent(E->out, ind);
	if (*fn) {
		if (ox) {
			emit(E->out, "%s[", E->bname[ob]);
			emit_operand(E->out, &oo, 0);
			emit(E->out, "] = ");
		}
		emit(E->out, "%s(&%s[", fn, E->bname[b]);
		emit_operand(E->out, &o, 0);
		emit(E->out, "], ");
		emit_operand(E->out, &x, 0);
		emit(E->out, ");\n");
	} else {
		const char *vn = emit_fresh(E, "atomic_value"), *on = emit_fresh(E, "atomic_old");

		if (!vn || !on)
			goto out;
		emit(E->out, "{\n");
		emit_indent(E->out, ind + 1);
		emit(E->out, "const %s %s = ", ty, vn);
		emit_operand(E->out, &x, 0);
		emit(E->out, ";\n");
		emit_indent(E->out, ind + 1);
		emit(E->out, "const %s %s = %s[", ty, on, E->bname[b]);
		emit_operand(E->out, &o, 0);
		emit(E->out, "];\n");
		emit_indent(E->out, ind + 1);
		emit(E->out, "%s[", E->bname[b]);
		emit_operand(E->out, &o, 0);
		emit(E->out, "] = ");
		switch (s->arg[0]) {
		case KA_ADD:
			if (t == DT_INT32)
				emit(E->out, "(int32_t)((uint32_t)%s + (uint32_t)%s);\n", on, vn);
			else
				emit(E->out, "%s + %s;\n", on, vn);
			break;
		case KA_MAX: emit(E->out, "%s > %s ? %s : %s;\n", on, vn, on, vn); break;
		case KA_MIN: emit(E->out, "%s < %s ? %s : %s;\n", on, vn, on, vn); break;
		default: emit(E->out, "%s;\n", vn); break;
		}
		if (ox) {
			emit_indent(E->out, ind + 1);
			emit(E->out, "%s[", E->bname[ob]);
			emit_operand(E->out, &oo, 0);
			emit(E->out, "] = %s;\n", on);
		}
		emit_indent(E->out, ind);
		emit(E->out, "}\n");
	}
	rc = 0;
out:
	unhoist(E);
	ex_free(&o, 1);
	ex_free(&x, 1);
	ex_free(&oo, 1);
	return rc;
}

/* Whether u mentions var (memo: node -> 1 no, 2 yes). */
static int
mentions(PMap *memo, const UOp *u, const UOp *var, int depth)
{
	void *m;
	int i, r = 0;

	if (u == var)
		return 1;
	if ((m = pmap_get(memo, u)))
		return m == (void *)2;
	if (depth > E_MAXDEPTH)
		return 1;   /* too deep to tell: as if it did */
	for (i = 0; i < u->nsrc && !r; i++)
		r = mentions(memo, u->src[i], var, depth + 1);
	if (pmap_put(memo, u, (void *)(uintptr_t)(r ? 2 : 1)) < 0)
		return 1;
	return r;
}

/* ---- vector loads ---- */

enum { VEC_MAX = 16 };

typedef struct VecRun {
	int b;
	const UOp *off0;       /* the offset at iteration 0 */
	const UOp *load[4];    /* a load of the run, as the body has it */
	int nload;
	char name[K_NAME + 16];
} VecRun;

typedef struct VecScan {
	Emit *E;
	const UOp *v;          /* the loop variable */
	int w;
	VecRun run[VEC_MAX];
	int nrun;
	PMap seen;
	uint8_t *written;      /* per buffer: stored to in the body */
} VecScan;

static UOp *
simplified(Emit *E, UOp *u)
{
	UOp *o;

	return u && uop_simplify(E->k->c, u, &o, E->e) == 0 ? o : NULL;
}

/* A load of one element at base + v, base a multiple of w: a run's member. */
static int
vec_scan(VecScan *V, const UOp *u, int depth)
{
	Emit *E = V->E;
	UOp *off, *zero, *off0, *d, *m;
	int i, b;

	if (depth > E_MAXDEPTH)
		return -1;
	if (pmap_get(&V->seen, u))
		return 0;
	if (pmap_put(&V->seen, u, (void *)1) < 0)
		return oom(E);
	for (i = 0; i < u->nsrc; i++)
		if (vec_scan(V, u->src[i], depth + 1) < 0)
			return -1;
	if (u->op != OP_LOAD || u->nsrc != 1 || u->src[0]->op != OP_INDEX || u->src[0]->nsrc < 1
	|| u->src[0]->src[0]->op != OP_DEFINE)
		return 0;
	b = (int)u->src[0]->src[0]->arg[0];
	if (b < 0 || b >= E->k->nbuf || E->k->buf[b].dtype != DT_FLOAT32 || V->written[b]
	|| !(E->D->vscopes & (1u << E->k->buf[b].scope)))
		return 0;
	if (!(off = index_offset(E, u->src[0])))
		return -1;
	zero = uop_int(E->k->c, 0);
	if (!zero || !(off0 = simplified(E, kernel_substitute(E->k->c, off, (UOp *const *)&V->v, &zero, 1)))
	|| !(d = simplified(E, uop_sub(E->k->c, off, off0)))
	|| !(m = simplified(E, uop_mod(E->k->c, off0, uop_int(E->k->c, V->w)))))
		return E->e->msg[0] ? -1 : oom(E);
	if (d != V->v || m->op != OP_CONST || m->arg[0] != 0)
		return 0;
	for (i = 0; i < V->nrun; i++)
		if (V->run[i].b == b && V->run[i].off0 == off0)
			break;
	if (i == V->nrun) {
		if (V->nrun == VEC_MAX)
			return 0;
		V->run[i].b = b;
		V->run[i].off0 = off0;
		V->run[i].nload = 0;
		V->nrun++;
	}
	if (V->run[i].nload < 4)
		V->run[i].load[V->run[i].nload++] = u;
	return 0;
}

/*
** The offset off of a vector's element v (v the loop variable, w the
** width) as base + v with base = 0 mod w, proved by the simplifier: base, or
** NULL when not proved (e->msg set on an error). A swizzle's XOR keeps the
** run when its mask is 0 mod w: (a0 + v) ^ m = (a0 ^ m) + v, since a0 and m
** leave the low log2(w) bits, which v fills, alone.
*/
static UOp *
vec_base(Emit *E, UOp *off, const UOp *v, int w, int depth)
{
	UCtx *c = E->k->c;
	UOp *zero = uop_int(c, 0), *off0, *d, *m;
	PMap memo;
	int i, r;

	if (!zero || depth > 8)
		return NULL;
	if ((off0 = simplified(E, kernel_substitute(c, off, (UOp *const *)&v, &zero, 1)))
	&& (d = simplified(E, uop_sub(c, off, off0))) && (m = simplified(E, uop_mod(c, off0, uop_int(c, w))))
	&& d == v && m->op == OP_CONST && m->arg[0] == 0)
		return off0;
	if (off->op != OP_XOR || off->nsrc != 2 || off->vmin < 0)
		return NULL;
	for (i = 0; i < 2; i++) {
		UOp *a = off->src[i], *mask = off->src[1 - i], *a0;

		memset(&memo, 0, sizeof memo);
		r = mentions(&memo, mask, v, 0);
		pmap_free(&memo);
		if (r || mask->vmin < 0 || a->vmin < 0)
			continue;
		if (!(m = simplified(E, uop_mod(c, mask, uop_int(c, w)))) || m->op != OP_CONST || m->arg[0] != 0)
			continue;
		if ((a0 = vec_base(E, a, v, w, depth + 1)))
			return uop_alu(c, OP_XOR, a0, mask);
	}
	return NULL;
}

/*
** A loop of w iterations (UPCAST, UNROLL) whose body is one copy between
** buffers of one dtype, dst[base_d + v] = src[base_s + v], with w elements
** 4, 8 or 16 bytes and both bases multiples of w: one move of that width
** (CUDA's uint4). The bits are the loads' bits, as in the interpreter; only
** the width changes. 1 written, 0 not taken, -1 an error.
*/
static int
vector_copy(Emit *E, EStage *S, const UOp *s, int ind)
{
	const UOp *r = s->src[0], *st, *ld, *v = krange_var(r);
	int64_t ext = krange_extent(r);
	UOp *od, *os, *bd, *bs, *roots[2];
	int b[2], i, bytes, rc = -1;
	const char *ty;
	Ex x[2];

	if (!E->D->vcopy || s->nsrc != 2)
		return 0;
	st = s->src[1];
	if (st->op != OP_STORE || st->nsrc != 2 || st->src[0]->op != OP_INDEX || st == E->accstore)
		return 0;
	ld = st->src[1];
	if (ld->op != OP_LOAD || ld->nsrc != 1 || ld->src[0]->op != OP_INDEX)
		return 0;
	b[0] = (int)st->src[0]->src[0]->arg[0];
	b[1] = (int)ld->src[0]->src[0]->arg[0];
	for (i = 0; i < 2; i++)
		if (b[i] < 0 || b[i] >= E->k->nbuf || !(E->D->vcscopes & (1u << E->k->buf[b[i]].scope)))
			return 0;
	if (E->k->buf[b[0]].dtype != E->k->buf[b[1]].dtype)
		return 0;
	bytes = (int)ext * dtype_bytes(E->k->buf[b[0]].dtype);
	if ((bytes != 4 && bytes != 8 && bytes != 16) || !(ty = E->D->vcopy(bytes)))
		return 0;
	/* a register array is aligned to its element, and a 16-bit one to 4 bytes (gpu.c) */
	for (i = 0; i < 2; i++)
		if (E->k->buf[b[i]].scope == AS_REG && bytes > (dtype_bytes(E->k->buf[b[i]].dtype) == 2 ? 4
		                                                : dtype_bytes(E->k->buf[b[i]].dtype)))
			return 0;
	if (!(od = index_offset(E, st->src[0])) || !(os = index_offset(E, ld->src[0])))
		return -1;
	if (!(bd = vec_base(E, od, v, (int)ext, 0)) || !(bs = vec_base(E, os, v, (int)ext, 0)))
		return E->e->msg[0] ? -1 : 0;
	roots[0] = bd;
	roots[1] = bs;
	ex_init(&x[0]);
	ex_init(&x[1]);
	if (hoist(E, roots, 2, ind) < 0 || value(E, bd, &x[0], 0) < 0 || value(E, bs, &x[1], 0) < 0)
		goto out;
	emit_indent(E->out, ind);
	emit(E->out, "/* %s: %lld elements moved as one %d-byte %s */\n", v->name, (long long)ext, bytes, ty);
	emit_indent(E->out, ind);
	emit(E->out, "*(%s *)&%s[", ty, E->bname[b[0]]);
	emit_operand(E->out, &x[0], 0);
	emit(E->out, "] = *(const %s *)&%s[", ty, E->bname[b[1]]);
	emit_operand(E->out, &x[1], 0);
	emit(E->out, "];\n");
	rc = 1;
out:
	unhoist(E);
	ex_free(x, 2);
	return rc;
}

/*
** A loop of w = 2 or 4 iterations that the GPU unrolls anyway (UPCAST,
** UNROLL) reads float32 runs x[base + v], v its variable, base a multiple of
** w: each run is loaded once before the body as one 8- or 16-byte access
** (CUDA's float4, OpenCL's vload4), and the body is written once per
** iteration with v a constant, each load of a run its component (x_v.y).
** Taken when the body is stores alone (no loop, branch, barrier or MMA), no
** run's buffer is stored to in it, and the dialect loads the buffer's
** scope. The values are the same loads' values: only their width changes.
*/
int
emit_vector_loop(Emit *E, EStage *S, const UOp *s, int ind)
{
	static const char comp[4][2] = { "x", "y", "z", "w" };
	const UOp *r = s->src[0];
	VecScan V;
	int64_t ext = krange_extent(r);
	AxisType t = krange_type(r);
	int i, j, rc = -1;

	if (krange_hw(r) != HW_NONE || (t != AX_UPCAST && t != AX_UNROLL))
		return 0;
	if ((i = vector_copy(E, S, s, ind)) != 0)
		return i;
	if (!E->D->vload || (ext != 2 && ext != 4))
		return 0;
	for (i = 1; i < s->nsrc; i++)
		if (s->src[i]->op != OP_STORE || s->src[i]->nsrc < 2 || s->src[i]->src[0]->op != OP_INDEX)
			return 0;
	memset(&V, 0, sizeof V);
	V.E = E;
	V.v = krange_var(r);
	V.w = (int)ext;
	if (!(V.written = calloc(E->k->nbuf ? E->k->nbuf : 1, 1)))
		return oom(E);
	for (i = 1; i < s->nsrc; i++)
		V.written[s->src[i]->src[0]->src[0]->arg[0]] = 1;
	for (i = 1; i < s->nsrc; i++)
		for (j = 1; j < s->src[i]->nsrc; j++)
			if (vec_scan(&V, s->src[i]->src[j], 0) < 0)
				goto out;
	if (!V.nrun) {
		rc = 0;
		goto out;
	}
	emit_indent(E->out, ind);
	emit(E->out, "/* %s: %lld iterations unrolled, %d run%s loaded as float%lld */\n", V.v->name, (long long)ext,
	     V.nrun, V.nrun == 1 ? "" : "s", (long long)ext);
	for (i = 0; i < V.nrun; i++) {
		VecRun *run = &V.run[i];
		UOp *root = (UOp *)run->off0;
		const char *n;
		char base[K_NAME + 16];
		Ex o;

		snprintf(base, sizeof base, "%s_v", E->bname[run->b]);
		if (!(n = emit_fresh(E, base)))
			goto out;
		snprintf(run->name, sizeof run->name, "%s", n);
		ex_init(&o);
		if (hoist(E, &root, 1, ind) < 0 || value(E, run->off0, &o, 0) < 0) {
			unhoist(E);
			ex_free(&o, 1);
			goto out;
		}
		unhoist(E);
		emit_indent(E->out, ind);
		emit(E->out, "const float%lld %s = ", (long long)ext, run->name);
		E->D->vload(E, run->b, (int)ext, &o);
		emit(E->out, ";\n");
		ex_free(&o, 1);
	}
	for (j = 0; j < ext; j++) {
		UOp *kv = uop_int(E->k->c, j), *st;
		const UOp *acc = E->accstore;

		if (!kv)
			goto out;
		/* each run's loads at iteration j, as the substituted body has them */
		for (i = 0; i < V.nrun; i++) {
			char c[K_NAME + 24], *o;
			int l;

			snprintf(c, sizeof c, "%s.%s", V.run[i].name, comp[j]);
			if (!(o = own(E, c)))
				goto oom;
			for (l = 0; l < V.run[i].nload; l++) {
				UOp *ld = kernel_substitute(E->k->c, (UOp *)V.run[i].load[l], (UOp *const *)&V.v, &kv, 1);

				if (!ld || pmap_put(&E->vec, ld, o) < 0)
					goto oom;
			}
		}
		for (i = 1; i < s->nsrc; i++) {
			if (!(st = kernel_substitute(E->k->c, s->src[i], (UOp *const *)&V.v, &kv, 1)))
				goto oom;
			/* the promoted reduction's store, as this iteration has it */
			if (s->src[i] == acc)
				E->accstore = st;
			rc = emit_stmt(E, S, st, ind);
			E->accstore = acc;
			if (rc < 0)
				goto out;
		}
		pmap_free(&E->vec);
		memset(&E->vec, 0, sizeof E->vec);
	}
	rc = 1;
	goto out;
oom:
	rc = oom(E);
out:
	pmap_free(&E->vec);
	memset(&E->vec, 0, sizeof E->vec);
	pmap_free(&V.seen);
	free(V.written);
	return rc;
}

/* The loads of buffer b in u: 0 none, 1 all of them ungated at ix (*at gets one), -1 another. */
static int
loads_of(PMap *memo, const UOp *u, int b, const UOp *ix, const UOp **at, int depth)
{
	int i, r = 0, q;

	if (depth > E_MAXDEPTH)
		return -1;
	if (pmap_get(memo, u))
		return 0;   /* seen: counted where it was first met */
	if (u->op == OP_LOAD && u->nsrc >= 1 && u->src[0]->op == OP_INDEX && u->src[0]->src[0]->arg[0] == b) {
		if (u->nsrc != 1 || u->src[0] != ix)
			return -1;
		*at = u;
		r = 1;
	}
	for (i = 0; i < u->nsrc; i++) {
		if ((q = loads_of(memo, u->src[i], b, ix, at, depth + 1)) < 0)
			return -1;
		r |= q;
	}
	if (pmap_put(memo, u, (void *)1) < 0)
		return -1;
	return r;
}

/*
** A reduction into one element, x[i] = f(x[i], v) under serial loops that
** do not move i, accumulates in a local variable: loaded before the
** outermost such loop, stored after it. The operations and their order are
** the same, so are the values; the compiler need not prove that x[i] is not
** read through another pointer (OpenMP's outlined functions lose restrict),
** and a reduction it may reassociate (fast) vectorizes. Taken: a chain of
** serial loops (not bound, not parallel, not vectorized), each the only
** statement of the one above, around one ungated store whose value reads
** the buffer only at the stored element; not for 16-bit floats, which round
** at every store.
*/
static const UOp *
promotable(Emit *E, const UOp *loop, const UOp **load)
{
	const UOp *s = loop, *vars[64], *st, *ix;
	PMap memo = { 0 };
	int n = 0, i, b, ok = 1;

	for (;;) {
		const UOp *r = s->src[0];
		AxisType t = krange_type(r);

		if (krange_hw(r) != HW_NONE || (t != AX_LOOP && t != AX_REDUCE && t != AX_UNROLL) || n == 64)
			return NULL;
		vars[n++] = krange_var(r);
		if (s->nsrc != 2)
			return NULL;
		s = s->src[1];
		if (s->op == OP_STORE)
			break;
		if (s->op != OP_END || s->nsrc < 1 || s->src[0]->op != OP_RANGE)
			return NULL;
	}
	st = s;
	if (st->nsrc != 2 || (ix = st->src[0])->op != OP_INDEX)
		return NULL;
	b = (int)ix->src[0]->arg[0];
	if (ishalf(E->k->buf[b].dtype))
		return NULL;
	for (i = 0; i < n && ok; i++)
		ok = !mentions(&memo, ix, vars[i], 0);
	pmap_free(&memo);
	if (!ok)
		return NULL;
	*load = NULL;
	ok = loads_of(&memo, st->src[1], b, ix, load, 0) == 1;
	pmap_free(&memo);
	return ok ? st : NULL;
}

/*
** The loop, its reduction promoted: T acc = x[i]; the loop on acc; x[i] =
** acc. init (may be NULL) is a store to x[i] just before the loop whose value
** does not read x: acc starts at that value and the store is left out (the
** one after the loop writes x[i] whatever the trip count).
*/
static int
promoted_loop(Emit *E, EStage *S, const UOp *s, const UOp *st, const UOp *ld, const UOp *init, int ind)
{
	Ex x, v;
	UOp *root = (UOp *)ld;
	DType t = E->k->buf[ld->src[0]->src[0]->arg[0]].dtype;
	const char *name;
	int rc = -1;

	ex_init(&x);
	ex_init(&v);
	if (!(name = emit_fresh(E, "acc")))
		return err_set(E->e, "%s: out of memory", E->D->name);
	if (hoist(E, &root, 1, ind) < 0 || value(E, ld, &x, 0) < 0) {
		unhoist(E);
		goto out;
	}
	unhoist(E);
	if (init) {
		root = init->src[1];
		if (hoist(E, &root, 1, ind) < 0 || value(E, root, &v, 0) < 0) {
			unhoist(E);
			goto out;
		}
		unhoist(E);
		if (isf(t) && v.ct == DT_UINT64)
			emit_convert(E, &v, DT_INT64);
		if (emit_convert(E, &v, t) < 0)
			goto out;
	}
	emit_indent(E->out, ind);
	emit(E->out, "%s %s = ", ctype(E, t), name);
	emit_operand(E->out, init ? &v : &x, 0);
	emit(E->out, ";\n");
	E->accstore = st;
	E->accload = ld;
	E->accname = name;
	rc = E->D->loop(E, S, s, ind);
	E->accstore = E->accload = NULL;
	E->accname = NULL;
	if (rc == 0) {
		emit_indent(E->out, ind);
		emit(E->out, "%s = %s;\n", x.s.s, name);
	}
out:
	ex_free(&x, 1);
	ex_free(&v, 1);
	return rc;
}

/* Whether s stores to the element ld loads, ungated, with a value that does not read its buffer. */
static int
inits(const UOp *s, const UOp *ld)
{
	const UOp *at = NULL;
	PMap memo = { 0 };
	int r;

	if (s->op != OP_STORE || s->nsrc != 2 || s->src[0] != ld->src[0])
		return 0;
	r = loads_of(&memo, s->src[1], (int)ld->src[0]->src[0]->arg[0], NULL, &at, 0) == 0;
	pmap_free(&memo);
	return r;
}

int
emit_stmts(Emit *E, EStage *S, UOp *const *s, int n, int ind)
{
	int i;

	for (i = 0; i < n; i++) {
		const UOp *ld, *st;

		/* x[i] = init; a promotable reduction into x[i]: acc starts at init */
		if (i + 1 < n && !E->accstore && s[i + 1]->op == OP_END && s[i + 1]->nsrc >= 1
		&& s[i + 1]->src[0]->op == OP_RANGE && (st = promotable(E, s[i + 1], &ld)) && inits(s[i], ld)) {
			if (promoted_loop(E, S, s[i + 1], st, ld, s[i], ind) < 0)
				return -1;
			i++;
			continue;
		}
		if (emit_stmt(E, S, s[i], ind) < 0)
			return -1;
	}
	return 0;
}

int
emit_stmt(Emit *E, EStage *S, const UOp *s, int ind)
{
	Ex g;
	UOp *root;

	if (ind > E_MAXDEPTH)
		return err_set(E->e, "%s: stage %s: statements nest too deep", E->D->name, E->k->stage[S->st].name);
	switch (s->op) {
	case OP_STORE:
		return store(E, S, s, ind);
	case OP_END:
		if (s->nsrc < 1 || s->src[0]->op != OP_RANGE)
			return err_set(E->e, "%s: stage %s: a loop without a range", E->D->name, E->k->stage[S->st].name);
		if (!E->accstore) {
			const UOp *ld, *st = promotable(E, s, &ld);

			if (st)
				return promoted_loop(E, S, s, st, ld, NULL, ind);
		}
		return E->D->loop(E, S, s, ind);
	case OP_IF:
		if (s->nsrc < 1)
			return err_set(E->e, "%s: stage %s: an if without a condition", E->D->name,
			               E->k->stage[S->st].name);
		if (s->src[0]->op == OP_CONST && s->src[0]->arg[0]) {
			/* a sequence; a collective operator names what it dispatched to */
			if (s->name) {
				emit_indent(E->out, ind);
				emit(E->out, "/* %s */\n", s->name);
			}
			return emit_stmts(E, S, s->src + 1, s->nsrc - 1, ind);
		}
		root = s->src[0];
		ex_init(&g);
		if (hoist(E, &root, 1, ind) < 0 || value(E, root, &g, 0) < 0) {
			unhoist(E);
			ex_free(&g, 1);
			return -1;
		}
		unhoist(E);
		emit_indent(E->out, ind);
		emit(E->out, "if (");
		emit_operand(E->out, &g, 0);
		emit(E->out, ") {\n");
		ex_free(&g, 1);
		if (emit_stmts(E, S, s->src + 1, s->nsrc - 1, ind + 1) < 0)
			return -1;
		emit_indent(E->out, ind);
		emit(E->out, "}\n");
		return 0;
	case OP_BARRIER:
	case OP_MMA:
	case OP_LDMATRIX:
		return E->D->sync(E, S, s, ind);
	case OP_ATOMIC:
	case OP_FENCE:
		return atomic(E, S, s, ind);
	case OP_WGMMA:
	case OP_WG_FENCE:
	case OP_WG_COMMIT:
	case OP_WG_WAIT:
	case OP_SETMAXNREG:
		if (!E->D->async)
			return err_set(E->e, "%s: stage %s: a %s; the warpgroup MMA is sm_90a's wgmma, which only the cuda "
			               "dialect writes (kernel.mma or kernel.gemm for this one)", E->D->name,
			               E->k->stage[S->st].name, uop_info[s->op].name);
		return E->D->async(E, S, s, ind);
	case OP_CP_ASYNC:
	case OP_CP_COMMIT:
	case OP_CP_WAIT:
		if (!E->D->async)
			return err_set(E->e, "%s: stage %s: a %s; asynchronous global-to-shared copies are sm_80's "
			               "cp.async, which only the cuda dialect writes (copy with another impl, without "
			               "kernel.cp_async_commit and kernel.cp_async_wait, for this one)", E->D->name,
			               E->k->stage[S->st].name, uop_info[s->op].name);
		return E->D->async(E, S, s, ind);
	case OP_MBAR_INIT:
	case OP_MBAR_ARRIVE:
	case OP_MBAR_WAIT:
	case OP_TMA_LOAD:
		if (!E->D->async || E->D->d != D_C || strcmp(E->D->name, "cuda") != 0)
			return err_set(E->e, "%s: stage %s: a %s; mbarriers and bulk tensor copies (TMA) are sm_90's, "
			               "which only the cuda dialect writes (copy with kernel.copy for this one)", E->D->name,
			               E->k->stage[S->st].name, uop_info[s->op].name);
		return E->D->async(E, S, s, ind);
	default:
		return err_set(E->e, "%s: stage %s: %s is not a statement", E->D->name, E->k->stage[S->st].name,
		               uop_info[s->op].name);
	}
}

/* ---- stages ---- */

/* The loops from the stage's body down to s, "in loops i, j" (or "at the top of the stage"). */
typedef struct Path {
	const UOp *target;
	const UOp *loop[64];
	int n, found;
} Path;

static void
find(Path *p, const UOp *s, const UOp **stack, int n, int depth)
{
	int i;

	if (p->found || depth > 200)
		return;
	if (s == p->target) {
		p->found = 1;
		p->n = n < 64 ? n : 64;
		memcpy(p->loop, stack, p->n * sizeof *stack);
		return;
	}
	if (s->op != OP_END && s->op != OP_IF && s->op != OP_STORE)
		return;
	if (s->op == OP_END && n < 64)
		stack[n++] = s->src[0];
	for (i = 1; i < s->nsrc; i++)
		find(p, s->src[i], stack, n, depth + 1);
	/* a shuffle is a value: look into stores */
	if (s->op == OP_STORE && !p->found) {
		for (i = 0; i < s->nsrc; i++)
			if (s->src[i] == p->target)
				find(p, s->src[i], stack, n, depth + 1);
	}
}

void
emit_where(const EStage *S, const UOp *s, char *out, size_t n)
{
	Path p;
	const UOp *stack[64];
	size_t at;
	int i;

	memset(&p, 0, sizeof p);
	p.target = s;
	find(&p, S->body, stack, 0, 0);
	if (!p.found || p.n == 0) {
		snprintf(out, n, "%s", p.found ? "at the top of the stage" : "in the stage");
		return;
	}
	at = snprintf(out, n, "in loop%s ", p.n > 1 ? "s" : "");
	for (i = 0; i < p.n && at < n; i++)
		at += snprintf(out + at, n - at, "%s%s", i ? ", " : "", krange_var(p.loop[i])->name);
}

typedef struct Scan {
	Emit *E;
	EStage *S;
} Scan;

static int
scan_fn(void *aux, const UOp *u)
{
	Scan *c = aux;
	EStage *S = c->S;
	int b;

	switch (u->op) {
	case OP_LOAD:
	case OP_STORE:
		if (u->nsrc > 0 && u->src[0]->op == OP_INDEX && u->src[0]->nsrc > 0 && u->src[0]->src[0]->op == OP_DEFINE) {
			b = (int)u->src[0]->src[0]->arg[0];
			if (b >= 0 && b < c->E->k->nbuf)
				S->use[b] |= u->op == OP_STORE ? 2 : 1;
		}
		break;
	case OP_MMA:
		for (b = 0; b < u->nsrc; b++)
			if (u->src[b]->op == OP_DEFINE && u->src[b]->arg[0] >= 0 && u->src[b]->arg[0] < c->E->k->nbuf)
				S->use[u->src[b]->arg[0]] |= b == 0 ? 2 : 1;
		/* fall through */
	case OP_LDMATRIX:
		if (u->op == OP_LDMATRIX && u->nsrc == 2) {
			if (u->src[0]->op == OP_DEFINE && u->src[0]->arg[0] >= 0 && u->src[0]->arg[0] < c->E->k->nbuf)
				S->use[u->src[0]->arg[0]] |= 2;
			if (u->src[1]->op == OP_INDEX && (b = (int)u->src[1]->src[0]->arg[0]) >= 0 && b < c->E->k->nbuf)
				S->use[b] |= 1;
		}
		/* fall through */
	case OP_BARRIER:
	case OP_SHUFFLE:
		if (!S->sync)
			S->sync = u;
		break;
	case OP_WGMMA:
		if (u->nsrc == 3) {
			if (u->src[0]->op == OP_DEFINE && u->src[0]->arg[0] >= 0 && u->src[0]->arg[0] < c->E->k->nbuf)
				S->use[u->src[0]->arg[0]] |= 3;
			for (b = 1; b < 3; b++)
				if (u->src[b]->op == OP_INDEX && u->src[b]->src[0]->op == OP_DEFINE
				&& u->src[b]->src[0]->arg[0] >= 0 && u->src[b]->src[0]->arg[0] < c->E->k->nbuf)
					S->use[u->src[b]->src[0]->arg[0]] |= 1;
		}
		break;
	case OP_TMA_LOAD:
	case OP_MBAR_INIT:
	case OP_MBAR_ARRIVE:
	case OP_MBAR_WAIT:
		/* a TMA writes its destination, reads its source; an mbarrier statement writes its barrier */
		for (b = 0; b < 3 && b < u->nsrc; b++)
			if (u->src[b]->op == OP_INDEX && u->src[b]->src[0]->op == OP_DEFINE
			&& u->src[b]->src[0]->arg[0] >= 0 && u->src[b]->src[0]->arg[0] < c->E->k->nbuf)
				S->use[u->src[b]->src[0]->arg[0]] |= b == 1 && u->op == OP_TMA_LOAD ? 1 : 2;
		break;
	case OP_ATOMIC:
		/* the element is read and written, the old value's register written */
		for (b = 0; b < u->nsrc; b += 2)
			if (u->src[b]->op == OP_INDEX && u->src[b]->src[0]->op == OP_DEFINE
			&& u->src[b]->src[0]->arg[0] >= 0 && u->src[b]->src[0]->arg[0] < c->E->k->nbuf)
				S->use[u->src[b]->src[0]->arg[0]] |= b == 0 ? 3 : 2;
		break;
	case OP_CP_ASYNC:
		for (b = 0; b < 2 && u->nsrc == 2; b++)
			if (u->src[b]->op == OP_INDEX && u->src[b]->src[0]->op == OP_DEFINE
			&& u->src[b]->src[0]->arg[0] >= 0 && u->src[b]->src[0]->arg[0] < c->E->k->nbuf)
				S->use[u->src[b]->src[0]->arg[0]] |= b == 0 ? 2 : 1;
		break;
	case OP_RANGE: {
		HwAxis hw = krange_hw(u);
		int64_t ext = krange_extent(u), *d = NULL, v = ext;

		if (hw == HW_NONE || hw >= HW_COUNT)
			break;
		S->nbound++;
		S->hwused |= 1u << hw;
		switch (hw) {
		case HW_BLOCK_X: case HW_BLOCK_Y: case HW_BLOCK_Z: d = &S->grid[hw - HW_BLOCK_X]; break;
		case HW_THREAD_X: case HW_THREAD_Y: case HW_THREAD_Z: d = &S->blk[hw - HW_THREAD_X]; break;
		case HW_WARP: d = &S->blk[0]; v = ext > INT64_MAX / 32 ? INT64_MAX : ext * 32; break;
		case HW_LANE: d = &S->blk[0]; break;
		default: break;
		}
		if (d && v > *d)
			*d = v;
		break;
	}
	default:
		break;
	}
	return 0;
}

/*
** The bound loops form one perfect nest on top of the stage when each of
** them holds only the next, and each hardware axis is bound once (warp only
** with lane): then every thread of every block runs the innermost body once,
** for the nest's coordinates, and a dialect without threads may print the
** nest as loops. Anything else (a statement beside a bound loop, an axis
** bound twice, a loop shorter than its block) runs the whole stage per
** thread, with bound loops as guards.
*/
/* bound loops in the statement tree (a node shared by two places counts twice) */
static int
count_bound(const UOp *s, int depth)
{
	int i, n = 0;

	if (depth > E_MAXDEPTH || (s->op != OP_END && s->op != OP_IF))
		return 0;
	if (s->op == OP_END && s->nsrc >= 1 && krange_hw(s->src[0]) != HW_NONE)
		n++;
	for (i = 1; i < s->nsrc; i++)
		n += count_bound(s->src[i], depth + 1);
	return n;
}

static void
nest(EStage *S)
{
	const UOp *s = S->body, *last = NULL, *lastblock = NULL;
	int n = 0, seen[HW_COUNT] = { 0 };

	while (s->op == OP_END && s->nsrc >= 1 && krange_hw(s->src[0]) != HW_NONE) {
		HwAxis hw = krange_hw(s->src[0]);

		if (seen[hw]++)
			return;
		n++;
		last = s;
		if (hwaxis_is_block(hw))
			lastblock = s;
		if (s->nsrc != 2)
			break;
		s = s->src[1];
	}
	if (n != count_bound(S->body, 0) || (seen[HW_WARP] && !seen[HW_LANE]))
		return;
	S->nest = 1;
	S->inner = last;
	S->blockin = lastblock;
}

static int
stage(Emit *E, int st)
{
	EStage S;
	Scan c;
	const UOp *root;
	int i;

	memset(&S, 0, sizeof S);
	S.st = st;
	S.body = E->k->stage[st].body;
	for (i = 0; i < 3; i++)
		S.grid[i] = S.blk[i] = 1;
	if (!S.body)
		return err_set(E->e, "%s: stage %s has no body", E->D->name, E->k->stage[st].name);
	S.use = E->use + (size_t)st * E->k->nbuf;
	c.E = E;
	c.S = &S;
	root = S.body;
	if (walk(NULL, &root, 1, scan_fn, &c) < 0)
		return oom(E);
	nest(&S);
	E->ntemp = 0;
	return E->D->stage(E, &S);
}

/* ---- names ---- */

typedef struct Vars {
	Emit *E;
	const UOp **v;
	int n, cap;
} Vars;

static int
vars_fn(void *aux, const UOp *u)
{
	Vars *w = aux;

	if (u->op != OP_RANGE || u->nsrc != 1 || u->src[0]->op != OP_VAR)
		return 0;
	if (w->n == w->cap) {
		int cap = w->cap ? 2 * w->cap : 32;
		const UOp **n = realloc(w->v, cap * sizeof *n);

		if (!n)
			return -1;
		w->v = n;
		w->cap = cap;
	}
	w->v[w->n++] = u->src[0];
	return 0;
}

/*
** Loop variables keep their names; one the dialect reserves is renamed in
** the copy (name_, ...). Buffers keep theirs unless a loop variable or a
** reserved word has it (name_buf). Stage functions keep the stage names.
*/
/*
** A name the source may declare in place of a reserved one: k_ before a name
** in the emitter's own namespace (tessel_*, __*, _X*), which no suffix leaves;
** the suffix after a dialect's keyword (for_ for a variable named for).
*/
static void
unreserve(const char *name, const char *suffix, char *out, size_t n)
{
	if (strncmp(name, "tessel_", 7) == 0 || name[0] == '_')
		snprintf(out, n, "k_%s", name);
	else
		snprintf(out, n, "%s%s", name, suffix);
}

static int
names(Emit *E)
{
	Kernel *k = E->k;
	Vars w = { E, NULL, 0, 0 };
	const UOp **roots;
	UOp **from = NULL, **to = NULL;
	int i, j, nren = 0, rc = -1;
	char tmp[K_NAME + 16];

	if (!(roots = malloc((k->nstage ? k->nstage : 1) * sizeof *roots)))
		return oom(E);
	for (i = 0; i < k->nstage; i++)
		roots[i] = k->stage[i].body;
	if (walk(NULL, roots, k->nstage, vars_fn, &w) < 0)
		goto out;
	if (!(from = malloc((w.n ? w.n : 1) * sizeof *from)) || !(to = malloc((w.n ? w.n : 1) * sizeof *to)))
		goto out;
	for (i = 0; i < w.n; i++)
		if (!reserved(E, w.v[i]->name) && !emit_taken(E, w.v[i]->name) && take(E, w.v[i]->name) < 0)
			goto out;
	for (i = 0; i < w.n; i++) {
		const char *n;

		if (!reserved(E, w.v[i]->name))
			continue;
		for (j = 0; j < nren && from[j] != w.v[i]; j++)
			;
		if (j < nren)
			continue;
		/* a reserved word: a fresh variable of the same range */
		unreserve(w.v[i]->name, "_", tmp, sizeof tmp);
		if (!(n = emit_fresh(E, tmp)))
			goto out;
		from[nren] = (UOp *)w.v[i];
		if (!(to[nren] = uop_var(k->c, n, w.v[i]->arg[0], w.v[i]->arg[1])))
			goto out;
		nren++;
	}
	if (nren)
		for (i = 0; i < k->nstage; i++)
			if (!(k->stage[i].body = kernel_substitute(k->c, k->stage[i].body, from, to, nren)))
				goto out;
	for (i = 0; i < k->nbuf; i++) {
		const char *n;

		snprintf(tmp, sizeof tmp, "%s", k->buf[i].name);
		if (reserved(E, tmp))
			unreserve(k->buf[i].name, "_buf", tmp, sizeof tmp);
		else if (emit_taken(E, tmp))
			snprintf(tmp, sizeof tmp, "%s_buf", k->buf[i].name);
		if (!(n = emit_fresh(E, tmp)))
			goto out;
		snprintf(E->bname[i], sizeof E->bname[i], "%s", n);
	}
	for (i = 0; i < k->nstage; i++) {
		const char *s = k->stage[i].name;
		size_t a = 0;

		if (isdigit((unsigned char)s[0]))
			tmp[a++] = '_';
		for (; *s && a + 1 < sizeof tmp && a < K_NAME; s++)
			tmp[a++] = isalnum((unsigned char)*s) ? *s : '_';
		tmp[a] = 0;
		if (!a)
			snprintf(tmp, sizeof tmp, "stage");
		if (reserved(E, tmp)) {
			char base[K_NAME + 16];

			memcpy(base, tmp, sizeof base);
			unreserve(base, "_stage", tmp, sizeof tmp);
		}
		/* a stage function may share a buffer's or a variable's name (the inner one hides it) */
		{
			char base[K_NAME + 16];

			memcpy(base, tmp, sizeof base);
			for (j = 1;; j++) {
				int clash = reserved(E, tmp), d;

				for (d = 0; d < i && !clash; d++)
					clash = strcmp(E->sname[d], tmp) == 0;
				if (!clash)
					break;
				snprintf(tmp, sizeof tmp, "%.*s_%d", K_NAME, base, j);
			}
		}
		snprintf(E->sname[i], sizeof E->sname[i], "%.*s", (int)sizeof E->sname[i] - 1, tmp);
	}
	rc = 0;
out:
	if (rc < 0 && !E->e->msg[0])
		oom(E);
	free(roots);
	free(w.v);
	free(from);
	free(to);
	return rc;
}

int
emit_kernel(Buf *b, const Kernel *k, const EmitDialect *D, EmitInfo *info, Err *e)
{
	Emit E;
	Buf body;
	size_t b0 = b->len;   /* what the caller's buffer held before */
	char what[64];
	int i, rc = -1;

	memset(&E, 0, sizeof E);
	E.D = D;
	E.k0 = k;
	E.aux = info ? info->aux : NULL;
	E.fast = info ? info->fast : 0;
	E.e = e;
	e->msg[0] = 0;
	buf_init(&body);
	E.out = &body;
	if (!k)
		return err_set(e, "%s: no kernel", D->name);
	if (!(E.k = kernel_clone(k, e)))
		return -1;
	if (!(E.bname = calloc(k->nbuf ? k->nbuf : 1, sizeof *E.bname))
	|| !(E.sname = calloc(k->nstage ? k->nstage : 1, sizeof *E.sname))
	|| !(E.use = calloc((size_t)(k->nbuf ? k->nbuf : 1) * (k->nstage ? k->nstage : 1), 1))) {
		oom(&E);
		goto out;
	}
	if (names(&E) < 0 || (D->check && D->check(&E) < 0))
		goto out;
	for (i = 0; i < E.k->nstage; i++)
		if (stage(&E, i) < 0)
			goto out;
	if (D->head(&E, b) < 0)
		goto out;
	emitn(b, body.s ? body.s : "", body.len);
	if (D->tail(&E, b) < 0)
		goto out;
	if (b->oom || body.oom) {
		oom(&E);
		goto out;
	}
	/* one check of the whole source for every dialect (C, CUDA, OpenCL, Triton) */
	snprintf(what, sizeof what, "the %s source", D->name);
	if (limits_check(LIMIT_CODE_BYTES, (int64_t)(b->len - b0), what, e) < 0)
		goto out;
	if (info) {
		info->omp = E.uses_omp;
		info->simd = E.uses_simd;
		info->place = E.has_place;
		info->take = E.has_take;
	}
	rc = 0;
out:
	buf_free(&body);
	pmap_free(&E.pure);
	pmap_free(&E.off);
	pmap_free(&E.hoist);
	pmap_free(&E.vec);
	for (i = 0; i < E.nowned; i++)
		free(E.owned[i]);
	free(E.owned);
	free(E.taken);
	free(E.bname);
	free(E.sname);
	free(E.use);
	kernel_free(E.k);
	return rc;
}

double
backend_tolerance(DType t)
{
	switch (t) {
	case DT_FLOAT32: return 1e-4;
	case DT_FLOAT64: return 1e-9;
	case DT_FLOAT16: case DT_BFLOAT16: return 1e-2;
	default: return 0;
	}
}

/* ---- the header comment, shared by the C family ---- */

void
emit_comment_text(Buf *b, const char *s)
{
	const char *q;

	while ((q = strstr(s, "*/"))) {
		emitn(b, s, (size_t)(q - s));
		emit(b, "* /");
		s = q + 2;
	}
	emit(b, "%s", s);
}

static void
buffer_shape(Buf *b, const KBuf *x)
{
	int i;

	emit(b, "%s: %s[", x->name, dtype_name(x->dtype));
	for (i = 0; i < x->ndim; i++)
		emit(b, "%s%lld", i ? ", " : "", (long long)x->shape[i]);
	emit(b, "]");
	if (x->scope != AS_GLOBAL)
		emit(b, " %s", kscope_name(x->scope));
	if (strcmp(x->layout_desc, "row-major") != 0) {
		emit(b, " @ ");
		emit_comment_text(b, x->layout_desc);
	}
}

void
emit_header_line(Buf *b, const Kernel *k, KRole role, const char *label)
{
	int i, n = 0;
	size_t col = 0;

	for (i = 0; i < k->nbuf; i++) {
		Buf t;

		if (k->buf[i].role != role)
			continue;
		buf_init(&t);
		buffer_shape(&t, &k->buf[i]);
		if (!n)
			col = b->len, emit(b, "**   %-9s", label);
		else if (b->len - col + t.len > 96)
			col = b->len, emit(b, ",\n**   %-9s", "");
		else
			emit(b, ", ");
		emit(b, "%s", t.s ? t.s : "");
		buf_free(&t);
		n++;
	}
	if (n)
		emit(b, "\n");
}

/* ---- checking a run's buffers and outputs, shared by the C JIT and OpenCL ---- */

int
emit_check_inputs(const Kernel *k, const TBuf *bufs, const char *who, Err *e)
{
	int i;

	if (!bufs && k->nbuf)
		return err_set(e, "%s: no buffer table", who);
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		int64_t n = emit_numel(kb);

		if (kb->role != KB_TEMP && kb->scope != AS_GLOBAL)
			return err_set(e, "%s: %s %s is in %s memory; inputs and outputs are global", who,
			               krole_name(kb->role), kb->name, kscope_name(kb->scope));
		if (kb->role != KB_INPUT)
			continue;
		if (!bufs[i].data)
			return err_set(e, "%s: no data for input %s", who, kb->name);
		if (bufs[i].dtype != kb->dtype || bufs[i].numel != n)
			return err_set(e, "%s: input %s: %lld elements of %s given, %lld of %s declared", who, kb->name,
			               (long long)bufs[i].numel, dtype_name(bufs[i].dtype), (long long)n,
			               dtype_name(kb->dtype));
	}
	return 0;
}

/* Whether two elements agree: the same bits, or two NaNs; within tol of
** max(|b|, 1) when tol is not 0, infinities of one sign alike. */
static int
same_element(DType t, const unsigned char *a, const unsigned char *b, int bytes, double tol)
{
	double x, y;

	if (memcmp(a, b, bytes) == 0)
		return 1;
	if (!dtype_is_float(t))
		return 0;
	x = dtype_load_f(t, a);
	y = dtype_load_f(t, b);
	if (isnan(x) || isnan(y))
		return isnan(x) && isnan(y);
	if (tol == 0 || isinf(x) || isinf(y))
		return x == y;
	return fabs(x - y) <= tol * fmax(fabs(y), 1);
}

int
emit_mismatch(const Kernel *k, const TBuf *got, const TBuf *want, int tolerant, EMismatch *m)
{
	int i;

	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		int bytes = dtype_bytes(kb->dtype);
		int64_t j, n = emit_numel(kb);

		if (kb->role != KB_OUTPUT)
			continue;
		m->buf = i;
		m->n = n;
		m->bad = 0;
		m->first = -1;
		m->tol = tolerant ? backend_tolerance(kb->dtype) : 0;
		for (j = 0; j < n; j++)
			if (!same_element(kb->dtype, (const unsigned char *)got[i].data + j * bytes,
			                  (const unsigned char *)want[i].data + j * bytes, bytes, m->tol)) {
				if (m->first < 0)
					m->first = j;
				m->bad++;
			}
		if (m->bad) {
			int64_t c[T_MAXDIM], lin = m->first;
			int d;

			buf_init(&m->where);
			for (d = kb->ndim - 1; d >= 0; d--) {
				c[d] = lin % kb->shape[d];
				lin /= kb->shape[d];
			}
			emit(&m->where, "%s[", kb->name);
			for (d = 0; d < kb->ndim; d++)
				emit(&m->where, "%s%lld", d ? ", " : "", (long long)c[d]);
			emit(&m->where, "]");
			m->got = tbuf_get(&got[i], m->first);
			m->want = tbuf_get(&want[i], m->first);
			return 1;
		}
	}
	return 0;
}

int
emit_each_node(Emit *E, int st, int (*fn)(Emit *E, int st, const UOp *u, void *aux), void *aux)
{
	PMap seen = { 0 };
	const UOp **stack;
	size_t sp = 0, cap = 256;
	int rc = 0, j;

	/* depth-first, with an explicit stack: a stage body may nest deeper than the C stack */
	if (!(stack = malloc(cap * sizeof *stack)))
		return oom(E);
	stack[sp++] = E->k->stage[st].body;
	while (sp && rc == 0) {
		const UOp *u = stack[--sp];

		if (pmap_get(&seen, u))
			continue;
		if (pmap_put(&seen, u, (void *)1) < 0) {
			rc = oom(E);
			break;
		}
		if ((rc = fn(E, st, u, aux)) < 0)
			break;
		for (j = 0; j < u->nsrc; j++) {
			if (sp == cap) {
				const UOp **n = realloc(stack, 2 * cap * sizeof *n);

				if (!n) {
					rc = oom(E);
					break;
				}
				stack = n;
				cap *= 2;
			}
			stack[sp++] = u->src[j];
		}
	}
	free(stack);
	pmap_free(&seen);
	return rc < 0 ? -1 : 0;
}


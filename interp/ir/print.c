/* print.c - UOps as C, CUDA, OpenCL, Python, Triton, Lua and a readable infix form; the tree view. */
#include <string.h>

#include "../../util/limits.h"
#include "uop.h"

static const char *const dnames[D_COUNT] = {
	"infix", "c", "cuda", "opencl", "python", "triton", "lua"
};

const char *
dialect_name(Dialect d)
{
	return d < D_COUNT ? dnames[d] : "?";
}

int
dialect_parse(const char *s, Dialect *d)
{
	int i;

	for (i = 0; i < D_COUNT; i++)
		if (strcmp(s, dnames[i]) == 0) {
			*d = (Dialect)i;
			return 0;
		}
	return -1;
}

/* Which column of the op table a dialect uses. */
static int
col(Dialect d)
{
	switch (d) {
	case D_INFIX: return 0;
	case D_C: case D_CUDA: case D_OPENCL: return 1;
	case D_PYTHON: case D_TRITON: return 2;
	default: return 3;
	}
}

enum { ATOM = 100 };

static int
cfamily(Dialect d)
{
	return d == D_C || d == D_CUDA || d == D_OPENCL;
}

static void expr(Buf *b, const UOp *u, Dialect d, int minprec, int depth);

/* Where printing stops with "...": code (every dialect but infix) at the code_bytes
** limit, which uop_print_code reports; the infix text people read at 4 MiB. */
static size_t
cap(Dialect d)
{
	int64_t c = limits_value(LIMIT_CODE_BYTES);

	if (d == D_INFIX && c > ((int64_t)1 << 22))
		c = (int64_t)1 << 22;
	return (size_t)c;
}

/* The binding strength of u as printed in d. */
static int
prec(const UOp *u, Dialect d)
{
	int k = col(d), p;

	switch (u->op) {
	case OP_CONST:
		return u->arg[0] < 0 ? uop_info[OP_NEG].prec[k] : ATOM;
	case OP_VAR:
		return ATOM;
	case OP_IDIV:
	case OP_MOD:
		if ((cfamily(d) || d == D_TRITON) && !(u->src[0]->vmin >= 0 && u->src[1]->vmin > 0))
			return ATOM;   /* the inline floor form is parenthesized */
		break;
	case OP_SHR:
		if (d == D_LUA && u->src[0]->vmin < 0)
			return uop_info[OP_IDIV].prec[k];
		break;
	case OP_AND:
	case OP_OR:
	case OP_XOR:
		if (d == D_LUA && u->dtype == DT_BOOL)
			return u->op == OP_AND ? 2 : u->op == OP_OR ? 1 : 3;
		break;
	case OP_WHERE:
		if (d == D_LUA && u->dtype != DT_BOOL)
			return 1;
		return ATOM;
	default:
		break;
	}
	p = uop_info[u->op].prec[k];
	return p ? p : ATOM;
}

static void
konst(Buf *b, const UOp *u, Dialect d)
{
	int64_t v = u->arg[0];

	if (u->dtype == DT_BOOL) {
		if (d == D_PYTHON || d == D_TRITON)
			emit(b, "%s", v ? "True" : "False");
		else if (d == D_LUA || d == D_INFIX)
			emit(b, "%s", v ? "true" : "false");
		else
			emit(b, "%d", v != 0);
		return;
	}
	if (v == INT64_MIN) {
		if (d == D_LUA)
			emit(b, "math.mininteger");
		else if (cfamily(d))
			emit(b, "(-9223372036854775807%s - 1)", d == D_OPENCL ? "L" : "LL");
		else
			emit(b, "-9223372036854775808");
		return;
	}
	emit(b, "%lld", (long long)v);
	if (cfamily(d) && (v > INT32_MAX || v < INT32_MIN))
		emit(b, "%s", d == D_OPENCL ? "L" : "LL");
}

static const char *
ctype(DType t, Dialect d)
{
	if (t == DT_INT32)
		return d == D_C ? "int32_t" : "int";
	if (d == D_C)
		return "int64_t";
	return d == D_OPENCL ? "long" : "long long";
}

static void
cast(Buf *b, const UOp *u, Dialect d, int depth)
{
	const UOp *x = u->src[0];
	DType t = (DType)u->dtype;
	int fits32 = x->vmin >= INT32_MIN && x->vmax <= INT32_MAX;

	if (d == D_INFIX) {
		emit(b, "%s(", dtype_name(t));
		expr(b, x, d, 0, depth);
		emit(b, ")");
	} else if (t == DT_BOOL) {
		if (d == D_LUA && x->dtype == DT_BOOL) {
			expr(b, x, d, ATOM, depth);
			return;
		}
		emit(b, "(");
		expr(b, x, d, 10, depth);
		emit(b, " %s 0)", d == D_LUA ? "~=" : "!=");
	} else if (x->dtype == DT_BOOL && (d == D_LUA)) {
		emit(b, "(");
		expr(b, x, d, 3, depth);
		emit(b, " and 1 or 0)");
	} else if (cfamily(d)) {
		emit(b, "((%s)", ctype(t, d));
		expr(b, x, d, ATOM, depth);
		emit(b, ")");
	} else if (d == D_TRITON) {
		expr(b, x, d, ATOM, depth);
		emit(b, ".to(tl.%s)", t == DT_INT32 ? "int32" : "int64");
	} else if (t == DT_INT32 && !fits32) {
		/* wrap to 32 bits as the C cast does */
		emit(b, "((");
		expr(b, x, d, 13, depth);
		emit(b, " + 2147483648) %% 4294967296 - 2147483648)");
	} else if (d == D_PYTHON) {
		emit(b, "int(");
		expr(b, x, d, 0, depth);
		emit(b, ")");
	} else
		expr(b, x, d, ATOM, depth);
}

/* A call f(a, b) with each argument unparenthesized. */
static void
call(Buf *b, const char *f, const UOp *u, Dialect d, int depth)
{
	int i;

	emit(b, "%s(", f);
	for (i = 0; i < u->nsrc; i++) {
		if (i)
			emit(b, ", ");
		expr(b, u->src[i], d, 0, depth);
	}
	emit(b, ")");
}

static void
minmax(Buf *b, const UOp *u, Dialect d, int depth)
{
	int mn = u->op == OP_MIN;

	switch (d) {
	case D_C:
		emit(b, "(");
		expr(b, u->src[0], d, 11, depth);
		emit(b, " %s ", mn ? "<" : ">");
		expr(b, u->src[1], d, 11, depth);
		emit(b, " ? ");
		expr(b, u->src[0], d, 4, depth);
		emit(b, " : ");
		expr(b, u->src[1], d, 4, depth);
		emit(b, ")");
		break;
	case D_TRITON:
		call(b, mn ? "tl.minimum" : "tl.maximum", u, d, depth);
		break;
	case D_LUA:
		call(b, mn ? "math.min" : "math.max", u, d, depth);
		break;
	default:
		call(b, mn ? "min" : "max", u, d, depth);
		break;
	}
}

static void
where(Buf *b, const UOp *u, Dialect d, int depth)
{
	switch (d) {
	case D_INFIX:
		call(b, "where", u, d, depth);
		break;
	case D_TRITON:
		call(b, "tl.where", u, d, depth);
		break;
	case D_PYTHON:
		emit(b, "(");
		expr(b, u->src[1], d, 4, depth);
		emit(b, " if ");
		expr(b, u->src[0], d, 4, depth);
		emit(b, " else ");
		expr(b, u->src[2], d, 4, depth);
		emit(b, ")");
		break;
	case D_LUA:
		if (u->dtype == DT_BOOL) {
			/* `c and a or b` fails when a is false: box the values */
			emit(b, "((");
			expr(b, u->src[0], d, 3, depth);
			emit(b, ") and {");
			expr(b, u->src[1], d, 0, depth);
			emit(b, "} or {");
			expr(b, u->src[2], d, 0, depth);
			emit(b, "})[1]");
		} else {
			expr(b, u->src[0], d, 3, depth);
			emit(b, " and ");
			expr(b, u->src[1], d, 3, depth);
			emit(b, " or ");
			expr(b, u->src[2], d, 2, depth);
		}
		break;
	default:
		emit(b, "(");
		expr(b, u->src[0], d, 4, depth);
		emit(b, " ? ");
		expr(b, u->src[1], d, 4, depth);
		emit(b, " : ");
		expr(b, u->src[2], d, 4, depth);
		emit(b, ")");
		break;
	}
}

/*
** Floor division and modulo where the dialect's operator truncates. With a
** positive constant divisor c and a known lower bound of a, a is first moved
** into the non-negative numbers by a multiple of c, where truncation is floor:
** a // c = (a + k*c) / c - k and a % c = (a + k*c) % c, k = ceil(-min(a) / c).
** Otherwise m = ((a % b + b) % b) is the floor remainder for either sign of
** b, and (a - m) / b the floor quotient (an exact division).
*/
static int
bias_of(const UOp *x, const UOp *y, int64_t *k, int64_t *kc)
{
	int64_t c, top;

	if (y->op != OP_CONST || (c = y->arg[0]) <= 0 || x->vmin >= 0 || x->vmin == INT64_MIN)
		return 0;
	*k = -x->vmin / c + (-x->vmin % c != 0);
	return uck_mul(*k, c, kc) == 0 && uck_add(x->vmax, *kc, &top) == 0;
}

static void
floordivmod(Buf *b, const UOp *u, Dialect d, int depth)
{
	const char *div = d == D_TRITON ? "//" : "/";
	const UOp *x = u->src[0], *y = u->src[1];
	int64_t k, kc;

	if (bias_of(x, y, &k, &kc)) {
		int64_t add = kc;

		/* a = z + c0 prints as z + (c0 + k*c): (i - 9) // 4 is (i + 3) / 4 - 3 */
		if (x->op == OP_ADD && x->src[1]->op == OP_CONST && uck_add(x->src[1]->arg[0], kc, &add) == 0)
			x = x->src[0];
		else if (x->op == OP_SUB && x->src[1]->op == OP_CONST && uck_sub(kc, x->src[1]->arg[0], &add) == 0)
			x = x->src[0];
		else
			add = kc;
		emit(b, "(");
		if (add) {
			emit(b, "(");
			expr(b, x, d, 12, depth);
			emit(b, " %c %lld)", add < 0 ? '-' : '+', add < 0 ? -(long long)add : (long long)add);
		} else {
			expr(b, x, d, 13, depth);
		}
		emit(b, " %s %lld", u->op == OP_IDIV ? div : "%", (long long)y->arg[0]);
		if (u->op == OP_IDIV)
			emit(b, " - %lld", (long long)k);
		emit(b, ")");
		return;
	}

	if (u->op == OP_IDIV) {
		emit(b, "((");
		expr(b, x, d, 13, depth);
		emit(b, " - ");
	}
	emit(b, "((");
	expr(b, x, d, 13, depth);
	emit(b, " %% ");
	expr(b, y, d, 14, depth);
	emit(b, " + ");
	expr(b, y, d, 13, depth);
	emit(b, ") %% ");
	expr(b, y, d, 14, depth);
	emit(b, ")");
	if (u->op == OP_IDIV) {
		emit(b, ") %s ", div);
		expr(b, y, d, 14, depth);
		emit(b, ")");
	}
}

static void
binary(Buf *b, const UOp *u, Dialect d, int p, int depth)
{
	const char *sym = uop_info[u->op].sym[col(d)];
	int cmp = (uop_info[u->op].flags & U_CMP) != 0;
	int tight = d == D_INFIX && (u->op == OP_MUL || u->op == OP_IDIV || u->op == OP_MOD);
	int bits;

	if (d == D_LUA && u->dtype == DT_BOOL && (u->op == OP_AND || u->op == OP_OR || u->op == OP_XOR))
		sym = u->op == OP_AND ? "and" : u->op == OP_OR ? "or" : "~=";
	if (d == D_LUA && u->op == OP_SHR && u->src[0]->vmin < 0) {
		/* Lua's >> is logical; the IR's is arithmetic */
		expr(b, u->src[0], d, p, depth);
		emit(b, " // (1 << ");
		expr(b, u->src[1], d, 8, depth);
		emit(b, ")");
		return;
	}
	/* arithmetic under a bitwise op is parenthesized, for the reader */
	bits = u->op >= OP_AND && u->op <= OP_SHR && u->dtype != DT_BOOL;
	expr(b, u->src[0], d, bits ? ATOM - 1 : cmp ? p + 1 : p, depth);
	emit(b, tight ? "%s" : " %s ", sym);
	expr(b, u->src[1], d, bits ? ATOM - 1 : p + 1, depth);
}

static void
expr(Buf *b, const UOp *u, Dialect d, int minprec, int depth)
{
	int p = prec(u, d), paren = p < minprec;

	if (depth > UOP_MAXDEPTH || b->len > cap(d)) {
		emit(b, "...");
		return;
	}
	depth++;
	if (paren)
		emit(b, "(");
	switch (u->op) {
	case OP_CONST:
		konst(b, u, d);
		break;
	case OP_VAR:
		emit(b, "%s", u->name);
		break;
	case OP_NEG:
		emit(b, "-");
		expr(b, u->src[0], d, p + (u->src[0]->op == OP_NEG || (u->src[0]->op == OP_CONST && u->src[0]->arg[0] < 0)), depth);
		break;
	case OP_CAST:
		cast(b, u, d, depth);
		break;
	case OP_MIN:
	case OP_MAX:
		minmax(b, u, d, depth);
		break;
	case OP_WHERE:
		where(b, u, d, depth);
		break;
	case OP_IDIV:
	case OP_MOD:
		if (p == ATOM) {
			floordivmod(b, u, d, depth);
			break;
		}
		binary(b, u, d, p, depth);
		break;
	default:
		if (u->nsrc == 2)
			binary(b, u, d, p, depth);
		else
			call(b, uop_info[u->op].name, u, d, depth);
		break;
	}
	if (paren)
		emit(b, ")");
}

void
uop_print(Buf *b, const UOp *u, Dialect d)
{
	if (!u) {
		emit(b, "<null>");
		return;
	}
	expr(b, u, d, 0, 0);
}

int
uop_print_code(Buf *b, const UOp *u, Dialect d, Err *e)
{
	size_t start = b->len;

	uop_print(b, u, d);
	if (b->len - start > cap(d))
		return err_set(e, "code_bytes limit: the expression printed as %s needs more than %lld bytes "
		               "(raise it with tessel.limits{code_bytes = N})", dialect_name(d),
		               (long long)cap(d));
	return 0;
}

/* The tree view: one node a line, with box-drawing branches and each
** operation's range. */
static void
label(Buf *b, const UOp *u)
{
	const char *sym = uop_info[u->op].sym[0];

	if (u->op == OP_CONST) {
		konst(b, u, D_INFIX);
		return;
	}
	if (u->op == OP_VAR) {
		emit(b, "%s [%lld, %lld]", u->name, (long long)u->vmin, (long long)u->vmax);
		return;
	}
	if (u->op == OP_CAST)
		emit(b, "%s", dtype_name((DType)u->dtype));
	else
		emit(b, "%s", *sym ? sym : uop_info[u->op].name);
	if (u->dtype == DT_BOOL && u->vmin != u->vmax)
		emit(b, "  bool");
	else
		emit(b, "  [%lld, %lld]", (long long)u->vmin, (long long)u->vmax);
}

static void
tree(Buf *b, const UOp *u, char *pre, size_t np, int last, int *lines, int max)
{
	int i;
	size_t n = np;

	if (*lines >= max) {
		if (*lines == max)
			emit(b, "%s...\n", pre);
		(*lines)++;
		return;
	}
	(*lines)++;
	emit(b, "%s%s", pre, np == 0 && last < 0 ? "" : last ? "\u2514\u2500 " : "\u251c\u2500 ");
	label(b, u);
	emit(b, "\n");
	if (last >= 0 && np + 8 < 512) {
		memcpy(pre + np, last ? "   " : "\u2502  ", last ? 4 : 6);
		n = np + (last ? 3 : 5);
		pre[n] = 0;
	}
	for (i = 0; i < u->nsrc && np < 480; i++)
		tree(b, u->src[i], pre, n, i == u->nsrc - 1, lines, max);
	pre[np] = 0;
}

void
uop_print_tree(Buf *b, const UOp *u, int max_lines)
{
	char pre[512] = "";
	int lines = 0;

	if (!u) {
		emit(b, "<null>\n");
		return;
	}
	tree(b, u, pre, 0, -1, &lines, max_lines > 0 ? max_lines : 200);
}

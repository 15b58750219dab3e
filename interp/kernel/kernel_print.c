/* kernel_print.c - kernels as Neptune's loop-scalar pseudo-code, as a buffer table and as a UOp listing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

/*
** Values print as Python-like infix, index arithmetic through uop_print's
** readable dialect. The decomposed ops of tensor programs print as what the
** user wrote: exp2(x * log2 e) is exp(x), log2(x) * ln 2 is log(x).
*/
enum { ATOM = 100 };

#define LOG2E 1.4426950408889634
#define LN2 0.6931471805599453

static int
is_fconst(const UOp *u, double v)
{
	return u->op == OP_CONST && dtype_is_float(u->dtype)
	&& fabs(uop_const_value(u) - v) <= 1e-7 * fabs(v);
}

/* x when u is x * c (either order), else NULL */
static const UOp *
times(const UOp *u, double c)
{
	if (u->op != OP_MUL)
		return NULL;
	if (is_fconst(u->src[1], c))
		return u->src[0];
	if (is_fconst(u->src[0], c))
		return u->src[1];
	return NULL;
}

/* pure index arithmetic: uop_print prints it */
static int
is_index(const UOp *u)
{
	return (u->dtype == DT_INDEX || (u->dtype == DT_BOOL && u->nsrc && u->src[0]->dtype == DT_INDEX))
	&& !(uop_info[u->op].flags & (U_TENSOR | U_KERNEL)) && u->op != OP_LOAD && u->op != OP_INDEX
	&& u->depth < 200;
}

static void fconst(Buf *b, const UOp *u);
static void value(Buf *b, const UOp *u, int minprec, int depth);

static int
vprec(const UOp *u)
{
	if (is_index(u) && u->op != OP_CONST && u->op != OP_VAR && uop_info[u->op].sym[0][0])
		return uop_info[u->op].prec[0];
	switch (u->op) {
	case OP_ADD: case OP_SUB: return 12;
	case OP_MUL: return times(u, LN2) && times(u, LN2)->op == OP_LOG2 ? ATOM : 13;
	case OP_IDIV: case OP_MOD: return 13;
	case OP_NEG: return 14;
	case OP_CMPLT: case OP_CMPNE: case OP_CMPEQ: return 7;
	case OP_AND: return 10;
	case OP_OR: return 8;
	case OP_XOR: return 9;
	case OP_SHL: case OP_SHR: return 11;
	case OP_CONST: {
		double v = uop_const_value(u);

		return v < 0 || (u->dtype != DT_BOOL && !dtype_is_float(u->dtype) && u->arg[0] < 0) ? 14 : ATOM;
	}
	default: return ATOM;
	}
}

static void
fconst(Buf *b, const UOp *u)
{
	double v = uop_const_value(u);
	char t[64];

	if (u->dtype == DT_BOOL) {
		emit(b, "%s", u->arg[0] ? "true" : "false");
		return;
	}
	if (!dtype_is_float(u->dtype)) {
		emit(b, "%lld", (long long)u->arg[0]);
		return;
	}
	if (isnan(v)) {
		emit(b, "nan");
		return;
	}
	if (isinf(v)) {
		emit(b, "%sinf", v < 0 ? "-" : "");
		return;
	}
	snprintf(t, sizeof t, "%.9g", v);
	emit(b, "%s%s", t, strpbrk(t, ".eni") ? "" : ".0");
}

static void
call(Buf *b, const char *f, UOp *const *s, int n, int depth)
{
	int i;

	emit(b, "%s(", f);
	for (i = 0; i < n; i++) {
		if (i)
			emit(b, ", ");
		value(b, s[i], 0, depth + 1);
	}
	emit(b, ")");
}

static void
access(Buf *b, const UOp *ix, int depth)
{
	int i;

	emit(b, "%s[", ix->src[0]->name ? ix->src[0]->name : "?");
	if (ix->nsrc == 1)
		emit(b, "()");
	for (i = 1; i < ix->nsrc; i++) {
		if (i > 1)
			emit(b, ", ");
		value(b, ix->src[i], 0, depth + 1);
	}
	emit(b, "]");
}

static void
infix(Buf *b, const UOp *u, const char *op, int p, int depth)
{
	/* left-associative: the right operand binds one tighter */
	value(b, u->src[0], p, depth + 1);
	emit(b, " %s ", op);
	value(b, u->src[1], p + 1, depth + 1);
}

static void
value(Buf *b, const UOp *u, int minprec, int depth)
{
	int p = vprec(u), paren = p < minprec;
	const UOp *x;

	if (depth > 60) {
		emit(b, "...");
		return;
	}
	if (is_index(u)) {
		if (paren)
			emit(b, "(");
		uop_print(b, u, D_INFIX);
		if (paren)
			emit(b, ")");
		return;
	}
	if (paren)
		emit(b, "(");
	switch (u->op) {
	case OP_CONST:
		fconst(b, u);
		break;
	case OP_VAR:
		emit(b, "%s", u->name);
		break;
	case OP_LOAD:
		if (u->nsrc > 1) {
			emit(b, "(");
			access(b, u->src[0], depth);
			emit(b, " if ");
			value(b, u->src[1], 0, depth + 1);
			emit(b, " else 0)");
		} else
			access(b, u->src[0], depth);
		break;
	case OP_INDEX:
		if (u->src[0]->op == OP_DEFINE)
			access(b, u, depth);
		else
			emit(b, "index(...)");
		break;
	case OP_ADD: infix(b, u, "+", 12, depth); break;
	case OP_SUB: infix(b, u, "-", 12, depth); break;
	case OP_MUL:
		if ((x = times(u, LN2)) && x->op == OP_LOG2)
			call(b, "log", x->src, 1, depth);
		else
			infix(b, u, "*", 13, depth);
		break;
	case OP_IDIV: infix(b, u, "//", 13, depth); break;
	case OP_MOD: infix(b, u, "%", 13, depth); break;
	case OP_CMPLT: infix(b, u, "<", 7, depth); break;
	case OP_CMPNE:
		if (u->src[0]->op == OP_CMPLT && u->src[1]->op == OP_CONST && u->src[1]->dtype == DT_BOOL
		&& u->src[1]->arg[0]) {
			infix(b, u->src[0], ">=", 7, depth);   /* not(a < b), as kernel.ge builds it */
			break;
		}
		infix(b, u, "!=", 7, depth);
		break;
	case OP_CMPEQ: infix(b, u, "==", 7, depth); break;
	case OP_AND: infix(b, u, "&", 10, depth); break;
	case OP_OR: infix(b, u, "|", 8, depth); break;
	case OP_XOR: infix(b, u, "^", 9, depth); break;
	case OP_SHL: infix(b, u, "<<", 11, depth); break;
	case OP_SHR: infix(b, u, ">>", 11, depth); break;
	case OP_NEG:
		emit(b, "-");
		value(b, u->src[0], 14, depth + 1);
		break;
	case OP_RECIP:
		emit(b, "1/");
		value(b, u->src[0], ATOM, depth + 1);
		break;
	case OP_EXP2:
		if ((x = times(u->src[0], LOG2E)))
			call(b, "exp", (UOp *const *)&x, 1, depth);
		else
			call(b, "exp2", u->src, 1, depth);
		break;
	case OP_CAST:
		call(b, dtype_name(u->dtype), u->src, 1, depth);
		break;
	default:
		call(b, uop_info[u->op].name, u->src, u->nsrc, depth);
		break;
	}
	if (paren)
		emit(b, ")");
}

/* mbarrier_wait(bar[s], kt // 2 % 2), tma.box{64,128}.sw128(As[...], A[...], bar[s]) */
void
kernel_print_tma(Buf *b, const Kernel *k, const UOp *s)
{
	int i;

	switch (s->op) {
	case OP_MBAR_INIT: emit(b, "mbarrier_init("); break;
	case OP_MBAR_ARRIVE: emit(b, "mbarrier_arrive("); break;
	case OP_MBAR_WAIT: emit(b, "mbarrier_wait("); break;
	default:
		emit(b, "tma.box{");
		for (i = (int)(s->ndata / sizeof(int64_t)) - 1; i >= 0 && s->data; i--)
			emit(b, "%lld%s", (long long)((const int64_t *)s->data)[i], i ? "," : "");
		emit(b, "}.sw%lld(", (long long)s->arg[0]);
		break;
	}
	for (i = 0; i < s->nsrc; i++) {
		if (i)
			emit(b, ", ");
		kernel_print_expr(b, k, s->src[i]);
	}
	if (s->op == OP_MBAR_INIT)
		emit(b, ", %lld", (long long)s->arg[0]);
	if (s->op == OP_MBAR_ARRIVE && s->arg[0])
		emit(b, ", tx=%lld", (long long)s->arg[0]);
	emit(b, ")");
}

void
kernel_print_expr(Buf *b, const Kernel *k, const UOp *u)
{
	(void)k;
	value(b, u, 0, 0);
}

/* tinygrad's axis-type palette (ANSI 256 colours) */
static const char *
axcolor(int t)
{
	static const char *const c[AX_COUNT] = {
		"\033[38;5;26m", "\033[38;5;37m", "\033[38;5;51m", "\033[38;5;33m", "",
		"\033[38;5;160m", "\033[38;5;203m", "\033[38;5;178m", "\033[38;5;165m"
	};

	return t >= 0 && t < AX_COUNT ? c[t] : "";
}
#define RESET "\033[0m"
#define DIM "\033[2m"

typedef struct Pr {
	Buf *b;
	const Kernel *k;
	int color;
} Pr;

static void stmt(Pr *p, const UOp *s, int ind, int depth);

static void
indent(Pr *p, int n)
{
	emit(p->b, "%*s", 2 * n, "");
}

static void
body(Pr *p, const UOp *s, int from, int ind, int depth)
{
	int i;

	if (s->nsrc <= from) {
		indent(p, ind);
		emit(p->b, "pass\n");
	}
	for (i = from; i < s->nsrc; i++)
		stmt(p, s->src[i], ind, depth + 1);
}

static void
varname(Pr *p, const UOp *r)
{
	const char *col = axcolor(krange_type(r));

	if (p->color && *col)
		emit(p->b, "%s%s%s", col, krange_var(r)->name, RESET);
	else
		emit(p->b, "%s", krange_var(r)->name);
}

/*
** Perfectly nested unbound loops print as one grid (Neptune's
** `for i, j in grid(2, 4)`); a bound loop prints alone, with its hardware
** axis. Axis types other than LOOP are named in a trailing comment.
*/
static void
loop(Pr *p, const UOp *s, int ind, int depth)
{
	const UOp *r[16], *cur = s;
	int n = 0, i, typed = 0;

	for (;;) {
		r[n++] = cur->src[0];
		if (krange_hw(cur->src[0]) != HW_NONE || n == 16 || cur->nsrc != 2
		|| cur->src[1]->op != OP_END || krange_hw(cur->src[1]->src[0]) != HW_NONE)
			break;
		cur = cur->src[1];
	}
	indent(p, ind);
	emit(p->b, "for ");
	for (i = 0; i < n; i++) {
		if (i)
			emit(p->b, ", ");
		varname(p, r[i]);
		typed |= krange_type(r[i]) != AX_LOOP;
	}
	if (n == 1)
		emit(p->b, " in range(%lld):", (long long)krange_extent(r[0]));
	else {
		emit(p->b, " in grid(");
		for (i = 0; i < n; i++)
			emit(p->b, "%s%lld", i ? ", " : "", (long long)krange_extent(r[i]));
		emit(p->b, "):");
	}
	if (krange_hw(r[0]) != HW_NONE || typed) {
		emit(p->b, "  %s#", p->color ? DIM : "");
		for (i = 0; i < n; i++) {
			if (krange_hw(r[i]) != HW_NONE)
				emit(p->b, " %s", hwaxis_name(krange_hw(r[i])));
			if (krange_type(r[i]) != AX_LOOP || krange_hw(r[i]) != HW_NONE)
				emit(p->b, n > 1 ? " %s:%s" : " %s%s", n > 1 ? krange_var(r[i])->name : "",
				     axistype_name(krange_type(r[i])));
		}
		if (p->color)
			emit(p->b, RESET);
	}
	emit(p->b, "\n");
	body(p, cur, 1, ind + 1, depth);
}

static void
store(Pr *p, const UOp *s, int ind, int nl)
{
	const UOp *ix = s->src[0], *v = s->src[1];
	const char *op = NULL;

	indent(p, ind);
	if (s->nsrc > 2) {
		emit(p->b, "if ");
		value(p->b, s->src[2], 0, 0);
		emit(p->b, ": ");
	}
	/* a reduce store: x[i] = x[i] + v prints as x[i] += v */
	if ((v->op == OP_ADD || v->op == OP_MUL) && v->src[0]->op == OP_LOAD && v->src[0]->nsrc == 1
	&& v->src[0]->src[0] == ix) {
		op = v->op == OP_ADD ? "+=" : "*=";
		v = v->src[1];
	} else if ((v->op == OP_ADD || v->op == OP_MUL) && v->src[1]->op == OP_LOAD
	&& v->src[1]->nsrc == 1 && v->src[1]->src[0] == ix) {
		op = v->op == OP_ADD ? "+=" : "*=";
		v = v->src[0];
	}
	access(p->b, ix, 0);
	emit(p->b, " %s ", op ? op : "=");
	value(p->b, v, 0, 0);
	if (nl)
		emit(p->b, "\n");
}

void
kernel_print_store(Buf *b, const Kernel *k, const UOp *s)
{
	Pr p = { b, k, 0 };

	store(&p, s, 0, 0);
}

static void
stmt(Pr *p, const UOp *s, int ind, int depth)
{
	int i;

	if (depth > 200) {
		indent(p, ind);
		emit(p->b, "...\n");
		return;
	}
	switch (s->op) {
	case OP_END:
		loop(p, s, ind, depth);
		break;
	case OP_IF:
		if (s->src[0]->op == OP_CONST && s->src[0]->arg[0]) {
			if (s->name) {   /* a collective operator: what was dispatched and why */
				indent(p, ind);
				emit(p->b, "%s# %s%s\n", p->color ? DIM : "", s->name, p->color ? RESET : "");
			}
			body(p, s, 1, ind, depth);   /* a sequence */
			break;
		}
		indent(p, ind);
		emit(p->b, "if ");
		value(p->b, s->src[0], 0, 0);
		emit(p->b, ":\n");
		body(p, s, 1, ind + 1, depth);
		break;
	case OP_BARRIER:
		indent(p, ind);
		emit(p->b, "%sbarrier()%s\n", p->color ? "\033[1m" : "", p->color ? RESET : "");
		break;
	case OP_STORE:
		store(p, s, ind, 1);
		break;
	case OP_MMA:
		indent(p, ind);
		emit(p->b, "mma.%s(", s->name ? s->name : "?");
		for (i = 0; i < s->nsrc; i++)
			emit(p->b, "%s%s", i ? ", " : "", s->src[i]->name ? s->src[i]->name : "?");
		emit(p->b, ")\n");
		break;
	case OP_LDMATRIX:
		/* ldmatrix.x4.trans(b0, Bs[...]): the destination, then this lane's row address */
		indent(p, ind);
		if (s->nsrc != 2) {
			emit(p->b, "<ldmatrix>\n");
			break;
		}
		emit(p->b, "ldmatrix.x%lld%s(%s, ", (long long)s->arg[0], s->arg[1] ? ".trans" : "",
		     s->src[0]->name ? s->src[0]->name : "?");
		access(p->b, s->src[1], 0);
		emit(p->b, ")\n");
		break;
	case OP_CP_ASYNC:
		/* cp_async.16(As[...], A[...]): this thread's 16 bytes, destination first */
		indent(p, ind);
		if (s->nsrc != 2) {
			emit(p->b, "<cp_async>\n");
			break;
		}
		emit(p->b, "cp_async.%lld(", (long long)s->arg[0]);
		access(p->b, s->src[0], 0);
		emit(p->b, ", ");
		access(p->b, s->src[1], 0);
		emit(p->b, ")\n");
		break;
	case OP_CP_COMMIT:
		indent(p, ind);
		emit(p->b, "cp_async_commit()\n");
		break;
	case OP_ATOMIC:
		/* old[0] = atomic_add(cnt[h], 1): the old value's place, the element, the operand */
		indent(p, ind);
		if (s->nsrc < 2) {
			emit(p->b, "<atomic>\n");
			break;
		}
		if (s->nsrc == 3) {
			access(p->b, s->src[2], 0);
			emit(p->b, " = ");
		}
		emit(p->b, "atomic_%s(", katomic_name((int)s->arg[0]));
		access(p->b, s->src[0], 0);
		emit(p->b, ", ");
		value(p->b, s->src[1], 0, 0);
		emit(p->b, ")\n");
		break;
	case OP_FENCE:
		indent(p, ind);
		emit(p->b, "%s\n", s->arg[0] == KF_BLOCK ? "fence_block()" : "fence()");
		break;
	case OP_WGMMA:
		/* wgmma.m64n64k16(c, As[0, kk*16], Bs[kk*16, 0]): the accumulator, then each tile's first element */
		indent(p, ind);
		if (s->nsrc != 3) {
			emit(p->b, "<wgmma>\n");
			break;
		}
		emit(p->b, "wgmma.m64n%lldk16(%s, ", (long long)s->arg[0], s->src[0]->name ? s->src[0]->name : "?");
		access(p->b, s->src[1], 0);
		emit(p->b, ", ");
		access(p->b, s->src[2], 0);
		emit(p->b, "%s%s)\n", s->arg[1] & KWG_B_NK ? ", b_nk" : "", s->arg[1] & KWG_ZERO ? ", zero" : "");
		break;
	case OP_WG_FENCE:
		indent(p, ind);
		emit(p->b, "wgmma_fence()\n");
		break;
	case OP_WG_COMMIT:
		indent(p, ind);
		emit(p->b, "wgmma_commit()\n");
		break;
	case OP_SETMAXNREG:
		indent(p, ind);
		emit(p->b, "setmaxnreg(%lld, %s)\n", (long long)s->arg[0], s->arg[1] ? "inc" : "dec");
		break;
	case OP_WG_WAIT:
		indent(p, ind);
		emit(p->b, "wgmma_wait(%lld)\n", (long long)s->arg[0]);
		break;
	case OP_CP_WAIT:
		indent(p, ind);
		emit(p->b, "cp_async_wait(%lld)\n", (long long)s->arg[0]);
		break;
	case OP_MBAR_INIT:
	case OP_MBAR_ARRIVE:
	case OP_MBAR_WAIT:
	case OP_TMA_LOAD:
		indent(p, ind);
		kernel_print_tma(p->b, p->k, s);
		emit(p->b, "\n");
		break;
	default:
		indent(p, ind);
		emit(p->b, "<%s>\n", uop_info[s->op].name);
		break;
	}
}

static void
bufdecl(Buf *b, const KBuf *x)
{
	int i;

	emit(b, "%s: %s[", x->name, dtype_name(x->dtype));
	for (i = 0; i < x->ndim; i++)
		emit(b, "%s%lld", i ? ", " : "", (long long)x->shape[i]);
	emit(b, "]");
}

static void
header(Pr *p, KRole role, const char *label)
{
	int i, n = 0;

	for (i = 0; i < p->k->nbuf; i++) {
		const KBuf *x = &p->k->buf[i];

		if (x->role != role)
			continue;
		emit(p->b, n++ ? ", " : "%s# %s: ", p->color ? DIM : "", label);
		bufdecl(p->b, x);
		if (x->scope != AS_GLOBAL)
			emit(p->b, " %s", kscope_name(x->scope));
		if (strcmp(x->layout_desc, "row-major") != 0)
			emit(p->b, " @ %s", x->layout_desc);
	}
	if (n)
		emit(p->b, "%s\n", p->color ? RESET : "");
}

void
kernel_print(Buf *b, const Kernel *k, int color)
{
	Pr p = { b, k, color };
	int i;

	header(&p, KB_INPUT, "inputs");
	header(&p, KB_OUTPUT, "outputs");
	header(&p, KB_TEMP, "buffers");
	for (i = 0; i < k->nstage; i++) {
		emit(b, "%s# %s%s\n", color ? DIM : "", k->stage[i].name, color ? RESET : "");
		stmt(&p, k->stage[i].body, 0, 0);
	}
}

void
kernel_print_buffers(Buf *b, const Kernel *k)
{
	int i, w = 4;

	for (i = 0; i < k->nbuf; i++)
		if ((int)strlen(k->buf[i].name) > w)
			w = (int)strlen(k->buf[i].name);
	emit(b, "%-*s  %-6s  %-6s  %-8s  %-16s  %s\n", w, "name", "role", "scope", "dtype", "shape", "layout");
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *x = &k->buf[i];
		Buf s;

		buf_init(&s);
		uop_shape_str(&s, x->shape, x->ndim);
		emit(b, "%-*s  %-6s  %-6s  %-8s  %-16s  %s\n", w, x->name, krole_name(x->role),
		     kscope_name(x->scope), dtype_name(x->dtype), s.s ? s.s : "", x->layout_desc);
		buf_free(&s);
	}
}

/* ---- the UOp listing: a post-order over every stage, each node once ---- */

/* Node ids are dense in their context: pos[id] is the listing number + 1. */
typedef struct Lst {
	Buf *b;
	uint32_t *pos;
	size_t n, next;
} Lst;

static void
list(Lst *l, const UOp *u, int depth)
{
	int i;

	if (depth > 400 || u->id >= l->n || l->pos[u->id])
		return;
	for (i = 0; i < u->nsrc; i++)
		list(l, u->src[i], depth + 1);
	l->pos[u->id] = (uint32_t)++l->next;
	emit(l->b, "%%%-4zu %-8s %-8s", l->next - 1, uop_info[u->op].name, dtype_name(u->dtype));
	if (u->nsrc) {
		emit(l->b, " (");
		for (i = 0; i < u->nsrc; i++)
			emit(l->b, "%s%%%lu", i ? ", " : "",
			     u->src[i]->id < l->n ? (unsigned long)l->pos[u->src[i]->id] - 1 : 0ul);
		emit(l->b, ")");
	}
	switch (u->op) {
	case OP_CONST:
		emit(l->b, " ");
		fconst(l->b, u);
		break;
	case OP_VAR:
		emit(l->b, " %s [%lld, %lld]", u->name, (long long)u->arg[0], (long long)u->arg[1]);
		break;
	case OP_RANGE:
		emit(l->b, " %s", axistype_name(krange_type(u)));
		if (krange_hw(u) != HW_NONE)
			emit(l->b, " %s", hwaxis_name(krange_hw(u)));
		break;
	case OP_DEFINE:
		emit(l->b, " %s %s", u->name, kscope_name((int)u->arg[1]));
		break;
	case OP_MMA:
		emit(l->b, " %s", u->name ? u->name : "?");
		break;
	case OP_LDMATRIX:
		emit(l->b, " x%lld%s", (long long)u->arg[0], u->arg[1] ? " trans" : "");
		break;
	case OP_CP_ASYNC:
	case OP_CP_WAIT:
	case OP_WG_WAIT:
		emit(l->b, " %lld", (long long)u->arg[0]);
		break;
	case OP_WGMMA:
		emit(l->b, " m64n%lldk16%s%s", (long long)u->arg[0], u->arg[1] & KWG_B_NK ? " b_nk" : "",
		     u->arg[1] & KWG_ZERO ? " zero" : "");
		break;
	case OP_ATOMIC:
		emit(l->b, " %s", katomic_name((int)u->arg[0]));
		break;
	case OP_FENCE:
		emit(l->b, " %s", u->arg[0] == KF_BLOCK ? "block" : "gpu");
		break;
	default:
		break;
	}
	emit(l->b, "\n");
}

void
kernel_print_uops(Buf *b, const Kernel *k)
{
	Lst l = { b, NULL, uctx_nodes(k->c), 0 };
	int i;

	if (!(l.pos = calloc(l.n ? l.n : 1, sizeof *l.pos))) {
		emit(b, "(out of memory)\n");
		return;
	}
	for (i = 0; i < k->nbuf; i++)
		list(&l, k->buf[i].def, 0);
	for (i = 0; i < k->nstage; i++) {
		emit(b, "# %s\n", k->stage[i].name);
		list(&l, k->stage[i].body, 0);
	}
	free(l.pos);
}

/* lua_kernel.c - the `kernel` Lua table: lowered and hand-written kernels (their values, buffers and stages), checks and pictures. */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../interp/kernel/kernel.h"
#include "../interp/sched/tile_ir.h"
#include "../layout/layout.h"
#include "../viz/viz.h"
#include "help.h"
#include "lua_kernel.h"
#include "tessel.h"

#define KVALUE  "kernel.Value"

typedef struct LValue {
	UOp *u;
} LValue;

static void
frames_clear(LKernel *x)
{
	int i;

	for (i = 0; i < x->nf; i++)
		free(x->f[i].s);
	x->nf = 0;
}

static int
k_gc(lua_State *L)
{
	LKernel *x = luaL_checkudata(L, 1, KERNEL);

	frames_clear(x);
	free(x->f);
	x->f = NULL;
	x->capf = 0;
	kernel_free(x->k);
	x->k = NULL;
	return 0;
}

LKernel *
lk_checkk(lua_State *L, int i)
{
	LKernel *x = luaL_checkudata(L, i, KERNEL);

	if (!x->k)
		luaL_error(L, "kernel: the kernel was freed");
	return x;
}

/* A new kernel userdata (safe empty state first), its uservalue 1 the
** tensor it was lowered from (keeps that graph alive). */
static LKernel *
newk(lua_State *L)
{
	LKernel *x = lua_newuserdatauv(L, sizeof *x, 1);

	memset(x, 0, sizeof *x);
	luaL_setmetatable(L, KERNEL);
	return x;
}

int
lk_err(lua_State *L, const Err *e)
{
	return luaL_error(L, "%s", e->msg[0] ? e->msg : "kernel: out of memory");
}

/* For lua_sched.c: push a kernel userdata that owns k, anchored to the value
** at index anchor (a tensor graph, or 0 for none); the Kernel of a userdata. */
void
tessel_pushkernel(lua_State *L, Kernel *k, int anchor)
{
	LKernel *x;

	anchor = anchor ? lua_absindex(L, anchor) : 0;
	x = newk(L);
	x->k = k;
	if (anchor) {
		lua_pushvalue(L, anchor);
		lua_setiuservalue(L, -2, 1);
	}
}

Kernel *
tessel_checkkernel(lua_State *L, int i)
{
	return lk_checkk(L, i)->k;
}

/* ---- values ---- */

void
lk_pushvalue(lua_State *L, UOp *u, int ki)
{
	LValue *v;

	ki = lua_absindex(L, ki);
	if (!u)
		luaL_error(L, "kernel: out of memory, or the expression nests too deep");
	v = lua_newuserdatauv(L, sizeof *v, 1);
	v->u = u;
	luaL_setmetatable(L, KVALUE);
	lua_pushvalue(L, ki);
	lua_setiuservalue(L, -2, 1);
}

/* The kernel a value or buffer at i belongs to, pushed; NULL when i is neither. */
LKernel *
lk_owner(lua_State *L, int i)
{
	if (!luaL_testudata(L, i, KVALUE) && !luaL_testudata(L, i, KBUFFER))
		return NULL;
	lua_getiuservalue(L, i, 1);
	return luaL_testudata(L, -1, KERNEL);
}

/*
** An operand in kernel K (at stack index ki): a kernel value of the same
** kernel, a uop expression (copied in), an integer (an index constant next
** to index arithmetic, else a constant of dtype `like`), a float, a boolean.
*/
UOp *
lk_operand(lua_State *L, int i, int ki, DType like, const char *what)
{
	LKernel *K = lua_touserdata(L, ki), *o;
	LValue *v = luaL_testudata(L, i, KVALUE);

	if (v) {
		o = lk_owner(L, i);
		lua_pop(L, 1);
		if (o != K)
			luaL_error(L, "%s: the value belongs to another kernel", what);
		return v->u;
	}
	if (tessel_uop_isexpr(L, i))
		return tessel_uop_operand(L, i, K->k->c, what);
	switch (lua_type(L, i)) {
	case LUA_TNUMBER:
		if (lua_isinteger(L, i) && (like == DT_INDEX || !dtype_is_float(like)))
			return like == DT_INDEX || like == DT_VOID ? uop_int(K->k->c, lua_tointeger(L, i))
			                                           : kernel_const(K->k, like, (double)lua_tointeger(L, i));
		return kernel_const(K->k, dtype_is_float(like) ? like : DT_FLOAT32, lua_tonumber(L, i));
	case LUA_TBOOLEAN:
		return kernel_const(K->k, DT_BOOL, lua_toboolean(L, i));
	default:
		luaL_error(L, "%s: expected a kernel value, an index expression or a number, got %s", what,
		           luaL_typename(L, i));
	}
	return NULL;
}

/* The kernel of the first kernel value or buffer among the arguments, pushed
** on the stack (its index returned), or the kernel being staged. */
int
lk_find_kernel(lua_State *L, int n, const char *what)
{
	int i;

	for (i = 1; i <= n; i++)
		if (lk_owner(L, i))
			return lua_gettop(L);
		else if (luaL_testudata(L, i, KVALUE) || luaL_testudata(L, i, KBUFFER))
			lua_pop(L, 1);
	if (lua_getfield(L, LUA_REGISTRYINDEX, STAGING) == LUA_TUSERDATA)
		return lua_gettop(L);
	luaL_error(L, "%s: no kernel value among the arguments, and no stage is being recorded", what);
	return 0;
}

static DType
vtype(const UOp *u)
{
	return (DType)u->dtype;
}

/* a and b brought to one dtype: index arithmetic stays index; otherwise the promotion */
static DType
unify(LKernel *K, UOp **a, UOp **b)
{
	DType ta = vtype(*a), tb = vtype(*b), t;

	if (ta == tb)
		return ta;
	if (ta == DT_INDEX && (tb == DT_INT64 || tb == DT_INT32) && (*b)->op == OP_CONST)
		return DT_INDEX;
	if (tb == DT_INDEX && (ta == DT_INT64 || ta == DT_INT32) && (*a)->op == OP_CONST)
		return DT_INDEX;
	t = ta == DT_INDEX ? tb : tb == DT_INDEX ? ta : dtype_promote(ta, tb);
	*a = kernel_cast(K->k, t, *a);
	*b = kernel_cast(K->k, t, *b);
	return t;
}

/* index arithmetic as the simplifier writes it (1 < i + 1 is 0 < i) */
static UOp *
isimp(LKernel *K, UOp *u)
{
	UOp *s;
	Err e;

	return u && uop_simplify(K->k->c, u, &s, &e) == 0 ? s : u;
}

static int
binop(lua_State *L, Op op, const char *what)
{
	int ki;
	LKernel *K;
	UOp *a, *b, *src[2];
	DType t, la = DT_VOID, lb = DT_VOID;
	LValue *v;

	lua_settop(L, 2);
	ki = lk_find_kernel(L, 2, what);
	K = lua_touserdata(L, ki);
	if ((v = luaL_testudata(L, 1, KVALUE)))
		la = vtype(v->u);
	if ((v = luaL_testudata(L, 2, KVALUE)))
		lb = vtype(v->u);
	a = lk_operand(L, 1, ki, lb != DT_VOID ? lb : DT_INDEX, what);
	b = lk_operand(L, 2, ki, la != DT_VOID ? la : DT_INDEX, what);
	t = unify(K, &a, &b);
	if (op == OP_IDIV && dtype_is_float(t)) {
		/* a / b on floats is a * (1/b), as tensor programs write it */
		src[0] = b;
		b = kernel_alu(K->k, OP_RECIP, t, src, 1);
		op = OP_MUL;
	}
	src[0] = a;
	src[1] = b;
	lk_pushvalue(L, t == DT_INDEX ? isimp(K, uop_alu(K->k->c, op, a, b)) : kernel_alu(K->k, op, t, src, 2), ki);
	return 1;
}

static int v_add(lua_State *L) { return binop(L, OP_ADD, "+"); }
static int v_sub(lua_State *L) { return binop(L, OP_SUB, "-"); }
static int v_mul(lua_State *L) { return binop(L, OP_MUL, "*"); }
static int v_div(lua_State *L) { return binop(L, OP_IDIV, "/"); }
static int v_idiv(lua_State *L) { return binop(L, OP_IDIV, "//"); }
static int v_mod(lua_State *L) { return binop(L, OP_MOD, "%"); }
static int l_max(lua_State *L) { return binop(L, OP_MAX, "kernel.max"); }
static int l_lt(lua_State *L) { return binop(L, OP_CMPLT, "kernel.lt"); }
static int l_ne(lua_State *L) { return binop(L, OP_CMPNE, "kernel.ne"); }
static int l_eq(lua_State *L) { return binop(L, OP_CMPEQ, "kernel.eq"); }

static int
l_gt(lua_State *L)
{
	lua_settop(L, 2);
	lua_insert(L, 1);
	return binop(L, OP_CMPLT, "kernel.gt");
}

/* a >= b is b < a + 1 on integers, not(a < b) on floats (printed a >= b) */
static int
negated(lua_State *L, int swap, const char *what)
{
	LKernel *K;
	UOp *a, *b, *c, *t;
	int ki;

	lua_settop(L, 2);
	if (swap)
		lua_insert(L, 1);
	ki = lk_find_kernel(L, 2, what);
	K = lua_touserdata(L, ki);
	a = lk_operand(L, 1, ki, DT_INDEX, what);
	b = lk_operand(L, 2, ki, vtype(a), what);
	if (unify(K, &a, &b) == DT_INDEX) {
		lk_pushvalue(L, isimp(K, uop_alu(K->k->c, OP_CMPLT, b, uop_add(K->k->c, a, uop_int(K->k->c, 1)))), ki);
		return 1;
	}
	c = kernel_alu(K->k, OP_CMPLT, vtype(a), (UOp *[]){ a, b }, 2);
	t = kernel_const(K->k, DT_BOOL, 1);
	lk_pushvalue(L, kernel_alu(K->k, OP_CMPNE, DT_BOOL, (UOp *[]){ c, t }, 2), ki);
	return 1;
}

static int l_ge(lua_State *L) { return negated(L, 0, "kernel.ge"); }
static int l_le(lua_State *L) { return negated(L, 1, "kernel.le"); }

/* min(a, b) = -max(-a, -b) keeps to the ops tensor programs have */
static int
l_min(lua_State *L)
{
	int ki;
	LKernel *K;
	UOp *a, *b;
	DType t;

	lua_settop(L, 2);
	ki = lk_find_kernel(L, 2, "kernel.min");
	K = lua_touserdata(L, ki);
	a = lk_operand(L, 1, ki, DT_INDEX, "kernel.min");
	b = lk_operand(L, 2, ki, vtype(a), "kernel.min");
	t = unify(K, &a, &b);
	lk_pushvalue(L, t == DT_INDEX ? uop_alu(K->k->c, OP_MIN, a, b)
	          : kernel_alu(K->k, OP_MIN, t, (UOp *[]){ a, b }, 2), ki);
	return 1;
}

static int
v_unm(lua_State *L)
{
	int ki = lk_find_kernel(L, 1, "-");
	LKernel *K = lua_touserdata(L, ki);
	UOp *a = lk_operand(L, 1, ki, DT_INDEX, "-");

	lk_pushvalue(L, vtype(a) == DT_INDEX ? uop_neg(K->k->c, a) : kernel_alu(K->k, OP_NEG, vtype(a), &a, 1), ki);
	return 1;
}

/* unary math: x converted to float32 unless it is a float already */
static int
unary(lua_State *L, Op op, double pre, double post, const char *what)
{
	int ki;
	LKernel *K;
	UOp *a, *c;
	DType t;

	lua_settop(L, 1);
	ki = lk_find_kernel(L, 1, what);
	K = lua_touserdata(L, ki);
	a = lk_operand(L, 1, ki, DT_FLOAT32, what);
	t = dtype_is_float(vtype(a)) ? vtype(a) : DT_FLOAT32;
	a = kernel_cast(K->k, t, a);
	if (pre != 1) {
		c = kernel_const(K->k, t, pre);
		a = kernel_alu(K->k, OP_MUL, t, (UOp *[]){ a, c }, 2);
	}
	a = kernel_alu(K->k, op, t, &a, 1);
	if (post != 1) {
		c = kernel_const(K->k, t, post);
		a = kernel_alu(K->k, OP_MUL, t, (UOp *[]){ a, c }, 2);
	}
	lk_pushvalue(L, a, ki);
	return 1;
}

static int l_exp(lua_State *L) { return unary(L, OP_EXP2, 1.4426950408889634, 1, "kernel.exp"); }
static int l_log(lua_State *L) { return unary(L, OP_LOG2, 1, 0.6931471805599453, "kernel.log"); }
static int l_exp2(lua_State *L) { return unary(L, OP_EXP2, 1, 1, "kernel.exp2"); }
static int l_log2(lua_State *L) { return unary(L, OP_LOG2, 1, 1, "kernel.log2"); }
static int l_sqrt(lua_State *L) { return unary(L, OP_SQRT, 1, 1, "kernel.sqrt"); }
static int l_sin(lua_State *L) { return unary(L, OP_SIN, 1, 1, "kernel.sin"); }
static int l_recip(lua_State *L) { return unary(L, OP_RECIP, 1, 1, "kernel.recip"); }

static int
l_where(lua_State *L)
{
	int ki;
	LKernel *K;
	UOp *c, *a, *b;
	DType t;

	lua_settop(L, 3);
	ki = lk_find_kernel(L, 3, "kernel.where");
	K = lua_touserdata(L, ki);
	c = lk_operand(L, 1, ki, DT_BOOL, "kernel.where");
	if (c->dtype != DT_BOOL)
		return luaL_error(L, "kernel.where: the condition is a %s, not a bool (a comparison)",
		                  dtype_name(c->dtype));
	a = lk_operand(L, 2, ki, DT_INDEX, "kernel.where");
	b = lk_operand(L, 3, ki, vtype(a), "kernel.where");
	t = unify(K, &a, &b);
	lk_pushvalue(L, t == DT_INDEX ? uop_where(K->k->c, c, a, b)
	          : kernel_alu(K->k, OP_WHERE, t, (UOp *[]){ c, a, b }, 3), ki);
	return 1;
}

static DType
check_dtype(lua_State *L, int i, const char *what)
{
	DType t;

	if (dtype_parse(luaL_checkstring(L, i), &t) < 0 || t == DT_VOID || t == DT_INDEX)
		luaL_error(L, "%s: unknown dtype %s (float32, float16, bfloat16, float64, int32, ...)", what,
		           lua_tostring(L, i));
	return t;
}

static int
l_cast(lua_State *L)
{
	int ki;
	LKernel *K;
	UOp *a;
	DType t;

	lua_settop(L, 2);
	t = check_dtype(L, 2, "kernel.cast");
	ki = lk_find_kernel(L, 1, "kernel.cast");
	K = lua_touserdata(L, ki);
	a = lk_operand(L, 1, ki, t, "kernel.cast");
	lk_pushvalue(L, kernel_cast(K->k, t, a), ki);
	return 1;
}

static int
v_tostring(lua_State *L)
{
	LValue *v = luaL_checkudata(L, 1, KVALUE);
	LKernel *K = lk_owner(L, 1);
	Buf b;

	buf_init(&b);
	if (K && K->k)
		kernel_print_expr(&b, K->k, v->u);
	lua_pushstring(L, b.s ? b.s : "");
	buf_free(&b);
	return 1;
}

static int
v_index(lua_State *L)
{
	LValue *v = luaL_checkudata(L, 1, KVALUE);
	const char *f = luaL_checkstring(L, 2);

	if (strcmp(f, "dtype") == 0)
		lua_pushstring(L, dtype_name(v->u->dtype));
	else if (strcmp(f, "range") == 0 && v->u->dtype == DT_INDEX) {
		lua_pushinteger(L, v->u->vmin);
		lua_pushinteger(L, v->u->vmax);
		return 2;
	} else
		lua_pushnil(L);
	return 1;
}

/* ---- recording ---- */

LKernel *
lk_staging(lua_State *L, const char *what)
{
	LKernel *x;

	if (lua_getfield(L, LUA_REGISTRYINDEX, STAGING) != LUA_TUSERDATA)
		luaL_error(L, "%s: statements are recorded inside k:stage(name, function() ... end)", what);
	x = lua_touserdata(L, -1);
	lua_pop(L, 1);
	return x;
}

void
lk_append(lua_State *L, LKernel *x, UOp *s)
{
	Frame *f = &x->f[x->nf - 1];

	if (!s)
		luaL_error(L, "kernel: out of memory, or the program nests too deep");
	if (f->n == f->cap) {
		int cap = f->cap ? 2 * f->cap : 8;
		UOp **ns = realloc(f->s, cap * sizeof *ns);

		if (!ns)
			luaL_error(L, "kernel: out of memory");
		f->s = ns;
		f->cap = cap;
	}
	f->s[f->n++] = s;
}

void
lk_push_frame(lua_State *L, LKernel *x, int kind, UOp *head)
{
	if (x->nf == x->capf) {
		int cap = x->capf ? 2 * x->capf : 8;
		Frame *nf = realloc(x->f, cap * sizeof *nf);

		if (!nf)
			luaL_error(L, "kernel: out of memory");
		x->f = nf;
		x->capf = cap;
	}
	if (x->nf >= 64)
		luaL_error(L, "kernel: blocks nest deeper than 64");
	memset(&x->f[x->nf], 0, sizeof x->f[0]);
	x->f[x->nf].kind = kind;
	x->f[x->nf].head = head;
	x->nf++;
}

/* Close the innermost frame into its statement and append it to the parent. */
void
lk_pop_frame(lua_State *L, LKernel *x)
{
	Frame f = x->f[--x->nf];
	UOp *s = f.kind == 1 ? kernel_loop(x->k, f.head, f.s, f.n) : kernel_if(x->k, f.head, f.s, f.n);

	free(f.s);
	lk_append(L, x, s);
}

/* Index operands: a table {i, j} or one operand. */
int
lk_indices(lua_State *L, int i, int ki, UOp **idx, const char *what)
{
	int n, j;

	if (lua_type(L, i) != LUA_TTABLE) {
		idx[0] = lk_operand(L, i, ki, DT_INDEX, what);
		return 1;
	}
	tessel_checkseq(L, i, what);
	n = (int)luaL_len(L, i);
	if (n > T_MAXDIM)
		luaL_error(L, "%s: %d indices (at most %d)", what, n, T_MAXDIM);
	for (j = 0; j < n; j++) {
		lua_geti(L, i, j + 1);
		idx[j] = lk_operand(L, lua_gettop(L), ki, DT_INDEX, what);
		lua_pop(L, 1);
	}
	return n;
}

UOp *
lk_access(lua_State *L, int bi, int keyi, int ki, const char *what)
{
	LKernel *K = lua_touserdata(L, ki);
	LBuf *b = luaL_checkudata(L, bi, KBUFFER);
	const KBuf *kb = &K->k->buf[b->b];
	UOp *idx[T_MAXDIM], *u;
	int n = lk_indices(L, keyi, ki, idx, what), j;

	if (n != kb->ndim)
		luaL_error(L, "%s: %s has %d dimensions, %d indices given", what, kb->name, kb->ndim, n);
	for (j = 0; j < n; j++)
		if (idx[j]->dtype != DT_INDEX && idx[j]->dtype != DT_INT32 && idx[j]->dtype != DT_INT64)
			luaL_error(L, "%s: index %d of %s is a %s value, not an integer", what, j + 1, kb->name,
			           dtype_name(idx[j]->dtype));
	if (!(u = kernel_index(K->k, b->b, idx, n)))
		luaL_error(L, "kernel: out of memory");
	return u;
}

static int
b_index(lua_State *L)
{
	LBuf *b = luaL_checkudata(L, 1, KBUFFER);
	LKernel *K = lk_owner(L, 1);
	int ki = lua_gettop(L);
	const KBuf *kb;

	if (!K || !K->k)
		return luaL_error(L, "kernel: the buffer's kernel was freed");
	kb = &K->k->buf[b->b];
	if (lua_type(L, 2) == LUA_TSTRING) {
		const char *f = lua_tostring(L, 2);

		if (strcmp(f, "name") == 0)
			lua_pushstring(L, kb->name);
		else if (strcmp(f, "dtype") == 0)
			lua_pushstring(L, dtype_name(kb->dtype));
		else if (strcmp(f, "scope") == 0)
			lua_pushstring(L, kscope_name(kb->scope));
		else if (strcmp(f, "role") == 0)
			lua_pushstring(L, krole_name(kb->role));
		else if (strcmp(f, "layout") == 0)
			lua_pushstring(L, kb->layout_desc);
		else if (strcmp(f, "shape") == 0) {
			int i;

			lua_createtable(L, kb->ndim, 0);
			for (i = 0; i < kb->ndim; i++) {
				lua_pushinteger(L, kb->shape[i]);
				lua_rawseti(L, -2, i + 1);
			}
		} else if (luaL_getmetafield(L, 1, "methods") == LUA_TTABLE)
			lua_getfield(L, -1, f);
		else
			lua_pushnil(L);
		return 1;
	}
	lk_pushvalue(L, kernel_load(K->k, lk_access(L, 1, 2, ki, "load"), NULL), ki);
	return 1;
}

static void
store(lua_State *L, int bi, int keyi, int vi, int gi)
{
	LBuf *b = luaL_checkudata(L, bi, KBUFFER);
	LKernel *K = lk_owner(L, bi), *S;
	int ki = lua_gettop(L);
	DType t = K->k->buf[b->b].dtype;
	UOp *ix, *v, *g = NULL;

	S = lk_staging(L, "store");
	if (S != K)
		luaL_error(L, "store: %s belongs to another kernel than the stage being recorded",
		           K->k->buf[b->b].name);
	ix = lk_access(L, bi, keyi, ki, "store");
	v = lk_operand(L, vi, ki, t, "store");
	if (vtype(v) != t)
		v = kernel_cast(K->k, t, v);
	if (gi) {
		g = lk_operand(L, gi, ki, DT_BOOL, "store");
		if (g->dtype != DT_BOOL)
			luaL_error(L, "store: the gate is a %s, not a bool", dtype_name(g->dtype));
	}
	lk_append(L, K, kernel_store(K->k, ix, v, g));
}

static int
b_newindex(lua_State *L)
{
	lua_settop(L, 3);
	store(L, 1, 2, 3, 0);
	return 0;
}

/* B:store(idx, value [, gate]) */
static int
b_store(lua_State *L)
{
	lua_settop(L, 4);
	store(L, 1, 2, 3, lua_isnil(L, 4) ? 0 : 4);
	return 0;
}

/* B:load(idx [, gate]): 0 where the gate is false, and memory is not touched */
static int
b_load(lua_State *L)
{
	LKernel *K;
	int ki;
	UOp *g = NULL, *ix;

	lua_settop(L, 3);
	K = lk_owner(L, 1);
	ki = lua_gettop(L);
	if (!K)
		return luaL_typeerror(L, 1, KBUFFER);
	ix = lk_access(L, 1, 2, ki, "load");
	if (!lua_isnil(L, 3)) {
		g = lk_operand(L, 3, ki, DT_BOOL, "load");
		if (g->dtype != DT_BOOL)
			return luaL_error(L, "load: the gate is a %s, not a bool", dtype_name(g->dtype));
	}
	lk_pushvalue(L, kernel_load(K->k, ix, g), ki);
	return 1;
}

static int
b_tostring(lua_State *L)
{
	LBuf *b = luaL_checkudata(L, 1, KBUFFER);
	LKernel *K = lk_owner(L, 1);
	const KBuf *kb;
	Buf s;

	if (!K || !K->k)
		return luaL_error(L, "kernel: the buffer's kernel was freed");
	kb = &K->k->buf[b->b];
	buf_init(&s);
	emit(&s, "<%s %s %s ", krole_name(kb->role), kscope_name(kb->scope), dtype_name(kb->dtype));
	uop_shape_str(&s, kb->shape, kb->ndim);
	emit(&s, " %s, %s>", kb->name, kb->layout_desc);
	lua_pushstring(L, s.s ? s.s : "");
	buf_free(&s);
	return 1;
}

static void
pushbuf(lua_State *L, int b, int ki)
{
	LBuf *x;

	ki = lua_absindex(L, ki);
	x = lua_newuserdatauv(L, sizeof *x, 1);
	x->b = b;
	luaL_setmetatable(L, KBUFFER);
	lua_pushvalue(L, ki);
	lua_setiuservalue(L, -2, 1);
}

/* ---- kernels ---- */

/* kernel.lower(t [, {name = "out"}]) */
static int
l_lower(lua_State *L)
{
	const UOp *t = tessel_testtensor(L, 1);
	KLowerOpts o = { NULL };
	LKernel *x;
	Err e = { "" };

	if (!t)
		return luaL_typeerror(L, 1, "tensor");
	if (lua_type(L, 2) == LUA_TTABLE) {
		static const TesselOpt keys[] = { { "name", "string" }, { NULL, NULL } };

		tessel_checkopts(L, 2, "kernel.lower", keys);
		lua_getfield(L, 2, "name");
		o.out_name = lua_tostring(L, -1);   /* the table keeps the string */
		lua_pop(L, 1);
	} else if (lua_type(L, 2) == LUA_TSTRING)
		o.out_name = lua_tostring(L, 2);
	else if (!lua_isnoneornil(L, 2))
		return luaL_typeerror(L, 2, "name or options table");
	x = newk(L);
	lua_pushvalue(L, 1);
	lua_setiuservalue(L, -2, 1);
	if (!(x->k = kernel_lower(t, &o, &e)))
		return lk_err(L, &e);
	return 1;
}

static void
int3(lua_State *L, int t, const char *f, int64_t *v)
{
	int i;

	v[0] = v[1] = v[2] = 0;
	if (lua_getfield(L, t, f) == LUA_TNUMBER)
		v[0] = lua_tointeger(L, -1);
	else if (lua_type(L, -1) == LUA_TTABLE) {
		if (luaL_len(L, -1) > 3)
			luaL_error(L, "kernel.new: %s has at most 3 dimensions", f);
		tessel_checkseq(L, -1, f[0] == 'g' ? "kernel.new: grid" : "kernel.new: block");
		for (i = 0; i < 3; i++) {
			if (lua_geti(L, -1, i + 1) != LUA_TNIL && !lua_isinteger(L, -1))
				luaL_error(L, "kernel.new: %s[%d] is a %s, not an integer", f, i + 1, luaL_typename(L, -1));
			v[i] = lua_tointeger(L, -1);
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	for (i = 0; i < 3; i++)
		if (v[i] < 0 || v[i] > (1 << 30) || (f[0] == 'b' && v[i] > 1024))
			luaL_error(L, "kernel.new: %s[%d] = %I is out of range", f, i + 1, (lua_Integer)v[i]);
}

/* kernel.new{grid = {gx, gy}, block = {bx, by}} */
static int
l_new(lua_State *L)
{
	static const char *const bn[3] = { "bx", "by", "bz" }, *const tn[3] = { "tx", "ty", "tz" };
	static const TesselOpt keys[] = { { "grid", "integer|table" }, { "block", "integer|table" }, { NULL, NULL } };
	int64_t g[3] = { 0 }, b[3] = { 0 };
	LKernel *x;
	int i;

	if (tessel_checkopts(L, 1, "kernel.new", keys)) {
		int3(L, 1, "grid", g);
		int3(L, 1, "block", b);
	}
	x = newk(L);
	if (!(x->k = kernel_new()))
		return luaL_error(L, "kernel: out of memory");
	for (i = 0; i < 3; i++) {
		if (g[i] && !(x->grid[i] = kernel_range(x->k, kernel_var(x->k, bn[i], g[i]), AX_GLOBAL,
		                                        (HwAxis)(HW_BLOCK_X + i))))
			return luaL_error(L, "kernel: out of memory");
		if (b[i] && !(x->blk[i] = kernel_range(x->k, kernel_var(x->k, tn[i], b[i]), AX_LOCAL,
		                                       (HwAxis)(HW_THREAD_X + i))))
			return luaL_error(L, "kernel: out of memory");
	}
	return 1;
}

/* k:buffer(name, dtype, shape [, {scope=, role=, layout=}]) and its short forms */
static int
set_layout(lua_State *L, LKernel *x, int b, int li)
{
	Layout tmp;
	Composed ctmp;
	const Composed *cl;
	const Lego *g;
	const AxeLayout *a;
	Err e = { "" };
	int rc;

	if ((g = tessel_testlego(L, li)))
		rc = kernel_layout_lego(x->k, b, g, &e);
	else if ((a = tessel_testaxe(L, li)))
		rc = kernel_layout_axe(x->k, b, a, &e);
	else if ((cl = tessel_testcomposed(L, li, &ctmp)))
		rc = kernel_layout_cute(x->k, b, NULL, cl, &e);
	else
		rc = kernel_layout_cute(x->k, b, tessel_checklayout(L, li, &tmp), NULL, &e);
	return rc < 0 ? lk_err(L, &e) : 0;
}

static const char *
add_buffer_name(KRole role, UAddrSpace scope)
{
	if (scope == AS_REG)
		return "k:register";
	if (scope == AS_LOCAL)
		return "k:shared";
	return role == KB_INPUT ? "k:input" : role == KB_OUTPUT ? "k:output" : "k:buffer";
}

static int
add_buffer(lua_State *L, KRole role, UAddrSpace scope, int opts)
{
	LKernel *x = lk_checkk(L, 1);
	const char *name = luaL_checkstring(L, 2);
	DType t = check_dtype(L, 3, "k:buffer");
	int64_t shape[T_MAXDIM];
	int n, i, b, li = 0;
	const char *op = add_buffer_name(role, scope);
	char what[64];
	Err e = { "" };

	if (lua_isinteger(L, 4)) {
		shape[0] = lua_tointeger(L, 4);
		n = 1;
	} else {
		luaL_checktype(L, 4, LUA_TTABLE);
		snprintf(what, sizeof what, "%s: the shape", op);
		tessel_checkseq(L, 4, what);
		n = (int)luaL_len(L, 4);
		if (n > T_MAXDIM)
			return luaL_error(L, "%s: %s has %d dimensions (at most %d)", op, name, n, T_MAXDIM);
		for (i = 0; i < n; i++) {
			lua_geti(L, 4, i + 1);
			if (!lua_isinteger(L, -1))
				return luaL_error(L, "%s: the shape of %s must hold integers", op, name);
			shape[i] = lua_tointeger(L, -1);
			lua_pop(L, 1);
		}
	}
	/* options: k:buffer's always; the others' when the table names its fields
	** ({layout = ...}), since a plain list there is a CuTe shape */
	if (lua_type(L, 5) == LUA_TTABLE && (opts || lua_getfield(L, 5, "layout") != LUA_TNIL)) {
		static const TesselOpt keys[] = {
			{ "scope", "string" }, { "role", "string" }, { "layout", NULL }, { NULL, NULL }
		};
		const char *s;

		if (!opts && (lua_getfield(L, 5, "scope") != LUA_TNIL || lua_getfield(L, 5, "role") != LUA_TNIL))
			return luaL_error(L, "%s: %s: the options take only layout = (k:buffer sets scope and role)",
			                  op, name);
		tessel_checkopts(L, 5, op, opts ? keys : keys + 2);   /* k:input and the others: layout only */
		lua_settop(L, 5);
		if (lua_getfield(L, 5, "scope") == LUA_TSTRING) {
			s = lua_tostring(L, -1);
			if (kscope_parse(s, &scope) < 0)
				return luaL_error(L, "%s: unknown scope %s (global, shared, local)", op, s);
		}
		if (lua_getfield(L, 5, "role") == LUA_TSTRING) {
			s = lua_tostring(L, -1);
			role = strcmp(s, "input") == 0 ? KB_INPUT : strcmp(s, "output") == 0 ? KB_OUTPUT
			     : strcmp(s, "temp") == 0 ? KB_TEMP : (KRole)-1;
			if ((int)role < 0)
				return luaL_error(L, "%s: unknown role %s (input, output, temp)", op, s);
		}
		lua_pop(L, 2);
		if (lua_getfield(L, 5, "layout") != LUA_TNIL)
			li = lua_gettop(L);
		else
			lua_pop(L, 1);
	} else if (!lua_isnoneornil(L, 5))
		li = 5;
	if (scope != AS_GLOBAL && role != KB_TEMP)
		return luaL_error(L, "%s: %s: inputs and outputs live in global memory", op, name);
	if ((b = kernel_add_buffer(x->k, name, t, scope, role, shape, n, &e)) < 0)
		return lk_err(L, &e);
	if (li)
		set_layout(L, x, b, li);
	pushbuf(L, b, 1);
	return 1;
}

static int k_input(lua_State *L) { return add_buffer(L, KB_INPUT, AS_GLOBAL, 0); }
static int k_output(lua_State *L) { return add_buffer(L, KB_OUTPUT, AS_GLOBAL, 0); }
static int k_shared(lua_State *L) { return add_buffer(L, KB_TEMP, AS_LOCAL, 0); }
static int k_register(lua_State *L) { return add_buffer(L, KB_TEMP, AS_REG, 0); }
static int k_buffer(lua_State *L) { return add_buffer(L, KB_TEMP, AS_GLOBAL, 1); }

static int
k_set_layout(lua_State *L)
{
	LKernel *x = lk_checkk(L, 1);
	const char *name = luaL_checkstring(L, 2);
	int b = kernel_find_buffer(x->k, name);

	if (b < 0)
		return luaL_error(L, "k:set_layout: the kernel has no buffer %s", name);
	set_layout(L, x, b, 3);
	lua_settop(L, 1);
	return 1;
}

/* k.A: the buffer A; k.bx, k.tx...: kernel.new's hardware indices */
static int
k_index(lua_State *L)
{
	LKernel *x = lk_checkk(L, 1);
	const char *f = luaL_checkstring(L, 2);
	static const char *const hw[6] = { "bx", "by", "bz", "tx", "ty", "tz" };
	int i, b;

	for (i = 0; i < 6; i++)
		if (strcmp(f, hw[i]) == 0) {
			UOp *r = i < 3 ? x->grid[i] : x->blk[i - 3];

			if (!r)
				return luaL_error(L, "k.%s: the kernel has no %s dimension (kernel.new{%s = ...})", f,
				                  i < 3 ? "grid" : "block", i < 3 ? "grid" : "block");
			lk_pushvalue(L, krange_var(r), 1);
			return 1;
		}
	if (luaL_getmetafield(L, 1, "methods") == LUA_TTABLE && lua_getfield(L, -1, f) != LUA_TNIL)
		return 1;
	if ((b = kernel_find_buffer(x->k, f)) >= 0) {
		pushbuf(L, b, 1);
		return 1;
	}
	lua_pushnil(L);
	return 1;
}

/* k:stage(name, function() ... end): record a stage */
static int
k_stage(lua_State *L)
{
	LKernel *x = lk_checkk(L, 1);
	const char *name = luaL_checkstring(L, 2);
	UOp *body;
	int i, rc;
	Err e = { "" };

	luaL_checktype(L, 3, LUA_TFUNCTION);
	if (x->nf)
		return luaL_error(L, "k:stage: a stage is already being recorded");
	if (lua_getfield(L, LUA_REGISTRYINDEX, STAGING) != LUA_TNIL)
		return luaL_error(L, "k:stage: another kernel's stage is being recorded");
	lua_pop(L, 1);
	lk_push_frame(L, x, 0, NULL);
	lua_pushvalue(L, 1);
	lua_setfield(L, LUA_REGISTRYINDEX, STAGING);
	lua_pushvalue(L, 3);
	lua_pushvalue(L, 1);
	rc = lua_pcall(L, 1, 0, 0);
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, STAGING);
	if (rc != LUA_OK) {
		frames_clear(x);
		return lua_error(L);
	}
	if (x->nf != 1) {
		frames_clear(x);
		return luaL_error(L, "k:stage: %s: a loop was left open (a break inside `for ... in kernel.range`?)", name);
	}
	if (x->f[0].n == 0) {
		frames_clear(x);
		return luaL_error(L, "k:stage: %s records no statement", name);
	}
	body = x->f[0].n == 1 ? x->f[0].s[0] : kernel_if(x->k, kernel_const(x->k, DT_BOOL, 1), x->f[0].s, x->f[0].n);
	frames_clear(x);
	/* kernel.new's grid and block wrap every stage: blocks outermost */
	for (i = 2; i >= 0 && body; i--)
		if (x->blk[i])
			body = kernel_loop(x->k, x->blk[i], &body, 1);
	for (i = 2; i >= 0 && body; i--)
		if (x->grid[i])
			body = kernel_loop(x->k, x->grid[i], &body, 1);
	if (kernel_add_stage(x->k, name, body, NULL, &e) < 0)
		return lk_err(L, &e);
	lua_settop(L, 1);
	return 1;
}

/* k:check(): true and the notes (a string, "" when none); raises what is wrong */
static int
k_check(lua_State *L)
{
	LKernel *x = lk_checkk(L, 1);
	Buf notes;
	Err e = { "" };
	int rc;

	buf_init(&notes);
	rc = kernel_check(x->k, &notes, &e);
	if (rc < 0) {
		buf_free(&notes);
		return lk_err(L, &e);
	}
	lua_pushboolean(L, 1);
	lua_pushstring(L, notes.s ? notes.s : "");
	buf_free(&notes);
	return 2;
}

void
tessel_pushkernel_text(lua_State *L, const Kernel *k, int color)
{
	Buf b;

	buf_init(&b);
	kernel_print(&b, k, color);
	if (b.len && b.s[b.len - 1] == '\n')
		b.s[--b.len] = 0;
	lua_pushstring(L, b.s ? b.s : "");
	buf_free(&b);
}

static int
k_text(lua_State *L, int color)
{
	tessel_pushkernel_text(L, lk_checkk(L, 1)->k, color);
	return 1;
}

static int k_tostring(lua_State *L) { return k_text(L, 0); }

/* show(k [, {color =}]): __show(k, opts, op) */
static int
k_show(lua_State *L)
{
	static const TesselOpt keys[] = { { "color", "boolean" }, { NULL, NULL } };

	tessel_checkopts(L, 2, luaL_optstring(L, 3, "show"), keys);
	return k_text(L, tessel_want_color(L, 2));
}

static int
k_uops(lua_State *L)
{
	LKernel *x = lk_checkk(L, 1);
	Buf b;

	buf_init(&b);
	kernel_print_uops(&b, x->k);
	lua_pushstring(L, b.s ? b.s : "");
	buf_free(&b);
	return 1;
}

static int
k_tile_ir(lua_State *L)
{
	LKernel *x = lk_checkk(L, 1);
	Buf b;
	Err e = { "" };

	buf_init(&b);
	if (tile_ir_print(&b, x->k, &e) < 0) {
		buf_free(&b);
		return lk_err(L, &e);
	}
	if (b.len && b.s[b.len - 1] == '\n')
		b.s[--b.len] = 0;
	lua_pushstring(L, b.s ? b.s : "");
	buf_free(&b);
	return 1;
}

static int
k_buffers(lua_State *L)
{
	LKernel *x = lk_checkk(L, 1);
	Buf b;

	buf_init(&b);
	kernel_print_buffers(&b, x->k);
	lua_pushstring(L, b.s ? b.s : "");
	buf_free(&b);
	return 1;
}

static int
k_stages(lua_State *L)
{
	LKernel *x = lk_checkk(L, 1);
	int i;

	lua_createtable(L, x->k->nstage, 0);
	for (i = 0; i < x->k->nstage; i++) {
		lua_pushstring(L, x->k->stage[i].name);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static int
k_scene(lua_State *L)
{
	LKernel *x = lk_checkk(L, 1);
	VizOpts o;
	Err e = { "" };

	tessel_vizopts(L, 2, 3, &o, NULL);
	if (kernel_scene(tessel_toscene(L, 3), x->k, NULL, &o, &e) < 0)
		return lk_err(L, &e);
	return 0;
}

static const HelpReg kfuncs[] = {
	{ "lower", l_lower,
	  "kernel.lower(t [, name]): the kernel that computes tensor t\n"
	  "kernel.lower(t [, name | {name = }]) -> a kernel: one stage (loop nest) per reduction,\n"
	  "contiguous mark and the root, elementwise chains inlined, movement ops as simplified\n"
	  "index expressions, padding as guarded loads. print(k) shows it; k:run(bindings) runs it." },
	{ "new", l_new,
	  "kernel.new{grid = , block = }: a kernel written in Lua\n"
	  "kernel.new{grid = {gx [, gy, gz]}, block = {bx [, by, bz]}} -> k (both optional).\n"
	  "Buffers: k:input/k:output/k:shared/k:register(name, dtype, shape [, layout]);\n"
	  "stages: k:stage(name, function() for i in kernel.range(n) do B[{i}] = A[{i}] end end).\n"
	  "With grid/block every stage runs on that grid: k.bx, k.by, k.tx, k.ty are the indices." },
	{ "exp", l_exp, "kernel.exp(x): e^x (exp2(x * log2 e), as tensor programs write it)" },
	{ "exp2", l_exp2, "kernel.exp2(x): 2^x" },
	{ "log", l_log, "kernel.log(x): the natural logarithm (log2(x) * ln 2)" },
	{ "log2", l_log2, "kernel.log2(x)" },
	{ "sqrt", l_sqrt, "kernel.sqrt(x)" },
	{ "sin", l_sin, "kernel.sin(x)" },
	{ "recip", l_recip, "kernel.recip(x): 1/x" },
	{ "max", l_max, "kernel.max(a, b)" },
	{ "min", l_min, "kernel.min(a, b)" },
	{ "where", l_where, "kernel.where(cond, a, b): a where cond holds, else b" },
	{ "lt", l_lt, "kernel.lt(a, b): a < b (a bool value)" },
	{ "le", l_le, "kernel.le(a, b): a <= b" },
	{ "gt", l_gt, "kernel.gt(a, b): a > b" },
	{ "ge", l_ge, "kernel.ge(a, b): a >= b" },
	{ "eq", l_eq, "kernel.eq(a, b): a == b" },
	{ "ne", l_ne, "kernel.ne(a, b): a ~= b" },
	{ "cast", l_cast, "kernel.cast(x, dtype): x converted to dtype" },
	{ NULL, NULL, NULL }
};

static const HelpReg kmeths[] = {
	{ "input", k_input,
	  "k:input(name, dtype, shape [, layout]): an input buffer in global memory\n"
	  "Its layout may repeat offsets (a broadcast); k:run checks the binding agrees there." },
	{ "output", k_output,
	  "k:output(name, dtype, shape [, layout]): an output buffer in global memory\n"
	  "Its layout must be one-to-one, as every buffer's the kernel writes." },
	{ "shared", k_shared,
	  "k:shared(name, dtype, shape [, layout]): a shared-memory buffer, one per block\n"
	  "layout (here and in k:input, k:output, k:register; or {layout = ...}): a CuTe layout\n"
	  "or notation (\"(32,33):(33,1)\"), a swizzled one (\"Sw<3,4,3> o 0 o (8,64):(64,1)\"),\n"
	  "a lego.Layout or an axe.Layout on axis m; one-to-one (two elements that share an\n"
	  "offset are refused)." },
	{ "register", k_register, "k:register(name, dtype, shape [, layout]): a per-thread buffer (registers)" },
	{ "buffer", k_buffer,
	  "k:buffer(name, dtype, shape [, {scope=, role=, layout=}]): any buffer\n"
	  "scope: global (default), shared or local; role: temp (default), input or output." },
	{ "set_layout", k_set_layout,
	  "k:set_layout(name, layout): the buffer's elements placed by a CuTe, swizzled, LEGO or Axe layout" },
	{ "stage", k_stage,
	  "k:stage(name, function(k) ... end): record a stage (a loop nest)\n"
	  "The function runs once with symbolic indices; loops are `for i in kernel.range(n)`,\n"
	  "stores are B[{i, j}] = value, loads A[{i, j}] (or B:store/A:load with a gate)." },
	{ "check", k_check,
	  "k:check(): the verifier; true and its notes, or an error saying what is wrong and where" },
	{ "uops", k_uops, "k:uops(): every UOp of the kernel, one a line" },
	{ "tile_ir", k_tile_ir,
	  "k:tile_ir(): the kernel in Neptune's tile IR: nests that compute on tiles as tile stores" },
	{ "buffers", k_buffers, "k:buffers(): the buffers as printed text, a line each (name, role, scope, dtype, shape, layout)" },
	{ "stages", k_stages, "k:stages(): the stage names in order" },
	{ NULL, NULL, NULL }
};

static const HelpReg bmeths[] = {
	{ "load", b_load, "B:load(idx [, gate]): B[idx], or 0 where gate is false (memory untouched)" },
	{ "store", b_store, "B:store(idx, value [, gate]): B[idx] = value where gate holds" },
	{ NULL, NULL, NULL }
};

static const luaL_Reg vmeta[] = {
	{ "__add", v_add }, { "__sub", v_sub }, { "__mul", v_mul }, { "__div", v_div },
	{ "__idiv", v_idiv }, { "__mod", v_mod }, { "__unm", v_unm }, { "__tostring", v_tostring },
	{ "__index", v_index }, { NULL, NULL }
};

int
luaopen_tessel_kernel(lua_State *L)
{
	luaL_newmetatable(L, KVALUE);
	luaL_setfuncs(L, vmeta, 0);
	lua_pop(L, 1);

	luaL_newmetatable(L, KBUFFER);
	lua_pushcfunction(L, b_index);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, b_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_pushcfunction(L, b_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_newtable(L);
	help_setfuncs(L, bmeths, "kernel.Buffer:");
	lua_setfield(L, -2, "methods");
	lua_pop(L, 1);

	luaL_newmetatable(L, KERNEL);
	lua_pushcfunction(L, k_gc);
	lua_setfield(L, -2, "__gc");
	lua_pushcfunction(L, k_index);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, k_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pushcfunction(L, k_show);
	lua_setfield(L, -2, "__show");
	lua_pushcfunction(L, k_scene);
	lua_setfield(L, -2, "__scene");
	lua_newtable(L);
	help_setfuncs(L, kmeths, "kernel.Kernel:");
	lua_setfield(L, -2, "methods");
	lua_pop(L, 1);

	lua_newtable(L);
	help_setfuncs(L, kfuncs, "kernel.");
	luaL_getmetatable(L, KERNEL);
	lua_getfield(L, -1, "methods");
	lua_setfield(L, -3, "methods");
	lua_pop(L, 1);
	help_add(L, -1, "kernel",
	         "kernels: loop nests on the UOp IR, run on the CPU as a GPU runs them\n"
	         "  k = kernel.lower(x:softmax(1)); print(k); k:check(); k:run{x = t}; k:counts()\n"
	         "  k = kernel.new{grid = {4}, block = {32}}; A = k:input(\"A\", \"float32\", {128})\n"
	         "  B = k:output(\"B\", \"float32\", {128})\n"
	         "  k:stage(\"copy\", function() B[k.bx * 32 + k.tx] = A[k.bx * 32 + k.tx] end)\n"
	         "show(k) colours axis types; viz.render(k, \"k.svg\") draws the loop tree.\n"
	         "Methods: help(kernel.methods). Schedules: k:schedule(), help(kernel.schedule).");
	return 1;
}

/* lua_kernel.c - the `kernel` Lua table: lowered and hand-written kernels, their checks, runs, counts and pictures. */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../backends/backend.h"
#include "../interp/kernel/kernel.h"
#include "../interp/sched/tile_ir.h"
#include "../layout/layout.h"
#include "../viz/viz.h"
#include "help.h"
#include "tessel.h"

#define KERNEL  "kernel.Kernel"
#define KVALUE  "kernel.Value"
#define KBUFFER "kernel.Buffer"
#define KITER   "kernel.Range"
#define RUNBOX  "kernel.RunBuffers"
#define KREGION "kernel.Region"
#define STAGING "tessel.kernel.staging"   /* registry: the kernel a stage is being recorded into */
#define JITCACHE "tessel.jit.cache"         /* registry: this Lua state's compiled kernels (backend c) */
#define JITMETA  "kernel.JitCache"          /* its metatable */
#define CLSESSION "tessel.opencl.Session"   /* the session's metatable */
#define CLKEY "tessel.opencl.session"       /* registry: this Lua state's OpenCL session (backend opencl) */

/*
** Kernels written in Lua are staged, as Terra stages: the Lua code of a stage
** runs once, with symbolic loop indices, and what it does is recorded as
** UOps. A loop is a generic for over kernel.range: the iterator's first call
** opens the loop and returns its variable, its second call closes it with the
** statements recorded in between. Stores (B[{i, j}] = v) append to the
** innermost open block; loads and arithmetic build values.
*/
typedef struct Frame {
	int kind;           /* 0 the stage, 1 a loop, 2 an if */
	UOp *head;          /* the RANGE or the gate */
	UOp **s;
	int n, cap;
} Frame;

typedef struct LKernel {
	Kernel *k;
	Frame *f;
	int nf, capf;
	UOp *grid[3], *blk[3];   /* the bound ranges of kernel.new{grid=, block=} */
} LKernel;

typedef struct LValue {
	UOp *u;
} LValue;

typedef struct LBuf {
	int b;
} LBuf;

typedef struct LIter {
	UOp *range;
	int state;          /* 0 not started, 1 open, 2 closed */
	int depth;          /* the frame it opened */
} LIter;

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

static LKernel *
checkk(lua_State *L, int i)
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

static int
err(lua_State *L, const Err *e)
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
	return checkk(L, i)->k;
}

/* ---- values ---- */

static void
pushvalue(lua_State *L, UOp *u, int ki)
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
static LKernel *
owner(lua_State *L, int i)
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
static UOp *
operand(lua_State *L, int i, int ki, DType like, const char *what)
{
	LKernel *K = lua_touserdata(L, ki), *o;
	LValue *v = luaL_testudata(L, i, KVALUE);

	if (v) {
		o = owner(L, i);
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
static int
find_kernel(lua_State *L, int n, const char *what)
{
	int i;

	for (i = 1; i <= n; i++)
		if (owner(L, i))
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
	ki = find_kernel(L, 2, what);
	K = lua_touserdata(L, ki);
	if ((v = luaL_testudata(L, 1, KVALUE)))
		la = vtype(v->u);
	if ((v = luaL_testudata(L, 2, KVALUE)))
		lb = vtype(v->u);
	a = operand(L, 1, ki, lb != DT_VOID ? lb : DT_INDEX, what);
	b = operand(L, 2, ki, la != DT_VOID ? la : DT_INDEX, what);
	t = unify(K, &a, &b);
	if (op == OP_IDIV && dtype_is_float(t)) {
		/* a / b on floats is a * (1/b), as tensor programs write it */
		src[0] = b;
		b = kernel_alu(K->k, OP_RECIP, t, src, 1);
		op = OP_MUL;
	}
	src[0] = a;
	src[1] = b;
	pushvalue(L, t == DT_INDEX ? isimp(K, uop_alu(K->k->c, op, a, b)) : kernel_alu(K->k, op, t, src, 2), ki);
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
	ki = find_kernel(L, 2, what);
	K = lua_touserdata(L, ki);
	a = operand(L, 1, ki, DT_INDEX, what);
	b = operand(L, 2, ki, vtype(a), what);
	if (unify(K, &a, &b) == DT_INDEX) {
		pushvalue(L, isimp(K, uop_alu(K->k->c, OP_CMPLT, b, uop_add(K->k->c, a, uop_int(K->k->c, 1)))), ki);
		return 1;
	}
	c = kernel_alu(K->k, OP_CMPLT, vtype(a), (UOp *[]){ a, b }, 2);
	t = kernel_const(K->k, DT_BOOL, 1);
	pushvalue(L, kernel_alu(K->k, OP_CMPNE, DT_BOOL, (UOp *[]){ c, t }, 2), ki);
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
	ki = find_kernel(L, 2, "kernel.min");
	K = lua_touserdata(L, ki);
	a = operand(L, 1, ki, DT_INDEX, "kernel.min");
	b = operand(L, 2, ki, vtype(a), "kernel.min");
	t = unify(K, &a, &b);
	pushvalue(L, t == DT_INDEX ? uop_alu(K->k->c, OP_MIN, a, b)
	          : kernel_alu(K->k, OP_MIN, t, (UOp *[]){ a, b }, 2), ki);
	return 1;
}

static int
v_unm(lua_State *L)
{
	int ki = find_kernel(L, 1, "-");
	LKernel *K = lua_touserdata(L, ki);
	UOp *a = operand(L, 1, ki, DT_INDEX, "-");

	pushvalue(L, vtype(a) == DT_INDEX ? uop_neg(K->k->c, a) : kernel_alu(K->k, OP_NEG, vtype(a), &a, 1), ki);
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
	ki = find_kernel(L, 1, what);
	K = lua_touserdata(L, ki);
	a = operand(L, 1, ki, DT_FLOAT32, what);
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
	pushvalue(L, a, ki);
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
	ki = find_kernel(L, 3, "kernel.where");
	K = lua_touserdata(L, ki);
	c = operand(L, 1, ki, DT_BOOL, "kernel.where");
	if (c->dtype != DT_BOOL)
		return luaL_error(L, "kernel.where: the condition is a %s, not a bool (a comparison)",
		                  dtype_name(c->dtype));
	a = operand(L, 2, ki, DT_INDEX, "kernel.where");
	b = operand(L, 3, ki, vtype(a), "kernel.where");
	t = unify(K, &a, &b);
	pushvalue(L, t == DT_INDEX ? uop_where(K->k->c, c, a, b)
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
	ki = find_kernel(L, 1, "kernel.cast");
	K = lua_touserdata(L, ki);
	a = operand(L, 1, ki, t, "kernel.cast");
	pushvalue(L, kernel_cast(K->k, t, a), ki);
	return 1;
}

static int
v_tostring(lua_State *L)
{
	LValue *v = luaL_checkudata(L, 1, KVALUE);
	LKernel *K = owner(L, 1);
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

static LKernel *
staging(lua_State *L, const char *what)
{
	LKernel *x;

	if (lua_getfield(L, LUA_REGISTRYINDEX, STAGING) != LUA_TUSERDATA)
		luaL_error(L, "%s: statements are recorded inside k:stage(name, function() ... end)", what);
	x = lua_touserdata(L, -1);
	lua_pop(L, 1);
	return x;
}

static void
append(lua_State *L, LKernel *x, UOp *s)
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

static void
push_frame(lua_State *L, LKernel *x, int kind, UOp *head)
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
static void
pop_frame(lua_State *L, LKernel *x)
{
	Frame f = x->f[--x->nf];
	UOp *s = f.kind == 1 ? kernel_loop(x->k, f.head, f.s, f.n) : kernel_if(x->k, f.head, f.s, f.n);

	free(f.s);
	append(L, x, s);
}

/* Index operands: a table {i, j} or one operand. */
static int
indices(lua_State *L, int i, int ki, UOp **idx, const char *what)
{
	int n, j;

	if (lua_type(L, i) != LUA_TTABLE) {
		idx[0] = operand(L, i, ki, DT_INDEX, what);
		return 1;
	}
	tessel_checkseq(L, i, what);
	n = (int)luaL_len(L, i);
	if (n > T_MAXDIM)
		luaL_error(L, "%s: %d indices (at most %d)", what, n, T_MAXDIM);
	for (j = 0; j < n; j++) {
		lua_geti(L, i, j + 1);
		idx[j] = operand(L, lua_gettop(L), ki, DT_INDEX, what);
		lua_pop(L, 1);
	}
	return n;
}

static UOp *
access(lua_State *L, int bi, int keyi, int ki, const char *what)
{
	LKernel *K = lua_touserdata(L, ki);
	LBuf *b = luaL_checkudata(L, bi, KBUFFER);
	const KBuf *kb = &K->k->buf[b->b];
	UOp *idx[T_MAXDIM], *u;
	int n = indices(L, keyi, ki, idx, what), j;

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
	LKernel *K = owner(L, 1);
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
	pushvalue(L, kernel_load(K->k, access(L, 1, 2, ki, "load"), NULL), ki);
	return 1;
}

static void
store(lua_State *L, int bi, int keyi, int vi, int gi)
{
	LBuf *b = luaL_checkudata(L, bi, KBUFFER);
	LKernel *K = owner(L, bi), *S;
	int ki = lua_gettop(L);
	DType t = K->k->buf[b->b].dtype;
	UOp *ix, *v, *g = NULL;

	S = staging(L, "store");
	if (S != K)
		luaL_error(L, "store: %s belongs to another kernel than the stage being recorded",
		           K->k->buf[b->b].name);
	ix = access(L, bi, keyi, ki, "store");
	v = operand(L, vi, ki, t, "store");
	if (vtype(v) != t)
		v = kernel_cast(K->k, t, v);
	if (gi) {
		g = operand(L, gi, ki, DT_BOOL, "store");
		if (g->dtype != DT_BOOL)
			luaL_error(L, "store: the gate is a %s, not a bool", dtype_name(g->dtype));
	}
	append(L, K, kernel_store(K->k, ix, v, g));
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
	K = owner(L, 1);
	ki = lua_gettop(L);
	if (!K)
		return luaL_typeerror(L, 1, KBUFFER);
	ix = access(L, 1, 2, ki, "load");
	if (!lua_isnil(L, 3)) {
		g = operand(L, 3, ki, DT_BOOL, "load");
		if (g->dtype != DT_BOOL)
			return luaL_error(L, "load: the gate is a %s, not a bool", dtype_name(g->dtype));
	}
	pushvalue(L, kernel_load(K->k, ix, g), ki);
	return 1;
}

static int
b_tostring(lua_State *L)
{
	LBuf *b = luaL_checkudata(L, 1, KBUFFER);
	LKernel *K = owner(L, 1);
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

/* ---- loops, conditionals, barriers ---- */

static const char *const letters[] = { "i", "j", "k", "l", "m", "n", "p", "q", "r", "s", "t", "u" };

static int
iter_step(lua_State *L)
{
	LIter *it = luaL_checkudata(L, lua_upvalueindex(1), KITER);
	LKernel *x = luaL_checkudata(L, lua_upvalueindex(2), KERNEL);

	if (it->state == 0) {
		if (staging(L, "kernel.range") != x)
			return luaL_error(L, "kernel.range: the loop belongs to another kernel than the stage being recorded");
		push_frame(L, x, 1, it->range);
		it->depth = x->nf;
		it->state = 1;
		pushvalue(L, krange_var(it->range), lua_upvalueindex(2));
		return 1;
	}
	if (it->state == 1) {
		if (x->nf != it->depth)
			return luaL_error(L, "kernel.range: the loop over %s closes while an inner block is open "
			                  "(a break or an error inside it?)", krange_var(it->range)->name);
		pop_frame(L, x);
		it->state = 2;
	}
	lua_pushnil(L);
	return 1;
}

/* kernel.range(n [, name | {name=, type=, bind=}]): for i in kernel.range(4) do ... end */
static int
l_range(lua_State *L)
{
	LKernel *x = staging(L, "kernel.range");
	lua_Integer n = luaL_checkinteger(L, 1);
	const char *name = NULL, *ts = NULL, *hs = NULL;
	AxisType t = AX_LOOP;
	HwAxis hw = HW_NONE;
	LIter *it;
	UOp *v;
	int depth = 0, i;

	if (n < 1 || n > ((lua_Integer)1 << 40))
		return luaL_error(L, "kernel.range: extent %d is not in [1, 2^40]", (int)n);
	if (lua_type(L, 2) == LUA_TSTRING)
		name = lua_tostring(L, 2);
	else if (lua_type(L, 2) == LUA_TTABLE) {
		lua_getfield(L, 2, "name");
		name = lua_tostring(L, -1);
		lua_getfield(L, 2, "type");
		ts = lua_tostring(L, -1);
		lua_getfield(L, 2, "bind");
		hs = lua_tostring(L, -1);
	} else if (!lua_isnoneornil(L, 2))
		return luaL_typeerror(L, 2, "name or options table");
	if (hs && hwaxis_parse(hs, &hw) < 0)
		return luaL_error(L, "kernel.range: unknown hardware axis %s (block.x/y/z, thread.x/y/z, warp, lane)", hs);
	if (hw != HW_NONE)
		t = hwaxis_is_block(hw) ? AX_GLOBAL : hw == HW_WARP ? AX_WARP : AX_LOCAL;
	if (ts && axistype_parse(ts, &t) < 0)
		return luaL_error(L, "kernel.range: unknown axis type %s (GLOBAL LOCAL WARP THREAD LOOP REDUCE "
		                  "GROUP_REDUCE UPCAST UNROLL)", ts);
	for (i = 0; i < x->nf; i++)
		depth += x->f[i].kind == 1;
	if (!name)
		name = letters[depth % (int)(sizeof letters / sizeof *letters)];
	if (!uop_valid_name(name))
		return luaL_error(L, "kernel.range: \"%s\" is not a name", name);
	v = kernel_var(x->k, name, n);
	it = lua_newuserdatauv(L, sizeof *it, 0);
	memset(it, 0, sizeof *it);
	luaL_setmetatable(L, KITER);
	if (!v || !(it->range = kernel_range(x->k, v, t, hw)))
		return luaL_error(L, "kernel: out of memory");
	lua_getfield(L, LUA_REGISTRYINDEX, STAGING);
	lua_pushcclosure(L, iter_step, 2);
	return 1;
}

/* kernel.when(cond, function() ... end) */
static int
l_when(lua_State *L)
{
	LKernel *x = staging(L, "kernel.when");
	int ki;
	UOp *g;

	luaL_checktype(L, 2, LUA_TFUNCTION);
	lua_getfield(L, LUA_REGISTRYINDEX, STAGING);
	ki = lua_gettop(L);
	g = operand(L, 1, ki, DT_BOOL, "kernel.when");
	if (g->dtype != DT_BOOL)
		return luaL_error(L, "kernel.when: the condition is a %s, not a bool (a comparison)", dtype_name(g->dtype));
	push_frame(L, x, 2, g);
	lua_pushvalue(L, 2);
	lua_call(L, 0, 0);
	if (x->nf < 1 || x->f[x->nf - 1].kind != 2 || x->f[x->nf - 1].head != g)
		return luaL_error(L, "kernel.when: a loop inside the conditional was left open");
	pop_frame(L, x);
	return 0;
}

static int
l_barrier(lua_State *L)
{
	LKernel *x = staging(L, "kernel.barrier");

	append(L, x, kernel_barrier(x->k));
	return 0;
}

/* kernel.cp_async_commit(): this thread's cp.async since the last commit become a group */
static int
l_cp_async_commit(lua_State *L)
{
	LKernel *x = staging(L, "kernel.cp_async_commit");

	append(L, x, kernel_cp_commit(x->k));
	return 0;
}

/* kernel.cp_async_wait(n): wait until at most the n most recent groups are in flight */
static int
l_cp_async_wait(lua_State *L)
{
	LKernel *x = staging(L, "kernel.cp_async_wait");
	lua_Integer n = luaL_checkinteger(L, 1);
	Err e = { "" };
	UOp *u;

	if (n < 0 || n > 63)
		return luaL_error(L, "kernel.cp_async_wait: %I groups; wait_group takes 0 to 63", n);
	if (!(u = kernel_cp_wait(x->k, (int)n, &e)))
		return err(L, &e);
	append(L, x, u);
	return 0;
}

/* ---- atomics and fences ---- */

/* kernel.atomic(op, buf, key, value [, old, okey]) */
static int
l_atomic(lua_State *L)
{
	LKernel *x = staging(L, "kernel.atomic");
	const char *ops = luaL_checkstring(L, 1);
	KAtomicOp op;
	LBuf *b;
	UOp *ix, *v, *ox = NULL, *u;
	Err e = { "" };
	int ki, hasold = !lua_isnoneornil(L, 5);

	if (katomic_parse(ops, &op) < 0)
		return luaL_error(L, "kernel.atomic: unknown op %s (add, max, min, exch)", ops);
	b = luaL_checkudata(L, 2, KBUFFER);
	luaL_checkany(L, 3);
	luaL_checkany(L, 4);
	if (hasold) {
		luaL_checkudata(L, 5, KBUFFER);
		luaL_checkany(L, 6);
	}
	if (owner(L, 2) != x)
		return luaL_error(L, "kernel.atomic: the buffer belongs to another kernel than the stage being recorded");
	lua_pop(L, 1);
	if (hasold) {
		if (owner(L, 5) != x)
			return luaL_error(L, "kernel.atomic: the old value's buffer belongs to another kernel than the stage "
			                  "being recorded");
		lua_pop(L, 1);
	}
	lua_getfield(L, LUA_REGISTRYINDEX, STAGING);
	ki = lua_gettop(L);
	ix = access(L, 2, 3, ki, "kernel.atomic");
	v = operand(L, 4, ki, x->k->buf[b->b].dtype, "kernel.atomic");
	if (hasold)
		ox = access(L, 5, 6, ki, "kernel.atomic");
	if (!(u = kernel_atomic(x->k, op, ix, v, ox, &e)))
		return err(L, &e);
	append(L, x, u);
	return 0;
}

/* kernel.fence([scope]): "gpu" (default) or "block" */
static int
l_fence(lua_State *L)
{
	LKernel *x = staging(L, "kernel.fence");
	const char *sc = luaL_optstring(L, 1, "gpu");

	if (strcmp(sc, "gpu") != 0 && strcmp(sc, "block") != 0)
		return luaL_error(L, "kernel.fence: scope %s (gpu or block)", sc);
	append(L, x, kernel_fence(x->k, strcmp(sc, "block") == 0 ? KF_BLOCK : KF_GPU));
	return 0;
}

/* ---- warp-synchronous operations ---- */

/* kernel.shuffle(value, lane): value as lane `lane` of the warp holds it */
static int
l_shuffle(lua_State *L)
{
	int ki;
	LKernel *K;
	UOp *v, *lane;

	lua_settop(L, 2);
	ki = find_kernel(L, 2, "kernel.shuffle");
	K = lua_touserdata(L, ki);
	v = operand(L, 1, ki, DT_FLOAT32, "kernel.shuffle");
	lane = operand(L, 2, ki, DT_INDEX, "kernel.shuffle");
	if (dtype_is_float(lane->dtype) || lane->dtype == DT_BOOL)
		return luaL_error(L, "kernel.shuffle: the lane is a %s, not an integer", dtype_name(lane->dtype));
	pushvalue(L, kernel_shuffle(K->k, v, lane), ki);
	return 1;
}

/* kernel.mma(atom, D, A, B, C): D = A B + C over the warp, by a CuTe MMA atom */
static int
l_mma(lua_State *L)
{
	LKernel *x = staging(L, "kernel.mma");
	const char *atom = luaL_checkstring(L, 1);
	int b[4], i;
	Err e = { "" };
	UOp *u;

	for (i = 0; i < 4; i++) {
		LBuf *lb = luaL_checkudata(L, i + 2, KBUFFER);

		if (owner(L, i + 2) != x)
			return luaL_error(L, "kernel.mma: operand %d belongs to another kernel than the stage "
			                  "being recorded", i + 1);
		lua_pop(L, 1);
		b[i] = lb->b;
	}
	if (!(u = kernel_mma(x->k, atom, b[0], b[1], b[2], b[3], &e)))
		return err(L, &e);
	append(L, x, u);
	return 0;
}

/* kernel.ldmatrix(D, S, {i, j} [, {x = 4, trans = false}]): the warp's ldmatrix, this lane's row at S[i, j] */
static int
l_ldmatrix(lua_State *L)
{
	LKernel *x = staging(L, "kernel.ldmatrix");
	LBuf *d = luaL_checkudata(L, 1, KBUFFER);
	lua_Integer n = 4;
	int trans = 0, ki;
	Err e = { "" };
	UOp *ix, *u;

	luaL_checkudata(L, 2, KBUFFER);
	luaL_checkany(L, 3);
	if (lua_type(L, 4) == LUA_TTABLE) {
		if (lua_getfield(L, 4, "x") != LUA_TNIL) {
			int isnum;

			n = lua_tointegerx(L, -1, &isnum);
			if (!isnum)
				return luaL_error(L, "kernel.ldmatrix: x is %s, not 1, 2 or 4", luaL_typename(L, -1));
		}
		lua_getfield(L, 4, "trans");
		trans = lua_toboolean(L, -1);
		lua_pop(L, 2);
	} else if (!lua_isnoneornil(L, 4))
		return luaL_argerror(L, 4, "a table {x = 1 | 2 | 4, trans = boolean} expected");
	if (n != 1 && n != 2 && n != 4)
		return luaL_error(L, "kernel.ldmatrix: x%I; ldmatrix loads 1, 2 or 4 matrices", n);
	if (owner(L, 1) != x)
		return luaL_error(L, "kernel.ldmatrix: the destination belongs to another kernel than the stage "
		                  "being recorded");
	lua_pop(L, 1);
	if (owner(L, 2) != x)
		return luaL_error(L, "kernel.ldmatrix: the source belongs to another kernel than the stage "
		                  "being recorded");
	ki = lua_gettop(L);
	ix = access(L, 2, 3, ki, "kernel.ldmatrix");
	if (!(u = kernel_ldmatrix(x->k, d->b, ix, (int)n, trans, &e)))
		return err(L, &e);
	append(L, x, u);
	return 0;
}

/* ---- mbarriers and TMA ---- */

/* The barrier element bar[key] (bar at bi, key at keyi) of the kernel being recorded. */
static UOp *
bar_element(lua_State *L, LKernel *x, int bi, int keyi, const char *what)
{
	UOp *ix;

	luaL_checkudata(L, bi, KBUFFER);
	luaL_checkany(L, keyi);
	if (owner(L, bi) != x)
		luaL_error(L, "%s: the barrier belongs to another kernel than the stage being recorded", what);
	ix = access(L, bi, keyi, lua_gettop(L), what);
	lua_pop(L, 1);
	return ix;
}

/* kernel.mbarrier_init(bar, {s}, count) */
static int
l_mbarrier_init(lua_State *L)
{
	LKernel *x = staging(L, "kernel.mbarrier_init");
	lua_Integer n = luaL_checkinteger(L, 3);
	Err e = { "" };
	UOp *u = kernel_mbar_init(x->k, bar_element(L, x, 1, 2, "kernel.mbarrier_init"), n, &e);

	if (!u)
		return err(L, &e);
	append(L, x, u);
	return 0;
}

/* kernel.mbarrier_arrive(bar, {s} [, {tx = bytes}]) */
static int
l_mbarrier_arrive(lua_State *L)
{
	LKernel *x = staging(L, "kernel.mbarrier_arrive");
	lua_Integer tx = 0;
	Err e = { "" };
	UOp *u;

	if (lua_type(L, 3) == LUA_TTABLE) {
		int isnum = 1;

		if (lua_getfield(L, 3, "tx") != LUA_TNIL)
			tx = lua_tointegerx(L, -1, &isnum);
		if (!isnum)
			return luaL_error(L, "kernel.mbarrier_arrive: tx is %s, not a number of bytes", luaL_typename(L, -1));
		lua_pop(L, 1);
	} else if (!lua_isnoneornil(L, 3))
		return luaL_argerror(L, 3, "a table {tx = bytes} expected");
	if (!(u = kernel_mbar_arrive(x->k, bar_element(L, x, 1, 2, "kernel.mbarrier_arrive"), tx, &e)))
		return err(L, &e);
	append(L, x, u);
	return 0;
}

/* kernel.mbarrier_wait(bar, {s}, parity) */
static int
l_mbarrier_wait(lua_State *L)
{
	LKernel *x = staging(L, "kernel.mbarrier_wait");
	Err e = { "" };
	UOp *bar, *par, *u;
	int ki;

	luaL_checkany(L, 3);
	bar = bar_element(L, x, 1, 2, "kernel.mbarrier_wait");
	lua_getfield(L, LUA_REGISTRYINDEX, STAGING);
	ki = lua_gettop(L);
	par = operand(L, 3, ki, DT_INDEX, "kernel.mbarrier_wait");
	if (!(u = kernel_mbar_wait(x->k, bar, par, &e)))
		return err(L, &e);
	append(L, x, u);
	return 0;
}

static KRegion region_arg(lua_State *L, int i, LKernel *K, const char *what);

/* kernel.tma(dst, src, bar, {s}): the plan as a table */
static int
l_tma(lua_State *L)
{
	LKernel *K = staging(L, "kernel.tma");
	KRegion dst, src;
	KTma t;
	Err e = { "" };
	UOp *bar, *u;
	int d;

	lua_settop(L, 4);
	dst = region_arg(L, 1, K, "kernel.tma");
	src = region_arg(L, 2, K, "kernel.tma");
	bar = bar_element(L, K, 3, 4, "kernel.tma");
	if (!(u = kernel_tma(K->k, &dst, &src, bar, &t, &e)))
		return err(L, &e);
	append(L, K, u);
	lua_createtable(L, 0, 6);
	lua_pushinteger(L, t.swizzle);
	lua_setfield(L, -2, "swizzle");
	lua_pushinteger(L, t.nbox);
	lua_setfield(L, -2, "boxes");
	lua_pushinteger(L, t.bytes);
	lua_setfield(L, -2, "bytes");
	lua_createtable(L, t.rank, 0);
	for (d = 0; d < t.rank; d++) {
		lua_pushinteger(L, t.box[t.rank - 1 - d]);
		lua_rawseti(L, -2, d + 1);
	}
	lua_setfield(L, -2, "box");
	lua_pushstring(L, t.reason);
	lua_setfield(L, -2, "reason");
	return 1;
}

/* ---- collective operators ---- */

typedef struct LRegion {
	KRegion r;
} LRegion;

static KRegion region_arg(lua_State *L, int i, LKernel *K, const char *what);

/* ---- warpgroup MMA (sm_90a) ---- */

/* b_nk and zero from an options table at index i (absent or nil: 0); unknown keys refused
** (zero only where allow_zero) */
static int
wgmma_flags(lua_State *L, int i, const char *fn, int allow_zero)
{
	int flags = 0, f;
	const char *key;

	if (lua_isnoneornil(L, i))
		return 0;
	luaL_checktype(L, i, LUA_TTABLE);
	lua_pushnil(L);
	while (lua_next(L, i)) {
		key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
		f = !key ? 0 : !strcmp(key, "b_nk") ? KWG_B_NK : allow_zero && !strcmp(key, "zero") ? KWG_ZERO : 0;
		if (!f)
			return luaL_error(L, "%s: option '%s'; the options are {b_nk = true%s}", fn,
			                  key ? key : luaL_typename(L, -2), allow_zero ? ", zero = true" : "");
		if (!lua_isboolean(L, -1))
			return luaL_error(L, "%s: %s is %s; true or false", fn, key, luaL_typename(L, -1));
		flags |= lua_toboolean(L, -1) ? f : 0;
		lua_pop(L, 1);
	}
	return flags;
}

/* kernel.wgmma(D, A, B [, {b_nk = true}]): D += A B over the warpgroup, B a shared region, A a
** shared region or a register fragment (b_nk: B's region is N x 16, (n, k), and B[k][n] its
** element [.., n, k]) */
static int
l_wgmma(lua_State *L)
{
	LKernel *x = staging(L, "kernel.wgmma");
	LBuf *d = luaL_checkudata(L, 1, KBUFFER);
	KRegion a, b;
	Err e = { "" };
	UOp *u;
	int flags;

	if (owner(L, 1) != x)
		return luaL_error(L, "kernel.wgmma: the accumulator belongs to another kernel than the stage being "
		                  "recorded");
	lua_pop(L, 1);
	a = region_arg(L, 2, x, "kernel.wgmma");
	b = region_arg(L, 3, x, "kernel.wgmma");
	flags = wgmma_flags(L, 4, "kernel.wgmma", 1);
	if (!(u = kernel_wgmma_flags(x->k, d->b, &a, &b, flags, &e)))
		return err(L, &e);
	append(L, x, u);
	return 0;
}

static int
l_wgmma_fence(lua_State *L)
{
	LKernel *x = staging(L, "kernel.wgmma_fence");

	append(L, x, kernel_wg_fence(x->k));
	return 0;
}

static int
l_wgmma_commit(lua_State *L)
{
	LKernel *x = staging(L, "kernel.wgmma_commit");

	append(L, x, kernel_wg_commit(x->k));
	return 0;
}

static int
l_wgmma_wait(lua_State *L)
{
	LKernel *x = staging(L, "kernel.wgmma_wait");
	lua_Integer n = luaL_checkinteger(L, 1);
	Err e = { "" };
	UOp *u;

	if (n < 0 || n > 7)
		return luaL_error(L, "kernel.wgmma_wait: %I groups; wgmma.wait_group takes 0 to 7", n);
	if (!(u = kernel_wg_wait(x->k, (int)n, &e)))
		return err(L, &e);
	append(L, x, u);
	return 0;
}

/* kernel.setmaxnreg(n, "inc" | "dec"): the warpgroup's register budget */
static int
l_setmaxnreg(lua_State *L)
{
	LKernel *x = staging(L, "kernel.setmaxnreg");
	lua_Integer n = luaL_checkinteger(L, 1);
	const char *how = luaL_checkstring(L, 2);
	Err e = { "" };
	UOp *u;

	if (strcmp(how, "inc") != 0 && strcmp(how, "dec") != 0)
		return luaL_error(L, "kernel.setmaxnreg: '%s' is not \"inc\" or \"dec\"", how);
	if (n < 0 || n > 1024)
		return luaL_error(L, "kernel.setmaxnreg: %I registers; setmaxnreg takes a multiple of 8 from 24 to 256", n);
	if (!(u = kernel_setmaxnreg(x->k, (int)n, how[0] == 'i', &e)))
		return err(L, &e);
	append(L, x, u);
	return 0;
}

/* kernel.wgmma_desc(region, "A" | "B" [, {var = value, ...} [, {b_nk = true}]]): the GMMA descriptor of an operand */
static int
l_wgmma_desc(lua_State *L)
{
	LRegion *r = luaL_checkudata(L, 1, KREGION);
	const char *op = luaL_checkstring(L, 2);
	UBind bind[16];
	int nb = 0, flags;
	LKernel *K;
	KGmmaDesc dsc;
	Err e = { "" };
	char hex[24];

	if ((op[0] != 'A' && op[0] != 'B') || op[1])
		return luaL_argerror(L, 2, "\"A\" or \"B\" expected");
	if (!lua_isnoneornil(L, 3)) {
		luaL_checktype(L, 3, LUA_TTABLE);
		lua_pushnil(L);
		while (lua_next(L, 3)) {
			if (lua_type(L, -2) != LUA_TSTRING || !lua_isinteger(L, -1))
				return luaL_error(L, "kernel.wgmma_desc: the binding maps variable names to integers");
			if (nb == 16)
				return luaL_error(L, "kernel.wgmma_desc: more than 16 variables bound");
			bind[nb].name = lua_tostring(L, -2);   /* anchored by the table */
			bind[nb++].value = lua_tointeger(L, -1);
			lua_pop(L, 1);
		}
	}
	lua_getiuservalue(L, 1, 1);
	K = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (!K || !K->k)
		return luaL_error(L, "kernel.wgmma_desc: the region's kernel was freed");
	flags = wgmma_flags(L, 4, "kernel.wgmma_desc", 0);
	if (flags && op[0] != 'B')
		return luaL_error(L, "kernel.wgmma_desc: b_nk is an option of operand B, not A");
	if (kernel_wgmma_desc_flags(K->k, &r->r, op[0], flags, bind, nb, &dsc, &e) < 0)
		return err(L, &e);
	lua_createtable(L, 0, 8);
	lua_pushstring(L, dsc.mn_major ? "MN" : "K");
	lua_setfield(L, -2, "major");
	lua_pushstring(L, kgmma_layout_name(dsc.layout_type));
	lua_setfield(L, -2, "swizzle");
	lua_pushinteger(L, dsc.layout_type);
	lua_setfield(L, -2, "layout_type");
	lua_pushinteger(L, dsc.lbo);
	lua_setfield(L, -2, "lbo");
	lua_pushinteger(L, dsc.sbo);
	lua_setfield(L, -2, "sbo");
	lua_pushinteger(L, dsc.start);
	lua_setfield(L, -2, "start");
	lua_pushinteger(L, dsc.nstarts);
	lua_setfield(L, -2, "starts");
	snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)dsc.desc);
	lua_pushstring(L, hex);
	lua_setfield(L, -2, "desc");
	return 1;
}

/* B:tile(begin, extent): the region of B from begin (indices) spanning extent */
static int
b_tile(lua_State *L)
{
	LBuf *b = luaL_checkudata(L, 1, KBUFFER);
	LKernel *K = owner(L, 1);
	int ki = lua_gettop(L), n, m, i;
	const KBuf *kb;
	UOp *idx[T_MAXDIM];
	LRegion *r;

	if (!K || !K->k)
		return luaL_error(L, "kernel: the buffer's kernel was freed");
	kb = &K->k->buf[b->b];
	n = indices(L, 2, ki, idx, "tile");
	luaL_checktype(L, 3, LUA_TTABLE);
	tessel_checkseq(L, 3, "tile: the extents");
	m = (int)luaL_len(L, 3);
	if (n != kb->ndim || m != kb->ndim)
		return luaL_error(L, "tile: %s has %d dimensions; %d starts and %d extents given", kb->name,
		                  kb->ndim, n, m);
	r = lua_newuserdatauv(L, sizeof *r, 1);
	memset(r, 0, sizeof *r);
	r->r.buf = b->b;
	for (i = 0; i < n; i++) {
		lua_geti(L, 3, i + 1);
		if (!lua_isinteger(L, -1))
			return luaL_error(L, "tile: extent %d of %s is not an integer", i + 1, kb->name);
		r->r.extent[i] = lua_tointeger(L, -1);
		r->r.begin[i] = idx[i];
		lua_pop(L, 1);
	}
	luaL_setmetatable(L, KREGION);
	lua_pushvalue(L, ki);
	lua_setiuservalue(L, -2, 1);
	return 1;
}

/* A region argument: a kernel.Region or a whole buffer. */
static KRegion
region_arg(lua_State *L, int i, LKernel *K, const char *what)
{
	LRegion *r = luaL_testudata(L, i, KREGION);
	LBuf *b = luaL_testudata(L, i, KBUFFER);
	KRegion out;
	LKernel *o;
	int j;

	if (!r && !b)
		luaL_error(L, "%s: argument %d is a %s, not a buffer or a region (B:tile(start, extent))", what,
		           i, luaL_typename(L, i));
	lua_getiuservalue(L, i, 1);
	o = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (o != K)
		luaL_error(L, "%s: argument %d belongs to another kernel than the stage being recorded", what, i);
	if (r)
		return r->r;
	memset(&out, 0, sizeof out);
	out.buf = b->b;
	for (j = 0; j < K->k->buf[b->b].ndim; j++) {
		out.begin[j] = uop_int(K->k->c, 0);
		out.extent[j] = K->k->buf[b->b].shape[j];
	}
	return out;
}

/* The scope from opts.scope (default: cta with kernel.new's block, else
** thread) and opts.warps = {w0, w1}; thread and block indices from
** kernel.new and from the bound loops open around the call. */
static const char *
scope_arg(lua_State *L, int opts, LKernel *K, KScope *s)
{
	UOp *thr[3], *blk[3];
	KScopeKind kind = KS_THREAD;
	int64_t w0 = 0, w1 = 0;
	const char *force = NULL;
	int i;
	Err e = { "" };

	for (i = 0; i < 3; i++) {
		thr[i] = K->blk[i] ? krange_var(K->blk[i]) : NULL;
		blk[i] = K->grid[i] ? krange_var(K->grid[i]) : NULL;
	}
	for (i = 0; i < K->nf; i++)
		if (K->f[i].kind == 1) {
			HwAxis h = krange_hw(K->f[i].head);

			if (h >= HW_THREAD_X && h <= HW_THREAD_Z)
				thr[h - HW_THREAD_X] = krange_var(K->f[i].head);
			else if (hwaxis_is_block(h))
				blk[h - HW_BLOCK_X] = krange_var(K->f[i].head);
		}
	if (thr[0] || thr[1] || thr[2])
		kind = KS_CTA;
	if (lua_type(L, opts) == LUA_TTABLE) {
		if (lua_getfield(L, opts, "scope") == LUA_TSTRING && kscope_kind_parse(lua_tostring(L, -1), &kind) < 0)
			luaL_error(L, "unknown scope %s (thread, warp, warpgroup, cta, kernel)", lua_tostring(L, -1));
		if (lua_getfield(L, opts, "warps") == LUA_TTABLE) {
			lua_geti(L, -1, 1);
			lua_geti(L, -2, 2);
			w0 = lua_tointeger(L, -2);
			w1 = lua_tointeger(L, -1);
			lua_pop(L, 2);
			kind = KS_CTA;
		}
		/* the string lives in the options table, which stays on the stack */
		if (lua_getfield(L, opts, "impl") == LUA_TSTRING)
			force = lua_tostring(L, -1);
		lua_pop(L, 3);
	}
	if (kernel_scope(K->k, kind, thr, blk, w0, w1, s, &e) < 0)
		err(L, &e);
	return force;
}

static int
record_op(lua_State *L, LKernel *K, UOp *st, const KDispatch *d, const Err *e)
{
	if (!st)
		return err(L, e);
	append(L, K, st);
	lua_pushstring(L, d->impl);
	lua_pushstring(L, d->reason);
	return 2;
}

/* kernel.copy(dst, src [, {scope=, warps=, impl=}]) */
static int
l_copy(lua_State *L)
{
	LKernel *K = staging(L, "kernel.copy");
	KRegion dst, src;
	KScope s;
	KDispatch d;
	Err e = { "" };
	const char *force;

	lua_settop(L, 3);
	dst = region_arg(L, 1, K, "kernel.copy");
	src = region_arg(L, 2, K, "kernel.copy");
	force = scope_arg(L, 3, K, &s);
	return record_op(L, K, kernel_op_copy(K->k, &s, &dst, &src, force, &d, &e), &d, &e);
}

/* kernel.fill(dst, value [, opts]) */
static int
l_fill(lua_State *L)
{
	LKernel *K = staging(L, "kernel.fill");
	KRegion dst;
	KScope s;
	KDispatch d;
	Err e = { "" };
	const char *force;
	UOp *v;
	int ki;

	lua_settop(L, 3);
	dst = region_arg(L, 1, K, "kernel.fill");
	force = scope_arg(L, 3, K, &s);
	lua_getfield(L, LUA_REGISTRYINDEX, STAGING);
	ki = lua_gettop(L);
	v = operand(L, 2, ki, K->k->buf[dst.buf].dtype, "kernel.fill");
	return record_op(L, K, kernel_op_fill(K->k, &s, &dst, v, force, &d, &e), &d, &e);
}

/* kernel.reduce(dst, src [, {op = "add" | "max" | "mul", scope=, impl=}]) */
static int
l_reduce(lua_State *L)
{
	LKernel *K = staging(L, "kernel.reduce");
	KRegion dst, src;
	KScope s;
	KDispatch d;
	Err e = { "" };
	const char *force;
	Op op = OP_ADD;

	lua_settop(L, 3);
	dst = region_arg(L, 1, K, "kernel.reduce");
	src = region_arg(L, 2, K, "kernel.reduce");
	if (lua_type(L, 3) == LUA_TTABLE && lua_getfield(L, 3, "op") != LUA_TNIL) {
		const char *o = luaL_checkstring(L, -1);

		op = strcmp(o, "add") == 0 || strcmp(o, "sum") == 0 ? OP_ADD : strcmp(o, "max") == 0 ? OP_MAX
		   : strcmp(o, "mul") == 0 || strcmp(o, "prod") == 0 ? OP_MUL : OP_COUNT;
		if (op == OP_COUNT)
			return luaL_error(L, "kernel.reduce: unknown op %s (add, max, mul)", o);
		lua_pop(L, 1);
	}
	force = scope_arg(L, 3, K, &s);
	return record_op(L, K, kernel_op_reduce(K->k, &s, op, &dst, &src, force, &d, &e), &d, &e);
}

/* kernel.gemm(C, A, B [, opts]): C += A @ B */
static int
l_gemm(lua_State *L)
{
	LKernel *K = staging(L, "kernel.gemm");
	KRegion c, a, b;
	KScope s;
	KDispatch d;
	Err e = { "" };
	const char *force;

	lua_settop(L, 4);
	c = region_arg(L, 1, K, "kernel.gemm");
	a = region_arg(L, 2, K, "kernel.gemm");
	b = region_arg(L, 3, K, "kernel.gemm");
	force = scope_arg(L, 4, K, &s);
	return record_op(L, K, kernel_op_gemm(K->k, &s, &c, &a, &b, force, &d, &e), &d, &e);
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
		lua_getfield(L, 2, "name");
		o.out_name = lua_tostring(L, -1);
		lua_pop(L, 1);
	} else if (lua_type(L, 2) == LUA_TSTRING)
		o.out_name = lua_tostring(L, 2);
	x = newk(L);
	lua_pushvalue(L, 1);
	lua_setiuservalue(L, -2, 1);
	if (!(x->k = kernel_lower(t, &o, &e)))
		return err(L, &e);
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
		for (i = 0; i < 3; i++) {
			lua_geti(L, -1, i + 1);
			v[i] = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
			lua_pop(L, 1);
		}
	} else if (!lua_isnil(L, -1))
		luaL_error(L, "kernel.new: %s must be an integer or a table of up to 3 integers", f);
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
	int64_t g[3] = { 0 }, b[3] = { 0 };
	LKernel *x;
	int i;

	if (lua_type(L, 1) == LUA_TTABLE) {
		int3(L, 1, "grid", g);
		int3(L, 1, "block", b);
	} else if (!lua_isnoneornil(L, 1))
		return luaL_typeerror(L, 1, "options table");
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
	return rc < 0 ? err(L, &e) : 0;
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
	LKernel *x = checkk(L, 1);
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
		const char *s;

		if (!opts && (lua_getfield(L, 5, "scope") != LUA_TNIL || lua_getfield(L, 5, "role") != LUA_TNIL))
			return luaL_error(L, "%s: %s: the options take only layout = (k:buffer sets scope and role)",
			                  op, name);
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
		return err(L, &e);
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
	LKernel *x = checkk(L, 1);
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
	LKernel *x = checkk(L, 1);
	const char *f = luaL_checkstring(L, 2);
	static const char *const hw[6] = { "bx", "by", "bz", "tx", "ty", "tz" };
	int i, b;

	for (i = 0; i < 6; i++)
		if (strcmp(f, hw[i]) == 0) {
			UOp *r = i < 3 ? x->grid[i] : x->blk[i - 3];

			if (!r)
				return luaL_error(L, "k.%s: the kernel has no %s dimension (kernel.new{%s = ...})", f,
				                  i < 3 ? "grid" : "block", i < 3 ? "grid" : "block");
			pushvalue(L, krange_var(r), 1);
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
	LKernel *x = checkk(L, 1);
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
	push_frame(L, x, 0, NULL);
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
		return err(L, &e);
	lua_settop(L, 1);
	return 1;
}

/* k:check(): true and the notes (a string, "" when none); raises what is wrong */
static int
k_check(lua_State *L)
{
	LKernel *x = checkk(L, 1);
	Buf notes;
	Err e = { "" };
	int rc;

	buf_init(&notes);
	rc = kernel_check(x->k, &notes, &e);
	if (rc < 0) {
		buf_free(&notes);
		return err(L, &e);
	}
	lua_pushboolean(L, 1);
	lua_pushstring(L, notes.s ? notes.s : "");
	buf_free(&notes);
	return 2;
}

/* The buffers of a run, freed by __gc if a Lua error cuts the run short. */
typedef struct RunBox {
	TBuf *b;
	int n;
} RunBox;

static int
run_gc(lua_State *L)
{
	RunBox *r = luaL_checkudata(L, 1, RUNBOX);
	int i;

	for (i = 0; r->b && i < r->n; i++)
		tbuf_free(&r->b[i]);
	free(r->b);
	r->b = NULL;
	return 0;
}

static int
numel(const KBuf *b)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < b->ndim; i++)
		n *= b->shape[i];
	return (int)(n < INT32_MAX ? n : INT32_MAX);
}

/* Fill the inputs: bindings by name (tensors, or nested tables through
** tensor.from), else the node a lowered kernel realizes, else (random = 1)
** seeded random values for counting. */
static void
bind_inputs(lua_State *L, LKernel *x, int binds, RunBox *r, int random)
{
	int i;

	for (i = 0; i < x->k->nbuf; i++) {
		const KBuf *kb = &x->k->buf[i];
		TBuf *t = &r->b[i];
		Err e = { "" };

		if (kb->role != KB_INPUT)
			continue;
		if (binds && lua_getfield(L, binds, kb->name) != LUA_TNIL) {
			int vi = lua_gettop(L);

			if (lua_type(L, vi) == LUA_TTABLE) {
				lua_getglobal(L, "tensor");
				if (lua_type(L, -1) != LUA_TTABLE)
					luaL_error(L, "k:run: the tensor table is not loaded");
				lua_getfield(L, -1, "from");
				lua_pushvalue(L, vi);
				lua_pushstring(L, dtype_name(kb->dtype));
				lua_call(L, 2, 1);
				lua_replace(L, vi);
				lua_pop(L, 1);
			}
			if (!tessel_testtensor(L, vi))
				luaL_error(L, "k:run: the binding of %s is a %s, not a tensor", kb->name, luaL_typename(L, vi));
			tessel_realize(L, vi, 0, t);
			lua_pop(L, 1);
		} else {
			if (binds)
				lua_pop(L, 1);
			if (kb->tensor && kb->tensor->op != OP_PARAM) {
				if (tensor_realize(kb->tensor, NULL, t, &e) < 0)
					err(L, &e);
			} else if (random) {
				int64_t n = numel(kb);

				t->dtype = kb->dtype;
				t->ndim = kb->ndim;
				memcpy(t->shape, kb->shape, kb->ndim * sizeof *kb->shape);
				t->numel = n;
				t->axis = -1;
				t->device = NULL;
				if (!(t->data = malloc((size_t)n * dtype_bytes(kb->dtype) + 1)))
					luaL_error(L, "k:counts: out of memory");
				/* as exports draw them (harness.c) */
				backend_draw(x->k, i, t);
			} else
				luaL_error(L, "k:run: input %s is not bound (k:run{%s = tensor})", kb->name, kb->name);
		}
		if (t->dtype != kb->dtype)
			luaL_error(L, "k:run: %s is a %s buffer, its binding a %s tensor (cast it)", kb->name,
			           dtype_name(kb->dtype), dtype_name(t->dtype));
		if (t->numel != numel(kb))
			luaL_error(L, "k:run: %s has %d elements, its binding %I", kb->name, numel(kb), (lua_Integer)t->numel);
		memcpy(t->shape, kb->shape, kb->ndim * sizeof *kb->shape);
		t->ndim = kb->ndim;
	}
}

static void
run_opts(lua_State *L, int i, KRunOpts *o)
{
	memset(o, 0, sizeof *o);
	o->checks = 1;
	if (lua_type(L, i) != LUA_TTABLE)
		return;
	if (lua_getfield(L, i, "checks") != LUA_TNIL)
		o->checks = lua_toboolean(L, -1);
	if (lua_getfield(L, i, "max_steps") == LUA_TNUMBER)
		o->max_steps = lua_tointeger(L, -1);
	lua_pop(L, 2);
}

static int
jit_gc(lua_State *L)
{
	BJitCache **p = luaL_checkudata(L, 1, JITMETA);

	backend_jit_cache_free(*p);
	*p = NULL;
	return 0;
}

/* The Lua state's cache of compiled kernels, made on first use (freed with the state). */
static BJitCache *
jit_cache(lua_State *L)
{
	BJitCache **p;

	if (lua_getfield(L, LUA_REGISTRYINDEX, JITCACHE) == LUA_TUSERDATA) {
		p = lua_touserdata(L, -1);
		lua_pop(L, 1);
		if (*p)
			return *p;
	} else
		lua_pop(L, 1);
	p = lua_newuserdatauv(L, sizeof *p, 0);
	*p = NULL;
	luaL_setmetatable(L, JITMETA);
	if (!(*p = backend_jit_cache_new()))
		luaL_error(L, "k:run: out of memory");
	lua_setfield(L, LUA_REGISTRYINDEX, JITCACHE);
	return *p;
}

static int
cl_gc(lua_State *L)
{
	BClSession **p = luaL_checkudata(L, 1, CLSESSION);

	backend_cl_free(*p);
	*p = NULL;
	return 0;
}

/* The Lua state's OpenCL session, made on first use (freed with the state). */
static BClSession *
cl_session(lua_State *L)
{
	BClSession **p;

	if (lua_getfield(L, LUA_REGISTRYINDEX, CLKEY) == LUA_TUSERDATA) {
		p = lua_touserdata(L, -1);
		lua_pop(L, 1);
		if (*p)
			return *p;
	} else
		lua_pop(L, 1);
	p = lua_newuserdatauv(L, sizeof *p, 0);
	*p = NULL;
	luaL_setmetatable(L, CLSESSION);
	if (!(*p = backend_cl_new()))
		luaL_error(L, "k:run: out of memory");
	lua_setfield(L, LUA_REGISTRYINDEX, CLKEY);
	return *p;
}

/* The compiled paths' options: {backend = "c" | "opencl", compare =, flags = {...}, cc =, stats = {}} */
typedef struct JitArgs {
	int backend;         /* 0 the interpreter, 1 c, 2 opencl */
	BJitOpts o;
	BJitStats st;
	BClOpts cl;
	BClStats clst;
	const char *flags[33];
	int stats;           /* the index of the table to fill, or 0 */
} JitArgs;

static int
jit_opts(lua_State *L, int i, JitArgs *j)
{
	const char *b;
	int n, k;

	memset(j, 0, sizeof *j);
	if (lua_type(L, i) != LUA_TTABLE || lua_getfield(L, i, "backend") == LUA_TNIL) {
		if (lua_type(L, i) == LUA_TTABLE)
			lua_pop(L, 1);
		return 0;
	}
	b = lua_tostring(L, -1);
	if (!b || (strcmp(b, "c") != 0 && strcmp(b, "interp") != 0 && strcmp(b, "opencl") != 0))
		luaL_error(L, "k:run: unknown backend %s (\"interp\", the default, \"c\" or \"opencl\")",
		           b ? b : luaL_typename(L, -1));
	lua_pop(L, 1);
	if (strcmp(b, "interp") == 0)
		return 0;
	if (strcmp(b, "opencl") == 0) {
		j->backend = 2;
		if (lua_getfield(L, i, "compare") != LUA_TNIL)
			j->cl.no_check = !lua_toboolean(L, -1);
		if (lua_getfield(L, i, "flags") != LUA_TNIL || lua_getfield(L, i, "cc") != LUA_TNIL
		|| lua_getfield(L, i, "fast") != LUA_TNIL)
			luaL_error(L, "k:run: flags, cc and fast are options of backend \"c\"");
		lua_pop(L, 4);
		if (lua_getfield(L, i, "stats") == LUA_TTABLE)
			j->stats = lua_absindex(L, i);
		else if (!lua_isnil(L, -1))
			luaL_error(L, "k:run: stats must be a table (filled with build_s, run_s, check_s, device)");
		lua_pop(L, 1);
		j->cl.stats = &j->clst;
		j->cl.session = cl_session(L);
		return 2;
	}
	j->backend = 1;
	if (lua_getfield(L, i, "fast") != LUA_TNIL)
		j->o.fast = lua_toboolean(L, -1);
	lua_pop(L, 1);
	if (lua_getfield(L, i, "compare") != LUA_TNIL)
		j->o.no_check = !lua_toboolean(L, -1);
	if (lua_getfield(L, i, "cc") != LUA_TNIL && !(j->o.cc = lua_tostring(L, -1)))
		luaL_error(L, "k:run: cc must be a string (the compiler)");
	lua_pop(L, 2);
	if (lua_getfield(L, i, "flags") == LUA_TTABLE) {
		n = (int)luaL_len(L, -1);
		if (n > 32)
			luaL_error(L, "k:run: at most 32 flags");
		for (k = 0; k < n; k++) {
			lua_geti(L, -1, k + 1);
			if (!(j->flags[k] = lua_tostring(L, -1)))
				luaL_error(L, "k:run: flags must be strings");
			lua_pop(L, 1);   /* the table keeps the string */
		}
		j->o.flags = j->flags;
	} else if (!lua_isnil(L, -1))
		luaL_error(L, "k:run: flags must be a table of strings");
	lua_pop(L, 1);
	if (lua_getfield(L, i, "stats") == LUA_TTABLE)
		j->stats = lua_absindex(L, i);
	else if (!lua_isnil(L, -1))
		luaL_error(L, "k:run: stats must be a table (filled with compile_s, run_s, check_s, cached)");
	lua_pop(L, 1);
	j->o.stats = &j->st;
	j->o.cache = jit_cache(L);
	return 1;
}

static RunBox *
run(lua_State *L, LKernel *x, int binds, KRunOpts *o, KCounts *c, int random, const JitArgs *jit)
{
	RunBox *r;
	Buf notes;
	Err e = { "" };

	buf_init(&notes);
	if (kernel_check(x->k, &notes, &e) < 0) {
		buf_free(&notes);
		err(L, &e);
	}
	buf_free(&notes);
	r = lua_newuserdatauv(L, sizeof *r, 0);
	r->b = NULL;
	r->n = 0;
	luaL_setmetatable(L, RUNBOX);
	if (!(r->b = calloc(x->k->nbuf ? x->k->nbuf : 1, sizeof *r->b)))
		luaL_error(L, "k:run: out of memory");
	r->n = x->k->nbuf;
	bind_inputs(L, x, binds, r, random);
	if (jit && jit->backend == 2) {
		BClOpts co = jit->cl;

		co.interp = o;
		if (backend_cl_run(x->k, r->b, &co, &e) < 0)
			err(L, &e);
	} else if (jit) {
		BJitOpts jo = jit->o;

		jo.interp = o;
		if (backend_jit_run(x->k, r->b, &jo, &e) < 0)
			err(L, &e);
	} else if (kernel_run(x->k, o, r->b, c, &e) < 0)
		err(L, &e);
	return r;
}

/* k:run([bindings] [, {checks = false}]) -> the outputs, as tensors */
static int
k_run(lua_State *L)
{
	LKernel *x = checkk(L, 1);
	KRunOpts o;
	JitArgs j;
	RunBox *r;
	int i, n = 0, compiled;

	lua_settop(L, 3);
	if (!lua_isnil(L, 2) && lua_type(L, 2) != LUA_TTABLE)
		return luaL_typeerror(L, 2, "bindings table");
	/* k:run{backend = "c"}: options in the one table, when no input is named backend */
	if (lua_isnil(L, 3) && lua_type(L, 2) == LUA_TTABLE && kernel_find_buffer(x->k, "backend") < 0) {
		if (lua_getfield(L, 2, "backend") == LUA_TSTRING)
			lua_copy(L, 2, 3);
		lua_pop(L, 1);
	}
	run_opts(L, 3, &o);
	compiled = jit_opts(L, 3, &j);
	r = run(L, x, lua_isnil(L, 2) ? 0 : 2, &o, NULL, 0, compiled ? &j : NULL);
	if (j.stats && j.backend == 2) {
		lua_getfield(L, j.stats, "stats");
		lua_pushnumber(L, j.clst.build_s);
		lua_setfield(L, -2, "build_s");
		lua_pushnumber(L, j.clst.run_s);
		lua_setfield(L, -2, "run_s");
		lua_pushnumber(L, j.clst.check_s);
		lua_setfield(L, -2, "check_s");
		lua_pushstring(L, j.clst.device);
		lua_setfield(L, -2, "device");
		lua_pop(L, 1);
	} else if (j.stats) {
		lua_getfield(L, j.stats, "stats");
		lua_pushboolean(L, j.st.cached);
		lua_setfield(L, -2, "cached");
		lua_pushnumber(L, j.st.compile_s);
		lua_setfield(L, -2, "compile_s");
		lua_pushnumber(L, j.st.run_s);
		lua_setfield(L, -2, "run_s");
		lua_pushnumber(L, j.st.check_s);
		lua_setfield(L, -2, "check_s");
		lua_pop(L, 1);
	}
	for (i = 0; i < x->k->nbuf; i++)
		if (x->k->buf[i].role == KB_OUTPUT) {
			tessel_pushtbuf(L, &r->b[i]);
			n++;
		}
	return n;
}

/* k:counts([bindings]) -> a table of counts (unbound inputs get seeded random values) */
static int
k_counts(lua_State *L)
{
	LKernel *x = checkk(L, 1);
	KRunOpts o;
	KCounts c;

	lua_settop(L, 3);
	if (!lua_isnil(L, 2) && lua_type(L, 2) != LUA_TTABLE)
		return luaL_typeerror(L, 2, "bindings table");
	run_opts(L, 3, &o);
	o.counts = 1;
	memset(&c, 0, sizeof c);
	run(L, x, lua_isnil(L, 2) ? 0 : 2, &o, &c, 1, NULL);
	lua_createtable(L, 0, 14);
#define F(name) (lua_pushinteger(L, c.name), lua_setfield(L, -2, #name))
	F(global_loads); F(global_stores); F(global_sectors);
	F(shared_loads); F(shared_stores); F(shared_accesses); F(bank_conflicts);
	F(ops); F(barriers); F(shuffles); F(mmas); F(ldmatrices); F(cp_asyncs); F(wgmmas); F(tmas); F(tma_bytes); F(atomics); F(fences);
	F(blocks); F(threads);
#undef F
	return 1;
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
	tessel_pushkernel_text(L, checkk(L, 1)->k, color);
	return 1;
}

static int k_tostring(lua_State *L) { return k_text(L, 0); }

static int
k_show(lua_State *L)
{
	return k_text(L, tessel_want_color(L, 2));
}

static int
k_uops(lua_State *L)
{
	LKernel *x = checkk(L, 1);
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
	LKernel *x = checkk(L, 1);
	Buf b;
	Err e = { "" };

	buf_init(&b);
	if (tile_ir_print(&b, x->k, &e) < 0) {
		buf_free(&b);
		return err(L, &e);
	}
	if (b.len && b.s[b.len - 1] == '\n')
		b.s[--b.len] = 0;
	lua_pushstring(L, b.s ? b.s : "");
	buf_free(&b);
	return 1;
}

/* k:source([dialect] [, {fast = true}]): the kernel as source text */
static int
k_source(lua_State *L)
{
	LKernel *x = checkk(L, 1);
	const char *d = luaL_optstring(L, 2, "c");
	BSourceOpts o = { 0 };
	Dialect dl;
	Buf b;
	Err e = { "" };

	if (dialect_parse(d, &dl) < 0)
		return luaL_error(L, "k:source: unknown dialect \"%s\" (c, cuda, opencl, triton)", d);
	if (!lua_isnoneornil(L, 3)) {
		luaL_checktype(L, 3, LUA_TTABLE);
		lua_getfield(L, 3, "fast");
		o.fast = lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
	buf_init(&b);
	if (backend_source_opts(&b, x->k, dl, &o, &e) < 0) {
		buf_free(&b);
		return err(L, &e);
	}
	lua_pushlstring(L, b.s ? b.s : "", b.len);
	buf_free(&b);
	return 1;
}

/* k:export(dialect, dir [, {inputs = {name = tensor}, reps =, warmup =}]) -> dir, files | nil, message */
static int
k_export(lua_State *L)
{
	LKernel *x = checkk(L, 1);
	const char *d = luaL_checkstring(L, 2), *dir = luaL_checkstring(L, 3);
	BExportOpts o;
	Dialect dl;
	RunBox *r;
	Buf files;
	Err e = { "" };
	int i, rc;

	memset(&o, 0, sizeof o);
	lua_settop(L, 4);
	if (dialect_parse(d, &dl) < 0 || (dl != D_C && dl != D_CUDA && dl != D_OPENCL && dl != D_TRITON))
		return luaL_error(L, "k:export: unknown dialect \"%s\" (c, cuda, opencl, triton)", d);
	if (!lua_isnil(L, 4)) {
		luaL_checktype(L, 4, LUA_TTABLE);
		if (lua_getfield(L, 4, "reps") != LUA_TNIL)
			o.reps = (int)luaL_checkinteger(L, -1);
		if (lua_getfield(L, 4, "warmup") != LUA_TNIL)
			o.warmup = lua_tointeger(L, -1) == 0 ? -1 : (int)luaL_checkinteger(L, -1);
		lua_getfield(L, 4, "fast");
		o.fast = lua_toboolean(L, -1);
		lua_pop(L, 3);
	}
	/* bound inputs, anchored in a box the collector frees */
	r = lua_newuserdatauv(L, sizeof *r, 0);
	r->b = NULL;
	r->n = 0;
	luaL_setmetatable(L, RUNBOX);
	if (!(r->b = calloc(x->k->nbuf ? x->k->nbuf : 1, sizeof *r->b)))
		return luaL_error(L, "k:export: out of memory");
	r->n = x->k->nbuf;
	if (!lua_isnil(L, 4) && lua_getfield(L, 4, "inputs") == LUA_TTABLE) {
		int ti = lua_gettop(L);

		for (i = 0; i < x->k->nbuf; i++) {
			const KBuf *kb = &x->k->buf[i];

			if (kb->role != KB_INPUT || lua_getfield(L, ti, kb->name) == LUA_TNIL) {
				if (kb->role == KB_INPUT)
					lua_pop(L, 1);
				continue;
			}
			if (!tessel_testtensor(L, -1))
				return luaL_error(L, "k:export: inputs.%s is a %s, not a tensor", kb->name, luaL_typename(L, -1));
			tessel_realize(L, lua_gettop(L), 0, &r->b[i]);
			if (r->b[i].dtype != kb->dtype || r->b[i].numel != numel(kb))
				return luaL_error(L, "k:export: %s is a %s buffer of %d elements, its binding %s of %I "
				                  "(cast or reshape it)", kb->name, dtype_name(kb->dtype), numel(kb),
				                  dtype_name(r->b[i].dtype), (lua_Integer)r->b[i].numel);
			lua_pop(L, 1);
		}
	}
	o.inputs = r->b;
	buf_init(&files);
	o.files = &files;
	rc = backend_export(x->k, dl, dir, &o, &e);
	return tessel_export_result(L, rc, dir, &files, &e);
}

int
tessel_export_result(lua_State *L, int rc, const char *dir, Buf *files, const Err *e)
{
	int n = 0;

	if (rc < 0) {
		buf_free(files);
		if (rc != -2)
			return luaL_error(L, "%s", e->msg);
		lua_pushnil(L);
		lua_pushstring(L, e->msg);
		return 2;
	}
	lua_pushstring(L, dir);
	lua_newtable(L);
	for (const char *p = files->s, *nl; p && *p; p = nl + 1) {
		if (!(nl = strchr(p, '\n')))
			break;
		lua_pushlstring(L, p, (size_t)(nl - p));
		lua_rawseti(L, -2, ++n);
	}
	buf_free(files);
	return 2;
}

static int
k_buffers(lua_State *L)
{
	LKernel *x = checkk(L, 1);
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
	LKernel *x = checkk(L, 1);
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
	LKernel *x = checkk(L, 1);
	VizOpts o;
	Err e = { "" };

	tessel_vizopts(L, 2, 3, &o);
	if (kernel_scene(tessel_toscene(L, 3), x->k, NULL, &o, &e) < 0)
		return err(L, &e);
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
	{ "range", l_range,
	  "kernel.range(n [, name | {name=, type=, bind=}]): a loop, inside a stage\n"
	  "for i in kernel.range(n [, opts]) do ... end records a loop over i in [0, n).\n"
	  "type: LOOP (default), REDUCE, GLOBAL, LOCAL, UPCAST, ... (tinygrad's axis types);\n"
	  "bind: block.x/y/z, thread.x/y/z, warp, lane (a thread-bound loop selects the thread)." },
	{ "when", l_when,
	  "kernel.when(cond, function() ... end): statements that run where cond holds" },
	{ "barrier", l_barrier,
	  "kernel.barrier(): every thread of the block waits here (__syncthreads)" },
	{ "cp_async_commit", l_cp_async_commit,
	  "kernel.cp_async_commit(): the thread's cp.async issued since its last commit become one\n"
	  "group (cp.async.commit_group); kernel.copy(dst, src, {impl = \"cp_async\"}) issues them" },
	{ "cp_async_wait", l_cp_async_wait,
	  "kernel.cp_async_wait(n): waits until at most the n most recent committed groups of the\n"
	  "thread are in flight (cp.async.wait_group n); the older ones have landed. Other threads\n"
	  "see them after a kernel.barrier(). The interpreter reports an access to a destination\n"
	  "before its wait, and copies still in flight when a thread ends." },
	{ "mbarrier_init", l_mbarrier_init,
	  "kernel.mbarrier_init(bar, {s}, count): element bar[s] of a shared uint64 buffer becomes an\n"
	  "mbarrier expecting count arrivals a phase (mbarrier.init; one thread does it, then a\n"
	  "kernel.barrier() before others use it)" },
	{ "mbarrier_arrive", l_mbarrier_arrive,
	  "kernel.mbarrier_arrive(bar, {s} [, {tx = bytes}]): one arrival on bar[s]; with tx, first\n"
	  "expect that many bytes of TMA transactions (mbarrier.arrive.expect_tx). A phase completes\n"
	  "when its arrivals and its bytes are all in; then TMAs attached to it land" },
	{ "mbarrier_wait", l_mbarrier_wait,
	  "kernel.mbarrier_wait(bar, {s}, parity): wait until the phase of that parity (0 or 1) has\n"
	  "completed (try_wait.parity in a loop); parity 1 passes on a fresh barrier. The interpreter\n"
	  "reports a wait that can never pass (deadlock), with the barrier's state" },
	{ "tma", l_tma,
	  "kernel.tma(dst, src, bar, {s}): Hopper's bulk tensor copy of the global tile src into the\n"
	  "shared tile dst, completing its bytes on mbarrier bar[s]. The box and the swizzle (128B,\n"
	  "64B, 32B or none) are decided by enumerating dst's layout; a tile wider than the swizzle\n"
	  "is several boxes. One thread issues it: put it under kernel.when(k.tx == 0, ...), with\n"
	  "kernel.mbarrier_arrive(bar, {s}, {tx = plan.bytes}). Returns the plan: {swizzle, box\n"
	  "(innermost first), boxes, bytes, reason}. Refused with the element that breaks each mode" },
	{ "atomic", l_atomic,
	  "kernel.atomic(op, buf, key, value [, old, okey]): one atomic read-modify-write of\n"
	  "buf[key] (a global or shared buffer): op \"add\" (int32, uint32, float32), \"max\" or\n"
	  "\"min\" (int32, uint32), \"exch\" (int32, uint32, float32); value of the buffer's dtype.\n"
	  "With old, okey: the value before goes to the register element old[okey]. CUDA's\n"
	  "atomicAdd/atomicMax/atomicMin/atomicExch. Atomics never race with each other; a plain\n"
	  "access of what another block wrote is ordered by kernel.fence() then an atomic in the\n"
	  "writer, and the atomic (on the same element) then kernel.fence() in the reader (the\n"
	  "last block of a split-k reduction). Global temporaries start at zero" },
	{ "fence", l_fence,
	  "kernel.fence([scope]): a memory fence, scope \"gpu\" (default: __threadfence, what\n"
	  "orders memory between blocks with an atomic, see kernel.atomic) or \"block\"\n"
	  "(__threadfence_block)" },
	{ "shuffle", l_shuffle,
	  "kernel.shuffle(value, lane): value as lane `lane` (0..31) of the same warp holds it\n"
	  "(__shfl_sync over the full warp: every lane of the warp must reach it)" },
	{ "mma", l_mma,
	  "kernel.mma(atom, D, A, B, C): D = A B + C by a CuTe MMA atom over the warp\n"
	  "(cute.mma_atoms() lists them; SM70/SM80 atoms). D, A, B, C are register buffers of\n"
	  "the atom's values per thread; lane t's A register v holds A[m, k], m + k*M = A(t, v)" },
	{ "ldmatrix", l_ldmatrix,
	  "kernel.ldmatrix(D, S, {i, j} [, {x = 4, trans = false}]): the warp's ldmatrix of x 8x8\n"
	  "matrices of 16-bit elements from the shared buffer S into the register buffer D (2x values\n"
	  "a lane). Lane 8m + r names row r of matrix m: the 8 elements from S[i, j]'s offset (a\n"
	  "multiple of 8). Lane t gets elements 2m, 2m+1 of D from matrix m: row t//4, columns\n"
	  "2(t%4), 2(t%4)+1 (trans: rows 2(t%4), 2(t%4)+1, column t//4), the m16n8k16 fragments" },
	{ "wgmma", l_wgmma,
	  "kernel.wgmma(D, A, B): sm_90a's wgmma.mma_async m64nNk16 over the warpgroup (128 threads\n"
	  "from a multiple of 128): D += A B in float32. A is a 64x16 (m, k) region of a shared\n"
	  "float16/bfloat16 buffer (As:tile({s, 0, k0}, {1, 64, 16})), B a 16xN (k, n) region of one\n"
	  "(N a multiple of 8, 8 to 256), D a float32 register buffer of N/2 elements: thread t\n"
	  "(warp w, lane l) holds C[16w + l//4 + 8((v//2)%2), 8(v//4) + 2(l%4) + v%2] in element v.\n"
	  "Each operand's layout must be a GMMA canonical form (K- or MN-major; 128B, 64B, 32B\n"
	  "swizzle or none) at every start its loops can give: refused otherwise, with the element\n"
	  "that breaks it (kernel.wgmma_desc shows the descriptor). A may instead come from registers\n"
	  "(the RS form): 8 elements of a float16/bfloat16 register buffer along its last dimension\n"
	  "(P:tile({j, 0}, {1, 8}), or a buffer of 8), element i at row 16w + l//4 + 8((i//2)%2),\n"
	  "column 2(l%4) + i%2 + 8(i//4): D's values 8j..8j+7 are the A fragment of its columns\n"
	  "16j..16j+15 (attention's P, no shared memory). Asynchronous: kernel.wgmma_fence() before\n"
	  "the first and after other accesses to D or to A's registers, kernel.wgmma_commit(), then\n"
	  "kernel.wgmma_wait(n) before D or A's registers are read or written again. Options:\n"
	  "{b_nk = true} (B's region given N x 16, (n, k)), {zero = true} (D = A B: D's old values\n"
	  "are not read, so the first product of a sum needs no zeroing)" },
	{ "wgmma_fence", l_wgmma_fence,
	  "kernel.wgmma_fence(): wgmma.fence.sync.aligned: orders this thread's accesses to the\n"
	  "accumulators before the wgmmas that follow (needed before the first one)" },
	{ "setmaxnreg", l_setmaxnreg,
	  "kernel.setmaxnreg(n, \"inc\" | \"dec\"): the warpgroup's threads raise or lower their register\n"
	  "budget to n (a multiple of 8 from 24 to 256; setmaxnreg.sync.aligned, warpgroup-wide). A\n"
	  "producer warpgroup gives registers up (\"dec\") for the consumers' accumulators (\"inc\");\n"
	  "the CUDA kernel gets __launch_bounds__(threads, 1). No value changes (the interpreter skips it)" },
	{ "wgmma_commit", l_wgmma_commit,
	  "kernel.wgmma_commit(): the wgmmas issued since the last commit become one group\n"
	  "(wgmma.commit_group.sync.aligned)" },
	{ "wgmma_wait", l_wgmma_wait,
	  "kernel.wgmma_wait(n): waits until at most the n (0 to 7) most recent committed wgmma\n"
	  "groups are in flight (wgmma.wait_group.sync.aligned n); their accumulators are then\n"
	  "readable" },
	{ "wgmma_desc", l_wgmma_desc,
	  "kernel.wgmma_desc(region, \"A\" | \"B\" [, {var = value}]): the GMMA shared-memory\n"
	  "descriptor wgmma reads the region through: {major = \"K\" | \"MN\", swizzle = \"128B\" |\n"
	  "\"64B\" | \"32B\" | \"interleave\", layout_type, lbo, sbo (bytes), start (bytes, at the\n"
	  "binding; other variables 0), starts (verified), desc (hex, the buffer at address 0)}" },
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
	{ "copy", l_copy,
	  "kernel.copy(dst, src [, {scope=, warps=, impl=}]): a collective copy; impl, reason\n"
	  "dst and src are buffers or regions (B:tile({i0, j0}, {32, 32})) of one shape. The scope\n"
	  "(thread, warp, warpgroup, cta, kernel; warps = {0, 4} for a subset of the cta; default\n"
	  "cta inside thread-bound code, else thread) shares the work, consecutive threads on\n"
	  "consecutive elements. The widest vector both layouts allow is chosen (vector8/4/2,\n"
	  "scalar) and said, with what ruled out wider ones; impl = \"vector4\" forces one.\n"
	  "impl = \"cp_async\" (global to shared, 16-byte runs proved in both layouts) issues one\n"
	  "cp.async a unit and waits for nothing: kernel.cp_async_commit() and\n"
	  "kernel.cp_async_wait(n) follow, then a barrier before other threads read the tile." },
	{ "fill", l_fill, "kernel.fill(dst, value [, opts]): every element of dst set, as kernel.copy shares work" },
	{ "reduce", l_reduce,
	  "kernel.reduce(dst, src [, {op = \"add\"|\"max\"|\"mul\", scope=, impl=}]): dst = op over src\n"
	  "dst spans the outer dimensions of src. impl rows: each thread owns whole outputs; tree:\n"
	  "one output for a power-of-two cta (partials, then a shared-memory tree with barriers)." },
	{ "gemm", l_gemm,
	  "kernel.gemm(C, A, B [, opts]): C += A @ B on the last two dimensions of each region\n"
	  "impl fma: each thread of the scope owns elements of C and loops over K." },
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
	{ "run", k_run,
	  "k:run([bindings] [, {checks = false, backend = \"c\" | \"opencl\"}]): run on the CPU as a GPU would;\n"
	  "the outputs (k:run{backend = \"c\", ...} takes options and bindings in one table when no input\n"
	  "is named backend)\n"
	  "Bindings by input name: tensors or nested tables. Checks (on by default) raise\n"
	  "`race: ...`, `out of bounds: ...`, `uninitialized: ...` with block, thread and element.\n"
	  "backend = \"c\": k:source(\"c\") compiled by cc (cached per session) and run natively, after\n"
	  "the interpreter, whose outputs must agree bit for bit (compare = false skips both);\n"
	  "flags = {...} adds compiler flags, cc = \"clang\" picks the compiler, stats = {} gets\n"
	  "compile_s, run_s (the native kernel alone), check_s and cached. Compiler errors raise\n"
	  "with the compiler's message and the emitted line. fast = true: k:source(\"c\", {fast = true})\n"
	  "built with -O3 -ffast-math, compared within 1e-4 (float32) of max(|x|, 1).\n"
	  "backend = \"opencl\": k:source(\"opencl\") built and run through the OpenCL loader (PoCL on the\n"
	  "CPU: make deps), checked against the interpreter bit for bit (compare = false skips it);\n"
	  "stats = {} gets build_s, run_s, check_s and device. No loader or no platform raises." },
	{ "counts", k_counts,
	  "k:counts([bindings]): what a run costs on a GPU\n"
	  "A table: global_loads, global_stores, global_sectors (32-byte), shared_loads,\n"
	  "shared_stores, shared_accesses (wavefronts), bank_conflicts, ops, barriers, shuffles, mmas, ldmatrices, cp_asyncs, wgmmas,\n"
	  "tmas, tma_bytes, atomics, fences, blocks,\n"
	  "threads. Unbound inputs get seeded random values." },
	{ "uops", k_uops, "k:uops(): every UOp of the kernel, one a line" },
	{ "tile_ir", k_tile_ir,
	  "k:tile_ir(): the kernel in Neptune's tile IR: nests that compute on tiles as tile stores" },
	{ "buffers", k_buffers, "k:buffers(): the buffers as a table (name, role, scope, dtype, shape, layout)" },
	{ "source", k_source,
	  "k:source([dialect] [, {fast = true}]): the kernel as source code, a string (dialect \"c\", the\n"
	  "default). fast: float32 functions (exp2f) and max/min without NaN rules, for -ffast-math\n"
	  "builds; values then agree with k:run within a tolerance, not bit for bit.\n"
	  "C: one function per stage and tessel_kernel(void **bufs), which runs them in order;\n"
	  "parallel loops get OpenMP, values agree with k:run bit for bit (docs/export.md).\n"
	  "Refused, with the statement: barriers, shuffles, MMAs (C runs a block's threads one\n"
	  "after another), float16 and bfloat16.\n"
	  "cuda: a __global__ function per stage (bound loops are blockIdx/threadIdx, guarded where\n"
	  "shorter than their axis), __shared__ buffers, __syncthreads, __shfl_sync, mma.sync in\n"
	  "inline PTX, and tessel_launch(dbufs, stream) launching the stages in order.\n"
	  "opencl: a __kernel per stage and a table of launches; no shuffles, MMAs or halves.\n"
	  "triton: a Python module, one @triton.jit function per stage built on the tile view\n"
	  "(k:tile_ir()): block-bound or independent outer loops are tl.program_id, tiles are\n"
	  "tl.arange offsets with masks, reductions tl.sum/tl.max/tl.min; tessel_launch(bufs)\n"
	  "launches the stages. Close to the interpreter within a stated tolerance, not bit for\n"
	  "bit. Refused: barriers, shuffles, MMAs, thread-bound loops, shared and local buffers." },
	{ "export", k_export,
	  "k:export(dialect, dir [, {inputs = {name = tensor}, reps = 20, warmup = 3, fast = false}]): a\n"
	  "directory that `make -C dir` builds and runs: the source (c, cuda, opencl, triton), a host\n"
	  "program that draws\n"
	  "the inputs as tessel does (or reads the given ones), checks the outputs against the\n"
	  "interpreter's (saved as ref_*.bin) and prints the median time of repeated runs, and a\n"
	  "Makefile. Returns dir and the files written; nil and a message when a file cannot be\n"
	  "written (docs/export.md)." },
	{ "stages", k_stages, "k:stages(): the stage names in order" },
	{ NULL, NULL, NULL }
};

static const HelpReg bmeths[] = {
	{ "tile", b_tile, "B:tile(start, extent): the region of B from start ({i, j}) spanning extent ({32, 32})" },
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
	luaL_newmetatable(L, KITER);
	lua_pop(L, 1);
	luaL_newmetatable(L, KREGION);
	lua_pop(L, 1);
	luaL_newmetatable(L, RUNBOX);
	lua_pushcfunction(L, run_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	luaL_newmetatable(L, JITMETA);
	lua_pushcfunction(L, jit_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	luaL_newmetatable(L, CLSESSION);
	lua_pushcfunction(L, cl_gc);
	lua_setfield(L, -2, "__gc");
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

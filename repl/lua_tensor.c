/* lua_tensor.c - the `tensor` Lua table: tinygrad-style tensor programs on the UOp IR, realized on the CPU. */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../interp/tensor/tensor.h"
#include "../viz/viz.h"
#include "help.h"
#include "lua_tensor.h"
#include "tessel.h"

#define GRAPH  "tessel.TensorGraph"
#define TCTX   "tessel.TensorContext"
#define CURKEY "tessel.tensor.current"
#define OPTKEY "tessel.tensor.options"

/*
** Ownership as in lua_uop.c: a tensor is a UOp in the arena of a context
** userdata (its user value keeps the arena alive). New nodes go into the
** current context; a context past GENERATION nodes or BYTES of arena is
** retired and freed by the collector when no tensor refers to it any more,
** and operands from it are copied into the new one (uop_import).
*/
enum { GENERATION = 1 << 18 };
#define BYTES ((size_t)1 << 29)

static int
ctx_gc(lua_State *L)
{
	TCtxBox *x = luaL_checkudata(L, 1, TCTX);

	uctx_free(x->c);
	x->c = NULL;
	return 0;
}

TCtxBox *
lt_current(lua_State *L)
{
	TCtxBox *x;

	if (lua_getfield(L, LUA_REGISTRYINDEX, CURKEY) == LUA_TUSERDATA) {
		x = lua_touserdata(L, -1);
		if (x->c && uctx_nodes(x->c) < GENERATION && uctx_bytes(x->c) < BYTES)
			return x;
	}
	lua_pop(L, 1);
	x = lua_newuserdatauv(L, sizeof *x, 0);
	x->c = NULL;
	x->next_slot = 0;
	luaL_setmetatable(L, TCTX);
	if (!(x->c = uctx_new()))
		luaL_error(L, "tensor: out of memory");
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, CURKEY);
	return x;
}

/* Push a tensor of the context at stack index ci (raises with e's message on NULL). */
void
lt_push(lua_State *L, UOp *u, int ci, const Err *e)
{
	LTensor *t;

	ci = lua_absindex(L, ci);
	if (!u)
		luaL_error(L, "%s", e && e->msg[0] ? e->msg : "tensor: out of memory");
	t = lua_newuserdatauv(L, sizeof *t, 1);
	t->u = u;
	luaL_setmetatable(L, TENSOR);
	lua_pushvalue(L, ci);
	lua_setiuservalue(L, -2, 1);
}

LTensor *
lt_check(lua_State *L, int i)
{
	return luaL_checkudata(L, i, TENSOR);
}

/* The UOp of the tensor at i, in context c (imported when it is older). */
UOp *
lt_in_ctx(lua_State *L, int i, UCtx *c)
{
	LTensor *t = lt_check(L, i);
	TCtxBox *x;
	UOp *u;

	lua_getiuservalue(L, i, 1);
	x = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (x && x->c == c)
		return t->u;
	if (!(u = uop_import(c, t->u)))
		luaL_error(L, "tensor: out of memory");
	return u;
}

/* A Lua value as an operand next to a tensor of dtype `like`: scalars take
** the tensor's dtype, except a float next to an integer tensor (float32). */
UOp *
lt_operand(lua_State *L, int i, UCtx *c, DType like, const char *what)
{
	if (luaL_testudata(L, i, TENSOR))
		return lt_in_ctx(L, i, c);
	switch (lua_type(L, i)) {
	case LUA_TNUMBER:
		if (lua_isinteger(L, i))
			return uop_constf(c, like == DT_BOOL ? DT_INT32 : like, (double)lua_tointeger(L, i));
		return uop_constf(c, dtype_is_float(like) ? like : DT_FLOAT32, lua_tonumber(L, i));
	case LUA_TBOOLEAN:
		return uop_constf(c, DT_BOOL, lua_toboolean(L, i));
	default:
		luaL_error(L, "%s: expected a tensor or a number, got %s", what, luaL_typename(L, i));
	}
	return NULL;
}

DType
lt_like_of(lua_State *L, int a, int b)
{
	LTensor *t = luaL_testudata(L, a, TENSOR);

	if (!t)
		t = luaL_testudata(L, b, TENSOR);
	return t ? (DType)t->u->dtype : DT_FLOAT32;
}

/* Read a shape: a table of integers or the integer arguments from i on. */
int
lt_get_shape(lua_State *L, int i, int64_t *s, const char *what)
{
	int n, k;

	if (lua_type(L, i) == LUA_TTABLE) {
		tessel_checkseq(L, i, what);
		n = (int)luaL_len(L, i);
		if (n > T_MAXDIM)
			luaL_error(L, "%s: rank %d is more than %d", what, n, T_MAXDIM);
		for (k = 0; k < n; k++) {
			lua_geti(L, i, k + 1);
			if (!lua_isinteger(L, -1))
				luaL_error(L, "%s: entry %d of the shape is not an integer", what, k + 1);
			s[k] = lua_tointeger(L, -1);
			lua_pop(L, 1);
		}
		return n;
	}
	for (n = 0; lua_type(L, i + n) == LUA_TNUMBER; n++) {
		if (n >= T_MAXDIM)
			luaL_error(L, "%s: rank is more than %d", what, T_MAXDIM);
		s[n] = luaL_checkinteger(L, i + n);
	}
	return n;
}

DType
lt_get_dtype(lua_State *L, int i, DType def, const char *what)
{
	const char *s;
	DType t;

	if (lua_isnoneornil(L, i))
		return def;
	s = luaL_checkstring(L, i);
	if (dtype_parse(s, &t) < 0 || t == DT_VOID || t == DT_INDEX)
		luaL_error(L, "%s: unknown dtype \"%s\" (bool, int8..int64, uint8..uint64, float16, "
		           "bfloat16, float32, float64)", what, s);
	return t;
}

/* ---- arithmetic ---- */

static int
binop(lua_State *L, Op op, const char *what)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	DType like = lt_like_of(L, 1, 2);
	UOp *a = lt_operand(L, 1, x->c, like, what), *b = lt_operand(L, 2, x->c, like, what);
	Err e = { "" };

	lt_push(L, tensor_alu(x->c, op, a, b, &e), ci, &e);
	return 1;
}

static int m_add(lua_State *L) { return binop(L, OP_ADD, "tensor +"); }
static int m_sub(lua_State *L) { return binop(L, OP_SUB, "tensor -"); }
static int m_mul(lua_State *L) { return binop(L, OP_MUL, "tensor *"); }
static int m_idiv(lua_State *L) { return binop(L, OP_IDIV, "tensor //"); }
static int m_mod(lua_State *L) { return binop(L, OP_MOD, "tensor %"); }
static int m_band(lua_State *L) { return binop(L, OP_AND, "tensor &"); }
static int m_bor(lua_State *L) { return binop(L, OP_OR, "tensor |"); }
static int m_bxor(lua_State *L) { return binop(L, OP_XOR, "tensor ~"); }
static int m_shl(lua_State *L) { return binop(L, OP_SHL, "tensor <<"); }
static int m_shr(lua_State *L) { return binop(L, OP_SHR, "tensor >>"); }
static int l_maximum(lua_State *L) { return binop(L, OP_MAX, "tensor.maximum"); }
static int l_lt(lua_State *L) { return binop(L, OP_CMPLT, "lt"); }
static int l_ne(lua_State *L) { return binop(L, OP_CMPNE, "ne"); }

/* Two operands (a tensor and a tensor or Lua value) through a composition of tensor_compose.c. */
typedef UOp *(*Build2)(UCtx *c, UOp *a, UOp *b, Err *e);

static int
compose2(lua_State *L, Build2 f, const char *what)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	DType like = lt_like_of(L, 1, 2);
	UOp *a = lt_operand(L, 1, x->c, like, what), *b = lt_operand(L, 2, x->c, like, what);
	Err e = { "" };

	lt_push(L, f(x->c, a, b, &e), ci, &e);
	return 1;
}

/* The spec's decompositions (tensor_compose.c): ge = (a < b) != true, le = (b < a) != true,
** eq = (a != b) != true, gt = b < a, div = a * recip(b) in float. */
static int l_gt(lua_State *L) { return compose2(L, tensor_gt, "gt"); }
static int l_ge(lua_State *L) { return compose2(L, tensor_ge, "ge"); }
static int l_le(lua_State *L) { return compose2(L, tensor_le, "le"); }
static int l_eq(lua_State *L) { return compose2(L, tensor_eq, "eq"); }
static int m_div(lua_State *L) { return compose2(L, tensor_div, "tensor /"); }
static int l_minimum(lua_State *L) { return compose2(L, tensor_minimum, "minimum"); }

/* Pow = Exp2(Log2(A) * B) (the spec); the evaluator computes pow exactly. */
static int m_pow(lua_State *L) { return binop(L, OP_POW, "tensor ^"); }

static int
m_unm(lua_State *L)
{
	lua_settop(L, 1);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	Err e = { "" };

	lt_push(L, tensor_unary(x->c, OP_NEG, lt_in_ctx(L, 1, x->c), &e), -1, &e);
	return 1;
}

/* ---- unary functions and compositions ---- */

typedef UOp *(*Build)(UCtx *c, UOp *a, Err *e);

static int
apply(lua_State *L, Build f)
{
	lua_settop(L, 1);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	lt_push(L, f(x->c, a, &e), ci, &e);
	return 1;
}

static int
unary(lua_State *L, Op op)
{
	lua_settop(L, 1);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	lt_push(L, tensor_unary(x->c, op, a, &e), ci, &e);
	return 1;
}

static int
axis_arg(lua_State *L, int i, int nd)
{
	lua_Integer ax = luaL_optinteger(L, i, -1);

	if (ax < -nd || ax >= nd)
		luaL_error(L, "axis %d is out of range for rank %d", (int)ax, nd);
	return (int)(ax < 0 ? ax + nd : ax);
}

/* t:softmax([axis]), t:log_softmax([axis]); t:cumsum([axis]) (default 0, as tinygrad) */
typedef UOp *(*BuildAx)(UCtx *c, UOp *a, int axis, Err *e);

static int
with_axis(lua_State *L, BuildAx f, int def)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);
	int ax = def;

	if (!lua_isnoneornil(L, 2))
		ax = axis_arg(L, 2, a->ndim);
	lt_push(L, f(x->c, a, ax, &e), ci, &e);
	return 1;
}

static int l_softmax(lua_State *L) { return with_axis(L, tensor_softmax, -1); }
static int l_log_softmax(lua_State *L) { return with_axis(L, tensor_log_softmax, -1); }
static int l_cumsum(lua_State *L) { return with_axis(L, tensor_cumsum, 0); }

static int l_exp(lua_State *L) { return apply(L, tensor_exp); }
static int l_exp2(lua_State *L) { return unary(L, OP_EXP2); }
static int l_log(lua_State *L) { return apply(L, tensor_log); }
static int l_log2(lua_State *L) { return unary(L, OP_LOG2); }
static int l_sin(lua_State *L) { return unary(L, OP_SIN); }
static int l_cos(lua_State *L) { return apply(L, tensor_cos); }
static int l_sqrt(lua_State *L) { return unary(L, OP_SQRT); }
static int l_recip(lua_State *L) { return unary(L, OP_RECIP); }
static int l_trunc(lua_State *L) { return unary(L, OP_TRUNC); }
static int l_relu(lua_State *L) { return apply(L, tensor_relu); }
static int l_sigmoid(lua_State *L) { return apply(L, tensor_sigmoid); }
static int l_tanh(lua_State *L) { return apply(L, tensor_tanh); }

/* ---- reductions ---- */

typedef UOp *(*BuildRed)(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, Err *e);

static UOp *red_max(UCtx *c, UOp *a, const int64_t *axes, int k, int keep, Err *e) { return tensor_reduce(c, OP_MAX, a, axes, k, keep, e); }
static UOp *red_prod(UCtx *c, UOp *a, const int64_t *axes, int k, int keep, Err *e) { return tensor_reduce(c, OP_MUL, a, axes, k, keep, e); }

/* t:sum([axis | {axes}] [, keepdim]) */
static int
reduce(lua_State *L, BuildRed f, const char *what)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L), k = -1, keep = lua_toboolean(L, 3);
	int64_t axes[T_MAXDIM];
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	if (lua_type(L, 2) == LUA_TTABLE)
		k = lt_get_shape(L, 2, axes, what);
	else if (lua_isinteger(L, 2)) {
		axes[0] = lua_tointeger(L, 2);
		k = 1;
	} else if (lua_isboolean(L, 2))
		keep = lua_toboolean(L, 2);
	else if (!lua_isnoneornil(L, 2))
		return luaL_error(L, "%s: the axis must be an integer or a table of integers", what);
	lt_push(L, f(x->c, a, axes, k, keep, &e), ci, &e);
	return 1;
}

static int l_sum(lua_State *L) { return reduce(L, tensor_sum, "sum"); }
static int l_max(lua_State *L) { return reduce(L, red_max, "max"); }
static int l_min(lua_State *L) { return reduce(L, tensor_min, "min"); }
static int l_prod(lua_State *L) { return reduce(L, red_prod, "prod"); }
static int l_mean(lua_State *L) { return reduce(L, tensor_mean, "mean"); }

/* a:matmul(b): numpy's rules (rank 1 or more, batch axes broadcast), the spec's gemm */
static int
l_matmul(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c), *b = lt_in_ctx(L, 2, x->c);

	lt_push(L, tensor_matmul(x->c, a, b, &e), ci, &e);
	return 1;
}

/* t:gather(dim, index) */
static int
l_gather(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);
	lua_Integer dim = luaL_checkinteger(L, 2);
	UOp *idx = lt_in_ctx(L, 3, x->c);

	if (dim < INT32_MIN || dim > INT32_MAX)
		return luaL_error(L, "gather: axis %I is out of range for rank %d", dim, a->ndim);
	lt_push(L, tensor_gather(x->c, a, (int)dim, idx, &e), ci, &e);
	return 1;
}

/* t:scatter_add(dim, index, src) */
static int
l_scatter_add(lua_State *L)
{
	lua_settop(L, 4);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);
	lua_Integer dim = luaL_checkinteger(L, 2);
	UOp *idx = lt_in_ctx(L, 3, x->c), *src = lt_operand(L, 4, x->c, (DType)a->dtype, "scatter_add");

	if (dim < INT32_MIN || dim > INT32_MAX)
		return luaL_error(L, "scatter_add: axis %I is out of range for rank %d", dim, a->ndim);
	lt_push(L, tensor_scatter_add(x->c, a, (int)dim, idx, src, &e), ci, &e);
	return 1;
}

/* ---- movement ---- */

static int
l_reshape(lua_State *L)
{
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	int64_t s[T_MAXDIM];
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);
	int n = lt_get_shape(L, 2, s, "reshape");

	lt_push(L, tensor_reshape(x->c, a, s, n, &e), ci, &e);
	return 1;
}

static int
l_expand(lua_State *L)
{
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	int64_t s[T_MAXDIM], r[T_MAXDIM];
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);
	int n = lt_get_shape(L, 2, s, "expand"), i;

	if (n > a->ndim) {   /* leading axes: reshape first, as tinygrad does */
		for (i = 0; i < n; i++)
			r[i] = i < n - a->ndim ? 1 : a->shape[i - (n - a->ndim)];
		a = tensor_reshape(x->c, a, r, n, &e);
	}
	lt_push(L, a ? tensor_expand(x->c, a, s, n, &e) : NULL, ci, &e);
	return 1;
}

static int
l_permute(lua_State *L)
{
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	int64_t s[T_MAXDIM];
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);
	int n = lt_get_shape(L, 2, s, "permute");

	lt_push(L, tensor_permute(x->c, a, s, n, &e), ci, &e);
	return 1;
}

static int
l_transpose(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	int64_t s[T_MAXDIM];
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);
	int i, d0 = axis_arg(L, 2, a->ndim), d1;

	lua_settop(L, 3);
	if (lua_isnil(L, 3))
		lua_pushinteger(L, -2);
	d1 = a->ndim ? (int)luaL_checkinteger(L, 3) : 0;
	if (!lua_isnoneornil(L, 2) || a->ndim < 2) {
		if (d1 < 0)
			d1 += a->ndim;
	} else {
		d0 = a->ndim - 1;
		d1 = a->ndim - 2;
	}
	if (d1 < 0 || d1 >= a->ndim)
		return luaL_error(L, "transpose: axis out of range");
	for (i = 0; i < a->ndim; i++)
		s[i] = i;
	s[d0] = d1;
	s[d1] = d0;
	lt_push(L, tensor_permute(x->c, a, s, a->ndim, &e), ci, &e);
	return 1;
}

static int
l_flip(lua_State *L)
{
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	int64_t s[T_MAXDIM];
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);
	int n = lt_get_shape(L, 2, s, "flip");

	lt_push(L, tensor_flip(x->c, a, s, n, &e), ci, &e);
	return 1;
}

/* pad{{before, after}, ...} and shrink{{begin, end}, ...}; nil keeps an axis. */
static int
pairs(lua_State *L, int i, UOp *a, int64_t *p, int64_t *q, int pad, const char *what)
{
	int n, k;

	luaL_checktype(L, i, LUA_TTABLE);
	tessel_checkseq(L, i, what);
	n = (int)luaL_len(L, i);
	if (n != a->ndim)
		luaL_error(L, "%s: %d pairs for a tensor of rank %d", what, n, a->ndim);
	for (k = 0; k < n; k++) {
		lua_geti(L, i, k + 1);
		if (lua_isnil(L, -1) || (lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1))) {
			p[k] = 0;
			q[k] = pad ? 0 : a->shape[k];
		} else if (lua_type(L, -1) == LUA_TTABLE && luaL_len(L, -1) == 2) {
			lua_geti(L, -1, 1);
			lua_geti(L, -2, 2);
			if (!lua_isinteger(L, -2) || !lua_isinteger(L, -1))
				luaL_error(L, "%s: pair %d is not two integers", what, k + 1);
			p[k] = lua_tointeger(L, -2);
			q[k] = lua_tointeger(L, -1);
			lua_pop(L, 2);
		} else
			luaL_error(L, "%s: entry %d must be {a, b} or false", what, k + 1);
		lua_pop(L, 1);
	}
	return n;
}

/* t:pad({{before, after}, false, ...} [, value]): negative amounts shrink (tinygrad's pad) */
static int
l_pad(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	int64_t p[T_MAXDIM], q[T_MAXDIM];
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c), *v = NULL;
	int n = pairs(L, 2, a, p, q, 1, "pad");

	if (!lua_isnil(L, 3))
		v = lt_operand(L, 3, x->c, (DType)a->dtype, "pad");
	lt_push(L, tensor_pad_constant(x->c, a, p, q, n, v, &e), ci, &e);
	return 1;
}

static int
l_shrink(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	int64_t p[T_MAXDIM], q[T_MAXDIM];
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);
	int n = pairs(L, 2, a, p, q, 0, "shrink");

	lt_push(L, tensor_shrink(x->c, a, p, q, n, &e), ci, &e);
	return 1;
}

/* t:index(i0, i1, ...): integers or integer tensors of shape () or (k,) */
static int
l_index(lua_State *L)
{
	int n = lua_gettop(L) - 1, i, ci;
	TCtxBox *x = lt_current(L);
	UOp *s[T_MAXDIM + 1];

	ci = lua_gettop(L);
	Err e = { "" };

	s[0] = lt_in_ctx(L, 1, x->c);
	if (n > s[0]->ndim || n > T_MAXDIM)
		return luaL_error(L, "index: %d indices for a tensor of rank %d", n, s[0]->ndim);
	for (i = 0; i < n; i++) {
		if (lua_isinteger(L, i + 2)) {
			lua_Integer v = lua_tointeger(L, i + 2);

			if (v < -s[0]->shape[i] || v >= s[0]->shape[i])
				return luaL_error(L, "index: %d is out of range for axis %d of size %d", (int)v, i,
				                  (int)s[0]->shape[i]);
			s[i + 1] = uop_constf(x->c, DT_INT64, (double)(v < 0 ? v + s[0]->shape[i] : v));
		} else
			s[i + 1] = lt_in_ctx(L, i + 2, x->c);
	}
	lt_push(L, tensor_new(x->c, OP_INDEX, (DType)s[0]->dtype, s, n + 1, 0, 0, NULL, NULL, 0, &e), ci, &e);
	return 1;
}

/* ---- dtype, device, markers ---- */

static int
l_cast(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	lt_push(L, tensor_cast(x->c, lt_get_dtype(L, 2, DT_FLOAT32, "cast"), a, &e), ci, &e);
	return 1;
}

static int
l_bitcast(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	lt_push(L, tensor_bitcast(x->c, lt_get_dtype(L, 2, DT_FLOAT32, "bitcast"), a, &e), ci, &e);
	return 1;
}

static int
l_where(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *cnd = lt_in_ctx(L, 1, x->c);
	DType like = lt_like_of(L, 2, 3);
	UOp *a = lt_operand(L, 2, x->c, like, "where"), *b = lt_operand(L, 3, x->c, like, "where");

	lt_push(L, tensor_where(x->c, cnd, a, b, &e), ci, &e);
	return 1;
}

static int
marker(lua_State *L, Op op)
{
	lua_settop(L, 1);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	lt_push(L, tensor_new(x->c, op, (DType)a->dtype, &a, 1, 0, 0, NULL, NULL, 0, &e), ci, &e);
	return 1;
}

static int l_contiguous(lua_State *L) { return marker(L, OP_CONTIGUOUS); }
static int l_detach(lua_State *L) { return marker(L, OP_DETACH); }

static int
l_named(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	lt_push(L, tensor_named(x->c, a, luaL_checkstring(L, 2), &e), ci, &e);
	return 1;
}

/* Device names: "CPU", "CPU:1", or a table of names for a tuple. */
static const char *
device_arg(lua_State *L, int i, Buf *b)
{
	int n, k;

	if (lua_type(L, i) == LUA_TSTRING)
		return lua_tostring(L, i);
	if (lua_type(L, i) == LUA_TNUMBER) {   /* n simulated devices CPU:0..CPU:n-1 */
		n = (int)luaL_checkinteger(L, i);
		if (n < 1 || n > T_MAXDEV)
			luaL_error(L, "copy: %d devices (1 to %d)", n, T_MAXDEV);
		for (k = 0; k < n; k++)
			emit(b, "%sCPU:%d", k ? "," : "", k);
		return b->s;
	}
	luaL_checktype(L, i, LUA_TTABLE);
	tessel_checkseq(L, i, "copy: the devices");
	n = (int)luaL_len(L, i);
	if (n < 1 || n > T_MAXDEV)
		luaL_error(L, "copy: %d devices (1 to %d)", n, T_MAXDEV);
	/* every entry checked before the first emit: an error raised later would leak b (fuzz F6) */
	for (k = 0; k < n; k++) {
		lua_geti(L, i, k + 1);
		if (lua_type(L, -1) != LUA_TSTRING || strchr(lua_tostring(L, -1), ','))
			luaL_error(L, "copy: device %d is not a name", k + 1);
		lua_pop(L, 1);
	}
	for (k = 0; k < n; k++) {
		lua_geti(L, i, k + 1);
		emit(b, "%s%s", k ? "," : "", lua_tostring(L, -1));
		lua_pop(L, 1);
	}
	return b->s;
}

static int
l_copy(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c), *r;
	Buf b;

	buf_init(&b);
	lua_pushcfunction(L, NULL);   /* placeholder: keep the index math simple */
	lua_pop(L, 1);
	{
		const char *d = device_arg(L, 2, &b);

		r = tensor_copy(x->c, a, d ? d : "CPU", &e);
	}
	buf_free(&b);
	lt_push(L, r, ci, &e);
	return 1;
}

static int
l_replicated(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	lt_push(L, tensor_replicated(x->c, a, (int)luaL_optinteger(L, 2, 0), &e), ci, &e);
	return 1;
}

/* ---- realize, values, printing ---- */

static uint64_t
mem_limit(lua_State *L)
{
	uint64_t v = 0;

	if (lua_getfield(L, LUA_REGISTRYINDEX, OPTKEY) == LUA_TNUMBER)
		v = (uint64_t)lua_tointeger(L, -1);
	lua_pop(L, 1);
	return v;
}

/* Collect the PARAM nodes of u (name -> slot) for binding by name. */
static void
collect_params(const UOp *u, const UOp **out, int *n, int max, int depth)
{
	int i;

	if (depth > 2000)
		return;
	if (u->op == OP_PARAM) {
		for (i = 0; i < *n; i++)
			if (out[i] == u)
				return;
		if (*n < max)
			out[(*n)++] = u;
		return;
	}
	if (u->op == OP_FUNCTION || u->op == OP_CALL) {
		for (i = 1; i < u->nsrc; i++)
			collect_params(u->src[i], out, n, max, depth + 1);
		return;
	}
	for (i = 0; i < u->nsrc; i++)
		if (u->src[i]->op != OP_CONST)
			collect_params(u->src[i], out, n, max, depth + 1);
}

/* Realize the tensor at i (bindings table at binds, optional) into b. Params
** are bound by name; their slots index the array handed to the evaluator. */
static void
realize(lua_State *L, int i, int binds, TBuf *b)
{
	LTensor *t = lt_check(L, i);
	TEvalOpts o = { mem_limit(L), NULL, 0 };
	const UOp *ps[64], **bound;
	int np = 0, k, rc;
	int64_t maxslot = -1;
	Err e = { "" };

	/* the bindings may name more params than the graph has: one table binds a program's pieces */
	if (binds && !lua_isnoneornil(L, binds) && lua_type(L, binds) != LUA_TTABLE)
		luaL_typeerror(L, binds, "bindings table");
	if (binds && lua_type(L, binds) == LUA_TTABLE) {
		collect_params(t->u, ps, &np, 64, 0);
		for (k = 0; k < np; k++)
			if (ps[k]->arg[0] > maxslot && ps[k]->arg[0] < (1 << 24))
				maxslot = ps[k]->arg[0];
		/* anchored in a userdata: luaL_error below must not leak it */
		bound = lua_newuserdatauv(L, (size_t)(maxslot + 1) * sizeof *bound + 1, 0);
		memset(bound, 0, (size_t)(maxslot + 1) * sizeof *bound);
		for (k = 0; k < np; k++) {
			int64_t slot = ps[k]->arg[0];
			LTensor *v;

			if (lua_getfield(L, binds, ps[k]->name ? ps[k]->name : "?") == LUA_TNIL) {
				lua_pop(L, 1);
				continue;
			}
			if (!(v = luaL_testudata(L, -1, TENSOR)))
				luaL_error(L, "realize: the binding of %s is not a tensor", ps[k]->name);
			if (slot >= 0 && slot <= maxslot)
				bound[slot] = v->u;
			lua_pop(L, 1);   /* the tensor stays reachable from the table */
		}
		o.params = bound;
		o.nparams = (int)(maxslot + 1);
	}
	rc = tensor_realize(t->u, &o, b, &e);
	if (rc < 0)
		luaL_error(L, "%s", e.msg);
}

/* A BINARY node holding the realized values: later uses start from there. */
static UOp *
from_buf(UCtx *c, const TBuf *b, Err *e)
{
	UOp *u, *r;
	int64_t bytes = b->numel * dtype_bytes(b->dtype);

	if (b->numel == 0)
		return tensor_full(c, b->dtype, 0, b->shape, b->ndim, e);
	if (bytes > 0xffffffffLL - 16)
		return err_set(e, "realize: %lld bytes are too many for one buffer", (long long)bytes), NULL;
	u = tensor_new(c, OP_BINARY, DT_UINT8, NULL, 0, 0, 0, NULL, b->data, (uint32_t)bytes, e);
	if (u && b->dtype != DT_UINT8)
		u = b->dtype == DT_BOOL ? tensor_cast(c, DT_BOOL, u, e) : tensor_bitcast(c, b->dtype, u, e);
	r = u ? tensor_reshape(c, u, b->shape, b->ndim, e) : NULL;
	if (r && b->device && strcmp(b->device, "CPU") != 0)
		r = tensor_copy(c, r, b->device, e);
	return r;
}

static int
l_realize(lua_State *L)
{
	TCtxBox *x;
	TBuf b;
	Err e = { "" };
	UOp *u;
	int ci;

	realize(L, 1, 2, &b);
	if (b.dtype == DT_VOID) {
		lua_settop(L, 1);
		return 1;
	}
	x = lt_current(L);
	ci = lua_gettop(L);
	u = from_buf(x->c, &b, &e);
	tbuf_free(&b);
	lt_push(L, u, ci, &e);
	return 1;
}

static void
push_value(lua_State *L, const TBuf *b, int64_t i)
{
	const unsigned char *p = (const unsigned char *)b->data + i * dtype_bytes(b->dtype);

	if (b->dtype == DT_BOOL)
		lua_pushboolean(L, *p != 0);
	else if (dtype_is_float(b->dtype))
		lua_pushnumber(L, dtype_load_f(b->dtype, p));
	else
		lua_pushinteger(L, dtype_load_i(b->dtype, p));
}

static void
tolist(lua_State *L, const TBuf *b, int ax, int64_t *at)
{
	int64_t k;

	if (ax == b->ndim) {
		push_value(L, b, (*at)++);
		return;
	}
	lua_createtable(L, (int)(b->shape[ax] < 1000000 ? b->shape[ax] : 0), 0);
	for (k = 0; k < b->shape[ax]; k++) {
		tolist(L, b, ax + 1, at);
		lua_rawseti(L, -2, k + 1);
	}
}

static int
l_tolist(lua_State *L)
{
	TBuf b;
	int64_t at = 0;

	realize(L, 1, 2, &b);
	if (b.numel > 50000000) {
		tbuf_free(&b);
		return luaL_error(L, "tolist: %I elements are too many for a Lua table", (lua_Integer)b.numel);
	}
	lua_settop(L, 2);
	tolist(L, &b, 0, &at);
	tbuf_free(&b);
	return 1;
}

/* t:item(): the value of a one-element tensor */
static int
l_item(lua_State *L)
{
	TBuf b;

	realize(L, 1, 2, &b);
	if (b.numel != 1) {
		tbuf_free(&b);
		return luaL_error(L, "item: the tensor has %I elements", (lua_Integer)b.numel);
	}
	push_value(L, &b, 0);
	tbuf_free(&b);
	return 1;
}

static void
fmt_value(Buf *o, const TBuf *b, int64_t i)
{
	const unsigned char *p = (const unsigned char *)b->data + i * dtype_bytes(b->dtype);

	if (b->dtype == DT_BOOL)
		emit(o, "%s", *p ? "true" : "false");
	else if (dtype_is_float(b->dtype)) {
		double v = dtype_load_f(b->dtype, p);

		char t[64];

		snprintf(t, sizeof t, "%.6g", v);
		/* a float always shows as one: 1.0, not 1 */
		emit(o, "%s%s", t, strpbrk(t, ".eni") ? "" : ".0");
	} else if (b->dtype == DT_UINT64)
		emit(o, "%llu", (unsigned long long)dtype_load_i(b->dtype, p));
	else
		emit(o, "%lld", (long long)dtype_load_i(b->dtype, p));
}

/* numpy-style nested brackets; axes longer than 2*EDGE show their ends and "...". */
enum { EDGE = 3 };

static void
fmt_axis(Buf *o, const TBuf *b, int ax, int64_t base, int64_t stride, int elide)
{
	int64_t n = b->shape[ax], k, inner = stride / (n ? n : 1);

	if (ax == b->ndim - 1) {
		emit(o, "[");
		for (k = 0; k < n; k++) {
			if (elide && n > 2 * EDGE && k == EDGE) {
				emit(o, ", ...");
				k = n - EDGE - 1;
				continue;
			}
			if (k)
				emit(o, ", ");
			fmt_value(o, b, base + k);
		}
		emit(o, "]");
		return;
	}
	emit(o, "[");
	for (k = 0; k < n; k++) {
		if (elide && n > 2 * EDGE && k == EDGE) {
			emit(o, ",\n%*s...", ax + 1, "");
			k = n - EDGE - 1;
			continue;
		}
		if (k)
			emit(o, ",\n%*s", ax + 1, "");
		fmt_axis(o, b, ax + 1, base + k * inner, inner, elide);
	}
	emit(o, "]");
}

static void
describe(Buf *o, const UOp *u)
{
	emit(o, "<Tensor %s ", dtype_name(u->dtype));
	uop_shape_str(o, u->shape, u->ndim);
	emit(o, " on %s", u->device ? u->device : "CPU");
	if (u->axis >= 0)
		emit(o, " axis=%d", u->axis);
	if (u->name)
		emit(o, " \"%s\"", u->name);
	emit(o, ">");
}

/*
** Printing never raises: a tensor that cannot be realized shows its dtype,
** shape and device and says why (the params it needs, or the evaluator's
** message), so that the REPL can echo a program with unbound params.
*/
static int
l_tostring(lua_State *L)
{
	LTensor *t = lt_check(L, 1);
	TEvalOpts opts = { mem_limit(L), NULL, 0 };
	TBuf b;
	Buf o;
	Err e = { "" };
	int eval = 1;

	if (lua_getfield(L, LUA_REGISTRYINDEX, "tessel.tensor.noeval"), lua_toboolean(L, -1))
		eval = 0;
	lua_pop(L, 1);
	if (t->u->dtype == DT_VOID || t->u->op == OP_FUNCTION || t->u->op == OP_CALL
	|| t->u->op == OP_TUPLE)
		eval = 0;
	buf_init(&o);
	describe(&o, t->u);
	if (eval && tensor_realize(t->u, &opts, &b, &e) < 0) {
		const UOp *ps[64];
		int np = 0, k;

		collect_params(t->u, ps, &np, 64, 0);
		if (np) {
			emit(&o, " (unbound param%s: ", np > 1 ? "s" : "");
			for (k = 0; k < np; k++)
				emit(&o, "%s%s", k ? ", " : "", ps[k]->name ? ps[k]->name : "?");
			emit(&o, "; bind %s with t:realize{", np > 1 ? "them" : "it");
			for (k = 0; k < np && k < 3; k++)
				emit(&o, "%s%s = ...", k ? ", " : "", ps[k]->name ? ps[k]->name : "?");
			emit(&o, "%s})", np > 3 ? ", ..." : "");
		} else
			emit(&o, " (not realized: %s)", e.msg);
	} else if (eval) {
		emit(&o, "\n");
		if (b.ndim == 0)
			fmt_value(&o, &b, 0);
		else
			fmt_axis(&o, &b, 0, 0, b.numel, b.numel > 1000);
		tbuf_free(&b);
	}
	lua_pushstring(L, o.s ? o.s : "");
	buf_free(&o);
	return 1;
}

/* ---- graph ---- */

static int
l_graph(lua_State *L)
{
	LTensor *t = lt_check(L, 1), *g;

	g = lua_newuserdatauv(L, sizeof *g, 1);
	g->u = t->u;
	luaL_setmetatable(L, GRAPH);
	lua_getiuservalue(L, 1, 1);
	lua_setiuservalue(L, -2, 1);
	return 1;
}

/* show(t): the values, as tostring; __show(t, opts, op) takes no options */
static int
l_show(lua_State *L)
{
	tessel_checkopts(L, 2, luaL_optstring(L, 3, "show"), NULL);
	lua_settop(L, 1);
	return l_tostring(L);
}

static int
g_scene(lua_State *L)
{
	LTensor *g = luaL_checkudata(L, 1, GRAPH);
	VizOpts o;
	Err e;

	tessel_vizopts(L, 2, 3, &o, NULL);
	if (tensor_scene(tessel_toscene(L, 3), g->u, &o, &e) < 0)
		return luaL_error(L, "%s", e.msg);
	return 0;
}

/* The graph as text: one node a line, sources by number (post order). */
typedef struct Num {
	const UOp **k;
	int *v;
	size_t cap;
	int n;
} Num;

static int
numbered(Num *m, const UOp *u, Buf *o, int depth)
{
	size_t h = ((uintptr_t)u * 0x9E3779B97F4A7C15ull >> 7) & (m->cap - 1);
	int i, me, s[8];

	for (; m->k[h]; h = (h + 1) & (m->cap - 1))
		if (m->k[h] == u)
			return m->v[h];
	if (m->n >= 4000 || depth > 500)
		return -1;
	for (i = 0; i < u->nsrc; i++) {
		int r = numbered(m, u->src[i], o, depth + 1);

		if (i < 8)
			s[i] = r;
	}
	for (h = ((uintptr_t)u * 0x9E3779B97F4A7C15ull >> 7) & (m->cap - 1); m->k[h]; h = (h + 1) & (m->cap - 1))
		;
	me = m->n++;
	m->k[h] = u;
	m->v[h] = me;
	emit(o, "%3d %-10s %-8s ", me, uop_info[u->op].name, dtype_name(u->dtype));
	uop_shape_str(o, u->shape, u->ndim);
	if (u->op == OP_CONST)
		emit(o, "  %g", uop_const_value(u));
	if (u->op == OP_REDUCE)
		emit(o, "  %s", uop_info[u->arg[0]].name);
	if (u->name)
		emit(o, "  \"%s\"", u->name);
	if (u->device && (u->op == OP_COPY || u->op == OP_PARAM || u->axis >= 0))
		emit(o, "  %s%s", u->device, u->axis >= 0 ? " (sharded)" : "");
	for (i = 0; i < u->nsrc && i < 8; i++)
		emit(o, "%s%d", i ? ", " : "  <- ", s[i]);
	if (u->nsrc > 8)
		emit(o, ", ...");
	emit(o, "\n");
	return me;
}

static int
g_tostring(lua_State *L)
{
	LTensor *g = luaL_checkudata(L, 1, GRAPH);
	Num m;
	Buf o;

	m.cap = 16384;
	m.n = 0;
	m.k = calloc(m.cap, sizeof *m.k);
	m.v = calloc(m.cap, sizeof *m.v);
	if (!m.k || !m.v) {
		free(m.k);
		free(m.v);
		return luaL_error(L, "graph: out of memory");
	}
	buf_init(&o);
	numbered(&m, g->u, &o, 0);
	if (m.n >= 4000)
		emit(&o, "... (cut at 4000 nodes)\n");
	free(m.k);
	free(m.v);
	lua_pushstring(L, o.s ? o.s : "");
	buf_free(&o);
	return 1;
}

/* ---- fields ---- */

static int
m_index(lua_State *L)
{
	LTensor *t = lt_check(L, 1);
	const char *k;
	int i;

	if (lua_isinteger(L, 2)) {   /* t[i]: index the first axis (0-based, as tinygrad) */
		lua_settop(L, 2);
		return l_index(L);
	}
	k = luaL_checkstring(L, 2);
	if (strcmp(k, "shape") == 0) {
		lua_createtable(L, t->u->ndim, 0);
		for (i = 0; i < t->u->ndim; i++) {
			lua_pushinteger(L, t->u->shape[i]);
			lua_rawseti(L, -2, i + 1);
		}
		return 1;
	}
	if (strcmp(k, "dtype") == 0)
		return lua_pushstring(L, dtype_name(t->u->dtype)), 1;
	if (strcmp(k, "device") == 0) {
		int n = uop_ndev(t->u->device);

		if (n <= 1)
			lua_pushstring(L, t->u->device ? t->u->device : "CPU");
		else {
			char nm[64];

			lua_createtable(L, n, 0);
			for (i = 0; i < n; i++) {
				uop_devname(t->u->device, i, nm, sizeof nm);
				lua_pushstring(L, nm);
				lua_rawseti(L, -2, i + 1);
			}
		}
		return 1;
	}
	if (strcmp(k, "ndim") == 0)
		return lua_pushinteger(L, t->u->ndim), 1;
	if (strcmp(k, "numel") == 0)
		return lua_pushinteger(L, uop_numel(t->u)), 1;
	if (strcmp(k, "axis") == 0) {
		if (t->u->axis < 0)
			lua_pushnil(L);
		else
			lua_pushinteger(L, t->u->axis);
		return 1;
	}
	if (strcmp(k, "addrspace") == 0)
		return lua_pushstring(L, addrspace_name(t->u->addrspace)), 1;
	if (strcmp(k, "op") == 0)
		return lua_pushstring(L, uop_info[t->u->op].name), 1;
	if (strcmp(k, "name") == 0)
		return lua_pushstring(L, t->u->name ? t->u->name : ""), 1;
	if (strcmp(k, "T") == 0) {   /* tinygrad's T: axes 1 and 0 swapped */
		TCtxBox *x = lt_current(L);
		Err e = { "" };

		lt_push(L, tensor_transpose(x->c, lt_in_ctx(L, 1, x->c), 1, 0, &e), -1, &e);
		return 1;
	}
	luaL_getmetafield(L, 1, "methods");
	lua_getfield(L, -1, k);
	return 1;
}

/* t:range(): the derived min_max (the enclosing integer interval for floats) */
static int
l_range(lua_State *L)
{
	LTensor *t = lt_check(L, 1);

	lua_pushinteger(L, t->u->vmin);
	lua_pushinteger(L, t->u->vmax);
	return 2;
}

/* ---- constructors ---- */

static int
shape_and_opts(lua_State *L, int64_t *s, int *n, const char *what)
{
	int i = 1;

	*n = lt_get_shape(L, 1, s, what);
	if (lua_type(L, 1) == LUA_TTABLE)
		i = 2;
	else
		i = 1 + *n;
	return i;   /* the index of the options */
}

/* The dtype after the shape: a name, or the options {dtype =} (rand: {dtype =, seed =}) */
static const TesselOpt ctor_keys[] = { { "seed", "integer" }, { "dtype", "string" }, { NULL, NULL } };

static DType
opt_dtype(lua_State *L, int i, DType def, const char *what)
{
	DType t = def;

	if (lua_type(L, i) == LUA_TTABLE) {
		tessel_checkopts(L, i, what, strcmp(what, "tensor.rand") == 0 ? ctor_keys : ctor_keys + 1);
		lua_getfield(L, i, "dtype");
		t = lt_get_dtype(L, -1, def, what);
		lua_pop(L, 1);
	} else if (lua_type(L, i) == LUA_TSTRING)
		t = lt_get_dtype(L, i, def, what);
	else if (!lua_isnoneornil(L, i))
		luaL_typeerror(L, i, "dtype name or options table");
	return t;
}

static int
l_zeros_ones(lua_State *L, double v, const char *what)
{
	TCtxBox *x;
	int64_t s[T_MAXDIM];
	int n, oi = shape_and_opts(L, s, &n, what), ci;
	DType t = opt_dtype(L, oi, DT_FLOAT32, what);
	Err e = { "" };

	x = lt_current(L);
	ci = lua_gettop(L);
	lt_push(L, tensor_full(x->c, t, v, s, n, &e), ci, &e);
	return 1;
}

static int l_zeros(lua_State *L) { return l_zeros_ones(L, 0, "tensor.zeros"); }
static int l_ones(lua_State *L) { return l_zeros_ones(L, 1, "tensor.ones"); }

/* tensor.full(shape, value [, dtype]) */
static int
l_full(lua_State *L)
{
	TCtxBox *x;
	int64_t s[T_MAXDIM];
	int n = lt_get_shape(L, 1, s, "tensor.full"), ci;
	double v = luaL_checknumber(L, 2);
	DType t = lt_get_dtype(L, 3, lua_isinteger(L, 2) ? DT_INT32 : DT_FLOAT32, "tensor.full");
	Err e = { "" };

	luaL_checktype(L, 1, LUA_TTABLE);
	x = lt_current(L);
	ci = lua_gettop(L);
	lt_push(L, tensor_full(x->c, t, v, s, n, &e), ci, &e);
	return 1;
}

/*
** tensor.arange(stop), arange(start, stop [, step]) [, dtype] (tinygrad's): integers
** give int32 (int64 when int32 cannot hold the range), any float argument float32.
*/
static int
l_arange(lua_State *L)
{
	lua_settop(L, 4);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L), n, allint = 1, k, explicit;
	Err e = { "" };
	DType t;
	UOp *r;

	for (n = 0; n < 3 && lua_type(L, n + 1) == LUA_TNUMBER; n++)
		allint &= lua_isinteger(L, n + 1);
	if (n == 0)
		luaL_checknumber(L, 1);
	for (k = n + 2; k <= 4; k++)
		if (!lua_isnil(L, k))
			return luaL_argerror(L, k, "extra: arange(stop), arange(start, stop [, step]), then a dtype");
	explicit = !lua_isnil(L, n + 1);
	if (explicit && lua_type(L, n + 1) != LUA_TSTRING)
		return luaL_typeerror(L, n + 1, "number or dtype name");
	if (allint) {
		lua_Integer a = n == 1 ? 0 : lua_tointeger(L, 1), b = lua_tointeger(L, n == 1 ? 1 : 2);
		lua_Integer st = n == 3 ? lua_tointeger(L, 3) : 1;
		int64_t hi;
		int wide = 0;

		if (st != 0) {   /* tinygrad: int64 when start .. stop-step leaves int32 */
			if (uck_sub(b, st, &hi) < 0)
				wide = 1;
			else if (st > 0)
				wide = a < INT32_MIN || hi > INT32_MAX;
			else
				wide = hi < INT32_MIN || a > INT32_MAX;
		}
		t = lt_get_dtype(L, n + 1, wide ? DT_INT64 : DT_INT32, "tensor.arange");
		r = tensor_arange_int(x->c, a, b, st, t, &e);
	} else {
		double a = n == 1 ? 0 : lua_tonumber(L, 1), b = lua_tonumber(L, n == 1 ? 1 : 2);
		double st = n == 3 ? lua_tonumber(L, 3) : 1;

		t = lt_get_dtype(L, n + 1, DT_FLOAT32, "tensor.arange");
		if (!dtype_is_float(t))
			return luaL_error(L, "tensor.arange: float arguments need a float dtype, not %s", dtype_name(t));
		r = tensor_arange_step(x->c, a, b, st, t, &e);
	}
	lt_push(L, r, ci, &e);
	return 1;
}

/* tensor.rand(shape, {seed=, dtype=}) */
static int
l_rand(lua_State *L)
{
	TCtxBox *x;
	int64_t s[T_MAXDIM];
	int n, oi = shape_and_opts(L, s, &n, "tensor.rand"), ci;
	DType t = opt_dtype(L, oi, DT_FLOAT32, "tensor.rand");
	lua_Integer seed = 0;
	Err e = { "" };

	if (lua_type(L, oi) == LUA_TTABLE) {
		lua_getfield(L, oi, "seed");
		seed = lua_tointeger(L, -1);   /* an integer or nil: checked */
		lua_pop(L, 1);
	}
	x = lt_current(L);
	ci = lua_gettop(L);
	lt_push(L, tensor_rand(x->c, s, n, t, (uint64_t)seed, &e), ci, &e);
	return 1;
}

/* Flatten a nested table of numbers/booleans, checking it is rectangular. */
static void
flatten(lua_State *L, int i, int ax, int64_t *shape, int *nd, double **v, int64_t *n, int64_t *cap, int *isf, int *isb)
{
	int64_t len, k;

	if (lua_type(L, i) == LUA_TTABLE) {
		tessel_checkseq(L, i, "tensor: a nested table");
		len = (int64_t)luaL_len(L, i);
		if (ax >= T_MAXDIM)
			luaL_error(L, "tensor.from: deeper than %d", T_MAXDIM);
		if (ax >= *nd) {
			if (*n > 0)
				luaL_error(L, "tensor.from: the nesting is ragged at depth %d", ax + 1);
			*nd = ax + 1;
			shape[ax] = len;
		} else if (shape[ax] != len)
			luaL_error(L, "tensor.from: a row at depth %d has %d entries, an earlier one %d", ax + 1,
			           (int)len, (int)shape[ax]);
		for (k = 1; k <= len; k++) {
			lua_geti(L, i, k);
			flatten(L, lua_gettop(L), ax + 1, shape, nd, v, n, cap, isf, isb);
			lua_pop(L, 1);
		}
		return;
	}
	if (ax != *nd)
		luaL_error(L, "tensor.from: the nesting is ragged at depth %d", ax + 1);
	if (*n == *cap) {
		int64_t nc = *cap ? *cap * 2 : 64;
		double *nv;

		if (nc > ((int64_t)1 << 28))
			luaL_error(L, "tensor.from: too many values");
		nv = realloc(*v, nc * sizeof *nv);
		if (!nv)
			luaL_error(L, "tensor.from: out of memory");
		*v = nv;
		*cap = nc;
	}
	switch (lua_type(L, i)) {
	case LUA_TNUMBER:
		if (!lua_isinteger(L, i))
			*isf = 1;
		*isb = 0;
		(*v)[(*n)++] = lua_tonumber(L, i);
		break;
	case LUA_TBOOLEAN:
		(*v)[(*n)++] = lua_toboolean(L, i);
		break;
	default:
		luaL_error(L, "tensor.from: expected numbers, got %s", luaL_typename(L, i));
	}
}

/* The values live in a userdata while Lua may raise, so nothing leaks. */
typedef struct Vals {
	double *v;
} Vals;

static int
vals_gc(lua_State *L)
{
	Vals *b = lua_touserdata(L, 1);

	free(b->v);
	b->v = NULL;
	return 0;
}

static int
l_from(lua_State *L)
{
	int64_t shape[T_MAXDIM] = {0}, n = 0, cap = 0;
	int nd = 0, isf = 0, isb = 1, ci;
	Vals *vb;
	TCtxBox *x;
	DType t;
	Err e = { "" };
	UOp *u;

	lua_settop(L, 2);
	vb = lua_newuserdatauv(L, sizeof *vb, 0);
	vb->v = NULL;
	lua_newtable(L);
	lua_pushcfunction(L, vals_gc);
	lua_setfield(L, -2, "__gc");
	lua_setmetatable(L, -2);
	if (lua_type(L, 1) == LUA_TNUMBER || lua_type(L, 1) == LUA_TBOOLEAN) {
		/* a scalar: shape () */
		x = lt_current(L);
		ci = lua_gettop(L);
		t = lt_get_dtype(L, 2, lua_isboolean(L, 1) ? DT_BOOL : lua_isinteger(L, 1) ? DT_INT32 : DT_FLOAT32, "tensor.from");
		lt_push(L, uop_constf(x->c, t, lua_isboolean(L, 1) ? lua_toboolean(L, 1) : lua_tonumber(L, 1)), ci, NULL);
		return 1;
	}
	luaL_checktype(L, 1, LUA_TTABLE);
	flatten(L, 1, 0, shape, &nd, &vb->v, &n, &cap, &isf, &isb);
	t = lt_get_dtype(L, 2, n == 0 ? DT_FLOAT32 : isb ? DT_BOOL : isf ? DT_FLOAT32 : DT_INT32, "tensor.from");
	x = lt_current(L);
	ci = lua_gettop(L);
	u = tensor_from(x->c, t, vb->v, shape, nd, &e);
	free(vb->v);
	vb->v = NULL;
	lt_push(L, u, ci, &e);
	return 1;
}

/* tensor.param(name, shape [, dtype [, device]]) */
static int
l_param(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	int64_t s[T_MAXDIM];
	int n, ci;
	DType t;
	TCtxBox *x;
	Err e = { "" };

	lua_settop(L, 4);   /* the context goes above the arguments */
	luaL_checktype(L, 2, LUA_TTABLE);
	n = lt_get_shape(L, 2, s, "tensor.param");
	t = lt_get_dtype(L, 3, DT_FLOAT32, "tensor.param");
	if (!uop_valid_name(name))
		return luaL_error(L, "tensor.param: \"%s\" is not an identifier", name);
	x = lt_current(L);
	ci = lua_gettop(L);
	lt_push(L, tensor_param(x->c, name, x->next_slot++, s, n, t, luaL_optstring(L, 4, "CPU"), &e), ci, &e);
	return 1;
}

/* tensor.stack{t0, t1, ...}: Stack of the tensors promoted to one dtype (tinygrad's least_upper_dtype) */
static int
l_stack(lua_State *L)
{
	lua_settop(L, 1);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L), n, k;
	UOp *s[256];
	Err e = { "" };

	luaL_checktype(L, 1, LUA_TTABLE);
	n = (int)luaL_len(L, 1);
	if (n < 1 || n > 256)
		return luaL_error(L, "tensor.stack: 1 to 256 tensors, got %d", n);
	for (k = 0; k < n; k++) {
		lua_geti(L, 1, k + 1);
		s[k] = lt_in_ctx(L, lua_gettop(L), x->c);
		lua_pop(L, 1);
	}
	lt_push(L, tensor_stack_dim(x->c, s, n, 0, &e), ci, &e);   /* dtypes promoted, shapes checked */
	return 1;
}

/*
** tensor.fn(f): the spec's @function. Calling the result with tensors traces f
** on PARAM placeholders of the same shapes and dtypes (each call traces again;
** hash-consing makes equal traces one body node), wraps the body in Function(Tuple(body), args...) and returns GetTuple(k) for
** each result.
*/
static int
fn_call(lua_State *L)
{
	int nargs = lua_gettop(L), k, nres, ci;
	TCtxBox *x = lt_current(L);
	UOp *args[64], *params[64], *body[16], *f;
	Err e = { "" };
	Buf sig;

	ci = lua_gettop(L);
	if (nargs > 64)
		return luaL_error(L, "function: at most 64 arguments");
	buf_init(&sig);
	for (k = 0; k < nargs; k++) {
		args[k] = lt_in_ctx(L, k + 1, x->c);
		emit(&sig, "%s", dtype_name(args[k]->dtype));
		uop_shape_str(&sig, args[k]->shape, args[k]->ndim);
	}
	/* params by slot k: the body is the same graph for every call of this signature */
	for (k = 0; k < nargs; k++) {
		char nm[16];

		snprintf(nm, sizeof nm, "arg%d", k);
		if (!(params[k] = tensor_param(x->c, nm, k, args[k]->shape, args[k]->ndim, (DType)args[k]->dtype,
		                               args[k]->device, &e))) {
			buf_free(&sig);
			return luaL_error(L, "%s", e.msg);
		}
	}
	buf_free(&sig);
	lua_pushvalue(L, lua_upvalueindex(1));
	for (k = 0; k < nargs; k++)
		lt_push(L, params[k], ci, NULL);
	lua_call(L, nargs, LUA_MULTRET);
	nres = lua_gettop(L) - ci;
	if (nres < 1 || nres > 16)
		return luaL_error(L, "function: the traced function returned %d values (1 to 16 tensors)", nres);
	for (k = 0; k < nres; k++) {
		if (!luaL_testudata(L, ci + 1 + k, TENSOR))
			return luaL_error(L, "function: result %d is not a tensor", k + 1);
		body[k] = lt_in_ctx(L, ci + 1 + k, x->c);
	}
	x = lt_current(L);
	if (!(f = tensor_function(x->c, body, nres, args, nargs, &e)))
		return luaL_error(L, "%s", e.msg);
	lua_settop(L, ci);
	for (k = 0; k < nres; k++)
		lt_push(L, tensor_gettuple(x->c, f, k, &e), ci, &e);
	return nres;
}

static int
l_fn(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TFUNCTION);
	lua_settop(L, 1);
	lua_pushcclosure(L, fn_call, 1);
	return 1;
}

/* tensor.options{mem_limit = bytes} */
static int
l_options(lua_State *L)
{
	static const TesselOpt keys[] = { { "mem_limit", "integer" }, { NULL, NULL } };
	lua_Integer v = (lua_Integer)mem_limit(L);

	if (tessel_checkopts(L, 1, "tensor.options", keys)) {
		lua_getfield(L, 1, "mem_limit");
		if (!lua_isnil(L, -1)) {
			v = lua_tointeger(L, -1);
			if (v < 0)
				return luaL_error(L, "tensor.options: mem_limit must be >= 0 (0: the tensor_bytes "
				                  "limit, 4 GiB unless tessel.limits changed it)");
			lua_pushinteger(L, v);
			lua_setfield(L, LUA_REGISTRYINDEX, OPTKEY);
		}
		lua_pop(L, 1);
	}
	lua_createtable(L, 0, 1);
	lua_pushinteger(L, v ? v : (lua_Integer)4 << 30);
	lua_setfield(L, -2, "mem_limit");
	return 1;
}

/* t:shards(): the per-device pieces of a tensor on a device tuple (sharded on its axis or replicated) */
static int
l_shards(lua_State *L)
{
	LTensor *t = lt_check(L, 1);
	int n = uop_ndev(t->u->device), k, ax = t->u->axis, ci;
	TCtxBox *x;
	Err e = { "" };
	UOp *u;

	x = lt_current(L);
	u = lt_in_ctx(L, 1, x->c);
	ci = lua_gettop(L);
	lua_createtable(L, n, 0);
	for (k = 0; k < (n ? n : 1); k++) {
		UOp *p = u;

		if (ax >= 0) {
			int64_t b[T_MAXDIM], en[T_MAXDIM];
			int i;

			for (i = 0; i < u->ndim; i++) {
				b[i] = 0;
				en[i] = u->shape[i];
			}
			b[ax] = u->shape[ax] / n * k;
			en[ax] = u->shape[ax] / n * (k + 1);
			p = tensor_shrink(x->c, u, b, en, u->ndim, &e);
		}
		if (p && n > 1) {   /* the piece on its own device */
			char nm[64];

			uop_devname(u->device, k, nm, sizeof nm);
			p = tensor_copy(x->c, p, nm, &e);
		}
		lt_push(L, p, ci, &e);
		lua_rawseti(L, -2, k + 1);
	}
	return 1;
}

typedef HelpReg Fn;

static const Fn funcs[] = {
	{ "from", l_from, "a tensor from nested Lua tables\n"
	  "tensor.from({{1, 2}, {3, 4}} [, dtype]) -> int32 (2, 2); floats give float32, booleans bool.\n"
	  "tensor.from(3.5) is a scalar of shape (). The values become a Binary node of the graph." },
	{ "zeros", l_zeros, "zeros of a shape\ntensor.zeros({2, 3} [, dtype | {dtype =}]) or tensor.zeros(2, 3) -> float32 (2, 3)" },
	{ "ones", l_ones, "ones of a shape\ntensor.ones({2, 3} [, dtype | {dtype =}]) -> a constant reshaped and expanded" },
	{ "full", l_full, "a constant of a shape\ntensor.full({2, 3}, value [, dtype])" },
	{ "arange", l_arange, "start, start + step, ... below stop (tinygrad's arange)\n"
	  "tensor.arange(stop [, dtype]) or tensor.arange(start, stop [, step] [, dtype]): integers give\n"
	  "int32 (int64 when the range needs it), a float argument float32: tensor.arange(0.0, 1.0, 0.25).\n"
	  "ceil((stop - start) / step) values, built as arange(n) * step + start; arange(n) from the\n"
	  "primitives in mixed radix (stack, reshape, expand, mul, add): linear work." },
	{ "rand", l_rand, "uniform random numbers in [0, 1)\n"
	  "tensor.rand({4, 4}, {seed = 1, dtype = \"float32\"}): element i is the top 23 bits of\n"
	  "threefry2x32_20(i, seed) as a float32 mantissa in [1, 2), minus 1; reproducible for a seed." },
	{ "param", l_param, "a symbolic input bound when realized\n"
	  "x = tensor.param(\"x\", {2, 3} [, dtype [, device]]); (x * 2):realize{x = tensor.ones{2, 3}}" },
	{ "stack", l_stack, "join tensors of one shape along a new leading axis\ntensor.stack{a, b, c}" },
	{ "fn", l_fn, "the spec's @function: graph capture by tracing\n"
	  "f = tensor.fn(function(a, b) return a + b end); y = f(x1, x2) builds\n"
	  "GetTuple(Function(Tuple(body), x1, x2), 0) where body uses Param 0 and 1." },
	{ "maximum", l_maximum, "elementwise max\ntensor.maximum(a, b)" },
	{ "minimum", l_minimum, "elementwise min: -max(-a, -b), for integers max(a ^ k, b ^ k) ^ k (k all ones)\n"
	  "tensor.minimum(a, b)" },
	{ "options", l_options, "evaluator options\n"
	  "tensor.options{mem_limit = bytes} sets the memory guard (default 4 GiB: a graph whose\n"
	  "buffers would pass it is refused, naming its largest buffer); returns the options." },
	{ NULL, NULL, NULL }
};

static const Fn meths[] = {
	{ "reshape", l_reshape, "reshape in row-major order\nt:reshape{2, -1} or t:reshape(2, -1)" },
	{ "expand", l_expand, "broadcast size-1 axes\nt:expand{4, 3} (a rank increase adds leading axes)" },
	{ "permute", l_permute, "reorder axes (0-based)\nt:permute{1, 0}" },
	{ "transpose", l_transpose, "swap two axes\nt:transpose([a, b]) (default the last two)" },
	{ "flip", l_flip, "reverse axes\nt:flip{0} or t:flip(0, 1)" },
	{ "pad", l_pad, "pad an axis before and after, with zeros or a value\n"
	  "t:pad({{before, after}, false, ...} [, value]) (false: leave the axis). Negative amounts\n"
	  "shrink, as tinygrad's: t:pad({{-1, 2}}, -math.huge). A value is where(pad(ones), padded, value)." },
	{ "shrink", l_shrink, "keep a range per axis\nt:shrink{{begin, end}, false, ...}" },
	{ "index", l_index, "index from the left\nt:index(1) drops axis 0; t:index(idx) with an int tensor of shape (k,)\n"
	  "makes it k (gather). t[i] is t:index(i) (0-based, as in tinygrad)." },
	{ "sum", l_sum, "sum over axes\nt:sum([axis | {axes}] [, keepdim]); no axis: all. Floats accumulate in float64;\n"
	  "bool, int8 and int16 sum to int32, uint8 and uint16 to uint32 (tinygrad's sum_acc_dtype)." },
	{ "max", l_max, "max over axes\nt:max([axis | {axes}] [, keepdim])" },
	{ "min", l_min, "min over axes: -max(-t) for floats, ~max(~t) for integers\nt:min([axis | {axes}] [, keepdim])" },
	{ "prod", l_prod, "product over axes\nt:prod([axis | {axes}] [, keepdim])" },
	{ "mean", l_mean, "mean over axes\nt:mean([axis | {axes}] [, keepdim]) (integers give float32)" },
	{ "cumsum", l_cumsum, "cumulative sum along an axis (the spec's prefix_sum)\n"
	  "t:cumsum([axis]) (default 0); in sum's dtype (int8 gives int32); two stages past 512 elements" },
	{ "matmul", l_matmul, "matrix product (the spec's gemm, numpy's rules)\n"
	  "a:matmul(b) = (a:reshape{..., M, K, 1} * b:reshape{..., 1, K, N}):sum(-2): batch axes broadcast;\n"
	  "a 1-D operand is a row (a) or a column (b) and its axis leaves the result" },
	{ "gather", l_gather, "gather along an axis (tinygrad's gather)\n"
	  "t:gather(dim, index): out has index's shape, out[..., i, ...] = t[..., index[..., i, ...], ...]\n"
	  "along dim; index.shape[k] <= t.shape[k] elsewhere; an index outside the axis gives 0" },
	{ "scatter_add", l_scatter_add, "add src into t at indices along an axis (torch's scatter_add)\n"
	  "t:scatter_add(dim, index, src): out = t, out[..., index[..., i, ...], ...] += src[..., i, ...];\n"
	  "the spec's scatter_add on any axis; sums in sum's dtype (int8 gives int32)" },
	{ "exp", l_exp, "e^x = exp2(x * log2 e)\nt:exp()" },
	{ "exp2", l_exp2, "2^x\nt:exp2()" },
	{ "log", l_log, "ln x = log2(x) * ln 2\nt:log()" },
	{ "log2", l_log2, "log2 x\nt:log2()" },
	{ "sin", l_sin, "sin x\nt:sin()" },
	{ "cos", l_cos, "cos x = sin(pi/2 - x)\nt:cos()" },
	{ "sqrt", l_sqrt, "square root\nt:sqrt()" },
	{ "reciprocal", l_recip, "1/x\nt:reciprocal()" },
	{ "trunc", l_trunc, "round toward zero\nt:trunc()" },
	{ "relu", l_relu, "max(x, 0)\nt:relu()" },
	{ "sigmoid", l_sigmoid, "1 / (1 + exp(-x))\nt:sigmoid()" },
	{ "tanh", l_tanh, "2 sigmoid(2x) - 1\nt:tanh()" },
	{ "softmax", l_softmax, "exp(x - max) / sum\nt:softmax([axis]) (default the last)" },
	{ "log_softmax", l_log_softmax, "x - max - log(sum(exp(x - max)))\nt:log_softmax([axis])" },
	{ "cast", l_cast, "convert to a dtype\nt:cast(\"float16\") (floats round to nearest even; integers wrap)" },
	{ "bitcast", l_bitcast, "reinterpret the bytes\nt:bitcast(\"uint32\")" },
	{ "where", l_where, "select\ncond:where(a, b): a where cond is true, else b" },
	{ "lt", l_lt, "a < b (bool)\na:lt(b)" },
	{ "gt", l_gt, "a > b = b < a\na:gt(b)" },
	{ "le", l_le, "a <= b = (b < a) != true\na:le(b)" },
	{ "ge", l_ge, "a >= b = (a < b) != true\na:ge(b)" },
	{ "eq", l_eq, "a == b = (a != b) != true\na:eq(b)" },
	{ "ne", l_ne, "a != b\na:ne(b)" },
	{ "maximum", l_maximum, "elementwise max\na:maximum(b)" },
	{ "minimum", l_minimum, "elementwise min (tinygrad's: no overflow for integers)\na:minimum(b)" },
	{ "contiguous", l_contiguous, "force contiguous memory\nt:contiguous()" },
	{ "detach", l_detach, "stop gradients (identity on data)\nt:detach()" },
	{ "named", l_named, "name the node for later schedules\nt:named(\"s_max\")" },
	{ "copy", l_copy, "copy to a device or device tuple\nt:copy(\"CPU:1\"), t:copy{\"CPU:0\", \"CPU:1\"} or t:copy(4) (CPU:0..3):\n"
	  "a tuple shards axis 0 over the devices (simulated on this CPU)" },
	{ "replicated", l_replicated, "declare the shards along the shard axis equal and drop the axis\n"
	  "t:replicated(0); realizing checks that every device holds the same values" },
	{ "shards", l_shards, "the per-device pieces of a sharded tensor\nt:shards() -> {t0, t1, ...}" },
	{ "realize", l_realize, "evaluate now\nt:realize([bindings]) -> a tensor holding the values (bindings: {name = tensor} for params)" },
	{ "tolist", l_tolist, "the values as nested Lua tables\nt:tolist([bindings])" },
	{ "item", l_item, "the value of a one-element tensor\nt:item()" },
	{ "range", l_range, "the derived min_max\nt:range() -> lo, hi (floats: the enclosing integer interval)" },
	{ "graph", l_graph, "the UOp DAG\nt:graph(): print it for a listing; show(g) or viz.render(g, \"g.svg\") draws it" },
	{ NULL, NULL, NULL }
};

static const luaL_Reg tensor_meta[] = {
	{ "__add", m_add }, { "__sub", m_sub }, { "__mul", m_mul }, { "__div", m_div },
	{ "__idiv", m_idiv }, { "__mod", m_mod }, { "__pow", m_pow }, { "__unm", m_unm },
	{ "__band", m_band }, { "__bor", m_bor }, { "__bxor", m_bxor }, { "__shl", m_shl },
	{ "__shr", m_shr }, { "__index", m_index }, { "__tostring", l_tostring },
	{ "__show", l_show },   /* show(t) prints the values; show(t:graph()) draws the DAG */
	{ NULL, NULL }
};

/*
** The spec's multi-device collectives (tinygrad-spec.tex, "Multi-Device
** Collectives"), composed from the primitives exactly as the spec writes them,
** so that their graphs are the spec's graphs. n is the number of devices of D;
** T has shape (s,) (broadcast, scatter) or is sharded over D (the others).
*/
static const char collectives[] =
	"local tensor = ...\n"
	"local getinfo = debug and debug.getinfo\n"
	"-- raise msg at the user's call: the first frame outside this chunk\n"
	"local function fail(msg)\n"
	"  local level = 2\n"
	"  while getinfo do\n"
	"    local f = getinfo(level, 'S')\n"
	"    if not f or f.source ~= '=tensor.collectives' then break end\n"
	"    level = level + 1\n"
	"  end\n"
	"  error(msg, level)\n"
	"end\n"
	"local function devices(D, op)\n"
	"  if math.type(D) == 'integer' and D >= 1 then\n"
	"    local t = {}\n"
	"    for i = 0, D - 1 do t[#t + 1] = 'CPU:' .. i end\n"
	"    return t\n"
	"  end\n"
	"  if type(D) ~= 'table' or #D < 1 then\n"
	"    fail(op .. ': D is a device count or a list of device names')\n"
	"  end\n"
	"  return D\n"
	"end\n"
	"local function flat(T, op)\n"
	"  if type(T) ~= 'userdata' or math.type(T.ndim) ~= 'integer' then\n"
	"    fail(op .. ': T is a ' .. type(T) .. ', not a tensor')\n"
	"  end\n"
	"  if T.ndim ~= 1 then\n"
	"    fail(op .. ': T has shape (' .. table.concat(T.shape, ', ') .. '); the collectives take a vector (s,)')\n"
	"  end\n"
	"  return T.shape[1]\n"
	"end\n"
	"local function sharded(T, op)\n"
	"  flat(T, op)\n"
	"  local D = T.device\n"
	"  if type(D) ~= 'table' or T.axis ~= 0 then\n"
	"    fail(op .. ': T is not sharded over a device tuple (t:copy(D) or tensor.scatter(t, D) shards it)')\n"
	"  end\n"
	"  return D, #D, flat(T, op)\n"
	"end\n"
	"function tensor.broadcast(T, D)\n"
	"  D = devices(D, 'tensor.broadcast')\n"
	"  local n, s = #D, flat(T, 'tensor.broadcast')\n"
	"  return T:reshape{1, s}:expand{n, s}:copy(D):replicated(0)\n"
	"end\n"
	"function tensor.scatter(T, D)\n"
	"  D = devices(D, 'tensor.scatter')\n"
	"  flat(T, 'tensor.scatter')\n"
	"  return T:copy(D)\n"
	"end\n"
	"function tensor.gather(T)\n"
	"  local D = sharded(T, 'tensor.gather')\n"
	"  return T:copy(D[1])\n"
	"end\n"
	"function tensor.reduce(T)\n"
	"  local _, n, ns = sharded(T, 'tensor.reduce')\n"
	"  return tensor.gather(T):reshape{n, ns // n}:sum(0)\n"
	"end\n"
	"function tensor.allgather(T)\n"
	"  local D, n, ns = sharded(T, 'tensor.allgather')\n"
	"  return T:reshape{1, ns}:expand{n, ns}:copy(D):replicated(0)\n"
	"end\n"
	"function tensor.reduce_scatter(T)\n"
	"  local D, n, ns = sharded(T, 'tensor.reduce_scatter')\n"
	"  local s = ns // n\n"
	"  if s % n ~= 0 then\n"
	"    fail(('tensor.reduce_scatter: each device holds %d elements, not a multiple of the %d devices'):format(s, n))\n"
	"  end\n"
	"  return T:reshape{n, n, s // n}:permute{1, 0, 2}:copy(D):sum(1):reshape{s}\n"
	"end\n"
	"function tensor.allreduce(T)\n"
	"  sharded(T, 'tensor.allreduce')\n"
	"  return tensor.allgather(tensor.reduce_scatter(T))\n"
	"end\n";

static const char *const collective_help[][2] = {
	{ "broadcast", "the spec's broadcast: T (s,) replicated on every device of D\n"
	  "tensor.broadcast(T, D) = T:reshape{1, s}:expand{n, s}:copy(D):replicated(0); D is a list\n"
	  "of device names or a count n (CPU:0..n-1). Result (s,) on D, no shard axis." },
	{ "scatter", "the spec's scatter: T (n*s,) split into n shards, one per device\n"
	  "tensor.scatter(T, D) = T:copy(D): (n*s,) on D, shard axis 0 (device i holds s elements)." },
	{ "gather", "the spec's gather: all shards of T onto the first device\n"
	  "tensor.gather(T) = T:copy(D[1]) for T sharded over D: (n*s,) on D[1]." },
	{ "reduce", "the spec's reduce: the elementwise sum of the shards, on the first device\n"
	  "tensor.reduce(T) = tensor.gather(T):reshape{n, s}:sum(0): (s,) on D[1]." },
	{ "allgather", "the spec's allgather: every shard of T, replicated on every device\n"
	  "tensor.allgather(T) = T:reshape{1, n*s}:expand{n, n*s}:copy(D):replicated(0): (n*s,) on D." },
	{ "reduce_scatter", "the spec's reduce_scatter: the sum of the shards, scattered over the devices\n"
	  "tensor.reduce_scatter(T) = T:reshape{n, n, s//n}:permute{1, 0, 2}:copy(D):sum(1):reshape{s}:\n"
	  "(s,) on D, shard axis 0; s must be a multiple of n." },
	{ "allreduce", "the spec's allreduce: the sum of the shards on every device\n"
	  "tensor.allreduce(T) = tensor.allgather(tensor.reduce_scatter(T)): (s,) on D, no shard axis." },
};

/* Run the collectives chunk on the tensor table at the top of the stack. */
static void
open_collectives(lua_State *L)
{
	size_t i;

	if (luaL_loadbuffer(L, collectives, sizeof collectives - 1, "=tensor.collectives") != LUA_OK)
		lua_error(L);
	lua_pushvalue(L, -2);
	lua_call(L, 1, 0);
	for (i = 0; i < sizeof collective_help / sizeof collective_help[0]; i++) {
		const char *name;

		lua_getfield(L, -1, collective_help[i][0]);
		name = lua_pushfstring(L, "tensor.%s", collective_help[i][0]);
		help_add(L, -2, name, collective_help[i][1]);
		lua_pop(L, 2);
	}
}

int
luaopen_tessel_tensor(lua_State *L)
{

	luaL_newmetatable(L, TCTX);
	lua_pushcfunction(L, ctx_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);

	luaL_newmetatable(L, GRAPH);
	lua_pushcfunction(L, g_scene);
	lua_setfield(L, -2, "__scene");
	lua_pushcfunction(L, g_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);

	lua_newtable(L);  /* tensor */
	help_setfuncs(L, funcs, "tensor.");
	open_collectives(L);
	help_add(L, -1, "tensor",
	         "tinygrad-style tensor programs on the UOp IR, evaluated on the CPU\n"
	         "  a = tensor.from{{1, 2}, {3, 4}}; b = tensor.rand({2, 2}, {seed = 1})\n"
	         "  c = (a:reshape{2, 2, 1} * b:reshape{1, 2, 2}):sum(1)   -- = a:matmul(b)\n"
	         "  print(c); c:tolist(); c:graph(); show(c:graph())\n"
	         "Methods: help(tensor.methods). Multi-device: t:copy(4), t:replicated(0), the spec's\n"
	         "collectives tensor.broadcast, scatter, gather, reduce, allgather, reduce_scatter, allreduce.");
	luaL_newmetatable(L, TENSOR);
	luaL_setfuncs(L, tensor_meta, 0);
	lua_newtable(L);
	help_setfuncs(L, meths, "Tensor:");
	help_add(L, -1, "tensor.methods",
	         "the methods of a tensor (t:reshape{2, 3}, t:sum(1), ...), named as tinygrad names them\n"
	         "Fields: t.shape, t.dtype, t.device, t.addrspace, t.ndim, t.numel, t.axis, t.op, t.name.");
	lua_pushvalue(L, -1);
	lua_setfield(L, -4, "methods");
	lua_setfield(L, -2, "methods");
	lua_pop(L, 1);
	return 1;
}

/* ---- for the other bindings (tessel.h) ---- */

const struct UOp *
tessel_testtensor(lua_State *L, int i)
{
	LTensor *t = luaL_testudata(L, i, TENSOR);

	return t ? t->u : NULL;
}

void
tessel_realize(lua_State *L, int i, int binds, struct TBuf *b)
{
	realize(L, i, binds, b);
}

void
tessel_pushtbuf(lua_State *L, const struct TBuf *b)
{
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *u = from_buf(x->c, b, &e);

	lt_push(L, u, ci, &e);
	lua_remove(L, ci);
}

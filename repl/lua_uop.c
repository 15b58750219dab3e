/* lua_uop.c - the `uop` Lua table: symbolic index expressions (UOps), their simplification and printing. */
#include <lauxlib.h>
#include <lua.h>
#include <string.h>

#include "../interp/ir/uop.h"
#include "../layout/lower.h"
#include "../util/limits.h"
#include "../viz/viz.h"
#include "help.h"
#include "tessel.h"

#define EXPR "uop.Expr"
#define CTX  "uop.Context"
#define CURKEY "tessel.uop.current"

/*
** Who owns the arenas. Expressions live in a UCtx (an arena with its
** hash-consing table). A context is a userdata (CTX) whose __gc frees it;
** every expression userdata keeps its context alive through its user value.
** New results are always built in the *current* context, kept in the
** registry; operands from older contexts are copied into it (uop_import).
** When the current context holds more than GENERATION nodes, the next
** operation starts a fresh one and forgets the old: the old arena is freed
** by the collector as soon as no expression built in it is reachable.
** So a REPL session that runs for hours holds its live expressions plus at
** most one generation of garbage per context still referenced.
*/
enum { GENERATION = 1 << 16 };

typedef struct LCtx {
	UCtx *c;
} LCtx;

typedef struct LExpr {
	UOp *u;
} LExpr;

static int
ctx_gc(lua_State *L)
{
	LCtx *x = luaL_checkudata(L, 1, CTX);

	uctx_free(x->c);
	x->c = NULL;
	return 0;
}

/* Push the current context and return it; start a new one when it is full. */
static UCtx *
current(lua_State *L)
{
	LCtx *x;

	if (lua_getfield(L, LUA_REGISTRYINDEX, CURKEY) == LUA_TUSERDATA) {
		x = lua_touserdata(L, -1);
		if (x->c && uctx_nodes(x->c) < GENERATION)
			return x->c;
	}
	lua_pop(L, 1);
	x = lua_newuserdatauv(L, sizeof *x, 0);
	x->c = NULL;   /* safe for __gc before the arena exists */
	luaL_setmetatable(L, CTX);
	if (!(x->c = uctx_new()))
		luaL_error(L, "uop: out of memory");
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, CURKEY);
	return x->c;
}

/* Push an expression of the context at stack index ci. */
static void
push(lua_State *L, UOp *u, int ci)
{
	LExpr *e;

	ci = lua_absindex(L, ci);
	if (!u)
		luaL_error(L, "uop: out of memory, or the expression nests deeper than %d", UOP_MAXDEPTH);
	e = lua_newuserdatauv(L, sizeof *e, 1);
	e->u = u;
	luaL_setmetatable(L, EXPR);
	lua_pushvalue(L, ci);
	lua_setiuservalue(L, -2, 1);
}

static LExpr *
toexpr(lua_State *L, int i)
{
	return luaL_testudata(L, i, EXPR);
}

/* The context of the expression at i (pushed) compared with c. */
static int
same_ctx(lua_State *L, int i, UCtx *c)
{
	LCtx *x;
	int same;

	lua_getiuservalue(L, i, 1);
	x = lua_touserdata(L, -1);
	same = x && x->c == c;
	lua_pop(L, 1);
	return same;
}

/*
** An operand in context c: an expression (copied into c when it was built in
** another), a Lua integer (an index constant) or a boolean. what names the
** operation for the error message.
*/
static UOp *
operand(lua_State *L, int i, UCtx *c, const char *what)
{
	LExpr *e = toexpr(L, i);
	lua_Integer v;
	UOp *u;

	if (e) {
		u = same_ctx(L, i, c) ? e->u : uop_import(c, e->u);
		if (!u)
			luaL_error(L, "%s: out of memory", what);
		return u;
	}
	switch (lua_type(L, i)) {
	case LUA_TNUMBER:
		if (!lua_isinteger(L, i)) {
			lua_Number n = lua_tonumber(L, i);
			if (n != n || n < -9.2233720368547758e18 || n >= 9.2233720368547758e18
			|| (lua_Number)(lua_Integer)n != n)
				luaL_error(L, "%s: %s is not an integer (index expressions are integer)",
				           what, lua_tostring(L, i));
			v = (lua_Integer)n;
		} else
			v = lua_tointeger(L, i);
		return uop_int(c, v);
	case LUA_TBOOLEAN:
		return uop_const(c, DT_BOOL, lua_toboolean(L, i));
	default:
		luaL_error(L, "%s: expected an expression or an integer, got %s", what, luaL_typename(L, i));
	}
	return NULL;
}

static LExpr *
check(lua_State *L, int i)
{
	return luaL_checkudata(L, i, EXPR);
}

/* Binary operators; either operand may be a plain Lua value. */
static int
binop(lua_State *L, Op op, const char *what)
{
	UCtx *c = current(L);
	int ci = lua_gettop(L);
	UOp *a = operand(L, 1, c, what), *b = operand(L, 2, c, what);

	/* a divisor that can only be 0 is a mistake, not an expression to keep */
	if ((op == OP_IDIV || op == OP_MOD) && b->vmin == 0 && b->vmax == 0)
		luaL_error(L, "%s: division by zero (the divisor %s is always 0)", what,
		           luaL_tolstring(L, 2, NULL));
	if ((op == OP_SHL || op == OP_SHR) && (b->vmin > 63 || b->vmax < 0))
		luaL_error(L, "%s: shift by %s is outside 0..63 for every value", what,
		           luaL_tolstring(L, 2, NULL));
	push(L, uop_alu(c, op, a, b), ci);
	return 1;
}

static int m_add(lua_State *L) { return binop(L, OP_ADD, "uop +"); }
static int m_sub(lua_State *L) { return binop(L, OP_SUB, "uop -"); }
static int m_mul(lua_State *L) { return binop(L, OP_MUL, "uop *"); }
static int m_idiv(lua_State *L) { return binop(L, OP_IDIV, "uop //"); }
static int m_mod(lua_State *L) { return binop(L, OP_MOD, "uop %"); }
static int m_band(lua_State *L) { return binop(L, OP_AND, "uop &"); }
static int m_bor(lua_State *L) { return binop(L, OP_OR, "uop |"); }
static int m_bxor(lua_State *L) { return binop(L, OP_XOR, "uop ~"); }
static int m_shl(lua_State *L) { return binop(L, OP_SHL, "uop <<"); }
static int m_shr(lua_State *L) { return binop(L, OP_SHR, "uop >>"); }
static int l_min(lua_State *L) { return binop(L, OP_MIN, "uop.min"); }
static int l_max(lua_State *L) { return binop(L, OP_MAX, "uop.max"); }
static int l_lt(lua_State *L) { return binop(L, OP_CMPLT, "uop.lt"); }
static int l_ne(lua_State *L) { return binop(L, OP_CMPNE, "uop.ne"); }
static int l_eq(lua_State *L) { return binop(L, OP_CMPEQ, "uop.eq"); }

static int
l_gt(lua_State *L)
{
	lua_settop(L, 2);
	lua_insert(L, 1);
	return binop(L, OP_CMPLT, "uop.gt");
}

/* a <= b is a < b + 1 on integers (b + 1 folds for constants). */
static int
cmp_le(lua_State *L, int swap, const char *what)
{
	UCtx *c;
	UOp *a, *b;
	int ci;

	lua_settop(L, 2);
	if (swap)
		lua_insert(L, 1);
	c = current(L);
	ci = lua_gettop(L);
	a = operand(L, 1, c, what);
	b = operand(L, 2, c, what);
	if (b->vmax == INT64_MAX)
		luaL_error(L, "%s: the right side may be the largest integer; write uop.lt instead", what);
	push(L, uop_alu(c, OP_CMPLT, a, uop_add(c, b, uop_int(c, 1))), ci);
	return 1;
}

static int l_le(lua_State *L) { return cmp_le(L, 0, "uop.le"); }
static int l_ge(lua_State *L) { return cmp_le(L, 1, "uop.ge"); }

static int
m_unm(lua_State *L)
{
	UCtx *c = current(L);
	int ci = lua_gettop(L);

	push(L, uop_neg(c, operand(L, 1, c, "uop unary -")), ci);
	return 1;
}

static int
m_div(lua_State *L)
{
	return luaL_error(L, "uop /: index expressions are integer; use // (floor division)");
}

static int
m_cmp(lua_State *L)
{
	return luaL_error(L, "uop <, <=: Lua turns comparisons into booleans; "
	                  "use uop.lt(a, b), uop.le, uop.gt, uop.ge, uop.eq, uop.ne");
}

static int
l_where(lua_State *L)
{
	UCtx *c = current(L);
	int ci = lua_gettop(L);
	UOp *k = operand(L, 1, c, "uop.where"), *a = operand(L, 2, c, "uop.where");
	UOp *b = operand(L, 3, c, "uop.where");

	push(L, uop_where(c, k, a, b), ci);
	return 1;
}

static int
l_var(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	lua_Integer lo = luaL_checkinteger(L, 2), hi;
	UCtx *c;

	if (lua_isnoneornil(L, 3)) {
		/* uop.var(name, n): [0, n) */
		if (lo < 1)
			return luaL_error(L, "uop.var: %s has an empty range [0, %I)", name, lo);
		hi = lo - 1;
		lo = 0;
	} else
		hi = luaL_checkinteger(L, 3);

	if (!uop_valid_name(name))
		return luaL_error(L, "uop.var: '%s' is not a name (letters, digits, _; at most 63)", name);
	if (lo > hi)
		return luaL_error(L, "uop.var: %s has an empty range [%I, %I]", name, lo, hi);
	c = current(L);
	push(L, uop_var(c, name, lo, hi), -1);
	return 1;
}

static int
l_const(lua_State *L)
{
	UCtx *c;
	DType t = DT_INDEX;
	int64_t lo, hi;
	lua_Integer v;

	if (lua_type(L, 1) == LUA_TBOOLEAN) {
		v = lua_toboolean(L, 1);
		t = DT_BOOL;
	} else
		v = luaL_checkinteger(L, 1);
	if (!lua_isnoneornil(L, 2) && dtype_parse(luaL_checkstring(L, 2), &t) < 0)
		return luaL_error(L, "uop.const: unknown dtype '%s' (bool, int32, int64, index)", lua_tostring(L, 2));
	dtype_range(t, &lo, &hi);
	if (t == DT_VOID || v < lo || v > hi)
		return luaL_error(L, "uop.const: %I does not fit %s", v, dtype_name(t));
	c = current(L);
	push(L, uop_const(c, t, v), -1);
	return 1;
}

static int
l_cast(lua_State *L)
{
	DType t;
	UCtx *c;
	UOp *a;

	if (dtype_parse(luaL_checkstring(L, 2), &t) < 0 || t == DT_VOID)
		return luaL_error(L, "uop.cast: unknown dtype '%s' (bool, int32, int64, index)", lua_tostring(L, 2));
	c = current(L);
	a = operand(L, 1, c, "uop.cast");
	push(L, uop_cast(c, t, a), -1);
	return 1;
}

/* Run a transform (simplify, normalize, expand) in the current context. */
static int
transform(lua_State *L, int (*f)(UCtx *, UOp *, UOp **, Err *), const char *what)
{
	UCtx *c;
	UOp *u, *r;
	Err e;

	check(L, 1);
	lua_settop(L, 1);
	c = current(L);
	u = operand(L, 1, c, what);
	if (f(c, u, &r, &e) < 0)
		return luaL_error(L, "%s", e.msg);
	push(L, r, 2);
	return 1;
}

static int l_simplify(lua_State *L) { return transform(L, uop_simplify, "uop.simplify"); }
static int l_normalize(lua_State *L) { return transform(L, uop_normalize, "uop.normalize"); }
static int l_expand(lua_State *L) { return transform(L, uop_expand, "uop.expand"); }

static int
l_ops(lua_State *L)
{
	LExpr *e = check(L, 1);

	lua_pushinteger(L, uop_ops(e->u));
	lua_pushinteger(L, uop_ops_dag(e->u));
	return 2;
}

static int
print_as(lua_State *L, Dialect d)
{
	LExpr *e = check(L, 1);
	Buf b;
	Err err;

	buf_init(&b);
	if (uop_print_code(&b, e->u, d, &err) < 0 && d != D_INFIX) {
		buf_free(&b);
		return luaL_error(L, "%s", err.msg);
	}
	if (b.oom) {
		buf_free(&b);
		return luaL_error(L, "uop: out of memory");
	}
	lua_pushstring(L, b.s ? b.s : "");
	buf_free(&b);
	return 1;
}

static int l_c(lua_State *L) { return print_as(L, D_C); }
static int l_cuda(lua_State *L) { return print_as(L, D_CUDA); }
static int l_opencl(lua_State *L) { return print_as(L, D_OPENCL); }
static int l_python(lua_State *L) { return print_as(L, D_PYTHON); }
static int l_triton(lua_State *L) { return print_as(L, D_TRITON); }
static int l_lua(lua_State *L) { return print_as(L, D_LUA); }
static int l_tostring(lua_State *L) { return print_as(L, D_INFIX); }

static int
l_print(lua_State *L)
{
	Dialect d = D_INFIX;

	check(L, 1);
	if (!lua_isnoneornil(L, 2) && dialect_parse(luaL_checkstring(L, 2), &d) < 0)
		return luaL_error(L, "uop.print: unknown dialect '%s' (infix, c, cuda, opencl, python, "
		                  "triton, lua)", lua_tostring(L, 2));
	lua_settop(L, 1);
	return print_as(L, d);
}

/* uop.tree(e [, max_lines | {max_rows =}]); __show(e, opts, op) */
static int
l_tree(lua_State *L)
{
	static const TesselOpt keys[] = { { "max_rows", "integer" }, { NULL, NULL } };
	LExpr *e = check(L, 1);
	lua_Integer max = 200;
	Buf b;

	if (lua_type(L, 2) == LUA_TTABLE) {
		tessel_checkopts(L, 2, luaL_optstring(L, 3, "uop.tree"), keys);
		lua_getfield(L, 2, "max_rows");
		max = lua_isnil(L, -1) ? 200 : lua_tointeger(L, -1);   /* an integer: checked */
		lua_pop(L, 1);
	} else
		max = luaL_optinteger(L, 2, 200);
	buf_init(&b);
	uop_print_tree(&b, e->u, max < 1 ? 1 : max > 100000 ? 100000 : (int)max);
	lua_pushstring(L, b.s ? b.s : "");
	buf_free(&b);
	return 1;
}

static int
l_show(lua_State *L)
{
	lua_settop(L, 3);
	if (lua_type(L, 2) != LUA_TTABLE) {
		lua_pushinteger(L, 200);
		lua_replace(L, 2);
	}
	return l_tree(L);
}

/* The drawable protocol (tessel.h): the expression's DAG for viz.render and
** viz.dot; show keeps the indented tree of __show. */
static int
l_scene(lua_State *L)
{
	LExpr *x = check(L, 1);
	VizOpts o;
	Err e;

	tessel_vizopts(L, 2, 3, &o, NULL);
	if (uop_scene(tessel_toscene(L, 3), x->u, &o, &e) < 0)
		return luaL_error(L, "%s", e.msg);
	return 0;
}

/* e .. "text": the infix form, as tostring. */
static int
m_concat(lua_State *L)
{
	luaL_tolstring(L, 1, NULL);
	luaL_tolstring(L, 2, NULL);
	lua_concat(L, 2);
	return 1;
}

static int
l_range(lua_State *L)
{
	LExpr *e = check(L, 1);

	lua_pushinteger(L, e->u->vmin);
	lua_pushinteger(L, e->u->vmax);
	return 2;
}

static void
push_value(lua_State *L, const UOp *u, int64_t v)
{
	if (u->dtype == DT_BOOL)
		lua_pushboolean(L, v != 0);
	else
		lua_pushinteger(L, v);
}

/* Bindings from a table {name = integer}; names are the variables' names. */
static int
bindings(lua_State *L, int i, UBind *b, int max)
{
	int n = 0;

	if (lua_isnoneornil(L, i))
		return 0;
	luaL_checktype(L, i, LUA_TTABLE);
	lua_pushnil(L);
	while (lua_next(L, i)) {
		if (lua_type(L, -2) != LUA_TSTRING)
			luaL_error(L, "uop.eval: bindings are name = integer, got a %s key", luaL_typename(L, -2));
		if (!lua_isinteger(L, -1))
			luaL_error(L, "uop.eval: %s = %s is not an integer", lua_tostring(L, -2),
			           luaL_typename(L, -1));
		if (n == max)
			luaL_error(L, "uop.eval: more than %d bindings", max);
		b[n].name = lua_tostring(L, -2);   /* anchored by the table */
		b[n].value = lua_tointeger(L, -1);
		n++;
		lua_pop(L, 1);
	}
	return n;
}

static int
l_eval(lua_State *L)
{
	LExpr *e = check(L, 1);
	UBind b[64];
	int n = bindings(L, 2, b, 64);
	int64_t v;
	Err err;

	if (uop_eval(e->u, b, n, &v, &err) < 0)
		return luaL_error(L, "%s", err.msg);
	push_value(L, e->u, v);
	return 1;
}

static int
l_vars(lua_State *L)
{
	LExpr *e = check(L, 1);
	const UOp *v[256];
	int n = uop_vars(e->u, v, 256), i;

	if (n > 256)
		n = 256;
	lua_createtable(L, n, 0);
	for (i = 0; i < n; i++) {
		lua_createtable(L, 0, 3);
		lua_pushstring(L, v[i]->name);
		lua_setfield(L, -2, "name");
		lua_pushinteger(L, v[i]->arg[0]);
		lua_setfield(L, -2, "min");
		lua_pushinteger(L, v[i]->arg[1]);
		lua_setfield(L, -2, "max");
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static int
l_equivalent(lua_State *L)
{
	UCtx *c;
	UOp *a, *b;
	lua_Integer limit = luaL_optinteger(L, 3, limits_value(LIMIT_CHECK_ELEMS));
	UBind bind[16];
	int eq, n, i;
	Buf cex;
	Err e;

	lua_settop(L, 3);
	c = current(L);
	a = operand(L, 1, c, "uop.equivalent");
	b = operand(L, 2, c, "uop.equivalent");
	if (limit < 1)
		return luaL_error(L, "uop.equivalent: the limit must be positive");
	buf_init(&cex);
	if (uop_equivalent(a, b, limit, &eq, &cex, bind, &n, &e) < 0) {
		buf_free(&cex);
		return luaL_error(L, "%s", e.msg);
	}
	lua_pushboolean(L, eq);
	if (eq) {
		buf_free(&cex);
		return 1;
	}
	lua_pushstring(L, cex.s ? cex.s : "");
	buf_free(&cex);
	lua_createtable(L, 0, n);
	for (i = 0; i < n; i++) {
		lua_pushinteger(L, bind[i].value);
		lua_setfield(L, -2, bind[i].name);
	}
	return 3;
}

static int
l_stats(lua_State *L)
{
	UCtx *c = current(L);

	lua_pushinteger(L, (lua_Integer)uctx_nodes(c));
	lua_pushinteger(L, (lua_Integer)uctx_bytes(c));
	return 2;
}

/* Structural equality: in one context (after copying, which is linear in the
** DAG) equal structure is the same pointer. */
static int
m_eq(lua_State *L)
{
	LExpr *a = toexpr(L, 1), *b = toexpr(L, 2);
	UCtx *c;

	if (!a || !b) {
		lua_pushboolean(L, 0);
		return 1;
	}
	c = current(L);
	lua_pushboolean(L, operand(L, 1, c, "uop ==") == operand(L, 2, c, "uop =="));
	return 1;
}

static int
m_call(lua_State *L)
{
	return l_eval(L);
}

/* Fields: e.op, e.dtype, e.value (constants), e.name (variables), e.src. */
static int
m_index(lua_State *L)
{
	LExpr *e = check(L, 1);
	const char *k = luaL_checkstring(L, 2);
	int i;

	if (strcmp(k, "op") == 0)
		lua_pushstring(L, uop_info[e->u->op].name);
	else if (strcmp(k, "dtype") == 0)
		lua_pushstring(L, dtype_name((DType)e->u->dtype));
	else if (strcmp(k, "value") == 0 && e->u->op == OP_CONST)
		push_value(L, e->u, e->u->arg[0]);
	else if (strcmp(k, "name") == 0 && e->u->op == OP_VAR)
		lua_pushstring(L, e->u->name);
	else if (strcmp(k, "src") == 0) {
		lua_createtable(L, e->u->nsrc, 0);
		lua_getiuservalue(L, 1, 1);
		for (i = 0; i < e->u->nsrc; i++) {
			push(L, e->u->src[i], -1);
			lua_rawseti(L, -3, i + 1);
		}
		lua_pop(L, 1);
	} else {
		luaL_getmetatable(L, EXPR);
		lua_getfield(L, -1, "methods");
		lua_getfield(L, -1, k);
	}
	return 1;
}

/*
** L:expr() on CuTe layouts (called from lua_cute.c): the layout's index
** expression at a symbolic coordinate. opts: name (default "i"), modes (one
** variable per flattened mode, named name0, name1, ...), raw (no simplify).
*/
int
tessel_uop_push_layout(lua_State *L, const Layout *l, const Composed *cl, int opts)
{
	UOp *vars[LOWER_MAXDIM], *r;
	const char *name = "i";
	int modes = 0, raw = 0, n, ci;
	UCtx *c;
	Err e;

	static const TesselOpt keys[] = {
		{ "name", "string" }, { "modes", "boolean" }, { "raw", "boolean" }, { NULL, NULL }
	};

	opts = lua_absindex(L, opts);
	if (lua_type(L, opts) == LUA_TSTRING) {
		name = lua_tostring(L, opts);
	} else if (lua_type(L, opts) == LUA_TTABLE) {
		tessel_checkopts(L, opts, "L:expr", keys);
		lua_getfield(L, opts, "name");
		if (lua_type(L, -1) == LUA_TSTRING)
			name = lua_tostring(L, -1);   /* anchored in opts */
		lua_getfield(L, opts, "modes");
		modes = lua_toboolean(L, -1);
		lua_getfield(L, opts, "raw");
		raw = lua_toboolean(L, -1);
		lua_pop(L, 3);
	} else if (!lua_isnoneornil(L, opts))
		return luaL_typeerror(L, opts, "table of options or a variable name");
	if (luaL_getmetatable(L, EXPR) == LUA_TNIL) {
		lua_pop(L, 1);
		luaL_requiref(L, "uop", luaopen_tessel_uop, 0);
	}
	lua_pop(L, 1);
	c = current(L);
	ci = lua_gettop(L);
	if (lower_cute_vars(c, cl ? &cl->layout : l, name, modes, vars, &n, &e) < 0)
		return luaL_error(L, "expr: %s", e.msg);
	if (modes ? (cl ? lower_composed_crd(c, cl, vars, n, &r, &e) : lower_cute_crd(c, l, vars, n, &r, &e))
	          : (cl ? lower_composed_idx(c, cl, vars[0], &r, &e) : lower_cute_idx(c, l, vars[0], &r, &e)))
		return luaL_error(L, "expr: %s", e.msg);
	if (!raw && uop_simplify(c, r, &r, &e) < 0)
		return luaL_error(L, "expr: %s", e.msg);
	push(L, r, ci);
	return 1;
}

/* Helpers for the other bindings (tessel.h). */
UCtx *
tessel_uop_begin(lua_State *L)
{
	if (luaL_getmetatable(L, EXPR) == LUA_TNIL) {
		lua_pop(L, 1);
		luaL_requiref(L, "uop", luaopen_tessel_uop, 0);
	}
	lua_pop(L, 1);
	return current(L);
}

void
tessel_uop_push(lua_State *L, UOp *u, int ci)
{
	push(L, u, ci);
}

UOp *
tessel_uop_operand(lua_State *L, int i, UCtx *c, const char *what)
{
	return operand(L, i, c, what);
}

int
tessel_uop_isexpr(lua_State *L, int i)
{
	return toexpr(L, i) != NULL;
}

typedef HelpReg Fn;

static const Fn funcs[] = {
	{ "var", l_var,
	  "a variable with a name and an inclusive range\n"
	  "uop.var(name, min, max) -> the index variable name in [min, max]; uop.var(name, n) is [0, n).\n"
	  "Ranges drive simplification:\n"
	  "  i = uop.var(\"i\", 0, 63); (i % 64):simplify() --> i" },
	{ "const", l_const,
	  "a constant of a dtype\n"
	  "uop.const(v [, dtype]) -> a constant (dtype index by default; bool, int32, int64). Plain Lua\n"
	  "integers and booleans in expressions become constants by themselves: i*4 + 1." },
	{ "cast", l_cast,
	  "convert to another dtype\n"
	  "uop.cast(e, dtype) -> e as bool, int32, int64 or index (int32 wraps, as C's cast)" },
	{ "min", l_min, "the smaller of two expressions\nuop.min(a, b)" },
	{ "max", l_max, "the larger of two expressions\nuop.max(a, b)" },
	{ "where", l_where,
	  "select by a condition\n"
	  "uop.where(cond, a, b) -> a where cond holds, else b (cond: a comparison or bool)" },
	{ "lt", l_lt, "a < b as a bool expression\nuop.lt(a, b) (Lua's < cannot return an expression)" },
	{ "le", l_le, "a <= b as a bool expression\nuop.le(a, b) -> a < b + 1" },
	{ "gt", l_gt, "a > b as a bool expression\nuop.gt(a, b) -> b < a" },
	{ "ge", l_ge, "a >= b as a bool expression\nuop.ge(a, b) -> b < a + 1" },
	{ "eq", l_eq, "a == b as a bool expression\nuop.eq(a, b) (== on expressions compares structure)" },
	{ "ne", l_ne, "a ~= b as a bool expression\nuop.ne(a, b)" },
	{ "simplify", l_simplify,
	  "the simplified expression (the cheaper of expanded and unexpanded forms)\n"
	  "uop.simplify(e) | e:simplify() -> an equal expression with no more operations: constants\n"
	  "folded, like terms collected, LEGO's Table II rules and tinygrad's div/mod rules applied with\n"
	  "their side conditions proved from the variables' ranges; then the cheaper by e:ops() of the\n"
	  "unexpanded and expanded forms, printed with subtraction and common factors." },
	{ "normalize", l_normalize,
	  "the rule set's canonical form, without the cost model\n"
	  "uop.normalize(e) | e:normalize() -> the fixpoint of the symbolic rules (sums as i + j*4 + 3)" },
	{ "expand", l_expand,
	  "products distributed over sums\n"
	  "uop.expand(e) | e:expand() -> (a + b)*c becomes a*c + b*c everywhere" },
	{ "ops", l_ops,
	  "the operation count\n"
	  "uop.ops(e) | e:ops() -> operations of the printed expression (a shared subexpression counts\n"
	  "each time), and as a second value the distinct operations (the DAG)" },
	{ "range", l_range,
	  "the derived interval [min, max]\n"
	  "uop.range(e) | e:range() -> min, max from interval analysis over the variables' ranges" },
	{ "eval", l_eval,
	  "the value at a point\n"
	  "uop.eval(e, {i = 3, j = 1}) | e:eval{i = 3} | e{i = 3} -> the value (floor division and\n"
	  "modulo; errors on division by zero, overflow, a missing variable or one outside its range)" },
	{ "vars", l_vars,
	  "the variables of an expression\n"
	  "uop.vars(e) | e:vars() -> { {name=, min=, max=}, ... } sorted by name" },
	{ "equivalent", l_equivalent,
	  "whether two expressions agree on every point of their ranges\n"
	  "uop.equivalent(a, b [, limit]) -> true, or false, \"i=3: a = 7, b = 8\", {i = 3}.\n"
	  "Exhaustive over the variables' ranges (matched by name); refuses more than limit points\n"
	  "(default 4194304)." },
	{ "print", l_print,
	  "the expression in a dialect's syntax\n"
	  "uop.print(e [, dialect]) -> text; dialect: infix (default), c, cuda, opencl, python, triton, lua.\n"
	  "Floor // and % print as the plain operator where ranges prove the operands non-negative or the\n"
	  "language floors (Python, Lua); otherwise as an inline form correct for negative operands." },
	{ "c", l_c, "the expression as C\ne:c() -> C99 text (int64_t arithmetic; floor forms where needed)" },
	{ "cuda", l_cuda, "the expression as CUDA C++\ne:cuda() -> CUDA text (min/max built-ins)" },
	{ "opencl", l_opencl, "the expression as OpenCL C\ne:opencl() -> OpenCL C text" },
	{ "python", l_python, "the expression as Python\ne:python() -> Python text (// and % already floor)" },
	{ "triton", l_triton,
	  "the expression as Triton\ne:triton() -> Triton text (tl.where, tl.minimum; // and % truncate\n"
	  "there as in C, so floor forms are printed where the signs are not known)" },
	{ "lua", l_lua, "the expression as Lua\ne:lua() -> Lua 5.4 text (// and % floor)" },
	{ "tree", l_tree,
	  "the expression tree as text\n"
	  "uop.tree(e [, max_lines | {max_rows = n}]) -> the tree that show(e) prints (show(e, {max_rows = n})),\n"
	  "with each node's range; 200 lines unless told" },
	{ "stats", l_stats,
	  "the current arena's size\n"
	  "uop.stats() -> nodes, bytes of the context new expressions are built in. A context holds at\n"
	  "most 65536 nodes; then a new one starts and the old is freed once no expression refers to it." },
	{ NULL, NULL, NULL }
};

static const char *const methods[] = {
	"simplify", "normalize", "expand", "ops", "range", "eval", "vars", "print", "c", "cuda",
	"opencl", "python", "triton", "lua", "tree", NULL
};

static const luaL_Reg expr_meta[] = {
	{ "__add", m_add }, { "__sub", m_sub }, { "__mul", m_mul }, { "__idiv", m_idiv },
	{ "__mod", m_mod }, { "__unm", m_unm }, { "__div", m_div }, { "__band", m_band },
	{ "__bor", m_bor }, { "__bxor", m_bxor }, { "__shl", m_shl }, { "__shr", m_shr },
	{ "__lt", m_cmp }, { "__le", m_cmp }, { "__eq", m_eq }, { "__tostring", l_tostring },
	{ "__call", m_call }, { "__index", m_index }, { "__show", l_show }, { "__scene", l_scene }, { "__concat", m_concat },
	{ NULL, NULL }
};

static const char *const topics[][2] = {
	{ "uop",
	  "symbolic index expressions (UOps): build, simplify, print, check\n"
	  "  i = uop.var(\"i\", 0, 63); j = uop.var(\"j\", 0, 7)\n"
	  "  e = (j*8 + i % 8) // 8 + i // 8 * 8 + i % 8   -- + - * // % (floor), unary -, & | ~ << >>\n"
	  "  e:simplify()  e:ops()  e:range()  e:eval{i = 3, j = 1}  e:c()  show(e)\n"
	  "  uop.equivalent(e, e:simplify())  --> true\n"
	  "Layouts lower to expressions: cute.layout(\"(4,8):(8,1)\"):expr(). Topics: help \"uop.Expr\"." },
	{ "uop.Expr",
	  "an immutable, hash-consed index expression\n"
	  "Operators + - * // % and unary -, & | ~ << >> build expressions (Lua integers mix in);\n"
	  "/ and < are refused (use // and uop.lt). tostring gives the infix form; == compares\n"
	  "structure; e{i = 3} evaluates. Fields: e.op, e.dtype, e.value, e.name, e.src." },
};

int
luaopen_tessel_uop(lua_State *L)
{
	int i;

	luaL_newmetatable(L, CTX);
	lua_pushcfunction(L, ctx_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);

	lua_newtable(L);  /* uop */
	help_setfuncs(L, funcs, "uop.");
	help_add(L, -1, "uop", topics[0][1]);
	for (i = 0; i < (int)(sizeof topics / sizeof topics[0]); i++)
		help_topic(L, topics[i][0], topics[i][1]);

	luaL_newmetatable(L, EXPR);
	luaL_setfuncs(L, expr_meta, 0);
	lua_newtable(L);
	for (i = 0; methods[i]; i++) {
		lua_getfield(L, -3, methods[i]);
		lua_setfield(L, -2, methods[i]);
	}
	lua_setfield(L, -2, "methods");
	lua_pop(L, 1);
	return 1;
}

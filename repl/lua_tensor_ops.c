/* lua_tensor_ops.c - tinygrad's Tensor methods of tensor_math.c, tensor_shape.c and tensor_nn.c as tensor methods and constructors. */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <string.h>

#include "../interp/tensor/tensor.h"
#include "help.h"
#include "lua_tensor.h"
#include "tessel.h"

/*
** Each binding checks and converts its arguments, makes one call into
** interp/tensor/ and pushes the result (lua_tensor.h says how). Positional
** arguments follow tinygrad's order and defaults; tinygrad's keyword-only
** arguments (cat's dim, the losses' reduction, attention's flags) come in an
** options table, checked by tessel_checkopts.
*/

/* ---- argument helpers ---- */

static double
optnum(lua_State *L, int i, double def, const char *what, const char *name)
{
	if (lua_isnoneornil(L, i))
		return def;
	if (lua_type(L, i) != LUA_TNUMBER)
		luaL_error(L, "%s: %s must be a number, got %s", what, name, luaL_typename(L, i));
	return lua_tonumber(L, i);
}

static int64_t
optint(lua_State *L, int i, int64_t def, const char *what, const char *name)
{
	if (lua_isnoneornil(L, i))
		return def;
	if (!lua_isinteger(L, i))
		luaL_error(L, "%s: %s must be an integer, got %s", what, name,
		           lua_type(L, i) == LUA_TNUMBER ? "a float" : luaL_typename(L, i));
	return lua_tointeger(L, i);
}

static int
optbool(lua_State *L, int i, int def, const char *what, const char *name)
{
	if (lua_isnoneornil(L, i))
		return def;
	if (lua_type(L, i) != LUA_TBOOLEAN)
		luaL_error(L, "%s: %s must be a boolean, got %s", what, name, luaL_typename(L, i));
	return lua_toboolean(L, i);
}

/* Options: the field of the options table at i (checked already), read as above. */
static double
fnum(lua_State *L, int i, const char *k, double def)
{
	double v = def;

	if (i && lua_getfield(L, i, k) != LUA_TNIL)
		v = lua_tonumber(L, -1);
	if (i)
		lua_pop(L, 1);
	return v;
}

static int
fbool(lua_State *L, int i, const char *k, int def)
{
	int v = def;

	if (i && lua_getfield(L, i, k) != LUA_TNIL)
		v = lua_toboolean(L, -1);
	if (i)
		lua_pop(L, 1);
	return v;
}

/* Axes: nil (all: k = -1), an integer, or a table of integers. */
static int
axes_arg(lua_State *L, int i, int64_t *axes, const char *what)
{
	if (lua_isnoneornil(L, i))
		return -1;
	if (lua_isinteger(L, i)) {
		axes[0] = lua_tointeger(L, i);
		return 1;
	}
	if (lua_type(L, i) == LUA_TTABLE)
		return lt_get_shape(L, i, axes, what);
	return luaL_error(L, "%s: the axis must be an integer or a table of integers, got %s", what,
	                  luaL_typename(L, i));
}

/* A list of integers: a table, or one integer. */
static int
ints_arg(lua_State *L, int i, int64_t *v, const char *what, const char *name)
{
	if (lua_isinteger(L, i)) {
		v[0] = lua_tointeger(L, i);
		return 1;
	}
	if (lua_type(L, i) != LUA_TTABLE)
		return luaL_error(L, "%s: %s must be an integer or a table of integers, got %s", what, name,
		                  luaL_typename(L, i));
	return lt_get_shape(L, i, v, what);
}

static TReduction
reduction_arg(lua_State *L, int opts, const char *what)
{
	TReduction r = TRED_MEAN;
	Err e = { "" };

	if (opts && lua_getfield(L, opts, "reduction") != LUA_TNIL && tensor_reduction_parse(lua_tostring(L, -1), &r, &e) < 0)
		luaL_error(L, "%s: %s", what, e.msg);
	if (opts)
		lua_pop(L, 1);
	return r;
}

/* The options table at i (or 0 when absent), checked against keys. */
static int
opts_at(lua_State *L, int i, const char *what, const TesselOpt *keys)
{
	return tessel_checkopts(L, i, what, keys) ? i : 0;
}

/* ---- shims: one tensor in, one call ---- */

typedef UOp *(*Build1)(UCtx *c, UOp *a, Err *e);
typedef UOp *(*Build2)(UCtx *c, UOp *a, UOp *b, Err *e);
typedef UOp *(*BuildRed)(UCtx *c, UOp *a, const int64_t *axes, int k, int keepdim, Err *e);

static int
unary(lua_State *L, Build1 f)
{
	lua_settop(L, 1);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	Err e = { "" };

	lt_push(L, f(x->c, lt_in_ctx(L, 1, x->c), &e), -1, &e);
	return 1;
}

/* a:f(b): b a tensor or a Lua number (of a's dtype, a float makes an integer tensor float32) */
static int
binary(lua_State *L, Build2 f, const char *what)
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

/* t:f([axis | {axes}] [, keepdim]) */
static int
reduce(lua_State *L, BuildRed f, const char *what)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L), k;
	int64_t axes[T_MAXDIM];
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	k = axes_arg(L, 2, axes, what);
	lt_push(L, f(x->c, a, axes, k, optbool(L, 3, 0, what, "keepdim"), &e), ci, &e);
	return 1;
}

static UOp *b_add(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_ADD, a, b, e); }
static UOp *b_sub(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_SUB, a, b, e); }
static UOp *b_mul(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_MUL, a, b, e); }
static UOp *b_mod(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_MOD, a, b, e); }
static UOp *b_and(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_AND, a, b, e); }
static UOp *b_or(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_OR, a, b, e); }
static UOp *b_xor(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_XOR, a, b, e); }
static UOp *b_shl(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_SHL, a, b, e); }
static UOp *b_shr(UCtx *c, UOp *a, UOp *b, Err *e) { return tensor_alu(c, OP_SHR, a, b, e); }

static int l_add(lua_State *L) { return binary(L, b_add, "add"); }
static int l_sub(lua_State *L) { return binary(L, b_sub, "sub"); }
static int l_mul(lua_State *L) { return binary(L, b_mul, "mul"); }
static int l_mod(lua_State *L) { return binary(L, b_mod, "mod"); }
static int l_bitwise_and(lua_State *L) { return binary(L, b_and, "bitwise_and"); }
static int l_bitwise_or(lua_State *L) { return binary(L, b_or, "bitwise_or"); }
static int l_bitwise_xor(lua_State *L) { return binary(L, b_xor, "bitwise_xor"); }
static int l_lshift(lua_State *L) { return binary(L, b_shl, "lshift"); }
static int l_rshift(lua_State *L) { return binary(L, b_shr, "rshift"); }
static int l_pow(lua_State *L) { return binary(L, tensor_pow, "pow"); }
static int l_fmod(lua_State *L) { return binary(L, tensor_fmod, "fmod"); }
static int l_copysign(lua_State *L) { return binary(L, tensor_copysign, "copysign"); }
static int l_logaddexp(lua_State *L) { return binary(L, tensor_logaddexp, "logaddexp"); }

/* a:div(b [, rounding_mode]): nil, "trunc" or "floor" */
static int
l_div(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	const char *m = luaL_optstring(L, 3, "none");
	int mode = strcmp(m, "none") == 0 ? 0 : strcmp(m, "trunc") == 0 ? 1 : strcmp(m, "floor") == 0 ? 2 : -1;
	TCtxBox *x;
	DType like;
	UOp *a, *b;
	Err e = { "" };
	int ci;

	if (mode < 0)
		return luaL_error(L, "div: rounding_mode \"%s\" is not nil, \"trunc\" or \"floor\"", m);
	x = lt_current(L);
	ci = lua_gettop(L);
	like = lt_like_of(L, 1, 2);
	a = lt_operand(L, 1, x->c, like, "div");
	b = lt_operand(L, 2, x->c, like, "div");
	lt_push(L, tensor_div_mode(x->c, a, b, mode, &e), ci, &e);
	return 1;
}

static int l_neg(lua_State *L) { return unary(L, tensor_neg); }
static int l_logical_not(lua_State *L) { return unary(L, tensor_logical_not); }
static int l_bitwise_not(lua_State *L) { return unary(L, tensor_bitwise_not); }
static int l_sign(lua_State *L) { return unary(L, tensor_sign); }
static int l_abs(lua_State *L) { return unary(L, tensor_abs); }
static int l_square(lua_State *L) { return unary(L, tensor_square); }
static int l_rsqrt(lua_State *L) { return unary(L, tensor_rsqrt); }
static int l_floor_(lua_State *L) { return unary(L, tensor_floor); }
static int l_ceil(lua_State *L) { return unary(L, tensor_ceil); }
static int l_round(lua_State *L) { return unary(L, tensor_round); }
static int l_isnan(lua_State *L) { return unary(L, tensor_isnan); }
static int l_isfinite(lua_State *L) { return unary(L, tensor_isfinite); }
static int l_log10(lua_State *L) { return unary(L, tensor_log10); }
static int l_tan(lua_State *L) { return unary(L, tensor_tan); }
static int l_sinh(lua_State *L) { return unary(L, tensor_sinh); }
static int l_cosh(lua_State *L) { return unary(L, tensor_cosh); }
static int l_asinh(lua_State *L) { return unary(L, tensor_asinh); }
static int l_acosh(lua_State *L) { return unary(L, tensor_acosh); }
static int l_atanh(lua_State *L) { return unary(L, tensor_atanh); }
static int l_asin(lua_State *L) { return unary(L, tensor_asin); }
static int l_acos(lua_State *L) { return unary(L, tensor_acos); }
static int l_atan(lua_State *L) { return unary(L, tensor_atan); }
static int l_erf(lua_State *L) { return unary(L, tensor_erf); }
static int l_relu6(lua_State *L) { return unary(L, tensor_relu6); }
static int l_hardswish(lua_State *L) { return unary(L, tensor_hardswish); }
static int l_mish(lua_State *L) { return unary(L, tensor_mish); }
static int l_logsigmoid(lua_State *L) { return unary(L, tensor_logsigmoid); }
static int l_softsign(lua_State *L) { return unary(L, tensor_softsign); }
static int l_silu(lua_State *L) { return unary(L, tensor_silu); }
static int l_quick_gelu(lua_State *L) { return unary(L, tensor_quick_gelu); }
static int l_diag(lua_State *L) { return unary(L, tensor_diag); }

/* Activations with numeric parameters: t:f([p1 [, p2]]) with tinygrad's defaults. */
enum { A_HARDSIGMOID, A_HARDTANH, A_LEAKY, A_ELU, A_CELU, A_SELU, A_SOFTPLUS };

static int
activation(lua_State *L, int which, const char *what)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c), *r = NULL;

	switch (which) {
	case A_HARDSIGMOID:
		r = tensor_hardsigmoid(x->c, a, optnum(L, 2, 1.0 / 6, what, "alpha"), optnum(L, 3, 0.5, what, "beta"), &e);
		break;
	case A_HARDTANH:
		r = tensor_hardtanh(x->c, a, optnum(L, 2, -1, what, "min_val"), optnum(L, 3, 1, what, "max_val"), &e);
		break;
	case A_LEAKY: r = tensor_leaky_relu(x->c, a, optnum(L, 2, 0.01, what, "neg_slope"), &e); break;
	case A_ELU: r = tensor_elu(x->c, a, optnum(L, 2, 1, what, "alpha"), &e); break;
	case A_CELU: r = tensor_celu(x->c, a, optnum(L, 2, 1, what, "alpha"), &e); break;
	case A_SELU:
		r = tensor_selu(x->c, a, optnum(L, 2, 1.67326, what, "alpha"), optnum(L, 3, 1.0507, what, "gamma"), &e);
		break;
	case A_SOFTPLUS: {
		double beta = optnum(L, 2, 1, what, "beta");

		if (beta == 0)
			return luaL_error(L, "softplus: beta must not be 0");
		r = tensor_softplus(x->c, a, beta, &e);
		break;
	}
	}
	lt_push(L, r, ci, &e);
	return 1;
}

static int l_hardsigmoid(lua_State *L) { return activation(L, A_HARDSIGMOID, "hardsigmoid"); }
static int l_hardtanh(lua_State *L) { return activation(L, A_HARDTANH, "hardtanh"); }
static int l_leaky_relu(lua_State *L) { return activation(L, A_LEAKY, "leaky_relu"); }
static int l_elu(lua_State *L) { return activation(L, A_ELU, "elu"); }
static int l_celu(lua_State *L) { return activation(L, A_CELU, "celu"); }
static int l_selu(lua_State *L) { return activation(L, A_SELU, "selu"); }
static int l_softplus(lua_State *L) { return activation(L, A_SOFTPLUS, "softplus"); }

/* t:gelu([approximate]): "tanh" (default) or "none" */
static int
l_gelu(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	const char *m = luaL_optstring(L, 2, "tanh");
	TCtxBox *x;
	Err e = { "" };

	if (strcmp(m, "tanh") != 0 && strcmp(m, "none") != 0)
		return luaL_error(L, "gelu: approximate \"%s\" is not \"tanh\" or \"none\"", m);
	x = lt_current(L);
	lt_push(L, tensor_gelu(x->c, lt_in_ctx(L, 1, x->c), strcmp(m, "none") == 0, &e), -1, &e);
	return 1;
}

/* t:isinf([detect_positive [, detect_negative]]) */
static int
l_isinf(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	lt_push(L, tensor_isinf(x->c, a, optbool(L, 2, 1, "isinf", "detect_positive"),
	                        optbool(L, 3, 1, "isinf", "detect_negative"), &e), ci, &e);
	return 1;
}

/* t:clamp([min] [, max]) (nil: no bound); clip is the same */
static int
l_clamp(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c), *lo = NULL, *hi = NULL;

	/* tinygrad compares the number itself: an unsigned x is never below a negative one (which the
	** conversion to x's dtype would wrap) */
	int below = lua_isnumber(L, 2) && dtype_is_unsigned((DType)a->dtype) && lua_tonumber(L, 2) < 0;

	if (!lua_isnil(L, 2) && !below)
		lo = lt_operand(L, 2, x->c, (DType)a->dtype, "clamp");
	if (!lua_isnil(L, 3))
		hi = lt_operand(L, 3, x->c, (DType)a->dtype, "clamp");
	if (below && !hi) {
		lua_settop(L, 1);
		return 1;
	}
	lt_push(L, tensor_clamp(x->c, a, lo, hi, &e), ci, &e);
	return 1;
}

/* t:lerp(end, weight) */
static int
l_lerp(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);
	UOp *end = lt_operand(L, 2, x->c, (DType)a->dtype, "lerp"), *w = lt_operand(L, 3, x->c, (DType)a->dtype, "lerp");

	lt_push(L, tensor_lerp(x->c, a, end, w, &e), ci, &e);
	return 1;
}

/* t:masked_fill(mask, value) */
static int
l_masked_fill(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c), *m = lt_in_ctx(L, 2, x->c);
	UOp *v = lt_operand(L, 3, x->c, (DType)a->dtype, "masked_fill");

	lt_push(L, tensor_masked_fill(x->c, a, m, v, &e), ci, &e);
	return 1;
}

/* a:isclose(b [, {rtol=, atol=, equal_nan=}]); allclose: all of it */
static const TesselOpt close_keys[] = { { "rtol", "number" }, { "atol", "number" }, { "equal_nan", "boolean" },
                                        { NULL, NULL } };

static int
close_(lua_State *L, int all, const char *what)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	int o = opts_at(L, 3, what, close_keys);
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c), *b = lt_operand(L, 2, x->c, (DType)a->dtype, what), *r;

	r = tensor_isclose(x->c, a, b, fnum(L, o, "rtol", 1e-5), fnum(L, o, "atol", 1e-8), fbool(L, o, "equal_nan", 0),
	                   &e);
	if (all)
		r = tensor_all(x->c, r, NULL, -1, 0, &e);
	lt_push(L, r, ci, &e);
	return 1;
}

static int l_isclose(lua_State *L) { return close_(L, 0, "isclose"); }
static int l_allclose(lua_State *L) { return close_(L, 1, "allclose"); }

/* ---- dtype shortcuts and sizes ---- */

static int
cast_to(lua_State *L, DType t)
{
	lua_settop(L, 1);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	Err e = { "" };

	lt_push(L, tensor_cast(x->c, t, lt_in_ctx(L, 1, x->c), &e), -1, &e);
	return 1;
}

static int l_float(lua_State *L) { return cast_to(L, DT_FLOAT32); }
static int l_half(lua_State *L) { return cast_to(L, DT_FLOAT16); }
static int l_double(lua_State *L) { return cast_to(L, DT_FLOAT64); }
static int l_bfloat16(lua_State *L) { return cast_to(L, DT_BFLOAT16); }
static int l_int(lua_State *L) { return cast_to(L, DT_INT32); }
static int l_long(lua_State *L) { return cast_to(L, DT_INT64); }
static int l_short(lua_State *L) { return cast_to(L, DT_INT16); }
static int l_bool(lua_State *L) { return cast_to(L, DT_BOOL); }

/* t:size([dim]): the shape as a table, or one axis's size */
static int
l_size(lua_State *L)
{
	UOp *u = lt_check(L, 1)->u;
	int i;

	if (lua_isnoneornil(L, 2)) {
		lua_createtable(L, u->ndim, 0);
		for (i = 0; i < u->ndim; i++) {
			lua_pushinteger(L, u->shape[i]);
			lua_rawseti(L, -2, i + 1);
		}
		return 1;
	}
	{
		int64_t d = optint(L, 2, 0, "size", "dim");

		if (d < -u->ndim || d >= u->ndim)
			return luaL_error(L, "size: dim %d is out of range for rank %d", (int)d, u->ndim);
		lua_pushinteger(L, u->shape[d < 0 ? d + u->ndim : d]);
	}
	return 1;
}

static int
l_element_size(lua_State *L)
{
	lua_pushinteger(L, dtype_bytes(lt_check(L, 1)->u->dtype));
	return 1;
}

static int
l_nbytes(lua_State *L)
{
	UOp *u = lt_check(L, 1)->u;

	lua_pushinteger(L, uop_numel(u) * dtype_bytes(u->dtype));
	return 1;
}

static int
l_is_floating_point(lua_State *L)
{
	lua_pushboolean(L, dtype_is_float(lt_check(L, 1)->u->dtype));
	return 1;
}

/* t:zeros_like([dtype]), t:ones_like([dtype]), t:full_like(value [, dtype]) */
static int
like(lua_State *L, int vi, double v, const char *what)
{
	UOp *u = lt_check(L, 1)->u;
	DType t;
	TCtxBox *x;
	Err e = { "" };

	if (vi) {
		v = luaL_checknumber(L, vi);
		t = lt_get_dtype(L, vi + 1, lua_isinteger(L, vi) || lua_isboolean(L, vi) ? (DType)u->dtype
		                 : dtype_is_float(u->dtype) ? (DType)u->dtype : DT_FLOAT32, what);
	} else
		t = lt_get_dtype(L, 2, (DType)u->dtype, what);
	x = lt_current(L);
	lt_push(L, tensor_full(x->c, t, v, u->shape, u->ndim, &e), -1, &e);
	return 1;
}

static int l_zeros_like(lua_State *L) { return like(L, 0, 0, "zeros_like"); }
static int l_ones_like(lua_State *L) { return like(L, 0, 1, "ones_like"); }
static int l_full_like(lua_State *L) { return like(L, 2, 0, "full_like"); }

/* ---- shape ---- */

/* t:squeeze([dim]) */
static int
l_squeeze(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	int64_t d = optint(L, 2, 0, "squeeze", "dim");
	int has = !lua_isnil(L, 2);
	TCtxBox *x = lt_current(L);
	Err e = { "" };

	lt_push(L, tensor_squeeze(x->c, lt_in_ctx(L, 1, x->c), has ? &d : NULL, &e), -1, &e);
	return 1;
}

/* t:unsqueeze(dim) */
static int
l_unsqueeze(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	int64_t d = (int64_t)luaL_checkinteger(L, 2);
	TCtxBox *x = lt_current(L);
	Err e = { "" };

	lt_push(L, tensor_unsqueeze(x->c, lt_in_ctx(L, 1, x->c), d, &e), -1, &e);
	return 1;
}

/* t:flatten([start_dim [, end_dim]]) */
static int
l_flatten(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	int64_t s = optint(L, 2, 0, "flatten", "start_dim"), en = optint(L, 3, -1, "flatten", "end_dim");
	TCtxBox *x = lt_current(L);
	Err e = { "" };

	lt_push(L, tensor_flatten(x->c, lt_in_ctx(L, 1, x->c), s, en, &e), -1, &e);
	return 1;
}

/* t:unflatten(dim, {sizes}) */
static int
l_unflatten(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	int64_t d = (int64_t)luaL_checkinteger(L, 2), s[T_MAXDIM];
	int n;
	TCtxBox *x;
	Err e = { "" };

	luaL_checktype(L, 3, LUA_TTABLE);
	n = lt_get_shape(L, 3, s, "unflatten");
	x = lt_current(L);
	lt_push(L, tensor_unflatten(x->c, lt_in_ctx(L, 1, x->c), d, s, n, &e), -1, &e);
	return 1;
}

/* t:view{...}: reshape */
static int
l_view(lua_State *L)
{
	int64_t s[T_MAXDIM];
	int n = lt_get_shape(L, 2, s, "view");
	TCtxBox *x;
	Err e = { "" };

	lua_settop(L, 1);
	x = lt_current(L);
	lt_push(L, tensor_reshape(x->c, lt_in_ctx(L, 1, x->c), s, n, &e), -1, &e);
	return 1;
}

/* The tensors among arguments 1..n (stopping at a table, the options) into ts; returns their count. */
static int
tensors_args(lua_State *L, int n, UCtx *c, UOp **ts, int max, const char *what)
{
	int i, k = 0;

	for (i = 1; i <= n; i++) {
		if (lua_type(L, i) == LUA_TTABLE && i == n)
			break;
		if (k >= max)
			luaL_error(L, "%s: more than %d tensors", what, max);
		if (!luaL_testudata(L, i, TENSOR))
			luaL_error(L, "%s: argument %d is a %s, not a tensor", what, i, luaL_typename(L, i));
		ts[k++] = lt_in_ctx(L, i, c);
	}
	return k;
}

/* a:cat(b, ... [, {dim =}]) and tensor.cat(a, b, ... [, {dim =}]); stack alike */
static const TesselOpt dim_keys[] = { { "dim", "integer" }, { NULL, NULL } };

static int
join(lua_State *L, int stack, const char *what)
{
	int n = lua_gettop(L), o = n >= 1 && lua_type(L, n) == LUA_TTABLE ? opts_at(L, n, what, dim_keys) : 0;
	int64_t dim = (int64_t)fnum(L, o, "dim", 0);
	UOp *ts[256];
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L), k;
	Err e = { "" };

	k = tensors_args(L, n, x->c, ts, 256, what);
	if (k == 0)
		return luaL_error(L, "%s: no tensors", what);
	lt_push(L, stack ? tensor_stack_dim(x->c, ts, k, dim, &e) : tensor_cat(x->c, ts, k, dim, &e), ci, &e);
	return 1;
}

static int l_cat(lua_State *L) { return join(L, 0, "cat"); }
static int l_stack(lua_State *L) { return join(L, 1, "stack"); }

enum { MAXPIECES = 4096 };

/* Push a table of the pieces out[0..n-1] of the context at ci. */
static void
push_list(lua_State *L, UOp **out, int n, int ci, const Err *e)
{
	int i;

	lua_createtable(L, n, 0);
	for (i = 0; i < n; i++) {
		lt_push(L, out[i], ci, e);
		lua_rawseti(L, -2, i + 1);
	}
}

/* t:split(size | {sizes} [, dim]), t:chunk(k [, dim]): a table of tensors */
static int
pieces(lua_State *L, int chunk, const char *what)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	int64_t dim = optint(L, 3, 0, what, "dim"), s[T_MAXDIM];
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L), n, one = lua_isinteger(L, 2);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);
	int64_t *sizes;
	UOp **out;

	if (!one && (chunk || lua_type(L, 2) != LUA_TTABLE))
		return luaL_error(L, "%s: %s", what, chunk ? "the number of chunks must be an integer"
		                                           : "the size must be an integer or a table of sizes");
	sizes = lua_newuserdatauv(L, MAXPIECES * (sizeof *sizes + sizeof *out), 0);
	out = (UOp **)(sizes + MAXPIECES);
	if (one) {
		int64_t d = dim, len;

		if (a->ndim == 0 || d < -a->ndim || d >= a->ndim)
			return luaL_error(L, "%s: dim %d is out of range for rank %d", what, (int)d, a->ndim);
		len = a->shape[d < 0 ? d + a->ndim : d];
		n = chunk ? tensor_chunk_sizes(len, lua_tointeger(L, 2), sizes, MAXPIECES, &e)
		          : tensor_split_sizes(len, lua_tointeger(L, 2), sizes, MAXPIECES, &e);
	} else {
		n = lt_get_shape(L, 2, s, what);
		memcpy(sizes, s, sizeof s[0] * n);
	}
	if (n < 0 || tensor_split(x->c, a, sizes, n, dim, out, &e) < 0)
		return luaL_error(L, "%s", e.msg);
	push_list(L, out, n, ci, &e);
	return 1;
}

static int l_split(lua_State *L) { return pieces(L, 0, "split"); }
static int l_chunk(lua_State *L) { return pieces(L, 1, "chunk"); }

/* a:meshgrid(b, ... [, {indexing = "ij" | "xy"}]): a table */
static int
l_meshgrid(lua_State *L)
{
	static const TesselOpt keys[] = { { "indexing", "string" }, { NULL, NULL } };
	int n = lua_gettop(L), o = n >= 1 && lua_type(L, n) == LUA_TTABLE ? opts_at(L, n, "meshgrid", keys) : 0, xy = 0;
	UOp *ts[T_MAXDIM], *out[T_MAXDIM];
	TCtxBox *x;
	int ci, k;
	Err e = { "" };

	if (o && lua_getfield(L, o, "indexing") != LUA_TNIL) {
		const char *s = lua_tostring(L, -1);

		if (strcmp(s, "xy") != 0 && strcmp(s, "ij") != 0)
			return luaL_error(L, "meshgrid: indexing \"%s\" is not \"ij\" or \"xy\"", s);
		xy = strcmp(s, "xy") == 0;
	}
	if (o)
		lua_pop(L, 1);
	x = lt_current(L);
	ci = lua_gettop(L);
	k = tensors_args(L, n, x->c, ts, T_MAXDIM, "meshgrid");
	if (k == 0 || tensor_meshgrid(x->c, ts, k, xy, out, &e) < 0)
		return luaL_error(L, "%s", k ? e.msg : "meshgrid: no tensors");
	push_list(L, out, k, ci, &e);
	return 1;
}

/* t:repeat(r0, r1, ...) or t:repeat{r0, r1, ...} */
static int
l_repeat(lua_State *L)
{
	int64_t r[T_MAXDIM];
	int n = lt_get_shape(L, 2, r, "repeat");
	TCtxBox *x;
	Err e = { "" };

	lua_settop(L, 1);
	x = lt_current(L);
	lt_push(L, tensor_repeat(x->c, lt_in_ctx(L, 1, x->c), r, n, &e), -1, &e);
	return 1;
}

/* t:repeat_interleave(repeats [, dim]) */
static int
l_repeat_interleave(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	int64_t r = (int64_t)luaL_checkinteger(L, 2), d = optint(L, 3, 0, "repeat_interleave", "dim");
	int has = !lua_isnil(L, 3);
	TCtxBox *x = lt_current(L);
	Err e = { "" };

	lt_push(L, tensor_repeat_interleave(x->c, lt_in_ctx(L, 1, x->c), r, has ? &d : NULL, &e), -1, &e);
	return 1;
}

/* t:roll(shifts [, dims]): integers or tables of them */
static int
l_roll(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	int64_t s[T_MAXDIM], d[T_MAXDIM];
	int ns = ints_arg(L, 2, s, "roll", "shifts"), nd = lua_isnil(L, 3) ? -1 : ints_arg(L, 3, d, "roll", "dims");
	TCtxBox *x = lt_current(L);
	Err e = { "" };

	if (nd >= 0 && nd != ns)
		return luaL_error(L, "roll: %d shifts for %d dims", ns, nd);
	lt_push(L, tensor_roll(x->c, lt_in_ctx(L, 1, x->c), s, nd >= 0 ? d : NULL, ns, &e), -1, &e);
	return 1;
}

/* t:tril([diagonal]), t:triu([diagonal]) */
static int
tri(lua_State *L, int upper)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	int64_t d = optint(L, 2, 0, upper ? "triu" : "tril", "diagonal");
	TCtxBox *x = lt_current(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	lt_push(L, upper ? tensor_triu(x->c, a, d, &e) : tensor_tril(x->c, a, d, &e), -1, &e);
	return 1;
}

static int l_tril(lua_State *L) { return tri(L, 0); }
static int l_triu(lua_State *L) { return tri(L, 1); }

/* t:diagonal([offset [, dim1 [, dim2]]]) */
static int
l_diagonal(lua_State *L)
{
	lua_settop(L, 4);   /* the context goes above the arguments */
	int64_t o = optint(L, 2, 0, "diagonal", "offset"), d1 = optint(L, 3, 0, "diagonal", "dim1");
	int64_t d2 = optint(L, 4, 1, "diagonal", "dim2");
	TCtxBox *x = lt_current(L);
	Err e = { "" };

	lt_push(L, tensor_diagonal(x->c, lt_in_ctx(L, 1, x->c), o, d1, d2, &e), -1, &e);
	return 1;
}

/* t:one_hot(num_classes) */
static int
l_one_hot(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	int64_t n = (int64_t)luaL_checkinteger(L, 2);
	TCtxBox *x = lt_current(L);
	Err e = { "" };

	lt_push(L, tensor_one_hot(x->c, lt_in_ctx(L, 1, x->c), n, &e), -1, &e);
	return 1;
}

/* ---- constructors ---- */

/* tensor.eye(n [, m] [, dtype]) */
static int
l_eye(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	int64_t n = (int64_t)luaL_checkinteger(L, 1), m = n;
	int di = 2;
	DType t;
	TCtxBox *x;
	Err e = { "" };

	if (lua_type(L, 2) == LUA_TNUMBER) {
		m = optint(L, 2, n, "tensor.eye", "m");
		di = 3;
	} else if (!lua_isnil(L, 3))
		return luaL_error(L, "tensor.eye: eye(n [, m] [, dtype])");
	t = lt_get_dtype(L, di, DT_FLOAT32, "tensor.eye");
	x = lt_current(L);
	lt_push(L, tensor_eye(x->c, n, m, t, &e), -1, &e);
	return 1;
}

/* tensor.linspace(start, stop, steps [, dtype]) */
static int
l_linspace(lua_State *L)
{
	lua_settop(L, 4);   /* the context goes above the arguments */
	double a = luaL_checknumber(L, 1), b = luaL_checknumber(L, 2);
	int64_t n = (int64_t)luaL_checkinteger(L, 3);
	DType t = lt_get_dtype(L, 4, DT_FLOAT32, "tensor.linspace");
	TCtxBox *x = lt_current(L);
	Err e = { "" };

	lt_push(L, tensor_linspace(x->c, a, b, n, t, &e), -1, &e);
	return 1;
}

/* The shape (a table or integers) and the options table after it. */
static int
shape_opts(lua_State *L, int64_t *s, int *n, const char *what, const TesselOpt *keys)
{
	int i;

	*n = lt_get_shape(L, 1, s, what);
	i = lua_type(L, 1) == LUA_TTABLE ? 2 : 1 + *n;
	if (*n == 0 && lua_type(L, 1) != LUA_TTABLE)
		luaL_error(L, "%s: the shape is a table or integers", what);
	return opts_at(L, i, what, keys);
}

/* tensor.randn, normal, uniform, randint(shape, {seed =, dtype =, ...}) */
enum { R_RANDN, R_NORMAL, R_UNIFORM, R_RANDINT };

static int
random_(lua_State *L, int which, const char *what)
{
	static const TesselOpt keys[] = { { "seed", "integer" }, { "dtype", "string" }, { "mean", "number" },
	                                  { "std", "number" }, { "low", "number" }, { "high", "number" },
	                                  { NULL, NULL } };
	TesselOpt own[5];
	int64_t s[T_MAXDIM];
	int n, o, k = 2;
	uint64_t seed = 0;
	DType t;
	TCtxBox *x;
	Err e = { "" };
	UOp *r = NULL;

	own[0] = keys[0];
	own[1] = keys[1];
	if (which == R_NORMAL) {
		own[k++] = keys[2];
		own[k++] = keys[3];
	} else if (which >= R_UNIFORM) {
		own[k++] = keys[4];
		own[k++] = keys[5];
	}
	own[k].name = own[k].type = NULL;
	o = shape_opts(L, s, &n, what, own);
	t = which == R_RANDINT ? DT_INT32 : DT_FLOAT32;
	if (o && lua_getfield(L, o, "dtype") != LUA_TNIL)
		t = lt_get_dtype(L, -1, t, what);
	if (o)
		lua_pop(L, 1);
	if (o && lua_getfield(L, o, "seed") != LUA_TNIL)
		seed = (uint64_t)lua_tointeger(L, -1);
	if (o)
		lua_pop(L, 1);
	if (which == R_RANDINT && (dtype_is_float(t) || t == DT_BOOL))
		return luaL_error(L, "%s: dtype %s is not an integer dtype", what, dtype_name(t));
	if (which == R_RANDINT && o) {
		lua_getfield(L, o, "low");
		lua_getfield(L, o, "high");
		if ((!lua_isnil(L, -2) && !lua_isinteger(L, -2)) || (!lua_isnil(L, -1) && !lua_isinteger(L, -1)))
			return luaL_error(L, "%s: low and high must be integers", what);
		lua_pop(L, 2);
	}
	x = lt_current(L);
	switch (which) {
	case R_RANDN: r = tensor_randn(x->c, s, n, t, seed, &e); break;
	case R_NORMAL: r = tensor_normal(x->c, s, n, fnum(L, o, "mean", 0), fnum(L, o, "std", 1), t, seed, &e); break;
	case R_UNIFORM:
	case R_RANDINT:
		r = tensor_uniform(x->c, s, n, fnum(L, o, "low", 0), fnum(L, o, "high", which == R_RANDINT ? 10 : 1), t,
		                   seed, &e);
		break;
	}
	lt_push(L, r, -1, &e);
	return 1;
}

static int l_randn(lua_State *L) { return random_(L, R_RANDN, "tensor.randn"); }
static int l_normal(lua_State *L) { return random_(L, R_NORMAL, "tensor.normal"); }
static int l_uniform(lua_State *L) { return random_(L, R_UNIFORM, "tensor.uniform"); }
static int l_randint(lua_State *L) { return random_(L, R_RANDINT, "tensor.randint"); }

/* tensor.einsum(formula, a, b, ...) or tensor.einsum(formula, {a, b, ...}) */
static int
l_einsum(lua_State *L)
{
	const char *f = luaL_checkstring(L, 1);
	int n = lua_gettop(L), k = 0, i, ci;
	UOp *ts[T_MAXDIM];
	TCtxBox *x = lt_current(L);
	Err e = { "" };

	ci = lua_gettop(L);
	if (n == 2 && lua_type(L, 2) == LUA_TTABLE) {
		tessel_checkseq(L, 2, "einsum: the operands");
		n = (int)luaL_len(L, 2);
		for (i = 1; i <= n; i++) {
			if (k >= T_MAXDIM)
				return luaL_error(L, "einsum: more than %d operands", T_MAXDIM);
			lua_geti(L, 2, i);
			if (!luaL_testudata(L, -1, TENSOR))
				return luaL_error(L, "einsum: operand %d is a %s, not a tensor", i, luaL_typename(L, -1));
			ts[k++] = lt_in_ctx(L, lua_gettop(L), x->c);
			lua_pop(L, 1);
		}
	} else
		for (i = 2; i < ci; i++) {
			if (k >= T_MAXDIM)
				return luaL_error(L, "einsum: more than %d operands", T_MAXDIM);
			if (!luaL_testudata(L, i, TENSOR))
				return luaL_error(L, "einsum: operand %d is a %s, not a tensor", i - 1, luaL_typename(L, i));
			ts[k++] = lt_in_ctx(L, i, x->c);
		}
	lt_push(L, tensor_einsum(x->c, f, ts, k, &e), ci, &e);
	return 1;
}

/* ---- reductions, scans, sort ---- */

static int l_any(lua_State *L) { return reduce(L, tensor_any, "any"); }
static int l_all(lua_State *L) { return reduce(L, tensor_all, "all"); }
static int l_logsumexp(lua_State *L) { return reduce(L, tensor_logsumexp, "logsumexp"); }

/* t:var([axis | {axes}] [, keepdim [, correction]]); std; var_mean and std_mean give two tensors */
static int
moments(lua_State *L, int sd, int with_mean, const char *what)
{
	lua_settop(L, 4);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L), k, keep;
	int64_t axes[T_MAXDIM];
	double corr;
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	k = axes_arg(L, 2, axes, what);
	keep = optbool(L, 3, 0, what, "keepdim");
	corr = optnum(L, 4, 1, what, "correction");
	lt_push(L, sd ? tensor_std(x->c, a, axes, k, keep, corr, &e) : tensor_var(x->c, a, axes, k, keep, corr, &e), ci,
	        &e);
	if (!with_mean)
		return 1;
	lt_push(L, tensor_mean(x->c, a, axes, k, keep, &e), ci, &e);
	return 2;
}

static int l_var(lua_State *L) { return moments(L, 0, 0, "var"); }
static int l_std(lua_State *L) { return moments(L, 1, 0, "std"); }
static int l_var_mean(lua_State *L) { return moments(L, 0, 1, "var_mean"); }
static int l_std_mean(lua_State *L) { return moments(L, 1, 1, "std_mean"); }

/* t:argmax([axis] [, keepdim]), argmin */
static int
arg(lua_State *L, int min, const char *what)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	int has = !lua_isnil(L, 2);
	int64_t ax = optint(L, 2, 0, what, "axis");
	int keep = optbool(L, 3, 0, what, "keepdim");
	TCtxBox *x = lt_current(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	lt_push(L, min ? tensor_argmin(x->c, a, has ? &ax : NULL, keep, &e) : tensor_argmax(x->c, a, has ? &ax : NULL, keep, &e),
	        -1, &e);
	return 1;
}

static int l_argmax(lua_State *L) { return arg(L, 0, "argmax"); }
static int l_argmin(lua_State *L) { return arg(L, 1, "argmin"); }

/* t:softmin([axis]) */
static int
l_softmin(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	int64_t ax = optint(L, 2, -1, "softmin", "axis");
	TCtxBox *x = lt_current(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	if (ax < INT32_MIN || ax > INT32_MAX)
		return luaL_error(L, "softmin: axis %d is out of range for rank %d", (int)ax, a->ndim);
	lt_push(L, tensor_softmin(x->c, a, (int)ax, &e), -1, &e);
	return 1;
}

/* t:cumprod(axis), t:logcumsumexp([axis]); t:cummax([axis]), t:cummin: values, indices */
static int
cum(lua_State *L, int which, const char *what)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	int64_t ax = which == 0 ? (int64_t)luaL_checkinteger(L, 2) : optint(L, 2, 0, what, "axis");
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c), *idx = NULL, *v;

	switch (which) {
	case 0: lt_push(L, tensor_cumprod(x->c, a, ax, &e), ci, &e); return 1;
	case 1: lt_push(L, tensor_logcumsumexp(x->c, a, ax, &e), ci, &e); return 1;
	case 2: v = tensor_cummax(x->c, a, ax, &idx, &e); break;
	default: v = tensor_cummin(x->c, a, ax, &idx, &e); break;
	}
	lt_push(L, v, ci, &e);
	lt_push(L, idx, ci, &e);
	return 2;
}

static int l_cumprod(lua_State *L) { return cum(L, 0, "cumprod"); }
static int l_logcumsumexp(lua_State *L) { return cum(L, 1, "logcumsumexp"); }
static int l_cummax(lua_State *L) { return cum(L, 2, "cummax"); }
static int l_cummin(lua_State *L) { return cum(L, 3, "cummin"); }

/* t:sort([dim [, descending]]) -> values, indices; argsort: the indices */
static int
sort_(lua_State *L, int only_idx)
{
	const char *what = only_idx ? "argsort" : "sort";
	lua_settop(L, 3);   /* the context goes above the arguments */
	int64_t d = optint(L, 2, -1, what, "dim");
	int desc = optbool(L, 3, 0, what, "descending");
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *v, *i;

	if (tensor_sort(x->c, lt_in_ctx(L, 1, x->c), d, desc, &v, &i, &e) < 0)
		return luaL_error(L, "%s", e.msg);
	if (only_idx) {
		lt_push(L, i, ci, &e);
		return 1;
	}
	lt_push(L, v, ci, &e);
	lt_push(L, i, ci, &e);
	return 2;
}

static int l_sort(lua_State *L) { return sort_(L, 0); }
static int l_argsort(lua_State *L) { return sort_(L, 1); }

/* t:topk(k [, dim [, largest [, sorted]]]) -> values, indices */
static int
l_topk(lua_State *L)
{
	lua_settop(L, 5);   /* the context goes above the arguments */
	int64_t k = (int64_t)luaL_checkinteger(L, 2), d = optint(L, 3, -1, "topk", "dim");
	int largest = optbool(L, 4, 1, "topk", "largest");
	TCtxBox *x;
	int ci;
	Err e = { "" };
	UOp *v, *i;

	if (!optbool(L, 5, 1, "topk", "sorted"))
		return luaL_error(L, "topk: sorted = false is not supported (tinygrad's neither)");
	x = lt_current(L);
	ci = lua_gettop(L);
	if (tensor_topk(x->c, lt_in_ctx(L, 1, x->c), k, d, largest, &v, &i, &e) < 0)
		return luaL_error(L, "%s", e.msg);
	lt_push(L, v, ci, &e);
	lt_push(L, i, ci, &e);
	return 2;
}

/* ---- layers ---- */

/* t:normalize([p [, dim [, eps]]]) */
static int
l_normalize(lua_State *L)
{
	lua_settop(L, 4);   /* the context goes above the arguments */
	double p = optnum(L, 2, 2, "normalize", "p"), eps = optnum(L, 4, 1e-12, "normalize", "eps");
	int64_t d = optint(L, 3, 1, "normalize", "dim");
	TCtxBox *x = lt_current(L);
	Err e = { "" };

	lt_push(L, tensor_normalize(x->c, lt_in_ctx(L, 1, x->c), p, d, eps, &e), -1, &e);
	return 1;
}

/* t:layernorm([axis | {axes} [, eps]]) */
static int
l_layernorm(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	int64_t axes[T_MAXDIM] = { -1 };
	int k = lua_isnil(L, 2) ? 1 : axes_arg(L, 2, axes, "layernorm");
	double eps = optnum(L, 3, 1e-5, "layernorm", "eps");
	TCtxBox *x = lt_current(L);
	Err e = { "" };

	lt_push(L, tensor_layernorm(x->c, lt_in_ctx(L, 1, x->c), axes, k, eps, &e), -1, &e);
	return 1;
}

static UOp *
opt_tensor(lua_State *L, int i, UCtx *c, const char *what, const char *name)
{
	if (lua_isnoneornil(L, i))
		return NULL;
	if (!luaL_testudata(L, i, TENSOR))
		luaL_error(L, "%s: %s must be a tensor or nil, got %s", what, name, luaL_typename(L, i));
	return lt_in_ctx(L, i, c);
}

/* x:batchnorm(weight, bias, mean, invstd [, axis | {axes}]) (weight, bias may be nil) */
static int
l_batchnorm(lua_State *L)
{
	lua_settop(L, 6);   /* the context goes above the arguments */
	int64_t axes[T_MAXDIM] = { 1 };
	int k = lua_isnil(L, 6) ? 1 : axes_arg(L, 6, axes, "batchnorm");
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c), *w = opt_tensor(L, 2, x->c, "batchnorm", "weight");
	UOp *b = opt_tensor(L, 3, x->c, "batchnorm", "bias"), *m = lt_in_ctx(L, 4, x->c), *is = lt_in_ctx(L, 5, x->c);

	lt_push(L, tensor_batchnorm(x->c, a, w, b, m, is, axes, k, &e), ci, &e);
	return 1;
}

/* x:linear(weight [, bias]) */
static int
l_linear(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c), *w = lt_in_ctx(L, 2, x->c), *b = opt_tensor(L, 3, x->c, "linear", "bias");

	lt_push(L, tensor_linear(x->c, a, w, b, &e), ci, &e);
	return 1;
}

/* a:dot(b) = a:matmul(b) (tinygrad's dot is its matmul) */
static int
l_dot(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c), *b = lt_in_ctx(L, 2, x->c);

	lt_push(L, tensor_matmul(x->c, a, b, &e), ci, &e);
	return 1;
}

/* q:scaled_dot_product_attention(k, v [, attn_mask] [, {attn_mask=, is_causal=, enable_gqa=, dropout_p=}]) */
static int
l_sdpa(lua_State *L)
{
	static const TesselOpt keys[] = { { "attn_mask", NULL }, { "is_causal", "boolean" },
	                                  { "enable_gqa", "boolean" }, { "dropout_p", "number" }, { NULL, NULL } };
	const char *what = "scaled_dot_product_attention";
	int o = 0, mi = 0, ci;
	TCtxBox *x;
	Err e = { "" };
	UOp *q, *k, *v, *m = NULL;

	lua_settop(L, 5);
	if (lua_type(L, 4) == LUA_TTABLE && lua_isnil(L, 5))
		o = opts_at(L, 4, what, keys);
	else {
		mi = lua_isnil(L, 4) ? 0 : 4;
		o = opts_at(L, 5, what, keys);
	}
	if (fnum(L, o, "dropout_p", 0) != 0)
		return luaL_error(L, "%s: dropout_p must be 0 (random dropout is not part of tessel's tensors)", what);
	if (o && lua_getfield(L, o, "attn_mask") != LUA_TNIL) {
		if (mi)
			return luaL_error(L, "%s: attn_mask given twice", what);
		lua_replace(L, 4);
		mi = 4;
	} else if (o)
		lua_pop(L, 1);
	x = lt_current(L);
	ci = lua_gettop(L);
	q = lt_in_ctx(L, 1, x->c);
	k = lt_in_ctx(L, 2, x->c);
	v = lt_in_ctx(L, 3, x->c);
	if (mi)
		m = opt_tensor(L, mi, x->c, what, "attn_mask");
	lt_push(L, tensor_sdpa(x->c, q, k, v, m, fbool(L, o, "is_causal", 0), fbool(L, o, "enable_gqa", 0), &e), ci, &e);
	return 1;
}

/* ---- windows: conv2d and the pools (tinygrad's arguments) ---- */

/* the value at i: an integer for every one of nk axes, or a table of nk integers */
void
lt_nk_ints(lua_State *L, int i, int nk, int64_t *out, const char *what, const char *name)
{
	int64_t v[T_MAXDIM];
	int n, k;

	if (lua_isinteger(L, i)) {
		for (k = 0; k < nk; k++)
			out[k] = lua_tointeger(L, i);
		return;
	}
	if (lua_type(L, i) != LUA_TTABLE || (n = lt_get_shape(L, i, v, what)) != nk)
		luaL_error(L, "%s: %s must be an integer or a table of %d integers (one an axis)", what, name, nk);
	memcpy(out, v, sizeof(int64_t) * (size_t)nk);
}

/* opts.key as nk integers, def when absent */
void
lt_nk_field(lua_State *L, int o, const char *key, int nk, const int64_t *def, int64_t *out, const char *what)
{
	if (o && lua_getfield(L, o, key) != LUA_TNIL)
		lt_nk_ints(L, lua_gettop(L), nk, out, what, key);
	else
		memcpy(out, def, sizeof(int64_t) * (size_t)nk);
	if (o)
		lua_pop(L, 1);
}

/* tinygrad's padding: an integer, nk integers (each axis both sides) or 2 nk integers in
** torch's order (the last axis first, before then after) */
void
lt_pads_field(lua_State *L, int o, int nk, int64_t *before, int64_t *after, const char *what)
{
	int64_t v[T_MAXDIM];
	int n = 0, k;

	memset(before, 0, sizeof(int64_t) * (size_t)nk);
	memset(after, 0, sizeof(int64_t) * (size_t)nk);
	if (!o || lua_getfield(L, o, "padding") == LUA_TNIL) {
		if (o)
			lua_pop(L, 1);
		return;
	}
	if (lua_isinteger(L, -1)) {
		for (k = 0; k < nk; k++)
			before[k] = after[k] = lua_tointeger(L, -1);
	} else if (lua_type(L, -1) == LUA_TTABLE && (n = lt_get_shape(L, lua_gettop(L), v, what)) == nk) {
		for (k = 0; k < nk; k++)
			before[k] = after[k] = v[k];
	} else if (n == 2 * nk) {
		for (k = 0; k < nk; k++) {
			before[k] = v[2 * nk - 2 - 2 * k];
			after[k] = v[2 * nk - 1 - 2 * k];
		}
	} else
		luaL_error(L, "%s: padding must be an integer, %d integers (one an axis) or %d (torch's order: the last "
		           "axis first, before and after)", what, nk, 2 * nk);
	lua_pop(L, 1);
}

/* x:conv2d(weight [, bias] [, {groups = 1, stride = 1, dilation = 1, padding = 0}]) */
static int
l_conv2d(lua_State *L)
{
	static const TesselOpt keys[] = { { "groups", "integer" }, { "stride", NULL }, { "dilation", NULL },
	                                  { "padding", NULL }, { NULL, NULL } };
	const char *what = "conv2d";
	int64_t one[T_MAXDIM], st[T_MAXDIM], dl[T_MAXDIM], pb[T_MAXDIM], pa[T_MAXDIM], groups;
	int o, bi, nk, ci, k;
	TCtxBox *x;
	UOp *a, *w, *b;
	Err e = { "" };

	lua_settop(L, 4);
	if (lua_type(L, 3) == LUA_TTABLE && lua_isnil(L, 4)) {
		lua_rotate(L, 3, 1);   /* (x, w, opts, nil) -> (x, w, nil, opts) */
	}
	bi = 3;
	o = opts_at(L, 4, what, keys);
	x = lt_current(L);
	ci = lua_gettop(L);
	a = lt_in_ctx(L, 1, x->c);
	w = lt_in_ctx(L, 2, x->c);
	b = opt_tensor(L, bi, x->c, what, "bias");
	nk = w->ndim - 2;
	if (nk < 1 || nk > T_MAXDIM / 4)
		return luaL_error(L, "%s: the weight has rank %d; it is (cout, cin, *kernel)", what, w->ndim);
	for (k = 0; k < nk; k++)
		one[k] = 1;
	groups = o ? (int64_t)fnum(L, o, "groups", 1) : 1;
	lt_nk_field(L, o, "stride", nk, one, st, what);
	lt_nk_field(L, o, "dilation", nk, one, dl, what);
	lt_pads_field(L, o, nk, pb, pa, what);
	lt_push(L, tensor_conv2d(x->c, a, w, b, groups, st, dl, pb, pa, &e), ci, &e);
	return 1;
}

static int
pool(lua_State *L, int max)
{
	static const TesselOpt akeys[] = { { "stride", NULL }, { "dilation", NULL }, { "padding", NULL },
	                                   { "ceil_mode", "boolean" }, { "count_include_pad", "boolean" }, { NULL, NULL } };
	static const TesselOpt mkeys[] = { { "stride", NULL }, { "dilation", NULL }, { "padding", NULL },
	                                   { "ceil_mode", "boolean" }, { "return_indices", "boolean" }, { NULL, NULL } };
	const char *what = max ? "max_pool2d" : "avg_pool2d";
	int64_t ks[T_MAXDIM], one[T_MAXDIM], st[T_MAXDIM], dl[T_MAXDIM], pb[T_MAXDIM], pa[T_MAXDIM];
	int o, nk = 2, ci, k;
	TCtxBox *x;
	UOp *a, *r;
	Err e = { "" };

	lua_settop(L, 3);
	if (lua_type(L, 2) == LUA_TTABLE && lua_isnil(L, 3) && !lua_rawlen(L, 2))
		lua_rotate(L, 2, 1);   /* (x, opts, nil) -> (x, nil, opts) */
	o = opts_at(L, 3, what, max ? mkeys : akeys);
	if (lua_isnil(L, 2)) {
		ks[0] = ks[1] = 2;
	} else if (lua_isinteger(L, 2)) {
		ks[0] = ks[1] = lua_tointeger(L, 2);
	} else if (lua_type(L, 2) == LUA_TTABLE) {
		nk = lt_get_shape(L, 2, ks, what);
		if (nk < 1 || nk > T_MAXDIM / 4)
			return luaL_error(L, "%s: kernel_size has %d values", what, nk);
	} else
		return luaL_error(L, "%s: kernel_size must be an integer or a table of integers, got %s", what,
		                  luaL_typename(L, 2));
	for (k = 0; k < nk; k++)
		one[k] = 1;
	lt_nk_field(L, o, "stride", nk, ks, st, what);
	lt_nk_field(L, o, "dilation", nk, one, dl, what);
	lt_pads_field(L, o, nk, pb, pa, what);
	x = lt_current(L);
	ci = lua_gettop(L);
	a = lt_in_ctx(L, 1, x->c);
	if (max && fbool(L, o, "return_indices", 0)) {
		/* the values and their flat indices (interp/tensor/tensor_resample.c) */
		UOp *v;

		r = tensor_max_pool_indices(x->c, a, ks, st, dl, pb, pa, nk, fbool(L, o, "ceil_mode", 0), &v, &e);
		lt_push(L, r ? v : NULL, ci, &e);
		lt_push(L, r, ci, &e);
		return 2;
	}
	r = max ? tensor_max_pool(x->c, a, ks, st, dl, pb, pa, nk, fbool(L, o, "ceil_mode", 0), &e)
	        : tensor_avg_pool(x->c, a, ks, st, dl, pb, pa, nk, fbool(L, o, "ceil_mode", 0),
	                          fbool(L, o, "count_include_pad", 1), &e);
	lt_push(L, r, ci, &e);
	return 1;
}

/* t:unfold(dim, size, step) */
static int
l_unfold(lua_State *L)
{
	lua_settop(L, 4);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	int64_t dim = optint(L, 2, 0, "unfold", "dim"), size = optint(L, 3, 0, "unfold", "size");
	int64_t step = optint(L, 4, 0, "unfold", "step");
	UOp *a = lt_in_ctx(L, 1, x->c);

	if (lua_isnil(L, 2) || lua_isnil(L, 3) || lua_isnil(L, 4))
		return luaL_error(L, "unfold: t:unfold(dim, size, step) takes three integers");
	lt_push(L, tensor_unfold(x->c, a, dim, size, step, &e), ci, &e);
	return 1;
}

static int l_avg_pool2d(lua_State *L) { return pool(L, 0); }
static int l_max_pool2d(lua_State *L) { return pool(L, 1); }

/* ---- losses: x:loss(y [, options]) ---- */

enum { L_CE, L_SCCE, L_NLL, L_BCE, L_BCEL };

static int
loss(lua_State *L, int which, const char *what)
{
	static const TesselOpt keys[][5] = {
		{ { "reduction", "string" }, { "label_smoothing", "number" }, { NULL, NULL } },
		{ { "reduction", "string" }, { "label_smoothing", "number" }, { "ignore_index", "integer" }, { NULL, NULL } },
		{ { "reduction", "string" }, { "weight", NULL }, { "ignore_index", "integer" }, { NULL, NULL } },
		{ { "reduction", "string" }, { NULL, NULL } },
		{ { "reduction", "string" }, { "pos_weight", NULL }, { NULL, NULL } },
	};
	lua_settop(L, 3);
	int o = opts_at(L, 3, what, keys[which]), ci;
	TReduction red = reduction_arg(L, o, what);
	TCtxBox *x;
	Err e = { "" };
	UOp *a, *y, *w = NULL, *r = NULL;
	int64_t ign = -1;
	int has_ign = 0;

	lua_pushnil(L);   /* slot 4: the weight tensor, below the context */
	if (o && (which == L_NLL || which == L_BCEL)) {
		lua_getfield(L, o, which == L_NLL ? "weight" : "pos_weight");
		if (!lua_isnil(L, -1) && !luaL_testudata(L, -1, TENSOR))
			return luaL_error(L, "%s: %s must be a tensor", what, which == L_NLL ? "weight" : "pos_weight");
		lua_replace(L, 4);
	}
	if (o && lua_getfield(L, o, "ignore_index") != LUA_TNIL) {
		ign = lua_tointeger(L, -1);
		has_ign = 1;
	}
	if (o)
		lua_pop(L, 1);
	x = lt_current(L);
	ci = lua_gettop(L);
	a = lt_in_ctx(L, 1, x->c);
	y = lt_operand(L, 2, x->c, (DType)a->dtype, what);
	if (!lua_isnil(L, 4))
		w = lt_in_ctx(L, 4, x->c);
	switch (which) {
	case L_CE: r = tensor_cross_entropy(x->c, a, y, red, fnum(L, o, "label_smoothing", 0), &e); break;
	case L_SCCE:
		r = tensor_sparse_categorical_crossentropy(x->c, a, y, ign, fnum(L, o, "label_smoothing", 0), red, &e);
		break;
	case L_NLL: r = tensor_nll_loss(x->c, a, y, w, has_ign ? &ign : NULL, red, &e); break;
	case L_BCE: r = tensor_binary_crossentropy(x->c, a, y, red, &e); break;
	case L_BCEL: r = tensor_binary_crossentropy_logits(x->c, a, y, red, w, &e); break;
	}
	lt_push(L, r, ci, &e);
	return 1;
}

static int l_cross_entropy(lua_State *L) { return loss(L, L_CE, "cross_entropy"); }
static int l_scce(lua_State *L) { return loss(L, L_SCCE, "sparse_categorical_crossentropy"); }
static int l_nll_loss(lua_State *L) { return loss(L, L_NLL, "nll_loss"); }
static int l_bce(lua_State *L) { return loss(L, L_BCE, "binary_crossentropy"); }
static int l_bcel(lua_State *L) { return loss(L, L_BCEL, "binary_crossentropy_logits"); }

/* ---- sizes, selection by a mask, folds, likes ---- */

/* t:pad_to({sizes}), t:shrink_to({sizes}): -1 or false keeps an axis (tinygrad's None) */
static int
to_shape(lua_State *L, int pad)
{
	const char *what = pad ? "pad_to" : "shrink_to";
	int64_t s[T_MAXDIM];
	int n, i;
	TCtxBox *x;
	Err e = { "" };

	lua_settop(L, 2);   /* the context goes above the arguments */
	lt_check(L, 1);
	luaL_checktype(L, 2, LUA_TTABLE);
	n = (int)luaL_len(L, 2);
	if (n > T_MAXDIM)
		return luaL_error(L, "%s: %d sizes (at most %d)", what, n, T_MAXDIM);
	for (i = 0; i < n; i++) {
		lua_geti(L, 2, i + 1);
		if (lua_isboolean(L, -1) && !lua_toboolean(L, -1))
			s[i] = -1;
		else if (lua_isinteger(L, -1))
			s[i] = lua_tointeger(L, -1);
		else
			return luaL_error(L, "%s: size %d is a %s; sizes are integers, -1 or false keeping the axis", what, i + 1,
			                  luaL_typename(L, -1));
		lua_pop(L, 1);
	}
	x = lt_current(L);
	lt_push(L, pad ? tensor_pad_to(x->c, lt_in_ctx(L, 1, x->c), s, n, &e)
	               : tensor_shrink_to(x->c, lt_in_ctx(L, 1, x->c), s, n, &e), -1, &e);
	return 1;
}

static int l_pad_to(lua_State *L) { return to_shape(L, 1); }
static int l_shrink_to(lua_State *L) { return to_shape(L, 0); }

/* t:rearrange(formula [, {name = size, ...}]) */
static int
l_rearrange(lua_State *L)
{
	const char *names[T_MAXDIM * 2];
	int64_t sizes[T_MAXDIM * 2];
	int n = 0;
	TCtxBox *x;
	Err e = { "" };

	lua_settop(L, 3);   /* the context goes above the arguments */
	lt_check(L, 1);
	luaL_checkstring(L, 2);
	if (!lua_isnil(L, 3)) {
		luaL_checktype(L, 3, LUA_TTABLE);
		lua_pushnil(L);
		while (lua_next(L, 3)) {
			if (lua_type(L, -2) != LUA_TSTRING || !lua_isinteger(L, -1))
				return luaL_error(L, "rearrange: the sizes are {name = integer}, got a %s key with a %s",
				                  luaL_typename(L, -2), luaL_typename(L, -1));
			if (n == T_MAXDIM * 2)
				return luaL_error(L, "rearrange: more than %d sizes", T_MAXDIM * 2);
			names[n] = lua_tostring(L, -2);   /* the table keeps the key alive */
			sizes[n++] = lua_tointeger(L, -1);
			lua_pop(L, 1);
		}
	}
	x = lt_current(L);
	lt_push(L, tensor_rearrange(x->c, lt_in_ctx(L, 1, x->c), lua_tostring(L, 2), names, sizes, n, &e), -1, &e);
	return 1;
}

/* {size =, fill_value =} of masked_select and nonzero */
static void
select_opts(lua_State *L, int o, int64_t *size, const char *what)
{
	*size = -1;
	if (o && lua_getfield(L, o, "size") != LUA_TNIL) {
		*size = lua_tointeger(L, -1);
		if (*size < 0)
			luaL_error(L, "%s: size %d is negative", what, (int)*size);
	}
	if (o)
		lua_pop(L, 1);
}

static const TesselOpt select_keys[] = { { "size", "integer" }, { "fill_value", "number" }, { NULL, NULL } };

/* t:masked_select(mask [, {size =, fill_value = 0}]) */
static int
l_masked_select(lua_State *L)
{
	lua_settop(L, 3);   /* the context goes above the arguments */
	int o = opts_at(L, 3, "masked_select", select_keys);
	int64_t size;
	TCtxBox *x;
	UOp *a, *fill = NULL;
	Err e = { "" };

	select_opts(L, o, &size, "masked_select");
	x = lt_current(L);
	a = lt_in_ctx(L, 1, x->c);
	if (o && lua_getfield(L, o, "fill_value") != LUA_TNIL)
		fill = lt_operand(L, lua_gettop(L), x->c, (DType)a->dtype, "masked_select");
	lt_push(L, tensor_masked_select(x->c, a, lt_in_ctx(L, 2, x->c), size, fill, &e), 4, &e);
	return 1;
}

/* t:nonzero([{size =, fill_value = 0}]) */
static int
l_nonzero(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	int o = opts_at(L, 2, "nonzero", select_keys);
	int64_t size;
	TCtxBox *x;
	UOp *fill = NULL;
	Err e = { "" };

	select_opts(L, o, &size, "nonzero");
	x = lt_current(L);
	if (o && lua_getfield(L, o, "fill_value") != LUA_TNIL)
		fill = lt_operand(L, lua_gettop(L), x->c, DT_INT32, "nonzero");
	lt_push(L, tensor_nonzero(x->c, lt_in_ctx(L, 1, x->c), size, fill, &e), 3, &e);
	return 1;
}

/* t:usum(a, b, ...), t:uprod(...) */
static int
fold(lua_State *L, int prod, const char *what)
{
	int n = lua_gettop(L), i, ci;
	UOp *xs[64];
	TCtxBox *x;
	UOp *a;
	Err e = { "" };

	lt_check(L, 1);
	if (n - 1 > 64)
		return luaL_error(L, "%s: %d operands (at most 64)", what, n - 1);
	x = lt_current(L);
	ci = lua_gettop(L);
	a = lt_in_ctx(L, 1, x->c);
	for (i = 2; i <= n; i++)
		xs[i - 2] = lt_operand(L, i, x->c, (DType)a->dtype, what);
	lt_push(L, tensor_usum(x->c, a, xs, n - 1, prod, &e), ci, &e);
	return 1;
}

static int l_usum(lua_State *L) { return fold(L, 0, "usum"); }
static int l_uprod(lua_State *L) { return fold(L, 1, "uprod"); }

/* t:const_like(value [, dtype]): tinygrad's name for full_like */
static int l_const_like(lua_State *L) { return like(L, 2, 0, "const_like"); }

/* t:rand_like([{seed =, dtype =}]), t:randn_like(...): t's shape, t's dtype unless told */
static int
rand_like(lua_State *L, int normal, const char *what)
{
	static const TesselOpt keys[] = { { "seed", "integer" }, { "dtype", "string" }, { NULL, NULL } };
	lua_settop(L, 2);   /* the context goes above the arguments */
	int o = opts_at(L, 2, what, keys);
	UOp *u = lt_check(L, 1)->u;
	DType t = (DType)u->dtype;
	uint64_t seed = 0;
	TCtxBox *x;
	Err e = { "" };

	if (o && lua_getfield(L, o, "dtype") != LUA_TNIL)
		t = lt_get_dtype(L, -1, t, what);
	if (o && lua_getfield(L, o, "seed") != LUA_TNIL)
		seed = (uint64_t)lua_tointeger(L, -1);
	if (!dtype_is_float(t))
		return luaL_error(L, "%s: the tensor is %s; random values need a float dtype (give {dtype = ...})", what,
		                  dtype_name(t));
	x = lt_current(L);
	lt_push(L, normal ? tensor_randn(x->c, u->shape, u->ndim, t, seed, &e)
	                  : tensor_rand(x->c, u->shape, u->ndim, t, seed, &e), -1, &e);
	return 1;
}

static int l_rand_like(lua_State *L) { return rand_like(L, 0, "rand_like"); }
static int l_randn_like(lua_State *L) { return rand_like(L, 1, "randn_like"); }

/* t:clone(): a contiguous mark (tinygrad's clone allocates a buffer of its own) */
static int
l_contiguous_clone(lua_State *L)
{
	lua_settop(L, 1);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	Err e = { "" };
	UOp *a = lt_in_ctx(L, 1, x->c);

	lt_push(L, tensor_new(x->c, OP_CONTIGUOUS, (DType)a->dtype, &a, 1, 0, 0, NULL, NULL, 0, &e), 2, &e);
	return 1;
}

/* t:sequential({f, g, ...}) = g(f(t)): a Lua fold over Lua functions, no op of its own */
static int
l_sequential(lua_State *L)
{
	int i, n;

	lt_check(L, 1);
	luaL_checktype(L, 2, LUA_TTABLE);
	n = (int)luaL_len(L, 2);
	lua_pushvalue(L, 1);
	for (i = 1; i <= n; i++) {
		lua_geti(L, 2, i);
		if (!lua_isfunction(L, -1) && !luaL_getmetafield(L, -1, "__call"))
			return luaL_error(L, "sequential: entry %d is a %s, not a function", i, luaL_typename(L, -1));
		lua_insert(L, -2);
		lua_call(L, 1, 1);
	}
	return 1;
}

/* ---- registration ---- */

static const HelpReg funcs[] = {
	{ "eye", l_eye, "the identity matrix (tinygrad's eye)\n"
	  "tensor.eye(n [, m] [, dtype]) = (arange(n):reshape{n, 1} == arange(m)):cast(dtype); float32 by default" },
	{ "linspace", l_linspace, "evenly spaced values (tinygrad's linspace)\n"
	  "tensor.linspace(start, stop, steps [, dtype]) = start + arange(steps) * (stop - start) / (steps - 1)" },
	{ "randn", l_randn, "normal random numbers (Box-Muller over tensor.rand)\n"
	  "tensor.randn({2, 3}, {seed = 1, dtype = \"float32\"}) = cos(2 pi u0) sqrt(-2 log(1 - u1)),\n"
	  "(u0, u1) = tensor.rand({2, n}); reproducible for a seed (tinygrad's values differ: its generator's state)" },
	{ "normal", l_normal, "normal random numbers with a mean and std\n"
	  "tensor.normal({2, 3}, {mean = 0, std = 1, seed =, dtype =}) = std * randn + mean" },
	{ "uniform", l_uniform, "uniform random numbers in [low, high)\n"
	  "tensor.uniform({2, 3}, {low = 0, high = 1, seed =, dtype =}) = ((high - low) * rand):cast(dtype) + low" },
	{ "randint", l_randint, "uniform random integers in [low, high)\n"
	  "tensor.randint({2, 3}, {low = 0, high = 10, seed =, dtype = \"int32\"}): uniform's graph in an integer dtype" },
	{ "einsum", l_einsum, "Einstein summation (tinygrad's einsum)\n"
	  "tensor.einsum(\"ij,jk->ik\", a, b) or tensor.einsum(formula, {a, b}): operands permuted to sorted\n"
	  "letters, multiplied, summed over the letters not in the output; \"...\" and repeated letters\n"
	  "(diagonals) as numpy; without \"->\" the output is the letters seen once, sorted" },
	{ NULL, NULL, NULL }
};

static const HelpReg meths[] = {
	/* elementwise */
	{ "add", l_add, "a + b\na:add(b)" },
	{ "sub", l_sub, "a - b\na:sub(b)" },
	{ "mul", l_mul, "a * b\na:mul(b)" },
	{ "div", l_div, "a / b, or rounded\na:div(b [, rounding_mode]): nil (true division, float), \"trunc\" or \"floor\"\n"
	  "(integers: floor is //, trunc rounds toward zero)" },
	{ "mod", l_mod, "Python's remainder (the sign of b)\na:mod(b) = a % b" },
	{ "fmod", l_fmod, "C's remainder (the sign of a)\na:fmod(b): floats a - trunc(a / b) * b; integers a % b moved to a's sign" },
	{ "pow", l_pow, "a to the power b\na:pow(b) = a ^ b (Pow; an integer base with a float exponent is float)" },
	{ "neg", l_neg, "-x (bool: logical_not)\nt:neg()" },
	{ "logical_not", l_logical_not, "not x\nt:logical_not() = t:cast(\"bool\") != true" },
	{ "bitwise_not", l_bitwise_not, "~x\nt:bitwise_not() = x ~ all ones (bool: logical_not; floats refused)" },
	{ "bitwise_and", l_bitwise_and, "a & b\na:bitwise_and(b)" },
	{ "bitwise_or", l_bitwise_or, "a | b\na:bitwise_or(b)" },
	{ "bitwise_xor", l_bitwise_xor, "a ~ b (xor)\na:bitwise_xor(b)" },
	{ "lshift", l_lshift, "a << b\na:lshift(b)" },
	{ "rshift", l_rshift, "a >> b\na:rshift(b)" },
	{ "sign", l_sign, "-1, 0 or 1\nt:sign() = (x != 0):where((x < 0):where(-1, 1), 0), in x's dtype" },
	{ "abs", l_abs, "|x|\nt:abs() = x * sign(x)" },
	{ "square", l_square, "x * x\nt:square()" },
	{ "rsqrt", l_rsqrt, "1 / sqrt(x)\nt:rsqrt() = recip(sqrt(x))" },
	{ "floor", l_floor_, "round down\nt:floor() = (x < t):where(t - 1, t), t = trunc(x); integers unchanged" },
	{ "ceil", l_ceil, "round up\nt:ceil() = (x > t):where(t + 1, t), t = trunc(x); integers unchanged" },
	{ "round", l_round, "round half to even\nt:round() = ((x > 0) == even(trunc x)):where(ceil(x - 0.5), floor(x + 0.5));\n"
	  "integers become float32 (as tinygrad's)" },
	{ "isnan", l_isnan, "NaN test (bool)\nt:isnan() = x != x" },
	{ "isinf", l_isinf, "infinity test (bool)\nt:isinf([detect_positive [, detect_negative]]) = (x == inf) | (x == -inf)" },
	{ "isfinite", l_isfinite, "finite test (bool)\nt:isfinite() = not (isinf(x) | isnan(x))" },
	{ "log10", l_log10, "base-10 logarithm\nt:log10() = log2(x) * log10(2)" },
	{ "tan", l_tan, "tangent\nt:tan() = sin(x) / cos(x)" },
	{ "sinh", l_sinh, "hyperbolic sine\nt:sinh() = (exp(x) - exp(-x)) / 2" },
	{ "cosh", l_cosh, "hyperbolic cosine\nt:cosh() = (exp(x) + exp(-x)) / 2" },
	{ "asinh", l_asinh, "inverse hyperbolic sine\nt:asinh() = log(x + sqrt(x^2 + 1))" },
	{ "acosh", l_acosh, "inverse hyperbolic cosine\nt:acosh() = log(x + sqrt(x^2 - 1))" },
	{ "atanh", l_atanh, "inverse hyperbolic tangent\nt:atanh() = log((1 + x) / (1 - x)) / 2" },
	{ "asin", l_asin, "arcsine (polynomial, Abramowitz and Stegun 4.4.46; about 2e-8 absolute)\n"
	  "t:asin() = sign(x) (pi/2 - sqrt(1 - |x|) poly(|x|))" },
	{ "acos", l_acos, "arccosine\nt:acos() = pi/2 - asin(x)" },
	{ "atan", l_atan, "arctangent\nt:atan() = asin(x / sqrt(1 + x^2))" },
	{ "erf", l_erf, "the error function (Abramowitz and Stegun 7.1.26; about 1.5e-7 absolute)\n"
	  "t:erf() = sign(x) (1 - t poly(t) exp(-x^2)), t = 1 / (1 + 0.3275911 |x|)" },
	{ "clamp", l_clamp, "clip to [min, max]\nt:clamp([min] [, max]) = (r > max):where(max, r), r = (x < min):where(min, x);\n"
	  "nil: no bound (one is needed); bounds are numbers or tensors" },
	{ "clip", l_clamp, "clip to [min, max] (clamp)\nt:clip([min] [, max])" },
	{ "lerp", l_lerp, "linear interpolation\nt:lerp(end, weight) = x + (end - x) * weight" },
	{ "masked_fill", l_masked_fill, "replace where a mask is true\nt:masked_fill(mask, value) = mask:where(value, x) (mask bool)" },
	{ "copysign", l_copysign, "|a| with the sign of b\na:copysign(b) = ((b < 0) | (recip(b) < 0)):where(-|a|, |a|) (-0.0 counts as negative)" },
	{ "logaddexp", l_logaddexp, "log(exp(a) + exp(b)), stably\na:logaddexp(b) = log(exp(a - m) + exp(b - m)) + m, m = max(a, b)" },
	{ "isclose", l_isclose, "closeness test (bool)\na:isclose(b [, {rtol = 1e-5, atol = 1e-8, equal_nan = false}]):\n"
	  "finite and |a - b| <= atol + rtol |b|, or both the same infinity, or both NaN with equal_nan" },
	{ "allclose", l_allclose, "all elements close (a bool tensor of shape ())\na:allclose(b [, {rtol =, atol =, equal_nan =}]) = a:isclose(b, ...):all()" },
	/* activations */
	{ "relu6", l_relu6, "min(max(x, 0), 6)\nt:relu6() = relu(x) - relu(x - 6)" },
	{ "hardswish", l_hardswish, "x relu6(x + 3) / 6\nt:hardswish()" },
	{ "hardsigmoid", l_hardsigmoid, "piecewise linear sigmoid\nt:hardsigmoid([alpha = 1/6 [, beta = 0.5]]) = relu(alpha x + beta) - relu(alpha x + beta - 1)" },
	{ "hardtanh", l_hardtanh, "clamp to [min_val, max_val]\nt:hardtanh([min_val = -1 [, max_val = 1]])" },
	{ "leaky_relu", l_leaky_relu, "x, or slope x below 0\nt:leaky_relu([neg_slope = 0.01]) = (x < 0):where(neg_slope x, x)" },
	{ "elu", l_elu, "exponential linear unit\nt:elu([alpha = 1]) = relu(x) - alpha relu(1 - exp(x))" },
	{ "celu", l_celu, "continuously differentiable ELU\nt:celu([alpha = 1]) = max(x, 0) + min(alpha (exp(x / alpha) - 1), 0)" },
	{ "selu", l_selu, "scaled ELU\nt:selu([alpha = 1.67326 [, gamma = 1.0507]]) = gamma (x >= 0):where(x, alpha (exp(x) - 1))" },
	{ "softplus", l_softplus, "smooth relu\nt:softplus([beta = 1]) = logaddexp(beta x, 0) / beta" },
	{ "mish", l_mish, "x tanh(softplus(x))\nt:mish()" },
	{ "logsigmoid", l_logsigmoid, "log(sigmoid(x))\nt:logsigmoid() = -softplus(-x)" },
	{ "softsign", l_softsign, "x / (1 + |x|)\nt:softsign()" },
	{ "silu", l_silu, "x sigmoid(x)\nt:silu() (the same as swish)" },
	{ "swish", l_silu, "x sigmoid(x)\nt:swish() (the same as silu)" },
	{ "quick_gelu", l_quick_gelu, "x sigmoid(1.702 x)\nt:quick_gelu()" },
	{ "gelu", l_gelu, "Gaussian error linear unit\nt:gelu([approximate = \"tanh\"]): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)));\n"
	  "\"none\": 0.5 x (1 + erf(x / sqrt 2))" },
	/* dtype, sizes, likes */
	{ "float", l_float, "cast to float32\nt:float()" },
	{ "half", l_half, "cast to float16\nt:half()" },
	{ "double", l_double, "cast to float64\nt:double()" },
	{ "bfloat16", l_bfloat16, "cast to bfloat16\nt:bfloat16()" },
	{ "int", l_int, "cast to int32\nt:int()" },
	{ "long", l_long, "cast to int64\nt:long()" },
	{ "short", l_short, "cast to int16\nt:short()" },
	{ "bool", l_bool, "cast to bool\nt:bool()" },
	{ "size", l_size, "the shape, or one axis's size\nt:size([dim])" },
	{ "element_size", l_element_size, "bytes of one element\nt:element_size()" },
	{ "nbytes", l_nbytes, "bytes of the whole tensor\nt:nbytes()" },
	{ "is_floating_point", l_is_floating_point, "whether the dtype is a float\nt:is_floating_point()" },
	{ "zeros_like", l_zeros_like, "zeros of t's shape\nt:zeros_like([dtype])" },
	{ "ones_like", l_ones_like, "ones of t's shape\nt:ones_like([dtype])" },
	{ "full_like", l_full_like, "a constant of t's shape\nt:full_like(value [, dtype])" },
	/* shape */
	{ "squeeze", l_squeeze, "drop axes of size 1\nt:squeeze([dim]): all of them, or that one when its size is 1" },
	{ "unsqueeze", l_unsqueeze, "insert an axis of size 1\nt:unsqueeze(dim) (-ndim-1 <= dim <= ndim)" },
	{ "flatten", l_flatten, "merge axes into one\nt:flatten([start_dim = 0 [, end_dim = -1]])" },
	{ "unflatten", l_unflatten, "split an axis\nt:unflatten(dim, {sizes}) (one size may be -1)" },
	{ "view", l_view, "reshape\nt:view{2, -1} or t:view(2, -1)" },
	{ "cat", l_cat, "concatenate along an axis\na:cat(b, ... [, {dim = 0}]) or tensor.cat(a, b, ...): each padded to the\n"
	  "whole axis and selected by pad(ones):where; dtypes promote; other axes must match" },
	{ "stack", l_stack, "join along a new axis\na:stack(b, ... [, {dim = 0}]) (tensor.stack{a, b} stacks at 0)" },
	{ "split", l_split, "cut along an axis\nt:split(size | {sizes} [, dim = 0]) -> a table of shrinks; sizes sum to the axis" },
	{ "chunk", l_chunk, "cut into k pieces\nt:chunk(k [, dim = 0]) = t:split(ceil(n / k), dim) (fewer when they run out)" },
	{ "meshgrid", l_meshgrid, "coordinate grids\na:meshgrid(b, ... [, {indexing = \"ij\" | \"xy\"}]) -> a table of expanded tensors" },
	{ "tile", l_repeat, "tile the tensor (tinygrad's repeat: `repeat` is a Lua keyword)\n"
	  "t:tile(r0, r1, ...) or t:tile{...} = reshape{1, s}:expand{r, s}:reshape{r s} per axis; t[\"repeat\"](t, ...) too" },
	{ "repeat", l_repeat, "tile the tensor (t:tile: `repeat` is a Lua keyword)\nt[\"repeat\"](t, r0, r1, ...) = t:tile(r0, r1, ...)" },
	{ "repeat_interleave", l_repeat_interleave, "repeat each element\nt:repeat_interleave(repeats [, dim]) (no dim: flattened)" },
	{ "roll", l_roll, "rotate along axes\nt:roll(shifts [, dims]) = t:repeat(2 on dims):shrink(...); no dims: flattened" },
	{ "tril", l_tril, "lower triangle\nt:tril([diagonal = 0]) = tri:where(0, x) over the last two axes" },
	{ "triu", l_triu, "upper triangle\nt:triu([diagonal = 0]) = (arange(r):reshape{r, 1} + d <= arange(c)):where(x, 0)" },
	{ "diag", l_diag, "a diagonal matrix from a vector\nv:diag()" },
	{ "diagonal", l_diagonal, "the diagonal as the last axis\nt:diagonal([offset = 0 [, dim1 = 0 [, dim2 = 1]]])" },
	{ "one_hot", l_one_hot, "one-hot encoding (int32)\nt:one_hot(num_classes) = (t:reshape{..., 1} == arange(n)):where(1, 0)" },
	/* reductions, scans, sort */
	{ "any", l_any, "any true (bool)\nt:any([axis | {axes}] [, keepdim]) = t:cast(\"bool\"):max(...)" },
	{ "all", l_all, "all true (bool)\nt:all([axis | {axes}] [, keepdim]) = t:cast(\"bool\"):prod(...)" },
	{ "var", l_var, "variance\nt:var([axis | {axes}] [, keepdim [, correction = 1]]) = (x - mean):square():sum / max(n - correction, 0)" },
	{ "std", l_std, "standard deviation\nt:std([axis | {axes}] [, keepdim [, correction = 1]]) = sqrt(var)" },
	{ "var_mean", l_var_mean, "variance and mean\nt:var_mean([axis | {axes}] [, keepdim [, correction]]) -> var, mean" },
	{ "std_mean", l_std_mean, "standard deviation and mean\nt:std_mean([axis | {axes}] [, keepdim [, correction]]) -> std, mean" },
	{ "logsumexp", l_logsumexp, "log(sum(exp(x))), stably\nt:logsumexp([axis | {axes}] [, keepdim]) = log(exp(x - m):sum) + m, m = max" },
	{ "argmax", l_argmax, "index of the first maximum (int32)\nt:argmax([axis] [, keepdim]) (no axis: of the flattened tensor)" },
	{ "argmin", l_argmin, "index of the first minimum (int32)\nt:argmin([axis] [, keepdim]) = argmax(-x) (~x for integers)" },
	{ "softmin", l_softmin, "softmax of -x\nt:softmin([axis = -1])" },
	{ "cumprod", l_cumprod, "cumulative product\nt:cumprod(axis) = low(n):where(x, 1):prod(-1) along axis (n x n work)" },
	{ "cummax", l_cummax, "running maximum\nt:cummax([axis = 0]) -> values, indices (int32: the first position of the maximum)" },
	{ "cummin", l_cummin, "running minimum\nt:cummin([axis = 0]) -> values, indices" },
	{ "logcumsumexp", l_logcumsumexp, "log of the cumulative sum of exp\nt:logcumsumexp([axis = 0])" },
	{ "sort", l_sort, "sort along an axis (stable)\nt:sort([dim = -1 [, descending = false]]) -> values, indices (int32):\n"
	  "ranks from the n x n comparisons, values gathered by them; NaN has no place in the order" },
	{ "argsort", l_argsort, "the indices that sort\nt:argsort([dim = -1 [, descending = false]])" },
	{ "topk", l_topk, "the k largest (or smallest)\nt:topk(k [, dim = -1 [, largest = true]]) -> values, indices (sort, shrunk to k)" },
	/* layers */
	{ "normalize", l_normalize, "Lp normalization\nt:normalize([p = 2 [, dim = 1 [, eps = 1e-12]]]) = x / max(((|x|^p):sum(dim))^(1/p), eps)" },
	{ "layernorm", l_layernorm, "layer normalization (no affine)\nt:layernorm([axis = -1 | {axes} [, eps = 1e-5]]) = y rsqrt(mean(y y) + eps), y = x - mean(x)" },
	{ "batchnorm", l_batchnorm, "batch normalization with given statistics\n"
	  "x:batchnorm(weight, bias, mean, invstd [, axis = 1 | {axes}]) = (x - mean) weight invstd + bias (weight, bias may be nil)" },
	{ "linear", l_linear, "x w + b\nx:linear(weight [, bias]) = x:matmul(weight) (x * weight for a 1-D weight) + bias" },
	{ "dot", l_dot, "matrix product (tinygrad's dot is matmul)\na:dot(b)" },
	{ "scaled_dot_product_attention", l_sdpa, "attention (tinygrad's)\n"
	  "q:scaled_dot_product_attention(k, v [, attn_mask] [, {attn_mask =, is_causal =, enable_gqa =, dropout_p = 0}]) =\n"
	  "softmax(q:matmul(k^T) / sqrt(d) + mask):matmul(v); is_causal masks with ones:tril(); a bool mask adds 0 or -inf;\n"
	  "enable_gqa repeats k's and v's heads (axis -3) to q's" },
	/* windows */
	{ "conv2d", l_conv2d, "convolution (tinygrad's; any number of spatial axes)\n"
	  "x:conv2d(weight [, bias] [, {groups = 1, stride = 1, dilation = 1, padding = 0}]): x (batch, groups cin, *spatial),\n"
	  "weight (cout, cin, *kernel), bias (cout); stride, dilation: an integer or one an axis; padding: an integer,\n"
	  "one an axis, or two an axis in torch's order (last axis first). The windows are views (tinygrad's _pool),\n"
	  "multiplied by the weight and summed" },
	{ "avg_pool2d", l_avg_pool2d, "mean of each window (tinygrad's)\n"
	  "x:avg_pool2d([kernel_size = 2 | {kh, kw, ...}] [, {stride = kernel_size, dilation = 1, padding = 0,\n"
	  "ceil_mode = false, count_include_pad = true}]): over the last #kernel_size axes" },
	{ "unfold", l_unfold, "overlapping windows along an axis (tinygrad's)\n"
	  "t:unfold(dim, size, step): axis dim becomes (n_windows, size) with the window axis last,\n"
	  "n_windows = (n - size) // step + 1; views of t (tinygrad's _pool)" },
	{ "max_pool2d", l_max_pool2d, "maximum of each window (tinygrad's)\n"
	  "x:max_pool2d([kernel_size = 2 | {kh, kw, ...}] [, {stride = kernel_size, dilation = 1, padding = 0,\n"
	  "ceil_mode = false, return_indices = false}]): padding is the dtype's lowest value; return_indices gives\n"
	  "the values and the int32 flat index of each window's first maximum in the last #kernel_size axes\n"
	  "(tinygrad's; x:max_unpool2d takes them)" },
	/* losses */
	{ "cross_entropy", l_cross_entropy, "cross entropy of logits\nx:cross_entropy(y [, {reduction = \"mean\", label_smoothing = 0}]):\n"
	  "y class indices (x's shape without axis 1, or 0 for 1-D x) or probabilities (x's shape)" },
	{ "sparse_categorical_crossentropy", l_scce, "cross entropy of logits over the last axis\n"
	  "x:sparse_categorical_crossentropy(y [, {ignore_index = -1, label_smoothing = 0, reduction = \"mean\"}])" },
	{ "nll_loss", l_nll_loss, "negative log likelihood of log-probabilities (axis 1)\n"
	  "x:nll_loss(y [, {weight =, ignore_index =, reduction = \"mean\"}])" },
	{ "binary_crossentropy", l_bce, "binary cross entropy of probabilities\nx:binary_crossentropy(y [, {reduction = \"mean\"}]) = -y log x - (1 - y) log(1 - x)" },
	{ "binary_crossentropy_logits", l_bcel, "binary cross entropy of logits\n"
	  "x:binary_crossentropy_logits(y [, {reduction = \"mean\", pos_weight =}]) = -(pw y logsigmoid(x) + (1 - y) logsigmoid(-x))" },
	{ "pad_to", l_pad_to, "zeros after each axis's end, up to a shape (tinygrad's pad_to)\n"
	  "t:pad_to({sizes}): -1 or false keeps an axis" },
	{ "shrink_to", l_shrink_to, "the first elements of each axis, down to a shape (tinygrad's shrink_to)\n"
	  "t:shrink_to({sizes}): -1 or false keeps an axis" },
	{ "rearrange", l_rearrange, "einops' rearrange (tinygrad's)\n"
	  "t:rearrange(\"b (h w) c -> b h w c\" [, {h = 2}]): \"...\" stands for the unnamed axes, \"1\" or \"()\" an\n"
	  "axis of size 1; a reshape into the named axes, a permute, a reshape merging the groups" },
	{ "masked_select", l_masked_select, "the elements where a bool mask is true, row-major (tinygrad's)\n"
	  "t:masked_select(mask [, {size =, fill_value = 0}]): without size, as many as the mask has (counted\n"
	  "from the values, so not for params); with size, that many, padded with fill_value or cut" },
	{ "nonzero", l_nonzero, "the indices of the nonzero elements, (count, rank) int32 (tinygrad's)\n"
	  "t:nonzero([{size =, fill_value = 0}]): size and fill_value as masked_select's" },
	{ "usum", l_usum, "t + a + b ... (| for bool; tinygrad's usum)\nt:usum(a, b, ...)" },
	{ "uprod", l_uprod, "t * a * b ... (& for bool; tinygrad's uprod)\nt:uprod(a, b, ...)" },
	{ "const_like", l_const_like, "a constant of t's shape (tinygrad's const_like)\nt:const_like(value [, dtype])" },
	{ "clone", l_contiguous_clone, "a copy of t in its own buffer (tinygrad's clone: contiguous)\nt:clone()" },
	{ "rand_like", l_rand_like, "uniform random numbers in [0, 1) of t's shape (tensor.rand)\n"
	  "t:rand_like([{seed = 0, dtype = t.dtype}])" },
	{ "randn_like", l_randn_like, "normal random numbers of t's shape (tensor.randn)\n"
	  "t:randn_like([{seed = 0, dtype = t.dtype}])" },
	{ "sequential", l_sequential, "functions applied in turn (tinygrad's sequential)\n"
	  "t:sequential({f, g, ...}) = g(f(t))" },
	{ NULL, NULL, NULL }
};

void
tessel_open_tensor_ops(lua_State *L)
{
	help_setfuncs(L, funcs, "tensor.");
	lua_pushcfunction(L, l_cat);
	lua_setfield(L, -2, "cat");   /* tensor.cat(a, b, ...): the method (its help is Tensor:cat's) */
	lua_getfield(L, -1, "methods");
	help_setfuncs(L, meths, "Tensor:");
	lua_pop(L, 1);
}

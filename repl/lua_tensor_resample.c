/* lua_tensor_resample.c - tinygrad's interpolate, conv_transpose2d, max_unpool2d and scatter_reduce (interp/tensor/tensor_resample.c) as tensor methods. */
#include <lauxlib.h>
#include <lua.h>
#include <string.h>

#include "../interp/tensor/tensor.h"
#include "help.h"
#include "lua_tensor.h"
#include "tessel.h"

/*
** Each binding checks and converts its arguments, makes one call into
** interp/tensor/ and pushes the result (lua_tensor.h says how). Positional
** arguments follow tinygrad's order; its keyword arguments come in an
** options table, checked by tessel_checkopts. max_pool2d's return_indices is
** lua_tensor_ops.c's, with the pools.
*/

/* ---- argument helpers ---- */

/* The options table at i (or 0 when absent), checked against keys. */
static int
opts_at(lua_State *L, int i, const char *what, const TesselOpt *keys)
{
	return tessel_checkopts(L, i, what, keys) ? i : 0;
}

/* ---- shims ---- */

/* x:interpolate(size [, {mode = "linear", align_corners = false}]) */
static int
l_interpolate(lua_State *L)
{
	static const TesselOpt keys[] = { { "mode", "string" }, { "align_corners", "boolean" }, { NULL, NULL } };
	const char *what = "interpolate", *mode = "linear";
	int64_t size[T_MAXDIM];
	int o, n, ac = 0, ci;
	TCtxBox *x;
	Err e = { "" };
	UOp *a;

	lua_settop(L, 3);
	o = opts_at(L, 3, what, keys);
	if (lua_type(L, 2) != LUA_TTABLE)
		return luaL_error(L, "%s: size must be a table of integers (the sizes of the last #size axes), got %s", what,
		                  luaL_typename(L, 2));
	n = lt_get_shape(L, 2, size, what);
	if (o) {
		lua_getfield(L, o, "mode");
		mode = lua_isnil(L, -1) ? "linear" : lua_tostring(L, -1);   /* the options table keeps it alive */
		lua_getfield(L, o, "align_corners");
		ac = lua_toboolean(L, -1);
		lua_pop(L, 2);
	}
	x = lt_current(L);
	ci = lua_gettop(L);
	a = lt_in_ctx(L, 1, x->c);
	lt_push(L, tensor_interpolate(x->c, a, size, n, mode, ac, &e), ci, &e);
	return 1;
}

/* x:conv_transpose2d(weight [, bias] [, {groups = 1, stride = 1, dilation = 1, padding = 0, output_padding = 0}]) */
static int
l_conv_transpose2d(lua_State *L)
{
	static const TesselOpt keys[] = { { "groups", "integer" }, { "stride", NULL }, { "dilation", NULL },
	                                  { "padding", NULL }, { "output_padding", NULL }, { NULL, NULL } };
	const char *what = "conv_transpose2d";
	int64_t one[T_MAXDIM], zero[T_MAXDIM], st[T_MAXDIM], dl[T_MAXDIM], pb[T_MAXDIM], pa[T_MAXDIM], op[T_MAXDIM];
	int64_t groups = 1;
	int o, nk, ci, k;
	TCtxBox *x;
	UOp *a, *w, *b = NULL;
	Err e = { "" };

	lua_settop(L, 4);
	if (lua_type(L, 3) == LUA_TTABLE && lua_isnil(L, 4))
		lua_rotate(L, 3, 1);   /* (x, w, opts, nil) -> (x, w, nil, opts) */
	o = opts_at(L, 4, what, keys);
	if (!lua_isnil(L, 3) && !luaL_testudata(L, 3, TENSOR))
		return luaL_error(L, "%s: bias must be a tensor or nil, got %s", what, luaL_typename(L, 3));
	nk = lt_check(L, 2)->u->ndim - 2;
	if (nk < 1 || nk > T_MAXDIM / 2 - 1)
		return luaL_error(L, "%s: the weight has rank %d; it is (cin, cout/groups, *kernel)", what, nk + 2);
	for (k = 0; k < nk; k++) {
		one[k] = 1;
		zero[k] = 0;
	}
	if (o && lua_getfield(L, o, "groups") != LUA_TNIL)
		groups = lua_tointeger(L, -1);
	if (o)
		lua_pop(L, 1);
	lt_nk_field(L, o, "stride", nk, one, st, what);
	lt_nk_field(L, o, "dilation", nk, one, dl, what);
	lt_nk_field(L, o, "output_padding", nk, zero, op, what);
	lt_pads_field(L, o, nk, pb, pa, what);
	x = lt_current(L);
	ci = lua_gettop(L);
	a = lt_in_ctx(L, 1, x->c);
	w = lt_in_ctx(L, 2, x->c);
	if (!lua_isnil(L, 3))
		b = lt_in_ctx(L, 3, x->c);
	lt_push(L, tensor_conv_transpose2d(x->c, a, w, b, groups, st, dl, pb, pa, op, &e), ci, &e);
	return 1;
}

/* x:max_unpool2d(indices [, kernel_size = 2 | {k...}] [, {stride = kernel_size, dilation = 1, padding = 0,
** output_size}]) */
static int
l_max_unpool2d(lua_State *L)
{
	static const TesselOpt keys[] = { { "stride", NULL }, { "dilation", NULL }, { "padding", NULL },
	                                  { "output_size", "table" }, { NULL, NULL } };
	const char *what = "max_unpool2d";
	int64_t ks[T_MAXDIM], one[T_MAXDIM], st[T_MAXDIM], dl[T_MAXDIM], pb[T_MAXDIM], pa[T_MAXDIM], os[T_MAXDIM];
	int o, nk, nos = -1, ci, k;
	TCtxBox *x;
	UOp *a, *idx;
	Err e = { "" };

	lua_settop(L, 4);
	if (lua_type(L, 3) == LUA_TTABLE && lua_isnil(L, 4) && !lua_rawlen(L, 3))
		lua_rotate(L, 3, 1);   /* (x, i, opts, nil) -> (x, i, nil, opts) */
	o = opts_at(L, 4, what, keys);
	nk = lt_check(L, 1)->u->ndim - 2;
	if (nk < 1)
		nk = 1;   /* tensor_max_unpool refuses the input */
	for (k = 0; k < nk; k++) {
		one[k] = 1;
		ks[k] = 2;
	}
	if (!lua_isnil(L, 3))
		lt_nk_ints(L, 3, nk, ks, what, "kernel_size");
	lt_nk_field(L, o, "stride", nk, ks, st, what);
	lt_nk_field(L, o, "dilation", nk, one, dl, what);
	lt_pads_field(L, o, nk, pb, pa, what);
	if (o && lua_getfield(L, o, "output_size") != LUA_TNIL)
		nos = lt_get_shape(L, lua_gettop(L), os, what);
	if (o)
		lua_pop(L, 1);
	x = lt_current(L);
	ci = lua_gettop(L);
	a = lt_in_ctx(L, 1, x->c);
	idx = lt_in_ctx(L, 2, x->c);
	lt_push(L, tensor_max_unpool(x->c, a, idx, ks, st, dl, pb, pa, nos < 0 ? NULL : os, nos, &e), ci, &e);
	return 1;
}

/* x:scatter_reduce(dim, index, src, reduce [, {include_self = true}]) */
static int
l_scatter_reduce(lua_State *L)
{
	static const TesselOpt keys[] = { { "include_self", "boolean" }, { NULL, NULL } };
	const char *what = "scatter_reduce", *reduce;
	lua_Integer dim;
	int o, inc = 1, ci;
	TCtxBox *x;
	UOp *a, *idx, *src;
	Err e = { "" };

	lua_settop(L, 6);
	o = opts_at(L, 6, what, keys);
	dim = luaL_checkinteger(L, 2);
	if (lua_type(L, 5) != LUA_TSTRING)
		return luaL_error(L, "%s: reduce must be a string (sum, prod, mean, amax, amin), got %s", what,
		                  luaL_typename(L, 5));
	reduce = lua_tostring(L, 5);
	if (o && lua_getfield(L, o, "include_self") != LUA_TNIL)
		inc = lua_toboolean(L, -1);
	if (o)
		lua_pop(L, 1);
	x = lt_current(L);
	ci = lua_gettop(L);
	a = lt_in_ctx(L, 1, x->c);
	idx = lt_in_ctx(L, 3, x->c);
	src = lt_in_ctx(L, 4, x->c);
	lt_push(L, tensor_scatter_reduce(x->c, a, dim, idx, src, reduce, inc, &e), ci, &e);
	return 1;
}

/* ---- registration ---- */

static const HelpReg meths[] = {
	{ "interpolate", l_interpolate, "resize the last axes (tinygrad's interpolate)\n"
	  "x:interpolate({sizes...} [, {mode = \"linear\", align_corners = false}]): the last #sizes axes resized,\n"
	  "each by gathers along it; mode \"linear\" (lerp of the two neighbours in float32; align_corners maps\n"
	  "corner to corner, else half-pixel centers), \"nearest\" (index int(in/out i)) or \"nearest-exact\"\n"
	  "(int(in/out (i + 0.5))); align_corners only with linear; the result has x's dtype (integers truncate)" },
	{ "conv_transpose2d", l_conv_transpose2d, "transposed convolution (tinygrad's; any number of spatial axes)\n"
	  "x:conv_transpose2d(weight [, bias] [, {groups = 1, stride = 1, dilation = 1, padding = 0, output_padding = 0}]):\n"
	  "x (batch, cin, *spatial), weight (cin, cout/groups, *kernel), bias (cout); stride, dilation, output_padding:\n"
	  "an integer or one an axis; padding: an integer, one an axis, or two an axis in torch's order (last axis\n"
	  "first). Built as tinygrad builds it: x spread by the stride, conv2d with the flipped weight and padding\n"
	  "(k-1) d - p before, (k-1) d - p + output_padding after" },
	{ "max_unpool2d", l_max_unpool2d, "partial inverse of max_pool2d (tinygrad's max_unpool2d)\n"
	  "x:max_unpool2d(indices [, kernel_size = 2 | {kh, kw, ...}] [, {stride = kernel_size, dilation = 1, padding = 0,\n"
	  "output_size}]): x and indices (batch, c, *spatial) as x:max_pool2d(k, {return_indices = true}) gives them;\n"
	  "each value goes to its flat position in zeros of output_size (its last #spatial values; default the pool's\n"
	  "inverse size (i - 1) stride - (padding before + after) + dilation (k - 1) + 1); values at one position add up" },
	{ "scatter_reduce", l_scatter_reduce, "reduce src into x at indices along an axis (tinygrad's scatter_reduce)\n"
	  "x:scatter_reduce(dim, index, src, reduce [, {include_self = true}]): reduce \"sum\", \"prod\", \"mean\", \"amax\"\n"
	  "or \"amin\" of x[..., index[..., i, ...], ...] and the src[..., i, ...] that land there (one-hot masks);\n"
	  "include_self = false leaves x's value out where something lands; x and src of one dtype, index fits\n"
	  "in src and, but on dim, in x; mean is float (float32 for integers), sum in sum's dtype" },
	{ NULL, NULL, NULL }
};

void
tessel_open_tensor_resample(lua_State *L)
{
	lua_getfield(L, -1, "methods");
	help_setfuncs(L, meths, "Tensor:");
	lua_pop(L, 1);
}

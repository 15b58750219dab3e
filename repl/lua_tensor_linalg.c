/* lua_tensor_linalg.c - tinygrad's qr, svd and newton_schulz (interp/tensor/tensor_linalg.c) as tensor methods. */
#include <lauxlib.h>
#include <lua.h>

#include "../interp/tensor/tensor.h"
#include "help.h"
#include "lua_tensor.h"
#include "tessel.h"

/*
** Thin shims as in lua_tensor_ops.c: arguments checked and converted before
** anything is built, one call into the core, the results pushed with lt_push.
** A tuple of tinygrad's is several return values.
*/

enum { MAXPARAMS = 64 };   /* newton_schulz's coefficients: a polynomial of degree 127 is plenty */

/* t:qr() -> Q, R */
static int
l_qr(lua_State *L)
{
	lua_settop(L, 1);   /* the context goes above the arguments */
	TCtxBox *x = lt_current(L);
	int ci = lua_gettop(L);
	Err e = { "" };
	UOp *q, *r;

	if (tensor_qr(x->c, lt_in_ctx(L, 1, x->c), &q, &r, &e) < 0)
		return luaL_error(L, "%s", e.msg);
	lt_push(L, q, ci, &e);
	lt_push(L, r, ci, &e);
	return 2;
}

/* t:svd([full_matrices = true]) -> U, S, V^T */
static int
l_svd(lua_State *L)
{
	lua_settop(L, 2);   /* the context goes above the arguments */
	int full = 1, ci;
	TCtxBox *x;
	Err e = { "" };
	UOp *u, *s, *v;

	if (!lua_isnil(L, 2)) {
		if (lua_type(L, 2) != LUA_TBOOLEAN)
			return luaL_error(L, "svd: full_matrices must be a boolean, got %s", luaL_typename(L, 2));
		full = lua_toboolean(L, 2);
	}
	lt_check(L, 1);
	x = lt_current(L);
	ci = lua_gettop(L);
	if (tensor_svd(x->c, lt_in_ctx(L, 1, x->c), full, &u, &s, &v, &e) < 0)
		return luaL_error(L, "%s", e.msg);
	lt_push(L, u, ci, &e);
	lt_push(L, s, ci, &e);
	lt_push(L, v, ci, &e);
	return 3;
}

/* t:newton_schulz(steps, {params...} [, eps = 1e-7]) */
static int
l_newton_schulz(lua_State *L)
{
	lua_settop(L, 4);   /* the context goes above the arguments */
	double p[MAXPARAMS], eps = 1e-7;
	lua_Integer steps;
	int n, i, ci;
	TCtxBox *x;
	Err e = { "" };

	lt_check(L, 1);
	if (!lua_isinteger(L, 2))
		return luaL_error(L, "newton_schulz: steps must be an integer, got %s",
		                  lua_type(L, 2) == LUA_TNUMBER ? "a float" : luaL_typename(L, 2));
	steps = lua_tointeger(L, 2);
	if (steps < 0 || steps > 1 << 20)
		return luaL_error(L, "newton_schulz: steps = %I is out of range (0 to %d)", (lua_Integer)steps, 1 << 20);
	if (lua_type(L, 3) != LUA_TTABLE)
		return luaL_error(L, "newton_schulz: params must be a table of numbers, got %s", luaL_typename(L, 3));
	tessel_checkseq(L, 3, "newton_schulz: params");
	n = (int)luaL_len(L, 3);
	if (n < 1 || n > MAXPARAMS)
		return luaL_error(L, "newton_schulz: params has %d coefficients (1 to %d)", n, MAXPARAMS);
	for (i = 0; i < n; i++) {
		if (lua_geti(L, 3, i + 1) != LUA_TNUMBER)
			return luaL_error(L, "newton_schulz: params[%d] is a %s, not a number", i + 1, luaL_typename(L, -1));
		p[i] = lua_tonumber(L, -1);
		lua_pop(L, 1);
	}
	if (!lua_isnil(L, 4)) {
		if (lua_type(L, 4) != LUA_TNUMBER)
			return luaL_error(L, "newton_schulz: eps must be a number, got %s", luaL_typename(L, 4));
		eps = lua_tonumber(L, 4);
	}
	x = lt_current(L);
	ci = lua_gettop(L);
	lt_push(L, tensor_newton_schulz(x->c, lt_in_ctx(L, 1, x->c), (int)steps, p, n, eps, &e), ci, &e);
	return 1;
}

static const HelpReg meths[] = {
	{ "qr", l_qr, "QR decomposition (tinygrad's Householder)\nt:qr() -> Q, R: Q (.., m, m) orthogonal, R (.., m, n) "
	  "upper triangular, t = Q R;\none reflection per column i < min(m, n): R -= w (v^T R), Q -= (Q v) w^T; "
	  "R's diagonal has the sign of -x0\n(a zero column is left alone); axes before the last two are a batch; "
	  "integers become float32" },
	{ "svd", l_svd, "singular value decomposition (tinygrad's)\nt:svd([full_matrices = true]) -> U, S, Vt: "
	  "t = U diag(S) Vt, S (.., min(m, n)) sorted descending;\nU (.., m, m), Vt (.., n, n) "
	  "(full_matrices = false: (.., m, k), (.., k, n), k = min(m, n)).\nqr first (of t^T when m < n), then "
	  "4 k rounds of one-sided Jacobi on round robin column pairs,\nunrolled into the graph: "
	  "k = 48 realizes in about half a second; past k = 50 the graph is deeper than the IR allows (refused)" },
	{ "newton_schulz", l_newton_schulz, "Newton-Schulz iteration of an odd polynomial (tinygrad's)\n"
	  "t:newton_schulz(steps, {p0, p1, ...} [, eps = 1e-7]): G = t / (|t|_F + eps), then steps times\n"
	  "G = p0 G + p1 (G G^T) G + p2 (G G^T)^2 G + ... (m > n: on t^T, transposed back);\n"
	  "{3.4445, -4.7750, 2.0315} is Muon's orthogonalization" },
	{ NULL, NULL, NULL }
};

void
tessel_open_tensor_linalg(lua_State *L)
{
	lua_getfield(L, -1, "methods");
	help_setfuncs(L, meths, "Tensor:");
	lua_pop(L, 1);
}

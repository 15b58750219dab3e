/* lua_axe.c - the `axe` Lua table: Axe layouts over named axes, their operators and pictures. */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "../layout/layout.h"
#include "../layout/lower.h"
#include "../viz/viz.h"
#include "help.h"
#include "tessel.h"

#define AXE_LAYOUT "axe.Layout"
#define AXE_ITER   "axe.Iter"

/* A layout value and the logical shape it was made for (if any): the shape
** lets L(i, j) and show(L) use 2-D coordinates; it is not part of the value
** (==, tostring). */
typedef struct LAxe {
	AxeLayout l;
	AxeShape sh;
	int has_shape;
} LAxe;

static int
fail(lua_State *L, const Err *e)
{
	return luaL_error(L, "%s", e->msg);
}

static LAxe *
push_axe(lua_State *L, const AxeLayout *l, const AxeShape *sh)
{
	LAxe *u = lua_newuserdatauv(L, sizeof *u, 0);

	u->l = *l;
	u->has_shape = sh != NULL;
	if (sh)
		u->sh = *sh;
	else
		u->sh.n = 0;
	luaL_setmetatable(L, AXE_LAYOUT);
	return u;
}

/* A shape argument: an integer, a table of integers, or "(8,16)". */
static void
check_shape(lua_State *L, int i, AxeShape *sh)
{
	Err e;
	int n, k;

	if (lua_type(L, i) == LUA_TSTRING) {
		if (axe_shape_parse(lua_tostring(L, i), sh, &e) < 0)
			luaL_argerror(L, i, e.msg);
		return;
	}
	if (lua_isinteger(L, i)) {
		sh->n = 1;
		sh->v[0] = lua_tointeger(L, i);
		if (sh->v[0] < 1)
			luaL_argerror(L, i, "a shape extent is >= 1");
		return;
	}
	if (lua_type(L, i) != LUA_TTABLE)
		luaL_typeerror(L, i, "shape (integer, table of integers or \"(8,16)\")");
	tessel_checkseq(L, i, "axe: a shape");
	n = (int)luaL_len(L, i);
	if (n < 1 || n > AXE_RANK)
		luaL_argerror(L, i, "a shape has 1 to 16 extents");
	for (k = 1; k <= n; k++) {
		int isint;
		lua_geti(L, i, k);
		sh->v[k - 1] = lua_tointegerx(L, -1, &isint);
		lua_pop(L, 1);
		if (!isint || sh->v[k - 1] < 1)
			luaL_argerror(L, i, "a shape's extents are integers >= 1");
	}
	sh->n = n;
}

static void
push_shape(lua_State *L, const AxeShape *sh)
{
	int i;

	lua_createtable(L, sh->n, 0);
	for (i = 0; i < sh->n; i++) {
		lua_pushinteger(L, sh->v[i]);
		lua_rawseti(L, -2, i + 1);
	}
}

/* A layout argument: an axe.Layout or a notation string. sh is set when it carries one. */
static const AxeLayout *
check_axe(lua_State *L, int i, AxeLayout *tmp, const AxeShape **sh)
{
	LAxe *u = luaL_testudata(L, i, AXE_LAYOUT);
	Err e;

	if (sh)
		*sh = NULL;
	if (u) {
		if (sh && u->has_shape)
			*sh = &u->sh;
		return &u->l;
	}
	if (lua_type(L, i) == LUA_TSTRING) {
		if (axe_parse(lua_tostring(L, i), tmp, &e) < 0)
			luaL_argerror(L, i, e.msg);
		return tmp;
	}
	luaL_typeerror(L, i, "axe layout (or notation string)");
	return NULL;
}

/* The shape at arg i if present, else the layout's own, else (size). */
static int
is_mesh(lua_State *L, int i)
{
	int t;

	if (lua_type(L, i) != LUA_TTABLE)
		return 0;
	t = lua_geti(L, i, 1);
	lua_pop(L, 1);
	return t == LUA_TTABLE;
}

static int
opt_shape(lua_State *L, int i, const AxeLayout *l, const AxeShape *own, AxeShape *out)
{
	if (!lua_isnoneornil(L, i) && !luaL_testudata(L, i, AXE_LAYOUT) && !is_mesh(L, i) &&
	    (lua_type(L, i) == LUA_TTABLE || lua_isinteger(L, i) ||
	     (lua_type(L, i) == LUA_TSTRING && lua_tostring(L, i)[0] != 'S'))) {
		check_shape(L, i, out);
		return 1;
	}
	if (own)
		*out = *own;
	else {
		out->n = 1;
		out->v[0] = axe_size(l);
	}
	return 0;
}

/*
** Constructors
*/
static int
l_layout(lua_State *L)
{
	AxeLayout l;
	AxeShape sh;
	Err e;

	if (axe_parse(luaL_checkstring(L, 1), &l, &e) < 0)
		return fail(L, &e);
	if (!lua_isnoneornil(L, 2)) {
		check_shape(L, 2, &sh);
		{
			int64_t p = 1;
			int i;
			for (i = 0; i < sh.n; i++)
				p *= sh.v[i];
			if (p != axe_size(&l))
				return luaL_error(L, "axe.layout: shape of %d modes has %I elements, the layout %I",
				                  sh.n, (LUAI_UACINT)p, (LUAI_UACINT)axe_size(&l));
		}
		push_axe(L, &l, &sh);
	} else {
		push_axe(L, &l, NULL);
	}
	return 1;
}

static int
iter_tostring(lua_State *L)
{
	lua_getfield(L, 1, "extent");
	lua_getfield(L, 1, "stride");
	lua_getfield(L, 1, "axis");
	lua_pushfstring(L, "%I:%I@%s", (LUAI_UACINT)lua_tointeger(L, -3), (LUAI_UACINT)lua_tointeger(L, -2),
	                lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
	return 1;
}

static void
push_iter(lua_State *L, const AxeIter *it)
{
	lua_createtable(L, 0, 3);
	lua_pushinteger(L, it->e);
	lua_setfield(L, -2, "extent");
	lua_pushinteger(L, it->s);
	lua_setfield(L, -2, "stride");
	lua_pushstring(L, it->axis);
	lua_setfield(L, -2, "axis");
	luaL_setmetatable(L, AXE_ITER);
}

static int
l_iter(lua_State *L)
{
	AxeIter it;
	AxeLayout tmp;
	Err e;

	it.e = luaL_checkinteger(L, 1);
	it.s = luaL_checkinteger(L, 2);
	snprintf(it.axis, AXE_NAME, "%s", luaL_optstring(L, 3, "m"));
	if (strlen(luaL_optstring(L, 3, "m")) >= AXE_NAME)
		return luaL_argerror(L, 3, "axis name too long");
	if (axe_make(&tmp, &it, 1, NULL, 0, NULL, 0, &e) < 0)
		return luaL_error(L, "axe.iter(%I, %I, %s): %s", (LUAI_UACINT)it.e, (LUAI_UACINT)it.s, it.axis, e.msg);
	push_iter(L, &it);
	return 1;
}

/* An iter list: a notation "(8,2):(4@lane,1)" or a table of iters ({e, s, axis} or axe.iter). */
static int
iter_list(lua_State *L, int i, AxeIter *it, const char *what)
{
	int n, k;

	if (lua_type(L, i) == LUA_TSTRING) {
		AxeLayout tmp;
		Err e;
		char buf[1024];
		snprintf(buf, sizeof buf, "S[%s]", lua_tostring(L, i));
		if (axe_parse(buf, &tmp, &e) < 0)
			return luaL_error(L, "axe.make: %s: %s", what, e.msg);
		memcpy(it, tmp.d, (size_t)tmp.nd * sizeof *it);
		return tmp.nd;
	}
	if (lua_type(L, i) != LUA_TTABLE)
		return luaL_error(L, "axe.make: %s must be a notation string or a table of iters, not %s", what,
		                  luaL_typename(L, i));
	tessel_checkseq(L, i, "axe.make: a list of iters");
	n = (int)luaL_len(L, i);
	if (n > AXE_ITERS)
		return luaL_error(L, "axe.make: %s has more than %d iters", what, AXE_ITERS);
	for (k = 1; k <= n; k++) {
		int t = lua_geti(L, i, k), isint1, isint2;
		const char *ax;
		if (t != LUA_TTABLE)
			return luaL_error(L, "axe.make: %s[%d] is not an iter (a table {extent, stride, axis})", what, k);
		if (lua_getfield(L, -1, "extent") == LUA_TNIL) {
			lua_pop(L, 1);
			lua_geti(L, -1, 1);
			lua_geti(L, -2, 2);
			lua_geti(L, -3, 3);
		} else {
			lua_getfield(L, -2, "stride");
			lua_getfield(L, -3, "axis");
		}
		it[k - 1].e = lua_tointegerx(L, -3, &isint1);
		it[k - 1].s = lua_tointegerx(L, -2, &isint2);
		ax = lua_isnil(L, -1) ? "m" : lua_tostring(L, -1);
		if (!isint1 || !isint2 || !ax || strlen(ax) >= AXE_NAME)
			return luaL_error(L, "axe.make: %s[%d] needs an integer extent and stride and an axis name", what, k);
		snprintf(it[k - 1].axis, AXE_NAME, "%s", ax);
		lua_pop(L, 4);
	}
	return n;
}

static const TesselOpt make_keys[] = {
	{ "D", "string|table" }, { "R", "string|table" }, { "O", "integer|table" }, { "shape", NULL }, { NULL, NULL }
};

static int
l_make(lua_State *L)
{
	AxeIter d[AXE_ITERS], r[AXE_ITERS];
	AxeOff o[AXE_AXES];
	AxeLayout l;
	AxeShape sh;
	int nd, nr = 0, no = 0, has = 0;
	Err e;

	luaL_checktype(L, 1, LUA_TTABLE);
	tessel_checkopts(L, 1, "axe.make", make_keys);
	lua_getfield(L, 1, "D");
	nd = iter_list(L, lua_gettop(L), d, "D");
	lua_pop(L, 1);
	if (lua_getfield(L, 1, "R") != LUA_TNIL)
		nr = iter_list(L, lua_gettop(L), r, "R");
	lua_pop(L, 1);
	if (lua_getfield(L, 1, "O") != LUA_TNIL) {
		int t = lua_gettop(L);
		if (lua_isinteger(L, t)) {
			strcpy(o[0].axis, "m");
			o[no++].v = lua_tointeger(L, t);
		} else if (lua_type(L, t) == LUA_TTABLE) {
			lua_pushnil(L);
			while (lua_next(L, t)) {
				if (lua_type(L, -2) != LUA_TSTRING || !lua_isinteger(L, -1) ||
				    strlen(lua_tostring(L, -2)) >= AXE_NAME || no >= AXE_AXES)
					return luaL_error(L, "axe.make: O is a table {axis = integer, ...}");
				snprintf(o[no].axis, AXE_NAME, "%s", lua_tostring(L, -2));
				o[no++].v = lua_tointeger(L, -1);
				lua_pop(L, 1);
			}
		} else {
			return luaL_error(L, "axe.make: O is an integer (on m) or a table {axis = integer}");
		}
	}
	lua_pop(L, 1);
	if (lua_getfield(L, 1, "shape") != LUA_TNIL) {
		check_shape(L, lua_gettop(L), &sh);
		has = 1;
	}
	lua_pop(L, 1);
	if (axe_make(&l, d, nd, r, nr, o, no, &e) < 0)
		return luaL_error(L, "axe.make: %s", e.msg);
	push_axe(L, &l, has ? &sh : NULL);
	return 1;
}

/*
** Queries
*/
static int
l_size(lua_State *L)
{
	AxeLayout tmp;
	const AxeLayout *l = check_axe(L, 1, &tmp, NULL);

	lua_pushinteger(L, axe_size(l));
	return 1;
}

static int
l_span(lua_State *L)
{
	AxeLayout tmp;
	const AxeLayout *l = check_axe(L, 1, &tmp, NULL);

	if (lua_isnoneornil(L, 2)) {
		AxeAxes ax;
		int i;
		axe_axes(l, &ax);
		lua_createtable(L, 0, ax.n);
		for (i = 0; i < ax.n; i++) {
			lua_pushinteger(L, axe_span(l, ax.name[i]));
			lua_setfield(L, -2, ax.name[i]);
		}
		lua_pushinteger(L, axe_span_total(l));
		return 2;
	}
	lua_pushinteger(L, axe_span(l, luaL_checkstring(L, 2)));
	return 1;
}

static int
l_axes(lua_State *L)
{
	AxeLayout tmp;
	const AxeLayout *l = check_axe(L, 1, &tmp, NULL);
	AxeAxes ax;
	int i;

	axe_axes(l, &ax);
	lua_createtable(L, ax.n, 0);
	for (i = 0; i < ax.n; i++) {
		lua_pushstring(L, ax.name[i]);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static int
l_kind(lua_State *L)
{
	lua_pushstring(L, axe_kind_name(axe_axis_kind(luaL_checkstring(L, 1))));
	return 1;
}

static int
l_shape(lua_State *L)
{
	LAxe *u = luaL_checkudata(L, 1, AXE_LAYOUT);

	if (!u->has_shape)
		return 0;
	push_shape(L, &u->sh);
	return 1;
}

static int
l_with_shape(lua_State *L)
{
	AxeLayout tmp;
	const AxeLayout *l = check_axe(L, 1, &tmp, NULL);
	AxeShape sh;
	int64_t p = 1;
	int i;

	check_shape(L, 2, &sh);
	for (i = 0; i < sh.n; i++)
		p *= sh.v[i];
	if (p != axe_size(l))
		return luaL_error(L, "axe.with_shape: the shape has %I elements, the layout %I", (LUAI_UACINT)p,
		                  (LUAI_UACINT)axe_size(l));
	push_axe(L, l, &sh);
	return 1;
}

static int
l_parts(lua_State *L)
{
	AxeLayout tmp;
	const AxeLayout *l = check_axe(L, 1, &tmp, NULL);
	int i;

	lua_createtable(L, 0, 3);
	lua_createtable(L, l->nd, 0);
	for (i = 0; i < l->nd; i++) {
		push_iter(L, &l->d[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "D");
	lua_createtable(L, l->nr, 0);
	for (i = 0; i < l->nr; i++) {
		push_iter(L, &l->r[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "R");
	lua_createtable(L, 0, l->no);
	for (i = 0; i < l->no; i++) {
		lua_pushinteger(L, l->o[i].v);
		lua_setfield(L, -2, l->o[i].axis);
	}
	lua_setfield(L, -2, "O");
	return 1;
}

static void
push_coord(lua_State *L, const AxeCoord *c)
{
	int i;

	lua_createtable(L, 0, c->ax.n);
	for (i = 0; i < c->ax.n; i++) {
		lua_pushinteger(L, c->v[i]);
		lua_setfield(L, -2, c->ax.name[i]);
	}
}

/* The element index from the arguments from i on: one index, a table coordinate, or several integers. */
static int64_t
element_arg(lua_State *L, int i, const AxeLayout *l, const AxeShape *own, const char *op)
{
	int n = lua_gettop(L) - i + 1, k;
	int64_t crd[AXE_RANK], x;
	AxeShape sh;
	Err e;

	if (n == 1 && lua_isinteger(L, i))
		return lua_tointeger(L, i);
	if (n >= 1 && lua_type(L, i) == LUA_TTABLE) {
		int m = (int)luaL_len(L, i);
		tessel_checkseq(L, i, op);
		if (m < 1 || m > AXE_RANK)
			luaL_argerror(L, i, "a coordinate has 1 to 16 integers");
		for (k = 0; k < m; k++) {
			lua_geti(L, i, k + 1);
			crd[k] = luaL_checkinteger(L, -1);
			lua_pop(L, 1);
		}
		if (n >= 2)
			check_shape(L, i + 1, &sh);
		else if (own)
			sh = *own;
		else
			luaL_error(L, "%s: a coordinate needs a shape: L:with_shape{...} or pass the shape", op);
		n = m;
	} else {
		if (n < 1 || n > AXE_RANK)
			luaL_error(L, "%s: expected an element index or a coordinate", op);
		for (k = 0; k < n; k++)
			crd[k] = luaL_checkinteger(L, i + k);
		if (!own)
			luaL_error(L, "%s: %d coordinates need a shape: L:with_shape{...} first", op, n);
		sh = *own;
	}
	if (n != sh.n)
		luaL_error(L, "%s: a coordinate of %d integers for a shape of %d modes", op, n, sh.n);
	if (axe_flatten(&sh, crd, &x, &e) < 0)
		luaL_error(L, "%s: %s", op, e.msg);
	return x;
}

static int
l_apply(lua_State *L)
{
	AxeLayout tmp;
	const AxeShape *own;
	const AxeLayout *l = check_axe(L, 1, &tmp, &own);
	int64_t x = element_arg(L, 2, l, own, "axe.apply");
	int64_t nrep = axe_nreplicas(l);
	AxeCoord *c;
	int n, i;
	Err e;

	if (nrep > (1 << 12))
		return luaL_error(L, "axe.apply: %I replicas are more than %d", (LUAI_UACINT)nrep, 1 << 12);
	/* anchor the buffer in a userdata so that an error cannot leak it */
	c = lua_newuserdatauv(L, (size_t)nrep * sizeof *c, 0);
	if (axe_apply(l, x, c, (int)nrep, &n, &e) < 0)
		return fail(L, &e);
	lua_createtable(L, n, 0);
	for (i = 0; i < n; i++) {
		push_coord(L, &c[i]);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/*
** expr(L [, opts]) -> {axis = expression, ...}, replicas. The element is one
** variable x in [0, size) (opts.name), or with a shape (the layout's own or
** opts.shape) one variable per logical dimension i0, i1, ... flattened
** row-major. replicas: the list of per-axis offsets of R (replica 0 first,
** row-major as apply), or with opts.replicas = true variables r0, r1, ...
** (one per replica iter, r_t in [0, extent)) inside the expressions, and
** then the list of those variables.
*/
static int
l_expr(lua_State *L)
{
	AxeLayout tmp;
	const AxeShape *own;
	const AxeLayout *l = check_axe(L, 1, &tmp, &own);
	AxeShape sh;
	AxeAxes ax;
	UOp *x, *out[AXE_AXES], *rep[AXE_ITERS], *v[AXE_RANK];
	const char *name = "x";
	int raw = 0, repvars = 0, useshape = 0, i, k, ci;
	int64_t nrep = axe_nreplicas(l), j;
	char nm[32];
	UCtx *c;
	Err e;

	if (lua_type(L, 2) == LUA_TTABLE) {
		static const TesselOpt keys[] = {
			{ "name", "string" }, { "raw", "boolean" }, { "replicas", "boolean" }, { "shape", NULL }, { NULL, NULL }
		};

		tessel_checkopts(L, 2, "axe.expr", keys);
		lua_getfield(L, 2, "name");
		if (lua_type(L, -1) == LUA_TSTRING)
			name = lua_tostring(L, -1);   /* anchored in opts */
		lua_getfield(L, 2, "raw");
		raw = lua_toboolean(L, -1);
		lua_getfield(L, 2, "replicas");
		repvars = lua_toboolean(L, -1);
		lua_pop(L, 3);
		if (lua_getfield(L, 2, "shape") != LUA_TNIL) {
			check_shape(L, lua_gettop(L), &sh);
			useshape = 1;
		}
		lua_pop(L, 1);
	} else if (!lua_isnoneornil(L, 2))
		return luaL_typeerror(L, 2, "table of options");
	if (!useshape && own) {
		sh = *own;
		useshape = 1;
	}
	if (useshape) {
		int64_t p = 1;
		for (k = 0; k < sh.n; k++)
			p *= sh.v[k];
		if (p != axe_size(l))
			return luaL_error(L, "axe.expr: shape of %d elements for a layout of %d", (int)p,
			                  (int)axe_size(l));
	}
	if (!uop_valid_name(name) || strlen(name) > 20)
		return luaL_error(L, "axe.expr: '%s' is not a variable name", name);
	c = tessel_uop_begin(L);
	ci = lua_gettop(L);
	if (useshape && sh.n > 1) {
		int64_t ext[AXE_RANK];
		for (k = 0; k < sh.n; k++) {
			snprintf(nm, sizeof nm, "i%d", k);
			v[k] = uop_var(c, nm, 0, sh.v[k] - 1);
			ext[k] = sh.v[k];
		}
		x = lower_join(c, v, ext, sh.n, 0);
	} else
		x = uop_var(c, name, 0, axe_size(l) - 1);
	for (i = 0; i < l->nr; i++) {
		snprintf(nm, sizeof nm, "r%d", i);
		rep[i] = uop_var(c, nm, 0, l->r[i].e - 1);
	}
	axe_axes(l, &ax);
	if (lower_axe(c, l, x, repvars ? rep : NULL, &ax, out, &e) < 0)
		return luaL_error(L, "axe.expr: %s", e.msg);
	lua_createtable(L, 0, ax.n);
	for (i = 0; i < ax.n; i++) {
		UOp *r = out[i];
		if (!raw && uop_simplify(c, r, &r, &e) < 0)
			return luaL_error(L, "axe.expr: %s", e.msg);
		tessel_uop_push(L, r, ci);
		lua_setfield(L, -2, ax.name[i]);
	}
	if (repvars) {
		lua_createtable(L, l->nr, 0);
		for (i = 0; i < l->nr; i++) {
			tessel_uop_push(L, rep[i], ci);
			lua_rawseti(L, -2, i + 1);
		}
		return 2;
	}
	if (nrep > (1 << 12))
		return luaL_error(L, "axe.expr: %d replicas are too many to list; use {replicas = true}",
		                  (int)nrep);
	lua_createtable(L, (int)nrep, 0);
	for (j = 0; j < nrep; j++) {
		int64_t t = j;
		lua_createtable(L, 0, ax.n);
		int64_t off[AXE_AXES] = {0};
		for (i = l->nr - 1; i >= 0; i--) {
			off[axe_axes_index(&ax, l->r[i].axis)] += (t % l->r[i].e) * l->r[i].s;
			t /= l->r[i].e;
		}
		for (i = 0; i < ax.n; i++) {
			lua_pushinteger(L, off[i]);
			lua_setfield(L, -2, ax.name[i]);
		}
		lua_rawseti(L, -2, (lua_Integer)j + 1);
	}
	return 2;
}

/* find(L, {warp=5, lane=12}) -> the elements (coordinates, or indices without a shape) holding it. */
static int
l_find(lua_State *L)
{
	AxeLayout tmp;
	const AxeShape *own;
	const AxeLayout *l = check_axe(L, 1, &tmp, &own);
	AxeCoord q;
	int64_t n, *xs, i, cap = 1 << 16;
	Err e;

	luaL_checktype(L, 2, LUA_TTABLE);
	q.ax.n = 0;
	lua_pushnil(L);
	while (lua_next(L, 2)) {
		int isint;
		if (lua_type(L, -2) != LUA_TSTRING || strlen(lua_tostring(L, -2)) >= AXE_NAME || q.ax.n >= AXE_AXES)
			return luaL_error(L, "axe.find: the coordinate is a table {axis = integer, ...}");
		q.v[q.ax.n] = lua_tointegerx(L, -1, &isint);
		if (!isint)
			return luaL_error(L, "axe.find: axis %s needs an integer", lua_tostring(L, -2));
		snprintf(q.ax.name[q.ax.n++], AXE_NAME, "%s", lua_tostring(L, -2));
		lua_pop(L, 1);
	}
	xs = lua_newuserdatauv(L, (size_t)cap * sizeof *xs, 0);
	if (axe_find(l, &q, xs, NULL, (int)cap, &n, &e) < 0)
		return luaL_error(L, "axe.find: %s", e.msg);
	lua_createtable(L, (int)(n < cap ? n : cap), 0);
	for (i = 0; i < n && i < cap; i++) {
		if (own && own->n > 1) {
			int64_t crd[AXE_RANK];
			int k;
			axe_unflatten(own, xs[i], crd);
			lua_createtable(L, own->n, 0);
			for (k = 0; k < own->n; k++) {
				lua_pushinteger(L, crd[k]);
				lua_rawseti(L, -2, k + 1);
			}
		} else {
			lua_pushinteger(L, xs[i]);
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

static int
l_canonicalize(lua_State *L)
{
	AxeLayout tmp, out;
	const AxeShape *own;
	const AxeLayout *l = check_axe(L, 1, &tmp, &own);
	int gc;
	Err e;

	if (axe_canonicalize(l, &out, &gc, &e) < 0)
		return luaL_error(L, "axe.canonicalize: %s", e.msg);
	push_axe(L, &out, own);
	lua_pushboolean(L, gc);
	return 2;
}

static int
l_equivalent(lua_State *L)
{
	AxeLayout ta, tb;
	const AxeShape *own;
	const AxeLayout *a = check_axe(L, 1, &ta, &own), *b = check_axe(L, 2, &tb, NULL);
	int same;
	int64_t where;
	Err e;

	if (axe_equivalent(a, b, &same, &where, &e) < 0)
		return luaL_error(L, "axe.equivalent: %s", e.msg);
	lua_pushboolean(L, same);
	if (same || where < 0)
		return 1;
	if (own && own->n > 1) {
		int64_t crd[AXE_RANK];
		int k;
		axe_unflatten(own, where, crd);
		lua_createtable(L, own->n, 0);
		for (k = 0; k < own->n; k++) {
			lua_pushinteger(L, crd[k]);
			lua_rawseti(L, -2, k + 1);
		}
	} else {
		lua_pushinteger(L, where);
	}
	return 2;
}

static int
l_group(lua_State *L)
{
	AxeLayout tmp, out;
	const AxeShape *own;
	const AxeLayout *l = check_axe(L, 1, &tmp, &own);
	AxeShape sh;
	int seps[AXE_RANK + 1], i;
	Err e;

	if (!opt_shape(L, 2, l, own, &sh) && !own)
		return luaL_error(L, "axe.group: give a shape");
	if (axe_group(l, &sh, &out, seps, &e) < 0)
		return fail(L, &e);
	push_axe(L, &out, &sh);
	lua_createtable(L, sh.n + 1, 0);
	for (i = 0; i <= sh.n; i++) {
		lua_pushinteger(L, seps[i]);
		lua_rawseti(L, -2, i + 1);
	}
	return 2;
}

/* Two layouts with shapes: (A, sa, B, sb), or (A, B) when both carry shapes. */
static void
two(lua_State *L, const char *op, AxeLayout *ta, AxeLayout *tb, const AxeLayout **a, AxeShape *sa,
    const AxeLayout **b, AxeShape *sb)
{
	const AxeShape *oa, *ob;
	int j = 2;

	*a = check_axe(L, 1, ta, &oa);
	if (opt_shape(L, 2, *a, oa, sa))
		j = 3;
	else if (!oa)
		luaL_error(L, "%s: the first layout has no shape: pass one (%s(A, shapeA, B, shapeB))", op, op);
	*b = check_axe(L, j, tb, &ob);
	if (!opt_shape(L, j + 1, *b, ob, sb) && !ob)
		luaL_error(L, "%s: the second layout has no shape: pass one (%s(A, shapeA, B, shapeB))", op, op);
}

static AxeShape
times(const AxeShape *a, const AxeShape *b)
{
	AxeShape s;
	int i;

	s.n = a->n;
	for (i = 0; i < a->n && i < b->n; i++)
		s.v[i] = a->v[i] * b->v[i];
	return s;
}

static int
l_tile(lua_State *L)
{
	AxeLayout ta, tb, out;
	const AxeLayout *a, *b;
	AxeShape sa, sb, st;
	Err e;

	two(L, "axe.tile", &ta, &tb, &a, &sa, &b, &sb);
	if (axe_tile(a, &sa, b, &sb, &out, &e) < 0)
		return fail(L, &e);
	st = times(&sa, &sb);
	push_axe(L, &out, &st);
	return 1;
}

static int
l_direct_sum(lua_State *L)
{
	AxeLayout ta, tb, out;
	const AxeLayout *a, *b;
	AxeShape sa, sb, st;
	Err e;

	two(L, "axe.direct_sum", &ta, &tb, &a, &sa, &b, &sb);
	if (axe_direct_sum(a, &sa, b, &sb, &out, &e) < 0)
		return fail(L, &e);
	st = times(&sa, &sb);
	push_axe(L, &out, &st);
	return 1;
}

static int
l_tile_of(lua_State *L)
{
	AxeLayout ta, tb, out;
	const AxeLayout *a, *b;
	AxeShape sa, sb, sc;
	int64_t where;
	int i;
	Err e;

	two(L, "axe.tile_of", &ta, &tb, &a, &sa, &b, &sb);
	if (axe_tile_of(a, &sa, b, &sb, &out, &where, &e) < 0)
		return fail(L, &e);
	sc.n = sa.n;
	for (i = 0; i < sa.n; i++)
		sc.v[i] = sa.v[i] / sb.v[i];
	push_axe(L, &out, &sc);
	return 1;
}

/* slice(L, [shape,] {{lo, hi}, ...}): half-open ranges per mode. */
static int
l_slice(lua_State *L)
{
	AxeLayout tmp, out;
	const AxeShape *own;
	const AxeLayout *l = check_axe(L, 1, &tmp, &own);
	AxeShape sh, sub;
	int64_t begin[AXE_RANK], ext[AXE_RANK];
	int r = 2, n, k;
	Err e;

	if (lua_gettop(L) >= 3) {
		check_shape(L, 2, &sh);
		r = 3;
	} else if (own) {
		sh = *own;
	} else {
		return luaL_error(L, "axe.slice: give a shape: axe.slice(L, shape, {{lo, hi}, ...})");
	}
	luaL_checktype(L, r, LUA_TTABLE);
	tessel_checkseq(L, r, "axe.slice: the ranges");
	n = (int)luaL_len(L, r);
	if (n != sh.n)
		return luaL_error(L, "axe.slice: %d ranges for a shape of %d modes", n, sh.n);
	for (k = 0; k < n; k++) {
		int64_t lo, hi;
		if (lua_geti(L, r, k + 1) != LUA_TTABLE)
			return luaL_error(L, "axe.slice: range %d is not a table {lo, hi}", k + 1);
		lua_geti(L, -1, 1);
		lua_geti(L, -2, 2);
		lo = luaL_checkinteger(L, -2);
		hi = luaL_checkinteger(L, -1);
		lua_pop(L, 3);
		begin[k] = lo;
		ext[k] = hi - lo;
		if (hi < lo || (hi > 0 && lo < 0))
			return luaL_error(L, "axe.slice: range {%I, %I} is empty or negative", (LUAI_UACINT)lo, (LUAI_UACINT)hi);
	}
	if (axe_slice(l, &sh, begin, ext, &out, &e) < 0)
		return fail(L, &e);
	sub.n = sh.n;
	for (k = 0; k < sh.n; k++)
		sub.v[k] = ext[k];
	push_axe(L, &out, &sub);
	return 1;
}

static int
l_from_cute(lua_State *L)
{
	Layout tmp;
	const Layout *c = tessel_checklayout(L, 1, &tmp);
	AxeLayout out;
	AxeShape sh;
	Err e;

	if (axe_from_cute(c, &out, &sh, &e) < 0)
		return fail(L, &e);
	push_axe(L, &out, &sh);
	return 1;
}

static int
l_to_cute(lua_State *L)
{
	AxeLayout tmp;
	const AxeShape *own;
	const AxeLayout *l = check_axe(L, 1, &tmp, &own);
	AxeShape sh;
	Layout out;
	Err e;

	opt_shape(L, 2, l, own, &sh);
	if (axe_to_cute(l, &sh, &out, &e) < 0)
		return fail(L, &e);
	tessel_pushlayout(L, &out);
	return 1;
}

/* from_tv(tv, M, N [, "warp"]) or from_mma(atom or name, "a"|"b"|"c" [, "warp"]). */
static int
l_from_tv(lua_State *L)
{
	Layout tmp;
	const Layout *tv = tessel_checklayout(L, 1, &tmp);
	int64_t m = luaL_checkinteger(L, 2), n = luaL_checkinteger(L, 3);
	int warps = lua_isstring(L, 4) && strcmp(lua_tostring(L, 4), "warp") == 0;
	AxeLayout out;
	AxeShape sh;
	Err e;

	if (axe_from_tv(tv, NULL, m, n, warps, &out, &e) < 0)
		return fail(L, &e);
	sh.n = 2;
	sh.v[0] = m;
	sh.v[1] = n;
	push_axe(L, &out, &sh);
	return 1;
}

static int
l_from_mma(lua_State *L)
{
	MmaAtom tmp;
	const MmaAtom *a = luaL_testudata(L, 1, "cute.MmaAtom");
	const char *which = luaL_optstring(L, 2, "c");
	int warps = lua_isstring(L, 3) && strcmp(lua_tostring(L, 3), "warp") == 0;
	const Layout *tv;
	int64_t m, n;
	AxeLayout out;
	AxeShape sh;
	Err e;

	if (!a) {
		if (cute_mma_atom(luaL_checkstring(L, 1), &tmp, &e) < 0)
			return fail(L, &e);
		a = &tmp;
	}
	switch (which[0]) {
	case 'a': case 'A': tv = &a->a; m = a->m; n = a->k; break;
	case 'b': case 'B': tv = &a->b; m = a->n; n = a->k; break;
	case 'c': case 'C': tv = &a->c; m = a->m; n = a->n; break;
	default: return luaL_argerror(L, 2, "\"a\", \"b\" or \"c\"");
	}
	if (axe_from_tv(tv, &a->thr_id, m, n, warps, &out, &e) < 0)
		return luaL_error(L, "axe.from_mma(%s, %s): %s", a->name, which, e.msg);
	sh.n = 2;
	sh.v[0] = m;
	sh.v[1] = n;
	push_axe(L, &out, &sh);
	return 1;
}

/* mesh: {{"gpuid", 2}, {"gpuid", 2}}; placements: {"S(0)", "R"} or {0, "R"}. */
static void
check_mesh(lua_State *L, int i, AxeMesh *mesh)
{
	int n, k;

	luaL_checktype(L, i, LUA_TTABLE);
	tessel_checkseq(L, i, "axe: a mesh");
	n = (int)luaL_len(L, i);
	if (n < 1 || n > AXE_RANK)
		luaL_argerror(L, i, "a mesh is a list of 1 to 16 {name, size} pairs");
	for (k = 0; k < n; k++) {
		const char *name;
		if (lua_geti(L, i, k + 1) != LUA_TTABLE)
			luaL_argerror(L, i, "a mesh dimension is {name, size}");
		lua_geti(L, -1, 1);
		lua_geti(L, -2, 2);
		name = lua_tostring(L, -2);
		if (!name || strlen(name) >= AXE_NAME || !lua_isinteger(L, -1))
			luaL_argerror(L, i, "a mesh dimension is {name, size}");
		snprintf(mesh->name[k], AXE_NAME, "%s", name);
		mesh->size[k] = lua_tointeger(L, -1);
		lua_pop(L, 3);
	}
	mesh->n = n;
}

static int
l_dtensor(lua_State *L)
{
	AxeShape sh;
	AxeMesh mesh;
	AxeLayout out;
	int p[AXE_RANK], k;
	Err e;

	check_shape(L, 1, &sh);
	check_mesh(L, 2, &mesh);
	luaL_checktype(L, 3, LUA_TTABLE);
	if ((int)luaL_len(L, 3) != mesh.n)
		return luaL_error(L, "axe.dtensor: %d placements for a mesh of %d dimensions", (int)luaL_len(L, 3), mesh.n);
	for (k = 0; k < mesh.n; k++) {
		lua_geti(L, 3, k + 1);
		if (lua_isinteger(L, -1)) {
			/* range first: (int)4294967295 would be -1, Replicate */
			lua_Integer d = lua_tointeger(L, -1);
			if (d < AXE_REPLICATE || d >= AXE_RANK)
				return luaL_error(L, "axe.dtensor: placement %I is not a tensor dimension or -1", d);
			p[k] = (int)d;
		} else if (lua_type(L, -1) == LUA_TSTRING) {
			const char *s = lua_tostring(L, -1);
			if (axe_placement_parse(s, &p[k]) < 0)
				return luaL_error(L, "axe.dtensor: placement '%s' is not \"S(dim)\", \"Shard(dim)\" or \"R\"", s);
		} else {
			return luaL_error(L, "axe.dtensor: placement %d is not \"S(dim)\" or \"R\"", k + 1);
		}
		lua_pop(L, 1);
	}
	if (axe_dtensor(&sh, &mesh, p, &out, &e) < 0)
		return fail(L, &e);
	push_axe(L, &out, &sh);
	return 1;
}

static int
l_to_dtensor(lua_State *L)
{
	AxeLayout tmp;
	const AxeShape *own;
	const AxeLayout *l = check_axe(L, 1, &tmp, &own);
	AxeShape sh;
	AxeMesh mesh;
	int p[AXE_RANK], k, mi = 3;
	Err e;

	if (!opt_shape(L, 2, l, own, &sh))
		mi = 2;
	check_mesh(L, mi, &mesh);
	if (axe_to_dtensor(l, &sh, &mesh, p, &e) < 0)
		return fail(L, &e);
	lua_createtable(L, mesh.n, 0);
	for (k = 0; k < mesh.n; k++) {
		if (p[k] == AXE_REPLICATE)
			lua_pushliteral(L, "R");
		else
			lua_pushfstring(L, "S(%d)", p[k]);
		lua_rawseti(L, -2, k + 1);
	}
	return 1;
}

static int
l_vector_width(lua_State *L)
{
	AxeLayout ta, tb;
	const AxeLayout *src = lua_isnil(L, 1) ? NULL : check_axe(L, 1, &ta, NULL);
	const AxeLayout *dst = check_axe(L, 2, &tb, NULL);
	int64_t w, max = luaL_optinteger(L, 3, 8);
	Err e;

	if (axe_vector_width(src, dst, max, &w, &e) < 0)
		return fail(L, &e);
	lua_pushinteger(L, w);
	return 1;
}

static int
l_scope(lua_State *L)
{
	AxeLayout out;
	Err e;

	if (axe_scope(luaL_checkstring(L, 1), luaL_optinteger(L, 2, 0), &out, &e) < 0)
		return luaL_error(L, "axe.scope: %s", e.msg);
	push_axe(L, &out, NULL);
	return 1;
}

static int
l_warps(lua_State *L)
{
	AxeLayout out;
	Err e;

	if (axe_warps(luaL_checkinteger(L, 1), luaL_checkinteger(L, 2), &out, &e) < 0)
		return luaL_error(L, "axe.warps: %s", e.msg);
	push_axe(L, &out, NULL);
	return 1;
}

static int
l_holds(lua_State *L)
{
	int n;

	lua_settop(L, 2);
	lua_pushcfunction(L, l_find);
	lua_insert(L, 1);
	lua_call(L, 2, 1);
	n = (int)luaL_len(L, -1);
	lua_pushboolean(L, n > 0);
	return 1;
}

/* members(L) -> every coordinate of every element, element-major. */
static int
l_members(lua_State *L)
{
	AxeLayout tmp;
	const AxeLayout *l = check_axe(L, 1, &tmp, NULL);
	int64_t size = axe_size(l), nrep = axe_nreplicas(l), x, k = 0;
	AxeCoord *c;
	int n, i;
	Err e;

	if (size > (1 << 16) / nrep)
		return luaL_error(L, "axe.members: %I elements x %I replicas are more than %d", (LUAI_UACINT)size,
		                  (LUAI_UACINT)nrep, 1 << 16);
	c = lua_newuserdatauv(L, (size_t)nrep * sizeof *c, 0);
	lua_createtable(L, (int)(size * nrep), 0);
	for (x = 0; x < size; x++) {
		if (axe_apply(l, x, c, (int)nrep, &n, &e) < 0)
			return luaL_error(L, "axe.members: %s", e.msg);
		for (i = 0; i < n; i++) {
			push_coord(L, &c[i]);
			lua_rawseti(L, -2, (lua_Integer)++k);
		}
	}
	return 1;
}

static void
push_ints(lua_State *L, const int64_t *v, int n, const char *field)
{
	int i;

	lua_createtable(L, n, 0);
	for (i = 0; i < n; i++) {
		lua_pushinteger(L, v[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, field);
}

/* tma(global, gshape, smem, sshape [, elem_bytes = 2 [, swizzle = 128]]) */
static int
l_tma(lua_State *L)
{
	AxeLayout tg, ts;
	const AxeLayout *g = check_axe(L, 1, &tg, NULL), *sm;
	AxeShape gs, ss;
	AxeTma t;
	Err e;

	check_shape(L, 2, &gs);
	sm = check_axe(L, 3, &ts, NULL);
	check_shape(L, 4, &ss);
	if (axe_tma(g, &gs, sm, &ss, (int)luaL_optinteger(L, 5, 2), (int)luaL_optinteger(L, 6, 128), &t, &e) < 0)
		return fail(L, &e);
	lua_createtable(L, 0, 8);
	push_ints(L, t.global_dim, t.rank, "global_dim");
	push_ints(L, t.global_stride, t.rank - 1, "global_stride");
	push_ints(L, t.box_dim, t.rank, "box_dim");
	push_ints(L, t.elem_stride, t.rank, "elem_stride");
	lua_pushinteger(L, t.swizzle);
	lua_setfield(L, -2, "swizzle");
	push_axe(L, &t.outer, &t.outer_shape);
	lua_setfield(L, -2, "outer");
	push_shape(L, &t.atom_shape);
	lua_setfield(L, -2, "atom_shape");
	return 1;
}

/* trn_matmul(A, B, C, K, M, N [, {m = 128, n = 512, k = 128}]) */
static int
l_trn_matmul(lua_State *L)
{
	AxeLayout ta, tb, tc;
	const AxeLayout *a = check_axe(L, 1, &ta, NULL), *b = check_axe(L, 2, &tb, NULL), *c = check_axe(L, 3, &tc, NULL);
	int64_t K = luaL_checkinteger(L, 4), M = luaL_checkinteger(L, 5), N = luaL_checkinteger(L, 6);
	int64_t mm = 128, mn = 512, mk = 128;
	static const TesselOpt keys[] = { { "m", "integer" }, { "n", "integer" }, { "k", "integer" }, { NULL, NULL } };
	AxeMatmul r;
	Err e;

	if (tessel_checkopts(L, 7, "axe.trn_matmul", keys)) {
		lua_getfield(L, 7, "m");
		lua_getfield(L, 7, "n");
		lua_getfield(L, 7, "k");
		mm = lua_isnil(L, -3) ? mm : lua_tointeger(L, -3);
		mn = lua_isnil(L, -2) ? mn : lua_tointeger(L, -2);
		mk = lua_isnil(L, -1) ? mk : lua_tointeger(L, -1);
		lua_pop(L, 3);
	}
	if (K < 1 || M < 1 || N < 1)
		return luaL_error(L, "axe.trn_matmul: K, M, N must be >= 1");
	if (axe_trn_matmul(a, K, M, b, N, c, mm, mn, mk, &r, &e) < 0)
		return fail(L, &e);
	lua_createtable(L, 0, 6);
	lua_pushinteger(L, r.m);
	lua_setfield(L, -2, "m");
	lua_pushinteger(L, r.n);
	lua_setfield(L, -2, "n");
	lua_pushinteger(L, r.k);
	lua_setfield(L, -2, "k");
	push_ints(L, r.m_loops.v, r.m_loops.n, "m_loops");
	push_ints(L, r.n_loops.v, r.n_loops.n, "n_loops");
	push_ints(L, r.k_loops.v, r.k_loops.n, "k_loops");
	return 1;
}

/*
** Metamethods
*/
static int
ax_tostring(lua_State *L)
{
	LAxe *u = luaL_checkudata(L, 1, AXE_LAYOUT);
	Buf b;

	buf_init(&b);
	axe_print(&b, &u->l);
	lua_pushstring(L, b.s ? b.s : "?");
	buf_free(&b);
	return 1;
}

/* == compares canonical forms (the same map wherever the gap condition holds). */
static int
ax_eq(lua_State *L)
{
	LAxe *a = luaL_checkudata(L, 1, AXE_LAYOUT), *b = luaL_checkudata(L, 2, AXE_LAYOUT);
	AxeLayout ca, cb;
	Err e;

	lua_pushboolean(L, axe_canonicalize(&a->l, &ca, NULL, &e) == 0 &&
	                   axe_canonicalize(&b->l, &cb, NULL, &e) == 0 && axe_equal(&ca, &cb));
	return 1;
}

static int
ax_len(lua_State *L)
{
	LAxe *u = luaL_checkudata(L, 1, AXE_LAYOUT);

	lua_pushinteger(L, axe_size(&u->l));
	return 1;
}

/* The drawable protocol (tessel.h): show, viz.render and viz.dot draw an Axe
** layout through this; opts as ax_show's (axis, labels, shape) and viz's. */
static const TesselOpt scene_keys[] = {
	{ "axis", "string" }, { "labels", "boolean|function|table" }, { "shape", NULL }, { NULL, NULL }
};

static int
ax_scene(lua_State *L)
{
	LAxe *u = luaL_checkudata(L, 1, AXE_LAYOUT);
	const AxeShape *sh = u->has_shape ? &u->sh : NULL;
	AxeShape given;
	const char *axis = NULL;
	AxeAxes labels;
	VizOpts o;
	Err e;
	int fit;

	if (!tessel_vizopts(L, 2, 3, &o, scene_keys) && tessel_scene_target(L, 3) == TESSEL_TERM) {
		fit = (tessel_term_width() - 6) / 6;
		if (fit < 4)
			fit = 4;
		if (fit < o.max_cols)
			o.max_cols = fit;
	}
	if (lua_getfield(L, 2, "axis") == LUA_TSTRING)
		axis = lua_tostring(L, -1);
	labels.n = 0;
	if (lua_getfield(L, 2, "labels") == LUA_TTABLE) {
		int k, n = (int)luaL_len(L, -1);
		for (k = 1; k <= n && k <= AXE_AXES; k++) {
			const char *nm;
			lua_geti(L, -1, k);
			nm = lua_tostring(L, -1);
			if (!nm || strlen(nm) >= AXE_NAME)
				return luaL_error(L, "axe.show: labels is a list of axis names");
			axe_axes_add(&labels, nm, &e);
			lua_pop(L, 1);
		}
	}
	if (lua_getfield(L, 2, "shape") != LUA_TNIL) {
		check_shape(L, lua_gettop(L), &given);
		sh = &given;
	}
	if (axe_scene_layout(tessel_toscene(L, 3), &u->l, sh, axis, &labels, &o, &e) < 0)
		return fail(L, &e);
	return 0;
}

static int
ax_call(lua_State *L)
{
	return l_apply(L);
}

typedef HelpReg Fn;

static const Fn funcs[] = {
	{ "layout", l_layout,
	  "an Axe layout from TIRx notation\n"
	  "axe.layout(notation [, shape]) -> L. Notation as TVM TIRx: S[extents:strides] + R[...] + offsets,\n"
	  "a stride or offset without @axis is on m:\n"
	  "  L = axe.layout(\"S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp\", {8,16})" },
	{ "iter", l_iter,
	  "an iter (extent, stride, axis)\n"
	  "axe.iter(extent, stride [, axis]) -> {extent=, stride=, axis=} (axis defaults to m; stride != 0)" },
	{ "make", l_make,
	  "a layout from its parts D, R, O\n"
	  "axe.make{D = iters, R = iters, O = offsets, shape = shape} -> L. iters: a table of axe.iter or\n"
	  "{extent, stride, axis}, or notation \"(8,2):(4@lane,1)\"; O: {warp = 5} or an integer (on m)." },
	{ "parts", l_parts,
	  "the D, R and O of a layout as tables\n"
	  "axe.parts(L) -> {D = {iters}, R = {iters}, O = {axis = value}}" },
	{ "size", l_size, "number of logical elements\naxe.size(L) -> the product of D's extents (also #L)" },
	{ "span", l_span,
	  "the span on an axis, or all spans\n"
	  "axe.span(L, axis) -> 1 + sum over D and R iters on axis of (extent-1)*|stride| (1 if unused);\n"
	  "axe.span(L) -> {axis = span, ...}, and the product of the spans" },
	{ "axes", l_axes, "the axes a layout uses\naxe.axes(L) -> {names}, in order of first use" },
	{ "kind", l_kind,
	  "the kind of an axis name\n"
	  "axe.kind(name) -> \"memory\" (m, reg, P, F, TLane, TCol), \"thread\" (lane, warp, warpgroup,\n"
	  "thread, cta...), \"device\" (gpuid, gpuid_x...) or \"other\"" },
	{ "shape", l_shape, "the logical shape a layout carries\naxe.shape(L) -> {extents} or nothing" },
	{ "with_shape", l_with_shape,
	  "the layout with a logical shape attached\n"
	  "axe.with_shape(L, shape) -> L with shape (its product must be the size)" },
	{ "apply", l_apply,
	  "all coordinates of an element\n"
	  "axe.apply(L, i [, j...]) | L(i, j) -> list of coordinates, one per replica, as tables\n"
	  "{warp=6, lane=12, reg=1}. One integer is a flat (row-major) index; several need L's shape;\n"
	  "axe.apply(L, {i, j}, shape) passes the shape." },
	{ "expr", l_expr,
	  "the layout as index expressions, one per axis\n"
	  "axe.expr(L [, opts]) | L:expr(opts) -> {lane = e1, warp = e2, ...}, replicas. The element is\n"
	  "x in [0, size) (opts.name), or i0, i1, ... over L's shape (or opts.shape), row-major. Each\n"
	  "expression is D(x) + O on its axis (replica 0). replicas: the list of per-axis offsets of R\n"
	  "({{warp=0}, {warp=4}}, order of axe.apply); with opts.replicas = true the replica digits\n"
	  "r0, r1, ... enter the expressions and replicas is the list of those variables.\n"
	  "opts.raw skips the simplifier.\n"
	  "  axe.layout(\"S[(8,4):(4@lane,1@lane)] + R[2:1@warp]\"):expr() --> {lane = x}, {{warp=0},{warp=1}}" },
	{ "find", l_find,
	  "the elements a hardware coordinate holds\n"
	  "axe.find(L, {warp=6, lane=12}) -> the elements (coordinates {i,j} with a shape, else indices)\n"
	  "having a coordinate that agrees on the given axes (the inverse image)" },
	{ "canonicalize", l_canonicalize,
	  "the canonical form (Appendix A)\n"
	  "axe.canonicalize(L) -> L', gc. D0 drops unit iters, D1 merges (e1, e2*s)(e2, s) on one axis;\n"
	  "C0, C1, C2 normalize replicas. gc: whether the gap condition holds (then L' is unique)." },
	{ "equivalent", l_equivalent,
	  "whether two layouts induce the same map\n"
	  "axe.equivalent(A, B) -> true, or false and the first element where they differ" },
	{ "group", l_group,
	  "split iters so that blocks match a shape (Appendix B)\n"
	  "axe.group(L, shape) -> grouped L, block boundaries {0, ...} (1-based positions are +1)" },
	{ "tile", l_tile,
	  "the Kronecker tile A (x) B (Appendix C)\n"
	  "axe.tile(A, shapeA, B, shapeB) -> A outer, scaled per axis by B's span, B inner; shape\n"
	  "shapeA*shapeB. Shapes may be left out when the layouts carry them." },
	{ "tile_of", l_tile_of,
	  "the outer layout C with L = C (x) B (Appendix D)\n"
	  "axe.tile_of(L, shapeL, B, shapeB) -> C, or an error naming the first element that disagrees" },
	{ "slice", l_slice,
	  "the layout of a region (Appendix E)\n"
	  "axe.slice(L, [shape,] {{lo, hi}, ...}) -> the layout of the half-open region, or a refusal\n"
	  "naming the condition (no-wrap, symmetric one-wrap) that fails" },
	{ "direct_sum", l_direct_sum,
	  "the unscaled interleave A (+) B (Appendix F)\n"
	  "axe.direct_sum(A, shapeA, B, shapeB) -> A(outer) + B(inner) without span scaling" },
	{ "from_cute", l_from_cute,
	  "a CuTe layout as an Axe layout on m\n"
	  "axe.from_cute(cute layout or notation) -> L with the CuTe modes as its shape: the same\n"
	  "function of the natural coordinate (CuTe's colexicographic modes reversed into row-major iters)" },
	{ "to_cute", l_to_cute,
	  "an Axe layout on m as a CuTe layout\n"
	  "axe.to_cute(L [, shape]) -> cute layout with one mode per shape mode (no replicas, offsets, other axes)" },
	{ "from_tv", l_from_tv,
	  "a CuTe TV layout as an Axe layout over (lane, reg)\n"
	  "axe.from_tv(tv, M, N [, \"warp\"]) -> L over (lane, reg), or (warp, lane, reg), shape {M, N}" },
	{ "from_mma", l_from_mma,
	  "an MMA atom's fragment as an Axe layout over (lane, reg)\n"
	  "axe.from_mma(atom or name, \"a\"|\"b\"|\"c\" [, \"warp\"]) -> L with shape {M,K}, {N,K} or {M,N}\n"
	  "  axe.from_mma(\"SM80_16x8x16_F32F16F16F32_TN\", \"c\")" },
	{ "dtensor", l_dtensor,
	  "a sharded tensor over a device mesh as an Axe layout\n"
	  "axe.dtensor(shape, mesh, placements) -> L. mesh: {{\"gpuid\", 2}, {\"gpuid\", 2}} (dims sharing a\n"
	  "name flatten row-major onto it); placements per mesh dim: \"S(dim)\" or \"R\" (PyTorch DTensor)." },
	{ "to_dtensor", l_to_dtensor,
	  "the DTensor placements of a layout, where it has some\n"
	  "axe.to_dtensor(L, [shape,] mesh) -> {\"S(0)\", \"R\", ...} or an error" },
	{ "vector_width", l_vector_width,
	  "the widest vector each thread moves at once\n"
	  "axe.vector_width(src or nil, dst [, max = 8]) -> the largest power of two v such that every\n"
	  "aligned run of v elements stays in one thread of dst and is contiguous and aligned in memory" },
	{ "scope", l_scope,
	  "an execution scope as a layout over (warp, lane)\n"
	  "axe.scope(\"thread\" | \"warp\" | \"warpgroup\" | \"cta\" [, threads]) -> member index -> thread" },
	{ "warps", l_warps,
	  "a subset of warps as a layout over (warp, lane)\n"
	  "axe.warps(lo, hi) -> the threads of warps lo .. hi-1: producers = axe.warps(0, 4)" },
	{ "holds", l_holds,
	  "whether some element sits at a coordinate\n"
	  "axe.holds(L, {warp=2, lane=5}) -> true if a coordinate of L agrees on the given axes (membership)" },
	{ "members", l_members,
	  "every coordinate of every element\n"
	  "axe.members(L) -> list of coordinate tables, element by element (iteration over a scope)" },
	{ "tma", l_tma,
	  "TMA dispatch: the swizzle-atom check and the tensor map\n"
	  "axe.tma(global, gshape, smem, sshape [, elem_bytes = 2 [, swizzle = 128]]) -> {global_dim,\n"
	  "global_stride (bytes), box_dim, elem_stride (innermost first, as cuTensorMapEncodeTiled),\n"
	  "swizzle, outer = the loop over atoms, atom_shape}, or an error naming what fails" },
	{ "trn_matmul", l_trn_matmul,
	  "the largest Trainium matmul instruction (Appendix H)\n"
	  "axe.trn_matmul(A, B, C, K, M, N [, {m=128, n=512, k=128}]) -> {m, n, k, m_loops, n_loops,\n"
	  "k_loops}: A[K,M] and B[K,N] in SBUF, C[M,N] in PSUM, on axes P and F" },
	{ NULL, NULL, NULL }
};

static const char *const methods[] = {
	"parts", "size", "span", "axes", "shape", "with_shape", "apply", "find", "canonicalize",
	"equivalent", "group", "tile", "tile_of", "slice", "direct_sum", "to_cute", "to_dtensor",
	"holds", "members", "expr", NULL
};

static const luaL_Reg meta[] = {
	{ "__tostring", ax_tostring },
	{ "__eq", ax_eq },
	{ "__len", ax_len },
	{ "__call", ax_call },
	{ "__scene", ax_scene },
	{ NULL, NULL }
};

static const char *const topics[][2] = {
	{ "axe",
	  "Axe layouts: logical elements to coordinates on named axes\n"
	  "A layout (D, R, O) maps element x to { D(x) + r + O : r in R }: D's iters split x row-major\n"
	  "(last iter fastest), R enumerates replicas, O offsets. Axes: m, reg, P, F, TLane, TCol\n"
	  "(memory), lane, warp, warpgroup, thread, cta (thread), gpuid... (device), any other name.\n"
	  "  L = axe.layout(\"S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp\", {8,16})\n"
	  "  L(3, 9) --> {{lane=12, warp=6, reg=1}, {lane=12, warp=10, reg=1}}   show(L)\n"
	  "Every function is also a method: L:tile(...), L:find{warp=6}." },
	{ "axe.Layout",
	  "an Axe layout\n"
	  "tostring(L) is TIRx notation; L(i, j) applies; #L is the size; == compares canonical forms;\n"
	  "L:equivalent(M) compares the maps. show(L, {axis = \"lane\"}) colours by another axis,\n"
	  "show(L, {labels = {\"warp\", \"lane\", \"reg\"}}) labels cells with other axes." },
};

int
luaopen_tessel_axe(lua_State *L)
{
	int i;

	luaL_newmetatable(L, AXE_ITER);
	lua_pushcfunction(L, iter_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);

	lua_newtable(L);  /* axe */
	help_setfuncs(L, funcs, "axe.");
	help_add(L, -1, "axe", topics[0][1]);
	for (i = 0; i < (int)(sizeof topics / sizeof topics[0]); i++)
		help_topic(L, topics[i][0], topics[i][1]);

	luaL_newmetatable(L, AXE_LAYOUT);
	luaL_setfuncs(L, meta, 0);
	lua_newtable(L);  /* methods */
	for (i = 0; methods[i]; i++) {
		lua_getfield(L, -3, methods[i]);
		lua_setfield(L, -2, methods[i]);
	}
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	return 1;
}

const struct AxeLayout *
tessel_testaxe(lua_State *L, int i)
{
	LAxe *u = luaL_testudata(L, i, AXE_LAYOUT);

	return u ? &u->l : NULL;
}

void
tessel_pushaxe(lua_State *L, const struct AxeLayout *l, const struct AxeShape *sh)
{
	push_axe(L, l, sh);
}

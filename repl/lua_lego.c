/* lua_lego.c - the `lego` Lua table: LEGO layouts (RegP, GenP, OrderBy, GroupBy, ExpandBy) and their pictures. */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "../layout/layout.h"
#include "../layout/lower.h"
#include "../viz/viz.h"
#include "help.h"
#include "tessel.h"

#define LEGO    "lego.Layout"
#define GENFN   "lego.GenPFunctions"
#define FNS     "tessel.lego.fns"      /* registry: lightuserdata -> GenFn userdata (weak values) */
#define SESSION "tessel.lego.session"  /* registry: the Session userdata */

/*
** User GenPs call Lua functions from C. The C layer holds ctx, a pointer to
** a GenFn userdata whose two user values are the apply and inv functions;
** the FNS table finds the userdata again from the pointer. Every layout
** that contains the GenP keeps the GenFn alive: its user value is a table
** of the GenFns it uses (its anchors). The running thread is not known to
** the C layer, so every entry point that may evaluate a GenP records it in
** the session first (coroutines may call in).
*/
typedef struct Session {
	lua_State *L;
} Session;

typedef struct GenFn {
	Session *sess;
	char label[48];
	char name[128];
} GenFn;

typedef struct LLego {
	Lego g;
} LLego;

static int sym_dispatch(lua_State *L, const char *name, int method);
static int sym_mixed(lua_State *L);

static int
fail(lua_State *L, const Err *e)
{
	return luaL_error(L, "%s", e->msg);
}

static Session *
session(lua_State *L)
{
	Session *s;

	lua_getfield(L, LUA_REGISTRYINDEX, SESSION);
	s = lua_touserdata(L, -1);
	lua_pop(L, 1);
	return s;
}

/* Record the running thread; returns the previous one, to restore. */
static lua_State *
enter(lua_State *L)
{
	Session *s = session(L);
	lua_State *prev = s->L;

	s->L = L;
	return prev;
}

static void
leave(lua_State *L, lua_State *prev)
{
	session(L)->L = prev;
}

static LLego *
check_lego(lua_State *L, int i)
{
	return luaL_checkudata(L, i, LEGO);
}

static LLego *
test_lego(lua_State *L, int i)
{
	return luaL_testudata(L, i, LEGO);
}

/* A new layout userdata, in a safe empty state, with an empty anchor table;
** fill u->g afterwards. */
static LLego *
new_lego(lua_State *L)
{
	LLego *u = lua_newuserdatauv(L, sizeof *u, 1);

	memset(u, 0, sizeof *u);
	u->g.kind = LEGO_PERM;
	luaL_setmetatable(L, LEGO);
	lua_newtable(L);
	lua_setiuservalue(L, -2, 1);
	return u;
}

/* Add the anchors of the layout at index src to those of the one at dst. */
static void
anchor_from(lua_State *L, int dst, int src)
{
	lua_Integer n, k, m;

	dst = lua_absindex(L, dst);
	src = lua_absindex(L, src);
	if (!test_lego(L, src))
		return;
	lua_getiuservalue(L, dst, 1);
	lua_getiuservalue(L, src, 1);
	n = luaL_len(L, -1);
	m = luaL_len(L, -2);
	for (k = 1; k <= n; k++) {
		lua_rawgeti(L, -1, k);
		lua_rawseti(L, -3, m + k);
	}
	lua_pop(L, 2);
}

/*
** Callbacks
*/
static int
push_fn(lua_State *L, void *ctx, int which, Err *e)
{
	lua_getfield(L, LUA_REGISTRYINDEX, FNS);
	if (lua_rawgetp(L, -1, ctx) != LUA_TUSERDATA) {
		lua_pop(L, 2);
		return err_set(e, "lego.GenP: its functions are gone");
	}
	lua_getiuservalue(L, -1, which);
	lua_replace(L, -3);
	lua_pop(L, 1);
	return 0;
}

static const char *
errobj(lua_State *L, int i)
{
	const char *m = lua_tostring(L, i);

	return m ? m : lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, i));
}

static void
crd(char *dst, size_t n, const int64_t *x, int r)
{
	size_t len = 0;
	int k;

	dst[0] = '\0';
	for (k = 0; k < r && len < n; k++)
		len += (size_t)snprintf(dst + len, n - len, "%s%lld", k ? "," : "", (long long)x[k]);
}

static int
lua_apply(void *ctx, const int64_t *idx, int rank, int64_t *flat, Err *e)
{
	GenFn *b = ctx;
	lua_State *L = b->sess->L;
	char c[128];
	int k, top, isint;

	if (!L)
		return err_set(e, "%s: called outside Lua", b->name);
	if (!lua_checkstack(L, rank + 8))
		return err_set(e, "%s: Lua stack overflow", b->name);
	top = lua_gettop(L);
	crd(c, sizeof c, idx, rank);
	if (push_fn(L, ctx, 1, e) < 0)
		return -1;
	for (k = 0; k < rank; k++)
		lua_pushinteger(L, idx[k]);
	if (lua_pcall(L, rank, 1, 0) != LUA_OK) {
		err_set(e, "%s: apply(%s) raised: %s", b->name, c, errobj(L, -1));
		lua_settop(L, top);
		return -1;
	}
	*flat = lua_tointegerx(L, -1, &isint);
	if (!isint) {
		err_set(e, "%s: apply(%s) returned %s, not an integer", b->name, c,
		        luaL_typename(L, -1));
		lua_settop(L, top);
		return -1;
	}
	lua_settop(L, top);
	return 0;
}

static int
lua_inv(void *ctx, int64_t flat, int64_t *idx, int rank, Err *e)
{
	GenFn *b = ctx;
	lua_State *L = b->sess->L;
	int k, top, n, isint, base;

	if (!L)
		return err_set(e, "%s: called outside Lua", b->name);
	if (!lua_checkstack(L, rank + 8))
		return err_set(e, "%s: Lua stack overflow", b->name);
	top = lua_gettop(L);
	if (push_fn(L, ctx, 2, e) < 0)
		return -1;
	lua_pushinteger(L, flat);
	if (lua_pcall(L, 1, LUA_MULTRET, 0) != LUA_OK) {
		err_set(e, "%s: inv(%lld) raised: %s", b->name, (long long)flat, errobj(L, -1));
		lua_settop(L, top);
		return -1;
	}
	n = lua_gettop(L) - top;
	base = top + 1;
	if (n == 1 && lua_type(L, base) == LUA_TTABLE && rank > 1) {
		/* a table of rank integers */
		if (!lua_checkstack(L, rank + 2)) {
			lua_settop(L, top);
			return err_set(e, "%s: Lua stack overflow", b->name);
		}
		for (k = 1; k <= rank; k++)
			lua_rawgeti(L, base, k);
		base = top + 2;
		n = rank;
		if (lua_rawlen(L, top + 1) != (size_t)rank) {
			err_set(e, "%s: inv(%lld) returned a table of %d values, expected %d",
			        b->name, (long long)flat, (int)lua_rawlen(L, top + 1), rank);
			lua_settop(L, top);
			return -1;
		}
	}
	if (n != rank) {
		err_set(e, "%s: inv(%lld) returned %d value%s, expected %d integers (or a table)",
		        b->name, (long long)flat, n, n == 1 ? "" : "s", rank);
		lua_settop(L, top);
		return -1;
	}
	for (k = 0; k < rank; k++) {
		idx[k] = lua_tointegerx(L, base + k, &isint);
		if (!isint) {
			err_set(e, "%s: inv(%lld) returned %s as coordinate %d, not an integer",
			        b->name, (long long)flat, luaL_typename(L, base + k), k);
			lua_settop(L, top);
			return -1;
		}
	}
	lua_settop(L, top);
	return 0;
}

/*
** Arguments
*/
/* A table of integers (dimensions, a permutation) into d; returns the count. */
static int
check_ints(lua_State *L, int i, int64_t *d, int max, const char *what)
{
	lua_Integer n, k;
	int isint;

	luaL_checktype(L, i, LUA_TTABLE);
	tessel_checkseq(L, i, what);
	n = luaL_len(L, i);
	if (n < 1 || n > max)
		luaL_argerror(L, i, lua_pushfstring(L, "%s must have 1 to %d entries, not %d", what, max, (int)n));
	for (k = 1; k <= n; k++) {
		lua_geti(L, i, k);
		d[k - 1] = lua_tointegerx(L, -1, &isint);
		if (!isint)
			luaL_argerror(L, i, lua_pushfstring(L, "%s: entry %d is %s, not an integer", what,
			                                    (int)k, luaL_typename(L, -1)));
		lua_pop(L, 1);
	}
	return (int)n;
}

/* Dimensions: a table {6,6}, or the integers from index i on (Row(6,6)). */
static int
check_dims_args(lua_State *L, int i, int64_t *d)
{
	int n = lua_gettop(L), k, isint;

	if (lua_type(L, i) == LUA_TTABLE)
		return check_ints(L, i, d, LEGO_DIMS, "dims");
	if (n < i)
		luaL_argerror(L, i, "dimensions expected (a table {6,6} or integers)");
	if (n - i + 1 > LEGO_DIMS)
		luaL_argerror(L, i, "too many dimensions");
	for (k = i; k <= n; k++) {
		d[k - i] = lua_tointegerx(L, k, &isint);
		if (!isint)
			luaL_typeerror(L, k, "integer");
	}
	return n - i + 1;
}

/* Tile groups: {6,6} is one group, {{2,2},{3,3}} two. */
static int
check_groups(lua_State *L, int i, int64_t *d, int *glen, int *ngroup)
{
	lua_Integer n, k;
	int total = 0;

	luaL_checktype(L, i, LUA_TTABLE);
	lua_geti(L, i, 1);
	if (lua_type(L, -1) != LUA_TTABLE) {
		lua_pop(L, 1);
		*ngroup = 1;
		glen[0] = check_ints(L, i, d, LEGO_DIMS, "dims");
		return glen[0];
	}
	lua_pop(L, 1);
	tessel_checkseq(L, i, "lego: the groups of dimensions");
	n = luaL_len(L, i);
	if (n > LEGO_DIMS)
		luaL_argerror(L, i, "too many tile groups");
	for (k = 1; k <= n; k++) {
		int64_t t[LEGO_DIMS];
		int m;
		lua_geti(L, i, k);
		if (lua_type(L, -1) != LUA_TTABLE)
			luaL_argerror(L, i, "tile groups must all be tables: {{2,2},{3,3}}");
		m = check_ints(L, lua_gettop(L), t, LEGO_DIMS, "tile group");
		if (total + m > LEGO_DIMS)
			luaL_argerror(L, i, "the tile groups have too many dimensions");
		memcpy(d + total, t, (size_t)m * sizeof *t);
		total += m;
		glen[k - 1] = m;
		lua_pop(L, 1);
	}
	*ngroup = (int)n;
	if (total == 0)
		luaL_argerror(L, i, "no dimensions");
	return total;
}

/* Tiles t1, ..., tq from index i on, each a table of d integers. */
static void
check_tiles(lua_State *L, int i, int64_t *d, int *dd, int *q)
{
	int n = lua_gettop(L) - i + 1, k, m;

	if (n < 1)
		luaL_argerror(L, i, "tiles expected: TileBy({2,2}, {3,3})");
	if (n > LEGO_DIMS)
		luaL_argerror(L, i, "too many tile levels");
	*dd = 0;
	for (k = 0; k < n; k++) {
		int64_t t[LEGO_DIMS];
		m = check_ints(L, i + k, t, LEGO_DIMS, "tile");
		if (k == 0)
			*dd = m;
		else if (m != *dd)
			luaL_argerror(L, i + k, "every tile level must have the same number of dimensions");
		if ((k + 1) * m > LEGO_DIMS)
			luaL_argerror(L, i + k, "too many dimensions in all");
		memcpy(d + k * m, t, (size_t)m * sizeof *t);
	}
	*q = n;
}

/* Finish a constructor: the new userdata is on the top, status from C. */
static int
done(lua_State *L, lua_State *prev, int status, Err *e)
{
	leave(L, prev);
	if (status < 0)
		return fail(L, e);
	return 1;
}

/*
** Constructors
*/
static int
l_regp_num(lua_State *L)
{
	int64_t d[LEGO_DIMS], p64[LEGO_DIMS];
	int p[LEGO_DIMS], n, m, k, di = 1, pi = 2;
	LLego *u;
	Err e;

	/* RegP{dims, perm} and RegP{dims=..., perm=...} as well as RegP(dims, perm) */
	if (lua_gettop(L) == 1 && lua_type(L, 1) == LUA_TTABLE) {
		static const TesselOpt keys[] = { { "dims", "table" }, { "perm", "table" }, { NULL, NULL } };

		if (lua_getfield(L, 1, "dims") == LUA_TNIL) {
			tessel_checkseq(L, 1, "lego.RegP{dims, perm}");
			if (lua_rawlen(L, 1) != 2)
				return luaL_error(L, "lego.RegP{dims, perm}: 2 entries, not %d", (int)lua_rawlen(L, 1));
			lua_pop(L, 1);
			lua_geti(L, 1, 1);
			lua_geti(L, 1, 2);
		} else {
			tessel_checkopts(L, 1, "lego.RegP", keys);
			lua_getfield(L, 1, "perm");
		}
		di = 2;
		pi = 3;
	}
	n = check_ints(L, di, d, LEGO_DIMS, "dims");
	m = check_ints(L, pi, p64, LEGO_DIMS, "perm");
	if (m != n)
		return luaL_error(L, "lego.RegP: %d dimensions but a permutation of %d", n, m);
	for (k = 0; k < n; k++) {
		if (p64[k] < -1000 || p64[k] > 1000)
			return luaL_error(L, "lego.RegP: perm[%d] = %d is out of range", k + 1, (int)p64[k]);
		p[k] = (int)p64[k];
	}
	u = new_lego(L);
	if (lego_regp(&u->g, d, n, p, &e) < 0)
		return fail(L, &e);
	return 1;
}

static int
l_regp(lua_State *L)
{
	if (sym_dispatch(L, "RegP", 0))
		return 1;
	return l_regp_num(L);
}

static int
l_rowcol(lua_State *L, int col)
{
	int64_t d[LEGO_DIMS];
	int n = check_dims_args(L, 1, d);
	LLego *u = new_lego(L);
	Err e;

	if ((col ? lego_col(&u->g, d, n, &e) : lego_row(&u->g, d, n, &e)) < 0)
		return fail(L, &e);
	return 1;
}

static int l_row(lua_State *L) { return sym_dispatch(L, "Row", 0) ? 1 : l_rowcol(L, 0); }
static int l_col(lua_State *L) { return sym_dispatch(L, "Col", 0) ? 1 : l_rowcol(L, 1); }

static const struct {
	const char *name;
	int gen;
} builtins[] = {
	{ "identity", LEGO_GEN_IDENTITY }, { "reverse", LEGO_GEN_REVERSE },
	{ "antidiagonal", LEGO_GEN_ANTIDIAG }, { "antidiag", LEGO_GEN_ANTIDIAG },
	{ "morton", LEGO_GEN_MORTON }, { "zorder", LEGO_GEN_MORTON },
	{ "morton_rowmajor", LEGO_GEN_MORTON_ROW },
};

static int
l_genp(lua_State *L)
{
	int64_t d[LEGO_DIMS];
	int n = check_ints(L, 1, d, LEGO_DIMS, "dims"), k;
	lua_State *prev;
	LLego *u;
	GenFn *b;
	Err e;

	if (lua_type(L, 2) == LUA_TSTRING) {
		const char *name = lua_tostring(L, 2);
		uint32_t mask = 0;
		for (k = 0; k < (int)(sizeof builtins / sizeof builtins[0]); k++)
			if (strcmp(name, builtins[k].name) == 0)
				break;
		if (k == (int)(sizeof builtins / sizeof builtins[0]))
			return luaL_argerror(L, 2, lua_pushfstring(L, "unknown built-in '%s' (identity, "
			                     "reverse, antidiagonal, morton, morton_rowmajor)", name));
		if (builtins[k].gen == LEGO_GEN_REVERSE && !lua_isnoneornil(L, 3)) {
			int64_t which[LEGO_DIMS];
			int m = check_ints(L, 3, which, LEGO_DIMS, "reversed dimensions"), j;
			for (j = 0; j < m; j++) {
				if (which[j] < 0 || which[j] >= n)
					return luaL_argerror(L, 3, lua_pushfstring(L, "dimension %d is not "
					                     "0..%d (0-based)", (int)which[j], n - 1));
				mask |= 1u << which[j];
			}
		}
		u = new_lego(L);
		if (lego_genp(&u->g, d, n, builtins[k].gen, mask, &e) < 0)
			return fail(L, &e);
		return 1;
	}
	luaL_checktype(L, 2, LUA_TFUNCTION);
	luaL_checktype(L, 3, LUA_TFUNCTION);
	u = new_lego(L);                       /* index top: the layout */
	b = lua_newuserdatauv(L, sizeof *b, 2);
	memset(b, 0, sizeof *b);
	luaL_setmetatable(L, GENFN);
	b->sess = session(L);
	{
		/* messages name it as it prints: lego.GenP({3,3}, f, finv) */
		char dd[64];
		size_t len = 0;
		for (k = 0; k < n && len < sizeof dd; k++)
			len += (size_t)snprintf(dd + len, sizeof dd - len, "%s%lld", k ? "," : "", (long long)d[k]);
		snprintf(b->label, sizeof b->label, "%s", lua_isstring(L, 4) ? lua_tostring(L, 4) : "f, finv");
		snprintf(b->name, sizeof b->name, "lego.GenP({%s}, %s)", dd, b->label);
	}
	lua_pushvalue(L, 2);
	lua_setiuservalue(L, -2, 1);
	lua_pushvalue(L, 3);
	lua_setiuservalue(L, -2, 2);
	lua_getfield(L, LUA_REGISTRYINDEX, FNS);
	lua_pushvalue(L, -2);
	lua_rawsetp(L, -2, b);
	lua_pop(L, 1);
	lua_getiuservalue(L, -2, 1);           /* anchor it in the layout */
	lua_pushvalue(L, -2);
	lua_rawseti(L, -2, 1);
	lua_pop(L, 2);
	prev = enter(L);
	return done(L, prev, lego_genp_user(&u->g, d, n, lua_apply, lua_inv, b, b->label, &e), &e);
}

static int
l_orderby_num(lua_State *L)
{
	int n = lua_gettop(L), k;
	const Lego *parts[LEGO_PARTS];
	LLego *u;
	Err e;

	if (n < 1)
		return luaL_error(L, "lego.OrderBy: at least one RegP or GenP expected");
	if (n > LEGO_PARTS)
		return luaL_error(L, "lego.OrderBy: %d parts; at most %d", n, LEGO_PARTS);
	for (k = 1; k <= n; k++)
		parts[k - 1] = &check_lego(L, k)->g;
	u = new_lego(L);
	for (k = 1; k <= n; k++)
		anchor_from(L, -1, k);
	if (lego_orderby(&u->g, parts, n, &e) < 0)
		return fail(L, &e);
	return 1;
}

static int
l_orderby(lua_State *L)
{
	if (sym_dispatch(L, "OrderBy", 0))
		return 1;
	return l_orderby_num(L);
}

static int
l_tileorderby(lua_State *L)
{
	int64_t d[LEGO_DIMS];
	int dd, q;
	LLego *u;
	Err e;

	check_tiles(L, 1, d, &dd, &q);
	u = new_lego(L);
	if (lego_tileorderby(&u->g, d, dd, q, &e) < 0)
		return fail(L, &e);
	return 1;
}

static int
l_tileby_num(lua_State *L)
{
	int64_t d[LEGO_DIMS];
	int dd, q;
	LLego *u;
	Err e;

	check_tiles(L, 1, d, &dd, &q);
	u = new_lego(L);
	if (lego_tileby(&u->g, d, dd, q, &e) < 0)
		return fail(L, &e);
	return 1;
}

static int
l_tileby(lua_State *L)
{
	if (sym_dispatch(L, "TileBy", 0))
		return 1;
	return l_tileby_num(L);
}

static int
groupby_at(lua_State *L, int ti, int first, int last)
{
	int64_t d[LEGO_DIMS];
	int glen[LEGO_DIMS], ng, n, k;
	const Lego *ch[LEGO_CHAIN];
	LLego *u;
	Err e;

	n = check_groups(L, ti, d, glen, &ng);
	if (last - first + 1 > LEGO_CHAIN)
		return luaL_error(L, "lego.GroupBy: more than %d OrderBys", LEGO_CHAIN);
	for (k = first; k <= last; k++)
		ch[k - first] = &check_lego(L, k)->g;
	u = new_lego(L);
	for (k = first; k <= last; k++)
		anchor_from(L, -1, k);
	if (lego_groupby(&u->g, d, n, glen, ng, ch, last - first + 1, &e) < 0)
		return fail(L, &e);
	return 1;
}

static int
l_groupby_num(lua_State *L)
{
	return groupby_at(L, 1, 2, lua_gettop(L));
}

static int
l_groupby(lua_State *L)
{
	if (sym_dispatch(L, "GroupBy", 0))
		return 1;
	return l_groupby_num(L);
}

/* O:GroupBy(tiles) */
static int
m_groupby_num(lua_State *L)
{
	check_lego(L, 1);
	if (lua_gettop(L) != 2)
		return luaL_error(L, "GroupBy: O:GroupBy(tiles) takes the tiles only");
	return groupby_at(L, 2, 1, 1);
}

static int
m_groupby(lua_State *L)
{
	if (sym_mixed(L))
		return luaL_error(L, "lego: a numeric layout combined with symbolic dimensions or layouts; "
		                  "build every part with symbolic dimensions (lego.Row(M, N), integers allowed)");
	return m_groupby_num(L);
}

/* O:OrderBy(p1, ...) or O:OrderBy(O2): extend the chain. */
static int
m_orderby_num(lua_State *L)
{
	LLego *a = check_lego(L, 1), *b, *u;
	int n = lua_gettop(L), k;
	Err e;

	if (n < 2)
		return luaL_error(L, "OrderBy: O:OrderBy(p1, ...) needs at least one part");
	b = check_lego(L, 2);
	if (n > 2 || b->g.kind == LEGO_PERM) {
		const Lego *parts[LEGO_PARTS];
		LLego *o;
		if (n - 1 > LEGO_PARTS)
			return luaL_error(L, "OrderBy: %d parts; at most %d", n - 1, LEGO_PARTS);
		for (k = 2; k <= n; k++)
			parts[k - 2] = &check_lego(L, k)->g;
		o = new_lego(L);
		for (k = 2; k <= n; k++)
			anchor_from(L, -1, k);
		if (lego_orderby(&o->g, parts, n - 1, &e) < 0)
			return fail(L, &e);
		b = o;
	}
	u = new_lego(L);
	anchor_from(L, -1, 1);
	anchor_from(L, -1, -2);
	if (lego_then(&u->g, &a->g, &b->g, &e) < 0)
		return fail(L, &e);
	return 1;
}

static int
m_orderby(lua_State *L)
{
	if (sym_mixed(L))
		return luaL_error(L, "lego: a numeric layout combined with symbolic dimensions or layouts; "
		                  "build every part with symbolic dimensions (lego.Row(M, N), integers allowed)");
	return m_orderby_num(L);
}

/* O:TileBy(t1, ..., tq): LEGO's fluent tiling. */
static int
m_tileby_num(lua_State *L)
{
	LLego *o = check_lego(L, 1), *u;
	int64_t d[LEGO_DIMS];
	int dd, q;
	Err e;

	check_tiles(L, 2, d, &dd, &q);
	u = new_lego(L);
	anchor_from(L, -1, 1);
	if (lego_tileby_group(&u->g, &o->g, d, dd, q, &e) < 0)
		return fail(L, &e);
	return 1;
}

static int
m_tileby(lua_State *L)
{
	if (sym_mixed(L))
		return luaL_error(L, "lego: a numeric layout combined with symbolic dimensions or layouts; "
		                  "build every part with symbolic dimensions (lego.Row(M, N), integers allowed)");
	return m_tileby_num(L);
}

static int
l_expandby(lua_State *L)
{
	LLego *g = check_lego(L, 1), *u;
	int64_t ext[LEGO_DIMS], ed[LEGO_DIMS];
	int n = check_ints(L, 2, ext, LEGO_DIMS, "extents"), m = 0;
	Err e;

	if (!lua_isnoneornil(L, 3)) {
		m = check_ints(L, 3, ed, LEGO_DIMS, "expanded dims");
		if (m != n)
			return luaL_error(L, "lego.ExpandBy: %d extents but %d expanded dimensions", n, m);
	}
	u = new_lego(L);
	anchor_from(L, -1, 1);
	if (lego_expandby(&u->g, &g->g, ext, n, m ? ed : NULL, &e) < 0)
		return fail(L, &e);
	return 1;
}

/*
** Evaluation
*/
/* G:apply(i, j, ...), G:apply{i, j}, or G:apply(k) with k the row-major
** logical index. */
static int
m_apply(lua_State *L)
{
	LLego *u = check_lego(L, 1);
	int64_t x[LEGO_DIMS], f;
	int n = lua_gettop(L) - 1, k, r = u->g.rank, isint;
	lua_State *prev;
	Err e;

	if (n == 1 && lua_type(L, 2) == LUA_TTABLE) {
		n = check_ints(L, 2, x, LEGO_DIMS, "coordinate");
	} else {
		if (n > LEGO_DIMS)
			return luaL_error(L, "apply: too many coordinates");
		for (k = 0; k < n; k++) {
			x[k] = lua_tointegerx(L, k + 2, &isint);
			if (!isint)
				return luaL_typeerror(L, k + 2, "integer");
		}
	}
	if (n == 1 && r > 1) {
		int64_t a = x[0];
		if (a < 0 || a >= lego_size(&u->g))
			return luaL_error(L, "apply: logical index %d is outside 0..%d", (int)a,
			                  (int)(lego_size(&u->g) - 1));
		for (k = r - 1; k >= 0; k--) {
			x[k] = a % u->g.dim[k];
			a /= u->g.dim[k];
		}
		n = r;
	}
	if (n != r)
		return luaL_error(L, "apply: %d coordinates for a layout of %d dimensions", n, r);
	prev = enter(L);
	k = lego_apply(&u->g, x, &f, &e);
	leave(L, prev);
	if (k < 0)
		return fail(L, &e);
	lua_pushinteger(L, f);
	return 1;
}

static int
m_inv(lua_State *L)
{
	LLego *u = check_lego(L, 1);
	lua_Integer f = luaL_checkinteger(L, 2);
	int64_t x[LEGO_DIMS];
	lua_State *prev = enter(L);
	int k, rc;
	Err e;

	rc = lego_inv(&u->g, f, x, &e);
	leave(L, prev);
	if (rc < 0)
		return fail(L, &e);
	luaL_checkstack(L, u->g.rank, "inv");
	for (k = 0; k < u->g.rank; k++)
		lua_pushinteger(L, x[k]);
	return u->g.rank;
}

/*
** Lowering to expressions
*/
typedef struct Trace {
	lua_State *L;
	int ci;       /* stack index of the uop context */
} Trace;

/* Call a user GenP's function (which: 1 apply, 2 inv) with expressions;
** the results go to out[0..nout). Never raises: errors come back in e. */
static int
trace_call(Trace *t, UCtx *c, const LegoPerm *p, int which, UOp *const *in, int nin,
           UOp **out, int nout, Err *e)
{
	GenFn *b = p->ctx;
	lua_State *L = t->L;
	int top = lua_gettop(L), k, n, base;

	if (!lua_checkstack(L, nin + nout + 8))
		return err_set(e, "%s: Lua stack overflow", b->name);
	if (push_fn(L, p->ctx, which, e) < 0)
		return -1;
	for (k = 0; k < nin; k++)
		tessel_uop_push(L, in[k], t->ci);
	if (lua_pcall(L, nin, LUA_MULTRET, 0) != LUA_OK) {
		err_set(e, "%s: its %s function does not trace with uop expressions (it raised: %s); "
		        "only functions built from + - * // %% and uop.min/max/where lower",
		        b->name, which == 1 ? "apply" : "inv", errobj(L, -1));
		lua_settop(L, top);
		return -1;
	}
	n = lua_gettop(L) - top;
	base = top + 1;
	if (n == 1 && nout > 1 && lua_type(L, base) == LUA_TTABLE) {
		if (lua_rawlen(L, base) != (size_t)nout) {
			lua_settop(L, top);
			return err_set(e, "%s: inv returned a table of the wrong length", b->name);
		}
		for (k = 1; k <= nout; k++)
			lua_rawgeti(L, base, k);
		base++;
		n = nout;
	}
	if (n != nout) {
		lua_settop(L, top);
		return err_set(e, "%s: %s returned %d values for expressions, expected %d", b->name,
		               which == 1 ? "apply" : "inv", n, nout);
	}
	for (k = 0; k < nout; k++) {
		if (!tessel_uop_isexpr(L, base + k) && !lua_isinteger(L, base + k)) {
			err_set(e, "%s: %s returned a %s for expressions, not an expression (the "
			        "function does not trace)", b->name, which == 1 ? "apply" : "inv",
			        luaL_typename(L, base + k));
			lua_settop(L, top);
			return -1;
		}
		out[k] = tessel_uop_operand(L, base + k, c, "lego expr");
	}
	lua_settop(L, top);
	return 0;
}

/* A user GenP: trace its function on fresh variables and check the result at
** every point against the function itself (a traced function can still be
** wrong: == on expressions compares structure, an `if` takes one branch),
** then trace it on the real inputs. */
static int
trace_genp(void *aux, UCtx *c, const LegoPerm *p, int inverse, UOp *const *in, UOp **out, Err *e)
{
	Trace *t = aux;
	GenFn *b = p->ctx;
	UOp *v[LEGO_DIMS], *r[LEGO_DIMS];
	UBind bind[LEGO_DIMS];
	int64_t size = 1, x[LEGO_DIMS], f, a, got;
	char nm[LEGO_DIMS][16];
	int k, nin = inverse ? 1 : p->rank, nout = inverse ? p->rank : 1;

	for (k = 0; k < p->rank; k++)
		size *= p->dim[k];
	for (k = 0; k < nin; k++) {
		snprintf(nm[k], sizeof nm[k], "g%d", k);
		v[k] = uop_var(c, nm[k], 0, (inverse ? size : p->dim[k]) - 1);
		bind[k].name = nm[k];
		if (!v[k])
			return err_set(e, "lower: out of memory");
	}
	if (trace_call(t, c, p, inverse ? 2 : 1, v, nin, r, nout, e) < 0)
		return -1;
	if (size > LEGO_VERIFY_LIMIT)
		return err_set(e, "%s: %lld elements are too many to check its traced expression "
		               "(at most %d)", b->name, (long long)size, LEGO_VERIFY_LIMIT);
	for (a = 0; a < size; a++) {
		for (k = p->rank - 1, f = a; k >= 0; k--) {
			x[k] = f % p->dim[k];
			f /= p->dim[k];
		}
		if (p->apply(p->ctx, x, p->rank, &f, e) < 0)
			return -1;
		if (!inverse) {
			for (k = 0; k < nin; k++)
				bind[k].value = x[k];
			if (uop_eval(r[0], bind, nin, &got, e) < 0)
				return -1;
			if (got != f)
				return err_set(e, "%s: the traced apply expression gives %lld at element %lld, "
				               "the function %lld (it does not trace faithfully)", b->name,
				               (long long)got, (long long)a, (long long)f);
		} else {
			bind[0].value = f;
			for (k = 0; k < nout; k++) {
				if (uop_eval(r[k], bind, 1, &got, e) < 0)
					return -1;
				if (got != x[k])
					return err_set(e, "%s: the traced inv expression gives %lld for coordinate "
					               "%d at %lld, expected %lld (it does not trace faithfully)",
					               b->name, (long long)got, k, (long long)f, (long long)x[k]);
			}
		}
	}
	return trace_call(t, c, p, inverse ? 2 : 1, in, nin, out, nout, e);
}

/* Parse G:expr's arguments: [which], [opts] -> inverse, raw; the inputs are
** pushed as expressions into in[] (names or expressions from opts). */
static const TesselOpt expr_keys[] = { { "raw", "boolean" }, { "vars", "table" }, { NULL, NULL } };

static int
expr_args(lua_State *L, int a, int *inverse, int *raw, int *vi)
{
	*inverse = 0;
	*raw = 0;
	*vi = 0;
	if (lua_type(L, a) == LUA_TSTRING) {
		const char *w = lua_tostring(L, a);
		if (strcmp(w, "inv") == 0)
			*inverse = 1;
		else if (strcmp(w, "apply") != 0)
			return luaL_argerror(L, a, "\"apply\" or \"inv\"");
		a++;
	}
	if (lua_type(L, a) == LUA_TTABLE) {
		tessel_checkopts(L, a, "G:expr", expr_keys);
		lua_getfield(L, a, "raw");
		*raw = lua_toboolean(L, -1);
		lua_pop(L, 1);
		*vi = a;
	} else if (!lua_isnoneornil(L, a))
		return luaL_typeerror(L, a, "\"apply\", \"inv\" or a table of options");
	return 0;
}

/* Inputs: opts.vars[k] (a name or an expression) or the default variables. */
static void
expr_inputs(lua_State *L, int vi, const Lego *g, int inverse, UCtx *c, UOp **in, int *n)
{
	const char *names[LEGO_DIMS] = {0};
	int k, m = inverse ? 1 : g->rank;
	Err e;

	if (vi) {
		lua_getfield(L, vi, "vars");
		if (lua_istable(L, -1)) {
			if (lua_rawlen(L, -1) != (size_t)m)
				luaL_error(L, "expr: %d vars for %d inputs", (int)lua_rawlen(L, -1), m);
			for (k = 0; k < m; k++) {
				lua_rawgeti(L, -1, k + 1);
				if (lua_type(L, -1) == LUA_TSTRING)
					names[k] = lua_tostring(L, -1);   /* anchored by opts */
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 1);
	}
	if (lower_lego_vars(c, g, inverse, names, in, n, &e) < 0)
		luaL_error(L, "expr: %s", e.msg);
	if (vi) {
		lua_getfield(L, vi, "vars");
		for (k = 0; k < m && lua_istable(L, -1); k++) {
			lua_rawgeti(L, -1, k + 1);
			if (lua_type(L, -1) != LUA_TSTRING)
				in[k] = tessel_uop_operand(L, -1, c, "expr");
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
}

static int
m_expr_at(lua_State *L, int force_inv)
{
	LLego *u = check_lego(L, 1);
	UOp *in[LEGO_DIMS], *out[LEGO_DIMS];
	int inverse, raw, vi, n, k, ci, rc;
	lua_State *prev;
	UCtx *c;
	Trace t;
	Err e;

	expr_args(L, 2, &inverse, &raw, &vi);
	inverse |= force_inv;
	c = tessel_uop_begin(L);
	ci = lua_gettop(L);
	expr_inputs(L, vi, &u->g, inverse, c, in, &n);
	t.L = L;
	t.ci = ci;
	prev = enter(L);
	rc = lower_lego(c, &u->g, inverse, in, out, trace_genp, &t, &e);
	leave(L, prev);
	if (rc < 0)
		return luaL_error(L, "expr: %s", e.msg);
	n = inverse ? u->g.rank : 1;
	for (k = 0; k < n; k++)
		if (!raw && uop_simplify(c, out[k], &out[k], &e) < 0)
			return luaL_error(L, "expr: %s", e.msg);
	luaL_checkstack(L, n, "expr");
	for (k = 0; k < n; k++)
		tessel_uop_push(L, out[k], ci);
	return n;
}

static int m_expr(lua_State *L) { return m_expr_at(L, 0); }
static int m_inv_expr(lua_State *L) { return m_expr_at(L, 1); }

/*
** Symbolic LEGO. A layout whose dimensions are uop expressions (lego.Row(M, N)
** with M = uop.var("M", 1, 4096)) cannot be a Lego (lego.c's layouts are
** numeric and checked by enumeration): it is a plain Lua value built by the
** chunk below, whose only operations are lowering (expr, inv_expr) through
** lower_lego_sym. The lego constructors hand over to it when an argument
** holds an expression or a symbolic layout.
*/
#define SYMKEY "tessel.lego.sym"
static const char sym_chunk[] =
	"-- symbolic LEGO (dimensions are uop expressions): constructors and methods\n"
	"local lower, isexpr, tonum = ...\n"
	"local Sym = { __name = \"lego.SymLayout\" }\n"
	"local M = {}\n"
	"Sym.__index = M\n"
	"\n"
	"local function nm(d) return tostring(d) end\n"
	"local function isint(d) return math.type(d) == \"integer\" end\n"
	"local function dim(d, what)\n"
	"  if isexpr(d) or isint(d) then return d end\n"
	"  error(what .. \": a dimension must be an integer or a uop expression, got \" .. type(d), 3)\n"
	"end\n"
	"local function dims_of(t, what)\n"
	"  local out = {}\n"
	"  for k = 1, #t do out[k] = dim(t[k], what) end\n"
	"  if #out < 1 or #out > 12 then error(what .. \": 1 to 12 dimensions\", 3) end\n"
	"  return out\n"
	"end\n"
	"local function copy(t) local o = {} for k, v in ipairs(t) do o[k] = v end return o end\n"
	"local function dimstr(d)\n"
	"  local s = {}\n"
	"  for k, v in ipairs(d) do s[k] = nm(v) end\n"
	"  return \"{\" .. table.concat(s, \", \") .. \"}\"\n"
	"end\n"
	"local function new(kind, rank_dims, chain, text)\n"
	"  return setmetatable({ kind_ = kind, dims_ = rank_dims, chain = chain, text = text }, Sym)\n"
	"end\n"
	"local function perm(dims, p, text)\n"
	"  return new(\"perm\", dims, { { { dims = dims, perm = p } } }, text)\n"
	"end\n"
	"\n"
	"function M.RegP(dims, p)\n"
	"  dims = dims_of(dims, \"lego.RegP\")\n"
	"  if type(p) ~= \"table\" or #p ~= #dims then error(\"lego.RegP: a permutation of \" .. #dims .. \" entries\", 2) end\n"
	"  local seen = {}\n"
	"  for k = 1, #p do\n"
	"    if not isint(p[k]) or p[k] < 0 or p[k] >= #dims or seen[p[k]] then\n"
	"      error(\"lego.RegP: perm must be a permutation of 0..\" .. (#dims - 1) .. \" (0-based)\", 2)\n"
	"    end\n"
	"    seen[p[k]] = true\n"
	"  end\n"
	"  return perm(dims, copy(p), \"lego.RegP(\" .. dimstr(dims) .. \", {\" .. table.concat(p, \",\") .. \"})\")\n"
	"end\n"
	"function M.Row(...)\n"
	"  local d = dims_of({...}, \"lego.Row\")\n"
	"  local p = {} for k = 1, #d do p[k] = k - 1 end\n"
	"  return perm(d, p, \"lego.Row\" .. dimstr(d):gsub(\"^{\", \"(\"):gsub(\"}$\", \")\"))\n"
	"end\n"
	"function M.Col(...)\n"
	"  local d = dims_of({...}, \"lego.Col\")\n"
	"  local p = {} for k = 1, #d do p[k] = #d - k end\n"
	"  return perm(d, p, \"lego.Col\" .. dimstr(d):gsub(\"^{\", \"(\"):gsub(\"}$\", \")\"))\n"
	"end\n"
	"local function sigma(d, q)\n"
	"  local s = {}\n"
	"  for k = 0, d - 1 do for h = 0, q - 1 do s[k * q + h + 1] = k + d * h end end\n"
	"  return s\n"
	"end\n"
	"local function levels(args, what)\n"
	"  local q, d, all = #args, nil, {}\n"
	"  if q < 1 then error(what .. \": give the tile levels as tables\", 3) end\n"
	"  for h = 1, q do\n"
	"    if type(args[h]) ~= \"table\" then error(what .. \": each level is a table of dimensions\", 3) end\n"
	"    d = d or #args[h]\n"
	"    if #args[h] ~= d then error(what .. \": the levels differ in rank\", 3) end\n"
	"    for k = 1, d do all[#all + 1] = dim(args[h][k], what) end\n"
	"  end\n"
	"  if #all > 12 then error(what .. \": at most 12 dimensions\", 3) end\n"
	"  return all, d, q\n"
	"end\n"
	"function M.TileBy(...)\n"
	"  local all, d, q = levels({...}, \"lego.TileBy\")\n"
	"  local p = sigma(d, q)\n"
	"  return perm(all, p, \"lego.TileBy(...)\")\n"
	"end\n"
	"local function tileorderby(all, d, q)\n"
	"  local sm, s, inv = {}, sigma(d, q), {}\n"
	"  for k = 0, d - 1 do for h = 0, q - 1 do sm[k * q + h + 1] = all[h * d + k + 1] end end\n"
	"  for k = 1, d * q do inv[s[k] + 1] = k - 1 end\n"
	"  return { { dims = sm, perm = inv } }\n"
	"end\n"
	"function M.OrderBy(...)\n"
	"  local parts, d = {}, {}\n"
	"  for k, p in ipairs({...}) do\n"
	"    if getmetatable(p) ~= Sym or p.kind_ ~= \"perm\" then\n"
	"      error(\"lego.OrderBy: part \" .. k .. \" is not a symbolic RegP: the parts of a symbolic OrderBy are all symbolic (a part of constant sizes becomes one with a size given as uop.const(n): lego.Row(uop.const(2), 2))\", 2)\n"
	"    end\n"
	"    parts[k] = p.chain[1][1]\n"
	"    for _, v in ipairs(p.dims_) do d[#d + 1] = v end\n"
	"  end\n"
	"  if #parts < 1 or #parts > 8 then error(\"lego.OrderBy: 1 to 8 parts\", 2) end\n"
	"  if #d > 12 then error(\"lego.OrderBy: the parts have more than 12 dimensions\", 2) end\n"
	"  return new(\"orderby\", d, { parts }, \"lego.OrderBy(...)\")\n"
	"end\n"
	"local function splice(chain, x, what)\n"
	"  if getmetatable(x) ~= Sym then error(what .. \": a symbolic layout's chain holds symbolic OrderBys\", 3) end\n"
	"  if x.kind_ == \"groupby\" then error(what .. \": a GroupBy cannot be chained\", 3) end\n"
	"  for _, o in ipairs(x.chain) do chain[#chain + 1] = o end\n"
	"end\n"
	"function M.GroupBy(dims, ...)\n"
	"  dims = dims_of(dims, \"lego.GroupBy\")\n"
	"  local chain = {}\n"
	"  for _, x in ipairs({...}) do splice(chain, x, \"lego.GroupBy\") end\n"
	"  if #chain < 1 or #chain > 8 then error(\"lego.GroupBy: 1 to 8 OrderBys\", 2) end\n"
	"  return new(\"groupby\", dims, chain, \"lego.GroupBy(\" .. dimstr(dims) .. \", ...)\")\n"
	"end\n"
	"\n"
	"local meth = {}\n"
	"function meth.OrderBy(a, ...)\n"
	"  local b = select(\"#\", ...) == 1 and getmetatable((...)) == Sym and (...) or M.OrderBy(...)\n"
	"  if a.kind_ == \"groupby\" then error(\"OrderBy: the layout is already grouped\", 2) end\n"
	"  local chain, d = {}, {}\n"
	"  splice(chain, a, \"OrderBy\"); splice(chain, b, \"OrderBy\")\n"
	"  for _, p in ipairs(chain[#chain]) do for _, v in ipairs(p.dims) do d[#d + 1] = v end end\n"
	"  return new(\"chain\", d, chain, \"(chain)\")\n"
	"end\n"
	"function meth.GroupBy(a, dims) return M.GroupBy(dims, a) end\n"
	"function meth.TileBy(o, ...)\n"
	"  if o.kind_ == \"groupby\" then error(\"TileBy: the layout is already grouped\", 2) end\n"
	"  local all, d, q = levels({...}, \"TileBy\")\n"
	"  local chain = {}\n"
	"  for _, ord in ipairs(o.chain) do\n"
	"    chain[#chain + 1] = ord\n"
	"    if #ord > 1 then\n"
	"      local dd, tile = #ord[1].dims, {}\n"
	"      for _, p in ipairs(ord) do\n"
	"        if #p.dims ~= dd then error(\"TileBy: the parts differ in rank\", 2) end\n"
	"        for _, v in ipairs(p.dims) do tile[#tile + 1] = v end\n"
	"      end\n"
	"      chain[#chain + 1] = tileorderby(tile, dd, #ord)\n"
	"    end\n"
	"  end\n"
	"  chain[#chain + 1] = { { dims = all, perm = sigma(d, q) } }\n"
	"  return new(\"groupby\", all, chain, \"(TileBy)\")\n"
	"end\n"
	"local function symbolic_dim(g)\n"
	"  for _, v in ipairs(g.dims_) do if isexpr(v) then return nm(v) end end\n"
	"  for _, o in ipairs(g.chain) do for _, p in ipairs(o) do\n"
	"    for _, v in ipairs(p.dims) do if isexpr(v) then return nm(v) end end end end\n"
	"  return \"?\"\n"
	"end\n"
	"local function refuse(what)\n"
	"  return function(g)\n"
	"    error(what .. \": the layout has the symbolic dimension \" .. symbolic_dim(g) ..\n"
	"          \"; it exists only as expressions (G:expr(), G:inv_expr())\", 2)\n"
	"  end\n"
	"end\n"
	"for _, w in ipairs({ \"apply\", \"inv\", \"check\", \"size\", \"cosize\", \"steps\", \"to_cute\", \"ExpandBy\" }) do\n"
	"  meth[w] = refuse(w)\n"
	"end\n"
	"function meth.expr(g, which, opts)\n"
	"  if type(which) == \"table\" then which, opts = nil, which end\n"
	"  if which ~= nil and which ~= \"apply\" and which ~= \"inv\" then\n"
	"    error(\"expr: which is \\\"apply\\\" or \\\"inv\\\"\", 2)\n"
	"  end\n"
	"  return lower(g, which == \"inv\", opts)\n"
	"end\n"
	"function meth.inv_expr(g, opts) return lower(g, true, opts) end\n"
	"function meth.dims(g) return copy(g.dims_) end\n"
	"function meth.rank(g) return #g.dims_ end\n"
	"function meth.kind(g) return g.kind_ end\n"
	"Sym.__index = meth\n"
	"Sym.__tostring = function(g) return \"symbolic \" .. g.text .. \" dims \" .. dimstr(g.dims_) end\n"
	"Sym.__call = refuse(\"apply\")\n"
	"Sym.__len = refuse(\"size\")\n"
	"return M, Sym\n"
	"\n";

/* Read one symbolic part {dims = {...}, perm = {...}} at the top of the stack. */
static void
sym_part(lua_State *L, UCtx *c, LegoSymPerm *p)
{
	unsigned seen = 0;
	int k, n;

	lua_getfield(L, -1, "dims");
	lua_getfield(L, -2, "perm");
	n = (int)lua_rawlen(L, -2);
	if (n < 1 || n > LEGO_DIMS || lua_rawlen(L, -1) != (size_t)n)
		luaL_error(L, "lego: a malformed symbolic part");
	p->rank = n;
	for (k = 0; k < n; k++) {
		lua_Integer t;
		lua_rawgeti(L, -2, k + 1);
		p->dim[k] = tessel_uop_operand(L, -1, c, "lego");
		lua_pop(L, 1);
		lua_rawgeti(L, -1, k + 1);
		t = lua_tointeger(L, -1);
		lua_pop(L, 1);
		/* a permutation: the walker's gather and scatter fill every slot once */
		if (t < 0 || t >= n || (seen >> t & 1))
			luaL_error(L, "lego: a malformed symbolic part");
		seen |= 1u << t;
		p->perm[k] = (int)t;
	}
	lua_pop(L, 2);
}

/* lower(g, inverse, opts) for the chunk: g's table into a LegoSym, lowered. */
static int
sym_lower(lua_State *L)
{
	LegoSym *g;
	UOp *in[LEGO_DIMS], *out[LEGO_DIMS];
	int inverse = lua_toboolean(L, 2), raw = 0, n, k, i, j, ci, nin;
	UCtx *c;
	Err e;

	luaL_checktype(L, 1, LUA_TTABLE);
	if (lua_istable(L, 3)) {
		tessel_checkopts(L, 3, "G:expr", expr_keys);
		lua_getfield(L, 3, "raw");
		raw = lua_toboolean(L, -1);
		lua_pop(L, 1);
	} else if (!lua_isnil(L, 3))
		return luaL_error(L, "G:expr: the options are a table, not a %s", luaL_typename(L, 3));
	c = tessel_uop_begin(L);
	ci = lua_gettop(L);
	g = lua_newuserdatauv(L, sizeof *g, 0);   /* anchored: freed by the collector */
	memset(g, 0, sizeof *g);
	lua_getfield(L, 1, "dims_");
	n = (int)lua_rawlen(L, -1);
	if (n < 1 || n > LEGO_DIMS)
		return luaL_error(L, "lego: a malformed symbolic layout");
	g->rank = n;
	for (k = 0; k < n; k++) {
		lua_rawgeti(L, -1, k + 1);
		g->dim[k] = tessel_uop_operand(L, -1, c, "lego");
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	lua_getfield(L, 1, "chain");
	g->nchain = (int)lua_rawlen(L, -1);
	if (g->nchain < 1 || g->nchain > LEGO_CHAIN)
		return luaL_error(L, "lego: a symbolic layout of %d orders (1 to %d)", g->nchain, LEGO_CHAIN);
	for (i = 0; i < g->nchain; i++) {
		lua_rawgeti(L, -1, i + 1);
		g->chain[i].nparts = (int)lua_rawlen(L, -1);
		if (g->chain[i].nparts < 1 || g->chain[i].nparts > LEGO_PARTS)
			return luaL_error(L, "lego: a malformed symbolic order");
		for (j = 0; j < g->chain[i].nparts; j++) {
			lua_rawgeti(L, -1, j + 1);
			sym_part(L, c, &g->chain[i].part[j]);
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	/* inputs: opts.vars (names or expressions), else i0, i1, ... or k with
	** ranges from the dimensions' upper bounds */
	nin = inverse ? 1 : n;
	for (k = 0; k < nin; k++) {
		char nm[16];
		int64_t hi;
		if (inverse) {
			UOp *s = g->dim[0];
			for (j = 1; j < n; j++)
				s = uop_mul(c, s, g->dim[j]);
			hi = s ? s->vmax : 1;
			snprintf(nm, sizeof nm, "k");
		} else {
			hi = g->dim[k]->vmax;
			snprintf(nm, sizeof nm, "i%d", k);
		}
		if (hi < 1)
			return luaL_error(L, "expr: a symbolic dimension may be 0 or negative; give it a "
			                  "positive range");
		if (lua_istable(L, 3) && lua_getfield(L, 3, "vars") == LUA_TTABLE) {
			if (lua_rawlen(L, -1) != (size_t)nin)
				return luaL_error(L, "expr: %d vars for %d inputs", (int)lua_rawlen(L, -1), nin);
			lua_rawgeti(L, -1, k + 1);
			if (lua_type(L, -1) == LUA_TSTRING) {
				if (!uop_valid_name(lua_tostring(L, -1)))
					return luaL_error(L, "expr: '%s' is not a variable name", lua_tostring(L, -1));
				in[k] = uop_var(c, lua_tostring(L, -1), 0, hi - 1);
			} else
				in[k] = tessel_uop_operand(L, -1, c, "expr");
			lua_pop(L, 2);
		} else {
			if (lua_istable(L, 3))
				lua_pop(L, 1);
			in[k] = uop_var(c, nm, 0, hi - 1);
		}
	}
	if (lower_lego_sym(c, g, inverse, in, out, &e) < 0)
		return luaL_error(L, "expr: %s", e.msg);
	n = inverse ? n : 1;
	luaL_checkstack(L, n, "expr");
	for (k = 0; k < n; k++) {
		if (!raw && uop_simplify(c, out[k], &out[k], &e) < 0)
			return luaL_error(L, "expr: %s", e.msg);
		tessel_uop_push(L, out[k], ci);
	}
	return n;
}

static int
sym_isexpr(lua_State *L)
{
	lua_pushboolean(L, tessel_uop_isexpr(L, 1));
	return 1;
}

/* Whether argument i (or, for a table, one of its entries, two levels deep)
** is a uop expression or a symbolic layout. */
static int
is_sym_value(lua_State *L, int i, int depth)
{
	int t = lua_type(L, i), r = 0;

	i = lua_absindex(L, i);
	if (tessel_uop_isexpr(L, i))
		return 1;
	if (t == LUA_TTABLE) {
		if (lua_getmetatable(L, i)) {
			lua_getfield(L, LUA_REGISTRYINDEX, SYMKEY);
			lua_rawgeti(L, -1, 2);
			r = lua_rawequal(L, -1, -3);
			lua_pop(L, 3);
			if (r)
				return 1;
		}
		if (depth > 0) {
			lua_Integer k, n = (lua_Integer)lua_rawlen(L, i);
			for (k = 1; k <= n && k <= 64 && !r; k++) {
				lua_rawgeti(L, i, k);
				r = is_sym_value(L, -1, depth - 1);
				lua_pop(L, 1);
			}
		}
	}
	return r;
}

/* If any argument is symbolic, call the chunk's constructor `name` with the
** arguments (self included for methods) and return 1 with its result on the stack. */
static int
sym_dispatch(lua_State *L, const char *name, int method)
{
	int n = lua_gettop(L), i, any = 0;

	for (i = 1; i <= n && !any; i++)
		any = is_sym_value(L, i, 2);
	if (!any)
		return 0;
	lua_getfield(L, LUA_REGISTRYINDEX, SYMKEY);
	lua_rawgeti(L, -1, method ? 2 : 1);
	if (method) {
		lua_getfield(L, -1, "__index");
		lua_getfield(L, -1, name);
	} else
		lua_getfield(L, -1, name);
	for (i = 1; i <= n; i++)
		lua_pushvalue(L, i);
	lua_call(L, n, 1);
	return 1;
}

static int
sym_mixed(lua_State *L)
{
	int i, n = lua_gettop(L);

	for (i = 2; i <= n; i++)
		if (is_sym_value(L, i, 2))
			return 1;
	return 0;
}

static void
sym_open(lua_State *L)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, SYMKEY) == LUA_TTABLE) {
		lua_pop(L, 1);
		return;
	}
	lua_pop(L, 1);
	if (luaL_loadbuffer(L, sym_chunk, sizeof sym_chunk - 1, "=lego.sym") != LUA_OK)
		lua_error(L);
	lua_pushcfunction(L, sym_lower);
	lua_pushcfunction(L, sym_isexpr);
	lua_call(L, 2, 2);
	lua_createtable(L, 2, 0);
	lua_insert(L, -3);
	lua_rawseti(L, -3, 2);
	lua_rawseti(L, -2, 1);
	lua_setfield(L, LUA_REGISTRYINDEX, SYMKEY);
}

static int
m_size(lua_State *L)
{
	lua_pushinteger(L, lego_size(&check_lego(L, 1)->g));
	return 1;
}

static int
m_cosize(lua_State *L)
{
	lua_pushinteger(L, lego_cosize(&check_lego(L, 1)->g));
	return 1;
}

static int
m_rank(lua_State *L)
{
	lua_pushinteger(L, check_lego(L, 1)->g.rank);
	return 1;
}

static int
m_dims(lua_State *L)
{
	LLego *u = check_lego(L, 1);
	int k;

	lua_createtable(L, u->g.rank, 0);
	for (k = 0; k < u->g.rank; k++) {
		lua_pushinteger(L, u->g.dim[k]);
		lua_rawseti(L, -2, k + 1);
	}
	return 1;
}

static int
m_kind(lua_State *L)
{
	static const char *const k[] = { "perm", "orderby", "chain", "groupby" };

	lua_pushstring(L, k[check_lego(L, 1)->g.kind]);
	return 1;
}

/* G:check([limit]) -> true | false, message (nil, message when too large). */
static int
m_check(lua_State *L)
{
	LLego *u = check_lego(L, 1);
	lua_Integer lim = luaL_optinteger(L, 2, limits_value(LIMIT_CHECK_ELEMS));
	lua_State *prev;
	Err e;
	int rc;

	if (lim < 0 || (lim > (1 << 26) && lim > limits_value(LIMIT_CHECK_ELEMS)))
		return luaL_argerror(L, 2, "limit must be 0 .. 2^26 (or up to tessel.limits().check_elems)");
	prev = enter(L);
	rc = lego_check(&u->g, lim, &e);
	leave(L, prev);
	if (rc == 1) {
		lua_pushboolean(L, 1);
		return 1;
	}
	if (rc == 0) {
		lua_pushnil(L);
		lua_pushfstring(L, "check: %I elements are more than the limit %I; not enumerated (raise it "
		                "with G:check(N) or tessel.limits{check_elems = N})", (lua_Integer)lego_size(&u->g),
		                lim);
		return 2;
	}
	lua_pushboolean(L, 0);
	lua_pushstring(L, e.msg);
	return 2;
}

static int
m_steps(lua_State *L)
{
	LLego *u = check_lego(L, 1);
	int inverse = lua_isstring(L, 2) && strcmp(lua_tostring(L, 2), "inv") == 0;
	LegoProg *p = malloc(sizeof *p);
	Buf b;
	Err e;

	if (!p)
		return luaL_error(L, "steps: out of memory");
	if (lego_prog(&u->g, inverse, p, &e) < 0) {
		free(p);
		return fail(L, &e);
	}
	buf_init(&b);
	lego_prog_print(&b, p);
	free(p);
	lua_pushstring(L, b.s ? b.s : "");
	buf_free(&b);
	return 1;
}

static int
m_to_cute(lua_State *L)
{
	LLego *u = check_lego(L, 1);
	Layout l;
	Err e;

	if (lego_to_cute(&u->g, &l, &e) < 0)
		return fail(L, &e);
	tessel_pushlayout(L, &l);
	return 1;
}

static int
l_from_cute(lua_State *L)
{
	Layout tmp;
	const Layout *l = tessel_checklayout(L, 1, &tmp);
	LLego *u = new_lego(L);
	Err e;

	if (lego_from_cute(&u->g, l, &e) < 0)
		return fail(L, &e);
	return 1;
}

/*
** Metamethods
*/
static int
mm_tostring(lua_State *L)
{
	LLego *u = check_lego(L, 1);
	Buf b;

	buf_init(&b);
	lego_print(&b, &u->g);
	lua_pushstring(L, b.s ? b.s : "?");
	buf_free(&b);
	return 1;
}

static int
mm_len(lua_State *L)
{
	return m_size(L);
}

/* == compares the functions when both are small enough to enumerate, else the notation. */
static int
mm_eq(lua_State *L)
{
	LLego *a = check_lego(L, 1), *b = check_lego(L, 2);
	int64_t n = lego_size(&a->g), k, x[LEGO_DIMS], f = 0, g = 0;
	LegoProg *pa, *pb;
	lua_State *prev;
	Err e;
	int same = 1, rc = 0;

	if (a->g.rank != b->g.rank || memcmp(a->g.dim, b->g.dim, sizeof a->g.dim) ||
	    lego_cosize(&a->g) != lego_cosize(&b->g)) {
		lua_pushboolean(L, 0);
		return 1;
	}
	if (n > (1 << 20)) {
		Buf x1, x2;
		buf_init(&x1);
		buf_init(&x2);
		lego_print(&x1, &a->g);
		lego_print(&x2, &b->g);
		lua_pushboolean(L, x1.s && x2.s && strcmp(x1.s, x2.s) == 0);
		buf_free(&x1);
		buf_free(&x2);
		return 1;
	}
	pa = malloc(sizeof *pa);
	pb = malloc(sizeof *pb);
	if (!pa || !pb) {
		free(pa);
		free(pb);
		return luaL_error(L, "==: out of memory");
	}
	rc = lego_prog(&a->g, 0, pa, &e);
	if (rc == 0)
		rc = lego_prog(&b->g, 0, pb, &e);
	prev = enter(L);
	for (k = 0; k < n && same && rc == 0; k++) {
		int64_t r = k;
		int j;
		for (j = a->g.rank - 1; j >= 0; j--) {
			x[j] = r % a->g.dim[j];
			r /= a->g.dim[j];
		}
		rc = lego_run(pa, x, &f, &e);
		if (rc == 0)
			rc = lego_run(pb, x, &g, &e);
		same = f == g;
	}
	leave(L, prev);
	free(pa);
	free(pb);
	if (rc < 0)
		return fail(L, &e);
	lua_pushboolean(L, same);
	return 1;
}

static int
mm_call(lua_State *L)
{
	return m_apply(L);
}

/* The drawable protocol (tessel.h): fill the scene for show, viz.render, viz.dot. */
static int
mm_scene(lua_State *L)
{
	LLego *u = check_lego(L, 1);
	int rank = u->g.rank, cell, fit, rc;
	lua_State *prev;
	VizOpts o;
	Err e;

	if (!tessel_vizopts(L, 2, 3, &o, NULL) && tessel_scene_target(L, 3) == TESSEL_TERM) {
		/* a physical-view cell shows a coordinate: about 3 characters a dimension */
		cell = 3 * rank + 3;
		if (num_digits(lego_cosize(&u->g)) + 4 > cell)
			cell = num_digits(lego_cosize(&u->g)) + 4;
		fit = (tessel_term_width() / 2 - 6) / cell;
		if (fit < 4)
			fit = 4;
		if (fit < o.max_cols)
			o.max_cols = fit;
	}
	if (tessel_scene_target(L, 3) == TESSEL_TERM && lua_getfield(L, 2, "max_rows") == LUA_TNIL)
		o.max_rows = 32;
	prev = enter(L);
	rc = lego_scene(tessel_toscene(L, 3), &u->g, &o, &e);
	leave(L, prev);
	return rc < 0 ? fail(L, &e) : 0;
}

/*
** Registration
*/
typedef HelpReg Fn;

static const Fn funcs[] = {
	{ "RegP", l_regp,
	  "a regular permutation of a tile's dimensions\n"
	  "lego.RegP(dims, perm) | lego.RegP{dims, perm}: physical dimension t is logical dimension\n"
	  "perm[t] (a gather, 0-based; the paper writes perm 1-based). apply flattens the permuted\n"
	  "coordinate row-major.\n"
	  "  lego.RegP({2,3,2,3}, {0,2,1,3})   -- Figure 6's B: 2x2 tiles of 3x3" },
	{ "GenP", l_genp,
	  "a general bijection of a tile: built-in or a pair of Lua functions\n"
	  "lego.GenP(dims, \"identity\"|\"reverse\"|\"antidiagonal\"|\"morton\" [, reversed dims])\n"
	  "morton is LEGO's Z-order (Morton2DFast): dimension 0 on the even bits, (0,1) -> 2;\n"
	  "\"morton_rowmajor\" the other order (the last dimension on the even bits).\n"
	  "lego.GenP(dims, f, finv [, label]): f(i, j, ...) -> flat index, finv(k) -> i, j, ... (or a\n"
	  "table). Checked by enumeration when it has at most 65536 elements; errors in f name the\n"
	  "coordinate. label is how it prints (default \"f, finv\").\n"
	  "  lego.GenP({3,3}, \"antidiagonal\")   lego.GenP({4}, function(i) return 3-i end, function(k) return 3-k end)" },
	{ "Row", l_row,
	  "row-major order of a tile: RegP with the identity\n"
	  "lego.Row(6, 6) | lego.Row{6,6}. A uop expression as a dimension (lego.Row(M, N), M a\n"
	  "uop.var) makes a symbolic layout, as in every constructor: see help \"lego.SymLayout\"." },
	{ "Col", l_col,
	  "column-major order of a tile: RegP reversing the dimensions\n"
	  "lego.Col(6, 6) | lego.Col{6,6}" },
	{ "TileBy", l_tileby,
	  "hierarchical tiling as a RegP: tile coordinates -> the untiled row-major index\n"
	  "lego.TileBy(t1, ..., tq): logical dims t1..tq (q levels of d dims), perm sigma_{d,q}.\n"
	  "  lego.TileBy({2,2}, {3,3})  -- (ti, tj, i, j) -> (3*ti + i)*6 + 3*tj + j" },
	{ "TileOrderBy", l_tileorderby,
	  "an OrderBy storing a row-major index tile by tile\n"
	  "lego.TileOrderBy(t1, ..., tq) = OrderBy(RegP(stripmined dims, sigma^-1)).\n"
	  "  lego.TileOrderBy({2,2}, {3,3}) is Figure 6's B" },
	{ "OrderBy", l_orderby,
	  "tile levels, outermost first, each reordered by its RegP or GenP\n"
	  "lego.OrderBy(P1, ..., Pk): the input index is unflattened row-major over the concatenated\n"
	  "dimensions of P1..Pk (no stripmining), each level is mapped by its P, and the levels'\n"
	  "results are flattened outermost-in. Fluent: O:OrderBy(P...) chains, O:GroupBy(tiles),\n"
	  "O:TileBy(t1, ..., tq) as in LEGO's Python API." },
	{ "GroupBy", l_groupby,
	  "a logical view and a chain of OrderBys: the whole layout\n"
	  "lego.GroupBy(tiles, O1, ..., Ok): tiles {6,6} or {{2,2},{3,3}} (levels, concatenated).\n"
	  "apply flattens the logical index and runs Ok first, O1 last: the OrderBy written nearest\n"
	  "the GroupBy in the fluent form O1:OrderBy(O2):GroupBy(tiles) runs first. Sizes must agree.\n"
	  "  G = lego.GroupBy({6,6}, C, B)  G:apply(4, 2)  G:inv(15)  show(G)" },
	{ "ExpandBy", l_expandby,
	  "partial tiles: apply gives -1 outside the original extents\n"
	  "lego.ExpandBy(G, extents [, expanded]): G's physical index, unflattened over the expanded\n"
	  "dims (default: per dimension the product of G's tile levels), is kept when inside the\n"
	  "extents and flattened over them; inv maps back. G:ExpandBy(extents) is the same." },
	{ "from_cute", l_from_cute,
	  "a compact CuTe layout as a LEGO layout\n"
	  "lego.from_cute(L): L compact (its image is 0..size-1); the logical dims are L's flattened\n"
	  "modes, ordered by a RegP. G(crd) equals L at the flattened coordinate." },
	{ NULL, NULL, NULL }
};

static const Fn methods[] = {
	{ "apply", m_apply,
	  "the physical index of a logical coordinate\n"
	  "G:apply(i, j, ...) | G:apply{i, j} | G:apply(k) (k the row-major logical index); also G(i, j).\n"
	  "-1 outside ExpandBy's extents." },
	{ "inv", m_inv,
	  "the logical coordinate of a physical index\n"
	  "G:inv(k) -> i, j, ... (one value per logical dimension)" },
	{ "expr", m_expr,
	  "apply (or inv) as index expressions\n"
	  "G:expr([\"apply\"|\"inv\"] [, {vars = {...}, raw = true}]) -> apply: one expression of the\n"
	  "logical coordinates (variables i0, i1, ... in [0, dim)); inv: one expression per logical\n"
	  "dimension of the physical index k in [0, cosize). vars gives names or expressions for the\n"
	  "inputs; raw skips the simplifier. GenPs lower in closed form (antidiagonal inv as a sum of\n"
	  "comparisons, Morton with shifts); a user GenP's functions are called with expressions and\n"
	  "the result checked at every point; ExpandBy's -1 is a where().\n"
	  "  lego.TileBy({2,2},{3,3}):expr() --> i0*18 + i1*3 + i2*6 + i3 (as simplified)" },
	{ "inv_expr", m_inv_expr,
	  "inv as index expressions\nG:inv_expr([opts]) = G:expr(\"inv\" [, opts]) -> one expression per logical dimension" },
	{ "size", m_size, "number of logical elements\nG:size() (also #G)" },
	{ "cosize", m_cosize, "number of physical elements\nG:cosize(): the size, or the product of ExpandBy's extents" },
	{ "rank", m_rank, "number of logical dimensions\nG:rank()" },
	{ "dims", m_dims, "the logical dimensions\nG:dims() -> {6,6}" },
	{ "kind", m_kind, "perm, orderby, chain or groupby\nG:kind()" },
	{ "check", m_check,
	  "verify the bijection by enumeration\n"
	  "G:check([limit]) -> true | false, counterexample | nil, reason (more than limit elements,\n"
	  "default 2^22)" },
	{ "steps", m_steps,
	  "the primitive steps of apply (or inv)\n"
	  "G:steps([\"inv\"]) -> text: flatten, unflatten, gather, scatter, genp, bound; the lowering to\n"
	  "index expressions walks the same steps." },
	{ "to_cute", m_to_cute,
	  "the CuTe layout computing the same map, where it is affine\n"
	  "G:to_cute() -> cute.Layout with L(i, j, ...) == G:apply(i, j, ...); an error naming the\n"
	  "non-affine part (GenP, ExpandBy, a chain CuTe's composition cannot express)." },
	{ "OrderBy", m_orderby, "chain another OrderBy: O:OrderBy(P1, ...) or O:OrderBy(O2)\nO1:OrderBy(O2):GroupBy(t) applies O2 first." },
	{ "GroupBy", m_groupby, "group a chain: O:GroupBy(tiles)\nO:GroupBy(tiles) = lego.GroupBy(tiles, O)" },
	{ "TileBy", m_tileby,
	  "LEGO's fluent tiling: O:TileBy(t1, ..., tq)\n"
	  "GroupBy(t1..tq, each OrderBy of O followed by a TileOrderBy of its levels, OrderBy(TileBy(t1..tq)))" },
	{ "ExpandBy", l_expandby, "partial tiles: G:ExpandBy(extents [, expanded])\nsee lego.ExpandBy" },
	{ NULL, NULL, NULL }
};

static const luaL_Reg meta[] = {
	{ "__tostring", mm_tostring },
	{ "__len", mm_len },
	{ "__eq", mm_eq },
	{ "__call", mm_call },
	{ "__scene", mm_scene },
	{ NULL, NULL }
};

static const char *const topics[][2] = {
	{ "lego",
	  "LEGO layouts: bijections between a logical view and a flat physical space\n"
	  "  B = lego.TileOrderBy({2,2}, {3,3})                              -- 2x2 tiles of 3x3\n"
	  "  C = lego.OrderBy(lego.RegP({2,2}, {1,0}), lego.GenP({3,3}, \"antidiagonal\"))\n"
	  "  G = C:OrderBy(B):GroupBy({6,6})  G:apply(4, 2) --> 15  G:inv(15) --> 4 2  show(G)\n"
	  "RegP is a gather (0-based), OrderBy does not stripmine, B runs before C. See help \"lego.Layout\"." },
	{ "lego.SymLayout",
	  "a LEGO layout with symbolic dimensions (uop expressions): it exists only as expressions\n"
	  "  M, N = uop.var(\"M\", 1, 4096), uop.var(\"N\", 1, 4096)\n"
	  "  G = lego.OrderBy(lego.Row(M, N)):TileBy({M // 64, N // 64}, {64, 64})\n"
	  "  G:expr{vars = {pid_m, pid_n, i, j}}   G:inv_expr{vars = {k}}\n"
	  "Built by Row, Col, RegP, TileBy, OrderBy, GroupBy (and :OrderBy, :GroupBy, :TileBy) when an\n"
	  "argument holds an expression or a symbolic layout; RegP parts only (no GenP, no ExpandBy).\n"
	  "Methods: expr inv_expr dims rank kind; apply, inv, check, size, steps, to_cute refuse with\n"
	  "the symbolic dimension's name. Sizes are trusted to agree, and a tile count written M // BM\n"
	  "is taken to divide M, as LEGO's rational sizes do." },
	{ "lego.Layout",
	  "a LEGO value: a RegP/GenP, an OrderBy, a chain or a GroupBy\n"
	  "tostring(G) is Lua that builds it again; G(i, j) and G:apply evaluate, G:inv inverts, #G is\n"
	  "the size, == compares the maps. Methods: apply inv size cosize rank dims kind check steps\n"
	  "to_cute OrderBy GroupBy TileBy ExpandBy expr inv_expr." },
};

static int
genfn_tostring(lua_State *L)
{
	GenFn *b = luaL_checkudata(L, 1, GENFN);

	lua_pushfstring(L, "lego.GenP functions (%s)", b->label);
	return 1;
}

int
luaopen_tessel_lego(lua_State *L)
{
	int i;

	if (lua_getfield(L, LUA_REGISTRYINDEX, SESSION) == LUA_TNIL) {
		Session *s = lua_newuserdatauv(L, sizeof *s, 0);
		s->L = NULL;
		lua_setfield(L, LUA_REGISTRYINDEX, SESSION);
	}
	lua_pop(L, 1);
	if (lua_getfield(L, LUA_REGISTRYINDEX, FNS) == LUA_TNIL) {
		lua_newtable(L);
		lua_createtable(L, 0, 1);
		lua_pushliteral(L, "v");
		lua_setfield(L, -2, "__mode");
		lua_setmetatable(L, -2);
		lua_setfield(L, LUA_REGISTRYINDEX, FNS);
	}
	lua_pop(L, 1);
	if (luaL_newmetatable(L, GENFN)) {
		lua_pushcfunction(L, genfn_tostring);
		lua_setfield(L, -2, "__tostring");
	}
	lua_pop(L, 1);

	sym_open(L);
	lua_newtable(L);  /* lego */
	help_setfuncs(L, funcs, "lego.");
	help_add(L, -1, "lego", topics[0][1]);
	for (i = 0; i < (int)(sizeof topics / sizeof topics[0]); i++)
		help_topic(L, topics[i][0], topics[i][1]);

	luaL_newmetatable(L, LEGO);
	luaL_setfuncs(L, meta, 0);
	lua_newtable(L);  /* methods */
	help_setfuncs(L, methods, "lego.Layout:");
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	return 1;
}

const struct Lego *
tessel_testlego(lua_State *L, int i)
{
	LLego *u = test_lego(L, i);

	return u ? &u->g : NULL;
}

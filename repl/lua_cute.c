/* lua_cute.c - the `cute` Lua table: CuTe layouts, tilers, swizzles, TV layouts and MMA atoms. */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../layout/layout.h"
#include "../viz/viz.h"
#include "help.h"
#include "tessel.h"

#define LAYOUT   "cute.Layout"
#define SWIZZLE  "cute.Swizzle"
#define COMPOSED "cute.ComposedLayout"
#define ATOM     "cute.MmaAtom"
#define UNDER    "cute.Underscore"
#define TUPLE    "cute.IntTuple"
#define COPYVIEW "cute.CopyView"

/* The source and destination TV layouts of a tiled copy over an M x N tile, for pictures. */
typedef struct CopyView {
	Layout src, dst;
	int64_t m, n;
} CopyView;

/* A layout value. A TV layout (from make_layout_tv or an MMA atom) also
** remembers its tile (M,N), so that show() can draw it; the tile is not part
** of its value (==, tostring). */
typedef struct LLayout {
	Layout l;
	int64_t tv_m, tv_n;
} LLayout;

/* Domain errors from C become Lua errors with the C message. */
static int
fail(lua_State *L, const Err *e)
{
	return luaL_error(L, "%s", e->msg);
}

static LLayout *
push_layout(lua_State *L, const Layout *l)
{
	LLayout *u = lua_newuserdatauv(L, sizeof *u, 0);

	u->l = *l;
	u->tv_m = u->tv_n = 0;
	luaL_setmetatable(L, LAYOUT);
	return u;
}

static void
push_composed(lua_State *L, const Composed *c)
{
	Composed *u = lua_newuserdatauv(L, sizeof *u, 0);

	*u = *c;
	luaL_setmetatable(L, COMPOSED);
}

static int
is_under(lua_State *L, int i)
{
	return luaL_testudata(L, i, UNDER) != NULL;
}

/*
** Lua's convention: a trailing nil is an absent argument (cute.size(L, nil) is
** cute.size(L)). Functions that count their arguments drop them first.
*/
static int
args(lua_State *L)
{
	int n = lua_gettop(L);

	while (n > 0 && lua_isnil(L, n))
		n--;
	lua_settop(L, n);
	return n;
}

/*
** A number where an integer is expected: an integer, or a float with an exact
** integer value below 2^53 (4.0, as Lua's own libraries take it). Beyond 2^53
** a float is not an exact count (2^62 is a float in Lua; 1 << 62 is not).
*/
static int
to_integer(lua_State *L, int i, lua_Integer *v, Err *e)
{
	char f[32], *p;
	double d;

	if (lua_isinteger(L, i)) {
		*v = lua_tointeger(L, i);
		return 0;
	}
	d = lua_tonumber(L, i);
	if (d == floor(d) && fabs(d) < 9007199254740992.0) {
		*v = (lua_Integer)d;
		return 0;
	}
	/* 4.6e18, not 4.6e+18 */
	snprintf(f, sizeof f, "%.2g", d);
	if ((p = strstr(f, "e+")))
		memmove(p + 1, p + 2, strlen(p + 2) + 1);
	return err_set(e, "an integer, got the float %s", f);
}

/*
** Lua values to tuples: integers, `_`, tables (nested), or notation strings.
*/
static void
table_to_tuple(lua_State *L, int i, Tuple *t, int depth, int allow_under, Err *e, int *bad)
{
	int at, n, k;
	lua_Integer v;

	i = lua_absindex(L, i);
	if (*bad)
		return;
	if (lua_type(L, i) == LUA_TNUMBER) {
		if (to_integer(L, i, &v, e) < 0 || tuple_push(t, v, e) < 0)
			*bad = 1;
		return;
	}
	if (allow_under && is_under(L, i)) {
		if (tuple_push_under(t, e) < 0)
			*bad = 1;
		return;
	}
	if (lua_type(L, i) == LUA_TTABLE && depth < 32) {
		char key[64];

		if (tessel_seq_stray(L, i, key, sizeof key)) {
			err_set(e, "a tuple is a list of integers, and this table has the key %s", key);
			*bad = 1;
			return;
		}
		if ((at = tuple_open(t, e)) < 0) {
			*bad = 1;
			return;
		}
		n = (int)luaL_len(L, i);
		for (k = 1; k <= n && !*bad; k++) {
			lua_geti(L, i, k);
			table_to_tuple(L, -1, t, depth + 1, allow_under, e, bad);
			lua_pop(L, 1);
		}
		tuple_close(t, at);
		return;
	}
	err_set(e, "expected an integer%s or a table of them, got %s",
	        allow_under ? ", '_'" : "", depth >= 32 ? "a table nested too deep" : luaL_typename(L, i));
	*bad = 1;
}

/* A tuple argument: an integer, a (nested) table, a notation string or `_`. */
static void
check_tuple(lua_State *L, int i, Tuple *t, int allow_under)
{
	Err e;
	int bad = 0;

	t->n = 0;
	if (lua_type(L, i) == LUA_TSTRING) {
		if (tuple_parse(lua_tostring(L, i), t, &e) < 0)
			luaL_argerror(L, i, e.msg);
	} else {
		table_to_tuple(L, i, t, 0, allow_under, &e, &bad);
		if (bad)
			luaL_argerror(L, i, e.msg);
	}
	if (!allow_under && tuple_has_under(t))
		luaL_argerror(L, i, "'_' is not allowed here");
}

static void push_tuple_at(lua_State *L, const Tuple *t, int at);

/* Tuples come back as Lua sequences (1-based, as Lua tables are) that print in
** notation; an integer comes back as a plain integer. */
static void
push_tuple(lua_State *L, const Tuple *t)
{
	push_tuple_at(L, t, 0);
}

static void
push_tuple_at(lua_State *L, const Tuple *t, int at)
{
	int i, c, k = t->node[at].kids;

	if (k == T_LEAF) {
		lua_pushinteger(L, t->node[at].v);
		return;
	}
	if (k == T_UNDER) {
		lua_getfield(L, LUA_REGISTRYINDEX, "tessel.cute._");
		return;
	}
	lua_createtable(L, k, 0);
	for (i = 0, c = at + 1; i < k; i++, c += t->node[c].span) {
		push_tuple_at(L, t, c);
		lua_rawseti(L, -2, i + 1);
	}
	luaL_setmetatable(L, TUPLE);
}

/* Whether a string is swizzle notation ("Sw<B,M,S>", spaces allowed before),
** and whether it composes one with a layout ("Sw<B,M,S> o ..."). */
static int
is_sw_text(lua_State *L, int i, int composed)
{
	const char *s;

	if (lua_type(L, i) != LUA_TSTRING)
		return 0;
	for (s = lua_tostring(L, i); *s == ' ' || *s == '\t' || *s == '\n'; s++)
		;
	return strncmp(s, "Sw<", 3) == 0 && (strstr(s, " o ") != NULL) == composed;
}

/*
** Layout arguments: a Layout, a notation string, an integer n (n:1), or a
** table shape (compact column-major).
*/
static const Layout *
check_layout(lua_State *L, int i, Layout *tmp)
{
	LLayout *u = luaL_testudata(L, i, LAYOUT);
	Tuple s;
	Err e;

	if (u)
		return &u->l;
	if (lua_type(L, i) == LUA_TSTRING) {
		const char *s = lua_tostring(L, i);
		if (is_sw_text(L, i, 1))
			luaL_argerror(L, i, "a swizzled layout is not taken here, only a plain layout");
		if (is_sw_text(L, i, 0))
			luaL_argerror(L, i, "a swizzle is not a layout (cute.swizzle makes one)");
		if (cute_parse(s, tmp, &e) < 0)
			luaL_argerror(L, i, e.msg);
		return tmp;
	}
	if (lua_type(L, i) == LUA_TNUMBER || lua_type(L, i) == LUA_TTABLE) {
		check_tuple(L, i, &s, 0);
		if (cute_make_compact(tmp, &s, 0, &e) < 0)
			luaL_argerror(L, i, e.msg);
		return tmp;
	}
	luaL_typeerror(L, i, "layout");
	return NULL;
}

static LLayout *
to_llayout(lua_State *L, int i)
{
	return luaL_testudata(L, i, LAYOUT);
}

const Layout *
tessel_checklayout(lua_State *L, int i, Layout *tmp)
{
	return check_layout(L, i, tmp);
}

void
tessel_pushlayout(lua_State *L, const Layout *l)
{
	push_layout(L, l);
}

/* Tilers: a Layout, a notation string, an integer, `_`, or a table of tilers. */
static int
tiler_elem(lua_State *L, int i, Tiler *t, int depth, Err *e)
{
	LLayout *u;
	Layout tmp;
	Tiler sub;
	int at, al, n, k;

	i = lua_absindex(L, i);
	if (is_under(L, i))
		return tuple_push_under(&t->prof, e) < 0 || tuple_push(&t->l.shape, 1, e) < 0 ||
		       tuple_push(&t->l.stride, 0, e) < 0 ? -1 : 0;
	if (lua_type(L, i) == LUA_TTABLE && depth < 32) {
		char key[64];

		if (tessel_seq_stray(L, i, key, sizeof key))
			return err_set(e, "a tiler is a list, and this table has the key %s", key);
		if ((at = tuple_open(&t->prof, e)) < 0 || (al = tuple_open(&t->l.shape, e)) < 0 ||
		    tuple_open(&t->l.stride, e) < 0)
			return -1;
		n = (int)luaL_len(L, i);
		for (k = 1; k <= n; k++) {
			int r;
			lua_geti(L, i, k);
			r = tiler_elem(L, -1, t, depth + 1, e);
			lua_pop(L, 1);
			if (r < 0)
				return -1;
		}
		/* prof and l open this tuple at different indices (see layout.h) */
		tuple_close(&t->prof, at);
		tuple_close(&t->l.shape, al);
		tuple_close(&t->l.stride, al);
		return 0;
	}
	if (lua_type(L, i) == LUA_TSTRING) {
		if (tiler_parse(lua_tostring(L, i), &sub, e) < 0)
			return -1;
		return tuple_push_copy(&t->prof, &sub.prof, 0, e) < 0 ||
		       tuple_push_copy(&t->l.shape, &sub.l.shape, 0, e) < 0 ||
		       tuple_push_copy(&t->l.stride, &sub.l.stride, 0, e) < 0 ? -1 : 0;
	}
	if ((u = to_llayout(L, i))) {
		tmp = u->l;
	} else if (lua_type(L, i) == LUA_TNUMBER) {
		lua_Integer v;
		if (to_integer(L, i, &v, e) < 0)
			return -1;
		return tiler_push_int(t, v, e);
	} else {
		return err_set(e, "a tiler element must be a layout, an integer, '_' or a table, not %s",
		               luaL_typename(L, i));
	}
	return tuple_push(&t->prof, 0, e) < 0 || tuple_push_copy(&t->l.shape, &tmp.shape, 0, e) < 0 ||
	       tuple_push_copy(&t->l.stride, &tmp.stride, 0, e) < 0 ? -1 : 0;
}

static void
check_tiler(lua_State *L, int i, Tiler *t)
{
	Err e;

	t->prof.n = t->l.shape.n = t->l.stride.n = 0;
	if (tiler_elem(L, i, t, 0, &e) < 0)
		luaL_argerror(L, i, e.msg);
}

/* A swizzle argument: a Swizzle, or "Sw<B,M,S>". */
static Swizzle *
test_swizzle(lua_State *L, int i, Swizzle *tmp)
{
	Swizzle *s = luaL_testudata(L, i, SWIZZLE);
	Err e;

	if (s)
		return s;
	if (is_sw_text(L, i, 0)) {
		if (swizzle_parse(lua_tostring(L, i), tmp, &e) < 0)
			luaL_argerror(L, i, e.msg);
		return tmp;
	}
	return NULL;
}

/* A composed-layout argument: a ComposedLayout or "Sw<B,M,S> o OFF o LAYOUT". */
static Composed *
test_composed(lua_State *L, int i, Composed *tmp)
{
	Composed *c = luaL_testudata(L, i, COMPOSED);
	Err e;

	if (c)
		return c;
	if (is_sw_text(L, i, 1)) {
		if (composed_parse(lua_tostring(L, i), tmp, &e) < 0)
			luaL_argerror(L, i, e.msg);
		return tmp;
	}
	return NULL;
}

/* Mode indices are CuTe's: 0-based, variadic for nested modes (size<1,0>). */
static const Layout *
select_mode(lua_State *L, const Layout *l, int first, Layout *tmp)
{
	Err e;
	int i, top = lua_gettop(L);

	for (i = first; i <= top; i++) {
		lua_Integer m = luaL_checkinteger(L, i);
		if (m < 0 || m >= cute_rank(l))
			luaL_argerror(L, i, lua_pushfstring(L, "mode %d is out of range [0,%d)", (int)m, cute_rank(l)));
		if (cute_mode(l, (int)m, tmp, &e) < 0)
			fail(L, &e);
		l = tmp;
	}
	return l;
}

/*
** Construction
*/
static int
l_layout(lua_State *L)
{
	Layout l, tmp;
	Tuple s, d;
	Err e;
	const char *order;
	Composed ctmp, *c;

	if (args(L) == 1) {
		/* everything cute prints parses back: a composed layout is a layout too */
		if ((c = test_composed(L, 1, &ctmp)))
			push_composed(L, c);
		else
			push_layout(L, check_layout(L, 1, &tmp));
		return 1;
	}
	check_tuple(L, 1, &s, 0);
	if (lua_type(L, 2) == LUA_TSTRING && (order = lua_tostring(L, 2)) &&
	    (strcmp(order, "row") == 0 || strcmp(order, "col") == 0)) {
		if (cute_make_compact(&l, &s, order[0] == 'r', &e) < 0)
			return fail(L, &e);
	} else {
		check_tuple(L, 2, &d, 0);
		if (cute_make(&l, &s, &d, &e) < 0)
			return fail(L, &e);
	}
	push_layout(L, &l);
	return 1;
}

static int
l_make_layout(lua_State *L)
{
	Layout tmp[16];
	const Layout *ms[16];
	Layout out;
	Err e;
	int i, n = args(L);

	if (n == 0 || !(to_llayout(L, 1) || (lua_type(L, 1) == LUA_TSTRING && strchr(lua_tostring(L, 1), ':'))) ||
	    (n == 1 && luaL_testudata(L, 1, COMPOSED)) ||
	    (n == 1 && is_sw_text(L, 1, 1)))
		return l_layout(L);
	if (n > 16)
		return luaL_error(L, "make_layout: at most 16 modes");
	for (i = 0; i < n; i++)
		ms[i] = check_layout(L, i + 1, &tmp[i]);
	if (cute_concat(&out, ms, n, &e) < 0)
		return fail(L, &e);
	push_layout(L, &out);
	return 1;
}

/*
** Queries
*/
static const Layout *
layout_or_inner(lua_State *L, int i, Layout *tmp)
{
	Composed ctmp, *c = test_composed(L, i, &ctmp);

	if (c) {
		*tmp = c->layout;
		return tmp;
	}
	return check_layout(L, i, tmp);
}

/* size, cosize, rank, depth, shape and stride share their arguments:
** (L [, i, j...]) for the layout or its mode <i,j...>. */
enum { Q_SIZE, Q_COSIZE, Q_RANK, Q_DEPTH, Q_SHAPE, Q_STRIDE };

static int
query(lua_State *L, int q)
{
	Layout tmp, mt;
	const Layout *l;

	args(L);
	l = select_mode(L, layout_or_inner(L, 1, &tmp), 2, &mt);

	switch (q) {
	case Q_SIZE: lua_pushinteger(L, cute_size(l)); break;
	case Q_COSIZE: lua_pushinteger(L, cute_cosize(l)); break;
	case Q_RANK: lua_pushinteger(L, cute_rank(l)); break;
	case Q_DEPTH: lua_pushinteger(L, cute_depth(l)); break;
	case Q_SHAPE: push_tuple(L, &l->shape); break;
	default: push_tuple(L, &l->stride); break;
	}
	return 1;
}

static int l_size(lua_State *L) { return query(L, Q_SIZE); }
static int l_cosize(lua_State *L) { return query(L, Q_COSIZE); }
static int l_rank(lua_State *L) { return query(L, Q_RANK); }
static int l_depth(lua_State *L) { return query(L, Q_DEPTH); }
static int l_shape(lua_State *L) { return query(L, Q_SHAPE); }
static int l_stride(lua_State *L) { return query(L, Q_STRIDE); }

static int
l_mode(lua_State *L)
{
	Layout tmp, mt;
	const Layout *l;

	args(L);
	l = check_layout(L, 1, &tmp);
	luaL_checkinteger(L, 2);
	push_layout(L, select_mode(L, l, 2, &mt));
	return 1;
}

/* A function of its own, so that help(cute.get) finds its own text. */
static int
l_get(lua_State *L)
{
	return l_mode(L);
}

static int
l_select(lua_State *L)
{
	Layout tmp, out;
	int modes[TUPLE_MAX], i, n = args(L) - 1;
	const Layout *l = check_layout(L, 1, &tmp);
	Err e;

	if (n > TUPLE_MAX)
		return luaL_error(L, "select: too many modes");
	for (i = 0; i < n; i++)
		modes[i] = (int)luaL_checkinteger(L, i + 2);
	if (cute_select(l, modes, n, &out, &e) < 0)
		return fail(L, &e);
	push_layout(L, &out);
	return 1;
}

static int
l_flatten(lua_State *L)
{
	Layout tmp, out;
	Tuple t, f;
	Err e;

	if (lua_type(L, 1) == LUA_TTABLE || lua_type(L, 1) == LUA_TNUMBER) {
		check_tuple(L, 1, &t, 1);
		if (tuple_flatten(&t, &f, &e) < 0)
			return fail(L, &e);
		push_tuple(L, &f);
		return 1;
	}
	if (cute_flatten(check_layout(L, 1, &tmp), &out, &e) < 0)
		return fail(L, &e);
	push_layout(L, &out);
	return 1;
}

/*
** The algebra. Functions that take a layout first also take a composed
** (swizzled) layout there and act on its inner layout, as CuTe's
** ComposedLayout overloads do.
*/
/*
** Options of the algebra, a table after the arguments: {cpp = true} returns
** what CuTe C++ returns where tessel refuses because C++'s layout is not A o B.
*/
static int
alg_flags(lua_State *L, int i, const char *op)
{
	static const TesselOpt keys[] = { { "cpp", "boolean" }, { NULL, NULL } };
	int flags = 0;

	if (lua_isnoneornil(L, i))   /* before the name goes above the arguments */
		return 0;
	lua_pushfstring(L, "cute.%s", op);
	if (tessel_checkopts(L, i, lua_tostring(L, -1), keys)) {
		lua_getfield(L, i, "cpp");
		flags = lua_toboolean(L, -1) ? CUTE_CPP : 0;
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return flags;
}

/* a composition's result: plain where CuTe's is (composed_is_plain) */
static void
push_composition(lua_State *L, const Composed *c)
{
	if (composed_is_plain(c))
		push_layout(L, &c->layout);
	else
		push_composed(L, c);
}

static int
apply_tiler(lua_State *L, CuteOp op)
{
	Layout tmp, out;
	Composed ctmp, *c = test_composed(L, 1, &ctmp);
	Tiler t;
	Err e;
	int flags = alg_flags(L, 3, cute_op_name(op));

	if (op == CUTE_BLOCKED_PRODUCT || op == CUTE_RAKED_PRODUCT)
		tiler_from_layout(&t, check_layout(L, 2, &tmp));
	else
		check_tiler(L, 2, &t);
	if (c) {
		Composed r = *c;
		if (cute_algebra(op, &c->layout, &t, flags, &r.layout, &e) < 0)
			return fail(L, &e);
		push_composition(L, &r);
		return 1;
	}
	if (cute_algebra(op, check_layout(L, 1, &tmp), &t, flags, &out, &e) < 0)
		return fail(L, &e);
	push_layout(L, &out);
	return 1;
}

static int
l_composition(lua_State *L)
{
	Swizzle stmp, *sw = test_swizzle(L, 1, &stmp);
	Layout tmp;
	Composed c;
	Err e;

	if (sw) {
		if (composed_make(&c, sw, 0, check_layout(L, 2, &tmp), &e) < 0)
			return fail(L, &e);
		push_composition(L, &c);
		return 1;
	}
	return apply_tiler(L, CUTE_COMPOSITION);
}

static int l_logical_divide(lua_State *L) { return apply_tiler(L, CUTE_LOGICAL_DIVIDE); }
static int l_zipped_divide(lua_State *L) { return apply_tiler(L, CUTE_ZIPPED_DIVIDE); }
static int l_tiled_divide(lua_State *L) { return apply_tiler(L, CUTE_TILED_DIVIDE); }
static int l_flat_divide(lua_State *L) { return apply_tiler(L, CUTE_FLAT_DIVIDE); }
static int l_logical_product(lua_State *L) { return apply_tiler(L, CUTE_LOGICAL_PRODUCT); }
static int l_zipped_product(lua_State *L) { return apply_tiler(L, CUTE_ZIPPED_PRODUCT); }
static int l_tiled_product(lua_State *L) { return apply_tiler(L, CUTE_TILED_PRODUCT); }
static int l_flat_product(lua_State *L) { return apply_tiler(L, CUTE_FLAT_PRODUCT); }
static int l_blocked_product(lua_State *L) { return apply_tiler(L, CUTE_BLOCKED_PRODUCT); }
static int l_raked_product(lua_State *L) { return apply_tiler(L, CUTE_RAKED_PRODUCT); }

typedef int (*UnOp)(const Layout *l, Layout *out, Err *e);

/* op(L); a second argument is refused (it would be silently ignored: filter's profile was) */
static int
apply_unary(lua_State *L, UnOp op)
{
	Layout tmp, out;
	Err e;

	if (!lua_isnoneornil(L, 2))
		luaL_argerror(L, 2, "takes one layout, no second argument");
	if (op(check_layout(L, 1, &tmp), &out, &e) < 0)
		return fail(L, &e);
	push_layout(L, &out);
	return 1;
}

/* f(L), or by_profile(L, profile) when a profile is given */
static int
apply_profiled(lua_State *L, UnOp f, int (*by_profile)(const Layout *, const Tuple *, Layout *, Err *))
{
	Layout tmp, out;
	Tuple p;
	Err e;

	if (lua_isnoneornil(L, 2))
		return apply_unary(L, f);
	check_tuple(L, 2, &p, 0);
	if (by_profile(check_layout(L, 1, &tmp), &p, &out, &e) < 0)
		return fail(L, &e);
	push_layout(L, &out);
	return 1;
}

static int l_coalesce(lua_State *L) { return apply_profiled(L, cute_coalesce, cute_coalesce_profile); }
static int l_filter(lua_State *L) { return apply_profiled(L, cute_filter, cute_filter_profile); }
static int l_right_inverse(lua_State *L) { return apply_unary(L, cute_right_inverse); }
static int l_filter_zeros(lua_State *L) { return apply_unary(L, cute_filter_zeros); }
static int l_make_layout_like(lua_State *L) { return apply_unary(L, cute_make_layout_like); }
static int l_make_fragment_like(lua_State *L) { return apply_unary(L, cute_make_fragment_like); }

static int
l_make_ordered_layout(lua_State *L)
{
	Tuple shape, order;
	Layout out;
	Err e;

	check_tuple(L, 1, &shape, 0);
	check_tuple(L, 2, &order, 0);
	if (cute_make_ordered(&out, &shape, &order, &e) < 0)
		return fail(L, &e);
	push_layout(L, &out);
	return 1;
}

static int
l_tile_to_shape(lua_State *L)
{
	Layout tmp, out;
	Tuple shape, order;
	const Layout *b = check_layout(L, 1, &tmp);
	Err e;

	int flags = alg_flags(L, 4, "tile_to_shape");

	check_tuple(L, 2, &shape, 0);
	if (!lua_isnoneornil(L, 3))
		check_tuple(L, 3, &order, 0);
	if (cute_tile_to_shape(b, &shape, lua_isnoneornil(L, 3) ? NULL : &order, flags, &out, &e) < 0)
		return fail(L, &e);
	push_layout(L, &out);
	return 1;
}

static int
l_max_common_layout(lua_State *L)
{
	Layout ta, tb, out;
	const Layout *a = check_layout(L, 1, &ta), *b = check_layout(L, 2, &tb);
	Err e;

	if (cute_max_common_layout(a, b, &out, &e) < 0)
		return fail(L, &e);
	push_layout(L, &out);
	return 1;
}

static int
l_max_common_vector(lua_State *L)
{
	Layout ta, tb;
	const Layout *a = check_layout(L, 1, &ta), *b = check_layout(L, 2, &tb);
	int64_t n;
	Err e;

	if (cute_max_common_vector(a, b, &n, &e) < 0)
		return fail(L, &e);
	lua_pushinteger(L, n);
	return 1;
}
static int l_left_inverse(lua_State *L) { return apply_unary(L, cute_left_inverse); }

static int
l_complement(lua_State *L)
{
	Layout tmp, out;
	Tuple cot;
	Err e;
	const Layout *l = check_layout(L, 1, &tmp);

	if (!lua_isnoneornil(L, 2))
		check_tuple(L, 2, &cot, 0);
	if (cute_complement(l, lua_isnoneornil(L, 2) ? NULL : &cot, &out, &e) < 0)
		return fail(L, &e);
	push_layout(L, &out);
	return 1;
}

/* CuTe writes slice(coord, layout); the method form is L:slice(coord). */
static int
l_slice(lua_State *L)
{
	Layout tmp, out;
	Composed ctmp, *c;
	Tuple crd;
	int64_t off;
	Err e;
	int li = 2, ci = 1;

	if (to_llayout(L, 1) || luaL_testudata(L, 1, COMPOSED)) {
		li = 1;
		ci = 2;
	}
	check_tuple(L, ci, &crd, 1);
	if ((c = test_composed(L, li, &ctmp))) {
		Composed r = *c;
		if (cute_slice(&crd, &c->layout, &r.layout, &off, &e) < 0 || (__builtin_add_overflow(r.offset, off, &r.offset) && err_set(&e, "slice: offset overflow") < 0))
			return fail(L, &e);
		push_composed(L, &r);
		lua_pushinteger(L, 0);
		return 2;
	}
	if (cute_slice(&crd, check_layout(L, li, &tmp), &out, &off, &e) < 0)
		return fail(L, &e);
	push_layout(L, &out);
	lua_pushinteger(L, off);
	return 2;
}

static int
l_same_function(lua_State *L)
{
	Layout ta, tb;
	int same;
	int64_t where;
	Err e;

	if (cute_same_function(check_layout(L, 1, &ta), check_layout(L, 2, &tb), &same, &where, &e) < 0)
		return fail(L, &e);
	lua_pushboolean(L, same);
	if (!same && where >= 0) {
		lua_pushinteger(L, where);
		return 2;
	}
	return 1;
}

static int
l_with_shape(lua_State *L)
{
	Layout tmp, out;
	Tuple s;
	Err e;
	const Layout *l = check_layout(L, 1, &tmp);

	check_tuple(L, 2, &s, 0);
	if (cute_with_shape(l, &s, &out, &e) < 0)
		return fail(L, &e);
	push_layout(L, &out);
	return 1;
}

/*
** Coordinates
*/
static int
l_crd2idx(lua_State *L)
{
	Tuple crd, shape, stride;
	Layout tmp;
	int64_t idx;
	Err e;

	if (to_llayout(L, 1)) {  /* L:crd2idx(crd) */
		lua_pushvalue(L, 1);
		lua_remove(L, 1);
	}
	check_tuple(L, 1, &crd, 1);
	if (lua_isnoneornil(L, 3) && (to_llayout(L, 2) ||
	    (lua_type(L, 2) == LUA_TSTRING && strchr(lua_tostring(L, 2), ':')))) {
		const Layout *l = check_layout(L, 2, &tmp);
		shape = l->shape;
		stride = l->stride;
		if (tuple_crd2idx(&crd, &shape, &stride, &idx, &e) < 0)
			return fail(L, &e);
	} else {
		check_tuple(L, 2, &shape, 0);
		if (lua_isnoneornil(L, 3)) {
			if (tuple_crd2idx_colex(&crd, &shape, &idx, &e) < 0)
				return fail(L, &e);
		} else {
			check_tuple(L, 3, &stride, 0);
			if (tuple_crd2idx(&crd, &shape, &stride, &idx, &e) < 0)
				return fail(L, &e);
		}
	}
	lua_pushinteger(L, idx);
	return 1;
}

static int
l_idx2crd(lua_State *L)
{
	Tuple shape, crd;
	Layout tmp;
	Err e;
	lua_Integer idx;

	if (to_llayout(L, 1)) {  /* L:idx2crd(i) */
		shape = check_layout(L, 1, &tmp)->shape;
		idx = luaL_checkinteger(L, 2);
	} else {
		idx = luaL_checkinteger(L, 1);
		if (to_llayout(L, 2))
			shape = check_layout(L, 2, &tmp)->shape;
		else
			check_tuple(L, 2, &shape, 0);
	}
	if (tuple_idx2crd(idx, &shape, &crd, &e) < 0)
		return fail(L, &e);
	push_tuple(L, &crd);
	return 1;
}

static int
l_crd2crd(lua_State *L)
{
	Tuple crd, src, dst, out;
	Err e;

	check_tuple(L, 1, &crd, 0);
	check_tuple(L, 2, &src, 0);
	check_tuple(L, 3, &dst, 0);
	if (tuple_crd2crd(&crd, &src, &dst, &out, &e) < 0)
		return fail(L, &e);
	push_tuple(L, &out);
	return 1;
}

/*
** Integer tuples
*/
static int
l_tuple(lua_State *L)
{
	Tuple t;

	check_tuple(L, 1, &t, 1);
	push_tuple(L, &t);
	return 1;
}

static int
l_product(lua_State *L)
{
	Tuple t;
	int64_t p;
	Err e;

	check_tuple(L, 1, &t, 0);
	if (tuple_product(&t, &p, &e) < 0)
		return fail(L, &e);
	lua_pushinteger(L, p);
	return 1;
}

static int
l_prefix_product(lua_State *L)
{
	Tuple t, o;
	Err e;

	check_tuple(L, 1, &t, 0);
	if (tuple_prefix_product(&t, &o, &e) < 0)
		return fail(L, &e);
	push_tuple(L, &o);
	return 1;
}

static int
tuple_binop(lua_State *L, int (*op)(const Tuple *, const Tuple *, Tuple *, Err *))
{
	Tuple a, b, o;
	Err e;

	check_tuple(L, 1, &a, 0);
	check_tuple(L, 2, &b, 0);
	if (op(&a, &b, &o, &e) < 0)
		return fail(L, &e);
	push_tuple(L, &o);
	return 1;
}

static int l_shape_div(lua_State *L) { return tuple_binop(L, tuple_shape_div); }
static int l_ceil_div(lua_State *L) { return tuple_binop(L, tuple_ceil_div); }

static int
l_inner_product(lua_State *L)
{
	Tuple a, b;
	int64_t r;
	Err e;

	check_tuple(L, 1, &a, 0);
	check_tuple(L, 2, &b, 0);
	if (tuple_inner_product(&a, &b, &r, &e) < 0)
		return fail(L, &e);
	lua_pushinteger(L, r);
	return 1;
}

static int
tuple_pred(lua_State *L, int (*p)(const Tuple *, const Tuple *))
{
	Tuple a, b;

	check_tuple(L, 1, &a, 0);
	check_tuple(L, 2, &b, 0);
	lua_pushboolean(L, p(&a, &b));
	return 1;
}

static int l_congruent(lua_State *L) { return tuple_pred(L, tuple_congruent); }
static int l_weakly_congruent(lua_State *L) { return tuple_pred(L, tuple_weakly_congruent); }
static int l_compatible(lua_State *L) { return tuple_pred(L, tuple_compatible); }

static int
tuple_tostring(lua_State *L)
{
	Tuple t;
	Buf b;

	check_tuple(L, 1, &t, 1);
	buf_init(&b);
	tuple_print(&b, &t);
	lua_pushstring(L, b.s ? b.s : "?");
	buf_free(&b);
	return 1;
}

static int
tuple_eq(lua_State *L)
{
	Tuple a, b;

	check_tuple(L, 1, &a, 1);
	check_tuple(L, 2, &b, 1);
	lua_pushboolean(L, tuple_equal(&a, &b));
	return 1;
}

/*
** Swizzles and composed layouts
*/
static int
l_swizzle(lua_State *L)
{
	Swizzle sw, *u;
	Err e;

	if (lua_type(L, 1) == LUA_TSTRING) {
		if (swizzle_parse(lua_tostring(L, 1), &sw, &e) < 0)
			return fail(L, &e);
	} else {
		lua_Integer b = luaL_checkinteger(L, 1), m = luaL_checkinteger(L, 2),
		            s = luaL_optinteger(L, 3, b);
		if (b < -1000 || b > 1000 || m < -1000 || m > 1000 || s < -1000 || s > 1000)
			return luaL_error(L, "swizzle: arguments out of range");
		if (swizzle_make(&sw, (int)b, (int)m, (int)s, &e) < 0)
			return fail(L, &e);
	}
	u = lua_newuserdatauv(L, sizeof *u, 0);
	*u = sw;
	luaL_setmetatable(L, SWIZZLE);
	return 1;
}

static int
sw_call(lua_State *L)
{
	Swizzle *sw = luaL_checkudata(L, 1, SWIZZLE);
	lua_Integer x = luaL_checkinteger(L, 2);

	if (x < 0 || x >= CUTE_SIZE_LIMIT)
		return luaL_argerror(L, 2, "offset out of range");
	lua_pushinteger(L, swizzle_apply(sw, x));
	return 1;
}

static int
sw_tostring(lua_State *L)
{
	Swizzle *sw = luaL_checkudata(L, 1, SWIZZLE);

	lua_pushfstring(L, "Sw<%d,%d,%d>", sw->b, sw->m, sw->s);
	return 1;
}

static int
sw_eq(lua_State *L)
{
	Swizzle *a = luaL_checkudata(L, 1, SWIZZLE), *b = luaL_checkudata(L, 2, SWIZZLE);

	lua_pushboolean(L, a->b == b->b && a->m == b->m && a->s == b->s);
	return 1;
}

static int
l_composed(lua_State *L)
{
	Swizzle stmp, *sw;
	Composed c, ctmp, *p;
	Layout tmp;
	Err e;
	int n = args(L);

	if ((p = test_composed(L, 1, &ctmp)) && n == 1) {
		push_composed(L, p);
		return 1;
	}
	if (!(sw = test_swizzle(L, 1, &stmp)))
		return luaL_typeerror(L, 1, "swizzle");
	if (n >= 3) {
		if (composed_make(&c, sw, luaL_checkinteger(L, 2), check_layout(L, 3, &tmp), &e) < 0)
			return fail(L, &e);
	} else if (composed_make(&c, sw, 0, check_layout(L, 2, &tmp), &e) < 0) {
		return fail(L, &e);
	}
	push_composed(L, &c);
	return 1;
}

static int
co_tostring(lua_State *L)
{
	Composed *c = luaL_checkudata(L, 1, COMPOSED);
	Buf b;

	buf_init(&b);
	composed_print(&b, c);
	lua_pushstring(L, b.s ? b.s : "?");
	buf_free(&b);
	return 1;
}

static int
co_eq(lua_State *L)
{
	Composed *a = luaL_checkudata(L, 1, COMPOSED), *b = luaL_checkudata(L, 2, COMPOSED);

	lua_pushboolean(L, a->sw.b == b->sw.b && a->sw.m == b->sw.m && a->sw.s == b->sw.s &&
	                   a->offset == b->offset && cute_equal(&a->layout, &b->layout));
	return 1;
}

static int
co_len(lua_State *L)
{
	Composed *c = luaL_checkudata(L, 1, COMPOSED);

	lua_pushinteger(L, cute_size(&c->layout));
	return 1;
}

/* Coordinates of a call L(...): one integer, several arguments, or a table. */
static void
call_coord(lua_State *L, Tuple *crd)
{
	int n = args(L) - 1, i, at;
	Err e;
	int bad = 0;

	if (n == 0)
		luaL_error(L, "a layout needs a coordinate: L(i), L(i, j) or L{...}");
	if (n == 1) {
		check_tuple(L, 2, crd, 1);
		return;
	}
	crd->n = 0;
	at = tuple_open(crd, &e);
	for (i = 2; i <= n + 1 && !bad; i++)
		table_to_tuple(L, i, crd, 1, 1, &e, &bad);
	if (bad || at < 0)
		luaL_error(L, "%s", e.msg);
	tuple_close(crd, at);
}

static int
co_call(lua_State *L)
{
	Composed *c = luaL_checkudata(L, 1, COMPOSED);
	Tuple crd;
	int64_t v;
	Err e;

	call_coord(L, &crd);
	if (tuple_has_under(&crd)) {
		lua_pushcfunction(L, l_slice);
		lua_pushvalue(L, 1);
		push_tuple(L, &crd);
		lua_call(L, 2, 2);
		return 2;
	}
	if ((tuple_is_int(&crd) ? composed_eval_idx(c, crd.node[0].v, &v, &e) : composed_eval(c, &crd, &v, &e)) < 0)
		return fail(L, &e);
	lua_pushinteger(L, v);
	return 1;
}

static int
co_index(lua_State *L)
{
	Composed *c = luaL_checkudata(L, 1, COMPOSED);
	const char *k = luaL_checkstring(L, 2);

	if (strcmp(k, "layout") == 0 || strcmp(k, "layout_b") == 0) {
		push_layout(L, &c->layout);
	} else if (strcmp(k, "offset") == 0) {
		lua_pushinteger(L, c->offset);
	} else if (strcmp(k, "swizzle") == 0 || strcmp(k, "layout_a") == 0) {
		Swizzle *u = lua_newuserdatauv(L, sizeof *u, 0);
		*u = c->sw;
		luaL_setmetatable(L, SWIZZLE);
	} else {
		/* methods shared with layouts */
		luaL_getmetatable(L, LAYOUT);
		lua_getfield(L, -1, "__index");
		lua_getfield(L, -1, k);
	}
	return 1;
}

/*
** Layout metamethods
*/
static int
ll_tostring(lua_State *L)
{
	LLayout *u = luaL_checkudata(L, 1, LAYOUT);
	Buf b;

	buf_init(&b);
	cute_print(&b, &u->l);
	lua_pushstring(L, b.s ? b.s : "?");
	buf_free(&b);
	return 1;
}

static int
ll_eq(lua_State *L)
{
	LLayout *a = luaL_checkudata(L, 1, LAYOUT), *b = luaL_checkudata(L, 2, LAYOUT);

	lua_pushboolean(L, cute_equal(&a->l, &b->l));
	return 1;
}

static int
ll_len(lua_State *L)
{
	LLayout *u = luaL_checkudata(L, 1, LAYOUT);

	lua_pushinteger(L, cute_size(&u->l));
	return 1;
}

static int
ll_call(lua_State *L)
{
	LLayout *u = luaL_checkudata(L, 1, LAYOUT);
	Tuple crd;
	int64_t v;
	Err e;

	call_coord(L, &crd);
	if (tuple_has_under(&crd)) {
		Layout out;
		int64_t off;
		if (cute_slice(&crd, &u->l, &out, &off, &e) < 0)
			return fail(L, &e);
		push_layout(L, &out);
		lua_pushinteger(L, off);
		return 2;
	}
	if ((tuple_is_int(&crd) ? cute_eval_idx(&u->l, crd.node[0].v, &v, &e) : cute_eval(&u->l, &crd, &v, &e)) < 0)
		return fail(L, &e);
	lua_pushinteger(L, v);
	return 1;
}

/*
** TV layouts and MMA atoms
*/
static int
l_make_layout_tv(lua_State *L)
{
	Layout tt, tv_, mn, tv;
	const Layout *thr = check_layout(L, 1, &tt), *val = check_layout(L, 2, &tv_);
	LLayout *u;
	Err e;

	if (cute_make_layout_tv(thr, val, &mn, &tv, &e) < 0)
		return fail(L, &e);
	push_layout(L, &mn);
	u = push_layout(L, &tv);
	if (cute_rank(&mn) == 2) {
		Layout m0;
		cute_mode(&mn, 0, &m0, &e);
		u->tv_m = cute_size(&m0);
		u->tv_n = cute_size(&mn) / u->tv_m;
	}
	return 2;
}

static int
l_tv(lua_State *L)
{
	Layout tmp;
	const Layout *l = check_layout(L, 1, &tmp);
	lua_Integer m = luaL_checkinteger(L, 2), n = luaL_checkinteger(L, 3);
	LLayout *u;

	if (m < 1 || n < 1 || m > (1 << 20) || n > (1 << 20))
		return luaL_error(L, "tv: tile %d x %d is out of range", (int)m, (int)n);
	u = push_layout(L, l);
	u->tv_m = m;
	u->tv_n = n;
	return 1;
}

static int
l_copy_view(lua_State *L)
{
	Layout ts, td;
	const Layout *src = check_layout(L, 1, &ts), *dst = check_layout(L, 2, &td);
	lua_Integer m = luaL_checkinteger(L, 3), n = luaL_checkinteger(L, 4);
	CopyView *v;

	if (m < 1 || n < 1 || m > (1 << 20) || n > (1 << 20))
		return luaL_error(L, "copy_view: tile %d x %d is out of range", (int)m, (int)n);
	v = lua_newuserdatauv(L, sizeof *v, 0);
	v->src = *src;
	v->dst = *dst;
	v->m = m;
	v->n = n;
	luaL_setmetatable(L, COPYVIEW);
	return 1;
}

static int
cv_tostring(lua_State *L)
{
	CopyView *v = luaL_checkudata(L, 1, COPYVIEW);
	Buf b;

	buf_init(&b);
	emit(&b, "CopyView %lldx%lld S ", (long long)v->m, (long long)v->n);
	cute_print(&b, &v->src);
	emit(&b, " D ");
	cute_print(&b, &v->dst);
	lua_pushstring(L, b.s ? b.s : "");
	buf_free(&b);
	return 1;
}

static int
l_mma_atom(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	MmaAtom *a = lua_newuserdatauv(L, sizeof *a, 0);
	Err e;

	memset(a, 0, sizeof *a);
	luaL_setmetatable(L, ATOM);
	if (cute_mma_atom(name, a, &e) < 0)
		return fail(L, &e);
	return 1;
}

static int
l_mma_atoms(lua_State *L)
{
	int i, n = cute_mma_count();

	lua_createtable(L, n, 0);
	for (i = 0; i < n; i++) {
		lua_pushstring(L, cute_mma_name(i));
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static void
push_tv(lua_State *L, const Layout *l, int64_t m, int64_t n)
{
	LLayout *u = push_layout(L, l);

	u->tv_m = m;
	u->tv_n = n;
}

static int
atom_index(lua_State *L)
{
	MmaAtom *a = luaL_checkudata(L, 1, ATOM);
	const char *k = luaL_checkstring(L, 2);

	if (strcmp(k, "name") == 0)
		lua_pushstring(L, a->name);
	else if (strcmp(k, "ptx") == 0)
		lua_pushstring(L, a->ptx);
	else if (strcmp(k, "types") == 0)
		lua_pushstring(L, a->types);
	else if (strcmp(k, "m") == 0 || strcmp(k, "M") == 0)
		lua_pushinteger(L, a->m);
	else if (strcmp(k, "n") == 0 || strcmp(k, "N") == 0)
		lua_pushinteger(L, a->n);
	else if (strcmp(k, "k") == 0 || strcmp(k, "K") == 0)
		lua_pushinteger(L, a->k);
	else if (strcmp(k, "thr_id") == 0)
		push_layout(L, &a->thr_id);
	else if (strcmp(k, "a") == 0 || strcmp(k, "A") == 0)
		push_tv(L, &a->a, a->m, a->k);
	else if (strcmp(k, "b") == 0 || strcmp(k, "B") == 0)
		push_tv(L, &a->b, a->n, a->k);
	else if (strcmp(k, "c") == 0 || strcmp(k, "C") == 0)
		push_tv(L, &a->c, a->m, a->n);
	else
		lua_pushnil(L);
	return 1;
}

static int
atom_tostring(lua_State *L)
{
	MmaAtom *a = luaL_checkudata(L, 1, ATOM);

	lua_pushfstring(L, "MMA_Atom %s (%dx%dx%d, %s)", a->name, a->m, a->n, a->k, a->types);
	return 1;
}

/*
** Pictures
*/
/*
** Options of a picture (the drawable protocol of tessel.h): the shared
** ones, and for the terminal, unless max_cols is given, as many columns as
** fit the width: a cell is its widest label plus "| " and " " (CuTe's
** layout), and an MMA atom puts two panels side by side. label_max is the
** largest number a cell shows (a value, or a thread id).
*/
static void
get_opts(lua_State *L, VizOpts *o, int64_t label_max, int panels, const TesselOpt *own)
{
	int cell = num_digits(label_max < 0 ? 0 : label_max) + 4, fit;

	if (tessel_vizopts(L, 2, 3, o, own) || tessel_scene_target(L, 3) != TESSEL_TERM)
		return;
	fit = (tessel_term_width() / panels - 6) / cell;
	if (fit < 4)
		fit = 4;
	if (fit < o->max_cols)
		o->max_cols = fit;
}

/* Fill the scene (status < 0: the builder failed, raise its message). */
static int
scene_done(lua_State *L, int status, Err *e)
{
	return status < 0 ? fail(L, e) : 0;
}

static const TesselOpt tv_keys[] = { { "tv", "table" }, { NULL, NULL } };

static int
ll_scene(lua_State *L)
{
	LLayout *u = luaL_checkudata(L, 1, LAYOUT);
	int64_t m = u->tv_m, n = u->tv_n;
	VizOpts o;
	Err e;

	if (lua_getfield(L, 2, "tv") == LUA_TTABLE) {
		int okm, okn;

		lua_geti(L, -1, 1);
		lua_geti(L, -2, 2);
		m = lua_tointegerx(L, -2, &okm);
		n = lua_tointegerx(L, -1, &okn);
		if (!okm || !okn || m < 1 || n < 1)
			return luaL_error(L, "opts.tv must be {M, N} with integers M, N >= 1");
		lua_pop(L, 2);
	}
	lua_pop(L, 1);
	get_opts(L, &o, m > 0 ? cute_size(&u->l) : cute_cosize(&u->l), 1, tv_keys);
	if (m > 0 && n > 0)
		return scene_done(L, cute_scene_tv(tessel_toscene(L, 3), &u->l, m, n, &o, &e), &e);
	return scene_done(L, cute_scene_layout(tessel_toscene(L, 3), &u->l, &o, &e), &e);
}

static int
co_scene(lua_State *L)
{
	Composed *c = luaL_checkudata(L, 1, COMPOSED);
	VizOpts o;
	Err e;

	get_opts(L, &o, c->offset + 2 * cute_cosize(&c->layout), 1, NULL);
	return scene_done(L, cute_scene_composed(tessel_toscene(L, 3), c, &o, &e), &e);
}

static int
cv_scene(lua_State *L)
{
	CopyView *v = luaL_checkudata(L, 1, COPYVIEW);
	VizOpts o;
	Err e;

	get_opts(L, &o, cute_size(&v->src) > cute_size(&v->dst) ? cute_size(&v->src) : cute_size(&v->dst), 2, NULL);
	return scene_done(L, cute_scene_copy(tessel_toscene(L, 3), &v->src, &v->dst, v->m, v->n, &o, &e), &e);
}

static int
atom_scene(lua_State *L)
{
	MmaAtom *a = luaL_checkudata(L, 1, ATOM);
	VizOpts o;
	Err e;

	get_opts(L, &o, cute_size(&a->thr_id), 2, NULL);
	return scene_done(L, cute_scene_mma(tessel_toscene(L, 3), a, &o, &e), &e);
}

/* L:expr([opts]): the index expression, built by lua_uop.c. */
static int
l_expr(lua_State *L)
{
	Composed *c = luaL_testudata(L, 1, COMPOSED);
	Layout tmp;

	if (c)
		return tessel_uop_push_layout(L, NULL, c, 2);
	return tessel_uop_push_layout(L, check_layout(L, 1, &tmp), NULL, 2);
}

/* print_layout(L): CuTe's print_layout text, exactly, without colour. */
static int
l_print_layout(lua_State *L)
{
	Layout tmp;
	const Layout *l = check_layout(L, 1, &tmp);
	VizOpts o;
	Buf b;
	Err e;
	int r;

	viz_opts_default(&o);
	o.color = 0;
	buf_init(&b);
	r = viz_show_layout(&b, l, &o, &e);
	if (r < 0) {
		buf_free(&b);
		return fail(L, &e);
	}
	lua_writestring(b.s ? b.s : "", b.len);
	buf_free(&b);
	return 0;
}

/*
** Registration. Each entry carries its help text (help(cute.composition)).
*/
typedef HelpReg Fn;

static const Fn funcs[] = {
	{ "layout", l_layout,
	  "make a layout from notation, a shape and stride, or a shape\n"
	  "cute.layout(notation) | cute.layout(shape, stride) | cute.layout(shape [, \"row\"|\"col\"])\n"
	  "Make a layout. Shapes and strides are integers or nested tables; the default strides are\n"
	  "CuTe's compact column-major ones (stride 0 for a size-1 mode), \"row\" gives LayoutRight.\n"
	  "Whatever cute prints parses back: cute.layout(\"Sw<2,0,2> o 0 o (4,4):(4,1)\") is a composed layout.\n"
	  "  cute.layout(\"((2,2),4):((1,4),2)\")  cute.layout({4,2}, {1,4})  cute.layout({4,2}, \"row\")" },
	{ "make_layout", l_make_layout,
	  "concatenate layouts as modes, or make one from a shape\n"
	  "cute.make_layout(L1, L2, ...) -> (L1,L2,...)   concatenate layouts as modes\n"
	  "cute.make_layout(shape [, stride | \"row\"])     as cute.layout" },
	{ "size", l_size,
	  "number of elements (of the whole, or of a mode)\n"
	  "cute.size(L [, i, j...]) -> number of elements of L, or of its mode <i,j...> (0-based, as size<i>)" },
	{ "cosize", l_cosize,
	  "1 + the largest index the layout produces\n"
	  "cute.cosize(L [, i...]) -> 1 + the largest index L produces (codomain size)" },
	{ "rank", l_rank,
	  "number of top-level modes\n"
	  "cute.rank(L [, i...]) -> number of top-level modes (1 for an integral layout)" },
	{ "depth", l_depth,
	  "nesting depth of the shape\n"
	  "cute.depth(L [, i...]) -> nesting depth of the shape (0 for an integer)" },
	{ "shape", l_shape,
	  "the shape, as a tuple table\n"
	  "cute.shape(L [, i...]) -> the shape as a Lua table that prints in notation (integer if integral).\n"
	  "Tables are 1-based Lua sequences: cute.shape(L)[1] is mode 0's shape." },
	{ "stride", l_stride,
	  "the stride, as a tuple table\n"
	  "cute.stride(L [, i...]) -> the stride, as cute.shape" },
	{ "mode", l_mode,
	  "the sub-layout layout<i,j...>(L), 0-based\n"
	  "cute.mode(L, i [, j...]) -> the sub-layout layout<i,j...>(L). Mode indices are 0-based, as in CuTe." },
	{ "get", l_get,
	  "the sub-layout layout<i,j...>(L), same as cute.mode\n"
	  "cute.get(L, i [, j...]) -> layout<i,j...>(L), same as cute.mode" },
	{ "select", l_select,
	  "the layout of the chosen modes, in that order\n"
	  "cute.select(L, i, j, ...) -> the layout of the chosen modes (0-based), in that order" },
	{ "flatten", l_flatten,
	  "all leaf modes at the top level\n"
	  "cute.flatten(L or tuple) -> all leaf modes at the top level" },
	{ "coalesce", l_coalesce,
	  "the same function with the fewest modes\n"
	  "cute.coalesce(L [, profile]) -> the same function on [0,size) with the fewest modes.\n"
	  "With a profile tuple, coalesce each mode named by the profile separately: coalesce(L, {1,1})." },
	{ "filter", l_filter,
	  "coalesce after dropping stride-0 modes\n"
	  "cute.filter(L [, profile]) -> coalesce after removing stride-0 modes (1:0 if nothing is left).\n"
	  "With a profile tuple, filter each mode named by the profile separately: filter(L, {1,1})." },
	{ "composition", l_composition,
	  "the layout A o B: R(c) = A(B(c)), shaped like B\n"
	  "cute.composition(A, B) -> R with R(c) = A(B(c)) and the shape of B.\n"
	  "B may be a layout or a tiler (a tuple applied mode by mode, cute._ for no-op):\n"
	  "  cute.composition(\"(6,8):(2,12)\", \"(2,_)\")  cute.composition(A, {\"3:4\", 2})\n"
	  "With a swizzle on the left it builds a swizzled (composed) layout: composition(cute.swizzle(3,4,3), L).\n"
	  "Errors name CuTe's stride and shape divisibility conditions when B does not fit A. Where CuTe C++\n"
	  "computes a layout that is not A o B, the error gives C++'s layout and the first i where it\n"
	  "differs from A(B(i)); cute.composition(A, B, {cpp = true}) returns C++'s layout anyway.\n"
	  "The divides and products take the same {cpp = true}." },
	{ "complement", l_complement,
	  "the layout that fills the holes of L up to a cotarget\n"
	  "cute.complement(L [, cotarget]) -> C such that (L, C) is injective and covers the cotarget\n"
	  "(default cosize(L)); an error if L is not injective." },
	{ "filter_zeros", l_filter_zeros,
	  "size 1 where the stride is 0\n"
	  "cute.filter_zeros(L) -> L with the modes of stride 0 given size 1, the structure kept" },
	{ "make_ordered_layout", l_make_ordered_layout,
	  "a compact layout whose modes nest in an order\n"
	  "cute.make_ordered_layout(shape, order) -> compact strides, the modes of smaller order\n"
	  "inner: make_ordered_layout({2,2,2,2}, {0,2,3,1}) is (2,2,2,2):(1,4,8,2). A leaf of the\n"
	  "order may stand for a whole mode of the shape; equal orders start at the same stride." },
	{ "make_layout_like", l_make_layout_like,
	  "a compact layout with L's shape and stride order\n"
	  "cute.make_layout_like(L) -> compact, the modes ordered as L's strides, stride-0 modes kept 0:\n"
	  "make_layout_like(\"(2,2,2,2):(0,2,4,1)\") is (2,2,2,2):(0,2,4,1)" },
	{ "make_fragment_like", l_make_fragment_like,
	  "a compact layout for a thread's fragment of L\n"
	  "cute.make_fragment_like(L) -> mode 0 (the atom's values) column-major with its stride-0 modes\n"
	  "kept 0, the other modes compact in the order of L's strides (tiled_product of the two)" },
	{ "tile_to_shape", l_tile_to_shape,
	  "repeat a block to fill a shape\n"
	  "cute.tile_to_shape(block, shape [, order [, {cpp = true}]]) -> blocked_product of the block\n"
	  "(padded with 1:0 modes to the shape's rank) over the shape, blocks in the order (nil:\n"
	  "column-major); each mode of the block must divide the shape's. cpp as for the products." },
	{ "max_common_layout", l_max_common_layout,
	  "the largest run two layouts share\n"
	  "cute.max_common_layout(A, B) -> R with A(R(i)) == i and B(R(i)) == i for the longest\n"
	  "contiguous run (1:0 if none): how many elements one vector access can move between them" },
	{ "max_common_vector", l_max_common_vector,
	  "the size of max_common_layout\n"
	  "cute.max_common_vector(A, B) -> N >= 1: elements 0..N-1 of B's domain are contiguous in A" },
	{ "right_inverse", l_right_inverse,
	  "R with L(R(i)) == i\n"
	  "cute.right_inverse(L) -> R with L(R(i)) == i for i < size(R)" },
	{ "left_inverse", l_left_inverse,
	  "R with R(L(i)) == i\n"
	  "cute.left_inverse(L) -> R with R(L(i)) == i; holes of L's codomain get stride 0" },
	{ "logical_divide", l_logical_divide,
	  "split L into (tile, rest) by a tiler\n"
	  "cute.logical_divide(L, tiler [, {cpp = true}]) -> (tile, rest) per mode of the tiler: L o (T, complement(T, ...))" },
	{ "zipped_divide", l_zipped_divide,
	  "logical_divide gathered as ((tiles...),(rests...))\n"
	  "cute.zipped_divide(L, tiler [, {cpp = true}]) -> ((tiles...),(rests...))" },
	{ "tiled_divide", l_tiled_divide,
	  "logical_divide as ((tiles...), rest0, rest1, ...)\n"
	  "cute.tiled_divide(L, tiler [, {cpp = true}]) -> ((tiles...), rest0, rest1, ...)" },
	{ "flat_divide", l_flat_divide,
	  "logical_divide as (tile0, ..., rest0, ...)\n"
	  "cute.flat_divide(L, tiler [, {cpp = true}]) -> (tile0, tile1, ..., rest0, rest1, ...)" },
	{ "logical_product", l_logical_product,
	  "repeat a block A as (A, repetitions) by a tiler\n"
	  "cute.logical_product(A, tiler [, {cpp = true}]) -> (A, complement(A, size(A)*cosize(B)) o B) per mode" },
	{ "zipped_product", l_zipped_product,
	  "logical_product as ((blocks...),(repeats...))\n"
	  "cute.zipped_product(A, tiler [, {cpp = true}]) -> ((blocks...),(repeats...))" },
	{ "tiled_product", l_tiled_product,
	  "logical_product as ((blocks...), rep0, rep1, ...)\n"
	  "cute.tiled_product(A, tiler [, {cpp = true}]) -> ((blocks...), rep0, rep1, ...)" },
	{ "flat_product", l_flat_product,
	  "logical_product as (block modes..., repeat modes...)\n"
	  "cute.flat_product(A, tiler [, {cpp = true}]) -> (block modes..., repeat modes...)" },
	{ "blocked_product", l_blocked_product,
	  "A repeated as whole blocks over B, mode by mode\n"
	  "cute.blocked_product(A, B [, {cpp = true}]) -> A repeated as blocks over B, rank max(rank A, rank B)" },
	{ "raked_product", l_raked_product,
	  "A's elements interleaved across B's blocks\n"
	  "cute.raked_product(A, B [, {cpp = true}]) -> A's elements interleaved (raked) across B's blocks" },
	{ "crd2idx", l_crd2idx,
	  "a coordinate to its index\n"
	  "cute.crd2idx(crd, shape [, stride]) | cute.crd2idx(crd, L) -> index (colexicographic when no stride)" },
	{ "idx2crd", l_idx2crd,
	  "an index to its natural coordinate\n"
	  "cute.idx2crd(idx, shape) -> the natural coordinate; the last mode takes what is left (as CuTe)" },
	{ "crd2crd", l_crd2crd,
	  "a coordinate of one shape to the same index in another\n"
	  "cute.crd2crd(crd, src_shape, dst_shape) -> the coordinate in dst_shape" },
	{ "slice", l_slice,
	  "the sub-layout at the cute._ positions of a coordinate\n"
	  "cute.slice(crd, L) -> sub-layout of the modes where crd has cute._, and the offset of the rest.\n"
	  "  cute.slice({cute._, 2}, \"(4,8):(1,4)\") --> (4):(1), 8      L(cute._, 2) does the same" },
	{ "same_function", l_same_function,
	  "whether two layouts compute the same map\n"
	  "cute.same_function(A, B) -> true if A(i) == B(i) for every i (false, first differing index otherwise)" },
	{ "with_shape", l_with_shape,
	  "L reshaped: L o make_layout(shape)\n"
	  "cute.with_shape(L, shape) -> L o make_layout(shape)" },
	{ "tuple", l_tuple,
	  "an integer tuple from notation or a table\n"
	  "cute.tuple(\"((2,2),4)\" or table) -> an integer tuple (a table that prints in notation)" },
	{ "product", l_product,
	  "the product of a tuple's integers\n"
	  "cute.product(t) -> the product of all integers of t" },
	{ "prefix_product", l_prefix_product,
	  "exclusive prefix products\n"
	  "cute.prefix_product(t) -> exclusive prefix products: ((2,3),4) -> ((1,2),6). These are\n"
	  "the compact column-major strides except at size-1 modes, where compact layouts put 0." },
	{ "shape_div", l_shape_div,
	  "CuTe's shape_div, divisibility checked\n"
	  "cute.shape_div(a, b) -> a divided by b as CuTe's shape_div (divisibility checked)" },
	{ "ceil_div", l_ceil_div,
	  "division rounded up, folded across tuples\n"
	  "cute.ceil_div(a, b) -> a / b rounded up, folded across tuples as CuTe does" },
	{ "inner_product", l_inner_product,
	  "sum of products of congruent tuples\n"
	  "cute.inner_product(a, b) -> sum of products of congruent tuples" },
	{ "congruent", l_congruent,
	  "whether two tuples have the same structure\n"
	  "cute.congruent(a, b) -> same tree structure" },
	{ "weakly_congruent", l_weakly_congruent,
	  "whether a's structure coarsens b's\n"
	  "cute.weakly_congruent(a, b) -> a's structure is a coarsening of b's" },
	{ "compatible", l_compatible,
	  "whether coordinates of shape a are coordinates of b\n"
	  "cute.compatible(a, b) -> a coordinate of shape a is a coordinate of shape b" },
	{ "swizzle", l_swizzle,
	  "the Swizzle<B,M,S> functor\n"
	  "cute.swizzle(B, M, S) | cute.swizzle(\"Sw<3,4,3>\") -> Swizzle<B,M,S>: x ^ ((x & yyy) >> S).\n"
	  "Call it on an offset (sw(x)); compose it with a layout: cute.composition(sw, L)." },
	{ "composed", l_composed,
	  "a swizzled layout sw(offset + L(x))\n"
	  "cute.composed(sw, [offset,] L) | cute.composed(\"Sw<2,0,2> o 0 o (4,4):(4,1)\") -> sw(offset + L(x))" },
	{ "make_layout_tv", l_make_layout_tv,
	  "thread-value layouts from thread and value layouts\n"
	  "cute.make_layout_tv(thr, val) -> layout_mn, layout_tv\n"
	  "layout_mn = raked_product(thr, val) maps (m,n) to (thread, value); layout_tv is its right\n"
	  "inverse shaped (size(thr), size(val)). show(layout_tv) draws T#V# cells." },
	{ "tv", l_tv,
	  "mark a layout as a TV layout over an M x N tile, for show\n"
	  "cute.tv(L, M, N) -> L marked as a TV layout over an M x N tile, for show()" },
	{ "mma_atom", l_mma_atom,
	  "a built-in MMA atom and its A, B, C fragments\n"
	  "cute.mma_atom(name) -> an MMA atom with fields name, ptx, types, m, n, k, thr_id, a, b, c.\n"
	  "a, b, c are TV layouts (thread, value) -> column-major index in MxK, NxK, MxN.\n"
	  "  show(cute.mma_atom(\"SM80_16x8x16_F32F16F16F32_TN\"))   cute.mma_atoms() lists the names" },
	{ "copy_view", l_copy_view,
	  "a tiled copy's source and destination TV layouts, to draw\n"
	  "cute.copy_view(src_tv, dst_tv, M, N) -> a value show() and viz.render() draw as CuTe's\n"
	  "print_latex draws a TiledCopy: S and D over the M x N tile, T#V# cells coloured by thread." },
	{ "mma_atoms", l_mma_atoms,
	  "the names of the built-in MMA atoms\n"
	  "cute.mma_atoms() -> the names of the built-in MMA atoms" },
	{ "expr", l_expr,
	  "the layout's index expression at a symbolic coordinate (a uop expression)\n"
	  "cute.expr(L [, opts]) | L:expr{name = \"i\", modes = false, raw = false} -> the simplified index\n"
	  "of L at the 1-D coordinate i in [0, size), or with modes = true at one variable per flattened\n"
	  "mode (i0, i1, ...); raw = true skips simplification. Swizzled layouts include the xor." },
	{ "print_layout", l_print_layout,
	  "print CuTe's print_layout table (no colour)\n"
	  "cute.print_layout(L) prints CuTe's print_layout table (no colour)" },
	{ NULL, NULL, NULL }
};

/* Methods of layouts: every cute function whose first argument is a layout. */
static const char *const methods[] = {
	"size", "cosize", "rank", "depth", "shape", "stride", "mode", "get", "select", "flatten",
	"coalesce", "filter", "filter_zeros", "make_layout_like", "make_fragment_like", "tile_to_shape",
	"max_common_layout",
	"max_common_vector", "composition", "complement", "right_inverse", "left_inverse",
	"logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "logical_product",
	"zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product",
	"crd2idx", "idx2crd", "slice", "same_function", "with_shape", "print_layout", "expr", NULL
};

static const luaL_Reg layout_meta[] = {
	{ "__tostring", ll_tostring },
	{ "__eq", ll_eq },
	{ "__len", ll_len },
	{ "__call", ll_call },
	{ "__scene", ll_scene },
	{ NULL, NULL }
};

static const luaL_Reg composed_meta[] = {
	{ "__tostring", co_tostring },
	{ "__eq", co_eq },
	{ "__len", co_len },
	{ "__call", co_call },
	{ "__index", co_index },
	{ "__scene", co_scene },
	{ NULL, NULL }
};

static const luaL_Reg swizzle_meta[] = {
	{ "__tostring", sw_tostring },
	{ "__eq", sw_eq },
	{ "__call", sw_call },
	{ NULL, NULL }
};

static const luaL_Reg copyview_meta[] = {
	{ "__tostring", cv_tostring },
	{ "__scene", cv_scene },
	{ NULL, NULL }
};

static const luaL_Reg atom_meta[] = {
	{ "__tostring", atom_tostring },
	{ "__index", atom_index },
	{ "__scene", atom_scene },
	{ NULL, NULL }
};

static int
under_tostring(lua_State *L)
{
	lua_pushliteral(L, "_");
	return 1;
}

static const char *const topics[][2] = {
	{ "cute",
	  "CuTe layouts with the semantics of CuTe C++ v4\n"
	  "A layout maps a coordinate to an index: the inner product of the natural coordinate with the\n"
	  "strides; a 1-D coordinate is unflattened colexicographically (first mode fastest).\n"
	  "  L = cute.layout(\"(4,2):(1,4)\")   L(5) --> 5   L(1,1) --> 5   #L --> 8   show(L)\n"
	  "Every function also works as a method (L:composition(B)) and takes notation strings\n"
	  "in place of layouts and tilers. Topics: help \"modes\", help \"tilers\", help \"swizzle\",\n"
	  "help \"tv\", help \"notation\"." },
	{ "cute.Layout",
	  "a CuTe layout: an immutable Shape:Stride map\n"
	  "tostring(L) is its notation; L(i), L(i, j), L{1,{0,1}} evaluate\n"
	  "(a cute._ in the coordinate slices); #L is the size; == compares shape and stride;\n"
	  "L:same_function(M) compares the maps. Methods: every cute function, e.g. L:coalesce()." },
	{ "modes",
	  "mode indices are 0-based, Lua tables 1-based\n"
	  "Mode indices follow CuTe and are 0-based: cute.mode(L, 0) is layout<0>(L), cute.size(L, 1)\n"
	  "is size<1>(L), cute.mode(L, 1, 0) is layout<1,0>(L). Integer tuples returned to Lua are\n"
	  "plain Lua sequences, 1-based as every Lua table: cute.shape(L)[1] is the shape of mode 0." },
	{ "tilers",
	  "tilers: layouts, or tuples of tilers applied by mode\n"
	  "A tiler is a layout, or a tuple of tilers applied mode by mode. An integer n means n:1\n"
	  "(make_layout(n) to the divides and products, 1:0 for n = 1) and cute._ leaves the mode\n"
	  "alone. Write them as strings \"(2,_)\", \"(3:4,(2,2):(1,8))\" or tables {2, cute._},\n"
	  "{\"3:4\", L}. composition drops the modes a tuple tiler does not reach; the divides and\n"
	  "products keep them." },
	{ "notation",
	  "the notation of tuples, layouts and swizzles\n"
	  "Notation is CuTe's: integers, tuples (a,b) without spaces, a 1-tuple (4) differs from 4,\n"
	  "layouts SHAPE:STRIDE, swizzles Sw<B,M,S>, composed layouts Sw<2,0,2> o 0 o (4,4):(4,1).\n"
	  "The parser also accepts spaces and CuTe's static _4; print(parse(s)) gives s back." },
	{ "swizzle",
	  "swizzles and swizzled shared-memory layouts\n"
	  "Swizzle<B,M,S> xors the B bits at M+max(0,S) into the B bits at M-min(0,S); |S| >= B.\n"
	  "sw = cute.swizzle(3,4,3); sw(128) --> 136; S = cute.composition(sw, \"(8,64):(64,1)\")\n"
	  "show(S, {elem_bytes = 2}) colours shared-memory banks and counts conflicts." },
	{ "cute.ComposedLayout",
	  "a swizzled layout x -> sw(offset + L(x))\n"
	  "Fields: .swizzle, .offset, .layout. Divides,\n"
	  "products and composition act on the inner layout, as CuTe's ComposedLayout does." },
	{ "tv",
	  "thread-value layouts: (thread, value) -> tile coordinate\n"
	  "  mn, tv = cute.make_layout_tv(cute.layout({4,8},{8,1}), cute.layout({4,1}))\n"
	  "  show(tv)   -- the tile with T#V# cells coloured by thread" },
	{ "mma",
	  "MMA atoms and their A, B, C fragments\n"
	  "cute.mma_atom(name) for the names in cute.mma_atoms(). Fields a, b, c are TV\n"
	  "layouts; show(atom) draws the A, B and C panels as CuTe's print_latex does." },
	{ "cute.MmaAtom",
	  "an MMA atom\n"
	  "Fields .name .ptx .types .m .n .k .thr_id and TV layouts .a (MxK) .b (NxK) .c (MxN)." },
	{ "cute.Swizzle", "a swizzle functor\nsw(x) applies it; tostring gives Sw<B,M,S>." },
};

int
luaopen_tessel_cute(lua_State *L)
{
	int i;

	/* the `_` sentinel, shared by every place that reads or returns one */
	lua_newuserdatauv(L, 0, 0);
	if (luaL_newmetatable(L, UNDER)) {
		lua_pushcfunction(L, under_tostring);
		lua_setfield(L, -2, "__tostring");
	}
	lua_setmetatable(L, -2);
	lua_setfield(L, LUA_REGISTRYINDEX, "tessel.cute._");

	luaL_newmetatable(L, TUPLE);
	lua_pushcfunction(L, tuple_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pushcfunction(L, tuple_eq);
	lua_setfield(L, -2, "__eq");
	lua_pop(L, 1);

	lua_newtable(L);  /* cute */
	help_setfuncs(L, funcs, "cute.");
	lua_getfield(L, LUA_REGISTRYINDEX, "tessel.cute._");
	lua_setfield(L, -2, "_");
	help_add(L, -1, "cute", topics[0][1]);
	for (i = 0; i < (int)(sizeof topics / sizeof topics[0]); i++)
		help_topic(L, topics[i][0], topics[i][1]);

	luaL_newmetatable(L, LAYOUT);
	luaL_setfuncs(L, layout_meta, 0);
	lua_newtable(L);  /* methods */
	for (i = 0; methods[i]; i++) {
		lua_getfield(L, -3, methods[i]);
		lua_setfield(L, -2, methods[i]);
	}
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);

	luaL_newmetatable(L, COMPOSED);
	luaL_setfuncs(L, composed_meta, 0);
	lua_pop(L, 1);
	luaL_newmetatable(L, SWIZZLE);
	luaL_setfuncs(L, swizzle_meta, 0);
	lua_pop(L, 1);
	luaL_newmetatable(L, ATOM);
	luaL_setfuncs(L, atom_meta, 0);
	lua_pop(L, 1);
	luaL_newmetatable(L, COPYVIEW);
	luaL_setfuncs(L, copyview_meta, 0);
	lua_pop(L, 1);
	return 1;
}

const struct Composed *
tessel_testcomposed(lua_State *L, int i, struct Composed *tmp)
{
	return test_composed(L, i, tmp);
}

/* lua_util.c - what every binding calls: the terminal's width and colour, tables read as lists, option tables. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "tessel.h"

int
tessel_term_width(void)
{
	struct winsize w;
	const char *c = getenv("COLUMNS");

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 40)
		return w.ws_col;
	if (c && atoi(c) >= 40)
		return atoi(c);
	return 120;
}

int
tessel_want_color(lua_State *L, int opts)
{
	const char *nc = getenv("NO_COLOR");

	if (lua_type(L, opts) == LUA_TTABLE) {
		int t;
		lua_getfield(L, opts, "color");
		t = lua_type(L, -1);
		if (t != LUA_TNIL) {
			int on = lua_toboolean(L, -1);
			lua_pop(L, 1);
			return on;
		}
		lua_pop(L, 1);
	}
	return isatty(STDOUT_FILENO) && !(nc && *nc);
}

/*
** A table read as a list has keys 1..#t only: a named field (a table of
** options where a shape goes, {layout = ...} where a layout goes) would
** otherwise read as a shorter list, often the empty one. Returns 0, or 1 with
** the first stray key described in key[] ("\"layout\"", "0", "2.5").
*/
int
tessel_seq_stray(lua_State *L, int i, char *key, size_t nkey)
{
	lua_Integer n;

	i = lua_absindex(L, i);
	n = (lua_Integer)lua_rawlen(L, i);
	lua_pushnil(L);
	while (lua_next(L, i)) {
		int isint;
		lua_Integer k;

		lua_pop(L, 1);
		k = lua_tointegerx(L, -1, &isint);
		if (lua_type(L, -1) == LUA_TNUMBER && isint && k >= 1 && k <= n)
			continue;
		if (lua_type(L, -1) == LUA_TSTRING)
			snprintf(key, nkey, "\"%.40s\"", lua_tostring(L, -1));
		else if (lua_type(L, -1) == LUA_TNUMBER)
			snprintf(key, nkey, "%.17g", lua_tonumber(L, -1));
		else
			snprintf(key, nkey, "a %s", luaL_typename(L, -1));
		lua_pop(L, 1);
		return 1;
	}
	return 0;
}

void
tessel_checkseq(lua_State *L, int i, const char *what)
{
	char key[64];

	if (lua_type(L, i) == LUA_TTABLE && tessel_seq_stray(L, i, key, sizeof key))
		luaL_error(L, "%s: a list takes the keys 1 to #t only, this one has the key %s", what, key);
}

/*
** Option tables (tessel.h). The type of an option is a list of names joined
** by '|': Lua's type names, and "integer" for a number with an integral value.
*/
static int
has_type(lua_State *L, int i, const char *spec)
{
	const char *p = spec, *t = luaL_typename(L, i);

	for (;;) {
		size_t n = strcspn(p, "|");

		if (n == 7 && strncmp(p, "integer", 7) == 0) {
			int isint = 0;

			if (lua_type(L, i) == LUA_TNUMBER)
				lua_tointegerx(L, i, &isint);
			if (isint)
				return 1;
		} else if (strlen(t) == n && strncmp(p, t, n) == 0)
			return 1;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

/* "an integer", "a string or a function", "a boolean, a function or a table" */
static void
expected(const char *spec, char *out, size_t size)
{
	const char *p = spec;
	size_t len = 0;

	out[0] = 0;
	for (;;) {
		size_t n = strcspn(p, "|");
		const char *sep = !len ? "" : p[n] ? ", " : " or ";

		if (len < size)
			len += (size_t)snprintf(out + len, size - len, "%s%s %.*s", sep,
			                        strchr("aeiou", p[0]) ? "an" : "a", (int)n, p);
		if (!p[n])
			return;
		p += n + 1;
	}
}

/* The value at i in a message: 2.5, true, the string "x", a table, a kernel.Kernel */
static void
describe(lua_State *L, int i, char *out, size_t size)
{
	switch (lua_type(L, i)) {
	case LUA_TNUMBER:
	case LUA_TBOOLEAN:
		snprintf(out, size, "%s", luaL_tolstring(L, i, NULL));
		lua_pop(L, 1);
		return;
	case LUA_TSTRING:
		snprintf(out, size, "the string \"%.40s\"", lua_tostring(L, i));
		return;
	case LUA_TUSERDATA:
		if (luaL_getmetafield(L, i, "__name") != LUA_TNIL) {
			int named = lua_type(L, -1) == LUA_TSTRING;

			if (named)
				snprintf(out, size, "a %.60s", lua_tostring(L, -1));
			lua_pop(L, 1);
			if (named)
				return;
		}
		break;
	}
	snprintf(out, size, "a %s", luaL_typename(L, i));
}

/* The key at i in a message: 'name', [1], [true], a table key */
static void
keyname(lua_State *L, int i, char *out, size_t size)
{
	if (lua_type(L, i) == LUA_TSTRING)
		snprintf(out, size, "'%.40s'", lua_tostring(L, i));
	else if (lua_type(L, i) == LUA_TNUMBER || lua_type(L, i) == LUA_TBOOLEAN) {
		snprintf(out, size, "[%s]", luaL_tolstring(L, i, NULL));
		lua_pop(L, 1);
	} else
		snprintf(out, size, "a %s key", luaL_typename(L, i));
}

const char *
tessel_pushoptnames(lua_State *L, const TesselOpt *opts)
{
	luaL_Buffer b;
	int n = 0;

	luaL_buffinit(L, &b);
	for (; opts && opts->name; opts++, n++) {
		if (n)
			luaL_addstring(&b, ", ");
		luaL_addstring(&b, opts->name);
	}
	luaL_pushresult(&b);
	return lua_tostring(L, -1);
}

int
tessel_isopt(lua_State *L, const char *call, const TesselOpt *opts)
{
	const char *k;

	if (lua_type(L, -2) != LUA_TSTRING)
		return 0;
	k = lua_tostring(L, -2);
	for (; opts && opts->name; opts++)
		if (strcmp(opts->name, k) == 0) {
			if (opts->type && !has_type(L, -1, opts->type)) {
				char got[128], want[128];

				describe(L, lua_gettop(L), got, sizeof got);
				expected(opts->type, want, sizeof want);
				luaL_error(L, "%s: option %s is %s, not %s", call, k, got, want);
			}
			return 1;
		}
	return 0;
}

int
tessel_checkopts(lua_State *L, int idx, const char *call, const TesselOpt *opts)
{
	char k[64];

	if (lua_isnoneornil(L, idx))
		return 0;
	idx = lua_absindex(L, idx);
	if (lua_type(L, idx) != LUA_TTABLE)
		luaL_typeerror(L, idx, "options table");
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		if (!tessel_isopt(L, call, opts)) {
			keyname(L, -2, k, sizeof k);
			if (!opts || !opts->name)
				luaL_error(L, "%s: unknown option %s (it takes no options)", call, k);
			luaL_error(L, "%s: unknown option %s (the options are: %s)", call, k, tessel_pushoptnames(L, opts));
		}
		lua_pop(L, 1);
	}
	return 1;
}

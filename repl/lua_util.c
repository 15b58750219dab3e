/* lua_util.c - what every binding calls: the terminal's width and colour, tables read as lists. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
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

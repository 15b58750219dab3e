/* tessel.h - the Lua side of tessel: module openers shared by the program and tessel.so. */
#ifndef TESSEL_TESSEL_H
#define TESSEL_TESSEL_H

#include <lua.h>

/* The module table: { cute = ..., show = ..., help = ..., version = ... }. */
int luaopen_tessel(lua_State *L);

/* require "tessel" and put cute, show, help and tessel in the globals. */
void tessel_open_globals(lua_State *L);

/* lua_cute.c */
int luaopen_tessel_cute(lua_State *L);

/* lua_uop.c */
int luaopen_tessel_uop(lua_State *L);
struct Layout;
struct Composed;
/* Push the index expression of a CuTe layout (or of a composed one when cl is
** not NULL) as a uop expression; opts is the stack index of L:expr's options. */
int tessel_uop_push_layout(lua_State *L, const struct Layout *l, const struct Composed *cl, int opts);

/* show(x [, opts]): the terminal picture of a value, through its metatable's
** __show(x, opts) which returns the text. */
int tessel_show(lua_State *L);

/* Whether pictures use ANSI colour: opts.color if given, else stdout is a
** terminal and NO_COLOR is unset. */
int tessel_want_color(lua_State *L, int opts);

#endif

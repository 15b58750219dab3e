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
/* What the other bindings use to take and return CuTe layouts: the layout at
** index i (a cute.Layout, a notation string, an integer n meaning n:1, or a
** table shape made compact column-major; raises otherwise), tmp holding it
** when it is not a userdata; and a new cute.Layout pushed on the stack. */
struct Layout;
const struct Layout *tessel_checklayout(lua_State *L, int i, struct Layout *tmp);
void tessel_pushlayout(lua_State *L, const struct Layout *l);

/* lua_lego.c */
int luaopen_tessel_lego(lua_State *L);
/* lua_axe.c */
int luaopen_tessel_axe(lua_State *L);

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

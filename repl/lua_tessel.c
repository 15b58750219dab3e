/* lua_tessel.c - the `tessel` module: opens every area's table and the global helpers. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <string.h>

#include "../util/limits.h"
#include "help.h"
#include "lua_tensor.h"
#include "tessel.h"

/* lua_tensor.c keeps tensor.options{mem_limit} here; tensor_bytes is the same limit. */
#define TENSOR_OPTKEY "tessel.tensor.options"

/* show(x [, opts]) prints the terminal picture of a drawable x (tessel.h):
** its own __show text when it has one, else its __scene drawn for the
** terminal; other values print as tostring(x). */
int
tessel_show(lua_State *L)
{
	size_t n;
	const char *s;

	luaL_checkany(L, 1);
	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	if (luaL_getmetafield(L, 1, "__show") == LUA_TNIL
	    && luaL_getmetafield(L, 1, "__scene") == LUA_TNIL) {
		if (lua_istable(L, 2) && (lua_pushnil(L), lua_next(L, 2)))
			return luaL_error(L, "show: a %s is no picture and takes no options (it prints as tostring)",
			                  luaL_typename(L, 1));
		s = luaL_tolstring(L, 1, &n);
		lua_writestring(s, n);
		lua_writeline();
		return 0;
	}
	lua_pop(L, 1);
	tessel_push_text(L, 1, 2, "show");
	s = lua_tolstring(L, -1, &n);
	lua_writestring(s, n);
	if (n == 0 || s[n - 1] != '\n')
		lua_writeline();
	fflush(stdout);
	return 0;
}

/* The current limits as a table { tensor_bytes = ..., steps = ..., ... }. */
static void
push_limits(lua_State *L)
{
	int i;

	lua_createtable(L, 0, LIMIT_COUNT);
	for (i = 0; i < LIMIT_COUNT; i++) {
		lua_pushinteger(L, limits_value(i));
		lua_setfield(L, -2, limits_name(i));
	}
}

/*
** tessel.limits([t]) -> the limits in force, after setting those t names. Each value
** is an integer >= 1; "default" restores a limit's default. Checked whole before
** anything changes, so a bad table changes nothing.
*/
static int
l_limits(lua_State *L)
{
	Limits l = *limits_get();
	int64_t *f[LIMIT_COUNT] = {
#define X(E, fl, d, u, w) &l.fl,
		LIMITS(X)
#undef X
	};
	int i, isnum;
	TesselOpt keys[LIMIT_COUNT + 1] = { { NULL, NULL } };   /* each checked below: N or "default" */
	Err e;

	/* tensor.options{mem_limit} may have moved the realize limit since */
	if (lua_getfield(L, LUA_REGISTRYINDEX, TENSOR_OPTKEY) == LUA_TNUMBER && lua_tointeger(L, -1) > 0)
		l.tensor_bytes = lua_tointeger(L, -1);
	lua_pop(L, 1);
	for (i = 0; i < LIMIT_COUNT; i++)
		keys[i].name = limits_name(i);
	if (tessel_checkopts(L, 1, "tessel.limits", keys)) {
		lua_pushnil(L);
		while (lua_next(L, 1)) {
			lua_Integer v;
			const char *k = lua_tostring(L, -2);   /* a limit's name: checked */

			i = limits_index(k);
			if (lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "default") == 0) {
				v = limits_default_value(i);
			} else {
				v = lua_tointegerx(L, -1, &isnum);
				if (!isnum || v < 1)
					return luaL_error(L, "tessel.limits: %s must be an integer >= 1 or \"default\", not %s",
					                  k, luaL_tolstring(L, -1, NULL));
			}
			*f[i] = v;
			lua_pop(L, 1);
		}
		if (limits_set(&l, &e) < 0)
			return luaL_error(L, "%s", e.msg);
		lua_pushinteger(L, l.tensor_bytes);
		lua_setfield(L, LUA_REGISTRYINDEX, TENSOR_OPTKEY);
	} else if (limits_set(&l, &e) < 0) {
		return luaL_error(L, "%s", e.msg);
	}
	push_limits(L);
	return 1;
}

/* The kernel table: lua_kernel.c's, with the statements of lua_kernel_stmt.c, the runs and
** exports of lua_kernel_run.c and the schedules of lua_sched.c registered into it. */
static int
open_kernel(lua_State *L)
{
	luaopen_tessel_kernel(L);
	tessel_open_kernel_stmt(L);
	tessel_open_kernel_run(L);
	tessel_open_sched(L);
	return 1;
}

/* The tensor table: lua_tensor.c's, with tinygrad's methods of lua_tensor_ops.c registered into it. */
static int
open_tensor(lua_State *L)
{
	luaopen_tessel_tensor(L);
	tessel_open_tensor_ops(L);
	tessel_open_tensor_resample(L);
	tessel_open_tensor_linalg(L);
	return 1;
}

int
luaopen_tessel(lua_State *L)
{
	lua_newtable(L);
	luaL_requiref(L, "cute", luaopen_tessel_cute, 0);  /* errors then name cute.f */
	lua_setfield(L, -2, "cute");
	luaL_requiref(L, "lego", luaopen_tessel_lego, 0);
	lua_setfield(L, -2, "lego");
	luaL_requiref(L, "axe", luaopen_tessel_axe, 0);
	lua_setfield(L, -2, "axe");
	luaL_requiref(L, "uop", luaopen_tessel_uop, 0);
	lua_setfield(L, -2, "uop");
	luaL_requiref(L, "tensor", open_tensor, 0);
	lua_setfield(L, -2, "tensor");
	luaL_requiref(L, "kernel", open_kernel, 0);
	lua_setfield(L, -2, "kernel");
	luaL_requiref(L, "dist", luaopen_tessel_dist, 0);
	lua_setfield(L, -2, "dist");
	lua_pushcfunction(L, tessel_show);
	help_add(L, -1, "show",
	         "show(x [, opts]) draws x in the terminal: a layout as CuTe's print_layout grid, a TV\n"
	         "layout as T#V# cells coloured by thread, an MMA atom as its A, B and C panels, a\n"
	         "swizzled layout coloured by shared-memory bank, an Axe layout with each cell's lanes,\n"
	         "warps and devices (opts.axis colours by one), a LEGO layout as its logical and physical\n"
	         "views, a uop expression as a tree, a viz.graph as its nodes and edges.\n"
	         "opts: color (default: when stdout is a terminal and NO_COLOR is unset), max_rows,\n"
	         "max_cols, elem_bytes or dtype, compact, title, labels, and scheme: \"value\", \"thread\",\n"
	         "\"warp\", \"device\", \"bank\", \"none\" or a function(cell) -> \"#rrggbb\" (see\n"
	         "help(viz.render)); a layout also takes tv = {M, N}, an Axe layout axis, labels = {...} and\n"
	         "shape. Kernels, schedules and tensors print as text and take color only, a uop expression\n"
	         "max_rows only; another value takes no options. An unknown option raises.\n"
	         "viz.render(x, \"x.svg\") draws the same picture with Graphviz.");
	lua_setfield(L, -2, "show");
	luaL_requiref(L, "viz", luaopen_tessel_viz, 0);
	lua_setfield(L, -2, "viz");
	lua_pushcfunction(L, l_limits);
	help_add(L, -1, "limits",
	         "tessel.limits([t]) -> the resource limits in force, after setting those t names:\n"
	         "  tensor_bytes  bytes of realized tensors and of a kernel run's buffers (4 GiB)\n"
	         "  steps         instructions of one kernel run in the interpreter (1e9)\n"
	         "  check_elems   elements a check enumerates: uop.equivalent, G:check(), Axe (2^22)\n"
	         "  pixels        pixels of a rendered picture, cells of a scene (2^25)\n"
	         "  code_bytes    bytes of code an expression prints as (64 MiB)\n"
	         "Past a limit an operation stops with an error naming it, e.g. tessel.limits{steps = 1e10}\n"
	         "raises one; \"default\" restores one. Ctrl-C stops a long loop in C as well as Lua code.\n"
	         "tensor.options{mem_limit} is the same limit as tensor_bytes.");
	lua_setfield(L, -2, "limits");
	lua_pushcfunction(L, help_lua);
	help_add(L, -1, "help",
	         "help() gives an overview; help(f) the text of a function; help \"topic\" a topic;\n"
	         "help(cute) lists a table's functions.");
	lua_setfield(L, -2, "help");
	lua_pushliteral(L, TESSEL_VERSION);
	lua_setfield(L, -2, "version");
	help_topic(L, "tessel",
	           "tessel " TESSEL_VERSION ", a workbench for tensor layouts and kernels\n"
	           "Areas: cute (CuTe layouts), axe (Axe layouts), lego (LEGO layouts), uop (index\n"
	           "expressions), tensor (tensor programs), kernel (loop nests run as a GPU runs them),\n"
	           "dist (programs over several GPUs on NCCL), viz (Graphviz pictures); show(x) draws any\n"
	           "of them in the terminal. Start with help(cute), help(axe), help(lego), help(uop),\n"
	           "help(tensor), help(kernel), help(dist), help(viz) and help \"cute\".");
	return 1;
}

void
tessel_open_globals(lua_State *L)
{
	luaL_requiref(L, "tessel", luaopen_tessel, 1);
	lua_getfield(L, -1, "cute");
	lua_setglobal(L, "cute");
	lua_getfield(L, -1, "lego");
	lua_setglobal(L, "lego");
	lua_getfield(L, -1, "axe");
	lua_setglobal(L, "axe");
	lua_getfield(L, -1, "uop");
	lua_setglobal(L, "uop");
	lua_getfield(L, -1, "tensor");
	lua_setglobal(L, "tensor");
	lua_getfield(L, -1, "kernel");
	lua_setglobal(L, "kernel");
	lua_getfield(L, -1, "dist");
	lua_setglobal(L, "dist");
	lua_getfield(L, -1, "show");
	lua_setglobal(L, "show");
	lua_getfield(L, -1, "viz");
	lua_setglobal(L, "viz");
	lua_getfield(L, -1, "help");
	lua_setglobal(L, "help");
	lua_pop(L, 1);
}

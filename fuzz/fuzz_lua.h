/* fuzz_lua.h - what the Lua harnesses share: a Lua state with a capped heap and an
** instruction budget, so that an input cannot exhaust memory or loop forever in Lua. */
#ifndef TESSEL_FUZZ_LUA_H
#define TESSEL_FUZZ_LUA_H

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "../repl/tessel.h"

#define FUZZ_HEAP_CAP ((size_t)512 << 20)
enum { FUZZ_HOOK_EVERY = 1000 };

static size_t fuzz_heap_used;   /* bytes the state holds, against FUZZ_HEAP_CAP */
static long fuzz_budget;        /* VM instructions left for this input */

static inline void *
fuzz_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	void *q;

	(void)ud;
	if (ptr == NULL)
		osize = 0;
	if (nsize == 0) {
		free(ptr);
		fuzz_heap_used -= osize;
		return NULL;
	}
	if (nsize > osize && fuzz_heap_used + (nsize - osize) > FUZZ_HEAP_CAP)
		return NULL;
	if (!(q = realloc(ptr, nsize)))
		return NULL;
	fuzz_heap_used += nsize - osize;
	return q;
}

static inline void
fuzz_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	if ((fuzz_budget -= FUZZ_HOOK_EVERY) <= 0)
		luaL_error(L, "fuzz: instruction budget spent");
}

/* A state with the standard libraries and tessel's globals, as the tessel program opens them. */
static inline lua_State *
fuzz_newstate(void)
{
	lua_State *L;

	fuzz_heap_used = 0;
	if (!(L = lua_newstate(fuzz_alloc, NULL)))
		abort();
	luaL_openlibs(L);
	tessel_open_globals(L);
	return L;
}

/* Arm the budget for one input. */
static inline void
fuzz_arm(lua_State *L, long instructions)
{
	fuzz_budget = instructions;
	lua_sethook(L, fuzz_hook, LUA_MASKCOUNT, FUZZ_HOOK_EVERY);
}

#endif

/* lego.c - libFuzzer harness: LEGO layouts written as their constructors, the notation
** tostring(G) prints (`lego.GroupBy({6,6}, lego.OrderBy(lego.RegP({2,2}, {1,0}), ...))`).
** The input is evaluated as `return <input>` in an environment holding only `lego`, under an
** instruction budget; a layout that comes back must print as text that builds it again
** (print -> parse -> print), check as a bijection, and evaluate, invert and lower. */
#include "fuzz.h"

#include "fuzz_lua.h"

/* Run on the stack: (text) -> the checks; raises only for a broken invariant
** (reported as "FUZZ:" errors), returns quietly when the text is not a layout. */
static const char driver[] =
	"local text = ...\n"
	"local env = { lego = lego }\n"
	"local f = load('return ' .. text, '=input', 't', env)\n"
	"if not f then return end\n"
	"local ok, G = pcall(f)\n"
	"if not ok then\n"
	"  if type(G) ~= 'string' then error('FUZZ: a non-string error: ' .. type(G)) end\n"
	"  return\n"
	"end\n"
	"if getmetatable(G) ~= debug.getregistry()['lego.Layout'] then return end\n"
	"local s = tostring(G)\n"
	"if not text:find('function', 1, true) then\n"
	"  local g = load('return ' .. s, '=print', 't', env)\n"
	"  if not g then error('FUZZ: print does not parse: ' .. s) end\n"
	"  local ok2, G2 = pcall(g)\n"
	"  if not ok2 then error('FUZZ: print does not build: ' .. s .. ': ' .. tostring(G2)) end\n"
	"  if tostring(G2) ~= s then error('FUZZ: print -> parse -> print: ' .. s .. ' then ' .. tostring(G2)) end\n"
	"  if not (G == G2) then error('FUZZ: reparsed layout differs: ' .. s) end\n"
	"end\n"
	"local n = G:size()\n"
	"pcall(G.check, G)\n"
	"local dims = G:dims()\n"
	"local idx = {}\n"
	"for k = 1, #dims do idx[k] = dims[k] - 1 end\n"
	"local ok3, x = pcall(G.apply, G, table.unpack(idx))\n"
	"if ok3 and type(x) == 'number' and x >= 0 then pcall(G.inv, G, x) end\n"
	"pcall(G.inv, G, 0)\n"
	"pcall(G.expr, G)\n"
	"pcall(G.inv_expr, G)\n"
	"pcall(G.to_cute, G)\n"
	"pcall(G.steps, G)\n";

/* One state per input, so that a finding reproduces from its input alone. */
static int
one(const uint8_t *data, size_t size)
{
	lua_State *L;
	const char *msg;

	if (size > 4096)
		return 0;
	L = fuzz_newstate();
	if (luaL_loadstring(L, driver) != LUA_OK)
		abort();
	lua_pushlstring(L, (const char *)data, size);
	fuzz_arm(L, 1000000);
	if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
		msg = lua_tostring(L, -1);
		FUZZ_CHECK(!msg || !strstr(msg, "FUZZ:"), "%s", msg);
	}
	lua_close(L);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_scribble(512 << 10);
	return one(data, size);
}

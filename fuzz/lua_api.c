/* lua_api.c - libFuzzer harness: the fuzzer's bytes become a sequence of Lua API calls
** (functions of cute, axe, lego, uop, tensor, kernel, viz; methods of their values;
** operators) with hostile arguments, all run under pcall in one Lua state per input so
** that a call which corrupts the state is caught by a later one.
**
** The grammar, decoded byte by byte (an exhausted input reads as zeros):
**   program := { step }                        at most MAXSTEPS
**   step    := CALL  fn:u16 nargs:u8 arg*      a module function, by sorted name (4 in 8)
**            | METH  slot:u8 name:u16 nargs arg*   v:name(args) on a pooled value (3 in 8)
**            | OP    op:u8 arg arg arg         an operator, tostring, show, viz.text ... (1 in 8)
**   arg     := nil | bool | small int | extreme int | NaN/inf/float | notation string
**            | raw bytes | table of ints | nested table | table of layouts, ints and _
**            | options table | pooled value
**            | wrong userdata | callback function | self-referential or hostile table
** Non-nil results go into a pool of POOL slots that later steps take arguments from; the
** pool starts with one value of every kind (layouts, tensors, kernels, schedules ...).
**
** Work per input is capped: a Lua instruction hook (LUA_BUDGET instructions), a Lua heap
** cap (fuzz_lua.h: the allocator refuses past FUZZ_HEAP_CAP), tensor.options{mem_limit} and tessel.limits
** set low; what the library does in C beyond that is the library's own limits' business,
** and libFuzzer's -timeout and -rss_limit_mb turn a hang or a blow-up into a finding.
**
** FUZZ_KEEP_STATE=1 in the environment keeps one state across inputs (deeper corruption,
** but a crash then depends on earlier inputs); FUZZ_TRACE=1 prints each step as Lua. */
#include "fuzz.h"

#include "fuzz_lua.h"

#include <fcntl.h>
#include <math.h>
#include <unistd.h>

enum {
	MAXSTEPS = 48,
	POOL = 24,
	MAXARGS = 5,
	MAXDEPTH = 3,
	LUA_BUDGET = 2000000        /* VM instructions per input */
};

typedef struct Rd {
	const uint8_t *p;
	size_t n;
} Rd;

static unsigned
u8(Rd *r)
{
	if (r->n == 0)
		return 0;
	r->n--;
	return *r->p++;
}

static unsigned
u16(Rd *r)
{
	unsigned a = u8(r);
	return a | u8(r) << 8;
}

static int trace;

/*
** The prelude: the tables the decoder indexes. FN: every function of the modules,
** sorted by name (pairs order is not stable across states); METH: every method and
** field name of the values, sorted; OPS: operators; CB: callbacks handed to the API;
** POOL: the first values. Nothing here may print or touch files: viz.render writes
** a file and tensor.options / tessel.limits would lift the caps, so they are left out.
*/
static const char prelude[] =
	"local skip = { ['viz.render'] = true, ['tensor.options'] = true, ['tessel.limits'] = true }\n"
	"local FN, seen = {}, {}\n"
	"for _, m in ipairs{'cute', 'axe', 'lego', 'uop', 'tensor', 'kernel', 'dist', 'viz', 'tessel'} do\n"
	"  for k, v in pairs(_G[m]) do\n"
	"    local n = m .. '.' .. k\n"
	"    if type(v) == 'function' and not skip[n] then FN[#FN + 1] = n end\n"
	"  end\n"
	"end\n"
	"table.sort(FN)\n"
	"local FNV = {}\n"
	"for i, n in ipairs(FN) do local m, k = n:match('^(%w+)%.(.+)$'); FNV[i] = _G[m][k] end\n"
	"local METH, mseen = {}, {}\n"
	"local function addm(k) if type(k) == 'string' and not mseen[k] then mseen[k] = true; METH[#METH + 1] = k end end\n"
	"for k, v in pairs(debug.getregistry()) do\n"
	"  if type(k) == 'string' and type(v) == 'table' and type(rawget(v, '__index')) == 'table' and k ~= 'FILE*' then\n"
	"    for kk in pairs(rawget(v, '__index')) do addm(kk) end\n"
	"  end\n"
	"end\n"
	"for k in pairs(tensor.methods) do addm(k) end\n"
	"for k in pairs(kernel.methods) do addm(k) end\n"
	"for _, k in ipairs{'op', 'dtype', 'value', 'name', 'src', 'layout', 'layout_a', 'layout_b', 'offset',\n"
	"  'swizzle', 'ptx', 'types', 'm', 'n', 'k', 'thr_id', 'a', 'b', 'c', 'tx', 'ty', 'tz', 'bx', 'by',\n"
	"  'bz', 'warp', 'lane', 'shape', 'ndim', 'numel', 'device', 'scope', 'role', 'stride'} do addm(k) end\n"
	"table.sort(METH)\n"
	"local OPS = {\n"
	"  function(a, b) return a + b end, function(a, b) return a - b end, function(a, b) return a * b end,\n"
	"  function(a, b) return a / b end, function(a, b) return a // b end, function(a, b) return a % b end,\n"
	"  function(a, b) return a ^ b end, function(a) return -a end, function(a, b) return a & b end,\n"
	"  function(a, b) return a | b end, function(a, b) return a ~ b end, function(a, b) return a << b end,\n"
	"  function(a, b) return a >> b end, function(a) return ~a end, function(a, b) return a .. b end,\n"
	"  function(a) return #a end, function(a, b) return a == b end, function(a, b) return a < b end,\n"
	"  function(a, b) return a <= b end, function(a, b) return a(b) end, function(a, b, c) return a(b, c) end,\n"
	"  function(a, b) return a[b] end, function(a, b, c) a[b] = c end, function(a) return tostring(a) end,\n"
	"  function(a, b) return show(a, b) end, function(a, b) return viz.text(a, b) end,\n"
	"  function(a, b) return viz.dot(a, b) end, function(a) return help(a) end,\n"
	"  function(a) collectgarbage() return a end,\n"
	"  function(a) for i = 1, 4 do local ok = pcall(function() return a[i] end) end return a end,\n"
	"}\n"
	"local CB = {\n"
	"  function(...) return ... end,\n"
	"  function(i, j) return (tonumber(i) or 0) * 2 + (tonumber(j) or 0) end,\n"
	"  function() error('fuzz: callback error') end,\n"
	"  function() return nil end,\n"
	"  function() return 'x' end,\n"
	"  function() return 0/0, 1e308 end,\n"
	"  function(...) collectgarbage(); collectgarbage(); return ... end,\n"
	"  function(k) return k, k end,\n"
	"  function() return {1, 2, {3}} end,\n"
	"  function(...) return -1 end,\n"
	"}\n"
	"local P = {}\n"
	"local function try(i, f) local ok, v = pcall(f); if ok then P[i] = v end end\n"
	"try(1, function() return cute.layout('((2,2),4):((1,4),2)') end)\n"
	"try(2, function() return cute.composed('Sw<3,4,3> o 0 o (8,64):(64,1)') end)\n"
	"try(3, function() return axe.layout('S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp') end)\n"
	"try(4, function() return lego.GroupBy({6,6}, lego.OrderBy(lego.RegP({2,2},{1,0}), lego.GenP({3,3}, 'antidiagonal'))) end)\n"
	"try(5, function() local i, j = uop.var('i', 0, 15), uop.var('j', 0, 3); return i * 4 + j % 3 end)\n"
	"try(6, function() return tensor.arange(16):reshape{4, 4} end)\n"
	"try(7, function() return tensor.param('x', {4, 4}) end)\n"
	"try(8, function() return kernel.lower(P[7]:softmax(1), 'out') end)\n"
	"try(9, function() return P[8]:schedule() end)\n"
	"try(10, function() return cute.mma_atom('SM80_16x8x16_F32F16F16F32_TN') end)\n"
	"try(11, function() return cute.swizzle(3, 4, 3) end)\n"
	"try(12, function() return tensor.rand({4, 4}, {seed = 1}) end)\n"
	"try(13, function()\n"
	"  local tk = kernel.new{grid = {2}, block = {32}}\n"
	"  local A = tk:input('A', 'float32', {64})\n"
	"  local B = tk:output('B', 'float32', {64})\n"
	"  local t = tk:shared('t', 'float32', {32})\n"
	"  tk:stage('copy', function() t[{tk.tx}] = A[{tk.bx * 32 + tk.tx}]; kernel.barrier(); B[{tk.bx * 32 + tk.tx}] = t[{31 - tk.tx}] end)\n"
	"  return tk end)\n"
	"try(14, function() return cute._ end)\n"
	"try(15, function() return viz.graph{nodes = {'a', 'b'}, edges = {{'a', 'b'}}} end)\n"
	"try(16, function() return axe.iter(4, 2, 'lane') end)\n"
	"try(17, function() return lego.Row(4, 4) end)\n"
	"try(18, function() return kernel.lower(P[7]:matmul(P[7]), 'c'):schedule() end)\n"
	"try(19, function() return tensor.param('y', {8}, 'float16') end)\n"
	"try(20, function() return cute.tuple('((2,3),4)') end)\n"
	"try(21, function()\n"
	"  local d = dist.new(2)\n"
	"  d:tensor('x', 'float32', {4, 8}, axe.dtensor({4, 8}, {{'gpuid', 2}}, {'S(1)'}))\n"
	"  d:tensor('y', 'float32', {4, 8}, 'S[(4,8):(8,1)] + R[2:1@gpuid]')\n"
	"  d:redistribute('x', 'y')\n"
	"  return d end)\n"
	"local function methcall(v, k, ...)\n"
	"  local f = v[k]\n"
	"  if type(f) ~= 'function' then return f end\n"
	"  return f(v, ...)\n"
	"end\n"
	"return FN, FNV, METH, OPS, CB, P, methcall\n";

/* Registry references to the prelude's tables. */
static int rFN, rFNV, rMETH, rOPS, rCB, rPOOL, rMCALL;
static int nFN, nMETH, nOPS, nCB;

/* Tokens of every notation the API reads, for notation-like strings. */
static const char *const tokens[] = {
	"(", ")", ",", ":", "_", "_4", "0", "1", "2", "3", "4", "8", "16", "32", "64", "-1", "-2",
	"9223372036854775807", "-9223372036854775808", "4611686018427387904", "99999999999999999999",
	" ", "Sw<", ">", " o ", "S[", "R[", "]", "@", "lane", "warp", "reg", "m", "gpuid", "P", "F",
	"+", "-", "(4,8)", "(2,2):(1,2)", "8:1", "((2,2),4):((1,4),2)", "float32", "float16", "int8",
	"int32", "bfloat16", "bool", "uint8", "float64", "block.x", "thread.x", "threadIdx.x", "global",
	"shared", "local", "register", "c", "cuda", "opencl", "triton", "python", "lua", "infix", "bank",
	"value", "thread", "device", "none", "antidiagonal", "reverse", "morton", "identity", "inv",
	"apply", "partial", "x", "y", "SM80_16x8x16_F32F16F16F32_TN", "SM90_64x8x16_F32F16F16_SS", "GLOBAL", "LOCAL", "REDUCE",
	"UPCAST", "UNROLL", "L", "R", "S(0)", "Shard(1)", "cta", "warpgroup", "#ff0000", "#abc", "i",
	"j", "x", "out", "%s", "%n", "\n", "\t", "\xff", "\xc3\xa9", "..", "/", "*", "%", "<<", ">>",
};
enum { NTOK = sizeof tokens / sizeof tokens[0] };

/* Option keys the bindings read (grep getfield in repl/), minus the caps. */
static const char *const optkeys[] = {
	"D", "O", "R", "atol", "axe", "axis", "bind", "chain", "checks", "color", "compact", "dashed",
	"diff", "dims", "draw", "dtype", "edges", "extent", "format", "from", "impl", "k", "labels",
	"layout", "m", "max_rows", "max_cols", "modes", "n", "name", "nodes", "op", "opts", "perm",
	"raw", "replicas", "role", "rtol", "scheme", "scope", "seed", "shape", "show", "stride", "title",
	"to", "trials", "tv", "type", "vars", "warps", "grid", "block", "elem_bytes", "dims_", "1",
};
enum { NOPT = sizeof optkeys / sizeof optkeys[0] };

static const lua_Integer ints[] = {
	0, 1, -1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 63, 64, 127, 128, 255, 256, 1023, 1024, 4096, 65535,
	65536, (lua_Integer)1 << 20, INT32_MAX, INT32_MIN, (lua_Integer)1 << 31, (lua_Integer)1 << 32,
	(lua_Integer)1 << 53, (lua_Integer)1 << 61, (lua_Integer)1 << 62, ((lua_Integer)1 << 62) - 1,
	LUA_MAXINTEGER, LUA_MININTEGER, -((lua_Integer)1 << 62), -((lua_Integer)1 << 31), 3037000500,
};
enum { NINT = sizeof ints / sizeof ints[0] };

static lua_State *L;
static int keep_state;

static void push_arg(Rd *r, int depth);

static void
rawget_ref(int ref, lua_Integer i)
{
	lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
	lua_rawgeti(L, -1, i);
	lua_remove(L, -2);
}

static void
push_float(Rd *r)
{
	static const double f[] = { 0.5, -0.5, 1.5, 2.0, -0.0, 1e300, -1e300, 1e-300, 9.2233720368547758e18,
	                            -9.2233720368547758e18, 4.5e15, 3.0, 64.0 };
	unsigned k = u8(r) % 16;

	if (k == 13)
		lua_pushnumber(L, NAN);
	else if (k == 14)
		lua_pushnumber(L, INFINITY);
	else if (k == 15)
		lua_pushnumber(L, -INFINITY);
	else
		lua_pushnumber(L, f[k]);
}

static void
push_notation(Rd *r)
{
	luaL_Buffer b;
	unsigned n = u8(r) % 16, i;

	luaL_buffinit(L, &b);
	for (i = 0; i < n; i++)
		luaL_addstring(&b, tokens[u8(r) % NTOK]);
	luaL_pushresult(&b);
}

static void
push_raw(Rd *r)
{
	char s[32];
	unsigned n = u8(r) % sizeof s, i;

	for (i = 0; i < n; i++)
		s[i] = (char)u8(r);
	lua_pushlstring(L, s, n);
}

static void
push_small(Rd *r)
{
	lua_pushinteger(L, (lua_Integer)(u8(r) % 40) - 6);
}

/* Whole layouts and tilers as users write them, for nested tables of them. */
static const char *const layouts[] = {
	"(8,8):(8,1)", "(2,2):(1,2)", "4:1", "((2,2),4):((1,4),2)", "(4,8)", "9:1", "(2,3):(3,1)", "_",
	"8:2", "(4,(2,2)):(2,(1,8))", "1:0", "(_,4)",
};
enum { NLAYOUT = sizeof layouts / sizeof layouts[0] };

/* A nested table of integers, layouts, `_` and pooled values: shapes, tilers, coordinates. */
static void
push_nested(Rd *r, int depth)
{
	unsigned n = u8(r) % 5, i;

	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		switch (u8(r) % 8) {
		case 0: case 1: case 2: push_small(r); break;
		case 3: case 4: lua_pushstring(L, layouts[u8(r) % NLAYOUT]); break;
		case 5: rawget_ref(rPOOL, 14); break;
		case 6:
			if (depth < MAXDEPTH)
				push_nested(r, depth + 1);
			else
				push_small(r);
			break;
		default: rawget_ref(rPOOL, u8(r) % POOL + 1); break;
		}
		lua_rawseti(L, -2, i + 1);
	}
}

static void
push_arg(Rd *r, int depth)
{
	unsigned k = u8(r) % 20, n, i;

	if (depth > MAXDEPTH && (k == 8 || k == 9 || k == 12 || k == 13))
		k = 2;
	switch (k) {
	case 0: lua_pushnil(L); break;
	case 1: lua_pushboolean(L, u8(r) & 1); break;
	case 2: case 3: push_small(r); break;
	case 4: lua_pushinteger(L, ints[u8(r) % NINT]); break;
	case 5: push_float(r); break;
	case 6: case 7: push_notation(r); break;
	case 8:   /* a table of small integers, maybe nested once */
		n = u8(r) % 6;
		lua_createtable(L, (int)n, 0);
		for (i = 0; i < n; i++) {
			if (u8(r) % 5 == 0 && depth < MAXDEPTH)
				push_arg(r, depth + 1);
			else
				push_small(r);
			lua_rawseti(L, -2, i + 1);
		}
		break;
	case 9:   /* a table of anything */
		n = u8(r) % 4;
		lua_createtable(L, (int)n, 0);
		for (i = 0; i < n; i++) {
			push_arg(r, depth + 1);
			lua_rawseti(L, -2, i + 1);
		}
		break;
	case 10: case 11:
		rawget_ref(rPOOL, u8(r) % POOL + 1);
		break;
	case 12:
		push_nested(r, depth);
		break;
	case 13:  /* an options table */
		n = u8(r) % 4;
		lua_createtable(L, 0, (int)n);
		for (i = 0; i < n; i++) {
			unsigned o = u8(r) % NOPT;
			push_arg(r, depth + 1);
			if (strcmp(optkeys[o], "1") == 0)   /* a positional option */
				lua_rawseti(L, -2, 1);
			else
				lua_setfield(L, -2, optkeys[o]);
		}
		break;
	case 14:  /* userdata of no kind the API knows, or a light one */
		if (u8(r) & 1) {
			lua_newuserdatauv(L, 16, 1);
			luaL_setmetatable(L, "fuzz.Foreign");
		} else {
			lua_pushlightuserdata(L, (void *)&keep_state);
		}
		break;
	case 15:
		rawget_ref(rCB, u8(r) % nCB + 1);
		break;
	case 16:  /* a table that holds itself */
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_rawseti(L, -2, 1);
		lua_pushvalue(L, -1);
		lua_setfield(L, -2, "shape");
		break;
	case 17:  /* a table whose metamethods lie or raise */
		lua_newtable(L);
		push_small(r);
		lua_rawseti(L, -2, 1);
		luaL_getmetatable(L, (u8(r) & 1) ? "fuzz.Hostile" : "fuzz.Liar");
		lua_setmetatable(L, -2);
		break;
	case 18: push_raw(r); break;
	default:  /* the underscore */
		rawget_ref(rPOOL, 14);
		break;
	}
}

/* Put the call's results into the pool: at slot (cursor) for the first, the next for the second. */
static void
keep_results(int base, unsigned *cursor)
{
	int top = lua_gettop(L), i;

	for (i = base; i <= top && i < base + 2; i++) {
		if (lua_isnil(L, i))
			continue;
		lua_rawgeti(L, LUA_REGISTRYINDEX, rPOOL);
		lua_pushvalue(L, i);
		lua_rawseti(L, -2, (lua_Integer)(*cursor % POOL) + 1);
		lua_pop(L, 1);
		(*cursor)++;
	}
}

static void
describe(const char *what, int base)
{
	int i;

	if (!trace)
		return;
	/* no tostring here: a value's __tostring may raise, and this runs outside pcall */
	fprintf(stderr, "%s(", what);
	for (i = base; i <= lua_gettop(L); i++) {
		int t = lua_type(L, i);
		fprintf(stderr, "%s", i > base ? ", " : "");
		if (t == LUA_TSTRING)
			fprintf(stderr, "%.60s", lua_tostring(L, i));
		else if (t == LUA_TNUMBER && lua_isinteger(L, i))
			fprintf(stderr, "%lld", (long long)lua_tointeger(L, i));
		else if (t == LUA_TNUMBER)
			fprintf(stderr, "%g", lua_tonumber(L, i));
		else
			fprintf(stderr, "<%s>", luaL_typename(L, i));
	}
	fprintf(stderr, ")\n");
}

/* Call the function at base with the values above it; errors must be strings. */
static void
call(int base, unsigned *cursor, const char *what)
{
	int st, nargs = lua_gettop(L) - base;

	st = lua_pcall(L, nargs, 2, 0);
	if (st == LUA_OK) {
		keep_results(base, cursor);
	} else {
		FUZZ_CHECK(st != LUA_ERRERR, "%s: error in the error handler", what);
		FUZZ_CHECK(lua_type(L, -1) == LUA_TSTRING || (st == LUA_ERRMEM),
		           "%s raised a %s, not a message", what, luaL_typename(L, -1));
		if (trace)
			fprintf(stderr, "  -> error: %s\n", lua_tostring(L, -1));
	}
	lua_settop(L, base - 1);
}

static int
foreign_index(lua_State *L1)
{
	return luaL_error(L1, "fuzz: foreign userdata");
}

static int
hostile(lua_State *L1)
{
	return luaL_error(L1, "fuzz: hostile metamethod");
}

static int
liar_len(lua_State *L1)
{
	lua_pushinteger(L1, LUA_MAXINTEGER);
	return 1;
}

static int
liar_index(lua_State *L1)
{
	lua_pushvalue(L1, 1);   /* every element is the table itself */
	return 1;
}

static int
ref_of(int idx)
{
	lua_pushvalue(L, idx);
	return luaL_ref(L, LUA_REGISTRYINDEX);
}

static void
open_state(void)
{
	L = fuzz_newstate();
	luaL_newmetatable(L, "fuzz.Foreign");
	lua_pushcfunction(L, foreign_index);
	lua_setfield(L, -2, "__index");
	luaL_newmetatable(L, "fuzz.Hostile");
	lua_pushcfunction(L, hostile);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, hostile);
	lua_setfield(L, -2, "__len");
	lua_pushcfunction(L, hostile);
	lua_setfield(L, -2, "__newindex");
	luaL_newmetatable(L, "fuzz.Liar");
	lua_pushcfunction(L, liar_len);
	lua_setfield(L, -2, "__len");
	lua_pushcfunction(L, liar_index);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 3);
	/* the library's own caps, low: a fuzzer input must finish in well under a second */
	if (luaL_dostring(L, "tensor.options{mem_limit = 64 << 20}\n"
	                     "if tessel.limits then tessel.limits{tensor_bytes = 64 << 20, steps = 2000000,"
	                     " check_elems = 1 << 20, pixels = 1 << 20, code_bytes = 1 << 20} end") != LUA_OK) {
		fprintf(stderr, "fuzz: setting limits: %s\n", lua_tostring(L, -1));
		abort();
	}
	if (luaL_loadstring(L, prelude) != LUA_OK || lua_pcall(L, 0, 7, 0) != LUA_OK) {
		fprintf(stderr, "fuzz: prelude: %s\n", lua_tostring(L, -1));
		abort();
	}
	nFN = (int)luaL_len(L, 1);
	nMETH = (int)luaL_len(L, 3);
	nOPS = (int)luaL_len(L, 4);
	nCB = (int)luaL_len(L, 5);
	rFN = ref_of(1);
	rFNV = ref_of(2);
	rMETH = ref_of(3);
	rOPS = ref_of(4);
	rCB = ref_of(5);
	rPOOL = ref_of(6);
	rMCALL = ref_of(7);
	lua_settop(L, 0);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = open("/dev/null", O_WRONLY);
	const char *t = getenv("FUZZ_TRACE");

	(void)argc;
	(void)argv;
	/* show, help and print_layout write to stdout; libFuzzer reports on stderr */
	if (fd >= 0) {
		fflush(stdout);
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
	keep_state = getenv("FUZZ_KEEP_STATE") && atoi(getenv("FUZZ_KEEP_STATE"));
	trace = t && atoi(t);
	return 0;
}

static int
one(const uint8_t *data, size_t size)
{
	Rd r = { data, size };
	unsigned cursor = 21, steps = 0, n, i, k;   /* slots 1 to 21 hold the prelude's values */
	int base;
	const char *name;

	if (!L)
		open_state();
	fuzz_arm(L, LUA_BUDGET);
	while (r.n > 0 && steps++ < MAXSTEPS) {
		unsigned op = u8(&r) % 8;
		base = lua_gettop(L) + 1;
		if (op < 4) {                       /* a module function */
			k = u16(&r) % (unsigned)nFN + 1;
			rawget_ref(rFN, k);
			name = lua_tostring(L, -1);
			lua_pop(L, 1);
			rawget_ref(rFNV, k);
			n = u8(&r) % (MAXARGS + 1);
			for (i = 0; i < n; i++)
				push_arg(&r, 0);
			describe(name, base + 1);
			call(base, &cursor, name);
		} else if (op < 7) {                /* v:name(args) on a pooled value */
			lua_rawgeti(L, LUA_REGISTRYINDEX, rMCALL);
			rawget_ref(rPOOL, u8(&r) % POOL + 1);
			rawget_ref(rMETH, u16(&r) % (unsigned)nMETH + 1);
			name = lua_tostring(L, -1);
			n = u8(&r) % MAXARGS;
			for (i = 0; i < n; i++)
				push_arg(&r, 0);
			describe(name, base + 1);
			call(base, &cursor, name);
		} else {                            /* an operator */
			rawget_ref(rOPS, u8(&r) % (unsigned)nOPS + 1);
			for (i = 0; i < 3; i++)
				push_arg(&r, 0);
			describe("op", base + 1);
			call(base, &cursor, "operator");
		}
		FUZZ_CHECK(lua_gettop(L) == base - 1, "the stack grew to %d", lua_gettop(L));
	}
	lua_sethook(L, NULL, 0, 0);
	if (!keep_state) {
		lua_close(L);   /* every __gc runs: a double free or a dangling anchor shows here */
		L = NULL;
	} else {
		lua_gc(L, LUA_GCCOLLECT);
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_scribble(512 << 10);
	return one(data, size);
}

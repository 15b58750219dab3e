/* lua_kernel_run.c - k:run and k:counts (the interpreter, backends c and opencl), k:source and k:export. */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "../backends/backend.h"
#include "../interp/kernel/kernel.h"
#include "help.h"
#include "lua_kernel.h"
#include "tessel.h"

#define RUNBOX  "kernel.RunBuffers"
#define JITCACHE "tessel.jit.cache"         /* registry: this Lua state's compiled kernels (backend c) */
#define JITMETA  "kernel.JitCache"          /* its metatable */
#define CLSESSION "tessel.opencl.Session"   /* the session's metatable */
#define CLKEY "tessel.opencl.session"       /* registry: this Lua state's OpenCL session (backend opencl) */

/* The buffers of a run, freed by __gc if a Lua error cuts the run short. */
typedef struct RunBox {
	TBuf *b;
	int n;
} RunBox;

static int
run_gc(lua_State *L)
{
	RunBox *r = luaL_checkudata(L, 1, RUNBOX);
	int i;

	for (i = 0; r->b && i < r->n; i++)
		tbuf_free(&r->b[i]);
	free(r->b);
	r->b = NULL;
	return 0;
}

static int
numel(const KBuf *b)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < b->ndim; i++)
		n *= b->shape[i];
	return (int)(n < INT32_MAX ? n : INT32_MAX);
}

/* Fill the inputs: bindings by name (tensors, or nested tables through
** tensor.from), else the node a lowered kernel realizes, else (random = 1)
** seeded random values for counting. */
static void
bind_inputs(lua_State *L, LKernel *x, int binds, RunBox *r, int random)
{
	int i;

	for (i = 0; i < x->k->nbuf; i++) {
		const KBuf *kb = &x->k->buf[i];
		TBuf *t = &r->b[i];
		Err e = { "" };

		if (kb->role != KB_INPUT)
			continue;
		if (binds && lua_getfield(L, binds, kb->name) != LUA_TNIL) {
			int vi = lua_gettop(L);

			if (lua_type(L, vi) == LUA_TTABLE) {
				lua_getglobal(L, "tensor");
				if (lua_type(L, -1) != LUA_TTABLE)
					luaL_error(L, "k:run: the tensor table is not loaded");
				lua_getfield(L, -1, "from");
				lua_pushvalue(L, vi);
				lua_pushstring(L, dtype_name(kb->dtype));
				lua_call(L, 2, 1);
				lua_replace(L, vi);
				lua_pop(L, 1);
			}
			if (!tessel_testtensor(L, vi))
				luaL_error(L, "k:run: the binding of %s is a %s, not a tensor", kb->name, luaL_typename(L, vi));
			tessel_realize(L, vi, 0, t);
			lua_pop(L, 1);
		} else {
			if (binds)
				lua_pop(L, 1);
			if (kb->tensor && kb->tensor->op != OP_PARAM) {
				if (tensor_realize(kb->tensor, NULL, t, &e) < 0)
					lk_err(L, &e);
			} else if (random) {
				int64_t n = numel(kb);

				t->dtype = kb->dtype;
				t->ndim = kb->ndim;
				memcpy(t->shape, kb->shape, kb->ndim * sizeof *kb->shape);
				t->numel = n;
				t->axis = -1;
				t->device = NULL;
				if (!(t->data = malloc((size_t)n * dtype_bytes(kb->dtype) + 1)))
					luaL_error(L, "k:counts: out of memory");
				/* as exports draw them (harness.c) */
				backend_draw(x->k, i, t);
			} else
				luaL_error(L, "k:run: input %s is not bound (k:run{%s = tensor})", kb->name, kb->name);
		}
		if (t->dtype != kb->dtype)
			luaL_error(L, "k:run: %s is a %s buffer, its binding a %s tensor (cast it)", kb->name,
			           dtype_name(kb->dtype), dtype_name(t->dtype));
		if (t->numel != numel(kb))
			luaL_error(L, "k:run: %s has %d elements, its binding %I", kb->name, numel(kb), (lua_Integer)t->numel);
		memcpy(t->shape, kb->shape, kb->ndim * sizeof *kb->shape);
		t->ndim = kb->ndim;
	}
}

/* k:run's options; k:counts takes the first two */
static const TesselOpt run_keys[] = {
	{ "checks", "boolean" }, { "max_steps", "integer" }, { "backend", "string" }, { "compare", "boolean" },
	{ "fast", "boolean" }, { "cc", "string" }, { "flags", "table" }, { "stats", "table" }, { NULL, NULL }
};
static const TesselOpt counts_keys[] = { { "checks", "boolean" }, { "max_steps", "integer" }, { NULL, NULL } };

/* The kernel's inputs, "A, B", pushed. */
static const char *
push_inputs(lua_State *L, const Kernel *k)
{
	luaL_Buffer b;
	int i, n = 0;

	luaL_buffinit(L, &b);
	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_INPUT) {
			if (n++)
				luaL_addstring(&b, ", ");
			luaL_addstring(&b, k->buf[i].name);
		}
	if (!n)
		luaL_addstring(&b, "none");
	luaL_pushresult(&b);
	return lua_tostring(L, -1);
}

void
tessel_checkbinds(lua_State *L, int idx, const Kernel *k, const char *call, const TesselOpt *opts, int mixed)
{
	idx = lua_absindex(L, idx);
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		const char *name = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
		int b = name ? kernel_find_buffer(k, name) : -1;

		if ((b >= 0 && k->buf[b].role == KB_INPUT) || (mixed && tessel_isopt(L, call, opts))) {
			lua_pop(L, 1);
			continue;
		}
		if (!name) {
			const char *key = luaL_tolstring(L, -2, NULL);

			luaL_error(L, "%s: the bindings are {input = tensor}, not a key [%s] (the inputs are: %s)", call,
			           key, push_inputs(L, k));
		}
		if (b >= 0)
			luaL_error(L, "%s: '%s' is %s of the kernel, not an input (the inputs are: %s)", call, name,
			           k->buf[b].role == KB_OUTPUT ? "an output" : "a temporary buffer", push_inputs(L, k));
		if (mixed)
			luaL_error(L, "%s: '%s' is neither an input of the kernel (%s) nor an option (%s)", call, name,
			           push_inputs(L, k), tessel_pushoptnames(L, opts));
		if (tessel_isopt(L, call, opts))
			luaL_error(L, "%s: '%s' is an option, not an input of the kernel (%s): options go in a table "
			           "after the bindings, %s(bindings, {%s = ...})", call, name, push_inputs(L, k), call, name);
		luaL_error(L, "%s: '%s' is not an input of the kernel (the inputs are: %s)", call, name,
		           push_inputs(L, k));
	}
}

static void
run_opts(lua_State *L, int i, KRunOpts *o)
{
	memset(o, 0, sizeof *o);
	o->checks = 1;
	if (lua_type(L, i) != LUA_TTABLE)
		return;
	if (lua_getfield(L, i, "checks") != LUA_TNIL)
		o->checks = lua_toboolean(L, -1);
	if (lua_getfield(L, i, "max_steps") != LUA_TNIL)
		o->max_steps = lua_tointeger(L, -1);
	lua_pop(L, 2);
	if (o->max_steps < 0)
		luaL_error(L, "k:run: max_steps = %I; it is >= 1 (0 or absent: the steps limit)", (lua_Integer)o->max_steps);
}

static int
jit_gc(lua_State *L)
{
	BJitCache **p = luaL_checkudata(L, 1, JITMETA);

	backend_jit_cache_free(*p);
	*p = NULL;
	return 0;
}

/* The Lua state's cache of compiled kernels, made on first use (freed with the state). */
static BJitCache *
jit_cache(lua_State *L)
{
	BJitCache **p;

	if (lua_getfield(L, LUA_REGISTRYINDEX, JITCACHE) == LUA_TUSERDATA) {
		p = lua_touserdata(L, -1);
		lua_pop(L, 1);
		if (*p)
			return *p;
	} else
		lua_pop(L, 1);
	p = lua_newuserdatauv(L, sizeof *p, 0);
	*p = NULL;
	luaL_setmetatable(L, JITMETA);
	if (!(*p = backend_jit_cache_new()))
		luaL_error(L, "k:run: out of memory");
	lua_setfield(L, LUA_REGISTRYINDEX, JITCACHE);
	return *p;
}

static int
cl_gc(lua_State *L)
{
	BClSession **p = luaL_checkudata(L, 1, CLSESSION);

	backend_cl_free(*p);
	*p = NULL;
	return 0;
}

/* The Lua state's OpenCL session, made on first use (freed with the state). */
static BClSession *
cl_session(lua_State *L)
{
	BClSession **p;

	if (lua_getfield(L, LUA_REGISTRYINDEX, CLKEY) == LUA_TUSERDATA) {
		p = lua_touserdata(L, -1);
		lua_pop(L, 1);
		if (*p)
			return *p;
	} else
		lua_pop(L, 1);
	p = lua_newuserdatauv(L, sizeof *p, 0);
	*p = NULL;
	luaL_setmetatable(L, CLSESSION);
	if (!(*p = backend_cl_new()))
		luaL_error(L, "k:run: out of memory");
	lua_setfield(L, LUA_REGISTRYINDEX, CLKEY);
	return *p;
}

/* The compiled paths' options: {backend = "c" | "opencl", compare =, flags = {...}, cc =, stats = {}} */
typedef struct JitArgs {
	int backend;         /* 0 the interpreter, 1 c, 2 opencl */
	BJitOpts o;
	BJitStats st;
	BClOpts cl;
	BClStats clst;
	const char *flags[33];
	int stats;           /* the index of the table to fill, or 0 */
} JitArgs;

static int
jit_opts(lua_State *L, int i, JitArgs *j)
{
	const char *b;
	int n, k;

	memset(j, 0, sizeof *j);
	if (lua_type(L, i) != LUA_TTABLE)
		return 0;
	b = lua_getfield(L, i, "backend") == LUA_TNIL ? "interp" : lua_tostring(L, -1);
	lua_pop(L, 1);   /* the table keeps the string */
	if (strcmp(b, "c") != 0 && strcmp(b, "interp") != 0 && strcmp(b, "opencl") != 0)
		luaL_error(L, "k:run: unknown backend %s (\"interp\", the default, \"c\" or \"opencl\")", b);
	if (strcmp(b, "interp") == 0) {
		static const char *const compiled[] = { "compare", "fast", "cc", "flags", "stats" };

		for (k = 0; k < 5; k++)
			if (lua_getfield(L, i, compiled[k]) != LUA_TNIL)
				luaL_error(L, "k:run: %s is an option of the compiled backends (backend = \"c\"%s), not of "
				           "the interpreter", compiled[k], k == 0 || k == 4 ? " or \"opencl\"" : "");
			else
				lua_pop(L, 1);
		return 0;
	}
	if (strcmp(b, "opencl") == 0) {
		j->backend = 2;
		if (lua_getfield(L, i, "compare") != LUA_TNIL)
			j->cl.no_check = !lua_toboolean(L, -1);
		if (lua_getfield(L, i, "flags") != LUA_TNIL || lua_getfield(L, i, "cc") != LUA_TNIL
		|| lua_getfield(L, i, "fast") != LUA_TNIL)
			luaL_error(L, "k:run: flags, cc and fast are options of backend \"c\"");
		lua_pop(L, 4);
		if (lua_getfield(L, i, "stats") == LUA_TTABLE)
			j->stats = lua_absindex(L, i);
		lua_pop(L, 1);
		j->cl.stats = &j->clst;
		j->cl.session = cl_session(L);
		return 2;
	}
	j->backend = 1;
	if (lua_getfield(L, i, "fast") != LUA_TNIL)
		j->o.fast = lua_toboolean(L, -1);
	lua_pop(L, 1);
	if (lua_getfield(L, i, "compare") != LUA_TNIL)
		j->o.no_check = !lua_toboolean(L, -1);
	if (lua_getfield(L, i, "cc") != LUA_TNIL)
		j->o.cc = lua_tostring(L, -1);   /* the table keeps the string */
	lua_pop(L, 2);
	if (lua_getfield(L, i, "flags") == LUA_TTABLE) {
		tessel_checkseq(L, -1, "k:run: flags");
		n = (int)luaL_len(L, -1);
		if (n > 32)
			luaL_error(L, "k:run: at most 32 flags");
		for (k = 0; k < n; k++) {
			lua_geti(L, -1, k + 1);
			if (lua_type(L, -1) != LUA_TSTRING)
				luaL_error(L, "k:run: flags[%d] is a %s; flags are strings", k + 1, luaL_typename(L, -1));
			j->flags[k] = lua_tostring(L, -1);
			lua_pop(L, 1);   /* the table keeps the string */
		}
		j->o.flags = j->flags;
	}
	lua_pop(L, 1);
	if (lua_getfield(L, i, "stats") == LUA_TTABLE)
		j->stats = lua_absindex(L, i);
	lua_pop(L, 1);
	j->o.stats = &j->st;
	j->o.cache = jit_cache(L);
	return 1;
}

static RunBox *
run(lua_State *L, LKernel *x, int binds, KRunOpts *o, KCounts *c, int random, const JitArgs *jit)
{
	RunBox *r;
	Buf notes;
	Err e = { "" };

	buf_init(&notes);
	if (kernel_check(x->k, &notes, &e) < 0) {
		buf_free(&notes);
		lk_err(L, &e);
	}
	buf_free(&notes);
	r = lua_newuserdatauv(L, sizeof *r, 0);
	r->b = NULL;
	r->n = 0;
	luaL_setmetatable(L, RUNBOX);
	if (!(r->b = calloc(x->k->nbuf ? x->k->nbuf : 1, sizeof *r->b)))
		luaL_error(L, "k:run: out of memory");
	r->n = x->k->nbuf;
	bind_inputs(L, x, binds, r, random);
	if (jit && jit->backend == 2) {
		BClOpts co = jit->cl;

		co.interp = o;
		if (backend_cl_run(x->k, r->b, &co, &e) < 0)
			lk_err(L, &e);
	} else if (jit) {
		BJitOpts jo = jit->o;

		jo.interp = o;
		if (backend_jit_run(x->k, r->b, &jo, &e) < 0)
			lk_err(L, &e);
	} else if (kernel_run(x->k, o, r->b, c, &e) < 0)
		lk_err(L, &e);
	return r;
}

/* k:run([bindings] [, {checks =, max_steps =, backend =, ...}]) -> the outputs, as tensors */
static int
k_run(lua_State *L)
{
	LKernel *x = lk_checkk(L, 1);
	KRunOpts o;
	JitArgs j;
	RunBox *r;
	int i, n = 0, compiled;

	lua_settop(L, 3);
	if (!lua_isnil(L, 2) && lua_type(L, 2) != LUA_TTABLE)
		return luaL_typeerror(L, 2, "bindings table");
	/* k:run{backend = "c"}: options in the one table, when no input is named backend */
	if (lua_isnil(L, 3) && lua_type(L, 2) == LUA_TTABLE && kernel_find_buffer(x->k, "backend") < 0) {
		if (lua_getfield(L, 2, "backend") == LUA_TSTRING)
			lua_copy(L, 2, 3);
		lua_pop(L, 1);
	}
	if (!lua_isnil(L, 2))
		tessel_checkbinds(L, 2, x->k, "k:run", run_keys, lua_rawequal(L, 2, 3));
	if (!lua_rawequal(L, 2, 3))
		tessel_checkopts(L, 3, "k:run", run_keys);
	run_opts(L, 3, &o);
	compiled = jit_opts(L, 3, &j);
	r = run(L, x, lua_isnil(L, 2) ? 0 : 2, &o, NULL, 0, compiled ? &j : NULL);
	if (j.stats && j.backend == 2) {
		lua_getfield(L, j.stats, "stats");
		lua_pushnumber(L, j.clst.build_s);
		lua_setfield(L, -2, "build_s");
		lua_pushnumber(L, j.clst.run_s);
		lua_setfield(L, -2, "run_s");
		lua_pushnumber(L, j.clst.check_s);
		lua_setfield(L, -2, "check_s");
		lua_pushstring(L, j.clst.device);
		lua_setfield(L, -2, "device");
		lua_pop(L, 1);
	} else if (j.stats) {
		lua_getfield(L, j.stats, "stats");
		lua_pushboolean(L, j.st.cached);
		lua_setfield(L, -2, "cached");
		lua_pushnumber(L, j.st.compile_s);
		lua_setfield(L, -2, "compile_s");
		lua_pushnumber(L, j.st.run_s);
		lua_setfield(L, -2, "run_s");
		lua_pushnumber(L, j.st.check_s);
		lua_setfield(L, -2, "check_s");
		lua_pop(L, 1);
	}
	for (i = 0; i < x->k->nbuf; i++)
		if (x->k->buf[i].role == KB_OUTPUT) {
			tessel_pushtbuf(L, &r->b[i]);
			n++;
		}
	return n;
}

/* k:counts([bindings] [, {checks =, max_steps =}]) -> a table of counts (unbound inputs get seeded random values) */
/* the fields of k:counts(), in the order the table prints them */
static const struct { const char *name; size_t off; const char *what; } count_fields[] = {
#define F(name, what) { #name, offsetof(KCounts, name), what }
	F(global_loads, "loads from global memory"), F(global_stores, "stores to global memory"),
	F(global_sectors, "32-byte sectors of global memory"), F(shared_loads, "loads from shared memory"),
	F(shared_stores, "stores to shared memory"), F(shared_accesses, "shared-memory wavefronts"),
	F(bank_conflicts, "extra wavefronts from bank conflicts"), F(ops, "arithmetic operations"),
	F(barriers, "barriers"), F(shuffles, "warp shuffles"), F(mmas, "mma instructions"),
	F(ldmatrices, "ldmatrix instructions"), F(cp_asyncs, "cp.async copies"), F(wgmmas, "wgmma instructions"),
	F(tmas, "TMA copies"), F(tma_bytes, "bytes by TMA"), F(atomics, "atomics"), F(fences, "fences"),
	F(blocks, "blocks"), F(threads, "threads"),
#undef F
};

/* k:counts() as an aligned table, one field a line, the zeros left out */
static int
counts_tostring(lua_State *L)
{
	Buf b;
	int i, any = 0;

	luaL_checktype(L, 1, LUA_TTABLE);
	buf_init(&b);
	for (i = 0; i < (int)(sizeof count_fields / sizeof *count_fields); i++) {
		lua_Integer v = (lua_getfield(L, 1, count_fields[i].name), lua_tointeger(L, -1));

		lua_pop(L, 1);
		if (v == 0)
			continue;
		emit(&b, "%s%-16s %12lld  %s", any++ ? "\n" : "", count_fields[i].name, (long long)v,
		     count_fields[i].what);
	}
	if (!any)
		emit(&b, "(nothing counted: every field is 0)");
	lua_pushlstring(L, b.s ? b.s : "", b.len);
	buf_free(&b);
	return 1;
}

static int
k_counts(lua_State *L)
{
	LKernel *x = lk_checkk(L, 1);
	KRunOpts o;
	KCounts c;
	int i;

	lua_settop(L, 3);
	if (!lua_isnil(L, 2) && lua_type(L, 2) != LUA_TTABLE)
		return luaL_typeerror(L, 2, "bindings table");
	if (!lua_isnil(L, 2))
		tessel_checkbinds(L, 2, x->k, "k:counts", counts_keys, 0);
	tessel_checkopts(L, 3, "k:counts", counts_keys);
	run_opts(L, 3, &o);
	o.counts = 1;
	memset(&c, 0, sizeof c);
	run(L, x, lua_isnil(L, 2) ? 0 : 2, &o, &c, 1, NULL);
	lua_createtable(L, 0, 20);
	for (i = 0; i < (int)(sizeof count_fields / sizeof *count_fields); i++) {
		lua_pushinteger(L, *(const int64_t *)((const char *)&c + count_fields[i].off));
		lua_setfield(L, -2, count_fields[i].name);
	}
	if (luaL_newmetatable(L, "tessel.counts")) {
		lua_pushcfunction(L, counts_tostring);
		lua_setfield(L, -2, "__tostring");
	}
	lua_setmetatable(L, -2);
	return 1;
}

/* k:source([dialect] [, {fast = true}]): the kernel as source text */
static const TesselOpt source_keys[] = {
	{ "fast", "boolean" }, { "num_warps", "integer" }, { "num_stages", "integer" }, { NULL, NULL }
};

static int
k_source(lua_State *L)
{
	LKernel *x = lk_checkk(L, 1);
	const char *d = luaL_optstring(L, 2, "c");
	BSourceOpts o = { 0 };
	Dialect dl;
	Buf b;
	Err e = { "" };

	if (dialect_parse(d, &dl) < 0)
		return luaL_error(L, "k:source: unknown dialect \"%s\" (c, cuda, opencl, triton)", d);
	if (tessel_checkopts(L, 3, "k:source", source_keys)) {
		lua_getfield(L, 3, "fast");
		o.fast = lua_toboolean(L, -1);
		lua_pop(L, 1);
		if (lua_getfield(L, 3, "num_warps") != LUA_TNIL
		&& ((o.num_warps = (int)lua_tointeger(L, -1)) < 1 || o.num_warps > 32 || (o.num_warps & (o.num_warps - 1))))
			return luaL_error(L, "k:source: num_warps = %I is not a power of two in [1, 32]", lua_tointeger(L, -1));
		if (lua_getfield(L, 3, "num_stages") != LUA_TNIL
		&& ((o.num_stages = (int)lua_tointeger(L, -1)) < 1 || o.num_stages > 8))
			return luaL_error(L, "k:source: num_stages = %I is not in [1, 8]", lua_tointeger(L, -1));
		lua_pop(L, 2);
		if ((o.num_warps || o.num_stages) && dl != D_TRITON)
			return luaL_error(L, "k:source: num_warps and num_stages are Triton's launch options, not %s's", d);
	}
	buf_init(&b);
	if (backend_source_opts(&b, x->k, dl, &o, &e) < 0) {
		buf_free(&b);
		return lk_err(L, &e);
	}
	lua_pushlstring(L, b.s ? b.s : "", b.len);
	buf_free(&b);
	return 1;
}

/* k:export(dialect, dir [, {inputs = {name = tensor}, reps =, warmup =, fast =}]) -> dir, files | nil, message */
static const TesselOpt export_keys[] = {
	{ "inputs", "table" }, { "reps", "integer" }, { "warmup", "integer" }, { "fast", "boolean" }, { NULL, NULL }
};

static int
k_export(lua_State *L)
{
	LKernel *x = lk_checkk(L, 1);
	const char *d = luaL_checkstring(L, 2), *dir = luaL_checkstring(L, 3);
	BExportOpts o;
	Dialect dl;
	RunBox *r;
	Buf files;
	Err e = { "" };
	int i, rc;

	memset(&o, 0, sizeof o);
	lua_settop(L, 4);
	if (dialect_parse(d, &dl) < 0 || (dl != D_C && dl != D_CUDA && dl != D_OPENCL && dl != D_TRITON))
		return luaL_error(L, "k:export: unknown dialect \"%s\" (c, cuda, opencl, triton)", d);
	if (tessel_checkopts(L, 4, "k:export", export_keys)) {
		lua_Integer v;

		if (lua_getfield(L, 4, "reps") != LUA_TNIL && ((v = lua_tointeger(L, -1)) < 1 || v > 1000000))
			return luaL_error(L, "k:export: reps = %I is not in [1, 1000000]", v);
		o.reps = (int)lua_tointeger(L, -1);
		if (lua_getfield(L, 4, "warmup") != LUA_TNIL && ((v = lua_tointeger(L, -1)) < 0 || v > 1000000))
			return luaL_error(L, "k:export: warmup = %I is not in [0, 1000000]", v);
		o.warmup = lua_isnil(L, -1) ? 0 : lua_tointeger(L, -1) == 0 ? -1 : (int)lua_tointeger(L, -1);
		lua_getfield(L, 4, "fast");
		o.fast = lua_toboolean(L, -1);
		lua_pop(L, 3);
		if (lua_getfield(L, 4, "inputs") == LUA_TTABLE)
			tessel_checkbinds(L, -1, x->k, "k:export: inputs", NULL, 0);
		lua_pop(L, 1);
	}
	/* bound inputs, anchored in a box the collector frees */
	r = lua_newuserdatauv(L, sizeof *r, 0);
	r->b = NULL;
	r->n = 0;
	luaL_setmetatable(L, RUNBOX);
	if (!(r->b = calloc(x->k->nbuf ? x->k->nbuf : 1, sizeof *r->b)))
		return luaL_error(L, "k:export: out of memory");
	r->n = x->k->nbuf;
	if (!lua_isnil(L, 4) && lua_getfield(L, 4, "inputs") == LUA_TTABLE) {
		int ti = lua_gettop(L);

		for (i = 0; i < x->k->nbuf; i++) {
			const KBuf *kb = &x->k->buf[i];

			if (kb->role != KB_INPUT || lua_getfield(L, ti, kb->name) == LUA_TNIL) {
				if (kb->role == KB_INPUT)
					lua_pop(L, 1);
				continue;
			}
			if (!tessel_testtensor(L, -1))
				return luaL_error(L, "k:export: inputs.%s is a %s, not a tensor", kb->name, luaL_typename(L, -1));
			tessel_realize(L, lua_gettop(L), 0, &r->b[i]);
			if (r->b[i].dtype != kb->dtype || r->b[i].numel != numel(kb))
				return luaL_error(L, "k:export: %s is a %s buffer of %d elements, its binding %s of %I "
				                  "(cast or reshape it)", kb->name, dtype_name(kb->dtype), numel(kb),
				                  dtype_name(r->b[i].dtype), (lua_Integer)r->b[i].numel);
			lua_pop(L, 1);
		}
	}
	o.inputs = r->b;
	buf_init(&files);
	o.files = &files;
	rc = backend_export(x->k, dl, dir, &o, &e);
	return tessel_export_result(L, rc, dir, &files, &e);
}

int
tessel_export_result(lua_State *L, int rc, const char *dir, Buf *files, const Err *e)
{
	int n = 0;

	if (rc < 0) {
		buf_free(files);
		if (rc != -2)
			return luaL_error(L, "%s", e->msg);
		lua_pushnil(L);
		lua_pushstring(L, e->msg);
		return 2;
	}
	lua_pushstring(L, dir);
	lua_newtable(L);
	for (const char *p = files->s, *nl; p && *p; p = nl + 1) {
		if (!(nl = strchr(p, '\n')))
			break;
		lua_pushlstring(L, p, (size_t)(nl - p));
		lua_rawseti(L, -2, ++n);
	}
	buf_free(files);
	return 2;
}

static const HelpReg kmeths[] = {
	{ "run", k_run,
	  "k:run([bindings] [, {checks = false, max_steps = N, backend = \"c\" | \"opencl\"}]): run on the CPU as\n"
	  "a GPU would; the outputs (k:run{backend = \"c\", ...} takes options and bindings in one table\n"
	  "when no input is named backend)\n"
	  "Bindings by input name: tensors or nested tables; a key that is not an input raises. Checks\n"
	  "(on by default) raise `race: ...`, `out of bounds: ...`, `uninitialized: ...` with block,\n"
	  "thread and element. max_steps: the instructions a run may take (default: tessel.limits steps).\n"
	  "backend = \"c\": k:source(\"c\") compiled by cc (cached per session) and run natively, after\n"
	  "the interpreter, whose outputs must agree bit for bit (compare = false skips both);\n"
	  "flags = {...} adds compiler flags, cc = \"clang\" picks the compiler, stats = {} gets\n"
	  "compile_s, run_s (the native kernel alone), check_s and cached. Compiler errors raise\n"
	  "with the compiler's message and the emitted line. fast = true: k:source(\"c\", {fast = true})\n"
	  "built with -O3 -ffast-math, compared within 1e-4 (float32) of max(|x|, 1).\n"
	  "backend = \"opencl\": k:source(\"opencl\") built and run through the OpenCL loader (PoCL on the\n"
	  "CPU: make deps), checked against the interpreter bit for bit (compare = false skips it);\n"
	  "stats = {} gets build_s, run_s, check_s and device. No loader or no platform raises." },
	{ "counts", k_counts,
	  "k:counts([bindings] [, {checks = false, max_steps = N}]): what a run costs on a GPU\n"
	  "A table, printed aligned, one field a line, zeros left out (c.ops reads one):\n"
	  "global_loads, global_stores, global_sectors (32-byte), shared_loads,\n"
	  "shared_stores, shared_accesses (wavefronts), bank_conflicts, ops, barriers, shuffles, mmas, ldmatrices, cp_asyncs, wgmmas,\n"
	  "tmas, tma_bytes, atomics, fences, blocks,\n"
	  "threads. Unbound inputs get seeded random values." },
	{ "source", k_source,
	  "k:source([dialect] [, {fast = true, num_warps =, num_stages =}]): the kernel as source code, a\n"
	  "string (dialect \"c\", the default). fast: float32 functions (exp2f) and max/min without NaN\n"
	  "rules, for -ffast-math builds; values then agree with k:run within a tolerance, not bit for bit.\n"
	  "num_warps, num_stages: Triton's launch options, on every launch (Triton's defaults: 4, 3).\n"
	  "C: one function per stage and tessel_kernel(void **bufs), which runs them in order;\n"
	  "parallel loops get OpenMP, values agree with k:run bit for bit (docs/export.md).\n"
	  "Refused, with the statement: barriers, shuffles, MMAs (C runs a block's threads one\n"
	  "after another), float16 and bfloat16.\n"
	  "cuda: a __global__ function per stage (bound loops are blockIdx/threadIdx, guarded where\n"
	  "shorter than their axis), __shared__ buffers, __syncthreads, __shfl_sync, mma.sync in\n"
	  "inline PTX, and tessel_launch(dbufs, stream) launching the stages in order.\n"
	  "opencl: a __kernel per stage and a table of launches; no shuffles, MMAs or halves.\n"
	  "triton: a Python module, one @triton.jit function per stage built on the tile view\n"
	  "(k:tile_ir()): block-bound or independent outer loops are tl.program_id, tiles are\n"
	  "tl.arange offsets with masks, reductions tl.sum/tl.max/tl.min; tessel_launch(bufs)\n"
	  "launches the stages. Close to the interpreter within a stated tolerance, not bit for\n"
	  "bit. Refused: barriers, shuffles, MMAs, thread-bound loops, shared and local buffers." },
	{ "export", k_export,
	  "k:export(dialect, dir [, {inputs = {name = tensor}, reps = 20, warmup = 3, fast = false}]): a\n"
	  "directory that `make -C dir` builds and runs: the source (c, cuda, opencl, triton), a host\n"
	  "program that draws\n"
	  "the inputs as tessel does (or reads the given ones), checks the outputs against the\n"
	  "interpreter's (saved as ref_*.bin) and prints the median time of repeated runs, and a\n"
	  "Makefile. Returns dir and the files written; nil and a message when a file cannot be\n"
	  "written (docs/export.md)." },
	{ NULL, NULL, NULL }
};

/* Into the kernel's methods. */
void
tessel_open_kernel_run(lua_State *L)
{
	luaL_newmetatable(L, RUNBOX);
	lua_pushcfunction(L, run_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	luaL_newmetatable(L, JITMETA);
	lua_pushcfunction(L, jit_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	luaL_newmetatable(L, CLSESSION);
	lua_pushcfunction(L, cl_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	luaL_getmetatable(L, KERNEL);
	lua_getfield(L, -1, "methods");
	help_setfuncs(L, kmeths, "kernel.Kernel:");
	lua_pop(L, 2);
}

/* lua_sched.c - schedules from Lua: k:schedule(), the primitives as TVM spells them, trace, undo, verify. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../backends/backend.h"
#include "../interp/sched/sched.h"
#include "../interp/sched/tile_ir.h"
#include "../layout/layout.h"
#include "../viz/viz.h"
#include "help.h"
#include "tessel.h"

#define SCHED "kernel.Schedule"

/* A schedule userdata; its uservalue 1 is the kernel userdata it started from
** (which keeps the tensor graph alive). */
typedef struct LSched {
	Schedule *s;
} LSched;

static int
s_gc(lua_State *L)
{
	LSched *x = luaL_checkudata(L, 1, SCHED);

	sched_free(x->s);
	x->s = NULL;
	return 0;
}

static Schedule *
checks(lua_State *L, int i)
{
	LSched *x = luaL_checkudata(L, i, SCHED);

	if (!x->s)
		luaL_error(L, "schedule: it was freed");
	return x->s;
}

static int
err(lua_State *L, const Err *e)
{
	return luaL_error(L, "%s", e->msg[0] ? e->msg : "schedule: out of memory");
}

/* k:schedule() or kernel.schedule(k) */
static int
l_schedule(lua_State *L)
{
	Kernel *k = tessel_checkkernel(L, 1);
	const UOp *graph = NULL;
	LSched *x;
	Err e = { "" };

	if (lua_getiuservalue(L, 1, 1) != LUA_TNIL)
		graph = tessel_testtensor(L, -1);
	lua_pop(L, 1);
	x = lua_newuserdatauv(L, sizeof *x, 1);
	x->s = NULL;
	luaL_setmetatable(L, SCHED);
	lua_pushvalue(L, 1);
	lua_setiuservalue(L, -2, 1);
	if (!(x->s = sched_new(k, graph, &e)))
		return err(L, &e);
	return 1;
}

/* s:kernel(): the scheduled kernel, as a kernel (a copy) */
static int
s_kernel(lua_State *L)
{
	Schedule *s = checks(L, 1);
	Err e = { "" };
	Kernel *k = kernel_clone(s->k, &e);

	if (!k)
		return err(L, &e);
	lua_getiuservalue(L, 1, 1);
	lua_getiuservalue(L, -1, 1);   /* the graph the original kernel keeps */
	tessel_pushkernel(L, k, lua_isnil(L, -1) ? 0 : -1);
	lua_replace(L, -3);
	lua_pop(L, 1);
	return 1;
}

/* Forward a method to the current kernel: s:run(...), s:counts(...), s:check() */
static int
forward(lua_State *L, const char *m)
{
	int n = lua_gettop(L);

	s_kernel(L);
	lua_replace(L, 1);
	lua_getfield(L, 1, m);
	lua_insert(L, 1);
	lua_call(L, n, LUA_MULTRET);
	return lua_gettop(L);
}

static int s_run(lua_State *L) { return forward(L, "run"); }
static int s_counts(lua_State *L) { return forward(L, "counts"); }
static int s_check(lua_State *L) { return forward(L, "check"); }
static int s_export(lua_State *L) { return forward(L, "export"); }

/* s:replay(text): the steps of a trace, applied to this schedule (no global is rebound) */
static int
s_replay(lua_State *L)
{
	size_t n;
	const char *text;

	checks(L, 1);
	text = luaL_checklstring(L, 2, &n);
	if (luaL_loadbufferx(L, text, n, "=trace", "t") != LUA_OK)
		return luaL_error(L, "s:replay: the trace does not parse: %s", lua_tostring(L, -1));
	/* the chunk's environment: s is this schedule, everything else the globals */
	lua_newtable(L);
	lua_pushvalue(L, 1);
	lua_setfield(L, -2, "s");
	lua_newtable(L);
	lua_pushglobaltable(L);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, -2);
	if (!lua_setupvalue(L, -2, 1))
		lua_pop(L, 1);
	lua_call(L, 0, 0);
	lua_settop(L, 1);
	return 1;
}

static int
s_text(lua_State *L, int color)
{
	tessel_pushkernel_text(L, checks(L, 1)->k, color);
	return 1;
}

static int s_tostring(lua_State *L) { return s_text(L, 0); }
/* show(s [, {color =}]): __show(s, opts, op) */
static int
s_show(lua_State *L)
{
	static const TesselOpt keys[] = { { "color", "boolean" }, { NULL, NULL } };

	tessel_checkopts(L, 2, luaL_optstring(L, 3, "show"), keys);
	return s_text(L, tessel_want_color(L, 2));
}

/* viz.render(s, path [, {diff = true}]): the loop tree; with diff, before and after the last step */
static const TesselOpt scene_keys[] = { { "diff", "boolean" }, { NULL, NULL } };

static int
s_scene(lua_State *L)
{
	Schedule *s = checks(L, 1);
	Scene *sc = tessel_toscene(L, 3);
	VizOpts o;
	Err e = { "" };
	int diff = 0;

	tessel_vizopts(L, 2, 3, &o, scene_keys);
	lua_getfield(L, 2, "diff");
	diff = lua_toboolean(L, -1);
	lua_pop(L, 1);
	if (diff) {
		const Kernel *before = s->nstep ? s->step[s->nstep - 1].before : s->orig;

		scene_note(&sc->title, "before and after %s", s->nstep ? s->step[s->nstep - 1].line : "(no step yet)");
		if (kernel_scene(sc, before, "before", &o, &e) < 0)
			return err(L, &e);
	}
	if (kernel_scene(sc, s->k, diff ? "after" : NULL, &o, &e) < 0)
		return err(L, &e);
	return 0;
}

/* s:diff(): the last step as a line diff of the pseudo-code */
static int
s_diff(lua_State *L)
{
	Schedule *s = checks(L, 1);
	Buf b;
	Err e = { "" };

	buf_init(&b);
	if (sched_diff(&b, s, &e) < 0) {
		buf_free(&b);
		return err(L, &e);
	}
	lua_pushstring(L, b.s ? b.s : "");
	buf_free(&b);
	return 1;
}

/* s:set_layout(buffer, layout): CuTe (notation or cute.Layout), swizzled, lego.Layout or axe.Layout */
static int
s_set_layout(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2);
	Layout tmp;
	Composed ctmp;
	SLayout l = { 0 };
	Err e = { "" };

	if (!(l.lego = tessel_testlego(L, 3)) && !(l.axe = tessel_testaxe(L, 3))
	&& !(l.swz = tessel_testcomposed(L, 3, &ctmp)))
		l.cute = tessel_checklayout(L, 3, &tmp);
	if (sched_set_layout(s, b, &l, &e) < 0)
		return err(L, &e);
	lua_settop(L, 1);
	return 1;
}

static int
s_trace(lua_State *L)
{
	Schedule *s = checks(L, 1);
	Buf b;

	buf_init(&b);
	sched_trace(&b, s);
	lua_pushstring(L, b.s ? b.s : "");
	buf_free(&b);
	return 1;
}

static int
s_undo(lua_State *L)
{
	Schedule *s = checks(L, 1);
	Err e = { "" };

	if (sched_undo(s, &e) < 0)
		return err(L, &e);
	lua_settop(L, 1);
	return 1;
}

/* s:verify{trials =, seed =, rtol =, atol =}: true and the report, or an error */
static const TesselOpt verify_keys[] = {
	{ "trials", "integer" }, { "seed", "integer" }, { "rtol", "number" }, { "atol", "number" }, { NULL, NULL }
};

static int
s_verify(lua_State *L)
{
	Schedule *s = checks(L, 1);
	SVerifyOpts o = { 0 };
	Buf report;
	Err e = { "" };
	int rc;
	lua_Integer v;

	if (tessel_checkopts(L, 2, "s:verify", verify_keys)) {
		if (lua_getfield(L, 2, "trials") != LUA_TNIL && ((v = lua_tointeger(L, -1)) < 1 || v > 1000))
			return luaL_error(L, "s:verify: trials = %I is not in [1, 1000]", v);
		o.trials = (int)lua_tointeger(L, -1);
		if (lua_getfield(L, 2, "seed") != LUA_TNIL && lua_tointeger(L, -1) < 0)
			return luaL_error(L, "s:verify: seed = %I is negative", lua_tointeger(L, -1));
		o.seed = (uint64_t)lua_tointeger(L, -1);
		o.rtol = lua_getfield(L, 2, "rtol") != LUA_TNIL ? lua_tonumber(L, -1) : 0;
		o.atol = lua_getfield(L, 2, "atol") != LUA_TNIL ? lua_tonumber(L, -1) : 0;
		lua_pop(L, 4);
		if (!(o.rtol >= 0 && o.rtol < 1) || !(o.atol >= 0 && o.atol < 1e30))
			return luaL_error(L, "s:verify: rtol and atol are >= 0 (rtol below 1)");
	}
	buf_init(&report);
	rc = sched_verify(s, &o, &report, &e);
	if (rc < 0) {
		buf_free(&report);
		return err(L, &e);
	}
	lua_pushboolean(L, 1);
	lua_pushstring(L, report.s ? report.s : "");
	buf_free(&report);
	return 2;
}

/* s:get_block(name): the stage's name, checked (TVM's BlockRV) */
static int
s_get_block(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *n = luaL_checkstring(L, 2);
	Err e = { "" };

	if (sched_stage(s->k, n, &e) < 0)
		return luaL_error(L, "get_block: %s", e.msg);
	lua_pushvalue(L, 2);
	return 1;
}

/* s:get_loops(block): the loop variables of the stage, outermost first */
static int
s_get_loops(lua_State *L)
{
	Schedule *s = checks(L, 1);
	Err e = { "" };
	int st = sched_stage(s->k, luaL_checkstring(L, 2), &e), n, i;
	UOp *l[256];

	if (st < 0)
		return luaL_error(L, "get_loops: %s", e.msg);
	n = sched_loops(s->k, st, l, 256);
	lua_createtable(L, n, 0);
	for (i = 0; i < n; i++) {
		lua_pushstring(L, krange_var(l[i]->src[0])->name);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* ---- the primitives: thin shims, names as TVM spells them ---- */

/* a loop: a variable name (a string, or a kernel value whose printed form is one), or NULL */
static const char *
test_loop(lua_State *L, int i)
{
	if (lua_type(L, i) == LUA_TSTRING)
		return lua_tostring(L, i);
	if (luaL_callmeta(L, i, "__tostring")) {
		if (lua_type(L, -1) == LUA_TSTRING) {
			lua_replace(L, i);
			return lua_tostring(L, i);
		}
		lua_pop(L, 1);
	}
	return NULL;
}

/* the loop argument i; a bad one raises as luaL_check* do ("bad argument #2 to 'bind'", self
** not counted in a method call) */
static const char *
loop_arg(lua_State *L, int i)
{
	const char *l = test_loop(L, i);

	if (!l)
		luaL_argerror(L, i, lua_pushfstring(L, "loop name expected, got %s; s:get_loops(block) lists them",
		                                    luaL_typename(L, i)));
	return l;
}

static int
done(lua_State *L, int rc, const Err *e)
{
	if (rc < 0)
		return err(L, e);
	lua_settop(L, 1);
	return 1;
}

/* s:split(block, loop, {nil, 32}) */
static int
s_split(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *l = loop_arg(L, 3);
	int64_t f[8];
	int n, i;
	Err e = { "" };

	luaL_checktype(L, 4, LUA_TTABLE);
	lua_settop(L, 4);
	/* {nil, 32} has length 2 with a hole: count up to the last integer */
	for (n = 8; n > 0; n--) {
		lua_geti(L, 4, n);
		i = !lua_isnil(L, -1);
		lua_pop(L, 1);
		if (i)
			break;
	}
	if (n < 2)
		return luaL_error(L, "split: the factors are a table of 2 to 8 entries, e.g. {nil, 32}");
	for (i = 0; i < n; i++) {
		lua_geti(L, 4, i + 1);
		if (lua_isnil(L, -1))
			f[i] = 0;
		else if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1)
			f[i] = lua_tointeger(L, -1);
		else if (lua_isinteger(L, -1))
			return luaL_error(L, "split: factor %d is %I; factors are >= 1 (nil for the one to infer)",
			                  i + 1, (LUAI_UACINT)lua_tointeger(L, -1));
		else
			return luaL_error(L, "split: factor %d is a %s, not an integer or nil", i + 1, luaL_typename(L, -1));
		lua_pop(L, 1);
	}
	return done(L, sched_split(s, b, l, f, n, &e), &e);
}

/* loops from the arguments from index i on (or one table of them) */
static int
loops_arg(lua_State *L, int i, const char **out, int max, const char *what)
{
	int n = 0, top = lua_gettop(L), j;

	if (lua_type(L, i) == LUA_TTABLE && top == i) {
		int m = (int)luaL_len(L, i);
		tessel_checkseq(L, i, what);

		for (j = 1; j <= m && n < max; j++) {
			lua_geti(L, i, j);
			if (!(out[n++] = test_loop(L, lua_gettop(L))))   /* the string stays on the stack */
				luaL_argerror(L, i, lua_pushfstring(L, "entry %d is a %s, not a loop name; "
				                                    "s:get_loops(block) lists them", j, luaL_typename(L, -1)));
		}
		return n;
	}
	for (j = i; j <= top && n < max; j++)
		out[n++] = loop_arg(L, j);
	return n;
}

/* s:fuse(block, i, j, ...) */
static int
s_fuse(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *l[16];
	int n = loops_arg(L, 3, l, 16, "fuse");
	Err e = { "" };

	return done(L, sched_fuse(s, b, l, n, &e), &e);
}

/* s:reorder(block, j, i, ...) */
static int
s_reorder(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *l[16];
	int n = loops_arg(L, 3, l, 16, "reorder");
	Err e = { "" };

	return done(L, sched_reorder(s, b, l, n, &e), &e);
}

/* s:bind(block, loop, "threadIdx.x") */
static int
s_bind(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *l = loop_arg(L, 3), *ax = luaL_checkstring(L, 4);
	Err e = { "" };

	return done(L, sched_bind(s, b, l, ax, &e), &e);
}

static int
annotate(lua_State *L, int (*f)(Schedule *, const char *, const char *, Err *))
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *l = loop_arg(L, 3);
	Err e = { "" };

	return done(L, f(s, b, l, &e), &e);
}

static int s_parallel(lua_State *L) { return annotate(L, sched_parallel); }
static int s_vectorize(lua_State *L) { return annotate(L, sched_vectorize); }
static int s_unroll(lua_State *L) { return annotate(L, sched_unroll); }

/* s:tile(block, x, y, fx, fy) */
static int
s_tile(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *x = loop_arg(L, 3), *y = loop_arg(L, 4);
	lua_Integer fx = luaL_checkinteger(L, 5), fy = luaL_checkinteger(L, 6);
	Err e = { "" };

	return done(L, sched_tile(s, b, x, y, fx, fy, &e), &e);
}

/* s:apply_opt(op, block, loop, arg | other_loop), s:apply_opt("NOLOCALS") */
static int
s_apply_opt(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *op = luaL_checkstring(L, 2), *b = "", *l = "", *other = NULL;
	int64_t arg = 0;
	Err e = { "" };

	if (!lua_isnoneornil(L, 3)) {
		b = luaL_checkstring(L, 3);
		l = loop_arg(L, 4);
		if (lua_type(L, 5) == LUA_TSTRING)
			other = lua_tostring(L, 5);
		else
			arg = luaL_optinteger(L, 5, 0);
	}
	return done(L, sched_apply_opt(s, op, b, l, arg, other, &e), &e);
}

/* s:thread_layout(block): the Axe layout the schedule induces on the stage */
static int
s_thread_layout(lua_State *L)
{
	Schedule *s = checks(L, 1);
	AxeLayout l;
	AxeShape sh;
	Err e = { "" };

	if (sched_thread_layout(s->k, luaL_checkstring(L, 2), &l, &sh, &e) < 0)
		return err(L, &e);
	tessel_pushaxe(L, &l, &sh);
	return 1;
}

/* placement and caches: thin shims over the C primitives */
static int
s_compute_inline(lua_State *L)
{
	Schedule *s = checks(L, 1);
	Err e = { "" };

	return done(L, sched_compute_inline(s, luaL_checkstring(L, 2), &e), &e);
}

static int
s_compute_at(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *c = luaL_checkstring(L, 3), *l = loop_arg(L, 4);
	Err e = { "" };

	return done(L, sched_compute_at(s, b, c, l, &e), &e);
}

static int
s_reverse_compute_at(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *p = luaL_checkstring(L, 3);
	const char *l = loop_arg(L, 4);
	Err e = { "" };

	return done(L, sched_reverse_compute_at(s, b, p, l, &e), &e);
}

static int
s_cache_read(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *buf = luaL_checkstring(L, 3), *sc = luaL_checkstring(L, 4);
	Err e = { "" };

	return done(L, sched_cache_read(s, b, buf, sc, &e), &e);
}

static int
s_cache_write(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *sc = luaL_checkstring(L, 3);
	Err e = { "" };

	return done(L, sched_cache_write(s, b, sc, &e), &e);
}

static int
s_set_scope(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *sc = luaL_checkstring(L, 3);
	Err e = { "" };

	return done(L, sched_set_scope(s, b, sc, &e), &e);
}

static int
s_decompose_reduction(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *l = loop_arg(L, 3);
	Err e = { "" };

	return done(L, sched_decompose_reduction(s, b, l, &e), &e);
}

static int
s_rfactor(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *l = loop_arg(L, 3);
	lua_Integer ax = luaL_optinteger(L, 4, 0);
	Err e = { "" };

	luaL_argcheck(L, ax >= 0 && ax <= T_MAXDIM, 4, "rfactor: factor_axis out of range");
	return done(L, sched_rfactor(s, b, l, (int)ax, &e), &e);
}

static int
s_reverse_compute_inline(lua_State *L)
{
	Schedule *s = checks(L, 1);
	Err e = { "" };

	return done(L, sched_reverse_compute_inline(s, luaL_checkstring(L, 2), &e), &e);
}

static const TesselOpt fusion_keys[] = { { "relax_casts", "boolean" }, { NULL, NULL } };

static void
fusion_opts(lua_State *L, int at, const char *what, FusionOpts *o)
{
	memset(o, 0, sizeof *o);
	if (tessel_checkopts(L, at, what, fusion_keys)) {
		o->relax_casts = lua_getfield(L, at, "relax_casts") != LUA_TNIL && lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
}

static int
s_rolling_update(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *l = luaL_checkstring(L, 3);
	FusionOpts o;
	Err e = { "" };

	fusion_opts(L, 4, "s:rolling_update", &o);
	return done(L, sched_rolling_update_opts(s, b, l, &o, &e), &e);
}

/* s:fission(block, loop [, {deep = true}]): returns s and the new loops' names */
static const TesselOpt fission_keys[] = { { "deep", "boolean" }, { NULL, NULL } };

static int
s_fission(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *l = luaL_checkstring(L, 3), *p, *q;
	int deep = 0, n = 0, rc;
	Buf made;
	Err e = { "" };

	if (tessel_checkopts(L, 4, "s:fission", fission_keys)) {
		deep = lua_getfield(L, 4, "deep") != LUA_TNIL && lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
	buf_init(&made);
	rc = sched_fission(s, b, l, deep, &made, &e);
	if (rc < 0) {
		buf_free(&made);
		return err(L, &e);
	}
	lua_settop(L, 1);
	lua_newtable(L);
	for (p = made.s; p && *p; p = q ? q + 2 : NULL) {
		q = strstr(p, ", ");
		lua_pushlstring(L, p, q ? (size_t)(q - p) : strlen(p));
		lua_rawseti(L, -2, ++n);
	}
	buf_free(&made);
	return 2;
}

static int
s_skip_masked(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *l = luaL_checkstring(L, 3);
	Err e = { "" };

	return done(L, sched_skip_masked(s, b, l, &e), &e);
}

static int
s_split_k_update(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *l = luaL_checkstring(L, 3);
	FusionOpts o;
	Err e = { "" };

	fusion_opts(L, 4, "s:split_k_update", &o);
	return done(L, sched_split_k_update_opts(s, b, l, &o, &e), &e);
}

static int
s_fuse_and_privatize(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *l = luaL_checkstring(L, 3);
	Err e = { "" };

	return done(L, sched_fuse_and_privatize(s, b, l, &e), &e);
}

static int
s_privatize_reduce(lua_State *L)
{
	Schedule *s = checks(L, 1);
	const char *b = luaL_checkstring(L, 2), *l = loop_arg(L, 3);
	lua_Integer n = luaL_checkinteger(L, 4);
	Err e = { "" };

	return done(L, sched_privatize_reduce(s, b, l, (int64_t)n, &e), &e);
}

static int
s_tile_ir(lua_State *L)
{
	Schedule *s = checks(L, 1);
	Buf b;
	Err e = { "" };

	buf_init(&b);
	if (tile_ir_print(&b, s->k, &e) < 0) {
		buf_free(&b);
		return luaL_error(L, "tile_ir: %s", e.msg);
	}
	lua_pushstring(L, b.s ? b.s : "");
	buf_free(&b);
	return 1;
}

/* ---- s:search{...}: a thin shim over backend_search (backends/search.c) ---- */

#define SEARCHBOX "kernel.SearchBox"
#define SEARCHJIT "kernel.SearchJit"   /* the metatable of ... */
#define SEARCHJITKEY "tessel.search.jit"   /* ... the registry's compiled candidates, one cache per Lua state */

/* What one s:search call owns while Lua may raise: freed by __gc on every path. */
typedef struct SearchBox {
	BSearchParam param[BSEARCH_MAXPARAM];
	int64_t *vals[BSEARCH_MAXPARAM];
	TBuf *in;             /* the bindings, per buffer of the schedule's kernel */
	int nin;
	const char *ops[16];
	BSearchResult r;
	int bar;              /* a progress bar is on stderr (to clear) */
} SearchBox;

static int
searchbox_gc(lua_State *L)
{
	SearchBox *x = luaL_checkudata(L, 1, SEARCHBOX);
	int i;

	for (i = 0; i < BSEARCH_MAXPARAM; i++) {
		free(x->vals[i]);
		x->vals[i] = NULL;
	}
	for (i = 0; x->in && i < x->nin; i++)
		tbuf_free(&x->in[i]);
	free(x->in);
	x->in = NULL;
	backend_search_free(&x->r);
	return 0;
}

static int
searchjit_gc(lua_State *L)
{
	BJitCache **p = luaL_checkudata(L, 1, SEARCHJIT);

	backend_jit_cache_free(*p);
	*p = NULL;
	return 0;
}

/* The state's cache of candidates compiled by searches: searching again recompiles nothing. */
static BJitCache *
search_cache(lua_State *L)
{
	BJitCache **p;

	if (lua_getfield(L, LUA_REGISTRYINDEX, SEARCHJITKEY) == LUA_TUSERDATA && *(p = lua_touserdata(L, -1))) {
		lua_pop(L, 1);
		return *p;
	}
	lua_pop(L, 1);
	p = lua_newuserdatauv(L, sizeof *p, 0);
	*p = NULL;
	if (luaL_newmetatable(L, SEARCHJIT)) {
		lua_pushcfunction(L, searchjit_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	if (!(*p = backend_jit_cache_new()))
		luaL_error(L, "s:search: out of memory");
	lua_setfield(L, LUA_REGISTRYINDEX, SEARCHJITKEY);
	return *p;
}

/* The Lua apply function's call, made under lua_pcall by apply_lua below. */
typedef struct LuaApply {
	lua_State *L;
	int fn, self;         /* s_search's stack indices of apply and s */
	SearchBox *box;
	Schedule *cand;
	const int64_t *vals;
	LSched *ud;           /* the candidate's userdata, detached after the call */
} LuaApply;

static int
apply_call(lua_State *L)
{
	LuaApply *a = lua_touserdata(L, 1);
	LSched *x;
	int i;

	/* 2: apply, 3: s (this is a frame of its own: the caller's indices mean nothing here) */
	lua_pushvalue(L, 2);
	x = lua_newuserdatauv(L, sizeof *x, 1);
	x->s = NULL;
	luaL_setmetatable(L, SCHED);
	lua_getiuservalue(L, 3, 1);   /* the kernel (and its graph) s started from */
	lua_setiuservalue(L, -2, 1);
	x->s = a->cand;
	a->ud = x;
	lua_createtable(L, 0, a->box->r.nparam);
	for (i = 0; i < a->box->r.nparam; i++) {
		lua_pushinteger(L, (lua_Integer)a->vals[i]);
		lua_setfield(L, -2, a->box->param[i].name);
	}
	lua_call(L, 2, 2);
	/* return false [, why]: a candidate apply declines */
	if (lua_type(L, -2) == LUA_TBOOLEAN && !lua_toboolean(L, -2)) {
		if (lua_type(L, -1) == LUA_TSTRING)
			return luaL_error(L, "%s", lua_tostring(L, -1));
		return luaL_error(L, "apply returned false");
	}
	return 0;
}

/* backend_search's apply: the Lua function on a fresh schedule object wrapping the candidate */
static int
apply_lua(Schedule *c, const int64_t *vals, void *aux, Err *e)
{
	LuaApply *a = aux;
	lua_State *L = a->L;
	int rc;

	a->cand = c;
	a->vals = vals;
	a->ud = NULL;
	lua_pushcfunction(L, apply_call);
	lua_pushlightuserdata(L, a);
	lua_pushvalue(L, a->fn);
	lua_pushvalue(L, a->self);
	rc = lua_pcall(L, 3, 0, 0);
	/* the candidate belongs to the search: the object the function saw lets go of it */
	if (a->ud)
		a->ud->s = NULL;
	if (rc != LUA_OK) {
		const char *m = lua_tostring(L, -1);

		err_set(e, "%s", m ? m : "apply raised a non-string error");
		lua_pop(L, 1);
		return -1;
	}
	return 0;
}

static void
fmt_seconds(char *out, size_t n, double t)
{
	if (t <= 0)
		snprintf(out, n, "-");
	else if (t < 1e-3)
		snprintf(out, n, "%.2f us", t * 1e6);
	else if (t < 1)
		snprintf(out, n, "%.3f ms", t * 1e3);
	else
		snprintf(out, n, "%.3f s", t);
}

/* search [#####.....] 12/30 best 1.23 ms, redrawn in place on stderr */
static void
progress_bar(int done, int total, double best_s, void *aux)
{
	SearchBox *x = aux;
	char bar[21], best[32];
	int i, fill = total > 0 ? (int)((int64_t)done * 20 / total) : 0;

	for (i = 0; i < 20; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[20] = 0;
	fmt_seconds(best, sizeof best, best_s);
	fprintf(stderr, "\rsearch [%s] %d/%d best %s\033[K", bar, done, total, best);
	fflush(stderr);
	x->bar = 1;
}

static int
search_tostring(lua_State *L)
{
	lua_getfield(L, 1, "table");
	return 1;
}

/* The option opt of the table at 1... as an integer in [lo, hi], or dflt. */
static lua_Integer
opt_int(lua_State *L, int t, const char *opt, lua_Integer dflt, lua_Integer lo, lua_Integer hi)
{
	lua_Integer v = dflt;

	if (lua_getfield(L, t, opt) != LUA_TNIL) {
		v = lua_tointeger(L, -1);   /* an integer: tessel_checkopts saw to it */
		if (v < lo || v > hi)
			luaL_error(L, "s:search: %s = %I is not in [%I, %I]", opt, v, lo, hi);
	}
	lua_pop(L, 1);
	return v;
}

static double
opt_num(lua_State *L, int t, const char *opt, double lo, double hi)
{
	double v = 0;

	if (lua_getfield(L, t, opt) != LUA_TNIL) {
		v = lua_tonumber(L, -1);   /* a number: tessel_checkopts saw to it */
		if (!(v >= lo && v < hi)) {
			char m[160];   /* lua_pushfstring knows no %g */

			snprintf(m, sizeof m, "s:search: %s = %g is not in [%g, %g)", opt, v, lo, hi);
			luaL_error(L, "%s", m);
		}
	}
	lua_pop(L, 1);
	return v;
}

static int
cmpname(const void *a, const void *b)
{
	return strcmp(((const BSearchParam *)a)->name, ((const BSearchParam *)b)->name);
}

/* params = {bm = {8, 16, 32}, ...} into the box, names sorted (a stable order for seeds and tables) */
static int
search_params(lua_State *L, int t, SearchBox *x)
{
	int n = 0, i, j;

	if (lua_getfield(L, t, "params") == LUA_TNIL) {
		lua_pop(L, 1);
		return 0;
	}
	if (!lua_istable(L, -1))
		luaL_error(L, "s:search: params must be a table {name = {values...}}, not %s", luaL_typename(L, -1));
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		int m = 0;

		if (lua_type(L, -2) != LUA_TSTRING)
			luaL_error(L, "s:search: params: a key is a %s, not a parameter name", luaL_typename(L, -2));
		if (n == BSEARCH_MAXPARAM)
			luaL_error(L, "s:search: params: more than %d parameters", BSEARCH_MAXPARAM);
		if (!lua_istable(L, -1) || (m = (int)luaL_len(L, -1)) < 1)
			luaL_error(L, "s:search: params.%s must be a non-empty list of integers", lua_tostring(L, -2));
		if (!(x->vals[n] = malloc(m * sizeof *x->vals[n])))
			luaL_error(L, "s:search: out of memory");
		for (i = 0; i < m; i++) {
			int isnum;

			lua_geti(L, -1, i + 1);
			x->vals[n][i] = (int64_t)lua_tointegerx(L, -1, &isnum);
			if (!isnum) {
				const char *name = lua_tostring(L, -3);

				luaL_error(L, "s:search: params.%s[%d] is %s, not an integer", name, i + 1,
				           luaL_tolstring(L, -1, NULL));
			}
			lua_pop(L, 1);
		}
		x->param[n].name = lua_tostring(L, -2);   /* the params table, anchored in the options, keeps it */
		x->param[n].vals = x->vals[n];
		x->param[n].nvals = m;
		n++;
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	/* sort names and their value lists together */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && cmpname(&x->param[j], &x->param[j - 1]) < 0; j--) {
			BSearchParam tp = x->param[j];
			int64_t *tv = x->vals[j];

			x->param[j] = x->param[j - 1];
			x->vals[j] = x->vals[j - 1];
			x->param[j - 1] = tp;
			x->vals[j - 1] = tv;
		}
	return n;
}

/* bindings = {a = tensor, ...}: inputs by name, as k:run takes them */
static void
search_bindings(lua_State *L, int t, const Kernel *k, SearchBox *x)
{
	int i;

	if (lua_getfield(L, t, "bindings") == LUA_TNIL) {
		lua_pop(L, 1);
		return;
	}
	tessel_checkbinds(L, -1, k, "s:search: bindings", NULL, 0);   /* a key that names no input is a typo */
	if (!(x->in = calloc(k->nbuf ? k->nbuf : 1, sizeof *x->in)))
		luaL_error(L, "s:search: out of memory");
	x->nin = k->nbuf;
	for (i = 0; i < k->nbuf; i++) {
		int vi;

		if (k->buf[i].role != KB_INPUT || lua_getfield(L, -1, k->buf[i].name) == LUA_TNIL) {
			if (k->buf[i].role == KB_INPUT)
				lua_pop(L, 1);
			continue;
		}
		vi = lua_gettop(L);
		if (lua_type(L, vi) == LUA_TTABLE) {
			lua_getglobal(L, "tensor");
			if (lua_type(L, -1) != LUA_TTABLE)
				luaL_error(L, "s:search: the tensor table is not loaded");
			lua_getfield(L, -1, "from");
			lua_pushvalue(L, vi);
			lua_pushstring(L, dtype_name(k->buf[i].dtype));
			lua_call(L, 2, 1);
			lua_replace(L, vi);
			lua_pop(L, 1);
		}
		if (!tessel_testtensor(L, vi))
			luaL_error(L, "s:search: bindings.%s is a %s, not a tensor", k->buf[i].name, luaL_typename(L, vi));
		tessel_realize(L, vi, 0, &x->in[i]);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

static const TesselOpt search_keys[] = {
	{ "params", "table" }, { "apply", "function" }, { "budget", "integer" }, { "reps", "integer" },
	{ "bindings", "table" }, { "verify", "boolean" }, { "trials", "integer" }, { "beam", "integer" },
	{ "ops", "table" }, { "time_s", "number" }, { "seed", "integer" }, { "min_progress", "number" },
	{ "progress", "boolean" }, { NULL, NULL }
};

/* the result's rows as Lua tables */
static void
push_opts(lua_State *L, const BSearchOpt *o, int n)
{
	int i;

	lua_createtable(L, n, 0);
	for (i = 0; i < n; i++) {
		lua_createtable(L, 4, 0);
		lua_pushstring(L, o[i].op);
		lua_rawseti(L, -2, 1);
		lua_pushstring(L, o[i].stage);
		lua_rawseti(L, -2, 2);
		lua_pushstring(L, o[i].loop);
		lua_rawseti(L, -2, 3);
		if (o[i].other[0])
			lua_pushstring(L, o[i].other);
		else
			lua_pushinteger(L, (lua_Integer)o[i].arg);
		lua_rawseti(L, -2, 4);
		lua_rawseti(L, -2, i + 1);
	}
}

static void
push_choice(lua_State *L, const BSearchResult *r, const BSearchRow *w)
{
	int j;

	lua_newtable(L);
	if (r->beam) {
		push_opts(L, w ? w->opt : NULL, w ? w->nopt : 0);
		lua_setfield(L, -2, "opts");
	} else
		for (j = 0; j < r->nparam; j++) {
			lua_pushinteger(L, (lua_Integer)w->val[j]);
			lua_setfield(L, -2, r->pname[j]);
		}
}

/*
** s:search{params =, apply =, budget =, reps =, bindings =, verify =, trials =,
** beam =, ops =, time_s =, seed =, min_progress =, progress =}
*/
static int
s_search(lua_State *L)
{
	Schedule *s = checks(L, 1);
	BSearchOpts o;
	LuaApply la;
	SearchBox *x;
	const BSearchResult *r;
	Buf tb;
	Err e = { "" };
	int i, rc, bar;

	if (lua_isnoneornil(L, 2)) {
		lua_settop(L, 1);
		lua_newtable(L);
	}
	if (!lua_istable(L, 2))
		return luaL_error(L, "s:search: the argument is a %s, not an options table (s:search{params = ..., "
		                  "apply = ...} or s:search{} for BEAM)", luaL_typename(L, 2));
	lua_settop(L, 2);
	tessel_checkopts(L, 2, "s:search", search_keys);
	x = lua_newuserdatauv(L, sizeof *x, 0);   /* index 3 */
	memset(x, 0, sizeof *x);
	if (luaL_newmetatable(L, SEARCHBOX)) {
		lua_pushcfunction(L, searchbox_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, 3);
	memset(&o, 0, sizeof o);
	o.nparam = search_params(L, 2, x);
	o.param = x->param;
	x->r.nparam = o.nparam;
	lua_getfield(L, 2, "apply");
	if (lua_isfunction(L, -1) != (o.nparam > 0))
		return luaL_error(L, o.nparam ? "s:search: params need apply = function(s, p) ... end, which applies "
		                  "one candidate's steps to s" : "s:search: apply needs params = {name = {values...}}");
	/* index 4: apply (or nil) */
	o.budget = (int)opt_int(L, 2, "budget", 0, 1, 100000);
	o.reps = (int)opt_int(L, 2, "reps", 0, 1, 1000);
	o.trials = (int)opt_int(L, 2, "trials", 0, 1, 1000);
	o.beam = (int)opt_int(L, 2, "beam", 0, 1, 1000);
	o.seed = (uint64_t)opt_int(L, 2, "seed", 0, 0, LUA_MAXINTEGER);
	o.time_s = opt_num(L, 2, "time_s", 0, 1e9);
	o.min_progress = opt_num(L, 2, "min_progress", 0, 1);
	lua_getfield(L, 2, "verify");
	o.no_verify = lua_isboolean(L, -1) && !lua_toboolean(L, -1);
	lua_pop(L, 1);
	if (lua_getfield(L, 2, "ops") != LUA_TNIL) {
		int n;

		if ((n = (int)luaL_len(L, -1)) < 1 || n > 15)
			return luaL_error(L, "s:search: ops must be a list of 1 to 15 OptOp names, e.g. {\"UPCAST\", \"THREAD\"}");
		for (i = 0; i < n; i++) {
			lua_geti(L, -1, i + 1);
			if (!(x->ops[i] = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL))
				return luaL_error(L, "s:search: ops[%d] is a %s, not an OptOp name", i + 1, luaL_typename(L, -1));
			lua_pop(L, 1);   /* the ops table keeps the string */
		}
		o.ops = x->ops;
	}
	lua_pop(L, 1);
	search_bindings(L, 2, s->k, x);
	o.inputs = x->in;
	o.cache = search_cache(L);
	lua_getfield(L, 2, "progress");
	bar = lua_isnil(L, -1) ? isatty(STDERR_FILENO) : lua_toboolean(L, -1);
	lua_pop(L, 1);
	if (bar) {
		o.progress = progress_bar;
		o.progress_aux = x;
	}
	if (o.nparam) {
		la.L = L;
		la.fn = 4;
		la.self = 1;
		la.box = x;
		o.apply = apply_lua;
		o.aux = &la;
	}
	rc = backend_search(s, &o, &x->r, &e);
	if (x->bar)
		fprintf(stderr, "\r\033[K");
	if (rc < 0)
		return luaL_error(L, "s:%s", e.msg);
	/* the result: best, time_s, baseline_s, speedup, rows, stop, the table as text */
	r = &x->r;
	lua_createtable(L, 0, 12);
	if (r->best >= 0)
		push_choice(L, r, &r->row[r->best]);
	else if (r->beam)
		push_choice(L, r, NULL);
	else
		lua_pushnil(L);
	lua_setfield(L, -2, "best");
	lua_pushnumber(L, r->best_s);
	lua_setfield(L, -2, "time_s");
	lua_pushnumber(L, r->baseline_s);
	lua_setfield(L, -2, "baseline_s");
	lua_pushnumber(L, r->best_s > 0 ? r->baseline_s / r->best_s : 0);
	lua_setfield(L, -2, "speedup");
	lua_pushstring(L, r->stop);
	lua_setfield(L, -2, "stop");
	lua_pushinteger(L, r->refused);
	lua_setfield(L, -2, "refused");
	lua_pushinteger(L, r->duplicates);
	lua_setfield(L, -2, "duplicates");
	lua_pushnumber(L, r->wall_s);
	lua_setfield(L, -2, "wall_s");
	lua_createtable(L, r->nrow, 0);
	for (i = 0; i < r->nrow; i++) {
		const BSearchRow *w = &r->row[i];

		push_choice(L, r, w);
		lua_pushinteger(L, i + 1);
		lua_setfield(L, -2, "index");
		lua_pushstring(L, backend_search_status(w->status));
		lua_setfield(L, -2, "status");
		if (w->msg) {
			lua_pushstring(L, w->msg);
			lua_setfield(L, -2, "message");
		}
		if (w->time_s > 0) {
			lua_pushnumber(L, w->time_s);
			lua_setfield(L, -2, "time_s");
			lua_pushnumber(L, w->speedup);
			lua_setfield(L, -2, "speedup");
		}
		lua_pushboolean(L, i == r->best);
		lua_setfield(L, -2, "best");
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "rows");
	buf_init(&tb);
	backend_search_table(&tb, r);
	lua_pushstring(L, tb.s ? tb.s : "");
	buf_free(&tb);
	lua_setfield(L, -2, "table");
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, search_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_setmetatable(L, -2);
	return 1;
}

static int
s_explain(lua_State *L)
{
	Schedule *s = checks(L, 1);
	Buf b;

	buf_init(&b);
	sched_explain(&b, s);
	if (b.oom)
		return luaL_error(L, "explain: out of memory");
	lua_pushstring(L, b.s ? b.s : "");
	buf_free(&b);
	return 1;
}

static int s_source(lua_State *L) { return forward(L, "source"); }

static const HelpReg smeths[] = {
	{ "compute_inline", s_compute_inline,
	  "s:compute_inline(block): an element-wise stage folded into the loads of its readers" },
	{ "compute_at", s_compute_at,
	  "s:compute_at(block, consumer, loop): the stage moved under the consumer's loop, over the\n"
	  "region one iteration of it reads; with threads bound inside the loop the copy is spread\n"
	  "over them between barriers (the shared-memory tiles of a GEMM)." },
	{ "reverse_compute_at", s_reverse_compute_at,
	  "s:reverse_compute_at(block, producer, loop): a consumer moved under the producer's loop" },
	{ "cache_read", s_cache_read,
	  "s:cache_read(block, buffer, scope): block reads a copy <buffer>_<scope> (shared, local,\n"
	  "global) made by a new stage before it; compute_at moves that stage where it belongs." },
	{ "cache_write", s_cache_write,
	  "s:cache_write(block, scope): block writes <buffer>_<scope>, copied out by a new stage" },
	{ "set_scope", s_set_scope, "s:set_scope(buffer, scope): a temporary buffer in global, shared or local memory" },
	{ "decompose_reduction", s_decompose_reduction,
	  "s:decompose_reduction(block, loop): the reduction's init into its own stage <block>_init" },
	{ "rfactor", s_rfactor,
	  "s:rfactor(block, loop, factor_axis): the reduction factored on its reduction loop\n"
	  "A new stage <block>_rf accumulates partial results in <buffer>_rf (the buffer's shape with\n"
	  "the loop's extent inserted at factor_axis, default 0), the loop now spatial (bind it to\n"
	  "threads); the block then reduces those partial results (TVM's rfactor)." },
	{ "reverse_compute_inline", s_reverse_compute_inline,
	  "s:reverse_compute_inline(block): an element-wise consumer folded into its producer's stores" },
	{ "rolling_update", s_rolling_update,
	  "s:rolling_update(block, loop [, {relax_casts = true}]): Neptune's rolling update (Algorithm 1)\n"
	  "The reduction block fused under loop (\"stage.loop\", or a loop name of an earlier stage) of\n"
	  "its reduce predecessor, with a repair h derived from its update and proved (Eq. 4, 5);\n"
	  "s:explain() shows the derivation. Refused when no h exists or the proof fails.\n"
	  "relax_casts: g may round to a narrower float and back (float32(float16(p))); h is derived\n"
	  "without the rounding and holds up to it (FlashAttention's order)." },
	{ "split_k_update", s_split_k_update,
	  "s:split_k_update(block, loop): Neptune's split-k update (Algorithm 2, FlashDecoding)\n"
	  "The reduce predecessors privatized on loop (split first: s:split(pred, j, {nil, 64})): a\n"
	  "local stage reducing each slice in parallel and a global one; block privatized alike, its\n"
	  "local fused into the local stage, its global repaired by h (Eq. 8). {relax_casts = true} as\n"
	  "for rolling_update." },
	{ "fuse_and_privatize", s_fuse_and_privatize,
	  "s:fuse_and_privatize(block, loop): both reductions privatized on loop, block's local fused\n"
	  "under it; for reductions that need no repair (split_k_update for those that do)" },
	{ "privatize_reduce", s_privatize_reduce,
	  "s:privatize_reduce(block, loop, k): loop split into k slices; a local stage reduces each\n"
	  "slice into <buffer>_local, the block combines them (Neptune's PrivatizeReduce)" },
	{ "tile_ir", s_tile_ir, "s:tile_ir(): the scheduled kernel in Neptune's tile IR (k:tile_ir())" },
	{ "search", s_search,
	  "s:search{params = {bm = {8, 16, 32}}, apply = function(s, p) ... end, budget = 64}: the fastest\n"
	  "schedule, timed on the C JIT. apply applies one candidate's steps to s (a copy of this\n"
	  "schedule: a scheduled kernel is searched further); error() or `return false, why` refuses\n"
	  "it. Without params: tinygrad's BEAM over OptOps (UPCAST, UNROLL, THREAD, SWAP; ops = {...}\n"
	  "adds LOCAL, GROUP, GROUPTOP, PADTO), beam = 4 wide, until a round gains < min_progress (1%).\n"
	  "Each candidate is verified (s:verify, trials = 1; verify = false skips it: faster, but a\n"
	  "wrong candidate then runs natively unchecked, caught only by comparing its outputs with\n"
	  "this schedule's), compiled and timed: the median of reps = 5 runs on inputs drawn once\n"
	  "(bindings = {a = t}).\n"
	  "budget = 64 candidates, time_s = seconds, seed = 0 (the grid's order past the budget).\n"
	  "The winner's steps replace s's (s:trace()); returns {best = {bm = 16} or {opts = {...}},\n"
	  "time_s, baseline_s, speedup, rows = {{status =, time_s =, message = ...}}, stop}; print it\n"
	  "for the table. A progress bar shows on a terminal (progress = false hides it)." },
	{ "explain", s_explain, "s:explain(): the derivations of the schedule's fusion steps, as text" },
	{ "thread_layout", s_thread_layout,
	  "s:thread_layout(block): the Axe layout the schedule induces on a stage\n"
	  "Each element the stage writes -> the hardware coordinates that write it: bound loops on\n"
	  "bx, by, bz, tx, ty, tz, warp, lane; unbound loops on reg (a thread's serial iterations).\n"
	  "show() it like any Axe layout; compare it with axe.from_mma(...) to see a fragment." },
	{ "apply_opt", s_apply_opt,
	  "s:apply_opt(op, block, loop, k): tinygrad's OptOps on a loop\n"
	  "LOCAL, UPCAST (spatial, inner), UNROLL, GROUP (reduce, inner), GROUPTOP (reduce, outer),\n"
	  "THREAD (spatial, outer): split by k (0: the whole loop) and type the new sub-axis;\n"
	  "PADTO: pad to a multiple of k under a guard; SWAP: s:apply_opt(\"SWAP\", block, i, j);\n"
	  "NOLOCALS: s:apply_opt(\"NOLOCALS\") forbids LOCAL from then on." },
	{ "split", s_split,
	  "s:split(block, loop, {nil, 32}): loop i into i0, i1 with i = i0*32 + i1 (TVM's split)\n"
	  "One factor may be nil (the extent divided by the others, rounded up); a product past the\n"
	  "extent guards the body (TVM's predicate). A bound loop is refused." },
	{ "fuse", s_fuse,
	  "s:fuse(block, i, j, ...): perfectly nested loops into one, i_j_fused (TVM's fuse)\n"
	  "Refused: loops that are not adjacent, bound loops, a reduction loop with a spatial one." },
	{ "reorder", s_reorder,
	  "s:reorder(block, j, i, ...): loops of one perfect nest in the given order (TVM's reorder)\n"
	  "Refused when the order of the iterations matters, unless every dependence runs along the\n"
	  "nest's innermost loop alone (the loops outside it touch their own elements)." },
	{ "skip_masked", s_skip_masked,
	  "s:skip_masked(block, loop): the iterations of loop whose tile every mask leaves out are skipped\n"
	  "(FlexAttention's block sparsity): a mask is where(c, x, -inf) with c on indices (causal, a\n"
	  "window). Proved first, with every mask false: each store becomes an identity (inputs finite);\n"
	  "the body then runs under \"some mask holds in the tile\" (s:explain() names it), which the\n"
	  "Triton emitter turns into the loop's bounds." },
	{ "fission", s_fission,
	  "s:fission(block, loop [, {deep = true}]): the loop distributed over the statements of its body\n"
	  "for i: {s1; s2} becomes for i: s1; for i0: s2. Returns s and the new loops' names (also in\n"
	  "s:explain()). deep: then every loop inside that holds several statements, where allowed\n"
	  "(each statement its own perfect nest: the tile view's form). Refused for a bound loop, or\n"
	  "when one iteration touches an element another writes." },
	{ "bind", s_bind,
	  "s:bind(block, loop, \"threadIdx.x\"): the loop runs on a hardware axis\n"
	  "blockIdx.x/y/z, threadIdx.x/y/z (or block.x, thread.y), warp, lane." },
	{ "parallel", s_parallel,
	  "s:parallel(block, loop): a CPU-parallel loop (axis type THREAD); its iterations must be independent,\n"
	  "except through a register buffer each iteration writes whole before reading it (one per thread)" },
	{ "vectorize", s_vectorize,
	  "s:vectorize(block, loop): an innermost loop of extent <= 64 as a vector (UPCAST); in C, GCC vector\n"
	  "types when its body is loads, + - * max min of one dtype (docs/export.md), else omp simd" },
	{ "unroll", s_unroll, "s:unroll(block, loop): unrolled (UNROLL), extent <= 1024" },
	{ "tile", s_tile,
	  "s:tile(block, x, y, fx, fy): x, y into x0, y0, x1, y1 (split both, reorder): one step" },
	{ "kernel", s_kernel, "s:kernel(): the scheduled kernel (a copy): print, run, count or draw it" },
	{ "run", s_run, "s:run(bindings [, opts]): the scheduled kernel's outputs (k:run)" },
	{ "counts", s_counts, "s:counts([bindings]): the scheduled kernel's counts (k:counts)" },
	{ "check", s_check, "s:check(): the verifier on the scheduled kernel (k:check)" },
	{ "export", s_export,
	  "s:export(dialect, dir [, opts]): the scheduled kernel's source and harness in dir (k:export)" },
	{ "replay", s_replay,
	  "s:replay(text): the steps of a trace (s:trace() of another schedule) applied to this one;\n"
	  "each line names s, which is this schedule while it runs (no global is rebound). A step that\n"
	  "is refused raises; the steps before it stay (s:undo() takes them back)." },
	{ "trace", s_trace, "s:trace(): the Lua that replays the steps, one a line" },
	{ "diff", s_diff,
	  "s:diff(): the last step as a line diff of the pseudo-code (\"- \" before, \"+ \" after)\n"
	  "viz.render(s, \"d.svg\", {diff = true}) draws the loop trees before and after." },
	{ "set_layout", s_set_layout,
	  "s:set_layout(buffer, layout): the buffer's elements placed by another layout\n"
	  "CuTe (\"(32,32):(33,1)\"), swizzled (\"Sw<3,4,3> o 0 o (8,64):(64,1)\"), a lego.Layout or an\n"
	  "axe.Layout on m. Accesses are logical, so every one of them follows; s:counts() shows the\n"
	  "effect on sectors and bank conflicts." },
	{ "undo", s_undo, "s:undo(): the schedule as it was before its last step" },
	{ "verify", s_verify,
	  "s:verify{trials = 3, seed = 0, rtol =, atol =}: the scheduled kernel against the reference\n"
	  "The reference is the tensor graph's evaluator (or the kernel as scheduling began), on\n"
	  "seeded random inputs; tolerances per dtype. Returns true and a report, or raises with\n"
	  "the first wrong element, the store that wrote it, and the step after which it went wrong." },
	{ "get_block", s_get_block, "s:get_block(name): the stage named name (TVM's get_block)" },
	{ "get_loops", s_get_loops, "s:get_loops(block): the stage's loop variables, outermost first" },
	{ "source", s_source, "s:source([dialect]): the scheduled kernel as source code, c, cuda, opencl or triton (k:source)" },
	{ NULL, NULL, NULL }
};

void
tessel_open_sched(lua_State *L)
{
	luaL_newmetatable(L, SCHED);
	lua_pushcfunction(L, s_gc);
	lua_setfield(L, -2, "__gc");
	lua_pushcfunction(L, s_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pushcfunction(L, s_show);
	lua_setfield(L, -2, "__show");
	lua_pushcfunction(L, s_scene);
	lua_setfield(L, -2, "__scene");
	lua_newtable(L);
	help_setfuncs(L, smeths, "kernel.Schedule:");
	lua_pushvalue(L, -1);
	lua_setfield(L, -3, "methods");
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	/* kernel.schedule(k) and k:schedule() */
	lua_pushcfunction(L, l_schedule);
	help_add(L, -1, "kernel.schedule",
	         "kernel.schedule(k) or k:schedule(): a schedule of k (TVM's tir.Schedule)\n"
	         "s:get_block(\"xsum\"), s:get_loops(block); the primitives as TVM spells them; every\n"
	         "step checked by the verifier and recorded: s:trace(), s:undo(), s:verify(), s:kernel().");
	lua_pushvalue(L, -1);
	lua_setfield(L, -3, "schedule");
	help_topic(L, "schedules",
	           "schedules: a kernel transformed one checked step at a time (docs/schedules.md)\n"
	           "s = k:schedule(); s:split(block, loop, {nil, 32}), s:reorder, s:tile, s:bind, s:fission,\n"
	           "s:compute_at, s:reverse_compute_at, s:cache_read, s:set_scope, s:rfactor, ... Every step is\n"
	           "checked and refused with the reason, recorded (s:trace(), s:replay(text), s:undo()) and\n"
	           "verifiable against the tensor program (s:verify()). s:tile_ir() shows the tiles; s:source,\n"
	           "s:run, s:export, s:counts act on the scheduled kernel. help(k:schedule()) lists them all.");
	help_topic(L, "fusion",
	           "fusion: Neptune's rolling update and split-k update (docs/fusion.md, docs/neptune.md)\n"
	           "s:rolling_update(block, \"stage.loop\") fuses a reduction under the loop of its reduce\n"
	           "predecessor with a derived and proved repair; s:split_k_update for the parallel (split)\n"
	           "form; s:explain() shows each derivation. scripts/neptune/ has attention's definition and\n"
	           "the templates that make FlashAttention and FlashDecoding of it; s:skip_masked skips the\n"
	           "tiles a mask leaves out.");
	luaL_getmetatable(L, "kernel.Kernel");
	lua_getfield(L, -1, "methods");
	lua_pushvalue(L, -3);
	lua_setfield(L, -2, "schedule");
	lua_pop(L, 3);
}

/* lua_kernel_stmt.c - what a stage of kernel.new records: loops, conditionals, barriers, atomics, warp and warpgroup operations, TMA, collectives. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <string.h>

#include "../interp/kernel/kernel.h"
#include "help.h"
#include "lua_kernel.h"
#include "tessel.h"

#define KITER   "kernel.Range"
#define KREGION "kernel.Region"

typedef struct LIter {
	UOp *range;
	int state;          /* 0 not started, 1 open, 2 closed */
	int depth;          /* the frame it opened */
} LIter;

/* ---- loops, conditionals, barriers ---- */

static const char *const letters[] = { "i", "j", "k", "l", "m", "n", "p", "q", "r", "s", "t", "u" };

static int
iter_step(lua_State *L)
{
	LIter *it = luaL_checkudata(L, lua_upvalueindex(1), KITER);
	LKernel *x = luaL_checkudata(L, lua_upvalueindex(2), KERNEL);

	if (it->state == 0) {
		if (lk_staging(L, "kernel.range") != x)
			return luaL_error(L, "kernel.range: the loop belongs to another kernel than the stage being recorded");
		lk_push_frame(L, x, 1, it->range);
		it->depth = x->nf;
		it->state = 1;
		lk_pushvalue(L, krange_var(it->range), lua_upvalueindex(2));
		return 1;
	}
	if (it->state == 1) {
		if (x->nf != it->depth)
			return luaL_error(L, "kernel.range: the loop over %s closes while an inner block is open "
			                  "(a break or an error inside it?)", krange_var(it->range)->name);
		lk_pop_frame(L, x);
		it->state = 2;
	}
	lua_pushnil(L);
	return 1;
}

/* kernel.range(n [, name | {name=, type=, bind=}]): for i in kernel.range(4) do ... end */
static int
l_range(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.range");
	lua_Integer n = luaL_checkinteger(L, 1);
	const char *name = NULL, *ts = NULL, *hs = NULL;
	AxisType t = AX_LOOP;
	HwAxis hw = HW_NONE;
	LIter *it;
	UOp *v;
	int depth = 0, i;

	if (n < 1 || n > ((lua_Integer)1 << 40))
		return luaL_error(L, "kernel.range: extent %d is not in [1, 2^40]", (int)n);
	if (lua_type(L, 2) == LUA_TSTRING)
		name = lua_tostring(L, 2);
	else if (lua_type(L, 2) == LUA_TTABLE) {
		static const TesselOpt keys[] = {
			{ "name", "string" }, { "type", "string" }, { "bind", "string" }, { NULL, NULL }
		};

		tessel_checkopts(L, 2, "kernel.range", keys);
		lua_getfield(L, 2, "name");
		name = lua_tostring(L, -1);
		lua_getfield(L, 2, "type");
		ts = lua_tostring(L, -1);
		lua_getfield(L, 2, "bind");
		hs = lua_tostring(L, -1);
	} else if (!lua_isnoneornil(L, 2))
		return luaL_typeerror(L, 2, "name or options table");
	if (hs && hwaxis_parse(hs, &hw) < 0)
		return luaL_error(L, "kernel.range: unknown hardware axis %s (block.x/y/z, thread.x/y/z, warp, lane)", hs);
	if (hw != HW_NONE)
		t = hwaxis_is_block(hw) ? AX_GLOBAL : hw == HW_WARP ? AX_WARP : AX_LOCAL;
	if (ts && axistype_parse(ts, &t) < 0)
		return luaL_error(L, "kernel.range: unknown axis type %s (GLOBAL LOCAL WARP THREAD LOOP REDUCE "
		                  "GROUP_REDUCE UPCAST UNROLL)", ts);
	for (i = 0; i < x->nf; i++)
		depth += x->f[i].kind == 1;
	if (!name)
		name = letters[depth % (int)(sizeof letters / sizeof *letters)];
	if (!uop_valid_name(name))
		return luaL_error(L, "kernel.range: \"%s\" is not a name", name);
	v = kernel_var(x->k, name, n);
	it = lua_newuserdatauv(L, sizeof *it, 0);
	memset(it, 0, sizeof *it);
	luaL_setmetatable(L, KITER);
	if (!v || !(it->range = kernel_range(x->k, v, t, hw)))
		return luaL_error(L, "kernel: out of memory");
	lua_getfield(L, LUA_REGISTRYINDEX, STAGING);
	lua_pushcclosure(L, iter_step, 2);
	return 1;
}

/* kernel.when(cond, function() ... end) */
static int
l_when(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.when");
	int ki;
	UOp *g;

	luaL_checktype(L, 2, LUA_TFUNCTION);
	lua_getfield(L, LUA_REGISTRYINDEX, STAGING);
	ki = lua_gettop(L);
	g = lk_operand(L, 1, ki, DT_BOOL, "kernel.when");
	if (g->dtype != DT_BOOL)
		return luaL_error(L, "kernel.when: the condition is a %s, not a bool (a comparison)", dtype_name(g->dtype));
	lk_push_frame(L, x, 2, g);
	lua_pushvalue(L, 2);
	lua_call(L, 0, 0);
	if (x->nf < 1 || x->f[x->nf - 1].kind != 2 || x->f[x->nf - 1].head != g)
		return luaL_error(L, "kernel.when: a loop inside the conditional was left open");
	lk_pop_frame(L, x);
	return 0;
}

static int
l_barrier(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.barrier");

	lk_append(L, x, kernel_barrier(x->k));
	return 0;
}

/* kernel.cp_async_commit(): this thread's cp.async since the last commit become a group */
static int
l_cp_async_commit(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.cp_async_commit");

	lk_append(L, x, kernel_cp_commit(x->k));
	return 0;
}

/* kernel.cp_async_wait(n): wait until at most the n most recent groups are in flight */
static int
l_cp_async_wait(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.cp_async_wait");
	lua_Integer n = luaL_checkinteger(L, 1);
	Err e = { "" };
	UOp *u;

	if (n < 0 || n > 63)
		return luaL_error(L, "kernel.cp_async_wait: %I groups; wait_group takes 0 to 63", n);
	if (!(u = kernel_cp_wait(x->k, (int)n, &e)))
		return lk_err(L, &e);
	lk_append(L, x, u);
	return 0;
}

/* ---- atomics and fences ---- */

/* kernel.atomic(op, buf, key, value [, old, okey]) */
static int
l_atomic(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.atomic");
	const char *ops = luaL_checkstring(L, 1);
	KAtomicOp op;
	LBuf *b;
	UOp *ix, *v, *ox = NULL, *u;
	Err e = { "" };
	int ki, hasold = !lua_isnoneornil(L, 5);

	if (katomic_parse(ops, &op) < 0)
		return luaL_error(L, "kernel.atomic: unknown op %s (add, max, min, exch)", ops);
	b = luaL_checkudata(L, 2, KBUFFER);
	luaL_checkany(L, 3);
	luaL_checkany(L, 4);
	if (hasold) {
		luaL_checkudata(L, 5, KBUFFER);
		luaL_checkany(L, 6);
	}
	if (lk_owner(L, 2) != x)
		return luaL_error(L, "kernel.atomic: the buffer belongs to another kernel than the stage being recorded");
	lua_pop(L, 1);
	if (hasold) {
		if (lk_owner(L, 5) != x)
			return luaL_error(L, "kernel.atomic: the old value's buffer belongs to another kernel than the stage "
			                  "being recorded");
		lua_pop(L, 1);
	}
	lua_getfield(L, LUA_REGISTRYINDEX, STAGING);
	ki = lua_gettop(L);
	ix = lk_access(L, 2, 3, ki, "kernel.atomic");
	v = lk_operand(L, 4, ki, x->k->buf[b->b].dtype, "kernel.atomic");
	if (hasold)
		ox = lk_access(L, 5, 6, ki, "kernel.atomic");
	if (!(u = kernel_atomic(x->k, op, ix, v, ox, &e)))
		return lk_err(L, &e);
	lk_append(L, x, u);
	return 0;
}

/* kernel.fence([scope]): "gpu" (default) or "block" */
static int
l_fence(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.fence");
	const char *sc = luaL_optstring(L, 1, "gpu");

	if (strcmp(sc, "gpu") != 0 && strcmp(sc, "block") != 0)
		return luaL_error(L, "kernel.fence: scope %s (gpu or block)", sc);
	lk_append(L, x, kernel_fence(x->k, strcmp(sc, "block") == 0 ? KF_BLOCK : KF_GPU));
	return 0;
}

/* ---- warp-synchronous operations ---- */

/* kernel.shuffle(value, lane): value as lane `lane` of the warp holds it */
static int
l_shuffle(lua_State *L)
{
	int ki;
	LKernel *K;
	UOp *v, *lane;

	lua_settop(L, 2);
	ki = lk_find_kernel(L, 2, "kernel.shuffle");
	K = lua_touserdata(L, ki);
	v = lk_operand(L, 1, ki, DT_FLOAT32, "kernel.shuffle");
	lane = lk_operand(L, 2, ki, DT_INDEX, "kernel.shuffle");
	if (dtype_is_float(lane->dtype) || lane->dtype == DT_BOOL)
		return luaL_error(L, "kernel.shuffle: the lane is a %s, not an integer", dtype_name(lane->dtype));
	lk_pushvalue(L, kernel_shuffle(K->k, v, lane), ki);
	return 1;
}

/* kernel.mma(atom, D, A, B, C): D = A B + C over the warp, by a CuTe MMA atom */
static int
l_mma(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.mma");
	const char *atom = luaL_checkstring(L, 1);
	int b[4], i;
	Err e = { "" };
	UOp *u;

	for (i = 0; i < 4; i++) {
		LBuf *lb = luaL_checkudata(L, i + 2, KBUFFER);

		if (lk_owner(L, i + 2) != x)
			return luaL_error(L, "kernel.mma: operand %d belongs to another kernel than the stage "
			                  "being recorded", i + 1);
		lua_pop(L, 1);
		b[i] = lb->b;
	}
	if (!(u = kernel_mma(x->k, atom, b[0], b[1], b[2], b[3], &e)))
		return lk_err(L, &e);
	lk_append(L, x, u);
	return 0;
}

/* kernel.ldmatrix(D, S, {i, j} [, {x = 4, trans = false}]): the warp's ldmatrix, this lane's row at S[i, j] */
static int
l_ldmatrix(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.ldmatrix");
	LBuf *d = luaL_checkudata(L, 1, KBUFFER);
	static const TesselOpt keys[] = { { "x", "integer" }, { "trans", "boolean" }, { NULL, NULL } };
	lua_Integer n = 4;
	int trans = 0, ki;
	Err e = { "" };
	UOp *ix, *u;

	luaL_checkudata(L, 2, KBUFFER);
	luaL_checkany(L, 3);
	if (tessel_checkopts(L, 4, "kernel.ldmatrix", keys)) {
		if (lua_getfield(L, 4, "x") != LUA_TNIL)
			n = lua_tointeger(L, -1);
		lua_getfield(L, 4, "trans");
		trans = lua_toboolean(L, -1);
		lua_pop(L, 2);
	}
	if (n != 1 && n != 2 && n != 4)
		return luaL_error(L, "kernel.ldmatrix: x%I; ldmatrix loads 1, 2 or 4 matrices", n);
	if (lk_owner(L, 1) != x)
		return luaL_error(L, "kernel.ldmatrix: the destination belongs to another kernel than the stage "
		                  "being recorded");
	lua_pop(L, 1);
	if (lk_owner(L, 2) != x)
		return luaL_error(L, "kernel.ldmatrix: the source belongs to another kernel than the stage "
		                  "being recorded");
	ki = lua_gettop(L);
	ix = lk_access(L, 2, 3, ki, "kernel.ldmatrix");
	if (!(u = kernel_ldmatrix(x->k, d->b, ix, (int)n, trans, &e)))
		return lk_err(L, &e);
	lk_append(L, x, u);
	return 0;
}

/* ---- mbarriers and TMA ---- */

/* The barrier element bar[key] (bar at bi, key at keyi) of the kernel being recorded. */
static UOp *
bar_element(lua_State *L, LKernel *x, int bi, int keyi, const char *what)
{
	UOp *ix;

	luaL_checkudata(L, bi, KBUFFER);
	luaL_checkany(L, keyi);
	if (lk_owner(L, bi) != x)
		luaL_error(L, "%s: the barrier belongs to another kernel than the stage being recorded", what);
	ix = lk_access(L, bi, keyi, lua_gettop(L), what);
	lua_pop(L, 1);
	return ix;
}

/* kernel.mbarrier_init(bar, {s}, count) */
static int
l_mbarrier_init(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.mbarrier_init");
	lua_Integer n = luaL_checkinteger(L, 3);
	Err e = { "" };
	UOp *u = kernel_mbar_init(x->k, bar_element(L, x, 1, 2, "kernel.mbarrier_init"), n, &e);

	if (!u)
		return lk_err(L, &e);
	lk_append(L, x, u);
	return 0;
}

/* kernel.mbarrier_arrive(bar, {s} [, {tx = bytes}]) */
static int
l_mbarrier_arrive(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.mbarrier_arrive");
	static const TesselOpt keys[] = { { "tx", "integer" }, { NULL, NULL } };
	lua_Integer tx = 0;
	Err e = { "" };
	UOp *u;

	if (tessel_checkopts(L, 3, "kernel.mbarrier_arrive", keys)) {
		lua_getfield(L, 3, "tx");
		tx = lua_tointeger(L, -1);
		lua_pop(L, 1);
	}
	if (!(u = kernel_mbar_arrive(x->k, bar_element(L, x, 1, 2, "kernel.mbarrier_arrive"), tx, &e)))
		return lk_err(L, &e);
	lk_append(L, x, u);
	return 0;
}

/* kernel.mbarrier_wait(bar, {s}, parity) */
static int
l_mbarrier_wait(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.mbarrier_wait");
	Err e = { "" };
	UOp *bar, *par, *u;
	int ki;

	luaL_checkany(L, 3);
	bar = bar_element(L, x, 1, 2, "kernel.mbarrier_wait");
	lua_getfield(L, LUA_REGISTRYINDEX, STAGING);
	ki = lua_gettop(L);
	par = lk_operand(L, 3, ki, DT_INDEX, "kernel.mbarrier_wait");
	if (!(u = kernel_mbar_wait(x->k, bar, par, &e)))
		return lk_err(L, &e);
	lk_append(L, x, u);
	return 0;
}

static KRegion region_arg(lua_State *L, int i, LKernel *K);

/* kernel.tma(dst, src, bar, {s}): the plan as a table */
static int
l_tma(lua_State *L)
{
	LKernel *K = lk_staging(L, "kernel.tma");
	KRegion dst, src;
	KTma t;
	Err e = { "" };
	UOp *bar, *u;
	int d;

	lua_settop(L, 4);
	dst = region_arg(L, 1, K);
	src = region_arg(L, 2, K);
	bar = bar_element(L, K, 3, 4, "kernel.tma");
	if (!(u = kernel_tma(K->k, &dst, &src, bar, &t, &e)))
		return lk_err(L, &e);
	lk_append(L, K, u);
	lua_createtable(L, 0, 6);
	lua_pushinteger(L, t.swizzle);
	lua_setfield(L, -2, "swizzle");
	lua_pushinteger(L, t.nbox);
	lua_setfield(L, -2, "boxes");
	lua_pushinteger(L, t.bytes);
	lua_setfield(L, -2, "bytes");
	lua_createtable(L, t.rank, 0);
	for (d = 0; d < t.rank; d++) {
		lua_pushinteger(L, t.box[t.rank - 1 - d]);
		lua_rawseti(L, -2, d + 1);
	}
	lua_setfield(L, -2, "box");
	lua_pushstring(L, t.reason);
	lua_setfield(L, -2, "reason");
	return 1;
}

/* ---- collective operators ---- */

typedef struct LRegion {
	KRegion r;
} LRegion;

static KRegion region_arg(lua_State *L, int i, LKernel *K);

/* ---- warpgroup MMA (sm_90a) ---- */

/* b_nk and zero from an options table at index i (absent or nil: 0); unknown keys refused
** (zero only where allow_zero) */
static int
wgmma_flags(lua_State *L, int i, const char *fn, int allow_zero)
{
	static const TesselOpt keys[] = { { "zero", "boolean" }, { "b_nk", "boolean" }, { NULL, NULL } };
	int flags = 0;

	if (!tessel_checkopts(L, i, fn, allow_zero ? keys : keys + 1))
		return 0;
	lua_getfield(L, i, "b_nk");
	lua_getfield(L, i, "zero");
	flags = (lua_toboolean(L, -2) ? KWG_B_NK : 0) | (lua_toboolean(L, -1) ? KWG_ZERO : 0);
	lua_pop(L, 2);
	return flags;
}

/* kernel.wgmma(D, A, B [, {b_nk = true}]): D += A B over the warpgroup, B a shared region, A a
** shared region or a register fragment (b_nk: B's region is N x 16, (n, k), and B[k][n] its
** element [.., n, k]) */
static int
l_wgmma(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.wgmma");
	LBuf *d = luaL_checkudata(L, 1, KBUFFER);
	KRegion a, b;
	Err e = { "" };
	UOp *u;
	int flags;

	if (lk_owner(L, 1) != x)
		return luaL_error(L, "kernel.wgmma: the accumulator belongs to another kernel than the stage being "
		                  "recorded");
	lua_pop(L, 1);
	a = region_arg(L, 2, x);
	b = region_arg(L, 3, x);
	flags = wgmma_flags(L, 4, "kernel.wgmma", 1);
	if (!(u = kernel_wgmma_flags(x->k, d->b, &a, &b, flags, &e)))
		return lk_err(L, &e);
	lk_append(L, x, u);
	return 0;
}

static int
l_wgmma_fence(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.wgmma_fence");

	lk_append(L, x, kernel_wg_fence(x->k));
	return 0;
}

static int
l_wgmma_commit(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.wgmma_commit");

	lk_append(L, x, kernel_wg_commit(x->k));
	return 0;
}

static int
l_wgmma_wait(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.wgmma_wait");
	lua_Integer n = luaL_checkinteger(L, 1);
	Err e = { "" };
	UOp *u;

	if (n < 0 || n > 7)
		return luaL_error(L, "kernel.wgmma_wait: %I groups; wgmma.wait_group takes 0 to 7", n);
	if (!(u = kernel_wg_wait(x->k, (int)n, &e)))
		return lk_err(L, &e);
	lk_append(L, x, u);
	return 0;
}

/* kernel.setmaxnreg(n, "inc" | "dec"): the warpgroup's register budget */
static int
l_setmaxnreg(lua_State *L)
{
	LKernel *x = lk_staging(L, "kernel.setmaxnreg");
	lua_Integer n = luaL_checkinteger(L, 1);
	const char *how = luaL_checkstring(L, 2);
	Err e = { "" };
	UOp *u;

	if (strcmp(how, "inc") != 0 && strcmp(how, "dec") != 0)
		return luaL_error(L, "kernel.setmaxnreg: '%s' is not \"inc\" or \"dec\"", how);
	if (n < 0 || n > 1024)
		return luaL_error(L, "kernel.setmaxnreg: %I registers; setmaxnreg takes a multiple of 8 from 24 to 256", n);
	if (!(u = kernel_setmaxnreg(x->k, (int)n, how[0] == 'i', &e)))
		return lk_err(L, &e);
	lk_append(L, x, u);
	return 0;
}

/* kernel.wgmma_desc(region, "A" | "B" [, {var = value, ...} [, {b_nk = true}]]): the GMMA descriptor of an operand */
static int
l_wgmma_desc(lua_State *L)
{
	LRegion *r = luaL_checkudata(L, 1, KREGION);
	const char *op = luaL_checkstring(L, 2);
	UBind bind[16];
	int nb = 0, flags;
	LKernel *K;
	KGmmaDesc dsc;
	Err e = { "" };
	char hex[24];

	if ((op[0] != 'A' && op[0] != 'B') || op[1])
		return luaL_argerror(L, 2, "\"A\" or \"B\" expected");
	if (!lua_isnoneornil(L, 3)) {
		luaL_checktype(L, 3, LUA_TTABLE);
		lua_pushnil(L);
		while (lua_next(L, 3)) {
			if (lua_type(L, -2) != LUA_TSTRING || !lua_isinteger(L, -1))
				return luaL_error(L, "kernel.wgmma_desc: the binding maps variable names to integers");
			if (nb == 16)
				return luaL_error(L, "kernel.wgmma_desc: more than 16 variables bound");
			bind[nb].name = lua_tostring(L, -2);   /* anchored by the table */
			bind[nb++].value = lua_tointeger(L, -1);
			lua_pop(L, 1);
		}
	}
	lua_getiuservalue(L, 1, 1);
	K = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (!K || !K->k)
		return luaL_error(L, "kernel.wgmma_desc: the region's kernel was freed");
	flags = wgmma_flags(L, 4, "kernel.wgmma_desc", 0);
	if (flags && op[0] != 'B')
		return luaL_error(L, "kernel.wgmma_desc: b_nk is an option of operand B, not A");
	if (kernel_wgmma_desc_flags(K->k, &r->r, op[0], flags, bind, nb, &dsc, &e) < 0)
		return lk_err(L, &e);
	lua_createtable(L, 0, 8);
	lua_pushstring(L, dsc.mn_major ? "MN" : "K");
	lua_setfield(L, -2, "major");
	lua_pushstring(L, kgmma_layout_name(dsc.layout_type));
	lua_setfield(L, -2, "swizzle");
	lua_pushinteger(L, dsc.layout_type);
	lua_setfield(L, -2, "layout_type");
	lua_pushinteger(L, dsc.lbo);
	lua_setfield(L, -2, "lbo");
	lua_pushinteger(L, dsc.sbo);
	lua_setfield(L, -2, "sbo");
	lua_pushinteger(L, dsc.start);
	lua_setfield(L, -2, "start");
	lua_pushinteger(L, dsc.nstarts);
	lua_setfield(L, -2, "starts");
	snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)dsc.desc);
	lua_pushstring(L, hex);
	lua_setfield(L, -2, "desc");
	return 1;
}

/* B:tile(begin, extent): the region of B from begin (indices) spanning extent */
static int
b_tile(lua_State *L)
{
	LBuf *b = luaL_checkudata(L, 1, KBUFFER);
	LKernel *K = lk_owner(L, 1);
	int ki = lua_gettop(L), n, m, i;
	const KBuf *kb;
	UOp *idx[T_MAXDIM];
	LRegion *r;

	if (!K || !K->k)
		return luaL_error(L, "kernel: the buffer's kernel was freed");
	kb = &K->k->buf[b->b];
	n = lk_indices(L, 2, ki, idx, "tile");
	luaL_checktype(L, 3, LUA_TTABLE);
	tessel_checkseq(L, 3, "tile: the extents");
	m = (int)luaL_len(L, 3);
	if (n != kb->ndim || m != kb->ndim)
		return luaL_error(L, "tile: %s has %d dimensions; %d starts and %d extents given", kb->name,
		                  kb->ndim, n, m);
	r = lua_newuserdatauv(L, sizeof *r, 1);
	memset(r, 0, sizeof *r);
	r->r.buf = b->b;
	for (i = 0; i < n; i++) {
		lua_geti(L, 3, i + 1);
		if (!lua_isinteger(L, -1))
			return luaL_error(L, "tile: extent %d of %s is not an integer", i + 1, kb->name);
		r->r.extent[i] = lua_tointeger(L, -1);
		r->r.begin[i] = idx[i];
		lua_pop(L, 1);
	}
	luaL_setmetatable(L, KREGION);
	lua_pushvalue(L, ki);
	lua_setiuservalue(L, -2, 1);
	return 1;
}

/* A region argument: a kernel.Region or a whole buffer. */
static KRegion
region_arg(lua_State *L, int i, LKernel *K)
{
	LRegion *r = luaL_testudata(L, i, KREGION);
	LBuf *b = luaL_testudata(L, i, KBUFFER);
	KRegion out;
	LKernel *o;
	int j;

	if (!r && !b)
		luaL_argerror(L, i, lua_pushfstring(L, "buffer or region (B:tile(start, extent)) expected, got %s",
		                                    luaL_typename(L, i)));
	lua_getiuservalue(L, i, 1);
	o = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (o != K)
		luaL_argerror(L, i, "it belongs to another kernel than the stage being recorded");
	if (r)
		return r->r;
	memset(&out, 0, sizeof out);
	out.buf = b->b;
	for (j = 0; j < K->k->buf[b->b].ndim; j++) {
		out.begin[j] = uop_int(K->k->c, 0);
		out.extent[j] = K->k->buf[b->b].shape[j];
	}
	return out;
}

/* The options of the collective operators; kernel.reduce's also take op. */
static const TesselOpt scope_keys[] = {
	{ "op", "string" }, { "scope", "string" }, { "warps", "table" }, { "impl", "string" }, { NULL, NULL }
};

/* The scope from opts.scope (default: cta with kernel.new's block, else
** thread) and opts.warps = {w0, w1}; thread and block indices from
** kernel.new and from the bound loops open around the call. The options
** are checked: scope_keys + 1 (what, kernel.copy...), or scope_keys for
** kernel.reduce. */
static const char *
scope_arg(lua_State *L, int opts, LKernel *K, KScope *s, const char *what)
{
	UOp *thr[3], *blk[3];
	KScopeKind kind = KS_THREAD;
	int64_t w0 = 0, w1 = 0;
	const char *force = NULL;
	int i;
	Err e = { "" };

	for (i = 0; i < 3; i++) {
		thr[i] = K->blk[i] ? krange_var(K->blk[i]) : NULL;
		blk[i] = K->grid[i] ? krange_var(K->grid[i]) : NULL;
	}
	for (i = 0; i < K->nf; i++)
		if (K->f[i].kind == 1) {
			HwAxis h = krange_hw(K->f[i].head);

			if (h >= HW_THREAD_X && h <= HW_THREAD_Z)
				thr[h - HW_THREAD_X] = krange_var(K->f[i].head);
			else if (hwaxis_is_block(h))
				blk[h - HW_BLOCK_X] = krange_var(K->f[i].head);
		}
	if (thr[0] || thr[1] || thr[2])
		kind = KS_CTA;
	if (tessel_checkopts(L, opts, what, strcmp(what, "kernel.reduce") == 0 ? scope_keys : scope_keys + 1)) {
		if (lua_getfield(L, opts, "scope") == LUA_TSTRING && kscope_kind_parse(lua_tostring(L, -1), &kind) < 0)
			luaL_error(L, "%s: unknown scope %s (thread, warp, warpgroup, cta, kernel)", what, lua_tostring(L, -1));
		if (lua_getfield(L, opts, "warps") == LUA_TTABLE) {
			int ok0, ok1;

			tessel_checkseq(L, -1, "warps");
			lua_geti(L, -1, 1);
			lua_geti(L, -2, 2);
			w0 = lua_tointegerx(L, -2, &ok0);
			w1 = lua_tointegerx(L, -1, &ok1);
			if (!ok0 || !ok1 || luaL_len(L, -3) != 2)
				luaL_error(L, "%s: warps is {w0, w1}, two integers", what);
			lua_pop(L, 2);
			kind = KS_CTA;
		}
		/* the string lives in the options table, which stays on the stack */
		if (lua_getfield(L, opts, "impl") == LUA_TSTRING)
			force = lua_tostring(L, -1);
		lua_pop(L, 3);
	}
	if (kernel_scope(K->k, kind, thr, blk, w0, w1, s, &e) < 0)
		lk_err(L, &e);
	return force;
}

static int
record_op(lua_State *L, LKernel *K, UOp *st, const KDispatch *d, const Err *e)
{
	if (!st)
		return lk_err(L, e);
	lk_append(L, K, st);
	lua_pushstring(L, d->impl);
	lua_pushstring(L, d->reason);
	return 2;
}

/* kernel.copy(dst, src [, {scope=, warps=, impl=}]) */
static int
l_copy(lua_State *L)
{
	LKernel *K = lk_staging(L, "kernel.copy");
	KRegion dst, src;
	KScope s;
	KDispatch d;
	Err e = { "" };
	const char *force;

	lua_settop(L, 3);
	dst = region_arg(L, 1, K);
	src = region_arg(L, 2, K);
	force = scope_arg(L, 3, K, &s, "kernel.copy");
	return record_op(L, K, kernel_op_copy(K->k, &s, &dst, &src, force, &d, &e), &d, &e);
}

/* kernel.fill(dst, value [, opts]) */
static int
l_fill(lua_State *L)
{
	LKernel *K = lk_staging(L, "kernel.fill");
	KRegion dst;
	KScope s;
	KDispatch d;
	Err e = { "" };
	const char *force;
	UOp *v;
	int ki;

	lua_settop(L, 3);
	dst = region_arg(L, 1, K);
	force = scope_arg(L, 3, K, &s, "kernel.fill");
	lua_getfield(L, LUA_REGISTRYINDEX, STAGING);
	ki = lua_gettop(L);
	v = lk_operand(L, 2, ki, K->k->buf[dst.buf].dtype, "kernel.fill");
	return record_op(L, K, kernel_op_fill(K->k, &s, &dst, v, force, &d, &e), &d, &e);
}

/* kernel.reduce(dst, src [, {op = "add" | "max" | "mul", scope=, impl=}]) */
static int
l_reduce(lua_State *L)
{
	LKernel *K = lk_staging(L, "kernel.reduce");
	KRegion dst, src;
	KScope s;
	KDispatch d;
	Err e = { "" };
	const char *force;
	Op op = OP_ADD;

	lua_settop(L, 3);
	dst = region_arg(L, 1, K);
	src = region_arg(L, 2, K);
	if (tessel_checkopts(L, 3, "kernel.reduce", scope_keys) && lua_getfield(L, 3, "op") != LUA_TNIL) {
		const char *o = lua_tostring(L, -1);

		op = strcmp(o, "add") == 0 || strcmp(o, "sum") == 0 ? OP_ADD : strcmp(o, "max") == 0 ? OP_MAX
		   : strcmp(o, "mul") == 0 || strcmp(o, "prod") == 0 ? OP_MUL : OP_COUNT;
		if (op == OP_COUNT)
			return luaL_error(L, "kernel.reduce: unknown op %s (add, max, mul)", o);
	}
	lua_settop(L, 3);
	force = scope_arg(L, 3, K, &s, "kernel.reduce");
	return record_op(L, K, kernel_op_reduce(K->k, &s, op, &dst, &src, force, &d, &e), &d, &e);
}

/* kernel.gemm(C, A, B [, opts]): C += A @ B */
static int
l_gemm(lua_State *L)
{
	LKernel *K = lk_staging(L, "kernel.gemm");
	KRegion c, a, b;
	KScope s;
	KDispatch d;
	Err e = { "" };
	const char *force;

	lua_settop(L, 4);
	c = region_arg(L, 1, K);
	a = region_arg(L, 2, K);
	b = region_arg(L, 3, K);
	force = scope_arg(L, 4, K, &s, "kernel.gemm");
	return record_op(L, K, kernel_op_gemm(K->k, &s, &c, &a, &b, force, &d, &e), &d, &e);
}

static const HelpReg kfuncs[] = {
	{ "range", l_range,
	  "kernel.range(n [, name | {name=, type=, bind=}]): a loop, inside a stage\n"
	  "for i in kernel.range(n [, opts]) do ... end records a loop over i in [0, n).\n"
	  "type: LOOP (default), REDUCE, GLOBAL, LOCAL, UPCAST, ... (tinygrad's axis types);\n"
	  "bind: block.x/y/z, thread.x/y/z, warp, lane (a thread-bound loop selects the thread)." },
	{ "when", l_when,
	  "kernel.when(cond, function() ... end): statements that run where cond holds" },
	{ "barrier", l_barrier,
	  "kernel.barrier(): every thread of the block waits here (__syncthreads)" },
	{ "cp_async_commit", l_cp_async_commit,
	  "kernel.cp_async_commit(): the thread's cp.async issued since its last commit become one\n"
	  "group (cp.async.commit_group); kernel.copy(dst, src, {impl = \"cp_async\"}) issues them" },
	{ "cp_async_wait", l_cp_async_wait,
	  "kernel.cp_async_wait(n): waits until at most the n most recent committed groups of the\n"
	  "thread are in flight (cp.async.wait_group n); the older ones have landed. Other threads\n"
	  "see them after a kernel.barrier(). The interpreter reports an access to a destination\n"
	  "before its wait, and copies still in flight when a thread ends." },
	{ "mbarrier_init", l_mbarrier_init,
	  "kernel.mbarrier_init(bar, {s}, count): element bar[s] of a shared uint64 buffer becomes an\n"
	  "mbarrier expecting count arrivals a phase (mbarrier.init; one thread does it, then a\n"
	  "kernel.barrier() before others use it)" },
	{ "mbarrier_arrive", l_mbarrier_arrive,
	  "kernel.mbarrier_arrive(bar, {s} [, {tx = bytes}]): one arrival on bar[s]; with tx, first\n"
	  "expect that many bytes of TMA transactions (mbarrier.arrive.expect_tx). A phase completes\n"
	  "when its arrivals and its bytes are all in; then TMAs attached to it land" },
	{ "mbarrier_wait", l_mbarrier_wait,
	  "kernel.mbarrier_wait(bar, {s}, parity): wait until the phase of that parity (0 or 1) has\n"
	  "completed (try_wait.parity in a loop); parity 1 passes on a fresh barrier. The interpreter\n"
	  "reports a wait that can never pass (deadlock), with the barrier's state" },
	{ "tma", l_tma,
	  "kernel.tma(dst, src, bar, {s}): Hopper's bulk tensor copy of the global tile src into the\n"
	  "shared tile dst, completing its bytes on mbarrier bar[s]. The box and the swizzle (128B,\n"
	  "64B, 32B or none) are decided by enumerating dst's layout; a tile wider than the swizzle\n"
	  "is several boxes. One thread issues it: put it under kernel.when(k.tx == 0, ...), with\n"
	  "kernel.mbarrier_arrive(bar, {s}, {tx = plan.bytes}). Returns the plan: {swizzle, box\n"
	  "(innermost first), boxes, bytes, reason}. Refused with the element that breaks each mode" },
	{ "atomic", l_atomic,
	  "kernel.atomic(op, buf, key, value [, old, okey]): one atomic read-modify-write of\n"
	  "buf[key] (a global or shared buffer): op \"add\" (int32, uint32, float32), \"max\" or\n"
	  "\"min\" (int32, uint32), \"exch\" (int32, uint32, float32); value of the buffer's dtype.\n"
	  "With old, okey: the value before goes to the register element old[okey]. CUDA's\n"
	  "atomicAdd/atomicMax/atomicMin/atomicExch. Atomics never race with each other; a plain\n"
	  "access of what another block wrote is ordered by kernel.fence() then an atomic in the\n"
	  "writer, and the atomic (on the same element) then kernel.fence() in the reader (the\n"
	  "last block of a split-k reduction). Global temporaries start at zero" },
	{ "fence", l_fence,
	  "kernel.fence([scope]): a memory fence, scope \"gpu\" (default: __threadfence, what\n"
	  "orders memory between blocks with an atomic, see kernel.atomic) or \"block\"\n"
	  "(__threadfence_block)" },
	{ "shuffle", l_shuffle,
	  "kernel.shuffle(value, lane): value as lane `lane` (0..31) of the same warp holds it\n"
	  "(__shfl_sync over the full warp: every lane of the warp must reach it)" },
	{ "mma", l_mma,
	  "kernel.mma(atom, D, A, B, C): D = A B + C by a CuTe MMA atom over the warp\n"
	  "(cute.mma_atoms() lists them; SM70/SM80 atoms). D, A, B, C are register buffers of\n"
	  "the atom's values per thread; lane t's A register v holds A[m, k], m + k*M = A(t, v)" },
	{ "ldmatrix", l_ldmatrix,
	  "kernel.ldmatrix(D, S, {i, j} [, {x = 4, trans = false}]): the warp's ldmatrix of x 8x8\n"
	  "matrices of 16-bit elements from the shared buffer S into the register buffer D (2x values\n"
	  "a lane). Lane 8m + r names row r of matrix m: the 8 elements from S[i, j]'s offset (a\n"
	  "multiple of 8). Lane t gets elements 2m, 2m+1 of D from matrix m: row t//4, columns\n"
	  "2(t%4), 2(t%4)+1 (trans: rows 2(t%4), 2(t%4)+1, column t//4), the m16n8k16 fragments" },
	{ "wgmma", l_wgmma,
	  "kernel.wgmma(D, A, B [, {b_nk =, zero =}]): sm_90a's wgmma.mma_async m64nNk16 over the warpgroup (128 threads\n"
	  "from a multiple of 128): D += A B in float32. A is a 64x16 (m, k) region of a shared\n"
	  "float16/bfloat16 buffer (As:tile({s, 0, k0}, {1, 64, 16})), B a 16xN (k, n) region of one\n"
	  "(N a multiple of 8, 8 to 256), D a float32 register buffer of N/2 elements: thread t\n"
	  "(warp w, lane l) holds C[16w + l//4 + 8((v//2)%2), 8(v//4) + 2(l%4) + v%2] in element v.\n"
	  "Each operand's layout must be a GMMA canonical form (K- or MN-major; 128B, 64B, 32B\n"
	  "swizzle or none) at every start its loops can give: refused otherwise, with the element\n"
	  "that breaks it (kernel.wgmma_desc shows the descriptor). A may instead come from registers\n"
	  "(the RS form): 8 elements of a float16/bfloat16 register buffer along its last dimension\n"
	  "(P:tile({j, 0}, {1, 8}), or a buffer of 8), element i at row 16w + l//4 + 8((i//2)%2),\n"
	  "column 2(l%4) + i%2 + 8(i//4): D's values 8j..8j+7 are the A fragment of its columns\n"
	  "16j..16j+15 (attention's P, no shared memory). Asynchronous: kernel.wgmma_fence() before\n"
	  "the first and after other accesses to D or to A's registers, kernel.wgmma_commit(), then\n"
	  "kernel.wgmma_wait(n) before D or A's registers are read or written again. Options:\n"
	  "{b_nk = true} (B's region given N x 16, (n, k)), {zero = true} (D = A B: D's old values\n"
	  "are not read, so the first product of a sum needs no zeroing)" },
	{ "wgmma_fence", l_wgmma_fence,
	  "kernel.wgmma_fence(): wgmma.fence.sync.aligned: orders this thread's accesses to the\n"
	  "accumulators before the wgmmas that follow (needed before the first one)" },
	{ "setmaxnreg", l_setmaxnreg,
	  "kernel.setmaxnreg(n, \"inc\" | \"dec\"): the warpgroup's threads raise or lower their register\n"
	  "budget to n (a multiple of 8 from 24 to 256; setmaxnreg.sync.aligned, warpgroup-wide). A\n"
	  "producer warpgroup gives registers up (\"dec\") for the consumers' accumulators (\"inc\");\n"
	  "the CUDA kernel gets __launch_bounds__(threads, 1). No value changes (the interpreter skips it)" },
	{ "wgmma_commit", l_wgmma_commit,
	  "kernel.wgmma_commit(): the wgmmas issued since the last commit become one group\n"
	  "(wgmma.commit_group.sync.aligned)" },
	{ "wgmma_wait", l_wgmma_wait,
	  "kernel.wgmma_wait(n): waits until at most the n (0 to 7) most recent committed wgmma\n"
	  "groups are in flight (wgmma.wait_group.sync.aligned n); their accumulators are then\n"
	  "readable" },
	{ "wgmma_desc", l_wgmma_desc,
	  "kernel.wgmma_desc(region, \"A\" | \"B\" [, {var = value} [, {b_nk = true}]]): the GMMA shared-memory\n"
	  "descriptor wgmma reads the region through: {major = \"K\" | \"MN\", swizzle = \"128B\" |\n"
	  "\"64B\" | \"32B\" | \"interleave\", layout_type, lbo, sbo (bytes), start (bytes, at the\n"
	  "binding; other variables 0), starts (verified), desc (hex, the buffer at address 0)}" },
	{ "copy", l_copy,
	  "kernel.copy(dst, src [, {scope=, warps=, impl=}]): a collective copy; impl, reason\n"
	  "dst and src are buffers or regions (B:tile({i0, j0}, {32, 32})) of one shape. The scope\n"
	  "(thread, warp, warpgroup, cta, kernel; warps = {0, 4} for a subset of the cta; default\n"
	  "cta inside thread-bound code, else thread) shares the work, consecutive threads on\n"
	  "consecutive elements. The widest vector both layouts allow is chosen (vector8/4/2,\n"
	  "scalar) and said, with what ruled out wider ones; impl = \"vector4\" forces one.\n"
	  "impl = \"cp_async\" (global to shared, 16-byte runs proved in both layouts) issues one\n"
	  "cp.async a unit and waits for nothing: kernel.cp_async_commit() and\n"
	  "kernel.cp_async_wait(n) follow, then a barrier before other threads read the tile." },
	{ "fill", l_fill,
	  "kernel.fill(dst, value [, {scope=, warps=, impl=}]): every element of dst set, as kernel.copy\n"
	  "shares work" },
	{ "reduce", l_reduce,
	  "kernel.reduce(dst, src [, {op = \"add\"|\"max\"|\"mul\", scope=, warps=, impl=}]): dst = op over src\n"
	  "dst spans the outer dimensions of src. impl rows: each thread owns whole outputs; tree:\n"
	  "one output for a power-of-two cta (partials, then a shared-memory tree with barriers)." },
	{ "gemm", l_gemm,
	  "kernel.gemm(C, A, B [, {scope=, warps=, impl=}]): C += A @ B on the last two dimensions of each\n"
	  "region (the options as kernel.copy's)\n"
	  "impl fma: each thread of the scope owns elements of C and loops over K." },
	{ NULL, NULL, NULL }
};

static const HelpReg bmeths[] = {
	{ "tile", b_tile, "B:tile(start, extent): the region of B from start ({i, j}) spanning extent ({32, 32})" },
	{ NULL, NULL, NULL }
};

/* Into the kernel table on the stack top, and B:tile into the buffers' methods. */
void
tessel_open_kernel_stmt(lua_State *L)
{
	luaL_newmetatable(L, KITER);
	lua_pop(L, 1);
	luaL_newmetatable(L, KREGION);
	lua_pop(L, 1);
	luaL_getmetatable(L, KBUFFER);
	lua_getfield(L, -1, "methods");
	help_setfuncs(L, bmeths, "kernel.Buffer:");
	lua_pop(L, 2);
	help_setfuncs(L, kfuncs, "kernel.");
}

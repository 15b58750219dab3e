/* lua_dist.c - the dist table: distributed programs (interp/dist.h) and their NCCL export (backends/nccl.c). */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "../backends/backend.h"
#include "../interp/dist/dist.h"
#include "help.h"
#include "tessel.h"

#define DPROG "dist.Program"
#define DBOX  "dist.Buffers"

typedef struct LDist {
	DistProgram *p;
} LDist;

/* TBufs (and a simulation's state) anchored on the stack, freed by the collector */
typedef struct DBox {
	TBuf *b;
	int n;
	DistState st;
} DBox;

static int
box_gc(lua_State *L)
{
	DBox *x = luaL_checkudata(L, 1, DBOX);
	int i;

	for (i = 0; x->b && i < x->n; i++)
		tbuf_free(&x->b[i]);
	free(x->b);
	x->b = NULL;
	x->n = 0;
	dist_state_free(&x->st);
	return 0;
}

static DBox *
new_box(lua_State *L, int n)
{
	DBox *x = lua_newuserdatauv(L, sizeof *x, 0);

	memset(x, 0, sizeof *x);
	luaL_setmetatable(L, DBOX);
	if (n && !(x->b = calloc((size_t)n, sizeof *x->b)))
		luaL_error(L, "dist: out of memory");
	x->n = n;
	return x;
}

static LDist *
checkd(lua_State *L, int i)
{
	LDist *x = luaL_checkudata(L, i, DPROG);

	if (!x->p)
		luaL_error(L, "dist: the program was freed");
	return x;
}

static int
err(lua_State *L, const Err *e)
{
	return luaL_error(L, "%s", e->msg);
}

/* dist.new(n [, axis]) or dist.new{devices = n, axis = "gpuid"} */
static int
d_new(lua_State *L)
{
	lua_Integer n;
	const char *axis = "gpuid";
	LDist *x;
	Err e = { "" };

	if (lua_istable(L, 1)) {
		static const TesselOpt keys[] = { { "devices", "integer" }, { "axis", "string" }, { NULL, NULL } };

		tessel_checkopts(L, 1, "dist.new", keys);
		if (lua_getfield(L, 1, "devices") == LUA_TNIL)
			return luaL_error(L, "dist.new: give the number of devices, dist.new{devices = n}");
		n = lua_tointeger(L, -1);
		if (lua_getfield(L, 1, "axis") != LUA_TNIL)
			axis = lua_tostring(L, -1);   /* the table keeps the string */
	} else {
		n = luaL_checkinteger(L, 1);
		axis = luaL_optstring(L, 2, "gpuid");
	}
	x = lua_newuserdatauv(L, sizeof *x, 0);
	x->p = NULL;
	luaL_setmetatable(L, DPROG);
	if (n < 1 || n > 4096)
		return luaL_error(L, "dist.new: %I devices; 1 to 4096 are supported", n);
	if (!(x->p = dist_new((int)n, axis, &e)))
		return err(L, &e);
	return 1;
}

static int
d_gc(lua_State *L)
{
	LDist *x = luaL_checkudata(L, 1, DPROG);

	dist_free(x->p);
	x->p = NULL;
	return 0;
}

static void
check_shape(lua_State *L, int i, AxeShape *sh)
{
	lua_Integer v;
	int k;

	luaL_checktype(L, i, LUA_TTABLE);
	tessel_checkseq(L, i, "dist: a shape");
	sh->n = (int)luaL_len(L, i);
	if (sh->n < 1 || sh->n > AXE_RANK)
		luaL_argerror(L, i, "a shape of 1 to 16 dimensions");
	for (k = 0; k < sh->n; k++) {
		lua_geti(L, i, k + 1);
		v = luaL_checkinteger(L, -1);
		if (v < 1 || v > ((lua_Integer)1 << 40))
			luaL_argerror(L, i, "dimensions from 1 to 2^40");
		sh->v[k] = v;
		lua_pop(L, 1);
	}
}

/* P:tensor(name, dtype, shape, layout [, {partial = true}]) -> name */
static int
d_tensor(lua_State *L)
{
	LDist *x = checkd(L, 1);
	const char *name = luaL_checkstring(L, 2), *dt = luaL_checkstring(L, 3);
	const AxeLayout *al;
	AxeLayout tmp;
	AxeShape sh;
	DType t;
	int partial = 0;
	Err e = { "" };
	static const TesselOpt keys[] = { { "partial", "boolean" }, { NULL, NULL } };

	if (dtype_parse(dt, &t) < 0)
		return luaL_error(L, "P:tensor: unknown dtype \"%s\"", dt);
	check_shape(L, 4, &sh);
	if (!(al = tessel_testaxe(L, 5))) {
		if (axe_parse(luaL_checkstring(L, 5), &tmp, &e) < 0)
			return luaL_error(L, "P:tensor: %s", e.msg);
		al = &tmp;
	}
	if (tessel_checkopts(L, 6, "P:tensor", keys)) {
		lua_getfield(L, 6, "partial");
		partial = lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
	if (dist_tensor(x->p, name, t, &sh, al, partial, &e) < 0)
		return err(L, &e);
	lua_pushstring(L, name);
	return 1;
}

/*
** P:launch(k [, {kernel_buffer = "tensor" | {"tensor", at = element}, ...}]): unnamed global
** buffers bind to the tensor of their name; at binds the buffer to the tensor's storage from
** that element (0-based) on
*/
static int
d_launch(lua_State *L)
{
	LDist *x = checkd(L, 1);
	Kernel *k = tessel_checkkernel(L, 2);
	const char **bind;
	int64_t *at;
	int i, ranged = 0;
	Err e = { "" };

	if (!lua_isnoneornil(L, 3))
		luaL_checktype(L, 3, LUA_TTABLE);
	bind = lua_newuserdatauv(L, sizeof *bind * (size_t)(k->nbuf ? k->nbuf : 1), 0);   /* anchored */
	at = lua_newuserdatauv(L, sizeof *at * (size_t)(k->nbuf ? k->nbuf : 1), 0);
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *b = &k->buf[i];

		bind[i] = NULL;
		at[i] = -1;
		if (lua_istable(L, 3) && lua_getfield(L, 3, b->name) != LUA_TNIL) {
			if (lua_istable(L, -1)) {
				lua_geti(L, -1, 1);
				lua_getfield(L, -2, "at");
				if (lua_type(L, -2) != LUA_TSTRING || !lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0)
					return luaL_error(L, "P:launch: %s = {%s, at = %s}; a ranged binding is {\"tensor\", at = element "
					                  "(0-based, >= 0)}", b->name, luaL_typename(L, -2), luaL_typename(L, -1));
				at[i] = lua_tointeger(L, -1);
				ranged = 1;
				lua_pop(L, 1);
				lua_replace(L, -2);   /* the name in the table's place: the table keeps it alive */
			}
			if (lua_type(L, -1) != LUA_TSTRING)
				return luaL_error(L, "P:launch: %s = a %s; a binding names a tensor of the program", b->name,
				                  luaL_typename(L, -1));
			bind[i] = lua_tostring(L, -1);   /* the string lives in the table */
			lua_pop(L, 1);
			continue;
		}
		if (lua_istable(L, 3))
			lua_pop(L, 1);
	}
	if (lua_istable(L, 3)) {
		/* a key that names no kernel buffer is a typo */
		lua_pushnil(L);
		while (lua_next(L, 3)) {
			if (lua_type(L, -2) != LUA_TSTRING || kernel_find_buffer(k, lua_tostring(L, -2)) < 0)
				return luaL_error(L, "P:launch: the kernel has no buffer %s", lua_type(L, -2) == LUA_TSTRING
				                  ? lua_tostring(L, -2) : luaL_typename(L, -2));
			lua_pop(L, 1);
		}
	}
	if ((i = dist_launch_at(x->p, k, bind, ranged ? at : NULL, &e)) < 0)
		return err(L, &e);
	lua_pushinteger(L, i + 1);
	return 1;
}

/* P:redistribute(src, dst [, {part = j, parts = c}]): the whole, or part j (1-based) of c */
static int
d_redistribute(lua_State *L)
{
	LDist *x = checkd(L, 1);
	const char *src = luaL_checkstring(L, 2), *dst = luaL_checkstring(L, 3);
	Err e = { "" };
	lua_Integer part = 0, parts = 0, blocks = 0;
	DistRedistOpts o;
	int i;
	static const TesselOpt keys[] = { { "part", "integer" }, { "parts", "integer" }, { "via", "string" },
	                                  { "blocks", "integer" }, { NULL, NULL } };

	memset(&o, 0, sizeof o);
	if (tessel_checkopts(L, 4, "P:redistribute", keys)) {
		const char *via;

		lua_getfield(L, 4, "part");
		lua_getfield(L, 4, "parts");
		lua_getfield(L, 4, "via");
		lua_getfield(L, 4, "blocks");
		part = lua_tointeger(L, -4);
		parts = lua_tointeger(L, -3);
		via = lua_tostring(L, -2);
		blocks = lua_tointeger(L, -1);
		if (via && strcmp(via, "nccl") && strcmp(via, "copy") && strcmp(via, "load"))
			return luaL_error(L, "P:redistribute: via = \"%s\"; it is \"nccl\" (the default), \"copy\" (the copy "
			                  "engines) or \"load\" (a kernel loading from the peers)", via);
		o.via = !via || !strcmp(via, "nccl") ? DIST_VIA_NCCL : !strcmp(via, "copy") ? DIST_VIA_COPY : DIST_VIA_LOAD;
		lua_pop(L, 4);
		if ((parts || part) && (parts < 1 || parts > 65536 || part < 1 || part > parts))
			return luaL_error(L, "P:redistribute: part %d of %d; a part is 1 to parts, parts 1 to 65536", (int)part,
			                  (int)parts);
		if (blocks < 0 || blocks > 1024 || (blocks && o.via != DIST_VIA_LOAD))
			return luaL_error(L, "P:redistribute: blocks = %d; blocks (1 to 1024) size the kernel of via = \"load\"",
			                  (int)blocks);
	}
	o.part = (int)part - 1;
	o.parts = (int)parts;
	o.blocks = (int)blocks;
	if ((i = dist_redistribute_opts(x->p, src, dst, &o, &e)) < 0)
		return err(L, &e);
	lua_pushinteger(L, i + 1);
	return 1;
}

/* P:allreduce(src, dst) and the other verbs: the collective named, checked against the layouts */
static int
d_collective(lua_State *L, AxeColl c)
{
	LDist *x = checkd(L, 1);
	Err e = { "" };
	int i;

	if ((i = dist_collective(x->p, c, luaL_checkstring(L, 2), luaL_checkstring(L, 3), &e)) < 0)
		return err(L, &e);
	lua_pushinteger(L, i + 1);
	return 1;
}

static int d_allreduce(lua_State *L) { return d_collective(L, AXE_COLL_ALLREDUCE); }
static int d_reduce_scatter(lua_State *L) { return d_collective(L, AXE_COLL_REDUCE_SCATTER); }
static int d_allgather(lua_State *L) { return d_collective(L, AXE_COLL_ALLGATHER); }
static int d_broadcast(lua_State *L) { return d_collective(L, AXE_COLL_BROADCAST); }
static int d_reduce(lua_State *L) { return d_collective(L, AXE_COLL_REDUCE); }

static int
d_plan(lua_State *L)
{
	LDist *x = checkd(L, 1);
	Buf b;

	buf_init(&b);
	dist_plan(&b, x->p);
	lua_pushlstring(L, b.s ? b.s : "", b.len && b.s[b.len - 1] == '\n' ? b.len - 1 : b.len);
	buf_free(&b);
	return 1;
}

/* inputs {name = tensor} at index i into box->b (per tensor, logical) */
static void
read_inputs(lua_State *L, int i, const DistProgram *p, DBox *box, const char *who)
{
	int t = -1;

	if (lua_isnoneornil(L, i))
		return;
	luaL_checktype(L, i, LUA_TTABLE);
	lua_pushnil(L);
	while (lua_next(L, i)) {
		if (lua_type(L, -2) != LUA_TSTRING || (t = dist_find(p, lua_tostring(L, -2))) < 0)
			luaL_error(L, "%s: no tensor %s", who, lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "(not a name)");
		if (p->t[t].producer >= 0)
			luaL_error(L, "%s: %s is computed by the program, not an input", who, p->t[t].name);
		if (!tessel_testtensor(L, -1))
			luaL_error(L, "%s: inputs.%s is a %s, not a tensor", who, p->t[t].name, luaL_typename(L, -1));
		tessel_realize(L, lua_gettop(L), 0, &box->b[t]);
		if (box->b[t].dtype != p->t[t].dtype || box->b[t].numel != p->t[t].dist.size)
			luaL_error(L, "%s: %s is %I elements of %s; its value here is %I of %s (cast or reshape it)", who,
			           p->t[t].name, (lua_Integer)p->t[t].dist.size, dtype_name(p->t[t].dtype),
			           (lua_Integer)box->b[t].numel, dtype_name(box->b[t].dtype));
		lua_pop(L, 1);
	}
}

/* P:simulate([inputs]) -> {name = logical tensor} for every tensor */
static int
d_simulate(lua_State *L)
{
	LDist *x = checkd(L, 1);
	DistProgram *p = x->p;
	DBox *box;
	int bi, t, *order = NULL;
	static const TesselOpt keys[] = { { "order", "table" }, { NULL, NULL } };

	lua_settop(L, 3);   /* the inputs (or nil) stay at 2, the options at 3 */
	if (tessel_checkopts(L, 3, "P:simulate", keys) && lua_getfield(L, 3, "order") == LUA_TTABLE) {
		order = lua_newuserdatauv(L, sizeof *order * (size_t)(p->ns ? p->ns : 1), 0);
		lua_replace(L, 3);   /* anchored where the options were */
		if (luaL_len(L, -1) != p->ns)
			return luaL_error(L, "P:simulate: order names %d steps; the program has %d", (int)luaL_len(L, -1), p->ns);
		for (t = 0; t < p->ns; t++) {
			lua_geti(L, -1, t + 1);
			if (!lua_isinteger(L, -1))
				return luaL_error(L, "P:simulate: order[%d] is a %s, not a step number", t + 1, luaL_typename(L, -1));
			order[t] = (int)lua_tointeger(L, -1) - 1;
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	box = new_box(L, p->nt);
	bi = lua_gettop(L);
	Err e = { "" };

	read_inputs(L, 2, p, box, "P:simulate");
	if (dist_scatter(p, box->b, &box->st, &e) < 0 || dist_simulate_order(p, NULL, order, &box->st, &e) < 0)
		return err(L, &e);
	lua_newtable(L);
	for (t = 0; t < p->nt; t++) {
		TBuf g;

		if (dist_gather(p, &box->st, t, &g, &e) < 0)
			return err(L, &e);
		tessel_pushtbuf(L, &g);
		tbuf_free(&g);
		lua_setfield(L, -2, p->t[t].name);
	}
	lua_remove(L, bi);
	return 1;
}

/* P:export(dir [, {inputs =, fast =, check = true}]) -> dir, files | nil, message */
static int
d_export(lua_State *L)
{
	LDist *x = checkd(L, 1);
	const char *dir = luaL_checkstring(L, 2);
	BDistExportOpts o;
	DBox *box;
	Buf files;
	Err e = { "" };
	int rc;
	static const TesselOpt keys[] = { { "inputs", "table" }, { "fast", "boolean" }, { "check", "boolean" }, { NULL, NULL } };

	memset(&o, 0, sizeof o);
	lua_settop(L, 3);
	box = new_box(L, x->p->nt);
	if (tessel_checkopts(L, 3, "P:export", keys)) {
		lua_getfield(L, 3, "fast");
		o.fast = lua_toboolean(L, -1);
		if (lua_getfield(L, 3, "check") != LUA_TNIL)
			o.no_check = !lua_toboolean(L, -1);
		lua_pop(L, 2);
		lua_getfield(L, 3, "inputs");
		read_inputs(L, lua_gettop(L), x->p, box, "P:export");
		lua_pop(L, 1);
	}
	o.inputs = box->b;
	buf_init(&files);
	o.files = &files;
	rc = backend_export_dist(x->p, dir, &o, &e);
	return tessel_export_result(L, rc, dir, &files, &e);
}

/* P:kernels(step) -> the kernels of a step: {k} for a launch, {pack = {...}, unpack = {...}} per device */
static int
d_step(lua_State *L)
{
	LDist *x = checkd(L, 1);
	lua_Integer i = luaL_checkinteger(L, 2);
	const DistStep *s;
	Err e = { "" };
	int r, w;

	if (i < 1 || i > x->p->ns)
		return luaL_error(L, "P:step: no step %I (the program has %d)", i, x->p->ns);
	s = &x->p->s[i - 1];
	lua_newtable(L);
	lua_pushstring(L, s->kind == DIST_LAUNCH ? "launch" : axe_coll_name(s->r.coll));
	lua_setfield(L, -2, "kind");
	lua_pushstring(L, s->stream ? "collectives" : "kernels");
	lua_setfield(L, -2, "stream");
	lua_newtable(L);
	for (w = 0; w < 2; w++)
		if (s->wait[w] >= 0) {
			lua_pushinteger(L, s->wait[w] + 1);
			lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
		}
	lua_setfield(L, -2, "after");
	if (s->kind == DIST_REDIST) {
		lua_pushstring(L, dist_via_name(s->via));
		lua_setfield(L, -2, "via");
	}
	if (s->parts) {
		lua_pushinteger(L, s->part + 1);
		lua_setfield(L, -2, "part");
		lua_pushinteger(L, s->parts);
		lua_setfield(L, -2, "parts");
	}
	if (s->kind == DIST_LAUNCH) {
		Kernel *k = kernel_clone(s->k, &e);

		if (!k)
			return err(L, &e);
		tessel_pushkernel(L, k, 0);
		lua_setfield(L, -2, "kernel");
		return 1;
	}
	lua_pushstring(L, s->r.why);
	lua_setfield(L, -2, "why");
	for (w = 0; w < 2; w++) {
		Kernel *const *ks = w ? s->unpack : s->pack;

		lua_newtable(L);
		for (r = 0; r < x->p->ndev; r++) {
			Kernel *k;

			if (!ks[r])
				continue;
			if (!(k = kernel_clone(ks[r], &e)))
				return err(L, &e);
			tessel_pushkernel(L, k, 0);
			lua_rawseti(L, -2, r + 1);
		}
		lua_setfield(L, -2, w ? "unpack" : "pack");
	}
	return 1;
}

static int
d_len(lua_State *L)
{
	lua_pushinteger(L, checkd(L, 1)->p->ns);
	return 1;
}

static const HelpReg meth[] = {
	{ "tensor", d_tensor,
	  "P:tensor(name, dtype, shape, layout [, {partial = true}]) -> name: a tensor of the program. layout is\n"
	  "an Axe layout (or its notation) over m and the program's device axis, e.g. from\n"
	  "axe.dtensor(shape, {{\"gpuid\", 2}}, {\"S(0)\"}). It must be sharded (each element on one device),\n"
	  "replicated (R over every device) or on one device (an offset on gpuid), with every device's\n"
	  "storage dense, [0, count): NCCL sends whole buffers. partial: every device holds a summand of\n"
	  "the whole (what a GEMM sharded on K leaves); its layout replicates." },
	{ "launch", d_launch,
	  "P:launch(k [, bind]) -> step: every device runs kernel k on its own storage. bind maps kernel\n"
	  "buffer names to tensor names ({C = \"Cp\"}); a global buffer not named there binds to the tensor\n"
	  "of its own name. A kernel buffer sees its tensor's local storage row-major, so it must hold\n"
	  "the tensor's count per device (its local shape), or a range of it: {C = {\"Cp\", at = e}} binds\n"
	  "C to the storage from element e (0-based) on, C's count long. Every element is written once,\n"
	  "before it is read. Kernels run in order on one stream, collectives on another (the sums of\n"
	  "peer reduce_scatters on a third): a step waits for the last step ending on each other stream\n"
	  "whose storage it overlaps (P:step(i).after)." },
	{ "redistribute", d_redistribute,
	  "P:redistribute(src, dst) -> step: dst gets src's value in dst's layout, through the NCCL\n"
	  "collective the two layouts need (Section 4.2 of the Axe paper): partial -> sharded is\n"
	  "reduce_scatter, partial -> replicated allreduce, sharded -> replicated allgather, one device ->\n"
	  "all broadcast, partial -> one device reduce; replicated -> sharded keeps each shard locally.\n"
	  "Pack and unpack kernels move elements into and out of NCCL's rank-major order where the layouts\n"
	  "differ from it. A gather to one device and send/recv are refused with the reason.\n"
	  "P:redistribute(src, dst, {part = j, parts = c}): part j (1 to c) of a reduce_scatter, allgather\n"
	  "or allreduce, on a contiguous c'th of every device's buffers, while the kernels go on: a GEMM\n"
	  "launched a part at a time overlaps the collective of the parts before. The layouts must put\n"
	  "each part in NCCL's rank-major order (parts outermost, then devices); an element out of place\n"
	  "is named (docs/distributed.md, \"Overlap\"). via (a reduce_scatter or allgather): \"nccl\"\n"
	  "(the default), \"copy\" (the copy engines, cudaMemcpyPeerAsync to every peer at once, and a\n"
	  "sum kernel on the owner for a reduce_scatter: no SM taken) or \"load\" (a kernel of blocks\n"
	  "blocks, 16 unless told, loading from the peers); the simulation is the same." },
	{ "allreduce", d_allreduce,
	  "P:allreduce(src, dst) -> step: P:redistribute(src, dst), refused unless the layouts call for an\n"
	  "allreduce (src partial, dst replicated). P:reduce_scatter, P:allgather, P:broadcast and\n"
	  "P:reduce are the same for the other collectives: the tensor spec's verbs, checked by Axe." },
	{ "reduce_scatter", d_reduce_scatter,
	  "P:reduce_scatter(src, dst) -> step: src partial, dst sharded (see P:allreduce)." },
	{ "allgather", d_allgather,
	  "P:allgather(src, dst) -> step: src sharded, dst replicated or sharded otherwise (see P:allreduce)." },
	{ "broadcast", d_broadcast,
	  "P:broadcast(src, dst) -> step: src on one device, dst on all (see P:allreduce)." },
	{ "reduce", d_reduce,
	  "P:reduce(src, dst) -> step: src partial, dst on one device (see P:allreduce)." },
	{ "plan", d_plan,
	  "P:plan() -> string: the devices, every tensor (kind, local shape, layout) and every step with\n"
	  "its collective, the bytes a device sends and why (also tostring(P))." },
	{ "simulate", d_simulate,
	  "P:simulate([inputs] [, {order = {steps}}]) -> {name = tensor}: runs the program on the CPU, a\n"
	  "device at a time (kernels in the interpreter, collectives as sums and copies), and returns\n"
	  "every tensor's logical value read back from the devices (a partial one summed). inputs:\n"
	  "{name = tensor}; missing ones are drawn as exports draw them. order: the step numbers in the\n"
	  "order to run them, refused unless each step follows its stream's earlier steps and the step\n"
	  "it waits for (any such order gives the same values)." },
	{ "export", d_export,
	  "P:export(dir [, {inputs =, fast =, check = true}]) -> dir, files | nil, message: CUDA kernels and\n"
	  "host code on NCCL, one thread a GPU (docs/distributed.md): plan.txt, a .cu file per kernel,\n"
	  "dist.cu, main.cu and a Makefile; `make check` runs it once against the simulation's outputs\n"
	  "(saved in data/), `make time` times it. check = false skips the simulation (large sizes)." },
	{ "step", d_step,
	  "P:step(i) -> {kind =, kernel = k} for a launch, {kind = collective, why =, pack = {k...},\n"
	  "unpack = {k...}} for a redistribution (one kernel a device, where one is needed); every step\n"
	  "also has stream (\"kernels\" or \"collectives\"), after (the steps of other streams it waits\n"
	  "for), via (a redistribution's: nccl, copy or load) and, for a part, part and parts." },
	{ NULL, NULL, NULL }
};

static const HelpReg funcs[] = {
	{ "new", d_new,
	  "dist.new(n [, axis]) or dist.new{devices = n, axis = \"gpuid\"} -> P: an empty distributed program\n"
	  "on n devices of the device axis (gpuid by default). Add tensors with P:tensor, steps with\n"
	  "P:launch and P:redistribute; print(P) shows the plan; P:simulate runs it on the CPU;\n"
	  "P:export writes CUDA and NCCL host code." },
	{ NULL, NULL, NULL }
};

int
luaopen_tessel_dist(lua_State *L)
{
	luaL_newmetatable(L, DBOX);
	lua_pushcfunction(L, box_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	luaL_newmetatable(L, DPROG);
	lua_pushcfunction(L, d_gc);
	lua_setfield(L, -2, "__gc");
	lua_pushcfunction(L, d_plan);
	lua_setfield(L, -2, "__tostring");
	lua_pushcfunction(L, d_len);
	lua_setfield(L, -2, "__len");
	lua_newtable(L);
	help_setfuncs(L, meth, "dist.Program:");
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	lua_newtable(L);
	help_setfuncs(L, funcs, "dist.");
	help_add(L, -1, "dist",
	         "dist: distributed programs. Tensors carry Axe layouts over a device axis (sharded,\n"
	         "replicated, on one device, or partial sums); every device runs the same kernels on its\n"
	         "storage, and redistributions become NCCL collectives (allgather, reduce_scatter,\n"
	         "allreduce, broadcast, reduce). dist.new, P:tensor, P:launch, P:redistribute, P:plan,\n"
	         "P:simulate, P:export. docs/distributed.md.");
	return 1;
}

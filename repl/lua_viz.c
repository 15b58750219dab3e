/* lua_viz.c - the `viz` Lua table: the drawable protocol, Graphviz pictures (render, dot) and DAGs (graph). */
#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../viz/gv.h"
#include "../viz/viz.h"
#include "help.h"
#include "tessel.h"

#define SCENE "tessel.Scene"
#define GVCTX "tessel.GvContext"
#define GRAPH "viz.Graph"
#define GVKEY "tessel.viz.gvc"   /* registry: this session's Graphviz context */

/* A scene being drawn, anchored so that a Lua error frees it. */
typedef struct LScene {
	Scene s;
	int target;
	const char *op;     /* the function drawing it, for messages: "show", "viz.render" */
} LScene;

static int
scene_gc(lua_State *L)
{
	LScene *u = luaL_checkudata(L, 1, SCENE);

	scene_free(&u->s);
	return 0;
}

static LScene *
push_scene(lua_State *L, int target, const char *op)
{
	LScene *u = lua_newuserdatauv(L, sizeof *u, 0);

	scene_init(&u->s);   /* a safe empty state before anything can fail */
	u->target = target;
	u->op = op;
	luaL_setmetatable(L, SCENE);
	return u;
}

Scene *
tessel_toscene(lua_State *L, int i)
{
	return &((LScene *)luaL_checkudata(L, i, SCENE))->s;
}

int
tessel_scene_target(lua_State *L, int i)
{
	return ((LScene *)luaL_checkudata(L, i, SCENE))->target;
}

/*
** Options
*/
static int
int_field(lua_State *L, const char *op, int t, const char *k, int dflt, int lo, int hi, int *given)
{
	lua_Integer v;
	int isint;

	if (lua_getfield(L, t, k) == LUA_TNIL) {
		lua_pop(L, 1);
		return dflt;
	}
	v = lua_tointegerx(L, -1, &isint);
	if (!isint || v < lo || v > hi)
		luaL_error(L, "%s: opts.%s must be an integer in %d..%d, got %s", op, k, lo, hi,
		           luaL_tolstring(L, -1, NULL));
	lua_pop(L, 1);
	if (given)
		*given = 1;
	return (int)v;
}

/* What every picture takes (apply_common), and the grids' options (tessel_vizopts);
** viz.render also takes format, the terminal color. */
static const TesselOpt picture_keys[] = {
	{ "title", "string|number" }, { "labels", "boolean|function" }, { "scheme", "string|function" }, { NULL, NULL }
};
static const TesselOpt grid_keys[] = {
	{ "max_rows", "integer" }, { "max_cols", "integer" }, { "elem_bytes", "integer" }, { "dtype", "string" },
	{ "compact", "boolean" }, { NULL, NULL }
};
static const TesselOpt render_keys[] = { { "format", "string" }, { NULL, NULL } };
static const TesselOpt term_keys[] = { { "color", "boolean" }, { NULL, NULL } };

/* The options table at opts of the scene u is drawn for: its keys are own's (the type's
** own options, which win over the shared ones of the same name), the picture's, the
** grid's when grid is set, format for viz.render, color for the terminal. */
static void
check_vizopts(lua_State *L, int opts, const LScene *u, const TesselOpt *own, int grid)
{
	const TesselOpt *extra = u->target == TESSEL_TERM ? term_keys : strcmp(u->op, "viz.render") == 0
	                       ? render_keys : NULL;
	char key[64];

	opts = lua_absindex(L, opts);
	if (lua_type(L, opts) != LUA_TTABLE)
		return;
	lua_pushnil(L);
	while (lua_next(L, opts)) {
		if (tessel_isopt(L, u->op, own) || tessel_isopt(L, u->op, picture_keys)
		|| (grid && tessel_isopt(L, u->op, grid_keys)) || tessel_isopt(L, u->op, extra)) {
			lua_pop(L, 1);
			continue;
		}
		if (lua_type(L, -2) == LUA_TSTRING)
			snprintf(key, sizeof key, "'%.40s'", lua_tostring(L, -2));
		else
			snprintf(key, sizeof key, "[%s]", luaL_tolstring(L, -2, NULL));
		lua_settop(L, opts);
		if (own && own->name) {
			tessel_pushoptnames(L, own);
			lua_pushstring(L, ", ");
		}
		tessel_pushoptnames(L, picture_keys);
		if (grid) {
			lua_pushstring(L, ", ");
			tessel_pushoptnames(L, grid_keys);
		}
		if (extra) {
			lua_pushstring(L, ", ");
			tessel_pushoptnames(L, extra);
		}
		lua_concat(L, lua_gettop(L) - opts);
		luaL_error(L, "%s: unknown option %s (the options are: %s)", u->op, key, lua_tostring(L, -1));
	}
}

int
tessel_vizopts(lua_State *L, int opts, int scene, VizOpts *o, const TesselOpt *own)
{
	int target = tessel_scene_target(L, scene), gave_cols = 0, t;
	const char *op = ((LScene *)lua_touserdata(L, scene))->op;

	opts = lua_absindex(L, opts);
	check_vizopts(L, opts, lua_touserdata(L, scene), own, 1);
	viz_opts_default(o);
	if (target == TESSEL_GRAPHVIZ) {
		o->max_rows = o->max_cols = VIZ_GV_MAX_DIM;
		o->color = 0;
	} else {
		o->color = tessel_want_color(L, opts);
	}
	if (lua_type(L, opts) != LUA_TTABLE)
		return 0;
	o->max_rows = int_field(L, op, opts, "max_rows", o->max_rows, 1, VIZ_MAX_DIM, NULL);
	o->max_cols = int_field(L, op, opts, "max_cols", o->max_cols, 1, VIZ_MAX_DIM, &gave_cols);
	o->elem_bytes = int_field(L, op, opts, "elem_bytes", o->elem_bytes, 1, 16, NULL);
	if ((t = lua_getfield(L, opts, "dtype")) != LUA_TNIL) {
		const char *d = lua_tostring(L, -1);
		int eb = t == LUA_TSTRING ? viz_dtype_bytes(d) : -1;

		if (eb < 0)
			luaL_error(L, "%s: opts.dtype: unknown dtype %s (f16, bf16, f32, f64, i8, int32, ...)",
			           op, luaL_tolstring(L, -1, NULL));
		o->elem_bytes = eb;
	}
	lua_pop(L, 1);
	if ((t = lua_getfield(L, opts, "scheme")) == LUA_TSTRING) {
		o->scheme = viz_scheme_parse(lua_tostring(L, -1));
		if (o->scheme < 0)
			luaL_error(L, "%s: opts.scheme: unknown colour scheme '%s' (value, thread, warp, device, "
			           "bank, none, auto, or a function of the cell)", op, lua_tostring(L, -1));
	} else if (t != LUA_TNIL && t != LUA_TFUNCTION) {
		luaL_error(L, "%s: opts.scheme must be a scheme name or a function, got %s", op,
		           luaL_typename(L, -1));
	}
	lua_pop(L, 1);
	lua_getfield(L, opts, "compact");
	o->compact = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return gave_cols;
}

/*
** What every picture shares: a title, cell labels, a colour function.
*/
static void
push_cellinfo(lua_State *L, const Scene *s, const Grid *g, int r, int c, const Cell *cell)
{
	int j;

	lua_createtable(L, 0, 8);
	lua_pushinteger(L, g - s->grid);
	lua_setfield(L, -2, "panel");
	lua_pushinteger(L, r);
	lua_setfield(L, -2, "row");
	lua_pushinteger(L, c);
	lua_setfield(L, -2, "col");
	lua_pushboolean(L, (cell->flags & CELL_EMPTY) != 0);
	lua_setfield(L, -2, "empty");
	if (cell->flags & CELL_EMPTY)
		return;
	lua_pushinteger(L, cell->value);
	lua_setfield(L, -2, g->tv ? "thread" : "value");
	if (g->tv) {
		lua_pushinteger(L, cell->aux);
		lua_setfield(L, -2, "v");
	}
	for (j = 0; j < cell->nline; j++)
		lua_pushstring(L, cell->line[j]);
	if (cell->nline > 0) {
		lua_concat(L, cell->nline);
		lua_setfield(L, -2, "label");
	}
}

/* A colour from Lua: nil/false (none), 0xRRGGBB, "#rrggbb" or "#rgb". */
static int
to_rgb(lua_State *L, int i, int32_t *rgb, Err *e)
{
	const char *s;
	size_t n;

	*rgb = -1;
	if (!lua_toboolean(L, i))
		return 0;
	if (lua_isinteger(L, i) && lua_tointeger(L, i) >= 0 && lua_tointeger(L, i) <= 0xffffff) {
		*rgb = (int32_t)lua_tointeger(L, i);
		return 0;
	}
	if (lua_type(L, i) == LUA_TSTRING) {
		s = lua_tolstring(L, i, &n);
		if (viz_color_parse(s, n, rgb) == 0)
			return 0;
	}
	return err_set(e, "a colour is \"#rrggbb\", \"#rgb\", an integer 0xRRGGBB or nil, not %s",
	               lua_type(L, i) == LUA_TSTRING ? lua_tostring(L, i) : luaL_typename(L, i));
}

typedef struct ColorCtx {
	lua_State *L;
	int fn;
	const Scene *s;
} ColorCtx;

/* scene_colorize's callback: the Lua function, under pcall, so that an
** error in it comes back as a message rather than a jump through C. */
static int
color_cb(void *ctx, const Grid *g, int r, int c, const Cell *cell, int32_t *rgb, Err *e)
{
	ColorCtx *k = ctx;
	lua_State *L = k->L;
	int rc;

	lua_pushvalue(L, k->fn);
	push_cellinfo(L, k->s, g, r, c, cell);
	if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
		err_set(e, "opts.scheme: the colour function failed at panel %d cell (%d,%d): %s",
		        (int)(g - k->s->grid), r, c,
		        lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(a non-string error)");
		lua_pop(L, 1);
		return -1;
	}
	rc = to_rgb(L, -1, rgb, e);
	lua_pop(L, 1);
	if (rc < 0) {
		char m[sizeof e->msg];

		snprintf(m, sizeof m, "%s", e->msg);
		return err_set(e, "opts.scheme: the colour function returned a bad colour at panel %d "
		               "cell (%d,%d): %s", (int)(g - k->s->grid), r, c, m);
	}
	return 0;
}

/* opts.labels = function(cell) -> string: new cell labels, lines split at '\n'. */
static void
relabel(lua_State *L, const char *op, int fn, Scene *s)
{
	int i, r, c;

	for (i = 0; i < s->ngrid; i++) {
		Grid *g = &s->grid[i];

		for (r = 0; r < g->rows; r++)
			for (c = 0; c < g->cols; c++) {
				Cell *cell = scene_cell(g, r, c);
				const char *p, *q;

				lua_pushvalue(L, fn);
				push_cellinfo(L, s, g, r, c, cell);
				if (lua_pcall(L, 1, 1, 0) != LUA_OK)
					luaL_error(L, "%s: opts.labels: the label function failed at panel %d cell (%d,%d): %s",
					           op, i, r, c, lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
					                                                 : "(a non-string error)");
				p = lua_tostring(L, -1);
				cell->nline = 0;
				if (p && *p)
					for (;; p = q + 1) {
						q = strchr(p, '\n');
						scene_label(cell, "%.*s", q ? (int)(q - p) : (int)strlen(p), p);
						if (!q)
							break;
					}
				lua_pop(L, 1);
			}
	}
}

static void
apply_common(lua_State *L, const char *op, int opts, Scene *s)
{
	Err e;
	int t;

	if (!opts || lua_type(L, opts) != LUA_TTABLE)
		return;
	if ((t = lua_getfield(L, opts, "title")) != LUA_TNIL) {
		buf_reset(&s->title);
		emit(&s->title, "%s", luaL_tolstring(L, -1, NULL));
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	t = lua_getfield(L, opts, "labels");
	if (t == LUA_TBOOLEAN && !lua_toboolean(L, -1))
		scene_unlabel(s);
	else if (t == LUA_TFUNCTION)
		relabel(L, op, lua_gettop(L), s);
	else if (t != LUA_TNIL && t != LUA_TBOOLEAN && t != LUA_TTABLE)   /* a table is the type's own (Axe: axes) */
		luaL_error(L, "%s: opts.labels must be false, a function of the cell or a table, got %s", op,
		           luaL_typename(L, -1));
	lua_pop(L, 1);
	if (lua_getfield(L, opts, "scheme") == LUA_TFUNCTION) {
		ColorCtx k;

		k.L = L;
		k.fn = lua_gettop(L);
		k.s = s;
		luaL_checkstack(L, 8, "viz colour function");
		if (scene_colorize(s, color_cb, &k, &e) < 0)
			luaL_error(L, "%s: %s", op, e.msg);
	}
	lua_pop(L, 1);
	if (scene_oom(s))
		luaL_error(L, "%s: out of memory", op);
}

Scene *
tessel_scene(lua_State *L, int x, int opts, int target, const char *op)
{
	LScene *u;
	const char *name;

	x = lua_absindex(L, x);
	opts = opts == 0 || lua_isnoneornil(L, opts) ? 0 : lua_absindex(L, opts);
	if (opts && lua_type(L, opts) != LUA_TTABLE)
		luaL_error(L, "%s: opts must be a table, got %s", op, luaL_typename(L, opts));
	if (luaL_getmetafield(L, x, "__scene") == LUA_TNIL) {
		name = luaL_getmetafield(L, x, "__name") == LUA_TSTRING ? lua_tostring(L, -1)
		                                                      : luaL_typename(L, x);
		luaL_error(L, "%s: a %s cannot be drawn (its metatable has no __scene)", op, name);
	}
	u = push_scene(L, target, op);
	lua_insert(L, -2);
	lua_pushvalue(L, x);
	if (opts)
		lua_pushvalue(L, opts);
	else
		lua_newtable(L);
	lua_pushvalue(L, -4);
	lua_call(L, 3, 0);
	apply_common(L, op, opts, &u->s);
	return &u->s;
}

/*
** The Graphviz context of this Lua state, made on first use and closed by
** the registry's __gc when the state closes.
*/
static int
gvctx_gc(lua_State *L)
{
	GvCtx **p = luaL_checkudata(L, 1, GVCTX);

	gv_close(*p);
	*p = NULL;
	return 0;
}

static GvCtx *
gvctx(lua_State *L, Err *e)
{
	GvCtx **p;

	if (lua_getfield(L, LUA_REGISTRYINDEX, GVKEY) == LUA_TUSERDATA) {
		p = luaL_checkudata(L, -1, GVCTX);
		lua_pop(L, 1);
		if (*p)
			return *p;
		return err_set(e, "viz: the Graphviz context is closed"), NULL;
	}
	lua_pop(L, 1);
	p = lua_newuserdatauv(L, sizeof *p, 0);
	*p = NULL;
	luaL_setmetatable(L, GVCTX);
	if (!(*p = gv_open(e))) {
		lua_pop(L, 1);
		return NULL;
	}
	lua_setfield(L, LUA_REGISTRYINDEX, GVKEY);
	return *p;
}

/* The DOT text of the scene on the stack top, as a Lua string. */
static void
push_dot(lua_State *L, Scene *s)
{
	Buf b;
	Err e;

	buf_init(&b);
	if (dot_render(&b, s, &e) < 0) {
		buf_free(&b);
		luaL_error(L, "%s", e.msg);
	}
	lua_pushlstring(L, b.s ? b.s : "", b.len);   /* may raise only for memory: b is lost then */
	buf_free(&b);
}

void
tessel_push_text(lua_State *L, int x, int opts, const char *op)
{
	Scene *s;
	VizOpts o;
	Buf b;
	Err e;

	x = lua_absindex(L, x);
	opts = opts == 0 || lua_isnoneornil(L, opts) ? 0 : lua_absindex(L, opts);
	if (luaL_getmetafield(L, x, "__show") != LUA_TNIL) {
		/* the type's own terminal text (a uop expression tree) */
		lua_pushvalue(L, x);
		if (opts)
			lua_pushvalue(L, opts);
		else
			lua_newtable(L);
		lua_pushstring(L, op);
		lua_call(L, 3, 1);
		if (lua_type(L, -1) != LUA_TSTRING)
			luaL_error(L, "%s: __show returned a %s, not a string", op, luaL_typename(L, -1));
		return;
	}
	s = tessel_scene(L, x, opts, TESSEL_TERM, op);
	viz_opts_default(&o);
	o.color = tessel_want_color(L, opts ? opts : x);   /* x: no colour field, so the default */
	buf_init(&b);
	if (term_render(&b, s, &o, &e) < 0) {
		buf_free(&b);
		luaL_error(L, "%s", e.msg);
	}
	lua_pop(L, 1);   /* the scene; its __gc frees it */
	lua_pushlstring(L, b.s ? b.s : "", b.len);
	buf_free(&b);
}

static int
v_text(lua_State *L)
{
	luaL_checkany(L, 1);
	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	tessel_push_text(L, 1, 2, "viz.text");
	return 1;
}

static int
v_dot(lua_State *L)
{
	luaL_checkany(L, 1);
	push_dot(L, tessel_scene(L, 1, 2, TESSEL_GRAPHVIZ, "viz.dot"));
	return 1;
}

/*
** viz.render(x, path [, opts]) writes a file; viz.render(x, format [, opts])
** with a bare format name returns the picture as a string. Bad arguments
** raise; a file or Graphviz failure returns nil, message (as io.open does).
*/
static int
v_render(lua_State *L)
{
	const char *where = luaL_checkstring(L, 2);
	int format = -1, to_string = 0, rc;
	Scene *s;
	GvCtx *ctx;
	FILE *f;
	Buf dot, out;
	Err e;

	luaL_checkany(L, 1);
	if (!lua_isnoneornil(L, 3))
		luaL_checktype(L, 3, LUA_TTABLE);
	if (gv_format(where) >= 0 && !strchr(where, '.') && !strchr(where, '/')) {
		format = gv_format(where);
		to_string = 1;
		if (lua_type(L, 3) == LUA_TTABLE && lua_getfield(L, 3, "format") != LUA_TNIL)
			luaL_error(L, "viz.render: the format is \"%s\" already; opts.format goes with a path", where);
		lua_settop(L, 3);
	} else if (lua_type(L, 3) == LUA_TTABLE && lua_getfield(L, 3, "format") != LUA_TNIL) {
		if ((format = gv_format(lua_tostring(L, -1))) < 0)
			luaL_error(L, "viz.render: opts.format %s is not svg, png, pdf or dot",
			           luaL_tolstring(L, -1, NULL));
		lua_pop(L, 1);
	} else {
		if (lua_type(L, 3) == LUA_TTABLE)
			lua_pop(L, 1);
		if ((format = gv_format_of_path(where)) < 0)
			luaL_error(L, "viz.render: cannot tell the format of '%s' from its extension "
			           "(use .svg, .png, .pdf or .dot, or opts.format)", where);
	}
	s = tessel_scene(L, 1, 3, TESSEL_GRAPHVIZ, "viz.render");
	buf_init(&dot);
	if (dot_render(&dot, s, &e) < 0) {
		buf_free(&dot);
		return luaL_error(L, "%s", e.msg);
	}
	buf_init(&out);
	rc = format == GV_DOT ? 0 : -1;
	if (format == GV_DOT) {
		out = dot;
		buf_init(&dot);
	} else if ((ctx = gvctx(L, &e))) {
		rc = gv_render(ctx, dot.s ? dot.s : "", format, &out, &e);
	}
	buf_free(&dot);
	if (rc < 0) {
		buf_free(&out);
		lua_pushnil(L);
		lua_pushstring(L, e.msg);
		return 2;
	}
	if (to_string) {
		lua_pushlstring(L, out.s ? out.s : "", out.len);
		buf_free(&out);
		return 1;
	}
	if (!(f = fopen(where, "wb"))) {
		snprintf(e.msg, sizeof e.msg, "viz.render: cannot open '%s': %s", where, strerror(errno));
		buf_free(&out);
		lua_pushnil(L);
		lua_pushstring(L, e.msg);
		return 2;
	}
	rc = out.len && fwrite(out.s, 1, out.len, f) != out.len;
	rc |= fclose(f) != 0;
	buf_free(&out);
	if (rc) {
		lua_pushnil(L);
		lua_pushfstring(L, "viz.render: cannot write '%s': %s", where, strerror(errno));
		return 2;
	}
	lua_pushboolean(L, 1);
	return 1;
}

/*
** viz.graph{...}: a DAG described by a Lua table, drawable like any value.
** The table is kept as the userdata's user value and turned into a scene on
** each drawing; the constructor builds it once to check it.
*/
static const char *
opt_string(lua_State *L, int t, const char *k)
{
	const char *s = NULL;

	if (lua_getfield(L, t, k) != LUA_TNIL) {
		if (!lua_isstring(L, -1))
			luaL_error(L, "viz.graph: field %s must be a string, got %s", k, luaL_typename(L, -1));
		s = lua_tostring(L, -1);
	}
	lua_pop(L, 1);   /* the string stays alive: it is a field of the table */
	return s;
}

/* The fields a table of viz.graph takes: the keys 1..npos, and keys (what names it in messages:
** "node 3"). */
static const TesselOpt graph_keys[] = {
	{ "nodes", "table" }, { "edges", "table" }, { "title", "string|number" }, { "caption", "string|number" },
	{ "rankdir", "string" }, { NULL, NULL }
};
static const TesselOpt node_keys[] = {
	{ "id", "string|number" }, { "label", "string|number" }, { "record", "string|number" },
	{ "html", "string|number" }, { "color", NULL }, { "shape", "string|number" }, { NULL, NULL }
};
static const TesselOpt picture_node_keys[] = {
	{ "id", "string|number" }, { "draw", NULL }, { "opts", "table" }, { NULL, NULL }
};
static const TesselOpt edge_keys[] = {
	{ "from", NULL }, { "to", NULL }, { "from_port", "string|number" }, { "to_port", "string|number" },
	{ "label", "string|number" }, { "dashed", "boolean" }, { NULL, NULL }
};

static void
check_fields(lua_State *L, int t, const TesselOpt *keys, int npos, const char *what, int i)
{
	char call[64];

	snprintf(call, sizeof call, i ? "viz.graph: %s %d" : "viz.graph%s", what, i);
	t = lua_absindex(L, t);
	lua_pushnil(L);
	while (lua_next(L, t)) {
		if (!(lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1 && lua_tointeger(L, -2) <= npos)
		&& !tessel_isopt(L, call, keys)) {
			const char *k = luaL_tolstring(L, -2, NULL);

			luaL_error(L, "%s: unknown field %s (the fields are: %s%s)", call, k, npos ? "1, 2, " : "",
			           tessel_pushoptnames(L, keys));
		}
		lua_pop(L, 1);
	}
}

/*
** A node that is the picture of a drawable value (field draw, on the stack
** top, with optional opts): its one panel moves into the graph's scene and
** every cell gets a port "rRcC", so that edges can point at cells. Pops draw.
*/
static int
picture_node(lua_State *L, int at, int i, Scene *s, int target)
{
	Scene *sub;
	Grid *g;
	Err e;
	int gi, k;

	check_fields(L, at, picture_node_keys, 0, "node", i);
	lua_getfield(L, at, "opts");
	sub = tessel_scene(L, -2, lua_istable(L, -1) ? -1 : 0, target, "viz.graph");
	if (sub->ngrid != 1 || sub->nnode)
		luaL_error(L, "viz.graph: node %d: draw must be a one-panel picture (a layout, a TV layout), "
		           "not one of %d panels and %d nodes", i, sub->ngrid, sub->nnode);
	if ((gi = scene_take_grid(s, sub, 0, &e)) < 0)
		luaL_error(L, "viz.graph: node %d: %s", i, e.msg);
	g = &s->grid[gi];
	g->prow = 0;   /* the terminal shows the pictures side by side */
	g->pcol = gi;
	if (!g->title.len && sub->title.s)
		emit(&g->title, "%s", sub->title.s);
	if (sub->caption.s)
		scene_note(&g->caption, "%s", sub->caption.s);
	scene_name_ports(g);
	if ((k = scene_node(s, VIZ_NODE_TEXT, "", &e)) < 0)
		luaL_error(L, "viz.graph: %s", e.msg);
	s->node[k].grid = gi;
	lua_pop(L, 3);   /* the sub-scene (its __gc frees what is left), opts, draw */
	return k;
}

static void
graph_nodes(lua_State *L, int spec, int ids, Scene *s, int target)
{
	lua_Integer i, n;
	Err e;

	if (lua_getfield(L, spec, "nodes") != LUA_TTABLE)
		luaL_error(L, "viz.graph: nodes must be a list of nodes, got %s", luaL_typename(L, -1));
	n = luaL_len(L, -1);
	for (i = 1; i <= n; i++) {
		int t = lua_geti(L, -1, i), at = lua_gettop(L), kind = VIZ_NODE_TEXT, k = 0;
		const char *label, *id, *shape;
		int32_t rgb;

		if (t == LUA_TSTRING || t == LUA_TNUMBER) {
			if ((k = scene_node(s, VIZ_NODE_TEXT, lua_tostring(L, at), &e)) < 0)
				luaL_error(L, "viz.graph: %s", e.msg);
			lua_pushvalue(L, at);
		} else if (t == LUA_TTABLE && lua_getfield(L, at, "draw") != LUA_TNIL) {
			k = picture_node(L, at, (int)i, s, target);
			id = opt_string(L, at, "id");
			if (id)
				lua_pushstring(L, id);
			else
				lua_pushinteger(L, i);
		} else if (t == LUA_TTABLE) {
			lua_pop(L, 1);   /* draw */
			check_fields(L, at, node_keys, 0, "node", (int)i);
			if ((label = opt_string(L, at, "record")))
				kind = VIZ_NODE_RECORD;
			else if ((label = opt_string(L, at, "html")))
				kind = VIZ_NODE_HTML;
			else if (!(label = opt_string(L, at, "label")))
				label = opt_string(L, at, "id");
			id = opt_string(L, at, "id");
			if ((k = scene_node(s, kind, label ? label : "", &e)) < 0)
				luaL_error(L, "viz.graph: %s", e.msg);
			if ((shape = opt_string(L, at, "shape")))
				snprintf(s->node[k].shape, sizeof s->node[k].shape, "%s", shape);
			lua_getfield(L, at, "color");
			if (to_rgb(L, -1, &rgb, &e) < 0)
				luaL_error(L, "viz.graph: node %d: %s", (int)i, e.msg);
			lua_pop(L, 1);
			s->node[k].fill = rgb;
			if (id)
				lua_pushstring(L, id);
			else
				lua_pushinteger(L, i);
		} else {
			luaL_error(L, "viz.graph: node %d must be a string or a table, got %s", (int)i,
			           luaL_typename(L, at));
		}
		if (strspn(s->node[k].shape, "abcdefghijklmnopqrstuvwxyz_") != strlen(s->node[k].shape))
			luaL_error(L, "viz.graph: node %d: shape '%s' is not a Graphviz shape name", (int)i,
			           s->node[k].shape);
		lua_pushinteger(L, k);
		lua_settable(L, ids);   /* ids[id] = k; a later node with the same id wins */
		if (lua_rawgeti(L, ids, i) == LUA_TNIL) {   /* and its index, unless an id took it */
			lua_pushinteger(L, k);
			lua_rawseti(L, ids, i);
		}
		lua_pop(L, 2);
	}
	lua_pop(L, 1);
}

static int
node_ref(lua_State *L, int ids, int v, int edge, const char *end)
{
	int k;

	lua_pushvalue(L, v);
	if (lua_gettable(L, ids) != LUA_TNUMBER)
		luaL_error(L, "viz.graph: edge %d: %s node %s is not among the nodes", edge, end,
		           luaL_tolstring(L, v, NULL));
	k = (int)lua_tointeger(L, -1);
	lua_pop(L, 1);
	return k;
}

static void
graph_edges(lua_State *L, int spec, int ids, Scene *s)
{
	lua_Integer i, n;
	Err e;

	if (lua_getfield(L, spec, "edges") == LUA_TNIL) {
		lua_pop(L, 1);
		return;
	}
	if (!lua_istable(L, -1))
		luaL_error(L, "viz.graph: edges must be a list of {from, to, ...}, got %s", luaL_typename(L, -1));
	n = luaL_len(L, -1);
	for (i = 1; i <= n; i++) {
		int at, from, to;

		if (lua_geti(L, -1, i) != LUA_TTABLE)
			luaL_error(L, "viz.graph: edge %d must be a table {from, to, label = ...}", (int)i);
		at = lua_gettop(L);
		check_fields(L, at, edge_keys, 2, "edge", (int)i);
		lua_geti(L, at, 1);
		lua_geti(L, at, 2);
		if (lua_isnil(L, -2) || lua_isnil(L, -1)) {
			lua_pop(L, 2);
			lua_getfield(L, at, "from");
			lua_getfield(L, at, "to");
		}
		from = node_ref(L, ids, at + 1, (int)i, "from");
		to = node_ref(L, ids, at + 2, (int)i, "to");
		if (scene_edge(s, from, opt_string(L, at, "from_port"), to, opt_string(L, at, "to_port"),
		               opt_string(L, at, "label"), &e) < 0)
			luaL_error(L, "viz.graph: %s", e.msg);
		lua_getfield(L, at, "dashed");
		s->edge[s->nedge - 1].dashed = lua_toboolean(L, -1);
		lua_settop(L, at - 1);
	}
	lua_pop(L, 1);
}

static void
graph_fill(lua_State *L, int spec, Scene *s, int target)
{
	const char *t;
	int ids;

	spec = lua_absindex(L, spec);
	check_fields(L, spec, graph_keys, 0, "", 0);
	if ((t = opt_string(L, spec, "title")))
		scene_note(&s->title, "%s", t);
	if ((t = opt_string(L, spec, "caption")))
		scene_note(&s->caption, "%s", t);
	if ((t = opt_string(L, spec, "rankdir"))) {
		if (strcmp(t, "TB") != 0 && strcmp(t, "LR") != 0)
			luaL_error(L, "viz.graph: rankdir must be \"TB\" or \"LR\", got \"%s\"", t);
		strcpy(s->rankdir, t);
	}
	lua_newtable(L);
	ids = lua_gettop(L);
	graph_nodes(L, spec, ids, s, target);
	graph_edges(L, spec, ids, s);
	lua_pop(L, 1);
	if (scene_oom(s))
		luaL_error(L, "viz.graph: out of memory");
}

static int
graph_scene(lua_State *L)
{
	luaL_checkudata(L, 1, GRAPH);
	check_vizopts(L, 2, luaL_checkudata(L, 3, SCENE), NULL, 0);
	lua_getiuservalue(L, 1, 1);
	graph_fill(L, lua_gettop(L), tessel_toscene(L, 3), tessel_scene_target(L, 3));
	return 0;
}

static int
graph_tostring(lua_State *L)
{
	luaL_checkudata(L, 1, GRAPH);
	lua_pushfstring(L, "viz.Graph (%p)", lua_topointer(L, 1));
	return 1;
}

static int
v_graph(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 1);
	graph_fill(L, 1, &push_scene(L, TESSEL_GRAPHVIZ, "viz.graph")->s, TESSEL_GRAPHVIZ);   /* check it now */
	lua_pop(L, 1);
	lua_newuserdatauv(L, 0, 1);
	lua_pushvalue(L, 1);
	lua_setiuservalue(L, -2, 1);
	luaL_setmetatable(L, GRAPH);
	return 1;
}

typedef HelpReg Fn;

static const Fn funcs[] = {
	{ "render", v_render,
	  "draw any drawable value with Graphviz into a file (or a string)\n"
	  "viz.render(x, \"out.svg\" [, opts]) -> true | nil, message. The extension picks the format:\n"
	  ".svg, .png, .pdf, .dot (the DOT text); opts.format overrides it. viz.render(x, \"svg\")\n"
	  "returns the picture as a string. opts: scheme (\"value\", \"thread\", \"warp\", \"device\",\n"
	  "\"bank\", \"none\", or a function(cell) -> \"#rrggbb\" | nil; cell has panel, row, col, empty,\n"
	  "value or thread and v, label), title, labels (false, or a function(cell) -> text),\n"
	  "elem_bytes or dtype (\"f16\", \"f32\", ...) for banks, max_rows/max_cols (at most 256: larger\n"
	  "grids are elided and the caption says so), compact, format. A type adds its own: tv = {M, N}\n"
	  "(layouts), axis, labels = {...} and shape (Axe layouts), diff = true (a schedule: the loop\n"
	  "trees before and after the last step); a viz.graph takes title, labels, scheme and format.\n"
	  "An unknown option raises, naming it." },
	{ "text", v_text,
	  "the terminal picture of a drawable value, as a string\n"
	  "viz.text(x [, opts]) -> the text show(x, opts) prints (same opts, color included; colour only\n"
	  "if opts.color)." },
	{ "dot", v_dot,
	  "the Graphviz DOT text of a drawable value\n"
	  "viz.dot(x [, opts]) -> the DOT text viz.render lays out (same opts but format); feed it to\n"
	  "dot -Tsvg." },
	{ "graph", v_graph,
	  "a DAG to draw: nodes with text, record or HTML labels, edges with ports and labels\n"
	  "viz.graph{nodes = {...}, edges = {...}, title =, caption =, rankdir = \"TB\" | \"LR\"} -> a drawable\n"
	  "A node is a string (its id and label), {id =, label = | record = | html =, color =, shape =},\n"
	  "or {id =, draw = x, opts =}: the picture of a layout as the node, its cells ports \"r3c1\".\n"
	  "record labels use Graphviz's {a|<p>b} syntax and name ports. An edge is {from, to, label =,\n"
	  "from_port =, to_port =, dashed =}, naming nodes by id (or index).\n"
	  "  g = viz.graph{nodes = {\"x\", \"y\", {id = \"s\", label = \"x+y\"}}, edges = {{\"x\", \"s\"}, {\"y\", \"s\"}}}\n"
	  "  viz.render(g, \"g.svg\")   show(g)" },
	{ NULL, NULL, NULL }
};

static const char topic[] =
	"pictures: show(x) in the terminal, viz.render(x, path) through Graphviz\n"
	"Every drawable value (layouts, swizzled layouts, TV layouts, MMA atoms, viz.graph DAGs) draws\n"
	"through one scene: show(x, opts) in the terminal, viz.render(x, \"x.svg\", opts) to SVG, PNG,\n"
	"PDF or DOT, viz.dot(x, opts) as DOT text. Colour schemes: value (CuTe's greys), thread (CuTe's\n"
	"TV pastels), warp, device, bank (32 banks of 4 bytes; elem_bytes or dtype), none, or a Lua\n"
	"function of the cell. See help(viz.render) and docs/pictures.md.";

int
luaopen_tessel_viz(lua_State *L)
{
	int i;

	luaL_newmetatable(L, SCENE);
	lua_pushcfunction(L, scene_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	luaL_newmetatable(L, GVCTX);
	lua_pushcfunction(L, gvctx_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	luaL_newmetatable(L, GRAPH);
	lua_pushcfunction(L, graph_scene);
	lua_setfield(L, -2, "__scene");
	lua_pushcfunction(L, graph_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);

	lua_newtable(L);
	help_setfuncs(L, funcs, "viz.");
	lua_newtable(L);
	for (i = 1; i < VIZ_SCHEME_RGB; i++) {
		lua_pushstring(L, viz_scheme_name(i));
		lua_rawseti(L, -2, i);
	}
	lua_setfield(L, -2, "schemes");
	help_add(L, -1, "viz", topic);
	help_topic(L, "viz", topic);
	help_topic(L, "pictures", topic);
	help_topic(L, GRAPH, "a DAG made by viz.graph\ndraw it with show(g), viz.render(g, path), viz.dot(g)");
	return 1;
}

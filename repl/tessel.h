/* tessel.h - the Lua side of tessel: module openers shared by the program and tessel.so. */
#ifndef TESSEL_TESSEL_H
#define TESSEL_TESSEL_H

#include <lua.h>

/*
** The room repl/ (docs/architecture.md), at the top of the house: the tessel
** program (main.c, repl.c) and the Lua bindings, which may use every room below
** and are thin shims over one call into the core each. Nothing below it knows Lua.
**
** The bindings build on each other in one direction: each file calls only
** those declared above its section. lua_util.c, lua_viz.c (the drawable
** protocol, which every module implements), lua_uop.c, lua_cute.c,
** lua_axe.c, lua_lego.c, lua_tensor.c (under lua_tensor_ops.c, lua_tensor_resample.c and
** lua_tensor_linalg.c, which register tinygrad's methods into its table through lua_tensor.h), lua_kernel.c (under lua_kernel_stmt.c
** and lua_kernel_run.c, which register into its table), lua_sched.c (which
** registers k:schedule() into the kernel table), lua_dist.c; lua_tessel.c
** opens them all.
*/

/* lua_util.c */
/* A table read as a list (a shape, a tuple, coordinates) takes the keys 1..#t
** only. tessel_seq_stray: 1 with the first other key described in key[]
** ("\"layout\"", "0"), else 0. tessel_checkseq raises "what: ..." naming it,
** and does nothing for a value that is not a table. */
int tessel_seq_stray(lua_State *L, int i, char *key, size_t nkey);
void tessel_checkseq(lua_State *L, int i, const char *what);

/* Option tables. DESIGN.md: every option table is checked, an unknown key or a
** value of the wrong type is an error naming the key and the call. A call lists
** its options in an array ended by { NULL, NULL }, each with the type of its value:
** a Lua type name ("boolean", "string", "table", "function", "number"),
** "integer", several joined by '|' ("string|function"), or NULL when the binding
** checks the value itself (a tensor, a layout).
**     static const TesselOpt verify_opts[] = {
**         { "trials", "integer" }, { "seed", "integer" }, { "rtol", "number" }, { NULL, NULL } };
**     if (tessel_checkopts(L, 2, "s:verify", verify_opts)) ... read the fields ...
** tessel_checkopts: 0 when the argument at idx is absent or nil, 1 when it is a
** table whose every key is one of opts with a value of its type; raises
** "s:verify: unknown option 'trals' (the options are: trials, seed, rtol)",
** "s:verify: option trials is a string, not an integer", or, for a value that is
** not a table, bad argument #n (options table expected). The values read
** afterwards need no further type check.
** tessel_isopt, for tables that mix options with other keys (k:run's bindings):
** with a key at -2 and its value at -1 (as lua_next leaves them), 1 when the key
** is one of opts (its value checked, raising as above), else 0.
** tessel_pushoptnames pushes "trials, seed, rtol" for messages and returns it. */
typedef struct TesselOpt {
	const char *name;
	const char *type;
} TesselOpt;

int tessel_checkopts(lua_State *L, int idx, const char *call, const TesselOpt *opts);
int tessel_isopt(lua_State *L, const char *call, const TesselOpt *opts);
const char *tessel_pushoptnames(lua_State *L, const TesselOpt *opts);

/* The width terminal pictures should fit: the terminal's, else $COLUMNS,
** else 120. */
int tessel_term_width(void);

/* Whether pictures use ANSI colour: opts.color if given, else stdout is a
** terminal and NO_COLOR is unset. */
int tessel_want_color(lua_State *L, int opts);

/* lua_viz.c
**
** The drawable protocol. A value x is drawable when its metatable has a
** field __scene holding a lua_CFunction; show(x, opts), viz.render(x, path,
** opts) and viz.dot(x, opts) call it as f(x, opts, scene) where opts is a
** table (empty when the user gave none) and scene an empty tessel.Scene
** userdata. f fills tessel_toscene(L, 3) with the scene builders of viz/
** (e.g. cute_scene_layout), taking its options from
** tessel_vizopts(L, 2, 3, &o, own), and returns nothing; on bad input it raises
** a Lua error (the Scene is anchored in the userdata, so nothing leaks).
** The caller then applies what every picture shares (opts.title,
** opts.labels, a scheme function) and renders. A new type becomes drawable
** with its scene builder and one metafield:
**     static int foo_scene(lua_State *L) {
**         Foo *x = luaL_checkudata(L, 1, FOO); VizOpts o; Err e;
**         tessel_vizopts(L, 2, 3, &o, NULL);
**         if (foo_scene_fill(tessel_toscene(L, 3), x, &o, &e) < 0)
**             return luaL_error(L, "%s", e.msg);
**         return 0;
**     }
**     ... { "__scene", foo_scene } in the metatable.
** A type may also have __show(x, opts, op), a function returning its own
** terminal text: show and viz.text then use it instead of the scene (a uop
** expression prints as an indented tree there, and renders as a DAG through
** __scene). It checks opts itself (tessel_checkopts, naming op: "show",
** "viz.text"). A value with only __show is shown, but viz.render refuses it.
*/
struct Scene;
struct VizOpts;

enum { TESSEL_TERM, TESSEL_GRAPHVIZ };  /* what the scene will be drawn by */

int luaopen_tessel_viz(lua_State *L);
/* The Scene of the tessel.Scene userdata at index i (raises if it is not one). */
struct Scene *tessel_toscene(lua_State *L, int i);
/* TESSEL_TERM or TESSEL_GRAPHVIZ for the scene userdata at index i. */
int tessel_scene_target(lua_State *L, int i);
/* VizOpts from the options table at index opts for the scene at index scene:
** the target's defaults (terminal: colour if wanted, 64x64; Graphviz: 256x256)
** and then max_rows, max_cols, elem_bytes, dtype, scheme (a name), compact,
** color from the table; raises on bad values. The table is checked: its keys
** are own's (the type's own options, NULL for none: {"tv", "table"} for a
** layout), those every picture takes (title, labels, scheme), the grids' (the
** fields above), format for viz.render and color for the terminal; any other
** raises naming the key and the call. Returns 1 when the table gave max_cols
** (a terminal picture then does not fit the width). */
int tessel_vizopts(lua_State *L, int opts, int scene, struct VizOpts *o, const TesselOpt *own);
/* Push a new scene userdata for target, call x's __scene (x at index x, the
** options table at index opts, or none), apply the shared options, and
** return the filled Scene; the userdata stays on the stack. Raises when x is
** not drawable or its builder fails. */
struct Scene *tessel_scene(lua_State *L, int x, int opts, int target, const char *op);
/* Push the terminal picture of the value at index x (show's text): its
** __show text when it has one, else its scene rendered by term_render. op
** ("show", "viz.render") names the caller in messages about the options. */
void tessel_push_text(lua_State *L, int x, int opts, const char *op);

/* lua_uop.c */
int luaopen_tessel_uop(lua_State *L);
struct Layout;
struct Composed;
/* Push the index expression of a CuTe layout (or of a composed one when cl is
** not NULL) as a uop expression; opts is the stack index of L:expr's options. */
int tessel_uop_push_layout(lua_State *L, const struct Layout *l, const struct Composed *cl, int opts);
/* For bindings that build expressions (lego, axe): tessel_uop_begin pushes
** the current context and returns it; tessel_uop_push pushes u of the
** context at index ci; tessel_uop_operand takes an expression or integer at
** index i into c (raising with `what`); tessel_uop_isexpr tests for one. */
struct UOp;
struct UCtx;
struct UCtx *tessel_uop_begin(lua_State *L);
void tessel_uop_push(lua_State *L, struct UOp *u, int ci);
struct UOp *tessel_uop_operand(lua_State *L, int i, struct UCtx *c, const char *what);
int tessel_uop_isexpr(lua_State *L, int i);

/* lua_cute.c */
int luaopen_tessel_cute(lua_State *L);
/* What the other bindings use to take and return CuTe layouts: the layout at
** index i (a cute.Layout, a notation string, an integer n meaning n:1, or a
** table shape made compact column-major; raises otherwise), tmp holding it
** when it is not a userdata; and a new cute.Layout pushed on the stack. */
struct Layout;
const struct Layout *tessel_checklayout(lua_State *L, int i, struct Layout *tmp);
void tessel_pushlayout(lua_State *L, const struct Layout *l);

struct Composed;
/* The swizzled layout at index i (a cute.ComposedLayout or its notation, tmp
** holding a parsed one), or NULL. */
const struct Composed *tessel_testcomposed(lua_State *L, int i, struct Composed *tmp);

/* lua_axe.c */
int luaopen_tessel_axe(lua_State *L);
struct AxeLayout;
const struct AxeLayout *tessel_testaxe(lua_State *L, int i);   /* an axe.Layout or NULL */
struct AxeShape;
void tessel_pushaxe(lua_State *L, const struct AxeLayout *l, const struct AxeShape *sh);

/* lua_lego.c */
int luaopen_tessel_lego(lua_State *L);
struct Lego;
const struct Lego *tessel_testlego(lua_State *L, int i);   /* a lego.Layout or NULL */

/* lua_tensor.c: the tensor table */
int luaopen_tessel_tensor(lua_State *L);
/* lua_tensor.c: the tensor at index i or NULL (its node lives while the value
** does); realize the tensor at i with the bindings table at binds (0: none)
** into b, raising on errors (free b with tbuf_free); push a realized buffer
** as a new tensor. */
struct TBuf;
const struct UOp *tessel_testtensor(lua_State *L, int i);
void tessel_realize(lua_State *L, int i, int binds, struct TBuf *b);
void tessel_pushtbuf(lua_State *L, const struct TBuf *b);

/* lua_kernel.c: the kernel table; a kernel userdata owning k (anchored to the
** value at index anchor, 0 for none: a tensor graph it was lowered from); the
** Kernel of the userdata at i (raises otherwise). */
int luaopen_tessel_kernel(lua_State *L);
struct Kernel;
void tessel_pushkernel(lua_State *L, struct Kernel *k, int anchor);
struct Kernel *tessel_checkkernel(lua_State *L, int i);
/* Push a kernel's pseudo-code (print(k); color for show). */
void tessel_pushkernel_text(lua_State *L, const struct Kernel *k, int color);
/* lua_kernel_stmt.c: kernel.range, kernel.copy and the other statements of a stage, and
** B:tile, registered into the kernel table on the stack top. */
void tessel_open_kernel_stmt(lua_State *L);
/* lua_kernel_run.c: k:run, k:counts, k:source and k:export, registered into the
** kernel's methods. */
void tessel_open_kernel_run(lua_State *L);
/* The bindings table at idx of call ({input = tensor}): every key an input of k,
** or, when mixed (k:run{backend = "c", x = t}), one of opts; else raises naming
** the key and listing the inputs (an option name there is told to go in the
** options table after the bindings). */
void tessel_checkbinds(lua_State *L, int idx, const struct Kernel *k, const char *call, const TesselOpt *opts,
                       int mixed);
/* An export's result for Lua (k:export, P:export): dir and the files written (a table of
** names), nil and the message on an environmental failure (rc -2), a raised error otherwise;
** files is freed. */
struct Buf;
struct Err;
int tessel_export_result(lua_State *L, int rc, const char *dir, struct Buf *files, const struct Err *e);

/* lua_sched.c: k:schedule(), the Schedule type; lua_tessel.c registers them into the
** kernel table on the stack top */
void tessel_open_sched(lua_State *L);

/* lua_dist.c: the dist table (distributed programs on NCCL) */
int luaopen_tessel_dist(lua_State *L);

/* lua_tessel.c */
/* The module table: { cute = ..., show = ..., help = ..., version = ... }. */
int luaopen_tessel(lua_State *L);

/* require "tessel" and put cute, show, help and tessel in the globals. */
void tessel_open_globals(lua_State *L);

/* show(x [, opts]): print tessel_push_text's picture of a drawable value
** (see lua_viz.c above), tostring(x) for any other value. */
int tessel_show(lua_State *L);

#endif

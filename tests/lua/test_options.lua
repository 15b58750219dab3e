-- test_options.lua - every option table is checked (DESIGN.md, Lua API conventions): an unknown
-- key or a value of the wrong type raises, naming the key and the call; nothing is silently
-- ignored. Also: the steps-limit message names the form of k:run that works, and argument
-- numbers in errors follow Lua's luaL_check* ("bad argument #n to 'f'", self not counted in a
-- method call).
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local x = tensor.param("x", {4})
local k = kernel.lower(x * 2, "out")
local t = tensor.ones(4)

-- A kernel with a stage, for the statements' options.
local function staged(body)
  local kk = kernel.new{block = {32}}
  local A = kk:input("A", "float32", {32})
  local B = kk:output("B", "float32", {32})
  local S = kk:shared("S", "float32", {32})
  kk:stage("s", function() body(kk, A, B, S) end)
  return kk
end

check("k:run: options", function()
  raises(function() k:run({x = t}, {chekcs = false}) end,
         "k:run: unknown option 'chekcs' (the options are: checks, max_steps, backend, compare, fast, cc, flags, stats)")
  raises(function() k:run({x = t}, {checks = 0}) end, "k:run: option checks is 0, not a boolean")
  raises(function() k:run({x = t}, {max_steps = "x"}) end, 'k:run: option max_steps is the string "x", not an integer')
  raises(function() k:run({x = t}, {max_steps = 2.5}) end, "k:run: option max_steps is 2.5, not an integer")
  raises(function() k:run({x = t}, {[1] = true}) end, "k:run: unknown option [1]")
  raises(function() k:run({x = t}, 5) end, "bad argument #2 to 'run' (options table expected, got number)")
  -- options of the compiled backends mean nothing to the interpreter
  raises(function() k:run({x = t}, {fast = true}) end,
         "k:run: fast is an option of the compiled backends (backend = \"c\"), not of the interpreter")
  raises(function() k:run({x = t}, {stats = {}}) end, "k:run: stats is an option of the compiled backends")
  eq(k:run({x = t}, {checks = false, max_steps = 100000}):tolist()[1], 2.0, "good options run")
end)

check("k:run: bindings name inputs", function()
  raises(function() k:run{x = t, bogus = t} end, "k:run: 'bogus' is not an input of the kernel (the inputs are: x)")
  raises(function() k:run{x = t, out = t} end, "k:run: 'out' is an output of the kernel, not an input (the inputs are: x)")
  raises(function() k:run{t} end, "k:run: the bindings are {input = tensor}, not a key [1] (the inputs are: x)")
  -- an option among the bindings is told where it goes: this form used to be ignored
  raises(function() k:run{x = t, max_steps = 10} end,
         "k:run: 'max_steps' is an option, not an input of the kernel (x): options go in a table after the "
         .. "bindings, k:run(bindings, {max_steps = ...})")
  -- k:run{backend = ...} mixes both: a key is either
  raises(function() k:run{x = t, backend = "interp", bogus = 1} end,
         "k:run: 'bogus' is neither an input of the kernel (x) nor an option (checks, max_steps")
  raises(function() k:run{x = t, backend = "interp", checks = "no"} end, 'k:run: option checks is the string "no"')
  eq(k:run{x = t, backend = "interp", checks = false}:tolist()[1], 2.0, "the mixed form runs")
end)

check("k:counts, k:source, k:export", function()
  raises(function() k:counts({x = t}, {count = true}) end, "k:counts: unknown option 'count' (the options are: checks, max_steps)")
  raises(function() k:counts({x = t}, {max_steps = true}) end, "k:counts: option max_steps is true, not an integer")
  raises(function() k:counts{y = t} end, "k:counts: 'y' is not an input of the kernel (the inputs are: x)")
  raises(function() k:source("c", {fats = true}) end, "k:source: unknown option 'fats' (the options are: fast, num_warps, num_stages)")
  raises(function() k:source("c", {fast = 1}) end, "k:source: option fast is 1, not a boolean")
  local dir = os.tmpname()
  os.remove(dir)
  raises(function() k:export("c", dir, {rep = 3}) end,
         "k:export: unknown option 'rep' (the options are: inputs, reps, warmup, fast)")
  raises(function() k:export("c", dir, {reps = "3"}) end, 'k:export: option reps is the string "3", not an integer')
  raises(function() k:export("c", dir, {reps = 0}) end, "k:export: reps = 0 is not in [1, 1000000]")
  raises(function() k:export("c", dir, {inputs = {y = t}}) end,
         "k:export: inputs: 'y' is not an input of the kernel (the inputs are: x)")
  eq(io.open(dir), nil, "nothing written")
end)

check("the steps-limit message names the form that works", function()
  local a = tensor.param("a", {64})
  local kk = kernel.lower(a + 1, "o")
  local ok, msg = pcall(kk.run, kk, {a = tensor.ones(64)}, {max_steps = 20})
  assert(not ok)
  assert(msg:find("steps limit: kernel.run needs more than 20 instructions", 1, true), msg)
  assert(msg:find("k:run(bindings, {max_steps = N})", 1, true), msg)
  assert(not msg:find("k:run{max_steps", 1, true), msg)
end)

check("schedules: s:verify, s:search, s:run, pictures", function()
  local a = tensor.param("a", {8, 8})
  local s = kernel.lower(a:sum(1), "o"):schedule()
  raises(function() s:verify{trials = "x"} end, 's:verify: option trials is the string "x", not an integer')
  raises(function() s:verify{trails = 2} end, "s:verify: unknown option 'trails' (the options are: trials, seed, rtol, atol)")
  raises(function() s:verify{trials = 0} end, "s:verify: trials = 0 is not in [1, 1000]")
  raises(function() s:verify{rtol = "1e-3"} end, "s:verify: option rtol is the string \"1e-3\", not a number")
  raises(function() s:verify(5) end, "bad argument #1 to 'verify' (options table expected, got number)")
  assert(s:verify{trials = 1, seed = 2, rtol = 1e-3, atol = 0})
  raises(function() s:search{budjet = 3} end, "s:search: unknown option 'budjet' (the options are: params, apply,")
  raises(function() s:search{beam = true} end, "s:search: option beam is true, not an integer")
  raises(function() s:search{bindings = {b = t}} end, "s:search: bindings: 'b' is not an input of the kernel (the inputs are: a)")
  -- s:run is k:run on the current kernel
  raises(function() s:run({a = tensor.ones(8, 8)}, {chekcs = true}) end, "k:run: unknown option 'chekcs'")
  -- a schedule draws with diff; show prints its text and takes color only
  raises(function() viz.dot(s, {diff = 1}) end, "viz.dot: option diff is 1, not a boolean")
  raises(function() viz.dot(s, {dif = true}) end, "viz.dot: unknown option 'dif' (the options are: diff, title, labels, scheme,")
  assert(viz.dot(s, {diff = true}):find("digraph", 1, true))
  raises(function() show(s, {diff = true}) end, "show: unknown option 'diff' (the options are: color)")
end)

check("kernel.lower, kernel.new, buffers, kernel.range", function()
  raises(function() kernel.lower(x * 2, 5) end, "bad argument #2 to 'lower' (name or options table expected, got number)")
  raises(function() kernel.lower(x * 2, {nmae = "o"}) end, "kernel.lower: unknown option 'nmae' (the options are: name)")
  raises(function() kernel.lower(x * 2, {name = 5}) end, "kernel.lower: option name is 5, not a string")
  eq(kernel.lower(x * 2, {name = "y"}):run{x = t}:tolist()[1], 2.0, "{name =} lowers")
  raises(function() kernel.new{blok = {32}} end, "kernel.new: unknown option 'blok' (the options are: grid, block)")
  raises(function() kernel.new{grid = "2"} end, 'kernel.new: option grid is the string "2", not an integer or a table')
  raises(function() kernel.new{block = {32, "x"}} end, "kernel.new: block[2] is a string, not an integer")
  raises(function() kernel.new(5) end, "bad argument #1 to 'new' (options table expected, got number)")
  local kk = kernel.new()
  raises(function() kk:buffer("T", "float32", {4}, {scpoe = "shared"}) end,
         "k:buffer: unknown option 'scpoe' (the options are: scope, role, layout)")
  raises(function() kk:buffer("T", "float32", {4}, {role = 1}) end, "k:buffer: option role is 1, not a string")
  raises(function() kk:input("I", "float32", {4}, {layout = "4:1", scope = "shared"}) end,
         "k:input: I: the options take only layout =")
  raises(function() staged(function() for _ in kernel.range(4, {nmae = "i"}) do end end) end,
         "kernel.range: unknown option 'nmae' (the options are: name, type, bind)")
  raises(function() staged(function() for _ in kernel.range(4, {bind = true}) do end end) end,
         "kernel.range: option bind is true, not a string")
end)

check("statements: collectives, ldmatrix, mbarriers, wgmma", function()
  raises(function() staged(function(_, A, B) kernel.copy(B, A, {scop = "cta"}) end) end,
         "kernel.copy: unknown option 'scop' (the options are: scope, warps, impl)")
  raises(function() staged(function(_, A, B) kernel.copy(B, A, {impl = 4}) end) end,
         "kernel.copy: option impl is 4, not a string")
  raises(function() staged(function(_, A, B) kernel.copy(B, A, {warps = {0, "x"}}) end) end,
         "kernel.copy: warps is {w0, w1}, two integers")
  raises(function() staged(function(_, _, B) kernel.fill(B, 0, {op = "add"}) end) end,
         "kernel.fill: unknown option 'op' (the options are: scope, warps, impl)")
  raises(function() staged(function(_, A, B) kernel.reduce(B, A, {opp = "max"}) end) end,
         "kernel.reduce: unknown option 'opp' (the options are: op, scope, warps, impl)")
  raises(function() staged(function(_, A, B) kernel.reduce(B, A, {op = {}}) end) end,
         "kernel.reduce: option op is a table, not a string")
  raises(function() staged(function(_, A, B) kernel.gemm(B, A, A, {scope = 1}) end) end,
         "kernel.gemm: option scope is 1, not a string")
  raises(function() staged(function(_, A, _, S) kernel.ldmatrix(S, A, {0}, {transpose = true}) end) end,
         "kernel.ldmatrix: unknown option 'transpose' (the options are: x, trans)")
  raises(function() staged(function(_, A, _, S) kernel.ldmatrix(S, A, {0}, {x = "4"}) end) end,
         'kernel.ldmatrix: option x is the string "4", not an integer')
  raises(function() staged(function(_, _, _, S) kernel.mbarrier_arrive(S, {0}, {bytes = 4}) end) end,
         "kernel.mbarrier_arrive: unknown option 'bytes' (the options are: tx)")
  raises(function() staged(function(_, A, B, S) kernel.wgmma(B, A, S, {bnk = true}) end) end,
         "kernel.wgmma: unknown option 'bnk' (the options are: zero, b_nk)")
  raises(function() staged(function(_, A, B, S) kernel.wgmma(B, A, S, {zero = 1}) end) end,
         "kernel.wgmma: option zero is 1, not a boolean")
end)

check("layouts: cute, lego, axe", function()
  raises(function() cute.composition("(12,5):(3,1)", "(2,4):(6,2)", {cxx = true}) end,
         "cute.composition: unknown option 'cxx' (the options are: cpp)")
  raises(function() cute.composition("(12,5):(3,1)", "(2,4):(6,2)", {cpp = "yes"}) end,
         'cute.composition: option cpp is the string "yes", not a boolean')
  raises(function() cute.tile_to_shape("(1,4):(2,4)", {3, 16}, nil, {cp = true}) end,
         "cute.tile_to_shape: unknown option 'cp'")
  raises(function() cute.layout("(4,2)"):expr{nmae = "j"} end, "L:expr: unknown option 'nmae' (the options are: name, modes, raw)")
  raises(function() cute.layout("(4,2)"):expr{modes = 1} end, "L:expr: option modes is 1, not a boolean")
  raises(function() lego.RegP{dims = {2, 2}, prem = {1, 0}} end, "lego.RegP: unknown option 'prem' (the options are: dims, perm)")
  raises(function() lego.RegP{{2, 2}, {1, 0}, 3} end, "lego.RegP{dims, perm}: 2 entries, not 3")
  local G = lego.RegP({2, 2}, {1, 0})
  raises(function() G:expr{rwa = true} end, "G:expr: unknown option 'rwa' (the options are: raw, vars)")
  raises(function() G:expr{vars = "i"} end, 'G:expr: option vars is the string "i", not a table')
  local M = uop.var("M", 1, 64)
  local S = lego.Row(M, 4)
  raises(function() S:expr{rwa = true} end, "G:expr: unknown option 'rwa'")
  raises(function() S:expr("apply", 5) end, "G:expr: the options are a table, not a number")
  raises(function() axe.make{D = "(4):(1@m)", X = 1} end, "axe.make: unknown option 'X' (the options are: D, R, O, shape)")
  raises(function() axe.make{D = 4} end, "axe.make: option D is 4, not a string or a table")
  local A = axe.layout("S[(4):(1@m)]")
  raises(function() axe.expr(A, {nme = "y"}) end, "axe.expr: unknown option 'nme' (the options are: name, raw, replicas, shape)")
  raises(function() axe.expr(A, {replicas = "no"}) end, 'axe.expr: option replicas is the string "no", not a boolean')
  raises(function() axe.trn_matmul(A, A, A, 1, 1, 1, {mm = 1}) end,
         "axe.trn_matmul: unknown option 'mm' (the options are: m, n, k)")
end)

check("tensors, dist, limits", function()
  raises(function() tensor.zeros({2}, {dtyp = "int32"}) end, "tensor.zeros: unknown option 'dtyp' (the options are: dtype)")
  raises(function() tensor.ones({2}, {dtype = 32}) end, "tensor.ones: option dtype is 32, not a string")
  raises(function() tensor.zeros({2}, {seed = 1}) end, "tensor.zeros: unknown option 'seed' (the options are: dtype)")
  raises(function() tensor.rand({2}, {seed = "x"}) end, 'tensor.rand: option seed is the string "x", not an integer')
  raises(function() tensor.rand({2}, {sed = 1}) end, "tensor.rand: unknown option 'sed' (the options are: seed, dtype)")
  raises(function() tensor.zeros(2, true) end, "bad argument #2 to 'zeros' (dtype name or options table expected, got boolean)")
  raises(function() tensor.options{mem_limt = 1} end, "tensor.options: unknown option 'mem_limt' (the options are: mem_limit)")
  raises(function() tensor.options{mem_limit = "1"} end, 'tensor.options: option mem_limit is the string "1", not an integer')
  raises(function() (x * 2):realize(5) end, "bad argument #1 to 'realize' (bindings table expected, got number)")
  raises(function() dist.new{devices = 2, axes = "gpuid"} end, "dist.new: unknown option 'axes' (the options are: devices, axis)")
  raises(function() dist.new{devices = "2"} end, 'dist.new: option devices is the string "2", not an integer')
  local P = dist.new(2)
  local mesh = {{"gpuid", 2}}
  raises(function() P:tensor("A", "float32", {4}, axe.dtensor({4}, mesh, {"S(0)"}), {partail = true}) end,
         "P:tensor: unknown option 'partail' (the options are: partial)")
  raises(function() P:tensor("A", "float32", {4}, axe.dtensor({4}, mesh, {"S(0)"}), {partial = 1}) end,
         "P:tensor: option partial is 1, not a boolean")
  raises(function() P:export(os.tmpname() .. ".d", {fats = true}) end,
         "P:export: unknown option 'fats' (the options are: inputs, fast, check)")
  raises(function() tessel.limits{stepz = 5} end, "tessel.limits: unknown option 'stepz' (the options are: tensor_bytes, steps")
end)

check("pictures: show, viz.text, viz.dot, viz.render, viz.graph", function()
  local L = cute.layout("(4,2)")
  raises(function() show(L, {bogus = 1}) end, "show: unknown option 'bogus' (the options are: tv, title, labels, scheme, "
         .. "max_rows, max_cols, elem_bytes, dtype, compact, color)")
  raises(function() show(L, {max_rows = "x"}) end, 'show: option max_rows is the string "x", not an integer')
  raises(function() viz.text(L, {tv = 4}) end, "viz.text: option tv is 4, not a table")
  raises(function() viz.dot(L, {color = true}) end, "viz.dot: unknown option 'color'")   -- the terminal's only
  raises(function() viz.dot(L, {format = "svg"}) end, "viz.dot: unknown option 'format'")   -- viz.render's only
  raises(function() viz.render(L, "svg", {compcat = true}) end, "viz.render: unknown option 'compcat'")
  raises(function() viz.render(L, "svg", {format = "png"}) end, "viz.render: the format is \"svg\" already")
  raises(function() show(axe.layout("S[(4):(1@lane)]"), {axes = "lane"}) end,
         "show: unknown option 'axes' (the options are: axis, labels, shape, title,")
  raises(function() show(k, {max_rows = 3}) end, "show: unknown option 'max_rows' (the options are: color)")
  raises(function() show(t, {color = false}) end, "show: unknown option 'color' (it takes no options)")
  local e = uop.var("i", 0, 7) * 2
  raises(function() show(e, {title = "e"}) end, "show: unknown option 'title' (the options are: max_rows)")
  raises(function() uop.tree(e, {max_rows = "3"}) end, 'uop.tree: option max_rows is the string "3", not an integer')
  raises(function() show(5, {title = "five"}) end, "show: a number is no picture and takes no options")
  raises(function() viz.graph{nodes = {"a"}, nodez = {}} end,
         "viz.graph: unknown field nodez (the fields are: nodes, edges, title, caption, rankdir)")
  raises(function() viz.graph{nodes = {{id = "a", lable = "x"}}} end, "viz.graph: node 1: unknown field lable")
  raises(function() viz.graph{nodes = {{draw = L, opt = {}}}} end, "viz.graph: node 1: unknown field opt")
  raises(function() viz.graph{nodes = {{draw = L, opts = {bogus = 1}}}} end, "viz.graph: unknown option 'bogus'")
  raises(function() viz.graph{nodes = {"a", "b"}, edges = {{"a", "b", dahsed = true}}} end,
         "viz.graph: edge 1: unknown field dahsed (the fields are: 1, 2, from, to,")
  raises(function() viz.graph{nodes = {"a", "b"}, edges = {{"a", "b", dashed = 1}}} end,
         "viz.graph: edge 1: option dashed is 1, not a boolean")
  raises(function() viz.dot(viz.graph{nodes = {"a"}}, {max_rows = 3}) end, "viz.dot: unknown option 'max_rows'")
end)

check("argument numbers: Lua's convention, self not counted in a method call", function()
  local a = tensor.param("a", {8, 8})
  local s = kernel.lower(a:sum(1), "o"):schedule()
  local blk = "o"
  raises(function() s:bind(blk, 3, "threadIdx.x") end, "bad argument #2 to 'bind' (loop name expected, got number")
  raises(function() s.bind(s, blk, 3, "threadIdx.x") end, "bad argument #3 to 'bind'")
  raises(function() s:split(blk, 3, {nil, 2}) end, "bad argument #2 to 'split' (loop name expected, got number")
  raises(function() s:split(blk, "i", 5) end, "bad argument #3 to 'split' (table expected, got number)")
  raises(function() s:fuse(blk, {"i", 7}) end, "bad argument #2 to 'fuse' (entry 2 is a number, not a loop name")
  raises(function() s:tile(blk, "i", {}, 2, 2) end, "bad argument #3 to 'tile'")
  raises(function() s:verify(5) end, "bad argument #1 to 'verify'")
  raises(function() tensor.ones(4):reshape(2, 0.5) end, "bad argument #2 to 'reshape'")
  raises(function() tensor.zeros(2, 2.5) end, "bad argument #2 to 'zeros'")
  raises(function() tensor.arange(1, {}) end, "bad argument #2 to 'arange' (number or dtype name expected, got table)")
  raises(function() staged(function(_, A) kernel.copy(5, A) end) end,
         "bad argument #1 to 'copy' (buffer or region (B:tile(start, extent)) expected, got number)")
  raises(function() staged(function(_, _, B) kernel.copy(B, kernel.new():input("Z", "float32", {32})) end) end,
         "bad argument #2 to 'copy' (it belongs to another kernel than the stage being recorded)")
end)

finish()

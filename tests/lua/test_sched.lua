-- test_sched.lua - schedules from Lua: steps, trace and replay, undo, diff, verify, set_layout.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local function transpose()
  local k = kernel.new{grid = {2, 2}, block = {32, 32}}
  local A = k:input("A", "float32", {64, 64})
  local B = k:output("B", "float32", {64, 64})
  local tile = k:shared("tile", "float32", {32, 32})
  k:stage("transpose", function()
    tile[{k.ty, k.tx}] = A[{k.by * 32 + k.ty, k.bx * 32 + k.tx}]
    kernel.barrier()
    B[{k.bx * 32 + k.ty, k.by * 32 + k.tx}] = tile[{k.tx, k.ty}]
  end)
  return k
end

check("set_layout: the bank conflicts of a transpose's tile go to zero; verify holds", function()
  local s = transpose():schedule()
  eq(s:counts().bank_conflicts, 128 * 31, "plain")
  s:set_layout("tile", "(32,32):(33,1)")
  eq(s:counts().bank_conflicts, 0, "padded")
  assert(s:verify{trials = 2})
  s:set_layout("tile", cute.composition(cute.swizzle(5, 0, 5), "(32,32):(32,1)"))
  eq(s:counts().bank_conflicts, 0, "swizzled")
  eq(s:trace(), 's:set_layout("tile", "(32,32):(33,1)")\ns:set_layout("tile", "Sw<5,0,5> o 0 o (32,32):(32,1)")\n')
  local d = s:diff()
  assert(d:find("- # buffers: tile: float32[32, 32] shared @ (32,32):(33,1)", 1, true), d)
  assert(d:find("+ # buffers: tile: float32[32, 32] shared @ Sw<5,0,5> o 0 o (32,32):(32,1)", 1, true), d)
  raises(function() s:set_layout("tile", "(32,16):(1,32)") end, "set_layout: tile has 1024 elements, the CuTe layout 512")
  raises(function() s:set_layout("nope", "(4,4):(4,1)") end, "no buffer nope")
  -- a refusal leaves the schedule as it was
  eq(select(2, s:trace():gsub("\n", "")), 2, "steps")
end)

check("the trace replays; undo steps back", function()
  local s = transpose():schedule()
  s:set_layout("tile", "(32,32):(33,1)")
  s:set_layout("A", "(64,64):(1,64)")
  local replay = transpose():schedule()
  assert(load(s:trace(), "trace", "t", { s = replay }))()
  eq(tostring(replay), tostring(s), "replayed")
  s:undo()
  eq(s:trace(), 's:set_layout("tile", "(32,32):(33,1)")\n')
  s:undo()
  raises(function() s:undo() end, "no step to undo")
  eq(tostring(s), tostring(transpose()), "back to the start")
end)

check("verify: against the graph for lowered kernels; get_block and get_loops", function()
  local x = tensor.param("inp", {4, 8})
  local s = kernel.lower(x:softmax(1), "out"):schedule()
  local ok, report = s:verify{trials = 2, seed = 3}
  assert(ok and report:find("trial 1 (seed 4): every output element agrees", 1, true), report)
  eq(s:get_block("xsum"), "xsum")
  eq(table.concat(s:get_loops("xsum"), " "), "i j")
  raises(function() s:get_block("nope") end, "no stage nope (the stages: xmax, xsum, out)")
  -- a changed input layout keeps the logical values
  s:set_layout("inp", "(4,8):(1,4)")
  assert(s:verify())
  local t = tensor.rand({4, 8}, {seed = 1})
  eq(tostring(s:run{inp = t}), tostring(x:softmax(1):realize{inp = t}), "values")
  viz.dot(s, {diff = true})
end)

finish()

-- test_limits.lua - tessel.limits: defaults, setting and restoring, and each limit's error naming it.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local defaults = tessel.limits()

check("defaults", function()
  eq(defaults.tensor_bytes, 4 << 30, "tensor_bytes")
  eq(defaults.steps, 1000000000, "steps")
  eq(defaults.check_elems, 1 << 22, "check_elems")
  eq(defaults.pixels, 1 << 25, "pixels")
  eq(defaults.code_bytes, 64 << 20, "code_bytes")
end)

check("set, read back, restore", function()
  local t = tessel.limits{steps = 1e6, pixels = 1000}
  eq(t.steps, 1000000, "steps")
  eq(tessel.limits().pixels, 1000, "pixels")
  tessel.limits{steps = "default", pixels = "default"}
  eq(tessel.limits().steps, defaults.steps, "steps restored")
  eq(tessel.limits().pixels, defaults.pixels, "pixels restored")
end)

check("bad tables change nothing", function()
  raises(function() tessel.limits{stepz = 5} end, "tessel.limits: unknown option 'stepz' (the options are: tensor_bytes, steps")
  raises(function() tessel.limits{steps = 0} end, "steps must be an integer >= 1")
  raises(function() tessel.limits{steps = 10, pixels = -1} end, "pixels must be")
  raises(function() tessel.limits{steps = 0 / 0} end, "steps must be")
  raises(function() tessel.limits{[1] = 5} end, "tessel.limits: unknown option [1]")
  eq(tessel.limits().steps, defaults.steps, "unchanged")
end)

-- a kernel that runs forever in a thread: the step limit stops it
local function spin()
  local k = kernel.new{grid = {1}, block = {1}}
  local out = k:output("out", "int32", {1})
  k:stage("spin", function()
    for i in kernel.range(1 << 30) do out[{0}] = out[{0}] + 1 end
  end)
  return k
end

check("steps", function()
  local k = spin()
  tessel.limits{steps = 10000}
  raises(function() k:run() end, "steps limit", "tessel.limits{steps = N}")
  tessel.limits{steps = "default"}
end)

check("check_elems", function()
  local i, j = uop.var("i", 0, 9999), uop.var("j", 0, 9999)
  tessel.limits{check_elems = 1000}
  raises(function() uop.equivalent(i + j, j + i) end, "tessel.limits{check_elems = N}")
  local ok, msg = lego.Row(64, 64):check()
  eq(ok, nil, "G:check too large")
  assert(msg:find("check_elems", 1, true), msg)
  raises(function() axe.layout("S[(64,64):(64,1)] + R[8:1@warp]"):find{m = 3} end, "check_elems")
  tessel.limits{check_elems = "default"}
  local a, b = uop.var("a", 0, 999), uop.var("b", 0, 999)
  eq(uop.equivalent(a + b, b + a), true, "within the default")
end)

check("pixels", function()
  tessel.limits{pixels = 50}
  raises(function() viz.text(cute.layout("(16,16)")) end, "pixels limit", "tessel.limits{pixels = N}")
  -- a Graphviz picture: the scene's 64 cells pass, its laid-out area (at 96 dpi) does not
  local base = os.tmpname()
  tessel.limits{pixels = 5000}
  local ok, msg = viz.render(cute.layout("(8,8)"), base .. ".svg")
  eq(ok, nil, "render refused")
  assert(msg:find("pixels limit: the picture needs", 1, true), msg)
  tessel.limits{pixels = "default"}
  assert(#viz.text(cute.layout("(16,16)")) > 0)
  eq(viz.render(cute.layout("(8,8)"), base .. ".svg"), true, "render within the default")
  os.remove(base .. ".svg")
  os.remove(base)
end)

check("code_bytes", function()
  local x = uop.var("x", 0, 7)
  for _ = 1, 12 do x = x * x + x end
  tessel.limits{code_bytes = 1000}
  raises(function() return uop.c(x) end, "code_bytes limit", "tessel.limits{code_bytes = N}")
  assert(#tostring(x) > 0)   -- what people read is cut short, not refused
  tessel.limits{code_bytes = "default"}
  assert(#uop.c(uop.var("y", 0, 3) + 1) > 0)
end)

check("tensor_bytes", function()
  tessel.limits{tensor_bytes = 1000}
  -- a buffer made as it runs, and the graph's buffers added up before anything runs
  raises(function() tensor.zeros({64, 64}):realize() end,
         "tensor_bytes limit: realize needs 16384 more bytes for a buffer, past the limit of 1000 bytes",
         "tessel.limits{tensor_bytes = N}")
  raises(function() (tensor.ones(64, 64) + 1):realize() end,
         "realize: the graph needs 16384 bytes of buffers (tensor_bytes limit 1000 bytes; raise it with "
         .. "tessel.limits{tensor_bytes = N})")
  -- tensor.options{mem_limit} still overrides it; 0 goes back to the limit in force
  tensor.options{mem_limit = 1 << 20}
  assert((tensor.ones(64, 64) + 1):realize():sum():item() == 2 * 4096, "mem_limit overrides")
  tensor.options{mem_limit = 0}
  raises(function() (tensor.ones(64, 64) + 1):realize() end, "tensor_bytes limit 1000 bytes")
  tessel.limits{tensor_bytes = "default"}
  eq(tessel.limits().tensor_bytes, defaults.tensor_bytes, "restored")
  assert(tensor.zeros({64, 64}):realize():sum():item() == 0, "realizes again")
end)

check("check_elems: a Lua GenP is verified by enumeration or refused", function()
  local f = function(i, j) return j * 3 + i end
  local finv = function(k) return k % 3, k // 3 end
  tessel.limits{check_elems = 8}
  raises(function() lego.GenP({3, 3}, f, finv, "tr, trinv") end,
         "check_elems limit: verifying the user lego.GenP (tr, trinv) needs 9 elements",
         "tessel.limits{check_elems = N}")
  tessel.limits{check_elems = "default"}
  eq(lego.GenP({3, 3}, f, finv, "tr, trinv")(1, 2), 7, "verified within the default")
end)

check("check_elems: same_function's search for the first difference stops at it", function()
  tessel.limits{check_elems = 1000}
  -- the answer stands; the first differing index (4096) is not searched past the limit
  eq(select("#", cute.same_function("8192:1", "(4096,2):(1,8192)")), 1, "no index")
  eq(cute.same_function("8192:1", "(4096,2):(1,8192)"), false, "still different")
  tessel.limits{check_elems = "default"}
  eq(select(2, cute.same_function("8192:1", "(4096,2):(1,8192)")), 4096, "first difference")
end)

check("check_elems: s:verify counts trials x output elements", function()
  local s = kernel.lower(tensor.param("x", {64, 64}) * 2, "out"):schedule()
  tessel.limits{check_elems = 10000}
  raises(function() s:verify() end, "check_elems limit: verify: 3 trials of 4096 output elements needs 12288",
         "tessel.limits{check_elems = N}")
  assert(s:verify{trials = 2}, "2 x 4096 is within it")
  tessel.limits{check_elems = "default"}
  assert(s:verify(), "within the default")
end)

check("code_bytes: every dialect's source", function()
  local k = kernel.lower(tensor.param("x", {4, 8}) * 2, "out")
  tessel.limits{code_bytes = 100}
  for _, d in ipairs{"c", "cuda", "opencl", "triton"} do
    raises(function() return k:source(d) end, "code_bytes limit: the " .. d .. " source needs",
           "tessel.limits{code_bytes = N}")
  end
  tessel.limits{code_bytes = "default"}
  for _, d in ipairs{"c", "cuda", "opencl", "triton"} do
    assert(#k:source(d) > 100, d)
  end
end)

finish()

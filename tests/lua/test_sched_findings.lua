-- test_sched_findings.lua - the schedule tester's findings (fuzz/sched.lua, fuzz/FINDINGS.md),
-- each a check of what must hold once it is fixed. A finding still listed in
-- fuzz/sched_known.txt must still fail (it is reported, not fixed yet): the check passes and
-- says so. Once the listed finding holds, the check fails until its line is removed from the
-- list; from then on it must hold, as a regression test.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")
local root = arg[0]:match("^(.-)tests/lua/[^/]*$") or "./"
if root == "" then root = "./" end

local known = {}
for line in io.lines(root .. "fuzz/sched_known.txt") do
  local id = line:match("^(S%d+)%s")
  if id then known[id] = true end
end

local function finding(id, what, f)
  check(id .. ": " .. what, function()
    local ok, err = pcall(f)
    if known[id] then
      if ok then error(id .. " holds now: remove its line from fuzz/sched_known.txt", 0) end
      print(string.format("   known %s, not fixed yet: %s", id, tostring(err):gsub("\n.*", ""):sub(1, 100)))
    elseif not ok then
      error(err, 0)
    end
  end)
end

-- the trace replays on a fresh schedule of the same kernel
local function replays(s, fresh)
  assert(load(s:trace(), "trace", "t", { s = fresh }))()
  eq(tostring(fresh), tostring(s), "replayed kernel")
  eq(fresh:trace(), s:trace(), "replayed trace")
end

finding("S1", "a split factor of 0 or -1 is refused, or traced so that it replays", function()
  local a = tensor.param("a", { 4, 6 })
  local function fresh() return kernel.lower(a:sum(1), "out"):schedule() end
  local s = fresh()
  local ok = pcall(s.split, s, "out", "j", { 3, 0 })
  if ok then replays(s, fresh()) end
  s = fresh()
  ok = pcall(s.split, s, "out", "i", { -1, 2 })
  if ok then replays(s, fresh()) end
end)

finding("S2", "a vector loop moved outside a parallel one compiles on the C backend", function()
  local s = kernel.lower(tensor.param("a", { 4, 4 }) * 2, "out"):schedule()
  s:parallel("out", "i")
  s:vectorize("out", "j")
  local ok = pcall(s.reorder, s, "out", "j", "i")   -- refusing it is a fix too
  if ok then
    assert(s:verify{ trials = 1 })
    s:run({ a = tensor.rand({ 4, 4 }, { seed = 1 }) }, { backend = "c" })
  end
end)

finding("S3", "a fusion's repair divides by a predecessor that is 0 on the way: no NaN", function()
  local a, b = tensor.param("a", { 2, 3 }), tensor.param("b", { 4, 3 })
  -- the max over the rows of a padded by two rows of zeros passes through 0
  local t = (b * a:pad{ { 2, 0 }, false }:max(0, true)):sum(0)
  for _, step in ipairs({ "rolling_update", "split_k_update" }) do
    local s = kernel.lower(t, "out"):schedule()
    if pcall(s[step], s, "out", "xmax.j") then assert(s:verify{ trials = 1 }) end
  end
end)

finding("S4", "a decomposed reduction reordered outside its spatial loop compiles on the C backend", function()
  local s = kernel.lower(tensor.param("a", { 3, 4 }):sum(1), "out"):schedule()
  s:decompose_reduction("out", "j")
  s:reorder("out", "j", "i")
  assert(s:verify{ trials = 1 })
  s:run({ a = tensor.rand({ 3, 4 }, { seed = 1 }) }, { backend = "c" })
end)

finding("S5", "decompose_reduction keeps a local accumulator's init where the update reads it", function()
  local s = kernel.lower(tensor.param("a", { 3, 4 }):sum(1), "out"):schedule()
  s:cache_write("out", "local")
  s:reverse_compute_at("out_local", "out", "i")
  assert(s:verify{ trials = 1 })   -- the local accumulator lives in stage out alone
  if pcall(s.decompose_reduction, s, "out", "j") then assert(s:verify{ trials = 1 }) end
end)

finding("S6", "reverse_compute_at under a block loop with a bound loop inside it: no race", function()
  local a, b = tensor.param("a", { 6, 4 }), tensor.param("b", { 4, 9 })
  local s = kernel.lower(a:matmul(b):relu(), "out"):schedule()
  s:tile("xmatmul", "i", "j", 2, 3)
  s:bind("xmatmul", "i0", "blockIdx.y")
  s:bind("xmatmul", "j0", "blockIdx.x")
  if pcall(s.reverse_compute_at, s, "out", "xmatmul", "i0") then assert(s:verify{ trials = 1 }) end
end)

finding("S7", "compute_at into a thread loop with another thread axis bound beside it: no race", function()
  local a, b = tensor.param("a", { 2, 5 }), tensor.param("b", { 5, 8 })
  local s = kernel.lower(a:matmul(b):tanh(), "out"):schedule()
  s:tile("out", "i", "j", 1, 4)
  s:bind("out", "i1", "threadIdx.y")
  s:bind("out", "j1", "threadIdx.x")
  if pcall(s.compute_at, s, "xmatmul", "out", "i1") then assert(s:verify{ trials = 1 }) end
  -- and a block axis bound inside the target loop: every block of it writes the region
  local p, q = tensor.param("p", { 4, 4 }), tensor.param("q", { 4, 4 })
  s = kernel.lower((p * 2):contiguous():matmul(q), "out"):schedule()
  s:tile("out", "i", "j", 2, 2)
  s:bind("out", "i0", "blockIdx.y")
  s:bind("out", "j0", "blockIdx.x")
  if pcall(s.compute_at, s, "xmul", "out", "i0") then assert(s:verify{ trials = 1 }) end
end)

finding("S8", "set_scope of a cache moved under a block loop to global: no race between blocks", function()
  local a, c = tensor.param("a", { 6, 6 }), tensor.param("c", { 6, 4 })
  local s = kernel.lower(a:matmul(c), "out"):schedule()
  s:cache_read("out", "c", "shared")
  s:split("out", "i", { nil, 3 })
  s:bind("out", "i0", "blockIdx.x")
  s:compute_at("c_shared", "out", "i0")
  assert(s:verify{ trials = 1 })   -- one copy per block, in shared memory
  if pcall(s.set_scope, s, "c_shared", "global") then assert(s:verify{ trials = 1 }) end
end)

finding("S9", "reverse_compute_at into a loop under a split's guard reads only what the producer wrote", function()
  local s = kernel.lower(tensor.param("a", { 3, 2 }):max(0):exp(), "out"):schedule()
  s:split("xmax", "i", { nil, 1 })
  s:split("xmax", "i1", { nil, 2 })      -- i = i0 + i11, under if i11 < 1
  if pcall(s.reverse_compute_at, s, "out", "xmax", "i11") then assert(s:verify{ trials = 1 }) end
end)

finding("S10", "compute_at into a loop refuses a consumer that reads the buffer before that loop", function()
  local x, v = tensor.param("x", { 2, 3 }), tensor.param("v", { 3, 2 })
  local s = kernel.lower(x:softmax(1):matmul(v), "out"):schedule()
  s:rolling_update("out", "xsum.j")      -- stage xsum: xsum[i] += exp(x - xmax[i]), then loop j00
  if pcall(s.compute_at, s, "xmax", "xsum", "j00") then assert(s:verify{ trials = 1 }) end
end)

finding("S11", "reverse_compute_inline of a local cache under a warp loop: no race between lanes", function()
  local s = kernel.lower(tensor.param("a", { 9 }) * 2, "out"):schedule()
  s:cache_write("out", "local")
  s:bind("out", "i", "warp")             -- each lane its own out_local; bind would refuse a global store
  if pcall(s.reverse_compute_inline, s, "out_local") then assert(s:verify{ trials = 1 }) end
end)

finding("S12", "reverse_compute_at of a consumer that pads its producer leaves no element unwritten", function()
  local a = tensor.param("a", { 7 })
  local t = ((a:exp() * a:exp() + 1):log():contiguous()):pad{ { 0, 1 } }   -- out has 8, xlog 7
  local s = kernel.lower(t, "out"):schedule()
  if pcall(s.reverse_compute_at, s, "out", "xlog", "i") then assert(s:verify{ trials = 1 }) end
end)

finish()

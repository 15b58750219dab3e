-- kernel_bench.lua - the kernel interpreter's speed, checks off and on, against the tensor reference evaluator.
-- Run: ./tessel bench/kernel_bench.lua   (make bench runs it)
--
-- Each workload is a lowered kernel run on the CPU with GPU semantics. "ops" is
-- what k:counts() counts: every executed arithmetic operation, index arithmetic
-- included. The reference evaluator computes the same graph in the same run;
-- the last column is how much longer the interpreter takes than it.
local function time(f, reps)
  reps = reps or 3
  local best = math.huge
  for _ = 1, reps do
    local t0 = os.clock()
    f()
    best = math.min(best, os.clock() - t0)
  end
  return best
end

local function workload(name, graph, binds)
  local k = kernel.lower(graph)
  local ops = k:counts(binds).ops
  local off = time(function() k:run(binds, {checks = false}) end)
  local on = time(function() k:run(binds) end)
  local ref = time(function() graph:realize(binds) end)
  -- the same numbers, or the bench means nothing
  local a, b = k:run(binds):reshape{-1}:tolist(), graph:realize(binds):reshape{-1}:tolist()
  for i = 1, #a, 997 do
    assert(math.abs(a[i] - b[i]) <= 1e-4 * (1 + math.abs(b[i])), name .. ": the kernel disagrees with the reference")
  end
  return { name, ops, off, on, ref }
end

local x = tensor.param("x", {1024, 1024})
local xv = tensor.rand({1024, 1024}, {seed = 1}):realize()
local a, b = tensor.param("a", {128, 128}), tensor.param("b", {128, 128})
local av, bv = tensor.rand({128, 128}, {seed = 2}):realize(), tensor.rand({128, 128}, {seed = 3}):realize()

local rows = {
  workload("softmax 1024x1024 float32", x:softmax(1), {x = xv}),
  workload("matmul 128^3 float32", a:matmul(b), {a = av, b = bv}),
}

print(string.format("%-28s %10s %9s %10s %9s %9s %8s %9s", "kernel", "ops", "off (s)", "Mops/s",
                    "on (s)", "on/off", "ref (s)", "off/ref"))
local met = true
for _, r in ipairs(rows) do
  local mops = r[2] / r[3] / 1e6
  met = met and mops >= 50 and r[4] / r[3] <= 5
  print(string.format("%-28s %10d %9.3f %10.1f %9.3f %8.2fx %8.3f %8.2fx", r[1], r[2], r[3], mops, r[4],
                      r[4] / r[3], r[5], r[3] / r[5]))
end
print(string.format("target: >= 50 M ops/s per core with checks off, checks on <= 5x slower: %s",
                    met and "met" or "MISSED"))

-- tensor_eval.lua - throughput of the reference evaluator, compared with numpy when it is installed.
-- Run: ./tessel bench/tensor_eval.lua   (make bench runs it)
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

local N = 1 << 22
local x = tensor.rand({N}, {seed = 1}):realize()
local y = tensor.rand({N}, {seed = 2}):realize()
local results = {}

-- an elementwise chain of 6 ops: ((x*y + x) * 0.5 - y):maximum(x) * x
local chain = (((x * y + x) * 0.5 - y):maximum(x)) * x
local t = time(function() chain:realize() end)
results[#results + 1] = { "elementwise chain (6 ops, 4M float32)", t, 6 * N / t }

local s = time(function() x:sum():realize() end)
results[#results + 1] = { "sum of 4M float32", s, N / s }

local a = tensor.rand({4096, 1024}, {seed = 3}):realize()
local sm = time(function() a:softmax(1):realize() end, 2)
results[#results + 1] = { "softmax 4096x1024 float32", sm, 4096 * 1024 / sm }

local m1 = tensor.rand({256, 256}, {seed = 4}):realize()
local m2 = tensor.rand({256, 256}, {seed = 5}):realize()
local mm = time(function() m1:matmul(m2):realize() end, 2)
results[#results + 1] = { "matmul 256^3 float32", mm, 256 * 256 * 256 / mm }

print(string.format("%-40s %10s %16s", "benchmark", "seconds", "elements/s"))
for _, r in ipairs(results) do
  print(string.format("%-40s %10.4f %16.3e", r[1], r[2], r[3]))
end
print(string.format("targets: elementwise >= 1e8 ops/s: %s; matmul 256^3 < 0.5 s: %s",
  results[1][3] >= 1e8 and "met" or "MISSED", mm < 0.5 and "met" or "MISSED"))

-- numpy in the same run, single-threaded, when python3 and numpy are there
local py = [[
import os
os.environ["OPENBLAS_NUM_THREADS"] = "1"; os.environ["OMP_NUM_THREADS"] = "1"
import time, numpy as np
def best(f, r=3):
    b = 1e9
    for _ in range(r):
        t = time.process_time(); f(); b = min(b, time.process_time() - t)
    return b
N = 1 << 22
x = np.random.rand(N).astype(np.float32); y = np.random.rand(N).astype(np.float32)
a = np.random.rand(4096, 1024).astype(np.float32)
m1 = np.random.rand(256, 256).astype(np.float32); m2 = np.random.rand(256, 256).astype(np.float32)
def softmax(a):
    e = np.exp(a - a.max(1, keepdims=True)); return e / e.sum(1, keepdims=True)
print(best(lambda: np.maximum((x*y + x)*np.float32(0.5) - y, x) * x))
print(best(lambda: x.sum()))
print(best(lambda: softmax(a), 2))
print(best(lambda: (m1[:, :, None] * m2[None, :, :]).sum(1), 2))
print(best(lambda: m1 @ m2, 2))
]]
local f = io.open("/tmp/tessel_bench_np.py", "w")
if f then
  f:write(py)
  f:close()
  local p = io.popen("python3 /tmp/tessel_bench_np.py 2>/dev/null")
  local out = p and p:read("a") or ""
  if p then p:close() end
  local np = {}
  for v in out:gmatch("[%d%.e%-]+") do np[#np + 1] = tonumber(v) end
  if #np == 5 then
    print("\nnumpy (single thread) in the same run: tessel time / numpy time")
    for i = 1, 4 do
      print(string.format("%-40s %10.4f  ratio %6.1f", results[i][1], np[i], results[i][2] / np[i]))
    end
    print(string.format("%-40s %10.4f  ratio %6.1f", "matmul 256^3 with BLAS (m1 @ m2)", np[5], results[4][2] / np[5]))
  else
    print("\nnumpy: not available (pip install numpy to compare)")
  end
  os.remove("/tmp/tessel_bench_np.py")
end

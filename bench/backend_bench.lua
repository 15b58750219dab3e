-- backend_bench.lua - the C JIT (k:run{backend = "c"}) against the kernel interpreter, and a scheduled GEMM
-- and a softmax against numpy, all measured in this run. Run: ./tessel bench/backend_bench.lua  (make bench)
--
-- Times are the best of a few runs, wall clock. The interpreter's include placing inputs and reading
-- outputs back; the C JIT's are tessel_kernel alone (stats.run_s: no compile, no copies, no
-- cross-check), numpy's are the operation alone (time.perf_counter in the same python process).
-- The JIT's outputs are checked against the interpreter's bit for bit once per kernel; after that
-- runs skip the check (compare = false). Both the C kernels (OpenMP) and numpy (OpenBLAS) use
-- every core of the machine.
local function now()
  local p = assert(io.popen("date +%s%N"))
  local ns = tonumber(p:read("l"))
  p:close()
  return ns / 1e9
end

local function best(f, reps)
  local t = math.huge
  for _ = 1, reps or 3 do t = math.min(t, f()) end
  return t
end

local function interp(k, binds)
  return best(function()
    collectgarbage()
    local t0 = now()
    k:run(binds, {checks = false})
    return now() - t0
  end, 2)
end

-- the native kernel's time; the first run compiles and checks against the interpreter
-- (bit for bit, or within 1e-4 when fast)
local function jit(k, binds, check, fast)
  local st = {}
  k:run(binds, {backend = "c", compare = check, stats = st, fast = fast})
  local compile = st.compile_s
  return best(function()
    -- outputs are malloc'd outside Lua's heap: collect the last run's before the next
    -- (else the process grows by an output per run, and fresh pages fault ever slower)
    collectgarbage()
    k:run(binds, {backend = "c", compare = false, stats = st, fast = fast})
    return st.run_s
  end, 5), compile
end

local rows, notes = {}, {}
local function row(name, basename, base, t)
  rows[#rows + 1] = string.format("%-40s %-18s %10.4f %10.4f %9.2fx", name, basename, base, t, base / t)
end

-- 1. the C JIT against the interpreter, on lowered (unscheduled) kernels
local a, b = tensor.param("a", {256, 256}), tensor.param("b", {256, 256})
local mm = kernel.lower(a:matmul(b), "c")
local mmb = { a = tensor.rand({256, 256}, {seed = 1}):realize(), b = tensor.rand({256, 256}, {seed = 2}):realize() }
local tc, cc = jit(mm, mmb, true)
row("matmul 256^3 float32 (lowered)", "interpreter", interp(mm, mmb), tc)
notes[#notes + 1] = string.format("matmul 256^3 compiled in %.2f s", cc)

local x = tensor.param("x", {4096, 1024})
local sm = kernel.lower(x:softmax(1))
local smb = { x = tensor.rand({4096, 1024}, {seed = 3}):realize() }
tc, cc = jit(sm, smb, true)
local tsi = interp(sm, smb)
row("softmax 4096x1024 float32 (lowered)", "interpreter", tsi, tc)
notes[#notes + 1] = string.format("softmax 4096x1024 compiled in %.2f s", cc)
row("softmax 4096x1024 (lowered, fast)", "interpreter", tsi, (jit(sm, smb, true, true)))

-- 2. against numpy: a scheduled 1024^3 GEMM, a lowered 4096x4096 softmax
local has_numpy = os.execute("python3 -c 'import numpy' >/dev/null 2>&1")
local N = 1024
local ga, gb = tensor.param("a", {N, N}), tensor.param("b", {N, N})
local s = kernel.lower(ga:matmul(gb), "c"):schedule()
s:decompose_reduction("c", "k")           -- the init in its own stage, so that k can move
s:tile("c", "i", "j", 4, 64)              -- 4x64 tiles of c (16 AVX-512 registers of c)
s:reorder("c", "k", "i1", "j1")           -- per tile: k, then its rows, then 64 columns
s:apply_opt("THREAD", "c", "i0", 2)       -- the row tiles split over 2 OpenMP threads
s:apply_opt("UPCAST", "c", "j1", 0)       -- the 64 columns as one vector loop
local gemm = s:kernel()
local gbinds = { a = tensor.rand({N, N}, {seed = 4}):realize(), b = tensor.rand({N, N}, {seed = 5}):realize() }
-- the interpreter takes minutes at this size: the bit-for-bit check runs on a 128^3 copy of the schedule
local small = kernel.lower(tensor.param("a", {128, 128}):matmul(tensor.param("b", {128, 128})), "c"):schedule()
small:decompose_reduction("c", "k")
small:tile("c", "i", "j", 4, 64)
small:reorder("c", "k", "i1", "j1")
small:apply_opt("THREAD", "c", "i0", 2)
small:apply_opt("UPCAST", "c", "j1", 0)
small:run({a = tensor.rand({128, 128}, {seed = 6}), b = tensor.rand({128, 128}, {seed = 7})}, {backend = "c"})
small:run({a = tensor.rand({128, 128}, {seed = 6}), b = tensor.rand({128, 128}, {seed = 7})}, {backend = "c", fast = true})
local tg = jit(gemm, gbinds, false)
local tgf = jit(gemm, gbinds, false, true)
-- the softmax's rows over the cores: each stage's row loop parallel
local xs = tensor.param("x", {4096, 4096})
local ss = kernel.lower(xs:softmax(1)):schedule()
for _, st in ipairs{"xmax", "xsum", "out"} do ss:parallel(st, "i") end
local sm2 = ss:kernel()
local smb2 = { x = tensor.rand({4096, 4096}, {seed = 8}):realize() }
local ts = jit(sm2, smb2, false)
local tsf = jit(sm2, smb2, false, true)
-- the same schedule checked against the interpreter on 64 rows
local ssm = kernel.lower(tensor.param("x", {64, 4096}):softmax(1)):schedule()
for _, st in ipairs{"xmax", "xsum", "out"} do ssm:parallel(st, "i") end
local smallx = {x = tensor.rand({64, 4096}, {seed = 9})}
ssm:run(smallx, {backend = "c"})
ssm:run(smallx, {backend = "c", fast = true})

if has_numpy then
  local py = [[
import time, numpy as np
def best(f, n=5):
    t = float("inf")
    for _ in range(n):
        t0 = time.perf_counter(); f(); t = min(t, time.perf_counter() - t0)
    return t
r = np.random.default_rng(0)
a = r.random((1024, 1024), dtype=np.float32); b = r.random((1024, 1024), dtype=np.float32)
a @ b
x = r.random((4096, 4096), dtype=np.float32)
def softmax():
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
print(best(lambda: a @ b), best(softmax))
]]
  local f = assert(io.popen("python3 -c '" .. py .. "'"))
  local out = f:read("a")
  f:close()
  local tn, tsn = out:match("(%S+)%s+(%S+)")
  tn, tsn = tonumber(tn), tonumber(tsn)
  if tn and tsn then
    -- a ratio above 1x: the C kernel is faster
    row("matmul 1024^3 float32 (scheduled)", "numpy (OpenBLAS)", tn, tg)
    row("matmul 1024^3 (scheduled, fast)", "numpy (OpenBLAS)", tn, tgf)
    row("softmax 4096x4096 float32 (rows parallel)", "numpy", tsn, ts)
    row("softmax 4096x4096 (rows parallel, fast)", "numpy", tsn, tsf)
  else
    notes[#notes + 1] = "numpy rows skipped: python3 printed " .. tostring(out)
  end
else
  notes[#notes + 1] = "numpy rows skipped: python3 -c 'import numpy' failed (pip install numpy)"
end

local p = io.popen("nproc")
local cores = p:read("l")
p:close()
notes[#notes + 1] = "cores: " .. cores .. "; flags: -std=c11 -O2 -march=native -fPIC -shared -ffp-contract=off -fwrapv -frounding-math [-fopenmp]"
notes[#notes + 1] = "fast: -std=c11 -O3 -march=native -fPIC -shared -ffast-math -fwrapv [-fopenmp]; exp2f, vectorized through libmvec"
notes[#notes + 1] = "targets (issue 13): 50x the interpreter, 0.5x numpy's GEMM, 1x numpy's softmax"
notes[#notes + 1] = "exact rows: exp is (float)exp2((double)x) through glibc, as the interpreter computes it, bit for bit"
print(string.format("\n%-40s %-18s %10s %10s %10s", "kernel", "against", "base (s)", "C JIT (s)", "speedup"))
for _, r in ipairs(rows) do print(r) end
for _, n in ipairs(notes) do print(n) end

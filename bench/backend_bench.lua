-- backend_bench.lua - the C JIT (k:run{backend = "c"}) against the kernel interpreter, and scheduled GEMMs and
-- softmax against numpy (OpenBLAS), all measured in this run. Run: ./tessel bench/backend_bench.lua  (make bench)
--
-- Times are the best of several runs, wall clock. The interpreter's include placing inputs and reading outputs
-- back; the C JIT's are tessel_kernel alone (stats.run_s: no compile, no copies, no cross-check); numpy's are
-- the operation alone (time.perf_counter in one python process). Every schedule is checked bit for bit
-- against the interpreter (at the full size where the interpreter takes seconds, on a smaller copy of the same
-- template where it would take minutes). Both the C kernels (OpenMP) and OpenBLAS use every core; numpy's
-- element-wise softmax uses one.
--
-- numpy runs with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset for that command only: some machines set them
-- (older OpenBLAS builds need it) and they make a current OpenBLAS choose a slower kernel; the table names the
-- kernel OpenBLAS ran (threadpoolctl, when installed).
local T = require "scripts.cpu.templates"

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

-- the native kernel's time; the first run compiles and, with check, compares with the interpreter
-- (bit for bit, or within 1e-4 when fast)
local function jit(k, binds, check, fast, reps)
  local st = {}
  k:run(binds, {backend = "c", compare = check, stats = st, fast = fast})
  local compile = st.compile_s
  return best(function()
    -- outputs are malloc'd outside Lua's heap: collect the last run's before the next
    collectgarbage()
    k:run(binds, {backend = "c", compare = false, stats = st, fast = fast})
    return st.run_s
  end, reps or 5), compile
end

local rows, notes = {}, {}
local function row(name, basename, base, t, extra)
  rows[#rows + 1] = string.format("%-44s %-17s %10.3f %10.3f %8.2fx  %s", name, basename, base * 1e3, t * 1e3,
                                  base / t, extra or "")
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

-- 2. numpy in one process: GEMMs, softmax, and what OpenBLAS is
local sizes = {256, 1024, 2048}
local np = {}
local py = [[
import os, time, numpy as np
def best(f, n=9):
    t = float("inf")
    for _ in range(n):
        t0 = time.perf_counter(); f(); t = min(t, time.perf_counter() - t0)
    return t
r = np.random.default_rng(0)
for n in (256, 1024, 2048):
    a = r.random((n, n), dtype=np.float32); b = r.random((n, n), dtype=np.float32)
    a @ b
    print("gemm", n, best(lambda: a @ b, 9 if n < 2048 else 5))
x = r.random((4096, 4096), dtype=np.float32)
def softmax():
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
print("softmax", 4096, best(softmax))
cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
print("blas", cfg.get("name"), cfg.get("version"))
try:
    from threadpoolctl import threadpool_info
    for i in threadpool_info():
        if i["internal_api"] == "openblas":
            print("kernel", i.get("architecture"), i.get("num_threads"))
except ImportError:
    print("kernel unknown (pip install threadpoolctl)")
print("numpy", np.__version__)
]]
local f = io.popen("env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 -c '" .. py .. "' 2>&1")
local out = f and f:read("a") or ""
if f then f:close() end
for line in out:gmatch("[^\n]+") do
  local what, n, t = line:match("^(%a+) (%d+) (%S+)$")
  if what and tonumber(t) then np[what .. n] = tonumber(t) end
  if line:match("^blas ") or line:match("^kernel ") or line:match("^numpy ") then np[#np + 1] = line end
end
if not np.gemm1024 then
  notes[#notes + 1] = "numpy rows skipped: python3 printed " .. out:sub(1, 200)
end

-- 3. GEMMs: the tile sizes searched on this machine, then timed exact and fast
local function gemm_schedule(n, p)
  local s = kernel.lower(tensor.param("a", {n, n}):matmul(tensor.param("b", {n, n})), "c"):schedule()
  return T.gemm(s, p), s
end
for _, n in ipairs(sizes) do
  local binds = { a = tensor.rand({n, n}, {seed = 4}):realize(), b = tensor.rand({n, n}, {seed = 5}):realize() }
  local s = kernel.lower(tensor.param("a", {n, n}):matmul(tensor.param("b", {n, n})), "c"):schedule()
  local t0 = now()
  local r = s:search{params = {mr = {4, 8, 16}, nr = {16, 32, 64}}, apply = T.gemm, verify = false,
                     bindings = binds, reps = n < 2048 and 5 or 3, progress = false, seed = 1}
  local p = r.best
  notes[#notes + 1] = string.format("GEMM %d^3: s:search chose mr = %d, nr = %d of 9 in %.1f s", n, p.mr, p.nr,
                                    now() - t0)
  -- the chosen template checked bit for bit on a copy the interpreter runs in seconds
  local m = math.min(n, 128)
  local small = gemm_schedule(m, p)
  local sb = { a = tensor.rand({m, m}, {seed = 6}), b = tensor.rand({m, m}, {seed = 7}) }
  small:run(sb, {backend = "c"})
  small:run(sb, {backend = "c", fast = true})
  local k = s:kernel()
  local te = jit(k, binds, n <= 256, false, 10)
  local tf = jit(k, binds, n <= 256, true, 10)
  if np["gemm" .. n] then
    local tile = ("%dx%d tile"):format(p.mr, p.nr)
    row(("matmul %d^3 float32 (template, exact)"):format(n), "numpy (OpenBLAS)", np["gemm" .. n], te, tile)
    row(("matmul %d^3 (template, fast)"):format(n), "numpy (OpenBLAS)", np["gemm" .. n], tf, tile)
  end
end

-- 4. softmax 4096^2: its exponentials stored, one pass a row, sums in vector registers
local X = tensor.param("x", {4096, 4096})
local ss = T.softmax(kernel.lower(T.softmax_program(X), "out"):schedule(), {lanes = 16})
local smb2 = { x = tensor.rand({4096, 4096}, {seed = 8}):realize() }
local check = T.softmax(kernel.lower(T.softmax_program(tensor.param("x", {64, 4096})), "out"):schedule(), {})
check:run({x = tensor.rand({64, 4096}, {seed = 9})}, {backend = "c"})
check:run({x = tensor.rand({64, 4096}, {seed = 9})}, {backend = "c", fast = true})
local ts = jit(ss:kernel(), smb2, false, false, 10)
local tsf = jit(ss:kernel(), smb2, false, true, 10)
if np.softmax4096 then
  row("softmax 4096x4096 float32 (template, exact)", "numpy", np.softmax4096, ts, "16 lanes")
  row("softmax 4096x4096 (template, fast)", "numpy", np.softmax4096, tsf, "16 lanes")
end

local p = io.popen("nproc")
local cores = p:read("l")
p:close()
notes[#notes + 1] = "cores: " .. cores .. "; exact: -std=c11 -O2 -march=native -ffp-contract=off -fwrapv " ..
                    "-frounding-math -fno-tree-sra [-fopenmp]"
notes[#notes + 1] = "fast: -std=c11 -O3 -march=native -ffast-math -fwrapv -fno-tree-sra [-fopenmp]; exp2f through libmvec"
notes[#notes + 1] = "exact: the interpreter's bits; exp is (float)exp2((double)x) through glibc, scalar"
for _, l in ipairs(np) do notes[#notes + 1] = l end
notes[#notes + 1] = "numpy: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset for its command only"
notes[#notes + 1] = "targets (issue 32): GEMM 1024^3 >= 0.9x fast, >= 0.7x exact; 256^3 and 2048^3 >= 0.8x; " ..
                    "softmax exact >= 1x, fast >= 4x"
print(string.format("\n%-44s %-17s %10s %10s %9s", "kernel", "against", "base (ms)", "C JIT (ms)", "speedup"))
for _, r in ipairs(rows) do print(r) end
print()
for _, n in ipairs(notes) do print("-- " .. n) end

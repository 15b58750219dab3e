-- cpu_gemm.lua - TVM's CPU GEMM schedule on the C JIT (issue 32): a register tile kept in vector
-- registers across k, B packed in panels through a CuTe layout, panels over the cores; checked, drawn,
-- timed, and its tile sizes searched. Run: ./tessel scripts/cpu_gemm.lua [N] [out dir] [search]
--   ./tessel scripts/cpu_gemm.lua 1024 out search   (the search takes about a minute on 2 cores)
local T = require "scripts.cpu.templates"
local N, dir, search = tonumber(arg and arg[1]) or 128, arg and arg[2] or "out", arg and arg[3] == "search"
local function title(s) print("\n== " .. s) end

local a, b = tensor.param("a", {N, N}), tensor.param("b", {N, N})
local s = kernel.lower(a:matmul(b), "c"):schedule()
T.gemm(s, {mr = 8, nr = 32})                  -- scripts/cpu/templates.lua: 17 steps
title(("c = a @ b, %d^3 float32, scheduled"):format(N))
print(s)

title("the register tile in C: 8 rows unrolled, 32 columns as two 16-float vectors")
local src = s:source("c")
io.write(src:match("\n(%s+for %(int64_t k = .-\n)%s+#pragma GCC unroll 8\n%s+for %(int64_t ax0") or "")

if N <= 256 then
  title("checked against the tensor program")
  io.write(select(2, s:verify{trials = 1}))
end

title("pictures")
assert(os.execute("mkdir -p '" .. dir .. "'"))
viz.render(s:kernel(), dir .. "/cpu_gemm_nest.svg")
print(dir .. "/cpu_gemm_nest.svg: the loop nest (stages in green, loops by axis type)")
-- the packing layout at a size that can be read: K = 4 rows of B, 3 panels of nr = 4 columns
local pack = cute.layout("(4,(4,3)):(4,(1,16))")
viz.render(pack, dir .. "/cpu_gemm_packed.svg", {title = "B (4 x 12) packed in panels of 4 columns: " ..
                                                  "(K,(nr,N/nr)):(nr,(1,nr*K))"})
print(dir .. "/cpu_gemm_packed.svg: " .. tostring(pack) .. ", each panel K x nr contiguous")

title("timed on the C JIT (the best of 5 runs, the kernel alone)")
local binds = {a = tensor.rand({N, N}, {seed = 1}):realize(), b = tensor.rand({N, N}, {seed = 2}):realize()}
for _, fast in ipairs{false, true} do
  local st, t = {}, math.huge
  s:run(binds, {backend = "c", compare = N <= 256, fast = fast})
  for _ = 1, 5 do
    collectgarbage()
    s:run(binds, {backend = "c", compare = false, stats = st, fast = fast})
    t = math.min(t, st.run_s)
  end
  print(("%-6s %8.3f ms  %6.1f GFLOP/s"):format(fast and "fast" or "exact", t * 1e3, 2 * N ^ 3 / t / 1e9))
end

if search then
  title("s:search over the template's tile sizes (verify = false: each candidate is compared with the " ..
        "lowered kernel's compiled output instead)")
  local s2 = kernel.lower(a:matmul(b), "c"):schedule()
  local r = s2:search{params = {mr = {4, 8, 16}, nr = {16, 32, 64}}, apply = T.gemm, verify = false,
                      bindings = binds}
  print(r)
  io.write(s2:trace())
end

-- bench/dist/export.lua - the multi-GPU exports bench/dist/run.sh builds and runs (docs/distributed.md):
--   examples/<name>   scripts/distributed.lua's three programs, checked against the simulation
--   gemm_rs_check     the Section 4.2 program (float16 GEMM sharded on K on the tensor cores, its
--                     partial sums reduce-scattered over rows) at a size the simulation runs
--   gemm_rs_<M>       the same program at benchmark sizes (no simulation: bench/dist/ref.cu checks
--                     it against cuBLAS + NCCL and times both)
-- Run: ./tessel bench/dist/export.lua [dir [n]] (dir defaults to bench/dist/out, n GPUs to 2).
local dir = arg and arg[1] or "bench/dist/out"
local n = math.tointeger(tonumber(arg and arg[2])) or 2
local gemm = assert(loadfile("scripts/gpu/gemm.lua"))("module")

-- C = A B on n GPUs: A (M, K) sharded on K, B (K, N) on K, C's partial sums reduce-scattered over rows
local function gemm_rs(M, N, K)
  local mesh = {{"gpuid", n}}
  local function layout(shape, p) return axe.dtensor(shape, mesh, {p}) end
  local P = dist.new(n)
  P:tensor("A", "float16", {M, K}, layout({M, K}, "S(1)"))
  P:tensor("B", "float16", {K, N}, layout({K, N}, "S(0)"))
  P:tensor("Cp", "float16", {M, N}, layout({M, N}, "R"), {partial = true})
  P:tensor("C", "float16", {M, N}, layout({M, N}, "S(0)"))
  P:launch(gemm.kernel(M, N, K // n, {stages = 3}), {C = "Cp"})   -- the cp.async pipeline (version 5b)
  P:redistribute("Cp", "C")
  return P
end

os.execute("mkdir -p '" .. dir .. "'")
assert(loadfile("scripts/distributed.lua"))(dir .. "/examples", n)
local P = gemm_rs(128, 256, 256)
assert(P:export(dir .. "/gemm_rs_check", {fast = true}))
print("exported " .. dir .. "/gemm_rs_check")
for _, s in ipairs{{4096, 4096, 8192}, {8192, 8192, 8192}} do
  local where = string.format("%s/gemm_rs_%d_%d_%d", dir, s[1], s[2], s[3])
  assert(gemm_rs(s[1], s[2], s[3]):export(where, {fast = true, check = false}))
  print("exported " .. where)
end

-- bench/dist/export.lua - the multi-GPU exports bench/dist/run.sh builds and runs (docs/distributed.md):
--   examples/<name>   scripts/distributed.lua's three programs, checked against the simulation
--   redistributions/  one small program a kind of redistribution (every collective, the packs,
--                     the unpacks and the slices), checked against the simulation
--   gemm_rs_check     the Section 4.2 program (float16 GEMM sharded on K on the tensor cores, its
--                     partial sums reduce-scattered over rows) at a size the simulation runs
--   gemm_rs_<M>       the same program at benchmark sizes (no simulation: bench/dist/ref.cu checks
--                     it against cuBLAS + NCCL and times both)
-- Run: ./tessel bench/dist/export.lua [dir [n]] (dir defaults to bench/dist/out, n GPUs to 2).
local dir = arg and arg[1] or "bench/dist/out"
local n = math.tointeger(tonumber(arg and arg[2])) or 2
local gemm = assert(loadfile("scripts/gpu/gemm.lua"))("module")

-- C = A B on n GPUs: A (M, K) sharded on K, B (K, N) on K, C's partial sums reduce-scattered over rows.
-- The local GEMM is the wgmma + TMA kernel (docs/gpu-notes.md, version 10): warp-specialized, one
-- group in flight, persistent in groups of 16 rows of tiles at the benchmark sizes; 2 stages and
-- one block a tile for the small checked program
local function gemm_rs(M, N, K)
  local mesh = {{"gpuid", n}}
  local function layout(shape, p) return axe.dtensor(shape, mesh, {p}) end
  local P = dist.new(n)
  P:tensor("A", "float16", {M, K}, layout({M, K}, "S(1)"))
  P:tensor("B", "float16", {K, N}, layout({K, N}, "S(0)"))
  P:tensor("Cp", "float16", {M, N}, layout({M, N}, "R"), {partial = true})
  P:tensor("C", "float16", {M, N}, layout({M, N}, "S(0)"))
  local big = M >= 4096
  P:launch(gemm.kernel_wgmma(M, N, K // n, big and {ws = true, pending = 1, persistent = 132, group = 16}
                                           or {ws = true, pending = 1, stages = 2}), {C = "Cp"})
  P:redistribute("Cp", "C")
  return P
end

-- every kind of redistribution as a small program checked on the GPUs: a copy kernel writes x
-- from the input (so a partial x has a writer), then x -> y; y's layout chooses the collective
local function redistribution(from, to, partial)
  local shape = {64, 96}
  local mesh = {{"gpuid", n}}
  local function layout(p)
    if p == "one" then return string.format("S[(64,96):(96,1)] + %d@gpuid", n - 1) end
    return axe.dtensor(shape, mesh, {p})
  end
  local P = dist.new(n)
  P:tensor("s", "float32", shape, layout(partial and "R" or from))
  P:tensor("x", "float32", shape, layout(from), {partial = partial})
  P:tensor("y", "float32", shape, layout(to))
  local count = 64 * 96 // ((from == "R" or from == "one" or partial) and 1 or n)
  local k = kernel.new{grid = {count // 64}, block = {64}}
  local S, X = k:input("s", "float32", {count}), k:output("x", "float32", {count})
  k:stage("x", function() X[{k.bx * 64 + k.tx}] = S[{k.bx * 64 + k.tx}] end)
  P:launch(k)
  P:redistribute("x", "y")
  return P
end

os.execute("mkdir -p '" .. dir .. "'")
assert(loadfile("scripts/distributed.lua"))(dir .. "/examples", n)
for _, c in ipairs{{"R", "S(0)", true}, {"R", "S(1)", true}, {"R", "R", true}, {"R", "one", true},
                   {"S(0)", "R"}, {"S(1)", "R"}, {"S(0)", "S(1)"}, {"R", "S(1)"}, {"one", "R"},
                   {"one", "S(1)"}} do
  local name = string.format("%s%s_to_%s", c[3] and "partial_" or "", c[1], c[2]):gsub("[()]", "")
  local P = redistribution(c[1], c[2], c[3])
  assert(P:export(dir .. "/redistributions/" .. name, {fast = true}))
end
print("exported " .. dir .. "/redistributions")
local P = gemm_rs(128, 256, 128 * n)   -- two 64-wide k steps a GPU (the kernel's stages)
assert(P:export(dir .. "/gemm_rs_check", {fast = true}))
print("exported " .. dir .. "/gemm_rs_check")
for _, s in ipairs{{4096, 4096, 8192}, {8192, 8192, 8192}} do
  local where = string.format("%s/gemm_rs_%d_%d_%d", dir, s[1], s[2], s[3])
  assert(gemm_rs(s[1], s[2], s[3]):export(where, {fast = true, check = false}))
  print("exported " .. where)
end

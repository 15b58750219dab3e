-- bench/dist/export.lua - the multi-GPU exports bench/dist/run.sh builds and runs (docs/distributed.md):
--   examples/<name>   scripts/distributed.lua's three programs, checked against the simulation
--   redistributions/  one small program a kind of redistribution (every collective, the packs,
--                     the unpacks and the slices), checked against the simulation
--   gemm_rs_check     the Section 4.2 program (float16 GEMM sharded on K on the tensor cores, its
--                     partial sums reduce-scattered over rows) at a size the simulation runs
--   gemm_rs_<M>       the same program at benchmark sizes (no simulation: bench/dist/ref.cu checks
--                     it against cuBLAS + NCCL and times both)
--   gemm_rs_ov<c>_..  the GEMM a c'th of the rows at a time, each part's reduce_scatter (on the copy
--                     engines) overlapping the next parts' GEMM (docs/distributed.md, "Overlap");
--                     _check, _ovload2_check, _ovnccl2_check at a small size, each way of moving data
--   ag_gemm_..        A sharded on rows, allgathered, then C = A B with B sharded on columns: in one
--                     piece (ag_gemm_) and a part at a time (ag_gemm_ov<c>_), each part's GEMM
--                     waiting for its part of the allgather alone
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

-- Rows of an (M, X) tensor stored (parts, devices, rows): part j of every device's rows is one contiguous,
-- rank-major NCCL buffer. cols: X sharded over the devices, else replicated (partial or gathered).
local function parted(M, X, c, cols)
  local rr = M // (n * c)
  if cols then
    local xl = X // n
    return string.format("S[(%d,%d,%d,%d,%d):(%d,%d,%d,1@gpuid,1)]", n, c, rr, n, xl, rr * xl, n * rr * xl, xl)
  end
  return string.format("S[(%d,%d,%d,%d):(%d,%d,%d,1)] + R[%d:1@gpuid]", n, c, rr, X, rr * X, n * rr * X, X, n)
end

-- GEMM + reduce_scatter in c parts: launch j computes rows j of every device's block of Cp, then part
-- j's reduce_scatter runs on the collectives' stream while launch j + 1 computes
local function gemm_rs_overlap(M, N, K, c, opts, via, blocks)
  local mesh = {{"gpuid", n}}
  local P = dist.new(n)
  P:tensor("A", "float16", {M, K}, parted(M, K, c, true))
  P:tensor("B", "float16", {K, N}, axe.dtensor({K, N}, mesh, {"S(0)"}))
  P:tensor("Cp", "float16", {M, N}, parted(M, N, c, false), {partial = true})
  P:tensor("C", "float16", {M, N}, axe.dtensor({M, N}, mesh, {"S(0)"}))
  local g = gemm.kernel_wgmma(M // c, N, K // n, opts)
  for j = 0, c - 1 do
    P:launch(g, {A = {"A", at = j * (M // c) * (K // n)}, C = {"Cp", at = j * (M // c) * N}})
    P:redistribute("Cp", "C", {part = j + 1, parts = c, via = via, blocks = blocks})
  end
  return P
end

-- AllGather + GEMM: A (M, K) sharded on rows is gathered into Af, then C = Af B with B sharded on
-- columns; in c parts, part j's GEMM waits for part j of the allgather alone
local function ag_gemm(M, N, K, c, opts, via, blocks)
  local mesh = {{"gpuid", n}}
  local P = dist.new(n)
  P:tensor("A", "float16", {M, K}, axe.dtensor({M, K}, mesh, {"S(0)"}))
  P:tensor("Af", "float16", {M, K}, c and parted(M, K, c, false) or axe.dtensor({M, K}, mesh, {"R"}))
  P:tensor("B", "float16", {K, N}, axe.dtensor({K, N}, mesh, {"S(1)"}))
  P:tensor("C", "float16", {M, N}, c and parted(M, N, c, true) or axe.dtensor({M, N}, mesh, {"S(1)"}))
  if not c then
    P:redistribute("A", "Af")
    P:launch(gemm.kernel_wgmma(M, N // n, K, opts), {A = "Af"})
    return P
  end
  for j = 1, c do P:redistribute("A", "Af", {part = j, parts = c, via = via, blocks = blocks}) end
  local g = gemm.kernel_wgmma(M // c, N // n, K, opts)
  for j = 0, c - 1 do
    P:launch(g, {A = {"Af", at = j * (M // c) * K}, C = {"C", at = j * (M // c) * (N // n)}})
  end
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
-- the overlapped programs: checked against the simulation small, through each way of moving the
-- parts (copy engines, loads, NCCL), then at the benchmark size: GEMM + reduce_scatter in 8 parts
-- and allgather + GEMM in 4 (the best of 2, 4 and 8 on 2 and 4 H200s, docs/distributed.md),
-- moved by the copy engines, the GEMM persistent over all 132 SMs (copies take none). For a sweep:
-- TESSEL_DIST_PARTS="2 4 8" (both programs in each), TESSEL_DIST_VIA (copy, load or nccl),
-- TESSEL_DIST_BLOCKS (the GEMM's persistent blocks, 0: a block a tile), TESSEL_DIST_LOAD_BLOCKS.
local small = {ws = true, pending = 1, stages = 2}
for _, via in ipairs{"copy", "load", "nccl"} do
  local tag = via == "copy" and "" or via
  assert(gemm_rs_overlap(256 * n, 256, 128 * n, 2, small, via):export(dir .. "/gemm_rs_ov" .. tag .. "2_check", {fast = true}))
  assert(ag_gemm(256 * n, 256 * n, 128, 2, small, via):export(dir .. "/ag_gemm_ov" .. tag .. "2_check", {fast = true}))
end
print("exported " .. dir .. "/{gemm_rs,ag_gemm}_ov{,load,nccl}2_check")
local blocks = math.tointeger(tonumber(os.getenv("TESSEL_DIST_BLOCKS") or "")) or 132
local via = os.getenv("TESSEL_DIST_VIA") or "copy"
local lblocks = via == "load" and (math.tointeger(tonumber(os.getenv("TESSEL_DIST_LOAD_BLOCKS") or "")) or 16) or nil
local sweep = os.getenv("TESSEL_DIST_PARTS")
local M, N, K = 8192, 8192, 8192
local function opts(c)
  local group = math.min(16, M // c // 128)
  return blocks > 0 and {ws = true, pending = 1, persistent = blocks, group = group} or {ws = true, pending = 1}
end
for cs in (sweep or "8"):gmatch("%d+") do
  local c = math.tointeger(tonumber(cs))
  local where = string.format("%s/gemm_rs_ov%d_%d_%d_%d", dir, c, M, N, K)
  assert(gemm_rs_overlap(M, N, K, c, opts(c), via, lblocks):export(where, {fast = true, check = false}))
  print("exported " .. where)
end
for cs in (sweep or "4"):gmatch("%d+") do
  local c = math.tointeger(tonumber(cs))
  local where = string.format("%s/ag_gemm_ov%d_%d_%d_%d", dir, c, M, N, K)
  assert(ag_gemm(M, N, K, c, opts(c), via, lblocks):export(where, {fast = true, check = false}))
  print("exported " .. where)
end
assert(ag_gemm(8192, 8192, 8192, nil, {ws = true, pending = 1, persistent = 132, group = 16})
       :export(dir .. "/ag_gemm_8192_8192_8192", {fast = true, check = false}))
print("exported " .. dir .. "/ag_gemm_8192_8192_8192")

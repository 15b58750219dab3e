-- scripts/distributed.lua - programs over several GPUs (docs/distributed.md). Tensors carry Axe
-- layouts over the device axis gpuid; every GPU runs the same kernels on its own storage, and the
-- layouts decide which NCCL collective each redistribution needs (the Axe paper, Section 4.2).
-- Three programs, each printed as a plan, run on the CPU (dist's simulation) and checked against
-- the tensor program of the same math:
--   1. a GEMM sharded on K, whose partial sums are reduce-scattered over rows (Section 4.2);
--   2. a tensor-parallel MLP: W1 sharded by columns, W2 by rows, one allreduce (Megatron);
--   3. an allgather of an activation sharded by columns (a permute out of NCCL's rank order).
-- Run: ./tessel scripts/distributed.lua [dir [n]]   (with dir: each program exported under
-- dir/<name>, ready for `make -C dir/<name> check` on a machine with n GPUs (default 2) and NCCL)
local dir, ndev = ...   -- the script's arguments, or what a caller of loadfile passes
if type(dir) ~= "string" then dir = nil end
local n = math.tointeger(tonumber(ndev)) or 2
local mesh = {{"gpuid", n}}
local function layout(shape, placement) return axe.dtensor(shape, mesh, {placement}) end

-- C (M, N) = A (M, K) B (K, N) in float32, a thread an output, 16x16 threads a block; relu on request
local function gemm(M, N, K, names, relu)
  local k = kernel.new{grid = {M // 16, N // 16}, block = {16, 16}}
  local A = k:input(names[1], "float32", {M, K})
  local B = k:input(names[2], "float32", {K, N})
  local C = k:output(names[3], "float32", {M, N})
  local acc = k:register("acc", "float32", {1})
  k:stage(names[3], function()
    local i, j = k.bx * 16 + k.ty, k.by * 16 + k.tx
    acc[0] = 0
    for kk in kernel.range(K, {name = "kk", type = "reduce"}) do
      acc[0] = acc[0] + A[{i, kk}] * B[{kk, j}]
    end
    C[{i, j}] = relu and kernel.max(acc[0], 0) or acc[0]
  end)
  return k
end

-- a copy of X, a thread an element: the program's own writer of an activation
local function copy(M, N, from, to)
  local k = kernel.new{grid = {M * N // 256}, block = {256}}
  local X = k:input(from, "float32", {M * N})
  local Y = k:output(to, "float32", {M * N})
  k:stage(to, function() Y[{k.bx * 256 + k.tx}] = X[{k.bx * 256 + k.tx}] end)
  return k
end

local function maxdiff(a, b)
  local x, y, d = a:tolist(), b:tolist(), 0
  for i = 1, #x do
    for j = 1, #x[i] do d = math.max(d, math.abs(x[i][j] - y[i][j])) end
  end
  return d
end

local programs = {}

-- 1. GEMM + reduce_scatter
do
  local M, N, K = 64, 64, 128
  local P = dist.new(n)
  P:tensor("A", "float32", {M, K}, layout({M, K}, "S(1)"))
  P:tensor("B", "float32", {K, N}, layout({K, N}, "S(0)"))
  P:tensor("Cp", "float32", {M, N}, layout({M, N}, "R"), {partial = true})
  P:tensor("C", "float32", {M, N}, layout({M, N}, "S(0)"))
  P:launch(gemm(M, N, K // n, {"A", "B", "C"}), {C = "Cp"})
  P:redistribute("Cp", "C")
  local A, B = tensor.rand({M, K}, {seed = 1}) - 0.5, tensor.rand({K, N}, {seed = 2}) - 0.5
  programs[#programs + 1] = {name = "gemm_reduce_scatter", P = P, inputs = {A = A, B = B},
                             out = "C", want = A:matmul(B)}
end

-- 2. tensor-parallel MLP: Y = relu(X W1) W2
do
  local M, D, H = 32, 64, 128
  local P = dist.new(n)
  P:tensor("X", "float32", {M, D}, layout({M, D}, "R"))
  P:tensor("W1", "float32", {D, H}, layout({D, H}, "S(1)"))
  P:tensor("W2", "float32", {H, D}, layout({H, D}, "S(0)"))
  P:tensor("Hs", "float32", {M, H}, layout({M, H}, "S(1)"))
  P:tensor("Yp", "float32", {M, D}, layout({M, D}, "R"), {partial = true})
  P:tensor("Y", "float32", {M, D}, layout({M, D}, "R"))
  P:launch(gemm(M, H // n, D, {"X", "W1", "Hs"}, true))
  P:launch(gemm(M, D, H // n, {"Hs", "W2", "Y"}), {Y = "Yp"})
  P:redistribute("Yp", "Y")
  local X = tensor.rand({M, D}, {seed = 3}) - 0.5
  local W1, W2 = tensor.rand({D, H}, {seed = 4}) - 0.5, tensor.rand({H, D}, {seed = 5}) - 0.5
  programs[#programs + 1] = {name = "mlp_allreduce", P = P, inputs = {X = X, W1 = W1, W2 = W2},
                             out = "Y", want = X:matmul(W1):relu():matmul(W2)}
end

-- 3. allgather of a column-sharded activation
do
  local M, N = 32, 64
  local P = dist.new(n)
  P:tensor("X", "float32", {M, N}, layout({M, N}, "S(1)"))
  P:tensor("Xs", "float32", {M, N}, layout({M, N}, "S(1)"))
  P:tensor("Xr", "float32", {M, N}, layout({M, N}, "R"))
  P:launch(copy(M, N // n, "X", "Xs"))
  P:redistribute("Xs", "Xr")
  local X = tensor.rand({M, N}, {seed = 6}) - 0.5
  programs[#programs + 1] = {name = "allgather", P = P, inputs = {X = X}, out = "Xr", want = X}
end

for _, c in ipairs(programs) do
  print("== " .. c.name)
  print(c.P)
  local got = c.P:simulate(c.inputs)
  local d = maxdiff(got[c.out], c.want)
  print(string.format("simulated on %d devices: %s matches the tensor program (largest difference %.3g)", n,
                      c.out, d))
  assert(d < 1e-4, c.name .. ": the simulation differs from the tensor program")
  if dir then
    local where = dir .. "/" .. c.name
    assert(c.P:export(where, {inputs = c.inputs}))
    print("exported to " .. where .. " (make -C " .. where .. " check)")
  end
  print()
end

-- scripts/gpu/layernorm.lua - layer normalization over the rows of a matrix for the GPU, written
-- with kernel.new: one block a row, as scripts/gpu/softmax.lua.
--
-- Y[i, j] = (X[i, j] - mean_i) / sqrt(var_i + eps) * W[j] + B[j], with the mean and the
-- (biased) variance of row i, as torch.nn.functional.layer_norm computes them. Each thread
-- folds a strided slice of the row into a register; the block combines the partials in shared
-- memory by halving steps, once for the sum and once for the sum of squared deviations (two
-- passes: no cancellation, unlike E[x^2] - E[x]^2); a last pass writes the output. Run it:
-- ./tessel scripts/gpu/layernorm.lua (checks a small case).
local M = {}

local function block_reduce(k, P, T)
  local h = T // 2
  while h >= 1 do
    local step = h
    kernel.when(kernel.lt(k.tx, step), function() P[k.tx] = P[k.tx] + P[k.tx + step] end)
    kernel.barrier()
    h = h // 2
  end
end

function M.kernel(R, C, T, eps)
  eps = eps or 1e-5
  assert(T & (T - 1) == 0 and C % T == 0, "layernorm: T must be a power of two dividing C")
  local k = kernel.new{grid = {R}, block = {T}}
  local X = k:input("X", "float32", {R, C})
  local W = k:input("W", "float32", {C})
  local Bb = k:input("B", "float32", {C})
  local Y = k:output("Y", "float32", {R, C})
  local P = k:shared("P", "float32", {T})
  local acc = k:register("acc", "float32", {1})
  local mean = k:register("mean", "float32", {1})
  local rstd = k:register("rstd", "float32", {1})
  local n = C // T
  k:stage("layernorm", function()
    local row, tx = k.bx, k.tx
    acc[0] = 0
    for c in kernel.range(n, {name = "c", type = "reduce"}) do acc[0] = acc[0] + X[{row, c * T + tx}] end
    P[tx] = acc[0]
    kernel.barrier()
    block_reduce(k, P, T)
    mean[0] = P[0] * (1 / C)
    kernel.barrier()            -- every thread has read the sum before P is reused
    acc[0] = 0
    for c in kernel.range(n, {name = "c1", type = "reduce"}) do
      local d = X[{row, c * T + tx}] - mean[0]
      acc[0] = acc[0] + d * d
    end
    P[tx] = acc[0]
    kernel.barrier()
    block_reduce(k, P, T)
    rstd[0] = kernel.recip(kernel.sqrt(P[0] * (1 / C) + eps))
    for c in kernel.range(n, {name = "c2"}) do
      local j = c * T + tx
      Y[{row, j}] = (X[{row, j}] - mean[0]) * rstd[0] * W[j] + Bb[j]
    end
  end)
  return k
end

function M.cases()
  local out = {}
  -- {C, T}: T threads a row; the 1024-wide rows are tried with fewer threads (more work a thread,
  -- fewer halving steps)
  for _, ct in ipairs{{1024, 256}, {1024, 128}, {1024, 64}, {4096, 256}, {8192, 512}, {32768, 1024}} do
    local C, T = ct[1], ct[2]
    local R = (1 << 26) // C
    out[#out + 1] = {
      name = string.format("layernorm_%dx%d_t%d", R, C, T), kernel = M.kernel(R, C, T),
      inputs = {X = "randn", W = "randn", B = "randn"},
      torch = string.format("torch.nn.functional.layer_norm(x[0], (%d,), x[1], x[2], 1e-5)", C),
      bytes = 2 * R * C * 4 + 2 * C * 4, tol = 1e-5,
      note = string.format("%d threads a row", T),
    }
  end
  return out
end

if not ... then
  local R, C = 8, 256
  local k = M.kernel(R, C, 64)
  local x, w, b = tensor.rand({R, C}, {seed = 1}), tensor.rand({C}, {seed = 2}), tensor.rand({C}, {seed = 3})
  local got = k:run{X = x, W = w, B = b}:tolist()
  local X, Wl, Bl = x:tolist(), w:tolist(), b:tolist()
  local worst = 0
  for i = 1, R do
    local s, v = 0, 0
    for j = 1, C do s = s + X[i][j] end
    local mu = s / C
    for j = 1, C do v = v + (X[i][j] - mu) ^ 2 end
    local rs = 1 / math.sqrt(v / C + 1e-5)
    for j = 1, C do worst = math.max(worst, math.abs(got[i][j] - ((X[i][j] - mu) * rs * Wl[j] + Bl[j]))) end
  end
  assert(worst < 1e-5, "layernorm: off by " .. worst)
  print(string.format("layernorm 8x256, 64 threads a row: within %.1e of the definition in double", worst))
end
return M

-- scripts/gpu/softmax.lua - a row softmax for the GPU, written with kernel.new: one block a row.
--
-- Each of T threads folds a strided slice of its row into a register (coalesced: consecutive
-- threads read consecutive elements), the block combines the T partials in shared memory by
-- halving steps between barriers (CUB's BlockReduce), for the maximum and then for the sum
-- of exp(x - max); a last pass writes exp(x - max) / sum. The row is read three times; the
-- second and third reads of a 32 KB row come from L1/L2, so device memory sees one read and
-- one write of the matrix. Run it: ./tessel scripts/gpu/softmax.lua (checks a small case).
local M = {}

-- the block's combine: P[0] = op(P[0 .. T-1]), every thread past the last barrier
local function block_reduce(k, P, T, op)
  local h = T // 2
  while h >= 1 do
    local step = h
    kernel.when(kernel.lt(k.tx, step), function() P[k.tx] = op(P[k.tx], P[k.tx + step]) end)
    kernel.barrier()
    h = h // 2
  end
end

-- softmax over the rows of an R x C float32 matrix, T threads a block (T a power of two dividing C)
function M.kernel(R, C, T)
  assert(T & (T - 1) == 0 and C % T == 0, "softmax: T must be a power of two dividing C")
  local k = kernel.new{grid = {R}, block = {T}}
  local X = k:input("X", "float32", {R, C})
  local Y = k:output("Y", "float32", {R, C})
  local P = k:shared("P", "float32", {T})
  local acc = k:register("acc", "float32", {1})
  local m = k:register("m", "float32", {1})
  local r = k:register("r", "float32", {1})
  local n = C // T
  k:stage("softmax", function()
    local row, tx = k.bx, k.tx
    acc[0] = -math.huge
    for c in kernel.range(n, {name = "c", type = "reduce"}) do
      acc[0] = kernel.max(acc[0], X[{row, c * T + tx}])
    end
    P[tx] = acc[0]
    kernel.barrier()
    block_reduce(k, P, T, kernel.max)
    m[0] = P[0]
    kernel.barrier()            -- every thread has read the maximum before P is reused
    acc[0] = 0
    for c in kernel.range(n, {name = "c1", type = "reduce"}) do
      acc[0] = acc[0] + kernel.exp(X[{row, c * T + tx}] - m[0])
    end
    P[tx] = acc[0]
    kernel.barrier()
    block_reduce(k, P, T, function(a, b) return a + b end)
    r[0] = kernel.recip(P[0])
    for c in kernel.range(n, {name = "c2"}) do
      Y[{row, c * T + tx}] = kernel.exp(X[{row, c * T + tx}] - m[0]) * r[0]
    end
  end)
  return k
end

-- the benchmark cases (bench/gpu/export.lua): 64M elements, rows of 1K to 32K
function M.cases()
  local out = {}
  -- {C, T}: T threads a row; the 1024-wide rows are tried with fewer threads (more work a thread,
  -- fewer halving steps)
  for _, ct in ipairs{{1024, 256}, {1024, 128}, {1024, 64}, {4096, 256}, {8192, 512}, {32768, 1024}} do
    local C, T = ct[1], ct[2]
    local R = (1 << 26) // C
    out[#out + 1] = {
      name = string.format("softmax_%dx%d_t%d", R, C, T), kernel = M.kernel(R, C, T),
      inputs = {X = "randn"}, torch = "torch.softmax(x[0], dim=1)",
      bytes = 2 * R * C * 4, tol = 1e-5,
      note = string.format("%d threads a row", T),
    }
  end
  return out
end

if not ... then
  -- a small case against the tensor program, through the interpreter
  local k = M.kernel(8, 256, 64)
  local x = tensor.rand({8, 256}, {seed = 1})
  local got = k:run{X = x}:tolist()
  local want = x:softmax(1):tolist()
  local worst = 0
  for i = 1, 8 do for j = 1, 256 do worst = math.max(worst, math.abs(got[i][j] - want[i][j])) end end
  assert(worst < 1e-6, "softmax: off by " .. worst)
  print(string.format("softmax 8x256, 64 threads a row: within %.1e of the tensor program", worst))
end
return M

-- scripts/gpu/transpose.lua - a matrix transpose through a shared-memory tile whose layout is
-- chosen in Lua: padded (32,32):(33,1) or swizzled Sw<5,0,5> o (32,32):(32,1).
--
-- A block of 32x8 threads moves a 32x32 tile: each thread reads 4 elements of a row of the
-- source tile (coalesced: a warp reads 32 consecutive floats), the block waits at a barrier,
-- and each thread writes 4 elements of a row of the destination tile, reading the shared tile
-- down a column. Row-major, that column read hits one bank 32 times; the padded or swizzled
-- layout spreads it over the 32 banks (k:counts() shows the conflicts). Run it:
-- ./tessel scripts/gpu/transpose.lua (checks a small case).
local M = {}

M.layouts = {
  padded = "(32,32):(33,1)",
  swizzled = "Sw<5,0,5> o 0 o (32,32):(32,1)",
  plain = "(32,32):(32,1)",
}

-- B = A^T for an N x N float32 matrix (N a multiple of 32), the shared tile laid out by layout
function M.kernel(N, layout)
  assert(N % 32 == 0, "transpose: N must be a multiple of 32")
  local k = kernel.new{grid = {N // 32, N // 32}, block = {32, 8}}
  local A = k:input("A", "float32", {N, N})
  local B = k:output("B", "float32", {N, N})
  local tile = k:shared("tile", "float32", {32, 32}, layout)
  k:stage("transpose", function()
    for r in kernel.range(4, {name = "r", type = "unroll"}) do
      tile[{k.ty + r * 8, k.tx}] = A[{k.by * 32 + k.ty + r * 8, k.bx * 32 + k.tx}]
    end
    kernel.barrier()
    for r in kernel.range(4, {name = "r1", type = "unroll"}) do
      B[{k.bx * 32 + k.ty + r * 8, k.by * 32 + k.tx}] = tile[{k.tx, k.ty + r * 8}]
    end
  end)
  return k
end

function M.cases()
  local N = 8192
  local out = {}
  for _, l in ipairs{"padded", "swizzled"} do
    out[#out + 1] = {
      name = "transpose_" .. l .. "_" .. N, kernel = M.kernel(N, M.layouts[l]),
      inputs = {A = "randn"}, torch = "x[0].t().contiguous()", bytes = 2 * N * N * 4, tol = 0,
      note = "tile " .. M.layouts[l],
    }
  end
  return out
end

if not ... then
  local t = tensor.rand({64, 64}, {seed = 2})
  local want = t:permute{1, 0}:tolist()
  for _, l in ipairs{"padded", "swizzled", "plain"} do
    local k = M.kernel(64, M.layouts[l])
    local got = k:run{A = t}:tolist()
    for i = 1, 64 do for j = 1, 64 do assert(got[i][j] == want[i][j], l) end end
    print(string.format("transpose 64x64, %-8s tile %-32s exact; bank conflicts %d", l, M.layouts[l],
                        k:counts{A = t}.bank_conflicts))
  end
end
return M

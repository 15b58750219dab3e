-- test_tile_ir.lua - k:tile_ir(): Neptune's tile view of lowered, scheduled and hand-written kernels.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

check("lowered softmax: the reductions are reduce tiles, the last stage one tile store", function()
  local k = kernel.lower(tensor.param("x", {4, 8}):softmax(1), "out")
  eq(k:tile_ir(), table.concat({
    "# inputs: x: float32[4, 8]",
    "# outputs: out: float32[4, 8]",
    "# buffers: xmax: float32[4], xsum: float32[4]",
    "# xmax",
    "for i in range(4):",
    "  xmax[i] = -inf",
    "  xmax[i] = max(xmax[i], reduce(max, x[i, 0 : 8], dim=0))",
    "# xsum",
    "for i in range(4):",
    "  xsum[i] = 0.0",
    "  xsum[i] += reduce(+, exp(x[i, 0 : 8] - xmax[i]), dim=0)",
    "# out",
    "out[0 : 4, 0 : 8] = exp(x[0 : 4, 0 : 8] - xmax[0 : 4, None]) * 1/xsum[0 : 4, None]",
  }, "\n"))
  -- the loop-scalar view is unchanged
  assert(tostring(k):find("    xmax[i] = max(xmax[i], x[i, j])", 1, true), tostring(k))
end)

check("a transposed read is permuted, a missing dimension broadcast", function()
  local x, b = tensor.param("inp", {6, 4}), tensor.param("b", {6})
  local text = kernel.lower(x:permute({1, 0}):exp() + b, "m"):tile_ir()
  assert(text:find("m[0 : 4, 0 : 6] = exp(permute(inp[0 : 6, 0 : 4], order=(1, 0))) + b[None, 0 : 6]", 1, true), text)
end)

check("a scheduled matmul: after split, k1 is a reduce tile; after decompose_reduction, the whole nest", function()
  local a, b = tensor.param("a", {4, 6}), tensor.param("b", {6, 5})
  local s = kernel.lower(a:matmul(b), "c"):schedule()
  s:split("c", "k", {nil, 2})
  local text = s:kernel():tile_ir()
  assert(text:find("  for k0 in range(3):  # REDUCE\n    c[i, j] += reduce(+, a[i, k0*2 : k0*2 + 2] * b[k0*2 : k0*2 + 2, j], dim=0)", 1, true), text)
  s:undo()
  s:decompose_reduction("c", "k")
  text = s:kernel():tile_ir()
  assert(text:find("# c_init\nc[0 : 4, 0 : 5] = 0.0\n", 1, true), text)
  assert(text:find("c[0 : 4, 0 : 5] += reduce(+, a[0 : 4, None, 0 : 6] * permute(b[None, 0 : 6, 0 : 5], order=(0, 2, 1)), dim=2)", 1, true), text)
end)

check("bound loops stay loops; only unannotated nests become tiles", function()
  local k = kernel.new{grid = {2}, block = {4}}
  local A = k:input("A", "float32", {8, 16})
  local B = k:output("B", "float32", {8, 16})
  k:stage("rows", function()
    for j in kernel.range(16) do
      B[{k.bx * 4 + k.tx, j}] = A[{k.bx * 4 + k.tx, j}] * 2
    end
  end)
  local text = k:tile_ir()
  assert(text:find("B[bx*4 + tx, 0 : 16] = A[bx*4 + tx, 0 : 16] * 2.0", 1, true), text)
  assert(text:find("for bx in range(2):  # block.x GLOBAL", 1, true), text)
end)

check("Figure 4 written with kernel.new: a permuted read and a row max as tiles", function()
  local k = kernel.new{}
  local inp = k:input("inp", "float32", {15, 8})
  local max1d = k:output("max1d", "float32", {8})
  local exp2d = k:buffer("exp2d", "float32", {8, 15})
  k:stage("fig4", function()
    for i in kernel.range(2, "i") do
      for j in kernel.range(3, "j") do
        for r in kernel.range(4, "r") do
          for c in kernel.range(5, "c") do
            exp2d[{i * 4 + r, j * 5 + c}] = kernel.exp(inp[{j * 5 + c, i * 4 + r}])
          end
        end
        for r in kernel.range(4, "r") do
          for c in kernel.range(5, "c") do
            max1d[{i * 4 + r}] = kernel.max(max1d[{i * 4 + r}], exp2d[{i * 4 + r, j * 5 + c}])
          end
        end
      end
    end
  end)
  local text = k:tile_ir()
  assert(text:find("for i, j in grid(2, 3):\n"
    .. "  exp2d[i*4 : i*4 + 4, j*5 : j*5 + 5] = exp(permute(inp[j*5 : j*5 + 5, i*4 : i*4 + 4], order=(1, 0)))\n"
    .. "  max1d[i*4 : i*4 + 4] = max(max1d[i*4 : i*4 + 4], reduce(max, exp2d[i*4 : i*4 + 4, j*5 : j*5 + 5], dim=1))", 1, true), text)
end)

finish()

-- kernel_tour.lua - kernels: a lowered softmax printed, drawn and run; a hand-written tiled
-- transpose with its bank conflicts before and after a swizzle; collective operators.
-- Run: ./tessel scripts/kernel_tour.lua [outdir]   (pictures go to outdir, default out/)
local outdir = arg and arg[1] or "out"
os.execute("mkdir -p " .. outdir)

local function title(s) print("\n== " .. s) end

title("A tensor program lowered to a kernel: softmax (Neptune's Figure 1(a))")
local x = tensor.param("inp", {2, 4})
local k = kernel.lower(x:softmax(1), "out")
print(k)
print("-- the verifier:", k:check())
local t = tensor.rand({2, 4}, {seed = 1})
print("-- run on the CPU as a GPU would, against the reference evaluator:")
print(k:run{inp = t})
print(x:softmax(1):realize{inp = t})
viz.render(k, outdir .. "/softmax_kernel.svg")
print("-- the loop tree: " .. outdir .. "/softmax_kernel.svg")

title("Figure 4: transpose, exp (marked contiguous), row max")
print(kernel.lower(x:permute{1, 0}:exp():contiguous():max(1)))

title("A hand-written tiled transpose: 32x32 tiles through shared memory")
local function transpose(layout)
  local tk = kernel.new{grid = {2, 2}, block = {32, 32}}
  local A = tk:input("A", "float32", {64, 64})
  local B = tk:output("B", "float32", {64, 64})
  local tile = tk:shared("tile", "float32", {32, 32}, layout)
  tk:stage("transpose", function()
    tile[{tk.ty, tk.tx}] = A[{tk.by * 32 + tk.ty, tk.bx * 32 + tk.tx}]
    kernel.barrier()
    B[{tk.bx * 32 + tk.ty, tk.by * 32 + tk.tx}] = tile[{tk.tx, tk.ty}]
  end)
  return tk
end
local plain = transpose()
print(plain)
local a = tensor.rand({64, 64}, {seed = 2})
assert(plain:run{A = a}:tolist()[3][7] == a:tolist()[7][3])
print(string.format("\n%-34s %14s %15s %14s", "tile layout", "shared loads", "wavefronts", "conflicts"))
for _, L in ipairs{"(32,32):(32,1)", "(32,32):(33,1)", "Sw<5,0,5> o 0 o (32,32):(32,1)"} do
  local c = transpose(L):counts{A = a}
  print(string.format("%-34s %14d %15d %14d", L, c.shared_loads, c.shared_accesses, c.bank_conflicts))
end
print("-- the plain tile's column reads hit one bank 32 times; padding or an XOR swizzle spreads them")
show(cute.composition(cute.swizzle(5, 0, 5), "(32,32):(32,1)"), {max_rows = 4, max_cols = 8, elem_bytes = 4})

title("The checks: a missing barrier is a race")
local bad = kernel.new{grid = {2, 2}, block = {32, 32}}
local A = bad:input("A", "float32", {64, 64})
local B = bad:output("B", "float32", {64, 64})
local tile = bad:shared("tile", "float32", {32, 32})
bad:stage("transpose", function()
  tile[{bad.ty, bad.tx}] = A[{bad.by * 32 + bad.ty, bad.bx * 32 + bad.tx}]
  B[{bad.bx * 32 + bad.ty, bad.by * 32 + bad.tx}] = tile[{bad.tx, bad.ty}]
end)
print(select(2, pcall(bad.run, bad, {A = a})))

title("Collective operators: a cta copies, reduces; the layouts choose how")
local ck = kernel.new{grid = {4}, block = {128}}
local X = ck:input("X", "float32", {64, 256})
local S = ck:output("S", "float32", {64})
local M = ck:output("M", "float32", {4})
local buf = ck:shared("buf", "float32", {16, 256})
ck:stage("rows", function()
  kernel.copy(buf, X:tile({ck.bx * 16, 0}, {16, 256}))
  kernel.barrier()
  kernel.reduce(S:tile({ck.bx * 16}, {16}), buf)
  kernel.reduce(M:tile({ck.bx}, {1}), buf, {op = "max"})
end)
print(ck)
local xv = tensor.rand({64, 256}, {seed = 4})
local s, m = ck:run{X = xv}
print("-- row sums agree with the reference:", math.abs(s:tolist()[5] - xv:sum(1):tolist()[5]) < 1e-4)
print("-- block maxima:", m)

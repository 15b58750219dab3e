-- tour.lua - a non-interactive tour of what tessel does today (make run).
local function title(s)
  print()
  print(("== %s "):format(s) .. ("="):rep(math.max(0, 72 - #s)))
end

local function say(code)
  -- show the line, then what it evaluates to
  local f = assert(load("return " .. code))
  local results = table.pack(f())
  local out = {}
  for i = 1, results.n do out[i] = tostring(results[i]) end
  print(("> %s\n%s"):format(code, table.concat(out, "\t")))
end

print("tessel " .. tessel.version .. ": a workbench for tensor layouts and kernels")
print("Start the REPL with ./tessel; type help() there. This tour is scripts/tour.lua.")

title("CuTe layouts: Shape:Stride, column-major coordinates")
say('cute.layout("((2,2),4):((1,4),2)")')
L = cute.layout("((2,2),4):((1,4),2)")
say("#L, cute.cosize(L), cute.rank(L), cute.depth(L)")
say("L(5), L(1, 1), L{{1,0},1}")
show(L)

title("The algebra, with CuTe's names and C++ v4 semantics")
say('cute.coalesce("(2,(1,6)):(1,(6,2))")')
say('cute.composition("(6,2):(8,2)", "(4,3):(3,1)")')
say('cute.complement("(2,2):(1,6)", 24)')
say('cute.right_inverse("(4,2):(2,1)"), cute.left_inverse("4:2")')
say('cute.logical_divide("(4,2,3):(2,1,8)", "4:2")')
say('cute.zipped_divide("(9,(4,8)):(59,(13,1))", "(3:3,(2,4):(1,8))")')
say('cute.blocked_product("(2,5):(5,1)", "(3,4):(1,3)")')
say('cute.raked_product("(2,5):(5,1)", "(3,4):(1,3)")')

title("Tiling a 2-D layout: an 8x8 row-major matrix in 2x4 tiles")
A = cute.layout({8, 8}, "row")
T = cute.zipped_divide(A, "(2,4)")
say('A, T')
print("-- column j of the picture is tile j: mode 0 walks inside a tile, mode 1 over tiles")
show(T)
say('T(cute._, 5)')
local tile5, off = T(cute._, 5)
print(("-- tile 5 is %s at offset %d: rows %d-%d, columns %d-%d of A"):format(
  tostring(tile5), off, off // 8, off // 8 + 1, off % 8, off % 8 + 3))

title("Errors say which condition failed, as CuTe's static assertions would")
local ok, err = pcall(cute.composition, "(4,3):(1,5)", "3:3")
print(err)
ok, err = pcall(cute.complement, "(2,2):(1,1)")
print(err)

title("A swizzled shared-memory layout, coloured by bank")
print("-- 8 rows of 128 bytes as 16-byte vectors; Sw<3,0,3> xors the row into the column")
print("-- conflict-free: 16-byte vector loads of one row, or of the 8 rows of one column (8 threads,")
print("-- 128 bytes). On byte addresses this is CuTe's Sw<3,4,3>; on f16 element offsets, Sw<3,3,3>.")
say('cute.composition(cute.swizzle(3, 0, 3), "(8,8):(8,1)")')
show(cute.composition(cute.swizzle(3, 0, 3), "(8,8):(8,1)"), {elem_bytes = 16})
print("-- Sw<3,4,3> on f16 element offsets (not bytes) xors row/2 into 32-byte chunks: rows stay")
print("-- conflict-free, but f16 columns (a warp reads 4 columns of 8 rows) read 2-way:")
print("   " .. viz.text(cute.composition(cute.swizzle(3, 4, 3), "(8,64):(64,1)"), {dtype = "f16"}):match("banks:[^\n]*"))

title("Thread-value layouts and MMA atoms")
mn, tv = cute.make_layout_tv(cute.layout({2, 4}, {4, 1}), cute.layout({2, 2}))
say("tv")
show(tv)
atom = cute.mma_atom("SM80_16x8x8_F16F16F16F16_TN")
say("atom")
show(atom.c)

title("Axe layouts: named axes, replicas and offsets")
print("-- the paper's 8x16 tensor-core tile over 2 warps, replicated 4 warps apart, offset by 5")
TC = axe.layout("S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp", {8, 16})
say("TC")
print("-- element (3, 9) lives in two places; warp 6, lane 12 holds two elements")
for _, c in ipairs(TC(3, 9)) do print(("   warp %d lane %d reg %d"):format(c.warp, c.lane, c.reg)) end
for _, e in ipairs(TC:find{warp = 6, lane = 12}) do print(("   (%d, %d)"):format(e[1], e[2])) end
show(TC, {max_cols = 8})
print("-- a 64x128 tensor sharded over a 2x2 mesh, rows split and replicated across columns")
say('axe.dtensor({64, 128}, {{"gpuid", 2}, {"gpuid", 2}}, {"S(0)", "R"})')
print("-- more: scripts/axe_tour.lua, docs/axe.md, help(axe)")

title("LEGO layouts: a logical view, tiles and permutations (docs/lego.md)")
B = lego.TileOrderBy({2,2}, {3,3})
C = lego.OrderBy(lego.RegP({2,2}, {1,0}), lego.GenP({3,3}, "antidiagonal"))
print("-- Figure 6 of the LEGO paper: tile a 6x6 view (B), transpose tiles, antidiagonals inside (C)")
G = C:OrderBy(B):GroupBy({6,6})
say("G:apply(4, 2), G:inv(15)")
show(G)
say("lego.GroupBy({6,6}, B):to_cute()")
print("-- more: scripts/lego_tour.lua, docs/lego.md, help(lego)")

title("Index expressions: layouts lower to UOps, simplified from the coordinates' ranges")
say('cute.layout("((2,4),(3,8)):((24,1),(8,2))"):expr{raw = true}')
say('cute.layout("((2,4),(3,8)):((24,1),(8,2))"):expr()')
say('cute.composition(cute.swizzle(3, 4, 3), "(8,64):(64,1)"):expr{modes = true}')
i, j = uop.var("i", 0, 63), uop.var("j", 0, 7)
say('((j * 8 + i % 8) // 8 + i // 8 * 8 + i % 8):simplify()')
say('((i - 9) // 4):c()')
title("Tensor programs: tinygrad's UOp spec at tensor level, realized on the CPU")
say('tensor.from{{1, 2, 3}, {4, 5, 6}}:matmul(tensor.from{{1, 0}, {0, 1}, {1, 1}})')
say('tensor.rand({2, 4}, {seed = 1}):softmax()')
say('tensor.arange(8):copy(4):shards()[3]')
print("-- more: scripts/tensor_tour.lua, docs/tensors.md, help(tensor)")

title("Kernels: a tensor program lowered to loop nests, run on the CPU as a GPU runs it")
x = tensor.param("inp", {2, 4})
k = kernel.lower(x:softmax(1), "out")
print(k)
say('k:run{inp = tensor.rand({2, 4}, {seed = 1})}')
print("-- a 32x32 shared-memory tile read by columns: bank conflicts per layout of the tile")
for _, L in ipairs{"(32,32):(32,1)", "(32,32):(33,1)"} do
  local t = kernel.new{block = {32, 32}}
  local A, B = t:input("A", "float32", {32, 32}), t:output("B", "float32", {32, 32})
  local s = t:shared("s", "float32", {32, 32}, L)
  t:stage("transpose", function()
    s[{t.ty, t.tx}] = A[{t.ty, t.tx}]
    kernel.barrier()
    B[{t.ty, t.tx}] = s[{t.tx, t.ty}]
  end)
  print(("   %-16s %5d bank conflicts"):format(L, t:counts().bank_conflicts))
end
print("-- more: scripts/kernel_tour.lua, docs/kernels.md, help(kernel)")

title("Schedules: TVM's primitives on a kernel, each step checked, verified against the reference")
a, b = tensor.param("a", {64, 64}), tensor.param("b", {64, 64})
s = kernel.lower(a:matmul(b), "c"):schedule()
s:tile("c", "i", "j", 16, 16)
s:bind("c", "i0", "blockIdx.y"); s:bind("c", "j0", "blockIdx.x")
s:bind("c", "i1", "threadIdx.y"); s:bind("c", "j1", "threadIdx.x")
print(s)
say('s:verify{trials = 1}')
say('pcall(s.split, s, "c", "i1", {nil, 4})')
print("-- more: scripts/gemm_schedule.lua, scripts/cpu_gemm.lua, docs/schedules.md, help(kernel.schedule)")

title("Device code: the scheduled GEMM as CUDA (k:export adds a harness that checks it on a GPU)")
print(s:kernel():source("cuda"))
print("-- more: k:source(\"c\"), k:run(b, {backend = \"c\"}) (the C JIT), docs/export.md")

title("Hopper: shared-memory layouts choose the TMA boxes and the wgmma descriptors")
-- the GEMM's 4-slot tiles, 128-byte swizzled (Sw<3,3,3> in float16 units); both analyses
-- enumerate the layout and refuse, with the element, a layout the hardware cannot read
k = kernel.new{grid = {16, 32}, block = {384}}
A = k:input("A", "float16", {4096, 4096})
As = k:shared("As", "float16", {4, 128, 64}, "Sw<3,3,3> o 0 o (4,128,64):(8192,64,1)")
Bs = k:shared("Bs", "float16", {4, 64, 256}, "Sw<3,3,3> o 0 o (4,64,(64,4)):(16384,64,(1,4096))")
full = k:shared("full", "uint64", {4})
k:stage("load", function()
  kernel.when(kernel.eq(k.tx, 0), function()
    kernel.mbarrier_init(full, {0}, 1)
    plan = kernel.tma(As:tile({0, 0, 0}, {1, 128, 64}), A:tile({k.by * 128, 0}, {128, 64}), full, {0})
  end)
end)
print("TMA of an A tile: " .. plan.reason)
d = kernel.wgmma_desc(Bs:tile({1, 16, 0}, {1, 16, 256}), "B")
print(("wgmma's B operand, slot 1, k 16..31: %s-major, %s swizzle, LBO %d, SBO %d, start byte %d")
      :format(d.major, d.swizzle, d.lbo, d.sbo, d.start))
print("-- more: scripts/gpu/gemm.lua (M.kernel_wgmma: 0.82x cuBLAS on an H100), docs/kernels.md")

title("Fusion: Neptune's rolling update derives FlashAttention's repair, and proves it")
x = tensor.param("inp", {2, 4})
s = kernel.lower((x - x:max(1, true)):exp():sum(1, true), "xsum"):schedule()
s:rolling_update("xsum", "j")
print(s)
print(s:explain())
say('s:verify{trials = 1}')
print("-- more: scripts/attention.lua, scripts/flash_decoding.lua, docs/fusion.md, s:tile_ir();")
print("-- generated FlashAttention in Triton for ten operators: scripts/generated_attention.lua, docs/neptune.md")

title("Several GPUs: Axe layouts over gpuid choose the NCCL collective (a GEMM sharded on K)")
mesh = {{"gpuid", 2}}
P = dist.new(2)
P:tensor("A", "float32", {32, 64}, axe.dtensor({32, 64}, mesh, {"S(1)"}))
P:tensor("B", "float32", {64, 32}, axe.dtensor({64, 32}, mesh, {"S(0)"}))
P:tensor("Cp", "float32", {32, 32}, axe.dtensor({32, 32}, mesh, {"R"}), {partial = true})
P:tensor("C", "float32", {32, 32}, axe.dtensor({32, 32}, mesh, {"S(0)"}))
k = kernel.new{grid = {2, 2}, block = {16, 16}}
A, B, C = k:input("A", "float32", {32, 32}), k:input("B", "float32", {32, 32}), k:output("C", "float32", {32, 32})
acc = k:register("acc", "float32", {1})
k:stage("gemm", function()
  local i, j = k.bx * 16 + k.ty, k.by * 16 + k.tx
  acc[0] = 0
  for kk in kernel.range(32, {name = "kk", type = "reduce"}) do acc[0] = acc[0] + A[{i, kk}] * B[{kk, j}] end
  C[{i, j}] = acc[0]
end)
P:launch(k, {C = "Cp"})
P:redistribute("Cp", "C")
print(P)
at, bt = tensor.rand({32, 64}, {seed = 1}), tensor.rand({64, 32}, {seed = 2})
got, want = P:simulate{A = at, B = bt}.C:tolist(), at:matmul(bt):tolist()
worst = 0
for i = 1, 32 do for j = 1, 32 do worst = math.max(worst, math.abs(got[i][j] - want[i][j])) end end
print(("simulated on 2 devices: C is A @ B within %.1e"):format(worst))
print("-- more: scripts/distributed.lua, P:export(dir) (CUDA + NCCL), docs/distributed.md")
print()
print("More: scripts/cute_basics.lua, scripts/uop_tour.lua, scripts/pictures.lua (Graphviz")
print("pictures of all of the above), docs/*.md, and help() in the REPL.")

-- gemm_schedule.lua - a matmul scheduled in Lua: tiled, bound to blocks and threads, verified
-- against the tensor reference, counted; and a transpose whose shared tile takes a padded and
-- a swizzled layout. Run: ./tessel scripts/gemm_schedule.lua
local function title(s) print("\n== " .. s) end

title("C = A B, 64x64x64, lowered")
local a, b = tensor.param("a", {64, 64}), tensor.param("b", {64, 64})
local s = kernel.lower(a:matmul(b), "c"):schedule()
print(s)

title("tile i, j by 16 and bind: 4x4 blocks of 16x16 threads")
s:tile("c", "i", "j", 16, 16)
s:bind("c", "i0", "blockIdx.y")
s:bind("c", "j0", "blockIdx.x")
s:bind("c", "i1", "threadIdx.y")
s:bind("c", "j1", "threadIdx.x")
print(s)
print("-- verify against the tensor reference on random inputs:")
print(select(2, s:verify{trials = 2}))
local c = s:counts()
print(("-- counts: %d blocks, %d threads, %d global sectors, %d ops"):format(c.blocks, c.threads,
      c.global_sectors, c.ops))
print("-- the trace replays the schedule:")
io.write(s:trace())

title("the same matmul with shared-memory tiles of A and B (TVM's classic schedule)")
local g = kernel.lower(a:matmul(b), "out"):schedule()
g:cache_read("out", "a", "shared")
g:cache_read("out", "b", "shared")
g:decompose_reduction("out", "k")
g:tile("out", "i", "j", 16, 16)
g:split("out", "k", {nil, 16})
g:reorder("out", "k0", "i1", "j1")
g:bind("out", "i0", "blockIdx.y"); g:bind("out", "j0", "blockIdx.x")
g:bind("out", "i1", "threadIdx.y"); g:bind("out", "j1", "threadIdx.x")
g:compute_at("a_shared", "out", "k0")
g:compute_at("b_shared", "out", "k0")
print(g)
assert(g:verify{trials = 1})
local cg = g:counts()
print(("-- global sectors: %d tiled, %d with shared tiles (%d shared wavefronts, %d bank conflicts, %d barriers)"):format(
      c.global_sectors, cg.global_sectors, cg.shared_accesses, cg.bank_conflicts, cg.barriers))

title("the schedule as the Axe layout it induces: element -> (block, thread)")
print(s:thread_layout("c"))

title("a 16x8 tile scheduled as the SM80 m16n8k16 accumulator fragment")
local x = tensor.param("x", {16, 8})
local f = kernel.lower(x * 2, "c"):schedule()
f:split("c", "i", {2, 8})          -- i = i0*8 + i1
f:split("c", "j", {4, 2})          -- j = j0*2 + j1
f:reorder("c", "i0", "j1", "i1", "j0")
f:fuse("c", "i1", "j0")            -- lane = i1*4 + j0
f:bind("c", "i1_j0_fused", "lane")
print(f)
local T = f:thread_layout("c")
print("thread layout:", T)
print("the atom's C: ", axe.from_mma(cute.mma_atom("SM80_16x8x16_F32F16F16F32_TN"), "c"))
print("equivalent:   ", axe.equivalent(T, axe.from_mma(cute.mma_atom("SM80_16x8x16_F32F16F16F32_TN"), "c")))
show(T, {max_rows = 4})

title("a refusal says which condition failed and leaves the schedule as it was")
print(select(2, pcall(s.split, s, "c", "i1", {nil, 4})))

title("a transpose: the layout of its shared tile decides the bank conflicts")
local k = kernel.new{grid = {2, 2}, block = {32, 32}}
local A = k:input("A", "float32", {64, 64})
local B = k:output("B", "float32", {64, 64})
local tile = k:shared("tile", "float32", {32, 32})
k:stage("transpose", function()
  tile[{k.ty, k.tx}] = A[{k.by * 32 + k.ty, k.bx * 32 + k.tx}]
  kernel.barrier()
  B[{k.bx * 32 + k.ty, k.by * 32 + k.tx}] = tile[{k.tx, k.ty}]
end)
local t = k:schedule()
print(("   %-34s %6d bank conflicts"):format("row-major", t:counts().bank_conflicts))
t:set_layout("tile", "(32,32):(33,1)")
print(("   %-34s %6d bank conflicts"):format("(32,32):(33,1)", t:counts().bank_conflicts))
t:set_layout("tile", "Sw<5,0,5> o 0 o (32,32):(32,1)")
print(("   %-34s %6d bank conflicts"):format("Sw<5,0,5> o 0 o (32,32):(32,1)", t:counts().bank_conflicts))
print(t:diff())
assert(t:verify())

title("a reduction with rfactor: each thread sums a slice of a row, the warp reads along it")
local rows = tensor.param("a", {128, 1024})
local function rowsum() return kernel.lower(rows:sum(1), "b"):schedule() end
local naive = rowsum()
naive:split("b", "i", {nil, 32})
naive:bind("b", "i0", "blockIdx.x"); naive:bind("b", "i1", "threadIdx.x")
local r = rowsum()
r:split("b", "j", {nil, 32})
r:rfactor("b", "j1", 1)
r:bind("b_rf", "i", "blockIdx.x"); r:bind("b_rf", "j1", "threadIdx.x")
r:split("b", "i", {nil, 32}); r:bind("b", "i0", "blockIdx.x"); r:bind("b", "i1", "threadIdx.x")
print(r)
assert(r:verify{trials = 1})
print(("   %-34s %7d sectors"):format("a thread a row", naive:counts().global_sectors))
print(("   %-34s %7d sectors"):format("rfactor, 32 threads a row", r:counts().global_sectors))

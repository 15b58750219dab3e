-- search_gemm.lua - a 256^3 GEMM's tile sizes and vector width searched on the C JIT, then BEAM over
-- tinygrad's OptOps from the winner. Run: ./tessel scripts/search_gemm.lua  (about 10 s on 2 cores)
--
-- Each candidate is checked against the tensor reference (s:verify) before it runs natively, compiled,
-- and timed: the median of 5 runs of the kernel alone. Times depend on the machine and its load; the
-- table says which schedule won here.
local function title(s) print("\n== " .. s) end

local N = 256
local a, b = tensor.param("a", {N, N}), tensor.param("b", {N, N})
local s = kernel.lower(a:matmul(b), "c"):schedule()
s:decompose_reduction("c", "k")   -- the init in its own stage, so that k can move inside a tile

title("a grid: bm x bn tiles of c, k outside each tile's rows, the tile's columns UPCAST by up")
local r = s:search{
  params = {bm = {4, 8, 16}, bn = {32, 64, 128}, up = {0, 8, 16}},   -- up = 0: the whole row as one vector
  apply = function(s, p)
    s:tile("c", "i", "j", p.bm, p.bn)
    s:reorder("c", "k", "i1", "j1")
    s:apply_opt("UPCAST", "c", "j1", p.up)
  end,
  budget = 8,        -- 8 of the 27 points, in a seeded random order
  seed = 1,
}
print(r)
print("-- the schedule now holds the winner's steps:")
io.write(s:trace())

title("BEAM over OptOps from there (the same call on a scheduled kernel; no params: tinygrad's BEAM)")
-- verify = false: the interpreter's check costs ~0.7 s a candidate at this size; each candidate's
-- outputs are still compared with the starting schedule's compiled outputs
local rb = s:search{budget = 8, beam = 2, seed = 1, verify = false}
print(rb)
print("-- the steps BEAM added: " .. #rb.best.opts)
io.write(s:trace())
assert(s:verify{trials = 1})
print(("-- %.2fx over the lowered GEMM's schedule (decompose_reduction only)"):format(r.baseline_s / rb.time_s))

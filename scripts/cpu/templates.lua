-- scripts/cpu/templates.lua - schedules for the C JIT on the CPU, as TVM writes them (issue 32).
--   local T = require "scripts.cpu.templates"
--   T.gemm(s, {mr = 8, nr = 32})        s: kernel.lower(a:matmul(b), "c"):schedule()
--   T.softmax(s, {lanes = 16})          s: kernel.lower(T.softmax_program(x), "out"):schedule()
-- Each step is checked as it is taken; s:trace() replays them. docs/export.md ("Speed") has the numbers.
local T = {}

-- c = a @ b: an mr x nr register tile of c summed over all of k and written back once, B packed in
-- panels of nr columns, the tile's rows unrolled and its columns vectors, column panels over the cores.
function T.gemm(s, p)
  local mr, nr = p.mr or 8, p.nr or 32
  local K, N = s:kernel():buffers():match("\nb%s+%S+%s+%S+%s+%S+%s+%((%d+), (%d+)%)")
  K, N = tonumber(K), tonumber(N)
  s:reorder("c", "j", "i")
  s:tile("c", "j", "i", nr, mr)                   -- j0, i0: the tile; j1, i1 inside it
  s:reorder("c", "i1", "j1")
  s:cache_write("c", "local")                     -- the tile accumulates in c_local ...
  s:reverse_compute_at("c_local", "c", "i0")      -- ... and goes to c once, after all of k
  s:fission("c", "i1", {deep = true})             -- its zeroing apart from its update
  s:reorder("c", "k", "i10", "j10")               -- k outside the tile's rows and columns
  s:set_scope("c_local", "local")                 -- compacted to mr x nr: registers
  for _, l in ipairs{{"i1", "j1"}, {"i10", "j10"}, {"ax0", "ax1"}} do
    s:unroll("c", l[1]); s:vectorize("c", l[2])   -- rows unrolled, columns one vector each
  end
  s:parallel("c", "j0")                           -- column panels over the cores
  s:cache_read("c", "b", "global")                -- B packed: panel j0 is K x nr, contiguous
  s:set_layout("b_global", ("(%d,(%d,%d)):(%d,(1,%d))"):format(K, nr, N // nr, nr, nr * K))
  s:parallel("b_global", "ax0")
  return s
end

-- softmax over the rows of x with its exponentials stored (contiguous): exp runs once an element.
function T.softmax_program(x)
  local e = (x - x:max(1, true)):exp():contiguous()
  return e / e:sum(1, true)
end

-- One pass over each row, rows over the cores: the max and the sum as `lanes` partial results in
-- vector registers (rfactor: that order of the sums, the interpreter's too), the row's exponentials
-- in a local buffer, the division a vector multiply. The last loops' names are looked up.
function T.softmax(s, p)
  local V = p.lanes or 16
  for _, st in ipairs{"xmax", "xsum"} do
    s:split(st, "j", {nil, V})
    s:rfactor(st, "j1", 1)                        -- st_rf[i, j1]: one partial result a lane
  end
  for _, st in ipairs{"xsum", "xsum_rf", "xexp", "xmax", "xmax_rf"} do s:compute_at(st, "out", "i") end
  for _, b in ipairs{"xmax_rf", "xmax", "xexp", "xsum_rf", "xsum"} do s:set_scope(b, "local") end
  for _, l in ipairs{{"j12", "j00"}, {"j10", "j0"}} do   -- the partials' init, then their update
    local _, made = s:fission("out", l[1], {deep = true})
    s:reorder("out", l[2], made[1])               -- the lanes innermost
    s:vectorize("out", l[1]); s:vectorize("out", made[1])
  end
  s:split("out", "j", {nil, 64})
  local loops = s:get_loops("out")
  s:vectorize("out", loops[#loops])               -- out = e * (1/sum), 64 at a time
  s:parallel("out", "i")
  return s
end

return T

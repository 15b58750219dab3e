-- test_cpu.lua - schedules for the C JIT on the CPU (issue 32): the GEMM and softmax templates checked against
-- the tensor program and bit for bit on the C JIT, their traces replayed, the vector lanes of the C source
-- (vector_lanes.c) and where they are not taken, a register tile one per thread.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")
local T = require "scripts.cpu.templates"

local function gemm(m, k, n, p)
  local a, b = tensor.param("a", {m, k}), tensor.param("b", {k, n})
  return T.gemm(kernel.lower(a:matmul(b), "c"):schedule(), p), a, b
end

check("T.gemm: verified, bit for bit on the C JIT exact and within 1e-4 fast, for three tile shapes", function()
  for _, p in ipairs{{mr = 8, nr = 32}, {mr = 4, nr = 64}, {mr = 16, nr = 16}} do
    local s = gemm(64, 48, 128, p)
    assert(s:verify{trials = 1})
    local binds = {a = tensor.rand({64, 48}, {seed = 1}), b = tensor.rand({48, 128}, {seed = 2})}
    local c = s:run(binds, {backend = "c"})              -- compares with the interpreter, bit for bit
    s:run(binds, {backend = "c", fast = true})            -- within backend_tolerance
    -- the packed copy of b holds panel j0 contiguous: the same numbers as a @ b
    local want = tensor.param("a", {64, 48}):matmul(tensor.param("b", {48, 128})):realize(binds):tolist()
    assert(math.abs(c:tolist()[5][77] - want[5][77]) < 1e-4)
  end
end)

check("T.gemm: the trace replays onto a fresh schedule and gives the same kernel", function()
  local s = gemm(32, 16, 64, {mr = 8, nr = 32})
  local t = s:trace()
  assert(t:find('s:set_layout("b_global", "(16,(32,2)):(32,(1,512))")', 1, true), t)
  local s2 = kernel.lower(tensor.param("a", {32, 16}):matmul(tensor.param("b", {16, 64})), "c"):schedule()
  s2:replay(t)
  eq(tostring(s2), tostring(s), "replayed")
  eq(s2:source("c"), s:source("c"), "its C")
end)

check("T.gemm's C: the tile declared in the parallel loop, 8 rows of two 16-float vectors", function()
  local src = gemm(32, 16, 64, {mr = 8, nr = 32}):source("c")
  assert(src:find("  #pragma omp parallel for\n  for (int64_t j0 = 0; j0 < 2; j0++) {  /* thread */\n" ..
                  "    float c_local[256];  /* local, one per thread: row-major */\n", 1, true), src)
  assert(src:find("          for (int64_t j10 = 0; j10 < 32; j10 += 16) {  /* upcast: 16 lanes at once */\n",
                  1, true), src)
  assert(src:find("__builtin_memcpy(&b_global_v, &b_global[j0 * 512 + j10 + k * 32], sizeof b_global_v);", 1,
                  true), src)
  -- the packing copy is a plain loop nest through the layout
  assert(src:find("b_global[ax0 * 32 + ax1 / 32 * 512 + ax1 % 32] = b[ax0 * 64 + ax1];", 1, true), src)
end)

check("s:search over T.gemm's tile sizes: every candidate checked, the winner's steps in the trace", function()
  local a, b = tensor.param("a", {64, 64}), tensor.param("b", {64, 64})
  local s = kernel.lower(a:matmul(b), "c"):schedule()
  local r = s:search{params = {mr = {4, 8}, nr = {16, 32}}, apply = T.gemm, progress = false, reps = 2}
  eq(#r.rows, 4, "candidates")
  for _, row in ipairs(r.rows) do eq(row.status, "ok", "row " .. row.mr .. "x" .. row.nr) end
  assert(s:trace():find(("s:tile(\"c\", \"j\", \"i\", %d, %d)"):format(r.best.nr, r.best.mr), 1, true), s:trace())
  assert(s:verify{trials = 1})
end)

check("T.softmax: one pass a row, checked; bit for bit on the C JIT; the max and sum as 16-lane vectors", function()
  local x = tensor.param("x", {8, 128})
  local s = T.softmax(kernel.lower(T.softmax_program(x), "out"):schedule(), {lanes = 16})
  assert(s:verify{trials = 2})
  local xs = tensor.rand({8, 128}, {seed = 3})
  local got = s:run({x = xs}, {backend = "c"}):tolist()
  s:run({x = xs}, {backend = "c", fast = true})
  local want = x:softmax(1):realize{x = xs}:tolist()
  assert(math.abs(got[3][100] - want[3][100]) < 1e-6)
  local src = s:source("c")
  assert(src:find("const tessel_f32x16 v_1 = tessel_maxf_x16(xmax_rf_v, x_v);", 1, true), src)
  assert(src:find("#pragma omp parallel for", 1, true), src)
  -- exp stays the interpreter's scalar (float)exp2(double), once an element
  local _, nexp = src:gsub("exp2%(", "")
  eq(nexp, 1, "exp2 calls")
end)

check("vector lanes keep NaN rules: max of vectors with NaNs, bit for bit against the interpreter", function()
  local x, y = tensor.param("x", {4, 32}), tensor.param("y", {4, 32})
  local s = kernel.lower(x:maximum(y), "out"):schedule()
  s:vectorize("out", "j")
  local src = s:source("c")
  assert(src:find("tessel_maxf_x16(x_v, y_v)", 1, true), src)
  local nan, xs, ys = 0 / 0, {}, {}
  for i = 1, 4 do
    xs[i], ys[i] = {}, {}
    for j = 1, 32 do
      xs[i][j] = (j % 3 == 0) and nan or (j - 16) * 0.5
      ys[i][j] = (j % 5 == 0) and nan or (16 - j) * 0.25
    end
  end
  local got = s:run({x = tensor.from(xs), y = tensor.from(ys)}, {backend = "c"}):tolist()   -- compared bit for bit
  assert(got[1][3] ~= got[1][3], "a NaN first operand wins")
  assert(got[1][5] ~= got[1][5], "a NaN second operand wins")
  eq(got[1][1], 3.75, "max(-7.5, 3.75)")
end)

check("vector lanes: float64 in 8 lanes; a strided load or an exp stays omp simd, with the same bits", function()
  local x = tensor.param("x", {4, 16}, "float64")
  local s = kernel.lower(x * 2 + 1, "out"):schedule()
  s:vectorize("out", "j")
  local src = s:source("c")
  assert(src:find("for (int64_t j = 0; j < 16; j += 8) {  /* upcast: 8 lanes at once */", 1, true), src)
  assert(src:find("tessel_f64x8", 1, true), src)
  s:run({x = tensor.rand({4, 16}, {seed = 4, dtype = "float64"})}, {backend = "c"})
  -- the transpose reads x with a stride: no vector load, omp simd
  local y = tensor.param("y", {16, 16})
  local st = kernel.lower(y:transpose(0, 1) + 1, "out"):schedule()
  st:vectorize("out", "j")
  local ts = st:source("c")
  assert(ts:find("#pragma omp simd\n", 1, true) and not ts:find("tessel_f32x", 1, true), ts)
  st:run({y = tensor.rand({16, 16}, {seed = 5})}, {backend = "c"})
  -- exp is no lane operation: omp simd
  local z = tensor.param("z", {4, 16})
  local se = kernel.lower(z:exp(), "out"):schedule()
  se:vectorize("out", "j")
  assert(se:source("c"):find("#pragma omp simd\n", 1, true))
  se:run({z = tensor.rand({4, 16}, {seed = 6})}, {backend = "c"})
end)

check("parallel: a register buffer that carries a value between iterations is refused, with the reason", function()
  local a, b = tensor.param("a", {16, 8}), tensor.param("b", {8, 64})
  local s = kernel.lower(a:matmul(b), "c"):schedule()
  s:reorder("c", "j", "i")
  s:tile("c", "j", "i", 32, 8)
  s:cache_write("c", "local")
  s:reverse_compute_at("c_local", "c", "i0")
  s:set_scope("c_local", "local")
  raises(function() s:parallel("c", "j0") end, "parallel: stage c: loop j0's iterations would run at once",
         "a register buffer is one per thread only when each iteration writes it before reading it",
         "s:fission separates an init from its update")
  s:fission("c", "j1", {deep = true})
  s:parallel("c", "j0")
  assert(s:verify{trials = 1})
end)

finish()

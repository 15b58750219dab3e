-- test_kernel.lua - kernels from Lua: lowering, the staged DSL, checks, counts, operators, errors.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local function near(a, b, tol, path)
  path = path or "value"
  if type(a) == "table" then
    assert(#a == #b, path .. ": length " .. #a .. " ~= " .. #b)
    for i = 1, #a do near(a[i], b[i], tol, path .. "[" .. i .. "]") end
    return
  end
  if math.abs(a - b) > tol * (1 + math.abs(b)) then
    error(path .. ": got " .. a .. ", want " .. b, 2)
  end
end

check("lowered softmax: Figure 1(a)'s three stages, run equals realize", function()
  local x = tensor.param("inp", {2, 4})
  local k = kernel.lower(x:softmax(1), "out")
  eq(#k:stages(), 3, "stages")
  local text = tostring(k)
  assert(text:find("for i in range(2):\n  xmax[i] = -inf\n  for j in range(4):  # REDUCE\n    xmax[i] = max(xmax[i], inp[i, j])", 1, true), text)
  assert(text:find("xsum[i] += exp(inp[i, j] - xmax[i])", 1, true), text)
  assert(k:check())
  for seed = 1, 5 do
    local t = tensor.rand({2, 4}, {seed = seed})
    near(k:run{inp = t}:tolist(), x:softmax(1):realize{inp = t}:tolist(), 1e-6)
  end
end)

check("Figure 4: transpose + exp with a contiguous mark, then a row max", function()
  local x = tensor.param("inp", {8, 4})
  local e = x:permute{1, 0}:exp():contiguous()
  local k = kernel.lower(e:max(1))
  local text = tostring(k)
  assert(text:find("xexp[i, j] = exp(inp[j, i])", 1, true), text)
  eq(#k:stages(), 2, "stages")
  local t = tensor.rand({8, 4}, {seed = 7})
  near(k:run{inp = t}:tolist(), e:max(1):realize{inp = t}:tolist(), 1e-6)
end)

check("lowered programs: matmul, pad, data inputs", function()
  local a = tensor.rand({5, 7}, {seed = 1})
  local b = tensor.param("b", {7, 3})
  local bv = tensor.rand({7, 3}, {seed = 2})
  local m = a:matmul(b)
  near(kernel.lower(m):run{b = bv}:tolist(), m:realize{b = bv}:tolist(), 1e-5)
  local p = b:pad{{1, 1}, {0, 2}}:sum(0)
  local k = kernel.lower(p)
  assert(tostring(k):find(" if ", 1, true), "padding is a guarded load")
  near(k:run{b = bv}:tolist(), p:realize{b = bv}:tolist(), 1e-5)
  raises(function() kernel.lower(b):run() end, "input b is not bound")
  raises(function() kernel.lower(b):run{b = tensor.ones{7, 2}} end, "b has 21 elements, its binding 14")
end)

-- the tiled transpose of the tour, with a layout for the shared tile
local function transpose(layout, barrier)
  local k = kernel.new{grid = {2, 2}, block = {32, 32}}
  local A = k:input("A", "float32", {64, 64})
  local B = k:output("B", "float32", {64, 64})
  local tile = k:shared("tile", "float32", {32, 32}, layout)
  k:stage("transpose", function()
    tile[{k.ty, k.tx}] = A[{k.by * 32 + k.ty, k.bx * 32 + k.tx}]
    if barrier ~= false then kernel.barrier() end
    B[{k.bx * 32 + k.ty, k.by * 32 + k.tx}] = tile[{k.tx, k.ty}]
  end)
  return k
end

check("staged transpose: values, bank conflicts plain / padded / swizzled", function()
  local t = tensor.rand({64, 64}, {seed = 3})
  local want = t:permute{1, 0}:tolist()
  local conflicts = {}
  for _, L in ipairs{"(32,32):(32,1)", "(32,32):(33,1)", "Sw<5,0,5> o 0 o (32,32):(32,1)"} do
    local k = transpose(L)
    eq(k:run{A = t}:tolist()[7][2], want[7][2], L)
    near(k:run{A = t}:tolist(), want, 0)
    local c = k:counts{A = t}
    conflicts[#conflicts + 1] = c.bank_conflicts
    -- 4 blocks of 32 warps, one store and one load each; 32 sectors of 32 bytes per warp
    eq(c.shared_loads, 128, "shared loads")
    eq(c.shared_stores, 128, "shared stores")
    eq(c.global_loads, 128, "global loads")
    eq(c.global_sectors, 4 * 32 * 4 * 2, "global sectors")
    eq(c.barriers, 4, "barriers")
    eq(c.blocks, 4, "blocks")
    eq(c.threads, 4096, "threads")
  end
  -- the column read of a plain 32x32 float tile is 32-way: 31 extra wavefronts a warp
  eq(conflicts[1], 128 * 31, "plain")
  eq(conflicts[2], 0, "padded")
  eq(conflicts[3], 0, "swizzled")
end)

check("checks: a missing barrier, an off-by-one guard, an uninitialized tile", function()
  local t = tensor.rand({64, 64}, {seed = 3})
  local k = transpose(nil, false)
  raises(function() k:run{A = t} end, "stage transpose", "block (0,0,0)", "tile[")
  -- off by one
  local k2 = kernel.new{block = {32}}
  local A = k2:input("A", "float32", {32})
  local B = k2:output("B", "float32", {32})
  k2:stage("shift", function()
    kernel.when(kernel.le(k2.tx, 31), function() B[k2.tx] = A[k2.tx + 1] end)
  end)
  raises(function() k2:check() end, "A[tx + 1]: index 0 is 32 at tx=31")
  -- the checks can be off, and the correct guard passes
  local k3 = kernel.new{block = {32}}
  A = k3:input("A", "float32", {32})
  B = k3:output("B", "float32", {32})
  local s = k3:shared("s", "float32", {32})
  k3:stage("rev", function()
    kernel.when(kernel.lt(k3.tx, 31), function() s[k3.tx] = A[k3.tx] end)
    kernel.barrier()
    B[k3.tx] = s[31 - k3.tx]
  end)
  raises(function() k3:run{A = tensor.arange(32):cast("float32")} end,
         "uninitialized:", "s[31]", "thread (0,0,0)")
end)

check("kernel.new: hardware indices, loops with axis types and bindings", function()
  local k = kernel.new()
  local A = k:input("A", "float32", {4, 8})
  local R = k:output("R", "float32", {4})
  k:stage("rowsum", function()
    for i in kernel.range(4) do
      R[i] = 0
      for j in kernel.range(8, {type = "reduce"}) do R[i] = R[i] + A[{i, j}] end
    end
  end)
  local text = tostring(k)
  assert(text:find("R[i] += A[i, j]", 1, true), text)
  local t = tensor.rand({4, 8}, {seed = 9})
  near(k:run{A = t}:tolist(), t:sum(1):tolist(), 1e-6)
  raises(function() return k.bx end, "no grid dimension")
  raises(function() kernel.range(4) end, "inside k:stage")
  raises(function() k:stage("bad", function() for i in kernel.range(4) do break end end) end,
         "a loop was left open")
  raises(function() k:stage("rowsum", function() R[0] = 1 end) end, "stage: the name rowsum is taken")
  raises(function() k:stage("e", function() error("boom") end) end, "boom")
  -- after errors the kernel still works
  near(k:run{A = t}:tolist(), t:sum(1):tolist(), 1e-6)
end)

check("collective operators: dispatch by layout, values", function()
  local k = kernel.new{grid = {4}, block = {128}}
  local A = k:input("A", "float32", {64, 256})
  local B = k:output("B", "float32", {64, 256})
  local S = k:output("S", "float32", {64})
  local T = k:output("T", "float32", {4})
  local tile = k:shared("tile", "float32", {16, 256})
  local impls = {}
  k:stage("rows", function()
    impls[1] = kernel.copy(tile, A:tile({k.bx * 16, 0}, {16, 256}))
    kernel.barrier()
    impls[2] = kernel.copy(B:tile({k.bx * 16, 0}, {16, 256}), tile)
    impls[3] = kernel.reduce(S:tile({k.bx * 16}, {16}), tile)
    impls[4] = kernel.reduce(T:tile({k.bx}, {1}), tile, {op = "max"})
  end)
  eq(table.concat(impls, " "), "vector4 vector4 rows tree")
  assert(tostring(k):find("# copy tile[:, :] <- A[bx*16:+16, :] at cta (128 threads): vector4", 1, true))
  local t = tensor.rand({64, 256}, {seed = 5})
  local b, s, m = k:run{A = t}
  near(b:tolist(), t:tolist(), 0)
  near(s:tolist(), t:sum(1):tolist(), 1e-5)
  near(m:tolist(), t:reshape{4, 16 * 256}:max(1):tolist(), 0)
  -- a padded tile allows no vector; forcing one names the element that breaks it
  local k2 = kernel.new{block = {64}}
  local X = k2:input("X", "float32", {32, 32})
  local P = k2:shared("P", "float32", {32, 32}, "(32,32):(33,1)")
  k2:stage("x", function()
    local impl, why = kernel.copy(P, X)
    eq(impl, "scalar")
    assert(why:find("P element 32 of the region (offset 33) is not 4-aligned", 1, true), why)
    raises(function() kernel.copy(P, X, {impl = "vector2"}) end, "vector2 is not possible")
    raises(function() kernel.reduce(P, X, {impl = "tree"}) end, "reduces nothing")
    raises(function() kernel.gemm(P, X, X, {impl = "mma"}) end, "mma is not possible", "takes float16 A and B")
  end)
end)

check("vector copies of regions too large to list are proved from the ranges", function()
  -- 32 blocks x 128 steps x 4096 elements: too many points to enumerate, but the runs of 8
  -- halves are aligned for every by and kt, which the simplifier proves
  local k = kernel.new{grid = {32}, block = {256}}
  local A = k:input("A", "float16", {4096, 4096})
  local S = k:shared("S", "float16", {128, 32}, "Sw<2,3,3> o 0 o (128,32):(32,1)")
  k:stage("s", function()
    for kt in kernel.range(128, {name = "kt", type = "reduce"}) do
      local impl, why = kernel.copy(S, A:tile({k.bx * 128, kt * 32}, {128, 32}))
      eq(impl, "vector8")
      assert(why:find("8-element runs (16 bytes) are consecutive and aligned in both layouts", 1, true), why)
      -- one element off: not aligned, and too large to list, so scalar with the reason
      impl, why = kernel.copy(S, A:tile({k.bx * 128, kt * 31 + 1}, {128, 32}))
      eq(impl, "scalar")
      assert(why:find("A's region is too large to check", 1, true), why)
    end
  end)
end)

check("a copy between layouts contiguous along different dimensions is staged", function()
  local function conv(impl)
    local k = kernel.new{grid = {2, 2}, block = {256}}
    local A = k:input("A", "float32", {64, 64})
    local B = k:output("B", "float32", {64, 64}, "(64,64):(1,64)")   -- column-major
    local got
    k:stage("t", function()
      got = kernel.copy(B:tile({k.bx * 32, k.by * 32}, {32, 32}), A:tile({k.bx * 32, k.by * 32}, {32, 32}),
                        impl and {impl = impl} or nil)
    end)
    return k, got
  end
  local t = tensor.rand({64, 64}, {seed = 11})
  local staged, impl = conv()
  eq(impl, "staged")
  near(staged:run{A = t}:tolist(), t:tolist(), 0)
  local direct = conv("scalar")
  near(direct:run{A = t}:tolist(), t:tolist(), 0)
  -- each of the 256 warp requests touches 4 sectors when both sides coalesce; the direct
  -- copy's column-major stores touch 32
  eq(staged:counts{A = t}.global_sectors, 256 * 4, "staged sectors")
  eq(direct:counts{A = t}.global_sectors, 128 * 4 + 128 * 32, "direct sectors")
  eq(staged:counts{A = t}.bank_conflicts, 0, "the padded tile")
end)

check("gemm dispatches to the SM80 tensor-core atom; reduce at warp scope to shuffles", function()
  local k = kernel.new{block = {128}}
  local A = k:input("A", "float16", {32, 32})
  local B = k:input("B", "float16", {32, 16})
  local C = k:output("C", "float32", {32, 16})
  local impl, why
  k:stage("mm", function()
    kernel.fill(C, 0)
    kernel.barrier()
    impl, why = kernel.gemm(C, A, B)
  end)
  eq(impl, "mma")
  assert(why:find("SM80_16x8x16_F32F16F16F32_TN: 4 tiles of 16x8 over 4 warps", 1, true), why)
  local a = tensor.rand({32, 32}, {seed = 1}):cast("float16")
  local b = tensor.rand({32, 16}, {seed = 2}):cast("float16")
  near(k:run{A = a, B = b}:tolist(), a:cast("float32"):matmul(b:cast("float32")):tolist(), 1e-5)
  -- 4 tiles, 2 steps of K each
  eq(k:counts{A = a, B = b}.mmas, 8, "mmas")
  -- float32 operands do not fit the atom: fma, and forcing mma says why
  local k2 = kernel.new{block = {128}}
  local A2 = k2:input("A", "float32", {32, 32})
  local C2 = k2:output("C", "float32", {32, 32})
  k2:stage("mm", function()
    local i, w = kernel.gemm(C2, A2, A2)
    eq(i, "fma")
    assert(w:find("not mma: SM80_16x8x16_F32F16F16F32_TN takes float16 A and B", 1, true), w)
    raises(function() kernel.gemm(C2, A2, A2, {impl = "mma"}) end, "mma is not possible")
  end)
  -- each warp sums its row by shuffles
  local w = kernel.new{block = {64}}
  local X = w:input("X", "float32", {2, 100})
  local S = w:output("S", "float32", {2})
  w:stage("rowsum", function()
    local warp = w.tx // 32
    eq(kernel.reduce(S:tile({warp}, {1}), X:tile({warp, 0}, {1, 100}), {scope = "warp"}), "shuffle")
  end)
  local x = tensor.rand({2, 100}, {seed = 3})
  near(w:run{X = x}:tolist(), x:sum(1):tolist(), 1e-5)
  eq(w:counts{X = x}.shuffles, 10, "shuffles")
end)

check("gemm at cta scope and warp subsets", function()
  local k = kernel.new{block = {128}}
  local A = k:input("A", "float32", {16, 8})
  local B = k:input("B", "float32", {8, 12})
  local C = k:output("C", "float32", {16, 12})
  k:stage("mm", function()
    kernel.fill(C, 0, {warps = {0, 2}})
    kernel.barrier()
    eq(kernel.gemm(C, A, B, {warps = {2, 4}}), "fma")
  end)
  local a, b = tensor.rand({16, 8}, {seed = 1}), tensor.rand({8, 12}, {seed = 2})
  near(k:run{A = a, B = b}:tolist(), a:matmul(b):tolist(), 1e-5)
  raises(function() k:stage("w", function() kernel.fill(C, 0, {warps = {3, 5}}) end) end, "warps [3, 5)")
end)

check("warp ops: a shuffle all-reduce over two warps, an m16n8k16 mma, their errors", function()
  local k = kernel.new{block = {64}}
  local X = k:input("X", "int32", {64})
  local Y = k:output("Y", "int32", {64})
  local acc = k:register("acc", "int32", {1})
  k:stage("rot", function()
    acc[0] = X[k.tx]
    for _, d in ipairs{16, 8, 4, 2, 1} do acc[0] = acc[0] + kernel.shuffle(acc[0], (k.tx + d) % 32) end
    Y[k.tx] = acc[0]
  end)
  assert(tostring(k):find("acc[0] += shuffle(acc[0], (tx + 16)%32)", 1, true), tostring(k))
  assert(k:check())
  local x = tensor.arange(64):cast("int32")
  local y = k:run{X = x}:tolist()
  for i = 1, 64 do eq(y[i], i <= 32 and 496 or 1520, "lane " .. i) end
  local c = k:counts{X = x}
  eq(c.shuffles, 10, "shuffles")
  eq(c.mmas, 0, "mmas")
  -- all ones: every element of D is K * 1 * 1 + C
  local m = kernel.new{block = {32}}
  local A = m:register("a", "float16", {8})
  local B = m:register("b", "float16", {4})
  local C = m:register("c", "float32", {4})
  local O = m:output("O", "float32", {32, 4})
  m:stage("mma", function()
    for v in kernel.range(8) do A[v] = 1 end
    for v in kernel.range(4) do B[v] = 1; C[v] = 0.5 end
    kernel.mma("SM80_16x8x16_F32F16F16F32_TN", C, A, B, C)
    for v in kernel.range(4) do O[{m.tx, v}] = C[v] end
  end)
  assert(tostring(m):find("mma.SM80_16x8x16_F32F16F16F32_TN(c, a, b, c)", 1, true), tostring(m))
  assert(viz.dot(m):find("mma.SM80_16x8x16_F32F16F16F32_TN(c, a, b, c)", 1, true))
  near(m:run():tolist(), (function() local r = {} for i = 1, 32 do r[i] = {16.5, 16.5, 16.5, 16.5} end return r end)(), 0)
  eq(m:counts().mmas, 1, "mmas")
  raises(function() m:stage("bad", function() kernel.mma("SM80_16x8x16_F32F16F16F32_TN", A, A, B, C) end) end,
         "operand D is a, of 8 elements; a thread holds 4 values")
  raises(function() m:stage("bad", function() kernel.mma("nope", C, A, B, C) end) end, "mma: unknown atom 'nope'")
  raises(function() kernel.shuffle(1, 2.5) end, "no kernel value among the arguments")
end)

check("cp_async: kernel.copy's cp_async, commit and wait; the verifier and the interpreter's checks", function()
  local function mk(variant)
    local k = kernel.new{grid = {2}, block = {32}}
    local A = k:input("A", "float16", {64, 64})
    local B = k:output("B", "float16", {64, 64})
    local S = k:shared("S", "float16", {32, 64})
    k:stage("cp", function()
      local impl = kernel.copy(S, A:tile({k.bx * 32, 0}, {32, 64}), {impl = "cp_async"})
      assert(impl == "cp_async", impl)
      if variant ~= "nocommit" then kernel.cp_async_commit() end
      if variant == "wait1" then kernel.cp_async_wait(1)
      elseif variant ~= "nowait" and variant ~= "noread" then kernel.cp_async_wait(0) end
      kernel.barrier()
      if variant == "noread" then B[{0, k.tx}] = A[{0, k.tx}] return end
      -- transposed: each thread reads what others copied
      for i in kernel.range(32) do
        B[{k.bx * 32 + i, k.tx}] = S[{i, k.tx}]
        B[{k.bx * 32 + i, 32 + k.tx}] = S[{i, 32 + k.tx}]
      end
    end)
    return k
  end
  local a = tensor.rand({64, 64}, {seed = 3}):cast("float16")
  local k = mk("ok")
  local txt = tostring(k)
  assert(txt:find("cp_async.8(S[it*4 + tx//8, tx%8*8], A[bx*32 + it*4 + tx//8, tx%8*8])", 1, true), txt)
  assert(txt:find("cp_async_commit()\n", 1, true) and txt:find("cp_async_wait(0)\n", 1, true), txt)
  local want = a:tolist()
  for _, opts in ipairs{{checks = true}, {checks = false}} do
    local got = k:run({A = a}, opts):tolist()
    for i = 1, 64 do for j = 1, 64 do eq(got[i][j], want[i][j]) end end
  end
  local c = k:counts{A = a}
  eq(c.cp_asyncs, 512)
  local cu = k:source("cuda")
  assert(cu:find("cp.async.cg.shared.global [%0], [%1], 16;", 1, true), cu)
  assert(cu:find("cp.async.wait_group 0;", 1, true), cu)
  raises(function() mk("nowait"):check() end, "reads S while a cp.async into it may be in flight")
  raises(function() mk("nocommit"):check() end, "issued and not committed")
  local ok, notes = mk("wait1"):check()
  assert(ok and notes:find("older than the n most recent groups", 1, true), notes)
  raises(function() mk("wait1"):run{A = a} end, "while a cp.async into it is in flight")
  raises(function() mk("noread"):run{A = a} end, "ends with 8 cp.async in flight")
  -- refusals: shared to global, a tile without 16-byte runs, a wait past 63, C's dialect
  raises(function()
    local k2 = kernel.new{block = {32}}
    local X, T = k2:output("X", "float16", {64}), k2:shared("T", "float16", {64})
    k2:stage("s", function() kernel.copy(X, T, {impl = "cp_async"}) end)
  end, "cp_async is not possible: it copies global to shared memory")
  raises(function()
    local k2 = kernel.new{block = {32}}
    local X = k2:input("X", "float16", {8, 60})
    local T = k2:shared("T", "float16", {8, 60})
    k2:stage("s", function() kernel.copy(T, X, {impl = "cp_async"}) end)
  end, "the innermost extent 60 of T is not a multiple of 8")
  raises(function()
    local k2 = kernel.new{block = {32}}
    k2:stage("s", function() kernel.cp_async_wait(64) end)
  end, "wait_group takes 0 to 63")
end)

check("ldmatrix: fragments from a swizzled shared tile into an mma, counts, errors", function()
  local m = kernel.new{block = {32}}
  local A = m:input("A", "float16", {16, 16})
  local B = m:input("B", "float16", {16, 8})
  local O = m:output("O", "float32", {16, 8})
  local SA = m:shared("SA", "float16", {16, 16}, "Sw<1,3,3> o 0 o (16,16):(16,1)")
  local SB = m:shared("SB", "float16", {16, 8})
  local a = m:register("a", "float16", {8})
  local b = m:register("b", "float16", {4})
  local c = m:register("c", "float32", {4})
  m:stage("mm", function()
    local lane = m.tx
    kernel.copy(SA, A, {scope = "warp"})
    kernel.copy(SB, B, {scope = "warp"})
    kernel.barrier()
    kernel.ldmatrix(a, SA, {lane % 8 + lane // 8 % 2 * 8, lane // 16 * 8})
    kernel.ldmatrix(b, SB, {lane % 16, 0}, {x = 2, trans = true})
    for v in kernel.range(4) do c[v] = 0 end
    kernel.mma("SM80_16x8x16_F32F16F16F32_TN", c, a, b, c)
    for v in kernel.range(4) do O[{lane // 4 + v // 2 * 8, lane % 4 * 2 + v % 2}] = c[v] end
  end)
  assert(tostring(m):find("ldmatrix.x4(a, SA[tx%16, tx//16*8])", 1, true), tostring(m))
  assert(tostring(m):find("ldmatrix.x2.trans(b, SB[tx%16, 0])", 1, true), tostring(m))
  assert(m:check())
  local ta = tensor.rand({16, 16}, {seed = 7}):cast("float16")
  local tb = tensor.rand({16, 8}, {seed = 8}):cast("float16")
  near(m:run{A = ta, B = tb}:tolist(), ta:cast("float32"):matmul(tb:cast("float32")):tolist(), 1e-6)
  local cnt = m:counts{A = ta, B = tb}
  eq(cnt.ldmatrices, 2, "ldmatrices")
  eq(cnt.mmas, 1, "mmas")
  assert(m:source("cuda"):find("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", 1, true))
  raises(function() m:stage("bad", function() kernel.ldmatrix(b, SA, {0, 0}) end) end,
         "the destination b holds 4 elements; x4 gives a lane 8")
  raises(function() m:stage("bad", function() kernel.ldmatrix(a, SA, {0, 0}, {x = 3}) end) end, "x3")
  raises(function() m:stage("bad", function() kernel.ldmatrix(a, A, {0, 0}) end) end, "ldmatrix reads shared memory")
  raises(function() m:stage("bad", function() kernel.ldmatrix(a, SA, {0, 0}, 5) end) end, "table")
  -- a misaligned row is caught when it runs
  local bad = kernel.new{block = {32}}
  local S2 = bad:shared("S", "float16", {16, 16})
  local r2 = bad:register("r", "float16", {8})
  local O2 = bad:output("O", "float16", {32, 8})
  bad:stage("s", function()
    kernel.fill(S2, 1, {scope = "warp"})
    kernel.barrier()
    kernel.ldmatrix(r2, S2, {bad.tx % 16, 1})
    for v in kernel.range(8) do O2[{bad.tx, v}] = r2[v] end
  end)
  raises(function() bad:run() end, "ldmatrix:", "at offset 1 of S")
end)

-- a 64xNx(16*KS) product through wgmma: A and B staged in shared memory through the given
-- layouts (a slot dimension of 2 in front), then KS wgmmas per slot, D out by CUTLASS's C layout
local function wgmma_kernel(N, KS, la, lb, opts)
  opts = opts or {}
  local m = kernel.new{block = {opts.threads or 128}}
  local A = m:input("A", "float16", {64, 2 * 16 * KS})
  local B = m:input("B", "float16", {2 * 16 * KS, N})
  local O = m:output("O", "float32", {64, N})
  local As = m:shared("As", "float16", {2, 64, 16 * KS}, la)
  local Bs = m:shared("Bs", "float16", {2, 16 * KS, N}, lb)
  local c = m:register("c", "float32", {N // 2})
  m:stage("mm", function()
    local t = m.tx
    for s in kernel.range(2) do
      kernel.copy(As:tile({s, 0, 0}, {1, 64, 16 * KS}), A:tile({0, s * 16 * KS}, {64, 16 * KS}), {scope = "warpgroup"})
      kernel.copy(Bs:tile({s, 0, 0}, {1, 16 * KS, N}), B:tile({s * 16 * KS, 0}, {16 * KS, N}), {scope = "warpgroup"})
    end
    for v in kernel.range(N // 2) do c[v] = 0 end
    if not opts.no_barrier then kernel.barrier() end
    if not opts.no_fence then kernel.wgmma_fence() end
    for s in kernel.range(2) do
      for kk in kernel.range(KS) do
        kernel.wgmma(c, As:tile({s, 0, kk * 16}, {1, 64, 16}), Bs:tile({s, kk * 16, 0}, {1, 16, N}))
      end
    end
    kernel.wgmma_commit()
    if opts.read_early then c[0] = c[0] + 1 end
    if not opts.no_wait then kernel.wgmma_wait(0) end
    local w, l = t // 32, t % 32
    for v in kernel.range(N // 2) do
      O[{w * 16 + l // 4 + v // 2 % 2 * 8, v // 4 * 8 + l % 4 * 2 + v % 2}] = c[v]
    end
  end)
  return m, As, Bs
end

-- b_nk: B given (n, k), as attention's K^T from a tile stored (key, d): both tiles K-major 128B,
-- a slot dimension in front of B's (the start over a loop variable)
check("wgmma: b_nk (B stored (n, k)) against float64, its descriptor, CUDA, refusals", function()
  local m = kernel.new{block = {128}}
  local A = m:input("A", "float16", {64, 64})
  local Bt = m:input("Bt", "float16", {128, 64})
  local O = m:output("O", "float32", {64, 64})
  local As = m:shared("As", "float16", {64, 64}, "Sw<3,3,3> o 0 o (64,64):(64,1)")
  local Bs = m:shared("Bs", "float16", {2, 64, 64}, "Sw<3,3,3> o 0 o (2,64,64):(4096,64,1)")
  local c = m:register("c", "float32", {32})
  m:stage("mm", function()
    local t = m.tx
    kernel.copy(As, A, {scope = "warpgroup"})
    for s in kernel.range(2) do
      kernel.copy(Bs:tile({s, 0, 0}, {1, 64, 64}), Bt:tile({s * 64, 0}, {64, 64}), {scope = "warpgroup"})
    end
    for v in kernel.range(32) do c[v] = 0 end
    kernel.barrier()
    kernel.wgmma_fence()
    for s in kernel.range(2) do
      for kk in kernel.range(4) do
        kernel.wgmma(c, As:tile({0, kk * 16}, {64, 16}), Bs:tile({s, 0, kk * 16}, {1, 64, 16}), {b_nk = true})
      end
    end
    kernel.wgmma_commit()
    kernel.wgmma_wait(0)
    local w, l = t // 32, t % 32
    for v in kernel.range(32) do
      O[{w * 16 + l // 4 + v // 2 % 2 * 8, v // 4 * 8 + l % 4 * 2 + v % 2}] = c[v]
    end
  end)
  assert(m:check())
  local ta = tensor.rand({64, 64}, {seed = 5}):cast("float16")
  local tb = tensor.rand({128, 64}, {seed = 6}):cast("float16")
  -- O = A (B0 + B1)^T, B0 and B1 the two 64-row halves of Bt (one per slot)
  local la, lb, want = ta:tolist(), tb:tolist(), {}
  for i = 1, 64 do
    want[i] = {}
    for j = 1, 64 do
      local acc = 0
      for q = 1, 64 do acc = acc + la[i][q] * (lb[j][q] + lb[64 + j][q]) end
      want[i][j] = acc
    end
  end
  near(m:run{A = ta, Bt = tb}:tolist(), want, 1e-4)
  eq(m:counts{A = ta, Bt = tb}.wgmmas, 8, "wgmmas")
  local s = tostring(m)
  assert(s:find("wgmma.m64n64k16(c, As[0, j*16], Bs[i, 0, j*16], b_nk)", 1, true), s)
  local d = kernel.wgmma_desc(Bs:tile({1, 0, 16}, {1, 64, 16}), "B", nil, {b_nk = true})
  eq(d.major, "K"); eq(d.swizzle, "128B"); eq(d.sbo, 1024); eq(d.start, 8192 + 32)
  local cu = m:source("cuda")
  for _, want in ipairs{"wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", "p, 1, 1, 0, 0;",
                        "/* K-major, 128B, LBO 16, SBO 1024 */"} do
    assert(cu:find(want, 1, true), want)
  end
  assert(not cu:find("MN-major", 1, true), "both operands K-major")
  -- refusals: a 16 x N region with b_nk, a flag for A, an unknown option
  local r = kernel.new{block = {128}}
  local S = r:shared("S", "float16", {64, 64}, "Sw<3,3,3> o 0 o (64,64):(64,1)")
  local rc = r:register("rc", "float32", {32})
  raises(function()
    r:stage("w", function() kernel.wgmma(rc, S:tile({0, 0}, {64, 16}), S:tile({0, 0}, {16, 64}), {b_nk = true}) end)
  end, "operand B", "(b_nk): the tile is 16 x 64; B given (n, k) is N x 16")
  raises(function() kernel.wgmma_desc(S:tile({0, 0}, {64, 16}), "A", nil, {b_nk = true}) end, "operand B, not A")
  raises(function()
    r:stage("w2", function() kernel.wgmma(rc, S:tile({0, 0}, {64, 16}), S:tile({0, 0}, {64, 16}), {bnk = true}) end)
  end, "option 'bnk'")
end)

-- A from registers (the RS form): attention's two products, S = A Bt^T by the SS form, P = S as
-- float16 in registers (S's values 8j..8j+7 are the A fragment of its columns 16j..16j+15), then
-- O = P V by the RS form; A and Bt hold 0 and 1, so S and P are exact and O is checked in float64
local function rs_kernel(opts)
  opts = opts or {}
  local m = kernel.new{block = {128}}
  local A = m:input("A", "float16", {64, 64})
  local Bt = m:input("Bt", "float16", {64, 64})
  local V = m:input("V", "float16", {64, 64})
  local O = m:output("O", "float32", {64, 64})
  local As = m:shared("As", "float16", {64, 64}, "Sw<3,3,3> o 0 o (64,64):(64,1)")
  local Bs = m:shared("Bs", "float16", {64, 64}, "Sw<3,3,3> o 0 o (64,64):(64,1)")
  local Vs = m:shared("Vs", "float16", {64, 64}, "Sw<3,3,3> o 0 o (64,64):(64,1)")
  local c = m:register("c", "float32", {32})
  local o = m:register("o", "float32", {32})
  local P = m:register("P", "float16", {4, 8})
  m:stage("mm", function()
    local t = m.tx
    kernel.copy(As, A, {scope = "warpgroup"})
    kernel.copy(Bs, Bt, {scope = "warpgroup"})
    kernel.copy(Vs, V, {scope = "warpgroup"})
    for v in kernel.range(32) do
      if not opts.zero then c[v] = 0 end
      o[v] = 0
    end
    kernel.barrier()
    kernel.wgmma_fence()
    for kk = 0, 3 do
      -- zero: the first k-step writes c (scale-d 0), so c needs no zeroing first
      kernel.wgmma(c, As:tile({0, kk * 16}, {64, 16}), Bs:tile({0, kk * 16}, {64, 16}), {b_nk = true, zero = opts.zero and kk == 0})
    end
    kernel.wgmma_commit()
    kernel.wgmma_wait(0)
    for j in kernel.range(4) do
      for i in kernel.range(8) do P[{j, i}] = kernel.cast(c[j * 8 + i], "float16") end
    end
    if not opts.no_fence then kernel.wgmma_fence() end
    for j = 0, 3 do kernel.wgmma(o, P:tile({j, 0}, {1, 8}), Vs:tile({j * 16, 0}, {16, 64})) end
    kernel.wgmma_commit()
    if opts.write_early then P[{0, 0}] = 0 end
    kernel.wgmma_wait(0)
    local w, l = t // 32, t % 32
    for v in kernel.range(32) do
      O[{w * 16 + l // 4 + v // 2 % 2 * 8, v // 4 * 8 + l % 4 * 2 + v % 2}] = o[v]
    end
  end)
  return m
end

check("wgmma: A from registers (RS) against float64, fence and in-flight errors, CUDA", function()
  local m = rs_kernel()
  assert(m:check())
  local ta = tensor.rand({64, 64}, {seed = 7}):gt(0.5):cast("float16")
  local tb = tensor.rand({64, 64}, {seed = 8}):gt(0.5):cast("float16")
  local tv = tensor.rand({64, 64}, {seed = 9}):cast("float16")
  local la, lb, lv, want = ta:tolist(), tb:tolist(), tv:tolist(), {}
  for i = 1, 64 do
    want[i] = {}
    for n = 1, 64 do
      local acc = 0
      for kk = 1, 64 do
        local sik = 0
        for q = 1, 64 do sik = sik + la[i][q] * lb[kk][q] end
        acc = acc + sik * lv[kk][n]
      end
      want[i][n] = acc
    end
  end
  near(m:run{A = ta, Bt = tb, V = tv}:tolist(), want, 1e-4)
  eq(m:counts{A = ta, Bt = tb, V = tv}.wgmmas, 8, "wgmmas")
  -- zero = true: the same product with c never zeroed (its scale-d predicate 0 in CUDA)
  local mz = rs_kernel{zero = true}
  near(mz:run{A = ta, Bt = tb, V = tv}:tolist(), want, 1e-4)
  assert(tostring(mz):find("b_nk, zero)", 1, true), tostring(mz))
  assert(mz:source("cuda"):find("\"l\"(tessel_da), \"l\"(tessel_db), \"r\"(0)", 1, true), "scale-d 0")
  assert(tostring(m):find("wgmma.m64n64k16(o, P[j, 0], Vs[j*16, 0])", 1, true) or tostring(m):find("P[", 1, true), tostring(m))
  -- the register fragment must be fenced after it is written, and left alone while in flight
  raises(function() rs_kernel{no_fence = true}:run{A = ta, Bt = tb, V = tv} end, "A fragment from P",
         "kernel.wgmma_fence()")
  raises(function() rs_kernel{write_early = true}:run{A = ta, Bt = tb, V = tv} end, "while a wgmma that uses it is in flight")
  -- refusals: a fragment of 4, a float32 register buffer
  local r = kernel.new{block = {128}}
  local S = r:shared("S", "float16", {64, 64}, "Sw<3,3,3> o 0 o (64,64):(64,1)")
  local rc = r:register("rc", "float32", {32})
  local R4 = r:register("R4", "float16", {4})
  local Rf = r:register("Rf", "float32", {8})
  raises(function()
    r:stage("w", function() kernel.wgmma(rc, R4, S:tile({0, 0}, {16, 64})) end)
  end, "operand A", "(registers)")
  raises(function()
    r:stage("w2", function() kernel.wgmma(rc, Rf, S:tile({0, 0}, {16, 64})) end)
  end, "operand A: Rf is float32")
  -- CUDA: four 32-bit registers in the RS form's operand list (the halves' pairs as words of the
  -- aligned buffer, fenced as words), no tnspA
  local cu = m:source("cuda")
  for _, want in ipairs{"wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", "{%32, %33, %34, %35}, %36, p, 1, 1, 1;",
                        "__align__(4) __half P[32];", "\"r\"(reinterpret_cast<unsigned &>(P[0]))",
                        "\"r\"(reinterpret_cast<unsigned &>(P[30]))",
                        "asm volatile(\"\" : \"+r\"(reinterpret_cast<unsigned &>(P[30])) :: \"memory\");"} do
    assert(cu:find(want, 1, true), want .. "\n" .. cu)
  end
end)

check("wgmma: products against float64, descriptors, asynchrony and divergence errors, refusals, CUDA", function()
  local function product(N, KS, la, lb)
    local m, As, Bs = wgmma_kernel(N, KS, la, lb)
    assert(m:check())
    local ta = tensor.rand({64, 32 * KS}, {seed = 3}):cast("float16")
    local tb = tensor.rand({32 * KS, N}, {seed = 4}):cast("float16")
    near(m:run{A = ta, B = tb}:tolist(), ta:cast("float64"):matmul(tb:cast("float64")):tolist(), 1e-4)
    local cnt = m:counts{A = ta, B = tb}
    eq(cnt.wgmmas, 2 * KS, "wgmmas")
    return m, As, Bs
  end
  -- A K-major 128B, B MN-major 128B (B as TMA writes it: 64-column boxes)
  local m, As, Bs = product(128, 4, "Sw<3,3,3> o 0 o (2,64,64):(4096,64,1)",
                    "Sw<3,3,3> o 0 o (2,64,(64,2)):(8192,64,(1,4096))")
  -- A K-major 64B, B K-major (stored transposed: n rows of k) 32B
  product(64, 2, "Sw<2,3,3> o 0 o (2,64,32):(2048,32,1)", "Sw<1,3,3> o 0 o (2,(16,2),64):(2048,(1,1024),16)")
  local s = tostring(m)
  assert(s:find("wgmma.m64n128k16(c, As[i, 0, j*16], Bs[i, j*16, 0])", 1, true), s)
  assert(s:find("wgmma_fence()", 1, true) and s:find("wgmma_wait(0)", 1, true), s)
  -- the descriptors
  local d = kernel.wgmma_desc(As:tile({1, 0, 32}, {1, 64, 16}), "A")
  eq(d.major, "K"); eq(d.swizzle, "128B"); eq(d.sbo, 1024); eq(d.start, 8192 + 64)
  d = kernel.wgmma_desc(Bs:tile({1, 48, 0}, {1, 16, 128}), "B")
  eq(d.major, "MN"); eq(d.lbo, 8192); eq(d.sbo, 1024); eq(d.start, 16384 + 48 * 128)
  -- CUDA: sm_90a, aligned tiles, the proxy fence, the instruction
  local cu = m:source("cuda")
  for _, want in ipairs{"__shared__ __align__(1024) __half As", "fence.proxy.async.shared::cta",
                        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "p, 1, 1, 0, 1;",
                        "| 0x4000004000010000ull;  /* K-major, 128B, LBO 16, SBO 1024 */",
                        "wgmma.wait_group.sync.aligned 0;", "code=sm_90a"} do
    assert(cu:find(want, 1, true), want)
  end
  raises(function() m:source("triton") end, "triton:")
  -- asynchrony: reading D in flight, no fence, no wait
  raises(function() wgmma_kernel(64, 1, "Sw<3,3,3> o 0 o (2,64,16):(1024,16,1)", "(2,16,64):(1024,64,1)") end,
         "no GMMA canonical form fits")
  local la, lb = "Sw<3,3,3> o 0 o (2,64,64):(4096,64,1)", "Sw<3,3,3> o 0 o (2,64,64):(4096,64,1)"
  local ta = tensor.rand({64, 128}, {seed = 3}):cast("float16")
  local tb = tensor.rand({128, 64}, {seed = 4}):cast("float16")
  raises(function() wgmma_kernel(64, 4, la, lb, {read_early = true}):run{A = ta, B = tb} end,
         "while a wgmma that uses it is in flight")
  raises(function() wgmma_kernel(64, 4, la, lb, {no_fence = true}):run{A = ta, B = tb} end,
         "kernel.wgmma_fence() between")
  raises(function() wgmma_kernel(64, 4, la, lb, {no_wait = true}):run{A = ta, B = tb} end,
         "while a wgmma that uses it is in flight")
  raises(function() wgmma_kernel(64, 4, la, lb, {no_barrier = true}):run{A = ta, B = tb} end, "race:")
  raises(function() wgmma_kernel(64, 4, la, lb, {threads = 96}):run{A = ta, B = tb} end,
         "multiple of 128")
  -- divergence: a wgmma under a thread-dependent if
  local dv = kernel.new{block = {128}}
  local S1 = dv:shared("S", "float16", {64, 64}, "Sw<3,3,3> o 0 o (64,64):(64,1)")
  local c1 = dv:register("c", "float32", {32})
  local O1 = dv:output("O", "float32", {128})
  dv:stage("d", function()
    kernel.fill(S1, 1, {scope = "warpgroup"})
    for v in kernel.range(32) do c1[v] = 0 end
    kernel.barrier()
    kernel.wgmma_fence()
    kernel.when(kernel.lt(dv.tx, 64), function()
      kernel.wgmma(c1, S1:tile({0, 0}, {64, 16}), S1:tile({0, 0}, {16, 64}))
    end)
    kernel.wgmma_commit()
    kernel.wgmma_wait(0)
    O1[dv.tx] = c1[0]
  end)
  raises(function() assert(dv:check()) end, "a wgmma under control flow that divides a warpgroup (an if whose "
         .. "condition depends on a thread index")
  raises(function() dv:stage("w", function() kernel.wgmma_wait(8) end) end, "0 to 7")
  -- uniformity: an if taken by whole warpgroups may hold a wgmma, one taken by whole warps an mma
  -- but not a wgmma (the verifier enumerates the condition against each group's first thread)
  local function under(cond, op)
    local u = kernel.new{block = {256}}
    local S = u:shared("S", "float16", {64, 64}, "Sw<3,3,3> o 0 o (64,64):(64,1)")
    local c = u:register("c", "float32", {32})
    local a, b, d = u:register("a", "float16", {8}), u:register("b", "float16", {4}), u:register("d", "float32", {4})
    local O = u:output("O", "float32", {256})
    u:stage("u", function()
      kernel.fill(S, 1, {scope = "cta"})
      for v in kernel.range(32) do c[v] = 0 end
      for v in kernel.range(8) do a[v] = 1 end
      for v in kernel.range(4) do b[v] = 1; d[v] = 0 end
      kernel.barrier()
      kernel.wgmma_fence()
      kernel.when(cond(u.tx), function()
        if op == "wgmma" then
          kernel.wgmma(c, S:tile({0, 0}, {64, 16}), S:tile({0, 0}, {16, 64}))
        else
          kernel.mma("SM80_16x8x16_F32F16F16F32_TN", d, a, b, d)
        end
      end)
      kernel.wgmma_commit()
      kernel.wgmma_wait(0)
      O[u.tx] = c[0] + d[0]
    end)
    return u
  end
  local wgu = under(function(tx) return kernel.ge(tx, 128) end, "wgmma")
  assert(wgu:check())
  local out = wgu:run{}:tolist()
  assert(out[1] == 0 and out[129] ~= 0, "the second warpgroup alone ran the wgmma")
  assert(under(function(tx) return kernel.eq(tx // 128 % 2, 1) end, "wgmma"):check())
  raises(function() assert(under(function(tx) return kernel.lt(tx, 32) end, "wgmma"):check()) end,
         "divides a warpgroup")
  assert(under(function(tx) return kernel.lt(tx, 32) end, "mma"):check())
  assert(under(function(tx) return kernel.eq(tx // 32 % 2, 0) end, "mma"):check())
  raises(function() assert(under(function(tx) return kernel.lt(tx, 16) end, "mma"):check()) end,
         "an mma under thread-divergent control flow")
  -- setmaxnreg: warpgroup-wide, a multiple of 8 in 24..256, __launch_bounds__(threads, 1) in CUDA;
  -- a block of one warpgroup and a producer warp: the warp never reaches the wgmma
  local function regs(cond, n)
    local u = kernel.new{block = {160}}
    local S = u:shared("S", "float16", {64, 64}, "Sw<3,3,3> o 0 o (64,64):(64,1)")
    local c = u:register("c", "float32", {32})
    local O = u:output("O", "float32", {160})
    u:stage("r", function()
      kernel.fill(S, 1, {scope = "cta"})
      for v in kernel.range(32) do c[v] = 0 end
      kernel.barrier()
      kernel.when(cond(u.tx), function()
        kernel.setmaxnreg(n, "inc")
        kernel.wgmma_fence()
        kernel.wgmma(c, S:tile({0, 0}, {64, 16}), S:tile({0, 0}, {16, 64}))
        kernel.wgmma_commit()
        kernel.wgmma_wait(0)
      end)
      O[u.tx] = c[1]
    end)
    return u
  end
  local r = regs(function(tx) return kernel.lt(tx, 128) end, 232)
  assert(r:check())
  local got = r:run{}:tolist()
  assert(got[1] == 16 and got[129] == 0, "the warpgroup ran the wgmma, the producer warp did not")
  local cu = r:source("cuda")
  assert(cu:find("__launch_bounds__(160, 1)", 1, true), cu)
  assert(cu:find('asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\\n");', 1, true), cu)
  raises(function() regs(function(tx) return kernel.lt(tx, 128) end, 20) end,
         "setmaxnreg takes a multiple of 8 from 24 to 256")
  raises(function() assert(regs(function(tx) return kernel.lt(tx, 64) end, 232):check()) end,
         "a setmaxnreg under control flow that divides a warpgroup")
  -- the producer warp reaching the wgmma is the interpreter's error
  raises(function() regs(function(tx) return kernel.ge(tx, 0) end, 232):run{} end,
         "warpgroup 1 reaches a wgmma with 32 threads; a wgmma runs on a whole warpgroup of 128")
end)

check("wgmma: its shared tiles are read until the wait that retires it (stores, TMA into a slot released early)", function()
  -- a producer warp (thread 128) fills 2 slots of A and B by TMA; the consumer warpgroup multiplies
  -- and releases a slot on empty[s] after wgmma_wait(0) ("ok"), before it ("early"), or stores
  -- into the tile it multiplies before the wait ("store")
  local function mk(variant)
    local S = 2
    local k = kernel.new{block = {160}}
    local A = k:input("A", "float16", {64, 256})
    local B = k:input("B", "float16", {256, 64})
    local C = k:output("C", "float32", {64, 64})
    local As = k:shared("As", "float16", {S, 64, 64}, "Sw<3,3,3> o 0 o (2,64,64):(4096,64,1)")
    local Bs = k:shared("Bs", "float16", {S, 64, 64}, "Sw<3,3,3> o 0 o (2,64,64):(4096,64,1)")
    local c = k:register("c", "float32", {32})
    local full, empty = k:shared("full", "uint64", {S}), k:shared("empty", "uint64", {S})
    k:stage("pc", function()
      kernel.when(kernel.eq(k.tx, 0), function()
        for s = 0, S - 1 do kernel.mbarrier_init(full, {s}, 1); kernel.mbarrier_init(empty, {s}, 128) end
      end)
      kernel.barrier()
      kernel.when(kernel.eq(k.tx, 128), function()
        for kt in kernel.range(4, {name = "kt"}) do
          local s = kt % S
          kernel.mbarrier_wait(empty, {s}, (kt // S + 1) % 2)
          kernel.mbarrier_arrive(full, {s}, {tx = 16384})
          kernel.tma(As:tile({s, 0, 0}, {1, 64, 64}), A:tile({0, kt * 64}, {64, 64}), full, {s})
          kernel.tma(Bs:tile({s, 0, 0}, {1, 64, 64}), B:tile({kt * 64, 0}, {64, 64}), full, {s})
        end
      end)
      kernel.when(kernel.lt(k.tx, 128), function()
        for v in kernel.range(32) do c[v] = 0 end
        for kt in kernel.range(4, {name = "kt"}) do
          local s = kt % S
          kernel.mbarrier_wait(full, {s}, kt // S % 2)
          kernel.wgmma_fence()
          for j in kernel.range(4, {name = "j"}) do
            kernel.wgmma(c, As:tile({s, 0, j * 16}, {1, 64, 16}), Bs:tile({s, j * 16, 0}, {1, 16, 64}))
          end
          kernel.wgmma_commit()
          if variant == "early" then kernel.mbarrier_arrive(empty, {s}) end
          if variant == "store" then As[{s, k.tx // 2, k.tx % 2}] = 0 end
          kernel.wgmma_wait(0)
          if variant ~= "early" then kernel.mbarrier_arrive(empty, {s}) end
        end
        local w, l = k.tx // 32, k.tx % 32
        for v in kernel.range(32) do
          C[{w * 16 + l // 4 + v // 2 % 2 * 8, v // 4 * 8 + l % 4 * 2 + v % 2}] = c[v]
        end
      end)
    end)
    return k
  end
  local ta = tensor.rand({64, 256}, {seed = 3}):cast("float16")
  local tb = tensor.rand({256, 64}, {seed = 4}):cast("float16")
  near(mk("ok"):run{A = ta, B = tb}:tolist(), ta:cast("float64"):matmul(tb:cast("float64")):tolist(), 1e-4)
  raises(function() mk("early"):run{A = ta, B = tb} end,
         "kt=2: a TMA writes As at offset 0 while thread (0,0,0) read it in this phase, and no mbarrier orders them")
  raises(function() mk("store"):run{A = ta, B = tb} end,
         "wgmma: stage pc, block (0,0,0), thread (0,0,0), loops tx=0, kt=0: writes As[0, 0, 0] (offset 0, shared "
         .. "memory) while a wgmma of thread (0,0,0)'s warpgroup reads it", "until the kernel.wgmma_wait that retires it")
end)

check("pictures, listings and help", function()
  local k = transpose("(32,32):(33,1)")
  assert(k:uops():find("define   float32  tile shared", 1, true), k:uops())
  assert(k:buffers():find("tile  temp    shared  float32   (32, 32)          (32,32):(33,1)", 1, true), k:buffers())
  local dot = viz.dot(k)
  assert(dot:find("for tx in range(32)", 1, true) and dot:find("barrier()", 1, true), dot)
  for _, f in ipairs{"lower", "new", "range", "when", "barrier", "shuffle", "mma", "ldmatrix", "copy", "fill", "reduce",
                     "gemm"} do
    assert(kernel[f], f)
  end
  for _, m in ipairs{"run", "check", "counts", "uops", "stage", "input", "shared"} do
    assert(kernel.methods[m], m)
  end
end)


check("tma: mbarriers and TMA boxes (swizzled, several boxes, none), both pipelines, the checks", function()
  -- (1) one thread issues expect_tx + TMA for slot s, every thread waits, computes, bar.sync
  local S = 2
  local function mk1(variant)
    local k = kernel.new{grid = {2}, block = {128}}
    local A = k:input("A", "float16", {256, 256})
    local B = k:output("B", "float16", {256, 256})
    local As = k:shared("As", "float16", {S, 128, 64}, "Sw<3,3,3> o 0 o (2,128,64):(8192,64,1)")
    local full = k:shared("full", "uint64", {S})
    local plan
    k:stage("scale", function()
      kernel.when(kernel.eq(k.tx, 0), function()
        for s = 0, S - 1 do kernel.mbarrier_init(full, {s}, variant == "inflight" and 2 or 1) end
      end)
      kernel.barrier()
      for kt in kernel.range(4, {name = "kt"}) do
        local s = kt % S
        kernel.when(kernel.eq(k.tx, 0), function()
          if variant ~= "noarrive" then kernel.mbarrier_arrive(full, {s}, {tx = 16384}) end
          plan = kernel.tma(As:tile({s, 0, 0}, {1, 128, 64}), A:tile({k.bx * 128, kt * 64}, {128, 64}), full, {s})
        end)
        if variant ~= "nowait" and variant ~= "inflight" then kernel.mbarrier_wait(full, {s}, kt // S % 2) end
        for c in kernel.range(64) do
          B[{k.bx * 128 + k.tx, kt * 64 + c}] = As[{s, k.tx, c}] * 2
        end
        kernel.barrier()
      end
    end)
    return k, plan
  end
  local a = tensor.rand({256, 256}, {seed = 3}):cast("float16")
  local want = a:tolist()
  local k, plan = mk1("ok")
  eq(plan.swizzle, 128); eq(plan.boxes, 1); eq(plan.bytes, 16384); eq(plan.box[1], 64); eq(plan.box[2], 128)
  local txt = tostring(k)
  assert(txt:find("tma.box{64,128}.sw128(As[kt%2, 0, 0], A[bx*128, kt*64], full[kt%2])", 1, true), txt)
  assert(txt:find("mbarrier_arrive(full[kt%2], tx=16384)", 1, true), txt)
  for _, opts in ipairs{{checks = true}, {checks = false}} do
    local got = k:run({A = a}, opts):tolist()
    for i = 1, 256 do for j = 1, 256 do eq(got[i][j], 2 * want[i][j]) end end
  end
  local c = k:counts{A = a}
  eq(c.tmas, 8); eq(c.tma_bytes, 131072)
  assert(k:check())
  raises(function() mk1("nowait"):run{A = a} end, "which a TMA landed at completion 1 of mbarrier full[0], and this thread has not waited on it")
  raises(function() mk1("inflight"):run{A = a} end, "while its TMA is in flight (issued by thread (0,0,0)); wait on the mbarrier first")
  raises(function() mk1("noarrive"):run{A = a} end, "mbarrier: deadlock: stage scale, block (0,0,0): thread (0,0,0) waits on full[0] for parity 0, and its phase 0 (parity 0) never completes: 1 of 1 arrivals pending, -16384 tx bytes outstanding")
  -- CUDA: the tensor map parameter, the PTX, 1024-byte alignment
  local cu = k:source("cuda")
  for _, s in ipairs{"const __grid_constant__ CUtensorMap tessel_tmap0", "__shared__ __align__(1024) __half As[16384]",
                     "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                     "mbarrier.try_wait.parity.shared::cta.b64", "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16384;",
                     "CU_TENSOR_MAP_SWIZZLE_128B", "cudaGetDriverEntryPoint"} do
    assert(cu:find(s, 1, true), s)
  end

  -- (2) producer/consumer: the producer waits empty[s] (parity starting 1), consumers wait full[s],
  -- read, arrive on empty[s]; "early": consumers release the slot before reading it (a WAR race)
  local function mk2(variant)
    local k = kernel.new{grid = {2}, block = {160}}
    local A = k:input("A", "float16", {256, 256})
    local B = k:output("B", "float16", {256, 256})
    local As = k:shared("As", "float16", {S, 128, 64}, "Sw<3,3,3> o 0 o (2,128,64):(8192,64,1)")
    local full, empty = k:shared("full", "uint64", {S}), k:shared("empty", "uint64", {S})
    k:stage("pc", function()
      kernel.when(kernel.eq(k.tx, 0), function()
        for s = 0, S - 1 do kernel.mbarrier_init(full, {s}, 1); kernel.mbarrier_init(empty, {s}, 128) end
      end)
      kernel.barrier()
      kernel.when(kernel.eq(k.tx, 0), function()
        for kt in kernel.range(4, {name = "kt"}) do
          local s = kt % S
          kernel.mbarrier_wait(empty, {s}, (kt // S + 1) % 2)
          kernel.mbarrier_arrive(full, {s}, {tx = 16384})
          kernel.tma(As:tile({s, 0, 0}, {1, 128, 64}), A:tile({k.bx * 128, kt * 64}, {128, 64}), full, {s})
        end
      end)
      kernel.when(kernel.ge(k.tx, 32), function()
        for kt in kernel.range(4, {name = "kt"}) do
          local s = kt % S
          kernel.mbarrier_wait(full, {s}, kt // S % 2)
          if variant == "early" then kernel.mbarrier_arrive(empty, {s}) end
          for c in kernel.range(64) do
            B[{k.bx * 128 + k.tx - 32, kt * 64 + c}] = As[{s, k.tx - 32, c}] * 2
          end
          if variant ~= "early" then kernel.mbarrier_arrive(empty, {s}) end
        end
      end)
    end)
    return k
  end
  local got = mk2("ok"):run({A = a}):tolist()
  for i = 1, 256 do for j = 1, 256 do eq(got[i][j], 2 * want[i][j]) end end
  raises(function() mk2("early"):run{A = a} end, "a TMA writes As at offset 0 while thread (32,0,0) read it in this phase, and no mbarrier orders them")

  -- several boxes: a 64 x 256 tile through a hierarchical (64,4) mode: 4 boxes of {64, 64}
  local k3 = kernel.new{block = {128}}
  local Bg = k3:input("B", "float16", {256, 512})
  local O = k3:output("O", "float16", {64, 256})
  local Bs = k3:shared("Bs", "float16", {2, 64, 256}, "Sw<3,3,3> o 0 o (2,64,(64,4)):(16384,64,(1,4096))")
  local bar = k3:shared("bar", "uint64", {2})
  local p3
  k3:stage("b", function()
    kernel.when(kernel.eq(k3.tx, 0), function() kernel.mbarrier_init(bar, {1}, 1) end)
    kernel.barrier()
    kernel.when(kernel.eq(k3.tx, 0), function()
      kernel.mbarrier_arrive(bar, {1}, {tx = 32768})
      p3 = kernel.tma(Bs:tile({1, 0, 0}, {1, 64, 256}), Bg:tile({64, 256}, {64, 256}), bar, {1})
    end)
    kernel.mbarrier_wait(bar, {1}, 0)
    for c in kernel.range(128) do O[{k3.tx // 2, k3.tx % 2 * 128 + c}] = Bs[{1, k3.tx // 2, k3.tx % 2 * 128 + c}] end
  end)
  eq(p3.swizzle, 128); eq(p3.boxes, 4); eq(p3.box[1], 64); eq(p3.box[2], 64); eq(p3.bytes, 32768)
  txt = tostring(k3)
  for j = 0, 3 do
    assert(txt:find(string.format("tma.box{64,64}.sw128(Bs[1, 0, %d], B[64, %d], bar[1])", j * 64, 256 + j * 64), 1, true), txt)
  end
  local bt = tensor.rand({256, 512}, {seed = 5}):cast("float16")
  local g3, w3 = k3:run{B = bt}:tolist(), bt:tolist()
  for i = 1, 64 do for j = 1, 256 do eq(g3[i][j], w3[64 + i][256 + j]) end end

  -- no swizzle for a row-major tile; padding refused with the element; a barrier of the wrong dtype
  local function one(lay, dt)
    local k4 = kernel.new{block = {32}}
    local X = k4:input("X", "float32", {64, 64})
    local T = k4:shared("T", "float32", {32, 64}, lay)
    local br = k4:shared("br", dt or "uint64", {1})
    local p
    k4:stage("s", function() p = kernel.tma(T, X:tile({0, 0}, {32, 64}), br, {0}) end)
    return p, k4
  end
  local p4, k4 = one("(32,64):(64,1)")
  for _, d in ipairs{"c", "opencl"} do
    raises(function() k4:source(d) end, d .. ": stage s: a tma_load; mbarriers and bulk tensor copies (TMA) are sm_90's")
  end
  raises(function() k4:source("triton") end, "mbarriers and TMA are one thread's view")
  eq(p4.swizzle, 0); eq(p4.boxes, 1); eq(p4.box[1], 64); eq(p4.box[2], 32)
  raises(function() one("(32,64):(72,1)") end, "without swizzle: element (1,0) is at byte 288, TMA writes it at byte 256 (TMA writes a box densely")
  -- a global with leading unit dimensions (attention's {B, H, S, D} at B = 1): a unit
  -- dimension's stride is the span inside it, whichever dimension it is
  do
    local k6 = kernel.new{block = {128}}
    local X = k6:input("X", "float16", {1, 1, 128, 64})
    local O6 = k6:output("O", "float16", {64, 64})
    local T = k6:shared("T", "float16", {64, 64}, "Sw<3,3,3> o 0 o (64,64):(64,1)")
    local br = k6:shared("br", "uint64", {1})
    local p6
    k6:stage("s", function()
      kernel.when(kernel.eq(k6.tx, 0), function() kernel.mbarrier_init(br, {0}, 1) end)
      kernel.barrier()
      kernel.when(kernel.eq(k6.tx, 0), function()
        kernel.mbarrier_arrive(br, {0}, {tx = 8192})
        p6 = kernel.tma(T, X:tile({0, 0, 64, 0}, {1, 1, 64, 64}), br, {0})
      end)
      kernel.mbarrier_wait(br, {0}, 0)
      for i in kernel.range(32) do O6[{k6.tx // 2, k6.tx % 2 * 32 + i}] = T[{k6.tx // 2, k6.tx % 2 * 32 + i}] end
    end)
    eq(p6.swizzle, 128); eq(p6.boxes, 1)
    local x6 = tensor.rand({1, 1, 128, 64}, {seed = 9}):cast("float16")
    local g6, w6 = k6:run{X = x6}:tolist(), x6:tolist()
    for i = 1, 64 do for j = 1, 64 do eq(g6[i][j], w6[1][1][64 + i][j]) end end
  end
  raises(function() one("(32,64):(64,1)", "uint32") end, "an mbarrier is an element of a shared uint64 buffer")
  raises(function()
    local k5 = kernel.new{block = {32}}
    local br = k5:shared("br", "uint64", {1})
    k5:stage("s", function() kernel.mbarrier_wait(br, {0}, k5.tx) end)
  end, "the parity must be an index expression in [0, 1]")
end)

check("atomics and fences: a histogram, the last block's sum, races without a fence, refusals, CUDA", function()
  -- a histogram of 256 values in 8 bins from 4 blocks of 64 threads
  local k = kernel.new{grid = {4}, block = {64}}
  local X = k:input("X", "int32", {256})
  local Hh = k:output("Hh", "int32", {8})
  local T = k:buffer("T", "int32", {8}, {scope = "global", role = "temp"})
  k:stage("hist", function() kernel.atomic("add", T, {X[k.bx * 64 + k.tx] % 8}, 1) end)
  k:stage("out", function()
    kernel.when(kernel.eq(k.bx, 0), function()
      kernel.when(kernel.lt(k.tx, 8), function() Hh[k.tx] = T[k.tx] end)
    end)
  end)
  local xs, want = {}, {0, 0, 0, 0, 0, 0, 0, 0}
  for i = 1, 256 do xs[i] = (i * 7) % 13; want[xs[i] % 8 + 1] = want[xs[i] % 8 + 1] + 1 end
  near(k:run{X = tensor.from(xs, "int32")}:tolist(), want, 0)
  eq(k:counts{X = tensor.from(xs, "int32")}.atomics, 256)
  assert(tostring(k):find("atomic_add(T[X[bx*64 + tx] % 8], 1)", 1, true), tostring(k))
  -- the last of 4 blocks sums their partials; fence1/fence2 false: the race is reported
  local function last(fence1, fence2)
    local k2 = kernel.new{grid = {4}, block = {32}}
    local X2 = k2:input("X", "float32", {128})
    local O = k2:output("O", "float32", {1})
    local P = k2:buffer("P", "float32", {4}, {scope = "global", role = "temp"})
    local C = k2:buffer("C", "int32", {1}, {scope = "global", role = "temp"})
    local F = k2:shared("F", "int32", {1})
    local old = k2:register("old", "int32", {1})
    local acc = k2:register("acc", "float32", {1})
    k2:stage("sum", function()
      kernel.when(kernel.eq(k2.tx, 0), function()
        acc[0] = 0
        for i in kernel.range(32, "i") do acc[0] = acc[0] + X2[k2.bx * 32 + i] end
        P[k2.bx] = acc[0]
      end)
      kernel.barrier()
      kernel.when(kernel.eq(k2.tx, 0), function()
        if fence1 then kernel.fence() end
        kernel.atomic("add", C, {0}, 1, old, {0})
        if fence2 then kernel.fence() end
        F[0] = old[0]
      end)
      kernel.barrier()
      kernel.when(kernel.eq(F[0], 3), function()
        kernel.when(kernel.eq(k2.tx, 0), function()
          acc[0] = 0
          for j in kernel.range(4, "j") do acc[0] = acc[0] + P[j] end
          O[0] = acc[0]
          kernel.atomic("exch", C, {0}, 0)
        end)
      end)
    end)
    return k2
  end
  local x = tensor.arange(128):cast("float32")
  near(last(true, true):run{X = x}:tolist(), {127 * 128 / 2}, 0)
  local src = last(true, true):source("cuda")
  assert(src:find("__threadfence();\n    old[0] = atomicAdd(&C[0], 1);", 1, true), src)
  raises(function() last(false, true):run{X = x} end, "race:")
  raises(function() last(true, false):run{X = x} end, "no fence and atomic order the two")
  raises(function()
    local k3 = kernel.new{block = {32}}
    local G = k3:buffer("G", "float32", {1}, {scope = "global", role = "temp"})
    k3:stage("s", function() kernel.atomic("max", G, {0}, 1.5) end)
  end, "a float max has no native atomic")
  raises(function() kernel.atomic("or", nil, {0}, 1) end, "")
  raises(function()
    local k4 = kernel.new{block = {32}}
    local G = k4:buffer("G", "int32", {1}, {scope = "global", role = "temp"})
    k4:stage("s", function() kernel.atomic("nand", G, {0}, 1) end)
  end, "unknown op nand")
  raises(function()
    local k5 = kernel.new{block = {32}}
    k5:stage("s", function() kernel.fence("system") end)
  end, "scope system (gpu or block)")
end)

check("layouts: options on every buffer call, one-to-one where the kernel writes, named keys refused", function()
  local k = kernel.new{grid = {1}, block = {4}}
  local X = k:input("X", "float32", {4, 4}, {layout = "(4,4):(0,1)"})       -- a broadcast read
  local Y = k:output("Y", "float32", {4, 4}, {layout = "(4,4):(1,4)"})
  local S = k:shared("S", "float32", {4, 8}, {layout = "Sw<1,0,3> o 0 o (4,8):(8,1)"})
  eq(tostring(k):match("# outputs: ([^\n]*)"), "Y: float32[4, 4] @ (4,4):(1,4)", "the output's layout")
  k:stage("s", function()
    for i in kernel.range(4) do S[{k.tx, i}] = X[{k.tx, i}] end
    for i in kernel.range(4) do Y[{k.tx, i}] = S[{k.tx, i}] * 2 end
  end)
  local x = tensor.arange(4):cast("float32"):reshape{1, 4}:expand{4, 4}:realize()
  local got = k:run{X = x}:tolist()
  for i = 1, 4 do for j = 1, 4 do eq(got[i][j], 2.0 * (j - 1), "Y[" .. i .. "][" .. j .. "]") end end
  -- a broadcast input takes a binding whose rows agree
  raises(function() k:run{X = tensor.arange(16):cast("float32"):reshape{4, 4}} end,
    "kernel.run: input X: X[0, 0] and X[1, 0] share offset 0 of its layout ((4,4):(0,1))")
  -- an output or a temporary whose elements share storage would lose stores silently
  raises(function() k:set_layout("Y", "(4,4):(1,0)") end,
    "set_layout: Y: 16 elements in a storage of 4", "only an input may repeat offsets")
  raises(function() k:set_layout("S", "(4,8):(8,2)") end,
    "elements (0, 4) and (1, 0) both map to offset 8", "must be one-to-one")
  raises(function() k:set_layout("S", "Sw<1,0,1> o 0 o (4,8):(8,2)") end, "both map to offset")
  eq(tostring(k):match("# buffers: ([^\n]*)"), "S: float32[4, 8] shared @ Sw<1,0,3> o 0 o (4,8):(8,1)", "S kept")
  -- options where a layout goes take layout = only; a misspelt key is no layout
  raises(function() k:output("Z", "float32", {4}, {layout = "4:1", scope = "shared"}) end,
    "k:output: Z: the options take only layout =")
  raises(function() k:output("Z", "float32", {4}, {layuot = "4:1"}) end,
    "a tuple is a list of integers, and this table has the key \"layuot\"")
  raises(function() k:register("Z", "float32", {4, n = 4}) end,
    "k:register: the shape: a list takes the keys 1 to #t only, this one has the key \"n\"")
  raises(function() cute.layout({4, 2, stride = {1, 4}}) end, "has the key \"stride\"")
  raises(function() cute.logical_divide("8:1", {2, [0] = 4}) end, "a tiler is a list", "has the key 0")
  raises(function() tensor.zeros{2, 3, dtype = "int32"} end, "has the key \"dtype\"")
  raises(function() axe.dtensor({64, 128, x = 1}, {{"gpuid", 2}}, {"S(1)"}) end, "has the key \"x\"")
  raises(function() lego.RegP({4, 4, foo = 2}, {1, 2}) end, "has the key \"foo\"")
  raises(function() tensor.ones{4}:pad{{1, 1}, extra = 1} end, "pad: a list", "has the key \"extra\"")
  eq(cute.layout({4, 2}), "(4,2):(1,4)", "a plain list still reads")
end)

finish()

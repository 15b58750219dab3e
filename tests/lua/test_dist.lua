-- test_dist.lua - distributed programs from Lua: tensors with Axe layouts over gpuid, launches, every
-- redistribution's collective and its simulation against the tensor program, the plan, the export
-- (and, where nvcc and NCCL are, that it compiles and links), bad arguments.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local function layout(shape, n, p) return axe.dtensor(shape, {{"gpuid", n}}, {p}) end

-- C = A B with one thread an output (float32), 8x8 threads a block
local function gemm(M, N, K, names)
  local k = kernel.new{grid = {M // 8, N // 8}, block = {8, 8}}
  local A = k:input(names[1], "float32", {M, K})
  local B = k:input(names[2], "float32", {K, N})
  local C = k:output(names[3], "float32", {M, N})
  local acc = k:register("acc", "float32", {1})
  k:stage(names[3], function()
    local i, j = k.bx * 8 + k.ty, k.by * 8 + k.tx
    acc[0] = 0
    for kk in kernel.range(K, {name = "kk", type = "reduce"}) do acc[0] = acc[0] + A[{i, kk}] * B[{kk, j}] end
    C[{i, j}] = acc[0]
  end)
  return k
end

local function maxdiff(a, b)
  local x, y, d = a:tolist(), b:tolist(), 0
  for i = 1, #x do
    if type(x[i]) == "table" then
      for j = 1, #x[i] do d = math.max(d, math.abs(x[i][j] - y[i][j])) end
    else
      d = math.max(d, math.abs(x[i] - y[i]))
    end
  end
  return d
end

-- the Section 4.2 program on n devices
local function gemm_rs(n, M, N, K, out)
  local P = dist.new{devices = n}
  P:tensor("A", "float32", {M, K}, layout({M, K}, n, "S(1)"))
  P:tensor("B", "float32", {K, N}, layout({K, N}, n, "S(0)"))
  P:tensor("Cp", "float32", {M, N}, layout({M, N}, n, "R"), {partial = true})
  P:tensor("C", "float32", {M, N}, layout({M, N}, n, out))
  P:launch(gemm(M, N, K // n, {"A", "B", "C"}), {C = "Cp"})
  P:redistribute("Cp", "C")
  return P
end

check("GEMM sharded on K + reduce_scatter equals A @ B on 2 and 4 devices, rows or columns", function()
  local A, B = tensor.rand({16, 32}, {seed = 1}) - 0.5, tensor.rand({32, 16}, {seed = 2}) - 0.5
  local want = A:matmul(B)
  for _, n in ipairs{2, 4} do
    for _, out in ipairs{"S(0)", "S(1)", "R"} do
      local P = gemm_rs(n, 16, 16, 32, out)
      local got = P:simulate{A = A, B = B}
      assert(maxdiff(got.C, want) < 1e-5, n .. " devices, " .. out)
      assert(maxdiff(got.Cp, want) < 1e-5, "the partial sums add up to A @ B")
      local step = P:step(2)
      eq(step.kind, out == "R" and "allreduce" or "reduce_scatter", "collective")
      eq(#step.pack, out == "S(1)" and n or 0, "pack kernels (columns leave NCCL's rank order)")
    end
  end
end)

check("simulate without inputs draws them, as exports do", function()
  local P = dist.new(2)
  P:tensor("x", "float32", {8, 8}, layout({8, 8}, 2, "S(1)"))
  P:tensor("y", "float32", {8, 8}, layout({8, 8}, 2, "R"))
  P:allgather("x", "y")
  local r = P:simulate()
  assert(maxdiff(r.x, r.y) == 0 and r.y:tolist()[1][2] > 0)
end)

check("the plan names the collective, the bytes and the local shapes", function()
  local s = tostring(gemm_rs(2, 16, 16, 32, "S(0)"))
  assert(s:find("A          float32(16,32) sharded on dim 1, local (16,16) (256 a device), input", 1, true), s)
  assert(s:find("2. Cp -> C: reduce_scatter, 1.00 KiB in a device", 1, true), s)
  assert(s:find("1. launch C (1 stage) on every device: A, B -> C=Cp", 1, true), s)
  eq(#gemm_rs(2, 16, 16, 32, "S(0)"), 2, "#P counts the steps")
end)

check("allgather, broadcast, reduce and local slices keep the value", function()
  local X = tensor.rand({8, 16}, {seed = 3})
  local cases = {
    {"S(1)", "R", "allgather"}, {"S(0)", "R", "allgather"}, {"R", "S(1)", "none"},
    {"S(0)", "S(1)", "allgather"},
  }
  for _, c in ipairs(cases) do
    local P = dist.new(2)
    P:tensor("X", "float32", {8, 16}, layout({8, 16}, 2, c[1]))
    P:tensor("Y", "float32", {8, 16}, layout({8, 16}, 2, c[2]))
    P:redistribute("X", "Y")
    eq(P:step(1).kind, c[3], c[1] .. " -> " .. c[2])
    assert(maxdiff(P:simulate{X = X}.Y, X) == 0, c[1] .. " -> " .. c[2])
  end
  local P = dist.new(2)
  P:tensor("X", "float32", {8, 16}, "S[(8,16):(16,1)] + 1@gpuid")
  P:tensor("Y", "float32", {8, 16}, layout({8, 16}, 2, "R"))
  P:redistribute("X", "Y")
  eq(P:step(1).kind, "broadcast", "one device to all")
  assert(maxdiff(P:simulate{X = X}.Y, X) == 0)
end)

check("a tensor-parallel MLP: column then row sharding, one allreduce", function()
  local M, D, H = 8, 16, 32
  local P = dist.new(2)
  P:tensor("X", "float32", {M, D}, layout({M, D}, 2, "R"))
  P:tensor("W1", "float32", {D, H}, layout({D, H}, 2, "S(1)"))
  P:tensor("W2", "float32", {H, D}, layout({H, D}, 2, "S(0)"))
  P:tensor("Hs", "float32", {M, H}, layout({M, H}, 2, "S(1)"))
  P:tensor("Yp", "float32", {M, D}, layout({M, D}, 2, "R"), {partial = true})
  P:tensor("Y", "float32", {M, D}, layout({M, D}, 2, "R"))
  P:launch(gemm(M, H // 2, D, {"X", "W1", "Hs"}))
  P:launch(gemm(M, D, H // 2, {"Hs", "W2", "Y"}), {Y = "Yp"})
  P:redistribute("Yp", "Y")
  local X, W1, W2 = tensor.rand({M, D}, {seed = 4}), tensor.rand({D, H}, {seed = 5}), tensor.rand({H, D}, {seed = 6})
  assert(maxdiff(P:simulate{X = X, W1 = W1, W2 = W2}.Y, X:matmul(W1):matmul(W2)) < 1e-4)
end)

-- device r's storage of X (s elements) copied into the partial tensor Xp: device r's summand is
-- the spec's shard r
local function shard_to_partial(P, s)
  local k = kernel.new{grid = {1}, block = {s}}
  local X = k:input("X", "float32", {s})
  local Y = k:output("Xp", "float32", {s})
  k:stage("Xp", function() Y[{k.tx}] = X[{k.tx}] end)
  return P:launch(k)
end

check("the spec's collectives (tensor.reduce_scatter, allreduce, allgather) agree with dist's", function()
  for _, n in ipairs{2, 4} do
    local s = 8
    local D = {}
    for i = 1, n do D[i] = "CPU:" .. (i - 1) end
    local T = tensor.scatter(tensor.rand({n * s}, {seed = 7}) - 0.5, D)   -- device r holds shard r
    local function program(verb, out)
      local P = dist.new(n)
      P:tensor("X", "float32", {n * s}, layout({n * s}, n, "S(0)"))
      P:tensor("Xp", "float32", {s}, layout({s}, n, "R"), {partial = true})
      P:tensor("Y", "float32", {verb == "allgather" and n * s or s}, out)
      if verb == "allgather" then
        P[verb](P, "X", "Y")
      else
        shard_to_partial(P, s)
        P[verb](P, "Xp", "Y")
      end
      return P:simulate{X = T:copy("CPU")}.Y
    end
    local rs = program("reduce_scatter", layout({s}, n, "S(0)"))
    assert(maxdiff(rs, tensor.reduce_scatter(T):copy("CPU")) < 1e-6, n .. " devices: reduce_scatter")
    local ar = program("allreduce", layout({s}, n, "R"))
    assert(maxdiff(ar, tensor.allreduce(T):copy("CPU")) < 1e-6, n .. " devices: allreduce")
    local ag = program("allgather", layout({n * s}, n, "R"))
    assert(maxdiff(ag, tensor.allgather(T):copy("CPU")) < 1e-6, n .. " devices: allgather")
  end
end)

check("refusals name the operation, the tensors and the reason", function()
  local P = dist.new(2)
  raises(function() P:tensor("x", "float32", {8, 16}, "S[(8,16):(16,1@lane)]") end,
         "dist.tensor x: S[(8,16):(16,1@lane)] places elements on lane")
  raises(function() P:tensor("x", "float32", {8, 16}, "S[(8,2,8):(16,1@gpuid,1)]") end, "not dense")
  raises(function() P:tensor("x", "float32", {8, 16}, layout({8, 16}, 2, "S(0)"), {partial = true}) end,
         "a partial tensor", "replicates")
  P:tensor("S", "float32", {8, 16}, layout({8, 16}, 2, "S(0)"))
  P:tensor("one", "float32", {8, 16}, "S[(8,16):(16,1)] + 1@gpuid")
  raises(function() P:tensor("S", "float32", {8, 16}, layout({8, 16}, 2, "R")) end, "S is taken")
  raises(function() P:redistribute("S", "one") end, "redistribute S -> one", "NCCL does not have")
  raises(function() P:redistribute("S", "nope") end, "no tensor nope")
  raises(function() P:launch(gemm(8, 8, 8, {"q", "r", "x"})) end, "kernel buffer q (input) is bound to no tensor")
  raises(function() P:launch(gemm(8, 8, 8, {"S", "one", "x"}), {S = "S", y = "one"}) end, "the kernel has no buffer y")
  raises(function() P:launch(gemm(8, 8, 8, {"S", "one", "x"}), {x = "one"}) end,
         "kernel buffer one holds 64 float32; tensor one stores 128 float32 on each device (local shape (8,16))")
  P:tensor("Q", "float32", {8, 8}, layout({8, 8}, 2, "R"))
  raises(function() P:launch(gemm(8, 8, 8, {"Q", "Q2", "Qo"}), {Q2 = "Q", Qo = "Q"}) end,
         "kernel buffers Q and Qo are both bound to Q; one of them writes it")
  P:tensor("R2", "float32", {8, 16}, layout({8, 16}, 2, "R"))
  raises(function() P:allreduce("S", "R2") end,
         "allreduce: S -> R2 is allgather by their layouts, not allreduce: each device holds a shard")
  raises(function() dist.new(0) end, "dist.new: 0 devices")
  raises(function() dist.new(2, "lane") end, "lane is not a device axis")
  raises(function() P:step(9) end, "no step 9")
end)

-- rows of an (M, X) tensor stored (parts, devices, rows): part j of every device's rows is contiguous,
-- in the rank-major order of the collectives; cols: X sharded on the devices (else replicated)
local function parted(n, M, X, c, cols)
  local rr = M // (n * c)
  if cols then
    local xl = X // n
    return string.format("S[(%d,%d,%d,%d,%d):(%d,%d,%d,1@gpuid,1)]", n, c, rr, n, xl, rr * xl, n * rr * xl, xl)
  end
  return string.format("S[(%d,%d,%d,%d):(%d,%d,%d,1)] + R[%d:1@gpuid]", n, c, rr, X, rr * X, n * rr * X, X, n)
end

-- GEMM + reduce_scatter in c parts (launch j writes rows j of every device's block of Cp, then part j
-- of the collective), and AllGather + GEMM in c parts (part j of A gathered, then its rows multiplied)
local function gemm_rs_parts(n, M, N, K, c, via)
  local P = dist.new(n)
  P:tensor("A", "float32", {M, K}, parted(n, M, K, c, true))
  P:tensor("B", "float32", {K, N}, layout({K, N}, n, "S(0)"))
  P:tensor("Cp", "float32", {M, N}, parted(n, M, N, c, false), {partial = true})
  P:tensor("C", "float32", {M, N}, layout({M, N}, n, "S(0)"))
  local g = gemm(M // c, N, K // n, {"A", "B", "C"})
  for j = 0, c - 1 do
    P:launch(g, {A = {"A", at = j * (M // c) * (K // n)}, C = {"Cp", at = j * (M // c) * N}})
    P:redistribute("Cp", "C", {part = j + 1, parts = c, via = via})
  end
  return P
end

local function ag_gemm_parts(n, M, N, K, c, via)
  local P = dist.new(n)
  P:tensor("A", "float32", {M, K}, layout({M, K}, n, "S(0)"))
  P:tensor("Af", "float32", {M, K}, parted(n, M, K, c, false))
  P:tensor("B", "float32", {K, N}, layout({K, N}, n, "S(1)"))
  P:tensor("C", "float32", {M, N}, parted(n, M, N, c, true))
  for j = 1, c do P:redistribute("A", "Af", {part = j, parts = c, via = via}) end
  local g = gemm(M // c, N // n, K, {"Af", "B", "C"})
  for j = 0, c - 1 do
    P:launch(g, {Af = {"Af", at = j * (M // c) * K}, C = {"C", at = j * (M // c) * (N // n)}})
  end
  return P
end

check("overlap: GEMM + reduce_scatter and AllGather + GEMM in parts, through NCCL, the copy engines or loads", function()
  for _, n in ipairs{2, 4} do
    for _, c in ipairs{1, 2, 4} do
      local M, N, K = 8 * n * c, 8 * n, 8 * n
      local A, B = tensor.rand({M, K}, {seed = n + c}) - 0.5, tensor.rand({K, N}, {seed = 7}) - 0.5
      local want = A:matmul(B)
      for _, via in ipairs{"nccl", "copy", "load"} do
        local what = string.format("%d devices, %d parts, via %s", n, c, via)
        local P = gemm_rs_parts(n, M, N, K, c, via)
        assert(maxdiff(P:simulate{A = A, B = B}.C, want) < 1e-5, "GEMM + reduce_scatter, " .. what)
        for j = 1, c do
          local l, r = P:step(2 * j - 1), P:step(2 * j)
          eq(l.stream, "kernels", what)
          eq(#l.after, 0, what .. ": a launch waits for nothing")
          eq(r.stream, "collectives", what)
          eq(r.via, via, what)
          eq(r.part, j, what)
          eq(r.parts, c, what)
          eq(#r.after, 1, what)
          eq(r.after[1], 2 * j - 1, what .. ": part j waits for launch j alone")
        end
        local Q = ag_gemm_parts(n, M, N, K, c, via)
        assert(maxdiff(Q:simulate{A = A, B = B}.C, want) < 1e-5, "AllGather + GEMM, " .. what)
        eq(Q:step(c + 1).after[1], 1, what .. ": the first GEMM waits for the first part")
      end
    end
  end
  -- every launch first, then every part: the same values; a part before its launch is refused
  local P = gemm_rs_parts(2, 32, 16, 16, 2, "copy")
  local A, B = tensor.rand({32, 16}, {seed = 3}), tensor.rand({16, 16}, {seed = 4})
  assert(maxdiff(P:simulate({A = A, B = B}, {order = {1, 3, 2, 4}}).C, A:matmul(B)) < 1e-5)
  raises(function() P:simulate({A = A, B = B}, {order = {2, 1, 3, 4}}) end, "step 2 before step 1, which it waits for")
  local plan = P:plan()
  assert(plan:find("Cp -> C: reduce_scatter part 1 of 2 (Cp[0:256] -> C[0:128]) on the copy engines, 1.00 KiB", 1, true), plan)
  assert(plan:find("the copy engines move each device's rows to their owner", 1, true), plan)
  local L = ag_gemm_parts(2, 32, 16, 16, 2, "load")
  assert(L:plan():find("A -> Af: allgather part 1 of 2 (A[0:128] -> Af[0:256]) by loads from the peers (16 blocks)", 1, true), L:plan())
  -- refusals
  raises(function() P:redistribute("Cp", "C", {via = "nvlink"}) end, "via = \"nvlink\"", "\"copy\" (the copy engines)")
  raises(function() P:redistribute("Cp", "C", {via = "copy", blocks = 8}) end, "blocks (1 to 1024) size the kernel of via = \"load\"")
  local R = dist.new(2)
  R:tensor("x", "float32", {8, 8}, layout({8, 8}, 2, "R"))
  R:tensor("y", "float32", {8, 8}, layout({8, 8}, 2, "R"))
  R:tensor("z", "float32", {8, 8}, layout({8, 8}, 2, "S(1)"))
  raises(function() R:redistribute("x", "y", {via = "copy"}) end,
         "redistribute x -> y: via copy does a reduce_scatter or an allgather; the layouts call for no collective")
  -- columns are not in the rank-major order of an allgather: the counterexample
  raises(function() R:redistribute("z", "y", {via = "load"}) end,
         "allgather z -> y in 1 parts: element (0, 4) is at z[0] on device 1, so NCCL puts it at y[32]")
end)

check("export writes the program, the data and a Makefile; it builds where nvcc and NCCL are", function()
  local dir = os.tmpname()
  os.remove(dir)
  local P = gemm_rs(2, 16, 16, 32, "S(1)")
  local d, files = P:export(dir .. "/nested/prog")
  assert(d, files)
  local names = table.concat(files, " ")
  for _, f in ipairs{"plan.txt", "dist.cu", "main.cu", "Makefile", "step1_C.cu", "step2_pack_C.cu",
                     "A_r0.bin", "ref_C_r1.bin"} do
    assert(names:find(f, 1, true), f .. " missing from " .. names)
  end
  local src = assert(io.open(dir .. "/nested/prog/dist.cu")):read("a")
  assert(src:find("ncclReduceScatter(R->staging, R->t[3], 128, ncclFloat32, ncclSum, R->comm, st)", 1, true))
  -- a process a GPU: the launcher, the torchrun variables and ncclCommInitRank beside the threads' mode
  local main = assert(io.open(dir .. "/nested/prog/main.cu")):read("a")
  for _, s in ipairs{"ncclCommInitRank(&comm, world, id, rank)", "ncclCommInitAll(comms, TESSEL_NDEV, devs)",
                     "static int\nlaunch(int n)", "getenv(\"TESSEL_NCCL_ID\")", "env_int(\"LOCAL_RANK\""} do
    assert(main:find(s, 1, true), s .. " missing from main.cu")
  end
  assert(assert(io.open(dir .. "/nested/prog/Makefile")):read("a"):find("check-procs: dist\n\t./dist launch 2 check", 1, true))
  -- the overlapped programs: parts on the copy engines with a sum kernel, and loads from the peers
  local ok, msg = gemm_rs_parts(2, 32, 16, 16, 2, "copy"):export(dir .. "/copy")
  assert(ok, msg)
  src = assert(io.open(dir .. "/copy/dist.cu")):read("a")
  for _, s in ipairs{"cudaMemcpyPeerAsync", "tessel_peer_copies(R, st, 1,", "tessel_peer_sum<float, double><<<",
                     "static const int tessel_step_stream[] = {0, 1, 0, 1}"} do
    assert(src:find(s, 1, true), s .. " missing from the copy export")
  end
  ok, msg = ag_gemm_parts(2, 32, 16, 16, 2, "load"):export(dir .. "/load")
  assert(ok, msg)
  src = assert(io.open(dir .. "/load/dist.cu")):read("a")
  assert(src:find("tessel_load_gather", 1, true), "tessel_load_gather missing from the load export")
  -- CI's machine has the CUDA toolkit with NCCL (compile and link only: no GPU); where it is
  -- missing the build is skipped and says so
  local nvcc = os.execute("command -v nvcc >/dev/null 2>&1 || test -x /usr/local/cuda/bin/nvcc")
  local nccl = os.execute("test -f /usr/local/cuda/include/nccl.h || test -f /usr/include/nccl.h || "
                          .. "test -f /usr/local/include/nccl.h")
  if nvcc and nccl then
    -- this program and scripts/distributed.lua's three, each compiled and linked against NCCL
    local say = print
    print = function() end   -- the script's plans
    local ok, err = pcall(assert(loadfile("scripts/distributed.lua")), dir .. "/examples")
    print = say
    assert(ok, err)
    for _, d in ipairs{dir .. "/nested/prog", dir .. "/copy", dir .. "/load", dir .. "/examples/gemm_reduce_scatter", dir .. "/examples/mlp_allreduce",
                       dir .. "/examples/allgather"} do
      local ok = os.execute("PATH=$PATH:/usr/local/cuda/bin make -s -C '" .. d .. "' dist >/dev/null 2>&1")
      assert(ok, d .. ": the export does not build with nvcc and NCCL")
    end
  else
    io.write("  (nvcc or nccl.h not here: the NCCL build is not checked)\n")
  end
  os.execute("rm -rf '" .. dir .. "'")
  local nd, msg = gemm_rs(2, 16, 16, 32, "S(0)"):export("/proc/no/such/dir")
  assert(nd == nil and msg:find("cannot make the directory", 1, true), msg)
end)

finish()

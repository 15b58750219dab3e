-- test_backend_gpu.lua - k:source("cuda"/"opencl"), k:run{backend = "opencl"} and k:export from Lua.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local function transpose()
  local k = kernel.new{grid = {2, 2}, block = {32, 32}}
  local A = k:input("A", "float32", {64, 64})
  local B = k:output("B", "float32", {64, 64})
  local tile = k:shared("tile", "float32", {32, 32}, "(32,32):(33,1)")
  k:stage("transpose", function()
    tile[{k.ty, k.tx}] = A[{k.by * 32 + k.ty, k.bx * 32 + k.tx}]
    kernel.barrier()
    B[{k.bx * 32 + k.ty, k.by * 32 + k.tx}] = tile[{k.tx, k.ty}]
  end)
  return k
end

local function has(s, frag)
  if not s:find(frag, 1, true) then error(string.format("%q lacks %q", s, frag), 2) end
end

check("k:source: cuda and opencl, a scheduled kernel too", function()
  local cu = transpose():source("cuda")
  has(cu, "__global__ void __launch_bounds__(1024)\ntranspose(const float *__restrict__ A, float *__restrict__ B)")
  has(cu, "  __shared__ __align__(16) float tile[1055];")
  has(cu, "  __syncthreads();\n")
  has(cu, "transpose<<<dim3(2, 2, 1), dim3(32, 32, 1), 0, tessel_stream>>>")
  local cl = transpose():source("opencl")
  has(cl, "__kernel void __attribute__((reqd_work_group_size(32, 32, 1)))")
  has(cl, "  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n")
  local a, b = tensor.param("a", {64, 64}), tensor.param("b", {64, 64})
  local s = kernel.lower(a:matmul(b), "c"):schedule()
  s:tile("c", "i", "j", 16, 16)
  s:bind("c", "i0", "blockIdx.y"); s:bind("c", "j0", "blockIdx.x")
  s:bind("c", "i1", "threadIdx.y"); s:bind("c", "j1", "threadIdx.x")
  has(s:kernel():source("cuda"), "  const int64_t j1 = threadIdx.x;  /* thread.x */\n")
  raises(function() transpose():source("triton") end, "triton: stage transpose: buffer tile is shared")
  raises(function() transpose():source("fortran") end, "unknown dialect")
end)

check("refusals name the statement", function()
  local k = kernel.new{block = {64}}
  local X = k:input("X", "float32", {64})
  local S = k:output("S", "float32", {2})
  k:stage("rowsum", function()
    kernel.reduce(S:tile({k.tx // 32}, {1}), X:tile({0}, {32}), {scope = "warp"})
  end)
  has(k:source("cuda"), "__shfl_sync(0xffffffffu, ")
  raises(function() k:source("opencl") end, "opencl: stage rowsum: a shuffle")
  raises(function() k:source("c") end, "a shuffle")
end)

check("k:run{backend = \"opencl\"} agrees with the interpreter", function()
  local k = transpose()
  local a = tensor.rand({64, 64}, {seed = 2})
  local st = {}
  local ok, b = pcall(k.run, k, {A = a}, {backend = "opencl", stats = st})
  if not ok then
    -- CI without an OpenCL platform: the message says what is missing
    assert(tostring(b):find("opencl: no OpenCL", 1, true), b)
    print("note: " .. tostring(b))
    return
  end
  eq(b:tolist()[3][7], a:tolist()[7][3], "B[3][7]")
  assert(st.device ~= "" and st.build_s >= 0 and st.run_s >= 0, "stats")
  raises(function() k:run({A = a}, {backend = "opencl", flags = {"-O3"}}) end, "options of backend \"c\"")
  raises(function() k:run({A = a}, {backend = "vulkan"}) end, "unknown backend vulkan")
end)

check("k:export writes the source, the harness, the references and a Makefile", function()
  local dir = os.tmpname()
  os.remove(dir)
  local x = tensor.param("x", {4, 8})
  local k = kernel.lower(x:softmax(1), "out")
  local d, files = k:export("c", dir, {reps = 3})
  eq(d, dir, "dir")
  eq(table.concat(files, " "), "kernel.c main.c Makefile ref_out.bin", "files")
  local f = assert(io.open(dir .. "/ref_out.bin", "rb"))
  eq(#f:read("a"), 4 * 8 * 4, "bytes")
  f:close()
  local mk = assert(io.open(dir .. "/Makefile")):read("a")
  has(mk, "-ffp-contract=off -frounding-math -fwrapv")
  -- an input bound by the caller is saved with the references
  local d2, files2 = transpose():export("cuda", dir, {inputs = {A = tensor.rand({64, 64}, {seed = 1})}})
  eq(table.concat(files2, " "), "kernel.cu main.cu Makefile in_A.bin ref_B.bin", "files")
  for _, n in ipairs{"kernel.c", "main.c", "Makefile", "ref_out.bin", "kernel.cu", "main.cu", "in_A.bin",
                     "ref_B.bin"} do
    os.remove(dir .. "/" .. n)
  end
  os.remove(dir)
  -- an unwritable directory is nil and a message; a refusal raises
  local none, msg = k:export("c", "/dev/null/tessel/x")
  eq(none, nil, "result")
  has(msg, "export: cannot make the directory /dev/null/tessel/x: /dev/null is not a directory")
  raises(function() transpose():export("c", "/nonexistent/tessel/x") end, "c: stage transpose: the barrier")
  raises(function() k:export("fortran", dir) end, "unknown dialect")
end)

check("a block past the target's shared memory: the source and the export name the buffer and the limit", function()
  local x = tensor.param("x", {160, 128})
  local s = kernel.lower(x * 2, "o"):schedule()
  s:cache_read("o", "x", "shared")
  raises(function() s:source("opencl") end,
    "opencl: stage x_shared: 81920 bytes of local buffers, the largest x_shared with 81920; an OpenCL GPU gives a work-group at most 64 KiB")
  local y = tensor.param("y", {512, 512})
  local t = kernel.lower(y * 2, "o"):schedule()
  t:cache_read("o", "y", "shared")
  raises(function() t:source("cuda") end, "the largest y_shared with 1048576; a block's shared memory holds at most 227 KiB")
  -- the interpreter runs it (its blocks have no limit), and the verifier notes it
  local ok, notes = t:kernel():check()
  assert(ok and notes:find("stage y_shared: 1048576 bytes of shared memory a block", 1, true), notes)
end)

finish()

-- test_backend_triton.lua - k:source("triton") and s:source("triton") on lowered, scheduled and hand-written kernels; refusals.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local function has(text, want)
  if not text:find(want, 1, true) then error(string.format("%q is not in:\n%s", want, text), 2) end
end

check("a lowered softmax: program ids from the rows, masked reductions, a launcher", function()
  local src = kernel.lower(tensor.param("x", {4, 6}):softmax(1), "out"):source("triton")
  has(src, "import triton\nimport triton.language as tl\n")
  has(src, "@triton.jit\ndef xmax_kernel(x_ptr, xmax_ptr, BLOCK_J: tl.constexpr):\n")
  has(src, "    i = tl.program_id(0)\n")
  has(src, "tl.max(tl.where(offs_j < 6, tl.load(x_ptr + (i * 6 + offs_j), mask=offs_j < 6, other=0.0), -float(\"inf\")), axis=0)")
  has(src, "    offs_i = tl.program_id(0) * BLOCK_I + tl.arange(0, BLOCK_I)\n")
  has(src, "def tessel_launch(bufs):\n")
  has(src, "    x, xmax, xsum, out = bufs\n")
  has(src, "    xmax_kernel[(4,)](x, xmax, BLOCK_J=8)\n")
end)

check("a scheduled matmul: block-bound loops are program ids, the contraction one tl.dot", function()
  local a, b = tensor.param("a", {64, 64}), tensor.param("b", {64, 64})
  local s = kernel.lower(a:matmul(b), "c"):schedule()
  s:decompose_reduction("c", "k")
  s:tile("c", "i", "j", 16, 16)
  s:bind("c", "i0", "blockIdx.y"); s:bind("c", "j0", "blockIdx.x")
  local src = s:source("triton")
  eq(src, s:kernel():source("triton"), "s:source")
  has(src, "    i0 = tl.program_id(1)\n    j0 = tl.program_id(0)\n")
  -- a [16, 64] tile of a and a [64, 16] tile of b (transposed offsets), in IEEE float32
  has(src, "tl.dot(tl.load(a_ptr + (i0 * 1024 + offs_i1[:, None] * 64 + offs_k[None, :])), "
    .. "tl.load(b_ptr + (j0 * 16 + offs_j1[None, :] + offs_k[:, None] * 64)), input_precision=\"ieee\")")
  has(src, "    c_kernel[(4, 4)](a, b, c, BLOCK_I1=16, BLOCK_K=64, BLOCK_J1=16)\n")
end)

check("a hand-written kernel: block.x is program id 0, names avoid Python's", function()
  local k = kernel.new{grid = {4}}
  local X = k:input("X", "float32", {4, 8})
  local Y = k:output("lambda", "float32", {4, 8})
  k:stage("scale", function()
    for j in kernel.range(8) do
      Y[{k.bx, j}] = X[{k.bx, j}] * 2
    end
  end)
  local src = k:source("triton")
  has(src, "def scale_kernel(X_ptr, lambda_buf_ptr, BLOCK_I: tl.constexpr):\n")
  has(src, "    bx = tl.program_id(0)\n")
  has(src, "    tl.store(lambda_buf_ptr + (bx * 8 + offs_i), tl.load(X_ptr + (bx * 8 + offs_i)) * 2.0)\n")
  has(src, "    X, lambda_buf = bufs\n    scale_kernel[(4,)](X, lambda_buf, BLOCK_I=8)\n")
end)

check("refusals name the stage and the statement", function()
  local k = kernel.new{grid = {2, 2}, block = {32, 32}}
  local A = k:input("A", "float32", {64, 64})
  local B = k:output("B", "float32", {64, 64})
  local tile = k:shared("tile", "float32", {32, 32}, "(32,32):(33,1)")
  k:stage("transpose", function()
    tile[{k.ty, k.tx}] = A[{k.by * 32 + k.ty, k.bx * 32 + k.tx}]
    kernel.barrier()
    B[{k.bx * 32 + k.ty, k.by * 32 + k.tx}] = tile[{k.tx, k.ty}]
  end)
  raises(function() k:source("triton") end, "triton: stage transpose: buffer tile is shared")
  local a, b = tensor.param("a", {64, 64}), tensor.param("b", {64, 64})
  local s = kernel.lower(a:matmul(b), "c"):schedule()
  s:tile("c", "i", "j", 16, 16)
  s:bind("c", "i1", "threadIdx.y")
  raises(function() s:source("triton") end, "triton: stage c: loop i1 is bound to thread.y; a Triton program has no threads")
  raises(function() k:source("pascal") end, "unknown dialect")
end)

check("k:export(\"triton\"): kernel.py, run.py, every input and the interpreter's outputs", function()
  local dir = os.getenv("TMPDIR") or "/tmp"
  dir = dir .. "/tessel-lua-triton-" .. tostring(os.time()) .. tostring(math.random(1000000))
  local k = kernel.lower(tensor.param("x", {4, 6}):softmax(1), "out")
  local d, files = k:export("triton", dir)
  eq(d, dir, "dir")
  eq(table.concat(files, " "), "kernel.py run.py Makefile in_x.bin ref_out.bin", "files")
  local f = assert(io.open(dir .. "/run.py"))
  local run = f:read("a")
  f:close()
  has(run, "triton.testing.do_bench")
  has(run, "(\"out\", \"o\", \"float32\", 24, 24, (0.0001, 1e-05)),")
  for _, name in ipairs(files) do os.remove(dir .. "/" .. name) end
  os.remove(dir)
end)

finish()

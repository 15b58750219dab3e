-- gpu_exports.lua - export the example kernels to CUDA and Triton under a directory, for a GPU run.
--   ./tessel bench/gpu_exports.lua DIR
-- Each DIR/<name> builds and runs with `make` where nvcc and a GPU are: the harness checks
-- every output against the interpreter's saved one and prints the median time.
-- docs/gpu-validation.md lists what ran on the H100 and how.
local dir = arg[1] or "gpu_exports"
os.execute("mkdir -p " .. dir)

local ex = {}

-- softmax over rows, as lowered (three stages, one thread each: a correctness check)
do
  local x = tensor.param("x", {64, 128})
  ex.softmax = kernel.lower(x:softmax(1), "out")
end

-- the tiled matmul of scripts/gemm_schedule.lua: 4x4 blocks of 16x16 threads
do
  local a, b = tensor.param("a", {64, 64}), tensor.param("b", {64, 64})
  local s = kernel.lower(a:matmul(b), "c"):schedule()
  s:tile("c", "i", "j", 16, 16)
  s:bind("c", "i0", "blockIdx.y"); s:bind("c", "j0", "blockIdx.x")
  s:bind("c", "i1", "threadIdx.y"); s:bind("c", "j1", "threadIdx.x")
  ex.matmul_tiled = s:kernel()
end

-- the shared-memory GEMM (cache_read, compute_at): barriers and shared tiles
do
  local a, b = tensor.param("a", {64, 64}), tensor.param("b", {64, 64})
  local s = kernel.lower(a:matmul(b), "out"):schedule()
  s:cache_read("out", "a", "shared")
  s:cache_read("out", "b", "shared")
  s:decompose_reduction("out", "k")
  s:tile("out", "i", "j", 16, 16)
  s:split("out", "k", {nil, 16})
  s:reorder("out", "k0", "i1", "j1")
  s:bind("out", "i0", "blockIdx.y"); s:bind("out", "j0", "blockIdx.x")
  s:bind("out", "i1", "threadIdx.y"); s:bind("out", "j1", "threadIdx.x")
  s:bind("out_init", "i", "blockIdx.x")
  s:compute_at("a_shared", "out", "k0")
  s:compute_at("b_shared", "out", "k0")
  ex.matmul_shared = s:kernel()
end

-- the transpose through a padded shared tile (a barrier)
do
  local k = kernel.new{grid = {2, 2}, block = {32, 32}}
  local A = k:input("A", "float32", {64, 64})
  local B = k:output("B", "float32", {64, 64})
  local tile = k:shared("tile", "float32", {32, 32}, "(32,32):(33,1)")
  k:stage("transpose", function()
    tile[{k.ty, k.tx}] = A[{k.by * 32 + k.ty, k.bx * 32 + k.tx}]
    kernel.barrier()
    B[{k.bx * 32 + k.ty, k.by * 32 + k.tx}] = tile[{k.tx, k.ty}]
  end)
  ex.transpose = k
end

-- a warp reduction by shuffles
do
  local k = kernel.new{block = {64}}
  local X = k:input("X", "float32", {64})
  local S = k:output("S", "float32", {2})
  k:stage("rowsum", function()
    kernel.reduce(S:tile({k.tx // 32}, {1}), X:tile({0}, {32}), {scope = "warp"})
  end)
  ex.warp_reduce = k
end

-- FlashDecoding: split-k update, the slices bound to blocks
do
  local q, kk, v = tensor.param("q", {1, 32}), tensor.param("k", {256, 32}), tensor.param("v", {256, 32})
  local sc = q:matmul(kk:permute(1, 0)) * (1 / math.sqrt(32))
  local s = kernel.lower(sc:softmax(1):matmul(v), "o"):schedule()
  s:split("xmax", "j", {nil, 64})
  s:split_k_update("xsum", "xmax.j0")
  s:split_k_update("o", "xmax_local.j0")
  s:bind("xmax_local", "i", "blockIdx.y")
  s:bind("xmax_local", "j0", "blockIdx.x")
  ex.flash_decoding = s:kernel()
end

-- FlashAttention: rolling update, rows bound to threads
do
  local q, kk, v = tensor.param("q", {64, 32}), tensor.param("k", {64, 32}), tensor.param("v", {64, 32})
  local sc = q:matmul(kk:permute(1, 0)) * (1 / math.sqrt(32))
  local s = kernel.lower(sc:softmax(1):matmul(v), "o"):schedule()
  s:rolling_update("xsum", "xmax.j")
  s:rolling_update("o", "j")
  s:split("xmax", "i", {nil, 32})
  s:bind("xmax", "i0", "blockIdx.x"); s:bind("xmax", "i1", "threadIdx.x")
  ex.flash_attention = s:kernel()
end

-- for Triton, which takes no thread bindings: the matmul with its init decomposed and only the
-- 16x16 tiles of c on the blocks (one 16x16x128 tile statement per program), a lowered transpose
-- with extents that are no powers of two, and a lowered softmax of 4096 rows of 1000
local tx = {}
do
  local a, b = tensor.param("a", {128, 128}), tensor.param("b", {128, 128})
  local s = kernel.lower(a:matmul(b), "c"):schedule()
  s:decompose_reduction("c", "k")
  s:tile("c", "i", "j", 16, 16)
  s:bind("c", "i0", "blockIdx.y"); s:bind("c", "j0", "blockIdx.x")
  tx.matmul_blocks = s:kernel()
  tx.transpose_lowered = kernel.lower(tensor.param("A", {1000, 600}):permute(1, 0), "B")
  tx.softmax_rows = kernel.lower(tensor.param("x", {4096, 1000}):softmax(1), "out")
end

local names = {}
for name in pairs(ex) do names[#names + 1] = name end
table.sort(names)
for _, name in ipairs(names) do
  local ok, err = pcall(function() ex[name]:export("cuda", dir .. "/" .. name, {reps = 20}) end)
  print(string.format("%-16s %s", name, ok and "exported" or ("refused: " .. tostring(err))))
end

-- the same examples as Triton (DIR/triton/<name>: `make` runs run.py on the GPU, `make interpret`
-- under Triton's CPU interpreter); what the Triton backend refuses says why
os.execute("mkdir -p " .. dir .. "/triton")
for _, name in ipairs(names) do
  local ok, err = pcall(function() ex[name]:export("triton", dir .. "/triton/" .. name) end)
  print(string.format("%-16s %s", name, ok and "exported (triton)" or ("triton refused: " .. tostring(err))))
end
for _, name in ipairs({"matmul_blocks", "softmax_rows", "transpose_lowered"}) do
  tx[name]:export("triton", dir .. "/triton/" .. name)
  print(string.format("%-17s exported (triton)", name))
end

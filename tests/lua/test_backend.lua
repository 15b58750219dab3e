-- test_backend.lua - device code from Lua: k:source("c"), s:source, k:run{backend = "c"} against the interpreter, refusals, compiler errors.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

-- every element the same: the C backend promises the interpreter's bits (NaNs aside)
local function same(a, b, path)
  path = path or "value"
  if type(a) == "table" then
    assert(#a == #b, path .. ": length " .. #a .. " ~= " .. #b)
    for i = 1, #a do same(a[i], b[i], path .. "[" .. i .. "]") end
    return
  end
  if not (a == b or (a ~= a and b ~= b)) then
    error(string.format("%s: compiled %.9g, interpreted %.9g", path, a, b), 2)
  end
end

check("k:source: a lowered softmax as C, one function per stage and the entry", function()
  local x = tensor.param("x", {4, 8})
  local src = kernel.lower(x:softmax(1)):source("c")
  assert(src:find("static void\nxmax(const float *restrict x, float *restrict xmax)\n{\n" ..
                  "  for (int64_t i = 0; i < 4; i++) {\n    float acc = -INFINITY;\n", 1, true), src)
  -- a reduction into one element accumulates in a local variable, stored after its loop
  assert(src:find("      acc = tessel_maxf(acc, x[i * 8 + j]);\n    }\n    xmax[i] = acc;\n", 1, true), src)
  assert(src:find("      acc_1 += (float)exp2((x[i * 8 + j] - xmax[i]) * 1.442695f);\n", 1, true), src)
  assert(src:find("void\ntessel_kernel(void **bufs)\n{\n  xmax(bufs[0], bufs[1]);\n" ..
                  "  xsum(bufs[0], bufs[1], bufs[2]);\n  out(bufs[0], bufs[1], bufs[2], bufs[3]);\n}\n", 1, true), src)
  eq(kernel.lower(x:softmax(1)):source(), src, "c is the default dialect")
end)

check("k:source(\"c\", {fast = true}): float32 functions and plain max; k:run{fast = true} within 1e-4", function()
  local x = tensor.param("x", {16, 50})
  local k = kernel.lower(x:softmax(1))
  local src = k:source("c", {fast = true})
  assert(src:find("acc_1 += exp2f((x[i * 50 + j] - xmax[i]) * 1.442695f);", 1, true), src)
  assert(src:find("acc = tessel_fmaxf(acc, x[i * 50 + j]);", 1, true), src)
  assert(src:find("static inline float tessel_fmaxf(float a, float b) { return a > b ? a : b; }", 1, true), src)
  assert(src:find("-O3 -ffast-math", 1, true), src)
  assert(not k:source("c"):find("exp2f", 1, true), "the exact source keeps the interpreter's exp2")
  local xs = tensor.rand({16, 50}, {seed = 11})
  local want = k:run{x = xs}:tolist()
  local got = k:run({x = xs}, {backend = "c", fast = true}):tolist()
  local worst = 0
  for i = 1, 16 do
    local row = 0
    for j = 1, 50 do
      worst = math.max(worst, math.abs(got[i][j] - want[i][j]))
      row = row + got[i][j]
    end
    assert(math.abs(row - 1) < 1e-5, "a row of the fast softmax sums to " .. row)
  end
  assert(worst < 1e-6, "fast softmax within 1e-6 of the interpreter, got " .. worst)
  -- fast is an option of the C JIT alone
  local ok, msg = pcall(function() return k:run({x = xs}, {backend = "opencl", fast = true}) end)
  assert(not ok and msg:find("flags, cc and fast are options of backend \"c\"", 1, true), msg)
end)

check("k:run{backend = \"c\"}: a softmax bit for bit as the interpreter computes it, cached", function()
  local x = tensor.param("x", {16, 50})
  local k = kernel.lower(x:softmax(1))
  local t = tensor.rand({16, 50}, {seed = 3})
  local st = {}
  local c = k:run({x = t}, {backend = "c", stats = st})
  same(c:tolist(), k:run{x = t}:tolist())
  -- and close to the reference evaluator
  local r = x:softmax(1):realize{x = t}:tolist()
  for i, row in ipairs(c:tolist()) do
    for j, v in ipairs(row) do assert(math.abs(v - r[i][j]) < 1e-6, i .. "," .. j) end
  end
  eq(type(st.compile_s), "number", "compile_s")
  assert(st.run_s >= 0 and st.check_s > 0, "times")
  k:run({x = t}, {backend = "c", stats = st})
  eq(st.cached, true, "the second run is cached")
  assert(st.compile_s == 0, "no compile")
  -- compare = false skips the interpreter
  same(k:run({x = t}, {backend = "c", compare = false, stats = st}):tolist(), c:tolist())
  assert(st.check_s == 0, "no check")
  same(k:run({x = t}, {backend = "interp"}):tolist(), c:tolist())
  -- options and bindings in one table
  same(k:run{x = t, backend = "c", stats = st}:tolist(), c:tolist())
  eq(st.cached, true, "k:run{backend = \"c\"}")
end)

check("a scheduled matmul: tiled, parallel, vectorized; s:source and s:run{backend = \"c\"}", function()
  local a, b = tensor.param("a", {64, 48}), tensor.param("b", {48, 32})
  local s = kernel.lower(a:matmul(b), "c"):schedule()
  s:tile("c", "i", "j", 16, 16)
  s:decompose_reduction("c", "k")
  s:reorder("c", "k", "j1")
  s:parallel("c", "i0")
  s:vectorize("c", "j1")
  local src = s:source("c")
  eq(s:kernel():source("c"), src, "s:source is the kernel's")
  assert(src:find("  #pragma omp parallel for\n  for (int64_t i0 = 0; i0 < 4; i0++) {  /* thread */\n", 1, true), src)
  -- the 16 columns as one float32 vector: loaded, updated and stored whole (vector_lanes.c)
  assert(src:find("          for (int64_t j1 = 0; j1 < 16; j1 += 16) {  /* upcast: 16 lanes at once */\n", 1, true), src)
  assert(src:find("            const float s = a[i0 * 768 + i1 * 48 + k];\n", 1, true), src)
  assert(src:find("            __builtin_memcpy(&b_v, &b[j0 * 16 + j1 + k * 32], sizeof b_v);\n", 1, true), src)
  assert(src:find("            const tessel_f32x16 v = c_v + s * b_v;\n", 1, true), src)
  assert(src:find("            __builtin_memcpy(&c[i0 * 512 + i1 * 32 + j0 * 16 + j1], &v, sizeof v);\n", 1, true), src)
  local av, bv = tensor.rand({64, 48}, {seed = 1}), tensor.rand({48, 32}, {seed = 2})
  local c = s:run({a = av, b = bv}, {backend = "c"})
  same(c:tolist(), s:run{a = av, b = bv}:tolist())
  local r = a:matmul(b):realize{a = av, b = bv}:tolist()
  assert(math.abs(c:tolist()[7][9] - r[7][9]) < 1e-4)
end)

check("a hand-written kernel: registers per thread, a column-major output", function()
  local k = kernel.new{grid = {4}, block = {16}}
  local X = k:input("X", "float32", {64, 16})
  local Y = k:output("Y", "float32", {16, 64}, "(16,64):(1,16)")
  local r = k:register("r", "float32", {16})
  k:stage("t", function()
    for j in kernel.range(16) do r[{j}] = X[{k.bx * 16 + k.tx, j}] * 2 end
    for j in kernel.range(16) do Y[{j, k.bx * 16 + k.tx}] = r[{j}] end
  end)
  local src = k:source("c")
  assert(src:find("      float r[16];  /* local, one per thread: row-major */\n", 1, true), src)
  assert(src:find("int\ntessel_take(int b, void *dst, const void *src)\n", 1, true), src)
  local xv = tensor.rand({64, 16}, {seed = 5})
  local y = k:run({X = xv}, {backend = "c"}):tolist()
  local xl = xv:tolist()
  for i = 1, 16 do
    for j = 1, 64 do assert(y[i][j] == xl[j][i] * 2, i .. "," .. j) end
  end
end)

check("refusals: a barrier, float16; unknown dialects and backends", function()
  local tk = kernel.new{grid = {2, 2}, block = {32, 32}}
  local A = tk:input("A", "float32", {64, 64})
  local B = tk:output("B", "float32", {64, 64})
  local tile = tk:shared("tile", "float32", {32, 32}, "(32,32):(33,1)")
  tk:stage("transpose", function()
    tile[{tk.ty, tk.tx}] = A[{tk.by * 32 + tk.ty, tk.bx * 32 + tk.tx}]
    kernel.barrier()
    B[{tk.bx * 32 + tk.ty, tk.by * 32 + tk.tx}] = tile[{tk.tx, tk.ty}]
  end)
  raises(function() tk:source("c") end, "c: stage transpose: the barrier in loops bx, by, tx, ty needs the " ..
         "threads of a block to run together")
  local a = tensor.rand({64, 64}, {seed = 2})
  raises(function() tk:run({A = a}, {backend = "c"}) end, "c: stage transpose: the barrier")
  eq(tk:run{A = a}:tolist()[3][7], a:tolist()[7][3], "the interpreter runs it")
  local h = kernel.new()
  local X = h:input("X", "float16", {4})
  local Y = h:output("Y", "float16", {4})
  h:stage("copy", function() for i in kernel.range(4) do Y[{i}] = X[{i}] end end)
  raises(function() h:source("c") end, "c: buffer X is float16")
  assert(h:source("triton"):find("tl.store(Y_ptr + offs_i, tl.load(X_ptr + offs_i))", 1, true))
  raises(function() h:source("fortran") end, "k:source: unknown dialect \"fortran\"")
  raises(function() tk:run({A = a}, {backend = "gpu"}) end, "k:run: unknown backend gpu")
end)

check("compiler errors: the compiler's message and the emitted line", function()
  local x = tensor.param("x", {2, 3})
  local k = kernel.lower(x:softmax(1))
  local t = tensor.rand({2, 3}, {seed = 1})
  raises(function() k:run({x = t}, {backend = "c", flags = {"-Werror=missing-prototypes"}}) end,
         "jit: cc failed (exit 1): k", ": error: no previous prototype for 'tessel_kernel'",
         "\n  emitted line: tessel_kernel(void **bufs)")
  raises(function() k:run({x = t}, {backend = "c", flags = {"-fno-such-flag"}}) end,
         "unrecognized command-line option '-fno-such-flag'")
  raises(function() k:run({x = t}, {backend = "c", cc = "no-such-cc"}) end,
         "jit: the C compiler no-such-cc is not in PATH")
  raises(function() k:run({x = t}, {backend = "c", flags = "-O3"}) end,
         'k:run: option flags is the string "-O3", not a table')
end)

finish()

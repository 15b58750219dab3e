-- test_ops_backends.lua - every elementwise, reduce and cast op of the tensor language, in every dtype it
-- takes, lowered and run on every backend against the interpreter: C bit for bit, C fast and OpenCL
-- within the dtype's tolerance, CUDA compiled by nvcc (-arch=sm_90, the exact and the fast source),
-- Triton parsed as Python and, where TESSEL_PYTHON names a python with triton (3.1, numpy < 2), run by
-- Triton's CPU interpreter (issue 28: OpenCL's float32 sqrt was spelled sqrtf and did not build).
--
-- The cases come from the language: every method of tensor.methods and every arithmetic metamethod is
-- classified below, so a new op fails the first check until it has cases here. A case is one
-- (op, dtypes) program on inputs in range for the op (positive for log and sqrt), whose first TAME
-- elements are tame (what fast code must get within tolerance) and whose last elements are the dtype's
-- edges: NaN, infinities, -0.0, subnormals, the largest and smallest values (what exact code must get
-- bit for bit).
--
-- Cases are batched to keep the compilers' runs few: the cases of one result dtype that a backend takes
-- are stacked (tensor.stack) into one kernel, one row per case; a row that disagrees is run again
-- alone, so a failure names its case. A backend that refuses a case must do so with a message naming
-- the dtype or the op, from a list of the refusals each backend documents (docs/export.md); any other
-- refusal, any compiler error and any disagreement is a failure. TESSEL_SEED replays other inputs,
-- TESSEL_OPS_VERBOSE=1 prints the counts and the times, TESSEL_OPS_KEEP=1 keeps the generated files,
-- TESSEL_OPS_EXPORT=dir exports the CUDA and Triton batches to run on a GPU.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local seed = tonumber(os.getenv("TESSEL_SEED") or "") or 28
local verbose = os.getenv("TESSEL_OPS_VERBOSE") == "1"
math.randomseed(seed)

local N, TAME, R = 24, 16, 5     -- elements per input, the tame ones first, the reduced extent
local BATCH = 32                 -- cases per stacked kernel

local DTYPES = { "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "bfloat16", "float32", "float64" }
local FLOAT = { float16 = true, bfloat16 = true, float32 = true, float64 = true }
local HALF = { float16 = true, bfloat16 = true }
local BITS = { int8 = 8, int16 = 16, int32 = 32, int64 = 64, uint8 = 8, uint16 = 16, uint32 = 32, uint64 = 64 }
local SIGNED = { int8 = true, int16 = true, int32 = true, int64 = true }

-- ---- the language's ops, classified ----

local UNARY = { "exp", "exp2", "log", "log2", "sin", "cos", "sqrt", "reciprocal", "trunc", "relu", "sigmoid",
                "tanh" }
local POSITIVE = { log = true, log2 = true, sqrt = true, reciprocal = true }
local BINARY = { "maximum", "minimum" }
local CMP = { "lt", "le", "eq", "ne", "gt", "ge" }
local REDUCE = { "sum", "max", "min", "prod", "mean" }
local META = {   -- metamethod -> op name and its Lua form
  __add = { "add", function(a, b) return a + b end }, __sub = { "sub", function(a, b) return a - b end },
  __mul = { "mul", function(a, b) return a * b end }, __div = { "div", function(a, b) return a / b end },
  __idiv = { "idiv", function(a, b) return a // b end }, __mod = { "mod", function(a, b) return a % b end },
  __pow = { "pow", function(a, b) return a ^ b end }, __band = { "band", function(a, b) return a & b end },
  __bor = { "bor", function(a, b) return a | b end }, __bxor = { "bxor", function(a, b) return a ~ b end },
  __shl = { "shl", function(a, b) return a << b end }, __shr = { "shr", function(a, b) return a >> b end },
  __unm = { "neg" },
}
local BITWISE = { band = true, bor = true, bxor = true, shl = true, shr = true }
-- in a fixed order: pairs' order changes from run to run, and with it the inputs drawn
local METANAMES = {}
for name in pairs(META) do METANAMES[#METANAMES + 1] = name end
table.sort(METANAMES)
-- what the methods of tensor.methods are: ops get cases, the rest are not values (views, evaluation)
local CLASS = {}
for _, m in ipairs(UNARY) do CLASS[m] = "unary" end
for _, m in ipairs(BINARY) do CLASS[m] = "binary" end
for _, m in ipairs(CMP) do CLASS[m] = "compare" end
for _, m in ipairs(REDUCE) do CLASS[m] = "reduce" end
CLASS.where, CLASS.cast, CLASS.bitcast = "select", "cast", "bitcast"
for _, m in ipairs({ "cumsum", "softmax", "log_softmax", "matmul" }) do CLASS[m] = "composition" end
-- tinygrad's methods of lua_tensor_ops.c: compositions of the ops above (interp/tensor/tensor_math.c,
-- tensor_shape.c, tensor_nn.c), no op of their own; the rounding and sign ones, which backends often
-- have natively, get cases below, the rest run through the ops that have them
local COMPOSED = { "abs", "sign", "square", "floor", "ceil", "round", "rsqrt", "tan" }
for _, m in ipairs(COMPOSED) do CLASS[m] = "composition" end
for _, m in ipairs({ "add", "sub", "mul", "div", "mod", "fmod", "pow", "neg", "logical_not", "bitwise_not",
                     "bitwise_and", "bitwise_or", "bitwise_xor", "lshift", "rshift", "copysign", "clamp", "clip",
                     "lerp", "masked_fill", "isnan", "isinf", "isfinite", "isclose", "allclose", "log10", "sinh",
                     "cosh", "asinh", "acosh", "atanh", "asin", "acos", "atan", "erf", "logaddexp", "relu6",
                     "hardswish", "hardsigmoid", "hardtanh", "leaky_relu", "elu", "celu", "selu", "softplus", "mish",
                     "logsigmoid", "softsign", "silu", "swish", "quick_gelu", "gelu", "any", "all", "var", "std",
                     "var_mean", "std_mean", "logsumexp", "argmax", "argmin", "softmin", "cumprod", "cummax",
                     "cummin", "logcumsumexp", "sort", "argsort", "topk", "normalize", "layernorm", "batchnorm",
                     "linear", "dot", "scaled_dot_product_attention", "cross_entropy",
                     "sparse_categorical_crossentropy", "nll_loss", "binary_crossentropy",
                     "binary_crossentropy_logits", "float", "half", "double", "bfloat16", "int", "long", "short",
                     "bool", "conv2d", "avg_pool2d", "max_pool2d" }) do
  CLASS[m] = "composition"
end
for _, m in ipairs({ "size", "element_size", "nbytes", "is_floating_point", "zeros_like", "ones_like", "full_like",
                     "squeeze", "unsqueeze", "flatten", "unflatten", "view", "cat", "stack", "split", "chunk",
                     "meshgrid", "tile", "repeat", "repeat_interleave", "roll", "tril", "triu", "diag", "diagonal",
                     "one_hot", "unfold" }) do
  CLASS[m] = "other"   -- sizes, constants, movement and selection by position
end
-- sizes, selection by a mask, constants and random numbers of a tensor's shape, a Lua fold: no op of their own
for _, m in ipairs({ "pad_to", "shrink_to", "rearrange", "masked_select", "nonzero", "clone", "const_like",
                     "rand_like", "randn_like", "sequential" }) do
  CLASS[m] = "other"
end
for _, m in ipairs({ "usum", "uprod" }) do CLASS[m] = "composition" end
for _, m in ipairs({ "qr", "svd", "newton_schulz" }) do CLASS[m] = "composition" end   -- tensor_linalg.c
for _, m in ipairs({ "interpolate", "conv_transpose2d", "max_unpool2d", "scatter_reduce" }) do CLASS[m] = "composition" end   -- tensor_resample.c
for _, m in ipairs({ "reshape", "expand", "permute", "transpose", "flip", "pad", "shrink", "index",
                     "gather", "scatter_add", "contiguous", "detach", "named", "copy", "replicated", "shards",
                     "realize", "tolist", "item", "range", "graph" }) do
  CLASS[m] = "other"   -- movement, one-hot compositions, markers, devices, evaluation: no arithmetic of their own
end

check("every method and arithmetic metamethod of a tensor is classified (a new op needs cases here)", function()
  local unknown = {}
  for name in pairs(tensor.methods) do
    if not CLASS[name] then unknown[#unknown + 1] = name end
  end
  local mt = getmetatable(tensor.param("x", { 2 }))
  for name in pairs(mt) do
    if name:match("^__") and not META[name] and name ~= "__index" and name ~= "__tostring" and name ~= "__show"
       and name ~= "__name" then
      unknown[#unknown + 1] = name
    end
  end
  for name in pairs(META) do assert(mt[name], "metamethod " .. name .. " is gone") end
  for name, c in pairs(CLASS) do assert(tensor.methods[name], c .. " method " .. name .. " is gone") end
  table.sort(unknown)
  assert(#unknown == 0, "unclassified: " .. table.concat(unknown, ", "))
end)

-- ---- inputs ----

local function rnd(lo, hi) return lo + (hi - lo) * math.random() end

local function int_range(d)
  local b = BITS[d]
  if b == 64 then
    return SIGNED[d] and math.mininteger or 0, SIGNED[d] and math.maxinteger or -1
  end
  if SIGNED[d] then return -(1 << (b - 1)), (1 << (b - 1)) - 1 end
  return 0, (1 << b) - 1
end

-- the dtype's edges: what exact code must get bit for bit
local function edges(d)
  if d == "bool" then return { true, false, true, true, false, false, true, false } end
  local inf, nan = 1 / 0, 0 / 0
  if d == "float32" then return { nan, inf, -inf, -0.0, 3.0e38, 1.4e-45, -1e10, 2.5 } end
  if d == "float64" then return { nan, inf, -inf, -0.0, 1e308, 5e-324, -1e18, 0.5 } end
  if d == "float16" then return { nan, inf, -inf, -0.0, 65504, 6e-8, -1000, 2.5 } end
  if d == "bfloat16" then return { nan, inf, -inf, -0.0, 3e38, 1e-40, -1e10, 2.5 } end
  local lo, hi = int_range(d)
  if SIGNED[d] then return { lo, hi, 0, -1, 1, lo + 1, hi - 1, hi // 3 } end
  if d == "uint64" then return { 0, -1, 1, -2, math.mininteger, math.maxinteger, 2, 1 << 40 } end
  return { 0, hi, 1, hi - 1, (hi + 1) // 2, hi // 2, 2, hi // 3 }
end

-- tame values: kind "a" any sign, "p" positive, "s" small non-negative (shift amounts)
local function tame(d, kind)
  if d == "bool" then return math.random() < 0.5 end
  if FLOAT[d] then
    if kind == "p" then return rnd(0.25, 4) end
    if kind == "s" then return math.random(0, 6) end
    return rnd(-4, 4)
  end
  if kind == "p" then return math.random(1, 8) end
  if kind == "s" then return math.random(0, BITS[d] - 1) end
  return SIGNED[d] and math.random(-8, 8) or math.random(0, 16)
end

local function values(d, kind, n, like)
  local v, e = {}, edges(d)
  for i = 1, n do
    if i <= TAME then
      v[i] = (like and i % 4 == 1) and like[i] or tame(d, kind)
    else
      v[i] = e[(i - TAME - 1) % #e + 1]
    end
  end
  return v
end

-- one set of inputs for the whole file, named by kind and dtype: a_int8, b_int8, p_float32, ...
local INPUT = {}      -- name -> {dtype =, shape =, values =}
local function input(kind, d)
  local name = kind .. "_" .. d
  if not INPUT[name] then
    -- what is summed: a sum of 16-bit floats that cancels moves past Triton's 1e-2 when it adds in
    -- another order than the interpreter (0.615 for 0.633 in a matmul of float16), so those are positive
    local sk = HALF[d] and "p" or "a"
    if kind == "m" or kind == "mt" then
      -- reduced inputs: rows (m, reduced along 1) or columns (mt, along 0) below TAME are tame
      local rows = {}
      if kind == "m" then
        for i = 1, N do rows[i] = {} for j = 1, R do rows[i][j] = i <= TAME and tame(d, sk) or edges(d)[(i + j) % 8 + 1] end end
      else
        for j = 1, R do rows[j] = {} for i = 1, N do rows[j][i] = i <= TAME and tame(d, sk) or edges(d)[(i + j) % 8 + 1] end end
      end
      INPUT[name] = { dtype = d, shape = kind == "m" and { N, R } or { R, N }, values = rows }
    elseif kind == "v" then
      local v = {}
      for j = 1, R do v[j] = tame(d, sk) end
      INPUT[name] = { dtype = d, shape = { R }, values = v }
    else
      local like = kind == "b" and input("a", d).values or nil
      INPUT[name] = { dtype = d, shape = { N }, values = values(d, kind, N, like) }
    end
    INPUT[name].tensor = tensor.from(INPUT[name].values, d)
    -- the tame elements alone (the edges replaced by tame ones), for Triton's CPU interpreter
    local function tamed(v, i) return i > TAME and v[(i - 1) % TAME + 1] or v[i] end
    local t = {}
    for i, v in ipairs(INPUT[name].values) do
      if type(v) ~= "table" then t[i] = tamed(INPUT[name].values, i)
      elseif kind == "m" then t[i] = tamed(INPUT[name].values, i)
      else t[i] = {} for j = 1, #v do t[i][j] = tamed(v, j) end end
    end
    INPUT[name].tame = tensor.from(t, d)
  end
  return INPUT[name]
end

-- ---- the cases ----

-- A case: name, the dtypes it is about, and build(P), where P(kind, dtype) is the input as a tensor
-- (a param); the result has shape (N,), its first TAME elements tame.
local CASES = {}
local function case(name, dts, build, sep)
  CASES[#CASES + 1] = { name = name, dtypes = dts, build = build, sep = sep }
end

for _, d in ipairs(DTYPES) do
  local D = { d }
  for _, op in ipairs(UNARY) do
    case(op, D, function(P) local x = P(POSITIVE[op] and "p" or "a", d) return x[op](x) end)
  end
  case("neg", D, function(P) return -P("a", d) end)
  for _, meta in ipairs(METANAMES) do
    local f = META[meta]
    local op = f[1]
    if f[2] and not (BITWISE[op] and FLOAT[d]) then
      case(op, D, function(P)
        local l = P(op == "pow" and FLOAT[d] and "p" or "a", d)
        return f[2](l, P((op == "shl" or op == "shr") and "s" or "b", d))
      end)
    end
  end
  for _, op in ipairs(BINARY) do case(op, D, function(P) return P("a", d)[op](P("a", d), P("b", d)) end) end
  for _, op in ipairs(CMP) do case(op, D, function(P) return P("a", d)[op](P("a", d), P("b", d)) end) end
  case("where", D, function(P) return P("a", "bool"):where(P("a", d), P("b", d)) end)
  -- a constant the dtype barely holds (or a float32 cannot hold: 0.1 stays a double)
  local k = ({ bool = true, int8 = -100, int16 = 30000, int32 = 2147483647, int64 = (1 << 40) + 1,
               uint8 = 200, uint16 = 65000, uint32 = 4000000000, uint64 = -1 })[d] or 0.1
  case("add_const", D, function(P) return P("a", d) + k end)
  for _, op in ipairs(REDUCE) do
    case(op .. "(axis 1)", D, function(P) return P("m", d)[op](P("m", d), 1) end)
    case(op .. "(axis 0)", D, function(P) return P("mt", d)[op](P("mt", d), 0) end)
  end
  case("cumsum", D, function(P) return P("m", d):cumsum(1):shrink{ false, { R - 1, R } }:reshape{ N } end)
  case("softmax", D, function(P) return P("m", d):softmax(1):shrink{ false, { 0, 1 } }:reshape{ N } end)
  case("log_softmax", D, function(P) return P("m", d):log_softmax(1):shrink{ false, { 1, 2 } }:reshape{ N } end)
  case("matmul", D, function(P) return P("m", d):matmul(P("v", d)) end)
  for _, op in ipairs(COMPOSED) do
    if op == "tan" then   -- away from its poles: tame values in [-1, 1]
      case(op, D, function(P) return (P("a", d) * 0.25):tan() end)
    else
      case(op, D, function(P) local x = P(op == "rsqrt" and "p" or "a", d) return x[op](x) end)
    end
  end
  for _, to in ipairs(DTYPES) do
    case("cast", { d, to }, function(P) return P("a", d):cast(to) end)
    -- a computed value, not a load, converted (an operand that needs parentheses)
    if FLOAT[d] then case("cast of a sum", { d, to }, function(P) return (P("a", d) + P("b", d)):cast(to) end) end
  end
  for _, d2 in ipairs(DTYPES) do
    if d2 ~= d then case("add", { d, d2 }, function(P) return P("a", d) + P("b", d2) end, ", ") end
  end
end

check("the language's own refusals: bitwise ops of floats, a kernel's bitcast", function()
  for d in pairs(FLOAT) do
    local x = tensor.param("x", { 4 }, d)
    for meta, f in pairs(META) do
      if BITWISE[f[1]] then
        raises(function() return f[2](x, x) end, "needs integer or bool operands, got " .. d .. " and " .. d)
      end
    end
  end
  raises(function() kernel.lower(tensor.param("x", { 4 }):bitcast("int32"), "o") end,
         "kernel.lower: bitcast of a param", "to int32 is not supported")
end)

-- ---- building and lowering ----

-- P for a case: params named as the inputs (two params of one name are two inputs: each is made once)
local PARAM = {}
local function params(used)
  return function(kind, d)
    local inp = input(kind, d)
    local name = kind .. "_" .. d
    used[name] = true
    PARAM[name] = PARAM[name] or tensor.param(name, inp.shape, d)
    return PARAM[name]
  end
end

local function build(c)
  local used = {}
  return c.build(params(used)), used
end

local function bindings(used, tame)
  local b = {}
  for name in pairs(used) do b[name] = tame and INPUT[name].tame or INPUT[name].tensor end
  return b
end

-- the label of a case in messages
local function label(c)
  return c.name .. "(" .. table.concat(c.dtypes, c.sep or " -> ") .. ")"
end

-- ---- the backends and the refusals they document ----

-- a 16-bit float among the case's dtypes or as its result (int64 + uint64 is float16, as in tinygrad),
-- named by the message
local function names_half(c, msg, result)
  for _, d in ipairs(c.dtypes) do if HALF[d] and msg:find(d, 1, true) then return true end end
  return HALF[result] and msg:find(result, 1, true) ~= nil
end

-- Triton's documented refusals (docs/export.md): pow, shifts of values, integer division and modulo of
-- values (the interpreter floors, Triton truncates); the message names the op
local TRITON_REFUSES = {
  pow = "pow", shl = "shl", shr = "shr",
  idiv = "integer division", mod = "integer modulo", reciprocal = "reciprocal of an integer",
}

-- how close a backend's element must be to the interpreter's, relative to max(|ref|, 1): C bit for bit;
-- fast code within backend_tolerance, on the tame elements only (-ffast-math assumes no NaN or infinity);
-- OpenCL bit for bit, or within 8 units of the dtype's rounding error where the case calls exp2, log2,
-- sin or pow (the device's double functions are not the C library's: docs/export.md)
local FAST = { float32 = 1e-4, float64 = 1e-9, float16 = 1e-2, bfloat16 = 1e-2 }
local UNIT = { float32 = 2.0 ^ -24, float64 = 2.0 ^ -53, float16 = 2.0 ^ -11, bfloat16 = 2.0 ^ -8 }
local function device_math(src)
  for _, f in ipairs({ "exp2(", "log2(", "sin(", "pow(" }) do
    if src:find(f, 1, true) then return true end
  end
  return false
end

local BACKENDS = {
  { name = "c", dialect = "c", run = { backend = "c" },
    tol = function() return 0 end,
    refuses = function(c, msg, r) return msg:find("^c: ") and names_half(c, msg, r) end },
  { name = "c fast", dialect = "c", src = { fast = true }, run = { backend = "c", fast = true, compare = false },
    tame = true,
    tol = function(d) return FAST[d] or 0 end,
    refuses = function(c, msg, r) return msg:find("^c: ") and names_half(c, msg, r) end },
  { name = "opencl", dialect = "opencl", run = { backend = "opencl" },
    tol = function(d, it) return device_math(it.src) and 8 * (UNIT[d] or 0) or 0 end,
    refuses = function(c, msg, r) return msg:find("^opencl: ") and names_half(c, msg, r) end },
  { name = "cuda", dialect = "cuda", compile = true, refuses = function() return false end },
  { name = "cuda fast", dialect = "cuda", src = { fast = true }, compile = true,
    refuses = function() return false end },
  { name = "triton", dialect = "triton", parse = true,
    refuses = function(c, msg)
      local w = TRITON_REFUSES[c.name]
      return w and msg:find("^triton: ") and msg:find(w, 1, true)
    end },
  { name = "triton run", dialect = "triton", interpret = true,
    group = function(c, l)   -- bfloat16 apart: it needs torch under the interpreter
      for _, d in ipairs(c.dtypes) do if d == "bfloat16" then return " bfloat16" end end
      return l.t.dtype == "bfloat16" and " bfloat16" or ""
    end,
    refuses = function(c, msg)
      local w = TRITON_REFUSES[c.name]
      return w and msg:find("^triton: ") and msg:find(w, 1, true)
    end },
}

local function same(a, b)
  if a == b then return a ~= 0 or type(a) ~= "number" or 1 / a == 1 / b end   -- -0.0 is not 0.0
  return a ~= a and b ~= b                                                  -- NaN is NaN
end

local function close(a, b, tol)
  if same(a, b) then return true end
  if tol == 0 or type(a) ~= "number" or type(b) ~= "number" or a ~= a or b ~= b then return false end
  if math.abs(a) == math.huge or math.abs(b) == math.huge then return false end
  return math.abs(a - b) <= tol * math.max(math.abs(b), 1)
end

local function show(v)
  return math.type(v) == "float" and string.format("%.17g", v) or tostring(v)
end

-- nil when the row agrees, else the first disagreement
local function compare(b, got, want, dtype, it)
  local tol = b.tol(dtype, it)
  for i = 1, b.tame and TAME or N do
    if not close(got[i], want[i], tol) then
      return string.format("element %d: got %s, the interpreter %s%s", i - 1, show(got[i]), show(want[i]),
                           tol > 0 and string.format(" (beyond %g of max(|ref|, 1))", tol) or "")
    end
  end
end

-- ---- running ----

local failures = {}        -- backend name -> list of messages
local counts = {}          -- backend name -> {ok =, refused =}
local function fail(b, msg)
  failures[b.name] = failures[b.name] or {}
  table.insert(failures[b.name], msg)
end

-- per case: the tensor, its kernel, or why there is none
local lowered = {}         -- [case] = {t =, used =, k =} or {err =}
local function lower(c)
  local l = lowered[c]
  if not l then
    local ok, t, used = pcall(build, c)
    if not ok then
      l = { err = "the tensor language refused it: " .. tostring(t) }
    else
      local okk, k = pcall(kernel.lower, t, "o")
      l = okk and { t = t, used = used, k = k } or { err = "kernel.lower: " .. tostring(k) }
    end
    lowered[c] = l
  end
  return l
end

local function run_one(b, k, used, dtype)
  local bind = bindings(used)
  local want = k:run(bind):tolist()
  local ok, got = pcall(k.run, k, bind, b.run)
  if not ok then return nil, tostring(got) end
  return got:tolist(), want
end

-- the wall clock (os.clock leaves out the compilers' processes)
local function now()
  local p = io.popen("date +%s.%N")
  local t = tonumber(p:read("l"))
  p:close()
  return t or os.time()
end
local START = now()

local tmp
local function tmpdir()
  if not tmp then
    local p = io.popen("mktemp -d " .. (os.getenv("TMPDIR") or "/tmp") .. "/tessel-ops-XXXXXX")
    tmp = p:read("l")
    p:close()
    assert(tmp and tmp ~= "", "mktemp -d failed")
  end
  return tmp
end

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local function have(cmd)
  return os.execute("command -v " .. cmd .. " >/dev/null 2>&1") == true
end

-- the cases a backend takes, grouped by result dtype in batches of BATCH
local function accepted(b)
  local groups, order = {}, {}
  counts[b.name] = { ok = 0, refused = 0, cases = 0 }
  for _, c in ipairs(CASES) do
    local l = lower(c)
    if l.err then
      fail(b, label(c) .. ": " .. l.err)
    else
      local ok, src = pcall(l.k.source, l.k, b.dialect, b.src)
      if not ok then
        if b.refuses(c, tostring(src), l.t.dtype) then
          counts[b.name].refused = counts[b.name].refused + 1
        else
          fail(b, label(c) .. ": refused: " .. tostring(src))
        end
      else
        counts[b.name].cases = counts[b.name].cases + 1
        local d = l.t.dtype .. (b.group and b.group(c, l) or "")
        if not groups[d] then groups[d] = {} order[#order + 1] = d end
        local g = groups[d]
        if #g == 0 or #g[#g] == BATCH then g[#g + 1] = {} end
        table.insert(g[#g], { c = c, l = l, src = src })
      end
    end
  end
  local batches = {}
  for _, d in ipairs(order) do
    for _, bt in ipairs(groups[d]) do batches[#batches + 1] = { dtype = bt[1].l.t.dtype, items = bt } end
  end
  return batches
end

-- a batch as one kernel: the cases stacked, one row each
local function stacked(bt)
  local ts, used = {}, {}
  for i, it in ipairs(bt.items) do
    ts[i] = it.l.t
    for name, how in pairs(it.l.used) do used[name] = how end
  end
  return kernel.lower(tensor.stack(ts), "o"), used
end

local function run_backend(b)
  local t0 = now()
  for _, bt in ipairs(accepted(b)) do
    local k, used = stacked(bt)
    local got, want = run_one(b, k, used)
    local again = {}
    if not got then
      for _, it in ipairs(bt.items) do again[#again + 1] = it end
    else
      for i, it in ipairs(bt.items) do
        if compare(b, got[i], want[i], bt.dtype, it) then again[#again + 1] = it
        else counts[b.name].ok = counts[b.name].ok + 1 end
      end
    end
    -- a batch that failed: each case alone names what fails
    for _, it in ipairs(again) do
      local g, w = run_one(b, it.l.k, it.l.used)
      local why = g and compare(b, g, w, bt.dtype, it) or not g and w
      if why then
        fail(b, label(it.c) .. ": " .. why)
      else
        fail(b, label(it.c) .. ": agrees alone, not in a batch of " .. #bt.items)
      end
    end
  end
  if verbose then print(string.format("%-10s %4.1f s", b.name, now() - t0)) end
end

-- CUDA: every batch's source in one translation unit, each in a namespace of its own, for one nvcc run;
-- an error's line names its batch, whose cases are then compiled alone
local CUDA_HEAD = "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <cuda_runtime.h>\n" ..
                  "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"

-- nvcc started on one translation unit of units ({src =}); nvcc_finish waits for it
local function nvcc_start(units, name)
  local parts, spans, line = { CUDA_HEAD }, {}, select(2, CUDA_HEAD:gsub("\n", "")) + 1
  for i, u in ipairs(units) do
    local text = string.format("#define tessel_launch tessel_launch_%d\nnamespace unit%d {\n%s\n}\n#undef tessel_launch\n",
                               i, i, u.src)
    local n = select(2, text:gsub("\n", ""))
    spans[i] = { first = line, last = line + n - 1 }
    line = line + n
    parts[#parts + 1] = text
  end
  local cu = tmpdir() .. "/" .. name .. ".cu"
  write(cu, table.concat(parts))
  return { spans = spans, p = io.popen("nvcc -arch=sm_90 -fmad=false -c -o " .. cu .. ".o " .. cu .. " 2>&1") }
end

-- nvcc's status, its first error per unit (by the unit's lines), its output
local function nvcc_finish(job)
  local out = job.p:read("a")
  local ok = job.p:close()
  local bad = {}
  for ln, msg in out:gmatch("%.cu%((%d+)%): error: ([^\n]*)") do
    ln = tonumber(ln)
    for i, s in ipairs(job.spans) do
      if ln >= s.first and ln <= s.last and not bad[i] then bad[i] = msg end
    end
  end
  return ok, bad, out
end

-- TESSEL_OPS_EXPORT=dir: every CUDA and Triton batch exported as well (k:export), to run where the GPU is:
-- for d in dir/*/; do make -C $d; done (each run compares with the interpreter's outputs);
-- TESSEL_OPS_EXPORT_CASES=1 exports each case alone instead (named by its label)
local export_to = os.getenv("TESSEL_OPS_EXPORT")
local function export(b, batches)
  if not export_to then return end
  local function one(k, used, name)
    local dir = export_to .. "/" .. (b.name .. "_" .. name):gsub("[^%w_.-]+", "_")
    local ok, err = k:export(b.dialect, dir, { inputs = bindings(used), reps = 3, warmup = 1, fast = b.src ~= nil })
    if not ok then fail(b, "export " .. dir .. ": " .. tostring(err)) end
  end
  for i, bt in ipairs(batches) do
    if os.getenv("TESSEL_OPS_EXPORT_CASES") == "1" then
      for _, it in ipairs(bt.items) do one(it.l.k, it.l.used, label(it.c)) end
    else
      local k, used = stacked(bt)
      one(k, used, string.format("%02d_%s", i, bt.dtype))
    end
  end
end

-- The CUDA backends' translation units, each compiled by an nvcc of its own; all of them are started by
-- the first CUDA check, so that the compilers run side by side
local cuda_jobs = {}
local function start_cuda(b)
  local job = { t0 = now(), batches = accepted(b), units = {} }
  export(b, job.batches)
  for _, bt in ipairs(job.batches) do
    local k = stacked(bt)
    local ok, src = pcall(k.source, k, b.dialect, b.src)
    if ok then job.units[#job.units + 1] = { src = src, bt = bt }
    else fail(b, "a batch of " .. bt.dtype .. " results: refused: " .. tostring(src)) end
  end
  job.nvcc = nvcc_start(job.units, (b.name:gsub(" ", "_")))
  cuda_jobs[b.name] = job
end

local function compile_backend(b)
  if not have("nvcc") then
    accepted(b)
    io.stderr:write("note: nvcc is not in PATH: ", b.name, " sources are emitted, not compiled\n")
    return
  end
  for _, o in ipairs(BACKENDS) do
    if o.compile and not cuda_jobs[o.name] then start_cuda(o) end
  end
  local job = cuda_jobs[b.name]
  local ok, bad, out = nvcc_finish(job.nvcc)
  local any = false
  for i, u in ipairs(job.units) do
    if not bad[i] then
      counts[b.name].ok = counts[b.name].ok + #u.bt.items
    else
      -- the batch failed: its cases alone, in one more translation unit, name what fails
      any = true
      local alone = {}
      for _, it in ipairs(u.bt.items) do alone[#alone + 1] = { src = it.src, c = it.c } end
      local _, bad2 = nvcc_finish(nvcc_start(alone, b.name:gsub(" ", "_") .. "_alone"))
      local named = false
      for j, m in pairs(bad2) do fail(b, label(alone[j].c) .. ": nvcc: " .. m) named = true end
      if not named then fail(b, "a batch of " .. u.bt.dtype .. " results: nvcc: " .. bad[i]) end
    end
  end
  if not ok and not any then fail(b, "nvcc failed: " .. out:sub(1, 2000)) end
  if verbose then
    print(string.format("%-10s %4.1f s (%d kernels in one nvcc run)", b.name, now() - job.t0, #job.units))
  end
end

-- Triton: every case's module parsed by one python3 (ast.parse), and what Python parses but Triton's
-- front end refuses: a chained comparison (a != b != True is a != b and b != True in Python)
local PARSE = [[
import ast, sys
for path in sys.argv[1:]:
    try:
        tree = ast.parse(open(path).read(), path)
    except SyntaxError as e:
        print("%s:%s: %s" % (path, e.lineno, e.msg))
        continue
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) > 1:
            print("%s:%s: a chained comparison (Triton: simultaneous multiple comparison is not supported)"
                  % (path, node.lineno))
            break
]]

local function parse_backend(b)
  local t0 = now()
  local batches = accepted(b)
  export(b, batches)
  if not have("python3") then
    io.stderr:write("note: python3 is not in PATH: Triton modules are emitted, not parsed\n")
    return
  end
  local dir, files, which = tmpdir(), {}, {}
  write(dir .. "/parse.py", PARSE)
  for _, bt in ipairs(batches) do
    for _, it in ipairs(bt.items) do
      local f = string.format("triton_%d.py", #files + 1)
      write(dir .. "/" .. f, it.src)
      files[#files + 1] = f
      which[f] = it.c
    end
  end
  local p = io.popen("cd " .. dir .. " && python3 parse.py " .. table.concat(files, " ") .. " 2>&1")
  local out = p:read("a")
  p:close()
  local bad = 0
  for path, msg in out:gmatch("(triton_%d+%.py):([^\n]*)") do
    bad = bad + 1
    fail(b, label(which[path]) .. ": python: " .. msg)
  end
  counts[b.name].ok = #files - bad
  if verbose then print(string.format("%-10s %4.1f s", b.name, now() - t0)) end
end

-- Triton's CPU interpreter, where TESSEL_PYTHON names a python with triton and numpy < 2 (Triton 3.1's
-- stores do not land with numpy 2; CI has none): each batch exported (k:export) on the tame inputs and run
-- by its run.py (TRITON_INTERPRET=1), within the Triton tolerances of docs/export.md. The tame inputs only:
-- the interpreter converts as numpy does (NaN and infinities to int64 differ from the GPU's), and the
-- interpreter rounds a 16-bit float after each operation where Triton keeps float32 (cos of 65504).
-- bfloat16 needs torch there, and is skipped without it.
local tpython = os.getenv("TESSEL_PYTHON")
if tpython and tpython ~= "" and os.execute(tpython .. " -c 'import sys, numpy, triton; sys.exit(int(numpy.__version__.split(\".\")[0]) >= 2)' >/dev/null 2>&1") ~= true then
  io.stderr:write("note: ", tpython, " has no triton with numpy < 2: Triton runs skipped\n")
  tpython = nil
end

local function interpret_backend(b)
  local t0 = now()
  local batches, dirs = accepted(b), {}
  for i, bt in ipairs(batches) do
    local k, used = stacked(bt)
    dirs[i] = string.format("%s/run_%02d", tmpdir(), i)
    local ok, err = k:export("triton", dirs[i], { inputs = bindings(used, true) })
    if not ok then fail(b, "export: " .. tostring(err)) end
  end
  -- all of them in one shell, two at a time: importing triton takes a second
  local p = io.popen("cd " .. tmpdir() .. " && ls -d run_*/ | xargs -P 2 -I{} sh -c 'cd {} && TRITON_INTERPRET=1 " ..
                     tpython .. " run.py >run.log 2>&1; echo \"{} $(tail -1 run.log)\"'")
  local out = p:read("a")
  p:close()
  for i, bt in ipairs(batches) do
    local line = out:match(string.format("run_%02d/ ([^\n]*)", i)) or "no result"
    if line:find("; match$") then
      counts[b.name].ok = counts[b.name].ok + #bt.items
    elseif line:find("needs torch", 1, true) then
      counts[b.name].skipped = (counts[b.name].skipped or 0) + #bt.items
    else
      -- the batch's cases alone name what disagrees
      for j, it in ipairs(bt.items) do
        local d = string.format("%s/alone_%02d_%02d", tmpdir(), i, j)
        local ok, err = it.l.k:export("triton", d, { inputs = bindings(it.l.used, true) })
        local q = io.popen("cd " .. d .. " && TRITON_INTERPRET=1 " .. tpython .. " run.py 2>&1 | tail -1")
        local r = q:read("a")
        q:close()
        if not r:find("; match\n?$") then fail(b, label(it.c) .. ": " .. r:gsub("\n$", "")) end
      end
    end
  end
  if verbose then print(string.format("%-10s %4.1f s", b.name, now() - t0)) end
end

for _, b in ipairs(BACKENDS) do
  if b.interpret and not tpython then goto next end
  check(b.name .. ": every case agrees with the interpreter, or is a refusal the backend documents", function()
    if b.run then run_backend(b) elseif b.compile then compile_backend(b)
    elseif b.interpret then interpret_backend(b) else parse_backend(b) end
    local f = failures[b.name]
    if f then
      error(#f .. " failures:\n  " .. table.concat(f, "\n  "), 0)
    end
  end)
  ::next::
end

local function words(t)
  local w = {}
  for i, v in ipairs(t) do w[i] = tostring(v) end
  return table.concat(w, " ")
end

check("a fast kernel leaves the interpreter's subnormals alone (crtfastmath.o set FTZ and DAZ for the process)", function()
  local tiny = tensor.from({ 5e-324, 1e-310 }, "float64")
  local x = tensor.param("x", { 2 }, "float64")
  local k = kernel.lower(x:cast("bool"), "o")
  eq(words(k:run{ x = tiny }:tolist()), "true true", "before")
  -- a fast kernel of its own (not one the cache holds), loaded now
  local y = tensor.param("y", { 3 })
  kernel.lower((y * 0.3125):exp2(), "o"):run({ y = tensor.rand({ 3 }, { seed = 28 }) }, { backend = "c", fast = true })
  eq(words(k:run{ x = tiny }:tolist()), "true true", "after a fast kernel")
  eq(k:run({ x = tiny }, { backend = "c" }):tolist()[1], true, "C after a fast kernel")
  eq((x * 1.0):realize{ x = tiny }:tolist()[2], 1e-310, "the evaluator after a fast kernel")
end)

check("OpenCL: bool buffers as uchar; float64 exp within 8 units of its rounding error, checked by k:run itself", function()
  local a, b = tensor.param("a", { 6 }, "float64"), tensor.param("b", { 6 }, "float64")
  local k = kernel.lower(a:lt(b):where(a:exp(), b), "o")
  local src = k:source("opencl")
  assert(not src:find("bool", 1, true), src)
  local av = tensor.from({ 3.93, -1.5, 0.7, 2.25, -0.1, 1.0 }, "float64")
  local bv = tensor.from({ 4.0, -2.0, 0.8, 2.0, 0.0, 1.0 }, "float64")
  local want = k:run{ a = av, b = bv }:tolist()
  local got = k:run({ a = av, b = bv }, { backend = "opencl" }):tolist()   -- compare = true: k:run checks
  for i = 1, 6 do assert(math.abs(got[i] - want[i]) <= 8 * 2 ^ -53 * math.max(math.abs(want[i]), 1), i) end
  local c = kernel.lower(a:lt(b), "o")
  eq(words(c:run({ a = av, b = bv }, { backend = "opencl" }):tolist()), "true false true false true false",
     "a bool output")
end)

if verbose then
  local ops, pairs_ = {}, 0
  for _, c in ipairs(CASES) do ops[c.name] = true pairs_ = pairs_ + 1 end
  local nops = 0
  for _ in pairs(ops) do nops = nops + 1 end
  print(string.format("%d cases of %d ops, %.1f s", pairs_, nops, now() - START))
  for _, b in ipairs(BACKENDS) do
    local c = counts[b.name]
    if not c then goto skip end
    print(string.format("%-10s %4d taken, %4d agree, %4d refused as documented%s", b.name, c.cases or 0, c.ok or 0,
                        c.refused or 0, c.skipped and string.format(", %d skipped", c.skipped) or ""))
    ::skip::
  end
end
if tmp and os.getenv("TESSEL_OPS_KEEP") == "1" then print("kept " .. tmp)
elseif tmp then os.execute("rm -rf " .. tmp) end
finish()

-- test_tensor_ops.lua - tinygrad's Tensor methods of lua_tensor_ops.c (interp/tensor/tensor_math.c,
-- tensor_shape.c, tensor_nn.c): each method's values against its definition computed here in Lua (or
-- by hand), its dtype, its bad inputs (each a clear error naming the method), and a few lowered to
-- kernels and run against the reference evaluator. tests/diff/tinygrad_oracle.py checks the same
-- methods against tinygrad itself (by hand: it needs tinygrad).
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")
local seed = tonumber(os.getenv("TESSEL_SEED") or "") or 7
math.randomseed(seed)

local function flat(x, out)
  out = out or {}
  if type(x) == "userdata" then x = x:tolist() end
  if type(x) == "table" then for _, y in ipairs(x) do flat(y, out) end else out[#out + 1] = x end
  return out
end

-- values within tol (relative, with an absolute floor), NaN where NaN
local function near(got, want, tol, what)
  local g, w = flat(got), flat(want)
  eq(#g, #w, (what or "value") .. ": count")
  for i = 1, #w do
    local a, b = g[i], w[i]
    if type(b) == "number" and b ~= b then
      if a == a then error(("%s[%d]: got %s, want nan (seed %d)"):format(what or "value", i, tostring(a), seed), 2) end
    elseif type(b) == "number" and (b == math.huge or b == -math.huge or not tol) then
      if a ~= b then error(("%s[%d]: got %s, want %s (seed %d)"):format(what or "value", i, tostring(a), tostring(b), seed), 2) end
    elseif type(b) == "number" then
      if math.abs(a - b) > tol * math.max(1, math.abs(b)) then
        error(("%s[%d]: got %.9g, want %.9g (seed %d)"):format(what or "value", i, a, b, seed), 2)
      end
    elseif a ~= b then
      error(("%s[%d]: got %s, want %s"):format(what or "value", i, tostring(a), tostring(b)), 2)
    end
  end
end

local function map(t, f) local r = {} for i, v in ipairs(flat(t)) do r[i] = f(v) end return r end
local function shape(t) return table.concat(t.shape, ",") end
local function rvals(n, lo, hi)
  local v = {}
  for i = 1, n do v[i] = lo + (hi - lo) * math.random() end
  return v
end

local X = {1.5, -2.25, 3.0, -0.5, 0.0, 2.5, -1.0, 0.75}
local x = tensor.from(X)
local nan, inf = 0 / 0, math.huge

-- ---- elementwise ----

check("sign, abs, square, floor, ceil, round, trunc against Lua; integers keep their dtype", function()
  local s = tensor.from{-2.5, -0.5, 0.5, 1.5, 2.5, -0.0, inf, -inf}
  near(s:sign(), {-1, -1, 1, 1, 1, 0, 1, -1})
  near(s:abs(), {2.5, 0.5, 0.5, 1.5, 2.5, 0, inf, inf})
  near(s:floor(), {-3, -1, 0, 1, 2, 0, inf, -inf})
  near(s:ceil(), {-2, 0, 1, 2, 3, 0, inf, -inf})
  near(s:round(), {-2, 0, 0, 2, 2, 0, inf, -inf}, nil, "round half to even")
  near(s:square(), map(s, function(v) return v * v end))
  local i = tensor.from({-3, 0, 4}, "int8")
  eq(i:abs().dtype, "int8"); near(i:abs(), {3, 0, 4})
  eq(i:sign().dtype, "int8"); near(i:sign(), {-1, 0, 1})
  eq(i:floor().dtype, "int8"); eq(i:square().dtype, "int8")
  eq(tensor.from{1, 2}:round().dtype, "float32", "round of integers (tinygrad's)")
  eq(tensor.from({200}, "uint8"):abs():item(), 200)
end)

check("isnan, isinf, isfinite, logical_not, neg, bitwise_not", function()
  local s = tensor.from{1.0, nan, inf, -inf, 0.0}
  near(s:isnan(), {false, true, false, false, false}); eq(s:isnan().dtype, "bool")
  near(s:isinf(), {false, false, true, true, false})
  near(s:isinf(true, false), {false, false, true, false, false})
  near(s:isinf(false, true), {false, false, false, true, false})
  near(s:isfinite(), {true, false, false, false, true})
  near(tensor.from{1, 2}:isinf(), {false, false})
  near(tensor.from{0, 3}:logical_not(), {true, false})
  near(tensor.from{true, false}:neg(), {false, true})
  near(tensor.from{1, -2}:neg(), {-1, 2})
  near(tensor.from({5}, "int32"):bitwise_not(), {-6})
  near(tensor.from({5}, "uint8"):bitwise_not(), {250})
  raises(function() x:bitwise_not() end, "bitwise_not", "float32")
end)

check("functions of reals against Lua's math (float32 tolerance); integers become float32", function()
  local v = rvals(16, -0.9, 0.9)
  local t = tensor.from(v)
  local function sinh(a) return (math.exp(a) - math.exp(-a)) / 2 end
  local function cosh(a) return (math.exp(a) + math.exp(-a)) / 2 end
  near(t:tan(), map(v, math.tan), 1e-5, "tan")
  near(t:sinh(), map(v, sinh), 1e-5, "sinh")
  near(t:cosh(), map(v, cosh), 1e-5, "cosh")
  near(t:asinh(), map(v, function(a) return math.log(a + math.sqrt(a * a + 1)) end), 1e-5, "asinh")
  near(t:atanh(), map(v, function(a) return 0.5 * math.log((1 + a) / (1 - a)) end), 1e-5, "atanh")
  near(t:asin(), map(v, math.asin), 1e-6, "asin")
  near(t:acos(), map(v, math.acos), 1e-6, "acos")
  near(t:atan(), map(v, math.atan), 1e-6, "atan")
  near((t + 2):acosh(), map(v, function(a) a = a + 2 return math.log(a + math.sqrt(a * a - 1)) end), 1e-5, "acosh")
  near((t + 2):log10(), map(v, function(a) return math.log(a + 2, 10) end), 1e-6, "log10")
  near((t + 2):rsqrt(), map(v, function(a) return 1 / math.sqrt(a + 2) end), 1e-6, "rsqrt")
  -- erf: A&S 7.1.26 has |error| < 1.5e-7; reference values of erf
  near(tensor.from{0.0, 0.5, 1.0, -2.0}:erf(), {0, 0.5204998778, 0.8427007929, -0.9953222650}, 3e-7, "erf")
  eq(tensor.from{1, 2}:tan().dtype, "float32")
  eq(tensor.from({1, 2}, "float16"):erf().dtype, "float16")
end)

check("activations against their definitions", function()
  local v = rvals(16, -4, 4)
  local t = tensor.from(v)
  local function sig(a) return 1 / (1 + math.exp(-a)) end
  local function softplus(a, b) b = b or 1 return math.log(1 + math.exp(b * a)) / b end
  local function tanh(a) return (math.exp(2 * a) - 1) / (math.exp(2 * a) + 1) end
  local function relu(a) return a > 0 and a or 0 end
  near(t:relu6(), map(v, function(a) return math.min(math.max(a, 0), 6) end), 1e-6, "relu6")
  near(t:hardswish(), map(v, function(a) return a * math.min(math.max(a + 3, 0), 6) / 6 end), 1e-6, "hardswish")
  near(t:hardsigmoid(), map(v, function(a) return math.min(math.max(a / 6 + 0.5, 0), 1) end), 1e-6, "hardsigmoid")
  near(t:hardsigmoid(0.25, 0.4), map(v, function(a) return math.min(math.max(a * 0.25 + 0.4, 0), 1) end), 1e-6)
  near(t:hardtanh(), map(v, function(a) return math.min(math.max(a, -1), 1) end), 1e-6, "hardtanh")
  near(t:leaky_relu(), map(v, function(a) return a < 0 and 0.01 * a or a end), 1e-6, "leaky_relu")
  near(t:leaky_relu(0.2), map(v, function(a) return a < 0 and 0.2 * a or a end), 1e-6)
  near(t:elu(), map(v, function(a) return a > 0 and a or math.exp(a) - 1 end), 1e-6, "elu")
  near(t:celu(2), map(v, function(a) return math.max(a, 0) + math.min(2 * (math.exp(a / 2) - 1), 0) end), 1e-6, "celu")
  near(t:selu(), map(v, function(a) return 1.0507 * (a >= 0 and a or 1.67326 * (math.exp(a) - 1)) end), 1e-5, "selu")
  near(t:softplus(), map(v, softplus), 1e-5, "softplus")
  near(t:softplus(2), map(v, function(a) return softplus(a, 2) end), 1e-5)
  near(t:mish(), map(v, function(a) return a * tanh(softplus(a)) end), 1e-5, "mish")
  near(t:logsigmoid(), map(v, function(a) return math.log(sig(a)) end), 1e-5, "logsigmoid")
  near(t:softsign(), map(v, function(a) return a / (1 + math.abs(a)) end), 1e-6, "softsign")
  near(t:silu(), map(v, function(a) return a * sig(a) end), 1e-5, "silu")
  near(t:swish(), t:silu():tolist(), 0, "swish is silu")
  near(t:quick_gelu(), map(v, function(a) return a * sig(1.702 * a) end), 1e-5, "quick_gelu")
  near(t:gelu(), map(v, function(a) return 0.5 * a * (1 + tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ^ 3))) end),
       1e-5, "gelu")
  near(t:gelu("none"), map(v, function(a) return 0.5 * a * (1 + (tensor.from{a / math.sqrt(2)}:erf():item())) end),
       1e-5, "gelu none")
  eq(tensor.from{-1, 2}:relu6().dtype, "int32"); eq(tensor.from{-1, 2}:leaky_relu().dtype, "float32")
  raises(function() t:gelu("fast") end, "gelu", "fast")
  raises(function() t:softplus(0) end, "softplus", "beta")
  raises(function() t:elu("x") end, "elu", "alpha must be a number")
end)

check("binary: pow, fmod, div modes, copysign, logaddexp, lerp, clamp, masked_fill, isclose", function()
  near(tensor.from{2.0, 9.0}:pow(tensor.from{3.0, 0.5}), {8, 3}, 1e-6)
  eq(tensor.from{2, 3}:pow(2).dtype, "int32"); near(tensor.from{2, 3}:pow(2), {4, 9})
  eq(tensor.from{4, 9}:pow(0.5).dtype, "float32")
  near(tensor.from{-7, 7, -7, 7}:fmod(tensor.from{2, -2, -2, 2}), {-1, 1, -1, 1}, nil, "fmod ints: sign of a")
  near(tensor.from{-3.5, 3.5}:fmod(2), {-1.5, 1.5}, 1e-7)
  near(tensor.from{-7, 7}:mod(2), {1, 1}, nil, "mod: sign of b")
  near(tensor.from{-7, 7, -7}:div(tensor.from{2, 2, -2}, "trunc"), {-3, 3, 3})
  near(tensor.from{-7, 7, -7}:div(tensor.from{2, 2, -2}, "floor"), {-4, 3, 3})
  near(tensor.from{-7.0, 7.0}:div(2, "trunc"), {-3, 3})
  near(tensor.from{-7, 7}:div(2), {-3.5, 3.5}); eq(tensor.from{1}:div(2).dtype, "float32")
  raises(function() x:div(2, "round") end, "div", "rounding_mode")
  near(tensor.from{1.0, -2.0, 3.0}:copysign(tensor.from{-1.0, 1.0, -0.0}), {-1, 2, -3}, nil, "copysign (-0.0 negative)")
  near(tensor.from{1.0, -inf}:logaddexp(tensor.from{2.0, 0.0}), {math.log(math.exp(1) + math.exp(2)), 0}, 1e-6)
  near(x:lerp(tensor.zeros(8), 0.25), map(X, function(a) return a * 0.75 end), 1e-6, "lerp")
  near(x:clamp(-1, 1), map(X, function(a) return math.min(math.max(a, -1), 1) end), nil, "clamp")
  near(x:clip(nil, 0), map(X, function(a) return math.min(a, 0) end), nil, "clip max only")
  near(x:clamp(tensor.from{0.0}), map(X, function(a) return math.max(a, 0) end), nil, "clamp by a tensor")
  eq(tensor.from{-5, 5}:clamp(-2, 3).dtype, "int32"); near(tensor.from{-5, 5}:clamp(-2, 3), {-2, 3})
  raises(function() x:clamp() end, "clamp", "at least one")
  near(x:masked_fill(x:lt(0), 0.0), map(X, function(a) return a < 0 and 0 or a end), nil, "masked_fill")
  raises(function() x:masked_fill(tensor.from{1, 0, 1, 0, 1, 0, 1, 0}, 0) end, "masked_fill", "not bool")
  near(tensor.from{1.0, 1.0, nan, inf}:isclose(tensor.from{1.0 + 1e-7, 1.1, nan, inf}), {true, false, false, true})
  near(tensor.from{nan}:isclose(tensor.from{nan}, {equal_nan = true}), {true})
  eq(tensor.from{1.0, 2.0}:allclose(tensor.from{1.05, 2.0}, {rtol = 0.1}):item(), true)
  eq(tensor.from{1.0, 2.0}:allclose(tensor.from{1.05, 2.0}):item(), false)
  raises(function() x:isclose(x, {rtl = 1}) end, "isclose", "unknown option", "rtl")
  near(tensor.from{6, 12}:bitwise_and(10), {2, 8}); near(tensor.from{6}:bitwise_or(1), {7})
  near(tensor.from{6}:bitwise_xor(3), {5}); near(tensor.from{1}:lshift(3), {8}); near(tensor.from{8}:rshift(2), {2})
  near(tensor.from{1, 2}:add(1):sub(0.5):mul(2), {3, 5})
end)

check("dtype shortcuts, sizes, likes", function()
  eq(x:half().dtype, "float16"); eq(x:int().dtype, "int32"); eq(x:long().dtype, "int64"); eq(x:bool().dtype, "bool")
  eq(x:double().dtype, "float64"); eq(x:short().dtype, "int16"); eq(x:bfloat16().dtype, "bfloat16"); eq(x:int():float().dtype, "float32")
  local m = tensor.zeros(2, 3)
  eq(table.concat(m:size(), ","), "2,3"); eq(m:size(-1), 3); eq(m:element_size(), 4); eq(m:nbytes(), 24)
  eq(m:is_floating_point(), true); eq(tensor.from{1}:is_floating_point(), false)
  raises(function() m:size(2) end, "size", "out of range")
  near(m:ones_like(), {1, 1, 1, 1, 1, 1}); eq(m:zeros_like("int8").dtype, "int8"); near(m:full_like(7), {7, 7, 7, 7, 7, 7})
end)

-- ---- shape ----

check("squeeze, unsqueeze, flatten, unflatten, view, T, transpose", function()
  local t = tensor.arange(6):reshape{2, 1, 3, 1}
  eq(shape(t:squeeze()), "2,3"); eq(shape(t:squeeze(1)), "2,3,1"); eq(shape(t:squeeze(0)), "2,1,3,1")
  eq(shape(t:unsqueeze(0)), "1,2,1,3,1"); eq(shape(t:unsqueeze(-1)), "2,1,3,1,1")
  eq(shape(t:flatten()), "6"); eq(shape(t:flatten(1, 2)), "2,3,1"); eq(shape(tensor.from(5):flatten()), "1")
  eq(shape(tensor.arange(6):unflatten(0, {2, -1})), "2,3"); eq(shape(t:view(3, 2)), "3,2")
  local m = tensor.from{{1, 2, 3}, {4, 5, 6}}
  near(m.T, {1, 4, 2, 5, 3, 6}); eq(shape(m.T), "3,2")
  raises(function() t:squeeze(4) end, "squeeze", "dim 4 is out of range")
  raises(function() t:unsqueeze(5) end, "unsqueeze", "dim 5 is out of range")
  raises(function() t:flatten(2, 1) end, "flatten", "start_dim 2 is after end_dim 1")
  raises(function() tensor.arange(6):unflatten(0, {4, -1}) end, "unflatten", "do not split")
  raises(function() return tensor.arange(3).T end, "transpose", "axis 1 is out of range for rank 1")
end)

check("cat, stack, split, chunk, meshgrid", function()
  local a, b = tensor.from{{1, 2}, {3, 4}}, tensor.from{{5.5, 6}}
  local c = a:cat(b)
  eq(c.dtype, "float32"); eq(shape(c), "3,2"); near(c, {1, 2, 3, 4, 5.5, 6})
  near(tensor.cat(a, a, {dim = 1}), {1, 2, 1, 2, 3, 4, 3, 4})
  near(tensor.from{-0.0}:cat(tensor.from{nan}), {-0.0, nan})
  eq(1 / tensor.from{-0.0}:cat(tensor.from{1.0}):tolist()[1], -inf, "cat keeps -0.0")
  raises(function() a:cat(tensor.from{1, 2, 3}) end, "cat", "tensor 1 has shape (3,)", "tensor 0 (2, 2)")
  raises(function() a:cat(b, {dim = 2}) end, "cat", "axis 2 is out of range")
  raises(function() a:cat(b, {axis = 0}) end, "cat", "unknown option")
  raises(function() a:cat(5) end, "cat", "not a tensor")
  near(a:stack(a, {dim = 1}), {1, 2, 1, 2, 3, 4, 3, 4}); eq(shape(a:stack(a, {dim = 2})), "2,2,2")
  raises(function() a:stack(b) end, "stack", "must be equal")
  local st = tensor.stack{tensor.from{1, 2}, tensor.from{1.5, 2.5}}
  eq(st.dtype, "float32", "tensor.stack promotes"); near(st, {1, 2, 1.5, 2.5})
  local s = tensor.arange(5):split(2)
  eq(#s, 3); near(s[3], {4}); near(tensor.arange(5):split({1, 4})[2], {1, 2, 3, 4})
  raises(function() tensor.arange(5):split({1, 3}) end, "split", "sum to 4", "has 5")
  raises(function() tensor.arange(5):split(0) end, "split", "at least 1")
  raises(function() tensor.arange(5):split(2, 1) end, "split", "dim 1 is out of range")
  eq(#tensor.arange(5):chunk(3), 3); eq(#tensor.arange(4):chunk(3), 2, "chunk: fewer when they run out")
  raises(function() tensor.arange(5):chunk(0) end, "chunk", "at least 1")
  local g = tensor.arange(3):meshgrid(tensor.arange(2))
  eq(shape(g[1]), "3,2"); near(g[2], {0, 1, 0, 1, 0, 1})
  eq(shape(tensor.arange(3):meshgrid(tensor.arange(2), {indexing = "xy"})[1]), "2,3")
  raises(function() tensor.arange(3):meshgrid(tensor.arange(2), {indexing = "yx"}) end, "meshgrid", "indexing")
end)

check("tile (repeat), repeat_interleave, roll", function()
  local m = tensor.from{1, 2}
  near(m:tile(3), {1, 2, 1, 2, 1, 2}); eq(shape(m:tile(2, 2)), "2,4"); near(m["repeat"](m, 2), {1, 2, 1, 2})
  raises(function() tensor.zeros(2, 2):tile(2) end, "repeat", "one per axis")
  near(m:repeat_interleave(2), {1, 1, 2, 2})
  near(tensor.from{{1, 2}, {3, 4}}:repeat_interleave(2, 0), {1, 2, 1, 2, 3, 4, 3, 4})
  raises(function() m:repeat_interleave(-1) end, "repeat_interleave", "negative")
  near(tensor.arange(5):roll(2), {3, 4, 0, 1, 2}); near(tensor.arange(5):roll(-1), {1, 2, 3, 4, 0})
  near(tensor.arange(6):reshape{2, 3}:roll({1, 1}, {0, 1}), {5, 3, 4, 2, 0, 1})
  raises(function() tensor.arange(5):roll(1, 1) end, "roll", "axis 1 is out of range")
  raises(function() tensor.arange(6):reshape{2, 3}:roll({1, 2}, {0}) end, "roll", "2 shifts for 1 dims")
end)

check("tril, triu, eye, diag, diagonal, one_hot, linspace", function()
  local m = tensor.arange(1, 10):reshape{3, 3}
  near(m:tril(), {1, 0, 0, 4, 5, 0, 7, 8, 9}); near(m:triu(), {1, 2, 3, 0, 5, 6, 0, 0, 9})
  near(m:tril(-1), {0, 0, 0, 4, 0, 0, 7, 8, 0}); near(m:triu(1), {0, 2, 3, 0, 0, 6, 0, 0, 0})
  near(m:triu(100), {0, 0, 0, 0, 0, 0, 0, 0, 0}); near(m:tril(-100), {0, 0, 0, 0, 0, 0, 0, 0, 0})
  raises(function() tensor.arange(3):tril() end, "tril", "at least 2 axes")
  near(tensor.eye(2, 3), {1, 0, 0, 0, 1, 0}); eq(tensor.eye(2).dtype, "float32"); eq(tensor.eye(2, "int8").dtype, "int8")
  raises(function() tensor.eye(-1) end, "tensor.eye", "negative")
  near(tensor.from{1, 2}:diag(), {1, 0, 0, 2}); raises(function() m:diag() end, "diag", "1-D")
  near(m:diagonal(), {1, 5, 9}); near(m:diagonal(1), {2, 6}); near(m:diagonal(-2), {7})
  eq(shape(tensor.zeros(2, 3, 4):diagonal(0, 1, 2)), "2,3")
  raises(function() m:diagonal(0, 1, 1) end, "diagonal", "both 1")
  near(tensor.from{0, 2}:one_hot(3), {1, 0, 0, 0, 0, 1}); eq(tensor.from{1}:one_hot(2).dtype, "int32")
  raises(function() x:one_hot(3) end, "one_hot", "integer tensor")
  near(tensor.linspace(0, 1, 5), {0, 0.25, 0.5, 0.75, 1}); near(tensor.linspace(2, 3, 1), {2})
  raises(function() tensor.linspace(0, 1, -1) end, "linspace", "negative")
end)

-- ---- reductions, scans, sort ----

check("any, all, var, std, logsumexp, argmax, argmin, softmin", function()
  local b = tensor.from{{true, false}, {false, false}}
  eq(b:any():item(), true); eq(b:all():item(), false); near(b:any(1), {true, false}); eq(shape(b:all(0, true)), "1,2")
  eq(tensor.from{1.5, 0}:all().dtype, "bool")
  local mean = 0
  for _, v in ipairs(X) do mean = mean + v / #X end
  local ss = 0
  for _, v in ipairs(X) do ss = ss + (v - mean) ^ 2 end
  near(x:var(), {ss / 7}, 1e-6, "var"); near(x:var(nil, false, 0), {ss / 8}, 1e-6); near(x:std(), {math.sqrt(ss / 7)}, 1e-6)
  near(tensor.from{1, 2, 4}:var(), {7 / 3}, 1e-6, "var of integers (exact: tinygrad truncates)")
  local v, mu = x:var_mean(); near(mu, {mean}, 1e-6); near(v, {ss / 7}, 1e-6)
  eq(shape(x:reshape{2, 4}:std(1, true)), "2,1")
  local lse = 0
  for _, a in ipairs(X) do lse = lse + math.exp(a) end
  near(x:logsumexp(), {math.log(lse)}, 1e-6, "logsumexp")
  near(tensor.from{-inf, -inf}:logsumexp(), {nan})
  near(tensor.from{1, 5, 5, 2}:argmax(), {1}); near(tensor.from{3, 1, 1, 2}:argmin(), {1})
  eq(tensor.from{1, 2}:argmax().dtype, "int32")
  near(tensor.from{{1, 9}, {7, 2}}:argmax(1), {1, 0}); eq(shape(tensor.from{{1, 9}, {7, 2}}:argmax(0, true)), "1,2")
  near(tensor.from({0, 255, 3}, "uint8"):argmin(), {0}); near(tensor.from{true, false}:argmin(), {1})
  raises(function() x:argmax(1) end, "argmax", "axis 1 is out of range")
  near(x:softmin(), (-x):softmax():tolist(), 1e-7)
  raises(function() x:var({0, 1}) end, "axis 1 is out of range")
end)

check("cumprod, cummax, cummin, logcumsumexp against loops", function()
  local v = {2, -1, 3, 3, -2}
  local t = tensor.from(v)
  near(t:cumprod(0), {2, -2, -6, -18, 36}); eq(tensor.from({1, 2}, "int8"):cumprod(0).dtype, "int8")
  local vals, idx = t:cummax(0)
  near(vals, {2, 2, 3, 3, 3}); near(idx, {0, 0, 2, 2, 2}); eq(idx.dtype, "int32")
  vals, idx = t:cummin()
  near(vals, {2, -1, -1, -1, -2}); near(idx, {0, 1, 1, 1, 4})
  local m = tensor.from{{1.0, 2.0}, {3.0, 4.0}}
  near(m:cumprod(1), {1, 2, 3, 12}); near(m:cummax(0), {1, 2, 3, 4})
  local acc, want = 0, {}
  for i, a in ipairs(X) do acc = acc + math.exp(a); want[i] = math.log(acc) end
  near(x:logcumsumexp(), want, 1e-6, "logcumsumexp")
  raises(function() t:cumprod(1) end, "cumprod", "axis 1 is out of range")
  raises(function() t:cumprod() end, "number expected")
end)

check("sort, argsort, topk: values against table.sort, stable indices", function()
  local v = {}
  for i = 1, 12 do v[i] = math.random(-4, 4) end   -- ties
  local t = tensor.from(v)
  local s, i = t:sort()
  local w = {table.unpack(v)}
  table.sort(w)
  near(s, w, nil, "ascending values")
  local iv = flat(i)
  for k = 1, #iv do eq(v[iv[k] + 1], w[k], "index " .. k) end
  for k = 2, #iv do
    if w[k] == w[k - 1] then assert(iv[k] > iv[k - 1], "stable: equal values keep their order") end
  end
  local d = t:sort(0, true)
  table.sort(w, function(a, b) return a > b end)
  near(d, w, nil, "descending")
  near(tensor.from{3, 1, 2, 1}:argsort(), {1, 3, 2, 0}); near(tensor.from{3, 1, 2, 1}:argsort(0, true), {0, 2, 1, 3})
  local tv, ti = tensor.from{{1, 9, 4}, {7, 2, 8}}:topk(2)
  near(tv, {9, 4, 8, 7}); near(ti, {1, 2, 2, 0})
  near(tensor.from{{1, 9}, {7, 2}}:topk(1, 0, false), {1, 2})
  raises(function() t:topk(13) end, "topk", "k = 13 is out of range")
  raises(function() t:sort(1) end, "sort", "axis 1 is out of range")
  raises(function() t:topk(1, 0, true, false) end, "topk", "sorted = false")
  local one, oi = tensor.from{{5}}:sort(); near(one, {5}); near(oi, {0})
end)

-- ---- layers ----

check("normalize, layernorm, batchnorm, linear, dot", function()
  local m = tensor.from{{3.0, 4.0}, {0.0, 0.0}}
  near(m:normalize(), {0.6, 0.8, 0, 0}, 1e-7); near(m:normalize(1, 1), {3 / 7, 4 / 7, 0, 0}, 1e-7)
  local mean, var = 0, 0
  for _, v in ipairs(X) do mean = mean + v / 8 end
  for _, v in ipairs(X) do var = var + (v - mean) ^ 2 / 8 end
  near(x:layernorm(), map(X, function(v) return (v - mean) / math.sqrt(var + 1e-5) end), 1e-5, "layernorm")
  eq(shape(x:reshape{2, 4}:layernorm({0, 1})), "2,4")
  local bx = tensor.arange(12):reshape{2, 3, 2}:float()
  local w, b, mu, inv = tensor.from{1.0, 2.0, 3.0}, tensor.from{0.5, 0, -1}, tensor.from{1.0, 1, 1}, tensor.from{2.0, 1, 0.5}
  local want = {}
  for k, v in ipairs(flat(bx)) do
    local c = ((k - 1) // 2) % 3 + 1
    want[k] = (v - 1) * ({1, 2, 3})[c] * ({2, 1, 0.5})[c] + ({0.5, 0, -1})[c]
  end
  near(bx:batchnorm(w, b, mu, inv), want, 1e-6, "batchnorm")
  local want2 = {}
  for k, v in ipairs(flat(bx)) do want2[k] = (v - 1) * ({2, 1, 0.5})[((k - 1) // 2) % 3 + 1] end
  near(bx:batchnorm(nil, nil, mu, inv), want2, 1e-6, "no weight nor bias")
  raises(function() bx:batchnorm(w, b, tensor.from{1.0, 2.0}, inv) end, "batchnorm", "mean has shape (2,)")
  local W, B = tensor.from{{1.0, 0.0}, {0.0, 2.0}, {1.0, 1.0}}, tensor.from{0.5, -0.5}
  near(tensor.from{{1.0, 2.0, 3.0}}:linear(W, B), {4.5, 6.5})
  near(tensor.from{{1.0, 2.0}}:linear(tensor.from{3.0, 4.0}), {3, 8})
  near(tensor.from{1, 2}:dot(tensor.from{3, 4}), {11})
  raises(function() tensor.from{1, 2}:dot(tensor.from{1, 2, 3}) end, "matmul", "inner sizes differ")
end)

-- attention written out in Lua loops
local function attention(q, k, v, mask)
  local out = {}
  local d = #q[1]
  for i = 1, #q do
    local s, mx = {}, -inf
    for j = 1, #k do
      local a = 0
      for c = 1, d do a = a + q[i][c] * k[j][c] end
      a = a / math.sqrt(d) + (mask and mask(i, j) or 0)
      s[j] = a
      mx = math.max(mx, a)
    end
    local z = 0
    for j = 1, #k do s[j] = math.exp(s[j] - mx); z = z + s[j] end
    out[i] = {}
    for c = 1, #v[1] do
      local a = 0
      for j = 1, #k do a = a + s[j] / z * v[j][c] end
      out[i][c] = a
    end
  end
  return out
end

check("scaled_dot_product_attention against loops: plain, causal, bool and float masks, gqa", function()
  local function mat(r, c) local m = {} for i = 1, r do m[i] = rvals(c, -1, 1) end return m end
  local q, k, v = mat(3, 4), mat(5, 4), mat(5, 2)
  local Q, K, V = tensor.from(q), tensor.from(k), tensor.from(v)
  near(Q:scaled_dot_product_attention(K, V), attention(q, k, v), 1e-5, "plain")
  near(Q:scaled_dot_product_attention(K, V, {is_causal = true}),
       attention(q, k, v, function(i, j) return j <= i and 0 or -inf end), 1e-5, "causal")
  local bm = tensor.from{{true, false, true, true, false}, {true, true, false, false, false}, {false, false, true, true, true}}
  local bl = bm:tolist()
  near(Q:scaled_dot_product_attention(K, V, bm), attention(q, k, v, function(i, j) return bl[i][j] and 0 or -inf end),
       1e-5, "bool mask")
  local fm = mat(3, 5)
  near(Q:scaled_dot_product_attention(K, V, {attn_mask = tensor.from(fm)}),
       attention(q, k, v, function(i, j) return fm[i][j] end), 1e-5, "float mask")
  local q4 = tensor.from{q, q}:reshape{1, 2, 3, 4}
  local k4, v4 = K:reshape{1, 1, 5, 4}, V:reshape{1, 1, 5, 2}
  local g = q4:scaled_dot_product_attention(k4, v4, {enable_gqa = true})
  eq(shape(g), "1,2,3,2"); near(g, {attention(q, k, v), attention(q, k, v)}, 1e-5, "gqa")
  raises(function() Q:scaled_dot_product_attention(K, V, bm, {is_causal = true}) end, "a mask and is_causal")
  raises(function() Q:scaled_dot_product_attention(K, V, {dropout_p = 0.1}) end, "dropout_p must be 0")
  raises(function() Q:scaled_dot_product_attention(K, V, {causal = true}) end, "unknown option", "causal")
  raises(function() q4:scaled_dot_product_attention(tensor.zeros(1, 3, 5, 4), tensor.zeros(1, 3, 5, 2), {enable_gqa = true}) end,
         "enable_gqa", "not a multiple")
  raises(function() Q:scaled_dot_product_attention(tensor.zeros(5, 3), V) end, "matmul", "inner sizes differ")
end)

check("einsum: matmul, transpose, trace, diagonal, batch, outer, ellipsis; bad formulas", function()
  local a, b = tensor.from{{1, 2, 3}, {4, 5, 6}}, tensor.from{{1, 0}, {0, 1}, {1, 1}}
  near(tensor.einsum("ij,jk->ik", a, b), a:matmul(b):tolist())
  near(tensor.einsum("ij,jk", {a, b}), a:matmul(b):tolist(), nil, "implicit output, operands in a table")
  near(tensor.einsum("ij->ji", a), a.T:tolist())
  local sq = tensor.arange(9):reshape{3, 3}
  near(tensor.einsum("ii", sq), {12}, nil, "trace"); near(tensor.einsum("ii->i", sq), {0, 4, 8})
  near(tensor.einsum("i,j->ij", tensor.from{1, 2}, tensor.from{3, 4, 5}), {3, 4, 5, 6, 8, 10})
  near(tensor.einsum("bij,bjk->bik", a:reshape{1, 2, 3}, b:reshape{1, 3, 2}), a:matmul(b):tolist())
  near(tensor.einsum("...ij,...jk", a:reshape{1, 2, 3}, b:reshape{1, 3, 2}), a:matmul(b):tolist())
  near(tensor.einsum("ij,ij->", a, a), {91})
  near(tensor.einsum("iij->ji", tensor.arange(8):reshape{2, 2, 2}), {0, 6, 1, 7}, nil, "diagonal of a 3-D operand")
  raises(function() tensor.einsum("ij,jk->ik", a, a) end, "einsum", "'j' has sizes 3 and 2")
  raises(function() tensor.einsum("ij,jk->ik", a) end, "einsum", "2 inputs, but 1 operands")
  raises(function() tensor.einsum("ij->ix", a) end, "einsum", "'x' of the output is in no input")
  raises(function() tensor.einsum("ij->ii", a) end, "einsum", "twice in the output")
  raises(function() tensor.einsum("i2->i", a) end, "einsum", "'2'")
  raises(function() tensor.einsum("ijk->i", a) end, "einsum", "names 3 axes")
end)

check("losses against their definitions", function()
  local lg = {{1.0, 2.0, 0.5}, {0.1, -1.0, 3.0}}
  local y = {1, 2}
  local function lsm(row, c)
    local z = 0
    for _, v in ipairs(row) do z = z + math.exp(v) end
    return row[c] - math.log(z)
  end
  local ce = {-lsm(lg[1], 2), -lsm(lg[2], 3)}
  local X2, Y = tensor.from(lg), tensor.from(y)
  near(X2:cross_entropy(Y), {(ce[1] + ce[2]) / 2}, 1e-6, "cross_entropy mean")
  near(X2:cross_entropy(Y, {reduction = "none"}), ce, 1e-6)
  near(X2:cross_entropy(Y, {reduction = "sum"}), {ce[1] + ce[2]}, 1e-6)
  local smooth = 0
  for r = 1, 2 do
    for c = 1, 3 do smooth = smooth - lsm(lg[r], c) * ((c == y[r] + 1 and 0.9 or 0) + 0.1 / 3) end
  end
  near(X2:cross_entropy(Y, {label_smoothing = 0.1}), {smooth / 2}, 1e-6, "label smoothing")
  near(X2:cross_entropy(Y:one_hot(3):float()), {(ce[1] + ce[2]) / 2}, 1e-6, "probabilities")
  near(X2:sparse_categorical_crossentropy(Y), {(ce[1] + ce[2]) / 2}, 1e-6)
  near(X2:sparse_categorical_crossentropy(Y, {ignore_index = 2}), {ce[1]}, 1e-6, "ignore_index")
  local lp = X2:log_softmax()
  near(lp:nll_loss(Y), {(ce[1] + ce[2]) / 2}, 1e-6, "nll_loss")
  near(lp:nll_loss(Y, {weight = tensor.from{1.0, 2.0, 4.0}}), {(2 * ce[1] + 4 * ce[2]) / 6}, 1e-6, "weighted")
  near(lp:nll_loss(Y, {ignore_index = 1, reduction = "sum"}), {ce[2]}, 1e-6)
  local p, t = tensor.from{0.2, 0.9}, tensor.from{0.0, 1.0}
  near(p:binary_crossentropy(t), {-(math.log(0.8) + math.log(0.9)) / 2}, 1e-6, "bce")
  local z = tensor.from{-1.0, 2.0}
  local function ls(a) return -math.log(1 + math.exp(-a)) end
  near(z:binary_crossentropy_logits(t, {reduction = "none"}), {-ls(1), -ls(2)}, 1e-6, "bce logits")
  near(z:binary_crossentropy_logits(t, {pos_weight = tensor.from{1.0, 3.0}, reduction = "sum"}), {-ls(1) - 3 * ls(2)}, 1e-6)
  raises(function() X2:cross_entropy(Y, {reduction = "avg"}) end, "cross_entropy", "reduction \"avg\"")
  raises(function() X2:cross_entropy(Y, {label_smoothing = 2}) end, "label_smoothing 2")
  raises(function() X2:cross_entropy(tensor.from{1, 2, 0}) end, "cross_entropy", "logits (2, 3) and targets (3,)")
  raises(function() X2:sparse_categorical_crossentropy(tensor.from{1.0, 2.0}) end, "labels must be integers")
  raises(function() X2:nll_loss(Y, {weight = tensor.from{1.0}}) end, "nll_loss", "weight has shape (1,)")
  raises(function() X2:nll_loss(Y, {wieght = 1}) end, "unknown option", "wieght")
end)

check("random constructors: randn, normal, uniform, randint (seeded, shapes, dtypes, rough moments)", function()
  local r = tensor.randn({4000}, {seed = 3})
  eq(r.dtype, "float32"); local m, v = r:mean():item(), r:var():item()
  assert(math.abs(m) < 0.1 and math.abs(v - 1) < 0.1, ("randn moments %g %g"):format(m, v))
  near(tensor.randn({5}, {seed = 3}), tensor.randn({5}, {seed = 3}):tolist(), 0, "reproducible")
  eq(shape(tensor.randn(2, 3)), "2,3"); eq(tensor.randn({2}, {dtype = "float16"}).dtype, "float16")
  local n = tensor.normal({4000}, {mean = 5, std = 2, seed = 1})
  assert(math.abs(n:mean():item() - 5) < 0.2)
  local u = tensor.uniform({1000}, {low = -2, high = 3, seed = 2})
  assert(u:min():item() >= -2 and u:max():item() < 3)
  local ri = tensor.randint({1000}, {low = 3, high = 6, seed = 4})
  eq(ri.dtype, "int32"); assert(ri:min():item() == 3 and ri:max():item() == 5)
  raises(function() tensor.randn({2}, {dtype = "int32"}) end, "randn", "not a float dtype")
  raises(function() tensor.uniform({2}, {low = 1, high = 1}) end, "uniform", "below high")
  raises(function() tensor.normal({2}, {std = -1}) end, "normal", "std")
  raises(function() tensor.randint({2}, {low = 0.5}) end, "randint", "integers")
  raises(function() tensor.randn({2}, {sed = 1}) end, "unknown option", "sed")
end)

-- ---- kernels ----

local function lowered(build, shapes, tol)
  local params, binds = {}, {}
  for name, sh in pairs(shapes) do
    params[name] = tensor.param(name, sh)
    local n = 1
    for _, d in ipairs(sh) do n = n * d end
    binds[name] = tensor.from(rvals(n, -2, 2)):reshape(sh)
  end
  local t = build(params)
  local k = kernel.lower(t, "out")
  near(k:run(binds), t:realize(binds):tolist(), tol or 1e-5)   -- kernels accumulate in float32, the reference in float64
end

check("lowered to kernels, run as the reference evaluator computes them", function()
  lowered(function(p) return p.x:gelu() + p.x:erf() + p.x:clamp(-1, 1) end, {x = {3, 4}})
  lowered(function(p) return p.x:layernorm() end, {x = {3, 4}})
  lowered(function(p) return p.x:var(1) + p.x:logsumexp(1) end, {x = {3, 4}})
  lowered(function(p) return p.x:argmax(1):float() end, {x = {3, 4}})
  lowered(function(p) return p.x:cat(p.y, {dim = 1}):tril() end, {x = {3, 2}, y = {3, 3}})
  lowered(function(p) return (p.x:sort(1)) end, {x = {2, 5}})
  lowered(function(p) return p.x:cummax(1) end, {x = {2, 5}})
  lowered(function(p) return p.q:scaled_dot_product_attention(p.k, p.v, {is_causal = true}) end,
          {q = {4, 3}, k = {4, 3}, v = {4, 2}}, 1e-5)
  lowered(function(p) return tensor.einsum("ij,kj->ik", p.x, p.y) end, {x = {2, 3}, y = {4, 3}})
  lowered(function(p) return p.x:cross_entropy(tensor.from{0, 2, 1}) end, {x = {3, 4}}, 1e-5)
end)

check("every method has help and is in tensor.methods", function()
  for _, name in ipairs{"abs", "clamp", "clip", "gelu", "sort", "topk", "cat", "split", "chunk", "einsum",
                        "scaled_dot_product_attention", "layernorm", "tril", "argmax", "var", "one_hot", "tile"} do
    assert(type(tensor.methods[name]) == "function" or type(tensor[name]) == "function", name)
  end
  for _, name in ipairs{"eye", "randn", "linspace", "einsum", "cat", "normal", "uniform", "randint"} do
    assert(type(tensor[name]) == "function", "tensor." .. name)
  end
end)

check("conv2d and the pools: values by their definitions, tinygrad's arguments, refusals", function()
  -- x (1, 2, 4, 5), w (2, 2, 2, 3): every output by the definition
  local xs, ws = {}, {}
  for c = 1, 2 do xs[c] = {} for y = 1, 4 do xs[c][y] = {} for x0 = 1, 5 do xs[c][y][x0] = (c * 7 + y * 3 + x0) % 5 - 2 end end end
  for o = 1, 2 do ws[o] = {} for c = 1, 2 do ws[o][c] = {} for y = 1, 2 do ws[o][c][y] = {}
    for x0 = 1, 3 do ws[o][c][y][x0] = (o + 2 * c + 3 * y + x0) % 3 - 1 end end end end
  local x, w = tensor.from({xs}, "float32"), tensor.from(ws, "float32")
  local got = x:conv2d(w, tensor.from({0.5, -1}), {stride = {1, 2}, padding = {1, 0}}):tolist()[1]
  for o = 1, 2 do
    for oy = 1, 5 do
      for ox = 1, 2 do
        local acc = o == 1 and 0.5 or -1.0
        for c = 1, 2 do for ky = 1, 2 do for kx = 1, 3 do
          local y, xx = oy + ky - 2, (ox - 1) * 2 + kx
          if y >= 1 and y <= 4 then acc = acc + xs[c][y][xx] * ws[o][c][ky][kx] end
        end end end
        eq(got[o][oy][ox], acc, ("conv2d[%d][%d][%d]"):format(o, oy, ox))
      end
    end
  end
  -- the pools: default 2x2 windows, stride 2; a 1-D pool over the last axis
  local function row(t) local o = {} for i, v in ipairs(t) do o[i] = ("%g"):format(v) end return table.concat(o, " ") end
  eq(row(x:max_pool2d():tolist()[1][1][1]), "2 2", "max_pool2d")
  eq(row(x:avg_pool2d({3}, {stride = 1}):tolist()[1][1][1]), "0 1 0.333333", "avg_pool 1-D: (-1, 0, 1, 2, -2) in windows of 3")
  raises(function() x:conv2d(w, {padding = {1, 2, 3}}) end, "conv2d: padding must be an integer, 2 integers",
         "or 4 (torch's order")
  local mv, mi = x:max_pool2d(2, {return_indices = true})   -- tests/lua/test_tensor_resample.lua checks the indices
  eq(row(mv:tolist()[1][1][1]), "2 2", "max_pool2d's values with return_indices")
  eq(mi.dtype, "int32", "max_pool2d's indices")
  raises(function() x:avg_pool2d(2, {strides = 1}) end, "avg_pool2d")
  raises(function() x:max_pool2d({9, 1}) end, "is larger than the axis")
  -- unfold: windows along one axis, the window axis last
  local u = tensor.arange(10):reshape{2, 5}:unfold(1, 3, 2):tolist()
  eq(#u[2], 2, "windows")
  eq(table.concat(u[2][2], " "), "7 8 9", "the second window of row 1")
  raises(function() tensor.arange(4):unfold(0, 5, 1) end, "unfold: size 5, step 1 along an axis of 4")
  -- a conv2d is a tensor program: it lowers to a kernel that computes the same numbers
  local k = kernel.lower(tensor.param("x", {1, 2, 4, 5}):conv2d(tensor.param("w", {2, 2, 2, 3})), "y")
  local y = k:run{x = x, w = w}:tolist()
  eq(y[1][2][3][1], x:conv2d(w):tolist()[1][2][3][1], "lowered")
end)

check("hostile arguments: 1500 random calls of every method and constructor raise or build, never crash", function()
  local names, ctors = {}, {"eye", "linspace", "randn", "normal", "uniform", "randint", "einsum", "cat"}
  for k in pairs(tensor.methods) do
    if k ~= "realize" and k ~= "tolist" and k ~= "shards" and k ~= "graph" and k ~= "copy" then names[#names + 1] = k end
  end
  table.sort(names)
  local dts = {"float32", "int32", "bool", "int8", "float16", "uint8"}
  local like = getmetatable(x)
  local function rt()
    local s = {}
    for i = 1, math.random(0, 3) do s[i] = math.random(0, 3) end
    return tensor.rand(s, {seed = math.random(100)}):cast(dts[math.random(#dts)])
  end
  local args = {
    function() return nil end, function() return math.random(-5, 5) end, function() return math.random() * 4 - 2 end,
    function() return {math.random(-3, 3), math.random(-3, 3)} end, function() return "none" end,
    function() return true end, function() return {dim = math.random(-2, 2)} end, function() return {} end,
    function() return "ij,jk->ik" end, function() return math.huge end, rt, rt,
  }
  local function ra() return args[math.random(#args)]() end
  for _ = 1, 1500 do
    local ok, r = pcall(tensor.methods[names[math.random(#names)]], rt(), ra(), ra(), ra(), ra())
    if ok and getmetatable(r) == like and r.numel < 10000 then pcall(r.realize, r) end
    pcall(tensor[ctors[math.random(#ctors)]], ra(), ra(), ra(), ra())
  end
end)

check("rearrange, pad_to, shrink_to, masked_select, nonzero, usum, uprod, the likes and sequential", function()
  local x = tensor.arange(24):reshape{2, 6, 2}
  -- b (h w) c -> (c w) b h against the definition, element by element
  local r = x:rearrange("b (h w) c -> (c w) b h", {h = 3})
  eq(table.concat(r.shape, ","), "4,2,3")
  local v, got = x:tolist(), r:tolist()
  for b = 0, 1 do for h = 0, 2 do for w = 0, 1 do for c = 0, 1 do
    eq(got[c * 2 + w + 1][b + 1][h + 1], v[b + 1][h * 2 + w + 1][c + 1], "rearranged element")
  end end end end
  eq(table.concat(x:rearrange("... c -> c ...").shape, ","), "2,2,6")
  eq(table.concat(x:rearrange("b n c -> 1 b (n c) ()").shape, ","), "1,2,12,1")
  raises(function() x:rearrange("b (h w) c -> b h w c") end,
         "rearrange \"b (h w) c -> b h w c\": h and w split axis 1 of size 6; give one of their sizes")
  raises(function() x:rearrange("b n c -> b n") end, "c is not on the right")
  raises(function() x:rearrange("b n c -> b n c", {q = 2}) end, "axis q is not used in the transform")
  -- pad_to and shrink_to: false or -1 keeps an axis
  eq(table.concat(x:pad_to({3, false, 4}).shape, ","), "3,6,4")
  eq(x:pad_to({3, -1, 4}):tolist()[3][1][1], 0)
  eq(x:shrink_to({1, 2, false}):tolist()[1][2][2], 3)
  raises(function() x:shrink_to({3, 1, 1}) end, "shrink_to: (2, 6, 2) to (3, 1, 1): axis 0 of size 2 cannot shrink to 3")
  -- tinygrad's docstring examples
  local t = tensor.from({{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}, "int32")
  local m = tensor.from({{true, false, true}, {false, true, false}, {false, false, true}})
  eq(table.concat(t:masked_select(m):tolist(), ","), "0,2,4,8")
  eq(table.concat(t:masked_select(m, {size = 6, fill_value = -1}):tolist(), ","), "0,2,4,8,-1,-1")
  eq(table.concat(t:masked_select(m, {size = 2}):tolist(), ","), "0,2")
  local nz = tensor.from({{1, 0}, {0, 2}}, "int32"):nonzero({size = 3, fill_value = -1}):tolist()
  eq(nz[1][1] .. nz[1][2] .. nz[2][1] .. nz[2][2] .. nz[3][1], "0011-1")
  eq(tensor.from({1, 0, 2, 0, 3}):nonzero().dtype, "int32")
  raises(function() t:masked_select(t) end, "masked_select: the mask is int32; it must be bool")
  raises(function() t:masked_select(tensor.param("p", {3, 3}, "bool")) end, "give size")
  -- folds and likes
  eq(table.concat(tensor.from({1, 2}):usum(10, tensor.from({100, 200})):tolist(), ","), "111,212")
  local u = tensor.from({true, false}):uprod(tensor.from({true, true})):tolist()
  eq(tostring(u[1]) .. "," .. tostring(u[2]), "true,false")
  eq(x:const_like(7).dtype, "int32")
  eq(x:clone():tolist()[2][6][2], 23)
  eq(table.concat(x:float():randn_like({seed = 3}).shape, ","), "2,6,2")
  raises(function() x:rand_like() end, "rand_like: the tensor is int32; random values need a float dtype")
  eq(tensor.from({1, 2}):sequential({function(a) return a * 2 end, function(a) return a + 1 end}):tolist()[2], 5)
  -- an unsigned tensor is never below a negative bound (tinygrad compares the numbers)
  eq(table.concat(tensor.from({0, 1, 5}, "uint8"):clamp(-2, 3):tolist(), ","), "0,1,3")
  eq(table.concat(tensor.from({0, 1, 5}, "uint8"):hardtanh():tolist(), ","), "0,1,1")
end)

check("max and min over an empty axis give the dtype's identity, as tinygrad's", function()
  eq(tensor.zeros({0, 2}, "int32"):max(0):tolist()[1], -2147483648)
  eq(tensor.zeros({0, 2}, "int8"):max(0):tolist()[1], -128)
  eq(tensor.zeros({0, 2}, "int32"):min(0):tolist()[1], 2147483647)
  eq(tensor.zeros({0, 2}, "uint8"):max(0):tolist()[1], 0)
  eq(tensor.zeros({0, 2}, "bool"):max(0):tolist()[1], false)
  eq(tensor.zeros({0, 2}):max(0):tolist()[1], -math.huge)
end)

finish()

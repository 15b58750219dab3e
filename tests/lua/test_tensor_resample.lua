-- test_tensor_resample.lua - tinygrad's interpolate, conv_transpose2d, max_pool2d's return_indices,
-- max_unpool2d and scatter_reduce (repl/lua_tensor_resample.c over interp/tensor/tensor_resample.c): the
-- worked examples of tinygrad's docstrings with their values computed here from the definitions, the
-- options, the refusals (each naming the method), and a lowering to a kernel. tests/diff/tinygrad_oracle.py
-- checks the same methods against tinygrad itself (by hand: it needs tinygrad).
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")
local seed = tonumber(os.getenv("TESSEL_SEED") or "") or 7
math.randomseed(seed)

local function flat(x, out)
  out = out or {}
  if type(x) == "userdata" then x = x:tolist() end
  if type(x) == "table" then for _, y in ipairs(x) do flat(y, out) end else out[#out + 1] = x end
  return out
end

-- values within tol (relative, with an absolute floor; nil: exactly), NaN where NaN
local function near(got, want, tol, what)
  local g, w = flat(got), flat(want)
  eq(#g, #w, (what or "value") .. ": count")
  for i = 1, #w do
    local a, b = g[i], w[i]
    if b ~= b then
      if a == a then error(("%s[%d]: got %s, want nan"):format(what or "value", i, tostring(a)), 2) end
    elseif not tol then
      if a ~= b then error(("%s[%d]: got %s, want %s (seed %d)"):format(what or "value", i, tostring(a), tostring(b), seed), 2) end
    elseif math.abs(a - b) > tol * math.max(1, math.abs(b)) then
      error(("%s[%d]: got %.9g, want %.9g (seed %d)"):format(what or "value", i, a, b, seed), 2)
    end
  end
end

local function shape(t) return table.concat(t.shape, ",") end

-- ---- interpolate ----

-- the source coordinate of output o along an axis of in elements resized to out, by mode
local function source(o, n_in, n_out, mode, ac)
  if mode == "nearest" or mode == "nearest-exact" then
    -- tinygrad computes in float32: scale = in / out, then (o [+ 0.5]) * scale truncated
    local sc = string.unpack("f", string.pack("f", n_in / n_out))
    local p = string.unpack("f", string.pack("f", (mode == "nearest" and o or o + 0.5) * sc))
    local i = math.floor(p)
    return i, i, 0
  end
  local p = ac and (n_out > 1 and o * (n_in - 1) / (n_out - 1) or 0) or (o + 0.5) * n_in / n_out - 0.5
  p = math.max(0, math.min(n_in - 1, p))
  return math.floor(p), math.ceil(p), p - math.floor(p)
end

-- a 2-D table resized on both axes, the definition: the weighted sum over the four neighbours
local function resize2(x, h, w, mode, ac)
  local out = {}
  for oy = 0, h - 1 do
    out[oy + 1] = {}
    local y0, y1, fy = source(oy, #x, h, mode, ac)
    for ox = 0, w - 1 do
      local x0, x1, fx = source(ox, #x[1], w, mode, ac)
      out[oy + 1][ox + 1] = (1 - fy) * ((1 - fx) * x[y0 + 1][x0 + 1] + fx * x[y0 + 1][x1 + 1])
                            + fy * ((1 - fx) * x[y1 + 1][x0 + 1] + fx * x[y1 + 1][x1 + 1])
    end
  end
  return out
end

check("interpolate: tinygrad's docstring and every mode against the definition", function()
  local v = {{1, 2, 3, 4}, {21, 22, 23, 24}, {41, 42, 43, 44}}
  local t = tensor.from(v, "float32")
  local r = t:interpolate({2, 3})
  eq(shape(r), "2,3")
  near(r, {{37 / 6, 7.5, 53 / 6}, {217 / 6, 37.5, 233 / 6}}, 1e-6, "linear (2, 3)")
  for _, mode in ipairs{"linear", "nearest", "nearest-exact"} do
    for _, ac in ipairs(mode == "linear" and {false, true} or {false}) do
      for _ = 1, 6 do
        local h, w = math.random(2, 7), math.random(2, 7)
        near(t:interpolate({h, w}, {mode = mode, align_corners = ac}), resize2(v, h, w, mode, ac), 1e-6,
             ("%s%s to (%d, %d)"):format(mode, ac and " align_corners" or "", h, w))
      end
    end
  end
  -- the last #size axes only: a batch axis in front stays; integers keep their dtype (truncated)
  local b = tensor.from({v, v}, "int32"):interpolate({5})
  eq(shape(b), "2,3,5")
  eq(b.dtype, "int32")
  eq(table.concat(b:tolist()[2][1], " "), "1 1 2 3 4", "int32 linear: 1, 1.7, 2.5, 3.3, 4 truncated")
  near(tensor.from{1.0, 2.0, 3.0}:interpolate({6}, {mode = "nearest"}), {1, 1, 2, 2, 3, 3})
  near(tensor.from{1.0, 2.0, 3.0, 4.0}:interpolate({3}, {mode = "nearest-exact"}), {1, 3, 4}, nil,
       "nearest-exact: int((o + 0.5) 4/3) = 0, 2, 3")
  near(tensor.from{1.0, 2.0, 3.0, 4.0}:interpolate({3}, {mode = "nearest"}), {1, 2, 3}, nil,
       "nearest: int(o 4/3) = 0, 1, 2")
  -- align_corners with one output divides 0 by 0, as tinygrad's does
  near(tensor.from{1.0, 2.0}:interpolate({1}, {align_corners = true}), {0 / 0})
end)

check("interpolate: refusals name the method and the argument", function()
  local t = tensor.ones(2, 3)
  raises(function() t:interpolate({3}, {mode = "bilinear"}) end,
         "interpolate: mode \"bilinear\" is not one of linear, nearest, nearest-exact")
  raises(function() t:interpolate({3}, {mode = "nearest", align_corners = true}) end,
         "interpolate: align_corners is for mode linear only")
  raises(function() t:interpolate({3, 3, 3}) end, "interpolate: 3 sizes for a tensor of shape (2, 3)")
  raises(function() t:interpolate(3) end, "interpolate: size must be a table of integers")
  raises(function() t:interpolate({3}, {modes = "linear"}) end, "interpolate: unknown option 'modes'")
  raises(function() t:interpolate({-2}) end, "interpolate: size -2 for axis 1")
end)

-- ---- conv_transpose2d ----

-- the definition on 4-D tables: each input element scatters the taps of the weight
local function conv_t(x, w, o)
  local s, d, pb, pa, op, groups = o.s or {1, 1}, o.d or {1, 1}, o.pb or {0, 0}, o.pa or {0, 0}, o.op or {0, 0}, o.groups or 1
  local B, CI, H, W = #x, #x[1], #x[1][1], #x[1][1][1]
  local RC, KH, KW = #w[1], #w[1][1], #w[1][1][1]
  local cpg = CI // groups
  local OH = (H - 1) * s[1] - pb[1] - pa[1] + d[1] * (KH - 1) + 1 + op[1]
  local OW = (W - 1) * s[2] - pb[2] - pa[2] + d[2] * (KW - 1) + 1 + op[2]
  local out = {}
  for b = 1, B do
    out[b] = {}
    for oc = 1, groups * RC do
      out[b][oc] = {}
      for y = 1, OH do out[b][oc][y] = {} for xx = 1, OW do out[b][oc][y][xx] = o.bias and o.bias[oc] or 0 end end
    end
    for c = 1, CI do
      local g = (c - 1) // cpg
      for j = 1, RC do
        for i = 0, H - 1 do for i2 = 0, W - 1 do for ky = 0, KH - 1 do for kx = 0, KW - 1 do
          local y, xx = i * s[1] + ky * d[1] - pb[1], i2 * s[2] + kx * d[2] - pb[2]
          if y >= 0 and y < OH and xx >= 0 and xx < OW then
            local row = out[b][g * RC + j][y + 1]
            row[xx + 1] = row[xx + 1] + x[b][c][i + 1][i2 + 1] * w[c][j][ky + 1][kx + 1]
          end
        end end end end
      end
    end
  end
  return out
end

local function rtab(dims, lo, hi)
  if #dims == 0 then return math.random(lo, hi) end
  local t, rest = {}, {table.unpack(dims, 2)}
  for i = 1, dims[1] do t[i] = rtab(rest, lo, hi) end
  return t
end

check("conv_transpose2d: tinygrad's docstring, options against the definition", function()
  local x = tensor.arange(9):reshape{1, 1, 3, 3}
  local r = x:conv_transpose2d(tensor.ones(1, 1, 2, 2))
  eq(r.dtype, "float32", "int32 input, float32 weight")
  near(r, {{{{0, 1, 3, 2}, {3, 8, 12, 7}, {9, 20, 24, 13}, {6, 13, 15, 8}}}}, nil, "docstring")
  for trial = 1, 12 do
    local groups, cpg, rc = math.random(1, 2), math.random(1, 2), math.random(1, 2)
    local kh, kw = math.random(1, 3), math.random(1, 3)
    local o = {groups = groups, s = {math.random(1, 3), math.random(1, 2)}, d = {math.random(1, 2), 1}}
    o.pb = {math.random(0, (kh - 1) * o.d[1]), math.random(0, kw - 1)}
    o.pa = {math.random(0, (kh - 1) * o.d[1] - o.pb[1]), math.random(0, kw - 1 - o.pb[2])}
    o.op = {math.random(0, math.max(o.s[1], o.d[1]) - 1), math.random(0, o.s[2] - 1)}
    local xs = rtab({math.random(1, 2), groups * cpg, math.random(1, 3), math.random(1, 3)}, -3, 3)
    local ws = rtab({groups * cpg, rc, kh, kw}, -3, 3)
    local opts = {groups = groups, stride = o.s, dilation = o.d, output_padding = o.op,
                  padding = {o.pb[2], o.pa[2], o.pb[1], o.pa[1]}}   -- torch's order: the last axis first
    local bias
    if trial % 2 == 0 then
      o.bias = rtab({groups * rc}, -3, 3)
      bias = tensor.from(o.bias, "int32")
    end
    local got = tensor.from(xs, "int32"):conv_transpose2d(tensor.from(ws, "int32"), bias, opts)
    eq(got.dtype, "int32")
    near(got, conv_t(xs, ws, o), nil, "trial " .. trial)
  end
  -- padding as one integer and as one an axis; 1-D
  local xs, ws = rtab({1, 2, 3, 4}, -3, 3), rtab({2, 1, 2, 3}, -3, 3)
  near(tensor.from(xs):conv_transpose2d(tensor.from(ws), {padding = 1}), conv_t(xs, ws, {pb = {1, 1}, pa = {1, 1}}))
  near(tensor.from(xs):conv_transpose2d(tensor.from(ws), {padding = {1, 2}, stride = 2}),
       conv_t(xs, ws, {pb = {1, 2}, pa = {1, 2}, s = {2, 2}}))
  near(tensor.from{{{1, 2, 3}}}:conv_transpose2d(tensor.from{{{1, 10}}}, {stride = 2}), {{{1, 10, 2, 20, 3, 30}}}, nil, "1-D")
end)

check("conv_transpose2d: refusals", function()
  local x, w = tensor.ones(1, 2, 3, 3), tensor.ones(2, 1, 2, 2)
  raises(function() x:conv_transpose2d(tensor.ones(1, 1, 2, 2)) end,
         "conv_transpose2d: input (1, 2, 3, 3), weight (1, 1, 2, 2), groups 1: the input needs the weight's 1 channels")
  raises(function() x:conv_transpose2d(w, tensor.ones(3)) end, "conv_transpose2d: the bias has shape (3,)")
  raises(function() x:conv_transpose2d(w, {stride = {1, 2, 3}}) end, "conv_transpose2d: stride must be an integer or a table of 2")
  raises(function() x:conv_transpose2d(w, {padding = 9}) end, "conv_transpose2d:")
  raises(function() x:conv_transpose2d(w, {output_pad = 1}) end, "conv_transpose2d: unknown option 'output_pad'")
  raises(function() x:conv_transpose2d(w, 5) end, "conv_transpose2d: bias must be a tensor or nil")
end)

-- ---- max_pool2d's indices and max_unpool2d ----

check("max_pool2d with return_indices and max_unpool2d: tinygrad's docstring, ties, options", function()
  local t = tensor.arange(1, 17):reshape{1, 1, 4, 4}
  local o, i = t:max_pool2d(2, {return_indices = true})
  near(o, {{{{6, 8}, {14, 16}}}})
  near(i, {{{{5, 7}, {13, 15}}}})
  eq(i.dtype, "int32")
  near(o:max_unpool2d(i), {{{{0, 0, 0, 0}, {0, 6, 0, 8}, {0, 0, 0, 0}, {0, 14, 0, 16}}}})
  -- ties: the first maximum in the flat order of the input; padding never wins
  local x = tensor.from({{{{3, 1, 3}, {3, 3, 0}, {2, 3, 3}}}}, "float32")
  local v2, i2 = x:max_pool2d(2, {stride = 1, return_indices = true})
  near(v2, {{{{3, 3}, {3, 3}}}})
  near(i2, {{{{0, 2}, {3, 4}}}})
  local v3, i3 = x:max_pool2d(2, {padding = 1, return_indices = true})
  near(i3, {{{{0, 2}, {3, 4}}}}, nil, "padding 1: windows {0}, {1, 2}, {3, 6}, {4, 5, 7, 8}")
  near(v3, {{{{3, 3}, {3, 3}}}})
  -- ceil_mode: a last partial window
  local v4, i4 = tensor.arange(10):reshape{1, 1, 10}:max_pool2d({3}, {ceil_mode = true, return_indices = true})
  near(v4, {{{2, 5, 8, 9}}})
  near(i4, {{{2, 5, 8, 9}}})
  -- unpool into output_size (all of x's shape, or its spatial part): the inverse on the maxima
  local u = v2:max_unpool2d(i2, 2, {stride = 1, output_size = {1, 1, 3, 3}})
  near(u, {{{{3, 0, 3}, {3, 3, 0}, {0, 0, 0}}}}, nil, "overlapping windows: one maximum each")
  near(v2:max_unpool2d(i2, 2, {stride = 1, output_size = {3, 3}}), u)
  -- an index past the output is dropped, a repeated one adds up
  near(tensor.from{{{1.0, 2.0, 4.0}}}:max_unpool2d(tensor.from{{{1, 1, 7}}}, 2), {{{0, 3, 0, 0, 0, 0}}}, nil,
       "1-D: an output of (3 - 1) 2 + 2 = 6")
end)

check("max_unpool2d: refusals", function()
  local o, i = tensor.arange(1, 17):reshape{1, 1, 4, 4}:max_pool2d(2, {return_indices = true})
  raises(function() o:max_unpool2d(i:float()) end, "max_unpool2d: the indices are float32, not an integer tensor")
  raises(function() o:max_unpool2d(i:reshape{1, 1, 4}) end, "max_unpool2d: the indices have shape (1, 1, 4) and the input (1, 1, 2, 2)")
  raises(function() o:max_unpool2d(i, 2, {output_size = {4}}) end, "max_unpool2d: output_size has 1 values for 2 spatial axes")
  raises(function() o:max_unpool2d(i, {2, 2, 2}) end, "max_unpool2d: kernel_size must be an integer or a table of 2")
  raises(function() o:max_unpool2d(i, 2, {ceil_mode = true}) end, "max_unpool2d: unknown option 'ceil_mode'")
  raises(function() tensor.ones(4):max_unpool2d(tensor.zeros({4}, "int32")) end, "max_unpool2d: the input has shape (4,)")
end)

-- ---- scatter_reduce ----

check("scatter_reduce: tinygrad's docstring in every mode, include_self", function()
  local src = tensor.arange(1, 11):cast("float32"):reshape{2, 5}
  local index = tensor.zeros({2, 5}, "int32")
  local ones = tensor.ones({1, 5})
  near(ones:scatter_reduce(0, index, src, "sum"), {{8, 10, 12, 14, 16}})
  near(ones:scatter_reduce(0, index, src, "prod"), {{6, 14, 24, 36, 50}})
  near(ones:scatter_reduce(0, index, src, "mean", {include_self = false}), {{3.5, 4.5, 5.5, 6.5, 7.5}})
  near(ones:scatter_reduce(0, index, src, "mean"), {{8 / 3, 10 / 3, 4, 14 / 3, 16 / 3}}, 1e-6)
  local b = tensor.from({{-10, 20, 0, 5, 10}}, "float32")
  near(b:scatter_reduce(0, index, src, "amax"), {{6, 20, 8, 9, 10}})
  near(b:scatter_reduce(0, index, src, "amin"), {{-10, 2, 0, 4, 5}})
  near(b:scatter_reduce(0, index, src, "amin", {include_self = false}), {{1, 2, 3, 4, 5}})
  -- along dim 1, where some targets get nothing: they keep x (sum: x + nothing)
  local x = tensor.from({{1, 1, 1, 1}, {2, 2, 2, 2}}, "int32")
  local idx = tensor.from({{0, 0, 3}, {1, 1, 1}}, "int32")
  local s = tensor.from({{5, 6, 7}, {-1, 4, 9}}, "int32")
  near(x:scatter_reduce(1, idx, s, "sum"), {{12, 1, 1, 8}, {2, 14, 2, 2}})
  near(x:scatter_reduce(-1, idx, s, "sum", {include_self = false}), {{11, 1, 1, 7}, {2, 12, 2, 2}})
  near(x:scatter_reduce(1, idx, s, "prod"), {{30, 1, 1, 7}, {2, -72, 2, 2}})
  near(x:scatter_reduce(1, idx, s, "amax", {include_self = false}), {{6, 1, 1, 7}, {2, 9, 2, 2}})
  near(x:scatter_reduce(1, idx, s, "amin"), {{1, 1, 1, 1}, {2, -1, 2, 2}})
  local m = x:scatter_reduce(1, idx, s, "mean")
  eq(m.dtype, "float32", "the mean of integers")
  near(m, {{4, 1, 1, 4}, {2, 3.5, 2, 2}})
  eq(x:scatter_reduce(1, idx, s, "amax").dtype, "int32")
  -- nothing lands: x in every mode, the identities are the dtype's (int32's min for amax)
  local none = tensor.zeros({2, 0}, "int32")
  for _, r in ipairs{"sum", "prod", "amax", "amin"} do
    near(tensor.from({{-5, 7}, {0, 3}}, "int32"):scatter_reduce(1, none, none, r, {include_self = false}), {{-5, 7}, {0, 3}}, nil, r)
  end
end)

check("scatter_reduce: refusals", function()
  local x, idx, src = tensor.ones({2, 3}), tensor.zeros({1, 3}, "int32"), tensor.ones({1, 3})
  raises(function() x:scatter_reduce(0, idx, src, "max") end,
         "scatter_reduce: reduce \"max\" is not one of sum, prod, mean, amax, amin")
  raises(function() x:scatter_reduce(0, idx, src:int(), "sum") end, "scatter_reduce: the tensor is float32 and src int32")
  raises(function() x:scatter_reduce(0, idx:float(), src, "sum") end, "scatter_reduce: the index is float32")
  raises(function() x:scatter_reduce(2, idx, src, "sum") end, "scatter_reduce: axis 2 is out of range for rank 2")
  raises(function() x:scatter_reduce(0, tensor.zeros({1, 4}, "int32"), src, "sum") end,
         "scatter_reduce: the index (1, 4) does not fit at axis 1: src is (1, 3) and the tensor (2, 3)")
  raises(function() x:scatter_reduce(0, idx, src, 3) end, "scatter_reduce: reduce must be a string")
  raises(function() x:scatter_reduce(0, idx, src, "sum", {include = true}) end, "scatter_reduce: unknown option 'include'")
end)

check("the new methods lower to kernels that compute the reference's values", function()
  local x, w = tensor.from(rtab({1, 2, 3, 3}, -3, 3), "float32"), tensor.from(rtab({2, 1, 2, 2}, -3, 3), "float32")
  local k = kernel.lower(tensor.param("x", {1, 2, 3, 3}):conv_transpose2d(tensor.param("w", {2, 1, 2, 2}), {stride = 2}), "y")
  near(k:run{x = x, w = w}, x:conv_transpose2d(w, {stride = 2}), 1e-6, "conv_transpose2d")
  local t = tensor.from(rtab({2, 3, 4}, -9, 9), "float32")
  k = kernel.lower(tensor.param("t", {2, 3, 4}):interpolate({5, 3}), "y")
  near(k:run{t = t}, t:interpolate({5, 3}), 1e-6, "interpolate")
  local i = tensor.from(rtab({2, 4}, 0, 2), "int32")
  k = kernel.lower(tensor.param("t", {3, 4}):scatter_reduce(0, tensor.param("i", {2, 4}, "int32"),
                   tensor.param("s", {2, 4}), "amax", {include_self = false}), "y")
  local a, s = tensor.from(rtab({3, 4}, -9, 9), "float32"), tensor.from(rtab({2, 4}, -9, 9), "float32")
  near(k:run{t = a, i = i, s = s}, a:scatter_reduce(0, i, s, "amax", {include_self = false}), nil, "scatter_reduce")
end)

check("help lists every option", function()
  -- help(f) prints: run it in a child tessel for each method
  local exe = assert(arg and arg[-1], "arg[-1] names the interpreter")
  local want = {interpolate = {"mode", "align_corners", "nearest-exact"},
                conv_transpose2d = {"groups", "stride", "dilation", "padding", "output_padding"},
                max_unpool2d = {"kernel_size", "stride", "dilation", "padding", "output_size"},
                scatter_reduce = {"include_self", "sum", "prod", "mean", "amax", "amin"},
                max_pool2d = {"stride", "dilation", "padding", "ceil_mode", "return_indices"}}
  for name, opts in pairs(want) do
    local p = assert(io.popen(exe .. " -e \"help(tensor.methods." .. name .. ")\""))
    local text = p:read("a")
    p:close()
    for _, o in ipairs(opts) do assert(text:find(o, 1, true), name .. "'s help lacks " .. o) end
  end
end)

finish()

-- test_tensor_compose.lua - the spec's compositions as tinygrad's Tensor methods: minimum, min, sum's
-- dtypes, cumsum, gather, scatter_add, pad with values and negative amounts, batched matmul, arange
-- with floats, printing unbound tensors. Expected values are tinygrad 0.14's (CPU device), checked
-- once by a randomized differential run (not committed: the suite stays C and Lua); the property
-- checks compare with loops written here, on seeded random tensors.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")
local seed = tonumber(os.getenv("TESSEL_SEED") or "") or 16
math.randomseed(seed)

-- nested tables compare by their printed form; floats within tol
local function same(got, want, what, tol)
  if type(want) == "table" then
    eq(#got, #want, (what or "value") .. ": length")
    for i = 1, #want do same(got[i], want[i], (what or "value") .. "[" .. i .. "]", tol) end
    return
  end
  if type(want) == "number" and type(got) == "number" then
    local bad = got ~= want
    if tol and want == want and math.abs(want) ~= math.huge then bad = math.abs(got - want) > tol * math.max(1, math.abs(want)) end
    if bad then error(("%s: got %.17g, want %.17g (seed %d)"):format(what or "value", got, want, seed), 2) end
    return
  end
  eq(got, want, (what or "value") .. " (seed " .. seed .. ")")
end

-- a flat list of a tensor's values and a way to index it row-major
local function flat(t)
  local out = {}
  local function walk(x) if type(x) == "table" then for _, y in ipairs(x) do walk(y) end else out[#out + 1] = x end end
  walk(t:tolist())
  return out
end
local function strides(shape)
  local s, acc = {}, 1
  for k = #shape, 1, -1 do s[k] = acc; acc = acc * shape[k] end
  return s
end
local function numel(shape) local n = 1 for _, d in ipairs(shape) do n = n * d end return n end
-- coordinates (0-based) of flat index i in shape
local function coords(i, shape)
  local c = {}
  for k = #shape, 1, -1 do c[k] = i % shape[k]; i = i // shape[k] end
  return c
end
local function at(vals, shape, c)
  local st, i = strides(shape), 0
  for k = 1, #shape do i = i + c[k] * st[k] end
  return vals[i + 1]
end
local function rshape(rank, lo, hi)
  local s = {}
  for k = 1, rank do s[k] = math.random(lo or 1, hi or 4) end
  return s
end
local RANGE = { int8 = {-128, 127}, int16 = {-32768, 32767}, int32 = {-2147483648, 2147483647},
                uint8 = {0, 255}, uint16 = {0, 65535}, uint32 = {0, 4294967295} }
local function rvalues(n, dtype)
  local r, v = RANGE[dtype], {}
  for i = 1, n do
    if dtype == "bool" then v[i] = math.random() < 0.5
    elseif not r then v[i] = math.random(-40, 40) / 4
    elseif math.random() < 0.2 then v[i] = r[math.random(2)]
    else v[i] = math.random(r[1], r[2]) end
  end
  return v
end
local function rtensor(shape, dtype)
  local v = rvalues(numel(shape), dtype)
  local function nestv(k, off)
    if k > #shape then return v[off + 1] end
    local t, inner = {}, numel({table.unpack(shape, k + 1)})
    for i = 0, shape[k] - 1 do t[i + 1] = nestv(k + 1, off + i * inner) end
    return t
  end
  if #shape == 0 then return tensor.from(v[1], dtype), v end
  return tensor.from(nestv(1, 0), dtype), v
end
-- wrap an integer to a dtype's width
local function wrap(x, dtype)
  local r = RANGE[dtype]
  if not r then return x end
  local m = r[2] - r[1] + 1
  return (x - r[1]) % m + r[1]
end

check("minimum: tinygrad's values, no overflow at the ends of the dtype", function()
  same(tensor.from{-1, 2, 3}:minimum(tensor.from{-4, -2, 9}):tolist(), {-4, -2, 3})
  same(tensor.from({0, 5}, "uint8"):minimum(3):tolist(), {0, 3})
  same(tensor.from({-128, 127, 5}, "int8"):minimum(tensor.from({127, -128, -3}, "int8")):tolist(), {-128, -128, -3})
  same(tensor.from{true, false}:minimum(true):tolist(), {true, false})
  same(tensor.minimum(tensor.from{1.5, -2.0}, 0):tolist(), {0, -2})
  eq(tensor.from({1}, "int8"):minimum(tensor.from({1}, "uint8")).dtype, "int16")
  raises(function() return tensor.from{1, 2, 3}:minimum(tensor.from{1, 2}) end, "minimum: shapes (3,) and (2,)")
  -- property: against math.min on random tensors of every integer dtype, extremes included
  for _, dt in ipairs{"int8", "int16", "int32", "uint8", "uint16", "uint32", "float32"} do
    for _ = 1, 5 do
      local shape = rshape(math.random(1, 3))
      local a, va = rtensor(shape, dt)
      local b, vb = rtensor(shape, dt)
      local got = flat(a:minimum(b))
      for i = 1, #va do same(got[i], math.min(va[i], vb[i]), dt .. " minimum " .. i) end
    end
  end
end)

check("min over axes: ~max(~x) for integers (unsigned 0 and INT_MIN were wrong)", function()
  same(tensor.from({0, 5}, "uint8"):min():item(), 0)
  same(tensor.from({-128, 5}, "int8"):min():item(), -128)
  same(tensor.from({{-32768, 5}, {3, 32767}}, "int16"):min(1):tolist(), {-32768, 3})
  same(tensor.from{true, false}:min():item(), false)
  for _, dt in ipairs{"int8", "uint8", "int16", "uint16", "int32", "uint32", "float32"} do
    for _ = 1, 5 do
      local shape = rshape(2)
      local a, v = rtensor(shape, dt)
      local got = a:min(1):tolist()
      for i = 1, shape[1] do
        local m = math.huge
        for j = 1, shape[2] do m = math.min(m, v[(i - 1) * shape[2] + j]) end
        same(got[i], m, dt .. " min row " .. i)
      end
    end
  end
end)

check("sum accumulates as tinygrad's sum_acc_dtype: int8, int16 -> int32; uint8, uint16 -> uint32", function()
  local s = tensor.from({100, 100}, "int8"):sum()
  eq(s.dtype, "int32"); eq(s:item(), 200)
  s = tensor.from({60000, 60000}, "uint16"):sum()
  eq(s.dtype, "uint32"); eq(s:item(), 120000)
  eq(tensor.from({30000, 30000, -32768}, "int16"):sum():item(), 27232)
  s = tensor.from({{255, 255}, {1, 2}}, "uint8"):sum(1, true)
  eq(s.dtype, "uint32"); same(s:tolist(), {{510}, {3}})
  eq(tensor.from{true, true, false}:sum().dtype, "int32")
  eq(tensor.from({1, 2}, "float16"):sum().dtype, "float16")
  eq(tensor.from({1, 2}, "int64"):sum().dtype, "int64")
  eq(tensor.from({1, 2}, "uint32"):sum().dtype, "uint32")
  -- the graph: the spec's Reduce of a Cast
  local g = tostring(tensor.from({1, 2}, "int8"):sum():graph())
  assert(g:find("cast%s+int32") and g:find("reduce%s+int32"), g)
  -- mean of integers is float32, from the wide sum
  local m = tensor.from({255, 255, 1}, "uint8"):mean()
  eq(m.dtype, "float32"); same(m:item(), 170.33334350585938, "mean", 1e-7)
  -- property: sums of narrow integers at their extremes never wrap
  for _, dt in ipairs{"int8", "uint8", "int16", "uint16"} do
    for _ = 1, 8 do
      local shape = rshape(2, 1, 40)
      local a, v = rtensor(shape, dt)
      local want = 0
      for i = 1, #v do want = want + v[i] end
      same(a:sum():item(), want, dt .. " sum")
    end
  end
end)

check("cumsum: the spec's prefix_sum on any axis, in sum's dtype", function()
  local c = tensor.from({100, 100, 100}, "int8"):cumsum()
  eq(c.dtype, "int32"); same(c:tolist(), {100, 200, 300})
  same(tensor.from{true, false, true}:cumsum():tolist(), {1, 1, 2})
  same(tensor.from({250, 10}, "uint8"):cumsum():tolist(), {250, 260})
  same(tensor.from{{1, 2, 3}, {4, 5, 6}}:cumsum(1):tolist(), {{1, 3, 6}, {4, 9, 15}})
  same(tensor.from{{1, 2, 3}, {4, 5, 6}}:cumsum(0):tolist(), {{1, 2, 3}, {5, 7, 9}})
  same(tensor.from{{1, 2, 3}, {4, 5, 6}}:cumsum(-1):tolist(), {{1, 3, 6}, {4, 9, 15}})
  same(tensor.from{2.5, -1.0}:cumsum():tolist(), {2.5, 1.5})
  eq(tensor.from(3):cumsum():item(), 3)
  raises(function() return tensor.from{1, 2}:cumsum(1) end, "axis 1 is out of range for rank 1")
  -- past 512 elements: tinygrad's two stages give the same values
  local long = flat(tensor.arange(1500):cumsum())
  for i = 1, 1500 do if long[i] ~= (i - 1) * i // 2 then error("cumsum of arange(1500) at " .. i) end end
  -- property: against a loop, on random shapes and axes, short and long
  for trial = 1, 12 do
    local rank = math.random(1, 3)
    local shape = rshape(rank, 1, 4)
    local ax = math.random(0, rank - 1)
    if trial % 4 == 0 then shape[ax + 1] = math.random(513, 800) end
    local dt = ({"int8", "int32", "uint8", "float32"})[math.random(4)]
    local a, v = rtensor(shape, dt)
    local got = flat(a:cumsum(ax))
    for i = 0, #v - 1 do
      local c = coords(i, shape)
      local acc = 0
      for k = 0, c[ax + 1] do
        local cc = {table.unpack(c)}; cc[ax + 1] = k
        acc = acc + at(v, shape, cc)
      end
      if dt ~= "float32" then acc = wrap(acc, dt:find("^u") and "uint32" or "int32") end
      same(got[i + 1], acc, ("cumsum %s axis %d at %d"):format(dt, ax, i), dt == "float32" and 1e-5 or nil)
    end
  end
end)

-- the spec's own compositions (tinygrad-spec.tex), written out
local function spec_arange(n)
  local function prefix_sum(T)
    local m = T.shape[1]
    local x = T:pad{{m - 1, 0}}
    x = x:reshape{1, 2 * m - 1}:expand{m + 1, 2 * m - 1}
    x = x:reshape{(m + 1) * (2 * m - 1)}:shrink{{0, 2 * m * m}}
    x = x:reshape{m, 2 * m}:shrink{{0, m}, {0, m}}
    return x:sum(-1)
  end
  return prefix_sum(tensor.from(1):reshape{1}:expand{n}) - 1
end
local function spec_gather(T, idx)
  local K = T.shape[1]
  local mask = spec_arange(K):reshape{K, 1}:eq(idx:reshape{1, -1}):cast(T.dtype)
  return (T:reshape{K, 1} * mask):sum(0)
end
local function spec_scatter_add(T, idx, val)
  local K, D = T.shape[1], idx.shape[1]
  local mask = spec_arange(K):reshape{K, 1}:eq(idx:reshape{1, D}):cast(T.dtype)
  return T + (mask * val:reshape{1, D}):sum(1)
end

check("gather(dim, index): tinygrad's, and the spec's gather in 1-D", function()
  same(tensor.from{{1, 2}, {3, 4}}:gather(1, tensor.from{{0, 0}, {1, 0}}):tolist(), {{1, 1}, {4, 3}})
  same(tensor.from{{1, 2}, {3, 4}, {5, 6}}:gather(0, tensor.from{{2, 0}, {1, 1}}):tolist(), {{5, 2}, {3, 4}})
  -- an index outside the axis selects nothing
  same(tensor.from{{1, 2}, {3, 4}}:gather(1, tensor.from{{5, -1}, {1, 0}}):tolist(), {{0, 0}, {4, 3}})
  eq(tensor.from({{1, 2}, {3, 4}}, "int8"):gather(1, tensor.from{{0, 0}, {1, 0}}).dtype, "int8")
  local T, idx = tensor.from{10, 20, 30, 40}, tensor.from{3, 0, 0, 2}
  same(T:gather(0, idx):tolist(), {40, 10, 10, 30})
  same(T:gather(0, idx):tolist(), spec_gather(T, idx):tolist())
  raises(function() return T:gather(0, tensor.from{1.0}) end, "gather: the index is float32, not an integer tensor")
  raises(function() return T:gather(0, tensor.from{{1}}) end, "gather: the index has rank 2 and the tensor rank 1")
  raises(function() return tensor.zeros(2, 2):gather(0, tensor.zeros({3, 3}, "int32")) end,
         "gather: the index (3, 3) is larger than the tensor (2, 2) at axis 1")
  -- property: against a loop
  for _ = 1, 15 do
    local rank = math.random(1, 3)
    local shape = rshape(rank)
    local d = math.random(0, rank - 1)
    local ishape = {}
    for k = 1, rank do ishape[k] = k == d + 1 and math.random(1, 5) or math.random(1, shape[k]) end
    local a, v = rtensor(shape, "int32")
    local iv = {}
    for i = 1, numel(ishape) do iv[i] = math.random(-1, shape[d + 1]) end
    local idx = tensor.from(iv):reshape(ishape)
    local got = flat(a:gather(d - rank, idx))
    for i = 0, #iv - 1 do
      local c = coords(i, ishape)
      local j = iv[i + 1]
      local want = 0
      if j >= 0 and j < shape[d + 1] then c[d + 1] = j; want = at(v, shape, c) end
      same(got[i + 1], want, "gather at " .. i)
    end
  end
end)

check("scatter_add(dim, index, src): torch's, and the spec's scatter_add in 1-D", function()
  local r = tensor.ones({3, 3}, "int8"):scatter_add(0, tensor.from{{0, 1, 2}, {0, 0, 0}},
                                                    tensor.from({{1, 2, 3}, {4, 5, 6}}, "int8"))
  eq(r.dtype, "int32")
  same(r:tolist(), {{6, 6, 7}, {1, 3, 1}, {1, 1, 4}})
  same(tensor.zeros(2, 4):scatter_add(1, tensor.from{{3, 0, 3}, {1, 1, 1}}, tensor.from{{1.0, 2, 3}, {4, 5, 6}})
       :tolist(), {{2, 0, 0, 4}, {0, 15, 0, 0}})
  local T, idx, val = tensor.from{1, 1, 1}, tensor.from{0, 2, 0}, tensor.from{5, 6, 7}
  same(T:scatter_add(0, idx, val):tolist(), {13, 1, 7})
  same(T:scatter_add(0, idx, val):tolist(), spec_scatter_add(T, idx, val):tolist())
  raises(function() return T:scatter_add(0, idx, tensor.from{1.0, 2, 3}) end,
         "scatter_add: the tensor is int32 and src float32")
  raises(function() return T:scatter_add(0, tensor.from{0, 1, 2, 0}, val) end, "scatter_add: the index (4,) does not fit")
  -- property: against a loop
  for _ = 1, 15 do
    local rank = math.random(1, 3)
    local shape = rshape(rank)
    local d = math.random(0, rank - 1)
    local ishape, sshape = {}, {}
    for k = 1, rank do
      ishape[k] = k == d + 1 and math.random(1, 5) or math.random(1, shape[k])
      sshape[k] = ishape[k] + math.random(0, 1)
    end
    local a, v = rtensor(shape, "int16")
    local src, sv = rtensor(sshape, "int16")
    local iv = {}
    for i = 1, numel(ishape) do iv[i] = math.random(0, shape[d + 1] - 1) end
    local want = {}
    for i = 1, #v do want[i] = v[i] end
    local st = strides(shape)
    for i = 0, #iv - 1 do
      local c = coords(i, ishape)
      local val = at(sv, sshape, c)
      c[d + 1] = iv[i + 1]
      local o = 0
      for k = 1, rank do o = o + c[k] * st[k] end
      want[o + 1] = want[o + 1] + val
    end
    local got = a:scatter_add(d, tensor.from(iv):reshape(ishape), src)
    eq(got.dtype, "int32")
    same(flat(got), want, "scatter_add")
  end
end)

check("pad with a value and negative amounts (tinygrad shrinks)", function()
  same(tensor.from{1, 2, 3, 4}:pad({{-1, 2}}, 9):tolist(), {2, 3, 4, 9, 9})
  local p = tensor.from{1, 2}:pad({{1, 1}}, 0.5)
  eq(p.dtype, "float32"); same(p:tolist(), {0.5, 1, 2, 0.5})
  same(tensor.arange(9):reshape{3, 3}:pad({{-1, 1}, {1, -2}}, -1):tolist(), {{-1, 3}, {-1, 6}, {-1, -1}})
  same(tensor.from{true, false}:pad({{1, 1}}, true):tolist(), {true, true, false, true})
  same(tensor.from{1.5, 2.5}:pad({{1, 0}}, -math.huge):tolist(), {-math.huge, 1.5, 2.5})
  same(tensor.from{1, 2, 3}:pad({{-1, -1}}):tolist(), {2})
  same(tensor.from{1, 2}:pad({{0, 0}}, 7):tolist(), {1, 2})
  -- the value 0 keeps the plain Pad of the spec
  eq(tensor.from{1, 2}:pad({{1, 0}}, 0).op, "pad")
  raises(function() return tensor.from{1, 2}:pad({{-2, -1}}) end, "pad: axis 0: (-2, -1) removes more than its 2 elements")
  -- property: against a loop, random signed amounts
  for _ = 1, 20 do
    local rank = math.random(1, 3)
    local shape = rshape(rank)
    local a, v = rtensor(shape, "int16")
    local pads, lp, out = {}, {}, {}
    for k = 1, rank do
      local b = math.random(-shape[k], 2)
      local e = math.random(-(shape[k] + math.min(b, 0)), 2)
      pads[k] = {b, e}
      lp[k] = {b, e}
      out[k] = shape[k] + b + e
    end
    local got = a:pad(lp, -7)
    same(got.shape, out, "pad shape")
    local g = flat(got)
    for i = 0, numel(out) - 1 do
      local c, inside = coords(i, out), true
      for k = 1, rank do
        c[k] = c[k] - pads[k][1]
        inside = inside and c[k] >= 0 and c[k] < shape[k]
      end
      same(g[i + 1], inside and at(v, shape, c) or -7, "pad at " .. i)
    end
  end
end)

check("matmul: numpy's rules, batch axes broadcast", function()
  local a, b = tensor.arange(12):reshape{2, 2, 3}, tensor.arange(6):reshape{3, 2}
  same(a:matmul(b):tolist(), {{{10, 13}, {28, 40}}, {{46, 67}, {64, 94}}})
  same(tensor.arange(6):reshape{1, 2, 3}:matmul(tensor.arange(12):reshape{2, 3, 2} - 5):tolist(),
       {{{-5, -2}, {-32, -20}}, {{13, 16}, {40, 52}}})
  same(tensor.from{1, 2, 3}:matmul(tensor.arange(24):reshape{2, 3, 4}):tolist(), {{32, 38, 44, 50}, {104, 110, 116, 122}})
  same(tensor.arange(24):reshape{2, 4, 3}:matmul(tensor.from{1, -1, 2}):tolist(), {{3, 9, 15, 21}, {27, 33, 39, 45}})
  eq(tostring(tensor.ones(2, 1, 2, 3):matmul(tensor.ones(3, 3, 2)).shape[2]), "3")
  local bm = tensor.from{{true, false}}:matmul(tensor.from{{true}, {true}})
  eq(bm.dtype, "bool"); same(bm:tolist(), {{true}})
  raises(function() return tensor.ones(2, 3, 4):matmul(tensor.ones(3, 4, 5)) end,
         "matmul: (2, 3, 4) @ (3, 4, 5): the batch axes do not broadcast: sizes 2 and 3 at batch axis -1")
  raises(function() return tensor.ones(2, 3):matmul(tensor.ones(4, 5)) end, "the inner sizes differ: 3")
  raises(function() return tensor.from(1):matmul(tensor.ones(2)) end, "matmul: both operands need at least one axis")
  -- the 2-D graph is still the spec's gemm
  local g = tostring(tensor.param("A", {2, 3}):matmul(tensor.param("B", {3, 4})):graph())
  assert(g:find("reshape    float32  (2, 3, 1)", 1, true) and g:find("reduce     float32  (2, 1, 4)  add", 1, true), g)
  -- property: against loops, random ranks 1 to 4 with broadcast batches
  for _ = 1, 20 do
    local ra, rb = math.random(1, 4), math.random(1, 4)
    local M, K, N = math.random(1, 3), math.random(1, 4), math.random(1, 3)
    local nb = math.max(ra, rb) - 2
    local batch = rshape(math.max(nb, 0), 1, 3)
    local function bsh(r)
      local s = {}
      for k = #batch - math.max(r - 2, 0) + 1, #batch do s[#s + 1] = math.random() < 0.7 and batch[k] or 1 end
      return s
    end
    local sa = ra == 1 and {K} or bsh(ra); if ra > 1 then sa[#sa + 1] = M; sa[#sa + 1] = K end
    local sb = rb == 1 and {K} or bsh(rb); if rb > 1 then sb[#sb + 1] = K; sb[#sb + 1] = N end
    local A, va = rtensor(sa, "int8")
    local B, vb = rtensor(sb, "int8")
    local r = A:matmul(B)
    eq(r.dtype, "int8")
    local g, shape = flat(r), r.shape
    -- the result's batch axes come first, then M (if A is a matrix), then N (if B is)
    local nbo = #shape - (ra > 1 and 1 or 0) - (rb > 1 and 1 or 0)
    for i = 0, numel(shape) - 1 do
      local c = coords(i, shape)
      local m = ra > 1 and c[nbo + 1] or 0
      local n = rb > 1 and c[#c] or 0
      local acc = 0
      for k = 0, K - 1 do
        local ca, cb = {}, {}
        if ra > 1 then
          local na = #sa - 2
          for t = 1, na do ca[t] = sa[t] == 1 and 0 or c[nbo - na + t] end
          ca[na + 1], ca[na + 2] = m, k
        else ca[1] = k end
        if rb > 1 then
          local nbb = #sb - 2
          for t = 1, nbb do cb[t] = sb[t] == 1 and 0 or c[nbo - nbb + t] end
          cb[nbb + 1], cb[nbb + 2] = k, n
        else cb[1] = k end
        acc = acc + at(va, sa, ca) * at(vb, sb, cb)
      end
      same(g[i + 1], wrap(acc, "int8"), "matmul at " .. i)
    end
  end
end)

check("arange with float start, stop and step (tinygrad's count and dtypes)", function()
  local r = tensor.arange(0.0, 1.0, 0.25)
  eq(r.dtype, "float32"); same(r:tolist(), {0, 0.25, 0.5, 0.75})
  same(tensor.arange(5.5, 10, 2):tolist(), {5.5, 7.5, 9.5})
  same(tensor.arange(5, 0, -2):tolist(), {5, 3, 1})
  eq(tensor.arange(0.0, 0.3, 0.1).numel, 3)
  same(tensor.arange(1.0, -1.0, -0.3):tolist(), {1, 0.7, 0.4, 0.1, -0.2, -0.5, -0.8}, "arange down", 2e-7)
  r = tensor.arange(2147483645, 2147483649)
  eq(r.dtype, "int64"); same(r:tolist(), {2147483645, 2147483646, 2147483647, 2147483648})
  eq(tensor.arange(3, "float64").dtype, "float64")
  eq(tensor.arange(0, 6, 2, "int8").dtype, "int8")
  eq(tensor.arange(5, 2).numel, 0)
  raises(function() return tensor.arange(0, 1, 0) end, "tensor.arange: the step is 0")
  raises(function() return tensor.arange(0.5, 3, "int32") end, "float arguments need a float dtype, not int32")
  raises(function() return tensor.arange(0, 300, 1, "uint8") end, "does not fit in uint8")
  -- property: start + i*step rounded to float32, for steps that are exact in binary
  for _ = 1, 20 do
    local st = ({0.25, 0.5, -0.25, 2.0, -1.5, 0.125})[math.random(6)]
    local a = math.random(-40, 40) / 8
    local b = a + st * math.random(0, 30) + st * math.random(0, 7) / 8
    local got = flat(tensor.arange(a, b, st))
    local n = math.max(0, math.ceil((b - a) / st))
    eq(#got, n, ("count of arange(%g, %g, %g)"):format(a, b, st))
    for i = 0, n - 1 do same(got[i + 1], a + i * st, "arange value") end
  end
end)

check("printing never raises: unbound params are named", function()
  eq(tostring(tensor.param("x", {2})),
     '<Tensor float32 (2,) on CPU "x"> (unbound param: x; bind it with t:realize{x = ...})')
  local x, y = tensor.param("x", {2}, "float16"), tensor.param("y", {2}, "float16")
  eq(tostring(x * 2 + y), "<Tensor float16 (2,) on CPU> (unbound params: x, y; bind them with t:realize{x = ..., y = ...})")
  eq(tostring((x * 2):realize{x = tensor.from({1, 2}, "float16")}), "<Tensor float16 (2,) on CPU>\n[2.0, 4.0]")
  tensor.options{mem_limit = 64}
  local big = tostring(tensor.ones(100) + 1)
  tensor.options{mem_limit = 0}
  assert(big:find("<Tensor float32 (100,) on CPU> (not realized: realize: the graph needs", 1, true), big)
  -- a param with a dtype and no device (the context used to take the device's place)
  eq(tensor.param("z", {3}, "int8").dtype, "int8")
end)

finish()

-- test_tensor.lua - tensor programs: the spec's compositions, collectives, dtypes, broadcasting.
local function eq(a, b, path)
  path = path or "value"
  if type(a) == "table" and type(b) == "table" then
    assert(#a == #b, path .. ": length " .. #a .. " ~= " .. #b)
    for i = 1, #a do eq(a[i], b[i], path .. "[" .. i .. "]") end
    return
  end
  if a ~= b then error(path .. ": got " .. tostring(a) .. ", want " .. tostring(b), 2) end
end
local function near(a, b, tol, path)
  path = path or "value"
  if type(a) == "table" then
    assert(#a == #b, path .. ": length")
    for i = 1, #a do near(a[i], b[i], tol, path .. "[" .. i .. "]") end
    return
  end
  if math.abs(a - b) > tol then error(path .. ": got " .. a .. ", want " .. b, 2) end
end
local function fails(pattern, f, ...)
  local ok, msg = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  assert(tostring(msg):find(pattern, 1, true), "error '" .. tostring(msg) .. "' lacks '" .. pattern .. "'")
end

-- the spec's common ops as compositions, exactly as written there
local function gemm(A, B)
  local M, K, N = A.shape[1], A.shape[2], B.shape[2]
  return (A:reshape{M, K, 1} * B:reshape{1, K, N}):sum(1)
end
local function prefix_sum(T)
  local n = T.shape[1]
  local x = T:pad{{n - 1, 0}}                                   -- (2n-1,)
  x = x:reshape{1, 2 * n - 1}:expand{n + 1, 2 * n - 1}          -- tile
  x = x:reshape{(n + 1) * (2 * n - 1)}:shrink{{0, 2 * n * n}}   -- trim
  x = x:reshape{n, 2 * n}:shrink{{0, n}, {0, n}}                -- windows
  return x:sum(-1)                                              -- reduce
end
local function arange(n)
  return prefix_sum(tensor.from(1):reshape{1}:expand{n}) - 1
end
local function gather(T, idx)
  local K = T.shape[1]
  local pos = arange(K):reshape{K, 1}
  local mask = pos:eq(idx:reshape{1, -1}):cast(T.dtype)
  return (T:reshape{K, 1} * mask):sum(0)
end
local function scatter_add(T, idx, val)
  local K, D = T.shape[1], idx.shape[1]
  local pos = arange(K):reshape{K, 1}
  local mask = pos:eq(idx:reshape{1, D}):cast(T.dtype)
  return T + (mask * val:reshape{1, D}):sum(1)
end

local A = tensor.from{{1, 2, 3}, {4, 5, 6}}
local B = tensor.from{{7, 8}, {9, 10}, {11, 12}}
eq(gemm(A, B):tolist(), {{58, 64}, {139, 154}})
eq(A:matmul(B):tolist(), {{58, 64}, {139, 154}})
eq(prefix_sum(tensor.from{1, 2, 3, 4, 5}):tolist(), {1, 3, 6, 10, 15})
eq(prefix_sum(tensor.from{2.5, -1.0}):tolist(), {2.5, 1.5})
eq(arange(6):tolist(), {0, 1, 2, 3, 4, 5})
eq(tensor.arange(6):tolist(), {0, 1, 2, 3, 4, 5})
eq(tensor.arange(2, 11, 3):tolist(), {2, 5, 8})
eq(tensor.arange(1500):sum():item(), 1499 * 1500 // 2)
eq(tensor.arange(1025):tolist()[1025], 1024)
eq(gather(tensor.from{10, 20, 30, 40}, tensor.from{3, 0, 0, 2}):tolist(), {40, 10, 10, 30})
eq(scatter_add(tensor.from{1, 1, 1}, tensor.from{0, 2, 0}, tensor.from{5, 6, 7}):tolist(), {13, 1, 7})

-- movement ops are views: pad, shrink, flip, permute, expand, index
local T = tensor.from{{1, 2, 3}, {4, 5, 6}}
eq(T:permute{1, 0}:tolist(), {{1, 4}, {2, 5}, {3, 6}})
eq(T:flip{1}:tolist(), {{3, 2, 1}, {6, 5, 4}})
eq(T:pad{{1, 0}, false}:tolist(), {{0, 0, 0}, {1, 2, 3}, {4, 5, 6}})
eq(T:shrink{false, {1, 3}}:tolist(), {{2, 3}, {5, 6}})
eq(T:reshape{2, 3, 1}:expand{2, 3, 2}:sum(2):tolist(), {{2, 4, 6}, {8, 10, 12}})
eq(T[1]:tolist(), {4, 5, 6})
eq(T:index(0, 2):item(), 3)
eq(T:index(tensor.from{1, 1, 0}):tolist(), {{4, 5, 6}, {4, 5, 6}, {1, 2, 3}})
eq(T:permute{1, 0}:reshape{6}:tolist(), {1, 4, 2, 5, 3, 6})
eq(tensor.stack{tensor.from{1, 2}, tensor.from{3, 4}}:tolist(), {{1, 2}, {3, 4}})

-- reductions with keepdim, max, prod, min, mean
eq(T:sum(0):tolist(), {5, 7, 9})
eq(T:sum(1, true).shape, {2, 1})
eq(T:max(1):tolist(), {3, 6})
eq(T:min():item(), 1)
eq(T:prod(1):tolist(), {6, 120})
eq(T:sum():item(), 21)
near(T:mean(1):tolist(), {2, 5}, 1e-6)

-- broadcasting: right-aligned, each axis equal or 1
eq((tensor.from{{1}, {2}, {3}} + tensor.from{10, 20}):tolist(), {{11, 21}, {12, 22}, {13, 23}})
eq((tensor.from{1, 2} * 3).shape, {2})
eq((2 - tensor.from{1, 2}):tolist(), {1, 0})
fails("do not broadcast", function() return tensor.from{1, 2, 3} + tensor.from{1, 2} end)
fails("(2, 3)", function() return T + tensor.from{{1, 2}, {3, 4}} end)
fails("reshape: (2, 3) has 6 elements, (4,) has 4", function() return T:reshape{4} end)
fails("expand", function() return T:expand{4, 3} end)

-- dtype promotion
eq((tensor.from({1}, "int8") + tensor.from({1}, "uint8")).dtype, "int16")
eq((tensor.from({1}, "float16") + tensor.from({1}, "bfloat16")).dtype, "float32")
eq((tensor.from{1, 2} + 0.5).dtype, "float32")
eq((tensor.from{1, 2} + 0.5):tolist(), {1.5, 2.5})
eq((tensor.from({1}, "float16") + 1).dtype, "float16")
eq((tensor.from({1}, "int32") + tensor.from({1}, "uint32")).dtype, "int64")
eq(tensor.from{true, false}:sum():item(), 1)
eq((tensor.from{1, 2} / 2):tolist(), {0.5, 1.0})

-- two's complement wrap and float16/bfloat16 rounding (to nearest, ties to even)
eq((tensor.from({127}, "int8") + 1):tolist(), {-128})
eq((tensor.from({0}, "uint8") - 1):tolist(), {255})
eq(tensor.from({300.7, -1.5}):cast("uint8"):tolist(), {44, 255})
eq(tensor.from({1 + 2^-11, 1 + 3 * 2^-11, 65504, 65520, 2^-25, 3 * 2^-25}, "float64")
     :cast("float16"):bitcast("uint16"):tolist(), {0x3C00, 0x3C02, 0x7BFF, 0x7C00, 0x0000, 0x0002})
eq(tensor.from({1 + 2^-8, 1 + 3 * 2^-8, math.pi, 0.1}, "float64"):cast("bfloat16")
     :bitcast("uint16"):tolist(), {0x3F80, 0x3F82, 0x4049, 0x3DCD})
eq(tensor.from({1.0}, "float32"):bitcast("uint32"):tolist(), {0x3F800000})

-- comparisons decompose as the spec writes them
local x, y = tensor.from{1, 2, 3}, tensor.from{3, 2, 1}
eq(x:lt(y):tolist(), {true, false, false})
eq(x:gt(y):tolist(), {false, false, true})
eq(x:le(y):tolist(), {true, true, false})
eq(x:ge(y):tolist(), {false, true, true})
eq(x:eq(y):tolist(), {false, true, false})
eq(x:ne(y):tolist(), {true, false, true})
eq(x:lt(y):where(x, y):tolist(), {1, 2, 1})
eq(x:lt(2):where(0, x):tolist(), {0, 2, 3})

-- unary functions against Lua's math
local v = tensor.from({-1.5, 0.25, 2.0}, "float64")
near(v:exp():tolist(), {math.exp(-1.5), math.exp(0.25), math.exp(2)}, 1e-12)
near(v:sin():tolist(), {math.sin(-1.5), math.sin(0.25), math.sin(2)}, 1e-12)
near(v:cos():tolist(), {math.cos(-1.5), math.cos(0.25), math.cos(2)}, 1e-12)
near(v:relu():tolist(), {0, 0.25, 2}, 0)
near(v:sigmoid():tolist(), {1 / (1 + math.exp(1.5)), 1 / (1 + math.exp(-0.25)), 1 / (1 + math.exp(-2))}, 1e-12)
near(v:tanh():tolist(), {-0.9051482536448664, 0.24491866240370913, 0.9640275800758169}, 1e-12)
near(tensor.from({4.0, 2.0}, "float64"):log2():tolist(), {2, 1}, 0)
near(tensor.from({4.0, 9.0}):sqrt():tolist(), {2, 3}, 0)
near((tensor.from{2.0, 3.0} ^ 2):tolist(), {4, 9}, 0)
eq((tensor.from{2, 3, -2} ^ tensor.from{10, 3, 3}):tolist(), {1024, 27, -8})
eq((tensor.from({2}, "int8") ^ 7):tolist(), {-128})
eq((tensor.from{1, -1, 2} ^ -3):tolist(), {1, -1, 0})

-- softmax and log_softmax against a loop in Lua
local r = tensor.rand({3, 5}, {seed = 7, dtype = "float64"})
local rows = r:tolist()
local sm, lsm = r:softmax():tolist(), r:log_softmax(1):tolist()
for i = 1, 3 do
  local m, s = -math.huge, 0
  for j = 1, 5 do m = math.max(m, rows[i][j]) end
  for j = 1, 5 do s = s + math.exp(rows[i][j] - m) end
  for j = 1, 5 do
    near(sm[i][j], math.exp(rows[i][j] - m) / s, 1e-12)
    near(lsm[i][j], rows[i][j] - m - math.log(s), 1e-12)
  end
end

-- rand: reproducible, uniform in [0, 1), seeds differ
local r1, r2 = tensor.rand({1000}, {seed = 3}):tolist(), tensor.rand({1000}, {seed = 3}):tolist()
eq(r1, r2)
local r3 = tensor.rand({1000}, {seed = 4}):tolist()
local same, sum = 0, 0
for i = 1, 1000 do
  assert(r1[i] >= 0 and r1[i] < 1)
  if r1[i] == r3[i] then same = same + 1 end
  sum = sum + r1[i]
end
assert(same < 5 and math.abs(sum / 1000 - 0.5) < 0.05)

-- params and functions (the spec's @function)
local p = tensor.param("p", {3})
eq((p * 2 + 1):tolist{p = tensor.from({1, 2, 3}, "float32")}, {3, 5, 7})
fails("not bound", function() return (p * 2):tolist() end)
local f = tensor.fn(function(a, b) return a * b + a end)
local out = f(tensor.from{1, 2}, tensor.from{3, 4})
eq(out:tolist(), {4, 10})
eq(out.op, "gettuple")
eq(f(tensor.from{5, 6}, tensor.from{1, 1}):tolist(), {10, 12})

-- derived properties of the spec's table through the binding
eq(tensor.from(3).shape, {})
eq(tensor.zeros(2, 3).dtype, "float32")
eq(tensor.ones({2, 3}, "int8"):sum(1, true).dtype, "int32")   -- tinygrad's sum_acc_dtype
eq(tensor.ones({2, 3}, "int8"):max(1, true).dtype, "int8")
eq(tensor.zeros(2, 3):cast("float16").dtype, "float16")
eq(x:lt(y).dtype, "bool")
eq(x:lt(y):where(1.5, 2.5).dtype, "float32")
eq(T:named("s_max").name, "s_max")
eq(tensor.from(3).addrspace, "none")
eq(tensor.param("pa", {2}).addrspace, "GLOBAL")
eq((T + 1):sum(0).addrspace, "GLOBAL")
eq({tensor.full({2}, 5, "int8"):range()}, {5, 5})
eq({(tensor.full({2}, 5, "int8") + tensor.full({2}, 2, "int8")):range()}, {7, 7})
eq({tensor.full({2}, 5, "int8"):max():range()}, {-128, 127})
eq({tensor.full({2}, 5, "int8"):sum():range()}, {-2147483648, 2147483647})

-- the memory guard names the largest buffer
fails("the largest is add float32 (65536, 65536)", function()
  return (tensor.ones(65536, 65536) + 1):realize()
end)
tensor.options{mem_limit = 1000}
fails("limit", function() return (tensor.ones(1000) + 1):realize() end)
tensor.options{mem_limit = 0}
eq((tensor.ones(1000) + 1):sum():item(), 2000)

-- multi-device collectives on 2, 4 and 8 devices: the library's (tensor.allreduce, ...)
-- build the same graphs as the spec's compositions written out here, and give the sums
-- computed in Lua
for _, n in ipairs{2, 4, 8} do
  local s = 2 * n
  local D = {}
  for i = 1, n do D[i] = "CPU:" .. (i - 1) end
  local spec = {
    broadcast = function(T) return T:reshape{1, s}:expand{n, s}:copy(D):replicated(0) end,
    scatter = function(T) return T:copy(D) end,
    gather = function(T) return T:copy(D[1]) end,
    -- the spec's n*s is T's logical size (each device holds a shard of it)
    allgather = function(T) local m = T.shape[1]; return T:reshape{1, m}:expand{n, m}:copy(D):replicated(0) end,
    reduce_scatter = function(T) return T:reshape{n, n, s // n}:permute{1, 0, 2}:copy(D):sum(1):reshape{s} end,
  }
  spec.reduce = function(T) return spec.gather(T):reshape{n, s}:sum(0) end
  spec.allreduce = function(T) return spec.allgather(spec.reduce_scatter(T)) end
  local function broadcast(T) return tensor.broadcast(T, D) end
  local function scatter(T) return tensor.scatter(T, D) end
  local gather, reduce, allgather = tensor.gather, tensor.reduce, tensor.allgather
  local reduce_scatter, allreduce = tensor.reduce_scatter, tensor.allreduce
  local sc0 = tensor.arange(n * s):copy(D)
  eq(tostring(broadcast(tensor.arange(s)):graph()), tostring(spec.broadcast(tensor.arange(s)):graph()))
  for _, name in ipairs{"gather", "reduce", "allgather", "reduce_scatter", "allreduce"} do
    eq(tostring(tensor[name](sc0):graph()), tostring(spec[name](sc0):graph()), name)
  end

  local t = tensor.arange(s)
  local b = broadcast(t)
  eq(b.shape, {s}); eq(#b.device, n); eq(b.axis, nil); eq(b:tolist(), t:tolist())
  local big = tensor.arange(n * s)            -- n*s elements: device i holds s of them
  local sc = scatter(big)
  eq(sc.axis, 0); eq(#sc.device, n)
  local sh = sc:shards()
  eq(#sh, n)
  for i = 1, n do eq(sh[i]:tolist()[1], (i - 1) * s) end
  local g = gather(sc)
  eq(g.device, "CPU:0"); eq(g.axis, nil); eq(g:tolist(), big:tolist())
  local want = {}
  for k = 0, s - 1 do
    local acc = 0
    for i = 0, n - 1 do acc = acc + i * s + k end
    want[k + 1] = acc
  end
  eq(reduce(sc):tolist(), want)
  local ag = allgather(sc)
  eq(ag.axis, nil); eq(ag.shape, {n * s}); eq(ag:tolist(), big:tolist())
  local rs = reduce_scatter(sc)
  eq(rs.axis, 0); eq(rs.shape, {s}); eq(rs:tolist(), want)
  local ar = allreduce(sc)
  eq(ar.axis, nil); eq(ar.shape, {s}); eq(#ar.device, n); eq(ar:tolist(), want)
  -- replicated checks that the shards agree
  fails("replicated: the shards differ", function()
    return tensor.arange(n * s):reshape{n, s}:copy(D):replicated(0):realize()
  end)
end
fails("cannot be split", function() return tensor.arange(5):copy(2) end)
fails("tensor.allreduce: T is not sharded", tensor.allreduce, tensor.arange(4))
fails("tensor.reduce_scatter: each device holds 3 elements", tensor.reduce_scatter, tensor.arange(6):copy(2))
fails("tensor.broadcast: T has shape (2, 2)", tensor.broadcast, tensor.zeros{2, 2}, 2)
fails("tensor.gather: T is a number", tensor.gather, 7)

-- the graph: a listing, and a drawable through __scene
local gr = A:matmul(B):graph()
assert(tostring(gr):find("reduce", 1, true))
assert(viz.dot(gr):find("reduce add", 1, true))
print("test_tensor.lua: ok")

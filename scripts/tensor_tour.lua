-- tensor_tour.lua - tensor programs in tessel: the spec's compositions, softmax, attention, allreduce.
-- Run: ./tessel scripts/tensor_tour.lua

print("== tensors are UOp graphs, realized on the CPU")
local a = tensor.from{{1, 2, 3}, {4, 5, 6}}
local b = tensor.from{{7, 8}, {9, 10}, {11, 12}}
print(a)
print(a:matmul(b))

print("\n== the spec's gemm: (A:reshape{M,K,1} * B:reshape{1,K,N}):sum(1)")
local c = (a:reshape{2, 3, 1} * b:reshape{1, 3, 2}):sum(1)
print(c:graph())

print("== prefix_sum by pad, tile, trim and windows; arange and gather from it")
local function prefix_sum(T)
  local n = T.shape[1]
  local x = T:pad{{n - 1, 0}}
  x = x:reshape{1, 2 * n - 1}:expand{n + 1, 2 * n - 1}
  x = x:reshape{(n + 1) * (2 * n - 1)}:shrink{{0, 2 * n * n}}
  x = x:reshape{n, 2 * n}:shrink{{0, n}, {0, n}}
  return x:sum(-1)
end
local function arange(n) return prefix_sum(tensor.from(1):reshape{1}:expand{n}) - 1 end
local function gather(T, idx)
  local K = T.shape[1]
  local mask = arange(K):reshape{K, 1}:eq(idx:reshape{1, -1}):cast(T.dtype)
  return (T:reshape{K, 1} * mask):sum(0)
end
print(prefix_sum(tensor.from{1, 2, 3, 4, 5}))
print(arange(8))
print(gather(tensor.from{10, 20, 30, 40}, tensor.from{3, 0, 2}))

print("\n== dtypes: float16 rounds to nearest even, int8 wraps")
print(tensor.from({1 + 2^-11, 1 + 3 * 2^-11}, "float64"):cast("float16"):bitcast("uint16"))
print(tensor.from({127, -128}, "int8") + 1)

print("\n== softmax over the last axis")
local x = tensor.rand({3, 5}, {seed = 1})
print(x:softmax())
print(x:softmax():sum(1))

print("\n== attention forward pass (one head, 4 tokens, d = 8)")
local T, d = 4, 8
local q = tensor.rand({T, d}, {seed = 2})
local k = tensor.rand({T, d}, {seed = 3})
local v = tensor.rand({T, d}, {seed = 4})
local scores = q:matmul(k:permute{1, 0}) * (1 / math.sqrt(d))
local causal = tensor.arange(T):reshape{T, 1}:lt(tensor.arange(T):reshape{1, T})
local att = causal:where(-math.huge, scores):softmax(1)
print(att)
print(att:matmul(v))

print("\n== a function captured once, called on new arguments")
local axpy = tensor.fn(function(s, y) return s * 2 + y end)
print(axpy(tensor.from{1, 2}, tensor.from{10, 20}))
print(axpy(tensor.from{5, 5}, tensor.from{0, 1}))

print("\n== allreduce over 4 simulated devices: the spec's collectives, composed as it writes them")
local n, s = 4, 8
local D = {"CPU:0", "CPU:1", "CPU:2", "CPU:3"}
local sharded = tensor.scatter(tensor.arange(n * s), D)   -- device i holds 8 values
for i, piece in ipairs(sharded:shards()) do print(D[i], piece) end
local reduced = tensor.allreduce(sharded)                 -- allgather(reduce_scatter(T))
print(reduced)
-- the same graph as the spec's lines, written out (hash-consing makes it the same nodes)
local function allgather(t) local m = t.shape[1]; return t:reshape{1, m}:expand{n, m}:copy(D):replicated(0) end
local function reduce_scatter(t) return t:reshape{n, n, s // n}:permute{1, 0, 2}:copy(D):sum(1):reshape{s} end
assert(tostring(reduced:graph()) == tostring(allgather(reduce_scatter(sharded)):graph()))

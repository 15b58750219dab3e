-- test_tensor_linalg.lua - tinygrad's qr, svd and newton_schulz from Lua: the definitions (Q orthogonal,
-- R upper triangular, Q R = A; U diag(S) V^T = A with S sorted and non-negative; the Newton-Schulz
-- polynomial against a loop in Lua), batches, dtypes and refusals.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local function rows(t) return t:tolist() end

-- a random m x n matrix as a Lua table and a tensor
local function rmat(m, n, seed)
  math.randomseed(seed)
  local v = {}
  for i = 1, m do
    v[i] = {}
    for j = 1, n do v[i][j] = math.random() * 2 - 1 end
  end
  return v, tensor.from(v)
end

local function matmul(a, b)
  local r = {}
  for i = 1, #a do
    r[i] = {}
    for j = 1, #b[1] do
      local s = 0
      for k = 1, #b do s = s + a[i][k] * b[k][j] end
      r[i][j] = s
    end
  end
  return r
end

local function transpose(a)
  local r = {}
  for j = 1, #a[1] do
    r[j] = {}
    for i = 1, #a do r[j][i] = a[i][j] end
  end
  return r
end

local function near(a, b, tol, what)
  for i = 1, #a do
    for j = 1, #a[i] do
      assert(math.abs(a[i][j] - b[i][j]) <= tol, string.format("%s: [%d][%d] %g against %g", what, i, j, a[i][j], b[i][j]))
    end
  end
end

local function eye(n)
  local r = {}
  for i = 1, n do
    r[i] = {}
    for j = 1, n do r[i][j] = i == j and 1 or 0 end
  end
  return r
end

check("qr: Q orthogonal, R upper triangular, Q R = A (square, tall, wide)", function()
  for _, s in ipairs{{4, 4}, {6, 3}, {3, 5}, {1, 1}} do
    local v, a = rmat(s[1], s[2], s[1] * 10 + s[2])
    local q, r = a:qr()
    eq(table.concat(q.shape, ","), s[1] .. "," .. s[1])
    eq(table.concat(r.shape, ","), s[1] .. "," .. s[2])
    local Q, R = rows(q), rows(r)
    near(matmul(transpose(Q), Q), eye(s[1]), 1e-5, "Q^T Q")
    near(matmul(Q, R), v, 1e-5, "Q R")
    for i = 1, s[1] do
      for j = 1, math.min(i - 1, s[2]) do assert(math.abs(R[i][j]) < 1e-6, "R below the diagonal") end
    end
  end
end)

check("svd: U diag(S) V^T = A, S descending and non-negative, full_matrices both ways", function()
  for _, s in ipairs{{4, 4}, {5, 3}, {3, 5}} do
    local v, a = rmat(s[1], s[2], 7 + s[1] + s[2])
    for _, full in ipairs{true, false} do
      local u, sv, vt = a:svd(full)
      local k = math.min(s[1], s[2])
      local U, S, V = rows(u), sv:tolist(), rows(vt)
      eq(#S, k, "singular values")
      for i = 1, k do
        assert(S[i] >= 0, "non-negative")
        if i > 1 then assert(S[i] <= S[i - 1] + 1e-6, "descending") end
      end
      -- U[:, :k] diag(S) V^T[:k, :]
      local US = {}
      for i = 1, s[1] do
        US[i] = {}
        for j = 1, k do US[i][j] = U[i][j] * S[j] end
      end
      local Vk = {}
      for i = 1, k do Vk[i] = V[i] end
      near(matmul(US, Vk), v, 1e-4, "U S V^T")
      near(matmul(transpose(U), U), eye(#U[1]), 1e-4, "U^T U")
    end
  end
  -- a batch: each matrix its own decomposition
  local a = tensor.rand({2, 3, 3}, {seed = 5})
  local u, s, vt = a:svd()
  eq(table.concat(s.shape, ","), "2,3")
  local A, U, S, V = a:tolist(), u:tolist(), s:tolist(), vt:tolist()
  for b = 1, 2 do
    local US = {}
    for i = 1, 3 do
      US[i] = {}
      for j = 1, 3 do US[i][j] = U[b][i][j] * S[b][j] end
    end
    near(matmul(US, V[b]), A[b], 1e-4, "batch " .. b)
  end
end)

check("newton_schulz: the odd polynomial iteration against a loop in Lua", function()
  local v, a = rmat(3, 4, 11)
  local p = {3.4445, -4.7750, 2.0315}
  local got = rows(a:newton_schulz(3, p))
  -- G = A / (|A|_F + eps); G = sum_i p[i] (G G^T)^i G
  local f = 0
  for i = 1, 3 do for j = 1, 4 do f = f + v[i][j] ^ 2 end end
  f = math.sqrt(f) + 1e-7
  local G = {}
  for i = 1, 3 do
    G[i] = {}
    for j = 1, 4 do G[i][j] = v[i][j] / f end
  end
  for _ = 1, 3 do
    local GGt, acc, term = matmul(G, transpose(G)), {}, G
    for i = 1, 3 do
      acc[i] = {}
      for j = 1, 4 do acc[i][j] = 0 end
    end
    for k = 1, #p do
      for i = 1, 3 do for j = 1, 4 do acc[i][j] = acc[i][j] + p[k] * term[i][j] end end
      term = matmul(GGt, term)
    end
    G = acc
  end
  near(got, G, 1e-4, "newton_schulz")
  -- tall: done on the transpose
  eq(table.concat(tensor.rand({5, 2}):newton_schulz(1, {1.5, -0.5}).shape, ","), "5,2")
end)

check("integers become float32; refusals name the method", function()
  local q = tensor.from({{2, 1}, {1, 3}}, "int32"):qr()
  eq(q.dtype, "float32")
  raises(function() tensor.from({1, 2, 3}):qr() end, "qr")
  raises(function() tensor.from({1, 2, 3}):svd() end, "svd")
  raises(function() tensor.rand({2, 2}):newton_schulz(1, {}) end, "newton_schulz")
  raises(function() tensor.rand({2, 2}):newton_schulz(-1, {1}) end, "newton_schulz")
end)

finish()

-- scripts/neptune/attention.lua - Neptune's general attention (its Figure 8) as a tessel tensor
-- program, and the ten operators of its Table 1, one line each.
--
--   local A = require "scripts.neptune.attention"
--   local o, p = A.attention{B = 1, H = 2, S_q = 64, S_kv = 64, D = 16, mask = A.causal}
--   local o, p = A.operator("softcap", "pf", {B = 1, H = 4, Hkv = 2, S = 64, D = 16})
--
-- attention{} takes
--   B, H, Hkv (default H), S_q, S_kv, D   the sizes: q is [B, H, S_q, D], k and v [B, Hkv, S_kv, D]
--   dtype (default "float16")              of q, k, v and the output; scores accumulate in float32
--   scale (default 1/sqrt(D))
--   mask = function(b, h, i, j) -> bool tensor      keep score (b, h, i, j) where true
--   score_mod = function(s, b, h, i, j) -> tensor   the score, changed (bias, soft cap)
-- where b, h, i, j are index tensors (tensor.arange, shaped to broadcast over [B, H, S_q, S_kv])
-- and i is the query's position among the keys: row r of q sits at r + S_kv - S_q (decoding's
-- one query is the last position). It returns the output tensor o [B, H, S_q, D] and the
-- parameters {q, k, v} (tensor.param: bind them with run/verify).
--
-- The stages of the lowered program are named as Figure 8 names its blocks: score (q k^T, float32),
-- s_max, s_sum (the softmax's two reductions) and pv (p v, before the division by s_sum), so a
-- schedule template names them without printing the kernel; lower o as "o".
local M = {}

local function need(t, k, what)
  local v = t[k]
  if type(v) ~= "number" or v < 1 or v ~= math.floor(v) then
    error(string.format("attention: %s = %s must be a positive integer (%s)", k, tostring(v), what), 3)
  end
  return v
end

-- an index tensor of n values along axis `axis` of a rank-4 frame, plus `start`
local function index(n, axis, start)
  local shape = {1, 1, 1, 1}
  shape[axis] = n
  local t = tensor.arange(n):reshape(shape)
  if start ~= 0 then t = t + start end
  return t
end

local probe = tensor.zeros({1})
local function istensor(x) return type(x) == "userdata" and getmetatable(x) == getmetatable(probe) end

local known = {B = 1, H = 1, Hkv = 1, S_q = 1, S_kv = 1, D = 1, dtype = 1, scale = 1, mask = 1,
               score_mod = 1, names = 1}

function M.attention(a)
  if type(a) ~= "table" then error("attention: give a table {B =, H =, S_q =, S_kv =, D =, ...}", 2) end
  for k in pairs(a) do
    if not known[k] then error(string.format("attention: unknown option %s", tostring(k)), 2) end
  end
  local B, H = need(a, "B", "batch"), need(a, "H", "query heads")
  local Hkv = a.Hkv or H
  if type(Hkv) ~= "number" or Hkv < 1 or H % Hkv ~= 0 then
    error(string.format("attention: Hkv = %s must divide H = %d (GQA: each KV head serves H/Hkv query heads)",
                        tostring(Hkv), H), 2)
  end
  local Sq, Skv, D = need(a, "S_q", "query length"), need(a, "S_kv", "key length"), need(a, "D", "head size")
  if Sq > Skv then error(string.format("attention: S_q = %d > S_kv = %d: the queries are the last S_q positions", Sq, Skv), 2) end
  local dtype = a.dtype or "float16"
  for _, f in ipairs{"mask", "score_mod"} do
    if a[f] ~= nil and type(a[f]) ~= "function" then
      error(string.format("attention: %s must be a function, not a %s", f, type(a[f])), 2)
    end
  end
  local q = tensor.param("q", {B, H, Sq, D}, dtype)
  local k = tensor.param("k", {B, Hkv, Skv, D}, dtype)
  local v = tensor.param("v", {B, Hkv, Skv, D}, dtype)
  local kx, vx = k, v
  if Hkv ~= H then
    -- GQA: query head h reads KV head h // (H / Hkv)
    local g = H // Hkv
    kx = k:reshape({B, Hkv, 1, Skv, D}):expand({B, Hkv, g, Skv, D}):reshape({B, H, Skv, D})
    vx = v:reshape({B, Hkv, 1, Skv, D}):expand({B, Hkv, g, Skv, D}):reshape({B, H, Skv, D})
  end
  local scale = a.scale or 1 / math.sqrt(D)
  local s = q:cast("float32"):matmul(kx:cast("float32"):permute(0, 1, 3, 2)):named("score") * scale
  local b, h = index(B, 1, 0), index(H, 2, 0)
  local i, j = index(Sq, 3, Skv - Sq), index(Skv, 4, 0)
  if a.score_mod then
    local ok, r = pcall(a.score_mod, s, b, h, i, j)
    if not ok then error("attention: score_mod failed: " .. tostring(r), 2) end
    if not istensor(r) then error("attention: score_mod must return a tensor, not a " .. type(r), 2) end
    s = r
  end
  if a.mask then
    local ok, m = pcall(a.mask, b, h, i, j)
    if not ok then error("attention: mask failed: " .. tostring(m), 2) end
    if not istensor(m) then error("attention: mask must return a tensor, not a " .. type(m), 2) end
    s = m:where(s, -math.huge)
  end
  local mx = s:max(3, {keepdim = true}):named("s_max")
  local e = (s - mx):exp()
  local sum = e:sum(3, {keepdim = true}):named("s_sum")
  -- p rounded to the inputs' dtype before p v, as Figure 8's softmax_exp_f16 (tensor cores take it)
  local pv = e:cast(dtype):cast("float32"):matmul(vx:cast("float32")):named("pv")
  local o = (pv / sum):cast(dtype)
  return o, {q = q, k = k, v = v}
end

-- The masks and score modifiers of Table 1.
function M.causal(b, h, i, j) return j:le(i) end
function M.window(w) return function(b, h, i, j) return j:le(i) & (i - j):lt(w) end end
function M.alibi(H)
  -- slope_h = 2^(-8 (h + 1) / H), the bias slope_h * (j - i)
  return function(s, b, h, i, j)
    local slope = ((h + 1):cast("float32") * (-8 * math.log(2) / H)):exp()
    return s + slope * (j - i):cast("float32")
  end
end
function M.softcap(cap) return function(s) return (s / cap):tanh() * cap end end

-- Table 1: op, mode ("pf" prefill: S_q = S_kv = S; "dc" decode: S_q = 1, S_kv = S) and sizes
-- {B, H, Hkv, S, D, window}.
M.operators = {
  global = {pf = true},
  causal = {pf = true, dc = true},
  alibi = {pf = true, dc = true},
  gqa = {pf = true, dc = true},
  softcap = {pf = true, dc = true},
  window = {pf = true},
}

function M.operator(op, mode, z)
  local def = M.operators[op]
  if not def then error(string.format("attention.operator: unknown operator %s (global, causal, alibi, gqa, softcap, window)", tostring(op)), 2) end
  if not def[mode] then error(string.format("attention.operator: %s has no %s mode (Table 1)", op, tostring(mode)), 2) end
  local a = {B = z.B, H = z.H, Hkv = z.Hkv, D = z.D, dtype = z.dtype,
             S_q = mode == "pf" and z.S or 1, S_kv = z.S}
  if op ~= "gqa" and op ~= "softcap" then a.Hkv = nil end
  if op ~= "global" then a.mask = M.causal end
  if op == "window" then a.mask = M.window(z.window or 1024) end
  if op == "alibi" then a.score_mod = M.alibi(z.H) end
  if op == "softcap" then a.score_mod = M.softcap(50) end
  return M.attention(a)
end

return M

-- test_fusion.lua - Neptune's ten attention operators (Table 1) from one compute definition
-- (Appendix A, Figure 8), fused by rolling_update (prefill) or split_k_update (decode), verified.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local LOG_FLT_MAX = math.log(3.4028234663852886e38) -- 88.72: exp of more is inf in float32

-- Figure 8's create_general_attention, with a leading head axis:
--   attention{sq =, skv =, d =, heads =, kv_heads =, scale =, neg =,
--             mask = function(i, j, h) -> bool tensor end,
--             score_mod = function(s, i, j, h) -> float tensor end}
-- i, j, h are index tensors (int32) of shapes (1, sq, 1), (1, 1, skv), (heads, 1, 1) that
-- broadcast against the scores (heads, sq, skv). GQA: kv_heads < heads, each kv head serves
-- heads / kv_heads query heads (expanded, so the lowering reads k[h // G, ...]; the batched
-- form lowers and fuses, no per-head fallback needed). Masked scores become `neg` (-inf).
-- Returns the output (heads, sq, d) and the scores after score_mod and mask.
local function attention(a)
  local sq, skv, d = a.sq, a.skv, a.d or 8
  local H = a.heads or 1
  local Hkv = a.kv_heads or H
  local G = H // Hkv
  local q = tensor.param("q", {H, sq, d})
  local k = tensor.param("k", {Hkv, skv, d})
  local v = tensor.param("v", {Hkv, skv, d})
  local function per_query_head(t)
    if G == 1 then return t end
    return t:reshape{Hkv, 1, skv, d}:expand{Hkv, G, skv, d}:reshape{H, skv, d}
  end
  local kq, vq = per_query_head(k), per_query_head(v)
  -- batch_matmul(q, k, trans_b=True): (H, sq, 1, d) * (H, 1, skv, d) summed over d
  local s = (q:reshape{H, sq, 1, d} * kq:reshape{H, 1, skv, d}):sum(3) * (a.scale or 1 / math.sqrt(d))
  local h = tensor.arange(H):reshape{H, 1, 1}
  local i = tensor.arange(sq):reshape{1, sq, 1}
  local j = tensor.arange(skv):reshape{1, 1, skv}
  if a.score_mod then s = a.score_mod(s, i, j, h) end
  if a.mask then s = a.mask(i, j, h):where(s, a.neg or -math.huge) end
  local p = s:softmax(2)
  return (p:reshape{H, sq, skv, 1} * vq:reshape{H, 1, skv, d}):sum(2), s
end

-- the masks and score mods of Table 1, as functions of the index tensors
local function causal(sq, skv)
  return function(i, j) return j:le(i + (skv - sq)) end -- the query at position i + skv - sq
end
local function window(w)
  return function(i, j) return (i - j):lt(w):where((j - i):lt(w), false) end -- |i - j| < w
end
local function alibi(H, sq, skv)
  local slopes = {}
  for x = 1, H do slopes[x] = {{2.0 ^ (-8 * x / H)}} end -- ALiBi's geometric slopes, (H, 1, 1)
  local slope = tensor.from(slopes)
  return function(s, i, j) return s + slope * (j - (i + (skv - sq))):cast("float32") end
end
local function softcap(cap)
  -- t:tanh() is 2 sigmoid(2x) - 1, built from exp
  return function(s) return (s / cap):tanh() * cap end
end

-- Figure 9's fusion, with this tree's primitives. The loops of xmax are its map loops and then
-- its reduce loop over the keys (named by the lowering: k when there is a head axis).
local function fuse(s, mode, split)
  local loops = s:get_loops("xmax")
  local j = loops[#loops]
  if mode == "PF" then
    s:rolling_update("xsum", "xmax." .. j) -- the softmax sum rolled under the max's loop
    s:rolling_update("o", "xmax." .. j)      -- the output too: one pass over the keys
  else
    s:split("xmax", j, {nil, split})
    s:split_k_update("xsum", "xmax." .. j .. "0")
    s:split_k_update("o", "xmax_local." .. j .. "0")
  end
  return s
end

-- Table 1. PF: sq = skv = 16; DC: sq = 1, skv = 64, split 16.
local PF, DC = {sq = 16, skv = 16}, {sq = 1, skv = 64, split = 16}
local ops = {
  {"Global", "PF", function(m, big) return {heads = 2} end},
  {"Causal", "PF", function(m) return {heads = 2, mask = causal(m.sq, m.skv)} end},
  {"Causal", "DC", function(m) return {heads = 2, mask = causal(m.sq, m.skv)} end},
  {"ALiBi", "PF", function(m) return {heads = 4, mask = causal(m.sq, m.skv), score_mod = alibi(4, m.sq, m.skv)} end},
  {"ALiBi", "DC", function(m) return {heads = 4, mask = causal(m.sq, m.skv), score_mod = alibi(4, m.sq, m.skv)} end},
  {"GQA", "PF", function(m) return {heads = 4, kv_heads = 2, mask = causal(m.sq, m.skv)} end},
  {"GQA", "DC", function(m) return {heads = 4, kv_heads = 2, mask = causal(m.sq, m.skv)} end},
  -- Gemma2 caps at 50: exp(50) cannot overflow, so the large-score run caps at 200
  {"SoftCap", "PF", function(m, big)
    return {heads = 4, kv_heads = 2, mask = causal(m.sq, m.skv), score_mod = softcap(big and 200 or 50)} end},
  {"SoftCap", "DC", function(m, big)
    return {heads = 4, kv_heads = 2, mask = causal(m.sq, m.skv), score_mod = softcap(big and 200 or 50)} end},
  {"Window", "PF", function(m) return {heads = 2, mask = window(3)} end},
}

local function args(op, big)
  local m = op[2] == "PF" and PF or DC
  local a = op[3](m, big)
  a.sq, a.skv = m.sq, m.skv
  if big then a.scale = 100 end -- scores of +-100s: exp(max score) overflows float32
  return a, m
end

local function schedule(a, mode, m)
  return fuse(kernel.lower((attention(a)), "o"):schedule(), mode, m.split)
end

-- inputs in [-1, 1), as verify draws them
local function inputs(a, seed)
  local H, Hkv, d = a.heads or 1, a.kv_heads or a.heads or 1, a.d or 8
  local function r(shape, n) return (tensor.rand(shape, {seed = seed + n}) * 2 - 1):realize() end
  return {q = r({H, a.sq, d}, 0), k = r({Hkv, a.skv, d}, 1), v = r({Hkv, a.skv, d}, 2)}
end

local function flat(t, out)
  out = out or {}
  for _, x in ipairs(t) do
    if type(x) == "table" then flat(x, out) else out[#out + 1] = x end
  end
  return out
end

local function all_finite(t)
  for _, x in ipairs(flat(t:tolist())) do
    if x ~= x or x == math.huge or x == -math.huge then return false end
  end
  return true
end

local function close(got, want, what)
  local g, w = flat(got:tolist()), flat(want:tolist())
  eq(#g, #w, what .. " size")
  for n = 1, #w do
    if not (math.abs(g[n] - w[n]) <= 1e-5 + 1e-4 * math.abs(w[n])) then
      error(string.format("%s: element %d is %.9g, want %.9g", what, n, g[n], w[n]), 2)
    end
  end
end

-- What the large scores do to a softmax without the max: exp overflows, inf / inf is NaN.
-- The fused kernel on the same inputs gives the graph's (safe softmax) values, all finite.
local function overflows_naively_but_not_fused(a, s)
  local bind = inputs(a, 7)
  local o, sc = attention(a)
  local smax = sc:max():realize(bind):item()
  assert(smax > LOG_FLT_MAX, "the largest score " .. smax .. " does not overflow exp")
  local e = sc:exp()
  assert(not all_finite((e / e:sum(2, true)):realize(bind)), "the naive softmax stays finite")
  local got = s:run(bind)
  assert(all_finite(got), "the fused kernel's output is not finite")
  close(got, o:realize(bind), "fused vs graph")
end

local function stages(s) return table.concat(s:kernel():stages(), " ") end

for _, op in ipairs(ops) do
  local name, mode = op[1], op[2]
  local title = string.format("%s (%s)", name, mode)
  if name ~= "Window" then
    check(title .. ": fused by " .. (mode == "PF" and "rolling_update" or "split_k_update") .. ", verified",
      function()
        local a, m = args(op, false)
        local s = schedule(a, mode, m)
        if mode == "PF" then
          -- the sum and the output live in the max's loop: one pass over the keys
          eq(stages(s), "xmatmul xmax", "stages")
        else
          -- FlashDecoding: the local section over slices, then the global combination
          eq(stages(s), "xmatmul xmax_local xmax xsum o", "stages")
          assert(tostring(s):find("o_local", 1, true), "o_local")
        end
        assert(s:verify{trials = 2})
      end)
    check(title .. ": scores x100 overflow a naive float32 softmax; the fused kernel verifies", function()
      local a, m = args(op, true)
      local s = schedule(a, mode, m)
      assert(s:verify{trials = 2})
      overflows_naively_but_not_fused(a, s)
    end)
  end
end

-- Window (PF): rows i >= w have their first keys masked. Rolling along the keys, such a row's
-- running max is still -inf at those keys, and g = exp(c - r) with c = r = -inf is NaN; the
-- unfused kernel never evaluates it since its max is final. Seeing the -inf of the mask in g,
-- the fusion reads the max as where(max == -inf, 0, max) in g and in the repair alike (Eq. 4
-- holds for any finite r), as FlashAttention kernels do. (The paper's Window (PF) is fused with
-- rolling update too; its failure there is loop partitioning, Section 8.) A finite mask value
-- (-1e30, as hand-written kernels use) needs no such reading.
for _, big in ipairs{false, true} do
  local what = big and ", scores x100" or ""
  check("Window (PF)" .. what .. ": under a -inf mask the rolled kernel reads the max safely and verifies",
    function()
      local a, m = args(ops[10], big)
      local s = schedule(a, "PF", m)
      assert(s:explain():find("g reads a masked -inf: xmax, while still -inf, is read as 0", 1, true))
      assert(s:verify{trials = 2})
      if big then overflows_naively_but_not_fused(a, s) end
    end)
  check("Window (PF)" .. what .. ": with a finite mask value (-1e30) the rolled kernel verifies", function()
    local a, m = args(ops[10], big)
    a.neg = -1e30
    local s = schedule(a, "PF", m)
    assert(not s:explain():find("masked -inf", 1, true))
    assert(s:verify{trials = 2})
    if big then overflows_naively_but_not_fused(a, s) end
  end)
end

-- one query row: the local stage's slices bind to blocks (i, of one iteration, reads as 0)
check("FlashDecoding: the slices of one query row bind to blocks and verify", function()
  local x = tensor.param("x", {1, 64})
  local s = kernel.lower(x:softmax(1), "out"):schedule()
  s:split("xmax", "j", {nil, 16})
  s:split_k_update("xsum", "xmax.j0")
  s:bind("xmax_local", "i", "blockIdx.y")
  s:bind("xmax_local", "j0", "blockIdx.x")
  assert(s:verify{trials = 1})
  eq(s:counts().blocks, 4 + 1 + 1 + 1, "4 blocks of slices, then one block a stage")
end)

-- a slice of keys wholly masked: causal prefill split by 4, decoded with split_k_update
check("Causal, split-k over slices of 4: wholly masked slices stay finite", function()
  local a = {sq = 8, skv = 8, heads = 1, mask = causal(8, 8)}
  local s = kernel.lower((attention(a)), "o"):schedule()
  local j = s:get_loops("xmax")
  j = j[#j]
  s:split("xmax", j, {nil, 4})
  s:split_k_update("xsum", "xmax." .. j .. "0")
  s:split_k_update("o", "xmax_local." .. j .. "0")
  assert(s:verify{trials = 2})
end)

-- V an expression of an input (tensor.rand lowers to data - 1): g is A(r) data + -A(r), a sum
-- whose terms share their factor of r; the repair exists and both fusions find it
check("V = data - 1: g = A(r) (data - 1) separates term by term; prefill and decode fuse", function()
  local H, d = 1, 4
  for _, mode in ipairs({"PF", "DC"}) do
    local sq, skv = mode == "PF" and 8 or 1, 16
    local q = tensor.param("q", {H, sq, d})
    local k = tensor.param("k", {H, skv, d})
    local v = tensor.rand({H, skv, d}, {seed = 3})
    local sc = (q:reshape{H, sq, 1, d} * k:reshape{H, 1, skv, d}):sum(3) * 0.5
    local o = (sc:softmax(2):reshape{H, sq, skv, 1} * v:reshape{H, 1, skv, d}):sum(2)
    local s = fuse(kernel.lower(o, "o"):schedule(), mode, 4)
    assert(s:verify{trials = 2})
    assert(s:explain():find("separate g into a factor of r and a factor of c", 1, true), s:explain())
  end
end)

-- the output's inner loop bound to threads, then fused under the max's loop: every thread would
-- run the max's updates; refused, and fusing first, then binding the row loop, verifies
check("a target loop bound to threads under the predecessors' loop is refused; bound after, it verifies", function()
  local a = {sq = 4, skv = 8, heads = 1}
  local s = kernel.lower((attention(a)), "o"):schedule()
  local lo = s:get_loops("o")
  s:bind("o", lo[#lo - 1], "threadIdx.x")
  local j = s:get_loops("xmax")
  j = j[#j]
  s:rolling_update("xsum", "xmax." .. j)
  local before = tostring(s)
  raises(function() s:rolling_update("o", "xmax." .. j) end,
    "rolling_update: the result would race: stage xmax: the store xmax[")
  eq(tostring(s), before, "unchanged")
  local r = kernel.lower((attention(a)), "o"):schedule()
  r:rolling_update("xsum", "xmax." .. j)
  r:rolling_update("o", "xmax." .. j)
  r:bind("xmax", r:get_loops("xmax")[1], "threadIdx.x")
  assert(r:verify{trials = 2})
end)

check("refusals name the step and leave the schedule as it was", function()
  local a = {sq = 1, skv = 16, heads = 2}
  local s = kernel.lower((attention(a)), "o"):schedule()
  local before = tostring(s)
  -- xmax reads the scores per key, not a per-row reduction: nothing to repair
  raises(function() s:rolling_update("xmax", "xmatmul.l") end, "rolling_update: stage xmax reads no reduction")
  -- o reads xsum, which is not yet under the loop
  raises(function() s:rolling_update("o", "xmax.k") end,
    "rolling_update: stage o reads xsum, which stage xsum computes after the loop's stage xmax")
  -- split_k_update of the output before its predecessor xsum is privatized
  raises(function() s:split_k_update("o", "xmax.k") end,
    "split_k_update: xmax is not reduced under loop k of stage xmax, nor privatized there")
  raises(function() s:split_k_update("xsum", "xmax.k0") end, "split_k_update: stage xmax has no loop k0")
  eq(tostring(s), before, "unchanged")
  eq(s:trace(), "", "no step recorded")
  -- a product of exps: h = t * exp(r - r') does not commute with * (Eq. 5)
  local x = tensor.param("x", {4, 8})
  local p = kernel.lower((x - x:max(1, true)):exp():prod(1), "y"):schedule()
  raises(function() p:rolling_update("y", "xmax.j") end,
    "rolling_update: stage y: h does not commute with f = * (Eq. 5 fails)")
end)

check("the trace replays the fusion; explain shows both derivations", function()
  local a = {sq = 8, skv = 8, heads = 2, mask = causal(8, 8)}
  local s = schedule(a, "PF", PF)
  eq(s:trace(), 's:rolling_update("xsum", "xmax.k")\ns:rolling_update("o", "xmax.k")\n')
  local r = kernel.lower((attention(a)), "o"):schedule()
  assert(load(s:trace(), "trace", "t", { s = r }))()
  eq(tostring(r), tostring(s), "replayed")
  local x = s:explain()
  assert(x:find("h(t, r, r') = t * exp(r - r')", 1, true), x)
  assert(x:find("h(t, r, r') = r2 * 1/r2' * t * exp(r1 - r1')", 1, true), x)
end)

finish()

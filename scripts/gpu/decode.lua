-- scripts/gpu/decode.lua - decode attention (one query a head, a long KV cache) for the GPU, split
-- over the keys as FlashDecoding does, written with kernel.new.
--
-- Stage `partial`: a block of 4 warps takes one head and one slice of L keys. A warp takes every
-- 4th key of the slice, its lanes 4 consecutive elements of the head dimension each (a warp reads a
-- 512-byte row of K or V at once). Per key: the lanes' partial dot products are summed by five
-- rotating shuffles, then an online softmax step (Neptune's rolling update: the running maximum m,
-- the sum l and the output acc rescaled by exp(m_old - m_new)). The 4 warps are combined through
-- shared memory with the same repair, and the slice's (m, l, acc) goes to global memory.
-- Stage `combine`: one block a head (the blocks of slice 0), a thread a dimension, combines the
-- slices (split-k update's repair: each slice weighted by exp(m_slice - m)). With fold, there is
-- no second launch: after writing its slice, a block's thread 0 fences and counts the head's
-- finished slices with an atomic add; the block that counts last fences again, combines the head
-- (the same loops) and resets the count with an exchange (the threadfence reduction). Run it:
-- ./tessel scripts/gpu/decode.lua (checks a small case against the tensor program).
local M = {}

-- H heads, S keys, D = 128 dimensions, NS slices of S / NS keys; float32; scale 1/sqrt(D);
-- U keys a warp takes at once (default 1): U independent dot products and shuffle chains, one
-- rescale for all U (the rolling update's repair applied once per U keys); unroll (true): the
-- combine's loops over the slices unrolled, so that a thread's loads of every slice are issued at
-- once instead of one slice's latency after another; fold: the combine done by the last block of
-- each head in the one launch (kernel.atomic and kernel.fence), no stage `combine`
function M.kernel(H, S, NS, U, unroll, fold)
  local D, W = 128, 4
  local L = S // NS
  U = U or 1
  assert(S % NS == 0 and L % (W * U) == 0, "decode: the slices must split S evenly among 4 warps, U keys at a time")
  local k = kernel.new{grid = {NS, H}, block = {32 * W}}
  local Q = k:input("Q", "float32", {H, D})
  local K = k:input("K", "float32", {H, S, D})
  local V = k:input("V", "float32", {H, S, D})
  local O = k:output("O", "float32", {H, D})
  local PM = k:buffer("PM", "float32", {H, NS}, {scope = "global", role = "temp"})
  local PL = k:buffer("PL", "float32", {H, NS}, {scope = "global", role = "temp"})
  local PA = k:buffer("PA", "float32", {H, NS, D}, {scope = "global", role = "temp"})
  local SM = k:shared("SM", "float32", {W})
  local SL = k:shared("SL", "float32", {W})
  local SA = k:shared("SA", "float32", {W, D})
  local q = k:register("q", "float32", {4})
  local acc = k:register("acc", "float32", {4})
  local m = k:register("m", "float32", {1})
  local l = k:register("l", "float32", {1})
  local sc = k:register("sc", "float32", {U})
  local pu = k:register("p", "float32", {U})
  local mn = k:register("mn", "float32", {1})
  -- fold: the slices of each head done so far (zero at the first launch, reset by the last block)
  local CNT = fold and k:buffer("CNT", "int32", {H}, {scope = "global", role = "temp"})
  local LAST = fold and k:shared("LAST", "int32", {1})
  local old = fold and k:register("old", "int32", {1})
  -- thread tx combines dimension tx of head h over the slices
  local function combine(h, tx)
    mn[0] = -math.huge
    local ty = unroll and "unroll" or "reduce"
    for u in kernel.range(NS, {name = "u", type = ty}) do mn[0] = kernel.max(mn[0], PM[{h, u}]) end
    l[0] = 0
    acc[0] = 0
    for u in kernel.range(NS, {name = "u1", type = ty}) do
      local f = kernel.exp(PM[{h, u}] - mn[0])
      l[0] = l[0] + PL[{h, u}] * f
      acc[0] = acc[0] + PA[{h, u, tx}] * f
    end
    O[{h, tx}] = acc[0] * kernel.recip(l[0])
  end
  local scale = 1 / math.sqrt(D)
  k:stage("partial", function()
    local h, sl, tx = k.by, k.bx, k.tx
    local w, lane = tx // 32, tx % 32
    for e in kernel.range(4, {name = "e", type = "unroll"}) do
      q[e] = Q[{h, lane * 4 + e}] * scale
      acc[e] = 0
    end
    m[0] = -math.huge
    l[0] = 0
    if U > 1 then
      for j in kernel.range(L // (W * U), {name = "j", type = "reduce"}) do
        for u in kernel.range(U, {name = "u0", type = "unroll"}) do
          sc[u] = 0
          for e in kernel.range(4, {name = "e1", type = "unroll"}) do
            sc[u] = sc[u] + q[e] * K[{h, sl * L + (j * U + u) * W + w, lane * 4 + e}]
          end
        end
        for _, d in ipairs{16, 8, 4, 2, 1} do
          for u in kernel.range(U, {name = "u" .. d, type = "unroll"}) do
            sc[u] = sc[u] + kernel.shuffle(sc[u], (lane + d) % 32)
          end
        end
        mn[0] = m[0]
        for u in kernel.range(U, {name = "u6", type = "unroll"}) do mn[0] = kernel.max(mn[0], sc[u]) end
        local alpha = kernel.exp(m[0] - mn[0])
        l[0] = l[0] * alpha
        for e in kernel.range(4, {name = "e2", type = "unroll"}) do acc[e] = acc[e] * alpha end
        for u in kernel.range(U, {name = "u7", type = "unroll"}) do
          pu[u] = kernel.exp(sc[u] - mn[0])
          l[0] = l[0] + pu[u]
          for e in kernel.range(4, {name = "e4", type = "unroll"}) do
            acc[e] = acc[e] + pu[u] * V[{h, sl * L + (j * U + u) * W + w, lane * 4 + e}]
          end
        end
        m[0] = mn[0]
      end
    else
      for j in kernel.range(L // W, {name = "j", type = "reduce"}) do
        local s = sl * L + j * W + w
        sc[0] = 0
        for e in kernel.range(4, {name = "e1", type = "unroll"}) do
          sc[0] = sc[0] + q[e] * K[{h, s, lane * 4 + e}]
        end
        for _, d in ipairs{16, 8, 4, 2, 1} do sc[0] = sc[0] + kernel.shuffle(sc[0], (lane + d) % 32) end
        mn[0] = kernel.max(m[0], sc[0])
        local alpha, p = kernel.exp(m[0] - mn[0]), kernel.exp(sc[0] - mn[0])
        l[0] = l[0] * alpha + p
        for e in kernel.range(4, {name = "e2", type = "unroll"}) do
          acc[e] = acc[e] * alpha + p * V[{h, s, lane * 4 + e}]
        end
        m[0] = mn[0]
      end
    end
    kernel.when(kernel.eq(lane, 0), function()
      SM[w] = m[0]
      SL[w] = l[0]
    end)
    for e in kernel.range(4, {name = "e3", type = "unroll"}) do SA[{w, lane * 4 + e}] = acc[e] end
    kernel.barrier()
    -- thread tx is dimension tx: the 4 warps' results, each weighted by exp(m_w - m)
    mn[0] = -math.huge
    for u in kernel.range(W, {name = "u", type = "unroll"}) do mn[0] = kernel.max(mn[0], SM[u]) end
    l[0] = 0
    acc[0] = 0
    for u in kernel.range(W, {name = "u1", type = "unroll"}) do
      local f = kernel.exp(SM[u] - mn[0])
      l[0] = l[0] + SL[u] * f
      acc[0] = acc[0] + SA[{u, tx}] * f
    end
    PA[{h, sl, tx}] = acc[0]
    kernel.when(kernel.eq(tx, 0), function()
      PM[{h, sl}] = mn[0]
      PL[{h, sl}] = l[0]
    end)
    if fold then
      -- the block's slice is written (the barrier gives thread 0 every thread's part); the fence
      -- before the count releases it to the block that counts last, the fence after the count
      -- acquires every other block's, and the barrier hands that to all its threads
      kernel.barrier()
      kernel.when(kernel.eq(tx, 0), function()
        kernel.fence()
        kernel.atomic("add", CNT, {h}, 1, old, {0})
        kernel.fence()
        LAST[0] = old[0]
        kernel.when(kernel.eq(old[0], NS - 1), function() kernel.atomic("exch", CNT, {h}, 0) end)
      end)
      kernel.barrier()
      kernel.when(kernel.eq(LAST[0], NS - 1), function() combine(h, tx) end)
    end
  end)
  if not fold then
    k:stage("combine", function()
      kernel.when(kernel.eq(k.bx, 0), function() combine(k.by, k.tx) end)
    end)
  end
  return k
end

function M.cases()
  local out = {}
  -- {S, keys a slice}: more, shorter slices where the cache is short, to fill the SMs
  -- a third entry: U keys a warp at once
  for _, sl in ipairs{{8192, 512}, {8192, 128}, {32768, 512}, {32768, 256}, {131072, 512},
                      {8192, 512, 2}, {8192, 256, 2}, {8192, 512, 4}, {32768, 512, 2}, {8192, 256, 4},
                      {8192, 128, 4}, {8192, 256, 8}, {8192, 256, 2, true}, {8192, 512, 4, true},
                      {8192, 256, 4, true},
                      -- fold: one launch, the last block of a head combines it
                      {8192, 256, 2, false, true}, {8192, 256, 4, false, true}, {8192, 512, 4, false, true},
                      {32768, 512, 1, false, true}, {32768, 512, 2, false, true}, {131072, 512, 1, false, true}} do
    local H, S, U, unroll, fold = 32, sl[1], sl[3] or 1, sl[4], sl[5]
    local NS = S // sl[2]
    out[#out + 1] = {
      name = string.format("decode_h%d_s%d_l%d%s%s%s", H, S, sl[2], U > 1 and "_u" .. U or "", unroll and "_cu" or "",
                           fold and "_fold" or ""),
      kernel = M.kernel(H, S, NS, U, unroll, fold),
      inputs = {Q = "randn", K = "randn", V = "randn"},
      torch = "torch.nn.functional.scaled_dot_product_attention(x[0][None, :, None, :], x[1][None], x[2][None])[0, :, 0, :]",
      bytes = 2 * H * S * 128 * 4 + 2 * H * 128 * 4, tol = 1e-5,
      note = string.format("%d slices of %d keys%s%s%s; K and V float32", NS, sl[2],
                           U > 1 and string.format(", %d keys a warp at once", U) or "",
                           unroll and ", the combine unrolled" or "",
                           fold and ", the combine folded into the last block of each head (one launch)" or ""),
    }
  end
  return out
end

if not ... then
  local H, S, D = 2, 256, 128
  for _, c in ipairs{{1}, {2}, {4}, {1, true}, {4, true}} do
    local U, fold = c[1], c[2]
    local k = M.kernel(H, S, 4, U, U == 4, fold)
    local q, kk, v = tensor.rand({H, D}, {seed = 1}), tensor.rand({H, S, D}, {seed = 2}), tensor.rand({H, S, D}, {seed = 3})
    local got = k:run{Q = q, K = kk, V = v}:tolist()
    -- the tensor program: softmax(q k^T / sqrt(D)) v, a head at a time
    local qs = q:reshape{H, 1, D} * (1 / math.sqrt(D))
    local want = (qs:matmul(kk:permute{0, 2, 1})):softmax(2):matmul(v):reshape{H, D}:tolist()
    local worst = 0
    for i = 1, H do for j = 1, D do worst = math.max(worst, math.abs(got[i][j] - want[i][j])) end end
    assert(worst < 1e-5, "decode: off by " .. worst)
    print(string.format("decode attention, 2 heads, 256 keys in 4 slices, %d key%s a warp at once%s: within %.1e "
                        .. "of the tensor program", U, U > 1 and "s" or "", fold and ", combine folded" or "", worst))
  end
end
return M

-- scripts/gpu/gemm.lua - a float16 GEMM C = A @ B (A (M,K), B (K,N) row-major, float32 accumulation,
-- C float16 as torch returns it) on the tensor cores through mma.sync, written with kernel.new.
--
-- A block of 8 warps computes a 128x128 tile of C. The warps stand 2 x 4 over it, each owning a
-- 64x32 sub-tile: 4 x 4 accumulators of the SM80 m16n8k16 atom (64 floats a thread), kept in
-- registers across the whole K loop. Per step of 32 along K the block copies its 128x32 slice of
-- A and 32x128 slice of B into shared memory with 16-byte vectors (kernel.copy: vector8), waits,
-- and each warp runs two 16-wide k-steps: 4 A fragments (ldmatrix.x4) and 4 B fragments
-- (ldmatrix.x2.trans) loaded from shared memory, 16 MMAs. The shared tiles are swizzled so that the fragment loads of 8 rows at one
-- column hit distinct banks: A's 64-byte rows by Sw<2,3,3> (the 16-byte chunk XOR the row pair),
-- B's 256-byte rows by Sw<3,3,4> (the chunk XOR the row mod 8). Run it: ./tessel scripts/gpu/gemm.lua
-- (checks a small case against the tensor program).
--
-- With opts.stages = S (2 or 3) the shared tiles get a leading stage dimension and the copies are
-- cp.async (kernel.copy's cp_async): a prologue issues the tiles of steps 0..S-2, one group each;
-- step kt waits for its own tile (cp_async_wait(S-2): all but the S-2 newest groups), passes one
-- barrier, issues the tile of step kt+S-1 into slot (kt+S-1)%S (the one step kt-1 read, which every
-- thread has left at the barrier) and commits a group (empty past the end, so that the counting
-- stays uniform), then computes on slot kt%S. At S = 3 the tiles of steps kt+1 and kt+2 land while
-- step kt computes (the verifier proves the slot written apart from the slot read).
local M = {}

local ATOM = "SM80_16x8x16_F32F16F16F32_TN"
-- lane t, value v of the m16n8k16 fragments (CuTe's TV layouts of the atom):
-- A (16x16): row t//4 + 8*(v//2%2), column 2*(t%4) + v%2 + 8*(v//4)
-- B (16x8, stored k x n): row (k) 2*(t%4) + v%2 + 8*(v//2), column (n) t//4
-- C (16x8): row t//4 + 8*(v//2), column 2*(t%4) + v%2

-- C = A @ B for A (m, kd) and B (kd, n), float16 in and out; opts.bm, bn (block tile), wm, wn
-- (warps along M and N), bk (the K step), ldmatrix (false: fragments loaded element by element)
function M.kernel(m, n, kd, opts)
  opts = opts or {}
  local BM, BN, BK = opts.bm or 128, opts.bn or 128, opts.bk or 32
  local WM, WN = opts.wm or 2, opts.wn or 4
  local ldm = opts.ldmatrix ~= false                    -- fragments by ldmatrix, or element by element
  local NS = opts.stages                                -- nil: the synchronous copies; 2, 3: cp.async stages
  local TM, TN = BM // WM // 16, BN // WN // 8          -- atoms a warp, along M and N
  assert(m % BM == 0 and n % BN == 0 and kd % BK == 0, "gemm: the tiles must divide the matrices")
  assert(BK % 16 == 0 and TM >= 1 and TN >= 1, "gemm: the warp tiles must hold whole atoms")
  local k = kernel.new{grid = {n // BN, m // BM}, block = {32 * WM * WN}}
  local A = k:input("A", "float16", {m, kd})
  local B = k:input("B", "float16", {kd, n})
  local C = k:output("C", "float16", {m, n})
  -- A's rows are BK/8 16-byte chunks: XOR the chunk with the row's position among the 8 rows
  -- that share the 8 bank groups (Sw<2,3,3> for 64-byte rows, Sw<3,3,3> for 128-byte rows)
  local ab = BK >= 64 and 3 or 2
  local As, Bs
  if NS then
    -- a leading stage mode: its stride (a whole tile, 2^12 elements and up) is above the swizzles' bits
    assert(NS >= 2 and kd // BK >= NS - 1, "gemm: stages >= 2, and at most K/BK + 1")
    As = k:shared("As", "float16", {NS, BM, BK}, string.format("Sw<%d,3,%d> o 0 o (%d,%d,%d):(%d,%d,1)",
                  ab, 6 - ab, NS, BM, BK, BM * BK, BK))
    Bs = k:shared("Bs", "float16", {NS, BK, BN}, string.format("Sw<3,3,4> o 0 o (%d,%d,%d):(%d,%d,1)",
                  NS, BK, BN, BK * BN, BN))
  else
    As = k:shared("As", "float16", {BM, BK},
                  opts.a_layout or string.format("Sw<%d,3,%d> o 0 o (%d,%d):(%d,1)", ab, 6 - ab, BM, BK, BK))
    Bs = k:shared("Bs", "float16", {BK, BN},
                  opts.b_layout or string.format("Sw<3,3,4> o 0 o (%d,%d):(%d,1)", BK, BN, BN))
  end
  -- element (i, j) of slot s (s ignored without stages)
  local function at(T, s, i, j) if NS then return T[{s, i, j}] end return T[{i, j}] end
  local acc, af, bf = {}, {}, {}
  for i = 0, TM - 1 do
    af[i] = k:register("a" .. i, "float16", {8})
    acc[i] = {}
    for j = 0, TN - 1 do acc[i][j] = k:register(string.format("c%d_%d", i, j), "float32", {4}) end
  end
  for j = 0, TN - 1 do bf[j] = k:register("b" .. j, "float16", {4}) end
  k:stage("gemm", function()
    local warp, lane = k.tx // 32, k.tx % 32
    local wr, wc = warp // WN * (BM // WM), warp % WN * (BN // WN)   -- the warp's sub-tile
    local g, t = lane // 4, lane % 4
    for i = 0, TM - 1 do
      for j = 0, TN - 1 do
        for v in kernel.range(4, {name = "v", type = "upcast"}) do acc[i][j][v] = 0 end
      end
    end
    local nk = kd // BK
    -- the tiles of step kt into slot s: cp.async with stages, else synchronous 16-byte copies
    local function load(kt, s)
      if NS then
        kernel.copy(As:tile({s, 0, 0}, {1, BM, BK}), A:tile({k.by * BM, kt * BK}, {BM, BK}), {impl = "cp_async"})
        kernel.copy(Bs:tile({s, 0, 0}, {1, BK, BN}), B:tile({kt * BK, k.bx * BN}, {BK, BN}), {impl = "cp_async"})
      else
        kernel.copy(As, A:tile({k.by * BM, kt * BK}, {BM, BK}))
        kernel.copy(Bs, B:tile({kt * BK, k.bx * BN}, {BK, BN}))
      end
    end
    local function compute(slot)
      for ks = 0, BK // 16 - 1 do
        if ldm then
          -- lane l names a row: A's 16x16 tile as 4 matrices (rows +8 for lanes 8-15 and 24-31,
          -- columns +8 for lanes 16-31); B's 16x8 as 2 matrices, transposed (k rows, n columns)
          for i = 0, TM - 1 do
            local r, c = wr + i * 16 + lane % 8 + lane // 8 % 2 * 8, ks * 16 + lane // 16 * 8
            kernel.ldmatrix(af[i], As, NS and {slot, r, c} or {r, c})
          end
          for j = 0, TN - 1 do
            local r, c = ks * 16 + lane % 16, wc + j * 8
            kernel.ldmatrix(bf[j], Bs, NS and {slot, r, c} or {r, c}, {x = 2, trans = true})
          end
        else
          for i = 0, TM - 1 do
            for v in kernel.range(8, {name = "v", type = "upcast"}) do
              af[i][v] = at(As, slot, wr + i * 16 + g + v // 2 % 2 * 8, ks * 16 + t * 2 + v % 2 + v // 4 * 8)
            end
          end
          for j = 0, TN - 1 do
            for v in kernel.range(4, {name = "v", type = "upcast"}) do
              bf[j][v] = at(Bs, slot, ks * 16 + t * 2 + v % 2 + v // 2 * 8, wc + j * 8 + g)
            end
          end
        end
        for i = 0, TM - 1 do
          for j = 0, TN - 1 do kernel.mma(ATOM, acc[i][j], af[i], bf[j], acc[i][j]) end
        end
      end
    end
    if NS then
      for s = 0, NS - 2 do
        load(s, s)
        kernel.cp_async_commit()
      end
      for kt in kernel.range(nk, {name = "kt", type = "reduce"}) do
        kernel.cp_async_wait(NS - 2)      -- this step's tile has landed, for this thread
        kernel.barrier()                  -- for every thread; and every thread has left slot (kt-1)%S
        -- issue first: the tile of step kt+S-1 into slot (kt+S-1)%S = (kt-1)%S, which the verifier
        -- proves apart from slot kt%S read below. The tile index is clamped with min so that the
        -- region stays inside A and B by ranges; the guard makes the clamp a no-op where the copy runs
        local nt = kernel.min(kt + (NS - 1), nk - 1)
        kernel.when(kernel.lt(kt + (NS - 1), nk), function() load(nt, (kt + (NS - 1)) % NS) end)
        kernel.cp_async_commit()          -- empty past the end, so that the counting stays uniform
        compute(kt % NS)
      end
    else
      for kt in kernel.range(nk, {name = "kt", type = "reduce"}) do
        load(kt, 0)
        kernel.barrier()
        compute(0)
        kernel.barrier()
      end
    end
    for i = 0, TM - 1 do
      for j = 0, TN - 1 do
        for v in kernel.range(4, {name = "v", type = "upcast"}) do
          C[{k.by * BM + wr + i * 16 + g + v // 2 * 8, k.bx * BN + wc + j * 8 + t * 2 + v % 2}] =
            kernel.cast(acc[i][j][v], "float16")
        end
      end
    end
  end)
  return k
end

-- C = A @ B through wgmma and TMA (Hopper, sm_90a). A block of opts.wg warpgroups (default 2)
-- computes a (64 wg) x BN tile of C (BN default 256), warpgroup g owning rows 64g..64g+63 with
-- BN/2 float32 accumulators a thread (wgmma m64nBNk16's fragment). The K loop goes in steps of
-- 64: one thread issues the TMA copies of the step's A tile (64 wg x 64, one 128-byte swizzled
-- box) and B tile (64 x BN, BN/64 boxes of 64 columns) into stage slot s and arms the slot's
-- mbarrier with their bytes; every thread waits on the mbarrier, the warpgroups run 4 wgmmas
-- (K 16 each) on the slot and commit them as a group. The shared layouts are the ones TMA
-- writes with its 128-byte swizzle (Sw<3,3,3> in float16 units), and the same ones wgmma's
-- descriptors name: A K-major (rows of 128 bytes, 8-row atoms 1024 bytes apart), B MN-major
-- (64-column boxes of 64 k-rows, 8 KB apart). The order of a step, with S stages:
--   wait full[kt % S]; fence; 4 wgmmas; commit; wgmma_wait(P)
--   barrier                     (every warpgroup has retired step kt-P: its slot is free)
--   thread 0: arm and issue step kt+S-P into slot (kt+S-P) % S, the one step kt-P read
-- With P = opts.pending = 1 step kt's wgmmas run while the next step's wait, barrier and copies
-- go on (the last step is peeled: its wait retires every group); with P = 0 (the default) they
-- do not. opts.ws: warp specialization instead, a producer warpgroup (registers handed to the
-- consumers by setmaxnreg) whose one thread waits on each slot's `empty` mbarrier (all 128 WG
-- consumer threads arrive on it once the step's wgmmas have retired) and refills it, no block
-- barrier in the loop. opts.persistent = G (with ws): G blocks loop over the tiles. Run it:
-- ./tessel scripts/gpu/gemm.lua (the self-check runs both at 128x256x256).
function M.kernel_wgmma(m, n, kd, opts)
  opts = opts or {}
  local WG, BN, BK, NS, P = opts.wg or 2, opts.bn or 256, 64, opts.stages or 4, opts.pending or 0
  local BM = 64 * WG
  assert(m % BM == 0 and n % BN == 0 and kd % BK == 0, "gemm: the tiles must divide the matrices")
  assert(BN % 64 == 0 and BN <= 256, "gemm: BN is a multiple of 64 up to 256")
  local nk = kd // BK
  assert(NS >= 2 and nk >= NS, "gemm: stages >= 2, and at most K/64")
  assert(P == 0 or P == 1, "gemm: pending is 0 or 1")
  local WS = opts.ws                                   -- warp specialization: a producer warpgroup
  -- opts.persistent = G (with ws): G blocks, block b taking tiles b, b + G, ... in turn (N tiles
  -- fastest), the steps of all its tiles one stream through the slots, so that the producer
  -- fills the next tile's slots while the consumers multiply and store the current one
  local G = opts.persistent
  assert(not G or WS, "gemm: persistent needs ws")
  assert(not opts.group or (G and (m // (64 * (opts.wg or 2))) % opts.group == 0),
         "gemm: group needs persistent, and divides the rows of tiles")
  local tn, tiles = n // BN, (m // BM) * (n // BN)
  -- the producer is the warpgroup after the consumers; it gives registers up (setmaxnreg) for the
  -- consumers' accumulators: 128 x 40 + 128 WG x 232 of the SM's 65536 at WG = 2
  local k = kernel.new{grid = G and {G} or {n // BN, m // BM}, block = {128 * (WG + (WS and 1 or 0))}}
  local A = k:input("A", "float16", {m, kd})
  local B = k:input("B", "float16", {kd, n})
  local C = k:output("C", "float16", {m, n})
  local As = k:shared("As", "float16", {NS, BM, BK},
                      string.format("Sw<3,3,3> o 0 o (%d,%d,%d):(%d,%d,1)", NS, BM, BK, BM * BK, BK))
  local Bs = k:shared("Bs", "float16", {NS, BK, BN},
                      string.format("Sw<3,3,3> o 0 o (%d,%d,(64,%d)):(%d,64,(1,%d))", NS, BK, BN // 64,
                                    BK * BN, BK * 64))
  local full = k:shared("full", "uint64", {NS})
  local empty = WS and k:shared("empty", "uint64", {NS})
  local acc = k:register("acc", "float32", {BN // 2})
  local h = k:register("h", "float16", {1, 2})
  local bytes = (BM * BK + BK * BN) * 2
  k:stage("gemm", function()
    -- with warp specialization the consumers are warpgroups 0..WG-1 and the producer is warpgroup
    -- WG (the clamp keeps the tiles' row starts inside the buffers for the producer's threads,
    -- which never reach the wgmmas: the descriptors are verified at every start)
    local wg, t = WS and kernel.min(k.tx // 128, WG - 1) or k.tx // 128, k.tx % 128
    local warp, lane = t // 32, t % 32
    local function issue(kt, s, by, bx)
      kernel.mbarrier_arrive(full, {s}, {tx = bytes})
      kernel.tma(As:tile({s, 0, 0}, {1, BM, BK}), A:tile({(by or k.by) * BM, kt * BK}, {BM, BK}), full, {s})
      kernel.tma(Bs:tile({s, 0, 0}, {1, BK, BN}), B:tile({kt * BK, (bx or k.bx) * BN}, {BK, BN}), full, {s})
    end
    -- a warpgroup's step on slot s: wait until its tiles have landed (the slot's use of that
    -- parity), 4 wgmmas of K 16 into acc as one group, then wait until n groups are in flight
    local function multiply(s, parity, n)
      kernel.mbarrier_wait(full, {s}, parity)
      kernel.wgmma_fence()
      for kk = 0, BK // 16 - 1 do
        kernel.wgmma(acc, As:tile({s, wg * 64, kk * 16}, {1, 64, 16}), Bs:tile({s, kk * 16, 0}, {1, 16, BN}))
      end
      kernel.wgmma_commit()
      kernel.wgmma_wait(n)
    end
    -- the m64nBN fragment to C: value v of lane l in warp w holds row 16w + l/4 + 8(v/2 % 2),
    -- column 8(v/4) + 2(l%4) + v%2, so values 2p and 2p+1 are neighbours in a row: each pair is
    -- converted into h and stored as one 4-byte word (kernel.copy's vector2; scalar 2-byte
    -- stores cost a fifth of the kernel's time, docs/gpu-notes.md version 13)
    local function store(by, bx)
      for p in kernel.range(BN // 4, {name = "p", type = "upcast"}) do
        local v = p * 2
        h[{0, 0}] = kernel.cast(acc[v], "float16")
        h[{0, 1}] = kernel.cast(acc[v + 1], "float16")
        kernel.copy(C:tile({by * BM + wg * 64 + warp * 16 + lane // 4 + p % 2 * 8, bx * BN + p // 2 * 8 + lane % 4 * 2},
                           {1, 2}), h, {scope = "thread"})
      end
    end
    kernel.when(kernel.eq(k.tx, 0), function()
      for s = 0, NS - 1 do
        kernel.mbarrier_init(full, {s}, 1)
        if WS then kernel.mbarrier_init(empty, {s}, 128 * WG) end
      end
    end)
    kernel.barrier()
    if WS then
      -- tiles: one (by, bx), or with G the it-th of this block's; g counts the block's steps
      -- opts.group = GM: tiles in groups of GM rows of tiles, N fastest within a group of GM
      -- (Triton's GROUP_M order), so that the blocks running together share fewer A and B strips
      local GM = opts.group
      local function tiles_do(body)
        if not G then return body(k.by, k.bx, 0) end
        for it in kernel.range((tiles + G - 1) // G, {name = "it", type = "loop"}) do
          local t = kernel.min(it * G + k.bx, tiles - 1)
          kernel.when(kernel.lt(it * G + k.bx, tiles), function()
            if GM then
              -- group q holds rows q*GM .. q*GM+GM-1; within it tile i is (row i % GM, column i // GM)
              local q, i = t // (GM * tn), t % (GM * tn)
              body(q * GM + i % GM, i // GM, it * nk)
            else
              body(t // tn, t % tn, it * nk)
            end
          end)
        end
      end
      -- the producer's one thread: wait until the consumers have left slot s (a fresh barrier's
      -- parity 1 has completed: the first pass through the slots does not wait), then refill it
      kernel.when(kernel.ge(k.tx, 128 * WG), function()
        kernel.setmaxnreg(40, "dec")
        kernel.when(kernel.eq(k.tx, 128 * WG), function()
        tiles_do(function(by, bx, g0)
          for kt in kernel.range(nk, {name = "kt", type = "loop"}) do
            local g = g0 + kt
            local s = g % NS
            kernel.mbarrier_wait(empty, {s}, (g // NS + 1) % 2)
            issue(kt, s, by, bx)
          end
        end)
        end)
      end)
      -- the consumers: wait for the slot, multiply, release it once the group has retired
      kernel.when(kernel.lt(k.tx, 128 * WG), function()
        kernel.setmaxnreg(WG == 2 and 232 or 160, "inc")
        tiles_do(function(by, bx, g0)
          for v in kernel.range(BN // 2, {name = "v", type = "upcast"}) do acc[v] = 0 end
          -- step kt (a loop variable or a number): wait for the slot, multiply, and release the
          -- slot of the step that has retired: this one (P = 0), else the one before
          local function step(kt, first, last)
            local g = g0 + kt
            local s = g % NS
            multiply(s, g // NS % 2, last and 0 or P)
            if P == 1 and not first then kernel.mbarrier_arrive(empty, {(g + NS - 1) % NS}) end
            if P == 0 or last then kernel.mbarrier_arrive(empty, {s}) end
          end
          if P == 0 then
            for kt in kernel.range(nk, {name = "kt", type = "reduce"}) do step(kt) end
          else
            -- the first and the last step peeled: the loop in between has no branch, and the
            -- group still in flight at its end is retired by the last step's wait, not after the
            -- loop (there ptxas 13.0 moved the epilogue's reads of the accumulators above the
            -- wait_group 0: wrong results on the H100; docs/gpu-notes.md, version 10)
            step(0, true)
            if nk > 2 then
              for kt in kernel.range(nk - 2, {name = "kt", type = "reduce"}) do step(kt + 1) end
            end
            step(nk - 1, false, true)
          end
          store(by, bx)
        end)
      end)
      return
    end
    -- step kt + L goes into the slot step kt + L - S read, free after step kt's barrier when
    -- kt + L - S <= kt - P: a lead of L = S - P steps, the prologue issuing steps 0..L-1
    local L = NS - P
    kernel.when(kernel.eq(k.tx, 0), function()
      for s = 0, L - 1 do issue(s, s) end
    end)
    for v in kernel.range(BN // 2, {name = "v", type = "upcast"}) do acc[v] = 0 end
    -- step kt (a loop variable, or the last step's number: its wait retires every group, as in
    -- the warp-specialized consumers above)
    local function step(kt, last)
      multiply(kt % NS, kt // NS % 2, last and 0 or P)
      if last then return end
      kernel.barrier()
      local nt = kernel.min(kt + L, nk - 1)
      kernel.when(kernel.eq(k.tx, 0), function()
        kernel.when(kernel.lt(kt + L, nk), function() issue(nt, (kt + L) % NS) end)
      end)
    end
    for kt in kernel.range(nk - P, {name = "kt", type = "reduce"}) do step(kt) end
    if P == 1 then step(nk - 1, true) end
    store(k.by, k.bx)
  end)
  return k
end

function M.cases()
  local out = {}
  -- {size, K step}: a K step of 64 halves the barriers and the exposed load latency a flop
  -- {size, K step, stages}: stages 3 (cp.async, 48 KB of shared tiles) beside the synchronous copies;
  -- 4 stages at K step 32 (64 KB) and 3 at 64 (96 KB) take dynamic shared memory
  for _, c in ipairs{{4096, 32}, {4096, 64}, {2048, 32}, {4096, 32, 3}, {2048, 32, 3}, {4096, 32, 4},
                     {4096, 64, 3}} do
    local s, bk, ns = c[1], c[2], c[3]
    out[#out + 1] = {
      name = string.format("gemm_f16_%d_k%d%s", s, bk, ns and "_s" .. ns or ""),
      kernel = M.kernel(s, s, s, {bk = bk, stages = ns}),
      inputs = {A = "randn", B = "randn"}, torch = "x[0] @ x[1]",
      flops = 2 * s * s * s, bytes = 3 * s * s * 2,
      -- float16 output: its rounding alone is about 2^-12 relative (L2); K = 4096 sums in float32
      tol = 2e-3,
      note = string.format("128x128x%d tiles, 8 warps of 64x32, ldmatrix + mma.sync m16n8k16%s", bk,
                           ns and string.format(", %d cp.async stages", ns) or ""),
    }
  end
  -- wgmma + TMA: {name suffix, options}
  -- (measured and dropped, docs/gpu-notes.md version 10: BN = 128 with 6 stages, 0.62x; the
  -- warp-specialized kernel persistent with no group in flight, as fast as without; groups of 8
  -- and 32 rows of tiles, 0.83x and 0.80x beside 16's 0.82x)
  for _, c in ipairs{{"", {}}, {"_p1", {pending = 1}}, {"_ws", {ws = true}}, {"_ws_p1", {ws = true, pending = 1}},
                     {"_ws_p1_persistent", {ws = true, pending = 1, persistent = 132}},
                     {"_ws_p1_persistent_g16", {ws = true, pending = 1, persistent = 132, group = 16}}} do
    local s = 4096
    local o = c[2]
    out[#out + 1] = {
      name = "gemm_f16_4096_wgmma" .. c[1],
      kernel = M.kernel_wgmma(s, s, s, o),
      inputs = {A = "randn", B = "randn"}, torch = "x[0] @ x[1]",
      flops = 2 * s * s * s, bytes = 3 * s * s * 2, tol = 2e-3,
      note = string.format("%dx%dx64 tiles, %d consumer warpgroups, wgmma m64n%dk16 + TMA, %d stages%s",
                           64 * (o.wg or 2), o.bn or 256, o.wg or 2, o.bn or 256, o.stages or 4,
                           (o.ws and ", warp-specialized producer" or "")
                           .. (o.persistent and string.format(", %d persistent blocks", o.persistent) or "")
                           .. (o.group and string.format(", tiles in groups of %d rows", o.group) or "")
                           .. (o.pending == 1 and ", one group in flight" or "")),
    }
  end
  return out
end

if not ... then
  -- a small case against the tensor program, through the interpreter
  local m, n = 128, 256
  local ab = {}
  for _, kd in ipairs{64, 128} do
    local a = tensor.rand({m, kd}, {seed = 1}):cast("float16")
    local b = tensor.rand({kd, n}, {seed = 2}):cast("float16")
    ab[kd] = {a, b, a:cast("float32"):matmul(b:cast("float32")):tolist()}
  end
  -- {ldmatrix, K step, stages, K}: K = 128 gives 3 stages at a K step of 64 their 2 steps
  for _, v in ipairs{{true, 32}, {false, 32}, {true, 64}, {true, 32, 3}, {false, 32, 3}, {true, 16, 3}, {true, 16, 2},
                     {true, 16, 4}, {true, 32, 4, 128}, {true, 64, 3, 128}} do
    local ldm, bk, ns, kd = v[1], v[2], v[3], v[4] or 64
    local a, b, want = ab[kd][1], ab[kd][2], ab[kd][3]
    local k = M.kernel(m, n, kd, {ldmatrix = ldm, bk = bk, stages = ns})
    local got = k:run{A = a, B = b}:cast("float32"):tolist()
    local worst = 0
    for i = 1, m do for j = 1, n do
      worst = math.max(worst, math.abs(got[i][j] - want[i][j]) / math.max(1, math.abs(want[i][j])))
    end end
    -- the float16 output rounds to 2^-11 relative
    assert(worst < 1e-3, "gemm: off by " .. worst)
    local c = k:counts{A = a, B = b}
    print(string.format("gemm %dx%dx%d float16, K step %d, %s, fragments by %s: within %.1e (relative) of "
                        .. "the tensor program; %d shared loads, %d cp.async", m, n, kd, bk,
                        ns and ns .. " cp.async stages" or "synchronous copies", ldm and "ldmatrix" or "element",
                        worst, c.shared_loads, c.cp_asyncs))
  end
  -- wgmma + TMA, small (the interpreter runs every thread): 128x64 tiles (BN = 64), K = 192 (3 steps
  -- of 64, so the pipelined kernels have a middle step), 2 stages
  local a = tensor.rand({128, 192}, {seed = 3}):cast("float16")
  local b = tensor.rand({192, 64}, {seed = 4}):cast("float16")
  local want = a:cast("float32"):matmul(b:cast("float32")):tolist()
  for _, o in ipairs{{bn = 64, stages = 2}, {bn = 64, stages = 2, pending = 1},
                     {bn = 64, stages = 2, ws = true, pending = 1}} do
    local k = M.kernel_wgmma(128, 64, 192, o)
    local got = k:run{A = a, B = b}:cast("float32"):tolist()
    local worst = 0
    for i = 1, 128 do for j = 1, 64 do
      worst = math.max(worst, math.abs(got[i][j] - want[i][j]) / math.max(1, math.abs(want[i][j])))
    end end
    assert(worst < 1e-3, "gemm wgmma: off by " .. worst)
    -- the counts (a second run) for the first only
    local c = o.pending or o.ws or k:counts{A = a, B = b}
    print(string.format("gemm 128x64x192 float16 through wgmma and TMA, %d stages, %s: within %.1e (relative) "
                        .. "of the tensor program%s", o.stages,
                        (o.ws and "warp-specialized, " or "") .. string.format("%d group%s in flight", o.pending or 0,
                                                                                o.pending == 1 and "" or "s"),
                        worst, type(c) == "table" and string.format("; %d wgmmas, %d TMA boxes (%d bytes)", c.wgmmas,
                                                                    c.tmas, c.tma_bytes) or ""))
  end
  -- persistent blocks over 2 x 2 tiles in groups of 2 rows: 3 blocks, so one takes two tiles and
  -- its steps run on through the slots' mbarrier phases
  local a2 = tensor.rand({256, 192}, {seed = 5}):cast("float16")
  local b2 = tensor.rand({192, 128}, {seed = 6}):cast("float16")
  local want2 = a2:cast("float32"):matmul(b2:cast("float32")):tolist()
  local got2 = M.kernel_wgmma(256, 128, 192, {bn = 64, stages = 2, ws = true, pending = 1, persistent = 3, group = 2})
                :run{A = a2, B = b2}:cast("float32"):tolist()
  local worst2 = 0
  for i = 1, 256 do for j = 1, 128 do
    worst2 = math.max(worst2, math.abs(got2[i][j] - want2[i][j]) / math.max(1, math.abs(want2[i][j])))
  end end
  assert(worst2 < 1e-3, "gemm wgmma persistent: off by " .. worst2)
  print(string.format("gemm 256x128x192 through wgmma and TMA, 3 persistent blocks over 4 tiles in groups of 2 "
                      .. "rows: within %.1e (relative) of the tensor program", worst2))
end
return M

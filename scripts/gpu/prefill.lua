-- scripts/gpu/prefill.lua - attention prefill (FlashAttention-2's forward pass) for the GPU in
-- float16, written with kernel.new: Neptune's rolling update over the key tiles, mma.sync on the
-- tensor cores.
--
-- A block of W warps takes 16 * RM * W query rows of one (b, h), RM m-tiles of 16 rows a warp
-- (the K and V fragments loaded from shared memory serve all of them). The warp's Q fragments (the
-- A operand of SM80_16x8x16_F32F16F16F32_TN) are loaded once and stay in registers. The loop runs
-- over tiles of BN keys: the cta copies the K and V tiles into shared memory (kernel.copy: 16-byte
-- moves; rows padded so that the ldmatrix loads of the K fragments, and the ldmatrix.trans loads
-- of the V fragments, are free of bank conflicts), then each warp computes its
-- scores S = Q K^T by MMAs into float32 fragments, folds them into the running softmax state of
-- its rows, and adds P V into its output fragments by MMAs. The output is divided by the softmax
-- sum once, at the end, and stored as float16. With opts.stages the tiles are copied by cp.async
-- into 2 or 3 slots, so that the next tile lands while this one computes (docs/gpu-notes.md,
-- version 9). docs/gpu-notes.md (versions 6, 7 and 9) has the numbers.
--
-- The loop is Neptune's rolling update of the attention program (docs/fusion.md): the row max m
-- is the reduce predecessor, and the sum l and the output O are the targets fused under its loop.
-- Their g is exp2(c - m) (times v for O), and the repair that s:rolling_update derives is
-- h(t, m, m') = t * exp2(m - m'): what was accumulated against the old maximum is rescaled to the
-- new one, tile by tile. Run directly, the script checks this h against the derivation and the
-- kernel against the tensor program (./tessel scripts/gpu/prefill.lua).
local M = {}

local LOG2E = 1.4426950408889634

-- The rolling update's online softmax step for one row of the thread's score fragment: x(nt, e)
-- is value e of n-tile nt (a register element, read and written), NT n-tiles; the row's 4 lanes
-- are lane/4's quad (x1, x2: lane ^ 1, lane ^ 2). Updates m[r], al[r] (the repair
-- exp2(m - m')) and l[r] (the thread's part of the row sum: the quad is summed at the end), and
-- leaves P = exp2(S c - m) in the fragment.
-- The row's maximum and sum are taken as balanced trees (a chain of 2 NT dependent operations
-- becomes log2(2 NT) levels).
local function tree(vals, f)
  while #vals > 1 do
    local nxt = {}
    for i = 1, #vals - 1, 2 do nxt[#nxt + 1] = f(vals[i], vals[i + 1]) end
    if #vals % 2 == 1 then nxt[#nxt + 1] = vals[#vals] end
    vals = nxt
  end
  return vals[1]
end

local function online_row(x, NT, r, m, l, mn, al, c, x1, x2)
  local xs = {}
  for nt = 0, NT - 1 do
    for e = 0, 1 do xs[#xs + 1] = x(nt, e) end
  end
  mn[r] = tree(xs, kernel.max)
  mn[r] = kernel.max(mn[r], kernel.shuffle(mn[r], x1))
  mn[r] = kernel.max(mn[r], kernel.shuffle(mn[r], x2))
  mn[r] = kernel.max(m[r], mn[r] * c)
  al[r] = kernel.exp2(m[r] - mn[r])
  m[r] = mn[r]
  local ps = {}
  for nt = 0, NT - 1 do
    for e = 0, 1 do
      x(nt, e, kernel.exp2(x(nt, e) * c - mn[r]))
      ps[#ps + 1] = x(nt, e)
    end
  end
  l[r] = l[r] * al[r] + tree(ps, function(a, b) return a + b end)
end

-- B batches, H heads, S queries and keys, D dimensions; BN keys a tile; RM m-tiles of 16 query
-- rows a warp, W warps a block (a block takes 16 * RM * W rows); causal or not. opts.q = "shared":
-- Q's tile is copied into shared memory once and its fragments are loaded by ldmatrix.x4 at each
-- k-step of every key tile (FlashAttention-2's way), which frees the D/2 registers a thread and
-- m-tile that Q's fragments hold (a block's static shared memory is 48 KB at most: at D = 128 the
-- key tile shrinks to make room). opts.swizzle: the shared tiles swizzled instead of padded.
-- opts.stages = NS (2, 3): the K and V tiles are copied by cp.async into NS slots, in one of two
-- orders (the comment at the loop says why there are two): opts.ahead false, the GEMM's (one
-- staged buffer, the next tile issued after the compute), true, the next tile issued before it
-- (a buffer per slot, the loop unrolled by NS).
function M.kernel(B, H, S, D, BN, RM, W, causal, opts)
  opts = opts or {}
  local qs = opts.q == "shared"
  local NS, ahead = opts.stages, opts.ahead
  assert(not NS or (NS >= 2 and not opts.swizzle and S // BN >= NS and (not ahead or S // BN % NS == 0)),
         "prefill: stages >= 2 with padded tiles, at most S/BN, and with ahead dividing S/BN")
  local BM = 16 * RM * W
  assert(D % 16 == 0 and BN % 16 == 0 and S % BM == 0 and S % BN == 0,
         "prefill: D and BN must be multiples of 16, S of BN and of 16 * RM * W")
  local NQ, NK, ND, NT = S // BM, S // BN, D // 8, BN // 8
  local k = kernel.new{grid = {NQ, H, B}, block = {32 * W}}
  local Q = k:input("Q", "float16", {B, H, S, D})
  local K = k:input("K", "float16", {B, H, S, D})
  local V = k:input("V", "float16", {B, H, S, D})
  local O = k:output("O", "float16", {B, H, S, D})
  -- a tile row is D halves padded by 8 (16 bytes): the 8 rows of 16 bytes an ldmatrix matrix
  -- reads start 4 banks apart, in 8 distinct bank groups, so the fragment loads are free of bank
  -- conflicts; rows stay 16-byte aligned for the copies' uint4 stores
  -- Swizzled instead (opts.swizzle): the 16-byte chunk of a row XOR the row mod 8, Sw<3,3,log2(D)-3>,
  -- puts the 8 rows of a matrix in 8 distinct bank groups without padding, but the xor makes each
  -- k-step's row address a register of its own where padding has one base and constant offsets
  -- (ptxas: 244 registers against 128 for the D = 128 Q-from-shared kernel)
  local function tile_layout(rows)
    if opts.swizzle then
      return string.format("Sw<3,3,%d> o 0 o (%d,%d):(%d,1)", math.floor(math.log(D, 2) + 0.5) - 3, rows, D, D)
    end
    return string.format("(%d,%d):(%d,1)", rows, D, D + 8)
  end
  -- sK[s], sV[s]: the tiles of slot s. One buffer without stages; with stages (the GEMM's order)
  -- one buffer with a leading slot mode, its stride a whole padded tile; ahead, a buffer a slot
  local sK, sV = {}, {}
  if NS and not ahead then
    local l = string.format("(%d,%d,%d):(%d,%d,1)", NS, BN, D, BN * (D + 8), D + 8)
    local bk, bv = k:shared("sK", "float16", {NS, BN, D}, l), k:shared("sV", "float16", {NS, BN, D}, l)
    for s = 0, NS - 1 do sK[s], sV[s] = bk, bv end
  else
    for s = 0, (NS or 1) - 1 do
      local sfx = NS and tostring(s) or ""
      sK[s] = k:shared("sK" .. sfx, "float16", {BN, D}, tile_layout(BN))
      sV[s] = k:shared("sV" .. sfx, "float16", {BN, D}, tile_layout(BN))
    end
  end
  local staged = NS and not ahead
  -- the coordinates of (row, column) in slot s of a tile buffer (s a kernel value or a number)
  local function at(slot, r, c) if staged then return {slot, r, c} end return {r, c} end
  local sQ = qs and k:shared("sQ", "float16", {BM, D}, tile_layout(BM))
  -- fragments, a register buffer each (an MMA takes whole buffers), per m-tile mt: Q by 16
  -- dimensions (A), the scores by 8 keys (C), P by 16 keys (A), the output by 8 dimensions (C/D)
  local qa, sc, pa, oc = {}, {}, {}, {}
  for mt = 0, RM - 1 do
    qa[mt], sc[mt], pa[mt], oc[mt] = {}, {}, {}, {}
    for i = 0, (qs and 0 or D // 16 - 1) do qa[mt][i] = k:register(string.format("qa%d_%d", mt, i), "float16", {8}) end
    for i = 0, NT - 1 do sc[mt][i] = k:register(string.format("sc%d_%d", mt, i), "float32", {4}) end
    for i = 0, BN // 16 - 1 do pa[mt][i] = k:register(string.format("pa%d_%d", mt, i), "float16", {8}) end
    for i = 0, ND - 1 do oc[mt][i] = k:register(string.format("oc%d_%d", mt, i), "float32", {4}) end
  end
  -- an ldmatrix.x4 fills 8 halves: two B fragments, split into the buffers the MMAs take (the
  -- moves are register renames to nvcc)
  local kb, kb0, kb1 = k:register("kb", "float16", {8}), k:register("kb0", "float16", {4}), k:register("kb1", "float16", {4})
  local vb, vb0, vb1 = k:register("vb", "float16", {8}), k:register("vb0", "float16", {4}), k:register("vb1", "float16", {4})
  local function split(x, lo, hi)
    for v in kernel.range(4, {name = "v", type = "upcast"}) do
      lo[v] = x[v]
      hi[v] = x[v + 4]
    end
  end
  -- the softmax state of the thread's rows: 2 an m-tile (lane/4 and lane/4 + 8 of its 16)
  local m = k:register("m", "float32", {2 * RM})
  local l = k:register("l", "float32", {2 * RM})
  local mn = k:register("mn", "float32", {2 * RM})
  local al = k:register("al", "float32", {2 * RM})
  local c = LOG2E / math.sqrt(D)   -- exp(x / sqrt(D)) = exp2(x * c): the scale folded into exp2
  local MMA = "SM80_16x8x16_F32F16F16F32_TN"
  k:stage("prefill", function()
    -- causal: the heaviest query tiles (the last) go first
    local b, h = k.bz, k.by
    local qt = causal and (NQ - 1 - k.bx) or k.bx
    local w, lane = k.tx // 32, k.tx % 32
    -- the first query row of m-tile mt of the warp
    local function row0(mt) return qt * BM + (w * RM + mt) * 16 end
    -- the other lanes of the thread's quad, lane ^ 1 and lane ^ 2 (kernel values have no xor)
    local x1, x2 = lane + 1 - lane % 2 * 2, lane + 2 - lane // 2 % 2 * 4
    -- Q's A fragments, straight from global memory (read once a block), or Q's tile into shared
    -- memory (the loop's barrier orders it before the first fragment load)
    if qs then kernel.copy(sQ, Q:tile({b, h, qt * BM, 0}, {1, 1, BM, D})) end
    for mt = 0, RM - 1 do
      for kd = 0, (qs and -1 or D // 16 - 1) do
        for v in kernel.range(8, {name = "v", type = "upcast"}) do
          qa[mt][kd][v] = Q[{b, h, row0(mt) + lane // 4 + v // 2 % 2 * 8, kd * 16 + v // 4 * 8 + lane % 4 * 2 + v % 2}]
        end
      end
      for i = 0, ND - 1 do
        for v in kernel.range(4, {name = "v", type = "upcast"}) do oc[mt][i][v] = 0 end
      end
    end
    for r = 0, 2 * RM - 1 do
      m[r] = -math.huge
      l[r] = 0
    end
    -- key tile j on slot `slot` (a number: which buffer; with the staged buffer, a kernel value
    -- too: the slot coordinate)
    local function compute(j, slot)
      -- S = Q K^T: B fragment value v is K[key n, dimension k], one load for the RM m-tiles
      for mt = 0, RM - 1 do
        for nt = 0, NT - 1 do
          for v in kernel.range(4, {name = "v", type = "upcast"}) do sc[mt][nt][v] = 0 end
        end
      end
      for kd = 0, D // 16 - 1 do
        -- Q's fragments of the k-step, from shared memory: lane l names row l%16, column 8(l/16)
        -- of the m-tile's 16x16 block (the A fragment's four 8x8 matrices)
        local qf = {}
        for mt = 0, RM - 1 do
          if qs then
            kernel.ldmatrix(qa[mt][0], sQ, {(w * RM + mt) * 16 + lane % 16, kd * 16 + lane // 16 * 8})
            qf[mt] = qa[mt][0]
          else
            qf[mt] = qa[mt][kd]
          end
        end
        for np = 0, NT // 2 - 1 do
          -- ldmatrix.x4: lanes 0-15 name the 16 halves of keys 16np..16np+7 (dimension halves
          -- 0-7 and 8-15 of the k-step), lanes 16-31 those of the next 8 keys; the two B
          -- fragments of n-tiles 2np and 2np+1
          kernel.ldmatrix(kb, staged and sK[0] or sK[slot], at(slot, np * 16 + lane // 16 * 8 + lane % 8, kd * 16 + lane // 8 % 2 * 8))
          split(kb, kb0, kb1)
          for mt = 0, RM - 1 do
            kernel.mma(MMA, sc[mt][2 * np], qf[mt], kb0, sc[mt][2 * np])
            kernel.mma(MMA, sc[mt][2 * np + 1], qf[mt], kb1, sc[mt][2 * np + 1])
          end
        end
      end
      if causal then
        -- the tiles that cross the diagonal: key j*BN + col is masked past query row
        kernel.when(kernel.gt(j * BN + BN - 1, qt * BM), function()
          for mt = 0, RM - 1 do
            for nt = 0, NT - 1 do
              for v in kernel.range(4, {name = "v", type = "upcast"}) do
                local col, row = j * BN + nt * 8 + lane % 4 * 2 + v % 2, row0(mt) + lane // 4 + v // 2 * 8
                sc[mt][nt][v] = kernel.where(kernel.gt(col, row), -math.huge, sc[mt][nt][v])
              end
            end
          end
        end)
      end
      -- the online softmax, a row at a time: value v of a C fragment is row v/2 of the m-tile's two
      for mt = 0, RM - 1 do
        for hr = 0, 1 do
          local r = 2 * mt + hr
          -- P = exp2(S c - m), the repair h(t, m, m') = t * exp2(m - m') in al
          online_row(function(nt, e, y)
            if y then sc[mt][nt][2 * hr + e] = y end
            return sc[mt][nt][2 * hr + e]
          end, NT, r, m, l, mn, al, c, x1, x2)
        end
        -- P as float16 A fragments: the C fragments of n-tiles 2i and 2i+1 are, value for
        -- value, the A fragment of keys 16i..16i+15
        for i = 0, BN // 16 - 1 do
          for v = 0, 7 do pa[mt][i][v] = kernel.cast(sc[mt][2 * i + v // 4][v % 4], "float16") end
        end
        -- the repair of the output, O * exp2(m - m'), before P V is added
        for i = 0, ND - 1 do
          for v in kernel.range(4, {name = "v", type = "upcast"}) do
            oc[mt][i][v] = oc[mt][i][v] * al[2 * mt + v // 2]
          end
        end
      end
      -- O += P V: B fragment value v is V[key k, dimension n], one load for the RM m-tiles
      for kk = 0, BN // 16 - 1 do
        for ip = 0, ND // 2 - 1 do
          -- ldmatrix.x4.trans: lane l names key 16kk + l%16 at dimensions 16ip + 8(l/16): the
          -- transposed 8x8 matrices are the B fragments of n-tiles 2ip (lanes 0-15) and 2ip+1
          kernel.ldmatrix(vb, staged and sV[0] or sV[slot], at(slot, kk * 16 + lane % 16, ip * 16 + lane // 16 * 8), {trans = true})
          split(vb, vb0, vb1)
          for mt = 0, RM - 1 do
            kernel.mma(MMA, oc[mt][2 * ip], pa[mt][kk], vb0, oc[mt][2 * ip])
            kernel.mma(MMA, oc[mt][2 * ip + 1], pa[mt][kk], vb1, oc[mt][2 * ip + 1])
          end
        end
      end
    end
    -- whether key tile t (a number or a kernel value) is computed: causal, the tiles past the
    -- diagonal are skipped
    local function exists(t)
      if causal then return kernel.lt(t * BN, qt * BM + BM) end
      if type(t) == "number" then return t < NK end
      return kernel.lt(t, NK)
    end
    local function guard(cond, f)
      if cond == true then f() elseif cond then kernel.when(cond, f) end
    end
    -- a step of tile j (always below NK): under exists(j) where causal
    local function step(j, f) if causal then guard(exists(j), f) else f() end end
    -- key tile t into slot s by cp.async, if it exists; the tile index clamped so that the region
    -- stays inside K and V by ranges (the guard makes the clamp a no-op where the copy runs)
    local function issue(t, s)
      guard(exists(t), function()
        local tc = type(t) == "number" and t or kernel.min(t, NK - 1)
        local dk, dv = sK[staged and 0 or s], sV[staged and 0 or s]
        if staged then dk, dv = dk:tile({s, 0, 0}, {1, BN, D}), dv:tile({s, 0, 0}, {1, BN, D}) end
        kernel.copy(dk, K:tile({b, h, tc * BN, 0}, {1, 1, BN, D}), {impl = "cp_async"})
        kernel.copy(dv, V:tile({b, h, tc * BN, 0}, {1, 1, BN, D}), {impl = "cp_async"})
      end)
    end
    if not NS then
      -- synchronous copies, two barriers a tile
      for j in kernel.range(NK, {name = "j", type = "reduce"}) do
        local function tile()
          kernel.barrier()   -- every warp is done with the previous tile
          kernel.copy(sK[0], K:tile({b, h, j * BN, 0}, {1, 1, BN, D}))
          kernel.copy(sV[0], V:tile({b, h, j * BN, 0}, {1, 1, BN, D}))
          kernel.barrier()
          compute(j, 0)
        end
        step(j, tile)
      end
    else
      -- the prologue: tiles 0..NS-2, a group each (one group a step from here on, empty where
      -- the tile does not exist, so that cp_async_wait(NS-2) always retires the step's own tile)
      for s = 0, NS - 2 do
        issue(s, s)
        kernel.cp_async_commit()
      end
      if not ahead then
        -- The GEMM's order: wait for tile j, one barrier (tile j visible to every thread, and
        -- every thread done with slot (j-1)%NS), compute on slot j%NS, then issue tile j+NS-1
        -- into slot (j-1)%NS. The verifier tracks copies in flight per buffer, so no copy into
        -- sK or sV may be in flight while the compute reads them: the tile of step j+NS-1 is
        -- issued after it. At NS = 2 that leaves a block no lead of its own (tile j+1 is
        -- issued after tile j's compute and waited for at the start of the next step; only the
        -- other blocks of the SM hide it); at NS = 3 one step.
        for j in kernel.range(NK, {name = "j", type = "reduce"}) do
          step(j, function()
            kernel.cp_async_wait(NS - 2)
            kernel.barrier()
            compute(j, j % NS)
            issue(j + NS - 1, (j + NS - 1) % NS)
            kernel.cp_async_commit()
          end)
        end
      else
        -- Ahead: a buffer a slot, so the verifier sees the copy in flight into slot (j-1)%NS and
        -- the compute's reads of slot j%NS in different buffers, and the next tile can be issued
        -- first: wait for tile j, one barrier (every thread done with slot (j-1)%NS), issue tile
        -- j+NS-1 into it, then compute on slot j%NS. At NS = 2 tile j+1 lands during tile j's
        -- compute, FlashAttention-2's overlap. The slot of a buffer is a Lua number, so the loop
        -- is unrolled by NS.
        for jj in kernel.range(NK // NS, {name = "j", type = "reduce"}) do
          for s = 0, NS - 1 do
            local j = jj * NS + s
            step(j, function()
              kernel.cp_async_wait(NS - 2)
              kernel.barrier()
              issue(j + NS - 1, (s + NS - 1) % NS)
              kernel.cp_async_commit()
              compute(j, s)
            end)
          end
        end
      end
    end
    -- the row sums over the quad, then O / l as float16
    for r = 0, 2 * RM - 1 do
      l[r] = l[r] + kernel.shuffle(l[r], x1)
      l[r] = l[r] + kernel.shuffle(l[r], x2)
      l[r] = kernel.recip(l[r])
    end
    for mt = 0, RM - 1 do
      for i = 0, ND - 1 do
        for v in kernel.range(4, {name = "v", type = "upcast"}) do
          O[{b, h, row0(mt) + lane // 4 + v // 2 * 8, i * 8 + lane % 4 * 2 + v % 2}] =
            kernel.cast(oc[mt][i][v] * l[2 * mt + v // 2], "float16")
        end
      end
    end
  end)
  return k
end

-- A key tile's scores in a wgmma accumulator fragment (acc: BN/2 values, value v = 4 nt + 2 hr
-- + e in row half hr): masked where causal is given ({j, qt, bm, frow, fcol}: the tiles that
-- cross the diagonal, key j*BN + col past query row qt*bm + row), then the online softmax of the
-- thread's two rows.
local function tile_softmax(acc, BN, causal, m, l, mn, al, c, x1, x2)
  if causal then
    local j, qt, bm = causal.j, causal.qt, causal.bm
    kernel.when(kernel.gt(j * BN + BN - 1, qt * bm), function()
      for v in kernel.range(BN // 2, {name = "v", type = "upcast"}) do
        acc[v] = kernel.where(kernel.gt(j * BN + causal.fcol(v), qt * bm + causal.frow(v)), -math.huge, acc[v])
      end
    end)
  end
  for hr = 0, 1 do
    online_row(function(nt, e, y)
      if y then acc[4 * nt + 2 * hr + e] = y end
      return acc[4 * nt + 2 * hr + e]
    end, BN // 8, hr, m, l, mn, al, c, x1, x2)
  end
end

-- The end of a wgmma kernel's rows: the thread's row sums l summed over the quad (x1, x2: lane ^
-- 1, lane ^ 2), then O = oacc / l as float16 at at(v), the element of the accumulator's value v.
local function store_rows(O, oacc, l, D, x1, x2, at)
  for r = 0, 1 do
    l[r] = l[r] + kernel.shuffle(l[r], x1)
    l[r] = l[r] + kernel.shuffle(l[r], x2)
    l[r] = kernel.recip(l[r])
  end
  for v in kernel.range(D // 2, {name = "v", type = "upcast"}) do
    O[at(v)] = kernel.cast(oacc[v] * l[v // 2 % 2], "float16")
  end
end

-- Q, K, V (inputs) and O (the output) of the TMA kernels, float16 (B, H, S, D)
local function attention_io(k, B, H, S, D)
  return k:input("Q", "float16", {B, H, S, D}), k:input("K", "float16", {B, H, S, D}),
         k:input("V", "float16", {B, H, S, D}), k:output("O", "float16", {B, H, S, D})
end

-- The shared layout of a TMA tile of `rows` rows of D halves (pre: a slot dimension {extent,
-- stride} in front): 64 columns a 128B swizzle row; at D = 128 the second 64 columns of all the
-- tile's rows follow the first (a TMA box each)
local function tma_layout(D, pre, rows)
  local shp, str = "64", "1"
  if D == 128 then shp, str = "(64,2)", string.format("(1,%d)", rows * 64) end
  return string.format("Sw<3,3,3> o 0 o (%s%d,%s):(%s%d,%s)", pre and pre[1] .. "," or "", rows, shp,
                       pre and pre[2] .. "," or "", 64, str)
end

-- Hopper (sm_90a): the same online softmax on wgmma's accumulators, the tiles brought in by TMA.
-- A block is one warpgroup (128 threads) taking 64 query rows of one (b, h): grid {S/64, H, B}.
-- Q's tile lands once in sQ {64, D}; key tiles of 64 go into NS = 2 slots of sK and sV {NS, 64, D}
-- (128B-swizzled rows of 64 halves: at D = 128 a row is two 64-column halves 8 KB apart, as TMA
-- writes a 128B-swizzled box), each slot's arrival on mbarrier full[s]. Per key tile j: S = Q K^T
-- by D/16 wgmma m64n64k16 (K^T from sK stored (key, d): {b_nk = true}, both operands K-major),
-- the online softmax on the accumulator (the m64n64 fragment is the m16n8 C fragment 8 times a
-- warp: value v is row 16w + lane/4 + 8((v/2)%2), column 8(v/4) + 2(lane%4) + v%2, two rows a
-- thread), P as float16 into sP {64, 64} (128B-swizzled), a barrier, O += P V by 4 wgmma m64nDk16
-- (V stored (key, d) = (k, n): MN-major), a barrier, then thread 0 refills slot s with tile j + NS.
-- Every group is waited for (wgmma_wait(0)) inside its step. Not warp-specialized: the TMA of
-- tile j + NS overlaps tiles j + 1 .. j + NS - 1's compute only. Causal: the diagonal tile is
-- masked and the tiles past it skipped (the heaviest query tiles first). opts: none yet.
function M.kernel_wgmma(B, H, S, D, causal, opts)
  opts = opts or {}
  -- opts.wg = 2: two warpgroups a block, 128 query rows sharing each K and V tile
  local WG = opts.wg or 1
  local BM, BN, NS = 64 * WG, 64, 2
  assert(D == 64 or D == 128, "prefill wgmma: D is 64 or 128")
  assert(S % BM == 0 and S // BN >= NS, "prefill wgmma: S a multiple of 64, at least 128")
  local NQ, NK = S // BM, S // BN
  local k = kernel.new{grid = {NQ, H, B}, block = {128 * WG}}
  local Q, K, V, O = attention_io(k, B, H, S, D)
  local function lay(pre, rows) return tma_layout(D, pre, rows) end
  local sQ = k:shared("sQ", "float16", {BM, D}, lay(nil, BM))
  local sK = k:shared("sK", "float16", {NS, BN, D}, lay({NS, BN * D}, BN))
  local sV = k:shared("sV", "float16", {NS, BN, D}, lay({NS, BN * D}, BN))
  local sP = k:shared("sP", "float16", {BM, BN}, string.format("Sw<3,3,3> o 0 o (%d,64):(64,1)", BM))
  local full = k:shared("full", "uint64", {NS})
  local sacc = k:register("sacc", "float32", {BN // 2})
  local oacc = k:register("oacc", "float32", {D // 2})
  local m = k:register("m", "float32", {2})
  local l = k:register("l", "float32", {2})
  local mn = k:register("mn", "float32", {2})
  local al = k:register("al", "float32", {2})
  local c = LOG2E / math.sqrt(D)
  local qbytes, kvbytes = BM * D * 2, 2 * BN * D * 2
  k:stage("prefill", function()
    local b, h = k.bz, k.by
    local qt = causal and (NQ - 1 - k.bx) or k.bx
    local t = k.tx
    local wg, w, lane = t // 128, t // 32 % 4, t % 32
    local x1, x2 = lane + 1 - lane % 2 * 2, lane + 2 - lane // 2 % 2 * 4
    -- the fragment's value v: row and column in the 64-row tile
    local function frow(v) return wg * 64 + w * 16 + lane // 4 + v // 2 % 2 * 8 end
    local function fcol(v) return v // 4 * 8 + lane % 4 * 2 + v % 2 end
    -- whether key tile j (a number or a kernel value) is computed
    local function exists(j)
      if causal then return kernel.le(j * BN, qt * BM + BM - 1) end
      if type(j) == "number" then return j < NK end
      return kernel.lt(j, NK)
    end
    local function guard(cond, f)
      if cond == true then f() elseif cond then kernel.when(cond, f) end
    end
    -- thread 0: key tile j (clamped into K and V: the guard makes the clamp a no-op) into slot s
    local function issue(j, s, extra)
      kernel.mbarrier_arrive(full, {s}, {tx = kvbytes + (extra or 0)})
      local jc = type(j) == "number" and j or kernel.min(j, NK - 1)
      kernel.tma(sK:tile({s, 0, 0}, {1, BN, D}), K:tile({b, h, jc * BN, 0}, {1, 1, BN, D}), full, {s})
      kernel.tma(sV:tile({s, 0, 0}, {1, BN, D}), V:tile({b, h, jc * BN, 0}, {1, 1, BN, D}), full, {s})
    end
    kernel.when(kernel.eq(t, 0), function()
      for s = 0, NS - 1 do kernel.mbarrier_init(full, {s}, 1) end
    end)
    kernel.barrier()
    kernel.when(kernel.eq(t, 0), function()
      -- Q with tile 0 on full[0]
      issue(0, 0, qbytes)
      kernel.tma(sQ, Q:tile({b, h, qt * BM, 0}, {1, 1, BM, D}), full, {0})
      for s = 1, NS - 1 do guard(exists(s), function() issue(s, s) end) end
    end)
    for v in kernel.range(D // 2, {name = "v", type = "upcast"}) do oacc[v] = 0 end
    for r = 0, 1 do
      m[r] = -math.huge
      l[r] = 0
    end
    for j in kernel.range(NK, {name = "j", type = "reduce"}) do
      guard(causal and exists(j) or true, function()
        local s = j % NS
        kernel.mbarrier_wait(full, {s}, j // NS % 2)
        -- S = Q K^T
        for v in kernel.range(BN // 2, {name = "v", type = "upcast"}) do sacc[v] = 0 end
        kernel.wgmma_fence()
        for kd = 0, D // 16 - 1 do
          kernel.wgmma(sacc, sQ:tile({wg * 64, kd * 16}, {64, 16}), sK:tile({s, 0, kd * 16}, {1, BN, 16}), {b_nk = true})
        end
        kernel.wgmma_commit()
        kernel.wgmma_wait(0)
        tile_softmax(sacc, BN, causal and {j = j, qt = qt, bm = BM, frow = frow, fcol = fcol}, m, l, mn, al, c, x1, x2)
        -- P into shared memory as float16; the output rescaled
        for v in kernel.range(BN // 2, {name = "v", type = "upcast"}) do
          sP[{frow(v), fcol(v)}] = kernel.cast(sacc[v], "float16")
        end
        for v in kernel.range(D // 2, {name = "v", type = "upcast"}) do
          oacc[v] = oacc[v] * al[v // 2 % 2]
        end
        kernel.barrier()   -- P visible to the warpgroup's wgmma (the CUDA emitter fences the async proxy)
        -- O += P V
        kernel.wgmma_fence()
        for kk = 0, BN // 16 - 1 do
          kernel.wgmma(oacc, sP:tile({wg * 64, kk * 16}, {64, 16}), sV:tile({s, kk * 16, 0}, {1, 16, D}))
        end
        kernel.wgmma_commit()
        kernel.wgmma_wait(0)
        kernel.barrier()   -- every thread done with slot s and sP
        kernel.when(kernel.eq(t, 0), function()
          guard(exists(j + NS), function() issue(j + NS, s) end)
        end)
      end)
    end
    store_rows(O, oacc, l, D, x1, x2, function(v) return {b, h, qt * BM + frow(v), fcol(v)} end)
  end)
  return k
end

-- FlashAttention-3's structure on the same statements (version 12). A producer warp after the
-- consumer warpgroups issues every TMA: Q once, then key tile j into slot j % NS once the consumers
-- have released it (the empty mbarrier, an arrival from each consumer thread), so no block barrier
-- is left in the loop and the warpgroups run apart. P stays in registers: S's accumulator values
-- 8kk..8kk+7, as float16, are the A fragment of P V's k-step kk (wgmma's RS form). And a
-- warpgroup overlaps its own softmax with its tensor cores: at tile j it issues S_j = Q K_j^T and
-- O += P_{j-1} V_{j-1} as two groups, waits for the first (wgmma_wait(1)), runs tile j's softmax
-- while the second runs, then waits for it, releases slot j - 1, rescales O and writes P_j.
-- opts.wg consumer warpgroups (64 query rows each; default 2), opts.bn keys a tile (64 or 128),
-- opts.stages slots (default 2). opts.pingpong (with 2 warpgroups or more): FlashAttention-3's
-- warpgroup ping-pong, the warpgroups take turns to issue their products (a ring of mbarriers,
-- turn[g] completed by warpgroup g - 1's 128 threads once they have issued theirs), so that one's
-- softmax runs under another's products instead of all of them computing at once.
-- opts.producer = "warpgroup": the producer is a whole warpgroup that gives its registers to the
-- consumers (setmaxnreg: 24 for it, 240 for each of 2 consumer warpgroups), as FlashAttention-3
-- does; ptxas sizes registers a whole warpgroup at a time, so a producer warp costs a
-- warpgroup's share anyway.
function M.kernel_fa3(B, H, S, D, causal, opts)
  opts = opts or {}
  local WG, BN, NS = opts.wg or 2, opts.bn or 64, opts.stages or 2
  local PP = opts.pingpong and WG > 1
  local PWG = opts.producer == "warpgroup"
  assert(not PWG or WG == 2, "prefill fa3: a producer warpgroup with 2 consumer warpgroups")
  local BM = 64 * WG
  assert(D == 64 or D == 128, "prefill fa3: D is 64 or 128")
  assert(BN == 64 or BN == 128, "prefill fa3: 64 or 128 keys a tile")
  assert(S % BM == 0 and S % BN == 0 and S // BN >= NS, "prefill fa3: S a multiple of the tiles, at least NS key tiles")
  local NQ, NK = S // BM, S // BN
  local PRODUCER = 128 * WG
  local k = kernel.new{grid = {NQ, H, B}, block = {PRODUCER + (PWG and 128 or 32)}}
  local Q, K, V, O = attention_io(k, B, H, S, D)
  local function lay(pre, rows) return tma_layout(D, pre, rows) end
  local sQ = k:shared("sQ", "float16", {BM, D}, lay(nil, BM))
  local sK = k:shared("sK", "float16", {NS, BN, D}, lay({NS, BN * D}, BN))
  local sV = k:shared("sV", "float16", {NS, BN, D}, lay({NS, BN * D}, BN))
  local full = k:shared("full", "uint64", {NS})
  local empty = k:shared("empty", "uint64", {NS})
  local qbar = k:shared("qbar", "uint64", {1})
  local turn = PP and k:shared("turn", "uint64", {WG})
  local sacc = k:register("sacc", "float32", {BN // 2})
  local oacc = k:register("oacc", "float32", {D // 2})
  local P = k:register("P", "float16", {BN // 16, 8})
  local m = k:register("m", "float32", {2})
  local l = k:register("l", "float32", {2})
  local mn = k:register("mn", "float32", {2})
  local al = k:register("al", "float32", {2})
  local c = LOG2E / math.sqrt(D)
  k:stage("prefill", function()
    local b, h = k.bz, k.by
    local qt = causal and (NQ - 1 - k.bx) or k.bx
    local t = k.tx
    -- (the producer warp's wg wraps to 0: the analyses of the consumers' tiles enumerate every thread)
    local wg, w, lane = t // 128 % WG, t // 32 % 4, t % 32
    local x1, x2 = lane + 1 - lane % 2 * 2, lane + 2 - lane // 2 % 2 * 4
    local function frow(v) return wg * 64 + w * 16 + lane // 4 + v // 2 % 2 * 8 end
    local function fcol(v) return v // 4 * 8 + lane % 4 * 2 + v % 2 end
    -- the key tiles this block computes: all, or causal those up to the diagonal
    local last = causal and kernel.min((qt * BM + BM - 1) // BN, NK - 1) or NK - 1
    local function exists(j)
      if causal then return kernel.le(j, last) end
      return true
    end
    local function guard(cond, f)
      if cond == true then f() else kernel.when(cond, f) end
    end
    kernel.when(kernel.eq(t, PRODUCER), function()
      for s = 0, NS - 1 do
        kernel.mbarrier_init(full, {s}, 1)
        kernel.mbarrier_init(empty, {s}, PRODUCER)
      end
      kernel.mbarrier_init(qbar, {0}, 1)
      if PP then
        for g = 0, WG - 1 do kernel.mbarrier_init(turn, {g}, 128) end
      end
    end)
    kernel.barrier()
    if PWG then kernel.when(kernel.ge(t, PRODUCER), function() kernel.setmaxnreg(24, "dec") end) end
    -- the producer: Q, then each key tile once its slot is free
    kernel.when(kernel.eq(t, PRODUCER), function()
      kernel.mbarrier_arrive(qbar, {0}, {tx = BM * D * 2})
      kernel.tma(sQ, Q:tile({b, h, qt * BM, 0}, {1, 1, BM, D}), qbar, {0})
      for j in kernel.range(NK, {name = "j", type = "reduce"}) do
        guard(exists(j), function()
          local s = j % NS
          kernel.when(kernel.ge(j, NS), function() kernel.mbarrier_wait(empty, {s}, (j // NS + 1) % 2) end)
          kernel.mbarrier_arrive(full, {s}, {tx = 2 * BN * D * 2})
          kernel.tma(sK:tile({s, 0, 0}, {1, BN, D}), K:tile({b, h, j * BN, 0}, {1, 1, BN, D}), full, {s})
          kernel.tma(sV:tile({s, 0, 0}, {1, BN, D}), V:tile({b, h, j * BN, 0}, {1, 1, BN, D}), full, {s})
        end)
      end
    end)
    -- the consumers
    kernel.when(kernel.lt(t, PRODUCER), function()
      if PWG then kernel.setmaxnreg(240, "inc") end
      -- ping-pong: round r of warpgroup wg's products waits for its turn (phase r of turn[wg]),
      -- then passes it on; the last warpgroup opens round 0 of the first
      local function my_turn(r)
        if PP then kernel.mbarrier_wait(turn, {wg}, r % 2) end
      end
      local function pass_turn()
        if PP then kernel.mbarrier_arrive(turn, {(wg + 1) % WG}) end
      end
      if PP then kernel.when(kernel.eq(wg, WG - 1), pass_turn) end
      -- S_j = Q K_j^T into sacc (a group of its own, committed; the first k-step overwrites sacc)
      local function scores(s)
        kernel.wgmma_fence()
        for kd = 0, D // 16 - 1 do
          kernel.wgmma(sacc, sQ:tile({wg * 64, kd * 16}, {64, 16}), sK:tile({s, 0, kd * 16}, {1, BN, 16}),
                       {b_nk = true, zero = kd == 0})
        end
        kernel.wgmma_commit()
      end
      -- O += P V_s (a group of its own, committed; fenced by the caller)
      local function pv(s)
        for kk = 0, BN // 16 - 1 do
          kernel.wgmma(oacc, P:tile({kk, 0}, {1, 8}), sV:tile({s, kk * 16, 0}, {1, 16, D}))
        end
        kernel.wgmma_commit()
      end
      -- tile j's mask (causal, the tiles that cross the diagonal) and online softmax, in sacc
      local function softmax(j)
        tile_softmax(sacc, BN, causal and {j = j, qt = qt, bm = BM, frow = frow, fcol = fcol}, m, l, mn, al, c, x1, x2)
      end
      -- O rescaled by the repair, P = the scores as float16 in P V's A fragments
      local function rescale_and_p()
        for v in kernel.range(D // 2, {name = "v", type = "upcast"}) do oacc[v] = oacc[v] * al[v // 2 % 2] end
        for kk in kernel.range(BN // 16, {name = "kk", type = "upcast"}) do
          for e in kernel.range(8, {name = "e", type = "upcast"}) do
            P[{kk, e}] = kernel.cast(sacc[kk * 8 + e], "float16")
          end
        end
      end
      for v in kernel.range(D // 2, {name = "v", type = "upcast"}) do oacc[v] = 0 end
      for r = 0, 1 do
        m[r] = -math.huge
        l[r] = 0
      end
      kernel.mbarrier_wait(qbar, {0}, 0)
      kernel.mbarrier_wait(full, {0}, 0)
      my_turn(0)
      scores(0)
      pass_turn()
      kernel.wgmma_wait(0)
      softmax(0)
      rescale_and_p()
      for jj in kernel.range(NK - 1, {name = "j", type = "reduce"}) do
        local j = jj + 1
        guard(exists(j), function()
          local s, sp = j % NS, (j + NS - 1) % NS
          kernel.mbarrier_wait(full, {s}, j // NS % 2)
          my_turn(j)
          scores(s)   -- fences P and O too
          pv(sp)
          pass_turn()
          kernel.wgmma_wait(1)
          softmax(j)
          kernel.wgmma_wait(0)
          kernel.mbarrier_arrive(empty, {sp})
          rescale_and_p()
        end)
      end
      my_turn(last + 1)
      kernel.wgmma_fence()
      pv(last % NS)
      pass_turn()
      kernel.wgmma_wait(0)
      store_rows(O, oacc, l, D, x1, x2, function(v) return {b, h, qt * BM + frow(v), fcol(v)} end)
    end)
  end)
  return k
end

-- FLOPs: two products of (S x S x D) each, 2 flops a multiply-add; causal: half the score matrix
local function flops(B, H, S, D, causal)
  return 4 * B * H * S * S * D // (causal and 2 or 1)
end

function M.cases()
  local out = {}
  local B, H, S = 4, 16, 4096
  -- a case: the kernel against PyTorch's SDPA (flash in float16; its math path in float64 for the
  -- check) and the unfused peer (the scores materialized, softmax, then the product)
  local function case(name, k, D, causal, what)
    return {
      name = name, kernel = k,
      inputs = {Q = "randn", K = "randn", V = "randn"},
      torch = string.format("torch.nn.functional.scaled_dot_product_attention(x[0], x[1], x[2], is_causal=%s)",
                            causal and "True" or "False"),
      peers = {unfused = string.format(
        "torch.softmax((x[0] @ x[1].transpose(-2, -1) * %.17g)%s, -1) @ x[2]", 1 / math.sqrt(D),
        causal and string.format(".masked_fill(torch.ones(%d, %d, dtype=torch.bool, device=x[0].device).triu(1), float('-inf'))", S, S) or "")},
      flops = flops(B, H, S, D, causal),
      bytes = 4 * B * H * S * D * 2, tol = 1e-2,
      note = string.format("B%d H%d S%d D%d%s; %s", B, H, S, D, causal and " causal" or "", what),
    }
  end
  -- {name, D, keys a tile, m-tiles a warp, warps a block, causal too, Q's fragments from}. The
  -- first four shapes are version 6's (prefill_d64_w8 takes Q from shared memory: with Q in
  -- registers ptxas spills 8 bytes at its 128 registers). The _qs variants trade Q's registers
  -- (and a smaller key tile, to stay within 48 KB of static shared memory) for more blocks an SM
  -- (ptxas -v: registers, then blocks of 64K registers): d64_qs 156 (3 blocks), d128_qs 128 (4),
  -- d128_w8_qs 115 (2 of 8 warps), d128_m2_qs 211 (2, but K and V fragments serve 2 m-tiles).
  for _, cfg in ipairs{{"d64", 64, 64, 2, 4, true}, {"d128", 128, 64, 1, 4, true},
                       {"d64_w8", 64, 64, 1, 8, false, "shared"}, {"d128_w8", 128, 64, 1, 8, true},
                       {"d64_qs", 64, 32, 2, 4, true, "shared"}, {"d128_qs", 128, 32, 1, 4, true, "shared"},
                       {"d128_w8_qs", 128, 16, 1, 8, false, "shared"}, {"d128_m2_qs", 128, 16, 2, 4, false, "shared"},
                       -- version 9, cp.async (8: stages, 9: ahead): the GEMM's order at 2 stages (padded K + V
                       -- 36 KB at D = 64 with 64-key tiles, 34 KB at D = 128 with 32-key tiles); the next tile
                       -- issued ahead of the compute (a buffer a slot; at D = 64 with 32-key tiles, or 8 warps
                       -- of one m-tile: 64-key tiles with 2 m-tiles unrolled x2 take 255 registers and spill
                       -- 68 bytes); 3 stages in the GEMM's order with 32-key tiles at D = 64 (27 KB)
                       {"d64_s2", 64, 64, 2, 4, true, nil, 2}, {"d128_s2", 128, 32, 1, 4, true, nil, 2},
                       {"d64_s2a", 64, 32, 2, 4, true, nil, 2, true}, {"d64_w8_s2a", 64, 64, 1, 8, false, nil, 2, true},
                       {"d128_s2a", 128, 32, 1, 4, true, nil, 2, true}, {"d64_s3", 64, 32, 2, 4, false, nil, 3}} do
    local D, BN, RM, W, q = cfg[2], cfg[3], cfg[4], cfg[5], cfg[7] or "registers"
    local NS, ahead = cfg[8], cfg[9]
    for _, causal in ipairs(cfg[6] and {false, true} or {false}) do
      out[#out + 1] = case("prefill_" .. cfg[1] .. (causal and "_causal" or ""),
        M.kernel(B, H, S, D, BN, RM, W, causal, {q = q, stages = NS, ahead = ahead}), D, causal,
        string.format("%d query rows a block of %d warps, %d keys a tile, Q from %s; ldmatrix%s", 16 * RM * W, W,
                      BN, q, NS and string.format(", %d cp.async stages%s", NS, ahead and " ahead" or "") or ""))
    end
  end
  -- wgmma + TMA (sm_90a), a warpgroup of 64 query rows (or two, wg2: 128 rows sharing the K and V
  -- tiles), 64 keys a tile, 2 slots
  for _, D in ipairs{64, 128} do
    for _, cfg in ipairs{{false, 1}, {true, 1}, {false, 2}, {true, 2}} do
      local causal, WG = cfg[1], cfg[2]
      out[#out + 1] = case(
        string.format("prefill_d%d_wgmma%s%s", D, WG == 2 and "_wg2" or "", causal and "_causal" or ""),
        M.kernel_wgmma(B, H, S, D, causal, {wg = WG}), D, causal,
        string.format("64 query rows a warpgroup, %d a block, 64 keys a tile, wgmma m64n64k16 (S, K^T as b_nk) "
                      .. "and m64n%dk16 (P V), TMA into 2 slots", WG, D))
    end
  end
  -- FlashAttention-3's structure (M.kernel_fa3, version 12): two consumer warpgroups and a producer
  -- warp, P in registers (wgmma's RS form), the softmax under the next tile's products; {D, wg,
  -- keys a tile, slots, ping-pong}
  for _, cfg in ipairs{{64, 2, 128, 2, true, "warpgroup"}, {64, 2, 128, 3, false, "warpgroup"},
                       {64, 2, 128, 4, false, "warpgroup"}, {64, 2, 128, 3, true, "warpgroup"},
                       {128, 2, 64, 2}, {128, 2, 128, 2, false, "warpgroup"}, {128, 2, 128, 3, false, "warpgroup"}} do
    local D, WG, BN, NS, PP, PR = cfg[1], cfg[2], cfg[3], cfg[4], cfg[5], cfg[6]
    for _, causal in ipairs{false, true} do
      out[#out + 1] = case(
        string.format("prefill_d%d_fa3_wg%d_n%d_s%d%s%s%s", D, WG, BN, NS, PP and "_pp" or "", PR and "_pwg" or "",
                      causal and "_causal" or ""),
        M.kernel_fa3(B, H, S, D, causal, {wg = WG, bn = BN, stages = NS, pingpong = PP, producer = PR}), D, causal,
        string.format("FlashAttention-3's structure: %d consumer warpgroups of 64 rows and a producer %s (TMA, %d "
                      .. "slots), %d keys a tile, P in registers (RS wgmma), the softmax under the next tile's "
                      .. "products%s", WG, PR and "warpgroup (setmaxnreg 24/240)" or "warp", NS, BN,
                      PP and ", warpgroup ping-pong" or ""))
    end
  end
  return out
end

if not ... then
  -- the repair: what s:rolling_update derives for the attention program written as this kernel
  -- computes it (scores in log2 units, exp2, the output unnormalized until the end), against the
  -- kernel's t * exp2(m - m') at a few points
  local q, kk, v = tensor.param("q", {8, 16}), tensor.param("k", {8, 16}), tensor.param("v", {8, 16})
  local sc = q:matmul(kk:permute(1, 0)) * 0.25
  local e = (sc - sc:max(1, true)):exp2()
  for _, t in ipairs{{e:sum(1), "l"}, {e:matmul(v), "o"}} do
    local s = kernel.lower(t[1], t[2]):schedule()
    s:rolling_update(t[2], "xmax.j")
    assert(s:verify{trials = 2})
    local hs = assert(s:explain():match("h%(t, r, r'%) = ([^\n]+)"), "prefill: no repair in the derivation")
    local h = assert(load("local t, r, rp = ...; return " .. hs:gsub("r'", "rp"):gsub("exp%(", "math.exp(")))
    for _, x in ipairs{{1.5, 0.25, 2.0}, {-3.0, -1.0, 4.5}, {0.5, 7.0, 7.0}} do
      local want = x[1] * 2 ^ (x[2] - x[3])
      assert(math.abs(h(x[1], x[2], x[3]) - want) <= 1e-5 * math.abs(want), "prefill: the repair differs from h = " .. hs)
    end
    print(string.format("rolling update of %s: h(t, r, r') = %s, the kernel's t * exp2(m - m')", t[2], hs))
  end
  -- the kernel against the tensor program (float16 inputs, computed in float32) at D = 64 and 128,
  -- with 64 and 128 rows a block: two query tiles, and causal tiles that cross the diagonal or
  -- lie past it
  local B, H, S = 1, 2, 256
  -- {D, keys a tile, m-tiles a warp, warps a block, where Q's fragments come from, swizzled tiles,
  -- stages, ahead}
  local cfgs = {{64, 64, 1, 4}, {64, 64, 2, 4}, {64, 32, 2, 4}, {64, 64, 1, 8}, {128, 64, 1, 4}, {128, 64, 1, 8},
                {64, 64, 1, 8, "shared"}, {64, 32, 2, 4, "shared"}, {128, 32, 1, 4, "shared"}, {128, 16, 1, 8, "shared"},
                {128, 16, 2, 4, "shared"}, {64, 32, 2, 4, "shared", true},
                -- cp.async stages (7: how many; 8: ahead, the next tile issued before the compute)
                {64, 64, 2, 4, nil, nil, 2}, {64, 32, 2, 4, nil, nil, 2, true}, {64, 64, 1, 8, nil, nil, 2, true},
                {64, 32, 2, 4, nil, nil, 3},
                {128, 32, 1, 4, nil, nil, 2}, {128, 32, 1, 4, nil, nil, 2, true}, {128, 16, 1, 4, nil, nil, 3}}
  local function pipe(cfg)
    return cfg[7] and string.format(", %d cp.async stages%s", cfg[7], cfg[8] and " ahead" or "") or ""
  end
  for _, D in ipairs{64, 128} do
    local function input(seed) return ((tensor.rand({B, H, S, D}, {seed = seed}) - 0.5) * 4):cast("float16") end
    local qi, ki, vi = input(1), input(2), input(3)
    for _, causal in ipairs{false, true} do
      local scores = qi:cast("float32"):matmul(ki:cast("float32"):permute{0, 1, 3, 2}) * (1 / math.sqrt(D))
      if causal then
        scores = tensor.arange(S):reshape{S, 1}:lt(tensor.arange(S):reshape{1, S}):where(-math.huge, scores)
      end
      local want = scores:softmax(3):matmul(vi:cast("float32")):tolist()
      for i, cfg in ipairs(cfgs) do
        -- the six base shapes causal and not; the variants (Q from shared memory, swizzled,
        -- cp.async) causal only, which runs full tiles, masked diagonal tiles and skipped ones
        if cfg[1] == D and (i <= 6 or causal) then
          local BN, RM, W, q = cfg[2], cfg[3], cfg[4], cfg[5] or "registers"
          local got = M.kernel(B, H, S, D, BN, RM, W, causal, {q = q, swizzle = cfg[6], stages = cfg[7], ahead = cfg[8]}):run{Q = qi, K = ki, V = vi}:cast("float32"):tolist()
          local num, den = 0, 0
          for a = 1, B do for b = 1, H do for i = 1, S do for j = 1, D do
            local d = got[a][b][i][j] - want[a][b][i][j]
            num, den = num + d * d, den + want[a][b][i][j] ^ 2
          end end end end
          local rel = math.sqrt(num / den)
          assert(rel < 1e-3, "prefill: relative error " .. rel)
          print(string.format("prefill attention, B%d H%d S%d D%d%s, %d rows a block of %d warps, %d keys a tile, "
                              .. "Q from %s%s%s: within %.1e (relative) of the tensor program", B, H, S, D,
                              causal and " causal" or "", 16 * RM * W, W, BN, q, cfg[6] and ", swizzled" or "",
                              pipe(cfg), rel))
        end
      end
    end
  end
  -- the fragment loads free of bank conflicts: each 8x8 matrix of an ldmatrix is one shared load
  -- of one wavefront (its 8 rows of 16 bytes in distinct bank groups); the only other shared
  -- accesses are the copies' 16-byte stores, 4 wavefronts each (the minimum for 512 bytes)
  for _, cfg in ipairs(cfgs) do
    local D, BN, RM, W, q = cfg[1], cfg[2], cfg[3], cfg[4], cfg[5] or "registers"
    local c = M.kernel(1, 1, 128, D, BN, RM, W, false, {q = q, swizzle = cfg[6], stages = cfg[7], ahead = cfg[8]}):counts()
    local load_wavefronts = c.shared_accesses - 4 * c.shared_stores
    assert(c.shared_loads == 4 * c.ldmatrices and load_wavefronts == c.shared_loads,
           string.format("prefill: %d ldmatrix wavefronts for %d matrices", load_wavefronts, c.shared_loads))
    print(string.format("prefill D%d, %d rows a block of %d warps, %d keys a tile, Q from %s%s%s: %d ldmatrix.x4 a "
                        .. "warp and tile, no bank conflict", D, 16 * RM * W, W, BN, q, cfg[6] and ", swizzled" or "",
                        pipe(cfg), c.ldmatrices // (c.blocks * W * (128 // BN))))
  end
  -- wgmma + TMA (M.kernel_wgmma): S = 256 (4 key tiles on 2 slots: the loop refills them), causal
  -- and not, at D = 64 and 128, against the tensor program in float32
  for _, D in ipairs{64, 128} do
    local function input(seed) return ((tensor.rand({B, H, S, D}, {seed = seed}) - 0.5) * 4):cast("float16") end
    local qi, ki, vi = input(4), input(5), input(6)
    for _, causal in ipairs{false, true} do
      local scores = qi:cast("float32"):matmul(ki:cast("float32"):permute{0, 1, 3, 2}) * (1 / math.sqrt(D))
      if causal then
        scores = tensor.arange(S):reshape{S, 1}:lt(tensor.arange(S):reshape{1, S}):where(-math.huge, scores)
      end
      local want = scores:softmax(3):matmul(vi:cast("float32")):tolist()
      local k = M.kernel_wgmma(B, H, S, D, causal)
      local got = k:run{Q = qi, K = ki, V = vi}:cast("float32"):tolist()
      local num, den = 0, 0
      for a = 1, B do for b = 1, H do for i = 1, S do for j = 1, D do
        local d = got[a][b][i][j] - want[a][b][i][j]
        num, den = num + d * d, den + want[a][b][i][j] ^ 2
      end end end end
      local rel = math.sqrt(num / den)
      assert(rel < 2e-3, "prefill wgmma: relative error " .. rel)
      local cnt = k:counts{Q = qi, K = ki, V = vi}
      -- a computed tile: D/16 wgmmas for S, 4 for P V
      local tiles = causal and B * H * (S // 64) * (S // 64 + 1) // 2 or B * H * (S // 64) ^ 2
      assert(cnt.wgmmas == tiles * (D // 16 + 4), "prefill wgmma: " .. cnt.wgmmas .. " wgmmas")
      print(string.format("prefill attention, B%d H%d S%d D%d%s, wgmma + TMA, 64 rows a warpgroup, 64 keys a tile, "
                          .. "2 slots: within %.1e (relative) of the tensor program; %d wgmmas, %d TMA boxes",
                          B, H, S, D, causal and " causal" or "", rel, cnt.wgmmas, cnt.tmas))
      if D == 128 or not causal then
        -- two warpgroups a block (128 rows): the rows of the second, the two tiles that cross
        -- the diagonal in a causal block, and Q's tile of 128 rows of two column halves at D 128
        local k2 = M.kernel_wgmma(B, H, S, D, causal, {wg = 2})
        local got2 = k2:run{Q = qi, K = ki, V = vi}:cast("float32"):tolist()
        num, den = 0, 0
        for a = 1, B do for b = 1, H do for i = 1, S do for j = 1, D do
          local d = got2[a][b][i][j] - want[a][b][i][j]
          num, den = num + d * d, den + want[a][b][i][j] ^ 2
        end end end end
        assert(math.sqrt(num / den) < 2e-3, "prefill wgmma wg2: relative error " .. math.sqrt(num / den))
        print(string.format("the same, two warpgroups a block: within %.1e", math.sqrt(num / den)))
      end
    end
  end
  -- FlashAttention-3's structure (M.kernel_fa3): a producer warp or warpgroup, P in registers, the
  -- softmax under the next tile's products, ping-pong; S = 512 with 128-key tiles gives 4 key
  -- tiles, so 3 slots are refilled once (one head: the interpreter runs every thread of 3 warpgroups)
  local Sf = 512
  for _, D in ipairs{64, 128} do
    local function input(seed) return ((tensor.rand({1, 1, Sf, D}, {seed = seed}) - 0.5) * 4):cast("float16") end
    local qi, ki, vi = input(7), input(8), input(9)
    for _, causal in ipairs{false, true} do
      local scores = qi:cast("float32"):matmul(ki:cast("float32"):permute{0, 1, 3, 2}) * (1 / math.sqrt(D))
      if causal then
        scores = tensor.arange(Sf):reshape{Sf, 1}:lt(tensor.arange(Sf):reshape{1, Sf}):where(-math.huge, scores)
      end
      local want = scores:softmax(3):matmul(vi:cast("float32")):tolist()
      local opts = D == 64 and {wg = 2, bn = 128, stages = 3, producer = "warpgroup", pingpong = true}
                   or {wg = 2, bn = 128, stages = 3, producer = "warpgroup"}
      local got = M.kernel_fa3(1, 1, Sf, D, causal, opts):run{Q = qi, K = ki, V = vi}:cast("float32"):tolist()
      local num, den = 0, 0
      for i = 1, Sf do for j = 1, D do
        local d = got[1][1][i][j] - want[1][1][i][j]
        num, den = num + d * d, den + want[1][1][i][j] ^ 2
      end end
      local rel = math.sqrt(num / den)
      assert(rel < 2e-3, "prefill fa3: relative error " .. rel)
      print(string.format("prefill attention, B1 H1 S%d D%d%s, FlashAttention-3's structure (2 consumer warpgroups, "
                          .. "a producer warpgroup, 128-key tiles, 3 slots%s): within %.1e (relative) of the "
                          .. "tensor program", Sf, D, causal and " causal" or "", opts.pingpong and ", ping-pong" or "",
                          rel))
    end
  end
end
return M

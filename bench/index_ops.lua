-- index_ops.lua - LEGO's Table IV: operation counts of the index code of five Triton
-- kernels, hand-written (as in Triton's tutorials and LEGO's benchmarks/triton/*.py) and
-- lowered by tessel from symbolic LEGO layouts (./tessel bench/index_ops.lua).
--
-- Counting: e:ops() counts the operations of each expression as printed (a tree: a
-- shared subexpression counts each time it appears), summed over the expressions of a
-- row. Block sizes are Triton constexprs (constants here: 4, 4, 2, BLOCK 4); sizes,
-- strides and program ids are variables. The paper's counts are quoted as it states them;
-- it does not say which expressions it counts nor how, so they are not the same measure.
local V = uop.var
local where, lt, eq = uop.where, uop.lt, uop.eq

-- a row: name, LEGO's (original, optimized) counts, and a list of
-- {label, hand-written expression, tessel's expression, domain or nil}
local rows = {}
local function row(name, paper, items) rows[#rows + 1] = {name = name, paper = paper, items = items} end

-- Equivalence on the layout's domain (where the layout is defined: in-range tiles,
-- sizes that the tiles divide), checked at every point of the variables' small ranges.
local function same(a, b, dom)
  if not dom then return uop.equivalent(a, b) end
  local vs, seen = {}, {}
  for _, e in ipairs({a, b, dom}) do
    for _, v in ipairs(uop.vars(e)) do
      if not seen[v.name] then seen[v.name] = true; vs[#vs + 1] = v end
    end
  end
  local env = {}
  local function go(k)
    if k > #vs then
      if dom:eval(env) == false or dom:eval(env) == 0 then return true end
      local x, y = a:eval(env), b:eval(env)
      if x ~= y then
        local t = {}
        for _, v in ipairs(vs) do t[#t + 1] = v.name .. "=" .. env[v.name] end
        return false, table.concat(t, ", ") .. (": %d vs %d"):format(x, y)
      end
      return true
    end
    for x = vs[k].min, vs[k].max do
      env[vs[k].name] = x
      local ok, cex = go(k + 1)
      if not ok then return ok, cex end
    end
    return true
  end
  return go(1)
end

-- Matmul: Triton's grouped program-id ordering (tutorial 03) --------------------------
do
  local pid, nm, nn, GM = V("pid", 0, 127), V("num_pid_m", 1, 8), V("num_pid_n", 1, 8), V("GM", 1, 4)
  -- hand-written
  local npig = GM * nn
  local group_id = pid // npig
  local first = group_id * GM
  local gsm = uop.min(nm - first, GM)
  local h_m = first + (pid % npig) % gsm
  local h_n = (pid % npig) // gsm
  -- LEGO (matmul_sympy.py): OrderBy(Col(num_m // GM, 1), Col(GM, num_n)).TileBy([num_m, num_n]), inverted
  local L = lego.OrderBy(lego.Col(nm // GM, 1), lego.Col(GM, nn)):TileBy({nm, nn})
  local t_m, t_n = L:inv_expr{vars = {pid}}
  -- LEGO's ordering assumes GM divides num_pid_m (its comment says so); pid in range
  local dom = lt(pid, nm * nn) & eq(nm % GM, 0)
  row("Matmul (grouped pid)", {31, 9}, {{"pid_m", h_m, t_m, dom}, {"pid_n", h_n, t_n, dom}})
end

-- Grouped GEMM: the A, B, C tile offsets (tutorial 08; grouped_gemm_sympy.py) ----------
do
  local BM, BN, BK = 4, 4, 2
  local M, N, K = V("gm", 1, 12), V("gn", 1, 12), V("gk", 1, 6)
  local tm, tn, k = V("tile_m", 0, 2), V("tile_n", 0, 2), V("k", 0, 2)
  local i, j, kk, kb = V("i", 0, BM - 1), V("j", 0, BN - 1), V("kk", 0, BK - 1), V("kb", 0, BK - 1)
  -- hand-written: offs_am[:, None] * lda + offs_k[None, :], advanced by BK per step k
  -- (row-major operands: lda = K, ldb = N, ldc = N)
  local h_a = (tm * BM + i) * K + kk + k * BK
  local h_b = kb * N + (tn * BN + j) + k * BK * N
  local h_c = N * (tm * BM + i) + (tn * BN + j)
  -- LEGO: OrderBy(Row(M, K)).TileBy([M/BM, K/BK], [BM, BK]) at ('pid_m', k, :, :), etc.
  local A = lego.OrderBy(lego.Row(M, K)):TileBy({M // BM, K // BK}, {BM, BK})
  local B = lego.OrderBy(lego.Row(K, N)):TileBy({K // BK, N // BN}, {BK, BN})
  local C = lego.OrderBy(lego.Row(M, N)):TileBy({M // BM, N // BN}, {BM, BN})
  local t_a = A:expr{vars = {tm, k, i, kk}}
  local t_b = B:expr{vars = {k, tn, kb, j}}
  local t_c = C:expr{vars = {tm, tn, i, j}}
  local dm, dn, dk = eq(M % BM, 0) & lt(tm * BM, M), eq(N % BN, 0) & lt(tn * BN, N), eq(K % BK, 0) & lt(k * BK, K)
  row("Grouped GEMM (A, B, C)", {20, 6}, {{"a", h_a, t_a, dm & dk}, {"b", h_b, t_b, dn & dk}, {"c", h_c, t_c, dm & dn}})
end

-- Softmax: input and output row offsets (tutorial 02; softmax_sympy.py) --------------------
do
  local n_rows, n_cols = V("n_rows", 1, 8), V("n_cols", 1, 8)
  local r, c = V("row_idx", 0, 7), V("col", 0, 7)
  local h = r * n_cols + c          -- row_start_ptr = input_ptr + row_idx * row_stride; + col_offsets
  local S = lego.OrderBy(lego.Row(n_rows, n_cols)):TileBy({n_rows, n_cols})
  local t = S:expr{vars = {r, c}}
  local dom = lt(r, n_rows) & lt(c, n_cols)
  row("Softmax (in, out)", {4, 0}, {{"input", h, t, dom}, {"output", h, t, dom}})
end

-- LayerNorm forward: X/Y element offsets and Mean/Rstd (tutorial 05; layernorm_triton.py) --
do
  local BLOCK = 4
  local M, N = V("M", 1, 6), V("N", 1, 16)
  local r, b, c = V("row", 0, 5), V("blk", 0, 3), V("c", 0, BLOCK - 1)
  -- X += row * stride; cols = off + tl.arange(0, BLOCK) with off = blk * BLOCK
  local h_x = r * N + (b * BLOCK + c)
  local h_mean = r
  -- LEGO: X_L = OrderBy(Row(M, N)).TileBy([M, N/BLOCK], [1, BLOCK]); W_L = OrderBy(Row(M)).TileBy([M])
  local X = lego.OrderBy(lego.Row(M, N)):TileBy({M, N // BLOCK}, {1, BLOCK})
  local W = lego.OrderBy(lego.Row(M)):TileBy({M})
  local t_x = X:expr{vars = {r, b, 0, c}}
  local t_mean = W:expr{vars = {r}}
  local dom = eq(N % BLOCK, 0) & lt(r, M) & lt(b * BLOCK, N)
  row("LayerNorm fwd (X, Y, Mean)", {6, 1},
      {{"x", h_x, t_x, dom}, {"y", h_x, t_x, dom}, {"mean/rstd", h_mean, t_mean, dom}})
end

-- LayerNorm backward: the column offsets of the partial dW/dB (W_BWD_L) --------------------
do
  local BN = V("BLOCK_SIZE_N", 1, 16)
  local cols = V("cols", 0, 15)
  local h = cols                    -- cols = tl.arange(0, BLOCK_SIZE_N)
  local W = lego.OrderBy(lego.Row(BN)):TileBy({BN})
  local t = W:expr{vars = {cols}}
  row("LayerNorm bwd (dW cols)", {4, 0}, {{"cols", h, t, lt(cols, BN)}})
end

local fmt = "%-28s %11s %16s %11s  %s"
print(fmt:format("kernel (expressions)", "hand-written", "LEGO paper", "tessel", "same on the domain"))
local worse = 0
for _, r in ipairs(rows) do
  local hn, tn, all, bad = 0, 0, true, nil
  for _, it in ipairs(r.items) do
    hn = hn + it[2]:ops()
    tn = tn + it[3]:ops()
    local ok, cex = same(it[2], it[3], it[4])
    if not ok then all = false; bad = it[1] .. ": " .. tostring(cex) end
  end
  if tn > r.paper[2] then worse = worse + 1 end
  print(fmt:format(r.name, hn, ("%d -> %d"):format(r.paper[1], r.paper[2]), tn,
                   all and "yes" or ("NO (" .. bad .. ")")))
  assert(all, r.name .. ": tessel's expression differs from the hand-written one")
end
print()
for _, r in ipairs(rows) do
  for _, it in ipairs(r.items) do
    print(("%-28s %-10s %s"):format(r.name, it[1], tostring(it[3])))
  end
end
if os.getenv("TESSEL_BENCH_VERBOSE") then
  for _, r in ipairs(rows) do
    for _, it in ipairs(r.items) do print(("%-28s %-10s hand: %s"):format(r.name, it[1], tostring(it[2]))) end
  end
end
print(("\n%d of %d rows above LEGO's optimized count (e:ops() on tessel's side; see docs/lego.md)")
      :format(worse, #rows))

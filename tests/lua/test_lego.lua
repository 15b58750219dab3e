-- test_lego.lua - every binding of the `lego` table, with values from the LEGO paper and error messages.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local function all(G)
  local t = {}
  for a = 0, #G - 1 do t[#t + 1] = G:apply(a) end
  return table.concat(t, ",")
end

local B = lego.TileOrderBy({2,2}, {3,3})
local C = lego.OrderBy(lego.RegP({2,2}, {1,0}), lego.GenP({3,3}, "antidiagonal"))

check("figure 6", function()
  -- the paper's B, written as RegP (1-based [1,3,2,4] there, 0-based here)
  local B2 = lego.OrderBy(lego.RegP({2,3,2,3}, {0,2,1,3}))
  eq(lego.GroupBy({6,6}, B2):apply(4, 2), 23)
  eq(lego.GroupBy({6,6}, B):apply(4, 2), 23)
  local G = lego.GroupBy({6,6}, C, B)
  eq(G:apply(4, 2), 15)
  eq(G(4, 2), 15)
  eq(G:apply{4, 2}, 15)
  eq(G:apply(26), 15)
  local i, j = G:inv(15)
  eq(i, 4); eq(j, 2)
  -- LEGO's own package gives this row-major table (differential check, tests/diff)
  eq(all(G), "0,1,3,18,19,21,2,4,6,20,22,24,5,7,8,23,25,26,9,10,12,27,28,30,11,13,15,29,31,33,14,16,17,32,34,35")
  -- fluent: C:OrderBy(B):GroupBy runs B first
  eq(C:OrderBy(B):GroupBy({6,6}) == G, true)
  eq(tostring(C:OrderBy(B):GroupBy({6,6})), tostring(G))
  eq(all(lego.GroupBy({6,6}, B, C)), "0,1,9,2,10,3,11,4,5,18,19,27,20,28,21,29,22,23,12,13,6,14,7,15,8,16,17,30,31,24,32,25,33,26,34,35")
  eq(G:check(), true)
end)

check("figure 2", function()
  local G = lego.GroupBy({6,6}, lego.OrderBy(lego.RegP({2,2}, {1,0}), lego.GenP({3,3}, "reverse")))
  eq(all(G), "8,7,6,5,4,3,2,1,0,26,25,24,23,22,21,20,19,18,17,16,15,14,13,12,11,10,9,35,34,33,32,31,30,29,28,27")
  eq(G(2, 5), 18)
  eq(select(2, G:inv(18)), 5)
  -- the same with the reversal as a Lua GenP
  local R = lego.GenP({3,3}, function(i, j) return (2 - i) * 3 + (2 - j) end,
                      function(k) return 2 - k // 3, 2 - k % 3 end, "rev, revinv")
  eq(all(lego.GroupBy({6,6}, lego.OrderBy(lego.RegP({2,2}, {1,0}), R))), all(G))
end)

check("figure 7 antidiagonal", function()
  local A = lego.GenP({3,3}, "antidiagonal")
  eq(all(A), "0,1,3,2,4,6,5,7,8")
  eq(tostring(lego.GenP({3,3}, "antidiag")), 'lego.GenP({3,3}, "antidiagonal")')
  -- NW: (16+1)^2 shared buffer, every antidiagonal contiguous
  local NW = lego.GroupBy({17,17}, lego.OrderBy(lego.GenP({17,17}, "antidiagonal")))
  for k = 0, 32 do
    local lo = math.max(0, k - 16)
    for i = lo, math.min(k, 16) do eq(NW(i, k - i), NW(lo, k - lo) + i - lo) end
  end
  eq(NW:check(), true)
end)

check("LUD coarsening and bricks", function()
  local LUD = lego.OrderBy(lego.Row(64, 64)):GroupBy({{4,4},{16,16}})
  eq(LUD, "lego.GroupBy({{4,4},{16,16}}, lego.OrderBy(lego.Row(64,64)))")
  local ii, jj, tx, ty = LUD:inv((2 * 4 + 3) * 256 + 37)
  eq(table.concat({ii, jj, tx, ty}, " "), "2 3 2 5")
  local bricks = lego.OrderBy(lego.Row(4,4,4), lego.Row(2,2,2)):TileBy({4,4,4}, {2,2,2})
  eq(bricks(1, 2, 3, 1, 0, 1), ((1 * 4 + 2) * 4 + 3) * 8 + 5)
  local normal = lego.OrderBy(lego.Row(8,8,8)):TileBy({4,4,4}, {2,2,2})
  eq(normal(1, 2, 3, 1, 0, 1), 3 * 64 + 4 * 8 + 7)
  eq(bricks:check(), true)
end)

check("builtins and sugar", function()
  -- LEGO's Morton2DFast: spread(i) | spread(j) << 1, the row on the even bits
  -- (checked against LEGO's own f_apply and f_inv on every point of N = 1..64)
  eq(lego.GenP({2,2}, "morton")(0, 1), 2)
  eq(lego.GenP({2,2}, "morton")(1, 0), 1)
  eq(all(lego.GenP({4,4}, "morton")), "0,2,8,10,1,3,9,11,4,6,12,14,5,7,13,15")
  eq(all(lego.GenP({4,4}, "zorder")), all(lego.GenP({4,4}, "morton")))
  -- the other order under its own name: the column on the even bits, 2x2 tiles row-major
  eq(lego.GenP({4,4}, "morton_rowmajor"), 'lego.GenP({4,4}, "morton_rowmajor")')
  eq(all(lego.GenP({4,4}, "morton_rowmajor")), "0,1,4,5,2,3,6,7,8,9,12,13,10,11,14,15")
  eq(lego.GenP({2,3}, "reverse", {1}), 'lego.GenP({2,3}, "reverse", {1})')
  eq(all(lego.GenP({2,3}, "reverse", {1})), "2,1,0,5,4,3")
  eq(all(lego.Col(2, 3)), "0,2,4,1,3,5")
  eq(lego.Row{2, 3}, "lego.Row(2,3)")
  eq(lego.RegP{{2,3}, {1,0}}, "lego.RegP({2,3}, {1,0})")
  eq(lego.RegP{dims = {2,3}, perm = {1,0}}, "lego.RegP({2,3}, {1,0})")
  eq(all(lego.TileBy({2,2}, {3,3})), all(lego.GroupBy({{2,2},{3,3}}, lego.OrderBy(lego.TileBy({2,2},{3,3})))))
  eq(lego.TileBy({2,2}, {3,3})(1, 0, 2, 1), (3 + 2) * 6 + 1)
  eq(#lego.GenP({2,4}, "identity"), 8)
  local G = lego.GroupBy({6,6}, C, B)
  eq(G:kind(), "groupby"); eq(C:kind(), "orderby"); eq(C:OrderBy(B):kind(), "chain")
  eq(table.concat(G:dims(), ","), "6,6"); eq(G:rank(), 2); eq(G:size(), 36)
end)

check("morton: bit order on random power-of-two tiles", function()
  -- seeded; the seed is in the failure message
  local seed = tonumber(os.getenv("TESSEL_SEED") or "") or 16
  math.randomseed(seed)
  local function spread(x)   -- bit b of x to bit 2b (LEGO's bit-spread)
    local r, b = 0, 0
    while x > 0 do r = r | ((x & 1) << (2 * b)); x = x >> 1; b = b + 1 end
    return r
  end
  for trial = 1, 60 do
    local r = math.random(1, 4)
    local d, lg, maxb = {}, {}, 0
    for k = 1, r do
      lg[k] = math.random(0, r > 2 and 2 or 3)
      d[k] = 1 << lg[k]
      maxb = math.max(maxb, lg[k])
    end
    local Z, R = lego.GenP(d, "morton"), lego.GenP(d, "morton_rowmajor")
    local rd = {}
    for k = 1, r do rd[k] = d[r + 1 - k] end
    local Zrev = lego.GenP(rd, "morton")
    for f = 0, #Z - 1 do
      local x = {Z:inv(f)}
      -- the definition: bit b of x_k at the next free position, dimension 0 first
      local want, pos = 0, 0
      for b = 0, maxb - 1 do
        for k = 1, r do
          if b < lg[k] then want = want | (((x[k] >> b) & 1) << pos); pos = pos + 1 end
        end
      end
      local what = ("seed %d: morton %s at (%s)"):format(seed, table.concat(d, "x"), table.concat(x, ","))
      eq(Z(table.unpack(x)), want, what)
      eq(f, want, what)
      if r == 2 and d[1] == d[2] then eq(want, spread(x[1]) | (spread(x[2]) << 1), what) end
      -- morton_rowmajor is morton with the dimensions read in reverse
      local xr = {}
      for k = 1, r do xr[k] = x[r + 1 - k] end
      eq(R(table.unpack(x)), Zrev(table.unpack(xr)), what .. " (rowmajor)")
    end
  end
end)

check("expand", function()
  local G = lego.GroupBy({{2,2},{4,4}}, lego.OrderBy(lego.TileBy({2,2},{4,4}))):ExpandBy({7,6})
  eq(G, "lego.ExpandBy(lego.GroupBy({{2,2},{4,4}}, lego.OrderBy(lego.TileBy({2,2}, {4,4}))), {7,6})")
  eq(G:cosize(), 42)
  eq(G(1, 1, 2, 1), 6 * 6 + 5)
  eq(G(1, 1, 3, 1), -1)
  eq(G(0, 1, 0, 2), -1)
  eq(table.concat({G:inv(41)}, ","), "1,1,2,1")
  eq(G:check(), true)
  raises(function() return G:inv(42) end, "outside 0..41")
  raises(function() return lego.ExpandBy(lego.GroupBy({6,6}), {7,6}) end, "exceeds")
end)

check("cute conversion", function()
  local L = lego.GroupBy({6,6}, B):to_cute()
  eq(L, "((3,2),(3,2)):((3,18),(1,9))")
  for i = 0, 5 do for j = 0, 5 do eq(L(i, j), lego.GroupBy({6,6}, B)(i, j)) end end
  eq(lego.from_cute(cute.layout({4,2})), "lego.GroupBy({4,2}, lego.OrderBy(lego.Col(4,2)))")
  eq(lego.from_cute("(4,2):(2,1)"), "lego.GroupBy({4,2}, lego.OrderBy(lego.Row(4,2)))")
  local M = cute.layout("((2,2),4):((1,8),2)")
  local G = lego.from_cute(M)
  eq(cute.same_function(G:to_cute(), M), true)
  raises(function() return lego.GroupBy({6,6}, C, B):to_cute() end, "antidiagonal", "not affine")
  raises(function() return lego.from_cute("(4,2):(2,4)") end, "not compact")
  local Z = lego.GroupBy({4,4}, lego.OrderBy(lego.GenP({4,4}, "morton")))
  eq(Z:to_cute(), "((2,2),(2,2)):((1,4),(2,8))")
  for i = 0, 3 do for j = 0, 3 do eq(Z:to_cute()(i, j), Z(i, j)) end end
  local Zr = lego.GroupBy({4,4}, lego.OrderBy(lego.GenP({4,4}, "morton_rowmajor")))
  eq(Zr:to_cute(), "((2,2),(2,2)):((2,8),(1,4))")
  for i = 0, 3 do for j = 0, 3 do eq(Zr:to_cute()(i, j), Zr(i, j)) end end
end)

check("user GenP failures", function()
  raises(function() lego.GenP({3}, function(i) return "x" end, function(k) return k end) end,
         "lego.GenP({3}, f, finv): apply(0) returned string, not an integer")
  raises(function() lego.GenP({3}, function(i) error("boom") end, function(k) return k end) end, "boom")
  raises(function() lego.GenP({3}, function(i) error({}) end, function(k) return k end) end,
         "error object is a table")
  raises(function() lego.GenP({3,3}, function(i, j) return (i + j) % 9 end, function(k) return k // 3, k % 3 end) end,
         "not a bijection: apply(0,1) = 1 and apply(1,0) = 1")
  raises(function() lego.GenP({2,2}, function(i, j) return i * 2 + j end, function(k) return k end) end,
         "returned 1 value, expected 2")
  raises(function() lego.GenP({3}, function(i) return 5 end, function(k) return k end) end, "outside 0..2")
  -- yields inside a callback are refused, not followed
  local co = coroutine.wrap(function()
    return pcall(lego.GenP, {3}, function(i) coroutine.yield(1); return i end, function(k) return k end)
  end)
  local ok, msg = co()
  eq(ok, false)
  -- a callback that turns wrong after the check is caught at apply time
  local n = 0
  local G = lego.GenP({2}, function(i) n = n + 1; return n > 4 and 7 or i end, function(k) return k end)
  raises(function() return G(1) end, "outside 0..1")
  -- functions stay alive as long as a layout uses them
  local O = lego.OrderBy(lego.GenP({3}, function(i) return 2 - i end, function(k) return 2 - k end), lego.Row(2))
  collectgarbage(); collectgarbage()
  eq(all(lego.GroupBy({6}, O)), "4,5,2,3,0,1")
  -- from inside a coroutine
  local co2 = coroutine.wrap(function() return lego.GroupBy({6}, O)(0) end)
  eq(co2(), 4)
end)

check("errors name the operation", function()
  raises(function() return lego.RegP({2,3}, {0,0}) end, "lego.RegP", "twice")
  raises(function() return lego.RegP({2,3}, {1,2}) end, "0-based")
  raises(function() return lego.RegP({2,3}, {0}) end, "2 dimensions but a permutation of 1")
  raises(function() return lego.GroupBy({6,6}, lego.OrderBy(lego.Row(5,7))) end,
         "lego.OrderBy(lego.Row(5,7)) has 35 elements, the chain 36")
  raises(function() return lego.GenP({3,3,3}, "antidiagonal") end, "2-D")
  raises(function() return lego.GenP({3,4}, "morton") end, "power-of-two")
  raises(function() return lego.GenP({3}, "spiral") end, "unknown built-in 'spiral'")
  raises(function() return lego.GroupBy({6,6}, C, B)(6, 0) end, "coordinate 0 is 6, outside 0..5")
  raises(function() return lego.GroupBy({6,6}, C, B)(1, 2, 3) end, "3 coordinates for a layout of 2")
  raises(function() return lego.OrderBy() end, "at least one")
  raises(function() return lego.Row(0, 3) end, "dimension 0 is 0")
end)

check("show", function()
  local G = lego.GroupBy({6,6}, C, B)
  local s = viz.text(G, {color = false})
  assert(s:find("logical view: cell = physical index", 1, true))
  assert(s:find("| 3,2 | 4,1 |", 1, true))
  assert(not s:find("\27", 1, true))
  assert(viz.text(G, {color = true}):find("\27[", 1, true))
end)

check("notation reads back", function()
  for _, G in ipairs({lego.GroupBy({6,6}, C, B), C:OrderBy(B), lego.TileBy({2,2},{3,3}), lego.Col(2,3),
                      lego.GenP({2,3}, "reverse", {1}), lego.GenP({4,4}, "morton"),
                      lego.OrderBy(lego.Row(4,4,4), lego.Row(2,2,2)):TileBy({4,4,4}, {2,2,2}),
                      lego.GroupBy({{2,2},{4,4}}, lego.OrderBy(lego.TileBy({2,2},{4,4}))):ExpandBy({7,6}),
                      lego.GroupBy({{2,2},{4,4}}, lego.OrderBy(lego.TileBy({2,2},{4,4}))):ExpandBy({3,13}, {4,16})}) do
    local H = assert(load("return " .. tostring(G)))()
    eq(tostring(H), tostring(G))
    eq(H == G, true)
  end
end)

-- lowering: G:expr / G:inv_expr evaluated at every point equal apply / inv
local function lowered(G)
  local dims, r = G:dims(), G:rank()
  local e, inv = G:expr(), {G:inv_expr()}
  local raw = G:expr{raw = true}
  for a = 0, G:size() - 1 do
    local x, t, b = {}, a, {}
    for k = r, 1, -1 do x[k] = t % dims[k]; t = t // dims[k] end
    for k = 1, r do b["i" .. (k - 1)] = x[k] end
    local want = G:apply(table.unpack(x))
    eq(e:eval(b), want, "apply expression at " .. a)
    eq(raw:eval(b), want, "raw apply expression at " .. a)
  end
  for f = 0, G:cosize() - 1 do
    local want = {G:inv(f)}
    for k = 1, r do eq(inv[k]:eval{k = f}, want[k], "inv expression " .. k .. " at " .. f) end
  end
end

check("expr: figures, builtins, ExpandBy", function()
  lowered(lego.GroupBy({6,6}, C, B))
  lowered(C:OrderBy(B))
  lowered(lego.GenP({3,5}, "antidiagonal"))
  lowered(lego.GenP({4,8}, "morton"))
  lowered(lego.GenP({3,4,2}, "reverse", {0,2}))
  lowered(lego.GroupBy({{2,2},{4,4}}, lego.OrderBy(lego.TileBy({2,2},{4,4}))):ExpandBy({7,6}))
  eq(lego.TileBy({2,2},{3,3}):expr(), "i0*18 + i1*3 + i2*6 + i3")
  eq(lego.Row(4, 6):ExpandBy({3, 5}):expr(), "where((i0 < 3) & (i1 < 5), i0*5 + i1, -1)")
  lowered(lego.GenP({2,8,4}, "morton"))
  lowered(lego.GenP({8,2}, "morton_rowmajor"))
  eq(lego.GenP({4,4}, "morton"):inv_expr(), "(k//4%2*2) | (k%2)")
  eq(select(2, lego.GenP({4,4}, "morton"):expr("inv")), "(k//8*2) | (k//2%2)")
  eq(lego.GenP({4,4}, "morton_rowmajor"):inv_expr(), "(k//8*2) | (k//2%2)")
end)

check("expr: vars, names and apply(inv(k)) == k", function()
  local G = lego.TileBy({2,2},{3,3})
  local i, j = G:inv_expr()
  local k = uop.var("k", 0, 35)
  eq(G:expr{vars = {"a", "b", "c", "d"}}, "a*18 + b*3 + c*6 + d")
  local a, b, c, d = G:inv_expr()
  eq(G:expr{vars = {a, b, c, d}}, k)
  raises(function() G:expr{vars = {"a"}} end, "4 inputs")
  raises(function() G:expr("both") end, "apply")
  raises(function() G:expr{vars = {"1x", "b", "c", "d"}} end, "not a variable name")
end)

check("expr: a user GenP traces through uop expressions", function()
  local T = lego.GenP({3,4}, function(i, j) return j * 3 + i end, function(k) return k % 3, k // 3 end)
  eq(T:expr(), "i0 + i1*3")
  local i0, i1 = T:inv_expr()
  eq(i0, "k%3"); eq(i1, "k//3")
  lowered(lego.OrderBy(lego.Row(2), T))
  -- a function that branches cannot trace: refused with a reason
  local U = lego.GenP({2,2}, function(i, j) if i == 0 then return j end return 2 + j end,
                      function(k) return k // 2, k % 2 end)
  raises(function() U:expr() end, "does not trace faithfully")
  local V = lego.GenP({2,2}, function(i, j) return ({0, 1, 2, 3})[i * 2 + j + 1] end,
                      function(k) return k // 2, k % 2 end)
  raises(function() V:expr() end, "does not trace")
end)

check("symbolic dimensions", function()
  local TG, GM, n = uop.var("TG", 1, 8), uop.var("GM", 1, 8), uop.var("num_pid_n", 1, 16)
  local L = lego.OrderBy(lego.Row(TG, 1), lego.Col(GM, n)):TileBy({TG * GM, n})
  local pid = uop.var("pid", 0, 1023)
  local pm, pn = L:inv_expr{vars = {pid}}
  eq(pm, "GM*(pid//(GM*num_pid_n)) + pid%GM")
  eq(pn, "pid//GM%num_pid_n")
  eq(L:kind(), "groupby")
  raises(function() L:apply(0, 0) end, "symbolic dimension TG")
  raises(function() return #L end, "symbolic dimension")
  raises(function() L:check() end, "only as expressions")
  local M, N = uop.var("M", 1, 64), uop.var("N", 1, 64)
  local R = lego.Row(M, N)
  eq(R:expr(), "i1 + N*i0")
  eq(lego.Col(M, N):expr(), "i0 + M*i1")
  local r, c = R:inv_expr()
  eq(r, "k//N"); eq(c, "k%N")
  raises(function() lego.OrderBy(lego.Row(M, N), lego.Row(2, 2)) end, "not a symbolic RegP")
  eq(lego.OrderBy(lego.Row(M, N), lego.Row(uop.const(2), 2)):expr{vars = {"a", "b", "c", "d"}}, "(a*N + b)*4 + (c*2 + d)")
  raises(function() lego.Row(2, 2):OrderBy(lego.Row(M, N)) end, "symbolic")
end)

check("help", function()
  for _, k in ipairs({"RegP", "GenP", "Row", "Col", "TileBy", "TileOrderBy", "OrderBy", "GroupBy", "ExpandBy", "from_cute"}) do
    assert(type(lego[k]) == "function", k)
  end
end)

finish()

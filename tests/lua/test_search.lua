-- test_search.lua - s:search from Lua: a grid with apply, BEAM over OptOps, rows and the table, bad arguments.
-- Structure and correctness only: which candidate is fastest depends on the machine and its load.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local function matmul(n)
  local a, b = tensor.param("a", {n, n}), tensor.param("b", {n, n})
  return kernel.lower(a:matmul(b), "c"):schedule()
end

local function tiles(s, p)
  if p.bm == 5 then return false, "bm = 5 does not divide 32" end
  s:tile("c", "i", "j", p.bm, 16)
  s:apply_opt("UPCAST", "c", "j1", p.up)
end

check("a grid: every row has a status, the winner's steps replace the schedule's", function()
  local s = matmul(32)
  s:decompose_reduction("c", "k")          -- a scheduled kernel is searched further
  local r = s:search{params = {bm = {4, 8, 5}, up = {4, 3}}, apply = tiles, reps = 2, progress = false}
  eq(#r.rows, 6, "rows")
  local ok, refused = 0, 0
  for i, row in ipairs(r.rows) do
    eq(row.index, i, "index")
    assert(row.status == "ok" or row.status == "refused", row.status)
    if row.status == "ok" then
      ok = ok + 1
      assert(row.time_s > 0 and row.speedup > 0)
    else
      refused = refused + 1
      assert(row.message:find(row.bm == 5 and "bm = 5 does not divide 32" or "does not split by 3", 1, true),
             row.message)
    end
  end
  eq(ok, 2, "ok rows")
  eq(refused, 4, "refused rows")
  assert(r.best and (r.best.bm == 4 or r.best.bm == 8) and r.best.up == 4)
  assert(r.time_s > 0 and r.baseline_s > 0)
  eq(s:trace(), ('s:decompose_reduction("c", "k")\ns:tile("c", "i", "j", %d, 16)\n' ..
                 's:apply_opt("UPCAST", "c", "j1", 4)\n'):format(r.best.bm), "trace")
  assert(s:verify())
  local t = tostring(r)
  assert(t:find("search (grid): 6 candidates, 2 ok, 0 wrong", 1, true), t)
  assert(t:find("refused: bm = 5 does not divide 32", 1, true), t)
  -- the winner is marked and fastest
  for _, row in ipairs(r.rows) do
    if row.status == "ok" then assert(r.time_s <= row.time_s) end
    eq(row.best, row.bm == r.best.bm and row.up == r.best.up, "best flag")
  end
end)

check("an error in apply is a refused row; the candidate object lets go after the call", function()
  local kept
  local s = matmul(16)
  local r = s:search{params = {f = {2, 4}}, apply = function(c, p)
    kept = c
    if p.f == 4 then error("no four") end
    c:split("c", "i", {nil, p.f})
  end, reps = 1, verify = false, progress = false}
  eq(r.rows[1].status, "ok", "row 1")
  eq(r.rows[2].status, "refused", "row 2")
  assert(r.rows[2].message:find("no four", 1, true))
  raises(function() return kept:trace() end, "schedule: it was freed")
  eq(s:trace(), 's:split("c", "i", {nil, 2})\n', "trace")
end)

check("bindings are the inputs of every run", function()
  local s = matmul(8)
  local r = s:search{params = {f = {2}}, apply = function(c, p) c:split("c", "j", {nil, p.f}) end, reps = 1,
                     bindings = {a = tensor.rand({8, 8}, {seed = 1}), b = tensor.rand({8, 8}, {seed = 2})},
                     progress = false}
  eq(r.rows[1].status, "ok", "row")
  raises(function() s:search{params = {f = {2}}, apply = function() end, bindings = {x = tensor.rand({8, 8})}} end,
         "s:search: bindings: 'x' is not an input of the kernel (the inputs are: a, b)")
end)

check("BEAM: rows of OptOps; the result verifies and is not slower than the start", function()
  local s = matmul(32)
  local r = s:search{budget = 6, beam = 2, reps = 2, seed = 3, progress = false}
  assert(#r.rows >= 1 and #r.rows <= 6, #r.rows)
  for _, row in ipairs(r.rows) do
    eq(row.status, "ok", "status")
    assert(#row.opts >= 1)
    assert(type(row.opts[1][1]) == "string" and row.opts[1][2] == "c")
  end
  assert(r.time_s <= r.baseline_s)
  assert(s:verify())
  -- best.opts replay on a fresh schedule: the same trace
  local again = matmul(32)
  for _, o in ipairs(r.best.opts) do again:apply_opt(table.unpack(o)) end
  eq(again:trace(), s:trace(), "replay")
  local t = tostring(r)
  assert(t:find("search (BEAM over OptOps)", 1, true), t)
end)

check("ops chooses the OptOps", function()
  local s = matmul(16)
  local r = s:search{ops = {"unroll"}, budget = 3, reps = 1, progress = false}
  for _, row in ipairs(r.rows) do eq(row.opts[1][1], "UNROLL", "op") end
end)

check("bad arguments name s:search and the argument", function()
  local s = matmul(8)
  raises(function() s:search(5) end, "s:search: the argument is a number, not an options table")
  raises(function() s:search{budjet = 3} end, "s:search: unknown option 'budjet' (the options are: params, apply, budget")
  raises(function() s:search{params = {bm = {4}}} end, "s:search: params need apply")
  raises(function() s:search{apply = function() end} end, "s:search: apply needs params")
  raises(function() s:search{params = {bm = {}}, apply = print} end, "s:search: params.bm must be a non-empty list")
  raises(function() s:search{params = {bm = {4, "x"}}, apply = print} end, "s:search: params.bm[2] is x, not an integer")
  raises(function() s:search{params = {4}, apply = print} end, "s:search: params: a key is a number")
  raises(function() s:search{apply = 3, params = {a = {1}}} end, "s:search: option apply is 3, not a function")
  raises(function() s:search{budget = 0} end, "s:search: budget = 0 is not in [1, 100000]")
  raises(function() s:search{reps = 2.5} end, "s:search: option reps is 2.5, not an integer")
  raises(function() s:search{verify = "yes"} end, 's:search: option verify is the string "yes", not a boolean')
  raises(function() s:search{time_s = -1} end, "s:search: time_s")
  raises(function() s:search{ops = {"UPCAST", "WIDEN"}} end, "s:search: unknown OptOp WIDEN in ops")
  raises(function() s:search{ops = "UPCAST"} end, 's:search: option ops is the string "UPCAST", not a table')
  raises(function() s:search{params = {a = {1}}, apply = print, ops = {"UPCAST"}} end,
         "s:search: ops chooses BEAM's OptOps; a grid search (apply) takes none")
  eq(s:trace(), "", "untouched")
end)

check("a kernel the C backend refuses: the search says why", function()
  local k = kernel.new{grid = {1}, block = {32}}
  local A = k:input("A", "float32", {32})
  local B = k:output("B", "float32", {32})
  local t = k:shared("t", "float32", {32})
  k:stage("rev", function()
    t[{k.tx}] = A[{k.tx}]
    kernel.barrier()
    B[{k.tx}] = t[{31 - k.tx}]
  end)
  raises(function() k:schedule():search{budget = 2} end, "s:search: the starting schedule does not run as C")
end)

check("help", function()
  local exe = assert(arg and arg[-1], "arg[-1] names the interpreter")
  local p = assert(io.popen(exe .. [[ -e "help(kernel.lower(tensor.param('a', {4}) * 2, 'c'):schedule().search)"]]))
  local h = p:read("a")
  p:close()
  assert(h:find("s:search{params", 1, true) and h:find("BEAM", 1, true), h)
end)

finish()

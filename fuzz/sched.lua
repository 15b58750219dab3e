-- sched.lua - a random tester of schedules: random tensor programs, random schedule steps
-- (valid and invalid), and four properties checked after every step (docs/reliability.md).
--
--   ./tessel fuzz/sched.lua SECONDS [SEED [PROGRAM]]
--
-- Each program is lowered (kernel.lower(t, "out")) and scheduled by 1 to 16 steps drawn from
-- the primitives of a schedule, with arguments drawn mostly from what the schedule has (its
-- stages, loops and buffers) and sometimes wrong ones. After every step:
--   accepted  s:verify{trials = 1} agrees with the reference, and the scheduled kernel
--             compiles and runs on the C JIT ({backend = "c"} compares it bit for bit with
--             the interpreter) on the same random inputs;
--             the trace grew by one line (undo: it and the kernel are as before the last step);
--   refused   tostring(s) and s:trace() are what they were before the call;
--   replay    the trace, loaded into a fresh schedule of the program, gives the same kernel;
--   no crash  the step about to run is written first, whole, to build/fuzz/sched/current-SEED.lua.
-- Not findings: C's refusal of barriers, and a shared or local cache not yet moved into its
-- reader (docs/schedules.md: read uninitialized until then), as long as a cache or scope
-- step made it so. About a third of the programs start with a recipe of the docs (a bound
-- GEMM with shared tiles, a fusion chain, ...) so that the random steps reach deep states.
-- A violation prints a self-contained reproducer (its steps minimized). Findings whose
-- property and message match a line of fuzz/sched_known.txt are shown and counted; any other
-- makes the exit status 1. Program P of SEED is the same on every run: PROGRAM runs it alone.
local root = arg[0]:match("^(.-)fuzz/[^/]*$") or "./"
if root == "" then root = "./" end
local SECS = tonumber(arg[1] or "")
if not SECS then
  io.stderr:write("usage: ./tessel fuzz/sched.lua SECONDS [SEED [PROGRAM]]\n")
  os.exit(2)
end
local SEED = math.tointeger(tonumber(arg[2] or "")) or os.time() % 1000000
local ONLY = math.tointeger(tonumber(arg[3] or ""))
local VERBOSE = os.getenv("SCHED_VERBOSE") == "1"
local OUTDIR = root .. "build/fuzz/sched/"
os.execute("mkdir -p '" .. OUTDIR .. "'")
-- the step about to run, whole (a crash leaves it behind; removed at the end of a run)
local CURRENT = string.format("%scurrent-%d.lua", OUTDIR, SEED)

------------------------------------------------------------------------------------------------
-- A random number generator of our own (a 64-bit LCG, its high bits): the run depends on the
-- seed alone, not on the Lua library's generator or on what tessel draws.
local rstate = 0
local function rnd()
  rstate = rstate * 6364136223846793005 + 1442695040888963407
  return (rstate >> 33) & 0x7fffffff
end
local function reseed(a, b)
  rstate = a * 0x1000193 + b * 0x9E3779B1 + 12345
  for _ = 1, 8 do rnd() end
end
local function R(n) return rnd() % n + 1 end                    -- 1..n
local function chance(p) return rnd() % 10000 < p * 10000 end
local function pick(t) if #t > 0 then return t[R(#t)] end end   -- nil for an empty table
local function between(lo, hi) return lo + rnd() % (hi - lo + 1) end
-- a key of the weights table w, drawn by weight (keys in sorted order: deterministic)
local function weighted(w)
  local keys, total = {}, 0
  for k, v in pairs(w) do keys[#keys + 1] = k; total = total + v end
  table.sort(keys)
  local x = rnd() % total
  for _, k in ipairs(keys) do
    x = x - w[k]
    if x < 0 then return k end
  end
  return keys[#keys]
end

------------------------------------------------------------------------------------------------
-- Random programs. A program is Lua text that builds tensor t from params a, b, c; every value
-- is a local, so the text reads as a reproducer. Values are kept to |x| <= BOUND so that float32
-- rounding stays inside verify's tolerances whatever order a schedule sums in.
local BOUND = 16

local function shape_text(sh) return "{" .. table.concat(sh, ", ") .. "}" end
local function copy(t) local r = {} for i, v in ipairs(t) do r[i] = v end return r end
local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end
local PERMS = {
  [1] = {{1}},
  [2] = {{1, 2}, {2, 1}},
  [3] = {{1, 2, 3}, {1, 3, 2}, {2, 1, 3}, {2, 3, 1}, {3, 1, 2}, {3, 2, 1}},
}
-- a random permutation of 1..n
local function shuffled(n)
  local p = {}
  for i = 1, n do p[i] = i end
  for i = n, 2, -1 do local j = R(i); p[i], p[j] = p[j], p[i] end
  return p
end
local function zero_based(perm)
  local r = {}
  for i, p in ipairs(perm) do r[i] = p - 1 end
  return table.concat(r, ", ")
end

local Prog = {}
Prog.__index = Prog

local function new_prog()
  return setmetatable({ lines = {}, params = {}, nvar = 0, vals = {} }, Prog)
end

-- a new local holding expression code, of shape sh and bound b
function Prog:let(code, sh, b)
  self.nvar = self.nvar + 1
  local v = { name = "t" .. self.nvar, shape = sh, bound = b }
  self.lines[#self.lines + 1] = string.format("local %s = %s", v.name, code)
  self.vals[#self.vals + 1] = v
  return v
end

function Prog:param(sh)
  local name = ({ "a", "b", "c" })[#self.params + 1]
  local p = { name = name, shape = sh, bound = 1 }
  self.params[#self.params + 1] = p
  self.lines[#self.lines + 1] = string.format("local %s = tensor.param(%q, %s)", name, name, shape_text(sh))
  return p
end

-- a value of shape T straight from the inputs: a param (permuted and shrunk to fit), an earlier
-- value of that shape (so that values get several readers), a new param, or a constant
function Prog:leaf(T)
  if chance(0.2) then
    local olds = {}
    for _, v in ipairs(self.vals) do if same(v.shape, T) then olds[#olds + 1] = v end end
    if #olds > 0 then return pick(olds) end
  end
  local cands = {}
  for _, p in ipairs(self.params) do
    if #p.shape == #T then
      for _, perm in ipairs(PERMS[#T] or {}) do
        local fits = true
        for i = 1, #T do if T[i] > p.shape[perm[i]] then fits = false end end
        if fits then cands[#cands + 1] = { p = p, perm = perm } end
      end
    end
  end
  -- exact fits first: a param of the right shape is the common case
  local exact = {}
  for _, c in ipairs(cands) do
    local id = true
    for i = 1, #T do if c.perm[i] ~= i or c.p.shape[i] ~= T[i] then id = false end end
    if id then exact[#exact + 1] = c end
  end
  if #exact > 0 and (chance(0.85) or #cands == #exact) then return exact[R(#exact)].p end
  if #self.params < 3 and (#cands == 0 or chance(0.3)) then return self:param(copy(T)) end
  if #cands == 0 then
    return self:let(string.format("tensor.full(%s, %s)", shape_text(T), pick({ "0.5", "-1.25", "2.0" })), copy(T), 2)
  end
  local c = pick(cands)
  local code, sh = c.p.name, c.p.shape
  local ident = true
  for i = 1, #T do if c.perm[i] ~= i then ident = false end end
  if not ident then
    code = string.format("%s:permute(%s)", code, zero_based(c.perm))
    local psh = {}
    for i = 1, #T do psh[i] = sh[c.perm[i]] end
    sh = psh
  end
  if not same(sh, T) then
    local parts = {}
    for i = 1, #T do
      if sh[i] == T[i] then
        parts[i] = "false"
      else
        local lo = between(0, sh[i] - T[i])
        parts[i] = string.format("{%d, %d}", lo, lo + T[i])
      end
    end
    code = string.format("%s:shrink{%s}", code, table.concat(parts, ", "))
  end
  return self:let(code, copy(T), 1)
end

local UNARY = {
  exp = function(v) if v.bound <= 2.5 then return "(%s):exp()", math.exp(v.bound) end end,
  relu = function(v) return "(%s):relu()", v.bound end,
  neg = function(v) return "-(%s)", v.bound end,
  sigmoid = function(v) return "(%s):sigmoid()", 1 end,
  tanh = function(v) return "(%s):tanh()", 1 end,
  sqrt = function(v) if v.bound <= 4 then return "(%s * %s + 1):sqrt()", v.bound + 1 end end,
  log = function(v) if v.bound <= 4 then return "(%s * %s + 1):log()", 2 * math.log(v.bound + 1) end end,
  scale = function(v) if v.bound <= 8 then return "(%s) * 0.5 + 0.25", v.bound end end,
  recip = function(v) if v.bound <= 4 then return "(%s * %s + 1):reciprocal()", 1 end end,
  sin = function(v) return "(%s):sin()", 1 end,
}
local BINARY = {
  add = function(x, y) return "%s + %s", x.bound + y.bound end,
  sub = function(x, y) return "%s - %s", x.bound + y.bound end,
  mul = function(x, y) return "%s * %s", x.bound * y.bound end,
  div = function(x, y) if y.bound <= 4 then return "%s / (%s * %s + 1)", x.bound end end,
  maximum = function(x, y) return "%s:maximum(%s)", math.max(x.bound, y.bound) end,
  minimum = function(x, y) return "%s:minimum(%s)", math.max(x.bound, y.bound) end,
}
local REDS = { "sum", "max", "min", "mean" }

-- the bound of a reduction op over n elements of bound b
local function red_bound(op, n, b) return op == "sum" and n * b or b end

function Prog:unary(v)
  for _ = 1, 6 do
    local op = weighted({ exp = 3, relu = 2, neg = 1, sigmoid = 1, tanh = 1, sqrt = 1, log = 1, scale = 1, recip = 1, sin = 1 })
    local fmt, b = UNARY[op](v)
    if fmt and b <= BOUND then
      return self:let(fmt:gsub("%%s", v.name), copy(v.shape), b)
    end
  end
  return self:let(string.format("(%s):tanh()", v.name), copy(v.shape), 1)
end

function Prog:binary(x, y)
  for _ = 1, 6 do
    local op = weighted({ add = 3, sub = 3, mul = 3, div = 1, maximum = 1, minimum = 1 })
    local fmt, b = BINARY[op](x, y)
    if fmt and b <= BOUND then
      local names = { x.name, y.name, y.name }
      local i = 0
      local code = fmt:gsub("%%s", function() i = i + 1 return names[i] end)
      return self:let(code, copy(x.shape), b)
    end
  end
  return self:let(string.format("(%s + %s):tanh()", x.name, y.name), copy(x.shape), 1)
end

-- an element-wise value of shape T, d levels deep
function Prog:gen(T, d)
  if d <= 0 or chance(0.2) then return self:leaf(T) end
  local what = weighted({ unary = 30, binary = 40, keepred = 14, contig = 14, permute = 5, pad = 4, softmax = 4, norm = 2 })
  if what == "unary" then
    return self:unary(self:gen(T, d - 1))
  elseif what == "binary" then
    local x = self:gen(T, d - 1)
    local y
    if chance(0.15) and #T > 0 then
      -- a broadcast operand: T with one axis 1, a param (a bias) or a reduction kept as an axis
      local ax = R(#T)
      local bsh = copy(T)
      bsh[ax] = 1
      y = self:leaf(bsh)
    else
      y = self:gen(T, d - 1)
    end
    if chance(0.5) then x, y = y, x end
    if not same(x.shape, T) then x, y = y, x end
    return self:binary(x, y)
  elseif what == "keepred" and #T > 0 then
    local x = self:gen(T, d - 1)
    local ax = R(#T)
    local op = pick(REDS)
    local r = self:let(string.format("%s:%s(%d, true)", x.name, op, ax - 1), (function()
      local s = copy(T) s[ax] = 1 return s end)(), red_bound(op, T[ax], x.bound))
    if r.bound > BOUND then r = self:let(string.format("(%s):tanh()", r.name), r.shape, 1) end
    local y = self:gen(T, d - 1)
    local op2 = weighted({ sub = 3, add = 1, mul = 1, div = 1 })
    if op2 == "div" then
      -- a quotient by a positive value
      return self:let(string.format("%s / (%s * %s + 1)", y.name, r.name, r.name), copy(T), y.bound)
    end
    local fmt, b = BINARY[op2](y, r)
    if b > BOUND then return self:let(string.format("(%s - %s):tanh()", y.name, r.name), copy(T), 1) end
    return self:let(fmt:format(y.name, r.name), copy(T), b)
  elseif what == "contig" then
    local x = self:gen(T, d - 1)
    return self:let(string.format("%s:contiguous()", x.name), copy(T), x.bound)
  elseif what == "permute" and #T >= 2 then
    local perm = shuffled(#T)
    -- x has shape T' with T'[perm[i]] = T[i], so x:permute(perm) has shape T
    local inner = {}
    for i = 1, #T do inner[perm[i]] = T[i] end
    local x = self:gen(inner, d - 1)
    return self:let(string.format("%s:permute(%s)", x.name, zero_based(perm)), copy(T), x.bound)
  elseif what == "pad" and #T > 0 then
    local ax = R(#T)
    if T[ax] >= 3 then
      local p1 = between(0, 1)
      local p2 = between(1, math.min(2, T[ax] - 1 - p1))
      local inner = copy(T)
      inner[ax] = T[ax] - p1 - p2
      local x = self:gen(inner, d - 1)
      local parts = {}
      for i = 1, #T do parts[i] = i == ax and string.format("{%d, %d}", p1, p2) or "false" end
      return self:let(string.format("%s:pad{%s}", x.name, table.concat(parts, ", ")), copy(T), x.bound)
    end
  elseif what == "softmax" and #T > 0 then
    local x = self:gen(T, d - 1)
    local ax = R(#T)
    if chance(0.7) or x.bound > 8 then
      return self:let(string.format("%s:softmax(%d)", x.name, ax - 1), copy(T), 1)
    end
    return self:let(string.format("%s:log_softmax(%d)", x.name, ax - 1), copy(T), x.bound * 2 + 3)
  elseif what == "norm" and #T > 0 then
    return self:norm(self:gen(T, d - 1), R(#T))
  end
  return self:unary(self:gen(T, d - 1))
end

-- layernorm over axis ax: (x - mean) / sqrt(var + eps)
function Prog:norm(x, ax)
  local m = self:let(string.format("%s:mean(%d, true)", x.name, ax - 1), (function()
    local s = copy(x.shape) s[ax] = 1 return s end)(), x.bound)
  local dv = self:let(string.format("%s - %s", x.name, m.name), copy(x.shape), 2 * x.bound)
  local var = self:let(string.format("(%s * %s):mean(%d, true)", dv.name, dv.name, ax - 1), m.shape, 4 * x.bound * x.bound)
  return self:let(string.format("%s / (%s + %s):sqrt()", dv.name, var.name, pick({ "0.01", "0.1", "0.5" })),
                  copy(x.shape), math.sqrt(x.shape[ax]))
end

local function rand_shape(rank)
  local sh = {}
  for i = 1, rank do sh[i] = between(2, 9) end
  return sh
end

local FORMS = { ew = 12, reduce = 18, chain = 8, pair = 6, softmax = 12, norm = 8, matmul = 14, attention = 8, full = 3 }

-- a random program: its text (ending in `local t = ...`) and its params
local function gen_program()
  local P = new_prog()
  local form = weighted(FORMS)
  local t
  if form == "matmul" then
    local rank = chance(0.2) and 3 or 2
    local M, K, N = between(2, 9), between(2, 9), between(2, 9)
    local A, B = { M, K }, { K, N }
    if rank == 3 then
      local H = between(2, 3)
      A, B = { H, M, K }, { H, K, N }
    end
    local x = chance(0.6) and P:leaf(A) or P:gen(A, 1)
    local y = chance(0.6) and P:leaf(B) or P:gen(B, 1)
    if x.bound * y.bound * K > BOUND then
      x = P:let(string.format("(%s):tanh()", x.name), x.shape, 1)
      y = P:let(string.format("(%s):tanh()", y.name), y.shape, 1)
    end
    local C = copy(A)
    C[#C] = N
    t = P:let(string.format("%s:matmul(%s)", x.name, y.name), C, x.bound * y.bound * K)
    if chance(0.5) then t = P:gen_after(t) end
  elseif form == "attention" then
    local M, N, D, E = between(2, 8), between(2, 8), between(2, 8), between(2, 8)
    local heads = chance(0.25) and between(2, 3)
    local function sh(a, b) return heads and { heads, a, b } or { a, b } end
    local q, k, v = P:param(sh(M, D)), P:param(sh(N, D)), P:param(sh(N, E))
    local kt = heads and "0, 2, 1" or "1, 0"
    local sc = P:let(string.format("%s:matmul(%s:permute(%s)) * %s", q.name, k.name, kt, string.format("%.6g", 1 / math.sqrt(D))),
                     sh(M, N), math.sqrt(D))
    local p = P:let(string.format("%s:softmax(%d)", sc.name, heads and 2 or 1), sh(M, N), 1)
    t = P:let(string.format("%s:matmul(%s)", p.name, v.name), sh(M, E), 1)
  else
    local S = rand_shape(between(1, 3))
    if form == "ew" then
      t = P:gen(S, between(1, 4))
    elseif form == "full" then
      -- a reduction over every axis: a scalar output
      local x = P:gen(S, between(0, 2))
      t = P:let(string.format("%s:%s()", x.name, pick({ "sum", "max", "mean" })), {}, BOUND)
    elseif form == "softmax" then
      local x = P:gen(S, between(0, 2))
      t = P:let(string.format("%s:%s(%d)", x.name, chance(0.8) and "softmax" or "log_softmax", R(#S) - 1), copy(S), 1)
      if chance(0.3) then t = P:gen_after(t) end
    elseif form == "norm" then
      t = P:norm(P:gen(S, between(0, 2)), R(#S))
      if chance(0.3) then t = P:gen_after(t) end
    elseif form == "pair" then
      -- two reductions over one axis that do not read each other (fuse_and_privatize's case)
      local x = P:gen(S, between(0, 2))
      local y = chance(0.5) and P:unary(x) or P:gen(S, between(0, 1))
      local ax = R(#S)
      local o1, o2 = pick(REDS), pick(REDS)
      local keep = chance(0.3) and ", true" or ""
      local r1 = P:let(string.format("%s:%s(%d%s)", x.name, o1, ax - 1, keep), {}, red_bound(o1, S[ax], x.bound))
      local r2 = P:let(string.format("%s:%s(%d%s)", y.name, o2, ax - 1, keep), {}, red_bound(o2, S[ax], y.bound))
      local sh = copy(S)
      if keep ~= "" then sh[ax] = 1 else table.remove(sh, ax) end
      r1.shape, r2.shape = sh, copy(sh)
      t = P:binary(r1, r2)
      if t.bound > BOUND then t = P:let(string.format("(%s):tanh()", t.name), t.shape, 1) end
    else -- reduce, chain
      local x = P:gen(S, between(0, 3))
      if chance(0.3) then x = P:let(string.format("%s:contiguous()", x.name), x.shape, x.bound) end
      local n = form == "chain" and math.min(#S, 2) or 1
      for _ = 1, n do
        if #x.shape == 0 then break end
        local ax = R(#x.shape)
        local op = pick(REDS)
        local keep = chance(0.3)
        local sh = copy(x.shape)
        if keep then sh[ax] = 1 else table.remove(sh, ax) end
        x = P:let(string.format("%s:%s(%d%s)", x.name, op, ax - 1, keep and ", true" or ""), sh, red_bound(op, x.shape[ax], x.bound))
        if x.bound > BOUND then x = P:let(string.format("(%s):tanh()", x.name), x.shape, 1) end
        if chance(0.4) then x = P:unary(x) end
      end
      t = x
      if chance(0.3) then t = P:gen_after(t) end
    end
  end
  if chance(0.15) then
    -- an element-wise stage between the last value and the output (reverse_compute_inline's case)
    t = P:unary(P:let(string.format("%s:contiguous()", t.name), t.shape, t.bound))
  end
  P.lines[#P.lines + 1] = "local t = " .. t.name
  return { text = table.concat(P.lines, "\n"), params = P.params, form = form }
end

-- after a reduction or a matmul: an element-wise tail, sometimes with another param
function Prog:gen_after(t)
  if t.bound > BOUND then t = self:let(string.format("(%s):tanh()", t.name), t.shape, 1) end
  if chance(0.5) or #t.shape == 0 then return self:unary(t) end
  return self:binary(t, self:gen(t.shape, 0))
end

-- the tensor a program's text builds (one per call: the replay lowers it afresh)
local function build(prog)
  local env = setmetatable({}, { __index = _ENV })
  local f = assert(load(prog.text .. "\nreturn t", "program", "t", env))
  return f()
end

local function schedule_of(prog)
  return kernel.lower(build(prog), "out"):schedule()
end

-- the inputs of the C run: values in [-1, 1) seeded by the param's place
local function bindings_text(prog, seed)
  local parts = {}
  for i, p in ipairs(prog.params) do
    parts[i] = string.format("%s = (tensor.rand(%s, {seed = %d}) * 2 - 1):realize()", p.name, shape_text(p.shape), seed * 8 + i)
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

------------------------------------------------------------------------------------------------
-- What a schedule has: stages in order, their loops (extents and axis types from the printed
-- kernel), the buffers each stage reads and writes, and the buffers (name, role, scope, shape).
local function info(s)
  local k = s:kernel()
  local I = { stages = k:stages(), loops = {}, ext = {}, typ = {}, bufs = {}, buf = {}, idx = {},
              reads = {}, writes = {} }
  for i, st in ipairs(I.stages) do
    I.idx[st] = i
    I.loops[st] = s:get_loops(st)
    I.ext[st], I.typ[st], I.reads[st], I.writes[st] = {}, {}, {}, {}
  end
  for line in (k:buffers() .. "\n"):gmatch("(.-)\n") do
    local name, role, scope, dtype, sh = line:match("^(%S+)%s+(%S+)%s+(%S+)%s+(%S+)%s+(%b())")
    if name and name ~= "name" then
      local dims = {}
      for d in sh:gmatch("%d+") do dims[#dims + 1] = tonumber(d) end
      local b = { name = name, role = role, scope = scope, dtype = dtype, shape = dims }
      I.bufs[#I.bufs + 1] = b
      I.buf[name] = b
    end
  end
  local cur
  for line in (tostring(s) .. "\n"):gmatch("(.-)\n") do
    local h = line:match("^# ([%w_]+)$")
    if h and I.idx[h] then
      cur = h
    elseif cur then
      local vars, n, note = line:match("^%s*for (.-) in range%((%d+)%):?(.*)$")
      local vs, ns, notes = line:match("^%s*for (.-) in grid%((.-)%):?(.*)$")
      if vars and not vars:find(",") then
        I.ext[cur][vars] = tonumber(n)
        I.typ[cur][vars] = note:match("#%s*(.*)$") or ""
      elseif vs then
        local names, exts = {}, {}
        for v in vs:gmatch("[%w_]+") do names[#names + 1] = v end
        for x in ns:gmatch("%d+") do exts[#exts + 1] = tonumber(x) end
        for i, v in ipairs(names) do
          I.ext[cur][v] = exts[i]
          I.typ[cur][v] = (" " .. notes):match("[%s#]" .. v:gsub("%p", "%%%0") .. ":(%S+)") or ""
        end
      else
        local lhs, rhs = line:match("^%s*([%w_]+)%[.-%]%s*[%+%*]?=%s*(.*)$")
        if lhs then I.writes[cur][lhs] = true end
        for b in (rhs or line):gmatch("([%w_]+)%[") do
          if I.buf[b] and b ~= lhs then I.reads[cur][b] = true end
        end
        if lhs and rhs and rhs:find(lhs .. "[", 1, true) then I.reads[cur][lhs] = true end
      end
    end
  end
  return I
end

-- the stages that reduce (a REDUCE loop), and their REDUCE loops
local function reduce_loops(I, st)
  local r = {}
  for _, l in ipairs(I.loops[st] or {}) do
    if (I.typ[st][l] or ""):find("REDUCE") then r[#r + 1] = l end
  end
  return r
end
local function stages_where(I, f)
  local r = {}
  for _, st in ipairs(I.stages) do if f(st) then r[#r + 1] = st end end
  return r
end
local function keys(t)
  local r = {}
  for k in pairs(t) do r[#r + 1] = k end
  table.sort(r)
  return r
end

------------------------------------------------------------------------------------------------
-- Random steps: Lua text calling one primitive of s. About three arguments in four are drawn to
-- make sense (a producer before its consumer, a reduction's REDUCE loop, a buffer the stage
-- reads); the rest, and a few wrong ones, from anything the schedule has.
local function q(x) return string.format("%q", x) end

local function any_loop(I)
  local all = {}
  for _, st in ipairs(I.stages) do for _, l in ipairs(I.loops[st]) do all[#all + 1] = l end end
  return #all > 0 and pick(all) or "i"
end

local function stage(I)
  local r = R(100)
  if r <= 92 or #I.stages == 0 then return #I.stages > 0 and pick(I.stages) or "out" end
  if r <= 96 and #I.bufs > 0 then return pick(I.bufs).name end     -- a buffer that may be no stage
  return pick({ "nope", "", "out_init", "x y" })
end

-- a stage from the list, or now and then any stage (or a wrong name)
local function stage_of(I, list, p)
  if #list > 0 and chance(p or 0.8) then return pick(list) end
  return stage(I)
end

local function loop(I, st)
  local ls = I.loops[st]
  local r = R(100)
  if ls and #ls > 0 and r <= 88 then return pick(ls) end
  if r <= 96 then return any_loop(I) end                          -- another stage's loop
  return pick({ "nope", "", "i0_j0_fused", "k1" })
end

-- a loop of st that is not REDUCE (or, now and then, any)
local function spatial_loop(I, st)
  local r = {}
  for _, l in ipairs(I.loops[st] or {}) do
    if not (I.typ[st][l] or ""):find("REDUCE") then r[#r + 1] = l end
  end
  if #r > 0 and chance(0.75) then return pick(r) end
  return loop(I, st)
end

local function red_loop(I, st)
  local r = reduce_loops(I, st)
  if #r > 0 and chance(0.8) then return pick(r) end
  return loop(I, st)
end

local function ext(I, st, l) return (I.ext[st] or {})[l] or 8 end

local function divisors(n)
  local d = {}
  for i = 2, n - 1 do if n % i == 0 then d[#d + 1] = i end end
  return d
end

local function factor(n)
  local r = R(100)
  if r <= 50 then
    local d = divisors(n)
    if #d > 0 then return pick(d) end
  end
  if r <= 80 then return between(2, math.max(2, n + 1)) end
  if r <= 88 then return pick({ 1, n }) end
  return pick({ 0, -1, -3, 1000, 3.5 })
end

local function nums(t)
  local r = {}
  for i, v in ipairs(t) do r[i] = tostring(v) end
  return table.concat(r, ", ")
end

-- n adjacent loops of st (fuse, tile), or random ones
local function adjacent(I, st, n)
  local ls = I.loops[st] or {}
  if #ls >= n and chance(0.85) then
    local i = R(#ls - n + 1)
    local r = {}
    for j = 0, n - 1 do r[#r + 1] = ls[i + j] end
    return r
  end
  local r = {}
  for j = 1, n do r[j] = loop(I, st) end
  return r
end

local AXES = { "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z",
               "warp", "lane", "block.x", "thread.y" }

local function scope()
  local r = R(100)
  if r <= 60 then return "global" end
  if r <= 78 then return "shared" end
  if r <= 97 then return "local" end
  return pick({ "texture", "", "GLOBAL" })
end

-- a layout for a buffer of shape sh: row- or column-major, padded, permuted, swizzled; now
-- and then one of the wrong size
local function layout(sh)
  local n = #sh
  if n == 0 then return "1:1" end
  local order = shuffled(n)
  local strides, acc = {}, 1
  local pad = chance(0.3) and between(1, 3) or 0
  for i = n, 1, -1 do
    local ax = order[i]
    strides[ax] = acc
    acc = acc * sh[ax] + (i == n and pad or 0)
  end
  local dims = copy(sh)
  if chance(0.08) then dims[R(n)] = dims[1] + 1 end
  local L = string.format("(%s):(%s)", nums(dims), nums(strides))
  if n == 1 then L = string.format("%d:%d", dims[1], strides[1]) end
  local size = 1
  for _, d in ipairs(sh) do size = size * d end
  if chance(0.15) and pad == 0 and size >= 4 and size & (size - 1) == 0 then
    L = string.format("Sw<1,0,%d> o 0 o %s", between(1, 2), L)
  end
  return L
end

-- a pair of stages (before, after) in kernel order, or any two
local function ordered_pair(I)
  if #I.stages >= 2 and chance(0.8) then
    local i = R(#I.stages - 1)
    local j = between(i + 1, #I.stages)
    return I.stages[i], I.stages[j]
  end
  return stage(I), stage(I)
end

-- the buffers of a set that are not global
local function nonglobal(I, set)
  local r = {}
  for b in pairs(set or {}) do
    if I.buf[b] and I.buf[b].scope ~= "global" then r[b] = true end
  end
  return r
end

local function reducing(I) return stages_where(I, function(st) return #reduce_loops(I, st) > 0 end) end
local function elementwise(I) return stages_where(I, function(st) return #reduce_loops(I, st) == 0 end) end

local STEPS = {
  split = function(I)
    local st = stage(I)
    local l = chance(0.3) and red_loop(I, st) or loop(I, st)
    local n = ext(I, st, l)
    local f = factor(n)
    local form = R(10)
    if form <= 5 then return string.format("s:split(%s, %s, {nil, %s})", q(st), q(l), f) end
    if form <= 7 then return string.format("s:split(%s, %s, {%s, nil})", q(st), q(l), f) end
    if form <= 8 then return string.format("s:split(%s, %s, {%s, %s})", q(st), q(l), f, factor(math.max(1, n // math.max(1, math.floor(f))))) end
    if form <= 9 then return string.format("s:split(%s, %s, {nil, %s, %s})", q(st), q(l), factor(n), factor(n)) end
    return string.format("s:split(%s, %s, %s)", q(st), q(l), pick({ "{nil, nil}", "{}", "{4}", "4" }))
  end,
  fuse = function(I)
    local st = stage(I)
    local ls = adjacent(I, st, chance(0.8) and 2 or 3)
    for i = 1, #ls do ls[i] = q(ls[i]) end
    return string.format("s:fuse(%s, %s)", q(st), table.concat(ls, ", "))
  end,
  reorder = function(I)
    local st = stage(I)
    local ls = copy(I.loops[st] or {})
    local sub = {}
    if #ls >= 2 and chance(0.9) then
      local i = R(#ls - 1)
      local j = between(i + 1, #ls)
      for x = i, j do sub[#sub + 1] = ls[x] end
      for x = #sub, 2, -1 do local y = R(x); sub[x], sub[y] = sub[y], sub[x] end
    else
      sub = { loop(I, st), loop(I, st) }
    end
    for x = 1, #sub do sub[x] = q(sub[x]) end
    if chance(0.3) then return string.format("s:reorder(%s, {%s})", q(st), table.concat(sub, ", ")) end
    return string.format("s:reorder(%s, %s)", q(st), table.concat(sub, ", "))
  end,
  fission = function(I)
    local st = stage(I)
    if chance(0.5) then return string.format("s:fission(%s, %s, {deep = true})", q(st), q(loop(I, st))) end
    return string.format("s:fission(%s, %s)", q(st), q(loop(I, st)))
  end,
  skip_masked = function(I)
    local st = stage(I)
    return string.format("s:skip_masked(%s, %s)", q(st), q(loop(I, st)))
  end,
  tile = function(I)
    local st = stage(I)
    local ls = adjacent(I, st, 2)
    return string.format("s:tile(%s, %s, %s, %s, %s)", q(st), q(ls[1]), q(ls[2]), factor(ext(I, st, ls[1])), factor(ext(I, st, ls[2])))
  end,
  bind = function(I)
    local st = stage(I)
    local ax = chance(0.96) and pick(AXES) or pick({ "threadIdx.w", "gpu", "" })
    return string.format("s:bind(%s, %s, %s)", q(st), q(spatial_loop(I, st)), q(ax))
  end,
  parallel = function(I) local st = stage(I) return string.format("s:parallel(%s, %s)", q(st), q(spatial_loop(I, st))) end,
  vectorize = function(I)
    local st = stage(I)
    local ls = I.loops[st] or {}
    local l = (#ls > 0 and chance(0.6)) and ls[#ls] or spatial_loop(I, st)
    return string.format("s:vectorize(%s, %s)", q(st), q(l))
  end,
  unroll = function(I) local st = stage(I) return string.format("s:unroll(%s, %s)", q(st), q(loop(I, st))) end,
  apply_opt = function(I)
    local op = weighted({ UPCAST = 4, UNROLL = 3, LOCAL = 2, GROUP = 2, GROUPTOP = 2, THREAD = 3, PADTO = 2, SWAP = 3, NOLOCALS = 1, TC = 1, FOO = 1 })
    if op == "NOLOCALS" then return 's:apply_opt("NOLOCALS")' end
    local st = stage(I)
    local l = (op == "UNROLL" or op == "GROUP" or op == "GROUPTOP") and red_loop(I, st) or spatial_loop(I, st)
    if op == "SWAP" then return string.format("s:apply_opt(\"SWAP\", %s, %s, %s)", q(st), q(l), q(loop(I, st))) end
    local n = ext(I, st, l)
    local k = chance(0.15) and 0 or factor(n)
    return string.format("s:apply_opt(%s, %s, %s, %s)", q(op), q(st), q(l), k)
  end,
  compute_at = function(I)
    local st, cons = ordered_pair(I)
    -- a shared or local cache is meant to move into its reader: do that most of the time
    local pend = stages_where(I, function(x) return #keys(nonglobal(I, I.writes[x])) > 0 end)
    if #pend > 0 and chance(0.6) then
      st = pick(pend)
      local rd = stages_where(I, function(x) return I.idx[x] > I.idx[st] and #keys(nonglobal(I, I.reads[x])) > 0 end)
      if #rd > 0 then cons = pick(rd) end
    end
    return string.format("s:compute_at(%s, %s, %s)", q(st), q(cons), q(loop(I, cons)))
  end,
  reverse_compute_at = function(I)
    local prod, st = ordered_pair(I)
    local pend = stages_where(I, function(x) return I.idx[x] > 1 and #keys(nonglobal(I, I.reads[x])) > 0 end)
    if #pend > 0 and chance(0.5) then
      st = pick(pend)
      prod = I.stages[I.idx[st] - 1]
    end
    return string.format("s:reverse_compute_at(%s, %s, %s)", q(st), q(prod), q(spatial_loop(I, prod)))
  end,
  compute_inline = function(I)
    local ew = stages_where(I, function(st) return #reduce_loops(I, st) == 0 and (I.buf[st] or {}).role ~= "output" end)
    return string.format("s:compute_inline(%s)", q(stage_of(I, ew)))
  end,
  reverse_compute_inline = function(I)
    local ew = stages_where(I, function(st) return #reduce_loops(I, st) == 0 and I.idx[st] > 1 end)
    return string.format("s:reverse_compute_inline(%s)", q(stage_of(I, ew)))
  end,
  cache_read = function(I)
    local st = stage(I)
    local rs = keys(I.reads[st] or {})
    local b = (#rs > 0 and chance(0.85)) and pick(rs) or (#I.bufs > 0 and pick(I.bufs).name or "a")
    if chance(0.03) then b = "nope" end
    return string.format("s:cache_read(%s, %s, %s)", q(st), q(b), q(scope()))
  end,
  cache_write = function(I) return string.format("s:cache_write(%s, %s)", q(stage(I)), q(scope())) end,
  set_scope = function(I)
    local temps = {}
    for _, b in ipairs(I.bufs) do if b.role == "temp" then temps[#temps + 1] = b.name end end
    local b = (#temps > 0 and chance(0.8)) and pick(temps) or (#I.bufs > 0 and pick(I.bufs).name or "a")
    if chance(0.03) then b = "nope" end
    return string.format("s:set_scope(%s, %s)", q(b), q(scope()))
  end,
  set_layout = function(I)
    if #I.bufs == 0 then return 's:set_layout("out", "1:1")' end
    local b = pick(I.bufs)
    return string.format("s:set_layout(%s, %s)", q(b.name), q(layout(b.shape)))
  end,
  decompose_reduction = function(I)
    local st = stage_of(I, reducing(I))
    return string.format("s:decompose_reduction(%s, %s)", q(st), q(red_loop(I, st)))
  end,
  rfactor = function(I)
    local st = stage_of(I, reducing(I))
    local l = red_loop(I, st)
    if chance(0.4) then return string.format("s:rfactor(%s, %s)", q(st), q(l)) end
    return string.format("s:rfactor(%s, %s, %d)", q(st), q(l), pick({ 0, 0, 1, 1, 2, 3, -1 }))
  end,
  privatize_reduce = function(I)
    local st = stage_of(I, reducing(I))
    local l = red_loop(I, st)
    return string.format("s:privatize_reduce(%s, %s, %s)", q(st), q(l), factor(ext(I, st, l)))
  end,
  undo = function() return "s:undo()" end,
}

-- the fusion steps: a reduction, and a REDUCE loop of an earlier reduction, written
-- "stage.loop" or by its bare name
local function fusion_step(name)
  return function(I)
    local red = reducing(I)
    local st, from
    if #red >= 2 and chance(0.8) then
      local i = R(#red - 1)
      from, st = red[i], red[between(i + 1, #red)]
    else
      st = stage(I)
      from = stage(I)
    end
    local l = red_loop(I, from)
    if chance(0.8) then l = from .. "." .. l end
    return string.format("s:%s(%s, %s)", name, q(st), q(l))
  end
end
STEPS.rolling_update = fusion_step("rolling_update")
STEPS.split_k_update = fusion_step("split_k_update")
STEPS.fuse_and_privatize = fusion_step("fuse_and_privatize")

------------------------------------------------------------------------------------------------
-- Recipes: the sequences the docs teach (a tiled and bound GEMM with shared tiles, a rolling or
-- split-k fusion chain, rfactor, CPU parallel and vector loops, placing stages), each step made
-- from the schedule as it is then. A third of the programs begin with one, so that the random
-- steps after it start from deep states, not only from the lowered kernel.
local function first_spatial(I, st, n)
  local r = {}
  for _, l in ipairs(I.loops[st] or {}) do
    if #r < n and not (I.typ[st][l] or ""):find("REDUCE") then r[#r + 1] = l end
  end
  return r
end

local function input_read_by(I, st)
  local r = {}
  for b in pairs(I.reads[st] or {}) do
    if I.buf[b] and I.buf[b].role == "input" then r[#r + 1] = b end
  end
  table.sort(r)
  return #r > 0 and pick(r) or nil
end

local function fx(n) local d = divisors(n) return #d > 0 and pick(d) or math.max(1, n // 2) end

local RECIPES = {
  -- tile two spatial loops and bind them to blocks and threads
  tile_bind = function()
    local c = {}
    return {
      function(I)
        local cands = stages_where(I, function(st) return #first_spatial(I, st, 2) == 2 end)
        if #cands == 0 then return nil end
        c.st = pick(cands)
        c.l = first_spatial(I, c.st, 2)
        return string.format("s:tile(%s, %s, %s, %d, %d)", q(c.st), q(c.l[1]), q(c.l[2]),
                             fx(ext(I, c.st, c.l[1])), fx(ext(I, c.st, c.l[2])))
      end,
      function() return c.st and string.format("s:bind(%s, %s, \"blockIdx.y\")", q(c.st), q(c.l[1] .. "0")) end,
      function() return c.st and string.format("s:bind(%s, %s, \"blockIdx.x\")", q(c.st), q(c.l[2] .. "0")) end,
      function() return c.st and string.format("s:bind(%s, %s, \"threadIdx.y\")", q(c.st), q(c.l[1] .. "1")) end,
      function() return c.st and string.format("s:bind(%s, %s, \"threadIdx.x\")", q(c.st), q(c.l[2] .. "1")) end,
    }
  end,
  -- docs/schedules.md's shared-memory GEMM, on any reduction with two spatial loops
  gemm = function()
    local c = {}
    return {
      function(I)
        local cands = stages_where(I, function(st) return #first_spatial(I, st, 2) == 2 and #reduce_loops(I, st) > 0 end)
        if #cands == 0 then return nil end
        c.st = pick(cands)
        c.l = first_spatial(I, c.st, 2)
        c.k = reduce_loops(I, c.st)[1]
        c.b = input_read_by(I, c.st)
        return c.b and string.format("s:cache_read(%s, %s, \"shared\")", q(c.st), q(c.b))
      end,
      function() return c.st and string.format("s:decompose_reduction(%s, %s)", q(c.st), q(c.k)) end,
      function(I)
        return c.st and string.format("s:tile(%s, %s, %s, %d, %d)", q(c.st), q(c.l[1]), q(c.l[2]),
                                      fx(ext(I, c.st, c.l[1])), fx(ext(I, c.st, c.l[2])))
      end,
      function(I) return c.st and string.format("s:split(%s, %s, {nil, %d})", q(c.st), q(c.k), fx(ext(I, c.st, c.k))) end,
      function() return c.st and string.format("s:reorder(%s, %s, %s, %s)", q(c.st), q(c.k .. "0"), q(c.l[1] .. "1"), q(c.l[2] .. "1")) end,
      function() return c.st and string.format("s:bind(%s, %s, \"blockIdx.y\")", q(c.st), q(c.l[1] .. "0")) end,
      function() return c.st and string.format("s:bind(%s, %s, \"threadIdx.x\")", q(c.st), q(c.l[2] .. "1")) end,
      function() return c.b and string.format("s:compute_at(%s, %s, %s)", q(c.b .. "_shared"), q(c.st), q(c.k .. "0")) end,
    }
  end,
  -- roll every later reduction under the first one's reduce loop, in dataflow order
  rolling = function()
    local c = {}
    local function step(I)
      local red = reducing(I)
      if not c.first then
        if #red < 2 then return nil end
        c.first = red[1]
        c.loop = c.first .. "." .. reduce_loops(I, c.first)[#reduce_loops(I, c.first)]
        c.n = 1
      end
      c.n = c.n + 1
      local rest = stages_where(I, function(st) return I.idx[st] > (I.idx[c.first] or 0) and #reduce_loops(I, st) > 0 end)
      if #rest == 0 then return nil end
      return string.format("s:rolling_update(%s, %s)", q(rest[1]), q(c.loop))
    end
    return { step, step, step }
  end,
  -- split the first reduction, then split-k update the later ones (FlashDecoding)
  split_k = function()
    local c = {}
    return {
      function(I)
        local red = reducing(I)
        if #red < 2 then return nil end
        c.first = red[1]
        c.k = reduce_loops(I, c.first)[#reduce_loops(I, c.first)]
        return string.format("s:split(%s, %s, {nil, %d})", q(c.first), q(c.k), fx(ext(I, c.first, c.k)))
      end,
      function(I)
        if not c.first then return nil end
        local rest = stages_where(I, function(st) return I.idx[st] > (I.idx[c.first] or 0) and #reduce_loops(I, st) > 0 end)
        return #rest > 0 and string.format("s:split_k_update(%s, %s)", q(rest[1]), q(c.first .. "." .. c.k .. "0")) or nil
      end,
      function(I)
        if not c.first then return nil end
        local loc = c.first .. "_local"
        if not I.idx[loc] then return nil end
        local rest = stages_where(I, function(st) return I.idx[st] > I.idx[loc] and st ~= c.first and #reduce_loops(I, st) > 0 end)
        return #rest > 0 and string.format("s:split_k_update(%s, %s)", q(rest[#rest]), q(loc .. "." .. c.k .. "0")) or nil
      end,
    }
  end,
  -- rfactor a split reduction, the partial sums' loops on blocks and threads
  rfactor = function()
    local c = {}
    return {
      function(I)
        local red = reducing(I)
        if #red == 0 then return nil end
        c.st = pick(red)
        c.k = pick(reduce_loops(I, c.st))
        return string.format("s:split(%s, %s, {nil, %d})", q(c.st), q(c.k), fx(ext(I, c.st, c.k)))
      end,
      function() return c.st and string.format("s:rfactor(%s, %s, %d)", q(c.st), q(c.k .. "1"), pick({ 0, 1 })) end,
      function(I)
        local rf = c.st and c.st .. "_rf"
        if not rf or not I.idx[rf] then return nil end
        local l = first_spatial(I, rf, 1)[1]
        return l and string.format("s:bind(%s, %s, \"blockIdx.x\")", q(rf), q(l))
      end,
      function(I)
        local rf = c.st and c.st .. "_rf"
        if not rf or not I.idx[rf] then return nil end
        return string.format("s:bind(%s, %s, \"threadIdx.x\")", q(rf), q(c.k .. "1"))
      end,
    }
  end,
  -- CPU: an outer loop parallel, an inner one split and vectorized, a reduce loop unrolled
  cpu = function()
    local c = {}
    return {
      function(I)
        c.st = pick(I.stages)
        local sp = first_spatial(I, c.st, 3)
        if #sp == 0 then return nil end
        c.last = sp[#sp]
        return string.format("s:split(%s, %s, {nil, %d})", q(c.st), q(c.last), fx(ext(I, c.st, c.last)))
      end,
      function() return c.last and string.format("s:vectorize(%s, %s)", q(c.st), q(c.last .. "1")) end,
      function(I)
        local sp = c.st and first_spatial(I, c.st, 1)
        return sp and sp[1] and string.format("s:parallel(%s, %s)", q(c.st), q(sp[1]))
      end,
      function(I)
        local r = c.st and reduce_loops(I, c.st) or {}
        return #r > 0 and string.format("s:unroll(%s, %s)", q(c.st), q(r[#r])) or nil
      end,
    }
  end,
  -- a register tile, as scripts/cpu/templates.lua's T.gemm makes one: the cache written back once
  -- per outer iteration, its zeroing apart, compacted, then the outer loop parallel (one tile per
  -- thread, if parallel proves no value crosses iterations) and the inner loops vectorized
  regtile = function()
    local c = {}
    return {
      function(I)
        local red = stages_where(I, function(st) return #reduce_loops(I, st) > 0 and #first_spatial(I, st, 1) > 0 end)
        if #red == 0 then return nil end
        c.st = pick(red)
        c.outer = first_spatial(I, c.st, 1)[1]
        return string.format("s:cache_write(%s, \"local\")", q(c.st))
      end,
      function() return c.st and string.format("s:reverse_compute_at(%s, %s, %s)", q(c.st .. "_local"), q(c.st), q(c.outer)) end,
      function(I)
        local l = c.st and first_spatial(I, c.st, 2)
        return l and l[2] and string.format("s:fission(%s, %s, {deep = true})", q(c.st), q(l[2])) or nil
      end,
      function() return c.st and string.format("s:set_scope(%s, \"local\")", q(c.st .. "_local")) end,
      function() return c.st and string.format("s:parallel(%s, %s)", q(c.st), q(c.outer)) end,
      function(I)
        local l = c.st and I.loops[c.st]
        return l and #l > 0 and string.format("s:vectorize(%s, %s)", q(c.st), q(l[#l])) or nil
      end,
    }
  end,
  -- place element-wise stages: inline one, compute another at its consumer, or the reverse
  place = function()
    local function step(I)
      local ew = stages_where(I, function(st) return #reduce_loops(I, st) == 0 and I.buf[st] and I.buf[st].role == "temp" end)
      local what = R(3)
      if what == 1 and #ew > 0 then return string.format("s:compute_inline(%s)", q(pick(ew))) end
      if what == 2 and #ew > 0 then
        local st = pick(ew)
        local later = stages_where(I, function(x) return I.idx[x] > I.idx[st] and (I.reads[x] or {})[st] end)
        if #later > 0 then
          local cons = pick(later)
          return string.format("s:compute_at(%s, %s, %s)", q(st), q(cons), q(pick(I.loops[cons] or {}) or "i"))
        end
      end
      local cons = stages_where(I, function(st) return I.idx[st] > 1 and #reduce_loops(I, st) == 0 end)
      if #cons > 0 then
        local st = pick(cons)
        if chance(0.5) then return string.format("s:reverse_compute_inline(%s)", q(st)) end
        local prod = I.stages[I.idx[st] - 1]
        local l = first_spatial(I, prod, 3)
        return #l > 0 and string.format("s:reverse_compute_at(%s, %s, %s)", q(st), q(prod), q(pick(l))) or nil
      end
    end
    return { step, step }
  end,
}
local RECIPE_WEIGHTS = { tile_bind = 3, gemm = 3, rolling = 3, split_k = 3, rfactor = 2, cpu = 3, place = 3, regtile = 3 }

local WEIGHTS = {
  split = 10, fuse = 6, reorder = 6, tile = 5, bind = 7, parallel = 4, vectorize = 4, unroll = 3,
  apply_opt = 6, compute_at = 6, reverse_compute_at = 5, compute_inline = 6, reverse_compute_inline = 5,
  cache_read = 5, cache_write = 4, set_scope = 4, set_layout = 4, decompose_reduction = 5, rfactor = 5,
  rolling_update = 5, split_k_update = 4, privatize_reduce = 3, fuse_and_privatize = 3, undo = 2,
  fission = 5, skip_masked = 3,
}

------------------------------------------------------------------------------------------------
-- The properties. check_step runs one step on s and returns nil, or the property it broke and
-- the message.
local counting = true   -- off while the minimizer replays cases
local stats = { programs = 0, steps = 0, accepted = 0, refused = 0, pending = 0, c_refused = 0, undone = 0 }
local prim_stats = {}
local refusals = {}

-- what C refuses by design (docs/export.md): such a kernel is checked by verify alone
local C_REFUSALS = {
  "needs the threads of a block to run together",
  "may divide by zero",
  "keeps shared and local buffers on the stack",
}

local function errtext(e)
  if type(e) == "string" then return e end
  return "(a " .. type(e) .. " raised: " .. tostring(e) .. ")"
end

local function is_c_refusal(msg)
  for _, p in ipairs(C_REFUSALS) do if msg:find(p, 1, true) then return true end end
  return false
end

-- A shared or local buffer lives for one stage (a launch): a cache made by cache_read,
-- cache_write or set_scope is meant to be moved into its reader's stage, and until then the
-- reader finds it uninitialized, as docs/schedules.md says. Such a kernel is pending: it is
-- not run. Only those three steps may make a kernel that ran pending; any other step that
-- does is a finding (a pending kernel may stay pending: the tester cannot tell why).
local PENDING_STEPS = { cache_read = true, cache_write = true, set_scope = true }

local function uninit_nonglobal(msg, I)
  local b = msg:match("^uninitialized: .- load of ([%w_]+)")
  return b and I.buf[b] and I.buf[b].scope ~= "global"
end

-- whether the schedule's kernel is pending now (the minimizer's replay)
local function pending_now(s, cseed)
  local ok, e = pcall(s.verify, s, { trials = 1, seed = cseed })
  return not ok and uninit_nonglobal(errtext(e), info(s)) or false
end

local function lines_of(s)
  local n = 0
  for _ in s:gmatch("\n") do n = n + 1 end
  return n
end

-- run step text on s; checks = false applies it only (the minimizer's replay). ctx holds
-- the states before each accepted step (hist, for undo) and whether the kernel is pending.
local function check_step(prog, s, text, ctx, cseed, checks)
  local before, btrace = tostring(s), s:trace()
  local f = assert(load(text, "step", "t", { s = s }))
  local ok, e = pcall(f)
  local prim = text:match("^s:([%w_]+)")
  local hist = ctx.hist
  if not checks then
    if ok then
      if prim == "undo" then
        local h = table.remove(hist)
        ctx.pending = h and h.pending or false
      else
        hist[#hist + 1] = { text = before, trace = btrace, pending = ctx.pending }
        ctx.pending = pending_now(s, cseed)
      end
    end
    return nil, nil, ok
  end
  local ps = prim_stats[prim] or { accepted = 0, refused = 0 }
  if counting then prim_stats[prim] = ps end
  if not ok then
    ps.refused = ps.refused + 1
    stats.refused = stats.refused + 1
    local msg = errtext(e)
    if tostring(s) ~= before or s:trace() ~= btrace then
      return "refused", "a refused step changed the schedule (" .. msg .. ")"
    end
    if type(e) ~= "string" then return "refused", "the refusal is not a message: " .. msg end
    if msg:find("attempt to ", 1, true) or msg:find("stack overflow", 1, true) then
      return "refused", "a Lua error instead of a refusal: " .. msg
    end
    if counting and os.getenv("SCHED_REFUSALS") == "1" then
      local key = prim .. ": " .. msg:gsub("%-?%d+", "N"):gsub("\n.*", ""):sub(1, 110)
      refusals[key] = (refusals[key] or 0) + 1
    end
    return nil, msg, false
  end
  ps.accepted = ps.accepted + 1
  stats.accepted = stats.accepted + 1
  local trace = s:trace()
  -- the trace: one more line (undo: the line of the step undone gone)
  if prim == "undo" then
    stats.undone = stats.undone + 1
    local h = table.remove(hist)
    if not h then return "undo", "undo succeeded with no step to undo" end
    ctx.pending = h.pending
    if tostring(s) ~= h.text then return "undo", "undo does not give the schedule before the last step" end
    if trace ~= h.trace then return "undo", "undo does not give the trace before the last step" end
  else
    hist[#hist + 1] = { text = before, trace = btrace, pending = ctx.pending }
    if trace:sub(1, #btrace) ~= btrace or lines_of(trace) ~= lines_of(btrace) + 1 then
      return "trace", "the trace did not grow by one line: " .. trace:sub(#btrace + 1)
    end
  end
  local I = info(s)
  -- the reference
  local vok, ve = pcall(s.verify, s, { trials = 1, seed = cseed })
  local pending = false
  if not vok then
    ve = errtext(ve)
    if uninit_nonglobal(ve, I) and (ctx.pending or PENDING_STEPS[prim]) then
      pending = true
      stats.pending = stats.pending + 1
    else
      return "verify", prim .. ": " .. ve
    end
  end
  ctx.pending = pending
  -- the C JIT, compared bit for bit with the interpreter by run itself
  if not pending then
    local binds = assert(load("return " .. bindings_text(prog, cseed), "bindings", "t", _ENV))()
    local cok, ce = pcall(s.run, s, binds, { backend = "c" })
    if not cok then
      ce = errtext(ce)
      if is_c_refusal(ce) then
        stats.c_refused = stats.c_refused + 1
      else
        return "c", prim .. ": " .. ce
      end
    end
  end
  -- the replay
  local fresh = schedule_of(prog)
  local rf = load(trace, "trace", "t", { s = fresh })
  if not rf then return "replay", "the trace does not load: " .. trace end
  local rok, re = pcall(rf)
  if not rok then return "replay", "the trace does not replay: " .. errtext(re) end
  if tostring(fresh) ~= tostring(s) then return "replay", "the replayed trace gives another kernel" end
  if fresh:trace() ~= trace then return "replay", "the replayed trace gives another trace" end
  return nil, nil, true
end

------------------------------------------------------------------------------------------------
-- Reproducers. A case is a program and its steps; the reproducer applies the steps before the
-- last (plainly when accepted, refused ones dropped) and checks the last as the property says.
local function check_text(prop, step, prog, cseed)
  if prop == "refused" then
    return table.concat({
      "local before, trace = tostring(s), s:trace()",
      "print(pcall(function() " .. step .. " end))",
      'assert(tostring(s) == before and s:trace() == trace, "the refused step changed the schedule")',
    }, "\n")
  elseif prop == "verify" then
    return step .. string.format("\nassert(s:verify{trials = 1, seed = %d})", cseed)
  elseif prop == "c" then
    return step .. string.format("\nassert(s:verify{trials = 1, seed = %d})\ns:run(%s, {backend = \"c\"})", cseed, bindings_text(prog, cseed))
  elseif prop == "replay" then
    return table.concat({
      step,
      'local r = kernel.lower(t, "out"):schedule()',
      'load(s:trace(), "trace", "t", {s = r})()',
      'assert(tostring(r) == tostring(s) and r:trace() == s:trace(), "the replay differs")',
    }, "\n")
  elseif prop == "lower" then
    return ""
  elseif prop == "trace" or prop == "undo" then
    return "local trace = s:trace()\n" .. step .. "\nprint(trace, s:trace())"
  end
  -- a crash: the step and every check after it
  return table.concat({
    step,
    string.format("print(pcall(s.verify, s, {trials = 1, seed = %d}))", cseed),
    string.format("print(pcall(s.run, s, %s, {backend = \"c\"}))", bindings_text(prog, cseed)),
    'local r = kernel.lower(t, "out"):schedule()',
    'print(pcall(load(s:trace(), "trace", "t", {s = r})))',
  }, "\n")
end

local function repro(prog, steps, last, prop, msg, cseed, where)
  local out = { "-- " .. prop .. ": " .. msg:gsub("\n", "\n-- "), "-- " .. where, prog.text,
                'local s = kernel.lower(t, "out"):schedule()' }
  for _, st in ipairs(steps) do out[#out + 1] = st end
  out[#out + 1] = check_text(prop, last, prog, cseed)
  return table.concat(out, "\n") .. "\n"
end

-- the class of a finding, to report each once: the property, the step's primitive where
-- the message starts with it, and the message's first words, numbers and indices stripped
local function class_key(prop, msg)
  local m = msg:gsub("%b[]", ""):gsub("%-?%d+%.?%d*e?[-+]?%d*", "N")
  local words = {}
  for w in m:gmatch("%S+") do
    if #words < 5 then words[#words + 1] = w end
  end
  return prop .. ": " .. table.concat(words, " ")
end

-- the known findings: ID PROPERTY PATTERN (a Lua pattern matched against the message)
local known = {}
do
  local f = io.open(root .. "fuzz/sched_known.txt")
  if f then
    for line in f:lines() do
      if not line:match("^%s*#") and line:match("%S") then
        local id, prop, pat = line:match("^(%S+)%s+(%S+)%s+(.-)%s*$")
        if id then known[#known + 1] = { id = id, prop = prop, pat = pat } end
      end
    end
    f:close()
  end
end
local function known_id(prop, msg)
  for _, k in ipairs(known) do
    if (k.prop == "*" or k.prop == prop) and msg:find(k.pat) then return k.id end
  end
end

-- replay a case from scratch and check its last step only; the property and class it breaks
local function rerun(prog, steps, last, cseed)
  local ok, s = pcall(schedule_of, prog)
  if not ok then return nil end
  local ctx = { hist = {}, pending = false }
  for _, st in ipairs(steps) do check_step(prog, s, st, ctx, cseed, false) end
  local prop, msg = check_step(prog, s, last, ctx, cseed, true)
  return prop, msg
end

-- drop the steps before the last that the finding does not need, one at a time
local function minimize(prog, steps, last, prop, key, cseed)
  local cur = copy(steps)
  local changed = true
  local tries = 0
  local stop = os.time() + math.min(60, math.max(10, SECS // 4))
  while changed and tries < 200 and os.time() < stop do
    changed = false
    local i = 1
    while i <= #cur and tries < 200 and os.time() < stop do
      local trial = copy(cur)
      table.remove(trial, i)
      tries = tries + 1
      local p, m = rerun(prog, trial, last, cseed)
      if p == prop and class_key(p, m) == key then
        cur = trial
        changed = true
      else
        i = i + 1
      end
    end
  end
  return cur
end

------------------------------------------------------------------------------------------------
-- The run.
local findings = { known = {}, new = {}, nknown = 0, nnew = 0 }
local seen = {}

local function crash_log(prog, steps, text, where, cseed)
  local f = io.open(CURRENT, "w")
  if not f then return end
  f:write("-- if tessel died, this step killed it: " .. where .. "\n")
  f:write(repro(prog, steps, text, "crash", "the process died", cseed, where))
  f:close()
end

local function report(prop, msg, prog, steps, text, cseed, where)
  local id = known_id(prop, msg)
  local key = class_key(prop, msg)
  if id then
    findings.nknown = findings.nknown + 1
    findings.known[id] = (findings.known[id] or 0) + 1
    if findings.known[id] == 1 then
      print(string.format("  known %s (%s) at %s: %s", id, prop, where, msg:sub(1, 160)))
    end
    return
  end
  findings.nnew = findings.nnew + 1
  if seen[key] then
    seen[key] = seen[key] + 1
    print(string.format("  new finding again (%s) at %s: %s", prop, where, msg:sub(1, 160)))
    return
  end
  seen[key] = 1
  local accepted = {}
  for _, st in ipairs(steps) do accepted[#accepted + 1] = st end
  counting = false
  local saved = {}
  for k, v in pairs(stats) do saved[k] = v end
  local small = minimize(prog, accepted, text, prop, key, cseed)
  stats = saved
  counting = true
  local r = repro(prog, small, text, prop, msg, cseed, where)
  local path = string.format("%sfinding-%d-%d.lua", OUTDIR, SEED, #findings.new + 1)
  findings.new[#findings.new + 1] = path
  local f = io.open(path, "w")
  if f then f:write(r) f:close() end
  print(string.format("NEW FINDING (%s) at %s, saved as %s:", prop, where, path))
  print(r)
end

local t0 = os.time()
local clock0 = os.clock()
local prim_names = {}
for k in pairs(WEIGHTS) do prim_names[#prim_names + 1] = k end
table.sort(prim_names)

local function run_program(p)
  reseed(SEED, p)
  local prog = gen_program()
  local where0 = string.format("seed %d program %d", SEED, p)
  local ok, s = pcall(schedule_of, prog)
  if not ok then
    -- a program the grammar should not make, or one lowering refuses: a finding of its own
    report("lower", errtext(s), prog, {}, "-- (lowering)", 0, where0)
    return
  end
  stats.programs = stats.programs + 1
  if VERBOSE then print("== " .. where0 .. "\n" .. prog.text) end
  local recipe = chance(0.35) and RECIPES[weighted(RECIPE_WEIGHTS)]() or {}
  local nsteps = between(math.max(1, #recipe), 16)
  local accepted = {}
  local ctx = { hist = {}, pending = false }
  local i = 0
  while i < nsteps do
    local I = info(s)
    local text, prim
    while #recipe > 0 and not text do text = table.remove(recipe, 1)(I) end
    if not text then
      prim = weighted(WEIGHTS)
      text = STEPS[prim](I)
    end
    prim = text:match("^s:([%w_]+)")
    i = i + 1
    local where = string.format("%s step %d", where0, i)
    local cseed = p * 16 + i
    crash_log(prog, accepted, text, where, cseed)
    stats.steps = stats.steps + 1
    local prop, msg, acc = check_step(prog, s, text, ctx, cseed, true)
    if VERBOSE then print(string.format("  %s  -> %s", text, prop and ("VIOLATION " .. prop .. ": " .. msg) or acc and "ok" or ("refused: " .. (msg or ""):sub(1, 120)))) end
    if prop then
      report(prop, msg, prog, accepted, text, cseed, where)
      return
    end
    if acc then
      if prim == "undo" then table.remove(accepted) else accepted[#accepted + 1] = text end
    end
    if os.time() - t0 >= SECS and not ONLY then return end
  end
end

print(string.format("sched: seed %d, %d s%s", SEED, SECS, ONLY and (", program " .. ONLY) or ""))
local p = ONLY or 0
while true do
  -- an error of this script is a finding too (of the tester): shown, and the run goes on
  local ok, e = xpcall(run_program, debug.traceback, p)
  if not ok then
    findings.nnew = findings.nnew + 1
    findings.new[#findings.new + 1] = string.format("(the tester itself at seed %d program %d)", SEED, p)
    print(string.format("FUZZER ERROR at seed %d program %d: %s", SEED, p, tostring(e)))
  end
  if ONLY or os.time() - t0 >= SECS then break end
  p = p + 1
  -- the C JIT keeps every kernel it compiled loaded; start it afresh now and then
  if p % 100 == 0 then
    debug.getregistry()["tessel.jit.cache"] = nil
    collectgarbage()
  end
end
os.remove(CURRENT)

local secs = math.max(1, os.time() - t0)
if VERBOSE or os.getenv("SCHED_STATS") == "1" then
  for _, k in ipairs(prim_names) do
    local ps = prim_stats[k] or { accepted = 0, refused = 0 }
    print(string.format("  %-24s %6d accepted %6d refused", k, ps.accepted, ps.refused))
  end
end
if os.getenv("SCHED_REFUSALS") == "1" then
  local ks = {}
  for k in pairs(refusals) do ks[#ks + 1] = k end
  table.sort(ks)
  for _, k in ipairs(ks) do print(string.format("%5d  %s", refusals[k], k)) end
end
local kn = {}
for id, n in pairs(findings.known) do kn[#kn + 1] = string.format("%s x%d", id, n) end
table.sort(kn)
print(string.format("sched: seed %d: %d programs, %d steps (%.1f/s), %d accepted, %d refused; %d not run "
  .. "(uninitialized shared/local caches), %d refused by C; findings: %d known%s, %d new",
  SEED, stats.programs, stats.steps, stats.steps / secs, stats.accepted, stats.refused, stats.pending,
  stats.c_refused, findings.nknown, #kn > 0 and (" (" .. table.concat(kn, ", ") .. ")") or "", findings.nnew))
if findings.nnew > 0 then
  print("sched: new findings: " .. table.concat(findings.new, " ") .. " (docs/reliability.md: reproduce, add to fuzz/sched_known.txt)")
  os.exit(1)
end

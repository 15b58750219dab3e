-- cute_bench.lua - throughput of composition, complement and logical_divide on rank-3
-- layouts, against pycute on the same cases in the same run (pip install nvidia-cutlass).
-- Usage: tessel bench/cute_bench.lua [SECONDS_PER_CASE]
local budget = tonumber(arg and arg[1]) or 0.5

local cases = {
  { "composition", "(12,8,16):(1,24,384)", "(4,6,8):(3,12,96)" },
  { "composition", "((4,2),(2,8),6):((1,16),(4,64),512)", "(4,(2,4),3):(2,(8,32),1024)" },
  { "complement", "(4,6,8):(1,32,384)", "4096" },
  { "complement", "(2,(4,2),3):(1,(4,32),128)", "1536" },
  { "logical_divide", "(32,64,16):(1,32,2048)", "(8,16,4)" },
  { "logical_divide", "(32,64,16):(64,1,2048)", "(4,8,2):(2,8,128)" },
}

-- tessel: the same call as a user makes it, with layouts already built
local function prepare(c)
  local op, a, b = c[1], cute.layout(c[2]), c[3]
  if op == "complement" then
    local n = tonumber(b)
    return function() return cute.complement(a, n) end
  elseif b:find(":") then
    local B = cute.layout(b)
    return function() return cute[op](a, B) end
  else
    local t = {}
    for x in b:gmatch("%d+") do t[#t + 1] = tonumber(x) end
    return function() return cute[op](a, t) end
  end
end

local function rate(f)
  local n, t0 = 0, os.clock()
  local batch = 256
  repeat
    for _ = 1, batch do f() end
    n = n + batch
  until os.clock() - t0 >= budget
  return n / (os.clock() - t0)
end

-- pycute: one python process timing every case with time.process_time
local py = [[
import sys, time
try:
    from pycute import Layout, composition, complement, logical_divide
except ImportError:
    print("none"); sys.exit(0)
def T(s):
    return eval(s.replace(")", ",)")) if "(" in s else int(s)
def L(s):
    sh, st = s.split(":")
    return Layout(T(sh), T(st))
budget = float(sys.argv[1])
for line in sys.stdin:
    op, a, b = line.rstrip("\n").split("\t")
    A = L(a)
    if op == "complement":
        n = int(b); f = lambda: complement(A, n)
    elif ":" in b:
        B = L(b); f = lambda: globals()[op](A, B)
    else:
        t = tuple(Layout(int(x), 1) for x in b.strip("()").split(","))
        f = lambda: globals()[op](A, t)
    r = f()
    n, t0 = 0, time.process_time()
    while time.process_time() - t0 < budget:
        for _ in range(64): f()
        n += 64
    print(n / (time.process_time() - t0), str(r).replace(" ", ""))
]]

local function pycute_rates()
  local tmp = os.tmpname()
  local fh = assert(io.open(tmp, "w"))
  for _, c in ipairs(cases) do fh:write(table.concat(c, "\t"), "\n") end
  fh:close()
  local pyfile = os.tmpname()
  fh = assert(io.open(pyfile, "w"))
  fh:write(py)
  fh:close()
  local p = io.popen(("python3 %s %g < %s 2>/dev/null"):format(pyfile, budget, tmp))
  local out = p and p:read("a") or ""
  if p then p:close() end
  os.remove(tmp)
  os.remove(pyfile)
  if out == "" or out:match("^none") then return nil end
  local rates = {}
  for r, res in out:gmatch("(%S+) (%S+)\n") do rates[#rates + 1] = { tonumber(r), res } end
  return rates
end

local py_rates = pycute_rates()
print(("%-16s %-36s %12s %12s %8s"):format("operation", "layout", "tessel op/s", "pycute op/s", "ratio"))
for i, c in ipairs(cases) do
  local f = prepare(c)
  local r = rate(f)
  local pr = py_rates and py_rates[i]
  local agree = ""
  if pr and pr[2]:gsub("%s", "") ~= tostring(f()) then
    agree = "  (results differ: pycute " .. pr[2] .. ", tessel " .. tostring(f()) .. ")"
  end
  print(("%-16s %-36s %12.0f %12s %8s%s"):format(c[1], c[2], r,
    pr and ("%.0f"):format(pr[1]) or "-", pr and ("%.1fx"):format(r / pr[1]) or "-", agree))
end
if not py_rates then
  print("pycute is not installed (pip install nvidia-cutlass): no peer to compare against")
end

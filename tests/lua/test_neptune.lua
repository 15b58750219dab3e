-- test_neptune.lua - the ten operators of Neptune's Table 1 from one definition and two templates
-- (scripts/neptune/): each verifies against the tensor program, exports Triton with register
-- tiles and no S_q x S_kv buffer, replays from its trace, and, where Python has Triton and
-- PyTorch, runs under Triton's interpreter against float64 PyTorch.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")
local A = require "scripts.neptune.attention"
local T = require "scripts.neptune.templates"

-- small sizes the tiles divide: prefill 64 queries and keys in tiles of 16, decode 64 keys in
-- partitions of 16; GQA and SoftCap with 4 query heads over 2 KV heads
local PF = {"global", "causal", "alibi", "gqa", "softcap", "window"}
local DC = {"causal", "alibi", "gqa", "softcap"}
local function sizes(op)
  return {B = 2, H = 4, Hkv = (op == "gqa" or op == "softcap") and 2 or nil, S = 64, D = 16, window = 24}
end

local function scheduled(op, mode)
  local o = A.operator(op, mode, sizes(op))
  local s = kernel.lower(o, "o"):schedule()
  local z = sizes(op)
  if mode == "pf" then T.prefill(s, {BM = 16, BN = 16}) else T.decode(s, {BN = 16, G = z.H // (z.Hkv or z.H)}) end
  return s
end

-- the buffers of the scheduled kernel: name -> {scope =, numel =}
local function buffers(s)
  local t = {}
  for line in s:kernel():buffers():gmatch("[^\n]+") do
    local name, scope, shape = line:match("^(%S+)%s+%S+%s+(%S+)%s+%S+%s+(%b())")
    if name and name ~= "name" then
      local n = 1
      for d in shape:gmatch("%d+") do n = n * tonumber(d) end
      t[name] = {scope = scope, numel = n}
    end
  end
  return t
end

-- python3 with triton and torch, or nil (said once)
local python
do
  local p = io.popen("python3 -c 'import triton, torch' 2>&1; echo rc=$?")
  local out = p:read("a")
  p:close()
  if out:match("rc=0") then python = "python3" else
    print("note: no python3 with triton and torch: the Triton runs under the interpreter are skipped")
  end
end

-- the kernel run by Triton's interpreter, checked against bench/neptune/ops.py's float64 reference
local REF = [==[
import importlib.util, os, sys
os.environ["TRITON_INTERPRET"] = "1"
import torch
sys.path.insert(0, "bench/neptune")
import ops
spec = importlib.util.spec_from_file_location("kernel", sys.argv[1])
K = importlib.util.module_from_spec(spec); spec.loader.exec_module(K)
op, window, bufs = sys.argv[2], int(sys.argv[3]), eval(sys.argv[4])
torch.manual_seed(0)
ts = {}
for name, role, dtype, shape in bufs:
    dt = getattr(torch, dtype)
    ts[name] = torch.randn(*shape, dtype=dt) if role == "input" else torch.full(shape, float("nan"), dtype=dt)
K.tessel_launch([ts[b[0]] for b in bufs])
q, k, v = ts["q"], ts["k"], ts["v"]
case = {"op": op, "B": q.shape[0], "H": q.shape[1], "Hkv": k.shape[1], "S_q": q.shape[2],
        "S_kv": k.shape[2], "D": q.shape[3], "window": window}
ref = ops.reference(op, case, q.double(), k.double(), v.double())
got = ts["o"].double()
assert not torch.isnan(got).any(), "NaN in the output"
err = ((got - ref).norm() / ref.norm()).item()
assert err < 2e-2, "relative error %g" % err
print("ok %.2e" % err)
]==]

local function interpret(s, op)
  if not python then return end
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  local f = assert(io.open(dir .. "/kernel.py", "w"))
  f:write(s:source("triton"))
  f:close()
  f = assert(io.open(dir .. "/ref.py", "w"))
  f:write(REF)
  f:close()
  local b = {}
  for line in s:kernel():buffers():gmatch("[^\n]+") do
    local name, role, dtype, shape = line:match("^(%S+)%s+(%S+)%s+%S+%s+(%S+)%s+(%b())")
    if name and name ~= "name" then
      b[#b + 1] = string.format("(%q, %q, %q, [%s])", name, role, dtype, shape:sub(2, -2))
    end
  end
  local p = io.popen(string.format("%s %s/ref.py %s/kernel.py %s %d '[%s]' 2>&1", python, dir, dir, op,
    sizes(op).window, table.concat(b, ", ")))
  local out = p:read("a")
  local ok = p:close()
  os.execute("rm -rf " .. dir)
  if not ok or not out:match("^ok") then error("under Triton's interpreter: " .. out) end
end

for _, mode in ipairs{"pf", "dc"} do
  for _, op in ipairs(mode == "pf" and PF or DC) do
    check(op .. " " .. mode .. ": verifies, no S_q x S_kv buffer, Triton with register tiles, replays", function()
      local s = scheduled(op, mode)
      local ok, report = s:verify{trials = 1}
      assert(ok, report)
      local b, z = buffers(s), sizes(op)
      -- the scores of one tile, in registers: never the whole score matrix
      eq(b.score.scope, "local", "score's scope")
      assert(b.score.numel <= 16 * 16, "score holds " .. b.score.numel .. " elements")
      local src = s:source("triton")
      if mode == "pf" then
        assert(src:find("tl.dot(q_local_1, ", 1, true), "q k^T is not a tl.dot")
        assert(src:find(".to(tl.float16), tl.load(v_ptr", 1, true), "p v is not a tl.dot of float16 p")
        -- the running max, sum and output are program variables, not memory
        assert(src:find("s_max_1 = tl.maximum(s_max_1, ", 1, true), "the running max is not a register tile")
        assert(not src:find("tl.debug_barrier", 1, true), "a barrier: something went through memory")
        if op ~= "global" then
          assert(src:find("# the iterations skip_masked keeps", 1, true), "masked key tiles are visited")
        end
      end
      -- the trace replays onto a fresh schedule (s:replay binds s to it, no global)
      local fresh = kernel.lower(A.operator(op, mode, z), "o"):schedule()
      fresh:replay(s:trace())
      eq(tostring(fresh:kernel()), tostring(s:kernel()), "the replayed kernel")
      interpret(s, op)
    end)
  end
end

check("skip_masked: causal skips the key tiles past the diagonal; global has no mask", function()
  local s = kernel.lower(A.operator("causal", "pf", {B = 1, H = 1, S = 64, D = 16}), "o"):schedule()
  T.prefill(s, {BM = 16, BN = 16})
  assert(s:explain():find("an iteration runs only if", 1, true), s:explain())
  local g = kernel.lower(A.operator("global", "pf", {B = 1, H = 1, S = 64, D = 16}), "o"):schedule()
  T.prefill(g, {BM = 16, BN = 16, skip = false})
  raises(function() g:skip_masked("s_max", "l0") end, "skip_masked: stage s_max: loop l0's body has no mask")
end)

check("bad input: refusals name the step, and the schedule is unchanged", function()
  local s = kernel.lower(A.operator("causal", "pf", {B = 1, H = 1, S = 24, D = 8}), "o"):schedule()
  raises(function() T.prefill(s, {BM = 16, BN = 16}) end, "prefill template: BM = 16 and BN = 16 must divide")
  eq(s:trace(), "", "the trace after a refusal")
  local x = kernel.lower(tensor.param("x", {4, 4}):softmax(1), "o"):schedule()
  raises(function() T.prefill(x, {BM = 2, BN = 2}) end, "prefill template: the program has no stage score")
  raises(function() A.attention{B = 1, H = 2, Hkv = 3, S_q = 4, S_kv = 4, D = 4} end, "Hkv = 3 must divide H = 2")
  raises(function() A.attention{B = 1, H = 1, S_q = 4, S_kv = 4, D = 4, mask = 3} end, "mask must be a function")
  raises(function() A.attention{B = 1, H = 1, S_q = 4, S_kv = 4, D = 4, mask = function() return 1 end} end,
    "mask must return a tensor")
  raises(function() A.attention{B = 1, H = 1, S_q = 4, S_kv = 4, D = 4, heads = 2} end, "unknown option heads")
  raises(function() A.operator("causal", "dc2", {B = 1, H = 1, S = 4, D = 4}) end, "causal has no dc2 mode")
  -- a rolling update whose repair would need the rounding taken out, asked without it
  local r = kernel.lower(A.operator("causal", "pf", {B = 1, H = 1, S = 16, D = 8}), "o"):schedule()
  r:split("s_max", "l", {nil, 8})
  r:rolling_update("s_sum", "s_max.l0")
  raises(function() r:rolling_update("pv", "s_max.l0") end, "rounds to a narrower float and back",
    "give {relax_casts = true}")
  eq(select(2, r:trace():gsub("\n", "")), 2, "steps kept after the refusal")
end)

check("s:replay refuses a trace that does not parse or a step that is refused; k:counts prints aligned", function()
  local s = kernel.lower(A.operator("causal", "pf", {B = 1, H = 1, S = 16, D = 8}), "o"):schedule()
  raises(function() s:replay("s:split(") end, "s:replay: the trace does not parse")
  raises(function() s:replay('s:split("nope", "i", {nil, 2})') end, "split: no stage nope")
  eq(s:trace(), "", "the trace after the refusals")
  local c = s:counts()
  assert(c.ops > 0, "ops counted")
  local text = tostring(c)
  assert(text:match("^global_loads%s+%d+  loads from global memory\n"), text)
  assert(not text:find("mmas", 1, true), "a zero field printed: " .. text)
end)

check("index tensors lower to the index: arange is the loop variable, causal is i >= j", function()
  local k = kernel.lower(tensor.arange(24) * 2, "o")
  assert(tostring(k):find("o[i] = int32(i*2)", 1, true), tostring(k))
  local i, j = tensor.arange(8):reshape({8, 1}), tensor.arange(8):reshape({1, 8})
  local m = kernel.lower(i:ge(j):where(1.0, 0.0), "o")
  assert(tostring(m):find("o[i, j] = where(i >= j, 1.0, 0.0)", 1, true), tostring(m))
end)

finish()

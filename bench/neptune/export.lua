-- bench/neptune/export.lua - the generated attention kernels of Neptune's Table 1 for the GPU: each
-- operator from the one definition (scripts/neptune/attention.lua) and the two templates
-- (scripts/neptune/templates.lua), as Triton, with a manifest that bench/neptune/bench.py reads.
--
--   ./tessel bench/neptune/export.lua [dir [pattern]]     (dir: bench/neptune/out)
--
-- One folder per (operator, mode, shape, template parameters), named like
-- causal_pf_s4096_d128_bm128_bn64_w8_s3: kernel.py (tessel_launch(bufs), the Triton of the
-- scheduled kernel) and case.py (op, mode, sizes, params, buffers in kernel order, tol, flops,
-- bytes). pattern, a Lua pattern, keeps the cases whose names match it. Nothing here is per
-- operator: the grid below names the operator, and the definition and the template do the rest.
local A = require "scripts.neptune.attention"
local T = require "scripts.neptune.templates"

local dir = arg and arg[1] or "bench/neptune/out"
local pattern = arg and arg[2]

-- Table 1, with the sizes of the GPU issue: prefill B = 4, H = 16; decode B = 8, H = 32.
local PF = {
  {op = "global", D = 128}, {op = "global", D = 64}, {op = "causal", D = 128}, {op = "causal", D = 64},
  {op = "alibi", D = 128}, {op = "gqa", D = 128, Hkv = 4}, {op = "softcap", D = 128, Hkv = 4},
  {op = "window", D = 128},
}
local DC = {
  {op = "causal"}, {op = "alibi"}, {op = "gqa", Hkv = 8}, {op = "softcap", Hkv = 8},
}
local WINDOW = 1024

-- the template's parameters tried per case (the GPU side keeps the fastest)
local function pf_params(D)
  if D <= 64 then
    return {{BM = 128, BN = 64, num_warps = 4, num_stages = 3}, {BM = 128, BN = 128, num_warps = 8, num_stages = 3}}
  end
  return {{BM = 128, BN = 64, num_warps = 8, num_stages = 3}, {BM = 128, BN = 128, num_warps = 8, num_stages = 2}}
end
-- decode: few enough partitions for the combine's p v tile (D x partitions)
local function dc_params(S)
  local bn = math.max(64, S // 256)
  return {{BN = bn, num_warps = 4, num_stages = 3}, {BN = bn * 2, num_warps = 8, num_stages = 3}}
end

-- the (row, key) pairs the mask keeps: the useful FLOPs are 4*B*H*D per pair
local function kept(op, Sq, Skv)
  local n = 0
  if op == "global" then return Sq * Skv end
  for r = 0, Sq - 1 do
    local pos = r + Skv - Sq
    local lo = op == "window" and math.max(0, pos - WINDOW + 1) or 0
    n = n + pos - lo + 1
  end
  return n
end

local function buffers(k)
  local out = {}
  for line in k:buffers():gmatch("[^\n]+") do
    local name, role, scope, dtype, shape = line:match("^(%S+)%s+(%S+)%s+(%S+)%s+(%S+)%s+(%b())")
    if name and name ~= "name" then
      local dims = {}
      for d in shape:gmatch("%d+") do dims[#dims + 1] = d end
      out[#out + 1] = string.format("    (%q, %q, %q, %q, [%s]),", name, role, scope, dtype, table.concat(dims, ", "))
    end
  end
  return table.concat(out, "\n")
end

local function pydict(p)
  local keys, out = {}, {}
  for k in pairs(p) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do out[#out + 1] = string.format("%q: %s", k, tostring(p[k])) end
  return "{" .. table.concat(out, ", ") .. "}"
end

local function export(c, mode, S, p)
  local B, H = mode == "pf" and 4 or 8, mode == "pf" and 16 or 32
  local Hkv = c.Hkv or H
  local D = c.D or 128
  local Sq = mode == "pf" and S or 1
  local name = string.format("%s_%s_s%d_d%d_%s", c.op, mode, S, D,
    mode == "pf" and string.format("bm%d_bn%d_w%d_s%d", p.BM, p.BN, p.num_warps, p.num_stages)
                  or string.format("bn%d_w%d_s%d", p.BN, p.num_warps, p.num_stages))
  if pattern and not name:match(pattern) then return end
  local o = A.operator(c.op, mode, {B = B, H = H, Hkv = Hkv, S = S, D = D, window = WINDOW})
  local s = kernel.lower(o, "o"):schedule()
  if mode == "pf" then T.prefill(s, {BM = p.BM, BN = p.BN})
  else T.decode(s, {BN = p.BN}) end   -- G = H // Hkv grouped GQA heads measured slower (docs/gpu-notes.md)
  local src = s:source("triton", {num_warps = p.num_warps, num_stages = p.num_stages})
  local d = dir .. "/" .. name
  os.execute("mkdir -p '" .. d .. "'")
  local f = assert(io.open(d .. "/kernel.py", "w"))
  f:write(src)
  f:close()
  local bytes = 2 * (B * H * Sq * D * 2 + 2 * B * Hkv * S * D)
  f = assert(io.open(d .. "/case.py", "w"))
  f:write("# written by bench/neptune/export.lua: ", c.op, " ", mode, " from scripts/neptune/attention.lua\n")
  f:write(string.format("name = %q\nop = %q\nmode = %q\n", name, c.op, mode))
  f:write(string.format("B, H, Hkv, S_q, S_kv, D = %d, %d, %d, %d, %d, %d\n", B, H, Hkv, Sq, S, D))
  f:write(string.format("window = %d\n", WINDOW))
  f:write("params = ", pydict(p), "\n")
  f:write("buffers = [\n", buffers(s:kernel()), "\n]\n")
  f:write("tol = 2e-2\n")
  f:write(string.format("flops = %d\n", 4 * B * H * D * kept(c.op, Sq, S)))
  f:write(string.format("bytes = %d\n", bytes))
  f:write("trace = ", string.format("%q", s:trace()):gsub("\\\n", "\\n"), "\n")
  f:close()
  io.write(name, "\n")
end

os.execute("mkdir -p '" .. dir .. "'")
for _, S in ipairs{1024, 4096, 16384} do
  for _, c in ipairs(PF) do
    for _, p in ipairs(pf_params(c.D)) do export(c, "pf", S, p) end
  end
end
for _, S in ipairs{8192, 32768, 131072} do
  for _, c in ipairs(DC) do
    for _, p in ipairs(dc_params(S)) do export(c, "dc", S, p) end
  end
end

-- scripts/neptune/templates.lua - the schedule templates for attention (the role of Neptune's
-- Figure 9): any program of scripts/neptune/attention.lua to a FlashAttention-shaped kernel
-- (prefill) or a FlashDecoding-shaped one (decode). No step names an operator: masks, biases,
-- soft caps and GQA heads come through the definition, and the steps derive what they need.
--
--   local T = require "scripts.neptune.templates"
--   local s = T.prefill(kernel.lower(o, "o"):schedule(), {BM = 64, BN = 64})
--
-- Stages (attention.lua names them): score = q k^T, s_max, s_sum, pv = p v, o = pv / s_sum.
-- A template that does not fit (another program, tile sizes that do not divide the lengths)
-- is refused before any step, or its steps are undone: the schedule is as it was.
local T = {}

-- the extents of the score stage's loops: batch, heads, queries, keys
local function sizes(s, name)
  local k = s:kernel()
  for _, st in ipairs{"score", "s_max", "s_sum", "pv", "o"} do
    if not k:buffers():find("\n" .. st .. " ", 1, true) and not k:buffers():find("^" .. st .. " ") then
      error(string.format("%s template: the program has no stage %s (it takes attention.lua's "
        .. "programs: score, s_max, s_sum, pv, o)", name, st), 3)
    end
  end
  local shape = k:buffers():match("\nscore%s+%S+%s+%S+%s+%S+%s+(%b())")
  local d = {}
  for x in shape:gmatch("%d+") do d[#d + 1] = tonumber(x) end
  return d
end

-- the steps of f applied to s, or none of them (undone) and the error raised with the template's name
local function atomic(s, name, f)
  local n = select(2, s:trace():gsub("\n", "\n"))
  local ok, err = pcall(f)
  if not ok then
    while select(2, s:trace():gsub("\n", "\n")) > n do s:undo() end
    error(string.format("%s template: %s", name, tostring(err)), 3)
  end
  return s
end

-- FlashAttention: one program per (batch, head, tile of BM queries); a loop over tiles of BN
-- keys carries the running max, sum and output in registers (rolling update at tile
-- granularity); the scores of a tile are computed under the key loop (no S_q x S_kv buffer);
-- key tiles every mask leaves out are skipped.
function T.prefill(s, p)
  local BM, BN = p.BM or 64, p.BN or 64
  local z = sizes(s, "prefill")
  if z[3] % BM ~= 0 or z[4] % BN ~= 0 then
    error(string.format("prefill template: BM = %d and BN = %d must divide the %d queries and %d keys "
      .. "(a tail would need a guarded rolling update, which is not built yet)", BM, BN, z[3], z[4]), 2)
  end
  return atomic(s, "prefill", function()
    local b, h, qi, kj = table.unpack(s:get_loops("s_max"))
    local k0 = kj .. "0"
    s:split("s_max", kj, {nil, BN})
    s:rolling_update("s_sum", "s_max." .. k0)       -- h = t * exp(m' - m), once per key tile
    s:rolling_update("pv", "s_max." .. k0, {relax_casts = true})   -- p is rounded to float16
    s:split("s_max", qi, {nil, BM})
    s:reverse_compute_at("o", "s_max", qi .. "0")   -- normalize at the end of the query tile
    local _, made = s:fission("s_max", qi .. "1")   -- the rows of the tile, statement by statement
    s:reorder("s_max", {k0, made[#made]})           -- ... inside the loop over key tiles
    s:set_scope("score", "local")
    s:compute_at("score", "s_max", k0)              -- the scores of one (query, key) tile
    s:cache_read("s_max", "q", "local")             -- the query tile, loaded once per program
    s:compute_at("q_local", "s_max", qi .. "0")
    s:fission("s_max", k0, {deep = true})           -- every statement its own tile
    for _, buf in ipairs{"s_max", "s_sum", "pv", "s_max_prev"} do s:set_scope(buf, "local") end
    s:bind("s_max", b, "blockIdx.z")
    s:bind("s_max", h, "blockIdx.y")
    s:bind("s_max", qi .. "0", "blockIdx.x")
    local ok, err = pcall(s.skip_masked, s, "s_max", k0)   -- key tiles the masks leave out
    if not ok and not tostring(err):find("has no mask", 1, true) then error(err, 0) end
  end)
end

-- FlashDecoding: the keys in partitions of BN, one program per (batch, head, partition) computing
-- the partition's max, sum and p v (split-k update: the locals in parallel, Eq. 8 repairs them in
-- the combine); the combine runs per (batch, head) over all the partitions at once (its p v tile
-- is D x S_kv/BN: keep the partitions few). p.G > 1 (GQA: H / Hkv) puts the G query heads that
-- share a KV head in one program.
function T.decode(s, p)
  local BN = p.BN or 64
  local z = sizes(s, "decode")
  if z[4] % BN ~= 0 then
    error(string.format("decode template: BN = %d must divide the %d keys", BN, z[4]), 2)
  end
  return atomic(s, "decode", function()
    local b, h, qi, kj = table.unpack(s:get_loops("s_max"))
    local k0 = kj .. "0"
    s:split("s_max", kj, {nil, BN})
    s:split_k_update("s_sum", "s_max." .. k0)       -- s_max and s_sum privatized on the partitions
    s:split_k_update("pv", "s_max_local." .. k0, {relax_casts = true})
    if (p.G or 1) > 1 then                           -- GQA: the G query heads of a KV head in one
      s:split("s_max_local", h, {nil, p.G})         -- program, so each K and V tile is read once
      s:reorder("s_max_local", {qi, k0, h .. "1"})
      h = h .. "0"
    end
    s:set_scope("score", "local")
    s:compute_at("score", "s_max_local", k0)        -- one partition's scores, in registers
    s:fission("s_max_local", k0, {deep = true})
    s:bind("s_max_local", b, "blockIdx.z")
    s:bind("s_max_local", h, "blockIdx.y")
    s:fuse("s_max_local", qi, k0)                   -- the query rows (one) and the partitions
    s:bind("s_max_local", qi .. "_" .. k0 .. "_fused", "blockIdx.x")
    h = (p.G or 1) > 1 and h:sub(1, -2) or h
    -- the combine (Eq. 8) in one program per (batch, head): the global max, then p v and the sum
    -- repaired by it, and the division
    for _, st in ipairs{"pv", "s_sum", "o"} do s:reverse_compute_at(st, "s_max", qi) end
    for _, buf in ipairs{"s_max", "pv", "s_sum"} do s:set_scope(buf, "local") end
    s:bind("s_max", b, "blockIdx.z")
    s:bind("s_max", h, "blockIdx.y")
    s:bind("s_max", qi, "blockIdx.x")
    s:fission("s_max", qi, {deep = true})           -- inside the bound loop: each statement a tile
  end)
end

return T

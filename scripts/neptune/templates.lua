-- scripts/neptune/templates.lua - the schedule templates for attention (the role of Neptune's
-- Figure 9): any program of scripts/neptune/attention.lua to a FlashAttention-shaped kernel.
--
--   local T = require "scripts.neptune.templates"
--   local s = T.prefill(kernel.lower(o, "o"):schedule(), {BM = 64, BN = 64})
--
-- Stages (attention.lua names them): score = q k^T, s_max, s_sum, pv = p v, o = pv / s_sum.
local T = {}

-- FlashAttention: one program per (batch, head, tile of BM queries); a loop over tiles of BN
-- keys carries the running max, sum and output in registers (rolling update at tile
-- granularity); the scores of a tile are computed under the key loop (no S_q x S_kv buffer).
function T.prefill(s, p)
  local BM, BN = p.BM or 64, p.BN or 64
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
  if p.skip ~= false and s:kernel():tile_ir():find("-inf)", 1, true) then
    s:skip_masked("s_max", k0)                    -- key tiles the mask leaves out are not visited
  end
  return s
end

-- FlashDecoding: the keys in partitions of BN, one program per (batch, head, partition) computing
-- the partition's max, sum and p v (split-k update: the locals in parallel, Eq. 8 repairs them in
-- the combine); the combine runs per (batch, head) over all the partitions at once (its p v tile
-- is D x S_kv/BN: keep the partitions few).
function T.decode(s, p)
  local BN = p.BN or 64
  local b, h, qi, kj = table.unpack(s:get_loops("s_max"))
  local k0 = kj .. "0"
  s:split("s_max", kj, {nil, BN})
  s:split_k_update("s_sum", "s_max." .. k0)       -- s_max and s_sum privatized on the partitions
  s:split_k_update("pv", "s_max_local." .. k0, {relax_casts = true})
  s:set_scope("score", "local")
  s:compute_at("score", "s_max_local", k0)        -- one partition's scores, in registers
  s:fission("s_max_local", k0, {deep = true})
  s:bind("s_max_local", b, "blockIdx.z")
  s:bind("s_max_local", h, "blockIdx.y")
  s:fuse("s_max_local", qi, k0)                   -- the one query row and the partitions
  s:bind("s_max_local", qi .. "_" .. k0 .. "_fused", "blockIdx.x")
  -- the combine (Eq. 8) in one program per (batch, head): the global max, then p v and the sum
  -- repaired by it, and the division
  for _, st in ipairs{"pv", "s_sum", "o"} do s:reverse_compute_at(st, "s_max", qi) end
  for _, buf in ipairs{"s_max", "pv", "s_sum"} do s:set_scope(buf, "local") end
  s:bind("s_max", b, "blockIdx.z")
  s:bind("s_max", h, "blockIdx.y")
  s:bind("s_max", qi, "blockIdx.x")
  s:fission("s_max", qi, {deep = true})           -- inside the bound loop: each statement a tile
  return s
end

return T

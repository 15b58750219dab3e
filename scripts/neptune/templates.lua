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
  s:rolling_update("pv", "s_max." .. k0)
  s:split("s_max", qi, {nil, BM})
  s:reverse_compute_at("o", "s_max", qi .. "0")   -- normalize at the end of the query tile
  local _, made = s:fission("s_max", qi .. "1")   -- the rows of the tile, statement by statement
  s:reorder("s_max", {k0, made[#made]})           -- ... inside the loop over key tiles
  s:set_scope("score", "local")
  s:compute_at("score", "s_max", k0)              -- the scores of one (query, key) tile
  s:fission("s_max", k0, {deep = true})           -- every statement its own tile
  for _, buf in ipairs{"s_max", "s_sum", "pv", "s_max_prev"} do s:set_scope(buf, "local") end
  s:bind("s_max", b, "blockIdx.z")
  s:bind("s_max", h, "blockIdx.y")
  s:bind("s_max", qi .. "0", "blockIdx.x")
  return s
end

return T

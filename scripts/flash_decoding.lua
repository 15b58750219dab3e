-- flash_decoding.lua - FlashDecoding by Neptune's split-k update (Algorithm 2), one query row.
--   ./tessel scripts/flash_decoding.lua
-- Decoding attends one query to a long cache of keys. Rolling the softmax along the keys
-- (scripts/attention.lua) would leave one serial loop; split-k instead cuts the keys into
-- slices: a local section reduces every slice independently (max, sum and output per slice),
-- a global section combines the slices, repairing each slice's sum and output from its local
-- max to the global one (Eq. 8).
local skv, d = 256, 32
local split = 64 -- keys per slice: skv / split slices run independently

local q = tensor.param("q", {1, d})
local k = tensor.param("k", {skv, d})
local v = tensor.param("v", {skv, d})
local scores = q:matmul(k:permute(1, 0)) * (1 / math.sqrt(d))
local out = scores:softmax(1):matmul(v)

-- stages: xmatmul (the scores), xmax (the max), xsum (the softmax sum), o (the output)
local plain = kernel.lower(out, "o")
print("== plain attention for one query, as lowered")
print(plain)

local s = plain:schedule()
s:split("xmax", "j", {nil, split})       -- j = j0 * split + j1: j0 picks the slice
s:split_k_update("xsum", "xmax.j0")    -- the max and the sum privatized per slice
s:split_k_update("o", "xmax_local.j0")   -- the output's local fused into the same slice loop
print("== split-k: a local section per slice, then the global combination")
print(s)
print("== the derivations (Eq. 4 and 5 proved, the repair applied in the global nest, Eq. 8)")
print(s:explain())
assert(s:verify{trials = 2})

-- The structure: which stage is local (one iteration per slice, independent of the others)
-- and which is global (reduces over the slices).
local slices = (skv + split - 1) // split
print(string.format("== structure: %d slices of %d keys", slices, split))
for _, st in ipairs(s:kernel():stages()) do
  local loops = table.concat(s:get_loops(st), " ")
  local role = st == "xmatmul" and "scores (unfused)"
    or st:find("_local$") and "local: max, sum and output of each slice"
    or "global: combines the " .. slices .. " slices"
  print(string.format("  %-11s loops %-22s %s", st, loops, role))
end
-- (Binding the local section's j0 to blockIdx.x is refused for a single query row for now:
-- the fused reads name the row as 0 and the writes as i, and the dependence check sees two
-- different elements.)

local base, fused = plain:counts(), s:counts()
print("== counts")
print(string.format("%-28s %15s %8s %10s %8s", "", "global_sectors", "ratio", "ops", "ratio"))
local function row(name, c)
  print(string.format("%-28s %15d %8.2f %10d %8.2f", name, c.global_sectors,
    c.global_sectors / base.global_sectors, c.ops, c.ops / base.ops))
end
row("plain (4 stages)", base)
row("split-k, " .. slices .. " slices", fused)
-- Split-k keeps the traffic (the locals are small: one max, sum and output row per slice)
-- and pays the repair in ops; what it buys is parallelism over the slices.

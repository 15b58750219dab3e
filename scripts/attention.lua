-- attention.lua - FlashAttention by Neptune's rolling update (Algorithm 1), prefill.
--   ./tessel scripts/attention.lua
-- Plain attention lowers to four stages: the scores, their row max, the softmax sum and the
-- output, three passes over the keys. rolling_update fuses the sum and then the output into
-- the max's loop, repairing what was accumulated against an older max (exp(m_prev - m)).
local sq, skv, d = 64, 64, 32

local q = tensor.param("q", {sq, d})
local k = tensor.param("k", {skv, d})
local v = tensor.param("v", {skv, d})
local scores = q:matmul(k:permute(1, 0)) * (1 / math.sqrt(d))
local out = scores:softmax(1):matmul(v)

-- the lowering names the stages: xmatmul (the scores q k^T), xmax (the row max), xsum (the
-- softmax sum) and o (the output)
local plain = kernel.lower(out, "o")
print("== plain attention, as lowered")
print(plain)

local s = plain:schedule()
s:rolling_update("xsum", "xmax.j") -- the sum rolled under the max's loop over the keys
s:rolling_update("o", "j")           -- the output too: one pass over the keys
print("== fused: the sum and the output rolled into the max's loop")
print(s)
print("== the derivations (Theorem 4.3 / separation, Eq. 4 and 5 proved)")
print(s:explain())
assert(s:verify{trials = 2})

-- After fusion the running max and sum (and their previous values) live in one stage, so
-- they can sit in registers; unfused, they pass between stages through global memory.
local fused = s:counts()
for _, b in ipairs{"xmax", "xmax_prev", "xsum", "xsum_prev"} do s:set_scope(b, "local") end
assert(s:verify{trials = 2})
local regs = s:counts()
local base = plain:counts()

print("== counts (the score matrix xmatmul is materialized in every version)")
print(string.format("%-30s %15s %8s %12s %8s", "", "global_sectors", "ratio", "ops", "ratio"))
local function row(name, c)
  print(string.format("%-30s %15d %8.2f %12d %8.2f", name, c.global_sectors,
    c.global_sectors / base.global_sectors, c.ops, c.ops / base.ops))
end
row("plain (4 stages)", base)
row("rolled (2 stages, all global)", fused)
row("rolled, row state in registers", regs)
-- The rolled kernel alone reads more (the repair reads the previous max and sum at every
-- key), and its ops grow by the repair's cost; with the row state in registers the global
-- traffic drops below the plain kernel's.

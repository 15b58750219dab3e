-- scripts/generated_attention.lua - Neptune's path, end to end: one definition of attention,
-- one schedule template, the Triton of a FlashAttention-shaped kernel (docs/neptune.md).
--   ./tessel scripts/generated_attention.lua [operator] [mode]
-- operator: global, causal, alibi, gqa, softcap, window; mode: pf (prefill) or dc (decode).
local A = require "scripts.neptune.attention"
local T = require "scripts.neptune.templates"
local op, mode = arg and arg[1] or "causal", arg and arg[2] or "pf"

local sizes = {B = 1, H = 4, Hkv = (op == "gqa" or op == "softcap") and 2 or nil, S = 64, D = 16, window = 24}
local o = A.operator(op, mode, sizes)
local s = kernel.lower(o, "o"):schedule()
if mode == "pf" then T.prefill(s, {BM = 16, BN = 16}) else T.decode(s, {BN = 16}) end

print("-- the schedule (" .. op .. ", " .. mode .. "):")
print(s:trace())
print("-- checked against the tensor program:")
print(s:verify{trials = 2})
print("-- the loop nest as tiles:")
print(s:tile_ir())
print("-- the repairs the fusion derived:")
for line in s:explain():gmatch("[^\n]+") do
  if line:match("h%(t, r, r'%)") or line:match("runs only if") then print(line) end
end
print("-- Triton (" .. #s:source("triton") .. " characters; s:source(\"triton\") prints it)")

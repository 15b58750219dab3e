-- uop_bench.lua - index expressions of typical layouts: operation counts before and after
-- simplification, and the time simplification takes (./tessel bench/uop_bench.lua).
local rows = {}

local function time(f, n)
  local t0 = os.clock()
  for _ = 1, n do f() end
  return (os.clock() - t0) / n * 1e6
end

local function bench(name, raw)
  local s = raw:simplify()
  local ok = uop.equivalent(raw, s)
  assert(ok, name .. ": the simplified expression differs")
  rows[#rows + 1] = {name, raw:ops(), s:ops(), time(function() raw:simplify() end, 200), tostring(s)}
end

local function layout(name, L, opts)
  opts = opts or {}
  local o = {raw = true, modes = opts.modes}
  bench(name, L:expr(o))
end

layout("((2,4),(3,8)):((24,1),(8,2)) at i", cute.layout("((2,4),(3,8)):((24,1),(8,2))"))
layout("((2,4),(3,8)):((24,1),(8,2)) per mode", cute.layout("((2,4),(3,8)):((24,1),(8,2))"), {modes = true})
layout("(8,4):(1,8) at i", cute.layout("(8,4):(1,8)"))
layout("(16,8):(8,1) at i", cute.layout("(16,8):(8,1)"))
layout("zipped_divide((16,8):(8,1), (4,2)) at i", cute.zipped_divide("(16,8):(8,1)", "(4,2)"))
layout("tiled_divide((64,32):(32,1), (8,4)) per mode", cute.tiled_divide("(64,32):(32,1)", "(8,4)"), {modes = true})
layout("raked_product((2,3):(3,1), (4,2):(1,4)) at i", cute.raked_product("(2,3):(3,1)", "(4,2):(1,4)"))
layout("Sw<3,4,3> o (8,64):(64,1) at i", cute.composition(cute.swizzle(3, 4, 3), "(8,64):(64,1)"))
layout("Sw<3,4,3> o (8,64):(64,1) per mode", cute.composition(cute.swizzle(3, 4, 3), "(8,64):(64,1)"), {modes = true})
layout("Sw<3,3,3> o ((8,2),(8,4)):((64,8),(1,512)) at i",
       cute.composed("Sw<3,3,3> o 0 o ((8,2),(8,4)):((64,8),(1,512))"))

-- Triton's grouped program-id ordering (matmul tutorial), 16 x 16 blocks, GROUP_M = 8
local pid = uop.var("pid", 0, 255)
local GM, npm, npn = 8, 16, 16
local first = pid // (GM * npn) * GM
local gsz = uop.min(npm - first, GM)
bench("Triton grouped pid_m (16x16, G=8)", first + (pid % (GM * npn)) % gsz)
bench("Triton grouped pid_n (16x16, G=8)", (pid % (GM * npn)) // gsz)

print(("%-48s %6s %6s %10s   %s"):format("expression", "raw", "simpl", "time (us)", "simplified"))
for _, r in ipairs(rows) do
  print(("%-48s %6d %6d %10.1f   %s"):format(r[1], r[2], r[3], r[4], r[5]))
end

-- viz_bench.lua - time of Graphviz pictures: DOT text, SVG and PNG through tessel's Graphviz context,
-- against the dot program on the same DOT text in the same run (its time includes its start-up).
-- Usage: tessel bench/viz_bench.lua [REPEATS]   (the best of REPEATS runs is reported, default 3)
local repeats = tonumber(arg and arg[1]) or 3

-- wall-clock milliseconds (os.clock counts CPU time of every thread, pango's included)
local function now_ms()
  local p = assert(io.popen("date +%s%N"))
  local ns = tonumber(p:read("l"))
  p:close()
  return ns / 1e6
end

local function best(f)
  local t = math.huge
  for _ = 1, repeats do
    local t0 = now_ms()
    f()
    t = math.min(t, now_ms() - t0)
  end
  return t
end

local tmp = os.tmpname()
local function dot_cli(text, fmt)
  local f = assert(io.open(tmp, "w"))
  f:write(text)
  f:close()
  local t = math.huge
  for _ = 1, repeats do
    local p = assert(io.popen(("s=$(date +%%s%%N); dot -T%s '%s' -o /dev/null; e=$(date +%%s%%N); echo $(( (e - s) / 1000 ))")
                              :format(fmt, tmp)))
    t = math.min(t, tonumber(p:read("l")) / 1000)
    p:close()
  end
  return t
end

local cases = {
  { "layout 32x32", cute.layout({ 32, 32 }), 1024 },
  { "layout 128x128", cute.layout({ 128, 128 }), 16384 },
  { "layout 256x256", cute.layout({ 256, 256 }), 65536 },
  { "swizzled 8x64 f16", cute.composition(cute.swizzle(3, 4, 3), "(8,64):(64,1)"), 512, { dtype = "f16" } },
  { "MMA SM80 16x8x16", cute.mma_atom("SM80_16x8x16_F32F16F16F32_TN"), 512 },
  { "TV 64x8, warps", cute.tv(cute.mma_atom("SM90_64x8x16_F32F16F16_SS").c, 64, 8), 512, { scheme = "warp" } },
}

viz.render(cute.layout("2:1"), "svg")   -- open the session's Graphviz context outside the timings
print(("%-20s %7s %9s %9s %11s %9s %11s"):format("case", "cells", "dot text", "svg", "dot -Tsvg", "png",
                                                  "svg bytes"))
local worst128
for _, c in ipairs(cases) do
  local name, x, cells, opts = c[1], c[2], c[3], c[4] or {}
  local text, svg
  local t_dot = best(function() text = viz.dot(x, opts) end)
  local t_svg = best(function() svg = assert(viz.render(x, "svg", opts)) end)
  local t_cli = dot_cli(text, "svg")
  local t_png = cells <= 16384 and best(function() assert(viz.render(x, "png", opts)) end) or nil
  print(("%-20s %7d %7.1f ms %6.1f ms %8.1f ms %9s %11d"):format(name, cells, t_dot, t_svg, t_cli,
        t_png and ("%6.1f ms"):format(t_png) or "-", #svg))
  if name == "layout 128x128" then worst128 = t_svg end
end
os.remove(tmp)
print(("128x128 layout to SVG: %.0f ms (the goal is under 1000 ms)"):format(worst128))
if worst128 >= 1000 then error("rendering a 128x128 layout to SVG took a second or more") end

-- test_axe.lua - every binding of the `axe` table, with values and error messages.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

-- a coordinate table as "lane=12 warp=6" in a fixed axis order
local function ct(c)
  local ks = {}
  for k in pairs(c) do ks[#ks + 1] = k end
  table.sort(ks)
  local out = {}
  for _, k in ipairs(ks) do out[#out + 1] = k .. "=" .. c[k] end
  return table.concat(out, " ")
end

local TC = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp"

check("notation round trip", function()
  local L = axe.layout(TC)
  eq(L, TC)
  eq(axe.layout(tostring(L)), TC)
  eq(axe.layout("S[4, 8]"), "S[(4,8):(8,1)]")
  eq(axe.layout("S[8:4@laneid] + 3 + 2"), "S[8:4@laneid] + 5")
  raises(function() axe.layout("S[2:0]") end, "axe.layout", "stride 0")
  raises(function() axe.layout("R[2:1]") end, "no S[...]")
  raises(function() axe.layout("S[(2,2):(1)]") end, "differ in number")
end)

check("tensor-core tile of Section 2.2", function()
  local L = axe.layout(TC, {8, 16})
  local cs = L(3, 9)
  eq(#cs, 2)
  eq(ct(cs[1]), "lane=12 reg=1 warp=6")
  eq(ct(cs[2]), "lane=12 reg=1 warp=10")
  eq(ct(L:apply(3 * 16 + 9)[1]), "lane=12 reg=1 warp=6")
  eq(#L, 128)
  for w = 0, 15 do
    local n = #L:find{warp = w}
    eq(n, (w == 5 or w == 6 or w == 9 or w == 10) and 64 or 0, "elements of warp " .. w)
  end
  local held = L:find{warp = 6, lane = 12}
  eq(#held, 2)
  eq(held[1][1] .. "," .. held[1][2], "3,8")
  eq(L:span("warp"), 6)
  local spans, total = L:span()
  eq(spans.lane, 32)
  eq(total, 6 * 32 * 2)
  eq(axe.kind("warp"), "thread")
  eq(axe.kind("gpuid"), "device")
  eq(axe.kind("P"), "memory")
  eq(axe.kind("banana"), "other")
end)

check("make, iter, parts", function()
  local L = axe.make{D = {axe.iter(8, 4, "lane"), {2, 1, "warp"}, {4, 1, "lane"}, {2, 1, "reg"}},
                     R = "2:4@warp", O = {warp = 5}, shape = {8, 16}}
  eq(L, TC)
  eq(tostring(axe.iter(8, 4, "lane")), "8:4@lane")
  local p = L:parts()
  eq(#p.D, 4); eq(p.D[1].axis, "lane"); eq(p.R[1].stride, 4); eq(p.O.warp, 5)
  raises(function() axe.make{D = {{2, 0, "m"}}} end, "axe.make", "stride 0")
  raises(function() axe.make{D = 5} end, "axe.make")
  raises(function() axe.iter(0, 1) end, "extent 0")
end)

check("canonicalize and equivalent", function()
  local c, gc = axe.canonicalize("S[(1,4,2,3):(7@warp,2,1,5@lane)] + R[(1,2,3,2):(9,-3@lane,1@lane,2@lane)]")
  eq(c, "S[(8,3):(1,5@lane)] + R[8:1@lane] + -3@lane")
  eq(gc, true)
  eq(axe.equivalent("S[(2,4):(4,1)]", "S[8:1]"), true)
  local same, where = axe.equivalent(axe.layout("S[(2,4):(4,1)]", {2, 4}), "S[(2,4):(1,2)]")
  eq(same, false)
  eq(where[1] .. "," .. where[2], "0,1")
  eq(axe.layout("S[(2,4):(4,1)]") == axe.layout("S[8:1]"), true)
end)

check("group, tile, tile_of, slice, direct_sum", function()
  local g, seps = axe.group("S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)]", {4, 4, 8})
  eq(g, "S[(4,2,2,4,2):(8@lane,4@lane,1@warp,1@lane,1@reg)]")
  eq(table.concat(seps, ","), "0,1,3,5")
  raises(function() axe.group("S[(2,6):(1@lane,1)]", {3, 4}) end, "group", "mode 0")
  local inner = axe.layout("S[(4,4):(4,1)]", {4, 4})
  local grid = axe.layout("S[(2,2):(2,1)]", {2, 2})
  local T = axe.tile(grid, inner)
  eq(T, "S[(2,4,2,4):(32,4,16,1)]")
  eq(table.concat(T:shape(), ","), "8,8")
  eq(T:tile_of(inner), "S[(2,2):(2,1)]")
  raises(function() axe.tile_of(axe.layout("S[(4,4):(4,1)]", {4, 4}), axe.layout("S[(2,2):(4,1)]", {2, 2})) end,
         "tile_of", "not a tile")
  local S = axe.slice(axe.layout("S[(4,8):(8@lane,1)]", {4, 8}), {{1, 3}, {2, 6}})
  eq(S, "S[(2,4):(8@lane,1)] + 8@lane + 2")
  eq(axe.slice("S[(4,4):(16,1)]", {16}, {{2, 6}}), "S[(2,2):(14,1)] + 2")
  raises(function() axe.slice("S[(4,4):(16,1)]", {16}, {{1, 5}}) end, "slice", "one-wrap")
  -- Appendix F: the direct sum of quadrant origins and a 2x2 block is the contiguous 4x4
  local ds = axe.direct_sum("S[(2,2):(8,2)]", {2, 2}, "S[(2,2):(4,1)]", {2, 2})
  eq(ds, "S[(2,2,2,2):(8,4,2,1)]")
  eq(ds:canonicalize(), "S[16:1]")
  raises(function() axe.tile_of("S[(4,4):(4,1)]", {4, 4}, "S[(2,2):(4,1)]", {2, 2}) end, "tile_of")
end)

check("CuTe, TV and MMA conversions", function()
  local A = axe.from_cute(cute.layout("((2,2),4):((1,4),2)"))
  eq(A, "S[(2,2,4):(4,1,2)]")
  eq(table.concat(A:shape(), ","), "4,4")
  local C = cute.layout("((2,2),4):((1,4),2)")
  for i = 0, 3 do for j = 0, 3 do eq(A(i, j)[1].m or 0, C(i, j)) end end
  eq(axe.to_cute(A), "((2,2),4):((1,4),2)")
  raises(function() axe.to_cute("S[4:1@lane]") end, "to_cute", "lane")
  raises(function() axe.from_cute("(4,2):(0,1)") end, "stride 0")
  eq(axe.from_mma("SM80_16x8x16_F32F16F16F32_TN", "c"), "S[(2,32,2):(2@reg,1@lane,1@reg)]")
  local W = axe.from_mma("SM80_16x8x16_F32F16F16F32_TN", "c", "warp")
  eq(ct(W(9, 3)[1]), "lane=5 reg=3")   -- one warp: warp is 0 and drops out
  local mn, tv = cute.make_layout_tv(cute.layout({4, 8}, {8, 1}), cute.layout({4, 1}))
  local T = axe.from_tv(tv, 16, 8)
  eq(#T, 128)
end)

check("distributed tensors on a 2x2 mesh", function()
  local mesh = {{"gpuid", 2}, {"gpuid", 2}}
  local S0S1 = axe.dtensor({64, 128}, mesh, {"S(0)", "S(1)"})
  eq(S0S1, "S[(2,32,2,64):(2@gpuid,64,1@gpuid,1)]")
  eq(ct(S0S1(40, 100)[1]), "gpuid=3 m=548")
  local S0R = axe.dtensor({64, 128}, mesh, {"S(0)", "R"})
  eq(S0R, "S[(2,32,128):(2@gpuid,128,1)] + R[2:1@gpuid]")
  eq(#S0R(40, 100), 2)
  eq(table.concat(S0R:to_dtensor(mesh), ","), "S(0),R")
  eq(table.concat(axe.to_dtensor(S0S1, mesh), ","), "S(0),S(1)")
  raises(function() axe.dtensor({63, 128}, mesh, {"S(0)", "R"}) end, "does not split evenly")
  raises(function() axe.dtensor({64, 128}, mesh, {"S(5)", "R"}) end, "dtensor")
  -- placements are read whole: sscanf took a prefix and (int) wrapped 2^32-1 to -1, Replicate
  eq(axe.dtensor({64, 128}, mesh, {"Shard(0)", "Replicate"}), S0R)
  eq(axe.dtensor({64, 128}, mesh, {0, -1}), S0R)
  for _, p in ipairs{"S(0)x", "S(0", "S()", "S-1", "Shard(99999999999)", "S(0) ", " R", "RR"} do
    raises(function() axe.dtensor({64, 128}, mesh, {p, "R"}) end, "is not \"S(dim)\"")
  end
  raises(function() axe.dtensor({64, 128}, mesh, {4294967295, 0}) end, "not a tensor dimension")
  raises(function() axe.dtensor({64, 128}, mesh, {-2, 0}) end, "not a tensor dimension")
end)

check("vector width", function()
  eq(axe.vector_width("S[(8,16):(64,1)]", "S[(8,4,4):(4@lane,1@lane,1@reg)]"), 4)
  eq(axe.vector_width(nil, "S[(8,16):(4@lane,1@reg)]", 16), 16)
end)

check("scopes, subsets, TMA", function()
  local P = axe.warps(0, 4)
  eq(P:holds{warp = 3, lane = 31}, true)
  eq(P:holds{warp = 4}, false)
  eq(#P:members(), 128)
  eq(axe.scope("warpgroup"), "S[(4,32):(1@warp,1@lane)]")
  raises(function() axe.scope("galaxy") end, "axe.scope")
  local t = axe.tma("S[(256,512):(512,1)]", {256, 512}, "S[(64,64):(64,1)]", {64, 64}, 2, 128)
  eq(table.concat(t.global_dim, ","), "512,256")
  eq(table.concat(t.global_stride, ","), "1024")
  eq(table.concat(t.box_dim, ","), "64,8")
  eq(t.outer, "S[8:1]")
  raises(function() axe.tma("S[(256,512):(512,1)]", {256, 512}, "S[(64,64):(1,64)]", {64, 64}) end,
         "tma", "no tile of the 128-byte swizzle atom")
end)

check("Trainium matmul dispatch", function()
  local r = axe.trn_matmul("S[(2,128,256):(256@F,1@P,1@F)]", "S[(2,128,512):(512@F,1@P,1@F)]",
                           "S[(2,128,512):(512@F,1@P,1@F)]", 256, 256, 512)
  eq(r.m .. "x" .. r.n .. "x" .. r.k, "128x512x128")
  eq(table.concat(r.k_loops, ","), "2")
  raises(function() axe.trn_matmul("S[(128,64):(64@F,1@P)]", "S[(128,64):(1@P,1@F)]", "S[(64,64):(1@P,1@F)]", 128, 64, 64) end,
         "no legal instruction")
end)

check("show", function()
  local L = axe.layout(TC, {8, 16})
  local s = viz.text(L, {color = false})
  assert(s:find("cells: lane / warp of replica 0; colour: lane", 1, true), s)
  assert(s:find("replicas: every element is also held at +4@warp", 1, true), s)
  s = viz.text(L, {color = false, axis = "warp", max_cols = 4})
  assert(s:find("colour: warp", 1, true))
  assert(s:find("elided", 1, true))
  local D = axe.dtensor({8, 8}, {{"gpuid", 2}, {"gpuid", 2}}, {"S(0)", "R"})
  s = viz.text(D, {color = false})
  assert(s:find("gpuid=2 holds 32 elements in rows 4-7, columns 0-7", 1, true), s)
  raises(function() viz.text(L, {axis = "nope"}) end, "no axis nope")
end)

check("help texts", function()
  for k, v in pairs(axe) do
    if type(v) == "function" then assert(help, "help"); end
  end
end)

check("expr: one expression per axis, against apply", function()
  local L = axe.layout("S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp")
  local e, reps = L:expr()
  eq(e.lane, "x//16*4 + x//2%4"); eq(e.warp, "x//8%2 + 5"); eq(e.reg, "x%2")
  eq(#reps, 2); eq(reps[1].warp, 0); eq(reps[2].warp, 4); eq(reps[2].lane, 0)
  local ev, rv = L:expr{replicas = true}
  eq(ev.warp, "r0*4 + x//8%2 + 5"); eq(rv[1], "r0")
  for x = 0, L:size() - 1 do
    local cs = axe.apply(L, x)
    for j, c in ipairs(cs) do
      for ax, v in pairs(c) do
        eq(e[ax]:eval{x = x} + reps[j][ax], v, ax .. " of " .. x)
        eq(ev[ax]:eval{x = x, r0 = j - 1}, v, ax .. " of " .. x .. " (replica variables)")
      end
    end
  end
  local S = axe.with_shape(axe.layout("S[(4,8):(1@lane,4@lane)]"), {4, 8})
  eq(S:expr().lane, "i0 + i1*4")
  eq(axe.expr("S[(4,8):(1@lane,4@lane)]", {name = "t"}).lane, "t//8 + t%8*4")
  raises(function() S:expr{shape = {3, 3}} end, "shape of 9 elements")
  raises(function() S:expr{name = "1x"} end, "not a variable name")
end)

finish()

-- axe_tour.lua - Axe layouts from the paper, step by step: named axes, replicas, offsets and the operators.
local function title(s)
  print()
  print(("== %s "):format(s) .. ("="):rep(math.max(0, 72 - #s)))
end

local function say(code)
  local f = assert(load("return " .. code))
  local results = table.pack(f())
  local out = {}
  for i = 1, results.n do out[i] = tostring(results[i]) end
  print(("> %s\n%s"):format(code, table.concat(out, "\t")))
end

local function coords(cs)
  local out = {}
  for _, c in ipairs(cs) do
    local ks = {}
    for k in pairs(c) do ks[#ks + 1] = k end
    table.sort(ks)
    local parts = {}
    for _, k in ipairs(ks) do parts[#parts + 1] = k .. "=" .. c[k] end
    out[#out + 1] = "{" .. table.concat(parts, ", ") .. "}"
  end
  return table.concat(out, " ")
end

title("A tensor-core tile over two warps (Section 2.2)")
TC = axe.layout("S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp", {8, 16})
say("TC")
print("element (3, 9) -> " .. coords(TC(3, 9)))
local warps = {}
for w = 0, 15 do if #TC:find{warp = w} > 0 then warps[#warps + 1] = w end end
print("warps holding the tile: " .. table.concat(warps, ", "))
say("TC:span('warp'), TC:span('lane'), TC:span('reg')")
show(TC, {labels = {"warp", "lane", "reg"}, axis = "warp", max_cols = 8})

title("Canonical forms and equivalence (Appendix A)")
say('axe.canonicalize("S[(1,4,2,3):(7@warp,2,1,5@lane)] + R[(2,3,2):(-3@lane,1@lane,2@lane)]")')
say('axe.equivalent("S[(2,4):(4,1)]", "S[8:1]")')

title("Grouping, tiling and recovering the tile (Appendices B, C, D)")
G, seps = axe.group("S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)]", {4, 4, 8})
print("> axe.group(\"S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)]\", {4, 4, 8})")
print(tostring(G) .. "   blocks start at iters " .. table.concat(seps, ", "))
inner = axe.layout("S[(4,4):(4,1)]", {4, 4})
grid = axe.layout("S[(2,2):(2,1)]", {2, 2})
T = axe.tile(grid, inner)
say("T, T:shape()[1], T:shape()[2]")
say("T:tile_of(inner)")

title("Slicing a region (Appendix E)")
say('axe.slice(axe.layout("S[(4,8):(8@lane,1)]", {4, 8}), {{1, 3}, {2, 6}})')
say('axe.slice("S[(4,4):(16,1)]", {16}, {{2, 6}})')
print(select(2, pcall(axe.slice, "S[(4,4):(16,1)]", {16}, {{1, 5}})))

title("The direct sum is contiguous where no tiling exists (Appendix F)")
say('axe.direct_sum("S[(2,2):(8,2)]", {2, 2}, "S[(2,2):(4,1)]", {2, 2})')
say('axe.canonicalize(axe.direct_sum("S[(2,2):(8,2)]", {2, 2}, "S[(2,2):(4,1)]", {2, 2}))')
print(select(2, pcall(axe.tile_of, "S[(4,4):(4,1)]", {4, 4}, "S[(2,2):(4,1)]", {2, 2})))

title("CuTe layouts and MMA fragments as Axe layouts")
say('axe.from_cute(cute.layout("((2,2),4):((1,4),2)"))')
say('axe.to_cute(axe.from_cute("((2,2),4):((1,4),2)"))')
C = axe.from_mma("SM80_16x8x16_F32F16F16F32_TN", "c")
say("C")
show(C, {labels = {"lane", "reg"}})

title("A 64x128 tensor on a 2x2 GPU mesh (Section 2.2)")
mesh = {{"gpuid", 2}, {"gpuid", 2}}
say('axe.dtensor({64, 128}, mesh, {"S(0)", "S(1)"})')
say('axe.dtensor({64, 128}, mesh, {"S(0)", "R"})')
D = axe.dtensor({8, 8}, mesh, {"S(0)", "R"})
show(D)
say('table.concat(axe.to_dtensor(D, mesh), ", ")')

title("Accelerator memories: Trainium SBUF and Blackwell TMEM")
print("-- a 256x256 tile: rows 0-127 in the 128 partitions, each row's 256 columns in F; rows 128-255 further along F")
say('axe.span("S[(2,128,256):(256@F,1@P,1@F)]", "P"), axe.span("S[(2,128,256):(256@F,1@P,1@F)]", "F")')
print("-- the same tile in TMEM: 128 lanes, two groups of 256 columns")
say('axe.span("S[(2,128,256):(256@TCol,1@TLane,1@TCol)]", "TLane"), axe.span("S[(2,128,256):(256@TCol,1@TLane,1@TCol)]", "TCol")')

title("Dispatch: the widest vector a thread loads")
say('axe.vector_width("S[(8,16):(64,1)]", "S[(8,4,4):(4@lane,1@lane,1@reg)]")')

title("Dispatch: the largest Trainium matmul instruction (Appendix H)")
local r = axe.trn_matmul("S[(2,128,256):(256@F,1@P,1@F)]", "S[(2,128,512):(512@F,1@P,1@F)]",
                         "S[(2,128,512):(512@F,1@P,1@F)]", 256, 256, 512)
print(("instruction %dx%dx%d (MxNxK), loops: K %s, M %s, N %s"):format(r.m, r.n, r.k,
  table.concat(r.k_loops, "x"), table.concat(r.m_loops, "x"), #r.n_loops > 0 and table.concat(r.n_loops, "x") or "none"))

title("Dispatch: TMA from global to 128B-swizzled shared memory")
local t = axe.tma("S[(256,512):(512,1)]", {256, 512}, "S[(2,64,64):(8192,64,1)]", {128, 64}, 2, 128)
print(("box %s, global dims %s, strides %s bytes, atoms %s"):format(table.concat(t.box_dim, "x"),
  table.concat(t.global_dim, "x"), table.concat(t.global_stride, ","), tostring(t.outer)))

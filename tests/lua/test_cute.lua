-- test_cute.lua - every binding of the `cute` table, with values and error messages.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local _ = cute._

check("layout constructors", function()
  eq(cute.layout("(4,2):(1,4)"), "(4,2):(1,4)")
  eq(cute.layout({4, 2}), "(4,2):(1,4)")
  eq(cute.layout({4, 2}, "row"), "(4,2):(2,1)")
  eq(cute.layout({{2, 2}, 4}, {{1, 4}, 2}), "((2,2),4):((1,4),2)")
  eq(cute.layout(8), "8:1")
  eq(cute.layout(8, 2), "8:2")
  eq(cute.layout("( _4 , 2 ) : ( _1 , 4 )"), "(4,2):(1,4)")
  eq(cute.layout("(4):(1)"), "(4):(1)")
  eq(cute.layout({2, {3, 4}}, "row"), "(2,(3,4)):(12,(4,1))")
  -- size-1 modes get stride 0, as CuTe's static compact layouts (make_layout(_1{}) is _1:_0)
  eq(cute.layout({2, 1, 3}), "(2,1,3):(1,0,2)"); eq(cute.layout({2, 1, 3}, "row"), "(2,1,3):(3,0,1)")
  eq(cute.layout(1), "1:0"); eq(cute.layout("(4,1)"), "(4,1):(1,0)")
  eq(cute.make_layout("4:1", "2:4"), "(4,2):(1,4)")
  eq(cute.make_layout({4, 2}), "(4,2):(1,4)")
  raises(function() cute.layout("(4,2):(1)") end, "not congruent")
  raises(function() cute.layout("(4,2):(1,4") end, "column")
  raises(function() cute.layout({4, 0}) end, "size 0")
  raises(function() cute.layout({1 << 40, 1 << 40}) end, "too large")
  raises(function() cute.layout({1 << 31, 1 << 31}) end, "too large")
  raises(function() cute.layout(true) end, "layout expected")
  raises(function() cute.layout({4.5}) end, "integer")
end)

check("queries and modes", function()
  local L = cute.layout("((2,2),4):((1,4),2)")
  eq(#L, 16); eq(cute.size(L), 16); eq(L:size(0), 4); eq(L:size(0, 1), 2)
  eq(L:cosize(), 12); eq(L:rank(), 2); eq(L:depth(), 2); eq(L:rank(0), 2)
  eq(L:shape(), "((2,2),4)"); eq(L:stride(), "((1,4),2)")
  eq(L:shape()[1][2], 2)  -- Lua tables are 1-based
  eq(L:shape(1), 4)
  eq(L:mode(0), "(2,2):(1,4)"); eq(L:mode(0, 1), "2:4"); eq(cute.get(L, 1), "4:2")
  eq(L:select(1, 0), "(4,(2,2)):(2,(1,4))")
  eq(L:flatten(), "(2,2,4):(1,4,2)")
  eq(cute.flatten({{2, 2}, 4}), "(2,2,4)")
  raises(function() L:mode(2) end, "out of range")
  raises(function() cute.size(L, -1) end, "out of range")
end)

check("evaluation", function()
  local L = cute.layout("((2,2),4):((1,4),2)")
  eq(L(5), 1 + 2)           -- 5 = (1,0),2... colexicographic: (1,(0)),... check by definition
  local want = {}
  for i = 0, 15 do
    local a, b, c = i % 2, (i // 2) % 2, i // 4
    want[i] = a * 1 + b * 4 + c * 2
    eq(L(i), want[i], "L(" .. i .. ")")
  end
  eq(L({{1, 0}, 2}), 5)
  eq(L{{1, 1}, 3}, 11)
  eq(L(3, 2), 1 + 4 + 4)    -- mixed: 3 is a 1-D coordinate of mode (2,2)
  raises(function() return L(16) end, "outside the domain")
  raises(function() return L(4, 0) end, "outside its mode")
  raises(function() return L({1, 2, 3}) end, "does not match")
  raises(function() return L() end, "needs a coordinate")
  local S, off = L(_, 2)
  eq(S, "((2,2)):((1,4))"); eq(off, 4)
end)

check("equality and functions", function()
  local A, B = cute.layout("(2,4):(1,2)"), cute.layout("8:1")
  assert(A ~= B)
  assert(A == cute.layout("(2,4):(1,2)"))
  assert(A:same_function(B))
  local same, where = cute.same_function("(2,4):(1,2)", "(2,4):(4,1)")
  assert(same == false and where == 1)
end)

-- checked against CuTe C++ (static integers): 2200 random cases agreed
check("orders: make_ordered_layout, make_layout_like, filter_zeros, tile_to_shape, max_common_*", function()
  eq(cute.make_ordered_layout({2, 2, 2, 2}, {0, 2, 3, 1}), "(2,2,2,2):(1,4,8,2)")
  eq(cute.make_ordered_layout({{2, 3}, 4}, {1, 0}), "((2,3),4):((4,8),1)")
  eq(cute.make_ordered_layout({2, 2, 1}, {1, 1, 2}), "(2,2,1):(1,1,0)")
  eq(cute.make_layout_like("(2,(6,6),3):(0,(8,0),6)"), "(2,(6,6),3):(0,(3,0),1)")
  eq(cute.filter_zeros("((4,4),2,4):((0,0),3,0)"), "((1,1),2,1):((0,0),3,0)")
  eq(cute.make_fragment_like("(1,(5,2,2),3):(0,(8,8,32),12)"), "(1,(5,2,2),3):(0,(1,1,30),10)")
  eq(cute.make_fragment_like("(4,3):(12,16)"), "(4,(3)):(1,(4))")
  eq(cute.tile_to_shape("(4,4):(1,4)", {16, 8}, {1, 2}), "((4,4),(4,2)):((1,16),(4,64))")
  eq(cute.tile_to_shape("(4):(1)", {16}), "((4,4)):((1,4))")
  eq(cute.tile_to_shape("(1,4):(2,4)", {3, 16}, nil, {cpp = true}), "((1,3),(4,(2,2))):((2,1),(4,(3,16)))")
  raises(function() cute.tile_to_shape("(1,4):(2,4)", {3, 16}) end, "tile_to_shape((1,4):(2,4), (3,16))",
         "CuTe C++ returns ((1,3),(4,(2,2))):((2,1),(4,(3,16)))")
  raises(function() cute.tile_to_shape("(3,2):(1,3)", {8, 6}) end, "block shape does not divide the target shape")
  raises(function() cute.make_ordered_layout({2, 3}, {1, 0, 2}) end, "Need equal rank of shape and order")
  eq(cute.max_common_layout("(2,4,3):(4,1,8)", "(2,4,3):(4,1,8)"), "(4,2,3):(2,1,8)")
  eq(cute.max_common_vector("(2,4,3):(4,1,8)", "(2,4,3):(4,1,8)"), 24)
  eq(cute.max_common_vector("(4,8):(8,1)", "(4,8):(1,4)"), 1)
  eq(cute.max_common_layout("(4,8):(8,1)", "(4,8):(1,4)"), "1:0")
  -- as methods
  eq(cute.layout("(4,8):(8,1)"):max_common_vector("(4,8):(8,1)"), 32)
end)

check("coalesce filter", function()
  eq(cute.coalesce("(2,(1,6)):(1,(6,2))"), "12:1")
  eq(cute.coalesce("(2,(3,4)):(1,(2,6))", {1, 1}), "(2,12):(1,2)")
  eq(cute.filter("(4,(2,3)):(0,(1,0))"), "2:1")
  eq(cute.filter("(2,3):(1,2)", {1, 1}), "(2,3):(1,2)")
  eq(cute.filter("((2,1),(3,4)):((0,1),(2,0))", {1, 1}), "(1,3):(0,2)")
  raises(function() cute.right_inverse("4:1", 3) end, "takes one layout, no second argument")
  eq(cute.coalesce("(4,1):(1,0)"), "4:1")
  eq(cute.coalesce("(1,1):(0,0)"), "1:0")
end)

check("composition", function()
  eq(cute.composition("(6,2):(8,2)", "(4,3):(3,1)"), "((2,2),3):((24,2),8)")
  eq(cute.layout("20:2"):composition("(5,4):(4,1)"), "(5,4):(8,2)")
  eq(cute.composition("(6,8):(2,12)", "(2,_)"), "(2,8):(2,12)")
  eq(cute.composition("(6,8):(2,12)", {2, _}), "(2,8):(2,12)")
  eq(cute.composition("(6,8):(2,12)", {"3:2", 4}), "(3,4):(4,12)")
  eq(cute.composition("(6,8):(2,12)", "(3)"), "(3):(2)")
  raises(function() cute.composition("(4,3):(1,5)", "3:3") end,
         "composition: (4,3):(1,5) o 3:3", "shape divisibility")
  raises(function() cute.composition("(4,3):(1,5)", "2:5") end, "stride divisibility")
  raises(function() cute.composition("(4,6):(1,5)", "3:2") end, "shape divisibility")
  raises(function() cute.composition("(4,4):(1,4)", "(2,2,2)") end, "3 modes", "only 2")
  raises(function() cute.composition("(12,5):(3,1)", "(2,4):(6,2)") end,
         "CuTe C++ computes (2,4):(18,6)", "first at i = 7", "overlap")
  eq(cute.composition("(12,5):(3,1)", "(2,4):(6,2)", {cpp = true}), "(2,4):(18,6)")
end)

-- issue 16: by-mode tilers whose elements are layouts with tuple shapes
check("tilers with multi-mode elements", function()
  eq(cute.composition("(4,4,4):(64,2,16)", "((1,4):(1,1),4:1,2:1)"), "((1,4),4,2):((64,64),2,16)")
  eq(cute.composition("(4,4,4):(64,2,16)", {"(1,4):(1,1)", 4, 2}), "((1,4),4,2):((64,64),2,16)")
  eq(cute.composition("(4,4,4):(64,2,16)", {cute.layout({1, 4}, {1, 1}), "4:1", 2}),
     "((1,4),4,2):((64,64),2,16)")
  eq(cute.logical_divide("(8,8,4):(1,8,64)", "((2,2):(4,1),(2):(1),2)"),
     "(((2,2),2),((2),4),(2,2)):(((4,1),2),((8),16),(64,128))")
  eq(cute.zipped_divide("(8,8,4):(1,8,64)", {"(2,2):(4,1)", "(2):(1)"}),
     "(((2,2),(2)),(2,4,4)):(((4,1),(8)),(2,16,64))")
  -- the crash and the blow-up of issue 16, item 5: clear errors now
  raises(function() cute.tiled_divide("9:1", {"(8,8):(8,1)", {7, 2}}) end,
         "tiled_divide: the tiler ((8,8):(8,1),(7,2)) has 2 modes but the layout 9:1 has only 1")
  raises(function() cute.tiled_divide({4, 3}, {"(4,3):(3,1)", {2, 3}}) end,
         "the tiler (2,3) has 2 modes but the mode 3:4 has only 1")
  eq(cute.tiled_divide({4, 3}, {"(4,3):(3,1)", 2}), "(((4,3),2),1,2):(((3,1),4),0,8)")
  -- an integer element is make_layout(n) to the divides and products (1 is CuTe's _1:_0),
  -- n:1 to composition (composition_impl(..., n, _1))
  eq(cute.logical_divide("6:1", {1}), "((1,6)):((0,1))")
  eq(cute.composition("(2,(2,2,3)):(2,(6,4,2))", {2, 1}), "(2,1):(2,2)")
end)

-- issue 16: where C++ computes a layout that is not A o B, the refusal says
-- what C++ returns and where it differs; {cpp = true} returns it
check("C++'s layout where it is not A o B", function()
  raises(function() cute.blocked_product("2:3", "8:2") end,
         "CuTe C++ returns ((2,(2,4))):((3,(2,6)))", "first at i = 2", "cpp = true")
  eq(cute.blocked_product("2:3", "8:2", {cpp = true}), "((2,(2,4))):((3,(2,6)))")
  -- C++ does not compile raked_product(2:3, 8:2): zip((2,4):(2,6), 2:3) has mismatched ranks,
  -- and the refusal without cpp says so instead of offering cpp = true
  raises(function() cute.raked_product("2:3", "8:2", {cpp = true}) end, "mismatched ranks")
  raises(function() cute.raked_product("2:3", "8:2") end, "a composition inside is not A o B",
         "the raked_product then fails too", "C++ has no result, and cpp = true refuses")
  -- an identity swizzle at offset 0 composes to the plain layout, as in CuTe C++
  eq(cute.composition(cute.swizzle(0, 3, 3), "4:1"), "4:1")
  eq(cute.logical_divide(cute.layout("Sw<0,3,3> o 0 o 8:1"), "2:1"), "(2,4):(1,2)")
  eq(cute.layout("Sw<0,3,3> o 0 o 8:1"), "Sw<0,3,3> o 0 o 8:1")
  eq(cute.composition(cute.swizzle(1, 3, 3), "4:1"), "Sw<1,3,3> o 0 o 4:1")
  raises(function() cute.blocked_product("2:3", "8:2", {cpp = false}) end, "CuTe C++ returns")
  raises(function() cute.blocked_product("2:3", "8:2", {cxx = true}) end, "cute.blocked_product: unknown option 'cxx' (the options are: cpp)")
  -- where C++'s layout is A o B although tessel's proof does not cover it, it is the answer
  eq(cute.composition("(5,3):(0,2)", "4:3"), "(2,2):(0,2)")
end)

check("complement and inverses", function()
  eq(cute.complement("4:1", 24), "6:4")
  eq(cute.complement("(2,2):(1,6)", 24), "(3,2):(2,12)")
  eq(cute.complement("4:2"), "2:1")
  eq(cute.complement("(4,6):(1,4)", {4, 6}), "1:0")
  raises(function() cute.complement("(2,2):(1,1)") end, "not injective")
  raises(function() cute.complement("4:-1") end, "negative")
  eq(cute.right_inverse("(4,2):(2,1)"), "(2,4):(4,1)")
  eq(cute.left_inverse("4:2"), "(2,4):(0,1)")
  raises(function() cute.left_inverse("(3,2):(2,3)") end, "divisibility")
  local L = cute.layout("((4,2),3):((3,12),1)")
  local R = L:right_inverse()
  for i = 0, #R - 1 do eq(L(R(i)), i) end
  local LI = L:left_inverse()
  for i = 0, #L - 1 do eq(LI(L(i)), i) end
end)

check("divides", function()
  local A, T = "(9,(4,8)):(59,(13,1))", "(3:3,(2,4):(1,8))"
  eq(cute.logical_divide(A, T), "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))")
  eq(cute.zipped_divide(A, T), "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))")
  eq(cute.tiled_divide(A, T), "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))")
  eq(cute.flat_divide(A, T), "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))")
  eq(cute.logical_divide("(4,2,3):(2,1,8)", "4:2"), "((2,2),(2,3)):((4,1),(2,8))")
  eq(cute.tiled_divide("24:1", {2}), "((2),(12)):((1),(2))")
  eq(cute.layout(A):logical_divide({"3:3", _}), "((3,3),(4,8)):((177,59),(13,1))")
end)

check("products", function()
  eq(cute.logical_product("(2,2):(4,1)", "6:1"), "((2,2),(2,3)):((4,1),(2,8))")
  eq(cute.blocked_product("(2,5):(5,1)", "(3,4):(1,3)"), "((2,3),(5,4)):((5,10),(1,30))")
  eq(cute.raked_product("(2,5):(5,1)", "(3,4):(1,3)"), "((3,2),(4,5)):((10,5),(30,1))")
  eq(cute.zipped_product("(2,5):(5,1)", "(3:1,4:3)"), "((2,5),(3,4)):((5,1),(1,15))")
  eq(cute.tiled_product("(2,5):(5,1)", "(3:1,4:3)"), "((2,5),3,4):((5,1),1,15)")
  eq(cute.flat_product("(2,5):(5,1)", "(3:1,4:3)"), "(2,5,3,4):(5,1,1,15)")
  eq(cute.blocked_product("4:1", "3:1"), "((4,3)):((1,4))")
end)

check("tuples and coordinates", function()
  eq(cute.tuple("((2,3),4)"), "((2,3),4)")
  eq(cute.product({{2, 3}, 4}), 24)
  eq(cute.prefix_product({{2, 3}, 4}), "((1,2),6)")
  eq(cute.shape_div({4, 5, 6}, 40), "(1,1,3)")
  raises(function() cute.shape_div(6, 4) end, "divisibility")
  eq(cute.ceil_div({3, 5}, 2), "(2,5)")
  eq(cute.inner_product({2, {3, 4}}, {1, {2, 3}}), 2 + 6 + 12)
  assert(cute.congruent({1, {2, 3}}, {4, {5, 6}}))
  assert(cute.weakly_congruent({1, 2}, {4, {5, 6}}))
  assert(not cute.weakly_congruent({4, {5, 6}}, {1, 2}))
  assert(cute.compatible({2, 12}, {2, {3, 4}}))
  eq(cute.idx2crd(13, {4, {2, 3}}), "(1,(1,1))")
  eq(cute.idx2crd(30, "(4,(2,3))"), "(2,(1,3))")   -- the last mode overflows
  eq(cute.crd2idx({2, {1, 3}}, {4, {2, 3}}), 30)
  eq(cute.crd2idx({1, 1}, {4, 2}, {1, 4}), 5)
  eq(cute.crd2idx({1, 1}, "(4,2):(1,4)"), 5)
  eq(cute.crd2crd(21, {4, 6}, {8, 3}), "(5,2)")
  eq(cute.layout("(4,2):(1,4)"):idx2crd(5), "(1,1)")
  local S, off = cute.slice({_, 2}, "(4,8):(1,4)")
  eq(S, "(4):(1)"); eq(off, 8)
  S, off = cute.layout("((2,2),4):((1,4),2)"):slice({{_, 1}, _})
  eq(S, "(2,4):(1,2)"); eq(off, 4)
  raises(function() cute.slice({_, 1, 2}, "(4,8):(1,4)") end, "does not match")
  eq(tostring(_), "_")
  -- shapes from users are checked before anything divides by them
  raises(function() cute.idx2crd(5, {0, 3}) end, "idx2crd", "non-positive")
  raises(function() cute.crd2idx({1, 1}, {4, -2}, {1, 4}) end, "non-positive")
  raises(function() cute.shape_div({0}, 2) end, "positive")
  raises(function() cute.prefix_product({1 << 40, 1 << 40}) end, "too large")
  assert(not cute.compatible(4, {1 << 40, 1 << 40}))
end)

check("swizzles and composed layouts", function()
  local sw = cute.swizzle(3, 4, 3)
  eq(sw, "Sw<3,4,3>"); eq(sw(128), 128 ~ 16)
  eq(cute.swizzle("Sw<2,0,-3>")(1), 1 ~ 8)
  raises(function() cute.swizzle(3, 4, 2) end, "smaller than the number of bits")
  local S = cute.composition(sw, "(8,64):(64,1)")
  eq(S, "Sw<3,4,3> o 0 o (8,64):(64,1)")
  eq(#S, 512)
  eq(S(1, 0), 64 ~ ((64 & (7 << 7)) >> 3))
  eq(S.offset, 0); eq(S.layout, "(8,64):(64,1)"); eq(S.swizzle, "Sw<3,4,3>")
  local C = cute.composed("Sw<2,0,2> o 0 o (4,4):(4,1)")
  eq(C, "Sw<2,0,2> o 0 o (4,4):(4,1)")
  eq(C(1), 5)
  eq(cute.logical_divide(C, {2, 2}), "Sw<2,0,2> o 0 o ((2,2),(2,2)):((4,8),(1,2))")
  local T, off = C(_, 1)
  eq(T, "Sw<2,0,2> o 1 o (4):(4)"); eq(off, 0)
  assert(C == cute.composed(cute.swizzle(2, 0, 2), 0, "(4,4):(4,1)"))
end)

check("TV layouts and MMA atoms", function()
  local mn, tv = cute.make_layout_tv(cute.layout({4, 8}, {8, 1}), cute.layout({4, 1}))
  eq(tv, "((8,4),4):((16,4),1)")
  for i = 0, #tv - 1 do eq(mn(tv(i)), i) end
  local atom = cute.mma_atom("SM80_16x8x16_F32F16F16F32_TN")
  eq(atom.m, 16); eq(atom.n, 8); eq(atom.k, 16)
  eq(atom.a, "((4,8),(2,2,2)):((32,1),(16,8,128))")
  eq(atom.c, "((4,8),(2,2)):((32,1),(16,8))")
  assert(atom.ptx:find("m16n8k16"))
  eq(tostring(atom), "MMA_Atom SM80_16x8x16_F32F16F16F32_TN (16x8x16, f32 = f16 * f16 + f32)")
  -- thread 5 holds C(1, 2) and C(1, 3) as values 0 and 1
  eq(atom.c(5, 0), 1 + 2 * 16); eq(atom.c(5, 1), 1 + 3 * 16)
  local names = cute.mma_atoms()
  assert(#names >= 20)
  for _, n in ipairs(names) do assert(cute.mma_atom(n).name == n) end
  eq(cute.mma_atom("sm90_64x64x16_f32f16f16_ss").c, "((4,8,4),(2,2,8)):((128,1,16),(64,8,512))")
  raises(function() cute.mma_atom("SM99") end, "unknown atom", "mma_atoms")
end)

check("pictures", function()
  local pl = cute.layout("(4,2):(1,4)")
  local out = {}
  local saved = io.write
  -- show writes to stdout; viz.text returns the same picture
  local text = viz.text(pl, {color = false})
  assert(text:find("%(4,2%):%(1,4%)"))
  assert(text:find("|  5 |", 1, true) or text:find("| 5 |", 1, true), text)
  local big = viz.text(cute.layout({300, 300}), {color = false})
  assert(big:find("of 300"), big)
  local atom = cute.mma_atom("SM80_16x8x8_F16F16F16F16_TN")
  local at = viz.text(atom, {color = false})
  assert(at:find("T0") and at:find("V1"))
  local _, tv = cute.make_layout_tv(cute.layout({2, 2}), cute.layout({2, 1}))
  assert(viz.text(tv, {color = false}):find("T3"))
  local colored = viz.text(pl, {color = true})
  assert(colored:find("\27%["))
  io.write = saved
  local _ = out
end)

check("small bindings", function()
  eq(cute.with_shape("16:1", {4, 4}), "(4,4):(1,4)")
  eq(cute.layout("16:1"):with_shape({2, 8}), "(2,8):(1,2)")
  raises(function() cute.select("(4,2):(1,4)", 2) end, "select", "out of range")
  raises(function() cute.make_layout("4:1", "(2,2):(1)") end, "not congruent")
  raises(function() cute.swizzle(5000, 1, 1) end, "out of range")
  local T = cute.tv("((2,2),2):((1,4),2)", 4, 2)
  eq(T, "((2,2),2):((1,4),2)")
  local pic = viz.text(T, {color = false})
  assert(pic:find("T3", 1, true) and pic:find("4x2 tile", 1, true), pic)
  raises(function() cute.tv("4:1", 0, 2) end, "out of range")
  -- print_layout writes CuTe's table to stdout: check it in a child tessel
  local exe = assert(arg and arg[-1])
  local p = assert(io.popen(exe .. [[ -e 'cute.print_layout("(2,2):(1,2)")']]))
  local out = p:read("a")
  p:close()
  eq(out, "(2,2):(1,2)\n      0   1 \n    +---+---+\n 0  | 0 | 2 |\n    +---+---+\n" ..
          " 1  | 1 | 3 |\n    +---+---+\n")
end)

check("help", function()
  -- every function has a help text: run help(f) for each in a child tessel
  local exe = assert(arg and arg[-1], "arg[-1] names the interpreter")
  local code = "for k, f in pairs(cute) do if type(f) == 'function' then " ..
               "io.write('@@', k, '\\n'); io.flush(); help(f) end end"
  local p = assert(io.popen(exe .. " -e \"" .. code .. "\""))
  local out = p:read("a")
  p:close()
  local n = 0
  for name, text in out:gmatch("@@(%S+)\n([^@]*)") do
    n = n + 1
    assert(#text > 20 and not text:find("no help"), "no help text for cute." .. name)
    assert(text:find(name, 1, true), "help for cute." .. name .. " does not name it")
  end
  local count = 0
  for _, f in pairs(cute) do if type(f) == "function" then count = count + 1 end end
  eq(n, count, "functions with help")
end)

check("methods on every function", function()
  local L = cute.layout("(4,2):(1,4)")
  for _, m in ipairs({"size", "cosize", "coalesce", "filter", "complement", "right_inverse",
                      "left_inverse", "flatten"}) do
    assert(L[m], "missing method " .. m)
    eq(L[m](L), cute[m](L), m)
  end
end)

-- issue 16, item 2: everything cute prints parses back (random values, swizzled ones too)
check("notation round trip", function()
  local seed = os.time()
  math.randomseed(seed)
  local function rshape(depth)
    if depth == 0 or math.random(3) == 1 then return math.random(1, 5) end
    local t = {}
    for i = 1, math.random(1, 3) do t[i] = rshape(depth - 1) end
    return t
  end
  local function like(s)
    if type(s) == "number" then return math.random(-6, 12) end
    local t = {}
    for i = 1, #s do t[i] = like(s[i]) end
    return t
  end
  for _ = 1, 300 do
    local sh = rshape(3)
    local L = cute.layout(sh, like(sh))
    local s = tostring(L)
    eq(cute.layout(s), s, "layout (seed " .. seed .. ")")
    assert(cute.layout(s) == L, s)
    eq(cute.tuple(tostring(L:shape())), tostring(L:shape()))
    eq(cute.layout(tostring(cute.layout(sh))), cute.layout(sh))
    local b = math.random(0, 3)
    local m, sft = math.random(0, 4), math.random(b, 4) * (math.random(2) == 1 and -1 or 1)
    if math.abs(sft) < b then sft = b end
    local sw = cute.swizzle(b, m, sft)
    eq(cute.swizzle(tostring(sw)), sw)
    local C = cute.composed(sw, math.random(-8, 64), L)
    local cs = tostring(C)
    eq(cute.layout(cs), cs, "composed (seed " .. seed .. ")")
    assert(cute.layout(cs) == C and cute.composed(cs) == C, cs)
  end
  eq(cute.layout("Sw<2,0,2> o 0 o (4,4):(4,1)"), "Sw<2,0,2> o 0 o (4,4):(4,1)")
  eq(cute.layout("Sw<2,0,2> o (4,4):(4,1)"), "Sw<2,0,2> o 0 o (4,4):(4,1)")
  eq(cute.make_layout("Sw<2,0,2> o 0 o (4,4):(4,1)"), "Sw<2,0,2> o 0 o (4,4):(4,1)")
  eq(cute.layout(" Sw< 3 , 4 , 3 > o 8 o (8,64):(64,1)"), "Sw<3,4,3> o 8 o (8,64):(64,1)")
  local C = cute.composed("Sw<2,0,2> o 0 o (4,4):(4,-1)")
  local T, off = C(_, 3)
  eq(cute.layout(tostring(T)), T)
  raises(function() cute.layout("Sw<3,4,3>") end, "a swizzle is not a layout", "cute.swizzle")
  raises(function() cute.coalesce("Sw<2,0,2> o 0 o (4,4):(4,1)") end, "a swizzled layout is not taken here")
end)

-- issue 16, item 4: an explicit nil is an absent argument, as in Lua's own libraries
check("explicit nil", function()
  local L = cute.layout("((2,2),4):((1,4),2)")
  local A, T = "(9,(4,8)):(59,(13,1))", "(3:3,(2,4):(1,8))"
  local calls = {
    {"layout", {{4, 2}}}, {"layout", {"(4,2):(2,1)"}}, {"make_layout", {"4:1", "2:4"}},
    {"size", {L}}, {"size", {L, 0}}, {"size", {L, 0, 1}}, {"cosize", {L}}, {"rank", {L}},
    {"depth", {L, 0}}, {"shape", {L}}, {"stride", {L, 1}}, {"mode", {L, 0}}, {"mode", {L, 0, 1}},
    {"get", {L, 1}}, {"select", {L, 1, 0}}, {"flatten", {L}}, {"coalesce", {L}},
    {"coalesce", {"(2,(3,4)):(1,(2,6))", {1, 1}}}, {"filter", {L}}, {"composition", {L, "(2,4)"}},
    {"complement", {"4:2"}}, {"complement", {"4:2", 24}}, {"right_inverse", {L}}, {"left_inverse", {L}},
    {"logical_divide", {A, T}}, {"zipped_divide", {A, T}}, {"tiled_divide", {A, T}},
    {"flat_divide", {A, T}}, {"logical_product", {"(2,2):(4,1)", "6:1"}},
    {"zipped_product", {"(2,5):(5,1)", "(3:1,4:3)"}}, {"tiled_product", {"(2,5):(5,1)", "(3:1,4:3)"}},
    {"flat_product", {"(2,5):(5,1)", "(3:1,4:3)"}}, {"blocked_product", {"(2,5):(5,1)", "(3,4):(1,3)"}},
    {"raked_product", {"(2,5):(5,1)", "(3,4):(1,3)"}}, {"crd2idx", {{1, 1}, {4, 2}}},
    {"crd2idx", {{1, 1}, {4, 2}, {1, 4}}}, {"crd2idx", {{1, 1}, "(4,2):(1,4)"}}, {"idx2crd", {13, {4, {2, 3}}}},
    {"crd2crd", {21, {4, 6}, {8, 3}}}, {"slice", {{_, 2}, "(4,8):(1,4)"}}, {"same_function", {L, L}},
    {"with_shape", {"16:1", {4, 4}}}, {"tuple", {"((2,3),4)"}}, {"product", {{2, 3}}},
    {"prefix_product", {{2, 3}}}, {"shape_div", {{4, 5, 6}, 40}}, {"ceil_div", {{3, 5}, 2}},
    {"inner_product", {{2, 3}, {1, 2}}}, {"congruent", {{1, 2}, {3, 4}}},
    {"weakly_congruent", {{1, 2}, {3, 4}}}, {"compatible", {{2, 12}, {2, {3, 4}}}},
    {"swizzle", {3, 4}}, {"swizzle", {3, 4, 3}}, {"composed", {"Sw<2,0,2>", "(4,4):(4,1)"}},
    {"composed", {"Sw<2,0,2>", 4, "(4,4):(4,1)"}}, {"tv", {"(4,2):(1,4)", 4, 2}},
    {"mma_atom", {"SM80_16x8x8_F16F16F16F16_TN"}}, {"expr", {"(4,2):(1,4)"}},
  }
  local function show(...)
    local r = table.pack(...)
    for i = 1, r.n do r[i] = tostring(r[i]) end
    return table.concat(r, " ", 1, r.n)
  end
  for _, c in ipairs(calls) do
    local f, a = cute[c[1]], c[2]
    local n = #a
    local want = show(f(table.unpack(a, 1, n)))
    eq(show(f(table.unpack(a, 1, n + 1))), want, "cute." .. c[1] .. "(..., nil)")
    eq(show(f(table.unpack(a, 1, n + 2))), want, "cute." .. c[1] .. "(..., nil, nil)")
  end
  eq(L(5, nil), L(5)); eq(L(1, 1, nil), L(1, 1))
  eq(L:size(nil), 16); eq(L:composition("(2,4)", nil), L:composition("(2,4)"))
end)

-- issue 16, item 6: a float where an integer is expected is named as one
check("floats", function()
  raises(function() cute.zipped_divide("9:1", 2^62) end, "an integer, got the float 4.6e18")
  raises(function() cute.layout({2.5}) end, "an integer, got the float 2.5")
  raises(function() cute.composition("8:1", {2, 0.5}) end, "an integer, got the float 0.5")
  raises(function() cute.size("(4,2):(1,4)", 0.5) end, "number has no integer representation")
  eq(cute.layout({4.0, 2}), "(4,2):(1,4)")
  eq(cute.zipped_divide("8:1", 2.0), "(2,4):(1,2)")
end)

finish()

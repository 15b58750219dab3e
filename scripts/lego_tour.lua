-- lego_tour.lua - LEGO layouts: the paper's figures, LEGO's benchmark layouts, CuTe conversion.
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

title("Figure 2: a 6x6 view as 2x2 tiles of 3x3, tiles transposed, each tile reversed")
print("-- OrderBy reshapes its input row-major over (2,2,3,3): it does not stripmine")
F2 = lego.GroupBy({6,6}, lego.OrderBy(lego.RegP({2,2}, {1,0}), lego.GenP({3,3}, "reverse")))
say("F2")
say("F2:apply(2, 5), F2:inv(18)")
show(F2)

title("Figure 6: B tiles the view (a real tiling), C transposes tiles, antidiagonals inside")
B = lego.TileOrderBy({2,2}, {3,3})
say("B")
print("-- the paper's RegP([2,3,2,3], [1,3,2,4]); perms are 0-based gathers here")
say("lego.GroupBy({6,6}, lego.OrderBy(lego.RegP({2,3,2,3}, {0,2,1,3}))) == lego.GroupBy({6,6}, B)")
C = lego.OrderBy(lego.RegP({2,2}, {1,0}), lego.GenP({3,3}, "antidiagonal"))
print("-- fluent form: the OrderBy nearest the GroupBy (B) runs first")
G = C:OrderBy(B):GroupBy({6,6})
say("G")
say("G:apply(4, 2), G:inv(15)")
show(G)
say("G:check()")
print("-- the primitive steps of apply, which the lowering to index expressions walks:")
io.write(G:steps())

title("Figure 7: the antidiagonal order of a tile, and Rodinia NW's shared buffer")
show(lego.GenP({4,4}, "antidiagonal"))
NW = lego.GroupBy({17,17}, lego.OrderBy(lego.GenP({17,17}, "antidiagonal")))
say("NW(0, 16), NW(1, 15), NW(16, 0)")
print("-- one antidiagonal, updated by the threads of one step, is 17 consecutive words")

title("Your own bijection: a GenP from two Lua functions")
S = lego.GenP({4,4}, function(i, j) return i * 4 + (i + j) % 4 end,
                     function(k) return k // 4, (k % 4 - k // 4) % 4 end, "skew, unskew")
say("S")
show(S)
local ok, err = pcall(lego.GenP, {3,3}, function(i, j) return (i + j) % 9 end,
                      function(k) return k // 3, k % 3 end)
print(err)

title("LUD thread coarsening and 3-D bricks (LEGO's CUDA benchmarks)")
LUD = lego.OrderBy(lego.Row(64, 64)):GroupBy({{4,4},{16,16}})
say("LUD")
say("LUD:inv((2*4 + 3)*256 + 37)")
bricks = lego.OrderBy(lego.Row(4,4,4), lego.Row(2,2,2)):TileBy({4,4,4}, {2,2,2})
say("bricks")
say("bricks(1,2,3, 1,0,1), bricks(1,2,3, 1,1,1)")

title("Partial tiles: a 7x6 matrix in 2x2 tiles of 4x4")
E = lego.GroupBy({{2,2},{4,4}}, lego.OrderBy(lego.TileBy({2,2},{4,4}))):ExpandBy({7,6})
say("E")
say("E(1,1, 2,1), E(1,1, 3,1), E:cosize()")
show(E, {max_cols = 8})

title("CuTe: RegP-only layouts are affine, compact CuTe layouts are LEGO layouts")
say("lego.GroupBy({6,6}, B):to_cute()")
say('lego.from_cute(cute.layout("((2,2),4):((1,8),2)"))')
ok, err = pcall(G.to_cute, G)
print(err)

title("Index expressions: apply and inv lowered, simplified")
say("lego.GroupBy({6,6}, B):expr()")
say("lego.GroupBy({6,6}, B):inv_expr()")
say('lego.GenP({4,4}, "morton"):expr()')
say("E:expr()")

title("Symbolic sizes: Triton's grouped program-id ordering from LEGO's layout")
num_pid_m, num_pid_n = uop.var("num_pid_m", 1, 64), uop.var("num_pid_n", 1, 64)
GM, pid = uop.var("GM", 1, 8), uop.var("pid", 0, 4095)
P = lego.OrderBy(lego.Col(num_pid_m // GM, 1), lego.Col(GM, num_pid_n)):TileBy({num_pid_m, num_pid_n})
say("P:inv_expr{vars = {pid}}")
ok, err = pcall(P.apply, P, 0, 0)
print(err)

-- cute_basics.lua - three things CuTe users do every day, in tessel.
--   ./tessel scripts/cute_basics.lua
-- 1. tile a 2-D layout and find a tile's elements
-- 2. build a swizzled shared-memory layout and check its bank conflicts
-- 3. read the SM80 m16n8k16 fragments: which thread holds which element
local _ = cute._

print("1. Tiling a 16x12 row-major matrix into 4x3 tiles")
local A = cute.layout({16, 12}, "row")
print("A                      = " .. tostring(A))
local Z = cute.zipped_divide(A, {4, 3})
print("zipped_divide(A, 4x3)  = " .. tostring(Z))
print("  mode 0 walks inside a tile: " .. tostring(Z:mode(0)))
print("  mode 1 walks over the tiles: " .. tostring(Z:mode(1)) .. " (" .. cute.size(Z, 1) .. " tiles)")
-- tile (2,1): the third tile down, the second across
-- slicing keeps the modes at the `_` as a tuple, as CuTe does: ((4,3)):((12,1))
local sliced, offset = Z(_, {2, 1})
local tile = sliced:mode(0)
print(("  tile (2,1) = %s at offset %d, i.e. rows %d.., columns %d.."):format(
  tostring(tile), offset, offset // 12, offset % 12))
-- check it against the definition: element (i,j) of the tile is A(4*2 + i, 3*1 + j)
for j = 0, 2 do
  for i = 0, 3 do
    assert(tile({i, j}) + offset == A(8 + i, 3 + j))
  end
end
print("  checked: tile(i,j) + offset == A(8+i, 3+j) for every element")
print("  tiled_divide keeps the tile together and splits the rest: " ..
      tostring(cute.tiled_divide(A, {4, 3})))
show(tile)

print()
print("2. A swizzled shared-memory tile: 8 rows of 64 halves (128 bytes each)")
-- ldmatrix reads 8 rows x 16 bytes: a column of 16-byte vectors. Without a
-- swizzle every row starts in bank 0 and the read is 8-way conflicted.
local plain = cute.composed(cute.swizzle(0, 3, 3), "(8,64):(64,1)")
local swz = cute.composed(cute.swizzle(3, 3, 3), "(8,64):(64,1)")
print("plain   = " .. tostring(plain))
print("swizzle = " .. tostring(swz))
-- the same picture in 16-byte vectors (8 halves each): xor the row into the vector index
print("As 16-byte vectors (Sw<3,0,3>), the bank analysis of the column read:")
show(cute.composed(cute.swizzle(3, 0, 3), "(8,8):(8,1)"), {elem_bytes = 16})
print("Without the swizzle:")
show(cute.composed(cute.swizzle(0, 0, 3), "(8,8):(8,1)"), {elem_bytes = 16})
-- the swizzle permutes each row: same elements, other places
for r = 0, 7 do
  local seen = {}
  for c = 0, 63 do seen[swz(r, c)] = true end
  for c = 0, 63 do assert(seen[r * 64 + c]) end
end
print("checked: Sw<3,3,3> permutes the 64 halves of each row among themselves")

print()
print("3. SM80 m16n8k16 (f32 += f16 * f16): who holds what")
local atom = cute.mma_atom("SM80_16x8x16_F32F16F16F32_TN")
print(tostring(atom) .. "\n  " .. atom.ptx)
print("  A (thr,val) -> (m,k): " .. tostring(atom.a))
print("  B (thr,val) -> (n,k): " .. tostring(atom.b))
print("  C (thr,val) -> (m,n): " .. tostring(atom.c))
-- the PTX ISA's rule for the accumulator: lane l holds rows l/4 and l/4+8,
-- columns 2*(l%4) and 2*(l%4)+1
for lane = 0, 31 do
  for v = 0, 3 do
    local idx = atom.c(lane, v)
    local m, n = idx % 16, idx // 16
    local want_m = lane // 4 + 8 * (v // 2)
    local want_n = 2 * (lane % 4) + v % 2
    assert(m == want_m and n == want_n, ("lane %d value %d"):format(lane, v))
  end
end
print("  checked: C matches the PTX ISA's fragment layout for every lane and value")
show(atom)

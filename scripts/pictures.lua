-- pictures.lua - a gallery of Graphviz pictures (SVG and PNG) in out/ (make run renders the first few).
-- Usage: tessel scripts/pictures.lua [DIR [N]]   (DIR defaults to out, N to all pictures)
local dir = arg and arg[1] or "out"
local limit = tonumber(arg and arg[2]) or math.huge
assert(os.execute("mkdir -p '" .. dir .. "'"), "cannot create " .. dir)

local gallery = {}
local function add(name, what, x, opts, formats)
  gallery[#gallery + 1] = { name = name, what = what, x = x, opts = opts or {}, formats = formats or { "svg", "png" } }
end

-- 1. A layout as CuTe's print_latex draws it: values, greys by value mod 8.
add("layout", "a hierarchical layout, coloured by value mod 8 (CuTe's greys)",
    cute.layout("((2,2),4):((1,4),2)"))

-- 2. The tiles of a zipped divide: column j is tile j; colour each tile by its column.
add("zipped_divide", "an 8x8 row-major matrix in 2x4 tiles: column j is tile j, coloured by tile",
    cute.zipped_divide(cute.layout({8, 8}, "row"), "(2,4)"),
    { scheme = function(c) local p = { "#afafff", "#afffaf", "#ffffaf", "#ffafaf", "#d2d2ff",
                                       "#d2ffd2", "#ffffd2", "#ffd2d2" }
                           return p[c.col % 8 + 1] end })

-- 3 and 4. Shared memory: a row-major 8x64 tile of f16 without and with the 128-byte swizzle.
-- CuTe's Sw<3,4,3> (SW128) swizzles byte addresses; counted in 2-byte elements it is
-- Sw<3,3,3>. (Sw<3,4,3> on f16 element offsets xors row/2, not the row: its columns and
-- its 16-byte vectors of 8 rows read 2-way, as its caption and the kernel counts say.)
add("smem_plain", "an 8x64 f16 tile in shared memory, row-major: reading a column hits one bank 8 times",
    cute.layout("(8,64):(64,1)"), { scheme = "bank", dtype = "f16", max_cols = 32,
                                    title = "(8,64):(64,1), f16, coloured by bank (32 of 64 columns)" })
add("smem_swizzled", "the same tile through Swizzle<3,3,3> (SW128 in 2-byte elements): rows, f16 columns "
    .. "(4 columns of 8 rows per warp) and 16-byte vector loads of the 8 rows of a column are conflict-free",
    cute.composition(cute.swizzle(3, 3, 3), "(8,64):(64,1)"), { dtype = "f16", max_cols = 32 })

-- 5. A TV layout: 32 threads of 4 values each over a 16x8 tile.
local _, tv = cute.make_layout_tv(cute.layout({ 4, 8 }, { 8, 1 }), cute.layout({ 4, 1 }))
add("tv", "make_layout_tv(4x8 threads, 4x1 values): T#V# cells coloured by thread", tv)

-- 6. An MMA atom with its A, B and C panels as CuTe's print_latex places them.
add("mma_sm80", "SM80 16x8x16 f16 MMA: A (M x K), B (K x N), C (M x N), coloured by thread",
    cute.mma_atom("SM80_16x8x16_F32F16F16F32_TN"))

-- 6b. A tiled copy: each thread reads 4 elements of a row and writes 4 of a column.
add("copy", "a tiled copy's source and destination TV layouts over an 8x16 tile (row vectors in, column vectors out)",
    cute.copy_view("((8,4),4):((1,32),8)", "((2,16),4):((4,8),1)", 8, 16), { compact = true })

-- 7. A warpgroup MMA's C fragment: 128 threads, coloured by warp.
local wg = cute.mma_atom("SM90_64x8x16_F32F16F16_SS")
add("wgmma_c_warps", "SM90 64x8x16 C fragment: 128 threads in four warps, coloured by warp",
    cute.tv(wg.c, 64, 8), { scheme = "warp", compact = true })

-- 8. A DAG: an index expression as nodes and edges, ports on a record node.
add("dag", "an index expression as a DAG: record nodes with ports, labelled edges",
    viz.graph {
      title = "offset = (m % 4) * 16 + n",
      nodes = { { id = "m", label = "m\nint [0,15]", color = "#d2d2ff" },
                { id = "n", label = "n\nint [0,15]", color = "#d2d2ff" },
                { id = "4", label = "4", shape = "ellipse" }, { id = "16", label = "16", shape = "ellipse" },
                { id = "mod", record = "{{<a>a|<b>b}|MOD}" }, { id = "mul", record = "{{<a>a|<b>b}|MUL}" },
                { id = "add", record = "{{<a>a|<b>b}|ADD}", color = "#ffffaf" } },
      edges = { { "m", "mod", to_port = "a" }, { "4", "mod", to_port = "b" },
                { "mod", "mul", to_port = "a" }, { "16", "mul", to_port = "b" },
                { "mul", "add", to_port = "a" }, { "n", "add", to_port = "b" } },
    })

-- 9. Pictures as nodes: a thread reads one element; the tile goes through a swizzle.
add("graph_of_layouts", "layouts as DAG nodes, an edge into one cell (its port r1c1)",
    viz.graph {
      rankdir = "LR",
      nodes = { { id = "t", label = "thread 5" },
                { id = "A", draw = cute.layout("(4,4):(4,1)") },
                { id = "S", draw = cute.composition(cute.swizzle(2, 0, 2), "(4,4):(4,1)"), opts = { elem_bytes = 4 } } },
      edges = { { "t", "A", to_port = "r1c1", label = "reads (1,1)" }, { "A", "S", label = "Sw<2,0,2>" } },
    })

-- 10. Axe: the paper's tensor-core tile over two warps, replicated, offset; a 2x2 mesh.
add("axe_tc", "an Axe layout: lane and warp of each element, replicas in the caption",
    axe.layout("S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp", { 8, 16 }))
add("axe_mesh", "an 8x8 tensor sharded over a 2x2 mesh: which device holds which block",
    axe.dtensor({ 8, 8 }, { { "gpuid", 2 }, { "gpuid", 2 } }, { "S(0)", "S(1)" }))

-- 11. LEGO: Figure 6 of the paper, logical and physical views.
add("lego_fig6", "a LEGO layout: logical view and physical view, coloured by logical row",
    lego.OrderBy(lego.RegP({ 2, 2 }, { 1, 0 }), lego.GenP({ 3, 3 }, "antidiagonal"))
      :OrderBy(lego.TileOrderBy({ 2, 2 }, { 3, 3 })):GroupBy({ 6, 6 }))

-- 12. An index expression: the DAG of a lowered CuTe layout.
add("expr_dag", "the index expression of ((2,4),(3,8)):((24,1),(8,2)) as a DAG",
    cute.layout("((2,4),(3,8)):((24,1),(8,2))"):expr())

-- 13. Large: a 128x128 layout renders in well under a second (SVG only).
add("large_128x128", "a 128x128 column-major layout: 16384 cells",
    cute.layout({ 128, 128 }), {}, { "svg" })

local n = 0
for _, p in ipairs(gallery) do
  if n >= limit then break end
  n = n + 1
  for _, fmt in ipairs(p.formats) do
    local path = ("%s/%s.%s"):format(dir, p.name, fmt)
    assert(viz.render(p.x, path, p.opts))
  end
  print(("%-16s %s"):format(p.name, p.what))
end
print(("%d pictures (SVG and PNG) are in %s/"):format(n, dir))

-- test_viz.lua - the viz table: Graphviz files and strings, DOT text, schemes, DAGs, errors.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")
local function count(s, pat)
  local n = 0
  for _ in s:gmatch(pat) do n = n + 1 end
  return n
end
local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local dir = os.getenv("TMPDIR") or "/tmp"
dir = dir .. "/tessel_viz_" .. tostring(os.time()) .. "_" .. tostring(math.random(1 << 30))
assert(os.execute("mkdir -p " .. dir))

local L = cute.layout("(4,2):(1,4)")

check("files by extension", function()
  assert(viz.render(L, dir .. "/l.svg") == true)
  assert(viz.render(L, dir .. "/l.png") == true)
  assert(viz.render(L, dir .. "/l.pdf") == true)
  assert(viz.render(L, dir .. "/l.dot") == true)
  assert(slurp(dir .. "/l.png"):sub(1, 8) == "\137PNG\r\n\26\n")
  assert(slurp(dir .. "/l.pdf"):sub(1, 5) == "%PDF-")
  assert(slurp(dir .. "/l.dot") == viz.dot(L))
  assert(viz.render(L, dir .. "/forced.out", {format = "svg"}))
  assert(slurp(dir .. "/forced.out"):find("<svg", 1, true))
end)

check("svg parses as XML and has the cells", function()
  -- xmllint (libxml2-utils) is the parser; its exit status says whether the file is well formed
  local ok = os.execute("xmllint --noout " .. dir .. "/l.svg")
  assert(ok, "xmllint rejected the SVG")
  local svg = viz.render(L, "svg")
  assert(svg == slurp(dir .. "/l.svg"))
  -- title, 2 column indices, 4 row indices, 8 cells
  assert(count(svg, "<text ") == 15, count(svg, "<text "))
  for v = 0, 7 do assert(svg:find(">" .. v .. "</text>", 1, true)) end
  local big = viz.render(cute.layout({16, 16}), "svg")
  assert(count(big, "<text ") == 1 + 16 + 16 + 256)
end)

check("dot text", function()
  local d = viz.dot(L)
  assert(d:find("^digraph tessel {"))
  assert(count(d, "<TD BGCOLOR=") == 8)
  -- title option, labels off, scheme none
  d = viz.dot(L, {title = "my <layout>", labels = false, scheme = "none"})
  assert(d:find("my &lt;layout&gt;", 1, true))
  assert(count(d, "BGCOLOR") == 0)
  assert(not d:find(">5</TD>", 1, true))
  d = viz.dot(L, {labels = function(c) return ("v=%d"):format(c.value) end})
  assert(d:find(">v=5</TD>", 1, true))
end)

check("the 128-byte swizzle on f16: the gallery's claim, by the caption and by the kernel counts", function()
  local function caption(L, opts) return (viz.text(L, opts):match("banks:[^\n]*")) end
  local sw128 = cute.composition(cute.swizzle(3, 3, 3), "(8,64):(64,1)")
  local sw343 = cute.composition(cute.swizzle(3, 4, 3), "(8,64):(64,1)")
  eq(caption(sw128, {dtype = "f16"}),
     "banks: reading rows conflict-free, reading columns conflict-free (2-byte elements, 32 per 128-byte access)")
  eq(caption(sw343, {dtype = "f16"}),
     "banks: reading rows conflict-free, reading columns 2-way (first at column 0) (2-byte elements, 32 per 128-byte access)")
  -- the same tiles as 16-byte vectors: 8 threads load the 8 rows of a vector column
  eq(caption(cute.composition(cute.swizzle(3, 0, 3), "(8,8):(8,1)"), {elem_bytes = 16}),
     "banks: reading rows conflict-free, reading columns conflict-free (16-byte elements, 8 per 128-byte access)")
  eq(caption(cute.composition(cute.swizzle(3, 1, 3), "(8,8):(8,1)"), {elem_bytes = 16}),
     "banks: reading rows conflict-free, reading columns 2-way (first at column 0) (16-byte elements, 8 per 128-byte access)")
  -- the kernel interpreter: a warp reads f16 down 4 columns of 8 rows, 16 requests
  local function column_conflicts(L)
    local t = kernel.new{block = {32}}
    local A, B = t:input("A", "float16", {8, 64}), t:output("B", "float16", {8, 64})
    local sm = t:shared("s", "float16", {8, 64}, L)
    t:stage("columns", function()
      for r = 0, 7 do sm[{r, t.tx}] = A[{r, t.tx}]; sm[{r, t.tx + 32}] = A[{r, t.tx + 32}] end
      kernel.barrier()
      for c0 = 0, 60, 4 do B[{t.tx % 8, c0 + t.tx // 8}] = sm[{t.tx % 8, c0 + t.tx // 8}] end
    end)
    return t:counts().bank_conflicts
  end
  eq(column_conflicts(sw128), 0, "Sw<3,3,3>")
  eq(column_conflicts(sw343), 16, "Sw<3,4,3>: each of the 16 requests 2-way")
  eq(column_conflicts(cute.layout("(8,64):(64,1)")), 16 * 7, "row-major: 8-way")
end)

check("schemes", function()
  local S = cute.composition(cute.swizzle(3, 4, 3), "(8,64):(64,1)")
  local d = viz.dot(S, {dtype = "f16", max_cols = 16})
  assert(d:find("reading rows conflict-free", 1, true), d)
  assert(d:find("elided: showing 16 of 64 columns", 1, true))
  local plain = viz.dot(cute.layout("(8,64):(64,1)"), {scheme = "bank", dtype = "f16", max_cols = 8})
  -- notes are broken into lines as wide as the grid
  plain = plain:gsub('<BR ALIGN="LEFT"/>', " ")
  assert(plain:find("reading columns 8-way", 1, true), plain)
  -- warp: 64 threads of a TV layout in two colours
  local tv = cute.tv(cute.layout("(64,1):(1,0)"), 8, 8)
  local w = viz.dot(tv, {scheme = "warp"})
  assert(count(w, 'BGCOLOR="#8fb8ff"') == 32 and count(w, 'BGCOLOR="#8fe08f"') == 32)
  local dv = viz.dot(cute.layout("(2,4):(4,1)"), {scheme = "device"})
  assert(count(dv, 'BGCOLOR="#9ecae1"') == 1)
  -- a Lua function from the cell to a colour
  local seen = {}
  local f = viz.dot(tv, {scheme = function(c)
    seen[#seen + 1] = c
    return c.thread % 2 == 0 and "#ff0000" or 0x00ff00
  end})
  assert(#seen == 64 and seen[1].row == 0 and seen[1].col == 0 and seen[1].thread == 0 and seen[1].v == 0)
  assert(seen[1].label == "T0V0", seen[1].label)
  assert(count(f, 'BGCOLOR="#ff0000"') == 32 and count(f, 'BGCOLOR="#00ff00"') == 32)
  local short = viz.dot(L, {scheme = function(c) return c.value < 4 and "#abc" or nil end})
  assert(count(short, 'BGCOLOR="#aabbcc"') == 4 and count(short, "BGCOLOR") == 4)
  -- the terminal takes the same schemes
  local t = viz.text(L, {scheme = function() return "#000000" end, color = true})
  assert(t:find("\27[48;5;16m", 1, true))
  assert(#viz.schemes == 6)
end)

check("mma and tv", function()
  local atom = cute.mma_atom("SM80_16x8x16_F32F16F16F32_TN")
  local d = viz.dot(atom)
  assert(count(d, "<TABLE") == 7)   -- the panel table; A, B, C, each in a table with its title
  assert(d:find("A (M x K)", 1, true) and d:find("B (K x N)", 1, true))
  local svg = viz.render(atom, "svg")
  -- thread 0 holds 8 values of A (16x16), 4 of B (16x8) and 4 of C (16x8)
  assert(count(svg, ">T0</text>") == 8 + 4 + 4, count(svg, ">T0</text>"))
  local mn, tv = cute.make_layout_tv(cute.layout({4, 8}, {8, 1}), cute.layout({4, 1}))
  assert(viz.dot(tv):find("T0<BR/>V0", 1, true))
  assert(viz.dot(mn, {tv = {16, 8}}) ~= viz.dot(mn))
  -- a tiled copy: S and D side by side, each element once in each
  local cv = cute.copy_view("((8,4),4):((1,32),8)", "((2,16),4):((4,8),1)", 8, 16)
  assert(tostring(cv) == "CopyView 8x16 S ((8,4),4):((1,32),8) D ((2,16),4):((4,8),1)")
  local cd = viz.dot(cv, {compact = true})
  assert(cd:find("S (source)", 1, true) and cd:find("D (destination)", 1, true))
  assert(count(cd, ">T5V2</TD>") == 2, count(cd, ">T5V2</TD>"))
  assert(not cd:find("not mapped", 1, true))
  raises(function() cute.copy_view("4:1", "4:1", 0, 2) end, "copy_view: tile 0 x 2")
  raises(function() viz.dot(cute.copy_view("8:1", "8:2", 2, 4)) end,
         "viz.copy: destination layout 8:2 maps (thr,val) = (4,0) to index 8, outside the 2x4 tile")
end)

check("graphs", function()
  local g = viz.graph{
    title = "a + b*c", rankdir = "LR",
    nodes = {"a", "b", "c", {id = "mul", record = "{<x>x|MUL|<y>y}", color = "#ffd75f"},
             {id = "add", html = "<B>ADD</B>"}},
    edges = {{"b", "mul", to_port = "x"}, {"c", "mul", to_port = "y"}, {"mul", "add", label = "prod"},
             {from = "a", to = "add", dashed = true}},
  }
  local d = viz.dot(g)
  assert(d:find("rankdir=LR", 1, true))
  assert(d:find('n1 -> n3:"x";', 1, true), d)
  assert(d:find('[label="prod"]', 1, true))
  local svg = viz.render(g, "svg")
  assert(count(svg, 'class="node"') == 5 and count(svg, 'class="edge"') == 4)
  assert(viz.render(g, dir .. "/g.png"))
  assert(viz.text(g):find("5 nodes, 4 edges", 1, true))
  -- pictures as nodes, with ports on their cells
  local pg = viz.graph{nodes = {{id = "A", draw = cute.layout("(4,4):(4,1)")}, "t",
                                {id = "S", draw = cute.composition(cute.swizzle(2, 0, 2), "(4,4):(4,1)"),
                                 opts = {elem_bytes = 4}}},
                       edges = {{"t", "A", to_port = "r1c2"}, {"A", "S"}}}
  local pd = viz.dot(pg)
  assert(pd:find('PORT="r1c2"', 1, true) and pd:find('n1 -> n0:"r1c2";', 1, true), pd)
  assert(pd:find("banks: reading rows", 1, true) and not pd:find("panels [", 1, true))
  assert(count(viz.render(pg, "svg"), 'class="node"') == 3)
  assert(viz.text(pg, {color = false}):find("(4,4):(4,1)", 1, true))
  raises(function() viz.graph{nodes = {{draw = cute.mma_atom("SM80_16x8x8_F16F16F16F16_TN")}}} end,
         "node 1: draw must be a one-panel picture")
  raises(function() viz.graph{nodes = {{draw = 5}}} end, "a number cannot be drawn")
  -- nodes by index
  assert(viz.dot(viz.graph{nodes = {{label = "x"}, {label = "y"}}, edges = {{1, 2}}}):find("n0 -> n1;", 1, true))
  raises(function() viz.graph{nodes = {"a"}, edges = {{"a", "b"}}} end, "viz.graph: edge 1: to node b")
  raises(function() viz.graph{nodes = 3} end, "viz.graph: option nodes is 3, not a table")
  raises(function() viz.graph{nodes = {{id = "a", color = "red"}}} end, "node 1", "#rrggbb")
  raises(function() viz.graph{nodes = {{id = "a", shape = "box\"; x"}}} end, "not a Graphviz shape")
  raises(function() viz.graph{nodes = {}, rankdir = "XY"} end, "rankdir")
  -- a malformed HTML label is a Graphviz error: nil, message
  local bad = viz.graph{nodes = {{html = "<TABLE><TR></TABLE>"}}}
  local ok, msg = viz.render(bad, "svg")
  assert(ok == nil and msg:find("Graphviz layout failed", 1, true) and msg:find("mismatched tag", 1, true), msg)
end)

check("errors", function()
  local ok, msg = viz.render(L, "/nonexistent/dir/x.svg")
  assert(ok == nil and msg == "viz.render: cannot open '/nonexistent/dir/x.svg': No such file or directory", msg)
  raises(function() viz.render(L, dir .. "/x.jpg") end, "cannot tell the format of", ".svg, .png")
  raises(function() viz.render(L, dir .. "/x", {format = "gif"}) end, "opts.format gif")
  raises(function() viz.render(cute.layout({300, 2}), "svg", {max_rows = 300}) end,
         "panel 0 is a 300x2 grid", "at most 256")
  local big = viz.dot(cute.layout({300, 300}))
  assert(big:find("elided: showing 256 of 300 rows and 256 of 300 columns", 1, true))
  raises(function() viz.render(42, "svg") end, "a number cannot be drawn")
  raises(function() viz.dot({}) end, "a table cannot be drawn")
  raises(function() viz.dot(L, {scheme = "rainbow"}) end, "unknown colour scheme 'rainbow'")
  raises(function() viz.dot(L, {dtype = "f17"}) end, "unknown dtype f17")
  raises(function() viz.dot(L, {elem_bytes = 3}) end, "elem_bytes 3")
  raises(function() viz.dot(L, {max_cols = 0}) end, "opts.max_cols must be an integer in 1..4096")
  raises(function() viz.dot(L, {scheme = function() error("boom") end}) end, "colour function failed", "boom")
  raises(function() viz.dot(L, {scheme = function() return {} end}) end, "bad colour")
  raises(function() viz.dot(L, {labels = 3}) end, "viz.dot: option labels is 3, not a boolean or a function")
  raises(function() viz.dot(L, {tv = {"a", 2}}) end, "opts.tv must be {M, N}")
  raises(function() viz.dot(L, 5) end, "opts must be a table")
  raises(function() viz.dot(cute.tv("4:1", 2, 2), {scheme = "bank"}) end, "bank colour scheme")
end)

check("hostile options never crash", function()
  math.randomseed(tonumber(os.getenv("TESSEL_SEED") or "") or 11)
  local vals = {0, -1, 1, 3, 300, 5000, "x", "f16", {}, true, function() return "#fff" end,
                function() error({}) end, function() return 1 << 40 end, 2.5}
  local keys = {"max_rows", "max_cols", "elem_bytes", "dtype", "scheme", "labels", "title", "tv", "format", "compact"}
  local xs = {L, cute.mma_atom("SM80_16x8x8_F16F16F16F16_TN"), cute.composition(cute.swizzle(2, 0, 2), "(4,4):(4,1)"),
              viz.graph{nodes = {"a", "b"}, edges = {{"a", "b"}}}, cute.tv("(4,2):(2,1)", 4, 2)}
  for _ = 1, 400 do
    local o = {}
    for _ = 1, math.random(0, 3) do o[keys[math.random(#keys)]] = vals[math.random(#vals)] end
    local x = xs[math.random(#xs)]
    local ok, err = pcall(viz.dot, x, o)
    assert(ok or type(err) == "string", "non-string error")
    ok, err = pcall(viz.text, x, o)
    assert(ok or type(err) == "string", "non-string error")
  end
end)

os.execute("rm -rf " .. dir)
-- a colour is exactly #rgb or #rrggbb: strtol's signs, spaces and 0x are refused (found while
-- fuzzing the readers of names; "#-fffff" used to mean no colour, "#0x1234" a colour)
check("colour strings", function()
  local L = cute.layout("(2,2)")
  for _, c in ipairs{"#-fffff", "#-ff", "#+1234", "# 12345", "#0x1234", "#12\0" .. "456", "#ggg"} do
    raises(function() viz.dot(L, {scheme = function() return c end}) end, "a colour is")
  end
  for c, want in pairs{["#abc"] = "#aabbcc", ["#A1B2C3"] = "#a1b2c3"} do
    local d = viz.dot(L, {scheme = function() return c end})
    assert(d:lower():find(want, 1, true), c)
  end
end)

finish()

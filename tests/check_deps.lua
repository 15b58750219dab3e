-- tests/check_deps.lua - the house's rules, read off the sources and the objects (make check-deps).
--
--   lua5.4 tests/check_deps.lua BUILD_DIR
--
-- 1. Every edge between rooms points down the dependency line of docs/architecture.md (the line
--    after "The dependency line:" there, read by this script, so the document and the check
--    cannot drift). An edge is an #include "..." of a file of another room, or a call: a symbol
--    one object uses that another defines (nm of BUILD_DIR's objects). Rooms on one level (in
--    braces) use neither each other nor anything above them.
-- 2. No two files call or include each other in a loop (a strongly connected component of
--    more than one file, in the file-level call graph or the include graph).
-- 3. No source file outside tests/ is over 2,000 lines.
-- Prints each violation with the symbols or the include that make it, and exits 1 if any.

local build = arg[1] or "build"
local LIMIT = 2000

local function lines_of(cmd)
  local p = assert(io.popen(cmd))
  local out = {}
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

local function read(path)
  local f = io.open(path)
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- the rooms and their levels, from the document
local doc = assert(read("docs/architecture.md"), "check_deps: docs/architecture.md is missing")
local line = doc:match("The dependency line:%s*\n+%s*`([^`]+)`")
assert(line, "check_deps: docs/architecture.md has no line after 'The dependency line:'")
local level, rooms, nlevels = {}, {}, 0
do
  local parts = {}
  for part in (line .. " -> "):gmatch("(.-)%s*%->%s*") do parts[#parts + 1] = part end
  nlevels = #parts
  for i, part in ipairs(parts) do
    for room in part:gsub("[{}]", ""):gmatch("[^,%s]+") do
      level[room] = nlevels - i   -- the last is the lowest, level 0
      rooms[#rooms + 1] = room
    end
  end
end
-- the longest room that prefixes a path
table.sort(rooms, function(a, b) return #a > #b end)
local function room_of(path)
  for _, r in ipairs(rooms) do
    if path:sub(1, #r + 1) == r .. "/" then return r end
  end
  return nil
end

local problems = {}
local function problem(fmt, ...) problems[#problems + 1] = string.format(fmt, ...) end

-- the sources of the rooms
local sources = {}
for _, r in ipairs(rooms) do
  for _, f in ipairs(lines_of("ls " .. r .. "/*.c " .. r .. "/*.h 2>/dev/null")) do
    if room_of(f) == r then sources[#sources + 1] = f end
  end
end
table.sort(sources)

local function normpath(p)
  local out = {}
  for seg in p:gmatch("[^/]+") do
    if seg == ".." then out[#out] = nil elseif seg ~= "." then out[#out + 1] = seg end
  end
  return table.concat(out, "/")
end

local function add_edge(g, a, b, why)
  g[a] = g[a] or {}
  g[a][b] = g[a][b] or {}
  table.insert(g[a][b], why)
end

-- includes
local incl = {}
for _, f in ipairs(sources) do
  local text = read(f)
  local dir = f:match("^(.*)/") or "."
  local n = 0
  for l in (text .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    local inc = l:match('^%s*#%s*include%s+"([^"]+)"')
    if inc then add_edge(incl, f, normpath(dir .. "/" .. inc), f .. ":" .. n) end
  end
  if n > LIMIT + 1 then problem("%s has %d lines (at most %d outside tests/): split it by concern", f, n - 1, LIMIT) end
end
for _, f in ipairs(lines_of("ls scripts/*.lua scripts/*/*.lua bench/*.lua 2>/dev/null")) do
  local n = select(2, read(f):gsub("\n", ""))
  if n > LIMIT then problem("%s has %d lines (at most %d outside tests/): split it by concern", f, n, LIMIT) end
end

-- calls: which object defines and which uses each global symbol
local calls, defs, uses = {}, {}, {}
for _, f in ipairs(sources) do
  if f:match("%.c$") then
    local obj = build .. "/" .. f:gsub("%.c$", ".o")
    if not read(obj) then
      problem("%s is not built (run make first, or pass the build folder)", obj)
    else
      uses[f] = {}
      for _, l in ipairs(lines_of("nm " .. obj)) do
        local kind, sym = l:match("^%x*%s+(%a)%s+(%S+)$")
        if kind and kind:match("[TDBRCVW]") then defs[sym] = f
        elseif kind == "U" then uses[f][sym] = true end
      end
    end
  end
end
for f, us in pairs(uses) do
  for sym in pairs(us) do
    local d = defs[sym]
    if d and d ~= f then add_edge(calls, f, d, sym) end
  end
end

-- 1: every edge between rooms points down
local function check_rooms(g, what)
  for a, outs in pairs(g) do
    for b, why in pairs(outs) do
      local ra, rb = room_of(a), room_of(b)
      if ra and rb and ra ~= rb and not (level[rb] < level[ra]) then
        table.sort(why)
        problem("%s %s -> %s goes from %s up or across to %s (%s)", what, a, b, ra, rb,
                table.concat(why, ", ", 1, math.min(#why, 6)))
      end
    end
  end
end
check_rooms(incl, "include:")
check_rooms(calls, "call:")

-- 2: strongly connected components (Tarjan), in a fixed order for stable messages
local function sccs(g)
  local index, low, onstack, stack, out, n = {}, {}, {}, {}, {}, 0
  local function visit(v)
    n = n + 1; index[v] = n; low[v] = n
    stack[#stack + 1] = v; onstack[v] = true
    local succ = {}
    for w in pairs(g[v] or {}) do succ[#succ + 1] = w end
    table.sort(succ)
    for _, w in ipairs(succ) do
      if not index[w] then visit(w); low[v] = math.min(low[v], low[w])
      elseif onstack[w] then low[v] = math.min(low[v], index[w]) end
    end
    if low[v] == index[v] then
      local comp = {}
      repeat
        local w = table.remove(stack); onstack[w] = nil; comp[#comp + 1] = w
      until w == v
      if #comp > 1 then table.sort(comp); out[#out + 1] = comp end
    end
  end
  local nodes = {}
  for v in pairs(g) do nodes[#nodes + 1] = v end
  table.sort(nodes)
  for _, v in ipairs(nodes) do if not index[v] then visit(v) end end
  return out
end
for what, g in pairs({ ["call"] = calls, ["include"] = incl }) do
  for _, comp in ipairs(sccs(g)) do
    local inside = {}
    for _, a in ipairs(comp) do
      for _, b in ipairs(comp) do
        local why = g[a] and g[a][b]
        if why then
          table.sort(why)
          inside[#inside + 1] = string.format("%s -> %s (%s)", a, b, table.concat(why, ", ", 1, math.min(#why, 3)))
        end
      end
    end
    problem("a %s loop between %d files: %s", what, #comp, table.concat(inside, "; "))
  end
end

if #problems > 0 then
  table.sort(problems)
  for _, p in ipairs(problems) do io.stderr:write("check_deps: ", p, "\n") end
  io.stderr:write(string.format("check_deps: %d problems; the dependency line is %s\n", #problems, line))
  os.exit(1)
end
local nedges = 0
for _, outs in pairs(calls) do for _ in pairs(outs) do nedges = nedges + 1 end end
print(string.format("check_deps: %d files in %d rooms, %d call edges between files, all down the line %s; no loop; no file over %d lines",
                    #sources, #rooms, nedges, line, LIMIT))

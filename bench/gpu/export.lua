-- bench/gpu/export.lua - writes the CUDA of every kernel in scripts/gpu/ at its benchmark size, with
-- a manifest the GPU side reads (bench/gpu/bench.py). Run: ./tessel bench/gpu/export.lua [dir
-- [pattern]] (bench/gpu/run.sh runs it; dir defaults to bench/gpu/out; pattern, a Lua pattern,
-- keeps only the cases whose names match it).
--
-- Each scripts/gpu/<name>.lua returns a module with cases(): a list of
--   {name =, kernel =, inputs = {name = "randn" | "rand"}, torch = "<expression>",
--    peers = {name = "<expression>"}, bytes =, flops =, tol =}
-- where the torch expression computes the outputs from x (the inputs in kernel order, as torch
-- tensors) in float64 on the GPU: the reference the outputs are checked against, and the
-- PyTorch operation timed beside the kernel (in the inputs' dtype). peers (optional) are more
-- PyTorch expressions of the same outputs, each timed in the same run (in the inputs' dtype)
-- and shown as a row of its own.
local dir = arg and arg[1] or "bench/gpu/out"
local pattern = arg and arg[2]
os.execute("mkdir -p '" .. dir .. "'")

-- the buffers in kernel order: name, role, scope, dtype, shape (k:buffers() as text)
local function buffers(k)
  local out = {}
  for line in k:buffers():gmatch("[^\n]+") do
    local name, role, scope, dtype, shape = line:match("^(%S+)%s+(%S+)%s+(%S+)%s+(%S+)%s+(%b())")
    if name and name ~= "name" then
      local dims = {}
      for d in shape:gmatch("%d+") do dims[#dims + 1] = tonumber(d) end
      out[#out + 1] = {name = name, role = role, scope = scope, dtype = dtype, shape = dims}
    end
  end
  return out
end

local function pylist(t)
  local s = {}
  for _, v in ipairs(t) do s[#s + 1] = tostring(v) end
  return "[" .. table.concat(s, ", ") .. (#s == 1 and "," or "") .. "]"
end

local names = {}
local p = assert(io.popen("ls scripts/gpu/*.lua"))
for f in p:lines() do names[#names + 1] = f end
p:close()
local written = {}
for _, f in ipairs(names) do
  local M = assert(loadfile(f))("module")
  for _, c in ipairs(M.cases()) do
    if pattern and not c.name:match(pattern) then goto next end
    local d = dir .. "/" .. c.name
    os.execute("mkdir -p '" .. d .. "'")
    local src = c.kernel:source("cuda", {fast = true})
    local h = assert(io.open(d .. "/kernel.cu", "w"))
    h:write(src)
    h:close()
    local m = assert(io.open(d .. "/case.py", "w"))
    m:write("# written by bench/gpu/export.lua from ", f, "\n")
    m:write("name = ", string.format("%q", c.name), "\n")
    m:write("script = ", string.format("%q", f), "\n")
    m:write("buffers = [\n")
    for _, b in ipairs(buffers(c.kernel)) do
      m:write(string.format("    (%q, %q, %q, %q, %s, %q),\n", b.name, b.role, b.scope, b.dtype,
                            pylist(b.shape), (c.inputs or {})[b.name] or ""))
    end
    m:write("]\n")
    m:write("torch = ", string.format("%q", c.torch), "\n")
    local peers = {}
    for pn in pairs(c.peers or {}) do peers[#peers + 1] = pn end
    table.sort(peers)
    m:write("peers = {")
    for i, pn in ipairs(peers) do
      m:write(i > 1 and ", " or "", string.format("%q: %q", pn, c.peers[pn]))
    end
    m:write("}\n")
    m:write("bytes = ", string.format("%d", c.bytes), "\n")
    m:write("flops = ", string.format("%d", c.flops or 0), "\n")
    m:write("tol = ", string.format("%g", c.tol or 1e-5), "\n")
    m:write("note = ", string.format("%q", c.note or ""), "\n")
    m:close()
    written[#written + 1] = c.name
    ::next::
  end
end
print("exported to " .. dir .. ": " .. table.concat(written, ", "))

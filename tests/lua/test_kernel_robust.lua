-- test_kernel_robust.lua - hostile and random calls to the kernel API never crash tessel.
local seed = tonumber(os.getenv("TESSEL_SEED") or "") or os.time()
math.randomseed(seed)

-- a kernel with a little of everything, rebuilt for every round
local function base()
  local k = kernel.new{grid = {2}, block = {64}}
  local A = k:input("A", "float32", {8, 16})
  local H = k:input("H", "float16", {16, 16})
  local B = k:output("B", "float32", {8, 16})
  local S = k:shared("S", "float32", {8, 16})
  local R = k:register("R", "float32", {4})
  -- a first stage that writes every output, so that the verifier can pass
  k:stage("init", function()
    for i in kernel.range(8) do
      kernel.when(kernel.lt(k.bx * 64 + k.tx, 16), function() B[{ i, k.tx }] = A[{ i, k.tx }] end)
    end
  end)
  return k, { A, H, B, S, R }
end

local values = { nil, 0, -1, 1, 2, 3, 31, 32, 1e300, 0/0, math.huge, 2^62, -2^62, "x", "float16",
  "thread.x", "reduce", "Sw<3,4,3> o 0 o (8,16):(16,1)", "(8,16):(1,8)", "(8,16):(16,2)", {}, {1, 2},
  {0, 0}, {8, 16}, {-1, 4}, {1e9, 1e9}, {{1}}, true, false, function() end, tensor.from{1, 2},
  tensor.rand({8, 16}, {seed = 1}), { scope = "warp" }, { scope = "cta", impl = "vector8" },
  { impl = "tree" }, { warps = {1, 9} }, { op = "max" }, { type = "bogus" }, { bind = "lane" } }
local function pick() return values[math.random(#values + 1)] end

local funcs = {}
for name, f in pairs(kernel) do
  if type(f) == "function" then funcs[#funcs + 1] = name end
end
table.sort(funcs)
local meths = {}
for name in pairs(kernel.methods) do meths[#meths + 1] = name end
table.sort(meths)

local calls, ran = 0, 0
for round = 1, 200 do
  local k, bufs = base()
  -- record a stage of random statements, each in its own pcall so that the rest go on
  pcall(k.stage, k, "s" .. round, function()
    for _ = 1, 8 do
      local b = bufs[math.random(#bufs)]
      local r = math.random()
      pcall(function()
        if r < 0.2 then
          b[{ pick(), pick() }] = pick()
        elseif r < 0.35 then
          b[pick()] = b[{ k.tx % 8, pick() }]
        elseif r < 0.5 then
          for i in kernel.range(math.random(0, 5), pick()) do
            b[{ i, k.tx % 16 }] = b:load({ i, pick() }, pick())
            if math.random() < 0.3 then break end
          end
        elseif r < 0.6 then
          kernel.when(pick(), function() kernel.barrier() end)
        elseif r < 0.75 then
          local f = kernel[funcs[math.random(#funcs)]]
          f(bufs[math.random(#bufs)], pick(), pick(), pick())
        elseif r < 0.85 then
          kernel.copy(bufs[math.random(#bufs)], b:tile({ pick(), pick() }, { pick(), pick() }), pick())
        else
          kernel.shuffle(b[{ 0, 0 }], pick())
        end
      end)
      calls = calls + 1
    end
  end)
  -- methods with random arguments
  for _ = 1, 5 do
    local m = meths[math.random(#meths)]
    local ok = pcall(k[m], k, pick(), pick(), pick(), pick())
    calls = calls + 1
  end
  -- whatever got recorded is checked, printed, listed and run (or refused)
  pcall(tostring, k)
  pcall(k.uops, k)
  if pcall(k.check, k) then
    local ok = pcall(k.run, k, { A = tensor.rand({8, 16}, {seed = round}), H = tensor.ones{16, 16}:cast("float16") },
                     { max_steps = 1000000 })
    if ok then ran = ran + 1 end
    pcall(k.counts, k)
  end
  -- values from another kernel are refused, not mixed
  local other = kernel.new()
  local O = other:input("O", "float32", {4})
  assert(not pcall(k.stage, k, "mix", function() bufs[3][{ 0, 0 }] = O[0] end))
end

-- lowering odd graphs: refused with a message or lowered and run
local graphs = {
  function() return tensor.param("p", {3, 0}) end,
  function() return tensor.arange(4):copy(2) end,
  function() return tensor.from{1, 2}:bitcast("int32") end,
  function() return tensor.param("p", {4}):cast("int8"):sum() end,
  function() return tensor.rand({3, 3}, {seed = 1}):pad{{2, 2}, {0, 1}}:max(0) end,
  function() return tensor.param("p", {2, 3}):reshape{3, 2}:permute{1, 0}:flip{0}:shrink{{0, 1}, {1, 3}} end,
}
for _, g in ipairs(graphs) do
  local ok, t = pcall(g)
  if ok then
    local okl, k = pcall(kernel.lower, t)
    if okl then pcall(k.run, k, { p = tensor.ones{4} }) end
  end
  calls = calls + 1
end
print(string.format("test_kernel_robust.lua: %d calls survived, %d kernels ran (seed %d)", calls, ran, seed))

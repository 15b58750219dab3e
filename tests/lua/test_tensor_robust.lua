-- test_tensor_robust.lua - hostile and random calls to the tensor API never crash tessel.
local seed = tonumber(os.getenv("TESSEL_SEED") or "") or os.time()
math.randomseed(seed)
local values = { nil, 0, -1, 1, 2, 3, 1e300, -0.0, 0/0, math.huge, 2^62, "x", "float16", {}, {1, 2},
  {{1}, {2, 3}}, {-1}, {0}, {1e9, 1e9}, true, false, function() end, tensor.from{1, 2},
  tensor.from{{1, 2}, {3, 4}}, tensor.from(1.5), tensor.zeros(0), tensor.param("q", {2}),
  tensor.arange(4):copy(2), {{1, 2}}, {false}, {"a"} }
local names = {}
for k in pairs(tensor) do if type(tensor[k]) == "function" then names[#names + 1] = k end end
table.sort(names)
local meths = {}
for k in pairs(tensor.methods) do meths[#meths + 1] = k end
table.sort(meths)
local function pick() return values[math.random(#values + 1)] end
tensor.options{mem_limit = 1 << 26}
local n = 0
for _ = 1, 3000 do
  local ok, r
  if math.random() < 0.3 then
    local f = tensor[names[math.random(#names)]]
    ok, r = pcall(f, pick(), pick(), pick())
  else
    local t = values[22 + math.random(7)]
    local m = meths[math.random(#meths)]
    ok, r = pcall(function() return t[m](t, pick(), pick(), pick()) end)
  end
  if ok and type(r) == "userdata" and math.random() < 0.5 then
    pcall(function() return r:tolist() end)
    pcall(tostring, r)
  end
  n = n + 1
end
-- operators on odd operands
for _, v in ipairs{ "x", {}, function() end } do
  assert(not pcall(function() return tensor.from{1} + v end))
end
tensor.options{mem_limit = 0}
print("test_tensor_robust.lua: " .. n .. " calls survived (seed " .. seed .. ")")
-- a graph as deep as the IR allows realizes without exhausting the C stack
local deep = tensor.from{1.0, 2.0}
for _ = 1, 9990 do deep = deep + 1 end
assert(deep:tolist()[1] == 9991)
assert(not pcall(function() for _ = 1, 20 do deep = deep + 1 end end))
print("deep graph: ok")

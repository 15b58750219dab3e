-- test_robust.lua - random and hostile arguments to every cute function: errors, never a crash.
math.randomseed(tonumber(os.getenv("TESSEL_SEED") or "") or 7)
local atoms = {"(", ")", ",", ":", "_", "_4", "0", "1", "2", "3", "-1", "4", "8", "16", "99999999999", "9223372036854775807", " ", "Sw<", ">", " o ", "x", "((", "))"}
local function rs()
  local t = {}
  for i = 1, math.random(1, 14) do t[#t + 1] = atoms[math.random(#atoms)] end
  return table.concat(t)
end
local vals = {function() return rs() end, function() return math.random(-5, 40) end,
  function() return {math.random(0, 9), {math.random(0, 9), cute._}} end, function() return cute._ end,
  function() return cute.layout({math.random(1, 6), math.random(1, 6)}, {math.random(0, 9), math.random(-3, 9)}) end,
  function() return 1 << 62 end, function() return {} end, function() local t = {}; t[1] = t; return t end,
  function() return 2.5 end, function() return nil end, function() return cute.swizzle(2, 1, 3) end}
local names = {}
for k, v in pairs(cute) do
  if type(v) == "function" and k ~= "print_layout" then names[#names + 1] = k end
end
table.sort(names)
local ok_n, err_n = 0, 0
for it = 1, 6000 do
  local f = cute[names[math.random(#names)]]
  local args = {}
  for i = 1, math.random(0, 3) do args[i] = vals[math.random(#vals)]() end
  local ok, r = pcall(f, table.unpack(args, 1, 3))
  if not ok and type(r) ~= "string" then error("non-string error from cute." .. tostring(f)) end
  if ok then
    ok_n = ok_n + 1
    if type(r) == "userdata" then
      pcall(tostring, r); pcall(function() return #r end)
      local mt = getmetatable(r)
      if mt and mt.__scene then
        pcall(viz.text, r, {color = math.random(2) == 1, max_rows = math.random(1, 10)})
        pcall(viz.dot, r, {max_cols = math.random(1, 300), scheme = ({"warp", "bank", "device", "x"})[math.random(4)]})
      end
      pcall(r, math.random(-2, 20)); pcall(r, {math.random(0, 3), cute._})
    end
  else err_n = err_n + 1 end
end
-- every failure must be a readable message, never a bare error object
print(("%d calls returned, %d raised errors"):format(ok_n, err_n))
print(("%d passed, 0 failed"):format(ok_n + err_n))

-- test_axe_robust.lua - random and hostile arguments to every axe function: errors, never a crash.
math.randomseed(tonumber(os.getenv("TESSEL_SEED") or "") or 11)
local atoms = {"S", "R", "[", "]", "(", ")", ",", ":", "@", "+", "-", "lane", "warp", "m", "gpuid", "0", "1", "2",
  "3", "4", "-1", "8", "16", "99999999999", "9223372036854775807", "1152921504606846976", " ", "x_y", "@@"}
local function rs()
  local t = {}
  for i = 1, math.random(1, 16) do t[#t + 1] = atoms[math.random(#atoms)] end
  return table.concat(t)
end
local good = {"S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp", "S[(4,4):(4,1)]",
  "S[(2,2):(8,2)]", "S[16:1]", "S[(2,3):(-1,2@warp)] + R[(2,2):(1@lane,-3@lane)] + 3@lane",
  "S[(1048576,1048576):(1048576,1)] + R[1024:1@warp]", "S[(2,2):(576460752303423487,1)]"}
local function rlayout()
  local L = axe.layout(good[math.random(#good)])
  if math.random(2) == 1 then
    local ok, r = pcall(axe.with_shape, L, {math.random(1, 8), math.random(1, 8)})
    if ok then return r end
  end
  return L
end
local vals = {rs, function() return good[math.random(#good)] end, rlayout, rlayout,
  function() return math.random(-5, 40) end, function() return {math.random(0, 9), math.random(1, 9)} end,
  function() return {{math.random(0, 4), math.random(0, 8)}, {math.random(-1, 4), math.random(0, 20)}} end,
  function() return {warp = math.random(0, 10), lane = math.random(0, 31)} end,
  function() return {{"gpuid", 2}, {"gpuid", math.random(0, 3)}} end, function() return {"S(0)", "R"} end,
  function() return 1 << 62 end, function() return {} end, function() local t = {}; t[1] = t; return t end,
  function() return 2.5 end, function() return nil end, function() return "warp" end,
  function() return cute.layout("(4,2):(1,4)") end}
local names = {}
for k, v in pairs(axe) do
  if type(v) == "function" then names[#names + 1] = k end
end
table.sort(names)
local ok_n, err_n = 0, 0
for it = 1, 5000 do
  local f = axe[names[math.random(#names)]]
  local args = {}
  for i = 1, math.random(0, 4) do args[i] = vals[math.random(#vals)]() end
  local ok, r = pcall(f, table.unpack(args, 1, 4))
  if not ok and type(r) ~= "string" then error("non-string error from an axe function") end
  if ok then
    ok_n = ok_n + 1
    if type(r) == "userdata" then
      pcall(tostring, r); pcall(function() return #r end)
      if getmetatable(r) and getmetatable(r).__scene then
        local o = {color = math.random(2) == 1, max_rows = math.random(1, 10), axis = ({"warp", "m", "zz"})[math.random(3)]}
        pcall(viz.text, r, o)
        if math.random(8) == 1 then pcall(viz.dot, r, o) end
      end
      pcall(r, math.random(-2, 20)); pcall(r, math.random(0, 3), math.random(0, 3))
    end
  else err_n = err_n + 1 end
end
print(("%d calls returned, %d raised errors"):format(ok_n, err_n))
print(("%d passed, 0 failed"):format(ok_n + err_n))

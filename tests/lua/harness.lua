-- harness.lua - what every Lua test file shares: named checks, value and error assertions, the summary.
--   local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")
local passed, failed = 0, 0

-- run f as one named check; a failure is reported and counted, the file goes on
local function check(name, f)
  local ok, err = pcall(f)
  if ok then
    passed = passed + 1
  else
    failed = failed + 1
    io.stderr:write("FAIL ", name, ": ", tostring(err), "\n")
  end
end

-- got and want compare by their tostring, so notation strings, numbers and values mix
local function eq(got, want, what)
  if tostring(got) ~= tostring(want) then
    error(string.format("%s: got %s, want %s", what or "value", tostring(got), tostring(want)), 2)
  end
end

-- f must raise an error whose message contains every given fragment
local function raises(f, ...)
  local ok, err = pcall(f)
  if ok then error("expected an error", 2) end
  for _, frag in ipairs({...}) do
    if not tostring(err):find(frag, 1, true) then
      error(string.format("error %q lacks %q", tostring(err), frag), 2)
    end
  end
end

-- print the summary the Makefile shows and fail the run when a check failed
local function finish()
  print(string.format("%d passed, %d failed", passed, failed))
  if failed > 0 then os.exit(1) end
end

return check, eq, raises, finish

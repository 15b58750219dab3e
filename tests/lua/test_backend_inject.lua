-- test_backend_inject.lua - issue 17: no user string reaches a command line or the emitted code
-- unchecked. Names are checked where they are made, names in the emitter's own namespace or a
-- dialect's keywords are renamed, the compiler runs without a shell, exports write only their
-- own files.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local hostile = {
  'x */ int evil; /*', 'a"; system("touch PWNED"); "', "$(touch PWNED)", "`touch PWNED`",
  "../../etc/passwd", "a\nb", "x y", "", string.rep("a", 64), "é",
}

-- a scratch directory of this test's own, under the temporary directory
local tmp = (os.getenv("TMPDIR") or "/tmp") .. "/tessel_inject_" .. tostring(os.time()) .. "_" ..
            tostring(math.random(1 << 30))
assert(os.execute("mkdir -p '" .. tmp .. "'"))

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

local function no_pwned()
  for _, d in ipairs{".", tmp, os.getenv("TMPDIR") or "/tmp"} do
    assert(not exists(d .. "/PWNED"), "a command ran: " .. d .. "/PWNED exists")
  end
end

check("hostile buffer, stage, loop and parameter names are refused where they are made", function()
  for _, nm in ipairs(hostile) do
    local k = kernel.new()
    raises(function() k:input(nm, "float32", {4}) end, "buffer:", "is not a name")
    local X = k:input("X", "float32", {4})
    local Y = k:output("Y", "float32", {4})
    raises(function() k:stage(nm, function() Y[0] = X[0] end) end, "stage:", "is not a name")
    raises(function()
      k:stage("s", function() for i in kernel.range(4, {name = nm}) do Y[i] = X[i] end end)
    end, "kernel.range:", "is not a name")
    raises(function() tensor.param(nm, {4}) end, "tensor.param:", "is not an identifier")
  end
end)

check("names in the emitter's namespace or a dialect's keywords are renamed, and compile", function()
  for _, nm in ipairs{"tessel_kernel", "tessel_maxf", "tessel_launch", "__x", "_X", "for", "int",
                      "main", "restrict", "float", "kernel", "__global__", "threadIdx", "stage"} do
    local k = kernel.new()
    local X = k:input(nm, "float32", {4})
    local Y = k:output("Y", "float32", {4})
    k:stage(nm, function()
      for i in kernel.range(4, {name = nm}) do Y[i] = kernel.max(X[i] * 2, X[i]) end
    end)
    for _, d in ipairs{"cuda", "opencl"} do assert(#k:source(d) > 0) end
    local got = k:run({[nm] = tensor.arange(4):cast("float32")}, {backend = "c"}):tolist()
    eq(table.concat(got, ","), "0.0,2.0,4.0,6.0", nm)
  end
  local k = kernel.new()
  local X = k:input("tessel_maxf", "float32", {4})
  local Y = k:output("Y", "float32", {4})
  k:stage("tessel_kernel", function()
    for i in kernel.range(4, {name = "tessel_i"}) do Y[i] = kernel.max(X[i], 0) end
  end)
  local src = k:source("c")
  assert(src:find("k_tessel_kernel(const float *restrict k_tessel_maxf, float *restrict Y)", 1, true), src)
  assert(src:find("Y[k_tessel_i] = tessel_maxf(k_tessel_maxf[k_tessel_i], 0.0f);", 1, true), src)
end)

local function small()
  local x = tensor.param("x", {4, 8})
  return kernel.lower(x:softmax(1)), {x = tensor.rand({4, 8}, {seed = 1})}
end

check("cc and flags reach the compiler as one argument each, through no shell", function()
  local k, b = small()
  for _, cc in ipairs{"cc; touch PWNED", "$(touch PWNED)", "`touch PWNED`", "cc && touch PWNED"} do
    raises(function() k:run(b, {backend = "c", cc = cc}) end, "jit: the C compiler", "is not in PATH")
  end
  for _, f in ipairs{"$(touch PWNED)", "; touch PWNED", "`touch PWNED`", "|touch PWNED"} do
    -- the compiler sees the string as a file name or an option, and fails on it
    raises(function() k:run(b, {backend = "c", flags = {f}}) end, "jit:")
  end
  no_pwned()
end)

check("an export writes its own files into the directory given, whatever its name", function()
  local k = small()
  local dir = tmp .. "/a dir; $(touch PWNED) 'q' \"d\""
  local d, files = k:export("c", dir)
  eq(d, dir, "dir")
  for _, f in ipairs(files) do
    assert(not f:find("/", 1, true), "a file name with a slash: " .. f)
    assert(exists(dir .. "/" .. f), "missing " .. f)
  end
  no_pwned()
end)

check("TMPDIR is a directory to make a private one in, not a command", function()
  local script = tmp .. "/jit.lua"
  local f = assert(io.open(script, "w"))
  f:write([[
local x = tensor.param("x", {2, 3})
local k = kernel.lower(x:softmax(1))
local ok, err = pcall(function() return k:run({x = tensor.rand({2, 3}, {seed = 2})}, {backend = "c"}) end)
print(ok and "ran" or ("refused: " .. tostring(err)))
]])
  f:close()
  local bad = tmp .. "/t; touch PWNED"
  local p = assert(io.popen("TMPDIR='" .. bad .. "' " .. (arg[-1] or "./tessel") .. " '" .. script .. "' 2>&1"))
  local out = p:read("a")
  p:close()
  -- the directory does not exist: the run is refused with a message, or made under it when it does
  assert(out:find("ran", 1, true) or out:find("jit: cannot make a private directory", 1, true), out)
  no_pwned()
end)

os.execute("rm -rf '" .. tmp .. "'")
finish()

-- test_fuzz_findings.lua - the fuzzers' findings in the Lua API (fuzz/FINDINGS.md), each kept
-- fixed: the minimized input gives a clean error or the right value. Under `make test
-- SANITIZE=1` a leak or undefined behaviour here fails the run.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

check("F1: a tiler with a nested tuple after a tuple-shaped layout is read whole", function()
  eq(cute.logical_divide("(4,4):(4,1)", "((2,2):(1,2),(2))"), "(((2,2),1),((2,2))):(((4,8),0),((1,2)))")
  eq(cute.logical_divide("(4,4):(4,1)", {"(2,2):(1,2)", {2}}), "(((2,2),1),((2,2))):(((4,8),0),((1,2)))")
  raises(function() cute.tiled_divide("9:1", {"(8,8):(8,1)", {7, 2}}) end,
         "the tiler ((8,8):(8,1),(7,2)) has 2 modes but the layout 9:1 has only 1")
  raises(function() cute.logical_divide("(8,8):(8,1)", "(_4,(2),(8,8):(8,1),(4,8))") end,
         "the tiler (4,(2),(8,8):(8,1),(4,8)) has 4 modes")
end)

check("F5: a stride of math.mininteger is refused, not negated", function()
  raises(function() cute.layout({2}, {math.mininteger}) end, "make_layout:", "has a stride of -2^63")
  raises(function() cute.layout({1}, {math.mininteger}) end, "has a stride of -2^63")
  raises(function() cute.layout({2}, {math.mininteger + 1}) end, "is too large")
  eq(cute.layout({1}, {math.mininteger + 1}), "(1):(-9223372036854775807)")
end)

check("F6: t:copy(devices) with a bad device raises and leaks nothing", function()
  raises(function() tensor.arange(4):copy({"CPU:0", 5}) end, "copy: device 2 is not a name")
  raises(function() tensor.arange(4):copy({"CPU:0", "a,b"}) end, "copy: device 2 is not a name")
  eq(tensor.arange(4):copy({"CPU:0", "CPU:1"}):tolist()[4], 3)
end)

finish()

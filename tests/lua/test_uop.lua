-- test_uop.lua - every binding of the `uop` table, with values, printed code and error messages.
local check, eq, raises, finish = dofile(arg[0]:match("^(.-)[^/]*$") .. "harness.lua")

local i = uop.var("i", 0, 63)
local j = uop.var("j", 0, 7)
local n = uop.var("n", -8, 8)

check("build and print", function()
  eq(i * 4 + 1, "i*4 + 1")
  eq(3 + i, "i + 3")                     -- constants go right in commutative ops
  eq(-i, "-i")
  eq(i // 8 % 2, "i//8%2")
  eq(uop.min(i, j), "min(i, j)")
  eq(uop.where(uop.lt(i, 3), i, j), "where(i < 3, i, j)")
  eq(uop.le(i, 3), "i < 4")
  eq(uop.ge(i, j), "j < i + 1")
  eq(uop.gt(i, j), "j < i")
  eq(uop.ne(i, 2), "i != 2")
  eq(uop.eq(i, 2), "i == 2")
  eq(i & 7 | j, "(i & 7) | j")
  eq(i ~ j, "i ^ j")
  eq(i << 2 >> 1, "(i << 2) >> 1")
  eq(uop.cast(i, "int32"), "int32(i)")
  eq(uop.const(5, "int32").dtype, "int32")
  eq(uop.const(true), "true")
  eq(i * 1 + 0, "i")                       -- constructors fold the trivial cases
  eq(uop.const(6) * 7, "42")
end)

check("fields and equality", function()
  local e = i * 4 + j
  eq(e.op, "add"); eq(e.dtype, "index"); eq(#e.src, 2); eq(e.src[1], "i*4")
  eq(uop.const(9).value, 9); eq(i.name, "i")
  assert(e == i * 4 + j)
  assert(e ~= j + i * 4)
  assert(e:simplify() == (j + i * 4):simplify())
end)

check("simplify, ops, range", function()
  local e = (j * 8 + i % 8) // 8 + i // 8 * 8 + i % 8
  eq(e:simplify(), "i + j")
  eq(e:ops(), 9); eq(e:simplify():ops(), 1)
  local lo, hi = e:range(); eq(lo, 0); eq(hi, 70)
  eq(((i * 4 + j * 4) + 8):simplify(), "(i + j + 2)*4")
  eq((i * 6 + 4) // 4 .. "", "(i*6 + 4)//4")
  eq(((i * 6 + 4) // 4):simplify(), "(i*3 + 2)//2")
  eq(((i + 1) * j - j):simplify(), "i*j")
  eq((i + j):normalize(), "i + j")
  eq(((i + j) * (j + 1)):expand():normalize(), "i + j + i*j + j*j")
  local tree_ops, dag_ops = ((i + j) * (i + j)):ops()
  eq(tree_ops, 3); eq(dag_ops, 2)
end)

check("eval and equivalence", function()
  local e = i // 8 * 8 + i % 8
  eq(e:eval{i = 13}, 13); eq(e{i = 13}, 13)
  eq(uop.lt(i, 3):eval{i = 2}, true)
  eq(((n - 5) // 4):eval{n = -8}, -4)
  eq(((n - 5) % 4):eval{n = -8}, 3)
  eq(uop.equivalent(e, i), true)
  local ok, why, at = uop.equivalent(i % 8, i & 3)
  eq(ok, false); eq(why, "i=4: a = 4, b = 0"); eq(at.i, 4)
  raises(function() return e:eval{} end, "no value for variable i")
  raises(function() return e:eval{i = 64} end, "outside its range [0, 63]")
  raises(function() return (i // (n)):eval{i = 1, n = 0} end, "division by zero")
  raises(function() return uop.equivalent(uop.var("p", 0, 1 << 30), i) end, "more than 4194304 points")
  raises(function() return e:eval{i = "x"} end, "is not an integer")
  local v = e:vars(); eq(#v, 1); eq(v[1].name, "i"); eq(v[1].max, 63)
end)

-- Every printed dialect evaluates to the evaluator's value: Lua by load(), the others by golden text.
check("printers", function()
  local exprs = {(n - 5) // 4, (n * 3 + 1) % 5, uop.min(n, j) * 2 - uop.max(i, 3),
                 uop.where(uop.lt(n, 0), -n, n + 1), i ~ ((i & 56) >> 3), n >> 1, -(n // 3)}
  for _, e in ipairs(exprs) do
    local f = assert(load("local i, j, n = ... return " .. e:lua()))
    for nv = -8, 8 do
      for iv = 0, 63, 7 do
        local want = e:eval{i = iv, j = 3, n = nv}
        eq(f(iv, 3, nv), want, e:lua() .. " at i=" .. iv .. " n=" .. nv)
      end
    end
  end
  local e = (n - 5) // 4
  eq(e:c(), "((n + 11) / 4 - 4)")
  eq(e:python(), "(n - 5) // 4")
  eq(e:lua(), "(n - 5) // 4")
  eq((i // 4):c(), "i / 4")
  eq(uop.min(i, j):cuda(), "min(i, j)")
  eq(uop.min(i, j):c(), "(i < j ? i : j)")
  eq(uop.where(uop.lt(i, 3), i, j):python(), "(i if i < 3 else j)")
  eq(uop.where(uop.lt(i, 3), i, j):triton(), "tl.where(i < 3, i, j)")
  eq((i + (1 << 40)):opencl(), "i + 1099511627776L")
  eq(e:print("python"), "(n - 5) // 4")
  raises(function() return e:print("fortran") end, "unknown dialect 'fortran'")
end)

check("show draws the tree", function()
  local t = uop.tree(i * 4 + 3)
  assert(t:find("+  [3, 255]", 1, true), t)
  assert(t:find("i [0, 63]", 1, true), t)
  local mt = getmetatable(i)
  assert(mt.__show(i * 4, {}):find("*", 1, true))
end)

check("layouts lower to expressions", function()
  local L = cute.layout("((2,4),(3,8)):((24,1),(8,2))")
  local e = L:expr()
  eq(e, "i//24*2 + i%2*24 + i//2%4 + i//8%3*8")
  eq(e:ops(), 12); eq(L:expr{raw = true}:ops(), 15)
  for x = 0, #L - 1 do eq(e{i = x}, L(x), "L(" .. x .. ")") end
  eq(L:expr{modes = true}, "i0*24 + i1 + i2*8 + i3*2")
  eq(cute.expr("(8,4):(1,8)", "k"), "k")
  local S = cute.composition(cute.swizzle(3, 4, 3), "(8,64):(64,1)")
  local s = S:expr{modes = true}
  eq(s, "(i0*64 + i1) ^ (i0//2*16)")
  local s1 = S:expr()
  for x = 0, #S - 1, 7 do eq(s1{i = x}, S(x), "S(" .. x .. ")") end
  raises(function() return L:expr{name = "9x"} end, "is not a variable name")
end)

check("errors name the operation", function()
  raises(function() return i / 2 end, "use // (floor division)")
  raises(function() return i < j end, "uop.lt")
  raises(function() return i + 1.5 end, "uop +", "not an integer")
  raises(function() return i + {} end, "uop +", "got table")
  raises(function() return uop.var("1i", 0, 3) end, "is not a name")
  raises(function() return uop.var("i", 3, 0) end, "empty range")
  raises(function() return uop.var("i", 0) end, "empty range")
  eq(select(2, uop.var("t", 32):range()), 31)
  raises(function() return uop.const(1 << 40, "int32") end, "does not fit int32")
  raises(function() return uop.cast(i, "float128") end, "unknown dtype")
  raises(function() return uop.le(i, math.maxinteger) end, "largest integer")
  raises(function() return i // 0 end, "uop //: division by zero")
  raises(function() return i % (j - j) end, "uop %: division by zero")
  raises(function() return i << 70 end, "uop <<: shift by 70 is outside 0..63")
  raises(function() return i >> -1 end, "uop >>: shift by -1")
  eq(i // j, "i//j")                -- a divisor that may be 0 stays
end)

-- The DAG picture: each distinct operation once, constants once per use.
check("pictures", function()
  local x = uop.var("x", 0, 15)
  local s = x // 4 + x % 4 * 8                   -- x used three times, one node
  local dot = viz.dot(s)
  local function count(p) local n = 0; for _ in dot:gmatch(p) do n = n + 1 end; return n end
  eq(count("shape=ellipse"), 1)                  -- the variable
  eq(count("shape=box"), 4)                      -- //, %, *, +
  eq(count("shape=plaintext"), 3)                -- 4, 4, 8
  eq(count(" %-> "), 8)
  assert(dot:find('label="x\\n[0, 15]"', 1, true), dot)
  assert(dot:find('label="0"', 1, true))        -- // and % number their operands
  assert(viz.text(s):find("+", 1, true))        -- show keeps the tree
  local svg = viz.render(s, "svg")
  eq(select(2, svg:gsub('class="node"', "")), 8)
end)

-- Many expressions: the arena starts new generations and old ones are collected.
check("arenas are bounded", function()
  local keep = i + 1
  for k = 1, 70000 do local _ = (i * k + j) // 3 end
  collectgarbage(); collectgarbage()
  local nodes = uop.stats()
  assert(nodes < 65536 * 2, "nodes " .. nodes)
  eq(keep + 1, "i + 1 + 1")           -- an expression from an old arena still works
  eq((keep + 1):simplify(), "i + 2")
end)

finish()

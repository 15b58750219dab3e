-- uop_tour.lua - symbolic index expressions: build, simplify, print for each language, check, lower layouts.
local function title(s)
  print()
  print(("== %s "):format(s) .. ("="):rep(math.max(0, 72 - #s)))
end

local function say(code)
  local f = assert(load("return " .. code))
  local results = table.pack(f())
  local out = {}
  for k = 1, results.n do out[k] = tostring(results[k]) end
  print(("> %s\n%s"):format(code, table.concat(out, "\t")))
end

title("Variables carry ranges; operators build hash-consed expressions")
i = uop.var("i", 0, 63)
j = uop.var("j", 0, 7)
say('i, j, i:range()')
say('i * 4 + j + 1')
say('(i * 4 + j + 1):range()')

title("Simplification proves its side conditions from the ranges (LEGO's Table II)")
say('((j * 8 + i % 8) % 8):simplify()          -- (d*q + r) % d -> r % d')
say('((j * 8 + i % 8) // 8):simplify()         -- (d*q + r) / d -> q when 0 <= r < d')
say('(i % 8 // 8):simplify(), (j // 8):simplify(), (j % 8):simplify()')
say('(i // 8 * 8 + i % 8):simplify()          -- a*(x/a) + x%a -> x')
e = (j * 8 + i % 8) // 8 + i // 8 * 8 + i % 8
say('e, e:simplify(), (e:ops()), (e:simplify():ops())')
say('uop.equivalent(e, e:simplify())')
local same, why = uop.equivalent(i % 8, i & 3)
print("> uop.equivalent(i % 8, i & 3)\n" .. tostring(same) .. "\t" .. why)

title("Floor division and modulo, printed correctly for every language")
n = uop.var("n", -8, 8)
f = (n - 5) // 4
for _, d in ipairs({"c", "cuda", "opencl", "python", "triton", "lua"}) do
  print(("%-7s %s"):format(d, f:print(d)))
end
print("-- with non-negative operands the plain operator is enough:")
say('(i // 4 + i % 4):c()')
say('f:eval{n = -8}, ((n - 5) % 4):eval{n = -8}')

title("The expression tree")
show(i * 4 + (j + 1) // 2)

title("Layouts lower to index expressions")
L = cute.layout("((2,4),(3,8)):((24,1),(8,2))")
say('L:expr{raw = true}')
say('L:expr(), (L:expr():ops())')
say('L:expr{modes = true}')
S = cute.composition(cute.swizzle(3, 4, 3), "(8,64):(64,1)")
say('S:expr{modes = true, raw = true}')
say('S:expr{modes = true}')
say('S:expr{modes = true}:cuda()')
print()
print("More: docs/expressions.md and help(uop) in the REPL.")

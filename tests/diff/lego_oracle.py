# lego_oracle.py - differential check of tessel's lego against pip lego-layout (LEGO's own package).
# Not run by `make test` (it needs Python >= 3.12 and lego-layout); run by hand:
#   python3.12 -m venv /tmp/v && /tmp/v/bin/pip install lego-layout
#   /tmp/v/bin/python tests/diff/lego_oracle.py ./tessel [count] [seed]
import json, random, subprocess, sys
from lego import OrderBy, GroupBy, RegP, GenP, Row, antidiag

tessel = sys.argv[1] if len(sys.argv) > 1 else "./tessel"
count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)

def split(n, maxk):
    out = []
    while n > 1 and len(out) < maxk - 1:
        f = rnd.choice([d for d in range(2, n + 1) if n % d == 0])
        out.append(f); n //= f
        if rnd.random() < 0.3: break
    if n > 1 or not out: out.append(n)
    return out

def perm(n):
    d = split(n, 3)
    c = rnd.random()
    if c < 0.2 and len(d) == 2 and d[0] == d[1]:
        k = d[0]
        # apply only: LEGO's MLIR path wants a symbolic inverse; the stub is never used by apply
        return (GenP(d, lambda x, k=k: antidiag(k, x), lambda f, k=k: (f // k, f % k)),
                'lego.GenP({%s}, "antidiagonal")' % ",".join(map(str, d)), False)
    if c < 0.4:
        def f(x, d=d):
            r = 0
            for xi, di in zip(x, d): r = r * di + (di - 1 - xi)
            return r
        def g(v, d=d):
            out = []
            for di in reversed(d): out.append(di - 1 - v % di); v = v // di
            return tuple(reversed(out))
        return GenP(d, f, g), 'lego.GenP({%s}, "reverse")' % ",".join(map(str, d)), True
    p = list(range(len(d))); rnd.shuffle(p)
    return RegP(d, p), "lego.RegP({%s}, {%s})" % (",".join(map(str, d)), ",".join(map(str, p))), True

def order(n):
    parts = [perm(k) for k in split(n, 3)]
    return OrderBy(*[p[0] for p in parts]), "lego.OrderBy(%s)" % ", ".join(p[1] for p in parts), all(p[2] for p in parts)

bad = 0
for it in range(count):
    n = rnd.choice([4, 6, 8, 12, 16, 24, 36])
    chain = [order(n) for _ in range(rnd.randint(1, 3))]
    dims = split(n, 3)
    G = GroupBy([dims], [o[0] for o in chain])   # objects in written order; apply runs the last first
    lua = "lego.GroupBy({%s}, %s)" % (",".join(map(str, dims)), ", ".join(o[1] for o in chain))
    invok = all(o[2] for o in chain)
    import itertools
    coords = list(itertools.product(*[range(d) for d in dims]))
    want = [int(G.apply(*x)) for x in coords]
    script = "local G = %s\nlocal t = {}\nfor a = 0, #G - 1 do t[#t+1] = G:apply(a) end\nprint(table.concat(t, ','))\n" % lua
    if invok:
        script += "local u = {}\nfor k = 0, #G - 1 do u[#u+1] = table.concat({G:inv(k)}, ' ') end\nprint(table.concat(u, ','))\n"
    out = subprocess.run([tessel, "-e", script], capture_output=True, text=True).stdout.split("\n")
    got = [int(v) for v in out[0].split(",")]
    if got != want:
        bad += 1; print("APPLY DIFFERS", lua, want, got)
    if invok:
        wantinv = [" ".join(str(int(v)) for v in G.inv(k)) for k in range(n)]
        if out[1].split(",") != wantinv:
            bad += 1; print("INV DIFFERS", lua, wantinv, out[1])
# LEGO's fluent TileBy, which stripmines into each multi-level OrderBy
fixed = [
    (OrderBy(Row(4,4,4), Row(2,2,2)).TileBy([4,4,4], [2,2,2]),
     "lego.OrderBy(lego.Row(4,4,4), lego.Row(2,2,2)):TileBy({4,4,4}, {2,2,2})", [4,4,4,2,2,2]),
    (OrderBy(Row(8,8,8)).TileBy([4,4,4], [2,2,2]),
     "lego.OrderBy(lego.Row(8,8,8)):TileBy({4,4,4}, {2,2,2})", [4,4,4,2,2,2]),
    (OrderBy(RegP([2,2],[1,0]), GenP([3,3], lambda x: (2-x[0])*3 + 2-x[1], lambda k: (2 - k//3, 2 - k%3))).TileBy([2,2],[3,3]),
     'lego.OrderBy(lego.RegP({2,2}, {1,0}), lego.GenP({3,3}, "reverse")):TileBy({2,2}, {3,3})', [2,2,3,3]),
]
import itertools
for L, lua, dims in fixed:
    want = [int(L.apply(*x)) for x in itertools.product(*[range(d) for d in dims])]
    script = "local G = %s\nlocal t = {}\nfor a = 0, #G - 1 do t[#t+1] = G:apply(a) end\nprint(table.concat(t, ','))\n" % lua
    got = [int(v) for v in subprocess.run([tessel, "-e", script], capture_output=True, text=True).stdout.split(",")]
    count += 1
    if got != want:
        bad += 1; print("TILEBY DIFFERS", lua)
print("%d passed, %d failed" % (count - bad, bad))

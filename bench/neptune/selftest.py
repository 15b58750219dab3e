#!/usr/bin/env python3
"""bench/neptune/selftest.py - tests bench/neptune/bench.py end to end without a GPU: writes fake
case folders whose kernel.py is a hand-written naive Triton attention (one program per block of
16 query rows, the whole of K and V loaded at once, tl.dot for both products), runs
`bench.py --cpu` on them under TRITON_INTERPRET=1, and checks that every right kernel passes and
that every planted fault is caught: a missing mask or SoftCap (over the tolerance), an output never written
(NaN), a kernel.py that does not import, inputs too large for --cpu (skipped). Then checks
ops.py's peers (SDPA, the unfused expression, FlexAttention run eagerly) against ops.reference
on the CPU, on inputs large enough that SoftCap and ALiBi change the result.

Run from anywhere: python3 bench/neptune/selftest.py [dir]   (dir keeps the cases; default a
temporary folder, removed at the end). Exits 1 on the first failure, with the bench.py output.
"""
import os
import subprocess
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))

# the kernel of every fake case: a naive attention for shapes small enough to hold all of K and
# V in one program. OP: 0 global, 1 causal (gqa too: GQA is the head mapping), 2 alibi,
# 3 softcap, 4 window. The shapes are baked in, as the exporter bakes them.
KERNEL = '''import math

import triton
import triton.language as tl

B, H, HKV, S_Q, S_KV, D, WINDOW, OP = {B}, {H}, {Hkv}, {S_q}, {S_kv}, {D}, {window}, {code}
BM = 16


@triton.jit
def attention(Q, K, V, O, scale, H: tl.constexpr, HKV: tl.constexpr, S_Q: tl.constexpr,
              S_KV: tl.constexpr, D: tl.constexpr, WINDOW: tl.constexpr, OP: tl.constexpr,
              BM: tl.constexpr):
    m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    kvh = h // (H // HKV)
    rows = m * BM + tl.arange(0, BM)
    keys = tl.arange(0, S_KV)
    d = tl.arange(0, D)
    live = rows < S_Q
    q = tl.load(Q + (bh * S_Q + rows[:, None]) * D + d[None, :], mask=live[:, None], other=0.0)
    kv = (b * HKV + kvh) * S_KV * D + keys[:, None] * D + d[None, :]
    k = tl.load(K + kv)
    v = tl.load(V + kv)
    s = tl.dot(q, tl.trans(k)) * scale
    pos = rows[:, None] + (S_KV - S_Q)
    j = keys[None, :]
    if OP == 2:
        s += tl.exp2(-8.0 * (h + 1).to(tl.float32) / H) * (j - pos).to(tl.float32)
    if OP == 3:
        s = 50.0 * (2.0 * tl.sigmoid(s / 25.0) - 1.0)      # 50 tanh(s / 50)
    if OP != 0:
        keep = j <= pos
        if OP == 4:
            keep = keep & (j > pos - WINDOW)
        s = tl.where(keep, s, float("-inf"))
    p = tl.exp(s - tl.max(s, 1)[:, None])
    p = p / tl.sum(p, 1)[:, None]
    o = tl.dot(p.to(tl.float16), v)
    tl.store(O + (bh * S_Q + rows[:, None]) * D + d[None, :], o.to(tl.float16), mask=live[:, None])


def tessel_launch(bufs):
    q, k, v, o = bufs
    if {skip_launch}:
        return
    grid = (triton.cdiv(S_Q, BM), B * H)
    attention[grid](q, k, v, o, 1.0 / math.sqrt(D), H=H, HKV=HKV, S_Q=S_Q, S_KV=S_KV, D=D,
                    WINDOW=WINDOW, OP=OP, BM=BM)
'''

CODES = {"global": 0, "causal": 1, "gqa": 1, "alibi": 2, "softcap": 3, "window": 4}

# name, op, mode, B, H, Hkv, S_kv, D, window, what bench.py --cpu must say about it
CASES = [
    ("causal_pf_s64", "causal", "pf", 1, 2, 2, 64, 16, 0, "ok"),
    ("global_pf_s64_d32", "global", "pf", 2, 2, 2, 64, 32, 0, "ok"),
    ("alibi_pf_s64", "alibi", "pf", 1, 4, 4, 64, 16, 0, "ok"),
    ("alibi_dc_s128", "alibi", "dc", 2, 4, 4, 128, 16, 0, "ok"),
    ("gqa_pf_s64", "gqa", "pf", 1, 4, 2, 64, 16, 0, "ok"),
    ("softcap_dc_s64", "softcap", "dc", 2, 8, 2, 64, 16, 0, "ok"),
    ("window_pf_s128", "window", "pf", 1, 2, 2, 128, 16, 32, "ok"),
    ("x_nomask_pf_s64", "causal", "pf", 1, 2, 2, 64, 16, 0, "over the tolerance"),
    ("x_nocap_dc_s64", "softcap", "dc", 2, 8, 2, 64, 16, 0, "over the tolerance"),
    ("x_unwritten_pf_s64", "causal", "pf", 1, 2, 2, 64, 16, 0, "NaN"),
    ("x_broken_pf_s64", "causal", "pf", 1, 2, 2, 64, 16, 0, "FAILED"),
    ("x_toobig_pf_s4096", "causal", "pf", 4, 16, 16, 4096, 128, 0, "skipped in --cpu mode"),
]


def write_case(root, name, op, mode, B, H, Hkv, S_kv, D, window):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    S_q = S_kv if mode == "pf" else 1
    code = 0 if "nomask" in name else 1 if "nocap" in name else CODES[op]
    src = KERNEL.format(B=B, H=H, Hkv=Hkv, S_q=S_q, S_kv=S_kv, D=D, window=window, code=code,
                        skip_launch="unwritten" in name)
    if "broken" in name:
        src = src.replace("def tessel_launch(bufs):", "def tessel_launch(bufs)")   # a syntax error
    with open(os.path.join(d, "kernel.py"), "w") as f:
        f.write(src)
    q, kv = [B, H, S_q, D], [B, Hkv, S_kv, D]
    with open(os.path.join(d, "case.py"), "w") as f:
        f.write("# written by bench/neptune/selftest.py\n")
        f.write("name = %r\nop = %r\nmode = %r\n" % (name, op, mode))
        f.write("B, H, Hkv, S_q, S_kv, D = %d, %d, %d, %d, %d, %d\n" % (B, H, Hkv, S_q, S_kv, D))
        if op == "window":
            f.write("window = %d\n" % window)
        f.write("params = {'BM': 16}\n")
        f.write("buffers = [(%r, 'input', 'global', 'float16', %r), (%r, 'input', 'global', 'float16', %r),\n"
                "           (%r, 'input', 'global', 'float16', %r), (%r, 'output', 'global', 'float16', %r)]\n"
                % ("q", q, "k", kv, "v", kv, "o", q))
        f.write("tol = 2e-2\n")
    return {"op": op, "mode": mode, "B": B, "H": H, "Hkv": Hkv, "S_q": S_q, "S_kv": S_kv,
            "D": D, "window": window}


def fail(msg, out=""):
    print(out)
    print("selftest: FAILED: " + msg)
    sys.exit(1)


def check_bench(root):
    cmd = [sys.executable, os.path.join(HERE, "bench.py"), "--cpu", root]
    print("$ " + " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    out = r.stdout + r.stderr
    # the progress line of each case: "<name>: ok (...)", "<name>: FAILED: ...", "<name>: skipped ..."
    said = {}
    for line in r.stdout.splitlines():
        name, _, rest = line.partition(": ")
        said.setdefault(name, "")
        said[name] += rest + "\n"
    tail = r.stdout.split("\n\n", 1)[-1]
    for name, *_, want in CASES:
        got = said.get(name, "")
        # a failure's progress line is FAILED and a traceback; its reason is in the table row
        row = [l for l in tail.splitlines() if l.startswith(name + " ")]
        text = got + "\n".join(row)
        if want not in text or (want != "ok" and text.startswith("ok")):
            fail("%s: expected %r, bench.py said %r" % (name, want, text.strip()), out)
    if r.returncode != 1:
        fail("bench.py exited %d, expected 1 (four planted failures)" % r.returncode, out)
    print(tail)
    print("bench.py --cpu: every right kernel passed and every planted fault was caught")


def check_ops(cases):
    """ops.py's peers and FLOP count against ops.reference, on the CPU"""
    sys.path.insert(0, HERE)
    import torch
    import ops
    warnings.filterwarnings("ignore", message=".*flex_attention called without torch.compile")
    torch.manual_seed(0)
    for name, case in cases:
        B, H, Hkv, S_q, S_kv, D = ops.shape_of(case)
        # as bench.py's second check: scores of std 20, where SoftCap's tanh matters
        q = (20 * torch.randn(B, H, S_q, D)).half()
        k = torch.randn(B, Hkv, S_kv, D).half()
        v = torch.randn(B, Hkv, S_kv, D).half()
        ref = ops.reference(case["op"], case, q, k, v)
        plain = ops.reference("causal" if case["op"] != "global" else "global", case, q, k, v)
        if case["op"] in ("alibi", "softcap", "window") and \
                float((ref - plain).norm() / ref.norm()) < 0.05:
            fail("%s: the reference barely differs from plain attention: the test says nothing" % name)
        builders = [("flex", lambda c, d: ops.flex_peer(c, d, compiled=False))] + \
            [(n, b) for n, b in ops.PEERS if n != "flex"]
        res = []
        for peer, build in builders:
            try:
                f = build(case, "cpu")
            except NotImplementedError as e:
                res.append("%s %s" % (peer, e))
                continue
            out = f(q, k, v).double()
            rel = float((out - ref).norm() / ref.norm())
            if not rel < 2e-2:
                fail("%s: peer %s is off the reference by %.3g" % (name, peer, rel))
            res.append("%s %.1e" % (peer, rel))
        i = torch.arange(S_q).view(S_q, 1)
        j = torch.arange(S_kv)
        keep = ops.keep_mask(case["op"], case, i, j)
        n = S_q * S_kv if keep is None else int(keep.sum())
        if ops.useful_flops(case) != 4 * B * H * D * n:
            fail("%s: useful_flops %d, the mask keeps %d pairs" % (name, ops.useful_flops(case), n))
        print("ops %-20s %s" % (name, ", ".join(res)))
    print("ops.py: every peer agrees with the reference")


def main():
    keep = sys.argv[1] if len(sys.argv) > 1 else None
    tmp = None if keep else tempfile.TemporaryDirectory(prefix="neptune_selftest_")
    root = keep or tmp.name
    made = []
    for name, op, mode, B, H, Hkv, S_kv, D, window, want in CASES:
        case = write_case(root, name, op, mode, B, H, Hkv, S_kv, D, window)
        if want == "ok":
            made.append((name, case))
    check_bench(root)
    check_ops(made)
    if tmp:
        tmp.cleanup()
    print("selftest: ok")


if __name__ == "__main__":
    main()

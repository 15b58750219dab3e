#!/usr/bin/env python3
"""bench/neptune/bench.py - checks and times the Triton kernels that bench/neptune/export.lua wrote
for Neptune's ten attention operators, against FlexAttention, SDPA and the unfused PyTorch
expression in the same run. Run on a machine with a CUDA GPU, PyTorch and Triton:

    python3 bench/neptune/bench.py [dir [pattern]]        (bench/neptune/run.sh exports first)
    python3 bench/neptune/bench.py --cpu [dir [pattern]]  (correctness only, no GPU needed)

dir defaults to bench/neptune/out; pattern, a Python regular expression, keeps the cases whose
folder names it matches (re.search). Each case is a folder dir/<case>/ holding kernel.py (a
Triton module defining tessel_launch(bufs), bufs the kernel's buffers as torch tensors in
kernel order) and case.py (the manifest: op, mode, B, H, Hkv, S_q, S_kv, D, window, params,
buffers, tol, flops, bytes). The operators' definitions, the float64 reference and the peers
are in bench/neptune/ops.py.

For each case, in folder order: inputs are drawn by torch.randn (seeded), outputs are poisoned
with NaN and temporaries zeroed; tessel_launch runs and its output is checked against the
float64 reference (relative error ||out - ref|| / ||ref|| under the case's tol, no NaN), twice,
on fresh inputs each time. Each peer is checked once the same way, then tessel's kernel and
every peer are timed by triton.testing.do_bench (CUDA events, median of the runs in 500 ms
after 100 ms of warm-up; do_bench clears the L2 before every timed run, so no run reads
another's inputs from the cache). tessel is timed twice, before and after the peers: the
spread of the two is the noise a ratio has to beat (METHOD.md), and the table shows their mean.
A last check after the timed runs catches a kernel that relies on state a run leaves behind.

The tables come last, one per operator and mode: times in ms, TFLOP/s (useful FLOPs, counted
from the definition: 4*B*H*D per kept (row, key) pair), the ratio best of (FlexAttention,
SDPA) / tessel (above 1: tessel is faster), and for decode the GB/s of K and V read against the
read ceiling, measured in this run as bench/gpu/read_ceiling.py does (a float32 sum and amax
over as many bytes as the case's K and V; the faster). Each table ends with the geomean of its
ratios, and the run with the geomean over all cases. A case that fails (kernel.py does not
import or compile, a wrong result) is a row with the reason; a peer that cannot run the
operator shows n/a, fail or wrong, with the reason under the table; the run goes on. The exit
status is 1 when a tessel kernel failed. A kernel that faults the device (an illegal address)
leaves the CUDA context unusable, so the cases after it fail too: rerun them with a pattern.

NEPTUNE_PEERS=sdpa,flex (a comma list, or none) times only those peers: FlexAttention compiles once
per case, which is most of a run's time.

--cpu: no GPU and no timing; TRITON_INTERPRET=1 is set before Triton is imported and each
kernel runs in Triton's interpreter on CPU tensors, checked against the reference on the CPU.
Shapes are the case's own (the kernel is generated for them); a case whose inputs take more
than 64 MiB is skipped with a message. Peers are not run (FlexAttention needs a GPU).
"""
import os
import sys

CPU = "--cpu" in sys.argv
if CPU:
    os.environ["TRITON_INTERPRET"] = "1"   # read when triton is imported: here, or by a kernel.py

import functools
import glob
import importlib.util
import math
import re
import runpy
import traceback

import torch
import triton
import triton.testing

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ops  # noqa: E402  (after the path is set)

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "float64": torch.float64, "int32": torch.int32, "int64": torch.int64}

CPU_INPUT_LIMIT = 64 << 20
Q_SCALE = 20.0

# the order of Table 1: prefill operators, then decode
GROUPS = [(op, "pf") for op in ("global", "causal", "alibi", "gqa", "softcap", "window")] + \
         [(op, "dc") for op in ("causal", "alibi", "gqa", "softcap")]


def do_bench(fn):
    return triton.testing.do_bench(fn, warmup=100, rep=500, return_mode="median")


def nbytes(shape, dtype):
    return math.prod(shape) * torch.empty((), dtype=DTYPES[dtype]).element_size()


def load_kernel(path, name):
    """kernel.py as a module of its own (Triton's jit reads the source back through the
    module's file, which runpy's namespace would not give it)"""
    spec = importlib.util.spec_from_file_location("neptune_" + re.sub(r"\W", "_", name), path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    if not hasattr(mod, "tessel_launch"):
        raise RuntimeError("kernel.py defines no tessel_launch")
    return mod


class Skip(Exception):
    """a case this mode does not run: a row with the reason, not a failure"""


class Wrong(RuntimeError):
    """an output that ran but is not the operator's: NaN left, or over the tolerance"""


class Case:
    def __init__(self, d, device):
        self.dir = d
        self.name = os.path.basename(d)
        self.device = device
        self.c = runpy.run_path(os.path.join(d, "case.py"))
        self.validate()
        inputs = sum(nbytes(b[4], b[3]) for b in self.c["buffers"] if b[1] == "input")
        if device == "cpu" and inputs > CPU_INPUT_LIMIT:
            raise Skip("skipped in --cpu mode: the inputs take %.0f MiB, over %d MiB"
                       % (inputs / 2**20, CPU_INPUT_LIMIT >> 20))
        self.bufs = []
        for name, role, scope, dtype, shape in (b[:5] for b in self.c["buffers"]):
            if scope != "global":        # shared or local: the kernel holds it, as in bench/gpu
                self.bufs.append(None)
                continue
            # temporaries start at zero, as tessel's exported code expects
            make = torch.zeros if role == "temp" else torch.empty
            self.bufs.append(make(shape, dtype=DTYPES[dtype], device=device))
        self.mod = load_kernel(os.path.join(d, "kernel.py"), self.name)

    def validate(self):
        """the manifest against the operator's contract, so that a mismatch reads as one"""
        c = self.c
        for key in ("op", "mode", "B", "H", "Hkv", "S_q", "S_kv", "D", "buffers", "tol"):
            if key not in c:
                raise RuntimeError("case.py has no %s" % key)
        if c["op"] not in ops.OPS:
            raise RuntimeError("case.py: op %r is not one of %s" % (c["op"], ", ".join(ops.OPS)))
        if c["mode"] == "pf" and c["S_q"] != c["S_kv"]:
            raise RuntimeError("case.py: prefill with S_q %d != S_kv %d" % (c["S_q"], c["S_kv"]))
        if c["mode"] == "dc" and c["S_q"] != 1:
            raise RuntimeError("case.py: decode with S_q %d != 1" % c["S_q"])
        if c["mode"] not in ("pf", "dc"):
            raise RuntimeError("case.py: mode %r is not pf or dc" % c["mode"])
        if c["H"] % c["Hkv"]:
            raise RuntimeError("case.py: H %d is not a multiple of Hkv %d" % (c["H"], c["Hkv"]))
        if c["op"] == "window" and "window" not in c:
            raise RuntimeError("case.py: op window with no window")
        B, H, Hkv, S_q, S_kv, D = ops.shape_of(c)
        want = {"q": [B, H, S_q, D], "k": [B, Hkv, S_kv, D], "v": [B, Hkv, S_kv, D],
                "o": [B, H, S_q, D]}
        ins = [i for i, b in enumerate(c["buffers"]) if b[1] == "input"]
        outs = [i for i, b in enumerate(c["buffers"]) if b[1] == "output"]
        if len(ins) != 3 or len(outs) != 1:
            raise RuntimeError("case.py: %d inputs and %d outputs, not q, k, v and o"
                               % (len(ins), len(outs)))
        # q, k, v, o by name where the manifest uses those names, else in kernel order
        names = {c["buffers"][i][0]: i for i in ins + outs}
        order = ins + outs
        self.idx = {n: names.get(n, order[x]) for x, n in enumerate(("q", "k", "v", "o"))}
        for n, i in self.idx.items():
            b = c["buffers"][i]
            if list(b[4]) != want[n] or b[3] != "float16":
                raise RuntimeError("case.py: buffer %s is %s %s, the contract says float16 %s"
                                   % (b[0], b[3], list(b[4]), want[n]))

    def qkv(self):
        return [self.bufs[self.idx[n]] for n in ("q", "k", "v")]

    def out(self):
        return self.bufs[self.idx["o"]]

    def fill(self, seed, q_scale=1.0):
        g = torch.Generator(device=self.device)
        g.manual_seed(seed)
        for t, scale in zip(self.qkv(), (q_scale, 1.0, 1.0)):
            t.copy_(scale * torch.randn(t.shape, generator=g, device=self.device, dtype=torch.float32))

    def launch(self):
        self.mod.tessel_launch(self.bufs)

    def sync(self):
        if self.device != "cpu":
            torch.cuda.synchronize()

    def reference(self):
        return ops.reference(self.c["op"], self.c, *self.qkv())

    def error(self, out, ref, who):
        """relative error of out against ref; raises on NaN or over the tolerance"""
        out = out.double()
        nan = int(torch.isnan(out).sum())
        if nan:
            raise Wrong("%s: %d of %d elements NaN (unwritten or wrong)" % (who, nan, out.numel()))
        rel = float(torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref))
        if not rel <= self.c["tol"]:
            raise Wrong("%s: relative error %.3g over the tolerance %.3g" % (who, rel, self.c["tol"]))
        return rel

    def check(self, seed, q_scale=1.0):
        """tessel's kernel on fresh inputs; returns its error and the reference"""
        self.fill(seed, q_scale)
        self.out().fill_(float("nan"))
        self.launch()
        self.sync()
        ref = self.reference()
        return self.error(self.out(), ref, "tessel"), ref

    def peers(self):
        """{peer: run(q, k, v)} for the peers that can run this operator, and {peer: reason}
        for the others"""
        run, why = {}, {}
        only = os.environ.get("NEPTUNE_PEERS")   # a comma list of peers to time, or "none"
        for name, build in ops.PEERS:
            if only is not None and name not in only.split(","):
                why[name] = "n/a: not asked for (NEPTUNE_PEERS=%s)" % only
                continue
            try:
                run[name] = build(self.c, self.device)
            except NotImplementedError as e:
                why[name] = str(e)
            except Exception as e:
                why[name] = "fail: " + first_line(e)
        return run, why


def first_line(e):
    """an exception in one line, its type named unless it is ours (Wrong says what it is)"""
    s = str(e).strip().splitlines()
    if isinstance(e, Wrong):
        return s[0][:160]
    return (type(e).__name__ + ": " + s[0] if s else type(e).__name__)[:160]


@functools.lru_cache(maxsize=None)
def read_ceiling(n):
    """GB/s of reading n bytes once, as bench/gpu/read_ceiling.py measures it: the faster of a
    float32 sum and amax over that many bytes"""
    x = torch.randn(n // 4, device="cuda")
    t = min(do_bench(lambda: x.sum()), do_bench(lambda: x.amax()))
    return n / t / 1e6


def run_case(d, device, timed):
    """one case: a result dict for the tables; timed False only checks tessel's kernel"""
    r = {"name": os.path.basename(d), "peer_ms": {}, "peer_why": {}}
    c = Case(d, device)
    r["op"], r["mode"] = c.c["op"], c.c["mode"]
    err1, _ = c.check(1)
    # scores of std 1 leave 50 tanh(s / 50) within 1e-3 of s, so a kernel without the cap would
    # pass: the second check makes q 20 times larger, where the cap changes the result
    err2, ref = c.check(2, Q_SCALE)
    r["err"] = max(err1, err2)
    flops = ops.useful_flops(c.c)
    if "flops" in c.c and abs(c.c["flops"] - flops) > 0.01 * flops:
        r["peer_why"]["note"] = ("case.py's flops %.4g differ from the definition's %.4g; the "
                                 "table uses the definition's" % (c.c["flops"], flops))
    if not timed:
        return r
    run, why = c.peers()
    r["peer_why"].update(why)
    q, k, v = c.qkv()
    for name, f in list(run.items()):   # each peer once against the reference of seed 2
        try:
            c.error(f(q, k, v), ref, name)
        except Exception as e:
            r["peer_why"][name] = ("wrong: " if isinstance(e, Wrong) else "fail: ") + first_line(e)
            del run[name]
    del ref
    t1 = do_bench(c.launch)
    for name, f in run.items():
        try:
            r["peer_ms"][name] = do_bench(lambda: f(q, k, v))
        except Exception as e:
            r["peer_why"][name] = "fail: " + first_line(e)
    t2 = do_bench(c.launch)
    c.check(3)
    r["ms"] = (t1 + t2) / 2
    r["spread"] = abs(t1 - t2) / min(t1, t2)
    r["tflops"] = flops / r["ms"] / 1e9
    best = [r["peer_ms"][p] for p in ("flex", "sdpa") if p in r["peer_ms"]]
    if best:
        r["best_tflops"] = flops / min(best) / 1e9
        r["ratio"] = min(best) / r["ms"]
    if r["mode"] == "dc":
        kv = ops.kv_bytes(c.c)
        r["kv_gbs"] = kv / r["ms"] / 1e6
        r["ceiling"] = read_ceiling(kv)
    return r


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def cell(r, peer):
    if peer in r["peer_ms"]:
        return "%.4f" % r["peer_ms"][peer]
    why = r["peer_why"].get(peer, "-")
    return why.split(":")[0] if why[:4] in ("n/a:", "fail", "wron") else "-"


def print_group(op, mode, rows, cpu):
    print("\n== %s (%s) ==" % (op, "prefill" if mode == "pf" else "decode"))
    if cpu:
        print("%-40s %9s  %s" % ("case", "rel err", "result"))
        for r in rows:
            if "reason" in r:
                print("%-40s %9s  %s" % (r["name"], "-", r["reason"]))
            else:
                print("%-40s %9.1e  ok" % (r["name"], r["err"]))
        return
    dc = mode == "dc"
    head = "%-40s %9s %5s %9s %9s %9s %8s %8s %7s %8s" % (
        "case", "tessel ms", "sprd%", "flex ms", "sdpa ms", "unfused", "TFLOP/s", "best TF", "ratio", "rel err")
    print(head + ("  %7s %7s" % ("KV GB/s", "of ceil") if dc else ""))
    for r in rows:
        if "reason" in r:
            print("%-40s %9s  %s" % (r["name"], "-", r["reason"]))
            continue
        line = "%-40s %9.4f %5.1f %9s %9s %9s %8.1f %8s %7s %8.1e" % (
            r["name"], r["ms"], 100 * r["spread"], cell(r, "flex"), cell(r, "sdpa"),
            cell(r, "unfused"), r["tflops"],
            "%.1f" % r["best_tflops"] if "best_tflops" in r else "-",
            "%.2fx" % r["ratio"] if "ratio" in r else "-", r["err"])
        if dc:
            line += "  %7.0f %6.0f%%" % (r["kv_gbs"], 100 * r["kv_gbs"] / r["ceiling"])
        print(line)
    g = geomean([r["ratio"] for r in rows if "ratio" in r])
    if g:
        print("%-40s %s" % ("geomean best peer / tessel", "%.2fx" % g))
    for r in rows:
        for peer, why in sorted(r.get("peer_why", {}).items()):
            if not why.startswith("n/a"):
                print("  %s: %s: %s" % (r["name"], peer, why))
    na = sorted({"%s %s" % (p, w) for r in rows for p, w in r.get("peer_why", {}).items() if w.startswith("n/a")})
    for s in na:
        print("  " + s)


def main():
    args = [a for a in sys.argv[1:] if a != "--cpu"]
    root = args[0] if args else "bench/neptune/out"
    pattern = args[1] if len(args) > 1 else None
    dirs = sorted(d for d in glob.glob(os.path.join(root, "*")) if os.path.exists(os.path.join(d, "case.py")))
    if pattern:
        dirs = [d for d in dirs if re.search(pattern, os.path.basename(d))]
    if not dirs:
        sys.exit("bench.py: no case folders (with a case.py) in %s%s" % (root, " matching " + pattern if pattern else ""))
    if CPU:
        device = "cpu"
        print("cpu mode (TRITON_INTERPRET=1): correctness only | torch", torch.__version__, "| triton", triton.__version__)
    else:
        if not torch.cuda.is_available():
            sys.exit("bench.py: no CUDA GPU here; --cpu checks correctness without one")
        device = "cuda"
        # every case compiles FlexAttention for a new shape: keep dynamo from giving up on it
        import torch._dynamo as dynamo
        for knob in ("cache_size_limit", "recompile_limit"):
            if hasattr(dynamo.config, knob):
                setattr(dynamo.config, knob, 1024)
        print("device:", torch.cuda.get_device_name(), "| torch", torch.__version__, "| triton", triton.__version__)
    rows, fails = [], 0
    for d in dirs:
        name = os.path.basename(d)
        try:
            r = run_case(d, device, timed=not CPU)
            print("%s: ok (rel err %.1e)" % (name, r["err"]), flush=True)
        except Skip as e:
            r = {"name": name, "reason": str(e)}
            print("%s: %s" % (name, e), flush=True)
        except Exception as e:  # one failing case does not hide the others
            fails += 1
            r = {"name": name, "reason": "FAILED: " + first_line(e)}
            print("%s: FAILED:\n%s" % (name, traceback.format_exc()), flush=True)
        if "op" not in r:          # the manifest may not have been read: take op and mode from it if it can
            try:
                c = runpy.run_path(os.path.join(d, "case.py"))
                r["op"], r["mode"] = c.get("op", "?"), c.get("mode", "?")
            except Exception:
                r["op"], r["mode"] = "?", "?"
        rows.append(r)
        if device == "cuda":
            torch.cuda.empty_cache()
    groups = GROUPS + sorted({(r["op"], r["mode"]) for r in rows} - set(GROUPS))
    for op, mode in groups:
        g = [r for r in rows if (r["op"], r["mode"]) == (op, mode)]
        if g:
            print_group(op, mode, g, CPU)
    if not CPU:
        g = geomean([r["ratio"] for r in rows if "ratio" in r])
        n = sum(1 for r in rows if "ratio" in r)
        print("\ngeomean over %d cases of best(FlexAttention, SDPA) / tessel: %s"
              % (n, "%.2fx" % g if g else "-"))
    print("%d cases, %d failed" % (len(rows), fails))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""bench/gpu/bench.py - builds, checks and times the CUDA that bench/gpu/export.lua wrote, against
PyTorch in the same run. Run on a machine with a CUDA GPU, nvcc, PyTorch and Triton:

    python3 bench/gpu/bench.py [dir]          (bench/gpu/run.sh does the export first)

For each case: nvcc builds kernel.cu into a shared object (-O3 -arch=sm_90, or sm_90a where the
kernel uses wgmma; the resource report kept in build.log); then two checks, each on fresh random
inputs with every output poisoned with NaN first, against the case's PyTorch expression evaluated
in float64 (relative error ||out - ref|| / ||ref|| under the case's tolerance, no NaN left); then
the kernel and the PyTorch expression (in the inputs' own dtype) are timed by
triton.testing.do_bench (CUDA events, median), and so is each of the case's peers (more PyTorch
expressions of the same outputs). The table comes last: times, achieved GB/s (the case's minimum
bytes over the time), and the ratio PyTorch time / tessel time (above 1: tessel is faster). Cases
with FLOPs or peers get a second table: a row for PyTorch and for each peer, with TFLOP/s and the
ratio peer time / tessel time.
"""
import ctypes
import glob
import os
import runpy
import subprocess
import sys

import torch
import triton.testing

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "float64": torch.float64, "int32": torch.int32, "int64": torch.int64}

WRAPPER = r"""
#include <cuda_runtime.h>
extern "C" int tessel_last_error(void) { return (int)cudaGetLastError(); }
extern "C" const char *tessel_error_string(int e) { return cudaGetErrorString((cudaError_t)e); }
"""


def build(d):
    so = os.path.join(d, "kernel.so")
    with open(os.path.join(d, "wrapper.cu"), "w") as f:
        f.write(WRAPPER)
    nvcc = os.environ.get("NVCC", "nvcc")
    # wgmma needs the architecture-specific target sm_90a; everything else builds for sm_90
    with open(os.path.join(d, "kernel.cu")) as f:
        arch = ["-gencode=arch=compute_90a,code=sm_90a"] if "wgmma" in f.read() else ["-arch=sm_90"]
    cmd = [nvcc, "-O3"] + arch + ["-shared", "-Xcompiler", "-fPIC", "-Xptxas", "-v",
           "-o", so, os.path.join(d, "kernel.cu"), os.path.join(d, "wrapper.cu")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(d, "build.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + r.stdout + r.stderr)
    if r.returncode != 0:
        raise RuntimeError("nvcc failed:\n" + r.stderr[-2000:])
    lib = ctypes.CDLL(so)
    lib.tessel_launch.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
    lib.tessel_launch.restype = None
    lib.tessel_error_string.restype = ctypes.c_char_p
    return lib


def resources(d):
    """registers, spill bytes and shared memory per kernel, from ptxas -v"""
    out = []
    for line in open(os.path.join(d, "build.log")):
        if "Used" in line and "registers" in line:
            out.append(line.split("ptxas info    :")[-1].strip())
    return "; ".join(out)


class Case:
    def __init__(self, d):
        self.dir = d
        self.c = runpy.run_path(os.path.join(d, "case.py"))
        self.lib = build(d)
        self.bufs = []       # per kernel buffer: a torch tensor, or None (shared, local)
        for name, role, scope, dtype, shape, init in self.c["buffers"]:
            if scope != "global":
                self.bufs.append(None)
                continue
            # temporaries start at zero, as tessel's exported code expects (a counter of kernel.atomic)
            make = torch.zeros if role == "temp" else torch.empty
            self.bufs.append(make(shape, dtype=DTYPES[dtype], device="cuda"))
        self.ptrs = (ctypes.c_void_p * len(self.bufs))(
            *[b.data_ptr() if b is not None else None for b in self.bufs])

    def inputs(self):
        return [(i, b) for i, b in enumerate(self.c["buffers"]) if b[1] == "input"]

    def outputs(self):
        return [(i, b) for i, b in enumerate(self.c["buffers"]) if b[1] == "output"]

    def fill(self, seed):
        g = torch.Generator(device="cuda")
        g.manual_seed(seed)
        for i, b in self.inputs():
            t = self.bufs[i]
            if b[5] == "rand":
                t.copy_(torch.rand(t.shape, generator=g, device="cuda", dtype=torch.float32))
            else:
                t.copy_(torch.randn(t.shape, generator=g, device="cuda", dtype=torch.float32))

    def launch(self):
        self.lib.tessel_launch(self.ptrs, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))

    def check(self, seed):
        self.fill(seed)
        for i, b in self.outputs():
            self.bufs[i].fill_(float("nan"))
        self.launch()
        torch.cuda.synchronize()
        e = self.lib.tessel_last_error()
        if e:
            raise RuntimeError("CUDA error after the launch: " + self.lib.tessel_error_string(e).decode())
        x = [self.bufs[i].double() for i, _ in self.inputs()]
        ref = eval(self.c["torch"], {"torch": torch, "x": x})
        refs = ref if isinstance(ref, (tuple, list)) else [ref]
        worst = 0.0
        for (i, b), r in zip(self.outputs(), refs):
            out = self.bufs[i].double()
            if torch.isnan(out).any():
                raise RuntimeError("%s: %d elements NaN (unwritten or wrong)" % (b[0], int(torch.isnan(out).sum())))
            rel = float(torch.linalg.vector_norm(out - r) / torch.linalg.vector_norm(r))
            worst = max(worst, rel)
        if not worst <= self.c["tol"]:
            raise RuntimeError("relative error %.3g over the tolerance %.3g" % (worst, self.c["tol"]))
        return worst

    def time(self):
        """tessel's time, PyTorch's, and each peer's {name: ms}"""
        ours = triton.testing.do_bench(self.launch, warmup=100, rep=500, return_mode="median")
        x = [self.bufs[i] for i, _ in self.inputs()]

        def bench(expr):
            return triton.testing.do_bench(lambda: eval(expr, {"torch": torch, "x": x}),
                                           warmup=100, rep=500, return_mode="median")
        theirs = bench(self.c["torch"])
        peers = {name: bench(expr) for name, expr in sorted(self.c.get("peers", {}).items())}
        return ours, theirs, peers


def copy_ceiling():
    a = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    a.normal_()
    ms = triton.testing.do_bench(lambda: b.copy_(a), warmup=100, rep=500, return_mode="median")
    return 2 * a.numel() * 4 / ms / 1e6


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "bench/gpu/out"
    dirs = sorted(d for d in glob.glob(os.path.join(root, "*")) if os.path.exists(os.path.join(d, "case.py")))
    print("device:", torch.cuda.get_device_name(), "| torch", torch.__version__, "| triton", triton.__version__)
    ceiling = copy_ceiling()
    rows, fails = [], 0
    peer_rows = []       # (case, tessel ms, tessel TFLOP/s, peer, peer ms, peer TFLOP/s, ratio)
    for d in dirs:
        name = os.path.basename(d)
        try:
            c = Case(d)
            errs = [c.check(1), c.check(2)]
            ours, theirs, peers = c.time()
            c.check(3)    # still right after the timed runs
            gb = c.c["bytes"] / 1e6
            rows.append((name, ours, gb / ours, theirs, gb / theirs, theirs / ours, max(errs), c.c["note"]))
            if c.c["flops"] or peers:
                tf = c.c["flops"] / 1e9
                for peer, ms in [("torch", theirs)] + sorted(peers.items()):
                    peer_rows.append((name, ours, tf / ours, peer, ms, tf / ms, ms / ours))
            print("%s: ok (%s)" % (name, resources(d)), flush=True)
        except Exception as e:  # one failing case does not hide the others
            fails += 1
            rows.append((name, None, None, None, None, None, None, str(e).splitlines()[0][:60]))
            print("%s: FAILED: %s" % (name, e), flush=True)
    print("\ncopy ceiling (torch copy_ of 1 GiB, read + write): %.0f GB/s" % ceiling)
    print("%-24s %10s %9s %10s %9s %8s %9s  %s" % ("case", "tessel ms", "GB/s", "torch ms", "GB/s",
                                                 "ratio", "rel err", "note"))
    for r in rows:
        if r[1] is None:
            print("%-24s %10s %9s %10s %9s %8s %9s  %s" % (r[0], "-", "-", "-", "-", "-", "-", r[7]))
        else:
            print("%-24s %10.4f %9.0f %10.4f %9.0f %7.2fx %9.1e  %s" % r)
    if peer_rows:
        print("\n%-24s %10s %9s  %-10s %10s %9s %8s" % ("case", "tessel ms", "TFLOP/s", "peer", "peer ms",
                                                      "TFLOP/s", "ratio"))
        for r in peer_rows:
            print("%-24s %10.4f %9.1f  %-10s %10.4f %9.1f %7.2fx" % r)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()

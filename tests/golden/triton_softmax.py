"""
A tessel kernel as Triton (tessel_launch at the end runs its stages in order).
  inputs:  x: float32[5, 6]
  outputs: out: float32[5, 6]
  buffers: xmax: float32[5], xsum: float32[5]
bufs[i] is buffer i's storage, a tensor on the device laid out by its layout; the order is x, xmax, xsum, out.
Values are close to tessel's interpreter, not equal: Triton's exp2, log2, sin and sqrt
are the device's and its reductions add in a tree. Compare with |got - ref| <= atol + rtol * |ref|:
float32 rtol 1e-4 atol 1e-5, float64 rtol 1e-9 atol 1e-12, float16 and bfloat16 rtol 1e-2
atol 1e-2, integers and bool exactly (docs/export.md).
"""
import triton
import triton.language as tl


@triton.jit
def xmax_kernel(x_ptr, xmax_ptr, BLOCK_J: tl.constexpr):
    # independent outer loops are program ids
    offs_j = tl.arange(0, BLOCK_J)
    i = tl.program_id(0)
    tl.store(xmax_ptr + i, -float("inf"))
    tl.debug_barrier()
    tl.store(xmax_ptr + i, tl.maximum(tl.load(xmax_ptr + i), tl.max(tl.where(offs_j < 6, tl.load(x_ptr + (i * 6 + offs_j), mask=offs_j < 6, other=0.0), -float("inf")), axis=0)))


@triton.jit
def xsum_kernel(x_ptr, xmax_ptr, xsum_ptr, BLOCK_J_1: tl.constexpr):
    # independent outer loops are program ids
    offs_j_1 = tl.arange(0, BLOCK_J_1)
    i = tl.program_id(0)
    tl.store(xsum_ptr + i, 0.0)
    tl.debug_barrier()
    tl.store(xsum_ptr + i, tl.load(xsum_ptr + i) + tl.sum(tl.where(offs_j_1 < 6, tl.exp2((tl.load(x_ptr + (i * 6 + offs_j_1), mask=offs_j_1 < 6, other=0.0) - tl.load(xmax_ptr + i)) * 1.442695), 0.0), axis=0))


@triton.jit
def out_kernel(x_ptr, xmax_ptr, xsum_ptr, out_ptr, BLOCK_I: tl.constexpr, BLOCK_J_2: tl.constexpr):
    # blocks of the outer tile axis are program ids
    offs_i = tl.program_id(0) * BLOCK_I + tl.arange(0, BLOCK_I)
    offs_j_2 = tl.arange(0, BLOCK_J_2)
    tl.store(out_ptr + (offs_i[:, None] * 6 + offs_j_2[None, :]), tl.exp2((tl.load(x_ptr + (offs_i[:, None] * 6 + offs_j_2[None, :]), mask=(offs_i[:, None] < 5) & (offs_j_2[None, :] < 6), other=0.0) - tl.load(xmax_ptr + offs_i[:, None], mask=offs_i[:, None] < 5, other=0.0)) * 1.442695) * (1.0 / tl.load(xsum_ptr + offs_i[:, None], mask=offs_i[:, None] < 5, other=0.0)), mask=(offs_i[:, None] < 5) & (offs_j_2[None, :] < 6))


def tessel_launch(bufs):
    """The stages in order, each on its grid; bufs in kernel order."""
    x, xmax, xsum, out = bufs
    xmax_kernel[(5,)](x, xmax, BLOCK_J=8)
    xsum_kernel[(5,)](x, xmax, xsum, BLOCK_J_1=8)
    out_kernel[(1,)](x, xmax, xsum, out, BLOCK_I=8, BLOCK_J_2=8)

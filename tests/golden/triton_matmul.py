"""
A tessel kernel as Triton (tessel_launch at the end runs its stages in order).
  inputs:  a: float32[64, 64], b: float32[64, 64]
  outputs: c: float32[64, 64]
bufs[i] is buffer i's storage, a tensor on the device laid out by its layout; the order is a, b, c.
Values are close to tessel's interpreter, not equal: Triton's exp2, log2, sin and sqrt
are the device's and its reductions add in a tree. Compare with |got - ref| <= atol + rtol * |ref|:
float32 rtol 1e-4 atol 1e-5, float64 rtol 1e-9 atol 1e-12, float16 and bfloat16 rtol 1e-2
atol 1e-2, integers and bool exactly (docs/export.md).
"""
import triton
import triton.language as tl


@triton.jit
def c_init_kernel(c_ptr, BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr):
    # blocks of the outer tile axis are program ids
    offs_i = tl.program_id(0) * BLOCK_I + tl.arange(0, BLOCK_I)
    offs_j = tl.arange(0, BLOCK_J)
    tl.store(c_ptr + (offs_i[:, None] * 64 + offs_j[None, :]), 0.0)


@triton.jit
def c_kernel(a_ptr, b_ptr, c_ptr, BLOCK_I1: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_J1: tl.constexpr):
    # block-bound loops are program ids
    offs_i1 = tl.arange(0, BLOCK_I1)
    offs_k = tl.arange(0, BLOCK_K)
    offs_j1 = tl.arange(0, BLOCK_J1)
    i0 = tl.program_id(1)
    j0 = tl.program_id(0)
    tl.store(c_ptr + (i0 * 1024 + j0 * 16 + offs_i1[:, None] * 64 + offs_j1[None, :]), tl.load(c_ptr + (i0 * 1024 + j0 * 16 + offs_i1[:, None] * 64 + offs_j1[None, :])) + tl.dot(tl.load(a_ptr + (i0 * 1024 + offs_i1[:, None] * 64 + offs_k[None, :])), tl.load(b_ptr + (j0 * 16 + offs_j1[None, :] + offs_k[:, None] * 64)), input_precision="ieee"))


def tessel_launch(bufs):
    """The stages in order, each on its grid; bufs in kernel order."""
    a, b, c = bufs
    c_init_kernel[(1,)](c, BLOCK_I=64, BLOCK_J=64)
    c_kernel[(4, 4)](a, b, c, BLOCK_I1=16, BLOCK_K=64, BLOCK_J1=16)

"""
A tessel kernel as Triton (tessel_launch at the end runs its stages in order).
  inputs:  A: float32[5, 12]
  outputs: B: float32[12, 5]
bufs[i] is buffer i's storage, a tensor on the device laid out by its layout; the order is A, B.
Values are close to tessel's interpreter, not equal: Triton's exp2, log2, sin and sqrt
are the device's and its reductions add in a tree. Compare with |got - ref| <= atol + rtol * |ref|:
float32 rtol 1e-4 atol 1e-5, float64 rtol 1e-9 atol 1e-12, float16 and bfloat16 rtol 1e-2
atol 1e-2, integers and bool exactly (docs/export.md).
"""
import triton
import triton.language as tl


@triton.jit
def B_kernel(A_ptr, B_ptr, BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr):
    # blocks of the outer tile axis are program ids
    offs_i = tl.program_id(0) * BLOCK_I + tl.arange(0, BLOCK_I)
    offs_j = tl.arange(0, BLOCK_J)
    tl.store(B_ptr + (offs_i[:, None] * 5 + offs_j[None, :]), tl.load(A_ptr + (offs_i[:, None] + offs_j[None, :] * 12), mask=(offs_i[:, None] < 12) & (offs_j[None, :] < 5), other=0.0), mask=(offs_i[:, None] < 12) & (offs_j[None, :] < 5))


def tessel_launch(bufs):
    """The stages in order, each on its grid; bufs in kernel order."""
    A, B = bufs
    B_kernel[(1,)](A, B, BLOCK_I=16, BLOCK_J=8)

/*
** A tessel kernel as CUDA C++: a __global__ function per stage; tessel_launch at the end
** launches them in order.
**   inputs:  A: float16[32, 32], B: float16[32, 16]
**   outputs: C: float32[32, 16]
**   buffers: a_frag: float16[8] local, b_frag: float16[4] local, c_frag: float32[4] local
** dbufs[i] is buffer i's device storage, laid out by its layout (NULL for shared and
** local buffers); the order is A, B, C, a_frag, b_frag, c_frag.
** Values follow tessel's interpreter (docs/export.md): nvcc -arch=sm_90 -fmad=false.
*/
#include <math.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

/* two 16-bit values in one 32-bit register, the first in the low half (MMA operands) */
static __device__ inline unsigned
tessel_pack_f16(__half lo, __half hi)
{
  return (unsigned)__half_as_ushort(lo) | (unsigned)__half_as_ushort(hi) << 16;
}

__global__ void __launch_bounds__(128)
mm(const __half *__restrict__ A, const __half *__restrict__ B, float *__restrict__ C)
{
  __align__(4) __half a_frag[8];  /* local, one per thread: row-major */
  __align__(4) __half b_frag[4];  /* local, one per thread: row-major */
  float c_frag[4];  /* local, one per thread: row-major */
  const int64_t tx = threadIdx.x;  /* thread.x */
  /* fill C[:, :] at cta (128 threads): vector4 (4-element runs (16 bytes) are consecutive and aligned in the layout) */
  #pragma unroll
  for (int64_t v = 0; v < 4; v++) {  /* upcast */
    C[tx * 4 + v] = 0.0f;
  }
  __syncthreads();
  /* gemm C[:, :] += A[:, :] @ B[:, :] at cta (128 threads): mma (SM80_16x8x16_F32F16F16F32_TN: 4 tiles of 16x8 over 4 warps, K in steps of 16; fragments placed by the atom's TV layouts) */
  #pragma unroll
  for (int64_t vc = 0; vc < 4; vc++) {  /* upcast */
    c_frag[vc] = C[tx / 64 * 256 + vc / 2 * 128 + tx % 4 * 2 + vc % 2 + tx / 4 % 8 * 16 + tx / 32 % 2 * 8];
  }
  for (int64_t kt = 0; kt < 2; kt++) {  /* reduce */
    #pragma unroll
    for (int64_t va = 0; va < 8; va++) {  /* upcast */
      a_frag[va] = A[kt * 16 + tx / 64 * 512 + va / 4 * 8 + tx % 4 * 2 + va % 2 + tx / 4 % 8 * 32 + va / 2 % 2 * 256];
    }
    #pragma unroll
    for (int64_t vb = 0; vb < 4; vb++) {  /* upcast */
      b_frag[vb] = B[kt * 256 + vb / 2 * 128 + tx % 4 * 32 + vb % 2 * 16 + tx / 4 % 8 + tx / 32 % 2 * 8];
    }
    {  /* mma.SM80_16x8x16_F32F16F16F32_TN(c_frag, a_frag, b_frag, c_frag): f32 = f16 * f16 + f32 */
      float tessel_d0, tessel_d1, tessel_d2, tessel_d3;

      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
          " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
          : "=f"(tessel_d0), "=f"(tessel_d1), "=f"(tessel_d2), "=f"(tessel_d3)
          : "r"(tessel_pack_f16(a_frag[0], a_frag[1])), "r"(tessel_pack_f16(a_frag[2], a_frag[3])),
            "r"(tessel_pack_f16(a_frag[4], a_frag[5])), "r"(tessel_pack_f16(a_frag[6], a_frag[7])),
            "r"(tessel_pack_f16(b_frag[0], b_frag[1])), "r"(tessel_pack_f16(b_frag[2], b_frag[3])),
            "f"(c_frag[0]), "f"(c_frag[1]), "f"(c_frag[2]), "f"(c_frag[3]));
      c_frag[0] = tessel_d0;
      c_frag[1] = tessel_d1;
      c_frag[2] = tessel_d2;
      c_frag[3] = tessel_d3;
    }
  }
  #pragma unroll
  for (int64_t vs = 0; vs < 4; vs++) {  /* upcast */
    C[tx / 64 * 256 + vs / 2 * 128 + tx % 4 * 2 + vs % 2 + tx / 4 % 8 * 16 + tx / 32 % 2 * 8] = c_frag[vs];
  }
}

/* the kernel: its stages in order, on one stream (dbufs: device pointers, kernel order) */
extern "C" void
tessel_launch(void **tessel_dbufs, cudaStream_t tessel_stream)
{
  mm<<<dim3(1, 1, 1), dim3(128, 1, 1), 0, tessel_stream>>>((const __half *)tessel_dbufs[0], (const __half *)tessel_dbufs[1], (float *)tessel_dbufs[2]);
}

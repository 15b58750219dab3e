/*
** A tessel kernel as CUDA C++: a __global__ function per stage; tessel_launch at the end
** launches them in order.
**   inputs:  A: float16[64], B: bfloat16[64]
**   outputs: H: float16[64], F: float32[64]
** dbufs[i] is buffer i's device storage, laid out by its layout (NULL for shared and
** local buffers); the order is A, B, H, F.
** Values follow tessel's interpreter (docs/export.md): nvcc -arch=sm_90 -fmad=false.
*/
#include <math.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void __launch_bounds__(64)
h(const __half *__restrict__ A, const __nv_bfloat16 *__restrict__ B, __half *__restrict__ H, float *__restrict__ F)
{
  const int64_t tx = threadIdx.x;  /* thread.x */
  H[tx] = __double2half((double)__half2float(__double2half((double)__half2float(A[tx]) * (double)__half2float(__float2half_rn(__bfloat162float(B[tx]))))) + 0.0999755859375);
  F[tx] = __bfloat162float(__double2bfloat16(exp2((double)__bfloat162float(B[tx]))));
}

/* the kernel: its stages in order, on one stream (dbufs: device pointers, kernel order) */
extern "C" void
tessel_launch(void **tessel_dbufs, cudaStream_t tessel_stream)
{
  h<<<dim3(1, 1, 1), dim3(64, 1, 1), 0, tessel_stream>>>((const __half *)tessel_dbufs[0], (const __nv_bfloat16 *)tessel_dbufs[1], (__half *)tessel_dbufs[2], (float *)tessel_dbufs[3]);
}

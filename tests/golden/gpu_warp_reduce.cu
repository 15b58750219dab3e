/*
** A tessel kernel as CUDA C++: a __global__ function per stage; tessel_launch at the end
** launches them in order.
**   inputs:  X: float32[2, 100]
**   outputs: S: float32[2]
**   buffers: acc: float32[1] local
** dbufs[i] is buffer i's device storage, laid out by its layout (NULL for shared and
** local buffers); the order is X, S, acc.
** Values follow tessel's interpreter (docs/export.md): nvcc -arch=sm_90 -fmad=false.
*/
#include <math.h>
#include <stdint.h>
#include <cuda_runtime.h>

__global__ void __launch_bounds__(64)
rowsum(const float *__restrict__ X, float *__restrict__ S)
{
  float acc[1];  /* local, one per thread: row-major */
  const int64_t tx = threadIdx.x;  /* thread.x */
  /* reduce add S[tx//32] <- X[tx//32, :] at warp: shuffle (one output for a warp: strided partials in a register, then a butterfly of 5 shuffles) */
  acc[0] = 0.0f;
  for (int64_t it = 0; it < 4; it++) {  /* reduce */
    if (it * 32 + tx % 32 < 100) {
      acc[0] += X[it * 32 + tx / 32 * 100 + tx % 32];
    }
  }
  acc[0] += __shfl_sync(0xffffffffu, acc[0], (int32_t)((tx % 32) ^ 16));
  acc[0] += __shfl_sync(0xffffffffu, acc[0], (int32_t)((tx % 32) ^ 8));
  acc[0] += __shfl_sync(0xffffffffu, acc[0], (int32_t)((tx % 32) ^ 4));
  acc[0] += __shfl_sync(0xffffffffu, acc[0], (int32_t)((tx % 32) ^ 2));
  acc[0] += __shfl_sync(0xffffffffu, acc[0], (int32_t)((tx % 32) ^ 1));
  if (tx % 32 == 0) {
    S[tx / 32] = acc[0];
  }
}

/* the kernel: its stages in order, on one stream (dbufs: device pointers, kernel order) */
extern "C" void
tessel_launch(void **tessel_dbufs, cudaStream_t tessel_stream)
{
  rowsum<<<dim3(1, 1, 1), dim3(64, 1, 1), 0, tessel_stream>>>((const float *)tessel_dbufs[0], (float *)tessel_dbufs[1]);
}

/*
** A tessel kernel as CUDA C++: a __global__ function per stage; tessel_launch at the end
** launches them in order.
**   inputs:  a: float32[64, 64], b: float32[64, 64]
**   outputs: c: float32[64, 64]
** dbufs[i] is buffer i's device storage, laid out by its layout (NULL for shared and
** local buffers); the order is a, b, c.
** Values follow tessel's interpreter (docs/export.md): nvcc -arch=sm_90 -fmad=false.
*/
#include <math.h>
#include <stdint.h>
#include <cuda_runtime.h>

__global__ void __launch_bounds__(256)
c(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c)
{
  const int64_t i0 = blockIdx.y;  /* block.y */
  const int64_t j0 = blockIdx.x;  /* block.x */
  const int64_t i1 = threadIdx.y;  /* thread.y */
  const int64_t j1 = threadIdx.x;  /* thread.x */
  float acc = 0.0f;
  for (int64_t k = 0; k < 64; k++) {  /* reduce */
    acc += a[i0 * 1024 + i1 * 64 + k] * b[j0 * 16 + j1 + k * 64];
  }
  c[i0 * 1024 + i1 * 64 + j0 * 16 + j1] = acc;
}

/* the kernel: its stages in order, on one stream (dbufs: device pointers, kernel order) */
extern "C" void
tessel_launch(void **tessel_dbufs, cudaStream_t tessel_stream)
{
  c<<<dim3(4, 4, 1), dim3(16, 16, 1), 0, tessel_stream>>>((const float *)tessel_dbufs[0], (const float *)tessel_dbufs[1], (float *)tessel_dbufs[2]);
}

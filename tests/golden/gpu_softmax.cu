/*
** A tessel kernel as CUDA C++: a __global__ function per stage; tessel_launch at the end
** launches them in order.
**   inputs:  x: float32[4, 8]
**   outputs: out: float32[4, 8]
**   buffers: xmax: float32[4], xsum: float32[4]
** dbufs[i] is buffer i's device storage, laid out by its layout (NULL for shared and
** local buffers); the order is x, xmax, xsum, out.
** Values follow tessel's interpreter (docs/export.md): nvcc -arch=sm_90 -fmad=false.
*/
#include <math.h>
#include <stdint.h>
#include <cuda_runtime.h>

/* max and min as the interpreter takes them: a NaN first operand wins, a NaN second one too */
static __device__ inline float tessel_maxf(float a, float b) { return a > b || isnan(a) ? a : b; }

__global__ void __launch_bounds__(1)
xmax(const float *__restrict__ x, float *__restrict__ xmax)
{
  /* no loop is bound to a block or a thread: one thread runs the stage */
  for (int64_t i = 0; i < 4; i++) {
    float acc = -INFINITY;
    for (int64_t j = 0; j < 8; j++) {  /* reduce */
      acc = tessel_maxf(acc, x[i * 8 + j]);
    }
    xmax[i] = acc;
  }
}

__global__ void __launch_bounds__(1)
xsum(const float *__restrict__ x, const float *__restrict__ xmax, float *__restrict__ xsum)
{
  /* no loop is bound to a block or a thread: one thread runs the stage */
  for (int64_t i = 0; i < 4; i++) {
    float acc_1 = 0.0f;
    for (int64_t j = 0; j < 8; j++) {  /* reduce */
      acc_1 += (float)exp2((double)((x[i * 8 + j] - xmax[i]) * 1.442695f));
    }
    xsum[i] = acc_1;
  }
}

__global__ void __launch_bounds__(1)
out(const float *__restrict__ x, const float *__restrict__ xmax, const float *__restrict__ xsum, float *__restrict__ out)
{
  /* no loop is bound to a block or a thread: one thread runs the stage */
  for (int64_t i = 0; i < 4; i++) {
    for (int64_t j = 0; j < 8; j++) {
      out[i * 8 + j] = (float)exp2((double)((x[i * 8 + j] - xmax[i]) * 1.442695f)) * (1.0f / xsum[i]);
    }
  }
}

/* the kernel: its stages in order, on one stream (dbufs: device pointers, kernel order) */
extern "C" void
tessel_launch(void **tessel_dbufs, cudaStream_t tessel_stream)
{
  xmax<<<dim3(1, 1, 1), dim3(1, 1, 1), 0, tessel_stream>>>((const float *)tessel_dbufs[0], (float *)tessel_dbufs[1]);
  xsum<<<dim3(1, 1, 1), dim3(1, 1, 1), 0, tessel_stream>>>((const float *)tessel_dbufs[0], (const float *)tessel_dbufs[1], (float *)tessel_dbufs[2]);
  out<<<dim3(1, 1, 1), dim3(1, 1, 1), 0, tessel_stream>>>((const float *)tessel_dbufs[0], (const float *)tessel_dbufs[1], (const float *)tessel_dbufs[2], (float *)tessel_dbufs[3]);
}

/*
** A tessel kernel as CUDA C++: a __global__ function per stage; tessel_launch at the end
** launches them in order.
**   inputs:  X: float32[3, 64] @ (3,64):(1,3)
**   outputs: Y: float32[3, 64], N: int64[3, 64]
**   buffers: T: float32[64] shared
** dbufs[i] is buffer i's device storage, laid out by its layout (NULL for shared and
** local buffers); the order is X, Y, N, T.
** Values follow tessel's interpreter (docs/export.md): nvcc -arch=sm_90 -fmad=false.
*/
#include <math.h>
#include <stdint.h>
#include <cuda_runtime.h>

/* max and min as the interpreter takes them: a NaN first operand wins, a NaN second one too */
static __device__ inline float tessel_maxf(float a, float b) { return a > b || isnan(a) ? a : b; }

/* floor division and modulo of integers; x // 0 and x % 0 are 0 */

static __device__ inline int64_t
tessel_idiv(int64_t a, int64_t b)
{
  if (b == 0)
    return 0;
  if (b == -1)
    return (int64_t)(0 - (uint64_t)a);
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static __device__ inline int64_t
tessel_imod(int64_t a, int64_t b)
{
  if (b == 0 || b == -1)
    return 0;
  return a % b != 0 && (a % b < 0) != (b < 0) ? a % b + b : a % b;
}

__global__ void __launch_bounds__(64)
g(const float *__restrict__ X, float *__restrict__ Y, int64_t *__restrict__ N)
{
  __shared__ __align__(16) float T[64];  /* shared, one per block: row-major */
  const int64_t bx = blockIdx.x;  /* block.x */
  {
    const int64_t t = threadIdx.x;  /* thread.x */
    T[t] = X[bx + t * 3] * 2.0f;
    const int64_t t0 = t - 40;
    N[bx * 64 + t] = tessel_idiv(t0, 3) + tessel_imod(t0, 7);
  }
  __syncthreads();
  {
    const int64_t i = threadIdx.x;  /* thread.x */
    if (i < 48) {
      Y[bx * 64 + i] = T[63 - i] + T[i];
    }
  }
  const int64_t i = threadIdx.x;  /* thread.x */
  if (i < 16) {
    Y[bx * 64 + i + 48] = tessel_maxf(T[i], T[i + 48]) - (float)exp2((double)T[i]);
  }
}

/* the kernel: its stages in order, on one stream (dbufs: device pointers, kernel order) */
extern "C" void
tessel_launch(void **tessel_dbufs, cudaStream_t tessel_stream)
{
  g<<<dim3(3, 1, 1), dim3(64, 1, 1), 0, tessel_stream>>>((const float *)tessel_dbufs[0], (float *)tessel_dbufs[1], (int64_t *)tessel_dbufs[2]);
}

/*
** tessel_place: input b's elements from row-major logical order (src)
** into its storage (dst).
** 0 for a buffer stored row-major: a plain copy does.
*/
extern "C" int
tessel_place(int b, void *dst, const void *src)
{
  switch (b) {
  case 0: {  /* X @ (3,64):(1,3) */
    float *tessel_d = (float *)dst;
    const float *tessel_s = (const float *)src;
    int64_t tessel_i = 0;

    for (int64_t x0 = 0; x0 < 3; x0++) {
      for (int64_t x1 = 0; x1 < 64; x1++) {
        tessel_d[x0 + x1 * 3] = tessel_s[tessel_i++];
      }
    }
    return 1;
  }
  default:
    return 0;
  }
}

/*
** A tessel kernel as CUDA C++: a __global__ function per stage; tessel_launch at the end
** launches them in order.
**   inputs:  A: float32[64, 64]
**   outputs: B: float32[64, 64]
**   buffers: tile: float32[32, 32] shared @ (32,32):(33,1)
** dbufs[i] is buffer i's device storage, laid out by its layout (NULL for shared and
** local buffers); the order is A, B, tile.
** Values follow tessel's interpreter (docs/export.md): nvcc -arch=sm_90 -fmad=false.
*/
#include <math.h>
#include <stdint.h>
#include <cuda_runtime.h>

__global__ void __launch_bounds__(1024)
transpose(const float *__restrict__ A, float *__restrict__ B)
{
  __shared__ __align__(16) float tile[1055];  /* shared, one per block: (32,32):(33,1) */
  const int64_t bx = blockIdx.x;  /* block.x */
  const int64_t by = blockIdx.y;  /* block.y */
  const int64_t tx = threadIdx.x;  /* thread.x */
  const int64_t ty = threadIdx.y;  /* thread.y */
  tile[tx + ty * 33] = A[bx * 32 + by * 2048 + tx + ty * 64];
  __syncthreads();
  B[bx * 2048 + by * 32 + tx + ty * 64] = tile[tx * 33 + ty];
}

/* the kernel: its stages in order, on one stream (dbufs: device pointers, kernel order) */
extern "C" void
tessel_launch(void **tessel_dbufs, cudaStream_t tessel_stream)
{
  transpose<<<dim3(2, 2, 1), dim3(32, 32, 1), 0, tessel_stream>>>((const float *)tessel_dbufs[0], (float *)tessel_dbufs[1]);
}

/*
** A tessel kernel as OpenCL C 1.2: a __kernel per stage, launched in the order the table
** at the end gives.
**   inputs:  A: float32[64, 64]
**   outputs: B: float32[64, 64]
**   buffers: tile: float32[32, 32] shared @ (32,32):(33,1)
** A kernel takes the global buffers its stage uses, laid out by their layouts, in the
** order A, B, tile.
** Values follow tessel's interpreter (docs/export.md): build with
** -cl-fp32-correctly-rounded-divide-sqrt where the device has it.
*/
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

typedef char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef uchar uint8_t;
typedef ushort uint16_t;
typedef uint uint32_t;
typedef ulong uint64_t;

__kernel void __attribute__((reqd_work_group_size(32, 32, 1)))
transpose(__global const float *restrict A, __global float *restrict B)
{
  __local float tile[1055];  /* shared, one per block: (32,32):(33,1) */
  const int64_t bx = get_group_id(0);  /* block.x */
  const int64_t by = get_group_id(1);  /* block.y */
  const int64_t tx = get_local_id(0);  /* thread.x */
  const int64_t ty = get_local_id(1);  /* thread.y */
  tile[tx + ty * 33] = A[bx * 32 + by * 2048 + tx + ty * 64];
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  B[bx * 2048 + by * 32 + tx + ty * 64] = tile[tx * 33 + ty];
}

/*
** Launches, in order: global size grid * block, local size block; the arguments are
** buffers, by name.
**   transpose: grid (2, 2, 1), block (32, 32, 1); A, B
*/

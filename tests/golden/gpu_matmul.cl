/*
** A tessel kernel as OpenCL C 1.2: a __kernel per stage, launched in the order the table
** at the end gives.
**   inputs:  a: float32[64, 64], b: float32[64, 64]
**   outputs: c: float32[64, 64]
** A kernel takes the global buffers its stage uses, laid out by their layouts, in the
** order a, b, c.
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

__kernel void __attribute__((reqd_work_group_size(16, 16, 1)))
c(__global const float *restrict a, __global const float *restrict b, __global float *restrict c)
{
  const int64_t i0 = get_group_id(1);  /* block.y */
  const int64_t j0 = get_group_id(0);  /* block.x */
  const int64_t i1 = get_local_id(1);  /* thread.y */
  const int64_t j1 = get_local_id(0);  /* thread.x */
  float acc = 0.0f;
  for (int64_t k = 0; k < 64; k++) {  /* reduce */
    acc += a[i0 * 1024 + i1 * 64 + k] * b[j0 * 16 + j1 + k * 64];
  }
  c[i0 * 1024 + i1 * 64 + j0 * 16 + j1] = acc;
}

/*
** Launches, in order: global size grid * block, local size block; the arguments are
** buffers, by name.
**   c: grid (4, 4, 1), block (16, 16, 1); a, b, c
*/

/*
** A tessel kernel as OpenCL C 1.2: a __kernel per stage, launched in the order the table
** at the end gives.
**   inputs:  x: float32[4, 8]
**   outputs: out: float32[4, 8]
**   buffers: xmax: float32[4], xsum: float32[4]
** A kernel takes the global buffers its stage uses, laid out by their layouts, in the
** order x, xmax, xsum, out.
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

/* max and min as the interpreter takes them: a NaN first operand wins, a NaN second one too */
static inline float tessel_maxf(float a, float b) { return a > b || isnan(a) ? a : b; }

__kernel void __attribute__((reqd_work_group_size(1, 1, 1)))
xmax(__global const float *restrict x, __global float *restrict xmax)
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

__kernel void __attribute__((reqd_work_group_size(1, 1, 1)))
xsum(__global const float *restrict x, __global const float *restrict xmax, __global float *restrict xsum)
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

__kernel void __attribute__((reqd_work_group_size(1, 1, 1)))
out(__global const float *restrict x, __global const float *restrict xmax, __global const float *restrict xsum, __global float *restrict out)
{
  /* no loop is bound to a block or a thread: one thread runs the stage */
  for (int64_t i = 0; i < 4; i++) {
    for (int64_t j = 0; j < 8; j++) {
      out[i * 8 + j] = (float)exp2((double)((x[i * 8 + j] - xmax[i]) * 1.442695f)) * (1.0f / xsum[i]);
    }
  }
}

/*
** Launches, in order: global size grid * block, local size block; the arguments are
** buffers, by name.
**   xmax: grid (1, 1, 1), block (1, 1, 1); x, xmax
**   xsum: grid (1, 1, 1), block (1, 1, 1); x, xmax, xsum
**   out: grid (1, 1, 1), block (1, 1, 1); x, xmax, xsum, out
*/

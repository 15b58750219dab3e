/*
** A tessel kernel as C11 (tessel_kernel at the end runs its stages in order).
**   inputs:  x: float32[4, 8]
**   outputs: out: float32[4, 8]
**   buffers: xmax: float32[4], xsum: float32[4]
** bufs[i] is buffer i's storage, laid out by its layout; the order is x, xmax, xsum, out.
** Values agree bit for bit with tessel's interpreter: build with -ffp-contract=off -fwrapv
** -frounding-math, and -fno-tree-sra for speed (backends/jit.c says why).
*/
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* max and min as the interpreter takes them: a NaN first operand wins, a NaN second one too */
static inline float tessel_maxf(float a, float b) { return a > b || isnan(a) ? a : b; }

static void
xmax(const float *restrict x, float *restrict xmax)
{
  for (int64_t i = 0; i < 4; i++) {
    float acc = -INFINITY;
    for (int64_t j = 0; j < 8; j++) {  /* reduce */
      acc = tessel_maxf(acc, x[i * 8 + j]);
    }
    xmax[i] = acc;
  }
}

static void
xsum(const float *restrict x, const float *restrict xmax, float *restrict xsum)
{
  for (int64_t i = 0; i < 4; i++) {
    float acc_1 = 0.0f;
    for (int64_t j = 0; j < 8; j++) {  /* reduce */
      acc_1 += (float)exp2((x[i * 8 + j] - xmax[i]) * 1.442695f);
    }
    xsum[i] = acc_1;
  }
}

static void
out(const float *restrict x, const float *restrict xmax, const float *restrict xsum, float *restrict out)
{
  for (int64_t i = 0; i < 4; i++) {
    for (int64_t j = 0; j < 8; j++) {
      out[i * 8 + j] = (float)exp2((x[i * 8 + j] - xmax[i]) * 1.442695f) * (1.0f / xsum[i]);
    }
  }
}

/* the kernel: its stages in order */
void
tessel_kernel(void **bufs)
{
  xmax(bufs[0], bufs[1]);
  xsum(bufs[0], bufs[1], bufs[2]);
  out(bufs[0], bufs[1], bufs[2], bufs[3]);
}

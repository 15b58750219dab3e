/*
** A tessel kernel as C11 (tessel_kernel at the end runs its stages in order).
**   inputs:  a: float32[64, 64], b: float32[64, 64]
**   outputs: c: float32[64, 64]
** bufs[i] is buffer i's storage, laid out by its layout; the order is a, b, c.
** Values agree bit for bit with tessel's interpreter: build with -ffp-contract=off -fwrapv
** -frounding-math (backends/jit.c says why).
*/
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

static void
c_init(float *restrict c)
{
  for (int64_t i0 = 0; i0 < 4; i0++) {
    for (int64_t j0 = 0; j0 < 4; j0++) {
      for (int64_t i1 = 0; i1 < 16; i1++) {
        for (int64_t j1 = 0; j1 < 16; j1++) {
          c[i0 * 1024 + i1 * 64 + j0 * 16 + j1] = 0.0f;
        }
      }
    }
  }
}

static void
c(const float *restrict a, const float *restrict b, float *restrict c)
{
  #pragma omp parallel for
  for (int64_t i0 = 0; i0 < 4; i0++) {  /* thread */
    for (int64_t j0 = 0; j0 < 4; j0++) {
      for (int64_t i1 = 0; i1 < 16; i1++) {
        for (int64_t k = 0; k < 64; k++) {  /* reduce */
          #pragma omp simd
          for (int64_t j1 = 0; j1 < 16; j1++) {  /* upcast */
            c[i0 * 1024 + i1 * 64 + j0 * 16 + j1] += a[i0 * 1024 + i1 * 64 + k] * b[j0 * 16 + j1 + k * 64];
          }
        }
      }
    }
  }
}

/* the kernel: its stages in order */
void
tessel_kernel(void **bufs)
{
  c_init(bufs[2]);
  c(bufs[0], bufs[1], bufs[2]);
}

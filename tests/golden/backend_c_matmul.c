/*
** A tessel kernel as C11 (tessel_kernel at the end runs its stages in order).
**   inputs:  a: float32[64, 64], b: float32[64, 64]
**   outputs: c: float32[64, 64]
** bufs[i] is buffer i's storage, laid out by its layout; the order is a, b, c.
** Values agree bit for bit with tessel's interpreter: build with -ffp-contract=off -fwrapv
** -frounding-math, and -fno-tree-sra for speed (backends/jit.c says why).
*/
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* a vectorized loop's float32 lanes, up to 64 bytes at a time (GCC's and Clang's vector types) */
typedef float tessel_f32x16 __attribute__((vector_size(64)));
typedef float tessel_f32x8 __attribute__((vector_size(32)));
typedef float tessel_f32x4 __attribute__((vector_size(16)));

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
          for (int64_t j1 = 0; j1 < 16; j1 += 16) {  /* upcast: 16 lanes at once */
            const float s = a[i0 * 1024 + i1 * 64 + k];
            tessel_f32x16 c_v;
            __builtin_memcpy(&c_v, &c[i0 * 1024 + i1 * 64 + j0 * 16 + j1], sizeof c_v);
            tessel_f32x16 b_v;
            __builtin_memcpy(&b_v, &b[j0 * 16 + j1 + k * 64], sizeof b_v);
            const tessel_f32x16 v = c_v + s * b_v;
            __builtin_memcpy(&c[i0 * 1024 + i1 * 64 + j0 * 16 + j1], &v, sizeof v);
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

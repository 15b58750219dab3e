/* tensor_test.h - the fixture the tests of tensor compositions share: a graph context and a seeded rand(). */
#ifndef TESSEL_TENSOR_TEST_H
#define TESSEL_TENSOR_TEST_H

/*
** Static, as kernel_test.h: include after <cmocka.h>. setup seeds rand() from
** TESSEL_SEED or the clock (a failure prints seed) and makes C; teardown frees it.
*/

#include <stdlib.h>
#include <time.h>

#include "../interp/tensor/tensor.h"

static UCtx *C;
static unsigned seed;

static int
setup(void **state)
{
	const char *s = getenv("TESSEL_SEED");

	(void)state;
	seed = s ? (unsigned)strtoul(s, NULL, 10) : (unsigned)time(NULL);
	srand(seed);
	C = uctx_new();
	return C ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	uctx_free(C);
	return 0;
}

#endif

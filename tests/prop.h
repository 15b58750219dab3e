/* prop.h - what the cmocka drivers' property tests share: one xorshift generator, seeded from TESSEL_SEED or the clock, and the seed printed so that a failure can be replayed. */
#ifndef TESSEL_TESTS_PROP_H
#define TESSEL_TESTS_PROP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t rng = 1;
static uint64_t seed = 1;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A uniform integer in [lo, hi]. */
static int64_t
rint_(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* Seed the generator and say so; every property test starts here. */
static void
seed_rng(void)
{
	const char *s = getenv("TESSEL_SEED");

	seed = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
	if (!seed)
		seed = 1;
	rng = seed;
	printf("# property tests: seed %llu (set TESSEL_SEED to reproduce)\n", (unsigned long long)seed);
}

/* The cmocka setup of a property test that needs nothing else. */
static int
seed_setup(void **state)
{
	seed_rng();
	*state = &seed;
	return 0;
}

#endif

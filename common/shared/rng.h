/* The one random number generator of lcpkit (splitmix64: small, fast and the same on every platform), used
 * by the core's random orders and strategies, the problem generator, the benchmarks and the tests, so that a
 * seed means the same sequence everywhere. Header-only, like clock.h. */
#ifndef LCPKIT_RNG_H
#define LCPKIT_RNG_H

#include <stdint.h>

typedef struct lk__rng {
	uint64_t s;
} lk__rng;

static inline uint64_t lk__rng_next(lk__rng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1), 53 bits. */
static inline double lk__rng_uniform(lk__rng *r)
{
	return (double)(lk__rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* An integer in [0, bound), 0 < bound < 2^31, from the high 32 bits by a multiplication and a shift (Lemire,
 * "Fast random integer generation in an interval", ACM TOMACS 2019) rather than a division: the sweeps that
 * reshuffle their rows pay a multiplication a row for it, not a division. */
static inline int lk__rng_below(lk__rng *r, int bound)
{
	return (int)(((lk__rng_next(r) >> 32) * (uint64_t)bound) >> 32);
}

/* Fisher-Yates shuffle of perm[0..n), n < 2^31. */
static inline void lk__shuffle(lk__rng *r, int *perm, int n)
{
	for (int i = n - 1; i > 0; --i) {
		int j = lk__rng_below(r, i + 1);
		int t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* A shuffle that keeps the order's locality: perm[0..n) cut into windows of w items at an offset drawn anew
 * each call, each window shuffled in place (lk__shuffle), the windows kept in their order. Every item stays
 * within its window, less than w places from where it was; n <= w is lk__shuffle itself, draw for draw. The
 * offset moves the windows' edges from call to call, so that no two neighbours keep their order for good. */
static inline void lk__shuffle_local(lk__rng *r, int *perm, int n, int w)
{
	if (n <= w) {
		lk__shuffle(r, perm, n);
		return;
	}
	const int o = lk__rng_below(r, w);
	lk__shuffle(r, perm, o);
	for (int b = o; b < n; b += w)
		lk__shuffle(r, perm + b, n - b < w ? n - b : w);
}

#endif

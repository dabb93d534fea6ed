/* The one clock of lcpkit: the core's solve timings, the adapters, the scenes, the benchmarks and the tests
 * all read time here. Header-only (static inline), so that every part can use it without a link dependency
 * on the core's hidden symbols. */
#ifndef LCPKIT_CLOCK_H
#define LCPKIT_CLOCK_H

#include <time.h>

/* A clock's reading in seconds. */
static inline double lk__clock_seconds(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Wall time in seconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
static inline double lk__now(void)
{
	return lk__clock_seconds(CLOCK_MONOTONIC);
}

/* CPU time of the calling thread in seconds (CLOCK_THREAD_CPUTIME_ID): what the benchmarks measure, since a
 * shared machine preempts wall-clock intervals of milliseconds often enough to move their medians. */
static inline double lk__cpu_now(void)
{
	return lk__clock_seconds(CLOCK_THREAD_CPUTIME_ID);
}

/* CPU time of the whole process in seconds (CLOCK_PROCESS_CPUTIME_ID): every thread's time summed, for the
 * benchmarks of the threaded sweeps beside their wall time. */
static inline double lk__process_cpu_now(void)
{
	return lk__clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

#endif

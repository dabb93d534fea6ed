/* The clock of lcpkit's timing statistics (lk_set_stats_clock): the one setting of the library that is
 * process-wide, since what it chooses is how a benchmark reads time, not how anything is solved. */
#include "clock.h"
#include "lcpkit/lcpkit.h"

#include <stdatomic.h>

static _Atomic int stats_clock = LK_CLOCK_WALL;

lk_status lk_set_stats_clock(lk_clock clock)
{
	if (clock != LK_CLOCK_WALL && clock != LK_CLOCK_THREAD_CPU)
		return LK_ERR_INVALID_ARGUMENT;
	atomic_store(&stats_clock, (int)clock);
	return LK_OK;
}

lk_clock lk_stats_clock(void)
{
	return (lk_clock)atomic_load(&stats_clock);
}

double lk_stats_now(void)
{
	return atomic_load_explicit(&stats_clock, memory_order_relaxed) == LK_CLOCK_THREAD_CPU ? lk__cpu_now()
	                                                                                       : lk__now();
}

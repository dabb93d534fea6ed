/* lcpkit bench SUITE: the benchmark suites. Timings are CPU time (lk_set_stats_clock), reported as medians
 * with their minima and spread, of repeated runs measured side by side. */
#include "bench.h"
#include "cli.h"

#include <string.h>

static const lk_bench_suite suites[] = {
	{"pgs-sm", "PGS-SM vs PGS: merit against work in PGS sweeps", lk_bench_pgs_sm},
	{"orderings", "IPP, CP, ESP, GSP orders and schedules vs PGS (Poulsen et al. 2010)", lk_bench_orderings},
	{"newton", "minimum-map and Fischer-Newton vs PGS/PSOR and Siconos (Erleben 2013 sec. 7)", lk_bench_newton},
	{"bullet", "Bullet's sequential impulse solver vs lcpkit pgs/amgs through the adapter", lk_bench_bullet},
	{"ode", "ODE's quickstep and step vs lk_ode_world_step with lcpkit pgs/amgs", lk_bench_ode},
	{"kernel", "ns per row update of the PGS/AMGS kernels vs the memory streaming limit", lk_bench_kernel},
	{"work", "the work budget's weights: CPU time per counted row of each kind of work", lk_bench_work},
	{"threads", "PGS sweeps on one and two threads on the bigpool scene: speed-up and scaling", lk_bench_threads},
	{"phase", "the engines' whole solver phase (rows, solve, write-back) with their own solver vs lcpkit's",
	 lk_bench_phase},
	{"engines", "engines' own solvers vs lcpkit's through the adapters: same scene, same budget", lk_bench_engines},
	{"paper", "the papers' tables (Miyamoto & Yamashita, Poulsen et al., Silcowitz et al.) on the scenes", lk_bench_paper},
	{"amgs", "AMGS family vs PGS: sweeps and time to RES < 1e-4, cost per sweep (Miyamoto & Yamashita 2019)",
	 lk_bench_amgs},
	{NULL, NULL, NULL},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: lcpkit bench SUITE [options]   (lcpkit bench SUITE --help)\n\nsuites:\n");
	for (int i = 0; suites[i].name; ++i)
		fprintf(f, "  %-12s %s\n", suites[i].name, suites[i].summary);
}

int lk_cmd_bench(int argc, char **argv)
{
	int status = lk_cli_first_word(argc, argv, usage);
	if (status >= 0)
		return status;
	for (int i = 0; suites[i].name; ++i)
		if (!strcmp(argv[1], suites[i].name)) {
			/* every timing a suite reads from lcpkit's statistics (lk_stats, the adapters' step statistics) in
			 * the thread's CPU time, which the preemptions of a shared machine do not move */
			lk_set_stats_clock(LK_CLOCK_THREAD_CPU);
			const int rc = suites[i].run(argc - 1, argv + 1);
			lk_set_stats_clock(LK_CLOCK_WALL);
			return rc;
		}
	lk_cli_error("bench", "unknown suite '%s'", argv[1]);
	usage(stderr);
	return LK_EXIT_USAGE;
}

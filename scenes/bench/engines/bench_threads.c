/* lcpkit bench threads: the parallel sweeps (docs/solvers.md, "Threads") on the bigpool scene at growing
 * sizes. For each size the problem of one step is captured from ODE (lcpkit pgs at 20 iterations, the scene's
 * spheres settling into the pool), then solved from its warm start with a fixed number of PGS sweeps:
 *   natural    one thread, the engine's row order (what a user has without threads),
 *   colour     one thread, the colour order,
 *   colour 2t  two threads, the colour order (bitwise the result of `colour`),
 *   part       one thread, the part order in two parts (parallel.h),
 *   part 2t    two threads, the part order (bitwise the result of `part`),
 * each repeated, with the minimum over the repeats of the wall time and of the process CPU time (all threads
 * summed) of the whole lk_solve call (the order's layout of the rows included), and their spread. Each is
 * also solved with twice the sweeps: the difference of the two minima over the added sweeps is the time of a
 * sweep alone, without what a solve costs once (the validation, the order's layout, the metrics). Reported:
 * nanoseconds per row and sweep (whole solve, and a sweep alone), the speed-up of two threads over one in
 * the same order and over one in the natural order (wall), and the growth of the time per row and sweep from
 * the smallest size. */
#include "bench.h"
#include "bench_util.h"
#include "cli_util.h"
#include "clock.h"
#include "lcpkit/engine.h"
#include "lcpkit/lcpkit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 6
#define VARIANTS 5

static void usage(FILE *f)
{
	fprintf(f, "usage: lcpkit bench threads [--quick] [--sizes N1,N2,..] [--sweeps N] [--repeat N] [--step S]\n"
	           "                            [--out DIR]\n"
	           "PGS sweeps on one and two threads (docs/solvers.md, \"Threads\") on problems captured from the\n"
	           "bigpool scene in ODE: ns per row and sweep, wall and CPU time, speed-up.\n"
	           "  --sizes LIST  spheres (default 1000,10000,100000; quick 1000,10000)\n"
	           "  --sweeps N    sweeps per solve (default 20); each is also timed with 2N, for a sweep alone\n"
	           "  --repeat N    timing repeats (default 7, quick 3)\n"
	           "  --step S      the captured step (default 10)\n"
	           "  --out DIR     CSV directory (default bench-out): bench_threads.csv\n");
}

typedef struct timing {
	double wall, cpu, spread; /* minima over the repeats; spread (max - min) / min of the wall times */
	double res;
} timing;

static int time_variant(lk_problem *p, const double *warm, const char *spec, int sweeps, int repeats, timing *out)
{
	lk_solver_config cfg;
	char err[256];
	if (lk_config_parse(spec, &cfg, err, sizeof err) != LK_OK) {
		lk_cli_error("bench threads", "%s", err);
		return -1;
	}
	cfg.max_iterations = sweeps;
	cfg.tol_abs = cfg.tol_rel = cfg.tol_stag = 0;
	cfg.warm_start = 1;
	int n = lk_problem_row_count(p);
	double lo = INFINITY, hi = 0.0, cpu = INFINITY;
	/* one solve first: the pool's threads start and the caches warm */
	for (int r = -1; r < repeats; ++r) {
		lk_problem_set_lambda(p, warm, n);
		lk_stats st;
		double w0 = lk__now(), c0 = lk__process_cpu_now();
		if (lk_solve(p, &cfg, &st, NULL) != LK_OK) {
			lk_cli_error("bench threads", "%s: %s", spec, lk_problem_error(p));
			return -1;
		}
		/* the whole lk_solve: validation, the colour order's layout and its undoing, the metrics, the sweeps */
		double w = lk__now() - w0, c = lk__process_cpu_now() - c0;
		out->res = st.res_final;
		if (r < 0)
			continue;
		lo = w < lo ? w : lo;
		hi = w > hi ? w : hi;
		cpu = c < cpu ? c : cpu;
	}
	out->wall = lo;
	out->cpu = cpu > 0 ? cpu : NAN;
	out->spread = lo > 0 ? (hi - lo) / lo : 0.0;
	return 0;
}

int lk_bench_threads(int argc, char **argv)
{
	int quick = 0, sweeps = 20, repeats = -1, step = 10;
	const char *out = "bench-out";
	char sizes_arg[256] = "";
	const char *sizes_given = NULL;
	const lk_cli_option table[] = {
		LK_CLI_OPT_FLAG("--quick", &quick),
		LK_CLI_OPT_STRING("--sizes", &sizes_given),
		LK_CLI_OPT_STRING("--out", &out),
		LK_CLI_OPT_INT("--sweeps", &sweeps, 1, 100000),
		LK_CLI_OPT_INT("--repeat", &repeats, 1, 100000),
		LK_CLI_OPT_INT("--step", &step, 1, 100000),
		LK_CLI_OPT_END};
	const int parsed = lk_cli_parse("bench threads", argc, argv, 1, table, usage, NULL, NULL);
	if (parsed >= 0)
		return parsed;
	if (sizes_given)
		snprintf(sizes_arg, sizeof sizes_arg, "%s", sizes_given);
	if (repeats < 0)
		repeats = quick ? 3 : 7;
	if (!sizes_arg[0])
		snprintf(sizes_arg, sizeof sizes_arg, "%s", quick ? "1000,10000" : "1000,10000,100000");
	char *items[MAX_SIZES];
	int nsizes = lk_bench_split(sizes_arg, items, MAX_SIZES), sizes[MAX_SIZES];
	for (int k = 0; k < nsizes; ++k)
		if (!lk_cli_int(items[k], 10, 1000000, &sizes[k])) {
			lk_cli_error("bench threads", "--sizes: '%s' is not a count in 10..1000000", items[k]);
			return LK_EXIT_USAGE;
		}
	lk_bench_csv csv = {"bench_threads.csv", "", NULL};
	if (lk_bench_open_csvs("bench threads", out, &csv, 1) != 0)
		return LK_EXIT_FAIL;
	fprintf(csv.f, "spheres,rows,variant,threads,wall_s,cpu_s,wall_spread,ns_per_row_sweep,res_final,"
	               "sweep_alone_wall_s,sweep_alone_cpu_s,sweep_alone_ns_per_row\n");

	static const char *const names[VARIANTS] = {"natural", "colour", "colour 2t", "part", "part 2t"};
	static const char *const specs[VARIANTS] = {"pgs", "pgs:order=colour", "pgs:threads=2,order=colour",
	                                            "pgs:order=part", "pgs:threads=2,order=part"};
	printf("lcpkit bench threads: %d PGS sweeps from the captured warm start, minimum of %d repeats; a sweep "
	       "alone from %d against %d\n", sweeps, repeats, 2 * sweeps, sweeps);
	printf("%9s %8s %-10s %9s %9s %6s %9s %8s %8s %8s | %9s %7s %8s %8s %8s\n", "", "", "", "whole", "solve", "",
	       "", "", "", "", "a sweep", "alone", "", "", "");
	printf("%9s %8s %-10s %9s %9s %6s %9s %8s %8s %8s | %9s %7s %8s %8s %8s\n", "spheres", "rows", "order",
	       "wall ms", "cpu ms", "spread", "ns/row/sw", "2t/1t", "vs nat", "vs first", "ns/row", "cpu ns", "2t/1t",
	       "vs nat", "vs first");
	double first[VARIANTS] = {NAN, NAN, NAN, NAN, NAN}, first_alone[VARIANTS] = {NAN, NAN, NAN, NAN, NAN};
	int bad = 0;
	for (int k = 0; k < nsizes && !bad; ++k) {
		char spec[64], err[400];
		snprintf(spec, sizeof spec, "bigpool:n=%d", sizes[k]);
		lk_problem *p = lk_bench_capture(spec, LK_ENGINE_ODE, "pgs", 20, step, err, sizeof err);
		if (!p) {
			lk_cli_error("bench threads", "%s", err);
			bad = 1;
			break;
		}
		int n = lk_problem_row_count(p);
		double *warm = malloc(((size_t)n + 1) * sizeof *warm);
		timing t[VARIANTS], t2[VARIANTS];
		if (!warm) {
			bad = 1;
		} else {
			memcpy(warm, lk_problem_lambda(p), (size_t)n * sizeof *warm);
			for (int v = 0; v < VARIANTS && !bad; ++v)
				bad = time_variant(p, warm, specs[v], sweeps, repeats, &t[v]) != 0 ||
				      time_variant(p, warm, specs[v], 2 * sweeps, repeats, &t2[v]) != 0;
		}
		/* a sweep alone: the added sweeps' share of the difference of the minima (wall and CPU) */
		double sw[VARIANTS], sw_cpu[VARIANTS];
		for (int v = 0; v < VARIANTS && !bad; ++v) {
			sw[v] = (t2[v].wall - t[v].wall) / sweeps;
			sw_cpu[v] = (t2[v].cpu - t[v].cpu) / sweeps;
		}
		for (int v = 0; v < VARIANTS && !bad; ++v) {
			const double per = 1e9 * t[v].wall / ((double)n * sweeps), alone = 1e9 * sw[v] / n;
			if (k == 0) {
				first[v] = per;
				first_alone[v] = alone;
			}
			const int two = v == 2 || v == 4;
			char speed[16] = "", over[16] = "", speed1[16] = "", over1[16] = "";
			if (two) {
				snprintf(speed, sizeof speed, "%.2fx", t[v - 1].wall / t[v].wall);
				snprintf(over, sizeof over, "%.2fx", t[0].wall / t[v].wall);
				snprintf(speed1, sizeof speed1, "%.2fx", sw[v - 1] / sw[v]);
				snprintf(over1, sizeof over1, "%.2fx", sw[0] / sw[v]);
			}
			printf("%9d %8d %-10s %9.3f %9.3f %5.0f%% %9.2f %8s %8s %7.2fx | %9.2f %7.2f %8s %8s %7.2fx\n",
			       sizes[k], n, names[v], 1e3 * t[v].wall, 1e3 * t[v].cpu, 100.0 * t[v].spread, per, speed, over,
			       per / first[v], alone, 1e9 * sw_cpu[v] / n, speed1, over1, alone / first_alone[v]);
			fprintf(csv.f, "%d,%d,%s,%d,%.6e,%.6e,%.4f,%.4f,%.6e,%.6e,%.6e,%.4f\n", sizes[k], n, names[v],
			        two ? 2 : 1, t[v].wall, t[v].cpu, t[v].spread, per, t[v].res, sw[v], sw_cpu[v], alone);
		}
		free(warm);
		lk_problem_destroy(p);
	}
	lk_bench_close_csvs(&csv, 1);
	if (!bad)
		printf("(2t/1t: wall time of one thread in the same order over two threads; vs nat: one thread in the\n"
		       " natural order over two threads; vs first: ns per row and sweep against the smallest size, same\n"
		       " order and threads; a sweep alone: the difference of the minima of %d and %d sweeps over the %d\n"
		       " added, without the validation, the order's layout and the metrics a solve makes once; cpu ns: its\n"
		       " process CPU time, both threads summed)\nCSV: %s/bench_threads.csv\n", 2 * sweeps, sweeps, sweeps,
		       out);
	return bad ? LK_EXIT_FAIL : LK_EXIT_OK;
}

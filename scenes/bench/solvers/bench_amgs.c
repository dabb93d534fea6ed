/* lcpkit bench amgs: the accelerated modulus-based Gauss-Seidel family against PGS.
 *
 * Miyamoto & Yamashita 2019, Table 1: sweeps and time to RES < 1e-4 for PGS, Method 3.1 with
 * Omega = omega_bar E, Omega = D / gamma and (Figures 6-8, Table 2) Omega = alpha D, alpha = 0.1 .. 0.6, and the
 * dense Method 2.2. Here on generated one-step problems from lambda = 0: their Stacking with 150 spheres (in
 * 3D, one contact per sphere), and random sphere packings of about 500 to 10,000 rows frictionless and 500 to
 * 2,000 rows with friction (100,000 and 10,000 with --full). PSOR is listed beside them because AMGS with
 * alpha < 1 / gamma over-relaxes (amgs.c): at the relaxation r(alpha) = 2 / (1 + alpha gamma) that AMGS[alpha D]
 * gives the rows inside their bounds (alpha = 0.1, 0.2, 0.3 at gamma = 2), and over a scan of w (1.4 .. 1.95)
 * for PSOR at its best. Sweep counts come from a run that checks RES after every sweep; the times are of
 * separate runs of exactly that many sweeps without checks, CPU time of the lk_solve call, medians of
 * --repeat runs taken round-robin over the methods. Method 2.2's time includes forming the dense A, as in
 * the paper.
 *
 * Part 2: the cost of one sweep, AMGS against PGS on the same problem, and time per sweep against rows from
 * 1,000 to 100,000 (least-squares slope of log time against log rows: 1 is linear). */
#include "bench.h"
#include "bench_util.h"
#include "cli_util.h"
#include "clock.h"
#include "lcpkit/generate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TARGET_RES 1e-4
#define MAX_REPEAT 32

typedef struct bmethod {
	const char *label;
	const char *spec;
	int dense;  /* Method 2.2: only on small problems */
} bmethod;

static const bmethod methods[] = {
	{"PGS", "pgs", 0},
	{"AMGS[wbar E]", "amgs:omega=E", 0},
	{"AMGS[D/gamma]", "amgs:alpha=0.5", 0},
	{"AMGS[0.1 D]", "amgs:alpha=0.1", 0},
	{"AMGS[0.2 D]", "amgs:alpha=0.2", 0},
	{"AMGS[0.3 D]", "amgs:alpha=0.3", 0},
	{"AMGS[0.4 D]", "amgs:alpha=0.4", 0},
	{"AMGS[0.6 D]", "amgs:alpha=0.6", 0},
	{"AMSOR[0.3D,1.2]", "amsor:alpha=0.3,w=1.2", 0},
	/* PSOR at the relaxation AMGS[alpha D] gives the rows inside their bounds, w = 2 / (1 + alpha gamma)
	 * (amgs.c), to show the two at the same w; then a scan of w for PSOR's best */
	{"PSOR[w=r(0.1)]", "psor:w=1.6666666666666667", 0},
	{"PSOR[w=r(0.2)]", "psor:w=1.4285714285714286", 0},
	{"PSOR[w=r(0.3)]", "psor:w=1.25", 0},
	{"PSOR[w=1.4]", "psor:w=1.4", 0},
	{"PSOR[w=1.6]", "psor:w=1.6", 0},
	{"PSOR[w=1.8]", "psor:w=1.8", 0},
	{"PSOR[w=1.9]", "psor:w=1.9", 0},
	{"PSOR[w=1.95]", "psor:w=1.95", 0},
	{"2.2[D/gamma]", "amgs-dense:alpha=0.5", 1},
};
#define NMETHODS ((int)(sizeof methods / sizeof methods[0]))

/* Named by their `lcpkit gen KIND --n N --friction MU` parameters; the rows are printed. */
typedef struct bcase {
	const char *name;
	lk_gen_kind kind;
	int n;        /* spheres */
	double mu;
	int level;    /* 0: --quick, 1: default, 2: --full */
} bcase;

static const bcase cases[] = {
	{"stack-150", LK_GEN_SPHERESTACK, 150, 0.0, 0},      /* the paper's Stacking, 150 spheres */
	{"stack-150-f", LK_GEN_SPHERESTACK, 150, 0.1, 1},    /* the same with its mu = 0.1 friction rows */
	{"packing-191", LK_GEN_PACKING, 191, 0.0, 0},        /* 517 rows, near Pool 1's m = 516 */
	{"packing-690", LK_GEN_PACKING, 690, 0.0, 1},        /* 2,000 rows */
	{"packing-3390", LK_GEN_PACKING, 3390, 0.0, 1},      /* 10,000 rows */
	{"packing-34400", LK_GEN_PACKING, 34400, 0.0, 2},    /* 100,000 rows */
	{"packing-65-f", LK_GEN_PACKING, 65, 0.5, 0},        /* 500 rows */
	{"packing-200-f", LK_GEN_PACKING, 200, 0.5, 1},      /* 1,600 rows */
	{"packing-239-f", LK_GEN_PACKING, 239, 0.5, 1},      /* 2,000 rows */
	{"packing-1180-f", LK_GEN_PACKING, 1180, 0.5, 2},    /* 10,000 rows */
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* A random packing with about `target` rows (rows per sphere depend on mu). */
static lk_problem *packing_rows(int target, double mu, char *err, size_t esz)
{
	lk_gen_params g = lk_default_gen_params(LK_GEN_PACKING);
	g.mu = mu;
	lk_problem *p = NULL;
	g.n = (int)ceil(target / (mu > 0 ? 8.4 : 2.95));
	for (int attempt = 0; attempt < 3; ++attempt) {
		if (g.n < 1)
			g.n = 1;
		if (lk_generate(&g, &p, err, esz) != LK_OK)
			return NULL;
		int rows = lk_problem_row_count(p);
		if (fabs((double)rows - target) <= 0.02 * target || attempt == 2)
			break;
		g.n = (int)lround(g.n * (double)target / rows);
		lk_problem_destroy(p);
		p = NULL;
	}
	return p;
}

/* Runs cfg for exactly `sweeps` sweeps from lambda = 0; CPU seconds of the whole lk_solve call, and the
 * wall seconds of the solve proper (lk_stats.seconds). Returns 0 on success. */
static int timed_sweeps(lk_problem *p, lk_solver_config c, int sweeps, double *cpu, double *wall)
{
	c.tol_abs = 0.0;
	c.max_iterations = sweeps;
	lk_stats st;
	double t0 = lk__cpu_now();
	if (lk_solve(p, &c, &st, NULL) != LK_OK)
		return -1;
	*cpu = lk__cpu_now() - t0;
	if (wall)
		*wall = st.seconds;
	return 0;
}

static lk_solver_config method_config(const bmethod *m)
{
	lk_solver_config c;
	char err[200];
	/* the specs are constants of this file; they parse */
	if (lk_config_parse(m->spec, &c, err, sizeof err) != LK_OK)
		c = lk_default_config(LK_METHOD_PGS);
	c.warm_start = 0;
	c.tol_rel = c.tol_stag = 0.0;
	c.merit = LK_MERIT_RES;
	c.check_every = 1;
	return c;
}

/* ------------------------------------------------------------------------- part 1: to RES < 1e-4 */

typedef struct conv {
	int ran;
	int iterations;
	int reached;
	double res_final;
	double t[MAX_REPEAT], tw[MAX_REPEAT];
	double seconds;   /* median CPU time of the timed runs, or NaN */
	double wall;      /* median wall time of the solve proper */
} conv;

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit bench amgs [--quick | --full] [--repeat N] [--out DIR]\n\n"
	        "Miyamoto & Yamashita 2019's AMGS family against PGS on generated problems from lambda = 0: sweeps and\n"
	        "time to RES < 1e-4 (their Table 1), the cost of one sweep, and time per sweep against rows.\n"
	        "Prints tables and writes DIR/amgs_convergence.csv and DIR/amgs_sweep.csv.\n\n"
	        "  --quick      three small cases, sizes up to 30,000 rows for the sweep cost, 2 repeats\n"
	        "  --full       also 100,000 rows frictionless and 10,000 rows with friction to RES < 1e-4, with ten\n"
	        "               times the sweep cap (tens of minutes)\n"
	        "  --repeat N   timed runs per measurement, median reported (default 5)\n"
	        "  --out DIR    output directory (default bench-out)\n");
}

/* Sweep limit of a method on a problem of n rows: a budget of row updates, or of entries of A for Method 2.2
 * (n^2 per sweep), each about a second of work on this kind of machine. */
static int sweep_cap(int n, int dense, int level)
{
	static const double sparse[3] = {1e7, 4e7, 4e8}, dense_budget[3] = {3e8, 1.5e9, 1.5e9};
	double cap = dense ? dense_budget[level] / ((double)n * n) : sparse[level] / n;
	if (cap > 200000)
		cap = 200000;
	if (cap < 200)
		cap = 200;
	return (int)cap;
}

static int part1(int level, int repeat, FILE *csv)
{
	printf("Part 1: sweeps and time to RES < %.0e from lambda = 0. ms: CPU time of lk_solve running exactly that\n"
	       "many sweeps without checks, median of %d runs (Method 2.2 includes forming A); '>N': not within the\n"
	       "sweep cap N, RES reached shown; x PGS: sweeps and time relative to PGS on the same problem\n",
	       TARGET_RES, repeat);
	fprintf(csv, "case,rows,mu,method,spec,sweeps,reached,res_final,cpu_seconds,wall_seconds,us_per_sweep,"
	             "sweeps_vs_pgs,time_vs_pgs\n");
	int total = 0, done = 0;
	for (int k = 0; k < NCASES; ++k)
		total += cases[k].level <= level;
	for (int k = 0; k < NCASES; ++k) {
		const bcase *bc = &cases[k];
		if (bc->level > level)
			continue;
		char err[256];
		lk_gen_params g = lk_default_gen_params(bc->kind);
		g.n = bc->n;
		g.mu = bc->mu;
		lk_problem *p = NULL;
		if (lk_generate(&g, &p, err, sizeof err) != LK_OK)
			p = NULL;
		if (!p) {
			lk_cli_error("bench amgs", "%s: %s", bc->name, err);
			return LK_EXIT_FAIL;
		}
		int n = lk_problem_row_count(p);
		conv cv[NMETHODS];
		memset(cv, 0, sizeof cv);
		/* the sweep counts, with RES checked after every sweep */
		for (int m = 0; m < NMETHODS; ++m) {
			if (methods[m].dense && n > 1000)
				continue;
			lk_solver_config c = method_config(&methods[m]);
			c.tol_abs = TARGET_RES;
			c.max_iterations = sweep_cap(n, methods[m].dense, level);
			lk_stats st;
			if (lk_solve(p, &c, &st, NULL) != LK_OK) {
				lk_cli_error("bench amgs", "%s %s: %s", bc->name, methods[m].label, lk_problem_error(p));
				lk_problem_destroy(p);
				return LK_EXIT_FAIL;
			}
			cv[m].ran = 1;
			cv[m].iterations = st.iterations;
			cv[m].reached = st.stop_reason == LK_STOP_ABSOLUTE;
			cv[m].res_final = st.res_final;
			cv[m].seconds = NAN;
		}
		/* the times: exactly that many sweeps without checks, round-robin over the methods */
		for (int r = 0; r < repeat; ++r)
			for (int m = 0; m < NMETHODS; ++m) {
				if (!cv[m].ran || !cv[m].reached)
					continue;
				if (timed_sweeps(p, method_config(&methods[m]), cv[m].iterations, &cv[m].t[r], &cv[m].tw[r]) != 0) {
					lk_cli_error("bench amgs", "%s %s: %s", bc->name, methods[m].label, lk_problem_error(p));
					lk_problem_destroy(p);
					return LK_EXIT_FAIL;
				}
			}
		for (int m = 0; m < NMETHODS; ++m)
			if (cv[m].ran && cv[m].reached) {
				cv[m].seconds = lk_cli_median(cv[m].t, repeat);
				cv[m].wall = lk_cli_median(cv[m].tw, repeat);
			}

		printf("\n%s: %d rows, %d bodies, mu %g\n", bc->name, n, lk_problem_body_count(p), bc->mu);
		printf("  %-16s %9s %8s %10s %10s %9s %10s\n", "method", "sweeps", "x PGS", "RES", "ms", "x PGS",
		       "us/sweep");
		const conv *pg = &cv[0];
		for (int m = 0; m < NMETHODS; ++m) {
			const conv *c = &cv[m];
			if (!c->ran)
				continue;
			char sw[24], sr[16] = "-", ms[16] = "-", tr[16] = "-", us[16] = "-";
			snprintf(sw, sizeof sw, c->reached ? "%d" : ">%d", c->iterations);
			double sratio = NAN, tratio = NAN, per = NAN;
			if (c->reached && pg->reached) {
				sratio = (double)c->iterations / pg->iterations;
				snprintf(sr, sizeof sr, "%.3f", sratio);
			}
			if (c->reached) {
				per = c->seconds / c->iterations;
				snprintf(ms, sizeof ms, "%.2f", 1e3 * c->seconds);
				snprintf(us, sizeof us, "%.2f", 1e6 * per);
				if (pg->reached) {
					tratio = c->seconds / pg->seconds;
					snprintf(tr, sizeof tr, "%.3f", tratio);
				}
			}
			printf("  %-16s %9s %8s %10.2e %10s %9s %10s\n", methods[m].label, sw, sr, c->res_final, ms, tr, us);
			fprintf(csv, "%s,%d,%g,%s,%s,%d,%d,%.6e,%.6e,%.6e,%.6e,%.6f,%.6f\n", bc->name, n, bc->mu,
			        methods[m].label, methods[m].spec, c->iterations, c->reached, c->res_final, c->seconds,
			        c->reached ? c->wall : NAN, per, sratio, tratio);
		}
		/* Table 1's comparison of Method 3.1 with Method 2.2 at equal Omega */
		const conv *s31 = &cv[2], *s22 = &cv[NMETHODS - 1];
		if (s31->reached && s22->ran && s22->reached)
			printf("  Method 2.2 / Method 3.1 [D/gamma] time: %.1f\n", s22->seconds / s31->seconds);
		lk_problem_destroy(p);
		lk_cli_progress("amgs part 1", ++done, total);
	}
	return LK_EXIT_OK;
}

/* ---------------------------------------------------------------------- part 2: the cost of a sweep */

static int part2(int level, int repeat, FILE *csv)
{
	static const int sizes_full[] = {1000, 3000, 10000, 30000, 100000}, sizes_quick[] = {1000, 10000, 30000};
	const int *sizes = level == 0 ? sizes_quick : sizes_full;
	int nsizes = level == 0 ? 3 : 5;
	const bmethod sweepers[] = {
		{"PGS", "pgs", 0}, {"AMGS[default]", "amgs", 0}, {"AMGS[wbar E]", "amgs:omega=E", 0},
	};
	enum { NS = 3 };
	printf("\nPart 2: CPU time per sweep ((time of 2S sweeps - time of S sweeps) / S, medians of %d runs taken\n"
	       "round-robin), random packings from lambda = 0; AMGS: the defaults (Omega = %g D), AMGS-E: Omega =\n"
	       "omega_bar E\n\n",
	       repeat, lk_default_config(LK_METHOD_AMGS).amgs.alpha);
	printf("  %-4s %7s | %9s %9s %9s | %8s %8s | %9s %9s\n", "mu", "rows", "PGS ms", "AMGS ms", "AMGS-E ms",
	       "AMGS/PGS", "E/PGS", "PGS ns/r", "AMGS ns/r");
	fprintf(csv, "mu,rows,method,spec,sweeps,seconds_per_sweep,ns_per_row\n");
	int total = 2 * nsizes, done = 0;
	for (int f = 0; f < 2; ++f) {
		double mu = f ? 0.5 : 0.0;
		double lx[8], ly[NS][8];
		for (int s = 0; s < nsizes; ++s) {
			char err[256];
			lk_problem *p = packing_rows(sizes[s], mu, err, sizeof err);
			if (!p) {
				lk_cli_error("bench amgs", "packing %d: %s", sizes[s], err);
				return LK_EXIT_FAIL;
			}
			int n = lk_problem_row_count(p);
			int sweeps = (int)ceil((level == 0 ? 5e5 : 3e6) / n);
			if (sweeps < 10)
				sweeps = 10;
			/* (time of 2S sweeps - time of S sweeps) / S: the per-solve setup and metrics cancel */
			double t[NS][MAX_REPEAT];
			for (int r = 0; r < repeat; ++r)
				for (int m = 0; m < NS; ++m) {
					double t1, t2;
					lk_solver_config c = method_config(&sweepers[m]);
					if (timed_sweeps(p, c, sweeps, &t1, NULL) != 0 || timed_sweeps(p, c, 2 * sweeps, &t2, NULL) != 0) {
						lk_cli_error("bench amgs", "packing %d %s: %s", n, sweepers[m].label, lk_problem_error(p));
						lk_problem_destroy(p);
						return LK_EXIT_FAIL;
					}
					t[m][r] = (t2 - t1) / sweeps;
				}
			double med[NS];
			for (int m = 0; m < NS; ++m) {
				med[m] = lk_cli_median(t[m], repeat);
				ly[m][s] = log(med[m]);
				fprintf(csv, "%g,%d,%s,%s,%d,%.6e,%.4f\n", mu, n, sweepers[m].label, sweepers[m].spec, sweeps,
				        med[m], 1e9 * med[m] / n);
			}
			lx[s] = log((double)n);
			printf("  %-4g %7d | %9.4f %9.4f %9.4f | %8.3f %8.3f | %9.1f %9.1f\n", mu, n, 1e3 * med[0],
			       1e3 * med[1], 1e3 * med[2], med[1] / med[0], med[2] / med[0], 1e9 * med[0] / n,
			       1e9 * med[1] / n);
			lk_problem_destroy(p);
			lk_cli_progress("amgs part 2", ++done, total);
		}
		/* least-squares slope of log(time per sweep) against log(rows) */
		printf("  mu %g: slope of log(time/sweep) vs log(rows):", mu);
		for (int m = 0; m < NS; ++m) {
			double mx = 0, my = 0, sxx = 0, sxy = 0;
			for (int s = 0; s < nsizes; ++s) {
				mx += lx[s] / nsizes;
				my += ly[m][s] / nsizes;
			}
			for (int s = 0; s < nsizes; ++s) {
				sxx += (lx[s] - mx) * (lx[s] - mx);
				sxy += (lx[s] - mx) * (ly[m][s] - my);
			}
			printf(" %s %.3f%s", sweepers[m].label, sxy / sxx, m + 1 < NS ? "," : "\n");
		}
	}
	return LK_EXIT_OK;
}

int lk_bench_amgs(int argc, char **argv)
{
	int level = 1, repeat = -1;
	const char *out = "bench-out";
	int quick = 0, full = 0;
	const lk_cli_option table[] = {
		LK_CLI_OPT_FLAG("--quick", &quick),
		LK_CLI_OPT_FLAG("--full", &full),
		LK_CLI_OPT_INT("--repeat", &repeat, 1, MAX_REPEAT),
		LK_CLI_OPT_STRING("--out", &out),
		LK_CLI_OPT_END};
	const int parsed = lk_cli_parse("bench amgs", argc, argv, 1, table, usage, NULL, NULL);
	if (parsed >= 0)
		return parsed;
	level = full ? 2 : quick ? 0 : 1;
	if (repeat < 0)
		repeat = level == 0 ? 2 : 5;
	lk_bench_csv csv[2] = {{.name = "amgs_convergence.csv"}, {.name = "amgs_sweep.csv"}};
	if (lk_bench_open_csvs("bench amgs", out, csv, 2) != 0)
		return LK_EXIT_FAIL;
	int status = part1(level, repeat, csv[0].f);
	if (status == LK_EXIT_OK)
		status = part2(level, repeat, csv[1].f);
	lk_bench_close_csvs(csv, 2);
	if (status == LK_EXIT_OK)
		printf("\nwrote %s and %s\n", csv[0].path, csv[1].path);
	return status;
}

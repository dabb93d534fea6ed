/* lcpkit bench kernel: nanoseconds per row update of the Gauss-Seidel row kernels against the memory limit.
 *
 * Problems: lcpkit's generated sphere packings (lk_generate, LK_GEN_PACKING, friction 0.5: one normal and two
 * friction rows per contact, rows ordered contact by contact as an engine builds them) of about 1,000 to
 * 1,000,000 rows. For each size, side by side in every repeat:
 *   stream   the loop of a sweep with the arithmetic taken out: it reads every row record in sweep order,
 *            lambda_i and the velocity slots du_a, du_b the row addresses, and sums them. Nothing of the
 *            data a row update reads is skipped, and there is no dependency from one row to the next, so
 *            this is what the memory system allows: the streaming limit.
 *   pgs      the production PGS sweep (lk__pgs_sweep, what lk_solve runs), called directly from lambda = 0.
 *   pgs-ref  the plain scalar reference sweep (lk__pgs_sweep_ref), the same way.
 *   amgs     lk_solve with AMGS (Miyamoto & Yamashita 2019 Method 3.1/3.2, alpha = 0.2): the difference of
 *            2 S and S sweeps, so that the per-call work cancels.
 *   pgs 4k   the production sweep on a copy of the problem made with lk_set_huge_pages(0): its records and
 *            velocity slots in 4 KiB pages (the others have them in huge pages where they take 2 MiB or more).
 * Times are thread CPU time (the machine is shared; for this single-threaded loop it equals the wall time of an
 * idle machine, memory stalls included).
 * Figures are medians over the repeats; the ratio kernel / stream is the figure of merit (1 = at the memory
 * limit). Every run starts from lambda = 0 with no tolerance, so each does exactly the same sweeps.
 *
 * `--callgrind` runs one size and one kernel once, for `valgrind --tool=callgrind` instruction counts (see
 * docs/benchmarks.md); the machine-independent figure is Ir of the sweep function / row updates. */
#include "bench.h"
#include "bench_util.h"
#include "cli_util.h"
#include "clock.h"
#include "internal.h"
#include "lcpkit/generate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 8

typedef struct opts {
	int quick;
	int repeats;
	double work;          /* row updates per measurement (sweeps = work / rows, at least min_sweeps) */
	int min_sweeps;
	int nsizes;
	int sizes[MAX_SIZES];
	const char *out;
	const char *callgrind; /* kernel name for a single callgrind run, or NULL */
} opts;

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit bench kernel [--quick] [--sizes LIST] [--repeat N] [--out DIR]\n"
	        "                           [--callgrind KERNEL --sizes ROWS]\n"
	        "Nanoseconds per row update of the PGS and AMGS row kernels on generated sphere packings, next to the\n"
	        "time the same loop needs only to stream the rows and body velocities it reads (measured side by\n"
	        "side in the same run; medians). The ratio kernel / stream is the figure of merit. pgs 4k: the\n"
	        "production sweep with the problem's storage in 4 KiB pages instead of huge pages.\n"
	        "  --sizes LIST      approximate row counts (default 1000,10000,100000,1000000; quick: up to 100000)\n"
	        "  --repeat N        repeats of each measurement (default 9, quick 5)\n"
	        "  --callgrind K     run kernel K (stream, pgs, pgs-ref, amgs, pgs-4k) once on the first size, for valgrind\n"
	        "  --out DIR         CSV directory (default bench-out): bench_kernel.csv\n");
}

/* ------------------------------------------------------------------------------------------- problems */

static lk_problem *make_problem(int target_rows, char *err, size_t esz)
{
	/* a packing has about 3 contacts per sphere (x, y and z neighbours), 3 rows each */
	lk_gen_params g = lk_default_gen_params(LK_GEN_PACKING);
	g.n = target_rows / 9 > 1 ? target_rows / 9 : 1;
	g.mu = 0.5;
	g.seed = 7;
	lk_problem *p = NULL;
	if (lk_generate(&g, &p, err, esz) != LK_OK)
		return NULL;
	return p;
}

/* ---------------------------------------------------------------------------------------- the kernels */

typedef double v2d __attribute__((vector_size(16)));

#ifndef STREAM_PREFETCH
#define STREAM_PREFETCH 6
#endif

static inline v2d load2(const double *x)
{
	v2d v;
	memcpy(&v, x, sizeof v);
	return v;
}

/* One pass over the data of a sweep without its arithmetic: every row record (32 doubles), lambda_i and both
 * body slots, summed into independent accumulators so that only the loads limit it. */
__attribute__((noinline)) static double stream_sweep(const lk_problem *p, const double *lambda, const double *du)
{
	v2d s0 = {0, 0}, s1 = {0, 0}, s2 = {0, 0}, s3 = {0, 0};
	double sl = 0;
	for (int i = 0; i < p->nrows; ++i) {
		const lk__row *r = &p->rows[i];
		/* the records ahead are prefetched as the production sweep prefetches them */
		if (i + STREAM_PREFETCH < p->nrows) {
			const char *x = (const char *)&p->rows[i + STREAM_PREFETCH];
			__builtin_prefetch(x, 0, 3);
			__builtin_prefetch(x + 64, 0, 3);
			__builtin_prefetch(x + 128, 0, 3);
			__builtin_prefetch(x + 192, 0, 3);
		}
		const double *x = (const double *)r; /* J, MJ, then the scalars */
		for (int k = 0; k < 32; k += 8) {
			s0 += load2(x + k);
			s1 += load2(x + k + 2);
			s2 += load2(x + k + 4);
			s3 += load2(x + k + 6);
		}
		const double *da = du + 6 * (size_t)r->a, *db = du + 6 * (size_t)r->b;
		s0 += load2(da);
		s1 += load2(da + 2);
		s2 += load2(da + 4);
		s3 += load2(db);
		s0 += load2(db + 2);
		s1 += load2(db + 4);
		sl += lambda[i];
	}
	v2d s = s0 + s1 + s2 + s3;
	return s[0] + s[1] + sl;
}

static volatile double sink;

/* Timings here are thread CPU time (lk__cpu_now): for these single-threaded loops it is the wall time of an
 * idle machine, memory stalls included. */

/* Seconds per row update of `sweeps` stream passes. */
static double run_stream(lk_problem *p, int sweeps)
{
	double t0 = lk__cpu_now(), acc = 0;
	for (int s = 0; s < sweeps; ++s) {
		/* the data might have changed: every pass is made (the compiler sees a pure function otherwise) */
		__asm__ volatile("" ::: "memory");
		acc += stream_sweep(p, p->lambda, p->du);
	}
	double t = lk__cpu_now() - t0;
	sink = acc;
	return t / ((double)sweeps * p->nrows);
}

/* Seconds per row update of `sweeps` sweeps of a PGS sweep function, called directly on a solve context as
 * lk__solve_pgs calls it (from lambda = 0), so that only the sweeps are timed. */
static double run_sweeps(lk_problem *p, double (*sweep)(lk__ctx *, const int *, int, double), int sweeps)
{
	lk__ctx c;
	memset(&c, 0, sizeof c);
	c.p = p;
	c.n = p->nrows;
	c.lambda = p->lambda;
	c.du = p->du;
	memset(p->lambda, 0, (size_t)p->nrows * sizeof(double));
	lk__recompute_du(p, p->lambda, p->du);
	double t0 = lk__cpu_now(), acc = 0;
	for (int s = 0; s < sweeps; ++s)
		acc += sweep(&c, NULL, c.n, 1.0);
	double t = lk__cpu_now() - t0;
	sink = acc;
	p->du_valid = 1;
	return t / ((double)sweeps * p->nrows);
}

/* Seconds per row update of a method's sweeps through lk_solve: (CPU time of 2 S sweeps - that of S sweeps) /
 * (S n), so that lk_solve's per-call work (validation, the residuals before and after, the method's set-up)
 * cancels. */
static double solve_cpu(lk_problem *p, const lk_solver_config *cfg)
{
	lk_stats st;
	double t0 = lk__cpu_now();
	if (lk_solve(p, cfg, &st, NULL) != LK_OK)
		return NAN;
	return lk__cpu_now() - t0;
}

static double run_solver(lk_problem *p, lk_method m, int sweeps)
{
	lk_solver_config cfg = lk_default_config(m);
	cfg.tol_abs = cfg.tol_rel = cfg.tol_stag = 0;
	cfg.warm_start = 0;
	if (m == LK_METHOD_AMGS)
		cfg.amgs.alpha = 0.2;
	cfg.max_iterations = sweeps;
	double t1 = solve_cpu(p, &cfg);
	cfg.max_iterations = 2 * sweeps;
	double t2 = solve_cpu(p, &cfg);
	return (t2 - t1) / ((double)sweeps * p->nrows);
}

typedef enum kernel { K_STREAM = 0, K_PGS, K_PGS_REF, K_AMGS, K_PGS_4K, K_COUNT } kernel;
static const char *const kernel_names[K_COUNT] = {"stream", "pgs", "pgs-ref", "amgs", "pgs-4k"};

/* p4k: the same problem with its storage in 4 KiB pages */
static double run_kernel(lk_problem *p, lk_problem *p4k, kernel k, int sweeps)
{
	switch (k) {
	case K_STREAM: return run_stream(p, sweeps);
	case K_PGS: return run_sweeps(p, lk__pgs_sweep, sweeps);
	case K_PGS_REF: return run_sweeps(p, lk__pgs_sweep_ref, sweeps);
	case K_AMGS: return run_solver(p, LK_METHOD_AMGS, sweeps);
	case K_PGS_4K: return run_sweeps(p4k, lk__pgs_sweep, sweeps);
	default: return NAN;
	}
}

/* ------------------------------------------------------------------------------------------- the run */

/* --sizes: a comma list of row counts (lk_cli_parse's LK_CLI_CALL) */
#define LK_STR_(x) #x
#define LK_STR(x) LK_STR_(x)
static int sizes_option(void *arg, const char *v)
{
	opts *o = arg;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", v);
	o->nsizes = 0;
	for (char *s = strtok(buf, ","); s; s = strtok(NULL, ",")) {
		if (o->nsizes >= MAX_SIZES || !lk_cli_int(s, 10, 20000000, &o->sizes[o->nsizes]))
			return 0;
		++o->nsizes;
	}
	return o->nsizes > 0;
}

int lk_bench_kernel(int argc, char **argv)
{
	const char *cmd = "bench kernel";
	opts o;
	memset(&o, 0, sizeof o);
	o.out = "bench-out";
	o.repeats = -1;
	o.work = 4e6;
	o.min_sweeps = 3;
	const lk_cli_option table[] = {
		LK_CLI_OPT_FLAG("--quick", &o.quick),
		LK_CLI_OPT_CALL("--sizes", &o, sizes_option, "up to " LK_STR(MAX_SIZES) " row counts from 10 to 20000000"),
		LK_CLI_OPT_INT("--repeat", &o.repeats, 1, 1000),
		LK_CLI_OPT_STRING("--callgrind", &o.callgrind),
		LK_CLI_OPT_STRING("--out", &o.out),
		LK_CLI_OPT_END};
	const int parsed = lk_cli_parse(cmd, argc, argv, 1, table, usage, NULL, NULL);
	if (parsed >= 0)
		return parsed;
	if (o.repeats < 0)
		o.repeats = o.quick ? 5 : 9;
	if (o.nsizes == 0) {
		const int def[4] = {1000, 10000, 100000, 1000000};
		o.nsizes = o.quick ? 3 : 4;
		memcpy(o.sizes, def, sizeof def);
	}
	if (o.quick)
		o.work = 1e6;

	if (o.callgrind) {
		int k = -1;
		for (int j = 0; j < K_COUNT; ++j)
			if (!strcmp(o.callgrind, kernel_names[j]))
				k = j;
		if (k < 0) {
			lk_cli_error(cmd, "--callgrind: unknown kernel '%s' (stream, pgs, pgs-ref, amgs, pgs-4k)", o.callgrind);
			return LK_EXIT_USAGE;
		}
		char err[256];
		lk_problem *p = make_problem(o.sizes[0], err, sizeof err);
		if (!p) {
			lk_cli_error(cmd, "%s", err);
			return LK_EXIT_FAIL;
		}
		const int sweeps = 20;
		double t;
		if (k == K_AMGS) {
			/* one solve of exactly `sweeps` sweeps, so that the count divides by the right number */
			lk_solver_config cfg = lk_default_config(LK_METHOD_AMGS);
			cfg.tol_abs = cfg.tol_rel = cfg.tol_stag = 0;
			cfg.warm_start = 0;
			cfg.amgs.alpha = 0.2;
			cfg.max_iterations = sweeps;
			t = solve_cpu(p, &cfg) / ((double)sweeps * lk_problem_row_count(p));
		} else {
			t = run_kernel(p, p, (kernel)k, sweeps);
		}
		printf("%s: %d rows, %d sweeps, %lld row updates, %.2f ns per row update (under valgrind: meaningless)\n",
		       kernel_names[k], lk_problem_row_count(p), sweeps, (long long)sweeps * lk_problem_row_count(p), 1e9 * t);
		lk_problem_destroy(p);
		return LK_EXIT_OK;
	}

	lk_bench_csv file = {.name = "bench_kernel.csv"};
	if (lk_bench_open_csvs(cmd, o.out, &file, 1) != 0)
		return LK_EXIT_FAIL;
	FILE *csv = file.f;
	fprintf(csv, "rows,bodies,bytes,sweeps,kernel,ns_per_row_update,ratio_to_stream\n");
	printf("lcpkit bench kernel: ns per row update, medians of %d repeats measured side by side\n", o.repeats);
	printf("  %9s %8s %7s %6s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "rows", "bodies", "MB", "sweeps", "stream",
	       "pgs", "pgs/str", "pgs-ref", "ref/str", "amgs", "amgs/str", "pgs 4k", "4k/pgs");
	int rc = LK_EXIT_OK;
	for (int s = 0; s < o.nsizes && rc == LK_EXIT_OK; ++s) {
		char err[256];
		lk_problem *p = make_problem(o.sizes[s], err, sizeof err);
		const int huge = lk_huge_pages();
		lk_set_huge_pages(0);
		lk_problem *p4k = p ? make_problem(o.sizes[s], err, sizeof err) : NULL;
		lk_set_huge_pages(huge);
		if (!p || !p4k) {
			lk_cli_error(cmd, "%s", err);
			lk_problem_destroy(p);
			rc = LK_EXIT_FAIL;
			break;
		}
		const int n = lk_problem_row_count(p), nb = lk_problem_body_count(p);
		int sweeps = (int)(o.work / n);
		if (sweeps < o.min_sweeps)
			sweeps = o.min_sweeps;
		double *t = malloc(sizeof(double) * K_COUNT * (size_t)o.repeats), med[K_COUNT];
		if (!t) {
			lk_problem_destroy(p);
			lk_problem_destroy(p4k);
			rc = LK_EXIT_FAIL;
			break;
		}
		/* one untimed pass of each kernel first: page faults, arena growth and caches */
		for (int k = 0; k < K_COUNT; ++k)
			run_kernel(p, p4k, (kernel)k, 1);
		for (int r = 0; r < o.repeats; ++r)
			for (int k = 0; k < K_COUNT; ++k)
				t[k * o.repeats + r] = run_kernel(p, p4k, (kernel)k, sweeps);
		for (int k = 0; k < K_COUNT; ++k)
			med[k] = lk_cli_median(t + k * o.repeats, o.repeats);
		const double mb = ((double)n * sizeof(lk__row) + (double)(nb + 1) * 48 + (double)n * 8) / 1e6;
		printf("  %9d %8d %7.1f %6d %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n", n, nb, mb, sweeps,
		       1e9 * med[K_STREAM], 1e9 * med[K_PGS], med[K_PGS] / med[K_STREAM], 1e9 * med[K_PGS_REF],
		       med[K_PGS_REF] / med[K_STREAM], 1e9 * med[K_AMGS], med[K_AMGS] / med[K_STREAM], 1e9 * med[K_PGS_4K],
		       med[K_PGS_4K] / med[K_PGS]);
		fflush(stdout);
		for (int k = 0; k < K_COUNT; ++k)
			fprintf(csv, "%d,%d,%.0f,%d,%s,%.4f,%.4f\n", n, nb, mb * 1e6, sweeps, kernel_names[k], 1e9 * med[k],
			        med[k] / med[K_STREAM]);
		free(t);
		lk_problem_destroy(p);
		lk_problem_destroy(p4k);
	}
	lk_bench_close_csvs(&file, 1);
	if (rc == LK_EXIT_OK)
		printf("\nCSV: %s\n", file.path);
	return rc;
}

/* lcpkit bench paper: the experiments of the source papers on the scene library's scenes, printed next to the
 * papers' own figures.
 *
 *   t1   Miyamoto & Yamashita 2019, Table 1: iterations and time to RES < 1e-4 (eq. 24) at the 100th step of
 *        Pool 1, Pool 2 and Stacking with 150 circles, frictionless (mu = 0), in 2D (the scenes' default).
 *        The simulation runs 10 PGS iterations per step with warm start, as the paper's (sec. 5); the 100th
 *        step's problem is captured and solved from its warm start by PGS, Method 3.1 [omega_bar E]
 *        (amgs:omega=E), Method 3.1 [D / gamma] (amgs:alpha=0.5), Method 2.2 [D / gamma] (amgs-dense) and,
 *        beyond the paper, Method 3.1 [0.2 D] and [0.1 D]. Iterations come from a run that checks RES after
 *        every sweep; times from runs of exactly that many sweeps without checks (thread CPU time, the
 *        minimum of the repeats, and their spread), Method 2.2's
 *        including its assembly of the dense A, as the paper's. Then Method 3.1 against 2.2 on Pool 1 with
 *        more circles: the ratio of their times, which should grow with the size.
 *   t2   Table 2: 1,000 steps (--steps) with 200 iterations per step, PGS and Method 3.1 [alpha D] for
 *        alpha = 0.1 ... 0.6, each in its own simulation, all stepped side by side; the total solve time
 *        (lk_solve's own) and the median RES after the solve over the steps after the 60th (the paper drops
 *        the first 60 as noise). With friction, as the scenes' default (Method 3.2).
 *   ord  Poulsen, Abel & Erleben 2010, Tables 2 and 3: time per iteration of PGS over that of ESP and GSP
 *        (their eq. 24 "speedup") on a non-structured, a loosely structured and a densely structured
 *        problem captured from scenes, and the merit theta (eq. 23) each reaches in the same iterations.
 *   sm   Silcowitz, Niebe & Erleben: PGS-SM against PGS on scene versions of their test cases (Figure 2 a-e,
 *        g, h; boxes for gears), captured from a running simulation: the Fischer merit PGS-SM reaches, the
 *        merit of PGS after the same work in PGS sweeps (their unit), and the PGS sweeps needed to match it.
 *
 * Problems are captured from a simulation in one engine (--engine, default ode) that runs lcpkit's PGS with
 * the paper's iteration count; every method then solves the same captured problem (lambda = its warm start).
 */
#include "bench.h"
#include "clock.h"
#include "bench_util.h"
#include "cli_util.h"
#include "scene.h"
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct opts {
	int quick;
	int repeats;
	int t2_steps;
	lk_engine engine;
	int part_t1, part_t2, part_ord, part_sm;
	const char *out;
} opts;

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit bench paper [--quick] [--parts LIST] [--engine ode|bullet] [--steps N] [--repeat N]\n"
	        "                          [--out DIR]\n"
	        "The papers' experiments on lcpkit's scenes, next to the papers' figures:\n"
	        "  t1   Miyamoto & Yamashita 2019 Table 1 (Pool 1, Pool 2, Stacking-150, frictionless, 2D) and\n"
	        "       Method 3.1 vs 2.2 against size\n"
	        "  t2   Miyamoto & Yamashita 2019 Table 2 (steps x 200 iterations, AMGS[alpha D] vs PGS)\n"
	        "  ord  Poulsen et al. 2010 Tables 2 and 3 (ESP and GSP time per iteration vs PGS)\n"
	        "  sm   Silcowitz et al. PGS-SM vs PGS on their test cases\n"
	        "  --parts LIST    comma-separated parts (default t1,t2,ord,sm)\n"
	        "  --engine E      engine the problems come from (default ode)\n"
	        "  --steps N       simulation steps of t2 (default 1000, quick 200)\n"
	        "  --repeat N      timing repeats (default 5, quick 3)\n"
	        "  --out DIR       CSV directory (default bench-out): bench_paper_*.csv\n");
}

/* ----------------------------------------------------------------------------------- captured problems */

/* Runs `spec` in the engine with `solver` at `iterations` for step-1 steps and captures the problem of step
 * number `step` (1-based). NULL with a message on failure. */
static lk_problem *capture(const char *spec, const opts *o, const char *solver, int iterations, int step, char *err,
                           size_t esz)
{
	return lk_bench_capture(spec, o->engine, solver, iterations, step, err, esz);
}

static int count_kind(const lk_problem *p, lk_row_kind kind)
{
	int n = 0;
	for (int i = 0; i < lk_problem_row_count(p); ++i) {
		lk_row_kind k;
		if (lk_problem_get_bounds(p, i, NULL, NULL, NULL, NULL, &k) == LK_OK && k == kind)
			++n;
	}
	return n;
}

/* The frictionless LCP(q, A) of Miyamoto & Yamashita (their eq. 3) inside a captured problem: its contact
 * normal rows only, with their warm start. An engine's 2D scene has rows the paper's 2D formulation has not:
 * ODE's Plane2D joint rows (they act on v_y, w_x, w_z, which in-plane contact rows do not touch: A is block
 * diagonal and those rows only add their own, diagonal, block) and Bullet's friction rows, which it makes even
 * for mu = 0 (their bounds are [0, 0]). NULL if out of memory or no normal rows. */
static lk_problem *normal_rows_only(const lk_problem *src)
{
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	const int nb = lk_problem_body_count(src), n = lk_problem_row_count(src);
	double *lambda = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
	int m = 0;
	if (!p || !lambda)
		goto fail;
	for (int i = 0; i < nb; ++i)
		if (lk_problem_add_body(p, lk_problem_body(src, i), NULL) != LK_OK)
			goto fail;
	const double *l0 = lk_problem_lambda(src);
	for (int i = 0; i < n; ++i) {
		lk_row_def d;
		if (lk_problem_get_row(src, i, &d) != LK_OK)
			goto fail;
		if (d.kind != LK_ROW_NORMAL || d.findex >= 0)
			continue;
		if (lk_problem_add_row(p, &d, NULL) != LK_OK)
			goto fail;
		lambda[m++] = l0[i];
	}
	if (m == 0 || lk_problem_set_lambda(p, lambda, m) != LK_OK)
		goto fail;
	free(lambda);
	return p;
fail:
	free(lambda);
	lk_problem_destroy(p);
	return NULL;
}

/* Solves p from `start` with cfg; stats out. */
static lk_status solve_from(lk_problem *p, const double *start, const lk_solver_config *cfg, lk_stats *st,
                            lk_history *h)
{
	lk_status rc = lk_problem_set_lambda(p, start, lk_problem_row_count(p));
	if (rc == LK_OK)
		rc = lk_solve(p, cfg, st, h);
	return rc;
}

/* The thread CPU time of `repeats` solves of cfg from start (at most 16): the minimum in *min_s and the spread
 * (max - min) / min in *spread, the stats of the last solve in *st. Returns 0 if a solve fails. */
static int cpu_solves(lk_problem *p, const double *start, const lk_solver_config *cfg, int repeats, lk_stats *st,
                      double *min_s, double *spread)
{
	double lo = INFINITY, hi = 0.0;
	if (repeats > 16)
		repeats = 16;
	for (int r = 0; r < (repeats > 0 ? repeats : 1); ++r) {
		double t0 = lk__cpu_now();
		if (solve_from(p, start, cfg, st, NULL) != LK_OK)
			return 0;
		double t = lk__cpu_now() - t0;
		lo = t < lo ? t : lo;
		hi = t > hi ? t : hi;
	}
	*min_s = lo;
	*spread = lo > 0 ? (hi - lo) / lo : 0.0;
	return 1;
}

static double *copy_lambda(const lk_problem *p)
{
	int n = lk_problem_row_count(p);
	double *x = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
	if (x && n > 0)
		memcpy(x, lk_problem_lambda(p), sizeof(double) * (size_t)n);
	return x;
}

/* ---------------------------------------------------------------------------------------------- t1 */

typedef struct t1_method {
	const char *label;
	const char *spec;
	int paper_row;        /* index into the paper's rows, -1 if not in the paper */
} t1_method;

static const t1_method t1_methods[] = {
	{"PGS", "pgs", 0},
	{"Method 3.1 [omega_bar E]", "amgs:omega=E", 2},
	{"Method 3.1 [D/gamma]", "amgs:alpha=0.5", 3},
	{"Method 2.2 [D/gamma]", "amgs-dense:alpha=0.5", 1},
	{"Method 3.1 [0.2 D]", "amgs:alpha=0.2", -1},
	{"Method 3.1 [0.1 D]", "amgs:alpha=0.1", -1},
	/* PSOR over a scan of w (the honest baseline is PSOR at its best w), and the accelerated methods */
	{"PSOR w=1.4", "psor:w=1.4", -1},
	{"PSOR w=1.6", "psor:w=1.6", -1},
	{"PSOR w=1.8", "psor:w=1.8", -1},
	{"PSOR w=1.9", "psor:w=1.9", -1},
	{"PSOR w=1.95", "psor:w=1.95", -1},
	{"NNCG", "nncg", -1},
	{"APGD", "apgd", -1},
	{"APGD metric=identity", "apgd:metric=identity", -1},
	{"MPRGP", "mprgp", -1},
};
#define T1_METHODS ((int)(sizeof t1_methods / sizeof t1_methods[0]))

typedef struct t1_scene {
	const char *label;
	const char *spec;
	int paper_iters[4];
	double paper_secs[4];
} t1_scene;

/* Miyamoto & Yamashita 2019, Table 1: PGS, Method 2.2 [D/gamma], Method 3.1 [omega_bar E], [D/gamma] */
static const t1_scene t1_scenes[] = {
	{"Pool 1", "pool1:mu=0", {1452, 766, 1522, 766}, {0.042, 1.251, 0.055, 0.023}},
	{"Pool 2", "pool2:mu=0", {1359, 744, 1393, 744}, {0.042, 1.428, 0.048, 0.028}},
	{"Stacking", "stacking:n=150,mu=0", {16186, 7754, 16431, 7754}, {0.162, 0.293, 0.183, 0.066}},
};
#define T1_SCENES ((int)(sizeof t1_scenes / sizeof t1_scenes[0]))

#define T1_MAX_ITERS 100000

/* Iterations to RES < 1e-2, 1e-3 and 1e-4 from `start` (RES after every sweep, from the history; -1 if not
 * reached within T1_MAX_ITERS), then the minimum thread CPU time (and the spread) over the repeats of as many
 * sweeps as the last target needed (or the cap), without checks. known_iters > 0 skips the convergence run (a method whose iterates are another's, or a
 * fixed number of sweeps). A run longer than about a second is timed once; Method 2.2 beyond T1_DENSE_SWEEPS
 * sweeps is timed on that many and scaled (*extrapolated = 1): its sweeps all cost the same O(n^2). */
#define T1_DENSE_SWEEPS 2000
#define T1_TARGETS 3
static const double t1_targets[T1_TARGETS] = {1e-2, 1e-3, 1e-4};

static int t1_measure(lk_problem *p, const double *start, const char *spec, int repeats, int known_iters,
                      int iters[T1_TARGETS], double *secs, double *spread, int *sweeps, double *res,
                      int *extrapolated)
{
	lk_solver_config cfg;
	char err[256];
	if (lk_config_parse(spec, &cfg, err, sizeof err) != LK_OK)
		return 0;
	const int dense = cfg.method == LK_METHOD_AMGS_DENSE, n = lk_problem_row_count(p);
	cfg.warm_start = 1;
	cfg.merit = LK_MERIT_RES;
	cfg.tol_rel = cfg.tol_stag = 0;
	lk_stats st;
	*extrapolated = 0;
	int k = known_iters;
	for (int j = 0; j < T1_TARGETS; ++j)
		iters[j] = -1;
	*res = NAN;
	if (known_iters <= 0) {
		lk_history h;
		h.capacity = T1_MAX_ITERS + 1;
		h.count = 0;
		h.entries = malloc(sizeof *h.entries * (size_t)h.capacity);
		if (!h.entries)
			return 0;
		cfg.tol_abs = t1_targets[T1_TARGETS - 1];
		cfg.check_every = 1;
		cfg.max_iterations = T1_MAX_ITERS;
		if (solve_from(p, start, &cfg, &st, &h) != LK_OK) {
			free(h.entries);
			return 0;
		}
		for (int e = 0; e < h.count; ++e)
			for (int j = 0; j < T1_TARGETS; ++j)
				if (iters[j] < 0 && h.entries[e].res < t1_targets[j])
					iters[j] = h.entries[e].iteration;
		free(h.entries);
		*res = st.res_final;
		k = st.iterations;
	}
	if (k < 1)
		k = 1;
	*sweeps = k;
	cfg.tol_abs = 0;
	cfg.max_iterations = dense && k > T1_DENSE_SWEEPS ? T1_DENSE_SWEEPS : k;
	if ((double)cfg.max_iterations * n * (dense ? n : 15) > 2e9)
		repeats = 1;
	if (!cpu_solves(p, start, &cfg, repeats, &st, secs, spread))
		return 0;
	if (cfg.max_iterations < k) {
		*secs *= (double)k / cfg.max_iterations;
		*extrapolated = 1;
	}
	return 1;
}

static void fmt_iters(char *buf, size_t size, int it)
{
	if (it >= 0)
		snprintf(buf, size, "%d", it);
	else
		snprintf(buf, size, "-");
}

static int part_t1(const opts *o, FILE *csv)
{
	printf("\n== Miyamoto & Yamashita 2019, Table 1: iterations and time to RES < 1e-4 at the 100th step, "
	       "frictionless, 2D\n");
	printf("   (simulation: %s with lcpkit pgs, 10 iterations per step, warm start, mu = 0; the contact normal rows "
	       "of step 100\n    solved from their warm start; iterations capped at %d)\n",
	       lk_engine_name(o->engine), T1_MAX_ITERS);
	for (int s = 0; s < T1_SCENES; ++s) {
		const t1_scene *ts = &t1_scenes[s];
		char err[400];
		lk_problem *full = capture(ts->spec, o, "pgs", 10, 100, err, sizeof err);
		if (!full) {
			lk_cli_error("bench paper", "%s", err);
			return 0;
		}
		lk_problem *p = normal_rows_only(full);
		double *start = p ? copy_lambda(p) : NULL;
		if (!p || !start) {
			lk_cli_error("bench paper", "%s: no contact rows at step 100", ts->spec);
			lk_problem_destroy(full);
			lk_problem_destroy(p);
			free(start);
			return 0;
		}
		printf("\n%s (%s): %d bodies, %d contact rows (the engine's step had %d rows)\n", ts->label, ts->spec,
		       lk_problem_body_count(p), lk_problem_row_count(p), lk_problem_row_count(full));
		lk_problem_destroy(full);
		const int n = lk_problem_row_count(p);
		printf("  %-26s %8s %8s %8s %10s %7s %12s | %9s %8s %12s\n", "method", "1e-2", "1e-3", "1e-4", "cpu s",
		       "spread", "vs PGS it/s", "paper it.", "paper s", "paper vs PGS");
		int it_pgs[T1_TARGETS] = {-1, -1, -1}, it_31[T1_TARGETS] = {-1, -1, -1};
		double t_pgs = NAN, t_31 = NAN, t_22 = NAN;
		for (int m = 0; m < T1_METHODS; ++m) {
			const t1_method *tm = &t1_methods[m];
			const int dense = !strncmp(tm->spec, "amgs-dense", 10);
			int iters[T1_TARGETS], extrap = 0, sweeps = 0;
			double secs = NAN, spread = NAN, res = NAN;
			/* Method 2.2 has Method 3.1's iterates (the same splitting, eq. 14 both): where running it to the
			 * tolerance costs more than a few seconds its iteration counts are taken from 3.1 [D/gamma] and
			 * its time is that of as many sweeps */
			int known = 0, k31 = it_31[T1_TARGETS - 1] > 0 ? it_31[T1_TARGETS - 1] : T1_MAX_ITERS;
			if (dense && (double)n * n * k31 > 4e9)
				known = k31;
			int reps = dense ? (o->repeats > 3 ? 3 : o->repeats) : o->repeats;
			if (!t1_measure(p, start, tm->spec, reps, known, iters, &secs, &spread, &sweeps, &res, &extrap)) {
				printf("  %-26s failed: %s\n", tm->label, lk_problem_error(p));
				continue;
			}
			if (known)
				memcpy(iters, it_31, sizeof iters);
			if (m == 0) {
				memcpy(it_pgs, iters, sizeof it_pgs);
				t_pgs = secs;
			}
			if (!strcmp(tm->spec, "amgs:alpha=0.5")) {
				memcpy(it_31, iters, sizeof it_31);
				t_31 = secs;
			}
			if (dense)
				t_22 = secs;
			char its[T1_TARGETS][16], paper_it[32] = "", paper_s[32] = "", paper_ratio[32] = "";
			for (int j = 0; j < T1_TARGETS; ++j)
				fmt_iters(its[j], sizeof its[j], iters[j]);
			if (tm->paper_row >= 0) {
				snprintf(paper_it, sizeof paper_it, "%d", ts->paper_iters[tm->paper_row]);
				snprintf(paper_s, sizeof paper_s, "%.3f", ts->paper_secs[tm->paper_row]);
				snprintf(paper_ratio, sizeof paper_ratio, "%.2f / %.2f",
				         (double)ts->paper_iters[tm->paper_row] / ts->paper_iters[0],
				         ts->paper_secs[tm->paper_row] / ts->paper_secs[0]);
			}
			/* against PGS at the tightest target both reached; the time ratio is per sweep times that */
			char vs[32] = "";
			for (int j = T1_TARGETS - 1; j >= 0 && !vs[0]; --j)
				if (it_pgs[j] > 0 && iters[j] > 0) {
					double kp = it_pgs[T1_TARGETS - 1] > 0 ? it_pgs[T1_TARGETS - 1] : T1_MAX_ITERS;
					double km = iters[T1_TARGETS - 1] > 0 ? iters[T1_TARGETS - 1] : T1_MAX_ITERS;
					double per_m = secs / km, per_p = t_pgs / kp;
					snprintf(vs, sizeof vs, "%.2f / %.2f%s", (double)iters[j] / it_pgs[j],
					         (iters[j] * per_m) / (it_pgs[j] * per_p), j < T1_TARGETS - 1 ? "'" : "");
				}
			printf("  %-26s %8s %8s %8s %9.4f%s %6.0f%% %12s | %9s %8s %12s%s\n", tm->label, its[0], its[1], its[2],
			       secs, extrap ? "*" : " ", 100.0 * spread, vs, paper_it, paper_s, paper_ratio,
			       known ? " (iterates of 3.1)" : "");
			fprintf(csv, "t1,\"%s\",\"%s\",%d,%d,%d,%d,%d,%d,%.6e,%.6e,%.4f", ts->spec, tm->spec, n, iters[0], iters[1],
			        iters[2], sweeps, extrap, secs, res, spread);
			if (tm->paper_row >= 0)
				fprintf(csv, ",%d,%.4f\n", ts->paper_iters[tm->paper_row], ts->paper_secs[tm->paper_row]);
			else
				fprintf(csv, ",,\n");
			fflush(stdout);
		}
		printf("  (iterations to RES < 1e-2 / 1e-3 / 1e-4, '-' not within %d; time to 1e-4 or for the %d sweeps;\n"
		       "   vs PGS: iterations / time at the tightest target both reached, ' = not 1e-4; * = timed on fewer "
		       "sweeps and scaled.\n   Method 2.2 / Method 3.1 [D/gamma] time: %.0fx, paper %.0fx)\n",
		       T1_MAX_ITERS, T1_MAX_ITERS, t_22 / t_31, ts->paper_secs[1] / ts->paper_secs[3]);
		free(start);
		lk_problem_destroy(p);
	}

	/* Method 3.1 against 2.2 as Pool 1 grows (the same 6 m pool: more layers of circles). The two have the same
	 * iterates, so the ratio of their times to any tolerance is that of their sweeps, Method 2.2's assembly of
	 * A included: 200 sweeps of each from the same warm start. */
	const int sizes[3] = {221, 442, 884};
	const int nsizes = o->quick ? 2 : 3;
	const int sweeps = 200;
	printf("\nMethod 3.1 [D/gamma] vs Method 2.2 [D/gamma] on frictionless Pool 1 as it grows: %d sweeps each (same "
	       "iterates),\n2.2 including its assembly of the dense A\n",
	       sweeps);
	printf("  %8s %8s %12s %12s %10s\n", "circles", "rows", "3.1 ms", "2.2 ms", "2.2 / 3.1");
	for (int k = 0; k < nsizes; ++k) {
		char spec[64], err[400];
		snprintf(spec, sizeof spec, "pool1:mu=0,n=%d", sizes[k]);
		lk_problem *full = capture(spec, o, "pgs", 10, 100, err, sizeof err);
		lk_problem *p = full ? normal_rows_only(full) : NULL;
		lk_problem_destroy(full);
		double *start = p ? copy_lambda(p) : NULL;
		if (!p || !start) {
			lk_cli_error("bench paper", "%s: %s", spec, p ? "out of memory" : err);
			lk_problem_destroy(p);
			free(start);
			continue;
		}
		int i31[T1_TARGETS], i22[T1_TARGETS], x = 0, k31 = 0, k22 = 0;
		double s31 = NAN, s22 = NAN, r = NAN;
		double sp;
		if (t1_measure(p, start, "amgs:alpha=0.5", o->repeats, sweeps, i31, &s31, &sp, &k31, &r, &x) &&
		    t1_measure(p, start, "amgs-dense:alpha=0.5", o->quick ? 1 : 3, sweeps, i22, &s22, &sp, &k22, &r, &x)) {
			printf("  %8d %8d %12.3f %12.3f %10.0f\n", sizes[k], lk_problem_row_count(p), 1e3 * s31, 1e3 * s22,
			       s22 / s31);
			/* seconds: Method 3.1; res_final: Method 2.2's seconds (the same sweeps) */
			fprintf(csv, "t1_size,\"%s\",amgs:alpha=0.5 vs amgs-dense:alpha=0.5,%d,,,,%d,0,%.6e,%.6e,,,\n", spec,
			        lk_problem_row_count(p), k31, s31, s22);
		} else {
			printf("  %8d failed: %s\n", sizes[k], lk_problem_error(p));
		}
		fflush(stdout);
		free(start);
		lk_problem_destroy(p);
	}
	return 1;
}

/* ---------------------------------------------------------------------------------------------- t2 */

typedef struct t2_scene {
	const char *label;
	const char *spec;
	double paper[7]; /* PGS, alpha = 0.1 ... 0.6: seconds for 1,000 steps */
} t2_scene;

static const t2_scene t2_scenes[] = {
	{"Pool 1", "pool1", {2.639, 2.083, 1.974, 2.051, 1.996, 1.968, 2.022}},
	{"Pool 2", "pool2", {2.093, 1.921, 1.907, 1.849, 1.904, 1.915, 1.915}},
	{"Stacking", "stacking", {0.095, 0.099, 0.081, 0.085, 0.085, 0.089, 0.082}},
};
#define T2_SCENES ((int)(sizeof t2_scenes / sizeof t2_scenes[0]))
#define T2_RUNS 7

static int part_t2(const opts *o, FILE *csv)
{
	const int steps = o->t2_steps, skip = 60 < steps / 2 ? 60 : steps / 2;
	printf("\n== Miyamoto & Yamashita 2019, Table 2: %d steps x 200 iterations (paper: 1,000 steps), with friction, "
	       "2D, %s\n",
	       steps, lk_engine_name(o->engine));
	printf("   total solve time (lk_solve's own) and median RES after the solve over steps %d..%d\n", skip + 1, steps);
	for (int s = 0; s < T2_SCENES; ++s) {
		const t2_scene *ts = &t2_scenes[s];
		char err[400];
		lk_scene *sc = NULL;
		if (lk_scene_create(ts->spec, &sc, err, sizeof err) != LK_OK) {
			lk_cli_error("bench paper", "%s", err);
			return 0;
		}
		char specs[T2_RUNS][32];
		lk_sim *sim[T2_RUNS] = {0};
		double total[T2_RUNS] = {0};
		double *res = calloc((size_t)T2_RUNS * (size_t)steps, sizeof(double));
		int rows_sum[T2_RUNS] = {0}, failed[T2_RUNS] = {0}, nres[T2_RUNS] = {0};
		if (!res) {
			lk_scene_destroy(sc);
			return 0;
		}
		for (int k = 0; k < T2_RUNS; ++k) {
			if (k == 0)
				snprintf(specs[k], sizeof specs[k], "pgs");
			else
				snprintf(specs[k], sizeof specs[k], "amgs:alpha=0.%d", k);
			lk_sim_def def = {sc, o->engine, specs[k], 200, 0, 0, 0};
			if (lk_sim_create(&def, &sim[k], err, sizeof err) != LK_OK) {
				lk_cli_error("bench paper", "%s: %s", specs[k], err);
				failed[k] = 1;
			}
		}
		char label[64];
		snprintf(label, sizeof label, "table 2 %s", ts->label);
		for (int t = 0; t < steps; ++t) {
			lk_cli_progress(label, t, steps);
			for (int k = 0; k < T2_RUNS; ++k) {
				if (failed[k])
					continue;
				lk_engine_step_stats st;
				if (lk_sim_step(sim[k], &st) != LK_OK) {
					failed[k] = 1;
					continue;
				}
				total[k] += st.solve_seconds;
				rows_sum[k] += st.rows;
				if (t >= skip && !isnan(st.res_final))
					res[(size_t)k * steps + (size_t)nres[k]++] = st.res_final;
			}
		}
		lk_cli_progress(label, steps, steps);
		printf("\n%s (%s): mean %d rows per step\n", ts->label, ts->spec, rows_sum[0] / steps);
		printf("  %-20s %12s %10s %12s | %12s %10s\n", "method", "total s", "vs PGS", "median RES", "paper s", "vs PGS");
		for (int k = 0; k < T2_RUNS; ++k) {
			char name[40];
			if (k == 0)
				snprintf(name, sizeof name, "PGS");
			else
				snprintf(name, sizeof name, "Method 3.1 [0.%d D]", k);
			if (failed[k]) {
				printf("  %-20s failed\n", name);
				continue;
			}
			double mres = nres[k] > 0 ? lk_cli_median(res + (size_t)k * steps, nres[k]) : NAN;
			printf("  %-20s %12.3f %10.2f %12.2e | %12.3f %10.2f\n", name, total[k], total[k] / total[0], mres,
			       ts->paper[k], ts->paper[k] / ts->paper[0]);
			fprintf(csv, "t2,\"%s\",\"%s\",%d,%d,%.6e,%.6e,%.4f\n", ts->spec, specs[k], steps, rows_sum[k] / steps, total[k],
			        mres, ts->paper[k]);
		}
		fflush(stdout);
		for (int k = 0; k < T2_RUNS; ++k)
			lk_sim_destroy(sim[k]);
		free(res);
		lk_scene_destroy(sc);
	}
	return 1;
}

/* --------------------------------------------------------------------------------------------- ord */

typedef struct ord_case {
	const char *label;
	const char *type;
	const char *spec;
	int step;               /* captured step */
	double paper_esp, paper_gsp;
	const char *paper_setup;
} ord_case;

/* Poulsen et al. 2010, Tables 1-3: diku (non-structured, 105 contacts, 1001 bodies), card (loosely structured,
 * 154 contacts, 43 bodies), box stack (densely structured, 68 contacts, 10 bodies). The scene versions: 1000
 * spheres in ten layers as the lowest layer lands (step 4: about 100 contacts among 1000 bodies), a 3D pool
 * of 60 spheres after two seconds (varied normals), a stack of 10 boxes (parallel normals). */
static const ord_case ord_cases[] = {
	{"non-structured", "few contacts", "bigpool:n=1000,width=2.2", 4, 1.4, 1.7, "diku"},
	{"loosely structured", "varied normals", "pool1:dim=3,n=60,width=1.2", 120, 2.2, 2.0, "card"},
	{"densely structured", "parallel normals", "boxstack:n=10", 60, 1.9, 2.7, "box stack"},
};
#define ORD_CASES ((int)(sizeof ord_cases / sizeof ord_cases[0]))

/* Seconds per iteration of `iters` iterations of spec from start (thread CPU time, the minimum over the
 * repeats), and the final theta. */
static int ord_measure(lk_problem *p, const double *start, const char *spec, int iters, int repeats, double *per_iter,
                       double *theta, int *set_sweeps)
{
	lk_solver_config cfg;
	char err[256];
	if (lk_config_parse(spec, &cfg, err, sizeof err) != LK_OK)
		return 0;
	cfg.max_iterations = iters;
	cfg.tol_abs = cfg.tol_rel = cfg.tol_stag = 0;
	cfg.warm_start = 1;
	lk_stats st;
	double secs, spread;
	if (!cpu_solves(p, start, &cfg, repeats, &st, &secs, &spread) || st.iterations < 1)
		return 0;
	*per_iter = secs / st.iterations;
	*theta = st.theta_final;
	*set_sweeps = st.inner_iterations;
	return 1;
}

static int part_ord(const opts *o, FILE *csv)
{
	const int iters = 100;
	printf("\n== Poulsen, Abel & Erleben 2010, Tables 2 and 3: time per iteration of PGS / that of ESP and GSP "
	       "(eq. 24),\n   %d iterations from the warm start (one iteration = the work of one PGS sweep), CPU-time "
	       "minima of %d\n",
	       iters, o->repeats * 3);
	printf("  %-20s %-8s %6s %7s %9s | %9s %7s %9s | %9s %7s %9s | %s\n", "setup", "bodies", "rows", "contacts",
	       "PGS us/it", "ESP us/it", "speedup", "paper", "GSP us/it", "speedup", "paper", "theta after: PGS ESP GSP");
	for (int c = 0; c < ORD_CASES; ++c) {
		const ord_case *oc = &ord_cases[c];
		char err[400];
		lk_problem *p = capture(oc->spec, o, "pgs", 20, oc->step, err, sizeof err);
		if (!p) {
			lk_cli_error("bench paper", "%s", err);
			continue;
		}
		double *start = copy_lambda(p);
		double t[3] = {NAN, NAN, NAN}, th[3] = {NAN, NAN, NAN};
		int sweeps[3] = {0, 0, 0};
		const char *specs[3] = {"pgs", "esp", "gsp"};
		int ok = start != NULL;
		for (int k = 0; k < 3 && ok; ++k)
			ok = ord_measure(p, start, specs[k], iters, o->repeats * 3, &t[k], &th[k], &sweeps[k]);
		if (!ok) {
			printf("  %-20s failed: %s\n", oc->label, lk_problem_error(p));
		} else {
			printf("  %-20s %8d %6d %7d %9.1f | %9.1f %7.2f %9.1f | %9.1f %7.2f %9.1f | %.1e %.1e %.1e\n", oc->label,
			       lk_problem_body_count(p), lk_problem_row_count(p), count_kind(p, LK_ROW_NORMAL), 1e6 * t[0],
			       1e6 * t[1], t[0] / t[1], oc->paper_esp, 1e6 * t[2], t[0] / t[2], oc->paper_gsp, th[0], th[1], th[2]);
			fprintf(csv, "ord,%s,\"%s\",%d,%d,%.6e,%.6e,%.6e,%.4f,%.4f,%.6e,%.6e,%.6e,%d,%d\n", oc->label, oc->spec,
			        lk_problem_row_count(p), count_kind(p, LK_ROW_NORMAL), t[0], t[1], t[2], oc->paper_esp,
			        oc->paper_gsp, th[0], th[1], th[2], sweeps[1], sweeps[2]);
		}
		fflush(stdout);
		free(start);
		lk_problem_destroy(p);
	}
	printf("  (the paper's staggered iteration sweeps one set; here an iteration is n row updates, whatever the\n"
	       "   schedule, so the ratio measures the overhead of the schedules, not fewer rows per iteration)\n");
	return 1;
}

/* ---------------------------------------------------------------------------------------------- sm */

typedef struct sm_case {
	const char *label;
	const char *spec;
	int step;
} sm_case;

/* Silcowitz, Niebe & Erleben, Figure 2: (a) arched snake on limited hinges, (b) a heavy box on it, (c) a large
 * stack of boxes, (d) a heavy box on lighter boxes, (e) boxes on an incline, (g) a medium pyramid (boxes for
 * their gears), (h) a large friction-inducing configuration (a wall in running bond). */
static const sm_case sm_cases[] = {
	{"(a) snake", "snake", 60},
	{"(b) snake + heavy box", "snake:heavy=1", 60},
	{"(c) box stack", "boxstack:n=20", 60},
	{"(d) heavy on light", "heavy-on-light", 60},
	{"(e) incline", "incline", 60},
	{"(g) pyramid", "pyramid:n=6", 60},
	{"(h) wall", "wall", 60},
};
#define SM_CASES ((int)(sizeof sm_cases / sizeof sm_cases[0]))

#define SM_MAX_SWEEPS 20000

static int part_sm(const opts *o, FILE *csv)
{
	printf("\n== Silcowitz, Niebe & Erleben: PGS-SM (k_pgs = 25, k_sm = 5, 10 outer iterations) vs PGS from the warm "
	       "start of a\n   running simulation (%s, lcpkit pgs, 20 iterations, problem of step 60); Fischer merit psi, "
	       "work in PGS sweeps\n",
	       lk_engine_name(o->engine));
	printf("  %-24s %6s %9s %11s %11s %11s %12s %9s %9s\n", "case", "rows", "work", "psi start", "psi PGS-SM",
	       "psi PGS", "PGS to match", "ms SM", "ms PGS");
	const int quick_cases = 4;
	for (int c = 0; c < (o->quick ? quick_cases : SM_CASES); ++c) {
		const sm_case *sc = &sm_cases[c];
		char err[400];
		lk_problem *p = capture(sc->spec, o, "pgs", 20, sc->step, err, sizeof err);
		if (!p) {
			lk_cli_error("bench paper", "%s", err);
			continue;
		}
		const int n = lk_problem_row_count(p);
		double *start = copy_lambda(p);
		lk_solver_config sm = lk_default_config(LK_METHOD_PGS_SM);
		lk_stats st_sm, st_pgs;
		lk_metrics m0;
		int ok = start && n > 0 && lk_problem_metrics(p, start, &m0) == LK_OK &&
		         solve_from(p, start, &sm, &st_sm, NULL) == LK_OK;
		int work = ok ? (int)((st_sm.row_updates + n - 1) / n) : 0;
		lk_solver_config pg = lk_default_config(LK_METHOD_PGS);
		pg.tol_abs = pg.tol_rel = pg.tol_stag = 0;
		pg.max_iterations = work > 0 ? work : 1;
		pg.merit = LK_MERIT_FISCHER;
		ok = ok && solve_from(p, start, &pg, &st_pgs, NULL) == LK_OK;
		/* PGS sweeps to reach PGS-SM's merit */
		int match = -1;
		if (ok) {
			lk_solver_config mt = pg;
			mt.merit = LK_MERIT_FISCHER;
			mt.tol_abs = st_sm.fischer_final * (1 + 1e-12);
			mt.check_every = 1;
			mt.max_iterations = SM_MAX_SWEEPS;
			lk_stats st;
			if (solve_from(p, start, &mt, &st, NULL) == LK_OK && st.stop_reason == LK_STOP_ABSOLUTE)
				match = st.iterations;
		}
		if (!ok) {
			printf("  %-24s failed: %s\n", sc->label, lk_problem_error(p));
		} else {
			char m[32];
			if (match >= 0)
				snprintf(m, sizeof m, "%d", match);
			else
				snprintf(m, sizeof m, "> %d", SM_MAX_SWEEPS);
			printf("  %-24s %6d %9d %11.2e %11.2e %11.2e %12s %9.3f %9.3f\n", sc->label, n, work, m0.fischer,
			       st_sm.fischer_final, st_pgs.fischer_final, m, 1e3 * st_sm.seconds, 1e3 * st_pgs.seconds);
			fprintf(csv, "sm,\"%s\",\"%s\",%d,%d,%.6e,%.6e,%.6e,%d,%.6e,%.6e\n", sc->label, sc->spec, n, work, m0.fischer,
			        st_sm.fischer_final, st_pgs.fischer_final, match, st_sm.seconds, st_pgs.seconds);
		}
		fflush(stdout);
		free(start);
		lk_problem_destroy(p);
	}
	return 1;
}

/* ----------------------------------------------------------------------------------------- command */

/* --parts: a comma list of t1, t2, ord, sm (lk_cli_parse's LK_CLI_CALL) */
static int parts_option(void *arg, const char *v)
{
	opts *o = arg;
	char buf[128];
	snprintf(buf, sizeof buf, "%s", v);
	o->part_t1 = o->part_t2 = o->part_ord = o->part_sm = 0;
	for (char *s = strtok(buf, ","); s; s = strtok(NULL, ",")) {
		if (!strcmp(s, "t1"))
			o->part_t1 = 1;
		else if (!strcmp(s, "t2"))
			o->part_t2 = 1;
		else if (!strcmp(s, "ord"))
			o->part_ord = 1;
		else if (!strcmp(s, "sm"))
			o->part_sm = 1;
		else
			return 0;
	}
	return 1;
}

/* Opens one part's CSV when the part starts, so that a part that fails leaves the later parts' files alone. */
static FILE *open_csv(const char *dir, const char *name, const char *header)
{
	lk_bench_csv csv = {.name = name};
	if (lk_bench_open_csvs("bench paper", dir, &csv, 1) != 0)
		return NULL;
	fprintf(csv.f, "%s\n", header);
	return csv.f;
}

int lk_bench_paper(int argc, char **argv)
{
	const char *cmd = "bench paper";
	opts o;
	memset(&o, 0, sizeof o);
	o.out = "bench-out";
	o.repeats = -1;
	o.t2_steps = -1;
	o.engine = LK_ENGINE_ODE;
	o.part_t1 = o.part_t2 = o.part_ord = o.part_sm = 1;
	const char *engine = NULL;
	const lk_cli_option table[] = {
		LK_CLI_OPT_FLAG("--quick", &o.quick),
		LK_CLI_OPT_CALL("--parts", &o, parts_option, "parts from t1, t2, ord, sm"),
		LK_CLI_OPT_STRING("--engine", &engine),
		LK_CLI_OPT_INT("--steps", &o.t2_steps, 120, 100000),
		LK_CLI_OPT_INT("--repeat", &o.repeats, 1, 100000),
		LK_CLI_OPT_STRING("--out", &o.out),
		LK_CLI_OPT_END};
	const int parsed = lk_cli_parse(cmd, argc, argv, 1, table, usage, NULL, NULL);
	if (parsed >= 0)
		return parsed;
	if (engine) {
		const int e = lk_engine_from_name(engine);
		if (e < 0) {
			lk_cli_error(cmd, "--engine: '%s' is not an engine built into this lcpkit (ode, bullet)", engine);
			return LK_EXIT_USAGE;
		}
		o.engine = (lk_engine)e;
	}
	if (o.repeats < 0)
		o.repeats = o.quick ? 3 : 5;
	if (o.t2_steps < 0)
		o.t2_steps = o.quick ? 200 : 1000;
	if (!lk_engine_available(o.engine)) {
		lk_cli_error(cmd, "engine %s is not built into this lcpkit", lk_engine_name(o.engine));
		return LK_EXIT_FAIL;
	}
	if (lk_bench_make_out_dir(cmd, o.out) != 0)
		return LK_EXIT_FAIL;
	printf("lcpkit bench paper: problems from %s; t1 and ord time the thread CPU time, minimum of %d repeats\n",
	       lk_engine_name(o.engine), o.repeats);
	int ok = 1;
	if (o.part_t1 && ok) {
		FILE *f = open_csv(o.out, "bench_paper_t1.csv",
		                   "part,scene,spec,rows,iterations_1e-2,iterations_1e-3,iterations_1e-4,sweeps_timed,extrapolated,"
		                   "seconds,res_final,spread,paper_iterations,paper_seconds");
		ok = f && part_t1(&o, f);
		if (f)
			fclose(f);
	}
	if (o.part_t2 && ok) {
		FILE *f = open_csv(o.out, "bench_paper_t2.csv", "part,scene,spec,steps,mean_rows,total_solve_s,median_res,paper_s");
		ok = f && part_t2(&o, f);
		if (f)
			fclose(f);
	}
	if (o.part_ord && ok) {
		FILE *f = open_csv(o.out, "bench_paper_ord.csv",
		                   "part,setup,spec,rows,contacts,pgs_s_per_it,esp_s_per_it,gsp_s_per_it,paper_esp,paper_gsp,"
		                   "theta_pgs,theta_esp,theta_gsp,esp_set_sweeps,gsp_set_sweeps");
		ok = f && part_ord(&o, f);
		if (f)
			fclose(f);
	}
	if (o.part_sm && ok) {
		FILE *f = open_csv(o.out, "bench_paper_sm.csv",
		                   "part,case,spec,rows,work_sweeps,psi_start,psi_pgs_sm,psi_pgs_same_work,pgs_sweeps_to_match,"
		                   "seconds_pgs_sm,seconds_pgs");
		ok = f && part_sm(&o, f);
		if (f)
			fclose(f);
	}
	if (ok)
		printf("\nCSV: %s/bench_paper_*.csv\n", o.out);
	return ok ? LK_EXIT_OK : LK_EXIT_FAIL;
}

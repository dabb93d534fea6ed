/* lcpkit bench engines: the engines' own solvers against lcpkit's through the adapters, same scene, same
 * iteration budget, in one run.
 *
 * For each scene of the scene library (scene.h) and each engine (ODE, Bullet), one simulation per solver is
 * built from the same description and the simulations are stepped in turn, step by step, so that every
 * solver sees the same machine load. Solvers: ODE's dWorldQuickStep ("ode-quickstep") and dWorldStep
 * ("ode-step"), Bullet's sequential impulse ("bullet-si"), NNCG ("bullet-nncg") and MLCP Dantzig
 * ("bullet-dantzig") solvers, and lcpkit's pgs, amgs, pgs-sm and gsp ("pgs:order=gsp") through each engine's
 * adapter. Four tables:
 *
 * Every time is thread CPU time (lk_set_stats_clock): a shared machine's preemptions do not move it.
 *
 * 1. Same budget: every solver at --iterations iterations per step (pgs-sm at iters = budget / 5 outer
 *    iterations of 5 PGS sweeps and 5 subspace steps, the reduced CG capped at 20 products: the same number
 *    of PGS sweeps; its subspace work comes on top). Medians over the timed steps of the solver's time (lk_engine_step_stats.solve_seconds: for
 *    ODE's steppers the whole dWorldQuickStep / dWorldStep call, for Bullet's solvers their iteration loop,
 *    for lcpkit lk_solve) and of the RES the step's impulses reach on the step's rows.
 * 2. Per iteration: every iterative solver at N and 2N iterations, side by side; the slope
 *    (median(solve / rows at 2N) - median(solve / rows at N)) / N is the cost of one iteration per row, with
 *    every fixed cost (row building, validation, residual evaluations, integration) cancelled out. This is the
 *    figure of the target "lcpkit pgs <= 1.0x Bullet SI and ODE quickstep per iteration, same rows".
 * 3. Time to a given RES: every solver at budgets 5, 10, 20, ... iterations until the median RES after the
 *    solve is below the target (--res, or a quarter of what lcpkit pgs reaches in table 1 in the same engine:
 *    the engines' scenes do not reach the paper's absolute 1e-4 within hundreds of iterations); the solve
 *    time per step at that budget. Direct solvers (ode-step, bullet-dantzig) run once.
 * 4. Scaling: bigpool (spheres in a square box, width grown with sqrt(n) so the pile keeps its height) at
 *    1,000, 10,000 and 100,000 spheres (the last with lcpkit pgs in ODE only), 20 iterations, pgs and the
 *    engine's default solver: solve time per step and per row and iteration, and the ratio to the smallest
 *    size per row.
 * Direct solvers are skipped on scenes with more than --dense-max bodies (a dense LCP of thousands of rows).
 */
#include "bench.h"
#include "bench_util.h"
#include "cli_util.h"
#include "scene.h"
#include "sim.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SCENES 8
#define MAX_RUNS 32
#define SPEC_LEN LK_CLI_SPEC_LEN

typedef struct opts {
	int quick;
	int iterations;
	int warmup, steps;
	double res;          /* table 3 target; 0: a quarter of pgs's RES in table 1 */
	double max_solve;    /* table 3 stops raising the budget past this solve time per step, s */
	int dense_max;
	int scaling;
	int scaling_max;
	int nscenes;
	char scenes[MAX_SCENES][SPEC_LEN];
	const char *out;
} opts;

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit bench engines [--quick] [--scenes LIST] [--iterations N] [--warmup N] [--steps N]\n"
	        "                            [--res R] [--max-solve S] [--dense-max N] [--no-scaling]\n"
	        "                            [--scaling-max N] [--out DIR]\n"
	        "ODE quickstep and step, Bullet SI, NNCG and MLCP-Dantzig against lcpkit pgs, amgs, pgs-sm and gsp\n"
	        "through the adapters: same scene, same iteration budget, simulations stepped side by side.\n"
	        "  --scenes LIST     scene specs (default boxstack:n=10,pool1,pool1:dim=3,n=1000; quick: the first two)\n"
	        "  --iterations N    iteration budget of table 1 and N of table 2 (default 20)\n"
	        "  --warmup N        steps before timing (default 60, quick 30)\n"
	        "  --steps N         timed steps (default 30, quick 10)\n"
	        "  --res R           RES target of table 3 (default: a quarter of lcpkit pgs's RES in table 1)\n"
	        "  --max-solve S     table 3 raises no budget past S seconds of solve per step (default 0.05)\n"
	        "  --dense-max N     skip ode-step and bullet-dantzig above N dynamic bodies (default 100)\n"
	        "  --no-scaling      skip table 4 (bigpool scaling)\n"
	        "  --scaling-max N   largest bigpool (default 100000, quick 10000)\n"
	        "  --out DIR         CSV directory (default bench-out): bench_engines*.csv\n");
}

/* ------------------------------------------------------------------------------------------ solvers */

typedef struct solver {
	const char *name;   /* shown in the tables */
	lk_engine engine;
	int direct;         /* no iteration budget (a direct LCP solver) */
	int budget_div;     /* pgs-sm: outer iterations = budget / budget_div */
} solver;

static const solver solvers[] = {
	{"ode-quickstep", LK_ENGINE_ODE, 0, 0},
	{"ode-step", LK_ENGINE_ODE, 1, 0},
	{"pgs", LK_ENGINE_ODE, 0, 0},
	{"amgs", LK_ENGINE_ODE, 0, 0},
	{"pgs-sm", LK_ENGINE_ODE, 0, 5},
	{"gsp", LK_ENGINE_ODE, 0, 0},
	{"bullet-si", LK_ENGINE_BULLET, 0, 0},
	{"bullet-nncg", LK_ENGINE_BULLET, 0, 0},
	{"bullet-dantzig", LK_ENGINE_BULLET, 1, 0},
	{"pgs", LK_ENGINE_BULLET, 0, 0},
	{"amgs", LK_ENGINE_BULLET, 0, 0},
	{"pgs-sm", LK_ENGINE_BULLET, 0, 5},
	{"gsp", LK_ENGINE_BULLET, 0, 0},
};
#define NSOLVERS ((int)(sizeof solvers / sizeof solvers[0]))

/* The spec handed to lk_sim for a solver at a budget. */
static void solver_spec(const solver *s, int budget, char *buf, size_t size)
{
	if (!strcmp(s->name, "pgs-sm")) {
		int outer = budget / s->budget_div > 0 ? budget / s->budget_div : 1;
		/* the reduced CG is capped at 20 products: uncapped (the active count, thousands of rows on a pool) one
		 * step takes seconds */
		snprintf(buf, size, "pgs-sm:iters=%d,kpgs=%d,ksm=5,cg_max=20", outer, s->budget_div);
	} else if (!strcmp(s->name, "gsp")) {
		snprintf(buf, size, "pgs:order=gsp");
	} else {
		snprintf(buf, size, "%s", s->name);
	}
}

/* ------------------------------------------------------------------------------------- side-by-side runs */

typedef struct run {
	const solver *sv;
	int budget;
	char spec[SPEC_LEN];
	lk_sim *sim;
	int failed;
	char error[256];
	int n;                 /* timed steps recorded */
	double *solve, *step, *res, *per_row;
	int rows_last, iterations_last;
	long long fallbacks;
	/* medians */
	double m_step, m_res, m_per_row, m_rows;
	lk_cli_spread s_solve; /* the solve's median, minimum and quartiles */
} run;

static void run_free(run *r)
{
	lk_sim_destroy(r->sim);
	free(r->solve);
	free(r->step);
	free(r->res);
	free(r->per_row);
	memset(r, 0, sizeof *r);
}

/* The median, minimum and quartiles of the finite values of x[0..n) (x is left as it is). */
static lk_cli_spread spread_of(const double *x, int n)
{
	lk_cli_spread none = {NAN, NAN, NAN, NAN};
	double *t = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
	if (!t)
		return none;
	int m = 0;
	for (int i = 0; i < n; ++i)
		if (!isnan(x[i]))
			t[m++] = x[i];
	lk_cli_spread v = lk_cli_spread_of(t, m);
	free(t);
	return v;
}

static double median_of(const double *x, int n)
{
	return spread_of(x, n).median;
}

/* Steps every run's simulation side by side: warmup untimed steps, then steps timed ones. */
static void run_group(const lk_scene *sc, run *rs, int nr, int warmup, int steps, const char *label)
{
	for (int k = 0; k < nr; ++k) {
		run *r = &rs[k];
		r->solve = calloc((size_t)steps, sizeof(double));
		r->step = calloc((size_t)steps, sizeof(double));
		r->res = calloc((size_t)steps, sizeof(double));
		r->per_row = calloc((size_t)steps, sizeof(double));
		if (!r->solve || !r->step || !r->res || !r->per_row) {
			r->failed = 1;
			snprintf(r->error, sizeof r->error, "out of memory");
			continue;
		}
		lk_sim_def def = {sc, r->sv->engine, r->spec, r->sv->direct ? 0 : r->budget, 0, 0, 0};
		if (lk_sim_create(&def, &r->sim, r->error, sizeof r->error) != LK_OK) {
			r->failed = 1;
			r->sim = NULL;
		}
	}
	const int total = warmup + steps;
	for (int s = 0; s < total; ++s) {
		lk_cli_progress(label, s, total);
		for (int k = 0; k < nr; ++k) {
			run *r = &rs[k];
			if (r->failed)
				continue;
			lk_engine_step_stats st;
			if (lk_sim_step(r->sim, &st) != LK_OK) {
				r->failed = 1;
				snprintf(r->error, sizeof r->error, "step %d failed", s);
				continue;
			}
			r->fallbacks = (long long)st.fallback_total;
			if (s < warmup)
				continue;
			r->solve[r->n] = st.solve_seconds;
			r->step[r->n] = st.step_seconds;
			r->res[r->n] = st.res_final;
			r->per_row[r->n] = st.rows > 0 ? st.solve_seconds / st.rows : NAN;
			r->rows_last = st.rows;
			r->iterations_last = st.iterations;
			++r->n;
		}
	}
	lk_cli_progress(label, total, total);
	for (int k = 0; k < nr; ++k) {
		run *r = &rs[k];
		if (r->failed || r->n == 0)
			continue;
		r->s_solve = spread_of(r->solve, r->n);
		r->m_step = median_of(r->step, r->n);
		r->m_res = median_of(r->res, r->n);
		r->m_per_row = median_of(r->per_row, r->n);
		double *rows = malloc(sizeof(double) * (size_t)r->n);
		if (rows) {
			for (int i = 0; i < r->n; ++i)
				rows[i] = r->per_row[i] > 0 ? r->solve[i] / r->per_row[i] : NAN;
			r->m_rows = median_of(rows, r->n);
			free(rows);
		}
		/* the simulations are done with: free them before the next group is built */
		lk_sim_destroy(r->sim);
		r->sim = NULL;
	}
}

static int solver_runs_on(const solver *s, const lk_scene *sc, const opts *o)
{
	if (!lk_engine_available(s->engine))
		return 0;
	if (s->direct) {
		int dyn = 0;
		for (int i = 0; i < sc->nbodies; ++i)
			dyn += sc->bodies[i].mass > 0;
		if (dyn > o->dense_max)
			return 0;
	}
	return 1;
}

static const char *engine_tag(lk_engine e)
{
	return e == LK_ENGINE_ODE ? "ode" : "bullet";
}

/* One CSV line; NaN numbers are left empty. */
static void csv_num(FILE *f, double x)
{
	if (isnan(x))
		fputc(',', f);
	else
		fprintf(f, ",%.6e", x);
}

static void csv_row(FILE *f, const char *table, const char *scene, lk_engine e, const char *name, const char *spec,
                    int budget, double rows, double iterations, const lk_cli_spread *solve, double step,
                    double per_row, double res, double extra)
{
	/* scene and solver specs have commas of their own: quoted */
	fprintf(f, "%s,\"%s\",%s,%s,\"%s\",%d", table, scene, engine_tag(e), name, spec, budget);
	csv_num(f, rows);
	csv_num(f, iterations);
	csv_num(f, solve ? solve->median : NAN);
	csv_num(f, solve ? solve->min : NAN);
	csv_num(f, solve ? solve->q25 : NAN);
	csv_num(f, solve ? solve->q75 : NAN);
	csv_num(f, step);
	csv_num(f, per_row);
	csv_num(f, res);
	csv_num(f, extra);
	fputc('\n', f);
}

/* ------------------------------------------------------------------------------------------ table 1 */

static void table_budget(const lk_scene *sc, const opts *o, double *pgs_res, FILE *csv)
{
	pgs_res[0] = pgs_res[1] = NAN;
	run rs[MAX_RUNS];
	memset(rs, 0, sizeof rs);
	int nr = 0;
	for (int i = 0; i < NSOLVERS && nr < MAX_RUNS; ++i) {
		if (!solver_runs_on(&solvers[i], sc, o))
			continue;
		rs[nr].sv = &solvers[i];
		rs[nr].budget = o->iterations;
		solver_spec(&solvers[i], o->iterations, rs[nr].spec, sizeof rs[nr].spec);
		++nr;
	}
	char label[64];
	snprintf(label, sizeof label, "budget %s", sc->spec);
	run_group(sc, rs, nr, o->warmup, o->steps, label);
	printf("\n1. %s: same budget, %d iterations per step (thread CPU time; medians, the solve's minimum and "
	       "quartiles, of %d timed steps after %d)\n",
	       sc->spec,
	       o->iterations, o->steps, o->warmup);
	printf("  %-6s %-15s %7s %6s %10s %9s %15s %10s %11s %10s %7s\n", "engine", "solver", "rows", "iters",
	       "solve ms", "min", "q25-q75", "step ms", "ns/row", "RES after", "fallb.");
	for (int k = 0; k < nr; ++k) {
		run *r = &rs[k];
		if (r->failed) {
			printf("  %-6s %-15s failed: %s\n", engine_tag(r->sv->engine), r->sv->name, r->error);
			run_free(r);
			continue;
		}
		char iqr[32];
		printf("  %-6s %-15s %7.0f %6d %10.3f %9.3f %15s %10.3f %11.1f %10.2e %7lld\n", engine_tag(r->sv->engine),
		       r->sv->name, r->m_rows, r->iterations_last, 1e3 * r->s_solve.median, 1e3 * r->s_solve.min,
		       lk_cli_quartiles(&r->s_solve, 1e3, iqr, sizeof iqr),
		       1e3 * r->m_step, 1e9 * r->m_per_row, r->m_res, r->fallbacks);
		csv_row(csv, "budget", sc->spec, r->sv->engine, r->sv->name, r->spec, r->budget, r->m_rows, r->iterations_last,
		        &r->s_solve, r->m_step, r->m_per_row, r->m_res, (double)r->fallbacks);
		if (!strcmp(r->sv->name, "pgs"))
			pgs_res[r->sv->engine] = r->m_res;
		run_free(r);
	}
	fflush(stdout);
}

/* ------------------------------------------------------------------------------------------ table 2 */

static void table_per_iteration(const lk_scene *sc, const opts *o, FILE *csv)
{
	run rs[MAX_RUNS];
	memset(rs, 0, sizeof rs);
	int nr = 0;
	const int N = o->iterations;
	for (int i = 0; i < NSOLVERS && nr + 1 < MAX_RUNS; ++i) {
		const solver *s = &solvers[i];
		if (!solver_runs_on(s, sc, o) || s->direct || s->budget_div)
			continue;
		for (int m = 1; m <= 2; ++m) {
			rs[nr].sv = s;
			rs[nr].budget = m * N;
			solver_spec(s, m * N, rs[nr].spec, sizeof rs[nr].spec);
			++nr;
		}
	}
	char label[64];
	snprintf(label, sizeof label, "per-iteration %s", sc->spec);
	run_group(sc, rs, nr, o->warmup, o->steps, label);
	printf("\n2. %s: cost of one iteration per row, slope between %d and %d iterations\n", sc->spec, N, 2 * N);
	printf("  %-6s %-15s %7s %12s %12s %14s %12s\n", "engine", "solver", "rows", "ns/row @N", "ns/row @2N",
	       "ns/row/iter", "vs lk pgs");
	double pgs_slope[LK_ENGINE_COUNT] = {NAN, NAN};
	double slope[MAX_RUNS];
	for (int k = 0; k + 1 < nr; k += 2) {
		run *a = &rs[k], *b = &rs[k + 1];
		slope[k] = (a->failed || b->failed) ? NAN : (b->m_per_row - a->m_per_row) / N;
		if (!strcmp(a->sv->name, "pgs"))
			pgs_slope[a->sv->engine] = slope[k];
	}
	for (int k = 0; k + 1 < nr; k += 2) {
		run *a = &rs[k], *b = &rs[k + 1];
		if (a->failed || b->failed) {
			printf("  %-6s %-15s failed: %s\n", engine_tag(a->sv->engine), a->sv->name,
			       a->failed ? a->error : b->error);
		} else {
			double ratio = slope[k] / pgs_slope[a->sv->engine];
			printf("  %-6s %-15s %7.0f %12.1f %12.1f %14.2f %12.2f\n", engine_tag(a->sv->engine), a->sv->name,
			       a->m_rows, 1e9 * a->m_per_row, 1e9 * b->m_per_row, 1e9 * slope[k], ratio);
			/* per_row: the slope (seconds per row and iteration); extra: its ratio to lcpkit pgs */
			csv_row(csv, "per_iteration", sc->spec, a->sv->engine, a->sv->name, a->spec, N, a->m_rows, NAN, NULL,
			        NAN, slope[k], NAN, ratio);
		}
		run_free(a);
		run_free(b);
	}
	fflush(stdout);
}

/* ------------------------------------------------------------------------------------------ table 3 */

#define MAX_BUDGETS 8

/* The RES target of table 3 for an engine: --res if given, else a quarter of what lcpkit pgs reached in table 1. */
static double res_target(const opts *o, const double *pgs_res, lk_engine e)
{
	return o->res > 0 ? o->res : 0.25 * pgs_res[e];
}

static void table_time_to_res(const lk_scene *sc, const opts *o, const double *pgs_res, FILE *csv)
{
	static const int budgets[MAX_BUDGETS] = {5, 10, 20, 40, 80, 160, 320, 640};
	const int nb = o->quick ? 6 : MAX_BUDGETS;
	const int steps = o->quick ? 5 : 10;
	printf("\n3. %s: time per step to reach a RES target (smallest budget of 5, 10, 20, ... %d whose median RES "
	       "over %d steps is below)\n",
	       sc->spec, budgets[nb - 1], steps);
	if (o->res > 0)
		printf("   target RES < %.2e\n", o->res);
	else
		printf("   target: a quarter of lcpkit pgs's RES at %d iterations in the same engine (ode %.2e, bullet %.2e)\n",
		       o->iterations, 0.25 * pgs_res[LK_ENGINE_ODE], 0.25 * pgs_res[LK_ENGINE_BULLET]);
	printf("  %-6s %-15s %8s %10s %10s %10s\n", "engine", "solver", "budget", "solve ms", "RES", "target");
	for (int i = 0; i < NSOLVERS; ++i) {
		const solver *s = &solvers[i];
		if (!solver_runs_on(s, sc, o))
			continue;
		const double target = res_target(o, pgs_res, s->engine);
		if (!(target > 0)) {
			printf("  %-6s %-15s no target (lcpkit pgs did not run in table 1)\n", engine_tag(s->engine), s->name);
			continue;
		}
		/* budgets one after the other, smallest first, until one reaches the target or a step takes longer
		 * than --max-solve seconds */
		run hit;
		memset(&hit, 0, sizeof hit);
		int found = 0, last = 0;
		double best_res = INFINITY, last_solve = 0;
		const int nr = s->direct ? 1 : nb;
		for (int k = 0; k < nr && !found && last_solve < o->max_solve; ++k) {
			run r;
			memset(&r, 0, sizeof r);
			r.sv = s;
			r.budget = budgets[k];
			solver_spec(s, budgets[k], r.spec, sizeof r.spec);
			char label[64];
			snprintf(label, sizeof label, "to-RES %s %s %d", engine_tag(s->engine), s->name, budgets[k]);
			run_group(sc, &r, 1, o->warmup, steps, label);
			last = budgets[k];
			if (!r.failed) {
				best_res = fmin(best_res, r.m_res);
				last_solve = r.s_solve.median;
				if (r.m_res < target) {
					found = 1;
					hit = r;
					hit.solve = hit.step = hit.res = hit.per_row = NULL;
				}
			}
			run_free(&r);
		}
		if (found) {
			char b[16];
			snprintf(b, sizeof b, "%d", hit.budget);
			printf("  %-6s %-15s %8s %10.3f %10.2e %10.2e\n", engine_tag(s->engine), s->name, s->direct ? "direct" : b,
			       1e3 * hit.s_solve.median, hit.m_res, target);
			csv_row(csv, "to_res", sc->spec, s->engine, s->name, hit.spec, s->direct ? 0 : hit.budget, hit.m_rows, NAN,
			        &hit.s_solve, hit.m_step, hit.m_per_row, hit.m_res, target);
		} else {
			printf("  %-6s %-15s %8s %10s %10.2e %10.2e not reached (best; up to %s%d)\n", engine_tag(s->engine),
			       s->name, "-", "-", best_res, target, s->direct ? "direct " : "", s->direct ? 0 : last);
			csv_row(csv, "to_res", sc->spec, s->engine, s->name, "", -1, NAN, NAN, NULL, NAN, NAN, best_res,
			        target);
		}
		fflush(stdout);
	}
}

/* ------------------------------------------------------------------------------------------ table 4 */

static void table_scaling(const opts *o, FILE *csv)
{
	int sizes[3] = {1000, 10000, 100000}, ns = 0;
	while (ns < 3 && sizes[ns] <= o->scaling_max)
		++ns;
	const int warm = o->quick ? 30 : 40, timed = 5;
	printf("\n4. bigpool scaling: %d iterations, solve time per step (medians of %d timed steps after %d, and the\n"
	       "   minimum of the steps' time per row and iteration beside; 100,000 bodies with lcpkit pgs in ODE only: a\n"
	       "   step of either engine's own solver, or of Bullet's world at that size, takes seconds)\n",
	       20, timed, warm);
	printf("  %-6s %-15s %8s %8s %10s %14s %10s %10s %8s\n", "engine", "solver", "bodies", "rows", "solve ms",
	       "ns/row/iter", "vs 1000", "min ns", "min vs");
	const char *names[2][2] = {{"ode-quickstep", "pgs"}, {"bullet-si", "pgs"}};
	for (int e = 0; e < LK_ENGINE_COUNT; ++e) {
		if (!lk_engine_available((lk_engine)e))
			continue;
		for (int v = 0; v < 2; ++v) {
			double base = NAN, base_min = NAN;
			for (int k = 0; k < ns; ++k) {
				if (sizes[k] > 10000 && !(e == LK_ENGINE_ODE && v == 1))
					continue;
				/* the square box grows with sqrt(n): about 19 layers of spheres (r = 0.1) at every size */
				char spec[SPEC_LEN], err[256];
				double width = 5.0 * sqrt(sizes[k] / 10000.0);
				snprintf(spec, sizeof spec, "bigpool:n=%d,width=%g", sizes[k], width);
				lk_scene *sc = NULL;
				if (lk_scene_create(spec, &sc, err, sizeof err) != LK_OK) {
					lk_cli_error("bench engines", "%s", err);
					continue;
				}
				solver sv = {names[e][v], (lk_engine)e, 0, 0};
				run r;
				memset(&r, 0, sizeof r);
				r.sv = &sv;
				r.budget = 20;
				snprintf(r.spec, sizeof r.spec, "%s", sv.name);
				char label[64];
				snprintf(label, sizeof label, "scaling %s %s %d", engine_tag(sv.engine), sv.name, sizes[k]);
				run_group(sc, &r, 1, warm, timed, label);
				if (r.failed) {
					printf("  %-6s %-15s %8d failed: %s\n", engine_tag(sv.engine), sv.name, sizes[k], r.error);
				} else {
					double per = r.m_per_row / 20.0, per_min = spread_of(r.per_row, r.n).min / 20.0;
					if (k == 0) {
						base = per;
						base_min = per_min;
					}
					printf("  %-6s %-15s %8d %8.0f %10.3f %14.2f %10.2f %10.2f %8.2f\n", engine_tag(sv.engine),
					       sv.name, sizes[k], r.m_rows, 1e3 * r.s_solve.median, 1e9 * per, per / base, 1e9 * per_min,
					       per_min / base_min);
					csv_row(csv, "scaling", spec, sv.engine, sv.name, sv.name, 20, r.m_rows, 20, &r.s_solve,
					        r.m_step, r.m_per_row, r.m_res, per / base);
				}
				run_free(&r);
				lk_scene_destroy(sc);
				fflush(stdout);
			}
		}
	}
}

/* ------------------------------------------------------------------------------------------- command */

int lk_bench_engines(int argc, char **argv)
{
	const char *cmd = "bench engines";
	opts o;
	memset(&o, 0, sizeof o);
	o.iterations = 20;
	o.warmup = -1;
	o.steps = -1;
	o.res = 0;
	o.max_solve = 0.05;
	o.dense_max = 100;
	o.scaling = 1;
	o.scaling_max = -1;
	o.out = "bench-out";
	const char *scenes = NULL;
	int no_scaling = 0;
	const lk_cli_option table[] = {
		LK_CLI_OPT_FLAG("--quick", &o.quick),
		LK_CLI_OPT_FLAG("--no-scaling", &no_scaling),
		LK_CLI_OPT_STRING("--scenes", &scenes),
		LK_CLI_OPT_INT("--iterations", &o.iterations, 1, 10000000),
		LK_CLI_OPT_INT("--warmup", &o.warmup, 0, 10000000),
		LK_CLI_OPT_INT("--steps", &o.steps, 1, 10000000),
		LK_CLI_OPT_INT("--dense-max", &o.dense_max, 0, 10000000),
		LK_CLI_OPT_INT("--scaling-max", &o.scaling_max, 1, 10000000),
		LK_CLI_OPT_DOUBLE("--res", &o.res, DBL_MIN, INFINITY, NULL),
		LK_CLI_OPT_DOUBLE("--max-solve", &o.max_solve, DBL_MIN, INFINITY, "a positive number of seconds"),
		LK_CLI_OPT_STRING("--out", &o.out),
		LK_CLI_OPT_END};
	const int parsed = lk_cli_parse(cmd, argc, argv, 1, table, usage, NULL, NULL);
	if (parsed >= 0)
		return parsed;
	o.scaling = !no_scaling;
	if (o.warmup < 0)
		o.warmup = o.quick ? 30 : 60;
	if (o.steps < 0)
		o.steps = o.quick ? 10 : 30;
	if (o.scaling_max < 0)
		o.scaling_max = o.quick ? 10000 : 100000;
	if (!scenes)
		scenes = o.quick ? "boxstack:n=10,pool1" : "boxstack:n=10,pool1,pool1:dim=3,n=1000";
	o.nscenes = lk_cli_split_specs(scenes, o.scenes, MAX_SCENES);
	if (o.nscenes <= 0) {
		lk_cli_error(cmd, "--scenes: no scenes or more than %d", MAX_SCENES);
		return LK_EXIT_USAGE;
	}
	lk_scene *sc[MAX_SCENES] = {0};
	for (int k = 0; k < o.nscenes; ++k) {
		char err[400];
		if (lk_scene_create(o.scenes[k], &sc[k], err, sizeof err) != LK_OK) {
			lk_cli_error(cmd, "%s", err);
			for (int j = 0; j < k; ++j)
				lk_scene_destroy(sc[j]);
			return LK_EXIT_USAGE;
		}
	}
	if (!lk_engine_available(LK_ENGINE_ODE) && !lk_engine_available(LK_ENGINE_BULLET)) {
		lk_cli_error(cmd, "this lcpkit was built without ODE and Bullet");
		for (int k = 0; k < o.nscenes; ++k)
			lk_scene_destroy(sc[k]);
		return LK_EXIT_FAIL;
	}
	lk_bench_csv file = {.name = "bench_engines.csv"};
	if (lk_bench_open_csvs(cmd, o.out, &file, 1) != 0) {
		for (int k = 0; k < o.nscenes; ++k)
			lk_scene_destroy(sc[k]);
		return LK_EXIT_FAIL;
	}
	FILE *csv = file.f;
	fprintf(csv, "table,scene,engine,solver,spec,budget,rows,iterations,solve_s,solve_min_s,solve_q25_s,solve_q75_s,step_s,solve_s_per_row,res_final,"
	             "extra\n");
	printf("lcpkit bench engines: %d iterations, %d warm-up and %d timed steps, simulations stepped side by side\n",
	       o.iterations, o.warmup, o.steps);
	for (int k = 0; k < o.nscenes; ++k) {
		double pgs_res[LK_ENGINE_COUNT];
		table_budget(sc[k], &o, pgs_res, csv);
		table_per_iteration(sc[k], &o, csv);
		table_time_to_res(sc[k], &o, pgs_res, csv);
	}
	if (o.scaling)
		table_scaling(&o, csv);
	lk_bench_close_csvs(&file, 1);
	for (int k = 0; k < o.nscenes; ++k)
		lk_scene_destroy(sc[k]);
	printf("\nCSV: %s\n", file.path);
	return LK_EXIT_OK;
}

/* lcpkit bench bullet: Bullet's own sequential impulse solver against lcpkit's PGS and AMGS through the solver
 * adapter, on the same scenes with the same iteration count.
 *
 * Scenes: "stack10", ten unit boxes on the ground; "pool1k" and "pool10k", 1,000 and 10,000 spheres
 * (r = 0.1 m) packed touching in a walled square pool, collapsing into it. One world per solver is built from
 * the same description and the worlds are stepped in turn, step by step, so that every solver sees the same
 * machine load; each world first takes --warmup steps (contacts and warm starts established), then --steps
 * timed steps. Reported, in thread CPU time (lk_set_stats_clock): medians over the timed steps of the whole
 * step, of the solver with its minimum and quartiles (Bullet's velocity iterations; lk_solve for lcpkit,
 * including its validation and, when it measures them, its RES evaluations), its time per
 * iteration ("method": lk_solve's own time of its sweeps per iteration, re-measured on the last step's
 * rows), and the time spent converting Bullet's rows into an lcpkit problem and writing the impulses
 * back, with its share of the step. Bullet's own solver is timed without extracting its rows; RES before and
 * after the solve, on the same rows, comes from one more step of each world with residuals on.
 * Bullet's double-precision build has no SIMD row solver (its SSE path is single precision only): the
 * comparison is with its scalar sequential impulse loop. */
#include "bench.h"
#include "bench_util.h"
#include "cli_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef LCPKIT_HAVE_BULLET
#include "lcpkit/bullet.h"

#define MAX_SOLVERS 8

typedef lk_bench_engine_opts opts;

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit bench bullet [--quick] [--steps N] [--warmup N] [--iterations N] [--solvers LIST]\n"
	        "                           [--scenes LIST] [--out DIR]\n"
	        "Bullet's sequential impulse solver vs lcpkit's PGS and AMGS through the adapter, same scenes and\n"
	        "iterations, worlds stepped side by side; medians of the timed steps.\n"
	        "  --steps N       timed steps per world (default 40, quick 10)\n"
	        "  --warmup N      steps before timing (default 20, quick 10)\n"
	        "  --iterations N  solver iterations, every solver (default 10, Bullet's default)\n"
	        "  --solvers LIST  comma-separated solver specs (default bullet-si,pgs,amgs)\n"
	        "  --scenes LIST   stack10, pool1k, pool10k (default all; quick: stack10,pool1k)\n"
	        "  --out DIR       CSV directory (default bench-out): bench_bullet.csv\n");
}

static lk_status add_body(lk_bt_world *w, const lk_bt_body_def *d)
{
	lk_status st = lk_bt_body_create(w, d, NULL);
	if (st != LK_OK)
		lk_cli_error("bench bullet", "%s", lk_bt_world_error(w));
	return st;
}

/* The scene into a fresh world. */
static lk_status build_scene(lk_bt_world *w, const char *scene)
{
	lk_bt_body_def g = lk_bt_default_body_def();
	g.shape = lk_bt_shape_plane(0, 0, 1, 0);
	g.mass = 0;
	lk_status st = add_body(w, &g);
	if (!strcmp(scene, "stack10")) {
		for (int i = 0; i < 10 && st == LK_OK; ++i) {
			lk_bt_body_def b = lk_bt_default_body_def();
			b.position[2] = 0.5 + i;
			st = add_body(w, &b);
		}
		return st;
	}
	const int n = !strcmp(scene, "pool1k") ? 1000 : 10000;
	const double r = 0.1;
	const int side = (int)ceil(sqrt(n / 10.0)); /* ten layers */
	/* every other layer is shifted by 0.3 r so that the cubic packing collapses instead of balancing */
	const double width = side * 2 * r + 0.3 * r;
	for (int k = 0; k < 4 && st == LK_OK; ++k) {
		lk_bt_body_def wall = lk_bt_default_body_def();
		wall.mass = 0;
		const double h = 2.5;
		wall.shape = k < 2 ? lk_bt_shape_box(0.1, width / 2 + 0.2, h) : lk_bt_shape_box(width / 2 + 0.2, 0.1, h);
		wall.position[0] = k == 0 ? -width / 2 - 0.1 : k == 1 ? width / 2 + 0.1 : 0;
		wall.position[1] = k == 2 ? -width / 2 - 0.1 : k == 3 ? width / 2 + 0.1 : 0;
		wall.position[2] = h;
		st = add_body(w, &wall);
	}
	for (int i = 0; i < n && st == LK_OK; ++i) {
		const int layer = i / (side * side), at = i % (side * side);
		lk_bt_body_def b = lk_bt_default_body_def();
		b.shape = lk_bt_shape_sphere(r);
		b.position[0] = -width / 2 + r + (at % side) * 2 * r + (layer % 2) * 0.3 * r;
		b.position[1] = -width / 2 + r + (double)(at / side) * 2 * r + (layer % 2) * 0.3 * r;
		b.position[2] = r + layer * 2 * r;
		st = add_body(w, &b);
	}
	return st;
}

/* lk_solve's own figure for the method proper (its sweeps, without validation and the RES evaluations around
 * them), per iteration, on the last step's rows: median of five solves from the same warm start. For
 * Bullet's solvers the step's solver time already is its iteration loop alone: NAN here. */
static double method_time(lk_bt_world *w, const char *spec, const opts *o)
{
	lk_solver_config cfg;
	if (!strncmp(spec, "bullet-", 7) || lk_config_parse(spec, &cfg, NULL, 0) != LK_OK)
		return NAN;
	if (!strstr(spec, "iters="))
		cfg.max_iterations = o->iterations;
	lk_problem *p = NULL;
	if (lk_bt_world_recorded_problem(w, &p) != LK_OK)
		return NAN;
	const int n = lk_problem_row_count(p);
	double *warm = malloc(((size_t)n + 1) * sizeof *warm), t[5];
	int reps = 0;
	if (warm) {
		memcpy(warm, lk_problem_lambda(p), (size_t)n * sizeof *warm);
		for (; reps < 5; ++reps) {
			lk_stats st;
			if (lk_problem_set_lambda(p, warm, n) != LK_OK || lk_solve(p, &cfg, &st, NULL) != LK_OK ||
			    st.iterations < 1)
				break;
			t[reps] = st.seconds / st.iterations;
		}
	}
	free(warm);
	lk_problem_destroy(p);
	return reps == 5 ? lk_cli_median(t, 5) : NAN;
}

typedef struct result {
	char solver[64];
	int bodies, rows, iterations;
	double step, convert, share, per_iter, method_per_iter, res_before, res_after;
	lk_cli_spread solve;
	long long fallbacks;
} result;

static int run_scene(const char *scene, const opts *o, FILE *csv)
{
	char list[256];
	snprintf(list, sizeof list, "%s", o->solvers);
	char *specs[MAX_SOLVERS];
	const int ns = lk_bench_split(list, specs, MAX_SOLVERS);
	lk_bt_world *w[MAX_SOLVERS] = {0};
	double *t_step = calloc((size_t)ns * (size_t)o->steps, sizeof(double));
	double *t_solve = calloc((size_t)ns * (size_t)o->steps, sizeof(double));
	double *t_conv = calloc((size_t)ns * (size_t)o->steps, sizeof(double));
	double *t_iter = calloc((size_t)ns * (size_t)o->steps, sizeof(double));
	result res[MAX_SOLVERS];
	memset(res, 0, sizeof res);
	int rc = LK_EXIT_FAIL;
	if (!t_step || !t_solve || !t_conv || !t_iter) {
		lk_cli_error("bench bullet", "out of memory");
		goto done;
	}
	for (int k = 0; k < ns; ++k) {
		lk_bt_world_def def = lk_bt_default_world_def();
		def.solver = specs[k];
		def.iterations = o->iterations;
		char err[256];
		if (lk_bt_world_create(&def, &w[k], err, sizeof err) != LK_OK) {
			lk_cli_error("bench bullet", "solver %s: %s", specs[k], err);
			goto done;
		}
		if (build_scene(w[k], scene) != LK_OK)
			goto done;
		lk_bt_world_set_residuals(w[k], 0);
		snprintf(res[k].solver, sizeof res[k].solver, "%s", specs[k]);
	}
	const int total = o->warmup + o->steps;
	char label[64];
	snprintf(label, sizeof label, "bullet %s", scene);
	for (int s = 0; s < total; ++s) {
		lk_cli_progress(label, s, total);
		for (int k = 0; k < ns; ++k) {
			lk_engine_step_stats st;
			if (lk_bt_world_step(w[k], &st) != LK_OK) {
				lk_cli_error("bench bullet", "%s: %s", specs[k], lk_bt_world_error(w[k]));
				goto done;
			}
			if (s < o->warmup)
				continue;
			const size_t at = (size_t)k * (size_t)o->steps + (size_t)(s - o->warmup);
			t_step[at] = st.step_seconds;
			t_solve[at] = st.solve_seconds;
			t_conv[at] = st.convert_seconds;
			t_iter[at] = st.iterations > 0 ? st.solve_seconds / st.iterations : NAN;
			res[k].rows = st.rows;
			res[k].bodies = st.bodies;
			res[k].iterations = st.iterations;
		}
	}
	lk_cli_progress(label, total, total);
	for (int k = 0; k < ns; ++k) {
		/* one more step with residuals for the accuracy columns */
		lk_engine_step_stats st;
		lk_bt_world_set_residuals(w[k], 1);
		lk_bt_world_set_recording(w[k], 1);
		if (lk_bt_world_step(w[k], &st) != LK_OK)
			goto done;
		result *r = &res[k];
		r->method_per_iter = method_time(w[k], specs[k], o);
		lk_bt_world_set_recording(w[k], 0);
		r->res_before = st.res_before;
		r->res_after = st.res_after;
		r->fallbacks = (long long)lk_bt_world_fallbacks(w[k]);
		double *a = t_step + (size_t)k * o->steps, *b = t_solve + (size_t)k * o->steps,
		       *c = t_conv + (size_t)k * o->steps, *d = t_iter + (size_t)k * o->steps;
		/* the share is taken per step before the medians reorder the arrays */
		double *share = malloc((size_t)o->steps * sizeof *share);
		if (!share)
			goto done;
		for (int i = 0; i < o->steps; ++i)
			share[i] = a[i] > 0 ? c[i] / a[i] : 0;
		r->share = lk_cli_median(share, o->steps);
		free(share);
		r->step = lk_cli_median(a, o->steps);
		r->solve = lk_cli_spread_of(b, o->steps);
		r->convert = lk_cli_median(c, o->steps);
		r->per_iter = lk_cli_median(d, o->steps);
	}
	printf("\n%s (%d bodies in the solver, %d rows at the last timed step of %s)\n", scene, res[0].bodies,
	       res[0].rows, res[0].solver);
	printf("  %-12s %7s %5s %9s %9s %9s %15s %9s %9s %10s %8s %10s %10s %6s\n", "solver", "rows", "iters",
	       "step ms", "solve ms", "min", "q25-q75", "us/iter", "method", "convert ms", "convert", "RES before",
	       "RES after", "fallb.");
	for (int k = 0; k < ns; ++k) {
		const result *r = &res[k];
		char iqr[32];
		printf("  %-12s %7d %5d %9.3f %9.3f %9.3f %15s %9.1f %9.1f %10.3f %7.1f%% %10.3e %10.3e %6lld\n",
		       r->solver, r->rows, r->iterations, 1e3 * r->step, 1e3 * r->solve.median, 1e3 * r->solve.min,
		       lk_cli_quartiles(&r->solve, 1e3, iqr, sizeof iqr),
		       1e6 * r->per_iter, 1e6 * r->method_per_iter, 1e3 * r->convert, 100 * r->share, r->res_before,
		       r->res_after, r->fallbacks);
		fprintf(csv, "%s,%s,%d,%d,%d,%d,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.4f,%.6e,%.6e,%lld\n", scene,
		        r->solver, r->bodies, r->rows, r->iterations, o->steps, r->step, r->solve.median, r->solve.min,
		        r->solve.q25, r->solve.q75, r->per_iter, r->method_per_iter, r->convert, r->share,
		        r->res_before, r->res_after, r->fallbacks);
	}
	fflush(stdout);
	rc = LK_EXIT_OK;
done:
	for (int k = 0; k < ns; ++k)
		lk_bt_world_destroy(w[k]);
	free(t_step);
	free(t_solve);
	free(t_conv);
	free(t_iter);
	return rc;
}

int lk_bench_bullet(int argc, char **argv)
{
	opts o;
	memset(&o, 0, sizeof o);
	o.out = "bench-out";
	o.iterations = 10;
	o.steps = -1;
	o.warmup = -1;
	snprintf(o.solvers, sizeof o.solvers, "bullet-si,pgs,amgs");
	o.scenes[0] = '\0';
	const char *cmd = "bench bullet";
	int parsed = lk_bench_engine_parse(cmd, argc, argv, &o, usage, 10);
	if (parsed >= 0)
		return parsed;
	lk_bench_csv file = {.name = "bench_bullet.csv"};
	if (lk_bench_open_csvs(cmd, o.out, &file, 1) != 0)
		return LK_EXIT_FAIL;
	FILE *csv = file.f;
	fprintf(csv, "scene,solver,bodies,rows,iterations,timed_steps,step_s,solve_s,solve_min_s,solve_q25_s,solve_q75_s,"
	             "solve_s_per_iteration,"
	             "method_s_per_iteration,convert_s,convert_share,res_before,res_after,fallbacks\n");
	printf("lcpkit bench bullet: %d iterations, %d warm-up and %d timed steps per world, thread CPU time: "
	       "medians, the solve's minimum and quartiles; worlds stepped side by side\n",
	       o.iterations, o.warmup, o.steps);
	int rc = LK_EXIT_OK;
	for (int k = 0; k < o.nscenes && rc == LK_EXIT_OK; ++k)
		rc = run_scene(o.scene_names[k], &o, csv);
	lk_bench_close_csvs(&file, 1);
	if (rc == LK_EXIT_OK)
		printf("\nCSV: %s\n", file.path);
	return rc;
}

#else

int lk_bench_bullet(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	lk_cli_error("bench bullet", "this lcpkit was built without Bullet (LCPKIT_WITH_BULLET=OFF)");
	return LK_EXIT_FAIL;
}

#endif

/* lcpkit bench ode and lcpkit bench bullet: one engine's own solvers against lcpkit's through its adapter, on
 * scenes of the scene library (scene.h), with the same iteration count.
 *
 * Both suites build their worlds from the same scene specs (by default "boxstack:n=10", ten unit boxes on the
 * ground, and "bigpool:n=1000,width=2" and "bigpool:n=10000,width=6.4", 1,000 and 10,000 spheres of r = 0.1 m
 * in a walled square pool), so that the two engines' figures are of one scene. One simulation per solver is
 * built from the same description and the simulations are stepped in turn, step by step (in alternating
 * order), so that every solver sees the same machine load; each first takes --warmup steps (contacts and warm
 * starts established), then --steps timed steps without measuring RES. Reported, in thread CPU time
 * (lk_set_stats_clock: a shared machine's preemptions do not move it): medians over the timed steps of the
 * whole step, of the engine's constraint phase (lk_engine_step_stats.phase_seconds), of the solver with its
 * minimum and quartiles (the engines' own: ODE's stepper call, Bullet's iteration loop; lcpkit: lk_solve), the
 * solver per iteration, and the conversion of the engine's rows into an lcpkit problem and back with its share
 * of the phase. RES before and after the solve, on the same rows, comes from one more step of each simulation
 * with residuals on. The engines' direct solvers (ODE's dWorldStep, Bullet's MLCP Dantzig and Lemke) run only
 * on scenes of at most DENSE_MAX bodies: a pool is one island of ~10^4 rows, a dense matrix of hundreds of
 * megabytes. */
#include "bench.h"
#include "bench_util.h"
#include "cli_util.h"
#include "scene.h"
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SOLVERS LK_BENCH_ENGINE_SPECS
#define DENSE_MAX 100

typedef lk_bench_engine_opts opts;

/* One suite: its command, engine, defaults and CSV. */
typedef struct suite {
	const char *cmd;
	lk_engine engine;
	const char *solvers;    /* the default --solvers */
	int iterations;         /* the default --iterations: the engine's own */
	int warmup_quick;       /* --warmup under --quick */
	const char *csv;
	const char *own_default; /* the solver the step ratios are of */
} suite;

static void usage_of(FILE *f, const suite *s)
{
	fprintf(f,
	        "usage: lcpkit %s [--quick] [--steps N] [--warmup N] [--iterations N] [--solvers LIST]\n"
	        "       %*s [--scenes LIST] [--out DIR]\n"
	        "%s's own solvers vs lcpkit's through the adapter, on scenes of the scene library, same iterations,\n"
	        "simulations stepped side by side; medians of the timed steps, thread CPU time.\n"
	        "  --steps N       timed steps per simulation (default 40, quick 10)\n"
	        "  --warmup N      steps before timing (default 20, quick %d)\n"
	        "  --iterations N  iterations per step, every solver (default %d, %s's default)\n"
	        "  --solvers LIST  comma-separated solver specs (default %s)\n"
	        "  --scenes LIST   scene specs (default %s; quick: %s)\n"
	        "  --out DIR       CSV directory (default bench-out): %s\n",
	        s->cmd, (int)strlen(s->cmd), "", s->engine == LK_ENGINE_ODE ? "ODE" : "Bullet", s->warmup_quick,
	        s->iterations, s->engine == LK_ENGINE_ODE ? "ODE" : "Bullet", s->solvers, LK_BENCH_ENGINE_SCENES,
	        LK_BENCH_ENGINE_SCENES_QUICK, s->csv);
}

static const suite *current;

static void usage(FILE *f)
{
	usage_of(f, current);
}

static int is_direct(const char *solver)
{
	return !strcmp(solver, "ode-step") || !strcmp(solver, "bullet-dantzig") || !strcmp(solver, "bullet-lemke");
}

typedef struct result {
	const char *solver;
	int skipped, bodies, rows, iterations;
	double step, phase, convert, share, res_initial, res_final;
	lk_cli_spread solve;
	long long fallbacks;
} result;

static int run_scene(const suite *su, const char *scene_spec, const opts *o, FILE *csv)
{
	const char *specs[MAX_SOLVERS];
	const int ns = o->nsolvers;
	for (int k = 0; k < ns; ++k)
		specs[k] = o->solver_specs[k];
	lk_sim *sim[MAX_SOLVERS] = {0};
	result res[MAX_SOLVERS];
	memset(res, 0, sizeof res);
	const size_t cells = (size_t)ns * (size_t)o->steps;
	double *t_step = calloc(cells, sizeof(double)), *t_solve = calloc(cells, sizeof(double));
	double *t_phase = calloc(cells, sizeof(double)), *t_convert = calloc(cells, sizeof(double));
	double *t_share = calloc(cells, sizeof(double));
	lk_scene *sc = NULL;
	int rc = LK_EXIT_FAIL;
	char err[256];
	if (!t_step || !t_solve || !t_phase || !t_convert || !t_share) {
		lk_cli_error(su->cmd, "out of memory");
		goto done;
	}
	if (lk_scene_create(scene_spec, &sc, err, sizeof err) != LK_OK) {
		lk_cli_error(su->cmd, "%s", err);
		rc = LK_EXIT_USAGE;
		goto done;
	}
	for (int k = 0; k < ns; ++k) {
		res[k].solver = specs[k];
		if (is_direct(specs[k]) && sc->nbodies > DENSE_MAX) {
			res[k].skipped = 1;
			continue;
		}
		const char *name = strcmp(specs[k], "own") ? specs[k] : lk_engine_default_solver(su->engine);
		lk_sim_def def = {sc, su->engine, name, o->iterations, 0, 0, 0};
		if (lk_sim_create(&def, &sim[k], err, sizeof err) != LK_OK) {
			lk_cli_error(su->cmd, "%s with %s: %s", scene_spec, specs[k], err);
			rc = LK_EXIT_USAGE;
			goto done;
		}
		lk_sim_set_residuals(sim[k], 0);
	}
	const int total = o->warmup + o->steps;
	char label[LK_CLI_SPEC_LEN + 16];
	snprintf(label, sizeof label, "%s %s", lk_engine_name(su->engine), scene_spec);
	for (int s = 0; s < total; ++s) {
		lk_cli_progress(label, s, total);
		for (int j = 0; j < ns; ++j) {
			const int k = s % 2 ? ns - 1 - j : j;
			if (res[k].skipped)
				continue;
			lk_engine_step_stats st;
			if (lk_sim_step(sim[k], &st) != LK_OK) {
				lk_cli_error(su->cmd, "%s with %s: step %d failed", scene_spec, specs[k], s + 1);
				goto done;
			}
			if (s < o->warmup)
				continue;
			const size_t at = (size_t)k * (size_t)o->steps + (size_t)(s - o->warmup);
			t_step[at] = st.step_seconds;
			t_phase[at] = st.phase_seconds;
			t_solve[at] = st.solve_seconds;
			t_convert[at] = st.convert_seconds;
			t_share[at] = st.phase_seconds > 0 ? st.convert_seconds / st.phase_seconds : 0;
			res[k].iterations = st.iterations;
		}
	}
	lk_cli_progress(label, total, total);
	for (int k = 0; k < ns; ++k) {
		result *r = &res[k];
		if (r->skipped)
			continue;
		/* one more step with residuals on, for the accuracy columns of every solver */
		lk_engine_step_stats st;
		lk_sim_set_residuals(sim[k], 1);
		if (lk_sim_step(sim[k], &st) != LK_OK) {
			lk_cli_error(su->cmd, "%s with %s: the measured step failed", scene_spec, specs[k]);
			goto done;
		}
		r->res_initial = st.res_initial;
		r->res_final = st.res_final;
		r->rows = st.rows;
		r->bodies = st.bodies;
		r->fallbacks = (long long)st.fallback_total;
		const size_t at = (size_t)k * (size_t)o->steps;
		r->step = lk_cli_median(t_step + at, o->steps);
		r->phase = lk_cli_median(t_phase + at, o->steps);
		r->solve = lk_cli_spread_of(t_solve + at, o->steps);
		r->convert = lk_cli_median(t_convert + at, o->steps);
		r->share = lk_cli_median(t_share + at, o->steps);
	}
	double base = NAN;
	for (int k = 0; k < ns; ++k)
		if (!res[k].skipped && (!strcmp(res[k].solver, su->own_default) || !strcmp(res[k].solver, "own")))
			base = res[k].step;
	int shown = 0;
	while (shown < ns && res[shown].skipped)
		++shown;
	printf("\n%s (%d bodies, %d rows at the measured step of %s)\n", scene_spec, shown < ns ? res[shown].bodies : 0,
	       shown < ns ? res[shown].rows : 0, shown < ns ? res[shown].solver : "-");
	printf("  %-14s %7s %5s %9s %8s %9s %9s %9s %15s %12s %10s %8s %10s %10s %6s\n", "solver", "rows", "iters",
	       "step ms", "vs own", "phase ms", "solve ms", "min", "q25-q75", "us per iter", "convert ms", "convert",
	       "RES before", "RES after", "fallb.");
	for (int k = 0; k < ns; ++k) {
		const result *r = &res[k];
		if (r->skipped) {
			printf("  %-14s   (skipped: a dense LCP of %s's %d bodies)\n", r->solver, scene_spec, sc->nbodies);
			fprintf(csv, "\"%s\",%s,,,,,,,,,,,,,,,,skipped\n", scene_spec, r->solver);
			continue;
		}
		char iqr[32], per[16] = "-";
		/* a direct solver has no iterations to share its time */
		const double per_iter = r->iterations > 0 ? r->solve.median / r->iterations : NAN;
		if (isfinite(per_iter))
			snprintf(per, sizeof per, "%.2f", 1e6 * per_iter);
		printf("  %-14s %7d %5d %9.3f %7.2fx %9.3f %9.3f %9.3f %15s %12s %10.3f %7.1f%% %10.3e %10.3e %6lld\n",
		       r->solver, r->rows, r->iterations, 1e3 * r->step, r->step / base, 1e3 * r->phase,
		       1e3 * r->solve.median, 1e3 * r->solve.min, lk_cli_quartiles(&r->solve, 1e3, iqr, sizeof iqr), per,
		       1e3 * r->convert, 100 * r->share, r->res_initial, r->res_final, r->fallbacks);
		fprintf(csv, "\"%s\",%s,%d,%d,%d,%d,%.6e,%.4f,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.4f,%.6e,%.6e,%lld\n",
		        scene_spec, r->solver, r->bodies, r->rows, r->iterations, o->steps, r->step, r->step / base,
		        r->phase, r->solve.median, r->solve.min, r->solve.q25, r->solve.q75, per_iter, r->convert, r->share,
		        r->res_initial, r->res_final, r->fallbacks);
	}
	fflush(stdout);
	rc = LK_EXIT_OK;
done:
	for (int k = 0; k < ns; ++k)
		lk_sim_destroy(sim[k]);
	lk_scene_destroy(sc);
	free(t_step);
	free(t_solve);
	free(t_phase);
	free(t_convert);
	free(t_share);
	return rc;
}

static int run_suite(const suite *su, int argc, char **argv)
{
	if (!lk_engine_available(su->engine)) {
		lk_cli_error(su->cmd, "this lcpkit was built without %s", lk_engine_name(su->engine));
		return LK_EXIT_FAIL;
	}
	opts o;
	memset(&o, 0, sizeof o);
	o.out = "bench-out";
	o.iterations = su->iterations;
	o.steps = -1;
	o.warmup = -1;
	snprintf(o.solvers, sizeof o.solvers, "%s", su->solvers);
	current = su;
	int parsed = lk_bench_engine_parse(su->cmd, argc, argv, &o, usage, su->warmup_quick);
	if (parsed >= 0)
		return parsed;
	for (int k = 0; k < o.nsolvers; ++k) {
		char err[300];
		const char *spec = o.solver_specs[k];
		const char *name = strcmp(spec, "own") ? spec : lk_engine_default_solver(su->engine);
		if (lk_sim_check_solver(su->engine, name, err, sizeof err) != LK_OK) {
			lk_cli_error(su->cmd, "%s", err);
			return LK_EXIT_USAGE;
		}
	}
	for (int k = 0; k < o.nscenes; ++k) {
		char err[300];
		lk_scene *sc = NULL;
		if (lk_scene_create(o.scene_specs[k], &sc, err, sizeof err) != LK_OK) {
			lk_cli_error(su->cmd, "%s", err);
			return LK_EXIT_USAGE;
		}
		lk_scene_destroy(sc);
	}
	lk_bench_csv file = {.name = su->csv};
	if (lk_bench_open_csvs(su->cmd, o.out, &file, 1) != 0)
		return LK_EXIT_FAIL;
	fprintf(file.f, "scene,solver,bodies,rows,iterations,timed_steps,step_s,step_vs_own,phase_s,solve_s,solve_min_s,"
	                "solve_q25_s,solve_q75_s,solve_per_iteration_s,convert_s,convert_share,res_initial,res_final,"
	                "fallbacks\n");
	printf("lcpkit %s: %d iterations, %d warm-up and %d timed steps per simulation, thread CPU time: medians, the "
	       "solve's minimum and quartiles; simulations stepped side by side\n",
	       su->cmd, o.iterations, o.warmup, o.steps);
	int rc = LK_EXIT_OK;
	for (int k = 0; k < o.nscenes && rc == LK_EXIT_OK; ++k)
		rc = run_scene(su, o.scene_specs[k], &o, file.f);
	lk_bench_close_csvs(&file, 1);
	if (rc == LK_EXIT_OK)
		printf("\nCSV: %s\n", file.path);
	return rc;
}

int lk_bench_ode(int argc, char **argv)
{
	static const suite s = {"bench ode", LK_ENGINE_ODE, "ode-quickstep,ode-step,pgs,amgs", 20, 5, "bench_ode.csv",
	                        "ode-quickstep"};
	return run_suite(&s, argc, argv);
}

int lk_bench_bullet(int argc, char **argv)
{
	static const suite s = {"bench bullet", LK_ENGINE_BULLET, "bullet-si,pgs,amgs", 10, 10, "bench_bullet.csv",
	                        "bullet-si"};
	return run_suite(&s, argc, argv);
}

/* lcpkit bench phase: what a user pays for the solver inside the engine, end to end. The engine's constraint
 * phase (lk_engine_step_stats.phase_seconds: in ODE the stepper call, which builds the rows, solves them,
 * writes the impulses back and integrates; in Bullet solveConstraints, its row setup, the solve, the
 * write-back and its finish) with the engine's own solver against lcpkit's through the adapter, same scene,
 * same iteration count.
 *
 * One simulation per engine and solver is built from the same scene description; they are stepped in turn,
 * step by step, in an order reversed every step, so that each sees the same machine load and none always
 * runs on the cache another left. Residual measurement is off (with an engine's own solver it would extract
 * the rows inside the phase). Times are wall-clock time by default, medians over the steps: a reading of the
 * thread's CPU clock (--clock thread) is a system call, and the ODE adapter reads its statistics clock many
 * times inside its phase (the phase's parts, lk_solve's own), which on small scenes made up much of the phase
 * measured (docs/benchmarks.md, "Solver phase, end to end"); the median leaves out the steps a preemption
 * lengthened. Reported per solver: the median row count, the phase's median, minimum and
 * interquartile range over the timed steps, the medians of the solve, of the conversion (lcpkit only) and of
 * the whole step, and the ratio of the phase median to the first solver's (the engine's own by default), as
 * a whole and per row (the simulations drift apart, so their row counts differ a little; ODE's own steppers
 * report no rows without the residual measurement, so there the ratio is the whole phase's only). */
#include "bench.h"
#include "bench_util.h"
#include "cli_util.h"
#include "scene.h"
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SCENES 8
#define MAX_SOLVERS 6

typedef struct opts {
	int quick, iterations, warmup, steps;
	int wall; /* --clock wall (the default): wall-clock time; thread: the stepping thread's CPU time, which
	           * leaves the other threads' work out and adds a system call to every reading */
	int multibody; /* --bullet-world multibody */
	int nscenes, nsolvers, engines; /* engines: bit (1 << lk_engine) */
	char scenes[MAX_SCENES][LK_CLI_SPEC_LEN];
	char solvers[MAX_SOLVERS][LK_CLI_SPEC_LEN];
	const char *out;
} opts;

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit bench phase [--quick] [--scenes LIST] [--engines LIST] [--solvers LIST]\n"
	        "                          [--iterations N] [--warmup N] [--steps N] [--clock thread|wall]\n"
	        "                          [--bullet-world discrete|multibody] [--out DIR]\n"
	        "The engines' constraint phase (ODE: the stepper call; Bullet: solveConstraints) with their own\n"
	        "solver against lcpkit's through the adapters: same scene, same iterations, simulations stepped\n"
	        "side by side; medians, minima and quartiles over the timed steps.\n"
	        "  --scenes LIST     scene specs (default pile:n=3000,ragdolls:n=32; quick: pile:n=300,ragdolls:n=4)\n"
	        "  --engines LIST    ode, bullet (default: those built in)\n"
	        "  --solvers LIST    solver specs; \"own\" is the engine's default solver (default own,pgs); SPEC@pool=N:\n"
	        "                    ODE's world steps on a pool of N threads, lent to lcpkit's threaded sweeps\n"
	        "  --iterations N    iterations per step, every solver (default 10)\n"
	        "  --warmup N        steps before timing (default 60, quick 10)\n"
	        "  --steps N         timed steps (default 60, quick 10)\n"
	        "  --clock C         wall: wall-clock time (default; medians over the steps); thread: the stepping\n"
	        "                    thread's CPU time, a system call a reading (the adapters read their clock\n"
	        "                    inside the phase: on small scenes it adds to lcpkit's phase; not for solvers\n"
	        "                    on threads)\n"
	        "  --bullet-world W  discrete: a btDiscreteDynamicsWorld (default); multibody: a\n"
	        "                    btMultiBodyDynamicsWorld, its own solver btMultiBodyConstraintSolver (bullet-si)\n"
	        "                    and lcpkit's lk::BulletMultiBodySolver\n"
	        "  --out DIR         CSV directory (default bench-out): bench_phase.csv\n");
}

static int parse(int argc, char **argv, opts *o)
{
	const char *scenes = NULL, *solvers = "own,pgs", *engines = NULL;
	o->iterations = 10;
	o->warmup = o->steps = -1;
	o->out = "bench-out";
	int clock = -1;
	static const char *const clocks[] = {"thread", "wall", NULL};
	static const char *const worlds[] = {"discrete", "multibody", NULL};
	int world = 0;
	const lk_cli_option table[] = {
		LK_CLI_OPT_FLAG("--quick", &o->quick),
		LK_CLI_OPT_STRING("--scenes", &scenes),
		LK_CLI_OPT_STRING("--solvers", &solvers),
		LK_CLI_OPT_STRING("--engines", &engines),
		LK_CLI_OPT_STRING("--out", &o->out),
		LK_CLI_OPT_CHOICE("--clock", &clock, clocks),
		LK_CLI_OPT_CHOICE("--bullet-world", &world, worlds),
		LK_CLI_OPT_INT("--iterations", &o->iterations, 1, 1000000),
		LK_CLI_OPT_INT("--warmup", &o->warmup, 0, 1000000),
		LK_CLI_OPT_INT("--steps", &o->steps, 1, 1000000),
		LK_CLI_OPT_END};
	const int parsed = lk_cli_parse("bench phase", argc, argv, 1, table, usage, NULL, NULL);
	if (parsed >= 0)
		return parsed;
	o->wall = clock != 0;
	o->multibody = world == 1;
	if (o->warmup < 0)
		o->warmup = o->quick ? 10 : 60;
	if (o->steps < 0)
		o->steps = o->quick ? 10 : 60;
	if (!scenes)
		scenes = o->quick ? "pile:n=300,ragdolls:n=4" : "pile:n=3000,ragdolls:n=32";
	o->nscenes = lk_cli_split_specs(scenes, o->scenes, MAX_SCENES);
	o->nsolvers = lk_cli_split_specs(solvers, o->solvers, MAX_SOLVERS);
	if (o->nscenes < 1 || o->nsolvers < 1) {
		lk_cli_error("bench phase", "--scenes and --solvers take 1 to %d and %d specs", MAX_SCENES, MAX_SOLVERS);
		return LK_EXIT_USAGE;
	}
	if (!engines) {
		for (int e = 0; e < LK_ENGINE_COUNT; ++e)
			o->engines |= lk_engine_available((lk_engine)e) << e;
		if (!o->engines)
			lk_cli_error("bench phase", "this lcpkit was built without ODE and Bullet");
		return o->engines ? -1 : LK_EXIT_FAIL;
	}
	char list[LK_CLI_SPEC_LEN], *names[4];
	snprintf(list, sizeof list, "%s", engines);
	const int ne = lk_bench_split(list, names, 4);
	for (int k = 0; k < ne; ++k) {
		const int e = lk_engine_from_name(names[k]);
		if (e < 0) {
			lk_cli_error("bench phase", "--engines: '%s' is not an engine built into this lcpkit (ode, bullet)",
			             names[k]);
			return LK_EXIT_USAGE;
		}
		o->engines |= 1 << e;
	}
	if (!o->engines) {
		lk_cli_error("bench phase", "--engines names no engine");
		return LK_EXIT_USAGE;
	}
	return -1;
}

typedef struct series {
	double *phase, *solve, *convert, *step, *rows;
} series;

static int run(const opts *o, const char *scene_spec, lk_engine engine, FILE *csv)
{
	const int ns = o->nsolvers, n = o->steps;
	const char *spec[MAX_SOLVERS];
	lk_sim *sim[MAX_SOLVERS] = {0};
	series t[MAX_SOLVERS];
	memset(t, 0, sizeof t);
	lk_scene *sc = NULL;
	int rc = LK_EXIT_FAIL;
	char err[256];
	if (lk_scene_create(scene_spec, &sc, err, sizeof err) != LK_OK) {
		lk_cli_error("bench phase", "%s", err);
		return LK_EXIT_USAGE;
	}
	char solver[MAX_SOLVERS][LK_CLI_SPEC_LEN];
	for (int k = 0; k < ns; ++k) {
		/* "SPEC@pool=N": the ODE world of this column steps on a pool of N threads (lk_sim_def.engine_threads) */
		int pool = 0;
		snprintf(solver[k], sizeof solver[k], "%s", o->solvers[k]);
		char *at = strstr(solver[k], "@pool=");
		if (at) {
			if (!lk_cli_int(at + 6, 1, 64, &pool)) {
				lk_cli_error("bench phase", "%s: @pool= takes a thread count from 1 to 64", o->solvers[k]);
				rc = LK_EXIT_USAGE;
				goto done;
			}
			*at = '\0';
		}
		const char *name = strcmp(solver[k], "own") ? solver[k] : lk_engine_default_solver(engine);
		spec[k] = o->solvers[k];
		lk_sim_def def = {sc, engine, name, o->iterations, 0, engine == LK_ENGINE_ODE ? pool : 0,
		                  engine == LK_ENGINE_BULLET && o->multibody};
		if (lk_sim_create(&def, &sim[k], err, sizeof err) != LK_OK) {
			lk_cli_error("bench phase", "%s in %s with %s: %s", scene_spec, lk_engine_name(engine), spec[k], err);
			rc = LK_EXIT_USAGE;
			goto done;
		}
		lk_sim_set_residuals(sim[k], 0);
		lk_sim_step_in_turn(sim[k]); /* the worlds are stepped side by side */
		double **cols[5] = {&t[k].phase, &t[k].solve, &t[k].convert, &t[k].step, &t[k].rows};
		for (int c = 0; c < 5; ++c)
			if (!(*cols[c] = calloc((size_t)n, sizeof(double)))) {
				lk_cli_error("bench phase", "out of memory");
				goto done;
			}
	}
	char label[LK_CLI_SPEC_LEN + 16];
	snprintf(label, sizeof label, "%s %s", lk_engine_name(engine), scene_spec);
	const int total = o->warmup + n;
	for (int s = 0; s < total; ++s) {
		lk_cli_progress(label, s, total);
		for (int j = 0; j < ns; ++j) {
			const int k = s % 2 ? ns - 1 - j : j;
			lk_engine_step_stats st;
			if (lk_sim_step(sim[k], &st) != LK_OK) {
				lk_cli_error("bench phase", "%s in %s with %s: step %d failed", scene_spec, lk_engine_name(engine),
				             spec[k], s + 1);
				goto done;
			}
			if (s < o->warmup)
				continue;
			const int at = s - o->warmup;
			t[k].phase[at] = st.phase_seconds;
			t[k].solve[at] = st.solve_seconds;
			t[k].convert[at] = st.convert_seconds;
			t[k].step[at] = st.step_seconds;
			t[k].rows[at] = st.rows;
		}
	}
	lk_cli_progress(label, total, total);
	printf("\n%s in %s%s: %d iterations, %d warm-up and %d timed steps, %s, medians (ms)\n", scene_spec,
	       lk_engine_name(engine), engine == LK_ENGINE_BULLET && o->multibody ? " (multibody world)" : "",
	       o->iterations, o->warmup, n, o->wall ? "wall-clock time" : "thread CPU time");
	int width = 18;
	for (int k = 0; k < ns; ++k)
		width = (int)strlen(spec[k]) > width ? (int)strlen(spec[k]) : width;
	printf("  %-*s %7s %9s %9s %9s %9s %9s %9s %9s %8s %8s\n", width, "solver", "rows", "phase", "min", "q25", "q75",
	       "solve", "convert", "step", "phase/own", "per row");
	double own_phase = NAN, own_rows = NAN;
	for (int k = 0; k < ns; ++k) {
		const double rows = lk_cli_median(t[k].rows, n);
		const lk_cli_spread ps = lk_cli_spread_of(t[k].phase, n);
		const double phase = ps.median, lo = ps.min, q25 = ps.q25, q75 = ps.q75;
		const double solve = lk_cli_median(t[k].solve, n), convert = lk_cli_median(t[k].convert, n);
		const double step = lk_cli_median(t[k].step, n);
		if (k == 0)
			own_phase = phase, own_rows = rows;
		const double ratio = phase / own_phase;
		const double ratio_row = rows > 0 && own_rows > 0 ? (phase / rows) / (own_phase / own_rows) : NAN;
		char per_row[16] = "-";
		if (isfinite(ratio_row))
			snprintf(per_row, sizeof per_row, "%.2fx", ratio_row);
		printf("  %-*s %7.0f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %8.2fx %8s\n", width, spec[k], rows, 1e3 * phase,
		       1e3 * lo, 1e3 * q25, 1e3 * q75, 1e3 * solve, 1e3 * convert, 1e3 * step, ratio, per_row);
		/* the scene and the solver quoted: their specs hold commas (as bench_engines.c writes them) */
		/* a multibody world's engine is "bullet-multibody" */
		fprintf(csv, "\"%s\",%s%s,\"%s\",%d,%d,%.0f,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.4f,%.4f,%s\n",
		        scene_spec, lk_engine_name(engine), engine == LK_ENGINE_BULLET && o->multibody ? "-multibody" : "",
		        spec[k], o->iterations, n, rows, phase, lo, q25, q75, solve, convert, step, ratio, ratio_row,
		        o->wall ? "wall" : "thread");
	}
	fflush(stdout);
	rc = LK_EXIT_OK;
done:
	for (int k = 0; k < ns; ++k) {
		lk_sim_destroy(sim[k]);
		free(t[k].phase);
		free(t[k].solve);
		free(t[k].convert);
		free(t[k].step);
		free(t[k].rows);
	}
	lk_scene_destroy(sc);
	return rc;
}

int lk_bench_phase(int argc, char **argv)
{
	opts o;
	memset(&o, 0, sizeof o);
	int rc = parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	lk_bench_csv csv = {.name = "bench_phase.csv"};
	if (lk_bench_open_csvs("bench phase", o.out, &csv, 1) != 0)
		return LK_EXIT_FAIL;
	fprintf(csv.f, "scene,engine,solver,iterations,steps,rows,phase_median_s,phase_min_s,phase_q25_s,phase_q75_s,"
	               "solve_median_s,convert_median_s,step_median_s,phase_vs_first,phase_per_row_vs_first,clock\n");
	printf("lcpkit bench phase: the solver phase with each engine's own solver and lcpkit's, side by side\n");
	if (o.wall)
		lk_set_stats_clock(LK_CLOCK_WALL); /* `lcpkit bench` set the thread's CPU clock and restores it */
	rc = LK_EXIT_OK;
	for (int i = 0; i < o.nscenes && rc == LK_EXIT_OK; ++i)
		for (int e = 0; e < LK_ENGINE_COUNT && rc == LK_EXIT_OK; ++e)
			if ((o.engines >> e) & 1)
				rc = run(&o, o.scenes[i], (lk_engine)e, csv.f);
	printf("\nCSV: %s\n", csv.path);
	lk_bench_close_csvs(&csv, 1);
	return rc;
}

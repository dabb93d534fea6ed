/* lcpkit bench ode: ODE's own steppers (dWorldQuickStep, dWorldStep) against lk_ode_world_step with lcpkit's
 * PGS and AMGS, on the same scenes with the same iteration count.
 *
 * Scenes, built with ODE directly: "stack10", ten unit boxes on the ground; "pool1k" and "pool10k", 1,000
 * and 10,000 spheres (r = 0.1 m) packed touching in a walled square pool (every other layer shifted by
 * 0.3 r so the packing collapses), the scenes of `lcpkit bench bullet`. One world per solver is built from
 * the same description and the worlds are stepped in turn, step by step, so that every solver sees the same
 * machine load; each world first takes --warmup steps, then --steps timed steps. Collision detection
 * (dSpaceCollide) is not timed. Every solver runs the world's quickstep iteration count (--iterations,
 * default ODE's 20). Reported, in thread CPU time (a shared machine preempts wall-clock steps of
 * milliseconds often enough to move medians; CPU time does not move; the plugin's own timings read the same
 * clock, lk_set_stats_clock): medians over the timed steps of the step, of lcpkit's solve (or ODE's stepper
 * call) with its minimum and quartiles, of finding bodies and joints and extracting ODE's rows into an
 * lcpkit problem (and its share of the step), and of ODE's integration. RES before and after, on the same extracted rows, comes from one more step of each world with ODE's
 * impulses read back through dJointFeedback. ODE's dWorldStep (a dense LCP per island) runs on stack10
 * only: a pool is one island of ~10^4 rows, a dense matrix of hundreds of megabytes. */
#include "bench.h"
#include "bench_util.h"
#include "cli_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#ifdef LCPKIT_HAVE_ODE
#include "lcpkit/ode.h"

#include <ode/ode.h>

#define MAX_SOLVERS 8

typedef lk_bench_engine_opts opts;

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit bench ode [--quick] [--steps N] [--warmup N] [--iterations N] [--solvers LIST]\n"
	        "                        [--scenes LIST] [--out DIR]\n"
	        "ODE's dWorldQuickStep and dWorldStep vs lk_ode_world_step with lcpkit's PGS and AMGS, same scenes\n"
	        "and iterations, worlds stepped side by side; medians of the timed steps.\n"
	        "  --steps N       timed steps per world (default 40, quick 10)\n"
	        "  --warmup N      steps before timing (default 20, quick 5)\n"
	        "  --iterations N  quickstep iterations of every world (default 20, ODE's default)\n"
	        "  --solvers LIST  comma-separated solver specs (default ode-quickstep,ode-step,pgs,amgs)\n"
	        "  --scenes LIST   stack10, pool1k, pool10k (default all; quick: stack10,pool1k)\n"
	        "  --out DIR       CSV directory (default bench-out): bench_ode.csv\n");
}

/* ODE's own messages (its dense LCP reports degenerate pivots on box stacks) are counted, not printed */
static long ode_messages;

static void count_message(int num, const char *msg, va_list ap)
{
	(void)num;
	(void)msg;
	(void)ap;
	++ode_messages;
}

typedef struct world {
	dWorldID w;
	dSpaceID s;
	dJointGroupID contacts;
	lk_ode *ctx;
	int ode_stepper;
} world;

static void near_cb(void *data, dGeomID a, dGeomID b)
{
	world *wd = data;
	dContact c[4];
	int n = dCollide(a, b, 4, &c[0].geom, sizeof c[0]);
	for (int i = 0; i < n; ++i) {
		c[i].surface.mode = dContactApprox1;
		c[i].surface.mu = 0.5;
		dJointID j = dJointCreateContact(wd->w, wd->contacts, &c[i]);
		dJointAttach(j, dGeomGetBody(a), dGeomGetBody(b));
	}
}

static void build_scene(world *wd, const char *scene)
{
	dWorldSetGravity(wd->w, 0, 0, -9.81);
	dCreatePlane(wd->s, 0, 0, 1, 0);
	dMass m;
	if (!strcmp(scene, "stack10")) {
		for (int i = 0; i < 10; ++i) {
			dBodyID b = dBodyCreate(wd->w);
			dMassSetBox(&m, 1, 1, 1, 1);
			dBodySetMass(b, &m);
			dBodySetPosition(b, 0, 0, 0.5 + i);
			dGeomSetBody(dCreateBox(wd->s, 1, 1, 1), b);
		}
		return;
	}
	const int n = !strcmp(scene, "pool1k") ? 1000 : 10000;
	const double r = 0.1;
	const int side = (int)ceil(sqrt(n / 10.0)); /* ten layers */
	const double width = side * 2 * r + 0.3 * r;
	dCreatePlane(wd->s, 1, 0, 0, -width / 2);
	dCreatePlane(wd->s, -1, 0, 0, -width / 2);
	dCreatePlane(wd->s, 0, 1, 0, -width / 2);
	dCreatePlane(wd->s, 0, -1, 0, -width / 2);
	for (int i = 0; i < n; ++i) {
		const int layer = i / (side * side), at = i % (side * side);
		dBodyID b = dBodyCreate(wd->w);
		dMassSetSphere(&m, 1000, r);
		dBodySetMass(b, &m);
		dBodySetPosition(b, -width / 2 + r + (at % side) * 2 * r + (layer % 2) * 0.3 * r,
		                 -width / 2 + r + (double)(at / side) * 2 * r + (layer % 2) * 0.3 * r, r + layer * 2 * r);
		dGeomSetBody(dCreateSphere(wd->s, r), b);
	}
}

static int world_create(world *wd, const char *scene, const char *spec, const opts *o)
{
	memset(wd, 0, sizeof *wd);
	wd->w = dWorldCreate();
	wd->s = dHashSpaceCreate(0);
	wd->contacts = dJointGroupCreate(0);
	dWorldSetQuickStepNumIterations(wd->w, o->iterations);
	build_scene(wd, scene);
	lk_ode_def def = lk_ode_default_def();
	def.solver = spec;
	def.ode_residual = 0;
	def.whole_world = 1; /* every body has a geom in wd->s, the registered space */
	char err[300];
	if (lk_ode_create(wd->w, &def, &wd->ctx, err, sizeof err) != LK_OK) {
		lk_cli_error("bench ode", "solver %s: %s", spec, err);
		return 0;
	}
	lk_ode_add_space(wd->ctx, wd->s);
	wd->ode_stepper = lk_ode_get_stepper(wd->ctx) != LK_ODE_LCPKIT;
	return 1;
}

static void world_destroy(world *wd)
{
	lk_ode_destroy(wd->ctx);
	if (wd->contacts)
		dJointGroupDestroy(wd->contacts);
	if (wd->s)
		dSpaceDestroy(wd->s);
	if (wd->w)
		dWorldDestroy(wd->w);
}

/* One step (collision not timed); the plugin's statistics and timings of it. */
static int world_step(world *wd, double h, lk_engine_step_stats *st, lk_ode_timing *tm)
{
	dJointGroupEmpty(wd->contacts);
	dSpaceCollide(wd->s, wd, near_cb);
	lk_status rc = lk_ode_world_step(wd->ctx, h);
	if (rc != LK_OK && rc != LK_ERR_UNSUPPORTED) {
		lk_cli_error("bench ode", "%s", lk_ode_error(wd->ctx));
		return 0;
	}
	lk_ode_get_stats(wd->ctx, st);
	lk_ode_get_timing(wd->ctx, tm);
	return 1;
}

typedef struct result {
	char solver[64];
	int bodies, rows, iterations, skipped;
	double step, extract, share, integrate, res_before, res_after;
	lk_cli_spread solve;
	long long fallbacks;
} result;

static int run_scene(const char *scene, const opts *o, FILE *csv)
{
	const double h = 0.01;
	char list[256];
	snprintf(list, sizeof list, "%s", o->solvers);
	char *specs[MAX_SOLVERS];
	const int ns = lk_bench_split(list, specs, MAX_SOLVERS);
	world wd[MAX_SOLVERS];
	memset(wd, 0, sizeof wd);
	const size_t cells = (size_t)ns * (size_t)o->steps;
	double *t_step = calloc(cells, sizeof(double)), *t_solve = calloc(cells, sizeof(double));
	double *t_extract = calloc(cells, sizeof(double)), *t_share = calloc(cells, sizeof(double));
	double *t_integrate = calloc(cells, sizeof(double));
	result res[MAX_SOLVERS];
	memset(res, 0, sizeof res);
	int rc = LK_EXIT_FAIL;
	if (!t_step || !t_solve || !t_extract || !t_share || !t_integrate) {
		lk_cli_error("bench ode", "out of memory");
		goto done;
	}
	for (int k = 0; k < ns; ++k) {
		snprintf(res[k].solver, sizeof res[k].solver, "%s", specs[k]);
		/* ODE's dense LCP stepper only where a dense matrix per island is reasonable */
		if (!strcmp(specs[k], "ode-step") && strcmp(scene, "stack10") != 0) {
			res[k].skipped = 1;
			continue;
		}
		if (!world_create(&wd[k], scene, specs[k], o))
			goto done;
	}
	const int total = o->warmup + o->steps;
	char label[64];
	snprintf(label, sizeof label, "ode %s", scene);
	for (int s = 0; s < total; ++s) {
		lk_cli_progress(label, s, total);
		for (int k = 0; k < ns; ++k) {
			if (res[k].skipped)
				continue;
			lk_engine_step_stats st;
			lk_ode_timing tm;
			if (!world_step(&wd[k], h, &st, &tm))
				goto done;
			if (s < o->warmup)
				continue;
			const size_t at = (size_t)k * (size_t)o->steps + (size_t)(s - o->warmup);
			/* the plugin's timings, on the CPU clock `lcpkit bench` sets (lk_set_stats_clock) */
			t_step[at] = tm.total;
			t_solve[at] = tm.solve;
			t_extract[at] = tm.gather + tm.extract + tm.build;
			t_share[at] = tm.total > 0 ? t_extract[at] / tm.total : 0;
			t_integrate[at] = tm.integrate;
			res[k].rows = st.rows;
			res[k].bodies = st.bodies;
			res[k].iterations = st.iterations;
			res[k].fallbacks = (long long)st.fallback_total;
		}
	}
	lk_cli_progress(label, total, total);
	for (int k = 0; k < ns; ++k) {
		result *r = &res[k];
		if (r->skipped)
			continue;
		/* one more step with ODE's impulses read back, for the accuracy columns of every solver */
		lk_engine_step_stats st;
		lk_ode_timing tm;
		lk_ode_set_ode_residual(wd[k].ctx, 1);
		if (!world_step(&wd[k], h, &st, &tm))
			goto done;
		r->res_before = st.res_before;
		r->res_after = st.res_after;
		r->rows = st.rows;
		r->bodies = st.bodies;
		r->fallbacks = (long long)st.fallback_total;
		const size_t at = (size_t)k * (size_t)o->steps;
		r->step = lk_cli_median(t_step + at, o->steps);
		r->solve = lk_cli_spread_of(t_solve + at, o->steps);
		r->extract = lk_cli_median(t_extract + at, o->steps);
		r->share = lk_cli_median(t_share + at, o->steps);
		r->integrate = lk_cli_median(t_integrate + at, o->steps);
	}
	double base = NAN;
	for (int k = 0; k < ns; ++k)
		if (!res[k].skipped && !strcmp(res[k].solver, "ode-quickstep"))
			base = res[k].step;
	int shown = 0;
	while (shown < ns && res[shown].skipped)
		++shown;
	printf("\n%s (%d bodies, %d rows at the last step of %s)\n", scene, shown < ns ? res[shown].bodies : 0,
	       shown < ns ? res[shown].rows : 0, shown < ns ? res[shown].solver : "-");
	printf("  %-14s %7s %5s %9s %8s %9s %9s %15s %10s %8s %11s %10s %10s %6s\n", "solver", "rows", "iters",
	       "step ms", "vs qs", "solve ms", "min", "q25-q75", "extract ms", "extract", "integrate", "RES before",
	       "RES after", "fallb.");
	for (int k = 0; k < ns; ++k) {
		const result *r = &res[k];
		if (r->skipped) {
			printf("  %-14s   (skipped: dense LCP of a %s island)\n", r->solver, scene);
			fprintf(csv, "%s,%s,,,,,,,,,,,,,skipped\n", scene, r->solver);
			continue;
		}
		char iqr[32];
		printf("  %-14s %7d %5d %9.3f %7.2fx %9.3f %9.3f %15s %10.3f %7.1f%% %8.3f ms %10.3e %10.3e %6lld\n",
		       r->solver, r->rows, r->iterations, 1e3 * r->step, r->step / base, 1e3 * r->solve.median,
		       1e3 * r->solve.min, lk_cli_quartiles(&r->solve, 1e3, iqr, sizeof iqr), 1e3 * r->extract,
		       100 * r->share, 1e3 * r->integrate, r->res_before, r->res_after, r->fallbacks);
		fprintf(csv, "%s,%s,%d,%d,%d,%d,%.6e,%.4f,%.6e,%.6e,%.6e,%.6e,%.6e,%.4f,%.6e,%.6e,%.6e,%lld\n", scene,
		        r->solver, r->bodies, r->rows, r->iterations, o->steps, r->step, r->step / base, r->solve.median,
		        r->solve.min, r->solve.q25, r->solve.q75, r->extract, r->share, r->integrate,
		        r->res_before, r->res_after, r->fallbacks);
	}
	fflush(stdout);
	rc = LK_EXIT_OK;
done:
	for (int k = 0; k < ns; ++k)
		world_destroy(&wd[k]);
	free(t_step);
	free(t_solve);
	free(t_extract);
	free(t_share);
	free(t_integrate);
	return rc;
}

int lk_bench_ode(int argc, char **argv)
{
	opts o;
	memset(&o, 0, sizeof o);
	o.out = "bench-out";
	o.iterations = 20;
	o.steps = -1;
	o.warmup = -1;
	snprintf(o.solvers, sizeof o.solvers, "ode-quickstep,ode-step,pgs,amgs");
	const char *cmd = "bench ode";
	int parsed = lk_bench_engine_parse(cmd, argc, argv, &o, usage, 5);
	if (parsed >= 0)
		return parsed;
	dInitODE2(0);
	dMessageFunction *old_handler = dGetMessageHandler();
	dSetMessageHandler(count_message);
	ode_messages = 0;
	char err[300];
	if (lk_ode_check(err, sizeof err) != LK_OK) {
		lk_cli_error(cmd, "%s", err);
		dCloseODE();
		return LK_EXIT_FAIL;
	}
	lk_bench_csv file = {.name = "bench_ode.csv"};
	if (lk_bench_open_csvs(cmd, o.out, &file, 1) != 0) {
		dCloseODE();
		return LK_EXIT_FAIL;
	}
	FILE *csv = file.f;
	fprintf(csv, "scene,solver,bodies,rows,iterations,timed_steps,step_cpu_s,step_vs_quickstep,solve_s,solve_min_s,"
	             "solve_q25_s,solve_q75_s,extract_s,extract_share,integrate_s,res_before,res_after,fallbacks\n");
	printf("lcpkit bench ode: %d iterations, %d warm-up and %d timed steps per world, thread CPU time: medians, "
	       "the solve's minimum and quartiles; worlds stepped side by side\n",
	       o.iterations, o.warmup, o.steps);
	int rc = LK_EXIT_OK;
	for (int k = 0; k < o.nscenes && rc == LK_EXIT_OK; ++k)
		rc = run_scene(o.scene_names[k], &o, csv);
	lk_bench_close_csvs(&file, 1);
	dSetMessageHandler(old_handler);
	dCloseODE();
	if (ode_messages)
		printf("\nODE printed %ld messages (its dense LCP on degenerate contact sets); not shown\n", ode_messages);
	if (rc == LK_EXIT_OK)
		printf("\nCSV: %s\n", file.path);
	return rc;
}

#else

int lk_bench_ode(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	lk_cli_error("bench ode", "this lcpkit was built without ODE (LCPKIT_WITH_ODE=OFF)");
	return LK_EXIT_FAIL;
}

#endif

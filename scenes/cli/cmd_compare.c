/* lcpkit compare: the same scenes in ODE and Bullet under several solvers, side by side, in numbers,
 * plots and pictures. */
#include "cli.h"
#include "plot.h"
#include "verdict.h"
#include "scene.h"
#include "sim.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ITEMS 32
#define DEFAULT_SCENES "boxstack,pool1"
#define DEFAULT_SOLVERS "own,auto,pgs,amgs,pgs-sm,gsp"
#define FRONTIER_SCENES "boxstack:n=20"
#define FRONTIER_SOLVERS "own,auto,pgs,psor:w=1.3,amgs,gsp,nncg,apgd,mprgp,pgs-sm,pgs:coarse=2,pgs:order=ipp,pgs:coarse=2,tol=1e-4,check=3"
#define FRONTIER_BUDGETS "2,5,10,15,20,40"
#define FRONTIER_SECONDS 20.0
#define MAX_BUDGETS 16
/* --verdict without --scene, --solvers or --time: every scene of the library but the one for scale, the
 * default solver and PGS, 10 s, 3 seeds */
#define VERDICT_SCENES                                                                                           \
	"boxstack:n=20,pyramid,wall,pool1,pool2,stacking,cards,ragdolls,incline,slide,snake,motor-limit,"         \
	"heavy-on-light,pile"
#define VERDICT_SOLVERS "own,auto,pgs"
#define VERDICT_SECONDS 10.0
#define VERDICT_SEEDS 3
#define MAX_SEEDS 16

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit compare [--scene S[,S..]] [--engine ode|bullet|both] [--solvers LIST] [--time SECONDS]\n"
	        "                      [--hz H] [--iters N] [--threads N] [--frames T1,T2,..] [--out DIR] [--no-pictures]\n"
	        "                      [--clock cpu|wall] [--json]\n"
	        "       lcpkit compare --verdict [--seeds N] [--scene ..] [--engine ..] [--solvers ..] [--time ..]\n"
	        "       lcpkit compare --frontier [--budgets B1,B2,..] [--scene ..] [--engine ..] [--solvers ..] [--time ..]\n\n"
	        "Runs every scene x engine x solver from the same initial state, each solver with the same work\n"
	        "budget per step, and prints one table: solver and step time per step (median), work spent per step\n"
	        "(median, in PGS sweep-equivalents), the steps the engine's own solver made instead (fallbacks: an\n"
	        "lcpkit solve that stopped on a guard), RES after the solve (median, max), penetration (deepest, and the\n"
	        "median over the last second: at rest), joint error (largest over the last second), on the incline the\n"
	        "error of the sliding boxes' acceleration against g (sin a - mu cos a) and the creep of the boxes that\n"
	        "should rest, kinetic energy at the end, drift of the top body and whether and when a stack fell.\n"
	        "Writes report.md, summary.csv, one CSV per run and PNG plots and pictures to DIR (default\n"
	        "lcpkit-report/), named by scene (boxstack-...; by spec, boxstack_n_15-..., where two scenes of the\n"
	        "run share a name).\n\n"
	        "--frontier runs each scene x engine x solver at every budget of --budgets and records solver time\n"
	        "against outcome (stacks: seconds standing; jointed scenes: joint error; the incline: acceleration\n"
	        "error; others: penetration at rest): DIR/frontier.csv, frontier.json and one PNG per scene and engine\n"
	        "(frontier-SCENE-ENGINE.png) with the Pareto frontier over all points; for stacks a second one,\n"
	        "frontier-SCENE-ENGINE-drift.png, of the top's largest drift in the runs that stood, which tells a still\n"
	        "stack from a swaying one; and for each lcpkit solver a line: whether more work was never worse, each\n"
	        "budget's outcome level with (within the outcome's resolution, and with --seeds within the larger\n"
	        "spread of the two budgets' runs) or better than the next smaller one's, in every scene and engine.\n"
	        "With --seeds the outcomes are the medians over the seeds. Without --scene, --solvers and\n"
	        "--time it runs %s with %s for %g s, in about 20 s on two cores.\n\n"
	        "  --scene     scene specs NAME[:key=value,...] (default %s); scenes:",
	        FRONTIER_SCENES, FRONTIER_SOLVERS, FRONTIER_SECONDS, DEFAULT_SCENES);
	for (const char *const *n = lk_scene_names(); *n; ++n)
		fprintf(f, " %s", *n);
	fprintf(f, "\n  --engine    ode, bullet or both (default both)\n"
	           "  --solvers   lcpkit specs and engines' own solvers (default %s; 'own' is each engine's\n"
	           "              default:",
	        DEFAULT_SOLVERS);
	for (int e = 0; e < LK_ENGINE_COUNT; ++e)
		fprintf(f, "%s %s", e ? "," : "", lk_engine_default_solver((lk_engine)e));
	char names[200];
	fprintf(f, ")\n              engines' own: %s\n", lk_engine_solver_list(LK_ENGINE_COUNT, names, sizeof names));
	fprintf(f, "  --time      simulated seconds per run (default: 4 for stacks, 3 for pools; 20 with --frontier)\n"
	           "  --hz        steps per second (default 60)\n"
	           "  --iters     work budget per step in sweep-equivalents for every solver (the engines' own: N\n"
	           "              iterations; default 20); a spec's own iters= or budget= takes precedence\n"
	           "  --threads   sweeps of every lcpkit solver on N threads (the part order: the same result run after\n"
	           "              run; a spec's own threads= or order=colour takes precedence)\n"
	           "  --frames    times of the side-by-side pictures (default 1,2,4,10 clipped to --time)\n"
	           "  --frontier  the stability frontier: outcome against solver time over a series of budgets\n"
	           "  --budgets   the budgets of --frontier (default %s)\n"
	           "  --verdict   each solver against the engine's own at the same budget, outcome by outcome: better,\n"
	           "              level or worse where the medians over the seeds differ by more than the outcome's\n"
	           "              resolution and the runs' spread, and the solver time's ratio; without --scene,\n"
	           "              --solvers and --time every scene but bigpool with own,auto,pgs for 10 s\n"
	           "  --seeds     runs of each scene with seed=0..N-1, sideways shifts of 1e-4 of a body's size\n"
	           "              (default 3 with --verdict, else 1); the table shows the medians\n"
	           "  --clock     the clock of the solver and step times: wall (default, what a user waits) or cpu (the\n"
	           "              CPU time of the thread that steps the run: the runs go side by side on the cores, and\n"
	           "              on a shared machine it is the steadier measure)\n"
	           "  --json      print the table as JSON on stdout\n", FRONTIER_BUDGETS);
}

/* Splits a comma list of specs whose own parameters also use commas: a piece with '=' but no ':' belongs to
 * the spec before it ("boxstack:n=20,mu=0.3,pool1" -> "boxstack:n=20,mu=0.3" and "pool1"). */
static int split_specs(const char *list, char out[][160], int max)
{
	int n = 0;
	const char *s = list;
	while (*s) {
		size_t len = strcspn(s, ",");
		int continues = n > 0 && memchr(s, '=', len) && !memchr(s, ':', len);
		if (continues) {
			size_t used = strlen(out[n - 1]);
			snprintf(out[n - 1] + used, 160 - used, ",%.*s", (int)len, s);
		} else if (len > 0) {
			if (n >= max)
				return -1;
			snprintf(out[n++], 160, "%.*s", (int)len, s);
		}
		s += len;
		if (*s == ',')
			++s;
	}
	return n;
}

typedef struct run {
	const lk_scene *scene;
	const char *stem; /* the scene's part of the run's file names (scene_stems) */
	int scene_index;
	lk_engine engine;
	char solver[160];
	int budget; /* the work budget of every step (--iters, or one of --budgets) */
	int steps;
	/* per step */
	double *solve_ms, *step_ms, *res, *pen, *energy, *top_z, *top_drift_at, *work, *joint_err;
	int *iters;
	/* summary; NAN where the scene has no such thing */
	double solve_ms_mean; /* the solver time over the run per step: what a budget kept as a mean costs */
	double solve_ms_median, step_ms_median, res_median, res_max, max_penetration, energy_end, top_drift;
	double top_drift_max; /* stacks: the top's largest horizontal displacement while the stack stood */
	double iterations, work_median;
	double pen_rest;      /* median over the last second of each step's deepest penetration */
	double joint_err_max; /* largest joint error over the last second */
	double accel_err;     /* incline: worst relative error of the sliding boxes' acceleration */
	double creep;         /* incline: the farthest a box that should rest has moved */
	double standing;      /* stacks: seconds until the stack fell, the run's time if it never did */
	double budget_value;  /* budget, as a number for the columns */
	double outcome;       /* --frontier: the value its plot shows */
	int pareto;           /* --frontier: on the Pareto frontier of its scene and engine */
	int fell;
	double fell_at;
	double fallbacks;       /* steps the engine's own solver made instead (an lcpkit solve stopped on a guard) */
	int seed;             /* the scene's seed (scene.h): 0 the scene as built */
	/* --verdict: each outcome against the engine's own solver's at the same budget, and the solver time's ratio */
	int has_verdict;
	lk_verdict verdict[LK_OUTCOME_COUNT];
	lk_verdict_sign overall;
	double time_ratio;
	lk_pose *frames; /* nframes x nbodies */
	double *conv_res; /* residual against work at the chosen step */
	double *conv_work; /* in PGS sweeps: row updates / rows */
	int conv_n;
	char csv[512];
} run;

/* ------------------------------------------------------------------------------------------ incline */

/* The incline's boxes against Coulomb's law: a box whose friction coefficient against the slope (the one the
 * engine applies, which combines the box's and the slope's) is below tan(angle) should slide down with
 * g (sin a - mu cos a); the others should not move. */
typedef struct incline_track {
	int slope;      /* the slope's body; -1: the scene is no incline */
	double axis[3]; /* the slope's long axis (its body x), unit */
	double down[3]; /* down the slope, unit */
	double normal[3]; /* the slope's normal (its body z), unit */
	int nbox, steps;
	int *box;       /* per box: scene body */
	double *expect; /* per box: expected acceleration down the slope; NAN: it should rest */
	double *p0;     /* per box: start position */
	double *t, *v;  /* per box and step: time and velocity down the slope while the box is on the slope */
	int *n;
} incline_track;

static void incline_free(incline_track *it)
{
	free(it->box);
	free(it->expect);
	free(it->p0);
	free(it->t);
	free(it->v);
	free(it->n);
}

/* 0, or -1 out of memory. */
static int incline_begin(incline_track *it, const lk_sim *sim, const lk_scene *sc, int steps)
{
	memset(it, 0, sizeof *it);
	it->slope = -1;
	if (strcmp(sc->name, "incline") != 0)
		return 0;
	for (int i = 0; i < sc->nbodies && it->slope < 0; ++i)
		if (sc->bodies[i].shape == LK_SHAPE_BOX && sc->bodies[i].mass <= 0)
			it->slope = i;
	if (it->slope < 0)
		return 0;
	const double *q = sc->bodies[it->slope].quat;
	it->axis[0] = 1 - 2 * (q[2] * q[2] + q[3] * q[3]);
	it->axis[1] = 2 * (q[1] * q[2] + q[0] * q[3]);
	it->axis[2] = 2 * (q[1] * q[3] - q[0] * q[2]);
	it->normal[0] = 2 * (q[1] * q[3] + q[0] * q[2]);
	it->normal[1] = 2 * (q[2] * q[3] - q[0] * q[1]);
	it->normal[2] = 1 - 2 * (q[1] * q[1] + q[2] * q[2]);
	double sgn = it->axis[2] > 0 ? -1 : 1;
	for (int k = 0; k < 3; ++k)
		it->down[k] = sgn * it->axis[k];
	double sin_a = -it->down[2], cos_a = hypot(it->down[0], it->down[1]);
	double g = sqrt(sc->gravity[0] * sc->gravity[0] + sc->gravity[1] * sc->gravity[1] + sc->gravity[2] * sc->gravity[2]);
	it->steps = steps;
	it->box = malloc(sizeof(int) * (size_t)sc->nbodies);
	it->expect = malloc(sizeof(double) * (size_t)sc->nbodies);
	it->p0 = malloc(sizeof(double) * 3 * (size_t)sc->nbodies);
	it->t = malloc(sizeof(double) * (size_t)sc->nbodies * (size_t)steps);
	it->v = malloc(sizeof(double) * (size_t)sc->nbodies * (size_t)steps);
	it->n = calloc((size_t)sc->nbodies, sizeof(int));
	if (!it->box || !it->expect || !it->p0 || !it->t || !it->v || !it->n)
		return -1;
	for (int i = 0; i < sc->nbodies; ++i) {
		if (sc->bodies[i].mass <= 0)
			continue;
		double mu = lk_sim_pair_friction(sim, i, it->slope);
		it->box[it->nbox] = i;
		it->expect[it->nbox] = mu * cos_a < sin_a ? g * (sin_a - mu * cos_a) : NAN;
		memcpy(&it->p0[3 * it->nbox], sc->bodies[i].pos, 3 * sizeof(double));
		++it->nbox;
	}
	return 0;
}

/* Records the boxes' velocities down the slope while they are wholly on it (past its end they tip off). */
static void incline_sample(incline_track *it, const lk_sim *sim, const lk_scene *sc, double t)
{
	if (it->slope < 0)
		return;
	const lk_scene_body *sl = &sc->bodies[it->slope];
	for (int b = 0; b < it->nbox; ++b) {
		const lk_scene_body *bd = &sc->bodies[it->box[b]];
		lk_pose p;
		double v[3], w[3], along = 0, vd = 0;
		lk_sim_pose(sim, it->box[b], &p);
		lk_sim_velocity(sim, it->box[b], v, w);
		for (int k = 0; k < 3; ++k) {
			along += (p.pos[k] - sl->pos[k]) * it->axis[k];
			vd += v[k] * it->down[k];
		}
		if (fabs(along) > sl->size[0] - fmax(bd->size[0], bd->size[2]))
			continue;
		int at = b * it->steps + it->n[b]++;
		it->t[at] = t;
		it->v[at] = vd;
	}
}

/* The least-squares slope of y against x. */
static double fit_slope(const double *x, const double *y, int n)
{
	double mx = 0, my = 0, sxy = 0, sxx = 0;
	for (int i = 0; i < n; ++i) {
		mx += x[i] / n;
		my += y[i] / n;
	}
	for (int i = 0; i < n; ++i) {
		sxy += (x[i] - mx) * (y[i] - my);
		sxx += (x[i] - mx) * (x[i] - mx);
	}
	return sxx > 0 ? sxy / sxx : NAN;
}

/* The sliders' acceleration, a line fitted to their velocity over the second half of their time on the
 * slope (the first holds the landing), against the expected one; and how far the resters moved along the
 * slope (their settling into it is penetration, not creep). */
static void incline_finish(const incline_track *it, const lk_sim *sim, double *accel_err, double *creep)
{
	*accel_err = *creep = NAN;
	for (int b = 0; it->slope >= 0 && b < it->nbox; ++b) {
		if (isnan(it->expect[b])) {
			lk_pose p;
			lk_sim_pose(sim, it->box[b], &p);
			double d[3], dn = 0;
			for (int k = 0; k < 3; ++k) {
				d[k] = p.pos[k] - it->p0[3 * b + k];
				dn += d[k] * it->normal[k];
			}
			for (int k = 0; k < 3; ++k)
				d[k] -= dn * it->normal[k];
			double moved = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
			*creep = isnan(*creep) ? moved : fmax(*creep, moved);
			continue;
		}
		int half = it->n[b] / 2, m = it->n[b] - half;
		double a = m >= 3 ? fit_slope(&it->t[b * it->steps + half], &it->v[b * it->steps + half], m) : NAN;
		double e = fabs(a - it->expect[b]) / it->expect[b];
		/* a slider never seen on the slope long enough counts as wholly wrong */
		if (isnan(e))
			e = INFINITY;
		*accel_err = isnan(*accel_err) ? e : fmax(*accel_err, e);
	}
}

/* ---------------------------------------------------------------------------------------------- runs */

/* The median of the last `last` values of v (destroys their order). */
static double median_tail(double *v, int n, int last)
{
	if (last > n)
		last = n;
	return lk_cli_median(v + n - last, last);
}

/* A spec as part of a file name: ':', ',', '=' and '/' as '_'. */
static void file_safe(char *s)
{
	for (; *s; ++s)
		if (*s == ':' || *s == ',' || *s == '=' || *s == '/')
			*s = '_';
}

/* Runs one scene x engine x solver at its budget. conv_step 0: no long solve of a step's problem;
 * csv_suffix goes into the run's CSV name. */
static int run_one(run *r, const lk_scene *scene, double seconds, double h, const double *frame_t, int nframes,
                   int conv_step, const char *outdir, const char *csv_suffix, char *err, size_t esz)
{
	lk_sim_def def = {scene, r->engine, r->solver, r->budget, h, 0};
	lk_sim *sim = NULL;
	if (lk_sim_create(&def, &sim, err, esz) != LK_OK)
		return -1;
	int steps = (int)lround(seconds / h);
	if (steps < 1)
		steps = 1;
	r->steps = steps;
	r->budget_value = r->budget;
	r->solve_ms = calloc((size_t)steps, sizeof(double));
	r->step_ms = calloc((size_t)steps, sizeof(double));
	r->res = calloc((size_t)steps, sizeof(double));
	r->pen = calloc((size_t)steps, sizeof(double));
	r->energy = calloc((size_t)steps, sizeof(double));
	r->top_z = calloc((size_t)steps, sizeof(double));
	r->top_drift_at = calloc((size_t)steps, sizeof(double));
	r->work = calloc((size_t)steps, sizeof(double));
	r->joint_err = calloc((size_t)steps, sizeof(double));
	r->iters = calloc((size_t)steps, sizeof(int));
	r->frames = calloc((size_t)(nframes > 0 ? nframes : 1) * (size_t)scene->nbodies, sizeof(lk_pose));
	incline_track slope;
	int slope_ok = incline_begin(&slope, sim, scene, steps) == 0;
	if (!r->solve_ms || !r->step_ms || !r->res || !r->pen || !r->energy || !r->top_z || !r->top_drift_at || !r->work ||
	    !r->joint_err || !r->iters || !r->frames || !slope_ok) {
		snprintf(err, esz, "out of memory");
		incline_free(&slope);
		lk_sim_destroy(sim);
		return -1;
	}
	lk_pose top0;
	if (scene->stack_top >= 0)
		lk_sim_pose(sim, scene->stack_top, &top0);
	int frame = 0;
	while (frame < nframes && frame_t[frame] <= 0) {
		for (int b = 0; b < scene->nbodies; ++b)
			lk_sim_pose(sim, b, &r->frames[(size_t)frame * scene->nbodies + b]);
		++frame;
	}
	r->fell = 0;
	r->top_drift_max = 0.0;
	r->fell_at = -1;
	char label[200];
	snprintf(label, sizeof label, "%s/%s/%s@%d", scene->name, lk_engine_name(r->engine), r->solver, r->budget);
	for (int k = 0; k < steps; ++k) {
		lk_engine_step_stats st;
		memset(&st, 0, sizeof st);
		if (k + 1 == conv_step)
			lk_sim_capture_next(sim);
		if (lk_sim_step(sim, &st) != LK_OK) {
			snprintf(err, esz, "step %d failed", k);
			incline_free(&slope);
			lk_sim_destroy(sim);
			return -1;
		}
		r->solve_ms[k] = 1e3 * st.solve_seconds;
		r->step_ms[k] = 1e3 * st.step_seconds;
		r->res[k] = st.res_after;
		r->iters[k] = st.iterations;
		r->work[k] = st.work;
		r->pen[k] = lk_sim_max_penetration(sim);
		r->energy[k] = lk_sim_kinetic_energy(sim);
		for (int j = 0; j < scene->njoints; ++j)
			r->joint_err[k] = fmax(r->joint_err[k], lk_sim_joint_error(sim, j));
		r->fallbacks = (double)st.fallback_total;
		double t = (k + 1) * h;
		incline_sample(&slope, sim, scene, t);
		if (scene->stack_top >= 0) {
			lk_pose p;
			lk_sim_pose(sim, scene->stack_top, &p);
			r->top_z[k] = p.pos[2];
			r->top_drift_at[k] = hypot(p.pos[0] - top0.pos[0], p.pos[1] - top0.pos[1]);
			if (!r->fell && p.pos[2] < scene->stack_top_height - scene->fall_drop) {
				r->fell = 1;
				r->fell_at = t;
			}
			/* the end's drift is where a swaying stack happens to be then; its largest tells the sway */
			if (!r->fell)
				r->top_drift_max = fmax(r->top_drift_max, r->top_drift_at[k]);
			if (k == steps - 1)
				r->top_drift = r->top_drift_at[k];
		}
		while (frame < nframes && frame_t[frame] <= t + 1e-9) {
			for (int b = 0; b < scene->nbodies; ++b)
				lk_sim_pose(sim, b, &r->frames[(size_t)frame * scene->nbodies + b]);
			++frame;
		}
		if (k + 1 == conv_step) {
			/* residual against iteration on this step's own problem, one long solve (seed 000 Fig. 3-5) */
			lk_solver_config cfg;
			char e2[200];
			/* an engine's own solver has no lcpkit configuration to replay */
			lk_problem *p = lk_config_parse(r->solver, &cfg, e2, sizeof e2) == LK_OK ? lk_sim_take_captured(sim) : NULL;
			if (p) {
				/* every method gets the work of 200 PGS sweeps, the unit in which Silcowitz et al. measure
				 * PGS-SM's time: a budget of 200 sweep-equivalents, whatever the spec's own limits */
				const int cap = 4096;
				cfg.budget = 200;
				cfg.max_iterations = 1000000;
				cfg.tol_abs = 0;
				lk_history h2 = {calloc(cap, sizeof(lk_history_entry)), cap, 0};
				int rows = lk_problem_row_count(p);
				if (h2.entries && rows > 0 && lk_solve(p, &cfg, NULL, &h2) == LK_OK) {
					r->conv_res = calloc((size_t)h2.count, sizeof(double));
					r->conv_work = calloc((size_t)h2.count, sizeof(double));
					if (r->conv_res && r->conv_work) {
						double best = INFINITY;
						int n = 0;
						for (int i = 0; i < h2.count; ++i) {
							double work = (double)h2.entries[i].row_updates / rows;
							if (work > 200.0 + 1e-9)
								break;
							/* PGS-SM returns the best iterate it has seen: plot what it would return */
							double res = h2.entries[i].res;
							if (cfg.method == LK_METHOD_PGS_SM && cfg.pgs_sm.best_iterate)
								res = best = fmin(best, res);
							r->conv_res[n] = res;
							r->conv_work[n++] = work;
						}
						r->conv_n = n;
					}
				}
				free(h2.entries);
				lk_problem_destroy(p);
			}
		}
		if ((k & 15) == 0 || k == steps - 1)
			lk_cli_progress(label, k + 1, steps);
	}
	/* pictures of times beyond the run show the final state */
	while (frame < nframes) {
		for (int b = 0; b < scene->nbodies; ++b)
			lk_sim_pose(sim, b, &r->frames[(size_t)frame * scene->nbodies + b]);
		++frame;
	}
	incline_finish(&slope, sim, &r->accel_err, &r->creep);
	incline_free(&slope);
	lk_sim_destroy(sim);

	double *tmp = malloc(sizeof(double) * (size_t)steps);
	if (!tmp) {
		snprintf(err, esz, "out of memory");
		return -1;
	}
#define MEDIAN(field, out)                                     \
	do {                                                       \
		memcpy(tmp, r->field, sizeof(double) * (size_t)steps); \
		out = lk_cli_median(tmp, steps);                       \
	} while (0)
	MEDIAN(solve_ms, r->solve_ms_median);
	r->solve_ms_mean = 0.0;
	for (int k = 0; k < steps; ++k)
		r->solve_ms_mean += r->solve_ms[k] / steps;
	MEDIAN(step_ms, r->step_ms_median);
	MEDIAN(res, r->res_median);
	MEDIAN(work, r->work_median);
	for (int k = 0; k < steps; ++k)
		tmp[k] = r->iters[k];
	r->iterations = lk_cli_median(tmp, steps);
	/* "at rest" and "at the end": the last second of the run, or all of a shorter one */
	int last = (int)lround(1.0 / h);
	memcpy(tmp, r->pen, sizeof(double) * (size_t)steps);
	r->pen_rest = median_tail(tmp, steps, last);
	free(tmp);
	r->res_max = 0;
	r->max_penetration = 0;
	r->joint_err_max = scene->njoints > 0 ? 0 : NAN;
	for (int k = 0; k < steps; ++k) {
		r->res_max = fmax(r->res_max, r->res[k]);
		r->max_penetration = fmax(r->max_penetration, r->pen[k]);
		if (scene->njoints > 0 && k >= steps - last)
			r->joint_err_max = fmax(r->joint_err_max, r->joint_err[k]);
	}
	r->energy_end = r->energy[steps - 1];
	if (scene->stack_top < 0)
		r->top_drift = r->top_drift_max = NAN;
	r->standing = scene->stack_top < 0 ? NAN : r->fell ? r->fell_at : steps * h;

	/* the run's CSV */
	snprintf(r->csv, sizeof r->csv, "%s/%s-%s-%s%s.csv", outdir, r->stem, lk_engine_name(r->engine), r->solver,
	         csv_suffix);
	file_safe(r->csv + strlen(outdir) + 1);
	FILE *f = fopen(r->csv, "w");
	if (!f) {
		snprintf(err, esz, "cannot write %s", r->csv);
		return -1;
	}
	fprintf(f, "step,time,solver_ms,step_ms,iterations,res,max_penetration,kinetic_energy,top_height,work,"
	           "joint_error,top_drift\n");
	for (int k = 0; k < steps; ++k)
		fprintf(f, "%d,%.6f,%.6f,%.6f,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", k + 1, (k + 1) * h, r->solve_ms[k],
		        r->step_ms[k], r->iters[k], r->res[k], r->pen[k], r->energy[k], r->top_z[k], r->work[k],
		        r->joint_err[k], r->top_drift_at[k]);
	if (fclose(f) != 0) {
		snprintf(err, esz, "cannot write %s", r->csv);
		return -1;
	}
	return 0;
}

static void free_run(run *r)
{
	free(r->solve_ms);
	free(r->step_ms);
	free(r->res);
	free(r->pen);
	free(r->energy);
	free(r->top_z);
	free(r->top_drift_at);
	free(r->work);
	free(r->joint_err);
	free(r->iters);
	free(r->frames);
	free(r->conv_res);
	free(r->conv_work);
}

/* A number column of the tables, summary.csv and the JSON; NAN reads '-' in a table, empty in a CSV and null
 * in the JSON. */
typedef struct column {
	const char *head; /* in the tables; NULL: in the CSV and the JSON only */
	const char *key;  /* in the CSV and the JSON */
	int width;
	const char *fmt;  /* in the tables */
	size_t at;        /* offsetof(run, the double) */
} column;

#define COL(head, key, width, fmt, field) {head, key, width, fmt, offsetof(run, field)}

static const column compare_cols[] = {
	COL(NULL, "budget", 0, NULL, budget_value),
	COL("solver ms", "solver_ms_median", 9, "%.3f", solve_ms_median),
	COL("step ms", "step_ms_median", 9, "%.3f", step_ms_median),
	COL("work", "work", 5, "%.1f", work_median),
	COL(NULL, "iterations", 0, NULL, iterations),
	COL("fallbacks", "fallbacks", 9, "%.0f", fallbacks),
	COL("RES median", "res_median", 10, "%.2e", res_median),
	COL("RES max", "res_max", 10, "%.2e", res_max),
	COL("max pen. m", "max_penetration", 10, "%.4f", max_penetration),
	COL("pen. rest m", "penetration_rest", 11, "%.4f", pen_rest),
	COL("joint err m", "joint_error", 11, "%.2e", joint_err_max),
	COL("accel err", "accel_error", 9, "%.3f", accel_err),
	COL("creep m", "creep", 9, "%.2e", creep),
	COL("KE end J", "kinetic_energy_end", 10, "%.3g", energy_end),
	COL("top drift m", "top_drift", 11, "%.4f", top_drift),
	COL("drift max m", "top_drift_max", 11, "%.4f", top_drift_max),
};

static const column frontier_cols[] = {
	COL("budget", "budget", 6, "%.0f", budget_value),
	COL("work", "work", 5, "%.1f", work_median),
	COL(NULL, "iterations", 0, NULL, iterations),
	COL("solver ms", "solver_ms_median", 9, "%.3f", solve_ms_median),
	COL(NULL, "step_ms_median", 0, NULL, step_ms_median),
	COL("fallbacks", "fallbacks", 9, "%.0f", fallbacks),
	COL("standing s", "seconds_standing", 10, "%.2f", standing),
	COL("top drift m", "top_drift", 11, "%.4f", top_drift),
	COL("drift max m", "top_drift_max", 11, "%.4f", top_drift_max),
	COL("pen. rest m", "penetration_rest", 11, "%.4f", pen_rest),
	COL(NULL, "max_penetration", 0, NULL, max_penetration),
	COL("joint err m", "joint_error", 11, "%.2e", joint_err_max),
	COL("accel err", "accel_error", 9, "%.3f", accel_err),
	COL(NULL, "creep", 0, NULL, creep),
};

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

static double column_value(const run *r, const column *c)
{
	return *(const double *)((const char *)r + c->at);
}

/* The text of the last column: whether and when a stack fell, or whether a point is on the frontier. */
typedef void (*tail_fn)(const run *r, char *buf, size_t n);

static void tail_fell(const run *r, char *buf, size_t n)
{
	if (r->scene->stack_top < 0)
		snprintf(buf, n, "-");
	else if (r->fell)
		snprintf(buf, n, "at %.2f s", r->fell_at);
	else
		snprintf(buf, n, "no");
}

/* The verdict of a run against the engine's own solver, in words: "worse: pen. rest, KE end", "better: ...",
 * "level"; "-" for the engine's own and for a run without a verdict. */
static void verdict_words(const run *r, char *buf, size_t n)
{
	if (!r->has_verdict) {
		snprintf(buf, n, "-");
		return;
	}
	if (r->overall == LK_VERDICT_LEVEL) {
		snprintf(buf, n, "level");
		return;
	}
	size_t used = (size_t)snprintf(buf, n, "%s:", r->overall == LK_VERDICT_WORSE ? "worse" : "better");
	for (int o = 0; o < LK_OUTCOME_COUNT && used < n; ++o)
		if (r->verdict[o].sign == r->overall)
			used += (size_t)snprintf(buf + used, n - used, " %s,", lk_outcome_head((lk_outcome)o));
	if (used < n)
		buf[used - 1] = '\0';
}

/* The compare table's last two columns (a tab between them, print_table): whether and when a stack fell, and
 * the verdict against the engine's own. */
static void tail_fell_verdict(const run *r, char *buf, size_t n)
{
	char fell[32], v[160];
	tail_fell(r, fell, sizeof fell);
	verdict_words(r, v, sizeof v);
	snprintf(buf, n, "%s\t%s", fell, v);
}

static void tail_pareto(const run *r, char *buf, size_t n)
{
	snprintf(buf, n, "%s", r->pareto ? "yes" : "");
}

/* The tail's columns, separated by tabs: cells of a Markdown row, or in a plain table each but the last padded to
 * 9 characters. */
static void tail_cells(FILE *f, const char *t, int markdown)
{
	for (;;) {
		const char *tab = strchr(t, '\t');
		if (!tab) {
			fprintf(f, "%s", t);
			return;
		}
		fprintf(f, markdown ? "%.*s | " : "%-9.*s ", (int)(tab - t), t);
		t = tab + 1;
	}
}

/* The runs as a table, plain (columns padded) or Markdown: scene, engine, solver, the columns with a
 * heading, and the tail columns. */
static void print_table(FILE *f, const run *runs, int nruns, const column *cols, int ncols, const char *tail_head,
                        tail_fn tail, int markdown)
{
	int sw = 14, vw = 13; /* column widths that fit the longest scene and solver spec */
	for (int i = 0; i < nruns; ++i) {
		sw = (int)fmax(sw, (double)strlen(runs[i].scene->spec));
		vw = (int)fmax(vw, (double)strlen(runs[i].solver));
	}
	if (markdown) {
		fprintf(f, "| scene | engine | solver |");
		for (int c = 0; c < ncols; ++c)
			if (cols[c].head)
				fprintf(f, " %s |", cols[c].head);
		fprintf(f, " ");
		tail_cells(f, tail_head, 1);
		fprintf(f, " |\n|---|---|---|");
		for (int c = 0; c < ncols; ++c)
			if (cols[c].head)
				fprintf(f, "---:|");
		for (const char *t = tail_head; (t = strchr(t, '\t')); ++t)
			fprintf(f, "---|");
		fprintf(f, "---|\n");
	} else {
		fprintf(f, "%-*s %-7s %-*s", sw, "scene", "engine", vw, "solver");
		for (int c = 0; c < ncols; ++c)
			if (cols[c].head)
				fprintf(f, " %*s", cols[c].width, cols[c].head);
		fprintf(f, " ");
		tail_cells(f, tail_head, 0);
		fprintf(f, "\n");
	}
	for (int i = 0; i < nruns; ++i) {
		const run *r = &runs[i];
		if (markdown)
			fprintf(f, "| %s | %s | %s |", r->scene->spec, lk_engine_name(r->engine), r->solver);
		else
			fprintf(f, "%-*s %-7s %-*s", sw, r->scene->spec, lk_engine_name(r->engine), vw, r->solver);
		for (int c = 0; c < ncols; ++c) {
			if (!cols[c].head)
				continue;
			char v[32] = "-";
			double x = column_value(r, &cols[c]);
			if (!isnan(x))
				snprintf(v, sizeof v, cols[c].fmt, x);
			if (markdown)
				fprintf(f, " %s |", v);
			else
				fprintf(f, " %*s", cols[c].width, v);
		}
		char t[256];
		tail(r, t, sizeof t);
		fprintf(f, " ");
		tail_cells(f, t, markdown);
		fprintf(f, markdown ? " |\n" : "\n");
	}
}

/* The runs as CSV, one row each: scene, engine, solver, every column, fell_at and the tail. */
static int write_csv(const char *path, const run *runs, int nruns, const column *cols, int ncols,
                     const char *tail_key, tail_fn tail)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "scene,engine,solver");
	for (int c = 0; c < ncols; ++c)
		fprintf(f, ",%s", cols[c].key);
	fprintf(f, ",fell_at,%s\n", tail_key);
	for (int i = 0; i < nruns; ++i) {
		const run *r = &runs[i];
		/* specs hold commas: quoted */
		fprintf(f, "\"%s\",%s,\"%s\"", r->scene->spec, lk_engine_name(r->engine), r->solver);
		for (int c = 0; c < ncols; ++c) {
			double x = column_value(r, &cols[c]);
			if (isnan(x))
				fprintf(f, ",");
			else
				fprintf(f, ",%.9g", x);
		}
		char t[64];
		tail(r, t, sizeof t);
		if (r->fell)
			fprintf(f, ",%.9g,%s\n", r->fell_at, t);
		else
			fprintf(f, ",,%s\n", t);
	}
	return fclose(f) == 0 ? 0 : -1;
}

static void print_json(FILE *f, const run *runs, int nruns, const column *cols, int ncols, const char *outdir,
                       int frontier)
{
	fprintf(f, "{\"out\": ");
	lk_cli_json_string(f, outdir);
	fprintf(f, ", \"%s\": [", frontier ? "points" : "runs");
	for (int i = 0; i < nruns; ++i) {
		const run *r = &runs[i];
		fprintf(f, "%s\n  {\"scene\": ", i ? "," : "");
		lk_cli_json_string(f, r->scene->spec);
		fprintf(f, ", \"engine\": ");
		lk_cli_json_string(f, lk_engine_name(r->engine));
		fprintf(f, ", \"solver\": ");
		lk_cli_json_string(f, r->solver);
		fprintf(f, ", \"steps\": %d", r->steps);
		for (int c = 0; c < ncols; ++c) {
			fprintf(f, ", \"%s\": ", cols[c].key);
			lk_cli_json_number(f, column_value(r, &cols[c]));
		}
		fprintf(f, ", \"fell\": %s, \"fell_at\": ", r->fell ? "true" : "false");
		lk_cli_json_number(f, r->fell ? r->fell_at : NAN);
		if (frontier)
			fprintf(f, ", \"pareto\": %s", r->pareto ? "true" : "false");
		if (r->has_verdict) {
			static const char *const sign[] = {"\"worse\"", "\"level\"", "\"better\""};
			fprintf(f, ", \"verdict\": {\"overall\": %s, \"time_ratio\": ", sign[r->overall + 1]);
			lk_cli_json_number(f, r->time_ratio);
			for (int o = 0; o < LK_OUTCOME_COUNT; ++o)
				if (r->verdict[o].compared)
					fprintf(f, ", \"%s\": %s", lk_outcome_key((lk_outcome)o), sign[r->verdict[o].sign + 1]);
			fprintf(f, "}");
		}
		fprintf(f, ", \"csv\": ");
		lk_cli_json_string(f, r->csv);
		fprintf(f, "}");
	}
	fprintf(f, "\n]}\n");
}

static int parse_times(const char *s, double *t, int max)
{
	int n = 0;
	while (*s && n < max) {
		char *end;
		double v = strtod(s, &end);
		if (end == s || !isfinite(v) || v < 0)
			return -1;
		t[n++] = v;
		s = end;
		if (*s == ',')
			++s;
		else if (*s)
			return -1;
	}
	return n;
}

/* ------------------------------------------------------------------------------------------- stages */

/* The command line; numbers are range-checked, names are checked by plan_runs. */
typedef struct compare_opts {
	const char *scene_list, *solver_list, *engine_arg, *outdir, *frames_arg;
	double seconds; /* simulated time per run; 0: each scene's default */
	double hz;
	int iters, json, pictures;
	int frontier;        /* --frontier: every run at every budget, outcome against solver time */
	const char *budgets_arg;
	int iters_given;
	int threads;         /* --threads: every lcpkit solver's sweeps on this many threads (0: as its spec says) */
	int cpu_clock;       /* --clock cpu: solver and step times in thread CPU time */
	int seeds;           /* --seeds: runs of each scene, seeds 0 .. seeds - 1 (scene.h) */
	int verdict;         /* --verdict: every solver against the engine's own, outcome by outcome */
} compare_opts;

/* The runs the options ask for, scene by scene (scene x engine x solver), and what they share. */
typedef struct compare_plan {
	int engines[LK_ENGINE_COUNT], nengines;
	char scene_specs[MAX_ITEMS][160], solver_specs[MAX_ITEMS][160];
	int nscenes, nsolvers;
	lk_scene *scenes[MAX_ITEMS];
	char stems[MAX_ITEMS][160]; /* scene_stems */
	run *runs;
	int nruns;           /* planned */
	int ndone;           /* finished, in order: fewer than nruns after a run failed */
	double frame_t[16];  /* --frames */
	int nframes;         /* 0: each scene's default picture times */
	double h;
	int budgets[MAX_BUDGETS], nbudgets; /* --frontier's budgets; else --iters alone */
	/* --seeds N > 1: each run again on its scene with seed=1 .. N-1; runs[i]'s are extra[i (N - 1) + k - 1] */
	int nseeds;
	lk_scene *seeded[MAX_ITEMS][MAX_SEEDS];
	run *extra;
	int nextra_done;
} compare_plan;

/* The scenes' parts of the output files' names: a scene's name (boxstack), or where two scenes of the run
 * share it (boxstack:n=15,boxstack:n=25) its spec with ':', ',' and '=' as '_' (boxstack_n_15), and where
 * even those tie (the same spec twice) a number after it, so that no run's CSV or plot overwrites
 * another's. */
static void scene_stems(compare_plan *p)
{
	for (int s = 0; s < p->nscenes; ++s) {
		int shared = 0;
		for (int t = 0; t < p->nscenes; ++t)
			shared |= t != s && !strcmp(p->scenes[t]->name, p->scenes[s]->name);
		char *stem = p->stems[s];
		snprintf(stem, sizeof p->stems[s], "%s", shared ? p->scenes[s]->spec : p->scenes[s]->name);
		file_safe(stem);
		const size_t base = strlen(stem);
		for (int copy = 2, clash = 1; clash; ++copy) {
			clash = 0;
			for (int t = 0; t < s; ++t)
				clash |= !strcmp(p->stems[t], stem);
			if (clash)
				snprintf(stem + base, sizeof p->stems[s] - base, "-%d", copy);
		}
	}
}

/* What a scene's runs share: simulated time, steps, the step whose problem is solved again for the plot of
 * RES against work, and the times of the pictures. */
typedef struct scene_times {
	double t;
	int steps, conv_step;
	double ft[16];
	int nf;
} scene_times;

/* Reads the command line into o: -1 to go on, else the exit status (--help printed, or a usage error). */
static int parse_options(int argc, char **argv, compare_opts *o)
{
	*o = (compare_opts){.scene_list = NULL, .solver_list = NULL, .engine_arg = "both", .outdir = "lcpkit-report",
	                    .hz = 60, .iters = 20, .pictures = 1, .budgets_arg = FRONTIER_BUDGETS};
	int seeds_given = 0;
	for (int i = 1; i < argc; ++i) {
		const char *a = argv[i], *v = NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return LK_EXIT_OK;
		}
		if (!strcmp(a, "--json")) {
			o->json = 1;
			continue;
		}
		if (!strcmp(a, "--no-pictures")) {
			o->pictures = 0;
			continue;
		}
		if (!strcmp(a, "--frontier")) {
			o->frontier = 1;
			continue;
		}
		if (!strcmp(a, "--verdict")) {
			o->verdict = 1;
			continue;
		}
		if (a[0] != '-' || !(v = lk_cli_value("compare", argc, argv, &i))) {
			if (a[0] != '-')
				lk_cli_error("compare", "unexpected argument '%s' (see lcpkit compare --help)", a);
			return LK_EXIT_USAGE;
		}
		if (!strcmp(a, "--scene") || !strcmp(a, "--scenes"))
			o->scene_list = v;
		else if (!strcmp(a, "--solvers") || !strcmp(a, "--solver"))
			o->solver_list = v;
		else if (!strcmp(a, "--engine"))
			o->engine_arg = v;
		else if (!strcmp(a, "--out"))
			o->outdir = v;
		else if (!strcmp(a, "--frames"))
			o->frames_arg = v;
		else if (!strcmp(a, "--budgets"))
			o->budgets_arg = v;
		else if (!strcmp(a, "--time")) {
			if (!lk_cli_double(v, &o->seconds) || o->seconds <= 0 || o->seconds > 3600) {
				lk_cli_error("compare", "--time needs seconds in (0, 3600], got '%s'", v);
				return LK_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--hz")) {
			if (!lk_cli_double(v, &o->hz) || o->hz < 1 || o->hz > 10000) {
				lk_cli_error("compare", "--hz needs a rate in [1, 10000], got '%s'", v);
				return LK_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--iters")) {
			if (!lk_cli_int(v, 1, 100000, &o->iters)) {
				lk_cli_error("compare", "--iters needs a whole number in [1, 100000], got '%s'", v);
				return LK_EXIT_USAGE;
			}
			o->iters_given = 1;
		} else if (!strcmp(a, "--clock")) {
			if (strcmp(v, "cpu") && strcmp(v, "wall")) {
				lk_cli_error("compare", "--clock needs cpu or wall, got '%s'", v);
				return LK_EXIT_USAGE;
			}
			o->cpu_clock = !strcmp(v, "cpu");
		} else if (!strcmp(a, "--seeds")) {
			if (!lk_cli_int(v, 1, MAX_SEEDS, &o->seeds)) {
				lk_cli_error("compare", "--seeds needs a whole number in [1, %d], got '%s'", MAX_SEEDS, v);
				return LK_EXIT_USAGE;
			}
			seeds_given = 1;
		} else if (!strcmp(a, "--threads")) {
			if (!lk_cli_int(v, 1, 64, &o->threads)) {
				lk_cli_error("compare", "--threads needs a thread count in [1, 64], got '%s'", v);
				return LK_EXIT_USAGE;
			}
		} else {
			lk_cli_error("compare", "unknown option '%s' (see lcpkit compare --help)", a);
			return LK_EXIT_USAGE;
		}
	}
	if (o->frontier && o->iters_given) {
		lk_cli_error("compare", "--frontier runs every budget of --budgets; leave out --iters");
		return LK_EXIT_USAGE;
	}
	if (o->frontier && o->verdict) {
		lk_cli_error("compare", "--frontier does not take --verdict");
		return LK_EXIT_USAGE;
	}
	if (!o->scene_list)
		o->scene_list = o->frontier ? FRONTIER_SCENES : o->verdict ? VERDICT_SCENES : DEFAULT_SCENES;
	if (!o->solver_list)
		o->solver_list = o->frontier ? FRONTIER_SOLVERS : o->verdict ? VERDICT_SOLVERS : DEFAULT_SOLVERS;
	if (o->frontier && o->seconds <= 0)
		o->seconds = FRONTIER_SECONDS;
	if (o->verdict && o->seconds <= 0)
		o->seconds = VERDICT_SECONDS;
	if (!seeds_given)
		o->seeds = o->verdict ? VERDICT_SEEDS : 1;
	return -1;
}

/* --budgets: whole numbers in [1, 100000]. */
/* The budgets of --frontier, ascending and each once (the monotone check and the plots' lines read them so). */
static int parse_budgets(const char *arg, int *out)
{
	double v[MAX_BUDGETS];
	int n = parse_times(arg, v, MAX_BUDGETS), m = 0;
	for (int i = 0; i < n; ++i) {
		if (v[i] < 1 || v[i] > 100000 || v[i] != floor(v[i]))
			return -1;
		int k = m;
		for (; k > 0 && out[k - 1] > (int)v[i]; --k)
			out[k] = out[k - 1];
		if (k > 0 && out[k - 1] == (int)v[i]) {
			for (; k < m; ++k)
				out[k] = out[k + 1];
			continue;
		}
		out[k] = (int)v[i];
		++m;
	}
	return n < 0 ? n : m;
}

/* The solver a spec names on an engine: 'own' is the engine's default. */
static const char *solver_on(const char *spec, int engine)
{
	return !strcmp(spec, "own") ? lk_engine_default_solver((lk_engine)engine) : spec;
}

/* Checks the engines, scenes, solvers and picture times of the options and plans the runs, before anything
 * runs or is written: an engine's own solver runs on that engine only, and a solver no engine runs is an
 * error. LK_EXIT_OK, or the exit status with the message printed. */
static int plan_runs(const compare_opts *o, compare_plan *p)
{
	if (!strcmp(o->engine_arg, "both")) {
		for (int e = 0; e < LK_ENGINE_COUNT; ++e)
			if (lk_engine_available((lk_engine)e))
				p->engines[p->nengines++] = e;
	} else {
		int e = lk_engine_from_name(o->engine_arg);
		if (e < 0) {
			lk_cli_error("compare", "unknown engine '%s' (choose from ode, bullet, both)", o->engine_arg);
			return LK_EXIT_USAGE;
		}
		p->engines[p->nengines++] = e;
	}
	if (p->nengines == 0) {
		lk_cli_error("compare", "no engine was built into this lcpkit");
		return LK_EXIT_USAGE;
	}
	p->nscenes = split_specs(o->scene_list, p->scene_specs, MAX_ITEMS);
	p->nsolvers = split_specs(o->solver_list, p->solver_specs, MAX_ITEMS);
	if (p->nscenes <= 0 || p->nsolvers <= 0) {
		lk_cli_error("compare", "give between 1 and %d scenes and solvers", MAX_ITEMS);
		return LK_EXIT_USAGE;
	}
	/* the verdict measures every solver against the engine's own, which runs too */
	int own_missing = 0;
	for (int e = 0; e < p->nengines && o->verdict; ++e) {
		int has = 0;
		for (int k = 0; k < p->nsolvers; ++k)
			has |= !strcmp(solver_on(p->solver_specs[k], p->engines[e]), lk_engine_default_solver((lk_engine)p->engines[e]));
		own_missing |= !has;
	}
	if (own_missing) {
		if (p->nsolvers >= MAX_ITEMS) {
			lk_cli_error("compare", "give at most %d solvers with --verdict (it adds the engines' own)", MAX_ITEMS - 1);
			return LK_EXIT_USAGE;
		}
		memmove(p->solver_specs[1], p->solver_specs[0], sizeof p->solver_specs[0] * (size_t)p->nsolvers);
		snprintf(p->solver_specs[0], sizeof p->solver_specs[0], "own");
		++p->nsolvers;
	}
	/* --threads reaches every lcpkit spec that does not choose its own (the engines' solvers keep theirs) */
	for (int k = 0; k < p->nsolvers && o->threads > 0; ++k) {
		char *spec = p->solver_specs[k], with[160], n[16];
		if (!strcmp(spec, "own") || lk_engine_solver_find(spec))
			continue;
		snprintf(n, sizeof n, "%d", o->threads);
		if (lk_config_spec_with(spec, "threads", n, with, sizeof with) == LK_OK)
			memcpy(spec, with, sizeof with);
		else
			fprintf(stderr, "lcpkit compare: %s sweeps on one thread (threads > 1 needs the natural, part or "
			                "colour order and box friction)\n", spec);
	}
	char err[512];
	for (int s = 0; s < p->nscenes; ++s) {
		if (lk_scene_create(p->scene_specs[s], &p->scenes[s], err, sizeof err) != LK_OK) {
			lk_cli_error("compare", "%s", err);
			return LK_EXIT_USAGE;
		}
	}
	scene_stems(p);
	/* --seeds: the same scenes with seed=1 .. N-1 */
	p->nseeds = o->seeds > 1 ? o->seeds : 1;
	for (int s = 0; s < p->nscenes; ++s)
		for (int k = 1; k < p->nseeds; ++k) {
			char spec[200];
			snprintf(spec, sizeof spec, "%s%sseed=%d", p->scene_specs[s], strchr(p->scene_specs[s], ':') ? "," : ":", k);
			if (lk_scene_create(spec, &p->seeded[s][k], err, sizeof err) != LK_OK) {
				lk_cli_error("compare", "%s", err);
				return LK_EXIT_USAGE;
			}
		}
	if (o->frontier) {
		p->nbudgets = parse_budgets(o->budgets_arg, p->budgets);
		if (p->nbudgets <= 0) {
			lk_cli_error("compare", "--budgets needs up to %d whole numbers in [1, 100000] like 2,5,10, got '%s'",
			             MAX_BUDGETS, o->budgets_arg);
			return LK_EXIT_USAGE;
		}
	} else {
		p->budgets[0] = o->iters;
		p->nbudgets = 1;
	}
	p->runs = calloc((size_t)p->nscenes * p->nengines * p->nsolvers * p->nbudgets, sizeof *p->runs);
	if (!p->runs)
		return LK_EXIT_FAIL;
	for (int v = 0; v < p->nsolvers; ++v) {
		int ok_somewhere = 0;
		for (int e = 0; e < p->nengines; ++e)
			if (lk_sim_check_solver((lk_engine)p->engines[e], solver_on(p->solver_specs[v], p->engines[e]), err,
			                        sizeof err) == LK_OK)
				ok_somewhere = 1;
		if (!ok_somewhere) {
			lk_cli_error("compare", "%s", err);
			return LK_EXIT_USAGE;
		}
	}
	for (int s = 0; s < p->nscenes; ++s)
		for (int e = 0; e < p->nengines; ++e)
			for (int v = 0; v < p->nsolvers; ++v) {
				const char *name = solver_on(p->solver_specs[v], p->engines[e]);
				if (lk_sim_check_solver((lk_engine)p->engines[e], name, err, sizeof err) != LK_OK)
					continue;
				for (int b = 0; b < p->nbudgets; ++b) {
					run *r = &p->runs[p->nruns++];
					r->scene = p->scenes[s];
					r->stem = p->stems[s];
					r->scene_index = s;
					r->engine = (lk_engine)p->engines[e];
					r->budget = p->budgets[b];
					snprintf(r->solver, sizeof r->solver, "%s", name);
				}
			}
	if (p->nseeds > 1) {
		const int per = p->nseeds - 1;
		p->extra = calloc((size_t)p->nruns * (size_t)per, sizeof *p->extra);
		if (!p->extra)
			return LK_EXIT_FAIL;
		for (int i = 0; i < p->nruns; ++i)
			for (int k = 1; k < p->nseeds; ++k) {
				const run *r = &p->runs[i];
				run *x = &p->extra[(size_t)i * per + k - 1];
				x->scene = p->seeded[r->scene_index][k];
				x->stem = r->stem;
				x->scene_index = r->scene_index;
				x->engine = r->engine;
				x->budget = r->budget;
				x->seed = k;
				memcpy(x->solver, r->solver, sizeof x->solver);
			}
	}
	if (o->frames_arg) {
		p->nframes = parse_times(o->frames_arg, p->frame_t, 16);
		if (p->nframes <= 0) {
			lk_cli_error("compare", "--frames needs times in seconds like 1,2,4,10, got '%s'", o->frames_arg);
			return LK_EXIT_USAGE;
		}
	}
	p->h = 1.0 / o->hz;
	return LK_EXIT_OK;
}

/* The time of a scene's runs (--time, else 4 s for stacks and 3 s for pools) and its picture times (--frames,
 * else those of 1, 2, 4 and 10 s within the run, and its end). */
static scene_times times_of(const compare_opts *o, const compare_plan *p, const lk_scene *sc)
{
	scene_times st;
	st.t = o->seconds > 0 ? o->seconds : (sc->stack_top >= 0 ? 4.0 : 3.0);
	st.nf = p->nframes;
	if (st.nf > 0) {
		memcpy(st.ft, p->frame_t, sizeof st.ft);
	} else {
		const double def_t[4] = {1, 2, 4, 10};
		for (int k = 0; k < 4; ++k)
			if (def_t[k] <= st.t + 1e-9)
				st.ft[st.nf++] = def_t[k];
		if (st.nf == 0 || st.ft[st.nf - 1] < st.t - 1e-9)
			st.ft[st.nf++] = st.t;
	}
	st.steps = (int)lround(st.t / p->h);
	st.conv_step = st.steps >= 100 ? 100 : st.steps; /* seed 000 plots the 100th step */
	return st;
}

/* Runs the plan in order, each run writing its CSV; stops at the first run that fails. */
static int run_all(const compare_opts *o, compare_plan *p)
{
	char err[512];
	for (int i = 0; i < p->nruns; ++i) {
		run *r = &p->runs[i];
		const lk_scene *sc = r->scene;
		scene_times st = times_of(o, p, sc);
		char suffix[32] = "";
		if (o->frontier)
			snprintf(suffix, sizeof suffix, "-budget%d", r->budget);
		/* the frontier's runs need neither pictures nor the long solve of one step */
		if (run_one(r, sc, st.t, p->h, st.ft, o->frontier ? 0 : st.nf, o->frontier ? 0 : st.conv_step, o->outdir,
		            suffix, err, sizeof err) != 0) {
			lk_cli_error("compare", "%s on %s with %s: %s", sc->spec, lk_engine_name(r->engine), r->solver, err);
			return LK_EXIT_FAIL;
		}
		/* the same run on the seeded scenes: no pictures, no long solve */
		for (int k = 1; k < p->nseeds; ++k) {
			run *x = &p->extra[(size_t)i * (p->nseeds - 1) + k - 1];
			snprintf(suffix, sizeof suffix, "-seed%d", k);
			if (run_one(x, x->scene, st.t, p->h, st.ft, 0, 0, o->outdir, suffix, err, sizeof err) != 0) {
				lk_cli_error("compare", "%s on %s with %s: %s", x->scene->spec, lk_engine_name(x->engine), x->solver,
				             err);
				return LK_EXIT_FAIL;
			}
		}
		p->ndone = i + 1;
	}
	return LK_EXIT_OK;
}

/* DIR/SCENE-convergence.png: RES against work on the problem of step conv_step, for the runs that solved it
 * again (lcpkit's solvers). */
static void plot_convergence(const compare_opts *o, const run *runs, int cnt, const scene_times *st)
{
	const lk_scene *sc = runs[0].scene;
	lk_series ser[MAX_ITEMS * LK_ENGINE_COUNT];
	char names[MAX_ITEMS * LK_ENGINE_COUNT][200], path[1024], title[256];
	int ns = 0;
	for (int k = 0; k < cnt; ++k) {
		const run *q = &runs[k];
		if (!q->conv_res)
			continue;
		snprintf(names[ns], sizeof names[ns], "%s %s", lk_engine_name(q->engine), q->solver);
		ser[ns] = (lk_series){.name = names[ns], .n = q->conv_n, .x = q->conv_work, .y = q->conv_res};
		++ns;
	}
	snprintf(path, sizeof path, "%s/%s-convergence.png", o->outdir, runs[0].stem);
	snprintf(title, sizeof title, "%s: RES against work on the problem of step %d", sc->spec, st->conv_step);
	lk_plot pl = {.title = title, .xlabel = "work (PGS sweeps: row updates / rows)", .ylabel = "RES", .log_y = 1,
	              .width = 900, .height = 520};
	if (ns > 0 && lk_plot_png(path, &pl, ser, ns) != LK_OK)
		lk_cli_error("compare", "cannot write %s", path);
}

/* DIR/SCENE-residual.png: RES after each step, every run. */
static void plot_residual(const compare_opts *o, double h, const run *runs, int cnt, const scene_times *st)
{
	const lk_scene *sc = runs[0].scene;
	double *ts = malloc(sizeof(double) * (size_t)st->steps);
	if (!ts)
		return;
	for (int k = 0; k < st->steps; ++k)
		ts[k] = (k + 1) * h;
	lk_series ser[MAX_ITEMS * LK_ENGINE_COUNT];
	char names[MAX_ITEMS * LK_ENGINE_COUNT][200], path[1024], title[256];
	for (int k = 0; k < cnt; ++k) {
		snprintf(names[k], sizeof names[k], "%s %s", lk_engine_name(runs[k].engine), runs[k].solver);
		ser[k] = (lk_series){.name = names[k], .n = runs[k].steps, .x = ts, .y = runs[k].res};
	}
	snprintf(path, sizeof path, "%s/%s-residual.png", o->outdir, runs[0].stem);
	snprintf(title, sizeof title, "%s: RES after each step (budget %d)", sc->spec, o->iters);
	lk_plot pl = {.title = title, .xlabel = "time (s)", .ylabel = "RES", .log_y = 1, .width = 900, .height = 520};
	if (lk_plot_png(path, &pl, ser, cnt) != LK_OK)
		lk_cli_error("compare", "cannot write %s", path);
	free(ts);
}

/* DIR/SCENE-frames.png: the runs side by side (columns) at the picture times (rows). */
static void picture_frames(const compare_opts *o, const run *runs, int cnt, const scene_times *st)
{
	const lk_scene *sc = runs[0].scene;
	lk_pose *grid = malloc(sizeof(lk_pose) * (size_t)st->nf * cnt * sc->nbodies);
	if (!grid)
		return;
	const char *ctitles[MAX_ITEMS * LK_ENGINE_COUNT], *rtitles[16];
	char names[MAX_ITEMS * LK_ENGINE_COUNT][200], rbuf[16][32], path[1024];
	for (int row = 0; row < st->nf; ++row) {
		snprintf(rbuf[row], sizeof rbuf[row], "%g s", st->ft[row]);
		rtitles[row] = rbuf[row];
		for (int col = 0; col < cnt; ++col)
			memcpy(grid + ((size_t)row * cnt + col) * sc->nbodies, runs[col].frames + (size_t)row * sc->nbodies,
			       sizeof(lk_pose) * sc->nbodies);
	}
	for (int col = 0; col < cnt; ++col) {
		snprintf(names[col], sizeof names[col], "%s %s", lk_engine_name(runs[col].engine), runs[col].solver);
		ctitles[col] = names[col];
	}
	snprintf(path, sizeof path, "%s/%s-frames.png", o->outdir, runs[0].stem);
	if (lk_render_grid_png(path, sc, st->nf, cnt, ctitles, rtitles, grid, 220) != LK_OK)
		lk_cli_error("compare", "cannot write %s", path);
	free(grid);
}

/* The plots and pictures of each scene whose runs all finished; one that cannot be written is reported and
 * left out. */
static void write_plots(const compare_opts *o, const compare_plan *p)
{
	for (int first = 0, last = 0; first < p->ndone; first = last + 1) {
		const lk_scene *sc = p->runs[first].scene;
		for (last = first; last + 1 < p->nruns && p->runs[last + 1].scene == sc; ++last)
			;
		if (last >= p->ndone)
			break;
		scene_times st = times_of(o, p, sc);
		int cnt = last - first + 1;
		plot_convergence(o, &p->runs[first], cnt, &st);
		plot_residual(o, p->h, &p->runs[first], cnt, &st);
		if (o->pictures && st.nf > 0)
			picture_frames(o, &p->runs[first], cnt, &st);
	}
}

/* ------------------------------------------------------------------------------------------- verdict */

/* An outcome of one run as the verdict reads it (NaN: the scene has no such thing); the top's drift only
 * while it stood. */
static double outcome_value(const run *r, lk_outcome o)
{
	switch (o) {
	case LK_OUTCOME_MAX_PENETRATION:
		return r->max_penetration;
	case LK_OUTCOME_PENETRATION_REST:
		return r->pen_rest;
	case LK_OUTCOME_JOINT_ERROR:
		return r->joint_err_max;
	case LK_OUTCOME_ACCEL_ERROR:
		return r->accel_err;
	case LK_OUTCOME_CREEP:
		return r->creep;
	case LK_OUTCOME_ENERGY_END:
		/* where bodies should slide (the incline past its friction angle) their energy at the end is their
		 * speed, which the acceleration error judges: less of it is no better there */
		return isnan(r->accel_err) ? r->energy_end : NAN;
	case LK_OUTCOME_STANDING:
		return r->standing;
	case LK_OUTCOME_DRIFT_MAX:
		return r->fell ? NAN : r->top_drift_max;
	default:
		return NAN;
	}
}

/* Table run i on seed k: the run itself for k = 0, else its run on the seeded scene. */
static run *seed_run(const compare_plan *p, int i, int k)
{
	return k == 0 ? &p->runs[i] : &p->extra[(size_t)i * (p->nseeds - 1) + k - 1];
}

/* The median of the values of v[0..n) that are not NaN (NaN if none). */
static double median_known(const double *v, int n)
{
	double t[MAX_SEEDS];
	int m = 0;
	for (int i = 0; i < n && m < MAX_SEEDS; ++i)
		if (!isnan(v[i]))
			t[m++] = v[i];
	return m ? lk_cli_median(t, m) : NAN;
}

/* Every finished run but the engines' own against the engine's own at the same scene and budget: each outcome
 * over the seeds (verdict.h), the drift of a stack only where it stood in every run of both, and the ratio of
 * the solver times over the runs. */
static void judge(compare_plan *p)
{
	const int ns = p->nseeds;
	for (int i = 0; i < p->ndone; ++i) {
		run *r = &p->runs[i];
		const char *own = lk_engine_default_solver(r->engine);
		int j = -1;
		for (int k = 0; k < p->ndone && strcmp(r->solver, own); ++k)
			if (p->runs[k].scene_index == r->scene_index && p->runs[k].engine == r->engine &&
			    p->runs[k].budget == r->budget && !strcmp(p->runs[k].solver, own))
				j = k;
		if (j < 0)
			continue;
		int any_fell = 0;
		double to[MAX_SEEDS], tc[MAX_SEEDS];
		for (int k = 0; k < ns; ++k) {
			any_fell |= seed_run(p, i, k)->fell || seed_run(p, j, k)->fell;
			/* the mean: auto spends the engine's iterations as a mean over the steps, a resting stack's
			 * steps alternating between one sweep and two with a correction, whose median is no cost */
			to[k] = seed_run(p, j, k)->solve_ms_mean;
			tc[k] = seed_run(p, i, k)->solve_ms_mean;
		}
		int worse = 0, better = 0;
		for (int o = 0; o < LK_OUTCOME_COUNT; ++o) {
			double vo[MAX_SEEDS], vc[MAX_SEEDS];
			for (int k = 0; k < ns; ++k) {
				const int skip = o == LK_OUTCOME_DRIFT_MAX && any_fell;
				vo[k] = skip ? NAN : outcome_value(seed_run(p, j, k), (lk_outcome)o);
				vc[k] = skip ? NAN : outcome_value(seed_run(p, i, k), (lk_outcome)o);
			}
			r->verdict[o] = lk_verdict_of(vo, ns, vc, ns, lk_outcome_resolution((lk_outcome)o, r->scene, p->h),
			                              lk_outcome_higher_better((lk_outcome)o));
			worse |= r->verdict[o].sign == LK_VERDICT_WORSE;
			better |= r->verdict[o].sign == LK_VERDICT_BETTER;
		}
		r->overall = worse ? LK_VERDICT_WORSE : better ? LK_VERDICT_BETTER : LK_VERDICT_LEVEL;
		r->time_ratio = median_known(tc, ns) / median_known(to, ns);
		r->has_verdict = 1;
	}
}

/* With seeds, each table run's columns become the medians over its seeds, and a stack counts as fallen when
 * the median of its seconds standing is short of the run (its per-step series stay those of seed 0). */
static void seed_medians(const compare_opts *o, compare_plan *p)
{
	if (p->nseeds < 2)
		return;
	for (int i = 0; i < p->ndone; ++i) {
		double v[MAX_SEEDS];
		for (int c = 0; c < NCOLS(compare_cols); ++c) {
			for (int k = 0; k < p->nseeds; ++k)
				v[k] = column_value(seed_run(p, i, k), &compare_cols[c]);
			*(double *)((char *)&p->runs[i] + compare_cols[c].at) = median_known(v, p->nseeds);
		}
		for (int k = 0; k < p->nseeds; ++k)
			v[k] = seed_run(p, i, k)->standing;
		run *r = &p->runs[i];
		r->standing = median_known(v, p->nseeds);
		if (!isnan(r->standing)) {
			r->fell = r->standing < times_of(o, p, r->scene).t - 0.5 * p->h;
			r->fell_at = r->fell ? r->standing : -1;
		}
	}
}

static int has_verdicts(const compare_plan *p)
{
	for (int i = 0; i < p->ndone; ++i)
		if (p->runs[i].has_verdict)
			return 1;
	return 0;
}

static const char verdict_legend[] =
	"Each outcome against the engine's own solver at the same budget: + better, = level, - worse, . not compared\n"
	"(the medians over the seeds differ by less than the band: the larger spread of the two solvers' runs, at\n"
	"least the outcome's resolution); time: the ratio of the solver times over the whole run (per step: a\n"
	"budget kept as a mean over the steps costs its mean), the median over the seeds. Where boxes slide down\n"
	"the incline, KE end is their speed, judged by accel err, and is not compared.\n\n";

static char verdict_mark(const lk_verdict *v)
{
	return !v->compared ? '.' : v->sign == LK_VERDICT_WORSE ? '-' : v->sign == LK_VERDICT_BETTER ? '+' : '=';
}

/* The verdict table: a row per run that has one, the solver-time ratio and a mark per outcome, then one line
 * per solver. */
static void print_verdict(FILE *f, const compare_plan *p, int markdown)
{
	int sw = 14, vw = 13;
	for (int i = 0; i < p->ndone; ++i) {
		sw = (int)fmax(sw, (double)strlen(p->runs[i].scene->spec));
		vw = (int)fmax(vw, (double)strlen(p->runs[i].solver));
	}
	if (markdown) {
		fprintf(f, "| scene | engine | solver | time |");
		for (int o = 0; o < LK_OUTCOME_COUNT; ++o)
			fprintf(f, " %s |", lk_outcome_head((lk_outcome)o));
		fprintf(f, " verdict |\n|---|---|---|---:|");
		for (int o = 0; o < LK_OUTCOME_COUNT; ++o)
			fprintf(f, ":---:|");
		fprintf(f, "---|\n");
	} else {
		fprintf(f, "%-*s %-7s %-*s  time", sw, "scene", "engine", vw, "solver");
		for (int o = 0; o < LK_OUTCOME_COUNT; ++o)
			fprintf(f, " %9s", lk_outcome_head((lk_outcome)o));
		fprintf(f, "  verdict\n");
	}
	for (int i = 0; i < p->ndone; ++i) {
		const run *r = &p->runs[i];
		if (!r->has_verdict)
			continue;
		char words[160];
		verdict_words(r, words, sizeof words);
		if (markdown)
			fprintf(f, "| %s | %s | %s | %.2fx |", r->scene->spec, lk_engine_name(r->engine), r->solver, r->time_ratio);
		else
			fprintf(f, "%-*s %-7s %-*s %5.2fx", sw, r->scene->spec, lk_engine_name(r->engine), vw, r->solver,
			        r->time_ratio);
		for (int o = 0; o < LK_OUTCOME_COUNT; ++o)
			fprintf(f, markdown ? " %c |" : " %9c", verdict_mark(&r->verdict[o]));
		fprintf(f, markdown ? " %s |\n" : "  %s\n", words);
	}
	fprintf(f, "%s", markdown ? "\n" : "");
	/* one line per solver spec */
	for (int i = 0; i < p->ndone; ++i) {
		const run *r = &p->runs[i];
		int first = r->has_verdict;
		for (int k = 0; k < i && first; ++k)
			first = !(p->runs[k].has_verdict && !strcmp(p->runs[k].solver, r->solver));
		if (!first)
			continue;
		int n = 0, worse = 0, better = 0, slower = 0;
		double tmin = INFINITY, tmax = 0;
		for (int k = i; k < p->ndone; ++k) {
			const run *q = &p->runs[k];
			if (!q->has_verdict || strcmp(q->solver, r->solver))
				continue;
			++n;
			worse += q->overall == LK_VERDICT_WORSE;
			better += q->overall == LK_VERDICT_BETTER;
			slower += !(q->time_ratio <= 1.0);
			tmin = fmin(tmin, q->time_ratio);
			tmax = fmax(tmax, q->time_ratio);
		}
		fprintf(f, "%s%s: worse than the engine's own on %d of %d (better on %d, level on %d); solver time %.2f-%.2fx "
		           "the engine's own, above 1.0x on %d\n",
		        markdown ? "- " : "", r->solver, worse, n, better, n - worse - better, tmin, tmax, slower);
	}
}

/* DIR/verdict.csv: each run's verdict, outcome by outcome: the two medians, the band and the sign. */
static int write_verdict_csv(const char *path, const compare_plan *p)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "scene,engine,solver,seeds,time_ratio,verdict");
	for (int o = 0; o < LK_OUTCOME_COUNT; ++o)
		fprintf(f, ",%s_own,%s,%s_band,%s_verdict", lk_outcome_key((lk_outcome)o), lk_outcome_key((lk_outcome)o),
		        lk_outcome_key((lk_outcome)o), lk_outcome_key((lk_outcome)o));
	fprintf(f, "\n");
	static const char *const sign[] = {"worse", "level", "better"};
	for (int i = 0; i < p->ndone; ++i) {
		const run *r = &p->runs[i];
		if (!r->has_verdict)
			continue;
		fprintf(f, "\"%s\",%s,\"%s\",%d,%.6g,%s", r->scene->spec, lk_engine_name(r->engine), r->solver, p->nseeds,
		        r->time_ratio, sign[r->overall + 1]);
		for (int o = 0; o < LK_OUTCOME_COUNT; ++o) {
			const lk_verdict *v = &r->verdict[o];
			if (v->compared)
				fprintf(f, ",%.9g,%.9g,%.9g,%s", v->own, v->cand, v->band, sign[v->sign + 1]);
			else
				fprintf(f, ",,,,");
		}
		fprintf(f, "\n");
	}
	return fclose(f) == 0 ? 0 : -1;
}

/* DIR/report.md: the settings, the table of the finished runs, what its columns mean and each scene's plots;
 * then its path on stdout (the table went there before, unless --json). LK_EXIT_FAIL if it cannot be
 * written. */
static int write_report(const compare_opts *o, const compare_plan *p)
{
	int rc = LK_EXIT_OK;
	char path[1024];
	snprintf(path, sizeof path, "%s/report.md", o->outdir);
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, "# lcpkit compare\n\nSettings: a budget of %d sweep-equivalents per step (the engines' own solvers: %d "
		           "iterations), %g Hz, engines:", o->iters, o->iters, o->hz);
		for (int e = 0; e < p->nengines; ++e)
			fprintf(f, " %s", lk_engine_name((lk_engine)p->engines[e]));
		fprintf(f, ". Times are medians over the steps of each run.\n\n");
		const int judged = has_verdicts(p);
		if (p->nseeds > 1)
			fprintf(f, "Each scene ran %d times, as built and with seed=1..%d (a sideways shift of each body by at most "
			           "1e-4 of its size); the outcomes are the medians over those runs.\n\n", p->nseeds, p->nseeds - 1);
		print_table(f, p->runs, p->ndone, compare_cols, NCOLS(compare_cols), judged ? "fell\tvs own" : "fell",
		            judged ? tail_fell_verdict : tail_fell, 1);
		fprintf(f, "\nColumns: solver ms is the constraint solve alone, step ms the whole engine step; work the\n"
		           "sweep-equivalents spent per step (the engines' own solvers: their iterations); RES is the natural\n"
		           "residual ||lambda - mid(lo, lambda - w, hi)|| of the step's own rows after the solve; max pen. the\n"
		           "deepest contact penetration, pen. rest the median over the last second of each step's deepest;\n"
		           "joint err the largest distance over the last second between the two bodies' anchor points of a\n"
		           "joint; accel err the worst relative error of the incline's sliding boxes' acceleration against\n"
		           "g (sin a - mu cos a), creep the farthest a box that should rest moved; KE end the kinetic energy at\n"
		           "the end; top drift the horizontal displacement of the top body at the end, drift max the largest\n"
		           "while the stack stood (a swaying stack's end drift is where the sway happens to be then); fell the\n"
		           "time the top sank by half its height. All of it, at full precision, is in summary.csv.\n\n");
		if (judged) {
			fprintf(f, "## Verdict against each engine's own solver\n\n%s", verdict_legend);
			print_verdict(f, p, 1);
			fprintf(f, "\nEach outcome's medians, band and verdict are in verdict.csv.\n\n");
		}
		for (int s = 0; s < p->nscenes; ++s) {
			fprintf(f, "## %s\n\n", p->scenes[s]->spec);
			fprintf(f, "![residual over the steps](%s-residual.png)\n\n", p->stems[s]);
			fprintf(f, "![residual against work](%s-convergence.png)\n\n", p->stems[s]);
			if (o->pictures)
				fprintf(f, "![frames](%s-frames.png)\n\n", p->stems[s]);
		}
		fprintf(f, "Per-step values of each run are in the CSV files next to this report.\n");
		fclose(f);
	} else {
		lk_cli_error("compare", "cannot write %s", path);
		rc = LK_EXIT_FAIL;
	}
	snprintf(path, sizeof path, "%s/summary.csv", o->outdir);
	if (write_csv(path, p->runs, p->ndone, compare_cols, NCOLS(compare_cols), "fell", tail_fell) != 0) {
		lk_cli_error("compare", "cannot write %s", path);
		rc = LK_EXIT_FAIL;
	}
	snprintf(path, sizeof path, "%s/verdict.csv", o->outdir);
	if (has_verdicts(p) && write_verdict_csv(path, p) != 0) {
		lk_cli_error("compare", "cannot write %s", path);
		rc = LK_EXIT_FAIL;
	}
	if (!o->json)
		printf("\nreport: %s/report.md\n", o->outdir);
	return rc;
}

/* ------------------------------------------------------------------------------------------ frontier */

/* What a scene's frontier measures a run by; col.head is the plot's y axis. */
typedef struct outcome {
	column col;
	int higher_better, log_y;
	lk_outcome verdict; /* the same outcome in the verdict's terms (its resolution) */
} outcome;

static const outcome *outcome_of(const lk_scene *sc)
{
	static const outcome o[] = {
		{COL("acceleration error of the sliders, relative (lower is better)", "accel_error", 0, NULL, accel_err), 0, 1,
		 LK_OUTCOME_ACCEL_ERROR},
		{COL("joint error over the last second, m (lower is better)", "joint_error", 0, NULL, joint_err_max), 0, 1,
		 LK_OUTCOME_JOINT_ERROR},
		{COL("seconds standing (higher is better)", "seconds_standing", 0, NULL, standing), 1, 0, LK_OUTCOME_STANDING},
		{COL("penetration at rest, m (lower is better)", "penetration_rest", 0, NULL, pen_rest), 0, 1,
		 LK_OUTCOME_PENETRATION_REST},
	};
	if (!strcmp(sc->name, "incline"))
		return &o[0];
	if (sc->njoints > 0)
		return &o[1];
	if (sc->stack_top >= 0)
		return &o[2];
	return &o[3];
}

/* Marks the points no other point beats in both solver time and outcome; idx receives them by solver time. */
static int mark_pareto(run *runs, int cnt, int higher_better, int *idx)
{
	/* by solver time, and at equal time the better outcome first (insertion: a few hundred points) */
	for (int i = 0; i < cnt; ++i) {
		int k = i;
		for (; k > 0; --k) {
			const run *a = &runs[idx[k - 1]], *b = &runs[i];
			double d = higher_better ? b->outcome - a->outcome : a->outcome - b->outcome;
			if (a->solve_ms_median < b->solve_ms_median || (a->solve_ms_median == b->solve_ms_median && !(d > 0)))
				break;
			idx[k] = idx[k - 1];
		}
		idx[k] = i;
	}
	double best = higher_better ? -INFINITY : INFINITY;
	int n = 0;
	for (int i = 0; i < cnt; ++i) {
		run *r = &runs[idx[i]];
		if (isnan(r->outcome) || !(higher_better ? r->outcome > best : r->outcome < best))
			continue;
		best = r->outcome;
		r->pareto = 1;
		idx[n++] = idx[i];
	}
	return n;
}

/* DIR/frontier-SCENE-ENGINE[suffix].png: the runs' outcome oc against solver time, a line per solver through
 * its budgets and the Pareto frontier as a step line (what the best solver reaches at that time or less);
 * note, if any, ends the title. */
static int plot_frontier(const compare_opts *o, const compare_plan *p, const run *runs, int cnt, const int *front,
                         int nfront, const outcome *oc, const char *suffix, const char *note, char *path,
                         size_t path_size)
{
	const lk_scene *sc = runs[0].scene;
	lk_series ser[MAX_ITEMS + 1];
	const char *labels[MAX_ITEMS * MAX_BUDGETS];
	char lbuf[MAX_ITEMS * MAX_BUDGETS][16];
	/* the step line has up to two points per frontier point */
	double *x = malloc(sizeof(double) * (size_t)(2 * cnt + 4 * nfront + 1));
	if (!x)
		return -1;
	double *y = x + cnt, *fx = y + cnt, *fy = fx + 2 * nfront;
	int ns = 0;
	for (int first = 0, last; first < cnt; first = last + 1) {
		for (last = first; last + 1 < cnt && !strcmp(runs[last + 1].solver, runs[first].solver); ++last)
			;
		for (int k = first; k <= last; ++k) {
			x[k] = runs[k].solve_ms_median;
			y[k] = runs[k].outcome;
			snprintf(lbuf[k], sizeof lbuf[k], "%d", runs[k].budget);
			labels[k] = lbuf[k];
		}
		ser[ns++] = (lk_series){.name = runs[first].solver, .n = last - first + 1, .x = x + first, .y = y + first,
		                        .labels = labels + first, .markers = 1};
	}
	int nf = 0;
	for (int i = 0; i < nfront; ++i) {
		if (i > 0) {
			fx[nf] = runs[front[i]].solve_ms_median;
			fy[nf++] = runs[front[i - 1]].outcome;
		}
		fx[nf] = runs[front[i]].solve_ms_median;
		fy[nf++] = runs[front[i]].outcome;
	}
	if (nf > 0)
		ser[ns++] = (lk_series){.name = "Pareto frontier", .n = nf, .x = fx, .y = fy, .underlay = 1};
	char title[256], budgets[128] = "";
	for (int b = 0; b < p->nbudgets; ++b)
		snprintf(budgets + strlen(budgets), sizeof budgets - strlen(budgets), "%s%d", b ? "," : "", p->budgets[b]);
	snprintf(path, path_size, "%s/frontier-%s-%s%s.png", o->outdir, runs[0].stem, lk_engine_name(runs[0].engine),
	         suffix);
	snprintf(title, sizeof title, "%s in %s, %g s: budgets %s sweep-equivalents per step%s", sc->spec,
	         lk_engine_name(runs[0].engine), runs[0].steps * p->h, budgets, note);
	lk_plot pl = {.title = title, .xlabel = "solver ms per step (median)", .ylabel = oc->col.head,
	              .log_y = oc->log_y, .log_x = 1, .width = 1000, .height = 560};
	if (oc->higher_better) {
		/* seconds standing run from 0 to the run's time, with room for the labels of those that never fell */
		pl.ymin = 0;
		pl.ymax = 1.08 * runs[0].steps * p->h;
	}
	int rc = lk_plot_png(path, &pl, ser, ns) == LK_OK ? 0 : -1;
	if (rc != 0)
		lk_cli_error("compare", "cannot write %s", path);
	free(x);
	return rc;
}

/* Stacks: DIR/frontier-SCENE-ENGINE-drift.png, the top's largest drift against solver time for the runs whose
 * stack stood the whole time, with their own Pareto frontier: where seconds standing cannot tell a still stack
 * from a swaying one, this can. idx: room for cnt indices. 1 (and no file) when no run stood. */
static int plot_drift(const compare_opts *o, const compare_plan *p, const run *g, int cnt, int *idx, char *path,
                      size_t path_size)
{
	static const outcome drift = {COL("largest top drift while standing, m (lower is better)", "top_drift_max", 0,
	                                  NULL, top_drift_max),
	                              0, 1, LK_OUTCOME_DRIFT_MAX};
	run *s = malloc(sizeof *s * (size_t)cnt);
	int m = 0, rc = 1;
	if (!s) {
		rc = -1;
	} else {
		/* shallow copies for the plot, every solver kept (its colour is the main picture's), a run that fell
		 * with no point (NaN); a still stack drawn at a micrometre at least, for the log axis */
		for (int k = 0; k < cnt; ++k) {
			s[k] = g[k];
			s[k].outcome = g[k].fell ? NAN : fmax(g[k].top_drift_max, 1e-6);
			s[k].pareto = 0;
			m += !g[k].fell;
		}
		if (m > 0) {
			const int n = mark_pareto(s, cnt, 0, idx);
			rc = plot_frontier(o, p, s, cnt, idx, n, &drift, "-drift", " (runs that stood)", path, path_size);
		}
	}
	free(s);
	return rc;
}

/* More work never worse: for each lcpkit solver, whether in every scene and engine of the frontier each budget's
 * outcome is level with or better than the next smaller budget's, level meaning within the outcome's
 * resolution (verdict.h). One line per solver on f, and each step that got worse. */
/* The spread of run k's frontier outcome over its seeds (0 with one seed): how far chance alone moves it. */
static double outcome_spread(const compare_plan *p, int k, const outcome *oc)
{
	double lo = INFINITY, hi = -INFINITY;
	for (int s = 0; s < p->nseeds; ++s) {
		const double v = column_value(seed_run(p, k, s), &oc->col);
		if (!isnan(v)) {
			lo = fmin(lo, v);
			hi = fmax(hi, v);
		}
	}
	return hi > lo ? hi - lo : 0.0;
}

static void print_monotone(FILE *f, const compare_plan *p)
{
	for (int a = 0; a < p->ndone; ++a) {
		const run *ra = &p->runs[a];
		int seen = 0;
		for (int b = 0; b < a && !seen; ++b)
			seen = !strcmp(p->runs[b].solver, ra->solver);
		if (seen || lk_engine_solver_find(ra->solver))
			continue;
		int groups = 0, worse = 0;
		char where[600] = "";
		size_t used = 0;
		for (int first = 0, last; first < p->ndone; first = last + 1) {
			const run *g = &p->runs[first];
			for (last = first; last + 1 < p->ndone && p->runs[last + 1].scene == g->scene &&
			                   p->runs[last + 1].engine == g->engine;
			     ++last)
				;
			const outcome *oc = outcome_of(g->scene);
			const double res = lk_outcome_resolution(oc->verdict, g->scene, p->h);
			const run *prev = NULL;
			double prev_spread = 0.0;
			int bad = 0, any = 0;
			/* the runs of one solver come in the order of the budgets, ascending (parse_budgets) */
			for (int k = first; k <= last; ++k) {
				const run *r = &p->runs[k];
				if (strcmp(r->solver, ra->solver))
					continue;
				any = 1;
				/* with seeds, the medians compared within the larger spread of the two budgets' runs, as the
				 * verdict compares them: a chaotic outcome (a pile of ragdolls) moves by chance alone */
				const double spread = outcome_spread(p, k, oc);
				if (prev && !isnan(prev->outcome) && !isnan(r->outcome)) {
					const double d = oc->higher_better ? prev->outcome - r->outcome : r->outcome - prev->outcome;
					if (d > fmax(res, fmax(spread, prev_spread)) || (isnan(d) && !isnan(prev->outcome))) {
						bad = 1;
						if (used + 1 < sizeof where)
							used += (size_t)snprintf(where + used, sizeof where - used, "%s%s %s %d->%d",
							                         worse + bad > 1 ? "; " : "", g->scene->spec,
							                         lk_engine_name(g->engine), prev->budget, r->budget);
					}
				}
				prev = r;
				prev_spread = spread;
			}
			groups += any;
			worse += bad;
		}
		fprintf(f, "%s: more work never worse on %d of %d scene x engine%s%s\n", ra->solver, groups - worse, groups,
		        worse ? "; worse: " : "", where);
	}
}

/* The frontier of the finished runs: each scene and engine's outcome and Pareto points, the table on stdout
 * (or the JSON), frontier.csv, frontier.json and the plots. LK_EXIT_FAIL if a file cannot be written. */
static int write_frontier(const compare_opts *o, compare_plan *p)
{
	int rc = LK_EXIT_OK, nplots = 0;
	int *idx = malloc(sizeof(int) * (size_t)(p->ndone > 0 ? p->ndone : 1));
	char(*plots)[1024] = malloc(sizeof *plots * (size_t)(2 * p->nscenes * p->nengines));
	if (!idx || !plots) {
		free(idx);
		free(plots);
		return LK_EXIT_FAIL;
	}
	for (int first = 0, last; first < p->ndone; first = last + 1) {
		run *g = &p->runs[first];
		for (last = first; last + 1 < p->ndone && p->runs[last + 1].scene == g->scene &&
		                   p->runs[last + 1].engine == g->engine;
		     ++last)
			;
		const outcome *oc = outcome_of(g->scene);
		for (int k = first; k <= last; ++k)
			p->runs[k].outcome = column_value(&p->runs[k], &oc->col);
		int n = mark_pareto(g, last - first + 1, oc->higher_better, idx);
		if (plot_frontier(o, p, g, last - first + 1, idx, n, oc, "", "", plots[nplots], sizeof plots[nplots]) == 0)
			++nplots;
		else
			rc = LK_EXIT_FAIL;
		if (g->scene->stack_top >= 0) {
			/* idx, the main picture's frontier, is drawn: its room serves the drift's */
			const int d = plot_drift(o, p, g, last - first + 1, idx, plots[nplots], sizeof plots[nplots]);
			if (d == 0)
				++nplots;
			else if (d < 0)
				rc = LK_EXIT_FAIL;
		}
	}
	free(idx);
	char path[1024];
	snprintf(path, sizeof path, "%s/frontier.csv", o->outdir);
	if (write_csv(path, p->runs, p->ndone, frontier_cols, NCOLS(frontier_cols), "pareto", tail_pareto) != 0) {
		lk_cli_error("compare", "cannot write %s", path);
		rc = LK_EXIT_FAIL;
	}
	snprintf(path, sizeof path, "%s/frontier.json", o->outdir);
	FILE *f = fopen(path, "w");
	if (f)
		print_json(f, p->runs, p->ndone, frontier_cols, NCOLS(frontier_cols), o->outdir, 1);
	if (!f || fclose(f) != 0) {
		lk_cli_error("compare", "cannot write %s", path);
		rc = LK_EXIT_FAIL;
	}
	if (o->json) {
		print_json(stdout, p->runs, p->ndone, frontier_cols, NCOLS(frontier_cols), o->outdir, 1);
	} else {
		printf("\n");
		print_table(stdout, p->runs, p->ndone, frontier_cols, NCOLS(frontier_cols), "pareto", tail_pareto, 0);
		printf("\n");
		print_monotone(stdout, p);
		printf("\nfrontier: %s/frontier.csv, %s/frontier.json\n", o->outdir, o->outdir);
		for (int i = 0; i < nplots; ++i)
			printf("plot: %s\n", plots[i]);
	}
	free(plots);
	return rc;
}

static void free_plan(compare_plan *p)
{
	for (int i = 0; p->runs && i < p->nruns; ++i)
		free_run(&p->runs[i]);
	free(p->runs);
	for (int i = 0; p->extra && i < p->nruns * (p->nseeds - 1); ++i)
		free_run(&p->extra[i]);
	free(p->extra);
	for (int s = 0; s < MAX_ITEMS; ++s) {
		lk_scene_destroy(p->scenes[s]);
		for (int k = 0; k < MAX_SEEDS; ++k)
			lk_scene_destroy(p->seeded[s][k]);
	}
}

int lk_cmd_compare(int argc, char **argv)
{
	compare_opts o;
	int rc = parse_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.cpu_clock)
		lk_set_stats_clock(LK_CLOCK_THREAD_CPU);
	compare_plan p;
	memset(&p, 0, sizeof p);
	rc = plan_runs(&o, &p);
	if (rc == LK_EXIT_OK && lk_cli_mkdirs(o.outdir) != 0) {
		lk_cli_error("compare", "cannot create directory '%s': %s", o.outdir, strerror(errno));
		rc = LK_EXIT_FAIL;
	}
	if (rc == LK_EXIT_OK && o.frontier) {
		rc = run_all(&o, &p);
		seed_medians(&o, &p);
		if (write_frontier(&o, &p) != LK_EXIT_OK)
			rc = LK_EXIT_FAIL;
	} else if (rc == LK_EXIT_OK) {
		rc = run_all(&o, &p);
		judge(&p);
		seed_medians(&o, &p);
		write_plots(&o, &p);
		const int judged = has_verdicts(&p);
		if (o.json) {
			print_json(stdout, p.runs, p.ndone, compare_cols, NCOLS(compare_cols), o.outdir, 0);
		} else {
			print_table(stdout, p.runs, p.ndone, compare_cols, NCOLS(compare_cols), judged ? "fell\tvs own" : "fell",
			            judged ? tail_fell_verdict : tail_fell, 0);
			if (o.verdict) {
				printf("\n%s", verdict_legend);
				print_verdict(stdout, &p, 0);
			}
		}
		if (write_report(&o, &p) != LK_EXIT_OK)
			rc = LK_EXIT_FAIL;
	}
	free_plan(&p);
	return rc;
}

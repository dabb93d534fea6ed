/* lcpkit compare: one run of a scene under one solver, and what it measures. */
#include "compare.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double length3(const double *v)
{
	return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

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
	double *p0;     /* per box: its position once landed (settle_t), from which a resting box's creep is measured */
	double settle_t; /* when the boxes have landed: half a second, or a quarter of a shorter run */
	int settled;
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
static int incline_begin(incline_track *it, const lk_sim *sim, const lk_scene *sc, int steps, double h)
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
	double g = length3(sc->gravity);
	it->steps = steps;
	it->settle_t = fmin(0.5, 0.25 * steps * h);
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
	/* a box set on the slope slides a little as it lands, the same under every solver (0.70 mm in Bullet's first
	 * half second at 15 degrees under its solver and auto alike): creep is what a resting box moves after that,
	 * measured from where it has landed */
	if (!it->settled && t >= it->settle_t - 1e-12) {
		it->settled = 1;
		for (int b = 0; b < it->nbox; ++b) {
			lk_pose p;
			lk_sim_pose(sim, it->box[b], &p);
			memcpy(&it->p0[3 * b], p.pos, sizeof p.pos);
		}
	}
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
 * slope once landed (incline_sample; their settling into it is penetration, not creep). */
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
			double moved = length3(d);
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
void file_safe(char *s)
{
	for (; *s; ++s)
		if (*s == ':' || *s == ',' || *s == '=' || *s == '/')
			*s = '_';
}

/* A run's state while its steps are taken (run_begin .. run_end). */
struct run_live {
	lk_sim *sim;
	incline_track slope;
	lk_pose top0;
	const double *frame_t;
	int nframes, frame, conv_step;
	double h;
};

/* The poses of frames whose time has come at t. */
static void take_frames(run *r, double t)
{
	struct run_live *L = r->live;
	const lk_scene *scene = r->scene;
	while (L->frame < L->nframes && L->frame_t[L->frame] <= t + 1e-9) {
		for (int b = 0; b < scene->nbodies; ++b)
			lk_sim_pose(L->sim, b, &r->frames[(size_t)L->frame * scene->nbodies + b]);
		++L->frame;
	}
}

void run_abort(run *r)
{
	if (!r->live)
		return;
	incline_free(&r->live->slope);
	lk_sim_destroy(r->live->sim);
	free(r->live);
	r->live = NULL;
}

int run_begin(run *r, double seconds, double h, const double *frame_t, int nframes, int conv_step, char *err,
              size_t esz)
{
	const lk_scene *scene = r->scene;
	struct run_live *L = calloc(1, sizeof *L);
	if (!L) {
		snprintf(err, esz, "out of memory");
		return -1;
	}
	lk_sim_def def = {scene, r->engine, r->solver, r->budget, h, 0, 0};
	if (lk_sim_create(&def, &L->sim, err, esz) != LK_OK) {
		free(L);
		return -1;
	}
	r->live = L;
	lk_sim_step_in_turn(L->sim);
	L->frame_t = frame_t;
	L->nframes = nframes;
	L->conv_step = conv_step;
	L->h = h;
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
	int slope_ok = incline_begin(&L->slope, L->sim, scene, steps, L->h) == 0;
	if (!r->solve_ms || !r->step_ms || !r->res || !r->pen || !r->energy || !r->top_z || !r->top_drift_at || !r->work ||
	    !r->joint_err || !r->iters || !r->frames || !slope_ok) {
		snprintf(err, esz, "out of memory");
		run_abort(r);
		return -1;
	}
	if (scene->stack_top >= 0)
		lk_sim_pose(L->sim, scene->stack_top, &L->top0);
	take_frames(r, 0.0);
	r->fell = 0;
	r->top_drift_max = 0.0;
	r->fell_at = -1;
	return 0;
}

/* At the chosen step, the residual against iteration on the step's own problem, one long solve (seed 000
 * Fig. 3-5). */
static void convergence_solve(run *r)
{
	lk_solver_config cfg;
	char e2[200];
	/* an engine's own solver has no lcpkit configuration to replay */
	lk_problem *p = lk_config_parse(r->solver, &cfg, e2, sizeof e2) == LK_OK ? lk_sim_take_captured(r->live->sim) : NULL;
	if (!p)
		return;
	/* every method gets the work of 200 PGS sweeps, the unit in which Silcowitz et al. measure PGS-SM's time: a
	 * budget of 200 sweep-equivalents, whatever the spec's own limits */
	const int cap = 4096;
	cfg.budget = 200;
	cfg.adapt.cap = 1.0; /* auto's budget is a mean it may exceed fourfold: here a cap */
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

int run_step(run *r, int k, char *err, size_t esz)
{
	struct run_live *L = r->live;
	const lk_scene *scene = r->scene;
	lk_sim *sim = L->sim;
	lk_engine_step_stats st;
	memset(&st, 0, sizeof st);
	if (k + 1 == L->conv_step)
		lk_sim_capture_next(sim);
	if (lk_sim_step(sim, &st) != LK_OK) {
		snprintf(err, esz, "step %d failed", k);
		run_abort(r);
		return -1;
	}
	r->solve_ms[k] = 1e3 * st.solve_seconds;
	r->step_ms[k] = 1e3 * st.step_seconds;
	r->res[k] = st.res_final;
	r->iters[k] = st.iterations;
	r->work[k] = st.work;
	r->pen[k] = lk_sim_max_penetration(sim);
	r->energy[k] = lk_sim_kinetic_energy(sim);
	for (int j = 0; j < scene->njoints; ++j)
		r->joint_err[k] = fmax(r->joint_err[k], lk_sim_joint_error(sim, j));
	r->fallbacks = (double)st.fallback_total;
	double t = (k + 1) * L->h;
	incline_sample(&L->slope, sim, scene, t);
	if (scene->stack_top >= 0) {
		lk_pose p;
		lk_sim_pose(sim, scene->stack_top, &p);
		r->top_z[k] = p.pos[2];
		r->top_drift_at[k] = hypot(p.pos[0] - L->top0.pos[0], p.pos[1] - L->top0.pos[1]);
		if (!r->fell && p.pos[2] < scene->stack_top_height - scene->fall_drop) {
			r->fell = 1;
			r->fell_at = t;
		}
		/* the end's drift is where a swaying stack happens to be then; its largest tells the sway */
		if (!r->fell)
			r->top_drift_max = fmax(r->top_drift_max, r->top_drift_at[k]);
		if (k == r->steps - 1)
			r->top_drift = r->top_drift_at[k];
	}
	take_frames(r, t);
	if (k + 1 == L->conv_step)
		convergence_solve(r);
	return 0;
}

/* Whether a body set moving at the start (the slide's boxes, launched across the floor) still slides in the run's
 * last second, over which its energy at the end is taken: Coulomb's friction stops it after |v0| / (mu g), mu the
 * body's own (the floor's is the same in the scenes that launch bodies), later still under the box model's
 * per-axis bounds on a diagonal slide. There its energy is its speed, which the solver is to keep as friction
 * leaves it, and less of it is no better: an engine's own solver that leaves less than the LCP's answer is not
 * nearer it (docs/benchmarks.md, "Boxes that slide to the end"). */
static int slides_to_the_end(const lk_scene *sc, double t_end)
{
	const double g = length3(sc->gravity);
	for (int i = 0; i < sc->nbodies; ++i) {
		const lk_scene_body *b = &sc->bodies[i];
		const double v0 = length3(b->vel);
		if (b->mass > 0.0 && v0 > 0.0 && !(v0 < b->friction * g * (t_end - 1.0)))
			return 1;
	}
	return 0;
}

int run_end(run *r, const char *outdir, const char *csv_suffix, char *err, size_t esz)
{
	struct run_live *L = r->live;
	const lk_scene *scene = r->scene;
	const int steps = r->steps;
	const double h = L->h;
	/* pictures of times beyond the run show the final state */
	take_frames(r, INFINITY);
	incline_finish(&L->slope, L->sim, &r->accel_err, &r->creep);
	r->sliding_end = slides_to_the_end(scene, steps * h);
	run_abort(r);

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
	/* a pool or a pile at rest jitters: the energy of its last step alone is a draw from a range that
	 * spans several times its median (Bullet's 400-circle pool at 20 iterations, 0.8-4.8 J over its last
	 * five seconds under either solver), which the verdict's seeds do not band */
	memcpy(tmp, r->energy, sizeof(double) * (size_t)steps);
	r->energy_end = median_tail(tmp, steps, last);
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

void free_run(run *r)
{
	run_abort(r);
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

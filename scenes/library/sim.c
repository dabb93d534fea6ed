/* The engine-neutral face of a running scene. */
#include "sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const engine_names[LK_ENGINE_COUNT] = {"ode", "bullet"};

static lk_status joints_init(lk_sim *s);

const char *lk_engine_name(lk_engine e)
{
	return (unsigned)e < LK_ENGINE_COUNT ? engine_names[e] : "unknown";
}

int lk_engine_from_name(const char *name)
{
	for (int e = 0; e < LK_ENGINE_COUNT; ++e)
		if (name && !strcmp(name, engine_names[e]))
			return lk_engine_available((lk_engine)e) ? e : -1;
	return -1;
}

int lk_engine_available(lk_engine e)
{
	switch (e) {
#ifdef LCPKIT_HAVE_ODE
	case LK_ENGINE_ODE: return 1;
#endif
#ifdef LCPKIT_HAVE_BULLET
	case LK_ENGINE_BULLET: return 1;
#endif
	default: return 0;
	}
}

const char *lk_engine_default_solver(lk_engine e)
{
	for (const lk_engine_solver *s = lk_engine_solvers(); s->name; ++s)
		if (s->engine == e)
			return s->name;
	return "pgs";
}

lk_status lk_sim_check_solver(lk_engine e, const char *solver, char *err, size_t esz)
{
	if (!solver) {
		snprintf(err, esz, "no solver");
		return LK_ERR_PARSE;
	}
	const lk_engine_solver *own = lk_engine_solver_find(solver);
	if (own && own->engine == e)
		return LK_OK;
	if (own) {
		snprintf(err, esz, "solver %s belongs to %s, not %s", solver, lk_engine_name(own->engine),
		         lk_engine_name(e));
		return LK_ERR_PARSE;
	}
	lk_solver_config cfg;
	char perr[400], names[200];
	if (lk_config_parse(solver, &cfg, perr, sizeof perr) != LK_OK) {
		snprintf(err, esz, "%s; or an engine's own: %s", perr,
		         lk_engine_solver_list(LK_ENGINE_COUNT, names, sizeof names));
		return LK_ERR_PARSE;
	}
	return LK_OK;
}

lk_status lk_sim_create(const lk_sim_def *def, lk_sim **out, char *err, size_t esz)
{
	if (!out || !def || !def->scene) {
		snprintf(err, esz, "lk_sim_create: missing definition");
		return LK_ERR_INVALID_ARGUMENT;
	}
	*out = NULL;
	if (!lk_engine_available(def->engine)) {
		snprintf(err, esz, "engine %s is not built into this lcpkit", lk_engine_name(def->engine));
		return LK_ERR_UNSUPPORTED;
	}
	if (lk_sim_check_solver(def->engine, def->solver, err, esz) != LK_OK)
		return LK_ERR_PARSE;
	lk_sim *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, esz, "out of memory");
		return LK_ERR_NO_MEMORY;
	}
	s->scene = def->scene;
	s->engine = def->engine;
	s->h = def->h > 0 ? def->h : def->scene->h;
	lk_status st = LK_ERR_UNSUPPORTED;
#ifdef LCPKIT_HAVE_ODE
	if (def->engine == LK_ENGINE_ODE)
		st = lk__sim_create_ode(s, def, err, esz);
#endif
#ifdef LCPKIT_HAVE_BULLET
	if (def->engine == LK_ENGINE_BULLET)
		st = lk__sim_create_bullet(s, def, err, esz);
#endif
	if (st == LK_OK && (st = joints_init(s)) != LK_OK) {
		lk_sim_destroy(s);
		snprintf(err, esz, "out of memory");
		return st;
	}
	if (st != LK_OK) {
		free(s);
		return st;
	}
	*out = s;
	return LK_OK;
}

void lk_sim_destroy(lk_sim *s)
{
	if (!s)
		return;
	if (s->ops)
		s->ops->destroy(s);
	lk_problem_destroy(s->captured);
	lk_scene_destroy(s->own_scene);
	free(s->joint_anchor);
	free(s);
}

lk_status lk_sim_step(lk_sim *s, lk_engine_step_stats *stats)
{
	lk_engine_step_stats tmp;
	if (!stats)
		stats = &tmp;
	memset(stats, 0, sizeof *stats);
	return s->ops->step(s, stats);
}

void lk_sim_pose(const lk_sim *s, int i, lk_pose *pose)
{
	s->ops->pose(s, i, pose);
}

void lk_sim_velocity(const lk_sim *s, int i, double v[3], double w[3])
{
	s->ops->velocity(s, i, v, w);
}

double lk_sim_max_penetration(const lk_sim *s)
{
	return s->max_penetration;
}

void lk_sim_set_residuals(lk_sim *s, int on)
{
	s->ops->set_residuals(s, on != 0);
}

void lk_sim_step_in_turn(lk_sim *s)
{
	s->in_turn = 1;
}

void lk_sim_capture_next(lk_sim *s)
{
	s->capture_next = 1;
}

lk_problem *lk_sim_take_captured(lk_sim *s)
{
	lk_problem *p = s->captured;
	s->captured = NULL;
	return p;
}

double lk_sim_kinetic_energy(const lk_sim *s)
{
	double e = 0;
	for (int i = 0; i < s->scene->nbodies; ++i) {
		const lk_scene_body *b = &s->scene->bodies[i];
		if (b->mass <= 0)
			continue;
		lk_pose p;
		double v[3], w[3];
		lk_sim_pose(s, i, &p);
		lk_sim_velocity(s, i, v, w);
		e += lk_scene_body_energy(b, p.quat, v, w);
	}
	return e;
}

const lk_scene *lk_sim_scene(const lk_sim *s)
{
	return s->scene;
}

/* A deep copy with room for one more body; lk_scene_destroy frees it. */
static lk_scene *scene_copy(const lk_scene *sc)
{
	lk_scene *c = malloc(sizeof *c);
	if (!c)
		return NULL;
	*c = *sc;
	c->bodies = malloc(sizeof *c->bodies * (size_t)(sc->nbodies + 1));
	c->joints = sc->njoints > 0 ? malloc(sizeof *c->joints * (size_t)sc->njoints) : NULL;
	if (!c->bodies || (sc->njoints > 0 && !c->joints)) {
		lk_scene_destroy(c);
		return NULL;
	}
	if (sc->nbodies > 0)
		memcpy(c->bodies, sc->bodies, sizeof *c->bodies * (size_t)sc->nbodies);
	if (sc->njoints > 0)
		memcpy(c->joints, sc->joints, sizeof *c->joints * (size_t)sc->njoints);
	return c;
}

static int finite_n(const double *x, int n)
{
	for (int i = 0; i < n; ++i)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

lk_status lk_sim_add_body(lk_sim *s, const lk_scene_body *b)
{
	if (!s || !b)
		return LK_ERR_INVALID_ARGUMENT;
	if ((b->shape != LK_SHAPE_BOX && b->shape != LK_SHAPE_SPHERE) || !(b->mass > 0) || !isfinite(b->mass) ||
	    !finite_n(b->size, 3) || !finite_n(b->pos, 3) || !finite_n(b->quat, 4) || !finite_n(b->vel, 3) ||
	    !finite_n(b->angvel, 3) || !(b->size[0] > 0) ||
	    (b->shape == LK_SHAPE_BOX && !(b->size[1] > 0 && b->size[2] > 0)) || !(b->friction >= 0) ||
	    !(b->restitution >= 0))
		return LK_ERR_INVALID_ARGUMENT;
	double qn = sqrt(b->quat[0] * b->quat[0] + b->quat[1] * b->quat[1] + b->quat[2] * b->quat[2] +
	                 b->quat[3] * b->quat[3]);
	if (!(qn > 0) || !isfinite(qn))
		return LK_ERR_INVALID_ARGUMENT;
	if (!s->ops || !s->ops->add_body)
		return LK_ERR_UNSUPPORTED;
	if (!s->own_scene) {
		if (!(s->own_scene = scene_copy(s->scene)))
			return LK_ERR_NO_MEMORY;
		s->scene = s->own_scene;
	} else {
		lk_scene_body *nb = realloc(s->own_scene->bodies, sizeof *nb * (size_t)(s->own_scene->nbodies + 1));
		if (!nb)
			return LK_ERR_NO_MEMORY;
		s->own_scene->bodies = nb;
	}
	lk_scene *sc = s->own_scene;
	lk_scene_body *nb = &sc->bodies[sc->nbodies];
	*nb = *b;
	for (int k = 0; k < 4; ++k)
		nb->quat[k] /= qn;
	if (sc->plane2d) {
		/* 2D scenes keep every dynamic body in the x-z plane, turned about y only */
		nb->pos[1] = nb->vel[1] = nb->angvel[0] = nb->angvel[2] = 0;
		double qy = hypot(nb->quat[0], nb->quat[2]);
		nb->quat[0] = qy > 0 ? nb->quat[0] / qy : 1;
		nb->quat[2] = qy > 0 ? nb->quat[2] / qy : 0;
		nb->quat[1] = nb->quat[3] = 0;
	}
	++sc->nbodies;
	lk_status st = s->ops->add_body(s, sc->nbodies - 1);
	if (st != LK_OK)
		--sc->nbodies;
	return st;
}

/* v turned by the unit quaternion q (w, x, y, z), or by its inverse: v + 2w (u x v) + 2 u x (u x v) */
static void quat_turn(const double q[4], int inverse, const double v[3], double out[3])
{
	double sgn = inverse ? -1 : 1, u[3] = {sgn * q[1], sgn * q[2], sgn * q[3]};
	double t[3] = {2 * (u[1] * v[2] - u[2] * v[1]), 2 * (u[2] * v[0] - u[0] * v[2]), 2 * (u[0] * v[1] - u[1] * v[0])};
	out[0] = v[0] + q[0] * t[0] + u[1] * t[2] - u[2] * t[1];
	out[1] = v[1] + q[0] * t[1] + u[2] * t[0] - u[0] * t[2];
	out[2] = v[2] + q[0] * t[2] + u[0] * t[1] - u[1] * t[0];
}

/* The joint's anchor in the frame of its side k: the world anchor for the world, else body-local. */
static void anchor_local(const lk_sim *s, const lk_scene_joint *j, int k, double out[3])
{
	if (j->body[k] < 0) {
		memcpy(out, j->anchor, 3 * sizeof(double));
		return;
	}
	lk_pose p;
	lk_sim_pose(s, j->body[k], &p);
	double d[3] = {j->anchor[0] - p.pos[0], j->anchor[1] - p.pos[1], j->anchor[2] - p.pos[2]};
	quat_turn(p.quat, 1, d, out);
}

static void anchor_world(const lk_sim *s, const lk_scene_joint *j, int k, double out[3])
{
	const double *a = s->joint_anchor[j - s->scene->joints][k];
	if (j->body[k] < 0) {
		memcpy(out, a, 3 * sizeof(double));
		return;
	}
	lk_pose p;
	lk_sim_pose(s, j->body[k], &p);
	quat_turn(p.quat, 0, a, out);
	for (int c = 0; c < 3; ++c)
		out[c] += p.pos[c];
}

/* The joints' anchors in their bodies' frames, from the poses the engine starts with. */
static lk_status joints_init(lk_sim *s)
{
	int n = s->scene->njoints;
	if (n <= 0)
		return LK_OK;
	if (!(s->joint_anchor = malloc(sizeof *s->joint_anchor * (size_t)n)))
		return LK_ERR_NO_MEMORY;
	for (int i = 0; i < n; ++i)
		for (int k = 0; k < 2; ++k)
			anchor_local(s, &s->scene->joints[i], k, s->joint_anchor[i][k]);
	return LK_OK;
}

double lk_sim_joint_error(const lk_sim *s, int j)
{
	if (!s || !s->joint_anchor || j < 0 || j >= s->scene->njoints)
		return 0;
	double a[3], b[3];
	anchor_world(s, &s->scene->joints[j], 0, a);
	anchor_world(s, &s->scene->joints[j], 1, b);
	return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

double lk_sim_pair_friction(const lk_sim *s, int a, int b)
{
	const lk_scene_body *x = &s->scene->bodies[a], *y = &s->scene->bodies[b];
	(void)x, (void)y; /* a build without either engine reads neither */
	switch (s->engine) {
#ifdef LCPKIT_HAVE_ODE
	case LK_ENGINE_ODE: return lk__sim_ode_pair_friction(x, y);
#endif
#ifdef LCPKIT_HAVE_BULLET
	case LK_ENGINE_BULLET: return lk__sim_bullet_pair_friction(s->scene, x, y);
#endif
	default: return NAN;
	}
}

/* Scenes in ODE: the scene's bodies, ODE's own collision detection and contact joints, and every step
 * through lk_ode_world_step (which runs ODE's own steppers too, for A/B). */
#include "sim_internal.h"
#include "quat.h"
#include "lcpkit/ode.h"

#include <math.h>
#include <ode/ode.h>
#include <ode/threading_impl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CONTACTS 8

typedef struct ode_sim {
	dWorldID world;
	dSpaceID space;
	dJointGroupID contacts;
	lk_ode *ctx;
	dThreadingImplementationID threading; /* the world's own; see lk__sim_create_ode */
	dThreadingThreadPoolID pool;          /* the threads serving it (engine_threads > 0), or NULL */
	dBodyID *bodies;   /* per scene body; NULL for static ones */
	dGeomID *geoms;
	int plane2d;       /* scene (x, y, z) is ODE (x, z, -y): Plane2D keeps bodies in ODE's z = 0 plane */
	double max_depth;
	unsigned long rand_seed; /* stepped in turn: this world's state of ODE's global random generator */
} ode_sim;

static const double S = 0.70710678118654752440; /* sin 45 deg */

/* scene -> ODE for 2D scenes: a rotation by -90 deg about x, so scene z (up) is ODE y */
static void to_ode(const ode_sim *o, const double in[3], double out[3])
{
	double x = in[0], y = in[1], z = in[2];
	if (o->plane2d) {
		out[0] = x;
		out[1] = z;
		out[2] = -y;
	} else {
		out[0] = x;
		out[1] = y;
		out[2] = z;
	}
}

static void from_ode(const ode_sim *o, const double in[3], double out[3])
{
	double x = in[0], y = in[1], z = in[2];
	if (o->plane2d) {
		out[0] = x;
		out[1] = -z;
		out[2] = y;
	} else {
		out[0] = x;
		out[1] = y;
		out[2] = z;
	}
}

static void quat_to_ode(const ode_sim *o, const double q[4], double out[4])
{
	const double r[4] = {S, -S, 0, 0};
	if (o->plane2d)
		lk_quat_mul(r, q, out);
	else
		memcpy(out, q, 4 * sizeof(double));
}

static void quat_from_ode(const ode_sim *o, const double q[4], double out[4])
{
	const double rc[4] = {S, S, 0, 0};
	if (o->plane2d)
		lk_quat_mul(rc, q, out);
	else
		memcpy(out, q, 4 * sizeof(double));
}

static void near_callback(void *data, dGeomID g1, dGeomID g2)
{
	lk_sim *s = data;
	ode_sim *o = s->impl;
	dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
	if (!b1 && !b2)
		return;
	if (b1 && b2 && dAreConnectedExcluding(b1, b2, dJointTypeContact))
		return;
	dContactGeom cg[MAX_CONTACTS];
	int n = dCollide(g1, g2, MAX_CONTACTS, cg, sizeof cg[0]);
	if (n <= 0)
		return;
	const lk_scene_body *m1 = &s->scene->bodies[(intptr_t)dGeomGetData(g1) - 1];
	const lk_scene_body *m2 = &s->scene->bodies[(intptr_t)dGeomGetData(g2) - 1];
	/* materials combine as geometric means, the same rule the Bullet scenes use */
	double mu = lk__sim_ode_pair_friction(m1, m2), e = sqrt(m1->restitution * m2->restitution);
	for (int i = 0; i < n; ++i) {
		dContact c;
		memset(&c, 0, sizeof c);
		c.geom = cg[i];
		c.surface.mode = dContactApprox1 | (e > 0 ? dContactBounce : 0);
		c.surface.mu = mu;
		c.surface.bounce = e;
		c.surface.bounce_vel = 0.1;
		if (cg[i].depth > o->max_depth)
			o->max_depth = cg[i].depth;
		dJointID j = dJointCreateContact(o->world, o->contacts, &c);
		dJointAttach(j, b1, b2);
	}
}

static void ode_destroy(lk_sim *s)
{
	ode_sim *o = s->impl;
	if (!o)
		return;
	lk_ode_destroy(o->ctx);
	if (o->contacts)
		dJointGroupDestroy(o->contacts);
	if (o->space)
		dSpaceDestroy(o->space);
	/* ODE frees the call-wait object it allocated from the implementation when the world lets go of it, so
	 * the world detaches before the implementation is freed */
	if (o->world && o->threading)
		dWorldSetStepThreadingImplementation(o->world, NULL, NULL);
	if (o->pool) {
		dThreadingImplementationShutdownProcessing(o->threading);
		dThreadingThreadPoolWaitIdleState(o->pool);
		dThreadingFreeThreadPool(o->pool);
	}
	if (o->threading)
		dThreadingFreeImplementation(o->threading);
	if (o->world)
		dWorldDestroy(o->world);
	free(o->bodies);
	free(o->geoms);
	free(o);
	s->impl = NULL;
	dCloseODE();
}

static lk_status ode_step(lk_sim *s, lk_engine_step_stats *st)
{
	ode_sim *o = s->impl;
	/* quickstep reorders constraints with ODE's global random generator: stepped in turn with other worlds,
	 * each carries its own state of it (lk_sim_step_in_turn) */
	if (s->in_turn)
		dRandSetSeed(o->rand_seed);
	double t0 = lk_stats_now();
	o->max_depth = 0;
	dSpaceCollide(o->space, s, near_callback);
	if (s->capture_next) {
		s->capture_next = 0;
		lk_problem_destroy(s->captured);
		s->captured = lk_problem_create(LK_FORM_ROWS);
		if (s->captured && lk_ode_extract(o->ctx, s->h, s->captured) != LK_OK) {
			lk_problem_destroy(s->captured);
			s->captured = NULL;
		}
	}
	lk_status rc = lk_ode_world_step(o->ctx, s->h);
	dJointGroupEmpty(o->contacts);
	double t1 = lk_stats_now();
	if (s->in_turn)
		o->rand_seed = dRandGetSeed();
	if (rc != LK_OK && rc != LK_ERR_UNSUPPORTED && lk_ode_get_stepper(o->ctx) != LK_ODE_LCPKIT)
		return rc;
	lk_ode_get_stats(o->ctx, st);
	st->step_seconds = t1 - t0; /* the whole step, collision detection included */
	s->max_penetration = o->max_depth;
	return LK_OK;
}

static void ode_pose(const lk_sim *s, int i, lk_pose *p)
{
	const ode_sim *o = s->impl;
	const lk_scene_body *b = &s->scene->bodies[i];
	if (!o->bodies[i]) {
		memcpy(p->pos, b->pos, sizeof p->pos);
		memcpy(p->quat, b->quat, sizeof p->quat);
		return;
	}
	const dReal *x = dBodyGetPosition(o->bodies[i]), *q = dBodyGetQuaternion(o->bodies[i]);
	double xx[3] = {x[0], x[1], x[2]}, qq[4] = {q[0], q[1], q[2], q[3]};
	from_ode(o, xx, p->pos);
	quat_from_ode(o, qq, p->quat);
}

static void ode_velocity(const lk_sim *s, int i, double v[3], double w[3])
{
	const ode_sim *o = s->impl;
	if (!o->bodies[i]) {
		memset(v, 0, 3 * sizeof(double));
		memset(w, 0, 3 * sizeof(double));
		return;
	}
	const dReal *lv = dBodyGetLinearVel(o->bodies[i]), *av = dBodyGetAngularVel(o->bodies[i]);
	double a[3] = {lv[0], lv[1], lv[2]}, b[3] = {av[0], av[1], av[2]};
	from_ode(o, a, v);
	from_ode(o, b, w);
}

/* A dynamic box or sphere added to the running world (lk_sim_add_body has validated it). lk_ode finds its
 * bodies from the space every step, so the new body is solved from the next step on. */
static lk_status ode_add_body(lk_sim *s, int i)
{
	ode_sim *o = s->impl;
	const lk_scene_body *b = &s->scene->bodies[i];
	dBodyID *nb = realloc(o->bodies, sizeof *nb * (size_t)(i + 1));
	if (nb)
		o->bodies = nb;
	dGeomID *ng = realloc(o->geoms, sizeof *ng * (size_t)(i + 1));
	if (ng)
		o->geoms = ng;
	if (!nb || !ng)
		return LK_ERR_NO_MEMORY;
	double pos[3], q[4], v[3], w[3];
	to_ode(o, b->pos, pos);
	quat_to_ode(o, b->quat, q);
	to_ode(o, b->vel, v);
	to_ode(o, b->angvel, w);
	dMass m;
	dGeomID geom;
	if (b->shape == LK_SHAPE_SPHERE) {
		geom = dCreateSphere(o->space, b->size[0]);
		dMassSetSphereTotal(&m, b->mass, b->size[0]);
	} else {
		geom = dCreateBox(o->space, 2 * b->size[0], 2 * b->size[1], 2 * b->size[2]);
		dMassSetBoxTotal(&m, b->mass, 2 * b->size[0], 2 * b->size[1], 2 * b->size[2]);
	}
	dGeomSetData(geom, (void *)(intptr_t)(i + 1));
	dBodyID body = dBodyCreate(o->world);
	dBodySetMass(body, &m);
	dBodySetPosition(body, pos[0], pos[1], pos[2]);
	dQuaternion dq = {q[0], q[1], q[2], q[3]};
	dBodySetQuaternion(body, dq);
	dBodySetLinearVel(body, v[0], v[1], v[2]);
	dBodySetAngularVel(body, w[0], w[1], w[2]);
	dGeomSetBody(geom, body);
	o->geoms[i] = geom;
	o->bodies[i] = body;
	if (o->plane2d)
		dJointAttach(dJointCreatePlane2D(o->world, 0), body, 0);
	return LK_OK;
}

/* ODE has no cone limit: an angular motor in Euler mode bounds the twist about the axis, fixed in body[0],
 * and the two swing angles, each to the cone's half-angle, so the cone becomes a square one whose diagonal
 * reaches past it. */
static void ode_cone(ode_sim *o, const lk_scene_joint *j, dBodyID b0, dBodyID b1, const double ax[3])
{
	/* the second Euler axis: any unit vector normal to the twist axis, fixed in body[1] */
	double n = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]), u[3] = {ax[0] / n, ax[1] / n, ax[2] / n};
	double e[3] = {0, 0, 0}, p[3];
	e[fabs(u[0]) < 0.6 ? 0 : (fabs(u[1]) < 0.6 ? 1 : 2)] = 1;
	p[0] = u[1] * e[2] - u[2] * e[1];
	p[1] = u[2] * e[0] - u[0] * e[2];
	p[2] = u[0] * e[1] - u[1] * e[0];
	double pn = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
	dJointID m = dJointCreateAMotor(o->world, 0);
	dJointAttach(m, b0, b1);
	dJointSetAMotorMode(m, dAMotorEuler);
	dJointSetAMotorAxis(m, 0, 1, u[0], u[1], u[2]);
	dJointSetAMotorAxis(m, 2, b1 ? 2 : 0, p[0] / pn, p[1] / pn, p[2] / pn);
	dJointSetAMotorParam(m, dParamLoStop, -j->twist);
	dJointSetAMotorParam(m, dParamHiStop, j->twist);
	dJointSetAMotorParam(m, dParamLoStop2, -j->cone);
	dJointSetAMotorParam(m, dParamHiStop2, j->cone);
	dJointSetAMotorParam(m, dParamLoStop3, -j->cone);
	dJointSetAMotorParam(m, dParamHiStop3, j->cone);
}

/* A scene joint in ODE. Hinges and sliders take their limits and motor as the stops and motor of the joint;
 * ODE measures both of body1 relative to body2, the scene's body[0] relative to body[1]. */
static void ode_joint(ode_sim *o, const lk_scene_joint *j)
{
	dBodyID b0 = o->bodies[j->body[0]], b1 = j->body[1] >= 0 ? o->bodies[j->body[1]] : 0;
	double a[3], ax[3];
	to_ode(o, j->anchor, a);
	to_ode(o, j->axis, ax);
	dJointID jj;
	void (*set)(dJointID, int, dReal);
	if (j->type == LK_JOINT_BALL) {
		jj = dJointCreateBall(o->world, 0);
		dJointAttach(jj, b0, b1);
		dJointSetBallAnchor(jj, a[0], a[1], a[2]);
		if (j->cone > 0)
			ode_cone(o, j, b0, b1, ax);
		return;
	}
	if (j->type == LK_JOINT_SLIDER) {
		jj = dJointCreateSlider(o->world, 0);
		dJointAttach(jj, b0, b1);
		dJointSetSliderAxis(jj, ax[0], ax[1], ax[2]);
		set = dJointSetSliderParam;
	} else {
		jj = dJointCreateHinge(o->world, 0);
		dJointAttach(jj, b0, b1);
		dJointSetHingeAnchor(jj, a[0], a[1], a[2]);
		dJointSetHingeAxis(jj, ax[0], ax[1], ax[2]);
		set = dJointSetHingeParam;
	}
	if (j->lo <= j->hi) {
		set(jj, dParamLoStop, j->lo);
		set(jj, dParamHiStop, j->hi);
	}
	if (j->motor_fmax > 0) {
		set(jj, dParamVel, j->motor_vel);
		set(jj, dParamFMax, j->motor_fmax);
	}
}

static void ode_set_residuals(lk_sim *s, int on)
{
	lk_ode_set_ode_residual(((ode_sim *)s->impl)->ctx, on);
}

static const lk_sim_ops ode_ops = {ode_destroy, ode_step, ode_pose, ode_velocity, ode_add_body, ode_set_residuals};

lk_status lk__sim_create_ode(lk_sim *s, const lk_sim_def *def, char *err, size_t esz)
{
	const lk_scene *sc = def->scene;
	dInitODE2(0);
	/* quickstep reorders constraints with ODE's global random generator: every world starts it from 0 (and,
	 * stepped in turn, keeps its own state of it from there: rand_seed), which makes every run of a scene the
	 * same */
	dRandSetSeed(0);
	ode_sim *o = calloc(1, sizeof *o);
	if (!o) {
		dCloseODE();
		snprintf(err, esz, "out of memory");
		return LK_ERR_NO_MEMORY;
	}
	s->impl = o;
	s->ops = &ode_ops;
	o->plane2d = sc->plane2d;
	o->bodies = calloc((size_t)sc->nbodies, sizeof *o->bodies);
	o->geoms = calloc((size_t)sc->nbodies, sizeof *o->geoms);
	o->world = dWorldCreate();
	o->space = dHashSpaceCreate(0);
	o->contacts = dJointGroupCreate(0);
	/* Every world steps its islands through a threading implementation; without one of its own it uses
	 * ODE's default, one object for all worlds, and two worlds stepping in two threads corrupt its job list
	 * (ODE 0.16 aborts in ReleaseAJob). A self-threaded implementation per world runs the jobs in the
	 * stepping thread, as the default does, so a world's steps are the same with or without it. */
	if (def->engine_threads > 0) {
		/* a threaded program's world: its steps on a pool of threads (ODE's islands, and lcpkit's sweeps,
		 * lent below) */
		o->threading = dThreadingAllocateMultiThreadedImplementation();
		o->pool = o->threading ? dThreadingAllocateThreadPool((unsigned)def->engine_threads, 0,
		                                                      dAllocateFlagBasicData, NULL)
		                       : NULL;
		if (o->pool)
			dThreadingThreadPoolServeMultiThreadedImplementation(o->pool, o->threading);
	} else {
		o->threading = dThreadingAllocateSelfThreadedImplementation();
	}
	if (!o->bodies || !o->geoms || !o->threading || (def->engine_threads > 0 && !o->pool)) {
		ode_destroy(s);
		snprintf(err, esz, "out of memory");
		return LK_ERR_NO_MEMORY;
	}
	dWorldSetStepThreadingImplementation(o->world, dThreadingImplementationGetFunctions(o->threading),
	                                     o->threading);
	double g[3];
	to_ode(o, sc->gravity, g);
	dWorldSetGravity(o->world, g[0], g[1], g[2]);
	dWorldSetQuickStepNumIterations(o->world, def->iterations > 0 ? def->iterations : 20);
	dWorldSetContactSurfaceLayer(o->world, LK_SIM_CONTACT_LAYER);
	dWorldSetAutoDisableFlag(o->world, 0);

	for (int i = 0; i < sc->nbodies; ++i) {
		const lk_scene_body *b = &sc->bodies[i];
		double pos[3], q[4];
		to_ode(o, b->pos, pos);
		quat_to_ode(o, b->quat, q);
		dGeomID geom;
		if (b->shape == LK_SHAPE_PLANE) {
			geom = o->plane2d ? dCreatePlane(o->space, 0, 1, 0, 0) : dCreatePlane(o->space, 0, 0, 1, 0);
		} else if (b->shape == LK_SHAPE_SPHERE) {
			geom = dCreateSphere(o->space, b->size[0]);
		} else if (b->shape == LK_SHAPE_CAPSULE) {
			geom = dCreateCapsule(o->space, b->size[0], 2 * b->size[1]);
		} else {
			double sz[3] = {2 * b->size[0], 2 * b->size[1], 2 * b->size[2]};
			/* box extents live in the body frame, which the 2D mapping does not change */
			geom = dCreateBox(o->space, sz[0], sz[1], sz[2]);
		}
		dGeomSetData(geom, (void *)(intptr_t)(i + 1));
		o->geoms[i] = geom;
		if (b->shape == LK_SHAPE_PLANE)
			continue;
		dQuaternion dq = {q[0], q[1], q[2], q[3]};
		if (b->mass <= 0) {
			dGeomSetPosition(geom, pos[0], pos[1], pos[2]);
			dGeomSetQuaternion(geom, dq);
			continue;
		}
		dBodyID body = dBodyCreate(o->world);
		dMass m;
		if (b->shape == LK_SHAPE_SPHERE)
			dMassSetSphereTotal(&m, b->mass, b->size[0]);
		else if (b->shape == LK_SHAPE_CAPSULE)
			dMassSetCapsuleTotal(&m, b->mass, 3, b->size[0], 2 * b->size[1]);
		else
			dMassSetBoxTotal(&m, b->mass, 2 * b->size[0], 2 * b->size[1], 2 * b->size[2]);
		dBodySetMass(body, &m);
		dBodySetPosition(body, pos[0], pos[1], pos[2]);
		dBodySetQuaternion(body, dq);
		double v[3], w[3];
		to_ode(o, b->vel, v);
		to_ode(o, b->angvel, w);
		dBodySetLinearVel(body, v[0], v[1], v[2]);
		dBodySetAngularVel(body, w[0], w[1], w[2]);
		dGeomSetBody(geom, body);
		o->bodies[i] = body;
		if (o->plane2d) {
			dJointID p2 = dJointCreatePlane2D(o->world, 0);
			dJointAttach(p2, body, 0);
		}
	}
	for (int k = 0; k < sc->njoints; ++k)
		ode_joint(o, &sc->joints[k]);

	lk_ode_def od = lk_ode_default_def();
	od.solver = def->solver;
	od.whole_world = 1; /* every body has a geom in o->space, the registered space */
	od.ode_residual = 1; /* RES in the statistics (lk_sim_set_residuals turns it off for timing runs) */
	if (lk_ode_create(o->world, &od, &o->ctx, err, esz) != LK_OK) {
		ode_destroy(s);
		return LK_ERR_UNSUPPORTED;
	}
	if (o->pool && lk_ode_set_threading(o->ctx, dThreadingImplementationGetFunctions(o->threading), o->threading) !=
	                   LK_OK) {
		snprintf(err, esz, "%s", lk_ode_error(o->ctx));
		ode_destroy(s);
		return LK_ERR_INVALID_ARGUMENT;
	}
	if (lk_ode_add_space(o->ctx, o->space) != LK_OK) {
		snprintf(err, esz, "%s", lk_ode_error(o->ctx));
		ode_destroy(s);
		return LK_ERR_INVALID_ARGUMENT;
	}
	return LK_OK;
}

double lk__sim_ode_pair_friction(const lk_scene_body *a, const lk_scene_body *b)
{
	return sqrt(a->friction * b->friction);
}

/* A small ODE scene shared by the preload test program (plain ODE) and the preload test (the same scene on
 * lk_ode_world_step): boxes dropped on the ground and a hinged pendulum, stepped and printed in full
 * precision. Only ODE's C API; `step` and `on_body` let the caller choose the stepper and see every body. */
#ifndef LCPKIT_ODE_PRELOAD_SCENE_H
#define LCPKIT_ODE_PRELOAD_SCENE_H

#include <ode/ode.h>

#include <stdio.h>
#include <string.h>

/* 1: every step also has a contact with a zero normal between the first box and the world, as ODE 0.16's
 * convex-convex collider returns them (ODE's own steppers assert on its rows). */
static int pl_zero_normal;

typedef struct pl_scene {
	dWorldID w;
	dSpaceID s;
	dJointGroupID contacts;
	dBodyID body[8];
	int nbody;
} pl_scene;

static void pl_near(void *data, dGeomID a, dGeomID b)
{
	pl_scene *sc = (pl_scene *)data;
	dContact c[4];
	int n = dCollide(a, b, 4, &c[0].geom, sizeof c[0]);
	for (int i = 0; i < n; ++i) {
		c[i].surface.mode = dContactApprox1 | dContactBounce;
		c[i].surface.mu = 0.6;
		c[i].surface.bounce = 0.2;
		c[i].surface.bounce_vel = 0.1;
		dJointID j = dJointCreateContact(sc->w, sc->contacts, &c[i]);
		dJointAttach(j, dGeomGetBody(a), dGeomGetBody(b));
	}
}

/* Builds, steps `steps` times with step(world, h, user) and prints every body's position and velocity, in
 * an initialised ODE. on_world (or NULL) sees the world after its creation (created = 1) and before its
 * destruction (created = 0). */
static void pl_scene_run_world(int steps, int (*step)(dWorldID, dReal, void *), void (*on_body)(dBodyID, void *),
                               void (*on_world)(dWorldID, int created, void *), void *user, FILE *out)
{
	pl_scene sc;
	sc.w = dWorldCreate();
	if (on_world)
		on_world(sc.w, 1, user);
	dWorldSetGravity(sc.w, 0, 0, -9.81);
	sc.s = dHashSpaceCreate(0);
	sc.contacts = dJointGroupCreate(0);
	sc.nbody = 0;
	dCreatePlane(sc.s, 0, 0, 1, 0);
	dMass m;
	for (int i = 0; i < 4; ++i) {
		dBodyID b = dBodyCreate(sc.w);
		if (on_body)
			on_body(b, user);
		dMassSetBox(&m, 1, 0.4, 0.4, 0.4);
		dBodySetMass(b, &m);
		dBodySetPosition(b, 0.1 * i, 0.05 * i, 0.25 + 0.45 * i);
		dMatrix3 R;
		dRFromAxisAndAngle(R, 1, 1, 0, 0.1 * i);
		dBodySetRotation(b, R);
		dGeomID g = dCreateBox(sc.s, 0.4, 0.4, 0.4);
		dGeomSetBody(g, b);
		sc.body[sc.nbody++] = b;
	}
	dBodyID p = dBodyCreate(sc.w);
	if (on_body)
		on_body(p, user);
	dMassSetSphere(&m, 1, 0.1);
	dBodySetMass(p, &m);
	dBodySetPosition(p, 2, 0, 2);
	dJointID h = dJointCreateHinge(sc.w, 0);
	dJointAttach(h, p, 0);
	dJointSetHingeAnchor(h, 1.5, 0, 2);
	dJointSetHingeAxis(h, 0, 1, 0);
	sc.body[sc.nbody++] = p;
	for (int s = 0; s < steps; ++s) {
		dSpaceCollide(sc.s, &sc, pl_near);
		if (pl_zero_normal) {
			dContact c;
			memset(&c, 0, sizeof c);
			const dReal *at = dBodyGetPosition(sc.body[0]);
			c.geom.pos[0] = at[0], c.geom.pos[1] = at[1], c.geom.pos[2] = at[2] - 0.2;
			c.geom.depth = 0.001;
			c.surface.mode = dContactApprox1;
			c.surface.mu = 0.6;
			dJointAttach(dJointCreateContact(sc.w, sc.contacts, &c), sc.body[0], 0);
		}
		step(sc.w, 0.01, user);
		dJointGroupEmpty(sc.contacts);
	}
	for (int i = 0; i < sc.nbody; ++i) {
		const dReal *x = dBodyGetPosition(sc.body[i]), *v = dBodyGetLinearVel(sc.body[i]);
		fprintf(out, "%d %.17g %.17g %.17g %.17g %.17g %.17g\n", i, x[0], x[1], x[2], v[0], v[1], v[2]);
	}
	dJointGroupDestroy(sc.contacts);
	dSpaceDestroy(sc.s);
	if (on_world)
		on_world(sc.w, 0, user);
	dWorldDestroy(sc.w);
}

/* The same, initialising and closing ODE around it. */
static void pl_scene_run(int steps, int (*step)(dWorldID, dReal, void *), void (*on_body)(dBodyID, void *),
                         void *user, FILE *out)
{
	dInitODE2(0);
	pl_scene_run_world(steps, step, on_body, NULL, user, out);
	dCloseODE();
}

#endif

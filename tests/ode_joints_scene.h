/* Every one of ODE's 17 joint types in one world, each in its own corner so that they do not touch: the
 * joints with a limit and a motor (hinge, slider, universal, hinge2, angular motor, PR, PU, piston) start
 * at a limit with the motor on (dParamFMax > 0), half of them driving into the limit and half away from
 * it, which is the case where ODE's getInfo2 applies the motor force itself (dxJointLimitMotor::addLimot);
 * a transmission joint couples two gears, one of them motored, so its phase keeps changing; a ball rolls
 * on the ground (contacts). Only ODE's C API: shared by the ODE programs of the preload tests (plain ODE)
 * and by the tests that step the same world through lcpkit. */
#ifndef LCPKIT_ODE_JOINTS_SCENE_H
#define LCPKIT_ODE_JOINTS_SCENE_H

#include <ode/ode.h>

#include <stdio.h>
#include <string.h>

#define JS_MAX_BODIES 40

typedef struct js_scene {
	dWorldID w;
	dSpaceID s;
	dJointGroupID contacts;
	dBodyID body[JS_MAX_BODIES];
	int nbody;
	int types[dJointTypeTransmission + 1]; /* joints made of each type */
} js_scene;

static dBodyID js_box(js_scene *sc, double x, double y, double z, double side)
{
	dMass m;
	dBodyID b = dBodyCreate(sc->w);
	dMassSetBox(&m, 1, side, side, side);
	dBodySetMass(b, &m);
	dBodySetPosition(b, x, y, z);
	if (sc->nbody < JS_MAX_BODIES)
		sc->body[sc->nbody++] = b;
	return b;
}

static dJointID js_joint(js_scene *sc, dJointID j, dBodyID a, dBodyID b)
{
	dJointAttach(j, a, b);
	sc->types[dJointGetType(j)]++;
	return j;
}

/* lo = 0 < hi with the joint's coordinate at 0: at the low limit from the start; the motor drives at
 * speed vel (into the limit for vel < 0) with force fmax. */
static void js_limit_motor(void (*set)(dJointID, int, dReal), dJointID j, int lo, int hi, int vel, int fmax,
                           double v)
{
	set(j, lo, 0);
	set(j, hi, 0.6);
	set(j, vel, v);
	set(j, fmax, 40);
}

static void js_near(void *data, dGeomID a, dGeomID b)
{
	js_scene *sc = (js_scene *)data;
	dContact c[4];
	int n = dCollide(a, b, 4, &c[0].geom, sizeof c[0]);
	for (int i = 0; i < n; ++i) {
		c[i].surface.mode = dContactApprox1;
		c[i].surface.mu = 0.8;
		dJointID j = dJointCreateContact(sc->w, sc->contacts, &c[i]);
		js_joint(sc, j, dGeomGetBody(a), dGeomGetBody(b));
	}
}

/* Builds the scene in an initialised ODE: bodies in creation order in sc->body. */
static void js_build(js_scene *sc)
{
	memset(sc, 0, sizeof *sc);
	sc->w = dWorldCreate();
	dWorldSetGravity(sc->w, 0, 0, -9.81);
	sc->s = dHashSpaceCreate(0);
	sc->contacts = dJointGroupCreate(0);
	dCreatePlane(sc->s, 0, 0, 1, 0);

	/* a ball rolling on the ground */
	dBodyID ball = js_box(sc, 0, -6, 0.3, 0.4);
	dMass m;
	dMassSetSphere(&m, 1, 0.3);
	dBodySetMass(ball, &m);
	dGeomSetBody(dCreateSphere(sc->s, 0.3), ball);
	dBodySetLinearVel(ball, 1, 0.2, 0);

	/* hinge to the world about y, at its low stop, motor into the stop */
	dBodyID b = js_box(sc, 0, 0, 2, 0.3);
	dJointID j = js_joint(sc, dJointCreateHinge(sc->w, 0), b, 0);
	dJointSetHingeAnchor(j, -0.5, 0, 2);
	dJointSetHingeAxis(j, 0, 1, 0);
	js_limit_motor(dJointSetHingeParam, j, dParamLoStop, dParamHiStop, dParamVel, dParamFMax, -1.5);

	/* slider to the world along z, at its low stop, motor away from it (fudge factor) */
	b = js_box(sc, 2, 0, 2, 0.3);
	j = js_joint(sc, dJointCreateSlider(sc->w, 0), b, 0);
	dJointSetSliderAxis(j, 0, 0, 1);
	js_limit_motor(dJointSetSliderParam, j, dParamLoStop, dParamHiStop, dParamVel, dParamFMax, 0.5);

	/* slider between two bodies (the torque decoupling of a two-body linear limit), into the stop */
	dBodyID a = js_box(sc, 4, 0, 2, 0.3);
	b = js_box(sc, 4.5, 0.2, 2, 0.3);
	j = js_joint(sc, dJointCreateSlider(sc->w, 0), a, b);
	dJointSetSliderAxis(j, 1, 0, 0);
	js_limit_motor(dJointSetSliderParam, j, dParamLoStop, dParamHiStop, dParamVel, dParamFMax, -0.7);
	dJointSetHingeAnchor(js_joint(sc, dJointCreateHinge(sc->w, 0), a, 0), 4, 0, 2.4);

	/* universal to the world: both axes at their low stops, motors into and away */
	b = js_box(sc, 6, 0, 2, 0.3);
	j = js_joint(sc, dJointCreateUniversal(sc->w, 0), b, 0);
	dJointSetUniversalAnchor(j, 6, 0, 2.5);
	dJointSetUniversalAxis1(j, 1, 0, 0);
	dJointSetUniversalAxis2(j, 0, 1, 0);
	js_limit_motor(dJointSetUniversalParam, j, dParamLoStop, dParamHiStop, dParamVel, dParamFMax, -1);
	js_limit_motor(dJointSetUniversalParam, j, dParamLoStop2, dParamHiStop2, dParamVel2, dParamFMax2, 1);

	/* hinge2 (a wheel on a heavier carrier): steering axis at its low stop with a motor, wheel motored */
	a = js_box(sc, 8, 0, 2, 0.5);
	dJointSetBallAnchor(js_joint(sc, dJointCreateBall(sc->w, 0), a, 0), 8, 0, 2.6);
	b = js_box(sc, 8.6, 0, 2, 0.3);
	j = js_joint(sc, dJointCreateHinge2(sc->w, 0), a, b);
	dJointSetHinge2Anchor(j, 8.6, 0, 2);
	const dReal ax1[3] = {0, 0, 1}, ax2[3] = {0, 1, 0};
	dJointSetHinge2Axes(j, ax1, ax2);
	js_limit_motor(dJointSetHinge2Param, j, dParamLoStop, dParamHiStop, dParamVel, dParamFMax, -2);
	dJointSetHinge2Param(j, dParamVel2, 3);
	dJointSetHinge2Param(j, dParamFMax2, 5);

	/* angular motor (user mode, one axis, angle 0 = its low stop) on a body held by a ball joint */
	b = js_box(sc, 10, 0, 2, 0.3);
	dJointSetBallAnchor(js_joint(sc, dJointCreateBall(sc->w, 0), b, 0), 10, 0, 2.4);
	j = js_joint(sc, dJointCreateAMotor(sc->w, 0), b, 0);
	dJointSetAMotorNumAxes(j, 1);
	dJointSetAMotorAxis(j, 0, 1, 0, 0, 1);
	dJointSetAMotorAngle(j, 0, 0);
	js_limit_motor(dJointSetAMotorParam, j, dParamLoStop, dParamHiStop, dParamVel, dParamFMax, -1);

	/* linear motor (on a body held by a ball joint) and plane-2D joint with motors (no limits: ODE tests
	 * none for them) */
	b = js_box(sc, 12, 0, 2, 0.3);
	dJointSetBallAnchor(js_joint(sc, dJointCreateBall(sc->w, 0), b, 0), 12, 0, 2.5);
	j = js_joint(sc, dJointCreateLMotor(sc->w, 0), b, 0);
	dJointSetLMotorNumAxes(j, 1);
	dJointSetLMotorAxis(j, 0, 0, 1, 0, 0);
	dJointSetLMotorParam(j, dParamVel, 0.5);
	dJointSetLMotorParam(j, dParamFMax, 3);
	b = js_box(sc, 14, 0, 0, 0.3);
	j = js_joint(sc, dJointCreatePlane2D(sc->w, 0), b, 0);
	dJointSetPlane2DXParam(j, dParamVel, 0.3);
	dJointSetPlane2DXParam(j, dParamFMax, 2);
	dJointSetPlane2DAngleParam(j, dParamVel, 1);
	dJointSetPlane2DAngleParam(j, dParamFMax, 2);

	/* PR: prismatic along z at its low stop (motor into it), rotoide about x at its low stop (away) */
	b = js_box(sc, 0, 4, 2, 0.3);
	j = js_joint(sc, dJointCreatePR(sc->w, 0), b, 0);
	dJointSetPRAnchor(j, 0, 4, 2);
	dJointSetPRAxis1(j, 0, 0, 1);
	dJointSetPRAxis2(j, 1, 0, 0);
	js_limit_motor(dJointSetPRParam, j, dParamLoStop, dParamHiStop, dParamVel, dParamFMax, -0.5);
	js_limit_motor(dJointSetPRParam, j, dParamLoStop2, dParamHiStop2, dParamVel2, dParamFMax2, 1);

	/* PU: both rotations at their low stops with motors, the prismatic axis too */
	b = js_box(sc, 2, 4, 2, 0.3);
	j = js_joint(sc, dJointCreatePU(sc->w, 0), b, 0);
	dJointSetPUAnchor(j, 2, 4, 2.3);
	dJointSetPUAxis1(j, 1, 0, 0);
	dJointSetPUAxis2(j, 0, 1, 0);
	dJointSetPUAxis3(j, 0, 0, 1);
	js_limit_motor(dJointSetPUParam, j, dParamLoStop1, dParamHiStop1, dParamVel1, dParamFMax1, -1);
	js_limit_motor(dJointSetPUParam, j, dParamLoStop2, dParamHiStop2, dParamVel2, dParamFMax2, 1);
	js_limit_motor(dJointSetPUParam, j, dParamLoStop3, dParamHiStop3, dParamVel3, dParamFMax3, -0.5);

	/* piston between two bodies: the slide at its low stop (into it), the rotation at its low stop */
	a = js_box(sc, 4, 4, 2, 0.3);
	dJointSetBallAnchor(js_joint(sc, dJointCreateBall(sc->w, 0), a, 0), 4, 4, 2.4);
	b = js_box(sc, 4.6, 4, 2, 0.3);
	j = js_joint(sc, dJointCreatePiston(sc->w, 0), a, b);
	dJointSetPistonAnchor(j, 4.3, 4, 2);
	dJointSetPistonAxis(j, 1, 0, 0);
	js_limit_motor(dJointSetPistonParam, j, dParamLoStop, dParamHiStop, dParamVel, dParamFMax, -0.5);
	js_limit_motor(dJointSetPistonParam, j, dParamLoStop2, dParamHiStop2, dParamVel2, dParamFMax2, 1);

	/* fixed, null, double ball, double hinge */
	a = js_box(sc, 6, 4, 2, 0.3);
	dJointSetBallAnchor(js_joint(sc, dJointCreateBall(sc->w, 0), a, 0), 6, 4.2, 2.3);
	b = js_box(sc, 6.4, 4, 2, 0.3);
	dJointSetFixed(js_joint(sc, dJointCreateFixed(sc->w, 0), a, b));
	js_joint(sc, dJointCreateNull(sc->w, 0), a, b);
	b = js_box(sc, 8, 4, 1.5, 0.3);
	j = js_joint(sc, dJointCreateDBall(sc->w, 0), b, 0);
	dJointSetDBallAnchor1(j, 8, 4, 1.5);
	dJointSetDBallAnchor2(j, 8.3, 4, 2.5);
	b = js_box(sc, 10, 4, 2, 0.3);
	j = js_joint(sc, dJointCreateDHinge(sc->w, 0), b, 0);
	dJointSetDHingeAxis(j, 0, 1, 0);
	dJointSetDHingeAnchor1(j, 10, 4, 2);
	dJointSetDHingeAnchor2(j, 10.5, 4, 2.6);

	/* two gears on hinges to the world, coupled by a transmission joint; the first one motored */
	dBodyID g1 = js_box(sc, 0, 8, 2, 0.3), g2 = js_box(sc, 1.2, 8, 2, 0.3);
	j = js_joint(sc, dJointCreateHinge(sc->w, 0), g1, 0);
	dJointSetHingeAnchor(j, 0, 8, 2);
	dJointSetHingeAxis(j, 0, 0, 1);
	dJointSetHingeParam(j, dParamVel, 4);
	dJointSetHingeParam(j, dParamFMax, 3);
	j = js_joint(sc, dJointCreateHinge(sc->w, 0), g2, 0);
	dJointSetHingeAnchor(j, 1.2, 8, 2);
	dJointSetHingeAxis(j, 0, 0, 1);
	j = js_joint(sc, dJointCreateTransmission(sc->w, 0), g1, g2);
	dJointSetTransmissionMode(j, dTransmissionParallelAxes);
	dJointSetTransmissionAxis(j, 0, 0, 1);
	dJointSetTransmissionAnchor1(j, 0, 8, 2);
	dJointSetTransmissionAnchor2(j, 1.2, 8, 2);
	dJointSetTransmissionRatio(j, 2);
}

/* One step: collisions, step(world, h, user), contacts emptied. */
static int js_step(js_scene *sc, int (*step)(dWorldID, dReal, void *), void *user)
{
	dSpaceCollide(sc->s, sc, js_near);
	int r = step(sc->w, 0.01, user);
	dJointGroupEmpty(sc->contacts);
	return r;
}

/* Every body's position, quaternion, velocities and force accumulators, in full precision. */
static void js_print(const js_scene *sc, FILE *out)
{
	for (int i = 0; i < sc->nbody; ++i) {
		dBodyID b = sc->body[i];
		const dReal *v[6] = {dBodyGetPosition(b), dBodyGetQuaternion(b), dBodyGetLinearVel(b),
		                     dBodyGetAngularVel(b), dBodyGetForce(b), dBodyGetTorque(b)};
		fprintf(out, "%d", i);
		for (int k = 0; k < 6; ++k)
			for (int c = 0; c < (k == 1 ? 4 : 3); ++c)
				fprintf(out, " %.17g", v[k][c]);
		fprintf(out, "\n");
	}
}

static void js_done(js_scene *sc)
{
	dJointGroupDestroy(sc->contacts);
	dSpaceDestroy(sc->s);
	dWorldDestroy(sc->w);
}

#endif

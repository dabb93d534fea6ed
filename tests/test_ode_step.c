/* ODE plugin, the step: scenes keep their constraints on lcpkit's solvers, lcpkit's PGS configured like
 * ODE's quickstep lands on quickstep's velocities, joint feedback is J^T lambda, ODE's own steppers report
 * RES of their own impulses, warm starting, fallback and sleeping bodies behave. */
#include "test_util.h"

#include "lcpkit/ode.h"
#include "ode_internal.h" /* the contact joint's layout (test_contact_layout) */

#include <ode/ode.h>
#include <ode/threading_impl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define H 0.01

/* ----------------------------------------------------------------------------------------- scenes */

typedef struct scene {
	dWorldID w;
	dSpaceID s;
	dJointGroupID contacts;
	double mu;
	int max_contacts; /* per pair, 8 unless a test sets it */
	int points;       /* between two boxes, instead of the collider's points: 1 the four corners of the top
	                   * box's bottom face, 2 the midpoints of its edges (test_warm_start_faces); 0 the collider's */
	dBodyID box[16];
	int nbox;
	lk_ode *ctx;
} scene;

static void near_cb(void *data, dGeomID a, dGeomID b)
{
	scene *sc = data;
	dContact c[8];
	int n = dCollide(a, b, sc->max_contacts > 0 && sc->max_contacts < 8 ? sc->max_contacts : 8, &c[0].geom,
	                 sizeof c[0]);
	if (n > 0 && sc->points && dGeomGetBody(a) && dGeomGetBody(b)) {
		/* the collider's normal and depth, at points of the test's choosing on the plane z = 1 */
		static const double corner[4][2] = {{0.5, 0.5}, {-0.5, 0.5}, {-0.5, -0.5}, {0.5, -0.5}};
		static const double mid[4][2] = {{0.5, 0.0}, {0.0, 0.5}, {-0.5, 0.0}, {0.0, -0.5}};
		for (int k = 0; k < 4; ++k) {
			c[k].geom = c[0].geom;
			c[k].geom.pos[0] = sc->points == 1 ? corner[k][0] : mid[k][0];
			c[k].geom.pos[1] = sc->points == 1 ? corner[k][1] : mid[k][1];
			c[k].geom.pos[2] = 1.0;
		}
		n = 4;
	}
	for (int i = 0; i < n; ++i) {
		c[i].surface.mode = dContactApprox1;
		c[i].surface.mu = sc->mu;
		dJointID j = dJointCreateContact(sc->w, sc->contacts, &c[i]);
		dJointAttach(j, dGeomGetBody(a), dGeomGetBody(b));
	}
}

static void scene_init(scene *sc)
{
	memset(sc, 0, sizeof *sc);
	sc->w = dWorldCreate();
	dWorldSetGravity(sc->w, 0, 0, -9.81);
	sc->s = dHashSpaceCreate(0);
	sc->contacts = dJointGroupCreate(0);
	sc->mu = 0.5;
	dCreatePlane(sc->s, 0, 0, 1, 0);
}

static dBodyID scene_box(scene *sc, double x, double y, double z)
{
	dBodyID b = dBodyCreate(sc->w);
	dMass m;
	dMassSetBox(&m, 1, 1, 1, 1);
	dBodySetMass(b, &m);
	dBodySetPosition(b, x, y, z);
	dGeomID g = dCreateBox(sc->s, 1, 1, 1);
	dGeomSetBody(g, b);
	sc->box[sc->nbox++] = b;
	return b;
}

/* The context with a solver spec and a warm start's share of the previous impulses (lk_ode_def.warm_factor). */
static lk_status scene_solver_warm(scene *sc, const char *spec, double warm_factor)
{
	lk_ode_def def = lk_ode_default_def();
	def.ode_residual = 1; /* RES in the statistics, which these tests read */
	def.solver = spec;
	def.warm_factor = warm_factor;
	char err[300];
	lk_status st = lk_ode_create(sc->w, &def, &sc->ctx, err, sizeof err);
	if (st == LK_OK)
		st = lk_ode_add_space(sc->ctx, sc->s);
	return st;
}

static lk_status scene_solver(scene *sc, const char *spec)
{
	return scene_solver_warm(sc, spec, lk_ode_default_def().warm_factor);
}

static void scene_collide(scene *sc)
{
	dJointGroupEmpty(sc->contacts);
	dSpaceCollide(sc->s, sc, near_cb);
}

static lk_status scene_step(scene *sc)
{
	scene_collide(sc);
	return lk_ode_world_step(sc->ctx, H);
}

static void scene_done(scene *sc)
{
	lk_ode_destroy(sc->ctx);
	dJointGroupDestroy(sc->contacts);
	dSpaceDestroy(sc->s);
	dWorldDestroy(sc->w);
}

static double norm3(const dReal *v)
{
	return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

/* ------------------------------------------------------------------------------- keeping constraints */

static void test_resting_box(void **state)
{
	(void)state;
	scene sc;
	scene_init(&sc);
	dBodyID b = scene_box(&sc, 0, 0, 0.5);
	/* the whole of the previous impulses, so that a warm start that matched every contact solves the step */
	assert_int_equal(scene_solver_warm(&sc, "pgs:warm=1", 1.0), LK_OK);
	for (int i = 0; i < 200; ++i)
		assert_int_equal(scene_step(&sc), LK_OK);
	lk_engine_step_stats st;
	assert_int_equal(lk_ode_get_stats(sc.ctx, &st), LK_OK);
	assert_int_equal(st.rows, 12);
	assert_int_equal(st.rows_by_kind[LK_ROW_NORMAL], 4);
	assert_int_equal(st.rows_by_kind[LK_ROW_FRICTION], 8);
	assert_int_equal(st.fallback, 0);
	assert_int_equal(st.iterations, dWorldGetQuickStepNumIterations(sc.w));
	const dReal *p = dBodyGetPosition(b);
	assert_double_equal(p[2], 0.5, 2e-3);
	assert_double_equal(p[0], 0.0, 1e-3);
	assert_true(norm3(dBodyGetLinearVel(b)) < 1e-3);
	assert_true(norm3(dBodyGetAngularVel(b)) < 1e-3);
	/* warm started: the previous impulses already nearly solve this step */
	assert_true(st.res_initial < 1e-6);
	scene_done(&sc);
}

/* lk_ode_def.sink_to_layer: a box set down touching the ground (depth 0) sinks under auto to half the world's
 * surface layer and rests there, where ODE's contacts are steady; with it off a solve keeps it where its
 * first step left it (a fraction of what gravity adds in a step);
 * the world's layer is the application's again after every step. Depth from the box's height. */
static double depth_after(const char *spec, int sink, double layer, int steps)
{
	scene sc;
	scene_init(&sc);
	dBodyID b = scene_box(&sc, 0, 0, 0.5);
	dWorldSetContactSurfaceLayer(sc.w, layer);
	lk_ode_def def = lk_ode_default_def();
	def.ode_residual = 1; /* RES in the statistics, which these tests read */
	def.solver = spec;
	def.sink_to_layer = sink;
	char err[300];
	assert_int_equal(lk_ode_create(sc.w, &def, &sc.ctx, err, sizeof err), LK_OK);
	assert_int_equal(lk_ode_add_space(sc.ctx, sc.s), LK_OK);
	for (int i = 0; i < steps; ++i) {
		assert_int_equal(scene_step(&sc), LK_OK);
		assert_true(dWorldGetContactSurfaceLayer(sc.w) == layer);
	}
	const double depth = 0.5 - dBodyGetPosition(b)[2];
	/* at rest in the layer; without one a contact at depth 0 comes and goes (docs/ode.md, "The surface layer") */
	if (layer > 0.0)
		assert_true(norm3(dBodyGetLinearVel(b)) < 1e-3);
	scene_done(&sc);
	return depth;
}

static void test_sink_to_layer(void **state)
{
	(void)state;
	const double layer = 0.004;
	/* ERP 0.2 at 100 Hz: the gap to the layer shrinks by a fifth a step, so 100 steps leave nothing of it */
	const double with = depth_after("auto", -1, layer, 100), without = depth_after("auto", 0, layer, 100);
	const double other = depth_after("pgs:warm=1,iters=50", 1, layer, 100);
	print_message("depth after 1 s: auto %.3e, auto without sinking %.3e, pgs with it %.3e (layer %.3e)\n", with,
	              without, other, layer);
	assert_double_equal(with, 0.5 * layer, 0.01 * layer);
	assert_double_equal(other, 0.5 * layer, 0.01 * layer);
	/* without: where the first step left it, less than gravity adds in a step (g h^2), far from the layer's half */
	assert_true(fabs(without) < 9.81 * H * H && fabs(without) < 0.25 * layer);
	/* no layer, nothing to sink into: the rows are ODE's, step for step */
	assert_true(depth_after("auto", -1, 0.0, 100) == depth_after("auto", 0, 0.0, 100));
	/* out of range */
	lk_ode_def def = lk_ode_default_def();
	def.ode_residual = 1; /* RES in the statistics, which these tests read */
	def.sink_to_layer = 2;
	lk_ode *ctx = NULL;
	char err[300];
	dWorldID w = dWorldCreate();
	assert_int_equal(lk_ode_create(w, &def, &ctx, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	assert_null(ctx);
	assert_non_null(strstr(err, "sink_to_layer"));
	dWorldDestroy(w);
}

/* A face's least-norm normal impulses (the warm start's faces, ode_warm.c): the 3 x 3 system of a face whose rows
 * share one normal gives what Gram-Schmidt over the six columns gives, to rounding, on random faces of 3 to 16
 * points on random planes with random wrenches (force and torque across the normal too, which no impulse reaches);
 * the points on a line, or the normals not all one, leave it to Gram-Schmidt (the same numbers to the bit). */
static void test_face_least_norm(void **state)
{
	(void)state;
	lk__rng r = {99};
	double worst = 0.0;
	for (int t = 0; t < 3000; ++t) {
		const int m = 3 + t % 14;
		dVector3 n = {tu_rng_sym(&r), tu_rng_sym(&r), tu_rng_sym(&r), 0.0}, e1, e2;
		const double len = norm3(n);
		for (int k = 0; k < 3; ++k)
			n[k] /= len;
		dPlaneSpace(n, e1, e2);
		const int line = t % 5 == 4, turned = t % 7 == 6;
		const double depth = tu_rng_sym(&r), scale = 0.1 + 2.0 * (0.5 + 0.5 * tu_rng_sym(&r));
		double J[16][6], f[6], plane[16], general[16];
		for (int a = 0; a < m; ++a) {
			/* r: a point on the face's plane about the body's centre */
			const double u = scale * tu_rng_sym(&r), v = line ? 0.0 : scale * tu_rng_sym(&r);
			double rr[3], nn[3] = {n[0], n[1], n[2]};
			if (turned && a == m - 1)
				nn[0] += 1e-3;
			for (int k = 0; k < 3; ++k)
				rr[k] = depth * n[k] + u * e1[k] + v * e2[k];
			J[a][0] = nn[0];
			J[a][1] = nn[1];
			J[a][2] = nn[2];
			J[a][3] = rr[1] * nn[2] - rr[2] * nn[1];
			J[a][4] = rr[2] * nn[0] - rr[0] * nn[2];
			J[a][5] = rr[0] * nn[1] - rr[1] * nn[0];
		}
		for (int k = 0; k < 6; ++k)
			f[k] = 10.0 * tu_rng_sym(&r);
		assert_int_equal(lk__ode_face_least_norm((const double(*)[6])J, m, f, plane, 0), 1);
		assert_int_equal(lk__ode_face_least_norm((const double(*)[6])J, m, f, general, 1), 1);
		double big = 0.0, diff = 0.0;
		for (int a = 0; a < m; ++a) {
			big = fmax(big, fabs(general[a]));
			diff = fmax(diff, fabs(plane[a] - general[a]));
		}
		if (line || turned)
			assert_memory_equal(plane, general, (size_t)m * sizeof(double));
		else
			worst = fmax(worst, diff / big);
	}
	print_message("face least norm: largest relative difference %.2e\n", worst);
	assert_true(worst < 1e-7);
}

/* A body's joints read in one pass over ODE's list (lk__ode_node_layout, lk__ode_next_joint; ode_abi.c) rather
 * than by dBodyGetJoint's index: the layout found on this ODE, and the walk of every body, joint for joint, what
 * dBodyGetJoint gives, through joints of several types made, attached (to two bodies, to one on either side),
 * attached again elsewhere and destroyed at random, contacts of a group emptied among them; then the same walk
 * where the layout is not known (dBodyGetJoint's own). */
static void test_joint_walk(void **state)
{
	(void)state;
	lk__ode_abi abi;
	char err[300];
	assert_int_equal(lk__ode_abi_load(&abi, err, sizeof err), LK_OK);
	assert_int_equal(lk__ode_node_layout(&abi), 1);
	assert_true(abi.node_at > 0);
	lk__ode_abi unknown = abi;
	unknown.node_at = -1;

	dWorldID w = dWorldCreate();
	dJointGroupID g = dJointGroupCreate(0);
	enum { NB = 6, NJ = 40 };
	dBodyID b[NB];
	for (int k = 0; k < NB; ++k)
		b[k] = dBodyCreate(w);
	dJointID j[NJ] = {NULL};
	lk__rng r = {7};
	int walked = 0, longest = 0;
	for (int t = 0; t < 3000; ++t) {
		const int k = (int)(NJ * (0.5 + 0.5 * tu_rng_sym(&r))) % NJ;
		const int what = (int)(4 * (0.5 + 0.5 * tu_rng_sym(&r))) % 4;
		if (what == 0 && j[k] && k % 3 != 0) {
			dJointDestroy(j[k]);
			j[k] = NULL;
			continue;
		}
		if (!j[k]) {
			dContact c;
			memset(&c, 0, sizeof c);
			j[k] = k % 3 == 0 ? dJointCreateContact(w, g, &c) : k % 3 == 1 ? dJointCreateBall(w, 0)
			                                                               : dJointCreateHinge(w, 0);
		}
		const int p = (int)(NB * (0.5 + 0.5 * tu_rng_sym(&r))) % NB, q = (p + 1 + t % (NB - 1)) % NB;
		dJointAttach(j[k], what == 1 ? NULL : b[p], what == 2 ? NULL : b[q]);
		if (t % 500 == 499) {
			dJointGroupEmpty(g);
			for (int i = 0; i < NJ; i += 3)
				j[i] = NULL;
		}
		for (int m = 0; m < NB; ++m) {
			lk__ode_joint_walk fast = lk__ode_walk_joints(&abi, b[m]), slow = lk__ode_walk_joints(&unknown, b[m]);
			int i = 0;
			for (;; ++i) {
				dJointID theirs = dBodyGetJoint(b[m], i);
				assert_ptr_equal(lk__ode_next_joint(&fast), theirs);
				assert_ptr_equal(lk__ode_next_joint(&slow), theirs);
				if (!theirs)
					break;
			}
			walked += i;
			longest = i > longest ? i : longest;
		}
	}
	assert_true(walked > 10000 && longest >= 10); /* lists long and many */
	dJointGroupDestroy(g);
	dWorldDestroy(w);
}

/* The dContact a contact joint keeps, read where ODE 0.16 keeps it (lk__ode_contact_layout, ode_abi.c): found
 * on this ODE, read back as it was made, and lk__ode_contact_target equal to the bit to the normal target
 * getInfo2 writes, over random contacts (with and without their own error reduction, on one body and two),
 * surface layers on both sides of their depths, velocity caps and step rates, and with a bounce where the target
 * at the world's layer is 0 (lk__ode_resting_target_known). Then a stack's steps under auto
 * the same to the bit with the resting contacts' targets made from the read depth as with the two more
 * getInfo2 calls a contact they cost without it (sink_to_layer, ode_rows.c). */
static void test_contact_layout(void **state)
{
	(void)state;
	lk__ode_abi abi;
	char err[300];
	assert_int_equal(lk__ode_abi_load(&abi, err, sizeof err), LK_OK);
	assert_int_equal(lk__ode_contact_layout(&abi), 1);
	assert_true(abi.contact_at > 0);
	assert_int_equal(lk__ode_contact_layout(&abi), 1); /* looked for once */

	dWorldID w = dWorldCreate();
	dJointGroupID g = dJointGroupCreate(0);
	dBodyID b0 = dBodyCreate(w), b1 = dBodyCreate(w);
	dBodySetPosition(b0, 0.1, 0.2, 0.3);
	dBodySetPosition(b1, -0.4, 0.5, 1.3);
	lk__rng r = {42};
	int capped = 0, below = 0, soft = 0;
	for (int t = 0; t < 4000; ++t) {
		dContact c;
		memset(&c, 0, sizeof c);
		c.surface.mode = dContactApprox1 | (t % 2 ? dContactSoftERP : 0) | (t % 3 ? dContactMu2 : 0);
		c.surface.mu = 0.5 + 0.5 * tu_rng_sym(&r);
		c.surface.mu2 = 0.3;
		c.surface.soft_erp = 0.5 + 0.45 * tu_rng_sym(&r);
		double n[3] = {tu_rng_sym(&r), tu_rng_sym(&r), 1.0 + tu_rng_sym(&r)};
		const double len = norm3(n);
		for (int k = 0; k < 3; ++k) {
			c.geom.pos[k] = 2.0 * tu_rng_sym(&r);
			c.geom.normal[k] = n[k] / len;
		}
		c.geom.depth = 0.02 + 0.025 * tu_rng_sym(&r);
		dJointID j = dJointCreateContact(w, g, &c);
		dJointAttach(j, b0, t % 4 ? b1 : NULL);
		dContact back;
		lk__ode_contact_of(&abi, j, &back);
		assert_true(back.surface.mode == c.surface.mode && back.geom.depth == c.geom.depth &&
		            back.surface.soft_erp == c.surface.soft_erp &&
		            !memcmp(back.geom.normal, c.geom.normal, sizeof c.geom.normal));
		const double layer = 0.03 * tu_rng_sym(&r), maxvel = t % 5 ? INFINITY : 0.5 + 0.5 * tu_rng_sym(&r);
		const double fps = 1.0 / (0.02 + 0.015 * tu_rng_sym(&r)), erp = 0.5 + 0.45 * tu_rng_sym(&r);
		dWorldSetContactSurfaceLayer(w, layer);
		dWorldSetContactMaxCorrectingVel(w, maxvel);
		lk__ode_info1 info;
		abi.info1[dJointTypeContact](j, &info);
		const double theirs = lk__ode_generated_target(&abi, j, fps, erp);
		const double mine = lk__ode_contact_target(&back, fps, erp, layer, maxvel);
		assert_memory_equal(&theirs, &mine, sizeof mine);
		capped += theirs == maxvel;
		below += theirs == 0.0;
		soft += (t % 2) && theirs > 0.0;
		if (t % 100 == 99)
			dJointGroupEmpty(g);
	}
	/* every branch of ODE's formula taken */
	assert_true(capped > 50 && below > 200 && soft > 500);

	/* with a bounce: where getInfo2's target at the world's layer is 0, the formula's at the layers 0 and -layer
	 * (sink_to_layer's), the bodies closing faster than the bounce threshold or not */
	int resting = 0, closing = 0;
	for (int t = 0; t < 4000; ++t) {
		dContact c;
		memset(&c, 0, sizeof c);
		c.surface.mode = dContactApprox1 | dContactBounce | (t % 2 ? dContactSoftERP : 0);
		c.surface.mu = 0.5;
		c.surface.soft_erp = 0.5 + 0.45 * tu_rng_sym(&r);
		c.surface.bounce = t % 3 ? 0.5 + 0.5 * tu_rng_sym(&r) : 0.0;
		c.surface.bounce_vel = 0.1 + 0.1 * tu_rng_sym(&r);
		c.geom.normal[2] = 1.0;
		for (int k = 0; k < 3; ++k)
			c.geom.pos[k] = tu_rng_sym(&r);
		c.geom.depth = 0.01 + 0.01 * tu_rng_sym(&r);
		dBodySetLinearVel(b0, 0.5 * tu_rng_sym(&r), 0.5 * tu_rng_sym(&r), 0.5 * tu_rng_sym(&r));
		dBodySetAngularVel(b0, 0.5 * tu_rng_sym(&r), 0.5 * tu_rng_sym(&r), 0.5 * tu_rng_sym(&r));
		dJointID j = dJointCreateContact(w, g, &c);
		dJointAttach(j, b0, NULL);
		dContact back;
		lk__ode_contact_of(&abi, j, &back);
		const double layer = 0.02 + 0.01 * tu_rng_sym(&r), fps = 60.0, erp = 0.2, maxvel = INFINITY;
		lk__ode_info1 info;
		abi.info1[dJointTypeContact](j, &info);
		const double layers[3] = {layer, 0.0, -layer};
		double at[3];
		for (int l = 0; l < 3; ++l) {
			dWorldSetContactSurfaceLayer(w, layers[l]);
			at[l] = lk__ode_generated_target(&abi, j, fps, erp);
		}
		if (at[0] == 0.0 && lk__ode_resting_target_known(&back, fps, erp)) {
			++resting;
			closing += dBodyGetLinearVel(b0)[2] < -0.2; /* faster than any threshold drawn */
			for (int l = 1; l < 3; ++l) {
				const double mine = lk__ode_contact_target(&back, fps, erp, layers[l], maxvel);
				assert_memory_equal(&at[l], &mine, sizeof mine);
			}
		}
		if (t % 100 == 99)
			dJointGroupEmpty(g);
	}
	assert_true(resting > 500 && closing > 50);
	dJointGroupDestroy(g);
	dWorldDestroy(w);

	/* the stack's steps: the read contacts against the contacts' generator */
	const double layer = 0.004;
	scene sc[2];
	for (int k = 0; k < 2; ++k) {
		scene_init(&sc[k]);
		dWorldSetContactSurfaceLayer(sc[k].w, layer);
		for (int i = 0; i < 4; ++i)
			scene_box(&sc[k], 0.02 * i, -0.01 * i, 0.5 + i * 1.0005);
		assert_int_equal(scene_solver(&sc[k], "auto"), LK_OK);
	}
	sc[1].ctx->abi.contact_at = -1; /* as where the layout is not found */
	for (int step = 0; step < 150; ++step)
		for (int k = 0; k < 2; ++k)
			assert_int_equal(scene_step(&sc[k]), LK_OK);
	assert_true(sc[0].ctx->abi.contact_at > 0);
	for (int i = 0; i < 4; ++i) {
		assert_memory_equal(dBodyGetPosition(sc[0].box[i]), dBodyGetPosition(sc[1].box[i]), 3 * sizeof(dReal));
		assert_memory_equal(dBodyGetQuaternion(sc[0].box[i]), dBodyGetQuaternion(sc[1].box[i]), 4 * sizeof(dReal));
	}
	/* and it sank into the layer, not stood on its contacts' depth 0: the targets were made */
	const double depth = 0.5 - dBodyGetPosition(sc[0].box[0])[2];
	print_message("the bottom box after 1.5 s: %.3e deep (layer %.3e)\n", depth, layer);
	assert_true(depth > 0.25 * layer && depth < layer);
	for (int k = 0; k < 2; ++k)
		scene_done(&sc[k]);
}

/* A face's load carried over when its points change (ode_warm.c): a box resting on another, their contacts
 * at the four corners of the face in one step and at the midpoints of its edges in the next (ODE's box-box
 * collider gives a face four to eight points, a different set each step as the boxes turn by a hair). No
 * point is within warm_distance of one of the step before: found again point by point, the warm start would
 * carry nothing; carried by the face, it holds the top box's weight, m g h, to a percent in every step. */
static void test_warm_start_faces(void **state)
{
	(void)state;
	scene sc;
	scene_init(&sc);
	scene_box(&sc, 0, 0, 0.5);
	dBodyID top = scene_box(&sc, 0, 0, 1.5);
	assert_int_equal(scene_solver_warm(&sc, "pgs:warm=1,iters=100", 1.0), LK_OK);
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	assert_non_null(p);
	const double load = 1.0 * 9.81 * H; /* the top box: 1 kg */
	for (int i = 0; i < 40; ++i) {
		sc.points = 1 + i % 2;
		scene_collide(&sc);
		assert_int_equal(lk_ode_extract(sc.ctx, H, p), LK_OK);
		const double *l = lk_problem_lambda(p);
		double carried = 0.0;
		int points = 0;
		for (int r = 0; r < lk_problem_row_count(p); ++r) {
			lk_row_def d;
			assert_int_equal(lk_problem_get_row(p, r, &d), LK_OK);
			if (d.kind == LK_ROW_NORMAL && d.body[0] != LK_STATIC && d.body[1] != LK_STATIC) {
				carried += l[r];
				++points;
			}
		}
		assert_int_equal(points, 4);
		if (i >= 2)
			assert_double_equal(carried, load, 0.01 * load);
		assert_int_equal(lk_ode_world_step(sc.ctx, H), LK_OK);
	}
	assert_double_equal(dBodyGetPosition(top)[2], 1.5, 1e-3);
	lk_problem_destroy(p);
	scene_done(&sc);
}

/* The warm start finds a pair's records as one run of consecutive records where each pair's contacts were
 * consecutive joints, else through the hash (ode_warm.c, pair_first). A body of two box geoms (A and B) rests
 * on a plank on the ground, and a box on A. The adapter reads a body's joints from its list, newest first: made
 * in the order A-plank, A-box, B-plank, the body's contacts with the plank come in two runs split by those with
 * the box, the two runs in turn first; made A-plank, B-plank, A-box, in one. Either way each pair carries its
 * load into the next step's warm start, the weight it holds times h to a percent: every contact found again. */
static void two_runs_loads(int split, double load[3])
{
	scene sc;
	scene_init(&sc);
	dMass m;
	dBodyID plank = dBodyCreate(sc.w);
	dMassSetBox(&m, 1, 4, 1, 0.5); /* 2 kg */
	dBodySetMass(plank, &m);
	dBodySetPosition(plank, 0, 0, 0.25);
	dGeomID gp = dCreateBox(sc.s, 4, 1, 0.5);
	dGeomSetBody(gp, plank);
	dBodyID twin = dBodyCreate(sc.w);
	dMassSetBox(&m, 1, 2, 1, 1); /* 2 kg over the two unit boxes */
	dBodySetMass(twin, &m);
	dBodySetPosition(twin, 0, 0, 1.0);
	dGeomID g[2];
	for (int k = 0; k < 2; ++k) {
		g[k] = dCreateBox(sc.s, 1, 1, 1);
		dGeomSetBody(g[k], twin);
		dGeomSetOffsetPosition(g[k], k ? 0.75 : -0.75, 0, 0);
	}
	dBodyID top = scene_box(&sc, -0.75, 0, 2.0); /* 1 kg, on A */
	dGeomID gt = dBodyGetFirstGeom(top), ground = NULL;
	for (int k = 0; k < dSpaceGetNumGeoms(sc.s); ++k)
		if (dGeomGetClass(dSpaceGetGeom(sc.s, k)) == dPlaneClass)
			ground = dSpaceGetGeom(sc.s, k);
	assert_int_equal(scene_solver_warm(&sc, "pgs:warm=1,iters=100", 1.0), LK_OK);
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	assert_non_null(p);
	for (int i = 0; i <= 60; ++i) {
		dJointGroupEmpty(sc.contacts);
		/* split: the two runs swap places from step to step, so that neither is where the last step had it */
		const int a = split && i % 2, b = 1 - a;
		near_cb(&sc, gp, ground);
		near_cb(&sc, g[a], gp);
		near_cb(&sc, split ? g[0] : g[b], split ? gt : gp);
		near_cb(&sc, split ? g[b] : g[0], split ? gp : gt);
		if (i < 60)
			assert_int_equal(lk_ode_world_step(sc.ctx, H), LK_OK);
		else
			assert_int_equal(lk_ode_extract(sc.ctx, H, p), LK_OK);
	}
	const double *l = lk_problem_lambda(p);
	load[0] = load[1] = load[2] = 0.0; /* plank on the ground, the body on the plank, the box on the body */
	for (int r = 0; r < lk_problem_row_count(p); ++r) {
		lk_row_def d;
		assert_int_equal(lk_problem_get_row(p, r, &d), LK_OK);
		if (d.kind == LK_ROW_NORMAL)
			load[d.body[0] == LK_STATIC || d.body[1] == LK_STATIC ? 0 : d.point[2] < 0.75 ? 1 : 2] += l[r];
	}
	assert_double_equal(dBodyGetPosition(top)[2], 2.0, 1e-3);
	lk_problem_destroy(p);
	scene_done(&sc);
}

static void test_warm_start_pair_in_two_runs(void **state)
{
	(void)state;
	const double g = 9.81 * H, want[3] = {5 * g, 3 * g, g}; /* the weights above each pair, m g h */
	for (int split = 0; split < 2; ++split) {
		double load[3];
		two_runs_loads(split, load);
		print_message("contacts %s: the warm start carries %.6f, %.6f, %.6f (m g h %.6f, %.6f, %.6f)\n",
		              split ? "split" : "in one run", load[0], load[1], load[2], want[0], want[1], want[2]);
		for (int k = 0; k < 3; ++k)
			assert_double_equal(load[k], want[k], 0.01 * want[k]);
	}
}

/* The warm start of an articulated body that recovers from a penetration (ode_warm.c): boxes A and B on the
 * ground, tied by a ball joint, C resting on A and D on C. Once the ground is raised by 5 cm, into A and B,
 * their contacts with it ask to separate faster than gravity adds in a step, and every contact of A and B
 * starts from zero, A's resting one with C too, and so does their joint; C's with D (no joint ties C or D)
 * keeps its impulses. */
static void test_recovering_body_starts_cold(void **state)
{
	(void)state;
	scene sc;
	scene_init(&sc);
	dBodyID a = scene_box(&sc, 0, 0, 0.5), b = scene_box(&sc, 2, 0, 0.5);
	scene_box(&sc, 0, 0, 1.5);
	scene_box(&sc, 0, 0, 2.5);
	dJointID ball = dJointCreateBall(sc.w, 0);
	dJointAttach(ball, a, b);
	dJointSetBallAnchor(ball, 1, 0, 0.5);
	assert_int_equal(scene_solver(&sc, "pgs:warm=1,iters=100"), LK_OK);
	for (int i = 0; i < 50; ++i)
		assert_int_equal(scene_step(&sc), LK_OK);
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	assert_non_null(p);
	/* the normal impulses the warm start gives each pair, told apart by where their points are: A and B on
	 * the ground, A and C, C and D; before the ground is raised and after */
	double load[2][4] = {{0}}, joint[2] = {0, 0}; /* and the largest impulse of the ball joint's rows */
	for (int raised = 0; raised < 2; ++raised) {
		for (int g = 0; raised && g < dSpaceGetNumGeoms(sc.s); ++g)
			if (dGeomGetClass(dSpaceGetGeom(sc.s, g)) == dPlaneClass)
				dGeomPlaneSetParams(dSpaceGetGeom(sc.s, g), 0, 0, 1, 0.05);
		scene_collide(&sc);
		assert_int_equal(lk_ode_extract(sc.ctx, H, p), LK_OK);
		const double *l = lk_problem_lambda(p);
		for (int r = 0; r < lk_problem_row_count(p); ++r) {
			lk_row_def def;
			assert_int_equal(lk_problem_get_row(p, r, &def), LK_OK);
			if (def.kind == LK_ROW_NORMAL) {
				const double x = def.point[0], z = def.point[2];
				load[raised][z < 0.5 ? (x < 1 ? 0 : 1) : z < 1.5 ? 2 : 3] += l[r];
			}
			if (def.kind == LK_ROW_JOINT)
				joint[raised] = fmax(joint[raised], fabs(l[r]));
		}
	}
	const double w = 9.81 * H; /* a box's weight over a step, m g h */
	for (int k = 0; k < 4; ++k)
		assert_true(load[0][k] > 0.3 * w); /* every pair carries a load before */
	for (int k = 0; k < 3; ++k)
		assert_true(load[1][k] == 0.0); /* A's and B's contacts: from zero */
	assert_double_equal(load[1][3], load[0][3], 1e-12 * load[0][3]); /* C's with D: as before */
	/* the joint between A and B from zero too: carried over, a joint's impulses held limbs wedged where they sank
	 * (6 ragdolls at 5 iterations, ode_warm.c) */
	print_message("the ball joint's largest impulse: %.3g before, %.3g after the ground was raised\n", joint[0],
	              joint[1]);
	assert_true(joint[0] > 1e-3 * w);
	assert_true(joint[1] == 0.0);
	lk_problem_destroy(p);
	scene_done(&sc);
}

/* Two boxes, box A on the ground starting at height z (0.5 rests, lower is in the ground) and box B: beside it
 * (layout 0), beside it tied to it by a ball joint (1), or on top of it, a millimetre into it (in contact from
 * the first step), tied by a ball joint at an edge of the face they share (2, articulated bodies resting on
 * each other), stepped under spec with the world's quickstep relaxation w (0: ODE's default, 1.3); their
 * positions and velocities after the steps. */
static void relax_run(const char *spec, int layout, double z, double w, int steps, double out[12])
{
	scene sc;
	scene_init(&sc);
	if (w > 0)
		dWorldSetQuickStepW(sc.w, w);
	dBodyID a = scene_box(&sc, 0, 0, z), b = layout == 2 ? scene_box(&sc, 0, 0, z + 0.999) : scene_box(&sc, 2, 0, 0.5);
	if (layout > 0) {
		dJointID ball = dJointCreateBall(sc.w, 0);
		dJointAttach(ball, a, b);
		if (layout == 2)
			dJointSetBallAnchor(ball, 0.5, 0, z + 0.4995);
		else
			dJointSetBallAnchor(ball, 1, 0, 0.5);
	}
	assert_int_equal(scene_solver(&sc, spec), LK_OK);
	for (int i = 0; i < steps; ++i)
		assert_int_equal(scene_step(&sc), LK_OK);
	for (int k = 0; k < 3; ++k) {
		out[k] = dBodyGetPosition(a)[k];
		out[3 + k] = dBodyGetLinearVel(a)[k];
		out[6 + k] = dBodyGetPosition(b)[k];
		out[9 + k] = dBodyGetLinearVel(b)[k];
	}
	scene_done(&sc);
}

/* Under auto with no w= in its spec, articulated bodies resting on each other are swept with the world's
 * quickstep relaxation, as quickstep sweeps them; bodies without joints plainly; joints on the ground alone
 * with the contacts plain and the joint rows relaxed (jw); a step with a contact recovering from a penetration
 * plainly throughout (ode_step.c, step_relaxation). Each against the same world under auto with its w and jw
 * spelled out: the same bodies to the bit, and not those of the other settings. */
static void test_auto_relaxes_joints_at_rest(void **state)
{
	(void)state;
	double dflt[12], relaxed[12], plain[12];
	/* articulated bodies at rest on each other: the world's w, ODE's 1.3 by default, 1.1 where the world sets it */
	relax_run("auto", 2, 0.5, 0, 30, dflt);
	relax_run("auto:w=1.3", 2, 0.5, 0, 30, relaxed);
	relax_run("auto:w=1", 2, 0.5, 0, 30, plain);
	assert_memory_equal(dflt, relaxed, sizeof dflt);
	assert_memory_not_equal(dflt, plain, sizeof dflt);
	relax_run("auto", 2, 0.5, 1.1, 30, dflt);
	relax_run("auto:w=1.1", 2, 0.5, 1.1, 30, relaxed);
	assert_memory_equal(dflt, relaxed, sizeof dflt);
	/* a spec that names w keeps it whatever the world's */
	relax_run("auto:w=1", 2, 0.5, 1.1, 30, dflt);
	relax_run("auto:w=1", 2, 0.5, 0, 30, plain);
	assert_memory_equal(dflt, plain, sizeof dflt);
	/* without joints: plain sweeps */
	relax_run("auto", 0, 0.5, 0, 30, dflt);
	relax_run("auto:w=1", 0, 0.5, 0, 30, plain);
	relax_run("auto:w=1.3", 0, 0.5, 0, 30, relaxed);
	assert_memory_equal(dflt, plain, sizeof dflt);
	assert_memory_not_equal(dflt, relaxed, sizeof dflt);
	/* joints on the ground alone: the joint rows relaxed with the world's w, the contacts plain */
	double joints[12];
	relax_run("auto", 1, 0.5, 0, 30, dflt);
	relax_run("auto:w=1,jw=1.3", 1, 0.5, 0, 30, joints);
	relax_run("auto:w=1", 1, 0.5, 0, 30, plain);
	relax_run("auto:w=1.3", 1, 0.5, 0, 30, relaxed);
	assert_memory_equal(dflt, joints, sizeof dflt);
	assert_memory_not_equal(dflt, plain, sizeof dflt);
	assert_memory_not_equal(dflt, relaxed, sizeof dflt);
	relax_run("auto", 1, 0.5, 1.1, 30, dflt);
	relax_run("auto:w=1,jw=1.1", 1, 0.5, 1.1, 30, joints);
	assert_memory_equal(dflt, joints, sizeof dflt);
	/* box A 5 cm in the ground: its contacts push it out faster than gravity pulls, plain sweeps */
	relax_run("auto", 2, 0.45, 0, 1, dflt);
	relax_run("auto:w=1", 2, 0.45, 0, 1, plain);
	relax_run("auto:w=1.3", 2, 0.45, 0, 1, relaxed);
	assert_memory_equal(dflt, plain, sizeof dflt);
	assert_memory_not_equal(dflt, relaxed, sizeof dflt);
}

static int run_stack(const char *spec)
{
	scene sc;
	scene_init(&sc);
	for (int i = 0; i < 10; ++i)
		scene_box(&sc, 0, 0, 0.5 + i);
	assert_int_equal(scene_solver(&sc, spec), LK_OK);
	for (int i = 0; i < 500; ++i) {
		lk_status st = scene_step(&sc);
		if (st == LK_ERR_UNSUPPORTED) {
			scene_done(&sc);
			return 0;
		}
		assert_int_equal(st, LK_OK);
		lk_engine_step_stats es;
		lk_ode_get_stats(sc.ctx, &es);
		assert_int_equal(es.fallback, 0);
	}
	/* 5 s later every box is still on the one below, at its height. The stack sways at the world's 20
	 * iterations, by a few centimetres at the top under every solver here, and how far is decided by rounding
	 * (a change in the last bits of the bodies' inertia took amgs's top box from 7 to 14 cm): a stack that
	 * stands is one whose boxes each rest on the one below, whatever its sway */
	for (int i = 0; i < 10; ++i) {
		const dReal *p = dBodyGetPosition(sc.box[i]);
		const dReal *below = i > 0 ? dBodyGetPosition(sc.box[i - 1]) : (const dReal[3]){0, 0, 0};
		assert_double_equal(p[2], 0.5 + i, 0.02);
		assert_true(fabs(p[0] - below[0]) < 0.1 && fabs(p[1] - below[1]) < 0.1);
		assert_true(norm3(dBodyGetLinearVel(sc.box[i])) < 1.0);
	}
	scene_done(&sc);
	return 1;
}

/* The rows' points are made only where something reads them (a coordinate order, the warm start, a problem
 * file): a step in the natural order leaves them 0. A coordinate order must still get them: top-down and
 * bottom-up sweeps of a stack of three boxes then differ, where without points (every key 0) both would be
 * the natural order and the stacks would move alike to the bit. */
static void stack_positions(const char *spec, double out[3][3])
{
	scene sc;
	scene_init(&sc);
	for (int i = 0; i < 3; ++i)
		scene_box(&sc, 0.1 * i, 0, 0.5 + i);
	assert_int_equal(scene_solver(&sc, spec), LK_OK);
	for (int i = 0; i < 40; ++i)
		assert_int_equal(scene_step(&sc), LK_OK);
	for (int i = 0; i < 3; ++i)
		for (int k = 0; k < 3; ++k)
			out[i][k] = dBodyGetPosition(sc.box[i])[k];
	scene_done(&sc);
}

static void test_points_when_used(void **state)
{
	(void)state;
	double up[3][3], down[3][3], natural[3][3];
	stack_positions("pgs:iters=3,order=cp-z", up);
	stack_positions("pgs:iters=3,order=cp-z-desc", down);
	stack_positions("pgs:iters=3", natural);
	double apart = 0.0, moved = 0.0;
	for (int i = 0; i < 3; ++i)
		for (int k = 0; k < 3; ++k) {
			apart = fmax(apart, fabs(up[i][k] - down[i][k]));
			moved = fmax(moved, fabs(natural[i][k] - (k == 2 ? 0.5 + i : k == 0 ? 0.1 * i : 0.0)));
		}
	print_message("bottom-up and top-down sweeps apart by %.3e m after 40 steps (the stack moved %.3e m)\n",
	              apart, moved);
	assert_true(moved > 1e-4);
	assert_true(apart > 1e-9);
}

static void test_stack_pgs(void **state)
{
	(void)state;
	assert_true(run_stack("pgs"));
}

static void test_stack_amgs(void **state)
{
	(void)state;
	/* the default (alpha = 0.3) and Omega = D / gamma (alpha = 1 / gamma: PGS's iterates) */
	assert_true(run_stack("amgs"));
	assert_true(run_stack("amgs:alpha=0.5"));
}

static void test_hinge_pendulum(void **state)
{
	(void)state;
	dWorldID w = dWorldCreate();
	dWorldSetGravity(w, 0, 0, -9.81);
	dBodyID b = dBodyCreate(w);
	dMass m;
	dMassSetBox(&m, 1, 0.5, 0.5, 0.5);
	dBodySetMass(b, &m);
	dBodySetPosition(b, 1, 0, 2);
	dJointID j = dJointCreateHinge(w, 0);
	dJointAttach(j, b, 0);
	dJointSetHingeAnchor(j, 0, 0, 2);
	dJointSetHingeAxis(j, 0, 1, 0);
	lk_ode *ctx = NULL;
	assert_int_equal(lk_ode_create(w, NULL, &ctx, NULL, 0), LK_OK);
	lk_ode_add_body(ctx, b);
	double min_x = 1, worst = 0;
	for (int i = 0; i < 200; ++i) {
		assert_int_equal(lk_ode_world_step(ctx, H), LK_OK);
		dVector3 a1, a2;
		dJointGetHingeAnchor(j, a1);
		dJointGetHingeAnchor2(j, a2);
		double d[3] = {a1[0] - a2[0], a1[1] - a2[1], a1[2] - a2[2]};
		worst = fmax(worst, norm3(d));
		/* it turns about y only */
		const dReal *om = dBodyGetAngularVel(b);
		assert_true(fabs(om[0]) < 1e-6 && fabs(om[2]) < 1e-6);
		const dReal *p = dBodyGetPosition(b);
		assert_double_equal(p[1], 0.0, 1e-6);
		min_x = fmin(min_x, p[0]);
	}
	/* first-order error reduction (ERP 0.2) lets the anchors drift a little while it swings; ODE's own
	 * quickstep drifts about as far on this pendulum */
	assert_true(worst < 5e-3);
	assert_true(min_x < -0.5); /* it swung through */
	lk_ode_destroy(ctx);
	dWorldDestroy(w);
}

static void test_slider(void **state)
{
	(void)state;
	dWorldID w = dWorldCreate();
	dWorldSetGravity(w, 0, 0, -9.81);
	dBodyID b = dBodyCreate(w);
	dMass m;
	dMassSetBox(&m, 1, 0.2, 0.2, 0.2);
	dBodySetMass(b, &m);
	dBodySetPosition(b, 0, 0, 5);
	dJointID j = dJointCreateSlider(w, 0);
	dJointAttach(j, b, 0);
	double a[3] = {1 / sqrt(2.0), 0, 1 / sqrt(2.0)};
	dJointSetSliderAxis(j, a[0], a[1], a[2]);
	lk_ode *ctx = NULL;
	assert_int_equal(lk_ode_create(w, NULL, &ctx, NULL, 0), LK_OK);
	lk_ode_add_body(ctx, b);
	int n = 50;
	for (int i = 0; i < n; ++i)
		assert_int_equal(lk_ode_world_step(ctx, H), LK_OK);
	const dReal *p = dBodyGetPosition(b);
	double d[3] = {p[0], p[1], p[2] - 5};
	double along = d[0] * a[0] + d[2] * a[2];
	double across[3] = {d[0] - along * a[0], d[1], d[2] - along * a[2]};
	assert_true(norm3(across) < 1e-3);
	/* sliding down the axis under g sin 45: s = -g/sqrt(2) h^2 n(n+1)/2 with ODE's symplectic Euler */
	double expect = -9.81 / sqrt(2.0) * H * H * n * (n + 1) / 2;
	assert_double_equal(along, expect, 0.01 * fabs(expect));
	const dReal *q = dBodyGetQuaternion(b);
	assert_double_equal(fabs(q[0]), 1.0, 1e-6);
	lk_ode_destroy(ctx);
	dWorldDestroy(w);
}

/* --------------------------------------------------------------------- against ODE's quickstep */

/* The joints of the island that starts at `start`, in the order ODE's island builder lists them: depth
 * first from the body, each body's joints in its list order, the bodies reached pushed on a stack. */
static int ode_island_joints(dBodyID start, dJointID *out, int cap)
{
	dBodyID stack[64], seen[64];
	int nstack = 0, nseen = 0, n = 0;
	seen[nseen++] = start;
	dBodyID b = start;
	for (;;) {
		for (int i = 0; i < dBodyGetNumJoints(b); ++i) {
			dJointID j = dBodyGetJoint(b, i);
			int dup = 0;
			for (int k = 0; k < n; ++k)
				dup |= out[k] == j;
			if (dup || !dJointIsEnabled(j))
				continue;
			assert_true(n < cap);
			out[n++] = j;
			dBodyID o = dJointGetBody(j, 0) == b ? dJointGetBody(j, 1) : dJointGetBody(j, 0);
			int known = !o;
			for (int k = 0; k < nseen; ++k)
				known |= seen[k] == o;
			if (!known) {
				seen[nseen++] = o;
				stack[nstack++] = o;
			}
		}
		if (!nstack)
			break;
		b = stack[--nstack];
	}
	return n;
}

/* The problem p with its rows in the order perm (findex renumbered) and lambda as the start. */
static lk_problem *permuted(lk_problem *p, const int *perm, const double *lambda)
{
	int n = lk_problem_row_count(p), nb = lk_problem_body_count(p);
	lk_problem *q = lk_problem_create(LK_FORM_ROWS);
	for (int i = 0; i < nb; ++i)
		assert_int_equal(lk_problem_add_body(q, lk_problem_body(p, i), NULL), LK_OK);
	int *where = malloc((size_t)n * sizeof(int));
	double *l = malloc((size_t)n * sizeof(double));
	for (int i = 0; i < n; ++i)
		where[perm[i]] = i;
	for (int i = 0; i < n; ++i) {
		lk_row_def d;
		lk_problem_get_row(p, perm[i], &d);
		if (d.findex >= 0)
			d.findex = where[d.findex];
		assert_int_equal(lk_problem_add_row(q, &d, NULL), LK_OK);
		l[i] = lambda[perm[i]];
	}
	assert_int_equal(lk_problem_set_lambda(q, l, n), LK_OK);
	free(where);
	free(l);
	return q;
}

/* One step of a small scene (a box on the ground carrying a ball-jointed box carrying a hinged box), with
 * ODE's default 20 iterations. ODE 0.16.2's quickstep sweeps its rows as PSOR with w = 1.3 from zero in
 * this order: the island's joints as its island builder lists them, rows without findex first, rows with
 * findex after; at iterations 8, 16, ... it shuffles the whole order with dRandInt (ODE's global generator).
 * lcpkit's PSOR with the same w on the rows in that order, run in chunks of 8 iterations between replayed
 * shuffles (each chunk warm-started from the last, which continues the sweep exactly), must land on
 * quickstep's velocities to rounding. */
static void test_pgs_matches_quickstep(void **state)
{
	(void)state;
	scene sc;
	scene_init(&sc);
	dBodyID b0 = scene_box(&sc, 0, 0, 0.499);
	dBodyID b1 = dBodyCreate(sc.w), b2 = dBodyCreate(sc.w);
	dMass m;
	dMassSetBox(&m, 1, 0.5, 0.5, 0.5);
	dBodySetMass(b1, &m);
	dBodySetMass(b2, &m);
	dBodySetPosition(b1, 0.2, 0.1, 1.3);
	dBodySetPosition(b2, 0.4, 0.3, 1.9);
	dBodySetLinearVel(b0, 0.3, -0.1, -0.2);
	dBodySetAngularVel(b0, 0.1, 0.2, 0.3);
	dBodySetLinearVel(b2, -0.5, 0.2, 0.1);
	dJointID ball = dJointCreateBall(sc.w, 0);
	dJointAttach(ball, b0, b1);
	dJointSetBallAnchor(ball, 0.1, 0.05, 1.0);
	dJointID hinge = dJointCreateHinge(sc.w, 0);
	dJointAttach(hinge, b2, b1);
	dJointSetHingeAnchor(hinge, 0.3, 0.2, 1.6);
	dJointSetHingeAxis(hinge, 1, 1, 0);
	const int iters = dWorldGetQuickStepNumIterations(sc.w);
	assert_int_equal(iters, 20);
	assert_int_equal(scene_solver(&sc, "pgs"), LK_OK);
	scene_collide(&sc);

	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	assert_int_equal(lk_ode_extract(sc.ctx, H, p), LK_OK);
	int n = lk_problem_row_count(p), nb = lk_problem_body_count(p);
	assert_int_equal(nb, 3);
	assert_true(n >= 3 + 5 + 3);
	unsigned long seed = dRandGetSeed();
	dWorldQuickStep(sc.w, H);
	unsigned long seed_after = dRandGetSeed();
	assert_true(seed_after != seed);

	/* ODE's row order: the island starts at the world's first body, the one created last */
	dJointID order_j[32];
	int nj = ode_island_joints(b2, order_j, 32);
	int *ode_rows = malloc((size_t)n * sizeof(int)), *perm = malloc((size_t)n * sizeof(int));
	double *lambda = calloc((size_t)n, sizeof(double));
	int k = 0;
	for (int a = 0; a < nj; ++a)
		for (int r = 0; r < n; ++r)
			if (lk_ode_problem_joint(sc.ctx, r, NULL) == order_j[a])
				ode_rows[k++] = r;
	assert_int_equal(k, n);
	int nh = 0;
	for (int pass = 0; pass < 2; ++pass)
		for (int i = 0; i < n; ++i) {
			lk_row_def d;
			lk_problem_get_row(p, ode_rows[i], &d);
			if ((d.findex >= 0) == pass)
				perm[nh++] = ode_rows[i];
		}
	dRandSetSeed(seed);
	for (int it = 0; it < iters; it += 8) {
		if (it > 0)
			for (int i = 1; i < n; ++i) {
				int s = dRandInt(i + 1);
				int t = perm[i];
				perm[i] = perm[s];
				perm[s] = t;
			}
		lk_problem *q = permuted(p, perm, lambda);
		lk_solver_config cfg;
		char spec[64], err[200];
		snprintf(spec, sizeof spec, "psor:w=1.3,iters=%d,warm=%d", iters - it < 8 ? iters - it : 8, it > 0);
		assert_int_equal(lk_config_parse(spec, &cfg, err, sizeof err), LK_OK);
		assert_double_equal(cfg.sor_w, dWorldGetQuickStepW(sc.w), 0.0);
		assert_int_equal(lk_solve(q, &cfg, NULL, NULL), LK_OK);
		for (int i = 0; i < n; ++i)
			lambda[perm[i]] = lk_problem_lambda(q)[i];
		lk_problem_destroy(q);
	}
	/* the replay drew exactly the numbers quickstep drew */
	assert_int_equal(dRandGetSeed(), seed_after);
	assert_int_equal(lk_problem_set_lambda(p, lambda, n), LK_OK);
	double worst = 0, moved = 0;
	for (int i = 0; i < nb; ++i) {
		double du[6];
		lk_problem_delta_velocity(p, i, du);
		dBodyID b = lk_ode_problem_body(sc.ctx, i);
		const dReal *v = dBodyGetLinearVel(b), *om = dBodyGetAngularVel(b);
		const double *u = lk_problem_body(p, i)->u;
		for (int c = 0; c < 3; ++c) {
			worst = fmax(worst, fabs(u[c] + du[c] - v[c]));
			worst = fmax(worst, fabs(u[3 + c] + du[3 + c] - om[c]));
			moved = fmax(moved, fabs(du[c]));
		}
	}
	assert_true(moved > 0.01); /* the constraints did something */
	assert_true(worst < 1e-12);
	/* without the replayed shuffles (one order throughout) the result is measurably different */
	lk_solver_config cfg;
	char err[200];
	assert_int_equal(lk_config_parse("psor:w=1.3,warm=0", &cfg, err, sizeof err), LK_OK);
	cfg.max_iterations = iters;
	lk_problem *q = permuted(p, ode_rows, lambda);
	assert_int_equal(lk_solve(q, &cfg, NULL, NULL), LK_OK);
	double diff = 0;
	for (int i = 0; i < nb; ++i) {
		double dq[6], dp[6];
		lk_problem_delta_velocity(p, i, dp);
		lk_problem_delta_velocity(q, i, dq);
		for (int c = 0; c < 6; ++c)
			diff = fmax(diff, fabs(dp[c] - dq[c]));
	}
	assert_true(diff > 1e-9);
	lk_problem_destroy(q);
	free(lambda);
	free(perm);
	free(ode_rows);
	lk_problem_destroy(p);
	(void)b0;
	scene_done(&sc);
}

/* Converged on a problem with a unique solution (a soft chain), a whole lk_ode_world_step and a whole
 * dWorldQuickStep end in the same state. */
static void build_chain(dWorldID w, dBodyID *b, int n)
{
	dWorldSetGravity(w, 0, 0, -9.81);
	dWorldSetCFM(w, 1e-6);
	dMass m;
	dMassSetBox(&m, 1, 0.3, 0.3, 0.3);
	for (int i = 0; i < n; ++i) {
		b[i] = dBodyCreate(w);
		dBodySetMass(b[i], &m);
		dBodySetPosition(b[i], 0.5 * (i + 1), 0.1 * i, 3);
		dBodySetAngularVel(b[i], 0.2 * i, 0.1, -0.3);
		dJointID j = i % 2 ? dJointCreateBall(w, 0) : dJointCreateHinge(w, 0);
		dJointAttach(j, b[i], i ? b[i - 1] : 0);
		if (i % 2)
			dJointSetBallAnchor(j, 0.5 * i + 0.25, 0.1 * i - 0.05, 3);
		else {
			dJointSetHingeAnchor(j, 0.5 * i + 0.25, 0.1 * i - 0.05, 3);
			dJointSetHingeAxis(j, 0, 1, 0.2);
		}
	}
}

static void test_step_matches_quickstep_converged(void **state)
{
	(void)state;
	dWorldID w1 = dWorldCreate(), w2 = dWorldCreate();
	dBodyID b1[5], b2[5];
	build_chain(w1, b1, 5);
	build_chain(w2, b2, 5);
	dWorldSetQuickStepNumIterations(w1, 400);
	dWorldSetQuickStepNumIterations(w2, 400);
	lk_ode *ctx = NULL;
	lk_ode_def pgs = lk_ode_default_def();
	pgs.ode_residual = 1; /* RES in the statistics, which these tests read */
	pgs.solver = "pgs"; /* 400 sweeps, as quickstep's 400 iterations */
	assert_int_equal(lk_ode_create(w2, &pgs, &ctx, NULL, 0), LK_OK);
	lk_ode_add_body(ctx, b2[4]);
	for (int s = 0; s < 3; ++s) {
		dWorldQuickStep(w1, H);
		assert_int_equal(lk_ode_world_step(ctx, H), LK_OK);
	}
	lk_engine_step_stats st;
	lk_ode_get_stats(ctx, &st);
	assert_int_equal(st.rows, 3 * 5 + 2 * 3); /* 3 hinges, 2 balls */
	assert_true(st.res_final < 1e-8);
	for (int i = 0; i < 5; ++i) {
		const dReal *p1 = dBodyGetPosition(b1[i]), *p2 = dBodyGetPosition(b2[i]);
		const dReal *v1 = dBodyGetLinearVel(b1[i]), *v2 = dBodyGetLinearVel(b2[i]);
		const dReal *w1v = dBodyGetAngularVel(b1[i]), *w2v = dBodyGetAngularVel(b2[i]);
		for (int c = 0; c < 3; ++c) {
			assert_double_equal(p1[c], p2[c], 1e-9);
			assert_double_equal(v1[c], v2[c], 1e-7);
			assert_double_equal(w1v[c], w2v[c], 1e-7);
		}
	}
	lk_ode_destroy(ctx);
	dWorldDestroy(w1);
	dWorldDestroy(w2);
}

/* ------------------------------------------------------------------------- feedback and statistics */

static void test_feedback_is_jt_lambda(void **state)
{
	(void)state;
	dWorldID w = dWorldCreate();
	dBodyID b[3];
	build_chain(w, b, 3);
	lk_ode *ctx = NULL;
	assert_int_equal(lk_ode_create(w, NULL, &ctx, NULL, 0), LK_OK);
	lk_ode_set_ode_residual(ctx, 1);
	lk_ode_add_body(ctx, b[0]);
	dJointID j = dBodyGetJoint(b[1], 0); /* the ball between b2 and b1? the newest joint of b1 */
	static dJointFeedback fb;
	dJointSetFeedback(j, &fb);
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	for (int s = 0; s < 3; ++s) {
		/* the step's problem and its solution, computed beside the step from the same state (the chain has no
		 * contact: the step relaxes its joint rows as quickstep does, ode_step.c step_relaxation) */
		assert_int_equal(lk_ode_extract(ctx, H, p), LK_OK);
		lk_solver_config cfg = lk_ode_get_config(ctx);
		cfg.adapt.joint_w = dWorldGetQuickStepW(w);
		assert_int_equal(lk_solve(p, &cfg, NULL, NULL), LK_OK);
		double f[12] = {0};
		int rows = 0;
		for (int r = 0; r < lk_problem_row_count(p); ++r) {
			if (lk_ode_problem_joint(ctx, r, NULL) != j)
				continue;
			lk_row_def d;
			lk_problem_get_row(p, r, &d);
			double lam = lk_problem_lambda(p)[r];
			for (int k = 0; k < 6; ++k) {
				f[k] += d.J[0][k] * lam / H;
				f[6 + k] += d.J[1][k] * lam / H;
			}
			++rows;
		}
		assert_true(rows > 0);
		assert_int_equal(lk_ode_world_step(ctx, H), LK_OK);
		for (int k = 0; k < 3; ++k) {
			assert_double_equal(fb.f1[k], f[k], 1e-9);
			assert_double_equal(fb.t1[k], f[3 + k], 1e-9);
			assert_double_equal(fb.f2[k], f[6 + k], 1e-9);
			assert_double_equal(fb.t2[k], f[9 + k], 1e-9);
		}
		assert_true(norm3(fb.f1) > 1e-3); /* a real force */
	}
	/* ODE's own stepper: the plugin reads ODE's impulses back from dJointFeedback; dWorldStep solves the
	 * LCP exactly, so its RES on the plugin's rows is rounding, which checks rows, conversion and the
	 * recovery at once. The application's own feedback stays attached and filled. */
	assert_int_equal(lk_ode_set_solver(ctx, "ode-step"), LK_OK);
	assert_int_equal(lk_ode_world_step(ctx, H), LK_OK);
	lk_engine_step_stats st;
	lk_ode_get_stats(ctx, &st);
	assert_true(st.res_initial > 1e-3);
	assert_true(st.res_final < 1e-9 * st.res_initial);
	assert_true(dJointGetFeedback(j) == &fb);
	assert_true(dJointGetFeedback(dBodyGetJoint(b[0], 0)) == NULL);
	assert_true(norm3(fb.f1) > 1e-3);
	/* quickstep: 20 sweeps leave a residual, smaller than at the start */
	assert_int_equal(lk_ode_set_solver(ctx, "ode-quickstep"), LK_OK);
	assert_int_equal(lk_ode_world_step(ctx, H), LK_OK);
	lk_ode_get_stats(ctx, &st);
	assert_int_equal(st.iterations, 20);
	assert_true(st.res_final < st.res_initial);
	assert_true(st.res_final > 1e-9 * st.res_initial);
	lk_problem_destroy(p);
	lk_ode_destroy(ctx);
	dWorldDestroy(w);
}

/* A problem the core rejects (negative CFM) falls back to ODE's quickstep, which then produces exactly
 * ODE's step; the step succeeds, the fallbacks are counted and lk_ode_error says why. */
static void test_fallback(void **state)
{
	(void)state;
	dWorldID w1 = dWorldCreate(), w2 = dWorldCreate();
	dBodyID b1[3], b2[3];
	build_chain(w1, b1, 3);
	build_chain(w2, b2, 3);
	dWorldSetCFM(w1, -1e-7);
	dWorldSetCFM(w2, -1e-7);
	lk_ode *ctx = NULL;
	assert_int_equal(lk_ode_create(w2, NULL, &ctx, NULL, 0), LK_OK);
	lk_ode_add_body(ctx, b2[0]);
	for (int s = 0; s < 2; ++s) {
		unsigned long seed = dRandGetSeed();
		dWorldQuickStep(w1, H);
		dRandSetSeed(seed);
		assert_int_equal(lk_ode_world_step(ctx, H), LK_OK);
		/* a step that succeeded: no error, and the note says why ODE's stepper stepped instead */
		assert_string_equal(lk_ode_error(ctx), "");
		assert_non_null(strstr(lk_ode_note(ctx), "negative constraint force mixing"));
		assert_non_null(strstr(lk_ode_note(ctx), "dWorldQuickStep stepped instead"));
		lk_engine_step_stats st;
		lk_ode_get_stats(ctx, &st);
		assert_int_equal(st.fallback, 1);
		assert_int_equal(st.fallback_total, s + 1);
	}
	for (int i = 0; i < 3; ++i)
		for (int c = 0; c < 3; ++c) {
			assert_double_equal(dBodyGetPosition(b1[i])[c], dBodyGetPosition(b2[i])[c], 0.0);
			assert_double_equal(dBodyGetLinearVel(b1[i])[c], dBodyGetLinearVel(b2[i])[c], 0.0);
		}
	lk_ode_destroy(ctx);
	dWorldDestroy(w1);
	dWorldDestroy(w2);
}

/* A contact with a zero normal every step, as ODE 0.16's convex-convex collider returns them (ODE's own
 * steppers then assert): its rows (the normal's J zero, the friction rows' J NaN from dPlaneSpace) are left
 * out, the rest of the world is stepped under every solver, the statistics count them, and the adapter says
 * so once on stderr. */
static void test_zero_normal_contact(void **state)
{
	(void)state;
	static const char *const specs[] = {"pgs", "psor:w=1.3", "amgs", "pgs-sm", "newton-minmap", "newton-fischer",
	                                    "nncg", "apgd", "mprgp", "gsp", "esp", "pgs:coarse=2", "pgs:warm=1",
	                                    "pgs:friction=cone", "ipm:budget=1000"};
	for (size_t k = 0; k < sizeof specs / sizeof specs[0]; ++k) {
		scene sc;
		scene_init(&sc);
		dBodyID falling = scene_box(&sc, 3, 0, 2.0), resting = scene_box(&sc, 0, 0, 0.5);
		assert_int_equal(scene_solver(&sc, specs[k]), LK_OK);
		/* stderr into a file for the steps, to count what the adapter says */
		char path[] = "/tmp/lk-zero-normal-XXXXXX";
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		fflush(stderr);
		int saved = dup(2);
		dup2(fd, 2);
		lk_engine_step_stats st;
		int ok = 1, left_out = 1;
		for (int i = 0; i < 60; ++i) {
			scene_collide(&sc);
			dContact c;
			memset(&c, 0, sizeof c);
			const dReal *p = dBodyGetPosition(resting);
			c.geom.pos[0] = p[0], c.geom.pos[1] = p[1], c.geom.pos[2] = p[2] - 0.5;
			c.geom.depth = 0.001; /* the normal stays (0, 0, 0) */
			c.surface.mode = dContactApprox1;
			c.surface.mu = 0.5;
			dJointAttach(dJointCreateContact(sc.w, sc.contacts, &c), resting, NULL);
			ok &= lk_ode_world_step(sc.ctx, H) == LK_OK;
			lk_ode_get_stats(sc.ctx, &st);
			left_out &= st.rows_left_out == 3 && st.fallback == 0;
		}
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		FILE *f = fdopen(fd, "r");
		assert_non_null(f);
		rewind(f);
		char line[1024];
		int lines = 0, said = 0;
		while (fgets(line, sizeof line, f)) {
			++lines;
			said += strstr(line, "lcpkit: step 0 of world") && strstr(line, "3 rows left out of the solve") &&
			        strstr(line, "dxJointContact") && strstr(line, "row 0: J is zero");
		}
		fclose(f);
		remove(path);
		if (!ok || !left_out)
			fail_msg("%s: a step failed or did not leave the 3 rows out (%s %s)", specs[k], lk_ode_error(sc.ctx),
			         lk_ode_note(sc.ctx));
		if (lines != 1 || said != 1)
			fail_msg("%s: %d lines on stderr, %d of them the note", specs[k], lines, said);
		assert_int_equal(st.notes_total, 1);
		assert_non_null(strstr(lk_ode_note(sc.ctx), "3 rows left out"));
		/* the world moved: one box fell and landed, the other rests on the ground */
		const dReal *pf = dBodyGetPosition(falling), *pr = dBodyGetPosition(resting);
		if (!(pf[2] < 0.6 && pf[2] > 0.4 && fabs(pr[2] - 0.5) < 0.01 && norm3(dBodyGetLinearVel(resting)) < 0.05))
			fail_msg("%s: the boxes at z = %g and %g", specs[k], pf[2], pr[2]);
		scene_done(&sc);
	}
}

/* Auto-disable keeps working: a two-box stack falls asleep as one island, keeps no constraint forces in
 * its accumulators, and a touch on the top box wakes both (ODE's island wakes through the joints). */
static void test_auto_disable(void **state)
{
	(void)state;
	scene sc;
	scene_init(&sc);
	dWorldSetAutoDisableFlag(sc.w, 1);
	dWorldSetAutoDisableSteps(sc.w, 5);
	dWorldSetAutoDisableTime(sc.w, 0);
	dWorldSetAutoDisableLinearThreshold(sc.w, 0.05);
	dWorldSetAutoDisableAngularThreshold(sc.w, 0.05);
	dBodyID lo = scene_box(&sc, 0, 0, 0.5), hi = scene_box(&sc, 0, 0, 1.5);
	assert_int_equal(scene_solver(&sc, "pgs:iters=40"), LK_OK);
	int slept = -1;
	for (int i = 0; i < 400 && slept < 0; ++i) {
		assert_int_equal(scene_step(&sc), LK_OK);
		assert_int_equal(dBodyIsEnabled(lo), dBodyIsEnabled(hi)); /* one island */
		if (!dBodyIsEnabled(lo))
			slept = i;
	}
	assert_true(slept > 0);
	assert_true(norm3(dBodyGetForce(lo)) == 0 && norm3(dBodyGetForce(hi)) == 0);
	assert_true(norm3(dBodyGetTorque(lo)) == 0);
	for (int i = 0; i < 5; ++i)
		assert_int_equal(scene_step(&sc), LK_OK);
	assert_false(dBodyIsEnabled(lo));
	assert_double_equal(dBodyGetPosition(hi)[2], 1.5, 5e-3);
	dBodyEnable(hi);
	dBodySetLinearVel(hi, 0.5, 0, 0);
	assert_int_equal(scene_step(&sc), LK_OK);
	assert_true(dBodyIsEnabled(lo));
	scene_done(&sc);
}

/* Joints are warm-started by handle: a chain hanging at rest needs the same impulses every step, so the
 * warm start nearly solves it; impulses scale with the step length. */
static void test_warm_start_joints(void **state)
{
	(void)state;
	dWorldID w = dWorldCreate();
	dWorldSetGravity(w, 0, 0, -9.81);
	dMass m;
	dMassSetBox(&m, 1, 0.3, 0.3, 0.3);
	dBodyID b[3];
	for (int i = 0; i < 3; ++i) {
		b[i] = dBodyCreate(w);
		dBodySetMass(b[i], &m);
		dBodySetPosition(b[i], 0, 0, 3 - 0.5 * i);
		dJointID j = i == 1 ? dJointCreateHinge(w, 0) : dJointCreateBall(w, 0);
		dJointAttach(j, b[i], i ? b[i - 1] : 0);
		if (i == 1) {
			dJointSetHingeAnchor(j, 0, 0, 3.25 - 0.5 * i);
			dJointSetHingeAxis(j, 1, 0, 0);
		} else {
			dJointSetBallAnchor(j, 0, 0, 3.25 - 0.5 * i);
		}
	}
	lk_ode *ctx = NULL;
	lk_ode_def def = lk_ode_default_def();
	def.ode_residual = 1; /* RES in the statistics, which these tests read */
	def.solver = "pgs:warm=1";
	def.warm_factor = 1.0; /* the previous impulses whole: the chain at rest is solved from its warm start */
	assert_int_equal(lk_ode_create(w, &def, &ctx, NULL, 0), LK_OK);
	lk_ode_add_body(ctx, b[2]);
	lk_engine_step_stats st;
	for (int s = 0; s < 30; ++s)
		assert_int_equal(lk_ode_world_step(ctx, H), LK_OK);
	lk_ode_get_stats(ctx, &st);
	double warm = st.res_initial;
	assert_true(st.res_final < 1e-6);
	/* the warm start, read back through an extraction, scales with h */
	lk_problem *p = lk_problem_create(LK_FORM_ROWS), *p2 = lk_problem_create(LK_FORM_ROWS);
	assert_int_equal(lk_ode_extract(ctx, H, p), LK_OK);
	assert_int_equal(lk_ode_extract(ctx, 2 * H, p2), LK_OK);
	int n = lk_problem_row_count(p);
	assert_int_equal(n, 3 + 5 + 3);
	double big = 0;
	for (int r = 0; r < n; ++r) {
		assert_double_equal(lk_problem_lambda(p2)[r], 2 * lk_problem_lambda(p)[r], 1e-15);
		big = fmax(big, fabs(lk_problem_lambda(p)[r]));
	}
	assert_true(big > 0.007); /* it carries the weight: 3 x 0.027 kg x 9.81 m/s^2 x 0.01 s = 0.008 N s */
	assert_int_equal(lk_ode_set_solver(ctx, "pgs"), LK_OK); /* cold */
	assert_int_equal(lk_ode_world_step(ctx, H), LK_OK);
	lk_ode_get_stats(ctx, &st);
	assert_true(warm < 1e-3 * st.res_initial);
	lk_problem_destroy(p);
	lk_problem_destroy(p2);
	lk_ode_destroy(ctx);
	dWorldDestroy(w);
}


/* ---------------------------------------------------------------------------------- lent threads */

/* A threading implementation's functions with post_call counted: which calls lcpkit posted to it. */
static dThreadedCallPostFunction *real_post;
static int posted;

static void counting_post(dThreadingImplementationID impl, int *fault, dCallReleaseeID *releasee,
                          ddependencycount_t deps, dCallReleaseeID dependent, dCallWaitID wait,
                          dThreadedCallFunction *fn, void *context, dcallindex_t index, const char *name)
{
	++posted;
	real_post(impl, fault, releasee, deps, dependent, wait, fn, context, index, name);
}

/* Two layers of 18 x 18 boxes resting on the ground (about 7,800 rows, past the size at which threads
 * sweep), stepped 12 times under spec; with `lend`, ODE's built-in threading implementation on a pool of two
 * threads is lent to the sweeps through a copy of its functions that counts the calls. The bodies' final
 * positions and velocities go to out (12 numbers a box). */
static void grid_run(const char *spec, int lend, double *out)
{
	enum { N = 18 };
	scene sc;
	scene_init(&sc);
	dBodyID boxes[2 * N * N];
	int nb = 0;
	for (int layer = 0; layer < 2; ++layer)
		for (int i = 0; i < N; ++i)
			for (int j = 0; j < N; ++j) {
				dBodyID b = dBodyCreate(sc.w);
				dMass m;
				dMassSetBox(&m, 1, 0.9, 0.9, 0.9);
				dBodySetMass(b, &m);
				dBodySetPosition(b, 1.2 * i, 1.2 * j, 0.45 + 0.9 * layer);
				dGeomID g = dCreateBox(sc.s, 0.9, 0.9, 0.9);
				dGeomSetBody(g, b);
				boxes[nb++] = b;
			}
	assert_int_equal(scene_solver(&sc, spec), LK_OK);
	dThreadingImplementationID impl = NULL;
	dThreadingThreadPoolID pool = NULL;
	dThreadingFunctionsInfo counted;
	if (lend) {
		impl = dThreadingAllocateMultiThreadedImplementation();
		assert_non_null(impl);
		pool = dThreadingAllocateThreadPool(2, 0, dAllocateFlagBasicData, NULL);
		assert_non_null(pool);
		dThreadingThreadPoolServeMultiThreadedImplementation(pool, impl);
		counted = *dThreadingImplementationGetFunctions(impl);
		real_post = counted.post_call;
		counted.post_call = counting_post;
		assert_int_equal(lk_ode_set_threading(sc.ctx, &counted, impl), LK_OK);
	}
	for (int k = 0; k < 12; ++k)
		assert_int_equal(scene_step(&sc), LK_OK);
	lk_engine_step_stats st;
	assert_int_equal(lk_ode_get_stats(sc.ctx, &st), LK_OK);
	assert_true(st.rows > 4096);
	assert_int_equal(st.fallback, 0);
	for (int b = 0; b < nb; ++b) {
		const dReal *v[4] = {dBodyGetPosition(boxes[b]), dBodyGetLinearVel(boxes[b]), dBodyGetAngularVel(boxes[b]),
		                     dBodyGetQuaternion(boxes[b])};
		for (int q = 0; q < 4; ++q)
			for (int k = 0; k < 3; ++k)
				out[12 * b + 3 * q + k] = v[q][k];
	}
	if (lend) {
		/* the context lets go of the implementation before it is freed */
		assert_int_equal(lk_ode_set_threading(sc.ctx, NULL, NULL), LK_OK);
		dThreadingImplementationShutdownProcessing(impl);
		dThreadingThreadPoolWaitIdleState(pool);
		dThreadingFreeThreadPool(pool);
		dThreadingFreeImplementation(impl);
	}
	scene_done(&sc);
}

/* whole_world: with every body registered, not running ODE's stepper over the rest of the world changes
 * nothing, bit for bit (a three-box stack with a hinge pendulum, 120 steps); a body outside the registered
 * space, which ODE's stepper moves with whole_world 0, stays where it is with whole_world 1, as the header
 * says. */
static void run_whole_world(int whole, int stray, double out[4][7])
{
	scene sc;
	scene_init(&sc);
	for (int k = 0; k < 3; ++k)
		scene_box(&sc, 0, 0, 0.5 + k);
	dBodyID arm = scene_box(&sc, 3, 0, 2);
	dJointID hinge = dJointCreateHinge(sc.w, 0);
	dJointAttach(hinge, arm, 0);
	dJointSetHingeAnchor(hinge, 3, 0, 3);
	dJointSetHingeAxis(hinge, 0, 1, 0);
	dBodySetLinearVel(arm, 1, 0, 0);
	dBodyID free_body = NULL;
	if (stray) { /* no geom: outside the registered space */
		free_body = dBodyCreate(sc.w);
		dMass m;
		dMassSetSphere(&m, 1, 0.1);
		dBodySetMass(free_body, &m);
		dBodySetPosition(free_body, 10, 0, 5);
	}
	lk_ode_def def = lk_ode_default_def();
	def.ode_residual = 1; /* RES in the statistics, which these tests read */
	def.whole_world = whole;
	char err[300];
	assert_int_equal(lk_ode_create(sc.w, &def, &sc.ctx, err, sizeof err), LK_OK);
	assert_int_equal(lk_ode_add_space(sc.ctx, sc.s), LK_OK);
	for (int t = 0; t < 120; ++t)
		assert_int_equal(scene_step(&sc), LK_OK);
	for (int k = 0; k < 4; ++k) {
		dBodyID b = k < 3 ? sc.box[k] : (stray ? free_body : arm);
		const dReal *p = dBodyGetPosition(b), *q = dBodyGetQuaternion(b);
		for (int c = 0; c < 3; ++c)
			out[k][c] = p[c];
		for (int c = 0; c < 4; ++c)
			out[k][3 + c] = q[c];
	}
	scene_done(&sc);
}

static void test_whole_world(void **state)
{
	(void)state;
	double rest[4][7], whole[4][7];
	run_whole_world(0, 0, rest);
	run_whole_world(1, 0, whole);
	assert_memory_equal(rest, whole, sizeof rest);
	assert_true(fabs(rest[3][0] - 3.0) + fabs(rest[3][3] - 1.0) > 1e-3); /* the pendulum swung */
	/* a stray body: ODE's stepper lets it fall with whole_world 0; with 1 it is not stepped */
	run_whole_world(0, 1, rest);
	run_whole_world(1, 1, whole);
	assert_true(rest[3][2] < 5.0 - 0.5 * 9.81 * 1.0);
	assert_true(whole[3][2] == 5.0);
	assert_memory_equal(rest, whole, 3 * sizeof rest[0]); /* the registered boxes alike */
}

/* ODE's threading implementation lent to the sweeps (lk_ode_set_threading): the calls go to it, a colour's
 * tasks but the caller's and the joining call, and the world ends bit for bit where lcpkit's own threads and
 * the part order on one thread leave it (the same sweeps: docs/solvers.md, "Threads"). */
static void test_lent_threading(void **state)
{
	(void)state;
	const size_t n = 12 * 2 * 18 * 18;
	double *own = malloc(n * sizeof *own), *lent = malloc(n * sizeof *lent), *one = malloc(n * sizeof *one);
	assert_true(own && lent && one);
	grid_run("pgs:threads=2,iters=10", 0, own);
	posted = 0;
	grid_run("pgs:threads=2,iters=10", 1, lent);
	/* 12 steps of 10 sweeps, each colour of the part order two calls: the second task and the join (the
	 * caller runs the first) */
	assert_true(posted >= 12 * 10 * 2);
	assert_int_equal(posted % 2, 0);
	assert_memory_equal(own, lent, n * sizeof *own);
	grid_run("pgs:order=part,iters=10", 0, one);
	assert_memory_equal(own, one, n * sizeof *own);
	/* a single-threaded solve does not post: the implementation is lent only for threads > 1 */
	posted = 0;
	grid_run("pgs:iters=10", 1, lent);
	assert_int_equal(posted, 0);
	free(own);
	free(lent);
	free(one);
}

/* lk_ode_set_threading's arguments: both or neither, and the functions a threading implementation has. */
/* The world stepped on a pool of ODE's threads that the program gave its world (dWorldSetStepThreadingImplementation,
 * as ODE's box-stack demo does), with auto-disable on: while bodies sleep, lcpkit lets ODE integrate, and ODE
 * steps its islands on the pool, where the order in which their geoms move (dGeomMoved puts a moved geom at the
 * front of its space's list) would follow the threads, and with it the next step's contacts and rows. The
 * result must be the same run after run: hashed final state of identical runs, bit for bit. */
static uint64_t pooled_islands_run(void)
{
	scene sc;
	scene_init(&sc);
	dWorldSetAutoDisableFlag(sc.w, 1);
	dWorldSetAutoDisableSteps(sc.w, 5);
	dWorldSetAutoDisableTime(sc.w, 0);
	dThreadingImplementationID impl = dThreadingAllocateMultiThreadedImplementation();
	dThreadingThreadPoolID pool = dThreadingAllocateThreadPool(4, 0, dAllocateFlagBasicData, NULL);
	assert_non_null(impl);
	assert_non_null(pool);
	dThreadingThreadPoolServeMultiThreadedImplementation(pool, impl);
	dWorldSetStepThreadingImplementation(sc.w, dThreadingImplementationGetFunctions(impl), impl);
	/* eight islands: stacks of two boxes, some set down tilted so that they topple and slide while the
	 * others sleep */
	for (int i = 0; i < 8; ++i)
		for (int k = 0; k < 2; ++k) {
			dBodyID b = scene_box(&sc, 3.0 * i, 0.1 * k * (i % 3), 0.5 + 1.05 * k);
			dMatrix3 R;
			dRFromAxisAndAngle(R, 1, 1, 0, (i % 2) * 0.3 * k);
			dBodySetRotation(b, R);
		}
	sc.mu = 0.3;
	assert_int_equal(scene_solver(&sc, "pgs"), LK_OK);
	for (int i = 0; i < 250; ++i) {
		assert_int_equal(scene_step(&sc), LK_OK);
		if (i == 120) /* wake one island late */
			dBodySetLinearVel(sc.box[3], 1.0, 0, 0), dBodyEnable(sc.box[3]);
	}
	uint64_t h = 1469598103934665603ull;
	for (int b = 0; b < sc.nbox; ++b) {
		const dReal *v[3] = {dBodyGetPosition(sc.box[b]), dBodyGetQuaternion(sc.box[b]), dBodyGetLinearVel(sc.box[b])};
		for (int q = 0; q < 3; ++q)
			for (int k = 0; k < 3; ++k) {
				uint64_t bits;
				memcpy(&bits, &v[q][k], sizeof bits);
				h = (h ^ bits) * 1099511628211ull;
			}
	}
	dWorldSetStepThreadingImplementation(sc.w, NULL, NULL);
	scene_done(&sc);
	dThreadingImplementationShutdownProcessing(impl);
	dThreadingThreadPoolWaitIdleState(pool);
	dThreadingFreeThreadPool(pool);
	dThreadingFreeImplementation(impl);
	return h;
}

static void test_pooled_islands_reproducible(void **state)
{
	(void)state;
	const uint64_t first = pooled_islands_run();
	for (int run = 1; run < 8; ++run) {
		const uint64_t h = pooled_islands_run();
		if (h != first)
			fail_msg("run %d ended elsewhere than run 0 (%016llx against %016llx)", run, (unsigned long long)h,
			         (unsigned long long)first);
	}
}

static void test_set_threading_arguments(void **state)
{
	(void)state;
	scene sc;
	scene_init(&sc);
	scene_box(&sc, 0, 0, 0.5);
	assert_int_equal(scene_solver(&sc, "pgs"), LK_OK);
	dThreadingImplementationID impl = dThreadingAllocateSelfThreadedImplementation();
	assert_non_null(impl);
	const dThreadingFunctionsInfo *f = dThreadingImplementationGetFunctions(impl);
	assert_int_equal(lk_ode_set_threading(NULL, f, impl), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_ode_set_threading(sc.ctx, f, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_ode_set_threading(sc.ctx, NULL, impl), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(lk_ode_error(sc.ctx), "both"));
	dThreadingFunctionsInfo partial = *f;
	partial.wait_call = NULL;
	assert_int_equal(lk_ode_set_threading(sc.ctx, &partial, impl), LK_ERR_INVALID_ARGUMENT);
	partial = *f;
	partial.struct_size = 4;
	assert_int_equal(lk_ode_set_threading(sc.ctx, &partial, impl), LK_ERR_INVALID_ARGUMENT);
	/* a self-threaded implementation (one thread) is taken and never used: the world steps as before */
	assert_int_equal(lk_ode_set_threading(sc.ctx, f, impl), LK_OK);
	for (int k = 0; k < 20; ++k)
		assert_int_equal(scene_step(&sc), LK_OK);
	assert_true(fabs(dBodyGetPosition(sc.box[0])[2] - 0.5) < 0.01);
	/* destroying the context lets go of the implementation, which is freed after it */
	scene_done(&sc);
	dThreadingFreeImplementation(impl);
}

static int setup(void **state)
{
	(void)state;
	dInitODE2(0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	dCloseODE();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resting_box),
		cmocka_unit_test(test_sink_to_layer),
		cmocka_unit_test(test_contact_layout),
		cmocka_unit_test(test_joint_walk),
		cmocka_unit_test(test_face_least_norm),
		cmocka_unit_test(test_warm_start_faces),
		cmocka_unit_test(test_warm_start_pair_in_two_runs),
		cmocka_unit_test(test_recovering_body_starts_cold),
		cmocka_unit_test(test_auto_relaxes_joints_at_rest),
		cmocka_unit_test(test_points_when_used),
		cmocka_unit_test(test_stack_pgs),
		cmocka_unit_test(test_stack_amgs),
		cmocka_unit_test(test_hinge_pendulum),
		cmocka_unit_test(test_slider),
		cmocka_unit_test(test_pgs_matches_quickstep),
		cmocka_unit_test(test_step_matches_quickstep_converged),
		cmocka_unit_test(test_feedback_is_jt_lambda),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_zero_normal_contact),
		cmocka_unit_test(test_auto_disable),
		cmocka_unit_test(test_warm_start_joints),
		cmocka_unit_test(test_whole_world),
		cmocka_unit_test(test_lent_threading),
		cmocka_unit_test(test_set_threading_arguments),
		cmocka_unit_test(test_pooled_islands_reproducible),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

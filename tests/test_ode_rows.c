/* ODE plugin, rows: for every one of ODE's 17 joint types, the rows the plugin extracts through ODE's own
 * getInfo1/getInfo2 match Jacobians computed by hand on a known configuration (exactly where the row basis
 * is canonical, otherwise through the motions the joint allows and the rank of its rows), and the conversion
 * to lcpkit's impulse form (c, s = cfm / h, bounds * h, findex, u*) holds. */
#include "test_util.h"

#include "lcpkit/ode.h"

#include <ode/ode.h>

#include <math.h>
#include <string.h>

#define H 0.01
#define TOL 1e-12

static const double XA[3] = {0, 0, 1}, XB[3] = {1, 0, 1};

typedef struct fx {
	dWorldID w;
	dBodyID a, b;
	lk_ode *ctx;
	lk_problem *p;
	lk_row_def rows[8];
	int m;
} fx;

static void fx_init(fx *f)
{
	memset(f, 0, sizeof *f);
	f->w = dWorldCreate();
	dWorldSetGravity(f->w, 0, 0, 0);
	dMass m;
	dMassSetBox(&m, 1, 1, 1, 1);
	f->a = dBodyCreate(f->w);
	dBodySetMass(f->a, &m);
	dBodySetPosition(f->a, XA[0], XA[1], XA[2]);
	f->b = dBodyCreate(f->w);
	dBodySetMass(f->b, &m);
	dBodySetPosition(f->b, XB[0], XB[1], XB[2]);
	char err[300];
	assert_int_equal(lk_ode_create(f->w, NULL, &f->ctx, err, sizeof err), LK_OK);
	assert_int_equal(lk_ode_add_body(f->ctx, f->a), LK_OK);
	f->p = lk_problem_create(LK_FORM_ROWS);
}

static void fx_done(fx *f)
{
	lk_problem_destroy(f->p);
	lk_ode_destroy(f->ctx);
	dWorldDestroy(f->w);
}

/* Extracts and keeps the rows of joint j (in ODE's order); returns their number. */
static int fx_rows(fx *f, dJointID j)
{
	assert_int_equal(lk_ode_extract(f->ctx, H, f->p), LK_OK);
	f->m = 0;
	for (int r = 0; r < lk_problem_row_count(f->p); ++r) {
		int k;
		if (lk_ode_problem_joint(f->ctx, r, &k) != j)
			continue;
		assert_int_equal(k, f->m);
		assert_true(f->m < 8);
		assert_int_equal(lk_problem_get_row(f->p, r, &f->rows[f->m]), LK_OK);
		f->m++;
	}
	return f->m;
}

static void sub3(double *o, const double *a, const double *b)
{
	for (int k = 0; k < 3; ++k)
		o[k] = a[k] - b[k];
}

static void cross3(double *o, const double *a, const double *b)
{
	double t[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
	memcpy(o, t, sizeof t);
}

static void unit3(double *v)
{
	double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
	for (int k = 0; k < 3; ++k)
		v[k] /= n;
}

/* The row that keeps the velocities of point p, moving with A and with B (or the world), equal along l:
 * J_A = (l, (p - x_A) x l), J_B = (-l, -((p - x_B) x l)). */
static void point_row(double J[2][6], const double l[3], const double p[3], int two)
{
	double r[3];
	memset(J, 0, 12 * sizeof(double));
	sub3(r, p, XA);
	memcpy(J[0], l, 3 * sizeof(double));
	cross3(J[0] + 3, r, l);
	if (two) {
		sub3(r, p, XB);
		for (int k = 0; k < 3; ++k)
			J[1][k] = -l[k];
		cross3(J[1] + 3, r, l);
		for (int k = 3; k < 6; ++k)
			J[1][k] = -J[1][k];
	}
}

/* The row that keeps the angular velocities of A and B equal about a. */
static void ang_row(double J[2][6], const double a[3], int two)
{
	memset(J, 0, 12 * sizeof(double));
	memcpy(J[0] + 3, a, 3 * sizeof(double));
	if (two)
		for (int k = 0; k < 3; ++k)
			J[1][3 + k] = -a[k];
}

static void expect_J(const lk_row_def *r, double J[2][6])
{
	for (int k = 0; k < 6; ++k) {
		assert_double_equal(r->J[0][k], J[0][k], TOL);
		assert_double_equal(r->J[1][k], J[1][k], TOL);
	}
}

static void expect_bilateral(const fx *f, double c)
{
	for (int i = 0; i < f->m; ++i) {
		assert_true(isinf(f->rows[i].lo) && f->rows[i].lo < 0);
		assert_true(isinf(f->rows[i].hi) && f->rows[i].hi > 0);
		assert_int_equal(f->rows[i].findex, -1);
		assert_double_equal(f->rows[i].c, c, 1e-12);
		assert_double_equal(f->rows[i].s, 1e-10 / H, 1e-20); /* ODE's default CFM, over h */
		assert_int_equal(f->rows[i].kind, LK_ROW_JOINT);
	}
}

/* A motion: A and B each move rigidly, body k with (v_k + w_k x (x_k - o_k), w_k). */
typedef struct motion {
	double va[3], wa[3], oa[3];
	double vb[3], wb[3], ob[3];
} motion;

static void motion_vector(const motion *mo, double u[12])
{
	double r[3], t[3];
	sub3(r, XA, mo->oa);
	cross3(t, mo->wa, r);
	for (int k = 0; k < 3; ++k) {
		u[k] = mo->va[k] + t[k];
		u[3 + k] = mo->wa[k];
	}
	sub3(r, XB, mo->ob);
	cross3(t, mo->wb, r);
	for (int k = 0; k < 3; ++k) {
		u[6 + k] = mo->vb[k] + t[k];
		u[9 + k] = mo->wb[k];
	}
}

/* Every row is blind to an allowed motion. */
static void expect_allowed(const fx *f, const motion *mo)
{
	double u[12];
	motion_vector(mo, u);
	for (int i = 0; i < f->m; ++i) {
		double s = 0;
		for (int k = 0; k < 6; ++k)
			s += f->rows[i].J[0][k] * u[k] + f->rows[i].J[1][k] * u[6 + k];
		assert_double_equal(s, 0.0, 1e-12);
	}
}

/* The six motions of A and B moving together as one rigid body. */
static void expect_rigid_allowed(const fx *f)
{
	for (int d = 0; d < 6; ++d) {
		motion mo;
		memset(&mo, 0, sizeof mo);
		if (d < 3) {
			mo.va[d] = mo.vb[d] = 1;
		} else {
			mo.wa[d - 3] = mo.wb[d - 3] = 1;
			mo.oa[0] = mo.ob[0] = 0.3; /* both about the same point */
			mo.oa[1] = mo.ob[1] = -0.2;
			mo.oa[2] = mo.ob[2] = 0.7;
		}
		expect_allowed(f, &mo);
	}
}

/* B rotating about axis a through point o, A at rest. */
static void expect_b_rotation_allowed(const fx *f, const double a[3], const double o[3])
{
	motion mo;
	memset(&mo, 0, sizeof mo);
	memcpy(mo.wb, a, sizeof mo.wb);
	memcpy(mo.ob, o, sizeof mo.ob);
	expect_allowed(f, &mo);
}

static void expect_b_translation_allowed(const fx *f, const double a[3])
{
	motion mo;
	memset(&mo, 0, sizeof mo);
	memcpy(mo.vb, a, sizeof mo.vb);
	expect_allowed(f, &mo);
}

/* The rows are independent: Gram-Schmidt leaves a clear remainder of each. Together with the allowed
 * motions (6 rigid + the joint's degrees of freedom = 12 - m) this pins the row space exactly. */
static void expect_full_rank(const fx *f)
{
	double q[8][12];
	for (int i = 0; i < f->m; ++i) {
		double v[12];
		memcpy(v, f->rows[i].J[0], 6 * sizeof(double));
		memcpy(v + 6, f->rows[i].J[1], 6 * sizeof(double));
		for (int j = 0; j < i; ++j) {
			double d = 0;
			for (int k = 0; k < 12; ++k)
				d += v[k] * q[j][k];
			for (int k = 0; k < 12; ++k)
				v[k] -= d * q[j][k];
		}
		double n = 0;
		for (int k = 0; k < 12; ++k)
			n += v[k] * v[k];
		assert_true(sqrt(n) > 1e-3);
		for (int k = 0; k < 12; ++k)
			q[i][k] = v[k] / sqrt(n);
	}
}

static const double P[3] = {0.5, 0.1, 1.2};
static const double EX[3] = {1, 0, 0}, EY[3] = {0, 1, 0}, EZ[3] = {0, 0, 1};

/* ------------------------------------------------------------------------------------------ joints */

static void test_ball(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	dJointID j = dJointCreateBall(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetBallAnchor(j, P[0], P[1], P[2]);
	assert_int_equal(fx_rows(&f, j), 3);
	const double *e[3] = {EX, EY, EZ};
	for (int i = 0; i < 3; ++i) {
		double J[2][6];
		point_row(J, e[i], P, 1);
		expect_J(&f.rows[i], J);
		assert_int_equal(f.rows[i].body[0], 0);
		assert_int_equal(f.rows[i].body[1], 1);
		for (int k = 0; k < 3; ++k)
			assert_double_equal(f.rows[i].point[k], P[k], 1e-12);
	}
	expect_bilateral(&f, 0.0);
	fx_done(&f);
}

static void test_hinge(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	double ax[3] = {1, 2, 3};
	unit3(ax);
	dJointID j = dJointCreateHinge(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetHingeAnchor(j, P[0], P[1], P[2]);
	dJointSetHingeAxis(j, ax[0], ax[1], ax[2]);
	assert_int_equal(fx_rows(&f, j), 5);
	const double *e[3] = {EX, EY, EZ};
	double J[2][6];
	for (int i = 0; i < 3; ++i) {
		point_row(J, e[i], P, 1);
		expect_J(&f.rows[i], J);
	}
	/* the two rotations across the axis, in ODE's basis of the plane normal to it */
	dVector3 n = {ax[0], ax[1], ax[2], 0}, p, q;
	dPlaneSpace(n, p, q);
	ang_row(J, p, 1);
	expect_J(&f.rows[3], J);
	ang_row(J, q, 1);
	expect_J(&f.rows[4], J);
	expect_bilateral(&f, 0.0);
	expect_rigid_allowed(&f);
	expect_b_rotation_allowed(&f, ax, P);
	fx_done(&f);
}

static void test_slider(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	double ax[3] = {1, 1, 0};
	unit3(ax);
	dJointID j = dJointCreateSlider(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetSliderAxis(j, ax[0], ax[1], ax[2]);
	assert_int_equal(fx_rows(&f, j), 5);
	const double *e[3] = {EX, EY, EZ};
	double J[2][6];
	for (int i = 0; i < 3; ++i) {
		ang_row(J, e[i], 1);
		expect_J(&f.rows[i], J);
	}
	/* across the axis the velocities of the point midway between the bodies agree:
	 * J_A = (p, c/2 x p), J_B = (-p, c/2 x p), c = x_B - x_A */
	dVector3 n = {ax[0], ax[1], ax[2], 0}, pq[2];
	dPlaneSpace(n, pq[0], pq[1]);
	double c[3];
	sub3(c, XB, XA);
	for (int i = 0; i < 2; ++i) {
		double hc[3] = {c[0] / 2, c[1] / 2, c[2] / 2};
		memset(J, 0, sizeof J);
		for (int k = 0; k < 3; ++k) {
			J[0][k] = pq[i][k];
			J[1][k] = -pq[i][k];
		}
		cross3(J[0] + 3, hc, pq[i]);
		cross3(J[1] + 3, hc, pq[i]);
		expect_J(&f.rows[3 + i], J);
	}
	expect_bilateral(&f, 0.0);
	expect_rigid_allowed(&f);
	expect_b_translation_allowed(&f, ax);
	fx_done(&f);
}

static dJointID make_contact(fx *f, const double pos[3], const double n[3], double depth, int reversed, int two)
{
	dContact c;
	memset(&c, 0, sizeof c);
	c.surface.mode = dContactApprox1;
	c.surface.mu = 0.5;
	for (int k = 0; k < 3; ++k) {
		c.geom.pos[k] = pos[k];
		c.geom.normal[k] = n[k];
	}
	c.geom.depth = depth;
	dJointID j = dJointCreateContact(f->w, 0, &c);
	if (two)
		dJointAttach(j, f->a, f->b);
	else if (reversed)
		dJointAttach(j, 0, f->a);
	else
		dJointAttach(j, f->a, 0);
	return j;
}

static void check_contact(fx *f, dJointID j, const double pos[3], const double n[3], int two)
{
	assert_int_equal(fx_rows(f, j), 3);
	double J[2][6];
	point_row(J, n, pos, two);
	expect_J(&f->rows[0], J);
	/* ODE's contact: c = fps * erp * depth; normal impulse >= 0 */
	assert_double_equal(f->rows[0].c, (1.0 / H) * 0.2 * 0.01, 1e-12);
	assert_double_equal(f->rows[0].lo, 0.0, 0.0);
	assert_true(isinf(f->rows[0].hi));
	assert_int_equal(f->rows[0].kind, LK_ROW_NORMAL);
	int normal_row = -1;
	for (int r = 0; r < lk_problem_row_count(f->p); ++r) {
		int k;
		if (lk_ode_problem_joint(f->ctx, r, &k) == j && k == 0)
			normal_row = r;
	}
	dVector3 nn = {n[0], n[1], n[2], 0}, t[2];
	dPlaneSpace(nn, t[0], t[1]);
	for (int i = 0; i < 2; ++i) {
		point_row(J, t[i], pos, two);
		expect_J(&f->rows[1 + i], J);
		/* dContactApprox1: |lambda_t| <= mu lambda_n through findex, which points at the normal row
		 * of the same joint (ODE's findex is relative to the joint's first row) */
		assert_int_equal(f->rows[1 + i].findex, normal_row);
		assert_double_equal(f->rows[1 + i].mu, 0.5, 0.0);
		assert_int_equal(f->rows[1 + i].kind, LK_ROW_FRICTION);
		assert_double_equal(f->rows[1 + i].c, 0.0, 0.0);
	}
	/* the contact point comes back from the rows themselves */
	for (int i = 0; i < 3; ++i)
		for (int k = 0; k < 3; ++k)
			assert_double_equal(f->rows[i].point[k], pos[k], 1e-12);
}

static void test_contact(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	const double pos[3] = {0.5, 0.1, 1.0};
	const double n[3] = {0, 0.6, 0.8};
	dJointID j = make_contact(&f, pos, n, 0.01, 0, 1);
	check_contact(&f, j, pos, n, 1);
	dJointDestroy(j);
	/* with the world; attached as (A, 0) the normal acts on A as given */
	j = make_contact(&f, pos, n, 0.01, 0, 0);
	check_contact(&f, j, pos, n, 0);
	assert_int_equal(f.rows[0].body[0], 0);
	assert_int_equal(f.rows[0].body[1], LK_STATIC);
	dJointDestroy(j);
	/* attached as (0, A): A is ODE's second side, so the rows push A along -n */
	j = make_contact(&f, pos, n, 0.01, 1, 0);
	const double mn[3] = {-n[0], -n[1], -n[2]};
	check_contact(&f, j, pos, mn, 0);
	assert_int_equal(f.rows[0].body[0], 0);
	assert_int_equal(f.rows[0].body[1], LK_STATIC);
	fx_done(&f);
}

static void test_universal(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	dJointID j = dJointCreateUniversal(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetUniversalAnchor(j, P[0], P[1], P[2]);
	dJointSetUniversalAxis2(j, 0, 0, 1); /* axis 2 first: never parallel to the other on the way */
	dJointSetUniversalAxis1(j, 0, 1, 0);
	assert_int_equal(fx_rows(&f, j), 4);
	const double *e[3] = {EX, EY, EZ};
	double J[2][6];
	for (int i = 0; i < 3; ++i) {
		point_row(J, e[i], P, 1);
		expect_J(&f.rows[i], J);
	}
	double a12[3];
	cross3(a12, EY, EZ); /* the one rotation a cross joint blocks */
	ang_row(J, a12, 1);
	expect_J(&f.rows[3], J);
	expect_bilateral(&f, 0.0);
	expect_rigid_allowed(&f);
	expect_b_rotation_allowed(&f, EY, P);
	expect_b_rotation_allowed(&f, EZ, P);
	fx_done(&f);
}

static void test_hinge2(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	const double anchor[3] = {0.8, 0.1, 1.0};
	dJointID j = dJointCreateHinge2(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetHinge2Anchor(j, anchor[0], anchor[1], anchor[2]);
	dReal a1[3] = {0, 0, 1}, a2[3] = {0, 1, 0};
	dJointSetHinge2Axes(j, a1, a2);
	dJointSetHinge2Param(j, dParamSuspensionCFM, 1e-4);
	assert_int_equal(fx_rows(&f, j), 4);
	/* ball rows in the frame of the suspension axis: along axis 1, then across it */
	double J[2][6];
	point_row(J, EZ, anchor, 1);
	expect_J(&f.rows[0], J);
	dVector3 n = {0, 0, 1, 0}, p, q;
	dPlaneSpace(n, p, q);
	point_row(J, p, anchor, 1);
	expect_J(&f.rows[1], J);
	point_row(J, q, anchor, 1);
	expect_J(&f.rows[2], J);
	double ax[3];
	cross3(ax, EZ, EY);
	ang_row(J, ax, 1);
	expect_J(&f.rows[3], J);
	/* the suspension row is soft: its own CFM, over h */
	assert_double_equal(f.rows[0].s, 1e-4 / H, 1e-16);
	assert_double_equal(f.rows[1].s, 1e-10 / H, 1e-20);
	expect_rigid_allowed(&f);
	expect_b_rotation_allowed(&f, EZ, anchor);
	expect_b_rotation_allowed(&f, EY, anchor);
	fx_done(&f);
}

static void test_fixed(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	dJointID j = dJointCreateFixed(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetFixed(j);
	assert_int_equal(fx_rows(&f, j), 6);
	const double *e[3] = {EX, EY, EZ};
	double J[2][6];
	for (int i = 0; i < 3; ++i) {
		point_row(J, e[i], XB, 1); /* B's origin stays where it is in A's frame */
		expect_J(&f.rows[i], J);
		ang_row(J, e[i], 1);
		expect_J(&f.rows[3 + i], J);
	}
	expect_bilateral(&f, 0.0);
	expect_rigid_allowed(&f);
	fx_done(&f);
}

static void test_null(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	dJointID j = dJointCreateNull(f.w, 0);
	dJointAttach(j, f.a, f.b);
	assert_int_equal(fx_rows(&f, j), 0);
	assert_int_equal(lk_problem_row_count(f.p), 0);
	/* it still connects: B is reached through it */
	assert_int_equal(lk_problem_body_count(f.p), 2);
	fx_done(&f);
}

static void test_amotor(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	dJointID j = dJointCreateAMotor(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetAMotorNumAxes(j, 1);
	dJointSetAMotorAxis(j, 0, 1, 0, 0, 1);
	dJointSetAMotorParam(j, dParamFMax, 5);
	dJointSetAMotorParam(j, dParamVel, 2);
	assert_int_equal(fx_rows(&f, j), 1);
	double J[2][6];
	ang_row(J, EZ, 1);
	expect_J(&f.rows[0], J);
	/* motor: target speed, force bounded by fmax -> impulse bounded by fmax h */
	assert_double_equal(f.rows[0].c, 2.0, 1e-15);
	assert_double_equal(f.rows[0].lo, -5 * H, 1e-15);
	assert_double_equal(f.rows[0].hi, 5 * H, 1e-15);
	assert_int_equal(f.rows[0].kind, LK_ROW_MOTOR);
	fx_done(&f);
}

static void test_lmotor(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	dJointID j = dJointCreateLMotor(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetLMotorNumAxes(j, 1);
	dJointSetLMotorAxis(j, 0, 0, 1, 0, 0);
	dJointSetLMotorParam(j, dParamFMax, 5);
	dJointSetLMotorParam(j, dParamVel, 2);
	assert_int_equal(fx_rows(&f, j), 1);
	double J[2][6];
	memset(J, 0, sizeof J);
	J[0][0] = 1;
	J[1][0] = -1;
	expect_J(&f.rows[0], J);
	assert_double_equal(f.rows[0].c, 2.0, 1e-15);
	assert_double_equal(f.rows[0].lo, -5 * H, 1e-15);
	assert_double_equal(f.rows[0].hi, 5 * H, 1e-15);
	assert_int_equal(f.rows[0].kind, LK_ROW_MOTOR);
	fx_done(&f);
}

static void test_plane2d(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	dJointID j = dJointCreatePlane2D(f.w, 0);
	dJointAttach(j, f.a, 0);
	assert_int_equal(fx_rows(&f, j), 3);
	double J[2][6];
	memset(J, 0, sizeof J);
	J[0][2] = 1;
	expect_J(&f.rows[0], J);
	ang_row(J, EX, 0);
	expect_J(&f.rows[1], J);
	ang_row(J, EY, 0);
	expect_J(&f.rows[2], J);
	assert_int_equal(f.rows[0].body[1], LK_STATIC);
	/* pulls z back to the plane z = 0: fps * erp * (0 - z) */
	assert_double_equal(f.rows[0].c, (1.0 / H) * 0.2 * -XA[2], 1e-12);
	fx_done(&f);
}

static void test_pr(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	dJointID j = dJointCreatePR(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetPRAnchor(j, P[0], P[1], P[2]);
	dJointSetPRAxis1(j, 1, 0, 0); /* prismatic */
	dJointSetPRAxis2(j, 0, 1, 0); /* rotoide */
	assert_int_equal(fx_rows(&f, j), 4);
	expect_bilateral(&f, 0.0);
	expect_full_rank(&f);
	expect_rigid_allowed(&f);
	expect_b_translation_allowed(&f, EX);
	expect_b_rotation_allowed(&f, EY, P);
	fx_done(&f);
}

static void test_pu(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	dJointID j = dJointCreatePU(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetPUAnchor(j, P[0], P[1], P[2]);
	dJointSetPUAxis1(j, 0, 1, 0);
	dJointSetPUAxis2(j, 0, 0, 1);
	dJointSetPUAxis3(j, 1, 0, 0); /* prismatic */
	assert_int_equal(fx_rows(&f, j), 3);
	expect_bilateral(&f, 0.0);
	expect_full_rank(&f);
	expect_rigid_allowed(&f);
	expect_b_translation_allowed(&f, EX);
	expect_b_rotation_allowed(&f, EY, P);
	expect_b_rotation_allowed(&f, EZ, P);
	fx_done(&f);
}

static void test_piston(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	dJointID j = dJointCreatePiston(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetPistonAnchor(j, P[0], P[1], P[2]);
	dJointSetPistonAxis(j, 1, 0, 0);
	assert_int_equal(fx_rows(&f, j), 4);
	expect_bilateral(&f, 0.0);
	expect_full_rank(&f);
	expect_rigid_allowed(&f);
	expect_b_translation_allowed(&f, EX);
	expect_b_rotation_allowed(&f, EX, P);
	fx_done(&f);
}

static void test_dball(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	const double p1[3] = {0.2, 0.1, 1.0}, p2[3] = {1.1, -0.1, 1.05};
	dJointID j = dJointCreateDBall(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetDBallAnchor1(j, p1[0], p1[1], p1[2]);
	dJointSetDBallAnchor2(j, p2[0], p2[1], p2[2]);
	assert_int_equal(fx_rows(&f, j), 1);
	/* d/dt |p2 - p1| = u . (v_B(p2) - v_A(p1)), u = (p2 - p1) / |p2 - p1| */
	double u[3], r[3], J[2][6];
	sub3(u, p2, p1);
	unit3(u);
	sub3(r, p1, XA);
	for (int k = 0; k < 3; ++k)
		J[0][k] = -u[k];
	cross3(J[0] + 3, r, u);
	for (int k = 3; k < 6; ++k)
		J[0][k] = -J[0][k];
	sub3(r, p2, XB);
	memcpy(J[1], u, sizeof u);
	cross3(J[1] + 3, r, u);
	expect_J(&f.rows[0], J);
	expect_bilateral(&f, 0.0);
	fx_done(&f);
}

static void test_dhinge(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	const double p1[3] = {0.1, 0.0, 1.0}, p2[3] = {0.9, 0.2, 1.0};
	dJointID j = dJointCreateDHinge(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetDHingeAxis(j, 0, 0, 1);
	dJointSetDHingeAnchor1(j, p1[0], p1[1], p1[2]);
	dJointSetDHingeAnchor2(j, p2[0], p2[1], p2[2]);
	assert_int_equal(fx_rows(&f, j), 4);
	expect_bilateral(&f, 0.0);
	expect_full_rank(&f);
	expect_rigid_allowed(&f);
	/* a rod hinged about z at both ends: B turns about z through either end */
	expect_b_rotation_allowed(&f, EZ, p1);
	expect_b_rotation_allowed(&f, EZ, p2);
	fx_done(&f);
}

static void test_transmission(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	dJointID j = dJointCreateTransmission(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetTransmissionMode(j, dTransmissionParallelAxes);
	dJointSetTransmissionAxis(j, 0, 0, 1);
	dJointSetTransmissionAnchor1(j, XA[0], XA[1], XA[2]);
	dJointSetTransmissionAnchor2(j, XB[0], XB[1], XB[2]);
	dJointSetTransmissionRatio(j, 2);
	assert_int_equal(fx_rows(&f, j), 1);
	/* gears of radii 2/3 and 1/3 touching at c: the tangential velocities at c agree */
	const double c[3] = {2.0 / 3.0, 0, 1};
	double l[3], d[3], J[2][6];
	sub3(d, XB, XA);
	cross3(l, d, EZ);
	unit3(l);
	point_row(J, l, c, 1);
	expect_J(&f.rows[0], J);
	expect_bilateral(&f, 0.0);
	expect_rigid_allowed(&f);
	motion mo;
	memset(&mo, 0, sizeof mo);
	mo.wa[2] = 1;
	memcpy(mo.oa, XA, sizeof mo.oa);
	mo.wb[2] = -2;
	memcpy(mo.ob, XB, sizeof mo.ob);
	expect_allowed(&f, &mo);
	fx_done(&f);
}

/* ------------------------------------------------------------------------------------ conversion */

static void test_error_reduction_and_cfm(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	dWorldSetERP(f.w, 0.5);
	dWorldSetCFM(f.w, 1e-5);
	dJointID j = dJointCreateBall(f.w, 0);
	dJointAttach(j, f.a, f.b);
	dJointSetBallAnchor(j, P[0], P[1], P[2]);
	dBodySetPosition(f.b, XB[0], XB[1], XB[2] + 0.1); /* B's anchor now 0.1 above A's */
	assert_int_equal(fx_rows(&f, j), 3);
	/* ODE's c is a velocity: fps * erp * (anchor_B - anchor_A) */
	assert_double_equal(f.rows[0].c, 0.0, 1e-12);
	assert_double_equal(f.rows[1].c, 0.0, 1e-12);
	assert_double_equal(f.rows[2].c, (1.0 / H) * 0.5 * 0.1, 1e-9);
	for (int i = 0; i < 3; ++i)
		assert_double_equal(f.rows[i].s, 1e-5 / H, 1e-18);
	fx_done(&f);
}

static void test_soft_contact_and_fixed_friction(void **state)
{
	(void)state;
	fx f;
	fx_init(&f);
	dContact c;
	memset(&c, 0, sizeof c);
	c.surface.mode = dContactSoftCFM | dContactMu2; /* no Approx1: friction bounds are fixed forces */
	c.surface.mu = 3.0;
	c.surface.mu2 = 4.0;
	c.surface.soft_cfm = 1e-3;
	c.geom.pos[2] = 0.5;
	c.geom.normal[2] = 1;
	c.geom.depth = 0.02;
	dJointID j = dJointCreateContact(f.w, 0, &c);
	dJointAttach(j, f.a, 0);
	assert_int_equal(fx_rows(&f, j), 3);
	assert_double_equal(f.rows[0].s, 1e-3 / H, 1e-15);
	/* without findex a friction bound is a force: mu h as an impulse */
	assert_int_equal(f.rows[1].findex, -1);
	assert_double_equal(f.rows[1].lo, -3.0 * H, 1e-15);
	assert_double_equal(f.rows[1].hi, 3.0 * H, 1e-15);
	assert_double_equal(f.rows[2].hi, 4.0 * H, 1e-15);
	assert_int_equal(f.rows[1].kind, LK_ROW_FRICTION);
	fx_done(&f);
}

/* u* = u + h M^-1 (f + m g, tau) with the world inertia R I^-1 R^T. */
static void test_unconstrained_velocity(void **state)
{
	(void)state;
	dWorldID w = dWorldCreate();
	dWorldSetGravity(w, 0, 0, -10);
	dBodyID b = dBodyCreate(w);
	dMass m;
	dMassSetBoxTotal(&m, 2.0, 1.0, 2.0, 3.0);
	dBodySetMass(b, &m);
	dMatrix3 R;
	dRFromAxisAndAngle(R, 0, 0, 1, M_PI / 2); /* body x -> world y */
	dBodySetRotation(b, R);
	dBodySetLinearVel(b, 1, 2, 3);
	dBodySetAngularVel(b, 0.5, -0.25, 0.125);
	dBodySetGyroscopicMode(b, 0);
	dBodyAddForce(b, 4, 0, 0);
	dBodyAddTorque(b, 0, 0, 6);
	lk_ode *ctx = NULL;
	assert_int_equal(lk_ode_create(w, NULL, &ctx, NULL, 0), LK_OK);
	lk_ode_add_body(ctx, b);
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	assert_int_equal(lk_ode_extract(ctx, H, p), LK_OK);
	assert_int_equal(lk_problem_body_count(p), 1);
	const lk_body_def *d = lk_problem_body(p, 0);
	assert_double_equal(d->u[0], 1 + H * 4 / 2.0, 1e-14);
	assert_double_equal(d->u[1], 2, 1e-14);
	assert_double_equal(d->u[2], 3 - H * 10, 1e-14);
	/* box 1 x 2 x 3 of mass 2: I = m/12 diag(2^2+3^2, 1+3^2, 1+2^2); torque along world z = body z */
	double Izz = 2.0 / 12.0 * (1 + 4);
	assert_double_equal(d->u[5], 0.125 + H * 6 / Izz, 1e-13);
	assert_double_equal(d->u[3], 0.5, 1e-14);
	/* world inverse inertia: world x is body -y, world y is body x */
	double Ixx_body = 2.0 / 12.0 * 13, Iyy_body = 2.0 / 12.0 * 10;
	assert_double_equal(d->inv_inertia[0], 1 / Iyy_body, 1e-13);
	assert_double_equal(d->inv_inertia[4], 1 / Ixx_body, 1e-13);
	assert_double_equal(d->inv_inertia[1], 0.0, 1e-13);
	assert_double_equal(d->inv_mass[0], 0.5, 1e-15);
	lk_problem_destroy(p);
	lk_ode_destroy(ctx);
	dWorldDestroy(w);
}

/* With the gyroscopic term on, u* is what ODE's own integrator gives a free body. */
static void test_unconstrained_velocity_gyroscopic(void **state)
{
	(void)state;
	dWorldID w = dWorldCreate();
	dWorldSetGravity(w, 0, -3, -10);
	dBodyID b = dBodyCreate(w);
	dMass m;
	dMassSetBoxTotal(&m, 2.0, 1.0, 2.0, 3.0);
	dBodySetMass(b, &m);
	dMatrix3 R;
	dRFromAxisAndAngle(R, 1, 2, 3, 0.7);
	dBodySetRotation(b, R);
	dBodySetLinearVel(b, 1, 2, 3);
	dBodySetAngularVel(b, 5, -3, 2);
	dBodyAddForce(b, 4, 0, 1);
	dBodyAddTorque(b, 1, 2, 6);
	assert_true(dBodyGetGyroscopicMode(b));
	lk_ode *ctx = NULL;
	assert_int_equal(lk_ode_create(w, NULL, &ctx, NULL, 0), LK_OK);
	lk_ode_add_body(ctx, b);
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	assert_int_equal(lk_ode_extract(ctx, H, p), LK_OK);
	double u[6];
	memcpy(u, lk_problem_body(p, 0)->u, sizeof u);
	dWorldQuickStep(w, H);
	const dReal *v = dBodyGetLinearVel(b), *om = dBodyGetAngularVel(b);
	for (int k = 0; k < 3; ++k) {
		assert_double_equal(u[k], v[k], 1e-13);
		assert_double_equal(u[3 + k], om[k], 1e-13);
	}
	/* and the term matters here: it is not the plain explicit update */
	assert_true(fabs(u[3] - 5) > 1e-3);
	lk_problem_destroy(p);
	lk_ode_destroy(ctx);
	dWorldDestroy(w);
}

/* ----------------------------------------------------------------------------------- the walk */

static void test_discovery(void **state)
{
	(void)state;
	dWorldID w = dWorldCreate();
	dSpaceID s = dSimpleSpaceCreate(0);
	dMass m;
	dMassSetSphere(&m, 1, 0.5);
	dBodyID b[5];
	for (int i = 0; i < 5; ++i) {
		b[i] = dBodyCreate(w);
		dBodySetMass(b[i], &m);
		dBodySetPosition(b[i], i, 0, 1);
	}
	/* only b0 has a geom in the space; b1, b2 hang on it by ball joints, b3 behind a disabled joint,
	 * b4 kinematic with a joint to the world (a joint ODE does not step) */
	dGeomID g = dCreateSphere(s, 0.5);
	dGeomSetBody(g, b[0]);
	dJointID j01 = dJointCreateBall(w, 0), j12 = dJointCreateHinge(w, 0), j23 = dJointCreateBall(w, 0);
	dJointAttach(j01, b[0], b[1]);
	dJointAttach(j12, b[2], b[1]);
	dJointAttach(j23, b[2], b[3]);
	dJointDisable(j23);
	dBodySetKinematic(b[4]);
	dJointID j4 = dJointCreateBall(w, 0);
	dJointAttach(j4, b[4], 0);
	lk_ode *ctx = NULL;
	assert_int_equal(lk_ode_create(w, NULL, &ctx, NULL, 0), LK_OK);
	assert_int_equal(lk_ode_add_space(ctx, s), LK_OK);
	assert_int_equal(lk_ode_add_body(ctx, b[4]), LK_OK);
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	assert_int_equal(lk_ode_extract(ctx, H, p), LK_OK);
	assert_int_equal(lk_problem_body_count(p), 4); /* b0, b1, b2 and the registered kinematic b4 */
	assert_int_equal(lk_problem_row_count(p), 3 + 5);
	int seen01 = 0, seen12 = 0;
	for (int r = 0; r < lk_problem_row_count(p); ++r) {
		dJointID j = lk_ode_problem_joint(ctx, r, NULL);
		seen01 += j == j01;
		seen12 += j == j12;
		assert_true(j != j23 && j != j4);
	}
	assert_int_equal(seen01, 3);
	assert_int_equal(seen12, 5);
	/* j12 is attached (b2, b1): its rows act on b2 first */
	for (int r = 0; r < lk_problem_row_count(p); ++r) {
		lk_row_def d;
		lk_problem_get_row(p, r, &d);
		if (lk_ode_problem_joint(ctx, r, NULL) == j12)
			assert_true(lk_ode_problem_body(ctx, d.body[0]) == b[2]);
	}
	/* enable the joint to b3: now it is reached */
	dJointEnable(j23);
	assert_int_equal(lk_ode_extract(ctx, H, p), LK_OK);
	assert_int_equal(lk_problem_body_count(p), 5);
	assert_int_equal(lk_problem_row_count(p), 3 + 5 + 3);
	/* a disabled (sleeping) starting body is not a start */
	dBodyDisable(b[0]);
	dBodyDisable(b[1]);
	dBodyDisable(b[2]);
	dBodyDisable(b[3]);
	assert_int_equal(lk_ode_extract(ctx, H, p), LK_OK);
	assert_int_equal(lk_problem_row_count(p), 0);
	lk_problem_destroy(p);
	lk_ode_destroy(ctx);
	dSpaceDestroy(s);
	dWorldDestroy(w);
}

static void test_create_and_spec_errors(void **state)
{
	(void)state;
	char err[300];
	assert_int_equal(lk_ode_check(err, sizeof err), LK_OK);
	lk_ode *ctx = (lk_ode *)1;
	assert_int_equal(lk_ode_create(NULL, NULL, &ctx, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	assert_null(ctx);
	assert_non_null(strstr(err, "world"));
	dWorldID w = dWorldCreate();
	lk_ode_def def = lk_ode_default_def();
	def.solver = "no-such-solver";
	assert_int_equal(lk_ode_create(w, &def, &ctx, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "no-such-solver"));
	def.solver = "ode-step";
	assert_int_equal(lk_ode_create(w, &def, &ctx, err, sizeof err), LK_OK);
	assert_int_equal(lk_ode_get_stepper(ctx), LK_ODE_STEP);
	assert_int_equal(lk_ode_set_solver(ctx, "psor:w=1.3"), LK_OK);
	assert_int_equal(lk_ode_get_stepper(ctx), LK_ODE_LCPKIT);
	/* no "iters" or "budget" in the spec: the world's quickstep iteration count is the budget */
	dWorldSetQuickStepNumIterations(w, 37);
	assert_true(lk_ode_get_config(ctx).budget == 37.0);
	assert_int_equal(lk_ode_set_solver(ctx, "pgs:budget=5"), LK_OK);
	assert_true(lk_ode_get_config(ctx).budget == 5.0);
	assert_int_equal(lk_ode_set_solver(ctx, "psor:w=1.3"), LK_OK);
	assert_double_equal(lk_ode_get_config(ctx).sor_w, 1.3, 0);
	/* auto reorders its rows every eight sweeps, as quickstep does, unless the spec says otherwise */
	assert_int_equal(lk_ode_set_solver(ctx, "auto"), LK_OK);
	assert_int_equal(lk_ode_get_config(ctx).adapt.shuffle, 8);
	assert_int_equal(lk_ode_set_solver(ctx, "auto:shuffle=0"), LK_OK);
	assert_int_equal(lk_ode_get_config(ctx).adapt.shuffle, 0);
	assert_int_not_equal(lk_ode_set_solver(ctx, "auto:shuffle=-1"), LK_OK);
	assert_non_null(strstr(lk_ode_error(ctx), "shuffle"));
	assert_int_equal(lk_ode_get_config(ctx).adapt.shuffle, 0); /* unchanged */
	assert_int_equal(lk_ode_set_solver(ctx, "pgs:iters=7"), LK_OK);
	assert_int_equal(lk_ode_get_config(ctx).max_iterations, 7);
	assert_int_equal(lk_ode_set_solver(ctx, "pgs:bogus=1"), LK_ERR_PARSE);
	assert_int_equal(lk_ode_get_config(ctx).max_iterations, 7); /* unchanged */
	assert_true(strlen(lk_ode_error(ctx)) > 0);
	assert_int_equal(lk_ode_world_step(ctx, 0.0), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_ode_world_step(ctx, NAN), LK_ERR_INVALID_ARGUMENT);
	lk_ode_destroy(ctx);
	dWorldDestroy(w);
}

/* Every invalid argument of ode.h is refused with LK_ERR_INVALID_ARGUMENT and, where there is a context to
 * hold it, a message that names the function and what is wrong. */
static void expect_refused(lk_status st, const lk_ode *ctx, const char *function, const char *what)
{
	assert_int_equal(st, LK_ERR_INVALID_ARGUMENT);
	if (!strstr(lk_ode_error(ctx), function) || !strstr(lk_ode_error(ctx), what))
		fail_msg("\"%s\" does not name %s and %s", lk_ode_error(ctx), function, what);
}

static void test_argument_messages(void **state)
{
	(void)state;
	dWorldID w = dWorldCreate(), other = dWorldCreate();
	dSpaceID s = dSimpleSpaceCreate(0);
	dGeomID g = dCreateSphere(s, 1);
	dBodyID stranger = dBodyCreate(other);
	lk_ode *ctx = NULL;
	char err[300];
	lk_ode_def def = lk_ode_default_def();
	def.warm_distance = -1;
	assert_int_equal(lk_ode_create(w, &def, &ctx, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err, "warm_distance"));
	assert_int_equal(lk_ode_create(w, NULL, NULL, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err, "out is NULL"));
	assert_int_equal(lk_ode_create(w, NULL, &ctx, err, sizeof err), LK_OK);

	expect_refused(lk_ode_add_space(ctx, NULL), ctx, "lk_ode_add_space", "NULL");
	expect_refused(lk_ode_add_space(ctx, (dSpaceID)g), ctx, "lk_ode_add_space", "not a space");
	expect_refused(lk_ode_remove_space(ctx, NULL), ctx, "lk_ode_remove_space", "NULL");
	expect_refused(lk_ode_add_body(ctx, NULL), ctx, "lk_ode_add_body", "NULL");
	expect_refused(lk_ode_add_body(ctx, stranger), ctx, "lk_ode_add_body", "belongs to world");
	expect_refused(lk_ode_remove_body(ctx, NULL), ctx, "lk_ode_remove_body", "NULL");
	expect_refused(lk_ode_set_solver(ctx, NULL), ctx, "lk_ode_set_solver", "NULL");
	expect_refused(lk_ode_set_config(ctx, NULL), ctx, "lk_ode_set_config", "NULL");
	expect_refused(lk_ode_set_fallback(ctx, LK_ODE_LCPKIT), ctx, "lk_ode_set_fallback", "not one of ODE's");
	expect_refused(lk_ode_world_step(ctx, -0.01), ctx, "lk_ode_world_step", "positive and finite");
	expect_refused(lk_ode_world_step(ctx, INFINITY), ctx, "lk_ode_world_step", "positive and finite");
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	expect_refused(lk_ode_extract(ctx, 0.0, p), ctx, "lk_ode_extract", "positive and finite");
	expect_refused(lk_ode_extract(ctx, 0.01, NULL), ctx, "lk_ode_extract", "NULL");
	assert_int_equal(lk_ode_get_stats(ctx, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_ode_get_timing(ctx, NULL), LK_ERR_INVALID_ARGUMENT);
	/* the bad spec names the choices, ODE's own solvers from the engine table included */
	assert_int_equal(lk_ode_set_solver(ctx, "bullet-si"), LK_ERR_PARSE);
	assert_non_null(strstr(lk_ode_error(ctx), "another engine's own solver"));
	assert_non_null(strstr(lk_ode_error(ctx), "ode-quickstep, ode-step"));
	/* nothing changed: still the default solver and no registration */
	assert_int_equal(lk_ode_get_stepper(ctx), LK_ODE_LCPKIT);
	assert_int_equal(lk_ode_extract(ctx, 0.01, p), LK_OK);
	assert_int_equal(lk_problem_body_count(p), 0);
	/* no context: the return, and lk_ode_error(NULL) */
	assert_int_equal(lk_ode_add_body(NULL, stranger), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_ode_world_step(NULL, 0.01), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(lk_ode_error(NULL), "NULL"));
	lk_problem_destroy(p);
	lk_ode_destroy(ctx);
	dSpaceDestroy(s);
	dWorldDestroy(other);
	dWorldDestroy(w);
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
		cmocka_unit_test(test_create_and_spec_errors),
		cmocka_unit_test(test_argument_messages),
		cmocka_unit_test(test_ball),
		cmocka_unit_test(test_hinge),
		cmocka_unit_test(test_slider),
		cmocka_unit_test(test_contact),
		cmocka_unit_test(test_universal),
		cmocka_unit_test(test_hinge2),
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_null),
		cmocka_unit_test(test_amotor),
		cmocka_unit_test(test_lmotor),
		cmocka_unit_test(test_plane2d),
		cmocka_unit_test(test_pr),
		cmocka_unit_test(test_pu),
		cmocka_unit_test(test_piston),
		cmocka_unit_test(test_dball),
		cmocka_unit_test(test_dhinge),
		cmocka_unit_test(test_transmission),
		cmocka_unit_test(test_error_reduction_and_cfm),
		cmocka_unit_test(test_soft_contact_and_fixed_friction),
		cmocka_unit_test(test_unconstrained_velocity),
		cmocka_unit_test(test_unconstrained_velocity_gyroscopic),
		cmocka_unit_test(test_discovery),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

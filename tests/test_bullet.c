/* The Bullet shim: scenes that must come out right with every solver, the row mapping proven against Bullet's
 * own sequential impulse solver, joints, statistics and argument checking of the C API. */
#include "test_util.h"

#include "lcpkit/bullet.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H (1.0 / 60.0)

static lk_bt_world *make_world(const char *solver, int iterations)
{
	lk_bt_world_def def = lk_bt_default_world_def();
	def.solver = solver;
	def.iterations = iterations;
	lk_bt_world *w = NULL;
	char err[256] = "";
	lk_status st = lk_bt_world_create(&def, &w, err, sizeof err);
	if (st != LK_OK)
		fprintf(stderr, "world with solver %s: %s\n", solver, err);
	assert_int_equal(st, LK_OK);
	assert_non_null(w);
	return w;
}

static int add_ground(lk_bt_world *w)
{
	lk_bt_body_def g = lk_bt_default_body_def();
	g.shape = lk_bt_shape_plane(0, 0, 1, 0);
	g.mass = 0;
	int id = -1;
	assert_int_equal(lk_bt_body_create(w, &g, &id), LK_OK);
	return id;
}

static int add_box(lk_bt_world *w, double x, double y, double z, double half, double mass)
{
	lk_bt_body_def b = lk_bt_default_body_def();
	b.shape = lk_bt_shape_box(half, half, half);
	b.mass = mass;
	b.position[0] = x;
	b.position[1] = y;
	b.position[2] = z;
	int id = -1;
	assert_int_equal(lk_bt_body_create(w, &b, &id), LK_OK);
	return id;
}

static void step(lk_bt_world *w, int n, lk_engine_step_stats *stats)
{
	for (int i = 0; i < n; ++i) {
		lk_status st = lk_bt_world_step(w, stats);
		if (st != LK_OK)
			fprintf(stderr, "step: %s\n", lk_bt_world_error(w));
		assert_int_equal(st, LK_OK);
	}
}

static void position(lk_bt_world *w, int id, double p[3])
{
	assert_int_equal(lk_bt_body_get_transform(w, id, p, NULL), LK_OK);
}

/* ---------------------------------------------------------------------------------- a box at rest */

static const char *const bullet_solvers[] = {"bullet-si", "bullet-nncg", "bullet-dantzig", "bullet-lemke",
                                             "bullet-pgs"};

/* A 1 m cube dropped from 0.1 m settles with its centre at 0.5 m, upright, at rest, on four contact points. */
static void check_box_rests(const char *solver)
{
	lk_bt_world *w = make_world(solver, 20);
	add_ground(w);
	int box = add_box(w, 0, 0, 0.6, 0.5, 1.0);
	lk_engine_step_stats s;
	step(w, 120, &s);
	double p[3], q[4], v[3], om[3];
	assert_int_equal(lk_bt_body_get_transform(w, box, p, q), LK_OK);
	assert_int_equal(lk_bt_body_get_velocity(w, box, v, om), LK_OK);
	print_message("%-16s z = %.6f  |v| = %.2e  RES %.2e -> %.2e  fallbacks %lld\n", solver, p[2],
	              sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), s.res_initial, s.res_final,
	              (long long)lk_bt_world_fallbacks(w));
	/* penetration at rest is what error reduction leaves after gravity's step: a fraction of a millimetre;
	 * the first impact has one contact point (Bullet's manifold gathers four over a few steps), so the box
	 * may tip and shift a little before it settles flat */
	assert_double_equal(p[2], 0.5, 2e-3);
	assert_double_equal(p[0], 0.0, 0.02);
	assert_double_equal(p[1], 0.0, 0.02);
	assert_double_equal(fabs(q[3]), 1.0, 1e-6);
	assert_true(sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) < 1e-2);
	assert_true(sqrt(om[0] * om[0] + om[1] * om[1] + om[2] * om[2]) < 1e-2);
	/* Bullet's box-plane manifold starts from the deepest corner and gathers more points as the box moves:
	 * four for most solvers, one edge (two) when an exact solver lands the box tilted on one corner and it
	 * then settles flat without rocking */
	int points = 0;
	assert_int_equal(lk_bt_body_contact_count(w, box, &points), LK_OK);
	assert_true(points >= 2 && points <= 4);
	double depth = -1;
	assert_int_equal(lk_bt_world_max_penetration(w, &depth), LK_OK);
	assert_true(depth >= 0 && depth < 2e-3);
	assert_int_equal(s.rows_by_kind[LK_ROW_NORMAL], points);
	assert_int_equal(s.rows_by_kind[LK_ROW_FRICTION], 2 * points);
	/* Bullet's MLCP solvers fall back to its sequential impulse solver by themselves when their method fails
	 * (Dantzig on the four redundant contacts of a box); lcpkit's methods must not need Bullet */
	if (strncmp(solver, "bullet-", 7) != 0)
		assert_int_equal(lk_bt_world_fallbacks(w), 0);
	assert_true(isfinite(s.res_final));
	lk_bt_world_destroy(w);
}

/* Bullet's MLCP solver with Lemke's method throws the box off the ground within a second (with Bullet's own
 * default of one friction direction too): it is only run here, through every call of the API. */
static void check_runs(const char *solver)
{
	lk_bt_world *w = make_world(solver, 20);
	add_ground(w);
	int box = add_box(w, 0, 0, 0.6, 0.5, 1.0);
	lk_engine_step_stats s;
	step(w, 30, &s);
	double p[3];
	position(w, box, p);
	assert_true(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]));
	assert_string_equal(lk_bt_world_solver(w), solver);
	lk_bt_world_destroy(w);
}

static void test_box_rests_every_solver(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bullet_solvers / sizeof bullet_solvers[0]; ++i) {
		if (!strcmp(bullet_solvers[i], "bullet-lemke"))
			check_runs(bullet_solvers[i]);
		else
			check_box_rests(bullet_solvers[i]);
	}
	/* every lcpkit method this build has, through the adapter, with the same work: 100 sweep-equivalents a
	 * step (at the world's 20, a Newton method affords five products a step, too few to settle the box) */
	for (int m = 0; m < LK_METHOD_COUNT; ++m) {
		char spec[64];
		snprintf(spec, sizeof spec, "%s:budget=100", lk_method_name((lk_method)m));
		check_box_rests(spec);
	}
}

/* ---------------------------------------------------------------------------------- a 10-box stack */

static void check_stack_stands(const char *solver)
{
	lk_bt_world *w = make_world(solver, 20);
	add_ground(w);
	int box[10];
	for (int i = 0; i < 10; ++i)
		box[i] = add_box(w, 0, 0, 0.5 + i, 0.5, 1.0);
	lk_engine_step_stats s;
	step(w, 300, &s); /* 5 s */
	double worst_xy = 0, worst_z = 0;
	for (int i = 0; i < 10; ++i) {
		double p[3];
		position(w, box[i], p);
		worst_xy = fmax(worst_xy, hypot(p[0], p[1]));
		worst_z = fmax(worst_z, fabs(p[2] - (0.5 + i)));
	}
	print_message("%-10s stack after 5 s: max sideways %.2e m, max height error %.2e m, RES %.2e -> %.2e\n",
	              solver, worst_xy, worst_z, s.res_initial, s.res_final);
	/* standing: no box has dropped or risen (a fallen box would be 0.5 m or more off), none has slid towards
	 * the edge of the one below; with 20 iterations the stack jiggles by a few centimetres */
	assert_true(worst_z < 0.03);
	assert_true(worst_xy < 0.2);
	assert_int_equal(lk_bt_world_fallbacks(w), 0);
	assert_int_equal(s.rows_by_kind[LK_ROW_NORMAL], 40);
	assert_int_equal(s.rows_by_kind[LK_ROW_FRICTION], 80); /* two directions per contact */
	lk_bt_world_destroy(w);
}

static void test_stack_stands_pgs(void **state)
{
	(void)state;
	check_stack_stands("pgs");
}

static void test_stack_stands_amgs(void **state)
{
	(void)state;
	check_stack_stands("amgs");
}

/* ---------------------------------------------------------------------------------- a hinge pendulum */

/* A 1 m pendulum released horizontally swings in its plane for 5 s. Velocity-level joint rows let the bob drift
 * outwards by about (v h)^2 / (2 L) per step, which error reduction (erp 0.2) pulls back: at v = sqrt(2 g L) this
 * balances near 1.2 % of the length. The rows themselves must be solved (tiny residual). */
static void check_pendulum(const char *solver)
{
	lk_bt_world *w = make_world(solver, 20);
	lk_bt_body_def b = lk_bt_default_body_def();
	b.shape = lk_bt_shape_sphere(0.1);
	b.position[0] = 1.0;
	b.position[2] = 2.0;
	int bob;
	assert_int_equal(lk_bt_body_create(w, &b, &bob), LK_OK);
	lk_bt_joint_def j = lk_bt_default_joint_def(LK_BT_JOINT_HINGE);
	j.body_a = bob;
	j.anchor[2] = 2.0;
	j.axis[0] = 0;
	j.axis[1] = 1;
	int hinge;
	assert_int_equal(lk_bt_joint_create(w, &j, &hinge), LK_OK);
	double dev = 0, off_plane = 0, lowest = 10, worst_res = 0, angle_at_lowest = 0;
	for (int i = 0; i < 300; ++i) {
		lk_engine_step_stats s;
		step(w, 1, &s);
		double p[3];
		position(w, bob, p);
		dev = fmax(dev, fabs(sqrt(p[0] * p[0] + p[1] * p[1] + (p[2] - 2) * (p[2] - 2)) - 1.0));
		off_plane = fmax(off_plane, fabs(p[1]));
		if (p[2] < lowest) {
			lowest = p[2];
			assert_int_equal(lk_bt_joint_get_position(w, hinge, &angle_at_lowest), LK_OK);
		}
		worst_res = fmax(worst_res, s.res_final);
		assert_int_equal(s.rows_by_kind[LK_ROW_JOINT], 5);
	}
	print_message("%-10s pendulum: max |L - 1| = %.3e, off plane %.1e, lowest z %.4f, RES <= %.1e\n", solver, dev,
	              off_plane, lowest, worst_res);
	assert_true(dev < 0.015);
	assert_true(off_plane < 1e-9);
	/* it swung through the bottom (z = 1 at L = 1), a quarter turn about +y from the start: the hinge angle is
	 * body_a's rotation about the axis */
	assert_true(lowest < 1.0);
	assert_double_equal(angle_at_lowest, acos(-1.0) / 2, 0.05);
	assert_true(worst_res < 1e-6);
	lk_bt_world_destroy(w);
}

static void test_pendulum_keeps_length(void **state)
{
	(void)state;
	check_pendulum("bullet-si");
	check_pendulum("pgs");
	check_pendulum("amgs");
}

/* ---------------------------------------------------------------------------------- the row mapping */

/* A scene with every kind of row: a stack (contacts and friction), a light ball with rolling and spinning
 * friction (its normal impulse stays below 1, so Bullet's cap of the rolling bound at mu does not bind), and a
 * motorised hinge with a limit (joint, motor and limit rows). */
static lk_bt_world *mapping_scene(const char *solver)
{
	lk_bt_world *w = make_world(solver, 10);
	add_ground(w);
	for (int i = 0; i < 3; ++i)
		add_box(w, 0, 0, 0.5 + i, 0.5, 1.0);
	lk_bt_body_def ball = lk_bt_default_body_def();
	ball.shape = lk_bt_shape_sphere(0.2);
	ball.mass = 0.05;
	ball.position[0] = 3.0;
	ball.position[2] = 0.2;
	ball.linear_velocity[1] = 0.5;
	ball.rolling_friction = 0.1;
	ball.spinning_friction = 0.1;
	assert_int_equal(lk_bt_body_create(w, &ball, NULL), LK_OK);
	int arm = add_box(w, -3, 0, 2, 0.2, 2.0);
	lk_bt_joint_def j = lk_bt_default_joint_def(LK_BT_JOINT_HINGE);
	j.body_a = arm;
	j.anchor[0] = -3.5;
	j.anchor[2] = 2.0;
	j.axis[0] = 0;
	j.axis[1] = 1;
	j.lower = -0.3;
	j.upper = 0.3;
	j.motor = 1;
	j.motor_velocity = 1.0;
	j.motor_max_force = 15.0;
	assert_int_equal(lk_bt_joint_create(w, &j, NULL), LK_OK);
	return w;
}

/* Bullet's sequential impulse solver and lcpkit's PGS configured alike (same iterations, natural order = Bullet's
 * non-randomised order of joint rows, contact normals, friction, rolling friction; warm start; no relaxation)
 * are the same algorithm, so on a recorded step they must produce the same impulses up to rounding. This
 * holds while no normal impulse drops to zero under a non-zero friction impulse (Bullet then leaves the
 * friction row alone, the LCP clamps it to zero), so the step is taken from a settled scene. */
static void test_impulses_match_bullet_si(void **state)
{
	(void)state;
	lk_bt_world *w = mapping_scene("bullet-si");
	step(w, 90, NULL);
	assert_int_equal(lk_bt_world_set_recording(w, 1), LK_OK);
	lk_engine_step_stats s;
	step(w, 1, &s);
	lk_problem *p = NULL;
	assert_int_equal(lk_bt_world_recorded_problem(w, &p), LK_OK);
	const int n = lk_problem_row_count(p);
	assert_int_equal(n, s.rows);
	int kinds[LK_ROW_KIND_COUNT] = {0};
	for (int i = 0; i < n; ++i) {
		lk_row_kind k;
		assert_int_equal(lk_problem_get_bounds(p, i, NULL, NULL, NULL, NULL, &k), LK_OK);
		kinds[k]++;
	}
	print_message("rows by kind: joint %d, normal %d, friction %d, limit %d, motor %d\n", kinds[LK_ROW_JOINT],
	              kinds[LK_ROW_NORMAL], kinds[LK_ROW_FRICTION], kinds[LK_ROW_LIMIT], kinds[LK_ROW_MOTOR]);
	/* hinge: 5 joint rows, the motor row, and the limit row when the limit is reached */
	assert_int_equal(kinds[LK_ROW_JOINT], 5);
	assert_int_equal(kinds[LK_ROW_MOTOR], 1);
	assert_true(kinds[LK_ROW_NORMAL] >= 9);
	/* two friction rows per contact, three rolling rows for the ball */
	assert_int_equal(kinds[LK_ROW_FRICTION], 2 * kinds[LK_ROW_NORMAL] + 3);

	double *bullet = malloc((size_t)n * sizeof *bullet);
	assert_non_null(bullet);
	assert_int_equal(lk_bt_world_recorded_solution(w, bullet, n), LK_OK);

	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.max_iterations = 10;
	cfg.warm_start = 1;
	cfg.sor_w = 1.0;
	cfg.order = LK_ORDER_NATURAL;
	lk_stats ls;
	assert_int_equal(lk_solve(p, &cfg, &ls, NULL), LK_OK);
	const double *mine = lk_problem_lambda(p);
	double scale = 0, diff = 0, moved = 0;
	const double *warm = NULL;
	lk_problem *again = NULL;
	assert_int_equal(lk_bt_world_recorded_problem(w, &again), LK_OK);
	warm = lk_problem_lambda(again);
	for (int i = 0; i < n; ++i) {
		scale = fmax(scale, fabs(bullet[i]));
		diff = fmax(diff, fabs(mine[i] - bullet[i]));
		moved = fmax(moved, fabs(bullet[i] - warm[i]));
	}
	print_message("%d rows: max |lambda| %.3e, solver moved it by %.3e, lcpkit - Bullet %.3e; RES %.3e / %.3e\n",
	              n, scale, moved, diff, ls.res_final, s.res_final);
	assert_true(scale > 0.1);
	assert_true(moved > 1e-3); /* the step did real work */
	assert_true(diff <= 1e-12 * scale);
	/* the core's RES of Bullet's impulses is the RES the step reported */
	assert_double_equal(ls.res_final, s.res_final, 1e-10 * fmax(1.0, s.res_final));
	free(bullet);
	lk_problem_destroy(p);
	lk_problem_destroy(again);
	lk_bt_world_destroy(w);
}

/* Through the adapter the same scene solved by lcpkit pgs behaves like Bullet's: the recorded problem (built by
 * the adapter this time) solved again must give what the adapter wrote back. */
static void test_adapter_writes_back_its_solution(void **state)
{
	(void)state;
	lk_bt_world *w = mapping_scene("pgs");
	step(w, 30, NULL);
	assert_int_equal(lk_bt_world_set_recording(w, 1), LK_OK);
	lk_engine_step_stats s;
	step(w, 1, &s);
	assert_int_equal(s.iterations, 10);
	assert_int_equal(s.fallback, 0);
	lk_problem *p = NULL;
	assert_int_equal(lk_bt_world_recorded_problem(w, &p), LK_OK);
	const int n = lk_problem_row_count(p);
	double *out = malloc((size_t)n * sizeof *out);
	assert_non_null(out);
	assert_int_equal(lk_bt_world_recorded_solution(w, out, n), LK_OK);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.max_iterations = 10;
	lk_stats ls;
	assert_int_equal(lk_solve(p, &cfg, &ls, NULL), LK_OK);
	assert_true(tu_max_diff(lk_problem_lambda(p), out, n) == 0.0); /* deterministic: bitwise */
	assert_double_equal(ls.res_initial, s.res_initial, 1e-12);
	assert_double_equal(ls.res_final, s.res_final, 1e-12);
	free(out);
	lk_problem_destroy(p);
	lk_bt_world_destroy(w);
}

/* The adapter reads the contact points (a cache miss per contact in Bullet's manifolds) only when the solve or a
 * recording uses them. A world that records and one that does not step alike under a coordinate order, which
 * sorts the rows by their points: had the second one built its rows without them (all 0, what the problem
 * takes for "unknown"), its sweeps would run in another order and the bodies would part. The recorded step,
 * solved again with the same order, gives what the adapter wrote back. */
static void test_contact_points_when_used(void **state)
{
	(void)state;
	const char *specs[2] = {"pgs:order=cp-z", "pgs:order=cp-x"};
	for (int k = 0; k < 2; ++k) {
		lk_bt_world *w[2] = {mapping_scene(specs[k]), mapping_scene(specs[k])};
		assert_int_equal(lk_bt_world_set_recording(w[0], 1), LK_OK);
		double apart = 0.0, moved = 0.0;
		for (int t = 0; t < 40; ++t) {
			lk_engine_step_stats s[2];
			for (int i = 0; i < 2; ++i) {
				assert_int_equal(lk_bt_world_step(w[i], &s[i]), LK_OK);
				assert_int_equal(s[i].fallback, 0);
			}
			for (int b = 0; b <= 5; ++b) {
				double x[2][3], q[2][4];
				for (int i = 0; i < 2; ++i)
					assert_int_equal(lk_bt_body_get_transform(w[i], b, x[i], q[i]), LK_OK);
				for (int e = 0; e < 3; ++e)
					apart = fmax(apart, fabs(x[0][e] - x[1][e]));
				moved = fmax(moved, fabs(x[0][1])); /* the ball, started rolling along y */
			}
		}
		print_message("%s: bodies apart by %.3e after 40 steps (sideways %.3f)\n", specs[k], apart, moved);
		assert_true(moved > 0.01);
		assert_true(apart == 0.0); /* the same order, the same arithmetic: bitwise */

		/* the last step as recorded, with its points, solved again in the same order */
		lk_problem *p = NULL;
		assert_int_equal(lk_bt_world_recorded_problem(w[0], &p), LK_OK);
		const int n = lk_problem_row_count(p);
		double nonzero = 0.0;
		for (int i = 0; i < n; ++i) {
			lk_row_def d;
			assert_int_equal(lk_problem_get_row(p, i, &d), LK_OK);
			if (d.kind == LK_ROW_NORMAL)
				nonzero = fmax(nonzero, fabs(d.point[0]) + fabs(d.point[1]));
		}
		assert_true(nonzero > 0.1); /* the recorded normal rows carry their contact points */
		double *out = malloc((size_t)n * sizeof *out);
		assert_non_null(out);
		assert_int_equal(lk_bt_world_recorded_solution(w[0], out, n), LK_OK);
		lk_solver_config cfg;
		char err[128];
		assert_int_equal(lk_config_parse(specs[k], &cfg, err, sizeof err), LK_OK);
		cfg.max_iterations = 10;
		assert_int_equal(lk_solve(p, &cfg, NULL, NULL), LK_OK);
		assert_true(tu_max_diff(lk_problem_lambda(p), out, n) == 0.0);
		free(out);
		lk_problem_destroy(p);
		lk_bt_world_destroy(w[0]);
		lk_bt_world_destroy(w[1]);
	}
}

/* ---------------------------------------------------------------------------------- joints */

/* The bodies of joint_zoo. */
typedef struct zoo {
	int a, slider, wheel, hang, welded, ball, cone;
} zoo;

/* One joint of every type of the C API, each on a box of its own hanging from the world: a slider along a 45
 * degree axis free to slide down to its limit at -0.5 m, a hinge motor driving a wheel at 2 rad/s, a 6-DoF
 * joint whose free axis (along world z) has a 1000 N/m spring, a weld, a ball joint and a cone-twist joint. */
static zoo joint_zoo(lk_bt_world *w)
{
	zoo z;
	z.a = add_box(w, 0, 0, 5, 0.1, 1.0);
	lk_bt_joint_def sl = lk_bt_default_joint_def(LK_BT_JOINT_SLIDER);
	sl.body_a = z.a;
	sl.anchor[2] = 5;
	sl.axis[0] = 1;
	sl.axis[2] = 1;
	sl.lower = -0.5;
	sl.upper = 0.5;
	assert_int_equal(lk_bt_joint_create(w, &sl, &z.slider), LK_OK);

	z.wheel = add_box(w, 5, 0, 5, 0.3, 1.0);
	lk_bt_joint_def hm = lk_bt_default_joint_def(LK_BT_JOINT_HINGE);
	hm.body_a = z.wheel;
	hm.anchor[0] = 5;
	hm.anchor[2] = 5;
	hm.axis[0] = 0;
	hm.axis[1] = 1;
	hm.motor = 1;
	hm.motor_velocity = 2.0;
	hm.motor_max_force = 50.0;
	assert_int_equal(lk_bt_joint_create(w, &hm, NULL), LK_OK);

	/* 2 kg hang m g / k = 1.962 cm low */
	z.hang = add_box(w, 10, 0, 5, 0.1, 2.0);
	lk_bt_joint_def sp = lk_bt_default_joint_def(LK_BT_JOINT_SPRING6);
	sp.body_a = z.hang;
	sp.anchor[0] = 10;
	sp.anchor[2] = 5;
	sp.axis[0] = 0;
	sp.axis[2] = 1;
	sp.linear_lower[0] = 1; /* lower > upper frees the axis */
	sp.linear_upper[0] = -1;
	sp.stiffness[0] = 1000.0;
	sp.damping[0] = 5.0;
	assert_int_equal(lk_bt_joint_create(w, &sp, NULL), LK_OK);

	z.welded = add_box(w, 15, 0, 5, 0.2, 1.0);
	lk_bt_joint_def fx = lk_bt_default_joint_def(LK_BT_JOINT_FIXED);
	fx.body_a = z.welded;
	fx.anchor[0] = 15;
	fx.anchor[2] = 5;
	assert_int_equal(lk_bt_joint_create(w, &fx, NULL), LK_OK);

	z.ball = add_box(w, 20.5, 0, 5, 0.1, 1.0);
	lk_bt_joint_def pt = lk_bt_default_joint_def(LK_BT_JOINT_POINT);
	pt.body_a = z.ball;
	pt.anchor[0] = 20;
	pt.anchor[2] = 5;
	assert_int_equal(lk_bt_joint_create(w, &pt, NULL), LK_OK);
	z.cone = add_box(w, 25, 0, 4.5, 0.1, 1.0);
	lk_bt_joint_def ct = lk_bt_default_joint_def(LK_BT_JOINT_CONE_TWIST);
	ct.body_a = z.cone;
	ct.anchor[0] = 25;
	ct.anchor[2] = 5;
	ct.axis[0] = 0;
	ct.axis[2] = -1;
	assert_int_equal(lk_bt_joint_create(w, &ct, NULL), LK_OK);
	return z;
}

static void test_joints(void **state)
{
	(void)state;
	lk_bt_world *w = make_world("pgs", 30);
	const zoo z = joint_zoo(w);
	const int a = z.a, slider = z.slider, wheel = z.wheel, hang = z.hang, welded = z.welded, ball = z.ball,
	          cone = z.cone;
	assert_int_equal(lk_bt_world_joint_count(w), 6);

	step(w, 180, NULL);
	double x, v[3], om[3], p[3];
	assert_int_equal(lk_bt_joint_get_position(w, slider, &x), LK_OK);
	position(w, a, p);
	print_message("slider at %.4f m (limit -0.5), body at (%.4f, %.4f, %.4f)\n", x, p[0], p[1], p[2]);
	assert_double_equal(x, -0.5, 5e-3);
	assert_double_equal(p[0], -0.5 / sqrt(2.0), 5e-3);
	assert_double_equal(p[2], 5 - 0.5 / sqrt(2.0), 5e-3);

	assert_int_equal(lk_bt_body_get_velocity(w, wheel, v, om), LK_OK);
	assert_double_equal(om[1], 2.0, 1e-3);

	position(w, hang, p);
	print_message("spring: z = %.5f (expected %.5f)\n", p[2], 5 - 2.0 * 9.81 / 1000.0);
	assert_double_equal(p[2], 5 - 2.0 * 9.81 / 1000.0, 1e-3);
	assert_double_equal(p[0], 10, 1e-4);

	position(w, welded, p);
	assert_double_equal(p[0], 15, 1e-3);
	assert_double_equal(p[2], 5, 1e-3);

	/* the ball joint keeps the box's centre 0.5 m from its anchor */
	position(w, ball, p);
	assert_double_equal(sqrt((p[0] - 20) * (p[0] - 20) + p[1] * p[1] + (p[2] - 5) * (p[2] - 5)), 0.5, 1e-2);
	/* the cone keeps the box hanging under its anchor */
	position(w, cone, p);
	assert_double_equal(p[2], 4.5, 1e-2);

	/* destroying a body removes its joints */
	assert_int_equal(lk_bt_body_destroy(w, a), LK_OK);
	assert_int_equal(lk_bt_world_joint_count(w), 5);
	assert_int_equal(lk_bt_joint_get_position(w, slider, &x), LK_ERR_OUT_OF_RANGE);
	step(w, 1, NULL);
	assert_int_equal(lk_bt_world_fallbacks(w), 0);
	lk_bt_world_destroy(w);
}

/* lk::BulletSolver makes the joints' rows itself, from their getInfo2, instead of Bullet's convertJoint (which
 * prepares each row for Bullet's own iterations). Its problem must be the one the rows of Bullet's own setup
 * map to: two worlds in the same state, one stepping with Bullet's solver and one with lcpkit's, both
 * recording, give the same rows (the same Jacobians and bounds to the bit; targets and CFM to rounding: here
 * the target is Bullet's error term, there Bullet's right-hand side mapped back), in the same order and with
 * the same warm start, for the zoo's joints, a hinge at its limits, a hinge whose box turns
 * in a plane only (angular factors 0, 0, 1: the rows about the locked axes move nothing and are left out on
 * both sides), a hinge between two boxes, and a ball joint that breaks in the step (its bounds clamped at its
 * breaking impulse, and it is disabled after the step on both sides). */
/* A hinge of body a to body b (or LK_BT_WORLD) at (x, 0, 5) about the world axis (ax, ay, az), free. */
static lk_bt_joint_def hinge_def(int a, int b, double x, double ax, double ay, double az)
{
	lk_bt_joint_def h = lk_bt_default_joint_def(LK_BT_JOINT_HINGE);
	h.body_a = a;
	h.body_b = b;
	h.anchor[0] = x;
	h.anchor[2] = 5;
	h.axis[0] = ax;
	h.axis[1] = ay;
	h.axis[2] = az;
	return h;
}

/* Two recorded problems have the same rows: kinds, bodies, friction indices, Jacobians, bounds and warm start to
 * the bit; targets and CFM to rounding (their largest relative differences in *dc and *ds). Counts the rows by
 * kind. */
static void same_rows(lk_problem *p0, lk_problem *p1, int kinds[LK_ROW_KIND_COUNT], double *dc, double *ds)
{
	const int n = lk_problem_row_count(p0);
	assert_int_equal(lk_problem_row_count(p1), n);
	memset(kinds, 0, LK_ROW_KIND_COUNT * sizeof *kinds);
	*dc = *ds = 0.0;
	for (int i = 0; i < n; ++i) {
		lk_row_def d[2];
		assert_int_equal(lk_problem_get_row(p0, i, &d[0]), LK_OK);
		assert_int_equal(lk_problem_get_row(p1, i, &d[1]), LK_OK);
		assert_int_equal(d[1].kind, d[0].kind);
		assert_int_equal(d[1].body[0], d[0].body[0]);
		assert_int_equal(d[1].body[1], d[0].body[1]);
		assert_int_equal(d[1].findex, d[0].findex);
		for (int side = 0; side < 2; ++side)
			for (int c = 0; c < 6; ++c)
				assert_true(d[1].J[side][c] == d[0].J[side][c]);
		assert_true(d[1].lo == d[0].lo && d[1].hi == d[0].hi && d[1].mu == d[0].mu);
		assert_true(lk_problem_lambda(p1)[i] == lk_problem_lambda(p0)[i]);
		*dc = fmax(*dc, fabs(d[1].c - d[0].c) / (1.0 + fabs(d[0].c)));
		*ds = fmax(*ds, fabs(d[1].s - d[0].s) / (1e-12 + fabs(d[0].s)));
		kinds[d[0].kind]++;
	}
}

static void test_joint_rows_as_bullets_own(void **state)
{
	(void)state;
	lk_bt_world *w[2] = {make_world("bullet-si", 10), make_world("bullet-si", 10)};
	int breakable[2], joints = 0;
	for (int k = 0; k < 2; ++k) {
		add_ground(w[k]);
		(void)joint_zoo(w[k]);
		/* a hinge about y with limits of +-0.1 rad on a box hanging off its axis: it swings into the limit */
		lk_bt_joint_def hl = hinge_def(add_box(w[k], 30.5, 0, 5, 0.1, 1.0), LK_BT_WORLD, 30, 0, 1, 0);
		hl.lower = -0.1;
		hl.upper = 0.1;
		assert_int_equal(lk_bt_joint_create(w[k], &hl, NULL), LK_OK);
		/* a planar box on a hinge about z, and a box hinged to it */
		int planar = add_box(w[k], 35.5, 0, 5, 0.1, 1.0);
		const double lin[3] = {1, 1, 1}, ang[3] = {0, 0, 1};
		assert_int_equal(lk_bt_body_set_factors(w[k], planar, lin, ang), LK_OK);
		lk_bt_joint_def hp = hinge_def(planar, LK_BT_WORLD, 35, 0, 0, 1);
		assert_int_equal(lk_bt_joint_create(w[k], &hp, NULL), LK_OK);
		lk_bt_joint_def hh = hinge_def(add_box(w[k], 36.5, 0, 5, 0.1, 1.0), planar, 36, 0, 1, 0);
		assert_int_equal(lk_bt_joint_create(w[k], &hh, NULL), LK_OK);
	}
	/* the same steps on both */
	step(w[0], 20, NULL);
	step(w[1], 20, NULL);
	for (int k = 0; k < 2; ++k) {
		/* a ball joint holding 1 kg under it that breaks above 0.01 N s (the step's load is m g h = 0.16 N s),
		 * made only now, so that the compared step is its first */
		int weak = add_box(w[k], 40, 0, 4.5, 0.1, 1.0);
		lk_bt_joint_def wb = lk_bt_default_joint_def(LK_BT_JOINT_POINT);
		wb.body_a = weak;
		wb.anchor[0] = 40;
		wb.anchor[2] = 5;
		wb.breaking_impulse = 0.01;
		assert_int_equal(lk_bt_joint_create(w[k], &wb, &breakable[k]), LK_OK);
		joints = lk_bt_world_joint_count(w[k]);
	}
	assert_int_equal(joints, 10);
	assert_int_equal(lk_bt_world_set_solver(w[1], "pgs"), LK_OK);
	lk_engine_step_stats s[2];
	for (int k = 0; k < 2; ++k) {
		assert_int_equal(lk_bt_world_set_recording(w[k], 1), LK_OK);
		step(w[k], 1, &s[k]);
	}
	assert_int_equal(s[1].fallback, 0);
	lk_problem *p[2];
	for (int k = 0; k < 2; ++k)
		assert_int_equal(lk_bt_world_recorded_problem(w[k], &p[k]), LK_OK);
	const int n = lk_problem_row_count(p[0]);
	int kinds[LK_ROW_KIND_COUNT];
	double dc = 0.0, ds = 0.0;
	same_rows(p[0], p[1], kinds, &dc, &ds);
	int limited = 0, clamped = 0;
	for (int i = 0; i < n; ++i) {
		lk_row_def d;
		assert_int_equal(lk_problem_get_row(p[0], i, &d), LK_OK);
		clamped += d.kind != LK_ROW_NORMAL && d.kind != LK_ROW_FRICTION && (d.lo == -0.01 || d.hi == 0.01);
	}
	limited = kinds[LK_ROW_LIMIT];
	const int joint_rows = kinds[LK_ROW_JOINT] + kinds[LK_ROW_LIMIT] + kinds[LK_ROW_MOTOR];
	print_message("%d rows (%d of joints: %d limit, %d clamped by a breaking impulse): targets apart by %.1e, "
	              "CFM by %.1e (relative)\n",
	              n, joint_rows, limited, clamped, dc, ds);
	assert_true(joint_rows > 40);
	assert_true(limited >= 2); /* the slider's and the limited hinge's */
	assert_int_equal(clamped, 3);
	assert_true(dc < 1e-12 && ds < 1e-12);
	/* Bullet's finish saw the impulses of lcpkit's rows: the weak joint broke on both sides */
	for (int k = 0; k < 2; ++k) {
		int enabled = 1;
		assert_int_equal(lk_bt_joint_is_enabled(w[k], breakable[k], &enabled), LK_OK);
		assert_int_equal(enabled, 0);
		lk_problem_destroy(p[k]);
		lk_bt_world_destroy(w[k]);
	}
}

/* lk::BulletSolver makes the contacts' rows itself, from the manifold points, instead of Bullet's convertContact.
 * As for the joints: two worlds in the same state, one stepping with Bullet's solver and one with lcpkit's, give
 * the same rows, for a stack, a heavy box on a light one, a box sliding (its friction along the sliding, with one
 * friction direction), a ball with rolling and spinning friction, a box landing at 3 m/s with restitution, a
 * box sunk 10 cm into the ground (Bullet's split impulse takes it, with its own rows, where split impulse is
 * on) and a box that turns about z only, in two worlds of different settings (two friction directions, split
 * impulse, warm start, Bullet's defaults; one direction, none of them, a global CFM, a slop and another
 * contact ERP), compared at the first, second and twentieth step. */
static lk_bt_world *contact_world(int variant)
{
	lk_bt_world_def def = lk_bt_default_world_def();
	def.solver = "bullet-si";
	if (variant == 1) {
		def.friction_directions = 1;
		def.split_impulse = 0;
		def.warm_start = 0;
		def.cfm = 1e-5;
		def.linear_slop = 0.005;
		def.contact_erp = 0.4;
	}
	lk_bt_world *w = NULL;
	char err[256] = "";
	assert_int_equal(lk_bt_world_create(&def, &w, err, sizeof err), LK_OK);
	add_ground(w);
	for (int i = 0; i < 3; ++i)
		add_box(w, 0, 0, 0.5 + i, 0.5, 1.0);
	add_box(w, 3, 0, 0.25, 0.25, 1.0);
	add_box(w, 3, 0, 0.75, 0.25, 100.0);
	lk_bt_body_def b = lk_bt_default_body_def();
	b.shape = lk_bt_shape_box(0.3, 0.3, 0.3);
	b.position[0] = -3;
	b.position[2] = 0.3;
	b.linear_velocity[0] = 2.0;
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_OK);
	b = lk_bt_default_body_def();
	b.shape = lk_bt_shape_sphere(0.2);
	b.position[1] = 3;
	b.position[2] = 0.2;
	b.linear_velocity[1] = 1.0;
	b.angular_velocity[2] = 3.0;
	b.rolling_friction = 0.05;
	b.spinning_friction = 0.05;
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_OK);
	b = lk_bt_default_body_def();
	b.shape = lk_bt_shape_box(0.5, 0.5, 0.5);
	b.position[1] = -3;
	b.position[2] = 0.5;
	b.linear_velocity[2] = -3.0;
	b.restitution = 0.8;
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_OK);
	add_box(w, 6, 0, 0.4, 0.5, 1.0);
	b = lk_bt_default_body_def();
	b.position[0] = -6;
	b.position[2] = 0.5;
	b.angular_factor[0] = b.angular_factor[1] = 0;
	b.angular_velocity[2] = 1.0;
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_OK);
	return w;
}

static void test_contact_rows_as_bullets_own(void **state)
{
	(void)state;
	const int at[3] = {1, 2, 20};
	for (int variant = 0; variant < 2; ++variant)
		for (int t = 0; t < 3; ++t) {
			lk_bt_world *w[2] = {contact_world(variant), contact_world(variant)};
			step(w[0], at[t] - 1, NULL);
			step(w[1], at[t] - 1, NULL);
			assert_int_equal(lk_bt_world_set_solver(w[1], "pgs"), LK_OK);
			lk_engine_step_stats s[2];
			lk_problem *p[2];
			for (int k = 0; k < 2; ++k) {
				assert_int_equal(lk_bt_world_set_recording(w[k], 1), LK_OK);
				step(w[k], 1, &s[k]);
				assert_int_equal(lk_bt_world_recorded_problem(w[k], &p[k]), LK_OK);
			}
			assert_int_equal(s[1].fallback, 0);
			int kinds[LK_ROW_KIND_COUNT];
			double dc, ds;
			same_rows(p[0], p[1], kinds, &dc, &ds);
			print_message("settings %d, step %2d: %d normal and %d friction rows: targets apart by %.1e, CFM by "
			              "%.1e (relative)\n",
			              variant, at[t], kinds[LK_ROW_NORMAL], kinds[LK_ROW_FRICTION], dc, ds);
			/* every point with one or two friction rows, the ball's (one or more) with three rolling ones more */
			assert_true(kinds[LK_ROW_NORMAL] >= 15);
			const int rolling = kinds[LK_ROW_FRICTION] - (variant ? 1 : 2) * kinds[LK_ROW_NORMAL];
			assert_true(rolling >= 3 && rolling % 3 == 0);
			assert_true(dc < 1e-12 && ds < 1e-12);
			for (int k = 0; k < 2; ++k) {
				lk_problem_destroy(p[k]);
				lk_bt_world_destroy(w[k]);
			}
		}
}

/* ---------------------------------------------------------------------------------- shapes, factors */

/* Capsules and cylinders come to rest at their radius or half height; masses and inertias follow from the
 * shapes; a body locked to the x-z plane (the factors of a planar scene) does not leave it. */
static void test_shapes_and_factors(void **state)
{
	(void)state;
	lk_bt_world *w = make_world("pgs", 20);
	add_ground(w);
	lk_bt_body_def d = lk_bt_default_body_def();
	d.shape = lk_bt_shape_capsule(0.2, 0.5, 0); /* lying along x */
	d.mass = 2.0;
	d.position[2] = 0.3;
	int capsule;
	assert_int_equal(lk_bt_body_create(w, &d, &capsule), LK_OK);
	d = lk_bt_default_body_def();
	d.shape = lk_bt_shape_cylinder(0.3, 0.4, 2); /* standing along z */
	d.position[0] = 3;
	d.position[2] = 0.45;
	int cylinder;
	assert_int_equal(lk_bt_body_create(w, &d, &cylinder), LK_OK);
	d = lk_bt_default_body_def();
	d.shape = lk_bt_shape_box(0.5, 0.5, 0.5);
	d.mass = 3.0;
	d.position[0] = -3;
	d.position[2] = 0.5;
	const double lf[3] = {1, 0, 1}, af[3] = {0, 1, 0};
	memcpy(d.linear_factor, lf, sizeof lf);
	memcpy(d.angular_factor, af, sizeof af);
	d.linear_damping = 0.1;
	int planar;
	assert_int_equal(lk_bt_body_create(w, &d, &planar), LK_OK);
	/* a static box as a step to slide the planar box against */
	d = lk_bt_default_body_def();
	d.mass = 0;
	d.position[0] = -5;
	d.position[2] = 0.5;
	assert_int_equal(lk_bt_body_create(w, &d, NULL), LK_OK);

	double m, I[3];
	assert_int_equal(lk_bt_body_get_mass(w, planar, &m, I), LK_OK);
	assert_double_equal(m, 3.0, 0);
	for (int k = 0; k < 3; ++k)
		assert_double_equal(I[k], 3.0 * (1.0 + 1.0) / 12.0, 1e-12); /* m (a^2 + b^2) / 12 */

	/* push the planar box sideways, out of its plane, and towards the step */
	const double kick[3] = {-12.0, 5.0, 0.0}, off[3] = {-3.0, 0.3, 0.5};
	assert_int_equal(lk_bt_body_apply_impulse(w, planar, kick, off), LK_OK);
	step(w, 180, NULL);
	double p[3], q[4], v[3], om[3];
	position(w, capsule, p);
	assert_double_equal(p[2], 0.2, 2e-3);
	position(w, cylinder, p);
	assert_double_equal(p[2], 0.4, 2e-3);
	assert_int_equal(lk_bt_body_get_transform(w, planar, p, q), LK_OK);
	assert_int_equal(lk_bt_body_get_velocity(w, planar, v, om), LK_OK);
	print_message("planar box at (%.4f, %.2e, %.4f), rotation (%.1e, %.3f, %.1e, %.3f)\n", p[0], p[1], p[2], q[0],
	              q[1], q[2], q[3]);
	assert_double_equal(p[1], 0.0, 1e-12);
	assert_double_equal(q[0], 0.0, 1e-9); /* rotation about y only */
	assert_double_equal(q[2], 0.0, 1e-9);
	assert_double_equal(p[0], -4.0, 2e-3); /* stopped against the step (faces at -4.5 and -4.5) */
	assert_double_equal(v[1], 0.0, 0);
	assert_int_equal(lk_bt_world_fallbacks(w), 0);
	lk_bt_world_destroy(w);
}

/* ---------------------------------------------------------------------------------- stepping, statistics */

static void test_stats_and_advance(void **state)
{
	(void)state;
	lk_bt_world *w = make_world("bullet-si", 12);
	add_ground(w);
	for (int i = 0; i < 3; ++i)
		add_box(w, 0, 0, 0.5 + i, 0.5, 1.0);
	lk_engine_step_stats s;
	step(w, 60, &s); /* Bullet's box-box manifolds gather their four points over some steps */
	/* Bullet stops early only once no impulse changes any more */
	assert_true(s.iterations >= 1 && s.iterations <= 12);
	assert_int_equal(s.stop_reason, s.iterations < 12 ? LK_STOP_ABSOLUTE : LK_STOP_ITERATIONS);
	int sum = 0;
	for (int k = 0; k < LK_ROW_KIND_COUNT; ++k)
		sum += s.rows_by_kind[k];
	assert_int_equal(sum, s.rows);
	/* Bullet's box-box manifolds gather up to four points */
	assert_true(s.rows_by_kind[LK_ROW_NORMAL] >= 9 && s.rows_by_kind[LK_ROW_NORMAL] <= 12);
	assert_int_equal(s.rows_by_kind[LK_ROW_FRICTION], 2 * s.rows_by_kind[LK_ROW_NORMAL]);
	assert_int_equal(s.bodies, 3);
	assert_true(isfinite(s.res_initial) && isfinite(s.res_final));
	assert_true(s.res_final < s.res_initial);
	assert_true(s.step_seconds >= s.solve_seconds && s.solve_seconds > 0);

	/* without residuals Bullet's solvers report counts only */
	assert_int_equal(lk_bt_world_set_residuals(w, 0), LK_OK);
	step(w, 1, &s);
	assert_true(isnan(s.res_final));
	assert_true(s.rows_by_kind[LK_ROW_NORMAL] >= 9);

	/* switch to lcpkit mid-run; its iterations follow the world's unless the spec says; without residuals
	 * it skips its RES evaluations too (measure=0), unless the spec asks for them */
	assert_int_equal(lk_bt_world_set_solver(w, "psor:w=1.2"), LK_OK);
	assert_string_equal(lk_bt_world_solver(w), "psor:w=1.2");
	step(w, 1, &s);
	assert_int_equal(s.iterations, 12);
	assert_true(isnan(s.res_initial) && isnan(s.res_final));
	assert_int_equal(lk_bt_world_set_solver(w, "psor:w=1.2,measure=1"), LK_OK);
	step(w, 1, &s);
	assert_true(isfinite(s.res_initial) && isfinite(s.res_final));
	assert_int_equal(lk_bt_world_set_solver(w, "psor:w=1.2"), LK_OK);
	assert_int_equal(lk_bt_world_set_residuals(w, 1), LK_OK);
	step(w, 1, &s);
	assert_true(isfinite(s.res_initial) && isfinite(s.res_final));
	assert_int_equal(lk_bt_world_set_iterations(w, 7), LK_OK);
	step(w, 1, &s);
	assert_int_equal(s.iterations, 7);
	assert_int_equal(lk_bt_world_set_solver(w, "pgs:iters=4"), LK_OK);
	assert_int_equal(lk_bt_world_set_iterations(w, 9), LK_OK);
	step(w, 1, &s);
	assert_int_equal(s.iterations, 4);

	/* advance: 2.5 fixed steps of time take two steps (Bullet keeps the rest) */
	double t0 = lk_bt_world_time(w);
	int n = -1;
	assert_int_equal(lk_bt_world_advance(w, 2.5 * H, &n, &s), LK_OK);
	assert_int_equal(n, 1); /* max_sub_steps is 1 by default */
	assert_double_equal(lk_bt_world_time(w) - t0, H, 1e-12);
	lk_bt_world_destroy(w);

	lk_bt_world_def def = lk_bt_default_world_def();
	def.max_sub_steps = 4;
	assert_int_equal(lk_bt_world_create(&def, &w, NULL, 0), LK_OK);
	assert_int_equal(lk_bt_world_advance(w, 2.5 * H, &n, NULL), LK_OK);
	assert_int_equal(n, 2);
	assert_int_equal(lk_bt_world_advance(w, 0.6 * H, &n, NULL), LK_OK);
	assert_int_equal(n, 1);
	assert_double_equal(lk_bt_world_time(w), 3 * H, 1e-12);
	lk_bt_world_destroy(w);
}

/* ---------------------------------------------------------------------------------- invalid use */

/* Bullet's multithreaded sequential impulse solver (bullet-si-mt) needs a Bullet built with BT_THREADSAFE.
 * Wrong options are refused either way. Then, with the Bullet this build links: if it is thread-safe
 * (tools/bullet-mt.sh), the box rests and the 10-box stack stands under the solver on one and on two threads;
 * if not (Debian's), the world refuses the solver and says why. */
static void test_bullet_si_mt(void **state)
{
	(void)state;
	char err[256];
	lk_bt_world *w = NULL;
	lk_bt_world_def def = lk_bt_default_world_def();
	const char *const bad[] = {"bullet-si-mt:threads=0", "bullet-si-mt:threads=65", "bullet-si-mt:threads=2x",
	                           "bullet-si-mt:iters=3", "bullet-si-mt:"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
		def.solver = bad[i];
		assert_int_equal(lk_bt_world_create(&def, &w, err, sizeof err), LK_ERR_PARSE);
		assert_non_null(strstr(err, "threads=N"));
		assert_null(w);
	}
	/* the other solvers of Bullet take no options */
	def.solver = "bullet-si:threads=2";
	assert_int_equal(lk_bt_world_create(&def, &w, err, sizeof err), LK_ERR_PARSE);
	assert_null(w);
	def.solver = "bullet-si-mt:threads=2";
	const lk_status st = lk_bt_world_create(&def, &w, err, sizeof err);
	if (st != LK_OK) {
		assert_int_equal(st, LK_ERR_UNSUPPORTED);
		assert_non_null(strstr(err, "BT_THREADSAFE"));
		assert_null(w);
		print_message("this Bullet is not built with BT_THREADSAFE: bullet-si-mt refused (%s)\n", err);
		return;
	}
	assert_string_equal(lk_bt_world_solver(w), "bullet-si-mt:threads=2");
	lk_bt_world_destroy(w);
	check_box_rests("bullet-si-mt:threads=1");
	check_box_rests("bullet-si-mt:threads=2");
	check_stack_stands("bullet-si-mt:threads=2");
}

/* A 1 m cube set down on the ground, touching it. With Bullet's defaults the plane gives it one contact point
 * a step, from its deepest corner: it stands on that corner alone for its first step and starts to rock.
 * plane_multipoint gives it its face at once, as ODE's box-plane test does. linear_slop is the depth a resting
 * contact keeps (ODE's surface layer): the box settles that far into the ground, not to zero depth. */
static void check_set_down(int multipoint, double slop, int *points_first, double *spin_first, double *depth_rest)
{
	lk_bt_world_def def = lk_bt_default_world_def();
	def.iterations = 20;
	def.plane_multipoint = multipoint;
	def.linear_slop = slop;
	lk_bt_world *w = NULL;
	assert_int_equal(lk_bt_world_create(&def, &w, NULL, 0), LK_OK);
	add_ground(w);
	int box = add_box(w, 0, 0, 0.5, 0.5, 1.0);
	step(w, 1, NULL);
	double v[3], om[3];
	assert_int_equal(lk_bt_body_contact_count(w, box, points_first), LK_OK);
	assert_int_equal(lk_bt_body_get_velocity(w, box, v, om), LK_OK);
	*spin_first = sqrt(om[0] * om[0] + om[1] * om[1] + om[2] * om[2]);
	step(w, 119, NULL);
	assert_int_equal(lk_bt_world_max_penetration(w, depth_rest), LK_OK);
	print_message("multipoint %d slop %g: %d point(s) and spin %.3g rad/s after the first step, depth %.6f m at 2 s\n",
	              multipoint, slop, *points_first, *spin_first, *depth_rest);
	lk_bt_world_destroy(w);
}

static void test_plane_points_and_slop(void **state)
{
	(void)state;
	int points;
	double spin, depth;
	check_set_down(0, 0.0, &points, &spin, &depth);
	assert_int_equal(points, 1);
	assert_true(spin > 0.05);
	assert_true(depth < 1e-4);
	check_set_down(1, 0.0, &points, &spin, &depth);
	assert_true(points >= 3);
	assert_true(spin < 1e-3);
	assert_true(depth < 1e-4);
	check_set_down(1, 0.001, &points, &spin, &depth);
	assert_true(points >= 3);
	assert_double_equal(depth, 0.001, 5e-5);
}

/* ------------------------------------------------------------------------------ a multibody world */

/* A stack of three boxes and a hinged pendulum in a world of the given kind under a solver; returns the world and
 * the bodies' ids (ground, three boxes, bob). */
static lk_bt_world *stack_and_pendulum(int multibody, const char *solver, int ids[5])
{
	lk_bt_world_def def = lk_bt_default_world_def();
	def.solver = solver;
	def.multibody = multibody;
	def.friction_directions = 2;
	lk_bt_world *w = NULL;
	char err[256] = "";
	assert_int_equal(lk_bt_world_create(&def, &w, err, sizeof err), LK_OK);
	ids[0] = add_ground(w);
	for (int i = 0; i < 3; ++i)
		ids[1 + i] = add_box(w, 0, 0, 0.5 + i, 0.5, 1.0);
	lk_bt_body_def b = lk_bt_default_body_def();
	b.shape = lk_bt_shape_sphere(0.1);
	b.position[0] = 5.0;
	b.position[2] = 3.0;
	assert_int_equal(lk_bt_body_create(w, &b, &ids[4]), LK_OK);
	lk_bt_joint_def j = lk_bt_default_joint_def(LK_BT_JOINT_HINGE);
	j.body_a = ids[4];
	j.anchor[0] = 4.0;
	j.anchor[2] = 3.0;
	j.axis[0] = 0;
	j.axis[1] = 1;
	assert_int_equal(lk_bt_joint_create(w, &j, NULL), LK_OK);
	return w;
}

/* lk_bt_world_def.multibody: a btMultiBodyDynamicsWorld whose rigid bodies lcpkit solves on the multibody
 * solvers' path (lk::BulletMultiBodySolver) moves as the same bodies in a discrete world, to the bit; Bullet's
 * own solver there is its btMultiBodyConstraintSolver ("bullet-si"), and no other of Bullet's solvers. */
static void test_multibody_world(void **state)
{
	(void)state;
	int a[5], b[5];
	lk_bt_world *flat = stack_and_pendulum(0, "auto", a);
	lk_bt_world *mb = stack_and_pendulum(1, "auto", b);
	lk_engine_step_stats s, f;
	for (int i = 0; i < 120; ++i) {
		step(flat, 1, &f);
		step(mb, 1, &s);
	}
	assert_true(s.rows_by_kind[LK_ROW_NORMAL] >= 8);
	assert_int_equal(s.rows_by_kind[LK_ROW_NORMAL], f.rows_by_kind[LK_ROW_NORMAL]);
	assert_int_equal(s.rows_by_kind[LK_ROW_FRICTION], f.rows_by_kind[LK_ROW_FRICTION]);
	assert_int_equal(s.rows_by_kind[LK_ROW_JOINT], 5);
	for (int k = 1; k < 5; ++k) {
		double p[3], q[3];
		position(flat, a[k], p);
		position(mb, b[k], q);
		for (int c = 0; c < 3; ++c)
			assert_true(p[c] == q[c]);
	}
	double top[3], bob[3];
	position(mb, b[3], top);
	position(mb, b[4], bob);
	assert_double_equal(top[2], 2.5, 5e-3);
	assert_double_equal(sqrt((bob[0] - 4) * (bob[0] - 4) + (bob[2] - 3) * (bob[2] - 3)), 1.0, 0.015);
	assert_true(bob[2] < 2.5); /* it swung down */

	/* Bullet's own solvers: only its multibody one */
	assert_int_equal(lk_bt_world_set_solver(mb, "bullet-nncg"), LK_ERR_UNSUPPORTED);
	assert_non_null(strstr(lk_bt_world_error(mb), "multibody"));
	assert_string_equal(lk_bt_world_solver(mb), "auto");
	assert_int_equal(lk_bt_world_set_solver(mb, "bullet-si"), LK_OK);
	step(mb, 60, &s);
	assert_true(s.rows_by_kind[LK_ROW_NORMAL] >= 8);
	position(mb, b[3], top);
	assert_double_equal(top[2], 2.5, 5e-3);
	lk_bt_world_destroy(flat);
	lk_bt_world_destroy(mb);

	lk_bt_world_def def = lk_bt_default_world_def();
	def.multibody = 2;
	lk_bt_world *w = NULL;
	char err[256] = "";
	assert_int_equal(lk_bt_world_create(&def, &w, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err, "multibody"));
	assert_null(w);
}

static void test_invalid_arguments(void **state)
{
	(void)state;
	char err[256];
	lk_bt_world *w = NULL;
	lk_bt_world_def def = lk_bt_default_world_def();

	/* creation */
	assert_int_equal(lk_bt_world_create(NULL, &w, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_bt_world_create(&def, NULL, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	def.fixed_time_step = 0;
	assert_int_equal(lk_bt_world_create(&def, &w, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	assert_null(w);
	assert_true(strlen(err) > 0);
	def = lk_bt_default_world_def();
	def.gravity[1] = NAN;
	assert_int_equal(lk_bt_world_create(&def, &w, err, sizeof err), LK_ERR_NONFINITE);
	def = lk_bt_default_world_def();
	def.linear_slop = NAN;
	assert_int_equal(lk_bt_world_create(&def, &w, err, sizeof err), LK_ERR_NONFINITE);
	def.linear_slop = -1e-3;
	assert_int_equal(lk_bt_world_create(&def, &w, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err, "linear slop"));
	def = lk_bt_default_world_def();
	def.plane_multipoint = 2;
	assert_int_equal(lk_bt_world_create(&def, &w, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	assert_null(w);
	def = lk_bt_default_world_def();
	def.solver = "no-such-method";
	assert_int_equal(lk_bt_world_create(&def, &w, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "no-such-method"));
	assert_null(w);

	/* a NULL world */
	assert_int_equal(lk_bt_world_step(NULL, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_bt_world_set_solver(NULL, "pgs"), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_bt_body_create(NULL, NULL, NULL), LK_ERR_INVALID_ARGUMENT);
	double p[3], q[4];
	assert_int_equal(lk_bt_body_get_transform(NULL, 0, p, q), LK_ERR_INVALID_ARGUMENT);
	assert_true(strlen(lk_bt_world_error(NULL)) > 0);
	lk_bt_world_destroy(NULL);

	w = make_world("bullet-si", 10);
	int ground = add_ground(w);
	int box = add_box(w, 0, 0, 0.5, 0.5, 1.0);

	/* solvers */
	assert_int_equal(lk_bt_world_set_solver(w, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_bt_world_set_solver(w, "bullet-foo"), LK_ERR_PARSE);
	assert_int_equal(lk_bt_world_set_solver(w, "pgs:w=abc"), LK_ERR_PARSE);
	assert_true(lk_bt_world_set_solver(w, "pgs:iters=0") != LK_OK);
	assert_string_equal(lk_bt_world_solver(w), "bullet-si"); /* unchanged */
	assert_int_equal(lk_bt_world_set_iterations(w, 0), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_bt_world_advance(w, -1.0, NULL, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_bt_world_advance(w, INFINITY, NULL, NULL), LK_ERR_INVALID_ARGUMENT);
	double g[3] = {0, NAN, 0};
	assert_int_equal(lk_bt_world_set_gravity(w, g), LK_ERR_NONFINITE);
	assert_int_equal(lk_bt_world_set_gravity(w, NULL), LK_ERR_INVALID_ARGUMENT);

	/* bodies */
	lk_bt_body_def b = lk_bt_default_body_def();
	b.mass = -1;
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_ERR_MASS);
	b = lk_bt_default_body_def();
	b.mass = NAN;
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_ERR_NONFINITE);
	b = lk_bt_default_body_def();
	b.position[2] = INFINITY;
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_ERR_NONFINITE);
	b = lk_bt_default_body_def();
	b.rotation[3] = 0;
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_ERR_INVALID_ARGUMENT);
	b = lk_bt_default_body_def();
	b.shape = lk_bt_shape_box(0.5, 0, 0.5);
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_ERR_INVALID_ARGUMENT);
	b.shape = lk_bt_shape_plane(0, 0, 1, 0); /* a plane with mass */
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_ERR_MASS);
	b.shape = lk_bt_shape_plane(0, 0, 0, 0);
	b.mass = 0;
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_ERR_INVALID_ARGUMENT);
	b = lk_bt_default_body_def();
	b.shape = lk_bt_shape_capsule(0.2, 0.5, 3);
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_ERR_INVALID_ARGUMENT);
	b.shape.type = (lk_bt_shape_type)99;
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_ERR_INVALID_ARGUMENT);
	b = lk_bt_default_body_def();
	b.restitution = 1.5;
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_ERR_INVALID_ARGUMENT);
	b = lk_bt_default_body_def();
	b.friction = -0.1;
	assert_int_equal(lk_bt_body_create(w, &b, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_bt_world_body_count(w), 2); /* nothing was added */
	assert_true(strlen(lk_bt_world_error(w)) > 0);

	assert_int_equal(lk_bt_body_get_transform(w, -1, p, q), LK_ERR_OUT_OF_RANGE);
	assert_int_equal(lk_bt_body_get_transform(w, 2, p, q), LK_ERR_OUT_OF_RANGE);
	assert_int_equal(lk_bt_body_get_transform(w, box, NULL, NULL), LK_ERR_INVALID_ARGUMENT);
	double v[3] = {0, 0, NAN}, z[3] = {0, 0, 0};
	assert_int_equal(lk_bt_body_set_velocity(w, box, v, z), LK_ERR_NONFINITE);
	assert_int_equal(lk_bt_body_set_velocity(w, ground, z, z), LK_ERR_INVALID_ARGUMENT);
	double q0[4] = {0, 0, 0, 0};
	assert_int_equal(lk_bt_body_set_transform(w, box, z, q0), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_bt_body_set_damping(w, box, 2.0, 0.0), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_bt_body_set_friction(w, box, NAN), LK_ERR_NONFINITE);
	assert_int_equal(lk_bt_body_apply_impulse(w, box, v, NULL), LK_ERR_NONFINITE);
	int points;
	assert_int_equal(lk_bt_body_contact_count(w, box, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_bt_world_max_penetration(w, NULL), LK_ERR_INVALID_ARGUMENT);

	/* ids are never reused */
	int tmp = add_box(w, 5, 0, 0.5, 0.5, 1.0);
	assert_int_equal(lk_bt_body_destroy(w, tmp), LK_OK);
	assert_int_equal(lk_bt_body_destroy(w, tmp), LK_ERR_OUT_OF_RANGE);
	assert_int_equal(lk_bt_body_get_velocity(w, tmp, v, z), LK_ERR_OUT_OF_RANGE);
	int tmp2 = add_box(w, 5, 0, 0.5, 0.5, 1.0);
	assert_true(tmp2 != tmp);

	/* joints */
	lk_bt_joint_def j = lk_bt_default_joint_def(LK_BT_JOINT_HINGE);
	j.body_a = 99;
	assert_int_equal(lk_bt_joint_create(w, &j, NULL), LK_ERR_OUT_OF_RANGE);
	j.body_a = box;
	j.body_b = box;
	assert_int_equal(lk_bt_joint_create(w, &j, NULL), LK_ERR_INVALID_ARGUMENT);
	j.body_a = ground;
	j.body_b = LK_BT_WORLD;
	assert_int_equal(lk_bt_joint_create(w, &j, NULL), LK_ERR_INVALID_ARGUMENT); /* static to static */
	j.body_a = box;
	j.axis[0] = 0;
	assert_int_equal(lk_bt_joint_create(w, &j, NULL), LK_ERR_INVALID_ARGUMENT); /* zero axis */
	j.axis[0] = 1;
	j.motor_max_force = -1;
	assert_int_equal(lk_bt_joint_create(w, &j, NULL), LK_ERR_INVALID_ARGUMENT);
	j.motor_max_force = 0;
	j.anchor[1] = NAN;
	assert_int_equal(lk_bt_joint_create(w, &j, NULL), LK_ERR_NONFINITE);
	j.anchor[1] = 0;
	j.type = LK_BT_JOINT_COUNT;
	assert_int_equal(lk_bt_joint_create(w, &j, NULL), LK_ERR_INVALID_ARGUMENT);
	j.type = LK_BT_JOINT_POINT;
	int pt;
	assert_int_equal(lk_bt_joint_create(w, &j, &pt), LK_OK);
	double x;
	assert_int_equal(lk_bt_joint_get_position(w, pt, &x), LK_ERR_UNSUPPORTED);
	assert_int_equal(lk_bt_joint_set_motor(w, pt, 1, 1.0, 1.0), LK_ERR_UNSUPPORTED);
	assert_int_equal(lk_bt_joint_set_limits(w, 42, 0, 1), LK_ERR_OUT_OF_RANGE);
	assert_int_equal(lk_bt_joint_destroy(w, pt), LK_OK);
	assert_int_equal(lk_bt_joint_destroy(w, pt), LK_ERR_OUT_OF_RANGE);

	/* recording */
	lk_problem *rp = NULL;
	assert_int_equal(lk_bt_world_recorded_problem(w, &rp), LK_ERR_STATE);
	assert_null(rp);
	assert_int_equal(lk_bt_world_recorded_problem(w, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_bt_world_set_recording(w, 1), LK_OK);
	step(w, 1, NULL);
	double one;
	assert_int_equal(lk_bt_world_recorded_solution(w, &one, 1), LK_ERR_OUT_OF_RANGE);

	/* after all that the world still runs */
	step(w, 30, NULL);
	assert_int_equal(lk_bt_body_contact_count(w, box, &points), LK_OK);
	assert_true(points > 0);
	double p2[3];
	position(w, box, p2);
	assert_double_equal(p2[2], 0.5, 2e-3);
	lk_bt_world_destroy(w);
}

/* ---------------------------------------------------------------------------------- handles, ranges */

/* A destroyed world's handle is refused (LK_ERR_STATE, with a message) by every call, a second destroy
 * included, without touching the freed world: the sanitizer build runs this clean. */
static void test_stale_handles(void **state)
{
	(void)state;
	lk_bt_world *w = make_world("pgs", 10);
	int box = add_box(w, 0, 0, 1, 0.5, 1.0);
	assert_true(lk_bt_world_is_valid(w));
	assert_true(lk_bt_body_is_valid(w, box));
	assert_false(lk_bt_body_is_valid(w, box + 1));
	assert_int_equal(lk_bt_world_destroy(w), LK_OK);

	assert_int_equal(lk_bt_world_destroy(w), LK_ERR_STATE);
	assert_non_null(strstr(lk_bt_world_error(w), "lk_bt_world_destroy: "));
	assert_non_null(strstr(lk_bt_world_error(w), "was destroyed"));
	double p[3];
	assert_int_equal(lk_bt_body_get_transform(w, box, p, NULL), LK_ERR_STATE);
	assert_non_null(strstr(lk_bt_world_error(w), "lk_bt_body_get_transform: "));
	assert_int_equal(lk_bt_world_step(w, NULL), LK_ERR_STATE);
	assert_false(lk_bt_world_is_valid(w));
	assert_false(lk_bt_body_is_valid(w, box));
	assert_int_equal(lk_bt_world_body_count(w), 0);
	assert_string_equal(lk_bt_world_solver(w), "");

	/* a new world may take the freed slot; the old handle still names nothing */
	lk_bt_world *w2 = make_world("bullet-si", 10);
	assert_ptr_not_equal(w2, w);
	assert_int_equal(lk_bt_body_get_transform(w, box, p, NULL), LK_ERR_STATE);
	assert_int_equal(lk_bt_world_body_count(w2), 0);
	int b2 = add_box(w2, 0, 0, 1, 0.5, 1.0);
	assert_int_equal(lk_bt_body_get_transform(w2, b2, p, NULL), LK_OK);
	assert_string_equal(lk_bt_world_error(w2), "");

	/* a value that never was a handle, and NULL */
	lk_bt_world *bogus = (lk_bt_world *)(uintptr_t)0x7fff0001u;
	assert_int_equal(lk_bt_world_step(bogus, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(lk_bt_world_error(bogus), "not a world handle"));
	assert_int_equal(lk_bt_world_destroy(NULL), LK_OK);
	assert_int_equal(lk_bt_world_step(NULL, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(lk_bt_world_error(NULL), "lk_bt_world_step: world is NULL"));
	assert_int_equal(lk_bt_world_destroy(w2), LK_OK);
}

static lk_status body_with(lk_bt_world *w, lk_bt_shape shape, double mass)
{
	lk_bt_body_def b = lk_bt_default_body_def();
	b.shape = shape;
	b.mass = mass;
	return lk_bt_body_create(w, &b, NULL);
}

/* Masses and shapes outside bullet.h's ranges are refused with a message naming the range; the limits
 * themselves are accepted. */
static void test_mass_and_inertia_ranges(void **state)
{
	(void)state;
	lk_bt_world *w = make_world("pgs-sm", 10);
	const lk_bt_shape box = lk_bt_shape_box(0.5, 0.5, 0.5);
	assert_int_equal(body_with(w, box, 1e-300), LK_ERR_MASS);
	assert_non_null(strstr(lk_bt_world_error(w), "lk_bt_body_create: mass 1e-300 kg outside [1e-06, 1e+09] kg"));
	assert_int_equal(body_with(w, box, 2e9), LK_ERR_MASS);
	assert_int_equal(body_with(w, box, -1.0), LK_ERR_MASS);
	assert_int_equal(body_with(w, box, LK_BT_MASS_MIN), LK_OK);
	assert_int_equal(body_with(w, box, LK_BT_MASS_MAX), LK_OK);
	assert_int_equal(body_with(w, box, 0.0), LK_OK); /* static */
	/* a needle: radius of gyration about its long axis sqrt(2 (2e-5)^2 / 12) = 8.2e-6 m */
	assert_int_equal(body_with(w, lk_bt_shape_box(1e-5, 1e-5, 1.0), 1.0), LK_ERR_MASS);
	assert_non_null(strstr(lk_bt_world_error(w), "about local axis 2"));
	/* a sphere of radius 1e5 m: sqrt(0.4) 1e5 = 6.3e4 m */
	assert_int_equal(body_with(w, lk_bt_shape_sphere(1e5), 1.0), LK_ERR_MASS);
	assert_int_equal(body_with(w, lk_bt_shape_sphere(1e-3), 1.0), LK_OK); /* 6.3e-4 m */
	assert_int_equal(lk_bt_world_body_count(w), 4);
	lk_bt_world_destroy(w);
}

/* A joint from the static world to itself says what is wrong, rather than naming body -1. */
static void test_joint_needs_a_dynamic_body(void **state)
{
	(void)state;
	lk_bt_world *w = make_world("pgs", 10);
	int ground = add_ground(w);
	int box = add_box(w, 0, 0, 1, 0.5, 1.0);
	lk_bt_joint_def j = lk_bt_default_joint_def(LK_BT_JOINT_POINT);
	j.body_a = LK_BT_WORLD;
	j.body_b = LK_BT_WORLD;
	assert_int_equal(lk_bt_joint_create(w, &j, NULL), LK_ERR_INVALID_ARGUMENT);
	const char *msg = lk_bt_world_error(w);
	assert_non_null(strstr(msg, "lk_bt_joint_create: a joint needs at least one dynamic body"));
	assert_null(strstr(msg, "-1"));
	j.body_b = box;
	assert_int_equal(lk_bt_joint_create(w, &j, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(lk_bt_world_error(w), "goes in body_b"));
	j.body_a = ground;
	j.body_b = LK_BT_WORLD;
	assert_int_equal(lk_bt_joint_create(w, &j, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(lk_bt_world_error(w), "at least one dynamic body"));
	int id = -1;
	j.body_b = box;
	assert_int_equal(lk_bt_joint_create(w, &j, &id), LK_OK);
	assert_true(lk_bt_joint_is_valid(w, id));
	assert_int_equal(lk_bt_joint_destroy(w, id), LK_OK);
	assert_false(lk_bt_joint_is_valid(w, id));
	lk_bt_world_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_box_rests_every_solver),
		cmocka_unit_test(test_stack_stands_pgs),
		cmocka_unit_test(test_stack_stands_amgs),
		cmocka_unit_test(test_pendulum_keeps_length),
		cmocka_unit_test(test_impulses_match_bullet_si),
		cmocka_unit_test(test_adapter_writes_back_its_solution),
		cmocka_unit_test(test_contact_points_when_used),
		cmocka_unit_test(test_joints),
		cmocka_unit_test(test_joint_rows_as_bullets_own),
		cmocka_unit_test(test_contact_rows_as_bullets_own),
		cmocka_unit_test(test_shapes_and_factors),
		cmocka_unit_test(test_stats_and_advance),
		cmocka_unit_test(test_plane_points_and_slop),
		cmocka_unit_test(test_multibody_world),
		cmocka_unit_test(test_invalid_arguments),
		cmocka_unit_test(test_bullet_si_mt),
		cmocka_unit_test(test_stale_handles),
		cmocka_unit_test(test_mass_and_inertia_ranges),
		cmocka_unit_test(test_joint_needs_a_dynamic_body),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

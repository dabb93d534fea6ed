/* auto (common/src/auto.c, docs/solvers.md "auto"), and the rule that a check never changes what a Gauss-Seidel
 * solve returns: the mean budget and its bounds, the stopping rule's independence of units, the face warm start
 * that makes a face's wrench whole (and, off a stack, a settled or nearly settled face's friction), the two-level
 * correction on stacks and not elsewhere (and its level kept from one solve to the next), and the same lambda to
 * the bit with and without a tolerance, a history or the statistics on a recorded warm-started step. */
#include "test_util.h"

#include "lcpkit/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static lk_problem *read_data(const char *name)
{
	lk_problem *p = NULL;
	char err[300];
	if (lk_problem_read(tu_data_path(name), NULL, &p, NULL, err, sizeof err) != LK_OK || !p)
		fail_msg("%s", err);
	return p;
}

/* Solves p with spec from the warm start `start` (n entries); the result into out (may be NULL). */
static lk_stats solve_from(lk_problem *p, const char *spec, const double *start, double *out)
{
	const int n = lk_problem_row_count(p);
	assert_int_equal(lk_problem_set_lambda(p, start, n), LK_OK);
	lk_solver_config c = tu_spec(spec);
	lk_stats st;
	assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
	if (out)
		memcpy(out, lk_problem_lambda(p), (size_t)n * sizeof(double));
	return st;
}

/* The incoming impulses of p (its warm start), and room for as many */
static double *lambda_copy(const lk_problem *p)
{
	const int n = lk_problem_row_count(p);
	double *x = malloc((size_t)n * sizeof(double));
	memcpy(x, lk_problem_lambda(p), (size_t)n * sizeof(double));
	return x;
}

static double *lambda_room(const lk_problem *p)
{
	return malloc((size_t)lk_problem_row_count(p) * sizeof(double));
}

/* A tolerance that is never met, a history and the statistics are checks: on a recorded, warm-started ragdoll
 * step (ODE, joints, limits and contacts) PGS under a budget returns the same lambda to the bit with any of
 * them or none, and never stops as "diverged" where the merit rises for a while after the warm start. So does
 * auto; and AMGS, whose guard runs whether or not the statistics ask for its measurements. */
static void test_checks_change_nothing(void **state)
{
	(void)state;
	lk_problem *p = read_data("ode-ragdolls2-step60.lkp");
	const int n = lk_problem_row_count(p);
	assert_true(n > 100);
	double *start = malloc((size_t)n * sizeof(double)), *ref = malloc((size_t)n * sizeof(double)),
	       *got = malloc((size_t)n * sizeof(double));
	memcpy(start, lk_problem_lambda(p), (size_t)n * sizeof(double));
	const char *const families[3][4] = {
		{"pgs:budget=60,measure=0", "pgs:budget=60,measure=1", "pgs:budget=60,tol=1e-30,measure=0",
		 "pgs:budget=60,tol=1e-30,check=1,measure=1"},
		{"auto:budget=20,vtol=0,measure=0", "auto:budget=20,vtol=0,measure=1", "auto:budget=20,vtol=0,tol=1e-30",
		 "auto:budget=20,vtol=0,rtol=1e-30,check=2"},
		{"amgs:budget=30,measure=0", "amgs:budget=30,measure=1", "amgs:budget=30,tol=1e-30",
		 "amgs:budget=30,tol=1e-30,check=3"},
	};
	for (int f = 0; f < 3; ++f) {
		lk_stats st0 = solve_from(p, families[f][0], start, ref);
		assert_int_equal(st0.stop_reason, LK_STOP_BUDGET);
		for (int k = 1; k < 4; ++k) {
			lk_stats st = solve_from(p, families[f][k], start, got);
			if (memcmp(ref, got, (size_t)n * sizeof(double)) != 0)
				fail_msg("%s and %s return different impulses (largest difference %g)", families[f][0],
				         families[f][k], tu_max_diff(ref, got, n));
			assert_int_equal(st.stop_reason, LK_STOP_BUDGET);
			assert_int_equal(st.iterations, st0.iterations);
		}
		/* and with a history of every sweep */
		lk_history_entry e[400];
		lk_history h = {e, 400, 0};
		assert_int_equal(lk_problem_set_lambda(p, start, n), LK_OK);
		lk_solver_config c = tu_spec(families[f][0]);
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, &h), LK_OK);
		assert_true(h.count > 10);
		assert_memory_equal(ref, lk_problem_lambda(p), (size_t)n * sizeof(double));
	}
	free(start);
	free(ref);
	free(got);
	lk_problem_destroy(p);
}

/* The budget is a mean: solves that never meet the tolerance spend the budget each where there is no stack;
 * on a stack the first ones borrow up to `cap` budgets, and over any number of solves the work is at most the
 * budget times their number plus `bank` budgets (and a sweep's overshoot each). */
static void test_mean_budget(void **state)
{
	(void)state;
	lk_problem *p = read_data("ode-ragdolls2-step60.lkp"); /* joints: no stack */
	const int n = lk_problem_row_count(p);
	double *start = malloc((size_t)n * sizeof(double));
	memcpy(start, lk_problem_lambda(p), (size_t)n * sizeof(double));
	for (int k = 0; k < 12; ++k) {
		lk_stats st = solve_from(p, "auto:budget=10,vtol=0", start, NULL);
		assert_true(st.work >= 10.0 && st.work < 11.0);
		assert_int_equal(st.stop_reason, LK_STOP_BUDGET);
	}
	free(start);
	lk_problem_destroy(p);

	p = tu_generate("boxstack", 10, 0.5);
	const int m = lk_problem_row_count(p);
	double *zero = calloc((size_t)m, sizeof(double));
	double total = 0.0, first = 0.0;
	const int solves = 40;
	for (int k = 0; k < solves; ++k) {
		lk_stats st = solve_from(p, "auto:budget=10,vtol=0,cap=4,bank=6", zero, NULL);
		if (k == 0)
			first = st.work;
		assert_true(st.work <= 4 * 10 + 8.0); /* the cap, and a correction's overshoot */
		total += st.work;
	}
	assert_true(first > 30.0); /* the stack borrowed */
	assert_true(total <= solves * 10.0 + 6 * 10.0 + solves * 1.0);
	/* a chain of 10 faces may take 2 sweeps a face where the cap gives fewer, at most twice the cap: at a budget
	 * of 2, 16 sweep-equivalents and not 8 */
	lk_problem *tall = tu_generate("boxstack", 10, 0.5);
	lk_stats st = solve_from(tall, "auto:budget=2,vtol=0,cap=4", zero, NULL);
	assert_true(st.work > 4 * 2 + 1.0 && st.work <= 2 * 4 * 2 + 2.0);
	lk_problem_destroy(tall);
	free(zero);
	lk_problem_destroy(p);
}

/* What a solve saves where it meets the tolerance, a later one may spend: a box resting at its solution stops
 * after a sweep and saves nine; the next cold start of the same problem gets them on top of the budget and the
 * debt it may take on, where a problem with nothing saved gets the budget and the debt. */
static void test_savings_spent(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 1, 0.5);
	const int n = lk_problem_row_count(p);
	double *zero = calloc((size_t)n, sizeof(double)), *sol = malloc((size_t)n * sizeof(double));
	lk_stats st = solve_from(p, "pgs:iters=5000,tol=1e-13", zero, sol);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	lk_problem *q = tu_generate("boxstack", 1, 0.5);
	st = solve_from(q, "auto:budget=10,carry=1", sol, NULL);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	assert_int_equal(st.iterations, 1);
	/* nine sweeps saved: a cold start that cannot meet the tolerance now spends them, the budget and the debt
	 * of a problem that is no stack, a third of the bank (here of one budget): 9 + 10 + 10 / 3 */
	st = solve_from(q, "auto:budget=10,vtol=0,carry=1,bank=1", zero, NULL);
	assert_true(st.work > 21.9 && st.work < 22.4); /* whole sweeps: 22 */
	/* nothing saved: the budget and the debt */
	lk_problem *fresh = tu_generate("boxstack", 1, 0.5);
	st = solve_from(fresh, "auto:budget=10,vtol=0,carry=1,bank=1", zero, NULL);
	assert_true(st.work > 12.9 && st.work < 13.4);
	lk_problem_destroy(fresh);
	free(zero);
	free(sol);
	lk_problem_destroy(p);
	lk_problem_destroy(q);
}

/* The stopping rule compares velocities with velocities: the same problem with every mass k times larger
 * (impulses k times larger, velocities as they were) stops after the same sweeps, with k times the impulses.
 * An absolute tolerance on RES would not (its impulses scale). */
static void test_stop_rule_units(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 5, 0.5);
	const int n = lk_problem_row_count(p);
	const double scale[2] = {1.0, 1000.0};
	int iterations[2];
	double *lambda[2];
	for (int s = 0; s < 2; ++s) {
		lk_problem *q = lk_problem_create(LK_FORM_ROWS);
		for (int b = 0; b < lk_problem_body_count(p); ++b) {
			lk_body_def d = *lk_problem_body(p, b);
			for (int k = 0; k < 3; ++k)
				d.inv_mass[k] /= scale[s];
			for (int k = 0; k < 9; ++k)
				d.inv_inertia[k] /= scale[s];
			assert_int_equal(lk_problem_add_body(q, &d, NULL), LK_OK);
		}
		for (int r = 0; r < n; ++r) {
			lk_row_def d;
			assert_int_equal(lk_problem_get_row(p, r, &d), LK_OK);
			d.s /= scale[s];
			assert_int_equal(lk_problem_add_row(q, &d, NULL), LK_OK);
		}
		lk_solver_config c = tu_spec("auto:budget=200");
		c.warm_start = 0;
		lk_stats st;
		assert_int_equal(lk_solve(q, &c, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		iterations[s] = st.iterations;
		lambda[s] = malloc((size_t)n * sizeof(double));
		memcpy(lambda[s], lk_problem_lambda(q), (size_t)n * sizeof(double));
		lk_problem_destroy(q);
	}
	assert_int_equal(iterations[0], iterations[1]);
	assert_true(iterations[0] >= 2 && iterations[0] < 800);
	for (int r = 0; r < n; ++r)
		assert_double_equal(lambda[1][r], scale[1] * lambda[0][r], 1e-9 * (1.0 + fabs(scale[1] * lambda[0][r])));
	free(lambda[0]);
	free(lambda[1]);
	lk_problem_destroy(p);
}

/* p's solution from zero (to 1e-13) into sol, and 0.85 of it (an engine's damped warm start) into damped. */
static void solution_and_damped(lk_problem *p, double *sol, double *damped)
{
	const int n = lk_problem_row_count(p);
	double *zero = calloc((size_t)n, sizeof(double));
	solve_from(p, "pgs:iters=5000,tol=1e-13", zero, sol);
	for (int i = 0; i < n; ++i)
		damped[i] = 0.85 * sol[i];
	free(zero);
}

/* The load a box's contacts carry: the sum of its normal impulses. */
static double face_load(const lk_problem *p, const double *lambda)
{
	double load = 0.0;
	for (int i = 0; i < lk_problem_row_count(p); ++i) {
		lk_row_kind kind;
		assert_int_equal(lk_problem_get_bounds(p, i, NULL, NULL, NULL, NULL, &kind), LK_OK);
		load += kind == LK_ROW_NORMAL ? lambda[i] : 0.0;
	}
	return load;
}

/* The warm start of a stack's faces: given 0.85 of a resting stack's impulses (an engine's damped warm start),
 * auto makes the part that sets each face's wrench whole again, so that the stack starts at a solution (the
 * four contacts' share of a face's load is not unique: what is left damped only trades load between them) and
 * the sweeps stop at once, the first finding next to nothing to correct; the faces carry the boxes' weight as
 * the solution does. Told that its start is whole (carry=1), a sweep does not get the weight back. */
static void test_face_warm_start(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 4, 0.5);
	const int n = lk_problem_row_count(p);
	double *sol = malloc((size_t)n * sizeof(double)), *damped = malloc((size_t)n * sizeof(double)),
	       *got = malloc((size_t)n * sizeof(double));
	solution_and_damped(p, sol, damped);
	lk_stats st = solve_from(p, "auto:budget=10", damped, got);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	assert_true(st.iterations <= 2);
	tu_assert_complementarity(p, got, 1e-3 * 9.81 / 60); /* the tolerance: 1e-3 of g h */
	/* the faces carry the boxes' weight after that sweep; without the restoring, the sweep from the damped start
	 * does not get it back */
	const double load_sol = face_load(p, sol);
	assert_true(load_sol > 0.1);
	assert_double_equal(face_load(p, got), load_sol, 1e-3 * load_sol);
	st = solve_from(p, "auto:budget=1,cap=1,bank=0,carry=1", damped, got);
	assert_int_equal(st.iterations, 1);
	assert_true(fabs(face_load(p, got) - load_sol) > 2e-2 * load_sol);
	free(sol);
	free(damped);
	free(got);
	lk_problem_destroy(p);
}

/* The friction force the rows of a problem of one moving body (body 0) apply to it: sum lambda_i J_i (linear). */
static void friction_force(const lk_problem *p, const double *lambda, double f[3])
{
	f[0] = f[1] = f[2] = 0.0;
	for (int i = 0; i < lk_problem_row_count(p); ++i) {
		lk_row_def d;
		assert_int_equal(lk_problem_get_row(p, i, &d), LK_OK);
		for (int k = 0; d.kind == LK_ROW_FRICTION && k < 3; ++k)
			f[k] += lambda[i] * d.J[0][k];
	}
}

/* A box at rest on an incline (a face that is no part of a stack): its solution, 0.85 of it (the damped warm
 * start), room for a result and the friction force that holds it. */
typedef struct incline_box {
	lk_problem *p;
	int n;
	double *sol, *damped, *got;
	double f_sol[3], hold;
} incline_box;

static incline_box incline_box_make(void)
{
	incline_box b;
	b.p = tu_generate("incline", 1, 0.8);
	b.n = lk_problem_row_count(b.p);
	b.sol = malloc((size_t)b.n * sizeof(double));
	b.damped = malloc((size_t)b.n * sizeof(double));
	b.got = malloc((size_t)b.n * sizeof(double));
	solution_and_damped(b.p, b.sol, b.damped);
	friction_force(b.p, b.sol, b.f_sol);
	b.hold = sqrt(b.f_sol[0] * b.f_sol[0] + b.f_sol[1] * b.f_sol[1] + b.f_sol[2] * b.f_sol[2]);
	return b;
}

/* b.got holds the box with the friction of the solution, within the complementarity tolerance tol */
static void incline_box_held(const incline_box *b, double tol)
{
	double f_got[3];
	friction_force(b->p, b->got, f_got);
	for (int k = 0; k < 3; ++k)
		assert_double_equal(f_got[k], b->f_sol[k], 1e-6 * b->hold);
	tu_assert_complementarity(b->p, b->got, tol);
}

static void incline_box_free(incline_box *b)
{
	free(b->sol);
	free(b->damped);
	free(b->got);
	lk_problem_destroy(b->p);
}

/* A face that is no part of a stack (a box at rest on an incline): given 0.85 of its impulses, the first solve
 * has nothing to go by and sweeps the friction's load back in several sweeps; once a solve settled, the next
 * makes the face's friction whole (and its normals' wrench), starts at the solution and stops after one sweep
 * with the friction that holds the box. Told that its start is whole (carry=1), it does not. */
static void test_settled_face_friction_whole(void **state)
{
	(void)state;
	incline_box b = incline_box_make();
	/* m g sin(theta) h: the incline's J carries its slope, sin(theta) = 0.2955 */
	assert_double_equal(b.hold, 1.0 * 9.81 * 0.29552020666133955 / 60.0, 1e-9);
	lk_stats first = solve_from(b.p, "auto:budget=10", b.damped, NULL);
	assert_int_equal(first.stop_reason, LK_STOP_ABSOLUTE);
	assert_true(first.iterations >= 4);
	lk_stats next = solve_from(b.p, "auto:budget=10", b.damped, b.got);
	assert_int_equal(next.stop_reason, LK_STOP_ABSOLUTE);
	assert_int_equal(next.iterations, 1);
	incline_box_held(&b, 1e-3 * 9.81 / 60);
	/* its work, by hand: the sweep's 12 rows, the face's 4 normals and 8 friction rows made whole (a row update
	 * each) and the normals' projection, 33 m + 60 multiply-adds for m = 4 at 1/18 of a row update each
	 * (docs/solvers.md, "Work"), in sweeps of the 12 rows */
	assert_int_equal(b.n, 12);
	assert_double_equal(next.work, (12.0 + 4.0 + 8.0 + (33.0 * 4 + 60.0) / 18.0) / 12.0, 1e-9);
	lk_stats whole = solve_from(b.p, "auto:budget=10,carry=1", b.damped, NULL);
	assert_true(whole.iterations >= 4);
	print_message("from 0.85 of the solution: %d sweeps, then %d once settled (%d told the start is whole); "
	              "work %.3f, %d rows\n", first.iterations, next.iterations, whole.iterations, next.work, b.n);
	incline_box_free(&b);
}

/* A face off a stack whose solve ended on its allowance all but settled (what its last sweep leaves, the stopping
 * rule's bound, within AUTO_NEARLY tolerances) has its load and friction restored in the next solve, as after one
 * that settled: the box on the incline at 3 sweeps a solve with the tolerance at 3e-4, which its damped start needs
 * a fourth sweep to meet, ends its first solve on the budget, and the next starts at the solution and stops after
 * one sweep. Restored only after a solve that settled, it took 3 sweeps every time, never settling for want of the
 * restored start (as Bullet's resting boxes did at 5 iterations: docs/benchmarks.md, "A resting face near its
 * tolerance"). With the tolerance at 2e-4 the first solve ends further from it, and the next starts from the
 * damped impulses again. */
static void test_near_face_restored(void **state)
{
	(void)state;
	incline_box b = incline_box_make();
	const char *near = "auto:budget=3,cap=1,bank=0,vtol=3e-4";
	lk_stats first = solve_from(b.p, near, b.damped, NULL);
	assert_int_equal(first.stop_reason, LK_STOP_BUDGET);
	assert_int_equal(first.iterations, 3);
	lk_stats next = solve_from(b.p, near, b.damped, b.got);
	assert_int_equal(next.stop_reason, LK_STOP_ABSOLUTE);
	assert_int_equal(next.iterations, 1);
	incline_box_held(&b, 3e-4 * 9.81 / 60);
	incline_box_free(&b);
	/* a fresh problem (the account and the last solve's outcome are the problem's) */
	b = incline_box_make();
	const char *far = "auto:budget=3,cap=1,bank=0,vtol=2e-4";
	lk_stats far_first = solve_from(b.p, far, b.damped, NULL);
	lk_stats far_next = solve_from(b.p, far, b.damped, NULL);
	print_message("near: %d sweeps on the budget, then %d; further: %d, then %d\n", first.iterations,
	              next.iterations, far_first.iterations, far_next.iterations);
	assert_int_equal(far_first.stop_reason, LK_STOP_BUDGET);
	assert_int_equal(far_next.stop_reason, LK_STOP_BUDGET);
	assert_int_equal(far_next.iterations, 3);
	incline_box_free(&b);
}

/* A unit box (m = 1, I = 1/6) on the ground on its four bottom corners, moving at vx along x and falling at the
 * step's gravity (g h, h = 1/60): for each corner its normal row (z) and friction rows (x, y), mu 0.5. */
static lk_problem *box_on_ground(double vx)
{
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	lk_body_def b = lk_default_body_def();
	b.u[0] = vx;
	b.u[2] = -9.81 / 60.0;
	for (int k = 0; k < 3; ++k) {
		b.inv_mass[k] = 1.0;
		b.inv_inertia[4 * k] = 6.0;
	}
	assert_int_equal(lk_problem_add_body(p, &b, NULL), LK_OK);
	for (int c = 0; c < 4; ++c) {
		const double r[3] = {c & 1 ? 0.5 : -0.5, c & 2 ? 0.5 : -0.5, -0.5};
		const double dir[3][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
		for (int k = 0; k < 3; ++k) {
			lk_row_def d = lk_default_row_def();
			d.body[0] = 0;
			d.body[1] = LK_STATIC;
			const double *n = dir[k];
			for (int a = 0; a < 3; ++a)
				d.J[0][a] = n[a];
			d.J[0][3] = r[1] * n[2] - r[2] * n[1];
			d.J[0][4] = r[2] * n[0] - r[0] * n[2];
			d.J[0][5] = r[0] * n[1] - r[1] * n[0];
			if (k == 0) {
				d.lo = 0;
				d.kind = LK_ROW_NORMAL;
			} else {
				d.findex = 3 * c;
				d.mu = 0.5;
				d.kind = LK_ROW_FRICTION;
			}
			assert_int_equal(lk_problem_add_row(p, &d, NULL), LK_OK);
		}
	}
	return p;
}

/* A face off a stack that slides keeps the damped warm start (auto.c, mark_sliding): where its friction, made
 * whole, could not stop it many times over, its impulses are the previous step's kinetic ones, and made whole
 * they pressed boxes launched at 100 m/s across Bullet's floor deeper into it than Bullet's own solver did. A box
 * sliding at 12 m/s, given 0.85 of its impulses after a solve that settled, sweeps more than once; the same box at
 * 1 cm/s, whose friction holds it, starts from its load made whole and stops after one sweep. */
static void test_sliding_face_stays_damped(void **state)
{
	(void)state;
	const double speeds[2] = {12.0, 0.01};
	for (int k = 0; k < 2; ++k) {
		lk_problem *p = box_on_ground(speeds[k]);
		const int n = lk_problem_row_count(p);
		double *sol = malloc((size_t)n * sizeof(double)), *damped = malloc((size_t)n * sizeof(double));
		solution_and_damped(p, sol, damped);
		lk_stats first = solve_from(p, "auto:budget=10", damped, NULL);
		lk_stats next = solve_from(p, "auto:budget=10", damped, NULL);
		print_message("at %g m/s: %d sweeps, then %d after a solve that %s\n", speeds[k], first.iterations,
		              next.iterations, first.stop_reason == LK_STOP_ABSOLUTE ? "settled" : "did not settle");
		assert_int_equal(first.stop_reason, LK_STOP_ABSOLUTE);
		assert_int_equal(next.stop_reason, LK_STOP_ABSOLUTE);
		if (k == 0)
			assert_true(next.iterations > 1);
		else
			assert_int_equal(next.iterations, 1);
		/* sliding, the friction is at its bound against the motion: mu times the normal load, along -x */
		if (k == 0) {
			const double *l = lk_problem_lambda(p);
			double fx = 0.0, load = 0.0;
			for (int c = 0; c < 4; ++c) {
				fx += l[3 * c + 1];
				load += l[3 * c];
			}
			assert_double_equal(fx, -0.5 * load, 1e-6 * load);
		}
		free(sol);
		free(damped);
		lk_problem_destroy(p);
	}
}

/* The two-level correction on a stack: a cold 20-box stack reaches RES 1e-4 within the borrowed work, where
 * PGS with the same work does not come near. A jointed chain has no faces: auto sweeps it exactly as PGS in
 * the same order does. */
static void test_stack_and_no_stack(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 20, 0.5);
	const int n = lk_problem_row_count(p);
	double *zero = calloc((size_t)n, sizeof(double));
	lk_stats a = solve_from(p, "auto:budget=10", zero, NULL);
	lk_stats g = solve_from(p, "pgs:budget=40", zero, NULL);
	assert_int_equal(g.stop_reason, LK_STOP_BUDGET);
	assert_int_equal(a.stop_reason, LK_STOP_ABSOLUTE);
	assert_true(a.work <= 40.0 + 8.0);
	lk_metrics m;
	assert_int_equal(lk_problem_metrics(p, NULL, &m), LK_OK); /* PGS's result */
	assert_true(m.res > 1e-2);
	assert_true(a.res_final < 1e-4);
	free(zero);
	lk_problem_destroy(p);

	p = tu_generate("chain", 12, 0.0);
	const int k = lk_problem_row_count(p);
	double *start = calloc((size_t)k, sizeof(double)), *x = malloc((size_t)k * sizeof(double)),
	       *y = malloc((size_t)k * sizeof(double));
	solve_from(p, "auto:budget=15,vtol=0,cap=1", start, x);
	solve_from(p, "pgs:budget=15", start, y);
	assert_memory_equal(x, y, (size_t)k * sizeof(double));
	free(start);
	free(x);
	free(y);
	lk_problem_destroy(p);
}

/* Fills dst with src's bodies and rows (dst cleared first), the bodies' inverse masses and inertias times
 * inv_mass_scale, and each contact's two friction directions turned by `turn` radians within its tangent
 * plane (a friction row's J and target are linear in its direction). */
static void refill(lk_problem *dst, const lk_problem *src, double inv_mass_scale, double turn)
{
	lk_problem_clear(dst);
	for (int b = 0; b < lk_problem_body_count(src); ++b) {
		lk_body_def d = *lk_problem_body(src, b);
		for (int k = 0; k < 3; ++k)
			d.inv_mass[k] *= inv_mass_scale;
		for (int k = 0; k < 9; ++k)
			d.inv_inertia[k] *= inv_mass_scale;
		assert_int_equal(lk_problem_add_body(dst, &d, NULL), LK_OK);
	}
	const int n = lk_problem_row_count(src);
	int turned = 0;
	for (int i = 0; i < n; ++i) {
		lk_row_def d, e;
		assert_int_equal(lk_problem_get_row(src, i, &d), LK_OK);
		if (d.findex >= 0 && i + 1 < n) {
			assert_int_equal(lk_problem_get_row(src, i + 1, &e), LK_OK);
			if (e.findex == d.findex) {
				const double cs = cos(turn), sn = sin(turn);
				lk_row_def r1 = d, r2 = e;
				for (int k = 0; k < 12; ++k) {
					r1.J[k / 6][k % 6] = cs * d.J[k / 6][k % 6] + sn * e.J[k / 6][k % 6];
					r2.J[k / 6][k % 6] = -sn * d.J[k / 6][k % 6] + cs * e.J[k / 6][k % 6];
				}
				r1.c = cs * d.c + sn * e.c;
				r2.c = -sn * d.c + cs * e.c;
				assert_int_equal(lk_problem_add_row(dst, &r1, NULL), LK_OK);
				assert_int_equal(lk_problem_add_row(dst, &r2, NULL), LK_OK);
				++i;
				++turned;
				continue;
			}
		}
		assert_int_equal(lk_problem_add_row(dst, &d, NULL), LK_OK);
	}
	assert_true(turned > 0);
	assert_int_equal(lk_problem_validate(dst), LK_OK);
}

/* Solves a new problem holding src's content (refill) from `start` with spec; the impulses into out. */
static lk_stats solve_fresh(const lk_problem *src, double inv_mass_scale, double turn, const char *spec,
                            const double *start, double *out)
{
	lk_problem *q = lk_problem_create(LK_FORM_ROWS);
	assert_non_null(q);
	refill(q, src, inv_mass_scale, turn);
	lk_stats st = solve_from(q, spec, start, out);
	lk_problem_destroy(q);
	return st;
}

/* An engine solves its islands one by one through one problem, and they share its account: a 10-box stack
 * landing (cold every time: it borrows and never settles) and a box on its own, solved in turn. Over the stack's
 * solves the work is at most the budget times their number plus `bank` budgets and a correction's overshoot
 * each, as without the box between them: the box's solves do not forgive the stack's debt. */
static void test_islands_share_the_account(void **state)
{
	(void)state;
	lk_problem *stack = tu_generate("boxstack", 10, 0.5), *box = tu_generate("boxstack", 1, 0.5);
	lk_problem *q = lk_problem_create(LK_FORM_ROWS);
	assert_non_null(q);
	const int m = lk_problem_row_count(stack);
	double *zero = calloc((size_t)m, sizeof(double));
	const char *spec = "auto:budget=10,vtol=0,cap=4,bank=30";
	const int solves = 200;
	double total = 0.0, first = 0.0;
	for (int k = 0; k < solves; ++k) {
		refill(q, stack, 1.0, 0.0);
		lk_stats st = solve_from(q, spec, zero, NULL);
		if (k == 0)
			first = st.work;
		total += st.work;
		refill(q, box, 1.0, 0.0);
		solve_from(q, spec, zero, NULL);
	}
	print_message("the stack's solves: %.1f sweep-equivalents the first, %.1f a solve over %d\n", first,
	              total / solves, solves);
	assert_true(first > 30.0); /* the stack borrowed */
	assert_true(total <= solves * 10.0 + 30 * 10.0 + solves * 0.5);
	free(zero);
	lk_problem_destroy(q);
	lk_problem_destroy(stack);
	lk_problem_destroy(box);
}

/* auto keeps a stack's coarse level (its basis and factor) for the problem's next solve and makes it again
 * only where the faces changed (coarse.c, kept_fits). A 20-box stack solved, then solved again from its
 * impulses damped to 0.85 (an engine's next step): the second solve takes the kept level and returns what a
 * new problem of the same rows returns from the same start, to the bit, for less work (the making is not
 * counted again). Its contacts' friction directions turned by 0.5 rad within their planes (an engine's
 * friction directions follow the sliding velocity): the level still serves, as the face's span and coarse
 * problem do not depend on where the pair of directions points, and the impulses are a new problem's to
 * rounding. The boxes made twice as heavy: the level does not fit (A_ii changed), is made again, and the
 * solve is a new problem's to the bit, work included. */
static void test_kept_coarse_level(void **state)
{
	(void)state;
	/* every solve may spend `cap` budgets, and none restores the faces' load (carry=1), which depends on how
	 * the solve before ended */
	const char *spec = "auto:budget=10,bank=1000,carry=1";
	lk_problem *src = tu_generate("boxstack", 20, 0.5);
	lk_problem *p = tu_generate("boxstack", 20, 0.5);
	const int n = lk_problem_row_count(p);
	double *zero = calloc((size_t)n, sizeof(double)), *start = malloc((size_t)n * sizeof(double)),
	       *l1 = malloc((size_t)n * sizeof(double)), *l2 = malloc((size_t)n * sizeof(double));
	lk_stats s0 = solve_from(p, spec, zero, start);
	assert_int_equal(s0.stop_reason, LK_STOP_ABSOLUTE);
	double top = 0.0;
	for (int i = 0; i < n; ++i) {
		top = fmax(top, fabs(start[i]));
		start[i] *= 0.85;
	}
	assert_true(top > 0.1);

	lk_stats sk = solve_from(p, spec, start, l2);
	lk_stats sf = solve_fresh(src, 1.0, 0.0, spec, start, l1);
	assert_int_equal(sf.stop_reason, LK_STOP_ABSOLUTE);
	assert_int_equal(sk.stop_reason, LK_STOP_ABSOLUTE);
	assert_int_equal(sk.iterations, sf.iterations);
	assert_memory_equal(l1, l2, (size_t)n * sizeof(double));
	assert_true(sk.work < sf.work - 1.0);

	/* the friction directions turned: the kept level serves */
	refill(p, src, 1.0, 0.5);
	sk = solve_from(p, spec, start, l2);
	sf = solve_fresh(src, 1.0, 0.5, spec, start, l1);
	assert_int_equal(sk.stop_reason, LK_STOP_ABSOLUTE);
	assert_int_equal(sk.iterations, sf.iterations);
	assert_true(sk.work < sf.work - 1.0);
	assert_true(tu_max_diff(l1, l2, n) <= 1e-9 * top);

	/* heavier boxes: made again */
	refill(p, src, 0.5, 0.5);
	sk = solve_from(p, spec, start, l2);
	sf = solve_fresh(src, 0.5, 0.5, spec, start, l1);
	assert_int_equal(sk.stop_reason, LK_STOP_ABSOLUTE);
	assert_int_equal(sk.iterations, sf.iterations);
	assert_memory_equal(l1, l2, (size_t)n * sizeof(double));
	assert_double_equal(sk.work, sf.work, 0.0);
	free(zero);
	free(start);
	free(l1);
	free(l2);
	lk_problem_destroy(src);
	lk_problem_destroy(p);
}

/* A problem with joints spends its budget as PGS does, whatever the tolerance: on ODE's universal joint of
 * demo_joints (test 741 asks its rate to 1e-10 rad/s; tests/data/ode-universal-step20.lkp) auto at 20 is PGS
 * at 20 sweeps to the bit, RES near rounding, where auto's tolerance once stopped it after a few sweeps and
 * the demo failed at 258 times its limit. */
/* shuffle=K sweeps the first K sweeps in the problem's order (pgs's to the bit), then a random order drawn anew
 * every K sweeps, from a seed of each solve's own: the same
 * problem solved twice from the same start in two runs gives the same lambda to the bit (the solves counted from
 * the problem's creation), its second solve another order than its first, shuffle=0 the problem's own order
 * (pgs's sweeps to the bit), as has a problem without faces; shuffled every sweep it solves a two-box stack to
 * RES 1e-11. */
static void test_shuffled_orders(void **state)
{
	(void)state;
	lk_problem *a = tu_generate("boxstack", 6, 0.5), *b = tu_generate("boxstack", 6, 0.5);
	const int n = lk_problem_row_count(a);
	double *zero = calloc((size_t)n, sizeof(double));
	double *a1 = malloc((size_t)n * sizeof(double)), *a2 = malloc((size_t)n * sizeof(double));
	double *b1 = malloc((size_t)n * sizeof(double)), *plain = malloc((size_t)n * sizeof(double));
	const char *spec = "auto:budget=3,vtol=0,coarse=0,bank=0,shuffle=2";
	solve_from(a, spec, zero, a1);
	solve_from(a, spec, zero, a2);
	solve_from(b, spec, zero, b1);
	assert_memory_equal(a1, b1, (size_t)n * sizeof(double)); /* run after run */
	int differ = 0;
	for (int i = 0; i < n; ++i)
		differ += a1[i] != a2[i];
	assert_true(differ > n / 2); /* each solve its own orders */
	lk_problem *c = tu_generate("boxstack", 6, 0.5);
	solve_from(c, "auto:budget=3,vtol=0,coarse=0,bank=0", zero, plain);
	lk_problem *d = tu_generate("boxstack", 6, 0.5);
	lk_stats st = solve_from(d, "pgs:iters=3", zero, NULL);
	assert_int_equal(st.iterations, 3);
	assert_memory_equal(plain, lk_problem_lambda(d), (size_t)n * sizeof(double)); /* shuffle=0: pgs's order */
	differ = 0;
	for (int i = 0; i < n; ++i)
		differ += a1[i] != plain[i];
	assert_true(differ > n / 2);
	/* the first two sweeps in the problem's order */
	lk_problem *h = tu_generate("boxstack", 6, 0.5), *k = tu_generate("boxstack", 6, 0.5);
	solve_from(h, "auto:budget=2,vtol=0,coarse=0,bank=0,shuffle=2", zero, plain);
	solve_from(k, "pgs:iters=2", zero, NULL);
	assert_memory_equal(plain, lk_problem_lambda(k), (size_t)n * sizeof(double));
	lk_problem_destroy(h);
	lk_problem_destroy(k);
	/* to the solution in any order */
	lk_problem *e = tu_generate("boxstack", 2, 0.5);
	const int ne = lk_problem_row_count(e);
	double *ze = calloc((size_t)ne, sizeof(double));
	st = solve_from(e, "auto:budget=300,vtol=0,coarse=0,bank=0,shuffle=1,measure=1", ze, NULL);
	assert_true(st.res_initial > 0.1 && st.res_final < 1e-11);
	free(ze);
	/* a problem without faces (a packing of spheres) keeps its order: pgs's sweeps to the bit */
	lk_problem *f = tu_generate("packing", 6, 0.5), *g = tu_generate("packing", 6, 0.5);
	const int nf = lk_problem_row_count(f);
	double *zf = calloc((size_t)nf, sizeof(double)), *lf = malloc((size_t)nf * sizeof(double));
	solve_from(f, "auto:budget=3,vtol=0,bank=0,shuffle=1", zf, lf);
	solve_from(g, "pgs:iters=3", zf, NULL);
	assert_memory_equal(lf, lk_problem_lambda(g), (size_t)nf * sizeof(double));
	free(zf);
	free(lf);
	lk_problem_destroy(f);
	lk_problem_destroy(g);
	lk_solver_config bad = lk_default_config(LK_METHOD_AUTO);
	bad.adapt.shuffle = -2;
	char err[200];
	assert_int_equal(lk_config_validate(&bad, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err, "shuffle"));
	free(zero);
	free(a1);
	free(a2);
	free(b1);
	free(plain);
	lk_problem_destroy(a);
	lk_problem_destroy(b);
	lk_problem_destroy(c);
	lk_problem_destroy(d);
	lk_problem_destroy(e);
}

/* lk__shuffle_local, auto's reshuffle: up to w items it is lk__shuffle draw for draw; beyond, a permutation in
 * which every item stays less than w places from where it was, whose windows' edges move from call to call
 * (each neighbouring pair is found in both orders over the calls), and which moves most items. */
static void test_local_shuffle(void **state)
{
	(void)state;
	enum { N = 1000, W = 64, CALLS = 200 };
	int a[N], b[N], seen[N];
	for (int i = 0; i < W; ++i)
		a[i] = b[i] = i;
	lk__rng r1 = {7}, r2 = {7};
	lk__shuffle_local(&r1, a, W, W);
	lk__shuffle(&r2, b, W);
	assert_memory_equal(a, b, sizeof(int) * W);
	assert_int_equal(r1.s, r2.s);
	static unsigned char before[N], after[N];
	lk__rng r = {11};
	for (int c = 0; c < CALLS; ++c) {
		for (int i = 0; i < N; ++i)
			a[i] = i;
		lk__shuffle_local(&r, a, N, W);
		memset(seen, 0, sizeof seen);
		int moved = 0;
		for (int k = 0; k < N; ++k) {
			assert_true(a[k] >= 0 && a[k] < N && !seen[a[k]]++);
			assert_true(abs(a[k] - k) < W);
			moved += a[k] != k;
		}
		assert_true(moved > N * 9 / 10);
		for (int k = 0; k < N; ++k)
			b[a[k]] = k; /* b: the place of item i */
		for (int i = 0; i + 1 < N; ++i) {
			before[i] |= b[i] < b[i + 1];
			after[i] |= b[i] > b[i + 1];
		}
	}
	for (int i = 0; i + 1 < N; ++i)
		assert_true(before[i] && after[i]);
}

static void test_joints_spend_the_budget(void **state)
{
	(void)state;
	lk_problem *p = read_data("ode-universal-step20.lkp");
	const int n = lk_problem_row_count(p);
	double *start = lambda_copy(p), *ref = lambda_room(p), *got = lambda_room(p);
	lk_stats st0 = solve_from(p, "pgs:iters=20", start, ref);
	lk_stats st = solve_from(p, "auto:budget=20", start, got);
	assert_int_equal(st.iterations, 20);
	assert_memory_equal(ref, got, (size_t)n * sizeof(double));
	assert_true(st.res_final == st0.res_final && st.res_final < 1e-14);
	/* a joint whose bodies touch nothing articulated keeps the problem's order under any shuffle */
	solve_from(p, "auto:budget=20,shuffle=2", start, got);
	assert_memory_equal(ref, got, (size_t)n * sizeof(double));
	/* the tolerance does not stop it either, however loose */
	st = solve_from(p, "auto:budget=20,vtol=0.5", start, got);
	assert_int_equal(st.iterations, 20);
	assert_memory_equal(ref, got, (size_t)n * sizeof(double));
	free(start);
	free(ref);
	free(got);
	lk_problem_destroy(p);
	/* relaxed (w=, as quickstep relaxes by 1.3), its sweeps are PSOR's: piled ragdolls, to the bit, and not
	 * plain PGS's */
	p = read_data("ode-ragdolls2-step60.lkp");
	const int m = lk_problem_row_count(p);
	start = lambda_copy(p);
	ref = lambda_room(p);
	got = lambda_room(p);
	st0 = solve_from(p, "psor:w=1.3,iters=10", start, ref);
	st = solve_from(p, "auto:w=1.3,budget=10", start, got);
	assert_int_equal(st.iterations, 10);
	assert_memory_equal(ref, got, (size_t)m * sizeof(double));
	st = solve_from(p, "auto:budget=10", start, got);
	assert_true(memcmp(ref, got, (size_t)m * sizeof(double)) != 0);
	assert_true(st0.res_final < st.res_final);
	/* the two ragdolls touch (a contact between two bodies that joints tie to others): reshuffled, every row,
	 * joints too, over the whole problem; the same run after run, and not the problem's order */
	double *again = malloc((size_t)m * sizeof(double)), *natural = malloc((size_t)m * sizeof(double));
	lk_problem *q = read_data("ode-ragdolls2-step60.lkp");
	solve_from(p, "auto:budget=10,shuffle=2", start, got);
	solve_from(q, "auto:budget=10,shuffle=2", start, again);
	solve_from(q, "auto:budget=10", start, natural);
	assert_memory_equal(got, again, (size_t)m * sizeof(double));
	int differ = 0;
	for (int i = 0; i < m; ++i)
		differ += got[i] != natural[i];
	assert_true(differ > m / 2);
	lk_problem_destroy(q);
	free(again);
	free(natural);
	free(start);
	free(ref);
	free(got);
	lk_problem_destroy(p);
}

/* The joints' bilateral rows' own relaxation (jw, ODE's quickstep w where the ODE adapter leaves it to the
 * world): on a problem of bilateral rows alone auto's sweeps are then PSOR's at that w, to the bit; a bounded
 * row keeps the plain step. Among contacts (the next test), only the bilateral rows are relaxed (neither
 * the plain sweeps nor the relaxed ones of every row);
 * the problem's 1 / A_ii is given back to the bit (the same solve again, the same lambda); and a jw out of
 * (0, 2) is refused. */
static void test_joint_rows_relaxed(void **state)
{
	(void)state;
	lk_problem *p = read_data("ode-universal-step20.lkp");
	const int n = lk_problem_row_count(p);
	for (int i = 0; i < n; ++i) {
		lk_row_def d;
		lk_problem_get_row(p, i, &d);
		assert_true(d.kind != LK_ROW_NORMAL && d.kind != LK_ROW_FRICTION); /* joint rows alone */
	}
	double *start = lambda_copy(p), *ref = lambda_room(p), *got = lambda_room(p);
	solve_from(p, "psor:w=1.3,iters=20", start, ref);
	solve_from(p, "auto:budget=20,jw=1.3", start, got);
	assert_memory_equal(ref, got, (size_t)n * sizeof(double));
	/* a joint's bounded row (a limit, a motor) keeps the plain step: the same problem with its first row given
	 * bounds it never reaches is no longer PSOR's, and its plain solve equals auto's relaxed one on that row's
	 * first update (the row comes first and starts each sweep from the same impulses) */
	lk_problem *q = lk_problem_create(LK_FORM_ROWS);
	for (int b = 0; b < lk_problem_body_count(p); ++b)
		assert_int_equal(lk_problem_add_body(q, lk_problem_body(p, b), NULL), LK_OK);
	for (int i = 0; i < n; ++i) {
		lk_row_def d;
		assert_int_equal(lk_problem_get_row(p, i, &d), LK_OK);
		if (i == 0) {
			assert_true(d.findex < 0 && isinf(d.lo) && isinf(d.hi));
			d.lo = -1e30;
			d.hi = 1e30;
		}
		assert_int_equal(lk_problem_add_row(q, &d, NULL), LK_OK);
	}
	double *bounded = lambda_room(p), *one = lambda_room(p), *plain1 = lambda_room(p);
	solve_from(q, "auto:budget=20,jw=1.3", start, bounded);
	assert_true(memcmp(ref, bounded, (size_t)n * sizeof(double)) != 0);
	solve_from(q, "auto:budget=1,jw=1.3", start, one);
	solve_from(q, "auto:budget=1", start, plain1);
	assert_true(one[0] == plain1[0]);
	assert_true(memcmp(one, plain1, (size_t)n * sizeof(double)) != 0);
	free(bounded);
	free(one);
	free(plain1);
	lk_problem_destroy(q);
	free(start);
	free(ref);
	free(got);
	lk_problem_destroy(p);
}

/* jw among contacts (piled ragdolls): the bilateral rows alone relaxed, 1 / A_ii given back; jw's range */
static void test_joint_rows_relaxed_among_contacts(void **state)
{
	(void)state;
	lk_problem *p = read_data("ode-ragdolls2-step60.lkp");
	const int m = lk_problem_row_count(p);
	double *start = lambda_copy(p);
	double *plain = lambda_room(p), *every = lambda_room(p), *joints = lambda_room(p), *again = lambda_room(p);
	solve_from(p, "auto:budget=10", start, plain);
	solve_from(p, "auto:budget=10,w=1.3", start, every);
	solve_from(p, "auto:budget=10,jw=1.3", start, joints);
	assert_true(memcmp(plain, joints, (size_t)m * sizeof(double)) != 0);
	assert_true(memcmp(every, joints, (size_t)m * sizeof(double)) != 0);
	solve_from(p, "auto:budget=10", start, again);
	assert_memory_equal(plain, again, (size_t)m * sizeof(double));
	solve_from(p, "auto:budget=10,jw=1.3", start, again);
	assert_memory_equal(joints, again, (size_t)m * sizeof(double));
	free(start);
	free(plain);
	free(every);
	free(joints);
	free(again);
	lk_problem_destroy(p);

	lk_solver_config c;
	char err[200];
	assert_int_not_equal(lk_config_parse("auto:jw=2", &c, err, sizeof err), LK_OK);
	assert_non_null(strstr(err, "jw"));
	assert_int_not_equal(lk_config_parse("auto:jw=-0.5", &c, err, sizeof err), LK_OK);
	assert_int_equal(lk_config_parse("auto:jw=1.3", &c, err, sizeof err), LK_OK);
	assert_double_equal(c.adapt.joint_w, 1.3, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checks_change_nothing), cmocka_unit_test(test_mean_budget),
		cmocka_unit_test(test_savings_spent),         cmocka_unit_test(test_stop_rule_units),
		cmocka_unit_test(test_face_warm_start),       cmocka_unit_test(test_settled_face_friction_whole),
		cmocka_unit_test(test_sliding_face_stays_damped), cmocka_unit_test(test_near_face_restored),
		cmocka_unit_test(test_stack_and_no_stack),    cmocka_unit_test(test_islands_share_the_account),
		cmocka_unit_test(test_joints_spend_the_budget), cmocka_unit_test(test_kept_coarse_level),
		cmocka_unit_test(test_shuffled_orders),       cmocka_unit_test(test_local_shuffle),
		cmocka_unit_test(test_joint_rows_relaxed), cmocka_unit_test(test_joint_rows_relaxed_among_contacts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

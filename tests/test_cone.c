/* Coulomb's cone (friction=cone): each contact's two friction rows bounded together by the disc of radius
 * mu lambda_n, against the engines' box. Hand-computed single contacts and a stack. */
#include "test_util.h"
#include "peer_siconos.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* One unit-mass body on the ground with one contact at its centre of mass (no lever arm): rows n = z, t1 = x,
 * t2 = y, so A = I, q = J u* = (vz, vx, vy) and the rows decouple apart from the friction bound. */
static lk_problem *one_contact(double vx, double vy, double vz, double mu)
{
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	lk_body_def b = lk_default_body_def();
	b.u[0] = vx;
	b.u[1] = vy;
	b.u[2] = vz;
	for (int k = 0; k < 3; ++k) {
		b.inv_mass[k] = 1.0;
		b.inv_inertia[4 * k] = 1.0;
	}
	assert_int_equal(lk_problem_add_body(p, &b, NULL), LK_OK);
	for (int r = 0; r < 3; ++r) {
		lk_row_def d = lk_default_row_def();
		d.body[0] = 0;
		d.body[1] = LK_STATIC;
		d.J[0][r == 0 ? 2 : r - 1] = 1.0;
		if (r == 0) {
			d.lo = 0;
			d.kind = LK_ROW_NORMAL;
		} else {
			d.findex = 0;
			d.mu = mu;
			d.kind = LK_ROW_FRICTION;
		}
		assert_int_equal(lk_problem_add_row(p, &d, NULL), LK_OK);
	}
	return p;
}

static void solve(lk_problem *p, const char *spec, lk_stats *st)
{
	lk_solver_config c = tu_spec(spec);
	assert_int_equal(lk_solve(p, &c, st, NULL), LK_OK);
}

/* Sliding diagonally, |v_t| = 1.118 > mu lambda_n = 0.5: the cone's impulse is mu lambda_n against the
 * velocity, (-0.5, -0.25) / 1.118 * 1.0; the box clamps each row at -0.5, a resultant of 0.707 at 45 degrees
 * to the velocity's direction: it steers the body. */
static void test_diagonal_slide(void **state)
{
	(void)state;
	lk_problem *p = one_contact(1.0, 0.5, -1.0, 0.5);
	lk_stats st;
	solve(p, "pgs:friction=cone,iters=50,warm=0,tol=1e-14", &st);
	const double *l = lk_problem_lambda(p);
	double s = 0.5 / sqrt(1.25);
	assert_double_equal(l[0], 1.0, 1e-12);
	assert_double_equal(l[1], -1.0 * s, 1e-12);
	assert_double_equal(l[2], -0.5 * s, 1e-12);
	assert_true(st.res_final < 1e-12);
	solve(p, "pgs:iters=50,warm=0", &st);
	assert_double_equal(l[0], 1.0, 1e-12);
	assert_double_equal(l[1], -0.5, 1e-12);
	assert_double_equal(l[2], -0.5, 1e-12);
	lk_problem_destroy(p);
}

/* Sticking, |v_t| = 0.2 < 0.5: both models stop the tangential motion, lambda_t = -v_t. */
static void test_stick(void **state)
{
	(void)state;
	lk_problem *p = one_contact(0.12, -0.16, -1.0, 0.5);
	lk_stats st;
	solve(p, "pgs:friction=cone,iters=50,warm=0", &st);
	const double *l = lk_problem_lambda(p);
	assert_double_equal(l[1], -0.12, 1e-12);
	assert_double_equal(l[2], 0.16, 1e-12);
	lk_problem_destroy(p);
}

/* A stack with friction solved in the cone: the cone residual falls below 1e-8, every contact's friction lies in
 * its disc, and the spec is refused where the cone has no sweep (another method, another order). */
static void test_stack_and_refusals(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 5, 0.5);
	lk_stats st;
	solve(p, "pgs:friction=cone,iters=20000,tol=1e-8,warm=0", &st);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	const double *l = lk_problem_lambda(p);
	int pairs = 0;
	for (int i = 0; i + 1 < lk_problem_row_count(p); ++i) {
		double mu, lo;
		int f0, f1;
		lk_problem_get_bounds(p, i, &lo, NULL, &mu, &f0, NULL);
		lk_problem_get_bounds(p, i + 1, NULL, NULL, NULL, &f1, NULL);
		if (f0 >= 0 && f1 == f0) {
			assert_true(hypot(l[i], l[i + 1]) <= mu * fabs(l[f0]) * (1 + 1e-9) + 1e-12);
			++pairs;
			++i;
		}
	}
	assert_true(pairs > 0);
	lk_problem_destroy(p);
	lk_solver_config c;
	char err[256];
	assert_int_equal(lk_config_parse("amgs:friction=cone", &c, err, sizeof err), LK_ERR_PARSE);
	assert_int_equal(lk_config_parse("pgs:friction=cone,order=random", &c, err, sizeof err), LK_ERR_PARSE);
	assert_int_equal(lk_config_parse("psor:friction=cone", &c, err, sizeof err), LK_OK);
	char buf[64];
	assert_int_equal(lk_config_format(&c, buf, sizeof buf), LK_OK);
	assert_string_equal(buf, "psor:friction=cone");
}

/* Against Siconos's fc3d_nsgs (Jean & Moreau's nonsmooth Gauss-Seidel on the Coulomb problem) on a frictional
 * sphere packing: both reach Siconos's error measure below 1e-8, and the reactions agree to 1e-6. */
static void test_against_siconos_nsgs(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("packing", 12, 0.3);
	const int n = lk_problem_row_count(p), nc = n / 3;
	assert_true(n % 3 == 0 && nc > 2);
	double *W = malloc(sizeof(double) * (size_t)n * n), *q = malloc(sizeof(double) * n);
	double *mu = malloc(sizeof(double) * nc), *r = malloc(sizeof(double) * n);
	assert_int_equal(lk_problem_assemble_dense(p, n, W, q), LK_OK);
	for (int c = 0; c < nc; ++c) {
		int f1, f2;
		double m;
		lk_problem_get_bounds(p, 3 * c + 1, NULL, NULL, &m, &f1, NULL);
		lk_problem_get_bounds(p, 3 * c + 2, NULL, NULL, NULL, &f2, NULL);
		assert_int_equal(f1, 3 * c);
		assert_int_equal(f2, 3 * c);
		mu[c] = m;
	}
	lk_stats st;
	solve(p, "pgs:friction=cone,iters=200000,tol=1e-12,warm=0", &st);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	const double *l = lk_problem_lambda(p);
	lk_peer_result pr;
	double ours = NAN;
	assert_int_equal(lk_peer_siconos_fc3d(nc, W, q, mu, r, 100000, 1e-12, &pr, l, &ours), LK_OK);
	print_message("%d contacts: Siconos nsgs info %d, %d iterations, error %.2e; lcpkit cone %d sweeps, RES %.2e, "
	              "Siconos's error of it %.2e\n",
	              nc, pr.info, pr.iterations, pr.error, st.iterations, st.res_final, ours);
	assert_int_equal(pr.info, 0);
	assert_true(pr.error < 1e-8);
	assert_true(ours < 1e-8);
	assert_true(tu_max_diff(l, r, n) < 1e-6);
	free(W);
	free(q);
	free(mu);
	free(r);
	lk_problem_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diagonal_slide),
		cmocka_unit_test(test_stick),
		cmocka_unit_test(test_stack_and_refusals),
		cmocka_unit_test(test_against_siconos_nsgs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

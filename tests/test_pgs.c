/* PGS and PSOR: agreement with Siconos's Lemke solution, complementarity of boxed and friction solutions,
 * stopping rules, determinism and the guards. */
#include "test_util.h"
#include "lcpkit/generate.h"
#include "peer_siconos.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double *dense_of(lk_problem *p, double **q)
{
	int n = lk_problem_row_count(p);
	double *A = malloc(sizeof(double) * (size_t)n * n);
	*q = malloc(sizeof(double) * (size_t)n);
	assert_true(A && *q);
	assert_int_equal(lk_problem_assemble_dense(p, n, A, *q), LK_OK);
	return A;
}

/* PGS agrees with an independent reference: Siconos numerics' Lemke on A = J M^-1 J^T, a few hundred rows. */
static void test_pgs_matches_siconos_lemke(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 3; ++seed) {
		int nb = 60, nr = 200 + 50 * (int)seed; /* fewer rows than the 6 nb degrees of freedom: A is SPD */
		lk_problem *p = tu_random_rows(nb, nr, seed, 0.0);
		double *q, *A = dense_of(p, &q);
		double *z = malloc(sizeof(double) * (size_t)nr);
		lk_peer_result res;
		assert_int_equal(lk_peer_siconos_lcp(LK_PEER_LEMKE, nr, A, q, z, 0, 0, &res), LK_OK);
		assert_int_equal(res.info, 0);

		lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
		cfg.max_iterations = 200000;
		cfg.tol_abs = 1e-11;
		cfg.check_every = 10;
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		double d = tu_max_diff(lk_problem_lambda(p), z, nr);
		if (!(d < 1e-8))
			fail_msg("seed %d: PGS differs from Lemke by %g after %d sweeps", (int)seed, d, st.iterations);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-9);
		free(A);
		free(q);
		free(z);
		lk_problem_destroy(p);
	}
}

/* PSOR converges to the same (unique) solution, in fewer sweeps than PGS on a stack. */
static void test_psor_same_solution(void **state)
{
	(void)state;
	lk_gen_params g = lk_default_gen_params(LK_GEN_SPHERESTACK);
	g.n = 20;
	lk_problem *a, *b;
	char err[200];
	assert_int_equal(lk_generate(&g, &a, err, sizeof err), LK_OK);
	assert_int_equal(lk_generate(&g, &b, err, sizeof err), LK_OK);
	lk_solver_config c1 = lk_default_config(LK_METHOD_PGS), c2 = lk_default_config(LK_METHOD_PSOR);
	c1.max_iterations = c2.max_iterations = 100000;
	c1.tol_abs = c2.tol_abs = 1e-12;
	lk_stats s1, s2;
	assert_int_equal(lk_solve(a, &c1, &s1, NULL), LK_OK);
	assert_int_equal(lk_solve(b, &c2, &s2, NULL), LK_OK);
	assert_int_equal(s1.stop_reason, LK_STOP_ABSOLUTE);
	assert_int_equal(s2.stop_reason, LK_STOP_ABSOLUTE);
	assert_true(tu_max_diff(lk_problem_lambda(a), lk_problem_lambda(b), lk_problem_row_count(a)) < 1e-10);
	assert_true(s2.iterations < s1.iterations);
	/* the stack carries its weight: the bottom contact holds n m g h */
	assert_double_equal(lk_problem_lambda(a)[0], g.n * 1.0 * g.gravity * g.h, 1e-9);
	lk_problem_destroy(a);
	lk_problem_destroy(b);
}

/* Boxed rows with friction bounds: the PGS fixed point satisfies the boxed complementarity conditions. */
static void test_friction_complementarity(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(40, 120, 11, 0.4);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.max_iterations = 100000;
	cfg.tol_abs = 1e-10;
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	tu_assert_complementarity(p, lk_problem_lambda(p), 1e-8);
	lk_problem_destroy(p);

	/* bilateral rows (lo = -inf, hi = inf) and finite boxes together */
	p = tu_random_rows(30, 60, 5, 0.0);
	lk_problem *q = lk_problem_create(LK_FORM_ROWS);
	for (int b = 0; b < 30; ++b)
		assert_int_equal(lk_problem_add_body(q, lk_problem_body(p, b), NULL), LK_OK);
	for (int i = 0; i < 60; ++i) {
		lk_row_def r;
		assert_int_equal(lk_problem_get_row(p, i, &r), LK_OK);
		r.lo = (i % 3 == 0) ? -INFINITY : -0.05 * (i % 7);
		r.hi = (i % 3 == 0) ? INFINITY : 0.05 * (1 + i % 5);
		r.kind = LK_ROW_JOINT;
		assert_int_equal(lk_problem_add_row(q, &r, NULL), LK_OK);
	}
	assert_int_equal(lk_solve(q, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	tu_assert_complementarity(q, lk_problem_lambda(q), 1e-8);
	lk_problem_destroy(p);
	lk_problem_destroy(q);
}

/* The generated box stack with friction: 200 sweeps bring RES well below its start. */
static void test_boxstack_converges(void **state)
{
	(void)state;
	lk_gen_params g = lk_default_gen_params(LK_GEN_BOXSTACK);
	lk_problem *p;
	char err[200];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	assert_int_equal(lk_problem_row_count(p), 10 * 4 * 3);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.max_iterations = 200;
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.iterations, 200);
	assert_int_equal(st.row_updates, 200 * 120);
	/* PGS converges slowly on stacks (the papers' motivation): about two orders of magnitude in 200 sweeps */
	assert_true(st.res_final < 1e-2 * st.res_initial);
	/* the ground carries the weight of all ten boxes: sum of the four bottom normals = 10 m g h */
	const double *l = lk_problem_lambda(p);
	double ground = l[0] + l[3] + l[6] + l[9];
	/* within 2%: after 200 sweeps the top of the stack has not yet pushed its full weight down */
	assert_double_equal(ground, 10 * g.gravity * g.h, 2e-2 * 10 * g.gravity * g.h);
	lk_problem_destroy(p);
}

/* Matrix form and row form of the same problem take the same PGS path. */
static void test_matrix_form_matches_row_form(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(20, 50, 3, 0.3);
	int n = 50;
	double *q, *A = dense_of(p, &q);
	double lo[50], hi[50], mu[50];
	int f[50];
	for (int i = 0; i < n; ++i)
		assert_int_equal(lk_problem_get_bounds(p, i, &lo[i], &hi[i], &mu[i], &f[i], NULL), LK_OK);
	lk_problem *m = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(m, n, A, q, lo, hi, mu, f), LK_OK);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.max_iterations = 30;
	assert_int_equal(lk_solve(p, &cfg, NULL, NULL), LK_OK);
	assert_int_equal(lk_solve(m, &cfg, NULL, NULL), LK_OK);
	assert_true(tu_max_diff(lk_problem_lambda(p), lk_problem_lambda(m), n) < 1e-11);
	free(A);
	free(q);
	lk_problem_destroy(p);
	lk_problem_destroy(m);
}

/* The statistics of a solve from lambda = 0 stopped by its tolerance, made without a product where the start's w
 * is q and the check's w is the result's: the merits of those iterates as lk_problem_metrics makes them, every one
 * of them at the end (Fischer's too, which the check did not sum), in both forms. */
static void test_statistics_of_start_and_result(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(20, 50, 3, 0.3);
	const int n = 50;
	double *q, *A = dense_of(p, &q);
	double lo[50], hi[50], mu[50], zero[50] = {0};
	int f[50];
	for (int i = 0; i < n; ++i)
		assert_int_equal(lk_problem_get_bounds(p, i, &lo[i], &hi[i], &mu[i], &f[i], NULL), LK_OK);
	lk_problem *m = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(m, n, A, q, lo, hi, mu, f), LK_OK);
	lk_problem *forms[2] = {p, m};
	/* stopped by RES and by Siconos's error: the result's statistics add to the stopping check's sums the merits
	 * it did not sum */
	for (int j = 0; j < 4; ++j) {
		const int k = j % 2;
		lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
		cfg.warm_start = 0;
		cfg.max_iterations = 100000;
		cfg.tol_abs = 1e-7;
		cfg.merit = j < 2 ? LK_MERIT_RES : LK_MERIT_FC3D;
		cfg.friction = j < 2 ? LK_FRICTION_BOX : LK_FRICTION_CONE; /* Siconos's error measures the cone */
		lk_stats st;
		lk_metrics m0, m1;
		assert_int_equal(lk_problem_metrics(forms[k], zero, &m0), LK_OK);
		assert_int_equal(lk_solve(forms[k], &cfg, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		assert_true(st.iterations > 1);
		assert_int_equal(lk_problem_metrics(forms[k], NULL, &m1), LK_OK);
		print_message("form %d: RES %.3e -> %.3e in %d sweeps, Fischer %.3e\n", k, st.res_initial, st.res_final,
		              st.iterations, st.fischer_final);
		assert_double_equal(st.res_initial, m0.res, 1e-12 * m0.res);
		assert_double_equal(st.theta_initial, m0.theta, 1e-12 * m0.theta);
		assert_true((j < 2 ? st.res_final : st.fc3d_final) < 1e-7);
		if (j < 2) /* lk_problem_metrics' RES is the box's, the statistics' under the cone the cone's */
			assert_double_equal(st.res_final, m1.res, 1e-9 * m0.res);
		assert_double_equal(st.fischer_final, m1.fischer, 1e-9 * m0.res * m0.res);
		assert_double_equal(st.modified_final, m1.modified, 1e-9 * m0.res * m0.res);
		assert_double_equal(st.fc3d_final, m1.fc3d, 1e-9 * m0.fc3d);
	}
	free(A);
	free(q);
	lk_problem_destroy(p);
	lk_problem_destroy(m);
}

static void test_determinism(void **state)
{
	(void)state;
	lk_problem *a = tu_random_rows(30, 90, 9, 0.5), *b = tu_random_rows(30, 90, 9, 0.5);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.order = LK_ORDER_RANDOM;
	cfg.seed = 1234;
	cfg.max_iterations = 57;
	assert_int_equal(lk_solve(a, &cfg, NULL, NULL), LK_OK);
	assert_int_equal(lk_solve(b, &cfg, NULL, NULL), LK_OK);
	assert_memory_equal(lk_problem_lambda(a), lk_problem_lambda(b), 90 * sizeof(double));
	/* a different seed takes another path */
	cfg.seed = 99;
	cfg.warm_start = 0;
	assert_int_equal(lk_solve(b, &cfg, NULL, NULL), LK_OK);
	assert_true(tu_max_diff(lk_problem_lambda(a), lk_problem_lambda(b), 90) > 0);
	lk_problem_destroy(a);
	lk_problem_destroy(b);
}

/* Each stopping rule of Erleben 2013 sec. 6 stops the solve and is reported. */
static void test_stopping_rules(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(40, 100, 21, 0.0);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.warm_start = 0;
	cfg.max_iterations = 100000;
	lk_stats st;
	lk_history_entry entries[200];
	lk_history hist = {entries, 200, 0};

	cfg.tol_abs = 1e-6;
	assert_int_equal(lk_solve(p, &cfg, &st, &hist), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	assert_true(st.res_final < 1e-6);
	int abs_iters = st.iterations;
	if (abs_iters < 199) {
		assert_int_equal(hist.count, abs_iters + 1);
		assert_double_equal(entries[hist.count - 1].res, st.res_final, 1e-15);
	}
	assert_int_equal(entries[0].iteration, 0);
	assert_double_equal(entries[0].res, st.res_initial, 1e-15);

	cfg.tol_abs = 0;
	/* PGS contracts RES by about 25 % a sweep here (by 0.754 from sweep 10 on), and in the rounding regime
	 * it cycles through a few values apart by 6-15 %: a rule of 30 % stops it within a few sweeps, long before
	 * the absolute tolerance (one of 5 % would depend on rounding) */
	cfg.tol_rel = 0.3;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_RELATIVE);
	assert_true(st.iterations < abs_iters / 2);

	cfg.tol_rel = 0;
	cfg.tol_stag = 1e-9;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_STAGNATION);

	cfg.tol_stag = 0;
	cfg.max_iterations = 3;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_ITERATIONS);
	assert_int_equal(st.iterations, 3);

	/* warm started from a converged solution, one sweep suffices */
	cfg.max_iterations = 100000;
	cfg.tol_abs = 1e-9;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	cfg.warm_start = 1;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.iterations, 1);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	lk_problem_destroy(p);

	/* a problem one sweep solves exactly: RES 0 after it and after every later sweep, a change of 0, which the
	 * relative rule counts as no progress (it ran to the iteration limit when it asked for a change strictly
	 * below tol_rel times 0) */
	lk_problem *one = lk_problem_create(LK_FORM_MATRIX);
	const int row_ptr[2] = {0, 1}, col[1] = {0};
	const double val[1] = {2.0}, q[1] = {-1.0}, lo[1] = {0.0}, hi[1] = {INFINITY};
	assert_int_equal(lk_problem_set_matrix(one, 1, row_ptr, col, val, q, lo, hi, NULL, NULL), LK_OK);
	lk_solver_config exact = lk_default_config(LK_METHOD_PGS);
	exact.warm_start = 0;
	exact.max_iterations = 1000;
	exact.tol_rel = 0.01;
	assert_int_equal(lk_solve(one, &exact, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_RELATIVE);
	assert_true(st.iterations <= 3);
	assert_true(st.res_final == 0.0);
	lk_problem_destroy(one);
}

/* A row with a zero diagonal cannot be solved by Gauss-Seidel: the solve stops and lambda is not touched. */
static void test_bad_diagonal_guard(void **state)
{
	(void)state;
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	double A[4] = {1, 0, 0, 0}, q[2] = {-1, -1};
	assert_int_equal(lk_problem_set_dense(p, 2, A, q, NULL, NULL, NULL, NULL), LK_OK);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_BAD_DIAGONAL);
	assert_true(lk_problem_lambda(p)[0] == 0.0 && lk_problem_lambda(p)[1] == 0.0);
	lk_problem_destroy(p);
}

/* The velocity change the solver hands back is M^-1 J^T lambda. */
static void test_delta_velocity(void **state)
{
	(void)state;
	lk_gen_params g = lk_default_gen_params(LK_GEN_SPHERESTACK);
	g.n = 3;
	lk_problem *p;
	char err[200];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.max_iterations = 1000;
	cfg.tol_abs = 1e-13;
	assert_int_equal(lk_solve(p, &cfg, NULL, NULL), LK_OK);
	/* resting stack: every sphere ends at rest, u+ = u* + du = 0 */
	for (int b = 0; b < 3; ++b) {
		double du[6];
		assert_int_equal(lk_problem_delta_velocity(p, b, du), LK_OK);
		assert_double_equal(lk_problem_body(p, b)->u[2] + du[2], 0.0, 1e-12);
	}
	double du[6];
	assert_int_equal(lk_problem_delta_velocity(p, 3, du), LK_ERR_OUT_OF_RANGE);
	lk_problem_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pgs_matches_siconos_lemke),
		cmocka_unit_test(test_psor_same_solution),
		cmocka_unit_test(test_friction_complementarity),
		cmocka_unit_test(test_boxstack_converges),
		cmocka_unit_test(test_matrix_form_matches_row_form),
		cmocka_unit_test(test_statistics_of_start_and_result),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_stopping_rules),
		cmocka_unit_test(test_bad_diagonal_guard),
		cmocka_unit_test(test_delta_velocity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Minimum-map Newton and Fischer-Newton (Erleben 2013 sec. 5.4-5.5): convergence on SPD and fluid LCPs,
 * agreement with Siconos's Lemke solution, the monotone line search, singular Newton systems, the contact
 * LCP of eq. (27) with its zero diagonal, boxed and friction rows, the Fischer strategies, PGS warm start and
 * the two problem forms. */
#include "test_util.h"
#include "lcpkit/generate.h"
#include "peer_siconos.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const lk_method methods[2] = {LK_METHOD_NEWTON_MINMAP, LK_METHOD_NEWTON_FISCHER};

static double *dense_of(lk_problem *p, double **q)
{
	int n = lk_problem_row_count(p);
	double *A = malloc(sizeof(double) * (size_t)n * n);
	*q = malloc(sizeof(double) * (size_t)n);
	assert_true(A && *q);
	assert_int_equal(lk_problem_assemble_dense(p, n, A, *q), LK_OK);
	return A;
}

static void zero_lambda(lk_problem *p)
{
	int n = lk_problem_row_count(p);
	double *z = calloc((size_t)n + 1, sizeof(double));
	assert_non_null(z);
	assert_int_equal(lk_problem_set_lambda(p, z, n), LK_OK);
	free(z);
}

static int all_finite(const double *v, int n)
{
	for (int i = 0; i < n; ++i)
		if (!isfinite(v[i]))
			return 0;
	return 1;
}

/* Acceptance: RES < 1e-10 on a random SPD LCP of 500 variables in fewer than 30
 * iterations, with the default parameters. */
static void test_spd500_fast(void **state)
{
	(void)state;
	lk_problem *p = tu_random_spd_matrix(500, 11, 1.0);
	for (int m = 0; m < 2; ++m) {
		zero_lambda(p);
		lk_solver_config cfg = lk_default_config(methods[m]);
		cfg.max_iterations = 29;
		cfg.tol_abs = 1e-10; /* on RES, the default merit */
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		if (!(st.res_final < 1e-10) || st.iterations >= 30)
			fail_msg("%s: RES %g after %d iterations (%s)", lk_method_name(methods[m]), st.res_final, st.iterations,
			         lk_stop_reason_name(st.stop_reason));
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		assert_true(st.inner_iterations > 0);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-9);
	}
	lk_problem_destroy(p);
}

/* Agreement with an independent pivoting reference on problems with a unique solution: a random SPD
 * matrix, a row-form problem (A = J M^-1 J^T), and a non-symmetric positive definite matrix (a P-matrix). */
static void test_matches_siconos_lemke(void **state)
{
	(void)state;
	for (int kind = 0; kind < 3; ++kind) {
		lk_problem *p = NULL;
		if (kind == 0) {
			p = tu_random_spd_matrix(120, 5, 0.5);
		} else if (kind == 1) {
			p = tu_random_rows(50, 180, 9, 0.0);
		} else {
			int n = 90;
			lk__rng s = {77};
			double *A = malloc(sizeof(double) * n * n), *q = malloc(sizeof(double) * n);
			assert_true(A && q);
			for (int i = 0; i < n; ++i) {
				q[i] = 3.0 * tu_rng_sym(&s);
				for (int j = 0; j <= i; ++j) {
					double sym = 0.3 * tu_rng_sym(&s), skew = 0.5 * tu_rng_sym(&s);
					A[i * n + j] = sym + skew;
					A[j * n + i] = sym - skew;
				}
				A[i * n + i] = 0.3 * n; /* symmetric part diagonally dominant: positive definite */
			}
			p = lk_problem_create(LK_FORM_MATRIX);
			assert_int_equal(lk_problem_set_dense(p, n, A, q, NULL, NULL, NULL, NULL), LK_OK);
			free(A);
			free(q);
		}
		int n = lk_problem_row_count(p);
		double *q, *A = dense_of(p, &q);
		double *z = malloc(sizeof(double) * (size_t)n);
		lk_peer_result res;
		assert_int_equal(lk_peer_siconos_lcp(LK_PEER_LEMKE, n, A, q, z, 0, 0, &res), LK_OK);
		assert_int_equal(res.info, 0);
		for (int m = 0; m < 2; ++m) {
			zero_lambda(p);
			lk_solver_config cfg = lk_default_config(methods[m]);
			cfg.tol_abs = 1e-12;
			lk_stats st;
			assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
			double d = tu_max_diff(lk_problem_lambda(p), z, n);
			if (!(d < 1e-8))
				fail_msg("kind %d, %s: differs from Lemke by %g (RES %g, %s after %d)", kind,
				         lk_method_name(methods[m]), d, st.res_final, lk_stop_reason_name(st.stop_reason),
				         st.iterations);
		}
		free(A);
		free(q);
		free(z);
		lk_problem_destroy(p);
	}
}

/* The projected line search never accepts an increase of the merit: the method's own merit, recorded in
 * the history every iteration, never goes up (theta for the minimum map, the Fischer merit for Fischer).
 * Friction rows included, since the line search measures the true merit with the bounds of each trial. */
static void test_line_search_monotone(void **state)
{
	(void)state;
	enum { CAP = 200 };
	lk_history_entry *e = malloc(sizeof(lk_history_entry) * CAP);
	assert_non_null(e);
	for (int kind = 0; kind < 4; ++kind) {
		lk_problem *p = NULL;
		char err[200];
		if (kind == 0) {
			p = tu_random_spd_matrix(200, 3, 0.1);
		} else if (kind == 1) {
			lk_gen_params g = lk_default_gen_params(LK_GEN_FLUID);
			g.n = 400;
			assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
		} else if (kind == 2) {
			p = tu_random_rows(40, 150, 21, 0.0);
		} else {
			lk_gen_params g = lk_default_gen_params(LK_GEN_PACKING);
			g.n = 40;
			assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
		}
		for (int m = 0; m < 2; ++m) {
			zero_lambda(p);
			lk_solver_config cfg = lk_default_config(methods[m]);
			cfg.max_iterations = 60;
			lk_history h = {e, CAP, 0};
			lk_stats st;
			assert_int_equal(lk_solve(p, &cfg, &st, &h), LK_OK);
			assert_true(h.count >= 2);
			assert_int_equal(h.count, st.iterations + 1);
			for (int k = 1; k < h.count; ++k) {
				double prev = m == 0 ? e[k - 1].theta : e[k - 1].fischer;
				double cur = m == 0 ? e[k].theta : e[k].fischer;
				if (!(cur <= prev))
					fail_msg("kind %d, %s: merit rose from %.17g to %.17g at iteration %d", kind,
					         lk_method_name(methods[m]), prev, cur, e[k].iteration);
			}
			assert_true(all_finite(lk_problem_lambda(p), lk_problem_row_count(p)));
		}
		lk_problem_destroy(p);
	}
	free(e);
}

/* Singular Newton systems never produce NaN: an LCP without a solution whose reduced matrix is zero, and
 * rank-deficient PSD problems, under every Fischer strategy and both Krylov solvers. */
static void test_singular_no_nan(void **state)
{
	(void)state;
	/* w_0 = -1 whatever lambda is: no solution, A_AA = 0 at every iterate. The minimum map stops where it
	 * is (its Jacobian row is zero); Fischer's phi(lambda_0, -1) falls towards 1 as lambda_0 grows, so
	 * Fischer-Newton runs lambda_0 out to ~1.7e9 and the divergence rule hands back the start. */
	const double A2[4] = {0, 0, 0, 1}, q2[2] = {-1, 0.5};
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(p, 2, A2, q2, NULL, NULL, NULL, NULL), LK_OK);
	for (int m = 0; m < 2; ++m) {
		zero_lambda(p);
		lk_solver_config cfg = lk_default_config(methods[m]);
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		assert_true(all_finite(lk_problem_lambda(p), 2));
		assert_true(isfinite(st.res_final));
		if (m == 0)
			assert_true(st.stop_reason == LK_STOP_LOCAL_MINIMUM || st.stop_reason == LK_STOP_NON_DESCENT);
		else
			assert_int_equal(st.stop_reason, LK_STOP_DIVERGED);
		assert_double_equal(lk_problem_lambda(p)[0], 0.0, 0.0);
		/* row 1 is solvable and solved: lambda_1 = 0 with w_1 = 0.5 */
		assert_double_equal(lk_problem_lambda(p)[1], 0.0, 1e-12);
		assert_double_equal(st.res_final, 1.0, 1e-12);
	}
	lk_problem_destroy(p);

	/* A = B B^T with B of rank n/4: most eigenvalues zero */
	int n = 80, k = 20;
	lk__rng s = {5};
	double *B = malloc(sizeof(double) * n * k), *A = malloc(sizeof(double) * n * n);
	double *q = malloc(sizeof(double) * n);
	assert_true(B && A && q);
	for (int i = 0; i < n * k; ++i)
		B[i] = tu_rng_sym(&s);
	for (int i = 0; i < n; ++i) {
		q[i] = tu_rng_sym(&s);
		for (int j = 0; j < n; ++j) {
			double a = 0;
			for (int l = 0; l < k; ++l)
				a += B[i * k + l] * B[j * k + l];
			A[i * n + j] = a;
		}
	}
	p = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(p, n, A, q, NULL, NULL, NULL, NULL), LK_OK);
	for (int variant = 0; variant < 6; ++variant) {
		lk_method meth = variant < 2 ? LK_METHOD_NEWTON_MINMAP : LK_METHOD_NEWTON_FISCHER;
		lk_solver_config cfg = lk_default_config(meth);
		if (variant == 1)
			cfg.newton.krylov = LK_KRYLOV_CG;
		if (variant >= 2)
			cfg.newton.strategy = (lk_fischer_strategy)(variant - 2);
		zero_lambda(p);
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		assert_true(all_finite(lk_problem_lambda(p), n));
		assert_true(isfinite(st.res_final));
		assert_true(st.stop_reason != LK_STOP_NONFINITE && st.stop_reason != LK_STOP_NONE);
		assert_true(st.res_final <= st.res_initial);
	}
	free(A);
	free(B);
	free(q);
	lk_problem_destroy(p);
}

/* The contact LCP of Erleben 2013 eq. (27), one contact with a four-direction friction pyramid: x =
 * (lambda_n, lambda_t (4), beta), A = [B_nn B_nt 0; B_tn B_tt e; mu -e^T 0], non-symmetric with A_beta,beta =
 * 0, which rules out PGS (sec. 4.1) and not the Newton methods (Table 3: no assumption on A). A unit mass
 * at velocity (1, 0, -1) against the plane z = 0, mu = 0.5, t_k = (cos, sin)(k pi / 2): B = J J^T, b = J v.
 * By hand: lambda_n = 1 stops the approach (B_nt = 0); the friction that opposes the sliding, t_2 = -x, is
 * at the cone, lambda_t2 = mu lambda_n = 0.5, which leaves v_x = 0.5, so beta = 0.5 (beta + t_2 . v = 0)
 * and the other three pairs are strict: beta + t_k . v = 1, 0.5, 0.5. */
static void test_contact_lcp_zero_diagonal(void **state)
{
	(void)state;
	enum { N = 6 };
	const double mu = 0.5, v[3] = {1, 0, -1};
	const double dir[5][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}, {-1, 0, 0}, {0, -1, 0}};
	double A[N * N] = {0}, q[N] = {0};
	for (int i = 0; i < 5; ++i) {
		for (int j = 0; j < 5; ++j)
			A[i * N + j] = dir[i][0] * dir[j][0] + dir[i][1] * dir[j][1] + dir[i][2] * dir[j][2];
		q[i] = dir[i][0] * v[0] + dir[i][1] * v[1] + dir[i][2] * v[2];
	}
	for (int k = 1; k < 5; ++k) {
		A[k * N + 5] = 1;
		A[5 * N + k] = -1;
	}
	A[5 * N + 0] = mu;
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(p, N, A, q, NULL, NULL, NULL, NULL), LK_OK);
	double d[N];
	assert_int_equal(lk_problem_diagonal(p, d), LK_OK);
	assert_double_equal(d[5], 0.0, 0.0);
	const double expect[N] = {1, 0, 0, 0.5, 0, 0.5};
	/* (CG, the minimum map's other Krylov solver, assumes a symmetric A and is not asked here) */
	for (int m = 0; m < 2; ++m) {
		zero_lambda(p);
		lk_solver_config cfg = lk_default_config(methods[m]);
		cfg.tol_abs = 1e-12;
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		if (st.stop_reason != LK_STOP_ABSOLUTE && st.stop_reason != LK_STOP_STAGNATION)
			fail_msg("%s: stopped by %s, RES %g", lk_method_name(methods[m]), lk_stop_reason_name(st.stop_reason),
			         st.res_final);
		assert_true(st.res_final < 1e-12);
		for (int i = 0; i < N; ++i)
			assert_double_equal(lk_problem_lambda(p)[i], expect[i], 1e-12);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-12);
	}
	/* the Gauss-Seidel update divides by A_ii: PGS refuses the same problem */
	zero_lambda(p);
	lk_solver_config pc = lk_default_config(LK_METHOD_PGS);
	lk_stats st;
	assert_int_equal(lk_solve(p, &pc, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_BAD_DIAGONAL);
	lk_problem_destroy(p);
}

/* Each Fischer strategy (Erleben 2013 sec. 5.5) converges on a fluid LCP, and the random one is
 * reproducible from its seed. */
static void test_fischer_strategies_fluid(void **state)
{
	(void)state;
	lk_gen_params g = lk_default_gen_params(LK_GEN_FLUID);
	g.n = 900;
	g.seed = 4;
	lk_problem *p;
	char err[200];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	int n = lk_problem_row_count(p);
	double *first = malloc(sizeof(double) * n);
	assert_non_null(first);
	for (int s = 0; s <= LK_FISCHER_APPROXIMATION; ++s) {
		lk_solver_config cfg = lk_default_config(LK_METHOD_NEWTON_FISCHER);
		cfg.newton.strategy = (lk_fischer_strategy)s;
		cfg.tol_abs = 1e-9;
		zero_lambda(p);
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		if (!(st.res_final < 1e-9) || st.iterations > 15)
			fail_msg("strategy %d: RES %g after %d (%s)", s, st.res_final, st.iterations,
			         lk_stop_reason_name(st.stop_reason));
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-8);
		if (s == LK_FISCHER_RANDOM) {
			memcpy(first, lk_problem_lambda(p), sizeof(double) * n);
			zero_lambda(p);
			assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
			assert_memory_equal(first, lk_problem_lambda(p), sizeof(double) * n);
		}
	}
	free(first);
	lk_problem_destroy(p);
}

/* The fluid LCP: both methods converge in a handful of iterations (Erleben 2013 Table 2b: 4-5), with
 * GMRES and with CG on the minimum map's SPD reduced system. */
static void test_fluid_quadratic(void **state)
{
	(void)state;
	lk_gen_params g = lk_default_gen_params(LK_GEN_FLUID);
	lk_problem *p;
	char err[200];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	for (int v = 0; v < 3; ++v) {
		lk_solver_config cfg = lk_default_config(v == 2 ? LK_METHOD_NEWTON_FISCHER : LK_METHOD_NEWTON_MINMAP);
		if (v == 1)
			cfg.newton.krylov = LK_KRYLOV_CG;
		cfg.tol_abs = 1e-10;
		zero_lambda(p);
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		assert_true(st.iterations <= 10);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-9);
	}
	lk_problem_destroy(p);
}

/* Boxed rows with fixed bounds (finite on both sides, one side, or none): the Newton solutions satisfy the
 * boxed complementarity conditions and match converged PGS (the solution is unique for SPD A). */
static void test_boxed_fixed_bounds(void **state)
{
	(void)state;
	int n = 150;
	lk_problem *src = tu_random_spd_matrix(n, 8, 2.0);
	int nn;
	const int *rp, *col;
	const double *val, *q;
	assert_int_equal(lk_problem_get_matrix(src, &nn, &rp, &col, &val, &q), LK_OK);
	double *lo = malloc(sizeof(double) * n), *hi = malloc(sizeof(double) * n);
	assert_true(lo && hi);
	lk__rng s = {3};
	for (int i = 0; i < n; ++i) {
		double a = fabs(tu_rng_sym(&s)) * 30, b = fabs(tu_rng_sym(&s)) * 30;
		switch (i % 4) {
		case 0: lo[i] = -a; hi[i] = b; break;
		case 1: lo[i] = -a; hi[i] = INFINITY; break;
		case 2: lo[i] = -INFINITY; hi[i] = b; break;
		default: lo[i] = -INFINITY; hi[i] = INFINITY; break;
		}
	}
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_matrix(p, n, rp, col, val, q, lo, hi, NULL, NULL), LK_OK);
	lk_solver_config pc = lk_default_config(LK_METHOD_PGS);
	pc.max_iterations = 200000;
	pc.tol_abs = 1e-10; /* RES has a rounding floor near 1e-12 on this scale (|q| up to n) */
	pc.check_every = 20;
	lk_stats st;
	assert_int_equal(lk_solve(p, &pc, &st, NULL), LK_OK);
	if (st.stop_reason != LK_STOP_ABSOLUTE)
		fail_msg("PGS reference: RES %g after %d (%s)", st.res_final, st.iterations, lk_stop_reason_name(st.stop_reason));
	double *ref = malloc(sizeof(double) * n);
	assert_non_null(ref);
	memcpy(ref, lk_problem_lambda(p), sizeof(double) * n);
	int at_bound = 0, inside = 0;
	for (int i = 0; i < n; ++i) {
		if (ref[i] == lo[i] || ref[i] == hi[i])
			++at_bound;
		else
			++inside;
	}
	assert_true(at_bound > 10 && inside > 10); /* the bounds matter */
	for (int m = 0; m < 2; ++m) {
		zero_lambda(p);
		lk_solver_config cfg = lk_default_config(methods[m]);
		cfg.tol_abs = 1e-10;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-9);
		assert_true(tu_max_diff(lk_problem_lambda(p), ref, n) < 1e-9);
	}
	free(lo);
	free(hi);
	free(ref);
	lk_problem_destroy(p);
	lk_problem_destroy(src);
}

/* Friction rows (bounds -/+ mu lambda_normal) on box stacks: both methods solve them to RES < 1e-9, and the
 * result satisfies the boxed conditions with the bounds of the solution. */
static void test_friction_boxstack(void **state)
{
	(void)state;
	for (int kind = 0; kind < 2; ++kind) {
		lk_gen_params g = lk_default_gen_params(kind == 0 ? LK_GEN_BOXSTACK : LK_GEN_HEAVY_ON_LIGHT);
		g.n = kind == 0 ? 6 : 4;
		lk_problem *p;
		char err[200];
		assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
		for (int m = 0; m < 2; ++m) {
			zero_lambda(p);
			lk_solver_config cfg = lk_default_config(methods[m]);
			cfg.tol_abs = 1e-9;
			cfg.max_iterations = 100;
			lk_stats st;
			assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
			if (st.stop_reason != LK_STOP_ABSOLUTE)
				fail_msg("%s on %s: RES %g after %d (%s)", lk_method_name(methods[m]), lk_gen_kind_name(g.kind),
				         st.res_final, st.iterations, lk_stop_reason_name(st.stop_reason));
			tu_assert_complementarity(p, lk_problem_lambda(p), 1e-7);
		}
		lk_problem_destroy(p);
	}
}

/* A few PGS sweeps before Newton (Erleben 2013 sec. 6, Fig. 6) save Newton iterations on the fluid LCP. */
static void test_pgs_warm_start(void **state)
{
	(void)state;
	lk_gen_params g = lk_default_gen_params(LK_GEN_FLUID);
	g.seed = 9;
	lk_problem *p;
	char err[200];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	for (int m = 0; m < 2; ++m) {
		int its[2];
		for (int w = 0; w < 2; ++w) {
			zero_lambda(p);
			lk_solver_config cfg = lk_default_config(methods[m]);
			cfg.tol_abs = 1e-8;
			cfg.newton.pgs_warm = w ? 10 : 0;
			lk_stats st;
			assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
			assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
			assert_true(st.row_updates >= (int64_t)(w ? 10 : 0) * lk_problem_row_count(p));
			its[w] = st.iterations;
		}
		if (!(its[1] < its[0]))
			fail_msg("%s: %d iterations warm, %d cold", lk_method_name(methods[m]), its[1], its[0]);
	}
	lk_problem_destroy(p);
}

/* The row form (matrix-free through du) and the matrix form (CSR) of the same problem give the same
 * Newton iterates up to rounding, and the same input gives bitwise the same result. */
static void test_forms_agree_and_deterministic(void **state)
{
	(void)state;
	lk_problem *rows = tu_random_rows(30, 100, 17, 0.0);
	int n = lk_problem_row_count(rows);
	double *q, *A = dense_of(rows, &q);
	lk_problem *mat = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(mat, n, A, q, NULL, NULL, NULL, NULL), LK_OK);
	double *keep = malloc(sizeof(double) * n);
	assert_non_null(keep);
	for (int m = 0; m < 2; ++m) {
		lk_solver_config cfg = lk_default_config(methods[m]);
		cfg.tol_abs = 1e-12;
		lk_stats s1, s2;
		zero_lambda(rows);
		zero_lambda(mat);
		assert_int_equal(lk_solve(rows, &cfg, &s1, NULL), LK_OK);
		assert_int_equal(lk_solve(mat, &cfg, &s2, NULL), LK_OK);
		assert_true(tu_max_diff(lk_problem_lambda(rows), lk_problem_lambda(mat), n) < 1e-9);
		memcpy(keep, lk_problem_lambda(rows), sizeof(double) * n);
		zero_lambda(rows);
		assert_int_equal(lk_solve(rows, &cfg, &s2, NULL), LK_OK);
		assert_memory_equal(keep, lk_problem_lambda(rows), sizeof(double) * n);
	}
	free(keep);
	free(A);
	free(q);
	lk_problem_destroy(rows);
	lk_problem_destroy(mat);
}

/* A warm start that already meets the tolerance costs no iteration; one that does not is improved from
 * where it is (fewer iterations than from zero). */
static void test_warm_start_solved(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(30, 90, 41, 0.0);
	for (int m = 0; m < 2; ++m) {
		lk_solver_config cfg = lk_default_config(methods[m]);
		cfg.tol_abs = 1e-9;
		lk_stats cold, warm;
		zero_lambda(p);
		assert_int_equal(lk_solve(p, &cfg, &cold, NULL), LK_OK);
		assert_int_equal(cold.stop_reason, LK_STOP_ABSOLUTE);
		assert_true(cold.iterations > 0);
		assert_int_equal(lk_solve(p, &cfg, &warm, NULL), LK_OK);
		assert_int_equal(warm.stop_reason, LK_STOP_ABSOLUTE);
		assert_int_equal(warm.iterations, 0);
		cfg.tol_abs = 1e-12;
		assert_int_equal(lk_solve(p, &cfg, &warm, NULL), LK_OK);
		assert_true(warm.res_final < 1e-12);
		assert_true(warm.iterations < cold.iterations);
	}
	lk_problem_destroy(p);
}

/* The configuration keys of both methods parse, validate and print back. */
static void test_config_keys(void **state)
{
	(void)state;
	lk_solver_config c;
	char err[200], buf[400];
	assert_int_equal(lk_config_parse("newton-fischer:strategy=approximation,restart=20,forcing=0.5,krylov_max=40,"
	                                 "ls_alpha=0.001,ls_beta=0.3,tau_min=1e-9,pgs_warm=5,perturbation=1e-6,"
	                                 "fd_h=1e-6",
	                                 &c, err, sizeof err),
	                 LK_OK);
	assert_int_equal(c.method, LK_METHOD_NEWTON_FISCHER);
	assert_int_equal(c.newton.strategy, LK_FISCHER_APPROXIMATION);
	assert_int_equal(c.newton.gmres_restart, 20);
	assert_int_equal(c.newton.krylov_max, 40);
	assert_int_equal(c.newton.pgs_warm, 5);
	assert_double_equal(c.newton.forcing, 0.5, 0);
	assert_double_equal(c.newton.ls_beta, 0.3, 0);
	assert_int_equal(lk_config_format(&c, buf, sizeof buf), LK_OK);
	lk_solver_config d;
	assert_int_equal(lk_config_parse(buf, &d, err, sizeof err), LK_OK);
	assert_memory_equal(&c.newton, &d.newton, sizeof c.newton);
	assert_int_equal(lk_config_parse("newton-minmap:krylov=cg", &c, err, sizeof err), LK_OK);
	assert_int_equal(c.newton.krylov, LK_KRYLOV_CG);
	assert_int_not_equal(lk_config_parse("newton-minmap:forcing=1.5", &c, err, sizeof err), LK_OK);
	assert_int_not_equal(lk_config_parse("newton-fischer:strategy=guess", &c, err, sizeof err), LK_OK);
}

/* The automatic PGS warm-up (a quarter of the budget, at most 25 sweeps) stops where PGS meets an absolute
 * tolerance: under a large budget the method then ends there, solved, instead of sweeping a quarter of the
 * budget first (it did 2,500 sweeps here); and it never sweeps more than 25 times before Newton starts. */
static void test_pgs_warm_up_honours_tol(void **state)
{
	(void)state;
	for (int k = 0; k < 2; ++k) {
		lk_problem *p = tu_random_spd_matrix(60, 11, 20.0);
		lk_solver_config cfg = lk_default_config(methods[k]);
		cfg.budget = 10000;
		cfg.max_iterations = INT32_MAX;
		cfg.tol_abs = 1e-8;
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		print_message("%s, budget 10000, tol 1e-8: %d iterations, work %.1f, RES %.3g\n", lk_method_name(methods[k]),
		              st.iterations, st.work, st.res_final);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		assert_true(st.res_final < 1e-8);
		assert_int_equal(st.iterations, 0); /* PGS got there first */
		assert_true(st.work < 25.0);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-7);
		lk_problem_destroy(p);
		/* without a tolerance, on a problem PGS solves slowly: 25 sweeps and Newton's one iteration */
		p = tu_random_spd_matrix(60, 11, 0.01);
		cfg.tol_abs = 0;
		cfg.max_iterations = 1;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		print_message("%s, budget 10000, one iteration: %d iterations, work %.1f\n", lk_method_name(methods[k]),
		              st.iterations, st.work);
		assert_int_equal(st.iterations, 1);
		assert_true(st.work > 25.0 && st.work < 100.0);
		lk_problem_destroy(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spd500_fast),
		cmocka_unit_test(test_matches_siconos_lemke),
		cmocka_unit_test(test_line_search_monotone),
		cmocka_unit_test(test_singular_no_nan),
		cmocka_unit_test(test_contact_lcp_zero_diagonal),
		cmocka_unit_test(test_fischer_strategies_fluid),
		cmocka_unit_test(test_fluid_quadratic),
		cmocka_unit_test(test_boxed_fixed_bounds),
		cmocka_unit_test(test_friction_boxstack),
		cmocka_unit_test(test_pgs_warm_start),
		cmocka_unit_test(test_pgs_warm_up_honours_tol),
		cmocka_unit_test(test_forms_agree_and_deterministic),
		cmocka_unit_test(test_warm_start_solved),
		cmocka_unit_test(test_config_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

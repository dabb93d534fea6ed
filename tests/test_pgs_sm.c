/* PGS-SM (Silcowitz, Niebe & Erleben): the exact face solve after the PGS phase, the best-iterate fall-back,
 * singular and indefinite reduced systems, agreement with Siconos's Lemke, friction complementarity, and the
 * options of sec. 5.1. */
#include "test_util.h"
#include "internal.h" /* LK_SM_CG_CAP, LK_WORK_CG_ROW */
#include "lcpkit/generate.h"
#include "peer_siconos.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static lk_problem *generate(lk_gen_kind kind, int n, double mu)
{
	lk_gen_params g = lk_default_gen_params(kind);
	g.n = n;
	g.mu = mu;
	lk_problem *p = NULL;
	char err[200];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	return p;
}

static lk_solver_config sm_config(void)
{
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS_SM);
	cfg.tol_abs = 0;
	cfg.tol_rel = 0;
	cfg.tol_stag = 0;
	cfg.merit = LK_MERIT_RES;
	return cfg;
}

static double merit_of(lk_problem *p, lk_merit merit)
{
	lk_metrics m;
	assert_int_equal(lk_problem_metrics(p, NULL, &m), LK_OK);
	return merit == LK_MERIT_FISCHER ? m.fischer : m.res;
}

static void assert_finite(lk_problem *p)
{
	const double *l = lk_problem_lambda(p);
	for (int i = 0; i < lk_problem_row_count(p); ++i)
		if (!isfinite(l[i]))
			fail_msg("lambda[%d] = %g", i, l[i]);
}

/* A frictionless sphere stack: every contact carries weight, so the active set (all rows strictly inside
 * [0, inf)) is known. After the PGS phase one subspace step solves A_AA lambda_A = -b_A exactly, while the
 * same PGS sweeps alone are far from it. */
static void test_known_active_set_one_step(void **state)
{
	(void)state;
	int n = 20;
	lk_problem *p = generate(LK_GEN_SPHERESTACK, n, 0.0);
	lk_problem *q = generate(LK_GEN_SPHERESTACK, n, 0.0);
	lk_solver_config cfg = sm_config();
	cfg.pgs_sm.k_pgs = 25;
	cfg.pgs_sm.k_sm = 1;
	cfg.max_iterations = 1;
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.subspace_steps, 1);
	assert_int_equal(st.iterations, 1);
	assert_true(st.inner_iterations >= 1 && st.inner_iterations <= n);
	if (!(st.res_final < 1e-10))
		fail_msg("RES after one subspace step: %g", st.res_final);
	assert_int_equal(st.used_best_iterate, 0);
	/* the bottom contact carries the whole stack, n m g h (m = 1, g = 9.80665, h = 1/60) */
	assert_double_equal(lk_problem_lambda(p)[0], n * 9.80665 / 60.0, 1e-10);
	for (int i = 0; i < n; ++i)
		assert_double_equal(lk_problem_lambda(p)[i], (n - i) * 9.80665 / 60.0, 1e-10);
	/* work: 25 sweeps, then the right-hand side and the CG products (one per iteration: CG starts from 0,
	 * where r = b needs none), |A| = n rows each */
	assert_int_equal(st.row_updates, 25 * n + (int64_t)n * (st.inner_iterations + 1));

	lk_solver_config pg = lk_default_config(LK_METHOD_PGS);
	pg.max_iterations = 25;
	lk_stats sp;
	assert_int_equal(lk_solve(q, &pg, &sp, NULL), LK_OK);
	assert_true(sp.res_final > 1e-4);
	lk_problem_destroy(p);
	lk_problem_destroy(q);
}

/* Two nearly dependent rows, warm started so that the PGS phase leaves both strictly positive: the
 * lambda-based active set (eq. 19) is wrong, and the face solve throws lambda far off. By hand:
 * A = [1 .99; .99 1], b = (-1, -.5), start (0, 1); one sweep gives lambda = (.01, .4901); the face solve
 * gives (25.3769, -24.6231), projected (25.3769, 0); RES there is 24.4 against 0.504801 after the sweep and
 * 0.5001 at the start. */
static void test_best_iterate_fallback(void **state)
{
	(void)state;
	const double A[4] = {1, 0.99, 0.99, 1}, b[2] = {-1, -0.5}, start[2] = {0, 1};
	double expect_res_pgs = 0;
	{
		lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
		assert_int_equal(lk_problem_set_dense(p, 2, A, b, NULL, NULL, NULL, NULL), LK_OK);
		assert_int_equal(lk_problem_set_lambda(p, start, 2), LK_OK);
		lk_solver_config pg = lk_default_config(LK_METHOD_PGS);
		pg.max_iterations = 1;
		assert_int_equal(lk_solve(p, &pg, NULL, NULL), LK_OK);
		assert_double_equal(lk_problem_lambda(p)[0], 0.01, 1e-14);
		assert_double_equal(lk_problem_lambda(p)[1], 0.4901, 1e-14);
		expect_res_pgs = merit_of(p, LK_MERIT_RES);
		assert_double_equal(expect_res_pgs, 0.504801, 1e-12);
		lk_problem_destroy(p);
	}
	for (int best = 0; best <= 1; ++best) {
		lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
		assert_int_equal(lk_problem_set_dense(p, 2, A, b, NULL, NULL, NULL, NULL), LK_OK);
		assert_int_equal(lk_problem_set_lambda(p, start, 2), LK_OK);
		lk_solver_config cfg = sm_config();
		cfg.pgs_sm.k_pgs = 1;
		cfg.pgs_sm.k_sm = 1;
		cfg.pgs_sm.best_iterate = best;
		cfg.max_iterations = 1;
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		assert_int_equal(st.subspace_steps, 1);
		if (best) {
			/* the best iterate seen is the start here: RES(0, 1) = |(-0.01, 0.5)| < 0.504801 */
			assert_int_equal(st.used_best_iterate, 1);
			assert_true(st.res_final <= expect_res_pgs);
			assert_double_equal(st.res_final, sqrt(0.01 * 0.01 + 0.25), 1e-15);
			assert_double_equal(lk_problem_lambda(p)[0], 0.0, 0.0);
			assert_double_equal(lk_problem_lambda(p)[1], 1.0, 0.0);
		} else {
			assert_int_equal(st.used_best_iterate, 0);
			assert_double_equal(lk_problem_lambda(p)[0], 0.505 / 0.0199, 1e-9);
			assert_double_equal(lk_problem_lambda(p)[1], 0.0, 0.0);
			assert_true(st.res_final > 40 * expect_res_pgs);
		}
		lk_problem_destroy(p);
	}
}

/* The same problem over two outer iterations: the first subspace phase is discarded, and the second PGS phase
 * continues from the first one's lambda, exactly as plain PGS would: after two sweeps lambda = (0.514801, 0),
 * on the right face, whose solve gives the solution (1, 0). (Restarting from the best iterate, the start,
 * would repeat the first outer iteration forever.) */
static void test_fallback_continues_pgs(void **state)
{
	(void)state;
	const double A[4] = {1, 0.99, 0.99, 1}, b[2] = {-1, -0.5}, start[2] = {0, 1};
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(p, 2, A, b, NULL, NULL, NULL, NULL), LK_OK);
	assert_int_equal(lk_problem_set_lambda(p, start, 2), LK_OK);
	lk_solver_config cfg = sm_config();
	cfg.pgs_sm.k_pgs = 1;
	cfg.pgs_sm.k_sm = 1;
	cfg.max_iterations = 2;
	lk_history_entry e[16];
	lk_history h = {e, 16, 0};
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, &h), LK_OK);
	assert_int_equal(st.subspace_steps, 2);
	assert_int_equal(st.used_best_iterate, 0);
	assert_double_equal(lk_problem_lambda(p)[0], 1.0, 1e-15);
	assert_double_equal(lk_problem_lambda(p)[1], 0.0, 0.0);
	assert_true(st.res_final < 1e-15);
	/* history: start, sweep 1, step 1 (RES 24.4), sweep 2 from (0.01, 0.4901), step 2 */
	assert_int_equal(h.count, 5);
	assert_true(e[2].res > 20);
	double h1 = 0.514801 + 0.99 * 0.0 - 1.0; /* w_1 after sweep 2; H_1 = w_1 there, H_2 = 0 */
	assert_double_equal(e[3].res, fabs(h1), 1e-12);
	lk_problem_destroy(p);
}

/* The fall-back as a property: on random frictional problems, in either merit, PGS-SM never ends worse than
 * its own first PGS phase, which is bitwise plain PGS with k_pgs sweeps. */
static void test_never_worse_than_pgs_phase(void **state)
{
	(void)state;
	int fell_back = 0;
	for (int merit = 0; merit < 2; ++merit) {
		lk_merit mk = merit ? LK_MERIT_FISCHER : LK_MERIT_RES;
		for (uint64_t seed = 1; seed <= 12; ++seed) {
			lk_problem *a = tu_random_rows(12, 45, seed, 0.6), *b = tu_random_rows(12, 45, seed, 0.6);
			lk_solver_config pg = lk_default_config(LK_METHOD_PGS);
			pg.max_iterations = 4;
			assert_int_equal(lk_solve(a, &pg, NULL, NULL), LK_OK);
			double m_pgs = merit_of(a, mk);
			lk_solver_config cfg = sm_config();
			cfg.merit = mk;
			cfg.pgs_sm.k_pgs = 4;
			cfg.pgs_sm.k_sm = 3;
			cfg.max_iterations = 3;
			lk_stats st;
			assert_int_equal(lk_solve(b, &cfg, &st, NULL), LK_OK);
			assert_finite(b);
			double m_sm = merit_of(b, mk);
			if (!(m_sm <= m_pgs))
				fail_msg("seed %d merit %d: PGS-SM %g worse than its PGS phase %g", (int)seed, merit, m_sm,
				         m_pgs);
			fell_back += st.used_best_iterate;
			lk_problem_destroy(a);
			lk_problem_destroy(b);
		}
	}
	/* the property was exercised: some subspace phases did hurt and were undone */
	assert_true(fell_back > 0);
}

/* Two identical contact rows (a duplicated contact): A_AA is singular. With equal targets the reduced system
 * is consistent and has infinitely many solutions; with different targets it has none. Neither may give a
 * NaN, and the result is never worse than the PGS phase. */
static void test_singular_reduced_system(void **state)
{
	(void)state;
	for (int inconsistent = 0; inconsistent <= 1; ++inconsistent) {
		lk_problem *p = lk_problem_create(LK_FORM_ROWS);
		lk_body_def bd = lk_default_body_def();
		for (int k = 0; k < 3; ++k) {
			bd.inv_mass[k] = 1.0;
			bd.inv_inertia[4 * k] = 6.0;
		}
		bd.u[2] = -9.81 / 60.0;
		assert_int_equal(lk_problem_add_body(p, &bd, NULL), LK_OK);
		for (int r = 0; r < 2; ++r) {
			lk_row_def rd = lk_default_row_def();
			rd.body[0] = 0;
			rd.body[1] = LK_STATIC;
			rd.J[0][2] = 1.0;
			rd.J[0][3] = 0.3; /* off the centre: couples the rotation */
			rd.lo = 0;
			rd.hi = INFINITY;
			rd.kind = LK_ROW_NORMAL;
			rd.c = inconsistent && r == 1 ? 0.05 : 0.0;
			assert_int_equal(lk_problem_add_row(p, &rd, NULL), LK_OK);
		}
		/* k_pgs = 0: the subspace step starts from the warm start, where both rows are strictly positive */
		const double start[2] = {0.05, 0.02};
		assert_int_equal(lk_problem_set_lambda(p, start, 2), LK_OK);
		lk_solver_config cfg = sm_config();
		cfg.pgs_sm.k_pgs = 0;
		cfg.pgs_sm.k_sm = 3;
		cfg.max_iterations = 2;
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		assert_finite(p);
		assert_true(isfinite(st.res_final) && isfinite(st.fischer_final));
		assert_true(st.subspace_steps >= 1);
		assert_true(st.res_final <= st.res_initial);
		const double *l = lk_problem_lambda(p);
		if (!inconsistent) {
			/* one CG step along (1, 1): both impulses grow alike and together carry the body:
			 * A_11 = 1 + 0.3^2 6 = 1.54, (l0 + l1) A_11 = m g h */
			assert_true(st.res_final < 1e-12);
			assert_double_equal(l[0] + l[1], 9.81 / 60.0 / 1.54, 1e-12);
			assert_double_equal(l[0] - l[1], 0.03, 1e-12);
		}
		lk_problem_destroy(p);
	}
}

/* A box stack whose every contact is present twice: singular A_AA on every face, with friction; and with
 * regularization, Jacobi preconditioning and lazy bounds. No NaN, never worse than the PGS phase. */
static void test_duplicated_contacts_stack(void **state)
{
	(void)state;
	lk_problem *g = generate(LK_GEN_BOXSTACK, 4, 0.5);
	int nb = lk_problem_body_count(g), nr = lk_problem_row_count(g);
	for (int variant = 0; variant < 4; ++variant) {
		lk_problem *p = lk_problem_create(LK_FORM_ROWS), *ref = lk_problem_create(LK_FORM_ROWS);
		for (int b = 0; b < nb; ++b) {
			assert_int_equal(lk_problem_add_body(p, lk_problem_body(g, b), NULL), LK_OK);
			assert_int_equal(lk_problem_add_body(ref, lk_problem_body(g, b), NULL), LK_OK);
		}
		for (int copy = 0; copy < 2; ++copy) {
			for (int r = 0; r < nr; ++r) {
				lk_row_def rd;
				assert_int_equal(lk_problem_get_row(g, r, &rd), LK_OK);
				if (rd.findex >= 0)
					rd.findex += copy * nr;
				assert_int_equal(lk_problem_add_row(p, &rd, NULL), LK_OK);
				assert_int_equal(lk_problem_add_row(ref, &rd, NULL), LK_OK);
			}
		}
		lk_solver_config pg = lk_default_config(LK_METHOD_PGS);
		pg.max_iterations = 10;
		assert_int_equal(lk_solve(ref, &pg, NULL, NULL), LK_OK);
		lk_solver_config cfg = sm_config();
		cfg.pgs_sm.k_pgs = 10;
		cfg.max_iterations = 4;
		cfg.pgs_sm.reg = variant == 1 ? 1e-3 : 0.0;
		cfg.pgs_sm.reg_friction_only = variant == 1;
		cfg.pgs_sm.cg_jacobi = variant == 2;
		cfg.pgs_sm.lazy_friction = variant == 3;
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		assert_finite(p);
		assert_true(st.subspace_steps >= 1);
		assert_true(st.res_final <= merit_of(ref, LK_MERIT_RES));
		lk_problem_destroy(p);
		lk_problem_destroy(ref);
	}
	lk_problem_destroy(g);
}

/* An indefinite matrix (not a contact matrix, but a matrix-form user may pass one): CG meets negative
 * curvature and stops; no NaN, never worse than the start. */
static void test_indefinite_matrix(void **state)
{
	(void)state;
	const double A[9] = {1, 2, 0, 2, 1, 0, 0, 0, 1}, b[3] = {-1, -1, -1}, start[3] = {0.3, 0.3, 0.3};
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(p, 3, A, b, NULL, NULL, NULL, NULL), LK_OK);
	assert_int_equal(lk_problem_set_lambda(p, start, 3), LK_OK);
	double m0 = merit_of(p, LK_MERIT_RES);
	lk_solver_config cfg = sm_config();
	cfg.pgs_sm.k_pgs = 0;
	cfg.pgs_sm.k_sm = 2;
	cfg.max_iterations = 3;
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_finite(p);
	assert_true(st.res_final <= m0);
	lk_problem_destroy(p);
}

static double *dense_of(lk_problem *p, double **q)
{
	int n = lk_problem_row_count(p);
	double *A = malloc(sizeof(double) * (size_t)n * n);
	*q = malloc(sizeof(double) * (size_t)n);
	assert_true(A && *q);
	assert_int_equal(lk_problem_assemble_dense(p, n, A, *q), LK_OK);
	return A;
}

/* Agreement with an independent reference: Siconos's Lemke on random frictionless problems, row form
 * (matrix-free products through J and M^-1) and matrix form (CSR products). */
static void test_matches_siconos_lemke(void **state)
{
	(void)state;
	for (int k = 0; k < 8; ++k) {
		uint64_t seed = 1 + (uint64_t)(k % 4);
		lk_subspace_solver sub = k < 4 ? LK_SUBSPACE_CG : LK_SUBSPACE_DIRECT;
		int form_rows = seed <= 2;
		lk_problem *p = form_rows ? tu_random_rows(40, 150 + 20 * (int)seed, seed, 0.0)
		                          : tu_random_spd_matrix(60, seed, 0.5);
		int n = lk_problem_row_count(p);
		double *q, *A = dense_of(p, &q);
		double *z = malloc(sizeof(double) * (size_t)n);
		lk_peer_result res;
		assert_int_equal(lk_peer_siconos_lcp(LK_PEER_LEMKE, n, A, q, z, 0, 0, &res), LK_OK);
		assert_int_equal(res.info, 0);

		lk_solver_config cfg = sm_config();
		cfg.max_iterations = 40;
		cfg.tol_abs = 1e-11;
		cfg.pgs_sm.sub = sub; /* the matrix form (seeds 3, 4) has no rows to factor: CG either way */
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		if (st.stop_reason != LK_STOP_ABSOLUTE)
			fail_msg("seed %d: stopped by %s at RES %g after %d outer iterations", (int)seed,
			         lk_stop_reason_name(st.stop_reason), st.res_final, st.iterations);
		double d = tu_max_diff(lk_problem_lambda(p), z, n);
		if (!(d < 1e-8))
			fail_msg("seed %d: PGS-SM differs from Lemke by %g", (int)seed, d);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-9);
		/* a subspace step did the work: plain PGS for the same work is far less accurate */
		assert_true(st.subspace_steps >= 1);
		free(A);
		free(q);
		free(z);
		lk_problem_destroy(p);
	}
}

/* With friction (bounds from the normal impulses) on a box stack: the boxed complementarity conditions. */
static void test_friction_boxstack_complementarity(void **state)
{
	(void)state;
	lk_problem *p = generate(LK_GEN_BOXSTACK, 5, 0.5);
	lk_solver_config cfg = sm_config();
	cfg.max_iterations = 30;
	cfg.tol_abs = 1e-10;
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_true(st.res_final < 1e-8);
	tu_assert_complementarity(p, lk_problem_lambda(p), 1e-7);
	lk_problem_destroy(p);
}

/* The envelope factor (sub=direct) on a 20-box friction stack from a cold start: the face after the PGS phase
 * is the solution's, the factor solves it in one or two outer iterations, for under 0.4 of the work CG
 * needs on the same face (the stack's A_AA is semidefinite, four contacts on three degrees of freedom per
 * face, and ill-conditioned along the stack). */
static void test_direct_stack(void **state)
{
	(void)state;
	double work[2];
	for (int k = 0; k < 2; ++k) {
		lk_problem *p = generate(LK_GEN_BOXSTACK, 20, 0.5);
		lk_solver_config cfg = sm_config();
		cfg.pgs_sm.sub = k ? LK_SUBSPACE_DIRECT : LK_SUBSPACE_CG;
		cfg.max_iterations = 5;
		cfg.tol_abs = 1e-9;
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-8);
		if (k) /* the proximal term (LK_ENV_PROXIMAL) leaves a bias of its size, which a second pass removes */
			assert_true(st.iterations <= 2);
		work[k] = st.work;
		lk_problem_destroy(p);
	}
	if (!(work[1] < 0.4 * work[0]))
		fail_msg("direct spent %g sweep-equivalents, CG %g", work[1], work[0]);
}

/* Under a budget the factor is taken only when what is left pays for it; otherwise CG spends what is left.
 * Either way the budget holds (to the half sweep of the monitor's rule). */
static void test_direct_within_budget(void **state)
{
	(void)state;
	const double budgets[3] = {3, 12, 80};
	for (int k = 0; k < 3; ++k) {
		lk_problem *p = generate(LK_GEN_BOXSTACK, 20, 0.5);
		lk_solver_config cfg = tu_spec("pgs-sm:sub=direct,tol=0,warm=0");
		cfg.budget = budgets[k];
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		if (!(st.work <= budgets[k] + 0.5))
			fail_msg("budget %g: spent %g", budgets[k], st.work);
		assert_finite(p);
		lk_problem_destroy(p);
	}
}

/* sub_rows=normal: the subspace holds the free normal rows only; a friction row leaves the subspace step at
 * its PGS value or, where the new normal impulse shrank its box, on its bound. */
static void test_normal_subspace_keeps_friction(void **state)
{
	(void)state;
	lk_problem *a = generate(LK_GEN_BOXSTACK, 10, 0.5), *b = generate(LK_GEN_BOXSTACK, 10, 0.5);
	lk_solver_config pg = tu_spec("pgs:iters=3,tol=0,warm=0");
	assert_int_equal(lk_solve(a, &pg, NULL, NULL), LK_OK);
	lk_solver_config cfg = tu_spec("pgs-sm:kpgs=3,ksm=1,iters=1,best=0,tol=0,warm=0,sub=direct,sub_rows=normal");
	lk_stats st;
	assert_int_equal(lk_solve(b, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.subspace_steps, 1);
	const double *la = lk_problem_lambda(a), *lb = lk_problem_lambda(b);
	int n = lk_problem_row_count(b), moved = 0;
	for (int i = 0; i < n; ++i) {
		lk_row_def d;
		assert_int_equal(lk_problem_get_row(b, i, &d), LK_OK);
		if (d.findex < 0) {
			moved += la[i] != lb[i];
			continue;
		}
		double bound = d.mu * fabs(lb[d.findex]);
		if (!(lb[i] == la[i] || lb[i] == -bound || lb[i] == bound))
			fail_msg("friction row %d: %g after PGS, %g after the normal subspace step (box %g)", i, la[i], lb[i],
			         bound);
	}
	assert_true(moved > 0);
	lk_problem_destroy(a);
	lk_problem_destroy(b);
}

/* k_sm = 0 leaves the PGS phases alone: bitwise plain PGS with k_pgs * iterations sweeps, in the natural and
 * in a random order (same seed, same shuffles). */
static void test_no_subspace_is_pgs(void **state)
{
	(void)state;
	for (int order = 0; order < 2; ++order) {
		lk_problem *a = tu_random_rows(10, 30, 7, 0.4), *b = tu_random_rows(10, 30, 7, 0.4);
		lk_solver_config pg = lk_default_config(LK_METHOD_PGS);
		pg.max_iterations = 21;
		pg.order = order ? LK_ORDER_RANDOM : LK_ORDER_NATURAL;
		assert_int_equal(lk_solve(a, &pg, NULL, NULL), LK_OK);
		lk_solver_config cfg = sm_config();
		cfg.order = pg.order;
		cfg.pgs_sm.k_pgs = 7;
		cfg.pgs_sm.k_sm = 0;
		cfg.max_iterations = 3;
		lk_stats st;
		assert_int_equal(lk_solve(b, &cfg, &st, NULL), LK_OK);
		assert_memory_equal(lk_problem_lambda(a), lk_problem_lambda(b), 30 * sizeof(double));
		assert_int_equal(st.row_updates, 21 * 30);
		assert_int_equal(st.subspace_steps, 0);
		lk_problem_destroy(a);
		lk_problem_destroy(b);
	}
}

/* The relative rule of the PGS phase (sec. 5.1) lengthens the phase until the merit settles. */
static void test_pgs_phase_relative_rule(void **state)
{
	(void)state;
	lk_problem *p = generate(LK_GEN_SPHERESTACK, 20, 0.0);
	int n = lk_problem_row_count(p);
	lk_solver_config cfg = sm_config();
	cfg.pgs_sm.k_pgs = 5;
	cfg.pgs_sm.k_sm = 0;
	cfg.pgs_sm.pgs_rel_tol = 1e-3;
	cfg.max_iterations = 1;
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.row_updates % n, 0);
	int sweeps = (int)(st.row_updates / n);
	assert_true(sweeps > 5 && sweeps <= 50);
	lk_problem_destroy(p);
}

/* Eq. (26): from the solution, an outer iteration changes nothing, so the second one stops on the unchanged
 * active set; eq. (25) with the Fischer merit stops right after the face solve. */
static void test_stopping_rules(void **state)
{
	(void)state;
	lk_problem *p = generate(LK_GEN_SPHERESTACK, 10, 0.0);
	lk_solver_config cfg = sm_config();
	cfg.max_iterations = 10;
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_ACTIVE_SET);
	assert_int_equal(st.iterations, 2);
	assert_true(st.res_final < 1e-10);

	lk_problem *q = generate(LK_GEN_SPHERESTACK, 10, 0.0);
	cfg.merit = LK_MERIT_FISCHER;
	cfg.tol_abs = 1e-20;
	assert_int_equal(lk_solve(q, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	assert_int_equal(st.iterations, 1);
	assert_int_equal(st.subspace_steps, 1);
	assert_true(st.fischer_final < 1e-20);
	lk_problem_destroy(p);
	lk_problem_destroy(q);
}

/* Without a budget a subspace step stays linear in the active set. On a packing of 800 spheres (6,858 rows,
 * most of them active) one step's conjugate gradients stop at LK_SM_CG_CAP = 1000 products (the paper's cap is
 * the active count), and an explicit cg_max above it is honoured. With sub=direct the factor is taken only
 * where it costs no more than those capped products: on 1,500 spheres its envelope costs more (3,198
 * sweep-equivalents for the step when it was taken), and the step is the capped CG solve. */
static void solve_once(lk_problem *p, const char *spec, lk_stats *st)
{
	lk_solver_config cfg;
	char err[200];
	assert_int_equal(lk_config_parse(spec, &cfg, err, sizeof err), LK_OK);
	assert_int_equal(lk_solve(p, &cfg, st, NULL), LK_OK);
	assert_int_equal(st->subspace_steps, 1);
	assert_finite(p);
}

static void test_subspace_step_is_linear(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("packing", 800, 0.5);
	assert_true(lk_problem_row_count(p) > 4000);
	lk_stats st;
	solve_once(p, "pgs-sm:iters=1,ksm=1,measure=0", &st);
	assert_true(st.inner_iterations >= 1 && st.inner_iterations <= LK_SM_CG_CAP);
	solve_once(p, "pgs-sm:iters=1,ksm=1,cg_max=1200,measure=0", &st);
	assert_true(st.inner_iterations > 1000 && st.inner_iterations <= 1200);
	lk_problem_destroy(p);
	p = tu_generate("packing", 1500, 0.5);
	solve_once(p, "pgs-sm:iters=1,ksm=1,sub=direct,measure=0", &st);
	assert_true(st.inner_iterations >= 1 && st.inner_iterations <= LK_SM_CG_CAP); /* the factor refused: CG */
	assert_true(st.work <= 25 + 1 + LK_SM_CG_CAP * LK_WORK_CG_ROW + 1);
	lk_problem_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_active_set_one_step),
		cmocka_unit_test(test_best_iterate_fallback),
		cmocka_unit_test(test_fallback_continues_pgs),
		cmocka_unit_test(test_never_worse_than_pgs_phase),
		cmocka_unit_test(test_singular_reduced_system),
		cmocka_unit_test(test_duplicated_contacts_stack),
		cmocka_unit_test(test_indefinite_matrix),
		cmocka_unit_test(test_matches_siconos_lemke),
		cmocka_unit_test(test_friction_boxstack_complementarity),
		cmocka_unit_test(test_direct_stack),
		cmocka_unit_test(test_direct_within_budget),
		cmocka_unit_test(test_normal_subspace_keeps_friction),
		cmocka_unit_test(test_no_subspace_is_pgs),
		cmocka_unit_test(test_pgs_phase_relative_rule),
		cmocka_unit_test(test_stopping_rules),
		cmocka_unit_test(test_subspace_step_is_linear),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The guards of every solver (docs/reliability.md): a non-finite value, a row with a zero or negative
 * diagonal, a reduced system that CG cannot solve, an iteration that diverges or is unstable. Each must
 * stop, hand back a finite lambda (the best iterate seen) and a stop reason that says why.
 *
 * How each test was checked to fail without its guard (in a scratch copy of the sources, never here):
 * - test_nonfinite_*: with the `!isfinite(max_change)` and `!isfinite(merit)` checks of the monitor
 *   (common/src/monitor.c, which PGS-SM's checkpoints also go through) removed, the Gauss-Seidel family runs
 *   to the iteration limit on NaN (iterations == max, the final safety net of lk_solve then reports
 *   "nonfinite" only at the end): the iteration-count assertions fail. With the final safety net removed as
 *   well, lambda holds NaN.
 * - test_bad_diagonal_*: without lk__first_bad_diagonal in the dispatch (solve.c), the update divides by zero (row
 *   form) or by a negative A_ii (matrix form): stop reasons become "nonfinite" / "iterations" and lambda
 *   leaves the warm start, so the assertions on the reason and on lambda fail.
 * - test_divergence_monitor: without the growth check of lk__monitor the iteration runs to the limit.
 * - test_unstable_amgs_*: without the end-of-solve check of lk_solve (LK_UNSTABLE_FACTOR) AMGS with
 *   alpha = 1e-4 returns "iterations" and a residual 3.5 times the start's.
 * - test_reduced_system_cg: without the discard of a subspace phase whose merit grew (c->grew, pgs_sm.c) the blown subspace phases are kept:
 *   lambda ends at 0 with RES six times the start's instead of at the solution.
 * - test_nonfinite_newton did NOT fail with the line search's finiteness checks, the monitor's and
 *   lk_solve's removed together: the Newton direction never becomes non-finite on this problem (the Krylov
 *   solvers return their last finite iterate, and Newton solves it). It records behaviour, not a guard.
 * - test_bad_diagonal_newton: without the row-form case of the diagonal check in the dispatch (solve.c) the row form runs:
 *   the minimum map stops as a local minimum, Fischer-Newton runs lambda_1 out and ends "diverged", both
 *   after iterations and with lambda off the warm start.
 * - test_divergence_newton: without the divergence rule at the end of lk__solve_newton, Fischer-Newton
 *   stops as a "local-minimum" with lambda = 1.7e9 (the CFM part, a converged run, passes either way).
 * - test_divergence_monitor_newton: with Newton calling lk__monitor instead of lk__monitor_metrics (the
 *   merit then evaluated only for a tolerance or the history), the growth of the merit "modified" goes
 *   unseen and the run ends three iterations later, through the divergence rule. */
#include "test_util.h"
#include "lcpkit/generate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The Gauss-Seidel family, each ordering family and the AMGS family: one PGS-like update per row. */
static const char *const gs_family[] = {
	"pgs", "psor", "pgs:order=random", "pgs:order=ipp", "esp", "gsp", "amgs", "amsor", "amgs-dense", "pgs-sm",
};
#define N_GS (int)(sizeof gs_family / sizeof gs_family[0])
static const char *const newton_family[] = {"newton-minmap", "newton-fischer", "newton-fischer:krylov=cg"};
#define N_NEWTON (int)(sizeof newton_family / sizeof newton_family[0])

static void assert_all_finite(const lk_problem *p, const char *what)
{
	const double *l = lk_problem_lambda(p);
	for (int i = 0; i < lk_problem_row_count(p); ++i)
		if (!isfinite(l[i]))
			fail_msg("%s: lambda[%d] = %g", what, i, l[i]);
	if (lk_problem_form(p) == LK_FORM_ROWS)
		for (int b = 0; b < lk_problem_body_count(p); ++b) {
			double du[6];
			assert_int_equal(lk_problem_delta_velocity(p, b, du), LK_OK);
			for (int k = 0; k < 6; ++k)
				if (!isfinite(du[k]))
					fail_msg("%s: du[%d][%d] = %g", what, b, k, du[k]);
		}
}

static void assert_lambda_is(const lk_problem *p, const double *expect, const char *what)
{
	const double *l = lk_problem_lambda(p);
	for (int i = 0; i < lk_problem_row_count(p); ++i)
		if (memcmp(&l[i], &expect[i], sizeof(double)) != 0)
			fail_msg("%s: lambda[%d] = %.17g, expected %.17g", what, i, l[i], expect[i]);
}

/* ------------------------------------------------------------------------------------- non-finite */

/* A_01 = A_10 = 1e150 with unit diagonals (an FCLIB or hand-made matrix can hold that): the first sweep
 * gives lambda = (1, -1e150), the second lambda_0 = 1e300 and then w_1 = 1e150 * 1e300 = inf. (RES itself
 * overflows once |H| passes 1e154, so from the first sweep on the evaluated merit is infinite.) */
static lk_problem *overflow_problem(const double *warm)
{
	const double A[4] = {1, 1e150, 1e150, 1}, q[2] = {-1, 0}, lo[2] = {0, -INFINITY}, hi[2] = {INFINITY, INFINITY};
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(p, 2, A, q, lo, hi, NULL, NULL), LK_OK);
	if (warm)
		assert_int_equal(lk_problem_set_lambda(p, warm, 2), LK_OK);
	return p;
}

static void test_nonfinite_gauss_seidel(void **state)
{
	(void)state;
	const double warm[2] = {0.5, -0.25};
	for (int with_tol = 0; with_tol <= 1; ++with_tol) {
		for (int k = 0; k < N_GS; ++k) {
			lk_problem *p = overflow_problem(warm);
			lk_solver_config c = tu_spec(gs_family[k]);
			c.max_iterations = 100;
			if (with_tol) /* the monitor evaluates the merit every sweep: its merit path of the guard */
				c.tol_abs = 1e-12;
			lk_stats st;
			assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
			if (st.stop_reason != LK_STOP_NONFINITE)
				fail_msg("%s (tol %d): stopped by %s", gs_family[k], with_tol, lk_stop_reason_name(st.stop_reason));
			/* detected within the sweep that overflowed (PGS-SM: its first outer iteration) */
			if (st.iterations > 2)
				fail_msg("%s: %d iterations before the guard", gs_family[k], st.iterations);
			assert_int_equal(st.used_best_iterate, 1);
			assert_all_finite(p, gs_family[k]);
			/* the best iterate seen: the warm start, or with the merit evaluated possibly the first sweep */
			assert_true(isfinite(st.res_final) && st.res_final <= st.res_initial);
			if (!with_tol)
				assert_lambda_is(p, warm, gs_family[k]);
			lk_problem_destroy(p);
		}
	}
}

/* The Newton methods refuse non-finite trial points in their line search: they stop without one. */
static void test_nonfinite_newton(void **state)
{
	(void)state;
	const double warm[2] = {0.5, -0.25};
	for (int k = 0; k < N_NEWTON; ++k) {
		lk_problem *p = overflow_problem(warm);
		lk_solver_config c = tu_spec(newton_family[k]);
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		assert_true(st.stop_reason != LK_STOP_NONE && st.stop_reason != LK_STOP_ITERATIONS);
		assert_all_finite(p, newton_family[k]);
		assert_true(isfinite(st.res_final) && st.res_final <= st.res_initial);
		lk_problem_destroy(p);
	}
}

/* ---------------------------------------------------------------------------------- bad diagonal */

/* Row form: row 1 acts only on a moving body of infinite mass (an engine's kinematic body): A_11 = 0. */
static lk_problem *zero_diagonal_rows(void)
{
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	lk_body_def b = lk_default_body_def();
	b.u[2] = -1;
	b.inv_mass[0] = b.inv_mass[1] = b.inv_mass[2] = 1;
	b.inv_inertia[0] = b.inv_inertia[4] = b.inv_inertia[8] = 1;
	assert_int_equal(lk_problem_add_body(p, &b, NULL), LK_OK);
	lk_body_def kinematic = lk_default_body_def();
	kinematic.u[2] = -1;
	assert_int_equal(lk_problem_add_body(p, &kinematic, NULL), LK_OK);
	lk_row_def r = lk_default_row_def();
	r.body[0] = 0;
	r.J[0][2] = 1;
	r.lo = 0;
	r.kind = LK_ROW_NORMAL;
	assert_int_equal(lk_problem_add_row(p, &r, NULL), LK_OK);
	r.body[0] = 1;
	assert_int_equal(lk_problem_add_row(p, &r, NULL), LK_OK);
	double d[2];
	assert_int_equal(lk_problem_diagonal(p, d), LK_OK);
	assert_double_equal(d[0], 1.0, 0.0);
	assert_double_equal(d[1], 0.0, 0.0);
	return p;
}

/* Matrix form: A_11 = -1 (not a contact matrix; an imported one can be anything). */
static lk_problem *negative_diagonal_matrix(void)
{
	const double A[4] = {2, 0.5, 0.5, -1}, q[2] = {-1, -1};
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(p, 2, A, q, NULL, NULL, NULL, NULL), LK_OK);
	return p;
}

static void test_bad_diagonal_gauss_seidel(void **state)
{
	(void)state;
	const double warm[2] = {0.5, 0.25};
	for (int form = 0; form < 2; ++form) {
		for (int k = 0; k < N_GS; ++k) {
			lk_problem *p = form ? negative_diagonal_matrix() : zero_diagonal_rows();
			assert_int_equal(lk_problem_set_lambda(p, warm, 2), LK_OK);
			lk_solver_config c = tu_spec(gs_family[k]);
			lk_stats st;
			assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
			if (st.stop_reason != LK_STOP_BAD_DIAGONAL)
				fail_msg("%s (form %d): stopped by %s", gs_family[k], form, lk_stop_reason_name(st.stop_reason));
			assert_int_equal(st.iterations, 0);
			/* nothing was solved: the warm start is handed back untouched */
			assert_lambda_is(p, warm, gs_family[k]);
			assert_all_finite(p, gs_family[k]);
			assert_double_equal(st.res_final, st.res_initial, 0.0);
			lk_problem_destroy(p);
		}
	}
}

/* The Newton methods and the diagonal (newton.c, top): in the row form A_ii = 0 means that row i of A is
 * zero, lambda_i moves nothing and w_1 = -1 whatever lambda is; they stop with "bad-diagonal" as the
 * Gauss-Seidel methods do, lambda untouched. The matrix form runs whatever its diagonal (Erleben 2013
 * Table 3; the contact LCP of eq. 27 in test_newton.c has zeros): with A_11 = -1 and no solution they end
 * finite, with a reason that says it was not solved, and no worse than twice the start (lk_solve's end
 * check); with a solution, A = [2 1; 1 -1], q = (-2, 1), they find one of its two, (1, 0) or (1/3, 4/3). */
static void test_bad_diagonal_newton(void **state)
{
	(void)state;
	const double warm[2] = {0.5, 0.25};
	for (int k = 0; k < N_NEWTON; ++k) {
		lk_problem *p = zero_diagonal_rows();
		assert_int_equal(lk_problem_set_lambda(p, warm, 2), LK_OK);
		lk_solver_config c = tu_spec(newton_family[k]);
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		if (st.stop_reason != LK_STOP_BAD_DIAGONAL)
			fail_msg("%s: stopped by %s", newton_family[k], lk_stop_reason_name(st.stop_reason));
		assert_int_equal(st.iterations, 0);
		assert_lambda_is(p, warm, newton_family[k]);
		assert_all_finite(p, newton_family[k]);
		assert_double_equal(st.res_final, st.res_initial, 0.0);
		lk_problem_destroy(p);

		p = negative_diagonal_matrix();
		assert_int_equal(lk_problem_set_lambda(p, warm, 2), LK_OK);
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		if (st.stop_reason != LK_STOP_LOCAL_MINIMUM && st.stop_reason != LK_STOP_NON_DESCENT &&
		    st.stop_reason != LK_STOP_ITERATIONS && st.stop_reason != LK_STOP_DIVERGED)
			fail_msg("%s, A_11 = -1: stopped by %s", newton_family[k], lk_stop_reason_name(st.stop_reason));
		assert_true(st.iterations > 0);
		assert_all_finite(p, newton_family[k]);
		assert_true(st.res_final <= 2.0 * st.res_initial);
		lk_problem_destroy(p);

		const double A[4] = {2, 1, 1, -1}, q[2] = {-2, 1};
		p = lk_problem_create(LK_FORM_MATRIX);
		assert_int_equal(lk_problem_set_dense(p, 2, A, q, NULL, NULL, NULL, NULL), LK_OK);
		c.tol_abs = 1e-12;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-12);
		const double *l = lk_problem_lambda(p);
		assert_true((fabs(l[0] - 1) < 1e-12 && fabs(l[1]) < 1e-12) ||
		            (fabs(l[0] - 1.0 / 3) < 1e-12 && fabs(l[1] - 4.0 / 3) < 1e-12));
		lk_problem_destroy(p);
	}
}

/* ------------------------------------------------------------------------------------- divergence */

/* Free rows of an indefinite matrix: the Gauss-Seidel iteration matrix has spectral radius 4, so the
 * iterate grows fourfold per sweep without bound (Erleben 2013 sec. 5.2 assumes A positive definite). */
static void test_divergence_monitor(void **state)
{
	(void)state;
	const double A[4] = {1, 2, 2, 1}, q[2] = {-1, -1}, lo[2] = {-INFINITY, -INFINITY},
	             hi[2] = {INFINITY, INFINITY};
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(p, 2, A, q, lo, hi, NULL, NULL), LK_OK);
	lk_solver_config c = lk_default_config(LK_METHOD_PGS);
	c.max_iterations = 400; /* 4^400 overflows: without the guard the run ends in non-finite values */
	c.tol_abs = 1e-12;       /* the monitor evaluates the merit, so it sees the growth */
	lk_history_entry e[401];
	lk_history h = {e, 401, 0};
	lk_stats st;
	assert_int_equal(lk_solve(p, &c, &st, &h), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_DIVERGED);
	/* RES grows 4x a sweep from 1.41: past 1e8 times theta_0 (merit RES here) within ~15 sweeps */
	assert_true(st.iterations < 20);
	assert_int_equal(st.used_best_iterate, 1);
	assert_all_finite(p, "pgs on an indefinite matrix");
	double best = e[0].res;
	for (int i = 0; i < h.count; ++i)
		best = fmin(best, e[i].res);
	assert_double_equal(st.res_final, best, 0.0);
	lk_problem_destroy(p);
}

/* A unit body wedged between two opposite contacts, each asking it to separate at 1 m/s (an error reduction
 * on both sides of an overlap): v_z >= 1 and -v_z >= 1 cannot both hold, A = [1 -1; -1 1] (plus CFM s),
 * q = (-1, -1). Without CFM there is no solution: w_0 + w_1 = -2 for every lambda, so RES >= sqrt 2 with
 * equality at lambda = 0, while along lambda = (t, t) the Fischer merit falls towards 1 (phi(t, -1) -> 1)
 * as t grows. With s > 0 the solution is lambda = (1/s, 1/s). */
static lk_problem *squeeze(double s)
{
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	lk_body_def b = lk_default_body_def();
	for (int k = 0; k < 3; ++k) {
		b.inv_mass[k] = 1;
		b.inv_inertia[4 * k] = 1;
	}
	assert_int_equal(lk_problem_add_body(p, &b, NULL), LK_OK);
	lk_row_def r = lk_default_row_def();
	r.body[0] = 0;
	r.lo = 0;
	r.c = 1;
	r.s = s;
	r.kind = LK_ROW_NORMAL;
	r.J[0][2] = 1;
	assert_int_equal(lk_problem_add_row(p, &r, NULL), LK_OK);
	r.J[0][2] = -1;
	assert_int_equal(lk_problem_add_row(p, &r, NULL), LK_OK);
	return p;
}

/* Newton's divergence: the line search never raises the merit, so the iterate diverges instead. From
 * lambda = 0 Fischer-Newton steps out along lambda = (t, t), t_k+1 ~ 2 t_k^2, to 1.7e9, where it would stop
 * as a "local minimum"; the divergence rule (newton.c) ends it as "diverged" with the best iterate, the
 * start (RES is lowest there). Default configuration: no tolerance, no history. The minimum map stops at
 * once (its Newton system A_AA dx = (1, 1) has no solution and the merit's gradient A^T H vanishes), with
 * lambda where it was. With CFM 1e-12 the same two rows have the solution lambda = 1e12, which Newton finds
 * and which is not divergence, however large. */
static void test_divergence_newton(void **state)
{
	(void)state;
	const double zero[2] = {0, 0};
	const char *const fischer[] = {"newton-fischer", "newton-fischer:strategy=zero", "newton-fischer:strategy=random",
	                               "newton-fischer:merit=fischer"};
	for (int k = 0; k < 4; ++k) {
		lk_problem *p = squeeze(0);
		lk_solver_config c = tu_spec(fischer[k]);
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		if (st.stop_reason != LK_STOP_DIVERGED)
			fail_msg("%s: stopped by %s after %d, lambda_0 = %g", fischer[k], lk_stop_reason_name(st.stop_reason),
			         st.iterations, lk_problem_lambda(p)[0]);
		assert_true(st.iterations >= 3);
		assert_int_equal(st.used_best_iterate, 1);
		assert_all_finite(p, fischer[k]);
		/* the start: the lowest RES; with merit=fischer the best iterate seen is the last, 1.7e9 out, and the
		 * rule falls back on the start */
		assert_lambda_is(p, zero, fischer[k]);
		assert_double_equal(st.res_final, sqrt(2.0), 1e-15);
		assert_true(st.res_final <= st.res_initial);
		lk_problem_destroy(p);
	}
	for (int k = 0; k < 2; ++k) {
		lk_problem *p = squeeze(0);
		lk_solver_config c = tu_spec(k ? "newton-minmap:krylov=cg" : "newton-minmap");
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_LOCAL_MINIMUM);
		assert_lambda_is(p, zero, "newton-minmap");
		lk_problem_destroy(p);
	}
	for (int k = 0; k < N_NEWTON; ++k) {
		lk_problem *p = squeeze(1e-12);
		lk_solver_config c = tu_spec(newton_family[k]);
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		if (st.stop_reason != LK_STOP_ABSOLUTE && st.stop_reason != LK_STOP_STAGNATION)
			fail_msg("%s with CFM: stopped by %s", newton_family[k], lk_stop_reason_name(st.stop_reason));
		for (int i = 0; i < 2; ++i)
			assert_double_equal(lk_problem_lambda(p)[i] * 1e-12, 1.0, 1e-9);
		assert_true(st.res_final < 1e-3); /* the rounding of 1e12 lambda */
		lk_problem_destroy(p);
	}
}

/* The monitor's growth rule runs every Newton iteration, not only when a tolerance or the history asks for
 * the merit: with the merit "modified" (sum |lambda_i| |w_i|, Erleben 2013 eq. 106), which grows along the
 * runaway of test_divergence_newton, a start with merit 1e-3 (lambda = (1e-3, 0)) is left behind by 1e8
 * once lambda reaches ~5e4, several iterations before lambda passes the divergence rule's 1e8. */
static void test_divergence_monitor_newton(void **state)
{
	(void)state;
	const double warm[2] = {1e-3, 0};
	int its[2];
	for (int k = 0; k < 2; ++k) {
		lk_problem *p = squeeze(0);
		assert_int_equal(lk_problem_set_lambda(p, warm, 2), LK_OK);
		lk_metrics m0;
		assert_int_equal(lk_problem_metrics(p, NULL, &m0), LK_OK);
		lk_solver_config c = tu_spec(k ? "newton-fischer:merit=modified" : "newton-fischer");
		assert_true(c.tol_abs == 0 && c.tol_rel == 0);
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_DIVERGED);
		assert_int_equal(st.used_best_iterate, 1);
		assert_all_finite(p, "newton-fischer");
		its[k] = st.iterations;
		if (k) {
			/* the best iterate by the merit "modified" is the start: every later one is further out */
			assert_lambda_is(p, warm, "newton-fischer:merit=modified");
			assert_double_equal(m0.modified, 1e-3 * 0.999, 1e-18);
			assert_true(st.modified_final <= m0.modified);
		}
		assert_true(st.res_final <= st.res_initial);
		lk_problem_destroy(p);
	}
	if (!(its[1] < its[0]))
		fail_msg("the monitor stopped after %d iterations, the divergence rule after %d", its[1], its[0]);
}

static lk_problem *boxstack(void)
{
	lk_gen_params g = lk_default_gen_params(LK_GEN_BOXSTACK);
	g.n = 10;
	g.mu = 0.5;
	lk_problem *p;
	char err[256];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	return p;
}

/* The merit "modified" (sum |lambda_i| |w_i|, Erleben 2013 eq. 106) is 0 at a cold start lambda = 0 whether
 * or not it solves the problem: no scale for the growth rule, which must not call the first iterates of a
 * converging solve "diverged". A = [2 1; 1 2], q = (-1000, -1000): the first PGS sweep gives lambda = (500,
 * 250) and w_0 = 250, a modified merit of 125,000 (over 1e8 times "0" and over 1); the solution is
 * lambda = (1000 / 3, 1000 / 3), which every method here reaches. */
static void test_divergence_modified_merit_cold(void **state)
{
	(void)state;
	const double A[4] = {2, 1, 1, 2}, q[2] = {-1000, -1000}, lo[2] = {0, 0}, hi[2] = {INFINITY, INFINITY};
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(p, 2, A, q, lo, hi, NULL, NULL), LK_OK);
	const char *specs[] = {"pgs:merit=modified,tol=1e-12,iters=200,warm=0",
	                       "amgs:merit=modified,tol=1e-12,iters=200,warm=0",
	                       "newton-fischer:merit=modified,iters=30,warm=0"};
	for (size_t k = 0; k < sizeof specs / sizeof specs[0]; ++k) {
		lk_solver_config c = tu_spec(specs[k]);
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		if (st.stop_reason == LK_STOP_DIVERGED)
			fail_msg("%s: stopped as diverged after %d iterations", specs[k], st.iterations);
		const double *l = lk_problem_lambda(p);
		assert_double_equal(l[0], 1000.0 / 3.0, 1e-6);
		assert_double_equal(l[1], 1000.0 / 3.0, 1e-6);
	}
	lk_problem_destroy(p);
}

/* AMGS with a too small alpha: c_i = gamma alpha A_ii -> 0 relaxes the free rows by 2 / (1 + alpha gamma)
 * -> 2, and the rows at a bound hardly at all (Miyamoto & Yamashita 2019 report instability at alpha = 0.1
 * on Pool 2). On a 10-box stack with friction the residual rises to 3.5 times the start's and stays
 * bounded: neither of the monitor's guards sees it, lk_solve's end check does. */
static void test_unstable_amgs_small_alpha(void **state)
{
	(void)state;
	const char *const specs[] = {"amgs:alpha=1e-4", "amsor:alpha=1e-4", "amgs-dense:alpha=1e-4"};
	for (int k = 0; k < 3; ++k) {
		lk_problem *p = boxstack();
		int n = lk_problem_row_count(p);
		double *start = calloc((size_t)n, sizeof(double));
		lk_solver_config c = tu_spec(specs[k]);
		c.max_iterations = 50;
		c.warm_start = 0;
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		if (st.stop_reason != LK_STOP_DIVERGED)
			fail_msg("%s: stopped by %s, RES %g -> %g", specs[k], lk_stop_reason_name(st.stop_reason),
			         st.res_initial, st.res_final);
		assert_int_equal(st.used_best_iterate, 1);
		/* no merit was evaluated on the way: the best iterate seen is the start */
		assert_lambda_is(p, start, specs[k]);
		assert_double_equal(st.res_final, st.res_initial, 0.0);
		assert_all_finite(p, specs[k]);
		free(start);
		lk_problem_destroy(p);
	}
}

/* The end guard judges a residual only above what rounding leaves: a chain of hinged links solved to
 * convergence (RES about 1e-17) and given one more sweep from there ends within rounding of where it began,
 * not "diverged" (before the floor, 2 of these 5 chains were: RES 1.4e-17 and 2.4e-17 twice as large after a
 * sweep in the metric's rounding). An unstable iteration far above rounding is still caught
 * (test_unstable_amgs_small_alpha). */
static void test_converged_is_not_diverged(void **state)
{
	(void)state;
	for (int n = 6; n <= 10; ++n) {
		lk_problem *p = tu_generate("chain", n, 0.0);
		lk_solver_config cfg = tu_spec("pgs:iters=20000");
		cfg.warm_start = 0;
		lk_stats st;
		assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
		assert_true(st.res_final < 1e-14);
		cfg = tu_spec("pgs:iters=1");
		for (int r = 0; r < 3; ++r) {
			assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
			assert_true(st.res_final < 1e-14);
			assert_int_not_equal(st.stop_reason, LK_STOP_DIVERGED);
		}
		lk_problem_destroy(p);
	}
}

/* measure=0 (the adapters' setting when no statistics are asked for) leaves out RES of the start and of
 * the result for the Gauss-Seidel methods without tolerance or history: the same lambda to the bit, NaN in
 * the statistics; a non-finite result is still caught and replaced by the start; anything that reads the
 * merits measures anyway, but PGS and PSOR under a tolerance take the result's RES from the check that
 * stopped them and measure no start. AMGS and AMSOR, which can run away, measure whatever measure says:
 * their end guard reads both, and the same solve must act the same with the statistics on or off. */
static void test_measure_off(void **state)
{
	(void)state;
	const char *const specs[] = {"pgs", "psor:w=1.3", "amgs", "amsor", "pgs:order=gsp"};
	for (int k = 0; k < 5; ++k) {
		const int guarded = k == 2 || k == 3;
		lk_problem *p = boxstack();
		const int n = lk_problem_row_count(p);
		double *on = malloc((size_t)n * sizeof(double));
		lk_solver_config c = tu_spec(specs[k]);
		c.max_iterations = 20;
		c.warm_start = 0;
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		assert_true(isfinite(st.res_initial) && isfinite(st.res_final));
		memcpy(on, lk_problem_lambda(p), (size_t)n * sizeof(double));
		c.measure = 0;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		assert_true(guarded ? isfinite(st.res_initial) && isfinite(st.res_final)
		                    : isnan(st.res_initial) && isnan(st.res_final));
		assert_int_equal(st.iterations, 20);
		assert_memory_equal(on, lk_problem_lambda(p), (size_t)n * sizeof(double));
		/* a tolerance reads the merit: the result measured; the start too, but for PGS and PSOR, which measure=0
		 * leaves without one as it does without a tolerance */
		const int sweeps_only = k != 2 && k != 3;
		c.tol_abs = 1e-300;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		assert_true(isfinite(st.res_final));
		assert_true(sweeps_only ? isnan(st.res_initial) : isfinite(st.res_initial));
		/* a tolerance met: the result's RES is the one of the check that stopped the solve, the iterate the
		 * same as with everything measured */
		c = tu_spec(specs[k]);
		c.max_iterations = 5000;
		c.warm_start = 0;
		c.tol_abs = 1e-2;
		c.check_every = 3;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		const double res_on = st.res_final;
		const int iters_on = st.iterations;
		memcpy(on, lk_problem_lambda(p), (size_t)n * sizeof(double));
		c.measure = 0;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		assert_int_equal(st.iterations, iters_on);
		assert_memory_equal(on, lk_problem_lambda(p), (size_t)n * sizeof(double));
		assert_true(st.res_final < 1e-2);
		assert_true(fabs(st.res_final - res_on) <= 1e-12 * res_on);
		assert_true(sweeps_only ? isnan(st.res_initial) && isnan(st.fischer_final) : isfinite(st.res_initial));
		free(on);
		lk_problem_destroy(p);

		const double warm[2] = {0.5, -0.25};
		p = overflow_problem(warm);
		c = tu_spec(specs[k]);
		c.measure = 0;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		if (st.stop_reason != LK_STOP_NONFINITE)
			fail_msg("%s, measure=0: stopped by %s", specs[k], lk_stop_reason_name(st.stop_reason));
		assert_lambda_is(p, warm, specs[k]);
		assert_all_finite(p, specs[k]);
		lk_problem_destroy(p);
	}
	/* PGS-SM works with the merits: measure=0 does not take them away */
	lk_problem *p = boxstack();
	lk_solver_config c = tu_spec("pgs-sm:measure=0");
	assert_int_equal(c.measure, 0);
	lk_stats st;
	assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
	assert_true(isfinite(st.res_initial) && isfinite(st.res_final) && st.res_final < st.res_initial);
	lk_problem_destroy(p);
}

/* With the merit evaluated every sweep the best iterate is the best of the history (here the start: the
 * unstable iteration never improves on it); and the tuned alpha on the same problem does not trip the
 * check. */
static void test_unstable_amgs_best_iterate(void **state)
{
	(void)state;
	lk_problem *p = boxstack();
	lk_solver_config c = tu_spec("amgs:alpha=1e-4");
	c.max_iterations = 50;
	c.warm_start = 0;
	c.tol_abs = 1e-14;
	lk_history_entry e[51];
	lk_history h = {e, 51, 0};
	lk_stats st;
	assert_int_equal(lk_solve(p, &c, &st, &h), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_DIVERGED);
	double best = e[0].res, last = e[h.count - 1].res;
	for (int i = 0; i < h.count; ++i)
		best = fmin(best, e[i].res);
	assert_true(last > 2.0 * e[0].res); /* the iteration itself ended far above its start */
	assert_double_equal(st.res_final, best, 0.0);
	assert_true(st.res_final <= st.res_initial);
	lk_problem_destroy(p);

	p = boxstack();
	c = tu_spec("amgs:alpha=0.3");
	c.max_iterations = 50;
	c.warm_start = 0;
	assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_ITERATIONS);
	assert_int_equal(st.used_best_iterate, 0);
	assert_true(st.res_final < 0.2 * st.res_initial);
	lk_problem_destroy(p);
}

/* ------------------------------------------------------------------------- PGS-SM's reduced system */

/* Four identical contact rows on one body with targets 0, 0.1, 0.2, 0.3 m/s: A = a 1 1^T is singular, and
 * with every row strictly inside its box the reduced system of Silcowitz et al. eq. (22), A_AA x = -w_A,
 * says x_0 + .. + x_3 = c_i / a for four different c_i: it has no solution, and CG on it runs along the null
 * space of A_AA. The subspace phase must be discarded (pgs_sm.c, "blown"), not handed back. best=0 so that
 * neither the method's nor lk_solve's best-iterate fall-back can hide a kept blow-up. */
static void test_reduced_system_cg(void **state)
{
	(void)state;
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	lk_body_def b = lk_default_body_def();
	b.u[2] = -1;
	b.inv_mass[0] = b.inv_mass[1] = b.inv_mass[2] = 1;
	b.inv_inertia[0] = b.inv_inertia[4] = b.inv_inertia[8] = 1;
	assert_int_equal(lk_problem_add_body(p, &b, NULL), LK_OK);
	for (int i = 0; i < 4; ++i) {
		lk_row_def r = lk_default_row_def();
		r.body[0] = 0;
		r.J[0][2] = 1;
		r.lo = 0;
		r.c = 0.1 * i;
		r.kind = LK_ROW_NORMAL;
		assert_int_equal(lk_problem_add_row(p, &r, NULL), LK_OK);
	}
	const double warm[4] = {0.1, 0.2, 0.3, 0.4};
	assert_int_equal(lk_problem_set_lambda(p, warm, 4), LK_OK);
	lk_solver_config c = tu_spec("pgs-sm:kpgs=1,ksm=5,best=0");
	lk_stats st;
	assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
	assert_true(st.subspace_steps > 0);
	assert_true(st.stop_reason != LK_STOP_NONE && st.stop_reason != LK_STOP_NONFINITE);
	assert_all_finite(p, "pgs-sm on an inconsistent face");
	assert_true(st.res_final <= st.res_initial);
	/* with the blown phases discarded, the PGS sweeps find the solution: lambda_3 = 1.3 (the largest target
	 * over A_33 = 1), the rest 0; kept, they leave lambda = 0 and RES six times the start's */
	tu_assert_complementarity(p, lk_problem_lambda(p), 1e-9);
	assert_double_equal(lk_problem_lambda(p)[3], 1.3, 1e-9);
	lk_problem_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nonfinite_gauss_seidel),
		cmocka_unit_test(test_nonfinite_newton),
		cmocka_unit_test(test_bad_diagonal_gauss_seidel),
		cmocka_unit_test(test_bad_diagonal_newton),
		cmocka_unit_test(test_divergence_monitor),
		cmocka_unit_test(test_divergence_modified_merit_cold),
		cmocka_unit_test(test_divergence_newton),
		cmocka_unit_test(test_divergence_monitor_newton),
		cmocka_unit_test(test_unstable_amgs_small_alpha),
		cmocka_unit_test(test_unstable_amgs_best_iterate),
		cmocka_unit_test(test_reduced_system_cg),
		cmocka_unit_test(test_measure_off),
		cmocka_unit_test(test_converged_is_not_diverged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The table of methods (common/src/method_table.c): every lk_method has its row, and a method that is not in the
 * table runs through the driver as the table's do, with the driver's guards and statistics decided by its traits. */
#include "test_util.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every value of lk_method has a row that names it and an entry point; nothing past the last. */
static void test_every_method_has_a_row(void **state)
{
	(void)state;
	for (int m = 0; m < LK_METHOD_COUNT; ++m) {
		const lk__method_desc *d = lk__method_desc_of((lk_method)m);
		assert_non_null(d);
		assert_int_equal(d->method, m);
		assert_non_null(d->solve);
		/* the spec parser's names are the table's */
		assert_string_equal(lk_method_name((lk_method)m), d->name);
		lk_solver_config cfg;
		assert_int_equal(lk_config_parse(d->name, &cfg, NULL, 0), LK_OK);
		assert_int_equal(cfg.method, m);
	}
	assert_null(lk__method_desc_of(LK_METHOD_COUNT));
	assert_null(lk__method_desc_of((lk_method)-1));
	/* the traits that replaced the driver's lists of methods */
	assert_true(lk__method_desc_of(LK_METHOD_PGS)->traits & LK__M_GAUSS_SEIDEL);
	assert_true(lk__method_desc_of(LK_METHOD_AUTO)->traits & LK__M_GAUSS_SEIDEL);
	assert_false(lk__method_desc_of(LK_METHOD_AUTO)->traits & LK__M_PLAIN_SWEEPS);
	assert_true(lk__method_desc_of(LK_METHOD_NEWTON_FISCHER)->traits & LK__M_ZERO_DIAGONAL_MATRIX);
	assert_false(lk__method_desc_of(LK_METHOD_APGD)->traits & LK__M_ZERO_DIAGONAL_MATRIX);
}

/* A method of a few lines: projected Jacobi, lambda_i <- mid(lo_i, lambda_i - w_i / A_ii, hi_i) for every row
 * at once from the same iterate, until the monitor says stop. */
static lk_status solve_jacobi(lk__ctx *c)
{
	const lk_problem *p = c->p;
	for (int it = 1;; ++it) {
		for (int i = 0; i < c->n; ++i)
			c->w[i] = lk__w(p, i, c->lambda, c->du);
		double change = 0.0;
		for (int i = 0; i < c->n; ++i) {
			double lo, hi;
			lk__bounds(&p->rows[i], c->lambda, &lo, &hi);
			const double next = lk__clamp(c->lambda[i] - c->w[i] / p->rows[i].diag, lo, hi);
			change = fmax(change, fabs(next - c->lambda[i]));
			c->lambda[i] = next;
		}
		lk__count(c, c->n, LK_WORK_SWEEP_ROW);
		c->iterations = it;
		c->stop = lk__monitor(c, it, change);
		if (c->stop != LK_STOP_NONE)
			return LK_OK;
	}
}

static const lk__method_desc jacobi = {LK_METHOD_PGS, "jacobi", solve_jacobi, 0, NULL};

/* A diagonal LCP: A = diag(2, 4, 1), q = (-2, 4, -3), bounds [0, inf) on the first two rows and [0, 1] on the
 * third: lambda = (1, 0, 1), w = (0, 4, -2) by hand. */
static lk_problem *diagonal_problem(double a11)
{
	const double A[9] = {a11, 0, 0, 0, 4, 0, 0, 0, 1};
	const double q[3] = {-2, 4, -3}, lo[3] = {0, 0, 0}, hi[3] = {INFINITY, INFINITY, 1};
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_non_null(p);
	assert_int_equal(lk_problem_set_dense(p, 3, A, q, lo, hi, NULL, NULL), LK_OK);
	return p;
}

/* The new method runs through the driver like a row of the table: its result, its iterations and stop reason
 * in the statistics, the tolerance read by the monitor, RES measured before and after. */
static void test_a_new_method_runs_through_the_driver(void **state)
{
	(void)state;
	lk_problem *p = diagonal_problem(2.0);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.warm_start = 0;
	cfg.tol_abs = 1e-12;
	lk_stats st;
	assert_int_equal(lk__solve_with(p, &cfg, &jacobi, &st, NULL), LK_OK);
	const double *l = lk_problem_lambda(p);
	/* one Jacobi step solves a diagonal problem; the second finds nothing left to change */
	assert_double_equal(l[0], 1.0, 1e-15);
	assert_double_equal(l[1], 0.0, 0.0);
	assert_double_equal(l[2], 1.0, 1e-15);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	assert_true(st.iterations >= 1 && st.iterations <= 2);
	assert_true(st.res_initial > 1.0);
	assert_true(st.res_final < 1e-12);
	/* the table's PGS gives the same answer through the same driver */
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_double_equal(lk_problem_lambda(p)[0], 1.0, 1e-15);
	lk_problem_destroy(p);
}

/* lk_solve validates a problem's rows once and again only after rows were added: a stack solved, then given a row
 * that no Gauss-Seidel update can solve (no Jacobian, no CFM: A_ii = 0), stops on it with lambda untouched. */
static void test_validation_after_new_rows(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 2, 0.5);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_not_equal(st.stop_reason, LK_STOP_BAD_DIAGONAL);
	lk_row_def d = lk_default_row_def();
	d.body[0] = 0;
	d.body[1] = LK_STATIC;
	d.lo = 0;
	assert_int_equal(lk_problem_add_row(p, &d, NULL), LK_OK);
	const int n = lk_problem_row_count(p);
	double *before = malloc(sizeof(double) * n);
	memcpy(before, lk_problem_lambda(p), sizeof(double) * n);
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_BAD_DIAGONAL);
	assert_memory_equal(lk_problem_lambda(p), before, sizeof(double) * n);
	free(before);
	lk_problem_destroy(p);
}

/* The driver's guards follow the traits: with none, a zero diagonal stops the solve before the method runs,
 * lambda untouched; with LK__M_ZERO_DIAGONAL_MATRIX the matrix form goes to the method. A descriptor without
 * an entry point is refused. */
static void test_guards_follow_the_traits(void **state)
{
	(void)state;
	lk_problem *p = diagonal_problem(0.0);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.warm_start = 0;
	cfg.max_iterations = 3;
	lk_stats st;
	for (int again = 0; again < 2; ++again) { /* the second from the validation the first made */
		assert_int_equal(lk__solve_with(p, &cfg, &jacobi, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_BAD_DIAGONAL);
		assert_int_equal(st.iterations, 0);
		for (int i = 0; i < 3; ++i)
			assert_true(lk_problem_lambda(p)[i] == 0.0);
	}
	/* the Newton methods' trait lets a zero diagonal of the matrix form through: the method runs (its
	 * division by A_11 = 0 gives a non-finite step, which the driver's end guard catches) */
	const lk__method_desc zero_ok = {LK_METHOD_PGS, "jacobi", solve_jacobi, LK__M_ZERO_DIAGONAL_MATRIX, NULL};
	assert_int_equal(lk__solve_with(p, &cfg, &zero_ok, &st, NULL), LK_OK);
	assert_true(st.iterations >= 1);
	assert_int_not_equal(st.stop_reason, LK_STOP_BAD_DIAGONAL);
	const lk__method_desc none = {LK_METHOD_PGS, "none", NULL, 0, NULL};
	assert_int_equal(lk__solve_with(p, &cfg, &none, &st, NULL), LK_ERR_UNSUPPORTED);
	assert_int_equal(lk__solve_with(p, &cfg, NULL, &st, NULL), LK_ERR_UNSUPPORTED);
	lk_problem_destroy(p);
}

/* A method added by its row alone (lk__method_add): lk_config_parse knows its name and the keys every method
 * takes, lk_solve runs it through the driver, lk_method_name and lk_config_format name it. A row without an
 * entry point, a name taken or one the spec syntax cannot hold are refused. */
static void test_a_row_added_is_a_method(void **state)
{
	(void)state;
	const lk_method m = lk__method_add(&jacobi);
	assert_int_equal(m, LK_METHOD_COUNT);
	assert_int_equal(lk__method_count(), LK_METHOD_COUNT + 1);
	assert_string_equal(lk_method_name(m), "jacobi");
	lk_solver_config cfg;
	char err[200];
	assert_int_equal(lk_config_parse("jacobi:iters=40,tol=1e-12,warm=0", &cfg, err, sizeof err), LK_OK);
	assert_int_equal(cfg.method, m);
	assert_int_equal(cfg.max_iterations, 40);
	char spec[200];
	assert_int_equal(lk_config_format(&cfg, spec, sizeof spec), LK_OK);
	assert_non_null(strstr(spec, "jacobi"));
	/* its own keys are the shared ones: a key of PGS's is refused, naming the method */
	assert_int_equal(lk_config_parse("jacobi:w=1.2", &cfg, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "jacobi"));
	assert_int_equal(lk_config_parse("jacobi:iters=40,tol=1e-12,warm=0", &cfg, NULL, 0), LK_OK);
	lk_problem *p = diagonal_problem(2.0);
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.method, m);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	assert_double_equal(lk_problem_lambda(p)[0], 1.0, 1e-15);
	assert_double_equal(lk_problem_lambda(p)[1], 0.0, 0.0);
	assert_double_equal(lk_problem_lambda(p)[2], 1.0, 1e-15);
	assert_true(st.res_final < 1e-12);
	lk_problem_destroy(p);
	/* refused: the name taken (its own, a library method's), no entry point, a name the spec cannot hold */
	assert_int_equal((int)lk__method_add(&jacobi), -1);
	const lk__method_desc pgs_again = {LK_METHOD_PGS, "pgs", solve_jacobi, 0, NULL};
	assert_int_equal((int)lk__method_add(&pgs_again), -1);
	const lk__method_desc no_entry = {LK_METHOD_PGS, "nothing", NULL, 0, NULL};
	assert_int_equal((int)lk__method_add(&no_entry), -1);
	const lk__method_desc bad_name = {LK_METHOD_PGS, "a:b", solve_jacobi, 0, NULL};
	assert_int_equal((int)lk__method_add(&bad_name), -1);
	assert_int_equal(lk__method_count(), LK_METHOD_COUNT + 1);
	/* a value past the rows is still no method */
	assert_null(lk__method_desc_of((lk_method)(LK_METHOD_COUNT + 1)));
	assert_int_equal(lk_config_validate(&(lk_solver_config){.method = (lk_method)(LK_METHOD_COUNT + 1)}, NULL, 0),
	                 LK_ERR_INVALID_ARGUMENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_method_has_a_row),
		cmocka_unit_test(test_a_new_method_runs_through_the_driver),
		cmocka_unit_test(test_guards_follow_the_traits),
		cmocka_unit_test(test_validation_after_new_rows),
		cmocka_unit_test(test_a_row_added_is_a_method),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

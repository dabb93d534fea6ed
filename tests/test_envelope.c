/* The envelope Cholesky of a row subset (common/src/envelope.c): against A_SS assembled here by hand from
 * the rows' J and M^-1 J^T, on a generated box stack (its four contacts per face make A semidefinite) and on
 * a random packing; the reverse Cuthill-McKee envelope of a stack is a band; the cost cap declines. */
#include "test_util.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A_ij = sum over the bodies rows i and j share of J_i,body . (M^-1 J_j^T)_body, plus the CFM on i = j */
static double *dense_subset(const lk_problem *p, const int *idx, int n)
{
	double *A = calloc((size_t)n * n, sizeof *A);
	for (int k = 0; k < n; ++k) {
		const lk__row *ri = &p->rows[idx[k]];
		for (int l = 0; l < n; ++l) {
			const lk__row *rj = &p->rows[idx[l]];
			double v = k == l ? ri->s : 0.0;
			int bi[2] = {ri->a, ri->b}, bj[2] = {rj->a, rj->b};
			for (int s = 0; s < 2; ++s)
				for (int t = 0; t < 2; ++t)
					if (bi[s] == bj[t] && bi[s] < p->nbodies)
						for (int m = 0; m < 6; ++m)
							v += ri->J[6 * s + m] * rj->MJ[6 * t + m];
			A[(size_t)k * n + l] = v;
		}
	}
	return A;
}

static double residual(const double *A, int n, const double *reg, const double *x, const double *b)
{
	double rr = 0.0;
	for (int k = 0; k < n; ++k) {
		double r = b[k] - reg[k] * x[k];
		for (int l = 0; l < n; ++l)
			r -= A[(size_t)k * n + l] * x[l];
		rr += r * r;
	}
	return sqrt(rr);
}

/* b = (A + R) x0 for a random x0 is consistent, singular A or not; the factor's x must reproduce b */
static void check_subset(lk_problem *p, const int *idx, int n, double reg_value, double tol)
{
	double *A = dense_subset(p, idx, n);
	double *reg = malloc((size_t)n * sizeof *reg), *x0 = malloc((size_t)n * sizeof *x0);
	double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
	lk__rng rng = {7};
	double bb = 0.0;
	for (int k = 0; k < n; ++k) {
		reg[k] = reg_value;
		x0[k] = lk__rng_uniform(&rng);
	}
	for (int k = 0; k < n; ++k) {
		b[k] = reg[k] * x0[k];
		for (int l = 0; l < n; ++l)
			b[k] += A[(size_t)k * n + l] * x0[l];
		bb += b[k] * b[k];
	}
	lk__arena a = {0};
	lk__env e;
	assert_int_equal(lk__env_analyse(&e, &a, p, idx, n, INFINITY), 0);
	lk__env_factor(&e, p, idx, reg);
	lk__env_solve(&e, b, x);
	for (int k = 0; k < n; ++k)
		assert_true(isfinite(x[k]));
	assert_true(residual(A, n, reg, x, b) <= tol * sqrt(bb));
	lk__arena_free(&a);
	free(A);
	free(reg);
	free(x0);
	free(b);
	free(x);
}

static void all_rows(const lk_problem *p, int *idx, int *n, int normal_only)
{
	*n = 0;
	for (int i = 0; i < p->nrows; ++i)
		if (!normal_only || !lk__is_friction(&p->rows[i]))
			idx[(*n)++] = i;
}

static void test_stack_normal_rows_semidefinite(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 20, 0.5);
	int *idx = malloc((size_t)p->nrows * sizeof *idx), n;
	all_rows(p, idx, &n, 1);
	/* four normal rows on a face carry three degrees of freedom: without regularization the factor finds
	 * one dependent row per face and still solves the consistent system */
	check_subset(p, idx, n, 0.0, 1e-9);
	lk__arena a = {0};
	lk__env e;
	assert_int_equal(lk__env_analyse(&e, &a, p, idx, n, INFINITY), 0);
	lk__env_factor(&e, p, idx, NULL);
	assert_true(e.ndead >= 19 && e.ndead <= 21);
	lk__arena_free(&a);
	free(idx);
	lk_problem_destroy(p);
}

static void test_stack_all_rows_regularized(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 20, 0.5);
	int *idx = malloc((size_t)p->nrows * sizeof *idx), n;
	all_rows(p, idx, &n, 0);
	check_subset(p, idx, n, 1e-6, 1e-8);
	free(idx);
	lk_problem_destroy(p);
}

/* reverse Cuthill-McKee on a stack: every row's envelope reaches back at most over its own contact group
 * and the group below (two groups of rows on one box), whatever order the rows came in */
static void test_stack_envelope_is_a_band(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 30, 0.5);
	int *idx = malloc((size_t)p->nrows * sizeof *idx), n;
	all_rows(p, idx, &n, 0);
	int per_face = n / 30;
	/* reversed input order: the band must come from the ordering, not from the generator */
	for (int i = 0, j = n - 1; i < j; ++i, --j) {
		int t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
	}
	lk__arena a = {0};
	lk__env e;
	assert_int_equal(lk__env_analyse(&e, &a, p, idx, n, INFINITY), 0);
	int hmax = 0;
	for (int q = 0; q < n; ++q)
		if (q - e.first[q] > hmax)
			hmax = q - e.first[q];
	assert_true(hmax < 2 * per_face);
	assert_true(e.entries <= (size_t)n * 2 * per_face);
	/* a cap below the cost declines before assembling */
	assert_int_equal(lk__env_analyse(&e, &a, p, idx, n, e.macs * 0.5), 1);
	lk__arena_free(&a);
	free(idx);
	lk_problem_destroy(p);
}

static void test_packing_subset(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("packing", 60, 0.3);
	int *idx = malloc((size_t)p->nrows * sizeof *idx), n = 0;
	/* every other row: a subset whose rows are not contiguous in the problem */
	for (int i = 0; i < p->nrows; i += 2)
		idx[n++] = i;
	check_subset(p, idx, n, 1e-8, 1e-8);
	free(idx);
	lk_problem_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_normal_rows_semidefinite),
		cmocka_unit_test(test_stack_all_rows_regularized),
		cmocka_unit_test(test_stack_envelope_is_a_band),
		cmocka_unit_test(test_packing_subset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The Krylov solvers of the Newton methods and PGS-SM: restarted GMRES and CG on small systems with known
 * solutions, their behaviour on singular systems (finite results, no NaN), and the carved scratch arena. */
#include "test_util.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct dense_op {
	int n;
	const double *A; /* row-major */
	int calls;
} dense_op;

static void dense_mv(void *user, const double *x, double *y)
{
	dense_op *d = user;
	++d->calls;
	for (int i = 0; i < d->n; ++i) {
		double s = 0;
		for (int j = 0; j < d->n; ++j)
			s += d->A[i * d->n + j] * x[j];
		y[i] = s;
	}
}

static double resid(const dense_op *d, const double *b, const double *x)
{
	double s = 0;
	for (int i = 0; i < d->n; ++i) {
		double r = b[i];
		for (int j = 0; j < d->n; ++j)
			r -= d->A[i * d->n + j] * x[j];
		s += r * r;
	}
	return sqrt(s);
}

static double norm(int n, const double *v)
{
	double s = 0;
	for (int i = 0; i < n; ++i)
		s += v[i] * v[i];
	return sqrt(s);
}

/* A hand-checked 3 x 3 non-symmetric system: A x = b with x = (1, -2, 3). GMRES in exact arithmetic
 * terminates in n = 3 steps. */
static void test_gmres_small_exact(void **state)
{
	(void)state;
	const double A[9] = {4, 1, 0, -2, 5, 1, 1, 0, 3};
	const double xs[3] = {1, -2, 3};
	double b[3] = {4 * 1 + 1 * -2 + 0, -2 * 1 + 5 * -2 + 1 * 3, 1 * 1 + 0 + 3 * 3}; /* (2, -9, 10) */
	assert_double_equal(b[0], 2, 0);
	assert_double_equal(b[1], -9, 0);
	assert_double_equal(b[2], 10, 0);
	dense_op d = {3, A, 0};
	double x[3] = {0, 0, 0};
	lk__arena ar = {0};
	lk__krylov_result r;
	assert_int_equal(lk__gmres(&ar, 3, dense_mv, &d, b, x, 1e-14, 30, 100, &r), LK_OK);
	assert_true(r.converged);
	assert_true(r.iterations <= 3);
	for (int i = 0; i < 3; ++i)
		assert_double_equal(x[i], xs[i], 1e-12);
	assert_true(r.residual <= 1e-14 * norm(3, b));
	assert_double_equal(r.residual, resid(&d, b, x), 1e-13);
	lk__arena_free(&ar);
}

/* Restarted GMRES(m) with m much smaller than n still converges on a non-symmetric, diagonally dominant
 * system, and the reported residual is the true one. */
static void test_gmres_restarted(void **state)
{
	(void)state;
	int n = 60;
	double *A = calloc((size_t)n * n, sizeof(double)), *xs = malloc(sizeof(double) * n);
	double *b = malloc(sizeof(double) * n), *x = calloc((size_t)n, sizeof(double));
	assert_true(A && xs && b && x);
	for (int i = 0; i < n; ++i) {
		A[i * n + i] = 4.0 + 0.1 * (i % 7);
		if (i > 0)
			A[i * n + i - 1] = -1.3;
		if (i + 1 < n)
			A[i * n + i + 1] = -0.6;
		if (i + 7 < n)
			A[i * n + i + 7] = 0.4;
		xs[i] = sin(0.3 * i) + 0.1 * i;
	}
	dense_op d = {n, A, 0};
	dense_mv(&d, xs, b);
	lk__arena ar = {0};
	lk__krylov_result r;
	assert_int_equal(lk__gmres(&ar, n, dense_mv, &d, b, x, 1e-12, 5, 1000, &r), LK_OK);
	assert_true(r.converged);
	assert_true(r.iterations > 5); /* it had to restart */
	assert_true(resid(&d, b, x) <= 1e-12 * norm(n, b) * 1.0001);
	assert_double_equal(r.residual, resid(&d, b, x), 1e-12 * norm(n, b));
	assert_true(tu_max_diff(x, xs, n) < 1e-10);

	/* the iteration cap holds, and the start vector is used: starting at the solution costs nothing */
	memset(x, 0, sizeof(double) * n);
	assert_int_equal(lk__gmres(&ar, n, dense_mv, &d, b, x, 1e-14, 5, 7, &r), LK_OK);
	assert_true(r.iterations <= 7);
	assert_false(r.converged);
	memcpy(x, xs, sizeof(double) * n);
	assert_int_equal(lk__gmres(&ar, n, dense_mv, &d, b, x, 1e-10, 5, 100, &r), LK_OK);
	assert_int_equal(r.iterations, 0);
	assert_true(r.converged);
	free(A);
	free(xs);
	free(b);
	free(x);
	lk__arena_free(&ar);
}

/* CG on an SPD system (1D Laplacian plus a shift), with and without the Jacobi preconditioner. */
static void test_cg_spd(void **state)
{
	(void)state;
	int n = 40;
	double *A = calloc((size_t)n * n, sizeof(double)), *xs = malloc(sizeof(double) * n);
	double *b = malloc(sizeof(double) * n), *x = calloc((size_t)n, sizeof(double));
	double *inv = malloc(sizeof(double) * n);
	assert_true(A && xs && b && x && inv);
	for (int i = 0; i < n; ++i) {
		A[i * n + i] = 2.0 + 0.5 * (i % 3);
		if (i > 0)
			A[i * n + i - 1] = A[(i - 1) * n + i] = -1.0;
		xs[i] = cos(0.2 * i);
		inv[i] = 1.0 / A[i * n + i];
	}
	dense_op d = {n, A, 0};
	dense_mv(&d, xs, b);
	lk__arena ar = {0};
	lk__krylov_result r;
	assert_int_equal(lk__cg(&ar, n, dense_mv, &d, NULL, b, x, 1e-12, 200, &r), LK_OK);
	assert_true(r.converged);
	assert_true(tu_max_diff(x, xs, n) < 1e-9);
	memset(x, 0, sizeof(double) * n);
	assert_int_equal(lk__cg(&ar, n, dense_mv, &d, inv, b, x, 1e-12, 200, &r), LK_OK);
	assert_true(r.converged);
	assert_true(tu_max_diff(x, xs, n) < 1e-9);
	free(A);
	free(xs);
	free(b);
	free(x);
	free(inv);
	lk__arena_free(&ar);
}

/* GMRES and CG agree on an SPD system. */
static void test_gmres_matches_cg(void **state)
{
	(void)state;
	int n = 25;
	double *A = calloc((size_t)n * n, sizeof(double)), *b = malloc(sizeof(double) * n);
	double *x1 = calloc((size_t)n, sizeof(double)), *x2 = calloc((size_t)n, sizeof(double));
	assert_true(A && b && x1 && x2);
	for (int i = 0; i < n; ++i) {
		for (int j = 0; j < n; ++j)
			A[i * n + j] = 1.0 / (1.0 + abs(i - j)); /* symmetric, diagonally dominant enough to be PD */
		A[i * n + i] += 3.0;
		b[i] = (i % 2 ? 1.0 : -0.5) * (1.0 + i);
	}
	dense_op d = {n, A, 0};
	lk__arena ar = {0};
	lk__krylov_result r1, r2;
	assert_int_equal(lk__cg(&ar, n, dense_mv, &d, NULL, b, x1, 1e-13, 500, &r1), LK_OK);
	assert_int_equal(lk__gmres(&ar, n, dense_mv, &d, b, x2, 1e-13, 10, 500, &r2), LK_OK);
	assert_true(r1.converged && r2.converged);
	assert_true(tu_max_diff(x1, x2, n) < 1e-10);
	free(A);
	free(b);
	free(x1);
	free(x2);
	lk__arena_free(&ar);
}

/* Singular systems with b outside the range: no NaN, a finite least-squares-like x, and the solver stops
 * by itself long before its iteration cap. */
static void test_singular_no_nan(void **state)
{
	(void)state;
	/* rank one: A = u u^T, b = e_0 - e_1 is not in its range */
	int n = 6;
	double A[36], b[6] = {1, -1, 0, 0, 0, 0}, u[6] = {1, 1, 1, 1, 1, 1}, x[6] = {0};
	for (int i = 0; i < n; ++i)
		for (int j = 0; j < n; ++j)
			A[i * n + j] = u[i] * u[j];
	dense_op d = {n, A, 0};
	lk__arena ar = {0};
	lk__krylov_result r;
	assert_int_equal(lk__gmres(&ar, n, dense_mv, &d, b, x, 1e-12, 3, 10000, &r), LK_OK);
	for (int i = 0; i < n; ++i)
		assert_true(isfinite(x[i]));
	assert_false(r.converged);
	assert_true(r.iterations < 100);
	assert_double_equal(r.residual, sqrt(2.0), 1e-12); /* b is orthogonal to the range of A */

	/* the zero matrix: nothing to do, x stays finite (and zero) */
	memset(A, 0, sizeof A);
	memset(x, 0, sizeof x);
	assert_int_equal(lk__gmres(&ar, n, dense_mv, &d, b, x, 1e-12, 3, 10000, &r), LK_OK);
	for (int i = 0; i < n; ++i)
		assert_double_equal(x[i], 0.0, 0.0);
	assert_false(r.converged);
	assert_true(r.breakdown);
	memset(x, 0, sizeof x);
	assert_int_equal(lk__cg(&ar, n, dense_mv, &d, NULL, b, x, 1e-12, 10000, &r), LK_OK);
	for (int i = 0; i < n; ++i)
		assert_double_equal(x[i], 0.0, 0.0);
	assert_true(r.breakdown);
	lk__arena_free(&ar);
}

/* The carved scratch covers a GMRES and a CG call: the sub-arena never grows a block of its own, and
 * resetting it gives the same memory back. */
static void test_carved_scratch(void **state)
{
	(void)state;
	int n = 300, m = 40;
	double *A = calloc((size_t)n * n, sizeof(double)), *b = malloc(sizeof(double) * n);
	double *x = calloc((size_t)n, sizeof(double));
	assert_true(A && b && x);
	for (int i = 0; i < n; ++i) {
		A[i * n + i] = 3.0;
		if (i > 0)
			A[i * n + i - 1] = A[(i - 1) * n + i] = -1.0;
		b[i] = 1.0;
	}
	dense_op d = {n, A, 0};
	lk__arena parent = {0}, sub;
	size_t bytes = lk__gmres_scratch_bytes(n, m);
	assert_true(bytes >= lk__cg_scratch_bytes(n));
	assert_int_equal(lk__arena_carve(&parent, bytes, &sub), LK_OK);
	lk__arena_block *carved = sub.head;
	lk__krylov_result r;
	for (int rep = 0; rep < 3; ++rep) {
		lk__arena_reset(&sub);
		memset(x, 0, sizeof(double) * n);
		assert_int_equal(lk__gmres(&sub, n, dense_mv, &d, b, x, 1e-10, m, 500, &r), LK_OK);
		assert_true(r.converged);
		assert_ptr_equal(sub.head, carved);
		assert_null(sub.head->next);
		lk__arena_reset(&sub);
		memset(x, 0, sizeof(double) * n);
		assert_int_equal(lk__cg(&sub, n, dense_mv, &d, NULL, b, x, 1e-10, 500, &r), LK_OK);
		assert_ptr_equal(sub.head, carved);
	}
	/* an oversized request grows the sub-arena; release frees exactly that block */
	assert_non_null(lk__arena_alloc(&sub, bytes * 2));
	assert_ptr_not_equal(sub.head, carved);
	lk__arena_carve_release(&sub);
	assert_null(sub.head);
	lk__arena_free(&parent);
	free(A);
	free(b);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gmres_small_exact),
		cmocka_unit_test(test_gmres_restarted),
		cmocka_unit_test(test_cg_spd),
		cmocka_unit_test(test_gmres_matches_cg),
		cmocka_unit_test(test_singular_no_nan),
		cmocka_unit_test(test_carved_scratch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

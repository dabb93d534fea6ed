#include "test_util.h"
#include "lcpkit/generate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double tu_rng_sym(lk__rng *r)
{
	return lk__rng_uniform(r) * 2.0 - 1.0;
}

lk_problem *tu_random_rows(int nbodies, int nrows, uint64_t seed, double mu)
{
	lk__rng s = {seed};
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	assert_non_null(p);
	for (int b = 0; b < nbodies; ++b) {
		lk_body_def d = lk_default_body_def();
		double m = 0.5 + 2.0 * fabs(tu_rng_sym(&s));
		for (int k = 0; k < 3; ++k) {
			d.u[k] = tu_rng_sym(&s);
			d.u[3 + k] = tu_rng_sym(&s);
			d.inv_mass[k] = 1.0 / m;
			d.inv_inertia[4 * k] = 1.0 / (0.2 + fabs(tu_rng_sym(&s)));
		}
		assert_int_equal(lk_problem_add_body(p, &d, NULL), LK_OK);
	}
	int normal = -1;
	for (int r = 0; r < nrows; ++r) {
		lk_row_def d = lk_default_row_def();
		d.body[0] = (int)(lk__rng_next(&s) % (uint64_t)nbodies);
		d.body[1] = (int)(lk__rng_next(&s) % (uint64_t)(nbodies + 1)) - 1;
		if (d.body[1] == d.body[0])
			d.body[1] = LK_STATIC;
		for (int k = 0; k < 12; ++k)
			d.J[k / 6][k % 6] = tu_rng_sym(&s);
		d.c = tu_rng_sym(&s);
		d.lo = 0.0;
		d.hi = INFINITY;
		d.kind = LK_ROW_NORMAL;
		if (mu > 0) {
			if (r % 3 == 0) {
				normal = r;
			} else {
				lk_row_def n;
				lk_problem_get_row(p, normal, &n);
				d.body[0] = n.body[0];
				d.body[1] = n.body[1];
				d.findex = normal;
				d.mu = mu;
				d.kind = LK_ROW_FRICTION;
			}
		}
		assert_int_equal(lk_problem_add_row(p, &d, NULL), LK_OK);
	}
	return p;
}

lk_problem *tu_random_spd_matrix(int n, uint64_t seed, double shift)
{
	lk__rng s = {seed};
	double *B = malloc((size_t)n * n * sizeof(double)), *A = malloc((size_t)n * n * sizeof(double));
	double *q = malloc((size_t)n * sizeof(double));
	assert_true(B && A && q);
	for (int i = 0; i < n * n; ++i)
		B[i] = tu_rng_sym(&s);
	for (int i = 0; i < n; ++i) {
		q[i] = tu_rng_sym(&s) * n;
		for (int j = 0; j < n; ++j) {
			double a = i == j ? shift : 0.0;
			for (int k = 0; k < n; ++k)
				a += B[i * n + k] * B[j * n + k];
			A[i * n + j] = a;
		}
	}
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_non_null(p);
	assert_int_equal(lk_problem_set_dense(p, n, A, q, NULL, NULL, NULL, NULL), LK_OK);
	free(A);
	free(B);
	free(q);
	return p;
}

void tu_assert_complementarity(lk_problem *p, const double *lambda, double tol)
{
	int n = lk_problem_row_count(p);
	double *w = malloc(((size_t)n + 1) * sizeof(double));
	assert_non_null(w);
	assert_int_equal(lk_problem_apply(p, lambda, w, 1), LK_OK);
	for (int i = 0; i < n; ++i) {
		double lo, hi, mu;
		int f;
		assert_int_equal(lk_problem_get_bounds(p, i, &lo, &hi, &mu, &f, NULL), LK_OK);
		if (f >= 0) {
			hi = mu * fabs(lambda[f]);
			lo = -hi;
		}
		double scale = 1.0 + fabs(lambda[i]);
		if (lambda[i] < lo - tol * scale || lambda[i] > hi + tol * scale) {
			fail_msg("row %d: lambda %g outside [%g, %g]", i, lambda[i], lo, hi);
		}
		int at_lo = lambda[i] <= lo + tol * scale, at_hi = lambda[i] >= hi - tol * scale;
		if (at_lo && at_hi)
			continue; /* lo == hi: any w */
		if (at_lo && w[i] < -tol)
			fail_msg("row %d: at lower bound with w = %g < 0", i, w[i]);
		if (at_hi && w[i] > tol)
			fail_msg("row %d: at upper bound with w = %g > 0", i, w[i]);
		if (!at_lo && !at_hi && fabs(w[i]) > tol)
			fail_msg("row %d: interior lambda %g with w = %g != 0", i, lambda[i], w[i]);
	}
	free(w);
}

double tu_max_diff(const double *a, const double *b, int n)
{
	double m = 0;
	for (int i = 0; i < n; ++i)
		if (!(fabs(a[i] - b[i]) <= m))
			m = fabs(a[i] - b[i]);
	return m;
}

const char *tu_data_path(const char *name)
{
	static char buf[4096];
	const char *dir = getenv("LK_TEST_DATA");
	snprintf(buf, sizeof buf, "%s/%s", dir ? dir : "tests/data", name);
	return buf;
}

void tu_assert_close(double a, double b, double eps, const char *file, int line)
{
	if (!(fabs(a - b) <= eps)) {
		print_error("%.17g != %.17g (difference %.3g > %.3g)\n", a, b, fabs(a - b), eps);
		_fail(file, line);
	}
}

lk_solver_config tu_spec(const char *spec)
{
	lk_solver_config c;
	char err[256];
	if (lk_config_parse(spec, &c, err, sizeof err) != LK_OK)
		fail_msg("spec '%s': %s", spec, err);
	return c;
}

lk_problem *tu_generate(const char *kind, int n, double mu)
{
	int k = lk_gen_kind_from_name(kind);
	if (k < 0)
		fail_msg("no generator '%s'", kind);
	lk_gen_params g = lk_default_gen_params((lk_gen_kind)k);
	g.n = n;
	g.mu = mu;
	lk_problem *p = NULL;
	char err[256];
	if (lk_generate(&g, &p, err, sizeof err) != LK_OK)
		fail_msg("%s: %s", kind, err);
	return p;
}

/* A copy of p through the public API: new body k is body body_from[k] (NULL: as they are), new row k is row
 * row_from[k] (NULL: as they are), the rows' bodies and friction rows' normal rows renumbered to match; the points 0
 * with zero_points; row_scale as tu_copy_problem says. Validated. */
static lk_problem *copy_problem(const lk_problem *p, const int *body_from, const int *row_from, int zero_points,
                                const double *row_scale)
{
	const int nb = lk_problem_body_count(p), n = lk_problem_row_count(p);
	int *to = malloc(((size_t)nb + 1) * sizeof *to), *at = malloc(((size_t)n + 1) * sizeof *at);
	assert_non_null(to);
	assert_non_null(at);
	for (int b = 0; b < nb; ++b)
		to[body_from ? body_from[b] : b] = b;
	for (int k = 0; k < n; ++k)
		at[row_from ? row_from[k] : k] = k;
	lk_problem *q = lk_problem_create(LK_FORM_ROWS);
	assert_non_null(q);
	for (int b = 0; b < nb; ++b)
		assert_int_equal(lk_problem_add_body(q, lk_problem_body(p, body_from ? body_from[b] : b), NULL), LK_OK);
	for (int k = 0; k < n; ++k) {
		const int i = row_from ? row_from[k] : k;
		lk_row_def d;
		assert_int_equal(lk_problem_get_row(p, i, &d), LK_OK);
		for (int s = 0; s < 2; ++s)
			if (d.body[s] != LK_STATIC)
				d.body[s] = to[d.body[s]];
		if (zero_points)
			d.point[0] = d.point[1] = d.point[2] = 0.0;
		if (row_scale) {
			const double sc = row_scale[i];
			for (int c = 0; c < 12; ++c)
				d.J[c / 6][c % 6] *= sc;
			d.c *= sc;
			d.s *= sc * sc;
			d.lo /= sc;
			d.hi /= sc;
			if (d.findex >= 0)
				d.mu *= row_scale[d.findex] / sc;
		}
		if (d.findex >= 0)
			d.findex = at[d.findex];
		assert_int_equal(lk_problem_add_row(q, &d, NULL), LK_OK);
	}
	assert_int_equal(lk_problem_validate(q), LK_OK);
	free(to);
	free(at);
	return q;
}

lk_problem *tu_copy_problem(const lk_problem *p, const int *from, int zero_points, const double *row_scale)
{
	return copy_problem(p, from, NULL, zero_points, row_scale);
}

lk_problem *tu_permute_rows(const lk_problem *p, const int *order)
{
	return copy_problem(p, NULL, order, 0, NULL);
}

static int by_value(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double tu_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, by_value);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int tu_assert_light_gate(lk_problem *p, const char *spec, const char *plain, double tol, const char *label)
{
	const int n = lk_problem_row_count(p);
	lk_solver_config c = tu_spec(spec);
	lk_stats gated, every, st;
	assert_int_equal(lk_solve(p, &c, &gated, NULL), LK_OK);
	assert_int_equal(gated.stop_reason, LK_STOP_ABSOLUTE);
	assert_true(gated.fc3d_final < tol);
	double *got = malloc((size_t)n * sizeof(double));
	assert_non_null(got);
	memcpy(got, lk_problem_lambda(p), (size_t)n * sizeof(double));
	const int cap = 200000;
	lk_history h = {calloc(cap, sizeof(lk_history_entry)), cap, 0};
	assert_non_null(h.entries);
	assert_int_equal(lk_solve(p, &c, &every, &h), LK_OK);
	assert_int_equal(every.stop_reason, LK_STOP_ABSOLUTE);
	print_message("%s: %d sweeps gated, %d checked after every sweep\n", label, gated.iterations, every.iterations);
	const int later = every.iterations / 4 > 4 ? every.iterations / 4 : 4;
	assert_true(gated.iterations >= every.iterations && gated.iterations <= every.iterations + later + 1);
	char s[160];
	snprintf(s, sizeof s, plain, gated.iterations);
	lk_solver_config d = tu_spec(s);
	assert_int_equal(lk_solve(p, &d, &st, NULL), LK_OK);
	assert_int_equal(st.iterations, gated.iterations);
	assert_memory_equal(lk_problem_lambda(p), got, (size_t)n * sizeof(double));
	free(h.entries);
	free(got);
	return gated.iterations;
}

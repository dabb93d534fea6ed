/* The production row kernels against their plain scalar references: lk__row_w (tree-summed, two lanes) vs
 * lk__row_w_ref, lk__row_apply vs lk__row_apply_ref (bitwise), the branch-free lk__clamp vs the textbook
 * mid(), and the production PGS sweep (division-free, branch-free, prefetching) vs lk__pgs_sweep_ref, on
 * both problem forms, natural and permuted orders, PGS and PSOR; plus determinism and the NaN guard. */
#include "test_util.h"
#include "internal.h"
#include "lcpkit/generate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void fill_du(lk_problem *p, uint64_t seed)
{
	lk__rng s = {seed};
	for (int k = 0; k < LK_DU_STRIDE * p->nbodies; ++k)
		p->du[k] = tu_rng_sym(&s) * 10.0;
	memset(p->du + LK_DU_STRIDE * (size_t)p->nbodies, 0, LK_DU_STRIDE * sizeof(double));
}

/* w from the tree-summed kernel agrees with the chain of the reference to rounding: the difference is within
 * a few ulps of the sum of the magnitudes of the terms. */
static void test_row_w_matches_reference(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(40, 300, 11, 0.5);
	fill_du(p, 3);
	lk__rng s = {5};
	int differ = 0;
	for (int i = 0; i < p->nrows; ++i) {
		const lk__row *r = &p->rows[i];
		double l = tu_rng_sym(&s);
		double w = lk__row_w(r, p->du, l), wr = lk__row_w_ref(r, p->du, l);
		const double *da = p->du + LK_DU_STRIDE * (size_t)r->a, *db = p->du + LK_DU_STRIDE * (size_t)r->b;
		double mag = fabs(r->q) + fabs(r->s * l);
		for (int k = 0; k < 6; ++k)
			mag += fabs(r->J[k] * da[k]) + fabs(r->J[6 + k] * db[k]);
		if (!(fabs(w - wr) <= 8 * 2.220446049250313e-16 * mag))
			fail_msg("row %d: w = %.17g, reference %.17g (terms %.3g)", i, w, wr, mag);
		differ += w != wr;
	}
	/* the two summation orders are different computations: some rows must round differently, or the test
	 * would not be testing the reordered kernel */
	assert_true(differ > 0);
	lk_problem_destroy(p);
}

static void test_row_apply_bitwise(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(30, 200, 17, 0.0);
	size_t nd = LK_DU_STRIDE * ((size_t)p->nbodies + 1);
	double *a = malloc(nd * sizeof *a), *b = malloc(nd * sizeof *b);
	assert_true(a && b);
	fill_du(p, 9);
	memcpy(a, p->du, nd * sizeof *a);
	memcpy(b, p->du, nd * sizeof *b);
	lk__rng s = {1};
	for (int i = 0; i < p->nrows; ++i) {
		double dl = tu_rng_sym(&s) * 3.0;
		lk__row_apply(&p->rows[i], a, dl);
		lk__row_apply_ref(&p->rows[i], b, dl);
	}
	assert_memory_equal(a, b, nd * sizeof *a);
	/* the static slot stays zero */
	for (int k = 0; k < 6; ++k)
		assert_true(a[LK_DU_STRIDE * (size_t)p->nbodies + k] == 0.0);
	free(a);
	free(b);
	lk_problem_destroy(p);
}

static double mid_textbook(double x, double lo, double hi)
{
	return x < lo ? lo : (x > hi ? hi : x);
}

static void test_clamp_matches_textbook(void **state)
{
	(void)state;
	const double v[] = {-INFINITY, -3.5, -1.0, -0.0, 0.0, 1e-300, 0.25, 1.0, 7.0, INFINITY};
	const int nv = (int)(sizeof v / sizeof v[0]);
	for (int i = 0; i < nv; ++i)
		for (int j = 0; j < nv; ++j)
			for (int k = 0; k < nv; ++k) {
				double x = v[i], lo = v[j], hi = v[k];
				if (lo > hi)
					continue;
				double a = lk__clamp(x, lo, hi), b = mid_textbook(x, lo, hi);
				if (memcmp(&a, &b, sizeof a) != 0)
					fail_msg("clamp(%g, %g, %g) = %g, textbook %g", x, lo, hi, a, b);
			}
	assert_true(isnan(lk__clamp(NAN, 0.0, 1.0)));
	assert_true(isnan(lk__clamp(NAN, -INFINITY, INFINITY)));
	assert_true(lk__clamp(0.5, NAN, NAN) == 0.5); /* a friction row whose normal impulse is NaN */
}

/* A solve context over p's own lambda and du, as lk_solve sets it up, from lambda = 0. */
static void ctx_init(lk__ctx *c, lk_problem *p)
{
	memset(c, 0, sizeof *c);
	c->p = p;
	c->n = p->nrows;
	c->lambda = p->lambda;
	c->du = p->du;
	memset(p->lambda, 0, (size_t)p->nrows * sizeof(double));
	if (p->form == LK_FORM_ROWS)
		lk__recompute_du(p, p->lambda, p->du);
}

typedef double (*sweep_fn)(lk__ctx *, const int *, int, double);

/* Runs `sweeps` sweeps of fn on p from zero; lambda out (n entries), returns the last sweep's max change. */
static double run(lk_problem *p, sweep_fn fn, const int *perm, double w, int sweeps, double *out)
{
	lk__ctx c;
	ctx_init(&c, p);
	double ch = 0;
	for (int k = 0; k < sweeps; ++k)
		ch = fn(&c, perm, p->nrows, w);
	memcpy(out, p->lambda, (size_t)p->nrows * sizeof *out);
	assert_true(c.row_updates == (int64_t)sweeps * p->nrows);
	return ch;
}

static double max_abs(const double *x, int n)
{
	double m = 0;
	for (int i = 0; i < n; ++i)
		m = fmax(m, fabs(x[i]));
	return m;
}

/* The production sweep follows the reference: after one sweep they agree to rounding, and after many both
 * reach the same solution (the LCP of an SPD A has one). */
static void check_sweeps(lk_problem *p, const int *perm, double w, int many)
{
	int n = p->nrows;
	double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
	assert_true(a && b);
	double ca = run(p, lk__pgs_sweep, perm, w, 1, a), cb = run(p, lk__pgs_sweep_ref, perm, w, 1, b);
	double scale = fmax(1.0, max_abs(b, n));
	if (!(tu_max_diff(a, b, n) <= 1e-12 * scale))
		fail_msg("one sweep: production and reference differ by %g (scale %g)", tu_max_diff(a, b, n), scale);
	assert_double_equal(ca, cb, 1e-12 * scale);
	run(p, lk__pgs_sweep, perm, w, many, a);
	run(p, lk__pgs_sweep_ref, perm, w, many, b);
	scale = fmax(1.0, max_abs(b, n));
	if (!(tu_max_diff(a, b, n) <= 1e-8 * scale))
		fail_msg("%d sweeps: production and reference differ by %g (scale %g)", many, tu_max_diff(a, b, n), scale);
	tu_assert_complementarity(p, a, 1e-6 * scale);
	free(a);
	free(b);
}

static void test_sweep_matches_reference_rows(void **state)
{
	(void)state;
	/* fewer rows than 6 x bodies: A is SPD, the solution unique */
	lk_problem *p = tu_random_rows(60, 200, 23, 0.0);
	check_sweeps(p, NULL, 1.0, 3000);
	check_sweeps(p, NULL, 1.3, 2000);
	int *perm = malloc(sizeof(int) * (size_t)p->nrows);
	assert_non_null(perm);
	for (int i = 0; i < p->nrows; ++i)
		perm[i] = p->nrows - 1 - i;
	check_sweeps(p, perm, 1.0, 3000);
	free(perm);
	lk_problem_destroy(p);
}

static void test_sweep_matches_reference_friction(void **state)
{
	(void)state;
	/* a generated box stack: normal rows with two friction rows each, bounds from the normal impulse */
	lk_problem *p = tu_generate("boxstack", 4, 0.5);
	int n = p->nrows;
	double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
	assert_true(a && b);
	run(p, lk__pgs_sweep, NULL, 1.0, 1, a);
	run(p, lk__pgs_sweep_ref, NULL, 1.0, 1, b);
	assert_true(tu_max_diff(a, b, n) <= 1e-12 * fmax(1.0, max_abs(b, n)));
	/* the friction bounds hold exactly in the production sweep's result */
	for (int i = 0; i < n; ++i) {
		const lk__row *r = &p->rows[i];
		if (r->findex >= 0)
			assert_true(fabs(a[i]) <= r->mu * fabs(a[r->findex]) * (1 + 1e-15) + 1e-300);
	}
	/* many sweeps: both settle on friction-consistent impulses that agree closely */
	run(p, lk__pgs_sweep, NULL, 1.0, 400, a);
	run(p, lk__pgs_sweep_ref, NULL, 1.0, 400, b);
	assert_true(tu_max_diff(a, b, n) <= 1e-6 * fmax(1.0, max_abs(b, n)));
	free(a);
	free(b);
	lk_problem_destroy(p);
}

/* The sweeps' branch-free bounds give lk__bounds's numbers bit for bit, for normal rows (their own bounds, whatever
 * their own lambda and mu) and friction rows (+-mu |lambda_n|, a negative and a signed zero lambda_n included). */
static void test_bounds_select_matches_bounds(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 4, 0.5);
	const int n = p->nrows;
	int friction = 0;
	for (int i = 0; i < n; ++i) {
		p->lambda[i] = i % 5 == 0 ? -0.0 : i % 3 == 0 ? -1.5 * i : 0.25 * i;
		friction += p->rows[i].findex >= 0;
		if (p->rows[i].findex < 0 && i % 2) /* finite bounds of either sign on some normal rows */
			p->rows[i].lo = -2.0, p->rows[i].hi = 3.0 + i;
	}
	assert_true(friction > 0 && friction < n);
	for (int i = 0; i < n; ++i) {
		double lo, hi, lo2, hi2;
		lk__bounds(&p->rows[i], p->lambda, &lo, &hi);
		lk__bounds_select(&p->rows[i], p->lambda, i, &lo2, &hi2);
		if (memcmp(&lo, &lo2, sizeof lo) != 0 || memcmp(&hi, &hi2, sizeof hi) != 0)
			fail_msg("row %d: [%g, %g] against lk__bounds's [%g, %g]", i, lo2, hi2, lo, hi);
	}
	lk_problem_destroy(p);
}

/* The production sweep in a shuffled order, where normal and friction rows come in no pattern (the bounds
 * chosen without a branch): the reference's impulses after one sweep and after many. */
static void test_sweep_matches_reference_shuffled(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 6, 0.5);
	const int n = p->nrows;
	int *perm = malloc((size_t)n * sizeof *perm);
	double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
	assert_true(perm && a && b);
	for (int i = 0; i < n; ++i)
		perm[i] = i;
	uint64_t s = 12345;
	for (int i = n - 1; i > 0; --i) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		const int j = (int)((s >> 33) % (uint64_t)(i + 1)), x = perm[i];
		perm[i] = perm[j];
		perm[j] = x;
	}
	for (int sweeps = 1; sweeps <= 300; sweeps += 299) {
		run(p, lk__pgs_sweep, perm, 1.0, sweeps, a);
		run(p, lk__pgs_sweep_ref, perm, 1.0, sweeps, b);
		const double scale = fmax(1.0, max_abs(b, n));
		if (!(tu_max_diff(a, b, n) <= (sweeps == 1 ? 1e-12 : 1e-6) * scale))
			fail_msg("%d sweeps: production and reference differ by %g", sweeps, tu_max_diff(a, b, n));
		for (int i = 0; i < n; ++i) {
			const lk__row *r = &p->rows[i];
			if (r->findex >= 0)
				assert_true(fabs(a[i]) <= r->mu * fabs(a[r->findex]) * (1 + 1e-15) + 1e-300);
			else
				assert_true(a[i] >= r->lo && a[i] <= r->hi);
		}
	}
	free(perm);
	free(a);
	free(b);
	lk_problem_destroy(p);
}

static void test_sweep_matches_reference_matrix(void **state)
{
	(void)state;
	lk_problem *p = tu_random_spd_matrix(60, 31, 1.0);
	for (int i = 0; i < p->nrows; ++i)
		assert_double_equal(p->inv_diag[i] * p->rows[i].diag, 1.0, 1e-15);
	check_sweeps(p, NULL, 1.0, 2000);
	lk_problem_destroy(p);
}

/* inv_diag is kept for every row as rows are added (and the storage grows). */
static void test_inv_diag_kept(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(20, 1000, 41, 0.3);
	for (int i = 0; i < p->nrows; ++i) {
		assert_true(p->rows[i].diag > 0);
		assert_double_equal(p->inv_diag[i] * p->rows[i].diag, 1.0, 1e-15);
	}
	lk_problem_destroy(p);
}

/* Same input, same build: bitwise the same lambda, through lk_solve. */
static void test_deterministic(void **state)
{
	(void)state;
	lk_gen_params g = lk_default_gen_params(LK_GEN_PACKING);
	g.n = 200;
	lk_problem *p = NULL;
	char err[200];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	int n = p->nrows;
	double *a = malloc((size_t)n * sizeof *a);
	assert_non_null(a);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.max_iterations = 37;
	cfg.tol_abs = cfg.tol_rel = cfg.tol_stag = 0;
	cfg.warm_start = 0;
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	memcpy(a, lk_problem_lambda(p), (size_t)n * sizeof *a);
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_memory_equal(a, lk_problem_lambda(p), (size_t)n * sizeof *a);
	assert_int_equal(st.iterations, 37);
	free(a);
	lk_problem_destroy(p);
}

/* A NaN in the velocity accumulator makes the sweep report NaN (lk__monitor then restores the best iterate),
 * as the reference does. */
static void test_nan_reported(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(10, 30, 3, 0.0);
	for (int pass = 0; pass < 2; ++pass) {
		lk__ctx c;
		ctx_init(&c, p);
		p->du[LK_DU_STRIDE * (size_t)p->rows[5].a] = NAN;
		double ch = (pass ? lk__pgs_sweep_ref : lk__pgs_sweep)(&c, NULL, p->nrows, 1.0);
		assert_true(isnan(ch));
	}
	lk_problem_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_row_w_matches_reference),
		cmocka_unit_test(test_row_apply_bitwise),
		cmocka_unit_test(test_clamp_matches_textbook),
		cmocka_unit_test(test_sweep_matches_reference_rows),
		cmocka_unit_test(test_sweep_matches_reference_friction),
		cmocka_unit_test(test_bounds_select_matches_bounds),
		cmocka_unit_test(test_sweep_matches_reference_shuffled),
		cmocka_unit_test(test_sweep_matches_reference_matrix),
		cmocka_unit_test(test_inv_diag_kept),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_nan_reported),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

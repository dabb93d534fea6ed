/* The envelope Cholesky of a row subset (common/src/envelope.c): against A_SS assembled here by hand from
 * the rows' J and M^-1 J^T, on a generated box stack (its four contacts per face make A semidefinite) and on
 * a random packing; the reverse Cuthill-McKee envelope of a stack is a band; the cost cap declines. The same
 * for its form by groups of rows on one body pair (common/src/faceblock.c, the two-level correction's). */
#include "test_util.h"
#include "faceblock.h"
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

/* reg = reg_value everywhere and b = (A + R) x0 for a random x0: consistent, singular A or not; returns |b|^2 */
static double consistent_rhs(const double *A, int n, double reg_value, uint64_t seed, double *reg, double *b)
{
	double *x0 = malloc(((size_t)n + 1) * sizeof *x0);
	lk__rng rng = {seed};
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
	free(x0);
	return bb;
}

/* b = (A + R) x0 for a random x0 is consistent, singular A or not; the factor's x must reproduce b */
static void check_subset(lk_problem *p, const int *idx, int n, double reg_value, double tol)
{
	double *A = dense_subset(p, idx, n);
	double *reg = malloc((size_t)n * sizeof *reg), *b = malloc((size_t)n * sizeof *b);
	double *x = malloc((size_t)n * sizeof *x);
	const double bb = consistent_rhs(A, n, reg_value, 7, reg, b);
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

/* The rows of p (normal rows only, or all) in groups of at most LK_FB_MAX rows on one body pair, contiguous
 * in *rows_out; pair, size per group. Returns the number of groups; *m_out the rows. */
static int group_rows(const lk_problem *p, int normal_only, lk__row **rows_out, int **pair_out, int **size_out,
                      int *m_out)
{
	const int n = p->nrows;
	int *order = malloc((size_t)n * sizeof *order), m = 0;
	for (int i = 0; i < n; ++i)
		if (!normal_only || !lk__is_friction(&p->rows[i]))
			order[m++] = i;
	/* by body pair, stable (insertion sort: the problems are small) */
	for (int i = 1; i < m; ++i)
		for (int j = i; j > 0; --j) {
			const lk__row *x = &p->rows[order[j - 1]], *y = &p->rows[order[j]];
			if (x->a < y->a || (x->a == y->a && x->b <= y->b))
				break;
			const int t = order[j - 1];
			order[j - 1] = order[j];
			order[j] = t;
		}
	lk__row *rows = aligned_alloc(64, ((size_t)m + 1) * sizeof *rows);
	int *pair = malloc(2 * ((size_t)m + 1) * sizeof *pair), *size = malloc(((size_t)m + 1) * sizeof *size);
	int ng = 0;
	for (int k = 0; k < m; ++k) {
		rows[k] = p->rows[order[k]];
		const int same = ng > 0 && pair[2 * ng - 2] == rows[k].a && pair[2 * ng - 1] == rows[k].b &&
		                 size[ng - 1] < LK_FB_MAX;
		if (same) {
			size[ng - 1]++;
		} else {
			pair[2 * ng] = rows[k].a;
			pair[2 * ng + 1] = rows[k].b;
			size[ng++] = 1;
		}
	}
	free(order);
	*rows_out = rows;
	*pair_out = pair;
	*size_out = size;
	*m_out = m;
	return ng;
}

/* The factor by groups solves b = (A + R) x0 for a random x0, singular A or not, as the row-by-row one does;
 * returns the dependent rows it found. */
static int check_groups(lk_problem *p, int normal_only, double reg_value, double tol)
{
	lk__row *rows;
	int *pair, *size, m;
	const int ng = group_rows(p, normal_only, &rows, &pair, &size, &m);
	lk_problem view = *p;
	view.rows = rows;
	view.nrows = m;
	int *idx = calloc((size_t)m + 1, sizeof *idx);
	for (int k = 0; k < m; ++k)
		idx[k] = k;
	double *A = dense_subset(&view, idx, m);
	double *reg = malloc(((size_t)m + 1) * sizeof *reg), *b = malloc(((size_t)m + 1) * sizeof *b);
	double *x = malloc(((size_t)m + 1) * sizeof *x);
	const double bb = consistent_rhs(A, m, reg_value, 11, reg, b);
	lk__arena a = {0};
	lk__fblock f;
	assert_int_equal(lk__fb_analyse(&f, &a, p->nbodies, ng, pair, size, INFINITY), 0);
	for (int g = 0, off = 0; g < ng; ++g) {
		assert_int_equal(f.size[g], size[g]);
		f.off[g] = off;
		off += size[g];
	}
	const double macs = lk__fb_macs(&f, pair, p->nbodies);
	assert_true(macs > 0 && f.solve_macs > 0);
	lk__fb_factor(&f, rows, pair, p->nbodies, reg);
	lk__fb_solve(&f, b, x);
	for (int k = 0; k < m; ++k)
		assert_true(isfinite(x[k]));
	const double r = residual(A, m, reg, x, b);
	if (!(r <= tol * sqrt(bb)))
		fail_msg("groups %d, rows %d: residual %g of %g", ng, m, r, sqrt(bb));
	const int dead = f.ndead;
	/* a cap below the structure's cost declines before any block exists */
	lk__fblock g2;
	assert_int_equal(lk__fb_analyse(&g2, &a, p->nbodies, ng, pair, size, 0.5 * macs), 1);
	lk__arena_free(&a);
	free(idx);
	free(A);
	free(reg);
	free(b);
	free(x);
	free(rows);
	free(pair);
	free(size);
	return dead;
}

static void test_groups_stack(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 20, 0.5);
	/* the four normal rows of a face are one group of rank three: one dependent row a face */
	const int dead = check_groups(p, 1, 0.0, 1e-9);
	assert_true(dead >= 19 && dead <= 21);
	/* all rows: twelve a face, two groups of six on one pair */
	check_groups(p, 0, 1e-6, 1e-8);
	lk_problem_destroy(p);
}

static void test_groups_packing(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("packing", 60, 0.3);
	check_groups(p, 0, 1e-8, 1e-8);
	lk_problem_destroy(p);
	/* random rows between random pairs, some on the static world */
	p = tu_random_rows(12, 60, 5, 0.5);
	check_groups(p, 0, 1e-8, 1e-8);
	lk_problem_destroy(p);
}

/* The envelope of a matrix given entry by entry (lk__env_graph, ipm's matrix form): a tridiagonal matrix whose
 * rows come scrambled is put back in band order by reverse Cuthill-McKee (an envelope of 2 n - 1 entries, not
 * the scrambled order's near-dense one), and its factor solves A x = b to rounding, checked against A x. */
static void test_graph_orders_a_band(void **state)
{
	(void)state;
	enum { N = 60 };
	int perm[N], ptr[N + 1], adj[2 * N];
	/* item v is the band's position perm[v]: a scramble by a stride prime to N */
	for (int v = 0; v < N; ++v)
		perm[v] = (v * 7) % N;
	int inv[N];
	for (int v = 0; v < N; ++v)
		inv[perm[v]] = v;
	int e = 0;
	for (int v = 0; v < N; ++v) {
		ptr[v] = e;
		if (perm[v] > 0)
			adj[e++] = inv[perm[v] - 1];
		if (perm[v] < N - 1)
			adj[e++] = inv[perm[v] + 1];
	}
	ptr[N] = e;
	lk__arena a = {0};
	lk__env env;
	assert_int_equal(lk__env_graph(&env, &a, N, ptr, adj, INFINITY), 0);
	assert_int_equal((int)env.entries, 2 * N - 1);
	memset(env.val, 0, env.entries * sizeof(double));
	/* A: 4 on the diagonal, -1 beside it, in the items' numbering */
	for (int v = 0; v < N; ++v) {
		*lk__env_at(&env, v, v) += 4.0;
		for (int k = ptr[v]; k < ptr[v + 1]; ++k)
			if (env.pos[adj[k]] < env.pos[v])
				*lk__env_at(&env, v, adj[k]) += -1.0;
	}
	lk__env_factor_assembled(&env, LK_ENV_DEAD_PIVOT);
	assert_int_equal(env.ndead, 0);
	double b[N], x[N];
	for (int v = 0; v < N; ++v)
		b[v] = sin(1.0 + v);
	lk__env_solve(&env, b, x);
	for (int v = 0; v < N; ++v) {
		double ax = 4.0 * x[v];
		for (int k = ptr[v]; k < ptr[v + 1]; ++k)
			ax -= x[adj[k]];
		assert_double_equal(ax, b[v], 1e-13);
	}
	lk__arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_normal_rows_semidefinite),
		cmocka_unit_test(test_stack_all_rows_regularized),
		cmocka_unit_test(test_stack_envelope_is_a_band),
		cmocka_unit_test(test_packing_subset),
		cmocka_unit_test(test_groups_stack),
		cmocka_unit_test(test_groups_packing),
		cmocka_unit_test(test_graph_orders_a_band),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

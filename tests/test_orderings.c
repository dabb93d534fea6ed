/* Orderings and staggered schedules of Poulsen, Abel & Erleben 2010: each permutes or schedules the sweeps
 * as the paper specifies (checked against keys and sweeps recomputed here from the public problem data) and
 * still converges to the PGS solution (and to Siconos's Lemke solution where it is unique). */
#include "test_util.h"
#include "internal.h"
#include "lcpkit/generate.h"
#include "peer_siconos.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ helpers */

static lk_problem *gen(lk_gen_kind kind, int n, double mu)
{
	lk_gen_params g = lk_default_gen_params(kind);
	g.n = n;
	g.mu = mu;
	lk_problem *p = NULL;
	char err[200];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	return p;
}

static lk_solver_config order_cfg(lk_order order, int desc, int blocked)
{
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.order = order;
	cfg.order_descending = desc;
	cfg.order_blocked = blocked;
	return cfg;
}

static int *perm_of(lk_problem *p, const lk_solver_config *cfg)
{
	int n = lk_problem_row_count(p);
	int *perm = malloc(sizeof(int) * ((size_t)n + 1));
	assert_non_null(perm);
	assert_int_equal(lk_problem_validate(p), LK_OK);
	lk_status st = lk__order_permutation(p, cfg, perm);
	if (st != LK_OK)
		fail_msg("order %s: %s", lk_order_name(cfg->order), lk_problem_error(p));
	return perm;
}

static void assert_is_permutation(const int *perm, int n)
{
	char *seen = calloc((size_t)n + 1, 1);
	assert_non_null(seen);
	for (int k = 0; k < n; ++k) {
		assert_true(perm[k] >= 0 && perm[k] < n);
		assert_false(seen[perm[k]]);
		seen[perm[k]] = 1;
	}
	free(seen);
}

/* J u* of row i, from the public row and body data (not from the solver's q) */
static double relative_velocity(const lk_problem *p, int i)
{
	lk_row_def d;
	assert_int_equal(lk_problem_get_row(p, i, &d), LK_OK);
	double y = 0;
	for (int s = 0; s < 2; ++s) {
		if (d.body[s] == LK_STATIC)
			continue;
		const lk_body_def *b = lk_problem_body(p, d.body[s]);
		for (int k = 0; k < 6; ++k)
			y += d.J[s][k] * b->u[k];
	}
	return y;
}

static double point_coord(const lk_problem *p, int i, int axis)
{
	lk_row_def d;
	assert_int_equal(lk_problem_get_row(p, i, &d), LK_OK);
	return d.point[axis];
}

static int findex_of(const lk_problem *p, int i)
{
	int f;
	assert_int_equal(lk_problem_get_bounds(p, i, NULL, NULL, NULL, &f, NULL), LK_OK);
	return f;
}

/* keys[perm[k]] is monotone in k; equal keys keep row order (stable) */
static void assert_sorted(const int *perm, const double *keys, int n, int desc, double tol)
{
	for (int k = 1; k < n; ++k) {
		double a = keys[perm[k - 1]], b = keys[perm[k]];
		if (desc ? (b > a + tol) : (b < a - tol))
			fail_msg("position %d: key %.17g after %.17g", k, b, a);
		if (a == b && perm[k] < perm[k - 1])
			fail_msg("position %d: tie of rows %d, %d out of row order", k, perm[k - 1], perm[k]);
	}
}

/* The setup lk_solve does before dispatching, so that the staggered solver can be run with a trace. */
static void ctx_begin(lk__ctx *c, lk_problem *p, const lk_solver_config *cfg)
{
	assert_int_equal(lk_problem_validate(p), LK_OK);
	lk__arena_reset(&p->arena);
	memset(c, 0, sizeof *c);
	c->p = p;
	c->cfg = cfg;
	c->n = p->nrows;
	c->lambda = p->lambda;
	c->du = p->du;
	c->rng.s = cfg->seed;
	c->method = lk__method_desc_of(cfg->method);
	c->w = lk__arena_alloc(&p->arena, ((size_t)c->n + 1) * sizeof(double));
	c->best = lk__arena_alloc(&p->arena, ((size_t)c->n + 1) * sizeof(double));
	assert_true(c->w && c->best);
	if (!cfg->warm_start)
		memset(p->lambda, 0, (size_t)c->n * sizeof(double));
	if (p->form == LK_FORM_ROWS)
		lk__recompute_du(p, p->lambda, p->du);
	p->du_valid = 1;
	lk_metrics m;
	lk__current_metrics(c, &m);
	c->initial_merit = c->last_merit = c->best_merit = lk__merit_value(&m, cfg->merit);
	memcpy(c->best, p->lambda, (size_t)c->n * sizeof(double));
	c->have_best = 1;
	c->t0 = lk__now();
}

static int run_traced(lk_problem *p, const lk_solver_config *cfg, lk__stagger_trace *tr)
{
	lk__ctx c;
	ctx_begin(&c, p, cfg);
	assert_int_equal(lk__staggered_run(&c, tr), LK_OK);
	assert_true(tr->count <= tr->capacity);
	return c.iterations;
}

/* A dense replay of a schedule: projected Gauss-Seidel sweeps of the traced sets, row order within a set,
 * on A and q assembled from the problem. Also predicts the set errors GSP should have seen: each sweep's
 * running 1/2 sum H^2, and the exact value for a set not swept during a whole iteration (no tolerance and
 * no history are set, so the monitor never evaluates). */
typedef struct replay {
	int n;
	double *A, *q, *lambda;
	int *set_of;
	int count[2];
} replay;

static void replay_init(replay *r, lk_problem *p, const double *lambda0)
{
	int n = r->n = lk_problem_row_count(p);
	r->A = malloc(sizeof(double) * (size_t)n * n);
	r->q = malloc(sizeof(double) * (size_t)n);
	r->lambda = malloc(sizeof(double) * (size_t)n);
	r->set_of = malloc(sizeof(int) * (size_t)n);
	assert_true(r->A && r->q && r->lambda && r->set_of);
	assert_int_equal(lk_problem_assemble_dense(p, n, r->A, r->q), LK_OK);
	memcpy(r->lambda, lambda0, sizeof(double) * (size_t)n);
	r->count[0] = r->count[1] = 0;
	for (int i = 0; i < n; ++i) {
		r->set_of[i] = findex_of(p, i) >= 0;
		r->count[r->set_of[i]]++;
	}
}

static void replay_free(replay *r)
{
	free(r->A);
	free(r->q);
	free(r->lambda);
	free(r->set_of);
}

static void replay_bounds(lk_problem *p, const double *lambda, int i, double *lo, double *hi)
{
	double mu;
	int f;
	assert_int_equal(lk_problem_get_bounds(p, i, lo, hi, &mu, &f, NULL), LK_OK);
	if (f >= 0) {
		*hi = mu * fabs(lambda[f]);
		*lo = -*hi;
	}
}

static double replay_w(const replay *r, int i)
{
	double w = r->q[i];
	for (int j = 0; j < r->n; ++j)
		w += r->A[(size_t)i * r->n + j] * r->lambda[j];
	return w;
}

/* returns the sweep's running error */
static double replay_sweep(replay *r, lk_problem *p, int set)
{
	double hh = 0;
	for (int i = 0; i < r->n; ++i) {
		if (r->set_of[i] != set)
			continue;
		double lo, hi, w = replay_w(r, i);
		replay_bounds(p, r->lambda, i, &lo, &hi);
		double h = lk_natural_residual(r->lambda[i], w, lo, hi);
		hh += h * h;
		double x = r->lambda[i] - w / r->A[(size_t)i * r->n + i];
		r->lambda[i] = x < lo ? lo : (x > hi ? hi : x);
	}
	return 0.5 * hh;
}

static double replay_exact(replay *r, lk_problem *p, int set)
{
	double hh = 0;
	for (int i = 0; i < r->n; ++i) {
		if (r->set_of[i] != set)
			continue;
		double lo, hi;
		replay_bounds(p, r->lambda, i, &lo, &hi);
		double h = lk_natural_residual(r->lambda[i], replay_w(r, i), lo, hi);
		hh += h * h;
	}
	return 0.5 * hh;
}

static void assert_rel(double a, double b, double tol, const char *what, int step)
{
	if (!(fabs(a - b) <= tol * (1.0 + fabs(b))))
		fail_msg("%s at sweep %d: %.17g, expected %.17g", what, step, a, b);
}

static lk_stats solve_ok(lk_problem *p, const lk_solver_config *cfg)
{
	lk_stats st;
	lk_status s = lk_solve(p, cfg, &st, NULL);
	if (s != LK_OK)
		fail_msg("%s: %s", lk_order_name(cfg->order), lk_problem_error(p));
	return st;
}

/* -------------------------------------------------------------------------------------- permutations */

/* IPP: rows sorted by the relative velocity J u* along the row, ascending or descending, both forms. */
static void test_ipp_sorts_by_relative_velocity(void **state)
{
	(void)state;
	lk_problem *p = gen(LK_GEN_PACKING, 40, 0.5);
	int n = lk_problem_row_count(p);
	double *y = malloc(sizeof(double) * (size_t)n);
	for (int i = 0; i < n; ++i)
		y[i] = relative_velocity(p, i);
	for (int desc = 0; desc < 2; ++desc) {
		lk_solver_config cfg = order_cfg(LK_ORDER_IPP, desc, 0);
		int *perm = perm_of(p, &cfg);
		assert_is_permutation(perm, n);
		assert_sorted(perm, y, n, desc, 1e-12);
		/* not the identity: the packing's random velocities scramble the rows */
		int moved = 0;
		for (int k = 0; k < n; ++k)
			moved += perm[k] != k;
		assert_true(moved > n / 2);
		free(perm);
	}
	free(y);
	lk_problem_destroy(p);

	/* matrix form: the relative velocity is q */
	p = tu_random_spd_matrix(30, 7, 1.0);
	const double *q;
	assert_int_equal(lk_problem_get_matrix(p, &n, NULL, NULL, NULL, &q), LK_OK);
	lk_solver_config cfg = order_cfg(LK_ORDER_IPP, 1, 0);
	int *perm = perm_of(p, &cfg);
	assert_is_permutation(perm, n);
	assert_sorted(perm, q, n, 1, 0.0);
	free(perm);
	lk_problem_destroy(p);
}

/* Equal keys keep row order: a frictionless sphere stack at rest has rows of equal relative velocity. */
static void test_ipp_ties_are_stable(void **state)
{
	(void)state;
	lk_problem *p = gen(LK_GEN_SPHERESTACK, 12, 0.0);
	int n = lk_problem_row_count(p);
	for (int desc = 0; desc < 2; ++desc) {
		lk_solver_config cfg = order_cfg(LK_ORDER_IPP, desc, 0);
		int *perm = perm_of(p, &cfg);
		/* the ground row has J u* = -g h, every other row 0 */
		assert_int_equal(perm[desc ? n - 1 : 0], 0);
		for (int k = 1; k < n; ++k)
			assert_int_equal(perm[desc ? k - 1 : k], k);
		free(perm);
	}
	lk_problem_destroy(p);
}

/* The IPP order is that of a comparison sort on (key, row), whatever the keys: ties, -0 and +0, both signs,
 * magnitudes from 1e-300 to 1e300, and keys that differ only in their lowest bits (1 +- 1e-12, 5 + k 1e-12:
 * the radix sort of the upper bits ties them, and the fix-up after it orders each run, a short one by
 * insertion and a long one by the C library's sort, ordering.c). */
typedef struct ref_row {
	double key;
	int row;
} ref_row;

static int ref_ascending(const void *x, const void *y)
{
	const ref_row *a = x, *b = y;
	return a->key < b->key ? -1 : a->key > b->key ? 1 : (a->row > b->row) - (a->row < b->row);
}

static int ref_descending(const void *x, const void *y)
{
	const ref_row *a = x, *b = y;
	return a->key > b->key ? -1 : a->key < b->key ? 1 : (a->row > b->row) - (a->row < b->row);
}

static void test_ipp_order_of_any_keys(void **state)
{
	(void)state;
	enum { N = 300 };
	static const double pool[] = {0.0,  -0.0, 1.0,   -1.0, 1e-300,      -1e-300,     1e300,        -1e300,
	                              0.5,  -0.5, 3.0,   2.0,  1.0 + 1e-12, 1.0 - 1e-12, -1.0 + 1e-12, -1.0 - 1e-12};
	double *A = calloc((size_t)N * N, sizeof(double)), q[N];
	assert_non_null(A);
	lk__rng s = {12345};
	for (int i = 0; i < N; ++i) {
		A[(size_t)i * N + i] = 1.0;
		/* half the keys from a small pool (many ties, and runs of more than 16 whose upper bits tie), ten
		 * within 1e-11 of 5 (a short run out of order), the rest random */
		q[i] = i % 2   ? pool[lk__rng_next(&s) % (sizeof pool / sizeof pool[0])]
		       : i < 20 ? 5.0 + (double)(lk__rng_next(&s) % 8) * 1e-12
		                : tu_rng_sym(&s) * 100.0;
	}
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_non_null(p);
	assert_int_equal(lk_problem_set_dense(p, N, A, q, NULL, NULL, NULL, NULL), LK_OK);
	for (int desc = 0; desc < 2; ++desc) {
		ref_row ref[N];
		for (int i = 0; i < N; ++i)
			ref[i] = (ref_row){q[i], i};
		qsort(ref, N, sizeof ref[0], desc ? ref_descending : ref_ascending);
		lk_solver_config cfg = order_cfg(LK_ORDER_IPP, desc, 0);
		int *perm = perm_of(p, &cfg);
		for (int k = 0; k < N; ++k)
			assert_int_equal(perm[k], ref[k].row);
		free(perm);
	}
	lk_problem_destroy(p);
	free(A);
}

/* CP: rows sorted by the contact point's coordinate along x, y, z or gravity. */
static void test_cp_sorts_by_coordinate(void **state)
{
	(void)state;
	lk_problem *p = gen(LK_GEN_PACKING, 60, 0.5);
	int n = lk_problem_row_count(p);
	double *key = malloc(sizeof(double) * (size_t)n);
	const lk_order orders[3] = {LK_ORDER_CP_X, LK_ORDER_CP_Y, LK_ORDER_CP_Z};
	for (int a = 0; a < 3; ++a) {
		for (int i = 0; i < n; ++i)
			key[i] = point_coord(p, i, a);
		for (int desc = 0; desc < 2; ++desc) {
			lk_solver_config cfg = order_cfg(orders[a], desc, 0);
			int *perm = perm_of(p, &cfg);
			assert_is_permutation(perm, n);
			assert_sorted(perm, key, n, desc, 0.0);
			free(perm);
		}
	}
	/* along gravity (0, 0, -9.81): ascending goes the way gravity points, top to bottom, which is the
	 * descending z order with the same tie rule */
	lk_solver_config cg = order_cfg(LK_ORDER_CP_GRAVITY, 0, 0);
	cg.gravity[0] = 0;
	cg.gravity[1] = 0;
	cg.gravity[2] = -9.81;
	lk_solver_config cz = order_cfg(LK_ORDER_CP_Z, 1, 0);
	int *pg = perm_of(p, &cg), *pz = perm_of(p, &cz);
	assert_memory_equal(pg, pz, sizeof(int) * (size_t)n);
	free(pg);
	free(pz);
	/* a tilted gravity sorts by the projection */
	cg.gravity[0] = 1;
	cg.gravity[1] = 2;
	cg.gravity[2] = -2;
	for (int i = 0; i < n; ++i)
		key[i] = (point_coord(p, i, 0) + 2 * point_coord(p, i, 1) - 2 * point_coord(p, i, 2)) / 3.0;
	pg = perm_of(p, &cg);
	assert_sorted(pg, key, n, 0, 1e-12);
	free(pg);
	/* zero gravity has no direction */
	cg.gravity[0] = cg.gravity[1] = cg.gravity[2] = 0;
	int *tmp = malloc(sizeof(int) * (size_t)n);
	assert_int_equal(lk__order_permutation(p, &cg, tmp), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(lk_problem_error(p), "gravity"));
	free(tmp);
	free(key);
	lk_problem_destroy(p);
}

/* lk_config_reads_points, which adapters use to skip reading points, says exactly which orders' sweeps
 * depend on the points: the same rows without their points give the same permutation under every other
 * order and a different one under each coordinate order. */
static void test_reads_points_matches_the_orders(void **state)
{
	(void)state;
	lk_problem *p = gen(LK_GEN_PACKING, 60, 0.5);
	lk_problem *q = tu_copy_problem(p, NULL, 1, NULL);
	int n = lk_problem_row_count(p);
	assert_int_equal(lk_config_reads_points(NULL), 0);
	int reading = 0;
	for (int o = 0; o < LK_ORDER_COUNT; ++o) {
		if (o == LK_ORDER_GSP)
			continue; /* a schedule, not a permutation (test_esp_permutation_and_gsp_refusal) */
		lk_solver_config cfg = order_cfg((lk_order)o, 0, 0);
		cfg.gravity[0] = 0.3;
		cfg.gravity[1] = 0.2;
		cfg.gravity[2] = -9.81;
		int *a = perm_of(p, &cfg), *b = perm_of(q, &cfg);
		int same = memcmp(a, b, sizeof(int) * (size_t)n) == 0;
		if (lk_config_reads_points(&cfg)) {
			++reading;
			if (same)
				fail_msg("order %s reads points but sorts the same without them", lk_order_name(cfg.order));
		} else if (!same) {
			fail_msg("order %s depends on the points but lk_config_reads_points says no",
			         lk_order_name(cfg.order));
		}
		free(a);
		free(b);
	}
	assert_int_equal(reading, 4); /* cp-x, cp-y, cp-z, cp-gravity */
	lk_problem_destroy(q);
	lk_problem_destroy(p);
}

/* Blocked CP: normal rows sorted, each followed at once by exactly its own friction rows. */
static void test_cp_blocked_keeps_normal_before_friction(void **state)
{
	(void)state;
	lk_problem *p = gen(LK_GEN_BOXSTACK, 6, 0.5);
	int n = lk_problem_row_count(p);
	double *key = malloc(sizeof(double) * (size_t)n);
	for (int i = 0; i < n; ++i)
		key[i] = point_coord(p, i, 2);
	lk_solver_config cfg = order_cfg(LK_ORDER_CP_Z, 1, 1);
	int *perm = perm_of(p, &cfg);
	assert_is_permutation(perm, n);
	double last = INFINITY;
	int normals = 0;
	for (int k = 0; k < n;) {
		int r = perm[k];
		assert_int_equal(findex_of(p, r), -1);
		assert_true(key[r] <= last);
		last = key[r];
		++normals;
		int kids = 0;
		for (++k; k < n && findex_of(p, perm[k]) >= 0; ++k) {
			assert_int_equal(findex_of(p, perm[k]), r);
			assert_true(kids == 0 || perm[k] > perm[k - 1]);
			++kids;
		}
		assert_int_equal(kids, 2);
	}
	assert_int_equal(normals, n / 3);
	free(perm);
	/* unblocked, rows of the same height are all rows of one interface, in row order */
	cfg.order_blocked = 0;
	perm = perm_of(p, &cfg);
	assert_sorted(perm, key, n, 1, 0.0);
	free(perm);
	free(key);
	lk_problem_destroy(p);
}

static void test_cp_matrix_form_unsupported(void **state)
{
	(void)state;
	lk_problem *p = tu_random_spd_matrix(10, 3, 1.0);
	lk_solver_config cfg = order_cfg(LK_ORDER_CP_Y, 1, 0);
	lk_stats st;
	double before[10];
	memcpy(before, lk_problem_lambda(p), sizeof before);
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_ERR_UNSUPPORTED);
	assert_non_null(strstr(lk_problem_error(p), "cp-y"));
	assert_memory_equal(before, lk_problem_lambda(p), sizeof before);
	lk_problem_destroy(p);
}

/* ESP as a permutation (used by AMGS and PGS-SM): normal rows, then friction rows, each in row order; GSP is
 * no fixed permutation and says so. */
static void test_esp_permutation_and_gsp_refusal(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(20, 45, 5, 0.4);
	int n = lk_problem_row_count(p);
	lk_solver_config cfg = order_cfg(LK_ORDER_ESP, 0, 0);
	int *perm = perm_of(p, &cfg);
	assert_is_permutation(perm, n);
	for (int k = 0; k < n; ++k) {
		int expect = k < n / 3 ? 3 * k : 3 * ((k - n / 3) / 2) + 1 + (k - n / 3) % 2;
		assert_int_equal(perm[k], expect);
	}
	cfg.order = LK_ORDER_GSP;
	assert_int_equal(lk__order_permutation(p, &cfg, perm), LK_ERR_UNSUPPORTED);
	assert_non_null(strstr(lk_problem_error(p), "gsp"));
	free(perm);
	lk_problem_destroy(p);
}

/* ------------------------------------------------------------------------------------------ schedules */

/* ESP alternates one sweep of the normal set and one of the friction set, each with the other frozen
 * (eq. 20-21): equal to a dense replay of that schedule, in the row form and in the matrix form (where the
 * coupling b' is a separate frozen vector). */
static void test_esp_schedule(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(25, 60, 11, 0.5);
	int n = lk_problem_row_count(p);
	double *zero = calloc((size_t)n, sizeof(double));
	lk_solver_config cfg = order_cfg(LK_ORDER_ESP, 0, 0);
	cfg.max_iterations = 25;
	cfg.warm_start = 0;
	lk__stagger_step steps[64];
	lk__stagger_trace tr = {steps, 64, 0};
	assert_int_equal(run_traced(p, &cfg, &tr), 25);
	assert_int_equal(tr.count, 50);
	replay r;
	replay_init(&r, p, zero);
	for (int k = 0; k < tr.count; ++k) {
		assert_int_equal(steps[k].set, k % 2);
		replay_sweep(&r, p, steps[k].set);
	}
	double d = tu_max_diff(lk_problem_lambda(p), r.lambda, n);
	if (!(d < 1e-10))
		fail_msg("ESP differs from the replay by %g", d);

	/* the same problem as a matrix with findex: the split CSR with frozen b' gives the same iterates */
	lk_problem *m = lk_problem_create(LK_FORM_MATRIX);
	double *lo = malloc(sizeof(double) * (size_t)n), *hi = malloc(sizeof(double) * (size_t)n);
	double *mu = malloc(sizeof(double) * (size_t)n);
	int *fx = malloc(sizeof(int) * (size_t)n);
	for (int i = 0; i < n; ++i)
		assert_int_equal(lk_problem_get_bounds(p, i, &lo[i], &hi[i], &mu[i], &fx[i], NULL), LK_OK);
	assert_int_equal(lk_problem_set_dense(m, n, r.A, r.q, lo, hi, mu, fx), LK_OK);
	assert_int_equal(run_traced(m, &cfg, &tr), 25);
	d = tu_max_diff(lk_problem_lambda(m), r.lambda, n);
	if (!(d < 1e-10))
		fail_msg("matrix-form ESP differs from the replay by %g", d);
	/* friction bounds are mu |lambda_n|: with normal rows allowed below 0 (boxed [-0.5, inf)) and a warm start
	 * with negative normal impulses, the frozen bounds must take the magnitude */
	{
		lk_problem *m2 = lk_problem_create(LK_FORM_MATRIX);
		double *x0 = malloc(sizeof(double) * (size_t)n);
		for (int i = 0; i < n; ++i) {
			if (fx[i] < 0)
				lo[i] = -0.5;
			x0[i] = fx[i] < 0 ? -0.4 : 0.1;
		}
		assert_int_equal(lk_problem_set_dense(m2, n, r.A, r.q, lo, hi, mu, fx), LK_OK);
		assert_int_equal(lk_problem_set_lambda(m2, x0, n), LK_OK);
		lk_solver_config warm = cfg;
		warm.warm_start = 1;
		warm.max_iterations = 3;
		lk__stagger_step s3[8];
		lk__stagger_trace t3 = {s3, 8, 0};
		assert_int_equal(run_traced(m2, &warm, &t3), 3);
		replay r2;
		replay_init(&r2, m2, x0);
		for (int k = 0; k < 6; ++k)
			replay_sweep(&r2, m2, k % 2);
		d = tu_max_diff(lk_problem_lambda(m2), r2.lambda, n);
		if (!(d < 1e-10))
			fail_msg("ESP with signed normal impulses differs from the replay by %g", d);
		replay_free(&r2);
		free(x0);
		lk_problem_destroy(m2);
	}
	/* and GSP on the matrix form equals GSP on the row form: same decisions, same iterates */
	cfg.order = LK_ORDER_GSP;
	lk__stagger_step s1[256], s2[256];
	lk__stagger_trace t1 = {s1, 256, 0}, t2 = {s2, 256, 0};
	run_traced(m, &cfg, &t1);
	run_traced(p, &cfg, &t2);
	assert_int_equal(t1.count, t2.count);
	for (int k = 0; k < t1.count; ++k)
		assert_int_equal(s1[k].set, s2[k].set);
	d = tu_max_diff(lk_problem_lambda(m), lk_problem_lambda(p), n);
	if (!(d < 1e-10))
		fail_msg("matrix-form GSP differs from row-form GSP by %g", d);
	free(lo);
	free(hi);
	free(mu);
	free(fx);
	lk_problem_destroy(m);
	replay_free(&r);
	free(zero);
	lk_problem_destroy(p);
}

/* GSP sweeps the set with the larger error: every decision is the larger of the two errors it records,
 * those errors are the ones the schedule implies (each sweep's own running error; an exact one at the start
 * and for a set left unswept for n rows of sweeps, then 2n, ...), and the iterates equal a dense replay. */
static void test_gsp_schedule(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 5; ++seed) {
		/* seed 5: a box stack from rest, where GSP keeps to the normal set for long runs */
		lk_problem *p = seed == 5 ? gen(LK_GEN_BOXSTACK, 6, 0.5) : tu_random_rows(25, 66, seed, 0.6);
		int n = lk_problem_row_count(p), iters = seed == 5 ? 80 : 30;
		double *zero = calloc((size_t)n, sizeof(double));
		lk_solver_config cfg = order_cfg(LK_ORDER_GSP, 0, 0);
		cfg.max_iterations = iters;
		cfg.warm_start = 0;
		if (seed == 4) {
			/* a warm start whose every other normal impulse is 0 under non-zero friction impulses: the
			 * friction sweep must zero those without evaluating them, and count them in the error */
			for (int i = 0; i < n; ++i)
				zero[i] = i % 3 ? 0.2 * ((i % 2) ? 1 : -1) : ((i / 3) % 2 ? 0.0 : 0.5);
			assert_int_equal(lk_problem_set_lambda(p, zero, n), LK_OK);
			cfg.warm_start = 1;
		}
		enum { CAP = 4096 };
		lk__stagger_step *steps = malloc(sizeof *steps * CAP);
		lk__stagger_trace tr = {steps, CAP, 0};
		assert_int_equal(run_traced(p, &cfg, &tr), iters);
		replay r;
		replay_init(&r, p, zero);
		double err[2] = {replay_exact(&r, p, 0), replay_exact(&r, p, 1)};
		long work = 0, since[2] = {0, 0}, allow[2] = {(long)n, (long)n};
		int it = 0, switches = 0, refreshes = 0;
		for (int k = 0; k < tr.count; ++k) {
			assert_rel(steps[k].err[0], err[0], 1e-9, "normal-set error", k);
			assert_rel(steps[k].err[1], err[1], 1e-9, "friction-set error", k);
			int expect = steps[k].err[1] > steps[k].err[0] ? 1 : 0;
			if (steps[k].set != expect)
				fail_msg("sweep %d took set %d with errors %g, %g", k, steps[k].set, steps[k].err[0],
				         steps[k].err[1]);
			switches += k > 0 && steps[k].set != steps[k - 1].set;
			int set = steps[k].set, other = 1 - set;
			err[set] = replay_sweep(&r, p, set);
			work += r.count[set];
			since[set] = 0;
			allow[set] = n;
			since[other] += r.count[set];
			if (since[other] >= allow[other]) {
				/* the other set's error is renewed after it sat out n, 2n, 4n, ... 16n rows of sweeps */
				err[other] = replay_exact(&r, p, other);
				since[other] = 0;
				if (allow[other] < 16L * n)
					allow[other] *= 2;
				++refreshes;
			}
			if (work >= (long)n * (it + 1))
				++it;
		}
		assert_int_equal(it, iters);
		assert_true(switches >= 2); /* it does visit both sets */
		if (seed == 1 || seed == 5)
			assert_true(refreshes >= 1); /* the cold start: the friction error is 0 until renewed */
		if (seed == 5)
			assert_true(refreshes >= 4); /* and renewals grow apart: n, 2n, 4n, 8n, 16n, 16n, ... */
		print_message("seed %d: %d sweeps, %d switches, %d renewals\n", (int)seed, tr.count, switches, refreshes);
		double d = tu_max_diff(lk_problem_lambda(p), r.lambda, n);
		if (!(d < 1e-10))
			fail_msg("seed %d: GSP differs from the replay by %g", (int)seed, d);
		replay_free(&r);
		free(steps);
		free(zero);
		lk_problem_destroy(p);
	}
}

/* From a solution, disturbing only the friction impulses makes GSP start with the friction set, disturbing
 * only the normal impulses makes it start with the normal set. */
static void test_gsp_starts_with_the_worse_set(void **state)
{
	(void)state;
	lk_problem *p = gen(LK_GEN_BOXSTACK, 4, 0.5);
	int n = lk_problem_row_count(p);
	lk_solver_config ref = lk_default_config(LK_METHOD_PGS);
	ref.max_iterations = 5000;
	ref.tol_abs = 1e-12;
	solve_ok(p, &ref);
	double *sol = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
	memcpy(sol, lk_problem_lambda(p), sizeof(double) * (size_t)n);
	lk_solver_config cfg = order_cfg(LK_ORDER_GSP, 0, 0);
	cfg.max_iterations = 1;
	lk__stagger_step steps[16];
	for (int which = 0; which < 2; ++which) {
		memcpy(x, sol, sizeof(double) * (size_t)n);
		for (int i = 0; i < n; ++i)
			if ((findex_of(p, i) >= 0) == which)
				x[i] += which ? 0.05 * ((i % 2) ? 1 : -1) : 0.3;
		assert_int_equal(lk_problem_set_lambda(p, x, n), LK_OK);
		lk__stagger_trace tr = {steps, 16, 0};
		run_traced(p, &cfg, &tr);
		assert_true(tr.count >= 1);
		assert_int_equal(steps[0].set, which);
		assert_true(steps[0].err[which] > 1e6 * steps[0].err[1 - which]);
	}
	free(sol);
	free(x);
	lk_problem_destroy(p);
}

/* ----------------------------------------------------------------------------------- convergence */

static const lk_order all_orders[] = {LK_ORDER_NATURAL, LK_ORDER_RANDOM, LK_ORDER_IPP, LK_ORDER_CP_X,
                                      LK_ORDER_CP_Y, LK_ORDER_CP_Z, LK_ORDER_CP_GRAVITY, LK_ORDER_ESP,
                                      LK_ORDER_GSP};
#define NORDERS ((int)(sizeof all_orders / sizeof all_orders[0]))

/* Frictionless SPD problem: the solution is unique, and every order reaches PGS's, which is Lemke's. */
static void test_orders_converge_frictionless(void **state)
{
	(void)state;
	int nb = 30, nr = 90;
	lk_problem *p = tu_random_rows(nb, nr, 21, 0.0);
	double *A = malloc(sizeof(double) * (size_t)nr * nr), *q = malloc(sizeof(double) * (size_t)nr);
	double *z = malloc(sizeof(double) * (size_t)nr), *pgs = malloc(sizeof(double) * (size_t)nr);
	assert_int_equal(lk_problem_assemble_dense(p, nr, A, q), LK_OK);
	lk_peer_result res;
	assert_int_equal(lk_peer_siconos_lcp(LK_PEER_LEMKE, nr, A, q, z, 0, 0, &res), LK_OK);
	assert_int_equal(res.info, 0);
	for (int o = 0; o < NORDERS; ++o) {
		for (int desc = 0; desc < 2; ++desc) {
			lk_solver_config cfg = order_cfg(all_orders[o], desc, 0);
			cfg.max_iterations = 100000;
			cfg.tol_abs = 1e-12;
			cfg.check_every = 5;
			cfg.warm_start = 0;
			lk_stats st = solve_ok(p, &cfg);
			if (st.stop_reason != LK_STOP_ABSOLUTE)
				fail_msg("%s%s stopped: %s", lk_order_name(all_orders[o]), desc ? "-desc" : "",
				         lk_stop_reason_name(st.stop_reason));
			if (o == 0 && desc == 0)
				memcpy(pgs, lk_problem_lambda(p), sizeof(double) * (size_t)nr);
			double d1 = tu_max_diff(lk_problem_lambda(p), pgs, nr), d2 = tu_max_diff(lk_problem_lambda(p), z, nr);
			if (!(d1 < 1e-8 && d2 < 1e-8))
				fail_msg("%s%s: differs from PGS by %g, from Lemke by %g", lk_order_name(all_orders[o]),
				         desc ? "-desc" : "", d1, d2);
		}
	}
	free(A);
	free(q);
	free(z);
	free(pgs);
	lk_problem_destroy(p);
}

/* With friction on a random SPD problem: every order, blocked or not, reaches a point that satisfies the
 * boxed LCP, and the same one as PGS. */
static void test_orders_converge_friction(void **state)
{
	(void)state;
	int nb = 30, nr = 90;
	lk_problem *p = tu_random_rows(nb, nr, 4, 0.3);
	double *pgs = malloc(sizeof(double) * (size_t)nr);
	for (int o = 0; o < NORDERS; ++o) {
		for (int blocked = 0; blocked < 2; ++blocked) {
			if (blocked && (all_orders[o] == LK_ORDER_NATURAL || all_orders[o] == LK_ORDER_RANDOM ||
			                all_orders[o] >= LK_ORDER_ESP))
				continue;
			lk_solver_config cfg = order_cfg(all_orders[o], 0, blocked);
			cfg.max_iterations = 100000;
			cfg.tol_abs = 1e-12;
			cfg.check_every = 5;
			cfg.warm_start = 0;
			lk_stats st = solve_ok(p, &cfg);
			if (st.stop_reason != LK_STOP_ABSOLUTE)
				fail_msg("%s blocked=%d stopped: %s", lk_order_name(all_orders[o]), blocked,
				         lk_stop_reason_name(st.stop_reason));
			tu_assert_complementarity(p, lk_problem_lambda(p), 1e-9);
			if (o == 0)
				memcpy(pgs, lk_problem_lambda(p), sizeof(double) * (size_t)nr);
			double d = tu_max_diff(lk_problem_lambda(p), pgs, nr);
			if (!(d < 1e-7))
				fail_msg("%s blocked=%d differs from PGS by %g", lk_order_name(all_orders[o]), blocked, d);
		}
	}
	free(pgs);
	lk_problem_destroy(p);
}

/* A box stack (A only semidefinite: lambda is not unique, the velocities are) with friction: every order
 * brings the merit down and ends with the body velocities of PGS; the staggered ones also with PSOR. */
static void test_orders_converge_boxstack(void **state)
{
	(void)state;
	lk_problem *p = gen(LK_GEN_BOXSTACK, 5, 0.5);
	int nb = lk_problem_body_count(p);
	double *ref = malloc(sizeof(double) * 6 * (size_t)nb), du[6];
	for (int o = 0; o < NORDERS; ++o) {
		lk_solver_config cfg = order_cfg(all_orders[o], all_orders[o] == LK_ORDER_CP_Y, 0);
		cfg.max_iterations = 20000;
		cfg.tol_abs = 1e-10;
		cfg.check_every = 5;
		cfg.warm_start = 0;
		lk_stats st = solve_ok(p, &cfg);
		if (st.stop_reason != LK_STOP_ABSOLUTE)
			fail_msg("%s stopped: %s after %d", lk_order_name(all_orders[o]), lk_stop_reason_name(st.stop_reason),
			         st.iterations);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-8);
		for (int b = 0; b < nb; ++b) {
			assert_int_equal(lk_problem_delta_velocity(p, b, du), LK_OK);
			for (int k = 0; k < 6; ++k) {
				if (o == 0)
					ref[6 * b + k] = du[k];
				else if (!(fabs(du[k] - ref[6 * b + k]) < 1e-7))
					fail_msg("%s: body %d du[%d] = %g, PGS %g", lk_order_name(all_orders[o]), b, k, du[k],
					         ref[6 * b + k]);
			}
		}
	}
	for (int o = LK_ORDER_ESP; o <= LK_ORDER_GSP; ++o) {
		lk_solver_config cfg = lk_default_config(LK_METHOD_PSOR);
		cfg.order = (lk_order)o;
		cfg.max_iterations = 20000;
		cfg.tol_abs = 1e-10;
		cfg.warm_start = 0;
		lk_stats st = solve_ok(p, &cfg);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-8);
	}
	free(ref);
	lk_problem_destroy(p);
}

/* Iterations count the work of full sweeps: ESP does n row updates per iteration, GSP between n and
 * 2n - 1; the same inputs give bitwise the same lambda. Parsing reaches the same schedules. */
static void test_staggered_accounting_and_determinism(void **state)
{
	(void)state;
	lk_problem *p = gen(LK_GEN_BOXSTACK, 5, 0.5);
	int n = lk_problem_row_count(p);
	double *first = malloc(sizeof(double) * (size_t)n);
	const char *specs[2] = {"esp:iters=40,warm=0", "pgs:order=gsp,iters=40,warm=0"};
	for (int s = 0; s < 2; ++s) {
		lk_solver_config cfg;
		char err[200];
		assert_int_equal(lk_config_parse(specs[s], &cfg, err, sizeof err), LK_OK);
		assert_int_equal(cfg.order, s ? LK_ORDER_GSP : LK_ORDER_ESP);
		lk_stats st = solve_ok(p, &cfg);
		assert_int_equal(st.iterations, 40);
		if (s == 0)
			assert_int_equal(st.row_updates, 40 * (int64_t)n);
		else
			assert_true(st.row_updates >= 40 * (int64_t)n && st.row_updates < 40 * (int64_t)n + n);
		/* ESP sweeps each set once per iteration; GSP sweeps N (n/3 rows) or T (2n/3 rows) */
		if (s == 0)
			assert_int_equal(st.inner_iterations, 80);
		else
			assert_true(st.inner_iterations > 40 && st.inner_iterations <= 120);
		memcpy(first, lk_problem_lambda(p), sizeof(double) * (size_t)n);
		solve_ok(p, &cfg);
		assert_memory_equal(first, lk_problem_lambda(p), sizeof(double) * (size_t)n);
		/* checking the merit every iteration and keeping a history change nothing in the schedule */
		lk_history_entry entries[64];
		lk_history h = {entries, 64, 0};
		cfg.tol_rel = 1e-300;
		assert_int_equal(lk_solve(p, &cfg, &st, &h), LK_OK);
		assert_int_equal(h.count, 41);
		assert_memory_equal(first, lk_problem_lambda(p), sizeof(double) * (size_t)n);
	}
	free(first);
	lk_problem_destroy(p);
}

/* The staggered schedules sweep with the method's relaxation: pgs with w = 1.3 is psor with w = 1.3, and
 * both differ from w = 1 (the relaxation is not dropped on the way into the schedule). */
static double *staggered_lambda(lk_problem *p, const char *spec)
{
	lk_solver_config cfg;
	char err[200];
	assert_int_equal(lk_config_parse(spec, &cfg, err, sizeof err), LK_OK);
	solve_ok(p, &cfg);
	int n = lk_problem_row_count(p);
	double *x = malloc(sizeof(double) * (size_t)n);
	memcpy(x, lk_problem_lambda(p), sizeof(double) * (size_t)n);
	return x;
}

static void test_staggered_relaxation(void **state)
{
	(void)state;
	lk_problem *p = gen(LK_GEN_BOXSTACK, 5, 0.5);
	int n = lk_problem_row_count(p);
	for (int o = 0; o < 2; ++o) {
		const char *order = o ? "gsp" : "esp";
		char spec[3][96];
		snprintf(spec[0], sizeof spec[0], "pgs:order=%s,iters=10,warm=0", order);
		snprintf(spec[1], sizeof spec[1], "pgs:order=%s,w=1.3,iters=10,warm=0", order);
		snprintf(spec[2], sizeof spec[2], "psor:order=%s,w=1.3,iters=10,warm=0", order);
		double *plain = staggered_lambda(p, spec[0]);
		double *pgs_w = staggered_lambda(p, spec[1]);
		double *psor_w = staggered_lambda(p, spec[2]);
		assert_memory_equal(pgs_w, psor_w, sizeof(double) * (size_t)n);
		double diff = 0;
		for (int i = 0; i < n; ++i)
			diff = fmax(diff, fabs(plain[i] - pgs_w[i]));
		assert_true(diff > 1e-6);
		free(plain);
		free(pgs_w);
		free(psor_w);
	}
	lk_problem_destroy(p);
}

/* ------------------------------------------------------------------------------ the latency order */

static double lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Limbs as a ragdoll's: chains of `links` bodies hanging from the world, each joint five rows on two
 * neighbours, and the last body of each chain touching the ground (a normal row and its two friction rows),
 * the chains one after the other: in the natural order almost every row shares a body with the row before. */
static lk_problem *limbs(int chains, int links)
{
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	assert_non_null(p);
	uint64_t seed = 7;
	for (int b = 0; b < chains * links; ++b) {
		lk_body_def d = lk_default_body_def();
		for (int k = 0; k < 3; ++k) {
			d.inv_mass[k] = 1.0 + 0.5 * lcg(&seed);
			d.inv_inertia[4 * k] = 2.0 + lcg(&seed);
			d.u[k] = lcg(&seed);
			d.u[3 + k] = lcg(&seed);
		}
		assert_int_equal(lk_problem_add_body(p, &d, NULL), LK_OK);
	}
	for (int c = 0; c < chains; ++c) {
		for (int j = 0; j < links; ++j) {
			const int a = j == 0 ? LK_STATIC : c * links + j - 1, b = c * links + j;
			for (int r = 0; r < 5; ++r) {
				lk_row_def d = lk_default_row_def();
				d.body[0] = b;
				d.body[1] = a;
				for (int k = 0; k < 6; ++k) {
					d.J[0][k] = lcg(&seed);
					d.J[1][k] = a == LK_STATIC ? 0.0 : lcg(&seed);
				}
				d.c = 0.1 * lcg(&seed);
				d.s = 1e-3;
				d.kind = LK_ROW_JOINT;
				assert_int_equal(lk_problem_add_row(p, &d, NULL), LK_OK);
			}
		}
		int normal = -1;
		for (int r = 0; r < 3; ++r) {
			lk_row_def d = lk_default_row_def();
			d.body[0] = c * links + links - 1;
			d.body[1] = LK_STATIC;
			for (int k = 0; k < 6; ++k)
				d.J[0][k] = lcg(&seed);
			d.c = r == 0 ? 0.5 : 0.0;
			d.kind = r == 0 ? LK_ROW_NORMAL : LK_ROW_FRICTION;
			if (r == 0) {
				d.lo = 0.0;
			} else {
				d.findex = normal;
				d.mu = 0.5;
			}
			assert_int_equal(lk_problem_add_row(p, &d, r == 0 ? &normal : NULL), LK_OK);
		}
	}
	assert_int_equal(lk_problem_validate(p), LK_OK);
	return p;
}

static int share_a_body(const lk_problem *p, int i, int j)
{
	lk_row_def a, b;
	assert_int_equal(lk_problem_get_row(p, i, &a), LK_OK);
	assert_int_equal(lk_problem_get_row(p, j, &b), LK_OK);
	for (int s = 0; s < 2; ++s)
		if (a.body[s] != LK_STATIC && (a.body[s] == b.body[0] || a.body[s] == b.body[1]))
			return 1;
	return 0;
}

/* The natural order's sweeps in the latency order (ordering.c, latency=1): consecutive rows rarely share a body,
 * every body's rows stay in their natural order, and so the iterates are the natural order's to the bit. The
 * natural order swept as a permutation is order=cp-x on the same rows with their points all 0 (a stable sort
 * of equal keys): every method of the Gauss-Seidel family must give the same lambda both ways. A stack's
 * rows, a chain, would keep their places: no order is made for them. */
static void test_latency_order(void **state)
{
	(void)state;
	lk_problem *p = limbs(12, 6);
	const int n = lk_problem_row_count(p), nb = lk_problem_body_count(p);
	int *perm = malloc(sizeof(int) * (size_t)n), *last = malloc(sizeof(int) * (size_t)nb);
	assert_true(perm && last);
	assert_int_equal(lk__latency_order(p, perm), 1);
	assert_is_permutation(perm, n);
	for (int b = 0; b < nb; ++b)
		last[b] = -1;
	int natural = 0, scheduled = 0;
	for (int k = 0; k < n; ++k) {
		lk_row_def d;
		assert_int_equal(lk_problem_get_row(p, perm[k], &d), LK_OK);
		for (int s = 0; s < 2; ++s)
			if (d.body[s] != LK_STATIC) {
				assert_true(perm[k] > last[d.body[s]]); /* each body's rows in their natural order */
				last[d.body[s]] = perm[k];
			}
		if (k > 0) {
			natural += share_a_body(p, k - 1, k);
			scheduled += share_a_body(p, perm[k - 1], perm[k]);
		}
	}
	print_message("%d rows on %d bodies: %d consecutive rows share a body in the natural order, %d in the latency "
	              "order\n",
	              n, nb, natural, scheduled);
	assert_true(natural > n * 9 / 10);
	assert_true(scheduled < n / 10);

	lk_problem *q = tu_copy_problem(p, NULL, 1, NULL);
	const char *methods[] = {"pgs:", "psor:w=1.3,", "amgs:", "nncg:", "pgs-sm:"};
	for (size_t m = 0; m < sizeof methods / sizeof *methods; ++m) {
		char spec[2][64];
		/* PGS-SM: 3 outer iterations of 4 PGS sweeps and a subspace step each */
		const char *limit = strcmp(methods[m], "pgs-sm:") ? "iters=12" : "iters=3,kpgs=4";
		snprintf(spec[0], sizeof spec[0], "%s%s,latency=1", methods[m], limit);
		snprintf(spec[1], sizeof spec[1], "%s%s,order=cp-x", methods[m], limit);
		double *lambda[2];
		for (int v = 0; v < 2; ++v) {
			lk_problem *r = v ? q : p;
			const lk_solver_config cfg = tu_spec(spec[v]);
			lk_stats st;
			assert_int_equal(lk_solve(r, &cfg, &st, NULL), LK_OK);
			assert_int_equal(st.iterations, strcmp(methods[m], "pgs-sm:") ? 12 : 3);
			lambda[v] = malloc(sizeof(double) * (size_t)n);
			assert_non_null(lambda[v]);
			memcpy(lambda[v], lk_problem_lambda(r), sizeof(double) * (size_t)n);
		}
		double apart = 0.0, size = 0.0;
		for (int i = 0; i < n; ++i) {
			apart = fmax(apart, fabs(lambda[0][i] - lambda[1][i]));
			size = fmax(size, fabs(lambda[0][i]));
		}
		print_message("%-10s max |lambda| %.3e, latency order - natural order %.1e\n", methods[m], size, apart);
		assert_true(size > 1e-3);
		assert_true(apart == 0.0);
		free(lambda[0]);
		free(lambda[1]);
	}
	/* a stack's rows each act on a body of the row before: the order would keep them in place, and is none */
	lk_problem *stack = tu_generate("boxstack", 20, 0.5);
	int *sp = malloc(sizeof(int) * (size_t)lk_problem_row_count(stack));
	assert_non_null(sp);
	assert_int_equal(lk__latency_order(stack, sp), 0);
	free(sp);
	lk_problem_destroy(stack);
	free(perm);
	free(last);
	lk_problem_destroy(p);
	lk_problem_destroy(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipp_sorts_by_relative_velocity),
		cmocka_unit_test(test_ipp_ties_are_stable),
		cmocka_unit_test(test_ipp_order_of_any_keys),
		cmocka_unit_test(test_cp_sorts_by_coordinate),
		cmocka_unit_test(test_cp_blocked_keeps_normal_before_friction),
		cmocka_unit_test(test_reads_points_matches_the_orders),
		cmocka_unit_test(test_cp_matrix_form_unsupported),
		cmocka_unit_test(test_esp_permutation_and_gsp_refusal),
		cmocka_unit_test(test_esp_schedule),
		cmocka_unit_test(test_gsp_schedule),
		cmocka_unit_test(test_gsp_starts_with_the_worse_set),
		cmocka_unit_test(test_orders_converge_frictionless),
		cmocka_unit_test(test_orders_converge_friction),
		cmocka_unit_test(test_orders_converge_boxstack),
		cmocka_unit_test(test_staggered_accounting_and_determinism),
		cmocka_unit_test(test_staggered_relaxation),
		cmocka_unit_test(test_latency_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

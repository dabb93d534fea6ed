/* The accelerated modulus-based Gauss-Seidel family (Miyamoto & Yamashita 2019): Method 2.2 = Method 3.1
 * iterate for iterate, the contraction bound of Theorem 4.2 / Corollary 4.3 against an independent
 * transcription of the matrix iteration (11)/(12), boxed and friction rows, free joint rows, agreement with
 * PGS and with Siconos's Lemke, the matrix form, AMSOR and the guards. */
#include "test_util.h"

#include "lcpkit/generate.h"
#include "peer_siconos.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ helpers */

/* Runs cfg for exactly `iters` sweeps (no tolerance) from zero, or from `start` when given; copies lambda. */
static lk_stats run_sweeps(lk_problem *p, lk_solver_config cfg, int iters, const double *start, double *out)
{
	int n = lk_problem_row_count(p);
	cfg.max_iterations = iters;
	cfg.tol_abs = cfg.tol_rel = cfg.tol_stag = 0.0;
	cfg.warm_start = start != NULL;
	if (start)
		assert_int_equal(lk_problem_set_lambda(p, start, n), LK_OK);
	lk_stats st;
	lk_status s = lk_solve(p, &cfg, &st, NULL);
	if (s != LK_OK)
		fail_msg("solve: %s", lk_problem_error(p));
	assert_int_equal(st.iterations, iters);
	assert_int_equal(st.stop_reason, LK_STOP_ITERATIONS);
	memcpy(out, lk_problem_lambda(p), (size_t)n * sizeof(double));
	return st;
}

/* Solves to tol_abs on RES from zero; asserts it got there. */
static lk_stats run_to(lk_problem *p, lk_solver_config cfg, double tol, int cap, double *out)
{
	cfg.max_iterations = cap;
	cfg.tol_abs = tol;
	cfg.warm_start = 0;
	lk_stats st;
	if (lk_solve(p, &cfg, &st, NULL) != LK_OK)
		fail_msg("solve: %s", lk_problem_error(p));
	if (st.stop_reason != LK_STOP_ABSOLUTE)
		fail_msg("%s did not reach RES < %g in %d sweeps (RES %g, stop %s)", lk_method_name(cfg.method), tol,
		         cap, st.res_final, lk_stop_reason_name(st.stop_reason));
	if (out)
		memcpy(out, lk_problem_lambda(p), (size_t)lk_problem_row_count(p) * sizeof(double));
	return st;
}

static double max_abs(const double *a, int n)
{
	double m = 0;
	for (int i = 0; i < n; ++i)
		m = fmax(m, fabs(a[i]));
	return m;
}

static double *dense_of(lk_problem *p, double *q)
{
	int n = lk_problem_row_count(p);
	double *A = malloc((size_t)n * n * sizeof(double));
	assert_non_null(A);
	assert_int_equal(lk_problem_assemble_dense(p, 4096, A, q), LK_OK);
	return A;
}

/* The same problem in matrix form: dense A, q and the row bounds (friction through findex and mu). */
static lk_problem *matrix_copy(lk_problem *p)
{
	int n = lk_problem_row_count(p);
	double *q = malloc((size_t)n * sizeof(double)), *lo = malloc((size_t)n * sizeof(double));
	double *hi = malloc((size_t)n * sizeof(double)), *mu = malloc((size_t)n * sizeof(double));
	int *f = malloc((size_t)n * sizeof(int));
	assert_true(q && lo && hi && mu && f);
	double *A = dense_of(p, q);
	for (int i = 0; i < n; ++i)
		assert_int_equal(lk_problem_get_bounds(p, i, &lo[i], &hi[i], &mu[i], &f[i], NULL), LK_OK);
	lk_problem *m = lk_problem_create(LK_FORM_MATRIX);
	assert_non_null(m);
	assert_int_equal(lk_problem_set_dense(m, n, A, q, lo, hi, mu, f), LK_OK);
	free(A);
	free(q);
	free(lo);
	free(hi);
	free(mu);
	free(f);
	return m;
}

/* Random bodies and rows (more body freedoms than rows, so A is positive definite) with every kind of
 * fixed bounds: [0, inf), free, lo < 0 < hi, (-inf, hi], [lo > 0, hi], [lo, hi < 0], lo = hi. */
static lk_problem *boxed_rows(int nbodies, int nrows, uint64_t seed)
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
	static const double bounds[7][2] = {
		{0.0, INFINITY}, {-INFINITY, INFINITY}, {-0.3, 0.4}, {-INFINITY, 0.2}, {0.1, 0.5}, {-0.5, -0.1},
		{0.25, 0.25},
	};
	for (int r = 0; r < nrows; ++r) {
		lk_row_def d = lk_default_row_def();
		d.body[0] = (int)(lk__rng_next(&s) % (uint64_t)nbodies);
		d.body[1] = (int)(lk__rng_next(&s) % (uint64_t)(nbodies + 1)) - 1;
		if (d.body[1] == d.body[0])
			d.body[1] = LK_STATIC;
		for (int k = 0; k < 12; ++k)
			d.J[k / 6][k % 6] = tu_rng_sym(&s);
		d.c = 2.0 * tu_rng_sym(&s);
		d.lo = bounds[r % 7][0];
		d.hi = bounds[r % 7][1];
		d.kind = r % 7 == 0 ? LK_ROW_NORMAL : LK_ROW_JOINT;
		assert_int_equal(lk_problem_add_row(p, &d, NULL), LK_OK);
	}
	return p;
}

/* ------------------------------------------------------------------- Method 2.2 = Method 3.1 / 3.2 */

static void check_dense_equals_rows(lk_problem *p, const char *sparse, const char *dense, const double *start)
{
	int n = lk_problem_row_count(p);
	double *a = malloc((size_t)n * sizeof(double)), *b = malloc((size_t)n * sizeof(double));
	assert_true(a && b);
	lk_solver_config cs = tu_spec(sparse), cd = tu_spec(dense);
	for (int k = 1; k <= 50; ++k) {
		run_sweeps(p, cs, k, start, a);
		run_sweeps(p, cd, k, start, b);
		double diff = tu_max_diff(a, b, n), scale = 1.0 + max_abs(a, n);
		if (!(diff <= 1e-10 * scale))
			fail_msg("%s vs %s: sweep %d differs by %g (scale %g)", sparse, dense, k, diff, scale);
	}
	/* the iterates moved: the comparison is not between two zero vectors */
	assert_true(max_abs(a, n) > 1e-3);
	free(a);
	free(b);
}

static void test_dense_equals_sparse_iterates(void **state)
{
	(void)state;
	/* frictionless LCP: Method 2.2 vs Method 3.1 as the paper states them */
	lk_problem *p = tu_random_rows(12, 40, 11, 0.0);
	check_dense_equals_rows(p, "amgs", "amgs-dense", NULL);
	check_dense_equals_rows(p, "amgs:alpha=0.2", "amgs-dense:alpha=0.2", NULL);
	check_dense_equals_rows(p, "amgs:omega=E,gamma=1.5", "amgs-dense:omega=E,gamma=1.5", NULL);
	check_dense_equals_rows(p, "amgs:alpha=0.25,order=random,seed=7", "amgs-dense:alpha=0.25,order=random,seed=7",
	                        NULL);
	/* a warm start, partly outside the bounds (Method 3.2 projects it first) */
	int n = lk_problem_row_count(p);
	double *start = malloc((size_t)n * sizeof(double));
	assert_non_null(start);
	for (int i = 0; i < n; ++i)
		start[i] = 0.3 * sin(1.7 * i);
	check_dense_equals_rows(p, "amgs:alpha=0.3", "amgs-dense:alpha=0.3", start);
	free(start);
	lk_problem_destroy(p);

	/* friction rows (Method 3.2) and the general boxes */
	p = tu_random_rows(12, 36, 12, 0.4);
	check_dense_equals_rows(p, "amgs:alpha=0.3", "amgs-dense:alpha=0.3", NULL);
	lk_problem_destroy(p);
	p = boxed_rows(10, 35, 13);
	check_dense_equals_rows(p, "amgs:alpha=0.2", "amgs-dense:alpha=0.2", NULL);
	lk_problem_destroy(p);

	/* the matrix form */
	p = tu_random_spd_matrix(30, 14, 1.0);
	check_dense_equals_rows(p, "amgs:alpha=0.2", "amgs-dense:alpha=0.2", NULL);
	lk_problem_destroy(p);
}

/* ----------------------------------------------------------- AMGS[D / gamma] reproduces PGS exactly */

static void test_half_d_is_pgs(void **state)
{
	(void)state;
	/* Omega = D / gamma turns (M3) into lambda_i <- mid(lo, lambda_i - w_i / A_ii, hi) (derivation in amgs.c),
	 * for LCP rows, boxed rows and friction rows alike */
	lk_problem *probs[3] = {tu_random_rows(15, 45, 21, 0.5), boxed_rows(10, 35, 22), NULL};
	lk_gen_params g = lk_default_gen_params(LK_GEN_BOXSTACK);
	g.n = 3;
	char err[200];
	assert_int_equal(lk_generate(&g, &probs[2], err, sizeof err), LK_OK);
	for (int t = 0; t < 3; ++t) {
		lk_problem *p = probs[t];
		int n = lk_problem_row_count(p);
		double *a = malloc((size_t)n * sizeof(double)), *b = malloc((size_t)n * sizeof(double));
		double *start = malloc((size_t)n * sizeof(double));
		assert_true(a && b && start);
		/* a feasible start: Method 3.2 projects lambda^0 onto the bounds first, PGS does not */
		for (int i = 0; i < n; ++i) {
			double lo, hi;
			int f;
			lk_problem_get_bounds(p, i, &lo, &hi, NULL, &f, NULL);
			start[i] = f >= 0 ? 0.0 : fmin(fmax(0.0, lo), hi);
		}
		const char *specs[] = {"amgs:alpha=0.5", "amgs:alpha=0.8,gamma=1.25", "amgs-dense:alpha=2,gamma=0.5"};
		for (int s = 0; s < 3; ++s) {
			for (int k = 1; k <= 40; k += 13) {
				run_sweeps(p, tu_spec("pgs"), k, start, a);
				run_sweeps(p, tu_spec(specs[s]), k, start, b);
				double diff = tu_max_diff(a, b, n);
				if (!(diff <= 1e-10 * (1.0 + max_abs(a, n))))
					fail_msg("problem %d, %s: sweep %d differs from PGS by %g", t, specs[s], k, diff);
			}
		}
		/* and any other alpha does not: the comparison can fail */
		run_sweeps(p, tu_spec("pgs"), 10, start, a);
		run_sweeps(p, tu_spec("amgs:alpha=0.2"), 10, start, b);
		assert_true(tu_max_diff(a, b, n) > 1e-6);
		free(a);
		free(b);
		free(start);
		lk_problem_destroy(p);
	}
}

/* ---------------------------------------------------------------- Theorem 4.2 and Corollary 4.3 */

/* Largest eigenvalue of a symmetric n x n matrix S (destroyed) by cyclic Jacobi rotations. */
static double jacobi_max_eig(double *S, int n)
{
	for (int sweep = 0; sweep < 100; ++sweep) {
		double off = 0, tot = 0;
		for (int i = 0; i < n; ++i)
			for (int j = 0; j < n; ++j) {
				tot += S[i * n + j] * S[i * n + j];
				if (i != j)
					off += S[i * n + j] * S[i * n + j];
			}
		if (off <= 1e-30 * tot)
			break;
		for (int pp = 0; pp < n; ++pp)
			for (int qq = pp + 1; qq < n; ++qq) {
				double apq = S[pp * n + qq];
				if (apq == 0.0)
					continue;
				double th = (S[qq * n + qq] - S[pp * n + pp]) / (2.0 * apq);
				double t = (th >= 0 ? 1.0 : -1.0) / (fabs(th) + sqrt(1.0 + th * th));
				double cs = 1.0 / sqrt(1.0 + t * t), sn = t * cs;
				for (int k = 0; k < n; ++k) {
					double a = S[k * n + pp], b = S[k * n + qq];
					S[k * n + pp] = cs * a - sn * b;
					S[k * n + qq] = sn * a + cs * b;
				}
				for (int k = 0; k < n; ++k) {
					double a = S[pp * n + k], b = S[qq * n + k];
					S[pp * n + k] = cs * a - sn * b;
					S[qq * n + k] = sn * a + cs * b;
				}
			}
	}
	double m = -INFINITY;
	for (int i = 0; i < n; ++i)
		m = fmax(m, S[i * n + i]);
	return m;
}

/* Spectral norm ||T||_2 of an n x n matrix: Jacobi on T^T T, cross-checked by power iteration. */
static double spectral_norm(const double *T, int n)
{
	double *S = calloc((size_t)n * n, sizeof(double)), *v = malloc((size_t)n * sizeof(double));
	double *u = malloc((size_t)n * sizeof(double));
	assert_true(S && v && u);
	for (int i = 0; i < n; ++i)
		for (int j = 0; j < n; ++j)
			for (int k = 0; k < n; ++k)
				S[i * n + j] += T[k * n + i] * T[k * n + j];
	for (int i = 0; i < n; ++i)
		v[i] = 1.0 + 0.1 * i;
	double rq = 0;
	for (int it = 0; it < 5000; ++it) {
		double nn = 0;
		for (int i = 0; i < n; ++i) {
			u[i] = 0;
			for (int j = 0; j < n; ++j)
				u[i] += S[i * n + j] * v[j];
		}
		double vv = 0;
		for (int i = 0; i < n; ++i) {
			nn += u[i] * u[i];
			vv += v[i] * v[i];
		}
		double vu = 0;
		for (int i = 0; i < n; ++i)
			vu += v[i] * u[i];
		rq = vu / vv;
		nn = sqrt(nn);
		for (int i = 0; i < n; ++i)
			v[i] = u[i] / nn;
	}
	double ev = jacobi_max_eig(S, n);
	/* power iteration approaches the top eigenvalue from below */
	assert_true(rq <= ev * (1 + 1e-12) + 1e-300);
	assert_true(rq >= ev * (1 - 1e-6));
	free(S);
	free(v);
	free(u);
	return sqrt(ev);
}

/* tau = ||(D - L)^-1 U|| with A = D - L - U (Miyamoto & Yamashita 2019 sec. 4). */
static double gs_tau(const double *A, int n)
{
	double *T = calloc((size_t)n * n, sizeof(double));
	assert_non_null(T);
	/* column j of (D - L)^-1 U by forward substitution; (D - L) is A's lower triangle, U = -A's strict upper */
	for (int j = 0; j < n; ++j)
		for (int i = 0; i < n; ++i) {
			double s = i < j ? -A[i * n + j] : 0.0;
			for (int k = 0; k < i; ++k)
				s -= A[i * n + k] * T[k * n + j];
			T[i * n + j] = s / A[i * n + i];
		}
	double t = spectral_norm(T, n);
	free(T);
	return t;
}

/* One sweep of the accelerated modulus-based iteration (11) in its matrix form, with the splittings of
 * section 2.3: M1 = D / a - L, N1 = (1 / a - 1) D + U, M2 = D - U, N2 = L (a = 1: AMGS eq. 12; else AMSOR),
 * solved for x^{k+1} by forward substitution. Written from (11), independently of the library's (14). */
static void eq11_sweep(const double *A, const double *q, const double *Om, double gamma, double a, int n,
                       double *x)
{
	for (int i = 0; i < n; ++i) {
		double d = A[i * n + i];
		double rhs = (1.0 / a - 1.0) * d * x[i] + (gamma * Om[i] - d) * fabs(x[i]) - gamma * q[i];
		for (int j = 0; j < n; ++j) {
			if (j == i)
				continue;
			/* L_ij = -A_ij (j < i) acts on x^{k+1} and |x^{k+1}|, U_ij = -A_ij (j > i) on x^k and |x^k| */
			rhs -= A[i * n + j] * (x[j] + fabs(x[j]));
		}
		x[i] = rhs / (d / a + gamma * Om[i]);
	}
}

typedef struct theo_case {
	const char *spec;   /* the library's solver */
	int omega_e;        /* Omega = omega_bar E instead of alpha D */
	double alpha, gamma;
	double amsor_w;     /* 1 for AMGS */
} theo_case;

static void check_theorem(lk_problem *p, const theo_case *tc, int *contracted_cases)
{
	int n = lk_problem_row_count(p);
	double *q = malloc((size_t)n * sizeof(double)), *A = dense_of(p, q);
	double *Om = malloc((size_t)n * sizeof(double)), *x = calloc((size_t)n, sizeof(double));
	double *xs = malloc((size_t)n * sizeof(double)), *ls = malloc((size_t)n * sizeof(double));
	double *lib = malloc((size_t)n * sizeof(double));
	assert_true(Om && x && xs && ls && lib);
	double g = tc->gamma, mean = 0;
	for (int i = 0; i < n; ++i)
		mean += A[i * n + i] / n;
	for (int i = 0; i < n; ++i)
		Om[i] = tc->omega_e ? mean / g : tc->alpha * A[i * n + i];

	/* delta of Theorem 4.2: 2 ||(D + g Omega)^-1 D|| tau + ||(D + g Omega)^-1 (g Omega - D)||, diagonal */
	double tau = gs_tau(A, n), n1 = 0, n2 = 0;
	for (int i = 0; i < n; ++i) {
		double d = A[i * n + i];
		n1 = fmax(n1, d / (d + g * Om[i]));
		n2 = fmax(n2, fabs(g * Om[i] - d) / (d + g * Om[i]));
	}
	double delta = 2.0 * n1 * tau + n2;
	assert_true(tau < 1.0); /* the problems are chosen for it: the theorem's hypothesis must hold */
	if (!tc->omega_e) {
		/* Corollary 4.3's closed form */
		double ag = tc->alpha * g;
		assert_true(fabs(delta - (2.0 * tau + fabs(ag - 1.0)) / (1.0 + ag)) < 1e-12);
		if (tc->alpha > tau / g)
			assert_true(delta < 1.0);
	}

	/* x* = (gamma lambda* - Omega^-1 w*) / 2 from Lemke's lambda* (proof of Theorem 4.2) */
	lk_peer_result pr;
	assert_int_equal(lk_peer_siconos_lcp(LK_PEER_LEMKE, n, A, q, ls, 0, 1e-14, &pr), LK_OK);
	assert_int_equal(pr.info, 0);
	for (int i = 0; i < n; ++i) {
		double w = q[i];
		for (int j = 0; j < n; ++j)
			w += A[i * n + j] * ls[j];
		xs[i] = 0.5 * (g * ls[i] - w / Om[i]);
	}
	double err_prev = 0;
	for (int i = 0; i < n; ++i)
		err_prev += (x[i] - xs[i]) * (x[i] - xs[i]);
	err_prev = sqrt(err_prev);
	assert_true(err_prev > 1e-3);

	lk_solver_config cfg = tu_spec(tc->spec);
	int sweeps = 40;
	for (int k = 1; k <= sweeps; ++k) {
		eq11_sweep(A, q, Om, g, tc->amsor_w, n, x);
		/* the library's lambda^k is (2 / gamma) x_+^k of (11) */
		run_sweeps(p, cfg, k, NULL, lib);
		for (int i = 0; i < n; ++i) {
			double want = 2.0 / g * fmax(0.0, x[i]);
			if (!(fabs(lib[i] - want) <= 1e-10 * (1.0 + fabs(want))))
				fail_msg("%s: sweep %d row %d: lambda %.17g, eq. (11) gives %.17g", tc->spec, k, i, lib[i], want);
		}
		if (tc->amsor_w != 1.0 || !(delta < 1.0))
			continue;
		/* eq. (23): ||x^{k+1} - x*|| <= delta ||x^k - x*||, hence <= delta^k ||x^0 - x*|| (Remark 4.4) */
		double err = 0;
		for (int i = 0; i < n; ++i)
			err += (x[i] - xs[i]) * (x[i] - xs[i]);
		err = sqrt(err);
		if (!(err <= delta * err_prev * (1 + 1e-9) + 1e-9))
			fail_msg("%s: sweep %d: ||x - x*|| = %g > delta %g * previous %g (tau %g)", tc->spec, k, err, delta,
			         err_prev, tau);
		err_prev = err;
	}
	if (tc->amsor_w == 1.0 && delta < 1.0)
		++*contracted_cases;
	free(A);
	free(q);
	free(Om);
	free(x);
	free(xs);
	free(ls);
	free(lib);
}

static void test_theorem_4_2(void **state)
{
	(void)state;
	const theo_case cases[] = {
		{"amgs:alpha=0.5", 0, 0.5, 2.0, 1.0},                /* alpha = 1 / gamma: delta = tau */
		{"amgs-dense:alpha=0.5", 0, 0.5, 2.0, 1.0},
		{"amgs:alpha=0.35", 0, 0.35, 2.0, 1.0},
		{"amgs:alpha=0.9", 0, 0.9, 2.0, 1.0},
		{"amgs:alpha=1.2,gamma=1", 0, 1.2, 1.0, 1.0},
		{"amgs:omega=E", 1, 0.0, 2.0, 1.0},                  /* Remark 4.5 */
		{"amsor:alpha=0.4,w=1.3", 0, 0.4, 2.0, 1.3},         /* AMSOR splitting: iterates only */
		{"amsor:omega=E,w=0.8", 1, 0.0, 2.0, 0.8},
	};
	int contracted = 0;
	/* small dense problems with tau < 1: strongly diagonally dominant matrices and a weakly coupled
	 * row-form problem */
	lk_problem *probs[3] = {tu_random_spd_matrix(8, 31, 16.0), tu_random_spd_matrix(12, 32, 20.0),
	                        tu_random_rows(14, 10, 33, 0.0)};
	for (int t = 0; t < 3; ++t) {
		for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
			check_theorem(probs[t], &cases[c], &contracted);
		lk_problem_destroy(probs[t]);
	}
	/* the contraction was checked on every AMGS case but possibly omega_bar E (delta may exceed 1) */
	assert_true(contracted >= 15);
}

/* ------------------------------------------------------------------------------ boxes and friction */

static void test_friction_boxstack(void **state)
{
	(void)state;
	lk_gen_params g = lk_default_gen_params(LK_GEN_BOXSTACK);
	g.n = 3;
	g.mu = 0.5;
	lk_problem *p;
	char err[200];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	int n = lk_problem_row_count(p), nb = lk_problem_body_count(p);
	double *ref_du = malloc((size_t)nb * 6 * sizeof(double));
	assert_non_null(ref_du);
	run_to(p, tu_spec("pgs"), 1e-10, 200000, NULL);
	for (int b = 0; b < nb; ++b)
		assert_int_equal(lk_problem_delta_velocity(p, b, ref_du + 6 * b), LK_OK);
	const char *specs[] = {"amgs", "amgs:omega=E", "amgs:alpha=0.2", "amsor", "amgs-dense:alpha=0.3"};
	for (int s = 0; s < 5; ++s) {
		run_to(p, tu_spec(specs[s]), 1e-10, 200000, NULL);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-8);
		/* four coplanar contacts per face make lambda non-unique; the body velocities are not */
		for (int b = 0; b < nb; ++b) {
			double du[6];
			assert_int_equal(lk_problem_delta_velocity(p, b, du), LK_OK);
			for (int k = 0; k < 6; ++k)
				if (!(fabs(du[k] - ref_du[6 * b + k]) < 1e-7))
					fail_msg("%s: body %d du[%d] = %g, PGS %g", specs[s], b, k, du[k], ref_du[6 * b + k]);
		}
		/* friction is active: some tangential impulse is non-zero */
		const double *l = lk_problem_lambda(p);
		double fr = 0;
		for (int i = 0; i < n; ++i) {
			int f;
			lk_problem_get_bounds(p, i, NULL, NULL, NULL, &f, NULL);
			if (f >= 0)
				fr = fmax(fr, fabs(l[i]));
		}
		assert_true(fr > 1e-6);
	}
	free(ref_du);
	lk_problem_destroy(p);
}

static void test_friction_random_rows(void **state)
{
	(void)state;
	for (uint64_t seed = 41; seed < 44; ++seed) {
		lk_problem *p = tu_random_rows(20, 45, seed, 0.3);
		int n = lk_problem_row_count(p);
		double *ref = malloc((size_t)n * sizeof(double)), *l = malloc((size_t)n * sizeof(double));
		assert_true(ref && l);
		run_to(p, tu_spec("pgs"), 1e-11, 200000, ref);
		tu_assert_complementarity(p, ref, 1e-8);
		const char *specs[] = {"amgs", "amgs:alpha=0.5", "amgs:omega=E", "amsor:w=1.1", "amgs:order=random"};
		for (int s = 0; s < 5; ++s) {
			run_to(p, tu_spec(specs[s]), 1e-11, 200000, l);
			tu_assert_complementarity(p, l, 1e-8);
			double diff = tu_max_diff(ref, l, n);
			if (!(diff < 1e-7))
				fail_msg("seed %d %s: lambda differs from PGS by %g", (int)seed, specs[s], diff);
		}
		free(ref);
		free(l);
		lk_problem_destroy(p);
	}
}

/* Free joint rows and general boxes lo < 0 < hi, one-sided, shifted and fixed: complementarity, and the
 * unique solution of the positive definite problem that PGS also finds. */
static void test_unbounded_and_general_boxes(void **state)
{
	(void)state;
	lk_problem *p = boxed_rows(12, 42, 51);
	int n = lk_problem_row_count(p);
	double *ref = malloc((size_t)n * sizeof(double)), *l = malloc((size_t)n * sizeof(double));
	assert_true(ref && l);
	run_to(p, tu_spec("pgs"), 1e-11, 200000, ref);
	const char *specs[] = {"amgs", "amgs:alpha=0.15", "amgs:omega=E", "amsor:w=1.4", "amgs-dense"};
	for (int s = 0; s < 5; ++s) {
		run_to(p, tu_spec(specs[s]), 1e-11, 200000, l);
		tu_assert_complementarity(p, l, 1e-8);
		assert_true(tu_max_diff(ref, l, n) < 1e-7);
	}
	/* the solution uses the boxes: interior, at lo and at hi all occur, and some free row is non-zero */
	int interior = 0, at_lo = 0, at_hi = 0, free_nz = 0;
	for (int i = 0; i < n; ++i) {
		double lo, hi;
		lk_problem_get_bounds(p, i, &lo, &hi, NULL, NULL, NULL);
		if (lo == hi)
			continue;
		if (l[i] <= lo + 1e-9)
			++at_lo;
		else if (l[i] >= hi - 1e-9)
			++at_hi;
		else
			++interior;
		if (isinf(lo) && isinf(hi) && fabs(l[i]) > 1e-3)
			++free_nz;
	}
	assert_true(interior > 0 && at_lo > 0 && at_hi > 0 && free_nz > 0);
	free(ref);
	free(l);
	lk_problem_destroy(p);

	/* a hinge chain: only free rows (lo = -inf, hi = inf); the answer is the linear solve A lambda = -q */
	lk_gen_params g = lk_default_gen_params(LK_GEN_CHAIN);
	g.n = 8;
	char err[200];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	n = lk_problem_row_count(p);
	l = malloc((size_t)n * sizeof(double));
	double *w = malloc((size_t)n * sizeof(double));
	assert_true(l && w);
	const char *chain_specs[] = {"amgs", "amgs:alpha=0.1", "amgs:omega=E", "amsor"};
	for (int s = 0; s < 4; ++s) {
		run_to(p, tu_spec(chain_specs[s]), 1e-11, 100000, l);
		assert_int_equal(lk_problem_apply(p, l, w, 1), LK_OK);
		assert_true(max_abs(w, n) < 1e-10);
		assert_true(max_abs(l, n) > 1e-3);
	}
	free(l);
	free(w);
	lk_problem_destroy(p);
}

/* ------------------------------------------------------------------------------- peers and forms */

static void test_siconos_lemke(void **state)
{
	(void)state;
	for (uint64_t seed = 61; seed < 64; ++seed) {
		lk_problem *p = tu_random_rows(16, 40, seed, 0.0);
		int n = lk_problem_row_count(p);
		double *q = malloc((size_t)n * sizeof(double)), *A = dense_of(p, q);
		double *z = malloc((size_t)n * sizeof(double)), *l = malloc((size_t)n * sizeof(double));
		assert_true(z && l);
		lk_peer_result pr;
		assert_int_equal(lk_peer_siconos_lcp(LK_PEER_LEMKE, n, A, q, z, 0, 1e-14, &pr), LK_OK);
		assert_int_equal(pr.info, 0);
		const char *specs[] = {"amgs", "amgs:alpha=0.2", "amgs:omega=E", "amsor", "amgs-dense"};
		for (int s = 0; s < 5; ++s) {
			run_to(p, tu_spec(specs[s]), 1e-12, 200000, l);
			double diff = tu_max_diff(z, l, n);
			if (!(diff < 1e-8))
				fail_msg("seed %d %s: differs from Lemke by %g", (int)seed, specs[s], diff);
		}
		assert_true(max_abs(z, n) > 1e-2);
		free(A);
		free(q);
		free(z);
		free(l);
		lk_problem_destroy(p);
	}
}

static void test_matrix_form_equals_row_form(void **state)
{
	(void)state;
	lk_problem *rows[2] = {tu_random_rows(12, 36, 71, 0.4), boxed_rows(10, 35, 72)};
	for (int t = 0; t < 2; ++t) {
		lk_problem *p = rows[t], *m = matrix_copy(p);
		int n = lk_problem_row_count(p);
		double *a = malloc((size_t)n * sizeof(double)), *b = malloc((size_t)n * sizeof(double));
		assert_true(a && b);
		const char *specs[] = {"amgs", "amgs:omega=E", "amsor:w=1.3", "amgs:order=random,seed=3"};
		for (int s = 0; s < 4; ++s)
			for (int k = 1; k <= 50; k += 7) {
				run_sweeps(p, tu_spec(specs[s]), k, NULL, a);
				run_sweeps(m, tu_spec(specs[s]), k, NULL, b);
				double diff = tu_max_diff(a, b, n);
				if (!(diff <= 1e-10 * (1.0 + max_abs(a, n))))
					fail_msg("problem %d %s: sweep %d: row and matrix forms differ by %g", t, specs[s], k, diff);
			}
		free(a);
		free(b);
		lk_problem_destroy(m);
		lk_problem_destroy(p);
	}
}

static void test_determinism(void **state)
{
	(void)state;
	lk_gen_params g = lk_default_gen_params(LK_GEN_PACKING);
	g.n = 60;
	g.mu = 0.5;
	lk_problem *p;
	char err[200];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	int n = lk_problem_row_count(p);
	double *a = malloc((size_t)n * sizeof(double)), *b = malloc((size_t)n * sizeof(double));
	assert_true(a && b);
	const char *specs[] = {"amgs", "amgs:order=random,seed=9", "amsor", "amgs-dense:omega=E"};
	for (int s = 0; s < 4; ++s) {
		lk_stats s1 = run_sweeps(p, tu_spec(specs[s]), 30, NULL, a);
		lk_stats s2 = run_sweeps(p, tu_spec(specs[s]), 30, NULL, b);
		assert_memory_equal(a, b, (size_t)n * sizeof(double));
		assert_true(s1.res_final == s2.res_final);
		assert_int_equal(s1.row_updates, (int64_t)30 * n);
	}
	/* a different seed gives a different random order, hence different iterates */
	run_sweeps(p, tu_spec("amgs:order=random,seed=10"), 30, NULL, b);
	run_sweeps(p, tu_spec("amgs:order=random,seed=9"), 30, NULL, a);
	assert_true(tu_max_diff(a, b, n) > 0);
	free(a);
	free(b);
	lk_problem_destroy(p);
}

static void test_amsor_w1_is_amgs(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(12, 36, 81, 0.4);
	int n = lk_problem_row_count(p);
	double *a = malloc((size_t)n * sizeof(double)), *b = malloc((size_t)n * sizeof(double));
	assert_true(a && b);
	run_sweeps(p, tu_spec("amgs:alpha=0.3"), 25, NULL, a);
	run_sweeps(p, tu_spec("amsor:alpha=0.3,w=1"), 25, NULL, b);
	assert_memory_equal(a, b, (size_t)n * sizeof(double));
	run_sweeps(p, tu_spec("amsor:alpha=0.3,w=1.3"), 25, NULL, b);
	assert_true(tu_max_diff(a, b, n) > 1e-8);
	free(a);
	free(b);
	lk_problem_destroy(p);
}

/* --------------------------------------------------------------------------------------- guards */

static void test_dense_limit(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(700, 4097, 91, 0.0);
	int n = lk_problem_row_count(p);
	double *start = malloc((size_t)n * sizeof(double));
	assert_non_null(start);
	for (int i = 0; i < n; ++i)
		start[i] = 0.01 * (i % 5);
	assert_int_equal(lk_problem_set_lambda(p, start, n), LK_OK);
	lk_solver_config c = tu_spec("amgs-dense");
	lk_stats st;
	assert_int_equal(lk_solve(p, &c, &st, NULL), LK_ERR_LIMIT);
	assert_non_null(strstr(lk_problem_error(p), "4096"));
	assert_memory_equal(lk_problem_lambda(p), start, (size_t)n * sizeof(double));
	free(start);
	lk_problem_destroy(p);
}

static void test_bad_diagonal(void **state)
{
	(void)state;
	double A[4] = {1.0, 0.0, 0.0, 0.0}, q[2] = {-1.0, -1.0};
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_non_null(p);
	assert_int_equal(lk_problem_set_dense(p, 2, A, q, NULL, NULL, NULL, NULL), LK_OK);
	const char *specs[] = {"amgs", "amgs-dense", "amsor"};
	for (int s = 0; s < 3; ++s) {
		lk_solver_config c = tu_spec(specs[s]);
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_BAD_DIAGONAL);
		assert_true(isfinite(lk_problem_lambda(p)[0]) && isfinite(lk_problem_lambda(p)[1]));
	}
	lk_problem_destroy(p);
}

/* Relaxation beyond 2 on free rows (AMSOR w = 1.9 with a tiny alpha: 2 / (1 / w + alpha gamma) > 2) makes
 * the iteration blow up; the monitor must notice and hand back the best iterate, finite. */
static void test_divergence_guard(void **state)
{
	(void)state;
	lk_problem *p = boxed_rows(12, 42, 101);
	int n = lk_problem_row_count(p);
	lk_solver_config c = tu_spec("amsor:w=1.9,alpha=0.001");
	c.max_iterations = 100000;
	c.tol_abs = 1e-12;
	c.warm_start = 0;
	lk_stats st;
	assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
	assert_true(st.stop_reason == LK_STOP_DIVERGED || st.stop_reason == LK_STOP_NONFINITE);
	assert_true(st.iterations < 100000);
	assert_int_equal(st.used_best_iterate, 1);
	const double *l = lk_problem_lambda(p);
	for (int i = 0; i < n; ++i)
		assert_true(isfinite(l[i]));
	assert_true(st.res_final <= st.res_initial);
	/* the restored lambda and du agree: the reported residual is the one of the returned lambda */
	lk_metrics m;
	assert_int_equal(lk_problem_metrics(p, NULL, &m), LK_OK);
	assert_true(fabs(m.res - st.res_final) <= 1e-12 * (1.0 + m.res));
	lk_problem_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dense_equals_sparse_iterates),
		cmocka_unit_test(test_half_d_is_pgs),
		cmocka_unit_test(test_theorem_4_2),
		cmocka_unit_test(test_friction_boxstack),
		cmocka_unit_test(test_friction_random_rows),
		cmocka_unit_test(test_unbounded_and_general_boxes),
		cmocka_unit_test(test_siconos_lemke),
		cmocka_unit_test(test_matrix_form_equals_row_form),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_amsor_w1_is_amgs),
		cmocka_unit_test(test_dense_limit),
		cmocka_unit_test(test_bad_diagonal),
		cmocka_unit_test(test_divergence_guard),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

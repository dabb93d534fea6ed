/* Coulomb's cone (friction=cone): each contact's two friction rows bounded together by the disc of radius
 * mu lambda_n, against the engines' box. Hand-computed single contacts and a stack. */
#include "test_util.h"
#include "cone_local.h"
#include "internal.h"
#include "peer_siconos.h"
#include "scene.h"
#include "sim.h"

#include "lcpkit/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One unit-mass body on the ground with one contact at its centre of mass (no lever arm): rows n = z, t1 = x,
 * t2 = y, so A = I, q = J u* = (vz, vx, vy) and the rows decouple apart from the friction bound. */
static lk_problem *one_contact(double vx, double vy, double vz, double mu)
{
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	lk_body_def b = lk_default_body_def();
	b.u[0] = vx;
	b.u[1] = vy;
	b.u[2] = vz;
	for (int k = 0; k < 3; ++k) {
		b.inv_mass[k] = 1.0;
		b.inv_inertia[4 * k] = 1.0;
	}
	assert_int_equal(lk_problem_add_body(p, &b, NULL), LK_OK);
	for (int r = 0; r < 3; ++r) {
		lk_row_def d = lk_default_row_def();
		d.body[0] = 0;
		d.body[1] = LK_STATIC;
		d.J[0][r == 0 ? 2 : r - 1] = 1.0;
		if (r == 0) {
			d.lo = 0;
			d.kind = LK_ROW_NORMAL;
		} else {
			d.findex = 0;
			d.mu = mu;
			d.kind = LK_ROW_FRICTION;
		}
		assert_int_equal(lk_problem_add_row(p, &d, NULL), LK_OK);
	}
	return p;
}

static void solve(lk_problem *p, const char *spec, lk_stats *st)
{
	lk_solver_config c = tu_spec(spec);
	assert_int_equal(lk_solve(p, &c, st, NULL), LK_OK);
}

/* Sliding diagonally, |v_t| = 1.118 > mu lambda_n = 0.5: the cone's impulse is mu lambda_n against the
 * velocity, (-0.5, -0.25) / 1.118 * 1.0; the box clamps each row at -0.5, a resultant of 0.707 at 45 degrees
 * to the velocity's direction: it steers the body. */
static void test_diagonal_slide(void **state)
{
	(void)state;
	lk_problem *p = one_contact(1.0, 0.5, -1.0, 0.5);
	lk_stats st;
	solve(p, "pgs:friction=cone,iters=50,warm=0,tol=1e-14", &st);
	const double *l = lk_problem_lambda(p);
	double s = 0.5 / sqrt(1.25);
	assert_double_equal(l[0], 1.0, 1e-12);
	assert_double_equal(l[1], -1.0 * s, 1e-12);
	assert_double_equal(l[2], -0.5 * s, 1e-12);
	assert_true(st.res_final < 1e-12);
	solve(p, "pgs:iters=50,warm=0", &st);
	assert_double_equal(l[0], 1.0, 1e-12);
	assert_double_equal(l[1], -0.5, 1e-12);
	assert_double_equal(l[2], -0.5, 1e-12);
	lk_problem_destroy(p);
}

/* Sticking, |v_t| = 0.2 < 0.5: both models stop the tangential motion, lambda_t = -v_t. */
static void test_stick(void **state)
{
	(void)state;
	lk_problem *p = one_contact(0.12, -0.16, -1.0, 0.5);
	lk_stats st;
	solve(p, "pgs:friction=cone,iters=50,warm=0", &st);
	const double *l = lk_problem_lambda(p);
	assert_double_equal(l[1], -0.12, 1e-12);
	assert_double_equal(l[2], 0.16, 1e-12);
	lk_problem_destroy(p);
}

/* Whether (r, u) meets Coulomb's law at one contact to tol (relative to the scales ls of the reactions and us of the
 * velocities): r in K, u_n >= 0 and r_n u_n = 0, and a contact that slides (|u_T| > 0 with r_n > 0) on K's rim
 * against its velocity, r_T = -mu r_n u_T / |u_T|; 0 with the broken condition named in why. */
static int coulomb_at(const double r[3], const double u[3], double mu, double ls, double us, double tol,
                      const char **why)
{
	const double el = tol * ls, eu = tol * us, rt = hypot(r[1], r[2]), ut = hypot(u[1], u[2]);
	*why = r[0] < -el ? "r_n < 0" : u[0] < -eu ? "u_n < 0" : fabs(r[0] * u[0]) > el * us + eu * ls ? "r_n u_n != 0"
	       : rt > mu * r[0] + el ? "r_T outside the disc" : NULL;
	if (!*why && ut > 1e3 * eu && r[0] > el &&
	    !(fabs(r[1] + mu * r[0] * u[1] / ut) <= 1e3 * el && fabs(r[2] + mu * r[0] * u[2] / ut) <= 1e3 * el))
		*why = "a sliding contact not on the rim against its velocity";
	return *why == NULL;
}

/* The local problem of one contact (cone_local.c, the step of the cone sweep with local=1) on random blocks W =
 * B B^T + I / 10, half of them moved off their symmetry by a part in a thousand as a file's matrix may be, from
 * reactions in the cone and velocities of every sign, mu from 0 to 1.5: W^-1 is W's inverse, every answer meets
 * Coulomb's law to 1e-10, the local solve answers nearly always, and every case (take-off, sticking, sliding)
 * arises. By hand: W = I, sliding at (1, 0.5) into the ground at 1, mu 0.5 (test_diagonal_slide). */
static void test_local_solve(void **state)
{
	(void)state;
	lk__block3 I = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}, Iinv;
	assert_true(lk__block3_invert(&I, &Iinv));
	double r0[3] = {0, 0, 0};
	assert_true(lk__cone_local_solve(&I, &Iinv, (const double[3]){-1.0, 1.0, 0.5}, 0.5, r0));
	assert_double_equal(r0[0], 1.0, 1e-14);
	assert_double_equal(r0[1], -0.5 / sqrt(1.25), 1e-14);
	assert_double_equal(r0[2], -0.25 / sqrt(1.25), 1e-14);
	lk__rng s = {11};
	const double mus[4] = {0.0, 0.2, 0.7, 1.5};
	int open = 0, stick = 0, slide = 0, declined = 0;
	const int trials = 4000;
	for (int t = 0; t < trials; ++t) {
		double B[3][3], r[3], u[3], b[3];
		lk__block3 W, inv;
		for (int i = 0; i < 3; ++i)
			for (int j = 0; j < 3; ++j)
				B[i][j] = tu_rng_sym(&s);
		for (int i = 0; i < 3; ++i)
			for (int j = 0; j < 3; ++j)
				W.m[i][j] = B[i][0] * B[j][0] + B[i][1] * B[j][1] + B[i][2] * B[j][2] + (i == j ? 0.1 : 0.0);
		if (t % 2)
			for (int i = 0; i < 3; ++i)
				for (int j = 0; j < i; ++j)
					W.m[i][j] *= 1.0 + 1e-3 * tu_rng_sym(&s);
		assert_true(lk__block3_invert(&W, &inv));
		for (int i = 0; i < 3; ++i)
			for (int j = 0; j < 3; ++j) {
				double e = 0.0;
				for (int k = 0; k < 3; ++k)
					e += W.m[i][k] * inv.m[k][j];
				assert_double_equal(e, i == j, 1e-9);
			}
		const double mu = mus[t % 4];
		r[0] = fabs(tu_rng_sym(&s));
		r[1] = mu * r[0] * tu_rng_sym(&s) * 0.7;
		r[2] = mu * r[0] * tu_rng_sym(&s) * 0.7;
		for (int i = 0; i < 3; ++i)
			u[i] = tu_rng_sym(&s);
		for (int i = 0; i < 3; ++i)
			b[i] = u[i] - (W.m[i][0] * r[0] + W.m[i][1] * r[1] + W.m[i][2] * r[2]);
		if (!lk__cone_local_solve(&W, &inv, u, mu, r)) {
			++declined;
			continue;
		}
		double v[3], ls = fabs(r[0]) + hypot(r[1], r[2]), us = 0.0, wn = 0.0;
		for (int i = 0; i < 3; ++i) {
			v[i] = b[i] + W.m[i][0] * r[0] + W.m[i][1] * r[1] + W.m[i][2] * r[2];
			us = fmax(us, fabs(b[i]));
			wn = fmax(wn, fabs(W.m[i][i]));
		}
		const char *why;
		if (!coulomb_at(r, v, mu, fmax(ls, us / wn), us, 1e-10, &why))
			fail_msg("trial %d (mu %g): %s: r (%g %g %g), u (%g %g %g)", t, mu, why, r[0], r[1], r[2], v[0], v[1],
			         v[2]);
		if (r[0] == 0)
			++open;
		else if (hypot(v[1], v[2]) <= 1e-10 * us)
			++stick;
		else
			++slide;
	}
	print_message("local solve: %d take-off, %d sticking, %d sliding, %d declined of %d\n", open, stick, slide,
	              declined, trials);
	assert_true(declined <= trials / 100);
	assert_true(open > trials / 10 && stick > trials / 10 && slide > trials / 10);
}

/* The order that moves every normal row of p (a contact's three rows together, as the generators lay them) to the
 * front, as the engines lay their rows out (joints, the contacts' normal rows, then their friction rows) */
static void normals_first(int n, int *order)
{
	const int nc = n / 3;
	for (int c = 0; c < nc; ++c) {
		order[c] = 3 * c;
		order[nc + 2 * c] = 3 * c + 1;
		order[nc + 2 * c + 1] = 3 * c + 2;
	}
}

/* local=1 takes a contact whole wherever its rows lie: on a box stack's rows laid out as the generators lay them and
 * as the engines do (every normal row first), the sweeps solve each contact at its friction pair's place, and so
 * give the same impulses to the bit, where the one-step sweep, which updates a normal row where it lies, does not. */
static void test_local_solve_any_layout(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 4, 0.5);
	const int n = lk_problem_row_count(p);
	int *order = malloc(sizeof(int) * n);
	normals_first(n, order);
	lk_problem *q = tu_permute_rows(p, order);
	int differ[2] = {0, 0}, whole = 0;
	double *step = malloc(sizeof(double) * n);
	for (int local = 0; local < 2; ++local) {
		lk_stats st;
		solve(p, local ? "pgs:friction=cone,local=1,iters=30,warm=0" : "pgs:friction=cone,iters=30,warm=0", &st);
		solve(q, local ? "pgs:friction=cone,local=1,iters=30,warm=0" : "pgs:friction=cone,iters=30,warm=0", &st);
		for (int k = 0; k < n; ++k) {
			differ[local] += lk_problem_lambda(q)[k] != lk_problem_lambda(p)[order[k]];
			if (local)
				whole += lk_problem_lambda(p)[k] != step[k];
			else
				step[k] = lk_problem_lambda(p)[k];
		}
	}
	print_message("rows differing between the layouts after 30 sweeps: %d of %d one step a contact, %d solved whole "
	              "(%d rows apart from the one-step sweep's)\n", differ[0], n, differ[1], whole);
	assert_true(differ[0] > 0 && whole > 0);
	assert_int_equal(differ[1], 0);
	free(step);
	free(order);
	lk_problem_destroy(q);
	lk_problem_destroy(p);
}

/* A stack with friction solved in the cone: the cone residual falls below 1e-8, every contact's friction lies in
 * its disc, and the spec is refused where the cone has no sweep (another method, another order). */
static void test_stack_and_refusals(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 5, 0.5);
	lk_stats st;
	solve(p, "pgs:friction=cone,iters=20000,tol=1e-8,warm=0", &st);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	const double *l = lk_problem_lambda(p);
	int pairs = 0;
	for (int i = 0; i + 1 < lk_problem_row_count(p); ++i) {
		double mu, lo;
		int f0, f1;
		lk_problem_get_bounds(p, i, &lo, NULL, &mu, &f0, NULL);
		lk_problem_get_bounds(p, i + 1, NULL, NULL, NULL, &f1, NULL);
		if (f0 >= 0 && f1 == f0) {
			assert_true(hypot(l[i], l[i + 1]) <= mu * fabs(l[f0]) * (1 + 1e-9) + 1e-12);
			++pairs;
			++i;
		}
	}
	assert_true(pairs > 0);
	lk_problem_destroy(p);
	lk_solver_config c;
	char err[256];
	assert_int_equal(lk_config_parse("amgs:friction=cone", &c, err, sizeof err), LK_ERR_PARSE);
	assert_int_equal(lk_config_parse("pgs:friction=cone,order=random", &c, err, sizeof err), LK_ERR_PARSE);
	assert_int_equal(lk_config_parse("pgs:local=1", &c, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "goes with friction=cone"));
	assert_int_equal(lk_config_parse("psor:friction=cone", &c, err, sizeof err), LK_OK);
	char buf[64];
	assert_int_equal(lk_config_format(&c, buf, sizeof buf), LK_OK);
	assert_string_equal(buf, "psor:friction=cone");
}

/* Against Siconos's fc3d_nsgs (Jean & Moreau's nonsmooth Gauss-Seidel on the Coulomb problem) on a frictional
 * sphere packing: both reach Siconos's error measure below 1e-8, and the reactions agree to 1e-6. */
static void test_against_siconos_nsgs(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("packing", 12, 0.3);
	const int n = lk_problem_row_count(p), nc = n / 3;
	assert_true(n % 3 == 0 && nc > 2);
	double *W = malloc(sizeof(double) * (size_t)n * n), *q = malloc(sizeof(double) * n);
	double *mu = malloc(sizeof(double) * nc), *r = malloc(sizeof(double) * n);
	assert_int_equal(lk_problem_assemble_dense(p, n, W, q), LK_OK);
	for (int c = 0; c < nc; ++c) {
		int f1, f2;
		double m;
		lk_problem_get_bounds(p, 3 * c + 1, NULL, NULL, &m, &f1, NULL);
		lk_problem_get_bounds(p, 3 * c + 2, NULL, NULL, NULL, &f2, NULL);
		assert_int_equal(f1, 3 * c);
		assert_int_equal(f2, 3 * c);
		mu[c] = m;
	}
	lk_stats st;
	solve(p, "pgs:friction=cone,iters=200000,tol=1e-12,warm=0", &st);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	const double *l = lk_problem_lambda(p);
	lk_peer_result pr;
	double ours = NAN;
	assert_int_equal(lk_peer_siconos_fc3d(nc, W, q, mu, r, 100000, 1e-12, &pr, l, &ours), LK_OK);
	print_message("%d contacts: Siconos nsgs info %d, %d iterations, error %.2e; lcpkit cone %d sweeps, RES %.2e, "
	              "Siconos's error of it %.2e\n",
	              nc, pr.info, pr.iterations, pr.error, st.iterations, st.res_final, ours);
	assert_int_equal(pr.info, 0);
	assert_true(pr.error < 1e-8);
	assert_true(ours < 1e-8);
	assert_true(tu_max_diff(l, r, n) < 1e-6);
	free(W);
	free(q);
	free(mu);
	free(r);
	lk_problem_destroy(p);
}

/* Coulomb's law at (lambda, w) of a problem whose rows are contacts (normal row 3c, its pair 3c + 1, 3c + 2):
 * complementarity of the normal (lambda_n >= 0, w_n >= 0, lambda_n w_n = 0), the disc (|lambda_t| <= mu
 * lambda_n), and maximal dissipation (a sliding contact, |w_t| > 0, on the disc's rim against its velocity:
 * lambda_t = -mu lambda_n w_t / |w_t|), each to tol relative to the problem's impulse and velocity scales. */
static void assert_coulomb(lk_problem *p, double tol, const char *what)
{
	const int n = lk_problem_row_count(p);
	const double *l = lk_problem_lambda(p);
	double *w = malloc(sizeof(double) * n), *q = calloc(n, sizeof(double));
	assert_int_equal(lk_problem_apply(p, q, q, 1), LK_OK);
	assert_int_equal(lk_problem_apply(p, l, w, 1), LK_OK);
	/* the scales: of the impulses, and of the velocities the contacts start from (q) */
	double ls = 0.0, ws = 0.0;
	for (int i = 0; i < n; ++i) {
		ls = fmax(ls, fabs(l[i]));
		ws = fmax(ws, fmax(fabs(w[i]), fabs(q[i])));
	}
	const double el = tol * ls, ew = tol * ws;
	int sliding = 0, sticking = 0;
	for (int c = 0; 3 * c < n; ++c) {
		const double ln = l[3 * c], wn = w[3 * c], t1 = l[3 * c + 1], t2 = l[3 * c + 2];
		const double v1 = w[3 * c + 1], v2 = w[3 * c + 2], vt = hypot(v1, v2);
		double mu;
		int f;
		lk_problem_get_bounds(p, 3 * c + 1, NULL, NULL, &mu, &f, NULL);
		assert_int_equal(f, 3 * c);
		if (!(ln >= -el && wn >= -ew && fabs(ln * wn) <= el * ew + el * fabs(wn) + ew * fabs(ln)))
			fail_msg("%s: contact %d: lambda_n %g, w_n %g not complementary", what, c, ln, wn);
		if (!(hypot(t1, t2) <= mu * ln + el))
			fail_msg("%s: contact %d: |lambda_t| %g beyond mu lambda_n %g", what, c, hypot(t1, t2), mu * ln);
		if (vt > 1e3 * ew && ln > el) {
			/* sliding: the impulse opposes the velocity with the cone's full magnitude */
			++sliding;
			if (!(fabs(t1 + mu * ln * v1 / vt) <= 1e3 * el && fabs(t2 + mu * ln * v2 / vt) <= 1e3 * el))
				fail_msg("%s: contact %d slides at (%g, %g) with impulse (%g, %g), not -mu lambda_n w_t / |w_t|", what,
				         c, v1, v2, t1, t2);
		} else if (ln > el) {
			++sticking;
		}
	}
	print_message("%s: %d sliding and %d sticking contacts meet Coulomb's law\n", what, sliding, sticking);
	free(w);
	free(q);
}

/* The fc3d merit is Siconos's fc3d_compute_error, to rounding, on an iterate that solves nothing yet (a few
 * cone sweeps of a sphere packing), in the row form and in the matrix form of the same problem. */
static void test_fc3d_merit_is_siconos(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("packing", 12, 0.3);
	lk_stats st;
	solve(p, "pgs:friction=cone,iters=4,warm=0", &st);
	lk_peer_fc3d f;
	char err[200];
	assert_int_equal(lk_peer_fc3d_make(p, 3000, &f, err, sizeof err), LK_OK);
	const int n = 3 * f.nc;
	double *r = malloc(sizeof(double) * n), *l = malloc(sizeof(double) * n);
	for (int i = 0; i < n; ++i)
		l[i] = lk_problem_lambda(p)[f.perm[i]];
	lk_peer_result pr;
	double siconos = NAN;
	assert_int_equal(lk_peer_siconos_fc3d(f.nc, f.W, f.q, f.mu, r, 1, 1e-8, &pr, l, &siconos), LK_OK);
	lk_metrics m;
	assert_int_equal(lk_problem_metrics(p, NULL, &m), LK_OK);
	print_message("fc3d error: lcpkit %.15e, Siconos %.15e\n", m.fc3d, siconos);
	assert_true(siconos > 1e-6);
	assert_double_equal(m.fc3d, siconos, 1e-10 * siconos);
	assert_double_equal(st.fc3d_final, siconos, 1e-10 * siconos);
	lk_problem *mp = lk_peer_fc3d_problem(&f);
	assert_non_null(mp);
	assert_int_equal(lk_problem_metrics(mp, l, &m), LK_OK);
	assert_double_equal(m.fc3d, siconos, 1e-10 * siconos);
	/* the merit stops a solve where Siconos would: below the tolerance on Siconos's own measure */
	solve(mp, "pgs:friction=cone,iters=100000,merit=fc3d,tol=1e-9,warm=0", &st);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	assert_int_equal(lk_peer_siconos_fc3d(f.nc, f.W, f.q, f.mu, r, 1, 1e-8, &pr, lk_problem_lambda(mp), &siconos),
	                 LK_OK);
	assert_true(siconos < 1e-9);
	assert_double_equal(st.fc3d_final, siconos, 1e-6 * siconos);
	lk_problem_destroy(mp);
	lk_peer_fc3d_free(&f);
	free(r);
	free(l);
	lk_problem_destroy(p);
}

/* Contacts of the plane (a normal row and one friction row each, Siconos's fc2d): the fc3d merit is Siconos's
 * fc2d_compute_error, to rounding, on an iterate that solves nothing yet and on a solution, and lcpkit's answer is
 * Siconos's fc2d_nsgs's (W strictly diagonally dominant and mu 0.3: the solution is unique). W = 4 I + B B^T / 4
 * with B of pseudo-random entries, q of both signs. */
static void test_fc2d_merit_is_siconos(void **state)
{
	(void)state;
	enum { NC = 12, N = 2 * NC };
	double *W = calloc((size_t)N * N, sizeof(double)), q[N], lo[N], hi[N], mu[N];
	int fi[N];
	double B[N][4];
	unsigned x = 12345;
	for (int i = 0; i < N; ++i)
		for (int k = 0; k < 4; ++k) {
			x = x * 1103515245u + 12345u;
			B[i][k] = (double)((x >> 8) % 2001) / 1000.0 - 1.0;
		}
	for (int i = 0; i < N; ++i) {
		const int normal = i % 2 == 0;
		q[i] = normal ? (i % 4 == 0 ? -1.0 - 0.1 * i : 0.3) : 0.8 - 0.07 * i;
		lo[i] = normal ? 0.0 : -INFINITY;
		hi[i] = INFINITY;
		mu[i] = normal ? 0.0 : 0.3;
		fi[i] = normal ? -1 : i - 1;
		for (int j = 0; j < N; ++j) {
			for (int k = 0; k < 4; ++k)
				W[(size_t)i * N + j] += 0.25 * B[i][k] * B[j][k];
			W[(size_t)i * N + j] += i == j ? 4.0 : 0.0;
		}
	}
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(p, N, W, q, lo, hi, mu, fi), LK_OK);
	/* the problem is seen as one of the plane, in its own order */
	lk_peer_fc3d f;
	char err[200];
	assert_int_equal(lk_peer_fc3d_make(p, 3000, &f, err, sizeof err), LK_OK);
	assert_int_equal(f.dim, 2);
	assert_int_equal(f.nc, NC);
	assert_non_null(f.W);
	for (int i = 0; i < N; ++i)
		assert_int_equal(f.perm[i], i);
	assert_memory_equal(f.W, W, sizeof(double) * N * N);
	lk_stats st;
	solve(p, "pgs:iters=2,warm=0", &st);
	double siconos = NAN;
	assert_int_equal(lk_peer_siconos_error(&f, lk_problem_lambda(p), 1e-8, &siconos), LK_OK);
	lk_metrics m;
	assert_int_equal(lk_problem_metrics(p, NULL, &m), LK_OK);
	print_message("fc2d error: lcpkit %.15e, Siconos %.15e\n", m.fc3d, siconos);
	assert_true(siconos > 1e-4);
	assert_double_equal(m.fc3d, siconos, 1e-10 * siconos);
	/* solved to 1e-10 of the merit: Siconos's error agrees, and so does its own solver's answer */
	solve(p, "pgs:iters=100000,merit=fc3d,tol=1e-10,warm=0", &st);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	assert_int_equal(lk_peer_siconos_error(&f, lk_problem_lambda(p), 1e-8, &siconos), LK_OK);
	assert_true(siconos < 1e-10);
	/* near rounding (w of order 1, the error 1e-11) the two products of W differ in the last bits of w */
	assert_double_equal(st.fc3d_final, siconos, 1e-3 * siconos);
	double r[N];
	lk_peer_result pr;
	assert_int_equal(lk_peer_siconos_fc3d_solve(LK_PEER_FC3D_NSGS, &f, r, 10000, 1e-12, &pr), LK_OK);
	assert_true(pr.error < 1e-12);
	int sticking = 0, sliding = 0, apart = 0;
	for (int i = 0; i < N; ++i) {
		assert_double_equal(lk_problem_lambda(p)[i], r[i], 1e-8);
		if (i % 2 == 1 && r[i - 1] > 1e-9)
			fabs(r[i]) < 0.3 * r[i - 1] - 1e-9 ? ++sticking : ++sliding;
		else if (i % 2 == 0 && r[i] == 0.0)
			++apart;
	}
	/* the problem holds every case of the law */
	print_message("fc2d: %d sticking, %d sliding, %d apart\n", sticking, sliding, apart);
	assert_true(sticking > 0 && sliding > 0 && apart > 0);
	/* Newton on the plane's cone (each contact's two rows one unit of Alart & Curnier's map), asked for the cone or,
	 * the friction rows being all contacts of the plane, with the box: Newton's few iterations, the same answer */
	const char *newton[2] = {"newton-minmap:friction=cone,iters=50,merit=fc3d,tol=1e-12,warm=0",
	                         "newton-minmap:iters=50,merit=fc3d,tol=1e-12,warm=0"};
	for (int k = 0; k < 2; ++k) {
		solve(p, newton[k], &st);
		print_message("%s: %d iterations, error %.3e\n", newton[k], st.iterations, st.fc3d_final);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		assert_true(st.iterations <= 8);
		for (int i = 0; i < N; ++i)
			assert_double_equal(lk_problem_lambda(p)[i], r[i], 1e-9);
	}
	lk_peer_fc3d_free(&f);
	free(W);
	lk_problem_destroy(p);
}

/* The merit evaluated by blocks of rows (the colour order of a problem of LK_PARALLEL_MIN_ROWS rows and more,
 * where a contact's normal row can lie in another block than its pair) is the one of the whole problem. */
static void test_fc3d_merit_by_blocks(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("packing", 1200, 0.3);
	assert_true(lk_problem_row_count(p) >= LK_PARALLEL_MIN_ROWS);
	lk_stats st;
	solve(p, "pgs:order=colour,iters=3,merit=fc3d,tol=1e-30,warm=0", &st);
	lk_metrics m;
	assert_int_equal(lk_problem_metrics(p, NULL, &m), LK_OK);
	print_message("%d rows: fc3d %.15e by blocks, %.15e whole\n", lk_problem_row_count(p), st.fc3d_final, m.fc3d);
	assert_true(m.fc3d > 1e-6);
	assert_double_equal(st.fc3d_final, m.fc3d, 1e-12 * m.fc3d);
	lk_problem_destroy(p);
}

/* Siconos's sums of the cone are made a contact at a time where the rows are in the usual layout and no other merit
 * is summed (merit.c, contact_sums): the same sums to the bit as the row-by-row loop that also sums the Fischer
 * merit, on a sphere packing's and a box stack's rows after a few cone sweeps (contacts sliding, sticking and open),
 * in the row form and Siconos's matrix form, and on blocks of rows that cut contacts (each summed by the loop). */
static void test_fc3d_sums_by_contact(void **state)
{
	(void)state;
	lk_problem *gen[2] = {tu_generate("packing", 40, 0.3), tu_generate("boxstack", 4, 0.5)};
	for (int g = 0; g < 2; ++g) {
		lk_peer_fc3d f;
		char err[200];
		assert_int_equal(lk_peer_fc3d_make(gen[g], 3000, &f, err, sizeof err), LK_OK);
		lk_problem *forms[2] = {gen[g], lk_peer_fc3d_problem(&f)};
		for (int k = 0; k < 2; ++k) {
			lk_problem *p = forms[k];
			lk_stats st;
			solve(p, "pgs:friction=cone,iters=4,warm=0", &st);
			const int n = lk_problem_row_count(p);
			double *w = malloc(sizeof(double) * n);
			assert_int_equal(lk_problem_apply(p, lk_problem_lambda(p), w, 1), LK_OK);
			const int cuts[3][2] = {{0, n}, {1, n - 1}, {4, n / 2}};
			for (int c = 0; c < 3; ++c) {
				lk__merit_sums a, b;
				lk__merit_sums_rows(p, lk_problem_lambda(p), w, p->du, LK_FRICTION_CONE, cuts[c][0], cuts[c][1],
				                    LK__SUMS_FC3D, &a);
				lk__merit_sums_rows(p, lk_problem_lambda(p), w, p->du, LK_FRICTION_CONE, cuts[c][0], cuts[c][1],
				                    LK__SUMS_FC3D | LK__SUMS_FISCHER, &b);
				assert_true(a.ee > 0 && a.hh > 0);
				assert_true(a.hh == b.hh && a.maxh == b.maxh && a.viol == b.viol && a.ee == b.ee && a.nq == b.nq &&
				            a.nl == b.nl && a.nw == b.nw);
			}
			free(w);
		}
		lk_problem_destroy(forms[1]);
		lk_peer_fc3d_free(&f);
		lk_problem_destroy(gen[g]);
	}
}

/* The accelerated cone methods on the hand-computed contacts: the slide's impulse against the velocity on the
 * disc's rim, the stick's exactly -v_t. */
static void test_cone_methods_by_hand(void **state)
{
	(void)state;
	const char *const specs[] = {"newton-minmap:friction=cone,iters=50,warm=0,tol=1e-14",
	                             "apgd:friction=cone,iters=5000,warm=0,tol=1e-14",
	                             "ipm:friction=cone,iters=400,warm=0,tol=1e-14"};
	for (int k = 0; k < 3; ++k) {
		lk_problem *p = one_contact(1.0, 0.5, -1.0, 0.5);
		lk_stats st;
		solve(p, specs[k], &st);
		const double *l = lk_problem_lambda(p), s = 0.5 / sqrt(1.25);
		assert_double_equal(l[0], 1.0, 1e-12);
		assert_double_equal(l[1], -1.0 * s, 1e-12);
		assert_double_equal(l[2], -0.5 * s, 1e-12);
		lk_problem_destroy(p);
		p = one_contact(0.12, -0.16, -1.0, 0.5);
		solve(p, specs[k], &st);
		l = lk_problem_lambda(p);
		assert_double_equal(l[1], -0.12, 1e-12);
		assert_double_equal(l[2], 0.16, 1e-12);
		lk_problem_destroy(p);
	}
}

/* Siconos's light error gates the evaluations of merit=fc3d (monitor.c): the sweeps stop on the merit below the
 * tolerance, within a quarter and a sweep of where a check after every sweep (a history asks for one) stops, on
 * the same iterates: a solve of as many sweeps without any check returns the same reactions to the bit. In both
 * forms: a packing's rows and its Delassus problem, whose reactions are unique, and the Delassus problem of a
 * stack of boxes on four contacts a face, whose reactions are not (the sweeps move them along the solutions). */
static void test_light_error_gate(void **state)
{
	(void)state;
	lk_problem *rows = tu_generate("packing", 12, 0.3), *stack = tu_generate("boxstack", 3, 0.5);
	lk_peer_fc3d f, g;
	char err[200];
	assert_int_equal(lk_peer_fc3d_make(rows, 3000, &f, err, sizeof err), LK_OK);
	assert_int_equal(lk_peer_fc3d_make(stack, 3000, &g, err, sizeof err), LK_OK);
	lk_problem *forms[3] = {rows, lk_peer_fc3d_problem(&f), lk_peer_fc3d_problem(&g)};
	const char *const names[3] = {"packing, rows", "packing, Delassus", "stack, Delassus"};
	for (int k = 0; k < 3; ++k) {
		tu_assert_light_gate(forms[k], "pgs:friction=cone,iters=200000,merit=fc3d,tol=1e-10,warm=0",
		                     "pgs:friction=cone,iters=%d,warm=0", 1e-10, names[k]);
		lk_problem_destroy(forms[k]);
	}
	lk_peer_fc3d_free(&f);
	lk_peer_fc3d_free(&g);
	lk_problem_destroy(stack);
}

/* Each cone method on a sphere packing, whose reactions are unique (its W is positive definite): Siconos's
 * error below 1e-9, the reactions of Siconos's fc3d_nsgs to 1e-6, and Coulomb's law contact by contact. */
static void test_cone_methods_against_siconos(void **state)
{
	(void)state;
	const char *const specs[] = {"newton-minmap:friction=cone,iters=200,merit=fc3d,tol=1e-10,warm=0",
	                             "apgd:friction=cone,iters=200000,merit=fc3d,tol=1e-10,warm=0",
	                             "pgs:friction=cone,iters=200000,merit=fc3d,tol=1e-10,warm=0",
	                             "pgs:friction=cone,local=1,iters=200000,merit=fc3d,tol=1e-10,warm=0",
	                             "pgs-sm:friction=cone,iters=200,merit=fc3d,tol=1e-10,warm=0",
	                             "ipm:friction=cone,iters=400,merit=fc3d,tol=1e-10,warm=0"};
	lk_problem *p = tu_generate("packing", 12, 0.3);
	lk_peer_fc3d f;
	char err[200];
	assert_int_equal(lk_peer_fc3d_make(p, 3000, &f, err, sizeof err), LK_OK);
	const int n = 3 * f.nc;
	double *r = malloc(sizeof(double) * n);
	lk_peer_result pr;
	assert_int_equal(lk_peer_siconos_fc3d_solve(LK_PEER_FC3D_NSGS, &f, r, 100000, 1e-12, &pr),
	                 LK_OK);
	assert_int_equal(pr.info, 0);
	print_message("Siconos's fc3d_nsgs: %d iterations\n", pr.iterations);
	for (int k = 0; k < 6; ++k) {
		lk_problem *mp = lk_peer_fc3d_problem(&f);
		lk_stats st;
		solve(mp, specs[k], &st);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		assert_true(st.fc3d_final < 1e-10);
		print_message("%s: %d iterations, reactions %.2e from Siconos's\n", specs[k], st.iterations,
		              tu_max_diff(lk_problem_lambda(mp), r, n));
		assert_true(tu_max_diff(lk_problem_lambda(mp), r, n) < 1e-6);
		assert_coulomb(mp, 1e-8, specs[k]);
		lk_problem_destroy(mp);
	}
	/* the two-level correction works on the row form: the packing itself, whose rows are in Siconos's order */
	lk_stats st;
	solve(p, "pgs:friction=cone,coarse=2,iters=200000,merit=fc3d,tol=1e-10,warm=0", &st);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	for (int i = 0; i < n; ++i)
		assert_int_equal(f.perm[i], i);
	print_message("pgs:friction=cone,coarse=2: %d sweeps, reactions %.2e from Siconos's\n", st.iterations,
	              tu_max_diff(lk_problem_lambda(p), r, n));
	assert_true(tu_max_diff(lk_problem_lambda(p), r, n) < 1e-6);
	assert_coulomb(p, 1e-8, "pgs:friction=cone,coarse=2");
	/* and the local solve on the row form, its blocks made from the rows' Jacobians */
	solve(p, "pgs:friction=cone,local=1,iters=200000,merit=fc3d,tol=1e-10,warm=0", &st);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	assert_true(tu_max_diff(lk_problem_lambda(p), r, n) < 1e-6);
	assert_coulomb(p, 1e-8, "pgs:friction=cone,local=1 (rows)");
	free(r);
	lk_peer_fc3d_free(&f);
	lk_problem_destroy(p);
}

/* A box on four contacts is statically indeterminate: many reactions give the same motion. What is unique is
 * the contact velocities w (and so the bodies' velocities): Newton on the cone and Siconos's Newton
 * (fc3d_nsn_ac) agree on them, whatever reactions each picks, on a stack at rest (every contact sticking) and on
 * boxes sliding down an incline (every contact sliding); each answer meets Coulomb's law. */
static void test_unique_velocities(void **state)
{
	(void)state;
	const struct {
		const char *kind;
		double mu;
	} cases[] = {{"boxstack", 0.5}, {"incline", 0.1}};
	for (int k = 0; k < 2; ++k) {
		lk_problem *p = tu_generate(cases[k].kind, 4, cases[k].mu);
		lk_peer_fc3d f;
		char err[200];
		assert_int_equal(lk_peer_fc3d_make(p, 3000, &f, err, sizeof err), LK_OK);
		const int n = 3 * f.nc;
		double *r = malloc(sizeof(double) * n), *ws = malloc(sizeof(double) * n), *wl = malloc(sizeof(double) * n);
		lk_peer_result pr;
		assert_int_equal(lk_peer_siconos_fc3d_solve(LK_PEER_FC3D_NSN_AC, &f, r, 1000, 1e-12, &pr),
		                 LK_OK);
		assert_true(pr.error < 1e-10);
		lk_problem *mp = lk_peer_fc3d_problem(&f);
		lk_stats st;
		double vscale = 0.0;
		for (int i = 0; i < n; ++i)
			vscale = fmax(vscale, fabs(f.q[i]));
		assert_int_equal(lk_problem_apply(mp, r, ws, 1), LK_OK);
		const char *const specs[] = {"newton-minmap:friction=cone,iters=200,merit=fc3d,tol=1e-12,warm=0",
		                             "ipm:friction=cone,iters=400,merit=fc3d,tol=1e-12,warm=0"};
		for (int m = 0; m < 2; ++m) {
			solve(mp, specs[m], &st);
			assert_true(st.fc3d_final < 1e-12);
			assert_coulomb(mp, 1e-8, cases[k].kind);
			assert_int_equal(lk_problem_apply(mp, lk_problem_lambda(mp), wl, 1), LK_OK);
			print_message("%s, %s: reactions differ by %.2e, velocities by %.2e (scale %.2e)\n", cases[k].kind,
			              specs[m], tu_max_diff(lk_problem_lambda(mp), r, n), tu_max_diff(wl, ws, n), vscale);
			assert_true(tu_max_diff(wl, ws, n) < 1e-9 * vscale);
		}
		lk_problem_destroy(mp);
		lk_peer_fc3d_free(&f);
		free(r);
		free(ws);
		free(wl);
		lk_problem_destroy(p);
	}
}

/* The cone in the methods that have it, refused by name elsewhere */
static void test_cone_specs(void **state)
{
	(void)state;
	lk_solver_config c;
	char err[256], buf[80];
	const char *const ok[] = {"newton-minmap:friction=cone", "apgd:friction=cone", "pgs:merit=fc3d,friction=cone",
	                          "ipm:friction=cone", "ipm"};
	for (int k = 0; k < 5; ++k) {
		assert_int_equal(lk_config_parse(ok[k], &c, err, sizeof err), LK_OK);
		assert_int_equal(lk_config_format(&c, buf, sizeof buf), LK_OK);
		assert_string_equal(buf, ok[k]);
	}
	const char *const refused[] = {"newton-fischer:friction=cone", "mprgp:friction=cone", "nncg:friction=cone",
	                               "apgd:friction=cone,order=random", "amsor:friction=cone"};
	for (int k = 0; k < 5; ++k)
		assert_int_equal(lk_config_parse(refused[k], &c, err, sizeof err), LK_ERR_PARSE);
	assert_int_equal(lk_config_parse("pgs:merit=fc3e", &c, err, sizeof err), LK_ERR_PARSE);
}

/* `solve --peer` times a call of microseconds in batches (lk_peer_batch_calls), so that the two reads of the CPU clock
 * around it, system calls of a microsecond or two, are not counted in it: a batch lasts a fifth of a millisecond,
 * at most 1,000 calls, a call that long or longer (or one whose time is not known) alone. */
static void test_peer_batches(void **state)
{
	(void)state;
	assert_int_equal(lk_peer_batch_calls(1e-5), 20);
	assert_int_equal(lk_peer_batch_calls(3e-6), 67);
	assert_int_equal(lk_peer_batch_calls(1e-7), 1000);
	assert_int_equal(lk_peer_batch_calls(2e-4), 1);
	assert_int_equal(lk_peer_batch_calls(5.0), 1);
	assert_int_equal(lk_peer_batch_calls(0.0), 1);
	assert_int_equal(lk_peer_batch_calls(NAN), 1);
}

/* A recorded step of Bullet's 20-box stack (the contacts of each face at their own depths: W singular up to the
 * CFM): the interior point reaches Siconos's error 1e-9, with Coulomb's law contact by contact, where 20,000
 * cone sweeps and 200 Newton iterations stay above 1e-6 (docs/benchmarks.md, "Coulomb's cone against
 * Siconos"). */
static void test_ipm_degenerate_stack(void **state)
{
	(void)state;
	lk_problem *p = NULL;
	char err[200];
	assert_int_equal(lk_problem_read(tu_data_path("bullet-boxstack20-step6.lkp"), NULL, &p, NULL, err, sizeof err), LK_OK);
	lk_peer_fc3d f;
	assert_int_equal(lk_peer_fc3d_make(p, 3000, &f, err, sizeof err), LK_OK);
	const char *const slow[] = {"pgs:friction=cone,iters=20000,warm=0", "newton-minmap:friction=cone,iters=200,warm=0"};
	for (int k = 0; k < 2; ++k) {
		lk_problem *mp = lk_peer_fc3d_problem(&f);
		lk_stats st;
		solve(mp, slow[k], &st);
		print_message("%s: Siconos's error %.2e\n", slow[k], st.fc3d_final);
		assert_true(st.fc3d_final > 1e-6);
		lk_problem_destroy(mp);
	}
	lk_problem *mp = lk_peer_fc3d_problem(&f);
	lk_stats st;
	solve(mp, "ipm:friction=cone,iters=200,merit=fc3d,tol=1e-9,warm=0", &st);
	print_message("ipm: Siconos's error %.2e after %d interior-point iterations\n", st.fc3d_final, st.iterations);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	assert_true(st.fc3d_final < 1e-9);
	assert_coulomb(mp, 1e-7, "ipm on Bullet's 20-box stack");
	lk_problem_destroy(mp);
	lk_peer_fc3d_free(&f);
	lk_problem_destroy(p);
}

/* The problem ODE's step `step` of `scene` solves under pgs at 20 iterations, as `lcpkit record` writes it; NULL
 * without ODE. */
static lk_problem *ode_step_problem(const char *scene, int step)
{
	if (!lk_engine_available(LK_ENGINE_ODE))
		return NULL;
	lk_scene *sc = NULL;
	lk_sim *sim = NULL;
	char err[256];
	assert_int_equal(lk_scene_create(scene, &sc, err, sizeof err), LK_OK);
	const lk_sim_def def = {sc, LK_ENGINE_ODE, "pgs", 20, 0, 0, 0};
	assert_int_equal(lk_sim_create(&def, &sim, err, sizeof err), LK_OK);
	for (int k = 1; k <= step; ++k) {
		if (k == step)
			lk_sim_capture_next(sim);
		assert_int_equal(lk_sim_step(sim, NULL), LK_OK);
	}
	lk_problem *p = lk_sim_take_captured(sim);
	assert_non_null(p);
	lk_sim_destroy(sim);
	lk_scene_destroy(sc);
	return p;
}

/* ipm with and without its polish (st[1] and st[0]) on the contacts of row-form problem p as Siconos has them (a
 * normal row and its two friction rows each), each to Siconos's error 1e-8, with Coulomb's law contact by contact. */
static void ipm_both_ways(lk_problem *p, const char *what, lk_stats st[2])
{
	const char *const spec[2] = {"ipm:friction=cone,iters=2000,merit=fc3d,tol=1e-8,warm=0,polish=0",
	                             "ipm:friction=cone,iters=2000,merit=fc3d,tol=1e-8,warm=0"};
	char err[200];
	lk_peer_fc3d f;
	assert_int_equal(lk_peer_fc3d_make(p, 3000, &f, err, sizeof err), LK_OK);
	for (int k = 0; k < 2; ++k) {
		lk_problem *mp = lk_peer_fc3d_problem(&f);
		solve(mp, spec[k], &st[k]);
		print_message("%s, %s: %d iterations, %.0f sweep-equivalents, Siconos's error %.2e\n", what, spec[k],
		              st[k].iterations, st[k].work, st[k].fc3d_final);
		assert_int_equal(st[k].stop_reason, LK_STOP_ABSOLUTE);
		assert_true(st[k].fc3d_final < 1e-8);
		assert_coulomb(mp, 1e-6, what);
		lk_problem_destroy(mp);
	}
	lk_peer_fc3d_free(&f);
}

/* The interior point's polish (ipm.c): Newton from the first answer within `polish` tolerances of the solution.
 * On the contacts of a settling heap (ODE's 40 boxes at step 120, where the De Saxce terms' fixed point converges
 * slowly) the polished solve reaches Siconos's error 1e-8 with at most four fifths of the interior point's work
 * alone. On Bullet's recorded stack, where Newton stalls (W singular up to the CFM), its attempt ends within its
 * share of the work (IPM_POLISH_SHARE times the interior point's) and the interior point goes on to the tolerance.
 * polish=0 is the interior point alone. */
static void test_ipm_polish(void **state)
{
	(void)state;
	lk_stats st[2];
	lk_problem *heap = ode_step_problem("pile:n=40", 120);
	if (heap) {
		ipm_both_ways(heap, "ODE's heap", st);
		assert_true(st[1].work <= 0.8 * st[0].work);
		lk_problem_destroy(heap);
	}
	lk_problem *stack = NULL;
	char err[200];
	assert_int_equal(lk_problem_read(tu_data_path("bullet-boxstack20-step6.lkp"), NULL, &stack, NULL, err, sizeof err),
	                 LK_OK);
	ipm_both_ways(stack, "Bullet's stack", st);
	assert_true(st[1].work > st[0].work); /* Newton was tried, and did not finish the solve */
	assert_true(st[1].work <= 4.0 * st[0].work);
	lk_problem_destroy(stack);
}

/* Rows with bounds of their own, solved by hand: A = [2 1 0; 1 4 1; 0 1 2], q = (-4, 2, 3), row 0 in [0, 1],
 * row 1 free, row 2 in [-0.5, 0.5]. Row 0 at its upper bound (w_0 = -2.625 <= 0), row 2 at its lower bound
 * (w_2 = 1.375 >= 0), row 1 free with w_1 = 1 + 4 x_1 - 0.5 + 2 = 0: x = (1, -0.625, -0.5). And ODE's
 * ragdolls (joints, limits and contacts with box friction): complementarity row by row. */
static void test_ipm_bounds_and_joints(void **state)
{
	(void)state;
	const double A[9] = {2, 1, 0, 1, 4, 1, 0, 1, 2}, q[3] = {-4, 2, 3};
	const double lo[3] = {0, -INFINITY, -0.5}, hi[3] = {1, INFINITY, 0.5};
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(p, 3, A, q, lo, hi, NULL, NULL), LK_OK);
	lk_stats st;
	solve(p, "ipm:iters=100,tol=1e-13,warm=0", &st);
	const double *l = lk_problem_lambda(p);
	assert_double_equal(l[0], 1.0, 1e-12);
	assert_double_equal(l[1], -0.625, 1e-12);
	assert_double_equal(l[2], -0.5, 1e-12);
	lk_problem_destroy(p);
	/* a diagonal slide in the matrix form, A = I (no entry joins a contact's rows: its cones alone do), v_t =
	 * (1, 0.8): the box clamps each friction row at -mu lambda_n = -0.5, the cone puts the pair on the rim
	 * against v_t */
	const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, qs[3] = {-1.0, 1.0, 0.8};
	const double clo[3] = {0, -INFINITY, -INFINITY}, chi[3] = {INFINITY, INFINITY, INFINITY}, cmu[3] = {0, 0.5, 0.5};
	const int cf[3] = {-1, 0, 0};
	for (int cone = 0; cone < 2; ++cone) {
		p = lk_problem_create(LK_FORM_MATRIX);
		assert_int_equal(lk_problem_set_dense(p, 3, I3, qs, clo, chi, cmu, cf), LK_OK);
		solve(p, cone ? "ipm:friction=cone,iters=200,tol=1e-14,warm=0" : "ipm:iters=200,tol=1e-14,warm=0", &st);
		l = lk_problem_lambda(p);
		const double r = 0.5 / sqrt(1.64);
		assert_double_equal(l[0], 1.0, 1e-12);
		assert_double_equal(l[1], cone ? -1.0 * r : -0.5, 1e-12);
		assert_double_equal(l[2], cone ? -0.8 * r : -0.5, 1e-12);
		lk_problem_destroy(p);
	}
	assert_int_equal(lk_problem_read(tu_data_path("ode-ragdolls2-step60.lkp"), NULL, &p, NULL, NULL, 0), LK_OK);
	solve(p, "ipm:iters=400,tol=1e-10,warm=0", &st);
	print_message("ipm on ODE's ragdolls: RES %.2e after %d interior-point iterations\n", st.res_final, st.iterations);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	tu_assert_complementarity(p, lk_problem_lambda(p), 1e-8);
	lk_problem_destroy(p);
}

/* What ipm cannot do it says, and lambda stays as it was: a budget that does not pay for its first convex
 * program (LK_ERR_LIMIT), a friction row on a row that is not a contact's normal and a matrix that is not
 * symmetric (LK_ERR_UNSUPPORTED). */
static void test_ipm_refusals(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("packing", 12, 0.3);
	const int n = lk_problem_row_count(p);
	double *before = malloc(sizeof(double) * n);
	for (int i = 0; i < n; ++i)
		before[i] = 0.01 * i;
	assert_int_equal(lk_problem_set_lambda(p, before, n), LK_OK);
	lk_solver_config c = tu_spec("ipm:iters=2");
	lk_stats st;
	assert_int_equal(lk_solve(p, &c, &st, NULL), LK_ERR_LIMIT);
	assert_non_null(strstr(lk_problem_error(p), "budget= or iters="));
	assert_true(tu_max_diff(lk_problem_lambda(p), before, n) == 0.0);
	lk_problem_destroy(p);
	/* row 1's friction bound hangs on row 0, whose bounds are [-1, 1]: no contact */
	const double A[4] = {2, 0, 0, 2}, q[2] = {-1, 1}, lo[2] = {-1, 0}, hi[2] = {1, 0}, mu[2] = {0, 0.5};
	const int findex[2] = {-1, 0};
	p = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(p, 2, A, q, lo, hi, mu, findex), LK_OK);
	c = tu_spec("ipm");
	assert_int_equal(lk_solve(p, &c, &st, NULL), LK_ERR_UNSUPPORTED);
	assert_non_null(strstr(lk_problem_error(p), "not a contact's"));
	assert_true(lk_problem_lambda(p)[0] == 0.0 && lk_problem_lambda(p)[1] == 0.0);
	lk_problem_destroy(p);
	/* a matrix-form A that is not symmetric is no program's Hessian */
	const double N[4] = {2, 1, 0, 2}, nq[2] = {-1, -1};
	p = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(p, 2, N, nq, NULL, NULL, NULL, NULL), LK_OK);
	assert_int_equal(lk_solve(p, &c, &st, NULL), LK_ERR_UNSUPPORTED);
	assert_non_null(strstr(lk_problem_error(p), "not symmetric (A[0][1] = 1, A[1][0] = 0)"));
	lk_problem_destroy(p);
	free(before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diagonal_slide),
		cmocka_unit_test(test_stick),
		cmocka_unit_test(test_local_solve),
		cmocka_unit_test(test_local_solve_any_layout),
		cmocka_unit_test(test_stack_and_refusals),
		cmocka_unit_test(test_against_siconos_nsgs),
		cmocka_unit_test(test_fc3d_merit_is_siconos),
		cmocka_unit_test(test_fc3d_merit_by_blocks),
		cmocka_unit_test(test_fc3d_sums_by_contact),
		cmocka_unit_test(test_fc2d_merit_is_siconos),
		cmocka_unit_test(test_cone_methods_by_hand),
		cmocka_unit_test(test_light_error_gate),
		cmocka_unit_test(test_cone_methods_against_siconos),
		cmocka_unit_test(test_unique_velocities),
		cmocka_unit_test(test_cone_specs),
		cmocka_unit_test(test_peer_batches),
		cmocka_unit_test(test_ipm_degenerate_stack),
		cmocka_unit_test(test_ipm_polish),
		cmocka_unit_test(test_ipm_bounds_and_joints),
		cmocka_unit_test(test_ipm_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

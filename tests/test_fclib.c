/* The FCLIB reader and writer (scenes/report/fclib_io.c): a round trip, every storage and form, the public
 * global problems of tests/data/fclib against a dense reduction of this file's own, M's symmetry, and files
 * that disagree with themselves (each refused with a message that names what). */
#include "test_util.h"
#include "fclib_io.h"
#include "fuzz/h5_edit.h"
#include "peer_siconos.h"
#include "lcpkit/generate.h"

#include <fclib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/lk-fclib-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *tmp_path(const char *name)
{
	static char path[4][160];
	static int next;
	char *p = path[next++ % 4];
	snprintf(p, sizeof path[0], "%s/%s", dir, name);
	return p;
}

/* ------------------------------------------------------------------ a dense reduction of this file's own */

/* FCLIB matrix A as a dense row-major matrix (D: A->m x A->n, zeroed here), read as the files are written: a
 * triplet's i the row and p the column, compressed columns and compressed rows; duplicates add up. */
static void dense_of(const struct fclib_matrix *A, double *D)
{
	memset(D, 0, sizeof(double) * (size_t)A->m * (size_t)A->n);
	if (A->nz >= 0) {
		for (int k = 0; k < A->nz; ++k)
			D[(size_t)A->i[k] * A->n + A->p[k]] += A->x[k];
		return;
	}
	const int outer = A->nz == -1 ? A->n : A->m;
	for (int o = 0; o < outer; ++o)
		for (int k = A->p[o]; k < A->p[o + 1]; ++k) {
			const int r = A->nz == -1 ? A->i[k] : o, c = A->nz == -1 ? o : A->i[k];
			D[(size_t)r * A->n + c] += A->x[k];
		}
}

/* B (n x k, row-major) becomes A^-1 B; A (n x n, row-major) is destroyed. Gaussian elimination with partial
 * pivoting: nothing of CHOLMOD's or UMFPACK's. */
static void dense_solve(int n, double *A, int k, double *B)
{
	for (int c = 0; c < n; ++c) {
		int piv = c;
		for (int r = c + 1; r < n; ++r)
			if (fabs(A[(size_t)r * n + c]) > fabs(A[(size_t)piv * n + c]))
				piv = r;
		assert_true(A[(size_t)piv * n + c] != 0.0);
		if (piv != c) {
			for (int j = 0; j < n; ++j) {
				double t = A[(size_t)c * n + j];
				A[(size_t)c * n + j] = A[(size_t)piv * n + j];
				A[(size_t)piv * n + j] = t;
			}
			for (int j = 0; j < k; ++j) {
				double t = B[(size_t)c * k + j];
				B[(size_t)c * k + j] = B[(size_t)piv * k + j];
				B[(size_t)piv * k + j] = t;
			}
		}
		for (int r = c + 1; r < n; ++r) {
			const double f = A[(size_t)r * n + c] / A[(size_t)c * n + c];
			if (f == 0.0)
				continue;
			for (int j = c; j < n; ++j)
				A[(size_t)r * n + j] -= f * A[(size_t)c * n + j];
			for (int j = 0; j < k; ++j)
				B[(size_t)r * k + j] -= f * B[(size_t)c * k + j];
		}
	}
	for (int c = n - 1; c >= 0; --c)
		for (int j = 0; j < k; ++j) {
			double v = B[(size_t)c * k + j];
			for (int t = c + 1; t < n; ++t)
				v -= A[(size_t)c * n + t] * B[(size_t)t * k + j];
			B[(size_t)c * k + j] = v / A[(size_t)c * n + c];
		}
}

/* W = H^T M^-1 H and q = H^T M^-1 f + w of a global problem, dense (W m x m row-major), with M as stored, or
 * its symmetric completion from the one triangle it holds when `complete`. */
static void dense_reduction(const struct fclib_global *g, int complete, double *W, double *q)
{
	const int n = g->M->m, m = g->H->n;
	double *M = malloc(sizeof(double) * (size_t)n * n), *H = malloc(sizeof(double) * (size_t)n * m);
	double *X = malloc(sizeof(double) * (size_t)n * (m + 1));
	assert_non_null(M);
	assert_non_null(H);
	assert_non_null(X);
	dense_of(g->M, M);
	dense_of(g->H, H);
	if (complete)
		for (int r = 0; r < n; ++r)
			for (int c = r + 1; c < n; ++c) {
				double v = M[(size_t)r * n + c] != 0.0 ? M[(size_t)r * n + c] : M[(size_t)c * n + r];
				M[(size_t)r * n + c] = M[(size_t)c * n + r] = v;
			}
	for (int r = 0; r < n; ++r) {
		for (int c = 0; c < m; ++c)
			X[(size_t)r * (m + 1) + c] = H[(size_t)r * m + c];
		X[(size_t)r * (m + 1) + m] = g->f[r];
	}
	dense_solve(n, M, m + 1, X);
	for (int a = 0; a < m; ++a) {
		q[a] = g->w[a];
		for (int k = 0; k < n; ++k)
			q[a] += H[(size_t)k * m + a] * X[(size_t)k * (m + 1) + m];
		for (int b = 0; b < m; ++b) {
			double s = 0.0;
			for (int k = 0; k < n; ++k)
				s += H[(size_t)k * m + a] * X[(size_t)k * (m + 1) + b];
			W[(size_t)a * m + b] = s;
		}
	}
	free(M);
	free(H);
	free(X);
}

static double max_abs(const double *v, size_t n)
{
	double m = 0.0;
	for (size_t i = 0; i < n; ++i)
		m = fmax(m, fabs(v[i]));
	return m;
}

/* The imported problem's W and q against the dense reduction of the same file, to rel of their largest entry. */
static void assert_reduction(lk_problem *p, const char *path, int complete, double rel)
{
	struct fclib_global *g = fclib_read_global(path);
	assert_non_null(g);
	const int m = g->H->n;
	assert_int_equal(lk_problem_row_count(p), m);
	double *W = malloc(sizeof(double) * (size_t)m * m), *q = malloc(sizeof(double) * (size_t)m);
	double *Wr = malloc(sizeof(double) * (size_t)m * m), *qr = malloc(sizeof(double) * (size_t)m);
	assert_non_null(W);
	assert_non_null(Wr);
	dense_reduction(g, complete, Wr, qr);
	assert_int_equal(lk_problem_assemble_dense(p, m, W, q), LK_OK);
	const double dw = tu_max_diff(W, Wr, m * m), dq = tu_max_diff(q, qr, m);
	const double sw = max_abs(Wr, (size_t)m * m), sq = max_abs(qr, (size_t)m);
	print_message("%s: W %d x %d, max |W| %.3g, off by %.3g; max |q| %.3g, off by %.3g\n", path, m, m, sw, dw, sq,
	              dq);
	assert_true(sw > 0);
	assert_true(dw <= rel * sw);
	assert_true(dq <= rel * (sq > 0 ? sq : 1.0));
	free(W);
	free(q);
	free(Wr);
	free(qr);
	fclib_delete_global(g);
	free(g);
}

/* ------------------------------------------------------------------------------------------ round trip */

/* A contact problem survives the trip through FCLIB: same W, q and mu, same PGS iterates. */
static void test_round_trip(void **state)
{
	(void)state;
	lk_gen_params g = lk_default_gen_params(LK_GEN_BOXSTACK);
	g.n = 4;
	lk_problem *p = NULL, *q = NULL;
	char err[512];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	const char *path = tmp_path("stack.hdf5");
	assert_int_equal(lk_fclib_export(p, 10000, path, err, sizeof err), LK_OK);
	assert_int_equal(lk_fclib_import(path, &q, err, sizeof err), LK_OK);
	assert_string_equal(err, ""); /* nothing to note */
	int n = lk_problem_row_count(p);
	assert_int_equal(lk_problem_row_count(q), n);
	double *A = malloc(sizeof(double) * n * n), *B = malloc(sizeof(double) * n * n);
	double *qa = malloc(sizeof(double) * n), *qb = malloc(sizeof(double) * n);
	assert_int_equal(lk_problem_assemble_dense(p, n, A, qa), LK_OK);
	assert_int_equal(lk_problem_assemble_dense(q, n, B, qb), LK_OK);
	assert_memory_equal(A, B, sizeof(double) * n * n);
	assert_memory_equal(qa, qb, sizeof(double) * n);
	for (int i = 0; i < n; ++i) {
		double m1, m2;
		int f1, f2;
		lk_problem_get_bounds(p, i, NULL, NULL, &m1, &f1, NULL);
		lk_problem_get_bounds(q, i, NULL, NULL, &m2, &f2, NULL);
		assert_int_equal(f1, f2);
		if (f1 >= 0)
			assert_double_equal(m1, m2, 0);
	}
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.max_iterations = 50;
	assert_int_equal(lk_solve(p, &cfg, NULL, NULL), LK_OK);
	assert_int_equal(lk_solve(q, &cfg, NULL, NULL), LK_OK);
	assert_true(tu_max_diff(lk_problem_lambda(p), lk_problem_lambda(q), n) < 1e-12);
	/* a joint row has no place in a local problem; a missing file is an I/O error; a file that is not HDF5 is
	 * refused with a message that says so */
	lk_problem *chain = NULL;
	lk_gen_params gc = lk_default_gen_params(LK_GEN_CHAIN);
	gc.n = 2;
	assert_int_equal(lk_generate(&gc, &chain, err, sizeof err), LK_OK);
	assert_int_equal(lk_fclib_export(chain, 10000, path, err, sizeof err), LK_ERR_UNSUPPORTED);
	assert_non_null(strstr(err, "contacts only"));
	lk_problem *none = NULL;
	assert_int_equal(lk_fclib_import("/nonexistent/x.hdf5", &none, err, sizeof err), LK_ERR_IO);
	assert_null(none);
	const char *junk = tmp_path("junk.hdf5");
	FILE *f = fopen(junk, "w");
	assert_non_null(f);
	fputs("not hdf5\n", f);
	fclose(f);
	assert_int_equal(lk_fclib_import(junk, &none, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "not HDF5"));
	free(A);
	free(B);
	free(qa);
	free(qb);
	lk_problem_destroy(chain);
	lk_problem_destroy(p);
	lk_problem_destroy(q);
}

/* ------------------------------------------------------------------------------ storages and forms */

/* A non-symmetric local W in each of FCLIB's storages, as the files are written (a triplet's i the row and p
 * the column; compressed columns; compressed rows): each reads back as the same W. */
static void test_local_storages(void **state)
{
	(void)state;
	const double Wd[3][3] = {{2, 0.5, 0}, {0, 3, 0.25}, {0.75, 0, 4}};
	int ti[6] = {0, 0, 1, 1, 2, 2}, tp[6] = {0, 1, 1, 2, 0, 2};
	double tx[6] = {2, 0.5, 3, 0.25, 0.75, 4};
	int cp[4] = {0, 2, 4, 6}, ci[6] = {0, 2, 0, 1, 1, 2};
	double cx[6] = {2, 0.75, 0.5, 3, 0.25, 4};
	int rp[4] = {0, 2, 4, 6}, rj[6] = {0, 1, 1, 2, 0, 2};
	double lq[3] = {-1, 0.2, 0.1}, lmu[1] = {0.4};
	struct fclib_matrix forms[3] = {{6, 3, 3, tp, ti, tx, 6, NULL}, {6, 3, 3, cp, ci, cx, -1, NULL},
	                                {6, 3, 3, rp, rj, tx, -2, NULL}};
	const char *path = tmp_path("local_forms.hdf5");
	char err[512];
	for (int k = 0; k < 3; ++k) {
		struct fclib_local loc = {&forms[k], NULL, NULL, lmu, lq, NULL, 3, NULL};
		remove(path);
		assert_int_equal(fclib_write_local(&loc, path), 1);
		lk_problem *lp = NULL;
		if (lk_fclib_import(path, &lp, err, sizeof err) != LK_OK)
			fail_msg("storage %d: %s", k, err);
		double Wr[9], qr[3];
		assert_int_equal(lk_problem_assemble_dense(lp, 3, Wr, qr), LK_OK);
		if (tu_max_diff(Wr, &Wd[0][0], 9) != 0.0)
			fail_msg("storage %d: W read as [%g %g %g; %g %g %g; %g %g %g]", k, Wr[0], Wr[1], Wr[2], Wr[3], Wr[4],
			         Wr[5], Wr[6], Wr[7], Wr[8]);
		assert_true(tu_max_diff(qr, lq, 3) == 0.0);
		/* a normal row, then two friction rows on it with the contact's mu */
		double m1;
		int f1;
		lk_problem_get_bounds(lp, 2, NULL, NULL, &m1, &f1, NULL);
		assert_int_equal(f1, 0);
		assert_double_equal(m1, 0.4, 0);
		lk_problem_destroy(lp);
	}
	/* a triplet's duplicate entries add up, as CSparse and Siconos read them */
	int di[7] = {0, 0, 1, 1, 2, 2, 2}, dp[7] = {0, 1, 1, 2, 0, 2, 2};
	double dx[7] = {2, 0.5, 3, 0.25, 0.75, 1.5, 2.5};
	struct fclib_matrix dup = {7, 3, 3, dp, di, dx, 7, NULL};
	struct fclib_local loc = {&dup, NULL, NULL, lmu, lq, NULL, 3, NULL};
	remove(path);
	assert_int_equal(fclib_write_local(&loc, path), 1);
	lk_problem *lp = NULL;
	assert_int_equal(lk_fclib_import(path, &lp, err, sizeof err), LK_OK);
	double Wr[9], qr[3];
	assert_int_equal(lk_problem_assemble_dense(lp, 3, Wr, qr), LK_OK);
	assert_true(tu_max_diff(Wr, &Wd[0][0], 9) == 0.0);
	lk_problem_destroy(lp);
}

/* A global problem, M v = H r + f, u = H^T v + w, with M = diag(2, 4, 5) and H = [1 0 0; 0 1 0; 0.5 0 1] in
 * each storage for M and H (a triplet's i the row), reduces to W = H^T M^-1 H, q = H^T M^-1 f + w, computed
 * here by hand; solved in Coulomb's cone it agrees with Siconos's global solver on the original problem. */
static void test_global_storages(void **state)
{
	(void)state;
	int mp[4] = {0, 1, 2, 3}, mi[3] = {0, 1, 2};
	double mx[3] = {2, 4, 5};
	/* H in compressed columns, and as triplets (i the row) */
	int hp[4] = {0, 2, 3, 4}, hi[4] = {0, 2, 1, 2}, hti[4] = {0, 2, 1, 2}, htp[4] = {0, 0, 1, 2};
	double hx[4] = {1, 0.5, 1, 1}, fv[3] = {0.1, -0.2, -1}, wv[3] = {-0.3, 0.1, 0}, muv[1] = {0.5};
	struct fclib_matrix Ms[2] = {{3, 3, 3, mp, mi, mx, -1, NULL}, {3, 3, 3, mi, mi, mx, 3, NULL}};
	struct fclib_matrix Hs[2] = {{4, 3, 3, hp, hi, hx, -1, NULL}, {4, 3, 3, htp, hti, hx, 4, NULL}};
	const double Hd[3][3] = {{1, 0, 0}, {0, 1, 0}, {0.5, 0, 1}}, Md[3] = {2, 4, 5};
	double Wexp[9], qexp[3];
	for (int a = 0; a < 3; ++a) {
		qexp[a] = wv[a];
		for (int k = 0; k < 3; ++k)
			qexp[a] += Hd[k][a] * fv[k] / Md[k];
		for (int b = 0; b < 3; ++b) {
			Wexp[3 * a + b] = 0;
			for (int k = 0; k < 3; ++k)
				Wexp[3 * a + b] += Hd[k][a] * Hd[k][b] / Md[k];
		}
	}
	const char *path = tmp_path("global.hdf5");
	char err[512];
	for (int k = 0; k < 4; ++k) {
		struct fclib_global gp = {&Ms[k & 1], &Hs[k >> 1], NULL, muv, fv, NULL, wv, 3, NULL};
		remove(path);
		assert_int_equal(fclib_write_global(&gp, path), 1);
		lk_problem *gl = NULL;
		if (lk_fclib_import(path, &gl, err, sizeof err) != LK_OK)
			fail_msg("M storage %d, H storage %d: %s", k & 1, k >> 1, err);
		assert_string_equal(err, ""); /* a diagonal M is symmetric: nothing to note */
		double Wgot[9], qgot[3];
		assert_int_equal(lk_problem_assemble_dense(gl, 3, Wgot, qgot), LK_OK);
		assert_true(tu_max_diff(Wgot, Wexp, 9) < 1e-14);
		assert_true(tu_max_diff(qgot, qexp, 3) < 1e-14);
		if (k == 3) {
			/* solved in Coulomb's cone, the reactions agree with Siconos's global solver on the original
			 * problem (its own reduction: gfc3d NSGS_WR); the contact is active (u_n of r = 0 is -0.35) */
			lk_solver_config cc = tu_spec("pgs:friction=cone,iters=10000,tol=1e-13,warm=0");
			assert_int_equal(lk_solve(gl, &cc, NULL, NULL), LK_OK);
			const double Md_dense[9] = {2, 0, 0, 0, 4, 0, 0, 0, 5};
			double rs[3];
			lk_peer_result gpr;
			assert_int_equal(lk_peer_siconos_gfc3d(3, 1, Md_dense, &Hd[0][0], fv, wv, muv, rs, 10000, 1e-13, &gpr),
			                 LK_OK);
			assert_int_equal(gpr.info, 0);
			assert_true(lk_problem_lambda(gl)[0] > 0.01);
			assert_true(tu_max_diff(lk_problem_lambda(gl), rs, 3) < 1e-6);
		}
		lk_problem_destroy(gl);
	}
	/* G with columns (equality constraints) is not supported, and said so */
	int gp_[2] = {0, 1}, gi[1] = {0};
	double gx[1] = {1}, bv[1] = {0};
	struct fclib_matrix G = {1, 3, 1, gp_, gi, gx, -1, NULL};
	struct fclib_global with_g = {&Ms[0], &Hs[0], &G, muv, fv, bv, wv, 3, NULL};
	remove(path);
	assert_int_equal(fclib_write_global(&with_g, path), 1);
	lk_problem *none = NULL;
	assert_int_equal(lk_fclib_import(path, &none, err, sizeof err), LK_ERR_UNSUPPORTED);
	assert_non_null(strstr(err, "equality constraints"));
	assert_null(none);
}

/* ---------------------------------------------------------------------------------------- M's symmetry */

/* A 4 x 4 M in compressed columns from a dense one (row-major); H couples all four velocities to one contact. */
static lk_status write_and_import(const double *Md, const char *path, lk_problem **out, char *err, size_t esz)
{
	int mp[5], mi[16], nz = 0;
	double mx[16];
	mp[0] = 0;
	for (int c = 0; c < 4; ++c) {
		for (int r = 0; r < 4; ++r)
			if (Md[4 * r + c] != 0.0) {
				mi[nz] = r;
				mx[nz++] = Md[4 * r + c];
			}
		mp[c + 1] = nz;
	}
	int hi[7] = {0, 1, 2, 3, 0, 1, 2}, hp[7] = {0, 0, 0, 0, 1, 1, 2};
	double hx[7] = {1, 0.2, -0.1, 0.3, 1, 0.5, 1};
	double fv[4] = {0.2, -1, -0.5, 0.1}, wv[3] = {0.05, 0, 0}, muv[1] = {0.3};
	struct fclib_matrix M = {nz, 4, 4, mp, mi, mx, -1, NULL}, H = {7, 4, 3, hp, hi, hx, 7, NULL};
	struct fclib_global gp = {&M, &H, NULL, muv, fv, NULL, wv, 3, NULL};
	remove(path);
	assert_int_equal(fclib_write_global(&gp, path), 1);
	return lk_fclib_import(path, out, err, esz);
}

/* A global problem beyond a dense W's reach: 3,000 contacts (9,000 rows) on 1,000 bodies of M = diag(mass), each
 * contact between two neighbouring bodies (the last on one), reduces to the sparse W = H^T M^-1 H, whose entries
 * are checked against H^T M^-1 H made here: only the contacts that share a body couple. */
static void test_global_sparse_reduction(void **state)
{
	(void)state;
	enum { NB = 1000, NC = 3000, N = 6 * NB, ROWS = 3 * NC };
	int *mp = malloc(sizeof(int) * (N + 1)), *mi = malloc(sizeof(int) * N);
	double *mx = malloc(sizeof(double) * N), *fv = malloc(sizeof(double) * N);
	for (int k = 0; k < N; ++k) {
		mp[k] = mi[k] = k;
		mx[k] = 1.0 + (k / 6) % 7;
		fv[k] = -0.1 * ((k % 6) == 2);
	}
	mp[N] = N;
	/* contact c on body c % NB (and body c % NB + 1, except the last body): its row r a unit direction on the
	 * first body's dof r, and the same with the opposite sign on the second's */
	int *hp = malloc(sizeof(int) * (ROWS + 1)), *hi = malloc(sizeof(int) * 2 * ROWS);
	double *hx = malloc(sizeof(double) * 2 * ROWS), *wv = calloc(ROWS, sizeof(double)), *muv = malloc(sizeof(double) * NC);
	int nz = 0;
	for (int c = 0; c < NC; ++c) {
		muv[c] = 0.4;
		const int b0 = c % NB, b1 = b0 + 1 < NB ? b0 + 1 : -1;
		for (int r = 0; r < 3; ++r) {
			hp[3 * c + r] = nz;
			hi[nz] = 6 * b0 + (r + 2) % 3;
			hx[nz++] = 1.0;
			if (b1 >= 0) {
				hi[nz] = 6 * b1 + (r + 2) % 3;
				hx[nz++] = -1.0;
			}
		}
	}
	hp[ROWS] = nz;
	struct fclib_matrix M = {N, N, N, mp, mi, mx, -1, NULL}, H = {nz, N, ROWS, hp, hi, hx, -1, NULL};
	struct fclib_global gp = {&M, &H, NULL, muv, fv, NULL, wv, 3, NULL};
	const char *path = tmp_path("global_large.hdf5");
	remove(path);
	assert_int_equal(fclib_write_global(&gp, path), 1);
	lk_problem *p = NULL;
	char err[512];
	if (lk_fclib_import(path, &p, err, sizeof err) != LK_OK)
		fail_msg("%s", err);
	assert_int_equal(lk_problem_row_count(p), ROWS);
	int n = 0;
	const int *rp, *ci;
	const double *val, *q;
	assert_int_equal(lk_problem_get_matrix(p, &n, &rp, &ci, &val, &q), LK_OK);
	/* every stored entry is H(:, a) . M^-1 H(:, b), and row a holds every b whose contact shares a body with a's */
	int64_t entries = 0;
	for (int a = 0; a < ROWS; ++a) {
		int expect = 0;
		/* the structure repeats: the first 300 rows are checked whole, every row's count is summed */
		for (int b = 0; a <= 300 && b < ROWS; ++b) {
			double v = 0.0;
			for (int s1 = hp[a]; s1 < hp[a + 1]; ++s1)
				for (int s2 = hp[b]; s2 < hp[b + 1]; ++s2)
					if (hi[s1] == hi[s2])
						v += hx[s1] * hx[s2] / mx[hi[s1]];
			if (v == 0.0)
				continue;
			++expect;
			int found = 0;
			for (int e = rp[a]; e < rp[a + 1]; ++e)
				if (ci[e] == b) {
					assert_double_equal(val[e], v, 1e-14);
					found = 1;
				}
			if (!found)
				fail_msg("W[%d][%d] = %g not stored", a, b, v);
		}
		entries += rp[a + 1] - rp[a];
		if (a <= 300)
			assert_int_equal(rp[a + 1] - rp[a], expect);
	}
	print_message("global reduction: %d rows, %lld entries of W stored\n", ROWS, (long long)entries);
	assert_true(entries < 40LL * ROWS); /* a body's 6 contacts couple; a dense W would hold 9,000 a row */
	lk_problem_destroy(p);
	free(mp);
	free(mi);
	free(mx);
	free(fv);
	free(hp);
	free(hi);
	free(hx);
	free(wv);
	free(muv);
}

/* M as the file stores it: symmetric (no note), one triangle of a symmetric matrix (read as that matrix, with a
 * note), or not symmetric (the whole M by L U, with a note naming the asymmetry); W and q equal this file's
 * dense reduction of the same reading each time. Not positive definite or singular: refused. */
static void test_m_symmetry(void **state)
{
	(void)state;
	const double S[16] = {4, 1, 0, 0.5, 1, 3, 0.2, 0, 0, 0.2, 2, 0.1, 0.5, 0, 0.1, 5};
	double U[16], L[16], N[16];
	for (int r = 0; r < 4; ++r)
		for (int c = 0; c < 4; ++c) {
			U[4 * r + c] = c >= r ? S[4 * r + c] : 0.0;
			L[4 * r + c] = c <= r ? S[4 * r + c] : 0.0;
			N[4 * r + c] = S[4 * r + c];
		}
	N[4 * 0 + 1] = 1.02; /* M_01 = 1.02, M_10 = 1: slightly non-symmetric */
	const struct {
		const double *M;
		int complete;
		const char *note;
	} cases[] = {{S, 0, ""}, {U, 1, "only its upper triangle"}, {L, 1, "only its lower triangle"},
	             {N, 0, "M is not symmetric (largest |M_ij - M_ji| 0.02,"}};
	const char *path = tmp_path("symmetry.hdf5");
	char err[512];
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
		lk_problem *p = NULL;
		if (write_and_import(cases[k].M, path, &p, err, sizeof err) != LK_OK)
			fail_msg("case %zu: %s", k, err);
		if (!cases[k].note[0])
			assert_string_equal(err, "");
		else if (!strstr(err, cases[k].note))
			fail_msg("case %zu: note '%s', expected '%s'", k, err, cases[k].note);
		assert_reduction(p, path, cases[k].complete, 1e-13);
		if (k == 3) {
			/* the whole M: W = H^T M^-1 H is then not symmetric either */
			double W[9], q[3];
			assert_int_equal(lk_problem_assemble_dense(p, 3, W, q), LK_OK);
			assert_true(fabs(W[1] - W[3]) > 1e-4);
		}
		lk_problem_destroy(p);
	}
	/* symmetric but not positive definite; not symmetric and singular */
	double I[16] = {1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
	double Z[16] = {1, 2, 0, 0, 0.5, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
	lk_problem *none = NULL;
	assert_int_equal(write_and_import(I, path, &none, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "positive definite"));
	assert_null(none);
	assert_int_equal(write_and_import(Z, path, &none, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "singular"));
	assert_null(none);
}

/* ------------------------------------------------------------------------------------ the public files */

/* With box friction the imported rows' own LCP is solved; in Coulomb's cone Siconos's error measure of the
 * reactions (fc3d) is as small as Siconos's own solver gets it. */
static void solve_both(lk_problem *p, const char *name)
{
	const int n = lk_problem_row_count(p), nc = n / 3;
	lk_stats st;
	lk_solver_config box = tu_spec("pgs:iters=100000,tol=1e-10,warm=0");
	assert_int_equal(lk_solve(p, &box, &st, NULL), LK_OK);
	print_message("%s: box friction, PGS: %d sweeps, RES %.3g (%s)\n", name, st.iterations, st.res_final,
	              lk_stop_reason_name(st.stop_reason));
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	tu_assert_complementarity(p, lk_problem_lambda(p), 1e-8);

	lk_solver_config cone = tu_spec("pgs:friction=cone,iters=100000,tol=1e-10,warm=0");
	assert_int_equal(lk_solve(p, &cone, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	double *W = malloc(sizeof(double) * (size_t)n * n), *q = malloc(sizeof(double) * (size_t)n);
	double *mu = malloc(sizeof(double) * (size_t)nc), *r = malloc(sizeof(double) * (size_t)n);
	assert_non_null(W);
	assert_non_null(mu);
	assert_int_equal(lk_problem_assemble_dense(p, n, W, q), LK_OK);
	for (int c = 0; c < nc; ++c)
		lk_problem_get_bounds(p, 3 * c + 1, NULL, NULL, &mu[c], NULL, NULL);
	lk_peer_result pr;
	double ours = NAN;
	assert_int_equal(lk_peer_siconos_fc3d(nc, W, q, mu, r, 100000, 1e-10, &pr, lk_problem_lambda(p), &ours), LK_OK);
	print_message("%s: Coulomb's cone, PGS: %d sweeps, RES %.3g; Siconos's error of it %.3g (Siconos's NSGS: "
	              "%d iterations, error %.3g)\n",
	              name, st.iterations, st.res_final, ours, pr.iterations, pr.error);
	assert_int_equal(pr.info, 0);
	assert_true(ours < 1e-7);
	free(W);
	free(q);
	free(mu);
	free(r);
}

/* Siconos's global solver (gfc3d, its own reduction) on the file's problem as read by this file (M completed
 * from its triangle when `complete`): its reactions solve the imported local problem, Siconos's error measure
 * of them there small, so that the reduction is of the problem Siconos solves. */
static void assert_siconos_agrees(lk_problem *p, const char *path, int complete)
{
	struct fclib_global *g = fclib_read_global(path);
	assert_non_null(g);
	const int n = g->M->m, m = g->H->n, nc = m / 3;
	double *M = malloc(sizeof(double) * (size_t)n * n), *H = malloc(sizeof(double) * (size_t)n * m);
	double *r = malloc(sizeof(double) * (size_t)m), *W = malloc(sizeof(double) * (size_t)m * m);
	double *q = malloc(sizeof(double) * (size_t)m), *rl = malloc(sizeof(double) * (size_t)m);
	assert_non_null(M);
	assert_non_null(W);
	dense_of(g->M, M);
	dense_of(g->H, H);
	if (complete)
		for (int a = 0; a < n; ++a)
			for (int b = a + 1; b < n; ++b)
				M[(size_t)b * n + a] = M[(size_t)a * n + b];
	lk_peer_result gr, lr;
	assert_int_equal(lk_peer_siconos_gfc3d(n, nc, M, H, g->f, g->w, g->mu, r, 100000, 1e-10, &gr), LK_OK);
	assert_int_equal(gr.info, 0);
	assert_int_equal(lk_problem_assemble_dense(p, m, W, q), LK_OK);
	double err = NAN;
	assert_int_equal(lk_peer_siconos_fc3d(nc, W, q, g->mu, rl, 10, 1e-10, &lr, r, &err), LK_OK);
	print_message("%s: Siconos's global solver: %d iterations; its reactions on the imported problem: error %.3g\n",
	              path, gr.iterations, err);
	assert_true(err < 1e-6);
	free(M);
	free(H);
	free(r);
	free(W);
	free(q);
	free(rl);
	fclib_delete_global(g);
	free(g);
}

/* The two public global problems of tests/data/fclib (Siconos's test data, triplets with i the row) import,
 * their W and q equal this file's dense reduction and agree with Siconos's global solver, and they solve with
 * box and cone friction. CubeH8 stores the upper triangle of its M, which the reader says. */
static void test_public_files(void **state)
{
	(void)state;
	char err[512];
	char cube[512], stack[512]; /* tu_data_path's buffer is its own */
	snprintf(cube, sizeof cube, "%s", tu_data_path("fclib/CubeH8.hdf5"));
	snprintf(stack, sizeof stack, "%s", tu_data_path("fclib/Box_Stacks-i0122-82-5.hdf5"));
	lk_problem *p = NULL;
	if (lk_fclib_import(cube, &p, err, sizeof err) != LK_OK)
		fail_msg("%s", err);
	assert_non_null(strstr(err, "M holds only its upper triangle"));
	assert_reduction(p, cube, 1, 1e-10);
	assert_siconos_agrees(p, cube, 1);
	solve_both(p, "CubeH8");
	lk_problem_destroy(p);

	if (lk_fclib_import(stack, &p, err, sizeof err) != LK_OK)
		fail_msg("%s", err);
	assert_string_equal(err, "");
	assert_reduction(p, stack, 0, 1e-12);
	assert_siconos_agrees(p, stack, 0);
	solve_both(p, "Box_Stacks");
	lk_problem_destroy(p);
}

/* The FCLIB file at tests/data/NAME, imported (the test fails with the importer's message where it cannot be). */
static lk_problem *import_data(const char *name)
{
	char err[512], path[512];
	snprintf(path, sizeof path, "%s", tu_data_path(name));
	lk_problem *p = NULL;
	if (lk_fclib_import(path, &p, err, sizeof err) != LK_OK)
		fail_msg("%s", err);
	return p;
}

/* merit=fc3d's evaluations behind Siconos's light error (monitor.c) on a problem whose reactions are not unique
 * (LMGC's PerioBox, Siconos's test data): the cone sweep reaches Siconos's error 1e-8 while it still moves the
 * reactions along the solutions by more than the gate lets through, and the quarter more sweeps after which the
 * merit is evaluated anyway stops it within a quarter and a sweep of where a check after every sweep (a history
 * asks for one) stops, on the same iterates. With the change alone the sweeps ran 1,540 instead of 37. */
static void test_light_gate_non_unique(void **state)
{
	(void)state;
	lk_problem *p = import_data("fclib/LMGC_100_PR_PerioBox-i00361-60-03000.hdf5");
	assert_int_equal(lk_problem_row_count(p), 180);
	tu_assert_light_gate(p, "pgs:friction=cone,iters=100000,merit=fc3d,tol=1e-8,warm=0",
	                     "pgs:friction=cone,iters=%d,warm=0", 1e-8, "PerioBox");
	lk_problem_destroy(p);
}

/* The cone sweep with each contact's problem solved exactly (local=1) is nonsmooth block Gauss-Seidel, the method of
 * Siconos's fc3d_nsgs (Jean 1999): on FCLIB's Box_Stacks, whose boxes' contacts couple their normal and friction rows,
 * it reaches Siconos's error 1e-8 in about as many sweeps as fc3d_nsgs takes iterations (32 and 33 when this was
 * written), and in fewer than the sweep of one projected step a contact (39). */
static void test_local_solve_is_nsgs(void **state)
{
	(void)state;
	lk_problem *p = import_data("fclib/Box_Stacks-i0122-82-5.hdf5");
	char err[512];
	lk_peer_fc3d f;
	assert_int_equal(lk_peer_fc3d_make(p, 0, &f, err, sizeof err), LK_OK);
	double *r = malloc(sizeof(double) * 3 * (size_t)f.nc);
	lk_peer_result pr;
	assert_int_equal(lk_peer_siconos_fc3d_solve(LK_PEER_FC3D_NSGS, &f, r, 10000, 1e-8, &pr), LK_OK);
	assert_int_equal(pr.info, 0);
	int sweeps[2];
	for (int local = 0; local < 2; ++local) {
		lk_solver_config c = tu_spec(local ? "pgs:friction=cone,local=1,iters=10000,merit=fc3d,tol=1e-8,warm=0"
		                                   : "pgs:friction=cone,iters=10000,merit=fc3d,tol=1e-8,warm=0");
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		double e = NAN;
		assert_int_equal(lk_peer_siconos_error(&f, lk_problem_lambda(p), 1e-8, &e), LK_OK);
		assert_true(e < 1e-8);
		sweeps[local] = st.iterations;
	}
	print_message("Box_Stacks: fc3d_nsgs %d iterations, the cone sweep %d, with local=1 %d\n", pr.iterations,
	              sweeps[0], sweeps[1]);
	assert_true(sweeps[1] < sweeps[0]);
	assert_true(sweeps[1] >= 0.8 * pr.iterations && sweeps[1] <= 1.25 * pr.iterations);
	free(r);
	lk_peer_fc3d_free(&f);
	lk_problem_destroy(p);
}

/* --------------------------------------------------------------------- files that disagree with themselves */

/* A small local problem (two 3D contacts, W 6 x 6 as triplets) and a small global one (M 3 x 3 in compressed
 * columns, H 3 x 3 as triplets), valid, written by libfclib: each case below breaks one of them. */
static void write_local(const char *path)
{
	int ti[8] = {0, 1, 2, 3, 4, 5, 0, 3}, tp[8] = {0, 1, 2, 3, 4, 5, 3, 0};
	double tx[8] = {2, 2, 2, 3, 3, 3, 0.5, 0.5}, q[6] = {-1, 0, 0, -0.5, 0.1, 0}, mu[2] = {0.5, 0.4};
	struct fclib_matrix W = {8, 6, 6, tp, ti, tx, 8, NULL};
	struct fclib_local loc = {&W, NULL, NULL, mu, q, NULL, 3, NULL};
	remove(path);
	assert_int_equal(fclib_write_local(&loc, path), 1);
}

static void write_global(const char *path)
{
	int mp[4] = {0, 1, 2, 3}, mi[3] = {0, 1, 2}, hi[4] = {0, 1, 2, 0}, hp[4] = {0, 1, 2, 2};
	double mx[3] = {2, 4, 5}, hx[4] = {1, 1, 1, 0.5}, f[3] = {0.1, -0.2, -1}, w[3] = {0, 0, 0}, mu[1] = {0.5};
	struct fclib_matrix M = {3, 3, 3, mp, mi, mx, -1, NULL}, H = {4, 3, 3, hp, hi, hx, 4, NULL};
	struct fclib_global gp = {&M, &H, NULL, mu, f, NULL, w, 3, NULL};
	remove(path);
	assert_int_equal(fclib_write_global(&gp, path), 1);
}

/* Each file is refused (LK_ERR_PARSE, no problem) with a message naming what is wrong; libfclib, which trusts
 * the sizes a file states, never reads one of them (tools/test.sh runs this test under valgrind). */
static void test_malformed(void **state)
{
	(void)state;
	const double nan = NAN;
	const int ints[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
	const int bad_i[8] = {0, 1, 2, 3, 4, 6, 0, 3}, dec[4] = {0, 2, 1, 3}, over[4] = {0, 1, 2, 4};
	const double vals[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, with_nan[8] = {2, 2, 2, 3, nan, 3, 0.5, 0.5};
	const double neg_mu[2] = {0.5, -0.1};
	const int two = 2, zero = 0, four = 4, minus3 = -3, nine = 9;
	const struct {
		int global;
		const char *dataset; /* replaced, or removed when values is NULL */
		int is_int;
		const void *values;
		long count;
		const char *expect;
	} cases[] = {
		/* a q shorter and longer than W: libfclib would leave rows uninitialised, or write past its array */
		{0, "/fclib_local/vectors/q", 0, vals, 5, "q has 5 values; one a row of W (6) needs 6"},
		{0, "/fclib_local/vectors/q", 0, vals, 9, "q has 9 values"},
		{0, "/fclib_local/vectors/q", 0, NULL, 0, "/fclib_local/vectors/q is missing"},
		{0, "/fclib_local/vectors/mu", 0, vals, 3, "mu has 3 values; one a contact (6 rows of 3) needs 2"},
		/* a space dimension of 2 whose mu was written for 3D contacts; none at all; a dimension FCLIB has not */
		{0, "/fclib_local/spacedim", 1, &two, 1, "mu has 2 values; one a contact (6 rows of 2) needs 3"},
		{0, "/fclib_local/spacedim", 1, &zero, 1, "space dimension 0"},
		{0, "/fclib_local/spacedim", 1, &four, 1, "space dimension 4"},
		{0, "/fclib_local/spacedim", 1, ints, 2, "spacedim is not one number"},
		/* W's sizes against its arrays and each other */
		{0, "/fclib_local/W/m", 1, &nine, 1, "W is 9 x 6 with space dimension 3"},
		{0, "/fclib_local/W/nz", 1, &minus3, 1, "nz -3"},
		{0, "/fclib_local/W/x", 0, vals, 9, "x has 9 values"},
		{0, "/fclib_local/W/p", 1, ints, 7, "/fclib_local/W/p has 7 values"},
		{0, "/fclib_local/W/i", 1, bad_i, 8, "W entry 5 at (6, 5) lies outside the matrix"},
		{0, "/fclib_local/W/x", 0, with_nan, 8, "W entry 4 at (4, 4) is not finite"},
		{0, "/fclib_local/vectors/mu", 0, neg_mu, 2, "contact 1 has friction coefficient -0.1"},
		/* the global form: f, w and mu against M and H, H's rows against M's, indices, pointers */
		{1, "/fclib_global/vectors/f", 0, vals, 2, "f has 2 values; one a row of M (3) needs 3"},
		{1, "/fclib_global/vectors/w", 0, vals, 4, "w has 4 values"},
		{1, "/fclib_global/vectors/mu", 0, vals, 2, "mu has 2 values"},
		{1, "/fclib_global/H/m", 1, &four, 1, "H is 4 x 3 with M 3 x 3"},
		{1, "/fclib_global/H/p", 1, over, 4, "H entry 3 at (0, 4) lies outside the matrix"},
		{1, "/fclib_global/M/p", 1, dec, 4, "M's pointers decrease at column 1"},
		{1, "/fclib_global/M/p", 1, over, 4, "M's pointers count 4 entries; the file holds 3"},
		{1, "/fclib_global/M/x", 0, vals, 5, "/fclib_global/M/x has 5 values"},
		{1, "/fclib_global/M/n", 1, &four, 1, "/fclib_global/M/p"},
	};
	const char *path = tmp_path("malformed.hdf5");
	char err[512];
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
		if (cases[k].global)
			write_global(path);
		else
			write_local(path);
		if (cases[k].values)
			assert_true(lk_h5_replace(path, cases[k].dataset, cases[k].is_int, cases[k].values, cases[k].count));
		else
			assert_true(lk_h5_remove(path, cases[k].dataset));
		lk_problem *p = (lk_problem *)1;
		lk_status st = lk_fclib_import(path, &p, err, sizeof err);
		if (st != LK_ERR_PARSE || !strstr(err, cases[k].expect))
			fail_msg("case %zu (%s): %s '%s', expected '%s'", k, cases[k].dataset, lk_status_string(st), err,
			         cases[k].expect);
		assert_null(p);
		assert_non_null(strstr(err, path));
	}
	/* the unbroken files import */
	for (int g = 0; g < 2; ++g) {
		g ? write_global(path) : write_local(path);
		lk_problem *p = NULL;
		if (lk_fclib_import(path, &p, err, sizeof err) != LK_OK)
			fail_msg("%s", err);
		lk_problem_destroy(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),     cmocka_unit_test(test_local_storages),
		cmocka_unit_test(test_global_storages),
		cmocka_unit_test(test_global_sparse_reduction),
		cmocka_unit_test(test_m_symmetry),
		cmocka_unit_test(test_public_files),   cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_light_gate_non_unique),
		cmocka_unit_test(test_local_solve_is_nsgs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

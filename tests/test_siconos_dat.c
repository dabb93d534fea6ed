/* Siconos's .dat friction-contact problems read by Siconos's own reader in a process of its own
 * (lk_peer_siconos_read_dat) into lcpkit's matrix form (lk_fclib_local_from_entries): the problem Siconos's solvers
 * solve, W the right way round where it is not symmetric, and files Siconos cannot read refused with a reason. */
#include "test_util.h"
#include "fclib_io.h"
#include "peer_siconos.h"

#include <siconos/numerics/FrictionContactProblem.h>
#include <siconos/numerics/Friction_cst.h>
#include <siconos/numerics/NonSmoothDrivers.h>
#include <siconos/numerics/NumericsMatrix.h>
#include <siconos/numerics/SolverOptions.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* W of two contacts, not symmetric (a joint's coupling, as in Siconos's Rover problems): a problem whose reactions
 * differ from those of W's transpose. Row-major here; the .dat file holds a dense matrix column by column. */
static const double W[6][6] = {
    {2.0, 0.6, -0.3, 0.5, 0.1, 0.0},   {-0.2, 1.5, 0.1, 0.0, 0.2, 0.1},  {0.4, -0.1, 1.8, 0.1, 0.0, 0.3},
    {0.3, 0.0, 0.2, 2.2, -0.5, 0.2},   {0.1, 0.3, 0.0, 0.4, 1.6, -0.2}, {0.0, 0.1, 0.2, -0.1, 0.3, 1.9},
};
static const double Q[6] = {-1.0, 0.8, -0.4, -0.6, -0.9, 0.3};
static const double MU[2] = {0.5, 0.3};

static void write_dat(const char *path)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "3\n2\n0\n6\n6\n6\t6\n");
	for (int j = 0; j < 6; ++j) {
		for (int i = 0; i < 6; ++i)
			fprintf(f, "%.17g ", W[i][j]);
		fprintf(f, "\n");
	}
	for (int i = 0; i < 6; ++i)
		fprintf(f, "%.17g ", Q[i]);
	fprintf(f, "\n%.17g %.17g\n", MU[0], MU[1]);
	fclose(f);
}

static void tmp_path(char *buf, size_t n, const char *name)
{
	const char *dir = getenv("TMPDIR");
	snprintf(buf, n, "%s/lcpkit-dat-%d-%s", dir ? dir : "/tmp", (int)getpid(), name);
}

/* The problem as lcpkit reads it is the one Siconos's own solver solves after its own reading of the file: the
 * reactions of lcpkit's cone sweep and of Siconos's nsgs on the file agree (they are unique: W's symmetric part is
 * positive definite), and those of W's transpose do not. */
static void test_the_problem_siconos_solves(void **state)
{
	(void)state;
	char path[512], err[512];
	tmp_path(path, sizeof path, "two.dat");
	write_dat(path);
	lk_peer_dat d;
	assert_int_equal(lk_peer_siconos_read_dat(path, &d, err, sizeof err), LK_OK);
	assert_int_equal(d.dim, 3);
	assert_int_equal(d.nc, 2);
	assert_int_equal(d.n, 6);
	assert_int_equal(d.count, 30); /* the six zeros of W are no entries */
	for (int k = 0; k < d.count; ++k)
		assert_double_equal(d.val[k], W[d.row[k]][d.col[k]], 0.0);
	lk_problem *p = NULL;
	assert_int_equal(lk_fclib_local_from_entries(d.n, d.dim, d.count, d.row, d.col, d.val, d.q, d.mu, &p, err, sizeof err),
	                 LK_OK);
	lk_solver_config cfg = tu_spec("pgs:friction=cone,iters=100000,tol=1e-13,merit=fc3d,warm=0");
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);

	/* Siconos alone: its reader, its nsgs */
	FrictionContactProblem *fp = frictionContact_new_from_filename(path);
	assert_non_null(fp);
	SolverOptions *opt = solver_options_create(SICONOS_FRICTION_3D_NSGS);
	opt->iparam[SICONOS_IPARAM_MAX_ITER] = 100000;
	opt->dparam[SICONOS_DPARAM_TOL] = 1e-14;
	double r[6] = {0}, u[6] = {0};
	assert_int_equal(fc3d_driver(fp, r, u, opt), 0);
	const double *l = lk_problem_lambda(p);
	double diff = 0, size = 0;
	for (int i = 0; i < 6; ++i) {
		diff = fmax(diff, fabs(l[i] - r[i]));
		size = fmax(size, fabs(r[i]));
	}
	print_message("reactions: lcpkit and Siconos on the file differ by %.2e (largest %.3f)\n", diff, size);
	assert_true(size > 0.1);
	assert_true(diff < 1e-9 * size);

	/* the transpose is another problem: read the wrong way round, the answer would differ */
	double Wt[36], q[6], mu[6], lo[6], hi[6];
	int fi[6];
	for (int i = 0; i < 6; ++i) {
		for (int j = 0; j < 6; ++j)
			Wt[6 * i + j] = W[j][i];
		q[i] = Q[i];
		lo[i] = i % 3 == 0 ? 0.0 : -INFINITY;
		hi[i] = INFINITY;
		fi[i] = i % 3 == 0 ? -1 : i - i % 3;
		mu[i] = i % 3 == 0 ? 0.0 : MU[i / 3];
	}
	lk_problem *t = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_set_dense(t, 6, Wt, q, lo, hi, mu, fi), LK_OK);
	assert_int_equal(lk_solve(t, &cfg, &st, NULL), LK_OK);
	double tdiff = 0;
	for (int i = 0; i < 6; ++i)
		tdiff = fmax(tdiff, fabs(lk_problem_lambda(t)[i] - r[i]));
	print_message("the transpose's reactions differ by %.2e\n", tdiff);
	assert_true(tdiff > 1e-3);

	solver_options_delete(opt);
	frictionContactProblem_free(fp);
	lk_problem_destroy(t);
	lk_problem_destroy(p);
	lk_peer_dat_free(&d);
	unlink(path);
}

/* A file Siconos's reader cannot read (cut short, text that is no problem, a size it would allocate without
 * end, a global problem's file) is refused with a reason, and the caller goes on; a missing file is an I/O error. */
static void test_refusals(void **state)
{
	(void)state;
	char path[512], err[512];
	tmp_path(path, sizeof path, "bad.dat");
	static const char *const bad[] = {
	    "3\n2\n0\n6\n6\n6\t6\n1 2 3\n",                    /* cut short */
	    "lcpkit-problem 1\nform matrix\n",                 /* no Siconos file */
	    "3\n2\n0\n2000000000\n2000000000\n2000000000\t2000000000\n1\n", /* a size past any memory */
	    "3\n1\n0\n6\n6\n6\t6\n1 0 0 0 0 0\n0 1 0 0 0 0\n0 0 1 0 0 0\n0 0 0 1 0 0\n0 0 0 0 1 0\n0 0 0 0 0 1\n"
	    "1 1 1 1 1 1\n0.5\n", /* one contact, six rows: a global problem's M read as W */
	    "4\n1\n0\n4\n4\n4\t4\n1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1\n1 1 1 1\n0.5\n", /* four dimensions */
	    "3\n1\n0\n3\n3\n3\t3\n1 0 0\n0 1 0\n0 0 1\n1 2\n", /* W whole, q cut short, no mu */
	    "3\n1\n0\n3\n3\n3\t3\n1 0 0\n0 1 0\n0 0 1\n0\n3\n3\n3\t3\n1 0 0\n0 1 0\n0 0 1\n1 1 1\n0 0 0\n0.5\n",
	    /* a global problem's file (M, then H, q, b, mu) */
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(bad[k], f);
		fclose(f);
		lk_peer_dat d;
		err[0] = '\0';
		const lk_status s = lk_peer_siconos_read_dat(path, &d, err, sizeof err);
		print_message("file %d: %s\n", (int)k, err);
		assert_int_equal(s, LK_ERR_PARSE);
		assert_true(strlen(err) > strlen(path) + 2);
		assert_null(d.row);
		assert_int_equal(d.n, 0);
	}
	unlink(path);
	lk_peer_dat d;
	assert_int_equal(lk_peer_siconos_read_dat(path, &d, err, sizeof err), LK_ERR_IO);
	/* entries outside W, or a mu below 0, are refused by the matrix form's making */
	const int row[1] = {3}, col[1] = {0};
	const double val[1] = {1.0}, q[3] = {0, 0, 0}, mu_bad[1] = {-0.1}, mu[1] = {0.5};
	lk_problem *p = NULL;
	assert_int_equal(lk_fclib_local_from_entries(3, 3, 1, row, col, val, q, mu, &p, err, sizeof err), LK_ERR_PARSE);
	print_message("%s\n", err);
	assert_null(p);
	const int r0[1] = {0};
	assert_int_equal(lk_fclib_local_from_entries(3, 3, 1, r0, col, val, q, mu_bad, &p, err, sizeof err), LK_ERR_PARSE);
	print_message("%s\n", err);
	assert_null(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_problem_siconos_solves),
	    cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

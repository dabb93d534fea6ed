/* Recording, replay against golden results (and a harness that can fail), FCLIB round trip, Siconos peer. */
#include "test_util.h"
#include "fclib_io.h"
#include "peer_siconos.h"
#include <fclib.h>
#include "lcpkit/generate.h"
#include "lcpkit/io.h"
#include "recording.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/lk-regress-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	lk_scene *sc = NULL;
	char err[256];
	if (lk_scene_create("boxstack:n=3", &sc, err, sizeof err) != LK_OK)
		return -1;
	lk_engine e = lk_engine_available(LK_ENGINE_ODE) ? LK_ENGINE_ODE : LK_ENGINE_BULLET;
	lk_recording_def def = {sc, e, "pgs", 20, 30, 33, dir};
	int written = 0;
	lk_status st = lk_record(&def, &written, err, sizeof err);
	lk_scene_destroy(sc);
	if (st != LK_OK || written != 4) {
		fprintf(stderr, "record: %s (%d written)\n", err, written);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	if (b)
		b[n] = '\0';
	fclose(f);
	return b;
}

static lk_regress_summary regress(const char *solvers, int update, int peer, const char *log)
{
	lk_regress_opts o = lk_default_regress_opts();
	o.dir = dir;
	o.solvers = solvers;
	o.update = update;
	o.peer_siconos = peer;
	FILE *f = fopen(log, "w");
	assert_non_null(f);
	o.out = f;
	lk_regress_summary sum;
	char err[256];
	assert_int_equal(lk_regress(&o, &sum, err, sizeof err), LK_OK);
	fclose(f);
	return sum;
}

static void test_recorded_files(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof path, "%s/step-00031.lkp", dir);
	lk_problem *p = NULL;
	lk_problem_extra extra;
	char err[256];
	assert_int_equal(lk_problem_read(path, NULL, &p, &extra, err, sizeof err), LK_OK);
	/* three boxes on each other and the ground: 3 interfaces x 4 contacts x 3 rows at least */
	assert_true(lk_problem_row_count(p) >= 36);
	assert_int_equal(extra.has_solution, 1);
	assert_non_null(strstr(extra.source, "step 31"));
	/* the recorded solution is what PGS with 20 iterations makes of the recorded warm start */
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.max_iterations = 20;
	assert_int_equal(lk_solve(p, &cfg, NULL, NULL), LK_OK);
	assert_memory_equal(lk_problem_lambda(p), extra.solution, sizeof(double) * (size_t)lk_problem_row_count(p));
	lk_problem_extra_free(&extra);
	lk_problem_destroy(p);
	snprintf(path, sizeof path, "%s/manifest.txt", dir);
	char *man = slurp(path);
	assert_non_null(man);
	assert_non_null(strstr(man, "scene boxstack:n=3"));
	assert_non_null(strstr(man, "file step-00033.lkp"));
	free(man);
}

static void test_regress_detects_worse_setting(void **state)
{
	(void)state;
	char log[256];
	snprintf(log, sizeof log, "%s.log", dir);
	lk_regress_summary s = regress("pgs,amgs", 1, 0, log);
	assert_int_equal(s.problems, 4);
	assert_int_equal(s.missing, 8);
	/* the same solvers again: everything agrees */
	s = regress("pgs,amgs", 0, 0, log);
	assert_int_equal(s.compared, 8);
	assert_int_equal(s.regressions, 0);
	/* a deliberately worse PGS (under-relaxed) checked against PGS's golden results: the harness fails */
	s = regress("pgs@pgs:w=0.3", 0, 0, log);
	assert_int_equal(s.compared, 4);
	assert_true(s.regressions >= 1);
	char *text = slurp(log);
	assert_non_null(strstr(text, "REGRESSION"));
	free(text);
	/* a better method in PGS's place is reported as an improvement, not a regression */
	s = regress("pgs@pgs-sm", 0, 0, log);
	assert_int_equal(s.regressions, 0);
	assert_true(s.improvements >= 1);
	remove(log);
}

static void test_regress_bad_files(void **state)
{
	(void)state;
	char path[256], log[256];
	snprintf(log, sizeof log, "%s.log", dir);
	regress("pgs", 1, 0, log);
	snprintf(path, sizeof path, "%s/golden.txt", dir);
	char *before = slurp(path);
	assert_non_null(before);
	/* a truncated copy and a foreign file among the recordings */
	snprintf(path, sizeof path, "%s/step-00030.lkp", dir);
	char *good = slurp(path);
	snprintf(path, sizeof path, "%s/broken.lkp", dir);
	FILE *f = fopen(path, "w");
	fwrite(good, 1, strlen(good) / 2, f);
	fclose(f);
	snprintf(path, sizeof path, "%s/foreign.lkp", dir);
	f = fopen(path, "w");
	fputs("P6\n2 2\n255\n", f);
	fclose(f);
	lk_regress_summary s = regress("pgs", 0, 0, log);
	assert_int_equal(s.unreadable, 2);
	assert_int_equal(s.problems, 4);
	assert_int_equal(s.regressions, 0);
	char *text = slurp(log);
	assert_non_null(strstr(text, "broken.lkp"));
	assert_non_null(strstr(text, "foreign.lkp"));
	free(text);
	/* nothing in DIR changed without --update */
	snprintf(path, sizeof path, "%s/golden.txt", dir);
	char *after = slurp(path);
	assert_string_equal(before, after);
	free(before);
	free(after);
	free(good);
	snprintf(path, sizeof path, "%s/broken.lkp", dir);
	remove(path);
	snprintf(path, sizeof path, "%s/foreign.lkp", dir);
	remove(path);
	remove(log);
}

static void test_siconos_peer(void **state)
{
	(void)state;
	char log[256];
	snprintf(log, sizeof log, "%s.log", dir);
	regress("pgs", 0, 1, log);
	char *text = slurp(log);
	assert_non_null(strstr(text, "siconos-lemke"));
	assert_non_null(strstr(text, "siconos-newton-fb"));
	assert_non_null(strstr(text, "lcpkit-pgs"));
	/* the contact problems are also solved with Coulomb's cone by lcpkit and by Siconos's fc3d_nsgs, each
	 * judged by Siconos's fc3d error measure: lcpkit's is no worse than twice Siconos's, or both have
	 * converged to their own stopping rules, which measure differently (tests/test_cone.c has a problem
	 * both solve to 1e-12). On the box stacks recorded here both nonsmooth Gauss-Seidel methods stop after
	 * about 600 sweeps at 3.0e-8 and 7.4e-9; on degenerate steps of the same stack (four contacts per
	 * face) both end between 1e-6 and 2.5e-4 after 5,000 sweeps, within 1.3x of each other. */
	const char *ours = strstr(text, "lcpkit-pgs-cone"), *theirs = strstr(text, "siconos-fc3d-nsgs");
	assert_non_null(ours);
	assert_non_null(theirs);
	const char *e1 = strstr(ours, "fc3d error"), *e2 = strstr(theirs, "fc3d error");
	assert_non_null(e1);
	assert_non_null(e2);
	const double err_ours = strtod(e1 + 10, NULL), err_theirs = strtod(e2 + 10, NULL);
	assert_true(err_ours < 1e-2 && err_theirs < 1e-2);
	assert_true(err_ours <= 2.0 * err_theirs || (err_ours < 1e-7 && err_theirs < 1e-7));
	free(text);
	remove(log);
}

/* A frictional problem recorded from a scene (40 spheres in a box in ODE, step 80: 96 contacts): lcpkit's cone
 * sweep and Siconos's fc3d_nsgs, side by side in `regress --peer siconos`, both reach Siconos's fc3d error
 * measure below the 1e-8 asked (measured 3.8e-9 and 9.9e-9), and their reactions agree to 1e-6 (2.2e-7).
 * The step is one whose reactions are unique: at steps 50-65 both solvers converge as well, to reactions
 * 2e-2 apart, and at step 70 neither gets below 8e-6 in 5,000 sweeps. */
static void test_siconos_peer_cone_on_a_scene(void **state)
{
	(void)state;
	if (!lk_engine_available(LK_ENGINE_ODE))
		skip();
	char pool[64], err[256], log[96];
	snprintf(pool, sizeof pool, "/tmp/lk-regress-pool-XXXXXX");
	assert_non_null(mkdtemp(pool));
	lk_scene *sc = NULL;
	assert_int_equal(lk_scene_create("bigpool:n=40,width=1", &sc, err, sizeof err), LK_OK);
	lk_recording_def def = {sc, LK_ENGINE_ODE, "pgs", 20, 80, 80, pool};
	int written = 0;
	assert_int_equal(lk_record(&def, &written, err, sizeof err), LK_OK);
	lk_scene_destroy(sc);
	assert_int_equal(written, 1);
	lk_regress_opts o = lk_default_regress_opts();
	o.dir = pool;
	o.solvers = "pgs";
	o.update = 1;
	o.peer_siconos = 1;
	snprintf(log, sizeof log, "%s.log", pool);
	FILE *f = fopen(log, "w");
	assert_non_null(f);
	o.out = f;
	lk_regress_summary sum;
	assert_int_equal(lk_regress(&o, &sum, err, sizeof err), LK_OK);
	fclose(f);
	char *text = slurp(log);
	assert_non_null(text);
	const char *ours = strstr(text, "lcpkit-pgs-cone"), *theirs = strstr(text, "siconos-fc3d-nsgs");
	assert_non_null(ours);
	assert_non_null(theirs);
	assert_true(strtod(strstr(ours, "fc3d error") + 10, NULL) < 1e-8);
	assert_true(strtod(strstr(theirs, "fc3d error") + 10, NULL) < 1e-8);
	/* and the reactions agree (measured 2.2e-7) */
	const char *d = strstr(theirs, "reactions differ by");
	assert_non_null(d);
	assert_true(strtod(d + 19, NULL) < 1e-6);
	free(text);
	remove(log);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", pool);
	assert_int_equal(system(cmd), 0);
}

/* A contact problem survives the trip through FCLIB: same W, q and mu, same PGS iterates. */
static void test_fclib_round_trip(void **state)
{
	(void)state;
	lk_gen_params g = lk_default_gen_params(LK_GEN_BOXSTACK);
	g.n = 4;
	lk_problem *p = NULL, *q = NULL;
	char err[256], path[256];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	snprintf(path, sizeof path, "%s/stack.hdf5", dir);
	assert_int_equal(lk_fclib_export(p, 10000, path, err, sizeof err), LK_OK);
	assert_int_equal(lk_fclib_import(path, &q, err, sizeof err), LK_OK);
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
	/* a joint row has no place in a local problem; a missing file is an I/O error */
	lk_problem *chain = NULL;
	lk_gen_params gc = lk_default_gen_params(LK_GEN_CHAIN);
	gc.n = 2;
	assert_int_equal(lk_generate(&gc, &chain, err, sizeof err), LK_OK);
	assert_int_equal(lk_fclib_export(chain, 10000, path, err, sizeof err), LK_ERR_UNSUPPORTED);
	assert_non_null(strstr(err, "contacts only"));
	lk_problem *none = NULL;
	assert_int_equal(lk_fclib_import("/nonexistent/x.hdf5", &none, err, sizeof err), LK_ERR_IO);
	assert_null(none);
	/* a file that is not HDF5, and a valid global problem (one contact: M = I, H = I) written by libfclib:
	 * each is refused with a message that says what the file is */
	const char *junk = "fclib_junk.hdf5", *glob = "fclib_global.hdf5";
	FILE *f = fopen(junk, "w");
	assert_non_null(f);
	fputs("not hdf5\n", f);
	fclose(f);
	assert_int_equal(lk_fclib_import(junk, &none, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "not HDF5"));
	/* a global problem, M v = H r + f, u = H^T v + w, with M = diag(2, 4, 5) and H = [1 0 0; 0 1 0; 0.5 0 1]
	 * (compressed columns), reduces to W = H^T M^-1 H, q = H^T M^-1 f + w, computed here by hand */
	int mp[4] = {0, 1, 2, 3}, mi[3] = {0, 1, 2}, hp[4] = {0, 2, 3, 4}, hi[4] = {0, 2, 1, 2};
	double mx[3] = {2, 4, 5}, hx[4] = {1, 0.5, 1, 1}, fv[3] = {0.1, -0.2, -1}, wv[3] = {-0.3, 0.1, 0}, muv[1] = {0.5};
	struct fclib_matrix M = {3, 3, 3, mp, mi, mx, -1, NULL}, H = {4, 3, 3, hp, hi, hx, -1, NULL};
	struct fclib_global gp = {&M, &H, NULL, muv, fv, NULL, wv, 3, NULL};
	remove(glob);
	assert_int_equal(fclib_write_global(&gp, glob), 1);
	lk_problem *gl = NULL;
	if (lk_fclib_import(glob, &gl, err, sizeof err) != LK_OK)
		fail_msg("%s", err);
	const double Hd[3][3] = {{1, 0, 0}, {0, 1, 0}, {0.5, 0, 1}}, Md[3] = {2, 4, 5};
	double Wexp[9], qexp[3], Wgot[9], qgot[3];
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
	assert_int_equal(lk_problem_assemble_dense(gl, 3, Wgot, qgot), LK_OK);
	assert_true(tu_max_diff(Wgot, Wexp, 9) < 1e-14);
	assert_true(tu_max_diff(qgot, qexp, 3) < 1e-14);
	/* contact rows: a normal row, then two friction rows on it with mu 0.5 */
	double m1;
	int f1;
	lk_problem_get_bounds(gl, 1, NULL, NULL, &m1, &f1, NULL);
	assert_int_equal(f1, 0);
	assert_double_equal(m1, 0.5, 0);
	/* solved in Coulomb's cone, the reactions agree with Siconos's global solver on the original problem (its
	 * own reduction: gfc3d NSGS_WR); the contact is active (u_n of r = 0 is -0.35) */
	lk_solver_config cc = tu_spec("pgs:friction=cone,iters=10000,tol=1e-13,warm=0");
	lk_stats gst;
	assert_int_equal(lk_solve(gl, &cc, &gst, NULL), LK_OK);
	const double Md_dense[9] = {2, 0, 0, 0, 4, 0, 0, 0, 5};
	double rs[3];
	lk_peer_result gpr;
	assert_int_equal(lk_peer_siconos_gfc3d(3, 1, Md_dense, &Hd[0][0], fv, wv, muv, rs, 10000, 1e-13, &gpr), LK_OK);
	print_message("global problem: lcpkit r = (%.6f, %.6f, %.6f), Siconos gfc3d r = (%.6f, %.6f, %.6f), info %d\n",
	              lk_problem_lambda(gl)[0], lk_problem_lambda(gl)[1], lk_problem_lambda(gl)[2], rs[0], rs[1], rs[2],
	              gpr.info);
	assert_int_equal(gpr.info, 0);
	assert_true(lk_problem_lambda(gl)[0] > 0.01);
	assert_true(tu_max_diff(lk_problem_lambda(gl), rs, 3) < 1e-6);
	lk_problem_destroy(gl);
	/* a non-symmetric local W in each of FCLIB's storages, as fclib.h documents them (triplet: p the row, i the
	 * column; compressed columns; compressed rows): each reads back as the same W */
	{
		const double Wd[3][3] = {{2, 0.5, 0}, {0, 3, 0.25}, {0.75, 0, 4}};
		int tp[6] = {0, 0, 1, 1, 2, 2}, ti[6] = {0, 1, 1, 2, 0, 2};
		double tx[6] = {2, 0.5, 3, 0.25, 0.75, 4};
		int cp[4] = {0, 2, 4, 6}, ci[6] = {0, 2, 0, 1, 1, 2};
		double cx[6] = {2, 0.75, 0.5, 3, 0.25, 4};
		int rp[4] = {0, 2, 4, 6}, rj[6] = {0, 1, 1, 2, 0, 2};
		double lq[3] = {-1, 0.2, 0.1}, lmu[1] = {0.4};
		struct fclib_matrix forms[3] = {{6, 3, 3, tp, ti, tx, 6, NULL}, {6, 3, 3, cp, ci, cx, -1, NULL},
		                                {6, 3, 3, rp, rj, tx, -2, NULL}};
		const char *lname = "fclib_local_forms.hdf5";
		for (int k = 0; k < 3; ++k) {
			struct fclib_local loc = {&forms[k], NULL, NULL, lmu, lq, NULL, 3, NULL};
			remove(lname);
			assert_int_equal(fclib_write_local(&loc, lname), 1);
			lk_problem *lp = NULL;
			if (lk_fclib_import(lname, &lp, err, sizeof err) != LK_OK)
				fail_msg("storage %d: %s", k, err);
			double Wr[9], qr[3];
			assert_int_equal(lk_problem_assemble_dense(lp, 3, Wr, qr), LK_OK);
			if (tu_max_diff(Wr, &Wd[0][0], 9) != 0.0)
				fail_msg("storage %d: W read as [%g %g %g; %g %g %g; %g %g %g]", k, Wr[0], Wr[1], Wr[2], Wr[3], Wr[4],
				         Wr[5], Wr[6], Wr[7], Wr[8]);
			assert_true(tu_max_diff(qr, lq, 3) == 0.0);
			lk_problem_destroy(lp);
		}
		remove(lname);
	}
	/* an M that is not positive definite is refused with CHOLMOD's verdict */
	mx[1] = -4;
	remove(glob);
	assert_int_equal(fclib_write_global(&gp, glob), 1);
	assert_int_equal(lk_fclib_import(glob, &none, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "positive definite"));
	assert_null(none);
	remove(junk);
	remove(glob);
	free(A);
	free(B);
	free(qa);
	free(qb);
	lk_problem_destroy(chain);
	lk_problem_destroy(p);
	lk_problem_destroy(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_files),
		cmocka_unit_test(test_siconos_peer_cone_on_a_scene),
		cmocka_unit_test(test_regress_detects_worse_setting),
		cmocka_unit_test(test_regress_bad_files),
		cmocka_unit_test(test_siconos_peer),
		cmocka_unit_test(test_fclib_round_trip),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

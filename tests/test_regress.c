/* Recording, replay against golden results (and a harness that can fail), Siconos peer. */
#include "test_util.h"
#include "peer_siconos.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_files),
		cmocka_unit_test(test_siconos_peer_cone_on_a_scene),
		cmocka_unit_test(test_regress_detects_worse_setting),
		cmocka_unit_test(test_regress_bad_files),
		cmocka_unit_test(test_siconos_peer),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

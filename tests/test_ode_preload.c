/* The preload library: an unmodified ODE program gives ODE's result with LCPKIT_SOLVER=ode, lcpkit's default
 * (auto) without LCPKIT_SOLVER and the named solver's with it (the same numbers as lk_ode_world_step on the
 * same scene in this process), one clear line and ODE's result for an unknown solver, and a statistics file on
 * request. */
#include "test_util.h"

#include "lcpkit/ode.h"
#include "ode_joints_scene.h"
#include "ode_preload_scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The test program of the next run() and its arguments: ode_preload_prog with "" (one world) or
 * "threads N", or ode_joints_prog with "quickstep N" or "step N". */
static const char *run_prog = LK_PRELOAD_PROG;
static const char *run_args = "";

/* Runs the test program with the environment prefix env; returns its stdout (malloc'd), stderr in *err. */
static char *run(const char *env, char **err)
{
	char errpath[] = "/tmp/lk_preload_errXXXXXX";
	int fd = mkstemp(errpath);
	assert_true(fd >= 0);
	close(fd);
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "env -u LCPKIT_SOLVER -u LCPKIT_STATS %s '%s' %s 2>'%s'", env, run_prog, run_args,
	         errpath);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	size_t cap = 1 << 16, n = 0;
	char *out = malloc(cap);
	size_t k;
	while ((k = fread(out + n, 1, cap - n - 1, f)) > 0)
		n += k;
	out[n] = '\0';
	assert_int_equal(pclose(f), 0);
	FILE *e = fopen(errpath, "r");
	assert_non_null(e);
	char *eb = calloc(1, 4096);
	size_t en = fread(eb, 1, 4095, e);
	eb[en] = '\0';
	fclose(e);
	unlink(errpath);
	if (err)
		*err = eb;
	else
		free(eb);
	return out;
}

static char preload_env[2048];

static const char *with_preload(const char *more)
{
	snprintf(preload_env, sizeof preload_env, "LD_PRELOAD='%s' %s", LK_PRELOAD_LIB, more);
	return preload_env;
}

/* The same scene in this process on lk_ode_world_step with the solver the preload would use. */
typedef struct linked {
	lk_ode *ctx;
	const char *spec;
} linked;

static void linked_body(dBodyID b, void *user)
{
	linked *l = user;
	if (!l->ctx) {
		lk_ode_def def = lk_ode_default_def();
		def.solver = l->spec;
		def.ode_residual = 0;
		assert_int_equal(lk_ode_create(dBodyGetWorld(b), &def, &l->ctx, NULL, 0), LK_OK);
	}
	assert_int_equal(lk_ode_add_body(l->ctx, b), LK_OK); /* creation order, as the preload library sees it */
}

static int linked_step(dWorldID w, dReal h, void *user)
{
	(void)w;
	linked *l = user;
	return lk_ode_world_step(l->ctx, h) == LK_OK;
}

static char *run_linked(const char *spec)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	linked l = {NULL, spec};
	pl_scene_run(150, linked_step, linked_body, &l, f);
	fclose(f);
	lk_ode_destroy(l.ctx);
	return buf;
}

static double max_abs_diff(const char *a, const char *b)
{
	double worst = 0;
	for (int line = 0; line < 5; ++line) {
		int ia, ib;
		double x[6], y[6];
		int ra = sscanf(a, "%d %lf %lf %lf %lf %lf %lf", &ia, &x[0], &x[1], &x[2], &x[3], &x[4], &x[5]);
		int rb = sscanf(b, "%d %lf %lf %lf %lf %lf %lf", &ib, &y[0], &y[1], &y[2], &y[3], &y[4], &y[5]);
		assert_int_equal(ra, 7);
		assert_int_equal(rb, 7);
		assert_int_equal(ia, ib);
		for (int k = 0; k < 6; ++k)
			worst = fmax(worst, fabs(x[k] - y[k]));
		a = strchr(a, '\n') + 1;
		b = strchr(b, '\n') + 1;
	}
	return worst;
}

/* A fresh empty file for a statistics file: path is a mkstemp template. */
static void temp_file(char *path)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
}

/* How many data lines the statistics file at path has, each of which must name solver; removes the file. */
static int stats_lines(const char *path, const char *solver)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[1024], field[80];
	snprintf(field, sizeof field, ",%s,", solver);
	int lines = 0;
	assert_non_null(fgets(line, sizeof line, f)); /* the header */
	while (fgets(line, sizeof line, f)) {
		assert_non_null(strstr(line, field));
		++lines;
	}
	fclose(f);
	unlink(path);
	return lines;
}

static void test_ode_solver_is_ode(void **state)
{
	(void)state;
	char *plain = run("", NULL);
	assert_true(strlen(plain) > 100);
	char *err = NULL;
	char *pre = run(with_preload("LCPKIT_SOLVER=ode"), &err);
	assert_string_equal(pre, plain);
	assert_string_equal(err, "");
	free(pre);
	free(err);
	/* statistics of ODE's own stepper (rows extracted, ODE's impulses read back) change nothing */
	char path[] = "/tmp/lk_preload_odestatsXXXXXX";
	temp_file(path);
	char more[512];
	snprintf(more, sizeof more, "LCPKIT_SOLVER=ode LCPKIT_STATS='%s'", path);
	pre = run(with_preload(more), &err);
	assert_string_equal(pre, plain);
	assert_string_equal(err, "");
	assert_int_equal(stats_lines(path, "ode-quickstep"), 150);
	free(pre);
	free(err);
	free(plain);
}

/* The one line the first replaced step prints. */
#define PGS_ANNOUNCED                                                                                        \
	"lcpkit: dWorldQuickStep replaced by lcpkit's pgs, a budget of 20 sweep-equivalents a step (the world's " \
	"quickstep iterations); LCPKIT_QUIET=1 silences this\n"

/* Preloading is the swap: without LCPKIT_SOLVER, lcpkit's default, auto, steps the program, as
 * lk_ode_world_step does with lk_ode_default_def. */
static void test_without_solver_is_auto(void **state)
{
	(void)state;
	char *plain = run("", NULL);
	char *err = NULL;
	char *pre = run(with_preload(""), &err);
	assert_string_equal(err, "lcpkit: dWorldQuickStep replaced by lcpkit's auto, a mean of 20 sweep-equivalents a "
	                         "step (the world's quickstep iterations); LCPKIT_QUIET=1 silences this\n");
	char *direct = run_linked("auto");
	assert_string_equal(pre, direct);
	assert_true(max_abs_diff(pre, plain) > 1e-6);
	free(direct);
	free(pre);
	free(err);
	free(plain);
}

static void test_with_solver_is_lcpkit(void **state)
{
	(void)state;
	char *plain = run("", NULL);
	char *err = NULL;
	char *pre = run(with_preload("LCPKIT_SOLVER=pgs"), &err);
	assert_string_equal(err, PGS_ANNOUNCED);
	char *direct = run_linked("pgs");
	/* lcpkit's result: what lk_ode_world_step gives, to the last digit printed ... */
	assert_string_equal(pre, direct);
	/* ... and not ODE's */
	assert_true(max_abs_diff(pre, plain) > 1e-6);
	free(pre);
	free(err);
	pre = run(with_preload("LCPKIT_SOLVER='psor:w=1.2,iters=30'"), &err);
	assert_string_equal(err, "lcpkit: dWorldQuickStep replaced by lcpkit's psor:w=1.2,iters=30, at most 30 "
	                         "iterations a step (LCPKIT_SOLVER's iters); LCPKIT_QUIET=1 silences this\n");
	free(err);
	char *quiet = run(with_preload("LCPKIT_QUIET=1 LCPKIT_SOLVER='psor:w=1.2,iters=30'"), &err);
	assert_string_equal(err, "");
	assert_string_equal(quiet, pre);
	free(quiet);
	char *linked2 = run_linked("psor:w=1.2,iters=30");
	assert_string_equal(pre, linked2);
	assert_true(max_abs_diff(pre, direct) > 1e-9);
	free(linked2);
	free(direct);
	free(pre);
	free(err);
	free(plain);
}

/* Worlds stepped at once in threads (each with its own threading implementation, docs/ode.md): every world
 * gets its own lcpkit context, and each ends exactly where the same world run alone ends. Repeated, because
 * a race shows only now and then. */
static void test_worlds_in_threads(void **state)
{
	(void)state;
	char *one = run(with_preload("LCPKIT_SOLVER=pgs"), NULL);
	size_t len = strlen(one);
	assert_true(len > 0);
	char *expect = malloc(6 * len + 1);
	for (int k = 0; k < 6; ++k)
		memcpy(expect + k * len, one, len);
	expect[6 * len] = '\0';
	run_args = "threads 6"; /* more than the 4 entries the library starts with */
	for (int rep = 0; rep < 5; ++rep) {
		char *err = NULL;
		char *out = run(with_preload("LCPKIT_SOLVER=pgs"), &err);
		/* one line for the process, not one per world */
		assert_string_equal(err, PGS_ANNOUNCED);
		assert_string_equal(out, expect);
		free(out);
		free(err);
	}
	run_args = "";
	free(expect);
	free(one);
}

/* LCPKIT_THREADS reaches the spec (the announcement names it); the program's worlds are below the rows a
 * thread pays for (docs/solvers.md, "Threads"), so the result is plain pgs's to the last digit; a count out of
 * range is one line on stderr and one thread */
static void test_threads_variable(void **state)
{
	(void)state;
	char *one = run(with_preload("LCPKIT_SOLVER=pgs"), NULL);
	char *err = NULL;
	char *two = run(with_preload("LCPKIT_SOLVER=pgs LCPKIT_THREADS=2"), &err);
	assert_non_null(strstr(err, "pgs:threads=2"));
	assert_string_equal(two, one);
	free(two);
	free(err);
	two = run(with_preload("LCPKIT_SOLVER=pgs LCPKIT_THREADS=0"), &err);
	assert_non_null(strstr(err, "LCPKIT_THREADS=0"));
	assert_string_equal(two, one);
	free(two);
	free(err);
	free(one);
}

/* A program that steps its world on a pool of ODE's threads (dWorldSetStepThreadingImplementation, ODE's
 * islands on two threads): under the preload library the world ends where it ends on one thread, with
 * lcpkit's threads=2 (its own threads: docs/ode.md, "Threads") and without. */
static void test_program_thread_pool(void **state)
{
	(void)state;
	char *one = run(with_preload("LCPKIT_SOLVER=pgs"), NULL);
	run_args = "pool";
	char *err = NULL;
	char *pooled = run(with_preload("LCPKIT_SOLVER=pgs LCPKIT_THREADS=2"), &err);
	assert_non_null(strstr(err, "pgs:threads=2"));
	assert_string_equal(pooled, one);
	free(pooled);
	free(err);
	pooled = run(with_preload("LCPKIT_SOLVER=pgs"), NULL);
	assert_string_equal(pooled, one);
	free(pooled);
	run_args = "";
	free(one);
}

static void test_unknown_solver(void **state)
{
	(void)state;
	char *plain = run("", NULL);
	char *err = NULL;
	char *pre = run(with_preload("LCPKIT_SOLVER=no-such-method"), &err);
	assert_string_equal(pre, plain);
	assert_non_null(strstr(err, "unknown solver"));
	assert_non_null(strstr(err, "no-such-method"));
	assert_non_null(strchr(err, '\n'));
	assert_string_equal(strchr(err, '\n'), "\n"); /* exactly one line */
	free(pre);
	free(err);
	free(plain);
}

static void test_stats_file(void **state)
{
	(void)state;
	char path[] = "/tmp/lk_preload_statsXXXXXX";
	temp_file(path);
	char more[512];
	snprintf(more, sizeof more, "LCPKIT_SOLVER=pgs LCPKIT_STATS='%s'", path);
	char *pre = run(with_preload(more), NULL);
	free(pre);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[1024];
	assert_non_null(fgets(line, sizeof line, f));
	assert_non_null(strstr(line, "res_final"));
	int lines = 0, with_rows = 0;
	while (fgets(line, sizeof line, f)) {
		char world[64], solver[64];
		long long step;
		int bodies, rows;
		assert_int_equal(sscanf(line, "%63[^,],%lld,%63[^,],%d,%d", world, &step, solver, &bodies, &rows), 5);
		assert_string_equal(solver, "pgs");
		assert_int_equal(step, lines);
		with_rows += rows >= 5; /* at least the pendulum's hinge */
		++lines;
	}
	fclose(f);
	unlink(path);
	assert_int_equal(lines, 150);
	assert_int_equal(with_rows, 150);

	/* a spec with several options is one field, quoted, and the line keeps its 21 fields */
	strcpy(path, "/tmp/lk_preload_statsXXXXXX");
	temp_file(path);
	snprintf(more, sizeof more, "LCPKIT_SOLVER='pgs:coarse=2,tol=1e-4,check=3,budget=60' LCPKIT_STATS='%s'", path);
	pre = run(with_preload(more), NULL);
	free(pre);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof line, f));
	lines = 0;
	while (fgets(line, sizeof line, f)) {
		char world[64], rest[960];
		long long step;
		assert_int_equal(sscanf(line, "%63[^,],%lld,\"pgs:coarse=2,tol=1e-4,check=3,budget=60\",%959s", world, &step,
		                        rest),
		                 3);
		int commas = 0;
		for (const char *c = rest; *c; ++c)
			commas += *c == ',';
		assert_int_equal(commas, 17); /* the 18 fields after the solver's */
		++lines;
	}
	fclose(f);
	unlink(path);
	assert_int_equal(lines, 150);
}

/* ode_joints_prog with args, plainly and under the preload library with LCPKIT_SOLVER=ode and LCPKIT_STATS: the
 * same output
 * to the last digit, nothing on stderr, one statistics line per step naming ODE's stepper `own`. Returns the
 * plain output (malloc'd); the stats file is path (a mkstemp template). */
static char *expect_stats_only_is_ode(const char *args, const char *own, int steps, char *path)
{
	run_prog = LK_JOINTS_PROG;
	run_args = args;
	char *plain = run("", NULL);
	assert_true(strlen(plain) > 1000);
	temp_file(path);
	char more[512];
	snprintf(more, sizeof more, "LCPKIT_SOLVER=ode LCPKIT_STATS='%s'", path);
	char *err = NULL;
	char *pre = run(with_preload(more), &err);
	assert_string_equal(err, "");
	assert_string_equal(pre, plain);
	assert_int_equal(stats_lines(path, own), steps);
	free(pre);
	free(err);
	return plain;
}

/* Every joint type with its motor at its limit from the first step (ode_joints_prog): the first step's row
 * extraction used to find no processing context in ODE's world and crash (run() asserts a clean exit);
 * with only statistics on, the result is ODE's to the last digit over 600 steps; with a solver, lcpkit
 * steps it. */
static void test_joints_at_powered_limits(void **state)
{
	(void)state;
	char path[] = "/tmp/lk_preload_jointsXXXXXX";
	char *plain = expect_stats_only_is_ode("quickstep 600", "ode-quickstep", 600, path);
	char more[512];
	snprintf(more, sizeof more, "LCPKIT_SOLVER=pgs LCPKIT_QUIET=1 LCPKIT_STATS='%s'", path);
	char *err = NULL;
	char *pre = run(with_preload(more), &err);
	assert_string_equal(err, "");
	assert_int_equal(stats_lines(path, "pgs"), 600);
	assert_true(strcmp(pre, plain) != 0);
	assert_null(strstr(pre, "nan"));
	free(pre);
	free(err);
	free(plain);
	run_prog = LK_PRELOAD_PROG;
	run_args = "";
}

static int linked_step_ctx(dWorldID w, dReal h, void *user)
{
	(void)w;
	return lk_ode_world_step(user, h) == LK_OK;
}

/* ode_joints_prog's scene in this process, stepped `steps` times by lk_ode_world_step with `spec` (the bodies
 * registered in creation order, as the preload library registers them). */
static char *run_linked_joints(const char *spec, int steps)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	dInitODE2(0);
	js_scene sc;
	js_build(&sc);
	lk_ode_def def = lk_ode_default_def();
	def.solver = spec;
	lk_ode *ctx = NULL;
	assert_int_equal(lk_ode_create(sc.w, &def, &ctx, NULL, 0), LK_OK);
	for (int i = 0; i < sc.nbody; ++i)
		assert_int_equal(lk_ode_add_body(ctx, sc.body[i]), LK_OK);
	for (int s = 0; s < steps; ++s)
		assert_true(js_step(&sc, linked_step_ctx, ctx));
	js_print(&sc, f);
	fclose(f);
	lk_ode_destroy(ctx);
	js_done(&sc);
	dCloseODE();
	return buf;
}

/* A program that steps with dWorldStep is swapped too: with only statistics, ODE's dWorldStep measured and
 * its trajectory unchanged; with a solver, one line says so, the statistics name it and the result is
 * lk_ode_world_step's to the last digit; LCPKIT_SWAP=quickstep leaves dWorldStep to ODE; a bad LCPKIT_SWAP
 * is one line and ODE's steppers. */
static void test_dworldstep_swapped(void **state)
{
	(void)state;
	char path[] = "/tmp/lk_preload_stepXXXXXX";
	char *plain = expect_stats_only_is_ode("step 300", "ode-step", 300, path);
	char more[512];
	snprintf(more, sizeof more, "LCPKIT_SOLVER=pgs LCPKIT_STATS='%s'", path);
	char *err = NULL;
	char *pre = run(with_preload(more), &err);
	assert_string_equal(err, "lcpkit: dWorldStep replaced by lcpkit's pgs, a budget of 20 sweep-equivalents a step "
	                         "(the world's quickstep iterations); LCPKIT_QUIET=1 silences this\n");
	assert_int_equal(stats_lines(path, "pgs"), 300);
	char *direct = run_linked_joints("pgs", 300);
	assert_string_equal(pre, direct);
	assert_true(strcmp(pre, plain) != 0);
	free(direct);
	free(pre);
	free(err);

	snprintf(more, sizeof more, "LCPKIT_SOLVER=pgs LCPKIT_SWAP=quickstep LCPKIT_STATS='%s'", path);
	pre = run(with_preload(more), &err);
	assert_string_equal(err, "");
	assert_string_equal(pre, plain);
	assert_int_equal(stats_lines(path, "pgs"), 0);
	free(pre);
	free(err);

	pre = run(with_preload("LCPKIT_SOLVER=pgs LCPKIT_SWAP=stpe"), &err);
	assert_string_equal(err, "lcpkit: LCPKIT_SWAP=stpe: expected a comma-separated list of quickstep and step; "
	                         "using ODE's own steppers\n");
	assert_string_equal(pre, plain);
	free(pre);
	free(err);
	free(plain);
	run_prog = LK_PRELOAD_PROG;
	run_args = "";
}

/* Steps that fall back to ODE's stepper (a negative world CFM, which lcpkit rejects): ODE's result to the
 * last digit; on stderr the line of the replacement, one line at the first fallback saying why, one line at
 * exit counting them; under LCPKIT_QUIET=1, nothing. */
static void test_fallback_lines(void **state)
{
	(void)state;
	run_prog = LK_JOINTS_PROG;
	run_args = "step 40 negcfm";
	char *plain = run("", NULL);
	char *err = NULL;
	char *pre = run(with_preload("LCPKIT_SOLVER=pgs"), &err);
	assert_string_equal(pre, plain);
	/* "lcpkit: dWorldStep replaced by ...", "lcpkit: step 0 of world 0x... fell back to ODE's own stepper: ode:
	 * dxJointContact 0x... row 0 rejected (... negative constraint force mixing ...); ODE's dWorldStep stepped
	 * instead", then the count */
	const char *head = "lcpkit: dWorldStep replaced by lcpkit's pgs";
	const char *tail = "; ODE's dWorldStep stepped instead\nlcpkit: 40 of 40 steps fell back to ODE's own stepper\n";
	assert_true(!strncmp(err, head, strlen(head)));
	const char *second = strchr(err, '\n') + 1;
	assert_true(!strncmp(second, "lcpkit: step 0 of world 0x", 26));
	assert_non_null(strstr(second, "fell back to ODE's own stepper: ode: "));
	assert_non_null(strstr(second, "negative constraint force mixing"));
	assert_true(strlen(err) > strlen(tail));
	assert_string_equal(err + strlen(err) - strlen(tail), tail);
	assert_ptr_equal(strchr(second, '\n') + 1, err + strlen(err) - strlen(tail) + 35);
	free(pre);
	free(err);
	pre = run(with_preload("LCPKIT_SOLVER=pgs LCPKIT_QUIET=1"), &err);
	assert_string_equal(pre, plain);
	assert_string_equal(err, "");
	free(pre);
	free(err);
	free(plain);
	run_prog = LK_PRELOAD_PROG;
	run_args = "";
}

/* A program with a contact of zero normal every step (ode_preload_prog zero-normal): under every solver it
 * keeps stepping, and the rows of that contact are left out and nothing else: every body ends where it does
 * without the contact, to the last digit (the boxes fall and land, the pendulum swings); one note says so. */
static void test_zero_normal_contact(void **state)
{
	(void)state;
	static const char *const specs[] = {"pgs", "psor:w=1.3", "amgs", "pgs-sm", "newton-minmap", "newton-fischer",
	                                    "nncg", "apgd", "mprgp", "gsp", "esp", "pgs:coarse=2", "ipm:budget=1000"};
	for (size_t k = 0; k < sizeof specs / sizeof specs[0]; ++k) {
		char more[128], *err = NULL;
		snprintf(more, sizeof more, "LCPKIT_SOLVER='%s'", specs[k]);
		run_args = "";
		char *ref = run(with_preload(more), NULL);
		run_args = "zero-normal";
		char *out = run(with_preload(more), &err);
		/* the replacement's line and the note; a step that falls back (a guard of the method, with or without
		 * the contact) has lines of its own */
		int lines = 0, notes = 0;
		for (const char *c = err; *c; c = strchr(c, '\n') + 1) {
			const char *end = strchr(c, '\n');
			assert_non_null(end);
			const char *fb = strstr(c, "fell back to ODE's own stepper");
			lines += !fb || fb > end;
		}
		for (const char *c = err; (c = strstr(c, "the rest of the world was stepped")); ++c)
			++notes;
		if (lines != 2 || notes != 1 || !strstr(err, "row 0: J is zero); the rest of the world was stepped"))
			fail_msg("%s: stderr '%s'", specs[k], err);
		if (strcmp(out, ref) != 0)
			fail_msg("%s: with the contact\n%swithout it\n%s", specs[k], out, ref);
		double z0;
		assert_int_equal(sscanf(out, "0 %*f %*f %lf", &z0), 1);
		assert_true(z0 > 0.15 && z0 < 0.25); /* the first box landed */
		free(ref);
		free(out);
		free(err);
	}
	run_args = "";
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ode_solver_is_ode),
		cmocka_unit_test(test_without_solver_is_auto),
		cmocka_unit_test(test_with_solver_is_lcpkit),
		cmocka_unit_test(test_worlds_in_threads),
		cmocka_unit_test(test_threads_variable),
		cmocka_unit_test(test_program_thread_pool),
		cmocka_unit_test(test_unknown_solver),
		cmocka_unit_test(test_stats_file),
		cmocka_unit_test(test_joints_at_powered_limits),
		cmocka_unit_test(test_dworldstep_swapped),
		cmocka_unit_test(test_fallback_lines),
		cmocka_unit_test(test_zero_normal_contact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

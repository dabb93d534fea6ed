/* ODE plugin on every joint type at once (ode_joints_scene.h), with the motors on at their limits from the
 * first step: the row extraction is safe on every step, step 1 included and after the application released
 * ODE's working memory; reading the rows changes nothing (ODE's own steppers with the plugin's statistics,
 * and lk_ode_extract, leave ODE's trajectory bit for bit as it is); lcpkit's solvers step the scene. */
#include "test_util.h"

#include "lcpkit/ode.h"
#include "ode_joints_scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 600

/* How a run steps the scene, and what it does around each step. */
typedef struct runner {
	lk_ode *ctx;
	int ode_step;        /* plain ODE: dWorldStep instead of dWorldQuickStep */
	int extract_first;   /* lk_ode_extract before every step (ctx made for it, the step is ODE's) */
	int release;         /* give ODE's working memory back before every step */
	int negative_cfm;    /* a world CFM lcpkit rejects: every lcpkit step falls back to ODE's stepper */
	int fallbacks;
	int limit_rows_step1;
	int measured;        /* steps whose statistics carry RES of ODE's impulses */
	int unmeasured;      /* lk_ode_def.ode_residual off: no RES in the statistics */
} runner;

static int run_step(dWorldID w, dReal h, void *user)
{
	runner *r = user;
	if (r->release == 1)
		dWorldCleanupWorkingMemory(w);
	if (r->release == 2)
		assert_true(dWorldUseSharedWorkingMemory(w, NULL));
	if (r->extract_first) {
		lk_problem *p = lk_problem_create(LK_FORM_ROWS);
		assert_int_equal(lk_ode_extract(r->ctx, h, p), LK_OK);
		assert_true(lk_problem_row_count(p) > 0);
		lk_problem_destroy(p);
	}
	if (!r->ctx || r->extract_first)
		return r->ode_step ? dWorldStep(w, h) : dWorldQuickStep(w, h);
	lk_status st = lk_ode_world_step(r->ctx, h);
	if (st != LK_OK)
		fail_msg("lk_ode_world_step: %s", lk_ode_error(r->ctx));
	lk_engine_step_stats s;
	assert_int_equal(lk_ode_get_stats(r->ctx, &s), LK_OK);
	r->fallbacks += s.fallback;
	if (r->limit_rows_step1 < 0)
		r->limit_rows_step1 = s.rows_by_kind[LK_ROW_LIMIT];
	r->measured += s.res_final > 0;
	return 1;
}

/* Builds the scene, steps it STEPS times and returns every body's final state as text (malloc'd). With a
 * spec, a context on the world with that solver (and ODE's residual statistic on) makes the steps. */
static char *run(const char *spec, runner *r)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	assert_non_null(out);
	js_scene sc;
	js_build(&sc);
	if (r->negative_cfm)
		dWorldSetCFM(sc.w, -1e-7);
	r->limit_rows_step1 = -1;
	if (spec) {
		lk_ode_def def = lk_ode_default_def();
		def.solver = spec;
		def.ode_residual = !r->unmeasured;
		char err[300];
		if (lk_ode_create(sc.w, &def, &r->ctx, err, sizeof err) != LK_OK)
			fail_msg("lk_ode_create(%s): %s", spec, err);
		assert_int_equal(lk_ode_add_space(r->ctx, sc.s), LK_OK);
		assert_int_equal(lk_ode_set_fallback(r->ctx, r->ode_step ? LK_ODE_STEP : LK_ODE_QUICKSTEP), LK_OK);
		for (int i = 0; i < sc.nbody; ++i)
			assert_int_equal(lk_ode_add_body(r->ctx, sc.body[i]), LK_OK);
	}
	/* ODE's quickstep shuffles its rows with ODE's one random generator: every run starts it alike */
	dRandSetSeed(1);
	for (int s = 0; s < STEPS; ++s)
		assert_true(js_step(&sc, run_step, r));
	js_print(&sc, out);
	fclose(out);
	lk_ode_destroy(r->ctx);
	r->ctx = NULL;
	js_done(&sc);
	return text;
}

/* The scene holds all 17 joint types (contacts once the ball touches the ground). */
static void test_scene_has_every_joint_type(void **state)
{
	(void)state;
	runner r = {0};
	js_scene sc;
	js_build(&sc);
	assert_true(js_step(&sc, run_step, &r));
	for (int t = dJointTypeBall; t <= dJointTypeTransmission; ++t)
		if (!sc.types[t])
			fail_msg("no joint of type %d", t);
	js_done(&sc);
}

/* The first step of a world whose motors push at their limits: ODE's getInfo2 locks the world's processing
 * context, which ODE makes in its first step; lcpkit reads the rows before. Every solver, the world's
 * first step included, and the limit rows are there from step 1 on. */
static void test_powered_limits_from_step_one(void **state)
{
	(void)state;
	/* every lcpkit method and schedule, and ODE's own steppers */
	const char *specs[] = {"pgs",          "psor", "gsp",           "esp",           "amgs",          "amsor",
	                       "amgs-dense",   "pgs-sm", "newton-minmap", "newton-fischer", "ode-quickstep", "ode-step"};
	for (size_t k = 0; k < sizeof specs / sizeof specs[0]; ++k) {
		runner r = {0};
		char *text = run(specs[k], &r);
		/* a guard may hand a step to ODE's stepper (that is a fallback, not a crash), but the Gauss-Seidel
		 * family solves every step itself */
		if (strncmp(specs[k], "newton", 6) != 0 && strcmp(specs[k], "amgs-dense") != 0 && r.fallbacks != 0)
			fail_msg("%s: %d fallbacks", specs[k], r.fallbacks);
		/* the twelve axes at a stop: hinge, two sliders, universal (axis 1), hinge2 (axis 1), angular
		 * motor, PR (both), PU (axis 1 and the slide), piston (both) */
		if (r.limit_rows_step1 != 12)
			fail_msg("%s: %d limit rows at step 1", specs[k], r.limit_rows_step1);
		assert_null(strstr(text, "nan"));
		assert_null(strstr(text, "inf"));
		free(text);
	}
}

/* A run with the plugin (spec, how r says) ends bit for bit where plain ODE ends (its stepper, release and
 * CFM as r says); returns how many steps carried ODE's residual statistic. */
static int expect_ode_trajectory(const char *spec, runner r)
{
	runner plain = {0};
	plain.ode_step = r.ode_step;
	plain.release = r.release;
	plain.negative_cfm = r.negative_cfm;
	char *want = run(NULL, &plain);
	char *got = run(spec, &r);
	assert_string_equal(got, want);
	free(got);
	free(want);
	return r.measured;
}

/* The same while the application gives ODE's working memory back before every step (which drops the
 * processing context again), or releases it altogether. */
static void test_released_working_memory(void **state)
{
	(void)state;
	for (int release = 1; release <= 2; ++release) {
		runner r = {0};
		r.release = release;
		free(run("pgs", &r));
		assert_int_equal(r.fallbacks, 0);
		expect_ode_trajectory("ode-quickstep", r);
	}
}

/* ODE's own steppers with the plugin's statistics (rows read and RES measured every step) give ODE's
 * trajectory bit for bit: reading the rows applies no powered-limit force twice and moves no
 * transmission phase. 600 steps, both steppers; and the statistics were taken. */
static void test_statistics_are_passive(void **state)
{
	(void)state;
	runner r = {0};
	assert_int_equal(expect_ode_trajectory("ode-quickstep", r), STEPS);
	r.ode_step = 1;
	assert_int_equal(expect_ode_trajectory("ode-step", r), STEPS);
}

/* A step lcpkit's solver cannot make is ODE's, bit for bit, although the plugin read the rows first (its
 * read is undone before ODE's stepper reads them again); with either fallback stepper. */
static void test_fallback_is_ode(void **state)
{
	(void)state;
	for (int ode_step = 0; ode_step <= 1; ++ode_step) {
		runner r = {0};
		r.negative_cfm = 1;
		r.ode_step = ode_step;
		expect_ode_trajectory("pgs", r);
		runner count = r;
		free(run("pgs", &count));
		assert_int_equal(count.fallbacks, STEPS);
	}
}

/* With a solver set, the statistics are as passive: every joint type of the scene, 600 steps, the same
 * trajectory to the last digit printed with RES measured before and after every solve as without (the end
 * guard of the methods that can run away measures either way). */
static void test_solver_statistics_are_passive(void **state)
{
	(void)state;
	const char *specs[] = {"auto", "pgs", "apgd", "nncg"};
	for (size_t k = 0; k < sizeof specs / sizeof specs[0]; ++k) {
		runner with = {0}, without = {0};
		without.unmeasured = 1;
		char *a = run(specs[k], &with), *b = run(specs[k], &without);
		assert_int_equal(with.measured, STEPS);
		/* the Gauss-Seidel family measures nothing unasked; APGD and NNCG measure for their guard */
		if (k < 2)
			assert_int_equal(without.measured, 0);
		if (strcmp(a, b) != 0)
			fail_msg("%s: the statistics changed the trajectory", specs[k]);
		free(a);
		free(b);
	}
}

/* lk_ode_extract before every step is just as passive. */
static void test_extract_is_passive(void **state)
{
	(void)state;
	runner r = {0};
	r.extract_first = 1;
	expect_ode_trajectory("pgs", r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scene_has_every_joint_type),
		cmocka_unit_test(test_powered_limits_from_step_one),
		cmocka_unit_test(test_released_working_memory),
		cmocka_unit_test(test_statistics_are_passive),
		cmocka_unit_test(test_extract_is_passive),
		cmocka_unit_test(test_solver_statistics_are_passive),
		cmocka_unit_test(test_fallback_is_ode),
	};
	dInitODE2(0);
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	dCloseODE();
	return rc;
}

/* Every scene builds in every engine and steps; materials, sizes and the 2D constraint come out right. */
#include "test_util.h"
#include "scene.h"
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* small versions of the big scenes, so that the test stays quick */
static const char *small_spec(const char *name, char *buf, size_t n)
{
	if (!strcmp(name, "bigpool"))
		snprintf(buf, n, "bigpool:n=300");
	else if (!strcmp(name, "pool1") || !strcmp(name, "pool2"))
		snprintf(buf, n, "%s:n=60", name);
	else
		snprintf(buf, n, "%s", name);
	return buf;
}

static void test_every_scene_every_engine(void **state)
{
	(void)state;
	int engines = 0;
	for (const char *const *name = lk_scene_names(); *name; ++name) {
		char spec[64], err[256];
		lk_scene *sc = NULL;
		assert_int_equal(lk_scene_create(small_spec(*name, spec, sizeof spec), &sc, err, sizeof err), LK_OK);
		assert_true(sc->nbodies > 1);
		for (int e = 0; e < LK_ENGINE_COUNT; ++e) {
			if (!lk_engine_available((lk_engine)e))
				continue;
			++engines;
			const char *solvers[2] = {lk_engine_default_solver((lk_engine)e), "pgs"};
			for (int v = 0; v < 2; ++v) {
				lk_sim_def def = {sc, (lk_engine)e, solvers[v], 10, 0, 0, 0};
				lk_sim *sim = NULL;
				if (lk_sim_create(&def, &sim, err, sizeof err) != LK_OK)
					fail_msg("%s in %s with %s: %s", spec, lk_engine_name((lk_engine)e), solvers[v], err);
				lk_engine_step_stats st;
				for (int k = 0; k < 10; ++k)
					assert_int_equal(lk_sim_step(sim, &st), LK_OK);
				assert_true(st.step_seconds > 0);
				/* the constraint phase lies inside the step and holds the solve */
				if (!(st.phase_seconds > 0 && st.phase_seconds <= st.step_seconds &&
				      st.phase_seconds >= st.solve_seconds))
					fail_msg("%s in %s with %s: phase %g s, solve %g s, step %g s", spec,
					         lk_engine_name((lk_engine)e), solvers[v], st.phase_seconds, st.solve_seconds,
					         st.step_seconds);
				for (int i = 0; i < sc->nbodies; ++i) {
					lk_pose p;
					double vel[3], w[3];
					lk_sim_pose(sim, i, &p);
					lk_sim_velocity(sim, i, vel, w);
					for (int k = 0; k < 3; ++k)
						assert_true(isfinite(p.pos[k]) && isfinite(vel[k]) && isfinite(w[k]));
					double qn = p.quat[0] * p.quat[0] + p.quat[1] * p.quat[1] + p.quat[2] * p.quat[2] +
					            p.quat[3] * p.quat[3];
					assert_double_equal(qn, 1.0, 1e-9);
					/* 2D scenes stay in the x-z plane */
					if (sc->plane2d && sc->bodies[i].mass > 0)
						assert_double_equal(p.pos[1], 0.0, 1e-9);
				}
				assert_true(isfinite(lk_sim_kinetic_energy(sim)));
				lk_sim_destroy(sim);
			}
		}
		lk_scene_destroy(sc);
	}
	assert_true(engines > 0);
}

/* A falling sphere in both engines follows free fall until it lands: z(t) = z0 - g t^2 / 2 (the engines
 * integrate semi-implicitly, so within one step's worth of error). */
static void test_free_fall_agrees(void **state)
{
	(void)state;
	char err[256];
	lk_scene *sc = NULL;
	assert_int_equal(lk_scene_create("stacking:n=1", &sc, err, sizeof err), LK_OK);
	sc->bodies[1].pos[2] = 5.0; /* lift the single circle */
	for (int e = 0; e < LK_ENGINE_COUNT; ++e) {
		if (!lk_engine_available((lk_engine)e))
			continue;
		lk_sim_def def = {sc, (lk_engine)e, "pgs", 10, 0, 0, 0};
		lk_sim *sim = NULL;
		assert_int_equal(lk_sim_create(&def, &sim, err, sizeof err), LK_OK);
		for (int k = 0; k < 30; ++k)
			assert_int_equal(lk_sim_step(sim, NULL), LK_OK);
		lk_pose p;
		lk_sim_pose(sim, 1, &p);
		double t = 30 * sc->h, g = -sc->gravity[2];
		assert_double_equal(p.pos[2], 5.0 - 0.5 * g * t * t, g * t * sc->h);
		lk_sim_destroy(sim);
	}
	lk_scene_destroy(sc);
}

/* A 10 kg box resting on a 1 kg box (heavy-on-light:n=2,ratio=10) in Bullet under auto at 10 iterations: the
 * light box's contacts start their friction from zero (bullet_shim/src/contact_rows.cpp, markUnequal), and the
 * pair rests as under Bullet's own solver. With their friction carried over from step to step the pair rocked,
 * 0.1 J of kinetic energy over the last second of 10 s where the rest are 1e-6 J; a 3 kg box on a 1 kg box,
 * whose friction is still carried over, rests too. */
static void test_heavy_box_on_light_rests(void **state)
{
	(void)state;
	if (!lk_engine_available(LK_ENGINE_BULLET))
		skip();
	const char *specs[] = {"heavy-on-light:n=2,ratio=10", "heavy-on-light:n=2,ratio=3"};
	for (int s = 0; s < 2; ++s) {
		for (int own = 0; own < 2; ++own) {
			char err[256];
			lk_scene *sc = NULL;
			assert_int_equal(lk_scene_create(specs[s], &sc, err, sizeof err), LK_OK);
			lk_sim_def def = {sc, LK_ENGINE_BULLET, own ? "bullet-si" : "auto", 10, 0, 0, 0};
			lk_sim *sim = NULL;
			assert_int_equal(lk_sim_create(&def, &sim, err, sizeof err), LK_OK);
			lk_sim_set_residuals(sim, 0);
			const int steps = (int)(10.0 / sc->h + 0.5), last = (int)(1.0 / sc->h + 0.5);
			double ke = 0.0;
			for (int k = 0; k < steps; ++k) {
				assert_int_equal(lk_sim_step(sim, NULL), LK_OK);
				if (k >= steps - last)
					ke += lk_sim_kinetic_energy(sim) / last;
			}
			print_message("%s under %s: kinetic energy %.3g J over the last second\n", specs[s], def.solver, ke);
			assert_true(ke < 1e-4);
			lk_sim_destroy(sim);
			lk_scene_destroy(sc);
		}
	}
}

/* The top of the pool's first wall: its first static box. */
static double pool_wall_top(const lk_scene *sc)
{
	for (int i = 0; i < sc->nbodies; ++i)
		if (sc->bodies[i].shape == LK_SHAPE_BOX && sc->bodies[i].mass <= 0)
			return sc->bodies[i].pos[2] + sc->bodies[i].size[2];
	fail_msg("no wall");
	return 0;
}

static void test_scene_spec_errors(void **state)
{
	(void)state;
	char err[512];
	lk_scene *sc = NULL;
	assert_int_equal(lk_scene_create("boxstak", &sc, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "unknown scene 'boxstak'"));
	assert_non_null(strstr(err, "boxstack"));
	assert_int_equal(lk_scene_create("boxstack:m=3", &sc, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "valid: n, size, mu, ratio"));
	assert_int_equal(lk_scene_create("boxstack:n=0", &sc, err, sizeof err), LK_ERR_PARSE);
	assert_int_equal(lk_scene_create("boxstack:n=abc", &sc, err, sizeof err), LK_ERR_PARSE);
	assert_null(sc);
	assert_int_equal(lk_scene_create("boxstack:n=20,mu=0.3", &sc, err, sizeof err), LK_OK);
	assert_int_equal(sc->nbodies, 21);
	assert_string_equal(sc->spec, "boxstack:n=20,mu=0.3");
	assert_double_equal(sc->bodies[20].pos[2], 19.5, 1e-12);
	lk_scene_destroy(sc);
	/* the paper's Pool 1: 221 circles of 0.21 m, 2 kg, in 2D */
	assert_int_equal(lk_scene_create("pool1", &sc, err, sizeof err), LK_OK);
	int circles = 0;
	for (int i = 0; i < sc->nbodies; ++i)
		if (sc->bodies[i].shape == LK_SHAPE_SPHERE) {
			++circles;
			assert_double_equal(sc->bodies[i].size[0], 0.21, 0);
			assert_double_equal(sc->bodies[i].mass, 2.0, 0);
		}
	assert_int_equal(circles, 221);
	assert_int_equal(sc->plane2d, 1);
	/* its walls 8 m high, the paper's pool */
	assert_double_equal(pool_wall_top(sc), 8.0, 1e-12);
	lk_scene_destroy(sc);
	/* 600 circles of 0.15 m settle 8.3 m high: walls of 8 m let them pour over, these are 1.15 times the 30 rows
	 * of 20 that a square packing of the 6 m pool stacks (9 m) */
	assert_int_equal(lk_scene_create("pool1:n=600,r=0.15", &sc, err, sizeof err), LK_OK);
	assert_double_equal(pool_wall_top(sc), 1.15 * 30 * 0.3, 1e-12);
	lk_scene_destroy(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scene_spec_errors),
		cmocka_unit_test(test_free_fall_agrees),
		cmocka_unit_test(test_heavy_box_on_light_rests),
		cmocka_unit_test(test_every_scene_every_engine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

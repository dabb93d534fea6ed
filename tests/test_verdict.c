/* The verdict of `lcpkit compare --verdict` (scenes/report/verdict.h) and the scene seeds it runs over
 * (scene.h): medians against a band made of the runs' spread and the outcome's resolution. */
#include "test_util.h"

#include "scene.h"
#include "verdict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void test_verdict_signs(void **state)
{
	(void)state;
	const double own[3] = {1, 2, 3};
	const double worse[3] = {5, 6, 7}, level[3] = {2.5, 3, 3.5}, better[3] = {-5, -4, -3};
	/* band: the larger spread, 2; medians 2 against 6, 3, -4 */
	lk_verdict v = lk_verdict_of(own, 3, worse, 3, 0.1, 0);
	assert_int_equal(v.sign, LK_VERDICT_WORSE);
	assert_int_equal(v.compared, 1);
	assert_double_equal(v.own, 2, 0);
	assert_double_equal(v.cand, 6, 0);
	assert_double_equal(v.band, 2, 0);
	assert_int_equal(lk_verdict_of(own, 3, level, 3, 0.1, 0).sign, LK_VERDICT_LEVEL);
	assert_int_equal(lk_verdict_of(own, 3, better, 3, 0.1, 0).sign, LK_VERDICT_BETTER);
	/* higher is better: the same numbers read the other way */
	assert_int_equal(lk_verdict_of(own, 3, worse, 3, 0.1, 1).sign, LK_VERDICT_BETTER);
	assert_int_equal(lk_verdict_of(own, 3, better, 3, 0.1, 1).sign, LK_VERDICT_WORSE);
	/* the candidate's own spread widens the band: a wide candidate is level */
	const double wide[3] = {-10, 7, 20};
	v = lk_verdict_of(own, 3, wide, 3, 0.1, 0);
	assert_int_equal(v.sign, LK_VERDICT_LEVEL);
	assert_double_equal(v.band, 30, 0);
}

static void test_verdict_resolution_and_missing(void **state)
{
	(void)state;
	const double a[3] = {1, 1, 1}, b[3] = {1.05, 1.05, 1.05};
	/* no spread at all: the resolution decides */
	assert_int_equal(lk_verdict_of(a, 3, b, 3, 0.1, 0).sign, LK_VERDICT_LEVEL);
	assert_int_equal(lk_verdict_of(a, 3, b, 3, 0.01, 0).sign, LK_VERDICT_WORSE);
	/* NaN runs are left out of the medians and spreads; a side with nothing is not compared */
	const double some[3] = {NAN, 1.5, NAN}, none[2] = {NAN, NAN};
	lk_verdict v = lk_verdict_of(a, 3, some, 3, 0.01, 0);
	assert_int_equal(v.compared, 1);
	assert_double_equal(v.cand, 1.5, 0);
	assert_int_equal(v.sign, LK_VERDICT_WORSE);
	v = lk_verdict_of(a, 3, none, 2, 0.01, 0);
	assert_int_equal(v.compared, 0);
	assert_int_equal(v.sign, LK_VERDICT_LEVEL);
	/* even numbers of runs: the mean of the two middle ones */
	const double four[4] = {4, 1, 3, 2};
	assert_double_equal(lk_verdict_of(four, 4, four, 4, 0, 0).own, 2.5, 0);
}

static void test_outcome_resolution(void **state)
{
	(void)state;
	char err[200];
	lk_scene *s = NULL, *half = NULL, *big = NULL;
	assert_int_equal(lk_scene_create("boxstack:n=4", &s, err, sizeof err), LK_OK);
	assert_int_equal(lk_scene_create("boxstack:n=4,size=0.5", &half, err, sizeof err), LK_OK);
	assert_int_equal(lk_scene_create("boxstack:n=4,size=30", &big, err, sizeof err), LK_OK);
	/* lengths scale with the boxes (1 m, then 0.5 m: the median largest dimension of the moving bodies) */
	assert_double_equal(lk_outcome_resolution(LK_OUTCOME_CREEP, s, 1.0 / 60), 1e-4, 1e-15);
	assert_double_equal(lk_outcome_resolution(LK_OUTCOME_CREEP, half, 1.0 / 60), 0.5e-4, 1e-15);
	/* a depth: at least the contact layer (1 mm), within which no solver pushes a contact out */
	assert_double_equal(lk_outcome_resolution(LK_OUTCOME_MAX_PENETRATION, s, 1.0 / 60), 1e-3, 1e-15);
	assert_double_equal(lk_outcome_resolution(LK_OUTCOME_PENETRATION_REST, half, 1.0 / 60), 1e-3, 1e-15);
	assert_double_equal(lk_outcome_resolution(LK_OUTCOME_PENETRATION_REST, big, 1.0 / 60), 30e-4, 1e-15);
	assert_double_equal(lk_outcome_resolution(LK_OUTCOME_STANDING, s, 1.0 / 60), 1.0 / 60, 1e-15);
	/* the energy of every moving body lowered by 1e-4 of the size: 4 boxes of mass m, g = 9.81 */
	double m = 0;
	for (int i = 0; i < s->nbodies; ++i)
		m += s->bodies[i].mass;
	assert_double_equal(lk_outcome_resolution(LK_OUTCOME_ENERGY_END, s, 1.0 / 60), m * 9.81 * 1e-4, 1e-12);
	assert_int_equal(lk_outcome_higher_better(LK_OUTCOME_STANDING), 1);
	assert_int_equal(lk_outcome_higher_better(LK_OUTCOME_MAX_PENETRATION), 0);
	assert_string_equal(lk_outcome_key(LK_OUTCOME_DRIFT_MAX), "top_drift_max");
	lk_scene_destroy(s);
	lk_scene_destroy(half);
	lk_scene_destroy(big);
}

/* seed=K moves every moving body sideways by at most 1e-4 of its size, and only sideways; seed=0 is the scene
 * as built; two seeds differ; the spec names the seed. */
static void test_scene_seeds(void **state)
{
	(void)state;
	char err[200];
	const char *const specs[] = {"pyramid", "pool1", "ragdolls:n=2"};
	for (int k = 0; k < 3; ++k) {
		lk_scene *base = NULL, *zero = NULL, *s1 = NULL, *s2 = NULL;
		char spec[64];
		assert_int_equal(lk_scene_create(specs[k], &base, err, sizeof err), LK_OK);
		snprintf(spec, sizeof spec, "%s%sseed=0", specs[k], strchr(specs[k], ':') ? "," : ":");
		assert_int_equal(lk_scene_create(spec, &zero, err, sizeof err), LK_OK);
		snprintf(spec, sizeof spec, "%s%sseed=1", specs[k], strchr(specs[k], ':') ? "," : ":");
		assert_int_equal(lk_scene_create(spec, &s1, err, sizeof err), LK_OK);
		assert_non_null(strstr(s1->spec, "seed=1"));
		snprintf(spec, sizeof spec, "%s%sseed=2", specs[k], strchr(specs[k], ':') ? "," : ":");
		assert_int_equal(lk_scene_create(spec, &s2, err, sizeof err), LK_OK);
		assert_int_equal(base->nbodies, s1->nbodies);
		assert_memory_equal(base->bodies, zero->bodies, sizeof *base->bodies * (size_t)base->nbodies);
		int moved = 0, differ = 0;
		for (int i = 0; i < base->nbodies; ++i) {
			const lk_scene_body *a = &base->bodies[i], *b = &s1->bodies[i];
			const double size = a->shape == LK_SHAPE_SPHERE    ? 2 * a->size[0]
			                    : a->shape == LK_SHAPE_CAPSULE ? 2 * (a->size[0] + a->size[1])
			                                                   : 2 * fmax(a->size[0], fmax(a->size[1], a->size[2]));
			for (int c = 0; c < 3; ++c) {
				const double d = fabs(b->pos[c] - a->pos[c]);
				assert_true(d <= 1e-4 * size * (1 + 1e-12));
				moved += d > 0;
				if (c == 2 || (c == 1 && base->plane2d))
					assert_true(d == 0); /* sideways only */
				if (a->mass <= 0)
					assert_true(d == 0);
			}
			differ += memcmp(s1->bodies[i].pos, s2->bodies[i].pos, sizeof a->pos) != 0;
		}
		assert_true(moved > 0);
		assert_true(differ > 0);
		lk_scene_destroy(base);
		lk_scene_destroy(zero);
		lk_scene_destroy(s1);
		lk_scene_destroy(s2);
	}
	lk_scene *bad = NULL;
	assert_int_equal(lk_scene_create("pyramid:seed=1.5", &bad, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "seed"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict_signs),
		cmocka_unit_test(test_verdict_resolution_and_missing),
		cmocka_unit_test(test_outcome_resolution),
		cmocka_unit_test(test_scene_seeds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

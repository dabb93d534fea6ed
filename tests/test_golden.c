/* Scene-level golden outcomes: for a small matrix of scene x engine x solver, a hash of the final state
 * after a fixed number of steps (determinism: the same build gives bitwise the same state) and physical
 * checks (a stack stands, penetration stays small, energy does not grow). The hashes live in
 * tests/golden/scenes.txt; LK_UPDATE_GOLDEN=1 rewrites it from this build. */
#include "test_util.h"
#include "scene.h"
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 120

static const char *const scenes[] = {"boxstack:n=5", "pool1:n=40", "snake:n=6"};
static const char *const solvers[] = {"own", "pgs", "amgs"};

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; ++i) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static double total_energy(const lk_sim *sim, const lk_scene *sc)
{
	double e = lk_sim_kinetic_energy(sim);
	for (int i = 0; i < sc->nbodies; ++i) {
		if (sc->bodies[i].mass <= 0)
			continue;
		lk_pose p;
		lk_sim_pose(sim, i, &p);
		e -= sc->bodies[i].mass * (sc->gravity[0] * p.pos[0] + sc->gravity[1] * p.pos[1] + sc->gravity[2] * p.pos[2]);
	}
	return e;
}

typedef struct outcome {
	char key[160];
	uint64_t hash;
} outcome;

static void run(const lk_scene *sc, lk_engine e, const char *solver, outcome *o)
{
	char err[256];
	lk_sim_def def = {sc, e, solver, 20, 0, 0, 0};
	lk_sim *sim = NULL;
	if (lk_sim_create(&def, &sim, err, sizeof err) != LK_OK)
		fail_msg("%s: %s", sc->spec, err);
	double e0 = total_energy(sim, sc), max_pen = 0;
	for (int k = 0; k < STEPS; ++k) {
		assert_int_equal(lk_sim_step(sim, NULL), LK_OK);
		max_pen = fmax(max_pen, lk_sim_max_penetration(sim));
	}
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = 0; i < sc->nbodies; ++i) {
		lk_pose p;
		lk_sim_pose(sim, i, &p);
		h = fnv(h, p.pos, sizeof p.pos);
		h = fnv(h, p.quat, sizeof p.quat);
	}
	double e1 = total_energy(sim, sc);
	snprintf(o->key, sizeof o->key, "%s %s %s", sc->spec, lk_engine_name(e), solver);
	o->hash = h;
	/* physics: contacts keep bodies apart to within 5 cm, and the total energy does not grow (restitution
	 * and friction only take energy out) */
	if (!(max_pen < 0.05))
		fail_msg("%s: penetration %g m", o->key, max_pen);
	if (!(e1 <= e0 + 1e-3 * fabs(e0) + 1e-2))
		fail_msg("%s: energy grew from %g to %g J", o->key, e0, e1);
	if (sc->stack_top >= 0 && !strncmp(sc->spec, "boxstack", 8)) {
		lk_pose top;
		lk_sim_pose(sim, sc->stack_top, &top);
		if (!(fabs(top.pos[2] - sc->stack_top_height) < 0.05))
			fail_msg("%s: the stack's top moved from %g to %g m", o->key, sc->stack_top_height, top.pos[2]);
	}
	/* determinism: a second run from the same state lands on bitwise the same state */
	lk_sim *again = NULL;
	assert_int_equal(lk_sim_create(&def, &again, err, sizeof err), LK_OK);
	for (int k = 0; k < STEPS; ++k)
		assert_int_equal(lk_sim_step(again, NULL), LK_OK);
	uint64_t h2 = 0xcbf29ce484222325ull;
	for (int i = 0; i < sc->nbodies; ++i) {
		lk_pose p;
		lk_sim_pose(again, i, &p);
		h2 = fnv(h2, p.pos, sizeof p.pos);
		h2 = fnv(h2, p.quat, sizeof p.quat);
	}
	if (h2 != h)
		fail_msg("%s: two runs differ", o->key);
	lk_sim_destroy(again);
	lk_sim_destroy(sim);
}

static void test_golden_outcomes(void **state)
{
	(void)state;
	outcome out[64];
	int n = 0;
	for (size_t s = 0; s < sizeof scenes / sizeof scenes[0]; ++s) {
		lk_scene *sc = NULL;
		char err[256];
		assert_int_equal(lk_scene_create(scenes[s], &sc, err, sizeof err), LK_OK);
		for (int e = 0; e < LK_ENGINE_COUNT; ++e) {
			if (!lk_engine_available((lk_engine)e))
				continue;
			for (size_t v = 0; v < sizeof solvers / sizeof solvers[0]; ++v) {
				const char *solver = strcmp(solvers[v], "own") ? solvers[v] : lk_engine_default_solver((lk_engine)e);
				run(sc, (lk_engine)e, solver, &out[n++]);
			}
		}
		lk_scene_destroy(sc);
	}
	const char *path = getenv("LK_GOLDEN");
	if (getenv("LK_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fprintf(f, "# scene engine solver: FNV-1a hash of every body's position and quaternion after %d steps\n",
		        STEPS);
		for (int i = 0; i < n; ++i)
			fprintf(f, "%s %016llx\n", out[i].key, (unsigned long long)out[i].hash);
		fclose(f);
		return;
	}
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("no golden file %s (make it with LK_UPDATE_GOLDEN=1)", path);
	char line[256];
	int checked = 0;
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#')
			continue;
		char *sp = strrchr(line, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		unsigned long long want = strtoull(sp + 1, NULL, 16);
		for (int i = 0; i < n; ++i)
			if (!strcmp(out[i].key, line)) {
				if (out[i].hash != want)
					fail_msg("%s: state hash %016llx, golden %016llx", line, (unsigned long long)out[i].hash, want);
				++checked;
			}
	}
	fclose(f);
	/* every run of this build has its golden value */
	assert_int_equal(checked, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_outcomes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

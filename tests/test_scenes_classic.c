/* The scenes users know from the engines' own demos and benchmarks (pile, cards, motor-limit, ragdolls)
 * behave in both engines, with the engine's own solver and with lcpkit's PGS: they run without NaN and end
 * where physics puts them. */
#include "test_util.h"
#include "scene.h"
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct run {
	lk_scene *scene;
	lk_sim *sim;
	char what[160]; /* "spec in engine with solver", for messages */
} run;

/* Builds spec in engine e with solver and runs it for seconds, checking every pose for NaN each step. */
static void run_scene(run *r, const char *spec, lk_engine e, const char *solver, int iterations, double seconds)
{
	char err[256];
	memset(r, 0, sizeof *r);
	assert_int_equal(lk_scene_create(spec, &r->scene, err, sizeof err), LK_OK);
	snprintf(r->what, sizeof r->what, "%s in %s with %s", spec, lk_engine_name(e), solver);
	lk_sim_def def = {r->scene, e, solver, iterations, 0};
	if (lk_sim_create(&def, &r->sim, err, sizeof err) != LK_OK)
		fail_msg("%s: %s", r->what, err);
	int steps = (int)lround(seconds / r->scene->h);
	for (int k = 0; k < steps; ++k) {
		if (lk_sim_step(r->sim, NULL) != LK_OK)
			fail_msg("%s: step %d failed", r->what, k);
		for (int i = 0; i < r->scene->nbodies; ++i) {
			lk_pose p;
			lk_sim_pose(r->sim, i, &p);
			for (int c = 0; c < 3; ++c)
				if (!isfinite(p.pos[c]) || !isfinite(p.quat[c]))
					fail_msg("%s: body %d is not finite at step %d", r->what, i, k);
		}
	}
}

static void run_done(run *r)
{
	lk_sim_destroy(r->sim);
	lk_scene_destroy(r->scene);
}

/* Calls f for each engine built in, with its own default solver and with lcpkit's "pgs". */
static void each_engine_solver(void (*f)(lk_engine e, const char *solver))
{
	int engines = 0;
	for (int e = 0; e < LK_ENGINE_COUNT; ++e) {
		if (!lk_engine_available((lk_engine)e))
			continue;
		++engines;
		f((lk_engine)e, lk_engine_default_solver((lk_engine)e));
		f((lk_engine)e, "pgs");
	}
	assert_true(engines > 0);
}

/* ------------------------------------------------------------------------------------------------ pile */

static void pile_settles(lk_engine e, const char *solver)
{
	run r;
	run_scene(&r, "pile:n=48", e, solver, 20, 5.0);
	const lk_scene *sc = r.scene;
	/* the walls' inner faces bound the footprint */
	double half = INFINITY, wall_top = 0, top = 0;
	int walls = 0, boxes = 0;
	for (int i = 0; i < sc->nbodies; ++i) {
		const lk_scene_body *b = &sc->bodies[i];
		if (b->shape == LK_SHAPE_BOX && b->mass <= 0) {
			++walls;
			half = fmin(half, fmax(fabs(b->pos[0]), fabs(b->pos[1])) - fmin(b->size[0], b->size[1]));
			wall_top = b->pos[2] + b->size[2];
		} else if (b->mass > 0) {
			top = fmax(top, b->pos[2]);
		}
	}
	assert_int_equal(walls, 4);
	assert_true(half > 1 && half < 10);
	/* the columns start far above the walls ... */
	assert_true(top > 3 * wall_top);
	double energy = 0, heap_top = 0;
	for (int i = 0; i < sc->nbodies; ++i) {
		const lk_scene_body *b = &sc->bodies[i];
		if (b->mass <= 0)
			continue;
		++boxes;
		lk_pose p;
		double v[3], w[3];
		lk_sim_pose(r.sim, i, &p);
		lk_sim_velocity(r.sim, i, v, w);
		energy += lk_scene_body_energy(b, p.quat, v, w);
		heap_top = fmax(heap_top, p.pos[2]);
		/* a box's centre lies at least half its size above the floor (less a penetration) and within the
		 * walls, at most half its diagonal from their faces */
		if (p.pos[2] < b->size[2] - 0.1 || fabs(p.pos[0]) > half || fabs(p.pos[1]) > half)
			fail_msg("%s: box %d ends at (%g, %g, %g), outside the walls' %g or below the floor", r.what, i,
			         p.pos[0], p.pos[1], p.pos[2], half);
	}
	assert_int_equal(boxes, 48);
	/* ... and end in a heap at most a box over them, at rest: 0.1 J is a box of 1 kg at 0.45 m/s */
	if (heap_top > wall_top + 1.0)
		fail_msg("%s: the heap's top box is at %g m, above the walls' %g m", r.what, heap_top, wall_top);
	if (energy > 0.1)
		fail_msg("%s: the heap still moves, kinetic energy %g J", r.what, energy);
	print_message("%-40s kinetic energy at 5 s %.3g J\n", r.what, energy);
	run_done(&r);
}

static void test_pile_settles_inside_walls(void **state)
{
	(void)state;
	each_engine_solver(pile_settles);
}

/* ----------------------------------------------------------------------------------------------- cards */

/* The largest distance a dynamic body moved from where the scene starts it. */
static double max_displacement(const run *r)
{
	double d = 0;
	for (int i = 0; i < r->scene->nbodies; ++i) {
		const lk_scene_body *b = &r->scene->bodies[i];
		if (b->mass <= 0)
			continue;
		lk_pose p;
		lk_sim_pose(r->sim, i, &p);
		d = fmax(d, sqrt(pow(p.pos[0] - b->pos[0], 2) + pow(p.pos[1] - b->pos[1], 2) + pow(p.pos[2] - b->pos[2], 2)));
	}
	return d;
}

/* The 15 cards of a three-storey house; the top card (compare's stack top) is one of the top A-frame's. */
static void test_cards_layout(void **state)
{
	(void)state;
	char err[256];
	lk_scene *sc = NULL;
	assert_int_equal(lk_scene_create("cards", &sc, err, sizeof err), LK_OK);
	assert_int_equal(sc->nbodies, 1 + 15);
	double high = 0;
	for (int i = 1; i < sc->nbodies; ++i)
		high = fmax(high, sc->bodies[i].pos[2]);
	assert_int_equal(sc->stack_top, sc->nbodies - 1);
	assert_double_equal(sc->bodies[sc->stack_top].pos[2], high, 1e-12);
	lk_scene_destroy(sc);
	assert_int_equal(lk_scene_create("cards:levels=5", &sc, err, sizeof err), LK_OK);
	assert_int_equal(sc->nbodies, 1 + 3 * 5 * 6 / 2 - 5);
	lk_scene_destroy(sc);
}

static double cards_moved[LK_ENGINE_COUNT];

static void cards_run(lk_engine e, const char *solver)
{
	run r;
	int pgs = !strcmp(solver, "pgs");
	run_scene(&r, "cards", e, solver, pgs ? 40 : 20, 3.0);
	double moved = max_displacement(&r);
	print_message("%-40s the card that moved most moved %.3g m in 3 s\n", r.what, moved);
	if (pgs)
		cards_moved[e] = moved;
	run_done(&r);
}

/* The house stands for 3 s under lcpkit's PGS at a budget of 40 in Bullet: no card moves 5 cm (they settle
 * by 2 to 3 cm; a falling card moves tens of centimetres). In ODE the cards slip at the peaks and the top
 * storey falls after about 3 s with either solver (README.md, Scenes): only no NaN is asked there. */
static void test_cards_stand(void **state)
{
	(void)state;
	for (int e = 0; e < LK_ENGINE_COUNT; ++e)
		cards_moved[e] = NAN;
	each_engine_solver(cards_run);
	if (lk_engine_available(LK_ENGINE_BULLET) && !(cards_moved[LK_ENGINE_BULLET] < 0.05))
		fail_msg("cards in bullet with pgs, 40 iterations: a card moved %g m", cards_moved[LK_ENGINE_BULLET]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pile_settles_inside_walls),
		cmocka_unit_test(test_cards_layout),
		cmocka_unit_test(test_cards_stand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

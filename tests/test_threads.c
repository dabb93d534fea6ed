/* Threads (docs/reliability.md): lcpkit keeps no global state, so worlds stepping in parallel threads with
 * different solvers end in bitwise the same state as each alone, and two lk_solve calls in two threads on
 * two problems give bitwise the same lambda as each alone.
 *
 * ODE asks every thread that uses it to call dAllocateODEDataForThread first (its collision caches are per
 * thread); the worlds are created and destroyed in the main thread, the workers only step them. Several ODE
 * worlds step at once only because the scene library gives each its own threading implementation (ODE's
 * default one is shared by all worlds and aborts when two step at once). */
#include "test_util.h"
#include "lcpkit/generate.h"
#include "scene.h"
#include "sim.h"

#ifdef LCPKIT_HAVE_ODE
#include <ode/ode.h>
#endif

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* fewer steps under AddressSanitizer (a Debug build several times slower): the threads interleave all the
 * same */
#if defined(__SANITIZE_ADDRESS__)
#define STEPS 25
#else
#define STEPS 60
#endif

#define MAX_GROUP 4

typedef struct world_run {
	const char *scene;
	lk_engine engine;
	const char *solver;
	int iterations;
	lk_scene *sc;
	lk_sim *sim;
	uint64_t hash;
	int failed_step;
} world_run;

#define RUN(scene, engine, solver, iterations) {scene, engine, solver, iterations, NULL, NULL, 0, -1}

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; ++i) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void world_open(world_run *r)
{
	char err[256];
	if (lk_scene_create(r->scene, &r->sc, err, sizeof err) != LK_OK)
		fail_msg("%s: %s", r->scene, err);
	lk_sim_def def = {r->sc, r->engine, r->solver, r->iterations, 0, 0, 0};
	if (lk_sim_create(&def, &r->sim, err, sizeof err) != LK_OK)
		fail_msg("%s %s %s: %s", r->scene, lk_engine_name(r->engine), r->solver, err);
	r->failed_step = -1;
}

/* pose and velocity of every body, bit for bit */
static void world_close(world_run *r)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = 0; i < r->sc->nbodies; ++i) {
		lk_pose p;
		double v[3], w[3];
		lk_sim_pose(r->sim, i, &p);
		lk_sim_velocity(r->sim, i, v, w);
		h = fnv(h, p.pos, sizeof p.pos);
		h = fnv(h, p.quat, sizeof p.quat);
		h = fnv(h, v, sizeof v);
		h = fnv(h, w, sizeof w);
	}
	r->hash = h;
	lk_sim_destroy(r->sim);
	lk_scene_destroy(r->sc);
	r->sim = NULL;
	r->sc = NULL;
}

static void *world_steps(void *arg)
{
	world_run *r = arg;
#ifdef LCPKIT_HAVE_ODE
	if (r->engine == LK_ENGINE_ODE)
		dAllocateODEDataForThread(dAllocateMaskAll);
#endif
	/* no dCleanupODEAllDataForThread at the end: ODE allows it only when initialised with
	 * dInitFlagManualThreadCleanup, and the scene library's dInitODE2(0) leaves the cleanup to ODE */
	for (int k = 0; k < STEPS; ++k)
		if (lk_sim_step(r->sim, NULL) != LK_OK && r->failed_step < 0)
			r->failed_step = k;
	return NULL;
}

/* The run in the main thread with no other world. *draws: whether it took numbers from ODE's random
 * generator, which is one for the whole process (the scene library seeds it with 0 when it creates an ODE
 * world; quickstep shuffles its rows with it every 8th sweep from the 8th on). */
static uint64_t alone(world_run r, int *draws)
{
	world_open(&r);
	*draws = 0;
#ifdef LCPKIT_HAVE_ODE
	unsigned long seed = dRandGetSeed();
#endif
	world_steps(&r);
	assert_int_equal(r.failed_step, -1);
#ifdef LCPKIT_HAVE_ODE
	if (r.engine == LK_ENGINE_ODE)
		*draws = dRandGetSeed() != seed;
#endif
	world_close(&r);
	return r.hash;
}

static void together(world_run *w, int n)
{
	pthread_t t[MAX_GROUP];
	for (int i = 0; i < n; ++i)
		world_open(&w[i]);
	for (int i = 0; i < n; ++i)
		assert_int_equal(pthread_create(&t[i], NULL, world_steps, &w[i]), 0);
	for (int i = 0; i < n; ++i)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	for (int i = 0; i < n; ++i) {
		assert_int_equal(w[i].failed_step, -1);
		world_close(&w[i]);
	}
}

static void test_worlds_in_threads(void **state)
{
	(void)state;
	world_run runs[] = {
		RUN("boxstack:n=5", LK_ENGINE_ODE, "pgs", 20),
		RUN("pool1:n=20", LK_ENGINE_BULLET, "amgs", 20),
		RUN("boxstack:n=5", LK_ENGINE_BULLET, "pgs-sm", 20),
		RUN("pool1:n=20", LK_ENGINE_ODE, "newton-fischer", 20),
		RUN("snake:n=5", LK_ENGINE_ODE, "gsp", 20),
		/* ODE's own steppers: quickstep with 20 sweeps shuffles its rows from ODE's random generator,
		 * with 8 it never does; dWorldStep's dense solver draws nothing */
		RUN("boxstack:n=5", LK_ENGINE_ODE, "ode-quickstep", 20),
		RUN("snake:n=5", LK_ENGINE_ODE, "ode-step", 20),
		RUN("pool1:n=20", LK_ENGINE_ODE, "ode-quickstep", 8),
	};
	enum { NRUNS = sizeof runs / sizeof runs[0] };
	uint64_t ref[NRUNS];
	int draws[NRUNS];
	for (int i = 0; i < NRUNS; ++i) {
		ref[i] = 0;
		draws[i] = 0;
		if (lk_engine_available(runs[i].engine))
			ref[i] = alone(runs[i], &draws[i]);
	}
	/* A world lands on its state alone only if no other world of its group draws from ODE's one random
	 * generator at the same time: two that draw interleave their numbers (two quickstep worlds with 20
	 * sweeps differ from their runs alone). So a group holds at most one world that draws, checked below;
	 * quickstep with 20 sweeps must draw, or the groups with it would not test a drawing world beside others */
	assert_true(!lk_engine_available(LK_ENGINE_ODE) || (draws[5] && !draws[0] && !draws[7]));
	/* -1 ends a group. A run with itself (the same scene, engine and solver in every thread), the two engines
	 * side by side under different solvers, Bullet with itself, ODE with ODE under lcpkit's solvers, under
	 * its own steppers and under both, three worlds of both engines and four ODE worlds at once. */
	static const int group[][MAX_GROUP + 1] = {
		{2, 2, -1}, {0, 1, -1}, {2, 3, -1}, {1, 1, -1}, {4, 2, -1},
		{0, 0, -1}, {3, 4, -1}, {4, 4, -1}, {6, 6, -1}, {7, 7, -1},
		{5, 3, -1}, {5, 6, -1}, {7, 5, 1, -1}, {0, 4, 6, 7, -1},
	};
	int groups = 0;
	for (size_t k = 0; k < sizeof group / sizeof group[0]; ++k) {
		world_run w[MAX_GROUP];
		int n = 0, available = 1, drawing = 0;
		for (; group[k][n] >= 0; ++n) {
			const world_run *r = &runs[group[k][n]];
			available &= lk_engine_available(r->engine);
			drawing += draws[group[k][n]];
			w[n] = *r;
		}
		if (!available)
			continue;
		if (drawing > 1)
			fail_msg("group %zu: %d worlds draw from ODE's random generator; their states depend on how "
			         "the threads interleave", k, drawing);
		together(w, n);
		for (int i = 0; i < n; ++i)
			if (w[i].hash != ref[group[k][i]])
				fail_msg("%s %s %s (world %d of %d in parallel threads) differs from its run alone",
				         w[i].scene, lk_engine_name(w[i].engine), w[i].solver, i + 1, n);
		++groups;
	}
	assert_true(groups > 0);
}

/* ------------------------------------------------------------------------------ two solves, two threads */

typedef struct solve_run {
	lk_problem *p;
	const char *spec;
	int repeats;
	const double *expect; /* NULL: compute only */
	int mismatches;
	lk_status status;
} solve_run;

static lk_problem *problem(lk_gen_kind kind, int n, uint64_t seed)
{
	lk_gen_params g = lk_default_gen_params(kind);
	g.n = n;
	g.seed = seed;
	g.mu = 0.5;
	lk_problem *p;
	char err[256];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	return p;
}

static void *solve_loop(void *arg)
{
	solve_run *r = arg;
	lk_solver_config cfg;
	char err[256];
	r->status = lk_config_parse(r->spec, &cfg, err, sizeof err);
	cfg.warm_start = 0;
	int n = lk_problem_row_count(r->p);
	for (int k = 0; k < r->repeats && r->status == LK_OK; ++k) {
		r->status = lk_solve(r->p, &cfg, NULL, NULL);
		if (r->expect && memcmp(lk_problem_lambda(r->p), r->expect, (size_t)n * sizeof(double)) != 0)
			r->mismatches++;
	}
	return NULL;
}

static void test_two_solves_two_threads(void **state)
{
	(void)state;
	lk_problem *p[2] = {problem(LK_GEN_BOXSTACK, 12, 1), problem(LK_GEN_PACKING, 60, 7)};
	const char *specs[][2] = {
		{"pgs-sm", "newton-fischer"},
		{"amgs", "pgs:order=random"},
		{"gsp", "gsp"},
	};
	for (size_t s = 0; s < sizeof specs / sizeof specs[0]; ++s) {
		double *ref[2];
		for (int i = 0; i < 2; ++i) {
			solve_run r = {p[i], specs[s][i], 1, NULL, 0, LK_OK};
			solve_loop(&r);
			assert_int_equal(r.status, LK_OK);
			int n = lk_problem_row_count(p[i]);
			ref[i] = malloc((size_t)n * sizeof(double));
			memcpy(ref[i], lk_problem_lambda(p[i]), (size_t)n * sizeof(double));
		}
		solve_run r[2] = {{p[0], specs[s][0], 4, ref[0], 0, LK_OK}, {p[1], specs[s][1], 4, ref[1], 0, LK_OK}};
		pthread_t t[2];
		for (int i = 0; i < 2; ++i)
			assert_int_equal(pthread_create(&t[i], NULL, solve_loop, &r[i]), 0);
		for (int i = 0; i < 2; ++i)
			assert_int_equal(pthread_join(t[i], NULL), 0);
		for (int i = 0; i < 2; ++i) {
			assert_int_equal(r[i].status, LK_OK);
			if (r[i].mismatches)
				fail_msg("%s in two threads: %d of 4 solves differ from the solve alone", specs[s][i],
				         r[i].mismatches);
			free(ref[i]);
		}
	}
	lk_problem_destroy(p[0]);
	lk_problem_destroy(p[1]);
}


#ifdef LCPKIT_HAVE_ODE
/* The pose and velocity hash of `scene` after `steps` steps in ODE under `solver`, the world on a pool of
 * `pool` of ODE's threads (lk_sim_def.engine_threads; 0: self-threaded) and lcpkit's rows, reading and sweeps
 * on the solver's threads. */
static uint64_t ode_run(const char *scene, const char *solver, int pool, int steps, int *rows)
{
	world_run r = RUN(scene, LK_ENGINE_ODE, solver, 10);
	char err[256];
	if (lk_scene_create(r.scene, &r.sc, err, sizeof err) != LK_OK)
		fail_msg("%s: %s", r.scene, err);
	lk_sim_def def = {r.sc, r.engine, r.solver, r.iterations, 0, pool, 0};
	if (lk_sim_create(&def, &r.sim, err, sizeof err) != LK_OK)
		fail_msg("%s: %s", r.solver, err);
	lk_engine_step_stats st;
	for (int k = 0; k < steps; ++k)
		assert_int_equal(lk_sim_step(r.sim, &st), LK_OK);
	assert_int_equal(st.fallback, 0);
	*rows = st.rows;
	world_close(&r);
	return r.hash;
}

/* A world that grows past 4,096 rows, so that its rows are read, built and swept on two threads, ends bit for
 * bit the same on lcpkit's own threads and with the world on a pool of ODE's threads lent to all of that (and
 * stepping ODE's islands), run after run; one thread in the natural order ends elsewhere (the part order is
 * another order), which shows the threads were used. */
static void test_ode_rows_on_threads(void **state)
{
	(void)state;
	int rows = 0;
	const uint64_t own = ode_run("bigpool:n=1000", "pgs:threads=2", 0, 30, &rows);
	assert_true(rows >= 4096);
	assert_true(ode_run("bigpool:n=1000", "pgs:threads=2", 2, 30, &rows) == own);
	assert_true(ode_run("bigpool:n=1000", "pgs:threads=2", 2, 30, &rows) == own);
	assert_true(ode_run("bigpool:n=1000", "pgs:threads=2", 0, 30, &rows) == own);
	assert_true(ode_run("bigpool:n=1000", "pgs", 0, 30, &rows) != own); /* the part order is another order */
}
#endif

#ifdef LCPKIT_HAVE_BULLET
/* The problem of the first step of `scene` in Bullet under `solver`, its bodies made on the solver's threads
 * where it has them (the adapter's lk_problem_add_bodies), and the poses after `steps` steps. */
static lk_problem *bullet_first_problem(const char *scene, const char *solver, int steps, uint64_t *hash)
{
	world_run r = RUN(scene, LK_ENGINE_BULLET, solver, 10);
	world_open(&r);
	lk_sim_capture_next(r.sim);
	for (int k = 0; k < steps; ++k)
		assert_int_equal(lk_sim_step(r.sim, NULL), LK_OK);
	lk_problem *p = lk_sim_take_captured(r.sim);
	assert_non_null(p);
	world_close(&r);
	*hash = r.hash;
	return p;
}

/* A brick wall of more than 1,024 boxes in one island from the first step: the Bullet adapter makes its bodies
 * on two threads under pgs:threads=2, and the first step's problem is bit for bit the one of one thread (both
 * worlds start alike, so the first step's rows are the same rows); the threaded world ends the same run after
 * run. */
static void test_bullet_bodies_on_threads(void **state)
{
	(void)state;
	const char *wall = "wall:w=24,rows=48";
	uint64_t h1, h2, h3;
	lk_problem *one = bullet_first_problem(wall, "pgs", 1, &h1);
	lk_problem *two = bullet_first_problem(wall, "pgs:threads=2", 4, &h2);
	lk_problem *again = bullet_first_problem(wall, "pgs:threads=2", 4, &h3);
	const int n = lk_problem_row_count(one), nb = lk_problem_body_count(one);
	print_message("wall: %d bodies, %d rows in the first step\n", nb, n);
	assert_true(nb >= 1024);
	assert_int_equal(lk_problem_row_count(two), n);
	assert_int_equal(lk_problem_body_count(two), nb);
	for (int b = 0; b < nb; ++b)
		assert_memory_equal(lk_problem_body(one, b), lk_problem_body(two, b), sizeof(lk_body_def));
	double *d1 = malloc(2 * (size_t)n * sizeof(double)), *d2 = d1 + n;
	assert_non_null(d1);
	assert_int_equal(lk_problem_diagonal(one, d1), LK_OK);
	assert_int_equal(lk_problem_diagonal(two, d2), LK_OK);
	for (int i = 0; i < n; ++i) {
		lk_row_def a, b;
		assert_int_equal(lk_problem_get_row(one, i, &a), LK_OK);
		assert_int_equal(lk_problem_get_row(two, i, &b), LK_OK);
		if (memcmp(&a, &b, sizeof a) != 0 || memcmp(&d1[i], &d2[i], sizeof(double)) != 0)
			fail_msg("row %d differs between one and two threads", i);
	}
	assert_true(memcmp(lk_problem_lambda(one), lk_problem_lambda(two), (size_t)n * sizeof(double)) == 0);
	assert_true(h2 == h3);
	free(d1);
	lk_problem_destroy(one);
	lk_problem_destroy(two);
	lk_problem_destroy(again);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worlds_in_threads),
		cmocka_unit_test(test_two_solves_two_threads),
#ifdef LCPKIT_HAVE_ODE
		cmocka_unit_test(test_ode_rows_on_threads),
#endif
#ifdef LCPKIT_HAVE_BULLET
		cmocka_unit_test(test_bullet_bodies_on_threads),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

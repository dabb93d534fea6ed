/* liblcpkit_ode_preload.so: an unmodified, dynamically linked ODE program on an lcpkit solver.
 *
 *     LCPKIT_SOLVER=amgs LD_PRELOAD=/path/liblcpkit_ode_preload.so ./any_ode_program
 *
 * Interposes dWorldQuickStep (the step), dBodyCreate / dBodyDestroy (to know every body of a world: the
 * walk over the joint graph starts from them in creation order) and dWorldDestroy (to free the context).
 * LCPKIT_SOLVER unset or "ode": ODE's behaviour, untouched. An unknown solver or an ODE the plugin cannot
 * use: one line on stderr, and ODE's own stepper. LCPKIT_STATS=file.csv: one line of statistics per step. */
#define _GNU_SOURCE 1
#include "ode_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LK_PRELOAD_API __attribute__((visibility("default")))

typedef dBodyID (*body_create_fn)(dWorldID);
typedef void (*body_destroy_fn)(dBodyID);
typedef void (*world_destroy_fn)(dWorldID);

typedef struct world_entry {
	dWorldID world;
	lk_ode *ctx;
	int64_t steps;
} world_entry;

static struct {
	pthread_once_t once;
	pthread_mutex_t lock;
	int active;           /* an lcpkit solver was asked for and is usable */
	int stats_only;       /* LCPKIT_SOLVER unset/ode but LCPKIT_STATS set: ODE steps, we measure */
	char solver[160];
	FILE *stats;
	lk__ode_step_fn real_quickstep;
	body_create_fn real_body_create;
	body_destroy_fn real_body_destroy;
	world_destroy_fn real_world_destroy;
	world_entry **worlds; /* one allocation per world, so an entry stays where it is while others come and go */
	int nworlds, cap_worlds;
	int warned;           /* under lock */
} G = {PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER, 0, 0, "", NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0};

#define RESOLVE(dst, name)                                                                                   \
	do {                                                                                                 \
		void *s_ = dlsym(RTLD_NEXT, name);                                                           \
		memcpy(&(dst), &s_, sizeof(dst));                                                            \
	} while (0)

static void close_stats(void)
{
	if (G.stats) {
		fclose(G.stats);
		G.stats = NULL;
	}
}

static void init(void)
{
	RESOLVE(G.real_quickstep, "dWorldQuickStep");
	RESOLVE(G.real_body_create, "dBodyCreate");
	RESOLVE(G.real_body_destroy, "dBodyDestroy");
	RESOLVE(G.real_world_destroy, "dWorldDestroy");
	const char *solver = getenv("LCPKIT_SOLVER");
	const char *stats = getenv("LCPKIT_STATS");
	int lcpkit = solver && *solver && strcmp(solver, "ode") != 0;
	if (!lcpkit && !(stats && *stats))
		return;
	if (!G.real_quickstep || !G.real_body_create || !G.real_body_destroy || !G.real_world_destroy) {
		fprintf(stderr, "lcpkit: this program does not use ODE's dWorldQuickStep; LCPKIT_SOLVER ignored\n");
		return;
	}
	char err[300];
	const lk_engine_solver *own = lcpkit ? lk_engine_solver_find(solver) : NULL;
	if (lcpkit && !(own && own->engine == LK_ENGINE_ODE)) {
		lk_solver_config cfg;
		if (lk_config_parse(solver, &cfg, err, sizeof err) != LK_OK) {
			char names[128];
			fprintf(stderr, "lcpkit: unknown solver LCPKIT_SOLVER=%s: %s; ODE's own: %s; using ODE's own "
			                "stepper\n", solver, err, lk_engine_solver_list(LK_ENGINE_ODE, names, sizeof names));
			return;
		}
	}
	if (lk_ode_check(err, sizeof err) != LK_OK) {
		fprintf(stderr, "%s; using ODE's own stepper\n", err);
		return;
	}
	snprintf(G.solver, sizeof G.solver, "%s", lcpkit ? solver : "ode-quickstep");
	G.active = 1;
	G.stats_only = !lcpkit;
	if (stats && *stats) {
		G.stats = fopen(stats, "w");
		if (!G.stats) {
			fprintf(stderr, "lcpkit: cannot write LCPKIT_STATS=%s; no statistics\n", stats);
		} else {
			fprintf(G.stats, "world,step,solver,bodies,rows,normal,friction,joint,limit,motor,iterations,"
			                 "res_before,res_after,solve_s,convert_s,step_s,stop,fallback,fallback_total\n");
			atexit(close_stats);
		}
	}
}

/* Whether this is the first warning (only the first is printed). */
static int first_warning(void)
{
	pthread_mutex_lock(&G.lock);
	int first = G.warned++ == 0;
	pthread_mutex_unlock(&G.lock);
	return first;
}

/* The context of a world, made on first use; NULL when the plugin cannot serve it (then ODE steps). Called
 * under G.lock. The entry is its own allocation, so the pointer stays valid after the lock is released,
 * until dWorldDestroy of its world (a world is stepped by one thread at a time, and not while it is being
 * destroyed: ODE's own rules). */
static world_entry *entry_for(dWorldID w, int create)
{
	for (int i = 0; i < G.nworlds; ++i)
		if (G.worlds[i]->world == w)
			return G.worlds[i];
	if (!create)
		return NULL;
	if (G.nworlds == G.cap_worlds) {
		int c = G.cap_worlds ? 2 * G.cap_worlds : 4;
		world_entry **a = realloc(G.worlds, (size_t)c * sizeof *a);
		if (!a)
			return NULL;
		G.worlds = a;
		G.cap_worlds = c;
	}
	world_entry *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	lk_ode_def def = lk_ode_default_def();
	def.solver = G.solver;
	def.ode_residual = G.stats != NULL;
	char err[300];
	if (lk_ode_create(w, &def, &e->ctx, err, sizeof err) != LK_OK) {
		if (!G.warned++)
			fprintf(stderr, "%s; using ODE's own stepper\n", err);
		free(e);
		return NULL;
	}
	e->world = w;
	G.worlds[G.nworlds++] = e;
	return e;
}

LK_PRELOAD_API dBodyID dBodyCreate(dWorldID w)
{
	pthread_once(&G.once, init);
	dBodyID b = G.real_body_create ? G.real_body_create(w) : NULL;
	if (b && G.active) {
		pthread_mutex_lock(&G.lock);
		world_entry *e = entry_for(w, 1);
		if (e)
			lk_ode_add_body(e->ctx, b);
		pthread_mutex_unlock(&G.lock);
	}
	return b;
}

LK_PRELOAD_API void dBodyDestroy(dBodyID b)
{
	pthread_once(&G.once, init);
	if (b && G.active) {
		pthread_mutex_lock(&G.lock);
		world_entry *e = entry_for(dBodyGetWorld(b), 0);
		if (e)
			lk_ode_remove_body(e->ctx, b);
		pthread_mutex_unlock(&G.lock);
	}
	if (G.real_body_destroy)
		G.real_body_destroy(b);
}

LK_PRELOAD_API void dWorldDestroy(dWorldID w)
{
	pthread_once(&G.once, init);
	if (G.active) {
		pthread_mutex_lock(&G.lock);
		for (int i = 0; i < G.nworlds; ++i)
			if (G.worlds[i]->world == w) {
				lk_ode_destroy(G.worlds[i]->ctx);
				free(G.worlds[i]);
				G.worlds[i] = G.worlds[--G.nworlds];
				break;
			}
		pthread_mutex_unlock(&G.lock);
	}
	if (G.real_world_destroy)
		G.real_world_destroy(w);
}

static void write_stats(const world_entry *e)
{
	lk_engine_step_stats s;
	if (!G.stats || lk_ode_get_stats(e->ctx, &s) != LK_OK)
		return;
	fprintf(G.stats, "%p,%lld,%s,%d,%d,%d,%d,%d,%d,%d,%d,%.9g,%.9g,%.6g,%.6g,%.6g,%s,%d,%lld\n", (void *)e->world,
	        (long long)e->steps, G.solver, s.bodies, s.rows, s.rows_by_kind[LK_ROW_NORMAL],
	        s.rows_by_kind[LK_ROW_FRICTION], s.rows_by_kind[LK_ROW_JOINT], s.rows_by_kind[LK_ROW_LIMIT],
	        s.rows_by_kind[LK_ROW_MOTOR], s.iterations, s.res_before, s.res_after, s.solve_seconds,
	        s.convert_seconds, s.step_seconds, lk_stop_reason_name(s.stop_reason), s.fallback,
	        (long long)s.fallback_total);
}

LK_PRELOAD_API int dWorldQuickStep(dWorldID w, dReal stepsize)
{
	pthread_once(&G.once, init);
	if (!G.real_quickstep)
		return 0;
	if (!G.active)
		return G.real_quickstep(w, stepsize);
	pthread_mutex_lock(&G.lock);
	world_entry *e = entry_for(w, 1);
	pthread_mutex_unlock(&G.lock);
	if (!e)
		return G.real_quickstep(w, stepsize);
	lk_status st = lk_ode_world_step(e->ctx, stepsize);
	if (st == LK_ERR_INVALID_ARGUMENT)
		return G.real_quickstep(w, stepsize);
	if (st != LK_OK && first_warning())
		fprintf(stderr, "lcpkit: %s\n", lk_ode_error(e->ctx));
	write_stats(e);
	e->steps++;
	return 1;
}

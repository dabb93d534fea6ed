/* liblcpkit_ode_preload.so: an unmodified, dynamically linked ODE program on an lcpkit solver.
 *
 *     LCPKIT_SOLVER=amgs LD_PRELOAD=/path/liblcpkit_ode_preload.so ./any_ode_program
 *
 * Interposes dWorldQuickStep and dWorldStep (the steps), dBodyCreate / dBodyDestroy (to know every body of a
 * world: the walk over the joint graph starts from them in creation order) and dWorldDestroy (to free the
 * context). LCPKIT_SOLVER unset or empty: lcpkit's default, auto; "ode": ODE's behaviour, untouched (with
 * LCPKIT_STATS, measured only). An unknown solver or an ODE the plugin
 * cannot use: one line on stderr, and ODE's own stepper. LCPKIT_SWAP=quickstep,step (the default): which of
 * ODE's steppers are replaced. LCPKIT_STATS=file.csv: one line of statistics per step. At the first
 * replaced step one line on stderr says what runs instead (LCPKIT_QUIET=1: not), at the first fallback to
 * ODE's stepper one line says why, and at exit one line counts the fallbacks. */
#define _GNU_SOURCE 1
#include "ode_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LK_PRELOAD_API __attribute__((visibility("default")))

typedef dBodyID (*body_create_fn)(dWorldID);
typedef void (*body_destroy_fn)(dBodyID);
typedef void (*world_destroy_fn)(dWorldID);

/* ODE's two steppers, as LCPKIT_SWAP names them. */
enum { SWAP_QUICKSTEP = 1, SWAP_STEP = 2 };

typedef struct world_entry {
	dWorldID world;
	lk_ode *ctx;
	int64_t steps;
	int stepper;          /* SWAP_*: the stepper the program called last (0 before the first step) */
	const char *solver;   /* the solver column of the statistics */
} world_entry;

static struct {
	pthread_once_t once;
	pthread_mutex_t lock;
	int active;           /* an lcpkit solver was asked for and is usable */
	int stats_only;       /* LCPKIT_SOLVER=ode and LCPKIT_STATS set: ODE steps, we measure */
	int swap;             /* SWAP_* of the steppers replaced */
	int quiet;            /* LCPKIT_QUIET=1: no line about the replacement */
	char solver[160];
	FILE *stats;
	lk__ode_step_fn real_quickstep;
	lk__ode_step_fn real_step;
	body_create_fn real_body_create;
	body_destroy_fn real_body_destroy;
	world_destroy_fn real_world_destroy;
	world_entry **worlds; /* one allocation per world, so an entry stays where it is while others come and go */
	int nworlds, cap_worlds;
	/* under lock */
	int warned;           /* a failed step was reported */
	int announced;        /* the replacement was reported */
	int64_t swapped;      /* steps run by the plugin */
	int64_t fallbacks;    /* ... of which ODE's own stepper made */
} G = {PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, "", NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0,
       0, 0, 0, 0};

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

static void report_fallbacks(void)
{
	pthread_mutex_lock(&G.lock);
	if (G.fallbacks && !G.quiet)
		fprintf(stderr, "lcpkit: %lld of %lld steps fell back to ODE's own stepper\n", (long long)G.fallbacks,
		        (long long)G.swapped);
	pthread_mutex_unlock(&G.lock);
}

/* LCPKIT_SWAP: a comma-separated list of "quickstep" and "step"; unset means both. -1 for anything else. */
static int parse_swap(const char *v)
{
	if (!v)
		return SWAP_QUICKSTEP | SWAP_STEP;
	int swap = 0;
	while (*v) {
		size_t n = strcspn(v, ",");
		if (n == 9 && !strncmp(v, "quickstep", n))
			swap |= SWAP_QUICKSTEP;
		else if (n == 4 && !strncmp(v, "step", n))
			swap |= SWAP_STEP;
		else
			return -1;
		v += n + (v[n] == ',');
	}
	return swap;
}

/* One line on stderr, unless LCPKIT_QUIET=1. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	if (G.quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void init(void)
{
	RESOLVE(G.real_quickstep, "dWorldQuickStep");
	RESOLVE(G.real_step, "dWorldStep");
	RESOLVE(G.real_body_create, "dBodyCreate");
	RESOLVE(G.real_body_destroy, "dBodyDestroy");
	RESOLVE(G.real_world_destroy, "dWorldDestroy");
	const char *solver = getenv("LCPKIT_SOLVER");
	const char *stats = getenv("LCPKIT_STATS");
	/* preloading the library is the swap: without a solver named, lcpkit's default */
	if (!solver || !*solver)
		solver = "auto";
	int lcpkit = strcmp(solver, "ode") != 0;
	if (!lcpkit && !(stats && *stats))
		return;
	/* lcpkit's one switch for what it says on stderr, the adapters' and the command's alike */
	const char *quiet = getenv("LCPKIT_QUIET");
	G.quiet = quiet && !strcmp(quiet, "1");
	if (!G.real_quickstep || !G.real_step || !G.real_body_create || !G.real_body_destroy ||
	    !G.real_world_destroy) {
		say("lcpkit: this program does not use ODE's dWorldQuickStep and dWorldStep; LCPKIT_SOLVER ignored");
		return;
	}
	const char *swap = getenv("LCPKIT_SWAP");
	G.swap = parse_swap(swap);
	if (G.swap < 0) {
		say("lcpkit: LCPKIT_SWAP=%s: expected a comma-separated list of quickstep and step; using ODE's own "
		    "steppers", swap);
		return;
	}
	char err[300];
	const lk_engine_solver *own = lcpkit ? lk_engine_solver_find(solver) : NULL;
	if (lcpkit && !(own && own->engine == LK_ENGINE_ODE)) {
		lk_solver_config cfg;
		if (lk_config_parse(solver, &cfg, err, sizeof err) != LK_OK) {
			char names[128];
			say("lcpkit: unknown solver LCPKIT_SOLVER=%s: %s; ODE's own: %s; using ODE's own stepper", solver, err,
			    lk_engine_solver_list(LK_ENGINE_ODE, names, sizeof names));
			return;
		}
	}
	if (lk_ode_check(err, sizeof err) != LK_OK) {
		say("%s; using ODE's own stepper", err);
		return;
	}
	snprintf(G.solver, sizeof G.solver, "%s", lcpkit ? solver : "");
	/* LCPKIT_THREADS=N: the sweeps of an lcpkit solver on N threads, unless LCPKIT_SOLVER says threads= */
	const char *threads = getenv("LCPKIT_THREADS");
	if (lcpkit && !own && threads && *threads) {
		char with[sizeof G.solver];
		if (lk_config_spec_with(G.solver, "threads", threads, with, sizeof with) == LK_OK)
			snprintf(G.solver, sizeof G.solver, "%s", with);
		else
			say("lcpkit: LCPKIT_THREADS=%s: expected a thread count from 1 to 64; one thread", threads);
	}
	G.active = 1;
	G.stats_only = !lcpkit;
	atexit(report_fallbacks);
	if (stats && *stats) {
		G.stats = fopen(stats, "w");
		if (!G.stats) {
			say("lcpkit: cannot write LCPKIT_STATS=%s; no statistics", stats);
		} else {
			fprintf(G.stats, "world,step,solver,bodies,rows,normal,friction,joint,limit,motor,iterations,"
			                 "res_initial,res_final,solve_s,convert_s,step_s,stop,fallback,fallback_total,"
			                 "rows_left_out,bodies_frozen\n");
			atexit(close_stats);
		}
	}
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
	def.solver = G.stats_only ? "ode-quickstep" : G.solver;
	def.ode_residual = G.stats != NULL;
	def.quiet = G.quiet;
	def.whole_world = 1; /* every body of the world is registered as it is created (dBodyCreate below) */
	char err[300];
	if (lk_ode_create(w, &def, &e->ctx, err, sizeof err) != LK_OK) {
		if (!G.warned++)
			say("%s; using ODE's own stepper", err);
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

/* A text field of the statistics CSV: as it is, or quoted (quotes doubled, RFC 4180) where it holds a comma, a
 * quote or a line break, as a spec with several options does ("pgs:coarse=2,tol=1e-4"). */
static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; ++s) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void write_stats(const world_entry *e)
{
	lk_engine_step_stats s;
	if (!G.stats || lk_ode_get_stats(e->ctx, &s) != LK_OK)
		return;
	fprintf(G.stats, "%p,%lld,", (void *)e->world, (long long)e->steps);
	csv_field(G.stats, e->solver);
	fprintf(G.stats, ",%d,%d,%d,%d,%d,%d,%d,%d,%.9g,%.9g,%.6g,%.6g,%.6g,%s,%d,%lld,%d,%d\n", s.bodies, s.rows,
	        s.rows_by_kind[LK_ROW_NORMAL], s.rows_by_kind[LK_ROW_FRICTION], s.rows_by_kind[LK_ROW_JOINT],
	        s.rows_by_kind[LK_ROW_LIMIT], s.rows_by_kind[LK_ROW_MOTOR], s.iterations, s.res_initial, s.res_final,
	        s.solve_seconds, s.convert_seconds, s.step_seconds, lk_stop_reason_name(s.stop_reason), s.fallback,
	        (long long)s.fallback_total, s.rows_left_out, s.bodies_frozen);
}

static const char *stepper_function(int stepper)
{
	return stepper == SWAP_STEP ? "dWorldStep" : "dWorldQuickStep";
}

/* The stepper the program called decides what ODE's own stepper is: the one measured when only statistics
 * are on, the one that makes a step lcpkit's solver cannot. */
static void follow_stepper(world_entry *e, int stepper)
{
	if (e->stepper == stepper)
		return;
	e->stepper = stepper;
	/* ODE's own solver names, as the engine table spells them */
	const char *own = stepper == SWAP_STEP ? "ode-step" : "ode-quickstep";
	if (G.stats_only)
		lk_ode_set_solver(e->ctx, own);
	lk_ode_set_fallback(e->ctx, stepper == SWAP_STEP ? LK_ODE_STEP : LK_ODE_QUICKSTEP);
	e->solver = G.stats_only ? own : G.solver;
}

/* One line at the first step that something else than the program's stepper makes: what, and with which
 * budget. Called under G.lock. */
static void announce(const world_entry *e, int stepper)
{
	lk_ode_stepper s = lk_ode_get_stepper(e->ctx);
	if (G.announced || G.quiet || s == (stepper == SWAP_STEP ? LK_ODE_STEP : LK_ODE_QUICKSTEP))
		return;
	G.announced = 1;
	if (s != LK_ODE_LCPKIT) {
		fprintf(stderr, "lcpkit: %s replaced by ODE's %s (LCPKIT_SOLVER=%s); LCPKIT_QUIET=1 silences this\n",
		        stepper_function(stepper), s == LK_ODE_STEP ? "dWorldStep" : "dWorldQuickStep", G.solver);
		return;
	}
	lk_solver_config c = lk_ode_get_config(e->ctx);
	char tol[64] = "";
	if (c.tol_abs > 0)
		snprintf(tol, sizeof tol, ", or merit below %g", c.tol_abs);
	char budget[96];
	if (c.budget > 0)
		snprintf(budget, sizeof budget, "%s of %g sweep-equivalents a step (%s)",
		         c.method == LK_METHOD_AUTO ? "a mean" : "a budget", c.budget,
		         lk_config_spec_sets(G.solver, "budget") ? "LCPKIT_SOLVER's budget"
		                                                  : "the world's quickstep iterations");
	else
		snprintf(budget, sizeof budget, "at most %d iterations a step (LCPKIT_SOLVER's iters)", c.max_iterations);
	fprintf(stderr, "lcpkit: %s replaced by lcpkit's %s, %s%s; LCPKIT_QUIET=1 silences this\n",
	        stepper_function(stepper), G.solver, budget, tol);
}

/* The step of either of ODE's steppers, for the program's call of `stepper`. */
static int step_world(dWorldID w, dReal stepsize, int stepper)
{
	pthread_once(&G.once, init);
	lk__ode_step_fn real = stepper == SWAP_STEP ? G.real_step : G.real_quickstep;
	if (!real)
		return 0;
	if (!G.active || !(G.swap & stepper))
		return real(w, stepsize);
	pthread_mutex_lock(&G.lock);
	world_entry *e = entry_for(w, 1);
	if (e) {
		follow_stepper(e, stepper);
		announce(e, stepper);
	}
	pthread_mutex_unlock(&G.lock);
	if (!e)
		return real(w, stepsize);
	lk_status st = lk_ode_world_step(e->ctx, stepsize);
	if (st == LK_ERR_INVALID_ARGUMENT)
		return real(w, stepsize);
	lk_engine_step_stats s;
	lk_ode_get_stats(e->ctx, &s);
	pthread_mutex_lock(&G.lock);
	G.swapped++;
	/* the first fallback, rows left out, a frozen body: each said once by the world's context itself */
	G.fallbacks += s.fallback;
	if (st != LK_OK && !G.warned++)
		say("lcpkit: %s", lk_ode_error(e->ctx));
	pthread_mutex_unlock(&G.lock);
	write_stats(e);
	e->steps++;
	return st == LK_OK;
}

LK_PRELOAD_API int dWorldQuickStep(dWorldID w, dReal stepsize)
{
	return step_world(w, stepsize, SWAP_QUICKSTEP);
}

LK_PRELOAD_API int dWorldStep(dWorldID w, dReal stepsize)
{
	return step_world(w, stepsize, SWAP_STEP);
}

/* lcpkit: what both engine adapters report per step, so that tools compare ODE and Bullet in one table. */
#ifndef LCPKIT_ENGINE_H
#define LCPKIT_ENGINE_H

#include "lcpkit/lcpkit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The engines lcpkit plugs into. */
typedef enum lk_engine { LK_ENGINE_ODE = 0, LK_ENGINE_BULLET, LK_ENGINE_COUNT } lk_engine;

/* One of an engine's own solvers, kept selectable next to lcpkit's for A/B runs. */
typedef struct lk_engine_solver {
	const char *name;        /* "ode-quickstep", "bullet-si", ... */
	lk_engine engine;
	const char *description; /* one line, for help texts and the viewer */
} lk_engine_solver;

/* The table of every engine's own solvers (the one place their names are written), ended by a NULL name;
 * each engine's first entry is its default. Static storage. */
LK_API const lk_engine_solver *lk_engine_solvers(void);
/* The entry named `name`, or NULL if it is no engine's own solver. A solver that takes options is found with
 * them too ("bullet-si-mt:threads=2" finds "bullet-si-mt"); its engine's adapter reads them. */
LK_API const lk_engine_solver *lk_engine_solver_find(const char *name);
/* "ode-quickstep, ode-step" for one engine, or every engine's with LK_ENGINE_COUNT, into buf (truncated to
 * size); returns buf. */
LK_API const char *lk_engine_solver_list(lk_engine engine, char *buf, size_t size);

/* Per-step statistics of an adapter, for lcpkit's solvers and for the engine's own ones alike. */
typedef struct lk_engine_step_stats {
	int bodies;
	int rows;                  /* all rows the step solved */
	int rows_by_kind[LK_ROW_KIND_COUNT];
	int iterations;            /* solver iterations (the engine's own for its solvers) */
	double work;               /* sweep-equivalents spent (lk_stats.work; an engine's own iterative solver:
	                            * its iterations, each one sweep; a direct solver: 0) */
	double res_initial;        /* RES of the warm start (or zero start) on the extracted rows */
	double res_final;          /* RES of the impulses the solver produced, on the same rows */
	double solve_seconds;      /* the solver proper */
	double convert_seconds;    /* building the lcpkit problem from the engine's rows and writing back */
	double step_seconds;       /* the whole step (collision, solve, integration) */
	double phase_seconds;      /* the engine's constraint phase, what swapping the solver changes: in ODE the
	                            * stepper call (rows built, solved, written back, bodies integrated); in Bullet
	                            * solveConstraints (its row setup, the solve, the write-back, its finish) */
	lk_stop_reason stop_reason;
	int fallback;              /* 1: a guard tripped and the engine's own solver produced this step */
	int64_t fallback_total;    /* fallbacks since the world was created */
	int rows_left_out;         /* rows the step left out of the solve, which it cannot solve: J not finite or
	                            * zero (a contact with a zero normal), a target not finite; not in `rows` */
	int bodies_frozen;         /* bodies the step held where they were, their state not finite, with their
	                            * rows left out too (not in `bodies`) */
	int64_t notes_total;       /* notes the adapter has said (once each kind, on stderr unless LCPKIT_QUIET=1):
	                            * fallbacks, rows left out, frozen bodies, settings not honoured, a misread spec */
} lk_engine_step_stats;

#ifdef __cplusplus
}
#endif

#endif

/* lcpkit: what both engine adapters report per step, so that tools compare ODE and Bullet in one table. */
#ifndef LCPKIT_ENGINE_H
#define LCPKIT_ENGINE_H

#include "lcpkit/lcpkit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-step statistics of an adapter, for lcpkit's solvers and for the engine's own ones alike. */
typedef struct lk_engine_step_stats {
	int bodies;
	int rows;                  /* all rows the step solved */
	int rows_by_kind[LK_ROW_KIND_COUNT];
	int iterations;            /* solver iterations (the engine's own for its solvers) */
	double res_before;         /* RES of the warm start (or zero start) on the extracted rows */
	double res_after;          /* RES of the impulses the solver produced, on the same rows */
	double solve_seconds;      /* the solver proper */
	double convert_seconds;    /* building the lcpkit problem from the engine's rows and writing back */
	double step_seconds;       /* the whole step (collision, solve, integration) */
	lk_stop_reason stop_reason;
	int fallback;              /* 1: a guard tripped and the engine's own solver produced this step */
	int64_t fallback_total;    /* fallbacks since the world was created */
} lk_engine_step_stats;

#ifdef __cplusplus
}
#endif

#endif

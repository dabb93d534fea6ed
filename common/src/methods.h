/* The methods' entry points, called by the driver (solve.c) and by nothing else but tests. Each iterates
 * until the monitor says stop, leaves the reason in c->stop and returns LK_OK, or an error (LK_ERR_NO_MEMORY
 * from the arena) with a message set through lk__fail. The driver has checked the configuration, the problem
 * and (for every method that sweeps) the diagonal before the call. */
#ifndef LCPKIT_METHODS_H
#define LCPKIT_METHODS_H

#include "context.h"

lk_status lk__solve_pgs(lk__ctx *c);          /* PGS and PSOR (and their orderings), pgs.c */
lk_status lk__solve_staggered(lk__ctx *c);    /* ESP and GSP schedules of PGS, stagger.c */
/* PGS and PSOR: in an order (lk__solve_pgs) or in the schedules of sets of Poulsen, Niebe & Erleben 2010 (ESP,
 * GSP: lk__solve_staggered), stagger.c */
lk_status lk__solve_gauss_seidel(lk__ctx *c);
lk_status lk__solve_amgs(lk__ctx *c);         /* Methods 3.1 / 3.2 and AMSOR, amgs.c */
lk_status lk__solve_amgs_dense(lk__ctx *c);   /* Method 2.2, amgs.c */
lk_status lk__solve_pgs_sm(lk__ctx *c);       /* pgs_sm.c */
lk_status lk__solve_newton(lk__ctx *c);       /* minimum-map and Fischer, newton.c */
lk_status lk__solve_newton_cone(lk__ctx *c);  /* the minimum map's Newton on Coulomb's cone, newton_cone.c */
lk_status lk__solve_nncg(lk__ctx *c);         /* nonsmooth nonlinear conjugate gradient, nncg.c */
lk_status lk__solve_apgd(lk__ctx *c);         /* accelerated projected gradient, apgd.c */
lk_status lk__solve_mprgp(lk__ctx *c);        /* proportioning with reduced gradient projections, mprgp.c */
lk_status lk__solve_auto(lk__ctx *c);         /* the adapters' default, auto.c */
lk_status lk__solve_ipm(lk__ctx *c);          /* interior point on the friction cones, ipm.c */

/* The staggered schedules record each sweep of a set, for tests: the set (0 normal rows, 1 friction rows)
 * and the two sets' error measures the choice was made from (GSP; 0 for ESP). */
typedef struct lk__stagger_step {
	int set;
	double err[2];
} lk__stagger_step;
typedef struct lk__stagger_trace {
	lk__stagger_step *steps;
	int capacity;
	int count;            /* sweeps done (may exceed capacity; only the first capacity are kept) */
} lk__stagger_trace;
/* lk__solve_staggered with an optional trace. */
lk_status lk__staggered_run(lk__ctx *c, lk__stagger_trace *trace);

#endif

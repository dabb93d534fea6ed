/* The Gauss-Seidel sweep layer (sweep.c): the one sweep skeleton that PGS, PSOR, the staggered schedules, AMGS
 * and AMSOR, the PGS phase of PGS-SM and the PGS warm start of the Newton methods share, and the loop that runs
 * sweeps until the monitor says stop. It calls the kernels, the orderings and the monitor; never a method or
 * the driver. */
#ifndef LCPKIT_SWEEP_H
#define LCPKIT_SWEEP_H

#include "context.h"

/* One projected Gauss-Seidel / SOR sweep over rows perm[0..count) (perm NULL: 0..count-1) with
 * relaxation w_relax (Erleben 2013 sec. 5.2-5.3). Returns max |change of lambda| (NaN if a change was not
 * finite). */
double lk__pgs_sweep(lk__ctx *c, const int *perm, int count, double w_relax);
/* What a sweep can add up on the way, for a stopping rule that costs no evaluation of w (auto.c): the largest
 * velocity correction |A_ii dlambda_i| of a row, and the sum of q_i^2 over the nq rows that are no friction rows
 * (a sliding contact's friction rows have the sliding speed for q, which they do not remove). */
typedef struct lk__sweep_sums {
	int want_scale; /* in: 0 leaves q2 and nq 0 (the scale does not change from sweep to sweep) */
	double dvmax, q2, nq;
} lk__sweep_sums;
/* One projected Gauss-Seidel sweep, relaxed by w_relax (1: none), over perm (NULL: natural order; the colour
 * order on threads as lk__pgs_sweep) with the sums of that sweep; returns max |change of lambda|. */
double lk__pgs_sweep_sums(lk__ctx *c, const int *perm, double w_relax, lk__sweep_sums *sums);
/* The production sweep of the row form over the rows of one set of a staggered schedule (ESP, GSP): friction
 * rows read their bounds from lambda as in lk__pgs_sweep (the schedule does not touch the normal rows while it
 * sweeps the friction set), one whose box is {0} gets 0 and is skipped when its lambda is 0 already; err (or
 * NULL) receives 1/2 sum H_i^2 over the set (Poulsen et al. eq. 22), each H_i just before row i's update. */
double lk__pgs_sweep_set(lk__ctx *c, const int *rows, int count, double w_relax, double *err);
/* The same sweep on the plain scalar reference path (lk__row_w_ref, a division by A_ii, the change applied
 * only when non-zero): the definition the production sweep is tested against. */
double lk__pgs_sweep_ref(lk__ctx *c, const int *perm, int count, double w_relax);
/* One projected Gauss-Seidel / SOR sweep in the natural order with Coulomb's cone for friction: each contact's
 * two friction rows are updated one after the other without bounds, then projected together onto the disc of
 * radius mu lambda_n (the sequential-then-radial form of nonsmooth block Gauss-Seidel, Jean & Moreau's NSGS
 * with a one-sweep local solve); every other row as lk__pgs_sweep. With local=1 each contact (its pair and its
 * normal row, wherever that lies) is solved whole at its pair's place instead (cone_local.h), Jean's NSGS itself.
 * Plain kernels (lk__row_w, lk__row_apply). Returns max |change of lambda|. */
double lk__pgs_sweep_cone(lk__ctx *c, double w_relax);
/* One sweep of the modulus iteration of AMGS/AMSOR in impulse units (amgs.c, (M3)):
 * y_i <- y_i + h_i (lambda_i - y_i) - g_i w_i, lambda_i <- mid(lo_i, y_i, hi_i), with gh[2 i] = g_i and
 * gh[2 i + 1] = h_i; over perm[0..n) (NULL: natural order). Returns max |change of lambda|. */
double lk__modulus_sweep(lk__ctx *c, const double *gh, double *y, const int *perm);

/* The sweep order of the configured ordering, from the arena: NULL for the natural order. A staggered
 * schedule (ESP, GSP) is refused with LK_ERR_UNSUPPORTED unless staggered_ok, in which case ESP's fixed
 * order (normal rows, then friction rows) is used. */
lk_status lk__sweep_order(lk__ctx *c, int staggered_ok, int **perm_out);
/* The natural order's latency order (ordering.c) for a solve that plans `sweeps` sweeps, from the problem's
 * arena, or NULL where it is not made (another order, latency=0, the matrix form, too few or too many rows,
 * too few sweeps under the limit and the budget, a chain): then the natural order as it is. */
int *lk__latency_perm(lk__ctx *c, double sweeps);

/* One sweep of a method over perm (NULL: natural order); returns max |change of lambda|. */
typedef double (*lk__sweep_fn)(lk__ctx *c, const int *perm, void *user);
/* The Gauss-Seidel loop: reshuffle perm before each sweep for the random order, sweep, count the iteration,
 * ask the monitor; until it says stop (the reason is left in c->stop). */
void lk__sweep_until_stop(lk__ctx *c, int *perm, lk__sweep_fn sweep, void *user);

#endif

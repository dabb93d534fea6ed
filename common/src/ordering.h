/* Sweep orders of the Gauss-Seidel family (ordering.c): Poulsen, Abel & Erleben 2010, section 5. */
#ifndef LCPKIT_ORDERING_H
#define LCPKIT_ORDERING_H

#include "context.h"

/* Builds the row order of a sweep for the configured ordering (identity for natural and random; for esp
 * the normal rows then the friction rows; gsp is no fixed order and fails with LK_ERR_UNSUPPORTED, as does
 * a cp order on the matrix form). perm has n entries. */
lk_status lk__order_build(lk__ctx *c, int *perm);
/* The latency order of the natural order (ordering.c): the rows reordered so that consecutive rows rarely
 * share a body, each body's rows kept in their natural order, so that a sweep in it gives the natural
 * order's iterate to the bit. 1 with perm (n entries) filled, 0 where there is none (matrix form, no scratch
 * memory, rows that nearly all keep their place): then the natural order itself. Scratch from p's arena. */
int lk__latency_order(lk_problem *p, int *perm);
/* The natural order's sweeps use it from this many rows and planned sweeps on, and up to this many rows: a
 * larger problem's records (256 bytes a row) no longer stay in the level-2 cache, its sweep waits on memory
 * rather than on the chain from row to row, and the order's costs (its making, the permutation's indexing
 * and a cursor made again at every row) are all that is left (ODE's 3,000-box pile, 15,402 rows: 1.16x the
 * natural order's time; Bullet's 32 ragdolls, 2,519 rows: 0.82x; docs/benchmarks.md). */
#define LK_LATENCY_MIN_ROWS 32
#define LK_LATENCY_MIN_SWEEPS 3
#define LK_LATENCY_MAX_ROWS 8192
/* The orders swept colour by colour on the problem's threads (parallel.h): the colour and the part order. */
static inline int lk__order_coloured(lk_order order)
{
	return order == LK_ORDER_COLOUR || order == LK_ORDER_PART;
}

/* The parts of the part order: one per thread, at least two (0 for every other order). */
static inline int lk__order_parts(const lk_solver_config *cfg)
{
	return cfg->order == LK_ORDER_PART ? (cfg->threads > 2 ? cfg->threads : 2) : 0;
}
/* The same without a solve context (scratch from p's arena), for tests and tools. */
lk_status lk__order_permutation(lk_problem *p, const lk_solver_config *cfg, int *perm);

#endif

/* Sweep orders of the Gauss-Seidel family (ordering.c): Poulsen, Abel & Erleben 2010, section 5. */
#ifndef LCPKIT_ORDERING_H
#define LCPKIT_ORDERING_H

#include "context.h"

/* Builds the row order of a sweep for the configured ordering (identity for natural and random; for esp
 * the normal rows then the friction rows; gsp is no fixed order and fails with LK_ERR_UNSUPPORTED, as does
 * a cp order on the matrix form). perm has n entries. */
lk_status lk__order_build(lk__ctx *c, int *perm);
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

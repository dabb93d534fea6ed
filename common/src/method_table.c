/* The table of methods: each method's entry point and the traits the driver (solve.c) and the monitor read
 * instead of lists of methods of their own. A new method is its file, its value in lk_method, its name in
 * config.c and one row here. */
#include "method_table.h"
#include "methods.h"

/* PGS and PSOR sweep in an order, or in the schedules of sets of Poulsen, Niebe & Erleben 2010 (ESP, GSP) */
static lk_status solve_gauss_seidel(lk__ctx *c)
{
	if (c->cfg->order == LK_ORDER_ESP || c->cfg->order == LK_ORDER_GSP)
		return lk__solve_staggered(c);
	return lk__solve_pgs(c);
}

/* PGS-SM returns the best iterate it has seen unless asked for its last (Silcowitz et al. sec. 4.3) */
static int pgs_sm_keeps_last(const lk_solver_config *cfg)
{
	return !cfg->pgs_sm.best_iterate;
}

#define GS (LK__M_GAUSS_SEIDEL | LK__M_PLAIN_SWEEPS)
#define NEWTON (LK__M_ZERO_DIAGONAL_MATRIX | LK__M_WHOLE_PRODUCTS | LK__M_FULL_MERITS)

static const lk__method_desc methods[LK_METHOD_COUNT] = {
	[LK_METHOD_PGS] = {LK_METHOD_PGS, solve_gauss_seidel, GS, NULL},
	[LK_METHOD_PSOR] = {LK_METHOD_PSOR, solve_gauss_seidel, GS, NULL},
	[LK_METHOD_AMGS] = {LK_METHOD_AMGS, lk__solve_amgs, 0, NULL},
	[LK_METHOD_AMGS_DENSE] = {LK_METHOD_AMGS_DENSE, lk__solve_amgs_dense, 0, NULL},
	[LK_METHOD_AMSOR] = {LK_METHOD_AMSOR, lk__solve_amgs, 0, NULL},
	[LK_METHOD_PGS_SM] = {LK_METHOD_PGS_SM, lk__solve_pgs_sm, LK__M_WHOLE_PRODUCTS | LK__M_FULL_MERITS,
	                      pgs_sm_keeps_last},
	[LK_METHOD_NEWTON_MINMAP] = {LK_METHOD_NEWTON_MINMAP, lk__solve_newton, NEWTON, NULL},
	[LK_METHOD_NEWTON_FISCHER] = {LK_METHOD_NEWTON_FISCHER, lk__solve_newton, NEWTON, NULL},
	[LK_METHOD_NNCG] = {LK_METHOD_NNCG, lk__solve_nncg, 0, NULL},
	[LK_METHOD_APGD] = {LK_METHOD_APGD, lk__solve_apgd, LK__M_WHOLE_PRODUCTS, NULL},
	[LK_METHOD_MPRGP] = {LK_METHOD_MPRGP, lk__solve_mprgp, LK__M_WHOLE_PRODUCTS, NULL},
	[LK_METHOD_AUTO] = {LK_METHOD_AUTO, lk__solve_auto, LK__M_GAUSS_SEIDEL, NULL},
};

const lk__method_desc *lk__method_desc_of(lk_method m)
{
	return (unsigned)m < LK_METHOD_COUNT && methods[m].solve ? &methods[m] : NULL;
}

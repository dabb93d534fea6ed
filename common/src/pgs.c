/* Projected Gauss-Seidel and projected SOR for the boxed LCP with friction bounds (Erleben 2013 sec. 5.2-5.3):
 * the sweep itself is the sweep layer's (sweep.c); PGS is PSOR with w = 1. */
#include "methods.h"

#include "sweep.h"

static double pgs_sweep(lk__ctx *c, const int *perm, void *user)
{
	(void)user;
	return lk__pgs_sweep(c, perm, c->n, c->cfg->sor_w);
}

lk_status lk__solve_pgs(lk__ctx *c)
{
	/* "pgs:w=1.3" is the over-relaxed sweep ODE's quickstep uses */
	int *perm = NULL;
	lk_status st = lk__sweep_order(c, 1, &perm);
	if (st != LK_OK)
		return st;
	lk__sweep_until_stop(c, perm, pgs_sweep, NULL);
	return LK_OK;
}

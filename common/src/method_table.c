/* The table of methods: each method's name, entry point and the traits the driver (solve.c), the monitor and the
 * spec parser (config.c) read instead of lists of methods of their own. A new method of the library is its file,
 * its value in lk_method and one row here; one added at run time (lk__method_add) is its row alone. The table
 * calls nothing: it only points at the entry points. */
#include "method_table.h"
#include "methods.h"

#include <string.h>

/* PGS-SM returns the best iterate it has seen unless asked for its last (Silcowitz et al. sec. 4.3) */
static int pgs_sm_keeps_last(const lk_solver_config *cfg)
{
	return !cfg->pgs_sm.best_iterate;
}

#define GS (LK__M_GAUSS_SEIDEL | LK__M_PLAIN_SWEEPS)
#define NEWTON (LK__M_ZERO_DIAGONAL_MATRIX | LK__M_WHOLE_PRODUCTS)

static const lk__method_desc methods[LK_METHOD_COUNT] = {
	[LK_METHOD_PGS] = {LK_METHOD_PGS, "pgs", lk__solve_gauss_seidel, GS, NULL},
	[LK_METHOD_PSOR] = {LK_METHOD_PSOR, "psor", lk__solve_gauss_seidel, GS, NULL},
	[LK_METHOD_AMGS] = {LK_METHOD_AMGS, "amgs", lk__solve_amgs, 0, NULL},
	[LK_METHOD_AMGS_DENSE] = {LK_METHOD_AMGS_DENSE, "amgs-dense", lk__solve_amgs_dense, 0, NULL},
	[LK_METHOD_AMSOR] = {LK_METHOD_AMSOR, "amsor", lk__solve_amgs, 0, NULL},
	[LK_METHOD_PGS_SM] = {LK_METHOD_PGS_SM, "pgs-sm", lk__solve_pgs_sm, LK__M_WHOLE_PRODUCTS,
	                      pgs_sm_keeps_last},
	[LK_METHOD_NEWTON_MINMAP] = {LK_METHOD_NEWTON_MINMAP, "newton-minmap", lk__solve_newton, NEWTON, NULL},
	[LK_METHOD_NEWTON_FISCHER] = {LK_METHOD_NEWTON_FISCHER, "newton-fischer", lk__solve_newton, NEWTON, NULL},
	[LK_METHOD_NNCG] = {LK_METHOD_NNCG, "nncg", lk__solve_nncg, 0, NULL},
	[LK_METHOD_APGD] = {LK_METHOD_APGD, "apgd", lk__solve_apgd, LK__M_WHOLE_PRODUCTS, NULL},
	[LK_METHOD_MPRGP] = {LK_METHOD_MPRGP, "mprgp", lk__solve_mprgp, LK__M_WHOLE_PRODUCTS, NULL},
	[LK_METHOD_AUTO] = {LK_METHOD_AUTO, "auto", lk__solve_auto, LK__M_GAUSS_SEIDEL, NULL},
	[LK_METHOD_IPM] = {LK_METHOD_IPM, "ipm", lk__solve_ipm, LK__M_WHOLE_PRODUCTS, NULL},
};

/* the rows added at run time (lk__method_add), values LK_METHOD_COUNT on */
static lk__method_desc added[LK__METHODS_ADDED_MAX];
static int nadded;

int lk__method_count(void)
{
	return LK_METHOD_COUNT + nadded;
}

const lk__method_desc *lk__method_desc_of(lk_method m)
{
	if ((unsigned)m < LK_METHOD_COUNT)
		return methods[m].solve ? &methods[m] : NULL;
	const unsigned k = (unsigned)m - LK_METHOD_COUNT;
	return k < (unsigned)nadded ? &added[k] : NULL;
}

int lk__method_of_name(const char *name, size_t len)
{
	for (int m = 0; m < lk__method_count(); ++m) {
		const char *n = lk__method_desc_of((lk_method)m)->name;
		if (strlen(n) == len && !strncmp(n, name, len))
			return m;
	}
	return -1;
}

lk_method lk__method_add(const lk__method_desc *d)
{
	if (!d || !d->solve || !d->name || !d->name[0] || strpbrk(d->name, ":,= ") || nadded >= LK__METHODS_ADDED_MAX ||
	    lk__method_of_name(d->name, strlen(d->name)) >= 0)
		return (lk_method)-1;
	added[nadded] = *d;
	added[nadded].method = (lk_method)(LK_METHOD_COUNT + nadded);
	return added[nadded++].method;
}

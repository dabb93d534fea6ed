/* Projected Gauss-Seidel and projected SOR for the boxed LCP with friction bounds (Erleben 2013 sec. 5.2-5.3):
 * the sweep itself is the sweep layer's (sweep.c); PGS is PSOR with w = 1.
 *
 * w = auto (LK_SOR_AUTO): the first sweeps run with w = 1 and measure the contraction rho of the largest
 * change of lambda from one sweep to the next; then w becomes Young's optimum for a consistently ordered
 * matrix, w = 2 / (1 + sqrt(1 - rho_J^2)) with rho_J^2 = rho the Gauss-Seidel rate (Young 1954; Erleben
 * 2013 sec. 5.3 discusses the choice of w for PSOR). An LCP is not a linear system and friction rows move
 * their bounds, so w is capped: 1.9 without friction rows, 1.5 with them (the best w of a scan is 1.8-1.98
 * frictionless and 1.25-1.54 with friction on the paper's problems, docs/benchmarks.md). */
#include "methods.h"

#include "coarse.h"
#include "kernel.h"
#include "sweep.h"

#include <math.h>

/* Sweeps measured with w = 1 before w is set, and how many of their ratios make the estimate. */
#define AUTO_W_SWEEPS 8
#define AUTO_W_RATIOS 4

typedef struct pgs_state {
	double w;               /* the relaxation of the next sweep */
	int automatic, sweeps;
	double prev_change;
	double log_ratio;       /* sum of log(change_k / change_{k-1}) over the last sweeps of the warm-up */
	int ratios;
	double cap;
	lk__coarse coarse;      /* coarse=K: the faces (coarse.c), sweeps since the last correction, and the */
	int since, interval;    /* sweeps between corrections: K, doubled after each correction undone */
} pgs_state;

static void auto_w_update(pgs_state *a, double change)
{
	++a->sweeps;
	if (a->sweeps > AUTO_W_SWEEPS - AUTO_W_RATIOS && a->prev_change > 0 && change > 0) {
		a->log_ratio += log(change / a->prev_change);
		++a->ratios;
	}
	a->prev_change = change;
	if (a->sweeps == AUTO_W_SWEEPS) {
		double rho = a->ratios > 0 ? exp(a->log_ratio / a->ratios) : 0.0;
		if (!(rho >= 0))
			rho = 0;
		if (rho > 0.9999)
			rho = 0.9999;
		double w = 2.0 / (1.0 + sqrt(1.0 - rho));
		a->w = w < 1.0 ? 1.0 : w > a->cap ? a->cap : w;
		a->automatic = 0;
	}
}

static double pgs_sweep(lk__ctx *c, const int *perm, void *user)
{
	pgs_state *a = user;
	double change = c->cfg->friction == LK_FRICTION_CONE ? lk__pgs_sweep_cone(c, a->w)
	                                                      : lk__pgs_sweep(c, perm, c->n, a->w);
	if (a->automatic)
		auto_w_update(a, change);
	/* the two-level correction (coarse.c), when the work left pays for it */
	if (a->coarse.nfaces > 0 && ++a->since >= a->interval && lk__work_left(c) >= lk__coarse_cost(&a->coarse)) {
		a->since = 0;
		const int rejected = a->coarse.rejected;
		const double d = lk__coarse_correct(&a->coarse, c);
		if (a->coarse.rejected > rejected && a->interval < (1 << 20))
			a->interval *= 2; /* where the welded faces do not fit (sliding, opening), try less often */
		change = d > change || d != d ? d : change;
	}
	return change;
}

lk_status lk__solve_pgs(lk__ctx *c)
{
	/* "pgs:w=1.3" is the over-relaxed sweep ODE's quickstep uses */
	int *perm = NULL;
	lk_status st = lk__sweep_order(c, 1, &perm);
	if (st != LK_OK)
		return st;
	pgs_state a = {c->cfg->sor_w, 0, 0, 0.0, 0.0, 0, 1.9, {0}, 0, c->cfg->coarse};
	if (c->cfg->sor_w == LK_SOR_AUTO) {
		a.w = 1.0;
		a.automatic = 1;
		for (int i = 0; i < c->n; ++i)
			if (lk__is_friction(&c->p->rows[i])) {
				a.cap = 1.5;
				break;
			}
	}
	/* the faces are bodies' pairs of rows: a matrix has none */
	if (c->cfg->coarse > 0 && c->p->form != LK_FORM_ROWS)
		return lk__fail(c->p, LK_ERR_UNSUPPORTED, "%s: coarse=%d works on the row form (bodies and their rows); "
		                "this problem is a matrix", lk_method_name(c->cfg->method), c->cfg->coarse);
	if (c->cfg->coarse > 0 && lk__coarse_setup(&a.coarse, c->p) != LK_OK)
		return lk__fail(c->p, LK_ERR_NO_MEMORY, "%s: out of memory for the coarse level",
		                lk_method_name(c->cfg->method));
	lk__sweep_until_stop(c, perm, pgs_sweep, &a);
	lk__coarse_free(&a.coarse);
	return LK_OK;
}

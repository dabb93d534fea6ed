/* The nonsmooth nonlinear conjugate gradient method (NNCG) of Silcowitz, Niebe & Erleben, "A nonsmooth
 * nonlinear conjugate gradient method for interactive contact force problems", The Visual Computer 26
 * (2010), Algorithm 2.
 *
 * PGS is read as a step of a nonlinear method on the nonsmooth merit of the boxed LCP: the "gradient" at
 * x_k is minus the PGS step, grad f(x_k) = x_k - PGS(x_k). NNCG adds Fletcher-Reeves momentum to it:
 *     x_{k+1} = PGS(x_k),  g_{k+1} = x_{k+1} - x_k   (= -grad f),
 *     beta = |g_{k+1}|^2 / |g_k|^2,
 *     beta > 1: restart, p_{k+1} = g_{k+1}             (momentum discarded: the merit did not fall)
 *     else:     x_{k+1} += beta p_k,  p_{k+1} = beta p_k + g_{k+1}.
 * The momentum step is not projected: the next PGS sweep projects every row again, and the monitor checks
 * the iterate right after the sweep, so that the lambda handed back is always a projected PGS iterate.
 *
 * Matrix-free, the momentum step is one pass over the rows with p_i != 0 that adds beta p_i to lambda_i and
 * M^-1 J_i^T beta p_i to du: a scatter without a gather, counted at LK_WORK_MOMENTUM_ROW of a sweep's row. */
#include "methods.h"

#include "kernel.h"
#include "sweep.h"

#include <string.h>

typedef struct nncg_state {
	double *before; /* x_k, the iterate the sweep started from */
	double *p;      /* the search direction */
	double gg_prev; /* |g_k|^2 */
	int have_p;
} nncg_state;

/* x += beta p and du += M^-1 J^T beta p (row form). */
static void momentum(lk__ctx *c, const nncg_state *s, double beta)
{
	lk_problem *p = c->p;
	int moved = 0;
	for (int i = 0; i < c->n; ++i) {
		double d = beta * s->p[i];
		if (d == 0.0)
			continue;
		c->lambda[i] += d;
		if (p->form == LK_FORM_ROWS)
			lk__row_apply(&p->rows[i], c->du, d);
		++moved;
	}
	lk__count(c, moved, LK_WORK_MOMENTUM_ROW);
}

lk_status lk__solve_nncg(lk__ctx *c)
{
	const lk_solver_config *cfg = c->cfg;
	int *perm = NULL;
	lk_status st = lk__sweep_order(c, 0, &perm);
	if (st != LK_OK)
		return st;
	nncg_state s;
	memset(&s, 0, sizeof s);
	s.before = lk__arena_alloc(&c->p->arena, (size_t)c->n * sizeof(double));
	s.p = lk__arena_alloc(&c->p->arena, (size_t)c->n * sizeof(double));
	if (!s.before || !s.p)
		return lk__fail(c->p, LK_ERR_NO_MEMORY, "nncg: out of memory for %d rows", c->n);
	for (int it = 1;; ++it) {
		if (cfg->order == LK_ORDER_RANDOM)
			lk__shuffle(&c->rng, perm, c->n);
		memcpy(s.before, c->lambda, (size_t)c->n * sizeof(double));
		double change = lk__pgs_sweep(c, perm, c->n, cfg->sor_w == LK_SOR_AUTO ? 1.0 : cfg->sor_w);
		c->iterations = it;
		c->stop = lk__monitor(c, it, change);
		if (c->stop != LK_STOP_NONE)
			return LK_OK;
		/* g = PGS(x_k) - x_k, and |g|^2 */
		double gg = 0.0;
		for (int i = 0; i < c->n; ++i) {
			double g = c->lambda[i] - s.before[i];
			s.before[i] = g;
			gg += g * g;
		}
		double beta = s.have_p && s.gg_prev > 0 ? gg / s.gg_prev : 2.0;
		/* under a budget, momentum only where a sweep after it is paid for: the last sweep's iterate is
		 * what the method hands back */
		if (lk__work_left(c) < (1.0 + LK_WORK_MOMENTUM_ROW) * c->n)
			beta = 2.0;
		if (beta > 1.0) {
			memcpy(s.p, s.before, (size_t)c->n * sizeof(double)); /* restart */
		} else {
			momentum(c, &s, beta);
			for (int i = 0; i < c->n; ++i)
				s.p[i] = beta * s.p[i] + s.before[i];
		}
		s.have_p = 1;
		s.gg_prev = gg;
	}
}

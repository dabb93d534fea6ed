/* lk_solve: validation, the shared solve context, the stopping rules and the dispatch to the methods. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

const char *lk_stop_reason_name(lk_stop_reason reason)
{
	static const char *names[LK_STOP_COUNT] = {
		"none", "absolute", "relative", "stagnation", "iterations", "active-set",
		"local-minimum", "non-descent", "nonfinite", "diverged", "bad-diagonal",
	};
	if ((unsigned)reason >= LK_STOP_COUNT)
		return "unknown";
	return names[reason];
}

void lk__current_metrics(lk__ctx *c, lk_metrics *m)
{
	const lk_problem *p = c->p;
	for (int i = 0; i < c->n; ++i)
		c->w[i] = lk__w(p, i, c->lambda, c->du);
	lk__metrics_from_w(p, c->lambda, c->w, m);
}

void lk__set_lambda(lk__ctx *c, const double *x)
{
	if (x != c->lambda)
		memcpy(c->lambda, x, (size_t)c->n * sizeof(double));
	if (c->p->form == LK_FORM_ROWS)
		lk__recompute_du(c->p, c->lambda, c->du);
}

void lk__offer_best(lk__ctx *c, double merit)
{
	if (!(merit < c->best_merit))
		return;
	memcpy(c->best, c->lambda, (size_t)c->n * sizeof(double));
	c->best_merit = merit;
	c->have_best = 1;
}

void lk__restore_best(lk__ctx *c)
{
	lk__set_lambda(c, c->best);
	c->used_best = 1;
}

static void record_history(lk__ctx *c, int iter, const lk_metrics *m)
{
	lk_history *h = c->hist;
	if (!h || !h->entries || h->count >= h->capacity)
		return;
	lk_history_entry *e = &h->entries[h->count++];
	e->iteration = iter;
	e->res = m->res;
	e->theta = m->theta;
	e->fischer = m->fischer;
	e->seconds = lk__now() - c->t0;
	e->row_updates = c->row_updates;
}

/* A solve that ends with RES this many times the start's is unstable (lk_solve). */
#define LK_UNSTABLE_FACTOR 2.0

/* The rules of a check at which the merit of the current iterate is known (metrics m): the non-finite and
 * growth guards and the best iterate always; the history and the tolerances only when `need` says that a
 * tolerance or the history asked for this check. */
static lk_stop_reason merit_rules(lk__ctx *c, int iter, const lk_metrics *m, int need)
{
	const lk_solver_config *cfg = c->cfg;
	double merit = lk__merit_value(m, cfg->merit);
	if (!isfinite(merit)) {
		lk__restore_best(c);
		return LK_STOP_NONFINITE;
	}
	c->evaluated = 1;
	if (need)
		record_history(c, iter, m);
	lk__offer_best(c, merit);
	/* Growth is measured against the start's merit. A start with merit 0 gives no scale: with the merit
	 * "modified" (sum |lambda_i| |w_i|, Erleben 2013 eq. 106) a cold start lambda = 0 has merit 0 whether
	 * or not it solves the problem, and any later iterate above 1 would count as diverged; for the other
	 * merits a start with merit 0 is a solution. The rule then waits; the end check of lk_solve on RES
	 * (LK_UNSTABLE_FACTOR) still applies. */
	int have_scale = c->initial_merit > 0;
	if (have_scale && merit > LK_DIVERGENCE_FACTOR * fmax(c->initial_merit, 1e-300) && merit > 1.0) {
		lk__restore_best(c);
		return LK_STOP_DIVERGED;
	}
	if (!need)
		return LK_STOP_NONE;
	if (cfg->tol_abs > 0 && merit < cfg->tol_abs)
		return LK_STOP_ABSOLUTE;
	if (cfg->tol_rel > 0 && isfinite(c->last_merit) &&
	    fabs(merit - c->last_merit) < cfg->tol_rel * fabs(c->last_merit))
		return LK_STOP_RELATIVE;
	c->last_merit = merit;
	return LK_STOP_NONE;
}

/* Whether a tolerance or the history asks for the merit at this check. */
static int merit_needed(const lk__ctx *c, int iter)
{
	const lk_solver_config *cfg = c->cfg;
	int want_history = c->hist && c->hist->entries && c->hist->count < c->hist->capacity;
	return (cfg->tol_abs > 0 || cfg->tol_rel > 0 || want_history) &&
	       (iter % cfg->check_every == 0 || iter >= cfg->max_iterations);
}

static lk_stop_reason change_rules(const lk__ctx *c, int iter, double max_change)
{
	const lk_solver_config *cfg = c->cfg;
	if (cfg->tol_stag > 0 && max_change < cfg->tol_stag)
		return LK_STOP_STAGNATION;
	if (iter >= cfg->max_iterations)
		return LK_STOP_ITERATIONS;
	return LK_STOP_NONE;
}

lk_stop_reason lk__monitor(lk__ctx *c, int iter, double max_change)
{
	if (!isfinite(max_change)) {
		lk__restore_best(c);
		return LK_STOP_NONFINITE;
	}
	c->evaluated = 0;
	/* a sweep does not produce the merit, and evaluating it costs about a sweep: only when asked */
	if (merit_needed(c, iter)) {
		lk_metrics m;
		lk__current_metrics(c, &m);
		lk_stop_reason r = merit_rules(c, iter, &m, 1);
		if (r != LK_STOP_NONE)
			return r;
	}
	return change_rules(c, iter, max_change);
}

lk_stop_reason lk__monitor_metrics(lk__ctx *c, int iter, double max_change, const lk_metrics *m)
{
	if (!isfinite(max_change)) {
		lk__restore_best(c);
		return LK_STOP_NONFINITE;
	}
	c->evaluated = 0;
	lk_stop_reason r = merit_rules(c, iter, m, merit_needed(c, iter));
	if (r != LK_STOP_NONE)
		return r;
	return change_rules(c, iter, max_change);
}

static lk_status dispatch(lk__ctx *c)
{
	const lk_solver_config *cfg = c->cfg;
	switch (cfg->method) {
	case LK_METHOD_PGS:
	case LK_METHOD_PSOR:
		if (cfg->order == LK_ORDER_ESP || cfg->order == LK_ORDER_GSP)
			return lk__solve_staggered(c);
		return lk__solve_pgs(c);
	case LK_METHOD_AMGS:
	case LK_METHOD_AMSOR:
		return lk__solve_amgs(c);
	case LK_METHOD_AMGS_DENSE:
		return lk__solve_amgs_dense(c);
	case LK_METHOD_PGS_SM:
		return lk__solve_pgs_sm(c);
	case LK_METHOD_NEWTON_MINMAP:
	case LK_METHOD_NEWTON_FISCHER:
		return lk__solve_newton(c);
	default:
		break;
	}
	return lk__fail(c->p, LK_ERR_UNSUPPORTED, "method %s is not available in this build",
	                lk_method_name(cfg->method));
}

lk_status lk_solve(lk_problem *p, const lk_solver_config *cfg, lk_stats *stats, lk_history *history)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	lk__clear_error(p);
	if (!cfg)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "solve: configuration is NULL");
	char msg[200];
	if (lk_config_validate(cfg, msg, sizeof msg) != LK_OK)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "solve: %s", msg);
	lk_status st = lk_problem_validate(p);
	if (st != LK_OK)
		return st;
	if (history)
		history->count = 0;

	int n = p->nrows;
	if (n == 0) {
		/* nothing to solve: an empty problem is solved exactly */
		if (stats) {
			memset(stats, 0, sizeof *stats);
			stats->method = cfg->method;
			stats->bodies = p->nbodies;
			stats->stop_reason = LK_STOP_ABSOLUTE;
		}
		return LK_OK;
	}
	lk__arena_reset(&p->arena);
	lk__ctx c;
	memset(&c, 0, sizeof c);
	c.p = p;
	c.cfg = cfg;
	c.n = n;
	c.lambda = p->lambda;
	c.du = p->du;
	c.stats = stats;
	c.hist = history;
	c.rng.s = cfg->seed;
	c.w = lk__arena_alloc(&p->arena, ((size_t)n + 1) * sizeof(double));
	c.best = lk__arena_alloc(&p->arena, ((size_t)n + 1) * sizeof(double));
	double *orig = lk__arena_alloc(&p->arena, ((size_t)n + 1) * sizeof(double));
	if (!c.w || !c.best || !orig)
		return lk__fail(p, LK_ERR_NO_MEMORY, "solve: out of memory for %d rows", n);
	memcpy(orig, p->lambda, (size_t)n * sizeof(double));

	if (!cfg->warm_start)
		memset(p->lambda, 0, (size_t)n * sizeof(double));
	if (p->form == LK_FORM_ROWS) {
		lk__recompute_du(p, p->lambda, p->du);
		/* every input is finite, and so is every row's M^-1 J^T (lk_problem_add_row refuses a row whose
		 * product overflows, |J| near 1e308, found by tests/fuzz), yet M^-1 J^T lambda can overflow for a huge
		 * warm start: then no guard could hand back a finite du from this start */
		for (size_t k = 0; k < (size_t)(p->nbodies + 1) * 6; ++k) {
			if (!isfinite(p->du[k])) {
				memcpy(p->lambda, orig, (size_t)n * sizeof(double));
				lk__recompute_du(p, p->lambda, p->du);
				p->du_valid = 0;
				return lk__fail(p, LK_ERR_NONFINITE, "solve: M^-1 J^T lambda of body %d overflows at the start",
				                (int)(k / 6));
			}
		}
	}
	p->du_valid = 1;

	lk_metrics m0;
	lk__current_metrics(&c, &m0);
	c.initial_merit = lk__merit_value(&m0, cfg->merit);
	c.last_merit = c.initial_merit;
	memcpy(c.best, p->lambda, (size_t)n * sizeof(double));
	c.best_merit = c.initial_merit;
	c.have_best = 1;
	c.t0 = lk__now();
	record_history(&c, 0, &m0);

	c.stop = LK_STOP_NONE;
	st = dispatch(&c);
	double seconds = lk__now() - c.t0;
	if (st != LK_OK) {
		memcpy(p->lambda, orig, (size_t)n * sizeof(double));
		p->du_valid = 0;
		return st;
	}

	lk_metrics m1;
	lk__current_metrics(&c, &m1);
	/* never hand back a non-finite lambda: the best finite iterate replaces it */
	if (!isfinite(m1.res)) {
		lk__restore_best(&c);
		lk__current_metrics(&c, &m1);
		if (c.stop == LK_STOP_NONE || c.stop == LK_STOP_ITERATIONS)
			c.stop = LK_STOP_NONFINITE;
	}
	/* never hand back an iterate far worse than the start: an unstable iteration (AMGS with a too small
	 * alpha, Miyamoto & Yamashita 2019 sec. 5 on Pool 2) stays bounded, so neither guard of the monitor
	 * fires, yet it ends with a residual several times that of the lambda it was given. The best iterate
	 * seen (the start, unless the monitor evaluated better ones) replaces it, and the status says so, so
	 * that an adapter can fall back to its engine's solver for the step. PGS-SM with best=0 asks for its
	 * last iterate whatever it is (Silcowitz et al. sec. 4.3 without the fall-back), and gets it. */
	int keep_last = cfg->method == LK_METHOD_PGS_SM && !cfg->pgs_sm.best_iterate;
	if (!keep_last && isfinite(m0.res) && m1.res > LK_UNSTABLE_FACTOR * m0.res) {
		lk__restore_best(&c);
		lk__current_metrics(&c, &m1);
		c.stop = LK_STOP_DIVERGED;
	}
	if (stats) {
		memset(stats, 0, sizeof *stats);
		stats->method = cfg->method;
		stats->rows = n;
		stats->bodies = p->nbodies;
		stats->iterations = c.iterations;
		stats->row_updates = c.row_updates;
		stats->inner_iterations = c.inner_iterations;
		stats->subspace_steps = c.subspace_steps;
		stats->stop_reason = c.stop;
		stats->res_initial = m0.res;
		stats->theta_initial = m0.theta;
		stats->res_final = m1.res;
		stats->theta_final = m1.theta;
		stats->fischer_final = m1.fischer;
		stats->modified_final = m1.modified;
		stats->seconds = seconds;
		stats->used_best_iterate = c.used_best;
	}
	return LK_OK;
}

/* lk_solve, the driver: validation, the solve context, the bad-diagonal guard, the dispatch to the methods and
 * the end checks. It calls the methods; they call the sweep layer and the monitor, never this file. */
#include "context.h"
#include "kernel.h"
#include "method_table.h"
#include "ordering.h"
#include "parallel.h"
#include "sweep.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *lk_stop_reason_name(lk_stop_reason reason)
{
	static const char *names[LK_STOP_COUNT] = {
		"none", "absolute", "relative", "stagnation", "iterations", "active-set",
		"local-minimum", "non-descent", "nonfinite", "diverged", "bad-diagonal", "budget",
	};
	if ((unsigned)reason >= LK_STOP_COUNT)
		return "unknown";
	return names[reason];
}

/* A solve that ends with RES this many times the start's is unstable (lk_solve). */
#define LK_UNSTABLE_FACTOR 2.0

/* The residual that rounding alone leaves in w = A lambda + q: sqrt(n) rows, each off by some ulps of the
 * velocities it sums (max |q| their scale). A solve that starts at a solution (a body at rest, warm-started)
 * can end at twice such a residual without being unstable; only a residual above this floor is judged. */
static double rounding_floor(const lk_problem *p)
{
	double qmax = 0.0;
	for (int i = 0; i < p->nrows; ++i)
		qmax = fmax(qmax, fabs(p->rows[i].q));
	return 64.0 * DBL_EPSILON * sqrt((double)p->nrows) * qmax;
}

/* Whether the method needs every A_ii > 0. Every Gauss-Seidel update divides by A_ii; the Newton methods need it
 * on the row form, where a row with A_ii = 0 has J M^-1 J^T = 0 and s = 0 and acts on nothing, so that its
 * lambda is undetermined and the iterate could run off along it (newton.c); a matrix-form problem may have a
 * zero diagonal (the contact LCP of Erleben 2013 eq. 27) and the Newton methods solve it. */
static int needs_positive_diagonal(const lk__method_desc *m, const lk_problem *p)
{
	return !(m->traits & LK__M_ZERO_DIAGONAL_MATRIX) || p->form == LK_FORM_ROWS;
}

static lk_status dispatch(lk__ctx *c)
{
	/* one guard for every method: a row that cannot be solved stops the solve with lambda untouched */
	if (needs_positive_diagonal(c->method, c->p) && lk__first_bad_diagonal(c->p) >= 0) {
		c->stop = LK_STOP_BAD_DIAGONAL;
		return LK_OK;
	}
	return c->method->solve(c);
}

/* The metrics of an iterate that was not measured (measure=0). */
static void unmeasured(lk_metrics *m)
{
	m->res = m->theta = m->fischer = m->modified = m->max_h = m->max_bound_violation = m->fc3d = NAN;
}

/* 1 when lambda and, in row form, the bodies' M^-1 J^T lambda are finite. */
static int result_finite(const lk__ctx *c)
{
	double z = 0.0; /* x - x is 0 for a finite x and NaN otherwise */
	for (int i = 0; i < c->n; ++i)
		z += c->lambda[i] - c->lambda[i];
	if (c->p->form == LK_FORM_ROWS)
		for (int b = 0; b < c->p->nbodies; ++b)
			for (int k = 0; k < 6; ++k)
				z += c->du[LK_DU_STRIDE * (size_t)b + k] - c->du[LK_DU_STRIDE * (size_t)b + k];
	return z == 0.0;
}

lk_status lk_solve(lk_problem *p, const lk_solver_config *cfg, lk_stats *stats, lk_history *history)
{
	return lk__solve_with(p, cfg, cfg ? lk__method_desc_of(cfg->method) : NULL, stats, history);
}

lk_status lk__solve_with(lk_problem *p, const lk_solver_config *cfg, const lk__method_desc *method, lk_stats *stats,
                         lk_history *history)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	lk__clear_error(p);
	if (!cfg)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "solve: configuration is NULL");
	char msg[200];
	if (lk_config_validate(cfg, msg, sizeof msg) != LK_OK)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "solve: %s", msg);
	if (!method || !method->solve)
		return lk__fail(p, LK_ERR_UNSUPPORTED, "method %s is not available in this build",
		                lk_method_name(cfg->method));
	/* the rows' consistency, checked again only after rows were added (a problem solved again as it is, as
	 * `solve --repeat` and an application trying several settings do, was validated by the first solve) */
	lk_status st = p->validated ? LK_OK : lk_problem_validate(p);
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
	lk__arena_recycle(&p->arena);
	/* threads > 1 sweep in the part order (or the colour order when the configuration asks for it), on the
	 * problem's threads (created at the first such solve and kept; should they fail to start, one thread
	 * sweeps the same order to the same result); a problem too small to gain keeps the natural order on one
	 * thread (parallel.h), whatever the count */
	lk_solver_config threaded;
	if (cfg->threads > 1 && cfg->order == LK_ORDER_NATURAL && p->nrows >= LK_PARALLEL_MIN_ROWS) {
		threaded = *cfg;
		threaded.order = LK_ORDER_PART;
		cfg = &threaded;
	}
	/* a scheduler the application lent takes the place of the problem's own threads */
	const int lent = p->executor.run != NULL;
	if (cfg->threads > 1 && p->form == LK_FORM_ROWS && !lent)
		lk__problem_pool(p, cfg->threads);
	lk__ctx c;
	memset(&c, 0, sizeof c);
	c.p = p;
	c.cfg = cfg;
	c.method = method;
	const int parallel = cfg->threads > 1 && p->nrows >= LK_PARALLEL_MIN_ROWS && p->form == LK_FORM_ROWS;
	c.pool = parallel && !lent ? p->pool : NULL;
	c.ex = parallel && lent ? &p->executor : NULL;
	c.tasks = c.ex ? (cfg->threads < LK_MAX_THREADS ? cfg->threads : LK_MAX_THREADS) : 1;
	/* the methods of whole products (APGD, MPRGP, PGS-SM's subspace, the Newton methods' Krylov products and
	 * evaluations) make them on the threads (product.c):
	 * each body's rows, once a solve; without memory for them, on one thread, to the same result */
	if ((c.pool || c.ex) && (method->traits & LK__M_WHOLE_PRODUCTS))
		c.body_rows = lk__body_rows_make(p, &p->arena);
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
	if (p->form == LK_FORM_ROWS && !cfg->warm_start) {
		/* lambda = 0: du = M^-1 J^T 0 = 0, finite */
		memset(p->du, 0, ((size_t)p->nbodies + 1) * LK_DU_STRIDE * sizeof(double));
	} else if (p->form == LK_FORM_ROWS) {
		lk__recompute_du(p, p->lambda, p->du);
		/* every input is finite, and so is every row's M^-1 J^T (lk_problem_add_row refuses a row whose
		 * product overflows, |J| near 1e308, found by tests/fuzz), yet M^-1 J^T lambda can overflow for a huge
		 * warm start: then no guard could hand back a finite du from this start */
		for (size_t k = 0; k < (size_t)(p->nbodies + 1) * LK_DU_STRIDE; ++k) {
			if (!isfinite(p->du[k])) {
				memcpy(p->lambda, orig, (size_t)n * sizeof(double));
				lk__recompute_du(p, p->lambda, p->du);
				p->du_valid = 0;
				return lk__fail(p, LK_ERR_NONFINITE, "solve: M^-1 J^T lambda of body %d overflows at the start",
				                (int)(k / LK_DU_STRIDE));
			}
		}
	}
	p->du_valid = 1;

	/* the colour order of a problem large enough for threads: the metrics by blocks of rows, on the threads
	 * when there are some, the same on any number (parallel.h) */
	if (lk__order_coloured(cfg->order) && p->form == LK_FORM_ROWS && n >= LK_PARALLEL_MIN_ROWS) {
		c.nblocks = (n + LK_METRIC_BLOCK - 1) / LK_METRIC_BLOCK;
		c.blocks = lk__arena_alloc(&p->arena, (size_t)c.nblocks * sizeof *c.blocks);
		if (!c.blocks)
			return lk__fail(p, LK_ERR_NO_MEMORY, "solve: out of memory for the metrics of %d rows", n);
	}

	/* the Fischer, modified and fc3d merits cost a square root or two a row: each only where something reads
	 * it (the configured merit, which every method's checks read; the history, which records the Fischer merit;
	 * the final statistics) */
	c.sums = lk__merit_sums_for(cfg->merit) | (history ? LK__SUMS_FISCHER : 0u);
	/* RES of the start and of the result: the statistics, and the end guard of the methods that can run away,
	 * which therefore always measure (the guard is part of the method: with the statistics off it must act as
	 * with them on). measure=0 leaves them out of the Gauss-Seidel family, which evaluates no merit without a
	 * tolerance or a history and has no growth guard (lk__cannot_run_away). A non-finite result is still
	 * caught below. */
	const int measure = cfg->measure || history || cfg->tol_abs > 0 || cfg->tol_rel > 0 || !lk__cannot_run_away(&c);
	/* Under tolerances alone (measure=0, no history) PGS and PSOR measure no start, as measure=0 has them do
	 * without a tolerance: the growth guards its merit would scale are for the methods that can run away (a
	 * projected Gauss-Seidel sweep of a frictionless problem never raises the objective), and a non-finite
	 * result is still caught. The merit of the result is the one of the check that stopped them (below). An
	 * engine's step then pays for the checks the tolerance asks for and nothing more: on Bullet's 20-box stack
	 * at rest, the two evaluations were 5 us of a 36 us solve (docs/benchmarks.md, "A tolerance under a
	 * cap"). */
	const int sweeps_only = !cfg->measure && !history && (method->traits & LK__M_PLAIN_SWEEPS);
	lk_metrics m0;
	if (measure && !sweeps_only)
		lk__start_metrics(&c, &m0);
	else
		unmeasured(&m0);
	/* the clocks only where something reads them (a reading is a call of about 25 ns, of the thread's CPU clock a
	 * system call: on a problem of one contact, solved in a quarter of a microsecond, three readings were a third
	 * of the call): the time budget's, and the statistics' for the caller's stats and the history */
	const int timed = stats || history;
	c.t0 = cfg->time_budget_us > 0 ? lk__now() : 0.0;
	c.ts0 = timed ? lk_stats_now() : 0.0;
	lk__monitor_start(&c, &m0);

	c.stop = LK_STOP_NONE;
	st = dispatch(&c);
	const double seconds = timed ? lk_stats_now() - c.ts0 : 0.0;
	if (st != LK_OK) {
		memcpy(p->lambda, orig, (size_t)n * sizeof(double));
		p->du_valid = 0;
		return st;
	}

	lk_metrics m1;
	c.sums = LK__SUMS_ALL;
	const int measured = measure || !result_finite(&c);
	/* a sweep method stopped by its check's merit stops on the iterate the check evaluated, whose w is in c.w */
	const int checked_last = c.evaluated && (method->traits & LK__M_PLAIN_SWEEPS) && !c.blocks &&
	                         (c.stop == LK_STOP_ABSOLUTE || c.stop == LK_STOP_RELATIVE);
	if (measured && sweeps_only && c.stop == LK_STOP_ABSOLUTE)
		m1 = c.checked; /* the iterate the check evaluated: without the Fischer and modified merits (NaN) */
	else if (measured && checked_last)
		lk__metrics_of_w(&c, &m1); /* every merit of it, without a second product */
	else if (measured)
		lk__current_metrics(&c, &m1);
	else
		unmeasured(&m1);
	/* never hand back a non-finite lambda: the best finite iterate replaces it */
	if (measured && !isfinite(m1.res)) {
		lk__restore_best(&c);
		lk__current_metrics(&c, &m1);
		if (c.stop == LK_STOP_NONE || c.stop == LK_STOP_ITERATIONS)
			c.stop = LK_STOP_NONFINITE;
	}
	/* never hand back an iterate far worse than the start: an unstable iteration (AMGS with a too small
	 * alpha, Miyamoto & Yamashita 2019 sec. 5 on Pool 2) stays bounded, so neither guard of the monitor
	 * fires, yet it ends with a residual several times that of the lambda it was given. The best iterate
	 * seen (the start, unless the monitor evaluated better ones) replaces it, and the status says so, so
	 * that an adapter can fall back to its engine's solver for the step. The scale is the larger of the start's
	 * residual and the cold start's (lambda = 0): a warm start can be far better than where the step's
	 * problem puts a solve, and a result between the two is no instability. PGS-SM with best=0 asks for its
	 * last iterate whatever it is (Silcowitz et al. sec. 4.3 without the fall-back), and gets it; the
	 * Gauss-Seidel family cannot run away (lk__cannot_run_away) and keeps its last iterate too. */
	int keep_last = (method->keeps_last && method->keeps_last(cfg)) || lk__cannot_run_away(&c);
	lk_metrics cold;
	if (!keep_last && measured && isfinite(m0.res) && m1.res > LK_UNSTABLE_FACTOR * m0.res &&
	    m1.res > rounding_floor(p) && (lk__cold_metrics(&c, &cold), m1.res > LK_UNSTABLE_FACTOR * cold.res)) {
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
		stats->work = c.work / n;
		stats->inner_iterations = c.inner_iterations;
		stats->subspace_steps = c.subspace_steps;
		stats->stop_reason = c.stop;
		stats->res_initial = m0.res;
		stats->theta_initial = m0.theta;
		stats->res_final = m1.res;
		stats->theta_final = m1.theta;
		stats->fischer_final = m1.fischer;
		stats->modified_final = m1.modified;
		stats->fc3d_final = m1.fc3d;
		stats->seconds = seconds;
		stats->used_best_iterate = c.used_best;
	}
	return LK_OK;
}

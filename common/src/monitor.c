/* The monitor: the one home of the stopping rules (Erleben 2013 sec. 6), the history, the non-finite and
 * divergence guards and the best iterate, for every method. */
#include "context.h"
#include "parallel.h"

#include "kernel.h"

#include <string.h>

/* Blocks b0..b1 of a blocked evaluation on thread t of nt: w and the blocks' sums. */
static void metric_blocks(void *arg, int t, int nt)
{
	lk__ctx *c = arg;
	const lk_problem *p = c->p;
	int b0, b1;
	lk__share(c->nblocks, t, nt, &b0, &b1);
	for (int b = b0; b < b1; ++b) {
		const int lo = b * LK_METRIC_BLOCK, hi = lo + LK_METRIC_BLOCK < c->n ? lo + LK_METRIC_BLOCK : c->n;
		for (int i = lo; i < hi; ++i)
			c->w[i] = lk__w(p, i, c->lambda, c->du);
		lk__merit_sums_rows(p, c->lambda, c->w, c->du, c->cfg->friction, lo, hi, c->sums, &c->blocks[b]);
	}
}

/* Task t of a lent scheduler's c->tasks: the blocks of thread t of as many. */
static void metric_task(void *arg, int t)
{
	const lk__ctx *c = arg;
	metric_blocks(arg, t, c->tasks);
}

void lk__current_metrics(lk__ctx *c, lk_metrics *m)
{
	const lk_problem *p = c->p;
	if (c->blocks) {
		/* a colour-order solve: by blocks, on the threads when there are some, added in block order */
		if (c->ex)
			c->ex->run(c->ex->context, c->tasks, metric_task, c);
		else if (c->pool)
			lk__pool_run(c->pool, metric_blocks, c);
		else
			metric_blocks(c, 0, 1);
		lk__merit_sums s = {0, 0, 0, 0, 0, 0, 0, 0, 0, c->sums};
		for (int b = 0; b < c->nblocks; ++b) {
			const lk__merit_sums *k = &c->blocks[b];
			s.hh += k->hh;
			s.ff += k->ff;
			s.mod += k->mod;
			s.ee += k->ee;
			s.nq += k->nq;
			s.nl += k->nl;
			s.nw += k->nw;
			if (!(k->maxh <= s.maxh))
				s.maxh = k->maxh; /* a NaN wins, as in a row-by-row evaluation */
			if (k->viol > s.viol)
				s.viol = k->viol;
		}
		lk__merit_sums_finish(&s, m);
		return;
	}
	for (int i = 0; i < c->n; ++i)
		c->w[i] = lk__w(p, i, c->lambda, c->du);
	lk__merit_sums_rows(p, c->lambda, c->w, c->du, c->cfg->friction, 0, c->n, c->sums, &c->last_sums);
	lk__merit_sums_finish(&c->last_sums, m);
}

void lk__metrics_of_w(lk__ctx *c, lk_metrics *m)
{
	/* the check made RES's sums of this lambda and w and the merits it read (c->last_sums): only the merits it
	 * did not sum are added, without RES's (on a problem of a few contacts, whose solve is a sweep or two, the
	 * statistics of the result were a third of the call) */
	lk__merit_sums s = c->last_sums, more;
	const unsigned need = c->sums & ~s.sums;
	if (need) {
		lk__merit_sums_rows(c->p, c->lambda, c->w, c->du, c->cfg->friction, 0, c->n, need | LK__SUMS_NO_BASE, &more);
		if (need & LK__SUMS_FISCHER)
			s.ff = more.ff;
		if (need & LK__SUMS_MODIFIED)
			s.mod = more.mod;
		if (need & LK__SUMS_FC3D) {
			s.ee = more.ee;
			s.nq = more.nq;
			s.nl = more.nl;
			s.nw = more.nw;
		}
		s.sums |= need;
	}
	lk__merit_sums_finish(&s, m);
}

/* The metrics of lambda = 0, given as `zero`: w is q, to the bit of the product's w (du = 0) */
static void metrics_at_zero(lk__ctx *c, const double *zero, lk_metrics *m)
{
	for (int i = 0; i < c->n; ++i)
		c->w[i] = c->p->rows[i].q;
	lk__merit_sums s;
	lk__merit_sums_rows(c->p, zero, c->w, NULL, c->cfg->friction, 0, c->n, c->sums, &s);
	lk__merit_sums_finish(&s, m);
}

void lk__start_metrics(lk__ctx *c, lk_metrics *m)
{
	int zero = !c->blocks;
	for (int i = 0; i < c->n && zero; ++i)
		zero = c->lambda[i] == 0.0;
	if (zero)
		metrics_at_zero(c, c->lambda, m);
	else
		lk__current_metrics(c, m);
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

void lk__record(lk__ctx *c, int iter, const lk_metrics *m)
{
	lk_history *h = c->hist;
	if (!h || !h->entries || h->count >= h->capacity)
		return;
	lk_history_entry *e = &h->entries[h->count++];
	e->iteration = iter;
	e->res = m->res;
	e->theta = m->theta;
	e->fischer = m->fischer;
	e->seconds = lk_stats_now() - c->ts0;
	e->row_updates = c->row_updates;
}

/* The rules of a check at which the merit of the current iterate is known (metrics m): the non-finite and
 * growth guards and the best iterate always; the history and the tolerances only when `need` says that a
 * tolerance or the history asked for this check. */
/* The merit "modified", x^T |A x + b| (Erleben 2013 eq. 106), "does not work for x = 0": a row with
 * lambda_i = 0 adds nothing whatever its w_i, so the merit is 0 at a cold start, and after a sweep that left
 * every row at 0 or at w = 0, without a solution in sight. A value of 0 where RES is not 0 is such a blind
 * value: it is no solution for the absolute rule and no best iterate. */
static int merit_blind(const lk__ctx *c, const lk_metrics *m, double merit)
{
	return c->cfg->merit == LK_MERIT_MODIFIED && merit == 0.0 && m->res > 0.0;
}

int lk__merit_solved(const lk__ctx *c, const lk_metrics *m)
{
	double merit = lk__merit_value(m, c->cfg->merit);
	return c->cfg->tol_abs > 0 && merit < c->cfg->tol_abs && !merit_blind(c, m, merit);
}

int lk__cannot_run_away(const lk__ctx *c)
{
	return c->p->form == LK_FORM_ROWS && c->method && (c->method->traits & LK__M_GAUSS_SEIDEL);
}

void lk__cold_metrics(lk__ctx *c, lk_metrics *m)
{
	double *zero = lk__arena_alloc(&c->p->arena, ((size_t)c->n + 1) * sizeof *zero);
	if (!zero) {
		m->res = m->theta = m->fischer = m->modified = m->max_h = m->max_bound_violation = INFINITY;
		return;
	}
	memset(zero, 0, (size_t)c->n * sizeof *zero);
	metrics_at_zero(c, zero, m);
}

/* The configured merit of the cold start, made once a solve and only when a growth guard asks for it. */
static double cold_merit(lk__ctx *c)
{
	if (!c->have_cold) {
		lk_metrics m;
		lk__cold_metrics(c, &m);
		c->cold_merit = lk__merit_value(&m, c->cfg->merit);
		c->have_cold = 1;
	}
	return c->cold_merit;
}

static lk_stop_reason merit_rules(lk__ctx *c, int iter, const lk_metrics *m, int need, int record, int soft_growth)
{
	const lk_solver_config *cfg = c->cfg;
	double merit = lk__merit_value(m, cfg->merit);
	if (!isfinite(merit)) {
		lk__restore_best(c);
		return LK_STOP_NONFINITE;
	}
	c->evaluated = 1;
	c->merit = merit;
	c->checked = *m;
	if (record)
		lk__record(c, iter, m);
	int blind = merit_blind(c, m, merit);
	if (!blind)
		lk__offer_best(c, merit);
	/* Growth is measured against the start's merit. A start with merit 0 gives no scale: with the merit
	 * "modified" (sum |lambda_i| |w_i|, Erleben 2013 eq. 106) a cold start lambda = 0 has merit 0 whether
	 * or not it solves the problem, and any later iterate above 1 would count as diverged; for the other
	 * merits a start with merit 0 is a solution. The rule then waits; the end check of lk_solve on RES
	 * (LK_UNSTABLE_FACTOR) still applies. */
	int have_scale = c->initial_merit > 0;
	if (have_scale && !lk__cannot_run_away(c) && merit > LK_DIVERGENCE_FACTOR * fmax(c->initial_merit, 1e-300) &&
	    merit > 1.0 && merit > LK_DIVERGENCE_FACTOR * cold_merit(c)) {
		if (soft_growth) {
			c->grew = 1;
			return LK_STOP_NONE;
		}
		lk__restore_best(c);
		return LK_STOP_DIVERGED;
	}
	if (!need || blind)
		return LK_STOP_NONE;
	if (cfg->tol_abs > 0 && merit < cfg->tol_abs)
		return LK_STOP_ABSOLUTE;
	if (cfg->tol_rel > 0 && isfinite(c->last_merit) &&
	    fabs(merit - c->last_merit) <= cfg->tol_rel * fabs(c->last_merit))
		return LK_STOP_RELATIVE;
	c->last_merit = merit;
	if (c->stall_window > 0 && ++c->stall_count >= c->stall_window) {
		if (!(merit <= 0.5 * c->stall_ref))
			return LK_STOP_STAGNATION;
		c->stall_ref = merit;
		c->stall_count = 0;
	}
	return LK_STOP_NONE;
}

/* Whether a tolerance or the history asks for the merit at this check. */
int lk__history_wanted(const lk__ctx *c)
{
	return c->hist && c->hist->entries && c->hist->count < c->hist->capacity;
}

static int merit_needed(const lk__ctx *c, int iter)
{
	const lk_solver_config *cfg = c->cfg;
	return (cfg->tol_abs > 0 || cfg->tol_rel > 0 || lk__history_wanted(c)) &&
	       (iter % cfg->check_every == 0 || iter >= cfg->max_iterations);
}

double lk__work_budget_left(const lk__ctx *c)
{
	return c->cfg->budget > 0 ? c->cfg->budget * (double)c->n - c->work : INFINITY;
}

double lk__work_left(const lk__ctx *c)
{
	double left = lk__work_budget_left(c);
	if (c->cfg->time_budget_us > 0 && lk__now() - c->t0 >= 1e-6 * c->cfg->time_budget_us)
		left = 0.0;
	return left;
}

static lk_stop_reason change_rules(const lk__ctx *c, int iter, double max_change, int count_iterations)
{
	const lk_solver_config *cfg = c->cfg;
	if (cfg->tol_stag > 0 && max_change < cfg->tol_stag)
		return LK_STOP_STAGNATION;
	if (count_iterations && iter >= cfg->max_iterations)
		return LK_STOP_ITERATIONS;
	/* what is left would not pay for the method's next step: a whole sweep for the Gauss-Seidel family, which
	 * never spends more than its budget; half a sweep where a method does not say (one that can spend less than
	 * a sweep asks lk__work_left itself) */
	const double next = c->step_work > 0 ? c->step_work : 0.5 * c->n;
	if ((cfg->budget > 0 || cfg->time_budget_us > 0) && lk__work_left(c) < next - 1e-9 * c->n)
		return LK_STOP_BUDGET;
	return LK_STOP_NONE;
}

/* Siconos's light error (fc3d_nsgs's SICONOS_FRICTION_3D_NSGS_ERROR_EVALUATION_LIGHT_WITH_FULL_FINAL: the change
 * of the reactions gates the full error's evaluation): under merit=fc3d and an absolute tolerance, a sweep of the
 * Gauss-Seidel family has its merit evaluated after its first sweep, and afterwards where the sweep changed no
 * lambda by more than LK_LIGHT_GATE times the tolerance times the norm of lambda at the last evaluation, or where
 * a quarter more sweeps than at the last evaluation have passed. Siconos's relative error costs a product and a
 * projection onto each contact's cone: on a problem of a few contacts about two sweeps' worth, and it was
 * evaluated after every sweep of solves of tens to hundreds of thousands (Siconos's test problem Rover4609: its
 * checks 1.75 times its sweeps' instructions). A problem a first sweep solves is checked there. Not with a
 * history, which records every check's merit; nor by blocks of rows (the colour order), whose sums hold no norm
 * of lambda.
 *
 * Ten times the tolerance, not the tolerance itself (Siconos's gate): there the change of a slowly converging
 * solve stayed above it for many sweeps after its error was below the tolerance (Capsules-i125 2,715 sweeps
 * instead of 2,462, OneObject-i100000-499 2,085 instead of 1,768); at ten, 2,466 and 1,768. The quarter: where the
 * reactions are not unique a sweep keeps moving them along the solutions at an error below the tolerance, which
 * the change alone did not let through (LMGC's PerioBox: 2,017 sweeps behind a gate at the tolerance, 1,063
 * at a hundred times it, instead of 37; with the quarter 40). The quarter is never fewer than LK_LIGHT_MIN_SWEEPS
 * sweeps: on a problem of a few contacts a check costs about a sweep, and a check forced after every sweep of the
 * first eight (a quarter of fewer than eight is less than one) cost as much as the sweeps it would save (Rover4609
 * with local=1: 10 checks in 12 sweeps). */
#define LK_LIGHT_GATE 10.0
#define LK_LIGHT_SPACING 4
#define LK_LIGHT_MIN_SWEEPS 4

static int light_gate_shut(const lk__ctx *c, int iter, double max_change)
{
	const lk_solver_config *cfg = c->cfg;
	if (cfg->merit != LK_MERIT_FC3D || !(cfg->tol_abs > 0) || !c->method ||
	    !(c->method->traits & LK__M_PLAIN_SWEEPS))
		return 0;
	return !c->blocks && !lk__history_wanted(c) && iter > 1 && iter < cfg->max_iterations && c->light_scale > 0 &&
	       iter < c->light_next && !(max_change <= LK_LIGHT_GATE * cfg->tol_abs * c->light_scale);
}

lk_stop_reason lk__monitor(lk__ctx *c, int iter, double max_change)
{
	if (!isfinite(max_change)) {
		lk__restore_best(c);
		return LK_STOP_NONFINITE;
	}
	c->evaluated = 0;
	/* a sweep does not produce the merit, and evaluating it costs about a sweep: only when asked */
	if (merit_needed(c, iter) && !light_gate_shut(c, iter, max_change)) {
		lk_metrics m;
		lk__current_metrics(c, &m);
		if (c->cfg->merit == LK_MERIT_FC3D && !c->blocks) {
			c->light_scale = sqrt(c->last_sums.nl);
			c->light_next = iter + (iter / LK_LIGHT_SPACING > LK_LIGHT_MIN_SWEEPS ? iter / LK_LIGHT_SPACING
			                                                                       : LK_LIGHT_MIN_SWEEPS);
		}
		lk_stop_reason r = merit_rules(c, iter, &m, 1, 1, 0);
		if (r != LK_STOP_NONE)
			return r;
	}
	return change_rules(c, iter, max_change, 1);
}

lk_stop_reason lk__monitor_metrics(lk__ctx *c, int iter, double max_change, const lk_metrics *m)
{
	if (!isfinite(max_change)) {
		lk__restore_best(c);
		return LK_STOP_NONFINITE;
	}
	c->evaluated = 0;
	int need = merit_needed(c, iter);
	lk_stop_reason r = merit_rules(c, iter, m, need, need, 0);
	if (r != LK_STOP_NONE)
		return r;
	return change_rules(c, iter, max_change, 1);
}

lk_stop_reason lk__checkpoint(lk__ctx *c, int iter, double max_change, unsigned rules)
{
	lk_metrics m;
	lk__current_metrics(c, &m);
	if (!isfinite(max_change)) {
		lk__restore_best(c);
		return LK_STOP_NONFINITE;
	}
	c->evaluated = 0;
	lk_stop_reason r = merit_rules(c, iter, &m, 1, (rules & LK__RULE_RECORD) != 0, (rules & LK__RULE_SOFT_GROWTH) != 0);
	if (r != LK_STOP_NONE || c->grew)
		return r;
	return change_rules(c, iter, max_change, 0);
}

void lk__monitor_start(lk__ctx *c, const lk_metrics *m0)
{
	c->initial_merit = lk__merit_value(m0, c->cfg->merit);
	c->last_merit = c->initial_merit;
	memcpy(c->best, c->lambda, (size_t)c->n * sizeof(double));
	/* a start the merit is blind to, or one not measured (lk_solve), offers no best: any later iterate beats it */
	c->best_merit = merit_blind(c, m0, c->initial_merit) || isnan(c->initial_merit) ? INFINITY : c->initial_merit;
	c->have_best = 1;
	lk__record(c, 0, m0);
}

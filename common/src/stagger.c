/* The staggered schedules of PGS/PSOR: Poulsen, Abel & Erleben 2010, section 5, eq. (19)-(21). The rows are
 * split into the normal set N (every row with fixed bounds: contact normals, joints, limits, motors) and the
 * friction set T (rows whose bounds come from a normal row through findex):
 *   ESP  one sweep of N with lambda_T frozen, then one sweep of T with lambda_N frozen, and again;
 *   GSP  sweep the set whose error measure is larger, as many times in a row as it stays larger. */
#include "methods.h"

#include "kernel.h"
#include "sweep.h"

#include <stdlib.h>
#include <string.h>

enum { SET_N = 0, SET_T = 1 };

/* Poulsen et al. eq. (19)-(21): with the rows split into N and T,
 *     w_N = A_NN lambda_N + (A_NT lambda_T + b_N) = A_NN lambda_N + b'_N
 *     w_T = A_TT lambda_T + (A_TN lambda_N + b_T) = A_TT lambda_T + b'_T
 * and b'_N, b'_T are frozen while the other set is not swept; they are brought up to date at each switch.
 *
 * What "frozen" costs and saves here.
 * Row form (matrix-free): du = M^-1 (J_N^T lambda_N + J_T^T lambda_T). While N is swept lambda_T does not
 * change, so the lambda_T share of du is exactly the frozen b'_N: the coupling term needs no vector of its
 * own and costs nothing to update at a switch. Poulsen et al. measure a lower time per iteration (Table 2)
 * because a sweep over A_NN (n/3 x n/3) and one over A_TT (2n/3 x 2n/3) touch 1/9 + 4/9 of the entries of
 * a sweep over A; matrix-free, a row update costs O(12) whatever the size of its set, so the split alone
 * cannot save work. What the frozen lambda_N does save: during a friction sweep every friction bound
 * mu |lambda_n| is a constant, computed once per switch (no look-up of the normal row per update), and a
 * friction row whose bound is 0 (separating contact, or mu = 0) is solved without evaluating w at all, its
 * box being the single point lambda = 0. Both give exactly what a plain PGS sweep over T gives.
 * Matrix form (CSR): eq. (20)-(21) literally. A is split once per solve into the blocks A_SS (kept in the
 * sweep) and A_SS' (moved into b'_S); b'_S is computed at each switch by one product with A_SS', and a
 * sweep of S reads only A_SS. ESP switches every sweep, so the total per iteration equals one PGS sweep,
 * but the product has no Gauss-Seidel dependency; GSP often sweeps a set several times in a row and pays
 * for A_SS' once per switch, not once per sweep. */

typedef struct stagger_state {
	lk__ctx *c;
	double w_relax;
	int *rows[2];          /* row indices of N and T, each in row order */
	int count[2];
	double *bound;         /* T: frozen mu |lambda_n| per entry of rows[SET_T] */
	double *t_mu;          /* T: mu and normal row per entry, packed so a switch reads no row record */
	int *t_normal;
	/* matrix form: per set S and entry k (row rows[S][k]), the entries of A in S (in_*) and outside S
	 * (out_*), CSR over the entries of the set; bprime[S][k] is b'_S */
	int *in_ptr[2], *in_col[2], *out_ptr[2], *out_col[2];
	double *in_val[2], *out_val[2], *bprime[2];
	double err[2];         /* GSP: error measure of each set, theta restricted to the set */
} stagger_state;

/* Brings the frozen terms of set `set` up to date before a run of sweeps of it (the other set is frozen
 * from now on). */
static void stag_freeze(stagger_state *s, int set)
{
	const lk_problem *p = s->c->p;
	const double *lambda = s->c->lambda;
	/* the row form's set sweeps read the friction bounds from lambda (lk__pgs_sweep_set), which does not
	 * change in the normal rows while the friction set is swept: the same numbers */
	if (p->form != LK_FORM_MATRIX)
		return;
	if (set == SET_T) {
		const double *mu = s->t_mu;
		const int *f = s->t_normal;
		for (int k = 0; k < s->count[SET_T]; ++k)
			s->bound[k] = mu[k] * fabs(lambda[f[k]]);
	}
	const int *ptr = s->out_ptr[set], *col = s->out_col[set], *idx = s->rows[set];
	const double *val = s->out_val[set];
	double *bp = s->bprime[set];
	for (int k = 0; k < s->count[set]; ++k) {
		double b = p->rows[idx[k]].q;
		for (int e = ptr[k]; e < ptr[k + 1]; ++e)
			b += val[e] * lambda[col[e]];
		bp[k] = b;
	}
}

/* mid(lo, x, hi) for lo <= hi: the same values as lk__clamp (NaN stays NaN), written as two selects that
 * compile to maxsd/minsd rather than to a branch on the sign of w. */
static inline double stag_mid(double x, double lo, double hi)
{
	x = lo > x ? lo : x;
	return x > hi ? hi : x;
}

/* w of entry k of set `set` with the other set frozen. */
static inline __attribute__((always_inline)) double stag_w(const stagger_state *s, int set, int k, const double *lambda)
{
	double w = s->bprime[set][k];
	const int *col = s->in_col[set];
	const double *val = s->in_val[set];
	for (int e = s->in_ptr[set][k]; e < s->in_ptr[set][k + 1]; ++e)
		w += val[e] * lambda[col[e]];
	return w;
}

/* One projected Gauss-Seidel/SOR sweep of set `set`, the other frozen (stag_freeze must have run since
 * the other set last changed); the matrix form here, the row form in lk__pgs_sweep_set. With want_err, *err
 * receives 1/2 sum H_i^2 over the set (H of Poulsen et al. eq. (22)), each H_i taken just before row i's
 * update: the error the sweep found, at no extra row evaluation. Returns the largest |change| of lambda. */
static inline __attribute__((always_inline)) double stag_sweep_impl(stagger_state *s, int set, int want_err,
                                                                    double *err)
{
	lk__ctx *c = s->c;
	const lk_problem *p = c->p;
	if (p->form == LK_FORM_ROWS) /* PGS's production sweep over the set (pgs.c) */
		return lk__pgs_sweep_set(c, s->rows[set], s->count[set], s->w_relax, want_err ? err : NULL);
	double *lambda = c->lambda;
	const int *idx = s->rows[set];
	const int m = s->count[set];
	const double wr = s->w_relax;
	double max_change = 0.0, hh = 0.0;
	for (int k = 0; k < m; ++k) {
		int i = idx[k];
		const lk__row *r = &p->rows[i];
		double l = lambda[i], lo, hi;
		if (set == SET_T) {
			hi = s->bound[k];
			lo = -hi;
			if (hi == 0.0) {
				/* the box is {0}: lambda = 0 whatever w is, and H = lambda */
				if (want_err)
					hh += l * l;
				if (l != 0.0) {
					lambda[i] = 0.0;
					if (!(fabs(l) <= max_change))
						max_change = fabs(l);
				}
				continue;
			}
		} else {
			lo = r->lo;
			hi = r->hi;
		}
		double w = stag_w(s, set, k, lambda);
		if (want_err) {
			double h = l - stag_mid(l - w, lo, hi);
			hh += h * h;
		}
		double next = stag_mid(l - wr * w / r->diag, lo, hi);
		double d = next - l;
		if (d != 0.0)
			lambda[i] = next;
		/* written so that a NaN change wins */
		if (!(fabs(d) <= max_change))
			max_change = fabs(d);
	}
	lk__count(c, m, LK_WORK_SWEEP_ROW);
	if (want_err)
		*err = 0.5 * hh;
	return max_change;
}

/* the four specialisations the loops use (stag_sweep_impl is always inlined, so set and want_err are
 * constants in each and the tests on them vanish) */
static double sweep_n(stagger_state *s)
{
	return stag_sweep_impl(s, SET_N, 0, NULL);
}
static double sweep_t(stagger_state *s)
{
	return stag_sweep_impl(s, SET_T, 0, NULL);
}
static double sweep_n_err(stagger_state *s, double *err)
{
	return stag_sweep_impl(s, SET_N, 1, err);
}
static double sweep_t_err(stagger_state *s, double *err)
{
	return stag_sweep_impl(s, SET_T, 1, err);
}

/* theta restricted to one set at the current iterate, evaluating w of its rows (no update). The frozen
 * terms of the set may be out of date here, so w and the bounds come from lambda and du directly. */
static double stag_exact_error(stagger_state *s, int set)
{
	lk__ctx *c = s->c;
	const lk_problem *p = c->p;
	const double *lambda = c->lambda;
	double hh = 0.0;
	for (int k = 0; k < s->count[set]; ++k) {
		int i = s->rows[set][k];
		double lo, hi;
		lk__bounds(&p->rows[i], lambda, &lo, &hi);
		double w = p->form == LK_FORM_ROWS ? lk__row_w(&p->rows[i], c->du, lambda[i]) : lk__csr_w(p, i, lambda);
		/* lk_natural_residual, inlined */
		double h = lambda[i] - stag_mid(lambda[i] - w, lo, hi);
		hh += h * h;
	}
	return 0.5 * hh;
}

static lk_status stag_setup(stagger_state *s, lk__ctx *c)
{
	lk_problem *p = c->p;
	int n = c->n;
	memset(s, 0, sizeof *s);
	s->c = c;
	/* 1 for pgs unless w= is given, as in lk__solve_pgs; the automatic w is PGS's own (pgs.c) */
	s->w_relax = c->cfg->sor_w == LK_SOR_AUTO ? 1.0 : c->cfg->sor_w;
	int *set_of = lk__arena_alloc(&p->arena, ((size_t)n + 1) * sizeof(int));
	s->rows[SET_N] = lk__arena_alloc(&p->arena, ((size_t)n + 1) * sizeof(int));
	s->rows[SET_T] = lk__arena_alloc(&p->arena, ((size_t)n + 1) * sizeof(int));
	s->bound = lk__arena_alloc(&p->arena, ((size_t)n + 1) * sizeof(double));
	s->t_mu = lk__arena_alloc(&p->arena, ((size_t)n + 1) * sizeof(double));
	s->t_normal = lk__arena_alloc(&p->arena, ((size_t)n + 1) * sizeof(int));
	if (!set_of || !s->rows[SET_N] || !s->rows[SET_T] || !s->bound || !s->t_mu || !s->t_normal)
		goto oom;
	for (int i = 0; i < n; ++i) {
		const lk__row *r = &p->rows[i];
		int set = lk__is_friction(r) ? SET_T : SET_N;
		set_of[i] = set;
		if (set == SET_T) {
			s->t_mu[s->count[SET_T]] = r->mu;
			s->t_normal[s->count[SET_T]] = r->findex;
		}
		s->rows[set][s->count[set]++] = i;
	}
	if (p->form != LK_FORM_MATRIX)
		return LK_OK;
	for (int set = 0; set < 2; ++set) {
		int m = s->count[set], nin = 0, nout = 0;
		for (int k = 0; k < m; ++k) {
			int i = s->rows[set][k];
			for (int e = p->row_ptr[i]; e < p->row_ptr[i + 1]; ++e) {
				if (set_of[p->col[e]] == set)
					++nin;
				else
					++nout;
			}
		}
		s->in_ptr[set] = lk__arena_alloc(&p->arena, ((size_t)m + 1) * sizeof(int));
		s->out_ptr[set] = lk__arena_alloc(&p->arena, ((size_t)m + 1) * sizeof(int));
		s->in_col[set] = lk__arena_alloc(&p->arena, ((size_t)nin + 1) * sizeof(int));
		s->out_col[set] = lk__arena_alloc(&p->arena, ((size_t)nout + 1) * sizeof(int));
		s->in_val[set] = lk__arena_alloc(&p->arena, ((size_t)nin + 1) * sizeof(double));
		s->out_val[set] = lk__arena_alloc(&p->arena, ((size_t)nout + 1) * sizeof(double));
		s->bprime[set] = lk__arena_alloc(&p->arena, ((size_t)m + 1) * sizeof(double));
		if (!s->in_ptr[set] || !s->out_ptr[set] || !s->in_col[set] || !s->out_col[set] || !s->in_val[set] ||
		    !s->out_val[set] || !s->bprime[set])
			goto oom;
		nin = nout = 0;
		for (int k = 0; k < m; ++k) {
			int i = s->rows[set][k];
			s->in_ptr[set][k] = nin;
			s->out_ptr[set][k] = nout;
			for (int e = p->row_ptr[i]; e < p->row_ptr[i + 1]; ++e) {
				if (set_of[p->col[e]] == set) {
					s->in_col[set][nin] = p->col[e];
					s->in_val[set][nin++] = p->val[e];
				} else {
					s->out_col[set][nout] = p->col[e];
					s->out_val[set][nout++] = p->val[e];
				}
			}
		}
		s->in_ptr[set][m] = nin;
		s->out_ptr[set][m] = nout;
	}
	return LK_OK;
oom:
	return lk__fail(p, LK_ERR_NO_MEMORY, "order %s: out of memory for %d rows", lk_order_name(c->cfg->order), n);
}

static void trace_step(lk__stagger_trace *t, int set, const double err[2])
{
	if (!t)
		return;
	if (t->steps && t->count < t->capacity) {
		t->steps[t->count].set = set;
		t->steps[t->count].err[0] = err[0];
		t->steps[t->count].err[1] = err[1];
	}
	++t->count;
}

/* ESP. One iteration = one sweep of N then one of T: n row updates, the work of one PGS sweep. Both
 * schedules count their set sweeps in inner_iterations. */
static void run_esp(stagger_state *s, lk__stagger_trace *trace)
{
	lk__ctx *c = s->c;
	const double none[2] = {0.0, 0.0};
	c->step_work = c->n * LK_WORK_SWEEP_ROW;
	for (int it = 1;; ++it) {
		double change = 0.0, d;
		if (s->count[SET_N] > 0) {
			trace_step(trace, SET_N, none);
			stag_freeze(s, SET_N);
			d = sweep_n(s);
			++c->inner_iterations;
			if (!(d <= change))
				change = d;
		}
		if (s->count[SET_T] > 0) {
			trace_step(trace, SET_T, none);
			stag_freeze(s, SET_T);
			d = sweep_t(s);
			++c->inner_iterations;
			if (!(d <= change))
				change = d;
		}
		c->iterations = it;
		c->stop = lk__monitor(c, it, change);
		if (c->stop != LK_STOP_NONE)
			return;
	}
}

/* GSP. The error measure of a set is theta (Poulsen et al. eq. 23) restricted to it. The set just swept
 * gets the value its sweep found (free: the sweep evaluates w anyway); the other set keeps its last value.
 * A kept value goes stale as the swept set moves the coupling term: without a refresh, a cold start (every
 * friction bound 0, so the friction error exactly 0) would sweep the normal set for ever. So a set whose
 * value has not been renewed while the other set swept n rows (one iteration's work) is evaluated exactly
 * (an evaluation costs about half a sweep of it); the allowance doubles each time that happens without
 * the set being chosen, up to 16 n, and starts over when it is swept. Long runs on one set (Poulsen et al.
 * observe that GSP may "iterate over one set of impulses until convergence") are thus allowed at a small
 * cost, and a plain alternation never pays for a refresh. Each sweep's own error is the residual its rows
 * had just before their update, so it lags by one sweep: evaluating both sets exactly before every choice
 * converges better per iteration on the loosely and non-structured problems of the benchmark, but costs
 * about half a sweep of all rows per choice, more than it gains. The monitor's own merit
 * evaluations are deliberately not used: the schedule, and so lambda, must not depend on how often the
 * merit is checked or whether a history is kept.
 * One iteration = sweeps whose sets add up to n rows, the work of one PGS sweep; the monitor runs when the
 * running total of swept rows passes the next multiple of n. */
#define GSP_STALE_ROWS 1
#define GSP_STALE_MAX 16
static void run_gsp(stagger_state *s, lk__stagger_trace *trace)
{
	lk__ctx *c = s->c;
	const int64_t n = c->n;
	s->err[SET_N] = stag_exact_error(s, SET_N);
	s->err[SET_T] = stag_exact_error(s, SET_T);
	int64_t work = 0, since[2] = {0, 0}, allow[2] = {GSP_STALE_ROWS * n, GSP_STALE_ROWS * n};
	int it = 0, last = -1;
	double change = 0.0;
	for (;;) {
		int set;
		if (s->count[SET_T] == 0)
			set = SET_N;
		else if (s->count[SET_N] == 0)
			set = SET_T;
		else /* ties go to N: normal impulses set the friction bounds */
			set = s->err[SET_T] > s->err[SET_N] ? SET_T : SET_N;
		/* a set sweep that the budget cannot pay for is not begun */
		if ((c->cfg->budget > 0 || c->cfg->time_budget_us > 0) && lk__work_left(c) < s->count[set] - 1e-9 * n) {
			c->iterations = it > 0 ? it : 1;
			c->stop = LK_STOP_BUDGET;
			return;
		}
		trace_step(trace, set, s->err);
		if (set != last)
			stag_freeze(s, set);
		double d = set == SET_N ? sweep_n_err(s, &s->err[SET_N]) : sweep_t_err(s, &s->err[SET_T]);
		++c->inner_iterations;
		if (!(d <= change))
			change = d;
		last = set;
		work += s->count[set];
		since[set] = 0;
		allow[set] = GSP_STALE_ROWS * n;
		int other = 1 - set;
		since[other] += s->count[set];
		if (s->count[other] > 0 && since[other] >= allow[other]) {
			s->err[other] = stag_exact_error(s, other);
			since[other] = 0;
			if (allow[other] < GSP_STALE_MAX * n)
				allow[other] *= 2;
		}
		if (work < n * (it + 1))
			continue;
		++it;
		c->iterations = it;
		c->stop = lk__monitor(c, it, change);
		if (c->stop != LK_STOP_NONE)
			return;
		change = 0.0;
	}
}

lk_status lk__staggered_run(lk__ctx *c, lk__stagger_trace *trace)
{
	if (trace)
		trace->count = 0;
	if (c->cfg->order != LK_ORDER_ESP && c->cfg->order != LK_ORDER_GSP)
		return lk__fail(c->p, LK_ERR_UNSUPPORTED, "order %s is not a staggered schedule",
		                lk_order_name(c->cfg->order));
	stagger_state s;
	lk_status st = stag_setup(&s, c);
	if (st != LK_OK)
		return st;
	if (c->cfg->order == LK_ORDER_ESP)
		run_esp(&s, trace);
	else
		run_gsp(&s, trace);
	return LK_OK;
}

lk_status lk__solve_staggered(lk__ctx *c)
{
	return lk__staggered_run(c, NULL);
}

lk_status lk__solve_gauss_seidel(lk__ctx *c)
{
	if (c->cfg->order == LK_ORDER_ESP || c->cfg->order == LK_ORDER_GSP)
		return lk__solve_staggered(c);
	return lk__solve_pgs(c);
}

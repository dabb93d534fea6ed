/* Minimum-map Newton and Fischer-Newton for the boxed LCP, matrix-free (Erleben 2013 sec. 5.4-5.5 and 6).
 *
 * Both methods solve a nonsmooth root-finding problem G(lambda) = 0 whose roots are the solutions:
 *   minimum map   H_i = lambda_i - mid(lo_i, lambda_i - w_i, hi_i)   (eq. 60-61; min(x, y) when lo = 0, hi = inf)
 *   Fischer       F_i = lk_fischer_boxed(lambda_i, w_i, lo_i, hi_i)   (eq. 84; phi(x, y) when lo = 0, hi = inf)
 * with w = A lambda + q. Each iteration solves a generalized Newton equation with a Krylov method that sees A
 * only through products (the row form through du = M^-1 J^T x, the matrix form through its CSR rows), then
 * globalizes with the projected Armijo back-tracking line search of sec. 5.4 on the merit 1/2 ||G||^2
 * (eq. 64 / 103).
 *
 * Boxed rows with fixed bounds. Rows strictly inside their box behave like the paper's index set A
 * (H_i = w_i), rows at or beyond a bound like F (H_i = lambda_i - bound), so eq. (77)-(80) carry over
 * unchanged; the projection of the line search is the clamp onto [lo, hi] instead of max(0, .). The
 * boxed Fischer function is lk_fischer_boxed, differentiated by the chain rule.
 *
 * Friction rows (findex >= 0) have bounds -/+ mu |lambda_f| that move with their normal row f. They are
 * iterated as a fixed point: each iteration reads the bounds at the current iterate and takes the Newton
 * direction of that fixed-bound boxed problem. The line search then projects every trial point onto the
 * true feasible set (fixed boxes first, then each friction row onto the box of its projected normal) and
 * measures the true merit there, with the bounds of the trial point.
 * Guaranteed: every iterate respects its bounds; no accepted step raises the true merit (also with
 * friction); the iteration always stops with a reason and never runs on NaN; the merit is the true one,
 * so a merit of zero means a solution of the friction problem, not of some frozen-bound problem.
 * Not guaranteed: convergence from every start (the merit has stationary points that are not solutions:
 * LK_STOP_LOCAL_MINIMUM); a descent Newton direction (its Jacobian may be singular, as for the redundant
 * contacts of a box on a plane, and for friction rows the direction ignores how the bounds move, so the
 * true merit may not decrease along it: then the gradient fall-back of sec. 6, and LK_STOP_NON_DESCENT if
 * that fails too); the quadratic rate near solutions where friction rows sit on a bound. Carrying the
 * bounds' derivative (+/- mu dlambda_f) into the Jacobian was tried: it couples F rows to A columns, makes
 * the reduced system non-symmetric and harder for GMRES, and solved fewer of 20 generated box stacks
 * (Fischer-Newton 14 against 16, the minimum map 3 against 10, with GMRES(50) and forcing 0.1) while
 * helping only on large sphere packings, so the fixed point stays.
 *
 * Guards (docs/reliability.md). The diagonal: Erleben 2013 Table 3 puts no condition on A for either Newton
 * method, and sec. 4.1 names them for the contact LCP of eq. (27), whose A has a zero diagonal block, so the
 * matrix form runs whatever its diagonal: a zero A_ii there says nothing about the rest of row i (eq. 27's
 * beta rows couple through mu and -e^T), the minimum map's Jacobian takes the whole row, Fischer's J_ii = p_i
 * + q_i A_ii, and the Jacobi scalings fall back on 1 where A_ii <= 0. In the row form A = J M^-1 J^T + S is
 * positive semidefinite, and A_ii = J_i M^-1 J_i^T + s_i = 0 means M^-1 J_i^T = 0 and s_i = 0: row and
 * column i of A vanish (|A_ij|^2 <= A_ii A_jj), lambda_i moves nothing and w_i = q_i whatever lambda is.
 * Such a row (an engine's row between two kinematic bodies, or along a direction its bodies cannot move,
 * without CFM) gives the minimum map a zero Jacobian row and Fischer the scalar equation phi(lambda_i, q_i)
 * = 0, which has no root when q_i < 0 and hi_i = inf: lambda_i then grows towards 1e10, and through findex
 * into its friction rows' bounds. The row form therefore stops with LK_STOP_BAD_DIAGONAL before the first
 * iteration, as the Gauss-Seidel methods do, so that an adapter falls back on its engine whichever method
 * it runs.
 * Divergence. The line search never raises the method's own merit, and RES, theta and the Fischer merit bound
 * one another within constant factors ((2 - sqrt 2) |min(a, b)| <= |phi(a, b)| <= (2 + sqrt 2) |min(a, b)|,
 * Tseng 1996, for a row with one bound; a boxed row composes two such functions), so the monitor's growth rule
 * (1e8 times the start) can only fire on the merit "modified"; it runs every iteration (lk__monitor_metrics:
 * the metrics are computed here anyway). What does diverge is the iterate: on a problem without a solution
 * whose merit falls towards its infimum along a ray (a body pushed apart by two opposite contacts that both
 * ask for separation, A = [1 -1; -1 1], q = (-1, -1)), Fischer-Newton steps out along the ray, lambda_k+1 ~ 2
 * lambda_k^2, until rounding hides the gradient and the iteration looks like a local minimum at lambda ~ 1e9.
 * An iteration that ends without a solution (local minimum, no descent, iteration limit) with lambda beyond
 * LK_DIVERGENCE_FACTOR times the problem's impulse scale has diverged: the best iterate (or the start, if that
 * one is as far out) is handed back with LK_STOP_DIVERGED. A run that converges is never reclassified,
 * whatever the size of its lambda.
 */
#include "methods.h"

#include "kernel.h"
#include "krylov.h"
#include "parallel.h"
#include "sweep.h"

#include <float.h>
#include <string.h>

typedef struct newton_state {
	lk__ctx *c;
	lk_problem *p;
	const lk_newton_config *cfg;
	int n;
	int fischer;
	int friction;        /* the problem has rows with variable bounds */
	size_t ndu;          /* (nbodies + 1) * LK_DU_STRIDE */
	double *lo, *hi;     /* bounds at the current iterate */
	double *G;           /* H (minimum map) or F (Fischer) at the current iterate */
	double *dx;          /* search direction */
	double *xt, *wt;     /* line-search trial point and its w */
	double *dut;         /* row form: du of the trial point */
	double *tdu;         /* row form: du scratch of the products */
	double *v1, *v2;     /* n-vectors for the products */
	double *P, *Q;       /* Fischer: the diagonals D_p, D_q of Theorem 5.3 */
	double *scale;       /* right Jacobi scaling of the Krylov operator */
	double *rhs, *sol;   /* the Krylov system */
	double *xfull;       /* matrix form: reduced vector scattered to full length (zero outside A) */
	double *zs;          /* row form on threads: the reduced vector times the scaling */
	double *ones;
	int *idx;            /* minimum map: the rows of A (eq. 77) */
	int *pos;            /* minimum map: position of a row in idx, -1 for rows of F */
	int na;
	double fd_scale;     /* approximation strategy: (1 + ||x||) fd_h */
	lk__arena kry;       /* Krylov scratch carved before the loop */
} newton_state;

/* ---------------------------------------------------------------------------------- products with A */

/* The work of one product with A or one evaluation of w (lk__count units). A Newton iteration costs at least
 * NEWTON_MIN_UNITS of them: a Krylov product, the slope's product and one line-search evaluation; under a
 * budget an iteration starts only when the work left pays for them, and the line search stops when it
 * cannot pay for another evaluation, so that the method ends within its budget. */
#define NEWTON_MIN_UNITS 3
/* The most PGS sweeps of the automatic warm-up (pgs_warm=-1, lk__solve_newton). */
#define NEWTON_WARM_MAX 25

static double newton_unit(const newton_state *t)
{
	return LK_WORK_NEWTON_ROW * (double)t->n;
}

/* Whether the work budget left pays for `units` more products or evaluations (always without one). The time
 * budget is the monitor's: it cannot be foreseen, and it stops the method after an iteration, never before the
 * first. */
static int affords(const newton_state *t, int units)
{
	return lk__work_budget_left(t->c) >= units * newton_unit(t);
}

/* The row form's products on the solve's threads (product.c): du from each body's rows gathered in row order,
 * the sum lk__recompute_du makes, then y_k = s_k x_k + J_k du over shares of the rows (all of them, or the
 * rows idx of A): the same numbers to the bit as on one thread. */
static int on_threads(const newton_state *t)
{
	return t->p->form == LK_FORM_ROWS && t->c->body_rows && (t->c->pool || t->c->ex);
}

typedef struct newton_rows_job {
	const newton_state *t;
	const double *x;
	double *y;
	int reduced; /* x and y over the rows idx[0 .. na) */
} newton_rows_job;

static void newton_rows(void *arg, int tt, int nt)
{
	const newton_rows_job *j = arg;
	const newton_state *t = j->t;
	int b, e;
	lk__share(j->reduced ? t->na : t->n, tt, nt, &b, &e);
	for (int k = b; k < e; ++k) {
		const lk__row *r = &t->p->rows[j->reduced ? t->idx[k] : k];
		j->y[k] = r->s * j->x[k] + lk__row_dot_ref(r, t->tdu, 0.0);
	}
}

static void product_on_threads(newton_state *t, const int *pos, const double *x, double *y)
{
	lk__gather_slots(t->c, t->c->body_rows, pos, x, t->tdu);
	newton_rows_job j = {t, x, y, pos != NULL};
	lk__ctx_run(t->c, newton_rows, &j);
}

/* y = A x (no q). Row form: A = J M^-1 J^T + S, through du = M^-1 J^T x (docs/maths.md). */
static void apply_A(newton_state *t, const double *x, double *y)
{
	const lk_problem *p = t->p;
	lk__count(t->c, t->n, LK_WORK_NEWTON_ROW);
	if (on_threads(t)) {
		product_on_threads(t, NULL, x, y);
	} else if (p->form == LK_FORM_ROWS) {
		lk__recompute_du(t->p, x, t->tdu);
		for (int i = 0; i < t->n; ++i)
			y[i] = p->rows[i].s * x[i] + lk__row_dot_ref(&p->rows[i], t->tdu, 0.0);
	} else {
		for (int i = 0; i < t->n; ++i) {
			double v = 0;
			for (int k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k)
				v += p->val[k] * x[p->col[k]];
			y[i] = v;
		}
	}
}

/* y = A^T x; the row form's A is symmetric, the matrix form's need not be (Erleben 2013 eq. 27). */
static void apply_AT(newton_state *t, const double *x, double *y)
{
	const lk_problem *p = t->p;
	if (p->form == LK_FORM_ROWS) {
		apply_A(t, x, y);
		return;
	}
	memset(y, 0, (size_t)t->n * sizeof(double));
	for (int i = 0; i < t->n; ++i) {
		double xi = x[i];
		if (xi == 0.0)
			continue;
		for (int k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k)
			y[p->col[k]] += p->val[k] * xi;
	}
}

/* w = A x + q, and du of x in the row form (on the solve's threads when it has them: lk__product). */
static void eval_w(newton_state *t, const double *x, double *w, double *du)
{
	const lk_problem *p = t->p;
	if (p->form == LK_FORM_ROWS) {
		lk__product(t->c, t->c->body_rows, x, w, 1, du);
	} else {
		for (int i = 0; i < t->n; ++i)
			w[i] = lk__csr_w(p, i, x);
	}
}

/* ---------------------------------------------------------------------------- merit and projection */

static double g_value(const newton_state *t, double x, double w, double lo, double hi)
{
	return t->fischer ? lk_fischer_boxed(x, w, lo, hi) : lk_natural_residual(x, w, lo, hi);
}

/* 1/2 ||G(x)||^2 (eq. 64 / 103) with the bounds read from x itself; G (may be NULL) receives the rows. */
static double merit(const newton_state *t, const double *x, const double *w, double *G)
{
	double s = 0;
	for (int i = 0; i < t->n; ++i) {
		double lo, hi;
		lk__bounds(&t->p->rows[i], x, &lo, &hi);
		double g = g_value(t, x[i], w[i], lo, hi);
		if (G)
			G[i] = g;
		s += g * g;
	}
	return 0.5 * s;
}

/* out = the projection of x + tau dx onto the feasible set: fixed boxes first, then each friction row onto
 * the box its (already projected) normal row gives it. The set is convex (boxes times friction wedges). */
static void project(const newton_state *t, const double *x, double tau, const double *dx, double *out)
{
	const lk__row *rows = t->p->rows;
	for (int i = 0; i < t->n; ++i) {
		double v = x[i] + tau * dx[i];
		out[i] = rows[i].findex >= 0 ? v : lk__clamp(v, rows[i].lo, rows[i].hi);
	}
	if (!t->friction)
		return;
	for (int i = 0; i < t->n; ++i) {
		if (rows[i].findex < 0)
			continue;
		double lo, hi;
		lk__bounds(&rows[i], out, &lo, &hi);
		out[i] = lk__clamp(out[i], lo, hi);
	}
}

static double norm2(int n, const double *v)
{
	double s = 0;
	for (int i = 0; i < n; ++i)
		s += v[i] * v[i];
	return sqrt(s);
}

/* ------------------------------------------------------------------ Fischer: the generalized Jacobian */

/* The gradient (ga, gb) of ||(a, b)|| at (a, b), or the strategy's choice where it does not exist
 * (Erleben 2013 sec. 5.5: random, zero, perturbation; eq. 90-91, 98). The approximation strategy needs an
 * analytic Jacobian only for scaling and for the gradient fall-back and takes the perturbation one. */
static void norm_grad(newton_state *t, double a, double b, double *ga, double *gb)
{
	double r = hypot(a, b);
	lk_fischer_strategy s = t->cfg->strategy;
	if ((s == LK_FISCHER_PERTURBATION || s == LK_FISCHER_APPROXIMATION) && r < t->cfg->perturbation) {
		/* x'_i = eps in place of x_i; a pair within eps of (0, 0) counts as x_i = y_i = 0 */
		double e = t->cfg->perturbation;
		double re = hypot(e, b);
		*ga = e / re;
		*gb = b / re;
		return;
	}
	if (r > 0) {
		*ga = a / r;
		*gb = b / r;
		return;
	}
	if (s == LK_FISCHER_RANDOM) {
		/* a uniform point of the unit disk: any (a_i, b_i) with ||(a_i, b_i)|| <= 1 */
		double ang = 2.0 * 3.14159265358979323846 * lk__rng_uniform(&t->c->rng);
		double rad = sqrt(lk__rng_uniform(&t->c->rng));
		*ga = rad * cos(ang);
		*gb = rad * sin(ang);
	} else {
		*ga = 0;
		*gb = 0;
	}
}

/* dF_i = P dlambda_i + Q dw_i (Theorem 5.3, eq. 96-101), by the chain rule through
 * the boxed form of lk_fischer_boxed: phi(lambda - lo, phi(hi - lambda, -w)) and its one-sided reductions.
 * P and Q are never positive, so J_ii = P + Q A_ii has no cancellation where A_ii >= 0 (every row-form
 * problem; a matrix-form A_ii < 0 may cancel, and fischer_jacobian then scales by 1). */
static void fischer_row(newton_state *t, double x, double w, double lo, double hi, double *P, double *Q)
{
	int has_lo = isfinite(lo), has_hi = isfinite(hi);
	double ga, gb;
	if (has_lo && has_hi) {
		double a = x - lo, c = hi - x, d = -w;
		double g = hypot(c, d) - c - d;
		double gc, gd;
		norm_grad(t, c, d, &gc, &gd);
		norm_grad(t, a, g, &ga, &gb);
		/* g = phi(c, d): dg = (gc - 1) dc + (gd - 1) dd, dc = dhi - dx, dd = -dw */
		*P = (ga - 1.0) + (gb - 1.0) * (1.0 - gc);
		*Q = (gb - 1.0) * (1.0 - gd);
		return;
	}
	if (has_lo) {
		norm_grad(t, x - lo, w, &ga, &gb);
		*P = ga - 1.0;
		*Q = gb - 1.0;
		return;
	}
	if (has_hi) {
		norm_grad(t, hi - x, -w, &ga, &gb);
		*P = 1.0 - ga;
		*Q = 1.0 - gb;
		return;
	}
	*P = 0;
	*Q = 1;
}

/* ---------------------------------------------------------------------------------- Krylov operators */

/* Minimum map: y = A_AA (scale .* z) over the rows of A (eq. 80), matrix-free. */
static void mv_reduced(void *user, const double *z, double *y)
{
	newton_state *t = user;
	const lk_problem *p = t->p;
	if (on_threads(t)) {
		for (int k = 0; k < t->na; ++k)
			t->zs[k] = z[k] * t->scale[k];
		product_on_threads(t, t->pos, t->zs, y);
	} else if (p->form == LK_FORM_ROWS) {
		memset(t->tdu, 0, t->ndu * sizeof(double));
		for (int k = 0; k < t->na; ++k) {
			double v = z[k] * t->scale[k];
			if (v != 0.0)
				lk__row_apply(&p->rows[t->idx[k]], t->tdu, v);
		}
		for (int k = 0; k < t->na; ++k) {
			const lk__row *r = &p->rows[t->idx[k]];
			y[k] = r->s * (z[k] * t->scale[k]) + lk__row_dot_ref(r, t->tdu, 0.0);
		}
	} else {
		for (int k = 0; k < t->na; ++k)
			t->xfull[t->idx[k]] = z[k] * t->scale[k];
		for (int k = 0; k < t->na; ++k) {
			int i = t->idx[k];
			double v = 0;
			for (int j = p->row_ptr[i]; j < p->row_ptr[i + 1]; ++j)
				v += p->val[j] * t->xfull[p->col[j]];
			y[k] = v;
		}
	}
}

/* Fischer: y = J v, v = scale .* z, J = D_p + D_q A (eq. 96). */
static void mv_fischer(void *user, const double *z, double *y)
{
	newton_state *t = user;
	for (int i = 0; i < t->n; ++i)
		t->v1[i] = z[i] * t->scale[i];
	apply_A(t, t->v1, t->v2);
	for (int i = 0; i < t->n; ++i)
		y[i] = t->P[i] * t->v1[i] + t->Q[i] * t->v2[i];
}

/* Fischer, approximation strategy: J v ~ (F(x + h v) - F(x)) / h (eq. 102). w is affine in x, so
 * w(x + h v) = w + h A v exactly and only F itself (with its bounds) is differenced. */
static void mv_fischer_fd(void *user, const double *z, double *y)
{
	newton_state *t = user;
	const double *x = t->c->lambda, *w = t->c->w;
	for (int i = 0; i < t->n; ++i)
		t->v1[i] = z[i] * t->scale[i];
	double nv = norm2(t->n, t->v1);
	if (!(nv > 0) || !isfinite(nv)) {
		memset(y, 0, (size_t)t->n * sizeof(double));
		return;
	}
	apply_A(t, t->v1, t->v2);
	double h = t->fd_scale / nv;
	for (int i = 0; i < t->n; ++i)
		t->xt[i] = x[i] + h * t->v1[i];
	for (int i = 0; i < t->n; ++i) {
		double lo, hi;
		lk__bounds(&t->p->rows[i], t->xt, &lo, &hi);
		y[i] = (lk_fischer_boxed(t->xt[i], w[i] + h * t->v2[i], lo, hi) - t->G[i]) / h;
	}
}

/* ------------------------------------------------------------------------------- Newton directions */

/* Forcing term of eq. (71)/(105): ||G + J dx|| <= eta ||G||. Any eta < 1 gives a descent direction;
 * eta_k = 0.9 (||G_k|| / ||G_k-1||)^2, capped by cfg->forcing (Eisenstat & Walker 1996, choice 2, with
 * their safeguard), keeps the early systems cheap and the late ones accurate enough for the fast rate the
 * paper reports (Fig. 2) instead of the linear rate of a fixed eta. */
static double forcing_term(const newton_state *t, double gnorm, double gprev, double g0, double eta_prev)
{
	double eta = t->cfg->forcing;
	if (gprev > 0 && isfinite(gprev)) {
		double ratio = gnorm / gprev;
		eta = fmin(t->cfg->forcing, 0.9 * ratio * ratio);
		double safe = 0.9 * eta_prev * eta_prev;
		if (safe > 0.1)
			eta = fmax(eta, fmin(safe, t->cfg->forcing));
	}
	/* eta_k <= (||G_k|| / ||G_0||)^(1/2): eta -> 0 as G -> 0, so the rate is superlinear (order 3/2, Dembo,
	 * Eisenstat & Steihaug 1982) even where the ratio above stays large because the outer iteration is
	 * still slow (friction rows, whose moving bounds the Newton direction ignores) */
	if (g0 > 0)
		eta = fmin(eta, sqrt(gnorm / g0));
	/* below this GMRES only chases rounding */
	return fmax(eta, 1e-13);
}

static lk_status krylov(newton_state *t, int m, lk__matvec_fn op, const double *b, double *x, double tol, int use_cg,
                        const double *inv_diag)
{
	lk__arena_reset(&t->kry);
	lk__krylov_result kr;
	lk_status st;
	/* under a budget, no more products than the work left pays for after the slope's product and one
	 * line-search evaluation (at least one: the iteration began only when it could pay for three). GMRES
	 * takes one product beyond its iterations at each restart (the true residual; none at the first cycle,
	 * which starts from x = 0) */
	int cap = t->cfg->krylov_max;
	double left = lk__work_left(t->c); /* 0 once a time budget is spent: one product then */
	if (isfinite(left)) {
		double products = floor(left / newton_unit(t)) - (NEWTON_MIN_UNITS - 1);
		int k = products < 1 ? 1 : products < cap ? (int)products : cap;
		const int restart = t->cfg->gmres_restart < 1 ? 1 : t->cfg->gmres_restart;
		while (!use_cg && k > 1 && k + (k - 1) / restart > products)
			--k;
		cap = k;
	}
	if (use_cg)
		st = lk__cg(&t->kry, m, op, t, inv_diag, b, x, tol, cap, &kr);
	else
		st = lk__gmres(&t->kry, m, op, t, b, x, tol, t->cfg->gmres_restart, cap, &kr);
	if (st == LK_OK)
		t->c->inner_iterations += kr.iterations;
	return st;
}

/* Minimum-map Newton direction, Erleben 2013 eq. (77)-(80): dx_F = -H_F, A_AA dx_A = A_AF H_F - H_A. The
 * bounds count as fixed here (friction rows: see the top of the file). */
static lk_status minmap_direction(newton_state *t, double eta)
{
	const lk_problem *p = t->p;
	const double *x = t->c->lambda, *w = t->c->w;
	int n = t->n;
	t->na = 0;
	for (int i = 0; i < n; ++i) {
		double s = x[i] - w[i];
		if (s <= t->lo[i] || s >= t->hi[i]) {
			/* F: H_i = lambda_i - bound, its row of BH is e_i (eq. 76) */
			t->pos[i] = -1;
			t->dx[i] = -t->G[i];
		} else {
			/* A: H_i = w_i, its row of BH is A_i* (eq. 75) */
			t->pos[i] = t->na;
			t->idx[t->na++] = i;
			t->dx[i] = 0;
		}
	}
	if (t->na == 0)
		return LK_OK;
	apply_A(t, t->dx, t->v2); /* A_*F dx_F = -A_*F H_F */
	int use_cg = t->cfg->krylov == LK_KRYLOV_CG;
	for (int k = 0; k < t->na; ++k) {
		int i = t->idx[k];
		t->rhs[k] = -t->G[i] - t->v2[i];
		t->sol[k] = 0;
		double d = p->rows[i].diag;
		t->scale[k] = d > 0 && isfinite(1.0 / d) ? 1.0 / d : 1.0;
	}
	/* CG needs a symmetric operator: the Jacobi scaling goes in as its preconditioner instead */
	double *inv_diag = NULL;
	if (use_cg) {
		memcpy(t->rhs + n, t->scale, (size_t)t->na * sizeof(double));
		inv_diag = t->rhs + n;
		for (int k = 0; k < t->na; ++k)
			t->scale[k] = 1.0;
	}
	if (p->form == LK_FORM_MATRIX)
		memset(t->xfull, 0, (size_t)n * sizeof(double));
	/* the full residual equals the reduced one (the F rows are solved exactly): ||r_A|| <= eta ||H|| */
	double bn = norm2(t->na, t->rhs);
	double tol = bn > 0 ? eta * norm2(n, t->G) / bn : 1.0;
	lk_status st = krylov(t, t->na, mv_reduced, t->rhs, t->sol, tol, use_cg, inv_diag);
	if (st != LK_OK)
		return st;
	for (int k = 0; k < t->na; ++k)
		t->dx[t->idx[k]] = t->sol[k] * t->scale[k];
	return LK_OK;
}

/* The Jacobian at the current iterate: D_p, D_q and the Jacobi scaling 1 / J_ii. */
static void fischer_jacobian(newton_state *t)
{
	const lk_problem *p = t->p;
	const double *x = t->c->lambda, *w = t->c->w;
	for (int i = 0; i < t->n; ++i) {
		double P, Q;
		fischer_row(t, x[i], w[i], t->lo[i], t->hi[i], &P, &Q);
		t->P[i] = P;
		t->Q[i] = Q;
		double jd = P + Q * p->rows[i].diag;
		t->scale[i] = fabs(jd) > 1e-12 && isfinite(1.0 / jd) ? 1.0 / jd : 1.0;
	}
}

/* Fischer-Newton direction: J dx = -F (eq. 85). J is not symmetric, so always GMRES (sec. 6). */
static lk_status fischer_direction(newton_state *t, double eta)
{
	int n = t->n;
	for (int i = 0; i < n; ++i) {
		t->rhs[i] = -t->G[i];
		t->sol[i] = 0;
	}
	lk__matvec_fn op = t->cfg->strategy == LK_FISCHER_APPROXIMATION ? mv_fischer_fd : mv_fischer;
	if (t->cfg->strategy == LK_FISCHER_APPROXIMATION)
		t->fd_scale = t->cfg->fd_h * (1.0 + norm2(n, t->c->lambda));
	lk_status st = krylov(t, n, op, t->rhs, t->sol, eta, 0, NULL);
	if (st != LK_OK)
		return st;
	for (int i = 0; i < n; ++i)
		t->dx[i] = t->sol[i] * t->scale[i];
	return LK_OK;
}

/* The directional derivative of the merit along dx: G^T (J dx) (eq. 68 / 104). */
static double slope(newton_state *t)
{
	int n = t->n;
	double s = 0;
	if (!t->fischer) {
		/* BH dx: rows of A give (A dx)_i, rows of F give dx_i (eq. 78) */
		apply_A(t, t->dx, t->v2);
		for (int i = 0; i < n; ++i) {
			double bh = t->pos[i] >= 0 ? t->v2[i] : t->dx[i];
			s += t->G[i] * bh;
		}
		return s;
	}
	/* the Krylov operator with unit scaling, so the approximation strategy measures what it solved */
	double *jd = t->rhs;
	memcpy(t->sol, t->dx, (size_t)n * sizeof(double));
	double *saved = t->scale;
	t->scale = t->ones;
	if (t->cfg->strategy == LK_FISCHER_APPROXIMATION)
		mv_fischer_fd(t, t->sol, jd);
	else
		mv_fischer(t, t->sol, jd);
	t->scale = saved;
	for (int i = 0; i < n; ++i)
		s += t->G[i] * jd[i];
	return s;
}

/* The fall-back direction of Erleben 2013 sec. 6 when the Newton direction fails: the merit's gradient
 * g = G'^T G, projected onto the feasible set, d = P(x - g) - x. Returns the slope g^T d (<= 0). */
static double gradient_direction(newton_state *t)
{
	int n = t->n;
	const double *x = t->c->lambda;
	double *g = t->v2;
	if (!t->fischer) {
		/* G' rows: A_i* on A, e_i on F */
		for (int i = 0; i < n; ++i)
			t->v1[i] = t->pos[i] >= 0 ? t->G[i] : 0.0;
		apply_AT(t, t->v1, g);
		for (int i = 0; i < n; ++i)
			if (t->pos[i] < 0)
				g[i] += t->G[i];
	} else {
		/* J^T F = D_p F + A^T D_q F */
		for (int i = 0; i < n; ++i)
			t->v1[i] = t->Q[i] * t->G[i];
		apply_AT(t, t->v1, g);
		for (int i = 0; i < n; ++i)
			g[i] += t->P[i] * t->G[i];
	}
	for (int i = 0; i < n; ++i)
		t->dx[i] = -g[i];
	project(t, x, 1.0, t->dx, t->xt);
	double s = 0;
	for (int i = 0; i < n; ++i) {
		double d = t->xt[i] - x[i];
		t->dx[i] = d;
		s += g[i] * d;
	}
	return s;
}

/* ------------------------------------------------------------------------------------- line search */

/* Projected Armijo back-tracking (Erleben 2013 sec. 5.4): x_tau = P(x + tau dx), accept the first
 * tau = beta^h with psi(tau) <= psi(0) + alpha tau psi'(0). Below tau_min the paper returns the current tau;
 * here that last step is taken only if it still lowers the merit, so no accepted step ever raises it; so is
 * the last trial the budget pays for. Returns 1 with the trial point in xt, wt, dut, or 0. */
static int line_search(newton_state *t, double psi0, double dpsi0, double *psi_out)
{
	const double *x = t->c->lambda;
	const lk_newton_config *cfg = t->cfg;
	double tau = 1.0, psi = INFINITY;
	for (;;) {
		project(t, x, tau, t->dx, t->xt);
		eval_w(t, t->xt, t->wt, t->dut);
		psi = merit(t, t->xt, t->wt, NULL);
		lk__count(t->c, t->n, LK_WORK_NEWTON_ROW);
		if (psi <= psi0 + cfg->ls_alpha * tau * dpsi0 && isfinite(psi))
			break;
		/* the budget spent, or tau at its floor: the last trial only if it lowers the merit */
		if (!affords(t, 1) || tau * cfg->ls_beta < cfg->ls_tau_min) {
			if (psi < psi0)
				break;
			return 0;
		}
		tau *= cfg->ls_beta;
	}
	*psi_out = psi;
	return 1;
}

/* ---------------------------------------------------------------------------------------- the method */

static int all_finite(int n, const double *v)
{
	for (int i = 0; i < n; ++i)
		if (!isfinite(v[i]))
			return 0;
	return 1;
}

static double max_abs(int n, const double *v)
{
	double m = 0;
	for (int i = 0; i < n; ++i)
		m = fmax(m, fabs(v[i]));
	return m;
}

/* ||G|| at this level is rounding: w_i carries an error of about eps (|q_i| + sum_j |A_ij x_j|), bounded
 * here through the largest row. */
static double rounding_floor(const newton_state *t)
{
	const lk_problem *p = t->p;
	const double *x = t->c->lambda, *w = t->c->w;
	double s = 0;
	for (int i = 0; i < t->n; ++i) {
		double q = p->rows[i].q;
		double e = fabs(q) + fabs(w[i] - q) + p->rows[i].diag * fabs(x[i]) + fabs(x[i]);
		if (e > s)
			s = e;
	}
	return DBL_EPSILON * sqrt((double)t->n) * s;
}

/* The impulse scale of the problem for the divergence rule: the larger of the start's largest |lambda_i|
 * and the largest |q_i| / A_ii, the impulse that row i needs on its own to cancel its velocity error (rows
 * with A_ii <= 0, possible in the matrix form, have none). 0 when neither gives a scale. */
static double impulse_scale(const lk_problem *p, const double *lambda)
{
	double s = 0;
	for (int i = 0; i < p->nrows; ++i) {
		const lk__row *r = &p->rows[i];
		s = fmax(s, fabs(lambda[i]));
		if (r->diag > 0)
			s = fmax(s, fabs(r->q) / r->diag);
	}
	return isfinite(s) ? s : 0.0;
}

static double *dalloc(lk_problem *p, size_t n, int *fail)
{
	double *v = lk__arena_alloc(&p->arena, (n + 1) * sizeof(double));
	if (!v)
		*fail = 1;
	return v;
}

static int *ialloc(lk_problem *p, size_t n, int *fail)
{
	int *v = lk__arena_alloc(&p->arena, (n + 1) * sizeof(int));
	if (!v)
		*fail = 1;
	return v;
}

/* Whether every friction row of p is a contact of the plane (its normal row's one friction row, right after it) and
 * there is one: its box is its cone, and the cone's map handles its two rows together */
static int plane_contacts_only(const lk_problem *p)
{
	int any = 0;
	for (int i = 0; i < p->nrows; ++i) {
		if (p->rows[i].findex < 0)
			continue;
		if (!lk__plane_friction(p, i))
			return 0;
		any = 1;
	}
	return any;
}

lk_status lk__solve_newton(lk__ctx *c)
{
	/* friction=cone: the natural map of Alart & Curnier, whose box-friction form is this file's minimum map. So also
	 * the minimum map of a problem whose friction rows are all contacts of the plane, whose box is the cone: this
	 * file's map freezes a friction row's bounds for the iteration, and on Siconos's 2D problems stalled
	 * (FrictionContactProblem00237 at 3e-2 of Siconos's error after 300 iterations), where the cone's map, which
	 * moves a contact's friction bound with its normal, reaches 1e-8 in 16 */
	if (c->cfg->friction == LK_FRICTION_CONE ||
	    (c->cfg->method == LK_METHOD_NEWTON_MINMAP && plane_contacts_only(c->p)))
		return lk__solve_newton_cone(c);
	lk_problem *p = c->p;
	const lk_solver_config *cfg = c->cfg;
	int n = c->n;
	const double scale = impulse_scale(p, c->lambda);
	newton_state T;
	memset(&T, 0, sizeof T);
	newton_state *t = &T;
	t->c = c;
	t->p = p;
	t->cfg = &cfg->newton;
	t->n = n;
	t->fischer = cfg->method == LK_METHOD_NEWTON_FISCHER;
	t->ndu = ((size_t)p->nbodies + 1) * LK_DU_STRIDE;
	for (int i = 0; i < n; ++i)
		if (p->rows[i].findex >= 0)
			t->friction = 1;

	/* every buffer of the iteration, taken before it starts */
	int fail = 0;
	size_t un = (size_t)n;
	double **vecs[] = {&t->lo, &t->hi, &t->G, &t->dx, &t->xt, &t->wt, &t->v1, &t->v2, &t->P,
	                   &t->Q, &t->scale, &t->sol, &t->xfull, &t->zs, &t->ones};
	for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; ++k)
		*vecs[k] = dalloc(p, un, &fail);
	double *start = dalloc(p, un, &fail);
	t->rhs = dalloc(p, 2 * un, &fail);
	t->dut = dalloc(p, t->ndu, &fail);
	t->tdu = dalloc(p, t->ndu, &fail);
	t->idx = ialloc(p, un, &fail);
	t->pos = ialloc(p, un, &fail);
	size_t kbytes = lk__gmres_scratch_bytes(n, cfg->newton.gmres_restart);
	size_t cbytes = lk__cg_scratch_bytes(n);
	if (fail || lk__arena_carve(&p->arena, kbytes > cbytes ? kbytes : cbytes, &t->kry) != LK_OK)
		return lk__fail(p, LK_ERR_NO_MEMORY, "%s: out of memory for %d rows", lk_method_name(cfg->method), n);
	for (int i = 0; i < n; ++i)
		t->ones[i] = 1.0;
	memcpy(start, c->lambda, un * sizeof(double));

	/* Erleben 2013 sec. 6 and Fig. 6: a few PGS sweeps give Newton a better start. PGS needs positive
	 * diagonals; on a problem without them (the contact LCP of eq. 27) the sweeps are skipped. */
	/* Under a budget of a few sweep-equivalents Newton affords a handful of products, too few for a
	 * direction on a stiff problem: its iterate can then lower the merit and still carry impulses far from
	 * any solution (a step of a jointed ODE scene at a budget of 20 turned a transmission's gears past what
	 * ODE accepts). A quarter of the budget in PGS sweeps first gives it PGS's iterate to refine. */
	/* At most NEWTON_WARM_MAX of them: past a few dozen sweeps PGS's slow modes are what is left and Newton's
	 * iterations do better (a 20-box stack from zero, budget 1,000, tol 1e-9: the minimum map ends at RES
	 * 2.5e-6 after 25 warm-up sweeps and 3.9e-6 after 250; at a budget of 200,000, 2.5e-6 against 1.5e-5
	 * after 50,000). Budgets up to 100 are unchanged by the cap. */
	int pgs_warm = cfg->newton.pgs_warm;
	if (pgs_warm < 0)
		pgs_warm = cfg->budget > 0 ? (int)fmin(ceil(0.25 * cfg->budget), NEWTON_WARM_MAX) : 0;
	/* a budget that leaves less than one Newton iteration after them is all PGS sweeps: what the method can
	 * do with it (at a budget of 10 and 2,000 rows, one iteration would cost 11 sweep-equivalents) */
	if (cfg->budget > 0) {
		const double iteration = NEWTON_MIN_UNITS * LK_WORK_NEWTON_ROW;
		if (cfg->budget - pgs_warm < iteration)
			pgs_warm = (int)floor(cfg->budget);
	}
	if (pgs_warm > 0 && lk__first_bad_diagonal(p) < 0) {
		/* under an absolute tolerance the sweeps stop where PGS meets it, checked as the monitor checks a
		 * Gauss-Seidel method's sweeps (every check_every): a warm-up of a quarter of a large budget would
		 * otherwise sweep on past the solution (50,000 sweeps on an FCLIB problem that Newton solves in 12
		 * iterations); Newton's first iteration then finds the start solved */
		lk_metrics wm;
		for (int k = 0; k < pgs_warm; ++k) {
			lk__pgs_sweep(c, NULL, n, 1.0);
			if (cfg->tol_abs > 0 && (k + 1) % cfg->check_every == 0) {
				lk__current_metrics(c, &wm);
				if (lk__merit_solved(c, &wm))
					break;
			}
		}
		if (!all_finite(n, c->lambda))
			lk__restore_best(c);
	}

	/* every iterate after this one is feasible (the line search projects), so start from a feasible one */
	project(t, c->lambda, 0.0, t->ones, t->xt);
	if (memcmp(t->xt, c->lambda, un * sizeof(double)) != 0)
		lk__set_lambda(c, t->xt);

	double g0 = -1, gprev = -1, eta_prev = cfg->newton.forcing;
	lk_status st = LK_OK;
	/* w at the current iterate (into c->w) and the true metrics: of the start here, of each new iterate
	 * after its step, where the monitor takes them */
	lk_metrics m;
	lk__current_metrics(c, &m);
	for (int it = 1;; ++it) {
		if (it == 1) {
			/* a warm start may already be good enough; later iterates are checked by the monitor, which
			 * offered the start as the best iterate already (lk__monitor_start) */
			if (lk__merit_solved(c, &m)) {
				c->stop = LK_STOP_ABSOLUTE;
				break;
			}
		}
		for (int i = 0; i < n; ++i)
			lk__bounds(&p->rows[i], c->lambda, &t->lo[i], &t->hi[i]);
		double psi0 = merit(t, c->lambda, c->w, t->G);
		if (!isfinite(psi0)) {
			lk__restore_best(c);
			c->stop = LK_STOP_NONFINITE;
			break;
		}
		if (psi0 == 0.0) {
			c->stop = LK_STOP_ABSOLUTE;
			break;
		}
		double gnorm = sqrt(2.0 * psi0);
		if (!affords(t, NEWTON_MIN_UNITS)) {
			c->stop = LK_STOP_BUDGET;
			break;
		}
		/* nothing left but rounding: further steps would only shuffle the last bits */
		if (gnorm <= rounding_floor(t)) {
			c->stop = LK_STOP_STAGNATION;
			break;
		}
		if (t->fischer)
			fischer_jacobian(t);
		if (g0 < 0)
			g0 = gnorm;
		double eta = forcing_term(t, gnorm, gprev, g0, eta_prev);
		gprev = gnorm;
		eta_prev = eta;

		/* Newton direction; it must be finite and a descent direction (Theorem 5.1, 5.2) */
		st = t->fischer ? fischer_direction(t, eta) : minmap_direction(t, eta);
		if (st != LK_OK)
			break;
		double psi = psi0;
		int ok = all_finite(n, t->dx);
		if (ok) {
			double d0 = slope(t);
			ok = isfinite(d0) && d0 < 0 && line_search(t, psi0, d0, &psi);
		}
		if (!ok) {
			/* a failed step within a little of the rounding level is the end of the road, not a defect */
			if (gnorm <= 64.0 * rounding_floor(t)) {
				c->stop = LK_STOP_STAGNATION;
				break;
			}
			/* sec. 6: fall back on the (projected) gradient direction, when the budget pays for its product
			 * and an evaluation */
			if (!affords(t, 2)) {
				c->stop = LK_STOP_BUDGET;
				break;
			}
			double d0 = gradient_direction(t);
			double dn = norm2(n, t->dx);
			double maxdiag = 1.0;
			for (int i = 0; i < n; ++i)
				maxdiag = fmax(maxdiag, p->rows[i].diag);
			if (!(dn > 1e-10 * gnorm * maxdiag) || !(d0 < 0)) {
				/* the merit's (projected) gradient vanishes with the merit above zero (sec. 6) */
				c->stop = LK_STOP_LOCAL_MINIMUM;
				break;
			}
			if (!all_finite(n, t->dx) || !line_search(t, psi0, d0, &psi)) {
				c->stop = LK_STOP_NON_DESCENT;
				break;
			}
		}

		/* take the step */
		double change = 0;
		for (int i = 0; i < n; ++i) {
			double d = fabs(t->xt[i] - c->lambda[i]);
			if (!(d <= change))
				change = d;
		}
		memcpy(c->lambda, t->xt, un * sizeof(double));
		if (p->form == LK_FORM_ROWS)
			memcpy(c->du, t->dut, t->ndu * sizeof(double));
		c->iterations = it;
		lk__current_metrics(c, &m);
		c->stop = lk__monitor_metrics(c, it, change, &m);
		if (c->stop != LK_STOP_NONE)
			break;
	}
	lk__arena_carve_release(&t->kry);
	if (st != LK_OK)
		return lk__fail(p, st, "%s: out of memory in the Krylov solve", lk_method_name(cfg->method));
	/* what the budget left cannot pay a Newton iteration for goes into PGS sweeps, as the start did: the
	 * method spends the budget it was given, like the Gauss-Seidel family */
	if (c->stop == LK_STOP_BUDGET && cfg->budget > 0 && lk__first_bad_diagonal(p) < 0) {
		while (lk__work_budget_left(c) >= 0.5 * n) /* the monitor's rule: a sweep while half of one is left */
			lk__pgs_sweep(c, NULL, n, 1.0);
		if (!all_finite(n, c->lambda))
			lk__restore_best(c);
	}
	/* Ended without a solution, far out: the iterate ran off along a ray of falling merit (top of the file).
	 * A run that converged is never caught here, however large its lambda: two opposite contacts with CFM
	 * 1e-12 have the solution lambda = 1e12 and Newton finds it. */
	int failed = c->stop == LK_STOP_LOCAL_MINIMUM || c->stop == LK_STOP_NON_DESCENT ||
	             c->stop == LK_STOP_ITERATIONS;
	if (failed && scale > 0 && max_abs(n, c->lambda) > LK_DIVERGENCE_FACTOR * scale) {
		/* the best iterate seen; but along such a ray the merit still falls (the Fischer merit) or stays flat
		 * (RES, its ties broken by rounding), so that may be as far out: then the start */
		lk__restore_best(c);
		if (max_abs(n, c->lambda) > LK_DIVERGENCE_FACTOR * scale)
			lk__set_lambda(c, start);
		c->stop = LK_STOP_DIVERGED;
	}
	return LK_OK;
}

/* Accelerated projected gradient descent (APGD) with adaptive restart, on the QP view of the boxed LCP:
 *     minimise f(lambda) = 1/2 lambda^T A lambda + q^T lambda  over the box,   grad f = A lambda + q = w,
 * Nesterov's method with a backtracking Lipschitz estimate as Mazhar, Heyn, Negrut & Tasora write it for
 * frictional contact ("Using Nesterov's method to accelerate multibody dynamics with friction and contact",
 * ACM TOG 34(3), 2015, Algorithm 2, APGD), and the gradient restart of O'Donoghue & Candes ("Adaptive restart
 * for accelerated gradient schemes", Found. Comput. Math. 2015): momentum is dropped when it points uphill,
 * g^T (lambda_{k+1} - lambda_k) > 0.
 *
 *     y_0 = lambda_0, theta_0 = 1, L_0 = |A d| / |d| (d = ones: a lower estimate; backtracking raises it)
 *     g = A y + q;  lambda' = P(y - g / L)
 *     while f(lambda') > f(y) + g^T (lambda' - y) + L/2 |lambda' - y|^2:  L *= 2, lambda' = P(y - g / L)
 *     (for the quadratic f the same as: while d^T A d > L |d|^2, d = lambda' - y; lk__solve_apgd)
 *     theta' = theta (sqrt(theta^2 + 4) - theta) / 2,  beta = theta (1 - theta) / (theta^2 + theta')
 *     y = lambda' + beta (lambda' - lambda), or y = lambda', theta' = 1 on a restart;  L *= 0.9
 *
 * P projects onto the boxes: rows with their own bounds first, then friction rows onto [-mu |lambda_n|,
 * mu |lambda_n|] with their normal row's projected lambda (the box is not convex jointly; this is the
 * projection the Gauss-Seidel methods and AMGS's Method 3.2 use). With friction=cone each contact's pair of
 * friction rows goes onto the disc of radius mu |lambda_n| at once, stepped by one scale: the fixed points are
 * then Coulomb's law itself (the natural map of newton_cone.c), not the cone complementarity problem Mazhar et
 * al. solve, whose Euclidean projection onto the cone gives a sliding contact a separating normal velocity
 * (the convex relaxation of Anitescu & Tasora 2010), which Siconos's error measure counts as an error. The
 * row form's A is symmetric positive semidefinite, so f is the QP of the LCP; a matrix-form A should be
 * symmetric too (the fluid LCPs are).
 *
 * Matrix-free, each product A x + q rebuilds M^-1 J^T x over every body and gathers every row: it counts
 * LK_WORK_PRODUCT_ROW per row in the budget. An iteration takes one product per trial point and none at y:
 * y = lambda' + beta (lambda' - lambda) is a combination of two points whose products are known, so
 * A y + q = (1 + beta) w(lambda') - beta w(lambda) (the product is linear). With L lowered by 0.9 each
 * iteration and doubled on a failed trial, that is about 1.15 products an iteration instead of 2.15. The
 * accepted trial's product leaves du consistent with lambda for the monitor.
 *
 * The vector work of an iteration (the projection, the model test, the momentum step) reads each row's
 * bounds and friction index from arrays packed once per solve, not from the 256-byte row records: on a
 * 240-row stack that was half of an iteration's instructions, as much as its product. */
#include "methods.h"

#include "kernel.h"

#include <string.h>

typedef struct apgd_state {
	double *y, *g, *trial, *wt, *wl, *du_y;
	double *lo, *hi;    /* bounds of the rows with bounds of their own, in the order of fixed[] */
	int *fixed, nfixed; /* those rows */
	double *mu;         /* friction coefficients, in the order of fric[] */
	int *fric, *fidx, nfric; /* the friction rows and their normal rows */
	double *dinv, *dg;  /* per row: the step's scale 1 / A_ii and the metric's weight A_ii (diag), or 1 and 1 */
	double L, theta;
	int cone;           /* friction=cone: each contact's pair projected onto its disc */
} apgd_state;

/* w = A x + q and, in the row form, du = M^-1 J^T x */
static void product(lk__ctx *c, const double *x, double *w, double *du)
{
	lk__product(c, c->body_rows, x, w, 1, du);
	lk__count(c, c->n, LK_WORK_PRODUCT_ROW);
}

/* out = P(y - step g), the step and the projection in the same passes; g NULL: out = P(y). P takes rows with
 * fixed bounds first, then friction rows against their normal row's projected value (lk__bounds). */
static void gradient_step(const apgd_state *s, const double *y, const double *g, double step, double *out)
{
	for (int k = 0; k < s->nfixed; ++k) {
		const int i = s->fixed[k];
		out[i] = lk__clamp(g ? y[i] - step * s->dinv[i] * g[i] : y[i], s->lo[k], s->hi[k]);
	}
	for (int k = 0; k < s->nfric; ++k) {
		const int i = s->fric[k];
		const double h = s->mu[k] * fabs(out[s->fidx[k]]);
		if (s->cone && k + 1 < s->nfric && s->fric[k + 1] == i + 1 && s->fidx[k + 1] == s->fidx[k]) {
			/* Coulomb's cone: the contact's pair onto the disc of radius mu lambda_n at once */
			double x = g ? y[i] - step * s->dinv[i] * g[i] : y[i];
			double z = g ? y[i + 1] - step * s->dinv[i + 1] * g[i + 1] : y[i + 1];
			lk__disc_project(&x, &z, h);
			out[i] = x;
			out[i + 1] = z;
			++k;
			continue;
		}
		out[i] = lk__clamp(g ? y[i] - step * s->dinv[i] * g[i] : y[i], -h, h);
	}
}

/* The rows' bounds, friction indices and metric (lk__metric_weight), packed (apgd_state). */
static void pack_rows(const lk__ctx *c, apgd_state *s)
{
	const lk_problem *p = c->p;
	s->nfixed = s->nfric = 0;
	for (int i = 0; i < c->n; ++i) {
		const lk__row *r = &p->rows[i];
		s->dg[i] = lk__metric_weight(c->cfg->metric, r);
		s->dinv[i] = 1.0 / s->dg[i];
		if (s->cone && lk__cone_pair(p, i)) {
			/* the pair steps by one scale, its larger diagonal's: the fixed point of lambda_t =
			 * P_disc(lambda_t - rho w_t) is Coulomb's law for a common rho > 0 only (sweep.c) */
			const double d = fmax(s->dg[i], lk__metric_weight(c->cfg->metric, &p->rows[i + 1]));
			s->dg[i] = d;
			s->dinv[i] = 1.0 / d;
		} else if (s->cone && i > 0 && lk__cone_pair(p, i - 1)) {
			s->dg[i] = s->dg[i - 1];
			s->dinv[i] = s->dinv[i - 1];
		}
		if (lk__is_friction(r)) {
			s->fric[s->nfric] = i;
			s->fidx[s->nfric] = r->findex;
			s->mu[s->nfric++] = r->mu;
		} else {
			s->fixed[s->nfixed] = i;
			s->lo[s->nfixed] = r->lo;
			s->hi[s->nfixed++] = r->hi;
		}
	}
}

static lk_status prepare(lk__ctx *c, apgd_state *s)
{
	lk__arena *a = &c->p->arena;
	size_t n = (size_t)c->n + 1, nb = ((size_t)c->p->nbodies + 1) * LK_DU_STRIDE;
	memset(s, 0, sizeof *s);
	s->cone = c->cfg->friction == LK_FRICTION_CONE;
	s->y = lk__arena_alloc(a, n * sizeof(double));
	s->g = lk__arena_alloc(a, n * sizeof(double));
	s->trial = lk__arena_alloc(a, n * sizeof(double));
	s->wt = lk__arena_alloc(a, n * sizeof(double));
	s->wl = lk__arena_alloc(a, n * sizeof(double));
	s->du_y = lk__arena_alloc(a, nb * sizeof(double));
	s->lo = lk__arena_alloc(a, n * sizeof(double));
	s->hi = lk__arena_alloc(a, n * sizeof(double));
	s->mu = lk__arena_alloc(a, n * sizeof(double));
	s->fixed = lk__arena_alloc(a, n * sizeof(int));
	s->fric = lk__arena_alloc(a, n * sizeof(int));
	s->fidx = lk__arena_alloc(a, n * sizeof(int));
	s->dinv = lk__arena_alloc(a, n * sizeof(double));
	s->dg = lk__arena_alloc(a, n * sizeof(double));
	if (!s->y || !s->g || !s->trial || !s->wt || !s->wl || !s->du_y || !s->lo || !s->hi || !s->mu ||
	    !s->fixed || !s->fric || !s->fidx || !s->dinv || !s->dg)
		return lk__fail(c->p, LK_ERR_NO_MEMORY, "apgd: out of memory for %d rows", c->n);
	pack_rows(c, s);
	/* L_0, through the trial buffers: with the identity metric |A d| / |d| for d = ones; with the diagonal
	 * one the Rayleigh quotient of D^-1/2 A D^-1/2 at the ones, x^T A x / x^T D x with x = D^-1/2 1. Both
	 * are lower estimates, which the backtracking raises */
	double xdx = 0.0;
	for (int i = 0; i < c->n; ++i) {
		s->trial[i] = sqrt(s->dinv[i]);
		xdx += s->trial[i] * s->trial[i] * s->dg[i];
	}
	lk__product(c, c->body_rows, s->trial, s->wt, 0, s->du_y);
	lk__count(c, c->n, LK_WORK_PRODUCT_ROW);
	double ad = 0.0, xax = 0.0;
	for (int i = 0; i < c->n; ++i) {
		ad += s->wt[i] * s->wt[i];
		xax += s->trial[i] * s->wt[i];
	}
	s->L = c->cfg->metric == LK_METRIC_DIAG ? xax / xdx : sqrt(ad / c->n);
	if (!(s->L > 0) || !isfinite(s->L))
		s->L = 1.0;
	s->theta = 1.0;
	return LK_OK;
}

lk_status lk__solve_apgd(lk__ctx *c)
{
	apgd_state s;
	lk_status st = prepare(c, &s);
	if (st != LK_OK)
		return st;
	const int n = c->n;
	double *lambda = c->lambda;
	/* start from the projected warm start; its product is w(lambda), and the gradient at y = lambda */
	gradient_step(&s, lambda, NULL, 0.0, s.trial);
	lk__set_lambda(c, s.trial);
	memcpy(s.y, lambda, (size_t)n * sizeof(double));
	product(c, lambda, s.wl, c->du);
	memcpy(s.g, s.wl, (size_t)n * sizeof(double));
	for (int it = 1;; ++it) {
		/* backtracking on L; the trial's product goes to c->du, which is lambda's once accepted. The model test
		 * f(trial) <= f(y) + g^T d + L/2 |d|^2_D, d = trial - y, is for a quadratic f exactly
		 * d^T A d <= L |d|^2_D, and A d = w(trial) - w(y) = wt - g: so it is tested on d's own scale, not on
		 * the difference of two values of f, whose rounding (|f| times the unit roundoff) hid every step below
		 * sqrt of it: APGD stalled near RES 1e-10 on a 5-row joint that PGS solves to 1e-17 in 20 sweeps
		 * (ODE's demo_joints, test 741). The slack bounds the rounding of d^T (wt - g). */
		double dad = 0.0, sq = 0.0, uphill = 0.0, max_change = 0.0;
		for (int tries = 0; tries < 60; ++tries) {
			gradient_step(&s, s.y, s.g, 1.0 / s.L, s.trial);
			product(c, s.trial, s.wt, c->du);
			/* d^T A d and |d|^2_D, and for the accepted trial the restart test g^T (lambda' - lambda) and the
			 * largest change, in one pass */
			double slack = 0.0;
			dad = sq = uphill = max_change = 0.0;
			for (int i = 0; i < n; ++i) {
				const double t = s.trial[i], d = t - s.y[i], dl = t - lambda[i];
				dad += d * (s.wt[i] - s.g[i]);
				slack += fabs(d) * (fabs(s.wt[i]) + fabs(s.g[i]));
				sq += d * d * s.dg[i];
				uphill += s.g[i] * dl;
				const double ad = fabs(dl);
				if (!(ad <= max_change))
					max_change = ad;
			}
			if (dad <= s.L * sq + 1e-15 * slack || !isfinite(dad))
				break;
			s.L *= 2.0;
		}
		/* the restart test and the momentum step, then lambda <- trial */
		const double th = s.theta;
		double th_next = 0.5 * th * (sqrt(th * th + 4.0) - th);
		double beta = th * (1.0 - th) / (th * th + th_next);
		if (uphill > 0.0) {
			beta = 0.0;
			th_next = 1.0;
		}
		/* y and its gradient from lambda' and lambda and their products; then w(lambda) <- w(lambda') */
		for (int i = 0; i < n; ++i) {
			const double next = s.trial[i];
			s.y[i] = next + beta * (next - lambda[i]);
			s.g[i] = (1.0 + beta) * s.wt[i] - beta * s.wl[i];
			lambda[i] = next;
		}
		double *swap = s.wl;
		s.wl = s.wt;
		s.wt = swap;
		s.theta = th_next;
		s.L *= 0.9;
		c->iterations = it;
		c->stop = lk__monitor(c, it, max_change);
		if (c->stop != LK_STOP_NONE)
			return LK_OK;
	}
}

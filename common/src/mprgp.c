/* MPRGP: modified proportioning with reduced gradient projections (Dostal & Schoberl, "Minimizing quadratic
 * functions subject to bound constraints with the rate of convergence and finite termination", Comput. Optim.
 * Appl. 30, 2005; the two-sided form of Dostal, "Optimal Quadratic Programming Algorithms", Springer 2009,
 * sec. 8). The boxed LCP with fixed bounds is the QP
 *     minimise f(x) = 1/2 x^T A x + q^T x  subject to lo <= x <= hi,   g = grad f = A x + q = w,
 * and MPRGP solves it with conjugate gradients on the free rows while the iterate is "proportional", and
 * leaves a face by a proportioning step on the chopped gradient otherwise:
 *     phi(x)  free gradient: g_i on rows strictly inside their bounds, 0 elsewhere;
 *     beta(x) chopped gradient: min(g_i, 0) at a lower bound, max(g_i, 0) at an upper bound;
 *     phit(x) reduced free gradient: phi_i limited to (x_i - lo_i) / abar (phi_i > 0) or (x_i - hi_i) / abar;
 *     proportional when |beta|^2 <= Gamma^2 phit^T phi (Gamma = 1).
 *   proportional: CG step on p; if it would leave the box, an expansion step: go to the box along p, then a
 *                 projected gradient step of length abar on the free gradient, and restart CG;
 *   otherwise:    proportioning step, an exact line search along beta.
 * abar = 1.9 / |A| (|A| from a few power iterations) keeps the expansion step a descent step.
 *
 * Friction rows have bounds that move with their normal rows. They are frozen at the current normal impulses
 * for a phase of MPRGP iterations (the outer loop of the design: the frozen box of ESP and of PGS-SM's
 * lazy bounds), and refrozen, with lambda projected onto the new boxes and CG restarted, every
 * MPRGP_PHASE iterations. Without friction rows there is one phase: the method of the paper.
 *
 * With metric=diag (lk_gradient_metric; MPRGP's default is the identity) it runs on the problem in the rows'
 * own units, y = S x with S = diag(A)^1/2: A' = S^-1 A S^-1 (unit diagonal), q' = S^-1 q, bounds S lo and
 * S hi, gradient g' = S^-1 g. Every vector of the method below (the iterate y, g, p, the bounds) is of that
 * problem, and lambda = S^-1 y; with the identity metric S = I and the method is the paper's on A itself. A
 * diagonal change of variables keeps each box a box, so the method and its properties carry over whole, with
 * |A'| in place of |A|.
 *
 * Matrix-free: a product A p rebuilds M^-1 J^T p over every body and gathers every row (weight
 * LK_WORK_PRODUCT_ROW in the budget); the product's M^-1 J^T p also updates du along with lambda, so the
 * monitor reads a consistent du. The gradient is updated incrementally and recomputed at every phase. */
#include "methods.h"

#include "kernel.h"

#include <string.h>

/* MPRGP iterations between two refreezings of the friction bounds */
#define MPRGP_PHASE 25
/* a projected gradient below this fraction of |q| is rounding: the iterate solves the problem */
#define MPRGP_ROUNDING 1e-13
/* power iterations for |A| */
#define MPRGP_POWER 12
/* under a budget, a phase lasts the iterations it leaves after the estimate of |A| divided by this */
#ifndef MPRGP_PHASE_SHARE
#define MPRGP_PHASE_SHARE 2
#endif

typedef struct mprgp_state {
	double *x;              /* the iterate y = S lambda */
	double *lo, *hi;        /* frozen bounds of the phase, S lo and S hi */
	double *g, *p, *ap, *v; /* gradient S^-1 (A lambda + q), direction, A' p, scratch */
	double *du_p;           /* M^-1 J^T S^-1 p (row form) */
	double *sc, *isc;       /* per row: S_ii = A_ii^1/2 and 1 / S_ii (the identity metric or no diagonal: 1) */
	double *t;              /* scratch of the product */
	int scaled;             /* some S_ii is not 1 (metric=diag): the product scales around A */
	double abar;
} mprgp_state;

/* y = A' x = S^-1 A S^-1 x (no q); du (row form) receives M^-1 J^T S^-1 x, the change of du of a step along
 * x */
static void product(lk__ctx *c, const mprgp_state *s, const double *x, double *y, double *du)
{
	if (!s->scaled) {
		lk__product(c, c->body_rows, x, y, 0, du);
	} else {
		for (int i = 0; i < c->n; ++i)
			s->t[i] = x[i] * s->isc[i];
		lk__product(c, c->body_rows, s->t, y, 0, du);
		for (int i = 0; i < c->n; ++i)
			y[i] *= s->isc[i];
	}
	lk__count(c, c->n, LK_WORK_PRODUCT_ROW);
}

/* lambda = S^-1 y and du from it, after y changed otherwise than by step() */
static void set_iterate(lk__ctx *c, mprgp_state *s, const double *y)
{
	if (y != s->x)
		memcpy(s->x, y, (size_t)c->n * sizeof(double));
	for (int i = 0; i < c->n; ++i)
		c->lambda[i] = s->x[i] * s->isc[i];
	lk__set_lambda(c, c->lambda);
}

static double dot(int n, const double *a, const double *b)
{
	double s = 0.0;
	for (int i = 0; i < n; ++i)
		s += a[i] * b[i];
	return s;
}

static int is_free(const mprgp_state *s, const double *x, int i)
{
	return x[i] > s->lo[i] && x[i] < s->hi[i];
}

/* beta_i: the part of the gradient at a bound that points into the box (0 on a box of one point) */
static double chopped(const mprgp_state *s, const double *x, int i)
{
	if (!(s->lo[i] < s->hi[i]))
		return 0.0;
	return x[i] <= s->lo[i] ? fmin(s->g[i], 0.0) : fmax(s->g[i], 0.0);
}

/* Freezes every row's bounds at the current lambda (friction rows from their normal rows) and projects lambda
 * onto them, normal rows first; then the iterate and bounds of the scaled problem. */
static void freeze(lk__ctx *c, mprgp_state *s)
{
	const lk_problem *p = c->p;
	double *x = c->lambda;
	for (int pass = 0; pass < 2; ++pass)
		for (int i = 0; i < c->n; ++i) {
			const lk__row *r = &p->rows[i];
			if (lk__is_friction(r) != pass)
				continue;
			lk__bounds(r, x, &s->lo[i], &s->hi[i]);
			x[i] = lk__clamp(x[i], s->lo[i], s->hi[i]);
		}
	for (int i = 0; i < c->n; ++i) {
		s->lo[i] *= s->sc[i];
		s->hi[i] *= s->sc[i];
		s->x[i] = x[i] * s->sc[i];
	}
	lk__set_lambda(c, x);
}

/* g = S^-1 (A lambda + q), and p = phi(y) */
static void restart(lk__ctx *c, mprgp_state *s)
{
	product(c, s, s->x, s->g, s->du_p);
	for (int i = 0; i < c->n; ++i) {
		s->g[i] += c->p->rows[i].q * s->isc[i];
		s->p[i] = is_free(s, s->x, i) ? s->g[i] : 0.0;
	}
}

/* y -= a d, lambda -= a S^-1 d and du -= a M^-1 J^T S^-1 d (du_d), g -= a A' d; returns max |a d_i| over
 * lambda */
static double step(lk__ctx *c, mprgp_state *s, double a, const double *d, const double *ad, const double *du_d)
{
	double mc = 0.0;
	for (int i = 0; i < c->n; ++i) {
		double dx = a * d[i];
		s->x[i] -= dx;
		c->lambda[i] -= dx * s->isc[i];
		s->g[i] -= a * ad[i];
		double m = fabs(dx * s->isc[i]);
		if (!(m <= mc))
			mc = m;
	}
	if (c->p->form == LK_FORM_ROWS) {
		size_t nb = ((size_t)c->p->nbodies + 1) * LK_DU_STRIDE;
		for (size_t k = 0; k < nb; ++k)
			c->du[k] -= a * du_d[k];
	}
	return mc;
}

/* |A'| by power iteration from a fixed start (deterministic) */
static double norm_estimate(lk__ctx *c, mprgp_state *s, double budget)
{
	const int n = c->n;
	/* under a small budget a rougher estimate: a quarter of the budget at most, at least two products (the
	 * step abar = 1.9 / |A| only has to stay below 2 / |A|; power iteration approaches |A| from below) */
	int iterations = MPRGP_POWER;
	if (budget > 0 && budget / 4 < iterations)
		iterations = budget / 4 < 2 ? 2 : (int)(budget / 4);
	for (int i = 0; i < n; ++i)
		s->v[i] = 1.0 + 0.001 * (i % 7);
	double lam = 0.0;
	for (int k = 0; k < iterations; ++k) {
		double nv = sqrt(dot(n, s->v, s->v));
		if (!(nv > 0))
			break;
		for (int i = 0; i < n; ++i)
			s->v[i] /= nv;
		product(c, s, s->v, s->ap, s->du_p);
		lam = sqrt(dot(n, s->ap, s->ap));
		memcpy(s->v, s->ap, (size_t)n * sizeof(double));
	}
	return lam;
}

static lk_status prepare(lk__ctx *c, mprgp_state *s)
{
	lk__arena *a = &c->p->arena;
	size_t n = (size_t)c->n + 1, nb = ((size_t)c->p->nbodies + 1) * LK_DU_STRIDE;
	memset(s, 0, sizeof *s);
	s->lo = lk__arena_alloc(a, n * sizeof(double));
	s->hi = lk__arena_alloc(a, n * sizeof(double));
	s->g = lk__arena_alloc(a, n * sizeof(double));
	s->p = lk__arena_alloc(a, n * sizeof(double));
	s->ap = lk__arena_alloc(a, n * sizeof(double));
	s->v = lk__arena_alloc(a, n * sizeof(double));
	s->du_p = lk__arena_alloc(a, nb * sizeof(double));
	s->x = lk__arena_alloc(a, n * sizeof(double));
	s->sc = lk__arena_alloc(a, n * sizeof(double));
	s->isc = lk__arena_alloc(a, n * sizeof(double));
	s->t = lk__arena_alloc(a, n * sizeof(double));
	if (!s->lo || !s->hi || !s->g || !s->p || !s->ap || !s->v || !s->du_p || !s->x || !s->sc || !s->isc || !s->t)
		return lk__fail(c->p, LK_ERR_NO_MEMORY, "mprgp: out of memory for %d rows", c->n);
	for (int i = 0; i < c->n; ++i) {
		s->sc[i] = sqrt(lk__metric_weight(c->cfg->metric, &c->p->rows[i]));
		s->isc[i] = 1.0 / s->sc[i];
		s->scaled |= s->isc[i] != 1.0;
	}
	double na = norm_estimate(c, s, c->cfg->budget);
	s->abar = na > 0 && isfinite(na) ? 1.9 / na : 1.0;
	return LK_OK;
}

/* MPRGP iterations a phase of frozen friction bounds lasts: MPRGP_PHASE, or under a budget that pays for
 * fewer than a few phases of it, a quarter of the budget (about a fifth of the iterations it affords), so that
 * the friction rows get boxes of their normals' impulses within the budget. A cold start freezes every friction
 * box at the point [0, 0]: under an engine's budget of 12 sweep-equivalents (7 iterations) a phase of 25 never
 * ended, the friction rows kept no impulse while their normals took theirs, and RES ended above the start's
 * (the end check's `diverged`, a fallback in 778 of ODE's 9,600 cylinder demo steps). */
static int phase_length_of(double budget)
{
	const double estimate = budget > 0 ? fmin(MPRGP_POWER, fmax(2.0, floor(budget / 4))) : MPRGP_POWER;
	const double half = floor((budget - estimate) / MPRGP_PHASE_SHARE);
	if (!(budget > 0) || half >= MPRGP_PHASE)
		return MPRGP_PHASE;
	return half < 2 ? 2 : (int)half;
}

lk_status lk__solve_mprgp(lk__ctx *c)
{
	mprgp_state s;
	lk_status st = prepare(c, &s);
	if (st != LK_OK)
		return st;
	const int n = c->n;
	double *x = s.x;
	/* the projected gradient of an iterate that solves the problem to rounding: past it the CG and line-search
	 * steps divide rounding by rounding (p^T A p of a direction of size 1e-17) and throw a solved lambda away */
	double qq = 0.0;
	for (int i = 0; i < n; ++i)
		qq += c->p->rows[i].q * s.isc[i] * c->p->rows[i].q * s.isc[i];
	const double solved2 = MPRGP_ROUNDING * MPRGP_ROUNDING * qq;
	const int phase_length = phase_length_of(c->cfg->budget);
	int phase = 0;
	for (int it = 1;; ++it) {
		/* bounds refrozen and the gradient recomputed in this iteration, where the work left pays for that product
		 * and a step after it (else the phase goes on: the budget ends it) */
		const int affords = it == 1 || lk__work_left(c) >= 2.0 * n * LK_WORK_PRODUCT_ROW;
		const int fresh = phase == 0 && affords;
		if (fresh) {
			freeze(c, &s);
			restart(c, &s);
		}
		phase = (phase + 1) % phase_length;
		/* proportionality test: |beta|^2 <= phit^T phi; and |phi|^2, for the projected gradient |phi|^2 +
		 * |beta|^2 */
		double bb = 0.0, tphi = 0.0, ff = 0.0;
		for (int i = 0; i < n; ++i) {
			const double gi = s.g[i];
			if (is_free(&s, x, i)) {
				double phit = gi > 0 ? fmin((x[i] - s.lo[i]) / s.abar, gi) : fmax((x[i] - s.hi[i]) / s.abar, gi);
				tphi += phit * gi;
				ff += gi * gi;
			} else {
				double b = chopped(&s, x, i);
				bb += b * b;
			}
		}
		double max_change = 0.0;
		/* solved with the bounds of the phase: with fresh bounds and gradient the problem is solved and the solve
		 * ends below; otherwise the friction bounds may have moved, and the next iteration refreezes them */
		const int solved = bb + ff <= solved2;
		if (solved) {
			if (!fresh && !affords) {
				/* solved with frozen bounds that the budget cannot pay to refreeze: nothing more to do in it */
				c->iterations = it - 1;
				c->stop = LK_STOP_BUDGET;
				return LK_OK;
			}
			if (!fresh)
				phase = 0;
		} else if (bb <= tphi) {
			/* CG step along p, or an expansion step where it would leave the box */
			product(c, &s, s.p, s.ap, s.du_p);
			const double pap = dot(n, s.p, s.ap);
			const double acg = pap > 0 ? dot(n, s.g, s.p) / pap : 0.0;
			double af = INFINITY;
			for (int i = 0; i < n; ++i) {
				if (s.p[i] > 0 && isfinite(s.lo[i]))
					af = fmin(af, (x[i] - s.lo[i]) / s.p[i]);
				else if (s.p[i] < 0 && isfinite(s.hi[i]))
					af = fmin(af, (x[i] - s.hi[i]) / s.p[i]);
			}
			if (acg <= af) {
				max_change = step(c, &s, acg, s.p, s.ap, s.du_p);
				double phiap = 0.0;
				for (int i = 0; i < n; ++i)
					if (is_free(&s, x, i))
						phiap += s.g[i] * s.ap[i];
				const double gamma = pap > 0 ? phiap / pap : 0.0;
				for (int i = 0; i < n; ++i)
					s.p[i] = (is_free(&s, x, i) ? s.g[i] : 0.0) - gamma * s.p[i];
			} else {
				/* to the box, then a projected step of abar on the free gradient */
				step(c, &s, af, s.p, s.ap, s.du_p);
				for (int i = 0; i < n; ++i) {
					double phi = is_free(&s, x, i) ? s.g[i] : 0.0;
					double next = lk__clamp(x[i] - s.abar * phi, s.lo[i], s.hi[i]);
					/* v keeps the change from the start of the iteration: the CG part plus this */
					s.v[i] = next;
				}
				for (int i = 0; i < n; ++i) {
					double d = (fabs(s.v[i] - x[i]) + fabs(af * s.p[i])) * s.isc[i];
					if (!(d <= max_change))
						max_change = d;
				}
				set_iterate(c, &s, s.v);
				restart(c, &s);
			}
		} else {
			/* proportioning step: exact line search along the chopped gradient */
			for (int i = 0; i < n; ++i)
				s.v[i] = is_free(&s, x, i) ? 0.0 : chopped(&s, x, i);
			product(c, &s, s.v, s.ap, s.du_p);
			const double dad = dot(n, s.v, s.ap);
			const double a = dad > 0 ? dot(n, s.g, s.v) / dad : 0.0;
			max_change = step(c, &s, a, s.v, s.ap, s.du_p);
			/* beta points into the box, but a long step can cross a two-sided box: then back onto it */
			int outside = 0;
			for (int i = 0; i < n && !outside; ++i)
				outside = x[i] < s.lo[i] || x[i] > s.hi[i];
			if (outside) {
				for (int i = 0; i < n; ++i)
					s.v[i] = lk__clamp(x[i], s.lo[i], s.hi[i]);
				set_iterate(c, &s, s.v);
				restart(c, &s);
			} else {
				for (int i = 0; i < n; ++i)
					s.p[i] = is_free(&s, x, i) ? s.g[i] : 0.0;
			}
		}
		c->iterations = it;
		c->stop = lk__monitor(c, it, max_change);
		if (c->stop == LK_STOP_NONE && solved && fresh)
			c->stop = LK_STOP_STAGNATION;
		if (c->stop != LK_STOP_NONE)
			return LK_OK;
	}
}

/* Merit functions shared by every solver, engine and tool. */
#include "problem.h"
#include "kernel.h"

#include <stdlib.h>

double lk_natural_residual(double lambda, double w, double lo, double hi)
{
	/* H = lambda - mid(lo, lambda - w, hi): Miyamoto & Yamashita 2019 eq. (24) for lo = 0, hi = inf,
	 * its boxed form otherwise (Poulsen, Abel & Erleben 2010 eq. 22) */
	return lambda - lk__clamp(lambda - w, lo, hi);
}

/* phi_FB(a, b) = sqrt(a^2 + b^2) - a - b (Erleben 2013 eq. 103), written to avoid overflow */
static double fb(double a, double b)
{
	/* hypot is slow; the plain form is exact enough and overflows only beyond 1e150 */
	double m = fmax(fabs(a), fabs(b));
	if (m > 1e150)
		return hypot(a, b) - a - b;
	return sqrt(a * a + b * b) - a - b;
}

double lk_fischer_boxed(double lambda, double w, double lo, double hi)
{
	/* boxed form after Billups: phi(lambda - lo, phi(hi - lambda, -w)); one-sided rows reduce to the NCP
	 * function on the finite side, free rows to w itself */
	int has_lo = isfinite(lo), has_hi = isfinite(hi);
	if (has_lo && has_hi)
		return fb(lambda - lo, fb(hi - lambda, -w));
	if (has_lo)
		return fb(lambda - lo, w);
	if (has_hi)
		return fb(hi - lambda, -w);
	return w;
}

void lk__merit_sums_rows(const lk_problem *p, const double *lambda, const double *w, lk_friction friction, int begin,
                         int end, int full, lk__merit_sums *s)
{
	double hh = 0, ff = 0, mod = 0, maxh = 0, viol = 0;
	for (int i = begin; i < end; ++i) {
		const lk__row *r = &p->rows[i];
		double lo, hi;
		lk__bounds(r, lambda, &lo, &hi);
		double h, h2 = 0.0;
		int pair = friction == LK_FRICTION_CONE && lk__cone_pair(p, i);
		if (pair) {
			/* Coulomb's cone: H_T = lambda_T - P_disc(lambda_T - w_T) over the contact's two rows */
			double x = lambda[i] - w[i], y = lambda[i + 1] - w[i + 1];
			lk__disc_project(&x, &y, hi);
			h = lambda[i] - x;
			h2 = lambda[i + 1] - y;
		} else {
			h = lk_natural_residual(lambda[i], w[i], lo, hi);
		}
		hh += h * h + h2 * h2;
		if (full) {
			double f = lk_fischer_boxed(lambda[i], w[i], lo, hi);
			ff += f * f;
			mod += fabs(lambda[i]) * fabs(w[i]);
		}
		if (fabs(h) > maxh || isnan(h))
			maxh = fabs(h);
		if (fabs(h2) > maxh)
			maxh = fabs(h2);
		double v = pair ? hypot(lambda[i], lambda[i + 1]) - hi : fmax(lo - lambda[i], lambda[i] - hi);
		if (v > viol)
			viol = v;
		if (pair) {
			/* the pair's second row is done: its Fischer and modified terms, its box bounds unused */
			++i;
			if (full) {
				double f2 = lk_fischer_boxed(lambda[i], w[i], lo, hi);
				ff += f2 * f2;
				mod += fabs(lambda[i]) * fabs(w[i]);
			}
		}
	}
	s->hh = hh;
	s->ff = ff;
	s->mod = mod;
	s->maxh = maxh;
	s->viol = viol;
	s->full = full;
}

void lk__merit_sums_finish(const lk__merit_sums *s, lk_metrics *m)
{
	m->res = sqrt(s->hh);
	m->theta = 0.5 * s->hh;
	m->fischer = s->full ? 0.5 * s->ff : NAN;
	m->modified = s->full ? s->mod : NAN;
	m->max_h = s->maxh;
	m->max_bound_violation = s->viol;
}

void lk__metrics_from_w(const lk_problem *p, const double *lambda, const double *w, lk_friction friction,
                        lk_metrics *m)
{
	lk__merit_sums s;
	lk__merit_sums_rows(p, lambda, w, friction, 0, p->nrows, 1, &s);
	lk__merit_sums_finish(&s, m);
}

double lk__merit_value(const lk_metrics *m, lk_merit merit)
{
	switch (merit) {
	case LK_MERIT_THETA: return m->theta;
	case LK_MERIT_FISCHER: return m->fischer;
	case LK_MERIT_MODIFIED: return m->modified;
	case LK_MERIT_RES:
	default: return m->res;
	}
}

lk_status lk_problem_metrics(lk_problem *p, const double *lambda, lk_metrics *out)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	lk__clear_error(p);
	if (!out)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "metrics: output is NULL");
	if (!lambda)
		lambda = p->lambda;
	size_t n = (size_t)p->nrows;
	double *w = malloc((n + 1) * sizeof(double));
	double *tmp = p->form == LK_FORM_ROWS ? malloc(((size_t)p->nbodies + 1) * LK_DU_STRIDE * sizeof(double)) : NULL;
	if (!w || (p->form == LK_FORM_ROWS && !tmp)) {
		free(w);
		free(tmp);
		return lk__fail(p, LK_ERR_NO_MEMORY, "metrics: out of memory");
	}
	lk__apply(p, lambda, w, 1, tmp);
	lk__metrics_from_w(p, lambda, w, LK_FRICTION_BOX, out);
	free(w);
	free(tmp);
	return LK_OK;
}

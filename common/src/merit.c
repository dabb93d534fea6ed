/* Merit functions shared by every solver, engine and tool. */
#include "problem.h"
#include "kernel.h"

#include <float.h>
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

/* Siconos's projection onto the cone K = {(r_n, r_t): |r_t| <= mu r_n} (projectionOnCone): 0 in the polar cone,
 * x itself inside, else the nearest point of the boundary. */
static void cone_project(double x[3], double mu)
{
	double t = sqrt(x[1] * x[1] + x[2] * x[2]);
	if (mu * t <= -x[0]) {
		x[0] = x[1] = x[2] = 0.0;
	} else if (!(t <= mu * x[0])) {
		double rn = (mu * t + x[0]) / (mu * mu + 1.0);
		x[1] *= mu * rn / t;
		x[2] *= mu * rn / t;
		x[0] = rn;
	}
}

/* The squared natural residual of one contact against Coulomb's cone with De Saxce's modified velocity
 * u_hat = (u_n + mu |u_t|, u_t): |r - P_K(r - u_hat)|^2, zero exactly where the contact obeys Coulomb's law
 * (Siconos's fc3d_unitary_compute_and_add_error; De Saxce & Feng 1998). */
static double contact_error2(const double r[3], const double u[3], double mu)
{
	double x[3] = {r[0] - u[0] - mu * sqrt(u[1] * u[1] + u[2] * u[2]), r[1] - u[1], r[2] - u[2]};
	cone_project(x, mu);
	double e0 = r[0] - x[0], e1 = r[1] - x[1], e2 = r[2] - x[2];
	return e0 * e0 + e1 * e1 + e2 * e2;
}

/* Row i is the second friction row of a contact's pair (lk__cone_pair at i - 1, as both adapters and the
 * generators lay a contact out: a normal row's two friction rows next to each other) */
static int second_of_pair(const lk_problem *p, int i)
{
	return i > 0 && lk__cone_pair(p, i - 1) && !(i > 1 && lk__cone_pair(p, i - 2));
}

unsigned lk__merit_sums_for(lk_merit m)
{
	switch (m) {
	case LK_MERIT_FISCHER: return LK__SUMS_FISCHER;
	case LK_MERIT_MODIFIED: return LK__SUMS_MODIFIED;
	case LK_MERIT_FC3D: return LK__SUMS_FC3D;
	case LK_MERIT_RES:
	case LK_MERIT_THETA:
	default: return 0;
	}
}

/* fmax without libm's call (the evaluations are hot in small solves); a NaN in b is ignored, as by fmax */
static inline double max2(double a, double b)
{
	return b > a ? b : a;
}

/* The running sums of lk__merit_sums_rows that a row and a whole contact (contact_sums) add to alike */
typedef struct sums_acc {
	double hh, maxh, viol, ee, nq, nl, nw;
} sums_acc;

static inline void add_h(sums_acc *a, double h)
{
	a->hh += h * h;
	if (fabs(h) > a->maxh || isnan(h))
		a->maxh = fabs(h);
}

static inline void add_norms(sums_acc *a, double q, double l, double w)
{
	a->nq += q * q;
	a->nl += l * l;
	a->nw += w * w;
}

/* Whether rows i, i + 1, i + 2 of [.., end) are a contact in the adapters' and Siconos's layout (a normal row, its
 * pair of friction rows right after it) that contact_sums may take whole. */
static inline int usual_contact(const lk_problem *p, int i, int end)
{
	return i + 2 < end && p->rows[i].findex < 0 && p->rows[i + 1].findex == i && lk__cone_pair(p, i + 1);
}

/* The sums of such a contact under the cone, RES's and Siconos's and no others: the terms the row-by-row loop below
 * adds for its three rows, in its order and so to the bit, without the loop's tests of each row's kind (a check of
 * merit=fc3d on a problem of a few contacts was mostly those) */
static void contact_sums(const lk_problem *p, const double *lambda, const double *w, int i, sums_acc *a)
{
	const lk__row *n = &p->rows[i], *t = &p->rows[i + 1];
	const double *l = lambda + i, *u = w + i;
	const double h0 = lk_natural_residual(l[0], u[0], n->lo, n->hi);
	const double v0 = max2(-INFINITY, max2(n->lo - l[0], l[0] - n->hi));
	add_h(a, h0);
	if (v0 > a->viol)
		a->viol = v0;
	add_norms(a, n->q, l[0], u[0]);
	a->ee += h0 * h0;
	const double hi = t->mu * fabs(l[0]);
	double x = l[1] - u[1], y = l[2] - u[2];
	lk__disc_project(&x, &y, hi);
	const double h1 = l[1] - x, h2 = l[2] - y, v = sqrt(l[1] * l[1] + l[2] * l[2]) - hi;
	add_h(a, h1);
	add_h(a, h2);
	if (v > a->viol)
		a->viol = v;
	add_norms(a, t->q, l[1], u[1]);
	add_norms(a, p->rows[i + 2].q, l[2], u[2]);
	a->ee += contact_error2(l, u, t->mu) - h0 * h0;
}

void lk__merit_sums_rows(const lk_problem *p, const double *lambda, const double *w, const double *du,
                         lk_friction friction, int begin, int end, unsigned sums, lk__merit_sums *s)
{
	double ff = 0, mod = 0;
	sums_acc a = {0, 0, 0, 0, 0, 0, 0};
	const int base = !(sums & LK__SUMS_NO_BASE);
	const int whole_contacts =
	    friction == LK_FRICTION_CONE && (sums & (LK__SUMS_ALL | LK__SUMS_NO_BASE)) == LK__SUMS_FC3D;
	for (int i = begin; i < end; ++i) {
		if (whole_contacts && usual_contact(p, i, end)) {
			contact_sums(p, lambda, w, i, &a);
			i += 2;
			continue;
		}
		/* a pair is summed whole with its first row, in the range (block) that row is in; w of a row outside
		 * the range is another block's to write, and is made here from du */
		if (i == begin && second_of_pair(p, i))
			continue;
		const lk__row *r = &p->rows[i];
		const int pair = lk__cone_pair(p, i), m = pair ? 2 : 1;
		const double wr[2] = {w[i], !pair ? 0.0 : i + 1 < end ? w[i + 1] : lk__w(p, i + 1, lambda, du)};
		const double *l = lambda + i;
		double lo, hi, h[2] = {0.0, 0.0}, v = -INFINITY;
		lk__bounds(r, lambda, &lo, &hi);
		if (!base) {
			/* RES's sums made already */
		} else if (pair && friction == LK_FRICTION_CONE) {
			/* Coulomb's cone: H_T = lambda_T - P_disc(lambda_T - w_T) over the contact's two rows */
			double x = l[0] - wr[0], y = l[1] - wr[1];
			lk__disc_project(&x, &y, hi);
			h[0] = l[0] - x;
			h[1] = l[1] - y;
			v = sqrt(l[0] * l[0] + l[1] * l[1]) - hi;
		} else {
			/* a pair's two rows have the same box, their normal row's */
			for (int k = 0; k < m; ++k) {
				h[k] = lk_natural_residual(l[k], wr[k], lo, hi);
				v = max2(v, max2(lo - l[k], l[k] - hi));
			}
		}
		for (int k = 0; k < m; ++k)
			add_h(&a, h[k]);
		if (v > a.viol)
			a.viol = v;
		if (sums & LK__SUMS_FISCHER) {
			for (int k = 0; k < m; ++k) {
				const double f = lk_fischer_boxed(l[k], wr[k], lo, hi);
				ff += f * f;
			}
		}
		if (sums & LK__SUMS_MODIFIED) {
			for (int k = 0; k < m; ++k)
				mod += fabs(l[k]) * fabs(wr[k]);
		}
		if (sums & LK__SUMS_FC3D) {
			for (int k = 0; k < m; ++k)
				add_norms(&a, p->rows[i + k].q, l[k], wr[k]);
			if (pair || lk__plane_friction(p, i)) {
				/* the contact against the cone (of the plane: its second tangent 0, as Siconos's fc2d measure
				 * has it); its normal row fi was (or will be) summed as a row of its own, whose term this one
				 * replaces */
				const int fi = r->findex;
				const double wf = fi >= begin && fi < end ? w[fi] : lk__w(p, fi, lambda, du);
				const double hf = lk_natural_residual(lambda[fi], wf, p->rows[fi].lo, p->rows[fi].hi);
				const double rc[3] = {lambda[fi], l[0], pair ? l[1] : 0.0}, uc[3] = {wf, wr[0], wr[1]};
				a.ee += contact_error2(rc, uc, r->mu) - hf * hf;
			} else {
				const double h0 = base ? h[0] : lk_natural_residual(l[0], wr[0], lo, hi);
				a.ee += h0 * h0;
			}
		}
		i += m - 1;
	}
	s->hh = a.hh;
	s->ff = ff;
	s->mod = mod;
	s->maxh = a.maxh;
	s->viol = a.viol;
	s->ee = a.ee;
	s->nq = a.nq;
	s->nl = a.nl;
	s->nw = a.nw;
	s->sums = sums & LK__SUMS_ALL;
}

void lk__merit_sums_finish(const lk__merit_sums *s, lk_metrics *m)
{
	m->res = sqrt(s->hh);
	m->theta = 0.5 * s->hh;
	m->fischer = s->sums & LK__SUMS_FISCHER ? 0.5 * s->ff : NAN;
	m->modified = s->sums & LK__SUMS_MODIFIED ? s->mod : NAN;
	m->max_h = s->maxh;
	m->max_bound_violation = s->viol;
	/* Siconos's scale: the largest of ||q||, ||r||, ||u|| (fc3d_compute_error), none when it is rounding */
	double scale = sqrt(fmax(s->nq, fmax(s->nl, s->nw)));
	double e = sqrt(fmax(s->ee, 0.0));
	m->fc3d = !(s->sums & LK__SUMS_FC3D) ? NAN : scale > DBL_EPSILON ? e / scale : e;
}

void lk__metrics_from_w(const lk_problem *p, const double *lambda, const double *w, lk_friction friction,
                        lk_metrics *m)
{
	lk__merit_sums s;
	lk__merit_sums_rows(p, lambda, w, NULL, friction, 0, p->nrows, LK__SUMS_ALL, &s);
	lk__merit_sums_finish(&s, m);
}

double lk__merit_value(const lk_metrics *m, lk_merit merit)
{
	switch (merit) {
	case LK_MERIT_THETA: return m->theta;
	case LK_MERIT_FISCHER: return m->fischer;
	case LK_MERIT_MODIFIED: return m->modified;
	case LK_MERIT_FC3D: return m->fc3d;
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

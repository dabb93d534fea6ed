/* One contact's Coulomb problem solved exactly (cone_local.h): the three cases of Coulomb's law in turn, as the
 * local solvers of nonsmooth block Gauss-Seidel do (Jean 1999 sec. 4; Alart & Curnier 1991 for the law in the form
 * r = P_K(r - rho u_hat)). Take-off and sticking are closed forms; sliding is one equation in the direction of slip
 * t (|t| = 1): with r_T = -mu r_n t and u_n = 0,
 *     r_n(t) = -b_n / (W_nn - mu W_nT t),   u_T(t) = r_n(t) (W_Tn - mu W_TT t) + b_T,
 * and the law asks u_T(t) = alpha t with alpha >= 0: the component of u_T across t is 0. Newton's method on that
 * component as a function of t's angle, started from the slip the sticking solution would need, converges in a
 * few steps; a root on which the law fails (alpha < 0, r_n <= 0) is refused and the caller steps as before. */
#include "cone_local.h"

#include <math.h>
#include <string.h>

/* Pivots of W's LU factors below this fraction of their diagonal entry: W is taken as singular. */
#define LOCAL_PIVOT 1e-12
/* Newton steps on the direction of slip, and the angle below which a step is the last: Newton's method converges
 * quadratically, so the angle is then known to about its square, below the rounding of the rest */
#define SLIDE_MAX_STEPS 30
#define SLIDE_LAST 1e-6

int lk__block3_invert(const lk__block3 *W, lk__block3 *inv)
{
	double a[3][3], x[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	memcpy(a, W->m, sizeof a);
	for (int k = 0; k < 3; ++k) {
		if (!(W->m[k][k] > 0) || !(a[k][k] > LOCAL_PIVOT * W->m[k][k]))
			return 0;
		for (int i = k + 1; i < 3; ++i) {
			const double l = a[i][k] / a[k][k];
			for (int j = k + 1; j < 3; ++j)
				a[i][j] -= l * a[k][j];
			for (int j = 0; j < 3; ++j)
				x[i][j] -= l * x[k][j];
		}
	}
	for (int i = 2; i >= 0; --i)
		for (int j = 0; j < 3; ++j) {
			double s = x[i][j];
			for (int k = i + 1; k < 3; ++k)
				s -= a[i][k] * x[k][j];
			x[i][j] = s / a[i][i];
		}
	memcpy(inv->m, x, sizeof x);
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j)
			if (!isfinite(x[i][j]))
				return 0;
	return 1;
}

/* The sliding case from the direction t0 (unit): r on K's rim with u_n = 0 and u_T along t; 0 where Newton's
 * method leaves the region where r_n > 0, stalls, or ends on a root with u_T against t. */
static int slide_solve(const lk__block3 *W, const double b[3], double mu, double tx, double ty, double r[3])
{
	const double(*m)[3] = W->m;
	for (int k = 0; k <= SLIDE_MAX_STEPS; ++k) {
		const double px = -ty, py = tx; /* t rotated by a right angle: dt / dangle */
		const double ct = m[0][1] * tx + m[0][2] * ty, cp = m[0][1] * px + m[0][2] * py;
		const double D = m[0][0] - mu * ct;
		if (!(D > 0))
			return 0;
		const double iD = 1.0 / D, rn = -b[0] * iD;
		const double stx = m[1][1] * tx + m[1][2] * ty, sty = m[2][1] * tx + m[2][2] * ty;
		const double spx = m[1][1] * px + m[1][2] * py, spy = m[2][1] * px + m[2][2] * py;
		const double vx = m[1][0] - mu * stx, vy = m[2][0] - mu * sty;
		const double ux = rn * vx + b[1], uy = rn * vy + b[2];
		const double g = ux * px + uy * py;
		const double rn_d = rn * mu * cp * iD;
		const double dux = rn_d * vx - rn * mu * spx, duy = rn_d * vy - rn * mu * spy;
		const double gd = dux * px + duy * py - (ux * tx + uy * ty);
		const double step = gd != 0 ? -g / gd : 0.0;
		if (!isfinite(step))
			return 0;
		const int last = fabs(step) <= SLIDE_LAST || g == 0;
		if (last && (!(rn > 0) || ux * tx + uy * ty < -SLIDE_LAST * (fabs(ux) + fabs(uy))))
			return 0;
		/* t turned by atan(step): Newton's step in the angle for a small one, less than a right angle always */
		const double nx = tx + step * px, ny = ty + step * py, inv = 1.0 / sqrt(nx * nx + ny * ny);
		tx = nx * inv;
		ty = ny * inv;
		if (last) {
			/* the step below SLIDE_LAST leaves an error of about its square: r at the turned t, no further step */
			const double rl = -b[0] / (m[0][0] - mu * (m[0][1] * tx + m[0][2] * ty));
			if (!(rl > 0))
				return 0;
			r[0] = rl;
			r[1] = -mu * rl * tx;
			r[2] = -mu * rl * ty;
			return 1;
		}
	}
	return 0;
}

int lk__cone_local_solve(const lk__block3 *W, const lk__block3 *inv, const double u[3], double mu, double r[3])
{
	const double(*m)[3] = W->m, (*v)[3] = inv->m;
	double b[3];
	b[0] = u[0] - (m[0][0] * r[0] + m[0][1] * r[1] + m[0][2] * r[2]);
	if (!(b[0] < 0)) { /* take-off: r = 0 leaves u_n = b_n >= 0 */
		if (b[0] != b[0])
			return 0;
		r[0] = r[1] = r[2] = 0.0;
		return 1;
	}
	double x[3];
	for (int i = 0; i < 3; ++i)
		x[i] = r[i] - (v[i][0] * u[0] + v[i][1] * u[1] + v[i][2] * u[2]);
	const double xt = sqrt(x[1] * x[1] + x[2] * x[2]);
	if (x[0] > 0 && xt <= mu * x[0]) { /* sticking: u = 0 inside the cone */
		r[0] = x[0];
		r[1] = x[1];
		r[2] = x[2];
		return 1;
	}
	b[1] = u[1] - (m[1][0] * r[0] + m[1][1] * r[1] + m[1][2] * r[2]);
	b[2] = u[2] - (m[2][0] * r[0] + m[2][1] * r[1] + m[2][2] * r[2]);
	if (mu == 0) { /* frictionless: u_n = 0 with r_T = 0 */
		r[0] = -b[0] / m[0][0];
		r[1] = r[2] = 0.0;
		return 1;
	}
	/* sliding, from the direction opposite to the friction the sticking solution would need: a start that does
	 * not depend on the iterate (started from the current iterate's slip, a sweep on Siconos's OneObject packing
	 * cycled at an error of 2e-3 instead of converging) */
	double tx = 1.0, ty = 0.0;
	if (xt > 0) {
		tx = -x[1] / xt;
		ty = -x[2] / xt;
	} else {
		const double bt = sqrt(b[1] * b[1] + b[2] * b[2]);
		if (bt > 0) {
			tx = b[1] / bt;
			ty = b[2] / bt;
		}
	}
	return slide_solve(W, b, mu, tx, ty, r);
}

/* Semismooth Newton on Coulomb's cone: the natural map of Alart & Curnier ("A mixed formulation for frictional
 * contact problems prone to Newton like solution methods", CMAME 92, 1991, eq. (20)-(21)), the method of
 * Siconos's fc3d_nonsmooth_Newton_AlartCurnier, here matrix-free: newton-minmap:friction=cone.
 *
 * A contact c has a normal row n (lo = 0, hi = inf) and its two friction rows t (a cone pair, lk__cone_pair).
 * With w = A lambda + q and per-contact steps rho_n = 1 / A_nn, rho_t = 1 / max(A_t1t1, A_t2t2):
 *     z_n = lambda_n - rho_n w_n,          F_n = lambda_n - max(z_n, 0)
 *     z_t = lambda_t - rho_t w_t,          F_t = lambda_t - P_D(mu max(z_n, 0))(z_t)
 * where P_D(R) projects onto the disc of radius R. F = 0 exactly where the contact obeys Coulomb's law
 * (a min map in the normal direction, maximal dissipation in the tangent plane; the minimum map of Erleben 2013
 * eq. (60) is the same map without friction). Every other row keeps its boxed minimum map with step 1 / A_ii,
 * friction rows outside a pair with the bounds of their normal row frozen for the iteration (newton.c).
 *
 * F is piecewise smooth, and one element of its B-subdifferential is, per contact, dF = B dlambda + C dw with
 *     z_n > 0: B_nn = 0, C_nn = rho_n;  else B_nn = 1, C_nn = 0
 *     |z_t| <= R: B_tt = 0, C_tt = rho_t I
 *     |z_t| > R:  with u = z_t / |z_t|, P' = R / |z_t| (I - u u^T):
 *                 B_tt = I - P', C_tt = rho_t P', and when z_n > 0 B_tn = -mu u, C_tn = mu rho_n u
 * (Alart & Curnier 1991 sec. 4). The Newton system, with a Levenberg-Marquardt term,
 *     (B + C A + mu_k I) d = -F,   mu_k = lm ||F_k|| / ||F(0)||
 * (the choice mu_k ~ ||F_k|| of Yamashita & Fukushima 2001, which keeps Newton's local rate; ||F(0)||, F at
 * lambda = 0, makes it independent of units and of the start), is solved by GMRES (Saad & Schultz 1986)
 * through products with A alone, right-preconditioned by each contact's 3 x 3 block B_c + C_c A_cc, the exact
 * inverse for contacts that do not touch one another. The term is what solves the granular packings: their W
 * is singular (more contact rows than the bodies' degrees of freedom), the Newton system on their sticking
 * contacts is then singular and inconsistent, and plain Newton stalls at errors of 1e-5 to 1e-7 where the
 * damped one goes on (docs/benchmarks.md, "Coulomb's cone"). The step is globalized by a back-tracking on
 * 1/2 ||F||^2 with the non-monotone rule of Grippo, Lampariello & Lucidi (1986): a full step that climbs over
 * a kink of F is taken where a monotone rule would crawl along it (Siconos's Newton takes the full step when
 * its line search fails). Where even that fails, a few sweeps of the cone's projected Gauss-Seidel (sweep.c)
 * move the iterate on, and Newton resumes from there.
 *
 * Work (docs/solvers.md, "Work"): a Krylov product counts LK_WORK_NEWTON_ROW a row, an evaluation of F at a
 * trial point LK_WORK_PRODUCT_ROW, the fall-back sweeps LK_WORK_SWEEP_ROW; the Krylov solve is cut to the work
 * left. */
#include "methods.h"

#include "kernel.h"
#include "krylov.h"
#include "sweep.h"

#include <stddef.h>
#include <string.h>

/* A unit of the Newton system: a contact's three rows (normal, two friction), a contact of the plane's two
 * (normal, its one friction row), or one row. */
typedef struct cone_unit {
	int m;          /* 1, 2 or 3 */
	int row[3];     /* the rows: normal, then the pair (or the plane's one friction row) */
	double rho[2];  /* steps: the normal's (or the row's), the pair's */
	double A[9];    /* the unit's diagonal block of A, m x m row-major */
	double B[9], C[9], P[9]; /* this iteration's Jacobian block, and the inverse of B + C A_cc */
} cone_unit;

typedef struct cone_state {
	lk__ctx *c;
	int n, nu;
	cone_unit *u;
	double *F, *w, *xt, *wt, *dx, *ax, *y, *rhs;
	double *du_t;       /* row form: the trial's M^-1 J^T x */
	double *du_k;       /* row form: scratch of the Krylov products */
	double fnorm2;      /* ||F||^2 at the iterate */
	double lm;          /* the Levenberg-Marquardt term mu_k of this iteration's Newton system */
} cone_state;

static double *dalloc(lk__arena *a, size_t n, int *fail)
{
	double *v = lk__arena_alloc(a, (n + 1) * sizeof(double));
	*fail |= !v;
	return v;
}

/* m x m inverse of M into out (Gauss-Jordan with partial pivoting); 0 when singular */
static int invert(int m, const double *M, double *out)
{
	double a[3][6];
	for (int i = 0; i < m; ++i)
		for (int j = 0; j < 2 * m; ++j)
			a[i][j] = j < m ? M[i * m + j] : (j - m == i);
	double scale = 0.0;
	for (int i = 0; i < m * m; ++i)
		scale = fmax(scale, fabs(M[i]));
	for (int k = 0; k < m; ++k) {
		int piv = k;
		for (int i = k + 1; i < m; ++i)
			if (fabs(a[i][k]) > fabs(a[piv][k]))
				piv = i;
		if (!(fabs(a[piv][k]) > 1e-12 * scale))
			return 0;
		for (int j = 0; j < 2 * m; ++j) {
			double t = a[k][j];
			a[k][j] = a[piv][j];
			a[piv][j] = t;
		}
		const double d = 1.0 / a[k][k];
		for (int j = 0; j < 2 * m; ++j)
			a[k][j] *= d;
		for (int i = 0; i < m; ++i) {
			if (i == k || a[i][k] == 0.0)
				continue;
			const double f = a[i][k];
			for (int j = 0; j < 2 * m; ++j)
				a[i][j] -= f * a[k][j];
		}
	}
	for (int i = 0; i < m; ++i)
		for (int j = 0; j < m; ++j)
			out[i * m + j] = a[i][m + j];
	return 1;
}

static double step_of(double aii)
{
	return aii > 0.0 && isfinite(1.0 / aii) ? 1.0 / aii : 1.0;
}

/* The units: each cone pair with its normal row (a normal row with lo = 0, hi = inf taken once), every other row
 * alone. */
static int make_units(cone_state *s, lk__arena *a)
{
	lk_problem *p = s->c->p;
	const int n = s->n;
	int *owner = lk__arena_alloc(a, ((size_t)n + 1) * sizeof(int));
	s->u = lk__arena_alloc(a, ((size_t)n + 1) * sizeof(cone_unit));
	if (!owner || !s->u)
		return 0;
	for (int i = 0; i < n; ++i)
		owner[i] = -1;
	int nu = 0;
	for (int i = 0; i < n; ++i) {
		if (!lk__cone_pair(p, i))
			continue;
		const int f = p->rows[i].findex;
		const lk__row *rf = &p->rows[f];
		if (owner[f] >= 0 || rf->findex >= 0 || rf->lo != 0.0 || rf->hi != INFINITY) {
			++i;
			continue;
		}
		cone_unit *u = &s->u[nu];
		u->m = 3;
		u->row[0] = f;
		u->row[1] = i;
		u->row[2] = i + 1;
		owner[f] = owner[i] = owner[i + 1] = nu++;
		++i;
	}
	/* a contact of the plane: a normal row and the one friction row right after it */
	for (int i = 1; i < n; ++i) {
		const lk__row *rf = &p->rows[i - 1];
		if (!lk__plane_friction(p, i) || owner[i] >= 0 || owner[i - 1] >= 0 || rf->findex >= 0 || rf->lo != 0.0 ||
		    rf->hi != INFINITY)
			continue;
		cone_unit *u = &s->u[nu];
		u->m = 2;
		u->row[0] = i - 1;
		u->row[1] = i;
		owner[i - 1] = owner[i] = nu++;
	}
	for (int i = 0; i < n; ++i) {
		if (owner[i] >= 0)
			continue;
		cone_unit *u = &s->u[nu++];
		u->m = 1;
		u->row[0] = i;
	}
	s->nu = nu;
	for (int k = 0; k < nu; ++k) {
		cone_unit *u = &s->u[k];
		for (int r = 0; r < u->m; ++r)
			for (int q = 0; q < u->m; ++q)
				u->A[r * u->m + q] = r == q ? p->rows[u->row[r]].diag : lk__a_entry(p, u->row[r], u->row[q]);
		u->rho[0] = step_of(u->A[0]);
		u->rho[1] = u->m == 3 ? step_of(fmax(u->A[4], u->A[8])) : u->m == 2 ? step_of(u->A[3]) : u->rho[0];
	}
	return 1;
}

/* F of unit u at (x, w); with jac, its Jacobian block (B, C) and the preconditioner's inverse. Returns ||F_u||^2. */
static double unit_eval(const lk_problem *p, cone_unit *u, const double *x, const double *w, double *F, int jac)
{
	double B[9] = {0}, C[9] = {0};
	double f2;
	if (u->m == 1) {
		const int i = u->row[0];
		double lo, hi;
		lk__bounds(&p->rows[i], x, &lo, &hi);
		const double z = x[i] - u->rho[0] * w[i], pz = lk__clamp(z, lo, hi);
		F[i] = x[i] - pz;
		f2 = F[i] * F[i];
		if (jac) {
			const int inside = z > lo && z < hi;
			B[0] = inside ? 0.0 : 1.0;
			C[0] = inside ? u->rho[0] : 0.0;
		}
	} else if (u->m == 2) {
		/* the plane's cone, an interval: the map above with the disc's projection one-dimensional, P_[-R,R], whose
		 * derivative on the boundary is 0 and whose radius moves with the normal's z_n (Alart & Curnier 1991 in
		 * one tangent direction) */
		const int in = u->row[0], it = u->row[1];
		const double mu = p->rows[it].mu, rn = u->rho[0], rt = u->rho[1];
		const double zn = x[in] - rn * w[in], pn = zn > 0.0 ? zn : 0.0;
		const double R = mu * pn, zt = x[it] - rt * w[it], side = zt > 0.0 ? 1.0 : -1.0;
		const int inside = fabs(zt) <= R;
		F[in] = x[in] - pn;
		F[it] = x[it] - (inside ? zt : side * R);
		f2 = F[in] * F[in] + F[it] * F[it];
		if (jac) {
			if (zn > 0.0)
				C[0] = rn;
			else
				B[0] = 1.0;
			if (inside) {
				C[3] = rt;
			} else {
				B[3] = 1.0;
				if (zn > 0.0) {
					B[2] = -mu * side;
					C[2] = mu * rn * side;
				}
			}
		}
	} else {
		const int in = u->row[0], i1 = u->row[1], i2 = u->row[2];
		const double mu = p->rows[i1].mu, rn = u->rho[0], rt = u->rho[1];
		const double zn = x[in] - rn * w[in], pn = zn > 0.0 ? zn : 0.0;
		const double R = mu * pn;
		const double z1 = x[i1] - rt * w[i1], z2 = x[i2] - rt * w[i2], nz = sqrt(z1 * z1 + z2 * z2);
		F[in] = x[in] - pn;
		if (nz <= R) {
			F[i1] = x[i1] - z1;
			F[i2] = x[i2] - z2;
		} else {
			F[i1] = x[i1] - R * z1 / nz;
			F[i2] = x[i2] - R * z2 / nz;
		}
		f2 = F[in] * F[in] + F[i1] * F[i1] + F[i2] * F[i2];
		if (jac) {
			if (zn > 0.0)
				C[0] = rn;
			else
				B[0] = 1.0;
			if (nz <= R) {
				C[4] = C[8] = rt;
			} else {
				const double u1 = z1 / nz, u2 = z2 / nz, sc = R / nz;
				const double P11 = sc * (1.0 - u1 * u1), P12 = -sc * u1 * u2, P22 = sc * (1.0 - u2 * u2);
				B[4] = 1.0 - P11;
				B[5] = B[7] = -P12;
				B[8] = 1.0 - P22;
				C[4] = rt * P11;
				C[5] = C[7] = rt * P12;
				C[8] = rt * P22;
				if (zn > 0.0) {
					B[3] = -mu * u1;
					B[6] = -mu * u2;
					C[3] = mu * rn * u1;
					C[6] = mu * rn * u2;
				}
			}
		}
	}
	if (jac) {
		const int m = u->m;
		double G[9];
		for (int r = 0; r < m; ++r)
			for (int q = 0; q < m; ++q) {
				double g = B[r * m + q];
				for (int k = 0; k < m; ++k)
					g += C[r * m + k] * u->A[k * m + q];
				G[r * m + q] = g;
			}
		memcpy(u->B, B, sizeof B);
		memcpy(u->C, C, sizeof C);
		if (!invert(m, G, u->P)) {
			memset(u->P, 0, sizeof u->P);
			for (int r = 0; r < m; ++r)
				u->P[r * m + r] = 1.0;
		}
	}
	return f2;
}

/* F and ||F||^2 at (x, w) over every unit; with jac also the blocks */
static double eval_F(cone_state *s, const double *x, const double *w, double *F, int jac)
{
	double f2 = 0.0;
	for (int k = 0; k < s->nu; ++k)
		f2 += unit_eval(s->c->p, &s->u[k], x, w, F, jac);
	return f2;
}

/* y = M x (add: y += M x), M each unit's block at offset `off` (P, B or C) */
static void units_apply(const cone_state *s, size_t off, const double *x, double *y, int add)
{
	for (int k = 0; k < s->nu; ++k) {
		const cone_unit *u = &s->u[k];
		const double *M = (const double *)((const char *)u + off);
		const int m = u->m;
		for (int r = 0; r < m; ++r) {
			double v = add ? y[u->row[r]] : 0.0;
			for (int q = 0; q < m; ++q)
				v += M[r * m + q] * x[u->row[q]];
			y[u->row[r]] = v;
		}
	}
}

/* y = P^-1 x, unit by unit */
static void precondition(const cone_state *s, const double *x, double *y)
{
	units_apply(s, offsetof(cone_unit, P), x, y, 0);
}

/* y = (B + C A) P^-1 x: the right-preconditioned Newton operator, one product with A */
static void newton_op(void *user, const double *x, double *y)
{
	cone_state *s = user;
	lk__ctx *c = s->c;
	precondition(s, x, s->y);
	lk__product(c, c->body_rows, s->y, s->ax, 0, s->du_k);
	lk__count(c, c->n, LK_WORK_NEWTON_ROW);
	units_apply(s, offsetof(cone_unit, B), s->y, y, 0);
	units_apply(s, offsetof(cone_unit, C), s->ax, y, 1);
	if (s->lm > 0)
		for (int i = 0; i < s->n; ++i)
			y[i] += s->lm * s->y[i];
}

/* w = A x + q at a trial x, its M^-1 J^T x into du */
static void evaluate(cone_state *s, const double *x, double *w, double *du)
{
	lk__product(s->c, s->c->body_rows, x, w, 1, du);
	lk__count(s->c, s->c->n, LK_WORK_PRODUCT_ROW);
}

/* The metrics of the iterate from its w, as the monitor's evaluation would make them */
static void metrics_of(const cone_state *s, lk_metrics *m)
{
	const lk__ctx *c = s->c;
	lk__merit_sums sums;
	lk__merit_sums_rows(c->p, c->lambda, s->w, c->du, c->cfg->friction, 0, c->n, c->sums, &sums);
	lk__merit_sums_finish(&sums, m);
}

/* The fall-back: a few sweeps of the cone's projected Gauss-Seidel from the iterate, then w and F anew */
static double fallback(cone_state *s, int sweeps)
{
	lk__ctx *c = s->c;
	double change = 0.0;
	if (c->p->form == LK_FORM_ROWS)
		lk__recompute_du(c->p, c->lambda, c->du);
	/* each sweep leaves room for the evaluation after them */
	for (int k = 0; k < sweeps && lk__work_left(c) >= (double)c->n * (LK_WORK_SWEEP_ROW + LK_WORK_PRODUCT_ROW); ++k) {
		double d = lk__pgs_sweep_cone(c, 1.0);
		if (!(d <= change))
			change = d;
	}
	evaluate(s, c->lambda, s->w, s->du_t);
	if (c->p->form == LK_FORM_ROWS)
		memcpy(c->du, s->du_t, ((size_t)c->p->nbodies + 1) * LK_DU_STRIDE * sizeof(double));
	s->fnorm2 = eval_F(s, c->lambda, s->w, s->F, 0);
	return change;
}

/* The natural map's iterates need not be feasible; the answer should be: each unit's rows projected (a normal
 * row onto lambda >= 0, its pair onto the disc of radius mu lambda_n, any other row onto its box), a move of at
 * most ||F||. ||F|| is scaled by rho = 1 / A_ii, so that move can cost A_ii times as much in w: the projected
 * point is kept only where its merit stays within the tolerance, or no worse than the iterate's. */
static void project_feasible(cone_state *s, const lk_metrics *m)
{
	lk__ctx *c = s->c;
	const lk_problem *p = c->p;
	double *x = s->xt;
	memcpy(x, c->lambda, (size_t)s->n * sizeof(double));
	for (int k = 0; k < s->nu; ++k) {
		const cone_unit *u = &s->u[k];
		const int i = u->row[0];
		if (u->m == 3) {
			x[i] = fmax(x[i], 0.0);
			lk__disc_project(&x[u->row[1]], &x[u->row[2]], p->rows[u->row[1]].mu * x[i]);
		} else if (u->m == 2) {
			x[i] = fmax(x[i], 0.0);
			const double R = p->rows[u->row[1]].mu * x[i];
			x[u->row[1]] = lk__clamp(x[u->row[1]], -R, R);
		} else if (p->rows[i].findex < 0) {
			x[i] = lk__clamp(x[i], p->rows[i].lo, p->rows[i].hi);
		}
	}
	/* friction rows outside a contact's unit, against their normal rows' projected impulses */
	for (int k = 0; k < s->nu; ++k) {
		const cone_unit *u = &s->u[k];
		const int i = u->row[0];
		if (u->m == 1 && p->rows[i].findex >= 0) {
			double lo, hi;
			lk__bounds(&p->rows[i], x, &lo, &hi);
			x[i] = lk__clamp(x[i], lo, hi);
		}
	}
	if (memcmp(x, c->lambda, (size_t)s->n * sizeof(double)) == 0)
		return;
	memcpy(s->dx, c->lambda, (size_t)s->n * sizeof(double));
	lk__set_lambda(c, x);
	lk_metrics mp;
	lk__current_metrics(c, &mp);
	const lk_merit merit = c->cfg->merit;
	const double before = lk__merit_value(m, merit), after = lk__merit_value(&mp, merit);
	if (!(after <= fmax(before, c->cfg->tol_abs)))
		lk__set_lambda(c, s->dx);
}

/* The line search's memory: a step is accepted when it lowers 1/2 ||F||^2 below the largest of the last this many
 * iterates' (Grippo, Lampariello & Lucidi 1986), so that a full Newton step that climbs over a kink of F is
 * taken where a monotone rule would crawl along it */
#define LK_CONE_NONMONOTONE 10

/* The warm-up's sweeps between two looks at the merit */
#define LK_CONE_WARM_CHUNK 10

/* Fall-back sweeps after a failed Newton step: enough to move a stalled iterate, few next to a Krylov solve */
#define LK_CONE_FALLBACK_SWEEPS 10

static lk_status iterate(cone_state *sp, lk__arena *kry, int restart);

lk_status lk__solve_newton_cone(lk__ctx *c)
{
	lk_problem *p = c->p;
	lk__arena *a = &p->arena;
	const int n = c->n;
	const lk_newton_config *nc = &c->cfg->newton;
	cone_state s;
	memset(&s, 0, sizeof s);
	s.c = c;
	s.n = n;
	int fail = !make_units(&s, a);
	const size_t nb = ((size_t)p->nbodies + 1) * LK_DU_STRIDE;
	s.F = dalloc(a, n, &fail);
	s.w = dalloc(a, n, &fail);
	s.xt = dalloc(a, n, &fail);
	s.wt = dalloc(a, n, &fail);
	s.dx = dalloc(a, n, &fail);
	s.ax = dalloc(a, n, &fail);
	s.y = dalloc(a, n, &fail);
	s.rhs = dalloc(a, n, &fail);
	s.du_t = dalloc(a, nb, &fail);
	s.du_k = dalloc(a, nb, &fail);
	const int restart = nc->gmres_restart < n ? nc->gmres_restart : n;
	lk__arena kry;
	if (fail || lk__arena_carve(a, lk__gmres_scratch_bytes(n, restart), &kry) != LK_OK)
		return lk__fail(p, LK_ERR_NO_MEMORY, "newton-minmap: out of memory for the cone's %d rows", n);
	lk_status st = iterate(&s, &kry, restart);
	lk__arena_carve_release(&kry);
	return st;
}

static lk_status iterate(cone_state *sp, lk__arena *kry, int restart)
{
	lk__ctx *c = sp->c;
	lk_problem *p = c->p;
	const int n = c->n;
	const lk_newton_config *nc = &c->cfg->newton;
	const size_t nb = ((size_t)p->nbodies + 1) * LK_DU_STRIDE;
	double *lambda = c->lambda;
	/* the warm-up sweeps (pgs_warm; -1: none without a budget, else a quarter of it, as newton.c) */
	int warm = nc->pgs_warm;
	if (warm < 0)
		warm = c->cfg->budget > 0 ? (int)(0.25 * c->cfg->budget) : 0;
	if (warm > 0) {
		/* in chunks, each ended by the evaluation the sweeps need anyway: a problem the sweeps solve within
		 * the warm-up stops there, at the sweeps' cost */
		for (int done = 0; done < warm;) {
			const int k = warm - done < LK_CONE_WARM_CHUNK ? warm - done : LK_CONE_WARM_CHUNK;
			fallback(sp, k);
			done += k;
			lk_metrics m;
			metrics_of(sp, &m);
			if (lk__merit_solved(c, &m) || !isfinite(m.res)) {
				c->stop = lk__monitor_metrics(c, 1, 0.0, &m);
				if (c->stop == LK_STOP_NONE)
					c->stop = LK_STOP_ABSOLUTE;
				c->iterations = 1;
				project_feasible(sp, &m);
				return LK_OK;
			}
			if (lk__work_left(c) < (double)n * (LK_WORK_SWEEP_ROW + LK_WORK_PRODUCT_ROW))
				break;
		}
	} else {
		evaluate(sp, lambda, sp->w, sp->du_t);
		if (p->form == LK_FORM_ROWS)
			memcpy(c->du, sp->du_t, nb * sizeof(double));
		sp->fnorm2 = eval_F(sp, lambda, sp->w, sp->F, 0);
	}
	double eta = nc->forcing, fprev = sqrt(sp->fnorm2);
	/* the scale of F: its norm at lambda = 0, where w = q, whatever the start */
	for (int i = 0; i < n; ++i) {
		sp->xt[i] = 0.0;
		sp->wt[i] = p->rows[i].q;
	}
	double f0 = sqrt(eval_F(sp, sp->xt, sp->wt, sp->rhs, 0));
	if (!(f0 > 0) || !isfinite(f0))
		f0 = fprev > 0 ? fprev : 1.0;
	/* the Levenberg-Marquardt weight: off while GMRES solves the Newton systems and full steps are taken, lm
	 * from the first system GMRES cannot solve to its forcing term or step the line search refuses, then halved
	 * after each solved system and full step and doubled (up to 100 lm) after each one that is not */
	double lmc = 0.0;
	/* the merits of the last LK_CONE_NONMONOTONE iterates, for the line search's reference */
	double past[LK_CONE_NONMONOTONE];
	for (int k = 0; k < LK_CONE_NONMONOTONE; ++k)
		past[k] = sp->fnorm2;

	for (int it = 1;; ++it) {
		double max_change = 0.0;
		/* the Jacobian at the iterate, then GMRES on (B + C A) P^-1 y = -F, d = P^-1 y */
		sp->fnorm2 = eval_F(sp, lambda, sp->w, sp->F, 1);
		const double fn = sqrt(sp->fnorm2);
		sp->lm = lmc * fn / f0;
		for (int i = 0; i < n; ++i) {
			sp->rhs[i] = -sp->F[i];
			sp->ax[i] = 0.0;
		}
		double left = lk__work_left(c) - (double)n * LK_WORK_PRODUCT_ROW;
		int kmax = nc->krylov_max;
		if (isfinite(left))
			kmax = (int)fmin((double)kmax, left / ((double)n * LK_WORK_NEWTON_ROW));
		int newton_ok = 0, solved = 0, full = 0;
		if (kmax >= 1 && fn > 0.0) {
			lk__krylov_result kr;
			memset(sp->dx, 0, (size_t)n * sizeof(double));
			lk__arena_reset(kry);
			lk_status st = lk__gmres(kry, n, newton_op, sp, sp->rhs, sp->dx, eta, restart, kmax, &kr);
			if (st != LK_OK)
				return lk__fail(p, st, "newton-minmap: out of memory for GMRES on %d rows", n);
			c->inner_iterations += kr.iterations;
			solved = kr.converged;
			precondition(sp, sp->dx, sp->y);
			/* Armijo back-tracking on 1/2 ||F||^2 along d = sp->y */
			double tau = 1.0, ref = sp->fnorm2;
			for (int k = 0; k < LK_CONE_NONMONOTONE; ++k)
				ref = fmax(ref, past[k]);
			while (tau >= nc->ls_tau_min && lk__work_left(c) >= (double)n * LK_WORK_PRODUCT_ROW) {
				for (int i = 0; i < n; ++i)
					sp->xt[i] = lambda[i] + tau * sp->y[i];
				evaluate(sp, sp->xt, sp->wt, sp->du_t);
				double ft = eval_F(sp, sp->xt, sp->wt, sp->rhs, 0);
				if (isfinite(ft) && ft <= ref - 2.0 * nc->ls_alpha * tau * sp->fnorm2) {
					for (int i = 0; i < n; ++i) {
						const double d = fabs(sp->xt[i] - lambda[i]);
						if (!(d <= max_change))
							max_change = d;
					}
					memcpy(lambda, sp->xt, (size_t)n * sizeof(double));
					memcpy(sp->w, sp->wt, (size_t)n * sizeof(double));
					if (p->form == LK_FORM_ROWS)
						memcpy(c->du, sp->du_t, nb * sizeof(double));
					sp->fnorm2 = ft;
					newton_ok = 1;
					full = tau == 1.0;
					break;
				}
				tau *= nc->ls_beta;
			}
		}
		if (!newton_ok && lk__work_left(c) >= (double)c->n * (LK_WORK_SWEEP_ROW + LK_WORK_PRODUCT_ROW)) {
			max_change = fallback(sp, LK_CONE_FALLBACK_SWEEPS);
		} else if (!newton_ok && kmax < 1) {
			/* the budget pays for neither a Newton step nor a sweep with its evaluation: a last sweep where it
			 * pays for one, which needs no evaluation after it since the solve ends */
			if (lk__work_left(c) >= (double)c->n * LK_WORK_SWEEP_ROW)
				lk__pgs_sweep_cone(c, 1.0);
			c->iterations = it;
			c->stop = LK_STOP_BUDGET;
			lk_metrics m;
			lk__current_metrics(c, &m);
			project_feasible(sp, &m);
			return LK_OK;
		}
		if (solved && full)
			lmc = lmc < 0.01 * nc->lm ? 0.0 : 0.5 * lmc;
		else if (kmax >= 1)
			lmc = fmin(fmax(2.0 * lmc, nc->lm), 100.0 * nc->lm);
		/* Eisenstat & Walker 1996, choice 2 (gamma 0.9, alpha 2), capped by the configured forcing term */
		const double fnew = sqrt(sp->fnorm2);
		double e = fprev > 0.0 ? 0.9 * (fnew / fprev) * (fnew / fprev) : nc->forcing;
		if (0.9 * eta * eta > 0.1)
			e = fmax(e, 0.9 * eta * eta);
		eta = fmax(fmin(e, nc->forcing), 1e-12);
		fprev = fnew;
		past[it % LK_CONE_NONMONOTONE] = sp->fnorm2;
		c->iterations = it;
		lk_metrics m;
		metrics_of(sp, &m);
		c->stop = lk__monitor_metrics(c, it, max_change, &m);
		if (c->stop != LK_STOP_NONE) {
			project_feasible(sp, &m);
			return LK_OK;
		}
	}
}

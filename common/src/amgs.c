/* The accelerated modulus-based Gauss-Seidel family of Miyamoto & Yamashita 2019 (after Zheng & Yin 2013):
 * Method 3.1 / 3.2 matrix-free on the row form and on the CSR matrix form, AMSOR, and Method 2.2 on a
 * dense A as the reference.
 *
 * ---- The modulus transform, from the LCP to general boxes ----------------------------------------------
 *
 * Theorem 2.1 with Gamma = E / gamma maps a solution (lambda, w) of LCP(q, A) to
 *     x = (gamma lambda - Omega^-1 w) / 2,   and back by   lambda = (2 / gamma) x_+,   w = 2 Omega x_-.
 * For a row with bounds lo <= hi (either may be infinite) and the complementarity of docs/maths.md
 * (lambda = lo => w >= 0, lambda = hi => w <= 0, else w = 0), the same linear map x = (gamma lambda -
 * Omega^-1 w) / 2 is again one-to-one onto the pairs that satisfy it:
 *     lambda in (lo, hi), w = 0      <=>  x in (gamma lo / 2, gamma hi / 2)
 *     lambda = lo, w >= 0           <=>  x <= gamma lo / 2
 *     lambda = hi, w <= 0           <=>  x >= gamma hi / 2
 * so with P(x) = mid(gamma lo / 2, x, gamma hi / 2):
 *     lambda = (2 / gamma) P(x) = mid(lo, 2 x / gamma, hi),      w_hat = 2 Omega (P(x) - x).        (M1)
 * For lo = 0, hi = inf, P(x) = x_+ and P(x) - x = x_-: exactly Theorem 2.1. (M1) is eq. (10) with |x|
 * replaced by phi(x) = 2 P(x) - x: (A + gamma Omega) x = (gamma Omega - A) phi(x) - gamma q rearranges to
 * A lambda + q = w_hat, so every fixed point solves the boxed problem. phi is, like |.|, continuous and
 * piecewise linear with slopes +-1, hence |phi(a) - phi(b)| <= |a - b|: the only property of |.| that the
 * proof of Theorem 4.2 uses, so Theorem 4.2 and Corollary 4.3 hold unchanged for fixed finite or infinite
 * bounds. (Friction bounds move with the normal row's lambda, and there the theorem says nothing.)
 *
 * The paper's Method 3.2 writes lambda = (2 / gamma) p_BLCP(x); that agrees with (M1) for lo = 0, hi = inf
 * but mixes units otherwise (x is gamma / 2 times an impulse). (M1) projects 2 x / gamma instead.
 *
 * Repeating the steps from (12) to (14) with phi in place of |x| gives, row i, in the Gauss-Seidel order,
 *     x_i <- x_i - gamma / (A_ii + gamma Omega_ii) * ((A lambda^{k+1,i} + q)_i - w_hat_i),
 *     w_hat_i = 2 Omega_ii (P(x_i) - x_i) = gamma Omega_ii lambda_i - 2 Omega_ii x_i,                   (M2)
 * eq. (14) for the LCP. The matrix-free methods work with y = 2 x / gamma, in impulse units:
 *     y_i <- y_i - 2 ((A lambda + q)_i - c_i (lambda_i - y_i)) / (A_ii + c_i),  c_i = gamma Omega_ii,
 *     lambda_i <- mid(lo_i, y_i, hi_i).                                                                 (M3)
 * (A lambda + q)_i is w of the row, O(12) from the per-body accumulator du = M^-1 J^T lambda (eq. 16:
 * v^{k+1,i} = v + du), and the change of lambda_i goes back into du (Method 3.1), so a sweep costs
 * O(nnz(J)) as PGS does. x^0 = gamma lambda^0 / 2 (y^0 = lambda^0) as in Methods 2.2 / 3.1.
 *
 * What (M3) does, row by row:
 * - a free row (lo = -inf, hi = inf) has lambda = y and w_hat = 0: the modulus variable is lambda itself
 *   and (M3) is the SOR step lambda <- lambda - r w / A_ii with r = 2 A_ii / (A_ii + c_i), 2 / (1 + alpha
 *   gamma) for Omega = alpha D; SOR on the free rows of a positive definite A converges for r in (0, 2),
 *   which every alpha > 0 gives. So joints need no special case.
 * - a row strictly inside its bounds behaves the same way; a row at a bound keeps in y - lambda the
 *   estimate -w_hat / c of its w and relaxes it with factor (A_ii - c_i) / (A_ii + c_i).
 * - with Omega = D / gamma (c_i = A_ii) both cases collapse to y_i = lambda_i - w_i / A_ii, and
 *   lambda_i = mid(lo, lambda_i - w_i / A_ii, hi): AMGS[D / gamma] produces the projected Gauss-Seidel
 *   iterates exactly (up to rounding), for any gamma, LCP or boxed. Remark 4.4's best bound delta = tau,
 *   the norm of the Gauss-Seidel iteration matrix, is consistent with this. alpha < 1 / gamma
 *   over-relaxes (r > 1), which is where the gains of the paper's Figures 6-8 come from.
 * - friction rows take lo, hi from the normal row's current lambda (Method 3.2). w_hat uses the row's
 *   current lambda_i (the impulse the bodies carry), so the collapse to PGS above holds for them too.
 *
 * AMSOR (Zheng & Yin's splitting named in section 2.3, M1 = D / w - L, N1 = (1 / w - 1) D + U, M2 = D - U,
 * N2 = L): subtracting (M1 + gamma Omega) x^k from both sides of (11) leaves the right-hand side of (13)
 * unchanged and turns D + gamma Omega into D / w + gamma Omega, so AMSOR is (M2) / (M3) with A_ii / w in the
 * denominator; w = 1 is AMGS. Its free rows relax by r = 2 / (1 / w + alpha gamma), beyond 2 (divergent)
 * when alpha gamma < 1 - 1 / w.
 */
#include "methods.h"

#include "kernel.h"
#include "sweep.h"

#include <float.h>
#include <string.h>

/* Method 2.2 keeps a dense n x n A: 128 MiB at this size. */
#define LK_AMGS_DENSE_MAX_ROWS 4096

typedef struct amgs_par {
	double gamma;
	double kc, c0;  /* c_i = gamma Omega_ii = kc A_ii + c0 */
	double inv_w;   /* 1 / AMSOR relaxation; 1 for AMGS */
} amgs_par;

/* Omega = alpha D or omega_bar E with omega_bar = mean(D_ii) / gamma (Miyamoto & Yamashita 2019 sec. 5). The
 * records' A_ii is the diagonal of A in both forms (lk_problem_assemble_dense writes the same numbers). */
static amgs_par make_par(const lk__ctx *c)
{
	const lk_amgs_config *a = &c->cfg->amgs;
	amgs_par ap;
	ap.gamma = a->gamma;
	ap.inv_w = c->cfg->method == LK_METHOD_AMSOR ? 1.0 / a->amsor_w : 1.0;
	if (a->omega == LK_AMGS_OMEGA_BAR_E) {
		double sum = 0.0;
		for (int i = 0; i < c->n; ++i)
			sum += c->p->rows[i].diag;
		double omega_bar = sum / (double)c->n / a->gamma;
		ap.kc = 0.0;
		ap.c0 = a->gamma * omega_bar;
	} else {
		ap.kc = a->gamma * a->alpha;
		ap.c0 = 0.0;
	}
	return ap;
}

/* Method 3.2's first line, lambda^0 <- p_BLCP(lambda^0): normal and other rows first, then friction rows
 * against their normal rows' projected lambda. */
static void project_start(lk__ctx *c)
{
	const lk_problem *p = c->p;
	double *lambda = c->lambda;
	int changed = 0;
	for (int pass = 0; pass < 2; ++pass) {
		for (int i = 0; i < c->n; ++i) {
			const lk__row *r = &p->rows[i];
			if ((r->findex >= 0) != (pass == 1))
				continue;
			double lo, hi;
			lk__bounds(r, lambda, &lo, &hi);
			double v = lk__clamp(lambda[i], lo, hi);
			if (v != lambda[i]) {
				lambda[i] = v;
				changed = 1;
			}
		}
	}
	if (changed)
		lk__set_lambda(c, lambda);
}

/* (M3) as y_i <- y_i + h_i (lambda_i - y_i) - g_i w_i with g_i = 2 / (A_ii / w + c_i) and h_i = g_i c_i, both
 * fixed for the solve and stored side by side (gh[2 i], gh[2 i + 1]): the division leaves the chain that runs
 * through du from one row to the next, which is then as long as PGS's (J du, the sums, a difference, the
 * clamp). */
static lk_status make_coefficients(lk__ctx *c, const amgs_par *ap, double **gh_out)
{
	double *gh = lk__arena_alloc(&c->p->arena, 2 * (size_t)c->n * sizeof(double));
	if (!gh)
		return lk__fail(c->p, LK_ERR_NO_MEMORY, "%s: out of memory for %d rows", lk_method_name(c->cfg->method),
		                c->n);
	for (int i = 0; i < c->n; ++i) {
		double d = c->p->rows[i].diag, ci = ap->kc * d + ap->c0;
		double g = 2.0 / (d * ap->inv_w + ci);
		gh[2 * i] = g;
		gh[2 * i + 1] = g * ci;
	}
	*gh_out = gh;
	return LK_OK;
}

/* One sweep of (M3) (lk__modulus_sweep, sweep.c), arranged like the PGS production sweep on the same
 * skeleton: the part of y_i's update that does not wait for the rows before, y_i + h_i (lambda_i - y_i) -
 * g_i (q_i + s_i lambda_i), taken first, g_i J_i du through the sweep cursor. */
typedef struct modulus_sweep_args {
	const double *gh;
	double *y;
} modulus_sweep_args;

static double modulus_sweep(lk__ctx *c, const int *perm, void *user)
{
	const modulus_sweep_args *m = user;
	return lk__modulus_sweep(c, m->gh, m->y, perm);
}

lk_status lk__solve_amgs(lk__ctx *c)
{
	const lk_solver_config *cfg = c->cfg;
	int *perm = NULL;
	lk_status st = lk__sweep_order(c, 0, &perm);
	if (st != LK_OK)
		return st;
	double *y = lk__arena_alloc(&c->p->arena, (size_t)c->n * sizeof(double));
	if (!y)
		return lk__fail(c->p, LK_ERR_NO_MEMORY, "%s: out of memory for %d rows", lk_method_name(cfg->method),
		                c->n);
	amgs_par ap = make_par(c);
	double *gh = NULL;
	st = make_coefficients(c, &ap, &gh);
	if (st != LK_OK)
		return st;
	project_start(c);
	memcpy(y, c->lambda, (size_t)c->n * sizeof(double)); /* x^0 = gamma lambda^0 / 2 */
	modulus_sweep_args args = {gh, y};
	lk__sweep_until_stop(c, perm, modulus_sweep, &args);
	return LK_OK;
}

/* Method 2.2 (Miyamoto & Yamashita 2019 eq. 14, boxed through (M2)) on an explicitly assembled dense A,
 * in the paper's variable x. The row form's du is kept current so that the monitor's residuals hold. */
typedef struct dense_sweep_args {
	const double *A;
	double *x;
	amgs_par ap;
} dense_sweep_args;

static double dense_sweep(lk__ctx *c, const int *perm, void *user)
{
	const dense_sweep_args *a = user;
	const lk_problem *p = c->p;
	const double *A = a->A;
	double *x = a->x;
	double *lambda = c->lambda, *du = c->du;
	const double gamma = a->ap.gamma;
	const int n = c->n, rows_form = p->form == LK_FORM_ROWS;
	double max_change = 0.0;
	for (int k = 0; k < n; ++k) {
		int i = perm ? perm[k] : k;
		const lk__row *r = &p->rows[i];
		const double *Ai = A + (size_t)i * n;
		/* sum_{j<i} A_ij lambda_j^{k+1} + sum_{j>=i} A_ij lambda_j^k: lambda is updated in place */
		double w = r->q;
		for (int j = 0; j < n; ++j)
			w += Ai[j] * lambda[j];
		double lo, hi;
		lk__bounds(r, lambda, &lo, &hi);
		double aii = Ai[i];
		double om = (a->ap.kc * aii + a->ap.c0) / gamma; /* Omega_ii */
		double w_hat = gamma * om * lambda[i] - 2.0 * om * x[i];  /* 2 Omega_ii (x_-)_i for the LCP */
		double xn = x[i] - gamma / (aii + gamma * om) * (w - w_hat);
		double ln = lk__clamp(2.0 * xn / gamma, lo, hi);
		double d = ln - lambda[i];
		if (!(fabs(d) <= DBL_MAX) || !(fabs(xn) <= DBL_MAX)) {
			max_change = NAN;
			break;
		}
		x[i] = xn;
		if (d != 0.0) {
			lambda[i] = ln;
			if (rows_form)
				lk__row_apply(r, du, d);
		}
		if (fabs(d) > max_change)
			max_change = fabs(d);
	}
	lk__count(c, n, LK_WORK_SWEEP_ROW);
	return max_change;
}

lk_status lk__solve_amgs_dense(lk__ctx *c)
{
	const lk_solver_config *cfg = c->cfg;
	lk_problem *p = c->p;
	int n = c->n;
	if (n > LK_AMGS_DENSE_MAX_ROWS)
		return lk__fail(p, LK_ERR_LIMIT, "amgs-dense: %d rows exceed the dense limit of %d rows", n,
		                LK_AMGS_DENSE_MAX_ROWS);
	int *perm = NULL;
	lk_status st = lk__sweep_order(c, 0, &perm);
	if (st != LK_OK)
		return st;
	double *A = lk__arena_alloc(&p->arena, (size_t)n * (size_t)n * sizeof(double));
	double *x = lk__arena_alloc(&p->arena, (size_t)n * sizeof(double));
	if (!A || !x)
		return lk__fail(p, LK_ERR_NO_MEMORY, "amgs-dense: out of memory for a dense %d x %d matrix", n, n);
	/* the paper's Method 2.2 forms A = J M^-1 J^T explicitly; its cost is part of the method's time */
	st = lk_problem_assemble_dense(p, LK_AMGS_DENSE_MAX_ROWS, A, NULL);
	if (st != LK_OK)
		return st;
	project_start(c);
	for (int i = 0; i < n; ++i)
		x[i] = 0.5 * cfg->amgs.gamma * c->lambda[i];
	dense_sweep_args args = {A, x, make_par(c)};
	lk__sweep_until_stop(c, perm, dense_sweep, &args);
	return LK_OK;
}

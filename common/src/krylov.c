/* Krylov solvers used by PGS-SM's reduced systems and by the Newton methods, matrix-free. */
#include "krylov.h"

#include <math.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static double dot(int n, const double *a, const double *b)
{
	double s = 0;
	for (int i = 0; i < n; ++i)
		s += a[i] * b[i];
	return s;
}

/* Hestenes-Stiefel CG with optional Jacobi preconditioning. On a PSD matrix a direction of zero or
 * negative curvature ends the iteration (breakdown) with the last iterate, which is finite. */
lk_status lk__cg(lk__arena *arena, int n, lk__matvec_fn A, void *user, const double *inv_diag, const double *b,
                 double *x, double tol, int max_iter, lk__krylov_result *res)
{
	lk__krylov_result out = {0, 0, 0, 0};
	double *r = lk__arena_alloc(arena, ((size_t)n + 1) * sizeof(double));
	double *z = lk__arena_alloc(arena, ((size_t)n + 1) * sizeof(double));
	double *d = lk__arena_alloc(arena, ((size_t)n + 1) * sizeof(double));
	double *Ad = lk__arena_alloc(arena, ((size_t)n + 1) * sizeof(double));
	if (!r || !z || !d || !Ad)
		return LK_ERR_NO_MEMORY;
	/* r = b - A x; from x = 0 (every PGS-SM subspace step) that is b, without the product */
	int zero = 1;
	for (int i = 0; i < n && zero; ++i)
		zero = x[i] == 0.0;
	if (zero) {
		memcpy(r, b, (size_t)n * sizeof(double));
	} else {
		A(user, x, Ad);
		for (int i = 0; i < n; ++i)
			r[i] = b[i] - Ad[i];
	}
	double bnorm = sqrt(dot(n, b, b));
	double target = tol * (bnorm > 0 ? bnorm : 1.0);
	for (int i = 0; i < n; ++i)
		z[i] = inv_diag ? inv_diag[i] * r[i] : r[i];
	memcpy(d, z, (size_t)n * sizeof(double));
	double rz = dot(n, r, z);
	double rnorm = sqrt(dot(n, r, r));
	int k = 0;
	while (rnorm > target && k < max_iter) {
		A(user, d, Ad);
		double dAd = dot(n, d, Ad);
		if (!(dAd > 1e-300 * dot(n, d, d)) || !isfinite(dAd)) {
			out.breakdown = 1;
			break;
		}
		double alpha = rz / dAd;
		if (!isfinite(alpha)) {
			out.breakdown = 1;
			break;
		}
		for (int i = 0; i < n; ++i) {
			x[i] += alpha * d[i];
			r[i] -= alpha * Ad[i];
		}
		++k;
		for (int i = 0; i < n; ++i)
			z[i] = inv_diag ? inv_diag[i] * r[i] : r[i];
		double rz_next = dot(n, r, z);
		rnorm = sqrt(dot(n, r, r));
		if (!(rz > 0)) {
			out.breakdown = 1;
			break;
		}
		double beta = rz_next / rz;
		rz = rz_next;
		for (int i = 0; i < n; ++i)
			d[i] = z[i] + beta * d[i];
	}
	out.iterations = k;
	out.residual = rnorm;
	out.converged = rnorm <= target;
	if (res)
		*res = out;
	return LK_OK;
}

/* Restarted GMRES(m) after Saad 2003, Algorithm 6.9 (the Krylov method Erleben 2013 sec. 6 uses for the Newton
 * equations): Arnoldi with modified Gram-Schmidt, Givens rotations on the Hessenberg matrix so that the
 * residual norm of the least-squares problem is known at every step without forming x. The true residual
 * b - A x is recomputed at every restart, and once more at the end, so res->residual is never an estimate.
 * A singular A (a PSD reduced Newton matrix, a Jacobian with zero rows) shows up as a zero pivot of the
 * triangular factor or as a cycle without progress: the solve stops there with the last finite x. */
lk_status lk__gmres(lk__arena *arena, int n, lk__matvec_fn A, void *user, const double *b, double *x,
                    double tol, int restart, int max_iter, lk__krylov_result *res)
{
	lk__krylov_result out = {0, 0, 0, 0};
	int m = restart < 1 ? 1 : restart;
	if (m > n)
		m = n > 0 ? n : 1;
	size_t ld = (size_t)n + 1; /* one spare entry keeps n = 0 allocations non-empty */
	double *V = lk__arena_alloc(arena, (size_t)(m + 1) * ld * sizeof(double));
	double *r = lk__arena_alloc(arena, ld * sizeof(double));
	double *Hs = lk__arena_alloc(arena, (size_t)(m + 1) * (size_t)m * sizeof(double));
	double *cs = lk__arena_alloc(arena, (size_t)(m + 1) * sizeof(double));
	double *sn = lk__arena_alloc(arena, (size_t)(m + 1) * sizeof(double));
	double *g = lk__arena_alloc(arena, (size_t)(m + 1) * sizeof(double));
	double *y = lk__arena_alloc(arena, (size_t)(m + 1) * sizeof(double));
	if (!V || !r || !Hs || !cs || !sn || !g || !y)
		return LK_ERR_NO_MEMORY;
#define HS(i, j) Hs[(size_t)(j) * (size_t)(m + 1) + (size_t)(i)]
	double bnorm = sqrt(dot(n, b, b));
	double target = tol * (bnorm > 0 ? bnorm : 1.0);
	if (!isfinite(target))
		target = 0;
	int total = 0;
	double beta = INFINITY, prev_beta = INFINITY, estimate = INFINITY;
	/* r = b - A x; from x = 0 (every Newton direction) that is b, without the product */
	int zero = 1;
	for (int i = 0; i < n && zero; ++i)
		zero = x[i] == 0.0;
	for (;;) {
		/* the products spent after a cycle: its least-squares estimate of the residual stands for the true
		 * one, which would take one more product than the caller allowed */
		if (total >= max_iter && total > 0) {
			beta = estimate;
			break;
		}
		if (zero) {
			memcpy(r, b, (size_t)n * sizeof(double));
			zero = 0;
		} else {
			A(user, x, r);
			for (int i = 0; i < n; ++i)
				r[i] = b[i] - r[i];
		}
		beta = sqrt(dot(n, r, r));
		if (!isfinite(beta)) {
			/* cannot happen from a finite x and a finite operator; report it rather than iterate on it */
			out.breakdown = 1;
			break;
		}
		if (beta <= target || total >= max_iter || out.breakdown)
			break;
		/* a whole cycle that did not reduce the residual will not do better the next time: A is singular
		 * on the Krylov space and b is not in its range */
		if (!(beta < prev_beta * (1.0 - 1e-12))) {
			out.breakdown = 1;
			break;
		}
		prev_beta = beta;
		for (int i = 0; i < n; ++i)
			V[i] = r[i] / beta;
		g[0] = beta;
		for (int i = 1; i <= m; ++i)
			g[i] = 0;
		int k = 0; /* columns of the Hessenberg matrix in use */
		for (int j = 0; j < m && total < max_iter; ++j) {
			double *vj = V + (size_t)j * ld, *wv = V + (size_t)(j + 1) * ld;
			A(user, vj, wv);
			++total;
			double wnorm0 = sqrt(dot(n, wv, wv));
			for (int i = 0; i <= j; ++i) {
				const double *vi = V + (size_t)i * ld;
				double h = dot(n, wv, vi);
				HS(i, j) = h;
				for (int l = 0; l < n; ++l)
					wv[l] -= h * vi[l];
			}
			double hn = sqrt(dot(n, wv, wv));
			HS(j + 1, j) = hn;
			int finite = isfinite(hn) && isfinite(wnorm0);
			for (int i = 0; i <= j && finite; ++i)
				finite = isfinite(HS(i, j));
			if (!finite) {
				out.breakdown = 1;
				break;
			}
			/* previous rotations, then the one that annihilates H(j+1, j) */
			for (int i = 0; i < j; ++i) {
				double a = HS(i, j), c = HS(i + 1, j);
				HS(i, j) = cs[i] * a + sn[i] * c;
				HS(i + 1, j) = -sn[i] * a + cs[i] * c;
			}
			double a = HS(j, j), c = HS(j + 1, j);
			double rr = hypot(a, c);
			if (rr > 0) {
				cs[j] = a / rr;
				sn[j] = c / rr;
			} else {
				cs[j] = 1;
				sn[j] = 0;
			}
			HS(j, j) = rr;
			HS(j + 1, j) = 0;
			g[j + 1] = -sn[j] * g[j];
			g[j] = cs[j] * g[j];
			k = j + 1;
			/* hn = 0: the Krylov space is invariant under A, nothing more to gain from this cycle (the
			 * "lucky" breakdown when A is regular on it; the singular case is caught below) */
			if (!(hn > 1e-14 * wnorm0) || fabs(g[j + 1]) <= target)
				break;
			for (int l = 0; l < n; ++l)
				wv[l] /= hn;
		}
		if (k == 0)
			break;
		estimate = fabs(g[k]);
		/* back substitution on the leading columns whose pivot is not negligible: a zero pivot means A is
		 * singular there, and the shorter least-squares solution is the best finite one */
		double rmax = 0;
		for (int i = 0; i < k; ++i)
			rmax = fmax(rmax, fabs(HS(i, i)));
		int kk = 0;
		while (kk < k && fabs(HS(kk, kk)) > 1e-14 * rmax)
			++kk;
		if (kk < k)
			out.breakdown = 1;
		for (int i = kk - 1; i >= 0; --i) {
			double s = g[i];
			for (int l = i + 1; l < kk; ++l)
				s -= HS(i, l) * y[l];
			y[i] = s / HS(i, i);
		}
		int ok = 1;
		for (int i = 0; i < kk && ok; ++i)
			ok = isfinite(y[i]);
		if (!ok) {
			out.breakdown = 1;
			break;
		}
		/* x += V y, written into r first so that a non-finite sum never reaches x */
		for (int l = 0; l < n; ++l) {
			double s = x[l];
			for (int i = 0; i < kk; ++i)
				s += V[(size_t)i * ld + l] * y[i];
			r[l] = s;
		}
		for (int l = 0; l < n && ok; ++l)
			ok = isfinite(r[l]);
		if (!ok) {
			out.breakdown = 1;
			break;
		}
		memcpy(x, r, (size_t)n * sizeof(double));
		if (kk == 0)
			break;
	}
#undef HS
	out.iterations = total;
	out.residual = beta;
	out.converged = beta <= target;
	if (res)
		*res = out;
	return LK_OK;
}

size_t lk__gmres_scratch_bytes(int n, int restart)
{
	size_t m = (size_t)(restart < 1 ? 1 : restart), ld = (size_t)(n < 0 ? 0 : n) + 1;
	if (m > ld)
		m = ld;
	/* the seven allocations of lk__gmres, each rounded up to the arena's 64-byte alignment */
	size_t bytes = (m + 1) * ld * sizeof(double) + ld * sizeof(double) + (m + 1) * m * sizeof(double) +
	               4 * (m + 1) * sizeof(double);
	return bytes + 7 * 64;
}

size_t lk__cg_scratch_bytes(int n)
{
	return 4 * ((size_t)(n < 0 ? 0 : n) + 1) * sizeof(double) + 4 * 64;
}


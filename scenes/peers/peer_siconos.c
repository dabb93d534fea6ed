/* Thin bridge to Siconos numerics' LCP solvers; everything it calls is Siconos's own. */
#include "peer_siconos.h"

#include "lcpkit/lcpkit.h"

#include <siconos/numerics/FrictionContactProblem.h>
#include <siconos/numerics/Friction_cst.h>
#include <siconos/numerics/GlobalFrictionContactProblem.h>
#include <siconos/numerics/LCP_Solvers.h>
#include <siconos/numerics/NonSmoothDrivers.h>
#include <siconos/numerics/fc3d_compute_error.h>
#include <siconos/numerics/LinearComplementarityProblem.h>
#include <siconos/numerics/NumericsMatrix.h>
#include <siconos/numerics/SolverOptions.h>
#include <siconos/numerics/lcp_cst.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[LK_PEER_COUNT] = {
	"siconos-lemke", "siconos-pgs", "siconos-psor", "siconos-newton-min", "siconos-newton-fb",
};

const char *lk_peer_name(lk_peer_solver s)
{
	return (unsigned)s < LK_PEER_COUNT ? names[s] : "unknown";
}

/* Siconos's side of a call: the dense row-major A (n x n) into its column-major matrix, the caller's limits
 * into the options. */
static void siconos_setup(NumericsMatrix *M, const double *A, int n, SolverOptions *opt, int max_iter, double tol)
{
	for (int i = 0; i < n; ++i)
		for (int j = 0; j < n; ++j)
			M->matrix0[(size_t)j * n + i] = A[(size_t)i * n + j];
	if (max_iter > 0)
		opt->iparam[SICONOS_IPARAM_MAX_ITER] = max_iter;
	if (tol > 0)
		opt->dparam[SICONOS_DPARAM_TOL] = tol;
}

lk_status lk_peer_siconos_lcp(lk_peer_solver s, int n, const double *A, const double *q, double *z, int max_iter,
                              double tol, lk_peer_result *res)
{
	static const int ids[LK_PEER_COUNT] = {
		SICONOS_LCP_LEMKE, SICONOS_LCP_PGS, SICONOS_LCP_PSOR, SICONOS_LCP_NEWTONMIN, SICONOS_LCP_NEWTON_FB_FBLSA,
	};
	if ((unsigned)s >= LK_PEER_COUNT || n < 1 || !A || !q || !z || !res)
		return LK_ERR_INVALID_ARGUMENT;
	NumericsMatrix *M = NM_create(NM_DENSE, n, n);
	double *qq = malloc((size_t)n * sizeof(double));
	double *w = malloc((size_t)n * sizeof(double));
	SolverOptions *opt = solver_options_create(ids[s]);
	if (!M || !qq || !w || !opt) {
		if (M)
			NM_free(M);
		free(qq);
		free(w);
		if (opt)
			solver_options_delete(opt);
		return LK_ERR_NO_MEMORY;
	}
	siconos_setup(M, A, n, opt, max_iter, tol);
	memcpy(qq, q, (size_t)n * sizeof(double));
	memset(z, 0, (size_t)n * sizeof(double));
	memset(w, 0, (size_t)n * sizeof(double));
	LinearComplementarityProblem prob;
	prob.size = n;
	prob.M = M;
	prob.q = qq;
	double t0 = lk_stats_now();
	res->info = lcp_driver_DenseMatrix(&prob, z, w, opt);
	res->seconds = lk_stats_now() - t0;
	res->iterations = opt->iparam[SICONOS_IPARAM_ITER_DONE];
	res->error = opt->dparam[SICONOS_DPARAM_RESIDU];
	solver_options_delete(opt);
	NM_free(M);
	free(qq);
	free(w);
	return LK_OK;
}

lk_status lk_peer_siconos_fc3d(int nc, const double *W, const double *q, const double *mu, double *r, int max_iter,
                               double tol, lk_peer_result *res, const double *error_of, double *error_out)
{
	if (nc < 1 || !W || !q || !mu || !r || !res)
		return LK_ERR_INVALID_ARGUMENT;
	const int n = 3 * nc;
	NumericsMatrix *M = NM_create(NM_DENSE, n, n);
	double *qq = malloc((size_t)n * sizeof(double)), *mm = malloc((size_t)nc * sizeof(double));
	double *u = calloc((size_t)n, sizeof(double)), *z = malloc((size_t)n * sizeof(double));
	SolverOptions *opt = solver_options_create(SICONOS_FRICTION_3D_NSGS);
	lk_status st = LK_OK;
	if (!M || !qq || !mm || !u || !z || !opt) {
		st = LK_ERR_NO_MEMORY;
	} else {
		siconos_setup(M, W, n, opt, max_iter, tol);
		memcpy(qq, q, (size_t)n * sizeof(double));
		memcpy(mm, mu, (size_t)nc * sizeof(double));
		memset(r, 0, (size_t)n * sizeof(double));
		FrictionContactProblem prob;
		prob.dimension = 3;
		prob.numberOfContacts = nc;
		prob.M = M;
		prob.q = qq;
		prob.mu = mm;
		double t0 = lk_stats_now();
		res->info = fc3d_driver(&prob, r, u, opt);
		res->seconds = lk_stats_now() - t0;
		res->iterations = opt->iparam[SICONOS_IPARAM_ITER_DONE];
		res->error = opt->dparam[SICONOS_DPARAM_RESIDU];
		if (error_of && error_out) {
			/* Siconos's measure needs the velocity of the reactions given: u = W r + q */
			memcpy(z, error_of, (size_t)n * sizeof(double));
			for (int i = 0; i < n; ++i) {
				double s = q[i];
				for (int j = 0; j < n; ++j)
					s += W[(size_t)i * n + j] * z[j];
				u[i] = s;
			}
			double norm_q = 0.0;
			for (int i = 0; i < n; ++i)
				norm_q += q[i] * q[i];
			fc3d_compute_error(&prob, z, u, tol > 0 ? tol : 1e-12, opt, sqrt(norm_q), error_out);
		}
	}
	if (opt)
		solver_options_delete(opt);
	if (M)
		NM_free(M);
	free(qq);
	free(mm);
	free(u);
	free(z);
	return st;
}

lk_status lk_peer_siconos_gfc3d(int n, int nc, const double *M, const double *H, const double *f, const double *w,
                                const double *mu, double *r, int max_iter, double tol, lk_peer_result *res)
{
	if (n < 1 || nc < 1 || !M || !H || !f || !w || !mu || !r || !res)
		return LK_ERR_INVALID_ARGUMENT;
	const int m = 3 * nc;
	NumericsMatrix *Ms = NM_create(NM_DENSE, n, n), *Hs = NM_create(NM_DENSE, n, m);
	double *q = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)m);
	double *mm = malloc(sizeof(double) * (size_t)nc), *u = calloc((size_t)m, sizeof(double));
	double *v = calloc((size_t)n, sizeof(double));
	SolverOptions *opt = solver_options_create(SICONOS_GLOBAL_FRICTION_3D_NSGS_WR);
	lk_status st = LK_OK;
	if (!Ms || !Hs || !q || !b || !mm || !u || !v || !opt) {
		st = LK_ERR_NO_MEMORY;
	} else {
		siconos_setup(Ms, M, n, opt, max_iter, tol);
		for (int i = 0; i < n; ++i)
			for (int j = 0; j < m; ++j)
				Hs->matrix0[(size_t)j * n + i] = H[(size_t)i * m + j];
		memcpy(q, f, sizeof(double) * (size_t)n);
		memcpy(b, w, sizeof(double) * (size_t)m);
		memcpy(mm, mu, sizeof(double) * (size_t)nc);
		memset(r, 0, sizeof(double) * (size_t)m);
		GlobalFrictionContactProblem prob;
		memset(&prob, 0, sizeof prob);
		prob.dimension = 3;
		prob.numberOfContacts = nc;
		prob.M = Ms;
		prob.H = Hs;
		prob.q = q;
		prob.b = b;
		prob.mu = mm;
		double t0 = lk_stats_now();
		res->info = gfc3d_driver(&prob, r, u, v, opt);
		res->seconds = lk_stats_now() - t0;
		res->iterations = opt->iparam[SICONOS_IPARAM_ITER_DONE];
		res->error = opt->dparam[SICONOS_DPARAM_RESIDU];
	}
	if (opt)
		solver_options_delete(opt);
	if (Ms)
		NM_free(Ms);
	if (Hs)
		NM_free(Hs);
	free(q);
	free(b);
	free(mm);
	free(u);
	free(v);
	return st;
}

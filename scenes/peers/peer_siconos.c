/* Thin bridge to Siconos numerics' LCP solvers; everything it calls is Siconos's own. */
#include "peer_siconos.h"
#include "clock.h"

#include <siconos/numerics/LCP_Solvers.h>
#include <siconos/numerics/LinearComplementarityProblem.h>
#include <siconos/numerics/NumericsMatrix.h>
#include <siconos/numerics/SolverOptions.h>
#include <siconos/numerics/lcp_cst.h>

#include <stdlib.h>
#include <string.h>

static const char *const names[LK_PEER_COUNT] = {
	"siconos-lemke", "siconos-pgs", "siconos-psor", "siconos-newton-min", "siconos-newton-fb",
};

const char *lk_peer_name(lk_peer_solver s)
{
	return (unsigned)s < LK_PEER_COUNT ? names[s] : "unknown";
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
	for (int i = 0; i < n; ++i)
		for (int j = 0; j < n; ++j)
			M->matrix0[(size_t)j * n + i] = A[(size_t)i * n + j]; /* Siconos stores dense column-major */
	memcpy(qq, q, (size_t)n * sizeof(double));
	memset(z, 0, (size_t)n * sizeof(double));
	memset(w, 0, (size_t)n * sizeof(double));
	if (max_iter > 0)
		opt->iparam[SICONOS_IPARAM_MAX_ITER] = max_iter;
	if (tol > 0)
		opt->dparam[SICONOS_DPARAM_TOL] = tol;
	LinearComplementarityProblem prob;
	prob.size = n;
	prob.M = M;
	prob.q = qq;
	double t0 = lk__now();
	res->info = lcp_driver_DenseMatrix(&prob, z, w, opt);
	res->seconds = lk__now() - t0;
	res->iterations = opt->iparam[SICONOS_IPARAM_ITER_DONE];
	res->error = opt->dparam[SICONOS_DPARAM_RESIDU];
	solver_options_delete(opt);
	NM_free(M);
	free(qq);
	free(w);
	return LK_OK;
}

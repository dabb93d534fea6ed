/* Siconos numerics as a peer and an independent reference for LCPs (Debian libsiconos-numerics-dev). */
#ifndef LCPKIT_PEER_SICONOS_H
#define LCPKIT_PEER_SICONOS_H

#include "lcpkit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lk_peer_solver {
	LK_PEER_LEMKE = 0,   /* lcp_lexicolemke: a pivoting method, exact up to rounding */
	LK_PEER_PGS,         /* lcp_pgs */
	LK_PEER_PSOR,        /* lcp_psor */
	LK_PEER_NEWTON_MIN,  /* lcp_newton_min */
	LK_PEER_NEWTON_FB,   /* lcp_newton_FB */
	LK_PEER_COUNT
} lk_peer_solver;

typedef struct lk_peer_result {
	int info;            /* 0: Siconos reports success */
	int iterations;
	double error;        /* Siconos's own error measure */
	double seconds;
} lk_peer_result;

const char *lk_peer_name(lk_peer_solver s);
/* Solves LCP(q, A) (lambda >= 0, A lambda + q >= 0, complementary) for dense row-major A (n x n) with a
 * Siconos solver; z receives lambda (n entries). LK_OK when the call ran (Siconos's verdict is res.info),
 * LK_ERR_INVALID_ARGUMENT or LK_ERR_NO_MEMORY otherwise. */
lk_status lk_peer_siconos_lcp(lk_peer_solver s, int n, const double *A, const double *q, double *z, int max_iter,
                              double tol, lk_peer_result *res);

/* Solves the 3D frictional contact problem of nc contacts (Coulomb's cone; Siconos's fc3d: w = W r + q, rows
 * of contact c are 3c (normal), 3c + 1, 3c + 2 (tangents)) with Siconos's nonsmooth Gauss-Seidel,
 * fc3d_nsgs, for dense row-major W (3nc x 3nc); r receives the reactions. res.error is Siconos's fc3d error
 * measure. Also, when `error_of` is not NULL, Siconos's error measure of the reactions error_of (for example
 * lcpkit's) on the same problem, in *error_out. */
lk_status lk_peer_siconos_fc3d(int nc, const double *W, const double *q, const double *mu, double *r, int max_iter,
                               double tol, lk_peer_result *res, const double *error_of, double *error_out);

/* The global frictional contact problem of nc contacts, M v = f + H r, u = H^T v + w (FCLIB's global form;
 * dense row-major M: n x n, H: n x 3nc), solved with Siconos's gfc3d NSGS (SICONOS_GLOBAL_FRICTION_3D_NSGS_WR,
 * its own reduction to local form); r receives the reactions (3nc). */
lk_status lk_peer_siconos_gfc3d(int n, int nc, const double *M, const double *H, const double *f, const double *w,
                                const double *mu, double *r, int max_iter, double tol, lk_peer_result *res);

#ifdef __cplusplus
}
#endif

#endif

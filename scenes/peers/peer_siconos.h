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

#ifdef __cplusplus
}
#endif

#endif

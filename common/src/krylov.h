/* Krylov solvers (krylov.c), matrix-free through a callback: CG for the PGS-SM subspace solves, GMRES and CG
 * for the Newton systems. */
#ifndef LCPKIT_KRYLOV_H
#define LCPKIT_KRYLOV_H

#include "arena.h"

typedef void (*lk__matvec_fn)(void *user, const double *x, double *y); /* y = A x */

typedef struct lk__krylov_result {
	int iterations;
	double residual;      /* final ||b - A x|| (GMRES stopped by max_iter: the last cycle's estimate of it) */
	int converged;        /* residual <= tol ||b|| */
	int breakdown;        /* a non-positive curvature (CG) or a lucky/unlucky breakdown (GMRES) stopped it */
} lk__krylov_result;

/* Conjugate gradients for symmetric positive (semi)definite A; x holds the start and the result.
 * inv_diag (or NULL) is a Jacobi preconditioner. Scratch from the arena. Returns LK_ERR_NO_MEMORY or LK_OK;
 * never writes a non-finite x: on breakdown it returns the last finite iterate. */
lk_status lk__cg(lk__arena *arena, int n, lk__matvec_fn A, void *user, const double *inv_diag, const double *b,
                 double *x, double tol, int max_iter, lk__krylov_result *res);
/* Restarted GMRES(m) for general A; same conventions. */
lk_status lk__gmres(lk__arena *arena, int n, lk__matvec_fn A, void *user, const double *b, double *x,
                    double tol, int restart, int max_iter, lk__krylov_result *res);
/* Upper bounds of the arena scratch one lk__gmres / lk__cg call takes. */
size_t lk__gmres_scratch_bytes(int n, int restart);
size_t lk__cg_scratch_bytes(int n);

#endif

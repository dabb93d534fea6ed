/* Siconos numerics as a peer and an independent reference for LCPs (Debian libsiconos-numerics-dev). */
#ifndef LCPKIT_PEER_SICONOS_H
#define LCPKIT_PEER_SICONOS_H

#include "lcpkit/base.h"

#include <stdint.h>

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
	int info;            /* 0: Siconos reports success; LK_PEER_ABNORMAL: its process ended without a result */
	int iterations;
	double error;        /* Siconos's own error measure */
	double seconds;
} lk_peer_result;

/* lk_peer_result.info of a solve whose process ended without handing back a result (out of the memory it may
 * use, a crash, an exit of Siconos's own): error and seconds are NaN */
#define LK_PEER_ABNORMAL (-1000)
/* The most memory (bytes of data) the process of a Siconos solve may take; 0 (the default): half the machine's */
void lk_peer_set_memory_limit(size_t bytes);

/* How many calls of a solve whose one call took `seconds` are timed together, between two reads of the clock, so that
 * the reads (a system call each on the CPU clock, about a microsecond and a half on a virtual machine) are not
 * counted in a call of microseconds: enough calls for a fifth of a millisecond, at most 1,000; 1 for a call of that
 * or more. Both sides of `solve --peer` time their calls so. */
int lk_peer_batch_calls(double seconds);

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

/* A problem's contacts as Siconos's local frictional contact problem: in 3D (fc3d) contact c is the normal row
 * perm[3c] (lo = 0, hi = inf) and its pair of friction rows perm[3c + 1], perm[3c + 2] (findex to it, one mu); in
 * the plane (fc2d: every normal row has one friction row) the normal row perm[2c] and its friction row
 * perm[2c + 1]; W (compressed sparse rows, ascending columns; and dense row-major where asked) and q in that
 * order. */
typedef struct lk_peer_fc3d {
	int dim; /* 2 or 3: rows a contact */
	int nc;
	int *perm;
	int *row_ptr, *col; /* W: dim nc + 1 and nnz entries */
	double *val;
	int64_t nnz;
	double *W;          /* dense W (dim nc x dim nc), or NULL where the problem has more rows than asked for */
	double *q, *mu;
} lk_peer_fc3d;
struct lk_problem;
/* Fills *out from p, with the dense W too where p has at most max_dense rows. LK_ERR_UNSUPPORTED with a message in
 * err when a row is no part of such a contact (a joint row, a friction row without its pair), LK_ERR_LIMIT for a W
 * of more than 2^31 - 1 entries, LK_ERR_NO_MEMORY; *out is then empty. Free with lk_peer_fc3d_free. */
lk_status lk_peer_fc3d_make(struct lk_problem *p, int max_dense, lk_peer_fc3d *out, char *err, size_t err_size);
void lk_peer_fc3d_free(lk_peer_fc3d *f);
/* The local problem f as an lcpkit problem of the matrix form in Siconos's row order (contact c: normal row dim c,
 * its friction rows after it); NULL without memory. */
struct lk_problem *lk_peer_fc3d_problem(const lk_peer_fc3d *f);
/* Siconos's relative error (fc3d_compute_error, or fc2d_compute_error in the plane) of the impulses lambda of the
 * problem f was made from (its row order), in *error, computed in this process: its tolerance tol only sets
 * what Siconos would print. */
lk_status lk_peer_siconos_error(const lk_peer_fc3d *f, const double *lambda, double tol, double *error);

/* Siconos's solvers of the frictional contact problem that `lcpkit solve --peer siconos` runs. */
typedef enum lk_peer_fc3d_solver {
	LK_PEER_FC3D_NSGS = 0, /* fc3d_nsgs: nonsmooth Gauss-Seidel, a local Newton (Alart-Curnier) per contact; in
	                        * the plane fc2d_nsgs, each contact solved exactly */
	LK_PEER_FC3D_NSN_AC,   /* fc3d_nonsmooth_Newton_AlartCurnier: semismooth Newton with a sparse direct solve;
	                        * in the plane fc2d_cpg, conjugate projected gradients (Siconos has no fc2d Newton) */
	LK_PEER_FC3D_COUNT
} lk_peer_fc3d_solver;
/* The solver's name for a problem of dim (2 or 3) rows a contact */
const char *lk_peer_fc3d_name(int dim, lk_peer_fc3d_solver s);

/* Solves f's frictional contact problem (f->dim rows a contact: 2, Siconos's fc2d; 3, fc3d as lk_peer_siconos_fc3d)
 * with solver s on W in Siconos's sparse block storage (dim x dim blocks, the storage its own readers give these
 * solvers), from r = 0 (r: dim nc entries); res.error is Siconos's error of the reactions it returns
 * (fc3d_compute_error, fc2d_compute_error), res.seconds the call's time on lcpkit's statistics clock. The solver
 * runs in a child process (peer_siconos.c says why): one that ends abnormally gives res.info LK_PEER_ABNORMAL. */
lk_status lk_peer_siconos_fc3d_solve(lk_peer_fc3d_solver s, const lk_peer_fc3d *f, double *r, int max_iter, double tol,
                                     lk_peer_result *res);

/* A local frictional contact problem as Siconos's .dat files hold it (the test problems in Siconos's
 * numerics/src/FrictionContact/test/data), read by Siconos's own reader (frictionContact_new_from_filename):
 * dim (2 or 3) rows a contact, W's nonzero entries, q and each contact's mu. */
typedef struct lk_peer_dat {
	int dim, nc, n, count;
	int *row, *col;
	double *val, *q, *mu;
} lk_peer_dat;
/* Reads path into *out. Siconos's reader trusts the file (it allocates what the file states and ends the process on
 * a read it cannot make), so it runs in a process of its own under the memory limit of lk_peer_set_memory_limit,
 * its output silenced: a file it cannot read is refused (LK_ERR_PARSE) with err saying so, and nothing else is
 * lost. LK_ERR_IO for a file that cannot be opened. Free with lk_peer_dat_free. */
lk_status lk_peer_siconos_read_dat(const char *path, lk_peer_dat *out, char *err, size_t err_size);
/* Whether path begins with a number, as a .dat file does (its space dimension): one worth handing to the reader */
int lk_peer_siconos_dat_like(const char *path);
void lk_peer_dat_free(lk_peer_dat *d);

/* The global frictional contact problem of nc contacts, M v = f + H r, u = H^T v + w (FCLIB's global form;
 * dense row-major M: n x n, H: n x 3nc), solved with Siconos's gfc3d NSGS (SICONOS_GLOBAL_FRICTION_3D_NSGS_WR,
 * its own reduction to local form); r receives the reactions (3nc). */
lk_status lk_peer_siconos_gfc3d(int n, int nc, const double *M, const double *H, const double *f, const double *w,
                                const double *mu, double *r, int max_iter, double tol, lk_peer_result *res);

#ifdef __cplusplus
}
#endif

#endif

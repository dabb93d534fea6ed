/* Thin bridge to Siconos numerics' LCP solvers; everything it calls is Siconos's own. */
#define _GNU_SOURCE 1 /* qsort_r */
#include "peer_siconos.h"

#include "lcpkit/lcpkit.h"

#include <siconos/numerics/FrictionContactProblem.h>
#include <siconos/numerics/Friction_cst.h>
#include <siconos/numerics/GlobalFrictionContactProblem.h>
#include <siconos/numerics/LCP_Solvers.h>
#include <siconos/numerics/NonSmoothDrivers.h>
#include <siconos/numerics/fc2d_compute_error.h>
#include <siconos/numerics/fc3d_compute_error.h>
#include <siconos/numerics/LinearComplementarityProblem.h>
#include <siconos/numerics/NumericsMatrix.h>
#include <siconos/numerics/SolverOptions.h>
#include <siconos/numerics/SparseBlockMatrix.h>
#include <siconos/numerics/lcp_cst.h>
#include <suitesparse/cs.h> /* CSparseMatrix whole: W's entries of a .dat file */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

int lk_peer_batch_calls(double seconds)
{
	const double batch = 2e-4;
	return !(seconds > 0) || seconds >= batch ? 1 : seconds * 1000 <= batch ? 1000 : (int)ceil(batch / seconds);
}

/* Siconos's fc3d driver (fc2d's for dim 2) on the problem (M, q, mu) of nc contacts from r = 0, through its own
 * copies qq, mm; u receives its velocities, *prob the problem for its error measure. `calls` calls are timed
 * together (lk_peer_batch_calls), each from r = 0 and fresh copies; res->seconds is one call's share. */
static void fc3d_run(FrictionContactProblem *prob, int dim, NumericsMatrix *M, int nc, const double *q,
                     const double *mu, double *qq, double *mm, double *r, double *u, SolverOptions *opt, int calls,
                     lk_peer_result *res)
{
	const size_t n = (size_t)dim * nc;
	prob->dimension = dim;
	prob->numberOfContacts = nc;
	prob->M = M;
	prob->q = qq;
	prob->mu = mm;
	double t0 = 0.0;
	for (int k = 0; k < calls; ++k) {
		memcpy(qq, q, n * sizeof(double));
		memcpy(mm, mu, (size_t)nc * sizeof(double));
		memset(r, 0, n * sizeof(double));
		if (k == 0)
			t0 = lk_stats_now();
		res->info = dim == 2 ? fc2d_driver(prob, r, u, opt) : fc3d_driver(prob, r, u, opt);
	}
	res->seconds = (lk_stats_now() - t0) / calls;
	res->iterations = opt->iparam[SICONOS_IPARAM_ITER_DONE];
}

/* Siconos's relative error (fc3d_compute_error; fc2d_compute_error where prob is of the plane) of the reactions r on
 * prob, q its vector of n entries, at tolerance tol (1e-12 where none is given); u (n entries) receives the
 * velocities W r + q, which Siconos's function makes from prob's M itself */
static double fc3d_error(FrictionContactProblem *prob, double *r, double *u, const double *q, int n, double tol,
                         SolverOptions *opt)
{
	double norm_q = 0.0, error = 0.0;
	for (int i = 0; i < n; ++i)
		norm_q += q[i] * q[i];
	if (prob->dimension == 2)
		fc2d_compute_error(prob, r, u, tol > 0 ? tol : 1e-12, sqrt(norm_q), &error);
	else
		fc3d_compute_error(prob, r, u, tol > 0 ? tol : 1e-12, opt, sqrt(norm_q), &error);
	return error;
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
		FrictionContactProblem prob;
		fc3d_run(&prob, 3, M, nc, q, mu, qq, mm, r, u, opt, 1, res);
		res->error = opt->dparam[SICONOS_DPARAM_RESIDU];
		if (error_of && error_out) {
			memcpy(z, error_of, (size_t)n * sizeof(double));
			*error_out = fc3d_error(&prob, z, u, q, n, tol, opt);
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

static NumericsMatrix *sparse_block_of(const lk_peer_fc3d *f);

lk_status lk_peer_siconos_error(const lk_peer_fc3d *f, const double *lambda, double tol, double *error)
{
	if (!f || f->nc < 1 || (f->dim != 2 && f->dim != 3) || !f->row_ptr || !f->perm || !lambda || !error)
		return LK_ERR_INVALID_ARGUMENT;
	const int n = f->dim * f->nc;
	NumericsMatrix *M = sparse_block_of(f);
	double *z = malloc((size_t)n * sizeof(double)), *u = malloc((size_t)n * sizeof(double));
	double *qq = malloc((size_t)n * sizeof(double)), *mm = malloc((size_t)f->nc * sizeof(double));
	SolverOptions *opt = solver_options_create(f->dim == 2 ? SICONOS_FRICTION_2D_NSGS : SICONOS_FRICTION_3D_NSGS);
	lk_status st = LK_OK;
	if (!M || !z || !u || !qq || !mm || !opt) {
		st = LK_ERR_NO_MEMORY;
	} else {
		memcpy(qq, f->q, (size_t)n * sizeof(double));
		memcpy(mm, f->mu, (size_t)f->nc * sizeof(double));
		for (int a = 0; a < n; ++a)
			z[a] = lambda[f->perm[a]];
		FrictionContactProblem prob;
		prob.dimension = f->dim;
		prob.numberOfContacts = f->nc;
		prob.M = M;
		prob.q = qq;
		prob.mu = mm;
		*error = fc3d_error(&prob, z, u, f->q, n, tol, opt);
	}
	if (opt)
		solver_options_delete(opt);
	if (M)
		NM_free(M);
	free(z);
	free(u);
	free(qq);
	free(mm);
	return st;
}

void lk_peer_fc3d_free(lk_peer_fc3d *f)
{
	if (!f)
		return;
	free(f->perm);
	free(f->W);
	free(f->row_ptr);
	free(f->col);
	free(f->val);
	free(f->q);
	free(f->mu);
	memset(f, 0, sizeof *f);
}

/* Whether every row of p is a contact of two dimensions: a normal row and one friction row on it */
static int planar_contacts(lk_problem *p, int n)
{
	int *on = calloc((size_t)n + 1, sizeof(int)), normals = 0, planar = on != NULL && n % 2 == 0;
	for (int i = 0; planar && i < n; ++i) {
		int f;
		lk_problem_get_bounds(p, i, NULL, NULL, NULL, &f, NULL);
		if (f < 0)
			++normals;
		else
			planar = ++on[f] == 1;
	}
	for (int i = 0; planar && i < n; ++i) {
		int f;
		lk_problem_get_bounds(p, i, NULL, NULL, NULL, &f, NULL);
		planar = f >= 0 || on[i] == 1;
	}
	free(on);
	return planar && 2 * normals == n;
}

static int compare_entry_col(const void *a, const void *b, void *cols)
{
	const int x = ((const int *)cols)[*(const int *)a], y = ((const int *)cols)[*(const int *)b];
	return (x > y) - (x < y);
}

/* W and q of p (lk_problem_assemble_sparse) in out's order (out->perm): out->row_ptr, col, val, q, and the dense W
 * where p has at most max_dense rows; LK_OK or the failure, with its message in err */
static lk_status siconos_order_of(lk_problem *p, int n, int max_dense, lk_peer_fc3d *out, char *err, size_t esz)
{
	int *rp = malloc(((size_t)n + 1) * sizeof(int)), *inv = malloc((size_t)n * sizeof(int));
	double *q = malloc((size_t)n * sizeof(double));
	int64_t nnz = 0;
	lk_status st = rp && inv && q ? lk_problem_assemble_sparse(p, rp, NULL, NULL, q, 0, &nnz) : LK_ERR_NO_MEMORY;
	int *col = NULL, *order = NULL;
	double *val = NULL;
	if (st == LK_OK) {
		col = malloc(((size_t)nnz + 1) * sizeof(int));
		val = malloc(((size_t)nnz + 1) * sizeof(double));
		order = malloc(((size_t)n + 1) * sizeof(int));
		out->row_ptr = malloc(((size_t)n + 1) * sizeof(int));
		out->col = malloc(((size_t)nnz + 1) * sizeof(int));
		out->val = malloc(((size_t)nnz + 1) * sizeof(double));
		st = col && val && order && out->row_ptr && out->col && out->val ? LK_OK : LK_ERR_NO_MEMORY;
	}
	if (st == LK_OK)
		st = lk_problem_assemble_sparse(p, rp, col, val, NULL, nnz, &nnz);
	if (st == LK_OK && n <= max_dense) {
		out->W = calloc((size_t)n * n, sizeof(double));
		st = out->W ? LK_OK : LK_ERR_NO_MEMORY;
	}
	if (st == LK_OK) {
		for (int a = 0; a < n; ++a)
			inv[out->perm[a]] = a;
		/* row a is p's row perm[a], its columns renumbered and put in ascending order */
		int64_t e = 0;
		out->row_ptr[0] = 0;
		for (int a = 0; a < n; ++a) {
			const int r = out->perm[a], b = rp[r], m = rp[r + 1] - rp[r];
			for (int k = 0; k < m; ++k) {
				col[b + k] = inv[col[b + k]];
				order[k] = b + k;
			}
			qsort_r(order, (size_t)m, sizeof(int), compare_entry_col, col);
			for (int k = 0; k < m; ++k, ++e) {
				out->col[e] = col[order[k]];
				out->val[e] = val[order[k]];
				if (out->W)
					out->W[(size_t)a * n + out->col[e]] = out->val[e];
			}
			out->row_ptr[a + 1] = (int)e;
			out->q[a] = q[r];
		}
		out->nnz = nnz;
	} else {
		snprintf(err, esz, "%s", st == LK_ERR_NO_MEMORY ? "out of memory for W" : lk_problem_error(p));
	}
	free(rp);
	free(inv);
	free(q);
	free(col);
	free(val);
	free(order);
	return st;
}

lk_status lk_peer_fc3d_make(lk_problem *p, int max_dense, lk_peer_fc3d *out, char *err, size_t esz)
{
	memset(out, 0, sizeof *out);
	const int n = p ? lk_problem_row_count(p) : 0;
	/* a problem of the plane (a normal row and one friction row a contact) is Siconos's fc2d, else fc3d */
	const int dim = n > 0 && planar_contacts(p, n) ? 2 : 3;
	if (n == 0 || n % dim != 0) {
		snprintf(err, esz, "%d rows are no set of contacts (a normal row and two friction rows each, or one in "
		         "the plane)", n);
		return LK_ERR_UNSUPPORTED;
	}
	const int nc = n / dim;
	int *seen = calloc((size_t)n, sizeof(int));
	out->perm = malloc(sizeof(int) * (size_t)n);
	out->mu = malloc(sizeof(double) * (size_t)nc);
	out->q = malloc(sizeof(double) * (size_t)n);
	lk_status st = LK_OK;
	if (!seen || !out->perm || !out->mu || !out->q) {
		snprintf(err, esz, "out of memory for %d rows", n);
		st = LK_ERR_NO_MEMORY;
	}
	/* contacts: each friction row (a pair (i, i + 1) in 3D) on one normal row with one mu */
	int c = 0;
	for (int i = 0; st == LK_OK && i < n; ++i) {
		double m1, m2 = 0.0, lo, hi;
		int f1, f2 = -1;
		lk_problem_get_bounds(p, i, NULL, NULL, &m1, &f1, NULL);
		if (f1 < 0)
			continue;
		if (dim == 2) {
			f2 = f1;
			m2 = m1;
		} else if (i + 1 < n) {
			lk_problem_get_bounds(p, i + 1, NULL, NULL, &m2, &f2, NULL);
		}
		lk_problem_get_bounds(p, f1, &lo, &hi, NULL, NULL, NULL);
		if (f2 != f1 || m1 != m2 || lo != 0 || hi != INFINITY || seen[f1] || c >= nc) {
			snprintf(err, esz, "row %d is no friction row of a contact with its %snormal row", i,
			         dim == 3 ? "pair and its " : "");
			st = LK_ERR_UNSUPPORTED;
			break;
		}
		out->perm[dim * c] = f1;
		for (int k = 1; k < dim; ++k) {
			out->perm[dim * c + k] = i + k - 1;
			seen[i + k - 1] = 1;
		}
		out->mu[c++] = m1;
		seen[f1] = 1;
		i += dim - 2;
	}
	if (st == LK_OK && c != nc) {
		snprintf(err, esz, "%d of %d rows are no contact rows (a joint row, or a normal row without friction)",
		         n - dim * c, n);
		st = LK_ERR_UNSUPPORTED;
	}
	if (st == LK_OK)
		st = siconos_order_of(p, n, max_dense, out, err, esz);
	if (st == LK_OK) {
		out->nc = nc;
		out->dim = dim;
	} else {
		lk_peer_fc3d_free(out);
	}
	free(seen);
	return st;
}

lk_problem *lk_peer_fc3d_problem(const lk_peer_fc3d *f)
{
	const int dim = f->dim, n = dim * f->nc;
	double *lo = malloc(sizeof(double) * (size_t)n), *hi = malloc(sizeof(double) * (size_t)n);
	double *mu = malloc(sizeof(double) * (size_t)n);
	int *fi = malloc(sizeof(int) * (size_t)n);
	lk_problem *p = lo && hi && mu && fi ? lk_problem_create(LK_FORM_MATRIX) : NULL;
	if (p) {
		for (int i = 0; i < n; ++i) {
			const int normal = i % dim == 0;
			lo[i] = normal ? 0.0 : -INFINITY;
			hi[i] = INFINITY;
			mu[i] = normal ? 0.0 : f->mu[i / dim];
			fi[i] = normal ? -1 : i - i % dim;
		}
		if (lk_problem_set_matrix(p, n, f->row_ptr, f->col, f->val, f->q, lo, hi, mu, fi) != LK_OK) {
			lk_problem_destroy(p);
			p = NULL;
		}
	}
	free(lo);
	free(hi);
	free(mu);
	free(fi);
	return p;
}

const char *lk_peer_fc3d_name(int dim, lk_peer_fc3d_solver s)
{
	static const char *const names3[LK_PEER_FC3D_COUNT] = {"siconos-nsgs", "siconos-nsn-ac"};
	static const char *const names2[LK_PEER_FC3D_COUNT] = {"siconos-fc2d-nsgs", "siconos-fc2d-cpg"};
	return (unsigned)s >= LK_PEER_FC3D_COUNT || (dim != 2 && dim != 3) ? "unknown" : dim == 2 ? names2[s] : names3[s];
}

/* f's W in Siconos's sparse block storage of dim x dim blocks, by way of its compressed columns; NULL without
 * memory */
static NumericsMatrix *sparse_block_of(const lk_peer_fc3d *f)
{
	const int n = f->dim * f->nc;
	NumericsMatrix *S = NM_create(NM_SPARSE, n, n);
	if (!S)
		return NULL;
	NM_triplet_alloc(S, (CS_INT)(f->nnz ? f->nnz : 1));
	S->matrix2->origin = NSM_TRIPLET;
	for (int a = 0; a < n; ++a)
		for (int e = f->row_ptr[a]; e < f->row_ptr[a + 1]; ++e)
			if (f->val[e] != 0.0)
				NM_entry(S, a, f->col[e], f->val[e]);
	NumericsMatrix *out = NULL;
	SparseBlockStructuredMatrix *sbm = SBM_new();
	if (sbm && SBM_from_csparse(f->dim, NM_csc(S), sbm) == 0)
		out = NM_create_from_data(NM_SPARSE_BLOCK, n, n, sbm);
	NM_free(S);
	return out;
}

static lk_status fc3d_solve_here(lk_peer_fc3d_solver s, const lk_peer_fc3d *f, double *r, int max_iter, double tol,
                                 int calls, lk_peer_result *res)
{
	static const int ids3[LK_PEER_FC3D_COUNT] = {SICONOS_FRICTION_3D_NSGS, SICONOS_FRICTION_3D_NSN_AC};
	static const int ids2[LK_PEER_FC3D_COUNT] = {SICONOS_FRICTION_2D_NSGS, SICONOS_FRICTION_2D_CPG};
	const int dim = f->dim, nc = f->nc, n = dim * nc;
	const double *q = f->q, *mu = f->mu;
	NumericsMatrix *M = sparse_block_of(f);
	double *qq = malloc((size_t)n * sizeof(double)), *mm = malloc((size_t)nc * sizeof(double));
	double *u = calloc((size_t)n, sizeof(double));
	SolverOptions *opt = solver_options_create(dim == 2 ? ids2[s] : ids3[s]);
	lk_status st = LK_OK;
	if (!M || !qq || !mm || !u || !opt) {
		st = LK_ERR_NO_MEMORY;
	} else {
		if (max_iter > 0)
			opt->iparam[SICONOS_IPARAM_MAX_ITER] = max_iter;
		if (tol > 0)
			opt->dparam[SICONOS_DPARAM_TOL] = tol;
		FrictionContactProblem prob;
		fc3d_run(&prob, dim, M, nc, q, mu, qq, mm, r, u, opt, calls, res);
		res->error = fc3d_error(&prob, r, u, q, n, tol, opt);
	}
	if (opt)
		solver_options_delete(opt);
	if (M)
		NM_free(M);
	free(qq);
	free(mm);
	free(u);
	return st;
}

static size_t memory_limit;

void lk_peer_set_memory_limit(size_t bytes)
{
	memory_limit = bytes;
}

/* A sanitizer reserves its shadow memory as the process's data: under one only a limit that was asked for is set */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define LK_SANITIZED 1
#endif
#endif
#ifndef LK_SANITIZED
#define LK_SANITIZED 0
#endif

/* In a child process: its data limited to lk_peer_set_memory_limit's, or half the machine's memory */
static void limit_memory(void)
{
	if (LK_SANITIZED && !memory_limit)
		return;
	const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
	rlim_t limit = memory_limit ? (rlim_t)memory_limit : pages > 0 && page > 0 ? (rlim_t)pages / 2 * (rlim_t)page : 0;
	if (limit) {
		struct rlimit lim;
		lim.rlim_cur = lim.rlim_max = limit;
		setrlimit(RLIMIT_DATA, &lim);
	}
}

/* all of n bytes of buf written to fd (writing) or read from it (1: done) */
static int move_all(int fd, void *buf, size_t n, int writing)
{
	char *b = buf;
	while (n > 0) {
		ssize_t k = writing ? write(fd, b, n) : read(fd, b, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return 0;
		b += k;
		n -= (size_t)k;
	}
	return 1;
}

/* Starts fn(arg, fd) in a child process, which writes its result to fd and ends there (_exit); the parent gets
 * the pipe's read end in *rfd and the child in *pid. 0 where no pipe or process could be made. */
static int start_child(void (*fn)(void *arg, int fd), void *arg, int *rfd, pid_t *pid)
{
	int fd[2];
	if (pipe(fd) != 0)
		return 0;
	fflush(NULL); /* nothing buffered is written twice */
	*pid = fork();
	if (*pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return 0;
	}
	if (*pid == 0) {
		close(fd[0]);
		fn(arg, fd[1]);
		_exit(1);
	}
	close(fd[1]);
	*rfd = fd[0];
	return 1;
}

/* Closes the read end and waits for the child: 1 when it ended of itself with status 0 */
static int end_child(int rfd, pid_t pid)
{
	close(rfd);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A Siconos solve's arguments, in the child */
typedef struct fc3d_call {
	lk_peer_fc3d_solver s;
	const lk_peer_fc3d *f;
	int max_iter;
	double tol, *r;
	lk_peer_result *res;
} fc3d_call;

/* The most calls of one solve a child times, and the time they may take together (fc3d_child) */
#define CHILD_CALLS 20
#define CHILD_SECONDS 1e-3

static void fc3d_child(void *arg, int fd)
{
	const fc3d_call *a = arg;
	limit_memory();
	/* a first call of one iteration, not timed, makes the process's memory and caches what repeated calls in one
	 * process had: timed cold, a new process's first call paid its page faults (NESpheres, 44 contacts: nsgs
	 * 175 us against 11) */
	lk_peer_result warm;
	fc3d_solve_here(a->s, a->f, a->r, 1, a->tol, 1, &warm);
	lk_status st = fc3d_solve_here(a->s, a->f, a->r, a->max_iter, a->tol, 1, a->res);
	/* a call of microseconds is timed again, in batches of calls (lk_peer_batch_calls), the fastest batch's share
	 * taken, up to CHILD_CALLS batches or CHILD_SECONDS: timed once in a new process, such a call took either its
	 * time or five times it, run after run (Siconos's fc2d nsgs on 11 contacts: 3 or 17 us), where lcpkit's
	 * repeated calls in one process agree */
	const int calls = lk_peer_batch_calls(a->res->seconds);
	double spent = a->res->seconds;
	for (int k = 1; st == LK_OK && k < CHILD_CALLS && spent < CHILD_SECONDS; ++k) {
		lk_peer_result again;
		st = fc3d_solve_here(a->s, a->f, a->r, a->max_iter, a->tol, calls, &again);
		spent += again.seconds * calls;
		if (again.seconds < a->res->seconds)
			a->res->seconds = again.seconds;
	}
	const int ok = move_all(fd, &st, sizeof st, 1) && move_all(fd, a->res, sizeof *a->res, 1) &&
	               move_all(fd, a->r, (size_t)a->f->dim * a->f->nc * sizeof(double), 1);
	_exit(ok ? 0 : 1);
}

/* Siconos's solver runs in a child process, which hands back its result and reactions through a pipe. Its
 * semismooth Newton, fc3d_nonsmooth_Newton_AlartCurnier, keeps memory it never frees, about 0.6 MB an iteration
 * on FCLIB's RockPile (463 contacts): 6 GB in its 10,000 iterations, three times that for --repeat 3, which
 * swapped the machine. A child's memory is given back when it ends, and a limit on its data (half the machine's
 * memory) turns a runaway into a failed call (res.info LK_PEER_ABNORMAL) instead. The time is the child's own
 * call's, on the statistics clock, after a call of one iteration (below). */
lk_status lk_peer_siconos_fc3d_solve(lk_peer_fc3d_solver s, const lk_peer_fc3d *f, double *r, int max_iter, double tol,
                                     lk_peer_result *res)
{
	if ((unsigned)s >= LK_PEER_FC3D_COUNT || !f || (f->dim != 2 && f->dim != 3) || f->nc < 1 || !f->row_ptr ||
	    !f->q || !f->mu || !r || !res)
		return LK_ERR_INVALID_ARGUMENT;
	const size_t bytes = (size_t)f->dim * f->nc * sizeof(double);
	fc3d_call call = {s, f, max_iter, tol, r, res};
	int rfd;
	pid_t pid;
	if (!start_child(fc3d_child, &call, &rfd, &pid))
		return LK_ERR_NO_MEMORY;
	lk_status st = LK_OK;
	const int got =
	    move_all(rfd, &st, sizeof st, 0) && move_all(rfd, res, sizeof *res, 0) && move_all(rfd, r, bytes, 0);
	if (!end_child(rfd, pid) || !got) {
		res->info = LK_PEER_ABNORMAL;
		res->iterations = 0;
		res->error = res->seconds = NAN;
		memset(r, 0, bytes);
		return LK_OK;
	}
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

/* ------------------------------------------------------------------------------------ Siconos's .dat files */

void lk_peer_dat_free(lk_peer_dat *d)
{
	if (!d)
		return;
	free(d->row);
	free(d->col);
	free(d->val);
	free(d->q);
	free(d->mu);
	memset(d, 0, sizeof *d);
}

/* What the reader's process hands back first: whether it read a problem, its sizes, or why not */
typedef struct dat_header {
	int ok, dim, nc, n, count;
	char why[200];
} dat_header;

/* The next whitespace-separated token of f as a number; 0 at the end or on a token that is none */
static int next_number(FILE *f, double *x)
{
	char tok[128];
	if (fscanf(f, "%127s", tok) != 1)
		return 0;
	char *end;
	*x = strtod(tok, &end);
	return end != tok && *end == '\0';
}

/* Whether the file at path holds what Siconos's reader made of it: Siconos's writer prints the problem it read
 * (frictionContact_printInFile, the form of its .dat files) and every number it prints is the file's, in order.
 * The reader does not say when a file ends too soon (its check of each fscanf lets EOF through) and goes on with
 * what its memory held: a file cut short is otherwise read without a word. Returns how many numbers the file holds
 * after the problem (Siconos's local files: none or one, a line of their own), -1 where a number differs. */
static long read_as_written(const char *path, FrictionContactProblem *pr)
{
	FILE *printed = tmpfile(), *orig = fopen(path, "r");
	int same = printed && orig && frictionContact_printInFile(pr, printed) == 0;
	if (same) {
		rewind(printed);
		double a, b;
		long k = 0;
		while (same && next_number(printed, &a)) {
			same = next_number(orig, &b) && (a == b || (isnan(a) && isnan(b)));
			++k;
		}
		same = same && k > 0;
	}
	long extra = 0;
	double x;
	while (same && next_number(orig, &x))
		++extra;
	if (printed)
		fclose(printed);
	if (orig)
		fclose(orig);
	return same ? extra : -1;
}

int lk_peer_siconos_dat_like(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	double x;
	const int yes = next_number(f, &x);
	fclose(f);
	return yes;
}

/* The head of a .dat file, before Siconos's reader sees it: the space dimension, the number of contacts and W's
 * storage (0 dense, 1 sparse block, 2 sparse) and sizes must be whole numbers in range, or the reader, which
 * checks none of them, wanders through the file (or past its end) reading them as it goes; and a dense W must
 * fit in the numbers the file holds. "" when they are, else why not. */
static const char *head_fault(const char *path, char *why, size_t wsz)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return "it cannot be opened";
	double head[5];
	int k = 0;
	while (k < 5 && next_number(f, &head[k]))
		++k;
	why[0] = '\0';
	if (k < 5 || head[0] != floor(head[0]) || head[1] != floor(head[1]) || head[2] != floor(head[2]) ||
	    head[3] != floor(head[3]) || head[4] != floor(head[4]) || head[1] < 1 || head[1] > INT_MAX ||
	    head[2] < 0 || head[2] > 2 || head[3] < 0 || head[3] > INT_MAX || head[4] < 0 || head[4] > INT_MAX) {
		snprintf(why, wsz, "it does not begin as Siconos's .dat form of a friction-contact problem (dimension, "
		         "contacts, W's storage and sizes)");
	} else if (head[0] != 2 && head[0] != 3) {
		snprintf(why, wsz, "space dimension %g: friction-contact problems are 2D or 3D", head[0]);
	} else if (head[2] == 0.0) {
		double x, count = 0;
		while (next_number(f, &x))
			++count;
		if (head[3] * head[4] > count)
			snprintf(why, wsz, "its dense W has more entries than the file holds numbers");
	}
	fclose(f);
	return why;
}

/* The reader's process: reads path with Siconos's reader and writes the header, then W's nonzero entries (rows,
 * columns, values), q and mu to fd. */
static void dat_child(void *arg, int fd)
{
	const char *path = arg;
	int quiet = open("/dev/null", O_WRONLY);
	if (quiet >= 0) {
		dup2(quiet, STDOUT_FILENO);
		dup2(quiet, STDERR_FILENO);
	}
	limit_memory();
	dat_header h;
	memset(&h, 0, sizeof h);
	/* the reader also goes on past the end of a file as long as the sizes it read say (a dense W of 2e9 rows is
	 * 4e18 reads of nothing): the head is checked first (head_fault), and the process has CPU time for a
	 * reading of the file, 2 s and 2 s a megabyte (Siconos's 4 MB KaplasTower reads in well under one) */
	struct stat sb;
	const double megabytes = stat(path, &sb) == 0 ? (double)sb.st_size / 1048576.0 : 0.0;
	struct rlimit cpu;
	cpu.rlim_cur = cpu.rlim_max = (rlim_t)(2.0 + 2.0 * megabytes);
	setrlimit(RLIMIT_CPU, &cpu);
	if (head_fault(path, h.why, sizeof h.why)[0])
		_exit(move_all(fd, &h, sizeof h, 1) ? 0 : 1);
	FrictionContactProblem *pr = frictionContact_new_from_filename(path);
	CSparseMatrix *T = NULL;
	long extra = 0;
	if (!pr || !pr->M || !pr->q || !pr->mu) {
		snprintf(h.why, sizeof h.why, "Siconos's reader found no friction-contact problem in it");
	} else if ((extra = read_as_written(path, pr)) < 0) {
		snprintf(h.why, sizeof h.why, "Siconos's reader made of it something else than it holds (it is cut short, "
		         "or no friction-contact problem in Siconos's .dat form)");
	} else if (extra > 1) {
		/* a global problem's file (M, H, q, b, mu) read as a local one takes its M for W and what follows for q
		 * and mu, and leaves the rest */
		snprintf(h.why, sizeof h.why, "%ld numbers follow the local problem Siconos's reader takes from it: a global "
		         "problem? (a global problem's .dat is not read: its FCLIB file is)", extra);
	} else if (pr->dimension != 2 && pr->dimension != 3) {
		snprintf(h.why, sizeof h.why, "space dimension %d: friction-contact problems are 2D or 3D", pr->dimension);
	} else if (pr->numberOfContacts < 1 || pr->M->size0 != pr->M->size1 ||
	           (long)pr->M->size0 != (long)pr->dimension * pr->numberOfContacts) {
		snprintf(h.why, sizeof h.why, "%d contacts in %d dimensions but W is %d x %d (a global problem's .dat is "
		         "not read: its FCLIB file is)", pr->numberOfContacts, pr->dimension, pr->M->size0, pr->M->size1);
	} else if (!(T = NM_triplet(pr->M)) || T->nz < 0) {
		snprintf(h.why, sizeof h.why, "Siconos could not give W's entries");
	} else {
		long count = 0;
		for (long k = 0; k < T->nz; ++k)
			count += T->x[k] != 0.0;
		if (count > INT_MAX) {
			snprintf(h.why, sizeof h.why, "W has %ld nonzero entries: too many", count);
		} else {
			h.ok = 1;
			h.dim = pr->dimension;
			h.nc = pr->numberOfContacts;
			h.n = pr->M->size0;
			h.count = (int)count;
		}
	}
	int sent = move_all(fd, &h, sizeof h, 1);
	if (sent && h.ok) {
		int *idx = malloc(sizeof(int) * ((size_t)h.count + 1));
		double *val = malloc(sizeof(double) * ((size_t)h.count + 1));
		sent = idx && val;
		for (int pass = 0; sent && pass < 3; ++pass) {
			int k = 0;
			for (long e = 0; e < T->nz; ++e)
				if (T->x[e] != 0.0) {
					idx[k] = pass == 0 ? (int)T->i[e] : (int)T->p[e];
					val[k] = T->x[e];
					++k;
				}
			sent = pass < 2 ? move_all(fd, idx, sizeof(int) * (size_t)k, 1) : move_all(fd, val, sizeof(double) * (size_t)k, 1);
		}
		sent = sent && move_all(fd, pr->q, sizeof(double) * (size_t)h.n, 1) &&
		       move_all(fd, pr->mu, sizeof(double) * (size_t)h.nc, 1);
		free(idx);
		free(val);
	}
	_exit(sent ? 0 : 1);
}

lk_status lk_peer_siconos_read_dat(const char *path, lk_peer_dat *out, char *err, size_t esz)
{
	if (!out)
		return LK_ERR_INVALID_ARGUMENT;
	memset(out, 0, sizeof *out);
	if (!path || access(path, R_OK) != 0) {
		snprintf(err, esz, "%s: cannot open", path ? path : "(null)");
		return LK_ERR_IO;
	}
	int rfd;
	pid_t pid;
	if (!start_child(dat_child, (void *)path, &rfd, &pid)) {
		snprintf(err, esz, "%s: no process for Siconos's reader", path);
		return LK_ERR_NO_MEMORY;
	}
	dat_header h;
	lk_status st = LK_OK;
	if (!move_all(rfd, &h, sizeof h, 0)) {
		snprintf(err, esz, "%s: Siconos's reader ended without a problem (it is no friction-contact problem Siconos "
		         "reads, or needed more memory than it may use)", path);
		st = LK_ERR_PARSE;
	} else if (!h.ok) {
		h.why[sizeof h.why - 1] = '\0';
		snprintf(err, esz, "%s: %s", path, h.why);
		st = LK_ERR_PARSE;
	} else if ((h.dim != 2 && h.dim != 3) || h.nc < 1 || h.n != h.dim * h.nc || h.count < 0 ||
	           (double)h.count > (double)h.n * h.n) {
		snprintf(err, esz, "%s: Siconos's reader gave sizes that disagree", path);
		st = LK_ERR_PARSE;
	} else {
		out->dim = h.dim;
		out->nc = h.nc;
		out->n = h.n;
		out->count = h.count;
		out->row = malloc(sizeof(int) * ((size_t)h.count + 1));
		out->col = malloc(sizeof(int) * ((size_t)h.count + 1));
		out->val = malloc(sizeof(double) * ((size_t)h.count + 1));
		out->q = malloc(sizeof(double) * (size_t)h.n);
		out->mu = malloc(sizeof(double) * (size_t)h.nc);
		if (!out->row || !out->col || !out->val || !out->q || !out->mu) {
			snprintf(err, esz, "%s: out of memory for %d entries", path, h.count);
			st = LK_ERR_NO_MEMORY;
		} else if (!move_all(rfd, out->row, sizeof(int) * (size_t)h.count, 0) ||
		           !move_all(rfd, out->col, sizeof(int) * (size_t)h.count, 0) ||
		           !move_all(rfd, out->val, sizeof(double) * (size_t)h.count, 0) ||
		           !move_all(rfd, out->q, sizeof(double) * (size_t)h.n, 0) ||
		           !move_all(rfd, out->mu, sizeof(double) * (size_t)h.nc, 0)) {
			snprintf(err, esz, "%s: Siconos's reader ended before it handed the whole problem back", path);
			st = LK_ERR_PARSE;
		}
	}
	if (!end_child(rfd, pid) && st == LK_OK) {
		snprintf(err, esz, "%s: Siconos's reader ended abnormally", path);
		st = LK_ERR_PARSE;
	}
	if (st != LK_OK)
		lk_peer_dat_free(out);
	return st;
}

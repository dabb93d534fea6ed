/* FCLIB local problems: lcpkit's contact rows written for other solvers, and read back as boxed friction. */
#include "fclib_io.h"

#include <fclib.h>
#include <hdf5.h>
#include <suitesparse/cholmod.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

lk_status lk_fclib_export(lk_problem *p, int max_rows, const char *path, char *err, size_t esz)
{
	int n = lk_problem_row_count(p);
	if (n == 0 || n % 3 != 0) {
		snprintf(err, esz, "%d rows: FCLIB local problems hold contacts only, 3 rows each", n);
		return LK_ERR_UNSUPPORTED;
	}
	if (n > max_rows) {
		snprintf(err, esz, "%d rows exceed the export limit %d", n, max_rows);
		return LK_ERR_LIMIT;
	}
	int nc = n / 3;
	double *mu = malloc(sizeof(double) * (size_t)nc);
	if (!mu) {
		snprintf(err, esz, "out of memory");
		return LK_ERR_NO_MEMORY;
	}
	for (int c = 0; c < nc; ++c) {
		double lo, hi, m1, m2;
		int f0, f1, f2;
		lk_problem_get_bounds(p, 3 * c, &lo, &hi, NULL, &f0, NULL);
		lk_problem_get_bounds(p, 3 * c + 1, NULL, NULL, &m1, &f1, NULL);
		lk_problem_get_bounds(p, 3 * c + 2, NULL, NULL, &m2, &f2, NULL);
		if (f0 >= 0 || lo != 0 || hi != INFINITY || f1 != 3 * c || f2 != 3 * c || m1 != m2) {
			snprintf(err, esz, "rows %d-%d are not a contact (a normal row, then two friction rows with one mu); "
			         "FCLIB local problems hold contacts only", 3 * c, 3 * c + 2);
			free(mu);
			return LK_ERR_UNSUPPORTED;
		}
		mu[c] = m1;
	}
	double *A = malloc(sizeof(double) * (size_t)n * n), *q = malloc(sizeof(double) * (size_t)n);
	int *rp = malloc(sizeof(int) * (size_t)(n + 1)), *ci = malloc(sizeof(int) * (size_t)n * n);
	double *x = malloc(sizeof(double) * (size_t)n * n);
	lk_status st = LK_ERR_NO_MEMORY;
	snprintf(err, esz, "out of memory");
	if (A && q && rp && ci && x && lk_problem_assemble_dense(p, n, A, q) == LK_OK) {
		int nz = 0;
		rp[0] = 0;
		for (int i = 0; i < n; ++i) {
			for (int j = 0; j < n; ++j)
				if (A[(size_t)i * n + j] != 0.0) {
					ci[nz] = j;
					x[nz++] = A[(size_t)i * n + j];
				}
			rp[i + 1] = nz;
		}
		struct fclib_matrix W;
		memset(&W, 0, sizeof W);
		W.nzmax = nz;
		W.m = W.n = n;
		W.p = rp;
		W.i = ci;
		W.x = x;
		W.nz = -2; /* compressed rows */
		struct fclib_info info = {"lcpkit export", "contact rows of an lcpkit problem: W = J M^-1 J^T + S",
		                          "W symmetric positive semidefinite"};
		struct fclib_local loc;
		memset(&loc, 0, sizeof loc);
		loc.W = &W;
		loc.mu = mu;
		loc.q = q;
		loc.spacedim = 3;
		loc.info = &info;
		remove(path); /* fclib appends to an existing file */
		if (fclib_write_local(&loc, path) == 1) {
			st = LK_OK;
			err[0] = '\0';
		} else {
			st = LK_ERR_IO;
			snprintf(err, esz, "cannot write FCLIB file %s", path);
		}
	}
	free(A);
	free(q);
	free(rp);
	free(ci);
	free(x);
	free(mu);
	return st;
}

/* fclib_kind's answer for a global problem (not an error: it is reduced to local form) */
#define FCLIB_GLOBAL ((lk_status)-1)

/* LK_OK for an HDF5 file with an fclib_local group, FCLIB_GLOBAL for one with an fclib_global group; otherwise
 * an error that says what the file is. HDF5's own error printing is turned off for the look. */
static lk_status fclib_kind(const char *path, char *err, size_t esz)
{
	H5E_auto2_t old_func;
	void *old_data;
	H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	lk_status st = LK_OK;
	if (H5Fis_hdf5(path) <= 0) {
		snprintf(err, esz, "%s: not an FCLIB file (not HDF5)", path);
		st = LK_ERR_PARSE;
	} else {
		hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
		if (f < 0) {
			snprintf(err, esz, "%s: cannot open the HDF5 file", path);
			st = LK_ERR_IO;
		} else {
			int local = H5Lexists(f, "/fclib_local", H5P_DEFAULT) > 0;
			int global = H5Lexists(f, "/fclib_global", H5P_DEFAULT) > 0;
			if (!local && global) {
				st = FCLIB_GLOBAL;
			} else if (!local) {
				snprintf(err, esz, "%s: an HDF5 file without an fclib_local or fclib_global group: not FCLIB",
				         path);
				st = LK_ERR_PARSE;
			}
			H5Fclose(f);
		}
	}
	H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
	return st;
}

/* The bounds of n local rows, d per contact: a normal row (0, inf), then d - 1 friction rows on it with the
 * contact's mu. LK_ERR_PARSE with a message for a mu that is negative or not finite. */
static lk_status contact_rows(int n, int d, const double *contact_mu, double *lo, double *hi, double *mu, int *fi,
                              char *why, size_t wsz)
{
	for (int i = 0; i < n; ++i) {
		int c = i / d, first = c * d;
		lo[i] = 0;
		hi[i] = INFINITY;
		fi[i] = i == first ? -1 : first;
		mu[i] = i == first ? 0 : contact_mu[c];
		if (!isfinite(mu[i]) || mu[i] < 0) {
			snprintf(why, wsz, "contact %d has friction coefficient %g", c, mu[i]);
			return LK_ERR_PARSE;
		}
	}
	return LK_OK;
}

/* The entries of an FCLIB matrix of rows x cols in any of its storages (triplet: p the row, i the column, as
 * fclib.h documents; compressed columns; compressed rows) as triplets; -1 with a message on bad data. */
static int matrix_entries(const struct fclib_matrix *A, int rows, int cols, const char *name, int **ri, int **cj,
                          double **v, char *err, size_t esz)
{
	*ri = *cj = NULL;
	*v = NULL;
	if (!A || A->m != rows || A->n != cols) {
		snprintf(err, esz, "%s is missing or not %d x %d", name, rows, cols);
		return -1;
	}
	int nnz = A->nz >= 0 ? A->nz : A->p[A->nz == -2 ? A->m : A->n];
	if (nnz < 0 || nnz > A->nzmax || (int64_t)nnz > (int64_t)rows * cols) {
		snprintf(err, esz, "%s has %d entries for %d allocated", name, nnz, A->nzmax);
		return -1;
	}
	*ri = malloc(sizeof(int) * (size_t)(nnz + 1));
	*cj = malloc(sizeof(int) * (size_t)(nnz + 1));
	*v = malloc(sizeof(double) * (size_t)(nnz + 1));
	if (!*ri || !*cj || !*v) {
		snprintf(err, esz, "out of memory");
		return -1;
	}
	for (int k = 0; k < nnz; ++k) {
		(*ri)[k] = A->nz >= 0 ? A->p[k] : -1;
		(*cj)[k] = A->nz >= 0 ? A->i[k] : -1;
		(*v)[k] = A->x[k];
	}
	if (A->nz < 0) {
		int outer = A->nz == -2 ? A->m : A->n;
		for (int o = 0; o < outer; ++o) {
			int k0 = A->p[o] < 0 ? 0 : A->p[o], k1 = A->p[o + 1] > nnz ? nnz : A->p[o + 1];
			for (int k = k0; k < k1; ++k) {
				(*ri)[k] = A->nz == -2 ? o : A->i[k];
				(*cj)[k] = A->nz == -2 ? A->i[k] : o;
			}
		}
	}
	for (int k = 0; k < nnz; ++k)
		if ((*ri)[k] < 0 || (*ri)[k] >= rows || (*cj)[k] < 0 || (*cj)[k] >= cols || !isfinite((*v)[k])) {
			snprintf(err, esz, "%s entry %d at (%d, %d) is outside the matrix or not finite", name, k, (*ri)[k],
			         (*cj)[k]);
			return -1;
		}
	return nnz;
}

/* A global problem (M v = H r + f, u = H^T v + w) reduced to the local one of its reactions:
 *     W = H^T M^-1 H,   q = H^T M^-1 f + w,
 * with M factorised by CHOLMOD (M symmetric positive definite; only its upper triangle is read). Equality
 * constraints (G, b) are not supported. W is formed dense: m x m for m contact rows. */
static lk_status import_global(const char *path, lk_problem **out, char *err, size_t esz)
{
	char why[256] = "";
	struct fclib_global *g = fclib_read_global(path);
	if (!g || !g->M || !g->H || !g->f || !g->w || !g->mu) {
		if (g)
			fclib_delete_global(g);
		snprintf(err, esz, "%s: an FCLIB global problem without M, H, f, w or mu", path);
		return LK_ERR_PARSE;
	}
	const int n = g->M->m, m = g->H->n, d = g->spacedim;
	if (g->G && g->G->n > 0) {
		snprintf(err, esz, "%s: an FCLIB global problem with equality constraints (G, b): not supported", path);
		fclib_delete_global(g);
		return LK_ERR_UNSUPPORTED;
	}
	if ((d != 2 && d != 3) || n <= 0 || m <= 0 || m % d != 0 || (int64_t)m * m > (1 << 26)) {
		snprintf(err, esz, "%s: global problem with %d velocities, %d contact rows, dimension %d: need 2 or 3 rows "
		         "per contact and at most 8192 of them", path, n, m, d);
		fclib_delete_global(g);
		return LK_ERR_PARSE;
	}
	int *mi = NULL, *mj = NULL, *hi_ = NULL, *hj = NULL;
	double *mv = NULL, *hv = NULL, *W = NULL, *q = NULL, *lo = NULL, *hi = NULL, *mu = NULL;
	int *fi = NULL;
	lk_status st = LK_ERR_PARSE;
	int nm = matrix_entries(g->M, n, n, "M", &mi, &mj, &mv, why, sizeof why);
	int nh = nm < 0 ? -1 : matrix_entries(g->H, n, m, "H", &hi_, &hj, &hv, why, sizeof why);
	cholmod_common cc;
	cholmod_start(&cc);
	cc.print = 0;
	/* a supernodal factorisation is always L L^T, so an M that is not positive definite stops it (a simplicial
	 * L D L^T would go through on an indefinite M) */
	cc.supernodal = CHOLMOD_SUPERNODAL;
	cholmod_triplet *T = NULL;
	cholmod_sparse *A = NULL;
	cholmod_factor *L = NULL;
	cholmod_dense *B = NULL, *X = NULL;
	if (nm >= 0 && nh >= 0) {
		/* upper triangle of M (stype 1): the factorisation reads only that */
		T = cholmod_allocate_triplet(n, n, nm, 1, CHOLMOD_REAL, &cc);
		B = cholmod_zeros(n, m + 1, CHOLMOD_REAL, &cc);
		if (T && B) {
			int *Ti = T->i, *Tj = T->j;
			double *Tx = T->x, *Bx = B->x;
			for (int k = 0; k < nm; ++k)
				if (mi[k] <= mj[k]) {
					Ti[T->nnz] = mi[k];
					Tj[T->nnz] = mj[k];
					Tx[T->nnz++] = mv[k];
				}
			for (int k = 0; k < nh; ++k)
				Bx[(size_t)hj[k] * n + hi_[k]] += hv[k];
			for (int k = 0; k < n; ++k)
				Bx[(size_t)m * n + k] = g->f[k];
			A = cholmod_triplet_to_sparse(T, nm, &cc);
		}
		if (A && (L = cholmod_analyze(A, &cc)) && cholmod_factorize(A, L, &cc) && cc.status == CHOLMOD_OK &&
		    L->minor == (size_t)n)
			X = cholmod_solve(CHOLMOD_A, L, B, &cc);
		if (!X)
			snprintf(why, sizeof why, "M is not symmetric positive definite (CHOLMOD: %s)",
			         L && L->minor < (size_t)n ? "not positive definite" : "factorisation failed");
	}
	W = calloc((size_t)m * m, sizeof(double));
	q = malloc(sizeof(double) * (size_t)m);
	lo = malloc(sizeof(double) * (size_t)m);
	hi = malloc(sizeof(double) * (size_t)m);
	mu = malloc(sizeof(double) * (size_t)m);
	fi = malloc(sizeof(int) * (size_t)m);
	if (X && W && q && lo && hi && mu && fi) {
		const double *Xx = X->x;
		for (int a = 0; a < m; ++a)
			q[a] = g->w[a];
		/* W_ab = sum_k H_ka (M^-1 H)_kb, q_a += sum_k H_ka (M^-1 f)_k */
		for (int k = 0; k < nh; ++k) {
			const int row = hi_[k], a = hj[k];
			for (int b = 0; b < m; ++b)
				W[(size_t)a * m + b] += hv[k] * Xx[(size_t)b * n + row];
			q[a] += hv[k] * Xx[(size_t)m * n + row];
		}
		st = contact_rows(m, d, g->mu, lo, hi, mu, fi, why, sizeof why);
		if (st == LK_OK) {
			lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
			if (!p) {
				st = LK_ERR_NO_MEMORY;
				snprintf(why, sizeof why, "out of memory");
			} else if ((st = lk_problem_set_dense(p, m, W, q, lo, hi, mu, fi)) != LK_OK) {
				snprintf(why, sizeof why, "%s", lk_problem_error(p));
				lk_problem_destroy(p);
			} else {
				*out = p;
			}
		}
	} else if (X) {
		st = LK_ERR_NO_MEMORY;
		snprintf(why, sizeof why, "out of memory");
	}
	if (st != LK_OK)
		snprintf(err, esz, "%s: global problem: %s", path, why);
	cholmod_free_dense(&X, &cc);
	cholmod_free_dense(&B, &cc);
	cholmod_free_factor(&L, &cc);
	cholmod_free_sparse(&A, &cc);
	cholmod_free_triplet(&T, &cc);
	cholmod_finish(&cc);
	free(mi);
	free(mj);
	free(mv);
	free(hi_);
	free(hj);
	free(hv);
	free(W);
	free(q);
	free(lo);
	free(hi);
	free(mu);
	free(fi);
	fclib_delete_global(g);
	return st;
}

lk_status lk_fclib_import(const char *path, lk_problem **out, char *err, size_t esz)
{
	*out = NULL;
	struct stat sb;
	if (stat(path, &sb) != 0) {
		snprintf(err, esz, "%s: no such file", path);
		return LK_ERR_IO;
	}
	/* which kind of FCLIB file it is, before libfclib reads it (libfclib prints its own unterminated error
	 * line on a file without the group it looks for) */
	lk_status kind = fclib_kind(path, err, esz);
	if (kind == FCLIB_GLOBAL)
		return import_global(path, out, err, esz);
	if (kind != LK_OK)
		return kind;
	struct fclib_local *loc = fclib_read_local(path);
	if (!loc || !loc->W || !loc->q || !loc->mu) {
		if (loc)
			fclib_delete_local(loc);
		snprintf(err, esz, "%s: not an FCLIB local problem", path);
		return LK_ERR_PARSE;
	}
	struct fclib_matrix *W = loc->W;
	int d = loc->spacedim, n = W->m;
	lk_status st = LK_OK;
	if ((d != 2 && d != 3) || n <= 0 || W->n != n || n % d != 0 || n > (1 << 22)) {
		snprintf(err, esz, "%s: W is %d x %d with space dimension %d; need a square W of 2 or 3 rows per contact",
		         path, W->m, W->n, d);
		fclib_delete_local(loc);
		return LK_ERR_PARSE;
	}
	/* W as triplets in any of FCLIB's three storages, then CSR through the dense-free path */
	int nnz = W->nz >= 0 ? W->nz : W->p[W->nz == -2 ? W->m : W->n];
	/* libfclib allocates x (and a compressed matrix's i) with the nzmax the file states and a triplet's p and
	 * i with its nz: an entry count beyond nzmax would read past them (found by tests/fuzz) */
	if (nnz < 0 || nnz > W->nzmax || (int64_t)nnz > (int64_t)n * n) {
		snprintf(err, esz, "%s: W has %d entries for %d allocated in a %d x %d matrix", path, nnz, W->nzmax, n, n);
		fclib_delete_local(loc);
		return LK_ERR_PARSE;
	}
	int *ri = malloc(sizeof(int) * (size_t)(nnz + 1)), *cj = malloc(sizeof(int) * (size_t)(nnz + 1));
	double *v = malloc(sizeof(double) * (size_t)(nnz + 1));
	int *rp = calloc((size_t)n + 1, sizeof(int)), *col = malloc(sizeof(int) * (size_t)(nnz + 1));
	double *val = malloc(sizeof(double) * (size_t)(nnz + 1));
	double *lo = malloc(sizeof(double) * (size_t)n), *hi = malloc(sizeof(double) * (size_t)n);
	double *mu = malloc(sizeof(double) * (size_t)n);
	int *fi = malloc(sizeof(int) * (size_t)n);
	if (!ri || !cj || !v || !rp || !col || !val || !lo || !hi || !mu || !fi) {
		snprintf(err, esz, "out of memory");
		st = LK_ERR_NO_MEMORY;
	}
	for (int k = 0; st == LK_OK && k < nnz; ++k) {
		if (W->nz >= 0) {
			ri[k] = W->p[k];
			cj[k] = W->i[k];
		} else {
			ri[k] = cj[k] = -1; /* set from the pointers below */
		}
		v[k] = W->x[k];
	}
	if (st == LK_OK && W->nz < 0) {
		int outer = W->nz == -2 ? W->m : W->n;
		for (int o = 0; o < outer; ++o) {
			/* only [0, nnz) is read: a pointer far outside it must not cost a loop over it (tests/fuzz) */
			int k0 = W->p[o] < 0 ? 0 : W->p[o], k1 = W->p[o + 1] > nnz ? nnz : W->p[o + 1];
			for (int k = k0; k < k1; ++k) {
				ri[k] = W->nz == -2 ? o : W->i[k];
				cj[k] = W->nz == -2 ? W->i[k] : o;
			}
		}
	}
	for (int k = 0; st == LK_OK && k < nnz; ++k)
		if (ri[k] < 0 || ri[k] >= n || cj[k] < 0 || cj[k] >= n) {
			snprintf(err, esz, "%s: W entry %d at (%d, %d) is outside the matrix", path, k, ri[k], cj[k]);
			st = LK_ERR_PARSE;
		}
	if (st == LK_OK) {
		/* counting sort by row; duplicates are refused by lk_problem_set_matrix */
		for (int k = 0; k < nnz; ++k)
			rp[ri[k] + 1]++;
		for (int i = 0; i < n; ++i)
			rp[i + 1] += rp[i];
		int *fill = malloc(sizeof(int) * (size_t)n);
		if (!fill) {
			st = LK_ERR_NO_MEMORY;
		} else {
			memcpy(fill, rp, sizeof(int) * (size_t)n);
			for (int k = 0; k < nnz; ++k) {
				col[fill[ri[k]]] = cj[k];
				val[fill[ri[k]]++] = v[k];
			}
			free(fill);
		}
		char why[128];
		if ((st = contact_rows(n, d, loc->mu, lo, hi, mu, fi, why, sizeof why)) != LK_OK)
			snprintf(err, esz, "%s: %s", path, why);
	}
	if (st == LK_OK) {
		lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
		if (!p) {
			st = LK_ERR_NO_MEMORY;
			snprintf(err, esz, "out of memory");
		} else if ((st = lk_problem_set_matrix(p, n, rp, col, val, loc->q, lo, hi, mu, fi)) != LK_OK) {
			snprintf(err, esz, "%s: %s", path, lk_problem_error(p));
			lk_problem_destroy(p);
		} else {
			*out = p;
		}
	}
	free(ri);
	free(cj);
	free(v);
	free(rp);
	free(col);
	free(val);
	free(lo);
	free(hi);
	free(mu);
	free(fi);
	fclib_delete_local(loc);
	return st;
}

/* FCLIB local problems: lcpkit's contact rows written for other solvers, and read back as boxed friction. */
#include "fclib_io.h"

#include <fclib.h>
#include <hdf5.h>
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

/* LK_OK for an HDF5 file with an fclib_local group; otherwise an error that says what the file is. HDF5's own
 * error printing is turned off for the look. */
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
				snprintf(err, esz,
				         "%s: an FCLIB global problem (M, H, f, w, mu); lcpkit imports local problems (W, q, mu) "
				         "only: reduce it to W = H M^-1 H^T, q = H M^-1 f + w first",
				         path);
				st = LK_ERR_UNSUPPORTED;
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
		for (int i = 0; i < n; ++i) {
			int c = i / d, first = c * d;
			lo[i] = 0;
			hi[i] = INFINITY;
			fi[i] = i == first ? -1 : first;
			mu[i] = i == first ? 0 : loc->mu[c];
			if (!isfinite(mu[i]) || mu[i] < 0) {
				snprintf(err, esz, "%s: contact %d has friction coefficient %g", path, c, mu[i]);
				st = LK_ERR_PARSE;
				break;
			}
		}
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

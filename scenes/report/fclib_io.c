/* FCLIB problems: lcpkit's contact rows written as a local problem for other solvers, and local and global
 * problems read back as boxed friction. */
#include "fclib_io.h"

#include <fclib.h>
#include <hdf5.h>
#include <suitesparse/cholmod.h>
#include <suitesparse/umfpack.h>
#include <math.h>
#include <stdarg.h>
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
	/* W in compressed rows straight from the problem's sparse A (its exact zeros left out, as FCLIB's files hold
	 * them): a dense A of a recorded pile's 28,000 rows would take 6 GB */
	double *q = malloc(sizeof(double) * (size_t)n), *x = NULL;
	int *rp = malloc(sizeof(int) * (size_t)(n + 1)), *ci = NULL;
	int64_t count = 0;
	lk_status st = LK_ERR_NO_MEMORY;
	snprintf(err, esz, "out of memory");
	if (q && rp && lk_problem_assemble_sparse(p, rp, NULL, NULL, q, 0, &count) == LK_OK) {
		ci = malloc(sizeof(int) * (size_t)(count + 1));
		x = malloc(sizeof(double) * (size_t)(count + 1));
	}
	if (ci && x && lk_problem_assemble_sparse(p, rp, ci, x, NULL, count, &count) == LK_OK) {
		int nz = 0;
		for (int i = 0; i < n; ++i) {
			const int b = rp[i], e = rp[i + 1];
			rp[i] = nz;
			for (int k = b; k < e; ++k)
				if (x[k] != 0.0) {
					ci[nz] = ci[k];
					x[nz++] = x[k];
				}
		}
		rp[n] = nz;
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
	free(q);
	free(rp);
	free(ci);
	free(x);
	free(mu);
	return st;
}

/* ------------------------------------------------------------------------------------------ import */

/* Debian's libfclib trusts the sizes a file states: it allocates each array from the m, n, nz and nzmax
 * datasets and reads the array's dataset into it whatever its length, so a dataset longer than they say
 * overflows the allocation and a shorter one leaves the rest uninitialised (a q of 141 values for a W of 144
 * rows was imported with three rows of garbage); a space dimension of 0 divides by zero, a row count that is
 * not a multiple of it ends the process (its ASSERT). So the shapes are checked here first, with HDF5's own
 * calls, every length against the sizes it must match, and libfclib reads only a file that passed. */

/* Values of dataset `name`, or -1 when there is none, -2 when it is not a scalar or one-dimensional
 * dataset of numbers. */
static long long dataset_length(hid_t f, const char *name)
{
	if (H5Lexists(f, name, H5P_DEFAULT) <= 0)
		return -1;
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
	if (d < 0)
		return -2;
	hid_t space = H5Dget_space(d), type = H5Dget_type(d);
	long long len = -2;
	if (space >= 0 && type >= 0) {
		const H5T_class_t cls = H5Tget_class(type);
		const int rank = H5Sget_simple_extent_ndims(space);
		const hssize_t points = H5Sget_simple_extent_npoints(space);
		if ((cls == H5T_INTEGER || cls == H5T_FLOAT) && rank >= 0 && rank <= 1 && points >= 0)
			len = (long long)points;
	}
	if (type >= 0)
		H5Tclose(type);
	if (space >= 0)
		H5Sclose(space);
	H5Dclose(d);
	return len;
}

static int group_exists(hid_t f, const char *name)
{
	return H5Lexists(f, name, H5P_DEFAULT) > 0;
}

/* The one integer of dataset `name`. */
static int read_int(hid_t f, const char *name, int *v, char *why, size_t wsz)
{
	const long long len = dataset_length(f, name);
	if (len != 1) {
		snprintf(why, wsz, "%s %s", name, len == -1 ? "is missing" : "is not one number");
		return 0;
	}
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
	const int ok = d >= 0 && H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
	if (d >= 0)
		H5Dclose(d);
	if (!ok)
		snprintf(why, wsz, "%s cannot be read as an integer", name);
	return ok;
}

/* Dataset `name` holds exactly `want` values; the rest of the arguments say what they are, for the message. */
static int has_length(hid_t f, const char *name, long long want, char *why, size_t wsz, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
static int has_length(hid_t f, const char *name, long long want, char *why, size_t wsz, const char *fmt, ...)
{
	const long long len = dataset_length(f, name);
	if (len == want)
		return 1;
	char what[96];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (len == -1)
		snprintf(why, wsz, "%s is missing (%s: %lld values)", name, what, want);
	else if (len == -2)
		snprintf(why, wsz, "%s is not a list of numbers", name);
	else
		snprintf(why, wsz, "%s has %lld values; %s needs %lld", name, len, what, want);
	return 0;
}

/* The largest matrix side and entry count the reader takes (libfclib allocates from them). */
#define FCLIB_MAX_SIDE (1 << 26)
#define FCLIB_MAX_ENTRIES (1 << 28)

/* FCLIB's matrix sizes (struct fclib_matrix: nz >= 0 triplet, -1 compressed columns, -2 compressed rows). */
typedef struct fclib_shape {
	int nzmax, m, n, nz;
	int filled; /* entries of i and x the file holds (the rest of libfclib's nzmax places is uninitialised) */
} fclib_shape;

/* Dataset `name` holds from lo to hi values: an array libfclib reads into hi places, of which the reader uses
 * lo (the rest is checked once the pointers say how many, matrix_entries). */
static int length_within(hid_t f, const char *name, long long lo, long long hi, const char *what, char *why,
                         size_t wsz)
{
	const long long len = dataset_length(f, name);
	if (len >= lo && len <= hi)
		return 1;
	if (len == -2)
		snprintf(why, wsz, "%s is not a list of numbers", name);
	else
		snprintf(why, wsz, "%s %s%lld values; %s needs from %lld to %lld", name, len == -1 ? "is missing: " : "has ",
		         len < 0 ? 0 : len, what, lo, hi);
	return 0;
}

/* Matrix `group`/name: its four sizes, sane, and the lengths of p, i and x against them as libfclib reads them
 * (triplet: p and i nz values each, x at least nz and at most nzmax, the places it reads them into;
 * compressed: p the outer size + 1, i and x at most nzmax, how many the pointers use is checked once they are
 * read); the optional info numbers one each. */
static int matrix_shape(hid_t f, const char *group, const char *name, fclib_shape *s, char *why, size_t wsz)
{
	char at[128];
	const char *const sizes[4] = {"nzmax", "m", "n", "nz"};
	int *const dst[4] = {&s->nzmax, &s->m, &s->n, &s->nz};
	for (int k = 0; k < 4; ++k) {
		snprintf(at, sizeof at, "%s/%s/%s", group, name, sizes[k]);
		if (!read_int(f, at, dst[k], why, wsz))
			return 0;
	}
	if (s->m < 0 || s->n < 0 || s->m > FCLIB_MAX_SIDE || s->n > FCLIB_MAX_SIDE || s->nzmax < 0 ||
	    s->nzmax > FCLIB_MAX_ENTRIES || s->nz < -2 || s->nz > s->nzmax) {
		snprintf(why, wsz, "%s is %d x %d with nz %d and nzmax %d: need sizes from 0 to %d, nz -1 (compressed "
		         "columns), -2 (compressed rows) or a triplet count up to nzmax", name, s->m, s->n, s->nz,
		         s->nzmax, FCLIB_MAX_SIDE);
		return 0;
	}
	const long long np = s->nz >= 0 ? s->nz : (long long)(s->nz == -1 ? s->n : s->m) + 1;
	char what[96];
	snprintf(what, sizeof what, "%s %s",
	         s->nz >= 0 ? "a triplet matrix of nz entries" : s->nz == -1 ? "compressed columns" : "compressed rows",
	         name);
	snprintf(at, sizeof at, "%s/%s/p", group, name);
	if (!has_length(f, at, np, why, wsz, "%s", what))
		return 0;
	snprintf(at, sizeof at, "%s/%s/i", group, name);
	if (!(s->nz >= 0 ? has_length(f, at, s->nz, why, wsz, "%s", what)
	                 : length_within(f, at, 0, s->nzmax, what, why, wsz)))
		return 0;
	const long long li = dataset_length(f, at);
	snprintf(at, sizeof at, "%s/%s/x", group, name);
	if (!length_within(f, at, s->nz >= 0 ? s->nz : 0, s->nzmax, what, why, wsz))
		return 0;
	const long long lx = dataset_length(f, at);
	s->filled = (int)(li < lx ? li : lx);
	const char *const info[3] = {"conditioning", "determinant", "rank"};
	for (int k = 0; k < 3; ++k) {
		snprintf(at, sizeof at, "%s/%s/%s", group, name, info[k]);
		const long long len = dataset_length(f, at);
		if (len != -1 && len != 1) {
			snprintf(why, wsz, "%s is not one number", at);
			return 0;
		}
	}
	return 1;
}

/* The space dimension of `group` (2 or 3) and that `rows` contact rows divide into contacts of it. */
static int space_dimension(hid_t f, const char *group, int *d, char *why, size_t wsz)
{
	char at[64];
	snprintf(at, sizeof at, "%s/spacedim", group);
	if (!read_int(f, at, d, why, wsz))
		return 0;
	if (*d != 2 && *d != 3) {
		snprintf(why, wsz, "space dimension %d: FCLIB problems are 2D or 3D", *d);
		return 0;
	}
	return 1;
}

/* Every size a local problem states, against the others: W square with whole contacts, q one value a row,
 * mu one a contact, and V, R and s (which lcpkit does not use) as libfclib will read them. */
static int local_shapes(hid_t f, fclib_shape *W, int *d, char *why, size_t wsz)
{
	const char *g = "/fclib_local";
	if (!space_dimension(f, g, d, why, wsz) || !matrix_shape(f, g, "W", W, why, wsz))
		return 0;
	if (W->m != W->n || W->m == 0 || W->m % *d != 0) {
		snprintf(why, wsz, "W is %d x %d with space dimension %d: need a square W of whole contacts, %d rows each",
		         W->m, W->n, *d, *d);
		return 0;
	}
	if (!has_length(f, "/fclib_local/vectors/q", W->m, why, wsz, "one a row of W (%d)", W->m) ||
	    !has_length(f, "/fclib_local/vectors/mu", W->m / *d, why, wsz, "one a contact (%d rows of %d)", W->m, *d))
		return 0;
	if (group_exists(f, "/fclib_local/V")) {
		fclib_shape V, R;
		if (!matrix_shape(f, g, "V", &V, why, wsz) || !matrix_shape(f, g, "R", &R, why, wsz))
			return 0;
		if (!has_length(f, "/fclib_local/vectors/s", R.m, why, wsz, "one a row of R (%d)", R.m))
			return 0;
	}
	return 1;
}

/* The same for a global problem: M square, H with M's rows and whole contacts, f a value a row of M, w one a
 * column of H, mu one a contact, and G and b as libfclib will read them. */
static int global_shapes(hid_t f, fclib_shape *M, fclib_shape *H, int *d, char *why, size_t wsz)
{
	const char *g = "/fclib_global";
	if (!space_dimension(f, g, d, why, wsz) || !matrix_shape(f, g, "M", M, why, wsz) ||
	    !matrix_shape(f, g, "H", H, why, wsz))
		return 0;
	if (M->m != M->n || M->m == 0) {
		snprintf(why, wsz, "M is %d x %d: need a square M", M->m, M->n);
		return 0;
	}
	if (H->m != M->m || H->n == 0 || H->n % *d != 0) {
		snprintf(why, wsz, "H is %d x %d with M %d x %d and space dimension %d: need M's %d rows and whole "
		         "contacts of %d columns", H->m, H->n, M->m, M->n, *d, M->m, *d);
		return 0;
	}
	if (!has_length(f, "/fclib_global/vectors/f", M->m, why, wsz, "one a row of M (%d)", M->m) ||
	    !has_length(f, "/fclib_global/vectors/w", H->n, why, wsz, "one a column of H (%d)", H->n) ||
	    !has_length(f, "/fclib_global/vectors/mu", H->n / *d, why, wsz, "one a contact (%d columns of H, %d each)",
	                H->n, *d))
		return 0;
	if (group_exists(f, "/fclib_global/G")) {
		fclib_shape G;
		if (!matrix_shape(f, g, "G", &G, why, wsz))
			return 0;
		if (!has_length(f, "/fclib_global/vectors/b", G.n, why, wsz, "one a column of G (%d)", G.n))
			return 0;
	}
	return 1;
}

/* What kind of FCLIB file path is, and that every size it states agrees with the others (above). LK_OK for a
 * local problem, FCLIB_GLOBAL for a global one; otherwise an error that says what is wrong. HDF5's own error
 * printing is off for the look. */
#define FCLIB_GLOBAL ((lk_status)-1)

static lk_status fclib_check(const char *path, fclib_shape *a, fclib_shape *b, char *err, size_t esz)
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
			const int local = group_exists(f, "/fclib_local"), global = group_exists(f, "/fclib_global");
			char why[320];
			int d;
			if (!local && !global) {
				snprintf(err, esz, "%s: an HDF5 file without an fclib_local or fclib_global group: not FCLIB",
				         path);
				st = LK_ERR_PARSE;
			} else if (local ? !local_shapes(f, a, &d, why, sizeof why)
			                 : !global_shapes(f, a, b, &d, why, sizeof why)) {
				snprintf(err, esz, "%s: %s problem: %s", path, local ? "local" : "global", why);
				st = LK_ERR_PARSE;
			} else if (!local) {
				st = FCLIB_GLOBAL;
			}
			H5Fclose(f);
		}
	}
	H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
	return st;
}

/* ----------------------------------------------------------------------------------- the matrices */

/* A matrix's entries as (row, column, value) triplets. */
typedef struct entries {
	int count;
	int *row, *col;
	double *val;
} entries;

static void entries_free(entries *e)
{
	free(e->row);
	free(e->col);
	free(e->val);
	memset(e, 0, sizeof *e);
}

/* Whether every entry lies inside a rows x cols matrix and is finite; 0 with a message naming the first that
 * does not */
static int entries_inside(const entries *e, int rows, int cols, const char *name, char *why, size_t wsz)
{
	for (int k = 0; k < e->count; ++k)
		if (e->row[k] < 0 || e->row[k] >= rows || e->col[k] < 0 || e->col[k] >= cols || !isfinite(e->val[k])) {
			snprintf(why, wsz, "%s entry %d at (%d, %d) %s", name, k, e->row[k], e->col[k],
			         isfinite(e->val[k]) ? "lies outside the matrix" : "is not finite");
			return 0;
		}
	return 1;
}

/* The entries of FCLIB matrix A, whose shape fclib_check has checked, as the files are written: a triplet's
 * i is the row and p the column (CSparse's triplet, which Siconos's writer and reader use; fclib.h's comment
 * says the opposite, and the public files follow Siconos), compressed columns p the column pointers and i the
 * rows, compressed rows p the row pointers and i the columns. Pointers must start at 0 and not decrease;
 * every index must lie in the matrix and every value be finite. */
static int matrix_entries(const struct fclib_matrix *A, const fclib_shape *shape, const char *name, entries *e,
                          char *why, size_t wsz)
{
	memset(e, 0, sizeof *e);
	const int outer = A->nz == -1 ? A->n : A->m;
	int nnz = A->nz;
	if (A->nz < 0) {
		if (A->p[0] != 0) {
			snprintf(why, wsz, "%s's pointers start at %d, not 0", name, A->p[0]);
			return 0;
		}
		for (int o = 0; o < outer; ++o)
			if (A->p[o + 1] < A->p[o]) {
				snprintf(why, wsz, "%s's pointers decrease at %s %d", name, A->nz == -1 ? "column" : "row", o);
				return 0;
			}
		nnz = A->p[outer];
		if (nnz > shape->filled) {
			snprintf(why, wsz, "%s's pointers count %d entries; the file holds %d", name, nnz, shape->filled);
			return 0;
		}
	}
	e->row = malloc(sizeof(int) * ((size_t)nnz + 1));
	e->col = malloc(sizeof(int) * ((size_t)nnz + 1));
	e->val = malloc(sizeof(double) * ((size_t)nnz + 1));
	if (!e->row || !e->col || !e->val) {
		snprintf(why, wsz, "out of memory");
		return 0;
	}
	e->count = nnz;
	if (A->nz >= 0) {
		memcpy(e->row, A->i, sizeof(int) * (size_t)nnz);
		memcpy(e->col, A->p, sizeof(int) * (size_t)nnz);
	} else {
		for (int o = 0; o < outer; ++o)
			for (int k = A->p[o]; k < A->p[o + 1]; ++k) {
				e->row[k] = A->nz == -1 ? A->i[k] : o;
				e->col[k] = A->nz == -1 ? o : A->i[k];
			}
	}
	memcpy(e->val, A->x, sizeof(double) * (size_t)nnz);
	return entries_inside(e, A->m, A->n, name, why, wsz);
}

/* The entries as a CHOLMOD matrix of rows x cols (or of its transpose) in compressed columns, sorted, duplicate
 * entries summed as CSparse and CHOLMOD read a triplet; NULL when out of memory. */
static cholmod_sparse *to_sparse(const entries *e, int rows, int cols, int transpose, cholmod_common *cc)
{
	cholmod_triplet *T = cholmod_allocate_triplet((size_t)(transpose ? cols : rows),
	                                              (size_t)(transpose ? rows : cols), (size_t)e->count + 1, 0,
	                                              CHOLMOD_REAL, cc);
	if (!T)
		return NULL;
	memcpy(T->i, transpose ? e->col : e->row, sizeof(int) * (size_t)e->count);
	memcpy(T->j, transpose ? e->row : e->col, sizeof(int) * (size_t)e->count);
	memcpy(T->x, e->val, sizeof(double) * (size_t)e->count);
	T->nnz = (size_t)e->count;
	cholmod_sparse *A = cholmod_triplet_to_sparse(T, (size_t)e->count, cc);
	cholmod_free_triplet(&T, cc);
	return A;
}

/* The bounds of n local rows, d per contact: a normal row (0, inf), then d - 1 friction rows on it with the
 * contact's mu. 0 with a message for a mu that is negative or not finite. */
static int contact_rows(int n, int d, const double *contact_mu, double *lo, double *hi, double *mu, int *fi,
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
			return 0;
		}
	}
	return 1;
}

/* A matrix-form problem of n contact rows, d a contact: W in compressed rows (or dense row-major when rp is
 * NULL), q, and the contacts' friction coefficients. */
static lk_status make_problem(int n, int d, const int *rp, const int *ci, const double *wx, const double *q,
                              const double *contact_mu, lk_problem **out, char *why, size_t wsz)
{
	double *lo = malloc(sizeof(double) * (size_t)n), *hi = malloc(sizeof(double) * (size_t)n);
	double *mu = malloc(sizeof(double) * (size_t)n);
	int *fi = malloc(sizeof(int) * (size_t)n);
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	lk_status st = LK_ERR_NO_MEMORY;
	snprintf(why, wsz, "out of memory");
	if (lo && hi && mu && fi && p) {
		if (!contact_rows(n, d, contact_mu, lo, hi, mu, fi, why, wsz)) {
			st = LK_ERR_PARSE;
		} else {
			st = rp ? lk_problem_set_matrix(p, n, rp, ci, wx, q, lo, hi, mu, fi)
			        : lk_problem_set_dense(p, n, wx, q, lo, hi, mu, fi);
			if (st != LK_OK)
				snprintf(why, wsz, "%s", lk_problem_error(p));
		}
	}
	if (st == LK_OK) {
		*out = p;
		why[0] = '\0';
	} else {
		lk_problem_destroy(p);
	}
	free(lo);
	free(hi);
	free(mu);
	free(fi);
	return st;
}

/* libfclib's delete functions free what a problem points to, not the problem itself. */
static void free_local(struct fclib_local *loc)
{
	if (loc) {
		fclib_delete_local(loc);
		free(loc);
	}
}

static void free_global(struct fclib_global *g)
{
	if (g) {
		fclib_delete_global(g);
		free(g);
	}
}

static lk_status import_local(const char *path, const fclib_shape *shape, lk_problem **out, char *err, size_t esz)
{
	char why[320] = "";
	struct fclib_local *loc = fclib_read_local(path);
	if (!loc || !loc->W || !loc->q || !loc->mu) {
		free_local(loc);
		snprintf(err, esz, "%s: not an FCLIB local problem", path);
		return LK_ERR_PARSE;
	}
	const int n = loc->W->m, d = loc->spacedim;
	entries e;
	lk_status st = LK_ERR_PARSE;
	cholmod_common cc;
	cholmod_start(&cc);
	cc.print = 0;
	if (matrix_entries(loc->W, shape, "W", &e, why, sizeof why)) {
		/* the transpose in compressed columns is W in compressed rows, the matrix form's storage */
		cholmod_sparse *Wt = to_sparse(&e, n, n, 1, &cc);
		if (!Wt) {
			st = LK_ERR_NO_MEMORY;
			snprintf(why, sizeof why, "out of memory");
		} else {
			st = make_problem(n, d, Wt->p, Wt->i, Wt->x, loc->q, loc->mu, out, why, sizeof why);
		}
		cholmod_free_sparse(&Wt, &cc);
	}
	cholmod_finish(&cc);
	entries_free(&e);
	free_local(loc);
	if (st != LK_OK)
		snprintf(err, esz, "%s: local problem: %s", path, why);
	return st;
}

lk_status lk_fclib_local_from_entries(int n, int d, int count, const int *row, const int *col, const double *val,
                                      const double *q, const double *contact_mu, lk_problem **out, char *err,
                                      size_t esz)
{
	*out = NULL;
	if (n < 1 || (d != 2 && d != 3) || n % d != 0 || count < 0 || (count > 0 && (!row || !col || !val)) || !q ||
	    !contact_mu) {
		snprintf(err, esz, "no local problem of %d rows in %d dimensions with %d entries", n, d, count);
		return LK_ERR_INVALID_ARGUMENT;
	}
	/* the caller's arrays, lent: never entries_free'd here */
	const entries e = {count, (int *)row, (int *)col, (double *)val};
	if (!entries_inside(&e, n, n, "W", err, esz))
		return LK_ERR_PARSE;
	for (int i = 0; i < n; ++i)
		if (!isfinite(q[i])) {
			snprintf(err, esz, "q[%d] is not finite", i);
			return LK_ERR_PARSE;
		}
	cholmod_common cc;
	cholmod_start(&cc);
	cc.print = 0;
	lk_status st;
	cholmod_sparse *Wt = to_sparse(&e, n, n, 1, &cc);
	if (!Wt) {
		st = LK_ERR_NO_MEMORY;
		snprintf(err, esz, "out of memory");
	} else {
		st = make_problem(n, d, Wt->p, Wt->i, Wt->x, q, contact_mu, out, err, esz);
	}
	cholmod_free_sparse(&Wt, &cc);
	cholmod_finish(&cc);
	return st;
}

/* M's symmetry, as the reduction needs to know it. */
typedef enum m_symmetry { M_SYMMETRIC, M_UPPER, M_LOWER, M_UNSYMMETRIC } m_symmetry;

/* Whether M (compressed columns, duplicates summed) is symmetric, holds only one triangle of a symmetric
 * matrix (off-diagonal entries on one side only, as some writers store one), or neither; for the last, the
 * largest |M_ij - M_ji| and the largest |M_ij| in *asym and *scale. */
static m_symmetry symmetry_of(cholmod_sparse *M, cholmod_common *cc, double *asym, double *scale, int *ok)
{
	const int *Mp = M->p, *Mi = M->i;
	const double *Mx = M->x;
	int upper = 0, lower = 0;
	*asym = *scale = 0.0;
	*ok = 1;
	for (int j = 0; j < (int)M->ncol; ++j)
		for (int k = Mp[j]; k < Mp[j + 1]; ++k) {
			*scale = fmax(*scale, fabs(Mx[k]));
			if (Mx[k] != 0.0) {
				upper += Mi[k] < j;
				lower += Mi[k] > j;
			}
		}
	if (upper == 0 && lower == 0)
		return M_SYMMETRIC;
	if (lower == 0)
		return M_UPPER;
	if (upper == 0)
		return M_LOWER;
	cholmod_sparse *Mt = cholmod_transpose(M, 1, cc);
	double one[2] = {1, 0}, minus[2] = {-1, 0};
	cholmod_sparse *D = Mt ? cholmod_add(M, Mt, one, minus, 1, 0, cc) : NULL;
	if (!D) {
		*ok = 0;
	} else {
		const double *Dx = D->x;
		const int nd = ((const int *)D->p)[D->ncol];
		for (int k = 0; k < nd; ++k)
			*asym = fmax(*asym, fabs(Dx[k]));
	}
	cholmod_free_sparse(&D, cc);
	cholmod_free_sparse(&Mt, cc);
	return *asym == 0.0 ? M_SYMMETRIC : M_UNSYMMETRIC;
}

/* M factorised once, to solve M X = B column block by column block: CHOLMOD's supernodal L L^T of a symmetric
 * M (which refuses an M that is not positive definite; a simplicial L D L^T would go through on an indefinite
 * one), or UMFPACK's L U of the full M. */
typedef struct m_solver {
	cholmod_sparse *M;
	cholmod_factor *L;
	void *lu;
	int n;
} m_solver;

static int m_factorise(m_solver *s, m_symmetry sym, cholmod_common *cc, char *why, size_t wsz)
{
	if (sym != M_UNSYMMETRIC) {
		/* CHOLMOD reads only the triangle stype names */
		s->M->stype = sym == M_LOWER ? -1 : 1;
		cc->supernodal = CHOLMOD_SUPERNODAL;
		s->L = cholmod_analyze(s->M, cc);
		if (s->L && cholmod_factorize(s->M, s->L, cc) && cc->status == CHOLMOD_OK && s->L->minor == (size_t)s->n)
			return 1;
		snprintf(why, wsz, "M is not symmetric positive definite (CHOLMOD: %s)",
		         s->L && s->L->minor < (size_t)s->n ? "not positive definite" : "factorisation failed");
		return 0;
	}
	void *symbolic = NULL;
	int status = umfpack_di_symbolic(s->n, s->n, s->M->p, s->M->i, s->M->x, &symbolic, NULL, NULL);
	if (status == UMFPACK_OK)
		status = umfpack_di_numeric(s->M->p, s->M->i, s->M->x, symbolic, &s->lu, NULL, NULL);
	umfpack_di_free_symbolic(&symbolic);
	if (status == UMFPACK_OK)
		return 1;
	snprintf(why, wsz, "M cannot be factorised (UMFPACK: %s)",
	         status == UMFPACK_WARNING_singular_matrix ? "singular"
	         : status == UMFPACK_ERROR_out_of_memory   ? "out of memory"
	                                                   : "failed");
	return 0;
}

/* X = M^-1 B for k columns of n values each (column-major); 0 on failure. */
static int m_solve(m_solver *s, double *B, double *X, int k, cholmod_common *cc)
{
	if (s->L) {
		cholmod_dense b;
		memset(&b, 0, sizeof b);
		b.nrow = (size_t)s->n;
		b.ncol = (size_t)k;
		b.nzmax = (size_t)s->n * (size_t)k;
		b.d = (size_t)s->n;
		b.x = B;
		b.xtype = CHOLMOD_REAL;
		b.dtype = CHOLMOD_DOUBLE;
		cholmod_dense *x = cholmod_solve(CHOLMOD_A, s->L, &b, cc);
		if (!x)
			return 0;
		memcpy(X, x->x, sizeof(double) * (size_t)s->n * (size_t)k);
		cholmod_free_dense(&x, cc);
		return 1;
	}
	for (int c = 0; c < k; ++c) {
		const size_t at = (size_t)c * (size_t)s->n;
		if (umfpack_di_solve(UMFPACK_A, s->M->p, s->M->i, s->M->x, X + at, B + at, s->lu, NULL, NULL) !=
		    UMFPACK_OK)
			return 0;
	}
	return 1;
}

static void m_free(m_solver *s, cholmod_common *cc)
{
	cholmod_free_factor(&s->L, cc);
	if (s->lu)
		umfpack_di_free_numeric(&s->lu);
	cholmod_free_sparse(&s->M, cc);
}

/* The most degrees of freedom of a connected component of M that the reduction solves by itself (a rigid body has
 * six; a multibody's chain or a small FEM part a few dozen) */
#define COMP_MAX 64

/* M's connected components (the graph of its stored entries), each with its dense L U factors (partial pivoting),
 * so that M^-1 applied to a column of H is solved on the components the column meets alone: for rigid bodies, the
 * bodies of one contact, where a whole solve is M's size. */
typedef struct m_components {
	int nc;
	int *of, *loc;     /* each dof's component and place in it */
	int *start, *dofs; /* component c's dofs: dofs[start[c] .. start[c + 1]) */
	int *at, *piv;     /* component c's factors from lu[at[c]] (k x k, row-major), its pivots from piv[start[c]] */
	double *lu;
} m_components;

static void components_free(m_components *c)
{
	free(c->of);
	free(c->loc);
	free(c->start);
	free(c->dofs);
	free(c->at);
	free(c->piv);
	free(c->lu);
	memset(c, 0, sizeof *c);
}

static int find_root(int *parent, int i)
{
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

/* M's components with their factors; 0 where one has more than COMP_MAX dofs, a factor a zero pivot, or memory
 * ran out (the blocks of whole solves then). `mirror`: M holds one triangle of the symmetric matrix it stands for. */
static int components_make(const cholmod_sparse *M, int mirror, m_components *c)
{
	memset(c, 0, sizeof *c);
	const int n = (int)M->nrow, *Mp = M->p, *Mi = M->i;
	const double *Mx = M->x;
	int *parent = malloc(sizeof(int) * ((size_t)n + 1)), *size = calloc((size_t)n + 1, sizeof(int));
	c->of = malloc(sizeof(int) * ((size_t)n + 1));
	c->loc = malloc(sizeof(int) * ((size_t)n + 1));
	c->dofs = malloc(sizeof(int) * ((size_t)n + 1));
	int ok = parent && size && c->of && c->loc && c->dofs;
	for (int i = 0; ok && i < n; ++i)
		parent[i] = i;
	for (int j = 0; ok && j < n; ++j)
		for (int k = Mp[j]; k < Mp[j + 1]; ++k) {
			const int a = find_root(parent, Mi[k]), b = find_root(parent, j);
			if (a != b)
				parent[a < b ? b : a] = a < b ? a : b;
		}
	/* the components numbered in the order of their lowest dof */
	for (int i = 0; ok && i < n; ++i) {
		const int r = find_root(parent, i);
		if (r == i)
			size[i] = c->nc++;
		c->of[i] = size[r];
	}
	c->start = ok ? calloc((size_t)c->nc + 2, sizeof(int)) : NULL;
	ok = ok && c->start;
	for (int i = 0; ok && i < n; ++i)
		c->start[c->of[i] + 1]++;
	int64_t area = 0;
	for (int k = 0; ok && k < c->nc; ++k) {
		const int kk = c->start[k + 1];
		ok = kk <= COMP_MAX;
		area += (int64_t)kk * kk;
		c->start[k + 1] += c->start[k];
	}
	c->at = ok ? malloc(sizeof(int) * ((size_t)c->nc + 1)) : NULL;
	c->piv = ok ? malloc(sizeof(int) * ((size_t)n + 1)) : NULL;
	c->lu = ok ? calloc((size_t)area + 1, sizeof(double)) : NULL;
	ok = ok && c->at && c->piv && c->lu;
	if (ok) {
		int64_t a0 = 0;
		for (int k = 0; k < c->nc; ++k) {
			const int kk = c->start[k + 1] - c->start[k];
			c->at[k] = (int)a0;
			a0 += (int64_t)kk * kk;
		}
		int *fill = size; /* each component's next place */
		memcpy(fill, c->start, sizeof(int) * (size_t)c->nc);
		for (int i = 0; i < n; ++i) {
			const int k = c->of[i];
			c->loc[i] = fill[k] - c->start[k];
			c->dofs[fill[k]++] = i;
		}
		for (int j = 0; j < n; ++j)
			for (int e = Mp[j]; e < Mp[j + 1]; ++e) {
				const int i = Mi[e], k = c->of[j], kk = c->start[k + 1] - c->start[k];
				double *A = c->lu + c->at[k];
				A[c->loc[i] * kk + c->loc[j]] = Mx[e];
				if (mirror && i != j)
					A[c->loc[j] * kk + c->loc[i]] = Mx[e];
			}
		/* L U with partial pivoting, in place */
		for (int k = 0; ok && k < c->nc; ++k) {
			const int kk = c->start[k + 1] - c->start[k];
			double *A = c->lu + c->at[k];
			int *piv = c->piv + c->start[k];
			for (int col = 0; ok && col < kk; ++col) {
				int p = col;
				for (int r = col + 1; r < kk; ++r)
					if (fabs(A[r * kk + col]) > fabs(A[p * kk + col]))
						p = r;
				piv[col] = p;
				if (A[p * kk + col] == 0.0) {
					ok = 0;
					break;
				}
				if (p != col)
					for (int q = 0; q < kk; ++q) {
						const double t = A[col * kk + q];
						A[col * kk + q] = A[p * kk + q];
						A[p * kk + q] = t;
					}
				for (int r = col + 1; r < kk; ++r) {
					const double l = A[r * kk + col] /= A[col * kk + col];
					for (int q = col + 1; q < kk; ++q)
						A[r * kk + q] -= l * A[col * kk + q];
				}
			}
		}
	}
	free(parent);
	free(size);
	if (!ok)
		components_free(c);
	return ok;
}

/* x = M_k^-1 x on component k's dofs, x indexed by dof (its values outside the component untouched) */
static void component_solve(const m_components *c, int k, double *x)
{
	const int kk = c->start[k + 1] - c->start[k], *d = c->dofs + c->start[k], *piv = c->piv + c->start[k];
	const double *A = c->lu + c->at[k];
	double y[COMP_MAX];
	for (int r = 0; r < kk; ++r)
		y[r] = x[d[r]];
	for (int r = 0; r < kk; ++r) {
		const double t = y[r];
		y[r] = y[piv[r]];
		y[piv[r]] = t;
		for (int q = 0; q < r; ++q)
			y[r] -= A[r * kk + q] * y[q];
	}
	for (int r = kk - 1; r >= 0; --r) {
		for (int q = r + 1; q < kk; ++q)
			y[r] -= A[r * kk + q] * y[q];
		y[r] /= A[r * kk + r];
	}
	for (int r = 0; r < kk; ++r)
		x[d[r]] = y[r];
}

/* W = H^T M^-1 H in compressed rows (rp, ci, wx: m + 1, and the entries, allocated here) and q = H^T M^-1 f + w,
 * with M^-1 applied to the columns of H and to f in blocks of columns, so that a large M needs room for a block
 * and not for all of M^-1 H. Column b of W is H^T x for x = M^-1 H(:, b), summed over the rows of x that are not
 * zero through the rows of H (H^T by rows): where M is block-diagonal (rigid bodies) x is zero outside the bodies of
 * contact b, and W has an entry only where two contacts share a body, made in time proportional to those entries.
 * Entries that are exactly zero are not kept. 0 without memory or where W has more than 2^31 - 1 entries. */
/* M^-1 H(:, b) into x (zero outside) on the components column b of H meets; their dofs into dofs[], the count
 * returned. cmark: a component's last column (every entry < b before the first call) */
static int column_on_components(const m_components *c, const cholmod_sparse *H, int b, double *x, int *dofs,
                                int *cmark)
{
	const int *Hp = H->p, *Hi = H->i;
	const double *Hx = H->x;
	int nd = 0;
	for (int t = Hp[b]; t < Hp[b + 1]; ++t) {
		const int k = c->of[Hi[t]];
		if (cmark[k] != b) {
			cmark[k] = b;
			for (int e = c->start[k]; e < c->start[k + 1]; ++e)
				dofs[nd++] = c->dofs[e];
		}
	}
	for (int t = Hp[b]; t < Hp[b + 1]; ++t)
		x[Hi[t]] = Hx[t];
	for (int t = Hp[b]; t < Hp[b + 1]; ++t) {
		const int k = c->of[Hi[t]];
		if (cmark[k] == b) {
			cmark[k] = -1 - b; /* solved */
			component_solve(c, k, x);
		}
	}
	return nd;
}

static int reduce(m_solver *s, const m_components *comps, cholmod_sparse *H, const double *f, const double *w,
                  int **rp_out, int **ci_out, double **wx_out, double *q, cholmod_common *cc)
{
	const int n = s->n, m = (int)H->ncol;
	const int *Hp = H->p, *Hi = H->i;
	const double *Hx = H->x;
	/* columns of M^-1 [H f] a block: at most 2^22 values (32 MB) each of B and X; by components, one at a time */
	int block = comps ? 1 : (1 << 22) / n;
	block = block < 1 ? 1 : block > m + 1 ? m + 1 : block;
	double *B = comps ? NULL : malloc(sizeof(double) * (size_t)n * (size_t)block);
	double *X = comps ? NULL : malloc(sizeof(double) * (size_t)n * (size_t)block);
	double *xv = comps ? calloc((size_t)n + 1, sizeof(double)) : NULL;
	int *dl = comps ? malloc(sizeof(int) * ((size_t)n + 1)) : NULL;
	int *cmark = comps ? malloc(sizeof(int) * ((size_t)comps->nc + 1)) : NULL;
	/* H by rows: for row i, the columns a with H(i, a) != 0 */
	cholmod_sparse *Ht = cholmod_transpose(H, 0, cc); /* the pattern alone */
	int *seen = malloc(sizeof(int) * ((size_t)m + 1)), *touched = malloc(sizeof(int) * ((size_t)m + 1));
	/* W by columns as it is made (column b: rows a), turned to rows at the end */
	int64_t cap = 4 * (int64_t)m + 16, nz = 0;
	int *cp = malloc(sizeof(int) * ((size_t)m + 1)), *ri = malloc(sizeof(int) * (size_t)cap);
	double *cx = malloc(sizeof(double) * (size_t)cap);
	int ok = (comps ? xv && dl && cmark : B && X) && Ht && seen && touched && cp && ri && cx;
	for (int a = 0; ok && a < m; ++a)
		seen[a] = -1;
	for (int k = 0; ok && comps && k < comps->nc; ++k)
		cmark[k] = -1 - m - 1;
	const int *Tp = ok ? Ht->p : NULL, *Ti = ok ? Ht->i : NULL;
	for (int b0 = 0; ok && b0 <= m; b0 += block) {
		const int k = b0 + block <= m + 1 ? block : m + 1 - b0;
		if (!comps) {
			memset(B, 0, sizeof(double) * (size_t)n * (size_t)k);
			for (int c = 0; c < k; ++c) {
				double *col = B + (size_t)c * (size_t)n;
				if (b0 + c < m) {
					for (int t = Hp[b0 + c]; t < Hp[b0 + c + 1]; ++t)
						col[Hi[t]] = Hx[t];
				} else {
					memcpy(col, f, sizeof(double) * (size_t)n);
				}
			}
			ok = m_solve(s, B, X, k, cc);
		}
		for (int c = 0; ok && c < k; ++c) {
			const int b = b0 + c;
			/* x = M^-1 H(:, b) (M^-1 f for b = m): a column of X, or on the components column b meets, whose dofs
			 * are then the only ones where x is not zero */
			const double *x = comps ? xv : X + (size_t)c * (size_t)n;
			int nd = n;
			if (comps && b < m) {
				nd = column_on_components(comps, H, b, xv, dl, cmark);
			} else if (comps) {
				memcpy(xv, f, sizeof(double) * (size_t)n);
				for (int kc = 0; kc < comps->nc; ++kc)
					component_solve(comps, kc, xv);
			}
			if (b == m) {
				/* q_a = w_a + H(:, a) . M^-1 f */
				for (int a = 0; a < m; ++a) {
					double sum = 0.0;
					for (int t = Hp[a]; t < Hp[a + 1]; ++t)
						sum += Hx[t] * x[Hi[t]];
					q[a] = w[a] + sum;
				}
				continue;
			}
			/* the rows a that meet x, then each W_ab = H(:, a) . x summed in H's order, as a dense product would */
			int nt = 0;
			for (int j = 0; j < nd; ++j) {
				const int i = comps ? dl[j] : j;
				if (x[i] == 0.0)
					continue;
				for (int t = Tp[i]; t < Tp[i + 1]; ++t)
					if (seen[Ti[t]] != b) {
						seen[Ti[t]] = b;
						touched[nt++] = Ti[t];
					}
			}
			if (nz + nt > cap) {
				while (nz + nt > cap)
					cap *= 2;
				if (cap > INT32_MAX) {
					ok = 0;
					break;
				}
				int *r2 = realloc(ri, sizeof(int) * (size_t)cap);
				double *x2 = r2 ? realloc(cx, sizeof(double) * (size_t)cap) : NULL;
				ri = r2 ? r2 : ri;
				cx = x2 ? x2 : cx;
				if (!r2 || !x2) {
					ok = 0;
					break;
				}
			}
			cp[b] = (int)nz;
			for (int j = 0; j < nt; ++j) {
				const int a = touched[j];
				double sum = 0.0;
				for (int t = Hp[a]; t < Hp[a + 1]; ++t)
					sum += Hx[t] * x[Hi[t]];
				if (sum != 0.0) {
					ri[nz] = a;
					cx[nz++] = sum;
				}
			}
			for (int j = 0; comps && j < nd; ++j)
				xv[dl[j]] = 0.0;
		}
	}
	if (ok) {
		cp[m] = (int)nz;
		/* columns to rows: each row's entries in ascending column */
		int *rp = calloc((size_t)m + 1, sizeof(int)), *ci = malloc(sizeof(int) * (size_t)(nz + 1));
		double *wx = malloc(sizeof(double) * (size_t)(nz + 1));
		ok = rp && ci && wx;
		if (ok) {
			for (int64_t e = 0; e < nz; ++e)
				rp[ri[e] + 1]++;
			for (int a = 0; a < m; ++a)
				rp[a + 1] += rp[a];
			int *fill = touched; /* the next free place of each row */
			memcpy(fill, rp, sizeof(int) * (size_t)m);
			for (int b = 0; b < m; ++b)
				for (int e = cp[b]; e < cp[b + 1]; ++e) {
					const int at = fill[ri[e]]++;
					ci[at] = b;
					wx[at] = cx[e];
				}
			*rp_out = rp;
			*ci_out = ci;
			*wx_out = wx;
		} else {
			free(rp);
			free(ci);
			free(wx);
		}
	}
	cholmod_free_sparse(&Ht, cc);
	free(B);
	free(X);
	free(xv);
	free(dl);
	free(cmark);
	free(seen);
	free(touched);
	free(cp);
	free(ri);
	free(cx);
	return ok;
}

/* A global problem (M v = H r + f, u = H^T v + w; FCLIB's global form) reduced to the local problem of its
 * reactions, W = H^T M^-1 H and q = H^T M^-1 f + w, W sparse (reduce).
 * Equality constraints (G, b) are not supported. M is taken as the file stores it: a symmetric M by its
 * Cholesky factor; one that holds a single triangle as the symmetric matrix it stands for, and one that is not
 * symmetric by the L U factors of the whole matrix, each said in the note. */
static lk_status import_global(const char *path, const fclib_shape *shape_m, const fclib_shape *shape_h,
                               lk_problem **out, char *note, size_t nsz, char *err, size_t esz)
{
	char why[320] = "";
	struct fclib_global *g = fclib_read_global(path);
	if (!g || !g->M || !g->H || !g->f || !g->w || !g->mu) {
		free_global(g);
		snprintf(err, esz, "%s: an FCLIB global problem without M, H, f, w or mu", path);
		return LK_ERR_PARSE;
	}
	const int n = g->M->m, m = g->H->n, d = g->spacedim;
	if (g->G && g->G->n > 0) {
		snprintf(err, esz, "%s: an FCLIB global problem with equality constraints (G, b): not supported", path);
		free_global(g);
		return LK_ERR_UNSUPPORTED;
	}
	entries em, eh;
	memset(&eh, 0, sizeof eh);
	lk_status st = LK_ERR_PARSE;
	cholmod_common cc;
	cholmod_start(&cc);
	cc.print = 0;
	m_solver s = {NULL, NULL, NULL, n};
	cholmod_sparse *H = NULL;
	double *W = NULL, *q = NULL;
	int *rp = NULL, *ci = NULL;
	if (matrix_entries(g->M, shape_m, "M", &em, why, sizeof why) &&
	    matrix_entries(g->H, shape_h, "H", &eh, why, sizeof why)) {
		s.M = to_sparse(&em, n, n, 0, &cc);
		H = to_sparse(&eh, n, m, 0, &cc);
		q = malloc(sizeof(double) * (size_t)m);
		double asym = 0, scale = 0;
		int ok = 0;
		const m_symmetry sym = s.M ? symmetry_of(s.M, &cc, &asym, &scale, &ok) : M_SYMMETRIC;
		if (!s.M || !H || !q || !ok) {
			st = LK_ERR_NO_MEMORY;
			snprintf(why, sizeof why, "out of memory");
		} else if (m_factorise(&s, sym, &cc, why, sizeof why)) {
			/* M of small components (rigid bodies) is solved component by component (m_components) */
			m_components comps;
			const int by_components = components_make(s.M, sym == M_UPPER || sym == M_LOWER, &comps);
			const int reduced = reduce(&s, by_components ? &comps : NULL, H, g->f, g->w, &rp, &ci, &W, q, &cc);
			if (by_components)
				components_free(&comps);
			if (!reduced) {
				st = LK_ERR_NO_MEMORY;
				snprintf(why, sizeof why, "out of memory in the reduction (or W beyond 2^31 - 1 entries)");
			} else {
				st = make_problem(m, d, rp, ci, W, q, g->mu, out, why, sizeof why);
			}
			if (st == LK_OK && sym == M_UPPER)
				snprintf(note, nsz, "M holds only its upper triangle: read as the symmetric matrix it stands "
				         "for (a reader that takes M as stored, Siconos's, solves a triangular M)");
			else if (st == LK_OK && sym == M_LOWER)
				snprintf(note, nsz, "M holds only its lower triangle: read as the symmetric matrix it stands "
				         "for (a reader that takes M as stored, Siconos's, solves a triangular M)");
			else if (st == LK_OK && sym == M_UNSYMMETRIC)
				snprintf(note, nsz, "M is not symmetric (largest |M_ij - M_ji| %.3g, %.2g of its largest entry): "
				         "reduced with the whole M by its L U factors, as stored, so that W = H^T M^-1 H is not "
				         "symmetric either", asym, asym / scale);
		}
	}
	if (st != LK_OK)
		snprintf(err, esz, "%s: global problem: %s", path, why);
	m_free(&s, &cc);
	cholmod_free_sparse(&H, &cc);
	cholmod_finish(&cc);
	entries_free(&em);
	entries_free(&eh);
	free(W);
	free(rp);
	free(ci);
	free(q);
	free_global(g);
	return st;
}

int lk_fclib_is_hdf5(const char *path)
{
	H5E_auto2_t old_func;
	void *old_data;
	H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	const int yes = H5Fis_hdf5(path) > 0;
	H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
	return yes;
}

lk_status lk_fclib_import(const char *path, lk_problem **out, char *err, size_t esz)
{
	*out = NULL;
	if (esz)
		err[0] = '\0';
	struct stat sb;
	if (stat(path, &sb) != 0) {
		snprintf(err, esz, "%s: no such file", path);
		return LK_ERR_IO;
	}
	/* what the file is and that its sizes agree, before libfclib reads it (which trusts them, and prints its
	 * own unterminated error line and ends the process on a file without the group it looks for) */
	fclib_shape a, b;
	lk_status kind = fclib_check(path, &a, &b, err, esz);
	if (kind == FCLIB_GLOBAL) {
		char note[320] = "";
		lk_status st = import_global(path, &a, &b, out, note, sizeof note, err, esz);
		if (st == LK_OK && esz)
			snprintf(err, esz, "%s", note);
		return st;
	}
	if (kind != LK_OK)
		return kind;
	return import_local(path, &a, out, err, esz);
}

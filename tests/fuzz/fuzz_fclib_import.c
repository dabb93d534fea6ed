/* Fuzz target: the FCLIB importer (lk_fclib_import in scenes/report/fclib_io.c).
 *
 * FCLIB files are HDF5 files, and the bytes of an HDF5 file are parsed by libhdf5 and libfclib, which
 * lcpkit does not own: libfclib calls exit(1) on any HDF5 error and trusts the sizes a file states
 * (docs/reliability.md). So this target fuzzes what lcpkit owns: the input bytes describe an FCLIB local or
 * global problem (space dimension, W, or M and H, in any of FCLIB's three storages with arbitrary sizes,
 * pointers, indices and values; q and mu, or f, w and mu), libfclib writes it as a valid HDF5 file, one of its
 * datasets may then be replaced by one of any length (a file libfclib would not write, such as a q shorter
 * than W), and lk_fclib_import reads it. Every inconsistency a file can carry reaches lk_fclib_import this
 * way; nothing of libhdf5's file parsing is exercised.
 *
 * Checked: no crash, leak or undefined behaviour; an error comes with a message and no problem; an accepted
 * problem has 2 or 3 rows per contact with the layout fclib_io.h states, and a short solve keeps the
 * promises of lk_solve (fuzz_util.c).
 *
 * Input layout (every field read from the next bytes; missing bytes read as zero):
 *   u8 flags: bit 0 space dimension 3 (else 2); bits 1-2 storage 0 triplet, 1 csc, 2 csr (3: csr);
 *             bit 3 a global problem; bit 4 a dataset replaced
 *   u8 contacts (m = (contacts % 6 + 1) * dim contact rows)
 *   local:  u8 n - m offset (signed, small), then W (m x n): u8 nz, u8 nzmax, the p, i (int: u8 small or,
 *           after a 0xff prefix, a full 32-bit value) and x (double: u8 small or, after a 0xff prefix,
 *           8 raw bytes) arrays (a triplet's nzmax is raised to nz: libfclib's writer reads nz values of x)
 *   global: u8 nv (velocities, % 8 + 1), u8 M's column offset, M (nv x nv + offset) as W above, u8 H's row
 *           offset, H (nv + offset x m) the same way, then f (nv doubles)
 *   then q (or w) and mu; with bit 4, u8 which dataset, u8 count and its values (tamper below). */
#include "fclib_io.h"
#include "fuzz_util.h"
#include "h5_edit.h"

#include <fclib.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct bytes {
	const uint8_t *d;
	size_t n, at;
} bytes;

static uint8_t next_u8(bytes *b)
{
	return b->at < b->n ? b->d[b->at++] : 0;
}

static int next_int(bytes *b)
{
	uint8_t v = next_u8(b);
	if (v != 0xff)
		return (int)(int8_t)v;
	uint32_t u = 0;
	for (int k = 0; k < 4; ++k)
		u |= (uint32_t)next_u8(b) << (8 * k);
	int32_t s;
	memcpy(&s, &u, sizeof s);
	return s;
}

static double next_double(bytes *b)
{
	uint8_t v = next_u8(b);
	if (v != 0xff)
		return ((int)v - 64) / 16.0;
	uint64_t u = 0;
	for (int k = 0; k < 8; ++k)
		u |= (uint64_t)next_u8(b) << (8 * k);
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

/* An FCLIB matrix of rows x cols in `storage` (0 triplet, 1 compressed columns, 2 or 3 compressed rows) from
 * the next bytes: u8 nz, u8 nzmax, then p, i and x. 0 when it cannot be written (an empty triplet: libfclib
 * writes zero-length p and i datasets, which HDF5 refuses) or memory is short. */
typedef struct fz_matrix {
	struct fclib_matrix A;
} fz_matrix;

static int matrix_from(bytes *b, int storage, int rows, int cols, fz_matrix *out)
{
	struct fclib_matrix *A = &out->A;
	memset(A, 0, sizeof *A);
	int nz = next_u8(b) % 80;
	int nzmax = next_u8(b) % 80 + 1; /* HDF5 cannot make an empty dataset through libfclib's calls */
	A->m = rows;
	A->n = cols;
	int np, ni;
	if (storage == 0) {
		A->nz = nz;
		np = ni = nz > 0 ? nz : 1;
	} else {
		A->nz = storage == 1 ? -1 : -2;
		np = (storage == 1 ? cols : rows) + 1;
		ni = nzmax;
	}
	A->p = calloc((size_t)np, sizeof(int));
	A->i = calloc((size_t)ni, sizeof(int));
	/* libfclib 3.1 writes a triplet matrix's x with nz values from an array of nzmax: a triplet with
	 * nz > nzmax would be read past it here, in the writer */
	if (storage == 0 && nz > nzmax)
		nzmax = nz;
	A->nzmax = nzmax;
	A->x = calloc((size_t)nzmax, sizeof(double));
	if (!A->p || !A->i || !A->x)
		return 0;
	for (int k = 0; k < np; ++k)
		A->p[k] = next_int(b);
	for (int k = 0; k < ni; ++k)
		A->i[k] = next_int(b);
	for (int k = 0; k < nzmax; ++k)
		A->x[k] = next_double(b);
	return !(storage == 0 && nz == 0);
}

static void matrix_free(fz_matrix *m)
{
	free(m->A.p);
	free(m->A.i);
	free(m->A.x);
}

/* A file libfclib would not write: one dataset replaced by the next bytes, u8 which (of the datasets below),
 * then u8 count and that many values (ints for the sizes and indices, doubles for the rest). */
static void tamper(bytes *b, const char *path, int global)
{
	static const char *const local_sets[] = {
		"/fclib_local/spacedim", "/fclib_local/W/m", "/fclib_local/W/n", "/fclib_local/W/nz",
		"/fclib_local/W/nzmax", "/fclib_local/W/p", "/fclib_local/W/i", "/fclib_local/W/x",
		"/fclib_local/vectors/q", "/fclib_local/vectors/mu",
	};
	static const char *const global_sets[] = {
		"/fclib_global/spacedim", "/fclib_global/M/m", "/fclib_global/M/n", "/fclib_global/M/nz",
		"/fclib_global/M/nzmax", "/fclib_global/M/p", "/fclib_global/M/i", "/fclib_global/M/x",
		"/fclib_global/H/m", "/fclib_global/H/n", "/fclib_global/H/nz", "/fclib_global/H/nzmax",
		"/fclib_global/H/p", "/fclib_global/H/i", "/fclib_global/H/x", "/fclib_global/vectors/f",
		"/fclib_global/vectors/w", "/fclib_global/vectors/mu",
	};
	const int nsets = global ? (int)(sizeof global_sets / sizeof *global_sets)
	                         : (int)(sizeof local_sets / sizeof *local_sets);
	const char *name = (global ? global_sets : local_sets)[next_u8(b) % nsets];
	const size_t len = strlen(name);
	/* the datasets of numbers that are not indices: the values, the vectors */
	const int doubles = name[len - 2] == '/' && name[len - 1] == 'x' ? 1 : strstr(name, "/vectors/") != NULL;
	const int count = next_u8(b) % 64;
	void *values = calloc((size_t)count + 1, doubles ? sizeof(double) : sizeof(int));
	if (!values)
		return;
	for (int k = 0; k < count; ++k) {
		if (doubles)
			((double *)values)[k] = next_double(b);
		else
			((int *)values)[k] = next_int(b);
	}
	lk_h5_replace(path, name, !doubles, values, count);
	free(values);
}

static const char *file_path(void)
{
	static char path[256];
	if (!path[0]) {
		const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		snprintf(path, sizeof path, "%s/lcpkit-fuzz-%ld.hdf5", dir, (long)getpid());
	}
	return path;
}

static void check_import(const char *path, uint64_t selector)
{
	lk_problem *p = (lk_problem *)1;
	char err[512];
	err[0] = '\0';
	lk_status st = lk_fclib_import(path, &p, err, sizeof err);
	if (getenv("LK_FUZZ_VERBOSE"))
		fprintf(stderr, "import: %s %s (%d rows)\n", lk_status_string(st), err,
		        st == LK_OK ? lk_problem_row_count(p) : 0);
	if (st != LK_OK) {
		if (p != NULL || !err[0])
			lk_fuzz_fail("a failed import left a problem or no message");
		return;
	}
	if (!p || lk_problem_form(p) != LK_FORM_MATRIX)
		lk_fuzz_fail("an accepted import is no matrix-form problem");
	int n = lk_problem_row_count(p);
	if (n <= 0)
		lk_fuzz_fail("an accepted import has no rows");
	if (lk_problem_validate(p) != LK_OK)
		lk_fuzz_fail("an accepted import does not validate");
	lk_fuzz_solve_check(p, selector);
	lk_problem_destroy(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	if (!quiet) {
		H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* HDF5 prints an error stack by default */
		quiet = 1;
	}
	if (size > 1 << 14)
		return 0;
	if (getenv("LK_FUZZ_FCLIB_RAW")) {
		/* the experiment of docs/reliability.md: raw bytes as the file, so libhdf5 and libfclib parse them */
		const char *path = file_path();
		FILE *f = fopen(path, "wb");
		if (!f)
			return 0;
		size_t put = fwrite(data, 1, size, f);
		fclose(f);
		if (put == size)
			check_import(path, lk_fuzz_hash(data, size));
		unlink(path);
		return 0;
	}
	bytes b = {data, size, 0};
	uint8_t flags = next_u8(&b);
	int dim = flags & 1 ? 3 : 2;
	int storage = (flags >> 1) & 3;
	const int global = (flags >> 3) & 1;
	int m = ((int)next_u8(&b) % 6 + 1) * dim;
	fz_matrix W, M, H;
	memset(&W, 0, sizeof W);
	memset(&M, 0, sizeof M);
	memset(&H, 0, sizeof H);
	double *q = NULL, *mu = NULL, *f = NULL;
	int made;
	if (!global) {
		/* libfclib sizes its arrays from m and n: negative sizes are its undefined behaviour, not ours */
		int n = m + (int)(int8_t)next_u8(&b) % 4;
		made = matrix_from(&b, storage, m, n < 0 ? 0 : n, &W);
	} else {
		/* M: nv x nv (give or take a column), H: nv (give or take a row) x m */
		const int nv = next_u8(&b) % 8 + 1;
		const int mn = nv + (int)(int8_t)next_u8(&b) % 2;
		made = matrix_from(&b, storage, nv, mn < 0 ? 0 : mn, &M);
		const int hm = nv + (int)(int8_t)next_u8(&b) % 2;
		made = made && matrix_from(&b, storage, hm < 0 ? 0 : hm, m, &H);
		f = calloc((size_t)nv, sizeof(double));
		if (f)
			for (int k = 0; k < nv; ++k)
				f[k] = next_double(&b);
		made = made && f;
	}
	q = calloc((size_t)m, sizeof(double));
	mu = calloc((size_t)(m / dim), sizeof(double));
	if (made && q && mu) {
		for (int k = 0; k < m; ++k)
			q[k] = next_double(&b);
		for (int k = 0; k < m / dim; ++k)
			mu[k] = next_double(&b);
		const char *path = file_path();
		unlink(path); /* libfclib adds to an existing file, and refuses existing datasets with exit(1) */
		int written;
		if (!global) {
			struct fclib_local loc;
			memset(&loc, 0, sizeof loc);
			loc.W = &W.A;
			loc.q = q;
			loc.mu = mu;
			loc.spacedim = dim;
			written = fclib_write_local(&loc, path);
		} else {
			struct fclib_global g;
			memset(&g, 0, sizeof g);
			g.M = &M.A;
			g.H = &H.A;
			g.f = f;
			g.w = q;
			g.mu = mu;
			g.spacedim = dim;
			written = fclib_write_global(&g, path);
		}
		if (written && ((flags >> 4) & 1))
			tamper(&b, path, global);
		if (written)
			check_import(path, lk_fuzz_hash(data, size));
		unlink(path);
	}
	matrix_free(&W);
	matrix_free(&M);
	matrix_free(&H);
	free(q);
	free(mu);
	free(f);
	return 0;
}

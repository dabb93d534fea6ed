/* Fuzz target: the FCLIB importer (lk_fclib_import in scenes/report/fclib_io.c).
 *
 * FCLIB files are HDF5 files, and the bytes of an HDF5 file are parsed by libhdf5 and libfclib, which
 * lcpkit does not own: libfclib calls exit(1) on any HDF5 error and trusts the sizes a file states
 * (docs/reliability.md). So this target fuzzes what lcpkit owns: the input bytes describe an FCLIB local
 * problem (space dimension, W in any of FCLIB's three storages with arbitrary sizes, pointers, indices and
 * values, q and mu), libfclib writes it as a valid HDF5 file, and lk_fclib_import reads it. Every
 * inconsistency a file can carry past libfclib's reader reaches lk_fclib_import this way; nothing of
 * libhdf5's file parsing is exercised.
 *
 * Checked: no crash, leak or undefined behaviour; an error comes with a message and no problem; an accepted
 * problem has 2 or 3 rows per contact with the layout fclib_io.h states, and a short solve keeps the
 * promises of lk_solve (fuzz_util.c).
 *
 * Input layout (every field read from the next bytes; missing bytes read as zero):
 *   u8 flags: bit 0 space dimension 3 (else 2); bits 1-2 storage 0 triplet, 1 csc, 2 csr (3: csr)
 *   u8 contacts (m = (contacts % 6 + 1) * dim rows), u8 n - m offset (signed, small), u8 nz, u8 nzmax
 *   (a triplet's nzmax is raised to nz: libfclib itself cannot read a triplet file with nz > nzmax)
 *   then the p, i (int: u8 small or, after a 0xff prefix, a full 32-bit value) and x, q, mu arrays
 *   (double: u8 small or, after a 0xff prefix, 8 raw bytes). */
#include "fclib_io.h"
#include "fuzz_util.h"

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
	int m = ((int)next_u8(&b) % 6 + 1) * dim;
	/* libfclib sizes its arrays from m and n: negative sizes are its undefined behaviour, not ours */
	int n = m + (int)(int8_t)next_u8(&b) % 4;
	if (n < 0)
		n = 0;
	int nz = next_u8(&b) % 80;
	int nzmax = next_u8(&b) % 80 + 1; /* HDF5 cannot make an empty dataset through libfclib's calls */

	struct fclib_matrix W;
	memset(&W, 0, sizeof W);
	W.m = m;
	W.n = n;
	W.nzmax = nzmax;
	int np, ni;
	if (storage == 0) {
		W.nz = nz;
		np = ni = nz > 0 ? nz : 1;
	} else {
		W.nz = storage == 1 ? -1 : -2;
		np = (storage == 1 ? n : m) + 1;
		ni = nzmax;
	}
	if (storage == 0 && nz == 0)
		W.nz = 0;
	W.p = calloc((size_t)np, sizeof(int));
	W.i = calloc((size_t)ni, sizeof(int));
	/* libfclib 3.1 writes a triplet matrix's x with nz values but reads it into nzmax: a file with
	 * nz > nzmax overflows inside fclib_read_local, before lcpkit sees anything (docs/reliability.md) */
	if (storage == 0 && nz > nzmax)
		nzmax = nz;
	int nx = nzmax;
	W.nzmax = nzmax;
	W.x = calloc((size_t)nx, sizeof(double));
	double *q = calloc((size_t)m, sizeof(double)), *mu = calloc((size_t)(m / dim), sizeof(double));
	if (!W.p || !W.i || !W.x || !q || !mu)
		goto done;
	for (int k = 0; k < np; ++k)
		W.p[k] = next_int(&b);
	for (int k = 0; k < ni; ++k)
		W.i[k] = next_int(&b);
	for (int k = 0; k < nx; ++k)
		W.x[k] = next_double(&b);
	for (int k = 0; k < m; ++k)
		q[k] = next_double(&b);
	for (int k = 0; k < m / dim; ++k)
		mu[k] = next_double(&b);
	if (storage == 0 && nz == 0) {
		/* an empty triplet matrix: libfclib writes zero-length p and i datasets, which HDF5 refuses */
		goto done;
	}

	struct fclib_local loc;
	memset(&loc, 0, sizeof loc);
	loc.W = &W;
	loc.q = q;
	loc.mu = mu;
	loc.spacedim = dim;
	const char *path = file_path();
	unlink(path); /* libfclib adds to an existing file, and refuses existing datasets with exit(1) */
	if (fclib_write_local(&loc, path))
		check_import(path, lk_fuzz_hash(data, size));
	unlink(path);
done:
	free(W.p);
	free(W.i);
	free(W.x);
	free(q);
	free(mu);
	return 0;
}

/* Problem files (docs/problem-format.md): the writer (lk_problem_write) and the dense export
 * (lk_problem_export_dense). Numbers go out as %.17g in the "C" locale, so that they read back bit for bit; a
 * file is written beside a regular target and renamed over it once whole; the writer refuses what the reader
 * would refuse. */
#include "io_format.h"

#include "kernel.h"
#include "problem.h"
#include "lcpkit/io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* --------------------------------------------------------------------------------------------- writer */

/* The output file: a temporary file beside a regular target, renamed over it once everything is written. */
typedef struct out_file {
	FILE *f;
	char *tmp;
	const char *path;
} out_file;

static lk_status out_open(out_file *o, const char *path, char *err, size_t err_size)
{
	o->f = NULL;
	o->tmp = NULL;
	o->path = path;
	struct stat sb;
	int direct = lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
	if (!direct) {
		size_t n = strlen(path) + 64;
		o->tmp = malloc(n);
		if (!o->tmp) {
			lk__io_set_err(err, err_size, "%s: out of memory", path);
			return LK_ERR_NO_MEMORY;
		}
		struct timespec ts;
		timespec_get(&ts, TIME_UTC);
		int fd = -1;
		for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
			snprintf(o->tmp, n, "%s.tmp-%ld-%ld", path, (long)getpid(), (long)ts.tv_nsec + attempt);
			fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
			if (fd < 0 && errno != EEXIST)
				break;
		}
		if (fd >= 0) {
			o->f = fdopen(fd, "w");
			if (!o->f) {
				close(fd);
				unlink(o->tmp);
			}
		}
		if (!o->f) {
			/* no temporary file beside it (a read-only directory, say): write in place */
			free(o->tmp);
			o->tmp = NULL;
			direct = 1;
		}
	}
	if (direct)
		o->f = fopen(path, "w");
	if (!o->f) {
		lk__io_set_err(err, err_size, "%s: cannot open for writing: %s", path, strerror(errno));
		return LK_ERR_IO;
	}
	return LK_OK;
}

static lk_status out_close(out_file *o, lk_status st, char *err, size_t err_size)
{
	int e = 0;
	if (ferror(o->f))
		e = errno ? errno : EIO;
	if (fclose(o->f) != 0 && !e)
		e = errno ? errno : EIO;
	if (o->tmp) {
		if (st == LK_OK && !e && rename(o->tmp, o->path) != 0)
			e = errno;
		if (st != LK_OK || e)
			unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
	if (st == LK_OK && e) {
		lk__io_set_err(err, err_size, "%s: write failed: %s", o->path, strerror(e));
		st = LK_ERR_IO;
	}
	return st;
}

static void put_doubles(FILE *f, const double *x, int n)
{
	for (int k = 0; k < n; ++k)
		fprintf(f, " %.17g", x[k]);
}

/* The ignored bounds of a friction row may hold anything but NaN in the file. */
static double bound_for_file(double v, double if_nan)
{
	return isnan(v) ? if_nan : v;
}

static void write_rows_form(FILE *f, const lk_problem *p)
{
	fprintf(f, "bodies %d\n# index u[6] inv_mass[3] inv_inertia[9]\n", p->nbodies);
	for (int i = 0; i < p->nbodies; ++i) {
		const lk_body_def *b = &p->bodies[i];
		fprintf(f, "%d", i);
		put_doubles(f, b->u, 6);
		put_doubles(f, b->inv_mass, 3);
		put_doubles(f, b->inv_inertia, 9);
		fputc('\n', f);
	}
	fprintf(f, "rows %d\n# index kind body0 body1 id findex mu lo hi c s J0[6] J1[6] point[3]\n", p->nrows);
	for (int i = 0; i < p->nrows; ++i) {
		lk_row_def row;
		lk_problem_get_row(p, i, &row);
		const lk_row_def *d = &row;
		fprintf(f, "%d %s %d %d %" PRIu64 " %d %.17g %.17g %.17g %.17g %.17g", i, lk__io_kind_names[d->kind],
		        d->body[0], d->body[1], d->id, d->findex, d->mu, bound_for_file(d->lo, -INFINITY),
		        bound_for_file(d->hi, INFINITY), d->c, d->s);
		put_doubles(f, d->J[0], 6);
		put_doubles(f, d->J[1], 6);
		put_doubles(f, d->point, 3);
		fputc('\n', f);
	}
}

static void write_matrix_form(FILE *f, const lk_problem *p)
{
	fprintf(f, "rows %d\n# index q lo hi mu findex\n", p->nrows);
	for (int i = 0; i < p->nrows; ++i) {
		const lk__row *r = &p->rows[i];
		fprintf(f, "%d %.17g %.17g %.17g %.17g %d\n", i, p->qv[i], r->lo, r->hi, r->mu, r->findex);
	}
	fprintf(f, "entries %d\n# row column value (sorted by row)\n", p->nnz);
	for (int i = 0; i < p->nrows; ++i)
		for (int k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k)
			fprintf(f, "%d %d %.17g\n", i, p->col[k], p->val[k]);
}

static void write_vector(FILE *f, const char *name, const double *x, int n)
{
	fprintf(f, "%s %d\n", name, n);
	for (int i = 0; i < n; ++i)
		fprintf(f, "%.17g\n", x[i]);
}

static int all_finite(const double *x, int n)
{
	for (int i = 0; i < n; ++i)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

lk_status lk_problem_write(const lk_problem *p, const lk_problem_extra *extra, const char *path, char *err,
                           size_t err_size)
{
	lk__io_set_err(err, err_size, "%s", "");
	if (!p || !path) {
		lk__io_set_err(err, err_size, "write: %s is NULL", p ? "path" : "problem");
		return LK_ERR_INVALID_ARGUMENT;
	}
	/* refuse what the reader would refuse, before touching the file */
	if (!all_finite(p->lambda, p->nrows)) {
		lk__io_set_err(err, err_size, "%s: lambda is not finite", path);
		return LK_ERR_NONFINITE;
	}
	if (extra) {
		if (!isfinite(extra->h) || extra->h < 0) {
			lk__io_set_err(err, err_size, "%s: time step h = %g is not a finite number >= 0", path, extra->h);
			return LK_ERR_INVALID_ARGUMENT;
		}
		size_t len = strnlen(extra->source, sizeof extra->source);
		if (len == sizeof extra->source) {
			lk__io_set_err(err, err_size, "%s: source text is not terminated", path);
			return LK_ERR_INVALID_ARGUMENT;
		}
		for (size_t i = 0; i < len; ++i)
			if (!lk__io_text_byte_ok((unsigned char)extra->source[i])) {
				lk__io_set_err(err, err_size, "%s: source text has the control character 0x%02x", path,
				               (unsigned char)extra->source[i]);
				return LK_ERR_INVALID_ARGUMENT;
			}
		if (extra->has_solution && !extra->solution) {
			lk__io_set_err(err, err_size, "%s: has_solution is set but solution is NULL", path);
			return LK_ERR_INVALID_ARGUMENT;
		}
		if (extra->has_solution && !all_finite(extra->solution, p->nrows)) {
			lk__io_set_err(err, err_size, "%s: the reference solution is not finite", path);
			return LK_ERR_NONFINITE;
		}
	}
	out_file o;
	lk_status st = out_open(&o, path, err, err_size);
	if (st != LK_OK)
		return st;
	lk__io_c_numeric loc;
	lk__io_c_numeric_enter(&loc);
	FILE *f = o.f;
	fprintf(f, LK__IO_MAGIC " %d\n", LK_IO_FORMAT_VERSION);
	if (extra) {
		if (extra->source[0])
			fprintf(f, "source %s\n", extra->source);
		fprintf(f, "h %.17g\n", extra->h);
	}
	fprintf(f, "form %s\n", p->form == LK_FORM_ROWS ? "rows" : "matrix");
	if (p->form == LK_FORM_ROWS)
		write_rows_form(f, p);
	else
		write_matrix_form(f, p);
	write_vector(f, "lambda", p->lambda, p->nrows);
	if (extra && extra->has_solution)
		write_vector(f, "solution", extra->solution, p->nrows);
	fputs("end\n", f);
	lk__io_c_numeric_leave(&loc);
	return out_close(&o, LK_OK, err, err_size);
}

/* ----------------------------------------------------------------------------------------- dense export */

lk_status lk_problem_export_dense(lk_problem *p, int max_n, const char *path, char *err, size_t err_size)
{
	lk__io_set_err(err, err_size, "%s", "");
	if (!p || !path) {
		lk__io_set_err(err, err_size, "export_dense: %s is NULL", p ? "path" : "problem");
		return LK_ERR_INVALID_ARGUMENT;
	}
	int n = p->nrows;
	if (n > max_n || n > 46340) {
		lk__io_set_err(err, err_size, "%s: %d rows exceed the dense export limit %d", path, n,
		               max_n < 46340 ? max_n : 46340);
		return LK_ERR_LIMIT;
	}
	double *A = lk__io_alloc_array((size_t)n * (size_t)n, sizeof(double));
	double *q = lk__io_alloc_array((size_t)n, sizeof(double));
	if (!A || !q) {
		free(A);
		free(q);
		lk__io_set_err(err, err_size, "%s: out of memory for a %d x %d matrix", path, n, n);
		return LK_ERR_NO_MEMORY;
	}
	lk_status st = lk_problem_assemble_dense(p, max_n, A, q);
	if (st != LK_OK) {
		lk__io_set_err(err, err_size, "%s: %s", path, lk_problem_error(p));
	} else {
		out_file o;
		st = out_open(&o, path, err, err_size);
		if (st == LK_OK) {
			lk__io_c_numeric loc;
			lk__io_c_numeric_enter(&loc);
			fprintf(o.f,
			        "# lcpkit dense export %d (docs/problem-format.md): n = %d\n"
			        "# line i: A[i][0] ... A[i][n-1] q[i] lo[i] hi[i]; w = A lambda + q;\n"
			        "# lo, hi are the effective bounds at the problem's lambda (friction: -+mu "
			        "|lambda_findex|)\n",
			        LK_IO_FORMAT_VERSION, n);
			for (int i = 0; i < n; ++i) {
				double lo, hi;
				lk__bounds(&p->rows[i], p->lambda, &lo, &hi);
				for (int j = 0; j < n; ++j)
					fprintf(o.f, j ? " %.17g" : "%.17g", A[(size_t)i * n + j]);
				fprintf(o.f, " %.17g %.17g %.17g\n", q[i], lo, hi);
			}
			lk__io_c_numeric_leave(&loc);
			st = out_close(&o, LK_OK, err, err_size);
		}
	}
	free(A);
	free(q);
	return st;
}

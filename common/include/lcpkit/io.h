/* lcpkit: problem files (docs/problem-format.md) and export for other tools. */
#ifndef LCPKIT_IO_H
#define LCPKIT_IO_H

#include "lcpkit/lcpkit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format version this library writes and the only one its reader accepts (first line
 * "lcpkit-problem 1"). */
#define LK_IO_FORMAT_VERSION 1
/* The longest line (bytes, without the newline) the reader accepts. */
#define LK_IO_MAX_LINE 4096

/* Limits the strict reader enforces before it allocates anything. */
typedef struct lk_io_limits {
	int max_rows;
	int max_bodies;
	int64_t max_nnz;
	int64_t max_bytes;  /* size of the whole file */
} lk_io_limits;

LK_API lk_io_limits lk_default_io_limits(void);

/* Optional data a problem file carries besides the problem and its lambda (the warm start). */
typedef struct lk_problem_extra {
	double *solution;       /* a reference solution lambda (row_count entries), or NULL; owned by the extra */
	int has_solution;
	double h;               /* time step the problem came from, 0 if unknown */
	char source[128];       /* free text: engine, scene, step ("" if none) */
} lk_problem_extra;

/* Frees what an extra owns (not the struct itself) and zeroes it. */
LK_API void lk_problem_extra_free(lk_problem_extra *extra);

/* Writes the problem (either form) and its lambda; extra may be NULL. err receives a message on failure.
 * A regular file is written to a temporary file beside it and renamed, so a failed write leaves no
 * half-written file; other paths (/dev/stdout, pipes) are written in place. */
LK_API lk_status lk_problem_write(const lk_problem *p, const lk_problem_extra *extra, const char *path,
                                  char *err, size_t err_size);
/* Reads a problem file strictly; on any error returns it with "path:line: reason" in err and *out NULL.
 * limits and extra may be NULL. extra is overwritten (zeroed on error). The caller destroys *out and frees
 * extra with lk_problem_extra_free. */
LK_API lk_status lk_problem_read(const char *path, const lk_io_limits *limits, lk_problem **out,
                                 lk_problem_extra *extra, char *err, size_t err_size);
/* The same from a memory buffer; name is used in messages. */
LK_API lk_status lk_problem_read_buffer(const char *data, size_t size, const char *name,
                                        const lk_io_limits *limits, lk_problem **out, lk_problem_extra *extra,
                                        char *err, size_t err_size);
/* Writes dense A, q, effective lo, hi (friction bounds at the current lambda) as plain text for other tools,
 * for problems of at most max_n rows: one line per row i, "A[i][0] .. A[i][n-1] q[i] lo[i] hi[i]", after
 * '#' comment lines (numpy.loadtxt and Octave's load read it as an n x (n+3) matrix). */
LK_API lk_status lk_problem_export_dense(lk_problem *p, int max_n, const char *path, char *err,
                                         size_t err_size);

#ifdef __cplusplus
}
#endif

#endif

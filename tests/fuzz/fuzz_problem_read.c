/* Fuzz target: the strict problem-file reader (lk_problem_read_buffer, docs/problem-format.md).
 *
 * Checked on every input: no crash, leak or undefined behaviour (the sanitizers); an error leaves *out NULL
 * and says where ("name:line: ..."); an accepted file writes and reads back to bitwise the same problem,
 * lambda and extras (the format's promise); and a short solve of an accepted problem with a solver picked
 * from the input's hash keeps the promises of lk_solve (fuzz_util.c). */
#include "fuzz_util.h"
#include "lcpkit/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Small limits keep every execution fast; the limit checks themselves are exercised all the same. */
static lk_io_limits fuzz_limits(void)
{
	lk_io_limits lim = lk_default_io_limits();
	lim.max_rows = 128;
	lim.max_bodies = 64;
	lim.max_nnz = 2048;
	lim.max_bytes = 1 << 18;
	return lim;
}

static int same_double(double a, double b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

static int same_doubles(const double *a, const double *b, int n)
{
	return n <= 0 || memcmp(a, b, (size_t)n * sizeof(double)) == 0;
}

static void compare_rows(const lk_problem *a, const lk_problem *b)
{
	for (int i = 0; i < lk_problem_row_count(a); ++i) {
		lk_row_def x, y;
		if (lk_problem_get_row(a, i, &x) != LK_OK || lk_problem_get_row(b, i, &y) != LK_OK)
			lk_fuzz_fail("get_row failed on a read problem");
		int same = x.body[0] == y.body[0] && x.body[1] == y.body[1] && x.findex == y.findex &&
		           x.kind == y.kind && x.id == y.id && same_doubles(&x.J[0][0], &y.J[0][0], 12) &&
		           same_double(x.c, y.c) && same_double(x.s, y.s) && same_double(x.lo, y.lo) &&
		           same_double(x.hi, y.hi) && same_double(x.mu, y.mu) && same_doubles(x.point, y.point, 3);
		if (!same)
			lk_fuzz_fail("a row changed in the write/read round trip");
	}
	for (int i = 0; i < lk_problem_body_count(a); ++i) {
		const lk_body_def *x = lk_problem_body(a, i), *y = lk_problem_body(b, i);
		if (!x || !y || memcmp(x, y, sizeof *x) != 0)
			lk_fuzz_fail("a body changed in the write/read round trip");
	}
}

static void compare_matrix(const lk_problem *a, const lk_problem *b)
{
	int na, nb;
	const int *rpa, *rpb, *ca, *cb;
	const double *va, *vb, *qa, *qb;
	if (lk_problem_get_matrix(a, &na, &rpa, &ca, &va, &qa) != LK_OK ||
	    lk_problem_get_matrix(b, &nb, &rpb, &cb, &vb, &qb) != LK_OK || na != nb)
		lk_fuzz_fail("get_matrix failed or differs after the round trip");
	if (memcmp(rpa, rpb, ((size_t)na + 1) * sizeof(int)) != 0)
		lk_fuzz_fail("row pointers changed in the round trip");
	int nnz = rpa[na];
	if ((nnz > 0 && memcmp(ca, cb, (size_t)nnz * sizeof(int)) != 0) || !same_doubles(va, vb, nnz) ||
	    !same_doubles(qa, qb, na))
		lk_fuzz_fail("A or q changed in the round trip");
	for (int i = 0; i < na; ++i) {
		double loa, hia, mua, lob, hib, mub;
		int fa, fb;
		lk_row_kind ka, kb;
		lk_problem_get_bounds(a, i, &loa, &hia, &mua, &fa, &ka);
		lk_problem_get_bounds(b, i, &lob, &hib, &mub, &fb, &kb);
		if (!same_double(loa, lob) || !same_double(hia, hib) || !same_double(mua, mub) || fa != fb || ka != kb)
			lk_fuzz_fail("bounds changed in the round trip");
	}
}

/* A per-process file: libFuzzer's -jobs run several processes side by side. */
static const char *round_trip_path(void)
{
	static char path[256];
	if (!path[0]) {
		const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		snprintf(path, sizeof path, "%s/lcpkit-fuzz-%ld.lkp", dir, (long)getpid());
	}
	return path;
}

static void round_trip(const lk_problem *p, const lk_problem_extra *ex)
{
	char err[512];
	const char *path = round_trip_path();
	if (lk_problem_write(p, ex, path, err, sizeof err) != LK_OK)
		lk_fuzz_fail("writing a problem the reader accepted failed");
	lk_problem *q = NULL;
	lk_problem_extra ey;
	lk_io_limits lim = fuzz_limits();
	lim.max_bytes = (int64_t)1 << 24; /* the writer's spelling of a number may be longer than the input's */
	if (lk_problem_read(path, &lim, &q, &ey, err, sizeof err) != LK_OK) {
		fprintf(stderr, "%s\n", err);
		lk_fuzz_fail("the reader refused what the writer wrote");
	}
	unlink(path);
	if (lk_problem_form(p) != lk_problem_form(q) || lk_problem_row_count(p) != lk_problem_row_count(q) ||
	    lk_problem_body_count(p) != lk_problem_body_count(q))
		lk_fuzz_fail("form or sizes changed in the round trip");
	if (lk_problem_form(p) == LK_FORM_ROWS)
		compare_rows(p, q);
	else
		compare_matrix(p, q);
	int n = lk_problem_row_count(p);
	if (!same_doubles(lk_problem_lambda(p), lk_problem_lambda(q), n))
		lk_fuzz_fail("lambda changed in the round trip");
	if (ex->has_solution != ey.has_solution || (ex->has_solution && !same_doubles(ex->solution, ey.solution, n)) ||
	    !same_double(ex->h, ey.h) || strcmp(ex->source, ey.source) != 0)
		lk_fuzz_fail("the extras changed in the round trip");
	lk_problem_extra_free(&ey);
	lk_problem_destroy(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lk_io_limits lim = fuzz_limits();
	lk_problem *p = (lk_problem *)1; /* the reader must set it, also on error */
	lk_problem_extra ex;
	char err[512];
	lk_status st = lk_problem_read_buffer((const char *)data, size, "fuzz", &lim, &p, &ex, err, sizeof err);
	if (st != LK_OK) {
		if (p != NULL)
			lk_fuzz_fail("a failed read left *out set");
		if (strncmp(err, "fuzz", 4) != 0)
			lk_fuzz_fail("a failed read gave no located message");
		if (ex.solution || ex.has_solution)
			lk_fuzz_fail("a failed read left extras");
		return 0;
	}
	if (!p)
		lk_fuzz_fail("a successful read returned no problem");
	if (lk_problem_validate(p) != LK_OK) {
		/* the reader checks findex itself; what it accepts must validate */
		fprintf(stderr, "%s\n", lk_problem_error(p));
		lk_fuzz_fail("an accepted problem does not validate");
	}
	round_trip(p, &ex);
	lk_fuzz_solve_check(p, lk_fuzz_hash(data, size));
	lk_problem_extra_free(&ex);
	lk_problem_destroy(p);
	return 0;
}

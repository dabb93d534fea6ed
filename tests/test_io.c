/* Problem files: bit-exact round trips of both forms, the strict reader against a table of malformed inputs,
 * the size limits, I/O errors, the malformed corpus in tests/data/bad and the dense export. */
#include "test_util.h"

#include "lcpkit/generate.h"
#include "lcpkit/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[256];

static int setup_dir(void **state)
{
	(void)state;
	const char *base = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/lk_test_io_XXXXXX", base && *base ? base : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	(void)state;
	return rmdir(tmpdir); /* fails (and so flags a test) if a test left a file behind */
}

static const char *tmp_path(const char *name)
{
	static char buf[512];
	snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
	return buf;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap + 1);
	assert_non_null(b);
	size_t got;
	while ((got = fread(b + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			cap *= 2;
			b = realloc(b, cap + 1);
			assert_non_null(b);
		}
	}
	fclose(f);
	b[n] = '\0';
	*len = n;
	return b;
}

/* ------------------------------------------------------------------------------------- bitwise checks */

/* Any finite double, drawn from all bit patterns: subnormals, -0, huge and tiny exponents. */
static double random_bits_double(lk__rng *s)
{
	for (;;) {
		uint64_t b = lk__rng_next(s);
		double d;
		memcpy(&d, &b, sizeof d);
		if (isfinite(d))
			return d;
	}
}

static void assert_same_bits(const double *a, const double *b, int n, const char *what)
{
	for (int i = 0; i < n; ++i)
		if (memcmp(&a[i], &b[i], sizeof(double)) != 0)
			fail_msg("%s[%d]: %.17g != %.17g (bits differ)", what, i, a[i], b[i]);
}

static void assert_same_rows_problem(const lk_problem *a, const lk_problem *b)
{
	assert_int_equal(lk_problem_form(b), LK_FORM_ROWS);
	assert_int_equal(lk_problem_body_count(a), lk_problem_body_count(b));
	assert_int_equal(lk_problem_row_count(a), lk_problem_row_count(b));
	for (int i = 0; i < lk_problem_body_count(a); ++i) {
		const lk_body_def *x = lk_problem_body(a, i), *y = lk_problem_body(b, i);
		assert_same_bits(x->u, y->u, 6, "u");
		assert_same_bits(x->inv_mass, y->inv_mass, 3, "inv_mass");
		assert_same_bits(x->inv_inertia, y->inv_inertia, 9, "inv_inertia");
	}
	for (int i = 0; i < lk_problem_row_count(a); ++i) {
		lk_row_def x, y;
		assert_int_equal(lk_problem_get_row(a, i, &x), LK_OK);
		assert_int_equal(lk_problem_get_row(b, i, &y), LK_OK);
		assert_int_equal(x.body[0], y.body[0]);
		assert_int_equal(x.body[1], y.body[1]);
		assert_same_bits(&x.J[0][0], &y.J[0][0], 12, "J");
		assert_same_bits(&x.c, &y.c, 1, "c");
		assert_same_bits(&x.s, &y.s, 1, "s");
		assert_same_bits(&x.lo, &y.lo, 1, "lo");
		assert_same_bits(&x.hi, &y.hi, 1, "hi");
		assert_same_bits(&x.mu, &y.mu, 1, "mu");
		assert_int_equal(x.findex, y.findex);
		assert_int_equal(x.kind, y.kind);
		assert_true(x.id == y.id);
		assert_same_bits(x.point, y.point, 3, "point");
	}
	assert_same_bits(lk_problem_lambda(a), lk_problem_lambda(b), lk_problem_row_count(a), "lambda");
}

static void assert_same_matrix_problem(const lk_problem *a, const lk_problem *b)
{
	int na, nb;
	const int *rpa, *rpb, *ca, *cb;
	const double *va, *vb, *qa, *qb;
	assert_int_equal(lk_problem_get_matrix(a, &na, &rpa, &ca, &va, &qa), LK_OK);
	assert_int_equal(lk_problem_get_matrix(b, &nb, &rpb, &cb, &vb, &qb), LK_OK);
	assert_int_equal(na, nb);
	assert_memory_equal(rpa, rpb, ((size_t)na + 1) * sizeof(int));
	int nnz = rpa[na];
	if (nnz > 0)
		assert_memory_equal(ca, cb, (size_t)nnz * sizeof(int));
	assert_same_bits(va, vb, nnz, "A");
	assert_same_bits(qa, qb, na, "q");
	for (int i = 0; i < na; ++i) {
		double la, ha, ma, lb, hb, mb;
		int fa, fb;
		lk_row_kind ka, kb;
		assert_int_equal(lk_problem_get_bounds(a, i, &la, &ha, &ma, &fa, &ka), LK_OK);
		assert_int_equal(lk_problem_get_bounds(b, i, &lb, &hb, &mb, &fb, &kb), LK_OK);
		assert_same_bits(&la, &lb, 1, "lo");
		assert_same_bits(&ha, &hb, 1, "hi");
		assert_same_bits(&ma, &mb, 1, "mu");
		assert_int_equal(fa, fb);
		assert_int_equal(ka, kb);
	}
	assert_same_bits(lk_problem_lambda(a), lk_problem_lambda(b), na, "lambda");
}

/* Writes p, reads it back, compares, writes the copy and checks that both files are byte-identical. */
static void round_trip(lk_problem *p, const lk_problem_extra *extra, const char *file)
{
	char err[512];
	char path[512], path2[600];
	snprintf(path, sizeof path, "%s", tmp_path(file));
	snprintf(path2, sizeof path2, "%s.again", path);
	assert_int_equal(lk_problem_write(p, extra, path, err, sizeof err), LK_OK);

	lk_problem *q = NULL;
	lk_problem_extra ex;
	lk_status st = lk_problem_read(path, NULL, &q, &ex, err, sizeof err);
	if (st != LK_OK)
		fail_msg("reading back %s: %s", path, err);
	assert_non_null(q);
	if (lk_problem_form(p) == LK_FORM_ROWS)
		assert_same_rows_problem(p, q);
	else
		assert_same_matrix_problem(p, q);
	if (extra) {
		assert_same_bits(&extra->h, &ex.h, 1, "h");
		assert_string_equal(extra->source, ex.source);
		assert_int_equal(ex.has_solution, extra->has_solution);
		if (extra->has_solution)
			assert_same_bits(extra->solution, ex.solution, lk_problem_row_count(p), "solution");
		else
			assert_null(ex.solution);
	} else {
		assert_true(ex.h == 0.0 && ex.source[0] == '\0' && !ex.has_solution && !ex.solution);
	}

	assert_int_equal(lk_problem_write(q, extra ? &ex : NULL, path2, err, sizeof err), LK_OK);
	size_t l1, l2;
	char *b1 = slurp(path, &l1), *b2 = slurp(path2, &l2);
	assert_int_equal(l1, l2);
	assert_memory_equal(b1, b2, l1);
	free(b1);
	free(b2);
	lk_problem_extra_free(&ex);
	assert_null(ex.solution);
	lk_problem_destroy(q);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(path2), 0);
}

static void fill_random_lambda(lk_problem *p, uint64_t seed)
{
	int n = lk_problem_row_count(p);
	double *l = malloc(((size_t)n + 1) * sizeof(double));
	assert_non_null(l);
	lk__rng s = {seed};
	for (int i = 0; i < n; ++i)
		l[i] = random_bits_double(&s);
	if (n > 2) {
		l[0] = -0.0;
		l[1] = 4.9406564584124654e-324; /* the smallest subnormal */
		l[2] = 1.7976931348623157e308;
	}
	assert_int_equal(lk_problem_set_lambda(p, l, n), LK_OK);
	free(l);
}

static void test_roundtrip_rows(void **state)
{
	(void)state;
	lk_gen_params g = lk_default_gen_params(LK_GEN_BOXSTACK);
	g.n = 4;
	g.mu = 0.6;
	lk_problem *p = NULL;
	char err[256];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	int nb = lk_problem_row_count(p);
	int friction = 0;
	for (int i = 0; i < nb; ++i) {
		int f;
		lk_problem_get_bounds(p, i, NULL, NULL, NULL, &f, NULL);
		friction += f >= 0;
	}
	assert_true(friction > 0);

	/* rows that exercise every field: infinite bounds both ways, odd bits, the largest id */
	lk__rng s = {7};
	lk_row_def d = lk_default_row_def();
	d.body[0] = 1;
	d.body[1] = 0;
	for (int k = 0; k < 12; ++k)
		d.J[k / 6][k % 6] = (k - 5.5) / 3.0;
	d.J[1][5] = -0.0;
	d.c = 0.1;
	d.s = 1e-300;
	d.kind = LK_ROW_JOINT;
	d.id = UINT64_MAX;
	d.point[0] = 1.0 / 3.0;
	d.point[1] = -2.5e-310;
	d.point[2] = 12345.678;
	assert_int_equal(lk_problem_add_row(p, &d, NULL), LK_OK); /* lo = -inf, hi = inf */
	d.kind = LK_ROW_LIMIT;
	d.lo = -1.5;
	d.hi = INFINITY;
	d.id = 0;
	assert_int_equal(lk_problem_add_row(p, &d, NULL), LK_OK);
	d.kind = LK_ROW_MOTOR;
	d.lo = -INFINITY;
	d.hi = 2.0;
	d.body[1] = LK_STATIC;
	assert_int_equal(lk_problem_add_row(p, &d, NULL), LK_OK);
	fill_random_lambda(p, 11);

	round_trip(p, NULL, "rows.lcp");

	int n = lk_problem_row_count(p);
	lk_problem_extra extra;
	memset(&extra, 0, sizeof extra);
	extra.h = 1.0 / 60.0;
	snprintf(extra.source, sizeof extra.source, "boxstack n=4 mu=0.6  \ttrailing blanks kept  ");
	round_trip(p, &extra, "rows_extra.lcp");

	extra.solution = malloc((size_t)n * sizeof(double));
	assert_non_null(extra.solution);
	for (int i = 0; i < n; ++i)
		extra.solution[i] = random_bits_double(&s);
	extra.has_solution = 1;
	round_trip(p, &extra, "rows_solution.lcp");
	lk_problem_extra_free(&extra);
	lk_problem_destroy(p);
}

static void test_roundtrip_matrix(void **state)
{
	(void)state;
	lk_gen_params g = lk_default_gen_params(LK_GEN_FLUID);
	g.n = 100;
	lk_problem *p = NULL;
	char err[256];
	assert_int_equal(lk_generate(&g, &p, err, sizeof err), LK_OK);
	assert_int_equal(lk_problem_form(p), LK_FORM_MATRIX);
	fill_random_lambda(p, 3);
	round_trip(p, NULL, "fluid.lcp");
	lk_problem_extra extra;
	memset(&extra, 0, sizeof extra);
	extra.h = 0.01;
	snprintf(extra.source, sizeof extra.source, "fluid 10x10");
	int n = lk_problem_row_count(p);
	extra.solution = calloc((size_t)n, sizeof(double));
	assert_non_null(extra.solution);
	extra.has_solution = 1;
	extra.solution[n - 1] = -1e-320;
	round_trip(p, &extra, "fluid_solution.lcp");
	lk_problem_extra_free(&extra);
	lk_problem_destroy(p);

	/* boxed rows with infinite bounds on both sides, a friction row and an empty matrix row */
	p = lk_problem_create(LK_FORM_MATRIX);
	int rp[5] = {0, 2, 3, 3, 5}, col[5] = {1, 0, 1, 3, 0};
	double val[5] = {-0.5, 2.0, 3.0, 1.0 / 7.0, 1e-310};
	double q[4] = {-1, 0.25, 0, -3}, lo[4] = {-INFINITY, 0, -1, -2}, hi[4] = {INFINITY, INFINITY, 1, 5};
	double mu[4] = {0, 0, 0.3, 0};
	int findex[4] = {-1, -1, 1, -1};
	assert_int_equal(lk_problem_set_matrix(p, 4, rp, col, val, q, lo, hi, mu, findex), LK_OK);
	fill_random_lambda(p, 5);
	round_trip(p, NULL, "boxed.lcp");
	lk_problem_destroy(p);

	/* the empty problem */
	p = lk_problem_create(LK_FORM_MATRIX);
	int rp0[1] = {0};
	assert_int_equal(lk_problem_set_matrix(p, 0, rp0, NULL, NULL, q, NULL, NULL, NULL, NULL), LK_OK);
	round_trip(p, NULL, "empty.lcp");
	lk_problem_destroy(p);
}

/* --------------------------------------------------------------------------------- malformed inputs */

/* A valid row-form file; line numbers: 1 magic, 2 form, 3 bodies, 4-5 bodies, 6 rows, 7-9 rows,
 * 10 lambda, 11-13 values, 14 end. */
#define MAGIC "lcpkit-problem 1\n"
#define FORM "form rows\n"
#define BODIES "bodies 2\n"
#define B0 "0  0 0 -0.1 0 0 0  1 1 1  1 0 0 0 1 0 0 0 1\n"
#define B1 "1  0 0 -0.2 0 0 0  0.5 0.5 0.5  2 0 0 0 2 0 0 0 2\n"
#define ROWS "rows 3\n"
#define R0 "0 normal 0 -1 7 -1 0 0 inf 0.01 0  0 0 1 0 0 0  0 0 0 0 0 0  0 0 0\n"
#define R1 "1 friction 0 -1 8 0 0.5 -inf inf 0 0  1 0 0 0 0 0  0 0 0 0 0 0  0 0 0\n"
#define R2 "2 joint 0 1 9 -1 0 -1 1 0 0.001  0 1 0 0 0 0  0 -1 0 0 0 0  0.5 0 0\n"
#define LAMBDA "lambda 3\n0.5\n0\n0\n"
#define END "end\n"
#define GOOD MAGIC FORM BODIES B0 B1 ROWS R0 R1 R2 LAMBDA END
#define HEAD MAGIC FORM BODIES B0 B1 ROWS

/* A valid matrix-form file; lines: 1 magic, 2 form, 3 rows, 4-6 rows, 7 entries, 8-12 entries, 13 lambda,
 * 14-16 values, 17 end. */
#define MFORM "form matrix\n"
#define M0 "0 -1 0 inf 0 -1\n"
#define M1 "1 0.5 -inf inf 0.3 0\n"
#define M2 "2 1 -2 3 0 -1\n"
#define MROWS "rows 3\n" M0 M1 M2
#define E0 "0 0 2\n"
#define E1 "0 1 -1\n"
#define E2 "1 1 2\n"
#define E3 "2 0 0.5\n"
#define E4 "2 2 1\n"
#define ENTRIES "entries 5\n"
#define MLAMBDA "lambda 3\n1\n0\n0\n"
#define MGOOD MAGIC MFORM MROWS ENTRIES E0 E1 E2 E3 E4 MLAMBDA END

#define X10 "xxxxxxxxxx"

typedef struct bad_case {
	const char *data;
	size_t len;
	lk_status status;
	const char *message; /* expected substring, with "t:LINE:" */
} bad_case;

#define CASE(str, st, msg) {str, sizeof(str) - 1, st, msg}

static const bad_case bad_cases[] = {
	CASE("", LK_ERR_PARSE, "t:1: empty file"),
	CASE("lcpkit-problen 1\n" FORM, LK_ERR_PARSE, "t:1: not an lcpkit problem file"),
	CASE("\xef\xbb\xbf" GOOD, LK_ERR_PARSE, "t:1: not an lcpkit problem file"),
	CASE("lcpkit-problem 2\n" FORM BODIES, LK_ERR_PARSE, "t:1: format version 2 is not supported"),
	CASE("lcpkit-problem one\n", LK_ERR_PARSE, "t:1: format version 'one' is not a number"),
	CASE("lcpkit-problem 1 x\n", LK_ERR_PARSE, "t:1: lcpkit-problem: unexpected field 'x' after 2 fields"),
	CASE("\x7f" "ELF\x02\x01\x01", LK_ERR_PARSE, "t:1: control character 0x7f in column 1"),
	CASE(MAGIC FORM "bod\0ies 2\n", LK_ERR_PARSE, "t:3: NUL byte in column 4"),
	CASE(MAGIC "form rows\x01\n", LK_ERR_PARSE, "t:2: control character 0x01 in column 10"),
	CASE(HEAD R0 R1 R2 LAMBDA, LK_ERR_PARSE, "t:14: unexpected end of file (missing 'end')"),
	CASE(HEAD R0 R1 "2 joint 0 1", LK_ERR_PARSE, "t:6: rows: 3 lines declared but only"),
	CASE(HEAD R0 R1 R2 "lambda 3\n0.5\n0\n", LK_ERR_PARSE,
	     "t:13: unexpected end of file: section 'lambda' declares 3 lines, found 2"),
	CASE(MAGIC FORM ROWS R0, LK_ERR_PARSE, "t:3: missing section 'bodies' before 'rows'"),
	CASE(MAGIC BODIES B0 B1, LK_ERR_PARSE, "t:2: missing section 'form' before 'bodies'"),
	CASE(MAGIC "h 0.01\nh 0.02\n" FORM, LK_ERR_PARSE, "t:3: duplicate section 'h' (first on line 2)"),
	CASE(MAGIC FORM "h 0.01\n", LK_ERR_PARSE, "t:3: section 'h' must come before 'form' (line 2)"),
	CASE(MAGIC FORM BODIES B0 B1 ROWS R0 R1 R2 "bodies 0\n", LK_ERR_PARSE, "t:10: duplicate section 'bodies'"),
	CASE(MAGIC FORM "bodies 3\n" B0 B1 ROWS R0 R1 R2 LAMBDA END, LK_ERR_PARSE,
	     "t:6: section 'bodies' declares 3 lines, found 2 before 'rows'"),
	CASE(MAGIC FORM "bodies 1\n" B0 B1 ROWS, LK_ERR_PARSE, "t:5: expected a section name, found the number '1'"),
	CASE(HEAD R0 R1 R2 "lambda 2\n0.5\n0\n" END, LK_ERR_PARSE, "t:10: lambda: 2 values for 3 rows"),
	CASE(HEAD R0 R1 R2 END, LK_ERR_PARSE, "t:10: missing section 'lambda' before 'end'"),
	CASE(GOOD "junk\n", LK_ERR_PARSE, "t:15: unexpected content after 'end' (line 14)"),
	CASE(HEAD R0 R1 R2 LAMBDA "end now\n", LK_ERR_PARSE, "t:14: end: unexpected field 'now' after 1 fields"),
	CASE(HEAD "0 normal 0 -1 7 -1 0 0 inf 0.01 0  0 0 1 0 0 0  0 0 0 0 0 0  0 0 0 5\n" R1 R2 LAMBDA END,
	     LK_ERR_PARSE, "t:7: row 0: unexpected field '5' after 26 fields"),
	CASE(MAGIC FORM BODIES B0 "1  0 0 -0.2 0 0 0  0.5 0.5 0.5  2 0 0 0 2 0 0 0\n" ROWS R0 R1 R2 LAMBDA END,
	     LK_ERR_PARSE, "t:5: body 1: expected 19 fields, found 18"),
	CASE(MAGIC FORM BODIES "0  0 0 nan 0 0 0  1 1 1  1 0 0 0 1 0 0 0 1\n" B1 ROWS R0 R1 R2 LAMBDA END,
	     LK_ERR_NONFINITE, "t:4: body 0: u[2]: NaN is not allowed"),
	CASE(MAGIC FORM BODIES B0 "1  0 0 -0.2 0 0 0  -0.5 0.5 0.5  2 0 0 0 2 0 0 0 2\n" ROWS R0 R1 R2 LAMBDA END,
	     LK_ERR_MASS, "t:5: body 1: negative inverse mass -0.5"),
	CASE(HEAD R0 R1 "2 joint 0 1 9 -1 0 -1 1 0 0.001  0 inf 0 0 0 0  0 -1 0 0 0 0  0.5 0 0\n" LAMBDA END,
	     LK_ERR_NONFINITE, "t:9: row 2: J0[1]: 'inf' is not finite"),
	CASE(HEAD R0 R1 "2 joint 0 1 9 -1 0 -1 -inf 0 0.001  0 1 0 0 0 0  0 -1 0 0 0 0  0.5 0 0\n" LAMBDA END,
	     LK_ERR_NONFINITE, "t:9: row 2: bounds [-1, -inf] are not valid"),
	CASE(HEAD "0 contact 0 -1 7 -1 0 0 inf 0.01 0  0 0 1 0 0 0  0 0 0 0 0 0  0 0 0\n" R1 R2 LAMBDA END,
	     LK_ERR_PARSE, "t:7: row 0: unknown row kind 'contact'"),
	CASE(HEAD R0 R1 "2 joint 0 5 9 -1 0 -1 1 0 0.001  0 1 0 0 0 0  0 -1 0 0 0 0  0.5 0 0\n" LAMBDA END,
	     LK_ERR_OUT_OF_RANGE, "t:9: row 2: body 5 is out of range (2 bodies)"),
	CASE(HEAD R0 R1 "2 joint -1 -1 9 -1 0 -1 1 0 0.001  0 1 0 0 0 0  0 -1 0 0 0 0  0.5 0 0\n" LAMBDA END,
	     LK_ERR_INVALID_ARGUMENT, "t:9: row 2: both bodies are the static world"),
	CASE(HEAD R0 "1 friction 0 -1 8 1 0.5 -inf inf 0 0  1 0 0 0 0 0  0 0 0 0 0 0  0 0 0\n" R2 LAMBDA END,
	     LK_ERR_FINDEX, "t:8: row 1: friction index points at itself"),
	CASE(HEAD R0 "1 friction 0 -1 8 3 0.5 -inf inf 0 0  1 0 0 0 0 0  0 0 0 0 0 0  0 0 0\n" R2 LAMBDA END,
	     LK_ERR_FINDEX, "t:8: row 1: friction index 3 is out of range (3 rows)"),
	CASE(HEAD R0 R1 "2 friction 0 1 9 1 0.5 -1 1 0 0.001  0 1 0 0 0 0  0 -1 0 0 0 0  0.5 0 0\n" LAMBDA END,
	     LK_ERR_FINDEX, "t:9: row 2: friction index 1 points at another friction row"),
	CASE(HEAD R0 R1 "2 joint 0 1 9 -1 0 1 -1 0 0.001  0 1 0 0 0 0  0 -1 0 0 0 0  0.5 0 0\n" LAMBDA END,
	     LK_ERR_BOUNDS, "t:9: row 2: lo 1 > hi -1"),
	CASE(HEAD R0 "5 friction 0 -1 8 0 0.5 -inf inf 0 0  1 0 0 0 0 0  0 0 0 0 0 0  0 0 0\n" R2 LAMBDA END,
	     LK_ERR_PARSE, "t:8: row line has index 5, expected 1"),
	CASE(HEAD "0 normal 0 -1 7 -1 0 0 inf abc 0  0 0 1 0 0 0  0 0 0 0 0 0  0 0 0\n" R1 R2 LAMBDA END,
	     LK_ERR_PARSE, "t:7: row 0: c: expected a number, found 'abc'"),
	CASE(HEAD "0 normal 0 -1 -7 -1 0 0 inf 0.01 0  0 0 1 0 0 0  0 0 0 0 0 0  0 0 0\n" R1 R2 LAMBDA END,
	     LK_ERR_PARSE, "t:7: row 0: id: expected an unsigned integer, found '-7'"),
	CASE(HEAD "0 normal 0 -1 18446744073709551616 -1 0 0 inf 0 0  0 0 1 0 0 0  0 0 0 0 0 0  0 0 0\n" R1 R2
	          LAMBDA END,
	     LK_ERR_PARSE, "t:7: row 0: id: 18446744073709551616 does not fit 64 bits"),
	CASE(HEAD "0 normal 0 4294967296 7 -1 0 0 inf 0.01 0  0 0 1 0 0 0  0 0 0 0 0 0  0 0 0\n" R1 R2 LAMBDA END,
	     LK_ERR_OUT_OF_RANGE, "t:7: row 0: body1: 4294967296 is out of range"),
	CASE(MAGIC "h 1e999\n" FORM, LK_ERR_PARSE, "t:2: h: '1e999' is out of the range of a double"),
	CASE(MAGIC "h 0x1p3\n" FORM, LK_ERR_PARSE, "t:2: h: expected a number, found '0x1p3'"),
	CASE(MAGIC "h -1\n" FORM, LK_ERR_PARSE, "t:2: h: the time step -1 is negative"),
	CASE(MAGIC "h inf\n" FORM, LK_ERR_NONFINITE, "t:2: h: 'inf' is not finite"),
	CASE(MAGIC "source " X10 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10 "\n", LK_ERR_PARSE,
	     "t:2: source text is 130 bytes long (at most 127)"),
	CASE(MAGIC FORM "bodies -1\n", LK_ERR_PARSE, "t:3: bodies: negative count -1"),
	CASE(MAGIC FORM "bodies 99999999999999999999999\n", LK_ERR_LIMIT,
	     "t:3: bodies: count 99999999999999999999999 exceeds the limit"),
	CASE(MAGIC FORM "bodies two\n", LK_ERR_PARSE, "t:3: bodies: expected a count, found 'two'"),
	CASE(MAGIC "foo 3\n", LK_ERR_PARSE, "t:2: unknown section 'foo'"),
	CASE(MAGIC "form sparse\n", LK_ERR_PARSE, "t:2: unknown form 'sparse' (expected rows or matrix)"),
	CASE(HEAD R0 R1 R2 "lambda 3\nnan\n0\n0\n" END, LK_ERR_NONFINITE, "t:11: lambda 0: value: NaN is not allowed"),
	CASE(HEAD R0 R1 R2 LAMBDA "solution 2\n1\n2\n" END, LK_ERR_PARSE, "t:14: solution: 2 values for 3 rows"),
	CASE(HEAD R0 R1 R2 LAMBDA "entries 0\n" END, LK_ERR_PARSE,
	     "t:14: section 'entries' must come before 'lambda' (line 10)"),
	CASE(HEAD R0 R1 R2 "entries 0\n" LAMBDA END, LK_ERR_PARSE,
	     "t:10: section 'entries' is not allowed in the row form"),
	/* the matrix form */
	CASE(MAGIC MFORM BODIES, LK_ERR_PARSE, "t:3: section 'bodies' is not allowed in the matrix form"),
	CASE(MAGIC MFORM MROWS MLAMBDA END, LK_ERR_PARSE, "t:7: missing section 'entries' before 'lambda'"),
	CASE(MAGIC MFORM MROWS ENTRIES E0 E1 "1 3 2\n" E3 E4 MLAMBDA END, LK_ERR_OUT_OF_RANGE,
	     "t:10: entry 2: (1, 3) is outside the 3 x 3 matrix"),
	CASE(MAGIC MFORM MROWS ENTRIES E0 "0 0 5\n" E2 E3 E4 MLAMBDA END, LK_ERR_PARSE,
	     "t:9: entry 1: A(0, 0) appears twice"),
	CASE(MAGIC MFORM MROWS ENTRIES E0 E1 E3 E2 E4 MLAMBDA END, LK_ERR_PARSE,
	     "t:11: entry 3: row 1 after row 2 (entries must be sorted by row)"),
	CASE(MAGIC MFORM MROWS ENTRIES "0 0 inf\n" E1 E2 E3 E4 MLAMBDA END, LK_ERR_NONFINITE,
	     "t:8: entry 0: value: 'inf' is not finite"),
	CASE(MAGIC MFORM "rows 3\n" M0 "1 0.5 -inf inf -0.3 0\n" M2 ENTRIES E0 E1 E2 E3 E4 MLAMBDA END, LK_ERR_BOUNDS,
	     "t:5: row 1: negative friction coefficient -0.3"),
	CASE(MAGIC MFORM "rows 3\n" M0 M1 "2 1 3 -2 0 -1\n" ENTRIES E0 E1 E2 E3 E4 MLAMBDA END, LK_ERR_BOUNDS,
	     "t:6: row 2: lo 3 > hi -2"),
	CASE(MAGIC MFORM "rows 3\n" M0 M1 "2 1 -2 3 0.1 1\n" ENTRIES E0 E1 E2 E3 E4 MLAMBDA END, LK_ERR_FINDEX,
	     "t:6: row 2: friction index 1 points at another friction row"),
	CASE(MAGIC MFORM "rows 3\n" "0 -1 inf inf 0 -1\n" M1 M2 ENTRIES E0 E1 E2 E3 E4 MLAMBDA END, LK_ERR_NONFINITE,
	     "t:4: row 0: bounds [inf, inf] are not valid"),
	CASE(MAGIC MFORM "rows 3\n" M0 M1 "2 1 -2 3 0 -2\n" ENTRIES, LK_ERR_FINDEX,
	     "t:6: row 2: friction index -2 is out of range (3 rows)"),
	CASE(MAGIC MFORM MROWS "entries 5\n" E0 E1 E2 E3 MLAMBDA END, LK_ERR_PARSE,
	     "t:12: section 'entries' declares 5 lines, found 4 before 'lambda'"),
};

static void check_bad(const char *data, size_t len, lk_status want, const char *msg, int index)
{
	char err[512];
	lk_problem *p = (lk_problem *)&err; /* must be reset to NULL */
	lk_problem_extra ex;
	memset(&ex, 0x55, sizeof ex); /* must be zeroed */
	lk_status st = lk_problem_read_buffer(data, len, "t", NULL, &p, &ex, err, sizeof err);
	if (st != want || !strstr(err, msg))
		fail_msg("case %d: status %s, message \"%s\"; expected %s with \"%s\"", index, lk_status_string(st),
		         err, lk_status_string(want), msg);
	assert_null(p);
	assert_null(ex.solution);
	assert_int_equal(ex.has_solution, 0);
	assert_true(ex.h == 0.0 && ex.source[0] == '\0');
}

static void test_malformed_table(void **state)
{
	(void)state;
	int n = (int)(sizeof bad_cases / sizeof bad_cases[0]);
	assert_true(n >= 25);
	for (int i = 0; i < n; ++i)
		check_bad(bad_cases[i].data, bad_cases[i].len, bad_cases[i].status, bad_cases[i].message, i);
}

static lk_problem *read_ok(const char *data, size_t len, lk_problem_extra *ex)
{
	char err[512];
	lk_problem *p = NULL;
	lk_status st = lk_problem_read_buffer(data, len, "t", NULL, &p, ex, err, sizeof err);
	if (st != LK_OK)
		fail_msg("expected a valid file: %s", err);
	assert_non_null(p);
	return p;
}

/* The base files are valid, and what people write by hand is accepted with the same meaning. */
static void test_valid_variants(void **state)
{
	(void)state;
	lk_problem_extra ex;
	lk_problem *p = read_ok(GOOD, sizeof GOOD - 1, &ex);
	assert_int_equal(lk_problem_body_count(p), 2);
	assert_int_equal(lk_problem_row_count(p), 3);
	lk_row_def d;
	assert_int_equal(lk_problem_get_row(p, 1, &d), LK_OK);
	assert_int_equal(d.kind, LK_ROW_FRICTION);
	assert_int_equal(d.findex, 0);
	assert_true(d.mu == 0.5 && d.lo == -INFINITY && d.hi == INFINITY && d.id == 8);
	assert_int_equal(lk_problem_get_row(p, 2, &d), LK_OK);
	assert_true(d.body[1] == 1 && d.J[1][1] == -1 && d.s == 0.001 && d.point[0] == 0.5);
	assert_true(lk_problem_lambda(p)[0] == 0.5);
	assert_true(lk_problem_body(p, 1)->inv_inertia[8] == 2.0);
	/* the rows read through the validating functions: q = J u* - c */
	double q[3];
	assert_int_equal(lk_problem_assemble_dense(p, 3, NULL, q), LK_OK);
	assert_true(q[0] == -0.1 - 0.01);
	assert_true(ex.h == 0 && !ex.has_solution && ex.source[0] == '\0');
	lk_problem_destroy(p);

	p = read_ok(MGOOD, sizeof MGOOD - 1, NULL);
	double A[9];
	assert_int_equal(lk_problem_assemble_dense(p, 3, A, q), LK_OK);
	assert_true(A[0] == 2 && A[1] == -1 && A[4] == 2 && A[6] == 0.5 && A[8] == 1 && A[2] == 0);
	assert_true(q[0] == -1 && q[1] == 0.5 && q[2] == 1);
	lk_problem_destroy(p);

	/* CRLF line ends, comments, blank lines, indentation, no final newline, "Infinity", a leading + */
	static const char crlf[] = "lcpkit-problem 1\r\n# a comment\r\n\r\n  source  two  spaces \r\nh +0.5\r\n"
	                           "form matrix\r\n\t rows 1\r\n# q lo hi mu findex\r\n0 -2 -Infinity +INF 0 -1\r\n"
	                           "entries 1\r\n0 0 .5e1\r\nlambda 1\r\n3.\r\nsolution 1\r\n1e-400\r\nend";
	p = read_ok(crlf, sizeof crlf - 1, &ex);
	double lo, hi;
	assert_int_equal(lk_problem_get_bounds(p, 0, &lo, &hi, NULL, NULL, NULL), LK_OK);
	assert_true(lo == -INFINITY && hi == INFINITY);
	assert_int_equal(lk_problem_assemble_dense(p, 1, A, q), LK_OK);
	assert_true(A[0] == 5.0 && q[0] == -2.0 && lk_problem_lambda(p)[0] == 3.0);
	assert_true(ex.h == 0.5);
	assert_string_equal(ex.source, " two  spaces ");
	assert_true(ex.has_solution && ex.solution[0] == 0.0); /* an underflow reads as zero */
	lk_problem_extra_free(&ex);
	lk_problem_destroy(p);

	/* an empty source line is an empty source */
	static const char empty_src[] = MAGIC "source\n" MFORM "rows 0\nentries 0\nlambda 0\nend\n";
	p = read_ok(empty_src, sizeof empty_src - 1, &ex);
	assert_int_equal(lk_problem_row_count(p), 0);
	assert_string_equal(ex.source, "");
	lk_problem_destroy(p);
}

/* --------------------------------------------------------------------------------------------- limits */

static void test_limits(void **state)
{
	(void)state;
	char err[512];
	lk_problem *p = NULL;
	static const char huge[] = MAGIC FORM "bodies 1\n" B0 "rows 2147483648\n";
	assert_int_equal(lk_problem_read_buffer(huge, sizeof huge - 1, "t", NULL, &p, NULL, err, sizeof err),
	                 LK_ERR_LIMIT);
	assert_non_null(strstr(err, "t:5: rows: count 2147483648 exceeds the limit"));
	assert_null(p);

	/* a count within the limits but beyond what the bytes left can hold is refused before allocating */
	lk_io_limits big = lk_default_io_limits();
	big.max_rows = 2000000000;
	static const char claim[] = MAGIC MFORM "rows 1500000000\n0 1 0 inf 0 -1\n";
	assert_int_equal(lk_problem_read_buffer(claim, sizeof claim - 1, "t", &big, &p, NULL, err, sizeof err),
	                 LK_ERR_PARSE);
	assert_non_null(strstr(err, "t:3: rows: 1500000000 lines declared but only 15 bytes follow"));

	lk_io_limits lim = lk_default_io_limits();
	lim.max_bodies = 1;
	assert_int_equal(lk_problem_read_buffer(GOOD, sizeof GOOD - 1, "t", &lim, &p, NULL, err, sizeof err),
	                 LK_ERR_LIMIT);
	assert_non_null(strstr(err, "t:3: bodies: count 2 exceeds the limit 1"));
	lim = lk_default_io_limits();
	lim.max_rows = 2;
	assert_int_equal(lk_problem_read_buffer(GOOD, sizeof GOOD - 1, "t", &lim, &p, NULL, err, sizeof err),
	                 LK_ERR_LIMIT);
	assert_non_null(strstr(err, "t:6: rows: count 3 exceeds the limit 2"));
	lim = lk_default_io_limits();
	lim.max_nnz = 4;
	assert_int_equal(lk_problem_read_buffer(MGOOD, sizeof MGOOD - 1, "t", &lim, &p, NULL, err, sizeof err),
	                 LK_ERR_LIMIT);
	assert_non_null(strstr(err, "t:7: entries: count 5 exceeds the limit 4"));
	lim = lk_default_io_limits();
	lim.max_bytes = 100;
	assert_int_equal(lk_problem_read_buffer(GOOD, sizeof GOOD - 1, "t", &lim, &p, NULL, err, sizeof err),
	                 LK_ERR_LIMIT);
	assert_non_null(strstr(err, "exceed the limit of 100 bytes"));
	lim.max_bytes = -1;
	assert_int_equal(lk_problem_read_buffer(GOOD, sizeof GOOD - 1, "t", &lim, &p, NULL, err, sizeof err),
	                 LK_ERR_INVALID_ARGUMENT);
	assert_null(p);

	/* the byte limit also holds for files */
	const char *path = tmp_path("limit.lcp");
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(GOOD, 1, sizeof GOOD - 1, f);
	fclose(f);
	lim = lk_default_io_limits();
	lim.max_bytes = sizeof GOOD - 2;
	assert_int_equal(lk_problem_read(path, &lim, &p, NULL, err, sizeof err), LK_ERR_LIMIT);
	assert_non_null(strstr(err, path));
	lim.max_bytes = sizeof GOOD - 1;
	assert_int_equal(lk_problem_read(path, &lim, &p, NULL, err, sizeof err), LK_OK);
	lk_problem_destroy(p);
	assert_int_equal(unlink(path), 0);
}

static void test_long_lines(void **state)
{
	(void)state;
	size_t len = strlen(MAGIC) + 2 + LK_IO_MAX_LINE + 1;
	char *b = malloc(len + 1);
	assert_non_null(b);
	/* a comment of exactly LK_IO_MAX_LINE bytes is fine, one byte more is not */
	size_t m = strlen(MAGIC);
	memcpy(b, MAGIC, m);
	memset(b + m, ' ', LK_IO_MAX_LINE);
	b[m] = '#';
	b[m + LK_IO_MAX_LINE] = '\n';
	char err[512];
	lk_problem *p = NULL;
	/* valid up to the missing sections: the error is about the end of the file, on line 3 */
	assert_int_equal(lk_problem_read_buffer(b, m + LK_IO_MAX_LINE + 1, "t", NULL, &p, NULL, err, sizeof err),
	                 LK_ERR_PARSE);
	assert_non_null(strstr(err, "t:3: unexpected end of file"));
	memset(b + m, ' ', LK_IO_MAX_LINE + 1);
	b[m] = '#';
	b[m + LK_IO_MAX_LINE + 1] = '\n';
	assert_int_equal(lk_problem_read_buffer(b, m + LK_IO_MAX_LINE + 2, "t", NULL, &p, NULL, err, sizeof err),
	                 LK_ERR_LIMIT);
	assert_non_null(strstr(err, "t:2: line is longer than 4096 bytes"));
	/* without any newline at all */
	memset(b, 'a', len);
	assert_int_equal(lk_problem_read_buffer(b, len, "t", NULL, &p, NULL, err, sizeof err), LK_ERR_LIMIT);
	assert_non_null(strstr(err, "t:1: line is longer"));
	assert_null(p);
	free(b);
}

/* Every prefix of a valid file, and every single-byte change of it, is rejected or read without a crash;
 * only prefixes ending inside or after the final "end" can be valid. Run under the sanitizers this is a
 * small deterministic fuzz. */
static void test_prefixes_and_mutations(void **state)
{
	(void)state;
	static const char *const files[] = {GOOD, MGOOD};
	char err[512];
	for (int fi = 0; fi < 2; ++fi) {
		const char *src = files[fi];
		size_t len = strlen(src);
		for (size_t k = 0; k <= len; ++k) {
			char *b = malloc(k + 1); /* exact size: ASan sees any read past the end */
			assert_non_null(b);
			memcpy(b, src, k);
			lk_problem *p = NULL;
			lk_status st = lk_problem_read_buffer(b, k, "t", NULL, &p, NULL, err, sizeof err);
			if (k >= len - 1) {
				assert_int_equal(st, LK_OK); /* "end" with or without its newline */
				lk_problem_destroy(p);
			} else {
				if (st == LK_OK)
					fail_msg("prefix of %zu bytes was accepted", k);
				assert_null(p);
				assert_true(!strncmp(err, "t:", 2));
			}
			free(b);
		}
		lk__rng s = {99};
		static const char repl[] = "\0\n #x9.-e+ia\r\x80\xff";
		for (int it = 0; it < 3000; ++it) {
			char *b = malloc(len);
			assert_non_null(b);
			memcpy(b, src, len);
			int edits = 1 + (int)(lk__rng_next(&s) % 3);
			for (int e = 0; e < edits; ++e)
				b[lk__rng_next(&s) % len] = repl[lk__rng_next(&s) % (sizeof repl - 1)];
			lk_problem *p = NULL;
			lk_problem_extra ex;
			lk_status st = lk_problem_read_buffer(b, len, "t", NULL, &p, &ex, err, sizeof err);
			if (st == LK_OK) {
				assert_non_null(p);
				assert_int_equal(lk_problem_validate(p), LK_OK);
				lk_problem_destroy(p);
				lk_problem_extra_free(&ex);
			} else {
				assert_null(p);
				assert_true(!strncmp(err, "t:", 2));
			}
			free(b);
		}
	}
}

/* ------------------------------------------------------------------------------ files and arguments */

static void test_io_errors(void **state)
{
	(void)state;
	char err[512];
	lk_problem *p = NULL;
	const char *missing = tmp_path("no/such/file.lcp");
	assert_int_equal(lk_problem_read(missing, NULL, &p, NULL, err, sizeof err), LK_ERR_IO);
	assert_non_null(strstr(err, missing));
	assert_non_null(strstr(err, "cannot open"));
	assert_null(p);
	/* a directory opens but cannot be read */
	assert_int_equal(lk_problem_read(tmpdir, NULL, &p, NULL, err, sizeof err), LK_ERR_IO);
	assert_non_null(strstr(err, tmpdir));

	lk_problem *good = read_ok(GOOD, sizeof GOOD - 1, NULL);
	assert_int_equal(lk_problem_write(good, NULL, missing, err, sizeof err), LK_ERR_IO);
	assert_non_null(strstr(err, missing));
	if (access("/dev/full", W_OK) == 0) {
		assert_int_equal(lk_problem_write(good, NULL, "/dev/full", err, sizeof err), LK_ERR_IO);
		assert_non_null(strstr(err, "/dev/full: write failed"));
	}

	/* a refused write leaves the existing file as it was */
	const char *path = tmp_path("keep.lcp");
	assert_int_equal(lk_problem_write(good, NULL, path, err, sizeof err), LK_OK);
	size_t l1, l2;
	char *before = slurp(path, &l1);
	lk_problem_extra ex;
	memset(&ex, 0, sizeof ex);
	snprintf(ex.source, sizeof ex.source, "two\nlines");
	assert_int_equal(lk_problem_write(good, &ex, path, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err, "control character 0x0a"));
	ex.source[0] = '\0';
	ex.h = NAN;
	assert_int_equal(lk_problem_write(good, &ex, path, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	ex.h = 0;
	ex.has_solution = 1;
	assert_int_equal(lk_problem_write(good, &ex, path, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	char *after = slurp(path, &l2);
	assert_int_equal(l1, l2);
	assert_memory_equal(before, after, l1);
	free(before);
	free(after);
	assert_int_equal(unlink(path), 0);

	/* NULL arguments and tiny or missing message buffers */
	assert_int_equal(lk_problem_read_buffer(GOOD, sizeof GOOD - 1, "t", NULL, NULL, NULL, err, sizeof err),
	                 LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_read_buffer(NULL, 5, "t", NULL, &p, NULL, err, sizeof err),
	                 LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_read(NULL, NULL, &p, NULL, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_write(NULL, NULL, path, err, sizeof err), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_write(good, NULL, NULL, NULL, 0), LK_ERR_INVALID_ARGUMENT);
	char tiny[6];
	assert_int_equal(lk_problem_read_buffer("x", 1, "t", NULL, &p, NULL, tiny, sizeof tiny), LK_ERR_PARSE);
	assert_string_equal(tiny, "t:1: ");
	assert_int_equal(lk_problem_read_buffer("x", 1, "t", NULL, &p, NULL, NULL, 0), LK_ERR_PARSE);
	assert_int_equal(lk_problem_read_buffer(NULL, 0, NULL, NULL, &p, NULL, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "(buffer):1: empty file"));
	lk_problem_extra_free(NULL);
	lk_problem_destroy(good);
}

/* The malformed corpus (also the seed corpus of the reader's fuzzer): every file is refused with a
 * message that names the file and a line. */
static void test_bad_corpus(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		lk_status status;
		const char *message;
	} corpus[] = {
		{"bad/truncated.lcp", LK_ERR_PARSE, ":13: unexpected end of file: section 'lambda'"},
		{"bad/nan_velocity.lcp", LK_ERR_NONFINITE, ":6: body 0: u[2]: NaN is not allowed"},
		{"bad/findex_self.lcp", LK_ERR_FINDEX, ":11: row 1: friction index points at itself"},
		{"bad/huge_count.lcp", LK_ERR_LIMIT, ":3: rows: count 2147483648 exceeds the limit"},
		{"bad/trailing_garbage.lcp", LK_ERR_PARSE, ":19: unexpected content after 'end' (line 17)"},
		{"bad/negative_mass.lcp", LK_ERR_MASS, ":5: body 1: negative inverse mass"},
		{"bad/unsorted_entries.lcp", LK_ERR_PARSE, ":10: entry 2: row 0 after row 1"},
		{"bad/lo_above_hi.lcp", LK_ERR_BOUNDS, ":6: row 2: lo 3 > hi -2"},
		{"bad/version2.lcp", LK_ERR_PARSE, ":1: format version 2 is not supported"},
		{"bad/nul_byte.lcp", LK_ERR_PARSE, ":3: NUL byte in column 4"},
	};
	char err[1024];
	for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; ++i) {
		char path[1024];
		snprintf(path, sizeof path, "%s", tu_data_path(corpus[i].file));
		lk_problem *p = NULL;
		lk_status st = lk_problem_read(path, NULL, &p, NULL, err, sizeof err);
		if (st != corpus[i].status || !strstr(err, corpus[i].message) || strncmp(err, path, strlen(path)))
			fail_msg("%s: status %s, message \"%s\"", corpus[i].file, lk_status_string(st), err);
		assert_null(p);
	}
}

/* ---------------------------------------------------------------------------------------- dense export */

static void test_export_dense(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(4, 9, 17, 0.4);
	int n = lk_problem_row_count(p);
	double lam[9];
	for (int i = 0; i < n; ++i)
		lam[i] = i % 3 == 0 ? 1.0 + i : 0.1 * i - 0.2;
	assert_int_equal(lk_problem_set_lambda(p, lam, n), LK_OK);
	const char *path = tmp_path("dense.txt");
	char err[512];
	assert_int_equal(lk_problem_export_dense(p, 8, path, err, sizeof err), LK_ERR_LIMIT);
	assert_int_equal(lk_problem_export_dense(p, 9, path, err, sizeof err), LK_OK);

	double A[81], q[9];
	assert_int_equal(lk_problem_assemble_dense(p, 9, A, q), LK_OK);
	size_t len;
	char *text = slurp(path, &len);
	assert_non_null(strstr(text, "n = 9\n"));
	char *s = text;
	int row = 0;
	while (*s) {
		char *eol = strchr(s, '\n');
		assert_non_null(eol);
		*eol = '\0';
		if (*s != '#') {
			assert_true(row < n);
			char *e = s;
			for (int j = 0; j < n + 3; ++j) {
				double v = strtod(e, &e);
				double want;
				if (j < n)
					want = A[row * n + j];
				else if (j == n)
					want = q[row];
				else {
					double lo, hi, mu;
					int f;
					lk_problem_get_bounds(p, row, &lo, &hi, &mu, &f, NULL);
					if (f >= 0) {
						hi = mu * fabs(lam[f]);
						lo = -hi;
					}
					want = j == n + 1 ? lo : hi;
				}
				assert_same_bits(&v, &want, 1, "dense export");
			}
			while (*e == ' ')
				++e;
			assert_int_equal(*e, '\0');
			++row;
		}
		s = eol + 1;
	}
	assert_int_equal(row, n);
	free(text);
	assert_int_equal(unlink(path), 0);
	/* a friction row's effective bounds really are the ones at lambda: row 1 takes mu |lambda_0| */
	double lo, hi, mu;
	int f;
	lk_problem_get_bounds(p, 1, &lo, &hi, &mu, &f, NULL);
	assert_int_equal(f, 0);
	assert_true(mu == 0.4);
	lk_problem_destroy(p);
}

/* The examples in docs/problem-format.md are valid files, and the matrix example's solution solves it. */
static void test_doc_examples(void **state)
{
	(void)state;
	char path[1024];
	snprintf(path, sizeof path, "%s", tu_data_path("../../docs/problem-format.md"));
	size_t len;
	char *doc = slurp(path, &len);
	char *block = malloc(len + 1);
	assert_non_null(block);
	int found = 0, forms[2] = {0, 0};
	size_t blen = 0;
	int in = 0;
	for (char *line = doc; *line;) {
		char *eol = strchr(line, '\n');
		size_t ll = eol ? (size_t)(eol - line) : strlen(line);
		if (!in && ll == 20 && !strncmp(line, "    lcpkit-problem 1", 20)) {
			in = 1;
			blen = 0;
		}
		if (in) {
			if (ll < 4 || strncmp(line, "    ", 4)) {
				in = 0; /* an indented block that is not a whole file (the layout section) */
			} else {
				memcpy(block + blen, line + 4, ll - 4);
				blen += ll - 4;
				block[blen++] = '\n';
				if (ll == 7 && !strncmp(line + 4, "end", 3)) {
					in = 0;
					lk_problem_extra ex;
					lk_problem *p = read_ok(block, blen, &ex);
					++found;
					forms[lk_problem_form(p)]++;
					assert_int_equal(lk_problem_validate(p), LK_OK);
					if (lk_problem_form(p) == LK_FORM_ROWS) {
						double q[4];
						assert_int_equal(lk_problem_row_count(p), 4);
						assert_int_equal(lk_problem_assemble_dense(p, 4, NULL, q), LK_OK);
						assert_true(fabs(q[0] - (-0.1635 - 0.02)) < 1e-15);
						assert_true(ex.h == 1.0 / 60.0);
					} else {
						assert_true(ex.has_solution);
						tu_assert_complementarity(p, ex.solution, 1e-14);
					}
					lk_problem_extra_free(&ex);
					lk_problem_destroy(p);
				}
			}
		}
		line = eol ? eol + 1 : line + ll;
	}
	assert_int_equal(found, 2);
	assert_int_equal(forms[LK_FORM_ROWS], 1);
	assert_int_equal(forms[LK_FORM_MATRIX], 1);
	free(block);
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_rows),
		cmocka_unit_test(test_roundtrip_matrix),
		cmocka_unit_test(test_malformed_table),
		cmocka_unit_test(test_valid_variants),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_prefixes_and_mutations),
		cmocka_unit_test(test_io_errors),
		cmocka_unit_test(test_bad_corpus),
		cmocka_unit_test(test_export_dense),
		cmocka_unit_test(test_doc_examples),
	};
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}

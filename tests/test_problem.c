/* The problem model: validation of both forms, dense assembly against hand-computed numbers, metrics and
 * the configuration syntax. */
#include "test_util.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static lk_body_def unit_body(double m, double Iinv)
{
	lk_body_def b = lk_default_body_def();
	for (int k = 0; k < 3; ++k) {
		b.inv_mass[k] = 1.0 / m;
		b.inv_inertia[4 * k] = Iinv;
	}
	return b;
}

static void expect_body_error(lk_body_def b, lk_status want, const char *substring)
{
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	assert_int_equal(lk_problem_add_body(p, &b, NULL), want);
	assert_non_null(strstr(lk_problem_error(p), substring));
	assert_int_equal(lk_problem_body_count(p), 0);
	lk_problem_destroy(p);
}

static void test_body_validation(void **state)
{
	(void)state;
	lk_body_def b = unit_body(1, 1);
	b.u[2] = NAN;
	expect_body_error(b, LK_ERR_NONFINITE, "body 0: velocity");
	b = unit_body(1, 1);
	b.inv_mass[1] = -1;
	expect_body_error(b, LK_ERR_MASS, "negative inverse mass");
	b = unit_body(1, 1);
	b.inv_inertia[1] = 0.5;
	expect_body_error(b, LK_ERR_MASS, "not symmetric");
	b = unit_body(1, 1);
	b.inv_inertia[4] = -2;
	expect_body_error(b, LK_ERR_MASS, "positive semidefinite");
	b = unit_body(1, 1);
	b.inv_inertia[8] = INFINITY;
	expect_body_error(b, LK_ERR_NONFINITE, "inertia");
	assert_int_equal(lk_problem_add_body(NULL, &b, NULL), LK_ERR_INVALID_ARGUMENT);
}

/* one body, the row definition modified by f, expects an error with a message */
static void expect_row_error(void (*f)(lk_row_def *), lk_status want, const char *substring)
{
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	lk_body_def b = unit_body(1, 1);
	assert_int_equal(lk_problem_add_body(p, &b, NULL), LK_OK);
	assert_int_equal(lk_problem_add_body(p, &b, NULL), LK_OK);
	lk_row_def r = lk_default_row_def();
	r.body[0] = 0;
	r.J[0][2] = 1;
	f(&r);
	assert_int_equal(lk_problem_add_row(p, &r, NULL), want);
	assert_non_null(strstr(lk_problem_error(p), substring));
	assert_int_equal(lk_problem_row_count(p), 0);
	lk_problem_destroy(p);
}

static void body_out_of_range(lk_row_def *r) { r->body[1] = 2; }
static void body_negative(lk_row_def *r) { r->body[0] = -2; }
static void both_static(lk_row_def *r) { r->body[0] = LK_STATIC; }
static void same_body(lk_row_def *r) { r->body[1] = 0; }
static void nan_j(lk_row_def *r) { r->J[1][4] = NAN; }
static void inf_c(lk_row_def *r) { r->c = INFINITY; }
/* J, c and s are found non-finite through the numbers made from them (J u* - c, A_ii): a static side's J
 * too, which the record drops, and a J that meets a zero velocity or inverse mass */
static void nan_j_static_side(lk_row_def *r) { r->body[1] = LK_STATIC; r->J[1][2] = NAN; }
static void inf_j_static_side(lk_row_def *r) { r->body[1] = LK_STATIC; r->J[1][0] = -INFINITY; }
static void inf_j_angular(lk_row_def *r) { r->J[0][5] = INFINITY; }
static void nan_c(lk_row_def *r) { r->c = NAN; }
static void inf_s(lk_row_def *r) { r->s = INFINITY; }
static void nan_s(lk_row_def *r) { r->s = NAN; }
static void inf_point(lk_row_def *r) { r->point[2] = -INFINITY; }
static void lo_gt_hi(lk_row_def *r) { r->lo = 1; r->hi = 0; }
static void nan_lo(lk_row_def *r) { r->lo = NAN; }
static void lo_plus_inf(lk_row_def *r) { r->lo = INFINITY; }
static void neg_cfm(lk_row_def *r) { r->s = -1e-3; }
static void findex_self(lk_row_def *r) { r->findex = 0; }
static void findex_neg(lk_row_def *r) { r->findex = -5; }
static void neg_mu(lk_row_def *r) { r->findex = 3; r->mu = -0.1; }
static void bad_kind(lk_row_def *r) { r->kind = (lk_row_kind)42; }

static void test_row_validation(void **state)
{
	(void)state;
	expect_row_error(body_out_of_range, LK_ERR_OUT_OF_RANGE, "row 0: body 2 is out of range");
	expect_row_error(body_negative, LK_ERR_OUT_OF_RANGE, "body -2");
	expect_row_error(both_static, LK_ERR_INVALID_ARGUMENT, "static world");
	expect_row_error(same_body, LK_ERR_INVALID_ARGUMENT, "both sides are body 0");
	expect_row_error(nan_j, LK_ERR_NONFINITE, "J is not finite");
	expect_row_error(inf_c, LK_ERR_NONFINITE, "not finite");
	expect_row_error(nan_j_static_side, LK_ERR_NONFINITE, "J is not finite");
	expect_row_error(inf_j_static_side, LK_ERR_NONFINITE, "J is not finite");
	expect_row_error(inf_j_angular, LK_ERR_NONFINITE, "J is not finite");
	expect_row_error(nan_c, LK_ERR_NONFINITE, "c, s, mu or point is not finite");
	expect_row_error(inf_s, LK_ERR_NONFINITE, "c, s, mu or point is not finite");
	expect_row_error(nan_s, LK_ERR_NONFINITE, "c, s, mu or point is not finite");
	expect_row_error(inf_point, LK_ERR_NONFINITE, "c, s, mu or point is not finite");
	expect_row_error(lo_gt_hi, LK_ERR_BOUNDS, "lo 1 > hi 0");
	expect_row_error(nan_lo, LK_ERR_NONFINITE, "bounds");
	expect_row_error(lo_plus_inf, LK_ERR_NONFINITE, "bounds");
	expect_row_error(neg_cfm, LK_ERR_BOUNDS, "constraint force mixing");
	expect_row_error(findex_self, LK_ERR_FINDEX, "points at itself");
	expect_row_error(findex_neg, LK_ERR_FINDEX, "out of range");
	expect_row_error(neg_mu, LK_ERR_BOUNDS, "friction coefficient");
	expect_row_error(bad_kind, LK_ERR_INVALID_ARGUMENT, "unknown kind");
}

/* Finite J, masses and velocities whose products overflow: M^-1 J^T, A_ii = J M^-1 J^T or q = J u* - c
 * infinite. Each is refused with its own message, and the problem (rows, diagonal, lambda) stays as it was and
 * still solves. Body 0: inverse mass and inertia 4, one row on it with A_00 = 4, q_0 = -1, so lambda_0 =
 * 1/4; body 1: unit mass moving at 1e155 m/s. */
static void test_row_overflow(void **state)
{
	(void)state;
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	lk_body_def b = unit_body(0.25, 4);
	b.u[2] = -1;
	assert_int_equal(lk_problem_add_body(p, &b, NULL), LK_OK);
	b = unit_body(1, 1);
	b.u[2] = 1e155;
	assert_int_equal(lk_problem_add_body(p, &b, NULL), LK_OK);
	lk_row_def r = lk_default_row_def();
	r.body[0] = 0;
	r.J[0][2] = 1;
	r.lo = 0;
	assert_int_equal(lk_problem_add_row(p, &r, NULL), LK_OK);
	const double warm = 0.125;
	assert_int_equal(lk_problem_set_lambda(p, &warm, 1), LK_OK);

	struct {
		int body[2], side, k;
		double j;
		const char *msg;
	} bad[] = {
		{{0, LK_STATIC}, 0, 2, 1e308, "row 1: M^-1 J^T overflows on body 0"},         /* 4 x 1e308 */
		{{LK_STATIC, 0}, 1, 4, 1e308, "row 1: M^-1 J^T overflows on body 0"},         /* angular, side b */
		{{1, LK_STATIC}, 0, 2, 1e200, "row 1: A_ii = J M^-1 J^T + s overflows"},       /* 1e400 */
		{{1, LK_STATIC}, 0, 2, 1e154, "row 1: J u* - c overflows"},                    /* 1e154 x 1e155 */
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
		lk_row_def o = lk_default_row_def();
		o.body[0] = bad[k].body[0];
		o.body[1] = bad[k].body[1];
		o.J[bad[k].side][bad[k].k] = bad[k].j;
		o.lo = 0;
		int idx = -7;
		assert_int_equal(lk_problem_add_row(p, &o, &idx), LK_ERR_NONFINITE);
		if (!strstr(lk_problem_error(p), bad[k].msg))
			fail_msg("case %zu: \"%s\"", k, lk_problem_error(p));
		assert_int_equal(idx, -7);
		assert_int_equal(lk_problem_row_count(p), 1);
		assert_memory_equal(lk_problem_lambda(p), &warm, sizeof warm);
		double d;
		assert_int_equal(lk_problem_diagonal(p, &d), LK_OK);
		assert_double_equal(d, 4.0, 0.0);
	}
	/* 1e154 on body 1 alone is fine: A_ii = 1e308 is finite, and q = 0 without the velocity along z */
	lk_row_def ok = lk_default_row_def();
	ok.body[0] = 1;
	ok.J[0][0] = 1e154;
	ok.lo = 0;
	int idx = -1;
	assert_int_equal(lk_problem_add_row(p, &ok, &idx), LK_OK);
	assert_int_equal(idx, 1);
	double d[2];
	assert_int_equal(lk_problem_diagonal(p, d), LK_OK);
	assert_double_equal(d[1], 1e308, 1e292);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.tol_abs = 1e-14;
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	assert_double_equal(lk_problem_lambda(p)[0], 0.25, 1e-15);
	assert_double_equal(lk_problem_lambda(p)[1], 0.0, 0.0);
	lk_problem_destroy(p);
}

/* Friction indices are checked when the whole problem is known: lk_solve refuses and leaves lambda alone. */
static void test_findex_checked_at_solve(void **state)
{
	(void)state;
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	lk_body_def b = unit_body(1, 1);
	assert_int_equal(lk_problem_add_body(p, &b, NULL), LK_OK);
	lk_row_def r = lk_default_row_def();
	r.body[0] = 0;
	r.J[0][2] = 1;
	r.lo = 0;
	r.c = 1;
	assert_int_equal(lk_problem_add_row(p, &r, NULL), LK_OK);
	r.J[0][2] = 0;
	r.J[0][0] = 1;
	r.findex = 7; /* out of range, only detectable with all rows known */
	r.mu = 0.5;
	assert_int_equal(lk_problem_add_row(p, &r, NULL), LK_OK);
	double warm[2] = {0.25, -0.125};
	assert_int_equal(lk_problem_set_lambda(p, warm, 2), LK_OK);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	lk_stats st;
	assert_int_equal(lk_solve(p, &cfg, &st, NULL), LK_ERR_FINDEX);
	assert_non_null(strstr(lk_problem_error(p), "row 1: friction index 7"));
	assert_memory_equal(lk_problem_lambda(p), warm, sizeof warm);
	lk_problem_destroy(p);

	/* a friction row pointing at another friction row */
	p = lk_problem_create(LK_FORM_ROWS);
	assert_int_equal(lk_problem_add_body(p, &b, NULL), LK_OK);
	r = lk_default_row_def();
	r.body[0] = 0;
	r.J[0][2] = 1;
	r.lo = 0;
	assert_int_equal(lk_problem_add_row(p, &r, NULL), LK_OK);
	r.findex = 0;
	r.mu = 1;
	assert_int_equal(lk_problem_add_row(p, &r, NULL), LK_OK);
	r.findex = 1;
	assert_int_equal(lk_problem_add_row(p, &r, NULL), LK_OK);
	assert_int_equal(lk_problem_validate(p), LK_ERR_FINDEX);
	assert_non_null(strstr(lk_problem_error(p), "another friction row"));
	lk_problem_destroy(p);
}

static void test_matrix_validation(void **state)
{
	(void)state;
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	int rp[3] = {0, 2, 3}, col[3] = {0, 1, 1};
	double val[3] = {2, -1, 2}, q[2] = {-1, 1};
	assert_int_equal(lk_problem_set_matrix(p, 2, rp, col, val, q, NULL, NULL, NULL, NULL), LK_OK);
	assert_int_equal(lk_problem_row_count(p), 2);
	int bad_col[3] = {0, 2, 1};
	assert_int_equal(lk_problem_set_matrix(p, 2, rp, bad_col, val, q, NULL, NULL, NULL, NULL),
	                 LK_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(lk_problem_error(p), "row 0: column 2"));
	int dup_col[3] = {1, 1, 1};
	assert_int_equal(lk_problem_set_matrix(p, 2, rp, dup_col, val, q, NULL, NULL, NULL, NULL), LK_ERR_PARSE);
	assert_non_null(strstr(lk_problem_error(p), "appears twice"));
	double nan_val[3] = {2, NAN, 2};
	assert_int_equal(lk_problem_set_matrix(p, 2, rp, col, nan_val, q, NULL, NULL, NULL, NULL),
	                 LK_ERR_NONFINITE);
	double lo[2] = {0, 3}, hi[2] = {1, 2};
	assert_int_equal(lk_problem_set_matrix(p, 2, rp, col, val, q, lo, hi, NULL, NULL), LK_ERR_BOUNDS);
	assert_non_null(strstr(lk_problem_error(p), "row 1: lo 3 > hi 2"));
	int rp_dec[3] = {0, 2, 1};
	assert_int_equal(lk_problem_set_matrix(p, 2, rp_dec, col, val, q, NULL, NULL, NULL, NULL), LK_ERR_PARSE);
	int fself[2] = {-1, 1};
	assert_int_equal(lk_problem_set_matrix(p, 2, rp, col, val, q, NULL, NULL, NULL, fself), LK_ERR_FINDEX);
	/* the failed calls left the valid problem as it was */
	assert_int_equal(lk_problem_row_count(p), 2);
	const double *qq;
	assert_int_equal(lk_problem_get_matrix(p, NULL, NULL, NULL, NULL, &qq), LK_OK);
	assert_true(qq[0] == -1 && qq[1] == 1);
	lk_problem_destroy(p);
}

/* Two bodies, three rows: A = J M^-1 J^T + S against numbers worked out by hand. */
static void test_dense_assembly_by_hand(void **state)
{
	(void)state;
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	lk_body_def b0 = unit_body(2.0, 0.5), b1 = unit_body(4.0, 0.25);
	b0.u[2] = -1.0; /* falling at 1 m/s */
	b1.u[0] = 2.0;
	assert_int_equal(lk_problem_add_body(p, &b0, NULL), LK_OK);
	assert_int_equal(lk_problem_add_body(p, &b1, NULL), LK_OK);
	/* row 0: body 0 on the ground, normal z at arm (1, 0, -1): J = (0,0,1, r x n) = (0,0,1, 0,-1,0) */
	lk_row_def r = lk_default_row_def();
	r.body[0] = 0;
	r.J[0][2] = 1;
	r.J[0][4] = -1;
	r.lo = 0;
	r.c = 0.1;
	assert_int_equal(lk_problem_add_row(p, &r, NULL), LK_OK);
	/* row 1: between body 0 and body 1 along x: J0 = (1,0,0, 0,0,0), J1 = (-1,0,0, 0,0,1), cfm 0.01 */
	r = lk_default_row_def();
	r.body[0] = 0;
	r.body[1] = 1;
	r.J[0][0] = 1;
	r.J[1][0] = -1;
	r.J[1][5] = 1;
	r.s = 0.01;
	assert_int_equal(lk_problem_add_row(p, &r, NULL), LK_OK);
	/* row 2: world on side 0 (static), body 1 on side 1: J1 = (0,1,0, 0,0,0) */
	r = lk_default_row_def();
	r.body[0] = LK_STATIC;
	r.body[1] = 1;
	r.J[0][0] = 99; /* ignored: the world side does not move */
	r.J[1][1] = 1;
	assert_int_equal(lk_problem_add_row(p, &r, NULL), LK_OK);

	double A[9], q[3];
	assert_int_equal(lk_problem_assemble_dense(p, 10, A, q), LK_OK);
	/* A00 = 1/2 (z) + 0.5 * 1 (angular y) = 1.0 */
	assert_double_equal(A[0], 1.0, 1e-15);
	/* A01 = J0 row0 . M0^-1 J0 row1 = (0,0,1,0,-1,0) . (1/2,0,0,0,0,0) = 0 */
	assert_double_equal(A[1], 0.0, 1e-15);
	assert_double_equal(A[3], 0.0, 1e-15);
	/* A11 = 1/2 + (1/4 + 0.25 * 1) + 0.01 = 1.01 */
	assert_double_equal(A[4], 1.01, 1e-15);
	/* A12 = J1 row1 . M1^-1 J1 row2 = (-1,0,0,0,0,1) . (0,1/4,0,0,0,0) = 0 */
	assert_double_equal(A[5], 0.0, 1e-15);
	/* A22 = 1/4 */
	assert_double_equal(A[8], 0.25, 1e-15);
	assert_double_equal(A[2], 0.0, 1e-15);
	/* q0 = J u* - c = -1 - 0.1; q1 = (1)(0) + (-1)(2) = -2; q2 = 0 */
	assert_double_equal(q[0], -1.1, 1e-15);
	assert_double_equal(q[1], -2.0, 1e-15);
	assert_double_equal(q[2], 0.0, 1e-15);

	/* apply agrees with the dense matrix */
	double x[3] = {0.3, -0.7, 1.9}, w[3];
	assert_int_equal(lk_problem_apply(p, x, w, 1), LK_OK);
	for (int i = 0; i < 3; ++i) {
		double v = q[i];
		for (int j = 0; j < 3; ++j)
			v += A[3 * i + j] * x[j];
		assert_double_equal(w[i], v, 1e-14);
	}
	double diag[3];
	assert_int_equal(lk_problem_diagonal(p, diag), LK_OK);
	assert_double_equal(diag[1], 1.01, 1e-15);
	assert_int_equal(lk_problem_assemble_dense(p, 2, A, q), LK_ERR_LIMIT);
	lk_problem_destroy(p);
}

/* The assembled matrix of a random problem is symmetric and its apply() matches the dense product. */
static void test_apply_matches_dense(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(12, 40, 7, 0.0);
	int n = 40;
	double *A = malloc(sizeof(double) * n * n), q[40], x[40], w[40];
	assert_int_equal(lk_problem_assemble_dense(p, n, A, q), LK_OK);
	for (int i = 0; i < n; ++i) {
		x[i] = sin(i + 1.0);
		for (int j = 0; j < n; ++j)
			assert_double_equal(A[i * n + j], A[j * n + i], 1e-12);
	}
	assert_int_equal(lk_problem_apply(p, x, w, 0), LK_OK);
	for (int i = 0; i < n; ++i) {
		double v = 0;
		for (int j = 0; j < n; ++j)
			v += A[i * n + j] * x[j];
		assert_double_equal(w[i], v, 1e-12);
	}
	free(A);
	lk_problem_destroy(p);
}

/* The sparse A (lk_problem_assemble_sparse) is the dense one: every stored entry equal, every entry it leaves out 0,
 * columns ascending; in the row form and in the matrix form made from it; the count first, then the entries. */
static void test_sparse_assembly_matches_dense(void **state)
{
	(void)state;
	enum { N = 40 };
	lk_problem *rows = tu_random_rows(12, N, 7, 0.3), *m = lk_problem_create(LK_FORM_MATRIX);
	double *A = malloc(sizeof(double) * N * N), q[N], lo[N], hi[N], mu[N];
	int f[N];
	assert_int_equal(lk_problem_assemble_dense(rows, N, A, q), LK_OK);
	for (int i = 0; i < N; ++i)
		assert_int_equal(lk_problem_get_bounds(rows, i, &lo[i], &hi[i], &mu[i], &f[i], NULL), LK_OK);
	assert_int_equal(lk_problem_set_dense(m, N, A, q, lo, hi, mu, f), LK_OK);
	lk_problem *forms[2] = {rows, m};
	for (int k = 0; k < 2; ++k) {
		int row_ptr[N + 1], sentinel = -7;
		int64_t count = -1;
		double qs[N];
		/* the count first: col and val untouched */
		assert_int_equal(lk_problem_assemble_sparse(forms[k], row_ptr, &sentinel, NULL, qs, 0, &count), LK_OK);
		assert_int_equal(sentinel, -7);
		assert_true(count > N && count < N * N);
		assert_int_equal(row_ptr[N], (int)count);
		int *col = malloc(sizeof(int) * (size_t)count);
		double *val = malloc(sizeof(double) * (size_t)count), *dense = calloc(N * N, sizeof(double));
		assert_int_equal(lk_problem_assemble_sparse(forms[k], row_ptr, col, val, NULL, count, &count), LK_OK);
		for (int i = 0; i < N; ++i) {
			assert_double_equal(qs[i], q[i], 0);
			for (int e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
				assert_true(e == row_ptr[i] || col[e] > col[e - 1]);
				dense[i * N + col[e]] = val[e];
			}
		}
		int zeros = 0;
		for (int e = 0; e < N * N; ++e) {
			assert_double_equal(dense[e], A[e], 1e-15 * fabs(A[e]));
			zeros += A[e] == 0.0;
		}
		print_message("form %d: %lld entries stored, %d zeros of %d in A\n", k, (long long)count, zeros, N * N);
		assert_true(zeros > 0);
		free(col);
		free(val);
		free(dense);
	}
	free(A);
	lk_problem_destroy(rows);
	lk_problem_destroy(m);
}

static void test_metrics(void **state)
{
	(void)state;
	/* natural residual: lambda - mid(lo, lambda - w, hi) */
	assert_double_equal(lk_natural_residual(0.0, 2.0, 0, INFINITY), 0.0, 0);  /* at lo, w >= 0 */
	assert_double_equal(lk_natural_residual(0.0, -2.0, 0, INFINITY), -2.0, 0); /* at lo, w < 0 */
	assert_double_equal(lk_natural_residual(1.5, 0.5, 0, INFINITY), 0.5, 0);   /* interior, w != 0 */
	assert_double_equal(lk_natural_residual(1.0, -3.0, -1, 1), 0.0, 0);        /* at hi, w <= 0 */
	assert_double_equal(lk_natural_residual(0.2, 5.0, -INFINITY, INFINITY), 5.0, 0);
	/* Fischer-Burmeister: sqrt(a^2+b^2) - a - b */
	assert_double_equal(lk_fischer_boxed(3.0, 4.0, 0, INFINITY), 5.0 - 7.0, 1e-15);
	assert_double_equal(lk_fischer_boxed(0.0, 4.0, 0, INFINITY), 0.0, 1e-15);
	assert_double_equal(lk_fischer_boxed(0.5, 0.0, -1, 1), 0.0, 1e-15);
	assert_double_equal(lk_fischer_boxed(1.0, -2.0, -1, 1), 0.0, 1e-15);
	assert_true(fabs(lk_fischer_boxed(1.0, 2.0, -1, 1)) > 0.1);
	assert_double_equal(lk_fischer_boxed(0.0, 2.5, -INFINITY, INFINITY), 2.5, 0);

	/* problem metrics on a 2x2 LCP: A = [[2,1],[1,2]], q = [-1, 1]; solution (0.5, 0) */
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	double A[4] = {2, 1, 1, 2}, q[2] = {-1, 1};
	assert_int_equal(lk_problem_set_dense(p, 2, A, q, NULL, NULL, NULL, NULL), LK_OK);
	lk_metrics m;
	double sol[2] = {0.5, 0.0};
	assert_int_equal(lk_problem_metrics(p, sol, &m), LK_OK);
	assert_double_equal(m.res, 0.0, 1e-15);
	assert_double_equal(m.fischer, 0.0, 1e-15);
	double x[2] = {1.0, 1.0}; /* w = (2, 4): H = (1, 1), modified = 2 + 4 */
	assert_int_equal(lk_problem_metrics(p, x, &m), LK_OK);
	assert_double_equal(m.res, sqrt(2.0), 1e-15);
	assert_double_equal(m.theta, 1.0, 1e-15);
	assert_double_equal(m.modified, 6.0, 1e-15);
	assert_double_equal(m.max_h, 1.0, 1e-15);
	lk_problem_destroy(p);
}

static void test_config_parse(void **state)
{
	(void)state;
	lk_solver_config c;
	char err[256];
	assert_int_equal(lk_config_parse("psor:w=1.3", &c, err, sizeof err), LK_OK);
	assert_int_equal(c.method, LK_METHOD_PSOR);
	assert_double_equal(c.sor_w, 1.3, 0);
	assert_int_equal(lk_config_parse("gsp", &c, err, sizeof err), LK_OK);
	assert_int_equal(c.method, LK_METHOD_PGS);
	assert_int_equal(c.order, LK_ORDER_GSP);
	assert_int_equal(lk_config_parse("pgs:order=cp-z-desc,iters=7", &c, err, sizeof err), LK_OK);
	assert_int_equal(c.order, LK_ORDER_CP_Z);
	assert_int_equal(c.order_descending, 1);
	assert_int_equal(c.max_iterations, 7);
	assert_int_equal(lk_config_parse("amgs:alpha=0.2,omega=E,gamma=3", &c, err, sizeof err), LK_OK);
	assert_int_equal(c.amgs.omega, LK_AMGS_OMEGA_BAR_E);
	assert_double_equal(c.amgs.gamma, 3.0, 0);

	/* errors name what is wrong and the valid choices */
	assert_int_equal(lk_config_parse("pgz", &c, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "unknown solver 'pgz'"));
	assert_non_null(strstr(err, "amgs"));
	assert_int_equal(lk_config_parse("pgs:alpha=0.2", &c, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "unknown parameter 'alpha' for pgs"));
	assert_int_equal(lk_config_parse("psor:w=abc", &c, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "'w' needs a finite number"));
	assert_int_equal(lk_config_parse("psor:w=2.5", &c, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "(0, 2)"));
	assert_int_equal(lk_config_parse("pgs:order=zigzag", &c, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "choose from natural"));
	assert_int_equal(lk_config_parse("pgs:iters", &c, err, sizeof err), LK_ERR_PARSE);
	assert_int_equal(lk_config_parse("pgs:iters=0", &c, err, sizeof err), LK_ERR_PARSE);

	/* format gives back a spec that parses to the same configuration */
	assert_int_equal(lk_config_parse("pgs-sm:kpgs=10,reg=0.001,merit=fischer", &c, err, sizeof err), LK_OK);
	char buf[256];
	assert_int_equal(lk_config_format(&c, buf, sizeof buf), LK_OK);
	lk_solver_config d;
	assert_int_equal(lk_config_parse(buf, &d, err, sizeof err), LK_OK);
	assert_memory_equal(&c, &d, sizeof c);
	assert_non_null(strstr(buf, "kpgs=10"));
}

static void test_solve_rejects_bad_config(void **state)
{
	(void)state;
	lk_problem *p = tu_random_rows(3, 5, 1, 0.0);
	lk_solver_config cfg = lk_default_config(LK_METHOD_PSOR);
	cfg.sor_w = 2.5;
	assert_int_equal(lk_solve(p, &cfg, NULL, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(lk_problem_error(p), "relaxation"));
	cfg = lk_default_config(LK_METHOD_PGS);
	cfg.max_iterations = 0;
	assert_int_equal(lk_solve(p, &cfg, NULL, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_solve(p, NULL, NULL, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_solve(NULL, &cfg, NULL, NULL), LK_ERR_INVALID_ARGUMENT);
	for (int i = 0; i < 5; ++i)
		assert_true(lk_problem_lambda(p)[i] == 0.0);
	double bad[5] = {0, 0, NAN, 0, 0};
	assert_int_equal(lk_problem_set_lambda(p, bad, 5), LK_ERR_NONFINITE);
	assert_int_equal(lk_problem_set_lambda(p, bad, 4), LK_ERR_OUT_OF_RANGE);
	lk_problem_destroy(p);
}

/* lk_row_def_set_contact against Jacobians computed by hand: body a at the origin, b at (0, 0, 2), the point
 * (1, 0, 1), the direction z. r_a = (1, 0, 1), r_a x z = (0, -1, 0); r_b = (1, 0, -1), r_b x z = (0, -1, 0),
 * and the b side is negated. A static side gets zeros and needs no position; bad input is refused and leaves
 * the row alone. */
static void test_row_def_set_contact(void **state)
{
	(void)state;
	const double pa[3] = {0, 0, 0}, pb[3] = {0, 0, 2}, pt[3] = {1, 0, 1}, z[3] = {0, 0, 1};
	lk_row_def r = lk_default_row_def();
	r.c = 0.25;
	assert_int_equal(lk_row_def_set_contact(&r, 0, pa, 1, pb, pt, z), LK_OK);
	const double ja[6] = {0, 0, 1, 0, -1, 0}, jb[6] = {0, 0, -1, 0, 1, 0};
	for (int k = 0; k < 6; ++k) {
		assert_double_equal(r.J[0][k], ja[k], 0);
		assert_double_equal(r.J[1][k], jb[k], 0);
	}
	assert_int_equal(r.body[0], 0);
	assert_int_equal(r.body[1], 1);
	assert_double_equal(r.point[0], 1, 0);
	assert_double_equal(r.c, 0.25, 0); /* the rest is left as it was */
	/* against the world: the static side is zero, whatever was there */
	r.J[1][2] = 7;
	assert_int_equal(lk_row_def_set_contact(&r, 0, pa, LK_STATIC, NULL, pt, z), LK_OK);
	for (int k = 0; k < 6; ++k)
		assert_double_equal(r.J[1][k], 0, 0);
	assert_int_equal(r.body[1], LK_STATIC);
	/* refused */
	lk_row_def before = r;
	const double nan3[3] = {NAN, 0, 0};
	assert_int_equal(lk_row_def_set_contact(&r, 0, NULL, 1, pb, pt, z), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_row_def_set_contact(&r, 1, pa, 1, pb, pt, z), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_row_def_set_contact(NULL, 0, pa, 1, pb, pt, z), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_row_def_set_contact(&r, 0, pa, 1, pb, nan3, z), LK_ERR_NONFINITE);
	assert_int_equal(lk_row_def_set_contact(&r, 0, pa, 1, pb, pt, nan3), LK_ERR_NONFINITE);
	assert_memory_equal(&r, &before, sizeof r);
}

/* lk_problem_get_row gives back a row as it was added, from the hot record and the 56-byte cold one (the
 * problem keeps no copy of the definition): every field, the bounds of a friction row as given, and a static
 * side's J as zeros whatever the definition held there. */
static void test_get_row_as_added(void **state)
{
	(void)state;
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	lk_body_def b = lk_default_body_def();
	b.u[0] = 0.5;
	b.u[4] = -0.25;
	for (int k = 0; k < 3; ++k) {
		b.inv_mass[k] = 2.0;
		b.inv_inertia[4 * k] = 3.0;
	}
	assert_int_equal(lk_problem_add_body(p, &b, NULL), LK_OK);
	assert_int_equal(lk_problem_add_body(p, &b, NULL), LK_OK);
	lk_row_def rows[2];
	for (int i = 0; i < 2; ++i) {
		lk_row_def d = lk_default_row_def();
		d.body[0] = i;
		d.body[1] = i == 0 ? 1 : LK_STATIC;
		for (int k = 0; k < 6; ++k) {
			d.J[0][k] = 0.1 * (k + 1) + i;
			d.J[1][k] = -0.2 * (k + 1);
		}
		d.c = 0.3 + i;
		d.s = 1e-5 * (i + 1);
		d.lo = i == 0 ? 0.0 : -7.0;
		d.hi = i == 0 ? INFINITY : 7.0;
		d.mu = 0.4;
		d.findex = i == 0 ? -1 : 0;
		d.kind = i == 0 ? LK_ROW_NORMAL : LK_ROW_FRICTION;
		d.id = 1000u + (uint64_t)i;
		d.point[0] = 1.5;
		d.point[1] = -2.5 * i;
		d.point[2] = 3.5;
		rows[i] = d;
		assert_int_equal(lk_problem_add_row(p, &d, NULL), LK_OK);
	}
	for (int i = 0; i < 2; ++i) {
		lk_row_def g;
		assert_int_equal(lk_problem_get_row(p, i, &g), LK_OK);
		const lk_row_def *d = &rows[i];
		assert_int_equal(g.body[0], d->body[0]);
		assert_int_equal(g.body[1], d->body[1]);
		assert_memory_equal(g.J[0], d->J[0], sizeof g.J[0]);
		for (int k = 0; k < 6; ++k)
			assert_true(g.J[1][k] == (d->body[1] == LK_STATIC ? 0.0 : d->J[1][k]));
		assert_true(g.c == d->c && g.s == d->s && g.lo == d->lo && g.hi == d->hi && g.mu == d->mu);
		assert_int_equal(g.findex, d->findex);
		assert_int_equal(g.kind, d->kind);
		assert_true(g.id == d->id);
		assert_memory_equal(g.point, d->point, sizeof g.point);
		double lo, hi;
		assert_int_equal(lk_problem_get_bounds(p, i, &lo, &hi, NULL, NULL, NULL), LK_OK);
		assert_true(lo == d->lo && hi == d->hi);
	}
	lk_problem_destroy(p);
}

/* Huge pages (lk_set_huge_pages) change where a large problem's records live, never a result: the same
 * packing solved with them on and off gives bitwise the same lambda; on, records of 2 MiB or more start on a
 * 2 MiB boundary, off, on a 64-byte one at least. */
static void test_huge_pages(void **state)
{
	(void)state;
	assert_int_equal(lk_huge_pages(), 1);
	lk_problem *p[2];
	for (int k = 0; k < 2; ++k) {
		lk_set_huge_pages(k == 0);
		assert_int_equal(lk_huge_pages(), k == 0);
		p[k] = tu_generate("packing", 1200, 0.5); /* about 10,000 rows: 2.7 MB of records */
	}
	lk_set_huge_pages(1);
	const int n = lk_problem_row_count(p[0]);
	assert_true((size_t)n * sizeof(lk__row) >= ((size_t)2 << 20));
	assert_int_equal((uintptr_t)p[0]->rows % ((uintptr_t)2 << 20), 0);
	assert_int_equal((uintptr_t)p[1]->rows % 64, 0);
	lk_solver_config c = tu_spec("pgs:iters=15,warm=0");
	for (int k = 0; k < 2; ++k)
		assert_int_equal(lk_solve(p[k], &c, NULL, NULL), LK_OK);
	assert_memory_equal(lk_problem_lambda(p[0]), lk_problem_lambda(p[1]), (size_t)n * sizeof(double));
	lk_problem_destroy(p[0]);
	lk_problem_destroy(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_body_validation),
		cmocka_unit_test(test_huge_pages),
		cmocka_unit_test(test_get_row_as_added),
		cmocka_unit_test(test_row_validation),
		cmocka_unit_test(test_row_overflow),
		cmocka_unit_test(test_findex_checked_at_solve),
		cmocka_unit_test(test_matrix_validation),
		cmocka_unit_test(test_dense_assembly_by_hand),
		cmocka_unit_test(test_apply_matches_dense),
		cmocka_unit_test(test_sparse_assembly_matches_dense),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_config_parse),
		cmocka_unit_test(test_solve_rejects_bad_config),
		cmocka_unit_test(test_row_def_set_contact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

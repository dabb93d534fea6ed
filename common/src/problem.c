/* The problem: validated construction of both forms, storage, and the operations on A. */
/* madvise (MADV_HUGEPAGE) */
#define _DEFAULT_SOURCE
#include "problem.h"

#include "kernel.h"
#include "parallel.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define LK_MAX_ROWS (1 << 26)
#define LK_MAX_BODIES (1 << 26)
#define LK_MAX_NNZ ((int64_t)1 << 30)

/* --------------------------------------------------------------------------------------------- errors */

const char *lk_status_string(lk_status st)
{
	switch (st) {
	case LK_OK: return "ok";
	case LK_ERR_INVALID_ARGUMENT: return "invalid argument";
	case LK_ERR_NONFINITE: return "non-finite value";
	case LK_ERR_OUT_OF_RANGE: return "index out of range";
	case LK_ERR_BOUNDS: return "invalid bounds";
	case LK_ERR_FINDEX: return "invalid friction index";
	case LK_ERR_MASS: return "invalid mass";
	case LK_ERR_NO_MEMORY: return "out of memory";
	case LK_ERR_FORM: return "wrong problem form";
	case LK_ERR_STATE: return "wrong order of calls";
	case LK_ERR_IO: return "input/output error";
	case LK_ERR_PARSE: return "parse error";
	case LK_ERR_LIMIT: return "size limit exceeded";
	case LK_ERR_UNSUPPORTED: return "unsupported";
	}
	return "unknown status";
}

lk_status lk__fail(lk_problem *p, lk_status st, const char *fmt, ...)
{
	if (p) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(p->error, sizeof p->error, fmt, ap);
		va_end(ap);
	}
	return st;
}

void lk__clear_error(lk_problem *p)
{
	p->error[0] = '\0';
}

const char *lk_problem_error(const lk_problem *p)
{
	return p ? p->error : "no problem (NULL)";
}

/* ------------------------------------------------------------------------------------------ lifecycle */

lk_row_def lk_default_row_def(void)
{
	lk_row_def d;
	memset(&d, 0, sizeof d);
	d.body[0] = d.body[1] = LK_STATIC;
	d.lo = -INFINITY;
	d.hi = INFINITY;
	d.findex = -1;
	d.kind = LK_ROW_JOINT;
	return d;
}

lk_status lk_row_def_set_contact(lk_row_def *row, int a, const double pos_a[3], int b, const double pos_b[3],
                                 const double point[3], const double dir[3])
{
	if (!row || !point || !dir || (a != LK_STATIC && !pos_a) || (b != LK_STATIC && !pos_b) || a == b)
		return LK_ERR_INVALID_ARGUMENT;
	const double *pos[2] = {pos_a, pos_b};
	const int ids[2] = {a, b};
	for (int k = 0; k < 3; ++k)
		if (!isfinite(point[k]) || !isfinite(dir[k]) || (pos_a && a != LK_STATIC && !isfinite(pos_a[k])) ||
		    (pos_b && b != LK_STATIC && !isfinite(pos_b[k])))
			return LK_ERR_NONFINITE;
	for (int s = 0; s < 2; ++s) {
		const double sign = s ? -1.0 : 1.0;
		double r[3] = {0, 0, 0}, rxd[3];
		if (ids[s] != LK_STATIC)
			for (int k = 0; k < 3; ++k)
				r[k] = point[k] - pos[s][k];
		rxd[0] = r[1] * dir[2] - r[2] * dir[1];
		rxd[1] = r[2] * dir[0] - r[0] * dir[2];
		rxd[2] = r[0] * dir[1] - r[1] * dir[0];
		for (int k = 0; k < 3; ++k) {
			row->J[s][k] = ids[s] == LK_STATIC ? 0.0 : sign * dir[k];
			row->J[s][3 + k] = ids[s] == LK_STATIC ? 0.0 : sign * rxd[k];
		}
	}
	row->body[0] = a;
	row->body[1] = b;
	memcpy(row->point, point, sizeof row->point);
	return LK_OK;
}

lk_body_def lk_default_body_def(void)
{
	lk_body_def d;
	memset(&d, 0, sizeof d);
	return d;
}

lk_problem *lk_problem_create(lk_form form)
{
	if (form != LK_FORM_ROWS && form != LK_FORM_MATRIX)
		return NULL;
	lk_problem *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->form = form;
	p->du = aligned_alloc(64, LK_DU_STRIDE * sizeof(double));
	if (p->du)
		memset(p->du, 0, LK_DU_STRIDE * sizeof(double));
	if (!p->du) {
		free(p);
		return NULL;
	}
	return p;
}

void lk_problem_destroy(lk_problem *p)
{
	if (!p)
		return;
	free(p->bodies);
	free(p->cold);
	free(p->rows);
	free(p->lambda);
	free(p->inv_diag);
	free(p->link);
	free(p->du);
	free(p->row_ptr);
	free(p->col);
	free(p->val);
	free(p->qv);
	lk__pool_destroy(p->pool);
	lk__arena_free(&p->arena);
	free(p);
}

void lk_problem_clear(lk_problem *p)
{
	if (!p)
		return;
	p->nbodies = p->nrows = 0;
	p->nnz = 0;
	p->validated = 0;
	p->du_valid = 0;
	memset(p->du, 0, LK_DU_STRIDE * sizeof(double));
	lk__clear_error(p);
}

lk_form lk_problem_form(const lk_problem *p)
{
	return p ? p->form : LK_FORM_ROWS;
}

int lk_problem_row_count(const lk_problem *p)
{
	return p ? p->nrows : 0;
}

int lk_problem_body_count(const lk_problem *p)
{
	return p ? p->nbodies : 0;
}

static _Atomic int huge_pages = 1;

lk_status lk_problem_set_executor(lk_problem *p, const lk_executor *executor)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	lk__clear_error(p);
	if (executor && !executor->run)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "set_executor: the executor has no run function");
	if (executor) {
		p->executor = *executor;
		/* the problem's own threads are not needed while a scheduler is lent */
		lk__pool_destroy(p->pool);
		p->pool = NULL;
		p->pool_request = 0;
	} else {
		memset(&p->executor, 0, sizeof p->executor);
	}
	return LK_OK;
}

void lk_set_huge_pages(int on)
{
	atomic_store(&huge_pages, on != 0);
}

int lk_huge_pages(void)
{
	return atomic_load(&huge_pages);
}

/* 64-byte aligned storage; with lk_set_huge_pages on, an array of 2 MiB or more is aligned to 2 MiB and asked
 * for in huge pages (lcpkit.h). */
static void *big_alloc(size_t bytes)
{
	const size_t huge = (size_t)2 << 20;
	if (bytes < huge || !atomic_load_explicit(&huge_pages, memory_order_relaxed))
		return aligned_alloc(64, (bytes + 63) / 64 * 64);
	const size_t rounded = (bytes + huge - 1) / huge * huge;
	void *q = aligned_alloc(huge, rounded);
	if (q)
		madvise(q, rounded, MADV_HUGEPAGE);
	return q;
}

static int grow(void **ptr, int *cap, int need, size_t elem)
{
	if (need <= *cap)
		return 1;
	int nc = *cap ? *cap : 16;
	while (nc < need)
		nc = nc > (INT32_MAX / 2) ? need : nc * 2;
	void *q = realloc(*ptr, (size_t)nc * elem);
	if (!q)
		return 0;
	*ptr = q;
	*cap = nc;
	return 1;
}

static lk_status reserve_rows(lk_problem *p, int rows)
{
	if (rows <= p->cap_rows)
		return LK_OK;
	int nc = p->cap_rows ? p->cap_rows : 16;
	while (nc < rows)
		nc = nc > INT32_MAX / 2 ? rows : nc * 2;
	lk__row_cold *cold = realloc(p->cold, (size_t)nc * sizeof *cold);
	if (cold)
		p->cold = cold;
	double *lambda = realloc(p->lambda, (size_t)nc * sizeof *lambda);
	if (lambda)
		p->lambda = lambda;
	double *inv = realloc(p->inv_diag, (size_t)nc * sizeof *inv);
	if (inv)
		p->inv_diag = inv;
	lk__row_link *link = realloc(p->link, (size_t)nc * sizeof *link);
	if (link)
		p->link = link;
	/* the hot records are 64-byte aligned, so they cannot use realloc */
	lk__row *r = cold && lambda && inv && link ? big_alloc((size_t)nc * sizeof(lk__row)) : NULL;
	if (!r)
		return lk__fail(p, LK_ERR_NO_MEMORY, "out of memory reserving %d rows", rows);
	if (p->rows)
		memcpy(r, p->rows, (size_t)p->nrows * sizeof(lk__row));
	free(p->rows);
	p->rows = r;
	p->cap_rows = nc;
	return LK_OK;
}

static lk_status reserve_bodies(lk_problem *p, int bodies)
{
	int c1 = p->cap_bodies;
	if (!grow((void **)&p->bodies, &c1, bodies, sizeof(lk_body_def)))
		return lk__fail(p, LK_ERR_NO_MEMORY, "out of memory reserving %d bodies", bodies);
	if (c1 != p->cap_bodies || !p->du) {
		/* 64-byte aligned, so that each body's slot is one cache line (LK_DU_STRIDE): no realloc */
		size_t old = ((size_t)p->cap_bodies + 1) * LK_DU_STRIDE, want = ((size_t)c1 + 1) * LK_DU_STRIDE;
		double *du = big_alloc(want * sizeof(double));
		if (!du)
			return lk__fail(p, LK_ERR_NO_MEMORY, "out of memory reserving %d bodies", bodies);
		memset(du, 0, want * sizeof(double));
		if (p->du)
			memcpy(du, p->du, (old < want ? old : want) * sizeof(double));
		free(p->du);
		p->du = du;
	}
	p->cap_bodies = c1;
	return LK_OK;
}

lk_status lk_problem_reserve(lk_problem *p, int bodies, int rows)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	if (bodies < 0 || rows < 0 || bodies > LK_MAX_BODIES || rows > LK_MAX_ROWS)
		return lk__fail(p, LK_ERR_LIMIT, "reserve: %d bodies, %d rows outside 0..%d", bodies, rows,
		                LK_MAX_ROWS);
	lk_status st = reserve_bodies(p, bodies);
	if (st == LK_OK)
		st = reserve_rows(p, rows);
	return st;
}

/* ------------------------------------------------------------------------------------------ row form */

static int all_finite(const double *x, int n)
{
	for (int i = 0; i < n; ++i)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

/* Nonzero when one of x[0..n) is infinite or NaN (its exponent bits all ones): a test of every value without
 * a branch per value, which the compiler vectorises. */
static inline uint64_t any_nonfinite(const double *x, int n)
{
	const uint64_t exp = 0x7ff0000000000000u, unit = 0x0010000000000000u;
	uint64_t acc = 0;
	for (int k = 0; k < n; ++k) {
		uint64_t b;
		memcpy(&b, &x[k], sizeof b);
		acc |= (b & exp) + unit; /* carries into the sign bit only from an all-ones exponent */
	}
	return acc & 0x8000000000000000u;
}

/* The minors of a positive semidefinite inverse inertia are non-negative, up to rounding; scale is its trace
 * (of absolute values). */
static int inertia_psd(const double *I, double scale)
{
	/* every minor on its own (no fmin: a call each, and the test is the same) */
	const double m3 = I[0] * (I[4] * I[8] - I[5] * I[7]) - I[1] * (I[3] * I[8] - I[5] * I[6]) +
	                  I[2] * (I[3] * I[7] - I[4] * I[6]);
	const double t1 = -1e-12 * scale, t2 = -1e-9 * scale * scale, t3 = -1e-9 * scale * scale * scale;
	return (I[0] >= t1) & (I[4] >= t1) & (I[8] >= t1) & (I[0] * I[4] - I[1] * I[3] >= t2) &
	       (I[0] * I[8] - I[2] * I[6] >= t2) & (I[4] * I[8] - I[5] * I[7] >= t2) & (m3 >= t3);
}

static double inertia_scale(const double *I)
{
	return fabs(I[0]) + fabs(I[4]) + fabs(I[8]) + 1e-300;
}

/* Every rule a body definition must meet, LK_OK or the first rule broken, with its message. */
static lk_status check_body_def(lk_problem *p, const lk_body_def *d, int i)
{
	if (i >= LK_MAX_BODIES)
		return lk__fail(p, LK_ERR_LIMIT, "add_body: more than %d bodies", LK_MAX_BODIES);
	if (!all_finite(d->u, 6))
		return lk__fail(p, LK_ERR_NONFINITE, "body %d: velocity is not finite", i);
	if (!all_finite(d->inv_mass, 3) || !all_finite(d->inv_inertia, 9))
		return lk__fail(p, LK_ERR_NONFINITE, "body %d: inverse mass or inertia is not finite", i);
	for (int k = 0; k < 3; ++k)
		if (d->inv_mass[k] < 0)
			return lk__fail(p, LK_ERR_MASS, "body %d: negative inverse mass %g", i, d->inv_mass[k]);
	const double *I = d->inv_inertia;
	const double scale = inertia_scale(I);
	for (int r = 0; r < 3; ++r)
		for (int s = r + 1; s < 3; ++s)
			if (fabs(I[3 * r + s] - I[3 * s + r]) > 1e-9 * scale)
				return lk__fail(p, LK_ERR_MASS, "body %d: inverse inertia is not symmetric", i);
	if (!inertia_psd(I, scale))
		return lk__fail(p, LK_ERR_MASS, "body %d: inverse inertia is not positive semidefinite", i);
	return LK_OK;
}

/* The rules of check_body_def as one test without messages (no branch per rule in the common case); it implies
 * them all. */
static int body_def_plainly_valid(const lk_body_def *d, int i)
{
	const double *I = d->inv_inertia;
	const double scale = inertia_scale(I), tol = 1e-9 * scale;
	int ok = i < LK_MAX_BODIES;
	ok &= !(any_nonfinite(d->u, 6) | any_nonfinite(d->inv_mass, 3) | any_nonfinite(I, 9));
	ok &= d->inv_mass[0] >= 0 && d->inv_mass[1] >= 0 && d->inv_mass[2] >= 0;
	ok &= fabs(I[1] - I[3]) <= tol && fabs(I[2] - I[6]) <= tol && fabs(I[5] - I[7]) <= tol;
	return ok && inertia_psd(I, scale);
}

lk_status lk_problem_add_body(lk_problem *p, const lk_body_def *d, int *index_out)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	lk__clear_error(p);
	if (!d)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "add_body: definition is NULL");
	if (p->form != LK_FORM_ROWS)
		return lk__fail(p, LK_ERR_FORM, "add_body: the problem is in matrix form");
	if (p->nrows > 0)
		return lk__fail(p, LK_ERR_STATE, "add_body: bodies must be added before rows");
	const int i = p->nbodies;
	if (!body_def_plainly_valid(d, i)) {
		lk_status st = check_body_def(p, d, i);
		if (st != LK_OK)
			return st;
	}
	if (i >= p->cap_bodies) {
		lk_status st = reserve_bodies(p, i + 1);
		if (st != LK_OK)
			return st;
	}
	p->bodies[i] = *d;
	p->nbodies = i + 1;
	/* the new body's slot and the static slot after it: zeroing all of du here would make adding n bodies
	 * cost O(n^2) */
	memset(p->du + LK_DU_STRIDE * (size_t)i, 0, 2 * LK_DU_STRIDE * sizeof(double));
	p->du_valid = 0;
	p->validated = 0;
	if (index_out)
		*index_out = i;
	return LK_OK;
}

/* 1 / A_ii for the division-free sweeps; a row with A_ii <= 0 is never swept (lk__first_bad_diagonal). */
static double inv_diag_of(double diag)
{
	return diag > 0.0 ? 1.0 / diag : 0.0;
}

/* Every rule a row definition must meet before anything is derived from it; LK_OK or the first rule broken,
 * with its message. */
static lk_status check_row_def(lk_problem *p, const lk_row_def *d, int i)
{
	if (i >= LK_MAX_ROWS)
		return lk__fail(p, LK_ERR_LIMIT, "add_row: more than %d rows", LK_MAX_ROWS);
	for (int k = 0; k < 2; ++k)
		if (d->body[k] < LK_STATIC || d->body[k] >= p->nbodies)
			return lk__fail(p, LK_ERR_OUT_OF_RANGE, "row %d: body %d is out of range (%d bodies)", i,
			                d->body[k], p->nbodies);
	if (d->body[0] == LK_STATIC && d->body[1] == LK_STATIC)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "row %d: both bodies are the static world", i);
	if (d->body[0] == d->body[1])
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "row %d: both sides are body %d", i, d->body[0]);
	if (!all_finite(&d->J[0][0], 12))
		return lk__fail(p, LK_ERR_NONFINITE, "row %d: J is not finite", i);
	if (!isfinite(d->c) || !isfinite(d->s) || !isfinite(d->mu) || !all_finite(d->point, 3))
		return lk__fail(p, LK_ERR_NONFINITE, "row %d: c, s, mu or point is not finite", i);
	if (d->s < 0)
		return lk__fail(p, LK_ERR_BOUNDS, "row %d: negative constraint force mixing %g", i, d->s);
	if ((unsigned)d->kind >= LK_ROW_KIND_COUNT)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "row %d: unknown kind %d", i, (int)d->kind);
	if (d->findex < -1)
		return lk__fail(p, LK_ERR_FINDEX, "row %d: friction index %d is out of range", i, d->findex);
	if (d->findex == i)
		return lk__fail(p, LK_ERR_FINDEX, "row %d: friction index points at itself", i);
	if (d->findex >= 0) {
		if (d->mu < 0)
			return lk__fail(p, LK_ERR_BOUNDS, "row %d: negative friction coefficient %g", i, d->mu);
	} else {
		if (isnan(d->lo) || isnan(d->hi) || d->lo == INFINITY || d->hi == -INFINITY)
			return lk__fail(p, LK_ERR_NONFINITE, "row %d: bounds [%g, %g] are not valid", i, d->lo,
			                d->hi);
		if (d->lo > d->hi)
			return lk__fail(p, LK_ERR_BOUNDS, "row %d: lo %g > hi %g", i, d->lo, d->hi);
	}
	return LK_OK;
}

/* The rules of check_row_def as one test without messages (the common case costs a few dozen instructions
 * instead of a branch per value), except the finiteness of J, c and s: write_row finds those in the numbers it
 * makes anyway (a non-finite J, c or s makes J u* - c or A_ii non-finite, the static side's J included), and
 * overflow_message then says which rule was broken. With write_row, it implies every rule. */
static int row_def_plainly_valid(const lk_problem *p, const lk_row_def *d, int i)
{
	const int a = d->body[0], b = d->body[1];
	const double scalars[4] = {d->mu, d->point[0], d->point[1], d->point[2]};
	int ok = i < LK_MAX_ROWS && a >= LK_STATIC && a < p->nbodies && b >= LK_STATIC && b < p->nbodies && a != b;
	ok &= !any_nonfinite(scalars, 4);
	ok &= d->s >= 0 && (unsigned)d->kind < LK_ROW_KIND_COUNT && d->findex >= -1 && d->findex != i;
	if (d->findex >= 0)
		ok &= d->mu >= 0;
	else
		ok &= d->lo <= d->hi && d->lo != INFINITY && d->hi != -INFINITY; /* false for a NaN bound too */
	return ok;
}

/* The slow path of lk_problem_add_row: every check with its message. */
static lk_status add_row_checked(lk_problem *p, const lk_row_def *d, int i)
{
	if (!d)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "add_row: definition is NULL");
	if (p->form != LK_FORM_ROWS)
		return lk__fail(p, LK_ERR_FORM, "add_row: the problem is in matrix form");
	lk_status st = check_row_def(p, d, i);
	if (st == LK_OK && i >= p->cap_rows)
		st = reserve_rows(p, i + 1);
	return st;
}

/* Row i's record, cold part, 1 / A_ii and lambda from a plainly valid definition (row_def_plainly_valid), with
 * room reserved; nothing else of p is written, so rows of distinct i may be written at once (add_rows). The
 * derived numbers can still overflow for finite J, masses and velocities (|J| near 1e308 on a light body):
 * M^-1 J^T, A_ii = J M^-1 J^T + s or q = J u* - c; then what overflowed is returned (ROW_OVERFLOW_*, for
 * overflow_message) and the row is not to be counted, else ROW_WRITTEN. Every field of the record is written (it has no padding:
 * problem.h). A_ii and J u* are summed as the row kernels sum J du (lk__tree12). A static side contributes
 * nothing: its J is dropped, its slot is the zero sink. */
enum { ROW_WRITTEN, ROW_OVERFLOW_MJ_A, ROW_OVERFLOW_MJ_B, ROW_OVERFLOW_DIAG, ROW_OVERFLOW_Q };

/* One side of a row for write_row: its J and M^-1 J^T as three pairs each (lk__mass_times_jt's numbers: the
 * same products and sums, lane by lane) and its velocity; for the static side (b < 0) zeros, masked to +0, and
 * the still velocity. No branch and no array: the pairs stay in registers (arrays of pairs indexed by side, or
 * a branch per side, had them kept on the stack). */
typedef struct row_side {
	lk__v2d j0, j1, j2, m0, m1, m2;
	const double *u;
} row_side;

static inline __attribute__((always_inline)) row_side row_side_of(const lk_problem *p, int b, const double *J)
{
	static const lk_body_def none; /* the static side's masses and velocity: all 0 */
	typedef long long lk__v2i __attribute__((vector_size(16)));
	const lk_body_def *body = b >= 0 ? &p->bodies[b] : &none;
	const long long on = b >= 0 ? -1 : 0;
	const lk__v2i mask = {on, on};
	const double *m = body->inv_mass, *I = body->inv_inertia;
	const lk__v2d j0 = lk__ld2(J), j1 = lk__ld2(J + 2), j2 = lk__ld2(J + 4);
	const lk__v2d j3 = {J[3], J[3]}, j4 = {J[4], J[4]}, j5 = {J[5], J[5]};
	const lk__v2d m0 = lk__ld2(m) * j0;
	const lk__v2d m1 = {m[2] * J[2], I[0] * J[3] + I[1] * J[4] + I[2] * J[5]};
	const lk__v2d m2 = (lk__v2d){I[3], I[6]} * j3 + (lk__v2d){I[4], I[7]} * j4 + (lk__v2d){I[5], I[8]} * j5;
	row_side r;
	r.j0 = (lk__v2d)((lk__v2i)j0 & mask);
	r.j1 = (lk__v2d)((lk__v2i)j1 & mask);
	r.j2 = (lk__v2d)((lk__v2i)j2 & mask);
	r.m0 = (lk__v2d)((lk__v2i)m0 & mask);
	r.m1 = (lk__v2d)((lk__v2i)m1 & mask);
	r.m2 = (lk__v2d)((lk__v2i)m2 & mask);
	r.u = body->u;
	return r;
}

/* A side's pairs into its halves of the record's J and M^-1 J^T. */
static inline __attribute__((always_inline)) void store_side(const row_side *s, double *J, double *MJ)
{
	lk__st2(J, s->j0);
	lk__st2(J + 2, s->j1);
	lk__st2(J + 4, s->j2);
	lk__st2(MJ, s->m0);
	lk__st2(MJ + 2, s->m1);
	lk__st2(MJ + 4, s->m2);
}

static int write_row(lk_problem *p, const lk_row_def *d, int i)
{
	lk__row *r = &p->rows[i];
	/* J and M^-1 J^T as pairs of lanes in registers, stored into the record as pairs and summed from the
	 * registers: read back from the record, M^-1 J^T's pairs would each wait for two stores of one number */
	const row_side A = row_side_of(p, d->body[0], d->J[0]), B = row_side_of(p, d->body[1], d->J[1]);
	const double *u[2] = {A.u, B.u};
	store_side(&A, r->J, r->MJ);
	store_side(&B, r->J + 6, r->MJ + 6);
	const double diag = d->s + lk__tree12(A.j0, A.j1, A.j2, B.j0, B.j1, B.j2, A.m0, A.m1, A.m2, B.m0, B.m1, B.m2);
	/* from the definition's J, so that a static side's J (dropped from the record) times its zero velocity
	 * shows here if it is not finite; the same number as from the record's J otherwise */
	const double *dJ = &d->J[0][0];
	const double q = lk__tree12(lk__ld2(dJ), lk__ld2(dJ + 2), lk__ld2(dJ + 4), lk__ld2(dJ + 6), lk__ld2(dJ + 8),
	                            lk__ld2(dJ + 10), lk__ld2(u[0]), lk__ld2(u[0] + 2), lk__ld2(u[0] + 4),
	                            lk__ld2(u[1]), lk__ld2(u[1] + 2), lk__ld2(u[1] + 4)) -
	                 d->c;
	/* a non-finite J, c or s shows in q or A_ii (u* is finite: a term J_k u*_k is infinite or NaN, 0 times
	 * infinity, wherever J_k is), and so does a non-finite M^-1 J^T: a term J_k (M^-1 J^T)_k is infinite or
	 * NaN wherever (M^-1 J^T)_k is; overflow_message tells them apart */
	if (!isfinite(diag) || !isfinite(q)) {
		for (int k = 0; k < 12; ++k)
			if (!isfinite(r->MJ[k]))
				return k < 6 ? ROW_OVERFLOW_MJ_A : ROW_OVERFLOW_MJ_B;
		return !isfinite(diag) ? ROW_OVERFLOW_DIAG : ROW_OVERFLOW_Q;
	}
	const int friction = d->findex >= 0;
	r->q = q;
	r->s = d->s;
	r->diag = diag;
	r->lo = friction ? -INFINITY : d->lo;
	r->hi = friction ? INFINITY : d->hi;
	r->mu = d->mu;
	r->a = d->body[0] >= 0 ? d->body[0] : p->nbodies;
	r->b = d->body[1] >= 0 ? d->body[1] : p->nbodies;
	r->findex = d->findex;
	r->kind = (int32_t)d->kind;
	p->link[i] = (lk__row_link){r->a, r->b, r->findex, r->kind};
	p->inv_diag[i] = inv_diag_of(diag);
	lk__row_cold *cold = &p->cold[i];
	cold->c = d->c;
	cold->lo = d->lo;
	cold->hi = d->hi;
	memcpy(cold->point, d->point, sizeof cold->point);
	cold->id = d->id;
	p->lambda[i] = 0.0;
	return ROW_WRITTEN;
}

/* The message of write_row's refusal `why` of row i. */
static lk_status overflow_message(lk_problem *p, const lk_row_def *d, int i, int why)
{
	/* a non-finite J, c or s first, which row_def_plainly_valid leaves to write_row */
	lk_status st = check_row_def(p, d, i);
	if (st != LK_OK)
		return st;
	if (why == ROW_OVERFLOW_MJ_A || why == ROW_OVERFLOW_MJ_B)
		return lk__fail(p, LK_ERR_NONFINITE, "row %d: M^-1 J^T overflows on body %d", i,
		                d->body[why == ROW_OVERFLOW_MJ_A ? 0 : 1]);
	if (why == ROW_OVERFLOW_DIAG)
		return lk__fail(p, LK_ERR_NONFINITE, "row %d: A_ii = J M^-1 J^T + s overflows", i);
	return lk__fail(p, LK_ERR_NONFINITE, "row %d: J u* - c overflows", i);
}

lk_status lk_problem_add_row(lk_problem *p, const lk_row_def *d, int *index_out)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	const int i = p->nrows;
	/* the common case, a plainly valid row with room reserved, in one test; otherwise the checks that say
	 * what is wrong (and the reservation) */
	if (!d || p->form != LK_FORM_ROWS || i >= p->cap_rows || !row_def_plainly_valid(p, d, i)) {
		lk_status st = add_row_checked(p, d, i);
		if (st != LK_OK)
			return st;
	}
	lk__clear_error(p);
	/* made in the record's slot, which counts only once nrows does */
	const int why = write_row(p, d, i);
	if (why != ROW_WRITTEN)
		return overflow_message(p, d, i, why);
	p->nrows = i + 1;
	p->validated = 0;
	if (index_out)
		*index_out = i;
	return LK_OK;
}

/* lk_problem_add_rows and lk_problem_add_bodies: items base + k, k in [0, n), filled and written by `tasks`
 * tasks, each a contiguous share; a task stops at its first item that its fill refuses or that is not
 * plainly valid (or, a row, overflows). */
typedef struct add_job {
	lk_problem *p;
	int base, n, tasks;
	lk_row_fill_fn fill_row; /* one of the two fills, or the array of row definitions */
	lk_body_fill_fn fill_body;
	const lk_row_def *defs; /* lk_problem_add_row_array: row k is defs[order ? order[k] : k] */
	const int *order;
	void *arg;
	int first_bad[LK_MAX_THREADS]; /* per task: the lowest k that failed, or n */
} add_job;

/* Item k of a rows job from its definition d: checked and written as lk_problem_add_row does it. */
static inline int make_row_from(const add_job *j, const lk_row_def *d, int k)
{
	const int i = j->base + k;
	return row_def_plainly_valid(j->p, d, i) && write_row(j->p, d, i) == ROW_WRITTEN;
}

static inline int make_row(const add_job *j, int k)
{
	lk_row_def d;
	return j->fill_row(j->arg, k, &d) == LK_OK && make_row_from(j, &d, k);
}

/* The definition of item k of an array job. */
static inline const lk_row_def *array_def(const add_job *j, int k)
{
	return &j->defs[j->order ? j->order[k] : k];
}

/* make_row from the array, read in place (no copy of the definition). */
static inline int make_row_in_place(const add_job *j, int k)
{
	return make_row_from(j, array_def(j, k), k);
}

static inline int make_body(const add_job *j, int k)
{
	lk_body_def d;
	const int i = j->base + k;
	if (j->fill_body(j->arg, k, &d) != LK_OK || !body_def_plainly_valid(&d, i))
		return 0;
	/* the body's own slot; the static slot after the last is zeroed once all are written */
	j->p->bodies[i] = d;
	memset(j->p->du + LK_DU_STRIDE * (size_t)i, 0, LK_DU_STRIDE * sizeof(double));
	return 1;
}

/* What a job makes: bodies, rows from a fill, rows from an array. */
enum { ADD_BODIES, ADD_ROWS, ADD_ROW_ARRAY };

/* Task t's share; make_row, make_row_in_place or make_body inlined (no call through a pointer per item). */
static inline __attribute__((always_inline)) void add_share(add_job *j, int t, int what)
{
	int b, e;
	lk__share(j->n, t, j->tasks, &b, &e);
	j->first_bad[t] = j->n;
	for (int k = b; k < e; ++k)
		if (!(what == ADD_ROWS ? make_row(j, k) : what == ADD_ROW_ARRAY ? make_row_in_place(j, k)
		                                                                 : make_body(j, k))) {
			j->first_bad[t] = k;
			return;
		}
}

static void add_rows_task(void *arg, int t)
{
	add_share(arg, t, ADD_ROWS);
}

static void add_row_array_task(void *arg, int t)
{
	add_share(arg, t, ADD_ROW_ARRAY);
}

static void add_bodies_task(void *arg, int t)
{
	add_share(arg, t, ADD_BODIES);
}

lk__pool *lk__problem_pool(lk_problem *p, int threads)
{
	if (p->pool_request != threads) {
		lk__pool_destroy(p->pool);
		p->pool = lk__pool_create(threads);
		p->pool_request = threads;
	}
	return p->pool;
}

/* lk_problem_run_tasks on the problem's pool: thread t of nt runs tasks t, t + nt, ... */
typedef struct run_tasks_job {
	int tasks;
	lk_task_fn task;
	void *arg;
} run_tasks_job;

static void run_tasks_on_pool(void *arg, int t, int nt)
{
	const run_tasks_job *j = arg;
	for (int k = t; k < j->tasks; k += nt)
		j->task(j->arg, k);
}

lk_status lk_problem_run_tasks(lk_problem *p, int threads, int tasks, lk_task_fn task, void *arg)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	if (!task || tasks < 0 || threads < 1 || threads > LK_MAX_THREADS)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "run_tasks: %s", !task ? "task is NULL"
		                : tasks < 0 ? "negative task count" : "threads must lie in 1..64");
	lk__clear_error(p);
	if (tasks == 0)
		return LK_OK;
	if (threads > 1 && tasks > 1 && p->executor.run) {
		p->executor.run(p->executor.context, tasks, task, arg);
		return LK_OK;
	}
	lk__pool *pool = threads > 1 && tasks > 1 ? lk__problem_pool(p, threads) : NULL;
	run_tasks_job j = {tasks, task, arg};
	if (pool && lk__pool_threads(pool) > 1)
		lk__pool_run(pool, run_tasks_on_pool, &j);
	else
		run_tasks_on_pool(&j, 0, 1);
	return LK_OK;
}

/* The arguments of lk_problem_add_rows and lk_problem_add_bodies; LK_OK or the failure, with its message. */
static lk_status check_add_many(lk_problem *p, const char *what, const char *missing, int n, int threads,
                                int have, int limit)
{
	if (missing || n < 0 || threads < 1 || threads > LK_MAX_THREADS)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "add_%s: %s", what, missing ? missing
		                : n < 0 ? "negative count" : "threads must lie in 1..64");
	if (p->form != LK_FORM_ROWS)
		return lk__fail(p, LK_ERR_FORM, "add_%s: the problem is in matrix form", what);
	if (n > limit - have)
		return lk__fail(p, LK_ERR_LIMIT, "add_%s: more than %d %s", what, limit,
		                strcmp(what, "bodies") ? "rows" : "bodies");
	return LK_OK;
}

/* Item `bad` of the job (the first that failed), again and alone through lk_problem_add_row or
 * lk_problem_add_body, so that its status and message are theirs; nothing is added. */
static lk_status refuse_again(lk_problem *p, const add_job *j, int bad)
{
	const int rows = j->fill_row != NULL || j->defs != NULL;
	lk_row_def rd;
	lk_body_def bd;
	lk_status st = LK_OK;
	if (j->defs)
		rd = *array_def(j, bad);
	else
		st = rows ? j->fill_row(j->arg, bad, &rd) : j->fill_body(j->arg, bad, &bd);
	if (st != LK_OK)
		return lk__fail(p, st, "add_%s: %s %d: fill returned %s", rows ? "rows" : "bodies", rows ? "row" : "body",
		                j->base + bad, lk_status_string(st));
	int *count = rows ? &p->nrows : &p->nbodies;
	*count = j->base + bad;
	st = rows ? lk_problem_add_row(p, &rd, NULL) : lk_problem_add_body(p, &bd, NULL);
	*count = j->base;
	if (st == LK_OK)
		st = lk__fail(p, LK_ERR_INVALID_ARGUMENT, "add_%s: %s %d: fill gave another definition when asked again",
		              rows ? "rows" : "bodies", rows ? "row" : "body", j->base + bad);
	return st;
}

/* Runs the job's shares (one share on the caller below `min` items). LK_OK when every item was made; else
 * the lowest k that failed goes to *refused_out and its refusal, again and alone, is returned. */
static lk_status run_add_job(add_job *j, int threads, int min, lk_task_fn task, int *refused_out)
{
	j->tasks = threads > 1 && j->n >= min ? threads : 1;
	lk_problem_run_tasks(j->p, threads, j->tasks, task, j);
	int bad = j->n;
	for (int t = 0; t < j->tasks; ++t)
		bad = j->first_bad[t] < bad ? j->first_bad[t] : bad;
	if (bad == j->n)
		return LK_OK;
	if (refused_out)
		*refused_out = bad;
	return refuse_again(j->p, j, bad);
}

/* lk_problem_add_rows and lk_problem_add_row_array once their own arguments are checked. */
static lk_status add_rows_job(lk_problem *p, add_job *j, const char *what, const char *missing, int threads,
                              int *refused_out)
{
	lk_status st = check_add_many(p, what, missing, j->n, threads, j->base, LK_MAX_ROWS);
	if (st == LK_OK)
		st = reserve_rows(p, j->base + j->n);
	if (st != LK_OK)
		return st;
	st = run_add_job(j, threads, LK_PARALLEL_MIN_ROWS, j->defs ? add_row_array_task : add_rows_task, refused_out);
	if (st != LK_OK)
		return st;
	lk__clear_error(p);
	p->nrows = j->base + j->n;
	p->validated = 0;
	return LK_OK;
}

lk_status lk_problem_add_rows(lk_problem *p, int n, lk_row_fill_fn fill, void *arg, int threads, int *refused_out)
{
	if (refused_out)
		*refused_out = -1;
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	add_job j = {.p = p, .base = p->nrows, .n = n, .fill_row = fill, .arg = arg};
	return add_rows_job(p, &j, "rows", fill ? NULL : "fill is NULL", threads, refused_out);
}

lk_status lk_problem_add_row_array(lk_problem *p, int n, const lk_row_def *defs, const int *order, int threads,
                                   int *refused_out)
{
	if (refused_out)
		*refused_out = -1;
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	add_job j = {.p = p, .base = p->nrows, .n = n, .defs = defs, .order = order};
	for (int k = 0; defs && order && k < n; ++k)
		if (order[k] < 0 || order[k] >= n)
			return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "add_row_array: order[%d] = %d lies outside 0..%d", k,
			                order[k], n - 1);
	return add_rows_job(p, &j, "row_array", defs || n == 0 ? NULL : "defs is NULL", threads, refused_out);
}

lk_status lk_problem_add_bodies(lk_problem *p, int n, lk_body_fill_fn fill, void *arg, int threads,
                                int *refused_out)
{
	if (refused_out)
		*refused_out = -1;
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	const int base = p->nbodies;
	lk_status st = check_add_many(p, "bodies", fill ? NULL : "fill is NULL", n, threads, base, LK_MAX_BODIES);
	if (st == LK_OK && p->nrows > 0)
		st = lk__fail(p, LK_ERR_STATE, "add_bodies: bodies must be added before rows");
	if (st == LK_OK)
		st = reserve_bodies(p, base + n);
	if (st != LK_OK)
		return st;
	add_job j = {.p = p, .base = base, .n = n, .fill_body = fill, .arg = arg};
	st = run_add_job(&j, threads, LK_PARALLEL_MIN_BODIES, add_bodies_task, refused_out);
	if (st != LK_OK)
		return st;
	lk__clear_error(p);
	p->nbodies = base + n;
	memset(p->du + LK_DU_STRIDE * (size_t)p->nbodies, 0, LK_DU_STRIDE * sizeof(double));
	p->du_valid = 0;
	p->validated = 0;
	return LK_OK;
}

/* --------------------------------------------------------------------------------------- matrix form */

static lk_status check_row_scalars(lk_problem *p, int n, const double *q, const double *lo, const double *hi,
                                   const double *mu, const int *findex)
{
	for (int i = 0; i < n; ++i) {
		if (!isfinite(q[i]))
			return lk__fail(p, LK_ERR_NONFINITE, "row %d: q is not finite", i);
		int f = findex ? findex[i] : -1;
		if (f < -1 || f >= n)
			return lk__fail(p, LK_ERR_FINDEX, "row %d: friction index %d is out of range", i, f);
		if (f == i)
			return lk__fail(p, LK_ERR_FINDEX, "row %d: friction index points at itself", i);
		double m = mu ? mu[i] : 0.0;
		if (!isfinite(m) || m < 0)
			return lk__fail(p, LK_ERR_BOUNDS, "row %d: friction coefficient %g is not valid", i, m);
		if (f < 0) {
			double l = lo ? lo[i] : 0.0, h = hi ? hi[i] : INFINITY;
			if (isnan(l) || isnan(h) || l == INFINITY || h == -INFINITY)
				return lk__fail(p, LK_ERR_NONFINITE, "row %d: bounds [%g, %g] are not valid", i, l, h);
			if (l > h)
				return lk__fail(p, LK_ERR_BOUNDS, "row %d: lo %g > hi %g", i, l, h);
		}
	}
	return LK_OK;
}

lk_status lk_problem_set_matrix(lk_problem *p, int n, const int *row_ptr, const int *col, const double *val,
                                const double *q, const double *lo, const double *hi, const double *mu,
                                const int *findex)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	lk__clear_error(p);
	if (p->form != LK_FORM_MATRIX)
		return lk__fail(p, LK_ERR_FORM, "set_matrix: the problem is in row form");
	if (n < 0 || n > LK_MAX_ROWS)
		return lk__fail(p, LK_ERR_LIMIT, "set_matrix: size %d outside 0..%d", n, LK_MAX_ROWS);
	if (!row_ptr || !q || (n > 0 && (!col || !val) && row_ptr[n] > 0))
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "set_matrix: row_ptr, col, val or q is NULL");
	if (row_ptr[0] != 0)
		return lk__fail(p, LK_ERR_PARSE, "set_matrix: row_ptr[0] is %d, not 0", row_ptr[0]);
	for (int i = 0; i < n; ++i)
		if (row_ptr[i + 1] < row_ptr[i])
			return lk__fail(p, LK_ERR_PARSE, "set_matrix: row_ptr decreases at row %d", i);
	int64_t nnz = row_ptr[n];
	if (nnz > LK_MAX_NNZ)
		return lk__fail(p, LK_ERR_LIMIT, "set_matrix: %lld non-zeros exceed the limit", (long long)nnz);
	int *mark = malloc(((size_t)n + 1) * sizeof(int));
	if (!mark)
		return lk__fail(p, LK_ERR_NO_MEMORY, "set_matrix: out of memory");
	for (int i = 0; i < n; ++i)
		mark[i] = -1;
	lk_status st = LK_OK;
	for (int i = 0; i < n && st == LK_OK; ++i) {
		for (int k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
			if (col[k] < 0 || col[k] >= n) {
				st = lk__fail(p, LK_ERR_OUT_OF_RANGE, "row %d: column %d is out of range", i, col[k]);
				break;
			}
			if (mark[col[k]] == i) {
				st = lk__fail(p, LK_ERR_PARSE, "row %d: column %d appears twice", i, col[k]);
				break;
			}
			mark[col[k]] = i;
			if (!isfinite(val[k])) {
				st = lk__fail(p, LK_ERR_NONFINITE, "row %d: A(%d, %d) is not finite", i, i, col[k]);
				break;
			}
		}
	}
	free(mark);
	if (st == LK_OK)
		st = check_row_scalars(p, n, q, lo, hi, mu, findex);
	if (st != LK_OK)
		return st;

	/* everything is valid: now replace the contents */
	int need_rp = n + 1;
	int *c2 = realloc(p->col, ((size_t)nnz + 1) * sizeof(int));
	if (c2)
		p->col = c2;
	double *v2 = realloc(p->val, ((size_t)nnz + 1) * sizeof(double));
	if (v2)
		p->val = v2;
	int *rp = realloc(p->row_ptr, (size_t)need_rp * sizeof(int));
	if (rp)
		p->row_ptr = rp;
	double *qv = realloc(p->qv, ((size_t)n + 1) * sizeof(double));
	if (qv)
		p->qv = qv;
	if (!c2 || !v2 || !rp || !qv || reserve_rows(p, n) != LK_OK)
		return lk__fail(p, LK_ERR_NO_MEMORY, "set_matrix: out of memory");
	memcpy(p->row_ptr, row_ptr, (size_t)need_rp * sizeof(int));
	if (nnz > 0) {
		memcpy(p->col, col, (size_t)nnz * sizeof(int));
		memcpy(p->val, val, (size_t)nnz * sizeof(double));
	}
	memcpy(p->qv, q, (size_t)n * sizeof(double));
	for (int i = 0; i < n; ++i) {
		lk__row *r = &p->rows[i];
		memset(r, 0, sizeof *r);
		r->q = q[i];
		r->findex = findex ? findex[i] : -1;
		r->mu = mu ? mu[i] : 0.0;
		r->lo = r->findex >= 0 ? -INFINITY : (lo ? lo[i] : 0.0);
		r->hi = r->findex >= 0 ? INFINITY : (hi ? hi[i] : INFINITY);
		r->kind = r->findex >= 0 ? LK_ROW_FRICTION : LK_ROW_NORMAL;
		if (r->findex < 0 && !(r->lo == 0.0 && r->hi == INFINITY))
			r->kind = LK_ROW_JOINT;
		for (int k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
			if (col[k] == i)
				r->diag = val[k];
		p->inv_diag[i] = inv_diag_of(r->diag);
		p->link[i] = (lk__row_link){r->a, r->b, r->findex, r->kind};
		p->lambda[i] = 0.0;
	}
	p->nnz = (int)nnz;
	p->nrows = n;
	p->validated = 0;
	return LK_OK;
}

lk_status lk_problem_set_dense(lk_problem *p, int n, const double *A, const double *q, const double *lo,
                               const double *hi, const double *mu, const int *findex)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	lk__clear_error(p);
	if (n < 0 || n > 46340) /* n*n must fit an int */
		return lk__fail(p, LK_ERR_LIMIT, "set_dense: size %d outside 0..46340", n);
	if ((!A && n > 0) || !q)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "set_dense: A or q is NULL");
	int nnz = 0;
	for (int64_t k = 0; k < (int64_t)n * n; ++k)
		nnz += A[k] != 0.0;
	int *rp = malloc(((size_t)n + 1) * sizeof(int));
	int *col = malloc(((size_t)nnz + 1) * sizeof(int));
	double *val = malloc(((size_t)nnz + 1) * sizeof(double));
	lk_status st;
	if (!rp || !col || !val) {
		st = lk__fail(p, LK_ERR_NO_MEMORY, "set_dense: out of memory");
	} else {
		int k = 0;
		rp[0] = 0;
		for (int i = 0; i < n; ++i) {
			for (int j = 0; j < n; ++j) {
				double a = A[(size_t)i * n + j];
				if (a != 0.0) {
					col[k] = j;
					val[k++] = a;
				}
			}
			rp[i + 1] = k;
		}
		st = lk_problem_set_matrix(p, n, rp, col, val, q, lo, hi, mu, findex);
	}
	free(rp);
	free(col);
	free(val);
	return st;
}

/* ----------------------------------------------------------------------------------------- accessors */

const lk_body_def *lk_problem_body(const lk_problem *p, int i)
{
	if (!p || p->form != LK_FORM_ROWS || i < 0 || i >= p->nbodies)
		return NULL;
	return &p->bodies[i];
}

lk_status lk_problem_get_row(const lk_problem *p, int i, lk_row_def *out)
{
	if (!p || !out)
		return LK_ERR_INVALID_ARGUMENT;
	if (p->form != LK_FORM_ROWS)
		return LK_ERR_FORM;
	if (i < 0 || i >= p->nrows)
		return LK_ERR_OUT_OF_RANGE;
	const lk__row *r = &p->rows[i];
	const lk__row_cold *cold = &p->cold[i];
	out->body[0] = r->a == p->nbodies ? LK_STATIC : r->a;
	out->body[1] = r->b == p->nbodies ? LK_STATIC : r->b;
	memcpy(out->J[0], r->J, 6 * sizeof(double));
	memcpy(out->J[1], r->J + 6, 6 * sizeof(double));
	out->c = cold->c;
	out->s = r->s;
	out->lo = cold->lo;
	out->hi = cold->hi;
	out->mu = r->mu;
	out->findex = r->findex;
	out->kind = (lk_row_kind)r->kind;
	out->id = cold->id;
	memcpy(out->point, cold->point, sizeof out->point);
	return LK_OK;
}

lk_status lk_problem_get_matrix(const lk_problem *p, int *n, const int **row_ptr, const int **col,
                                const double **val, const double **q)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	if (p->form != LK_FORM_MATRIX)
		return LK_ERR_FORM;
	if (n)
		*n = p->nrows;
	if (row_ptr)
		*row_ptr = p->row_ptr;
	if (col)
		*col = p->col;
	if (val)
		*val = p->val;
	if (q)
		*q = p->qv;
	return LK_OK;
}

lk_status lk_problem_get_bounds(const lk_problem *p, int i, double *lo, double *hi, double *mu, int *findex,
                                lk_row_kind *kind)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	if (i < 0 || i >= p->nrows)
		return LK_ERR_OUT_OF_RANGE;
	const lk__row *r = &p->rows[i];
	if (p->form == LK_FORM_ROWS) {
		/* report the bounds as given, also for friction rows */
		if (lo)
			*lo = p->cold[i].lo;
		if (hi)
			*hi = p->cold[i].hi;
	} else {
		if (lo)
			*lo = r->lo;
		if (hi)
			*hi = r->hi;
	}
	if (mu)
		*mu = r->mu;
	if (findex)
		*findex = r->findex;
	if (kind)
		*kind = (lk_row_kind)r->kind;
	return LK_OK;
}

lk_status lk_problem_validate(lk_problem *p)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	const lk__row_link *link = p->link;
	for (int i = 0; i < p->nrows; ++i) {
		int f = link[i].findex;
		if (f < 0)
			continue;
		if (f >= p->nrows)
			return lk__fail(p, LK_ERR_FINDEX, "row %d: friction index %d is out of range (%d rows)", i, f,
			                p->nrows);
		if (f == i)
			return lk__fail(p, LK_ERR_FINDEX, "row %d: friction index points at itself", i);
		if (link[f].findex >= 0)
			return lk__fail(p, LK_ERR_FINDEX, "row %d: friction index %d points at another friction row", i,
			                f);
	}
	p->validated = 1;
	return LK_OK;
}

const double *lk_problem_lambda(const lk_problem *p)
{
	return p ? p->lambda : NULL;
}

lk_status lk_problem_set_lambda(lk_problem *p, const double *lambda, int n)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	lk__clear_error(p);
	if (!lambda && n > 0)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "set_lambda: lambda is NULL");
	if (n != p->nrows)
		return lk__fail(p, LK_ERR_OUT_OF_RANGE, "set_lambda: %d values for %d rows", n, p->nrows);
	if (!all_finite(lambda, n))
		return lk__fail(p, LK_ERR_NONFINITE, "set_lambda: lambda is not finite");
	if (n > 0)
		memcpy(p->lambda, lambda, (size_t)n * sizeof(double));
	p->du_valid = 0;
	return LK_OK;
}

/* ------------------------------------------------------------------------------------ operations on A */

void lk__recompute_du(lk_problem *p, const double *lambda, double *du)
{
	memset(du, 0, ((size_t)p->nbodies + 1) * LK_DU_STRIDE * sizeof(double));
	for (int i = 0; i < p->nrows; ++i)
		if (lambda[i] != 0.0)
			lk__row_apply(&p->rows[i], du, lambda[i]);
	/* the static slot only ever receives MJ = 0 */
	memset(du + LK_DU_STRIDE * (size_t)p->nbodies, 0, LK_DU_STRIDE * sizeof(double));
}

void lk__apply(const lk_problem *p, const double *x, double *w, int q_plus, double *tmp_du)
{
	if (p->form == LK_FORM_ROWS) {
		lk__recompute_du((lk_problem *)p, x, tmp_du);
		for (int i = 0; i < p->nrows; ++i) {
			const lk__row *r = &p->rows[i];
			double v = lk__row_w(r, tmp_du, x[i]);
			w[i] = q_plus ? v : v - r->q;
		}
	} else {
		for (int i = 0; i < p->nrows; ++i) {
			double v = q_plus ? p->rows[i].q : 0.0;
			for (int k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k)
				v += p->val[k] * x[p->col[k]];
			w[i] = v;
		}
	}
}

lk_status lk_problem_apply(lk_problem *p, const double *x, double *w, int q_plus)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	lk__clear_error(p);
	if (!x || !w)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "apply: x or w is NULL");
	double *tmp = NULL;
	if (p->form == LK_FORM_ROWS) {
		tmp = malloc(((size_t)p->nbodies + 1) * LK_DU_STRIDE * sizeof(double));
		if (!tmp)
			return lk__fail(p, LK_ERR_NO_MEMORY, "apply: out of memory");
	}
	lk__apply(p, x, w, q_plus, tmp);
	free(tmp);
	return LK_OK;
}

lk_status lk_problem_delta_velocity(const lk_problem *p, int body, double du[6])
{
	if (!p || !du)
		return LK_ERR_INVALID_ARGUMENT;
	if (p->form != LK_FORM_ROWS)
		return LK_ERR_FORM;
	if (body < 0 || body >= p->nbodies)
		return LK_ERR_OUT_OF_RANGE;
	if (!p->du_valid)
		lk__recompute_du((lk_problem *)p, p->lambda, p->du);
	((lk_problem *)p)->du_valid = 1;
	memcpy(du, p->du + LK_DU_STRIDE * (size_t)body, 6 * sizeof(double));
	return LK_OK;
}

lk_status lk_problem_diagonal(lk_problem *p, double *diag)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	if (!diag)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "diagonal: output is NULL");
	for (int i = 0; i < p->nrows; ++i)
		diag[i] = p->rows[i].diag;
	return LK_OK;
}

lk_status lk_problem_assemble_dense(lk_problem *p, int max_n, double *A, double *q)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	lk__clear_error(p);
	int n = p->nrows;
	if (n > max_n || n > 46340)
		return lk__fail(p, LK_ERR_LIMIT, "assemble_dense: %d rows exceed the limit %d", n, max_n);
	if (q)
		for (int i = 0; i < n; ++i)
			q[i] = p->rows[i].q;
	if (!A)
		return LK_OK;
	memset(A, 0, (size_t)n * n * sizeof(double));
	if (p->form == LK_FORM_MATRIX) {
		for (int i = 0; i < n; ++i)
			for (int k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k)
				A[(size_t)i * n + p->col[k]] = p->val[k];
		return LK_OK;
	}
	/* A_ij = J_i M^-1 J_j^T: rows sharing a body couple through that body's block */
	for (int i = 0; i < n; ++i)
		for (int j = 0; j < n; ++j)
			A[(size_t)i * n + j] = lk__a_entry(p, i, j);
	return LK_OK;
}

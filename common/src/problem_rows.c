/* The problem's row form: its bodies and rows, each definition checked against every rule before anything is
 * derived from it, then written into the row record (problem.h); one at a time or many at once, filled and
 * written on the problem's threads. */
#include "problem.h"

#include "kernel.h"
#include "parallel.h"

#include <string.h>

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
	if (!lk__all_finite(d->u, 6))
		return lk__fail(p, LK_ERR_NONFINITE, "body %d: velocity is not finite", i);
	if (!lk__all_finite(d->inv_mass, 3) || !lk__all_finite(d->inv_inertia, 9))
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
		lk_status st = lk__problem_reserve_bodies(p, i + 1);
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
	if (!lk__all_finite(&d->J[0][0], 12))
		return lk__fail(p, LK_ERR_NONFINITE, "row %d: J is not finite", i);
	if (!isfinite(d->c) || !isfinite(d->s) || !isfinite(d->mu) || !lk__all_finite(d->point, 3))
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
static inline int row_def_plainly_valid(const lk_problem *p, const lk_row_def *d, int i)
{
	/* every rule as a 0 or 1 combined with &, not && and ||: one branch for the row, not one per rule, in
	 * the loop that makes an engine's thousands of rows */
	const int a = d->body[0], b = d->body[1], f = d->findex, n = p->nbodies;
	const double scalars[4] = {d->mu, d->point[0], d->point[1], d->point[2]};
	int ok = (i < LK_MAX_ROWS) & (a >= LK_STATIC) & (a < n) & (b >= LK_STATIC) & (b < n) & (a != b);
	ok &= !any_nonfinite(scalars, 4);
	ok &= (d->s >= 0) & ((unsigned)d->kind < LK_ROW_KIND_COUNT) & (f >= -1) & (f != i);
	/* a friction row's own bounds are not read; the others' ordered (false for a NaN bound too) */
	const int bounds = (d->lo <= d->hi) & (d->lo != INFINITY) & (d->hi != -INFINITY);
	ok &= f >= 0 ? d->mu >= 0 : bounds;
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
		st = lk__problem_reserve_rows(p, i + 1);
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
	p->inv_diag[i] = lk__inv_diag_of(diag);
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
		st = lk__problem_reserve_rows(p, j->base + j->n);
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
		st = lk__problem_reserve_bodies(p, base + n);
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

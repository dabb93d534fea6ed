/* The problem: its errors, lifecycle and storage, the threads it runs tasks on, and the accessors. Its rows
 * are built in problem_rows.c (row form) and problem_matrix.c (matrix form); the operations on A are in
 * problem_ops.c. */
/* madvise (MADV_HUGEPAGE) */
#define _DEFAULT_SOURCE
#include "problem.h"

#include "parallel.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

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
	free(p->coarse_keep);
	lk__arena_free(&p->coarse_arena);
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

lk_status lk__problem_reserve_rows(lk_problem *p, int rows)
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

lk_status lk__problem_reserve_bodies(lk_problem *p, int bodies)
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
	lk_status st = lk__problem_reserve_bodies(p, bodies);
	if (st == LK_OK)
		st = lk__problem_reserve_rows(p, rows);
	return st;
}

/* ------------------------------------------------------------------------------------------- threads */

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

/* The first row whose A_ii is not positive, or -1: from 1 / A_ii, packed (0 exactly where A_ii > 0 fails: the
 * diagonals are finite in both forms), not from a cache line of each record */
static int scan_bad_diagonal(const lk_problem *p)
{
	for (int i = 0; i < p->nrows; ++i)
		if (!(p->inv_diag[i] > 0.0))
			return i;
	return -1;
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
	p->first_bad_diag = scan_bad_diagonal(p);
	p->validated = 1;
	return LK_OK;
}

int lk__first_bad_diagonal(const lk_problem *p)
{
	return p->validated ? p->first_bad_diag : scan_bad_diagonal(p);
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
	if (!lk__all_finite(lambda, n))
		return lk__fail(p, LK_ERR_NONFINITE, "set_lambda: lambda is not finite");
	if (n > 0)
		memcpy(p->lambda, lambda, (size_t)n * sizeof(double));
	p->du_valid = 0;
	return LK_OK;
}

/* The problem's matrix form: A in compressed rows (lk_problem_set_matrix) or dense (lk_problem_set_dense),
 * with q, the bounds and the friction indices, every value checked before the problem's contents are
 * replaced. */
#include "problem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LK_MAX_NNZ ((int64_t)1 << 30)

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
	if (!c2 || !v2 || !rp || !qv || lk__problem_reserve_rows(p, n) != LK_OK)
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
		p->inv_diag[i] = lk__inv_diag_of(r->diag);
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

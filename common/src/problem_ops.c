/* The operations on the problem's A: du = M^-1 J^T lambda, w = A x (+ q), a body's change of velocity, the
 * diagonal and A itself, dense or sparse. */
#include "problem.h"

#include "kernel.h"

#include <stdlib.h>
#include <string.h>

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

lk__body_rows *lk__body_rows_make(const lk_problem *p, lk__arena *a)
{
	const int n = p->nrows, nb = p->nbodies;
	lk__body_rows *br = lk__arena_alloc(a, sizeof *br);
	int *start = lk__arena_alloc(a, ((size_t)nb + 2) * sizeof(int));
	int *entry = lk__arena_alloc(a, (2 * (size_t)n + 1) * sizeof(int));
	if (!br || !start || !entry)
		return NULL;
	memset(start, 0, ((size_t)nb + 2) * sizeof(int));
	for (int i = 0; i < n; ++i) {
		const lk__row_link *r = &p->link[i];
		if (r->a < nb)
			start[r->a + 2]++;
		if (r->b < nb)
			start[r->b + 2]++;
	}
	for (int b = 0; b < nb; ++b)
		start[b + 2] += start[b + 1];
	/* start[b + 1] is now the first entry of body b: filled in row order, it ends at the next body's first */
	for (int i = 0; i < n; ++i) {
		const lk__row_link *r = &p->link[i];
		if (r->a < nb)
			entry[start[r->a + 1]++] = 2 * i;
		if (r->b < nb)
			entry[start[r->b + 1]++] = 2 * i + 1;
	}
	br->start = start;
	br->entry = entry;
	return br;
}

static int compare_int(const void *a, const void *b)
{
	const int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

lk_status lk_problem_assemble_sparse(lk_problem *p, int *row_ptr, int *col, double *val, double *q, int64_t capacity,
                                     int64_t *count)
{
	if (!p)
		return LK_ERR_INVALID_ARGUMENT;
	lk__clear_error(p);
	if (!row_ptr || !count)
		return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "assemble_sparse: row_ptr or count is NULL");
	const int n = p->nrows;
	if (q)
		for (int i = 0; i < n; ++i)
			q[i] = p->rows[i].q;
	const int fill = col && val;
	if (p->form == LK_FORM_MATRIX) {
		memcpy(row_ptr, p->row_ptr, ((size_t)n + 1) * sizeof(int));
		*count = p->nnz;
		const int64_t room = capacity < p->nnz ? (capacity > 0 ? capacity : 0) : p->nnz;
		if (fill && room > 0) {
			memcpy(col, p->col, (size_t)room * sizeof(int));
			memcpy(val, p->val, (size_t)room * sizeof(double));
		}
		return LK_OK;
	}
	/* the row form: A_ij = J_i M^-1 J_j^T + s_i [i = j] wherever rows i and j share a moving body (lk__a_entry),
	 * each row's columns those of its bodies' rows (lk__body_rows_make), in ascending order */
	const int nb = p->nbodies;
	lk__arena arena = {NULL};
	const lk__body_rows *br = lk__body_rows_make(p, &arena);
	int *mark = malloc(((size_t)n + 1) * sizeof(int)), *cols = malloc(((size_t)n + 1) * sizeof(int));
	if (!br || !mark || !cols) {
		lk__arena_free(&arena);
		free(mark);
		free(cols);
		return lk__fail(p, LK_ERR_NO_MEMORY, "assemble_sparse: out of memory for %d rows", n);
	}
	for (int i = 0; i < n; ++i)
		mark[i] = -1;
	lk_status st = LK_OK;
	int64_t nnz = 0;
	row_ptr[0] = 0;
	for (int i = 0; i < n && st == LK_OK; ++i) {
		const lk__row_link *r = &p->link[i];
		int m = 0;
		const int body[2] = {r->a, r->b};
		for (int s = 0; s < 2; ++s)
			for (int k = body[s] < nb ? br->start[body[s]] : 0; body[s] < nb && k < br->start[body[s] + 1]; ++k) {
				const int j = br->entry[k] >> 1;
				if (mark[j] != i) {
					mark[j] = i;
					cols[m++] = j;
				}
			}
		if (mark[i] != i) /* a row on no moving body: its CFM alone */
			cols[m++] = i;
		qsort(cols, (size_t)m, sizeof(int), compare_int);
		if (nnz + m > INT32_MAX) {
			st = lk__fail(p, LK_ERR_LIMIT, "assemble_sparse: more than %d entries", INT32_MAX);
			break;
		}
		for (int k = 0; fill && k < m && nnz + k < capacity; ++k) {
			col[nnz + k] = cols[k];
			val[nnz + k] = lk__a_entry(p, i, cols[k]);
		}
		nnz += m;
		row_ptr[i + 1] = (int)nnz;
	}
	lk__arena_free(&arena);
	free(mark);
	free(cols);
	*count = nnz;
	return st;
}

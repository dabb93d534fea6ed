/* Projected Gauss-Seidel and projected SOR for the boxed LCP with friction bounds.
 *
 * Erleben 2013 sec. 5.2-5.3: x_i <- mid(lo_i, x_i - w r_i / A_ii, hi_i) with r = A x + b, one row at a time,
 * so that every update sees the rows updated before it. In the row form r_i is evaluated matrix-free from
 * the per-body accumulator du = M^-1 J^T lambda (DESIGN section 2), O(12) per row. */
#include "internal.h"

#include <string.h>

int lk__first_bad_diagonal(const lk_problem *p)
{
	for (int i = 0; i < p->nrows; ++i)
		if (!(p->rows[i].diag > 0.0))
			return i;
	return -1;
}

/* The reference sweep: the update exactly as Erleben 2013 sec. 5.2 writes it, plain scalar code. */
double lk__pgs_sweep_ref(lk__ctx *c, const int *perm, int count, double w_relax)
{
	const lk_problem *p = c->p;
	double *lambda = c->lambda;
	double max_change = 0.0;
	if (p->form == LK_FORM_ROWS) {
		double *du = c->du;
		for (int k = 0; k < count; ++k) {
			int i = perm ? perm[k] : k;
			const lk__row *r = &p->rows[i];
			double lo, hi;
			lk__bounds(r, lambda, &lo, &hi);
			double w = lk__row_w_ref(r, du, lambda[i]);
			double next = lk__clamp(lambda[i] - w_relax * w / r->diag, lo, hi);
			double d = next - lambda[i];
			if (d != 0.0) {
				lambda[i] = next;
				lk__row_apply_ref(r, du, d);
			}
			/* written so that a NaN change wins */
			if (!(fabs(d) <= max_change))
				max_change = fabs(d);
		}
	} else {
		for (int k = 0; k < count; ++k) {
			int i = perm ? perm[k] : k;
			const lk__row *r = &p->rows[i];
			double lo, hi;
			lk__bounds(r, lambda, &lo, &hi);
			double w = lk__csr_w(p, i, lambda);
			double next = lk__clamp(lambda[i] - w_relax * w / r->diag, lo, hi);
			double d = next - lambda[i];
			lambda[i] = next;
			if (!(fabs(d) <= max_change))
				max_change = fabs(d);
		}
	}
	c->row_updates += count;
	return max_change;
}

/* Rows ahead whose records are prefetched: far enough to cover a miss to the last-level cache at the sweep's
 * pace (tens of nanoseconds per row), near enough that the lines are still in L1 when the row comes up. */
#ifndef LK_PGS_PREFETCH
#define LK_PGS_PREFETCH 6
#endif

static inline void prefetch_row(const lk__row *r)
{
	const char *x = (const char *)r;
	__builtin_prefetch(x, 0, 3);
	__builtin_prefetch(x + 64, 0, 3);
	__builtin_prefetch(x + 128, 0, 3);
	__builtin_prefetch(x + 192, 0, 3);
}

/* The production sweep of the row form. The same update as the reference, arranged for the chain that runs
 * through du from one row to the next (consecutive rows of a contact share both bodies):
 * - g J_i du (g = w_relax / A_ii, stored: a multiplication instead of a division) summed as two short trees
 *   in lk__row_jdu's order, with g applied to J_i, and the part of lambda_i - g w_i that does not wait for
 *   the rows before, lambda_i - g (q_i + s_i lambda_i), taken first: after the loads of du the chain carries
 *   one product, the sums and one difference;
 * - branch-free clamp and maximum, and the change applied unconditionally (adding 0 M^-1 J^T leaves du as it
 *   is, and no unpredictable branch stalls the chain);
 * - the two bodies' velocity slots kept in registers while consecutive rows act on the same pair (the rows of
 *   one contact, the 4 x 3 rows of a box on a box), so that the next row does not wait for the store of the
 *   last one to be forwarded to its loads; the slots are still stored after every row;
 * - records prefetched a few rows ahead.
 * lk__row_apply's arithmetic is kept operation for operation; w_i is rounded differently from lk__row_w. */
static double sweep_rows(lk__ctx *c, const int *perm, int count, double w_relax)
{
	const lk_problem *p = c->p;
	const lk__row *rows = p->rows;
	const double *inv = p->inv_diag;
	double *lambda = c->lambda, *du = c->du;
	double max_change = 0.0;
	int nonfinite = 0;
	int32_t pa = -1, pb = -1;
	lk__v2d a0 = {0, 0}, a1 = {0, 0}, a2 = {0, 0}, b0 = {0, 0}, b1 = {0, 0}, b2 = {0, 0};
	for (int k = 0; k < count; ++k) {
		int i;
		if (perm) {
			i = perm[k];
			if (k + LK_PGS_PREFETCH < count)
				prefetch_row(&rows[perm[k + LK_PGS_PREFETCH]]);
		} else {
			i = k;
			if (k + LK_PGS_PREFETCH < count)
				prefetch_row(&rows[k + LK_PGS_PREFETCH]);
		}
		const lk__row *r = &rows[i];
		double *da = du + 6 * (size_t)r->a, *db = du + 6 * (size_t)r->b;
		if (r->a != pa || r->b != pb) {
			a0 = lk__ld2(da);
			a1 = lk__ld2(da + 2);
			a2 = lk__ld2(da + 4);
			b0 = lk__ld2(db);
			b1 = lk__ld2(db + 2);
			b2 = lk__ld2(db + 4);
			pa = r->a;
			pb = r->b;
		}
		const double li = lambda[i], g = w_relax * inv[i];
		/* friction rows: [-mu |lambda_n|, mu |lambda_n|] (DESIGN sec. 2); the others their own bounds */
		double lo = r->lo, hi = r->hi;
		if (r->findex >= 0) {
			hi = r->mu * fabs(lambda[r->findex]);
			lo = -hi;
		}
		const double base = li - g * (r->q + r->s * li);
		/* g J_i du with g applied to J_i (which does not wait for anything) rather than to the sum */
		const lk__v2d gg = {g, g};
		lk__v2d sa = ((lk__ld2(r->J) * gg) * a0 + (lk__ld2(r->J + 2) * gg) * a1) + (lk__ld2(r->J + 4) * gg) * a2;
		lk__v2d sb = ((lk__ld2(r->J + 6) * gg) * b0 + (lk__ld2(r->J + 8) * gg) * b1) + (lk__ld2(r->J + 10) * gg) * b2;
		lk__v2d sj = sa + sb;
		double next = lk__clamp(base - (sj[0] + sj[1]), lo, hi);
		double d = next - li;
		lambda[i] = next;
		const lk__v2d dd = {d, d};
		a0 += lk__ld2(r->MJ) * dd;
		a1 += lk__ld2(r->MJ + 2) * dd;
		a2 += lk__ld2(r->MJ + 4) * dd;
		b0 += lk__ld2(r->MJ + 6) * dd;
		b1 += lk__ld2(r->MJ + 8) * dd;
		b2 += lk__ld2(r->MJ + 10) * dd;
		lk__st2(da, a0);
		lk__st2(da + 2, a1);
		lk__st2(da + 4, a2);
		lk__st2(db, b0);
		lk__st2(db + 2, b1);
		lk__st2(db + 4, b2);
		double ad = fabs(d);
		max_change = ad > max_change ? ad : max_change;
		nonfinite |= ad != ad;
	}
	c->row_updates += count;
	return nonfinite ? NAN : max_change;
}

double lk__pgs_sweep(lk__ctx *c, const int *perm, int count, double w_relax)
{
	if (c->p->form == LK_FORM_ROWS)
		return sweep_rows(c, perm, count, w_relax);
	const lk_problem *p = c->p;
	const double *inv = p->inv_diag;
	double *lambda = c->lambda;
	double max_change = 0.0;
	int nonfinite = 0;
	for (int k = 0; k < count; ++k) {
		int i = perm ? perm[k] : k;
		const lk__row *r = &p->rows[i];
		double lo, hi;
		lk__bounds(r, lambda, &lo, &hi);
		double w = lk__csr_w(p, i, lambda);
		double next = lk__clamp(lambda[i] - w * (w_relax * inv[i]), lo, hi);
		double d = next - lambda[i];
		lambda[i] = next;
		double ad = fabs(d);
		max_change = ad > max_change ? ad : max_change;
		nonfinite |= ad != ad;
	}
	c->row_updates += count;
	return nonfinite ? NAN : max_change;
}

lk_status lk__solve_pgs(lk__ctx *c)
{
	const lk_solver_config *cfg = c->cfg;
	int bad = lk__first_bad_diagonal(c->p);
	if (bad >= 0) {
		c->stop = LK_STOP_BAD_DIAGONAL;
		return LK_OK;
	}
	/* PGS is PSOR with w = 1 by default; "pgs:w=1.3" is the over-relaxed sweep ODE's quickstep uses */
	double w_relax = cfg->sor_w;
	int *perm = NULL;
	if (cfg->order != LK_ORDER_NATURAL) {
		perm = lk__arena_alloc(&c->p->arena, (size_t)c->n * sizeof(int));
		if (!perm)
			return lk__fail(c->p, LK_ERR_NO_MEMORY, "pgs: out of memory for %d rows", c->n);
		lk_status st = lk__order_build(c, perm);
		if (st != LK_OK)
			return st;
	}
	for (int it = 1;; ++it) {
		if (cfg->order == LK_ORDER_RANDOM)
			lk__shuffle(&c->rng, perm, c->n);
		double change = lk__pgs_sweep(c, perm, c->n, w_relax);
		c->iterations = it;
		c->stop = lk__monitor(c, it, change);
		if (c->stop != LK_STOP_NONE)
			break;
	}
	return LK_OK;
}

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

/* The production sweep of the row form. The same update as the reference, arranged for the chain that runs
 * through du from one row to the next (consecutive rows of a contact share both bodies):
 * - g J_i du (g = w_relax / A_ii, stored: a multiplication instead of a division) through the sweep cursor
 *   (internal.h), and the part of lambda_i - g w_i that does not wait for the rows before,
 *   lambda_i - g (q_i + s_i lambda_i), taken first: after the loads of du the chain carries one product, the
 *   sums and one difference;
 * - branch-free clamp and maximum, and the change applied unconditionally;
 * - the two bodies' velocity slots kept in registers while consecutive rows act on the same pair;
 * - records prefetched a few rows ahead.
 * lk__row_apply's arithmetic is kept operation for operation; w_i is rounded differently from lk__row_w.
 * `staggered` (the set sweeps of ESP and GSP, ordering.c): a friction row whose box is {0} gets 0, and is
 * skipped when its lambda is 0 already. `err` (or NULL) receives 1/2 sum H_i^2 over the rows swept (Poulsen
 * et al. eq. 22), each H_i from w just before row i's update. */
static inline __attribute__((always_inline)) double sweep_rows_impl(lk__ctx *c, const int *perm, int count,
                                                                     double w_relax, int staggered, double *err)
{
	const lk_problem *p = c->p;
	const lk__row *rows = p->rows;
	const double *inv = p->inv_diag;
	double *lambda = c->lambda, *du = c->du;
	const double inv_w = 1.0 / w_relax;
	double max_change = 0.0, hh = 0.0;
	int nonfinite = 0;
	lk__pair_cursor cur;
	lk__cursor_init(&cur);
	for (int k = 0; k < count; ++k) {
		lk__prefetch_ahead(rows, perm, k, count);
		const int i = perm ? perm[k] : k;
		const lk__row *r = &rows[i];
		const double li = lambda[i], g = w_relax * inv[i];
		/* friction rows: [-mu |lambda_n|, mu |lambda_n|] (DESIGN sec. 2); the others their own bounds */
		double lo = r->lo, hi = r->hi;
		if (r->findex >= 0) {
			hi = r->mu * fabs(lambda[r->findex]);
			lo = -hi;
		}
		/* the staggered schedules: a friction row whose box is {0} gets 0 whatever w is */
		const int zero_box = staggered && r->findex >= 0 && hi == 0.0;
		if (zero_box && li == 0.0) {
			/* nothing moves and H = 0; the split term prepared for this row is dropped */
			cur.ready = 0;
			continue;
		}
		const double base = li - g * (r->q + r->s * li);
		const double step = base - lk__cursor_gjdu(&cur, r, du, g);
		const double next = zero_box ? 0.0 : lk__clamp(step, lo, hi);
		if (err) {
			/* w recovered off the chain from the step: w_i = (lambda_i - (lambda_i - g w_i)) A_ii / w */
			double w = (li - step) * (r->diag * inv_w);
			double h = zero_box ? li : li - lk__clamp(li - w, lo, hi);
			hh += h * h;
		}
		const double d = next - li;
		lambda[i] = next;
		const int in = k + 1 < count ? (perm ? perm[k + 1] : k + 1) : -1;
		lk__cursor_apply(&cur, r, du, d, in >= 0 ? &rows[in] : NULL, in >= 0 ? w_relax * inv[in] : 0.0);
		double ad = fabs(d);
		max_change = ad > max_change ? ad : max_change;
		nonfinite |= ad != ad;
	}
	c->row_updates += count;
	if (err)
		*err = 0.5 * hh;
	return nonfinite ? NAN : max_change;
}

double lk__pgs_sweep_set(lk__ctx *c, const int *rows, int count, double w_relax, double *err)
{
	/* two specialisations, with and without the error (sweep_rows_impl is always inlined) */
	if (err)
		return sweep_rows_impl(c, rows, count, w_relax, 1, err);
	return sweep_rows_impl(c, rows, count, w_relax, 1, NULL);
}

double lk__pgs_sweep(lk__ctx *c, const int *perm, int count, double w_relax)
{
	if (c->p->form == LK_FORM_ROWS)
		return sweep_rows_impl(c, perm, count, w_relax, 0, NULL);
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

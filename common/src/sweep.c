/* The sweep layer: the projected Gauss-Seidel row update in its production and reference forms, the modulus
 * iteration of AMGS on the same skeleton, and the loop every Gauss-Seidel method runs.
 *
 * Erleben 2013 sec. 5.2-5.3: x_i <- mid(lo_i, x_i - w r_i / A_ii, hi_i) with r = A x + b, one row at a time,
 * so that every update sees the rows updated before it. In the row form r_i is evaluated matrix-free from
 * the per-body accumulator du = M^-1 J^T lambda (docs/maths.md), O(12) per row. */
#include "sweep.h"

#include "cone_local.h"
#include "kernel.h"
#include "ordering.h"
#include "parallel.h"

#include <math.h>
#include <string.h>

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
	lk__count(c, count, LK_WORK_SWEEP_ROW);
	return max_change;
}

/* The production sweep of the row form. The same update as the reference, arranged for the chain that runs
 * through du from one row to the next (consecutive rows of a contact share both bodies):
 * - g J_i du (g = w_relax / A_ii, stored: a multiplication instead of a division) through the sweep cursor
 *   (kernel.h), and the part of lambda_i - g w_i that does not wait for the rows before,
 *   lambda_i - g (q_i + s_i lambda_i), taken first: the chain from one row to the next carries the slots'
 *   update, the product with J and one difference;
 * - branch-free clamp and maximum, and the change applied unconditionally; in a permutation the bounds
 *   chosen without a branch too (lk__bounds_select);
 * - the two bodies' velocity slots kept in registers while consecutive rows act on the same pair, and stored
 *   when the pair changes and after the last row;
 * - records prefetched a few rows ahead, and the velocity slots of the rows a few ahead of the current one.
 * lk__row_apply's arithmetic is kept operation for operation; w_i is rounded differently from lk__row_w.
 * `staggered` (the set sweeps of ESP and GSP, ordering.c): a friction row whose box is {0} gets 0, and is
 * skipped when its lambda is 0 already. `err` (or NULL) receives 1/2 sum H_i^2 over the rows swept (Poulsen
 * et al. eq. 22), each H_i from w just before row i's update. */
static inline __attribute__((always_inline)) double sweep_rows_loop(lk__ctx *c, const int *perm, int count,
                                                                     double w_relax, int staggered, double *err,
                                                                     const double *gh, double *y, int par,
                                                                     int far, int base, int paired,
                                                                     lk__sweep_sums *sums)
{
	const lk_problem *p = c->p;
	const lk__row *rows = p->rows;
	const double *inv = p->inv_diag;
	double *lambda = c->lambda, *du = c->du;
	const double inv_w = gh ? 1.0 : 1.0 / w_relax;
	double max_change = 0.0, hh = 0.0;
	double sum_change = 0.0; /* NaN once a change was: one sum a row, where a test was four instructions */
	double dvmax = 0.0, q2 = 0.0, nq = 0.0; /* sums: the largest velocity correction, the q's squares */
	lk__pair_cursor cur;
	lk__cursor_init(&cur, par, p->nbodies);
	for (int k = 0; k < count; ++k) {
		lk__prefetch_ahead(perm ? rows : rows + base, perm, k, count);
		lk__prefetch_du(perm ? rows : rows + base, perm, du, k, count, far);
		const int i = perm ? perm[k] : base + k;
		const lk__row *r = &rows[i];
		const double li = lambda[i], g = gh ? gh[2 * i] : w_relax * inv[i];
		/* friction rows: [-mu |lambda_n|, mu |lambda_n|] (docs/maths.md); the others their own bounds. In a
		 * permutation without a branch (lk__bounds_select); in the records' own order the engines' layouts (a
		 * contact's rows together, or the normals before the friction rows) make the branch predictable, and
		 * there the selection's extra instructions cost more than the branch */
		double lo, hi;
		if (perm)
			lk__bounds_select(r, lambda, i, &lo, &hi);
		else
			lk__bounds(r, lambda, &lo, &hi);
		/* a friction row whose box is {0} (its contact open) and whose lambda is 0 stays there whatever w is:
		 * nothing moves and H = 0, and its product is not needed. The staggered schedules give such a row 0 even
		 * where its lambda is not (the modulus iteration keeps its y_i, which moves) */
		const int zero_box = r->findex >= 0 && hi == 0.0;
		if (zero_box && li == 0.0 && !gh)
			continue;
		/* the modulus iteration keeps y_i, whose own part relaxes towards lambda_i by h_i (amgs.c, (M3)) */
		const double own = gh ? y[i] + gh[2 * i + 1] * (li - y[i]) : li;
		const double part = own - g * (r->q + r->s * li);
		const double step = part - lk__cursor_gjdu(&cur, r, du, g, paired);
		const double next = staggered && zero_box ? 0.0 : lk__clamp(step, lo, hi);
		if (gh)
			y[i] = step;
		if (err) {
			/* w recovered off the chain from the step: w_i = (lambda_i - (lambda_i - g w_i)) A_ii / w */
			double w = (li - step) * (r->diag * inv_w);
			double h = staggered && zero_box ? li : li - lk__clamp(li - w, lo, hi);
			hh += h * h;
		}
		const double d = next - li;
		lambda[i] = next;
		lk__cursor_apply(&cur, r, du, d, paired);
		double ad = fabs(d);
		max_change = ad > max_change ? ad : max_change;
		sum_change += ad;
		if (sums) {
			const double dv = fabs(d * r->diag);
			dvmax = dv > dvmax ? dv : dvmax;
			if (sums->want_scale) {
				const double counted = r->findex < 0; /* no friction row */
				q2 += counted * (r->q * r->q);
				nq += counted;
			}
		}
	}
	lk__cursor_flush(&cur);
	if (!par) /* a thread's share of a parallel sweep: the sweep counts its rows once */
		lk__count(c, count, LK_WORK_SWEEP_ROW);
	if (err)
		*err = 0.5 * hh;
	if (sums) {
		sums->dvmax = dvmax > sums->dvmax ? dvmax : sums->dvmax;
		sums->q2 += q2;
		sums->nq += nq;
	}
	return sum_change != sum_change ? NAN : max_change;
}

/* sweep_rows_loop with and without the velocity slots' prefetch (kernel.h, LK_DU_PREFETCH_MIN_BODIES), and
 * with and without a permutation: four loops, so that the row loop tests neither the problem's size nor
 * perm at every row (the natural order's loop indexes the records directly: 11 instructions a row fewer;
 * on ODE's 32 ragdolls 141.4 M to 128.1 M instructions for the sweeps, docs/benchmarks.md); the latency
 * order's two more without the sweep cursor's pair test, its consecutive rows rarely sharing a body. Rows
 * perm[0..count), or with perm NULL rows base..base + count. */
static inline __attribute__((always_inline)) double sweep_rows_at(lk__ctx *c, const int *perm, int base,
                                                                   int count, double w_relax, int staggered,
                                                                   double *err, const double *gh, double *y,
                                                                   int par, lk__sweep_sums *sums)
{
	const int far = c->p->nbodies >= LK_DU_PREFETCH_MIN_BODIES;
	if (!perm)
		return far ? sweep_rows_loop(c, NULL, count, w_relax, staggered, err, gh, y, par, 1, base, 1, sums)
		           : sweep_rows_loop(c, NULL, count, w_relax, staggered, err, gh, y, par, 0, base, 1, sums);
	if (perm == c->latency)
		return far ? sweep_rows_loop(c, perm, count, w_relax, staggered, err, gh, y, par, 1, base, 0, sums)
		           : sweep_rows_loop(c, perm, count, w_relax, staggered, err, gh, y, par, 0, base, 0, sums);
	return far ? sweep_rows_loop(c, perm, count, w_relax, staggered, err, gh, y, par, 1, base, 1, sums)
	           : sweep_rows_loop(c, perm, count, w_relax, staggered, err, gh, y, par, 0, base, 1, sums);
}

static inline __attribute__((always_inline)) double sweep_rows_impl(lk__ctx *c, const int *perm, int count,
                                                                     double w_relax, int staggered, double *err,
                                                                     const double *gh, double *y, int par,
                                                                     lk__sweep_sums *sums)
{
	return sweep_rows_at(c, perm, 0, count, w_relax, staggered, err, gh, y, par, sums);
}

double lk__pgs_sweep_set(lk__ctx *c, const int *rows, int count, double w_relax, double *err)
{
	/* two specialisations, with and without the error (sweep_rows_impl is always inlined) */
	if (err)
		return sweep_rows_impl(c, rows, count, w_relax, 1, err, NULL, NULL, 0, NULL);
	return sweep_rows_impl(c, rows, count, w_relax, 1, NULL, NULL, NULL, 0, NULL);
}

/* The matrix form (CSR): w_i from row i of A; PGS/PSOR (gh NULL: g_i = w_relax / A_ii) or the modulus
 * iteration (gh, y), on one skeleton as in the row form. */
static inline __attribute__((always_inline)) double sweep_csr_impl(lk__ctx *c, const int *perm, int count,
                                                                    double w_relax, const double *gh, double *y)
{
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
		const double li = lambda[i], g = gh ? gh[2 * i] : w_relax * inv[i];
		const double own = gh ? y[i] + gh[2 * i + 1] * (li - y[i]) : li;
		const double step = own - g * lk__csr_w(p, i, lambda);
		const double next = lk__clamp(step, lo, hi), d = next - li;
		if (gh)
			y[i] = step;
		lambda[i] = next;
		double ad = fabs(d);
		max_change = ad > max_change ? ad : max_change;
		nonfinite |= ad != ad;
	}
	lk__count(c, count, LK_WORK_SWEEP_ROW);
	return nonfinite ? NAN : max_change;
}

/* ------------------------------------------------------------------------------- the colour order */

/* Thread t's share of colour k: positions [*b, *e) of the colour order, an even split of the colour's rows
 * snapped to the nearest group starts, so that every group (in the part order, every part) is swept whole by
 * one thread; the serial colour is thread 0's. */
static void colour_share(const lk__colouring *col, int k, int t, int nt, int *b, int *e)
{
	const int g0 = col->colour_group[k], g1 = col->colour_group[k + 1];
	const int p0 = col->group_pos[g0], p1 = col->group_pos[g1];
	if (col->serial && k == col->ncolours - 1) {
		*b = t == 0 ? p0 : p1;
		*e = p1;
		return;
	}
	int ends[2];
	for (int side = 0; side < 2; ++side) {
		const int target = p0 + (int)((int64_t)(p1 - p0) * (t + side) / nt);
		int lo = g0, hi = g1; /* the first group starting at or after target */
		while (lo < hi) {
			const int mid = lo + (hi - lo) / 2;
			if (col->group_pos[mid] < target)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* or the one before it, if that starts nearer: the part order's units are whole parts, and the next
		 * start after the middle of two parts can be the end of the colour */
		if (lo > g0 && target - col->group_pos[lo - 1] < col->group_pos[lo] - target)
			--lo;
		ends[side] = col->group_pos[lo];
	}
	*b = ends[0];
	*e = ends[1];
}

typedef struct colour_job {
	lk__ctx *c;
	double w_relax;
	const double *gh;
	double *y;
	double change[LK_MAX_THREADS];
	int want_sums;
	lk__sweep_sums sums[LK_MAX_THREADS]; /* want_sums: each thread's, added in thread order */
} colour_job;

/* Thread (or task) t of nt sweeps its share of colour k; the largest change goes into j->change[t] (a NaN
 * wins). */
static inline void sweep_share(colour_job *j, int k, int t, int nt)
{
	lk__ctx *c = j->c;
	int b, e;
	const lk__colouring *col = c->colouring;
	colour_share(col, k, t, nt, &b, &e);
	if (e <= b)
		return;
	double ch = 0.0;
	if (!col->run_pos) {
		ch = j->want_sums ? sweep_rows_impl(c, col->perm + b, e - b, j->w_relax, 0, NULL, j->gh, j->y, 1, &j->sums[t])
		                  : sweep_rows_impl(c, col->perm + b, e - b, j->w_relax, 0, NULL, j->gh, j->y, 1, NULL);
	} else {
		/* run by run, each a stretch of consecutive records swept as the natural order sweeps them: the same
		 * rows in the same order, so the same lambda to the bit */
		int lo = 0, hi = col->nruns; /* the run holding position b */
		while (hi - lo > 1) {
			const int mid = lo + (hi - lo) / 2;
			if (col->run_pos[mid] <= b)
				lo = mid;
			else
				hi = mid;
		}
		for (int r = lo, s = b; s < e; s = col->run_pos[++r]) {
			const int end = col->run_pos[r + 1] < e ? col->run_pos[r + 1] : e;
			const double x = j->want_sums ? sweep_rows_at(c, NULL, col->perm[s], end - s, j->w_relax, 0, NULL, j->gh,
			                                              j->y, 1, &j->sums[t])
			                              : sweep_rows_at(c, NULL, col->perm[s], end - s, j->w_relax, 0, NULL, j->gh,
			                                              j->y, 1, NULL);
			if (!(x <= ch))
				ch = x;
		}
	}
	if (!(ch <= j->change[t]))
		j->change[t] = ch;
}

/* One sweep of the colour order on thread t of nt: its share of every colour, then the barrier, so that the
 * next colour reads what this one wrote. */
static void colour_sweep_job(void *arg, int t, int nt)
{
	colour_job *j = arg;
	const lk__colouring *col = j->c->colouring;
	for (int k = 0; k < col->ncolours; ++k) {
		sweep_share(j, k, t, nt);
		if (nt > 1)
			lk__pool_barrier(j->c->pool);
	}
}

/* One colour of a sweep as a lent scheduler's tasks (lk_problem_set_executor): no barrier inside a task,
 * since a scheduler need not run its tasks at once; a call per colour instead. */
typedef struct colour_task_job {
	colour_job *j;
	int colour;
} colour_task_job;

static void colour_task(void *arg, int t)
{
	const colour_task_job *tj = arg;
	sweep_share(tj->j, tj->colour, t, tj->j->c->tasks);
}

static void colour_sweep_lent(lk__ctx *c, colour_job *j)
{
	const lk__colouring *col = c->colouring;
	for (int k = 0; k < col->ncolours; ++k) {
		colour_task_job tj = {j, k};
		if (col->serial && k == col->ncolours - 1)
			colour_task(&tj, 0); /* the serial colour is one task's: the caller's */
		else
			c->ex->run(c->ex->context, c->tasks, colour_task, &tj);
	}
}

/* A sweep in the colour order, on the problem's threads when it has them (or the scheduler lent to it): each
 * thread's rows are the same whatever their number, and no two threads touch one body within a colour, so
 * the result is bitwise the same on any number of threads. */
static double colour_sweep(lk__ctx *c, double w_relax, const double *gh, double *y, lk__sweep_sums *sums)
{
	colour_job j = {.c = c, .w_relax = w_relax, .gh = gh, .y = y, .want_sums = sums != NULL};
	for (int t = 0; sums && t < LK_MAX_THREADS; ++t)
		j.sums[t].want_scale = sums->want_scale;
	int nt = c->tasks;
	if (c->ex) {
		colour_sweep_lent(c, &j);
	} else {
		nt = lk__pool_threads(c->pool);
		if (nt > 1)
			lk__pool_run(c->pool, colour_sweep_job, &j);
		else
			colour_sweep_job(&j, 0, 1);
	}
	double m = 0.0;
	for (int t = 0; t < nt; ++t) {
		if (!(j.change[t] <= m))
			m = j.change[t];
		if (sums) {
			sums->dvmax = fmax(sums->dvmax, j.sums[t].dvmax);
			sums->q2 += j.sums[t].q2;
			sums->nq += j.sums[t].nq;
		}
	}
	lk__count(c, c->n, LK_WORK_SWEEP_ROW);
	return m;
}

/* Whether a sweep over perm is a whole sweep of the colour order (then colour_sweep runs it). */
static inline int colour_order(const lk__ctx *c, const int *perm, int count)
{
	return c->colouring && perm == c->colouring->perm && count == c->n && c->p->form == LK_FORM_ROWS;
}

double lk__pgs_sweep(lk__ctx *c, const int *perm, int count, double w_relax)
{
	if (colour_order(c, perm, count))
		return colour_sweep(c, w_relax, NULL, NULL, NULL);
	if (c->p->form == LK_FORM_ROWS)
		return sweep_rows_impl(c, perm, count, w_relax, 0, NULL, NULL, NULL, 0, NULL);
	return sweep_csr_impl(c, perm, count, w_relax, NULL, NULL);
}

double lk__pgs_sweep_sums(lk__ctx *c, const int *perm, double w_relax, lk__sweep_sums *sums)
{
	sums->dvmax = sums->q2 = sums->nq = 0.0; /* want_scale as the caller set it */
	if (colour_order(c, perm, c->n))
		return colour_sweep(c, w_relax, NULL, NULL, sums);
	if (c->p->form == LK_FORM_ROWS)
		return sweep_rows_impl(c, perm, c->n, w_relax, 0, NULL, NULL, NULL, 0, sums);
	/* the matrix form: the sums from the change of lambda and the diagonal, q from the problem's array */
	double *before = c->w;
	memcpy(before, c->lambda, (size_t)c->n * sizeof(double));
	const double change = sweep_csr_impl(c, perm, c->n, w_relax, NULL, NULL);
	for (int i = 0; i < c->n; ++i) {
		const lk__row *r = &c->p->rows[i];
		sums->dvmax = fmax(sums->dvmax, fabs((c->lambda[i] - before[i]) * r->diag));
		if (sums->want_scale && r->findex < 0) {
			sums->q2 += r->q * r->q;
			sums->nq += 1;
		}
	}
	return change;
}

/* A contact of the cone sweep's local solve: its normal row, its block and the block's inverse once made (state 1),
 * not made yet (0) or without an inverse (-1). */
typedef struct lk__cone_contact {
	lk__block3 W, inv;
	int normal, state;
} lk__cone_contact;

/* Whether the friction pair at rows t, t + 1 and its normal row are a contact the local solve takes: a normal row
 * with the bounds [0, inf), one mu (and, in the row form, the three rows on one pair of bodies). Where the rows lie
 * is free: Siconos's problems put a contact's three rows together, the engines all the normal rows first. */
static int local_contact(const lk_problem *p, int t)
{
	const lk__row *t1 = &p->rows[t], *t2 = &p->rows[t + 1], *n = &p->rows[t1->findex];
	return n->findex < 0 && n->lo == 0.0 && n->hi == INFINITY && t1->mu == t2->mu &&
	       (p->form != LK_FORM_ROWS || (t1->a == n->a && t1->b == n->b && t2->a == n->a && t2->b == n->b));
}

/* The contact's rows: its normal row, then its pair at t */
static inline void contact_rows(const lk__cone_contact *k, int t, int rows[3])
{
	rows[0] = k->normal;
	rows[1] = t;
	rows[2] = t + 1;
}

/* The block of A and its inverse of the contact whose pair is at t, made the first time its solve needs them (a
 * contact that stays open never does); 0 where the inverse does not exist (lk__block3_invert), for good. */
static int contact_block(const lk_problem *p, lk__cone_contact *k, int t)
{
	if (k->state == 0) {
		int rows[3];
		contact_rows(k, t, rows);
		for (int i = 0; i < 3; ++i)
			for (int j = 0; j < 3; ++j)
				k->W.m[i][j] = i == j ? p->rows[rows[i]].diag : lk__a_entry(p, rows[i], rows[j]);
		k->state = lk__block3_invert(&k->W, &k->inv) ? 1 : -1;
	}
	return k->state > 0;
}

/* The contacts of the local solve, found on the first cone sweep of a solve: at[t] is the index of the contact whose
 * friction pair starts at row t, CONE_NORMAL at a contact's normal row (swept with its pair), else -1 (NULL where
 * there is no memory: every contact then takes the one-step update). A pair is found as the sweep finds it. */
#define CONE_NORMAL (-2)
static const int *cone_contacts(lk__ctx *c)
{
	if (c->cone_at)
		return c->cone_at;
	lk_problem *p = c->p;
	int *at = lk__arena_alloc(&p->arena, (size_t)c->n * sizeof *at), count = 0;
	if (!at)
		return NULL;
	for (int i = 0; i < c->n; ++i)
		at[i] = -1;
	for (int t = 0; t < c->n; ++t)
		if (lk__cone_pair(p, t)) {
			const int f = p->rows[t].findex;
			if (at[f] == -1 && local_contact(p, t)) {
				at[f] = CONE_NORMAL;
				at[t] = count++;
			}
			++t;
		}
	lk__cone_contact *k = lk__arena_alloc(&p->arena, (size_t)count * sizeof *k + 1);
	if (!k)
		return NULL;
	for (int t = 0; t < c->n; ++t)
		if (at[t] >= 0)
			k[at[t]] = (lk__cone_contact){.normal = p->rows[t].findex, .state = 0};
	c->cone_contacts = k;
	c->cone_at = at;
	return at;
}

/* The contact of pair t solved whole (lk__cone_local_solve), relaxed by w_relax and put back into the cone; 0 with
 * nothing changed where the local solve declines. */
static int contact_update(lk__ctx *c, lk__cone_contact *k, int t, double w_relax, double *max_change)
{
	lk_problem *p = c->p;
	double *lambda = c->lambda, *du = c->du, u[3], l[3], r[3];
	int rows[3];
	contact_rows(k, t, rows);
	for (int i = 0; i < 3; ++i)
		l[i] = r[i] = lambda[rows[i]];
	u[0] = lk__w(p, rows[0], lambda, du);
	if (l[0] == 0 && l[1] == 0 && l[2] == 0 && u[0] >= 0)
		return 1; /* open, and stays open (b = u): its friction rows' velocities are not needed */
	u[1] = lk__w(p, rows[1], lambda, du);
	u[2] = lk__w(p, rows[2], lambda, du);
	if (!contact_block(p, k, t) || !lk__cone_local_solve(&k->W, &k->inv, u, p->rows[t].mu, r))
		return 0;
	if (w_relax != 1.0) {
		for (int i = 0; i < 3; ++i)
			r[i] = l[i] + w_relax * (r[i] - l[i]);
		r[0] = r[0] > 0 ? r[0] : 0.0;
		lk__disc_project(&r[1], &r[2], p->rows[t].mu * r[0]);
	}
	for (int i = 0; i < 3; ++i) {
		const double d = r[i] - l[i];
		lambda[rows[i]] = r[i];
		if (p->form == LK_FORM_ROWS && d != 0.0)
			lk__row_apply(&p->rows[rows[i]], du, d);
		const double ad = fabs(d);
		*max_change = ad > *max_change || ad != ad ? ad : *max_change;
	}
	return 1;
}

/* The one-step update of row i that is no pair's: its w, the clamp into its bounds (a friction row's from its normal
 * row's lambda) */
static inline void row_step(lk__ctx *c, int i, double w_relax, double *max_change, int *nonfinite)
{
	lk_problem *p = c->p;
	const lk__row *r = &p->rows[i];
	double *lambda = c->lambda, lo, hi;
	lk__bounds(r, lambda, &lo, &hi);
	const double w = lk__w(p, i, lambda, c->du);
	const double next = lk__clamp(lambda[i] - w * (w_relax * p->inv_diag[i]), lo, hi), d = next - lambda[i];
	lambda[i] = next;
	if (p->form == LK_FORM_ROWS)
		lk__row_apply(r, c->du, d);
	const double ad = fabs(d);
	*max_change = ad > *max_change ? ad : *max_change;
	*nonfinite |= ad != ad;
}

/* The one-step update of the friction pair at i: one projected gradient step with a common step rho. The fixed point
 * of lambda_T = P_disc(lambda_T - rho w_T) is Coulomb's law for any rho > 0, which a separate step per row (1 / A_ii
 * each) would not give where the two rows' A_ii differ; rho = w / max A_ii keeps the step within the pair's own
 * curvature */
static inline void pair_step(lk__ctx *c, int i, double w_relax, double *max_change, int *nonfinite)
{
	lk_problem *p = c->p;
	const lk__row *r = &p->rows[i], *r1 = &p->rows[i + 1];
	double *lambda = c->lambda, *du = c->du, lo, hi;
	lk__bounds(r, lambda, &lo, &hi);
	if (hi == 0 && lambda[i] == 0 && lambda[i + 1] == 0)
		return; /* a disc of radius 0 keeps the pair at 0 whatever w is: an open contact's pair costs no product */
	const int rows_form = p->form == LK_FORM_ROWS;
	const double w0 = lk__w(p, i, lambda, du), w1 = lk__w(p, i + 1, lambda, du);
	const double dmax = r->diag > r1->diag ? r->diag : r1->diag;
	const double rho = dmax > 0 ? w_relax / dmax : 0.0;
	double x = lambda[i] - rho * w0, y = lambda[i + 1] - rho * w1;
	lk__disc_project(&x, &y, hi);
	const double d[2] = {x - lambda[i], y - lambda[i + 1]};
	for (int k = 0; k < 2; ++k) {
		lambda[i + k] += d[k];
		if (rows_form && d[k] != 0.0)
			lk__row_apply(&p->rows[i + k], du, d[k]);
		const double ad = fabs(d[k]);
		*max_change = ad > *max_change ? ad : *max_change;
		*nonfinite |= ad != ad;
	}
}

double lk__pgs_sweep_cone(lk__ctx *c, double w_relax)
{
	const lk_problem *p = c->p;
	const int *at = c->cfg->cone_local ? cone_contacts(c) : NULL;
	double max_change = 0.0;
	int nonfinite = 0;
	for (int i = 0; i < c->n; ++i) {
		if (at && at[i] == CONE_NORMAL)
			continue; /* updated with its pair */
		if (at && at[i] >= 0) {
			lk__cone_contact *k = &c->cone_contacts[at[i]];
			if (k->state >= 0 && contact_update(c, k, i, w_relax, &max_change)) {
				++i;
				continue;
			}
			row_step(c, k->normal, w_relax, &max_change, &nonfinite); /* the contact's one-step update */
		}
		if (lk__cone_pair(p, i)) {
			pair_step(c, i, w_relax, &max_change, &nonfinite);
			++i;
		} else {
			row_step(c, i, w_relax, &max_change, &nonfinite);
		}
	}
	lk__count(c, c->n, LK_WORK_SWEEP_ROW);
	return nonfinite ? NAN : max_change;
}

double lk__modulus_sweep(lk__ctx *c, const double *gh, double *y, const int *perm)
{
	if (colour_order(c, perm, c->n))
		return colour_sweep(c, 1.0, gh, y, NULL);
	if (c->p->form == LK_FORM_ROWS)
		return sweep_rows_impl(c, perm, c->n, 1.0, 0, NULL, gh, y, 0, NULL);
	return sweep_csr_impl(c, perm, c->n, 1.0, gh, y);
}

int *lk__latency_perm(lk__ctx *c, double sweeps)
{
	/* the latency order (ordering.c): the natural order's iterates, in fewer cycles a sweep, on a problem in
	 * cache and where its making (about half a sweep's instructions) is paid back by the sweeps to come */
	sweeps = fmin(sweeps, lk__work_budget_left(c) / c->n);
	if (c->cfg->order != LK_ORDER_NATURAL || !c->cfg->order_latency || c->p->form != LK_FORM_ROWS ||
	    c->n < LK_LATENCY_MIN_ROWS || c->n > LK_LATENCY_MAX_ROWS || sweeps < LK_LATENCY_MIN_SWEEPS)
		return NULL;
	int *perm = lk__arena_alloc(&c->p->arena, (size_t)c->n * sizeof(int));
	if (!perm || !lk__latency_order(c->p, perm))
		return NULL;
	c->latency = perm;
	return perm;
}

lk_status lk__sweep_order(lk__ctx *c, int staggered_ok, int **perm_out)
{
	*perm_out = NULL;
	if (c->cfg->order == LK_ORDER_NATURAL) {
		*perm_out = lk__latency_perm(c, (double)c->cfg->max_iterations);
		return LK_OK;
	}
	if (!staggered_ok && (c->cfg->order == LK_ORDER_ESP || c->cfg->order == LK_ORDER_GSP))
		return lk__fail(c->p, LK_ERR_UNSUPPORTED, "%s: the staggered schedule %s applies to PGS and PSOR only",
		                lk_method_name(c->cfg->method), lk_order_name(c->cfg->order));
	int *perm = lk__arena_alloc(&c->p->arena, (size_t)c->n * sizeof(int));
	if (!perm)
		return lk__fail(c->p, LK_ERR_NO_MEMORY, "%s: out of memory for %d rows", lk_method_name(c->cfg->method),
		                c->n);
	lk_status st = lk__order_build(c, perm);
	if (st != LK_OK)
		return st;
	*perm_out = perm;
	return LK_OK;
}

void lk__sweep_until_stop(lk__ctx *c, int *perm, lk__sweep_fn sweep, void *user)
{
	c->step_work = c->n * LK_WORK_SWEEP_ROW;
	for (int it = 1;; ++it) {
		if (c->cfg->order == LK_ORDER_RANDOM)
			lk__shuffle(&c->rng, perm, c->n);
		double change = sweep(c, perm, user);
		c->iterations = it;
		c->stop = lk__monitor(c, it, change);
		if (c->stop != LK_STOP_NONE)
			return;
	}
}

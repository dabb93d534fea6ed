/* The product A x of the row form, w = J M^-1 J^T x (+ q), on the solve's threads, for the methods that work
 * with whole products instead of sweeps: APGD and MPRGP take it from here, PGS-SM the slots of its subspace
 * products (docs/solvers.md, "Products on threads").
 *
 * One thread makes du = M^-1 J^T x by adding each row's M^-1 J^T x_i into its two bodies' slots, row after
 * row (lk__recompute_du). On threads each body gathers its own slot instead: the rows that act on it, in row
 * order (a list made once a solve), each adding M^-1 J^T x_i exactly as the scatter does. A slot's sum is then
 * the same sum in the same order as on one thread, and w_i = J_i du (+ q_i) is made row by row from it: the
 * product is the same to the bit on any number of threads. */
#include "context.h"
#include "parallel.h"

#include "kernel.h"

#include <string.h>

/* Runs fn(arg, t, nt) for t < nt on the solve's threads (its pool, or as tasks of a lent scheduler); nt is what
 * they are. */
typedef struct ctx_run {
	void (*fn)(void *arg, int t, int nt);
	void *arg;
	int nt;
} ctx_run;

static void ctx_task(void *arg, int t)
{
	const ctx_run *r = arg;
	r->fn(r->arg, t, r->nt);
}

void lk__ctx_run(lk__ctx *c, void (*fn)(void *arg, int t, int nt), void *arg)
{
	if (c->ex) {
		ctx_run r = {fn, arg, c->tasks};
		c->ex->run(c->ex->context, c->tasks, ctx_task, &r);
	} else if (c->pool) {
		lk__pool_run(c->pool, fn, arg);
	} else {
		fn(arg, 0, 1);
	}
}

/* Gathering the slots: row i's x is x[i] (pos NULL) or x[pos[i]] for the rows with pos[i] >= 0. */
typedef struct slots_job {
	const lk_problem *p;
	const lk__body_rows *br;
	const int *pos;
	const double *x;
	double *du;
} slots_job;

static void slots_share(void *arg, int t, int nt)
{
	const slots_job *j = arg;
	const lk_problem *p = j->p;
	const int nb = p->nbodies;
	int b0, b1;
	lk__share(nb, t, nt, &b0, &b1);
	const lk__v2d z = {0, 0};
	for (int b = b0; b < b1; ++b) {
		lk__v2d s0 = z, s1 = z, s2 = z;
		for (int k = j->br->start[b]; k < j->br->start[b + 1]; ++k) {
			const int e = j->br->entry[k], i = e >> 1;
			const int at = j->pos ? j->pos[i] : i;
			if (at < 0)
				continue;
			const double xi = j->x[at];
			if (xi == 0.0) /* as lk__recompute_du, which skips these rows */
				continue;
			const double *mj = p->rows[i].MJ + 6 * (e & 1);
			const lk__v2d d = {xi, xi};
			s0 += lk__ld2(mj) * d;
			s1 += lk__ld2(mj + 2) * d;
			s2 += lk__ld2(mj + 4) * d;
		}
		double *slot = j->du + LK_DU_STRIDE * (size_t)b;
		lk__st2(slot, s0);
		lk__st2(slot + 2, s1);
		lk__st2(slot + 4, s2);
		lk__st2(slot + 6, z); /* the padding, as lk__recompute_du leaves it */
	}
}

void lk__gather_slots(lk__ctx *c, const lk__body_rows *br, const int *pos, const double *x, double *du)
{
	/* the static world's slot, which the rows read: M^-1 J^T is 0 on its side */
	memset(du + LK_DU_STRIDE * (size_t)c->p->nbodies, 0, LK_DU_STRIDE * sizeof(double));
	slots_job j = {c->p, br, pos, x, du};
	lk__ctx_run(c, slots_share, &j);
}

typedef struct rows_job {
	const lk_problem *p;
	const double *x, *du;
	double *w;
	int q_plus;
} rows_job;

static void rows_share(void *arg, int t, int nt)
{
	const rows_job *j = arg;
	const int n = j->p->nrows;
	int i0, i1;
	lk__share(n, t, nt, &i0, &i1);
	for (int i = i0; i < i1; ++i) {
		const lk__row *r = &j->p->rows[i];
		const double v = lk__row_w(r, j->du, j->x[i]);
		j->w[i] = j->q_plus ? v : v - r->q;
	}
}

void lk__product(lk__ctx *c, const lk__body_rows *br, const double *x, double *w, int q_plus, double *du)
{
	lk_problem *p = c->p;
	if (!br || !(c->pool || c->ex) || p->form != LK_FORM_ROWS) {
		lk__apply(p, x, w, q_plus, du);
		return;
	}
	/* the slots, then (every slot made) the rows */
	lk__gather_slots(c, br, NULL, x, du);
	rows_job j = {p, x, du, w, q_plus};
	lk__ctx_run(c, rows_share, &j);
}

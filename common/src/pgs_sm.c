/* Projected Gauss-Seidel with subspace minimization (PGS-SM).
 *
 * Silcowitz, Niebe & Erleben, "Projected Gauss-Seidel Subspace Minimization Method for Interactive Rigid Body
 * Dynamics", sec. 4.3: every outer iteration runs a PGS phase of k_pgs sweeps to estimate which rows sit on
 * a bound, then up to k_sm subspace steps, each of which
 *   - splits the rows into L (lambda at its lower bound), U (at its upper bound) and A (strictly inside),
 *     eq. (19), with friction bounds taken from the normal row's lambda,
 *   - solves the reduced system A_AA lambda_A = -(b_A + A_AL l_L + A_AU u_U), eq. (22), by conjugate
 *     gradients, matrix-free: A_AA p goes through J and M^-1 (row form) or the CSR rows (matrix form),
 *   - updates the friction bounds (alg. line 13), projects lambda_A onto them, eq. (24), and puts the rows
 *     of L and U on their (updated) bounds (line 15).
 * Stopping: the merit below tol_abs, eq. (25); the active set unchanged over an outer iteration with lambda
 * solving (22) on it, eq. (26); merit stagnation, eq. (27) (tol_rel, with |.| so that an increase counts
 * too); the outer iteration limit. The stability measures of sec. 5.1 are options: a relative stopping rule
 * for the PGS phase, A_AA + reg I (on every row or on friction rows only), lazily evaluated friction bounds,
 * and the fall-back to the best iterate seen, which here also discards a subspace phase that made things
 * worse, so that the next PGS phase continues where plain PGS would (see iterate()).
 *
 * Work is counted in row updates so that it reads in PGS sweeps: a sweep counts n, a product A_AA p counts
 * the |A| rows it touches (each costs one M^-1 J^T scatter and one J gather, as a PGS row update does), and
 * evaluating w on the active rows for the right-hand side counts |A|. The merit evaluations at the
 * checkpoints are not counted, as lk__monitor does not count them for PGS. */
#include "methods.h"

#include "envelope.h"
#include "kernel.h"
#include "krylov.h"
#include "ordering.h"
#include "parallel.h"
#include "sweep.h"

#include <string.h>

/* Row classes of eq. (19). */
enum { SET_L = 0, SET_U = 1, SET_A = 2 };

/* With the relative rule of the PGS phase (sec. 5.1) the phase may run longer than k_pgs sweeps; it is capped
 * at this many times k_pgs (at least this many sweeps) so that one outer iteration stays bounded. */
#define SM_PGS_PHASE_CAP 10

typedef struct pgs_sm_state {
	lk__ctx *c;
	const lk_pgs_sm_config *sc;
	int n, na;
	int *perm;              /* sweep order of the PGS phase, NULL for the natural order */
	signed char *set;       /* class of every row, eq. (19), of the current subspace step */
	signed char *outer_set; /* classes at the end of the previous accepted subspace phase, eq. (26) */
	signed char *pgs_set;   /* classes after the latest PGS phase */
	signed char *end_set;   /* classes after the latest subspace phase */
	int *idx;               /* the active rows, ascending */
	int *pos;               /* row -> its place in idx, or -1 (matrix form) */
	double *rhs, *x;        /* reduced system, |A| entries */
	double *reg;            /* regularization of each active row */
	double *inv_diag;       /* Jacobi preconditioner, or NULL */
	double *pdu;            /* row form: M^-1 J_A^T p of a product */
	double *lo_f, *hi_f;    /* lazy bounds, frozen for one subspace phase */
	double *before;         /* lambda at the start of a subspace step */
	double *pgs_lambda;     /* lambda after the latest PGS phase */
	int lazy_frozen;        /* lo_f / hi_f hold the bounds of this phase */
	int have_outer_set;     /* outer_set holds the classes after an accepted subspace phase */
	int cone;               /* friction=cone: a contact's pair is free while strictly inside its disc */
	lk__arena cg;           /* CG scratch, carved once */
	lk__arena direct;       /* scratch of the envelope factor, carved once */
	lk__env env;
} pgs_sm_state;

/* ------------------------------------------------------------------------------------------ helpers */

/* Sets lambda_i to v and keeps du consistent; returns |change|. */
static double set_row(pgs_sm_state *s, int i, double v)
{
	lk__ctx *c = s->c;
	double d = v - c->lambda[i];
	if (d == 0.0)
		return 0.0;
	c->lambda[i] = v;
	if (c->p->form == LK_FORM_ROWS)
		lk__row_apply(&c->p->rows[i], c->du, d);
	return fabs(d);
}

/* The bounds a subspace step uses: the current ones (alg. 4.3, line 13), or with lazy evaluation those of
 * the start of the subspace phase (sec. 5.1). */
static inline void step_bounds(const pgs_sm_state *s, int i, double *lo, double *hi)
{
	if (s->lazy_frozen) {
		*lo = s->lo_f[i];
		*hi = s->hi_f[i];
	} else {
		lk__bounds(&s->c->p->rows[i], s->c->lambda, lo, hi);
	}
}

/* Classifies every row by eq. (19) into s->set and puts a row found outside its box on the bound it crossed
 * (a friction row clamped by PGS before its normal row moved can lie outside; eq. (19) has no class for it).
 * Normal and joint rows go first because friction bounds read them. Fills idx (and pos) with the active
 * rows and returns their count; *changed says whether any class differs from what s->set held, *snap is the
 * largest move. */
static int classify_and_snap(pgs_sm_state *s, int *changed, double *snap)
{
	const lk_problem *p = s->c->p;
	const double *lambda = s->c->lambda;
	signed char *set = s->set;
	int n = s->n, na = 0;
	*changed = 0;
	*snap = 0.0;
	for (int pass = 0; pass < 2; ++pass) {
		for (int i = 0; i < n; ++i) {
			const lk__row *r = &p->rows[i];
			if (lk__is_friction(r) != pass)
				continue;
			double lo, hi, d = 0.0;
			signed char k;
			step_bounds(s, i, &lo, &hi);
			if (s->cone && lk__cone_pair(p, i)) {
				/* Coulomb's cone: a sticking contact (its pair strictly inside the disc) is free, a sliding one
				 * (on the rim, where it is snapped) keeps its impulse's direction: SET_U stands for the rim */
				double x = lambda[i], y = lambda[i + 1];
				k = x * x + y * y < hi * hi ? SET_A : SET_U;
				if (k == SET_U) {
					lk__disc_project(&x, &y, hi);
					d = fmax(set_row(s, i, x), set_row(s, i + 1, y));
				}
				*changed |= set[i] != k || set[i + 1] != k;
				set[i] = set[i + 1] = k;
				if (d > *snap)
					*snap = d;
				++i;
				continue;
			}
			if (lambda[i] <= lo) {
				k = SET_L;
				d = set_row(s, i, lo);
			} else if (lambda[i] >= hi) {
				k = SET_U;
				d = set_row(s, i, hi);
			} else {
				k = SET_A;
			}
			if (set[i] != k)
				*changed = 1;
			set[i] = k;
			if (d > *snap)
				*snap = d;
		}
	}
	int normal_only = s->sc->sub_rows == LK_SUBSPACE_NORMAL;
	for (int i = 0; i < n; ++i) {
		if (set[i] == SET_A && !(normal_only && lk__is_friction(&p->rows[i]))) {
			if (s->pos)
				s->pos[i] = na;
			s->idx[na++] = i;
		} else if (s->pos) {
			s->pos[i] = -1;
		}
	}
	return na;
}

typedef struct reduced_job {
	const pgs_sm_state *s;
	const double *x;
	double *y;
} reduced_job;

/* y_k = J_k du_p + (s_k + reg_k) x_k for the active rows of share t of nt */
static void reduced_rows(void *arg, int t, int nt)
{
	const reduced_job *j = arg;
	const pgs_sm_state *s = j->s;
	const lk_problem *p = s->c->p;
	int k0, k1;
	lk__share(s->na, t, nt, &k0, &k1);
	for (int k = k0; k < k1; ++k) {
		const lk__row *r = &p->rows[s->idx[k]];
		j->y[k] = lk__row_dot_ref(r, s->pdu, 0.0) + (r->s + s->reg[k]) * j->x[k];
	}
}

/* y = (A_AA + R) x, never assembled. Row form: du_p = sum_{i in A} M^-1 J_i^T x_i accumulated on the bodies
 * the active rows touch, then y_i = J_i du_p + s_i x_i (docs/maths.md). Matrix form: the CSR rows of A,
 * restricted to the active columns. */
static void reduced_matvec(void *user, const double *x, double *y)
{
	pgs_sm_state *s = user;
	const lk_problem *p = s->c->p;
	int na = s->na;
	if (p->form == LK_FORM_ROWS && s->c->body_rows && s->pos) {
		/* on the solve's threads: each body's slot from its active rows in row order, the sum the scatter
		 * below makes (a row whose x_k is 0 adds nothing to a sum that starts at +0), then the rows */
		lk__gather_slots(s->c, s->c->body_rows, s->pos, x, s->pdu);
		reduced_job j = {s, x, y};
		lk__ctx_run(s->c, reduced_rows, &j);
	} else if (p->form == LK_FORM_ROWS) {
		double *pdu = s->pdu;
		for (int k = 0; k < na; ++k) {
			const lk__row *r = &p->rows[s->idx[k]];
			memset(pdu + LK_DU_STRIDE * (size_t)r->a, 0, 6 * sizeof(double));
			memset(pdu + LK_DU_STRIDE * (size_t)r->b, 0, 6 * sizeof(double));
		}
		for (int k = 0; k < na; ++k)
			lk__row_apply(&p->rows[s->idx[k]], pdu, x[k]);
		for (int k = 0; k < na; ++k) {
			const lk__row *r = &p->rows[s->idx[k]];
			y[k] = lk__row_dot_ref(r, pdu, 0.0) + (r->s + s->reg[k]) * x[k];
		}
	} else {
		for (int k = 0; k < na; ++k) {
			int i = s->idx[k];
			double v = 0.0;
			for (int e = p->row_ptr[i]; e < p->row_ptr[i + 1]; ++e) {
				int j = s->pos[p->col[e]];
				if (j >= 0)
					v += p->val[e] * x[j];
			}
			y[k] = v + s->reg[k] * x[k];
		}
	}
	lk__count(s->c, na, LK_WORK_CG_ROW);
}

/* A checkpoint of alg. 4.3 (after the PGS phase, line 3, and after each subspace step, line 16): the merit,
 * the best iterate, and the rules (25) and (27), plus the non-finite and divergence guards, all the
 * monitor's (lk__checkpoint). A subspace step whose merit explodes has guessed a wrong face, typically a
 * singular A_AA with no solution (sec. 5 reports such blow-ups); that is no divergence of the whole method:
 * the monitor sets c->grew, and the subspace phase is abandoned (iterate()). */
static lk_stop_reason checkpoint(pgs_sm_state *s, int outer, double max_change, int subspace_step)
{
	unsigned rules = subspace_step ? LK__RULE_RECORD | LK__RULE_SOFT_GROWTH : 0;
	return lk__checkpoint(s->c, outer, max_change, rules);
}

/* ------------------------------------------------------------------------------------------- phases */

/* Alg. 4.3 line 2: at least k_pgs sweeps; with pgs_rel_tol (sec. 5.1) more, until the merit changes by less
 * than pgs_rel_tol of itself from one sweep to the next. Returns the last sweep's max |change|. */
static double pgs_phase(pgs_sm_state *s, int outer)
{
	lk__ctx *c = s->c;
	const lk_solver_config *cfg = c->cfg;
	int kpgs = s->sc->k_pgs;
	double rel = s->sc->pgs_rel_tol;
	int cap = kpgs;
	if (rel > 0)
		cap = kpgs * SM_PGS_PHASE_CAP > SM_PGS_PHASE_CAP ? kpgs * SM_PGS_PHASE_CAP : SM_PGS_PHASE_CAP;
	/* under a budget the phase takes at most its share of the work left, and always one sweep */
	double left = lk__work_left(c);
	if (isfinite(left)) {
		double sweeps = floor(s->sc->pgs_share * left / (double)s->n);
		cap = sweeps < 1 ? 1 : sweeps < cap ? (int)sweeps : cap;
	}
	double change = 0.0, prev = NAN;
	for (int sweep = 1; sweep <= cap; ++sweep) {
		if (cfg->order == LK_ORDER_RANDOM)
			lk__shuffle(&c->rng, s->perm, s->n);
		change = cfg->friction == LK_FRICTION_CONE ? lk__pgs_sweep_cone(c, 1.0) : lk__pgs_sweep(c, s->perm, s->n, 1.0);
		if (!isfinite(change))
			return change;
		int need = rel > 0 && sweep >= kpgs - 1;
		if (need || lk__history_wanted(c)) {
			lk_metrics m;
			lk__current_metrics(c, &m);
			lk__record(c, outer, &m);
			double merit = lk__merit_value(&m, cfg->merit);
			if (need && sweep >= kpgs && isfinite(prev) && fabs(merit - prev) < rel * fabs(prev))
				break;
			prev = merit;
		}
	}
	return change;
}

/* The reduced system of a subspace step solved by the envelope factor of A_AA + R (envelope.h) instead of CG,
 * when the factor costs no more than the work left: rhs -> x. Returns 0 when solved, 1 when declined (too
 * costly; CG takes over), -1 without memory. The factor is exact up to rounding where CG on the same system
 * stops at its tolerance or at its budget: on a stack of n boxes, whose A_AA has the band of two contact
 * groups and a condition growing with n^2, this is the difference between a few sweeps and hundreds of
 * products. */
static int direct_solve(pgs_sm_state *s, int na, double left)
{
	lk__ctx *c = s->c;
	/* the factor's multiply-adds, within what the budget leaves, or without one what the products of a capped
	 * CG solve (LK_SM_CG_CAP) would cost: a step stays linear in the active set either way */
	double max_macs = isfinite(left) ? (left - 2.0 * na) / LK_WORK_FACTOR_MAC
	                                 : (double)LK_SM_CG_CAP * LK_WORK_CG_ROW * na / LK_WORK_FACTOR_MAC;
	lk__arena_reset(&s->direct);
	int r = lk__env_analyse(&s->env, &s->direct, c->p, s->idx, na, max_macs);
	if (r != 0)
		return r;
	lk__env_factor(&s->env, c->p, s->idx, s->reg);
	lk__env_solve(&s->env, s->rhs, s->x);
	/* the multiply-adds, and the analysis and the projection, linear in the rows like a sweep */
	lk__count(c, 1, LK_WORK_FACTOR_MAC * s->env.macs + 2.0 * na);
	c->subspace_steps++;
	return 0;
}

/* One subspace step (alg. 4.3 lines 7-15). ref is the reduced right-hand side norm of the first step of
 * this phase; a step that would re-solve the face the previous step solved (same set, residual at the CG
 * tolerance) is skipped and reported in *face_done. Returns LK_OK or LK_ERR_NO_MEMORY. */
static lk_status subspace_step(pgs_sm_state *s, int first, double *ref, double *max_change, int *face_done)
{
	lk__ctx *c = s->c;
	const lk_problem *p = c->p;
	double *lambda = c->lambda;
	int n = s->n;
	*max_change = 0.0;
	*face_done = 0;
	memcpy(s->before, lambda, (size_t)n * sizeof(double));

	/* lines 7-9, eq. (19) */
	int changed;
	double snap;
	int na = classify_and_snap(s, &changed, &snap);
	int same = !first && !changed;
	signed char *cur = s->set;
	s->na = na;
	*max_change = snap;
	if (na == 0) {
		/* every row is on a bound: lambda = [l_L u_U] is the whole step */
		*face_done = same;
		c->subspace_steps += !same;
		return LK_OK;
	}

	/* under a budget, a step is taken only if what is left pays for its right-hand side (|A| rows) and at least
	 * one product (CG) or the factor's linear part (direct) */
	int direct = s->sc->sub == LK_SUBSPACE_DIRECT && p->form == LK_FORM_ROWS;
	if (lk__work_left(c) < (double)na * (1.0 + (direct ? 2.0 : LK_WORK_CG_ROW)))
		return LK_OK;

	/* eq. (22) in correction form: with lambda_L = l_L and lambda_U = u_U in place, w_A = A_AA lambda_A +
	 * A_AL l_L + A_AU u_U + b_A, so lambda_A + delta solves (22) when A_AA delta = -w_A. The start delta = 0
	 * is the current lambda_A, and regularization damps the change of lambda_A rather than lambda_A itself
	 * (see the note at reg below). */
	double rr = 0.0;
	for (int k = 0; k < na; ++k) {
		int i = s->idx[k];
		double w = lk__w(p, i, lambda, c->du);
		s->rhs[k] = -w;
		s->x[k] = 0.0;
		rr += w * w;
	}
	lk__count(c, na, LK_WORK_SWEEP_ROW);
	double rnorm = sqrt(rr);
	if (first)
		*ref = rnorm;
	if (same && rnorm <= s->sc->cg_tol * *ref) {
		*face_done = 1;
		return LK_OK;
	}

	/* Sec. 5.1: A'_AA = A_AA + gamma I, on every active row or on friction rows only. Applied to the
	 * correction it is a proximal step around the current lambda_A: it keeps the paper's purpose (a positive
	 * definite system for CG on the semidefinite contact matrix) without biasing the fixed point of repeated
	 * steps towards lambda_A = 0, which the paper names as the damping that costs realism. */
	double g = s->sc->reg;
	for (int k = 0; k < na; ++k) {
		const lk__row *r = &p->rows[s->idx[k]];
		s->reg[k] = (g > 0 && (!s->sc->reg_friction_only || lk__is_friction(r))) ? g : 0.0;
		if (direct && s->reg[k] < LK_ENV_PROXIMAL * r->diag)
			s->reg[k] = LK_ENV_PROXIMAL * r->diag;
		if (s->inv_diag) {
			double d = r->diag + s->reg[k];
			s->inv_diag[k] = d > 0 ? 1.0 / d : 1.0;
		}
	}
	double left = lk__work_left(c);
	if (direct) {
		int r = direct_solve(s, na, left);
		if (r < 0)
			return lk__fail(c->p, LK_ERR_NO_MEMORY, "pgs-sm: out of memory for the factor of %d rows", na);
		if (r == 0)
			goto solved;
	}
	/* Sec. 5: CG with at most as many iterations as variables, and never more than LK_SM_CG_CAP unless cg_max
	 * says otherwise: a step then costs at most a constant times |A| row updates, never a multiple of |A|^2
	 * (the paper's cap of |A| made one outer iteration on 84,606 rows take 198 s, docs/benchmarks.md). Under a
	 * budget, no more products than the work left pays for (one product costs |A| row updates): the step
	 * then costs what its budget says. */
	int cap = s->sc->cg_max > 0 ? s->sc->cg_max : (na < LK_SM_CG_CAP ? na : LK_SM_CG_CAP);
	if (isfinite(left)) {
		double products = floor(left / (LK_WORK_CG_ROW * (double)na));
		if (products < 1)
			return LK_OK; /* no budget left for a product: the step ends with lambda as it was */
		if (products < cap)
			cap = (int)products;
	}
	lk__arena_reset(&s->cg);
	lk__krylov_result kr;
	lk_status st = lk__cg(&s->cg, na, reduced_matvec, s, s->inv_diag, s->rhs, s->x, s->sc->cg_tol, cap, &kr);
	if (st != LK_OK)
		return lk__fail(c->p, st, "pgs-sm: out of memory for the reduced system of %d rows", na);
	c->inner_iterations += kr.iterations;
	c->subspace_steps++;
solved:

	/* lk__cg never returns a non-finite x; an overflow of lambda_A + delta is still guarded here */
	for (int k = 0; k < na; ++k)
		if (!isfinite(lambda[s->idx[k]] + s->x[k]))
			return LK_OK;
	for (int k = 0; k < na; ++k)
		set_row(s, s->idx[k], lambda[s->idx[k]] + s->x[k]);

	/* line 13: the friction bounds follow the new normal impulses (frozen when lazy); line 14, eq. (24):
	 * lambda_A projected onto its box; line 15: L and U rows on their bounds. Normal rows first, so that the
	 * friction bounds read projected normal impulses. */
	for (int pass = 0; pass < 2; ++pass) {
		for (int i = 0; i < n; ++i) {
			const lk__row *r = &p->rows[i];
			if (lk__is_friction(r) != pass)
				continue;
			double lo, hi;
			step_bounds(s, i, &lo, &hi);
			if (s->cone && lk__cone_pair(p, i)) {
				/* a sticking pair onto its disc; a sliding one on the rim of its new disc, in its direction */
				double x = lambda[i], y = lambda[i + 1], len = sqrt(x * x + y * y);
				if (cur[i] == SET_U && len > 0.0) {
					x *= hi / len;
					y *= hi / len;
				}
				lk__disc_project(&x, &y, hi);
				set_row(s, i, x);
				set_row(s, i + 1, y);
				++i;
				continue;
			}
			double v = cur[i] == SET_L ? lo : cur[i] == SET_U ? hi : lk__clamp(lambda[i], lo, hi);
			set_row(s, i, v);
		}
	}
	double mc = 0.0;
	for (int i = 0; i < n; ++i) {
		double d = fabs(lambda[i] - s->before[i]);
		if (!(d <= mc))
			mc = d;
	}
	*max_change = mc;
	return LK_OK;
}

/* The classes of eq. (19) of the current lambda under its current bounds, without moving anything. */
static void read_classes(const pgs_sm_state *s, signed char *out)
{
	const lk_problem *p = s->c->p;
	const double *lambda = s->c->lambda;
	for (int i = 0; i < s->n; ++i) {
		double lo, hi;
		lk__bounds(&p->rows[i], lambda, &lo, &hi);
		if (s->cone && lk__cone_pair(p, i)) {
			out[i] = out[i + 1] = lambda[i] * lambda[i] + lambda[i + 1] * lambda[i + 1] < hi * hi ? SET_A : SET_U;
			++i;
			continue;
		}
		out[i] = lambda[i] <= lo ? SET_L : lambda[i] >= hi ? SET_U : SET_A;
	}
}

/* Whether lambda solves eq. (22) on the face of `set` (to a small multiple of the CG tolerance, which the
 * projected iterate of a converged CG solve meets): the residual w on the rows strictly inside their box,
 * measured against the phase's first right-hand side or against b_A, whichever is larger. */
static int face_solved(pgs_sm_state *s, const signed char *set, double ref)
{
	lk__ctx *c = s->c;
	const lk_problem *p = c->p;
	double ww = 0.0, qq = 0.0;
	for (int i = 0; i < s->n; ++i) {
		if (set[i] != SET_A)
			continue;
		double w = lk__w(p, i, c->lambda, c->du);
		ww += w * w;
		qq += p->rows[i].q * p->rows[i].q;
	}
	return sqrt(ww) <= 10.0 * s->sc->cg_tol * fmax(ref, sqrt(qq));
}

/* ----------------------------------------------------------------------------------------- the method */

static lk_status prepare(pgs_sm_state *s, lk__ctx *c)
{
	lk_problem *p = c->p;
	lk__arena *a = &p->arena;
	size_t n = (size_t)c->n + 1;
	memset(s, 0, sizeof *s);
	s->c = c;
	s->sc = &c->cfg->pgs_sm;
	s->n = c->n;
	s->cone = c->cfg->friction == LK_FRICTION_CONE;
	s->set = lk__arena_alloc(a, n);
	s->outer_set = lk__arena_alloc(a, n);
	s->pgs_set = lk__arena_alloc(a, n);
	s->end_set = lk__arena_alloc(a, n);
	s->idx = lk__arena_alloc(a, n * sizeof(int));
	s->rhs = lk__arena_alloc(a, n * sizeof(double));
	s->x = lk__arena_alloc(a, n * sizeof(double));
	s->reg = lk__arena_alloc(a, n * sizeof(double));
	s->before = lk__arena_alloc(a, n * sizeof(double));
	if (!s->set || !s->outer_set || !s->pgs_set || !s->end_set || !s->idx || !s->rhs || !s->x || !s->reg ||
	    !s->before)
		return LK_ERR_NO_MEMORY;
	memset(s->set, -1, n);
	if (!(s->pgs_lambda = lk__arena_alloc(a, n * sizeof(double))))
		return LK_ERR_NO_MEMORY;
	if (s->sc->cg_jacobi && !(s->inv_diag = lk__arena_alloc(a, n * sizeof(double))))
		return LK_ERR_NO_MEMORY;
	if (s->sc->lazy_friction) {
		s->lo_f = lk__arena_alloc(a, n * sizeof(double));
		s->hi_f = lk__arena_alloc(a, n * sizeof(double));
		if (!s->lo_f || !s->hi_f)
			return LK_ERR_NO_MEMORY;
	}
	if (p->form == LK_FORM_ROWS) {
		size_t nb = ((size_t)p->nbodies + 1) * LK_DU_STRIDE;
		if (!(s->pdu = lk__arena_alloc(a, nb * sizeof(double))))
			return LK_ERR_NO_MEMORY;
		memset(s->pdu, 0, nb * sizeof(double));
		/* the products on threads find each row's place in the active set (without it, on one thread) */
		if (c->body_rows)
			s->pos = lk__arena_alloc(a, n * sizeof(int));
	} else if (!(s->pos = lk__arena_alloc(a, n * sizeof(int)))) {
		return LK_ERR_NO_MEMORY;
	}
	if (c->cfg->order != LK_ORDER_NATURAL && !(s->perm = lk__arena_alloc(a, n * sizeof(int))))
		return LK_ERR_NO_MEMORY;
	if (lk__arena_carve(a, lk__cg_scratch_bytes(c->n), &s->cg) != LK_OK)
		return LK_ERR_NO_MEMORY;
	/* the factor's orderings and a band of 24 per row (two contact groups of a stack) before it grows */
	if (s->sc->sub == LK_SUBSPACE_DIRECT &&
	    lk__arena_carve(a, n * (32 * sizeof(double) + 8 * sizeof(int)) + 4 * ((size_t)p->nbodies + 1) * sizeof(int),
	                    &s->direct) != LK_OK)
		return LK_ERR_NO_MEMORY;
	return LK_OK;
}

static lk_stop_reason iterate(pgs_sm_state *s, lk_status *err)
{
	lk__ctx *c = s->c;
	const lk_solver_config *cfg = c->cfg;
	*err = LK_OK;
	for (int outer = 1;; ++outer) {
		/* the monitor's budget rule, before a PGS phase that would take its one sweep regardless */
		if (outer > 1 && lk__work_left(c) < 0.5 * (double)s->n)
			return LK_STOP_BUDGET;
		c->iterations = outer;
		/* lines 2-5 */
		double change = 0.0;
		if (s->sc->k_pgs > 0 || s->sc->pgs_rel_tol > 0) {
			change = pgs_phase(s, outer);
			c->used_best = 0; /* lambda has moved on from any iterate restored earlier */
		}
		lk_stop_reason why = checkpoint(s, outer, change, 0);
		if (why != LK_STOP_NONE)
			return why;
		double pgs_merit = c->merit;
		if (s->sc->k_sm > 0) {
			read_classes(s, s->pgs_set);
			memcpy(s->pgs_lambda, c->lambda, (size_t)s->n * sizeof(double));
		}

		/* lines 6-19 */
		if (s->sc->lazy_friction) {
			s->lazy_frozen = 0;
			for (int i = 0; i < s->n; ++i)
				lk__bounds(&c->p->rows[i], c->lambda, &s->lo_f[i], &s->hi_f[i]);
			s->lazy_frozen = 1;
		}
		double ref = 0.0;
		for (int k = 1; k <= s->sc->k_sm; ++k) {
			double mc;
			int face_done;
			*err = subspace_step(s, k == 1, &ref, &mc, &face_done);
			if (*err != LK_OK) {
				s->lazy_frozen = 0;
				return LK_STOP_NONE;
			}
			if (face_done)
				break; /* the next step would solve the same face again */
			why = checkpoint(s, outer, mc, 1);
			if (why != LK_STOP_NONE) {
				s->lazy_frozen = 0;
				return why;
			}
			if (c->grew)
				break;
		}
		s->lazy_frozen = 0;
		if (s->sc->k_sm == 0) {
			if (outer >= cfg->max_iterations)
				return LK_STOP_ITERATIONS;
			continue;
		}

		/* The fall-back of sec. 4.3 is meant to keep PGS-SM no worse than PGS would have been. Applied only
		 * to the returned lambda it does not: a subspace phase that guessed a wrong face leaves a lambda
		 * worse than its PGS phase, and the next PGS phase would start from it. So a subspace phase that
		 * moved to another face and ended above the merit of its PGS phase is discarded, and the next PGS
		 * phase continues from where this PGS phase ended, as plain PGS would have. (Not from the best
		 * iterate: if that is older, the PGS phase would repeat itself. On the face of the PGS phase a
		 * higher merit is rounding or an unfinished CG solve; that result is kept.) A phase that blew up is
		 * discarded whatever the options: that is a guard, not the fall-back. */
		read_classes(s, s->end_set);
		if (c->grew || (s->sc->best_iterate && c->merit > pgs_merit &&
		                memcmp(s->end_set, s->pgs_set, (size_t)s->n) != 0)) {
			c->grew = 0;
			lk__set_lambda(c, s->pgs_lambda);
			c->merit = c->last_merit = pgs_merit;
			c->used_best = 1;
			s->have_outer_set = 0;
		} else {
			/* eq. (26) over a whole outer iteration: the PGS phase and the subspace steps led back to the
			 * face the previous outer iteration ended on, and lambda solves (22) there, so a further outer
			 * iteration would repeat this one. (A face solved only in part, by a capped or regularized CG
			 * or with lazy bounds, still gains from another.) Within the subspace phase an unchanged set
			 * only ends the phase (above): the lambda-based classes of eq. (19) can only shrink there, so
			 * they always settle, solution or not. */
			/* An absolute tolerance the caller asked for is the stricter rule: the face may be solved only
			 * to the CG tolerance, and another outer iteration can still lower the merit towards it, so
			 * eq. (26) stops only once the merit meets tol too (or when no tol was asked). */
			int tol_met = !(cfg->tol_abs > 0) || c->merit < cfg->tol_abs;
			if (tol_met && s->have_outer_set && memcmp(s->end_set, s->outer_set, (size_t)s->n) == 0 &&
			    face_solved(s, s->end_set, ref))
				return LK_STOP_ACTIVE_SET;
			memcpy(s->outer_set, s->end_set, (size_t)s->n);
			s->have_outer_set = 1;
		}
		if (outer >= cfg->max_iterations)
			return LK_STOP_ITERATIONS;
	}
}

lk_status lk__solve_pgs_sm(lk__ctx *c)
{
	pgs_sm_state s;
	if (prepare(&s, c) != LK_OK) {
		lk__arena_carve_release(&s.cg);
		lk__arena_carve_release(&s.direct);
		return lk__fail(c->p, LK_ERR_NO_MEMORY, "pgs-sm: out of memory for %d rows", c->n);
	}
	if (!s.perm) {
		/* the natural order: its PGS phases sweep its latency order, where it pays */
		s.perm = lk__latency_perm(c, (double)s.sc->k_pgs * c->cfg->max_iterations);
	} else {
		lk_status st = lk__order_build(c, s.perm);
		if (st != LK_OK) {
			lk__arena_carve_release(&s.cg);
			lk__arena_carve_release(&s.direct);
			return st;
		}
	}
	lk_status err;
	c->stop = iterate(&s, &err);
	lk__arena_carve_release(&s.cg);
	lk__arena_carve_release(&s.direct);
	if (err != LK_OK)
		return err;

	/* Sec. 4.3: the fall-back to the best iterate seen, so that PGS-SM is never worse than its PGS phase.
	 * The guards above have restored it already when they fired. */
	if (s.sc->best_iterate && c->stop != LK_STOP_NONFINITE && c->stop != LK_STOP_DIVERGED) {
		lk_metrics m;
		lk__current_metrics(c, &m);
		if (lk__merit_value(&m, c->cfg->merit) > c->best_merit)
			lk__restore_best(c);
	}
	return LK_OK;
}

/* auto: the adapters' default. Projected Gauss-Seidel in the problem's own order (the engines' order: joints,
 * contact normals, friction; Erleben 2013 sec. 5.2) that decides per solve where to start, how much work to
 * spend and how:
 *
 *  - where to start: the incoming lambda is taken as the previous step's impulses (the adapters pass them
 *    whole). The contact faces of a stack (below) start from all of theirs; every other row from the share
 *    `carry` of it, 0.85 by default, the warm start both engines damp by (Bullet's m_warmstartingFactor). The
 *    damping is what keeps a warm start from feeding on itself where the rows are redundant or change from
 *    step to step; in a stack it is a hole: each step the sweeps would have to carry 15% of every box's
 *    weight down the stack again, which they do not in a budget of ten, and the stack rocks and falls.
 *  - the work: the budget is a mean over the solves of one problem, not a cap on each. An account kept with
 *    the problem (lk_problem.auto_account) holds what earlier solves left unspent, up to `bank` budgets, and
 *    may run as far into debt; a solve may spend the budget plus the account plus the debt it may still take
 *    on, at most `cap` budgets. A step that settles quickly saves; a hard one (an impact, a stack finding its
 *    load) borrows. Over any run of solves the work is at most the budget times their number plus `bank`
 *    budgets (and the last sweep's overshoot).
 *  - when to stop: when no row's velocity correction in a sweep, |A_ii dlambda_i|, exceeds `tol` times the
 *    step's own velocity scale, the root mean square of q over the rows that are no friction rows: both are
 *    velocities (m/s, rad/s), so the rule reads the same in any units and for any masses, and the sweep adds
 *    both up on the way, so it costs no evaluation of w (Bullet's m_leastSquaresResidualThreshold is such a
 *    rule on impulses, absolute). Friction rows are left out of the scale because a sliding contact's q is
 *    its sliding speed, which its friction does not remove.
 *  - how: on a stack, the two-level correction of coarse.c every `coarse` sweeps, which takes the stack's slow
 *    mode in one step. A stack is a chain of at least AUTO_STACK_DEPTH faces of area (three or more contacts
 *    between two bodies: a box on a box) from a static body up, in a problem without joints (the correction
 *    welds the faces and knows nothing of joints: on piled ragdolls it cost joint error). A layer of bodies on
 *    the ground is solved by the sweeps in a few, and a heap of spheres has no faces to weld.
 *
 * docs/solvers.md, "auto", has the measurements that chose each part. */
#include "methods.h"

#include "coarse.h"
#include "kernel.h"
#include "sweep.h"

#include <math.h>
#include <string.h>

/* faces in a chain from a static body up that make a stack */
#define AUTO_STACK_DEPTH 3
/* contacts between two bodies that make a face of area */
#define AUTO_AREA_CONTACTS 3

/* What one pass over the rows tells of the problem's structure, before its faces are looked for. */
typedef struct structure {
	int area;  /* some body pair has AUTO_AREA_CONTACTS contact normals in a row (the adapters write a pair's
	            * contacts together): it has faces of area */
	int stack; /* ... and no joint rows, and enough normals between two moving bodies for a stack's faces */
} structure;

static structure scan_rows(const lk_problem *p)
{
	structure st = {0, 0};
	int joints = 0, between_moving = 0, run = 0;
	for (int i = 0; i < p->nrows; ++i) {
		const lk__row *r = &p->rows[i];
		joints |= r->kind == LK_ROW_JOINT || r->kind == LK_ROW_LIMIT || r->kind == LK_ROW_MOTOR;
		if (r->kind != LK_ROW_NORMAL) {
			run = 0;
			continue;
		}
		between_moving += r->a < p->nbodies && r->b < p->nbodies;
		const lk__row *prev = i > 0 ? &p->rows[i - 1] : NULL;
		run = prev && prev->kind == LK_ROW_NORMAL && prev->a == r->a && prev->b == r->b ? run + 1 : 1;
		st.area |= run >= AUTO_AREA_CONTACTS;
	}
	st.stack = st.area && !joints && between_moving >= (AUTO_STACK_DEPTH - 1) * AUTO_AREA_CONTACTS;
	return st;
}

/* Whether the faces of area form a stack (module comment): breadth-first from the static world over their
 * body pairs, in the problem's arena. */
static int is_stack(const lk__coarse *k, lk_problem *p)
{
	const int nb = p->nbodies + 1, ne = 2 * k->nfaces; /* slot nbodies: the static world */
	int *head = lk__arena_alloc(&p->arena, (size_t)nb * sizeof *head);
	int *next = lk__arena_alloc(&p->arena, (size_t)(ne + 1) * sizeof *next);
	int *to = lk__arena_alloc(&p->arena, (size_t)(ne + 1) * sizeof *to);
	int *level = lk__arena_alloc(&p->arena, (size_t)nb * sizeof *level);
	int *queue = lk__arena_alloc(&p->arena, (size_t)nb * sizeof *queue);
	if (!head || !next || !to || !level || !queue)
		return 0;
	for (int v = 0; v < nb; ++v)
		head[v] = level[v] = -1;
	for (int f = 0, e = 0; f < k->nfaces; ++f) {
		if (k->face_normals[f] < AUTO_AREA_CONTACTS)
			continue;
		const lk__row *r = &p->rows[k->rows[k->face_start[f]]];
		const int ends[2] = {r->a, r->b};
		for (int side = 0; side < 2; ++side, ++e) {
			to[e] = ends[1 - side];
			next[e] = head[ends[side]];
			head[ends[side]] = e;
		}
	}
	int qh = 0, qt = 0, depth = 0;
	level[p->nbodies] = 0;
	queue[qt++] = p->nbodies;
	while (qh < qt) {
		const int v = queue[qh++];
		for (int e = head[v]; e >= 0; e = next[e])
			if (level[to[e]] < 0) {
				level[to[e]] = level[v] + 1;
				depth = level[to[e]] > depth ? level[to[e]] : depth;
				queue[qt++] = to[e];
			}
	}
	return depth >= AUTO_STACK_DEPTH;
}

/* The largest face whose normal rows the warm start splits (below); a larger one is damped whole. */
#define AUTO_FACE_MAX 8

/* K K^+ lambda for the k x k Gram matrix K of a face's normal rows (K_ij = J_i . J_j): the part of lambda in the
 * span of the rows' Jacobians, which sets the wrench they transmit. K K^+ is the orthogonal projector onto the
 * range of K, made here from K's pivoted Cholesky factor E L (rank r, a pivot below 1e-9 of the largest
 * diagonal ends it; Golub & Van Loan, "Matrix Computations", sec. 4.2.8): with B = E L (k x r),
 * K K^+ = B (B^T B)^-1 B^T. Writes out[0..k). */
static void range_part(double K[AUTO_FACE_MAX][AUTO_FACE_MAX], int k, const double *lambda, double *out)
{
	int perm[AUTO_FACE_MAX];
	double L[AUTO_FACE_MAX][AUTO_FACE_MAX] = {{0}}, top = 0.0;
	for (int i = 0; i < k; ++i) {
		perm[i] = i;
		top = fmax(top, K[i][i]);
	}
	int r = 0;
	for (; r < k && r < 6; ++r) {
		int best = r;
		double d = -1.0;
		for (int c = r; c < k; ++c) {
			double v = K[perm[c]][perm[c]];
			for (int j = 0; j < r; ++j)
				v -= L[c][j] * L[c][j];
			if (v > d)
				d = v, best = c;
		}
		if (!(d > 1e-9 * top))
			break;
		int t = perm[r];
		perm[r] = perm[best];
		perm[best] = t;
		for (int j = 0; j < r; ++j) {
			double x = L[r][j];
			L[r][j] = L[best][j];
			L[best][j] = x;
		}
		L[r][r] = sqrt(d);
		for (int c = r + 1; c < k; ++c) {
			double v = K[perm[c]][perm[r]];
			for (int j = 0; j < r; ++j)
				v -= L[c][j] * L[r][j];
			L[c][r] = v / L[r][r];
		}
	}
	/* y = B^T lambda, solve (B^T B) z = y by its Cholesky factor, out = B z; B's rows in the original order */
	double y[6] = {0}, G[6][6] = {{0}}, z[6];
	for (int c = 0; c < k; ++c)
		for (int q = 0; q < r; ++q)
			y[q] += L[c][q] * lambda[perm[c]];
	for (int a = 0; a < r; ++a)
		for (int b = 0; b <= a; ++b) {
			double v = 0.0;
			for (int c = 0; c < k; ++c)
				v += L[c][a] * L[c][b];
			G[a][b] = v;
		}
	for (int a = 0; a < r; ++a) { /* G = C C^T in place (lower), then C w = y, C^T z = w */
		for (int b = 0; b <= a; ++b) {
			double v = G[a][b];
			for (int j = 0; j < b; ++j)
				v -= G[a][j] * G[b][j];
			G[a][b] = a == b ? sqrt(v) : v / G[b][b];
		}
	}
	for (int a = 0; a < r; ++a) {
		double v = y[a];
		for (int j = 0; j < a; ++j)
			v -= G[a][j] * z[j];
		z[a] = v / G[a][a];
	}
	for (int a = r - 1; a >= 0; --a) {
		double v = z[a];
		for (int j = a + 1; j < r; ++j)
			v -= G[j][a] * z[j];
		z[a] = v / G[a][a];
	}
	for (int c = 0; c < k; ++c) {
		double v = 0.0;
		for (int q = 0; q < r; ++q)
			v += L[c][q] * z[q];
		out[perm[c]] = v;
	}
}

/* The warm start: the incoming lambda is the previous step's impulses damped by `carry` (the adapters' warm
 * start: ODE's warm_factor, Bullet's m_warmstartingFactor). On every face of area, the part of the normal
 * impulses that the face's wrench depends on is made whole again. A face's normal impulses lambda_F split into
 * their part in the span of the rows' Jacobians, K K^+ lambda_F (range_part), which sets the force and torques
 * the face transmits, and the rest, which only trades load between the face's contacts (four contacts of a
 * box face carry three wrench components). The first is made whole, the second stays damped: lambda_F +=
 * (1 - carry) / carry K K^+ lambda_F, and du follows the change row by row. */
static void restore_face_warm_start(lk__ctx *c, const lk__coarse *k, double carry)
{
	if (!(carry > 0.0) || carry >= 1.0)
		return;
	const lk_problem *p = c->p;
	const double up = (1.0 - carry) / carry;
	for (int f = 0; f < k->nfaces; ++f) {
		const int m = k->face_normals[f], *rows = k->rows + k->face_start[f];
		if (m < AUTO_AREA_CONTACTS || m > AUTO_FACE_MAX)
			continue;
		/* the span on the pair's first moving body (the other side's Jacobians are linear in these) */
		const int side = p->rows[rows[0]].a < p->nbodies ? 0 : 6;
		double K[AUTO_FACE_MAX][AUTO_FACE_MAX], l[AUTO_FACE_MAX], v[AUTO_FACE_MAX];
		for (int a = 0; a < m; ++a) {
			const double *Ja = p->rows[rows[a]].J + side;
			for (int b = 0; b <= a; ++b) {
				const double *Jb = p->rows[rows[b]].J + side;
				double x = 0.0;
				for (int j = 0; j < 6; ++j)
					x += Ja[j] * Jb[j];
				K[a][b] = K[b][a] = x;
			}
			l[a] = c->lambda[rows[a]];
		}
		range_part(K, m, l, v);
		for (int a = 0; a < m; ++a) {
			const double d = up * v[a];
			c->lambda[rows[a]] += d;
			lk__row_apply(&p->rows[rows[a]], c->du, d);
		}
		/* the Gram matrix, its factor and the products, in multiply-adds; the changes as row updates */
		lk__count(c, 0, LK_WORK_BLOCK_MAC * (3.0 * m * (m + 1) + m * m * m / 3.0 + 2.0 * m * m));
		lk__count(c, m, LK_WORK_SWEEP_ROW);
	}
}

lk_status lk__solve_auto(lk__ctx *c)
{
	lk_problem *p = c->p;
	const lk_solver_config *cfg = c->cfg;
	const int n = c->n;
	/* the mean: the budget (an engine's iteration count), or without one the iteration limit, in sweeps; the
	 * account is kept in row updates (the work unit of lk__count), so that the solves of an engine's islands,
	 * of different sizes, share it at their true cost */
	const double mean = cfg->budget > 0 ? cfg->budget : (double)cfg->max_iterations;
	const double bank = cfg->adapt.bank * mean * n;
	double account = p->auto_account;
	account = account > bank ? bank : account < -bank ? -bank : account;
	/* the structure: the faces, and whether they form a stack */
	lk__coarse coarse = {0};
	int stack = 0;
	const structure sr = cfg->coarse > 0 && p->form == LK_FORM_ROWS ? scan_rows(p) : (structure){0, 0};
	int faces = 0;
	if (sr.area && lk__coarse_setup(&coarse, p) == LK_OK && coarse.nfaces > 0) {
		faces = 1;
		stack = sr.stack && is_stack(&coarse, p);
	}
	/* what this solve may spend: the budget, plus the savings, plus (on a stack) the debt it may still take on;
	 * never less than the budget, at most `cap` budgets */
	double allow = mean + (account + (stack ? bank : 0.0)) / n;
	allow = allow > cfg->adapt.cap * mean ? cfg->adapt.cap * mean : allow < mean ? mean : allow;
	/* the solve runs under this allowance: the monitor's budget rule and the correction's pricing read it */
	lk_solver_config local = *cfg;
	local.budget = allow;
	local.max_iterations = INT32_MAX;
	c->cfg = &local;
	if (cfg->warm_start && faces)
		restore_face_warm_start(c, &coarse, cfg->adapt.carry);

	int *perm = NULL;
	lk_status st = lk__sweep_order(c, 0, &perm);
	if (st != LK_OK) {
		c->cfg = cfg;
		return st;
	}
	int since = 0, interval = cfg->coarse;
	double scale = 0.0;
	for (int it = 1;; ++it) {
		/* the scale from the first sweep (q does not change), the largest correction from every one */
		lk__sweep_sums sums = {.want_scale = it == 1};
		double change = lk__pgs_sweep_sums(c, perm, &sums);
		c->iterations = it;
		if (it == 1)
			scale = sums.nq > 0 ? sqrt(sums.q2 / sums.nq) : 0.0;
		const double err = sums.dvmax;
		if (err <= cfg->adapt.tol * scale && isfinite(change)) {
			c->stop = LK_STOP_ABSOLUTE;
			break;
		}
		/* the two-level correction every `interval` sweeps on a stack, while the work left pays for it */
		if (stack && ++since >= interval && isfinite(change) && lk__work_left(c) >= lk__coarse_cost(&coarse)) {
			since = 0;
			const int rejected = coarse.rejected;
			const double d = lk__coarse_correct(&coarse, c);
			if (coarse.rejected > rejected && interval < (1 << 20))
				interval *= 2; /* where the welded faces do not fit (sliding, opening), less often */
			change = d > change || d != d ? d : change;
		}
		c->stop = lk__monitor(c, it, change);
		if (c->stop != LK_STOP_NONE)
			break;
	}
	lk__coarse_free(&coarse);
	c->cfg = cfg;
	account += mean * n - c->work;
	p->auto_account = account > bank ? bank : account < -bank ? -bank : account;
	return LK_OK;
}

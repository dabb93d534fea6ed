/* auto: the adapters' default. Projected Gauss-Seidel (Erleben 2013 sec. 5.2) in the engine's order policy
 * (`shuffle`: the contacts' rows in a random order, local to windows of the problem, drawn anew every few
 * sweeps, as ODE's quickstep reorders its rows; else the problem's own order, the engines': joints, contact
 * normals, friction) that decides per solve where to start, how much work to spend and how:
 *
 *  - where to start: the incoming lambda is taken as the previous step's impulses damped by `carry` (the
 *    adapters' warm start, 0.85 by default, the factor both engines damp by: Bullet's m_warmstartingFactor).
 *    The damping is what keeps a warm start from feeding on itself where the rows are redundant or change
 *    from step to step; in a stack it is a hole: each step the sweeps would have to carry 15% of every box's
 *    weight down the stack again, which they do not in a budget of ten, and the stack rocks and falls. So the
 *    faces of a stack (below) get the wrench part of their load whole again, where the last solve settled or
 *    took a two-level correction and ended near the tolerance (restore_face_warm_start). A face that is no
 *    part of a stack (a box resting on the ground, a pile's faces), in a problem without joints, gets its
 *    friction whole as well, where the last solve settled: each step the sweeps would otherwise have to find
 *    15% of a resting box's friction again, and on an incline spent the budget doing so. Not a face that slides
 *    (mark_sliding), whose impulses are the previous step's kinetic ones.
 *  - the work: the budget is a mean over the solves of one problem, not a cap on each. An account kept with
 *    the problem (lk_problem.auto_account) holds what earlier solves left unspent, up to `bank` budgets, and
 *    may run as far into debt on a stack, a third as far elsewhere; a solve may spend the budget plus the
 *    account plus the debt it may still take on, at most `cap` budgets (a tall stack's landing up to
 *    AUTO_LANDING sweeps a face of its chain, at most twice that); a problem with joints spends its budget and
 *    no more. A step that settles quickly saves; a hard one (an impact, a stack finding its load)
 *    borrows. Over any run of solves the work is at most the budget times their number plus `bank` budgets.
 *  - when to stop: when what a sweep changed of the bodies' velocities (|dv| + r |dw|, r a body's radius of
 *    gyration), times rho / (1 - rho) at the rate rho of the last sweeps (after a two-level correction: the
 *    sweep's change itself, at a rate of the sweep and the correction together below one), is below `tol`
 *    times the step's own
 *    velocity scale, the root mean square of q over the rows that are no friction rows: both are velocities
 *    (m/s), so the rule reads the same in any units and for any masses. The bodies, not the rows: a sweep that
 *    only trades load between the redundant contacts of a face changes no velocity, and measured row by row
 *    (|A_ii dlambda_i|) such sweeps ran to the cap on a resting stack of boxes with eight points a face.
 *    Friction rows are left out of the scale because a sliding contact's q is its sliding speed, which its
 *    friction does not remove. The matrix form, which has no bodies, measures the rows. `tol` holds at a
 *    budget of AUTO_TOL_BUDGET and tightens with the square of the budget.
 *  - how: on a stack, the two-level correction of coarse.c every `coarse` sweeps (1: after every sweep that did
 *    not stop; less often where it fits poorly), which takes the stack's slow mode in one step. A stack is a
 *    chain of at least AUTO_STACK_DEPTH faces of area (three or more contacts between two bodies: a box on a
 *    box) from a static body up, in a problem without joints (the correction welds the faces and knows
 *    nothing of joints: on piled ragdolls it cost joint error). A layer of bodies on the ground is solved by
 *    the sweeps in a few, and a heap of spheres has no faces to weld.
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
/* the sweep-equivalents a stack's landing may need per face of its chain: the load travels the chain down and
 * back (docs/solvers.md, "auto", has the tall stack that chose it) */
#define AUTO_LANDING 2.0
/* contacts between two bodies that make a face of area */
#define AUTO_AREA_CONTACTS 3
/* the budget at which `tol` (vtol=) holds as given */
#define AUTO_TOL_BUDGET 10.0
/* the most rows whose step scale auto finds before the sweeps rather than in the first one */
#define AUTO_SCALE_APART 4096
/* the contacts' places within which a reshuffle moves a row (lk__shuffle_local): the order stays random where
 * it acts, between a face's contacts and its neighbours', and local across the problem. Drawn over a large
 * pile's whole problem, each shuffled sweep read its records and bodies from all over memory and cost about
 * twice a sweep in the problem's order; within windows of this many places it costs about as much as one.
 * The suite and its variants came out as often worse than the engines' own solvers as when drawn whole, the
 * piles resting a little deeper (docs/solvers.md, "auto"). A problem of fewer contacts' rows is drawn whole */
#define AUTO_SHUFFLE_WINDOW 256
/* the share of the bank a problem that is no stack may owe: the debt of its impacts */
#define AUTO_IMPACT_DEBT (1.0 / 3.0)
/* the work auto adds to each two-level correction it takes, in row updates: part of what the correction's own
 * count by rows and multiply-adds (coarse.c) leaves out, the calls, the passes over the faces and the coarse
 * solve's set-up. Inside the engines a correction of a small stack cost about 1.5 times its count (Bullet's
 * four-box stack of 48 rows: 93,000 instructions against 549 row updates counted, a row update 110), and with the
 * count alone auto's solver time on Bullet's stacks at 30 Hz and in the variants ran 1.08-1.32x Bullet's own at a
 * mean of the budget. At the whole cost (300) Bullet's 20-box stack at 10 iterations fell at 8.9 s of its minute:
 * a stack at the budget needs the corrections; at 100 every stack of the suite stands as before and the times
 * of those runs came to 0.98-1.01x. pgs:coarse=K keeps the count alone: its budgets in the docs were chosen with it */
#define AUTO_COARSE_CALL 100.0
/* a correction that changes more than this share of the one before contracts too slowly to be taken as often */
#define AUTO_COARSE_SLOW 0.7
/* solves without the two-level correction after its factor was found too costly */
#define AUTO_COARSE_WAIT 30
/* a solve that took a correction but ended on its allowance restores the faces' load in the next one only
 * where its last sweep changed the bodies' velocities by at most this many tolerances */
#define AUTO_RESTORE_NEAR 10.0
/* a solve off a stack that ended on its allowance restores the faces' load and friction in the next one where what
 * its last sweep leaves, the stopping rule's bound err rho / (1 - rho), is within this many tolerances: the solve
 * all but settled. Not where the last sweep's change alone was within AUTO_RESTORE_NEAR: a 3 kg box on a 1 kg box
 * in Bullet, restored after such solves, rocked (tests/test_scenes.c, test_heavy_box_on_light_rests) */
#define AUTO_NEARLY 2.0
/* A joint row between two moving bodies whose shares of A_ii differ by more than this is swept plainly under
 * the joint rows' own relaxation (joint_w): over-relaxed, a chain of ball joints between 1 kg and 1e6 kg links
 * threw its light links off at over 100 m/s (tests/test_adapter_input.c, test_ode_mass_ratio), as
 * quickstep's relaxed sweeps let such a chain drift tens of metres apart */
#define AUTO_JOINT_W_RATIO 100.0

/* The faces of area, as the adapters write them: a run of consecutive contact rows (normal or friction) on one
 * body pair with at least AUTO_AREA_CONTACTS normals among them (ODE's contacts of one collision and Bullet's
 * manifold points, whose normals come together; a generated stack's normal and friction rows contact by
 * contact); a pair whose contacts are not written together makes several runs, each treated on its own. */
typedef struct faces {
	int n;
	int *start, *count; /* each run's first row and its rows */
	int welded;         /* contact rows (normal and friction): those a two-level correction welds, pair by pair */
	int stack;          /* the runs can make a stack (stack_depth measures their chain) */
	int joints;         /* the problem has joint, limit or motor rows */
	int between_moving; /* normal rows between two moving bodies */
} faces;

/* A contact's row: its normal or one of its friction rows. */
static inline int contact_row(const lk__row_link *r)
{
	return r->kind == LK_ROW_NORMAL || r->kind == LK_ROW_FRICTION;
}

/* The runs of the problem (in its arena), and whether they can make a stack at all: no joint rows, and enough
 * normals between two moving bodies for two faces. One pass over the rows. */
static void find_faces(lk_problem *p, faces *fs)
{
	fs->n = fs->welded = fs->stack = fs->between_moving = 0;
	fs->start = lk__arena_alloc(&p->arena, ((size_t)p->nrows / AUTO_AREA_CONTACTS + 1) * sizeof *fs->start);
	fs->count = lk__arena_alloc(&p->arena, ((size_t)p->nrows / AUTO_AREA_CONTACTS + 1) * sizeof *fs->count);
	if (!fs->start || !fs->count)
		return;
	int joints = 0, between_moving = 0;
	const lk__row_link *link = p->link; /* 16 bytes a row, not a record's cache line */
	for (int i = 0; i < p->nrows;) {
		const lk__row_link *r = &link[i];
		if (!contact_row(r)) {
			joints |= r->kind == LK_ROW_JOINT || r->kind == LK_ROW_LIMIT || r->kind == LK_ROW_MOTOR;
			++i;
			continue;
		}
		int e = i, normals = 0;
		for (; e < p->nrows && contact_row(&link[e]) && link[e].a == r->a && link[e].b == r->b; ++e)
			normals += link[e].kind == LK_ROW_NORMAL;
		if (normals >= AUTO_AREA_CONTACTS) {
			fs->start[fs->n] = i;
			fs->count[fs->n++] = e - i;
		}
		fs->welded += e - i;
		between_moving += (r->a < p->nbodies && r->b < p->nbodies) * normals;
		i = e;
	}
	fs->joints = joints;
	fs->between_moving = between_moving;
	fs->stack = fs->n > 0 && !joints && between_moving >= (AUTO_STACK_DEPTH - 1) * AUTO_AREA_CONTACTS;
}

/* The longest chain of faces from the static world up (a stack where it is AUTO_STACK_DEPTH or more; module
 * comment): breadth-first from the static world over the faces' body pairs, in the problem's arena; 0 where
 * the arena has no room. */
static int stack_depth(const faces *fs, lk_problem *p)
{
	const int nb = p->nbodies + 1, ne = 2 * fs->n; /* slot nbodies: the static world */
	int *head = lk__arena_alloc(&p->arena, (size_t)nb * sizeof *head);
	int *next = lk__arena_alloc(&p->arena, (size_t)(ne + 1) * sizeof *next);
	int *to = lk__arena_alloc(&p->arena, (size_t)(ne + 1) * sizeof *to);
	int *level = lk__arena_alloc(&p->arena, (size_t)nb * sizeof *level);
	int *queue = lk__arena_alloc(&p->arena, (size_t)nb * sizeof *queue);
	if (!head || !next || !to || !level || !queue)
		return 0;
	for (int v = 0; v < nb; ++v)
		head[v] = level[v] = -1;
	for (int f = 0, e = 0; f < fs->n; ++f) {
		const lk__row_link *r = &p->link[fs->start[f]];
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
				level[to[e]] = depth = level[v] + 1;
				queue[qt++] = to[e];
			}
	}
	return depth;
}

/* A friction row that its whole warm-started normal's friction could not stop this many times over slides
 * (mark_sliding) */
#define AUTO_SLIDE 8.0
/* The largest face whose normal rows the warm start splits (below); a larger one is damped whole. */
#define AUTO_FACE_MAX 8

/* The part of a face's normal impulses lambda[0..m) in the span of its rows' Jacobians, which sets the wrench
 * the face transmits: the orthogonal projection onto the range of W = [J_1; ..; J_m] (m x 6, the Jacobians of
 * rows idx[0..m) on one body, from column `side` of the records). The pivoted Cholesky factor of W^T W
 * (lk__span_factor, the two-level correction's) picks r independent columns W_r of W (a fourth coplanar
 * contact adds no wrench component), and the projection is
 * W_r (W_r^T W_r)^-1 W_r^T lambda with W_r^T W_r = L L^T, its leading block: about 30 multiply-adds a row. */
static void range_part(const lk__row *rows, const int *idx, int m, int side, const double *lambda, double *out)
{
	int perm[6];
	double L[6][6];
	const int rank = lk__span_factor(rows, idx, m, side, perm, L);
	/* y = W_r^T lambda, then (L L^T) z = y, then out = W_r z */
	double z[6] = {0};
	for (int a = 0; a < m; ++a) {
		const double *J = rows[idx[a]].J + side;
		for (int q = 0; q < rank; ++q)
			z[q] += J[perm[q]] * lambda[a];
	}
	for (int q = 0; q < rank; ++q) {
		for (int j = 0; j < q; ++j)
			z[q] -= L[q][j] * z[j];
		z[q] /= L[q][q];
	}
	for (int q = rank - 1; q >= 0; --q) {
		for (int j = q + 1; j < rank; ++j)
			z[q] -= L[j][q] * z[j];
		z[q] /= L[q][q];
	}
	for (int a = 0; a < m; ++a) {
		const double *J = rows[idx[a]].J + side;
		double v = 0.0;
		for (int q = 0; q < rank; ++q)
			v += J[perm[q]] * z[q];
		out[a] = v;
	}
}

/* restore_face_warm_start's marks of a normal row */
#define AUTO_RESTORED 1 /* its face's load was made whole */
#define AUTO_SLIDING 2  /* one of its friction rows slides (mark_sliding) */

/* Marks AUTO_SLIDING the normal rows with a friction row that slides this step: a velocity to remove (its q) that
 * more than AUTO_SLIDE times the friction its whole warm-started normal allows could not take away, row by row
 * (|q_i| > AUTO_SLIDE A_ii mu_i lambda_n / carry). A sliding face's impulses are the previous step's kinetic ones;
 * made whole they pressed boxes launched across Bullet's floor at 100 m/s into it deeper than Bullet's own solver
 * did (docs/solvers.md, "auto"). */
static void mark_sliding(const lk_problem *p, const double *lambda, double carry, unsigned char *mark)
{
	for (int i = 0; i < p->nrows; ++i) {
		const lk__row *r = &p->rows[i];
		if (p->link[i].kind != LK_ROW_FRICTION || r->findex < 0)
			continue;
		if (fabs(r->q) > AUTO_SLIDE * r->diag * r->mu * fabs(lambda[r->findex]) / carry)
			mark[r->findex] |= AUTO_SLIDING;
	}
}

/* The warm start: the incoming lambda is the previous step's impulses damped by `carry` (the adapters' warm
 * start: ODE's warm_factor, Bullet's m_warmstartingFactor). On every face of area, the part of the normal
 * impulses that the face's wrench depends on is made whole again. A face's normal impulses lambda_F split into
 * their part in the span of the rows' Jacobians, K K^+ lambda_F (range_part), which sets the force and torques
 * the face transmits, and the rest, which only trades load between the face's contacts (four contacts of a
 * box face carry three wrench components). The first is made whole, the second stays damped: lambda_F +=
 * (1 - carry) / carry K K^+ lambda_F, and du follows the change row by row.
 * With `friction`, the friction rows of the faces' normals are made whole too (lambda /= carry): a face that
 * held a box on an incline the step before holds it again at once; a face that slides (mark_sliding) is left as
 * it came. The friction rows' part in the span of
 * the face's rows together with the normals' was tried instead: that least-norm share moves load between a
 * contact's normal and its friction, away from the cone the contact's own normal bounds, and the sweeps on
 * Bullet's resting incline still ran seven or eight a step where with the friction whole they stop after one.
 * Not on a stack, whose faces' friction stays damped: there it cost the sweeps of Bullet's 20-box stack more
 * and left a wall of twelve bricks a row shaking (docs/solvers.md, "auto"). */
static void restore_face_warm_start(lk__ctx *c, const faces *fs, double carry, int friction)
{
	if (!(carry > 0.0) || carry >= 1.0)
		return;
	lk_problem *p = c->p;
	const double up = (1.0 - carry) / carry;
	/* the faces' normal rows, marked for their friction rows (any order: Bullet writes the normals of all
	 * contacts before their friction rows, ODE a contact's rows together) */
	unsigned char *in_face = friction ? lk__arena_alloc(&p->arena, (size_t)p->nrows) : NULL;
	if (in_face) {
		memset(in_face, 0, (size_t)p->nrows);
		mark_sliding(p, c->lambda, carry, in_face);
	}
	for (int f = 0; f < fs->n; ++f) {
		/* the face's normal rows */
		int idx[AUTO_FACE_MAX], m = 0;
		for (int i = fs->start[f]; i < fs->start[f] + fs->count[f] && m <= AUTO_FACE_MAX; ++i)
			if (p->link[i].kind == LK_ROW_NORMAL) {
				if (m < AUTO_FACE_MAX)
					idx[m] = i;
				++m;
			}
		if (m < AUTO_AREA_CONTACTS || m > AUTO_FACE_MAX)
			continue;
		int slides = 0;
		for (int a = 0; a < m && in_face; ++a)
			slides |= in_face[idx[a]] & AUTO_SLIDING;
		if (slides)
			continue;
		/* the span on the pair's first moving body (the other side's Jacobians are linear in these) */
		const int side = p->link[idx[0]].a < p->nbodies ? 0 : 6;
		double l[AUTO_FACE_MAX], v[AUTO_FACE_MAX];
		for (int a = 0; a < m; ++a)
			l[a] = c->lambda[idx[a]];
		range_part(p->rows, idx, m, side, l, v);
		for (int a = 0; a < m; ++a) {
			const double d = up * v[a];
			c->lambda[idx[a]] += d;
			lk__row_apply(&p->rows[idx[a]], c->du, d);
			if (in_face)
				in_face[idx[a]] |= AUTO_RESTORED;
		}
		/* the changes as m row updates, each carrying its share of the Gram matrix, its factor and the
		 * projection, in multiply-adds (a count of no rows would count no work) */
		lk__count(c, m, LK_WORK_SWEEP_ROW + LK_WORK_BLOCK_MAC * (33.0 * m + 60.0) / m);
	}
	if (!in_face)
		return;
	int restored = 0;
	for (int i = 0; i < p->nrows; ++i) {
		const lk__row_link *r = &p->link[i];
		if (r->kind == LK_ROW_FRICTION && r->findex >= 0 && (in_face[r->findex] & AUTO_RESTORED)) {
			const double d = up * c->lambda[i];
			c->lambda[i] += d;
			lk__row_apply(&p->rows[i], c->du, d);
			++restored;
		}
	}
	lk__count(c, restored, LK_WORK_SWEEP_ROW);
}

/* What a sweep changed of the bodies' velocities: the largest over the bodies of |dv| + r |dw|, r the body's
 * radius of gyration (reach), in m/s. A sweep that only trades load between the redundant contacts of a face
 * (four corners of a box carry three wrench components) changes no body's velocity, however much it moves each
 * row: measured row by row, |A_ii dlambda_i|, such a sweep looks like error, and on a resting stack whose faces
 * have four to eight points the sweeps went on trading load to the cap of every step. */
static double body_change(const double *du, double *before, const double *reach, const int *moved, int nm)
{
	double m = 0.0;
	for (int k = 0; k < nm; ++k) {
		const int b = moved[k];
		const double *u1 = du + LK_DU_STRIDE * b;
		double *u0 = before + LK_DU_STRIDE * b;
		/* the six differences as three pairs of lanes, squared; the sums in the order of a plain loop */
		const lk__v2d n01 = lk__ld2(u1), n23 = lk__ld2(u1 + 2), n45 = lk__ld2(u1 + 4);
		const lk__v2d d01 = n01 - lk__ld2(u0), d23 = n23 - lk__ld2(u0 + 2), d45 = n45 - lk__ld2(u0 + 4);
		const lk__v2d s01 = d01 * d01, s23 = d23 * d23, s45 = d45 * d45;
		const double dv = s01[0] + s01[1] + s23[0], dw = s23[1] + s45[0] + s45[1];
		/* the velocities the next sweep's change is measured from, in the same pass (a copy of du before
		 * every sweep was a twelfth of ODE's step on a 3,000-box pile) */
		lk__st2(u0, n01);
		lk__st2(u0 + 2, n23);
		lk__st2(u0 + 4, n45);
		/* sqrt(dv) + r sqrt(dw) <= sqrt(2 (dv + r^2 dw)): the square roots only for a body that may pass the
		 * largest so far */
		if (2.0 * (dv + reach[b] * reach[b] * dw) <= m * m)
			continue;
		const double e = sqrt(dv) + reach[b] * sqrt(dw);
		m = e > m ? e : m;
	}
	return m;
}

/* Whether articulated bodies touch: a contact between two bodies that rows other than contacts' (joints,
 * limits, motors) tie to other moving bodies, a pile of ragdolls; -1 on no memory. Swept in one order, step
 * after step, such a pile let a limb sink into another ragdoll's under it, the deeper the more sweeps a step
 * (ODE's 32 ragdolls at 20 and 40 iterations, as under pgs and PSOR in their order; not in a random order, nor
 * under quickstep, which reorders all of its rows): the joints' rows and the contacts' between them, far apart
 * in the problem, resolve the same conflict the same way every step (docs/benchmarks.md, "auto against the
 * engines' own solvers"). */
static int articulated_touch(lk_problem *p)
{
	unsigned char *art = lk__arena_alloc(&p->arena, (size_t)p->nbodies + 1);
	if (!art)
		return -1;
	memset(art, 0, (size_t)p->nbodies + 1);
	for (int i = 0; i < p->nrows; ++i) {
		const lk__row_link *r = &p->link[i];
		if (!contact_row(r) && r->a < p->nbodies && r->b < p->nbodies)
			art[r->a] = art[r->b] = 1;
	}
	for (int i = 0; i < p->nrows; ++i) {
		const lk__row_link *r = &p->link[i];
		if (r->kind == LK_ROW_NORMAL && r->a < p->nbodies && r->b < p->nbodies && art[r->a] && art[r->b])
			return 1;
	}
	return 0;
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
	/* the bank is in the rows of the problem's larger solves: an engine that solves its islands one by one
	 * hands the problem solves of every size, and a small island's bank must not forgive a large one's debt.
	 * Nor may the bank's slow forgetting of the larger solves (a hundredth a solve): a debt is kept whole
	 * however the bank shrinks, and only savings are cut to it. Clamped to the bank on both sides, an island
	 * solved between two solves of a large one forgave a hundredth of its debt each time, which the large
	 * one borrowed again: the rubble of Bullet's fallen 15-row wall, a loose brick its own island, spent 12 to
	 * 13 sweeps a step on credit never repaid where the budget was 10 */
	p->auto_rows = n > p->auto_rows * 0.99 ? n : p->auto_rows * 0.99;
	const double bank = cfg->adapt.bank * mean * p->auto_rows;
	double account = p->auto_account;
	account = account > bank ? bank : account;
	/* the structure: the faces of area, and whether they make a stack */
	faces fs = {0, NULL, NULL, 0, 0, 0, 0};
	if (p->form == LK_FORM_ROWS)
		find_faces(p, &fs);
	const int depth = cfg->coarse > 0 && fs.stack ? stack_depth(&fs, p) : 0;
	const int stack = depth >= AUTO_STACK_DEPTH;
	/* what this solve may spend: the budget, plus the savings, plus the debt it may still take on, shared as
	 * sweeps (every island of a step gets as many more), never less than the budget and at most `cap`
	 * budgets. The debt is for every problem of bodies (the row form), not only stacks: the impacts of a pile
	 * landing at 30 Hz in ODE, at the budget, went 46 cm deep where quickstep's went 33 (39 on credit, within
	 * the seeds' spread), and boxes landing on a 40-degree incline in Bullet 4.2 cm where Bullet's own solver
	 * let them 3.5. Off a stack the debt is a share of the bank: Bullet's 2D pool at 20 iterations spent the
	 * whole bank on its first landing and had nothing left for the impacts after it (7.6 cm deep against
	 * Bullet's 6.5). A problem with joints spends its budget and no more: ODE's piled ragdolls at 20
	 * iterations, whose impacts spent the savings of the steps before, ended with a limb wedged 4 cm deep in
	 * every seed, against 2 mm at the budget */
	const double debt = p->form != LK_FORM_ROWS ? 0.0 : stack ? bank : AUTO_IMPACT_DEBT * bank;
	double allow = fs.joints ? mean : mean + (account + debt) / p->auto_rows;
	/* a tall stack may spend up to AUTO_LANDING sweeps a face of its chain, at most twice the cap: its faces
	 * carry their load over only from a solve that settled (restore_face_warm_start), and a landing that no
	 * solve settles leaves each step to find the load again from the damped start, where a tall stack sinks.
	 * Elsewhere the cap stays, also on the short chains of a pile: given more, the impacts of pools and piles
	 * spent their debt on the first ones and landed deeper on the later ones (docs/solvers.md, "auto") */
	double cap = cfg->adapt.cap * mean;
	if (stack && AUTO_LANDING * depth > cap)
		cap = AUTO_LANDING * depth < 2.0 * cap ? AUTO_LANDING * depth : 2.0 * cap;
	allow = allow > cap ? cap : allow < mean ? mean : allow;
	/* the solve runs under this allowance: the monitor's budget rule and the correction's pricing read it */
	lk_solver_config local = *cfg;
	local.budget = allow;
	local.max_iterations = INT32_MAX;
	c->cfg = &local;
	/* a stack's faces start from their whole load where the last solve settled, or took a two-level
	 * correction (which sets every face's load at once) and ended near the tolerance; one that ended on its
	 * allowance after sweeps alone, or far from the tolerance (a 30-box stack landing in Bullet at 10
	 * iterations, whose solves ended a hundred tolerances away: restored, it fell at 2.4 s where Bullet's own
	 * solver held it to 6.4 s; 5.5 s without), leaves a load that is no more than a guess, and the damped warm
	 * start is the safer one (a brick wall at
	 * 30 Hz, whose faces make no chain for the correction, restored after such steps, shook and fell in 7 s in
	 * Bullet, where Bullet's own solver kept it 9.6 s). Nor where the correction was found too costly: no
	 * correction then sets the faces' load, and the wall, restored after the steps the sweeps settled, rested
	 * 6.1 cm deep at 30 Hz against Bullet's 5.3 (4.9 without) */
	if (cfg->warm_start && stack && p->auto_settled && !p->auto_coarse_costly)
		restore_face_warm_start(c, &fs, cfg->adapt.carry, 0);
	/* faces that make no stack, in a problem without joints: their normals' wrench and their friction whole
	 * where the last solve settled (restore_face_warm_start), or ended on its allowance all but settled
	 * (AUTO_NEARLY): restored only after a solve that settled, Bullet's resting boxes at 5 iterations ended every
	 * solve just above the tolerance from the damped start, and so never had the start that settles them, sweeping
	 * the whole budget every step (docs/benchmarks.md, "A resting face near its tolerance").
	 * Not with joints, which spend their budget whatever the start, and where a warm start that held a limb
	 * wedged between others did harm before (ODE's piled ragdolls, docs/ode.md, "Warm starting") */
	else if (cfg->warm_start && !stack && !fs.joints && fs.n > 0 && (p->auto_settled || p->auto_near))
		restore_face_warm_start(c, &fs, cfg->adapt.carry, 1);

	int *perm = NULL;
	lk_status st = lk__sweep_order(c, 0, &perm);
	if (st != LK_OK) {
		c->cfg = cfg;
		return st;
	}
	/* after the first `shuffle` sweeps in the problem's order, the contacts' rows in a random order drawn anew
	 * every `shuffle` sweeps, as ODE's quickstep reorders its rows every eight iterations (docs/solvers.md,
	 * "auto", has the measurements). An order that is the same every step resolves what a face's redundant
	 * contacts leave open, how they share its load and its friction, the same way every step, and what a solve
	 * that runs long leaves over pushes the same way step after step: a pyramid drifts. A solve that settles
	 * within its first sweeps leaves next to nothing over and keeps the order in which the load its faces
	 * carried over settles fastest. Only where there are faces: a contact between two spheres has one way to
	 * carry its load. Only the contacts' rows, among the contacts' places: a joint's rows, its limits and its
	 * motors keep theirs. Except where articulated bodies touch (articulated_touch): there every row, over the
	 * whole problem, as quickstep reorders all of its rows. Each solve draws from a seed of its own, the solves
	 * of a problem counted, so that a run is the same run after run. Not with the threads' orders, whose parts
	 * are the threads' work. */
	const int rows_form = !perm && p->form == LK_FORM_ROWS;
	const int touch_every = cfg->adapt.touch > 0 ? cfg->adapt.touch : cfg->adapt.shuffle;
	/* no contact between two moving bodies (find_faces counts them), none between articulated ones:
	 * articulated_touch's passes over the rows are not needed (a robot's motors and limits above the ground) */
	const int touch = rows_form && fs.joints && touch_every > 0 && fs.between_moving > 0 ? articulated_touch(p) : 0;
	if (touch < 0) {
		c->cfg = cfg;
		return LK_ERR_NO_MEMORY;
	}
	const int shuffle = touch ? touch_every : rows_form && fs.n > 0 ? cfg->adapt.shuffle : 0;
	/* place[]: the contacts' places in the order, in increasing order; contact[]: the rows they get, shuffled;
	 * shuffled[]: the order the sweeps take from the first reshuffle on. Before it they take the problem's own
	 * order with no permutation at all: the natural order's loop reads the records in turn (sweep.c), and an
	 * identity permutation made every sweep of a large pile markedly slower */
	int *shuffled = NULL, *place = NULL, *contact = NULL, ncontact = 0;
	if (shuffle) {
		shuffled = lk__arena_alloc(&p->arena, (size_t)n * sizeof *shuffled);
		place = lk__arena_alloc(&p->arena, (size_t)n * sizeof *place);
		contact = lk__arena_alloc(&p->arena, (size_t)n * sizeof *contact);
		if (!shuffled || !place || !contact) {
			c->cfg = cfg;
			return LK_ERR_NO_MEMORY;
		}
		for (int i = 0; i < n; ++i) {
			shuffled[i] = i;
			if (touch || contact_row(&p->link[i])) {
				place[ncontact] = contact[ncontact] = i;
				++ncontact;
			}
		}
		c->rng.s = cfg->seed + 0x9E3779B97F4A7C15ull * ++p->auto_solves;
	}
	lk__coarse coarse = {0};
	/* the correction's faces, found at its first use: 1, or -1 where none could be; a structure whose factor
	 * was too costly (the faces of a wall in running bond are no chain) is not analysed again for the next
	 * AUTO_COARSE_WAIT solves: the analysis of each step's faces, only to decline them, cost a fifth of a
	 * wall's solve */
	int coarse_made = 0;
	if (p->auto_coarse_wait > 0) {
		--p->auto_coarse_wait;
		coarse_made = -1;
	}
	int since = 0, interval = cfg->coarse;
	double scale = 0.0, prev_err = NAN, prev_rho = NAN, prev_d = INFINITY;
	int taken = 0;     /* two-level corrections taken */
	int corrected = 0; /* a correction came between this sweep and the one before */
	int near = 0;      /* the last sweep's change was within AUTO_RESTORE_NEAR tolerances */
	int nearly = 0;    /* what the last sweep leaves (its bound) was within AUTO_NEARLY tolerances */
	/* the tolerance tightens with the square of the budget: an engine set to twice the iterations asks for a
	 * step four times as accurate (at 20, ODE's resting boxes on the incline crept 1.6 mm in 10 s at 1e-3 of
	 * the step's velocities, where quickstep's crept 1.5; Bullet's pool of boxes ended with twice its kinetic
	 * energy). A problem with joints spends its budget as the engines' solvers do, and stops early only on a
	 * sweep that changes nothing: a joint's error is kept, step after step, and ODE's own joint test
	 * (demo_joints, test 741: a universal joint's rate against its angle's change, to 1e-10 rad/s) failed at
	 * 258 times its limit where the tolerance stopped the sweeps, and passes at the budget, as under pgs */
	const double tol =
	    fs.joints ? 0.0 : cfg->adapt.tol * (AUTO_TOL_BUDGET / mean) * (AUTO_TOL_BUDGET / mean);
	c->step_work = n * LK_WORK_SWEEP_ROW;
	/* the bodies whose velocity change decides the stop; none with joints, which stop only where a sweep
	 * changes no lambda (its largest change, which the sweep returns) */
	const int nb = p->form == LK_FORM_ROWS && !fs.joints ? p->nbodies : 0;
	double *du_before = nb ? lk__arena_alloc(&p->arena, (size_t)nb * LK_DU_STRIDE * sizeof *du_before) : NULL;
	double *reach = nb ? lk__arena_alloc(&p->arena, (size_t)nb * sizeof *reach) : NULL;
	int *moved = nb ? lk__arena_alloc(&p->arena, (size_t)nb * sizeof *moved) : NULL;
	if (nb && (!du_before || !reach || !moved)) {
		c->cfg = cfg;
		return LK_ERR_NO_MEMORY;
	}
	/* the bodies a row acts on, in body order: no row moves the others, whose du stays 0 and changes nothing
	 * of the largest change. An engine hands its islands' bodies whether they touch anything or not (Bullet
	 * batches a falling pile's free boxes with the few that land), and every sweep's measure went over them */
	int nm = 0;
	if (nb) {
		memset(moved, 0, (size_t)nb * sizeof *moved);
		for (int i = 0; i < n; ++i) {
			const lk__row_link *r = &p->link[i];
			if (r->a < nb)
				moved[r->a] = 1;
			if (r->b < nb)
				moved[r->b] = 1;
		}
		for (int b = 0; b < nb; ++b)
			if (moved[b])
				moved[nm++] = b;
	}
	for (int k = 0; k < nm; ++k) {
		const int b = moved[k];
		/* the radius of gyration sqrt(3 m^-1 / tr(I^-1)): a turn at w moves the body's points at about |w| times it */
		const lk_body_def *bd = &p->bodies[b];
		const double ti = bd->inv_inertia[0] + bd->inv_inertia[4] + bd->inv_inertia[8];
		const double im = (bd->inv_mass[0] + bd->inv_mass[1] + bd->inv_mass[2]) / 3.0;
		reach[b] = ti > 0.0 ? (im > 0.0 ? sqrt(3.0 * im / ti) : 1.0) : 0.0; /* a body that only turns: rad/s */
	}
	/* du before the first sweep; body_change keeps it from one sweep to the next */
	if (nb)
		memcpy(du_before, c->du, (size_t)nb * LK_DU_STRIDE * sizeof *du_before);
	/* the scale of a small problem of bodies before the sweeps, in the sweeps' order (the same sums): every sweep
	 * is then the plain one, and a solve of a few microseconds between the engine's other work does not fetch a
	 * second sweep's code as well (on Bullet's incline auto took more time than pgs for as many instructions,
	 * with more instruction-cache misses; docs/benchmarks.md, "auto against the engines' own solvers"). A large
	 * problem takes the scale from its first sweep, which reads the rows anyway. */
	const int scale_first = nb && n <= AUTO_SCALE_APART;
	if (scale_first) {
		double q2 = 0.0, nq = 0.0;
		for (int k = 0; k < n; ++k) {
			const lk__row *r = &p->rows[perm ? perm[k] : k];
			const double counted = r->findex < 0; /* no friction row */
			q2 += counted * (r->q * r->q);
			nq += counted;
		}
		scale = nq > 0 ? sqrt(q2 / nq) : 0.0;
	}
	/* the sweeps' relaxation: 1 unless the spec sets w= (quickstep's own is 1.3, dWorldSetQuickStepW); never
	 * PSOR's w=auto, which the configuration refuses for auto */
	const double relax = cfg->sor_w;
	/* the joints' bilateral rows' own relaxation (cfg->adapt.joint_w): their 1 / A_ii scaled for the solve,
	 * where the sweeps read it, and given back to the bit after it. Not a limit's, a motor's or any other
	 * bounded row's: relaxed too, the joints of arched chains of 25 and 40 hinged links on their limits came
	 * out looser than under plain sweeps and than under quickstep (docs/benchmarks.md, "Joints relaxed as
	 * quickstep relaxes them") */
	double *inv_kept = NULL;
	if (p->form == LK_FORM_ROWS && fs.joints && cfg->adapt.joint_w > 0.0 && cfg->adapt.joint_w != relax) {
		if (!(inv_kept = lk__arena_alloc(&p->arena, (size_t)n * sizeof *inv_kept))) {
			c->cfg = cfg;
			return LK_ERR_NO_MEMORY;
		}
		memcpy(inv_kept, p->inv_diag, (size_t)n * sizeof *inv_kept);
		const double f = cfg->adapt.joint_w / relax;
		for (int i = 0; i < n; ++i) {
			const lk__row *r = &p->rows[i];
			if (contact_row(&p->link[i]) || isfinite(r->lo) || isfinite(r->hi))
				continue;
			double sa = 0.0, sb = 0.0;
			for (int k = 0; k < 6; ++k) {
				sa += r->J[k] * r->MJ[k];
				sb += r->J[6 + k] * r->MJ[6 + k];
			}
			if (!(fmax(sa, sb) > AUTO_JOINT_W_RATIO * fmin(sa, sb)) || sa == 0.0 || sb == 0.0)
				p->inv_diag[i] *= f;
		}
	}
	for (int it = 1;; ++it) {
		/* the scale from the first sweep (q does not change); the change from the bodies' velocities (row form) or
		 * from each row's correction (the matrix form, which has no bodies), the plain sweep where neither needs
		 * the sums */
		if (shuffle && it > 1 && (it - 1) % shuffle == 0) {
			lk__shuffle_local(&c->rng, contact, ncontact, touch ? ncontact : AUTO_SHUFFLE_WINDOW);
			for (int k = 0; k < ncontact; ++k)
				shuffled[place[k]] = contact[k];
			perm = shuffled;
		}
		lk__sweep_sums sums = {.want_scale = it == 1};
		const int plain = fs.joints || (nb && (it > 1 || scale_first));
		double change = plain ? lk__pgs_sweep(c, perm, n, relax) : lk__pgs_sweep_sums(c, perm, relax, &sums);
		c->iterations = it;
		if (it == 1 && !scale_first)
			scale = sums.nq > 0 ? sqrt(sums.q2 / sums.nq) : 0.0;
		const double err = fs.joints ? change : nb ? body_change(c->du, du_before, reach, moved, nm) : sums.dvmax;
		/* what the sweeps still have to correct, from this sweep's largest correction and the rate of the last
		 * ones: a contraction at rate rho leaves at most err rho / (1 - rho) (the a-posteriori bound of a
		 * contractive iteration; a projected sweep is one near a solution, Erleben 2013 sec. 5.2). Without a
		 * rate yet, or at one that is not a contraction, only a tenth of the tolerance stops the sweeps. */
		const double rho = fmax(err / prev_err, prev_rho);
		const double left = rho < 1.0 ? err * rho / (1.0 - rho) : INFINITY;
		prev_rho = err / prev_err;
		prev_err = err;
		/* after a correction the rate is the sweep's and the correction's together, which a large correction
		 * makes look fast: there the sweep's own change must be below the tolerance too */
		const int settled = corrected ? err <= tol * scale && rho < 1.0 : left <= tol * scale;
		corrected = 0;
		near = err <= AUTO_RESTORE_NEAR * tol * scale;
		nearly = left <= AUTO_NEARLY * tol * scale;
		if ((settled || err <= 0.1 * tol * scale) && isfinite(change)) {
			c->stop = LK_STOP_ABSOLUTE;
			break;
		}
		/* the two-level correction every `interval` sweeps on a stack, while the work left pays for it */
		/* the correction's faces are found at its first use that the work left can pay for, as priced before
		 * they are found: every contact row, which the correction welds pair by pair, not only the normals of
		 * the faces of area that make the stack (with two friction rows each). Priced by those, a fallen house
		 * of cards in Bullet at 30 Hz made the level in most solves and took a correction in few: the
		 * pairs of one or two contacts made it dearer than the work left (docs/solvers.md, "auto") */
		if (stack && ++since >= interval && isfinite(change) && coarse_made == 0 &&
		    lk__work_left(c) >= lk__coarse_cost_kept(p->coarse_keep, p, fs.welded) + AUTO_COARSE_CALL) {
			coarse_made = lk__coarse_setup(&coarse, p) == LK_OK && coarse.nfaces > 0 ? 1 : -1;
			coarse.keep = &p->coarse_keep;
			coarse.keep_arena = &p->coarse_arena;
		}
		if (stack && since >= interval && isfinite(change) && coarse_made > 0 &&
		    lk__work_left(c) >= lk__coarse_cost(&coarse) + AUTO_COARSE_CALL) {
			since = 0;
			const int rejected = coarse.rejected;
			const double d = lk__coarse_correct(&coarse, c);
			lk__count(c, 1, AUTO_COARSE_CALL);
			/* the next sweep's change is measured from du after the correction (taken or not) */
			if (nb)
				memcpy(du_before, c->du, (size_t)nb * LK_DU_STRIDE * sizeof *du_before);
			/* less often where the welded faces do not fit (sliding, opening: the correction is not taken) or
			 * fit so poorly that each correction changes nearly as much as the one before (a stack whose
			 * faces open as it lands, where the line search keeps cutting the welded step short): there the
			 * sweeps do more for the work */
			taken += coarse.rejected == rejected;
			if ((coarse.rejected > rejected || d > AUTO_COARSE_SLOW * prev_d) && interval < (1 << 20))
				interval *= 2;
			prev_d = d;
			change = d > change || d != d ? d : change;
			/* the next rate is that of a sweep and a correction together, and the sweep after it stops where
			 * its own change is below the tolerance at a rate below one: where the sweeps' rate was forgotten
			 * after every correction, a resting stack whose sweeps changed 5e-6 against a tolerance of 4e-5 took
			 * correction after correction to the end of its allowance (Bullet's 20-box stack at 20 iterations
			 * did so on the steps where it settles, and fell at 7 s); where the composite rate alone decided, a
			 * large correction made it look fast and a landing stack of heavy boxes on light ones stopped at RES
			 * 1e-4 instead of 5e-6, rocked and fell */
			prev_rho = NAN;
			corrected = coarse.rejected == rejected;
		}
		c->stop = lk__monitor(c, it, change);
		if (c->stop != LK_STOP_NONE)
			break;
	}
	if (inv_kept)
		memcpy(p->inv_diag, inv_kept, (size_t)n * sizeof *inv_kept);
	if (coarse.too_costly)
		p->auto_coarse_wait = AUTO_COARSE_WAIT;
	if (coarse_made > 0 || coarse.too_costly)
		p->auto_coarse_costly = coarse.too_costly;
	p->auto_settled = c->stop == LK_STOP_ABSOLUTE || (taken > 0 && near);
	p->auto_near = !stack && nearly;
	lk__coarse_free(&coarse);
	c->cfg = cfg;
	account += mean * n - c->work;
	p->auto_account = account > bank ? bank : account;
	return LK_OK;
}

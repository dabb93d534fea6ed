/* Interior point on the friction cones: ipm.
 *
 * Coulomb's law with the De Saxce & Feng (1998) modified velocity w'_n = w_n + mu |w_t| is, for a fixed value
 * sigma_c of each contact's mu |w_t|, the optimality condition of a convex program over second-order cones
 * (Acary, Cadoux, Lemarechal & Malick, "A formulation of the linear discrete Coulomb friction problem via convex
 * optimization", ZAMM 91(2), 2011, sec. 3, problem (3.4)):
 *     minimise 1/2 x^T A x + (q + sigma)^T x   over  x_c in K_c = {mu x_n >= |x_t|}  (and the rows' own bounds),
 * whose solution has w' = A x + q + sigma in the dual cone {w'_n >= mu |w_t|} and x_c . w'_c = 0. Their fixed
 * point sigma_c = mu |w_t(x(sigma))| (their sec. 4) is a solution of Coulomb's problem; each outer iteration
 * solves the convex program for the current sigma and updates it, mixed by Anderson's acceleration. The box
 * model's friction bound |x_t| <= mu x_n, row by row, is the same program over two-dimensional cones.
 *
 * The program is solved by the primal-dual interior-point method with Nesterov-Todd scaling and Mehrotra's
 * predictor-corrector, in the form of Vandenberghe's cone QP ("The CVXOPT linear and quadratic cone program
 * solvers", 2010, sec. 1.2, 3 and 6): s = G x - h in K, z in K dual, with per block of K the scaling W such that
 * W z = W^-1 s = lambda (eq. (32) for the second-order cone), and each Newton step from
 *     (A + G^T W^-2 G) dx = -r_x + G^T W^-1 (lambda \ r_c) + G^T W^-2 r_s,
 * which here is A plus a small block a cone and a diagonal term a bounded row: the envelope factor of envelope.h
 * assembles A from the rows (or from the matrix form's entries) and adds them. Blocks of K:
 *     a normal row with one or two of its friction rows: s = (mu x_n, x_t), a second-order cone (build_blocks);
 *     a row with a finite lower bound: s = x - lo >= 0; with a finite upper bound: s = hi - x >= 0;
 *     a row with lo = hi (a friction row of mu = 0 too) is fixed at its bound and leaves the program.
 *
 * Why: on a stack's recorded steps, four contacts a face at their own depths make A singular up to the CFM and
 * the sweeps, the Newton methods and Siconos's solvers all stop short of Siconos's error 1e-8; an
 * interior point's iterations do not depend on A's conditioning the way theirs do (docs/solvers.md, "ipm").
 *
 * Work: an iteration is two products with A (the residual and a step of iterative refinement, LK_WORK_PRODUCT_ROW
 * a row) and one factor with its solves (LK_WORK_FACTOR_MAC a multiply-add of envelope.h's count); the iteration
 * limit counts interior-point iterations and the polish's Newton iterations (below), the monitor is consulted
 * after each outer iteration. The result is projected onto the rows' bounds and cones. A first program cut short
 * by the budget is no answer, and the solve fails with LK_ERR_LIMIT (an engine's adapter then steps with the
 * engine's own solver).
 *
 * The polish: the fixed point of the De Saxce terms converges linearly, and slowly where many contacts slide,
 * while Newton on the minimum map (Alart & Curnier's on the cone, newton_cone.c) converges fast from where the
 * contacts' states are known and stalls or wanders from where they are not. So once an outer iteration's answer is
 * within cfg->ipm.polish tolerances, Newton takes over from it; its attempts together spend at most
 * IPM_POLISH_SHARE times the work the interior point has, and each ends where IPM_POLISH_WINDOW of its iterations
 * have not halved the merit. Where it does not reach the tolerance, the interior point goes on from the best
 * answer so far (its De Saxce terms), and tries Newton again only from an answer a hundred times better than the
 * last one it tried from. A Newton that fails costs the solve at most IPM_POLISH_SHARE + 1 times its work. */
#include "methods.h"

#include "envelope.h"
#include "kernel.h"

#include <float.h>
#include <string.h>

/* the relative pivot of the envelope factor below which a row counts as dependent: lower than A's own rule
 * (envelope.h), since the cones' barrier terms make the system definite until the iterate nears the boundary */
#define IPM_DEAD_PIVOT 1e-16
/* interior-point iterations a convex program at most, and the fraction of the step to the cone's boundary */
#define IPM_INNER_MAX 60
#define IPM_STEP_FRACTION 0.99
/* A program after the first starts from the last one's point, s and z moved into the cones' interior by this
 * much of their scales: the De Saxce terms change little from one program to the next, and the warm start
 * takes fewer iterations than a start at the scales' identity (docs/benchmarks.md, "Coulomb's cone against
 * Siconos") */
#define IPM_WARM_MARGIN 1e-3
/* the differences Anderson's mixing of the De Saxce terms keeps */
#define IPM_ANDERSON 5
/* the largest difference of A_ij and A_ji a matrix-form problem may have (check_symmetric) */
#define IPM_ASYMMETRY 1e-2

typedef struct ipm_block {
	int dim;     /* 1: a bound; 2 or 3: a contact's cone */
	int off;     /* offset in s and z */
	int var[3];  /* the variables (indices into idx): the normal first */
	double g;    /* a bound: +1 (s = x - lo) or -1 (s = hi - x); a cone: mu (s_0 = mu x_n) */
	double h;    /* a bound: s = g x - h */
	int con;     /* a cone: its normal row's index among the rows with friction (ipm_state.con_row) */
} ipm_block;

typedef struct ipm_state {
	int nv, nb, ns;       /* variables (free rows), blocks, the length of s and z */
	int *idx;             /* variable -> row */
	int *var;             /* row -> variable, or -1 for a fixed row */
	ipm_block *blk;
	double *x, *s, *z, *dx, *ds, *dz, *dxa, *dsa, *dza;
	double *rx, *rs, *rhs, *lam, *t, *u, *ll, *rc;
	double *wbar, *eta;   /* per block: the scaling's direction (dim numbers at off) and its scale */
	double *sigma;        /* per row: the De Saxce term added to q_i (normal rows of contacts), else 0 */
	int ncon;             /* normal rows with friction */
	int *con_row, *con_of; /* their rows; row -> index among them, or -1 */
	double *full;         /* n: lambda with the fixed rows, for the products */
	double *w;            /* n: A lambda + q */
	double *aw, *res;     /* n: a product A x; nv: the residual of a solve (the refinement) */
	double *rs_g, *rv_g;  /* the refinement's scratch: ns (G dx, W^-2 G dx), nv (G^T W^-2 G dx) */
	double *bdu;          /* the products' M^-1 J^T x, a slot a body */
	lk__env env;
	double *aval;         /* A_FF in the envelope, once assembled (NULL before, or without the memory) */
	double zscale, sscale;
} ipm_state;

/* ---------------------------------------------------------------- the algebra of a block (Vandenberghe sec. 6) */

static double jdot(const double *a, const double *b, int d)
{
	double v = a[0] * b[0];
	for (int k = 1; k < d; ++k)
		v -= a[k] * b[k];
	return v;
}

/* out = a o b, the Jordan product: (a . b, a_0 b_1 + b_0 a_1) */
static void jprod(const double *a, const double *b, double *out, int d)
{
	double v = 0.0;
	for (int k = 0; k < d; ++k)
		v += a[k] * b[k];
	for (int k = 1; k < d; ++k)
		out[k] = a[0] * b[k] + b[0] * a[k];
	out[0] = v;
}

/* out = l \ v, the solution u of l o u = v */
static void jdiv(const double *l, const double *v, double *out, int d)
{
	if (d == 1) {
		out[0] = v[0] / l[0];
		return;
	}
	double l1v1 = 0.0;
	for (int k = 1; k < d; ++k)
		l1v1 += l[k] * v[k];
	const double u0 = (l[0] * v[0] - l1v1) / jdot(l, l, d);
	for (int k = 1; k < d; ++k)
		out[k] = (v[k] - u0 * l[k]) / l[0];
	out[0] = u0;
}

/* out = W x (inverse: W^-1 x) for a block's scaling: a bound's W is eta; a cone's eta Wbar with
 * Wbar = [w0 w1^T; w1 I + w1 w1^T / (1 + w0)] and W^-1 = J Wbar J / eta, J = diag(1, -1, ..) */
static void wapply(const double *wb, double eta, const double *x, double *out, int d, int inverse)
{
	if (d == 1) {
		out[0] = inverse ? x[0] / eta : x[0] * eta;
		return;
	}
	const double sg = inverse ? -1.0 : 1.0, f = inverse ? 1.0 / eta : eta;
	double w1x1 = 0.0;
	for (int k = 1; k < d; ++k)
		w1x1 += wb[k] * x[k];
	const double y0 = wb[0] * x[0] + sg * w1x1;
	const double a = sg * x[0] + w1x1 / (1.0 + wb[0]);
	for (int k = 1; k < d; ++k)
		out[k] = f * (x[k] + a * wb[k]);
	out[0] = f * y0;
}

/* The Nesterov-Todd scaling of a block from interior s and z (Vandenberghe eq. (32)); lambda = W z. */
static int nt_scaling(const double *s, const double *z, double *wb, double *eta, double *lam, int d)
{
	if (d == 1) {
		if (!(s[0] > 0.0) || !(z[0] > 0.0))
			return -1;
		*eta = sqrt(s[0] / z[0]);
		lam[0] = sqrt(s[0] * z[0]);
		return 0;
	}
	const double ns2 = jdot(s, s, d), nz2 = jdot(z, z, d);
	if (!(ns2 > 0.0) || !(nz2 > 0.0) || !(s[0] > 0.0) || !(z[0] > 0.0))
		return -1;
	const double ns = sqrt(ns2), nz = sqrt(nz2);
	double sz = 0.0;
	for (int k = 0; k < d; ++k)
		sz += s[k] / ns * z[k] / nz;
	const double gamma = sqrt(0.5 * (1.0 + sz));
	wb[0] = (s[0] / ns + z[0] / nz) / (2.0 * gamma);
	for (int k = 1; k < d; ++k)
		wb[k] = (s[k] / ns - z[k] / nz) / (2.0 * gamma);
	*eta = sqrt(ns / nz);
	wapply(wb, *eta, z, lam, d, 0);
	return 0;
}

/* The largest a with x + a dx in the block's cone (INFINITY where the ray stays inside): the first positive
 * root of (x + a dx) . J (x + a dx), x interior */
static double max_step(const double *x, const double *dx, int d)
{
	if (d == 1)
		return dx[0] < 0.0 ? -x[0] / dx[0] : INFINITY;
	const double a = jdot(dx, dx, d), b = 2.0 * jdot(x, dx, d), c = jdot(x, x, d);
	double best = INFINITY;
	if (dx[0] < 0.0)
		best = -x[0] / dx[0];
	if (a == 0.0) {
		if (b < 0.0)
			best = fmin(best, -c / b);
		return best;
	}
	const double disc = b * b - 4.0 * a * c;
	if (disc < 0.0)
		return best;
	const double qq = -0.5 * (b + copysign(sqrt(disc), b));
	const double r1 = qq / a, r2 = qq != 0.0 ? c / qq : INFINITY;
	if (r1 > 0.0)
		best = fmin(best, r1);
	if (r2 > 0.0)
		best = fmin(best, r2);
	return best;
}

/* ------------------------------------------------------------------------------------------- the program */

/* The blocks of K and the free rows; LK_ERR_UNSUPPORTED for a friction row whose normal row is not a
 * contact's ([0, inf)). A friction row's bound mu lambda_n is a cone too: with friction=box each friction row
 * with its normal row makes a two-dimensional one, {mu x_n >= |x_t|}, whose De Saxce term is mu |w_t| (the
 * fixed point is then the box model's complementarity, row by row); with friction=cone a contact's pair
 * (lk__cone_pair) makes Coulomb's three-dimensional one and any other friction row a two-dimensional one. */
static lk_status build_blocks(lk__ctx *c, ipm_state *s)
{
	const lk_problem *p = c->p;
	const int n = c->n;
	lk__arena *a = &c->p->arena;
	s->var = lk__arena_alloc(a, ((size_t)n + 1) * sizeof(int));
	s->idx = lk__arena_alloc(a, ((size_t)n + 1) * sizeof(int));
	s->blk = lk__arena_alloc(a, 2 * ((size_t)n + 1) * sizeof(ipm_block));
	s->con_of = lk__arena_alloc(a, ((size_t)n + 1) * sizeof(int));
	s->con_row = lk__arena_alloc(a, ((size_t)n + 1) * sizeof(int));
	if (!s->var || !s->idx || !s->blk || !s->con_of || !s->con_row)
		return lk__fail(c->p, LK_ERR_NO_MEMORY, "ipm: out of memory for %d rows", n);
	for (int i = 0; i < n; ++i) {
		const lk__row *r = &p->rows[i];
		if (!lk__is_friction(r))
			continue;
		const lk__row *nr = &p->rows[r->findex];
		if (lk__is_friction(nr) || nr->lo != 0.0 || nr->hi != INFINITY)
			return lk__fail(c->p, LK_ERR_UNSUPPORTED,
			                "ipm: friction row %d's normal row %d is not a contact's (bounds [0, inf))", i,
			                r->findex);
	}
	/* the variables: every row but the fixed ones (lo = hi, or a friction row of mu = 0) */
	s->nv = 0;
	for (int i = 0; i < n; ++i) {
		const lk__row *r = &p->rows[i];
		const int fixed = lk__is_friction(r) ? !(r->mu > 0.0) : r->lo == r->hi;
		s->var[i] = fixed ? -1 : s->nv;
		s->con_of[i] = -1;
		if (!fixed)
			s->idx[s->nv++] = i;
	}
	const int cone = c->cfg->friction == LK_FRICTION_CONE;
	s->nb = s->ns = s->ncon = 0;
	for (int i = 0; i < n; ++i) {
		const lk__row *r = &p->rows[i];
		if (s->var[i] < 0 || !lk__is_friction(r))
			continue;
		const int pair = cone && lk__cone_pair(p, i) && s->var[i + 1] >= 0;
		if (s->con_of[r->findex] < 0) {
			s->con_of[r->findex] = s->ncon;
			s->con_row[s->ncon++] = r->findex;
		}
		ipm_block *b = &s->blk[s->nb++];
		*b = (ipm_block){.dim = pair ? 3 : 2,
		                 .off = s->ns,
		                 .var = {s->var[r->findex], s->var[i], pair ? s->var[i + 1] : 0},
		                 .g = r->mu,
		                 .con = s->con_of[r->findex]};
		s->ns += b->dim;
		i += pair;
	}
	for (int i = 0; i < n; ++i) {
		const lk__row *r = &p->rows[i];
		if (s->var[i] < 0 || lk__is_friction(r) || s->con_of[i] >= 0)
			continue; /* a normal row with friction lies in its cones */
		if (isfinite(r->lo))
			s->blk[s->nb++] =
			    (ipm_block){.dim = 1, .off = s->ns++, .var = {s->var[i]}, .g = 1.0, .h = r->lo, .con = -1};
		if (isfinite(r->hi))
			s->blk[s->nb++] =
			    (ipm_block){.dim = 1, .off = s->ns++, .var = {s->var[i]}, .g = -1.0, .h = -r->hi, .con = -1};
	}
	return LK_OK;
}

/* out = G x - h (h_scale 1) or G x (0), block by block */
static void g_apply(const ipm_state *s, const double *x, double *out, double h_scale)
{
	for (int k = 0; k < s->nb; ++k) {
		const ipm_block *b = &s->blk[k];
		if (b->dim == 1) {
			out[b->off] = b->g * x[b->var[0]] - h_scale * b->h;
			continue;
		}
		out[b->off] = b->g * x[b->var[0]];
		for (int m = 1; m < b->dim; ++m)
			out[b->off + m] = x[b->var[m]];
	}
}

/* out += G^T y */
static void gt_add(const ipm_state *s, const double *y, double *out)
{
	for (int k = 0; k < s->nb; ++k) {
		const ipm_block *b = &s->blk[k];
		out[b->var[0]] += b->g * y[b->off];
		for (int m = 1; m < b->dim; ++m)
			out[b->var[m]] += y[b->off + m];
	}
}

/* per block out = W x or W^-1 x */
static void w_all(const ipm_state *s, const double *x, double *out, int inverse)
{
	for (int k = 0; k < s->nb; ++k) {
		const ipm_block *b = &s->blk[k];
		wapply(s->wbar + b->off, s->eta[k], x + b->off, out + b->off, b->dim, inverse);
	}
}

/* The envelope of the free rows: the row form's by bodies (envelope.h), the matrix form's by reverse
 * Cuthill-McKee on its entries' graph with each contact's rows joined. */
static lk_status make_envelope(lk__ctx *c, ipm_state *s)
{
	lk__arena *a = &c->p->arena;
	const lk_problem *p = c->p;
	int rc;
	if (p->form == LK_FORM_ROWS) {
		rc = lk__env_analyse(&s->env, a, p, s->idx, s->nv, INFINITY);
	} else {
		/* the graph: each free row's free columns, then its partners in every cone it lies in (a normal row's
		 * friction rows may be in several, and A may hold an exact 0 between them) */
		int *ptr = lk__arena_alloc(a, ((size_t)s->nv + 2) * sizeof(int));
		if (!ptr)
			return lk__fail(c->p, LK_ERR_NO_MEMORY, "ipm: out of memory for %d rows", c->n);
		memset(ptr, 0, ((size_t)s->nv + 2) * sizeof(int));
		for (int v = 0; v < s->nv; ++v)
			ptr[v + 2] = p->row_ptr[s->idx[v] + 1] - p->row_ptr[s->idx[v]];
		for (int k = 0; k < s->nb; ++k)
			for (int m = 0; m < s->blk[k].dim; ++m)
				ptr[s->blk[k].var[m] + 2] += s->blk[k].dim - 1;
		for (int v = 0; v < s->nv; ++v)
			ptr[v + 2] += ptr[v + 1];
		int *adj = lk__arena_alloc(a, ((size_t)ptr[s->nv + 1] + 1) * sizeof(int));
		if (!adj)
			return lk__fail(c->p, LK_ERR_NO_MEMORY, "ipm: out of memory for %d rows", c->n);
		/* ptr[v + 1] is v's fill position, and ends as the start of v + 1 */
		for (int v = 0; v < s->nv; ++v) {
			const int i = s->idx[v];
			for (int k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k) {
				const int u = s->var[p->col[k]];
				adj[ptr[v + 1]++] = u >= 0 ? u : v; /* a fixed column or the diagonal: v itself, no edge */
			}
		}
		for (int k = 0; k < s->nb; ++k)
			for (int m = 0; m < s->blk[k].dim; ++m)
				for (int l = 0; l < s->blk[k].dim; ++l)
					if (l != m)
						adj[ptr[s->blk[k].var[m] + 1]++] = s->blk[k].var[l];
		rc = lk__env_graph(&s->env, a, s->nv, ptr, adj, INFINITY);
	}
	return rc < 0 ? lk__fail(c->p, LK_ERR_NO_MEMORY, "ipm: out of memory for the factor of %d rows", c->n) : LK_OK;
}

/* Assembles and factors A_FF + G^T W^-2 G */
static void factor(lk__ctx *c, ipm_state *s)
{
	const lk_problem *p = c->p;
	lk__env *e = &s->env;
	if (s->aval) {
		/* A_FF as assembled at the first iteration: only the cones' terms change */
		memcpy(e->val, s->aval, e->entries * sizeof(double));
	} else if (p->form == LK_FORM_ROWS) {
		lk__env_assemble(e, p, s->idx, NULL);
	} else {
		memset(e->val, 0, e->entries * sizeof(double));
		for (int v = 0; v < s->nv; ++v) {
			const int i = s->idx[v];
			for (int k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k) {
				/* the symmetric part: each off-diagonal entry half from its row, half from its transpose's */
				const int u = s->var[p->col[k]];
				double *at = u >= 0 ? lk__env_at(e, v, u) : NULL;
				if (at)
					*at += u == v ? p->val[k] : 0.5 * p->val[k];
			}
		}
	}
	if (!s->aval && (s->aval = lk__arena_alloc(&c->p->arena, (e->entries + 1) * sizeof(double))))
		memcpy(s->aval, e->val, e->entries * sizeof(double));
	for (int k = 0; k < s->nb; ++k) {
		const ipm_block *b = &s->blk[k];
		const int d = b->dim;
		/* the block's W^-2, column by column: W^-1 (W^-1 e_l) */
		for (int l = 0; l < d; ++l) {
			double el[3] = {0, 0, 0}, t1[3], t2[3];
			el[l] = 1.0;
			wapply(s->wbar + b->off, s->eta[k], el, t1, d, 1);
			wapply(s->wbar + b->off, s->eta[k], t1, t2, d, 1);
			const double gl = l == 0 ? b->g : 1.0;
			for (int m = l; m < d; ++m) {
				const double gm = m == 0 ? b->g : 1.0;
				double *at = lk__env_at(e, b->var[m], b->var[l]);
				if (at)
					*at += gm * t2[m] * gl;
			}
		}
	}
	lk__env_factor_assembled(e, IPM_DEAD_PIVOT);
	lk__count(c, 1, e->macs * LK_WORK_FACTOR_MAC);
}

/* out[i] for every row from the variables x: a free row's variable, a fixed row its bound (a friction row of mu =
 * 0 its 0), or 0 where `fixed` is 0 (a direction, which moves no fixed row) */
static void to_rows(const lk__ctx *c, const ipm_state *s, const double *x, int fixed, double *out)
{
	const lk_problem *p = c->p;
	for (int i = 0; i < c->n; ++i)
		out[i] = s->var[i] >= 0 ? x[s->var[i]] : !fixed || lk__is_friction(&p->rows[i]) ? 0.0 : p->rows[i].lo;
}

/* One step of iterative refinement of K dx = rhs, K = A_FF + G^T W^-2 G (Golub & Van Loan sec. 3.5.3): near
 * the cone's boundary K's terms span many orders of magnitude and the factor alone leaves the dual residual
 * r_x stalled well above the rounding of the program. */
static void refine(lk__ctx *c, ipm_state *s, double *dx)
{
	to_rows(c, s, dx, 0, s->full);
	lk__product(c, c->body_rows, s->full, s->aw, 0, s->bdu);
	lk__count(c, c->n, LK_WORK_PRODUCT_ROW);
	g_apply(s, dx, s->rs_g, 0.0);
	w_all(s, s->rs_g, s->u, 1);
	w_all(s, s->u, s->rs_g, 1);
	memset(s->rv_g, 0, (size_t)s->nv * sizeof(double));
	gt_add(s, s->rs_g, s->rv_g);
	for (int v = 0; v < s->nv; ++v)
		s->res[v] = -s->aw[s->idx[v]] + (s->rhs[v] - s->rv_g[v]);
	lk__env_solve(&s->env, s->res, s->res);
	for (int v = 0; v < s->nv; ++v)
		dx[v] += s->res[v];
}

/* The Newton direction for the complementarity right-hand side rc (per block lambda o (W dz + W^-1 ds) = rc):
 * dx from the factored system, then ds = G dx - r_s and dz = W^-1 (lambda \ rc) - W^-2 ds. */
static void direction(lk__ctx *c, ipm_state *s, const double *rc, double *dx, double *ds, double *dz)
{
	for (int k = 0; k < s->nb; ++k) {
		const ipm_block *b = &s->blk[k];
		jdiv(s->lam + b->off, rc + b->off, s->t + b->off, b->dim);
	}
	/* u = W^-1 t + W^-2 r_s */
	w_all(s, s->t, s->u, 1);
	w_all(s, s->rs, ds, 1);
	w_all(s, ds, dz, 1);
	for (int m = 0; m < s->ns; ++m)
		s->u[m] += dz[m];
	for (int v = 0; v < s->nv; ++v)
		s->rhs[v] = -s->rx[v];
	gt_add(s, s->u, s->rhs);
	lk__env_solve(&s->env, s->rhs, dx);
	refine(c, s, dx);
	g_apply(s, dx, ds, 0.0);
	for (int m = 0; m < s->ns; ++m)
		ds[m] -= s->rs[m];
	/* dz = W^-1 t - W^-2 ds */
	w_all(s, ds, s->u, 1);
	w_all(s, s->u, dz, 1);
	w_all(s, s->t, s->u, 1);
	for (int m = 0; m < s->ns; ++m)
		dz[m] = s->u[m] - dz[m];
}

static double step_to_boundary(const ipm_state *s, const double *ds, const double *dz)
{
	double a = INFINITY;
	for (int k = 0; k < s->nb; ++k) {
		const ipm_block *b = &s->blk[k];
		a = fmin(a, max_step(s->s + b->off, ds + b->off, b->dim));
		a = fmin(a, max_step(s->z + b->off, dz + b->off, b->dim));
	}
	return a;
}

/* lambda from the variables (the fixed rows at their bound), projected onto the rows' bounds and cones */
static void to_lambda(const lk__ctx *c, const ipm_state *s, const double *x, double *out)
{
	const lk_problem *p = c->p;
	to_rows(c, s, x, 1, out);
	for (int i = 0; i < c->n; ++i) {
		const lk__row *r = &p->rows[i];
		if (!lk__is_friction(r))
			out[i] = lk__clamp(out[i], r->lo, r->hi);
	}
	for (int k = 0; k < s->nb; ++k) {
		const ipm_block *b = &s->blk[k];
		if (b->dim == 1)
			continue;
		const int nrow = s->idx[b->var[0]];
		const double rad = b->g * out[nrow];
		if (b->dim == 2) {
			const int t = s->idx[b->var[1]];
			out[t] = lk__clamp(out[t], -rad, rad);
		} else {
			lk__disc_project(&out[s->idx[b->var[1]]], &out[s->idx[b->var[2]]], rad);
		}
	}
}

/* r_x = A x + q + sigma - G^T z over the free rows (one product), r_s = s - G x + h */
static void residuals(lk__ctx *c, ipm_state *s)
{
	to_rows(c, s, s->x, 1, s->full);
	lk__product(c, c->body_rows, s->full, s->w, 1, s->bdu);
	lk__count(c, c->n, LK_WORK_PRODUCT_ROW);
	for (int v = 0; v < s->nv; ++v)
		s->rx[v] = s->w[s->idx[v]] + s->sigma[s->idx[v]];
	double *gz = s->rhs;
	memset(gz, 0, (size_t)s->nv * sizeof(double));
	gt_add(s, s->z, gz);
	for (int v = 0; v < s->nv; ++v)
		s->rx[v] -= gz[v];
	g_apply(s, s->x, s->rs, 1.0);
	for (int m = 0; m < s->ns; ++m)
		s->rs[m] = s->s[m] - s->rs[m];
}

/* the direction is finite (a factor of a nearly singular system can overflow near the cone's boundary) */
static int finite_direction(const ipm_state *s)
{
	double v = 0.0;
	for (int k = 0; k < s->nv; ++k)
		v += s->dx[k] * 0.0;
	for (int m = 0; m < s->ns; ++m)
		v += (s->ds[m] + s->dz[m]) * 0.0;
	return v == 0.0;
}

/* One convex program for the current sigma, from x = 0 and s, z at the scales' identity. Returns the
 * interior-point iterations it took; stops early where the budget is spent. */
static int solve_program(lk__ctx *c, ipm_state *s, int max_iter, int *done, int warm)
{
	*done = 0;
	if (!warm) {
		memset(s->x, 0, (size_t)s->nv * sizeof(double));
		for (int k = 0; k < s->nb; ++k) {
			const ipm_block *b = &s->blk[k];
			for (int m = 0; m < b->dim; ++m) {
				s->s[b->off + m] = m == 0 ? s->sscale : 0.0;
				s->z[b->off + m] = m == 0 ? s->zscale : 0.0;
			}
		}
	} else {
		for (int k = 0; k < s->nb; ++k) {
			const ipm_block *b = &s->blk[k];
			s->s[b->off] += IPM_WARM_MARGIN * s->sscale;
			s->z[b->off] += IPM_WARM_MARGIN * s->zscale;
		}
	}
	int it = 0;
	for (; it < max_iter; ++it) {
		if (it > 0 && lk__work_left(c) <= 0.5 * c->n)
			return it;
		residuals(c, s);
		double gap = 0.0;
		for (int m = 0; m < s->ns; ++m)
			gap += s->s[m] * s->z[m];
		double rxn = 0.0, rsn = 0.0;
		for (int v = 0; v < s->nv; ++v)
			rxn = fmax(rxn, fabs(s->rx[v]));
		for (int m = 0; m < s->ns; ++m)
			rsn = fmax(rsn, fabs(s->rs[m]));
		/* solved to near the rounding of the program's scales */
		if (gap <= 1e-14 * s->sscale * s->zscale * s->nb && rxn <= 1e-12 * s->zscale && rsn <= 1e-12 * s->sscale) {
			*done = 1;
			break;
		}
		for (int k = 0; k < s->nb; ++k) {
			const ipm_block *b = &s->blk[k];
			if (nt_scaling(s->s + b->off, s->z + b->off, s->wbar + b->off, &s->eta[k], s->lam + b->off, b->dim)) {
				*done = 1; /* on the cone's boundary to rounding: as far as the program goes */
				return it;
			}
		}
		factor(c, s);
		/* the predictor: rc = -lambda o lambda */
		for (int k = 0; k < s->nb; ++k) {
			const ipm_block *b = &s->blk[k];
			jprod(s->lam + b->off, s->lam + b->off, s->ll + b->off, b->dim);
		}
		for (int m = 0; m < s->ns; ++m)
			s->rc[m] = -s->ll[m];
		direction(c, s, s->rc, s->dxa, s->dsa, s->dza);
		const double aa = fmin(1.0, step_to_boundary(s, s->dsa, s->dza));
		double gap_a = 0.0;
		for (int m = 0; m < s->ns; ++m)
			gap_a += (s->s[m] + aa * s->dsa[m]) * (s->z[m] + aa * s->dza[m]);
		/* Mehrotra's centring, (mu_affine / mu)^3 */
		const double sigma = gap > 0.0 ? fmin(1.0, pow(fmax(gap_a, 0.0) / gap, 3.0)) : 0.0;
		const double mu = s->nb > 0 ? gap / s->nb : 0.0; /* no block: an equality-constrained QP, one Newton step */
		/* the corrector: rc = sigma mu e - lambda o lambda - (W^-1 ds_a) o (W dz_a) */
		w_all(s, s->dsa, s->u, 1);
		w_all(s, s->dza, s->t, 0);
		for (int k = 0; k < s->nb; ++k) {
			const ipm_block *b = &s->blk[k];
			double cor[3];
			jprod(s->u + b->off, s->t + b->off, cor, b->dim);
			for (int m = 0; m < b->dim; ++m)
				s->rc[b->off + m] = (m == 0 ? sigma * mu : 0.0) - s->ll[b->off + m] - cor[m];
		}
		direction(c, s, s->rc, s->dx, s->ds, s->dz);
		const double a = fmin(1.0, IPM_STEP_FRACTION * step_to_boundary(s, s->ds, s->dz));
		if (!(a > 1e-12) || !finite_direction(s)) {
			*done = 1;
			break;
		}
		for (int v = 0; v < s->nv; ++v)
			s->x[v] += a * s->dx[v];
		for (int m = 0; m < s->ns; ++m) {
			s->s[m] += a * s->ds[m];
			s->z[m] += a * s->dz[m];
		}
	}
	/* IPM_INNER_MAX iterations without meeting the rule: as far as this program goes */
	if (it == IPM_INNER_MAX)
		*done = 1;
	return it;
}

/* The matrix form's A is the Hessian of the program: it must be symmetric (the row form's J M^-1 J^T + S is).
 * The Newton steps use its symmetric part and the residuals A itself, so an A symmetric to its data's precision
 * is solved (FCLIB's problems written with six digits are symmetric to those digits only);
 * LK_ERR_UNSUPPORTED for the first entry that differs from its transpose's by more than IPM_ASYMMETRY of the
 * larger of the two and sqrt(A_ii A_jj). */
static lk_status check_symmetric(lk__ctx *c)
{
	const lk_problem *p = c->p;
	if (p->form != LK_FORM_MATRIX)
		return LK_OK;
	for (int i = 0; i < c->n; ++i)
		for (int k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k) {
			const int j = p->col[k];
			if (j <= i)
				continue;
			double aji = 0.0;
			for (int l = p->row_ptr[j]; l < p->row_ptr[j + 1]; ++l)
				if (p->col[l] == i)
					aji = p->val[l];
			const double aij = p->val[k];
			const double scale = fmax(fmax(fabs(aij), fabs(aji)), sqrt(fabs(lk__a_entry(p, i, i) * lk__a_entry(p, j, j))));
			if (!(fabs(aij - aji) <= IPM_ASYMMETRY * scale))
				return lk__fail(c->p, LK_ERR_UNSUPPORTED,
				                "ipm: A is not symmetric (A[%d][%d] = %g, A[%d][%d] = %g): the interior point "
				                "solves the program whose Hessian A is",
				                i, j, aij, j, i, aji);
		}
	return LK_OK;
}

static lk_status prepare(lk__ctx *c, ipm_state *s)
{
	memset(s, 0, sizeof *s);
	lk_status st = check_symmetric(c);
	if (st == LK_OK)
		st = build_blocks(c, s);
	if (st != LK_OK)
		return st;
	lk__arena *a = &c->p->arena;
	const size_t nv = (size_t)s->nv + 1, ns = (size_t)s->ns + 1, n = (size_t)c->n + 1;
	double **vecs_v[] = {&s->x, &s->dx, &s->dxa, &s->rx, &s->rhs, &s->rv_g};
	double **vecs_s[] = {&s->s,   &s->z, &s->ds, &s->dz,   &s->dsa, &s->dza, &s->rs,
	                     &s->lam, &s->t, &s->u,  &s->wbar, &s->ll,  &s->rc, &s->rs_g};
	for (size_t k = 0; k < sizeof vecs_v / sizeof vecs_v[0]; ++k)
		if (!(*vecs_v[k] = lk__arena_alloc(a, nv * sizeof(double))))
			return lk__fail(c->p, LK_ERR_NO_MEMORY, "ipm: out of memory for %d rows", c->n);
	for (size_t k = 0; k < sizeof vecs_s / sizeof vecs_s[0]; ++k)
		if (!(*vecs_s[k] = lk__arena_alloc(a, (ns > nv ? ns : nv) * sizeof(double))))
			return lk__fail(c->p, LK_ERR_NO_MEMORY, "ipm: out of memory for %d rows", c->n);
	s->eta = lk__arena_alloc(a, ((size_t)s->nb + 1) * sizeof(double));
	s->sigma = lk__arena_alloc(a, n * sizeof(double));
	s->full = lk__arena_alloc(a, n * sizeof(double));
	s->w = lk__arena_alloc(a, n * sizeof(double));
	s->aw = lk__arena_alloc(a, n * sizeof(double));
	s->res = lk__arena_alloc(a, nv * sizeof(double));
	s->bdu = lk__arena_alloc(a, ((size_t)c->p->nbodies + 1) * LK_DU_STRIDE * sizeof(double));
	if (!s->eta || !s->sigma || !s->full || !s->w || !s->aw || !s->res || !s->bdu)
		return lk__fail(c->p, LK_ERR_NO_MEMORY, "ipm: out of memory for %d rows", c->n);
	return make_envelope(c, s);
}

/* g_c = sum of mu |w_t| over the cones of each normal row with friction at w (Acary et al. 2011 sec. 4) */
static void desaxce(const ipm_state *s, const double *w, double *g)
{
	memset(g, 0, (size_t)s->ncon * sizeof(double));
	for (int k = 0; k < s->nb; ++k) {
		const ipm_block *b = &s->blk[k];
		if (b->dim == 1)
			continue;
		double t2 = 0.0;
		for (int m = 1; m < b->dim; ++m)
			t2 += w[s->idx[b->var[m]]] * w[s->idx[b->var[m]]];
		g[b->con] += b->g * sqrt(t2);
	}
}

/* the program's q + sigma from the normal rows' terms */
static void set_sigma(ipm_state *s, const double *x)
{
	for (int k = 0; k < s->ncon; ++k)
		s->sigma[s->con_row[k]] = x[k];
}

/* w = A lambda + q at the solve's lambda (into s->w, a product counted) and the De Saxce terms g of that w */
static void desaxce_at_lambda(lk__ctx *c, ipm_state *s, double *g)
{
	lk__product(c, c->body_rows, c->lambda, s->w, 1, s->bdu);
	lk__count(c, c->n, LK_WORK_PRODUCT_ROW);
	desaxce(s, s->w, g);
}

/* Anderson's acceleration of the fixed point x = g(x) (Walker & Ni, "Anderson acceleration for fixed-point
 * iterations", SIAM J. Numer. Anal. 49(4), 2011, Algorithm AA with the differences of their sec. 3): with
 * f = g(x) - x and the last m differences dF, dG of f and g, x' = g(x_k) - dG gamma, gamma minimising
 * |f_k - dF gamma|. The plain iteration sigma' = g(sigma) contracts slowly where many contacts slide (each
 * program moves their velocities, which move the terms); the mixing removes the slow modes. */
typedef struct anderson {
	int nc, m, count, head, primed;
	double *dF, *dG, *fprev, *gprev; /* m columns of nc */
} anderson;

static void anderson_step(anderson *aa, const double *x, const double *g, double *out)
{
	const int nc = aa->nc;
	if (aa->primed) {
		double *df = aa->dF + (size_t)aa->head * nc, *dg = aa->dG + (size_t)aa->head * nc;
		for (int i = 0; i < nc; ++i) {
			df[i] = (g[i] - x[i]) - aa->fprev[i];
			dg[i] = g[i] - aa->gprev[i];
		}
		aa->head = (aa->head + 1) % aa->m;
		if (aa->count < aa->m)
			aa->count++;
	}
	for (int i = 0; i < nc; ++i) {
		aa->fprev[i] = g[i] - x[i];
		aa->gprev[i] = g[i];
		out[i] = g[i];
	}
	aa->primed = 1;
	const int m = aa->count;
	if (m == 0)
		return;
	/* the normal equations (dF^T dF + eps I) gamma = dF^T f, m <= IPM_ANDERSON, by Gaussian elimination */
	double M[IPM_ANDERSON][IPM_ANDERSON + 1];
	double diag = 0.0;
	for (int a = 0; a < m; ++a) {
		const double *fa = aa->dF + (size_t)a * nc;
		for (int b = 0; b <= a; ++b) {
			const double *fb = aa->dF + (size_t)b * nc;
			double v = 0.0;
			for (int i = 0; i < nc; ++i)
				v += fa[i] * fb[i];
			M[a][b] = M[b][a] = v;
		}
		double r = 0.0;
		for (int i = 0; i < nc; ++i)
			r += fa[i] * aa->fprev[i];
		M[a][m] = r;
		diag = fmax(diag, M[a][a]);
	}
	if (!(diag > 0.0))
		return;
	for (int a = 0; a < m; ++a)
		M[a][a] += 1e-12 * diag;
	for (int col = 0; col < m; ++col) {
		int piv = col;
		for (int r = col + 1; r < m; ++r)
			if (fabs(M[r][col]) > fabs(M[piv][col]))
				piv = r;
		if (!(fabs(M[piv][col]) > 0.0))
			return;
		for (int k = 0; k <= m; ++k) {
			const double t = M[col][k];
			M[col][k] = M[piv][k];
			M[piv][k] = t;
		}
		for (int r = col + 1; r < m; ++r) {
			const double f = M[r][col] / M[col][col];
			for (int k = col; k <= m; ++k)
				M[r][k] -= f * M[col][k];
		}
	}
	double gamma[IPM_ANDERSON];
	for (int a = m - 1; a >= 0; --a) {
		double v = M[a][m];
		for (int k = a + 1; k < m; ++k)
			v -= M[a][k] * gamma[k];
		gamma[a] = v / M[a][a];
	}
	for (int a = 0; a < m; ++a) {
		const double *dg = aa->dG + (size_t)a * nc;
		for (int i = 0; i < nc; ++i)
			out[i] -= gamma[a] * dg[i];
	}
	for (int i = 0; i < nc; ++i)
		if (!(out[i] >= 0.0))
			out[i] = 0.0; /* mu |w_t| >= 0: a mix below 0 (or not finite) is cut to 0 */
}

/* an answer Newton may take over from again is this many times better than the last one it did */
#define IPM_POLISH_AGAIN 100.0
/* Newton's attempts spend at most this many times the interior point's work, and each stops where this many
 * of its iterations have not halved the merit */
#define IPM_POLISH_SHARE 3.0
#define IPM_POLISH_WINDOW 5

/* Newton from the current answer (module comment), its iterations added to *total and its work to *newton_work
 * (that of the attempts before). LK_OK with c->stop set where the solve ends, LK_STOP_NONE where the interior point
 * goes on. */
static lk_status polish(lk__ctx *c, int *total, double *newton_work)
{
	const lk_solver_config *cfg = c->cfg;
	lk_solver_config local = *cfg;
	local.method = LK_METHOD_NEWTON_MINMAP;
	local.newton.pgs_warm = 0; /* the interior point's answer is a better start than sweeps would make it */
	local.max_iterations = cfg->max_iterations - *total;
	/* Newton's attempts together spend at most IPM_POLISH_SHARE times what the interior point has, within the
	 * solve's own budget, and each ends where IPM_POLISH_WINDOW of its iterations have not halved the merit:
	 * from where it converges it does so, and where it stalls it stops early */
	const double before = c->work, own = lk__work_budget_left(c);
	const double allow = IPM_POLISH_SHARE * (c->work - *newton_work) - *newton_work;
	if (!(allow >= (double)c->n))
		return LK_OK; /* not a sweep's worth left to it */
	local.budget = (before + (own < allow ? own : allow)) / c->n;
	c->cfg = &local;
	c->stop = LK_STOP_NONE;
	c->stall_window = IPM_POLISH_WINDOW;
	c->stall_count = 0;
	c->stall_ref = c->merit;
	const lk_status st = lk__solve_newton(c);
	c->stall_window = 0;
	c->cfg = cfg;
	*newton_work += c->work - before;
	*total += c->iterations;
	c->iterations = *total;
	/* the solve's own ends end it; Newton's (its allowance, a stall, a step it could not find, its guards,
	 * which hand back the best iterate) leave the interior point to go on */
	const int ended = c->stop == LK_STOP_ABSOLUTE || c->stop == LK_STOP_RELATIVE ||
	                  (c->stop == LK_STOP_BUDGET && !(lk__work_left(c) > 0.0)) ||
	                  (c->stop == LK_STOP_ITERATIONS && *total >= cfg->max_iterations);
	if (!ended)
		c->stop = LK_STOP_NONE;
	return st;
}

/* The best answer the monitor has seen where the last is worse (lk__monitor_metrics offers each) */
static lk_status finish(lk__ctx *c)
{
	if (c->have_best && c->evaluated && !(c->merit <= c->best_merit))
		lk__restore_best(c);
	return LK_OK;
}

lk_status lk__solve_ipm(lk__ctx *c)
{
	ipm_state s;
	lk_status st = prepare(c, &s);
	if (st != LK_OK)
		return st;
	const int n = c->n;
	const int nc = s.ncon;
	lk__arena *ar = &c->p->arena;
	const size_t ncs = (size_t)nc + 1;
	anderson aa = {.nc = nc, .m = IPM_ANDERSON};
	double *xs = lk__arena_alloc(ar, ncs * sizeof(double)), *gs = lk__arena_alloc(ar, ncs * sizeof(double));
	aa.dF = lk__arena_alloc(ar, IPM_ANDERSON * ncs * sizeof(double));
	aa.dG = lk__arena_alloc(ar, IPM_ANDERSON * ncs * sizeof(double));
	aa.fprev = lk__arena_alloc(ar, ncs * sizeof(double));
	aa.gprev = lk__arena_alloc(ar, ncs * sizeof(double));
	if (!xs || !gs || !aa.dF || !aa.dG || !aa.fprev || !aa.gprev)
		return lk__fail(c->p, LK_ERR_NO_MEMORY, "ipm: out of memory for %d rows", n);
	memset(s.sigma, 0, (size_t)n * sizeof(double));
	/* the De Saxce terms of the start, and the program's scales: velocities by the largest |q + A lambda|,
	 * impulses by that over the largest diagonal */
	desaxce_at_lambda(c, &s, xs);
	set_sigma(&s, xs);
	double wmax = 0.0, dmax = 0.0;
	for (int i = 0; i < n; ++i) {
		wmax = fmax(wmax, fabs(s.w[i]));
		dmax = fmax(dmax, lk__a_entry(c->p, i, i));
	}
	s.zscale = wmax > DBL_MIN ? wmax : 1.0;
	s.sscale = dmax > DBL_MIN ? s.zscale / dmax : s.zscale;
	double *next = c->w;
	int total = 0;
	double last_merit = INFINITY, polished_from = INFINITY, newton_work = 0.0;
	for (int outer = 1;; ++outer) {
		const int left = c->cfg->max_iterations > 0 ? c->cfg->max_iterations - total : IPM_INNER_MAX;
		int done;
		total += solve_program(c, &s, left < IPM_INNER_MAX ? (left > 1 ? left : 1) : IPM_INNER_MAX, &done, outer > 1);
		if (!done && outer == 1)
			/* an infeasible-start interior point is an answer only at its end: a first program cut short has
			 * none to give, and says so (an engine's adapter then steps with the engine's own solver) */
			return lk__fail(c->p, LK_ERR_LIMIT,
			                "ipm: the %s ran out after %d interior-point iterations (%.0f sweep-equivalents), "
			                "before its first convex program was solved: give ipm a larger budget= or iters=",
			                total >= c->cfg->max_iterations ? "iteration limit" : "budget", total,
			                c->work / (c->n > 0 ? c->n : 1));
		if (!done) {
			/* a later program cut short is further from its solution than the last one's: the last one stays */
			c->iterations = total;
			c->stop = total >= c->cfg->max_iterations ? LK_STOP_ITERATIONS : LK_STOP_BUDGET;
			return finish(c);
		}
		to_lambda(c, &s, s.x, next);
		double max_change = 0.0;
		for (int i = 0; i < n; ++i)
			max_change = fmax(max_change, fabs(next[i] - c->lambda[i]));
		lk__set_lambda(c, next);
		desaxce_at_lambda(c, &s, gs);
		double moved = 0.0;
		for (int k = 0; k < nc; ++k)
			moved = fmax(moved, fabs(gs[k] - xs[k]));
		/* the merit of every program's answer: the best is what the solve returns (the fixed point need not
		 * converge: a large mu makes mu |w_t| move more than the program's answer does) */
		lk_metrics m;
		lk__current_metrics(c, &m);
		lk__count(c, n, LK_WORK_PRODUCT_ROW);
		c->iterations = total;
		c->stop = lk__monitor_metrics(c, total < c->cfg->max_iterations ? total : c->cfg->max_iterations, max_change,
		                              &m);
		if (c->stop != LK_STOP_NONE)
			return finish(c);
		const double merit = lk__merit_value(&m, c->cfg->merit);
		if (merit <= c->cfg->ipm.polish * c->cfg->tol_abs && merit * IPM_POLISH_AGAIN <= polished_from &&
		    total < c->cfg->max_iterations) {
			polished_from = merit;
			st = polish(c, &total, &newton_work);
			if (st != LK_OK || c->stop != LK_STOP_NONE)
				return st != LK_OK ? st : finish(c);
			/* on from the best answer so far: its De Saxce terms, the mixing restarted */
			finish(c);
			desaxce_at_lambda(c, &s, xs);
			set_sigma(&s, xs);
			aa.count = 0;
			last_merit = INFINITY;
			continue;
		}
		if (!(moved > 0.0)) {
			/* a fixed point of the De Saxce terms: a further program returns the same lambda */
			c->stop = LK_STOP_STAGNATION;
			return finish(c);
		}
		/* a program whose answer is worse than the last one's restarts the mixing from the plain step */
		if (!(merit <= last_merit))
			aa.count = 0;
		last_merit = merit;
		anderson_step(&aa, xs, gs, xs);
		set_sigma(&s, xs);
	}
}

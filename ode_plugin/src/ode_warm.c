/* Warm start across steps: the previous step's impulses found again for this step's joints.
 *
 * Contacts are new joints every step (and a joint group hands out the same addresses again), so they are
 * matched by body pair, contact point and normal; other joints by handle, type, bodies and row count. A contact
 * whose normal row asks for more separating velocity than gravity adds in a step (|g| h) is not resting but
 * recovering from a penetration or bouncing; where it is made with an articulated body (one a joint ties to
 * another moving body), every contact and every joint of that body starts from zero, as in ODE's own steppers:
 * warm-started, the contacts of a limb wedged against a joint of its ragdoll, or into another ragdoll, and the
 * friction they allow hold the bodies where the joints pull against them, and they never slide apart (ODE's
 * piled ragdolls at 20 iterations stayed 6 cm deep; a limb wedged between two limbs of another ragdoll, held by
 * the warm start of its other contacts with them, 4 cm; docs/ode.md, "Warm starting"), and so do its joints'
 * impulses carried over (a pile of 6 ragdolls at 5 iterations rested with a limb pressed in by them;
 * docs/benchmarks.md, "Ragdolls at 5 iterations"). A heap of free bodies keeps its deep contacts' impulses: its
 * bottom needs its load from the first sweep. Impulses scale with the step and the warm start's share:
 * lambda_prev * h / h_prev * warm_factor.
 *
 * A face (three contacts or more between two bodies: a box on a box) starts from the load it carried, whatever
 * its contact points now. ODE's box-box collider gives a face four to eight points, a different set from one
 * step to the next as the boxes turn by a hair, so the impulses found again per contact lose the load of the
 * points that went and give none to those that came: on a resting stack every step began a few percent of a
 * box's weight off, which only the two-level correction's every step carried down again. The previous step's
 * contacts of the pair give the wrench their normal impulses transmitted to the first body (force and torque
 * about its centre, at the points they were made); the face's normal impulses start from the least-norm ones
 * that transmit it now (clipped at 0) and its friction rows from their own matches. Reads the rows
 * lk__ode_extract_rows left in the context and the bodies' articulated flags made from them
 * (lk__ode_mark_articulated), nothing else of the plugin. */
#define _GNU_SOURCE 1 /* qsort_r */
#include "ode_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static unsigned warm_hash(const void *a, const void *b, int cap)
{
	uint64_t x = (uint64_t)(uintptr_t)a * 0x9E3779B97F4A7C15ull;
	x ^= ((uint64_t)(uintptr_t)b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
	x ^= x >> 31;
	return (unsigned)(x & (uint64_t)(cap - 1));
}

/* The contacts of at most FACE_MAX points that make a face and whose load the warm start carries over */
#define FACE_MIN 3
#define FACE_MAX 16

/* Solves N y = b in place (b becomes y) by Cholesky's factor, N symmetric of order r <= 6 given in its lower
 * triangle and overwritten by the factor; 0 where a pivot is not above least[i] (NULL: 0). */
static int cholesky_solve(double (*N)[6], int r, const double *least, double *b)
{
	for (int i = 0; i < r; ++i) {
		for (int k = 0; k < i; ++k)
			N[i][i] -= N[i][k] * N[i][k];
		if (!(N[i][i] > (least ? least[i] : 0.0)))
			return 0;
		N[i][i] = sqrt(N[i][i]);
		for (int l = i + 1; l < r; ++l) {
			for (int k = 0; k < i; ++k)
				N[l][i] -= N[l][k] * N[i][k];
			N[l][i] /= N[i][i];
		}
	}
	for (int i = 0; i < r; ++i) {
		for (int k = 0; k < i; ++k)
			b[i] -= N[i][k] * b[k];
		b[i] /= N[i][i];
	}
	for (int i = r - 1; i >= 0; --i) {
		for (int k = i + 1; k < r; ++k)
			b[i] -= N[k][i] * b[k];
		b[i] /= N[i][i];
	}
	return 1;
}

/* The least-norm x (m) with W^T x = f, W the m x 6 matrix of rows J[k] (m <= FACE_MAX), in the least-squares
 * sense where f is not in W's range: W = Q R by Gram-Schmidt over W's columns (each orthogonalized twice, one
 * whose remainder is below 1e-9 of its norm left out: four coplanar normals span three wrench components),
 * x = Q y with R R^T y = R f (at most six unknowns, by Cholesky). Returns 0 where W is zero. */
static int least_norm(const double (*J)[6], int m, const double f[6], double *x)
{
	double Q[6][FACE_MAX], R[6][6] = {{0}};
	int r = 0;
	for (int j = 0; j < 6; ++j) {
		double *v = Q[r], n0 = 0.0;
		for (int a = 0; a < m; ++a) {
			v[a] = J[a][j];
			n0 += v[a] * v[a];
		}
		if (n0 == 0.0)
			continue;
		double coef[6] = {0};
		for (int pass = 0; pass < 2; ++pass)
			for (int q = 0; q < r; ++q) {
				double d = 0.0;
				for (int a = 0; a < m; ++a)
					d += Q[q][a] * v[a];
				for (int a = 0; a < m; ++a)
					v[a] -= d * Q[q][a];
				coef[q] += d;
			}
		double nn = 0.0;
		for (int a = 0; a < m; ++a)
			nn += v[a] * v[a];
		for (int q = 0; q < r; ++q)
			R[q][j] = coef[q];
		if (!(nn > 1e-18 * n0))
			continue;
		const double len = sqrt(nn);
		for (int a = 0; a < m; ++a)
			v[a] /= len;
		R[r][j] = len;
		++r;
	}
	if (r == 0)
		return 0;
	/* the normal equations of R^T y = f: (R R^T) y = R f */
	double N[6][6], b[6];
	for (int i = 0; i < r; ++i) {
		b[i] = 0.0;
		for (int j = 0; j < 6; ++j)
			b[i] += R[i][j] * f[j];
		for (int k = 0; k <= i; ++k) {
			double d = 0.0;
			for (int j = 0; j < 6; ++j)
				d += R[i][j] * R[k][j];
			N[i][k] = d;
		}
	}
	if (!cholesky_solve(N, r, NULL, b))
		return 0;
	for (int a = 0; a < m; ++a) {
		x[a] = 0.0;
		for (int q = 0; q < r; ++q)
			x[a] += Q[q][a] * b[q];
	}
	return 1;
}

/* least_norm where every row's force part is the same unit normal n (a face as the colliders make it: one normal for
 * all its points): the torque parts t_k = r_k x n then lie in the plane across n, and W^T x = f in the least-squares
 * sense splits into three equations, sum x_k = f_F . n and sum x_k (t_k . e_i) = f_T . e_i for e_1, e_2 spanning the
 * plane (the rest of f, the force across n and the torque about it, no x reaches), whose least-norm solution is
 * x = B^T (B B^T)^-1 g with B's rows (1, t_k . e_1, t_k . e_2): a 3 x 3 system instead of Gram-Schmidt over six
 * columns. Returns 0 (x untouched) where the normals differ or the points lie on a line (B B^T singular): the
 * caller then takes least_norm. */
static int least_norm_plane(const double (*J)[6], int m, const double f[6], double *x)
{
	const double *n = J[0];
	if (fabs(n[0] * n[0] + n[1] * n[1] + n[2] * n[2] - 1.0) > 1e-12)
		return 0;
	for (int a = 1; a < m; ++a)
		if (J[a][0] != n[0] || J[a][1] != n[1] || J[a][2] != n[2])
			return 0;
	dVector3 e1, e2;
	dPlaneSpace(n, e1, e2);
	/* B B^T in its lower triangle, and the right-hand side */
	double b[FACE_MAX][2], G[6][6] = {{(double)m}}, y[3];
	for (int a = 0; a < m; ++a) {
		const double *t = J[a] + 3;
		b[a][0] = t[0] * e1[0] + t[1] * e1[1] + t[2] * e1[2];
		b[a][1] = t[0] * e2[0] + t[1] * e2[1] + t[2] * e2[2];
		G[1][0] += b[a][0];
		G[2][0] += b[a][1];
		G[1][1] += b[a][0] * b[a][0];
		G[2][1] += b[a][0] * b[a][1];
		G[2][2] += b[a][1] * b[a][1];
	}
	y[0] = f[0] * n[0] + f[1] * n[1] + f[2] * n[2];
	y[1] = f[3] * e1[0] + f[4] * e1[1] + f[5] * e1[2];
	y[2] = f[3] * e2[0] + f[4] * e2[1] + f[5] * e2[2];
	/* a pivot under 1e-9 of the points' spread about the centre (the torque block's trace; the normal's m) is a
	 * line */
	const double least[3] = {1e-9 * m, 1e-9 * (G[1][1] + G[2][2]), 1e-9 * (G[1][1] + G[2][2])};
	if (!cholesky_solve(G, 3, least, y))
		return 0;
	for (int a = 0; a < m; ++a)
		x[a] = y[0] + y[1] * b[a][0] + y[2] * b[a][1];
	return 1;
}

int lk__ode_face_least_norm(const double (*J)[6], int m, const double f[6], double *x, int general)
{
	if (m < 1 || m > FACE_MAX)
		return 0;
	return (!general && least_norm_plane(J, m, f, x)) || least_norm(J, m, f, x);
}

static int by_pair(const void *u, const void *v, void *arg)
{
	const lk_ode *ctx = arg;
	const lk__ode_joint *a = &ctx->joints[*(const int *)u], *b = &ctx->joints[*(const int *)v];
	for (int k = 0; k < 2; ++k)
		if (a->body[k] != b->body[k])
			return a->body[k] < b->body[k] ? -1 : 1;
	return *(const int *)u < *(const int *)v ? -1 : *(const int *)u > *(const int *)v;
}

static int same_pair(const lk__ode_joint *a, const lk__ode_joint *b)
{
	return a->body[0] == b->body[0] && a->body[1] == b->body[1];
}

/* Whether the contact joints order[0..n) hold each body pair's contacts in one run of consecutive entries (a
 * pair collides once a step unless a body has several geoms): the runs' pairs in an open-addressing hash of
 * hcap (a power of two above the runs) slots, one pass. */
static int pairs_in_runs(const lk_ode *ctx, const int *order, int n, int *slot, int hcap)
{
	for (int k = 0; k < hcap; ++k)
		slot[k] = -1;
	for (int s = 0, e; s < n; s = e) {
		const lk__ode_joint *j = &ctx->joints[order[s]];
		for (e = s + 1; e < n && same_pair(&ctx->joints[order[e]], j); ++e)
			;
		for (unsigned h = warm_hash(j->bid[0], j->bid[1], hcap);;
		     h = (h + 1) & (unsigned)(hcap - 1)) {
			if (slot[h] < 0) {
				slot[h] = order[s];
				break;
			}
			if (same_pair(&ctx->joints[slot[h]], j))
				return 0;
		}
	}
	return 1;
}

static inline int same_contact_pair(const lk__ode_warm *w, dBodyID b0, dBodyID b1)
{
	return !w->key && w->body[0] == b0 && w->body[1] == b1;
}

/* The previous step's records of contact pair (b0, b1) in the order of their hash chain (newest first): the
 * first (-1: the pair has none), then each one's next. The store writes the contacts' records first, in joint
 * order, and where each pair's contacts were consecutive joints (warm_runs_whole) each pair's records are one
 * run: the chain's order is then the run's from its end down, and the run is read where it lies rather than
 * through the hash, the run after the one found last tried first, since the joints come in nearly the
 * previous step's order (on a large pile the hash's slot and the run's end are each a miss to memory, the next
 * run in line is not). The same records in the same order either way: the same impulses to the bit. */
static int pair_first(const lk_ode *ctx, dBodyID b0, dBodyID b1, int guess)
{
	if (ctx->warm_runs_whole && guess < ctx->nwarm && same_contact_pair(&ctx->warm[guess], b0, b1)) {
		while (guess + 1 < ctx->nwarm && same_contact_pair(&ctx->warm[guess + 1], b0, b1))
			++guess;
		return guess;
	}
	for (int k = ctx->warm_heads[warm_hash(b0, b1, ctx->warm_hcap)]; k >= 0; k = ctx->warm[k].next)
		if (same_contact_pair(&ctx->warm[k], b0, b1))
			return k;
	return -1;
}

static inline int pair_next(const lk_ode *ctx, int k, dBodyID b0, dBodyID b1)
{
	if (ctx->warm_runs_whole)
		return k > 0 && same_contact_pair(&ctx->warm[k - 1], b0, b1) ? k - 1 : -1;
	for (k = ctx->warm[k].next; k >= 0; k = ctx->warm[k].next)
		if (same_contact_pair(&ctx->warm[k], b0, b1))
			return k;
	return -1;
}

/* The faces' normal impulses from the load their pair's contacts carried in the previous step (module
 * comment), scaled as the rest of the warm start. Leaves lambda as it is where something is missing. */
static void warm_faces(lk_ode *ctx, double scale, double *lambda)
{
	int n = 0;
	for (int i = 0; i < ctx->njoints; ++i)
		n += ctx->joints[i].type == dJointTypeContact && ctx->joints[i].m > 0;
	if (n < FACE_MIN)
		return;
	/* the order, then the hash of pairs_in_runs: a power of two at least twice the contacts */
	int hcap = 1;
	while (hcap < 2 * n)
		hcap *= 2;
	if (n + hcap > ctx->cap_face_order) {
		int *o = realloc(ctx->face_order, (size_t)(n + hcap) * sizeof *o);
		if (!o)
			return;
		ctx->face_order = o;
		ctx->cap_face_order = n + hcap;
	}
	int *order = ctx->face_order;
	n = 0;
	for (int i = 0; i < ctx->njoints; ++i)
		if (ctx->joints[i].type == dJointTypeContact && ctx->joints[i].m > 0)
			order[n++] = i;
	/* contacts of one collision come one after the other; sort only where a pair's come in several runs (the
	 * sort of a pile's 8,000 contacts, every step, was an eighth of ODE's whole step under auto) */
	ctx->runs_whole_now = pairs_in_runs(ctx, order, n, order + n, hcap);
	if (!ctx->runs_whole_now)
		qsort_r(order, (size_t)n, sizeof *order, by_pair, ctx);
	for (int s = 0, e; s < n; s = e) {
		const lk__ode_joint *j0 = &ctx->joints[order[s]];
		for (e = s + 1; e < n && same_pair(&ctx->joints[order[e]], j0); ++e)
			;
		const int m = e - s;
		if (m < FACE_MIN || m > FACE_MAX || ctx->bodies[j0->body[0]].articulated ||
		    (j0->body[1] >= 0 && ctx->bodies[j0->body[1]].articulated))
			continue;
		/* the wrench the pair's previous contacts transmitted to the first body, about its centre now */
		dBodyID b0 = j0->bid[0], b1 = j0->bid[1];
		const dReal *x = dBodyGetPosition(b0);
		double f[6] = {0}, nb[3] = {0}, carried = 0.0;
		int before = 0;
		for (int k = pair_first(ctx, b0, b1, ctx->nwarm); k >= 0; k = pair_next(ctx, k, b0, b1)) {
			const lk__ode_warm *w = &ctx->warm[k];
			const double ln = w->lambda[0], r[3] = {w->point[0] - x[0], w->point[1] - x[1], w->point[2] - x[2]};
			for (int c = 0; c < 3; ++c) {
				f[c] += ln * w->normal[c];
				nb[c] += w->normal[c];
			}
			carried += fabs(ln);
			f[3] += ln * (r[1] * w->normal[2] - r[2] * w->normal[1]);
			f[4] += ln * (r[2] * w->normal[0] - r[0] * w->normal[2]);
			f[5] += ln * (r[0] * w->normal[1] - r[1] * w->normal[0]);
			++before;
		}
		if (before < FACE_MIN)
			continue;
		double J[FACE_MAX][6], ln[FACE_MAX], na[3] = {0};
		for (int a = 0; a < m; ++a) {
			memcpy(J[a], ctx->defs[ctx->joints[order[s + a]].row0].J[0], sizeof J[a]);
			for (int c = 0; c < 3; ++c)
				na[c] += J[a][c];
		}
		/* the same face: its normals turned by no more than a contact's warm start allows */
		if (dCalcVectorDot3(na, nb) < ctx->def.warm_normal_cos * sqrt(dCalcVectorDot3(na, na) * dCalcVectorDot3(nb, nb)))
			continue;
		if (!lk__ode_face_least_norm((const double(*)[6])J, m, f, ln, 0))
			continue;
		/* a load the face can carry now: the wrench met (a torque the new points could only give by pulling, or
		 * with impulses far larger than the face carried, is a face that changed, not one that moved) */
		double sum = 0.0, miss = 0.0, size = 0.0, g[6] = {0};
		for (int a = 0; a < m; ++a) {
			ln[a] = ln[a] > 0.0 ? ln[a] : 0.0;
			sum += ln[a];
			for (int c = 0; c < 6; ++c)
				g[c] += J[a][c] * ln[a];
		}
		for (int c = 0; c < 6; ++c) {
			miss += (g[c] - f[c]) * (g[c] - f[c]);
			size += f[c] * f[c];
		}
		if (!(sum <= 2.0 * carried) || !(miss <= 1e-2 * size))
			continue;
		for (int a = 0; a < m; ++a)
			lambda[ctx->joints[order[s + a]].row0] = ln[a] * scale;
	}
}

/* The largest target velocity of a resting contact's normal row: what gravity adds in a step. */
static double resting_target(const lk_ode *ctx, double h)
{
	dVector3 g;
	dWorldGetGravity(ctx->world, g);
	return sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) * h;
}

int lk__ode_contact_recovering(const lk_ode *ctx, double h)
{
	const double resting = resting_target(ctx, h);
	for (int i = 0; i < ctx->njoints; ++i) {
		const lk__ode_joint *j = &ctx->joints[i];
		if (j->type == dJointTypeContact && j->m > 0 && ctx->defs[j->row0].c > resting)
			return 1;
	}
	return 0;
}

void lk__ode_mark_articulated(lk_ode *ctx)
{
	for (int i = 0; i < ctx->nbodies; ++i)
		ctx->bodies[i].articulated = 0;
	for (int i = 0; i < ctx->njoints; ++i) {
		const lk__ode_joint *j = &ctx->joints[i];
		if (j->type != dJointTypeContact && j->m > 0 && j->body[0] >= 0 && j->body[1] >= 0)
			ctx->bodies[j->body[0]].articulated = ctx->bodies[j->body[1]].articulated = 1;
	}
}

/* lambda (extraction order) from the records of the previous step; zero where nothing matches. Each record
 * serves one joint at most. */
void lk__ode_warm_lookup(lk_ode *ctx, double h, double *lambda)
{
	memset(lambda, 0, (size_t)ctx->nrows * sizeof(double));
	ctx->runs_whole_now = 0; /* until warm_faces finds this step's pairs */
	if (ctx->nwarm == 0 || !ctx->warm_heads)
		return;
	const double scale = (ctx->warm_dt > 0 ? h / ctx->warm_dt : 1.0) * ctx->def.warm_factor;
	double tol2 = ctx->def.warm_distance * ctx->def.warm_distance;
	for (int i = 0; i < ctx->nwarm; ++i)
		ctx->warm[i].used = 0;
	for (int i = 0; i < ctx->nbodies; ++i)
		ctx->bodies[i].recovering = 0;
	const double resting = resting_target(ctx, h);
	/* the articulated bodies with a contact that is not resting: every contact of these starts from zero
	 * (module comment) */
	for (int i = 0; i < ctx->njoints; ++i) {
		const lk__ode_joint *j = &ctx->joints[i];
		if (j->type == dJointTypeContact && j->m > 0 && ctx->defs[j->row0].c > resting)
			for (int k = 0; k < 2; ++k)
				if (j->body[k] >= 0 && ctx->bodies[j->body[k]].articulated)
					ctx->bodies[j->body[k]].recovering = 1;
	}
	/* the records of the last contact's pair (pair_first): a collision's contacts come one after the other, and
	 * the pair's records are found once a pair rather than once a contact */
	dBodyID chain_b0 = NULL, chain_b1 = NULL;
	int first = -1, guess = 0;
	for (int i = 0; i < ctx->njoints; ++i) {
		const lk__ode_joint *j = &ctx->joints[i];
		if (!j->m)
			continue;
		dBodyID b0 = j->bid[0], b1 = j->bid[1];
		int best = -1;
		if (j->type == dJointTypeContact) {
			const double *n = ctx->defs[j->row0].J[0], *p = ctx->defs[j->row0].point;
			double bestd = INFINITY;
			if (first < 0 || b0 != chain_b0 || b1 != chain_b1) {
				first = pair_first(ctx, b0, b1, guess);
				if (first >= 0)
					guess = first + 1;
				chain_b0 = b0;
				chain_b1 = b1;
			}
			for (int k = first; k >= 0; k = pair_next(ctx, k, b0, b1)) {
				const lk__ode_warm *w = &ctx->warm[k];
				if (w->used)
					continue;
				double d2 = 0;
				for (int c = 0; c < 3; ++c)
					d2 += (p[c] - w->point[c]) * (p[c] - w->point[c]);
				if (d2 > tol2 || d2 >= bestd || dCalcVectorDot3(n, w->normal) < ctx->def.warm_normal_cos)
					continue;
				bestd = d2;
				best = k;
			}
		} else {
			for (int k = ctx->warm_heads[warm_hash(j->id, NULL, ctx->warm_hcap)]; k >= 0; k = ctx->warm[k].next) {
				const lk__ode_warm *w = &ctx->warm[k];
				if (w->key == (const void *)j->id && w->type == j->type && w->m == j->m &&
				    w->body[0] == b0 && w->body[1] == b1 && !w->used) {
					best = k;
					break;
				}
			}
		}
		if (best < 0)
			continue;
		lk__ode_warm *w = &ctx->warm[best];
		w->used = 1;
		int m = j->m < w->m ? j->m : w->m;
		/* every contact and every joint of an articulated body that is recovering from a penetration starts from
		 * zero (module comment) */
		if ((j->body[0] >= 0 && ctx->bodies[j->body[0]].recovering) ||
		    (j->body[1] >= 0 && ctx->bodies[j->body[1]].recovering))
			continue;
		for (int r = 0; r < m; ++r)
			lambda[j->row0 + r] = w->lambda[r] * scale;
	}
	warm_faces(ctx, scale, lambda);
}

/* Replaces the records by this step's joints and their impulses ctx->lambda. Out of memory forgets them. */
void lk__ode_warm_store(lk_ode *ctx, double h)
{
	int n = 0;
	for (int i = 0; i < ctx->njoints; ++i)
		n += ctx->joints[i].m > 0;
	if (n > ctx->cap_warm_next) {
		int c = ctx->cap_warm_next ? ctx->cap_warm_next : 64;
		while (c < n)
			c *= 2;
		lk__ode_warm *w = realloc(ctx->warm_next, (size_t)c * sizeof *w);
		if (!w) {
			ctx->nwarm = 0;
			return;
		}
		ctx->warm_next = w;
		ctx->cap_warm_next = c;
	}
	int hcap = 16;
	while (hcap < 2 * n)
		hcap *= 2;
	if (hcap > ctx->warm_hcap) {
		int *hd = realloc(ctx->warm_heads, (size_t)hcap * sizeof *hd);
		if (!hd) {
			ctx->nwarm = 0;
			return;
		}
		ctx->warm_heads = hd;
		ctx->warm_hcap = hcap;
	}
	for (int k = 0; k < ctx->warm_hcap; ++k)
		ctx->warm_heads[k] = -1;
	/* the contacts' records first, in joint order, then the other joints': where each pair's contacts were
	 * consecutive joints (warm_faces found it this step), each pair's records are one run (pair_first) */
	int k = 0;
	for (int pass = 0; pass < 2; ++pass) {
		for (int i = 0; i < ctx->njoints; ++i) {
			const lk__ode_joint *j = &ctx->joints[i];
			if (!j->m || (j->type == dJointTypeContact) != (pass == 0))
				continue;
			lk__ode_warm *w = &ctx->warm_next[k];
			memset(w, 0, sizeof *w);
			w->body[0] = j->bid[0];
			w->body[1] = j->bid[1];
			w->type = j->type;
			w->m = j->m;
			w->key = j->type == dJointTypeContact ? NULL : (const void *)j->id;
			memcpy(w->point, ctx->defs[j->row0].point, sizeof w->point);
			memcpy(w->normal, ctx->defs[j->row0].J[0], sizeof w->normal);
			memcpy(w->lambda, ctx->lambda + j->row0, (size_t)j->m * sizeof(double));
			unsigned hb = w->key ? warm_hash(w->key, NULL, ctx->warm_hcap)
			                     : warm_hash(w->body[0], w->body[1], ctx->warm_hcap);
			w->next = ctx->warm_heads[hb];
			ctx->warm_heads[hb] = k;
			++k;
		}
	}
	lk__ode_warm *t = ctx->warm;
	ctx->warm = ctx->warm_next;
	ctx->warm_next = t;
	int tc = ctx->cap_warm;
	ctx->cap_warm = ctx->cap_warm_next;
	ctx->cap_warm_next = tc;
	ctx->nwarm = k;
	ctx->warm_runs_whole = ctx->runs_whole_now;
	ctx->warm_dt = h;
}

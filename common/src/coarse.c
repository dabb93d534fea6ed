/* A two-level correction of a contact problem between Gauss-Seidel sweeps: the faces of a stack as rigid
 * joints.
 *
 * A Gauss-Seidel sweep moves the weight of a stack down by about one contact per sweep, so on a tall stack
 * the error left after a few sweeps is smooth along the stack: every face carries too little, in a pattern
 * that changes slowly from one face to the next. That part of the error lives in a small space: what each
 * face transmits as a whole, its resultant wrench. The correction solves the problem restricted to that
 * space, as the coarse level of an aggregation multigrid does (Vanek, Mandel & Brezina 1996, "Algebraic
 * multigrid by smoothed aggregation for second and fourth order elliptic problems"; unsmoothed here, with
 * the Galerkin coarse operator P^T A P):
 *
 *  - an aggregate is a face: the normal rows of one body pair and the friction rows that hang on them;
 *  - its prolongation P is an orthonormal basis of the span of the face's Jacobians on the pair's first body
 *    (face_prolongation): a coarse unknown is a change of the wrench the face transmits, spread over the
 *    face's rows with the least norm;
 *  - the coarse problem has the rows J_c = P^T J on the same two bodies, up to six per face, the CFM
 *    diag(P^T S P) and the right-hand side P^T w(lambda); it is solved as an equality (the stack with every
 *    face welded) by the envelope factor of PGS-SM's direct subspace solve (envelope.h), with its proximal
 *    term. None of it but the right-hand side depends on lambda: the basis, the coarse rows and the factor
 *    are made once and kept while the same faces take part (those that carry impulse or are closing);
 *  - the change is projected onto the bounds (a normal impulse >= 0, a friction impulse within the box of
 *    its contact's new normal impulse), and a line search takes the step along it that lowers the objective
 *    f(lambda) = 1/2 lambda^T A lambda + q^T lambda most, between none of it and all of it.
 *
 * The last rule is what makes the correction safe: the welded solution can ask for tension at a contact or
 * for more friction than the cone allows (a face that is opening, a stack that slides), and its projection
 * can then overshoot; the line search shortens it, or undoes it where it is no descent at all, and the sweeps
 * go on as plain PGS. On a resting stack it takes the error of the stack's slow mode in one step
 * (docs/solvers.md, "Coarse"). */
#include "coarse.h"

#include "envelope.h"
#include "kernel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* coarse unknowns per face */
#define WRENCH 6
/* the largest factor of a coarse problem, in sweeps of the fine one */
#define LK_COARSE_MAX_FACTOR 4.0
/* the work of analysing a coarse structure (its ordering and envelope by face blocks, faceblock.h), per face
 * in it: a breadth-first search twice and the envelope, about a row update */
#define LK_COARSE_ANALYSIS 1.0
/* a correction whose projection clips more than 1 / LK_COARSE_MISFIT of its rows is not taken */
#define LK_COARSE_MISFIT 2
/* the weakest coarse mode kept, relative to the strongest of its face (prepare) */
#define LK_COARSE_WEAK_MODE 1e-4
/* a normal row left out of its face (lk__coarse.out) comes back in once it carries this share of the face's
 * largest normal impulse: a contact on the edge of opening takes a little load from each sweep and is asked to
 * pull it off by the next correction, and let back in at any load it would make the coarse level anew at
 * every correction */
#define LK_COARSE_BACK_IN 1e-2
/* a coarse level kept from the problem's last solve serves while every normal row of its faces is within this
 * share of what it was made from (kept_fits) */
#define LK_COARSE_KEEP_TOL 1e-2
/* what a kept level records of each normal row: J, A_ii, the CFM and J's largest entry */
#define KEEP_SIG 15
/* the work of a correction on a kept level, per face row, before its first one (lk__coarse_cost_kept): the
 * check and the prolongation's columns, the right-hand side, the apply and the w after it */
#define LK_COARSE_KEPT_WORK 3.0

/* The coarse level of a problem's last solve (auto): the faces it was made for and, per face, what its
 * prolongation is made from (the span's permutation and inverse factor, the basis columns kept), the factor
 * of the coarse problem, and each normal row as it was. A resting stack's next step has the same faces with
 * rows that moved by rounding; its basis and factor would come out the same, and making them is most of a
 * correction's cost on a small stack (docs/solvers.md, "auto"). Friction rows are not compared: an engine may turn a
 * contact's two friction directions within its tangent plane from step to step (Bullet's follow the sliding
 * velocity), which changes neither the face's span nor the coarse problem (both depend on the pair's
 * directions through t1 t1^T + t2 t2^T = I - n n^T), only the prolongation's entries, which are made again
 * from the current rows at every use. Where a kept level is not exactly the current one (a row within the
 * tolerance, a contact with one friction direction that turned) the correction is a slightly wrong step,
 * which the line search of lk__coarse_correct shortens as it does any other: it never raises the
 * objective. */
struct lk__coarse_keep {
	int valid;        /* the arrays below (in lk__coarse.keep_arena, reset when the level is made again) */
	int nrows, nbodies, nfaces, nentries;
	int *rows, *face_start, *face_in, *face_modes, *pair;
	unsigned char *out; /* per entry: left out of its face (lk__coarse.out) */
	int *mode, *perm; /* per face, WRENCH each: the basis columns kept; the span's permutation */
	double *Li;       /* per face, WRENCH x WRENCH: the inverse of the span's factor */
	double *sig;      /* per face row, KEEP_SIG each (normal rows only): the row as the level was made */
	lk__fblock fb;
};

/* The keep of k made ready for a new level (its arena reset, its arrays for k's faces), or NULL where k keeps
 * none or there is no memory for it. */
static lk__coarse_keep *keep_begin(lk__coarse *k)
{
	if (!k->keep)
		return NULL;
	if (!*k->keep)
		*k->keep = calloc(1, sizeof **k->keep);
	lk__coarse_keep *kp = *k->keep;
	if (!kp)
		return NULL;
	lk__arena *a = k->keep_arena;
	lk__arena_recycle(a);
	kp->valid = 0;
	const size_t nf = (size_t)k->nfaces + 1, ne = (size_t)k->nentries + 1;
	kp->rows = lk__arena_alloc(a, ne * sizeof(int));
	kp->face_start = lk__arena_alloc(a, nf * sizeof(int));
	kp->face_in = lk__arena_alloc(a, nf * sizeof(int));
	kp->face_modes = lk__arena_alloc(a, nf * sizeof(int));
	kp->pair = lk__arena_alloc(a, 2 * nf * sizeof(int));
	kp->mode = lk__arena_alloc(a, WRENCH * nf * sizeof(int));
	kp->perm = lk__arena_alloc(a, WRENCH * nf * sizeof(int));
	kp->Li = lk__arena_alloc(a, WRENCH * WRENCH * nf * sizeof(double));
	kp->sig = lk__arena_alloc(a, KEEP_SIG * ne * sizeof(double));
	kp->out = lk__arena_alloc(a, ne);
	if (!kp->rows || !kp->face_start || !kp->face_in || !kp->face_modes || !kp->pair || !kp->mode || !kp->perm ||
	    !kp->Li || !kp->sig || !kp->out)
		return NULL;
	return kp;
}

/* Records in kp the level prepare has just made for k's faces in. */
static void keep_end(lk__coarse_keep *kp, const lk__coarse *k, const lk_problem *p)
{
	kp->nrows = p->nrows;
	kp->nbodies = p->nbodies;
	kp->nfaces = k->nfaces;
	kp->nentries = k->nentries;
	memcpy(kp->rows, k->rows, (size_t)k->nentries * sizeof *kp->rows);
	memcpy(kp->face_start, k->face_start, ((size_t)k->nfaces + 1) * sizeof *kp->face_start);
	memcpy(kp->face_in, k->face_in, (size_t)k->nfaces * sizeof *kp->face_in);
	memcpy(kp->face_modes, k->face_modes, (size_t)k->nfaces * sizeof *kp->face_modes);
	memcpy(kp->out, k->out, (size_t)k->nentries);
	for (int f = 0; f < k->nfaces; ++f) {
		if (!k->face_in[f])
			continue;
		const lk__row *r0 = &p->rows[k->rows[k->face_start[f]]];
		kp->pair[2 * f] = r0->a;
		kp->pair[2 * f + 1] = r0->b;
		for (int t = k->face_start[f]; t < k->face_start[f] + k->face_normals[f]; ++t) {
			const lk__row *r = &p->rows[k->rows[t]];
			double *s = kp->sig + KEEP_SIG * t;
			memcpy(s, r->J, sizeof r->J);
			s[12] = r->diag;
			s[13] = r->s;
			s[14] = 0.0;
			for (int e = 0; e < 12; ++e)
				s[14] = fmax(s[14], fabs(r->J[e]));
		}
	}
	kp->fb = k->fb;
	kp->valid = 1;
}

/* Whether the level kept from an earlier solve is the one k's faces in would make now: the same faces of the
 * same rows on the same bodies, every normal row within LK_COARSE_KEEP_TOL of its record (J against its
 * largest entry, A_ii and the CFM against A_ii). */
static int kept_fits(const lk__coarse *k, const lk_problem *p)
{
	const lk__coarse_keep *kp = k->keep ? *k->keep : NULL;
	if (!kp || !kp->valid || kp->nrows != p->nrows || kp->nbodies != p->nbodies || kp->nfaces != k->nfaces ||
	    kp->nentries != k->nentries ||
	    memcmp(kp->face_in, k->face_in, (size_t)k->nfaces * sizeof *k->face_in) ||
	    memcmp(kp->face_start, k->face_start, ((size_t)k->nfaces + 1) * sizeof *k->face_start) ||
	    memcmp(kp->rows, k->rows, (size_t)k->nentries * sizeof *k->rows) || memcmp(kp->out, k->out, (size_t)k->nentries))
		return 0;
	for (int f = 0; f < k->nfaces; ++f) {
		if (!k->face_in[f])
			continue;
		const lk__row *r0 = &p->rows[k->rows[k->face_start[f]]];
		if (r0->a != kp->pair[2 * f] || r0->b != kp->pair[2 * f + 1])
			return 0;
		for (int t = k->face_start[f]; t < k->face_start[f] + k->face_normals[f]; ++t) {
			const lk__row *r = &p->rows[k->rows[t]];
			const double *s = kp->sig + KEEP_SIG * t;
			for (int e = 0; e < 12; ++e)
				if (!(fabs(r->J[e] - s[e]) <= LK_COARSE_KEEP_TOL * s[14]))
					return 0;
			if (!(fabs(r->diag - s[12]) <= LK_COARSE_KEEP_TOL * s[12]) ||
			    !(fabs(r->s - s[13]) <= LK_COARSE_KEEP_TOL * s[12]))
				return 0;
		}
	}
	return 1;
}

static int is_normal_row(const lk__row *r)
{
	return r->kind == LK_ROW_NORMAL && r->findex < 0 && r->lo == 0.0 && r->hi == INFINITY;
}

/* A normal row with its body pair; the faces are the runs of one pair in the order by pair, then by row. */
typedef struct pair_key {
	int a, b, row;
} pair_key;

static int by_pair(const pair_key *u, const pair_key *v)
{
	if (u->a != v->a)
		return u->a < v->a ? -1 : 1;
	if (u->b != v->b)
		return u->b < v->b ? -1 : 1;
	return u->row < v->row ? -1 : u->row > v->row;
}

void lk__coarse_free(lk__coarse *k)
{
	/* everything lives in the problem's arena, which the next solve resets */
	memset(k, 0, sizeof *k);
}

lk_status lk__coarse_setup(lk__coarse *k, lk_problem *p)
{
	memset(k, 0, sizeof *k);
	k->arena = &p->arena;
	/* every array from the problem's arena: no allocation of the C library in a solve's steady state */
#define ALLOC(bytes) lk__arena_alloc(k->arena, (bytes))
	const int n = p->nrows;
	int nn = 0, nf = 0;
	for (int i = 0; i < n; ++i) {
		nn += is_normal_row(&p->rows[i]);
		nf += p->rows[i].findex >= 0;
	}
	if (nn == 0)
		return LK_OK;
	pair_key *normals = ALLOC((size_t)nn * sizeof *normals);
	int *face_of = ALLOC((size_t)n * sizeof *face_of), *friction = ALLOC(((size_t)nf + 1) * sizeof *friction);
	k->rows = ALLOC(((size_t)nn + nf) * sizeof *k->rows);
	k->face_start = ALLOC(((size_t)nn + 1) * sizeof *k->face_start);
	k->face_normals = ALLOC((size_t)nn * sizeof *k->face_normals);
	k->face_in = ALLOC((size_t)nn * sizeof *k->face_in);
	k->rhs = ALLOC(WRENCH * (size_t)nn * sizeof *k->rhs);
	k->gface = ALLOC(((size_t)nn + 1) * sizeof *k->gface);
	k->gpair = ALLOC(2 * ((size_t)nn + 1) * sizeof *k->gpair);
	k->gsize = ALLOC(((size_t)nn + 1) * sizeof *k->gsize);
	k->reg = ALLOC(WRENCH * (size_t)nn * sizeof *k->reg);
	k->crows = ALLOC(WRENCH * (size_t)nn * sizeof *k->crows);
	if (!normals || !face_of || !friction || !k->rows || !k->face_start || !k->face_normals || !k->face_in ||
	    !k->rhs || !k->gface || !k->gpair || !k->gsize || !k->reg || !k->crows) {
		lk__coarse_free(k);
		return LK_ERR_NO_MEMORY;
	}
	nn = 0;
	for (int i = 0; i < n; ++i) {
		const lk__row *r = &p->rows[i];
		face_of[i] = -1;
		if (is_normal_row(r))
			normals[nn++] = (pair_key){r->a, r->b, i};
		if (r->findex >= 0)
			friction[k->nfriction++] = i;
	}
	/* the adapters lay out a pair's contacts together and pairs in order, often already sorted; otherwise
	 * (Bullet's manifolds come in no order) two stable counting sorts, by the second body and then by the
	 * first, give the order of by_pair in time linear in the rows and bodies (a comparison sort of a stack's
	 * 80 normal rows was a tenth of the coarse level's making) */
	int sorted = 1;
	for (int t = 1; t < nn && sorted; ++t)
		sorted = by_pair(&normals[t - 1], &normals[t]) < 0;
	if (!sorted) {
		pair_key *tmp = ALLOC((size_t)nn * sizeof *tmp);
		int *count = ALLOC(((size_t)p->nbodies + 2) * sizeof *count);
		if (!tmp || !count) {
			lk__coarse_free(k);
			return LK_ERR_NO_MEMORY;
		}
		for (int pass = 0; pass < 2; ++pass) {
			pair_key *from = pass ? tmp : normals, *to = pass ? normals : tmp;
			memset(count, 0, ((size_t)p->nbodies + 2) * sizeof *count);
			for (int t = 0; t < nn; ++t)
				count[(pass ? from[t].a : from[t].b) + 1]++;
			for (int v = 0; v <= p->nbodies; ++v)
				count[v + 1] += count[v];
			for (int t = 0; t < nn; ++t)
				to[count[pass ? from[t].a : from[t].b]++] = from[t];
		}
	}
	int g = -1;
	for (int t = 0; t < nn; ++t) {
		if (t == 0 || normals[t].a != normals[t - 1].a || normals[t].b != normals[t - 1].b)
			k->face_normals[++g] = 0;
		face_of[normals[t].row] = g;
		k->face_normals[g]++;
	}
	k->nfaces = g + 1;
	/* the faces' rows: their normals, then the friction rows on them (same two bodies); friction[t] becomes
	 * the face of friction row t, -1 for none */
	int *fric_count = k->face_in; /* borrowed as a counter */
	memset(fric_count, 0, (size_t)k->nfaces * sizeof *fric_count);
	for (int t = 0; t < k->nfriction; ++t) {
		const lk__row *r = &p->rows[friction[t]];
		const int f = face_of[r->findex];
		const int on = f >= 0 && r->a == p->rows[r->findex].a && r->b == p->rows[r->findex].b;
		if (on)
			fric_count[f]++;
		face_of[friction[t]] = on ? f : -1;
	}
	k->face_start[0] = 0;
	for (int f = 0; f < k->nfaces; ++f)
		k->face_start[f + 1] = k->face_start[f] + k->face_normals[f] + fric_count[f];
	int at = 0;
	for (int f = 0; f < k->nfaces; ++f) {
		for (int t = 0; t < k->face_normals[f]; ++t)
			k->rows[k->face_start[f] + t] = normals[at + t].row;
		at += k->face_normals[f];
		fric_count[f] = k->face_start[f] + k->face_normals[f]; /* now the next friction slot */
	}
	for (int t = 0; t < k->nfriction; ++t)
		if (face_of[friction[t]] >= 0)
			k->rows[fric_count[face_of[friction[t]]]++] = friction[t];
	memset(k->face_in, 0, (size_t)k->nfaces * sizeof *k->face_in); /* the borrowed counter, cleared */
	k->nentries = k->face_start[k->nfaces];
	k->dl = ALLOC(((size_t)k->nentries + 1) * sizeof *k->dl);
	k->P = ALLOC(WRENCH * ((size_t)k->nentries + 1) * sizeof *k->P);
	k->changed = ALLOC(((size_t)k->nentries + 1) * sizeof *k->changed);
	k->face_modes = ALLOC(((size_t)k->nfaces + 1) * sizeof *k->face_modes);
	k->wold = ALLOC(((size_t)k->nentries + 1) * sizeof *k->wold);
	k->out = ALLOC((size_t)k->nentries + 1);
	k->pulled = ALLOC((size_t)k->nentries + 1);
	k->idx = ALLOC(((size_t)k->nentries + 1) * sizeof *k->idx);
	if (!k->dl || !k->wold || !k->P || !k->face_modes || !k->changed || !k->out || !k->pulled || !k->idx) {
		lk__coarse_free(k);
		return LK_ERR_NO_MEMORY;
	}
	memset(k->out, 0, (size_t)k->nentries + 1);
	memset(k->pulled, 0, (size_t)k->nentries + 1);
	return LK_OK;
}
#undef ALLOC

/* The pivoted Cholesky factor of W^T W, W the m x 6 matrix of the Jacobians of rows[idx[0..m)] on one body
 * (from column `side` of the records): E^T W^T W E = L L^T, stopped at the rank r of W by a pivot below 1e-9
 * of the largest diagonal (Golub & Van Loan, "Matrix Computations", sec. 4.2.8). perm[j] is the column of W
 * at position j of E; L's first r columns are the factor's, the rest zero. Returns r. */
int lk__span_factor(const lk__row *rows, const int *idx, int m, int side, int perm[6], double L[6][6])
{
	double G[6][6] = {{0}};
	for (int a = 0; a < m; ++a) {
		const double *J = rows[idx[a]].J + side;
		for (int r = 0; r < 6; ++r)
			for (int c = 0; c <= r; ++c)
				G[r][c] += J[r] * J[c];
	}
	for (int r = 0; r < 6; ++r)
		for (int c = r + 1; c < 6; ++c)
			G[r][c] = G[c][r];
	double top = 0.0;
	for (int r = 0; r < 6; ++r) {
		perm[r] = r;
		top = fmax(top, G[r][r]);
		for (int c = 0; c < 6; ++c)
			L[r][c] = 0.0;
	}
	int rank = 0;
	for (; rank < 6; ++rank) {
		/* the largest remaining diagonal of the Schur complement */
		int best = rank;
		double d = -1.0;
		for (int c = rank; c < 6; ++c) {
			double v = G[perm[c]][perm[c]];
			for (int j = 0; j < rank; ++j)
				v -= L[c][j] * L[c][j];
			if (v > d) {
				d = v;
				best = c;
			}
		}
		if (!(d > 1e-9 * top))
			break;
		const int sw = perm[rank];
		perm[rank] = perm[best];
		perm[best] = sw;
		for (int j = 0; j < rank; ++j) {
			const double x = L[rank][j];
			L[rank][j] = L[best][j];
			L[best][j] = x;
		}
		L[rank][rank] = sqrt(d);
		const double inv = 1.0 / L[rank][rank];
		for (int c = rank + 1; c < 6; ++c) {
			double v = G[perm[c]][perm[rank]];
			for (int j = 0; j < rank; ++j)
				v -= L[c][j] * L[rank][j];
			L[c][rank] = v * inv;
		}
	}
	return rank;
}

/* The columns cols[0..n) of face f's prolongation, P_t = L_r^-1 (E_r^T J_t) (face_prolongation), into
 * k->P[WRENCH t + 0..n) for its entries t, from the inverse factor Li and the permutation of its span; zero
 * for an entry left out. */
static void face_columns(lk__coarse *k, const lk_problem *p, int f, int side, const int perm[WRENCH],
                         const double *Li, const int *cols, int n)
{
	for (int t = k->face_start[f]; t < k->face_start[f + 1]; ++t) {
		const double *J = p->rows[k->rows[t]].J + side;
		double Jp[WRENCH], *P = k->P + WRENCH * t;
		if (k->out[t]) {
			memset(P, 0, WRENCH * sizeof *P);
			continue;
		}
		for (int j = 0; j < WRENCH; ++j)
			Jp[j] = J[perm[j]];
		for (int u = 0; u < n; ++u) {
			const int q = cols[u];
			double v = 0.0;
			for (int j = 0; j <= q; ++j)
				v += Li[WRENCH * q + j] * Jp[j];
			P[u] = v;
		}
	}
}

/* The prolongation of face f, into k->P[WRENCH t + q] for its entries t: an orthonormal basis of the span of
 * the Jacobians of the face's rows that are not left out, on the pair's first body (side: 0 or 6 of J). With W
 * the 6 x m matrix of those Jacobians, the pivoted Cholesky factor of W W^T = E L L^T E^T stops at the rank r of W
 * (lk__span_factor), and P = W^T E_r L_r^-T has P^T P = I. The basis spans what the face can transmit and nothing
 * of what it cannot: four coplanar contacts without friction carry three wrench components, and the fourth
 * combination of their impulses, which changes no velocity, stays out of the coarse problem (it would make
 * it singular). Returns r. */
static int face_prolongation(lk__coarse *k, const lk_problem *p, int f, int side, double basis[WRENCH][WRENCH],
                             int perm[WRENCH], double Li[WRENCH][WRENCH])
{
	const int t0 = k->face_start[f], t1 = k->face_start[f + 1];
	int m = 0;
	for (int t = t0; t < t1; ++t)
		if (!k->out[t])
			k->idx[m++] = k->rows[t];
	double L[6][6];
	const int rank = lk__span_factor(p->rows, k->idx, m, side, perm, L);
	/* the coarse rows' Jacobians on this side, P^T W^T = L_r^-1 E_r^T W W^T = L_r^-1 E_r^T E L L^T E^T =
	 * (E L_{:,r})^T: column q of the factor, unpermuted (exact up to the Schur complement left below the
	 * pivot threshold), with no sum over the face's rows */
	for (int q = 0; q < rank; ++q)
		for (int j = 0; j < 6; ++j)
			basis[q][perm[j]] = j >= q ? L[j][q] : 0.0;
	/* P_t = L_r^-1 (E_r^T J_t): the inverse of the triangular factor once (its columns by forward substitution,
	 * a division a pivot), then a product a row. Substituting row by row instead chains a division and a
	 * store per entry through every row, which took more time than the rest of the coarse level's making on
	 * Bullet's stack (docs/benchmarks.md, "The coarse level's making") */
	double inv[WRENCH];
	memset(Li, 0, sizeof(double) * WRENCH * WRENCH);
	for (int q = 0; q < rank; ++q)
		inv[q] = 1.0 / L[q][q];
	for (int j = 0; j < rank; ++j) {
		Li[j][j] = inv[j];
		for (int q = j + 1; q < rank; ++q) {
			double v = 0.0;
			for (int l = j; l < q; ++l)
				v -= L[q][l] * Li[l][j];
			Li[q][j] = v * inv[q];
		}
	}
	static const int all[WRENCH] = {0, 1, 2, 3, 4, 5};
	face_columns(k, p, f, side, perm, &Li[0][0], all, rank);
	return rank;
}

/* The coarse rows face f has at most: a mode for each of its rows, six at most. */
static int face_mode_bound(const lk__coarse *k, int f)
{
	const int rows = k->face_start[f + 1] - k->face_start[f];
	return rows < WRENCH ? rows : WRENCH;
}

/* The work of making the coarse rows of the faces in k->face_in at most (six modes a face), before the
 * factor. */
static double rows_work_bound(const lk__coarse *k)
{
	double w = 0.0;
	for (int f = 0; f < k->nfaces; ++f)
		if (k->face_in[f])
			w += (0.5 + 0.5 * WRENCH) * (k->face_start[f + 1] - k->face_start[f]) + 10.0 + 4.0 * WRENCH;
	return w;
}

/* Face f as the factor's group g: its two bodies and its bound on its coarse rows. */
static void face_group(lk__coarse *k, const lk_problem *p, int f, int g)
{
	const lk__row *r0 = &p->rows[k->rows[k->face_start[f]]];
	k->gface[g] = f;
	k->gpair[2 * g] = r0->a;
	k->gpair[2 * g + 1] = r0->b;
	k->gsize[g] = face_mode_bound(k, f);
}

/* For the faces in k->face_in: their prolongations, the coarse rows as records on the fine bodies (J_c = P^T
 * J, M^-1 J_c^T from the bodies, the CFM diag(P^T S P), whose off-diagonal part, products of two rows' CFM,
 * is left out) and the factor of A_c = P^T A P by face blocks (faceblock.h), none of which depends on lambda.
 * *spent gets the work done; returns 1 when the factor is made, 0 when it is declined: for good
 * (k->too_costly) when it would cost more than LK_COARSE_MAX_FACTOR sweeps, for now when the rows and the
 * factor would take more than `allowed`. */
static int prepare(lk__coarse *k, lk__ctx *c, double allowed, double *spent)
{
	const lk_problem *p = c->p;
	/* the structure first, before any arithmetic: a block of at most six coarse rows a face, and no more
	 * than it has rows, on the face's two bodies. The factor's cost on that structure bounds the real one (a
	 * face with fewer modes only makes its block smaller); a structure whose factor would cost more than
	 * LK_COARSE_MAX_FACTOR sweeps is no coarse level (a packing of single contacts, where every contact is its
	 * own face), and one the budget cannot pay for is not made now */
	const double max_macs = LK_COARSE_MAX_FACTOR * p->nrows / LK_WORK_BLOCK_MAC;
	double work = 0.0;
	/* First, once a solve, the whole structure where some of its faces are out: every face of the problem, in
	 * contact or not. One whose factor would be too costly with all of its faces in (a wall in running bond,
	 * whose faces make no chain) is no coarse level while only some of them are in either: corrections welding
	 * the faces of a landing wall while the others were still open set Bullet's low-friction wall of bricks
	 * rocking, a sway its ten sweeps a step kept up to the end of the run (docs/benchmarks.md, "auto against
	 * the engines' own solvers"). With every face in, the analysis below is the whole structure's. */
	int nin = 0;
	for (int f = 0; f < k->nfaces; ++f)
		nin += k->face_in[f] != 0;
	if (!k->whole_checked && nin < k->nfaces) {
		k->whole_checked = 1;
		for (int f = 0; f < k->nfaces; ++f)
			face_group(k, p, f, f);
		work += LK_COARSE_ANALYSIS * k->nfaces;
		*spent = work;
		if (lk__fb_within(k->arena, p->nbodies, k->nfaces, k->gpair, k->gsize, max_macs) != 0) {
			k->too_costly = 1; /* past LK_COARSE_MAX_FACTOR sweeps, or no memory */
			return 0;
		}
	}
	int ng = 0;
	for (int f = 0; f < k->nfaces; ++f)
		if (k->face_in[f])
			face_group(k, p, f, ng++);
	/* a level that is kept for the next solve has its factor in the keep's arena */
	lk__coarse_keep *kp = keep_begin(k);
	const int fits = lk__fb_analyse(&k->fb, kp ? k->keep_arena : k->arena, p->nbodies, ng, k->gpair, k->gsize, max_macs);
	work += LK_COARSE_ANALYSIS * ng;
	*spent = work;
	if (fits != 0) {
		k->too_costly = 1; /* past LK_COARSE_MAX_FACTOR sweeps, or no memory for the factor */
		return 0;
	}
	const double bound_macs = lk__fb_macs(&k->fb, k->gpair, p->nbodies);
	if (work + rows_work_bound(k) + LK_WORK_BLOCK_MAC * bound_macs > allowed)
		return 0;
	int m = 0, same = 1;
	for (int g = 0; g < ng; ++g) {
		const int f = k->gface[g];
		const int t0 = k->face_start[f], t1 = k->face_start[f + 1];
		const lk__row *r0 = &p->rows[k->rows[t0]];
		const int side = r0->a < p->nbodies ? 0 : 6, other = 6 - side;
		double basis[WRENCH][WRENCH], Li[WRENCH][WRENCH];
		int perm[WRENCH];
		const int modes = face_prolongation(k, p, f, side, basis, perm, Li);
		/* J_c on the basis's side is the basis factor itself (face_prolongation); on the other side, and the
		 * CFM, summed over the face's rows. In locals: the compiler cannot tell the coarse records from the
		 * fine ones they are summed from */
		double accJ[WRENCH][6] = {{0}}, accs[WRENCH] = {0};
		for (int t = t0; t < t1; ++t) {
			const lk__row *r = &p->rows[k->rows[t]];
			double Jr[6], Pr[WRENCH];
			memcpy(Jr, r->J + other, sizeof Jr);
			memcpy(Pr, k->P + WRENCH * t, sizeof Pr);
			for (int q = 0; q < modes; ++q) {
				accs[q] += Pr[q] * Pr[q] * r->s;
				for (int e = 0; e < 6; ++e)
					accJ[q][e] += Pr[q] * Jr[e];
			}
		}
		const lk_body_def *sides[2] = {r0->a < p->nbodies ? &p->bodies[r0->a] : NULL,
		                               r0->b < p->nbodies ? &p->bodies[r0->b] : NULL};
		/* a mode that moves almost nothing (an energy J_c M^-1 J_c^T below LK_COARSE_WEAK_MODE of the face's
		 * strongest) is left out: four contacts a rounding away from coplanar (Bullet's margins) span a fourth
		 * direction in which the face barely moves, and a coarse solve without CFM would put an impulse four
		 * orders of magnitude too large there */
		double Jc[WRENCH][12], MJc[WRENCH][12] = {{0}}, energy[WRENCH], strongest = 0.0;
		for (int q = 0; q < modes; ++q) {
			memcpy(Jc[q] + side, basis[q], sizeof basis[q]);
			memcpy(Jc[q] + other, accJ[q], sizeof accJ[q]);
			for (int sd = 0; sd < 2; ++sd)
				if (sides[sd])
					lk__mass_times_jt(sides[sd], Jc[q] + 6 * sd, MJc[q] + 6 * sd);
			energy[q] = 0.0;
			for (int e = 0; e < 12; ++e)
				energy[q] += Jc[q][e] * MJc[q][e];
			strongest = energy[q] > strongest ? energy[q] : strongest;
		}
		int kept = 0;
		k->fb.off[g] = m;
		for (int q = 0; q < modes; ++q) {
			if (!(energy[q] > LK_COARSE_WEAK_MODE * strongest))
				continue;
			for (int t = t0; t < t1 && kept != q; ++t)
				k->P[WRENCH * t + kept] = k->P[WRENCH * t + q];
			if (kp)
				kp->mode[WRENCH * f + kept] = q;
			/* the record written once, field by field: a record assembled elsewhere and copied (256 bytes)
			 * made the stores wait on each other */
			lk__row *cr = &k->crows[m];
			memcpy(cr->J, Jc[q], sizeof cr->J);
			memcpy(cr->MJ, MJc[q], sizeof cr->MJ);
			cr->q = 0.0;
			cr->s = accs[q];
			cr->diag = accs[q] + energy[q];
			cr->lo = cr->hi = cr->mu = 0.0;
			cr->a = r0->a;
			cr->b = r0->b;
			cr->findex = -1;
			cr->kind = 0;
			k->reg[m] = LK_ENV_PROXIMAL * cr->diag;
			++m;
			++kept;
		}
		k->face_modes[f] = kept;
		if (kp) {
			memcpy(kp->perm + WRENCH * f, perm, sizeof perm);
			memcpy(kp->Li + WRENCH * WRENCH * f, Li, sizeof Li);
		}
		k->fb.size[g] = kept;
		same &= kept == k->gsize[g];
		work += (0.5 + 0.5 * modes) * (t1 - t0) + 10.0; /* the basis and the coarse rows' other side */
	}
	/* A_c + the proximal term of PGS-SM's factored subspace (envelope.h), by face blocks */
	work += 4.0 * m;
	/* the factor's cost on the real sizes (and its solve's, in fb.solve_macs); the bound's where every face
	 * kept the modes its bound gave it */
	const double macs = same ? bound_macs : lk__fb_macs(&k->fb, k->gpair, p->nbodies);
	lk__fb_factor(&k->fb, k->crows, k->gpair, p->nbodies, k->reg);
	*spent = work + LK_WORK_BLOCK_MAC * macs;
	if (kp)
		keep_end(kp, k, p);
	return 1;
}

/* Takes the level kept from an earlier solve for k's faces in (kept_fits): the factor as it is, the
 * prolongation's columns made from the current rows. Returns the work. */
static double adopt(lk__coarse *k, const lk_problem *p)
{
	const lk__coarse_keep *kp = *k->keep;
	double work = 0.0;
	for (int f = 0; f < k->nfaces; ++f) {
		if (!k->face_in[f])
			continue;
		const int side = p->rows[k->rows[k->face_start[f]]].a < p->nbodies ? 0 : 6;
		k->face_modes[f] = kp->face_modes[f];
		face_columns(k, p, f, side, kp->perm + WRENCH * f, kp->Li + WRENCH * WRENCH * f, kp->mode + WRENCH * f,
		             kp->face_modes[f]);
		const int rows = k->face_start[f + 1] - k->face_start[f];
		/* the check of its normal rows; the columns, (q + 1) multiply-adds each */
		work += 0.5 * k->face_normals[f] + LK_WORK_BLOCK_MAC * 3.5 * WRENCH * rows;
	}
	k->fb = kp->fb;
	return work;
}

/* The entry of face f that holds its normal row `row` (a friction row's findex), or -1. */
static int normal_entry(const lk__coarse *k, int f, int row)
{
	for (int u = k->face_start[f]; u < k->face_start[f] + k->face_normals[f]; ++u)
		if (k->rows[u] == row)
			return u;
	return -1;
}

/* Face f's entries left out, brought up to date: a normal row left out comes back once the sweeps have given
 * it a share of the face's load (LK_COARSE_BACK_IN of its largest normal impulse), and the friction rows on a
 * normal row are out with it. Returns whether anything changed. */
static int truncate_face(lk__coarse *k, const lk_problem *p, int f, const double *lambda)
{
	const int t0 = k->face_start[f], tn = t0 + k->face_normals[f], t1 = k->face_start[f + 1];
	int changed = 0;
	double most = 0.0;
	for (int t = t0; t < tn; ++t)
		most = fmax(most, lambda[k->rows[t]]);
	for (int t = t0; t < tn; ++t) {
		const int i = k->rows[t];
		if (k->out[t] && lambda[i] > LK_COARSE_BACK_IN * most) {
			k->out[t] = 0;
			k->nout--;
			changed = 1;
		}
	}
	for (int t = tn; t < t1; ++t) {
		const int u = normal_entry(k, f, p->rows[k->rows[t]].findex);
		const unsigned char out = u >= 0 ? k->out[u] : 0;
		changed |= out != k->out[t];
		k->out[t] = out;
	}
	return changed;
}

double lk__coarse_correct(lk__coarse *k, lk__ctx *c)
{
	lk_problem *p = c->p;
	double *lambda = c->lambda, *du = c->du;
	const int cone = c->cfg->friction == LK_FRICTION_CONE;
	if (k->nfaces == 0 || k->too_costly || k->unaffordable)
		return 0.0;
	if (!k->carried) {
		/* the entries the last solve left out, where its level was made for the same rows: the contact on
		 * the edge of opening is so step after step, and the kept level serves from the first correction */
		k->carried = 1;
		const lk__coarse_keep *kp = k->keep ? *k->keep : NULL;
		if (kp && kp->valid && kp->nentries == k->nentries &&
		    !memcmp(kp->rows, k->rows, (size_t)k->nentries * sizeof *k->rows)) {
			memcpy(k->out, kp->out, (size_t)k->nentries);
			for (int f = 0; f < k->nfaces; ++f)
				for (int t = k->face_start[f]; t < k->face_start[f] + k->face_normals[f]; ++t)
					k->nout += k->out[t];
		}
	}
	double work = 0.0;
	/* the faces that take part: those that carry impulse or are closing (w < 0); the basis, the coarse rows
	 * and the factor are made again only when that set changes */
	int nin = 0, changed = !k->prepared;
	for (int f = 0; f < k->nfaces; ++f) {
		int in = 0;
		for (int t = k->face_start[f]; t < k->face_start[f] + k->face_normals[f] && !in; ++t) {
			const int i = k->rows[t];
			in = lambda[i] > 0.0 || lk__row_w(&p->rows[i], du, lambda[i]) < 0.0;
		}
		changed |= in != k->face_in[f];
		k->face_in[f] = in;
		nin += in;
		if (in && k->nout > 0)
			changed |= truncate_face(k, p, f, lambda);
	}
	work += 0.5 * k->nentries / 3.0; /* a w per normal row (a w is about half a row update) */
	if (nin == 0) {
		lk__count(c, 1, work);
		return 0.0;
	}
	if (changed) {
		/* under a budget the coarse rows and the factor are made only when the work left pays for them and
		 * for the correction after them, as bounded from their structure before any of it is spent */
		const double left = lk__work_left(c) - work - 2.0 * k->nentries - 0.2 * k->nfriction;
		double spent = 0.0;
		if (kept_fits(k, p)) {
			spent = adopt(k, p);
			k->prepared = 1;
		} else {
			k->prepared = prepare(k, c, left, &spent);
		}
		work += spent;
		if (!k->prepared) {
			/* the work left only shrinks: a solve that cannot pay for the coarse level now never will */
			k->unaffordable = !k->too_costly;
			lk__count(c, 1, work);
			return 0.0;
		}
	}
	/* the right-hand side -P^T w(lambda) */
	int m = 0;
	for (int f = 0; f < k->nfaces; ++f) {
		if (!k->face_in[f])
			continue;
		const int modes = k->face_modes[f];
		double acc[WRENCH] = {0};
		for (int t = k->face_start[f]; t < k->face_start[f + 1]; ++t) {
			const int i = k->rows[t];
			const double w = lk__row_w(&p->rows[i], du, lambda[i]);
			const double *P = k->P + WRENCH * t;
			k->wold[t] = w;
			for (int q = 0; q < modes; ++q)
				acc[q] -= P[q] * w;
		}
		memcpy(k->rhs + m, acc, (size_t)modes * sizeof *acc);
		m += modes;
		work += 0.5 * (k->face_start[f + 1] - k->face_start[f]);
	}
	lk__fb_solve(&k->fb, k->rhs, k->rhs);
	work += LK_WORK_BLOCK_MAC * k->fb.solve_macs;
	/* the change of every row of the faces in the correction: the solved one, projected onto the bounds (a
	 * normal impulse >= 0, a friction impulse within the box of its contact's new normal impulse, or with
	 * friction=cone a contact's pair within its disc) */
	m = 0;
	int clipped = 0, entries = 0, pulled = 0;
	for (int f = 0; f < k->nfaces; ++f) {
		if (!k->face_in[f])
			continue;
		const int t0 = k->face_start[f], t1 = k->face_start[f + 1], tn = t0 + k->face_normals[f];
		const double *delta = k->rhs + m;
		const int modes = k->face_modes[f];
		m += modes;
		entries += t1 - t0;
		for (int t = t0; t < t1; ++t) {
			const int i = k->rows[t];
			const double *P = k->P + WRENCH * t;
			double dl = 0.0;
			for (int q = 0; q < modes; ++q)
				dl += P[q] * delta[q];
			if (!(dl == dl))
				dl = 0.0;
			const int pull = t < tn && lambda[i] + dl < 0.0;
			if (pull) {
				dl = -lambda[i];
				++clipped;
				if (k->pulled[t])
					k->idx[pulled++] = t; /* free after prepare */
			}
			k->pulled[t] = (unsigned char)pull;
			k->dl[t] = dl;
		}
		for (int t = tn; t < t1; ++t) {
			const int i = k->rows[t];
			const lk__row *r = &p->rows[i];
			const int u = normal_entry(k, f, r->findex);
			const double ln = lambda[r->findex] + (u >= 0 ? k->dl[u] : 0.0);
			const double hi = r->mu * fabs(ln), next = lambda[i] + k->dl[t];
			if (cone && t + 1 < t1 && k->rows[t + 1] == i + 1 && lk__cone_pair(p, i)) {
				/* Coulomb's cone: the contact's pair onto its disc at once */
				double x = next, y = lambda[i + 1] + k->dl[t + 1];
				clipped += 2 * (x * x + y * y > hi * hi);
				lk__disc_project(&x, &y, hi);
				k->dl[t] = x - lambda[i];
				k->dl[t + 1] = y - lambda[i + 1];
				++t;
				continue;
			}
			clipped += next > hi || next < -hi;
			k->dl[t] = (next > hi ? hi : next < -hi ? -hi : next) - lambda[i];
		}
	}
	/* more than half of the faces' rows at a bound the welded solution overshot (normal impulses asked to
	 * pull, friction past its box): the faces slide or open, the welded model does not fit them, and the
	 * projected change, however the line search shortens it, is a poor step (three boxes sliding down a
	 * slope in ODE clip 70-75 % of their rows, and with the step PSOR w = 1.2 ended 40 sweep-equivalents at
	 * RES 0.38 where it reaches 4e-9 alone). It is not taken, and the next correction waits twice as long. A
	 * stack at rest clips none; a recorded step of Bullet's stack 29 %, and there the step helps. */
	if (LK_COARSE_MISFIT * clipped > entries) {
		/* no contact is left out for it either: with the contacts it asked to pull out of their faces, the
		 * next correction of the sliding boxes (below) clipped fewer than half and was taken, a poor step */
		k->rejected++;
		work += 0.2 * k->nfriction;
		k->last_work = work;
		lk__count(c, 1, work);
		return 0.0;
	}
	/* the step alpha v along the projected change v that minimises the objective f(lambda) = 1/2 lambda^T A
	 * lambda + q^T lambda, alpha in [0, 1], as the truncated nonsmooth Newton multigrid of Graeser, Sack & Sander
	 * (2009) ends its coarse correction: with g = w(lambda) and A v from w after the full step,
	 *     f(lambda + alpha v) - f(lambda) = alpha g^T v + alpha^2 / 2 v^T A v.
	 * lambda and lambda + v both satisfy the bounds (normal impulses >= 0, each friction impulse within mu times
	 * its normal one, or each pair within its disc), a convex set, so every point between them does too: the
	 * step keeps every bound and never raises f, the objective every Gauss-Seidel row update lowers. Where the
	 * projection has turned v uphill (g^T v >= 0: the welded faces asked for tension or for more friction than
	 * the box allows) alpha is 0 and the correction is undone. */
	/* a contact the welded faces asked to pull in two corrections in a row is left out of its face while it
	 * stays open (truncated, as the coarse space of Graeser & Sander's truncated nonsmooth Newton multigrid
	 * leaves out the unknowns at their bounds): a stack's corner that lifts, which the welded stack asked again
	 * and again to hold the face down, each correction then cut to a few per cent by the line search (Bullet's
	 * stack of 25 boxes, shifted sideways by 1e-4 of their size, rocked and fell). Not after one: a correction
	 * from a cold start asks a quarter of a stack's contacts to pull, which the sweeps after it load again */
	for (int e = 0; e < pulled; ++e) {
		const int t = k->idx[e];
		k->nout += !k->out[t];
		k->out[t] = 1;
		k->prepared = 0; /* the level is made again (or a kept one for these entries taken) */
	}
	double max_change = 0.0, gv = 0.0, vav = 0.0;
	int nchanged = 0;
	for (int f = 0; f < k->nfaces; ++f) {
		if (!k->face_in[f])
			continue;
		for (int t = k->face_start[f]; t < k->face_start[f + 1]; ++t) {
			const int i = k->rows[t];
			if (k->dl[t] == 0.0)
				continue;
			lambda[i] += k->dl[t];
			lk__row_apply(&p->rows[i], du, k->dl[t]);
			max_change = fabs(k->dl[t]) > max_change ? fabs(k->dl[t]) : max_change;
			k->changed[nchanged++] = t;
		}
	}
	for (int c2 = 0; c2 < nchanged; ++c2) {
		const int t = k->changed[c2], i = k->rows[t];
		gv += k->dl[t] * k->wold[t];
		vav += k->dl[t] * (lk__row_w(&p->rows[i], du, lambda[i]) - k->wold[t]);
	}
	const double alpha = gv < 0.0 && vav > 0.0 ? (-gv < vav ? -gv / vav : 1.0) : 0.0;
	if (alpha < 1.0) {
		for (int c2 = 0; c2 < nchanged; ++c2) {
			const int t = k->changed[c2];
			const double back = (alpha - 1.0) * k->dl[t];
			lambda[k->rows[t]] += back;
			lk__row_apply(&p->rows[k->rows[t]], du, back);
		}
		max_change *= alpha;
		k->rejected += alpha == 0.0;
		work += 0.5 * nchanged;
	}
	work += 1.0 * k->nentries + 0.2 * k->nfriction; /* the apply and the w after it; the friction boxes */
	k->last_work = work;
	lk__count(c, 1, work);
	return max_change;
}

double lk__coarse_cost(const lk__coarse *k)
{
	/* the last correction's, or before the first the making of the coarse rows ((0.5 + WRENCH) a face row)
	 * and the correction itself (about 2 a face row, the band's factor and solves included) */
	return k->last_work > 0.0 ? k->last_work
	       : k->keep      ? lk__coarse_cost_kept(*k->keep, NULL, k->nentries)
	                      : lk__coarse_cost_of(k->nentries);
}

double lk__coarse_cost_kept(const lk__coarse_keep *keep, const lk_problem *p, int face_rows)
{
	const int may_serve = keep && keep->valid && (!p || (keep->nrows == p->nrows && keep->nbodies == p->nbodies));
	return may_serve ? LK_COARSE_KEPT_WORK * face_rows : lk__coarse_cost_of(face_rows);
}

double lk__coarse_cost_of(int face_rows)
{
	return (2.5 + WRENCH) * face_rows;
}

/* The row kernels every Gauss-Seidel method shares: w_i and the du update of the row form (production and
 * plain scalar reference side by side; tests/test_kernel.c compares them), the sweep cursor, the bounds and
 * the clamp. Header-only: they are inlined into each sweep. */
#ifndef LCPKIT_KERNEL_H
#define LCPKIT_KERNEL_H

#include "debug.h"
#include "problem.h"

#include <math.h>
#include <string.h>

/* Two doubles in one SSE2 register (GCC / Clang vector extension; plain C operators on it). Loads and stores go
 * through memcpy so that no alignment is assumed; on x86-64 they become single unaligned moves. */
typedef double lk__v2d __attribute__((vector_size(16)));
/* Its lanes as integers, for selections by a mask of all ones or all zeros (bitwise & | ~). */
typedef long long lk__v2i __attribute__((vector_size(16)));

static inline lk__v2d lk__ld2(const double *x)
{
	lk__v2d v;
	memcpy(&v, x, sizeof v);
	return v;
}

static inline void lk__st2(double *x, lk__v2d v)
{
	memcpy(x, &v, sizeof v);
}

/* The dot product of two 12-vectors held as six pairs of lanes, (x0 y0 + x1 y1 + x2 y2) + (x3 y3 + x4 y4 +
 * x5 y5), then the lanes: two short trees, one per body, not one chain of twelve additions, which shortens the
 * dependency from one row update to the next. The order is fixed, so the result is the same on every run of a
 * build; every row kernel sums J du this way. */
static inline double lk__tree12(lk__v2d x0, lk__v2d x1, lk__v2d x2, lk__v2d x3, lk__v2d x4, lk__v2d x5, lk__v2d y0,
                                lk__v2d y1, lk__v2d y2, lk__v2d y3, lk__v2d y4, lk__v2d y5)
{
	lk__v2d sa = (x0 * y0 + x1 * y1) + x2 * y2;
	lk__v2d sb = (x3 * y3 + x4 * y4) + x5 * y5;
	lk__v2d s = sa + sb;
	return s[0] + s[1];
}

/* J_i du for the row form, the coupling part of w_i. */
static inline double lk__row_jdu(const lk__row *r, const double *du)
{
	const double *da = du + LK_DU_STRIDE * (size_t)r->a, *db = du + LK_DU_STRIDE * (size_t)r->b;
	return lk__tree12(lk__ld2(r->J), lk__ld2(r->J + 2), lk__ld2(r->J + 4), lk__ld2(r->J + 6), lk__ld2(r->J + 8),
	                  lk__ld2(r->J + 10), lk__ld2(da), lk__ld2(da + 2), lk__ld2(da + 4), lk__ld2(db), lk__ld2(db + 2),
	                  lk__ld2(db + 4));
}

/* w_i = (A lambda + q)_i for the row form, given du = M^-1 J^T lambda: the production kernel (it may differ
 * from lk__row_w_ref in the last bits). */
static inline double lk__row_w(const lk__row *r, const double *du, double lambda_i)
{
	return (r->q + r->s * lambda_i) + lk__row_jdu(r, du);
}

/* start + J_i du as one scalar chain in index order: the plain reference of the products above, and the
 * product of the methods whose rounding is defined by it (PGS-SM's subspace products, the Newton methods). */
static inline double lk__row_dot_ref(const lk__row *r, const double *du, double start)
{
	const double *da = du + LK_DU_STRIDE * (size_t)r->a, *db = du + LK_DU_STRIDE * (size_t)r->b;
	double w = start;
	for (int k = 0; k < 6; ++k)
		w += r->J[k] * da[k] + r->J[6 + k] * db[k];
	return w;
}

/* The plain scalar reference of lk__row_w: one chain in index order. Tests compare the two. */
static inline double lk__row_w_ref(const lk__row *r, const double *du, double lambda_i)
{
	return lk__row_dot_ref(r, du, r->q + r->s * lambda_i);
}

/* du += M^-1 J_i^T dl. Every element is one product and one sum, so the two-lane form gives bitwise the
 * results of lk__row_apply_ref. All loads come before the stores: a row's two slots are distinct (a != b,
 * lk_problem_add_row), and the compiler need not assume that they overlap. */
static inline void lk__row_apply(const lk__row *r, double *du, double dl)
{
	LK_ASSERT(r->a != r->b);
	double *da = du + LK_DU_STRIDE * (size_t)r->a, *db = du + LK_DU_STRIDE * (size_t)r->b;
	const lk__v2d d = {dl, dl};
	lk__v2d a0 = lk__ld2(da), a1 = lk__ld2(da + 2), a2 = lk__ld2(da + 4);
	lk__v2d b0 = lk__ld2(db), b1 = lk__ld2(db + 2), b2 = lk__ld2(db + 4);
	a0 += lk__ld2(r->MJ) * d;
	a1 += lk__ld2(r->MJ + 2) * d;
	a2 += lk__ld2(r->MJ + 4) * d;
	b0 += lk__ld2(r->MJ + 6) * d;
	b1 += lk__ld2(r->MJ + 8) * d;
	b2 += lk__ld2(r->MJ + 10) * d;
	lk__st2(da, a0);
	lk__st2(da + 2, a1);
	lk__st2(da + 4, a2);
	lk__st2(db, b0);
	lk__st2(db + 2, b1);
	lk__st2(db + 4, b2);
}

static inline void lk__row_apply_ref(const lk__row *r, double *du, double dl)
{
	double *da = du + LK_DU_STRIDE * (size_t)r->a, *db = du + LK_DU_STRIDE * (size_t)r->b;
	for (int k = 0; k < 6; ++k) {
		da[k] += r->MJ[k] * dl;
		db[k] += r->MJ[6 + k] * dl;
	}
}

/* The sweep cursor of the production Gauss-Seidel kernels (PGS, pgs.c; AMGS, amgs.c). Consecutive rows of a
 * contact (3 rows; the 4 x 3 rows of a box on a box) and of a joint act on the same two bodies, so each row
 * update needs the velocity slots the one before has just changed: a chain that runs through every row. The
 * cursor keeps the two bodies' slots in registers while consecutive rows act on the same pair, so that a row
 * does not wait for the store of the one before to be forwarded to its loads, and stores them once, when the
 * pair changes and at the end of the rows swept (lk__cursor_flush): du in memory is current for every body but
 * the cursor's pair, which no other row reads before the cursor moves on. It keeps the slots' addresses too,
 * made when the pair changes rather than at every store. Stored after every row update, as they were, the
 * slots cost six stores a row update that the next row's registers made useless (docs/benchmarks.md,
 * "The cursor's slots stored once a pair").
 *
 * An earlier cursor also split the next row's coupling term at the current row (g J_{i+1} du' = g J_{i+1} du +
 * g A_{i+1,i} d_i, both products formed before d_i is known), which shortens the chain to one product and one
 * sum but costs a second product of twelve per row. Measured side by side on the development machine (an AMD
 * EPYC host; `lcpkit bench kernel`, docs/benchmarks.md "kernel"), the extra instructions cost more than the
 * shorter chain saved, at every size: it is gone. */
typedef struct lk__pair_cursor {
	int32_t a, b;
	double *pa, *pb;                /* their slots in du, for the stores; NULL: no pair held */
	lk__v2d a0, a1, a2, b0, b1, b2; /* du of the pair */
	int32_t world;                  /* skip_world: the static world's body number, whose slot is not stored */
	int skip_world;
} lk__pair_cursor;

/* `skip_world`: the parallel sweeps leave the static world's slot (body number `world`) alone: rows of several
 * threads share it, and its M^-1 J^T is 0, so the store would write back what is there (parallel.h). */
static inline void lk__cursor_init(lk__pair_cursor *k, int skip_world, int world)
{
	const lk__v2d z = {0, 0};
	k->a = k->b = -1;
	k->pa = k->pb = NULL;
	k->a0 = k->a1 = k->a2 = k->b0 = k->b1 = k->b2 = z;
	k->world = world;
	k->skip_world = skip_world;
}

/* Stores the pair's slots into du (nothing where no pair is held). */
static inline __attribute__((always_inline)) void lk__cursor_flush(lk__pair_cursor *k)
{
	if (!k->pa)
		return;
	if (!k->skip_world || k->a != k->world) {
		lk__st2(k->pa, k->a0);
		lk__st2(k->pa + 2, k->a1);
		lk__st2(k->pa + 4, k->a2);
	}
	if (!k->skip_world || k->b != k->world) {
		lk__st2(k->pb, k->b0);
		lk__st2(k->pb + 2, k->b1);
		lk__st2(k->pb + 4, k->b2);
	}
}

/* lk__tree12 of g x and y: g applied to x (to J, which waits for nothing) rather than to the sum. */
static inline double lk__gdot12(const double *x, double g, lk__v2d y0, lk__v2d y1, lk__v2d y2, lk__v2d y3, lk__v2d y4,
                                lk__v2d y5)
{
	const lk__v2d gg = {g, g};
	return lk__tree12(lk__ld2(x) * gg, lk__ld2(x + 2) * gg, lk__ld2(x + 4) * gg, lk__ld2(x + 6) * gg,
	                  lk__ld2(x + 8) * gg, lk__ld2(x + 10) * gg, y0, y1, y2, y3, y4, y5);
}

/* g J_r du for row r, the coupling part of g w_r, with r's pair loaded into the cursor (the pair held before
 * stored first). `paired` 0: the slots are loaded at every row, without comparing the pair with the one
 * before (a constant at each use: the sweeps of an order whose consecutive rows rarely share a body, where the
 * comparison only costs), and lk__cursor_apply stores them at every row. */
static inline __attribute__((always_inline)) double lk__cursor_gjdu(lk__pair_cursor *k, const lk__row *r,
                                                                    double *du, double g, int paired)
{
	if (!paired || r->a != k->a || r->b != k->b) {
		if (paired)
			lk__cursor_flush(k);
		double *da = du + LK_DU_STRIDE * (size_t)r->a, *db = du + LK_DU_STRIDE * (size_t)r->b;
		k->pa = da;
		k->pb = db;
		k->a0 = lk__ld2(da);
		k->a1 = lk__ld2(da + 2);
		k->a2 = lk__ld2(da + 4);
		k->b0 = lk__ld2(db);
		k->b1 = lk__ld2(db + 2);
		k->b2 = lk__ld2(db + 4);
		k->a = r->a;
		k->b = r->b;
	}
	return lk__gdot12(r->J, g, k->a0, k->a1, k->a2, k->b0, k->b1, k->b2);
}

/* du += M^-1 J_r^T d for the row the cursor holds (after lk__cursor_gjdu on r), lk__row_apply's arithmetic
 * operation for operation, applied unconditionally: adding 0 M^-1 J^T leaves du as it is, and no
 * unpredictable branch stalls the chain. In the cursor's registers; stored at once where `paired` is 0.
 * Always inlined: a call per row update (GCC's size estimate once put it out of line) cost 20 % more
 * instructions per update. */
static inline __attribute__((always_inline)) void lk__cursor_apply(lk__pair_cursor *k, const lk__row *r,
                                                                   const double *du, double d, int paired)
{
	LK_ASSERT(r->a == k->a && r->b == k->b && r->a != r->b);
	LK_ASSERT(k->pa == du + LK_DU_STRIDE * (size_t)r->a && k->pb == du + LK_DU_STRIDE * (size_t)r->b);
	(void)du;
	const lk__v2d dd = {d, d};
	k->a0 += lk__ld2(r->MJ) * dd;
	k->a1 += lk__ld2(r->MJ + 2) * dd;
	k->a2 += lk__ld2(r->MJ + 4) * dd;
	k->b0 += lk__ld2(r->MJ + 6) * dd;
	k->b1 += lk__ld2(r->MJ + 8) * dd;
	k->b2 += lk__ld2(r->MJ + 10) * dd;
	if (!paired)
		lk__cursor_flush(k);
}

/* Rows ahead whose records the sweeps prefetch: far enough to cover a miss to the last-level cache at the
 * sweep's pace (tens of nanoseconds per row), near enough that the lines are still in L1 when the row comes
 * up (best of 0, 3, 6, 10, 16, 24 at 10^6 rows). */
#ifndef LK_SWEEP_PREFETCH
#define LK_SWEEP_PREFETCH 6
#endif

/* Prefetches the record of the row the sweep reaches LK_SWEEP_PREFETCH rows after position k. */
static inline void lk__prefetch_ahead(const lk__row *rows, const int *perm, int k, int count)
{
	if (k + LK_SWEEP_PREFETCH < count) {
		const char *x = (const char *)&rows[perm ? perm[k + LK_SWEEP_PREFETCH] : k + LK_SWEEP_PREFETCH];
		__builtin_prefetch(x, 0, 3);
		__builtin_prefetch(x + 64, 0, 3);
		__builtin_prefetch(x + 128, 0, 3);
		__builtin_prefetch(x + 192, 0, 3);
	}
}

/* Rows ahead whose two velocity slots the sweeps prefetch: their record, prefetched LK_SWEEP_PREFETCH rows
 * ahead, has come in by then and names the bodies. A large problem's slots (64 bytes a body, 6.4 MB for
 * 100,000 bodies) lie beyond the level-2 cache, and each row reads and writes two of them. Three rows ahead
 * was the fastest on a large pool's step and a large pile's island, and level on problems in cache
 * (docs/benchmarks.md, "The velocity slots prefetched"). 0: none. */
#ifndef LK_DU_PREFETCH
#define LK_DU_PREFETCH 3
#endif
/* Bodies below which the slots are not prefetched: 64 KB of them stay in the first caches, and the prefetch
 * would only add its instructions (14 a row update). */
#define LK_DU_PREFETCH_MIN_BODIES 1024

/* Prefetches the velocity slots of the row the sweep reaches LK_DU_PREFETCH rows after position k (the static
 * world's too: it is read, and in a parallel sweep never written, so its line stays shared); `far`: the
 * problem has LK_DU_PREFETCH_MIN_BODIES bodies or more. */
static inline void lk__prefetch_du(const lk__row *rows, const int *perm, const double *du, int k, int count,
                                   int far)
{
	if (LK_DU_PREFETCH > 0 && far && k + LK_DU_PREFETCH < count) {
		const lk__row *r = &rows[perm ? perm[k + LK_DU_PREFETCH] : k + LK_DU_PREFETCH];
		__builtin_prefetch(du + LK_DU_STRIDE * (size_t)r->a, 0, 3);
		__builtin_prefetch(du + LK_DU_STRIDE * (size_t)r->b, 0, 3);
	}
}

/* w_i for the matrix form. */
static inline double lk__csr_w(const lk_problem *p, int i, const double *lambda)
{
	double w = p->rows[i].q;
	for (int k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k)
		w += p->val[k] * lambda[p->col[k]];
	return w;
}

/* w_i for either form (du is ignored by the matrix form). */
static inline double lk__w(const lk_problem *p, int i, const double *lambda, const double *du)
{
	if (p->form == LK_FORM_ROWS)
		return lk__row_w(&p->rows[i], du, lambda[i]);
	return lk__csr_w(p, i, lambda);
}

/* A friction row: its bounds come from its normal row's lambda through findex (the set T of Poulsen et al.
 * 2010 eq. 19). */
static inline int lk__is_friction(const lk__row *r)
{
	return r->findex >= 0;
}

/* A row's weight in the gradient methods' metric (lk_gradient_metric): its diagonal A_ii with metric=diag, 1
 * with the identity, and 1 for a row without a positive, invertible diagonal (no J and no CFM: nothing moves
 * it). APGD steps by its inverse; MPRGP scales by its square root. */
static inline double lk__metric_weight(lk_gradient_metric metric, const lk__row *r)
{
	return metric == LK_METRIC_DIAG && r->diag > 0.0 && isfinite(1.0 / r->diag) ? r->diag : 1.0;
}

/* A_ij of either form: J_i M^-1 J_j^T (+ s_i on the diagonal) through the bodies the two rows share, or the CSR
 * entry (0 where none is stored). For small blocks of A (a contact's 3 x 3), never for a whole row. */
static inline double lk__a_entry(const lk_problem *p, int i, int j)
{
	if (p->form == LK_FORM_MATRIX) {
		for (int k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k)
			if (p->col[k] == j)
				return p->val[k];
		return 0.0;
	}
	const lk__row *ri = &p->rows[i], *rj = &p->rows[j];
	double a = i == j ? ri->s : 0.0;
	for (int si = 0; si < 2; ++si) {
		const int bi = si ? ri->b : ri->a;
		if (bi == p->nbodies)
			continue;
		for (int sj = 0; sj < 2; ++sj) {
			if ((sj ? rj->b : rj->a) != bi)
				continue;
			for (int k = 0; k < 6; ++k)
				a += ri->J[6 * si + k] * rj->MJ[6 * sj + k];
		}
	}
	return a;
}

/* Row i and row i + 1 are the two friction rows of one contact (the same normal row, next to each other as
 * both adapters and the generators lay them out): the pair the cone bounds together. */
static inline int lk__cone_pair(const lk_problem *p, int i)
{
	return i + 1 < p->nrows && p->rows[i].findex >= 0 && p->rows[i + 1].findex == p->rows[i].findex;
}

/* Row i is the one friction row of its normal row, right after it: a contact of the plane, as Siconos's fc2d
 * problems and a 3D contact with one friction direction lay it out */
static inline int lk__plane_friction(const lk_problem *p, int i)
{
	const int f = p->rows[i].findex;
	return f >= 0 && f == i - 1 && (i + 1 >= p->nrows || p->rows[i + 1].findex != f);
}

/* (x, y) projected onto the disc of radius r >= 0 centred at 0. */
static inline void lk__disc_project(double *x, double *y, double r)
{
	double n2 = *x * *x + *y * *y;
	if (n2 > r * r) {
		double s = r / sqrt(n2);
		*x *= s;
		*y *= s;
	}
}

/* Effective bounds of row i: friction rows take theirs from their normal row's lambda. */
static inline void lk__bounds(const lk__row *r, const double *lambda, double *lo, double *hi)
{
	if (r->findex >= 0) {
		double h = r->mu * fabs(lambda[r->findex]);
		*lo = -h;
		*hi = h;
	} else {
		*lo = r->lo;
		*hi = r->hi;
	}
}

/* lk__bounds without a branch, for the sweeps: [-h, h] with h = mu |lambda_f| for a friction row (findex f >= 0;
 * else f is replaced by the row's own index i, whose lambda is as finite), the record's own [lo, hi] otherwise,
 * chosen by a mask of the sign of f. In a shuffled order (auto's reshuffles, order=random) a normal row and a
 * friction row come in no pattern, and a branch on f went the wrong way about once in three rows; the same
 * numbers as lk__bounds, bit for bit. */
static inline void lk__bounds_select(const lk__row *r, const double *lambda, int i, double *lo, double *hi)
{
	const int f = r->findex;
	int src = f >= 0 ? f : i;
	long long own = -(long long)(f < 0);
	/* opaque to the compiler from here: knowing them from f's sign, GCC split the loop into the two paths
	 * again, a branch on f */
	__asm__("" : "+r"(src), "+r"(own));
	const double h = r->mu * fabs(lambda[src]);
	const lk__v2i mask = {own, own};
	const lk__v2d fric = {-h, h};
	const lk__v2d b = (lk__v2d)(((lk__v2i)lk__ld2(&r->lo) & mask) | ((lk__v2i)fric & ~mask));
	*lo = b[0];
	*hi = b[1];
}

/* mid(lo, x, hi) for lo <= hi; a NaN x stays NaN (and NaN bounds leave x as it is). Written as two
 * selections that each match one SSE2 min/max instruction exactly, so no branch is needed; for lo <= hi it
 * gives what x < lo ? lo : (x > hi ? hi : x) gives, bit for bit. */
static inline double lk__clamp(double x, double lo, double hi)
{
	double t = hi < x ? hi : x;
	return lo > t ? lo : t;
}

#endif

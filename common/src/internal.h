/* lcpkit core internals: the problem's storage, the solve context and the row kernels every solver shares. */
#ifndef LCPKIT_INTERNAL_H
#define LCPKIT_INTERNAL_H

#include "clock.h"
#include "lcpkit/lcpkit.h"
#include "rng.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* A per-solve bump arena made of blocks that never move; reset keeps the blocks for the next solve. */
typedef struct lk__arena_block {
	struct lk__arena_block *next;
	size_t size, used;
	/* data follows, 64-byte aligned */
} lk__arena_block;

typedef struct lk__arena {
	lk__arena_block *head;
} lk__arena;

void *lk__arena_alloc(lk__arena *a, size_t bytes); /* 64-byte aligned, uninitialised; NULL if no memory */
void lk__arena_reset(lk__arena *a);
void lk__arena_free(lk__arena *a);

/* One row record: everything a Gauss-Seidel row update reads, contiguous: 256 bytes, four cache lines,
 * 64-byte aligned (J, MJ and the scalars each start a line). The matrix form uses only the scalar part.
 * Body slots a and b index du; the static world is the zero slot nbodies (its MJ is 0, so it stays zero).
 * 1 / A_ii lives beside the records in lk_problem.inv_diag: the record has no room left. */
typedef struct lk__row {
	double J[12];   /* J_a (v, w), J_b (v, w) */
	double MJ[12];  /* M_a^-1 J_a^T, M_b^-1 J_b^T */
	double q;       /* J u* - c (row form) or q_i (matrix form) */
	double s;       /* CFM (row form); 0 in the matrix form, where it is part of A */
	double diag;    /* A_ii */
	double lo, hi, mu;
	int32_t a, b;
	int32_t findex;
	int32_t kind;
} lk__row;

struct lk_problem {
	lk_form form;
	int nbodies, nrows;
	int cap_bodies, cap_rows;
	lk_body_def *bodies;   /* as given */
	lk_row_def *defs;      /* row form: as given (cold data: c, id, point) */
	lk__row *rows;         /* hot records */
	double *lambda;        /* nrows */
	double *du;            /* (nbodies + 1) * 6: M^-1 J^T lambda per body, last slot the static world */
	double *inv_diag;      /* nrows: 1 / A_ii (0 where A_ii <= 0), so that sweeps multiply instead of divide */
	int du_valid;          /* du matches lambda */
	/* matrix form */
	int nnz;
	int *row_ptr, *col;
	double *val;
	double *qv;            /* q as a plain array (matrix form) */
	int validated;
	lk__arena arena;
	char error[256];
};

lk_status lk__fail(lk_problem *p, lk_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void lk__clear_error(lk_problem *p);

/* --- row kernels ------------------------------------------------------------------------------------ */

/* Two doubles in one SSE2 register (GCC / Clang vector extension; plain C operators on it). Loads and stores go
 * through memcpy so that no alignment is assumed; on x86-64 they become single unaligned moves. */
typedef double lk__v2d __attribute__((vector_size(16)));

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
	const double *da = du + 6 * (size_t)r->a, *db = du + 6 * (size_t)r->b;
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

/* The plain scalar reference of lk__row_w: one chain in index order. Tests compare the two. */
static inline double lk__row_w_ref(const lk__row *r, const double *du, double lambda_i)
{
	const double *da = du + 6 * (size_t)r->a, *db = du + 6 * (size_t)r->b;
	double w = r->q + r->s * lambda_i;
	for (int k = 0; k < 6; ++k)
		w += r->J[k] * da[k] + r->J[6 + k] * db[k];
	return w;
}

/* du += M^-1 J_i^T dl. Every element is one product and one sum, so the two-lane form gives bitwise the
 * results of lk__row_apply_ref. All loads come before the stores: a row's two slots are distinct (a != b,
 * lk_problem_add_row), and the compiler need not assume that they overlap. */
static inline void lk__row_apply(const lk__row *r, double *du, double dl)
{
	double *da = du + 6 * (size_t)r->a, *db = du + 6 * (size_t)r->b;
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
	double *da = du + 6 * (size_t)r->a, *db = du + 6 * (size_t)r->b;
	for (int k = 0; k < 6; ++k) {
		da[k] += r->MJ[k] * dl;
		db[k] += r->MJ[6 + k] * dl;
	}
}

/* The sweep cursor of the production Gauss-Seidel kernels (PGS, pgs.c; AMGS, amgs.c). Consecutive rows of a
 * contact (3 rows; the 4 x 3 rows of a box on a box) act on the same two bodies, so each row update needs the
 * velocity slots the one before has just changed: a chain that runs through every row. The cursor shortens it
 * in two ways:
 * - the two bodies' slots stay in registers while consecutive rows act on the same pair, so that a row does
 *   not wait for the store of the one before to be forwarded to its loads (the slots are still stored after
 *   every row: du is current throughout);
 * - when the next row acts on the same pair, its coupling term is split at the current row: with
 *   du' = du + M^-1 J_i^T d_i,
 *       g J_{i+1} du' = g J_{i+1} du + (g J_{i+1} M^-1 J_i^T) d_i = g J_{i+1} du + g A_{i+1,i} d_i,
 *   and both products on the right are formed before d_i is known (lk__cursor_apply, from du as it was
 *   before row i changed it), so that the chain from one row to the next carries one product and one sum
 *   instead of the slots' update and a dot product of twelve. The two sides are the same number up to
 *   rounding; the order of every operation is fixed, so the result is the same on every run of a build. */
typedef struct lk__pair_cursor {
	int32_t a, b;
	int ready;                      /* x, c hold the next row's split coupling term */
	double x, c, d_last;            /* g J_{i+1} du, g A_{i+1,i}, d_i */
	lk__v2d a0, a1, a2, b0, b1, b2; /* du of the pair */
} lk__pair_cursor;

static inline void lk__cursor_init(lk__pair_cursor *k)
{
	const lk__v2d z = {0, 0};
	k->a = k->b = -1;
	k->ready = 0;
	k->x = k->c = k->d_last = 0.0;
	k->a0 = k->a1 = k->a2 = k->b0 = k->b1 = k->b2 = z;
}

/* lk__tree12 of g x and y: g applied to x (to J, which waits for nothing) rather than to the sum. */
static inline double lk__gdot12(const double *x, double g, lk__v2d y0, lk__v2d y1, lk__v2d y2, lk__v2d y3, lk__v2d y4,
                                lk__v2d y5)
{
	const lk__v2d gg = {g, g};
	return lk__tree12(lk__ld2(x) * gg, lk__ld2(x + 2) * gg, lk__ld2(x + 4) * gg, lk__ld2(x + 6) * gg,
	                  lk__ld2(x + 8) * gg, lk__ld2(x + 10) * gg, y0, y1, y2, y3, y4, y5);
}

/* g J_r du for row r, the coupling part of g w_r. */
static inline double lk__cursor_gjdu(lk__pair_cursor *k, const lk__row *r, const double *du, double g)
{
	if (k->ready) /* r is the row lk__cursor_apply prepared: the split term */
		return k->x + k->c * k->d_last;
	if (r->a != k->a || r->b != k->b) {
		const double *da = du + 6 * (size_t)r->a, *db = du + 6 * (size_t)r->b;
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
 * unpredictable branch stalls the chain. `next` (or NULL) is the row the sweep visits next and g_next its
 * factor: when it acts on the same pair, its split coupling term is formed here. Always inlined: it is used
 * from three sweeps, and a call per row update (GCC's size estimate once put it out of line) cost 20 % more
 * instructions per update. */
static inline __attribute__((always_inline)) void lk__cursor_apply(lk__pair_cursor *k, const lk__row *r, double *du,
                                                                   double d, const lk__row *next, double g_next)
{
	k->ready = 0;
	if (next && next->a == r->a && next->b == r->b) {
		k->x = lk__gdot12(next->J, g_next, k->a0, k->a1, k->a2, k->b0, k->b1, k->b2);
		k->c = lk__gdot12(next->J, g_next, lk__ld2(r->MJ), lk__ld2(r->MJ + 2), lk__ld2(r->MJ + 4),
		                  lk__ld2(r->MJ + 6), lk__ld2(r->MJ + 8), lk__ld2(r->MJ + 10));
		k->ready = 1;
	}
	k->d_last = d;
	double *da = du + 6 * (size_t)r->a, *db = du + 6 * (size_t)r->b;
	const lk__v2d dd = {d, d};
	k->a0 += lk__ld2(r->MJ) * dd;
	k->a1 += lk__ld2(r->MJ + 2) * dd;
	k->a2 += lk__ld2(r->MJ + 4) * dd;
	k->b0 += lk__ld2(r->MJ + 6) * dd;
	k->b1 += lk__ld2(r->MJ + 8) * dd;
	k->b2 += lk__ld2(r->MJ + 10) * dd;
	lk__st2(da, k->a0);
	lk__st2(da + 2, k->a1);
	lk__st2(da + 4, k->a2);
	lk__st2(db, k->b0);
	lk__st2(db + 2, k->b1);
	lk__st2(db + 4, k->b2);
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

/* mid(lo, x, hi) for lo <= hi; a NaN x stays NaN (and NaN bounds leave x as it is). Written as two
 * selections that each match one SSE2 min/max instruction exactly, so no branch is needed; for lo <= hi it
 * gives what x < lo ? lo : (x > hi ? hi : x) gives, bit for bit. */
static inline double lk__clamp(double x, double lo, double hi)
{
	double t = hi < x ? hi : x;
	return lo > t ? lo : t;
}

/* --- the solve context ------------------------------------------------------------------------------- */


typedef struct lk__ctx {
	lk_problem *p;
	const lk_solver_config *cfg;
	int n;
	double *lambda;       /* the iterate, in place (= p->lambda) */
	double *du;           /* row form: M^-1 J^T lambda (= p->du) */
	double *w;            /* scratch, n */
	double *best;         /* best iterate seen by the monitor, n */
	double best_merit;
	double last_merit;
	double initial_merit;
	int have_best;
	int evaluated;        /* the monitor evaluated the merit at the last check */
	lk_stats *stats;
	lk_history *hist;
	double t0;
	int64_t row_updates;
	int iterations;       /* outer iterations done, set by the method */
	int inner_iterations;
	int subspace_steps;
	int used_best;
	lk_stop_reason stop;
	lk__rng rng;
} lk__ctx;

/* Recomputes du = M^-1 J^T lambda from scratch (row form). */
void lk__recompute_du(lk_problem *p, const double *lambda, double *du);
/* w = A x + q (q_plus) or A x, using tmp_du ((nbodies+1)*6 doubles) as scratch in the row form. */
void lk__apply(const lk_problem *p, const double *x, double *w, int q_plus, double *tmp_du);
/* Metrics of lambda given w = A lambda + q. */
void lk__metrics_from_w(const lk_problem *p, const double *lambda, const double *w, lk_metrics *m);
/* The configured merit's value in the metrics. */
double lk__merit_value(const lk_metrics *m, lk_merit merit);

/* The merit (or, for the Newton methods, the iterate) has grown this many times over the start: the iteration
 * is diverging (Miyamoto & Yamashita 2019 report instability of AMGS for small alpha on Pool 2). */
#define LK_DIVERGENCE_FACTOR 1e8

/* Called by every iterative method after iteration `iter` (1-based) with the largest |change| of lambda
 * in that iteration. Evaluates the merit when a tolerance or the history needs it, records history,
 * tracks the best iterate and applies the stopping rules of Erleben 2013 sec. 6 and the non-finite guard.
 * Returns LK_STOP_NONE to continue. */
lk_stop_reason lk__monitor(lk__ctx *c, int iter, double max_change);
/* lk__monitor for a method that has evaluated the metrics m of its new iterate anyway (the Newton methods,
 * whose next iteration needs w): the non-finite and growth guards and the best iterate then cost nothing
 * and run at every iteration, not only when a tolerance or the history asks for the merit. */
lk_stop_reason lk__monitor_metrics(lk__ctx *c, int iter, double max_change, const lk_metrics *m);
/* Evaluates the current iterate's metrics (w from du or CSR). */
void lk__current_metrics(lk__ctx *c, lk_metrics *m);
/* Restores the best iterate seen if it beats the current one; keeps du consistent. */
void lk__restore_best(lk__ctx *c);
/* Saves the current iterate as best if its merit is lower. */
void lk__offer_best(lk__ctx *c, double merit);
/* Sets lambda to x (n entries) and makes du consistent. */
void lk__set_lambda(lk__ctx *c, const double *x);

/* Index of the first row whose diagonal A_ii is not positive (such a row cannot be solved by a
 * Gauss-Seidel update), or -1. */
int lk__first_bad_diagonal(const lk_problem *p);

/* --- Krylov solvers (krylov.c), matrix-free through a callback ------------------------------------ */

typedef void (*lk__matvec_fn)(void *user, const double *x, double *y); /* y = A x */

typedef struct lk__krylov_result {
	int iterations;
	double residual;      /* final ||b - A x|| */
	int converged;        /* residual <= tol ||b|| */
	int breakdown;        /* a non-positive curvature (CG) or a lucky/unlucky breakdown (GMRES) stopped it */
} lk__krylov_result;

/* Conjugate gradients for symmetric positive (semi)definite A; x holds the start and the result.
 * inv_diag (or NULL) is a Jacobi preconditioner. Scratch from the arena. Returns LK_ERR_NO_MEMORY or LK_OK;
 * never writes a non-finite x: on breakdown it returns the last finite iterate. */
lk_status lk__cg(lk__arena *arena, int n, lk__matvec_fn A, void *user, const double *inv_diag, const double *b,
                 double *x, double tol, int max_iter, lk__krylov_result *res);
/* Restarted GMRES(m) for general A; same conventions. */
lk_status lk__gmres(lk__arena *arena, int n, lk__matvec_fn A, void *user, const double *b, double *x,
                    double tol, int restart, int max_iter, lk__krylov_result *res);
/* Upper bounds of the arena scratch one lk__gmres / lk__cg call takes. */
size_t lk__gmres_scratch_bytes(int n, int restart);
size_t lk__cg_scratch_bytes(int n);
/* A sub-arena carved out of `parent` once, before an iteration loop: lk__arena_reset(sub) then hands the
 * same memory to every Krylov call inside the loop, so the loop allocates nothing. Should a request exceed
 * `bytes`, the sub-arena grows by blocks of its own, which lk__arena_carve_release frees. */
lk_status lk__arena_carve(lk__arena *parent, size_t bytes, lk__arena *sub);
void lk__arena_carve_release(lk__arena *sub);

/* --- methods ----------------------------------------------------------------------------------------- */

/* One projected Gauss-Seidel / SOR sweep over rows perm[0..count) (perm NULL: 0..count-1) with
 * relaxation w_relax. Returns max |change of lambda|. */
double lk__pgs_sweep(lk__ctx *c, const int *perm, int count, double w_relax);
/* The production sweep of the row form over the rows of one set of a staggered schedule (ESP, GSP): friction
 * rows read their bounds from lambda as in lk__pgs_sweep (the schedule does not touch the normal rows while it
 * sweeps the friction set), one whose box is {0} gets 0 and is skipped when its lambda is 0 already; err (or
 * NULL) receives 1/2 sum H_i^2 over the set (Poulsen et al. eq. 22), each H_i just before row i's update. */
double lk__pgs_sweep_set(lk__ctx *c, const int *rows, int count, double w_relax, double *err);
/* The same sweep on the plain scalar reference path (lk__row_w_ref, a division by A_ii, the change applied
 * only when non-zero): the definition the production sweep is tested against. */
double lk__pgs_sweep_ref(lk__ctx *c, const int *perm, int count, double w_relax);

/* Builds the row order of a sweep for the configured ordering (identity for natural and random; for esp
 * the normal rows then the friction rows; gsp is no fixed order and fails with LK_ERR_UNSUPPORTED, as does
 * a cp order on the matrix form). perm has n entries. */
lk_status lk__order_build(lk__ctx *c, int *perm);
/* The same without a solve context (scratch from p's arena), for tests and tools. */
lk_status lk__order_permutation(lk_problem *p, const lk_solver_config *cfg, int *perm);

/* The staggered schedules (ordering.c) record each sweep of a set, for tests: the set (0 normal rows,
 * 1 friction rows) and the two sets' error measures the choice was made from (GSP; 0 for ESP). */
typedef struct lk__stagger_step {
	int set;
	double err[2];
} lk__stagger_step;
typedef struct lk__stagger_trace {
	lk__stagger_step *steps;
	int capacity;
	int count;            /* sweeps done (may exceed capacity; only the first capacity are kept) */
} lk__stagger_trace;
/* lk__solve_staggered with an optional trace. */
lk_status lk__staggered_run(lk__ctx *c, lk__stagger_trace *trace);

/* Each method iterates until lk__monitor says stop, leaves the reason in c->stop and returns LK_OK, or an
 * error (LK_ERR_NO_MEMORY from the arena) with a message set through lk__fail. */
lk_status lk__solve_pgs(lk__ctx *c);          /* PGS and PSOR (and their orderings) */
lk_status lk__solve_staggered(lk__ctx *c);    /* ESP and GSP schedules of PGS */
lk_status lk__solve_amgs(lk__ctx *c);         /* Methods 3.1 / 3.2 and AMSOR */
lk_status lk__solve_amgs_dense(lk__ctx *c);   /* Method 2.2 */
lk_status lk__solve_pgs_sm(lk__ctx *c);
lk_status lk__solve_newton(lk__ctx *c);       /* minimum-map and Fischer */

#endif

/* The problem's storage: the 256-byte row record every Gauss-Seidel row update reads, and struct lk_problem.
 * problem.c keeps it (lifecycle, storage, accessors), problem_rows.c and problem_matrix.c build and validate
 * it, problem_ops.c applies A; the kernels (kernel.h) and every method read it. */
#ifndef LCPKIT_PROBLEM_H
#define LCPKIT_PROBLEM_H

#include "arena.h"
#include "lcpkit/lcpkit.h"

#include <math.h>
#include <stdalign.h>
#include <stddef.h>

/* One row record: everything a Gauss-Seidel row update reads, contiguous: 256 bytes, four cache lines,
 * 64-byte aligned (J, MJ and the scalars each start a line). The matrix form uses only the scalar part.
 * Body slots a and b index du; the static world is the zero slot nbodies (its MJ is 0, so it stays zero).
 * 1 / A_ii lives beside the records in lk_problem.inv_diag: the record has no room left. */
/* Doubles per body slot of du: the six of M^-1 J^T lambda and two of padding, so that a slot is one cache
 * line (the array is 64-byte aligned) and two threads sweeping rows of different bodies never write one line
 * (parallel.h). */
#define LK_DU_STRIDE 8

/* What the passes over every row before the sweeps read of a record (lk_problem_validate's friction indices;
 * the bodies for the latency order, the threads' colouring and each body's rows; the coordinate orders'
 * friction rows), packed beside the records: such a pass reads 12 bytes a row instead of a cache line of each
 * record, which for a problem beyond the level-2 cache came from further out. */
typedef struct lk__row_link {
	int32_t a, b, findex, kind;
} lk__row_link;

typedef struct lk__row {
	alignas(64)
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

/* The rest of a row of the row form as added: what lk_problem_get_row, the problem files and the orderings read
 * and no sweep does. With the hot record it gives the definition back (a static side's J as 0, the record
 * keeps no other). */
typedef struct lk__row_cold {
	double c, lo, hi; /* lo, hi as given, also for a friction row (its record holds -inf, inf) */
	double point[3];
	uint64_t id;
} lk__row_cold;

struct lk_problem {
	lk_form form;
	int nbodies, nrows;
	int cap_bodies, cap_rows;
	lk_body_def *bodies;   /* as given */
	struct lk__row_cold *cold; /* row form: what no sweep reads (lk__row_cold) */
	lk__row *rows;         /* hot records */
	double *lambda;        /* nrows */
	double *du;            /* (nbodies + 1) * LK_DU_STRIDE: M^-1 J^T lambda per body (6 numbers, then padding),
	                        * last slot the static world */
	double *inv_diag;      /* nrows: 1 / A_ii (0 where A_ii <= 0), so that sweeps multiply instead of divide */
	lk__row_link *link;    /* nrows: each record's a, b and findex (lk__row_link) */
	int du_valid;          /* du matches lambda */
	/* matrix form */
	int nnz;
	int *row_ptr, *col;
	double *val;
	double *qv;            /* q as a plain array (matrix form) */
	int validated;         /* lk_problem_validate found the rows consistent, and none was added since */
	int first_bad_diag;    /* and the first row whose A_ii is not positive, or -1 (lk__first_bad_diagonal) */
	struct lk__pool *pool; /* the threads of threads > 1 (parallel.h), kept from one solve to the next */
	int pool_request;      /* the threads it was made for (it may have fewer: parallel.h) */
	lk_executor executor;  /* lent by the application (run != NULL): used instead of pool */
	lk__arena arena;
	/* auto (auto.c): the work saved (> 0) or owed (< 0) by the earlier solves, in row updates (lk__count's
	 * unit); kept by lk_problem_clear, so that an engine's problem carries it from step to step */
	double auto_account;
	double auto_rows;      /* the rows of the larger solves (auto.c): of the last one or more, decaying 1% a solve */
	int auto_coarse_wait;  /* solves left before auto tries the two-level correction again after its factor was
	                        * found too costly (auto.c) */
	int auto_settled;      /* the last solve met auto's tolerance, or took a two-level correction and ended near it
	                        * (auto.c) */
	int auto_near;         /* the last solve, of no stack, ended on its allowance all but settled (auto.c) */
	int auto_coarse_costly; /* the last analysis of the correction found its factor too costly (auto.c) */
	uint64_t auto_solves;  /* auto's solves of this problem: each shuffled solve draws its orders from its own seed */
	struct lk__coarse_keep *coarse_keep; /* auto's two-level correction kept for the next solve (coarse.c) */
	lk__arena coarse_arena; /* its arrays and factor */
	char error[256];
};

/* The problem's own pool for `threads` threads (made, or remade for another count, and kept); NULL where it
 * could not start (parallel.h). */
struct lk__pool *lk__problem_pool(lk_problem *p, int threads);

lk_status lk__fail(lk_problem *p, lk_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void lk__clear_error(lk_problem *p);

/* The most rows and bodies a problem may have. */
#define LK_MAX_ROWS (1 << 26)
#define LK_MAX_BODIES (1 << 26)

/* Room for `rows` rows or `bodies` bodies (and the static slot after them), what is there kept (problem.c);
 * LK_OK, or LK_ERR_NO_MEMORY with the problem's message. */
lk_status lk__problem_reserve_rows(lk_problem *p, int rows);
lk_status lk__problem_reserve_bodies(lk_problem *p, int bodies);

static inline int lk__all_finite(const double *x, int n)
{
	for (int i = 0; i < n; ++i)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

/* Index of the first row whose diagonal A_ii is not positive (such a row cannot be solved by a Gauss-Seidel
 * update), or -1: found by the problem's validation where it holds (lk_problem_validate, which lk_solve asks for
 * after rows were added), else by a pass over the rows. */
int lk__first_bad_diagonal(const lk_problem *p);

/* 1 / A_ii for the division-free sweeps; a row with A_ii <= 0 is never swept (lk__first_bad_diagonal). */
static inline double lk__inv_diag_of(double diag)
{
	return diag > 0.0 ? 1.0 / diag : 0.0;
}

/* The layout the kernels and the prefetcher rely on (four cache lines, J, MJ and the scalars each starting one). */
_Static_assert(sizeof(lk__row) == 256, "lk__row is four cache lines");
_Static_assert(alignof(lk__row) == 64, "lk__row starts a cache line");
_Static_assert(offsetof(lk__row, MJ) == 96 && offsetof(lk__row, q) == 192, "J, MJ, scalars at fixed offsets");

/* M^-1 J^T for one side of a row: the linear part scaled per axis, the angular part through the inverse
 * inertia. */
static inline void lk__mass_times_jt(const lk_body_def *b, const double *J, double *out)
{
	for (int k = 0; k < 3; ++k)
		out[k] = b->inv_mass[k] * J[k];
	for (int r = 0; r < 3; ++r)
		out[3 + r] = b->inv_inertia[3 * r] * J[3] + b->inv_inertia[3 * r + 1] * J[4] +
		             b->inv_inertia[3 * r + 2] * J[5];
}

/* The rows acting on each body, in row order (problem_ops.c), from the arena a (NULL without memory): for the
 * product on threads (made once a solve) and the sparse A. */
typedef struct lk__body_rows {
	int *start; /* nbodies + 1: body b's entries at start[b] .. start[b + 1] */
	int *entry; /* 2 i + side: row i acts on the body as its side `side` (0: a, 1: b) */
} lk__body_rows;
lk__body_rows *lk__body_rows_make(const lk_problem *p, lk__arena *a);

/* Recomputes du = M^-1 J^T lambda from scratch (row form; problem_ops.c). */
void lk__recompute_du(lk_problem *p, const double *lambda, double *du);
/* w = A x + q (q_plus) or A x, using tmp_du ((nbodies+1)*6 doubles) as scratch in the row form. */
void lk__apply(const lk_problem *p, const double *x, double *w, int q_plus, double *tmp_du);


/* Metrics of lambda given w = A lambda + q (merit.c), friction rows bounded by the given model (the cone's
 * natural residual on each contact's pair of friction rows; the Fischer merit stays the box one). */
void lk__metrics_from_w(const lk_problem *p, const double *lambda, const double *w, lk_friction friction,
                        lk_metrics *m);
/* The sums behind the metrics over rows [begin, end) (a cone pair counted whole from its first row; du, which may
 * be NULL for the whole range, gives the w of a pair's normal row outside the range), and the
 * metrics from sums (lk__metrics_from_w is the two over every row). */
typedef struct lk__merit_sums {
	double hh, ff, mod, maxh, viol;
	double ee;         /* the fc3d merit's squared sum (every contact against the cone) */
	double nq, nl, nw; /* ||q||^2, ||lambda||^2, ||w||^2: its scale */
	unsigned sums; /* which of ff, mod and the fc3d sums were summed (LK__SUMS_...); a merit not summed is NaN */
} lk__merit_sums;
/* The sums beyond RES's that an evaluation makes: each costs a square root or two a row, so only what is read */
enum {
	LK__SUMS_FISCHER = 1u << 0,  /* ff: the Fischer merit */
	LK__SUMS_MODIFIED = 1u << 1, /* mod: the merit "modified" */
	LK__SUMS_FC3D = 1u << 2,     /* ee, nq, nl, nw: Siconos's relative error */
	LK__SUMS_ALL = (1u << 3) - 1,
	/* a flag, not a sum: leave out RES's sums (hh, maxh, viol), which an earlier evaluation of the same lambda made */
	LK__SUMS_NO_BASE = 1u << 3,
};
/* The sums the merit m needs (none for RES and theta) */
unsigned lk__merit_sums_for(lk_merit m);
void lk__merit_sums_rows(const lk_problem *p, const double *lambda, const double *w, const double *du,
                         lk_friction friction, int begin, int end, unsigned sums, lk__merit_sums *s);
void lk__merit_sums_finish(const lk__merit_sums *s, lk_metrics *m);
/* The configured merit's value in the metrics (merit.c). */
double lk__merit_value(const lk_metrics *m, lk_merit merit);

#endif

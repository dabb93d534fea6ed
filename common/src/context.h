/* The solve context every method works in, and the monitor (monitor.c): the one home of the stopping rules,
 * the history, the divergence and non-finite guards and the best iterate, which every method, PGS-SM and the
 * Newton methods included, goes through. The driver (solve.c) creates the context; methods read and update
 * it; nothing here calls a method. */
#ifndef LCPKIT_CONTEXT_H
#define LCPKIT_CONTEXT_H

#include "clock.h"
#include "problem.h"
#include "rng.h"

/* What the driver (solve.c) and the monitor know of a method, besides its configuration: one row of the
 * table in method_table.c per method, so that a method is its own file and one row there (and its value in
 * lk_method and its name in config.c's spec grammar). */
enum {
	/* a matrix-form problem may have A_ii = 0 (the contact LCP of Erleben 2013 eq. 27): the diagonal guard
	 * holds on the row form only, where such a row acts on nothing and its lambda is undetermined (the Newton
	 * methods); every other method divides by A_ii and is guarded on both forms */
	LK__M_ZERO_DIAGONAL_MATRIX = 1u << 0,
	/* makes whole products A x (APGD, MPRGP, PGS-SM's subspace, Newton's Krylov products): each body's rows
	 * are made once a solve for the threads (product.c) */
	LK__M_WHOLE_PRODUCTS = 1u << 1,
	/* a projected Gauss-Seidel sweep that cannot run away on the row form: no growth guard, its last iterate
	 * kept, no merit measured unless something asks (lk__cannot_run_away) */
	LK__M_GAUSS_SEIDEL = 1u << 2,
	/* under tolerances alone measures no start: the merit of its result is that of the check that stopped it */
	LK__M_PLAIN_SWEEPS = 1u << 3,
};

struct lk__ctx;
typedef struct lk__method_desc {
	lk_method method;
	const char *name;                      /* its name in a solver spec (lk_config_parse) */
	lk_status (*solve)(struct lk__ctx *c); /* the entry point (methods.h) */
	unsigned traits;                       /* LK__M_* */
	/* whether the solve hands back its last iterate whatever it is (NULL: only where LK__M_GAUSS_SEIDEL) */
	int (*keeps_last)(const lk_solver_config *cfg);
} lk__method_desc;

typedef struct lk__ctx {
	lk_problem *p;
	const lk_solver_config *cfg;
	const lk__method_desc *method; /* the method being run (method_table.c's row for cfg->method, or a test's) */
	int n;
	double *lambda;       /* the iterate, in place (= p->lambda) */
	double *du;           /* row form: M^-1 J^T lambda (= p->du) */
	double *w;            /* scratch, n */
	double *best;         /* best iterate seen by the monitor, n */
	double best_merit;
	double merit;         /* merit at the latest check that evaluated it */
	double last_merit;    /* merit at the previous check: the relative rule (Erleben 2013 eq. 108) */
	int stall_window;     /* > 0: the monitor stops with LK_STOP_STAGNATION where `stall_window` checks have not
	                       * halved the merit of the check before them (ipm's Newton polish, ipm.c) */
	int stall_count;
	double stall_ref;     /* the merit the window's checks are measured against */
	double initial_merit;
	double cold_merit;    /* the merit of lambda = 0 (monitor.c), once have_cold */
	int have_cold;
	int have_best;
	int evaluated;        /* the monitor evaluated the merit at the last check */
	lk_metrics checked;   /* the metrics of the latest check that evaluated them */
	lk__merit_sums last_sums; /* the sums of the latest lk__current_metrics over every row (not by blocks) */
	double light_scale;   /* merit=fc3d: ||lambda|| at the latest evaluation, the gate of the next (monitor.c) */
	int light_next;       /* ... and the sweep at which the next is due whatever the gate */
	int grew;             /* a check under LK__RULE_SOFT_GROWTH found the growth guard tripped */
	lk_stats *stats;
	lk_history *hist;
	double t0;              /* wall clock at the start of the iteration (the time budget) */
	double ts0;             /* statistics clock at the start (lk_stats.seconds, the history) */
	int64_t row_updates;
	double work;          /* row updates weighted by what they cost (lk__count): the budget's unit times n */
	int iterations;       /* outer iterations done, set by the method */
	double step_work;     /* the work of the method's next step (lk__count units), where the method knows it: the
	                       * monitor's budget rule stops a solve that could not pay for it; 0: half a sweep */
	int inner_iterations;
	int subspace_steps;
	int used_best;
	lk_stop_reason stop;
	lk__rng rng;
	const struct lk__colouring *colouring; /* order=colour: the colours of the sweep order (parallel.h) */
	const int *latency;                    /* the latency order made for this solve (lk__latency_perm), or
	                                        * NULL: its sweeps skip the sweep cursor's pair test */
	struct lk__pool *pool;                 /* threads > 1: the problem's threads, or NULL */
	const lk_executor *ex;                 /* threads > 1 with a scheduler lent (lk_problem_set_executor):
	                                        * it runs `tasks` tasks a colour, pool is NULL */
	int tasks;
	lk__merit_sums *blocks;                /* colour order: metrics summed by blocks of rows (parallel.h) */
	unsigned sums;                         /* the merits' sums beyond RES's that the metrics make (LK__SUMS_...) */
	int nblocks;
	const struct lk__body_rows *body_rows; /* threads > 1, APGD, MPRGP, PGS-SM: each body's rows (lk__body_rows_make) */
	const int *cone_at;                    /* local=1: the contacts of the cone sweep's local solve (sweep.c) */
	struct lk__cone_contact *cone_contacts;
} lk__ctx;


/* w = A x (+ q with q_plus) and du = M^-1 J^T x, as lk__apply makes them, to the bit: on the solve's threads
 * (c->pool or c->ex) with the bodies' rows br, else (br NULL, one thread, the matrix form) lk__apply itself. */
void lk__product(lk__ctx *c, const lk__body_rows *br, const double *x, double *w, int q_plus, double *du);

/* du = M^-1 J^T x on the solve's threads, each body's slot gathered from its rows in row order (the sum the
 * scatter row by row makes): row i's x is x[i] (pos NULL) or x[pos[i]], rows with pos[i] < 0 left out. Every
 * body's slot is written, the static world's 0. */
void lk__gather_slots(lk__ctx *c, const lk__body_rows *br, const int *pos, const double *x, double *du);

/* fn(arg, t, nt) for each t < nt on the solve's threads (c->pool, c->ex), or fn(arg, 0, 1) without them. */
void lk__ctx_run(lk__ctx *c, void (*fn)(void *arg, int t, int nt), void *arg);

/* The merit (or, for the Newton methods, the iterate) has grown this many times over the start and over the
 * cold start lambda = 0 (lk__cold_merit): the iteration is diverging (Miyamoto & Yamashita 2019 report
 * instability of AMGS for small alpha on Pool 2). */
#define LK_DIVERGENCE_FACTOR 1e8

/* Whether the solve cannot run away: a method of the Gauss-Seidel family (PGS, PSOR and their orders and
 * schedules, auto) on the row form, whose A = J M^-1 J^T + S is symmetric positive semidefinite. A projected
 * Gauss-Seidel update never raises the objective 1/2 l^T A l + q^T l of such an A for fixed bounds (Erleben
 * 2013 sec. 5.2), projected SOR for 0 < w < 2 likewise converges (Cryer 1971), and friction bounds that move
 * with the normal impulses keep the iterates bounded. Growth guards would only ever cut such a solve short on a
 * transient, so that a check (a tolerance, the history, the statistics) could change what it returns: they do
 * not apply to it (the non-finite guard does). A matrix-form problem may be indefinite, and keeps them. */
int lk__cannot_run_away(const lk__ctx *c);

/* The merits of the cold start lambda = 0 (w = q), for the growth guards' scale: a warm start whose merit rose
 * for a while is not diverging as long as it stays within the guards' factor of where a cold start begins.
 * Uses c->w as scratch. */
void lk__cold_metrics(lk__ctx *c, lk_metrics *m);

/* Sets up the best iterate and the growth scale from the start's metrics m0 (lk_solve, before the method). A
 * start whose merit is 0 without being a solution (the merit "modified", sum |lambda_i| |w_i| of Erleben 2013
 * eq. 106, is 0 at lambda = 0 whatever the problem) gives no scale and is no best iterate to fall back to. */
void lk__monitor_start(lk__ctx *c, const lk_metrics *m0);

/* Called by every iterative method after iteration `iter` (1-based) with the largest |change| of lambda
 * in that iteration. Evaluates the merit when a tolerance or the history needs it, records history,
 * tracks the best iterate and applies the stopping rules of Erleben 2013 sec. 6 and the non-finite guard.
 * Returns LK_STOP_NONE to continue. */
lk_stop_reason lk__monitor(lk__ctx *c, int iter, double max_change);
/* lk__monitor for a method that has evaluated the metrics m of its new iterate anyway (the Newton methods,
 * whose next iteration needs w): the non-finite and growth guards and the best iterate then cost nothing
 * and run at every iteration, not only when a tolerance or the history asks for the merit. */
lk_stop_reason lk__monitor_metrics(lk__ctx *c, int iter, double max_change, const lk_metrics *m);

/* What a checkpoint of a method with phases of its own (PGS-SM) asks of lk__checkpoint. */
enum {
	LK__RULE_RECORD = 1,      /* record the history entry */
	LK__RULE_SOFT_GROWTH = 2  /* growth sets c->grew and continues, rather than stopping as diverged */
};
/* The same rules at a checkpoint where the method evaluates the merit of the current iterate in any case:
 * non-finite, growth, best iterate, tol_abs, tol_rel, tol_stag; not the iteration limit, which such a method
 * counts itself. */
lk_stop_reason lk__checkpoint(lk__ctx *c, int iter, double max_change, unsigned rules);
/* Whether the metrics m of the current iterate meet the absolute rule (Erleben 2013 eq. 107), a value the
 * configured merit is blind to excepted (monitor.c). */
int lk__merit_solved(const lk__ctx *c, const lk_metrics *m);
/* What a counted row costs against a row update of the PGS production sweep (weight 1): thread CPU time per
 * counted row measured by `lcpkit bench work` (docs/benchmarks.md, "work"): a row of PGS-SM's reduced product
 * (CG on the active rows: a scatter and a gather without the sweep cursor, and the CG vector updates)
 * 1.3-2.2, a row of a Newton product (du recomputed over every body, then GMRES's orthogonalisation)
 * 3.4-4.0, a row of NNCG's momentum step with its vector updates 0.5-0.8. */
/* the unit: a row update of a projected sweep (PGS, PSOR, the modulus sweeps, the staggered blocks) */
#define LK_WORK_SWEEP_ROW 1.0
#define LK_WORK_CG_ROW 1.6
#define LK_WORK_NEWTON_ROW 3.7
/* a row of NNCG's momentum step (a scatter into du, no gather) */
#define LK_WORK_MOMENTUM_ROW 0.7
/* a row of a whole product A x + q (APGD), with the iteration's vector work: M^-1 J^T x rebuilt over every
 * body, then every row gathered, without a sweep's serial chain (measured 0.84-1.10) */
#define LK_WORK_PRODUCT_ROW 1.0
/* a multiply-add of PGS-SM's envelope factor (assembly, Cholesky, triangular solves): a row update of a sweep
 * is about 24 multiply-adds with its loads and stores scattered over two bodies, the factor's are sequential
 * but each costs more than a 24th of it (measured 0.031-0.065 of a row update) */
#define LK_WORK_FACTOR_MAC (1.0 / 18.0)
/* a multiply-add of the two-level correction's factor by face blocks (faceblock.h): dense blocks of up to 6 x 6
 * in fixed-size loops */
#define LK_WORK_BLOCK_MAC (1.0 / 18.0)

/* PGS-SM's conjugate gradients take at most this many products a subspace step unless cg_max says otherwise
 * (pgs_sm.c): as many as the active rows up to here, the paper's cap, which keeps its small problems as they
 * were; a constant beyond, so that a step stays linear in the active set. */
#define LK_SM_CG_CAP 1000

/* Counts `rows` row updates of weight `weight` (LK_WORK_SWEEP_ROW for a sweep's row). */
static inline void lk__count(lk__ctx *c, int64_t rows, double weight)
{
	c->row_updates += rows;
	c->work += weight * (double)rows;
}

/* Work the budgets leave, in weighted row updates (INFINITY without a budget; 0 once the time is spent). The
 * monitor stops a method with LK_STOP_BUDGET when less than half a sweep is left; a method whose steps cost
 * less than a sweep (a CG product on the active rows) sizes them by it. */
double lk__work_left(const lk__ctx *c);
/* The work budget's part of lk__work_left alone (INFINITY without one): what is left whatever the clock says. */
double lk__work_budget_left(const lk__ctx *c);
/* Whether the history has room for another entry; lk__record appends one. */
int lk__history_wanted(const lk__ctx *c);
void lk__record(lk__ctx *c, int iter, const lk_metrics *m);

/* Evaluates the current iterate's metrics (w from du or CSR). */
void lk__current_metrics(lk__ctx *c, lk_metrics *m);
/* The metrics of the current iterate from the w in c->w and the sums in c->last_sums, which the caller knows to be
 * its w and its sums (the check that stopped a sweep method made both): no product, and only the sums c->sums
 * asks for beyond those */
void lk__metrics_of_w(lk__ctx *c, lk_metrics *m);
/* The start's metrics: as lk__current_metrics, without the product where the start is lambda = 0 (w = q) */
void lk__start_metrics(lk__ctx *c, lk_metrics *m);
/* Restores the best iterate seen; keeps du consistent. */
void lk__restore_best(lk__ctx *c);
/* Saves the current iterate as best if its merit is lower. */
void lk__offer_best(lk__ctx *c, double merit);
/* Sets lambda to x (n entries) and makes du consistent. */
void lk__set_lambda(lk__ctx *c, const double *x);

#endif

/*
 * lcpkit: the solver core.
 *
 * One time step's constraint problem (docs/maths.md, docs/problem-format.md):
 *
 *     A = J M^-1 J^T + S,   q = J u* - c,   w = A lambda + q
 *     lo <= lambda <= hi;  lambda_r = lo_r => w_r >= 0;  lambda_r = hi_r => w_r <= 0;  else w_r = 0
 *     a friction row (findex_r >= 0) has lo_r = -mu_r |lambda_findex|, hi_r = mu_r |lambda_findex|
 *
 * A problem has one of two forms. The row form holds bodies (u*, inverse mass, inverse world inertia) and
 * rows (two bodies, J, c, s, bounds); every solver works on it matrix-free. The matrix form holds a sparse
 * A (CSR), q and the bounds, for LCPs that do not come from bodies. All units are impulses (N s) and
 * velocities (m/s, rad/s). Everything is double precision.
 *
 * Memory: the problem owns everything it holds; pointers it returns stay valid until the next call that
 * changes it. Nothing here prints, exits or keeps global state: two threads may solve two problems.
 */
#ifndef LCPKIT_LCPKIT_H
#define LCPKIT_LCPKIT_H

#include "lcpkit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ problem */

typedef enum lk_form { LK_FORM_ROWS = 0, LK_FORM_MATRIX = 1 } lk_form;

/* What a row is; the orderings of Poulsen et al. 2010 read it, the solvers do not. */
typedef enum lk_row_kind {
	LK_ROW_JOINT = 0,  /* bilateral or limited joint row */
	LK_ROW_NORMAL,     /* contact normal: lo = 0, hi = inf */
	LK_ROW_FRICTION,   /* contact friction: bounds from its normal row through findex */
	LK_ROW_LIMIT,      /* joint limit */
	LK_ROW_MOTOR,      /* joint motor */
	LK_ROW_KIND_COUNT
} lk_row_kind;

#define LK_STATIC (-1) /* body index of the static world */

/* A rigid body of the row form. Its generalized velocity is (v, w) in the world frame. */
typedef struct lk_body_def {
	double u[6];            /* unconstrained velocity u* = u + h M^-1 f_ext: v (m/s) then w (rad/s) */
	double inv_mass[3];     /* 1/m per world axis (all equal for a free body; 0 on a locked axis) */
	double inv_inertia[9];  /* world-frame inverse inertia, row-major, symmetric positive semidefinite */
} lk_body_def;

/* A constraint row of the row form. */
typedef struct lk_row_def {
	int body[2];        /* body indices, LK_STATIC for the world; body[1] may be LK_STATIC, not both */
	double J[2][6];     /* Jacobian blocks: for body[k], 3 linear then 3 angular numbers */
	double c;           /* target velocity (error reduction, restitution, motor speed), m/s or rad/s */
	double s;           /* constraint force mixing in impulse units, >= 0 */
	double lo, hi;      /* bounds, may be -INFINITY / INFINITY; ignored when findex >= 0 */
	double mu;          /* friction coefficient, used when findex >= 0 */
	int findex;         /* index of this row's normal row, or -1 */
	lk_row_kind kind;
	uint64_t id;        /* the adapter's stable id of the row, for warm starting; free for lcpkit */
	double point[3];    /* world contact or anchor point (for the coordinate orderings); 0 if unknown */
} lk_row_def;

/* Fills a row definition with neutral values: no bodies, zero J, lo = -inf, hi = inf, findex -1. */
LK_API lk_row_def lk_default_row_def(void);
/* Fills a body definition with a static-like body: zero velocity and zero inverse mass. */
LK_API lk_body_def lk_default_body_def(void);
/* The Jacobian of a row on the relative velocity of bodies a and b at the world point `point` along `dir`
 * (docs/maths.md): J_a = (dir, r_a x dir), J_b = -(dir, r_b x dir), r = point - the body's position (its
 * centre of mass); a side that is LK_STATIC gets zeros and needs no position. Sets body[], J and point of
 * *row and leaves the rest (c, bounds, findex, kind, ...) as they are. LK_ERR_INVALID_ARGUMENT for a NULL
 * row, point or dir, a missing position of a body, or a == b; LK_ERR_NONFINITE for a non-finite input. */
LK_API lk_status lk_row_def_set_contact(lk_row_def *row, int a, const double pos_a[3], int b,
                                        const double pos_b[3], const double point[3], const double dir[3]);

typedef struct lk_problem lk_problem;

/* Creates an empty problem of the given form. Returns NULL only when out of memory. */
LK_API lk_problem *lk_problem_create(lk_form form);
LK_API void lk_problem_destroy(lk_problem *p);
/* Empties the problem (keeps its form and its allocated capacity, for reuse every time step). */
LK_API void lk_problem_clear(lk_problem *p);
/* The message of the last failed call on p ("" if none). Owned by p. */
LK_API const char *lk_problem_error(const lk_problem *p);

LK_API lk_form lk_problem_form(const lk_problem *p);
LK_API int lk_problem_row_count(const lk_problem *p);
LK_API int lk_problem_body_count(const lk_problem *p);

/* Row form. Bodies first, then rows referring to them. On error nothing is added. */
LK_API lk_status lk_problem_reserve(lk_problem *p, int bodies, int rows);
LK_API lk_status lk_problem_add_body(lk_problem *p, const lk_body_def *def, int *index_out);
LK_API lk_status lk_problem_add_row(lk_problem *p, const lk_row_def *def, int *index_out);
/* The sizes from which lk_problem_add_rows, lk_problem_add_bodies and the threaded sweeps use threads
 * (docs/solvers.md, "Threads"), for an adapter whose own reading of an engine's rows follows the same rule. */
#define LK_PARALLEL_MIN_ROWS 4096
#define LK_PARALLEL_MIN_BODIES 1024
/* The most threads a solve runs on (lk_solver_config.threads), and so the most tasks an adapter's reading of an
 * engine's rows on a problem's threads is split into. */
#define LK_MAX_THREADS 64
/* Adds n rows, row nrows + k defined by fill(arg, k, def) for k = 0 .. n - 1, each checked and made exactly as
 * lk_problem_add_row makes it (the same records bit for bit), on up to `threads` threads for
 * LK_PARALLEL_MIN_ROWS rows and more: the problem's own, or the scheduler lent to it
 * (lk_problem_set_executor). fill may then run concurrently for different k: it writes only *def. A
 * definition refers to rows by their final index (a friction row's findex). If fill returns a status other
 * than LK_OK for a row, or a row is refused, nothing is added and the first such row's status is returned,
 * with add_row's message, and its k in *refused_out (which may be NULL; -1 when nothing was refused). For an
 * adapter that converts an engine's rows, whose conversion is otherwise one thread's work before a threaded
 * solve. */
typedef lk_status (*lk_row_fill_fn)(void *arg, int k, lk_row_def *def);
LK_API lk_status lk_problem_add_rows(lk_problem *p, int n, lk_row_fill_fn fill, void *arg, int threads,
                                     int *refused_out);
/* The same from definitions already laid out in memory: row nrows + k is defs[order[k]] (defs[k] when order
 * is NULL), read in place, checked and made exactly as lk_problem_add_row makes it. order's entries must lie in
 * 0 .. n - 1; defs may be NULL when n is 0; findex refers to final row indices, as in add_rows. For an adapter
 * that has the engine write its rows straight into lk_row_def records (and keeps its own order of them), with
 * no copy per row. */
LK_API lk_status lk_problem_add_row_array(lk_problem *p, int n, const lk_row_def *defs, const int *order,
                                          int threads, int *refused_out);
/* The same for bodies: n bodies, body nbodies + k defined by fill(arg, k, def), each checked and kept exactly
 * as lk_problem_add_body keeps it, on up to `threads` threads for LK_PARALLEL_MIN_BODIES bodies and more;
 * before any row, as add_body. If fill fails or a body is refused, nothing is added; the first such body's
 * status, with add_body's message, and its k in *refused_out. */
typedef lk_status (*lk_body_fill_fn)(void *arg, int k, lk_body_def *def);
LK_API lk_status lk_problem_add_bodies(lk_problem *p, int n, lk_body_fill_fn fill, void *arg, int threads,
                                       int *refused_out);

/* Matrix form: A is n x n in CSR (row_ptr[n+1], col[nnz], val[nnz], columns unique per row); q[n];
 * lo, hi may be NULL (meaning 0 and +inf), mu and findex may be NULL (no friction rows). The data are
 * copied. Replaces whatever the problem held. */
LK_API lk_status lk_problem_set_matrix(lk_problem *p, int n, const int *row_ptr, const int *col,
                                       const double *val, const double *q, const double *lo,
                                       const double *hi, const double *mu, const int *findex);
/* The same from a dense row-major n x n matrix; exact zeros are dropped. */
LK_API lk_status lk_problem_set_dense(lk_problem *p, int n, const double *A, const double *q,
                                      const double *lo, const double *hi, const double *mu,
                                      const int *findex);

/* Read access to what the problem holds (NULL when out of range or the other form). */
LK_API const lk_body_def *lk_problem_body(const lk_problem *p, int i);
/* A row as added, except the J block of a static side, which reads as zeros (the problem keeps none). */
LK_API lk_status lk_problem_get_row(const lk_problem *p, int i, lk_row_def *out);
/* Matrix form: the CSR arrays; any out pointer may be NULL. */
LK_API lk_status lk_problem_get_matrix(const lk_problem *p, int *n, const int **row_ptr, const int **col,
                                       const double **val, const double **q);
/* Per-row data of either form: bounds as given (lo, hi), mu, findex, kind. Any out pointer may be NULL. */
LK_API lk_status lk_problem_get_bounds(const lk_problem *p, int i, double *lo, double *hi, double *mu,
                                       int *findex, lk_row_kind *kind);

/* Checks everything that single rows cannot: findex targets (in range, not self, not a friction row).
 * lk_solve calls it; call it yourself to validate without solving. */
LK_API lk_status lk_problem_validate(lk_problem *p);

/* lambda: the warm start going in, the solution coming out. The problem starts with lambda = 0. */
LK_API const double *lk_problem_lambda(const lk_problem *p);
LK_API lk_status lk_problem_set_lambda(lk_problem *p, const double *lambda, int n);

/* Row form, after a solve: du = M^-1 J^T lambda for body i (6 numbers), so u+ = u* + du. */
LK_API lk_status lk_problem_delta_velocity(const lk_problem *p, int body, double du[6]);

/* w = A x + q (q_plus = 1) or w = A x (q_plus = 0), for any x; x and w have row_count entries. */
LK_API lk_status lk_problem_apply(lk_problem *p, const double *x, double *w, int q_plus);
/* Dense A (row-major n*n) and q for a problem of at most max_n rows; for tests, export and reference
 * solvers. Either output may be NULL. */
LK_API lk_status lk_problem_assemble_dense(lk_problem *p, int max_n, double *A, double *q);
/* A in compressed sparse rows and q, for problems too large for a dense A (the matrix form's own entries; in the row
 * form an entry wherever two rows share a moving body, ascending columns): row_ptr (n + 1 entries) and *count
 * (the entries) are always written, col and val (either NULL to ask the count first) with the first `capacity`
 * entries: a second call with capacity *count fills them whole. q may be NULL. LK_ERR_LIMIT beyond 2^31 - 1
 * entries. */
LK_API lk_status lk_problem_assemble_sparse(lk_problem *p, int *row_ptr, int *col, double *val, double *q,
                                            int64_t capacity, int64_t *count);
/* The diagonal A_ii = J_i M^-1 J_i^T + s_i (row form) or A_ii (matrix form); n entries. */
LK_API lk_status lk_problem_diagonal(lk_problem *p, double *diag);

/* ------------------------------------------------------------------ metrics */

/* Merit functions used by the stopping rules. */
typedef enum lk_merit {
	LK_MERIT_RES = 0,   /* ||H||_2, H = lambda - mid(lo, lambda - w, hi) (Miyamoto & Yamashita 2019 eq. 24) */
	LK_MERIT_THETA,     /* 1/2 ||H||^2 (Poulsen et al. 2010 eq. 23) */
	LK_MERIT_FISCHER,   /* 1/2 ||phi_FB||^2, boxed form (Erleben 2013 eq. 103) */
	LK_MERIT_MODIFIED,  /* sum |lambda_i| |w_i| (Erleben 2013 eq. 106; meaningful for lo = 0, hi = inf rows) */
	LK_MERIT_FC3D       /* Siconos's relative error of the frictional contact problem (fc3d_compute_error; of a
	                     * contact of the plane, fc2d_compute_error's): sqrt(sum of |r - P_K(r - u_hat)|^2) /
	                     * max(||q||, ||lambda||, ||w||), a tolerance on it means what Siconos's does
	                     * (docs/solvers.md, "Siconos's error") */
} lk_merit;

typedef struct lk_metrics {
	double res;            /* ||H||_2 */
	double theta;          /* 1/2 ||H||^2 */
	double fischer;        /* 1/2 ||phi_FB||^2 */
	double modified;       /* sum |lambda_i| |w_i| */
	double max_h;          /* max |H_i| */
	double max_bound_violation; /* max amount by which lambda leaves [lo, hi] */
	double fc3d;           /* Siconos's relative error (LK_MERIT_FC3D): each contact (a normal row and its pair
	                        * of friction rows) against Coulomb's cone whatever the friction model, a contact of
	                        * the plane (a normal row and the one friction row right after it) against the 2D
	                        * cone, every other row by its natural residual; NaN where the metrics leave the full
	                        * merits out */
} lk_metrics;

/* The metrics of a given lambda (NULL: the problem's own lambda). */
LK_API lk_status lk_problem_metrics(lk_problem *p, const double *lambda, lk_metrics *out);

/* Row-wise definitions, exposed for tests and other tools. */
LK_API double lk_natural_residual(double lambda, double w, double lo, double hi);
LK_API double lk_fischer_boxed(double lambda, double w, double lo, double hi);

/* ------------------------------------------------------------------ solvers */

typedef enum lk_method {
	LK_METHOD_PGS = 0,        /* projected Gauss-Seidel (Erleben 2013 sec. 5.2) */
	LK_METHOD_PSOR,           /* projected SOR (Erleben 2013 sec. 5.3) */
	LK_METHOD_AMGS,           /* Miyamoto & Yamashita 2019 Methods 3.1/3.2, matrix-free */
	LK_METHOD_AMGS_DENSE,     /* Miyamoto & Yamashita 2019 Method 2.2 on dense A (reference) */
	LK_METHOD_AMSOR,          /* accelerated modulus-based SOR, matrix-free */
	LK_METHOD_PGS_SM,         /* Silcowitz, Niebe & Erleben, PGS with subspace minimization */
	LK_METHOD_NEWTON_MINMAP,  /* Erleben 2013 sec. 5.4 */
	LK_METHOD_NEWTON_FISCHER, /* Erleben 2013 sec. 5.5 */
	LK_METHOD_NNCG,           /* Silcowitz, Niebe & Erleben 2010: nonsmooth nonlinear conjugate gradient */
	LK_METHOD_APGD,           /* accelerated projected gradient with restart (Mazhar et al. 2015) */
	LK_METHOD_MPRGP,          /* proportioning with reduced gradient projections (Dostal & Schoberl 2005) */
	LK_METHOD_AUTO,           /* the adapters' default: Gauss-Seidel that decides per solve how much to spend and
	                           * how (docs/solvers.md, "auto") */
	LK_METHOD_IPM,            /* interior point on the friction cones with the De Saxce fixed point (Acary,
	                           * Cadoux, Lemarechal & Malick 2011; docs/solvers.md, "ipm") */
	LK_METHOD_COUNT
} lk_method;

/* Sweep orders and schedules (Poulsen, Abel & Erleben 2010). */
typedef enum lk_order {
	LK_ORDER_NATURAL = 0,
	LK_ORDER_RANDOM,      /* a fresh seeded shuffle every sweep */
	LK_ORDER_IPP,         /* impulse propagation: by relative velocity */
	LK_ORDER_CP_X,        /* coordinate permutation along x, y, z or the gravity direction */
	LK_ORDER_CP_Y,
	LK_ORDER_CP_Z,
	LK_ORDER_CP_GRAVITY,
	LK_ORDER_ESP,         /* extreme staggered: normal sweep, friction sweep, ... */
	LK_ORDER_GSP,         /* greedy staggered: sweep the set with the larger error */
	LK_ORDER_COLOUR,      /* the colours of the row graph one after the other: the order of threads > 1 */
	LK_ORDER_PART,        /* the rows in parts of the bodies, each in the natural order, then the rows that cross
	                       * parts in colours: the other order of threads > 1 (docs/solvers.md, "Threads") */
	LK_ORDER_COUNT
} lk_order;

/* How a contact's two friction rows are bounded. */
typedef enum lk_friction {
	LK_FRICTION_BOX = 0,  /* each friction row in [-mu lambda_n, mu lambda_n]: the engines' pyramid */
	LK_FRICTION_CONE      /* the pair (lambda_t1, lambda_t2) in the disc of radius mu lambda_n: Coulomb's cone */
} lk_friction;

typedef enum lk_amgs_omega {
	LK_AMGS_OMEGA_ALPHA_D = 0, /* Omega = alpha D */
	LK_AMGS_OMEGA_BAR_E        /* Omega = omega_bar E, omega_bar = mean(D_ii) / gamma */
} lk_amgs_omega;

typedef enum lk_fischer_strategy {
	LK_FISCHER_PERTURBATION = 0, /* Erleben 2013 sec. 5.5: the four choices at x_i = y_i = 0 */
	LK_FISCHER_RANDOM,
	LK_FISCHER_ZERO,
	LK_FISCHER_APPROXIMATION
} lk_fischer_strategy;

typedef enum lk_krylov {
	LK_KRYLOV_GMRES = 0,
	LK_KRYLOV_CG
} lk_krylov;

/* How PGS-SM solves its reduced system (docs/solvers.md, "PGS-SM"). */
typedef enum lk_subspace_solver {
	LK_SUBSPACE_CG = 0,   /* conjugate gradients, matrix-free (Silcowitz et al. sec. 5) */
	LK_SUBSPACE_DIRECT    /* an envelope Cholesky factor where the budget pays for it, CG where it does not */
} lk_subspace_solver;

/* The metric of the gradient methods' steps, APGD and MPRGP (docs/solvers.md, "APGD", "MPRGP"). */
typedef enum lk_gradient_metric {
	LK_METRIC_DIAG = 0, /* each row in its own scale, D = diag(A): APGD steps D^-1 g, the scaled gradient
	                     * projection (Bertsekas, "Nonlinear Programming", 2nd ed. 1999, sec. 2.3.1), with the
	                     * model's quadratic term in the norm sum_i A_ii d_i^2; MPRGP runs on D^-1/2 A D^-1/2 */
	LK_METRIC_IDENTITY  /* one scale for every row, as Mazhar et al. 2015 and Dostal & Schoberl 2005 write them */
} lk_gradient_metric;

/* Which rows form PGS-SM's subspace. */
typedef enum lk_subspace_rows {
	LK_SUBSPACE_FREE = 0, /* every row strictly inside its bounds, eq. (19) */
	LK_SUBSPACE_NORMAL    /* the free rows that are no friction rows; friction keeps its PGS value */
} lk_subspace_rows;

typedef struct lk_amgs_config {
	double alpha;           /* Omega = alpha D */
	double gamma;           /* > 0; the paper uses 2 */
	lk_amgs_omega omega;
	double amsor_w;         /* AMSOR relaxation (alpha of Zheng & Yin's AMSOR splitting) */
} lk_amgs_config;

typedef struct lk_pgs_sm_config {
	int k_pgs;              /* PGS sweeps per outer iteration (Silcowitz et al. alg. 4.3) */
	int k_sm;               /* subspace steps per outer iteration */
	double pgs_rel_tol;     /* relative termination of the PGS phase (sec. 5.1); 0 = off */
	double pgs_share;       /* under a budget: at most this share of the work left goes to a PGS phase, the
	                         * rest to the subspace steps (docs/solvers.md, "PGS-SM under a budget") */
	double reg;             /* regularization A_AA + reg I (sec. 5.1); 0 = off */
	int reg_friction_only;  /* apply reg only to friction rows */
	int lazy_friction;      /* evaluate friction bounds lazily inside the subspace solve */
	int best_iterate;       /* fall back to the best iterate seen (never worse than the PGS phase) */
	double cg_tol;          /* relative tolerance of the reduced CG solve */
	int cg_max;             /* CG iteration cap; 0 = number of active variables, at most 1000 */
	int cg_jacobi;          /* Jacobi preconditioner for the reduced CG */
	lk_subspace_solver sub; /* CG or the direct envelope factor */
	lk_subspace_rows sub_rows; /* which free rows the subspace holds */
} lk_pgs_sm_config;

typedef struct lk_newton_config {
	lk_fischer_strategy strategy;
	lk_krylov krylov;       /* solver of the Newton system */
	int krylov_max;         /* iteration cap of one Newton system solve */
	int gmres_restart;
	double forcing;         /* forcing term eta of eq. (71)/(105): ||r|| <= eta ||F|| */
	double ls_alpha;        /* Armijo sufficient decrease (Erleben 2013 projected line search) */
	double ls_beta;         /* back-tracking factor */
	double ls_tau_min;      /* minimum step length guard */
	int pgs_warm;           /* PGS sweeps before Newton (Erleben 2013 sec. 6); 0 = off; -1 (default) = a quarter
	                         * of the budget when there is one (never Newton alone on a few products), else off */
	double perturbation;    /* size of the perturbation strategy */
	double fd_h;            /* finite-difference step of the approximation strategy */
	double lm;              /* friction=cone: the Levenberg-Marquardt weight c of the Newton system
	                         * (B + C A + c ||F|| / ||F(0)|| I) d = -F (docs/solvers.md, "Coulomb's cone") */
} lk_newton_config;

/* auto (docs/solvers.md, "auto"): the budget is a mean over the solves of one problem, each solve stops at a
 * tolerance relative to its own scale. */
typedef struct lk_auto_config {
	double tol;             /* stop when the sweep's root-mean-square velocity correction, sqrt(mean (A_ii dlambda_i)^2),
	                         * is below tol times the step's velocity scale, sqrt(mean q_i^2) */
	double cap;             /* the most one solve may spend, in budgets (>= 1) */
	double bank;            /* the most work the account may hold, saved or owed, in budgets (>= 0) */
	double carry;           /* the share of the previous step's impulses that the incoming lambda holds (an engine's
	                         * damped warm start: ODE's warm_factor, Bullet's m_warmstartingFactor; the adapters set
	                         * it), in [0, 1]: auto makes the faces of a stack whole again (docs/solvers.md) */
	int shuffle;            /* after a solve's first `shuffle` sweeps in the problem's order, sweep the rows of
	                         * the contacts of a problem with faces in a random order drawn anew every `shuffle`
	                         * sweeps; 0: the problem's own order throughout. The ODE adapter sets 8, the
	                         * reordering of ODE's quickstep; the Bullet adapter 1 under SOLVER_RANDMIZE_ORDER */
	int touch;              /* where articulated bodies touch (a contact between two bodies that joints tie to
	                         * other moving bodies: a pile of ragdolls), after the first `touch` sweeps in the
	                         * problem's order, every row, joints too, in a random order over the whole problem
	                         * drawn anew every `touch` sweeps; 0: as `shuffle`. The Bullet adapter sets 8 */
	double joint_w;         /* the relaxation of the joints' bilateral rows (not their limits, motors or other
	                         * bounded rows), where the other rows take the solve's w; 0: the same w for every
	                         * row. The ODE adapter sets quickstep's (dWorldSetQuickStepW) on a step where no
	                         * contact recovers from a penetration */
} lk_auto_config;

typedef struct lk_ipm_config {
	double polish;          /* Newton (newton-minmap's, on the cone with friction=cone) takes over from the first
	                         * outer iteration whose merit is within polish x tol_abs, its attempts within three
	                         * times the interior point's work; the interior point goes on where it does not reach
	                         * tol_abs (docs/solvers.md, "Interior point: ipm"); 0: off */
} lk_ipm_config;

typedef struct lk_solver_config {
	lk_method method;
	int max_iterations;     /* sweeps (Gauss-Seidel family) or outer iterations (Newton, PGS-SM) */
	double budget;          /* work limit in sweep-equivalents, the same unit for every method: the work of
	                         * one PGS sweep (n row updates) is 1 (docs/solvers.md, "Work"); 0 = off */
	double time_budget_us;  /* wall-time limit of the iteration, microseconds; 0 = off */
	double tol_abs;         /* stop when merit < tol_abs (Erleben 2013 eq. 107); 0 = off */
	double tol_rel;         /* stop when |merit_k+1 - merit_k| < tol_rel merit_k (eq. 108); 0 = off */
	double tol_stag;        /* stop when max |lambda_k+1 - lambda_k| < tol_stag (eq. 109); 0 = off */
	lk_merit merit;         /* the merit the tolerances apply to */
	int check_every;        /* evaluate the merit every N iterations (>= 1) when a tolerance needs it */
	int warm_start;         /* 1: start from the problem's lambda; 0: start from zero */
	int measure;            /* 1 (default): RES of the start and the result (lk_stats, the end guard); 0: not
	                         * evaluated where nothing else reads them (docs/solvers.md, "measure") */
	double sor_w;           /* PSOR relaxation, 0 < w < 2; LK_SOR_AUTO: estimated during the solve (docs/solvers.md) */
	lk_order order;
	int order_descending;   /* IPP and CP: descending instead of ascending */
	int order_blocked;      /* CP: keep each contact's normal row before its friction rows */
	int order_latency;      /* natural order, row form: 1 (default) sweeps it in its latency order, which reorders
	                         * rows on disjoint bodies so that consecutive row updates overlap in the processor,
	                         * the iterates the same to the bit (docs/solvers.md, "Orders"); 0: as it is */
	lk_friction friction;   /* PGS and PSOR: box (default) or cone; the merits follow it */
	int cone_local;         /* friction=cone, the cone sweep: 0 (default) takes one projected step on each contact's
	                         * friction pair; 1 solves the contact's 3 x 3 problem exactly (local=1) */
	int coarse;             /* PGS and PSOR, row form: a two-level correction of the normal rows (one unknown per
	                         * body pair) after every `coarse` sweeps; 0 = off (docs/solvers.md, "Coarse") */
	double gravity[3];      /* direction used by LK_ORDER_CP_GRAVITY */
	uint64_t seed;          /* random order and random strategies; same seed, same result */
	int threads;            /* threads of the row-form sweeps (1 .. 64; > 1 sweeps in order=part, the same result
	                         * run after run, or order=colour, the same for every thread count: docs/solvers.md,
	                         * "Threads") */
	lk_amgs_config amgs;
	lk_pgs_sm_config pgs_sm;
	lk_newton_config newton;
	lk_gradient_metric metric; /* APGD and MPRGP: diag or identity (lk_default_config: diag for APGD, identity for
	                            * MPRGP) */
	lk_auto_config adapt;   /* auto */
	lk_ipm_config ipm;      /* ipm */
} lk_solver_config;

/* sor_w = LK_SOR_AUTO (spec "w=auto"): PGS/PSOR estimate the contraction of their first sweeps and switch to
 * Young's w = 2 / (1 + sqrt(1 - rho)); the other methods that take w sweep with 1. */
#define LK_SOR_AUTO 0.0

/* The papers' defaults for a method. */
LK_API lk_solver_config lk_default_config(lk_method method);

/* Parses "name[:key=value,...]" (for example "psor:w=1.3", "amgs:alpha=0.2,omega=E", "pgs:order=gsp")
 * into a configuration. On error returns LK_ERR_PARSE and writes a one-line message into err. */
LK_API lk_status lk_config_parse(const char *spec, lk_solver_config *out, char *err, size_t err_size);
/* 1 if `spec` is a valid spec that names `key` explicitly ("iters" in "pgs:iters=5"), else 0: for adapters
 * that fill what a spec leaves open from their engine's settings. */
LK_API int lk_config_spec_sets(const char *spec, const char *key);
/* Writes into out the spec with key=value added, unless the spec names key already (then the spec as it is):
 * how a tool's option ("--threads 2", LCPKIT_THREADS) reaches every spec without overriding one that chose.
 * LK_ERR_PARSE if spec is no valid spec or the result is not, LK_ERR_LIMIT if out is too small. */
LK_API lk_status lk_config_spec_with(const char *spec, const char *key, const char *value, char *out, size_t size);
/* The adapters' one rule for an engine's iteration setting (ODE's quickstep iterations, Bullet's
 * m_numIterations): unless the spec names its own limit (lk_config_spec_sets_limit: iters= or budget=, asked
 * once when the spec is set), the setting becomes the budget in sweep-equivalents (at least 1) and the
 * method-native iteration limit is lifted so that the budget binds, whatever the method
 * (lk_config_set_engine_budget, every step: no parsing). */
LK_API int lk_config_spec_sets_limit(const char *spec);
LK_API void lk_config_set_engine_budget(lk_solver_config *cfg, int iterations);
/* Writes the canonical spec of a configuration (method and the parameters that differ from defaults). */
LK_API lk_status lk_config_format(const lk_solver_config *cfg, char *buf, size_t size);
/* Short names: "pgs", "psor", "amgs", "amgs-dense", "amsor", "pgs-sm", "newton-minmap", "newton-fischer",
 * "nncg", "apgd", "mprgp". */
LK_API const char *lk_method_name(lk_method method);
LK_API const char *lk_order_name(lk_order order);
/* 1 if a solve with this configuration reads the rows' contact points (lk_row_def.point): the coordinate
 * orders sort by them. Adapters for which a point costs something (a cache miss in Bullet's manifolds) may
 * leave the points 0, "unknown", when this is 0 and nothing else (a recording) reads them. 0 for NULL. */
LK_API int lk_config_reads_points(const lk_solver_config *cfg);
/* Checks a configuration's values; on error writes a message into err. */
LK_API lk_status lk_config_validate(const lk_solver_config *cfg, char *err, size_t err_size);

typedef enum lk_stop_reason {
	LK_STOP_NONE = 0,         /* not solved */
	LK_STOP_ABSOLUTE,         /* merit below tol_abs */
	LK_STOP_RELATIVE,         /* merit changed less than tol_rel */
	LK_STOP_STAGNATION,       /* lambda changed less than tol_stag */
	LK_STOP_ITERATIONS,       /* iteration limit */
	LK_STOP_ACTIVE_SET,       /* PGS-SM: active set unchanged (Silcowitz et al. eq. 26) */
	LK_STOP_LOCAL_MINIMUM,    /* Newton: merit gradient vanished above tolerance */
	LK_STOP_NON_DESCENT,      /* Newton: no descent direction could be found */
	LK_STOP_NONFINITE,        /* guard: a non-finite value appeared; the best finite iterate is returned */
	LK_STOP_DIVERGED,         /* guard: the merit grew 1e8-fold or (Newton) the iterate ran off; best iterate returned */
	LK_STOP_BAD_DIAGONAL,     /* guard: a row has a zero or negative diagonal and cannot be solved */
	LK_STOP_BUDGET,           /* the work budget or the time budget is spent */
	LK_STOP_COUNT
} lk_stop_reason;

LK_API const char *lk_stop_reason_name(lk_stop_reason reason);

typedef struct lk_history_entry {
	int iteration;
	double res;
	double theta;
	double fischer;
	double seconds;         /* since the start of the solve */
	int64_t row_updates;    /* cumulative */
} lk_history_entry;

/* Optional per-iteration history; the caller owns entries[capacity]. Entry 0 is the start. */
typedef struct lk_history {
	lk_history_entry *entries;
	int capacity;
	int count;              /* written by lk_solve */
} lk_history;

typedef struct lk_stats {
	lk_method method;
	int rows;
	int bodies;
	int iterations;
	int64_t row_updates;
	double work;            /* sweep-equivalents spent, the unit of the budget: row updates weighted by their
	                         * measured cost (docs/solvers.md, "Work"), divided by rows */
	int inner_iterations;   /* Krylov / CG iterations (Newton, PGS-SM); set sweeps (ESP, GSP) */
	int subspace_steps;     /* PGS-SM */
	lk_stop_reason stop_reason;
	double res_initial, res_final;
	double theta_initial, theta_final;
	double fischer_final;
	double modified_final;
	double fc3d_final;      /* Siconos's relative error of the result (lk_metrics.fc3d) */
	double seconds;         /* time of the solve proper (no validation, no metrics), on the statistics clock
	                         * (lk_set_stats_clock; wall time by default) */
	int used_best_iterate;  /* 1 if the returned lambda is an earlier, better iterate */
} lk_stats;

/* Solves the problem with the configured method. lambda (warm start) in, solution out; for the row form
 * du is updated to match. On an invalid problem or configuration returns an error with a message in
 * lk_problem_error(p) and leaves lambda untouched. stats and history may be NULL; without either the solve
 * reads no statistics clock (nor any clock without a time limit, time_us). */
LK_API lk_status lk_solve(lk_problem *p, const lk_solver_config *cfg, lk_stats *stats, lk_history *history);

/* The clock of every timing statistic: lk_stats.seconds, lk_history's seconds and the adapters'
 * lk_engine_step_stats (*_seconds). LK_CLOCK_WALL (the default, CLOCK_MONOTONIC) is what a user waits;
 * LK_CLOCK_THREAD_CPU (CLOCK_THREAD_CPUTIME_ID) is the CPU time of the thread that reads it, which a shared
 * machine's preemptions do not move: the benchmarks use it. The thread's time leaves out the work of
 * lcpkit's other threads (threads > 1). A time budget (time_budget_us) always runs on the wall clock. The
 * setting is process-wide and may be changed at any time; a reading costs a system call on the CPU clock
 * (tens of nanoseconds on the wall clock). LK_ERR_INVALID_ARGUMENT for an unknown clock. */
typedef enum lk_clock {
	LK_CLOCK_WALL,
	LK_CLOCK_THREAD_CPU,
} lk_clock;
LK_API lk_status lk_set_stats_clock(lk_clock clock);
LK_API lk_clock lk_stats_clock(void);
/* The statistics clock's reading in seconds (differences are meaningful, not the value). */
LK_API double lk_stats_now(void);

/* An application's task scheduler for the parallel sweeps (threads = N > 1, docs/solvers.md "Threads"), in
 * place of the problem's own threads: an engine that already runs a scheduler (Bullet's btITaskScheduler,
 * a TBB or OpenMP loop) lends it, so that lcpkit's sweeps do not compete with its threads for the cores.
 * run(context, tasks, task, arg) must call task(arg, i) exactly once for every i in [0, tasks), on any
 * threads, in any order, concurrently or not, and return when every call has returned. A sweep of the part
 * or colour order asks for N tasks a colour (the N parts, or N shares of a colour's rows); the tasks of
 * one call touch disjoint bodies, so the result is the same bit for bit as on lcpkit's own threads. */
typedef void (*lk_task_fn)(void *arg, int index);
typedef struct lk_executor {
	void (*run)(void *context, int tasks, lk_task_fn task, void *arg);
	void *context;
} lk_executor;
/* Lends a scheduler to the problem's solves (copied; NULL: the problem's own threads again).
 * LK_ERR_INVALID_ARGUMENT for a NULL problem or a NULL run. */
LK_API lk_status lk_problem_set_executor(lk_problem *p, const lk_executor *executor);

/* Runs task(arg, t) for t = 0 .. tasks - 1 on up to `threads` threads, the ones the problem's threaded solves
 * use (its own, made and kept as for a solve, or the scheduler lent to it), and returns when every task has
 * returned: for an adapter's own work before a solve, reading an engine's rows, say, on the solve's
 * threads. The tasks may run in any order, at once or not: none may wait for another. threads 1 runs them
 * on the caller. LK_ERR_INVALID_ARGUMENT for a NULL problem or task, a negative count, threads outside
 * 1..64. */
LK_API lk_status lk_problem_run_tasks(lk_problem *p, int threads, int tasks, lk_task_fn task, void *arg);

/* A problem's row records and velocity slots, where they take 2 MiB or more, are allocated 2 MiB-aligned and
 * marked for huge pages (madvise MADV_HUGEPAGE; the system uses them where transparent huge pages are on, as
 * "always" or "madvise"): a sweep streams the records, and with 4 KiB pages every 16 records cost an address
 * translation and the hardware prefetcher stops at each page's end (docs/benchmarks.md, "kernel"). On (1)
 * by default; 0 for 4 KiB pages, for comparisons. Process-wide; read when a problem's storage grows. */
LK_API void lk_set_huge_pages(int on);
LK_API int lk_huge_pages(void);

#ifdef __cplusplus
}
#endif

#endif

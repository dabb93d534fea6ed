/*
 * lcpkit for Bullet: a C API over Bullet 3 (double precision) whose constraint solver can be Bullet's own or
 * any lcpkit method.
 *
 * A world owns everything created in it. Bodies and joints are named by integer ids (>= 0) that are never
 * reused within their world, so a stale id is detected. Every function checks its arguments and returns an
 * lk_status; the message of the last failure, "lk_bt_function: reason", is kept by the world
 * (lk_bt_world_error). No C++ exception and no abort can escape through this API.
 *
 * Handles: an lk_bt_world * is an opaque handle, not an address: a slot index and a generation, looked up in
 * a registry of live worlds (under a mutex) before anything is touched. A handle of a destroyed world stays
 * invalid when its slot is reused (the generation differs), so every call with it, a second
 * lk_bt_world_destroy included, fails with LK_ERR_STATE ("... was destroyed") without reading freed memory;
 * a value that was never a handle fails with LK_ERR_INVALID_ARGUMENT, and so does NULL (except for
 * lk_bt_world_destroy, where NULL is a no-op). The message of such a failure has no world to live in: it is
 * kept per thread and returned by lk_bt_world_error(handle). Checking a handle is thread-safe; using one
 * world from two threads at once, or destroying it while another thread is in a call on it, is not.
 * lk_bt_world_is_valid, lk_bt_body_is_valid and lk_bt_joint_is_valid ask without failing.
 *
 * Units: SI (m, kg, s, rad); impulses in N s. Vectors are double[3] in the world frame unless stated;
 * rotations are unit quaternions double[4] = (x, y, z, w).
 *
 * The C++ solver adapter, for existing Bullet programs, is in lcpkit/bullet_solver.hpp.
 */
#ifndef LCPKIT_BULLET_H
#define LCPKIT_BULLET_H

#include "lcpkit/engine.h"
#include "lcpkit/lcpkit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lk_bt_world lk_bt_world;

/* The id meaning "the static world" where a joint takes a body (body_b of a joint). */
#define LK_BT_WORLD (-1)

/* ------------------------------------------------------------------ world */

typedef struct lk_bt_world_def {
	double gravity[3];          /* m/s^2; default (0, 0, -9.81) */
	double fixed_time_step;     /* s, > 0; default 1/60 */
	int max_sub_steps;          /* >= 1: lk_bt_world_advance takes at most this many fixed steps; default 1 */
	const char *solver;         /* solver spec (lk_bt_world_set_solver); NULL = "auto" */
	int iterations;             /* solver iterations (lk_bt_world_set_iterations); default 10 */
	double erp;                 /* joint error reduction per step, [0, 1]; default 0.2 (Bullet's) */
	double contact_erp;         /* contact error reduction per step, [0, 1]; default 0.2 (Bullet's) */
	double cfm;                 /* global constraint force mixing (Bullet's m_globalCfm), >= 0; default 0 */
	int split_impulse;          /* 1: Bullet's split-impulse position correction for deep contacts; default 1 */
	int warm_start;             /* 1: contacts start from 0.85 of last step's impulse (Bullet's); default 1 */
	int friction_directions;    /* friction rows per contact point, 1 or 2; default 2. Bullet's own default,
	                             * 1 (along the sliding direction), leaves resting bodies free to creep sideways */
	double linear_slop;         /* m, >= 0: the penetration a contact keeps without being pushed out (Bullet's
	                             * m_linearSlop; ODE's contact surface layer); default 0 (Bullet's) */
	int plane_multipoint;       /* 1: a convex body on a static plane gets its face's contact points in one step
	                             * (btDefaultCollisionConfiguration::setPlaneConvexMultipointIterations);
	                             * 0: one point a step, from the deepest, Bullet's default; default 0 */
	int multibody;              /* 1: a btMultiBodyDynamicsWorld, its rigid bodies solved on the multibody
	                             * solvers' path (lk::BulletMultiBodySolver for an lcpkit spec, Bullet's
	                             * btMultiBodyConstraintSolver for "bullet-si", its only own solver here), as a
	                             * program that also has btMultiBodies steps them; 0: a btDiscreteDynamicsWorld;
	                             * default 0 */
} lk_bt_world_def;

/* Bullet's defaults, gravity along -z. */
LK_API lk_bt_world_def lk_bt_default_world_def(void);

/* Creates a world. On failure *out is NULL and err (if not NULL) receives a one-line message. */
LK_API lk_status lk_bt_world_create(const lk_bt_world_def *def, lk_bt_world **out, char *err, size_t err_size);
/* Destroys the world and everything in it. NULL is ignored (LK_OK); a destroyed world's handle is
 * LK_ERR_STATE and a value that never was a handle LK_ERR_INVALID_ARGUMENT, both with a message. */
LK_API lk_status lk_bt_world_destroy(lk_bt_world *w);
/* 1 if w is the handle of a live world. */
LK_API int lk_bt_world_is_valid(const lk_bt_world *w);
/* The message of the last failed call on w ("" if none), owned by w; for NULL, a destroyed world or another
 * invalid handle, why this thread's last call with an invalid handle was refused (valid until the thread's
 * next such call). */
LK_API const char *lk_bt_world_error(const lk_bt_world *w);

/*
 * Chooses the constraint solver by spec string:
 *   "bullet-si"       Bullet's sequential impulse solver (its PGS), with the world's iterations
 *   "bullet-nncg"     Bullet's nonsmooth nonlinear conjugate gradient solver
 *   "bullet-dantzig"  Bullet's MLCP solver with the Dantzig pivoting method
 *   "bullet-lemke"    Bullet's MLCP solver with Lemke's method
 *   "bullet-pgs"      Bullet's MLCP solver with its dense projected Gauss-Seidel
 *   anything else     an lcpkit spec for lk_config_parse ("pgs", "amgs:alpha=0.3", ...) run through the
 *                     adapter; its iteration limit is the world's unless the spec sets iters=
 * An lcpkit method this build does not provide is refused with LK_ERR_UNSUPPORTED.
 */
LK_API lk_status lk_bt_world_set_solver(lk_bt_world *w, const char *spec);
/* The current spec (owned by w). */
LK_API const char *lk_bt_world_solver(const lk_bt_world *w);
/* Iterations of every solver (Bullet's m_numIterations and lcpkit's limit), >= 1. */
LK_API lk_status lk_bt_world_set_iterations(lk_bt_world *w, int iterations);
LK_API lk_status lk_bt_world_set_gravity(lk_bt_world *w, const double gravity[3]);
/* 1 (default): Bullet's own solvers report RES before and after in the step statistics, at the cost of
 * extracting their rows; 0: they report counts and times only (for timing runs). */
LK_API lk_status lk_bt_world_set_residuals(lk_bt_world *w, int on);

/*
 * Advances exactly one fixed time step. stats (may be NULL) receives the step's statistics: rows and bodies
 * summed over Bullet's islands, iterations the largest, RES combined over islands (sqrt of the sum of
 * squares; NaN when rows could not be extracted), times in seconds.
 */
LK_API lk_status lk_bt_world_step(lk_bt_world *w, lk_engine_step_stats *stats);
/* Advances by dt seconds of real time in fixed steps (at most max_sub_steps; Bullet keeps the remainder).
 * steps_out (may be NULL) receives the number of fixed steps taken; stats sums them like lk_bt_world_step. */
LK_API lk_status lk_bt_world_advance(lk_bt_world *w, double dt, int *steps_out, lk_engine_step_stats *stats);
/* Simulated time (s): fixed steps taken times the fixed time step. */
LK_API double lk_bt_world_time(const lk_bt_world *w);
/* Fallbacks since creation: steps or islands where an lcpkit solve failed a guard (non-finite, diverged,
 * bad diagonal) or returned an error and Bullet's own iterations produced the impulses. */
LK_API int64_t lk_bt_world_fallbacks(const lk_bt_world *w);
/* Why the last fallback happened ("" if never). Owned by w. */
LK_API const char *lk_bt_world_fallback_reason(const lk_bt_world *w);

/* Contact manifolds with at least one point, and contact points, after the last step. Either may be NULL. */
LK_API lk_status lk_bt_world_contact_count(const lk_bt_world *w, int *manifolds, int *points);
/* The deepest penetration (m, >= 0) over all contact points after the last step; 0 without contacts. */
LK_API lk_status lk_bt_world_max_penetration(const lk_bt_world *w, double *depth);
/* Bodies and joints alive. */
LK_API int lk_bt_world_body_count(const lk_bt_world *w);
LK_API int lk_bt_world_joint_count(const lk_bt_world *w);

/*
 * Recording, for regression tests and for checking the row mapping: while on, every solve of a step is
 * captured. lk_bt_world_recorded_problem returns a new problem (the caller destroys it) holding the last
 * step's rows from all islands, in the adapter's order (joint rows, contact normals, friction, rolling
 * friction per island), with lambda = the warm start the solver started from; lk_bt_world_recorded_solution
 * copies the impulses the solver produced for those rows (n = the problem's row count).
 */
LK_API lk_status lk_bt_world_set_recording(lk_bt_world *w, int on);
LK_API lk_status lk_bt_world_recorded_problem(lk_bt_world *w, lk_problem **out);
LK_API lk_status lk_bt_world_recorded_solution(const lk_bt_world *w, double *lambda, int n);

/* ------------------------------------------------------------------ bodies */

typedef enum lk_bt_shape_type {
	LK_BT_SHAPE_BOX = 0,   /* half_extents */
	LK_BT_SHAPE_SPHERE,    /* radius */
	LK_BT_SHAPE_CAPSULE,   /* radius, half_height of the cylindrical part, along axis */
	LK_BT_SHAPE_CYLINDER,  /* radius, half_height, along axis */
	LK_BT_SHAPE_PLANE,     /* static only: points x with normal . x = offset; the body's pose is ignored */
	LK_BT_SHAPE_COUNT
} lk_bt_shape_type;

typedef struct lk_bt_shape {
	lk_bt_shape_type type;
	double half_extents[3];  /* box, m */
	double radius;           /* sphere, capsule, cylinder, m */
	double half_height;      /* capsule (cylindrical part only), cylinder, m */
	int axis;                /* capsule, cylinder: 0 = x, 1 = y, 2 = z (local frame) */
	double normal[3];        /* plane: unit normal (normalised if not) */
	double offset;           /* plane: distance from the origin along normal, m */
} lk_bt_shape;

LK_API lk_bt_shape lk_bt_shape_box(double hx, double hy, double hz);
LK_API lk_bt_shape lk_bt_shape_sphere(double radius);
LK_API lk_bt_shape lk_bt_shape_capsule(double radius, double half_height, int axis);
LK_API lk_bt_shape lk_bt_shape_cylinder(double radius, double half_height, int axis);
LK_API lk_bt_shape lk_bt_shape_plane(double nx, double ny, double nz, double offset);

/*
 * Admissible masses and sizes of dynamic bodies, refused with LK_ERR_MASS outside. Bullet and every solver
 * work with 1/m and 1/I: over [1e-6, 1e9] kg two bodies' inverse masses differ by at most 1e15, still
 * resolved in double precision when a row sums them (a body of 1e-300 kg would get an inverse mass of 1e300,
 * and a solver's impulse of rounding size throws it kilometres). The inertia follows from the shape; it must
 * give a radius of gyration sqrt(I_k / m) about each principal axis in [1e-4, 1e4] m, so that the angular
 * part of a row is of the order of its linear part for lever arms of the body's size (a thinner or larger
 * shape is also beyond what Bullet's collision detection, with its 4 cm margin, represents).
 */
#define LK_BT_MASS_MIN 1e-6
#define LK_BT_MASS_MAX 1e9
#define LK_BT_GYRATION_MIN 1e-4
#define LK_BT_GYRATION_MAX 1e4

typedef struct lk_bt_body_def {
	lk_bt_shape shape;
	double mass;                  /* kg; 0 = static, else in [LK_BT_MASS_MIN, LK_BT_MASS_MAX]; the inertia
	                               * follows from the shape (radius of gyration in [LK_BT_GYRATION_MIN,
	                               * LK_BT_GYRATION_MAX] m) */
	double position[3];           /* of the centre of mass, m */
	double rotation[4];           /* (x, y, z, w), normalised if not unit; default identity */
	double linear_velocity[3];
	double angular_velocity[3];
	double friction;              /* Coulomb coefficient, >= 0; default 0.5 (Bullet's) */
	double rolling_friction;      /* >= 0 (m); default 0 */
	double spinning_friction;     /* >= 0 (m); default 0 */
	double restitution;           /* [0, 1]; default 0 */
	double linear_damping;        /* [0, 1]; default 0 */
	double angular_damping;       /* [0, 1]; default 0 */
	double linear_factor[3];      /* per world axis, 0 locks it (2D scenes); default 1 */
	double angular_factor[3];     /* per world axis; default 1 */
	int allow_sleep;              /* 1: Bullet may deactivate the body at rest; default 0 */
} lk_bt_body_def;

/* A unit box of mass 1 at the origin with Bullet's material defaults. */
LK_API lk_bt_body_def lk_bt_default_body_def(void);

/* Adds a body; *id_out receives its id. A plane must have mass 0. */
LK_API lk_status lk_bt_body_create(lk_bt_world *w, const lk_bt_body_def *def, int *id_out);
LK_API lk_status lk_bt_body_destroy(lk_bt_world *w, int body);
/* 1 if w is a live world and body a live body in it. */
LK_API int lk_bt_body_is_valid(const lk_bt_world *w, int body);

LK_API lk_status lk_bt_body_get_transform(const lk_bt_world *w, int body, double position[3], double rotation[4]);
LK_API lk_status lk_bt_body_get_velocity(const lk_bt_world *w, int body, double linear[3], double angular[3]);
/* Mass (0 for static) and the principal moments of inertia computed from the shape; either may be NULL. */
LK_API lk_status lk_bt_body_get_mass(const lk_bt_world *w, int body, double *mass, double inertia[3]);
/* Contact points touching the body after the last step. */
LK_API lk_status lk_bt_body_contact_count(const lk_bt_world *w, int body, int *points);

LK_API lk_status lk_bt_body_set_transform(lk_bt_world *w, int body, const double position[3],
                                          const double rotation[4]);
LK_API lk_status lk_bt_body_set_velocity(lk_bt_world *w, int body, const double linear[3],
                                         const double angular[3]);
LK_API lk_status lk_bt_body_set_friction(lk_bt_world *w, int body, double friction);
LK_API lk_status lk_bt_body_set_rolling_friction(lk_bt_world *w, int body, double rolling, double spinning);
LK_API lk_status lk_bt_body_set_restitution(lk_bt_world *w, int body, double restitution);
LK_API lk_status lk_bt_body_set_damping(lk_bt_world *w, int body, double linear, double angular);
LK_API lk_status lk_bt_body_set_factors(lk_bt_world *w, int body, const double linear[3], const double angular[3]);
/* An impulse (N s) at a world point (NULL: the centre of mass). */
LK_API lk_status lk_bt_body_apply_impulse(lk_bt_world *w, int body, const double impulse[3], const double point[3]);

/* ------------------------------------------------------------------ joints */

typedef enum lk_bt_joint_type {
	LK_BT_JOINT_POINT = 0,   /* ball joint at anchor */
	LK_BT_JOINT_HINGE,       /* rotation about axis through anchor; limits and motor in rad, rad/s */
	LK_BT_JOINT_SLIDER,      /* translation along axis (rotation locked); limits and motor in m, m/s */
	LK_BT_JOINT_FIXED,       /* welds the bodies in their current relative pose */
	LK_BT_JOINT_CONE_TWIST,  /* ball joint with a swing cone about axis and a twist limit */
	LK_BT_JOINT_SPRING6,     /* generic 6-DoF joint (frame x = axis) with per-axis limits and springs */
	LK_BT_JOINT_COUNT
} lk_bt_joint_type;

typedef struct lk_bt_joint_def {
	lk_bt_joint_type type;
	int body_a;                /* a body (not LK_BT_WORLD); at least one of the two must be dynamic */
	int body_b;                /* another body, or LK_BT_WORLD: attached to the static world */
	double anchor[3];          /* world point, in the current pose of the bodies */
	double axis[3];            /* world direction (normalised if not); default (1, 0, 0) */
	int collide_connected;     /* 1: the two bodies still collide; default 0 */
	double breaking_impulse;   /* the joint breaks above this impulse per step; default INFINITY */
	/* hinge, slider: limits active when lower <= upper (default lower 1, upper -1: free) */
	double lower, upper;
	/* hinge, slider: motor */
	int motor;
	double motor_velocity;     /* rad/s or m/s */
	double motor_max_force;    /* N m or N, >= 0 */
	/* cone-twist: half angles (rad) of the swing cone about the two axes normal to axis, and of the twist */
	double swing_span1, swing_span2, twist_span;
	/* 6-DoF: per frame axis, lower > upper frees it, lower == upper locks it (default: all locked) */
	double linear_lower[3], linear_upper[3];
	double angular_lower[3], angular_upper[3];
	/* 6-DoF springs: stiffness (N/m, N m/rad) > 0 enables the spring of that DoF (linear x, y, z, then
	 * angular x, y, z), with damping (N s/m, N m s/rad); the rest position is the pose at creation */
	double stiffness[6], damping[6];
} lk_bt_joint_def;

LK_API lk_bt_joint_def lk_bt_default_joint_def(lk_bt_joint_type type);
LK_API lk_status lk_bt_joint_create(lk_bt_world *w, const lk_bt_joint_def *def, int *id_out);
LK_API lk_status lk_bt_joint_destroy(lk_bt_world *w, int joint);
/* 1 if w is a live world and joint a live joint in it (0 once destroyed, with its body, or with the world). */
LK_API int lk_bt_joint_is_valid(const lk_bt_world *w, int joint);
/* Hinge and slider only. lower > upper removes the limit. */
LK_API lk_status lk_bt_joint_set_limits(lk_bt_world *w, int joint, double lower, double upper);
LK_API lk_status lk_bt_joint_set_motor(lk_bt_world *w, int joint, int enabled, double velocity, double max_force);
/* Hinge angle (rad) or slider position (m). */
LK_API lk_status lk_bt_joint_get_position(const lk_bt_world *w, int joint, double *value);
/* 0 once the joint broke (breaking_impulse exceeded). */
LK_API lk_status lk_bt_joint_is_enabled(const lk_bt_world *w, int joint, int *enabled);

#ifdef __cplusplus
}
#endif

#endif

/*
 * lcpkit for ODE: ODE's own constraint rows solved by lcpkit's solvers.
 *
 * One line changes in an ODE program:
 *
 *     dWorldQuickStep(world, dt);          becomes          lk_ode_world_step(ctx, dt);
 *
 * with a context made once per world (lk_ode_create) that knows where the bodies are (lk_ode_add_space for
 * every collision space, or lk_ode_add_body). Each step the context walks the joint graph from those bodies,
 * asks every enabled joint for its rows with ODE's own row generator (the dxJoint<Type>::getInfo1/getInfo2
 * that ODE's steppers call), solves them with the configured solver, applies the impulses as constraint
 * forces and lets ODE integrate (so damping, auto-disable, finite rotation, maximum angular speed keep
 * working), and fills every dJointFeedback the application attached. ODE's own steppers stay selectable
 * ("ode-quickstep", "ode-step") for A/B comparisons with the same statistics.
 *
 * Needs libode 0.16 in double precision (Debian's libode8). lk_ode_create checks it and fails with a message
 * naming what is missing; it never falls back silently. Units: SI; impulses N s; dt in s.
 * Not thread-safe per context; two contexts on two worlds may step in two threads.
 *
 * Errors: every function that takes a context and returns lk_status returns LK_ERR_INVALID_ARGUMENT for a
 * NULL context (lk_ode_error(NULL) says that much); for any other invalid argument it also leaves in
 * lk_ode_error a message naming the function and the argument (except lk_ode_get_stats and
 * lk_ode_get_timing, whose context is const), and changes nothing. A failed step says why there too.
 */
#ifndef LCPKIT_ODE_H
#define LCPKIT_ODE_H

#include "lcpkit/engine.h"

#include <ode/common.h>
#include <ode/threading.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lk_ode lk_ode;

/* Who solves the constraint rows of a step. */
typedef enum lk_ode_stepper {
	LK_ODE_LCPKIT = 0,  /* an lcpkit solver on the rows ODE's joints produce */
	LK_ODE_QUICKSTEP,   /* ODE's dWorldQuickStep, unchanged ("ode-quickstep") */
	LK_ODE_STEP         /* ODE's dWorldStep, unchanged ("ode-step") */
} lk_ode_stepper;

typedef struct lk_ode_def {
	/* "auto", "ode-quickstep", "ode-step", or another lcpkit spec such as "pgs", "psor:w=1.3".
	 * NULL means "auto". When an lcpkit spec sets no "iters" or "budget", the world's quickstep iteration
	 * count (dWorldGetQuickStepNumIterations) is its work budget, so an application's setting carries over
	 * (auto spends it as a mean over the steps). Each step starts from the previous step's impulses (warm
	 * start: joints by handle, contacts by body pair, point and normal) under auto, and from zero, as ODE's
	 * quickstep does, under the other specs unless they say "warm=1". */
	const char *solver;
	double warm_distance;    /* two steps' contacts of one body pair match within this distance (m) */
	double warm_normal_cos;  /* ... and when the cosine of the angle between their normals is at least this */
	double warm_factor;      /* the share of the previous step's impulses a warm start begins with, in [0, 1]
	                          * (0.85, the default of Bullet's m_warmstartingFactor: docs/ode.md) */
	int ode_residual;        /* 1: RES in every step's statistics (0, the default: NaN). ODE's steppers: extract
	                          * the rows too and report RES of ODE's impulses on them (a read that changes
	                          * nothing: the trajectory stays ODE's bit for bit). lcpkit: RES of the solve's
	                          * start and result, measured around the solve and off its clock (the solve
	                          * itself measures nothing unless the spec sets measure=: the same impulses) */
	int quiet;               /* 1: say nothing on stderr. Otherwise each kind of note (a fallback to ODE's
	                          * stepper, rows left out, a body frozen) is said once, "lcpkit: ...", unless
	                          * LCPKIT_QUIET=1; lk_ode_note and the statistics have them either way */
	int whole_world;         /* 1: the registered spaces and bodies hold every body of the world that can move
	                          * (the preload library registers every body it sees created). A step then
	                          * integrates the gathered bodies itself and does not also run ODE's stepper over
	                          * the rest of the world, which costs a pass over the gathered bodies and an empty
	                          * ODE step when there is no rest. A body outside them would then not move.
	                          * 0 (the default): ODE's stepper also steps the rest of the world every step */
	int sink_to_layer;       /* contacts shallower than half the world's surface layer
	                          * (dWorldSetContactSurfaceLayer) may sink to that depth at their error-reduction
	                          * rate: -1 (the default) under auto, 1 under every lcpkit spec, 0 never (ODE's rows
	                          * as they are). ODE's contact asks for nothing while it is shallower than the
	                          * layer, and an exact solve leaves a contact made at rest at depth 0, where ODE's
	                          * colliders make and drop it from step to step; quickstep sinks into the layer by
	                          * its error (docs/ode.md, "The surface layer") */
} lk_ode_def;

/* Defaults: solver "auto", warm_distance 0.01 m, warm_normal_cos 0.95, warm_factor 0.85, ode_residual 0, quiet 0,
 * whole_world 0, sink_to_layer -1. */
LK_API lk_ode_def lk_ode_default_def(void);

/* Checks the loaded libode: double precision, and every symbol the plugin calls resolves (the 0.16 row
 * generators and object sizes of all 17 joint types, dWorldQuickStep, dWorldStep, and the members of ODE's
 * world processing context the row generators need). On failure writes which one into err. */
LK_API lk_status lk_ode_check(char *err, size_t err_size);

/* Makes a context for one world; def may be NULL (defaults). On failure *out is NULL and err says why. */
LK_API lk_status lk_ode_create(dWorldID world, const lk_ode_def *def, lk_ode **out, char *err, size_t err_size);
/* Restores anything the context changed in ODE (nothing outlives a step) and frees it. NULL is ignored. */
LK_API void lk_ode_destroy(lk_ode *ctx);
/* The message of the last failed call on ctx ("" after a step that returned LK_OK). Owned by ctx; every step
 * starts it afresh. */
LK_API const char *lk_ode_error(const lk_ode *ctx);
/* What the last step (or lk_ode_extract) did other than asked, "" when nothing: why it fell back to ODE's
 * stepper, the rows it left out, the bodies it froze, each with the first example. Owned by ctx; every step
 * starts it afresh. */
LK_API const char *lk_ode_note(const lk_ode *ctx);

/* Selects the solver by spec (see lk_ode_def.solver); on a bad spec nothing changes. */
LK_API lk_status lk_ode_set_solver(lk_ode *ctx, const char *spec);
/* Selects an lcpkit solver by configuration (copied; its max_iterations is used as given). */
LK_API lk_status lk_ode_set_config(lk_ode *ctx, const lk_solver_config *cfg);
LK_API lk_ode_stepper lk_ode_get_stepper(const lk_ode *ctx);
/* Which of ODE's steppers makes a step that lcpkit's solver cannot (see lk_ode_world_step): LK_ODE_QUICKSTEP
 * (the default) or LK_ODE_STEP, for a program written for dWorldStep. */
LK_API lk_status lk_ode_set_fallback(lk_ode *ctx, lk_ode_stepper stepper);
/* Switches lk_ode_def.ode_residual (RES of every step, at the cost of an extraction per step with ODE's own
 * steppers and of two residual evaluations with lcpkit's). */
LK_API lk_status lk_ode_set_ode_residual(lk_ode *ctx, int on);
/* The lcpkit configuration in use (meaningful for LK_ODE_LCPKIT). Under auto with w (and jw) left open, a step
 * sets the sweeps' relaxation from the world's quickstep w where it applies (sor_w on a pile of articulated
 * bodies, adapt.joint_w on the joints' bilateral rows, on a step where no contact recovers: docs/solvers.md,
 * "auto"); the configuration returned here leaves them as the spec does. */
LK_API lk_solver_config lk_ode_get_config(const lk_ode *ctx);

/* Where the bodies are: every body of a registered space (and of the spaces inside it) and every registered
 * body is a starting point of the walk over the joint graph. Registering twice, or removing what is not
 * registered, is harmless; NULL, a geom that is not a space, or a body of another world is
 * LK_ERR_INVALID_ARGUMENT. */
LK_API lk_status lk_ode_add_space(lk_ode *ctx, dSpaceID space);
LK_API lk_status lk_ode_remove_space(lk_ode *ctx, dSpaceID space);
LK_API lk_status lk_ode_add_body(lk_ode *ctx, dBodyID body);
LK_API lk_status lk_ode_remove_body(lk_ode *ctx, dBodyID body);

/* Steps the world by dt with the selected solver; replaces dWorldQuickStep(world, dt).
 * LK_OK: the world was stepped. If the rows could not be turned into a problem, or the lcpkit solve failed or
 * tripped a guard (non-finite, diverged, bad diagonal), ODE's stepper (dWorldQuickStep unless
 * lk_ode_set_fallback says otherwise) produced this step instead: still LK_OK, the stats say fallback = 1 and
 * lk_ode_note says why. A row that cannot be solved (its J not finite or zero, as ODE's convex collider's
 * contacts with a zero normal have it) is left out, and the rest is solved (stats rows_left_out); a body whose
 * state is not finite (position, orientation, velocities, force, mass) is frozen: left where it is, out of
 * the step with its joints, until the application repairs it (stats bodies_frozen). Each is in lk_ode_note
 * and said once on stderr (lk_ode_def.quiet). Nothing non-finite is ever written into ODE.
 * Not stepped: LK_ERR_INVALID_ARGUMENT; LK_ERR_NONFINITE for a world setting that makes every body's state
 * non-finite (gravity); LK_ERR_NO_MEMORY when ODE's own stepper failed (it returns 0 when it cannot allocate
 * its working memory). */
LK_API lk_status lk_ode_world_step(lk_ode *ctx, double dt);

/* Lends one of ODE's threading implementations to the solver's sweeps: the two arguments of
 * dWorldSetStepThreadingImplementation (typically dThreadingImplementationGetFunctions(impl) and an impl that
 * a dThreadingThreadPool serves). A solver with threads=N > 1 then sweeps its colours as calls posted to it,
 * N a colour, instead of on lcpkit's own threads, which would compete with the pool's for the cores; the
 * result is the same bit for bit (docs/ode.md, "Threads"). It is used while the implementation reports more
 * than one thread. The implementation must outlive its use: set NULL, NULL (lcpkit's own threads again)
 * before freeing it, or destroy the context. LK_ERR_INVALID_ARGUMENT: only one of the two NULL, or
 * functions_info without the functions of threading.h. ODE's threads sleep between calls, so lending costs
 * a wake-up a colour: it keeps lcpkit within the program's threads, where lcpkit's own are faster. */
LK_API lk_status lk_ode_set_threading(lk_ode *ctx, const dThreadingFunctionsInfo *functions_info,
                                      dThreadingImplementationID impl);

/* Statistics of the last step (rows by kind, iterations, RES before and after, timings, fallbacks). */
LK_API lk_status lk_ode_get_stats(const lk_ode *ctx, lk_engine_step_stats *out);

/* Where the last step's time went, in seconds. */
typedef struct lk_ode_timing {
	double gather;      /* finding bodies and joints */
	double extract;     /* getInfo1/getInfo2 of every joint and the bodies' state */
	double build;       /* the lcpkit problem (and the warm start) */
	double solve;       /* lk_solve, or ODE's stepper for LK_ODE_QUICKSTEP / LK_ODE_STEP */
	double apply;       /* constraint forces, joint feedback, warm-start store */
	double integrate;   /* ODE's integration (dWorldQuickStep with the solved joints switched off) */
	double total;
} lk_ode_timing;
LK_API lk_status lk_ode_get_timing(const lk_ode *ctx, lk_ode_timing *out);

/* Fills p (row form, cleared first) with the rows a step of dt would solve now, without stepping and without
 * changing anything in ODE (the side effects of ODE's row generators are undone): bodies in walk order with
 * u* = u + h M^-1 (f + gravity, gyroscopic term); rows in the order of ODE's quickstep (joint by joint, ODE's
 * order within a joint, the rows without a friction index first and the friction rows after them); lambda =
 * the warm start. This is also the order lcpkit's solvers sweep. For tests and recording. */
LK_API lk_status lk_ode_extract(lk_ode *ctx, double dt, lk_problem *p);
/* After lk_ode_extract or a step: the ODE body of problem body i, and the joint and row-within-joint of
 * problem row r (NULL / -1 when out of range). Valid until the next extract or step. */
LK_API dBodyID lk_ode_problem_body(const lk_ode *ctx, int i);
LK_API dJointID lk_ode_problem_joint(const lk_ode *ctx, int r, int *row_in_joint);

#ifdef __cplusplus
}
#endif

#endif

/* A scene running in one engine with one solver: the engine-neutral face of the two adapters that
 * `lcpkit compare`, the benchmarks, the viewer and the tests share. */
#ifndef LCPKIT_SIM_H
#define LCPKIT_SIM_H

#include "lcpkit/engine.h"
#include "scene.h"

const char *lk_engine_name(lk_engine e);
/* The penetration a resting contact keeps without being pushed out, in every engine: ODE's contact surface
 * layer, Bullet's linear slop. Without it a face at rest hovers at zero depth, where a box-box test reports
 * corners on one step and not the next. Within it no solver pushes a contact out: where a body rests in it
 * is no measure of the solver (verdict.c). */
#define LK_SIM_CONTACT_LAYER 0.001

/* "ode" or "bullet" -> engine; -1 if unknown or not built. */
int lk_engine_from_name(const char *name);
/* 1 if the engine was built into this lcpkit. */
int lk_engine_available(lk_engine e);
/* The engine's default solver: its first own solver in lcpkit/engine.h's table ("ode-quickstep", ...), or
 * lcpkit's "pgs" for an engine without own solvers. The other own solvers: lk_engine_solvers(). */
const char *lk_engine_default_solver(lk_engine e);
/* Checks that a solver spec runs on an engine: one of its own solvers or an lcpkit spec. LK_OK, or
 * LK_ERR_PARSE with a message naming the valid choices. */
lk_status lk_sim_check_solver(lk_engine e, const char *solver, char *err, size_t err_size);

typedef struct lk_sim lk_sim;

typedef struct lk_sim_def {
	const lk_scene *scene;
	lk_engine engine;
	const char *solver;   /* an engine's own solver or an lcpkit spec (lk_config_parse) */
	int iterations;       /* iteration budget per step for every solver (0: the solver's default) */
	double h;             /* time step (0: the scene's) */
	int engine_threads;   /* ODE: N > 0 steps the world on a pool of N threads serving ODE's built-in threading
	                       * implementation, lent to lcpkit's threaded sweeps (lk_ode_set_threading), as a
	                       * threaded ODE program runs; 0: a self-threaded implementation, and lcpkit's own
	                       * threads for threads > 1. Bullet: unused. */
	int bullet_multibody; /* Bullet: 1 steps the scene in a btMultiBodyDynamicsWorld (lk_bt_world_def.multibody) */
} lk_sim_def;

lk_status lk_sim_create(const lk_sim_def *def, lk_sim **out, char *err, size_t err_size);
void lk_sim_destroy(lk_sim *s);
/* Advances one time step; stats may be NULL. */
lk_status lk_sim_step(lk_sim *s, lk_engine_step_stats *stats);
/* Current pose and velocity of scene body i (static bodies report their fixed pose). */
void lk_sim_pose(const lk_sim *s, int i, lk_pose *pose);
void lk_sim_velocity(const lk_sim *s, int i, double v[3], double w[3]);
/* The deepest penetration among the contacts of the last step, metres (0 if none). */
double lk_sim_max_penetration(const lk_sim *s);
/* Whether a step measures RES before and after the solve on its rows (on by default). With an engine's own
 * solver that means extracting the rows, which the step's times then include: a benchmark of the solver
 * phase switches it off. */
void lk_sim_set_residuals(lk_sim *s, int on);
/* The simulation is stepped in turn with others on one thread (lcpkit compare steps a scene's runs side by
 * side): from now on it keeps its own state of what the engines share between worlds (ODE's global random
 * generator, from which quickstep reorders its rows), so that it steps as it would alone. Worlds on threads of
 * their own must not: the state would be set under another world's step. */
void lk_sim_step_in_turn(lk_sim *s);
/* Asks the next step to keep a copy of the problem it solves (row form, lambda = its warm start). */
void lk_sim_capture_next(lk_sim *s);
/* The problem captured by the last step, or NULL; the caller destroys it. */
lk_problem *lk_sim_take_captured(lk_sim *s);
/* Total kinetic energy of the dynamic bodies. */
double lk_sim_kinetic_energy(const lk_sim *s);
const lk_scene *lk_sim_scene(const lk_sim *s);
/* Adds a dynamic box or sphere to the running scene (a viewer dropping one in); it becomes scene body
 * lk_sim_scene(s)->nbodies - 1. From the first call on, the sim runs on its own copy of the scene, so the
 * caller's scene is untouched; pointers into lk_sim_scene(s)->bodies do not survive the call.
 * LK_ERR_INVALID_ARGUMENT for a static body, a plane or non-finite values; LK_ERR_UNSUPPORTED if the engine
 * cannot add bodies. */
lk_status lk_sim_add_body(lk_sim *s, const lk_scene_body *body);
/* How far scene joint j has come apart, metres: the distance between the points of its two bodies that
 * held the joint's anchor when the sim was created (the world anchor itself for a joint to the world).
 * Ball and hinge joints hold it exactly, so this is the solver's position error. */
double lk_sim_joint_error(const lk_sim *s, int j);
/* The Coulomb coefficient the engine applies at contacts between scene bodies a and b (each engine combines
 * the two bodies' coefficients its own way). */
double lk_sim_pair_friction(const lk_sim *s, int a, int b);

#endif

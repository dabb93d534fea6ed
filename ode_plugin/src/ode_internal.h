/* lcpkit ODE plugin internals: ODE's row generators reached through dlsym, the context and its scratch.
 *
 * The files and what each calls, one way only:
 *     ode_abi.c      ODE's symbols (dlsym), joint class names, the world's
 *                    processing context                                   -> nothing
 *     ode_rows.c     messages, pointer map, the walk, rows, the problem   -> ode_abi.c
 *     ode_warm.c     warm start: contact matching, records                -> nothing
 *     ode_integrate.c the forces of the solve, ODE's integration of them  -> ode_rows.c, ode_abi.c
 *     ode_context.c  the public API's context: creation, configuration,
 *                    the registered spaces and bodies                     -> ode_rows.c, ode_abi.c
 *     ode_step.c     the public API's steps: read, solve, fall back       -> ode_context.c, ode_integrate.c,
 *                                                                            ode_rows.c, ode_warm.c, ode_abi.c
 *     ode_preload.c  the LD_PRELOAD interposers                           -> the public API (lcpkit/ode.h) */
#ifndef LCPKIT_ODE_INTERNAL_H
#define LCPKIT_ODE_INTERNAL_H

#include "lcpkit/ode.h"

#include <ode/ode.h>
#include <string.h>

#define LK__ODE_JOINT_TYPES 18 /* dJointTypeNone .. dJointTypeTransmission */
#define LK__ODE_MAX_M 6        /* ODE: a joint has at most 6 rows */

/* dxJoint::Info1 of ODE 0.16: two bytes, m rows of which nub unbounded. */
typedef struct lk__ode_info1 {
	unsigned char m, nub;
} lk__ode_info1;

/* dxJoint<Type>::getInfo1 / getInfo2 called as plain functions: with the Itanium C++ ABI a non-virtual
 * member function takes `this` as its first argument, and a dJointID is the dxJoint pointer. */
typedef void (*lk__ode_info1_fn)(void *self, lk__ode_info1 *info);
typedef void (*lk__ode_info2_fn)(void *self, double fps, double erp, int rowskip, double *J1, double *J2,
                                 int pairskip, double *pair_rhs_cfm, double *pair_lo_hi, int *findex);
typedef int (*lk__ode_step_fn)(dWorldID w, dReal stepsize);
/* dxJoint<Type>::size() const: sizeof the joint object. */
typedef size_t (*lk__ode_size_fn)(const void *self);
/* The world's processing context (see lk__ode_world_ready). */
typedef void *(*lk__ode_world_context_fn)(const void *world);
typedef _Bool (*lk__ode_context_sync_fn)(void *context, void *world);
typedef size_t (*lk__ode_estimate_fn)(void *const *bodies, unsigned nb, void *const *joints, unsigned nj);
typedef _Bool (*lk__ode_realloc_context_fn)(void *world, void *islands_info, double h, lk__ode_estimate_fn est);
typedef void (*lk__ode_world_destroy_fn)(dWorldID w);
typedef dBodyID (*lk__ode_body_create_fn)(dWorldID w);
typedef void (*lk__ode_step_body_fn)(dBodyID b, dReal stepsize);

typedef struct lk__ode_abi {
	lk__ode_info1_fn info1[LK__ODE_JOINT_TYPES];
	lk__ode_info2_fn info2[LK__ODE_JOINT_TYPES];
	lk__ode_size_fn size[LK__ODE_JOINT_TYPES];
	/* ODE's own steppers, dWorldDestroy and dBodyCreate, taken from libode itself so that the preload library's
	 * interposers are never reached from inside the plugin */
	lk__ode_step_fn quickstep;
	lk__ode_step_fn step;
	lk__ode_world_destroy_fn world_destroy;
	lk__ode_body_create_fn body_create; /* for the probe joint's body (lk__ode_contact_layout) */
	lk__ode_world_context_fn world_context;
	lk__ode_context_sync_fn context_sync;
	lk__ode_realloc_context_fn realloc_context;
	lk__ode_estimate_fn quickstep_estimate;
	lk__ode_step_body_fn step_body; /* dxStepBody: a body's position and orientation over a step, as the
	                                  * steppers end */
	/* where a contact joint keeps the dContact it was made from (lk__ode_contact_layout): its offset in the
	 * object; 0 not looked for yet, -1 not found (the rows are then read through getInfo2 alone) */
	long contact_at;
	/* where a joint keeps its two nodes of its bodies' lists of joints (lk__ode_node_layout): their offset in the
	 * object; 0 not looked for yet, -1 not found (a body's joints are then read by dBodyGetJoint) */
	long node_at;
} lk__ode_abi;

/* Resolves everything; on failure writes which symbol (or what) is missing. */
lk_status lk__ode_abi_load(lk__ode_abi *abi, char *err, size_t err_size);
const char *lk__ode_joint_class(int type);
/* Makes sure the world has the processing context ODE's row generators may lock (see ode_abi.c); 0 when ODE
 * could not allocate it. */
int lk__ode_world_ready(const lk__ode_abi *abi, dWorldID world, double h);
/* Finds, once, where ODE's contact joint keeps its dContact (abi->contact_at) and checks it against getInfo2;
 * returns whether lk__ode_contact_of may be used. */
int lk__ode_contact_layout(lk__ode_abi *abi);
/* The dContact contact joint j was made from (lk__ode_contact_layout must have returned 1). */
void lk__ode_contact_of(const lk__ode_abi *abi, dJointID j, dContact *out);
/* Finds, once, where ODE's joints keep the nodes of their bodies' lists (abi->node_at) and checks walks of
 * probe bodies' lists against dBodyGetJoint; 1 when found (ode_abi.c). */
int lk__ode_node_layout(lk__ode_abi *abi);
/* The least-norm x (m rows, at most 16) with sum_k x_k J_k = f in the least-squares sense, J_k a face's normal
 * rows on its first body (ode_warm.c): by a 3 x 3 system where the rows share one unit normal and their points
 * span the plane, else (or with general) by Gram-Schmidt over J's six columns. Returns 0 where J is zero. */
int lk__ode_face_least_norm(const double (*J)[6], int m, const double f[6], double *x, int general);

/* A walk over a body's joints in the order of dBodyGetJoint(b, 0), (b, 1), ..., in one pass over ODE's list
 * where abi->node_at is known (dBodyGetJoint walks the list from its head at every call: k^2/2 steps for a body
 * of k joints), by dBodyGetJoint elsewhere. */
typedef struct lk__ode_joint_walk {
	const lk__ode_abi *abi;
	dBodyID body;
	int index;
	const char *node; /* the node of the joint returned last, in the body's list */
} lk__ode_joint_walk;

static inline lk__ode_joint_walk lk__ode_walk_joints(const lk__ode_abi *abi, dBodyID b)
{
	lk__ode_joint_walk w = {abi, b, 0, NULL};
	return w;
}

/* The next joint of the walk; NULL past the last. ODE's dxJointNode: the joint, the other body, the next node;
 * a joint's node[0] lies in its second body's list and node[1] in its first's, node[0]'s body being the first
 * (dJointAttach, ode.cpp). */
static inline dJointID lk__ode_next_joint(lk__ode_joint_walk *w)
{
	if (w->abi->node_at <= 0)
		return dBodyGetJoint(w->body, w->index++);
	const char *node;
	if (w->index++ == 0) {
		dJointID j = dBodyGetJoint(w->body, 0);
		if (!j)
			return NULL;
		node = (const char *)j + w->abi->node_at;
		dBodyID first;
		memcpy(&first, node + sizeof(void *), sizeof first);
		if (first == w->body)
			node += 3 * sizeof(void *);
	} else {
		memcpy(&node, w->node + 2 * sizeof(void *), sizeof node);
		if (!node)
			return NULL;
	}
	w->node = node;
	dJointID j;
	memcpy(&j, node, sizeof j);
	return j;
}
/* The target dxJointContact::getInfo2 writes for the normal row of contact c with the world's surface layer at
 * `layer`, for a contact without bounce and normal motion (dContactBounce, dContactMotionN): ODE 0.16's
 * operations in its order, the same number to the bit. */
double lk__ode_contact_target(const dContact *c, double fps, double erp, double layer, double maxvel);
/* Whether lk__ode_contact_target gives, at every layer, the targets of contact c, whose target at the world's own
 * layer getInfo2 made 0: no normal motion and a rate fps erp of 0 or more, bounce or not (ode_abi.c). */
int lk__ode_resting_target_known(const dContact *c, double fps, double erp);
/* The target contact joint j's own getInfo2 writes for its normal row at the world's layer now (getInfo1 must
 * have given its rows). */
double lk__ode_generated_target(const lk__ode_abi *abi, dJointID j, double fps, double erp);

/* Open-addressing pointer -> int map; keys are never NULL. */
typedef struct lk__ptrmap {
	const void **keys;
	int *vals;
	int cap; /* power of two or 0 */
	int count;
} lk__ptrmap;

int lk__ptrmap_reserve(lk__ptrmap *m, int n);  /* empties the map and makes room for n keys; 0 on no memory */
int lk__ptrmap_get(const lk__ptrmap *m, const void *key); /* -1 if absent */
int lk__ptrmap_put(lk__ptrmap *m, const void *key, int val); /* 1 inserted, 0 present (value kept) */
void lk__ptrmap_free(lk__ptrmap *m);

/* One joint of the step. */
typedef struct lk__ode_joint {
	dJointID id;
	int type;
	int m;
	int row0;          /* first row in ctx->defs (extraction order) */
	int body[2];       /* step body indices of ODE's node[0], node[1]; -1 for the world */
	dBodyID bid[2];    /* the bodies themselves (NULL for the world): the warm start's keys, read with the joint
	                    * rather than from the step's body array, a miss a joint on a large pile */
	dJointFeedback *feedback;   /* the application's, or NULL */
	int temp_feedback; /* the context attached feedback_store[...] for this step */
} lk__ode_joint;

/* A body of the step and what the problem and the force application need of it. */
typedef struct lk__ode_body {
	dBodyID id;
	int parent;        /* the body it was reached from (-1: a starting body); union-find while stepping */
	int was_disabled;
	int kinematic;
	double inv_mass;
	double inv_inertia[12]; /* world frame, ODE's 3x4 layout */
	double user_force[6];   /* the application's force and torque accumulators before the step */
	double saved_force[6];  /* the accumulators before the last read (lk__ode_state_save) */
	double force[6];        /* constraint force and torque the step applies: (J^T lambda) / h */
	int articulated;        /* a joint (not a contact) ties it to another moving body (lk__ode_warm_lookup) */
	int recovering;         /* articulated, with a contact that is not resting (lk__ode_warm_lookup) */
} lk__ode_body;

/* Warm-start memory: one record per joint of the previous step. */
typedef struct lk__ode_warm {
	const void *key;   /* the joint (non-contacts) or NULL for contacts */
	dBodyID body[2];
	int type, m;
	double point[3], normal[3];
	double lambda[LK__ODE_MAX_M];
	int next;          /* chain within a hash bucket */
	int used;
} lk__ode_warm;

/* A threading implementation of ODE as lk_ode_set_threading was given it, and the call wait of its colours. */
typedef struct lk__ode_threading {
	const dThreadingFunctionsInfo *functions;
	dThreadingImplementationID impl;
	dCallWaitID wait;
} lk__ode_threading;

struct lk_ode {
	dWorldID world;
	lk__ode_abi abi;
	lk_ode_def def;
	lk_ode_stepper stepper;
	lk_ode_stepper fallback; /* ODE's stepper for a step lcpkit's solver cannot make */
	lk_solver_config cfg;
	int iters_from_world;
	int measure_open; /* the spec leaves measure= open: it follows def.ode_residual */
	int w_from_world; /* auto with no w= in its spec: where articulated bodies touch and no contact recovers,
	                   * the sweeps take the world's quickstep relaxation (ode_step.c, step_relaxation) */
	int jw_from_world; /* and no jw= either: where no contact recovers, the joints' bilateral rows take it */
	int sink_to_layer; /* this solver's contacts rest at the surface layer's depth (def.sink_to_layer) */
	char spec[160];

	/* registration */
	dSpaceID *spaces;
	int nspaces, cap_spaces;
	dBodyID *reg_bodies;
	int nreg, cap_reg;
	lk__ptrmap reg_map;

	/* the step */
	lk__ode_body *bodies;
	int nbodies, cap_bodies;
	lk__ptrmap body_map;
	lk__ode_joint *joints;
	int njoints, cap_joints;
	/* bodies whose state is not finite: not gathered, their joints not solved, and switched off around every
	 * call of ODE's steppers, until the application repairs them (ODE's own steppers assert on them) */
	dBodyID *frozen;
	int nfrozen, cap_frozen;
	lk__ptrmap frozen_map;
	dJointID *held_joints; /* joints switched off for a call of ODE's stepper: the frozen bodies' and those
	                        * with a row left out */
	int nheld, cap_held;
	unsigned char *held_enabled; /* per frozen body: it was enabled before the call */
	int nheld_bodies;      /* frozen bodies switched off for the call */
	lk_row_def *defs;  /* each row as ODE's getInfo2 wrote it into J, c, s, lo and hi, made lcpkit's in place */
	int *findex;       /* ODE's, made global (joint's first row + local) */
	int *row_joint;    /* joint of each row */
	unsigned char *left_out; /* with nleft_out > 0, 1: the row is left out of the problem (lk__ode_row_fault
	                          * says why); not read otherwise */
	int nrows, cap_rows;
	int cap_row_arrays; /* the capacity findex, row_joint, left_out, lambda, plambda, prow, problem_row_of hold */
	int nprows;        /* rows of the problem: the extracted rows less the nleft_out left out */
	int nleft_out;
	int first_left_out; /* the first of them (extraction order), for the note */
	lk_row_def *kept_defs; /* with rows left out: the problem's rows in its order, copied */
	int cap_kept;
	int rows_by_kind[LK_ROW_KIND_COUNT]; /* counted as the rows are put in order */
	double *lambda;    /* solution (impulses), nrows, in extraction (joint) order */
	int *prow;         /* problem row k is extraction row prow[k] */
	int *problem_row_of;         /* and extraction row g is problem row problem_row_of[g] */
	double *plambda;   /* lambda in problem order (scratch) */
	dJointFeedback *feedback_store;
	int cap_feedback;
	unsigned char *joint_bytes; /* every joint object but the contacts as it was before the last read of the rows */
	size_t cap_joint_bytes;
	int state_saved;   /* joint_bytes and the bodies' saved_force hold that state */
	int need_islands;  /* auto-disable or sleeping bodies: keep ODE's islands with null joints */
	dJointGroupID island_group;
	lk_problem *problem;

	/* warm start: previous step's records, hashed by joint (non-contacts) or by body pair (contacts) */
	lk__ode_warm *warm, *warm_next;
	int nwarm, nwarm_next, cap_warm, cap_warm_next;
	int *warm_heads;
	int warm_hcap;
	int warm_runs_whole; /* the records' contact pairs each one run of consecutive records (ode_warm.c, pair_first) */
	int runs_whole_now;  /* this step's contact joints: each pair's one run (warm_faces found it), for the store */
	double warm_dt;
	int *face_order;   /* the contact joints by body pair, then the hash of their runs (warm_faces), cap_face_order */
	int cap_face_order;
	double *sink_at;   /* by joint: a resting contact's normal target with the world's layer at 0, read from its
	                    * generator (sink_to_layer); NaN for the others */
	int cap_sink_at;

	/* ODE's threading implementation lent to the sweeps (ode_threads.c) */
	lk__ode_threading threading;
	int threading_lent; /* the problem runs its sweeps on it (lk_problem_set_executor) */

	lk_engine_step_stats stats;
	lk_ode_timing timing;
	char error[512]; /* the last failed call's message (lk_ode_error) */
	char note[512];  /* what the last step did other than asked (lk_ode_note) */
	int64_t steps;     /* lk_ode_world_step calls so far */
	unsigned said;     /* the kinds of note said on stderr (once each, lk__ode_say) */
	int64_t notes_total;
};

/* ode_threads.c: the lent implementation is used by a solve of cfg when it runs more than one thread and cfg
 * sweeps on threads; release frees what set_threading allocated in it. */
void lk__ode_threading_lend(lk_ode *ctx, const lk_solver_config *cfg);
void lk__ode_threading_release(lk__ode_threading *t);

/* ode_rows.c */
/* The bodies and joints of the step; a body the step froze (ctx->frozen) is not gathered, and its joints are
 * left out. */
lk_status lk__ode_gather(lk_ode *ctx);
/* What is not finite, found where the core refused a body or a row, or its solve found a row it cannot solve
 * (bad diagonal), so that a sound step pays nothing for the look: the gathered bodies whose state is not
 * finite frozen for the rest of the step (the next gather leaves them and their joints out), and their number;
 * the extracted rows that cannot be solved (J not finite or zero, ...) marked left out and the problem's order
 * made again without them, and their number. lk__ode_thaw ends a step's freeze. */
int lk__ode_freeze_faulty_bodies(lk_ode *ctx);
int lk__ode_leave_out_faulty_rows(lk_ode *ctx);
void lk__ode_thaw(lk_ode *ctx);
/* Why extraction row g is left out of the problem ("J is not finite", ...), or NULL if it is not. */
const char *lk__ode_row_fault(const lk_ode *ctx, int g);
/* Which part of a frozen body's state is not finite ("linear velocity", ...). */
const char *lk__ode_body_fault(dBodyID b);
/* The rows of every gathered joint; the contacts' on `threads` threads (the solver's) where the solve sweeps on
 * them (problems of the core's LK_PARALLEL_MIN_ROWS rows and more). `points`: which rows' points are made (a
 * contact's point, recovered from its rows; a joint's anchor, from ODE); the others are 0, "unknown" in the
 * problem's terms. The coordinate orders and problem files read every row's point, the warm start's matching
 * only the contacts' (it finds the other joints by handle). */
enum { LK__ODE_POINTS_NONE, LK__ODE_POINTS_CONTACTS, LK__ODE_POINTS_ALL };
lk_status lk__ode_extract_rows(lk_ode *ctx, double dt, int threads, int points);
/* p from the extracted rows; lambda0 (extraction order) is its starting lambda, NULL for zero; the rows are
 * made on `threads` threads (lk_problem_add_rows), the solver's. */
lk_status lk__ode_build_problem(lk_ode *ctx, double dt, lk_problem *p, const double *lambda0, int threads);
/* A failed call: the message lk_ode_error returns, and st. */
lk_status lk__ode_fail(lk_ode *ctx, lk_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* What a successful call did instead of the expected (a fallback, a measurement left out): the same
 * message slot, no status. */
void lk__ode_note(lk_ode *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, added after what the slot holds already ("first; second"). */
void lk__ode_note_more(lk_ode *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lk__ode_count_kinds(const lk_ode *ctx, lk_engine_step_stats *st);
/* Around a read of the rows: keeps and puts back what ODE's getInfo1/getInfo2 change (the bodies' force
 * accumulators, the joints' own state), for a read that is not the step's own and for a step that ODE's
 * stepper makes after all. After lk__ode_gather; restoring twice restores once. */
lk_status lk__ode_state_save(lk_ode *ctx);
void lk__ode_state_restore(lk_ode *ctx);

/* ode_warm.c (reads the rows of lk__ode_extract_rows; called by ode_step.c only) */
/* Some contact of the rows read is recovering from a penetration or bouncing: its normal row asks for more
 * separating velocity than gravity adds in a step (|g| h). */
int lk__ode_contact_recovering(const lk_ode *ctx, double h);
/* The gathered bodies' articulated flags made again from the joints read, once a read (ode_step.c's
 * build_problem), for the warm start's lookup and the step's relaxation. */
void lk__ode_mark_articulated(lk_ode *ctx);
void lk__ode_warm_store(lk_ode *ctx, double dt);
void lk__ode_warm_lookup(lk_ode *ctx, double dt, double *lambda);

/* ode_integrate.c (after the solve of ode_step.c; called by it only) */
/* What the step left out (the frozen bodies with their joints, the joints with a row left out) switched off
 * around a call of ODE's stepper, and switched on again. */
void lk__ode_hold_out(lk_ode *ctx);
void lk__ode_release_out(lk_ode *ctx);
/* The constraint forces J^T lambda / h into the bodies' accumulators (to_bodies) and the joints' feedback. */
void lk__ode_apply_forces(lk_ode *ctx, double h, int to_bodies);
/* Whether the step integrates the gathered bodies itself rather than through ODE's dWorldQuickStep. */
int lk__ode_integrates_directly(lk_ode *ctx, double h);
/* The step's integration; 0 when ODE's stepper failed (no memory): then nothing moved. */
int lk__ode_integrate(lk_ode *ctx, double h, int directly);

#endif

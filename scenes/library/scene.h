/* Engine-neutral scene descriptions: bodies, shapes, materials, joints, initial state and time step,
 * described once and built in either engine (sim.h). One library serves the tests, the benchmarks,
 * `lcpkit compare` and the viewer. */
#ifndef LCPKIT_SCENE_H
#define LCPKIT_SCENE_H

#include "lcpkit/base.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lk_scene_shape {
	LK_SHAPE_BOX = 0,    /* half extents size[0..2] */
	LK_SHAPE_SPHERE,     /* radius size[0] */
	LK_SHAPE_PLANE,      /* static ground plane z = 0 (normal +z); only as a static body */
	LK_SHAPE_CAPSULE     /* radius size[0], half height of the cylindrical part size[1], along body z */
} lk_scene_shape;

typedef struct lk_scene_body {
	lk_scene_shape shape;
	double size[3];
	double mass;         /* kg; 0 = static */
	double pos[3];
	double quat[4];      /* orientation w, x, y, z */
	double vel[3];
	double angvel[3];
	double friction;
	double restitution;
} lk_scene_body;

typedef enum lk_scene_joint_type {
	LK_JOINT_HINGE = 0,
	LK_JOINT_BALL,
	LK_JOINT_SLIDER      /* translation along axis, rotation locked */
} lk_scene_joint_type;

typedef struct lk_scene_joint {
	lk_scene_joint_type type;
	int body[2];         /* body indices; -1 for the world (body[1] only) */
	double anchor[3];    /* world anchor at the start */
	double axis[3];      /* hinge or slider axis, or a ball's twist axis, world */
	double lo, hi;       /* hinge limits in radians, slider limits in metres; lo > hi: no limit */
	/* Angles and positions are those of body[0] relative to body[1] (the world if -1), 0 at the start. */
	/* hinge, slider: a motor driving the joint towards motor_vel (rad/s or m/s) with at most motor_fmax
	 * (N m or N); motor_fmax 0: no motor */
	double motor_vel, motor_fmax;
	/* ball: a cone limit around axis: the swing's half-angle and the twist's half-range, in radians;
	 * cone <= 0: no limit */
	double cone, twist;
} lk_scene_joint;

typedef struct lk_scene {
	char name[32];
	char spec[160];      /* the canonical spec it was built from, e.g. "boxstack:n=20" */
	double gravity[3];
	double h;            /* time step, s */
	double time;         /* default simulated time for compare, s */
	int plane2d;         /* 1: every dynamic body moves in the x-z plane (seed 000's 2D set-ups) */
	int nbodies;
	lk_scene_body *bodies;
	int njoints;
	lk_scene_joint *joints;
	int stack_top;       /* body whose fall and drift `compare` reports; -1 for none */
	double stack_top_height; /* its initial height */
	double fall_drop;    /* the stack counts as fallen when the top sinks this far below its start */
	double view_center[3];
	double view_extent;  /* half width of the picture's view in metres */
} lk_scene;

/* A body's pose: where a running scene has it (sim.h), and what the pictures draw (plot.h). */
typedef struct lk_pose {
	double pos[3];
	double quat[4];
} lk_pose;

/* The names of the built-in scenes, NULL-terminated. */
const char *const *lk_scene_names(void);
/* Builds a scene from "name[:key=value,...]"; on error returns LK_ERR_PARSE with a one-line message that
 * names the valid choices. The caller destroys *out. */
lk_status lk_scene_create(const char *spec, lk_scene **out, char *err, size_t err_size);
void lk_scene_destroy(lk_scene *s);
/* One line of help per scene and its parameters. */
const char *lk_scene_help(const char *name);

/* Kinetic energy of body i at velocity (v, w) and orientation q: 1/2 m v^2 + 1/2 w^T I w. */
double lk_scene_body_energy(const lk_scene_body *b, const double q[4], const double v[3], const double w[3]);
/* Principal moments of inertia of a body (diagonal of the body-frame tensor). */
void lk_scene_body_inertia(const lk_scene_body *b, double I[3]);

#ifdef __cplusplus
}
#endif

#endif

/* The engine backends of sim.h. */
#ifndef LCPKIT_SIM_INTERNAL_H
#define LCPKIT_SIM_INTERNAL_H

#include "sim.h"

typedef struct lk_sim_ops {
	void (*destroy)(lk_sim *s);
	lk_status (*step)(lk_sim *s, lk_engine_step_stats *stats);
	void (*pose)(const lk_sim *s, int i, lk_pose *pose);
	void (*velocity)(const lk_sim *s, int i, double v[3], double w[3]);
	lk_status (*add_body)(lk_sim *s, int i); /* builds scene body i, just appended by lk_sim_add_body */
	void (*set_residuals)(lk_sim *s, int on);
} lk_sim_ops;

struct lk_sim {
	const lk_sim_ops *ops;
	const lk_scene *scene;
	lk_engine engine;
	double h;
	double max_penetration;  /* of the last step */
	int capture_next;
	int in_turn;          /* lk_sim_step_in_turn */
	lk_problem *captured;
	void *impl;
	lk_scene *own_scene;  /* the sim's copy of the scene once bodies were added (scene points to it) */
	double (*joint_anchor)[2][3]; /* per scene joint: its anchor in body[0]'s and body[1]'s frames (the world
	                               * frame for the world), fixed at creation */
};

lk_status lk__sim_create_ode(lk_sim *s, const lk_sim_def *def, char *err, size_t err_size);
lk_status lk__sim_create_bullet(lk_sim *s, const lk_sim_def *def, char *err, size_t err_size);
/* The friction coefficient each backend gives a contact between two scene bodies. */
double lk__sim_ode_pair_friction(const lk_scene_body *a, const lk_scene_body *b);
double lk__sim_bullet_pair_friction(const lk_scene *sc, const lk_scene_body *a, const lk_scene_body *b);

#endif

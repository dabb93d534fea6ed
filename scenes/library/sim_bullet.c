/* Scenes in Bullet through lcpkit's C API over Bullet (bullet_shim). */
#include "sim_internal.h"
#include "lcpkit/bullet.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bt_sim {
	lk_bt_world *world;
	int *ids; /* per scene body */
} bt_sim;

static void bt_destroy(lk_sim *s)
{
	bt_sim *b = s->impl;
	if (!b)
		return;
	lk_bt_world_destroy(b->world);
	free(b->ids);
	free(b);
	s->impl = NULL;
}

static lk_status bt_step(lk_sim *s, lk_engine_step_stats *st)
{
	bt_sim *b = s->impl;
	int capture = s->capture_next;
	s->capture_next = 0;
	if (capture)
		lk_bt_world_set_recording(b->world, 1);
	double t0 = lk_stats_now();
	lk_status rc = lk_bt_world_step(b->world, st);
	double t1 = lk_stats_now();
	if (rc != LK_OK)
		return rc;
	st->step_seconds = t1 - t0;
	if (capture) {
		lk_problem_destroy(s->captured);
		s->captured = NULL;
		if (lk_bt_world_recorded_problem(b->world, &s->captured) != LK_OK)
			s->captured = NULL;
		lk_bt_world_set_recording(b->world, 0);
	}
	double depth = 0;
	if (lk_bt_world_max_penetration(b->world, &depth) == LK_OK)
		s->max_penetration = depth;
	return LK_OK;
}

static void bt_pose(const lk_sim *s, int i, lk_pose *p)
{
	const bt_sim *b = s->impl;
	const lk_scene_body *sb = &s->scene->bodies[i];
	double q[4];
	if (sb->shape == LK_SHAPE_PLANE || lk_bt_body_get_transform(b->world, b->ids[i], p->pos, q) != LK_OK) {
		memcpy(p->pos, sb->pos, sizeof p->pos);
		memcpy(p->quat, sb->quat, sizeof p->quat);
		return;
	}
	/* Bullet's (x, y, z, w) -> (w, x, y, z) */
	p->quat[0] = q[3];
	p->quat[1] = q[0];
	p->quat[2] = q[1];
	p->quat[3] = q[2];
}

static void bt_velocity(const lk_sim *s, int i, double v[3], double w[3])
{
	const bt_sim *b = s->impl;
	if (s->scene->bodies[i].mass <= 0 || lk_bt_body_get_velocity(b->world, b->ids[i], v, w) != LK_OK) {
		memset(v, 0, 3 * sizeof(double));
		memset(w, 0, 3 * sizeof(double));
	}
}

/* A dynamic box or sphere added to the running world (lk_sim_add_body has validated it); the same body
 * definition as the scene's own dynamic bodies. */
/* The Bullet body of a scene body. */
static lk_bt_body_def body_def(const lk_scene *sc, const lk_scene_body *sb)
{
	lk_bt_body_def bd = lk_bt_default_body_def();
	if (sb->shape == LK_SHAPE_PLANE)
		bd.shape = lk_bt_shape_plane(0, 0, 1, 0);
	else if (sb->shape == LK_SHAPE_SPHERE)
		bd.shape = lk_bt_shape_sphere(sb->size[0]);
	else if (sb->shape == LK_SHAPE_CAPSULE)
		bd.shape = lk_bt_shape_capsule(sb->size[0], sb->size[1], 2);
	else
		bd.shape = lk_bt_shape_box(sb->size[0], sb->size[1], sb->size[2]);
	bd.mass = sb->mass > 0 ? sb->mass : 0;
	memcpy(bd.position, sb->pos, sizeof bd.position);
	/* (w, x, y, z) -> Bullet's (x, y, z, w) */
	bd.rotation[0] = sb->quat[1];
	bd.rotation[1] = sb->quat[2];
	bd.rotation[2] = sb->quat[3];
	bd.rotation[3] = sb->quat[0];
	memcpy(bd.linear_velocity, sb->vel, sizeof bd.linear_velocity);
	memcpy(bd.angular_velocity, sb->angvel, sizeof bd.angular_velocity);
	/* Bullet multiplies the two bodies' coefficients: square roots make the product the geometric mean,
	 * the rule the ODE scenes use */
	bd.friction = sqrt(sb->friction);
	bd.restitution = sqrt(sb->restitution);
	if (sc->plane2d && sb->mass > 0) {
		const double lf[3] = {1, 0, 1}, af[3] = {0, 1, 0};
		memcpy(bd.linear_factor, lf, sizeof lf);
		memcpy(bd.angular_factor, af, sizeof af);
	}
	bd.allow_sleep = 0;
	return bd;
}

static lk_status bt_add_body(lk_sim *s, int i)
{
	bt_sim *b = s->impl;
	const lk_scene_body *sb = &s->scene->bodies[i];
	int *ids = realloc(b->ids, sizeof *ids * (size_t)(i + 1));
	if (!ids)
		return LK_ERR_NO_MEMORY;
	b->ids = ids;
	lk_bt_body_def bd = body_def(s->scene, sb);
	return lk_bt_body_create(b->world, &bd, &b->ids[i]);
}

/* The Bullet joint of a scene joint: the C API measures hinges and sliders of body_a relative to body_b,
 * the scene's body[0] relative to body[1]. */
static lk_bt_joint_def joint_def(const bt_sim *b, const lk_scene_joint *j)
{
	lk_bt_joint_type type = LK_BT_JOINT_HINGE;
	if (j->type == LK_JOINT_BALL)
		type = j->cone > 0 ? LK_BT_JOINT_CONE_TWIST : LK_BT_JOINT_POINT;
	else if (j->type == LK_JOINT_SLIDER)
		type = LK_BT_JOINT_SLIDER;
	lk_bt_joint_def jd = lk_bt_default_joint_def(type);
	jd.body_a = b->ids[j->body[0]];
	jd.body_b = j->body[1] >= 0 ? b->ids[j->body[1]] : LK_BT_WORLD;
	memcpy(jd.anchor, j->anchor, sizeof jd.anchor);
	memcpy(jd.axis, j->axis, sizeof jd.axis);
	if (type == LK_BT_JOINT_CONE_TWIST) {
		jd.swing_span1 = jd.swing_span2 = j->cone;
		jd.twist_span = j->twist;
		return jd;
	}
	if (type != LK_BT_JOINT_POINT && j->lo <= j->hi) {
		jd.lower = j->lo;
		jd.upper = j->hi;
	}
	if (type != LK_BT_JOINT_POINT && j->motor_fmax > 0) {
		jd.motor = 1;
		jd.motor_velocity = j->motor_vel;
		jd.motor_max_force = j->motor_fmax;
	}
	return jd;
}

static void bt_set_residuals(lk_sim *s, int on)
{
	lk_bt_world_set_residuals(((bt_sim *)s->impl)->world, on);
}

static const lk_sim_ops bt_ops = {bt_destroy, bt_step, bt_pose, bt_velocity, bt_add_body, bt_set_residuals};

lk_status lk__sim_create_bullet(lk_sim *s, const lk_sim_def *def, char *err, size_t esz)
{
	const lk_scene *sc = def->scene;
	bt_sim *b = calloc(1, sizeof *b);
	if (!b || !(b->ids = calloc((size_t)sc->nbodies, sizeof *b->ids))) {
		free(b);
		snprintf(err, esz, "out of memory");
		return LK_ERR_NO_MEMORY;
	}
	s->impl = b;
	s->ops = &bt_ops;
	lk_bt_world_def wd = lk_bt_default_world_def();
	memcpy(wd.gravity, sc->gravity, sizeof wd.gravity);
	wd.fixed_time_step = s->h;
	wd.solver = def->solver;
	wd.iterations = def->iterations > 0 ? def->iterations : 10;
	/* the same contacts as the scene's ODE world: a resting face keeps the ODE scenes' surface layer, and a box
	 * set down on the ground stands on its whole face from the first step, as dCollide gives it in ODE (with
	 * Bullet's defaults it stands on its deepest corner alone, and a tall stack starts by tipping) */
	wd.linear_slop = LK_SIM_CONTACT_LAYER;
	wd.plane_multipoint = 1;
	wd.multibody = def->bullet_multibody;
	lk_status st = lk_bt_world_create(&wd, &b->world, err, esz);
	if (st != LK_OK) {
		bt_destroy(s);
		return st;
	}
	for (int i = 0; i < sc->nbodies && st == LK_OK; ++i) {
		lk_bt_body_def bd = body_def(sc, &sc->bodies[i]);
		st = lk_bt_body_create(b->world, &bd, &b->ids[i]);
	}
	for (int k = 0; k < sc->njoints && st == LK_OK; ++k) {
		lk_bt_joint_def jd = joint_def(b, &sc->joints[k]);
		st = lk_bt_joint_create(b->world, &jd, NULL);
	}
	if (st != LK_OK) {
		snprintf(err, esz, "%s", lk_bt_world_error(b->world));
		bt_destroy(s);
		return st;
	}
	return LK_OK;
}

/* btManifoldResult multiplies the two bodies' coefficients and clamps the product to 10 */
double lk__sim_bullet_pair_friction(const lk_scene *sc, const lk_scene_body *a, const lk_scene_body *b)
{
	double mu = body_def(sc, a).friction * body_def(sc, b).friction;
	return mu < 10 ? mu : 10;
}

/* Joints of the C API: point, hinge, slider, fixed, cone-twist and 6-DoF spring constraints between two bodies
 * or a body and the static world. */
#include "world_internal.hpp"

#include <BulletDynamics/ConstraintSolver/btGeneric6DofSpring2Constraint.h>

#include <cmath>
#include <cstring>
#include <memory>

using namespace lk::detail;

namespace {

/* The world frame of a joint: origin at the anchor, the given frame axis (0 = x, 2 = z) along axis. */
btTransform joint_frame(const double *anchor, const double *axis, int frameAxis)
{
	btVector3 u = vec(axis).normalized(), p, q;
	btPlaneSpace1(u, p, q); /* p normal to u, q = u x p */
	btVector3 c0, c1, c2;
	if (frameAxis == 0) {
		c0 = u, c1 = p, c2 = q;
	} else {
		c0 = p, c1 = q, c2 = u;
	}
	btMatrix3x3 basis(c0.x(), c1.x(), c2.x(), c0.y(), c1.y(), c2.y(), c0.z(), c1.z(), c2.z());
	return btTransform(basis, vec(anchor));
}

bool joint_uses_axis(lk_bt_joint_type t)
{
	return t == LK_BT_JOINT_HINGE || t == LK_BT_JOINT_SLIDER || t == LK_BT_JOINT_CONE_TWIST ||
	       t == LK_BT_JOINT_SPRING6;
}

lk_status check_joint_def(const World *w, const lk_bt_joint_def &d, btRigidBody **ra, btRigidBody **rb)
{
	const int type = raw_enum(d.type);
	if (type < 0 || type >= LK_BT_JOINT_COUNT)
		return fail(w, LK_ERR_INVALID_ARGUMENT, "unknown joint type %d", type);
	if (d.body_a == LK_BT_WORLD && d.body_b == LK_BT_WORLD)
		return fail(w, LK_ERR_INVALID_ARGUMENT,
		            "a joint needs at least one dynamic body; body_a and body_b are both the static world");
	if (d.body_a == LK_BT_WORLD)
		return fail(w, LK_ERR_INVALID_ARGUMENT,
		            "body_a must be a body; the static world (LK_BT_WORLD) goes in body_b");
	lk_status st = check_body(w, d.body_a, ra);
	if (st != LK_OK)
		return st;
	if (d.body_b == LK_BT_WORLD) {
		*rb = w->fixed.get();
	} else {
		st = check_body(w, d.body_b, rb);
		if (st != LK_OK)
			return st;
		if (d.body_b == d.body_a)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "body_a and body_b are the same body %d",
			            d.body_a);
	}
	if ((*ra)->isStaticOrKinematicObject() && (*rb)->isStaticOrKinematicObject()) {
		if (d.body_b == LK_BT_WORLD)
			return fail(w, LK_ERR_INVALID_ARGUMENT,
			            "a joint needs at least one dynamic body; body %d is static and body_b is the world",
			            d.body_a);
		return fail(w, LK_ERR_INVALID_ARGUMENT,
		            "a joint needs at least one dynamic body; bodies %d and %d are both static", d.body_a,
		            d.body_b);
	}
	st = check_vec(w, d.anchor, 3, "anchor");
	if (st != LK_OK)
		return st;
	if (joint_uses_axis(d.type)) {
		st = check_vec(w, d.axis, 3, "axis");
		if (st != LK_OK)
			return st;
		if (!(std::sqrt(d.axis[0] * d.axis[0] + d.axis[1] * d.axis[1] + d.axis[2] * d.axis[2]) > 1e-12))
			return fail(w, LK_ERR_INVALID_ARGUMENT, "axis has zero length");
	}
	if (std::isnan(d.breaking_impulse) || !(d.breaking_impulse > 0))
		return fail(w, LK_ERR_INVALID_ARGUMENT, "breaking impulse %g is not positive",
		            d.breaking_impulse);
	const double scalars[] = {d.lower, d.upper, d.motor_velocity, d.motor_max_force, d.swing_span1, d.swing_span2,
	                          d.twist_span};
	if (!finite_n(scalars, 7))
		return fail(w, LK_ERR_NONFINITE, "limits, motor or spans are not finite");
	if (d.motor_max_force < 0)
		return fail(w, LK_ERR_INVALID_ARGUMENT, "motor max force %g is negative", d.motor_max_force);
	if (d.swing_span1 < 0 || d.swing_span2 < 0 || d.twist_span < 0)
		return fail(w, LK_ERR_INVALID_ARGUMENT, "cone-twist spans must be >= 0");
	if (!finite_n(d.linear_lower, 3) || !finite_n(d.linear_upper, 3) || !finite_n(d.angular_lower, 3) ||
	    !finite_n(d.angular_upper, 3) || !finite_n(d.stiffness, 6) || !finite_n(d.damping, 6))
		return fail(w, LK_ERR_NONFINITE, "6-DoF limits, stiffness or damping are not finite");
	for (int k = 0; k < 6; ++k)
		if (d.stiffness[k] < 0 || d.damping[k] < 0)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "negative stiffness or damping on DoF %d", k);
	return LK_OK;
}

/* Runs f(world, joint) as the public function `function` once the joint is known to exist. */
template <class F>
lk_status on_joint(const lk_bt_world *world, int id, const char *function, F f)
{
	return guarded(world, function, [&](World *w) {
		JointRec *j = nullptr;
		lk_status st = check_joint(w, id, &j);
		return st != LK_OK ? st : f(w, j);
	});
}

void set_hinge_motor(World *w, btHingeConstraint *h, int enabled, double velocity, double max_force)
{
	/* Bullet bounds the hinge motor row by an impulse per step */
	h->enableAngularMotor(enabled != 0, velocity, max_force * w->fixedStep);
}

void set_slider_motor(btSliderConstraint *s, int enabled, double velocity, double max_force)
{
	s->setPoweredLinMotor(enabled != 0);
	s->setTargetLinMotorVelocity(velocity);
	s->setMaxLinMotorForce(max_force);
}

void activate_joint(JointRec *j)
{
	j->c->getRigidBodyA().activate();
	j->c->getRigidBodyB().activate();
}
} // namespace

extern "C" {

lk_bt_joint_def lk_bt_default_joint_def(lk_bt_joint_type type)
{
	lk_bt_joint_def d;
	std::memset(&d, 0, sizeof d);
	std::memcpy(&d.type, &type, sizeof d.type); /* not loaded: the caller may pass any int */
	d.body_a = -1;
	d.body_b = LK_BT_WORLD;
	d.axis[0] = 1.0;
	d.breaking_impulse = INFINITY;
	d.lower = 1.0;
	d.upper = -1.0;
	d.swing_span1 = d.swing_span2 = d.twist_span = M_PI / 4;
	return d;
}

lk_status lk_bt_joint_create(lk_bt_world *world, const lk_bt_joint_def *def, int *id_out)
{
	return guarded(world, __func__, [&](World *w) {
		if (!def)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "definition is NULL");
		const lk_bt_joint_def &d = *def;
		btRigidBody *ra = nullptr, *rb = nullptr;
		lk_status st = check_joint_def(w, d, &ra, &rb);
		if (st != LK_OK)
			return st;
		const btTransform &ta = ra->getCenterOfMassTransform();
		const btTransform &tb = rb->getCenterOfMassTransform();
		std::unique_ptr<btTypedConstraint> c;
		switch (d.type) {
		case LK_BT_JOINT_POINT: {
			const btVector3 p = vec(d.anchor);
			c.reset(new btPoint2PointConstraint(*ra, *rb, ta.inverse() * p, tb.inverse() * p));
			break;
		}
		case LK_BT_JOINT_HINGE: {
			/* Bullet's hinge turns about the z axis of its frames */
			const btTransform f = joint_frame(d.anchor, d.axis, 2);
			auto *h = new btHingeConstraint(*ra, *rb, ta.inverse() * f, tb.inverse() * f, false);
			c.reset(h);
			if (d.lower <= d.upper)
				h->setLimit(d.lower, d.upper);
			set_hinge_motor(w, h, d.motor, d.motor_velocity, d.motor_max_force);
			break;
		}
		case LK_BT_JOINT_SLIDER: {
			/* Bullet measures the slider as the displacement of its body B from its body A along A's axis;
			 * body_a moving relative to body_b is that with the roles swapped */
			const btTransform f = joint_frame(d.anchor, d.axis, 0);
			auto *s = new btSliderConstraint(*rb, *ra, tb.inverse() * f, ta.inverse() * f, true);
			c.reset(s);
			s->setLowerLinLimit(d.lower);
			s->setUpperLinLimit(d.upper);
			s->setLowerAngLimit(0.0);
			s->setUpperAngLimit(0.0);
			set_slider_motor(s, d.motor, d.motor_velocity, d.motor_max_force);
			break;
		}
		case LK_BT_JOINT_FIXED: {
			btTransform f;
			f.setIdentity();
			f.setOrigin(vec(d.anchor));
			c.reset(new btFixedConstraint(*ra, *rb, ta.inverse() * f, tb.inverse() * f));
			break;
		}
		case LK_BT_JOINT_CONE_TWIST: {
			const btTransform f = joint_frame(d.anchor, d.axis, 0);
			auto *ct = new btConeTwistConstraint(*ra, *rb, ta.inverse() * f, tb.inverse() * f);
			c.reset(ct);
			ct->setLimit(d.swing_span1, d.swing_span2, d.twist_span);
			break;
		}
		case LK_BT_JOINT_SPRING6: {
			const btTransform f = joint_frame(d.anchor, d.axis, 0);
			auto *g = new btGeneric6DofSpring2Constraint(*ra, *rb, ta.inverse() * f, tb.inverse() * f);
			c.reset(g);
			g->setLinearLowerLimit(vec(d.linear_lower));
			g->setLinearUpperLimit(vec(d.linear_upper));
			g->setAngularLowerLimit(vec(d.angular_lower));
			g->setAngularUpperLimit(vec(d.angular_upper));
			for (int k = 0; k < 6; ++k) {
				if (d.stiffness[k] > 0) {
					/* the stiffness asked for: Bullet would otherwise soften a spring whose frequency is
					 * above a quarter of the step rate */
					g->enableSpring(k, true);
					g->setStiffness(k, d.stiffness[k], false);
					g->setDamping(k, d.damping[k], false);
				}
			}
			g->setEquilibriumPoint();
			break;
		}
		default:
			return fail(w, LK_ERR_INVALID_ARGUMENT, "unknown joint type");
		}
		if (std::isfinite(d.breaking_impulse))
			c->setBreakingImpulseThreshold(d.breaking_impulse);
		JointRec rec;
		rec.c = c.get();
		rec.type = d.type;
		rec.a = d.body_a;
		rec.b = d.body_b;
		if (w->joints.size() == w->joints.capacity())
			w->joints.reserve(2 * w->joints.size() + 16);
		w->world->addConstraint(c.get(), !d.collide_connected);
		w->joints.push_back(rec);
		c.release();
		ra->activate();
		rb->activate();
		if (id_out)
			*id_out = (int)w->joints.size() - 1;
		return LK_OK;
	});
}

lk_status lk_bt_joint_destroy(lk_bt_world *world, int id)
{
	return on_joint(world, id, __func__, [&](World *w, JointRec *j) {
		activate_joint(j);
		w->world->removeConstraint(j->c);
		delete j->c;
		j->c = nullptr;
		return LK_OK;
	});
}

int lk_bt_joint_is_valid(const lk_bt_world *world, int id)
{
	lk_status st;
	const World *w = findWorld(world, nullptr, &st);
	return w && id >= 0 && id < (int)w->joints.size() && w->joints[(size_t)id].c;
}

lk_status lk_bt_joint_set_limits(lk_bt_world *world, int id, double lower, double upper)
{
	return on_joint(world, id, __func__, [&](World *w, JointRec *j) {
		if (!std::isfinite(lower) || !std::isfinite(upper))
			return fail(w, LK_ERR_NONFINITE, "limits are not finite");
		if (j->type == LK_BT_JOINT_HINGE) {
			static_cast<btHingeConstraint *>(j->c)->setLimit(lower, upper);
		} else if (j->type == LK_BT_JOINT_SLIDER) {
			auto *s = static_cast<btSliderConstraint *>(j->c);
			s->setLowerLinLimit(lower);
			s->setUpperLinLimit(upper);
		} else {
			return fail(w, LK_ERR_UNSUPPORTED, "joint %d is not a hinge or a slider", id);
		}
		activate_joint(j);
		return LK_OK;
	});
}

lk_status lk_bt_joint_set_motor(lk_bt_world *world, int id, int enabled, double velocity, double max_force)
{
	return on_joint(world, id, __func__, [&](World *w, JointRec *j) {
		if (!std::isfinite(velocity) || !std::isfinite(max_force))
			return fail(w, LK_ERR_NONFINITE, "velocity or force is not finite");
		if (max_force < 0)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "max force %g is negative", max_force);
		if (j->type == LK_BT_JOINT_HINGE)
			set_hinge_motor(w, static_cast<btHingeConstraint *>(j->c), enabled, velocity, max_force);
		else if (j->type == LK_BT_JOINT_SLIDER)
			set_slider_motor(static_cast<btSliderConstraint *>(j->c), enabled, velocity, max_force);
		else
			return fail(w, LK_ERR_UNSUPPORTED, "joint %d is not a hinge or a slider", id);
		activate_joint(j);
		return LK_OK;
	});
}

lk_status lk_bt_joint_get_position(const lk_bt_world *world, int id, double *value)
{
	return on_joint(world, id, __func__, [&](World *w, JointRec *j) {
		if (!value)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "value is NULL");
		if (j->type == LK_BT_JOINT_HINGE) {
			*value = static_cast<btHingeConstraint *>(j->c)->getHingeAngle();
		} else if (j->type == LK_BT_JOINT_SLIDER) {
			auto *s = static_cast<btSliderConstraint *>(j->c);
			s->calculateTransforms(s->getRigidBodyA().getCenterOfMassTransform(),
			                       s->getRigidBodyB().getCenterOfMassTransform());
			*value = s->getLinearPos();
		} else {
			return fail(w, LK_ERR_UNSUPPORTED, "joint %d is not a hinge or a slider", id);
		}
		return LK_OK;
	});
}

lk_status lk_bt_joint_is_enabled(const lk_bt_world *world, int id, int *enabled)
{
	return on_joint(world, id, __func__, [&](World *w, JointRec *j) {
		if (!enabled)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "enabled is NULL");
		*enabled = j->c->isEnabled() ? 1 : 0;
		return LK_OK;
	});
}

} /* extern "C" */

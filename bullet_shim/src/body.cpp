/* Bodies of the C API: shapes, creation and removal, state, materials. */
#include "world_internal.hpp"

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <memory>

using namespace lk::detail;

namespace {

btCollisionShape *make_shape(const lk_bt_shape &s)
{
	switch (s.type) {
	case LK_BT_SHAPE_BOX:
		return new btBoxShape(vec(s.half_extents));
	case LK_BT_SHAPE_SPHERE:
		return new btSphereShape(s.radius);
	case LK_BT_SHAPE_CAPSULE:
		if (s.axis == 0)
			return new btCapsuleShapeX(s.radius, 2.0 * s.half_height);
		if (s.axis == 1)
			return new btCapsuleShape(s.radius, 2.0 * s.half_height);
		return new btCapsuleShapeZ(s.radius, 2.0 * s.half_height);
	case LK_BT_SHAPE_CYLINDER:
		if (s.axis == 0)
			return new btCylinderShapeX(btVector3(s.half_height, s.radius, s.radius));
		if (s.axis == 1)
			return new btCylinderShape(btVector3(s.radius, s.half_height, s.radius));
		return new btCylinderShapeZ(btVector3(s.radius, s.radius, s.half_height));
	case LK_BT_SHAPE_PLANE: {
		btVector3 n = vec(s.normal);
		n.normalize();
		return new btStaticPlaneShape(n, s.offset);
	}
	default:
		return nullptr;
	}
}

lk_status check_shape(const World *w, const lk_bt_shape &s, double mass)
{
	switch (s.type) {
	case LK_BT_SHAPE_BOX:
		if (!finite_n(s.half_extents, 3))
			return fail(w, LK_ERR_NONFINITE, "box half extents are not finite");
		for (int k = 0; k < 3; ++k)
			if (!(s.half_extents[k] > 0))
				return fail(w, LK_ERR_INVALID_ARGUMENT, "box half extent %g is not positive",
				            s.half_extents[k]);
		return LK_OK;
	case LK_BT_SHAPE_SPHERE:
	case LK_BT_SHAPE_CAPSULE:
	case LK_BT_SHAPE_CYLINDER:
		if (!std::isfinite(s.radius) || !std::isfinite(s.half_height))
			return fail(w, LK_ERR_NONFINITE, "radius or half height is not finite");
		if (!(s.radius > 0))
			return fail(w, LK_ERR_INVALID_ARGUMENT, "radius %g is not positive", s.radius);
		if (s.type == LK_BT_SHAPE_CAPSULE && !(s.half_height >= 0))
			return fail(w, LK_ERR_INVALID_ARGUMENT, "capsule half height %g is negative",
			            s.half_height);
		if (s.type == LK_BT_SHAPE_CYLINDER && !(s.half_height > 0))
			return fail(w, LK_ERR_INVALID_ARGUMENT, "cylinder half height %g is not positive",
			            s.half_height);
		if (s.type != LK_BT_SHAPE_SPHERE && (s.axis < 0 || s.axis > 2))
			return fail(w, LK_ERR_INVALID_ARGUMENT, "axis %d is not 0, 1 or 2", s.axis);
		return LK_OK;
	case LK_BT_SHAPE_PLANE: {
		if (!finite_n(s.normal, 3) || !std::isfinite(s.offset))
			return fail(w, LK_ERR_NONFINITE, "plane normal or offset is not finite");
		double n = std::sqrt(s.normal[0] * s.normal[0] + s.normal[1] * s.normal[1] + s.normal[2] * s.normal[2]);
		if (!(n > 1e-12))
			return fail(w, LK_ERR_INVALID_ARGUMENT, "plane normal has zero length");
		if (mass != 0.0)
			return fail(w, LK_ERR_MASS, "a plane must be static (mass 0), not %g", mass);
		return LK_OK;
	}
	default:
		return fail(w, LK_ERR_INVALID_ARGUMENT, "unknown shape type");
	}
}
/* Runs f(world, body) as the public function `function` once the body is known to exist. */
template <class F>
lk_status on_body(const lk_bt_world *world, int id, const char *function, F f)
{
	return guarded(world, function, [&](World *w) {
		btRigidBody *rb = nullptr;
		lk_status st = check_body(w, id, &rb);
		return st != LK_OK ? st : f(w, rb);
	});
}

/* One number a body setter takes, with its admissible range and its name in messages. */
struct ranged_value {
	double x, lo, hi;
	const char *name;
};

/* A body's material setter: the body must exist and every value lie in its range (checked in order, the
 * first failure reported), then apply(body) stores them. */
template <class Apply>
lk_status set_body_values(lk_bt_world *world, int id, const char *function,
                          std::initializer_list<ranged_value> values, Apply apply)
{
	return on_body(world, id, function, [&](World *w, btRigidBody *rb) {
		lk_status st = LK_OK;
		for (const ranged_value &v : values)
			if (st == LK_OK)
				st = check_range(w, v.x, v.lo, v.hi, v.name);
		if (st != LK_OK)
			return st;
		apply(rb);
		return LK_OK;
	});
}

} // namespace

extern "C" {

lk_bt_shape lk_bt_shape_box(double hx, double hy, double hz)
{
	lk_bt_shape s;
	std::memset(&s, 0, sizeof s);
	s.type = LK_BT_SHAPE_BOX;
	s.half_extents[0] = hx;
	s.half_extents[1] = hy;
	s.half_extents[2] = hz;
	return s;
}

lk_bt_shape lk_bt_shape_sphere(double radius)
{
	lk_bt_shape s;
	std::memset(&s, 0, sizeof s);
	s.type = LK_BT_SHAPE_SPHERE;
	s.radius = radius;
	return s;
}

lk_bt_shape lk_bt_shape_capsule(double radius, double half_height, int axis)
{
	lk_bt_shape s;
	std::memset(&s, 0, sizeof s);
	s.type = LK_BT_SHAPE_CAPSULE;
	s.radius = radius;
	s.half_height = half_height;
	s.axis = axis;
	return s;
}

lk_bt_shape lk_bt_shape_cylinder(double radius, double half_height, int axis)
{
	lk_bt_shape s = lk_bt_shape_capsule(radius, half_height, axis);
	s.type = LK_BT_SHAPE_CYLINDER;
	return s;
}

lk_bt_shape lk_bt_shape_plane(double nx, double ny, double nz, double offset)
{
	lk_bt_shape s;
	std::memset(&s, 0, sizeof s);
	s.type = LK_BT_SHAPE_PLANE;
	s.normal[0] = nx;
	s.normal[1] = ny;
	s.normal[2] = nz;
	s.offset = offset;
	return s;
}

lk_bt_body_def lk_bt_default_body_def(void)
{
	lk_bt_body_def d;
	std::memset(&d, 0, sizeof d);
	d.shape = lk_bt_shape_box(0.5, 0.5, 0.5);
	d.mass = 1.0;
	d.rotation[3] = 1.0;
	d.friction = 0.5;
	for (int k = 0; k < 3; ++k) {
		d.linear_factor[k] = 1.0;
		d.angular_factor[k] = 1.0;
	}
	return d;
}

lk_status lk_bt_body_create(lk_bt_world *world, const lk_bt_body_def *def, int *id_out)
{
	return guarded(world, __func__, [&](World *w) {
		if (!def)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "definition is NULL");
		const lk_bt_body_def &d = *def;
		const int type = raw_enum(d.shape.type);
		if (type < 0 || type >= LK_BT_SHAPE_COUNT)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "unknown shape type %d", type);
		if (!std::isfinite(d.mass))
			return fail(w, LK_ERR_NONFINITE, "mass is not finite");
		if (d.mass != 0 && !(d.mass >= LK_BT_MASS_MIN && d.mass <= LK_BT_MASS_MAX))
			return fail(w, LK_ERR_MASS, "mass %g kg outside [%g, %g] kg (0 makes a static body)", d.mass,
			            LK_BT_MASS_MIN, LK_BT_MASS_MAX);
		lk_status st = check_shape(w, d.shape, d.mass);
		btQuaternion rot;
		if (st == LK_OK)
			st = check_vec(w, d.position, 3, "position");
		if (st == LK_OK)
			st = check_quat(w, d.rotation, &rot);
		if (st == LK_OK)
			st = check_vec(w, d.linear_velocity, 3, "linear velocity");
		if (st == LK_OK)
			st = check_vec(w, d.angular_velocity, 3, "angular velocity");
		if (st == LK_OK)
			st = check_vec(w, d.linear_factor, 3, "linear factor");
		if (st == LK_OK)
			st = check_vec(w, d.angular_factor, 3, "angular factor");
		if (st == LK_OK)
			st = check_range(w, d.friction, 0, 1e30, "friction");
		if (st == LK_OK)
			st = check_range(w, d.rolling_friction, 0, 1e30, "rolling friction");
		if (st == LK_OK)
			st = check_range(w, d.spinning_friction, 0, 1e30, "spinning friction");
		if (st == LK_OK)
			st = check_range(w, d.restitution, 0, 1, "restitution");
		if (st == LK_OK)
			st = check_range(w, d.linear_damping, 0, 1, "linear damping");
		if (st == LK_OK)
			st = check_range(w, d.angular_damping, 0, 1, "angular damping");
		if (st != LK_OK)
			return st;

		std::unique_ptr<btCollisionShape> shape(make_shape(d.shape));
		if (!shape)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "unknown shape");
		btVector3 inertia(0, 0, 0);
		if (d.mass > 0) {
			shape->calculateLocalInertia(d.mass, inertia);
			for (int k = 0; k < 3; ++k) {
				const double gyration = std::sqrt(inertia[k] / d.mass);
				if (!(gyration >= LK_BT_GYRATION_MIN && gyration <= LK_BT_GYRATION_MAX))
					return fail(w, LK_ERR_MASS,
					            "moment of inertia %g kg m^2 about local axis %d: radius of gyration %g m "
					            "outside [%g, %g] m (the shape is too thin or too large)",
					            inertia[k], k, gyration, LK_BT_GYRATION_MIN, LK_BT_GYRATION_MAX);
			}
		}
		btRigidBody::btRigidBodyConstructionInfo ci(d.mass, nullptr, shape.get(), inertia);
		ci.m_startWorldTransform.setIdentity();
		if (d.shape.type != LK_BT_SHAPE_PLANE)
			ci.m_startWorldTransform = btTransform(rot, vec(d.position));
		ci.m_friction = d.friction;
		ci.m_rollingFriction = d.rolling_friction;
		ci.m_spinningFriction = d.spinning_friction;
		ci.m_restitution = d.restitution;
		ci.m_linearDamping = d.linear_damping;
		ci.m_angularDamping = d.angular_damping;
		std::unique_ptr<btRigidBody> rb(new btRigidBody(ci));
		if (d.mass > 0) {
			rb->setLinearVelocity(vec(d.linear_velocity));
			rb->setAngularVelocity(vec(d.angular_velocity));
		}
		rb->setLinearFactor(vec(d.linear_factor));
		rb->setAngularFactor(vec(d.angular_factor));
		if (!d.allow_sleep && d.mass > 0)
			rb->setActivationState(DISABLE_DEACTIVATION);
		BodyRec rec;
		rec.body = rb.get();
		rec.shape = shape.get();
		rec.mass = d.mass;
		rec.inertia = inertia;
		if (w->bodies.size() == w->bodies.capacity())
			w->bodies.reserve(2 * w->bodies.size() + 16); /* push_back below cannot throw */
		w->world->addRigidBody(rb.get());
		w->bodies.push_back(rec);
		rb.release();
		shape.release();
		if (id_out)
			*id_out = (int)w->bodies.size() - 1;
		return LK_OK;
	});
}

lk_status lk_bt_body_destroy(lk_bt_world *world, int id)
{
	return on_body(world, id, __func__, [&](World *w, btRigidBody *rb) {
		/* joints on the body go with it: Bullet would keep dangling pointers */
		for (JointRec &j : w->joints) {
			if (j.c && (j.a == id || j.b == id)) {
				w->world->removeConstraint(j.c);
				delete j.c;
				j.c = nullptr;
			}
		}
		w->world->removeRigidBody(rb);
		BodyRec &rec = w->bodies[(size_t)id];
		delete rec.body;
		delete rec.shape;
		rec.body = nullptr;
		rec.shape = nullptr;
		return LK_OK;
	});
}

int lk_bt_body_is_valid(const lk_bt_world *world, int id)
{
	lk_status st;
	const World *w = findWorld(world, nullptr, &st);
	return w && id >= 0 && id < (int)w->bodies.size() && w->bodies[(size_t)id].body;
}

lk_status lk_bt_body_get_transform(const lk_bt_world *world, int id, double position[3], double rotation[4])
{
	return on_body(world, id, __func__, [&](World *w, btRigidBody *rb) {
		if (!position && !rotation)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "both outputs are NULL");
		const btTransform &t = rb->getWorldTransform();
		if (position)
			put(t.getOrigin(), position);
		if (rotation) {
			const btQuaternion q = t.getRotation();
			rotation[0] = q.x(), rotation[1] = q.y(), rotation[2] = q.z(), rotation[3] = q.w();
		}
		return LK_OK;
	});
}

lk_status lk_bt_body_get_velocity(const lk_bt_world *world, int id, double linear[3], double angular[3])
{
	return on_body(world, id, __func__, [&](World *w, btRigidBody *rb) {
		if (!linear && !angular)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "both outputs are NULL");
		if (linear)
			put(rb->getLinearVelocity(), linear);
		if (angular)
			put(rb->getAngularVelocity(), angular);
		return LK_OK;
	});
}

lk_status lk_bt_body_get_mass(const lk_bt_world *world, int id, double *mass, double inertia[3])
{
	return on_body(world, id, __func__, [&](World *w, btRigidBody *) {
		const BodyRec &rec = w->bodies[(size_t)id];
		if (mass)
			*mass = rec.mass;
		if (inertia)
			put(rec.inertia, inertia);
		return LK_OK;
	});
}

lk_status lk_bt_body_contact_count(const lk_bt_world *world, int id, int *points)
{
	return on_body(world, id, __func__, [&](World *w, btRigidBody *rb) {
		if (!points)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "points is NULL");
		count_contacts(w, rb, nullptr, points);
		return LK_OK;
	});
}

lk_status lk_bt_body_set_transform(lk_bt_world *world, int id, const double position[3], const double rotation[4])
{
	return on_body(world, id, __func__, [&](World *w, btRigidBody *rb) {
		btQuaternion q;
		lk_status st = check_vec(w, position, 3, "position");
		if (st == LK_OK)
			st = check_quat(w, rotation, &q);
		if (st != LK_OK)
			return st;
		btTransform t(q, vec(position));
		rb->setCenterOfMassTransform(t);
		rb->setInterpolationWorldTransform(t);
		w->world->updateSingleAabb(rb);
		rb->activate();
		return LK_OK;
	});
}

lk_status lk_bt_body_set_velocity(lk_bt_world *world, int id, const double linear[3], const double angular[3])
{
	return on_body(world, id, __func__, [&](World *w, btRigidBody *rb) {
		lk_status st = check_vec(w, linear, 3, "linear velocity");
		if (st == LK_OK)
			st = check_vec(w, angular, 3, "angular velocity");
		if (st != LK_OK)
			return st;
		if (rb->isStaticObject())
			return fail(w, LK_ERR_INVALID_ARGUMENT, "body %d is static", id);
		rb->setLinearVelocity(vec(linear));
		rb->setAngularVelocity(vec(angular));
		rb->activate();
		return LK_OK;
	});
}

lk_status lk_bt_body_set_friction(lk_bt_world *world, int id, double friction)
{
	return set_body_values(world, id, __func__, {{friction, 0, 1e30, "friction"}},
	                       [&](btRigidBody *rb) { rb->setFriction(friction); });
}

lk_status lk_bt_body_set_rolling_friction(lk_bt_world *world, int id, double rolling, double spinning)
{
	return set_body_values(world, id, __func__,
	                       {{rolling, 0, 1e30, "rolling friction"}, {spinning, 0, 1e30, "spinning friction"}},
	                       [&](btRigidBody *rb) {
		                       rb->setRollingFriction(rolling);
		                       rb->setSpinningFriction(spinning);
	                       });
}

lk_status lk_bt_body_set_restitution(lk_bt_world *world, int id, double restitution)
{
	return set_body_values(world, id, __func__, {{restitution, 0, 1, "restitution"}},
	                       [&](btRigidBody *rb) { rb->setRestitution(restitution); });
}

lk_status lk_bt_body_set_damping(lk_bt_world *world, int id, double linear, double angular)
{
	return set_body_values(world, id, __func__,
	                       {{linear, 0, 1, "linear damping"}, {angular, 0, 1, "angular damping"}},
	                       [&](btRigidBody *rb) { rb->setDamping(linear, angular); });
}

lk_status lk_bt_body_set_factors(lk_bt_world *world, int id, const double linear[3], const double angular[3])
{
	return on_body(world, id, __func__, [&](World *w, btRigidBody *rb) {
		lk_status st = check_vec(w, linear, 3, "linear factor");
		if (st == LK_OK)
			st = check_vec(w, angular, 3, "angular factor");
		if (st != LK_OK)
			return st;
		rb->setLinearFactor(vec(linear));
		rb->setAngularFactor(vec(angular));
		return LK_OK;
	});
}

lk_status lk_bt_body_apply_impulse(lk_bt_world *world, int id, const double impulse[3], const double point[3])
{
	return on_body(world, id, __func__, [&](World *w, btRigidBody *rb) {
		lk_status st = check_vec(w, impulse, 3, "impulse");
		if (st == LK_OK && point)
			st = check_vec(w, point, 3, "point");
		if (st != LK_OK)
			return st;
		const btVector3 rel = point ? vec(point) - rb->getCenterOfMassPosition() : btVector3(0, 0, 0);
		rb->applyImpulse(vec(impulse), rel);
		rb->activate();
		return LK_OK;
	});
}

} /* extern "C" */

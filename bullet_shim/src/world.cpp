/* The C API of lcpkit/bullet.h: a Bullet world behind opaque handles, with a choice of solvers. Every entry
 * point validates its arguments before Bullet sees them and catches every exception. */
#include "lcpkit/bullet.h"
#include "lcpkit/bullet_solver.hpp"

#include "instrument.hpp"

#include <btBulletDynamicsCommon.h>
#include <BulletDynamics/ConstraintSolver/btGeneric6DofSpring2Constraint.h>
#include <BulletDynamics/ConstraintSolver/btNNCGConstraintSolver.h>
#include <BulletDynamics/MLCPSolvers/btDantzigSolver.h>
#include <BulletDynamics/MLCPSolvers/btLemkeSolver.h>
#include <BulletDynamics/MLCPSolvers/btMLCPSolver.h>
#include <BulletDynamics/MLCPSolvers/btSolveProjectedGaussSeidel.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using lk::detail::Instrument;

/* ------------------------------------------------------------------------ Bullet's own solvers, measured */

enum class OwnKind { Iterative, MlcpIterative, MlcpDirect };

/* Bullet's solver Base with the same per-island statistics as the adapter. For the sequential impulse family
 * the iterations are run as Bullet's solveGroupCacheFriendlyIterations runs them, split into the position pass
 * and the velocity iterations so that the two can be timed apart. */
template <class Base>
class OwnSolver : public Base {
public:
	BT_DECLARE_ALIGNED_ALLOCATOR();

	template <class... Args>
	explicit OwnSolver(OwnKind kind, Args... args) : Base(args...), m_kind(kind)
	{
	}

	Instrument ins;

	void prepareSolve(int, int) override { ins.beginStep(); }
	void allSolved(const btContactSolverInfo &, btIDebugDraw *) override { ins.endStep(); }

protected:
	btScalar solveGroupCacheFriendlyIterations(btCollisionObject **bodies, int numBodies,
	                                           btPersistentManifold **manifoldPtr, int numManifolds,
	                                           btTypedConstraint **constraints, int numConstraints,
	                                           const btContactSolverInfo &info, btIDebugDraw *dd) override
	{
		if (!ins.active)
			return run(bodies, numBodies, manifoldPtr, numManifolds, constraints, numConstraints, info, dd,
			           nullptr);
		lk::detail::Pools pools{this->m_tmpSolverBodyPool, this->m_tmpSolverNonContactConstraintPool,
		                        this->m_tmpSolverContactConstraintPool, this->m_tmpSolverContactFrictionConstraintPool,
		                        this->m_tmpSolverContactRollingFrictionConstraintPool};
		lk_engine_step_stats g;
		lk::detail::clearStats(g);
		bool built = false;
		if (ins.residuals || ins.recording) {
			try {
				const double t0 = lk::detail::now();
				built = ins.map.build(pools) == LK_OK;
				g.convert_seconds = lk::detail::now() - t0;
			} catch (...) {
				built = false;
			}
		}
		int fallbacks = 0;
		const double t1 = lk::detail::now();
		g.iterations = run(bodies, numBodies, manifoldPtr, numManifolds, constraints, numConstraints, info, dd,
		                   &fallbacks);
		g.solve_seconds = lk::detail::now() - t1;
		/* Bullet's loop stops early only when no impulse changed (its least-squares threshold is 0) */
		const int maxIt = this->m_maxOverrideNumSolverIterations > info.m_numIterations
		                      ? this->m_maxOverrideNumSolverIterations
		                      : info.m_numIterations;
		g.stop_reason = (m_kind == OwnKind::MlcpDirect && !fallbacks) ||
		                        (m_kind == OwnKind::Iterative && g.iterations < maxIt)
		                    ? LK_STOP_ABSOLUTE
		                    : LK_STOP_ITERATIONS;
		if (fallbacks) {
			g.fallback = 1;
			ins.noteFallback("Bullet's MLCP solver failed and fell back to its sequential impulse solver");
		}
		g.res_before = g.res_after = NAN;
		if (built) {
			try {
				lk_problem *p = ins.map.problem();
				lk_metrics m;
				ins.map.readImpulses(ins.scratch);
				if (lk_problem_metrics(p, ins.map.warmStart().data(), &m) == LK_OK)
					g.res_before = m.res;
				if (lk_problem_metrics(p, ins.scratch.data(), &m) == LK_OK)
					g.res_after = m.res;
				if (ins.recording)
					ins.current.append(p, ins.map.warmStart(), ins.scratch);
			} catch (...) {
			}
			g.rows = ins.map.rows();
			for (int k = 0; k < LK_ROW_KIND_COUNT; ++k)
				g.rows_by_kind[k] = ins.map.rowsByKind()[k];
			g.bodies = lk_problem_body_count(ins.map.problem());
		} else {
			/* counts straight from the pools; joint rows are not told apart by kind here */
			g.rows_by_kind[LK_ROW_JOINT] = pools.nonContact.size();
			g.rows_by_kind[LK_ROW_NORMAL] = pools.contact.size();
			g.rows_by_kind[LK_ROW_FRICTION] = pools.friction.size() + pools.rolling.size();
			for (int k = 0; k < LK_ROW_KIND_COUNT; ++k)
				g.rows += g.rows_by_kind[k];
			for (int i = 0; i < pools.bodies.size(); ++i)
				g.bodies += pools.bodies[i].m_originalBody != nullptr;
		}
		g.fallback_total = ins.fallbacks;
		ins.addGroup(g);
		return 0;
	}

private:
	/* Runs Bullet's iterations; returns the iteration count. */
	int run(btCollisionObject **bodies, int numBodies, btPersistentManifold **manifoldPtr, int numManifolds,
	        btTypedConstraint **constraints, int numConstraints, const btContactSolverInfo &info, btIDebugDraw *dd,
	        int *fallbacks)
	{
		if constexpr (std::is_base_of<btMLCPSolver, Base>::value) {
			const int before = this->getNumFallbacks();
			Base::solveGroupCacheFriendlyIterations(bodies, numBodies, manifoldPtr, numManifolds, constraints,
			                                        numConstraints, info, dd);
			if (fallbacks)
				*fallbacks = this->getNumFallbacks() - before;
			return m_kind == OwnKind::MlcpDirect ? 1 : info.m_numIterations;
		} else {
			this->solveGroupCacheFriendlySplitImpulseIterations(bodies, numBodies, manifoldPtr, numManifolds,
			                                                    constraints, numConstraints, info, dd);
			const int maxIt = this->m_maxOverrideNumSolverIterations > info.m_numIterations
			                      ? this->m_maxOverrideNumSolverIterations
			                      : info.m_numIterations;
			int used = 0;
			for (int it = 0; it < maxIt; ++it) {
				const btScalar r = this->solveSingleIteration(it, bodies, numBodies, manifoldPtr, numManifolds,
				                                              constraints, numConstraints, info, dd);
				used = it + 1;
				if (r <= info.m_leastSquaresResidualThreshold || it >= maxIt - 1)
					break;
			}
			return used;
		}
	}

	OwnKind m_kind;
};

struct BodyRec {
	btRigidBody *body = nullptr;
	btCollisionShape *shape = nullptr;
	double mass = 0.0;
	btVector3 inertia{0, 0, 0};
};

struct JointRec {
	btTypedConstraint *c = nullptr;
	lk_bt_joint_type type = LK_BT_JOINT_POINT;
	int a = -1, b = -1;
};

const uint64_t WORLD_MAGIC = 0x6c6b42756c6c6574ull; /* "lkBullet" */

} // namespace

struct lk_bt_world {
	uint64_t magic = WORLD_MAGIC;
	std::unique_ptr<btDefaultCollisionConfiguration> collision;
	std::unique_ptr<btCollisionDispatcher> dispatcher;
	std::unique_ptr<btBroadphaseInterface> broadphase;
	std::unique_ptr<btDiscreteDynamicsWorld> world;
	std::unique_ptr<btConstraintSolver> solver;
	std::unique_ptr<btMLCPSolverInterface> mlcp;
	Instrument *ins = nullptr;
	lk::BulletSolver *adapter = nullptr; /* when the solver is lcpkit's */
	bool explicitIterations = false;
	std::unique_ptr<btRigidBody> fixed; /* the static world of joints */
	std::vector<BodyRec> bodies;
	std::vector<JointRec> joints;
	std::string spec;
	mutable std::string error;
	std::string fallbackReason;
	int64_t fallbacksBefore = 0; /* of solvers replaced since */
	double fixedStep = 1.0 / 60.0;
	int maxSubSteps = 1;
	int iterations = 10;
	bool residuals = true;
	bool recording = false;
	int64_t steps = 0;

	~lk_bt_world()
	{
		magic = 0;
		if (world) {
			for (JointRec &j : joints)
				if (j.c)
					world->removeConstraint(j.c);
			for (BodyRec &b : bodies)
				if (b.body)
					world->removeRigidBody(b.body);
		}
		world.reset();
		solver.reset();
		mlcp.reset();
		for (JointRec &j : joints)
			delete j.c;
		for (BodyRec &b : bodies) {
			delete b.body;
			delete b.shape;
		}
	}
};

namespace {

lk_status failv(const lk_bt_world *w, lk_status st, const char *fmt, va_list ap)
{
	if (w && w->magic == WORLD_MAGIC) {
		char buf[512];
		std::vsnprintf(buf, sizeof buf, fmt, ap);
		w->error = buf;
	}
	return st;
}

lk_status fail(const lk_bt_world *w, lk_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
lk_status fail(const lk_bt_world *w, lk_status st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	failv(w, st, fmt, ap);
	va_end(ap);
	return st;
}

bool alive(const lk_bt_world *w)
{
	return w && w->magic == WORLD_MAGIC;
}

/* Runs f, turning any exception into a status: nothing C++ crosses the C boundary. */
template <class F>
lk_status guarded(const lk_bt_world *w, const char *what, F f)
{
	if (!alive(w))
		return LK_ERR_INVALID_ARGUMENT;
	w->error.clear();
	try {
		return f();
	} catch (const std::bad_alloc &) {
		return fail(w, LK_ERR_NO_MEMORY, "%s: out of memory", what);
	} catch (const std::exception &e) {
		return fail(w, LK_ERR_STATE, "%s: %s", what, e.what());
	} catch (...) {
		return fail(w, LK_ERR_STATE, "%s: unexpected exception", what);
	}
}

/* The integer a C caller stored in an enum field: C may store any int there, and loading an out-of-range
 * value through the C++ enum type is undefined, so it is read as raw bytes and range-checked first. */
template <class E>
int raw_enum(const E &e)
{
	static_assert(sizeof(E) == sizeof(int), "C enums are int-sized");
	int v;
	std::memcpy(&v, &e, sizeof v);
	return v;
}

bool finite_n(const double *x, int n)
{
	for (int i = 0; i < n; ++i)
		if (!std::isfinite(x[i]))
			return false;
	return true;
}

btVector3 vec(const double *x)
{
	return btVector3(x[0], x[1], x[2]);
}

void put(const btVector3 &v, double *out)
{
	out[0] = v.x();
	out[1] = v.y();
	out[2] = v.z();
}

btRigidBody *body_of(const lk_bt_world *w, int id)
{
	if (id < 0 || id >= (int)w->bodies.size())
		return nullptr;
	return w->bodies[(size_t)id].body;
}

lk_status check_body(const lk_bt_world *w, int id, const char *what, btRigidBody **out)
{
	btRigidBody *b = body_of(w, id);
	if (!b)
		return fail(w, LK_ERR_OUT_OF_RANGE, "%s: body %d does not exist", what, id);
	*out = b;
	return LK_OK;
}

lk_status check_joint(const lk_bt_world *w, int id, const char *what, JointRec **out)
{
	if (id < 0 || id >= (int)w->joints.size() || !w->joints[(size_t)id].c)
		return fail(w, LK_ERR_OUT_OF_RANGE, "%s: joint %d does not exist", what, id);
	*out = const_cast<JointRec *>(&w->joints[(size_t)id]);
	return LK_OK;
}

lk_status check_vec(const lk_bt_world *w, const double *x, int n, const char *what, const char *name)
{
	if (!x)
		return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what, name);
	if (!finite_n(x, n))
		return fail(w, LK_ERR_NONFINITE, "%s: %s is not finite", what, name);
	return LK_OK;
}

lk_status check_quat(const lk_bt_world *w, const double *q, const char *what, btQuaternion *out)
{
	lk_status st = check_vec(w, q, 4, what, "rotation");
	if (st != LK_OK)
		return st;
	double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
	if (!(n > 1e-12) || !std::isfinite(n))
		return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: rotation quaternion has zero length", what);
	*out = btQuaternion(q[0] / n, q[1] / n, q[2] / n, q[3] / n);
	return LK_OK;
}

lk_status check_range(const lk_bt_world *w, double x, double lo, double hi, const char *what, const char *name)
{
	if (!std::isfinite(x))
		return fail(w, LK_ERR_NONFINITE, "%s: %s is not finite", what, name);
	if (x < lo || x > hi)
		return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: %s = %g outside [%g, %g]", what, name, x, lo, hi);
	return LK_OK;
}

/* One number a body setter takes, with its admissible range and its name in messages. */
struct ranged_value {
	double x, lo, hi;
	const char *name;
};

/* A body's material setter: the body must exist and every value lie in its range (checked in order, the
 * first failure reported), then apply(body) stores them. */
template <class Apply>
lk_status set_body_values(lk_bt_world *w, int id, const char *what, std::initializer_list<ranged_value> values,
                          Apply apply)
{
	return guarded(w, what, [&] {
		btRigidBody *rb = nullptr;
		lk_status st = check_body(w, id, what, &rb);
		for (const ranged_value &v : values)
			if (st == LK_OK)
				st = check_range(w, v.x, v.lo, v.hi, what, v.name);
		if (st != LK_OK)
			return st;
		apply(rb);
		return LK_OK;
	});
}

int64_t total_fallbacks(const lk_bt_world *w)
{
	return w->fallbacksBefore + (w->ins ? w->ins->fallbacks : 0);
}

/* The lcpkit spec sets the iteration limit itself when it names iters=. */
bool spec_sets_iterations(const char *spec)
{
	const char *params = std::strchr(spec, ':');
	if (!params)
		return false;
	for (const char *s = params; (s = std::strstr(s, "iters=")) != nullptr; ++s)
		if (s[-1] == ':' || s[-1] == ',')
			return true;
	return false;
}

lk_status set_solver(lk_bt_world *w, const char *spec)
{
	if (!spec || !*spec)
		return fail(w, LK_ERR_INVALID_ARGUMENT, "set_solver: spec is NULL or empty");
	const std::string s(spec);
	std::unique_ptr<btConstraintSolver> solver;
	std::unique_ptr<btMLCPSolverInterface> mlcp;
	Instrument *ins = nullptr;
	lk::BulletSolver *adapter = nullptr;
	bool explicitIterations = false;
	if (s == "bullet-si") {
		auto *p = new OwnSolver<btSequentialImpulseConstraintSolver>(OwnKind::Iterative);
		solver.reset(p);
		ins = &p->ins;
	} else if (s == "bullet-nncg") {
		auto *p = new OwnSolver<btNNCGConstraintSolver>(OwnKind::Iterative);
		solver.reset(p);
		ins = &p->ins;
	} else if (s == "bullet-dantzig" || s == "bullet-lemke" || s == "bullet-pgs") {
		OwnKind kind = OwnKind::MlcpDirect;
		if (s == "bullet-dantzig") {
			mlcp.reset(new btDantzigSolver());
		} else if (s == "bullet-lemke") {
			mlcp.reset(new btLemkeSolver());
		} else {
			mlcp.reset(new btSolveProjectedGaussSeidel());
			kind = OwnKind::MlcpIterative;
		}
		auto *p = new OwnSolver<btMLCPSolver>(kind, mlcp.get());
		solver.reset(p);
		ins = &p->ins;
	} else if (s.compare(0, 7, "bullet-") == 0) {
		return fail(w, LK_ERR_PARSE,
		            "set_solver: unknown Bullet solver '%s' (bullet-si, bullet-nncg, bullet-dantzig, "
		            "bullet-lemke, bullet-pgs)",
		            spec);
	} else {
		lk_solver_config cfg;
		char err[256] = "";
		if (lk_config_parse(spec, &cfg, err, sizeof err) != LK_OK)
			return fail(w, LK_ERR_PARSE, "set_solver: %s", err);
		explicitIterations = spec_sets_iterations(spec);
		if (!explicitIterations)
			cfg.max_iterations = w->iterations;
		std::string msg;
		lk_status st = lk::detail::probeConfig(cfg, msg);
		if (st != LK_OK)
			return fail(w, st, "set_solver: '%s': %s", spec, msg.c_str());
		adapter = new lk::BulletSolver(cfg);
		solver.reset(adapter);
		ins = adapter->instrument();
	}
	ins->residuals = w->residuals;
	ins->recording = w->recording;
	w->world->setConstraintSolver(solver.get());
	if (w->ins)
		w->fallbacksBefore += w->ins->fallbacks;
	if (w->ins && !w->ins->fallbackReason.empty())
		w->fallbackReason = w->ins->fallbackReason;
	w->solver = std::move(solver);
	w->mlcp = std::move(mlcp);
	w->ins = ins;
	w->adapter = adapter;
	w->explicitIterations = explicitIterations;
	w->spec = s;
	return LK_OK;
}

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

lk_status check_shape(const lk_bt_world *w, const lk_bt_shape &s, double mass)
{
	const char *what = "body_create";
	switch (s.type) {
	case LK_BT_SHAPE_BOX:
		if (!finite_n(s.half_extents, 3))
			return fail(w, LK_ERR_NONFINITE, "%s: box half extents are not finite", what);
		for (int k = 0; k < 3; ++k)
			if (!(s.half_extents[k] > 0))
				return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: box half extent %g is not positive", what,
				            s.half_extents[k]);
		return LK_OK;
	case LK_BT_SHAPE_SPHERE:
	case LK_BT_SHAPE_CAPSULE:
	case LK_BT_SHAPE_CYLINDER:
		if (!std::isfinite(s.radius) || !std::isfinite(s.half_height))
			return fail(w, LK_ERR_NONFINITE, "%s: radius or half height is not finite", what);
		if (!(s.radius > 0))
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: radius %g is not positive", what, s.radius);
		if (s.type == LK_BT_SHAPE_CAPSULE && !(s.half_height >= 0))
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: capsule half height %g is negative", what,
			            s.half_height);
		if (s.type == LK_BT_SHAPE_CYLINDER && !(s.half_height > 0))
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: cylinder half height %g is not positive", what,
			            s.half_height);
		if (s.type != LK_BT_SHAPE_SPHERE && (s.axis < 0 || s.axis > 2))
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: axis %d is not 0, 1 or 2", what, s.axis);
		return LK_OK;
	case LK_BT_SHAPE_PLANE: {
		if (!finite_n(s.normal, 3) || !std::isfinite(s.offset))
			return fail(w, LK_ERR_NONFINITE, "%s: plane normal or offset is not finite", what);
		double n = std::sqrt(s.normal[0] * s.normal[0] + s.normal[1] * s.normal[1] + s.normal[2] * s.normal[2]);
		if (!(n > 1e-12))
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: plane normal has zero length", what);
		if (mass != 0.0)
			return fail(w, LK_ERR_MASS, "%s: a plane must be static (mass 0), not %g", what, mass);
		return LK_OK;
	}
	default:
		return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: unknown shape type", what);
	}
}

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

lk_status check_joint_def(const lk_bt_world *w, const lk_bt_joint_def &d, btRigidBody **ra, btRigidBody **rb)
{
	const char *what = "joint_create";
	const int type = raw_enum(d.type);
	if (type < 0 || type >= LK_BT_JOINT_COUNT)
		return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: unknown joint type %d", what, type);
	lk_status st = check_body(w, d.body_a, what, ra);
	if (st != LK_OK)
		return st;
	if (d.body_b == LK_BT_WORLD) {
		*rb = w->fixed.get();
	} else {
		st = check_body(w, d.body_b, what, rb);
		if (st != LK_OK)
			return st;
		if (d.body_b == d.body_a)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: body_a and body_b are the same body %d", what,
			            d.body_a);
	}
	if ((*ra)->isStaticOrKinematicObject() && (*rb)->isStaticOrKinematicObject())
		return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: both sides are static", what);
	st = check_vec(w, d.anchor, 3, what, "anchor");
	if (st != LK_OK)
		return st;
	if (joint_uses_axis(d.type)) {
		st = check_vec(w, d.axis, 3, what, "axis");
		if (st != LK_OK)
			return st;
		if (!(std::sqrt(d.axis[0] * d.axis[0] + d.axis[1] * d.axis[1] + d.axis[2] * d.axis[2]) > 1e-12))
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: axis has zero length", what);
	}
	if (std::isnan(d.breaking_impulse) || !(d.breaking_impulse > 0))
		return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: breaking impulse %g is not positive", what,
		            d.breaking_impulse);
	const double scalars[] = {d.lower, d.upper, d.motor_velocity, d.motor_max_force, d.swing_span1, d.swing_span2,
	                          d.twist_span};
	if (!finite_n(scalars, 7))
		return fail(w, LK_ERR_NONFINITE, "%s: limits, motor or spans are not finite", what);
	if (d.motor_max_force < 0)
		return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: motor max force %g is negative", what, d.motor_max_force);
	if (d.swing_span1 < 0 || d.swing_span2 < 0 || d.twist_span < 0)
		return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: cone-twist spans must be >= 0", what);
	if (!finite_n(d.linear_lower, 3) || !finite_n(d.linear_upper, 3) || !finite_n(d.angular_lower, 3) ||
	    !finite_n(d.angular_upper, 3) || !finite_n(d.stiffness, 6) || !finite_n(d.damping, 6))
		return fail(w, LK_ERR_NONFINITE, "%s: 6-DoF limits, stiffness or damping are not finite", what);
	for (int k = 0; k < 6; ++k)
		if (d.stiffness[k] < 0 || d.damping[k] < 0)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: negative stiffness or damping on DoF %d", what, k);
	return LK_OK;
}

void set_hinge_motor(lk_bt_world *w, btHingeConstraint *h, int enabled, double velocity, double max_force)
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

lk_status do_step(lk_bt_world *w, double dt, int maxSub, int *steps_out, lk_engine_step_stats *stats)
{
	w->ins->active = stats != nullptr || w->recording;
	w->ins->resetAccumulated();
	const double t0 = lk::detail::now();
	/* Bullet returns the fixed steps due, of which it takes at most maxSub (dropping the rest) */
	int n = w->world->stepSimulation(dt, maxSub, w->fixedStep);
	if (n > maxSub)
		n = maxSub;
	const double t1 = lk::detail::now();
	w->steps += n;
	if (steps_out)
		*steps_out = n;
	if (stats) {
		*stats = w->ins->accumulated();
		stats->step_seconds = t1 - t0;
		stats->fallback_total = total_fallbacks(w);
	}
	return LK_OK;
}

void write_err(char *err, size_t size, const char *msg)
{
	if (err && size) {
		std::snprintf(err, size, "%s", msg);
	}
}

} // namespace

/* ================================================================================================ world */

extern "C" {

lk_bt_world_def lk_bt_default_world_def(void)
{
	lk_bt_world_def d;
	std::memset(&d, 0, sizeof d);
	d.gravity[2] = -9.81;
	d.fixed_time_step = 1.0 / 60.0;
	d.max_sub_steps = 1;
	d.solver = nullptr;
	d.iterations = 10;
	d.erp = 0.2;
	d.contact_erp = 0.2;
	d.cfm = 0.0;
	d.split_impulse = 1;
	d.warm_start = 1;
	d.friction_directions = 2;
	return d;
}

lk_status lk_bt_world_create(const lk_bt_world_def *def, lk_bt_world **out, char *err, size_t err_size)
{
	write_err(err, err_size, "");
	if (!out) {
		write_err(err, err_size, "world_create: out is NULL");
		return LK_ERR_INVALID_ARGUMENT;
	}
	*out = nullptr;
	if (!def) {
		write_err(err, err_size, "world_create: definition is NULL");
		return LK_ERR_INVALID_ARGUMENT;
	}
	char msg[256];
	if (!finite_n(def->gravity, 3) || !std::isfinite(def->fixed_time_step) || !std::isfinite(def->erp) ||
	    !std::isfinite(def->contact_erp) || !std::isfinite(def->cfm)) {
		write_err(err, err_size, "world_create: gravity, time step, erp or cfm is not finite");
		return LK_ERR_NONFINITE;
	}
	if (!(def->fixed_time_step > 0) || def->max_sub_steps < 1 || def->iterations < 1 || def->erp < 0 ||
	    def->erp > 1 || def->contact_erp < 0 || def->contact_erp > 1 || def->cfm < 0 ||
	    (def->friction_directions != 1 && def->friction_directions != 2)) {
		std::snprintf(msg, sizeof msg,
		              "world_create: needs time step > 0 (%g), sub-steps >= 1 (%d), iterations >= 1 (%d), erp "
		              "and contact erp in [0, 1] (%g, %g), cfm >= 0 (%g), 1 or 2 friction directions (%d)",
		              def->fixed_time_step, def->max_sub_steps, def->iterations, def->erp, def->contact_erp,
		              def->cfm, def->friction_directions);
		write_err(err, err_size, msg);
		return LK_ERR_INVALID_ARGUMENT;
	}
	try {
		std::unique_ptr<lk_bt_world> w(new lk_bt_world);
		w->collision.reset(new btDefaultCollisionConfiguration());
		w->dispatcher.reset(new btCollisionDispatcher(w->collision.get()));
		w->broadphase.reset(new btDbvtBroadphase());
		/* Bullet makes (and owns) a sequential impulse solver until set_solver replaces it */
		w->world.reset(new btDiscreteDynamicsWorld(w->dispatcher.get(), w->broadphase.get(), nullptr,
		                                           w->collision.get()));
		w->fixed.reset(new btRigidBody(0.0, nullptr, nullptr));
		w->fixedStep = def->fixed_time_step;
		w->maxSubSteps = def->max_sub_steps;
		w->iterations = def->iterations;
		w->world->setGravity(vec(def->gravity));
		btContactSolverInfo &si = w->world->getSolverInfo();
		si.m_numIterations = def->iterations;
		si.m_erp = def->erp;
		si.m_erp2 = def->contact_erp;
		si.m_globalCfm = def->cfm;
		si.m_splitImpulse = def->split_impulse ? 1 : 0;
		if (def->warm_start)
			si.m_solverMode |= SOLVER_USE_WARMSTARTING;
		else
			si.m_solverMode &= ~SOLVER_USE_WARMSTARTING;
		if (def->friction_directions == 2)
			si.m_solverMode |= SOLVER_USE_2_FRICTION_DIRECTIONS;
		lk_status st = set_solver(w.get(), def->solver ? def->solver : "bullet-si");
		if (st != LK_OK) {
			write_err(err, err_size, w->error.c_str());
			return st;
		}
		*out = w.release();
		return LK_OK;
	} catch (const std::bad_alloc &) {
		write_err(err, err_size, "world_create: out of memory");
		return LK_ERR_NO_MEMORY;
	} catch (...) {
		write_err(err, err_size, "world_create: unexpected exception");
		return LK_ERR_STATE;
	}
}

void lk_bt_world_destroy(lk_bt_world *w)
{
	if (!alive(w))
		return;
	try {
		delete w;
	} catch (...) {
	}
}

const char *lk_bt_world_error(const lk_bt_world *w)
{
	if (!w)
		return "no world (NULL)";
	if (!alive(w))
		return "not a live world";
	return w->error.c_str();
}

lk_status lk_bt_world_set_solver(lk_bt_world *w, const char *spec)
{
	return guarded(w, "set_solver", [&] { return set_solver(w, spec); });
}

const char *lk_bt_world_solver(const lk_bt_world *w)
{
	return alive(w) ? w->spec.c_str() : "";
}

lk_status lk_bt_world_set_iterations(lk_bt_world *w, int iterations)
{
	return guarded(w, "set_iterations", [&] {
		if (iterations < 1)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "set_iterations: %d is not >= 1", iterations);
		if (w->adapter && !w->explicitIterations) {
			lk_solver_config cfg = w->adapter->config();
			cfg.max_iterations = iterations;
			lk_status st = w->adapter->setConfig(cfg);
			if (st != LK_OK)
				return fail(w, st, "set_iterations: %s", w->adapter->error());
		}
		w->iterations = iterations;
		w->world->getSolverInfo().m_numIterations = iterations;
		return LK_OK;
	});
}

lk_status lk_bt_world_set_gravity(lk_bt_world *w, const double gravity[3])
{
	return guarded(w, "set_gravity", [&] {
		lk_status st = check_vec(w, gravity, 3, "set_gravity", "gravity");
		if (st != LK_OK)
			return st;
		w->world->setGravity(vec(gravity));
		return LK_OK;
	});
}

lk_status lk_bt_world_set_residuals(lk_bt_world *w, int on)
{
	return guarded(w, "set_residuals", [&] {
		w->residuals = on != 0;
		w->ins->residuals = w->residuals;
		return LK_OK;
	});
}

lk_status lk_bt_world_step(lk_bt_world *w, lk_engine_step_stats *stats)
{
	return guarded(w, "step", [&] { return do_step(w, w->fixedStep, 1, nullptr, stats); });
}

lk_status lk_bt_world_advance(lk_bt_world *w, double dt, int *steps_out, lk_engine_step_stats *stats)
{
	return guarded(w, "advance", [&] {
		if (!std::isfinite(dt) || dt < 0)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "advance: dt %g is not a finite time >= 0", dt);
		return do_step(w, dt, w->maxSubSteps, steps_out, stats);
	});
}

double lk_bt_world_time(const lk_bt_world *w)
{
	return alive(w) ? (double)w->steps * w->fixedStep : 0.0;
}

int64_t lk_bt_world_fallbacks(const lk_bt_world *w)
{
	return alive(w) ? total_fallbacks(w) : 0;
}

const char *lk_bt_world_fallback_reason(const lk_bt_world *w)
{
	if (!alive(w))
		return "";
	if (w->ins && !w->ins->fallbackReason.empty())
		return w->ins->fallbackReason.c_str();
	return w->fallbackReason.c_str();
}

lk_status lk_bt_world_contact_count(const lk_bt_world *w, int *manifolds, int *points)
{
	return guarded(w, "contact_count", [&] {
		int m = 0, p = 0;
		btDispatcher *d = w->world->getDispatcher();
		for (int i = 0; i < d->getNumManifolds(); ++i) {
			const int n = d->getManifoldByIndexInternal(i)->getNumContacts();
			m += n > 0;
			p += n;
		}
		if (manifolds)
			*manifolds = m;
		if (points)
			*points = p;
		return LK_OK;
	});
}

lk_status lk_bt_world_max_penetration(const lk_bt_world *w, double *depth)
{
	return guarded(w, "max_penetration", [&] {
		if (!depth)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "max_penetration: depth is NULL");
		double d = 0.0;
		btDispatcher *disp = w->world->getDispatcher();
		for (int i = 0; i < disp->getNumManifolds(); ++i) {
			const btPersistentManifold *m = disp->getManifoldByIndexInternal(i);
			for (int k = 0; k < m->getNumContacts(); ++k)
				d = std::fmax(d, -m->getContactPoint(k).getDistance());
		}
		*depth = d;
		return LK_OK;
	});
}

int lk_bt_world_body_count(const lk_bt_world *w)
{
	if (!alive(w))
		return 0;
	int n = 0;
	for (const BodyRec &b : w->bodies)
		n += b.body != nullptr;
	return n;
}

int lk_bt_world_joint_count(const lk_bt_world *w)
{
	if (!alive(w))
		return 0;
	int n = 0;
	for (const JointRec &j : w->joints)
		n += j.c != nullptr;
	return n;
}

lk_status lk_bt_world_set_recording(lk_bt_world *w, int on)
{
	return guarded(w, "set_recording", [&] {
		w->recording = on != 0;
		w->ins->recording = w->recording;
		if (!w->recording) {
			w->ins->current.clear();
			w->ins->last.clear();
		}
		return LK_OK;
	});
}

lk_status lk_bt_world_recorded_problem(lk_bt_world *w, lk_problem **out)
{
	return guarded(w, "recorded_problem", [&] {
		if (!out)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "recorded_problem: out is NULL");
		*out = nullptr;
		if (!w->recording)
			return fail(w, LK_ERR_STATE, "recorded_problem: recording is off");
		lk_status st = w->ins->last.build(out);
		if (st != LK_OK)
			return fail(w, st, "recorded_problem: the recorded rows do not form a valid problem");
		return LK_OK;
	});
}

lk_status lk_bt_world_recorded_solution(const lk_bt_world *w, double *lambda, int n)
{
	return guarded(w, "recorded_solution", [&] {
		const std::vector<double> &s = w->ins->last.solution;
		if (!lambda && n > 0)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "recorded_solution: lambda is NULL");
		if (n != (int)s.size())
			return fail(w, LK_ERR_OUT_OF_RANGE, "recorded_solution: %d values asked, %d recorded", n,
			            (int)s.size());
		if (n > 0)
			std::memcpy(lambda, s.data(), s.size() * sizeof(double));
		return LK_OK;
	});
}

/* =============================================================================================== bodies */

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

lk_status lk_bt_body_create(lk_bt_world *w, const lk_bt_body_def *def, int *id_out)
{
	return guarded(w, "body_create", [&] {
		const char *what = "body_create";
		if (!def)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: definition is NULL", what);
		const lk_bt_body_def &d = *def;
		const int type = raw_enum(d.shape.type);
		if (type < 0 || type >= LK_BT_SHAPE_COUNT)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: unknown shape type %d", what, type);
		if (!std::isfinite(d.mass))
			return fail(w, LK_ERR_NONFINITE, "%s: mass is not finite", what);
		if (d.mass < 0)
			return fail(w, LK_ERR_MASS, "%s: negative mass %g", what, d.mass);
		lk_status st = check_shape(w, d.shape, d.mass);
		btQuaternion rot;
		if (st == LK_OK)
			st = check_vec(w, d.position, 3, what, "position");
		if (st == LK_OK)
			st = check_quat(w, d.rotation, what, &rot);
		if (st == LK_OK)
			st = check_vec(w, d.linear_velocity, 3, what, "linear velocity");
		if (st == LK_OK)
			st = check_vec(w, d.angular_velocity, 3, what, "angular velocity");
		if (st == LK_OK)
			st = check_vec(w, d.linear_factor, 3, what, "linear factor");
		if (st == LK_OK)
			st = check_vec(w, d.angular_factor, 3, what, "angular factor");
		if (st == LK_OK)
			st = check_range(w, d.friction, 0, 1e30, what, "friction");
		if (st == LK_OK)
			st = check_range(w, d.rolling_friction, 0, 1e30, what, "rolling friction");
		if (st == LK_OK)
			st = check_range(w, d.spinning_friction, 0, 1e30, what, "spinning friction");
		if (st == LK_OK)
			st = check_range(w, d.restitution, 0, 1, what, "restitution");
		if (st == LK_OK)
			st = check_range(w, d.linear_damping, 0, 1, what, "linear damping");
		if (st == LK_OK)
			st = check_range(w, d.angular_damping, 0, 1, what, "angular damping");
		if (st != LK_OK)
			return st;

		std::unique_ptr<btCollisionShape> shape(make_shape(d.shape));
		if (!shape)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: unknown shape", what);
		btVector3 inertia(0, 0, 0);
		if (d.mass > 0)
			shape->calculateLocalInertia(d.mass, inertia);
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

lk_status lk_bt_body_destroy(lk_bt_world *w, int id)
{
	return guarded(w, "body_destroy", [&] {
		btRigidBody *rb = nullptr;
		lk_status st = check_body(w, id, "body_destroy", &rb);
		if (st != LK_OK)
			return st;
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

lk_status lk_bt_body_get_transform(const lk_bt_world *w, int id, double position[3], double rotation[4])
{
	return guarded(w, "body_get_transform", [&] {
		btRigidBody *rb = nullptr;
		lk_status st = check_body(w, id, "body_get_transform", &rb);
		if (st != LK_OK)
			return st;
		if (!position && !rotation)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "body_get_transform: both outputs are NULL");
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

lk_status lk_bt_body_get_velocity(const lk_bt_world *w, int id, double linear[3], double angular[3])
{
	return guarded(w, "body_get_velocity", [&] {
		btRigidBody *rb = nullptr;
		lk_status st = check_body(w, id, "body_get_velocity", &rb);
		if (st != LK_OK)
			return st;
		if (!linear && !angular)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "body_get_velocity: both outputs are NULL");
		if (linear)
			put(rb->getLinearVelocity(), linear);
		if (angular)
			put(rb->getAngularVelocity(), angular);
		return LK_OK;
	});
}

lk_status lk_bt_body_get_mass(const lk_bt_world *w, int id, double *mass, double inertia[3])
{
	return guarded(w, "body_get_mass", [&] {
		btRigidBody *rb = nullptr;
		lk_status st = check_body(w, id, "body_get_mass", &rb);
		if (st != LK_OK)
			return st;
		const BodyRec &rec = w->bodies[(size_t)id];
		if (mass)
			*mass = rec.mass;
		if (inertia)
			put(rec.inertia, inertia);
		return LK_OK;
	});
}

lk_status lk_bt_body_contact_count(const lk_bt_world *w, int id, int *points)
{
	return guarded(w, "body_contact_count", [&] {
		btRigidBody *rb = nullptr;
		lk_status st = check_body(w, id, "body_contact_count", &rb);
		if (st != LK_OK)
			return st;
		if (!points)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "body_contact_count: points is NULL");
		int n = 0;
		btDispatcher *d = w->world->getDispatcher();
		for (int i = 0; i < d->getNumManifolds(); ++i) {
			const btPersistentManifold *m = d->getManifoldByIndexInternal(i);
			if (m->getBody0() == rb || m->getBody1() == rb)
				n += m->getNumContacts();
		}
		*points = n;
		return LK_OK;
	});
}

lk_status lk_bt_body_set_transform(lk_bt_world *w, int id, const double position[3], const double rotation[4])
{
	return guarded(w, "body_set_transform", [&] {
		const char *what = "body_set_transform";
		btRigidBody *rb = nullptr;
		lk_status st = check_body(w, id, what, &rb);
		btQuaternion q;
		if (st == LK_OK)
			st = check_vec(w, position, 3, what, "position");
		if (st == LK_OK)
			st = check_quat(w, rotation, what, &q);
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

lk_status lk_bt_body_set_velocity(lk_bt_world *w, int id, const double linear[3], const double angular[3])
{
	return guarded(w, "body_set_velocity", [&] {
		const char *what = "body_set_velocity";
		btRigidBody *rb = nullptr;
		lk_status st = check_body(w, id, what, &rb);
		if (st == LK_OK)
			st = check_vec(w, linear, 3, what, "linear velocity");
		if (st == LK_OK)
			st = check_vec(w, angular, 3, what, "angular velocity");
		if (st != LK_OK)
			return st;
		if (rb->isStaticObject())
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: body %d is static", what, id);
		rb->setLinearVelocity(vec(linear));
		rb->setAngularVelocity(vec(angular));
		rb->activate();
		return LK_OK;
	});
}

lk_status lk_bt_body_set_friction(lk_bt_world *w, int id, double friction)
{
	return set_body_values(w, id, "body_set_friction", {{friction, 0, 1e30, "friction"}},
	                       [&](btRigidBody *rb) { rb->setFriction(friction); });
}

lk_status lk_bt_body_set_rolling_friction(lk_bt_world *w, int id, double rolling, double spinning)
{
	return set_body_values(w, id, "body_set_rolling_friction",
	                       {{rolling, 0, 1e30, "rolling friction"}, {spinning, 0, 1e30, "spinning friction"}},
	                       [&](btRigidBody *rb) {
		                       rb->setRollingFriction(rolling);
		                       rb->setSpinningFriction(spinning);
	                       });
}

lk_status lk_bt_body_set_restitution(lk_bt_world *w, int id, double restitution)
{
	return set_body_values(w, id, "body_set_restitution", {{restitution, 0, 1, "restitution"}},
	                       [&](btRigidBody *rb) { rb->setRestitution(restitution); });
}

lk_status lk_bt_body_set_damping(lk_bt_world *w, int id, double linear, double angular)
{
	return set_body_values(w, id, "body_set_damping",
	                       {{linear, 0, 1, "linear damping"}, {angular, 0, 1, "angular damping"}},
	                       [&](btRigidBody *rb) { rb->setDamping(linear, angular); });
}

lk_status lk_bt_body_set_factors(lk_bt_world *w, int id, const double linear[3], const double angular[3])
{
	return guarded(w, "body_set_factors", [&] {
		const char *what = "body_set_factors";
		btRigidBody *rb = nullptr;
		lk_status st = check_body(w, id, what, &rb);
		if (st == LK_OK)
			st = check_vec(w, linear, 3, what, "linear factor");
		if (st == LK_OK)
			st = check_vec(w, angular, 3, what, "angular factor");
		if (st != LK_OK)
			return st;
		rb->setLinearFactor(vec(linear));
		rb->setAngularFactor(vec(angular));
		return LK_OK;
	});
}

lk_status lk_bt_body_apply_impulse(lk_bt_world *w, int id, const double impulse[3], const double point[3])
{
	return guarded(w, "body_apply_impulse", [&] {
		const char *what = "body_apply_impulse";
		btRigidBody *rb = nullptr;
		lk_status st = check_body(w, id, what, &rb);
		if (st == LK_OK)
			st = check_vec(w, impulse, 3, what, "impulse");
		if (st == LK_OK && point)
			st = check_vec(w, point, 3, what, "point");
		if (st != LK_OK)
			return st;
		const btVector3 rel = point ? vec(point) - rb->getCenterOfMassPosition() : btVector3(0, 0, 0);
		rb->applyImpulse(vec(impulse), rel);
		rb->activate();
		return LK_OK;
	});
}

/* =============================================================================================== joints */

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

lk_status lk_bt_joint_create(lk_bt_world *w, const lk_bt_joint_def *def, int *id_out)
{
	return guarded(w, "joint_create", [&] {
		if (!def)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "joint_create: definition is NULL");
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
			return fail(w, LK_ERR_INVALID_ARGUMENT, "joint_create: unknown joint type");
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

lk_status lk_bt_joint_destroy(lk_bt_world *w, int id)
{
	return guarded(w, "joint_destroy", [&] {
		JointRec *j = nullptr;
		lk_status st = check_joint(w, id, "joint_destroy", &j);
		if (st != LK_OK)
			return st;
		activate_joint(j);
		w->world->removeConstraint(j->c);
		delete j->c;
		j->c = nullptr;
		return LK_OK;
	});
}

lk_status lk_bt_joint_set_limits(lk_bt_world *w, int id, double lower, double upper)
{
	return guarded(w, "joint_set_limits", [&] {
		const char *what = "joint_set_limits";
		JointRec *j = nullptr;
		lk_status st = check_joint(w, id, what, &j);
		if (st != LK_OK)
			return st;
		if (!std::isfinite(lower) || !std::isfinite(upper))
			return fail(w, LK_ERR_NONFINITE, "%s: limits are not finite", what);
		if (j->type == LK_BT_JOINT_HINGE) {
			static_cast<btHingeConstraint *>(j->c)->setLimit(lower, upper);
		} else if (j->type == LK_BT_JOINT_SLIDER) {
			auto *s = static_cast<btSliderConstraint *>(j->c);
			s->setLowerLinLimit(lower);
			s->setUpperLinLimit(upper);
		} else {
			return fail(w, LK_ERR_UNSUPPORTED, "%s: joint %d is not a hinge or a slider", what, id);
		}
		activate_joint(j);
		return LK_OK;
	});
}

lk_status lk_bt_joint_set_motor(lk_bt_world *w, int id, int enabled, double velocity, double max_force)
{
	return guarded(w, "joint_set_motor", [&] {
		const char *what = "joint_set_motor";
		JointRec *j = nullptr;
		lk_status st = check_joint(w, id, what, &j);
		if (st != LK_OK)
			return st;
		if (!std::isfinite(velocity) || !std::isfinite(max_force))
			return fail(w, LK_ERR_NONFINITE, "%s: velocity or force is not finite", what);
		if (max_force < 0)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: max force %g is negative", what, max_force);
		if (j->type == LK_BT_JOINT_HINGE)
			set_hinge_motor(w, static_cast<btHingeConstraint *>(j->c), enabled, velocity, max_force);
		else if (j->type == LK_BT_JOINT_SLIDER)
			set_slider_motor(static_cast<btSliderConstraint *>(j->c), enabled, velocity, max_force);
		else
			return fail(w, LK_ERR_UNSUPPORTED, "%s: joint %d is not a hinge or a slider", what, id);
		activate_joint(j);
		return LK_OK;
	});
}

lk_status lk_bt_joint_get_position(const lk_bt_world *w, int id, double *value)
{
	return guarded(w, "joint_get_position", [&] {
		const char *what = "joint_get_position";
		JointRec *j = nullptr;
		lk_status st = check_joint(w, id, what, &j);
		if (st != LK_OK)
			return st;
		if (!value)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%s: value is NULL", what);
		if (j->type == LK_BT_JOINT_HINGE) {
			*value = static_cast<btHingeConstraint *>(j->c)->getHingeAngle();
		} else if (j->type == LK_BT_JOINT_SLIDER) {
			auto *s = static_cast<btSliderConstraint *>(j->c);
			s->calculateTransforms(s->getRigidBodyA().getCenterOfMassTransform(),
			                       s->getRigidBodyB().getCenterOfMassTransform());
			*value = s->getLinearPos();
		} else {
			return fail(w, LK_ERR_UNSUPPORTED, "%s: joint %d is not a hinge or a slider", what, id);
		}
		return LK_OK;
	});
}

lk_status lk_bt_joint_is_enabled(const lk_bt_world *w, int id, int *enabled)
{
	return guarded(w, "joint_is_enabled", [&] {
		JointRec *j = nullptr;
		lk_status st = check_joint(w, id, "joint_is_enabled", &j);
		if (st != LK_OK)
			return st;
		if (!enabled)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "joint_is_enabled: enabled is NULL");
		*enabled = j->c->isEnabled() ? 1 : 0;
		return LK_OK;
	});
}

} /* extern "C" */

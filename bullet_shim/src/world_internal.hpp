/* Internal: the world behind the C API of lcpkit/bullet.h and the checks every entry point shares (api.cpp),
 * for world.cpp, body.cpp and joint.cpp. */
#ifndef LCPKIT_BULLET_WORLD_INTERNAL_HPP
#define LCPKIT_BULLET_WORLD_INTERNAL_HPP

#include "lcpkit/bullet.h"
#include "lcpkit/bullet_multibody_solver.hpp"
#include "lcpkit/bullet_solver.hpp"

#include "instrument.hpp"

#include <btBulletDynamicsCommon.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <BulletDynamics/MLCPSolvers/btMLCPSolverInterface.h>

#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace lk {
namespace detail {

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

/* One of Bullet's own solvers, made by name (own_solvers.cpp); mlcp is the pivoting method an MLCP solver
 * refers to and must outlive it. */
struct OwnSolverParts {
	std::unique_ptr<btConstraintSolver> solver;
	std::unique_ptr<btMLCPSolverInterface> mlcp;
	Instrument *ins = nullptr;
	/* why solver is nullptr, if this build maps a class to the name */
	lk_status status = LK_OK;
	std::string why;
};
/* Bullet's solver named `name` (an LK_ENGINE_BULLET entry of lk_engine_solvers(), with its options if it
 * takes any), or solver == nullptr: with status and why set if the options are wrong or this Bullet cannot
 * run it, with status LK_OK if this build maps no class to the name. */
OwnSolverParts makeOwnSolver(const char *name);
/* In a multibody world: Bullet's btMultiBodyConstraintSolver for "bullet-si", else solver == nullptr. */
OwnSolverParts makeOwnMultiBodySolver(const char *name);

/* What an lk_bt_world handle names (lcpkit/bullet.h: the handle is an index and a generation, never this
 * address). */
struct World {
	std::unique_ptr<btDefaultCollisionConfiguration> collision;
	std::unique_ptr<btCollisionDispatcher> dispatcher;
	std::unique_ptr<btBroadphaseInterface> broadphase;
	std::unique_ptr<btDiscreteDynamicsWorld> world;
	std::unique_ptr<btConstraintSolver> solver;
	std::unique_ptr<btMLCPSolverInterface> mlcp;
	/* a multibody world (lk_bt_world_def.multibody) and the solver it was made with, until set_solver's */
	bool multibody = false;
	std::unique_ptr<btMultiBodyConstraintSolver> placeholder;
	Instrument *ins = nullptr;
	std::unique_ptr<btRigidBody> fixed; /* the static world of joints */
	std::vector<BodyRec> bodies;
	std::vector<JointRec> joints;
	std::string spec;
	mutable std::string error;
	/* the public function being run, the prefix of error */
	mutable const char *function = "";
	std::string fallbackReason;
	int64_t fallbacksBefore = 0; /* of solvers replaced since */
	double fixedStep = 1.0 / 60.0;
	int maxSubSteps = 1;
	int iterations = 10;
	bool residuals = true;
	bool recording = false;
	int64_t steps = 0;

	~World();
};

/* The registry of live worlds (api.cpp). registerWorld takes ownership and returns the new handle (throws
 * std::bad_alloc); findWorld returns the world a handle names, or nullptr with *st set and the reason kept
 * for lk_bt_world_error (not kept when function is NULL, for queries); unregisterWorld also retires the
 * handle and hands the world back for deletion. */
lk_bt_world *registerWorld(std::unique_ptr<World> w);
World *findWorld(const lk_bt_world *handle, const char *function, lk_status *st);
std::unique_ptr<World> unregisterWorld(lk_bt_world *handle, const char *function, lk_status *st);
/* Why the last handle this thread passed was refused ("" if none was). */
const char *handleError();

/* Stores "function: message" as the world's error and returns st. */
lk_status fail(const World *w, lk_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Runs f(world) as the public function `function` once the handle is known to name a live world, turning any
 * exception into a status: nothing C++ crosses the C boundary. */
template <class F>
lk_status guarded(const lk_bt_world *handle, const char *function, F f)
{
	lk_status st = LK_OK;
	World *w = findWorld(handle, function, &st);
	if (!w)
		return st;
	w->error.clear();
	w->function = function;
	try {
		return f(w);
	} catch (const std::bad_alloc &) {
		return fail(w, LK_ERR_NO_MEMORY, "out of memory");
	} catch (const std::exception &e) {
		return fail(w, LK_ERR_STATE, "%s", e.what());
	} catch (...) {
		return fail(w, LK_ERR_STATE, "unexpected exception");
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

bool finite_n(const double *x, int n);
inline btVector3 vec(const double *x)
{
	return btVector3(x[0], x[1], x[2]);
}
inline void put(const btVector3 &v, double *out)
{
	out[0] = v.x();
	out[1] = v.y();
	out[2] = v.z();
}

/* Argument checks: LK_OK, or the failure stored in w under the current function's name. */
lk_status check_body(const World *w, int id, btRigidBody **out);
lk_status check_joint(const World *w, int id, JointRec **out);
lk_status check_vec(const World *w, const double *x, int n, const char *name);
lk_status check_quat(const World *w, const double *q, btQuaternion *out);
lk_status check_range(const World *w, double x, double lo, double hi, const char *name);

/* Contact manifolds with points and contact points after the last step, of every body or only those touching
 * `body`; either output may be NULL. */
void count_contacts(const World *w, const btRigidBody *body, int *manifolds, int *points);

} // namespace detail
} // namespace lk

#endif

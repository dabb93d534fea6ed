/* Internal: the world behind the C API of lcpkit/bullet.h and the checks every entry point shares (api.cpp),
 * for world.cpp, body.cpp and joint.cpp. */
#ifndef LCPKIT_BULLET_WORLD_INTERNAL_HPP
#define LCPKIT_BULLET_WORLD_INTERNAL_HPP

#include "lcpkit/bullet.h"
#include "lcpkit/bullet_solver.hpp"

#include "instrument.hpp"

#include <btBulletDynamicsCommon.h>
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
};
/* Bullet's solver named `name` (an LK_ENGINE_BULLET entry of lk_engine_solvers()), or solver == nullptr if
 * this build maps no class to that name. */
OwnSolverParts makeOwnSolver(const char *name);

} // namespace detail
} // namespace lk

const uint64_t LK_BT_WORLD_MAGIC = 0x6c6b42756c6c6574ull; /* "lkBullet" */

struct lk_bt_world {
	uint64_t magic = LK_BT_WORLD_MAGIC;
	std::unique_ptr<btDefaultCollisionConfiguration> collision;
	std::unique_ptr<btCollisionDispatcher> dispatcher;
	std::unique_ptr<btBroadphaseInterface> broadphase;
	std::unique_ptr<btDiscreteDynamicsWorld> world;
	std::unique_ptr<btConstraintSolver> solver;
	std::unique_ptr<btMLCPSolverInterface> mlcp;
	lk::detail::Instrument *ins = nullptr;
	lk::BulletSolver *adapter = nullptr; /* when the solver is lcpkit's */
	bool explicitIterations = false;
	std::unique_ptr<btRigidBody> fixed; /* the static world of joints */
	std::vector<lk::detail::BodyRec> bodies;
	std::vector<lk::detail::JointRec> joints;
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

	~lk_bt_world();
};

namespace lk {
namespace detail {

/* Stores "function: message" as the world's error and returns st. */
lk_status fail(const lk_bt_world *w, lk_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

bool alive(const lk_bt_world *w);

/* Runs f as the public function `function` of w, turning any exception into a status: nothing C++ crosses the
 * C boundary. */
template <class F>
lk_status guarded(const lk_bt_world *w, const char *function, F f)
{
	if (!alive(w))
		return LK_ERR_INVALID_ARGUMENT;
	w->error.clear();
	w->function = function;
	try {
		return f();
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
lk_status check_body(const lk_bt_world *w, int id, btRigidBody **out);
lk_status check_joint(const lk_bt_world *w, int id, JointRec **out);
lk_status check_vec(const lk_bt_world *w, const double *x, int n, const char *name);
lk_status check_quat(const lk_bt_world *w, const double *q, btQuaternion *out);
lk_status check_range(const lk_bt_world *w, double x, double lo, double hi, const char *name);

/* Contact manifolds with points and contact points after the last step, of every body or only those touching
 * `body`; either output may be NULL. */
void count_contacts(const lk_bt_world *w, const btRigidBody *body, int *manifolds, int *points);

} // namespace detail
} // namespace lk

#endif

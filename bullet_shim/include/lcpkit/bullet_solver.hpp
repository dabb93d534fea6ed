/*
 * lcpkit for Bullet, C++: a drop-in constraint solver that hands Bullet's constraint rows to an lcpkit method.
 *
 *     lk::BulletSolver solver("amgs");                  // an lcpkit spec; must outlive its use by the world
 *     dynamicsWorld->setConstraintSolver(&solver);      // the one-line swap
 *
 * What the spec leaves open comes from the world's btContactSolverInfo at every solve: the work budget from
 * m_numIterations unless the spec sets iters= or budget=, a random sweep order from SOLVER_RANDMIZE_ORDER
 * unless it sets its order (order=, or gsp and esp, which are orders), and for "pgs" without w= the
 * relaxation from m_sor. Settings the adapter cannot honour (SOLVER_INTERLEAVE_CONTACT_AND_FRICTION_CONSTRAINTS,
 * m_leastSquaresResidualThreshold, ...) are said once each; docs/bullet.md lists every setting. Constructed
 * from an lk_solver_config instead, the configuration is taken as it is (its max_iterations is the iteration
 * count).
 *
 * What the solver does other than asked is said once each kind on stderr ("lcpkit: ...", unless setQuiet(true)
 * or LCPKIT_QUIET=1), kept in notes() and counted in the statistics (notes_total): a spec it could not read
 * (it runs "pgs" then), a setting it does not honour, the first island that fell back to Bullet's iterations,
 * rows left out and bodies frozen because they are not finite. The statistics measure no residual unless
 * asked (setResiduals(true)): lcpkit's methods then skip their two RES evaluations.
 *
 * Bullet's own setup builds the rows (contacts, friction, rolling friction, joints) exactly as for its
 * sequential impulse solver; this class replaces only the velocity iterations: it builds an lk_problem from the
 * rows and solver bodies, runs lk_solve and writes the impulses and body velocity changes back, and Bullet's
 * finish integrates and stores the warm-start impulses. The split-impulse position pass runs unchanged. When a
 * guard trips (non-finite, diverged, bad diagonal) or lk_solve fails, Bullet's own iterations solve that
 * island and the fallback is counted.
 *
 * A btMultiBodyDynamicsWorld needs lk::BulletMultiBodySolver (lcpkit/bullet_multibody_solver.hpp) instead.
 *
 * Needs Bullet's double-precision build (pkg-config bullet-float64, which defines BT_USE_DOUBLE_PRECISION).
 * Link with pkg-config lcpkit-bullet. One solver serves one world at a time (not thread-safe).
 */
#ifndef LCPKIT_BULLET_SOLVER_HPP
#define LCPKIT_BULLET_SOLVER_HPP

#include "lcpkit/engine.h"
#include "lcpkit/lcpkit.h"

#include <BulletDynamics/ConstraintSolver/btSequentialImpulseConstraintSolver.h>

#include <cstdint>
#include <type_traits>

static_assert(std::is_same<btScalar, double>::value,
              "lcpkit's Bullet adapter needs Bullet's double-precision build (-DBT_USE_DOUBLE_PRECISION, "
              "pkg-config bullet-float64)");

namespace lk {

namespace detail {
class Instrument;
template <class S>
struct RigidRows;
}

/* The lcpkit side of the Bullet solvers (lk::BulletSolver, lk::BulletMultiBodySolver): the configuration, what
 * could not be honoured, statistics and recording. Not constructed on its own. */
class LK_API BulletSolverCore {
public:
	BulletSolverCore(const BulletSolverCore &) = delete;
	BulletSolverCore &operator=(const BulletSolverCore &) = delete;

	/* Replaces the configuration (LK_ERR_INVALID_ARGUMENT, message in error(), if it does not validate); it
	 * is then taken as it is, as by the constructor. */
	lk_status setConfig(const lk_solver_config &config);
	/* Replaces the spec (LK_ERR_PARSE or the status of the check, message in error(), if it is refused). */
	lk_status setSpec(const char *spec);
	/* The configuration as given (before what the btContactSolverInfo fills in at a solve). */
	const lk_solver_config &config() const;
	/* The configuration the last solve ran with (config() until the first solve). */
	const lk_solver_config &lastConfig() const;
	/* The last configuration or fallback message ("" if none). */
	const char *error() const;
	/* What this solver could not do as asked, each said once ("" if none), one line each: a spec it could not
	 * read, btContactSolverInfo settings it does not honour, the first fallback to Bullet's iterations, rows
	 * left out and bodies frozen because they are not finite, rows left to Bullet, a world that never hands it
	 * its rows. Each is also printed once on stderr as "lcpkit: ..." unless setQuiet(true) or LCPKIT_QUIET=1. */
	const char *notes() const;
	/* true: nothing on stderr (notes() and the statistics keep everything). */
	void setQuiet(bool on);
	/* RES before and after every solve in the statistics (res_initial, res_final), at the cost of two residual
	 * evaluations a solve (8-13 % of the constraint phase under pgs, docs/bullet.md). Off by default: RES is
	 * then NaN and lcpkit's methods skip the evaluations (measure=0) unless the spec sets measure=. */
	void setResiduals(bool on);
	bool residuals() const;

	/* Statistics of the last simulation step (all islands): filled between prepareSolve and allSolved,
	 * which the world calls around every internal step. step_seconds is 0 here. */
	const lk_engine_step_stats &lastStepStats() const;
	/* Islands that fell back to Bullet's iterations since construction, and why the last one did. */
	int64_t fallbacks() const;
	const char *fallbackReason() const;

	/* Recording of the last step's rows and impulses (see lk_bt_world_set_recording in lcpkit/bullet.h):
	 * recordedProblem returns a new problem owned by the caller; recordedSolution the impulses. */
	void setRecording(bool on);
	lk_status recordedProblem(lk_problem **out) const;
	const double *recordedSolution(int *count) const;

	/* For the C API of lcpkit/bullet.h; not for applications. */
	detail::Instrument *instrument();

protected:
	struct Impl;

	/* An invalid configuration or spec is replaced by "pgs" and reported by error(); a spec, also on stderr
	 * (notes()). */
	explicit BulletSolverCore(const lk_solver_config &config);
	explicit BulletSolverCore(const char *spec);
	~BulletSolverCore();

	Impl *m_impl;
};

class LK_API BulletSolver : public btSequentialImpulseConstraintSolver, public BulletSolverCore {
public:
	BT_DECLARE_ALIGNED_ALLOCATOR();

	/* The configuration is copied; an invalid one is replaced by lk_default_config(LK_METHOD_PGS) and
	 * reported by error(). Its max_iterations is the iteration count (Bullet's m_numIterations is not used). */
	explicit BulletSolver(const lk_solver_config &config);
	/* An lcpkit spec (lk_config_parse), completed from the world's btContactSolverInfo at each solve (above).
	 * An invalid spec is replaced by "pgs", said once on stderr and reported by error() and notes(). */
	explicit BulletSolver(const char *spec);
	/* "auto" (docs/solvers.md, "auto"): the world's iterations as a mean over the steps, warm starting from
	 * Bullet's own impulses. */
	BulletSolver();
	~BulletSolver() override;

	/* Around every internal step. A step in which the world handed this solver no island (a
	 * btMultiBodyDynamicsWorld solves with its btMultiBodyConstraintSolver, whatever setConstraintSolver was
	 * given) is said once in notes(). */
	void prepareSolve(int numBodies, int numManifolds) override;
	void allSolved(const btContactSolverInfo &info, btIDebugDraw *debugDrawer) override;

protected:
	/* Bullet's solver bodies, as its convertBodies makes them, its pool sized without copying the last
	 * island's. */
	void convertBodies(btCollisionObject **bodies, int numBodies, const btContactSolverInfo &infoGlobal) override;
	/* The joints' rows written by their getInfo2 straight into lcpkit's row definitions (Bullet's own
	 * per-row setup, for its iterations, is made only if they run: a fallback). */
	void convertJoints(btTypedConstraint **constraints, int numConstraints,
	                   const btContactSolverInfo &infoGlobal) override;
	/* The contacts' rows made by lcpkit from the manifold points, as Bullet's setup defines them (Bullet's
	 * per-row setup is made only for its split-impulse pass and its own iterations in a fallback). */
	void convertContacts(btPersistentManifold **manifoldPtr, int numManifolds,
	                     const btContactSolverInfo &infoGlobal) override;
	btScalar solveGroupCacheFriendlyIterations(btCollisionObject **bodies, int numBodies,
	                                           btPersistentManifold **manifoldPtr, int numManifolds,
	                                           btTypedConstraint **constraints, int numConstraints,
	                                           const btContactSolverInfo &infoGlobal,
	                                           btIDebugDraw *debugDrawer) override;

private:
	/* the rows of its islands, shared with lk::BulletMultiBodySolver */
	template <class>
	friend struct detail::RigidRows;
};

} // namespace lk

#endif

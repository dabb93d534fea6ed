/*
 * lcpkit for Bullet's multibody worlds, C++: the rigid-body rows of a btMultiBodyDynamicsWorld solved by an lcpkit
 * method, the multibody rows by Bullet.
 *
 *     lk::BulletMultiBodySolver solver("pgs");               // an lcpkit spec; must outlive its use by the world
 *     multiBodyWorld->setMultiBodyConstraintSolver(&solver);  // setConstraintSolver does not reach the islands
 *
 * A btMultiBodyDynamicsWorld hands its islands to the btMultiBodyConstraintSolver of its island callback, which
 * only setMultiBodyConstraintSolver (and the constructor) replace. This solver is one. An island of rigid bodies
 * alone is solved exactly as lk::BulletSolver solves it (same spec, settings, statistics, notes, recording,
 * fallback; its rows made by lcpkit straight from the manifold points and the constraints' getInfo2). An island
 * with a btMultiBody's rows (a link's contacts, also with rigid bodies; btMultiBodyConstraint rows) gets Bullet's
 * setup of every row: lcpkit solves the rigid-body rows, then Bullet's own iterations sweep every row of the
 * island, the rigid ones starting from lcpkit's impulses. The multibody rows are said once in notes() with their
 * number. An island whose rigid-body rows fall back is solved by Bullet entirely, as btMultiBodyConstraintSolver
 * solves it.
 *
 * lastStepStats() counts the rows and iterations of lcpkit (the rigid-body rows). Needs Bullet's double
 * precision build; link with pkg-config lcpkit-bullet. One solver serves one world at a time.
 */
#ifndef LCPKIT_BULLET_MULTIBODY_SOLVER_HPP
#define LCPKIT_BULLET_MULTIBODY_SOLVER_HPP

#include "lcpkit/bullet_solver.hpp"

#include <BulletDynamics/Featherstone/btMultiBodyConstraintSolver.h>

namespace lk {

class LK_API BulletMultiBodySolver : public btMultiBodyConstraintSolver, public BulletSolverCore {
public:
	BT_DECLARE_ALIGNED_ALLOCATOR();

	/* As lk::BulletSolver's constructors. */
	explicit BulletMultiBodySolver(const lk_solver_config &config);
	explicit BulletMultiBodySolver(const char *spec);
	~BulletMultiBodySolver() override;

	void prepareSolve(int numBodies, int numManifolds) override;
	void allSolved(const btContactSolverInfo &info, btIDebugDraw *debugDrawer) override;
	btConstraintSolverType getSolverType() const override { return BT_MULTIBODY_SOLVER; }

protected:
	/* Notes whether the island has a btMultiBody's rows (a link's contact, a btMultiBodyConstraint). */
	btScalar solveGroupCacheFriendlySetup(btCollisionObject **bodies, int numBodies,
	                                      btPersistentManifold **manifoldPtr, int numManifolds,
	                                      btTypedConstraint **constraints, int numConstraints,
	                                      const btContactSolverInfo &infoGlobal, btIDebugDraw *debugDrawer) override;
	/* Bullet's solver bodies as lk::BulletSolver makes them (Bullet's convertBodies, its pool sized without
	 * copying the last island's). */
	void convertBodies(btCollisionObject **bodies, int numBodies, const btContactSolverInfo &infoGlobal) override;
	/* In an island of rigid bodies alone, as lk::BulletSolver's: the joints' rows by their getInfo2 straight into
	 * lcpkit's row definitions; in an island with a btMultiBody's rows, Bullet's. */
	void convertJoints(btTypedConstraint **constraints, int numConstraints,
	                   const btContactSolverInfo &infoGlobal) override;
	/* In an island of rigid bodies alone, the contacts' rows made by lcpkit from the manifold points, as
	 * lk::BulletSolver makes them; in an island with a btMultiBody's rows, Bullet's. */
	void convertContacts(btPersistentManifold **manifoldPtr, int numManifolds,
	                     const btContactSolverInfo &infoGlobal) override;
	btScalar solveGroupCacheFriendlyIterations(btCollisionObject **bodies, int numBodies,
	                                           btPersistentManifold **manifoldPtr, int numManifolds,
	                                           btTypedConstraint **constraints, int numConstraints,
	                                           const btContactSolverInfo &infoGlobal,
	                                           btIDebugDraw *debugDrawer) override;

private:
	/* the rows of its islands of rigid bodies, shared with lk::BulletSolver */
	template <class>
	friend struct detail::RigidRows;

	bool m_mixed = false; /* the island being solved has a btMultiBody's rows */
};

} // namespace lk

#endif

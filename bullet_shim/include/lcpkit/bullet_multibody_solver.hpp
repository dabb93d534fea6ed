/*
 * lcpkit for Bullet's multibody worlds, C++: the rigid-body rows of a btMultiBodyDynamicsWorld solved by an lcpkit
 * method, the multibody rows by Bullet.
 *
 *     lk::BulletMultiBodySolver solver("pgs");               // an lcpkit spec; must outlive its use by the world
 *     multiBodyWorld->setMultiBodyConstraintSolver(&solver);  // setConstraintSolver does not reach the islands
 *
 * A btMultiBodyDynamicsWorld hands its islands to the btMultiBodyConstraintSolver of its island callback, which
 * only setMultiBodyConstraintSolver (and the constructor) replace. This solver is one: Bullet's setup builds
 * the rows of the btMultiBodies as usual, and the rows between btRigidBodies and static objects (contacts, friction,
 * rolling friction, btTypedConstraint rows) are made by lcpkit exactly as in lk::BulletSolver, straight from the
 * manifold points and the constraints' getInfo2 (same spec, settings, statistics, notes, recording, fallback); then Bullet's own multibody iterations solve the rows that touch a btMultiBody (its
 * contacts, including those with rigid bodies, and its btMultiBodyConstraint rows), starting from the
 * rigid-body impulses lcpkit applied. Those rows are said once in notes() with their number. An island whose
 * rigid-body rows fall back is solved by Bullet entirely, as btMultiBodyConstraintSolver solves it.
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
	/* As lk::BulletSolver's: the joints' rows by their getInfo2 straight into lcpkit's row definitions. */
	void convertJoints(btTypedConstraint **constraints, int numConstraints,
	                   const btContactSolverInfo &infoGlobal) override;
	/* The rigid-body contacts' rows made by lcpkit from the manifold points, as lk::BulletSolver makes them;
	 * the manifolds with a btMultiBody's link, the btMultiBodyConstraints' rows and their warm start by
	 * btMultiBodyConstraintSolver::convertContacts. */
	void convertContacts(btPersistentManifold **manifoldPtr, int numManifolds,
	                     const btContactSolverInfo &infoGlobal) override;
	btScalar solveGroupCacheFriendlyIterations(btCollisionObject **bodies, int numBodies,
	                                           btPersistentManifold **manifoldPtr, int numManifolds,
	                                           btTypedConstraint **constraints, int numConstraints,
	                                           const btContactSolverInfo &infoGlobal,
	                                           btIDebugDraw *debugDrawer) override;

private:
	/* Bullet's own rigid-body rows and sweep order for its iterations (a fallback). */
	void convertForBullet(btPersistentManifold **manifolds, int numManifolds, btTypedConstraint **constraints,
	                      int numConstraints, const btContactSolverInfo &info);

	btAlignedObjectArray<btPersistentManifold *> m_linkManifolds; /* convertContacts: those with a link */
};

} // namespace lk

#endif

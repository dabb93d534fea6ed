/* lk::BulletMultiBodySolver: the rigid-body rows of a multibody world solved by lcpkit, the rest by Bullet. */
#include "lcpkit/bullet_multibody_solver.hpp"

#include "solver_core.hpp"

#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>

#include <algorithm>

namespace lk {

namespace {

bool touchesLink(const btPersistentManifold &m)
{
	return btMultiBodyLinkCollider::upcast(m.getBody0()) || btMultiBodyLinkCollider::upcast(m.getBody1());
}

} // namespace

BulletMultiBodySolver::BulletMultiBodySolver(const lk_solver_config &config) : BulletSolverCore(config) {}

BulletMultiBodySolver::BulletMultiBodySolver(const char *spec) : BulletSolverCore(spec) {}

BulletMultiBodySolver::~BulletMultiBodySolver() = default;

void BulletMultiBodySolver::prepareSolve(int numBodies, int)
{
	m_impl->beginStep(numBodies);
}

void BulletMultiBodySolver::allSolved(const btContactSolverInfo &, btIDebugDraw *)
{
	m_impl->endStep();
}

btScalar BulletMultiBodySolver::solveGroupCacheFriendlySetup(btCollisionObject **bodies, int numBodies,
                                                             btPersistentManifold **manifolds, int numManifolds,
                                                             btTypedConstraint **constraints, int numConstraints,
                                                             const btContactSolverInfo &info, btIDebugDraw *debugDrawer)
{
	/* an island with a btMultiBody's rows (a contact of a link, a btMultiBodyConstraint) is solved by lcpkit's
	 * rigid rows first and then Bullet's sweeps over every row, which need Bullet's own rigid rows */
	m_mixed = m_tmpNumMultiBodyConstraints > 0;
	for (int i = 0; i < numManifolds && !m_mixed; ++i)
		m_mixed = touchesLink(*manifolds[i]);
	return btMultiBodyConstraintSolver::solveGroupCacheFriendlySetup(bodies, numBodies, manifolds, numManifolds,
	                                                                 constraints, numConstraints, info, debugDrawer);
}

void BulletMultiBodySolver::convertBodies(btCollisionObject **bodies, int numBodies, const btContactSolverInfo &info)
{
	detail::RigidRows<BulletMultiBodySolver>::bodies(*this, bodies, numBodies, info);
}

void BulletMultiBodySolver::convertJoints(btTypedConstraint **constraints, int numConstraints,
                                          const btContactSolverInfo &info)
{
	if (m_mixed)
		btMultiBodyConstraintSolver::convertJoints(constraints, numConstraints, info);
	else
		detail::RigidRows<BulletMultiBodySolver>::joints(*this, constraints, numConstraints, info);
}

void BulletMultiBodySolver::convertContacts(btPersistentManifold **manifolds, int numManifolds,
                                           const btContactSolverInfo &info)
{
	if (m_mixed)
		btMultiBodyConstraintSolver::convertContacts(manifolds, numManifolds, info);
	else
		detail::RigidRows<BulletMultiBodySolver>::contacts(*this, manifolds, numManifolds, info);
}

btScalar BulletMultiBodySolver::solveGroupCacheFriendlyIterations(btCollisionObject **bodies, int numBodies,
                                                                  btPersistentManifold **manifoldPtr,
                                                                  int numManifolds, btTypedConstraint **constraints,
                                                                  int numConstraints, const btContactSolverInfo &info,
                                                                  btIDebugDraw *debugDrawer)
{
	/* the split-impulse position pass works on the rigid-body contacts only, in Bullet's multibody solver too */
	solveGroupCacheFriendlySplitImpulseIterations(bodies, numBodies, manifoldPtr, numManifolds, constraints,
	                                              numConstraints, info, debugDrawer);
	const detail::Pools pools{m_tmpSolverBodyPool, m_tmpSolverNonContactConstraintPool,
	                          m_tmpSolverContactConstraintPool, m_tmpSolverContactFrictionConstraintPool,
	                          m_tmpSolverContactRollingFrictionConstraintPool};
	const int maxIterations = std::max(m_maxOverrideNumSolverIterations, info.m_numIterations);
	/* the sweeps of btMultiBodyConstraintSolver: its rigid-body rows, then its multibody rows */
	auto bulletSweep = [&](int it, int rigidConstraints) {
		return btMultiBodyConstraintSolver::solveSingleIteration(it, bodies, numBodies, manifoldPtr, numManifolds,
		                                                         constraints, rigidConstraints, info, debugDrawer);
	};
	const bool solved = m_impl->solveIsland(pools, info, [&] {
		if (!m_mixed) /* Bullet's own rigid rows; in a mixed island Bullet's setup made them already */
			detail::RigidRows<BulletMultiBodySolver>::forBullet(*this, manifoldPtr, numManifolds, constraints,
			                                                    numConstraints, info);
		return runBulletIterations(maxIterations, info, [&](int it) { return bulletSweep(it, numConstraints); });
	});
	if (!solved)
		return 0;
	if (!m_mixed) {
		/* the contacts' impulses are at their points already: Bullet's finish writes back from an empty pool */
		m_tmpSolverContactConstraintPool.resizeNoInitialize(0);
		return 0;
	}
	const int multiBodyRows = m_multiBodyNonContactConstraints.size() + m_multiBodyNormalContactConstraints.size() +
	                          m_multiBodyFrictionContactConstraints.size() +
	                          m_multiBodyTorsionalFrictionContactConstraints.size() +
	                          m_multiBodySpinningFrictionContactConstraints.size();
	m_impl->note(NOTE_MULTIBODY, "multibody constraints: %d rows solved by Bullet's btMultiBodyConstraintSolver, "
	             "its sweeps over every row of their islands from lcpkit's rigid-body impulses", multiBodyRows);
	/* Bullet's sweeps over every row of the island, the rigid rows starting from lcpkit's impulses (written to
	 * them and to the bodies' velocities): a rigid body that rests on a link and carries another body is balanced
	 * between the two kinds of rows, which a pass over the multibody rows alone left it out of (a box on a box on a
	 * table of links sank into the one below). The typed constraints' obsolete solve hook is passed as
	 * Bullet's own iterations pass it. */
	runBulletIterations(maxIterations, info, [&](int it) { return bulletSweep(it, numConstraints); });
	return 0;
}

} // namespace lk

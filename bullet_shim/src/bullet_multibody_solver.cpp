/* lk::BulletMultiBodySolver: the rigid-body rows of a multibody world solved by lcpkit, the rest by Bullet. */
#include "lcpkit/bullet_multibody_solver.hpp"

#include "solver_core.hpp"

#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>

#include <algorithm>

namespace lk {

namespace {

/* Empties the rigid-body pools for as long as it lives and gives them back unchanged, so that
 * btMultiBodyConstraintSolver::solveSingleIteration sweeps the multibody rows only. The pools keep their
 * storage: resizeNoInitialize neither destroys nor fills rows. */
class HiddenRows {
public:
	explicit HiddenRows(const detail::Pools &pools)
	    : m_pools{&pools.nonContact, &pools.contact, &pools.friction, &pools.rolling}
	{
		for (int i = 0; i < 4; ++i) {
			m_sizes[i] = m_pools[i]->size();
			m_pools[i]->resizeNoInitialize(0);
		}
	}
	~HiddenRows()
	{
		for (int i = 0; i < 4; ++i)
			m_pools[i]->resizeNoInitialize(m_sizes[i]);
	}
	HiddenRows(const HiddenRows &) = delete;
	HiddenRows &operator=(const HiddenRows &) = delete;

private:
	btConstraintArray *m_pools[4];
	int m_sizes[4];
};

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

void BulletMultiBodySolver::convertJoints(btTypedConstraint **constraints, int numConstraints,
                                          const btContactSolverInfo &info)
{
	convertJointRows(m_impl->ins.map, constraints, numConstraints, info, m_tmpConstraintSizesPool,
	                 m_tmpSolverNonContactConstraintPool, m_tmpSolverBodyPool, m_maxOverrideNumSolverIterations,
	                 [&](btRigidBody &body) { return getOrInitSolverBody(body, info.m_timeStep); });
}

static bool touchesLink(const btPersistentManifold &m)
{
	return btMultiBodyLinkCollider::upcast(m.getBody0()) || btMultiBodyLinkCollider::upcast(m.getBody1());
}

void BulletMultiBodySolver::convertContacts(btPersistentManifold **manifolds, int numManifolds,
                                           const btContactSolverInfo &info)
{
	/* as btMultiBodyConstraintSolver::convertContacts sorts them: a manifold without a link is a rigid-body
	 * contact (lk::BulletSolver's rows), one with a link Bullet's multibody contact */
	detail::RowMap &map = m_impl->ins.map;
	map.beginContacts(m_tmpSolverBodyPool, info, m_impl->config.method == LK_METHOD_AUTO);
	m_linkManifolds.resizeNoInitialize(0);
	for (int i = 0; i < numManifolds; ++i) {
		btPersistentManifold &m = *manifolds[i];
		if (touchesLink(m)) {
			m_linkManifolds.push_back(&m);
			continue;
		}
		const int a = getOrInitSolverBody(*const_cast<btCollisionObject *>(m.getBody0()), info.m_timeStep);
		const int b = getOrInitSolverBody(*const_cast<btCollisionObject *>(m.getBody1()), info.m_timeStep);
		map.addManifold(m, a, b, m_tmpSolverContactConstraintPool);
	}
	/* the multibody contacts, the btMultiBodyConstraints' rows and their warm start, as Bullet makes them */
	btMultiBodyConstraintSolver::convertContacts(m_linkManifolds.size() ? &m_linkManifolds[0] : nullptr,
	                                            m_linkManifolds.size(), info);
}

void BulletMultiBodySolver::convertForBullet(btPersistentManifold **manifolds, int numManifolds,
                                             btTypedConstraint **constraints, int numConstraints,
                                             const btContactSolverInfo &info)
{
	/* Bullet's own rigid-body rows in place of lcpkit's (the multibody rows were made by Bullet already) */
	btSequentialImpulseConstraintSolver::convertJoints(constraints, numConstraints, info);
	m_tmpSolverContactConstraintPool.resizeNoInitialize(0);
	m_tmpSolverContactFrictionConstraintPool.resizeNoInitialize(0);
	m_tmpSolverContactRollingFrictionConstraintPool.resizeNoInitialize(0);
	for (int i = 0; i < numManifolds; ++i)
		if (!touchesLink(*manifolds[i]))
			convertContact(manifolds[i], info);
	const detail::Pools pools{m_tmpSolverBodyPool, m_tmpSolverNonContactConstraintPool,
	                          m_tmpSolverContactConstraintPool, m_tmpSolverContactFrictionConstraintPool,
	                          m_tmpSolverContactRollingFrictionConstraintPool};
	orderForBullet(pools, info, m_orderNonContactConstraintPool, m_orderTmpConstraintPool,
	               m_orderFrictionConstraintPool);
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
		convertForBullet(manifoldPtr, numManifolds, constraints, numConstraints, info);
		return runBulletIterations(maxIterations, info, [&](int it) { return bulletSweep(it, numConstraints); });
	});
	if (!solved)
		return 0;
	/* the rigid-body contacts' impulses are at their points already: Bullet's finish writes back from an empty
	 * pool (after the multibody sweeps, which hide the pools and give them back) */
	struct EmptyContacts {
		btConstraintArray &pool;
		~EmptyContacts() { pool.resizeNoInitialize(0); }
	} empty{m_tmpSolverContactConstraintPool};

	const int multiBodyRows = m_multiBodyNonContactConstraints.size() + m_multiBodyNormalContactConstraints.size() +
	                          m_multiBodyFrictionContactConstraints.size() +
	                          m_multiBodyTorsionalFrictionContactConstraints.size() +
	                          m_multiBodySpinningFrictionContactConstraints.size();
	if (multiBodyRows == 0)
		return 0;
	m_impl->note(NOTE_MULTIBODY, "multibody constraints: %d rows solved by Bullet's btMultiBodyConstraintSolver",
	             multiBodyRows);
	/* lcpkit's impulses are in the rigid bodies' velocities already; the typed constraints' obsolete solve
	 * hook is theirs too, so none is passed */
	HiddenRows hidden(pools);
	runBulletIterations(maxIterations, info, [&](int it) { return bulletSweep(it, 0); });
	return 0;
}

} // namespace lk

/* lk::BulletMultiBodySolver: the rigid-body rows of a multibody world solved by lcpkit, the rest by Bullet. */
#include "lcpkit/bullet_multibody_solver.hpp"

#include "solver_core.hpp"

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
		return runBulletIterations(maxIterations, info, [&](int it) { return bulletSweep(it, numConstraints); });
	});
	if (!solved)
		return 0;

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

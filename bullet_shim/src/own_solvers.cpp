/* Bullet's own solvers behind the C API, measured like the adapter so that one table compares them: each
 * reports the same per-island statistics as lk::BulletSolver. */
#include "world_internal.hpp"

#include <BulletDynamics/ConstraintSolver/btNNCGConstraintSolver.h>
#include <BulletDynamics/MLCPSolvers/btDantzigSolver.h>
#include <BulletDynamics/MLCPSolvers/btLemkeSolver.h>
#include <BulletDynamics/MLCPSolvers/btMLCPSolver.h>
#include <BulletDynamics/MLCPSolvers/btSolveProjectedGaussSeidel.h>

#include <cmath>
#include <cstring>
#include <type_traits>

namespace lk {
namespace detail {

namespace {

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
		Pools pools{this->m_tmpSolverBodyPool, this->m_tmpSolverNonContactConstraintPool,
		                        this->m_tmpSolverContactConstraintPool, this->m_tmpSolverContactFrictionConstraintPool,
		                        this->m_tmpSolverContactRollingFrictionConstraintPool};
		lk_engine_step_stats g;
		clearStats(g);
		bool built = false;
		if (ins.residuals || ins.recording) {
			try {
				const double t0 = lk_stats_now();
				built = ins.map.build(pools, ins.recording) == LK_OK;
				g.convert_seconds = lk_stats_now() - t0;
			} catch (...) {
				built = false;
			}
		}
		int fallbacks = 0;
		const double t1 = lk_stats_now();
		g.iterations = run(bodies, numBodies, manifoldPtr, numManifolds, constraints, numConstraints, info, dd,
		                   &fallbacks);
		g.solve_seconds = lk_stats_now() - t1;
		g.work = m_kind == OwnKind::MlcpDirect ? 0.0 : g.iterations;
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

template <class Base, class... Args>
OwnSolverParts make(OwnKind kind, Args... args)
{
	OwnSolverParts parts;
	auto *p = new OwnSolver<Base>(kind, args...);
	parts.solver.reset(p);
	parts.ins = &p->ins;
	return parts;
}

template <class Method>
OwnSolverParts makeMlcp(OwnKind kind)
{
	std::unique_ptr<btMLCPSolverInterface> mlcp(new Method());
	OwnSolverParts parts = make<btMLCPSolver>(kind, mlcp.get());
	parts.mlcp = std::move(mlcp);
	return parts;
}

} // namespace

OwnSolverParts makeOwnSolver(const char *name)
{
	if (!std::strcmp(name, "bullet-si"))
		return make<btSequentialImpulseConstraintSolver>(OwnKind::Iterative);
	if (!std::strcmp(name, "bullet-nncg"))
		return make<btNNCGConstraintSolver>(OwnKind::Iterative);
	if (!std::strcmp(name, "bullet-dantzig"))
		return makeMlcp<btDantzigSolver>(OwnKind::MlcpDirect);
	if (!std::strcmp(name, "bullet-lemke"))
		return makeMlcp<btLemkeSolver>(OwnKind::MlcpDirect);
	if (!std::strcmp(name, "bullet-pgs"))
		return makeMlcp<btSolveProjectedGaussSeidel>(OwnKind::MlcpIterative);
	return OwnSolverParts();
}

} // namespace detail
} // namespace lk

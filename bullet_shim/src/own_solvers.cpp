/* Bullet's own solvers behind the C API, measured like the adapter so that one table compares them: each
 * reports the same per-island statistics as lk::BulletSolver. */
#include "world_internal.hpp"

#include <BulletDynamics/ConstraintSolver/btNNCGConstraintSolver.h>
#include <BulletDynamics/ConstraintSolver/btSequentialImpulseConstraintSolverMt.h>
#include <BulletDynamics/MLCPSolvers/btDantzigSolver.h>
#include <BulletDynamics/MLCPSolvers/btLemkeSolver.h>
#include <BulletDynamics/MLCPSolvers/btMLCPSolver.h>
#include <BulletDynamics/MLCPSolvers/btSolveProjectedGaussSeidel.h>

#include <LinearMath/btThreads.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
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
		g.res_initial = g.res_final = NAN;
		if (built) {
			try {
				ins.map.readImpulses(ins.scratch);
				ins.measureResiduals(ins.scratch.data(), g);
				if (ins.recording)
					ins.current.append(ins.map.problem(), ins.map.warmStart(), ins.scratch);
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

/* Bullet's multithreaded sequential impulse solver (btSequentialImpulseConstraintSolverMt): Bullet's own
 * answer to a large island, rows batched so that no two rows of a batch share a body, the batches' rows
 * solved on the threads of Bullet's task scheduler (btParallelFor), its row setup in parallel too. The
 * scheduler is process-wide: the application's if it set one, else Bullet's default one (its own thread
 * pool), made once, set when the first such world is made, and kept. Each solve sets the scheduler's thread
 * count to this solver's (and sets the scheduler again should the application have changed it). */
class MtSolver : public OwnSolver<btSequentialImpulseConstraintSolverMt> {
public:
	BT_DECLARE_ALIGNED_ALLOCATOR();
	MtSolver(btITaskScheduler *ts, int threads)
	    : OwnSolver<btSequentialImpulseConstraintSolverMt>(OwnKind::Iterative), m_ts(ts), m_threads(threads)
	{
	}
	void prepareSolve(int bodies, int manifolds) override
	{
		if (btGetTaskScheduler() != m_ts)
			btSetTaskScheduler(m_ts);
		if (m_ts->getNumThreads() != m_threads)
			m_ts->setNumThreads(m_threads);
		OwnSolver<btSequentialImpulseConstraintSolverMt>::prepareSolve(bodies, manifolds);
	}

private:
	btITaskScheduler *m_ts;
	int m_threads;
};

/* The task scheduler bullet-si-mt runs on, or nullptr if this Bullet cannot run threads: a library built
 * without BT_THREADSAFE (Debian's) makes no scheduler, and its btParallelFor runs every loop on the caller. */
btITaskScheduler *mtScheduler()
{
	static btITaskScheduler *made = nullptr;
	btITaskScheduler *ts = btGetTaskScheduler();
	if (ts && ts != btGetSequentialTaskScheduler())
		return ts;
	if (!made)
		made = btCreateDefaultTaskScheduler();
	return made;
}

OwnSolverParts makeMt(const char *spec)
{
	OwnSolverParts parts;
	const char *opt = std::strchr(spec, ':');
	int threads = 0;
	if (opt) {
		char *end = nullptr;
		errno = 0;
		const long n = std::strncmp(opt + 1, "threads=", 8) == 0 ? std::strtol(opt + 9, &end, 10) : -1;
		if (n < 1 || n > BT_MAX_THREAD_COUNT || errno || !end || *end) {
			parts.status = LK_ERR_PARSE;
			parts.why = std::string("bullet-si-mt takes one option, threads=N with N from 1 to ") +
			      std::to_string(BT_MAX_THREAD_COUNT) + " (got '" + (opt + 1) + "')";
			return parts;
		}
		threads = (int)n;
	}
	btITaskScheduler *ts = mtScheduler();
	if (!ts) {
		parts.status = LK_ERR_UNSUPPORTED;
		parts.why = "bullet-si-mt needs a Bullet library built with BT_THREADSAFE, which this one is not (Debian's "
		      "is not: tools/bullet-mt.sh builds Debian's Bullet source with it, docs/bullet.md)";
		return parts;
	}
	if (btGetTaskScheduler() != ts) {
		/* Bullet takes a scheduler only from the thread it counts as its main one (the first to ask) */
		btSetTaskScheduler(ts);
		if (btGetTaskScheduler() != ts) {
			parts.status = LK_ERR_STATE;
			parts.why = "bullet-si-mt: Bullet's task scheduler can only be set from the thread Bullet counts as "
			            "its main thread (the first that used Bullet's threads); create the world there";
			return parts;
		}
	}
	if (!threads)
		threads = ts->getNumThreads();
	if (threads > ts->getMaxNumThreads())
		threads = ts->getMaxNumThreads();
	auto *p = new MtSolver(ts, threads);
	parts.solver.reset(p);
	parts.ins = &p->ins;
	return parts;
}

} // namespace

OwnSolverParts makeOwnMultiBodySolver(const char *name)
{
	if (!std::strcmp(name, "bullet-si"))
		return make<btMultiBodyConstraintSolver>(OwnKind::Iterative);
	return OwnSolverParts();
}

OwnSolverParts makeOwnSolver(const char *name)
{
	if (!std::strncmp(name, "bullet-si-mt", 12) && (name[12] == '\0' || name[12] == ':'))
		return makeMt(name);
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

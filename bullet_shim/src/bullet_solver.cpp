/* lk::BulletSolver: Bullet's rows solved by an lcpkit method. */
#include "lcpkit/bullet_solver.hpp"

#include "instrument.hpp"

#include <cmath>
#include <new>
#include <string>
#include <vector>

namespace lk {

struct BulletSolver::Impl {
	lk_solver_config config;
	detail::Instrument ins;
	std::string error;
	std::vector<double> lambda;
};

BulletSolver::BulletSolver(const lk_solver_config &config) : m_impl(new Impl)
{
	m_impl->config = lk_default_config(LK_METHOD_PGS);
	setConfig(config);
}

BulletSolver::~BulletSolver()
{
	delete m_impl;
}

lk_status BulletSolver::setConfig(const lk_solver_config &config)
{
	std::string msg;
	lk_status st = detail::probeConfig(config, msg);
	if (st != LK_OK) {
		m_impl->error = msg;
		return st;
	}
	m_impl->error.clear();
	m_impl->config = config;
	return LK_OK;
}

const lk_solver_config &BulletSolver::config() const
{
	return m_impl->config;
}

const char *BulletSolver::error() const
{
	return m_impl->error.c_str();
}

const lk_engine_step_stats &BulletSolver::lastStepStats() const
{
	return m_impl->ins.lastStep();
}

int64_t BulletSolver::fallbacks() const
{
	return m_impl->ins.fallbacks;
}

const char *BulletSolver::fallbackReason() const
{
	return m_impl->ins.fallbackReason.c_str();
}

void BulletSolver::setRecording(bool on)
{
	m_impl->ins.recording = on;
}

lk_status BulletSolver::recordedProblem(lk_problem **out) const
{
	if (!out)
		return LK_ERR_INVALID_ARGUMENT;
	*out = nullptr;
	try {
		return m_impl->ins.last.build(out);
	} catch (...) {
		return LK_ERR_NO_MEMORY;
	}
}

const double *BulletSolver::recordedSolution(int *count) const
{
	if (count)
		*count = (int)m_impl->ins.last.solution.size();
	return m_impl->ins.last.solution.data();
}

void BulletSolver::prepareSolve(int, int)
{
	m_impl->ins.beginStep();
}

void BulletSolver::allSolved(const btContactSolverInfo &, btIDebugDraw *)
{
	m_impl->ins.endStep();
}

detail::Instrument *BulletSolver::instrument()
{
	return &m_impl->ins;
}

btScalar BulletSolver::solveGroupCacheFriendlyIterations(btCollisionObject **bodies, int numBodies,
                                                         btPersistentManifold **manifoldPtr, int numManifolds,
                                                         btTypedConstraint **constraints, int numConstraints,
                                                         const btContactSolverInfo &info, btIDebugDraw *debugDrawer)
{
	/* the position (split impulse) pass is Bullet's, exactly as in its own iterations */
	solveGroupCacheFriendlySplitImpulseIterations(bodies, numBodies, manifoldPtr, numManifolds, constraints,
	                                              numConstraints, info, debugDrawer);

	detail::Instrument &ins = m_impl->ins;
	detail::Pools pools{m_tmpSolverBodyPool, m_tmpSolverNonContactConstraintPool, m_tmpSolverContactConstraintPool,
	                    m_tmpSolverContactFrictionConstraintPool, m_tmpSolverContactRollingFrictionConstraintPool};
	lk_engine_step_stats g;
	detail::clearStats(g);
	std::string reason;
	bool built = false, solved = false;
	try {
		const double t0 = lk__now();
		lk_status st = ins.map.build(pools);
		g.convert_seconds = lk__now() - t0;
		lk_problem *p = ins.map.problem();
		if (st != LK_OK) {
			reason = std::string("rows could not be converted: ") + lk_problem_error(p);
		} else if (ins.map.rows() == 0) {
			/* an island of bodies without rows (every row left out): nothing to solve */
			built = solved = true;
			g.stop_reason = LK_STOP_ABSOLUTE;
		} else {
			built = true;
			lk_stats ls;
			const double t1 = lk__now();
			st = lk_solve(p, &m_impl->config, &ls, nullptr);
			g.solve_seconds = lk__now() - t1;
			if (st != LK_OK) {
				reason = std::string("lk_solve: ") + lk_problem_error(p);
			} else if (detail::isGuardStop(ls.stop_reason)) {
				reason = std::string("guard: ") + lk_stop_reason_name(ls.stop_reason);
				g.stop_reason = ls.stop_reason;
			} else {
				const double t2 = lk__now();
				ins.map.writeBack(pools);
				g.convert_seconds += lk__now() - t2;
				solved = true;
				g.iterations = ls.iterations;
				g.res_before = ls.res_initial;
				g.res_after = ls.res_final;
				g.stop_reason = ls.stop_reason;
				if (ins.recording) {
					const double *l = lk_problem_lambda(p);
					m_impl->lambda.assign(l, l + lk_problem_row_count(p));
					ins.current.append(p, ins.map.warmStart(), m_impl->lambda);
				}
			}
		}
	} catch (const std::bad_alloc &) {
		reason = "out of memory";
	} catch (...) {
		reason = "unexpected exception";
	}

	if (!solved) {
		/* Bullet's own velocity iterations, as its solveGroupCacheFriendlyIterations runs them; nothing of
		 * Bullet's state was touched before this point */
		const int maxIt = m_maxOverrideNumSolverIterations > info.m_numIterations ? m_maxOverrideNumSolverIterations
		                                                                          : info.m_numIterations;
		const double t = lk__now();
		int used = 0;
		for (int it = 0; it < maxIt; ++it) {
			const btScalar r = solveSingleIteration(it, bodies, numBodies, manifoldPtr, numManifolds, constraints,
			                                        numConstraints, info, debugDrawer);
			used = it + 1;
			if (r <= info.m_leastSquaresResidualThreshold || it >= maxIt - 1)
				break;
		}
		g.solve_seconds += lk__now() - t;
		g.iterations = used;
		if (g.stop_reason == LK_STOP_NONE)
			g.stop_reason = LK_STOP_ITERATIONS;
		g.fallback = 1;
		ins.noteFallback(reason);
		g.res_before = g.res_after = NAN;
		if (built) {
			try {
				lk_problem *p = ins.map.problem();
				lk_metrics m;
				ins.map.readImpulses(m_impl->lambda);
				if (lk_problem_metrics(p, ins.map.warmStart().data(), &m) == LK_OK)
					g.res_before = m.res;
				if (lk_problem_metrics(p, m_impl->lambda.data(), &m) == LK_OK)
					g.res_after = m.res;
				if (ins.recording)
					ins.current.append(p, ins.map.warmStart(), m_impl->lambda);
			} catch (...) {
			}
		}
	}
	if (built) {
		g.rows = ins.map.rows();
		for (int k = 0; k < LK_ROW_KIND_COUNT; ++k)
			g.rows_by_kind[k] = ins.map.rowsByKind()[k];
		g.bodies = lk_problem_body_count(ins.map.problem());
	}
	g.fallback_total = ins.fallbacks;
	ins.addGroup(g);
	return 0;
}

} // namespace lk

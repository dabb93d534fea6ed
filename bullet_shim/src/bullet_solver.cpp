/* lk::BulletSolver: Bullet's rows solved by an lcpkit method. */
#include "solver_core.hpp"

#include <LinearMath/btThreads.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace lk {

namespace {

/* The methods that sweep rows in an order (the ones lk_config_parse gives an order= key). */
bool sweepsInOrder(lk_method m)
{
	return m == LK_METHOD_PGS || m == LK_METHOD_PSOR || m == LK_METHOD_AMGS || m == LK_METHOD_AMGS_DENSE ||
	       m == LK_METHOD_AMSOR || m == LK_METHOD_PGS_SM;
}

/* lcpkit's parallel sweeps as tasks of Bullet's task scheduler (lk_executor): one btParallelFor a colour. */
void runOnBullet(void *, int tasks, lk_task_fn task, void *arg)
{
	struct Tasks : btIParallelForBody {
		lk_task_fn task;
		void *arg;
		void forLoop(int begin, int end) const override
		{
			for (int i = begin; i < end; ++i)
				task(arg, i);
		}
	} body;
	body.task = task;
	body.arg = arg;
	btParallelFor(0, tasks, 1, body);
}

/* Whether the application runs Bullet's task scheduler on more than one thread (a Bullet built with
 * BT_THREADSAFE, btSetTaskScheduler): then lcpkit's threads=N sweeps run on it rather than on threads of
 * their own, which would compete with Bullet's for the cores. Debian's Bullet has none. */
bool bulletRunsThreads()
{
	btITaskScheduler *ts = btGetTaskScheduler();
	return ts && ts != btGetSequentialTaskScheduler() && ts->getNumThreads() > 1;
}

} // namespace

void BulletSolverCore::Impl::note(Note which, const char *fmt, ...)
{
	if (noted & which)
		return;
	noted |= which;
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	notes += buf;
	notes += '\n';
	ins.notesTotal++;
	/* said once where the app's developer sees it, as the ODE adapter does; setQuiet(true) or LCPKIT_QUIET=1
	 * silences it (notes() and the statistics keep it either way) */
	const char *q = std::getenv("LCPKIT_QUIET");
	if (!quiet && (!q || std::strcmp(q, "1") != 0))
		std::fprintf(stderr, "lcpkit: %s\n", buf);
}

/* The configuration of one solve: the given one, completed from the world's settings where the spec left
 * them open. */
lk_solver_config BulletSolverCore::Impl::effective(const btContactSolverInfo &info)
{
	lk_solver_config cfg = config;
	const lk_method m = cfg.method;
	if (fromSpec && budgetFromEngine) {
		/* Bullet's iteration count is the budget in sweep-equivalents, for every method alike */
		lk_config_set_engine_budget(&cfg, info.m_numIterations);
		if (info.m_numIterations < 1)
			note(NOTE_ITERATIONS, "m_numIterations = %d: lcpkit spends at least one sweep-equivalent",
			     info.m_numIterations);
	}
	/* the solve measures nothing: where the statistics report RES (lk_bt_world_set_residuals), solveIsland
	 * measures it after the solve, off its clock and the conversion's; a recording keeps the solve's own */
	if (fromSpec && !specSetsMeasure && !ins.recording)
		cfg.measure = 0;
	if (info.m_solverMode & SOLVER_RANDMIZE_ORDER) {
		/* a spec's own order stays, gsp's and esp's (schedules of their own) as much as an order= */
		if (fromSpec && !specSetsOrder && sweepsInOrder(m))
			cfg.order = LK_ORDER_RANDOM;
		else if (fromSpec && m == LK_METHOD_AUTO && !specSetsShuffle)
			cfg.adapt.shuffle = 1; /* after its first sweep a new random order every sweep, as Bullet draws one */
		else
			note(NOTE_RANDOM_ORDER, "SOLVER_RANDMIZE_ORDER not applied: %s%s%s",
			     m == LK_METHOD_AUTO ? (fromSpec ? "the spec sets its shuffle=" : "a configuration is taken as given")
			     : !sweepsInOrder(m) ? "the method has no sweep order"
			     : fromSpec        ? "the spec sets its order, "
			                       : "a configuration is taken as given",
			     sweepsInOrder(m) && fromSpec ? lk_order_name(cfg.order) : "",
			     sweepsInOrder(m) && fromSpec ? " (order=random to sweep in a random order)" : "");
	}
	if (info.m_sor != 1.0) {
		/* Bullet relaxes its contact and friction rows by m_sor (it scales their jacDiagABInv), which is what
		 * w does in lcpkit's Gauss-Seidel sweep; psor's own w, gsp's and esp's schedules and the other methods'
		 * iterations are left as chosen */
		const bool staggered = cfg.order == LK_ORDER_GSP || cfg.order == LK_ORDER_ESP;
		if (fromSpec && !specSetsW && m == LK_METHOD_PGS && !staggered && info.m_sor > 0 && info.m_sor < 2)
			cfg.sor_w = info.m_sor;
		else
			note(NOTE_SOR, "m_sor = %g not applied: it sets the relaxation of \"pgs\" without w= only%s",
			     (double)info.m_sor,
			     staggered ? " (gsp and esp stagger their own sweeps; gsp:w=W relaxes them)" : "");
	}
	/* where articulated bodies touch (a pile of ragdolls) auto reorders every row every eight sweeps, whatever
	 * Bullet's own order: swept in one order step after step, Bullet's piled ragdolls at 20 iterations rest with
	 * limbs sunk into each other and their joints open, under Bullet's own solver as under lcpkit's (auto.c,
	 * articulated_touch; docs/benchmarks.md, "auto against the engines' own solvers") */
	if (fromSpec && m == LK_METHOD_AUTO && !specSetsTouch && !(info.m_solverMode & SOLVER_RANDMIZE_ORDER))
		cfg.adapt.touch = 8;
	/* auto makes the wrench of a stack's faces whole from the warm start Bullet damped by m_warmstartingFactor
	 * (auto.c): it needs to know by how much */
	if (fromSpec && m == LK_METHOD_AUTO && !specSetsCarry && (info.m_solverMode & SOLVER_USE_WARMSTARTING) &&
	    info.m_warmstartingFactor > 0 && info.m_warmstartingFactor <= 1)
		cfg.adapt.carry = info.m_warmstartingFactor;
	if (info.m_solverMode & SOLVER_INTERLEAVE_CONTACT_AND_FRICTION_CONSTRAINTS)
		note(NOTE_INTERLEAVE, "SOLVER_INTERLEAVE_CONTACT_AND_FRICTION_CONSTRAINTS not applied: lcpkit sweeps "
		                      "joint, normal, friction and rolling rows in its own order");
	if (info.m_leastSquaresResidualThreshold > 0)
		note(NOTE_RESIDUAL_THRESHOLD, "m_leastSquaresResidualThreshold = %g not applied: lcpkit stops on its "
		                              "own tolerances (tol, rtol, stag of the spec)",
		     (double)info.m_leastSquaresResidualThreshold);
	if (info.m_numNonContactInnerIterations > 1)
		note(NOTE_INNER_ITERATIONS, "m_numNonContactInnerIterations = %d not applied: every row is swept once "
		                            "per lcpkit iteration",
		     info.m_numNonContactInnerIterations);
	last = cfg;
	return cfg;
}

BulletSolverCore::BulletSolverCore(const lk_solver_config &config) : m_impl(new Impl)
{
	m_impl->ins.residuals = false; /* statistics on request (setResiduals) */
	m_impl->config = m_impl->last = lk_default_config(LK_METHOD_PGS);
	setConfig(config);
}

BulletSolverCore::BulletSolverCore(const char *spec) : m_impl(new Impl)
{
	m_impl->ins.residuals = false; /* statistics on request (setResiduals) */
	m_impl->config = m_impl->last = lk_default_config(LK_METHOD_PGS);
	m_impl->fromSpec = true;
	m_impl->budgetFromEngine = true;
	if (setSpec(spec) != LK_OK)
		/* a constructor has no status to return: a misread spec is said where the developer sees it */
		m_impl->note(NOTE_SPEC, "lk::BulletSolver(\"%s\"): %s; it runs \"pgs\" instead", spec ? spec : "(null)",
		             m_impl->error.c_str());
}

BulletSolverCore::~BulletSolverCore()
{
	delete m_impl;
}

lk_status BulletSolverCore::setConfig(const lk_solver_config &config)
{
	std::string msg;
	lk_status st = detail::probeConfig(config, msg);
	if (st != LK_OK) {
		m_impl->error = msg;
		return st;
	}
	m_impl->error.clear();
	m_impl->config = m_impl->last = config;
	m_impl->fromSpec = false;
	return LK_OK;
}

lk_status BulletSolverCore::setSpec(const char *spec)
{
	lk_solver_config cfg;
	char err[512] = "";
	if (lk_config_parse(spec, &cfg, err, sizeof err) != LK_OK) {
		m_impl->error = err;
		return LK_ERR_PARSE;
	}
	std::string msg;
	lk_status st = detail::probeConfig(cfg, msg);
	if (st != LK_OK) {
		m_impl->error = std::string("'") + spec + "': " + msg;
		return st;
	}
	m_impl->error.clear();
	m_impl->config = m_impl->last = cfg;
	m_impl->fromSpec = true;
	m_impl->budgetFromEngine = !lk_config_spec_sets_limit(spec);
	m_impl->specSetsOrder = lk_config_spec_sets(spec, "order") != 0;
	m_impl->specSetsW = lk_config_spec_sets(spec, "w") != 0;
	m_impl->specSetsCarry = lk_config_spec_sets(spec, "carry") != 0;
	m_impl->specSetsShuffle = lk_config_spec_sets(spec, "shuffle") != 0;
	m_impl->specSetsTouch = lk_config_spec_sets(spec, "touch") != 0;
	m_impl->specSetsMeasure = lk_config_spec_sets(spec, "measure") != 0;
	return LK_OK;
}

const lk_solver_config &BulletSolverCore::config() const
{
	return m_impl->config;
}

const lk_solver_config &BulletSolverCore::lastConfig() const
{
	return m_impl->last;
}

const char *BulletSolverCore::error() const
{
	return m_impl->error.c_str();
}

const char *BulletSolverCore::notes() const
{
	return m_impl->notes.c_str();
}

void BulletSolverCore::setQuiet(bool on)
{
	m_impl->quiet = on;
}

void BulletSolverCore::setResiduals(bool on)
{
	m_impl->ins.residuals = on;
}

bool BulletSolverCore::residuals() const
{
	return m_impl->ins.residuals;
}

const lk_engine_step_stats &BulletSolverCore::lastStepStats() const
{
	return m_impl->ins.lastStep();
}

int64_t BulletSolverCore::fallbacks() const
{
	return m_impl->ins.fallbacks;
}

const char *BulletSolverCore::fallbackReason() const
{
	return m_impl->ins.fallbackReason.c_str();
}

void BulletSolverCore::setRecording(bool on)
{
	m_impl->ins.recording = on;
}

lk_status BulletSolverCore::recordedProblem(lk_problem **out) const
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

const double *BulletSolverCore::recordedSolution(int *count) const
{
	if (count)
		*count = (int)m_impl->ins.last.solution.size();
	return m_impl->ins.last.solution.data();
}

void BulletSolverCore::Impl::beginStep(int numBodies)
{
	++steps;
	stepObjects = numBodies;
	stepIslands = 0;
	ins.beginStep();
}

void BulletSolverCore::Impl::endStep()
{
	ins.endStep();
	/* btDiscreteDynamicsWorld hands every step's islands to its solver (at least one call, even when empty);
	 * a world that calls prepareSolve and allSolved but no solveGroup solves with a solver of its own */
	if (stepIslands == 0 && stepObjects > 0)
		note(NOTE_NO_ISLAND, "no rows reached this solver in a step of %d collision objects: the world solves "
		                     "with another solver (a btMultiBodyDynamicsWorld with its btMultiBodyConstraintSolver: "
		                     "use lk::BulletMultiBodySolver through setMultiBodyConstraintSolver)",
		     stepObjects);
}

detail::Instrument *BulletSolverCore::instrument()
{
	return &m_impl->ins;
}

int runBulletIterations(int maxIterations, const btContactSolverInfo &info,
                        const std::function<btScalar(int iteration)> &sweep)
{
	int used = 0;
	for (int it = 0; it < maxIterations; ++it) {
		const btScalar r = sweep(it);
		used = it + 1;
		if (r <= info.m_leastSquaresResidualThreshold)
			break;
	}
	return used;
}

bool BulletSolverCore::Impl::solveIsland(const detail::Pools &pools, const btContactSolverInfo &info,
                                         const std::function<int()> &bulletIterations)
{
	++stepIslands;
	lk_engine_step_stats g;
	detail::clearStats(g);
	std::string reason;
	bool built = false, solved = false;
	try {
		const lk_solver_config cfg = effective(info);
		lk_problem *p = ins.map.problem();
		/* Bullet's scheduler, where it runs threads, makes the problem's bodies and sweeps the rows */
		const bool lend = cfg.threads > 1 && bulletRunsThreads();
		if (lend != lentScheduler) {
			const lk_executor bullet = {runOnBullet, nullptr};
			lk_problem_set_executor(p, lend ? &bullet : nullptr);
			lentScheduler = lend;
		}
		/* the island's clock readings: one before the build and one after the write-back, with lk_solve's own
		 * two, whose difference is the solve; the rest is the conversion (a reading of the thread's CPU clock,
		 * the benchmarks', costs a quarter of a microsecond: six an island were 1 % of the ragdolls' phase) */
		const double t0 = lk_stats_now();
		double measuring = 0.0; /* the statistics' RES, measured after the solve */
		lk_status st = ins.map.build(pools, ins.recording || lk_config_reads_points(&cfg), cfg.threads);
		if (st != LK_OK) {
			reason = std::string("rows could not be converted: ") + lk_problem_error(p);
		} else if (ins.map.rows() == 0 && ins.map.leftOut() == 0 && ins.map.frozen() == 0) {
			/* an island of bodies without rows (every row left out): nothing to solve; the impulses of the
			 * contact rows left out still go to their points */
			ins.map.writeKept();
			built = solved = true;
			g.stop_reason = LK_STOP_ABSOLUTE;
		} else {
			built = true;
			lk_stats ls;
			st = lk_solve(p, &cfg, &ls, nullptr);
			if (st != LK_OK) {
				reason = std::string("lk_solve: ") + lk_problem_error(p);
			} else {
				g.solve_seconds = ls.seconds;
				if (detail::isGuardStop(ls.stop_reason)) {
					reason = std::string("guard: ") + lk_stop_reason_name(ls.stop_reason);
					g.stop_reason = ls.stop_reason;
				} else {
					ins.map.writeBack(pools);
					solved = true;
					g.iterations = ls.iterations;
					g.work = ls.work;
					g.res_initial = ls.res_initial;
					g.res_final = ls.res_final;
					g.stop_reason = ls.stop_reason;
					if (ins.residuals && cfg.measure == 0) {
						/* RES for the statistics off the solve's clock and the conversion's, as Bullet's own
						 * answers are measured: the solve ran as it runs without statistics (measure=0, the
						 * same impulses), and its time compares with Bullet's iterations */
						const double tm = lk_stats_now();
						ins.measureResiduals(nullptr, g);
						measuring = lk_stats_now() - tm;
					}
				}
			}
		}
		g.convert_seconds = lk_stats_now() - t0 - g.solve_seconds - measuring;
		if (solved && ins.recording && ins.map.rows() > 0) {
			const double *l = lk_problem_lambda(p);
			lambda.assign(l, l + lk_problem_row_count(p));
			ins.current.append(p, ins.map.warmStart(), lambda);
		}
	} catch (const std::bad_alloc &) {
		reason = "out of memory";
	} catch (...) {
		reason = "unexpected exception";
	}

	/* what is not finite, left out: said once, counted */
	if (built && ins.map.leftOut() > 0) {
		g.rows_left_out = ins.map.leftOut();
		note(NOTE_LEFT_OUT, "step %lld: %d rows left out of an island's solve (their J, target or a body not "
		     "finite); the rest of the island was solved", (long long)steps, g.rows_left_out);
	}
	if (built && ins.map.frozen() > 0) {
		g.bodies_frozen = ins.map.frozen();
		const char *what = "";
		const btCollisionObject *o = ins.map.firstFrozen(&what);
		note(NOTE_FROZEN, "step %lld: %d bod%s frozen (body %p: its %s is not finite): stopped where %s, %s "
		     "set to 0, out of this step's solve with %s rows", (long long)steps, g.bodies_frozen,
		     g.bodies_frozen == 1 ? "y" : "ies", (const void *)o, what ? what : "state",
		     g.bodies_frozen == 1 ? "it is" : "they are", g.bodies_frozen == 1 ? "its velocity" : "their velocities",
		     g.bodies_frozen == 1 ? "its" : "their");
	}
	if (!solved) {
		note(NOTE_FALLBACK, "step %lld: an island fell back to Bullet's own iterations: %s (said once; "
		     "fallbacks() counts them)", (long long)steps, reason.c_str());
		const double t = lk_stats_now();
		g.iterations = bulletIterations();
		g.solve_seconds += lk_stats_now() - t;
		g.work = g.iterations;
		if (g.stop_reason == LK_STOP_NONE)
			g.stop_reason = LK_STOP_ITERATIONS;
		g.fallback = 1;
		ins.noteFallback(reason);
		g.res_initial = g.res_final = NAN;
		if (built) {
			try {
				/* Bullet's impulses on lcpkit's rows, where its own rows are those (not so where lcpkit made
				 * the contact rows from the manifolds) */
				if (ins.map.readImpulses(lambda)) {
					ins.measureResiduals(lambda.data(), g);
					if (ins.recording)
						ins.current.append(ins.map.problem(), ins.map.warmStart(), lambda);
				}
			} catch (...) {
			}
		}
	}
	if (built) {
		g.rows = ins.map.rows();
		for (int k = 0; k < LK_ROW_KIND_COUNT; ++k)
			g.rows_by_kind[k] = ins.map.rowsByKind()[k];
		g.bodies = lk_problem_body_count(ins.map.problem()) - ins.map.frozen();
	}
	g.notes_total = ins.notesTotal;
	g.fallback_total = ins.fallbacks;
	ins.addGroup(g);
	return solved;
}

BulletSolver::BulletSolver(const lk_solver_config &config) : BulletSolverCore(config) {}

BulletSolver::BulletSolver(const char *spec) : BulletSolverCore(spec) {}

BulletSolver::BulletSolver() : BulletSolverCore("auto") {}

BulletSolver::~BulletSolver() = default;

void BulletSolver::prepareSolve(int numBodies, int)
{
	m_impl->beginStep(numBodies);
}

void BulletSolver::allSolved(const btContactSolverInfo &, btIDebugDraw *)
{
	m_impl->endStep();
}

void BulletSolver::convertBodies(btCollisionObject **bodies, int numBodies, const btContactSolverInfo &info)
{
	detail::RigidRows<BulletSolver>::bodies(*this, bodies, numBodies, info);
}

void BulletSolver::convertJoints(btTypedConstraint **constraints, int numConstraints,
                                 const btContactSolverInfo &info)
{
	detail::RigidRows<BulletSolver>::joints(*this, constraints, numConstraints, info);
}

void BulletSolver::convertContacts(btPersistentManifold **manifolds, int numManifolds, const btContactSolverInfo &info)
{
	detail::RigidRows<BulletSolver>::contacts(*this, manifolds, numManifolds, info);
}

btScalar BulletSolver::solveGroupCacheFriendlyIterations(btCollisionObject **bodies, int numBodies,
                                                         btPersistentManifold **manifoldPtr, int numManifolds,
                                                         btTypedConstraint **constraints, int numConstraints,
                                                         const btContactSolverInfo &info, btIDebugDraw *debugDrawer)
{
	/* the position (split impulse) pass is Bullet's, exactly as in its own iterations */
	solveGroupCacheFriendlySplitImpulseIterations(bodies, numBodies, manifoldPtr, numManifolds, constraints,
	                                              numConstraints, info, debugDrawer);
	const detail::Pools pools{m_tmpSolverBodyPool, m_tmpSolverNonContactConstraintPool,
	                          m_tmpSolverContactConstraintPool, m_tmpSolverContactFrictionConstraintPool,
	                          m_tmpSolverContactRollingFrictionConstraintPool};
	const bool solved = m_impl->solveIsland(pools, info, [&] {
		detail::RigidRows<BulletSolver>::forBullet(*this, manifoldPtr, numManifolds, constraints, numConstraints,
		                                           info);
		return runBulletIterations(std::max(m_maxOverrideNumSolverIterations, info.m_numIterations), info,
		                           [&](int it) {
			                           return solveSingleIteration(it, bodies, numBodies, manifoldPtr, numManifolds,
			                                                       constraints, numConstraints, info, debugDrawer);
		                           });
	});
	/* the contacts' impulses are at their points already: Bullet's finish writes back from an empty pool */
	if (solved)
		m_tmpSolverContactConstraintPool.resizeNoInitialize(0);
	return 0;
}

} // namespace lk

/* Internal: the lcpkit side shared by lk::BulletSolver and lk::BulletMultiBodySolver. */
#ifndef LCPKIT_BULLET_SOLVER_CORE_HPP
#define LCPKIT_BULLET_SOLVER_CORE_HPP

#include "lcpkit/bullet_solver.hpp"

#include "instrument.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace lk {

/* What notes() says, each once. */
enum Note : unsigned {
	NOTE_ITERATIONS = 1u << 0,
	NOTE_RANDOM_ORDER = 1u << 1,
	NOTE_SOR = 1u << 2,
	NOTE_INTERLEAVE = 1u << 3,
	NOTE_RESIDUAL_THRESHOLD = 1u << 4,
	NOTE_INNER_ITERATIONS = 1u << 5,
	NOTE_NO_ISLAND = 1u << 6,
	NOTE_MULTIBODY = 1u << 7,
	NOTE_FALLBACK = 1u << 8,
	NOTE_LEFT_OUT = 1u << 9,
	NOTE_FROZEN = 1u << 10,
	NOTE_SPEC = 1u << 11,
};

struct BulletSolverCore::Impl {
	lk_solver_config config;
	lk_solver_config last;
	/* constructed from a spec: what it leaves open comes from the btContactSolverInfo */
	bool fromSpec = false;
	/* what the spec leaves open, asked once when it is set (a solve parses nothing) */
	bool budgetFromEngine = false, specSetsOrder = false, specSetsW = false, specSetsMeasure = false,
	     specSetsCarry = false, specSetsShuffle = false, specSetsTouch = false;
	detail::Instrument ins;
	std::string error;
	std::string notes;
	unsigned noted = 0;
	bool quiet = false;       /* setQuiet: nothing on stderr */
	int64_t steps = 0;        /* internal simulation steps (prepareSolve), for the notes */
	std::vector<double> lambda;
	/* the problem's sweeps run on Bullet's task scheduler (lk_problem_set_executor) */
	bool lentScheduler = false;
	/* the current internal step: collision objects in the world, islands handed to this solver */
	int stepObjects = 0, stepIslands = 0;

	void note(Note which, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
	lk_solver_config effective(const btContactSolverInfo &info);

	/* btConstraintSolver::prepareSolve and allSolved. */
	void beginStep(int numBodies);
	void endStep();

	/* One island: lcpkit on the rows of the pools and the impulses written back, or, when the rows cannot be
	 * converted or a guard trips, bulletIterations() (Bullet's own velocity iterations, returning how many it
	 * ran) with nothing of Bullet's state touched before. Records the island's statistics; true when lcpkit
	 * solved it. */
	bool solveIsland(const detail::Pools &pools, const btContactSolverInfo &info,
	                 const std::function<int()> &bulletIterations);
};

namespace detail {

/* The rows of an island of rigid bodies for lk::BulletSolver and lk::BulletMultiBodySolver (S, of which it is a
 * friend: it works on their Bullet pools). */
template <class S>
struct RigidRows {
	/* Bullet's convertBodies, the same solver bodies to the bit, without the copy in its sizing of the pool: it
	 * reserves room for the island's bodies before emptying the pool, so that every larger island copies the
	 * previous island's solver bodies into the new room, and reserves exactly that room, so that a pile whose
	 * islands grow step by step copies again and again, a large part of its setup while it lands. Here the pool
	 * is emptied first and grows by doubling. */
	static void bodies(S &s, btCollisionObject **bodies, int numBodies, const btContactSolverInfo &info)
	{
		for (int i = 0; i < numBodies; ++i)
			bodies[i]->setCompanionId(-1);
#if BT_THREADSAFE
		s.m_kinematicBodyUniqueIdToSolverBodyTable.resize(0);
#endif
		btAlignedObjectArray<btSolverBody> &pool = s.m_tmpSolverBodyPool;
		pool.resizeNoInitialize(0);
		if (pool.capacity() < numBodies + 1)
			pool.reserve(std::max(numBodies + 1, 2 * pool.capacity()));
		const btScalar h = info.m_timeStep;
		for (int i = 0; i < numBodies; ++i) {
			if (i + 4 < numBodies)
				prefetchBytes(bodies[i + 4], sizeof(btRigidBody));
			const int id = s.getOrInitSolverBody(*bodies[i], h);
			const btRigidBody *body = btRigidBody::upcast(bodies[i]);
			if (!body || body->getInvMass() == 0)
				continue;
			btSolverBody &sb = pool[id];
			const int flags = body->getFlags();
			if (flags & BT_ENABLE_GYROSCOPIC_FORCE_EXPLICIT)
				sb.m_externalTorqueImpulse -= body->computeGyroscopicForceExplicit(info.m_maxGyroscopicForce) *
				                              body->getInvInertiaTensorWorld() * h;
			if (flags & BT_ENABLE_GYROSCOPIC_FORCE_IMPLICIT_WORLD)
				sb.m_externalTorqueImpulse += body->computeGyroscopicImpulseImplicit_World(h);
			if (flags & BT_ENABLE_GYROSCOPIC_FORCE_IMPLICIT_BODY)
				sb.m_externalTorqueImpulse += body->computeGyroscopicImpulseImplicit_Body(h);
		}
	}

	/* Bullet's convertJoints up to its per-row setup (btSequentialImpulseConstraintSolver.cpp): the constraints'
	 * preparation, their row counts and feedback cleared, the pool sized, and the rows written by each
	 * constraint's getInfo2 straight into lcpkit's row definitions (RowMap::addJoint); Bullet's own per-row setup,
	 * for its iterations, is made only if they run (forBullet). */
	static void joints(S &s, btTypedConstraint **constraints, int numConstraints, const btContactSolverInfo &info)
	{
		for (int j = 0; j < numConstraints; ++j) {
			constraints[j]->buildJacobian();
			constraints[j]->internalSetAppliedImpulse(0.0);
		}
		btAlignedObjectArray<btTypedConstraint::btConstraintInfo1> &sizes = s.m_tmpConstraintSizesPool;
		sizes.resizeNoInitialize(numConstraints);
		int total = 0;
		for (int j = 0; j < numConstraints; ++j) {
			btTypedConstraint::btConstraintInfo1 &info1 = sizes[j];
			if (btJointFeedback *fb = constraints[j]->getJointFeedback()) {
				fb->m_appliedForceBodyA.setZero();
				fb->m_appliedTorqueBodyA.setZero();
				fb->m_appliedForceBodyB.setZero();
				fb->m_appliedTorqueBodyB.setZero();
			}
			if (constraints[j]->isEnabled()) {
				constraints[j]->getInfo1(&info1);
			} else {
				info1.m_numConstraintRows = 0;
				info1.nub = 0;
			}
			total += info1.m_numConstraintRows;
		}
		btConstraintArray &rows = s.m_tmpSolverNonContactConstraintPool;
		btAlignedObjectArray<btSolverBody> &bodies = s.m_tmpSolverBodyPool;
		rows.resizeNoInitialize(total);
		RowMap &map = s.m_impl->ins.map;
		map.beginJoints(total, total > 0 ? &rows[0] : nullptr, bodies);
		int row = 0;
		for (int j = 0; j < numConstraints; ++j) {
			const int count = sizes[j].m_numConstraintRows;
			if (count == 0)
				continue;
			btTypedConstraint &con = *constraints[j];
			const int a = s.getOrInitSolverBody(con.getRigidBodyA(), info.m_timeStep);
			const int b = s.getOrInitSolverBody(con.getRigidBodyB(), info.m_timeStep);
			/* Bullet's iteration count for a fallback */
			const int over = con.getOverrideNumSolverIterations() > 0 ? con.getOverrideNumSolverIterations()
			                                                           : info.m_numIterations;
			s.m_maxOverrideNumSolverIterations = std::max(s.m_maxOverrideNumSolverIterations, over);
			map.addJoint(con, row, count, a, b, bodies[a], bodies[b], info);
			row += count;
		}
	}

	/* Bullet's convertContacts up to its per-row setup: the manifolds' bodies made solver bodies, each point's rows
	 * made by lcpkit (contact_rows.cpp); Bullet's contact pool gets the rows of its split impulse only. auto
	 * starts the friction rows from the last step's friction too, as it makes the faces' load whole where Bullet
	 * damped it (auto.c); every other method starts them from zero, as Bullet's own solver does. */
	static void contacts(S &s, btPersistentManifold **manifolds, int numManifolds, const btContactSolverInfo &info)
	{
		RowMap &map = s.m_impl->ins.map;
		map.beginContacts(s.m_tmpSolverBodyPool, info, s.m_impl->config.method == LK_METHOD_AUTO);
		/* the bodies resting against far heavier ones, whose friction starts from zero, before any point's rows
		 * (the solver bodies made in the order the rows' pass below makes them) */
		for (int i = 0; i < numManifolds && map.frictionWarm(); ++i) {
			btPersistentManifold &m = *manifolds[i];
			const int a = s.getOrInitSolverBody(*const_cast<btCollisionObject *>(m.getBody0()), info.m_timeStep);
			const int b = s.getOrInitSolverBody(*const_cast<btCollisionObject *>(m.getBody1()), info.m_timeStep);
			map.markUnequal(m, a, b);
		}
		for (int i = 0; i < numManifolds; ++i) {
			if (i + 8 < numManifolds)
				prefetchManifold(*manifolds[i + 8]);
			if (i + 4 < numManifolds) {
				const btPersistentManifold &q = *manifolds[i + 4];
				prefetchBytes(&q.getContactPoint(0), (size_t)q.getNumContacts() * sizeof(btManifoldPoint));
			}
			btPersistentManifold &m = *manifolds[i];
			const int a = s.getOrInitSolverBody(*const_cast<btCollisionObject *>(m.getBody0()), info.m_timeStep);
			const int b = s.getOrInitSolverBody(*const_cast<btCollisionObject *>(m.getBody1()), info.m_timeStep);
			map.addManifold(m, a, b, s.m_tmpSolverContactConstraintPool);
		}
	}

	/* Bullet's own rows, as its setup makes them, in place of lcpkit's (joints and contacts made lcpkit's only),
	 * and the order pools its iterations sweep through (its setup ends with these, over the pools lcpkit left
	 * empty): every row in turn. For a fallback. */
	static void forBullet(S &s, btPersistentManifold **manifolds, int numManifolds, btTypedConstraint **constraints,
	                      int numConstraints, const btContactSolverInfo &info)
	{
		s.btSequentialImpulseConstraintSolver::convertJoints(constraints, numConstraints, info);
		s.m_tmpSolverContactConstraintPool.resizeNoInitialize(0);
		s.m_tmpSolverContactFrictionConstraintPool.resizeNoInitialize(0);
		s.m_tmpSolverContactRollingFrictionConstraintPool.resizeNoInitialize(0);
		s.btSequentialImpulseConstraintSolver::convertContacts(manifolds, numManifolds, info);
		const int nn = s.m_tmpSolverNonContactConstraintPool.size(), nc = s.m_tmpSolverContactConstraintPool.size(),
		          nf = s.m_tmpSolverContactFrictionConstraintPool.size();
		s.m_orderNonContactConstraintPool.resizeNoInitialize(nn);
		s.m_orderTmpConstraintPool.resizeNoInitialize((info.m_solverMode & SOLVER_USE_2_FRICTION_DIRECTIONS) ? 2 * nc
		                                                                                                    : nc);
		s.m_orderFrictionConstraintPool.resizeNoInitialize(nf);
		for (int i = 0; i < nn; ++i)
			s.m_orderNonContactConstraintPool[i] = i;
		for (int i = 0; i < nc; ++i)
			s.m_orderTmpConstraintPool[i] = i;
		for (int i = 0; i < nf; ++i)
			s.m_orderFrictionConstraintPool[i] = i;
	}
};

} // namespace detail

/* Bullet's velocity iterations as its solveGroupCacheFriendlyIterations runs them: up to maxIterations
 * sweeps, stopping early at m_leastSquaresResidualThreshold. Returns the sweeps run. */
int runBulletIterations(int maxIterations, const btContactSolverInfo &info,
                        const std::function<btScalar(int iteration)> &sweep);

} // namespace lk

#endif

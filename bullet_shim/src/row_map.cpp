/* One island of Bullet's solver pools as an lk_problem, and the impulses back (row_map.hpp). */
#include "row_map.hpp"

#include <BulletCollision/NarrowPhaseCollision/btManifoldPoint.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <cmath>
#include <cstddef>
#include <cstring>

namespace lk {
namespace detail {

/* Bullet writes "no bound" as +-SIMD_INFINITY (DBL_MAX) or clamps it by a joint's breaking threshold. */
static double bound(double x)
{
	if (x >= 1e30)
		return INFINITY;
	if (x <= -1e30)
		return -INFINITY;
	return x;
}

static lk_row_kind classify(double lo, double hi)
{
	if (lo == -INFINITY && hi == INFINITY)
		return LK_ROW_JOINT;
	/* a symmetric finite box is a motor (or a spring's force limit); a one-sided bound is a limit */
	if (std::isfinite(lo) && std::isfinite(hi) && lo == -hi)
		return LK_ROW_MOTOR;
	return LK_ROW_LIMIT;
}

RowMap::RowMap() : m_p(lk_problem_create(LK_FORM_ROWS))
{
	std::memset(m_kinds, 0, sizeof m_kinds);
	if (!m_p)
		throw std::bad_alloc();
}

RowMap::~RowMap()
{
	lk_problem_destroy(m_p);
}

/* What of a solver body's state is not finite, or nullptr: its velocity with the external impulse (u*), its
 * transform, its masses. x - x is 0 for a finite x and NaN otherwise. */
static const char *solverBodyFault(const btSolverBody &sb)
{
	const auto bad3 = [](const btVector3 &v) { return (v[0] - v[0]) + (v[1] - v[1]) + (v[2] - v[2]) != 0.0; };
	if (bad3(sb.m_linearVelocity) || bad3(sb.m_angularVelocity))
		return "velocity";
	if (bad3(sb.m_externalForceImpulse) || bad3(sb.m_externalTorqueImpulse))
		return "external force or torque";
	if (bad3(sb.m_worldTransform.getOrigin()))
		return "position";
	const btMatrix3x3 &R = sb.m_worldTransform.getBasis();
	if (bad3(R[0]) || bad3(R[1]) || bad3(R[2]))
		return "orientation";
	const btMatrix3x3 &I = sb.m_originalBody->getInvInertiaTensorWorld();
	if (bad3(sb.m_invMass) || bad3(I[0]) || bad3(I[1]) || bad3(I[2]))
		return "mass";
	return nullptr;
}

const btCollisionObject *RowMap::firstFrozen(const char **what) const
{
	if (what)
		*what = m_firstFault;
	return m_frozenSolver.empty() ? nullptr : m_firstFrozen;
}

lk_status RowMap::fillScreenedBody(void *arg, int k, lk_body_def *d)
{
	RowMap *m = static_cast<RowMap *>(arg);
	if (!m->m_frozenLk[(size_t)k])
		return fillBody(arg, k, d);
	/* a frozen body: an immovable placeholder, so that the rows keep their body indices; every row on it is
	 * left out (screenRows) */
	std::memset(d, 0, sizeof *d);
	std::memset(&m->m_motion[(size_t)k], 0, sizeof m->m_motion[(size_t)k]);
	return LK_OK;
}

lk_status RowMap::fillBody(void *arg, int k, lk_body_def *d)
{
	RowMap *m = static_cast<RowMap *>(arg);
	const btSolverBody &sb = m->m_pools->bodies[m->m_solverOfLk[(size_t)k]];
	/* Bullet's solver body velocity before the constraints: the velocity plus the external force impulse
	 * h M^-1 f_ext (btSolverBody::getVelocityInLocalPointNoDelta), i.e. the u* of docs/maths.md */
	const btVector3 v = sb.m_linearVelocity + sb.m_externalForceImpulse;
	const btVector3 w = sb.m_angularVelocity + sb.m_externalTorqueImpulse;
	const btMatrix3x3 &I = sb.m_originalBody->getInvInertiaTensorWorld();
	const btVector3 &F = sb.m_angularFactor;
	for (int r = 0; r < 3; ++r) {
		d->u[r] = v[r];
		d->u[3 + r] = w[r];
		d->inv_mass[r] = problemInvMass(sb, r);
	}
	for (int r = 0; r < 3; ++r)
		for (int c = 0; c < 3; ++c)
			d->inv_inertia[3 * r + c] = problemInvInertia(I, F, r, c);
	RowMotion &mo = m->m_motion[(size_t)k]; /* body k's own: fill may run for several k at once */
	std::memcpy(mo.u, d->u, sizeof mo.u);
	std::memcpy(mo.inv_mass, d->inv_mass, sizeof mo.inv_mass);
	mo.locked = lockedBody(sb);
	return LK_OK;
}

/* A row's J from Bullet's row, as six stores of two numbers: (n1, r1 x n1) and (n2, r2 x n2). */
static inline void storeJacobian(lk_row_def &d, const btSolverConstraint &c)
{
	typedef double pair __attribute__((vector_size(16)));
	const btVector3 *v[4] = {&c.m_contactNormal1, &c.m_relpos1CrossNormal, &c.m_contactNormal2,
	                         &c.m_relpos2CrossNormal};
	for (int side = 0; side < 2; ++side) {
		const btVector3 &n = *v[2 * side], &r = *v[2 * side + 1];
		const pair p[3] = {{n[0], n[1]}, {n[2], r[0]}, {r[1], r[2]}};
		std::memcpy(d.J[side], p, sizeof p);
	}
}

/* A row's J, target and CFM finite (what lk_problem_add_row refuses otherwise). */
static bool rowFinite(const lk_row_def &d)
{
	double z = (d.c - d.c) + (d.s - d.s);
	for (int k = 0; k < 6; ++k)
		z += (d.J[0][k] - d.J[0][k]) + (d.J[1][k] - d.J[1][k]);
	return z == 0.0;
}

/* A row's definition from Bullet's row c (the mapping of row_map.hpp's class comment) on the problem's bodies a
 * and b, whose u* and masses sa and sb hold; diag = 1 / jacDiagABInv. */
static inline void writeDef(lk_row_def &d, const btSolverConstraint &c, int a, int b, const RowMotion &sa,
                            const RowMotion &sb, double diag, lk_row_kind kind, int findex, const double *point,
                            bool normalRow, int index)
{
	/* the world's side: u* zero, so its terms add +0 (ju starts at +0 and never becomes -0); its J is copied as
	 * Bullet has it, which the problem drops (lk_problem_get_row reads it as zeros) */
	double ju = 0.0;
	for (int k = 0; k < 3; ++k) {
		ju += c.m_contactNormal1[k] * sa.u[k];
		ju += c.m_contactNormal2[k] * sb.u[k];
	}
	for (int k = 0; k < 3; ++k) {
		ju += c.m_relpos1CrossNormal[k] * sa.u[3 + k];
		ju += c.m_relpos2CrossNormal[k] * sb.u[3 + k];
	}
	/* J stored as pairs read from Bullet's row: a pair loaded from two stores of one number each waits for both
	 * to reach the cache (no store forwarding) */
	storeJacobian(d, c);
	d.body[0] = a;
	d.body[1] = b;
	d.s = c.m_cfm * diag;
	d.c = ju + c.m_rhs * diag;
	d.kind = kind;
	d.findex = findex;
	d.mu = 0.0;
	if (findex >= 0) {
		d.mu = c.m_friction;
		d.lo = -INFINITY;
		d.hi = INFINITY;
	} else if (normalRow) {
		d.lo = c.m_lowerLimit;
		d.hi = INFINITY; /* Bullet's 1e10 stands for "unbounded" */
	} else {
		d.lo = bound(c.m_lowerLimit);
		d.hi = bound(c.m_upperLimit);
		d.kind = classify(d.lo, d.hi);
	}
	d.point[0] = point[0], d.point[1] = point[1], d.point[2] = point[2];
	d.id = (uint64_t)index;
}

int RowMap::screenRow(const btSolverConstraint &c, int *a, int *b) const
{
	const unsigned nsb = (unsigned)m_lkOfSolver.size();
	if ((unsigned)c.m_solverBodyIdA >= nsb || (unsigned)c.m_solverBodyIdB >= nsb)
		return ROW_BAD;
	*a = m_lkOfSolver[(size_t)c.m_solverBodyIdA];
	*b = m_lkOfSolver[(size_t)c.m_solverBodyIdB];
	/* rows that move nothing keep Bullet's impulse: both sides static (or the same body) */
	if (*a == *b)
		return ROW_LEFT_OUT;
	const double jinv = c.m_jacDiagABInv;
	if (!std::isfinite(jinv) || jinv == 0.0)
		return ROW_LEFT_OUT; /* Bullet's own update leaves such a row unchanged too */
	const RowMotion &sa = motion(*a), &sb = motion(*b);
	/* a direction every side has locked (a linear or angular factor of 0) has no diagonal: Bullet's estimate
	 * ignores the factors, so where a side has a factor other than 1, compare J M^-1 J^T with the factors
	 * against it and leave the row out. That from what Bullet's setup already holds: the linear part from the
	 * inverse masses, the angular part as (r x n) . I^-1 (r x n), Bullet's m_angularComponent being I^-1 (r x n)
	 * (with the angular factor) on each side; the core forms its own A_ii. Without a locked side it is
	 * Bullet's estimate itself, and the row stays. */
	if (sa.locked || sb.locked) {
		const double diag = 1.0 / jinv, s = c.m_cfm * diag;
		double jmj = 0.0;
		for (int k = 0; k < 3; ++k) {
			jmj += sa.inv_mass[k] * c.m_contactNormal1[k] * c.m_contactNormal1[k];
			jmj += sb.inv_mass[k] * c.m_contactNormal2[k] * c.m_contactNormal2[k];
		}
		if (*a != LK_STATIC)
			jmj += c.m_relpos1CrossNormal.dot(c.m_angularComponentA);
		if (*b != LK_STATIC)
			jmj += c.m_relpos2CrossNormal.dot(c.m_angularComponentB);
		if (!(jmj + s > 1e-9 * std::fabs(diag)))
			return ROW_LEFT_OUT;
	}
	return ROW_MADE;
}

int RowMap::makeRow(const btSolverConstraint &c, lk_row_kind kind, int findex, const double *point,
                    bool normalRow)
{
	int a, b;
	const int screen = screenRow(c, &a, &b);
	if (screen != ROW_MADE)
		return screen;
	lk_row_def &d = m_defs[(size_t)m_n];
	writeDef(d, c, a, b, motion(a), motion(b), 1.0 / c.m_jacDiagABInv, kind, findex, point, normalRow, m_n);
	keepRow(c, d.kind, c.m_appliedImpulse);
	return ROW_MADE;
}

/* getInfo2 writes a row's J blocks, target, CFM and bounds at fixed strides: lk_row_def's, in doubles */
static_assert(sizeof(lk_row_def) % sizeof(btScalar) == 0 && offsetof(lk_row_def, J) % sizeof(btScalar) == 0 &&
                  offsetof(lk_row_def, c) % sizeof(btScalar) == 0 && offsetof(lk_row_def, s) % sizeof(btScalar) == 0 &&
                  offsetof(lk_row_def, lo) % sizeof(btScalar) == 0 && offsetof(lk_row_def, hi) % sizeof(btScalar) == 0,
              "lk_row_def as the rows of btConstraintInfo2");

void RowMap::beginJoints(int rows, btSolverConstraint *pool, const btAlignedObjectArray<btSolverBody> &bodies)
{
	if (m_defs.size() < (size_t)rows)
		m_defs.resize((size_t)rows);
	if (m_out.size() < (size_t)rows) {
		m_out.resize((size_t)rows);
		m_lambda0.resize((size_t)rows);
	}
	m_jointRows = rows;
	m_jointPool = pool;
	m_jointsBad = false;
	m_jointed.assign((size_t)bodies.size(), 0);
	m_n = 0;
	std::memset(m_kinds, 0, sizeof m_kinds);
	/* the solver bodies' lcpkit indices, as build makes them: bodies Bullet adds later (its fixed body, made
	 * at the first joint or contact on the world; kinematic bodies) come after these and leave them as they
	 * are */
	m_jointBodies = &bodies;
	mapBodies(bodies);
}

void RowMap::mapBodies(const btAlignedObjectArray<btSolverBody> &bodies)
{
	const int nsb = bodies.size();
	m_lkOfSolver.assign((size_t)nsb, LK_STATIC);
	m_solverOfLk.clear();
	for (int i = 0; i < nsb; ++i)
		if (bodies[i].m_originalBody) {
			m_lkOfSolver[(size_t)i] = (int)m_solverOfLk.size();
			m_solverOfLk.push_back(i);
		}
}

/* Bullet's products on plain numbers, in its order of operations (btVector3::dot, btMatrix3x3 times a
 * vector), so that the sums are Bullet's to the bit: x . v, (x m) . x and (I x) . x. */
static inline double dot3(const double *x, const btVector3 &v)
{
	return x[0] * v[0] + x[1] * v[1] + x[2] * v[2];
}

static inline double linearEnergy(const double *x, double m)
{
	return x[0] * m * x[0] + x[1] * m * x[1] + x[2] * m * x[2];
}

static inline double angularEnergy(const btMatrix3x3 &I, const double *x)
{
	const double y0 = I[0][0] * x[0] + I[0][1] * x[1] + I[0][2] * x[2];
	const double y1 = I[1][0] * x[0] + I[1][1] * x[1] + I[1][2] * x[2];
	const double y2 = I[2][0] * x[0] + I[2][1] * x[1] + I[2][2] * x[2];
	return y0 * x[0] + y1 * x[1] + y2 * x[2];
}

void RowMap::addJoint(btTypedConstraint &con, int row0, int count, int solverBodyA, int solverBodyB,
                      const btSolverBody &bodyA, const btSolverBody &bodyB, const btContactSolverInfo &info)
{
	if ((unsigned)solverBodyA >= m_lkOfSolver.size() || (unsigned)solverBodyB >= m_lkOfSolver.size())
		mapBodies(*m_jointBodies); /* a body Bullet has added since: its fixed body, a kinematic body */
	const unsigned nsb = (unsigned)m_lkOfSolver.size();
	if ((unsigned)solverBodyA >= nsb || (unsigned)solverBodyB >= nsb) {
		m_jointsBad = true;
		return;
	}
	/* the moving bodies a joint holds (not the fixed body every static object shares) */
	if (m_jointed.size() < nsb)
		m_jointed.resize(nsb, 0);
	m_jointed[(size_t)solverBodyA] |= bodyA.m_originalBody && !bodyA.m_invMass.isZero();
	m_jointed[(size_t)solverBodyB] |= bodyB.m_originalBody && !bodyB.m_invMass.isZero();
	/* the rows as Bullet's convertJoint hands them to getInfo2: J and targets 0, bounds infinite, the first
	 * row's CFM the world's (the others' 0); written from the next row of the problem on, so that the rows
	 * kept stay where getInfo2 put them */
	lk_row_def *d = &m_defs[(size_t)m_n];
	std::memset(d, 0, (size_t)count * sizeof *d); /* one call: a loop of inlined clears mispredicts */
	for (int r = 0; r < count; ++r) {
		d[r].lo = -SIMD_INFINITY;
		d[r].hi = SIMD_INFINITY;
	}
	d[0].s = info.m_globalCfm;
	btTypedConstraint::btConstraintInfo2 i2;
	i2.fps = 1.0 / info.m_timeStep;
	i2.erp = info.m_erp;
	i2.m_J1linearAxis = &d->J[0][0];
	i2.m_J1angularAxis = &d->J[0][3];
	i2.m_J2linearAxis = &d->J[1][0];
	i2.m_J2angularAxis = &d->J[1][3];
	i2.rowskip = (int)(sizeof(lk_row_def) / sizeof(btScalar));
	i2.m_constraintError = &d->c;
	i2.cfm = &d->s;
	i2.m_lowerLimit = &d->lo;
	i2.m_upperLimit = &d->hi;
	i2.m_numIterations = info.m_numIterations;
	i2.m_damping = info.m_damping;
	con.getInfo2(&i2);

	/* what Bullet's convertJoint derives for its own iterations, as far as the problem needs it: the bounds
	 * clamped by the breaking threshold, J M^-1 J^T with Bullet's masses (its jacDiagABInv = 1 / that, or 0
	 * where |J M^-1 J^T| <= SIMD_EPSILON: such a row never moves), and the target: Bullet's right-hand side
	 * rhs = (error - damping J v) / (J M^-1 J^T) maps (class comment) to c = J u* + rhs (J M^-1 J^T) =
	 * error + (1 - damping) J v, with J v Bullet's relative velocity (u*, the velocity with the external
	 * impulse) */
	const btRigidBody &rbA = con.getRigidBodyA(), &rbB = con.getRigidBodyB();
	const double threshold = con.getBreakingImpulseThreshold();
	const btMatrix3x3 &IA = rbA.getInvInertiaTensorWorld(), &IB = rbB.getInvInertiaTensorWorld();
	const double mA = rbA.getInvMass(), mB = rbB.getInvMass();
	const double damping = i2.m_damping; /* the world's, or the constraint's own from its getInfo2 (a ball joint's) */
	btVector3 vA, wA, vB, wB; /* the bodies' velocities, which only a damped joint's target reads */
	if (damping != 1.0) {
		const btVector3 zero(0, 0, 0);
		vA = rbA.getLinearVelocity() + (bodyA.m_originalBody ? bodyA.m_externalForceImpulse : zero);
		wA = rbA.getAngularVelocity() + (bodyA.m_originalBody ? bodyA.m_externalTorqueImpulse : zero);
		vB = rbB.getLinearVelocity() + (bodyB.m_originalBody ? bodyB.m_externalForceImpulse : zero);
		wB = rbB.getAngularVelocity() + (bodyB.m_originalBody ? bodyB.m_externalTorqueImpulse : zero);
	}
	const btVector3 &point = bodyA.m_worldTransform.getOrigin();
	const bool feedback = con.getJointFeedback() != nullptr;
	/* the problem's bodies; both sides static (or the same body): the rows move nothing */
	const int a = m_lkOfSolver[(size_t)solverBodyA], b = m_lkOfSolver[(size_t)solverBodyB];
	/* a direction every side has locked (a linear or angular factor of 0) has no diagonal, where Bullet's
	 * J M^-1 J^T ignores the factors: such a side's rows are screened with the problem's masses */
	const bool la = a != LK_STATIC && lockedBody(bodyA), lb = b != LK_STATIC && lockedBody(bodyB);
	for (int r = 0; r < count; ++r) {
		lk_row_def &e = d[r];
		/* what Bullet's finish reads of the row (writeBackJoints): the constraint, the impulse, and for a
		 * joint with feedback the Jacobian */
		btSolverConstraint &sc = m_jointPool[row0 + r];
		sc.m_originalContactPoint = &con;
		sc.m_appliedImpulse = 0.0;
		const double *n1 = e.J[0], *r1 = e.J[0] + 3, *n2 = e.J[1], *r2 = e.J[1] + 3;
		if (feedback) {
			sc.m_contactNormal1.setValue(n1[0], n1[1], n1[2]);
			sc.m_relpos1CrossNormal.setValue(r1[0], r1[1], r1[2]);
			sc.m_contactNormal2.setValue(n2[0], n2[1], n2[2]);
			sc.m_relpos2CrossNormal.setValue(r2[0], r2[1], r2[2]);
		}
		const double jmj = linearEnergy(n1, mA) + angularEnergy(IA, r1) + linearEnergy(n2, mB) + angularEnergy(IB, r2);
		if (!(std::fabs(jmj) > SIMD_EPSILON) || a == b)
			continue;
		/* s = cfm_b / jacDiagABInv */
		const double s = e.s * jmj;
		if (la || lb) {
			double energy = 0.0;
			if (a != LK_STATIC)
				addSideEnergy(bodyA, e.J[0], energy);
			if (b != LK_STATIC)
				addSideEnergy(bodyB, e.J[1], energy);
			if (!(energy + s > 1e-9 * std::fabs(jmj)))
				continue;
		}
		lk_row_def &k = m_defs[(size_t)m_n];
		if (&k != &e)
			k = e;
		if (k.hi >= threshold)
			k.hi = threshold;
		if (k.lo <= -threshold)
			k.lo = -threshold;
		k.s = s;
		if (damping != 1.0)
			k.c += (1.0 - damping) * (dot3(n1, vA) + dot3(r1, wA) + dot3(n2, vB) + dot3(r2, wB));
		k.lo = bound(k.lo);
		k.hi = bound(k.hi);
		k.kind = classify(k.lo, k.hi);
		k.findex = -1;
		k.mu = 0.0;
		k.body[0] = a;
		k.body[1] = b;
		k.point[0] = point[0], k.point[1] = point[1], k.point[2] = point[2];
		k.id = (uint64_t)m_n;
		m_out[(size_t)m_n] = &sc.m_appliedImpulse;
		m_lambda0[(size_t)m_n] = 0.0; /* Bullet starts joint rows from 0 */
		m_kinds[k.kind]++;
		++m_n;
	}
}

lk_status RowMap::build(const Pools &pools, bool points, int threads)
{
	/* the joint rows addJoint made, if any, are the first m_n, and the contact rows addManifold made follow
	 * them: for this build only */
	const int jointRows = m_jointRows;
	const bool jointsMade = jointRows >= 0;
	m_jointRows = -1;
	const int jointN = jointsMade ? m_n : 0;
	int jointKinds[LK_ROW_KIND_COUNT];
	std::memcpy(jointKinds, m_kinds, sizeof jointKinds);
	lk_status st = buildOnce(pools, points, threads, jointsMade, jointRows, false);
	if (st == LK_ERR_NONFINITE) {
		/* something is not finite: made again with it left out (the joint rows as addJoint made them) */
		m_n = jointN;
		std::memcpy(m_kinds, jointKinds, sizeof m_kinds);
		st = buildOnce(pools, points, threads, jointsMade, jointRows, true);
	}
	m_contactsMade = false;
	return st;
}

bool RowMap::planContacts(const Pools &pools)
{
	const int nc = pools.contact.size();
	m_contactRow.resize((size_t)nc);
	m_plan.clear();
	m_plan.reserve((size_t)nc + (size_t)pools.friction.size() + (size_t)pools.rolling.size());
	for (int j = 0; j < nc; ++j) {
		const btSolverConstraint &c = pools.contact[j];
		int a, b;
		const int r = screenRow(c, &a, &b);
		if (r == ROW_BAD)
			return false;
		m_contactRow[(size_t)j] = r == ROW_MADE ? m_n : -1;
		if (r == ROW_MADE) {
			m_plan.push_back({&c, a, b, -1, j, LK_ROW_NORMAL});
			keepRow(c, LK_ROW_NORMAL, c.m_appliedImpulse);
		}
	}
	/* friction and rolling friction take their bounds from their contact's normal row (m_frictionIndex
	 * indexes the contact pool), as ODE's findex */
	const btConstraintArray *fric[2] = {&pools.friction, &pools.rolling};
	for (int pool = 0; pool < 2; ++pool) {
		const int n = fric[pool]->size();
		for (int j = 0; j < n; ++j) {
			const btSolverConstraint &c = (*fric[pool])[j];
			const int f = c.m_frictionIndex;
			if (f < 0 || f >= nc || m_contactRow[(size_t)f] < 0)
				continue;
			int a, b;
			const int r = screenRow(c, &a, &b);
			if (r == ROW_BAD)
				return false;
			if (r == ROW_MADE) {
				m_plan.push_back({&c, a, b, m_contactRow[(size_t)f], f, LK_ROW_FRICTION});
				keepRow(c, LK_ROW_FRICTION, c.m_appliedImpulse);
			}
		}
	}
	return true;
}

lk_status RowMap::fillContact(void *arg, int k, lk_row_def *d)
{
	const RowMap *m = static_cast<const RowMap *>(arg);
	const int row = m->m_fused + k;
	const Planned &pl = m->m_plan[(size_t)k];
	const btSolverConstraint &c = *pl.row;
	static const double unknown[3] = {0, 0, 0};
	double point[3] = {0, 0, 0};
	const void *mp = m->m_planPoints ? m->m_planPools->contact[pl.contact].m_originalContactPoint : nullptr;
	if (mp) {
		const btVector3 &o = static_cast<const btManifoldPoint *>(mp)->getPositionWorldOnB();
		point[0] = o[0], point[1] = o[1], point[2] = o[2];
	}
	writeDef(*d, c, pl.a, pl.b, m->motion(pl.a), m->motion(pl.b), 1.0 / c.m_jacDiagABInv, pl.kind, pl.findex,
	         mp ? point : unknown, pl.findex < 0, row);
	return LK_OK;
}

void RowMap::screenRows()
{
	std::vector<int> moved((size_t)m_n, -1);
	int kept = 0;
	std::memset(m_kinds, 0, sizeof m_kinds);
	for (int k = 0; k < m_n; ++k) {
		lk_row_def d = m_defs[(size_t)k];
		const bool frozen = (d.body[0] != LK_STATIC && m_frozenLk[(size_t)d.body[0]]) ||
		                    (d.body[1] != LK_STATIC && m_frozenLk[(size_t)d.body[1]]);
		/* a friction row goes with its normal (which comes before it) */
		if (frozen || !rowFinite(d) || (d.findex >= 0 && moved[(size_t)d.findex] < 0)) {
			++m_leftOut;
			continue;
		}
		if (d.findex >= 0)
			d.findex = moved[(size_t)d.findex];
		d.id = (uint64_t)kept;
		m_defs[(size_t)kept] = d;
		m_out[(size_t)kept] = m_out[(size_t)k];
		m_lambda0[(size_t)kept] = m_lambda0[(size_t)k];
		m_kinds[d.kind]++;
		moved[(size_t)k] = kept++;
	}
	m_n = kept;
}

lk_status RowMap::buildOnce(const Pools &pools, bool points, int threads, bool jointsMade, int jointRows,
                       bool screened)
{
	lk_problem_clear(m_p);
	if (!jointsMade) {
		std::memset(m_kinds, 0, sizeof m_kinds);
		m_n = 0;
	}
	m_screened = screened;
	m_leftOut = 0;
	m_frozenSolver.clear();
	/* contact rows made from the manifolds: Bullet's contact pool holds its split-impulse rows only */
	const bool contactsMade = m_contactsMade && jointsMade;
	m_contactsFromManifolds = contactsMade;
	const int nsb = pools.bodies.size();
	const int nnc = pools.nonContact.size();
	const int nc = contactsMade ? 0 : pools.contact.size(), nf = contactsMade ? 0 : pools.friction.size(),
	          nr = contactsMade ? 0 : pools.rolling.size();
	size_t most = (size_t)nnc + (size_t)nc + (size_t)nf + (size_t)nr;
	if (contactsMade)
		for (const ContactBlock &k : m_block)
			most += (size_t)k.n;
	lk_status st = lk_problem_reserve(m_p, nsb, (int)std::min(most, (size_t)INT32_MAX));
	if (st != LK_OK)
		return st;
	/* room for every row Bullet made; only grows (the rows left out leave their slots unused). The definitions
	 * are the joint rows' only, but a screened build's are every row's (screenRows reads them) */
	const size_t defs = screened ? most : (size_t)nnc;
	if (m_defs.size() < defs)
		m_defs.resize(defs);
	m_out.resize(most);
	m_lambda0.resize(most);
	/* the solver bodies of rigid bodies, in Bullet's order (the others, Bullet's fixed body, are the world),
	 * made on the solver's threads for many bodies */
	mapBodies(pools.bodies);
	m_motion.resize(m_solverOfLk.size());
	if (screened) {
		m_frozenLk.assign(m_solverOfLk.size(), 0);
		for (size_t k = 0; k < m_solverOfLk.size(); ++k)
			if (const char *fault = solverBodyFault(pools.bodies[m_solverOfLk[k]])) {
				m_frozenLk[k] = 1;
				if (m_frozenSolver.empty()) {
					m_firstFault = fault;
					m_firstFrozen = pools.bodies[m_solverOfLk[k]].m_originalBody;
				}
				m_frozenSolver.push_back(m_solverOfLk[k]);
			}
	}
	m_pools = &pools;
	st = lk_problem_add_bodies(m_p, (int)m_solverOfLk.size(), screened ? fillScreenedBody : fillBody, this, threads,
	                           nullptr);
	m_pools = nullptr;

	int made = st == LK_OK ? ROW_MADE : ROW_BAD;
	if (jointsMade && (jointRows != nnc || m_jointsBad))
		made = ROW_BAD;
	if (contactsMade && m_contactsBad)
		made = ROW_BAD;
	for (int j = 0; j < nnc && made != ROW_BAD && !jointsMade; ++j) {
		const btSolverConstraint &c = pools.nonContact[j];
		double point[3] = {0, 0, 0};
		if (c.m_solverBodyIdA >= 0 && c.m_solverBodyIdA < nsb) {
			const btVector3 &o = pools.bodies[c.m_solverBodyIdA].m_worldTransform.getOrigin();
			point[0] = o[0], point[1] = o[1], point[2] = o[2];
		}
		made = makeRow(c, LK_ROW_JOINT, -1, point, false);
	}

	/* the contacts' rows: made from the manifolds already, or planned here and made by the problem from
	 * Bullet's rows (fillContact) on the build's threads; screened, in m_defs first, where screenRows leaves
	 * out what is not finite */
	m_fused = m_n;
	if (contactsMade && made != ROW_BAD) {
		takeContactRows(screened);
		if (screened)
			screenRows();
	} else {
		if (made != ROW_BAD && !planContacts(pools))
			made = ROW_BAD;
		m_planPools = &pools;
		m_planPoints = points;
		if (screened && made != ROW_BAD) {
			for (int k = m_fused; k < m_n; ++k)
				fillContact(this, k - m_fused, &m_defs[(size_t)k]);
			screenRows();
		}
	}
	m_out.resize((size_t)m_n);
	m_lambda0.resize((size_t)m_n);
	if (st == LK_OK && made == ROW_BAD)
		st = LK_ERR_OUT_OF_RANGE;
	/* the problem's records: the joints' (all, screened) from the definitions in place, then the contacts'
	 * (from their blocks in place, or made by fillContact); each checked as lk_problem_add_row checks it */
	if (st == LK_OK)
		st = lk_problem_add_row_array(m_p, screened ? m_n : m_fused, m_defs.data(), nullptr, threads, nullptr);
	if (st == LK_OK && !screened && contactsMade)
		for (int k = 0; k < BLOCK_COUNT && st == LK_OK; ++k)
			st = lk_problem_add_row_array(m_p, m_block[k].n, m_block[k].defs.get(), nullptr, threads, nullptr);
	else if (st == LK_OK && !screened)
		st = lk_problem_add_rows(m_p, m_n - m_fused, fillContact, this, threads, nullptr);
	m_planPools = nullptr;
	if (st == LK_OK)
		st = lk_problem_set_lambda(m_p, m_lambda0.data(), m_n);
	return st;
}

void RowMap::writeBack(const Pools &pools)
{
	const double *lambda = lk_problem_lambda(m_p);
	const size_t n = m_out.size();
	for (size_t k = 0; k < n; ++k) {
		if (k + 16 < n && m_out[k + 16]) /* a manifold point's impulse */
			__builtin_prefetch(m_out[k + 16], 1);
		if (btScalar *out = m_out[k])
			*out = lambda[k];
	}
	writeKept();
	for (size_t k = 0; k < m_solverOfLk.size(); ++k) {
		double du[6];
		if (lk_problem_delta_velocity(m_p, (int)k, du) != LK_OK)
			continue;
		btSolverBody &sb = pools.bodies[m_solverOfLk[k]];
		sb.m_deltaLinearVelocity.setValue(du[0], du[1], du[2]);
		sb.m_deltaAngularVelocity.setValue(du[3], du[4], du[5]);
	}
	/* Bullet's finish sets a body's velocity to the solver body's velocity, delta and external impulse, and
	 * moves it with the split impulse's push: all zero for a frozen body, which stays where it is and does not
	 * carry its NaN on */
	for (int i : m_frozenSolver) {
		btSolverBody &sb = pools.bodies[i];
		sb.m_linearVelocity.setZero();
		sb.m_angularVelocity.setZero();
		sb.m_externalForceImpulse.setZero();
		sb.m_externalTorqueImpulse.setZero();
		sb.m_deltaLinearVelocity.setZero();
		sb.m_deltaAngularVelocity.setZero();
		sb.m_pushVelocity.setZero();
		sb.m_turnVelocity.setZero();
	}
}

void RowMap::writeKept()
{
	if (m_contactsFromManifolds) {
		for (const Keep &k : m_keep)
			*k.to = k.impulse;
		frictionToPlaneAxes();
	}
}

bool RowMap::readImpulses(std::vector<double> &out) const
{
	if (m_contactsFromManifolds)
		return false;
	out.resize(m_out.size());
	for (size_t k = 0; k < m_out.size(); ++k)
		out[k] = *m_out[k];
	return true;
}

} // namespace detail
} // namespace lk

/* lk::BulletSolver's contact rows made straight from Bullet's manifold points (row_map.hpp, beginContacts).
 *
 * Bullet's own setup (btSequentialImpulseConstraintSolver::convertContact, setupContactConstraint,
 * setupFrictionConstraint, setupTorsionalFrictionConstraint) prepares every row for its own iterations: the
 * angular components I^-1 (r x n), the inverse of J M^-1 J^T, the right-hand side, and the warm start applied
 * to the bodies. lcpkit needs none of that: the problem forms M^-1 J^T and A_ii itself, and a row's target is
 * what Bullet's right-hand side maps back to (row_map.hpp's class comment), c = J u* + rhs / jacDiagABInv, in
 * which Bullet's relative velocity cancels J u*:
 * - a contact normal: c = restitution - d / h where the points are apart by d = distance + slop > 0, else
 *   restitution + erp (-d) / h, or the restitution alone where the split impulse takes the penetration (its
 *   position pass then needs Bullet's row, made here for those points only);
 * - a friction row: c = the desired velocity (a conveyor's; 0) plus the friction anchor's correction, plus
 *   (r x t) . the external torque impulse on each side, which Bullet's relative velocity of a friction row
 *   leaves out and the problem's u* holds;
 * - a rolling or spinning friction row (J = (0, -a), (0, a)): -a . the external torque impulse of the first
 *   side plus a . the second's, for the same reason.
 * The CFM of a normal is Bullet's cfm / h itself (s = cfm_b / jacDiagABInv with cfm_b = cfm jacDiagABInv), a
 * friction row's cfmSlip / jacDiagABInv. The friction directions are Bullet's, computed as it computes them
 * and written to the point as it writes them (the next step's cached directions read them).
 */
#include "row_map.hpp"

#include <BulletCollision/CollisionShapes/btCollisionShape.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <algorithm>
#include <cmath>

namespace lk {
namespace detail {

namespace {

/* Bullet's anisotropic friction: the direction scaled in the object's own axes. */
void anisotropic(const btCollisionObject *o, btVector3 &dir, int mode)
{
	if (o && o->hasAnisotropicFriction(mode)) {
		const btMatrix3x3 &R = o->getWorldTransform().getBasis();
		btVector3 local = dir * R; /* R^T dir */
		local *= o->getAnisotropicFriction();
		dir = R * local;
	}
}

/* One side of a row's J: (lin, ang), or zeros where the side has no body (Bullet's fixed body). */
inline void setSide(lk_row_def &d, int side, const btRigidBody *rb, const btVector3 &lin, const btVector3 &ang)
{
	double *J = d.J[side];
	if (rb) {
		J[0] = lin[0], J[1] = lin[1], J[2] = lin[2];
		J[3] = ang[0], J[4] = ang[1], J[5] = ang[2];
	} else {
		J[0] = J[1] = J[2] = J[3] = J[4] = J[5] = 0.0;
	}
}

/* One side's part of Bullet's J M^-1 J^T estimate for a row along dir at r with torque axis t = r x dir (its
 * setup's denominators: 1/m + dir . ((I^-1 t F) x r)), and the angular component I^-1 t F. */
inline double bulletDenominator(const btRigidBody *rb, const btVector3 &r, const btVector3 &dir, const btVector3 &t,
                                btVector3 &angular)
{
	if (!rb) {
		angular.setZero();
		return 0.0;
	}
	angular = rb->getInvInertiaTensorWorld() * t * rb->getAngularFactor();
	return rb->getInvMass() + dir.dot(angular.cross(r));
}

/* The friction impulse a point's rows applied, a vector: its two impulses along its two directions. */
inline btVector3 pointFriction(const btManifoldPoint &cp)
{
	return cp.m_lateralFrictionDir1 * cp.m_appliedImpulseLateral1 +
	       cp.m_lateralFrictionDir2 * cp.m_appliedImpulseLateral2;
}

/* A point of a sphere: one point carries the contact, it moves over the sphere as the sphere rolls, and its slip
 * is the contact's own (a box face's points share its load, and a resting face's slip is noise) */
inline bool roundPoint(const btCollisionObject *o0, const btCollisionObject *o1)
{
	return o0->getCollisionShape()->getShapeType() == SPHERE_SHAPE_PROXYTYPE ||
	       o1->getCollisionShape()->getShapeType() == SPHERE_SHAPE_PROXYTYPE;
}

} // namespace

void RowMap::beginContacts(const btAlignedObjectArray<btSolverBody> &bodies, const btContactSolverInfo &info,
                           bool frictionWarm)
{
	if (m_jointRows < 0)
		beginJoints(0, nullptr, bodies); /* no joint conversion before: none made */
	m_jointBodies = &bodies;
	m_info = &info;
	m_frictionWarm = frictionWarm && (info.m_solverMode & SOLVER_USE_WARMSTARTING);
	m_lighter.assign(m_frictionWarm ? (size_t)bodies.size() : 0, 0);
	m_frictionPoints.clear();
	m_contactBase = m_n;
	m_contactsMade = true;
	m_contactsBad = false;
	for (ContactBlock &k : m_block)
		k.n = 0;
	m_keep.clear();
}

void RowMap::addManifold(btPersistentManifold &manifold, int solverBodyA, int solverBodyB, btConstraintArray &split)
{
	const btAlignedObjectArray<btSolverBody> &bodies = *m_jointBodies;
	if ((unsigned)solverBodyA >= m_lkOfSolver.size() || (unsigned)solverBodyB >= m_lkOfSolver.size())
		mapBodies(bodies); /* a body Bullet has added since: its fixed body, a kinematic body */
	const unsigned nsb = (unsigned)m_lkOfSolver.size();
	if ((unsigned)solverBodyA >= nsb || (unsigned)solverBodyB >= nsb) {
		m_contactsBad = true;
		return;
	}
	const btSolverBody &A = bodies[solverBodyA], &B = bodies[solverBodyB];
	/* Bullet's guard: no response between two static (or kinematic) objects */
	if (A.m_invMass.fuzzyZero() && B.m_invMass.fuzzyZero())
		return;
	const int a = m_lkOfSolver[(size_t)solverBodyA], b = m_lkOfSolver[(size_t)solverBodyB];
	/* a side with a locked direction (a factor other than 1): its rows are screened with the problem's masses,
	 * as the rows of Bullet's pools are (screenRow) */
	const bool locked = (a != LK_STATIC && lockedBody(A)) || (b != LK_STATIC && lockedBody(B));
	const btScalar threshold = manifold.getContactProcessingThreshold();
	const int points = manifold.getNumContacts();
	for (int j = 0; j < points; ++j) {
		btManifoldPoint &cp = manifold.getContactPoint(j);
		if (cp.getDistance() <= threshold)
			addPoint(cp, manifold, A, B, solverBodyA, solverBodyB, a, b, locked, split);
	}
}

void RowMap::ContactBlock::grow()
{
	const int more = cap ? 2 * cap : 1024;
	std::unique_ptr<lk_row_def[]> d(new lk_row_def[(size_t)more]);
	std::unique_ptr<btScalar *[]> o(new btScalar *[(size_t)more]);
	std::unique_ptr<double[]> w(new double[(size_t)more]);
	std::copy(defs.get(), defs.get() + n, d.get());
	std::copy(out.get(), out.get() + n, o.get());
	std::copy(warm.get(), warm.get() + n, w.get());
	defs = std::move(d);
	out = std::move(o);
	warm = std::move(w);
	cap = more;
}

/* A body that rests against a moving body more than kFrictionWarmRatio times as heavy: the sweeps at the
 * engine's iterations leave its friction far from solved (Gauss-Seidel converges slowly across a mass ratio),
 * and carried over, that friction fed a 10 kg box resting on a 1 kg one until it rocked (0.1 J of kinetic
 * energy and 3 cm of drift after 10 s at 10 iterations, against 2e-6 J and 1 mm from zero; 3 times as heavy,
 * at rest with it: docs/bullet.md, "Friction warm start"). Its contact with the ground too: with that friction
 * alone carried over, a 30 kg box on a 1 kg one kept 0.44 J at the end, against 0.12 J with neither (Bullet's
 * own solver 0.14). */
static constexpr double kFrictionWarmRatio = 4.0;

void RowMap::markUnequal(const btPersistentManifold &m, int ia, int ib)
{
	const btRigidBody *rb0 = btRigidBody::upcast(m.getBody0()), *rb1 = btRigidBody::upcast(m.getBody1());
	if (!m_frictionWarm || m.getNumContacts() == 0 || !rb0 || !rb1 || ia < 0 || ib < 0)
		return;
	const double a = rb0->getInvMass(), b = rb1->getInvMass();
	if (!(a > 0 && b > 0) || !(a > kFrictionWarmRatio * b || b > kFrictionWarmRatio * a))
		return;
	const int light = a > b ? ia : ib;
	if (m_lighter.size() <= (size_t)light)
		m_lighter.resize((size_t)light + 1, 0);
	m_lighter[(size_t)light] = 1;
}

void RowMap::addPoint(btManifoldPoint &cp, const btPersistentManifold &m, const btSolverBody &A, const btSolverBody &B,
                      int ia, int ib, int a, int b, bool locked, btConstraintArray &split)
{
	const btContactSolverInfo &info = *m_info;
	const btCollisionObject *o0 = m.getBody0(), *o1 = m.getBody1();
	const btRigidBody *rb0 = A.m_originalBody, *rb1 = B.m_originalBody;
	const btVector3 &n = cp.m_normalWorldOnB;
	const btVector3 r1 = cp.getPositionWorldOnA() - o0->getWorldTransform().getOrigin();
	const btVector3 r2 = cp.getPositionWorldOnB() - o1->getWorldTransform().getOrigin();
	const btVector3 &pb = cp.getPositionWorldOnB();
	const double point[3] = {pb[0], pb[1], pb[2]};
	const double invH = 1.0 / info.m_timeStep;
	const int mode = info.m_solverMode;
	const bool warm = (mode & SOLVER_USE_WARMSTARTING) != 0;
	const double relaxation = info.m_sor;
	const auto screened = [&](const lk_row_def &d, double s, double bulletDiag) {
		double energy = 0.0;
		if (a != LK_STATIC)
			addSideEnergy(A, d.J[0], energy);
		if (b != LK_STATIC)
			addSideEnergy(B, d.J[1], energy);
		return !(energy + s > 1e-9 * std::fabs(bulletDiag));
	};
	/* rows that move nothing (both sides the world, or no relaxation: Bullet's jacDiagABInv 0) */
	const bool moves = a != b && relaxation != 0.0;

	/* the normal row (setupContactConstraint) */
	btScalar cfm = info.m_globalCfm, erp = info.m_erp2;
	if (cp.m_contactPointFlags & (BT_CONTACT_FLAG_HAS_CONTACT_CFM | BT_CONTACT_FLAG_HAS_CONTACT_ERP)) {
		if (cp.m_contactPointFlags & BT_CONTACT_FLAG_HAS_CONTACT_CFM)
			cfm = cp.m_contactCFM;
		if (cp.m_contactPointFlags & BT_CONTACT_FLAG_HAS_CONTACT_ERP)
			erp = cp.m_contactERP;
	} else if (cp.m_contactPointFlags & BT_CONTACT_FLAG_CONTACT_STIFFNESS_DAMPING) {
		const btScalar denom = std::max<btScalar>(info.m_timeStep * cp.m_combinedContactStiffness1 +
		                                                  cp.m_combinedContactDamping1,
		                                          SIMD_EPSILON);
		cfm = btScalar(1) / denom;
		erp = info.m_timeStep * cp.m_combinedContactStiffness1 / denom;
	}
	cfm *= invH;
	const btVector3 t0 = r1.cross(n), t1 = r2.cross(n);
	/* restitution from the bodies' velocities before the external impulse (none without a coefficient) */
	double restitution = 0.0;
	if (cp.m_combinedRestitution != 0) {
		const btVector3 zero(0, 0, 0);
		const btVector3 w1 = rb0 ? rb0->getVelocityInLocalPoint(r1) : zero;
		const btVector3 w2 = rb1 ? rb1->getVelocityInLocalPoint(r2) : zero;
		const btScalar rel = n.dot(w1 - w2);
		if (!(std::fabs(rel) < info.m_restitutionVelocityThreshold))
			restitution = std::max(0.0, (double)(cp.m_combinedRestitution * -rel));
	}
	const btScalar depth = cp.getDistance() + info.m_linearSlop;
	double c = restitution, positional = 0.0;
	bool deep = false;
	if (depth > 0) {
		c -= depth * invH;
	} else {
		positional = -depth * erp * invH;
		if (!info.m_splitImpulse || depth > info.m_splitImpulsePenetrationThreshold)
			c += positional;
		else
			deep = true; /* the split impulse's position pass takes it */
	}
	const double warmImpulse = warm ? cp.m_appliedImpulse * info.m_warmstartingFactor : 0.0;
	/* the friction impulse the point's rows applied last step, as a vector in the contact plane (writeKept
	 * left it along the normal's plane axes, the directions a point Bullet's collision replaces comes with):
	 * the directions are chosen again below, and each new row starts from the vector's component along its
	 * own, damped as the normal's warm start is. Not on a body a joint holds: friction carried over held a
	 * ragdoll's limb where its joint pulled against it (Bullet's piled ragdolls at 10 iterations ended with
	 * ten times the joint error they had at 5 and at 20, docs/bullet.md), as in ODE (ode_warm.c). Nor on a body
	 * that rests against a far heavier one (markUnequal) */
	const bool two = (mode & SOLVER_USE_2_FRICTION_DIRECTIONS) != 0;
	btVector3 tangent(0, 0, 0);
	const auto jointed = [&](int i) { return (size_t)i < m_jointed.size() && m_jointed[(size_t)i]; };
	const auto lighter = [&](int i) { return (size_t)i < m_lighter.size() && m_lighter[(size_t)i]; };
	if (m_frictionWarm && !jointed(ia) && !jointed(ib) && !lighter(ia) && !lighter(ib)) {
		tangent = pointFriction(cp);
		tangent -= n * n.dot(tangent);
		if (!(std::isfinite(tangent[0]) && std::isfinite(tangent[1]) && std::isfinite(tangent[2])))
			tangent.setZero();
		/* with one friction direction no row writes the second impulse: it is 0 in this step's vector */
		if (!two)
			cp.m_appliedImpulseLateral2 = 0;
	}
	/* Bullet's estimate of the row's J M^-1 J^T, where a split row or the screen needs it */
	btVector3 angA, angB;
	double bulletDiag = 0.0;
	if (deep || locked) {
		const double d0 = bulletDenominator(rb0, r1, n, t0, angA);
		const double d1 = bulletDenominator(rb1, r2, -n, -t1, angB);
		bulletDiag = (d0 + d1 + cfm) / relaxation;
	}
	if (deep) {
		/* what Bullet's position pass (resolveSplitPenetrationImpulse) reads of the row */
		btSolverConstraint &sc = split.expandNonInitializing();
		const double jdi = 1.0 / bulletDiag;
		sc.m_solverBodyIdA = ia;
		sc.m_solverBodyIdB = ib;
		sc.m_originalContactPoint = &cp;
		sc.m_contactNormal1 = rb0 ? n : btVector3(0, 0, 0);
		sc.m_relpos1CrossNormal = rb0 ? t0 : btVector3(0, 0, 0);
		sc.m_contactNormal2 = rb1 ? -n : btVector3(0, 0, 0);
		sc.m_relpos2CrossNormal = rb1 ? -t1 : btVector3(0, 0, 0);
		sc.m_angularComponentA = angA;
		sc.m_angularComponentB = angB;
		sc.m_jacDiagABInv = jdi;
		sc.m_rhs = 0.0;
		sc.m_rhsPenetration = positional * jdi;
		sc.m_cfm = cfm * jdi;
		sc.m_lowerLimit = 0;
		sc.m_upperLimit = 1e10;
		sc.m_friction = cp.m_combinedFriction;
		sc.m_frictionIndex = -1;
		sc.m_appliedImpulse = 0.0;
		sc.m_appliedPushImpulse = 0.0;
	}
	bool normalKept = moves;
	const int normalRow = m_contactBase + m_block[BLOCK_NORMAL].n;
	if (normalKept) {
		lk_row_def &d = m_block[BLOCK_NORMAL].add(warm ? &cp.m_appliedImpulse : nullptr, warmImpulse);
		setSide(d, 0, rb0, n, t0);
		setSide(d, 1, rb1, -n, -t1);
		if (locked && screened(d, cfm, bulletDiag)) {
			m_block[BLOCK_NORMAL].n--;
			normalKept = false;
		} else {
			d.body[0] = a;
			d.body[1] = b;
			d.c = c;
			d.s = cfm;
			d.lo = 0.0;
			d.hi = INFINITY; /* Bullet's 1e10 stands for "unbounded" */
			d.mu = 0.0;
			d.findex = -1;
			d.kind = LK_ROW_NORMAL;
			d.point[0] = point[0], d.point[1] = point[1], d.point[2] = point[2];
		}
	}
	/* a row left out keeps its impulse, which Bullet's finish writes to the point: the normal's warm start (written
	 * with the solve's impulses, so that a fallback's own setup reads the point as it was) */
	if (!normalKept && warm)
		m_keep.push_back({&cp.m_appliedImpulse, warmImpulse});

	/* what Bullet's relative velocity of a friction row leaves out of J u*: the angular parts of its J (ang0,
	 * ang1) times the external torque impulse of each side */
	const auto torqueTerm = [&](const btVector3 &ang0, const btVector3 &ang1) {
		return (rb0 ? ang0.dot(A.m_externalTorqueImpulse) : 0.0) + (rb1 ? ang1.dot(B.m_externalTorqueImpulse) : 0.0);
	};
	/* the rest of a friction row on the normal: its target, CFM and coefficient */
	const auto frictionRow = [&](lk_row_def &d, double target, double s, double mu) {
		d.body[0] = a;
		d.body[1] = b;
		d.c = target;
		d.s = s;
		d.lo = -INFINITY;
		d.hi = INFINITY;
		d.mu = mu;
		d.findex = normalRow;
		d.kind = LK_ROW_FRICTION;
		d.point[0] = point[0], d.point[1] = point[1], d.point[2] = point[2];
	};
	/* a friction row along dir (setupFrictionConstraint), its impulse to *out */
	const auto friction = [&](const btVector3 &dir, btScalar desired, btScalar cfmSlip, btScalar *out) {
		if (!normalKept) {
			if (warm)
				m_keep.push_back({out, 0.0});
			return;
		}
		const btVector3 back = -dir;
		const btVector3 f0 = r1.cross(dir), f1 = r2.cross(back);
		double s = 0.0, diag = 0.0;
		if (cfmSlip != 0 || locked) {
			btVector3 unused;
			diag = (bulletDenominator(rb0, r1, dir, f0, unused) + bulletDenominator(rb1, r2, back, f1, unused)) /
			       relaxation;
			s = cfmSlip * diag;
		}
		const double start = m_frictionWarm ? tangent.dot(dir) * info.m_warmstartingFactor : 0.0;
		lk_row_def &d = m_block[BLOCK_FRICTION].add(warm ? out : nullptr, start);
		setSide(d, 0, rb0, dir, f0);
		setSide(d, 1, rb1, back, f1);
		if (locked && screened(d, s, diag)) {
			m_block[BLOCK_FRICTION].n--;
			if (warm)
				m_keep.push_back({out, 0.0});
			return;
		}
		double target = desired + torqueTerm(f0, f1);
		if (cp.m_contactPointFlags & BT_CONTACT_FLAG_FRICTION_ANCHOR)
			target += -(cp.getPositionWorldOnA() - cp.getPositionWorldOnB()).dot(dir) * info.m_frictionERP /
			          info.m_timeStep;
		frictionRow(d, target, s, cp.m_combinedFriction);
	};
	/* a rolling or spinning friction row about axis (setupTorsionalFrictionConstraint) */
	const auto rolling = [&](const btVector3 &axis, btScalar mu) {
		if (!normalKept)
			return;
		const btVector3 back = -axis;
		/* Bullet's 1 / jacDiagABInv, without the angular factors: a row on bodies that cannot turn is left out */
		double diag = 0.0;
		if (rb0)
			diag += (rb0->getInvInertiaTensorWorld() * back).dot(back);
		if (rb1)
			diag += (rb1->getInvInertiaTensorWorld() * axis).dot(axis);
		if (!(std::isfinite(diag) && diag != 0.0))
			return;
		const btVector3 zero(0, 0, 0);
		lk_row_def &d = m_block[BLOCK_ROLLING].add(nullptr, 0.0);
		setSide(d, 0, rb0, zero, back);
		setSide(d, 1, rb1, zero, axis);
		if (locked && screened(d, 0.0, diag)) {
			m_block[BLOCK_ROLLING].n--;
			return;
		}
		frictionRow(d, torqueTerm(back, axis), 0.0, mu);
	};

	/* rolling and spinning friction (convertContact's order: about the normal, then the plane's two axes) */
	if (cp.m_combinedRollingFriction > 0) {
		rolling(n, cp.m_combinedSpinningFriction);
		btVector3 axis0, axis1;
		btPlaneSpace1(n, axis0, axis1);
		axis0.normalize();
		axis1.normalize();
		anisotropic(o0, axis0, btCollisionObject::CF_ANISOTROPIC_ROLLING_FRICTION);
		anisotropic(o1, axis0, btCollisionObject::CF_ANISOTROPIC_ROLLING_FRICTION);
		anisotropic(o0, axis1, btCollisionObject::CF_ANISOTROPIC_ROLLING_FRICTION);
		anisotropic(o1, axis1, btCollisionObject::CF_ANISOTROPIC_ROLLING_FRICTION);
		if (axis0.length() > 0.001)
			rolling(axis0, cp.m_combinedRollingFriction);
		if (axis1.length() > 0.001)
			rolling(axis1, cp.m_combinedRollingFriction);
	}

	/* the friction directions, as Bullet chooses them: along the sliding velocity, else the normal's plane
	 * axes, or the point's own (a callback's, cached) with their target velocities and CFM */
	if (!(mode & SOLVER_ENABLE_FRICTION_DIRECTION_CACHING) ||
	    !(cp.m_contactPointFlags & BT_CONTACT_FLAG_LATERAL_FRICTION_INITIALIZED)) {
		btVector3 v1, v2;
		A.getVelocityInLocalPointNoDelta(r1, v1);
		B.getVelocityInLocalPointNoDelta(r2, v2);
		const btVector3 vel = v1 - v2;
		const btScalar relVel = n.dot(vel);
		cp.m_lateralFrictionDir1 = vel - n * relVel;
		const btScalar lateral = cp.m_lateralFrictionDir1.length2();
		if (!(mode & SOLVER_DISABLE_VELOCITY_DEPENDENT_FRICTION_DIRECTION) && lateral > SIMD_EPSILON) {
			cp.m_lateralFrictionDir1 *= 1.f / btSqrt(lateral);
			anisotropic(o0, cp.m_lateralFrictionDir1, btCollisionObject::CF_ANISOTROPIC_FRICTION);
			anisotropic(o1, cp.m_lateralFrictionDir1, btCollisionObject::CF_ANISOTROPIC_FRICTION);
			/* a sphere's point that now slips the way its last friction pushed it: that friction opposed a slip
			 * that has turned (a circle of a pool rocking to and fro), and started along it, it pushes the
			 * sphere on. Starting from zero there, Bullet's pool2 at 10 iterations keeps 12.6 J over its last
			 * second where it kept 15.5 J, against 13.5 under Bullet's own solver (docs/bullet.md) */
			const double along = tangent.dot(cp.m_lateralFrictionDir1);
			if (along > 0 && roundPoint(o0, o1))
				tangent -= cp.m_lateralFrictionDir1 * along;
			friction(cp.m_lateralFrictionDir1, 0, 0, &cp.m_appliedImpulseLateral1);
			if (two) {
				cp.m_lateralFrictionDir2 = cp.m_lateralFrictionDir1.cross(n);
				cp.m_lateralFrictionDir2.normalize();
				anisotropic(o0, cp.m_lateralFrictionDir2, btCollisionObject::CF_ANISOTROPIC_FRICTION);
				anisotropic(o1, cp.m_lateralFrictionDir2, btCollisionObject::CF_ANISOTROPIC_FRICTION);
				friction(cp.m_lateralFrictionDir2, 0, 0, &cp.m_appliedImpulseLateral2);
			}
		} else {
			btPlaneSpace1(n, cp.m_lateralFrictionDir1, cp.m_lateralFrictionDir2);
			anisotropic(o0, cp.m_lateralFrictionDir1, btCollisionObject::CF_ANISOTROPIC_FRICTION);
			anisotropic(o1, cp.m_lateralFrictionDir1, btCollisionObject::CF_ANISOTROPIC_FRICTION);
			friction(cp.m_lateralFrictionDir1, 0, 0, &cp.m_appliedImpulseLateral1);
			if (two) {
				anisotropic(o0, cp.m_lateralFrictionDir2, btCollisionObject::CF_ANISOTROPIC_FRICTION);
				anisotropic(o1, cp.m_lateralFrictionDir2, btCollisionObject::CF_ANISOTROPIC_FRICTION);
				friction(cp.m_lateralFrictionDir2, 0, 0, &cp.m_appliedImpulseLateral2);
			}
			if (two && (mode & SOLVER_DISABLE_VELOCITY_DEPENDENT_FRICTION_DIRECTION))
				cp.m_contactPointFlags |= BT_CONTACT_FLAG_LATERAL_FRICTION_INITIALIZED;
		}
	} else {
		friction(cp.m_lateralFrictionDir1, cp.m_contactMotion1, cp.m_frictionCFM, &cp.m_appliedImpulseLateral1);
		if (two)
			friction(cp.m_lateralFrictionDir2, cp.m_contactMotion2, cp.m_frictionCFM, &cp.m_appliedImpulseLateral2);
	}
	/* cached directions stay with the point from step to step, and its impulses along them */
	if (m_frictionWarm && !(mode & SOLVER_ENABLE_FRICTION_DIRECTION_CACHING))
		m_frictionPoints.push_back(&cp);
}

void RowMap::frictionToPlaneAxes()
{
	const size_t n = m_frictionPoints.size();
	for (size_t k = 0; k < n; ++k) {
		if (k + 8 < n)
			prefetchBytes(m_frictionPoints[k + 8], sizeof(btManifoldPoint));
		btManifoldPoint *cp = m_frictionPoints[k];
		const btVector3 t = pointFriction(*cp);
		btPlaneSpace1(cp->m_normalWorldOnB, cp->m_lateralFrictionDir1, cp->m_lateralFrictionDir2);
		cp->m_appliedImpulseLateral1 = t.dot(cp->m_lateralFrictionDir1);
		cp->m_appliedImpulseLateral2 = t.dot(cp->m_lateralFrictionDir2);
	}
}

void RowMap::takeContactRows(bool intoDefs)
{
	int row = m_n;
	for (ContactBlock &bl : m_block) {
		for (int i = 0; i < bl.n; ++i) {
			bl.defs[(size_t)i].id = (uint64_t)(row + i);
			m_kinds[bl.defs[(size_t)i].kind]++;
		}
		std::copy(bl.out.get(), bl.out.get() + bl.n, m_out.begin() + row);
		std::copy(bl.warm.get(), bl.warm.get() + bl.n, m_lambda0.begin() + row);
		if (intoDefs)
			std::copy(bl.defs.get(), bl.defs.get() + bl.n, m_defs.begin() + row);
		row += bl.n;
	}
	m_n = row;
}

} // namespace detail
} // namespace lk

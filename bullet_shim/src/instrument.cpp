/* Bullet's solver pools -> lk_problem; step statistics and recording. */
#include "instrument.hpp"

#include <BulletCollision/NarrowPhaseCollision/btManifoldPoint.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <cmath>
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
		/* Bullet applies the linear factor twice: m_invMass already holds it and applyImpulse scales again */
		d->inv_mass[r] = sb.m_invMass[r] * sb.m_linearFactor[r];
	}
	/* F I^-1 F keeps the inverse inertia symmetric; it equals Bullet's F^2 I^-1 on every row whose torque axis
	 * lies in the unlocked axes (all rows of a planar scene) and whenever F is all ones */
	for (int r = 0; r < 3; ++r)
		for (int c = 0; c < 3; ++c)
			d->inv_inertia[3 * r + c] = F[r] * (0.5 * (I[r][c] + I[c][r])) * F[c];
	Motion &mo = m->m_motion[(size_t)k]; /* body k's own: fill may run for several k at once */
	std::memcpy(mo.u, d->u, sizeof mo.u);
	std::memcpy(mo.inv_mass, d->inv_mass, sizeof mo.inv_mass);
	return LK_OK;
}

lk_status RowMap::addRow(const btSolverConstraint &c, lk_row_kind kind, int findex, const double *point,
                         bool normalRow)
{
	const int nsb = (int)m_lkOfSolver.size();
	if (c.m_solverBodyIdA < 0 || c.m_solverBodyIdA >= nsb || c.m_solverBodyIdB < 0 || c.m_solverBodyIdB >= nsb)
		return LK_ERR_OUT_OF_RANGE;
	const int a = m_lkOfSolver[c.m_solverBodyIdA], b = m_lkOfSolver[c.m_solverBodyIdB];
	/* rows that move nothing keep Bullet's impulse: both sides static (or the same body) */
	if ((a == LK_STATIC && b == LK_STATIC) || a == b)
		return LK_OK;
	const double jinv = c.m_jacDiagABInv;
	if (!std::isfinite(jinv) || jinv == 0.0)
		return LK_OK; /* Bullet's own update leaves such a row unchanged too */

	/* every field of d is written (no blank copy first) */
	lk_row_def d;
	d.body[0] = a;
	d.body[1] = b;
	/* the world's side: J and u* zero, so its terms add +0 (ju starts at +0 and never becomes -0) */
	static const Motion still = {{0, 0, 0, 0, 0, 0}, {0, 0, 0}};
	const bool da = a != LK_STATIC, db = b != LK_STATIC;
	const Motion &sa = da ? m_motion[(size_t)a] : still, &sb = db ? m_motion[(size_t)b] : still;
	for (int k = 0; k < 3; ++k) {
		d.J[0][k] = da ? c.m_contactNormal1[k] : 0.0;
		d.J[0][3 + k] = da ? c.m_relpos1CrossNormal[k] : 0.0;
		d.J[1][k] = db ? c.m_contactNormal2[k] : 0.0;
		d.J[1][3 + k] = db ? c.m_relpos2CrossNormal[k] : 0.0;
	}
	double ju = 0.0, jmj = 0.0;
	for (int k = 0; k < 6; ++k) {
		ju += d.J[0][k] * sa.u[k];
		ju += d.J[1][k] * sb.u[k];
	}
	/* J M^-1 J^T from what Bullet's setup already holds: the linear part from the inverse masses, the angular
	 * part as (r x n) . I^-1 (r x n), Bullet's m_angularComponent being I^-1 (r x n) (with the angular factor)
	 * on each side; the core forms its own A_ii, this only screens out rows that move nothing */
	for (int k = 0; k < 3; ++k)
		jmj += sa.inv_mass[k] * d.J[0][k] * d.J[0][k];
	if (da)
		jmj += c.m_relpos1CrossNormal.dot(c.m_angularComponentA);
	for (int k = 0; k < 3; ++k)
		jmj += sb.inv_mass[k] * d.J[1][k] * d.J[1][k];
	if (db)
		jmj += c.m_relpos2CrossNormal.dot(c.m_angularComponentB);
	/* the mapping of the class comment: A_ii = 1 / jacDiagABInv, s = cfm_b A_ii, q = -rhs A_ii */
	d.s = c.m_cfm / jinv;
	d.c = ju + c.m_rhs / jinv;
	/* a direction every side has locked (a linear or angular factor of 0) has no diagonal: Bullet's estimate
	 * ignores the factors, so compare against it and leave the row out */
	if (!(jmj + d.s > 1e-9 * std::fabs(1.0 / jinv)))
		return LK_OK;
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
	std::memcpy(d.point, point, sizeof d.point);
	d.id = (uint64_t)m_rows.size();
	lk_status st = lk_problem_add_row(m_p, &d, nullptr);
	if (st != LK_OK)
		return st;
	m_rows.push_back(&c);
	m_lambda0.push_back(c.m_appliedImpulse);
	m_kinds[d.kind]++;
	return LK_OK;
}

lk_status RowMap::build(const Pools &pools, bool points, int threads)
{
	lk_problem_clear(m_p);
	m_rows.clear();
	m_lambda0.clear();
	m_solverOfLk.clear();
	std::memset(m_kinds, 0, sizeof m_kinds);
	const int nsb = pools.bodies.size();
	const int nnc = pools.nonContact.size(), nc = pools.contact.size(), nf = pools.friction.size(),
	          nr = pools.rolling.size();
	lk_status st = lk_problem_reserve(m_p, nsb, nnc + nc + nf + nr);
	if (st != LK_OK)
		return st;
	/* the solver bodies of rigid bodies, in Bullet's order (the others, Bullet's fixed body, are the world),
	 * made on the solver's threads for many bodies */
	m_lkOfSolver.assign((size_t)nsb, LK_STATIC);
	for (int i = 0; i < nsb; ++i)
		if (pools.bodies[i].m_originalBody) {
			m_lkOfSolver[(size_t)i] = (int)m_solverOfLk.size();
			m_solverOfLk.push_back(i);
		}
	m_motion.resize(m_solverOfLk.size());
	m_pools = &pools;
	st = lk_problem_add_bodies(m_p, (int)m_solverOfLk.size(), fillBody, this, threads, nullptr);
	m_pools = nullptr;

	for (int j = 0; j < nnc && st == LK_OK; ++j) {
		const btSolverConstraint &c = pools.nonContact[j];
		double point[3] = {0, 0, 0};
		if (c.m_solverBodyIdA >= 0 && c.m_solverBodyIdA < nsb) {
			const btVector3 &o = pools.bodies[c.m_solverBodyIdA].m_worldTransform.getOrigin();
			point[0] = o[0], point[1] = o[1], point[2] = o[2];
		}
		st = addRow(c, LK_ROW_JOINT, -1, point, false);
	}

	m_contactRow.assign((size_t)nc, -1);
	std::vector<double> &pts = m_points;
	pts.assign((size_t)nc * 3, 0.0);
	for (int j = 0; j < nc && st == LK_OK; ++j) {
		const btSolverConstraint &c = pools.contact[j];
		const btManifoldPoint *mp = static_cast<const btManifoldPoint *>(c.m_originalContactPoint);
		if (points && mp) {
			const btVector3 &o = mp->getPositionWorldOnB();
			pts[3 * j] = o[0], pts[3 * j + 1] = o[1], pts[3 * j + 2] = o[2];
		}
		const int before = (int)m_rows.size();
		st = addRow(c, LK_ROW_NORMAL, -1, &pts[3 * j], true);
		if ((int)m_rows.size() > before)
			m_contactRow[j] = before;
	}
	/* friction and rolling friction take their bounds from their contact's normal row (m_frictionIndex
	 * indexes the contact pool), as ODE's findex */
	const btConstraintArray *fric[2] = {&pools.friction, &pools.rolling};
	for (int pool = 0; pool < 2 && st == LK_OK; ++pool) {
		const int n = fric[pool]->size();
		for (int j = 0; j < n && st == LK_OK; ++j) {
			const btSolverConstraint &c = (*fric[pool])[j];
			const int f = c.m_frictionIndex;
			if (f < 0 || f >= nc || m_contactRow[f] < 0)
				continue;
			st = addRow(c, LK_ROW_FRICTION, m_contactRow[f], &pts[3 * f], false);
		}
	}
	if (st == LK_OK)
		st = lk_problem_set_lambda(m_p, m_lambda0.data(), (int)m_lambda0.size());
	return st;
}

void RowMap::writeBack(const Pools &pools)
{
	const double *lambda = lk_problem_lambda(m_p);
	for (size_t k = 0; k < m_rows.size(); ++k)
		m_rows[k]->m_appliedImpulse = lambda[k];
	for (size_t k = 0; k < m_solverOfLk.size(); ++k) {
		double du[6];
		if (lk_problem_delta_velocity(m_p, (int)k, du) != LK_OK)
			continue;
		btSolverBody &sb = pools.bodies[m_solverOfLk[k]];
		sb.m_deltaLinearVelocity.setValue(du[0], du[1], du[2]);
		sb.m_deltaAngularVelocity.setValue(du[3], du[4], du[5]);
	}
}

void RowMap::readImpulses(std::vector<double> &out) const
{
	out.resize(m_rows.size());
	for (size_t k = 0; k < m_rows.size(); ++k)
		out[k] = m_rows[k]->m_appliedImpulse;
}

/* ------------------------------------------------------------------------------------------ recording */

void Recording::clear()
{
	bodies.clear();
	rows.clear();
	lambda0.clear();
	solution.clear();
}

void Recording::append(lk_problem *p, const std::vector<double> &warm, const std::vector<double> &solved)
{
	const int body0 = (int)bodies.size(), row0 = (int)rows.size();
	const int nb = lk_problem_body_count(p), nr = lk_problem_row_count(p);
	for (int i = 0; i < nb; ++i)
		bodies.push_back(*lk_problem_body(p, i));
	for (int i = 0; i < nr; ++i) {
		lk_row_def d;
		if (lk_problem_get_row(p, i, &d) != LK_OK)
			continue;
		for (int k = 0; k < 2; ++k)
			if (d.body[k] != LK_STATIC)
				d.body[k] += body0;
		if (d.findex >= 0)
			d.findex += row0;
		rows.push_back(d);
	}
	lambda0.insert(lambda0.end(), warm.begin(), warm.end());
	solution.insert(solution.end(), solved.begin(), solved.end());
}

lk_status Recording::build(lk_problem **out) const
{
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	if (!p)
		return LK_ERR_NO_MEMORY;
	lk_status st = lk_problem_reserve(p, (int)bodies.size(), (int)rows.size());
	for (size_t i = 0; i < bodies.size() && st == LK_OK; ++i)
		st = lk_problem_add_body(p, &bodies[i], nullptr);
	for (size_t i = 0; i < rows.size() && st == LK_OK; ++i)
		st = lk_problem_add_row(p, &rows[i], nullptr);
	if (st == LK_OK)
		st = lk_problem_set_lambda(p, lambda0.data(), (int)lambda0.size());
	if (st != LK_OK) {
		lk_problem_destroy(p);
		return st;
	}
	*out = p;
	return LK_OK;
}

/* ----------------------------------------------------------------------------------------- statistics */

void clearStats(lk_engine_step_stats &s)
{
	std::memset(&s, 0, sizeof s);
	s.stop_reason = LK_STOP_NONE;
}

bool isGuardStop(lk_stop_reason r)
{
	return r == LK_STOP_NONFINITE || r == LK_STOP_DIVERGED || r == LK_STOP_BAD_DIAGONAL;
}

/* how bad a stop reason is, for reporting the worst island */
static int severity(lk_stop_reason r)
{
	if (isGuardStop(r))
		return 3;
	if (r == LK_STOP_ITERATIONS)
		return 2;
	if (r == LK_STOP_NONE)
		return 0;
	return 1;
}

void mergeStats(lk_engine_step_stats &into, const lk_engine_step_stats &g)
{
	into.bodies += g.bodies;
	into.rows += g.rows;
	for (int k = 0; k < LK_ROW_KIND_COUNT; ++k)
		into.rows_by_kind[k] += g.rows_by_kind[k];
	if (g.iterations > into.iterations)
		into.iterations = g.iterations;
	/* islands are solved one after the other: the work of the step is their rows' work together */
	const int rows = into.rows; /* already including g's */
	into.work = rows > 0 ? (into.work * (rows - g.rows) + g.work * g.rows) / rows : 0.0;
	into.res_before = std::sqrt(into.res_before * into.res_before + g.res_before * g.res_before);
	into.res_after = std::sqrt(into.res_after * into.res_after + g.res_after * g.res_after);
	into.solve_seconds += g.solve_seconds;
	into.convert_seconds += g.convert_seconds;
	into.step_seconds += g.step_seconds;
	into.phase_seconds += g.phase_seconds;
	if (severity(g.stop_reason) > severity(into.stop_reason))
		into.stop_reason = g.stop_reason;
	into.fallback |= g.fallback;
	into.fallback_total = g.fallback_total > into.fallback_total ? g.fallback_total : into.fallback_total;
}

lk_status probeConfig(const lk_solver_config &cfg, std::string &msg)
{
	char buf[256] = "";
	if (lk_config_validate(&cfg, buf, sizeof buf) != LK_OK) {
		msg = buf;
		return LK_ERR_INVALID_ARGUMENT;
	}
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	if (!p) {
		msg = "out of memory";
		return LK_ERR_NO_MEMORY;
	}
	/* a unit body sliding into the ground: a normal row and its friction row */
	lk_body_def b = lk_default_body_def();
	b.u[0] = 1.0;
	b.u[2] = -1.0;
	for (int k = 0; k < 3; ++k) {
		b.inv_mass[k] = 1.0;
		b.inv_inertia[4 * k] = 1.0;
	}
	lk_row_def n = lk_default_row_def();
	n.body[0] = 0;
	n.J[0][2] = 1.0;
	n.lo = 0.0;
	n.kind = LK_ROW_NORMAL;
	lk_row_def f = lk_default_row_def();
	f.body[0] = 0;
	f.J[0][0] = 1.0;
	f.findex = 0;
	f.mu = 0.5;
	f.kind = LK_ROW_FRICTION;
	lk_stats stats;
	lk_status st = lk_problem_add_body(p, &b, nullptr);
	if (st == LK_OK)
		st = lk_problem_add_row(p, &n, nullptr);
	if (st == LK_OK)
		st = lk_problem_add_row(p, &f, nullptr);
	if (st == LK_OK)
		st = lk_solve(p, &cfg, &stats, nullptr);
	if (st != LK_OK)
		msg = lk_problem_error(p);
	lk_problem_destroy(p);
	return st;
}

Instrument::Instrument()
{
	clearStats(m_step);
	clearStats(m_last);
	clearStats(m_accumulated);
}

void Instrument::beginStep()
{
	clearStats(m_step);
	m_phaseStart = lk_stats_now();
	if (recording)
		current.clear();
}

void Instrument::endStep()
{
	m_step.phase_seconds = lk_stats_now() - m_phaseStart;
	m_step.fallback_total = fallbacks;
	m_last = m_step;
	mergeStats(m_accumulated, m_step);
	m_accumulated.fallback_total = fallbacks;
	if (recording)
		std::swap(last, current);
}

void Instrument::addGroup(const lk_engine_step_stats &g)
{
	mergeStats(m_step, g);
}

void Instrument::noteFallback(const std::string &reason)
{
	++fallbacks;
	fallbackReason = reason;
}

void Instrument::resetAccumulated()
{
	clearStats(m_accumulated);
	m_accumulated.fallback_total = fallbacks;
}

} // namespace detail
} // namespace lk

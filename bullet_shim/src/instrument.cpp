/* Step statistics and recording of one solver over Bullet's islands (instrument.hpp). */
#include "instrument.hpp"

#include <cmath>
#include <cstddef>
#include <cstring>

namespace lk {
namespace detail {

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

void Instrument::measureResiduals(const double *answer, lk_engine_step_stats &g)
{
	lk_problem *p = map.problem();
	lk_metrics m;
	g.res_initial = lk_problem_metrics(p, map.warmStart().data(), &m) == LK_OK ? m.res : NAN;
	g.res_final = lk_problem_metrics(p, answer, &m) == LK_OK ? m.res : NAN;
}

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
	into.rows_left_out += g.rows_left_out;
	into.bodies_frozen += g.bodies_frozen;
	into.notes_total = g.notes_total > into.notes_total ? g.notes_total : into.notes_total;
	into.rows += g.rows;
	for (int k = 0; k < LK_ROW_KIND_COUNT; ++k)
		into.rows_by_kind[k] += g.rows_by_kind[k];
	if (g.iterations > into.iterations)
		into.iterations = g.iterations;
	/* islands are solved one after the other: the work of the step is their rows' work together */
	const int rows = into.rows; /* already including g's */
	into.work = rows > 0 ? (into.work * (rows - g.rows) + g.work * g.rows) / rows : 0.0;
	into.res_initial = std::sqrt(into.res_initial * into.res_initial + g.res_initial * g.res_initial);
	into.res_final = std::sqrt(into.res_final * into.res_final + g.res_final * g.res_final);
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
	m_step.notes_total = notesTotal;
	m_last = m_step;
	mergeStats(m_accumulated, m_step);
	m_accumulated.fallback_total = fallbacks;
	m_accumulated.notes_total = notesTotal;
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
	m_accumulated.notes_total = notesTotal;
}

} // namespace detail
} // namespace lk

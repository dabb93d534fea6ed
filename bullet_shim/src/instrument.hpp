/* Internal: per-step statistics and recording of one solver over Bullet's islands, shared by the lcpkit
 * adapter (lk::BulletSolver) and the instrumented Bullet solvers of the C API; the rows themselves: row_map.hpp. */
#ifndef LCPKIT_BULLET_INSTRUMENT_HPP
#define LCPKIT_BULLET_INSTRUMENT_HPP

#include "row_map.hpp"

#include <string>
#include <vector>

namespace lk {
namespace detail {

/* A captured step: every island's problem appended into one. */
struct Recording {
	std::vector<lk_body_def> bodies;
	std::vector<lk_row_def> rows;
	std::vector<double> lambda0;
	std::vector<double> solution;
	void clear();
	/* Appends the map's problem with the given warm start and solution. */
	void append(lk_problem *p, const std::vector<double> &warm, const std::vector<double> &solved);
	lk_status build(lk_problem **out) const;
};

/* Statistics and recording of one solver, over Bullet's islands and internal steps. */
class Instrument {
public:
	Instrument();

	/* btConstraintSolver::prepareSolve / allSolved: one internal simulation step. */
	void beginStep();
	void endStep();
	/* One island's statistics. */
	void addGroup(const lk_engine_step_stats &g);
	void noteFallback(const std::string &reason);
	/* RES on the island's rows (map) of the warm start it began from and of answer (NULL: the problem's own
	 * lambda) into g; NaN where one cannot be measured. The statistics of a solve that measured nothing itself,
	 * and of Bullet's own impulses read back onto the rows. */
	void measureResiduals(const double *answer, lk_engine_step_stats &g);

	/* Sum over the internal steps since resetAccumulated (the C API's step and advance). */
	void resetAccumulated();
	/* The notes said so far (the statistics' notes_total). */
	int64_t notesTotal = 0;
	const lk_engine_step_stats &accumulated() const { return m_accumulated; }
	const lk_engine_step_stats &lastStep() const { return m_last; }

	/* active: statistics wanted (Bullet's own solvers skip all extraction when not); residuals: Bullet's
	 * own solvers extract rows to report RES. */
	bool active = true;
	bool residuals = true;
	bool recording = false;
	int64_t fallbacks = 0;
	std::string fallbackReason;
	std::string error;
	RowMap map;
	Recording current, last;
	std::vector<double> scratch;

private:
	lk_engine_step_stats m_step, m_last, m_accumulated;
	double m_phaseStart = 0.0; /* when the current step's constraint phase began (beginStep) */
};

/* Adds island statistics: counts and times summed, iterations the largest, RES in quadrature, the worst
 * stop reason. */
void mergeStats(lk_engine_step_stats &into, const lk_engine_step_stats &g);
void clearStats(lk_engine_step_stats &s);
bool isGuardStop(lk_stop_reason r);
/* Validates a configuration and checks, on a two-row contact, that this build can solve with it (a method or
 * order not yet available answers LK_ERR_UNSUPPORTED). msg receives the reason. */
lk_status probeConfig(const lk_solver_config &cfg, std::string &msg);

} // namespace detail
} // namespace lk

#endif

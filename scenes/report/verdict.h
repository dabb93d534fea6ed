/* The verdict of `lcpkit compare --verdict`: is a solver's outcome of a scene better than, level with or worse
 * than the engine's own solver's, given how much of either outcome is chance? Each outcome is measured over
 * several runs of the scene that differ by an unmeasurably small change (scene seeds, scene.h); the medians are
 * compared against a band: the larger spread (maximum - minimum) of the two solvers' runs, and at least the
 * outcome's resolution. */
#ifndef LCPKIT_VERDICT_H
#define LCPKIT_VERDICT_H

#include "scene.h"

typedef enum lk_verdict_sign { LK_VERDICT_WORSE = -1, LK_VERDICT_LEVEL = 0, LK_VERDICT_BETTER = 1 } lk_verdict_sign;

typedef struct lk_verdict {
	lk_verdict_sign sign;
	int compared;     /* 0: one side had no value (NaN in every run): nothing to compare, sign LEVEL */
	double own, cand; /* the medians over the runs */
	double band;      /* what the difference had to exceed */
} lk_verdict;

/* The verdict of a candidate's outcome cand[0..n_cand) against the engine's own own[0..n_own): NaN values are
 * left out; `resolution` (>= 0) is the smallest difference that counts; higher_better says which way is
 * better. Worse when the candidate's median is beyond the band on the bad side: median(cand) - median(own) >
 * band for a lower-is-better outcome, with band = max(resolution, spread(own), spread(cand)). */
lk_verdict lk_verdict_of(const double *own, int n_own, const double *cand, int n_cand, double resolution,
                         int higher_better);

/* The outcomes the verdict compares, the resolution of each on a scene, and their names. */
typedef enum lk_outcome {
	LK_OUTCOME_MAX_PENETRATION = 0, /* deepest contact over the run, m */
	LK_OUTCOME_PENETRATION_REST,    /* median deepest contact over the last second, m */
	LK_OUTCOME_JOINT_ERROR,         /* largest joint error over the last second, m */
	LK_OUTCOME_ACCEL_ERROR,         /* incline: relative error of the sliding boxes' acceleration */
	LK_OUTCOME_CREEP,               /* incline: farthest a box that should rest moved, m */
	LK_OUTCOME_ENERGY_END,          /* kinetic energy at the end, J */
	LK_OUTCOME_STANDING,            /* stacks: seconds the stack stood (higher is better) */
	LK_OUTCOME_DRIFT_MAX,           /* stacks that stood in every run: the top's largest drift, m */
	LK_OUTCOME_COUNT
} lk_outcome;

/* "max_penetration", ... (the keys of compare's CSV and JSON); "max pen.", ... (its table's heads). */
const char *lk_outcome_key(lk_outcome o);
const char *lk_outcome_head(lk_outcome o);
int lk_outcome_higher_better(lk_outcome o);
/* The smallest difference of outcome o that counts on scene sc stepped at h: lengths 1e-4 of the scene's size
 * (the median largest dimension of its moving bodies), the joint error 1e-5 of it, the top's drift 1e-3 of it,
 * the energy of every moving body lowered by 1e-4 of the size, one step of standing, and 0.005 of the
 * incline's relative error. */
double lk_outcome_resolution(lk_outcome o, const lk_scene *sc, double h);

#endif

/* lcpkit compare --verdict: each solver against the engine's own at the same budget, over the seeds. */
#include "compare.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------- verdict */

/* An outcome of one run as the verdict reads it (NaN: the scene has no such thing); the top's drift only
 * while it stood. */
static double outcome_value(const run *r, lk_outcome o)
{
	switch (o) {
	case LK_OUTCOME_MAX_PENETRATION:
		/* where bodies should slide, the deepest contact is their landing at the slope's foot, as deep as they
		 * arrive fast (on the slope a millimetre): a slower slide, which the acceleration error judges, lands
		 * shallower and is no better */
		return isnan(r->accel_err) ? r->max_penetration : NAN;
	case LK_OUTCOME_PENETRATION_REST:
		return r->pen_rest;
	case LK_OUTCOME_JOINT_ERROR:
		return r->joint_err_max;
	case LK_OUTCOME_ACCEL_ERROR:
		return r->accel_err;
	case LK_OUTCOME_CREEP:
		return r->creep;
	case LK_OUTCOME_ENERGY_END:
		/* where bodies should slide (the incline past its friction angle, boxes launched across the floor that
		 * friction stops only after the last second began) their energy at the end is their speed: less of it is
		 * no better there (the incline's acceleration error judges its sliders) */
		return isnan(r->accel_err) && !r->sliding_end ? r->energy_end : NAN;
	case LK_OUTCOME_STANDING:
		return r->standing;
	case LK_OUTCOME_DRIFT_MAX:
		return r->fell ? NAN : r->top_drift_max;
	default:
		return NAN;
	}
}

/* Table run i on seed k: the run itself for k = 0, else its run on the seeded scene. */
run *seed_run(const compare_plan *p, int i, int k)
{
	return k == 0 ? &p->runs[i] : &p->extra[(size_t)i * (p->nseeds - 1) + k - 1];
}

/* The median of the values of v[0..n) that are not NaN (NaN if none). */
static double median_known(const double *v, int n)
{
	double t[MAX_SEEDS];
	int m = 0;
	for (int i = 0; i < n && m < MAX_SEEDS; ++i)
		if (!isnan(v[i]))
			t[m++] = v[i];
	return m ? lk_cli_median(t, m) : NAN;
}

/* Every finished run but the engines' own against the engine's own at the same scene and budget: each outcome
 * over the seeds (verdict.h), the drift of a stack and its kinetic energy at the end only where it stood in every
 * run of both (a stack that fell later than the other solver's is still tumbling at the end: when it fell is
 * judged by `standing`), its depth at rest only where it stood in every run of both or fell in every run of both
 * (a standing wall's bottom row carries the rows above it, the rubble of a fallen one lies a brick deep: the
 * rubble rested shallower, and a solver that kept the wall up counted worse), its deepest contact only where it
 * stood in a run of either (where it fell in every run of both, the deepest contacts are its boxes landing on
 * each other, as deep as they arrive fast: a box's fall speed times the step, whichever solver let it fall), and
 * the ratio of the solver times over the runs. */
void judge(compare_plan *p)
{
	const int ns = p->nseeds;
	for (int i = 0; i < p->ndone; ++i) {
		run *r = &p->runs[i];
		const char *own = lk_engine_default_solver(r->engine);
		int j = -1;
		for (int k = 0; k < p->ndone && strcmp(r->solver, own); ++k)
			if (p->runs[k].scene_index == r->scene_index && p->runs[k].engine == r->engine &&
			    p->runs[k].budget == r->budget && !strcmp(p->runs[k].solver, own))
				j = k;
		if (j < 0)
			continue;
		int any_fell = 0, all_fell = 1;
		double to[MAX_SEEDS], tc[MAX_SEEDS];
		for (int k = 0; k < ns; ++k) {
			any_fell |= seed_run(p, i, k)->fell || seed_run(p, j, k)->fell;
			all_fell &= seed_run(p, i, k)->fell && seed_run(p, j, k)->fell;
			/* the mean: auto spends the engine's iterations as a mean over the steps, a resting stack's
			 * steps alternating between one sweep and two with a correction, whose median is no cost */
			to[k] = seed_run(p, j, k)->solve_ms_mean;
			tc[k] = seed_run(p, i, k)->solve_ms_mean;
		}
		int worse = 0, better = 0;
		for (int o = 0; o < LK_OUTCOME_COUNT; ++o) {
			double vo[MAX_SEEDS], vc[MAX_SEEDS];
			for (int k = 0; k < ns; ++k) {
				const int skip = ((o == LK_OUTCOME_DRIFT_MAX || o == LK_OUTCOME_ENERGY_END) && any_fell) ||
				                 (o == LK_OUTCOME_PENETRATION_REST && any_fell && !all_fell) ||
				                 (o == LK_OUTCOME_MAX_PENETRATION && all_fell);
				vo[k] = skip ? NAN : outcome_value(seed_run(p, j, k), (lk_outcome)o);
				vc[k] = skip ? NAN : outcome_value(seed_run(p, i, k), (lk_outcome)o);
			}
			r->verdict[o] = lk_verdict_of(vo, ns, vc, ns, lk_outcome_resolution((lk_outcome)o, r->scene, p->h),
			                              lk_outcome_higher_better((lk_outcome)o));
			worse |= r->verdict[o].sign == LK_VERDICT_WORSE;
			better |= r->verdict[o].sign == LK_VERDICT_BETTER;
		}
		r->overall = worse ? LK_VERDICT_WORSE : better ? LK_VERDICT_BETTER : LK_VERDICT_LEVEL;
		r->time_ratio = median_known(tc, ns) / median_known(to, ns);
		r->has_verdict = 1;
	}
}

/* With seeds, each table run's columns become the medians over its seeds, and a stack counts as fallen when
 * the median of its seconds standing is short of the run (its per-step series stay those of seed 0). */
void seed_medians(const compare_opts *o, compare_plan *p)
{
	if (p->nseeds < 2)
		return;
	for (int i = 0; i < p->ndone; ++i) {
		double v[MAX_SEEDS];
		for (int c = 0; c < compare_ncols; ++c) {
			for (int k = 0; k < p->nseeds; ++k)
				v[k] = column_value(seed_run(p, i, k), &compare_cols[c]);
			*(double *)((char *)&p->runs[i] + compare_cols[c].at) = median_known(v, p->nseeds);
		}
		for (int k = 0; k < p->nseeds; ++k)
			v[k] = seed_run(p, i, k)->standing;
		run *r = &p->runs[i];
		r->standing = median_known(v, p->nseeds);
		if (!isnan(r->standing)) {
			r->fell = r->standing < times_of(o, p, r->scene).t - 0.5 * p->h;
			r->fell_at = r->fell ? r->standing : -1;
		}
	}
}

int has_verdicts(const compare_plan *p)
{
	for (int i = 0; i < p->ndone; ++i)
		if (p->runs[i].has_verdict)
			return 1;
	return 0;
}

const char verdict_legend[] =
	"Each outcome against the engine's own solver at the same budget: + better, = level, - worse, . not compared\n"
	"(the medians over the seeds differ by less than the band: the larger spread of the two solvers' runs, at\n"
	"least the outcome's resolution, for a depth the 1 mm contact layer that no solver pushes out of); time: the\n"
	"ratio of the solver times over the whole run (per step: a budget kept as a mean over the steps costs its\n"
	"mean), the median over the seeds: the solve alone (in ODE against quickstep's whole stepper, which reads\n"
	"its rows and integrates too; the engine's whole constraint phase is `lcpkit bench phase`'s). Where boxes\n"
	"slide down the incline, KE end is their speed and max pen. their landing at the foot, as deep as they\n"
	"arrive fast: both follow the slide, judged by accel err, and are not compared, nor is the KE end of boxes\n"
	"launched across the floor that friction stops only after the last second began; where a stack fell in a run,\n"
	"neither are its drift and KE end (when it fell is judged by standing), nor its pen. rest unless it fell in\n"
	"every run of both (a standing stack's bottom carries the rest, rubble does not), and where it fell in every\n"
	"run of both, its max pen. (its boxes landing on each other).\n\n";

static char verdict_mark(const lk_verdict *v)
{
	return !v->compared ? '.' : v->sign == LK_VERDICT_WORSE ? '-' : v->sign == LK_VERDICT_BETTER ? '+' : '=';
}

/* The verdict table: a row per run that has one, the solver-time ratio and a mark per outcome, then one line
 * per solver. */
void print_verdict(FILE *f, const compare_plan *p, int markdown)
{
	int sw = 14, vw = 13;
	for (int i = 0; i < p->ndone; ++i) {
		sw = (int)fmax(sw, (double)strlen(p->runs[i].scene->spec));
		vw = (int)fmax(vw, (double)strlen(p->runs[i].solver));
	}
	if (markdown) {
		fprintf(f, "| scene | engine | solver | time |");
		for (int o = 0; o < LK_OUTCOME_COUNT; ++o)
			fprintf(f, " %s |", lk_outcome_head((lk_outcome)o));
		fprintf(f, " verdict |\n|---|---|---|---:|");
		for (int o = 0; o < LK_OUTCOME_COUNT; ++o)
			fprintf(f, ":---:|");
		fprintf(f, "---|\n");
	} else {
		fprintf(f, "%-*s %-7s %-*s  time", sw, "scene", "engine", vw, "solver");
		for (int o = 0; o < LK_OUTCOME_COUNT; ++o)
			fprintf(f, " %9s", lk_outcome_head((lk_outcome)o));
		fprintf(f, "  verdict\n");
	}
	for (int i = 0; i < p->ndone; ++i) {
		const run *r = &p->runs[i];
		if (!r->has_verdict)
			continue;
		char words[160];
		verdict_words(r, words, sizeof words);
		if (markdown)
			fprintf(f, "| %s | %s | %s | %.2fx |", r->scene->spec, lk_engine_name(r->engine), r->solver, r->time_ratio);
		else
			fprintf(f, "%-*s %-7s %-*s %5.2fx", sw, r->scene->spec, lk_engine_name(r->engine), vw, r->solver,
			        r->time_ratio);
		for (int o = 0; o < LK_OUTCOME_COUNT; ++o)
			fprintf(f, markdown ? " %c |" : " %9c", verdict_mark(&r->verdict[o]));
		fprintf(f, markdown ? " %s |\n" : "  %s\n", words);
	}
	fprintf(f, "%s", markdown ? "\n" : "");
	/* one line per solver spec */
	int any_worse = 0;
	for (int i = 0; i < p->ndone; ++i) {
		const run *r = &p->runs[i];
		int first = r->has_verdict;
		for (int k = 0; k < i && first; ++k)
			first = !(p->runs[k].has_verdict && !strcmp(p->runs[k].solver, r->solver));
		if (!first)
			continue;
		int n = 0, worse = 0, better = 0, slower = 0;
		double tmin = INFINITY, tmax = 0;
		for (int k = i; k < p->ndone; ++k) {
			const run *q = &p->runs[k];
			if (!q->has_verdict || strcmp(q->solver, r->solver))
				continue;
			++n;
			worse += q->overall == LK_VERDICT_WORSE;
			better += q->overall == LK_VERDICT_BETTER;
			slower += !(q->time_ratio <= 1.0);
			tmin = fmin(tmin, q->time_ratio);
			tmax = fmax(tmax, q->time_ratio);
		}
		fprintf(f, "%s%s: worse than the engine's own on %d of %d (better on %d, level on %d); solver time %.2f-%.2fx "
		           "the engine's own, above 1.0x on %d\n",
		        markdown ? "- " : "", r->solver, worse, n, better, n - worse - better, tmin, tmax, slower);
		any_worse |= worse > 0;
	}
	/* the band of a few runs is their range, which a median of noise alone leaves far more often than the
	 * verdict's own number of runs does (VERDICT_SEEDS) */
	if (any_worse && p->nseeds < VERDICT_SEEDS)
		fprintf(f, "%sa row worse over %d run%s may be noise (the band of a few runs is narrow): confirm it with "
		           "--seeds %d\n",
		        markdown ? "\n" : "", p->nseeds, p->nseeds == 1 ? "" : "s", VERDICT_SEEDS);
}

/* DIR/verdict.csv: each run's verdict, outcome by outcome: the two medians, the band and the sign. */
int write_verdict_csv(const char *path, const compare_plan *p)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "scene,engine,solver,seeds,time_ratio,verdict");
	for (int o = 0; o < LK_OUTCOME_COUNT; ++o)
		fprintf(f, ",%s_own,%s,%s_band,%s_verdict", lk_outcome_key((lk_outcome)o), lk_outcome_key((lk_outcome)o),
		        lk_outcome_key((lk_outcome)o), lk_outcome_key((lk_outcome)o));
	fprintf(f, "\n");
	static const char *const sign[] = {"worse", "level", "better"};
	for (int i = 0; i < p->ndone; ++i) {
		const run *r = &p->runs[i];
		if (!r->has_verdict)
			continue;
		fprintf(f, "\"%s\",%s,\"%s\",%d,%.6g,%s", r->scene->spec, lk_engine_name(r->engine), r->solver, p->nseeds,
		        r->time_ratio, sign[r->overall + 1]);
		for (int o = 0; o < LK_OUTCOME_COUNT; ++o) {
			const lk_verdict *v = &r->verdict[o];
			if (v->compared)
				fprintf(f, ",%.9g,%.9g,%.9g,%s", v->own, v->cand, v->band, sign[v->sign + 1]);
			else
				fprintf(f, ",,,,");
		}
		fprintf(f, "\n");
	}
	return fclose(f) == 0 ? 0 : -1;
}

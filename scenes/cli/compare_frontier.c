/* lcpkit compare --frontier: the outcome against the solver time over a series of budgets. */
#include "compare.h"

#include "plot.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ frontier */

static const column frontier_cols[] = {
	COL("budget", "budget", 6, "%.0f", budget_value),
	COL("work", "work", 5, "%.1f", work_median),
	COL(NULL, "iterations", 0, NULL, iterations),
	COL("solver ms", "solver_ms_median", 9, "%.3f", solve_ms_median),
	COL(NULL, "step_ms_median", 0, NULL, step_ms_median),
	COL("fallbacks", "fallbacks", 9, "%.0f", fallbacks),
	COL("standing s", "seconds_standing", 10, "%.2f", standing),
	COL("top drift m", "top_drift", 11, "%.4f", top_drift),
	COL("drift max m", "top_drift_max", 11, "%.4f", top_drift_max),
	COL("pen. rest m", "penetration_rest", 11, "%.4f", pen_rest),
	COL(NULL, "max_penetration", 0, NULL, max_penetration),
	COL("joint err m", "joint_error", 11, "%.2e", joint_err_max),
	COL("accel err", "accel_error", 9, "%.3f", accel_err),
	COL(NULL, "creep", 0, NULL, creep),
};

/* What a scene's frontier measures a run by; col.head is the plot's y axis. */
typedef struct outcome {
	column col;
	int higher_better, log_y;
	lk_outcome verdict; /* the same outcome in the verdict's terms (its resolution) */
} outcome;

static const outcome *outcome_of(const lk_scene *sc)
{
	static const outcome o[] = {
		{COL("acceleration error of the sliders, relative (lower is better)", "accel_error", 0, NULL, accel_err), 0, 1,
		 LK_OUTCOME_ACCEL_ERROR},
		{COL("joint error over the last second, m (lower is better)", "joint_error", 0, NULL, joint_err_max), 0, 1,
		 LK_OUTCOME_JOINT_ERROR},
		{COL("seconds standing (higher is better)", "seconds_standing", 0, NULL, standing), 1, 0, LK_OUTCOME_STANDING},
		{COL("penetration at rest, m (lower is better)", "penetration_rest", 0, NULL, pen_rest), 0, 1,
		 LK_OUTCOME_PENETRATION_REST},
	};
	if (!strcmp(sc->name, "incline"))
		return &o[0];
	if (sc->njoints > 0)
		return &o[1];
	if (sc->stack_top >= 0)
		return &o[2];
	return &o[3];
}

/* Marks the points no other point beats in both solver time and outcome; idx receives them by solver time. */
static int mark_pareto(run *runs, int cnt, int higher_better, int *idx)
{
	/* by solver time, and at equal time the better outcome first (insertion: a few hundred points) */
	for (int i = 0; i < cnt; ++i) {
		int k = i;
		for (; k > 0; --k) {
			const run *a = &runs[idx[k - 1]], *b = &runs[i];
			double d = higher_better ? b->outcome - a->outcome : a->outcome - b->outcome;
			if (a->solve_ms_median < b->solve_ms_median || (a->solve_ms_median == b->solve_ms_median && !(d > 0)))
				break;
			idx[k] = idx[k - 1];
		}
		idx[k] = i;
	}
	double best = higher_better ? -INFINITY : INFINITY;
	int n = 0;
	for (int i = 0; i < cnt; ++i) {
		run *r = &runs[idx[i]];
		if (isnan(r->outcome) || !(higher_better ? r->outcome > best : r->outcome < best))
			continue;
		best = r->outcome;
		r->pareto = 1;
		idx[n++] = idx[i];
	}
	return n;
}

/* DIR/frontier-SCENE-ENGINE[suffix].png: the runs' outcome oc against solver time, a line per solver through
 * its budgets and the Pareto frontier as a step line (what the best solver reaches at that time or less);
 * note, if any, ends the title. */
static int plot_frontier(const compare_opts *o, const compare_plan *p, const run *runs, int cnt, const int *front,
                         int nfront, const outcome *oc, const char *suffix, const char *note, char *path,
                         size_t path_size)
{
	const lk_scene *sc = runs[0].scene;
	lk_series ser[MAX_ITEMS + 1];
	const char *labels[MAX_ITEMS * MAX_BUDGETS];
	char lbuf[MAX_ITEMS * MAX_BUDGETS][16];
	/* the step line has up to two points per frontier point */
	double *x = malloc(sizeof(double) * (size_t)(2 * cnt + 4 * nfront + 1));
	if (!x)
		return -1;
	double *y = x + cnt, *fx = y + cnt, *fy = fx + 2 * nfront;
	int ns = 0;
	for (int first = 0, last; first < cnt; first = last + 1) {
		for (last = first; last + 1 < cnt && !strcmp(runs[last + 1].solver, runs[first].solver); ++last)
			;
		for (int k = first; k <= last; ++k) {
			x[k] = runs[k].solve_ms_median;
			y[k] = runs[k].outcome;
			snprintf(lbuf[k], sizeof lbuf[k], "%d", runs[k].budget);
			labels[k] = lbuf[k];
		}
		ser[ns++] = (lk_series){.name = runs[first].solver, .n = last - first + 1, .x = x + first, .y = y + first,
		                        .labels = labels + first, .markers = 1};
	}
	int nf = 0;
	for (int i = 0; i < nfront; ++i) {
		if (i > 0) {
			fx[nf] = runs[front[i]].solve_ms_median;
			fy[nf++] = runs[front[i - 1]].outcome;
		}
		fx[nf] = runs[front[i]].solve_ms_median;
		fy[nf++] = runs[front[i]].outcome;
	}
	if (nf > 0)
		ser[ns++] = (lk_series){.name = "Pareto frontier", .n = nf, .x = fx, .y = fy, .underlay = 1};
	char title[256], budgets[128] = "";
	for (int b = 0; b < p->nbudgets; ++b)
		snprintf(budgets + strlen(budgets), sizeof budgets - strlen(budgets), "%s%d", b ? "," : "", p->budgets[b]);
	snprintf(path, path_size, "%s/frontier-%s-%s%s.png", o->outdir, runs[0].stem, lk_engine_name(runs[0].engine),
	         suffix);
	snprintf(title, sizeof title, "%s in %s, %g s: budgets %s sweep-equivalents per step%s", sc->spec,
	         lk_engine_name(runs[0].engine), runs[0].steps * p->h, budgets, note);
	lk_plot pl = {.title = title, .xlabel = "solver ms per step (median)", .ylabel = oc->col.head,
	              .log_y = oc->log_y, .log_x = 1, .width = 1000, .height = 560};
	if (oc->higher_better) {
		/* seconds standing run from 0 to the run's time, with room for the labels of those that never fell */
		pl.ymin = 0;
		pl.ymax = 1.08 * runs[0].steps * p->h;
	}
	int rc = lk_plot_png(path, &pl, ser, ns) == LK_OK ? 0 : -1;
	if (rc != 0)
		lk_cli_error("compare", "cannot write %s", path);
	free(x);
	return rc;
}

/* Stacks: DIR/frontier-SCENE-ENGINE-drift.png, the top's largest drift against solver time for the runs whose
 * stack stood the whole time, with their own Pareto frontier: where seconds standing cannot tell a still stack
 * from a swaying one, this can. idx: room for cnt indices. 1 (and no file) when no run stood. */
static int plot_drift(const compare_opts *o, const compare_plan *p, const run *g, int cnt, int *idx, char *path,
                      size_t path_size)
{
	static const outcome drift = {COL("largest top drift while standing, m (lower is better)", "top_drift_max", 0,
	                                  NULL, top_drift_max),
	                              0, 1, LK_OUTCOME_DRIFT_MAX};
	run *s = malloc(sizeof *s * (size_t)cnt);
	int m = 0, rc = 1;
	if (!s) {
		rc = -1;
	} else {
		/* shallow copies for the plot, every solver kept (its colour is the main picture's), a run that fell
		 * with no point (NaN); a still stack drawn at a micrometre at least, for the log axis */
		for (int k = 0; k < cnt; ++k) {
			s[k] = g[k];
			s[k].outcome = g[k].fell ? NAN : fmax(g[k].top_drift_max, 1e-6);
			s[k].pareto = 0;
			m += !g[k].fell;
		}
		if (m > 0) {
			const int n = mark_pareto(s, cnt, 0, idx);
			rc = plot_frontier(o, p, s, cnt, idx, n, &drift, "-drift", " (runs that stood)", path, path_size);
		}
	}
	free(s);
	return rc;
}

/* More work never worse: for each lcpkit solver, whether in every scene and engine of the frontier each budget's
 * outcome is level with or better than the next smaller budget's, level meaning within the outcome's
 * resolution (verdict.h). One line per solver on f, and each step that got worse. */
/* The spread of run k's frontier outcome over its seeds (0 with one seed): how far chance alone moves it. */
static double outcome_spread(const compare_plan *p, int k, const outcome *oc)
{
	double lo = INFINITY, hi = -INFINITY;
	for (int s = 0; s < p->nseeds; ++s) {
		const double v = column_value(seed_run(p, k, s), &oc->col);
		if (!isnan(v)) {
			lo = fmin(lo, v);
			hi = fmax(hi, v);
		}
	}
	return hi > lo ? hi - lo : 0.0;
}

static void print_monotone(FILE *f, const compare_plan *p)
{
	for (int a = 0; a < p->ndone; ++a) {
		const run *ra = &p->runs[a];
		int seen = 0;
		for (int b = 0; b < a && !seen; ++b)
			seen = !strcmp(p->runs[b].solver, ra->solver);
		if (seen || lk_engine_solver_find(ra->solver))
			continue;
		int groups = 0, worse = 0;
		char where[600] = "";
		size_t used = 0;
		for (int first = 0, last; first < p->ndone; first = last + 1) {
			const run *g = &p->runs[first];
			for (last = first; last + 1 < p->ndone && p->runs[last + 1].scene == g->scene &&
			                   p->runs[last + 1].engine == g->engine;
			     ++last)
				;
			const outcome *oc = outcome_of(g->scene);
			const double res = lk_outcome_resolution(oc->verdict, g->scene, p->h);
			const run *prev = NULL;
			double prev_spread = 0.0;
			int bad = 0, any = 0;
			/* the runs of one solver come in the order of the budgets, ascending (parse_budgets) */
			for (int k = first; k <= last; ++k) {
				const run *r = &p->runs[k];
				if (strcmp(r->solver, ra->solver))
					continue;
				any = 1;
				/* with seeds, the medians compared within the larger spread of the two budgets' runs, as the
				 * verdict compares them: a chaotic outcome (a pile of ragdolls) moves by chance alone */
				const double spread = outcome_spread(p, k, oc);
				if (prev && !isnan(prev->outcome) && !isnan(r->outcome)) {
					const double d = oc->higher_better ? prev->outcome - r->outcome : r->outcome - prev->outcome;
					if (d > fmax(res, fmax(spread, prev_spread)) || (isnan(d) && !isnan(prev->outcome))) {
						bad = 1;
						if (used + 1 < sizeof where)
							used += (size_t)snprintf(where + used, sizeof where - used, "%s%s %s %d->%d",
							                         worse + bad > 1 ? "; " : "", g->scene->spec,
							                         lk_engine_name(g->engine), prev->budget, r->budget);
					}
				}
				prev = r;
				prev_spread = spread;
			}
			groups += any;
			worse += bad;
		}
		fprintf(f, "%s: more work never worse on %d of %d scene x engine%s%s\n", ra->solver, groups - worse, groups,
		        worse ? "; worse: " : "", where);
	}
}

/* The frontier of the finished runs: each scene and engine's outcome and Pareto points, the table on stdout
 * (or the JSON), frontier.csv, frontier.json and the plots. LK_EXIT_FAIL if a file cannot be written. */
int write_frontier(const compare_opts *o, compare_plan *p)
{
	int rc = LK_EXIT_OK, nplots = 0;
	int *idx = malloc(sizeof(int) * (size_t)(p->ndone > 0 ? p->ndone : 1));
	char(*plots)[1024] = malloc(sizeof *plots * (size_t)(2 * p->nscenes * p->nengines));
	if (!idx || !plots) {
		free(idx);
		free(plots);
		return LK_EXIT_FAIL;
	}
	for (int first = 0, last; first < p->ndone; first = last + 1) {
		run *g = &p->runs[first];
		for (last = first; last + 1 < p->ndone && p->runs[last + 1].scene == g->scene &&
		                   p->runs[last + 1].engine == g->engine;
		     ++last)
			;
		const outcome *oc = outcome_of(g->scene);
		for (int k = first; k <= last; ++k)
			p->runs[k].outcome = column_value(&p->runs[k], &oc->col);
		int n = mark_pareto(g, last - first + 1, oc->higher_better, idx);
		if (plot_frontier(o, p, g, last - first + 1, idx, n, oc, "", "", plots[nplots], sizeof plots[nplots]) == 0)
			++nplots;
		else
			rc = LK_EXIT_FAIL;
		if (g->scene->stack_top >= 0) {
			/* idx, the main picture's frontier, is drawn: its room serves the drift's */
			const int d = plot_drift(o, p, g, last - first + 1, idx, plots[nplots], sizeof plots[nplots]);
			if (d == 0)
				++nplots;
			else if (d < 0)
				rc = LK_EXIT_FAIL;
		}
	}
	free(idx);
	char path[1024];
	snprintf(path, sizeof path, "%s/frontier.csv", o->outdir);
	if (write_csv(path, p->runs, p->ndone, frontier_cols, NCOLS(frontier_cols), "pareto", tail_pareto) != 0) {
		lk_cli_error("compare", "cannot write %s", path);
		rc = LK_EXIT_FAIL;
	}
	snprintf(path, sizeof path, "%s/frontier.json", o->outdir);
	FILE *f = fopen(path, "w");
	if (f)
		print_json(f, p->runs, p->ndone, frontier_cols, NCOLS(frontier_cols), o->outdir, 1);
	if (!f || fclose(f) != 0) {
		lk_cli_error("compare", "cannot write %s", path);
		rc = LK_EXIT_FAIL;
	}
	if (o->json) {
		print_json(stdout, p->runs, p->ndone, frontier_cols, NCOLS(frontier_cols), o->outdir, 1);
	} else {
		printf("\n");
		print_table(stdout, p->runs, p->ndone, frontier_cols, NCOLS(frontier_cols), "pareto", tail_pareto, 0);
		printf("\n");
		print_monotone(stdout, p);
		printf("\nfrontier: %s/frontier.csv, %s/frontier.json\n", o->outdir, o->outdir);
		for (int i = 0; i < nplots; ++i)
			printf("plot: %s\n", plots[i]);
	}
	free(plots);
	return rc;
}

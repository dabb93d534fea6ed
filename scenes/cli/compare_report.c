/* lcpkit compare: the plots, the pictures side by side and report.md. */
#include "compare.h"

#include "plot.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DIR/SCENE-convergence.png: RES against work on the problem of step conv_step, for the runs that solved it
 * again (lcpkit's solvers). */
static void plot_convergence(const compare_opts *o, const run *runs, int cnt, const scene_times *st)
{
	const lk_scene *sc = runs[0].scene;
	lk_series ser[MAX_ITEMS * LK_ENGINE_COUNT];
	char names[MAX_ITEMS * LK_ENGINE_COUNT][200], path[1024], title[256];
	int ns = 0;
	for (int k = 0; k < cnt; ++k) {
		const run *q = &runs[k];
		if (!q->conv_res)
			continue;
		snprintf(names[ns], sizeof names[ns], "%s %s", lk_engine_name(q->engine), q->solver);
		ser[ns] = (lk_series){.name = names[ns], .n = q->conv_n, .x = q->conv_work, .y = q->conv_res};
		++ns;
	}
	snprintf(path, sizeof path, "%s/%s-convergence.png", o->outdir, runs[0].stem);
	snprintf(title, sizeof title, "%s: RES against work on the problem of step %d", sc->spec, st->conv_step);
	lk_plot pl = {.title = title, .xlabel = "work (PGS sweeps: row updates / rows)", .ylabel = "RES", .log_y = 1,
	              .width = 900, .height = 520};
	if (ns > 0 && lk_plot_png(path, &pl, ser, ns) != LK_OK)
		lk_cli_error("compare", "cannot write %s", path);
}

/* DIR/SCENE-residual.png: RES after each step, every run. */
static void plot_residual(const compare_opts *o, double h, const run *runs, int cnt, const scene_times *st)
{
	const lk_scene *sc = runs[0].scene;
	double *ts = malloc(sizeof(double) * (size_t)st->steps);
	if (!ts)
		return;
	for (int k = 0; k < st->steps; ++k)
		ts[k] = (k + 1) * h;
	lk_series ser[MAX_ITEMS * LK_ENGINE_COUNT];
	char names[MAX_ITEMS * LK_ENGINE_COUNT][200], path[1024], title[256];
	for (int k = 0; k < cnt; ++k) {
		snprintf(names[k], sizeof names[k], "%s %s", lk_engine_name(runs[k].engine), runs[k].solver);
		ser[k] = (lk_series){.name = names[k], .n = runs[k].steps, .x = ts, .y = runs[k].res};
	}
	snprintf(path, sizeof path, "%s/%s-residual.png", o->outdir, runs[0].stem);
	snprintf(title, sizeof title, "%s: RES after each step (budget %d)", sc->spec, o->iters);
	lk_plot pl = {.title = title, .xlabel = "time (s)", .ylabel = "RES", .log_y = 1, .width = 900, .height = 520};
	if (lk_plot_png(path, &pl, ser, cnt) != LK_OK)
		lk_cli_error("compare", "cannot write %s", path);
	free(ts);
}

/* DIR/SCENE-frames.png: the runs side by side (columns) at the picture times (rows). */
static void picture_frames(const compare_opts *o, const run *runs, int cnt, const scene_times *st)
{
	const lk_scene *sc = runs[0].scene;
	lk_pose *grid = malloc(sizeof(lk_pose) * (size_t)st->nf * cnt * sc->nbodies);
	if (!grid)
		return;
	const char *ctitles[MAX_ITEMS * LK_ENGINE_COUNT], *rtitles[16];
	char names[MAX_ITEMS * LK_ENGINE_COUNT][200], rbuf[16][32], path[1024];
	for (int row = 0; row < st->nf; ++row) {
		snprintf(rbuf[row], sizeof rbuf[row], "%g s", st->ft[row]);
		rtitles[row] = rbuf[row];
		for (int col = 0; col < cnt; ++col)
			memcpy(grid + ((size_t)row * cnt + col) * sc->nbodies, runs[col].frames + (size_t)row * sc->nbodies,
			       sizeof(lk_pose) * sc->nbodies);
	}
	for (int col = 0; col < cnt; ++col) {
		snprintf(names[col], sizeof names[col], "%s %s", lk_engine_name(runs[col].engine), runs[col].solver);
		ctitles[col] = names[col];
	}
	snprintf(path, sizeof path, "%s/%s-frames.png", o->outdir, runs[0].stem);
	if (lk_render_grid_png(path, sc, st->nf, cnt, ctitles, rtitles, grid, 220) != LK_OK)
		lk_cli_error("compare", "cannot write %s", path);
	free(grid);
}

/* The plots and pictures of each scene whose runs all finished; one that cannot be written is reported and
 * left out. */
void write_plots(const compare_opts *o, const compare_plan *p)
{
	for (int first = 0, last = 0; first < p->ndone; first = last + 1) {
		const lk_scene *sc = p->runs[first].scene;
		for (last = first; last + 1 < p->nruns && p->runs[last + 1].scene == sc; ++last)
			;
		if (last >= p->ndone)
			break;
		scene_times st = times_of(o, p, sc);
		int cnt = last - first + 1;
		plot_convergence(o, &p->runs[first], cnt, &st);
		plot_residual(o, p->h, &p->runs[first], cnt, &st);
		if (o->pictures && st.nf > 0)
			picture_frames(o, &p->runs[first], cnt, &st);
	}
}

/* DIR/report.md: the settings, the table of the finished runs, what its columns mean and each scene's plots;
 * then its path on stdout (the table went there before, unless --json). LK_EXIT_FAIL if it cannot be
 * written. */
int write_report(const compare_opts *o, const compare_plan *p)
{
	int rc = LK_EXIT_OK;
	char path[1024];
	snprintf(path, sizeof path, "%s/report.md", o->outdir);
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, "# lcpkit compare\n\nSettings: a budget of %d sweep-equivalents per step (the engines' own solvers: %d "
		           "iterations), %g Hz, engines:", o->iters, o->iters, o->hz);
		for (int e = 0; e < p->nengines; ++e)
			fprintf(f, " %s", lk_engine_name((lk_engine)p->engines[e]));
		fprintf(f, ". Times are medians over the steps of each run.\n\n");
		const int judged = has_verdicts(p);
		if (p->nseeds > 1)
			fprintf(f, "Each scene ran %d times, as built and with seed=1..%d (a sideways shift of each body by at most "
			           "1e-4 of its size); the outcomes are the medians over those runs.\n\n", p->nseeds, p->nseeds - 1);
		print_table(f, p->runs, p->ndone, compare_cols, compare_ncols, judged ? "fell\tvs own" : "fell",
		            judged ? tail_fell_verdict : tail_fell, 1);
		fprintf(f, "\nColumns: solver ms is the constraint solve alone, step ms the whole engine step; work the\n"
		           "sweep-equivalents spent per step (the engines' own solvers: their iterations); RES is the natural\n"
		           "residual ||lambda - mid(lo, lambda - w, hi)|| of the step's own rows after the solve; max pen. the\n"
		           "deepest contact penetration, pen. rest the median over the last second of each step's deepest;\n"
		           "joint err the largest distance over the last second between the two bodies' anchor points of a\n"
		           "joint; accel err the worst relative error of the incline's sliding boxes' acceleration against\n"
		           "g (sin a - mu cos a), creep the farthest a box that should rest moved; KE end the median kinetic\n"
		           "energy over the last second; top drift the horizontal displacement of the top body at the end,\n"
		           "drift max the largest while the stack stood (a swaying stack's end drift is where the sway happens\n"
		           "to be then); fell the time the top sank by half its height. All of it, at full precision, is in\n"
		           "summary.csv.\n\n");
		if (judged) {
			fprintf(f, "## Verdict against each engine's own solver\n\n%s", verdict_legend);
			print_verdict(f, p, 1);
			fprintf(f, "\nEach outcome's medians, band and verdict are in verdict.csv.\n\n");
		}
		for (int s = 0; s < p->nscenes; ++s) {
			fprintf(f, "## %s\n\n", p->scenes[s]->spec);
			fprintf(f, "![residual over the steps](%s-residual.png)\n\n", p->stems[s]);
			fprintf(f, "![residual against work](%s-convergence.png)\n\n", p->stems[s]);
			if (o->pictures)
				fprintf(f, "![frames](%s-frames.png)\n\n", p->stems[s]);
		}
		fprintf(f, "Per-step values of each run are in the CSV files next to this report.\n");
		fclose(f);
	} else {
		lk_cli_error("compare", "cannot write %s", path);
		rc = LK_EXIT_FAIL;
	}
	snprintf(path, sizeof path, "%s/summary.csv", o->outdir);
	if (write_csv(path, p->runs, p->ndone, compare_cols, compare_ncols, "fell", tail_fell) != 0) {
		lk_cli_error("compare", "cannot write %s", path);
		rc = LK_EXIT_FAIL;
	}
	snprintf(path, sizeof path, "%s/verdict.csv", o->outdir);
	if (has_verdicts(p) && write_verdict_csv(path, p) != 0) {
		lk_cli_error("compare", "cannot write %s", path);
		rc = LK_EXIT_FAIL;
	}
	if (!o->json)
		printf("\nreport: %s/report.md\n", o->outdir);
	return rc;
}

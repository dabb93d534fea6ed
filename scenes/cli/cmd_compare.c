/* lcpkit compare: the same scenes in ODE and Bullet under several solvers, side by side, in numbers,
 * plots and pictures. */
#include "compare.h"
#include "cli.h"
#include "verdict.h"
#include "scene.h"
#include "sim.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#define DEFAULT_SCENES "boxstack,pool1"
#define DEFAULT_SOLVERS "own,auto,pgs,amgs,pgs-sm,gsp"
#define FRONTIER_SCENES "boxstack:n=20"
#define FRONTIER_SOLVERS "own,auto,pgs,psor:w=1.3,amgs,gsp,nncg,apgd,mprgp,pgs-sm,pgs:coarse=2,pgs:order=ipp,pgs:coarse=2,tol=1e-4,check=3"
#define FRONTIER_BUDGETS "2,5,10,15,20,40"
#define FRONTIER_SECONDS 20.0
/* --verdict without --scene, --solvers or --time: every scene of the library but the one for scale, the
 * default solver and PGS, 10 s, 6 seeds */
#define VERDICT_SCENES                                                                                           \
	"boxstack:n=20,pyramid,wall,pool1,pool2,stacking,cards,ragdolls,incline,slide,snake,motor-limit,"         \
	"heavy-on-light,pile"
#define VERDICT_SOLVERS "own,auto,pgs"
#define VERDICT_SECONDS 10.0

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit compare [--scene S[,S..]] [--engine ode|bullet|both] [--solvers LIST] [--time SECONDS]\n"
	        "                      [--hz H] [--iters N] [--threads N] [--frames T1,T2,..] [--out DIR] [--no-pictures]\n"
	        "                      [--clock cpu|wall] [--json]\n"
	        "       lcpkit compare --verdict [--seeds N] [--scene ..] [--engine ..] [--solvers ..] [--time ..]\n"
	        "       lcpkit compare --frontier [--budgets B1,B2,..] [--scene ..] [--engine ..] [--solvers ..] [--time ..]\n\n"
	        "Runs every scene x engine x solver from the same initial state, each solver with the same work\n"
	        "budget per step, a scene's runs side by side (a step of each in turn, so that the times compared\n"
	        "share the machine's state), and prints one table: solver and step time per step (median), work spent per step\n"
	        "(median, in PGS sweep-equivalents), the steps the engine's own solver made instead (fallbacks: an\n"
	        "lcpkit solve that stopped on a guard), RES after the solve (median, max), penetration (deepest, and the\n"
	        "median over the last second: at rest), joint error (largest over the last second), on the incline the\n"
	        "error of the sliding boxes' acceleration against g (sin a - mu cos a) and the creep of the boxes that\n"
	        "should rest, kinetic energy at the end (the median over the last second), drift of the top body and\n"
	        "whether and when a stack fell.\n"
	        "Writes report.md, summary.csv, one CSV per run and PNG plots and pictures to DIR (default\n"
	        "lcpkit-report/), named by scene (boxstack-...; by spec, boxstack_n_15-..., where two scenes of the\n"
	        "run share a name).\n\n"
	        "--frontier runs each scene x engine x solver at every budget of --budgets and records solver time\n"
	        "against outcome (stacks: seconds standing; jointed scenes: joint error; the incline: acceleration\n"
	        "error; others: penetration at rest): DIR/frontier.csv, frontier.json and one PNG per scene and engine\n"
	        "(frontier-SCENE-ENGINE.png) with the Pareto frontier over all points; for stacks a second one,\n"
	        "frontier-SCENE-ENGINE-drift.png, of the top's largest drift in the runs that stood, which tells a still\n"
	        "stack from a swaying one; and for each lcpkit solver a line: whether more work was never worse, each\n"
	        "budget's outcome level with (within the outcome's resolution, and with --seeds within the larger\n"
	        "spread of the two budgets' runs) or better than the next smaller one's, in every scene and engine.\n"
	        "With --seeds the outcomes are the medians over the seeds. Without --scene, --solvers and\n"
	        "--time it runs %s with %s for %g s, in about 20 s on two cores.\n\n"
	        "  --scene     scene specs NAME[:key=value,...] (default %s); scenes:",
	        FRONTIER_SCENES, FRONTIER_SOLVERS, FRONTIER_SECONDS, DEFAULT_SCENES);
	for (const char *const *n = lk_scene_names(); *n; ++n)
		fprintf(f, " %s", *n);
	fprintf(f, "\n  --engine    ode, bullet or both (default both)\n"
	           "  --solvers   lcpkit specs and engines' own solvers (default %s; 'own' is each engine's\n"
	           "              default:",
	        DEFAULT_SOLVERS);
	for (int e = 0; e < LK_ENGINE_COUNT; ++e)
		fprintf(f, "%s %s", e ? "," : "", lk_engine_default_solver((lk_engine)e));
	char names[200];
	fprintf(f, ")\n              engines' own: %s\n", lk_engine_solver_list(LK_ENGINE_COUNT, names, sizeof names));
	fprintf(f, "  --time      simulated seconds per run (default: 4 for stacks, 3 for pools; 20 with --frontier)\n"
	           "  --hz        steps per second (default 60)\n"
	           "  --iters     work budget per step in sweep-equivalents for every solver (the engines' own: N\n"
	           "              iterations; default 20); a spec's own iters= or budget= takes precedence\n"
	           "  --threads   sweeps of every lcpkit solver on N threads (the part order: the same result run after\n"
	           "              run; a spec's own threads= or order=colour takes precedence)\n"
	           "  --frames    times of the side-by-side pictures (default 1,2,4,10 clipped to --time)\n"
	           "  --frontier  the stability frontier: outcome against solver time over a series of budgets\n"
	           "  --budgets   the budgets of --frontier (default %s)\n"
	           "  --verdict   each solver against the engine's own at the same budget, outcome by outcome: better,\n"
	           "              level or worse where the medians over the seeds differ by more than the outcome's\n"
	           "              resolution and the runs' spread, and the solver time's ratio; without --scene,\n"
	           "              --solvers and --time every scene but bigpool with own,auto,pgs for 10 s\n"
	           "  --seeds     runs of each scene with seed=0..N-1, sideways shifts of 1e-4 of a body's size\n"
	           "              (default %d with --verdict or without --scene, else 1); the table shows the\n"
	           "              medians and `vs own` judges within the runs' spread. Fewer runs make a\n"
	           "              narrower spread (noise alone is judged worse about 3 %% of the time over 3\n"
	           "              runs, 0.04 %% over 6): confirm a worse row of fewer with --seeds %d\n"
	           "  --clock     the clock of the solver and step times: wall (default, what a user waits) or cpu (the\n"
	           "              CPU time of the stepping thread: on a shared machine the steadier measure)\n"
	           "  --json      print the table as JSON on stdout\n",
	        FRONTIER_BUDGETS, VERDICT_SEEDS, VERDICT_SEEDS);
}

const column compare_cols[] = {
	COL(NULL, "budget", 0, NULL, budget_value),
	COL("solver ms", "solver_ms_median", 9, "%.3f", solve_ms_median),
	COL("step ms", "step_ms_median", 9, "%.3f", step_ms_median),
	COL("work", "work", 5, "%.1f", work_median),
	COL(NULL, "iterations", 0, NULL, iterations),
	COL("fallbacks", "fallbacks", 9, "%.0f", fallbacks),
	COL("RES median", "res_median", 10, "%.2e", res_median),
	COL("RES max", "res_max", 10, "%.2e", res_max),
	COL("max pen. m", "max_penetration", 10, "%.4f", max_penetration),
	COL("pen. rest m", "penetration_rest", 11, "%.4f", pen_rest),
	COL("joint err m", "joint_error", 11, "%.2e", joint_err_max),
	COL("accel err", "accel_error", 9, "%.3f", accel_err),
	COL("creep m", "creep", 9, "%.2e", creep),
	COL("KE end J", "kinetic_energy_end", 10, "%.3g", energy_end),
	COL("top drift m", "top_drift", 11, "%.4f", top_drift),
	COL("drift max m", "top_drift_max", 11, "%.4f", top_drift_max),
};
const int compare_ncols = NCOLS(compare_cols);

double column_value(const run *r, const column *c)
{
	return *(const double *)((const char *)r + c->at);
}

/* The text of the last column: whether and when a stack fell, or whether a point is on the frontier. */

void tail_fell(const run *r, char *buf, size_t n)
{
	if (r->scene->stack_top < 0)
		snprintf(buf, n, "-");
	else if (r->fell)
		snprintf(buf, n, "at %.2f s", r->fell_at);
	else
		snprintf(buf, n, "no");
}

/* The verdict of a run against the engine's own solver, in words: "worse: pen. rest, KE end", "better: ...",
 * "level"; "-" for the engine's own and for a run without a verdict. */
void verdict_words(const run *r, char *buf, size_t n)
{
	if (!r->has_verdict) {
		snprintf(buf, n, "-");
		return;
	}
	if (r->overall == LK_VERDICT_LEVEL) {
		snprintf(buf, n, "level");
		return;
	}
	size_t used = (size_t)snprintf(buf, n, "%s:", r->overall == LK_VERDICT_WORSE ? "worse" : "better");
	for (int o = 0; o < LK_OUTCOME_COUNT && used < n; ++o)
		if (r->verdict[o].sign == r->overall)
			used += (size_t)snprintf(buf + used, n - used, " %s,", lk_outcome_head((lk_outcome)o));
	if (used < n)
		buf[used - 1] = '\0';
}

/* The compare table's last two columns (a tab between them, print_table): whether and when a stack fell, and
 * the verdict against the engine's own. */
void tail_fell_verdict(const run *r, char *buf, size_t n)
{
	char fell[32], v[160];
	tail_fell(r, fell, sizeof fell);
	verdict_words(r, v, sizeof v);
	snprintf(buf, n, "%s\t%s", fell, v);
}

void tail_pareto(const run *r, char *buf, size_t n)
{
	snprintf(buf, n, "%s", r->pareto ? "yes" : "");
}

/* The tail's columns, separated by tabs: cells of a Markdown row, or in a plain table each but the last padded to
 * 9 characters. */
static void tail_cells(FILE *f, const char *t, int markdown)
{
	for (;;) {
		const char *tab = strchr(t, '\t');
		if (!tab) {
			fprintf(f, "%s", t);
			return;
		}
		fprintf(f, markdown ? "%.*s | " : "%-9.*s ", (int)(tab - t), t);
		t = tab + 1;
	}
}

/* The runs as a table, plain (columns padded) or Markdown: scene, engine, solver, the columns with a
 * heading, and the tail columns. */
void print_table(FILE *f, const run *runs, int nruns, const column *cols, int ncols, const char *tail_head,
                        tail_fn tail, int markdown)
{
	int sw = 14, vw = 13; /* column widths that fit the longest scene and solver spec */
	for (int i = 0; i < nruns; ++i) {
		sw = (int)fmax(sw, (double)strlen(runs[i].scene->spec));
		vw = (int)fmax(vw, (double)strlen(runs[i].solver));
	}
	if (markdown) {
		fprintf(f, "| scene | engine | solver |");
		for (int c = 0; c < ncols; ++c)
			if (cols[c].head)
				fprintf(f, " %s |", cols[c].head);
		fprintf(f, " ");
		tail_cells(f, tail_head, 1);
		fprintf(f, " |\n|---|---|---|");
		for (int c = 0; c < ncols; ++c)
			if (cols[c].head)
				fprintf(f, "---:|");
		for (const char *t = tail_head; (t = strchr(t, '\t')); ++t)
			fprintf(f, "---|");
		fprintf(f, "---|\n");
	} else {
		fprintf(f, "%-*s %-7s %-*s", sw, "scene", "engine", vw, "solver");
		for (int c = 0; c < ncols; ++c)
			if (cols[c].head)
				fprintf(f, " %*s", cols[c].width, cols[c].head);
		fprintf(f, " ");
		tail_cells(f, tail_head, 0);
		fprintf(f, "\n");
	}
	for (int i = 0; i < nruns; ++i) {
		const run *r = &runs[i];
		if (markdown)
			fprintf(f, "| %s | %s | %s |", r->scene->spec, lk_engine_name(r->engine), r->solver);
		else
			fprintf(f, "%-*s %-7s %-*s", sw, r->scene->spec, lk_engine_name(r->engine), vw, r->solver);
		for (int c = 0; c < ncols; ++c) {
			if (!cols[c].head)
				continue;
			char v[32] = "-";
			double x = column_value(r, &cols[c]);
			if (!isnan(x))
				snprintf(v, sizeof v, cols[c].fmt, x);
			if (markdown)
				fprintf(f, " %s |", v);
			else
				fprintf(f, " %*s", cols[c].width, v);
		}
		char t[256];
		tail(r, t, sizeof t);
		fprintf(f, " ");
		tail_cells(f, t, markdown);
		fprintf(f, markdown ? " |\n" : "\n");
	}
}

/* The runs as CSV, one row each: scene, engine, solver, every column, fell_at and the tail. */
int write_csv(const char *path, const run *runs, int nruns, const column *cols, int ncols,
                     const char *tail_key, tail_fn tail)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "scene,engine,solver");
	for (int c = 0; c < ncols; ++c)
		fprintf(f, ",%s", cols[c].key);
	fprintf(f, ",fell_at,%s\n", tail_key);
	for (int i = 0; i < nruns; ++i) {
		const run *r = &runs[i];
		/* specs hold commas: quoted */
		fprintf(f, "\"%s\",%s,\"%s\"", r->scene->spec, lk_engine_name(r->engine), r->solver);
		for (int c = 0; c < ncols; ++c) {
			double x = column_value(r, &cols[c]);
			if (isnan(x))
				fprintf(f, ",");
			else
				fprintf(f, ",%.9g", x);
		}
		char t[64];
		tail(r, t, sizeof t);
		if (r->fell)
			fprintf(f, ",%.9g,%s\n", r->fell_at, t);
		else
			fprintf(f, ",,%s\n", t);
	}
	return fclose(f) == 0 ? 0 : -1;
}

void print_json(FILE *f, const run *runs, int nruns, const column *cols, int ncols, const char *outdir,
                       int frontier)
{
	fprintf(f, "{\"out\": ");
	lk_cli_json_string(f, outdir);
	fprintf(f, ", \"%s\": [", frontier ? "points" : "runs");
	for (int i = 0; i < nruns; ++i) {
		const run *r = &runs[i];
		fprintf(f, "%s\n  {\"scene\": ", i ? "," : "");
		lk_cli_json_string(f, r->scene->spec);
		fprintf(f, ", \"engine\": ");
		lk_cli_json_string(f, lk_engine_name(r->engine));
		fprintf(f, ", \"solver\": ");
		lk_cli_json_string(f, r->solver);
		fprintf(f, ", \"steps\": %d", r->steps);
		for (int c = 0; c < ncols; ++c) {
			fprintf(f, ", \"%s\": ", cols[c].key);
			lk_cli_json_number(f, column_value(r, &cols[c]));
		}
		fprintf(f, ", \"fell\": %s, \"fell_at\": ", r->fell ? "true" : "false");
		lk_cli_json_number(f, r->fell ? r->fell_at : NAN);
		if (frontier)
			fprintf(f, ", \"pareto\": %s", r->pareto ? "true" : "false");
		if (r->has_verdict) {
			static const char *const sign[] = {"\"worse\"", "\"level\"", "\"better\""};
			fprintf(f, ", \"verdict\": {\"overall\": %s, \"time_ratio\": ", sign[r->overall + 1]);
			lk_cli_json_number(f, r->time_ratio);
			for (int o = 0; o < LK_OUTCOME_COUNT; ++o)
				if (r->verdict[o].compared)
					fprintf(f, ", \"%s\": %s", lk_outcome_key((lk_outcome)o), sign[r->verdict[o].sign + 1]);
			fprintf(f, "}");
		}
		fprintf(f, ", \"csv\": ");
		lk_cli_json_string(f, r->csv);
		fprintf(f, "}");
	}
	fprintf(f, "\n]}\n");
}

static int parse_times(const char *s, double *t, int max)
{
	int n = 0;
	while (*s && n < max) {
		char *end;
		double v = strtod(s, &end);
		if (end == s || !isfinite(v) || v < 0)
			return -1;
		t[n++] = v;
		s = end;
		if (*s == ',')
			++s;
		else if (*s)
			return -1;
	}
	return n;
}

/* ------------------------------------------------------------------------------------------- stages */

/* The scenes' parts of the output files' names: a scene's name (boxstack), or where two scenes of the run
 * share it (boxstack:n=15,boxstack:n=25) its spec with ':', ',' and '=' as '_' (boxstack_n_15), and where
 * even those tie (the same spec twice) a number after it, so that no run's CSV or plot overwrites
 * another's. */
static void scene_stems(compare_plan *p)
{
	for (int s = 0; s < p->nscenes; ++s) {
		int shared = 0;
		for (int t = 0; t < p->nscenes; ++t)
			shared |= t != s && !strcmp(p->scenes[t]->name, p->scenes[s]->name);
		char *stem = p->stems[s];
		snprintf(stem, sizeof p->stems[s], "%s", shared ? p->scenes[s]->spec : p->scenes[s]->name);
		file_safe(stem);
		const size_t base = strlen(stem);
		for (int copy = 2, clash = 1; clash; ++copy) {
			clash = 0;
			for (int t = 0; t < s; ++t)
				clash |= !strcmp(p->stems[t], stem);
			if (clash)
				snprintf(stem + base, sizeof p->stems[s] - base, "-%d", copy);
		}
	}
}

/* Reads the command line into o: -1 to go on, else the exit status (--help printed, or a usage error). */
static int parse_options(int argc, char **argv, compare_opts *o)
{
	*o = (compare_opts){.scene_list = NULL, .solver_list = NULL, .engine_arg = "both", .outdir = "lcpkit-report",
	                    .hz = 60, .iters = 20, .pictures = 1, .budgets_arg = FRONTIER_BUDGETS};
	int no_pictures = 0, clock = -1;
	o->iters = 0; /* 0 until --iters gives it */
	static const char *const clocks[] = {"cpu", "wall", NULL};
	const lk_cli_option opts[] = {
		LK_CLI_OPT_FLAG("--json", &o->json),
		LK_CLI_OPT_FLAG("--no-pictures", &no_pictures),
		LK_CLI_OPT_FLAG("--frontier", &o->frontier),
		LK_CLI_OPT_FLAG("--verdict", &o->verdict),
		LK_CLI_OPT_STRING("--scene", &o->scene_list),
		LK_CLI_OPT_STRING("--scenes", &o->scene_list),
		LK_CLI_OPT_STRING("--solvers", &o->solver_list),
		LK_CLI_OPT_STRING("--solver", &o->solver_list),
		LK_CLI_OPT_STRING("--engine", &o->engine_arg),
		LK_CLI_OPT_STRING("--out", &o->outdir),
		LK_CLI_OPT_STRING("--frames", &o->frames_arg),
		LK_CLI_OPT_STRING("--budgets", &o->budgets_arg),
		LK_CLI_OPT_DOUBLE("--time", &o->seconds, DBL_MIN, 3600, "seconds in (0, 3600]"),
		LK_CLI_OPT_DOUBLE("--hz", &o->hz, 1, 10000, "a rate from 1 to 10000"),
		LK_CLI_OPT_INT("--iters", &o->iters, 1, 100000),
		LK_CLI_OPT_CHOICE("--clock", &clock, clocks),
		LK_CLI_OPT_INT("--seeds", &o->seeds, 1, MAX_SEEDS),
		LK_CLI_OPT_INT("--threads", &o->threads, 1, 64),
		LK_CLI_OPT_END};
	const int status = lk_cli_parse("compare", argc, argv, 1, opts, usage, NULL, NULL);
	if (status >= 0)
		return status;
	o->pictures = !no_pictures;
	if (clock >= 0)
		o->cpu_clock = clock == 0;
	o->iters_given = o->iters > 0;
	if (!o->iters_given)
		o->iters = 20;
	const int seeds_given = o->seeds > 0;
	if (o->frontier && o->iters_given) {
		lk_cli_error("compare", "--frontier runs every budget of --budgets; leave out --iters");
		return LK_EXIT_USAGE;
	}
	if (o->frontier && o->verdict) {
		lk_cli_error("compare", "--frontier does not take --verdict");
		return LK_EXIT_USAGE;
	}
	/* the default scenes are the first look a user has: one run of a pool of circles differs from its
	 * neighbours by more than the outcomes' resolution, so they run on the verdict's seeds and are judged
	 * within the runs' spread, as --verdict judges */
	const int first_look = !o->scene_list && !o->frontier;
	if (!o->scene_list)
		o->scene_list = o->frontier ? FRONTIER_SCENES : o->verdict ? VERDICT_SCENES : DEFAULT_SCENES;
	if (!o->solver_list)
		o->solver_list = o->frontier ? FRONTIER_SOLVERS : o->verdict ? VERDICT_SOLVERS : DEFAULT_SOLVERS;
	if (o->frontier && o->seconds <= 0)
		o->seconds = FRONTIER_SECONDS;
	if (o->verdict && o->seconds <= 0)
		o->seconds = VERDICT_SECONDS;
	if (!seeds_given)
		o->seeds = o->verdict || first_look ? VERDICT_SEEDS : 1;
	return -1;
}

/* --budgets: whole numbers in [1, 100000]. */
/* The budgets of --frontier, ascending and each once (the monotone check and the plots' lines read them so). */
int parse_budgets(const char *arg, int *out)
{
	double v[MAX_BUDGETS];
	int n = parse_times(arg, v, MAX_BUDGETS), m = 0;
	for (int i = 0; i < n; ++i) {
		if (v[i] < 1 || v[i] > 100000 || v[i] != floor(v[i]))
			return -1;
		int k = m;
		for (; k > 0 && out[k - 1] > (int)v[i]; --k)
			out[k] = out[k - 1];
		if (k > 0 && out[k - 1] == (int)v[i]) {
			for (; k < m; ++k)
				out[k] = out[k + 1];
			continue;
		}
		out[k] = (int)v[i];
		++m;
	}
	return n < 0 ? n : m;
}

/* The solver a spec names on an engine: 'own' is the engine's default. */
static const char *solver_on(const char *spec, int engine)
{
	return !strcmp(spec, "own") ? lk_engine_default_solver((lk_engine)engine) : spec;
}

/* Checks the engines, scenes, solvers and picture times of the options and plans the runs, before anything
 * runs or is written: an engine's own solver runs on that engine only, and a solver no engine runs is an
 * error. LK_EXIT_OK, or the exit status with the message printed. */
static int plan_runs(const compare_opts *o, compare_plan *p)
{
	if (!strcmp(o->engine_arg, "both")) {
		for (int e = 0; e < LK_ENGINE_COUNT; ++e)
			if (lk_engine_available((lk_engine)e))
				p->engines[p->nengines++] = e;
	} else {
		int e = lk_engine_from_name(o->engine_arg);
		if (e < 0) {
			lk_cli_error("compare", "unknown engine '%s' (choose from ode, bullet, both)", o->engine_arg);
			return LK_EXIT_USAGE;
		}
		p->engines[p->nengines++] = e;
	}
	if (p->nengines == 0) {
		lk_cli_error("compare", "no engine was built into this lcpkit");
		return LK_EXIT_USAGE;
	}
	p->nscenes = lk_cli_split_specs(o->scene_list, p->scene_specs, MAX_ITEMS);
	p->nsolvers = lk_cli_split_specs(o->solver_list, p->solver_specs, MAX_ITEMS);
	if (p->nscenes <= 0 || p->nsolvers <= 0) {
		lk_cli_error("compare", "give between 1 and %d scenes and solvers", MAX_ITEMS);
		return LK_EXIT_USAGE;
	}
	/* the verdict measures every solver against the engine's own, which runs too */
	int own_missing = 0;
	for (int e = 0; e < p->nengines && o->verdict; ++e) {
		int has = 0;
		for (int k = 0; k < p->nsolvers; ++k)
			has |= !strcmp(solver_on(p->solver_specs[k], p->engines[e]), lk_engine_default_solver((lk_engine)p->engines[e]));
		own_missing |= !has;
	}
	if (own_missing) {
		if (p->nsolvers >= MAX_ITEMS) {
			lk_cli_error("compare", "give at most %d solvers with --verdict (it adds the engines' own)", MAX_ITEMS - 1);
			return LK_EXIT_USAGE;
		}
		memmove(p->solver_specs[1], p->solver_specs[0], sizeof p->solver_specs[0] * (size_t)p->nsolvers);
		snprintf(p->solver_specs[0], sizeof p->solver_specs[0], "own");
		++p->nsolvers;
	}
	/* --threads reaches every lcpkit spec that does not choose its own (the engines' solvers keep theirs) */
	for (int k = 0; k < p->nsolvers && o->threads > 0; ++k) {
		char *spec = p->solver_specs[k], with[160], n[16];
		if (!strcmp(spec, "own") || lk_engine_solver_find(spec))
			continue;
		snprintf(n, sizeof n, "%d", o->threads);
		if (lk_config_spec_with(spec, "threads", n, with, sizeof with) == LK_OK)
			memcpy(spec, with, sizeof with);
		else
			fprintf(stderr, "lcpkit compare: %s sweeps on one thread (threads > 1 needs the natural, part or "
			                "colour order and box friction)\n", spec);
	}
	char err[512];
	for (int s = 0; s < p->nscenes; ++s) {
		if (lk_scene_create(p->scene_specs[s], &p->scenes[s], err, sizeof err) != LK_OK) {
			lk_cli_error("compare", "%s", err);
			return LK_EXIT_USAGE;
		}
	}
	scene_stems(p);
	/* --seeds: the same scenes with seed=1 .. N-1 */
	p->nseeds = o->seeds > 1 ? o->seeds : 1;
	for (int s = 0; s < p->nscenes; ++s)
		for (int k = 1; k < p->nseeds; ++k) {
			char spec[200];
			snprintf(spec, sizeof spec, "%s%sseed=%d", p->scene_specs[s], strchr(p->scene_specs[s], ':') ? "," : ":", k);
			if (lk_scene_create(spec, &p->seeded[s][k], err, sizeof err) != LK_OK) {
				lk_cli_error("compare", "%s", err);
				return LK_EXIT_USAGE;
			}
		}
	if (o->frontier) {
		p->nbudgets = parse_budgets(o->budgets_arg, p->budgets);
		if (p->nbudgets <= 0) {
			lk_cli_error("compare", "--budgets needs up to %d whole numbers in [1, 100000] like 2,5,10, got '%s'",
			             MAX_BUDGETS, o->budgets_arg);
			return LK_EXIT_USAGE;
		}
	} else {
		p->budgets[0] = o->iters;
		p->nbudgets = 1;
	}
	p->runs = calloc((size_t)p->nscenes * p->nengines * p->nsolvers * p->nbudgets, sizeof *p->runs);
	if (!p->runs)
		return LK_EXIT_FAIL;
	for (int v = 0; v < p->nsolvers; ++v) {
		int ok_somewhere = 0;
		for (int e = 0; e < p->nengines; ++e)
			if (lk_sim_check_solver((lk_engine)p->engines[e], solver_on(p->solver_specs[v], p->engines[e]), err,
			                        sizeof err) == LK_OK)
				ok_somewhere = 1;
		if (!ok_somewhere) {
			lk_cli_error("compare", "%s", err);
			return LK_EXIT_USAGE;
		}
	}
	for (int s = 0; s < p->nscenes; ++s)
		for (int e = 0; e < p->nengines; ++e)
			for (int v = 0; v < p->nsolvers; ++v) {
				const char *name = solver_on(p->solver_specs[v], p->engines[e]);
				if (lk_sim_check_solver((lk_engine)p->engines[e], name, err, sizeof err) != LK_OK)
					continue;
				for (int b = 0; b < p->nbudgets; ++b) {
					run *r = &p->runs[p->nruns++];
					r->scene = p->scenes[s];
					r->stem = p->stems[s];
					r->scene_index = s;
					r->engine = (lk_engine)p->engines[e];
					r->budget = p->budgets[b];
					snprintf(r->solver, sizeof r->solver, "%s", name);
				}
			}
	if (p->nseeds > 1) {
		const int per = p->nseeds - 1;
		p->extra = calloc((size_t)p->nruns * (size_t)per, sizeof *p->extra);
		if (!p->extra)
			return LK_EXIT_FAIL;
		for (int i = 0; i < p->nruns; ++i)
			for (int k = 1; k < p->nseeds; ++k) {
				const run *r = &p->runs[i];
				run *x = &p->extra[(size_t)i * per + k - 1];
				x->scene = p->seeded[r->scene_index][k];
				x->stem = r->stem;
				x->scene_index = r->scene_index;
				x->engine = r->engine;
				x->budget = r->budget;
				x->seed = k;
				memcpy(x->solver, r->solver, sizeof x->solver);
			}
	}
	if (o->frames_arg) {
		p->nframes = parse_times(o->frames_arg, p->frame_t, 16);
		if (p->nframes <= 0) {
			lk_cli_error("compare", "--frames needs times in seconds like 1,2,4,10, got '%s'", o->frames_arg);
			return LK_EXIT_USAGE;
		}
	}
	p->h = 1.0 / o->hz;
	return LK_EXIT_OK;
}

/* The time of a scene's runs (--time, else 4 s for stacks and 3 s for pools) and its picture times (--frames,
 * else those of 1, 2, 4 and 10 s within the run, and its end). */
scene_times times_of(const compare_opts *o, const compare_plan *p, const lk_scene *sc)
{
	scene_times st;
	st.t = o->seconds > 0 ? o->seconds : (sc->stack_top >= 0 ? 4.0 : 3.0);
	st.nf = p->nframes;
	if (st.nf > 0) {
		memcpy(st.ft, p->frame_t, sizeof st.ft);
	} else {
		const double def_t[4] = {1, 2, 4, 10};
		for (int k = 0; k < 4; ++k)
			if (def_t[k] <= st.t + 1e-9)
				st.ft[st.nf++] = def_t[k];
		if (st.nf == 0 || st.ft[st.nf - 1] < st.t - 1e-9)
			st.ft[st.nf++] = st.t;
	}
	st.steps = (int)lround(st.t / p->h);
	st.conv_step = st.steps >= 100 ? 100 : st.steps; /* seed 000 plots the 100th step */
	return st;
}

/* The runs of one scene on one seed (seed 0: the table's runs first..last, else their seeded copies), stepped
 * side by side: step k of every run, then step k + 1, so that the machine's state (its clock rate, the other
 * load on it) is the same for the solvers compared; each run's simulation is its own, and steps as it would
 * alone (sim_ode.c keeps each world's state of ODE's random generator). Each run writes its CSV. 0, or -1
 * with the failing run's message printed. */
static int run_group(const compare_opts *o, compare_plan *p, int first, int last, int seed)
{
	char err[512];
	const int n = last - first + 1;
	const lk_scene *sc = p->runs[first].scene;
	scene_times st = times_of(o, p, sc);
	if (n < 1 || n > MAX_RUNS_PER_SCENE) {
		lk_cli_error("compare", "%s: %d runs, at most %d a scene", sc->spec, n, MAX_RUNS_PER_SCENE);
		return -1;
	}
	run *g[MAX_RUNS_PER_SCENE] = {NULL};
	int nf = 0, conv = 0;
	if (seed == 0) {
		/* the frontier's runs need neither pictures nor the long solve of one step */
		nf = o->frontier ? 0 : st.nf;
		conv = o->frontier ? 0 : st.conv_step;
	}
	for (int i = 0; i < n; ++i)
		g[i] = seed == 0 ? &p->runs[first + i] : &p->extra[(size_t)(first + i) * (p->nseeds - 1) + seed - 1];
	int failed = -1;
	for (int i = 0; i < n && failed < 0; ++i)
		if (run_begin(g[i], st.t, p->h, st.ft, nf, conv, err, sizeof err) != 0)
			failed = i;
	const int steps = failed < 0 ? g[0]->steps : 0;
	char label[200];
	snprintf(label, sizeof label, "%s%s", sc->spec, seed ? " (seeded)" : "");
	for (int k = 0; k < steps && failed < 0; ++k) {
		for (int i = 0; i < n && failed < 0; ++i)
			if (run_step(g[i], k, err, sizeof err) != 0)
				failed = i;
		if ((k & 15) == 0 || k == steps - 1)
			lk_cli_progress(label, k + 1, steps);
	}
	for (int i = 0; i < n && failed < 0; ++i) {
		char suffix[32] = "";
		if (o->frontier)
			snprintf(suffix, sizeof suffix, "-budget%d", g[i]->budget);
		if (seed > 0)
			snprintf(suffix, sizeof suffix, "-seed%d", seed);
		if (run_end(g[i], o->outdir, suffix, err, sizeof err) != 0)
			failed = i;
	}
	if (failed < 0)
		return 0;
	lk_cli_error("compare", "%s on %s with %s: %s", g[failed]->scene->spec, lk_engine_name(g[failed]->engine),
	             g[failed]->solver, err);
	for (int i = 0; i < n; ++i)
		run_abort(g[i]);
	return -1;
}

/* Runs the plan a scene at a time (its runs side by side, run_group), each run writing its CSV; stops at the
 * first run that fails. */
static int run_all(const compare_opts *o, compare_plan *p)
{
	for (int first = 0, last; first < p->nruns; first = last + 1) {
		for (last = first; last + 1 < p->nruns && p->runs[last + 1].scene_index == p->runs[first].scene_index;)
			++last;
		for (int seed = 0; seed < p->nseeds; ++seed)
			if (run_group(o, p, first, last, seed) != 0)
				return LK_EXIT_FAIL;
		p->ndone = last + 1;
	}
	return LK_EXIT_OK;
}

static void free_plan(compare_plan *p)
{
	for (int i = 0; p->runs && i < p->nruns; ++i)
		free_run(&p->runs[i]);
	free(p->runs);
	for (int i = 0; p->extra && i < p->nruns * (p->nseeds - 1); ++i)
		free_run(&p->extra[i]);
	free(p->extra);
	for (int s = 0; s < MAX_ITEMS; ++s) {
		lk_scene_destroy(p->scenes[s]);
		for (int k = 0; k < MAX_SEEDS; ++k)
			lk_scene_destroy(p->seeded[s][k]);
	}
}

int lk_cmd_compare(int argc, char **argv)
{
	compare_opts o;
	int rc = parse_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.cpu_clock)
		lk_set_stats_clock(LK_CLOCK_THREAD_CPU);
	compare_plan p;
	memset(&p, 0, sizeof p);
	rc = plan_runs(&o, &p);
	if (rc == LK_EXIT_OK && lk_cli_mkdirs(o.outdir) != 0) {
		lk_cli_error("compare", "cannot create directory '%s': %s", o.outdir, strerror(errno));
		rc = LK_EXIT_FAIL;
	}
	if (rc == LK_EXIT_OK && o.frontier) {
		rc = run_all(&o, &p);
		seed_medians(&o, &p);
		if (write_frontier(&o, &p) != LK_EXIT_OK)
			rc = LK_EXIT_FAIL;
	} else if (rc == LK_EXIT_OK) {
		rc = run_all(&o, &p);
		judge(&p);
		seed_medians(&o, &p);
		write_plots(&o, &p);
		const int judged = has_verdicts(&p);
		if (o.json) {
			print_json(stdout, p.runs, p.ndone, compare_cols, NCOLS(compare_cols), o.outdir, 0);
		} else {
			print_table(stdout, p.runs, p.ndone, compare_cols, NCOLS(compare_cols), judged ? "fell\tvs own" : "fell",
			            judged ? tail_fell_verdict : tail_fell, 0);
			if (o.verdict) {
				printf("\n%s", verdict_legend);
				print_verdict(stdout, &p, 0);
			}
		}
		if (write_report(&o, &p) != LK_EXIT_OK)
			rc = LK_EXIT_FAIL;
	}
	free_plan(&p);
	return rc;
}

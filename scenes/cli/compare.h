/* lcpkit compare's parts (cmd_compare.c: options, plan, tables and the command; compare_run.c: one run of a
 * scene; compare_verdict.c: the verdict against each engine's own solver; compare_frontier.c: the frontier
 * over budgets; compare_report.c: the plots, pictures and report.md): what they share. */
#ifndef LK_COMPARE_H
#define LK_COMPARE_H

#include "cli.h"
#include "verdict.h"
#include "scene.h"
#include "sim.h"

#include <stddef.h>
#include <stdio.h>

#define MAX_ITEMS 32
#define MAX_BUDGETS 16
#define MAX_SEEDS 16
/* the runs of each scene --verdict and the first look take by default, and that confirm a worse row: where an
 * outcome is noise alone, the same under both solvers, the band of a few runs is so narrow that the rule calls it
 * worse far more often over three runs than over six (docs/benchmarks.md, "auto against the engines' own solvers"
 * has the rates), and a suite judges a few hundred outcomes */
#define VERDICT_SEEDS 6
/* the most runs of one scene: every engine, solver and budget (run_all steps them side by side) */
#define MAX_RUNS_PER_SCENE (LK_ENGINE_COUNT * MAX_ITEMS * MAX_BUDGETS)

typedef struct run {
	const lk_scene *scene;
	const char *stem; /* the scene's part of the run's file names (scene_stems) */
	int scene_index;
	lk_engine engine;
	char solver[160];
	int budget; /* the work budget of every step (--iters, or one of --budgets) */
	int steps;
	/* per step */
	double *solve_ms, *step_ms, *res, *pen, *energy, *top_z, *top_drift_at, *work, *joint_err;
	int *iters;
	/* summary; NAN where the scene has no such thing */
	double solve_ms_mean; /* the solver time over the run per step: what a budget kept as a mean costs */
	double solve_ms_median, step_ms_median, res_median, res_max, max_penetration, energy_end, top_drift;
	double top_drift_max; /* stacks: the top's largest horizontal displacement while the stack stood */
	double iterations, work_median;
	double pen_rest;      /* median over the last second of each step's deepest penetration */
	double joint_err_max; /* largest joint error over the last second */
	double accel_err;     /* incline: worst relative error of the sliding boxes' acceleration */
	double creep;         /* incline: the farthest a box that should rest has moved */
	int sliding_end;      /* bodies set moving at the start that their friction stops only after the last second
	                       * began (the slide's fast boxes): their energy at the end is their speed */
	double standing;      /* stacks: seconds until the stack fell, the run's time if it never did */
	double budget_value;  /* budget, as a number for the columns */
	double outcome;       /* --frontier: the value its plot shows */
	int pareto;           /* --frontier: on the Pareto frontier of its scene and engine */
	int fell;
	double fell_at;
	double fallbacks;       /* steps the engine's own solver made instead (an lcpkit solve stopped on a guard) */
	int seed;             /* the scene's seed (scene.h): 0 the scene as built */
	/* --verdict: each outcome against the engine's own solver's at the same budget, and the solver time's ratio */
	int has_verdict;
	lk_verdict verdict[LK_OUTCOME_COUNT];
	lk_verdict_sign overall;
	double time_ratio;
	lk_pose *frames; /* nframes x nbodies */
	double *conv_res; /* residual against work at the chosen step */
	double *conv_work; /* in PGS sweeps: row updates / rows */
	int conv_n;
	char csv[512];
	struct run_live *live; /* while its steps are taken (run_begin .. run_end) */
} run;

/* A number column of the tables, summary.csv and the JSON; NAN reads '-' in a table, empty in a CSV and null
 * in the JSON. */
typedef struct column {
	const char *head; /* in the tables; NULL: in the CSV and the JSON only */
	const char *key;  /* in the CSV and the JSON */
	int width;
	const char *fmt;  /* in the tables */
	size_t at;        /* offsetof(run, the double) */
} column;

#define COL(head, key, width, fmt, field) {head, key, width, fmt, offsetof(run, field)}

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

typedef void (*tail_fn)(const run *r, char *buf, size_t n);

/* The command line; numbers are range-checked, names are checked by plan_runs. */
typedef struct compare_opts {
	const char *scene_list, *solver_list, *engine_arg, *outdir, *frames_arg;
	double seconds; /* simulated time per run; 0: each scene's default */
	double hz;
	int iters, json, pictures;
	int frontier;        /* --frontier: every run at every budget, outcome against solver time */
	const char *budgets_arg;
	int iters_given;
	int threads;         /* --threads: every lcpkit solver's sweeps on this many threads (0: as its spec says) */
	int cpu_clock;       /* --clock cpu: solver and step times in thread CPU time */
	int seeds;           /* --seeds: runs of each scene, seeds 0 .. seeds - 1 (scene.h) */
	int verdict;         /* --verdict: every solver against the engine's own, outcome by outcome */
} compare_opts;

/* The runs the options ask for, scene by scene (scene x engine x solver), and what they share. */
typedef struct compare_plan {
	int engines[LK_ENGINE_COUNT], nengines;
	char scene_specs[MAX_ITEMS][LK_CLI_SPEC_LEN], solver_specs[MAX_ITEMS][LK_CLI_SPEC_LEN];
	int nscenes, nsolvers;
	lk_scene *scenes[MAX_ITEMS];
	char stems[MAX_ITEMS][160]; /* scene_stems */
	run *runs;
	int nruns;           /* planned */
	int ndone;           /* finished, in order: fewer than nruns after a run failed */
	double frame_t[16];  /* --frames */
	int nframes;         /* 0: each scene's default picture times */
	double h;
	int budgets[MAX_BUDGETS], nbudgets; /* --frontier's budgets; else --iters alone */
	/* --seeds N > 1: each run again on its scene with seed=1 .. N-1; runs[i]'s are extra[i (N - 1) + k - 1] */
	int nseeds;
	lk_scene *seeded[MAX_ITEMS][MAX_SEEDS];
	run *extra;
	int nextra_done;
} compare_plan;

/* What a scene's runs share: simulated time, steps, the step whose problem is solved again for the plot of
 * RES against work, and the times of the pictures. */
typedef struct scene_times {
	double t;
	int steps, conv_step;
	double ft[16];
	int nf;
} scene_times;

double column_value(const run *r, const column *c);
void tail_fell(const run *r, char *buf, size_t n);
void verdict_words(const run *r, char *buf, size_t n);
void tail_fell_verdict(const run *r, char *buf, size_t n);
void tail_pareto(const run *r, char *buf, size_t n);
void print_table(FILE *f, const run *runs, int nruns, const column *cols, int ncols, const char *tail_head, tail_fn tail, int markdown);
int write_csv(const char *path, const run *runs, int nruns, const column *cols, int ncols, const char *tail_key, tail_fn tail);
void print_json(FILE *f, const run *runs, int nruns, const column *cols, int ncols, const char *outdir, int frontier);
int parse_budgets(const char *arg, int *out);
scene_times times_of(const compare_opts *o, const compare_plan *p, const lk_scene *sc);
void file_safe(char *s);
/* One run of r->scene, taken a step at a time so that the runs of a scene go side by side (run_all): run_begin
 * makes its simulation (nframes pictures at frame_t; at step conv_step, if any, the residual against iteration
 * of that step's problem), run_step takes step k (0-based), run_end summarizes and writes its CSV to outdir; each
 * returns 0, or -1 with err and the simulation gone. run_abort drops a run's simulation (free_run does too). */
int run_begin(run *r, double seconds, double h, const double *frame_t, int nframes, int conv_step, char *err,
              size_t esz);
int run_step(run *r, int k, char *err, size_t esz);
int run_end(run *r, const char *outdir, const char *csv_suffix, char *err, size_t esz);
void run_abort(run *r);
void free_run(run *r);
void write_plots(const compare_opts *o, const compare_plan *p);
int write_report(const compare_opts *o, const compare_plan *p);
run *seed_run(const compare_plan *p, int i, int k);
void judge(compare_plan *p);
void seed_medians(const compare_opts *o, compare_plan *p);
int has_verdicts(const compare_plan *p);
void print_verdict(FILE *f, const compare_plan *p, int markdown);
int write_verdict_csv(const char *path, const compare_plan *p);
int write_frontier(const compare_opts *o, compare_plan *p);
extern const column compare_cols[];
extern const int compare_ncols; /* its columns */
extern const char verdict_legend[];

#endif

/* What the benchmark suites (`lcpkit bench SUITE`) share: their output files and the options of the engine
 * suites (`lcpkit bench ode`, `lcpkit bench bullet`). */
#ifndef LCPKIT_BENCH_UTIL_H
#define LCPKIT_BENCH_UTIL_H

#include "cli_util.h"

#include <stdio.h>

/* The most scene specs and solver specs of lk_bench_engine_opts */
#define LK_BENCH_ENGINE_SPECS 8

typedef struct lk_bench_engine_opts {
	int quick;
	int steps, warmup, iterations;  /* -1: the suite's default, chosen after --quick is known */
	const char *out;
	char solvers[256];
	char scenes[256];
	/* filled by the parse: the specs of the --scenes and --solvers lists, in their order (split as every command
	 * splits them, lk_cli_split_specs: a spec's own parameters keep their commas) */
	char scene_specs[LK_BENCH_ENGINE_SPECS][LK_CLI_SPEC_LEN], solver_specs[LK_BENCH_ENGINE_SPECS][LK_CLI_SPEC_LEN];
	int nscenes, nsolvers;
} lk_bench_engine_opts;

/* The scenes of `lcpkit bench ode` and `lcpkit bench bullet`, from the scene library: ten boxes, and 1,000 and
 * 10,000 spheres in a pool ten layers deep */
#define LK_BENCH_ENGINE_SCENES "boxstack:n=10,bigpool:n=1000,width=2,bigpool:n=10000,width=6.4"
#define LK_BENCH_ENGINE_SCENES_QUICK "boxstack:n=10,bigpool:n=1000,width=2"

/* Parses --quick, --steps, --warmup, --iterations, --solvers, --scenes, --out, --help into o (which holds
 * the suite's defaults), fills steps/warmup/scenes not given from the quick or full defaults and splits the
 * scene and solver specs into scene_specs and solver_specs (each is checked where its scene or simulation is
 * made), 1 to LK_BENCH_ENGINE_SPECS of each. Returns -1 to go on, else the exit status to return. */
int lk_bench_engine_parse(const char *cmd, int argc, char **argv, lk_bench_engine_opts *o, void (*usage)(FILE *),
                          int warmup_quick);
/* The problem a scene's simulation in `engine` solves at step `step` (1-based), run with `solver` at
 * `iterations` per step: row form, lambda = its warm start; NULL with the reason in err. */
struct lk_problem;
struct lk_problem *lk_bench_capture(const char *scene_spec, int engine, const char *solver, int iterations,
                                    int step, char *err, size_t esz);
/* Splits a comma list in place; returns the number of items (at most max). */
int lk_bench_split(char *list, char **items, int max);

/* One CSV file of a suite: the caller sets name (the file name inside the output folder); path and f are
 * filled when it is opened. */
typedef struct lk_bench_csv {
	const char *name;
	char path[4096];
	FILE *f;
} lk_bench_csv;

/* Creates the output folder dir with its parents (mkdir -p); 0 on success, else -1 with
 * "lcpkit CMD: cannot create directory 'DIR': REASON" on stderr. */
int lk_bench_make_out_dir(const char *cmd, const char *dir);
/* Creates the output folder dir and opens dir/NAME of each of the n files for writing (truncating it), in
 * order. 0 when all are open; else -1 with "lcpkit CMD: cannot write 'PATH': REASON" (or the folder's message)
 * on stderr, and the files opened before the failure closed again (every f NULL). */
int lk_bench_open_csvs(const char *cmd, const char *dir, lk_bench_csv *csv, int n);
/* Closes those of the n files that are open. */
void lk_bench_close_csvs(lk_bench_csv *csv, int n);

#endif

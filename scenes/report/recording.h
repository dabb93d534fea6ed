/* Recording solver problems from running scenes and replaying them against golden results. */
#ifndef LCPKIT_RECORDING_H
#define LCPKIT_RECORDING_H

#include "scene.h"
#include "sim.h"

#include <stdio.h>

typedef struct lk_recording_def {
	const lk_scene *scene;
	lk_engine engine;
	const char *solver;  /* runs the scene; an lcpkit spec also gives each file its solution */
	int iterations;
	int first, last;     /* steps to record, 1-based, inclusive */
	const char *dir;     /* created if missing */
} lk_recording_def;

/* Runs the scene and writes DIR/step-NNNNN.lkp for each recorded step and DIR/manifest.txt. */
lk_status lk_record(const lk_recording_def *def, int *written, char *err, size_t err_size);

typedef struct lk_regress_opts {
	const char *dir;
	const char *solvers;  /* comma list of SPEC or LABEL@SPEC (the golden file is keyed by LABEL) */
	int update;           /* rewrite DIR/golden.txt (and DIR/golden/) from this run */
	int sweeps;           /* RES is compared after this many iterations (default 20) */
	double tol;           /* iterations are counted to RES < tol (default 1e-6) */
	int max_iterations;   /* cap of the iterations-to-tolerance solve (default 5000) */
	int peer_siconos;     /* also solve each problem's LCP with Siconos's solvers and report them */
	int json;
	const char *junit;    /* also write the outcome as JUnit XML to this file: one test case per problem file
	                       * and solver, one suite per solver (NULL: none) */
	FILE *out;            /* the report (stdout) */
} lk_regress_opts;

typedef struct lk_regress_summary {
	int problems;         /* files replayed */
	int unreadable;       /* files that could not be read (reported, skipped) */
	int compared;         /* (problem, solver) pairs with a golden entry */
	int regressions;
	int improvements;
	int missing;          /* pairs without a golden entry */
} lk_regress_summary;

lk_regress_opts lk_default_regress_opts(void);
/* Replays every problem in DIR with every solver and compares with DIR/golden.txt. Returns LK_OK when it
 * ran (see the summary), an error for bad options or an unreadable DIR. Without update nothing in DIR is
 * changed. */
lk_status lk_regress(const lk_regress_opts *opts, lk_regress_summary *summary, char *err, size_t err_size);

#endif

/* lcpkit solve's command line, parsed without touching any file: apart from the command so that the fuzz
 * target (tests/fuzz/fuzz_solve_args.c) builds it alone, without the peers and the report. */
#include "cli.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit solve FILE... [--solver SPEC] [--iters N] [--budget B] [--tol X] [--merit M] [--cold]\n"
	        "                            [--threads N] [--history FILE.csv] [--out FILE.csv [--out-w]] [--json]\n"
	        "                            [--peer siconos [--peer-iters N] [--peer-memory MB]] [--repeat N] [--clock cpu|wall]\n\n"
	        "Solves each problem file (docs/problem-format.md) and prints rows, bodies, iterations, RES and\n"
	        "theta at start and end, time and the stop reason.\n\n"
	        "  --solver SPEC   NAME[:key=value,...]: pgs, psor[:w=1.3], amgs[:alpha=A,gamma=G,omega=D|E],\n"
	        "                  amgs-dense, amsor[:w=W], pgs-sm[:kpgs=25,ksm=5,reg=G], newton-minmap,\n"
	        "                  newton-fischer[:strategy=perturbation], nncg, apgd[:metric=diag|identity],\n"
	        "                  mprgp[:metric=identity|diag], ipm, gsp, esp, pgs:order=ipp|cp-x|...,\n"
	        "                  pgs:coarse=2\n"
	        "                  (default pgs)\n"
	        "  --iters N       iteration limit (default: the solver's)\n"
	        "  --budget B      work limit in sweep-equivalents, the same for every method (docs/solvers.md)\n"
	        "  --tol X         stop when the merit < X (absolute rule; the merit RES unless --merit says)\n"
	        "  --merit M       the merit of --tol: res (default), theta, fischer, modified, or fc3d, Siconos's\n"
	        "                  relative error (docs/solvers.md, \"Siconos's error\"): with it --tol means what\n"
	        "                  Siconos's tolerance means\n"
	        "  --cold          start from lambda = 0 instead of the file's warm start\n"
	        "  --threads N     sweep on N threads in the part order (the same result run after run; order=colour\n"
	        "                  in the spec: the same on any N; docs/solvers.md)\n"
	        "  --history F     write RES, theta and the Fischer merit per iteration to CSV file F\n"
	        "  --out F         write the solution to CSV file F: row,lambda (one problem file)\n"
	        "  --out-w         with --out, also w = A lambda + q: row,lambda,w\n"
	        "  --json          one JSON object per file on stdout\n"
	        "  --peer siconos  also solve each contact problem (every row a normal row and its pair of friction rows)\n"
	        "                  with Siconos's fc3d_nsgs and fc3d_nsn_ac (a problem of the plane, one friction row\n"
	        "                  a normal row: fc2d_nsgs and fc2d_cpg), every solver from zero, and print them\n"
	        "                  beside lcpkit's: iterations, Siconos's error of each answer, time (a call under\n"
	        "                  0.2 ms timed in batches of calls on both sides, docs/solvers.md). The merit is\n"
	        "                  fc3d and the tolerance --tol (default 1e-8) for every solver\n"
	        "  --peer-iters N  Siconos's iteration limit (default 10000)\n"
	        "  --peer-memory MB  the most memory Siconos's solvers may take (default half the machine's): each\n"
	        "                  runs in a process of its own, which gives back what they keep (its Newton keeps\n"
	        "                  memory every iteration); one that needs more fails with its row saying so\n"
	        "                  With --peer, --solver may be given up to 8 times: each lcpkit solver in the table\n"
	        "  --repeat N      run every solver N times; the time is the minimum, with the spread of the runs\n"
	        "  --clock C       the clock of the times: wall (default) or cpu (the thread's CPU time)\n\n"
	        "Exit status: 0 when every file was solved and met --tol (or no --tol was given and the method\n"
	        "stopped by its own rules or its budget); 3 when a --tol was not met; 4 when a stop reason is a\n"
	        "failure (bad-diagonal, local-minimum, non-descent, nonfinite, diverged); 1 when a file could not be\n"
	        "read or solved, 2 for a usage error. With several files the largest status.\n");
}
/* A spec with the command's options applied: -1, or the exit status of a usage error (printed) */
static int solver_config(const char *spec, int iters, int threads, double budget, double tol, int merit, int cold,
                         lk_solver_config *cfg)
{
	char err[512];
	if (lk_config_parse(spec, cfg, err, sizeof err) != LK_OK) {
		lk_cli_error("solve", "%s", err);
		return LK_EXIT_USAGE;
	}
	if (iters > 0)
		cfg->max_iterations = iters;
	if (threads > 0) {
		cfg->threads = threads;
		/* threads > 1 needs the natural, part or colour order and box friction: a spec that chose otherwise */
		if (lk_config_validate(cfg, err, sizeof err) != LK_OK) {
			lk_cli_error("solve", "--threads %d with '%s': %s", threads, spec, err);
			return LK_EXIT_USAGE;
		}
	}
	if (budget > 0)
		cfg->budget = budget;
	if (tol > 0) {
		cfg->tol_abs = tol;
		cfg->merit = merit >= 0 ? (lk_merit)merit : LK_MERIT_RES;
	}
	if (cold)
		cfg->warm_start = 0;
	return -1;
}

/* What lk_solve_parse_args gathers before it makes the configurations. */
typedef struct solve_parse {
	lk_solve_args *out;
	const char *spec; /* the first --solver */
	int nspecs;
} solve_parse;

/* --solver, up to LK_SOLVE_MORE_SPECS + 1 times */
static int add_solver(void *arg, const char *v)
{
	solve_parse *sp = arg;
	if (sp->nspecs == LK_SOLVE_MORE_SPECS + 1) {
		lk_cli_error("solve", "at most %d --solver options", LK_SOLVE_MORE_SPECS + 1);
		return -1;
	}
	if (sp->nspecs == 0)
		sp->spec = v;
	else
		sp->out->more_spec[sp->nspecs - 1] = v;
	++sp->nspecs;
	return 1;
}

/* a problem file */
static int add_file(void *arg, const char *v)
{
	lk_solve_args *out = arg;
	out->files[out->nfiles++] = v;
	return 1;
}

int lk_solve_parse_args(int argc, char **argv, lk_solve_args *out)
{
	int iters = 0, cold = 0, threads = 0, merit = -1, peer = -1, clock = -1;
	double tol = 0, budget = 0, peer_memory = 0;
	memset(out, 0, sizeof *out);
	const char **files = calloc((size_t)argc + 1, sizeof *files);
	if (!files)
		return LK_EXIT_FAIL;
	out->files = files;
	solve_parse sp = {out, "pgs", 0};
	static const char *const merits[] = {"res", "theta", "fischer", "modified", "fc3d", NULL};
	static const char *const peers[] = {"siconos", NULL}, *const clocks[] = {"cpu", "wall", NULL};
	const lk_cli_option opts[] = {
		LK_CLI_OPT_CALL("--solver", &sp, add_solver, NULL),
		LK_CLI_OPT_INT("--iters", &iters, 1, 100000000),
		LK_CLI_OPT_DOUBLE("--tol", &tol, 0, INFINITY, "a non-negative number"),
		LK_CLI_OPT_INT("--threads", &threads, 1, 64),
		LK_CLI_OPT_DOUBLE("--budget", &budget, DBL_MIN, INFINITY, "a positive number of sweep-equivalents"),
		LK_CLI_OPT_STRING("--out", &out->out_path),
		LK_CLI_OPT_FLAG("--out-w", &out->out_w),
		LK_CLI_OPT_STRING("--history", &out->history_path),
		LK_CLI_OPT_FLAG("--json", &out->json),
		LK_CLI_OPT_FLAG("--cold", &cold),
		LK_CLI_OPT_CHOICE("--merit", &merit, merits),
		LK_CLI_OPT_CHOICE("--peer", &peer, peers),
		LK_CLI_OPT_INT("--peer-iters", &out->peer_iters, 1, 100000000),
		LK_CLI_OPT_DOUBLE("--peer-memory", &peer_memory, 1, 1e9, "a number of megabytes, at least 1"),
		LK_CLI_OPT_INT("--repeat", &out->repeat, 1, 1000),
		LK_CLI_OPT_CHOICE("--clock", &clock, clocks),
		LK_CLI_OPT_END};
	int status = lk_cli_parse("solve", argc, argv, 1, opts, usage, add_file, out);
	if (status >= 0)
		return status;
	out->peer = peer == 0;
	if (clock >= 0)
		lk_set_stats_clock(clock == 0 ? LK_CLOCK_THREAD_CPU : LK_CLOCK_WALL);
	const char *spec = sp.spec;
	const int nspecs = sp.nspecs;
	if (out->nfiles == 0) {
		lk_cli_error("solve", "no problem file given (see lcpkit solve --help)");
		return LK_EXIT_USAGE;
	}
	if (out->history_path && out->nfiles > 1) {
		lk_cli_error("solve", "--history takes one problem file");
		return LK_EXIT_USAGE;
	}
	if (out->out_path && out->nfiles > 1) {
		lk_cli_error("solve", "--out takes one problem file");
		return LK_EXIT_USAGE;
	}
	if ((out->peer_iters || peer_memory > 0) && !out->peer) {
		lk_cli_error("solve", "--peer-iters and --peer-memory go with --peer");
		return LK_EXIT_USAGE;
	}
	out->peer_memory = peer_memory > 0 ? (size_t)(peer_memory * 1048576.0) : 0;
	if (merit >= 0 && !(tol > 0) && !out->peer) {
		lk_cli_error("solve", "--merit goes with --tol or --peer");
		return LK_EXIT_USAGE;
	}
	if (out->peer) {
		/* every solver from zero, judged and stopped by Siconos's error unless --merit says otherwise */
		cold = 1;
		if (!(tol > 0))
			tol = 1e-8;
		if (merit < 0)
			merit = LK_MERIT_FC3D;
		if (!out->peer_iters)
			out->peer_iters = 10000;
	}
	if (!out->repeat)
		out->repeat = 1;
	if (out->out_w && !out->out_path) {
		lk_cli_error("solve", "--out-w goes with --out");
		return LK_EXIT_USAGE;
	}
	if (nspecs > 1 && !out->peer) {
		lk_cli_error("solve", "several --solver options go with --peer");
		return LK_EXIT_USAGE;
	}
	out->tol = tol;
	lk_solver_config cfg;
	int rc = solver_config(spec, iters, threads, budget, tol, merit, cold, &cfg);
	for (int k = 0; rc < 0 && k + 1 < nspecs; ++k)
		rc = solver_config(out->more_spec[k], iters, threads, budget, tol, merit, cold, &out->more_cfg[k]);
	if (rc >= 0)
		return rc;
	out->nmore = nspecs > 1 ? nspecs - 1 : 0;
	if (lk_config_format(&cfg, out->canon, sizeof out->canon) != LK_OK)
		snprintf(out->canon, sizeof out->canon, "%s", spec);
	out->cfg = cfg;
	out->spec = spec;
	return -1;
}

/* lcpkit regress: replay recorded problems with each solver against golden results; non-zero on regression. */
#include "cli.h"
#include "recording.h"

#include <float.h>
#include <math.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit regress DIR [--solvers LIST] [--update] [--peer siconos] [--sweeps N] [--tol X] [--json]\n"
	        "                          [--junit FILE]\n\n"
	        "Replays every problem file in DIR (from `lcpkit record` or lk_problem_write) with each solver and\n"
	        "compares with DIR/golden.txt: iterations to RES < tol (10%% slack), RES after N iterations (25%%\n"
	        "slack), and lambda (1e-5 relative) where the solution is unique (no friction rows, A positive\n"
	        "definite). Exit status: 0 no regression, 1 a regression or an unreadable file, 2 bad usage.\n"
	        "Nothing in DIR changes unless --update, which rewrites the golden results from this run.\n\n"
	        "  --solvers LIST  comma list of solver specs, or LABEL@SPEC to check a setting against LABEL's\n"
	        "                  golden results (default pgs,psor,amgs,pgs-sm,gsp)\n"
	        "  --peer siconos  also solve each problem's LCP rows with Siconos's lcp_pgs, lcp_psor,\n"
	        "                  lcp_newton_FB and lcp_lexicolemke and print their iterations, time and error\n"
	        "  --sweeps N      the fixed iteration budget of the RES comparison (default 20)\n"
	        "  --tol X         the RES tolerance of the iteration count (default 1e-6)\n"
	        "  --junit FILE    also write the outcome as JUnit XML for CI systems: one test suite per solver, one\n"
	        "                  test case per problem file, a regression a failure with its RES, budget and stop\n"
	        "                  reasons, an unreadable file an error, a missing golden result a skipped case\n");
}

int lk_cmd_regress(int argc, char **argv)
{
	lk_regress_opts o = lk_default_regress_opts();
	int peer = -1;
	static const char *const peers[] = {"siconos", NULL};
	const lk_cli_option opts[] = {
		LK_CLI_OPT_FLAG("--update", &o.update),
		LK_CLI_OPT_FLAG("--json", &o.json),
		LK_CLI_OPT_STRING("--solvers", &o.solvers),
		LK_CLI_OPT_STRING("--junit", &o.junit),
		LK_CLI_OPT_CHOICE("--peer", &peer, peers),
		LK_CLI_OPT_INT("--sweeps", &o.sweeps, 1, 1000000),
		LK_CLI_OPT_DOUBLE("--tol", &o.tol, DBL_MIN, INFINITY, NULL),
		LK_CLI_OPT_END};
	int status = lk_cli_parse("regress", argc, argv, 1, opts, usage, lk_cli_one_argument, &o.dir);
	if (status >= 0)
		return status;
	o.peer_siconos = peer == 0;
	if (!o.dir) {
		lk_cli_error("regress", "no directory given (see lcpkit regress --help)");
		return LK_EXIT_USAGE;
	}
	lk_regress_summary sum;
	char err[512];
	lk_status st = lk_regress(&o, &sum, err, sizeof err);
	if (st == LK_ERR_PARSE) {
		lk_cli_error("regress", "%s", err);
		return LK_EXIT_USAGE;
	}
	if (st != LK_OK) {
		lk_cli_error("regress", "%s", err);
		return LK_EXIT_FAIL;
	}
	return (sum.regressions > 0 || sum.unreadable > 0) ? LK_EXIT_FAIL : LK_EXIT_OK;
}

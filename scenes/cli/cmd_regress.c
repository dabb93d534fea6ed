/* lcpkit regress: replay recorded problems with each solver against golden results; non-zero on regression. */
#include "cli.h"
#include "recording.h"

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
	for (int i = 1; i < argc; ++i) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return LK_EXIT_OK;
		} else if (!strcmp(a, "--update")) {
			o.update = 1;
		} else if (!strcmp(a, "--json")) {
			o.json = 1;
		} else if (!strcmp(a, "--solvers")) {
			if (!(v = lk_cli_value("regress", argc, argv, &i)))
				return LK_EXIT_USAGE;
			o.solvers = v;
		} else if (!strcmp(a, "--junit")) {
			if (!(v = lk_cli_value("regress", argc, argv, &i)))
				return LK_EXIT_USAGE;
			o.junit = v;
		} else if (!strcmp(a, "--peer")) {
			if (!(v = lk_cli_value("regress", argc, argv, &i)))
				return LK_EXIT_USAGE;
			if (strcmp(v, "siconos")) {
				lk_cli_error("regress", "unknown peer '%s' (choose from siconos)", v);
				return LK_EXIT_USAGE;
			}
			o.peer_siconos = 1;
		} else if (!strcmp(a, "--sweeps")) {
			if (!(v = lk_cli_value("regress", argc, argv, &i)) || !lk_cli_int(v, 1, 1000000, &o.sweeps)) {
				lk_cli_error("regress", "--sweeps needs a whole number in [1, 1000000]");
				return LK_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--tol")) {
			if (!(v = lk_cli_value("regress", argc, argv, &i)) || !lk_cli_double(v, &o.tol) || o.tol <= 0) {
				lk_cli_error("regress", "--tol needs a positive number");
				return LK_EXIT_USAGE;
			}
		} else if (a[0] == '-') {
			lk_cli_error("regress", "unknown option '%s' (see lcpkit regress --help)", a);
			return LK_EXIT_USAGE;
		} else if (!o.dir) {
			o.dir = a;
		} else {
			lk_cli_error("regress", "one directory only (got '%s' and '%s')", o.dir, a);
			return LK_EXIT_USAGE;
		}
	}
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

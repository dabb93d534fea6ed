/* The lcpkit command: its subcommands, one file each (cmd_NAME.c); the helpers they share are cli_util.h. */
#ifndef LCPKIT_CLI_H
#define LCPKIT_CLI_H

#include "cli_util.h"
#include "lcpkit/lcpkit.h"

int lk_cmd_compare(int argc, char **argv);
int lk_cmd_solve(int argc, char **argv);
/* The command line of `lcpkit solve`, parsed without touching any file (tests/fuzz drives it). files point
 * into argv; the caller frees files (also when the parse fails). */
/* the --solver specs `solve --peer` runs beside the first */
#define LK_SOLVE_MORE_SPECS 7
typedef struct lk_solve_args {
	const char **files;
	int nfiles;
	const char *history_path;
	const char *out_path;   /* --out: the solution as CSV */
	int out_w;              /* --out-w: with w = A lambda + q */
	double tol;             /* --tol, 0 if not given */
	int json;
	int peer;               /* --peer siconos */
	int peer_iters;         /* --peer-iters: Siconos's iteration limit */
	size_t peer_memory;     /* --peer-memory in bytes, 0 if not given */
	int repeat;             /* --repeat: runs of every solver (the minimum time is reported, and the spread) */
	lk_solver_config cfg;
	char canon[256];
	const char *spec;       /* --solver as given */
	int nmore;              /* with --peer: the further --solver specs, run beside the first */
	const char *more_spec[LK_SOLVE_MORE_SPECS];
	lk_solver_config more_cfg[LK_SOLVE_MORE_SPECS];
} lk_solve_args;
/* -1: parsed, go on; otherwise the exit status (--help printed, or a usage error printed). */
int lk_solve_parse_args(int argc, char **argv, lk_solve_args *out);
int lk_cmd_record(int argc, char **argv);
int lk_cmd_regress(int argc, char **argv);
int lk_cmd_fclib(int argc, char **argv);
int lk_cmd_gen(int argc, char **argv);
int lk_cmd_bench(int argc, char **argv);
int lk_cmd_view(int argc, char **argv);

#endif

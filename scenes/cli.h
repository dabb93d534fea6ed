/* The lcpkit command: subcommands and the helpers they share. */
#ifndef LCPKIT_CLI_H
#define LCPKIT_CLI_H

#include "lcpkit/lcpkit.h"

#include <stdio.h>

/* Exit statuses of every subcommand. */
enum { LK_EXIT_OK = 0, LK_EXIT_FAIL = 1, LK_EXIT_USAGE = 2 };

int lk_cmd_compare(int argc, char **argv);
int lk_cmd_solve(int argc, char **argv);
/* The command line of `lcpkit solve`, parsed without touching any file (tests/fuzz drives it). files point
 * into argv; the caller frees files (also when the parse fails). */
typedef struct lk_solve_args {
	const char **files;
	int nfiles;
	const char *history_path;
	int json;
	lk_solver_config cfg;
	char canon[256];
} lk_solve_args;
/* -1: parsed, go on; otherwise the exit status (--help printed, or a usage error printed). */
int lk_solve_parse_args(int argc, char **argv, lk_solve_args *out);
int lk_cmd_record(int argc, char **argv);
int lk_cmd_regress(int argc, char **argv);
int lk_cmd_fclib(int argc, char **argv);
int lk_cmd_gen(int argc, char **argv);
int lk_cmd_bench(int argc, char **argv);
int lk_cmd_view(int argc, char **argv);
int lk_bench_orderings(int argc, char **argv);
int lk_bench_pgs_sm(int argc, char **argv);
int lk_bench_newton(int argc, char **argv);
int lk_bench_bullet(int argc, char **argv);
int lk_bench_ode(int argc, char **argv);
int lk_bench_kernel(int argc, char **argv);
int lk_bench_engines(int argc, char **argv);
int lk_bench_paper(int argc, char **argv);
int lk_bench_amgs(int argc, char **argv);

/* A benchmark suite of `lcpkit bench NAME`: run gets the arguments after NAME. */
typedef struct lk_bench_suite {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
} lk_bench_suite;

/* --- helpers ------------------------------------------------------------------------------------- */

/* 1 when f is a terminal (progress bars go to stderr only then). */
int lk_cli_is_tty(FILE *f);
/* Draws "label [#####     ] done/total" on stderr when it is a terminal; done == total ends the line. */
void lk_cli_progress(const char *label, int done, int total);
/* Strict number parsing: the whole string, finite, in range. Return 1 on success. */
int lk_cli_int(const char *s, int lo, int hi, int *out);
int lk_cli_double(const char *s, double *out);
/* Prints s as a JSON string literal (with quotes). */
void lk_cli_json_string(FILE *f, const char *s);
/* Prints a double as JSON (null for NaN or Inf). */
void lk_cli_json_number(FILE *f, double x);
/* mkdir -p; returns 0 on success, else -1 with errno set. */
int lk_cli_mkdirs(const char *path);
/* Median of n values (reorders v). */
double lk_cli_median(double *v, int n);
/* Prints one line "lcpkit CMD: message" to stderr. */
void lk_cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The option value after argv[*i] (advancing *i), or NULL with an error printed. */
const char *lk_cli_value(const char *cmd, int argc, char **argv, int *i);
/* For a command whose first argument is a word (a suite, a kind): -1 when argv[1] is one to go on with; else
 * the exit status after printing usage to stdout (--help, -h: LK_EXIT_OK) or to stderr (none: LK_EXIT_USAGE). */
int lk_cli_first_word(int argc, char **argv, void (*usage)(FILE *));

#endif

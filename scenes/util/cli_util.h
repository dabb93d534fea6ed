/* What every part of the lcpkit command shares (the commands, the benchmark suites, the viewer, the recording):
 * exit statuses, strict number parsing, JSON output, progress bars, error lines. It sits below all of them
 * so that none of them needs the command itself. */
#ifndef LCPKIT_CLI_UTIL_H
#define LCPKIT_CLI_UTIL_H

#include <stdio.h>

/* Exit statuses of every subcommand; `lcpkit solve` adds two of its own (docs/solvers.md, "Exit status"):
 * a tolerance that was asked for and not met, and a stop reason that is a failure. */
enum { LK_EXIT_OK = 0, LK_EXIT_FAIL = 1, LK_EXIT_USAGE = 2, LK_EXIT_TOL_UNMET = 3, LK_EXIT_SOLVER_FAILED = 4 };

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
/* Median of n values; sorts v ascending. */
double lk_cli_median(double *v, int n);
/* The median, the minimum and the quartiles of v[0..n) (sorts v, as lk_cli_median does; NaN for n = 0):
 * what the benchmarks report of a series of timings, the minimum and the spread beside the median. */
typedef struct lk_cli_spread {
	double median, min, q25, q75;
} lk_cli_spread;
lk_cli_spread lk_cli_spread_of(double *v, int n);
/* "Q25-Q75" of a spread, each times scale with three decimals, into buf; returns buf. */
const char *lk_cli_quartiles(const lk_cli_spread *s, double scale, char *buf, size_t size);
/* Prints one line "lcpkit CMD: message" to stderr. */
void lk_cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* LCPKIT_QUIET=1, lcpkit's one switch for its notes (the adapters' and the command's). */
int lk_cli_quiet(void);
/* Prints one line "lcpkit CMD: note: message" to stderr, unless LCPKIT_QUIET=1: what a command did other
 * than asked or than the input said outright (a setting it could not honour, a reading it chose). */
void lk_cli_note(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Splits a comma list of scene or solver specs whose parameters also use commas: a piece with '=' but no ':'
 * or '@' belongs to the spec before it ("pool1:dim=3,n=1000,pool2" -> "pool1:dim=3,n=1000" and "pool2";
 * "own,own@pool=2" -> "own" and "own@pool=2"). Returns the number of specs, or -1 when there are more than
 * max. */
#define LK_CLI_SPEC_LEN 160
int lk_cli_split_specs(const char *list, char out[][LK_CLI_SPEC_LEN], int max);
/* One option of a command for lk_cli_parse: its name, what its value is and where it goes. */
typedef enum lk_cli_kind {
	LK_CLI_FLAG,   /* no value: *(int *)out = 1 */
	LK_CLI_INT,    /* a whole number in [lo, hi]: *(int *)out */
	LK_CLI_DOUBLE, /* a finite number in [lo, hi]: *(double *)out */
	LK_CLI_STRING, /* any text: *(const char **)out, the argument itself */
	LK_CLI_CHOICE, /* one of choices (NULL-terminated): *(int *)out, its index */
	LK_CLI_CALL    /* call(out, value): 1 taken, 0 a bad value, -1 refused with its own message printed */
} lk_cli_kind;
typedef struct lk_cli_option {
	const char *name; /* "--iters"; NULL ends a table */
	lk_cli_kind kind;
	void *out;
	double lo, hi;                /* LK_CLI_INT, LK_CLI_DOUBLE: the range, both ends allowed */
	const char *const *choices;   /* LK_CLI_CHOICE */
	int (*call)(void *out, const char *value); /* LK_CLI_CALL */
	const char *what;             /* the value as the error names it ("a positive number"); NULL: from the kind */
} lk_cli_option;
/* A table's rows (designated, so that each kind names only what it uses; `1 ? p : (T *)0` makes the compiler
 * check that p points to the type the kind writes). */
#define LK_CLI_INT_PTR(p) (1 ? (p) : (int *)0)
#define LK_CLI_OPT_FLAG(n, p) {.name = (n), .kind = LK_CLI_FLAG, .out = LK_CLI_INT_PTR(p)}
#define LK_CLI_OPT_INT(n, p, min, max) {.name = (n), .kind = LK_CLI_INT, .out = LK_CLI_INT_PTR(p), .lo = (min), .hi = (max)}
#define LK_CLI_OPT_DOUBLE(n, p, min, max, w) \
	{.name = (n), .kind = LK_CLI_DOUBLE, .out = (1 ? (p) : (double *)0), .lo = (min), .hi = (max), .what = (w)}
#define LK_CLI_OPT_STRING(n, p) {.name = (n), .kind = LK_CLI_STRING, .out = (1 ? (p) : (const char **)0)}
#define LK_CLI_OPT_CHOICE(n, p, names) {.name = (n), .kind = LK_CLI_CHOICE, .out = LK_CLI_INT_PTR(p), .choices = (names)}
#define LK_CLI_OPT_CALL(n, p, fn, w) {.name = (n), .kind = LK_CLI_CALL, .out = (p), .call = (fn), .what = (w)}
#define LK_CLI_OPT_END {.name = NULL}
/* Parses argv[first..argc) against the table opts: "--help" and "-h" print usage to stdout; an option takes
 * the next argument as its value; any other argument starting with '-' is refused, and the rest go to
 * positional(ctx, arg) (1 taken, 0 refused as unexpected, -1 refused with its own message printed; NULL:
 * none is expected). -1 when everything was taken; else the exit status, after one line "lcpkit CMD: ..."
 * on stderr for a usage error (LK_EXIT_USAGE) or usage on stdout for --help (LK_EXIT_OK). */
int lk_cli_parse(const char *cmd, int argc, char **argv, int first, const lk_cli_option *opts,
                 void (*usage)(FILE *), int (*positional)(void *ctx, const char *arg), void *ctx);

/* lk_cli_parse's positional for a command of one argument: *(const char **)ctx = arg, a second refused. */
int lk_cli_one_argument(void *ctx, const char *arg);

/* For a command whose first argument is a word (a suite, a kind): -1 when argv[1] is one to go on with; else
 * the exit status after printing usage to stdout (--help, -h: LK_EXIT_OK) or to stderr (none: LK_EXIT_USAGE). */
int lk_cli_first_word(int argc, char **argv, void (*usage)(FILE *));

#endif

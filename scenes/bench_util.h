/* Options shared by the engine benchmark suites (`lcpkit bench ode`, `lcpkit bench bullet`). */
#ifndef LCPKIT_BENCH_UTIL_H
#define LCPKIT_BENCH_UTIL_H

#include <stdio.h>

typedef struct lk_bench_engine_opts {
	int quick;
	int steps, warmup, iterations;  /* -1: the suite's default, chosen after --quick is known */
	const char *out;
	char solvers[256];
	char scenes[256];
} lk_bench_engine_opts;

/* Parses --quick, --steps, --warmup, --iterations, --solvers, --scenes, --out, --help into o (which holds
 * the suite's defaults), fills steps/warmup/scenes not given from the quick or full defaults, and checks the
 * scene names (stack10, pool1k, pool10k). Returns -1 to go on, else the exit status to return. */
int lk_bench_engine_parse(const char *cmd, int argc, char **argv, lk_bench_engine_opts *o, void (*usage)(FILE *),
                          int warmup_quick);
/* Splits a comma list in place; returns the number of items (at most max). */
int lk_bench_split(char *list, char **items, int max);

#endif

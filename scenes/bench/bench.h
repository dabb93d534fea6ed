/* The benchmark suites of `lcpkit bench SUITE`: each gets the arguments after SUITE and returns an exit
 * status. solvers/ holds the suites on generated problems (lcpkit's solvers alone), engines/ those that run
 * scenes in ODE and Bullet. */
#ifndef LCPKIT_BENCH_H
#define LCPKIT_BENCH_H

int lk_bench_orderings(int argc, char **argv);
int lk_bench_pgs_sm(int argc, char **argv);
int lk_bench_newton(int argc, char **argv);
int lk_bench_bullet(int argc, char **argv);
int lk_bench_ode(int argc, char **argv);
int lk_bench_kernel(int argc, char **argv);
int lk_bench_engines(int argc, char **argv);
int lk_bench_paper(int argc, char **argv);
int lk_bench_amgs(int argc, char **argv);
int lk_bench_work(int argc, char **argv);
int lk_bench_threads(int argc, char **argv);
int lk_bench_phase(int argc, char **argv);

/* A benchmark suite of `lcpkit bench NAME`: run gets the arguments after NAME. */
typedef struct lk_bench_suite {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
} lk_bench_suite;

#endif

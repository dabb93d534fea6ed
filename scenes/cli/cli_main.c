/* lcpkit: compare, solve, record and benchmark contact and joint solvers. */
#include "cli.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* Siconos (the reference peer) brings in OpenBLAS, whose threaded build starts a worker thread when it is
 * loaded that spins for about a tenth of a second waiting for work lcpkit never gives it: on a two-core
 * machine that takes a core from whatever lcpkit times or runs on its own threads in that time (a short solve
 * on two threads took many times its own length). lcpkit calls BLAS only through Siconos's reference
 * solves, which are small: BLAS is set to one thread and the idle worker is stopped, through OpenBLAS's own
 * entry points where it is the BLAS loaded (looked up, so that another BLAS needs nothing). A value of
 * OPENBLAS_NUM_THREADS the user set is respected. */
static void single_threaded_blas(void)
{
	if (getenv("OPENBLAS_NUM_THREADS"))
		return;
	/* POSIX dlsym returns functions as void *; the memcpy is the conversion ISO C leaves to it */
	void *f = dlsym(RTLD_DEFAULT, "openblas_set_num_threads"), *g = dlsym(RTLD_DEFAULT, "blas_thread_shutdown_");
	void (*set_threads)(int) = NULL;
	int (*shutdown)(void) = NULL;
	if (f)
		memcpy(&set_threads, &f, sizeof f);
	if (g)
		memcpy(&shutdown, &g, sizeof g);
	if (set_threads)
		set_threads(1);
	if (set_threads && shutdown)
		shutdown();
}

typedef struct command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
} command;

static const command commands[] = {
	{"compare", "run scenes in ODE and Bullet under several solvers, side by side", lk_cmd_compare},
	{"solve", "solve problem files with a chosen solver", lk_cmd_solve},
	{"record", "record the solver problems a running scene produces", lk_cmd_record},
	{"regress", "replay recorded problems against golden results", lk_cmd_regress},
	{"fclib", "export contact problems to FCLIB, import FCLIB problems", lk_cmd_fclib},
	{"gen", "generate a test problem file", lk_cmd_gen},
	{"bench", "run a benchmark suite", lk_cmd_bench},
	{"view", "watch a scene under two solvers side by side, live (needs a display)", lk_cmd_view},
};
#define NCOMMANDS ((int)(sizeof commands / sizeof commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: lcpkit COMMAND [options]   (lcpkit COMMAND --help for its options)\n\ncommands:\n");
	for (int i = 0; i < NCOMMANDS; ++i)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nlcpkit %d.%d.%d\n", LK_VERSION_MAJOR, LK_VERSION_MINOR, LK_VERSION_PATCH);
}

int main(int argc, char **argv)
{
	single_threaded_blas();
	if (argc < 2) {
		usage(stderr);
		return LK_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return LK_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("lcpkit %d.%d.%d\n", LK_VERSION_MAJOR, LK_VERSION_MINOR, LK_VERSION_PATCH);
		return LK_EXIT_OK;
	}
	for (int i = 0; i < NCOMMANDS; ++i)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "lcpkit: unknown command '%s' (choose from", argv[1]);
	for (int i = 0; i < NCOMMANDS; ++i)
		fprintf(stderr, "%s %s", i ? "," : "", commands[i].name);
	fprintf(stderr, ")\n");
	return LK_EXIT_USAGE;
}

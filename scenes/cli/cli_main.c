/* lcpkit: compare, solve, record and benchmark contact and joint solvers. */
#include "cli.h"

#include <string.h>

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

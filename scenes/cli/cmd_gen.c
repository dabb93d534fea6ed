/* lcpkit gen: write a generated test problem to a problem file. */
#include "cli.h"
#include "lcpkit/generate.h"
#include "lcpkit/io.h"

#include <float.h>
#include <math.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: lcpkit gen KIND [--n N] [--seed S] [--friction MU] [--mass-ratio R] [--out FILE]\n\n"
	           "KIND is one of:");
	for (int k = 0; k < LK_GEN_KIND_COUNT; ++k)
		fprintf(f, " %s", lk_gen_kind_name((lk_gen_kind)k));
	fprintf(f, "\n\n  --n N           bodies (stacks, packings, chains) or cells (fluid)\n"
	           "  --seed S        random seed (default 1)\n"
	           "  --friction MU   friction coefficient; 0 leaves out the friction rows\n"
	           "  --mass-ratio R  packing: masses in [1, R]; heavy-on-light: top box mass\n"
	           "  --out FILE      output file (default: standard output)\n");
}

int lk_cmd_gen(int argc, char **argv)
{
	int status = lk_cli_first_word(argc, argv, usage);
	if (status >= 0)
		return status;
	int kind = lk_gen_kind_from_name(argv[1]);
	if (kind < 0) {
		lk_cli_error("gen", "unknown kind '%s'", argv[1]);
		usage(stderr);
		return LK_EXIT_USAGE;
	}
	lk_gen_params g = lk_default_gen_params((lk_gen_kind)kind);
	const char *out = "/dev/stdout";
	int seed = (int)g.seed;
	const lk_cli_option opts[] = {
		LK_CLI_OPT_INT("--n", &g.n, 1, 10000000),
		LK_CLI_OPT_INT("--seed", &seed, 0, 2147483647),
		LK_CLI_OPT_DOUBLE("--friction", &g.mu, 0, INFINITY, NULL),
		LK_CLI_OPT_DOUBLE("--mass-ratio", &g.mass_ratio, DBL_MIN, INFINITY, NULL),
		LK_CLI_OPT_STRING("--out", &out),
		LK_CLI_OPT_END};
	status = lk_cli_parse("gen", argc, argv, 2, opts, usage, NULL, NULL);
	if (status >= 0)
		return status;
	g.seed = (uint64_t)seed;
	char err[512];
	lk_problem *p = NULL;
	if (lk_generate(&g, &p, err, sizeof err) != LK_OK) {
		lk_cli_error("gen", "%s", err);
		return LK_EXIT_FAIL;
	}
	lk_problem_extra extra;
	memset(&extra, 0, sizeof extra);
	extra.h = g.h;
	snprintf(extra.source, sizeof extra.source, "lcpkit gen %s n=%d seed=%llu mu=%g", argv[1], g.n,
	         (unsigned long long)g.seed, g.mu);
	lk_status st = lk_problem_write(p, &extra, out, err, sizeof err);
	lk_problem_destroy(p);
	if (st != LK_OK) {
		lk_cli_error("gen", "%s", err);
		return LK_EXIT_FAIL;
	}
	return LK_EXIT_OK;
}

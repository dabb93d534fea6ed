/* lcpkit gen: write a generated test problem to a problem file. */
#include "cli.h"
#include "lcpkit/generate.h"
#include "lcpkit/io.h"

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
	for (int i = 2; i < argc; ++i) {
		const char *a = argv[i], *v;
		int ok = 1;
		if (!strcmp(a, "--n")) {
			ok = (v = lk_cli_value("gen", argc, argv, &i)) && lk_cli_int(v, 1, 10000000, &g.n);
		} else if (!strcmp(a, "--seed")) {
			int s = 0;
			ok = (v = lk_cli_value("gen", argc, argv, &i)) && lk_cli_int(v, 0, 2147483647, &s);
			g.seed = (uint64_t)s;
		} else if (!strcmp(a, "--friction")) {
			ok = (v = lk_cli_value("gen", argc, argv, &i)) && lk_cli_double(v, &g.mu) && g.mu >= 0;
		} else if (!strcmp(a, "--mass-ratio")) {
			ok = (v = lk_cli_value("gen", argc, argv, &i)) && lk_cli_double(v, &g.mass_ratio) &&
			     g.mass_ratio > 0;
		} else if (!strcmp(a, "--out")) {
			ok = (v = lk_cli_value("gen", argc, argv, &i)) != NULL;
			if (ok)
				out = v;
		} else {
			lk_cli_error("gen", "unknown option '%s' (see lcpkit gen --help)", a);
			return LK_EXIT_USAGE;
		}
		if (!ok) {
			lk_cli_error("gen", "bad value for %s", a);
			return LK_EXIT_USAGE;
		}
	}
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

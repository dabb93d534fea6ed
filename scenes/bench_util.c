#include "bench_util.h"
#include "cli.h"

#include <string.h>

int lk_bench_split(char *list, char **items, int max)
{
	int n = 0;
	for (char *s = strtok(list, ","); s && n < max; s = strtok(NULL, ","))
		items[n++] = s;
	return n;
}

int lk_bench_engine_parse(const char *cmd, int argc, char **argv, lk_bench_engine_opts *o, void (*usage)(FILE *),
                          int warmup_quick)
{
	for (int i = 1; i < argc; ++i) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return LK_EXIT_OK;
		} else if (!strcmp(a, "--quick")) {
			o->quick = 1;
		} else if (!strcmp(a, "--steps") || !strcmp(a, "--warmup") || !strcmp(a, "--iterations")) {
			int *dst = !strcmp(a, "--steps") ? &o->steps : !strcmp(a, "--warmup") ? &o->warmup : &o->iterations;
			if (!(v = lk_cli_value(cmd, argc, argv, &i)))
				return LK_EXIT_USAGE;
			if (!lk_cli_int(v, !strcmp(a, "--warmup") ? 0 : 1, 100000, dst)) {
				lk_cli_error(cmd, "%s needs a positive integer, got '%s'", a, v);
				return LK_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--solvers") || !strcmp(a, "--scenes")) {
			if (!(v = lk_cli_value(cmd, argc, argv, &i)))
				return LK_EXIT_USAGE;
			char *dst = !strcmp(a, "--solvers") ? o->solvers : o->scenes;
			if (strlen(v) >= sizeof o->solvers || !*v) {
				lk_cli_error(cmd, "%s: empty or too long", a);
				return LK_EXIT_USAGE;
			}
			snprintf(dst, sizeof o->solvers, "%s", v);
		} else if (!strcmp(a, "--out")) {
			if (!(o->out = lk_cli_value(cmd, argc, argv, &i)))
				return LK_EXIT_USAGE;
		} else {
			lk_cli_error(cmd, "unknown option '%s'", a);
			usage(stderr);
			return LK_EXIT_USAGE;
		}
	}
	if (o->steps < 0)
		o->steps = o->quick ? 10 : 40;
	if (o->warmup < 0)
		o->warmup = o->quick ? warmup_quick : 20;
	if (!o->scenes[0])
		snprintf(o->scenes, sizeof o->scenes, "%s", o->quick ? "stack10,pool1k" : "stack10,pool1k,pool10k");
	char scenes[256], *names[8];
	snprintf(scenes, sizeof scenes, "%s", o->scenes);
	int nsc = lk_bench_split(scenes, names, 8);
	for (int k = 0; k < nsc; ++k) {
		if (strcmp(names[k], "stack10") && strcmp(names[k], "pool1k") && strcmp(names[k], "pool10k")) {
			lk_cli_error(cmd, "unknown scene '%s' (stack10, pool1k, pool10k)", names[k]);
			return LK_EXIT_USAGE;
		}
	}
	return -1;
}

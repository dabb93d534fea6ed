#include "bench_util.h"
#include "cli_util.h"
#include "scene.h"
#include "sim.h"

#include <errno.h>
#include <string.h>

lk_problem *lk_bench_capture(const char *scene_spec, int engine, const char *solver, int iterations, int step,
                             char *err, size_t esz)
{
	lk_scene *sc = NULL;
	if (lk_scene_create(scene_spec, &sc, err, esz) != LK_OK)
		return NULL;
	lk_sim_def def = {sc, (lk_engine)engine, solver, iterations, 0, 0, 0};
	lk_sim *sim = NULL;
	lk_problem *p = NULL;
	if (lk_sim_create(&def, &sim, err, esz) != LK_OK) {
		lk_scene_destroy(sc);
		return NULL;
	}
	for (int s = 1; s <= step; ++s) {
		if (s == step)
			lk_sim_capture_next(sim);
		if (lk_sim_step(sim, NULL) != LK_OK) {
			snprintf(err, esz, "%s: step %d failed", scene_spec, s);
			break;
		}
		if (s == step) {
			p = lk_sim_take_captured(sim);
			if (!p)
				snprintf(err, esz, "%s: no problem captured at step %d", scene_spec, s);
		}
	}
	lk_sim_destroy(sim);
	lk_scene_destroy(sc);
	return p;
}

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
	const char *solvers = NULL, *scenes = NULL;
	const lk_cli_option table[] = {
		LK_CLI_OPT_FLAG("--quick", &o->quick),
		LK_CLI_OPT_INT("--steps", &o->steps, 1, 100000),
		LK_CLI_OPT_INT("--warmup", &o->warmup, 0, 100000),
		LK_CLI_OPT_INT("--iterations", &o->iterations, 1, 100000),
		LK_CLI_OPT_STRING("--solvers", &solvers),
		LK_CLI_OPT_STRING("--scenes", &scenes),
		LK_CLI_OPT_STRING("--out", &o->out),
		LK_CLI_OPT_END};
	const int status = lk_cli_parse(cmd, argc, argv, 1, table, usage, NULL, NULL);
	if (status >= 0)
		return status;
	const char *const given[2] = {solvers, scenes}, *const flags[2] = {"--solvers", "--scenes"};
	char *const dst[2] = {o->solvers, o->scenes};
	for (int k = 0; k < 2; ++k) {
		if (!given[k])
			continue;
		if (!*given[k] || strlen(given[k]) >= sizeof o->solvers) {
			lk_cli_error(cmd, "%s: empty or too long", flags[k]);
			return LK_EXIT_USAGE;
		}
		snprintf(dst[k], sizeof o->solvers, "%s", given[k]);
	}
	if (o->steps < 0)
		o->steps = o->quick ? 10 : 40;
	if (o->warmup < 0)
		o->warmup = o->quick ? warmup_quick : 20;
	if (!o->scenes[0])
		snprintf(o->scenes, sizeof o->scenes, "%s",
		         o->quick ? LK_BENCH_ENGINE_SCENES_QUICK : LK_BENCH_ENGINE_SCENES);
	o->nscenes = lk_cli_split_specs(o->scenes, o->scene_specs, LK_BENCH_ENGINE_SPECS);
	if (o->nscenes < 1) {
		lk_cli_error(cmd, "--scenes takes 1 to %d scene specs", LK_BENCH_ENGINE_SPECS);
		return LK_EXIT_USAGE;
	}
	o->nsolvers = lk_cli_split_specs(o->solvers, o->solver_specs, LK_BENCH_ENGINE_SPECS);
	if (o->nsolvers < 1) {
		lk_cli_error(cmd, "--solvers takes 1 to %d solver specs", LK_BENCH_ENGINE_SPECS);
		return LK_EXIT_USAGE;
	}
	return -1;
}

int lk_bench_make_out_dir(const char *cmd, const char *dir)
{
	if (lk_cli_mkdirs(dir) != 0) {
		lk_cli_error(cmd, "cannot create directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

int lk_bench_open_csvs(const char *cmd, const char *dir, lk_bench_csv *csv, int n)
{
	for (int k = 0; k < n; ++k)
		csv[k].f = NULL;
	if (lk_bench_make_out_dir(cmd, dir) != 0)
		return -1;
	for (int k = 0; k < n; ++k) {
		int len = snprintf(csv[k].path, sizeof csv[k].path, "%s/%s", dir, csv[k].name);
		if (len < 0 || (size_t)len >= sizeof csv[k].path)
			errno = ENAMETOOLONG; /* a cut path would name another file: refused as the system refuses it */
		else
			csv[k].f = fopen(csv[k].path, "w");
		if (!csv[k].f) {
			lk_cli_error(cmd, "cannot write '%s/%s': %s", dir, csv[k].name, strerror(errno));
			lk_bench_close_csvs(csv, k);
			return -1;
		}
	}
	return 0;
}

void lk_bench_close_csvs(lk_bench_csv *csv, int n)
{
	for (int k = 0; k < n; ++k) {
		if (csv[k].f)
			fclose(csv[k].f);
		csv[k].f = NULL;
	}
}

/* lcpkit record: the solver problems a running scene produces, one problem file per step, with a manifest. */
#include "cli.h"
#include "lcpkit/io.h"
#include "recording.h"
#include "scene.h"
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: lcpkit record --scene S --engine ode|bullet [--solver X] [--steps A:B] [--iters N]\n"
	           "                     --out DIR\n\n"
	           "Runs the scene and writes the problem of each step from A to B (default 1:100) as DIR/step-NNNNN.lkp\n"
	           "(docs/problem-format.md: row form, lambda = the warm start the solver started from, solution = the\n"
	           "solver's answer when X is an lcpkit solver) and DIR/manifest.txt. `lcpkit regress DIR` replays them.\n"
	           "  --solver X  the solver that runs the scene (default pgs); an engine's own solver records the\n"
	           "              problems without a solution\n"
	           "  --iters N   iterations per step (default 20)\n");
}

/* --steps A:B */
typedef struct record_steps {
	int first, last;
} record_steps;

static int parse_steps(void *arg, const char *v)
{
	record_steps *s = arg;
	char *end;
	long x = strtol(v, &end, 10), y;
	if (*end != ':' || x < 1 || (y = strtol(end + 1, &end, 10)) < x || *end || y > 10000000)
		return 0;
	s->first = (int)x;
	s->last = (int)y;
	return 1;
}

int lk_cmd_record(int argc, char **argv)
{
	const char *scene_spec = NULL, *engine_name = NULL, *solver = "pgs", *out = NULL;
	int iters = 20;
	record_steps steps = {1, 100};
	const lk_cli_option opts[] = {
		LK_CLI_OPT_STRING("--scene", &scene_spec),
		LK_CLI_OPT_STRING("--engine", &engine_name),
		LK_CLI_OPT_STRING("--solver", &solver),
		LK_CLI_OPT_STRING("--out", &out),
		LK_CLI_OPT_INT("--iters", &iters, 1, 100000),
		LK_CLI_OPT_CALL("--steps", &steps, parse_steps, "A:B with 1 <= A <= B"),
		LK_CLI_OPT_END};
	const int status = lk_cli_parse("record", argc, argv, 1, opts, usage, NULL, NULL);
	if (status >= 0)
		return status;
	const int first = steps.first, last = steps.last;
	if (!scene_spec || !engine_name || !out) {
		lk_cli_error("record", "--scene, --engine and --out are required (see lcpkit record --help)");
		return LK_EXIT_USAGE;
	}
	int engine = lk_engine_from_name(engine_name);
	if (engine < 0) {
		lk_cli_error("record", "unknown or unavailable engine '%s' (choose from ode, bullet)", engine_name);
		return LK_EXIT_USAGE;
	}
	char err[512];
	if (lk_sim_check_solver((lk_engine)engine, solver, err, sizeof err) != LK_OK) {
		lk_cli_error("record", "%s", err);
		return LK_EXIT_USAGE;
	}
	lk_scene *scene = NULL;
	if (lk_scene_create(scene_spec, &scene, err, sizeof err) != LK_OK) {
		lk_cli_error("record", "%s", err);
		return LK_EXIT_USAGE;
	}
	lk_recording_def def = {scene, (lk_engine)engine, solver, iters, first, last, out};
	int written = 0;
	lk_status st = lk_record(&def, &written, err, sizeof err);
	lk_scene_destroy(scene);
	if (st != LK_OK) {
		lk_cli_error("record", "%s", err);
		return LK_EXIT_FAIL;
	}
	printf("recorded %d problems of %s (%s, %s) into %s\n", written, scene_spec, engine_name, solver, out);
	return LK_EXIT_OK;
}

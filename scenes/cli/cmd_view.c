/* lcpkit view: the command line of the live split-screen viewer (scenes/view/view_app.c is the window). */
#include "cli.h"
#include "view.h"

#include <stdio.h>
#include <string.h>

#define DEFAULT_SCENE "boxstack"
#define DEFAULT_RIGHT "pgs:order=gsp"

static int first_engine(void)
{
	for (int e = 0; e < LK_ENGINE_COUNT; ++e)
		if (lk_engine_available((lk_engine)e))
			return e;
	return -1;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit view [--scene S] [--left ENGINE:SOLVER] [--right ENGINE:SOLVER] [--iters N]\n"
	        "                   [--size WxH] [--screenshot FILE [--frames N]]\n\n"
	        "One window, the same scene side by side under two engine/solver choices stepped in lock step and\n"
	        "seen from one camera. Each side shows its engine, solver and parameters, solver time per step,\n"
	        "iterations, RES after the solve and a plot of RES over the last seconds.\n\n"
	        "  --scene       NAME[:key=value,...] (default %s); scenes:",
	        DEFAULT_SCENE);
	for (const char *const *n = lk_scene_names(); *n; ++n)
		fprintf(f, " %s", *n);
	const lk_engine_solver *first = lk_engine_solvers();
	char names[200];
	fprintf(f, "\n  --left        ENGINE:SOLVER, ENGINE or SOLVER (default: the first engine's own solver,\n"
	           "                %s:%s); engines: ode, bullet (as built); solvers: an lcpkit spec\n"
	           "                (pgs, psor:w=1.3, amgs, pgs-sm, newton-fischer, pgs:order=gsp, ...) or an engine's\n"
	           "                own: %s\n",
	        lk_engine_name(first->engine), first->name, lk_engine_solver_list(LK_ENGINE_COUNT, names, sizeof names));
	fprintf(f, "  --right       the same (default: the first engine with %s)\n"
	           "  --iters       iteration budget per step for both sides (default 20)\n"
	           "  --size        window size in pixels (default 1280x720)\n"
	           "  --screenshot  run --frames frames (default 60, one step each), write the window to FILE (PNG)\n"
	           "                and exit\n\n"
	           "Keys: Space pause/resume, S single step, R reset, 1 / 2 next solver on the left / right\n"
	           "(Shift+1 / Shift+2 back), + / - iterations, N / P next / previous scene, M slow motion, C\n"
	           "screenshot (lcpkit-view-NNN.png), V reset camera, H hide the overlay, Esc quit. Mouse: drag to\n"
	           "orbit, right-drag (or middle-drag) to pan, wheel to zoom, Shift+click to drop a box, Shift+right-\n"
	           "click to shoot a sphere (or B / F at the cursor); both sides get the same body. Changing a solver,\n"
	           "the iterations or the scene restarts both sides from the start.\n\n"
	           "Needs a display (X11); without one it exits with status 2: use lcpkit compare for headless runs.\n",
	        DEFAULT_RIGHT);
}

/* "ENGINE:SOLVER", "ENGINE" or "SOLVER" (an engine's own solver picks its engine, others the first one). */
static int parse_side(const char *arg, lk_engine *engine, char *solver, size_t n, char *err, size_t esz)
{
	int e = -1;
	const char *sv = arg;
	const char *colon = strchr(arg, ':');
	for (int k = 0; k < LK_ENGINE_COUNT; ++k) {
		const char *name = lk_engine_name((lk_engine)k);
		size_t len = strlen(name);
		if (!strncmp(arg, name, len) && (arg[len] == '\0' || (colon && colon == arg + len))) {
			if (!lk_engine_available((lk_engine)k)) {
				snprintf(err, esz, "engine %s is not built into this lcpkit", name);
				return -1;
			}
			e = k;
			sv = arg[len] ? arg + len + 1 : lk_engine_default_solver((lk_engine)k);
		}
	}
	if (e < 0) {
		const lk_engine_solver *own = lk_engine_solver_find(arg);
		if (own)
			e = (int)own->engine;
		if (e >= 0 && !lk_engine_available((lk_engine)e)) {
			snprintf(err, esz, "solver %s needs engine %s, which is not built into this lcpkit", arg,
			         lk_engine_name((lk_engine)e));
			return -1;
		}
		if (e < 0)
			e = first_engine();
	}
	if (!*sv)
		sv = lk_engine_default_solver((lk_engine)e);
	if (lk_sim_check_solver((lk_engine)e, sv, err, esz) != LK_OK)
		return -1;
	if ((size_t)snprintf(solver, n, "%s", sv) >= n) {
		snprintf(err, esz, "solver spec too long");
		return -1;
	}
	*engine = (lk_engine)e;
	return 0;
}

/* --size WIDTHxHEIGHT */
static int parse_size(void *arg, const char *v)
{
	lk_view_options *opt = arg;
	char ws[16], hs[16];
	const char *x = strchr(v, 'x');
	if (!x || x - v >= (long)sizeof ws || strlen(x + 1) >= sizeof hs)
		return 0;
	snprintf(ws, sizeof ws, "%.*s", (int)(x - v), v);
	snprintf(hs, sizeof hs, "%s", x + 1);
	return lk_cli_int(ws, 160, 16384, &opt->width) && lk_cli_int(hs, 120, 16384, &opt->height);
}

int lk_cmd_view(int argc, char **argv)
{
	lk_view_options opt;
	memset(&opt, 0, sizeof opt);
	snprintf(opt.scene, sizeof opt.scene, "%s", DEFAULT_SCENE);
	opt.iterations = 20;
	opt.width = 1280;
	opt.height = 720;
	const char *side_arg[2] = {NULL, NULL};
	int frames = -1;
	const char *scene = NULL;
	const lk_cli_option opts[] = {
		LK_CLI_OPT_STRING("--scene", &scene),
		LK_CLI_OPT_STRING("--left", &side_arg[0]),
		LK_CLI_OPT_STRING("--right", &side_arg[1]),
		LK_CLI_OPT_INT("--iters", &opt.iterations, 1, 100000),
		LK_CLI_OPT_CALL("--size", &opt, parse_size, "WIDTHxHEIGHT from 160x120 to 16384x16384"),
		LK_CLI_OPT_STRING("--screenshot", &opt.screenshot),
		LK_CLI_OPT_INT("--frames", &frames, 1, 1000000),
		LK_CLI_OPT_END};
	const int status = lk_cli_parse("view", argc, argv, 1, opts, usage, NULL, NULL);
	if (status >= 0)
		return status;
	if (scene && (size_t)snprintf(opt.scene, sizeof opt.scene, "%s", scene) >= sizeof opt.scene) {
		lk_cli_error("view", "scene spec too long");
		return LK_EXIT_USAGE;
	}
	if (frames > 0 && !opt.screenshot) {
		lk_cli_error("view", "--frames goes with --screenshot FILE");
		return LK_EXIT_USAGE;
	}
	opt.frames = frames > 0 ? frames : 60;

	/* everything is checked before a window opens */
	int e0 = first_engine();
	if (e0 < 0) {
		lk_cli_error("view", "no engine was built into this lcpkit");
		return LK_EXIT_USAGE;
	}
	char err[512];
	lk_scene *sc = NULL;
	if (lk_scene_create(opt.scene, &sc, err, sizeof err) != LK_OK) {
		lk_cli_error("view", "%s", err);
		return LK_EXIT_USAGE;
	}
	lk_scene_destroy(sc);
	for (int k = 0; k < 2; ++k) {
		char def[200];
		if (!side_arg[k]) {
			snprintf(def, sizeof def, "%s:%s", lk_engine_name((lk_engine)e0),
			         k == 0 ? lk_engine_default_solver((lk_engine)e0) : DEFAULT_RIGHT);
			side_arg[k] = def;
		}
		if (parse_side(side_arg[k], &opt.engine[k], opt.solver[k], sizeof opt.solver[k], err, sizeof err) != 0) {
			lk_cli_error("view", "--%s %s: %s", k ? "right" : "left", side_arg[k], err);
			return LK_EXIT_USAGE;
		}
	}

#ifdef LCPKIT_HAVE_VIEWER
	return lk__view_run(&opt);
#else
	lk_cli_error("view", "this lcpkit was built without the viewer (GLFW and OpenGL: libglfw3-dev, libgl-dev); "
	                     "for headless runs use lcpkit compare");
	return LK_EXIT_USAGE;
#endif
}

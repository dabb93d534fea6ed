/* lcpkit compare: the same scenes in ODE and Bullet under several solvers, side by side, in numbers,
 * plots and pictures. */
#include "cli.h"
#include "plot.h"
#include "scene.h"
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ITEMS 32
#define DEFAULT_SCENES "boxstack,pool1"
#define DEFAULT_SOLVERS "own,pgs,amgs,pgs-sm:iters=2,kpgs=10,ksm=1,cg_max=20,gsp"

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit compare [--scene S[,S..]] [--engine ode|bullet|both] [--solvers LIST] [--time SECONDS]\n"
	        "                      [--hz H] [--iters N] [--frames T1,T2,..] [--out DIR] [--no-pictures] [--json]\n\n"
	        "Runs every scene x engine x solver from the same initial state and prints one table: solver and\n"
	        "step time per step (median), iterations, RES after the solve (median, max), max penetration,\n"
	        "kinetic energy at the end, drift of the top body and whether and when a stack fell. Writes\n"
	        "report.md, one CSV per run and PNG plots and pictures to DIR (default lcpkit-report/).\n\n"
	        "  --scene     scene specs NAME[:key=value,...] (default %s); scenes:", DEFAULT_SCENES);
	for (const char *const *n = lk_scene_names(); *n; ++n)
		fprintf(f, " %s", *n);
	fprintf(f, "\n  --engine    ode, bullet or both (default both)\n"
	           "  --solvers   lcpkit specs and engines' own solvers (default %s; 'own' is each engine's\n"
	           "              default:",
	        DEFAULT_SOLVERS);
	for (int e = 0; e < LK_ENGINE_COUNT; ++e)
		fprintf(f, "%s %s", e ? "," : "", lk_engine_default_solver((lk_engine)e));
	char names[200];
	fprintf(f, ")\n              engines' own: %s\n", lk_engine_solver_list(LK_ENGINE_COUNT, names, sizeof names));
	fprintf(f, "  --time      simulated seconds per run (default: 4 for stacks, 3 for pools)\n"
	           "  --hz        steps per second (default 60)\n"
	           "  --iters     iteration budget per step for every solver (default 20)\n"
	           "  --frames    times of the side-by-side pictures (default 1,2,4,10 clipped to --time)\n"
	           "  --json      print the table as JSON on stdout\n");
}

/* Splits a comma list of specs whose own parameters also use commas: a piece with '=' but no ':' belongs to
 * the spec before it ("boxstack:n=20,mu=0.3,pool1" -> "boxstack:n=20,mu=0.3" and "pool1"). */
static int split_specs(const char *list, char out[][160], int max)
{
	int n = 0;
	const char *s = list;
	while (*s) {
		size_t len = strcspn(s, ",");
		int continues = n > 0 && memchr(s, '=', len) && !memchr(s, ':', len);
		if (continues) {
			size_t used = strlen(out[n - 1]);
			snprintf(out[n - 1] + used, 160 - used, ",%.*s", (int)len, s);
		} else if (len > 0) {
			if (n >= max)
				return -1;
			snprintf(out[n++], 160, "%.*s", (int)len, s);
		}
		s += len;
		if (*s == ',')
			++s;
	}
	return n;
}

typedef struct run {
	const lk_scene *scene;
	int scene_index;
	lk_engine engine;
	char solver[160];
	int steps;
	/* per step */
	double *solve_ms, *step_ms, *res, *pen, *energy, *top_z;
	int *iters;
	/* summary */
	double solve_ms_median, step_ms_median, res_median, res_max, max_penetration, energy_end, top_drift;
	double iterations;
	int fell;
	double fell_at;
	int fallbacks;
	lk_pose *frames; /* nframes x nbodies */
	double *conv_res; /* residual against work at the chosen step */
	double *conv_work; /* in PGS sweeps: row updates / rows */
	int conv_n;
	char csv[512];
} run;

/* Runs one scene x engine x solver. */
static int run_one(run *r, const lk_scene *scene, double seconds, double h, int iters, const double *frame_t,
                   int nframes, int conv_step, const char *outdir, char *err, size_t esz)
{
	lk_sim_def def = {scene, r->engine, r->solver, iters, h};
	lk_sim *sim = NULL;
	if (lk_sim_create(&def, &sim, err, esz) != LK_OK)
		return -1;
	int steps = (int)lround(seconds / h);
	if (steps < 1)
		steps = 1;
	r->steps = steps;
	r->solve_ms = calloc((size_t)steps, sizeof(double));
	r->step_ms = calloc((size_t)steps, sizeof(double));
	r->res = calloc((size_t)steps, sizeof(double));
	r->pen = calloc((size_t)steps, sizeof(double));
	r->energy = calloc((size_t)steps, sizeof(double));
	r->top_z = calloc((size_t)steps, sizeof(double));
	r->iters = calloc((size_t)steps, sizeof(int));
	r->frames = calloc((size_t)(nframes > 0 ? nframes : 1) * (size_t)scene->nbodies, sizeof(lk_pose));
	if (!r->solve_ms || !r->step_ms || !r->res || !r->pen || !r->energy || !r->top_z || !r->iters || !r->frames) {
		snprintf(err, esz, "out of memory");
		lk_sim_destroy(sim);
		return -1;
	}
	lk_pose top0;
	if (scene->stack_top >= 0)
		lk_sim_pose(sim, scene->stack_top, &top0);
	int frame = 0;
	while (frame < nframes && frame_t[frame] <= 0) {
		for (int b = 0; b < scene->nbodies; ++b)
			lk_sim_pose(sim, b, &r->frames[(size_t)frame * scene->nbodies + b]);
		++frame;
	}
	r->fell = 0;
	r->fell_at = -1;
	char label[200];
	snprintf(label, sizeof label, "%s/%s/%s", scene->name, lk_engine_name(r->engine), r->solver);
	for (int k = 0; k < steps; ++k) {
		lk_engine_step_stats st;
		memset(&st, 0, sizeof st);
		if (k + 1 == conv_step)
			lk_sim_capture_next(sim);
		if (lk_sim_step(sim, &st) != LK_OK) {
			snprintf(err, esz, "step %d failed", k);
			lk_sim_destroy(sim);
			return -1;
		}
		r->solve_ms[k] = 1e3 * st.solve_seconds;
		r->step_ms[k] = 1e3 * st.step_seconds;
		r->res[k] = st.res_after;
		r->iters[k] = st.iterations;
		r->pen[k] = lk_sim_max_penetration(sim);
		r->energy[k] = lk_sim_kinetic_energy(sim);
		r->fallbacks = (int)st.fallback_total;
		double t = (k + 1) * h;
		if (scene->stack_top >= 0) {
			lk_pose p;
			lk_sim_pose(sim, scene->stack_top, &p);
			r->top_z[k] = p.pos[2];
			if (!r->fell && p.pos[2] < scene->stack_top_height - scene->fall_drop) {
				r->fell = 1;
				r->fell_at = t;
			}
			if (k == steps - 1)
				r->top_drift = hypot(p.pos[0] - top0.pos[0], p.pos[1] - top0.pos[1]);
		}
		while (frame < nframes && frame_t[frame] <= t + 1e-9) {
			for (int b = 0; b < scene->nbodies; ++b)
				lk_sim_pose(sim, b, &r->frames[(size_t)frame * scene->nbodies + b]);
			++frame;
		}
		if (k + 1 == conv_step) {
			/* residual against iteration on this step's own problem, one long solve (seed 000 Fig. 3-5) */
			lk_solver_config cfg;
			char e2[200];
			/* an engine's own solver has no lcpkit configuration to replay */
			lk_problem *p = lk_config_parse(r->solver, &cfg, e2, sizeof e2) == LK_OK ? lk_sim_take_captured(sim) : NULL;
			if (p) {
				/* every method gets the work of 200 PGS sweeps (row updates / rows), the unit in which
				 * Silcowitz et al. measure PGS-SM's time; enough outer iterations for that */
				const int cap = 4096;
				cfg.max_iterations = 200;
				cfg.tol_abs = 0;
				lk_history h2 = {calloc(cap, sizeof(lk_history_entry)), cap, 0};
				int rows = lk_problem_row_count(p);
				if (h2.entries && rows > 0 && lk_solve(p, &cfg, NULL, &h2) == LK_OK) {
					r->conv_res = calloc((size_t)h2.count, sizeof(double));
					r->conv_work = calloc((size_t)h2.count, sizeof(double));
					if (r->conv_res && r->conv_work) {
						double best = INFINITY;
						int n = 0;
						for (int i = 0; i < h2.count; ++i) {
							double work = (double)h2.entries[i].row_updates / rows;
							if (work > 200.0 + 1e-9)
								break;
							/* PGS-SM returns the best iterate it has seen: plot what it would return */
							double res = h2.entries[i].res;
							if (cfg.method == LK_METHOD_PGS_SM && cfg.pgs_sm.best_iterate)
								res = best = fmin(best, res);
							r->conv_res[n] = res;
							r->conv_work[n++] = work;
						}
						r->conv_n = n;
					}
				}
				free(h2.entries);
				lk_problem_destroy(p);
			}
		}
		if ((k & 15) == 0 || k == steps - 1)
			lk_cli_progress(label, k + 1, steps);
	}
	/* pictures of times beyond the run show the final state */
	while (frame < nframes) {
		for (int b = 0; b < scene->nbodies; ++b)
			lk_sim_pose(sim, b, &r->frames[(size_t)frame * scene->nbodies + b]);
		++frame;
	}
	lk_sim_destroy(sim);

	double *tmp = malloc(sizeof(double) * (size_t)steps);
	if (!tmp) {
		snprintf(err, esz, "out of memory");
		return -1;
	}
#define MEDIAN(field, out)                                     \
	do {                                                       \
		memcpy(tmp, r->field, sizeof(double) * (size_t)steps); \
		out = lk_cli_median(tmp, steps);                       \
	} while (0)
	MEDIAN(solve_ms, r->solve_ms_median);
	MEDIAN(step_ms, r->step_ms_median);
	MEDIAN(res, r->res_median);
	for (int k = 0; k < steps; ++k)
		tmp[k] = r->iters[k];
	r->iterations = lk_cli_median(tmp, steps);
	free(tmp);
	r->res_max = 0;
	r->max_penetration = 0;
	for (int k = 0; k < steps; ++k) {
		r->res_max = fmax(r->res_max, r->res[k]);
		r->max_penetration = fmax(r->max_penetration, r->pen[k]);
	}
	r->energy_end = r->energy[steps - 1];

	/* the run's CSV */
	snprintf(r->csv, sizeof r->csv, "%s/%s-%s-%s.csv", outdir, scene->name, lk_engine_name(r->engine), r->solver);
	for (char *c = r->csv + strlen(outdir) + 1; *c; ++c)
		if (*c == ':' || *c == ',' || *c == '=' || *c == '/')
			*c = '_';
	FILE *f = fopen(r->csv, "w");
	if (!f) {
		snprintf(err, esz, "cannot write %s", r->csv);
		return -1;
	}
	fprintf(f, "step,time,solver_ms,step_ms,iterations,res,max_penetration,kinetic_energy,top_height\n");
	for (int k = 0; k < steps; ++k)
		fprintf(f, "%d,%.6f,%.6f,%.6f,%d,%.9g,%.9g,%.9g,%.9g\n", k + 1, (k + 1) * h, r->solve_ms[k], r->step_ms[k],
		        r->iters[k], r->res[k], r->pen[k], r->energy[k], r->top_z[k]);
	if (fclose(f) != 0) {
		snprintf(err, esz, "cannot write %s", r->csv);
		return -1;
	}
	return 0;
}

static void free_run(run *r)
{
	free(r->solve_ms);
	free(r->step_ms);
	free(r->res);
	free(r->pen);
	free(r->energy);
	free(r->top_z);
	free(r->iters);
	free(r->frames);
	free(r->conv_res);
	free(r->conv_work);
}

static void print_table(FILE *f, run *runs, int nruns, int markdown)
{
	const char *hdr[] = {"scene", "engine", "solver", "solver ms", "step ms", "iters", "RES median", "RES max",
	                     "max pen. m", "KE end J", "top drift m", "fell"};
	if (markdown) {
		fprintf(f, "|");
		for (int i = 0; i < 12; ++i)
			fprintf(f, " %s |", hdr[i]);
		fprintf(f, "\n|");
		for (int i = 0; i < 12; ++i)
			fprintf(f, "%s", i < 3 ? "---|" : "---:|");
		fprintf(f, "\n");
	}
	int sw = 14, vw = 13; /* column widths that fit the longest scene and solver spec */
	for (int i = 0; i < nruns; ++i) {
		sw = (int)fmax(sw, (double)strlen(runs[i].scene->spec));
		vw = (int)fmax(vw, (double)strlen(runs[i].solver));
	}
	if (!markdown)
		fprintf(f, "%-*s %-7s %-*s %9s %9s %6s %10s %10s %10s %10s %11s %s\n", sw, hdr[0], hdr[1], vw, hdr[2], hdr[3],
		        hdr[4], hdr[5], hdr[6], hdr[7], hdr[8], hdr[9], hdr[10], hdr[11]);
	for (int i = 0; i < nruns; ++i) {
		run *r = &runs[i];
		char fell[32];
		if (r->scene->stack_top < 0)
			snprintf(fell, sizeof fell, "-");
		else if (r->fell)
			snprintf(fell, sizeof fell, "at %.2f s", r->fell_at);
		else
			snprintf(fell, sizeof fell, "no");
		char drift[32];
		if (r->scene->stack_top < 0)
			snprintf(drift, sizeof drift, "-");
		else
			snprintf(drift, sizeof drift, "%.4f", r->top_drift);
		if (markdown)
			fprintf(f, "| %s | %s | %s | %.3f | %.3f | %.0f | %.2e | %.2e | %.4f | %.3g | %s | %s |\n",
			        r->scene->spec, lk_engine_name(r->engine), r->solver, r->solve_ms_median, r->step_ms_median,
			        r->iterations, r->res_median, r->res_max, r->max_penetration, r->energy_end, drift, fell);
		else
			fprintf(f, "%-*s %-7s %-*s %9.3f %9.3f %6.0f %10.2e %10.2e %10.4f %10.3g %11s %s\n", sw, r->scene->spec,
			        lk_engine_name(r->engine), vw, r->solver, r->solve_ms_median, r->step_ms_median, r->iterations,
			        r->res_median, r->res_max, r->max_penetration, r->energy_end, drift, fell);
	}
}

static void print_json(run *runs, int nruns, const char *outdir)
{
	printf("{\"out\": ");
	lk_cli_json_string(stdout, outdir);
	printf(", \"runs\": [");
	for (int i = 0; i < nruns; ++i) {
		run *r = &runs[i];
		printf("%s\n  {\"scene\": ", i ? "," : "");
		lk_cli_json_string(stdout, r->scene->spec);
		printf(", \"engine\": ");
		lk_cli_json_string(stdout, lk_engine_name(r->engine));
		printf(", \"solver\": ");
		lk_cli_json_string(stdout, r->solver);
		printf(", \"steps\": %d, \"solver_ms_median\": ", r->steps);
		lk_cli_json_number(stdout, r->solve_ms_median);
		printf(", \"step_ms_median\": ");
		lk_cli_json_number(stdout, r->step_ms_median);
		printf(", \"iterations\": ");
		lk_cli_json_number(stdout, r->iterations);
		printf(", \"res_median\": ");
		lk_cli_json_number(stdout, r->res_median);
		printf(", \"res_max\": ");
		lk_cli_json_number(stdout, r->res_max);
		printf(", \"max_penetration\": ");
		lk_cli_json_number(stdout, r->max_penetration);
		printf(", \"kinetic_energy_end\": ");
		lk_cli_json_number(stdout, r->energy_end);
		printf(", \"top_drift\": ");
		if (r->scene->stack_top >= 0)
			lk_cli_json_number(stdout, r->top_drift);
		else
			printf("null");
		printf(", \"fell\": %s, \"fell_at\": ", r->fell ? "true" : "false");
		if (r->fell)
			lk_cli_json_number(stdout, r->fell_at);
		else
			printf("null");
		printf(", \"fallbacks\": %d, \"csv\": ", r->fallbacks);
		lk_cli_json_string(stdout, r->csv);
		printf("}");
	}
	printf("\n]}\n");
}

static int parse_times(const char *s, double *t, int max)
{
	int n = 0;
	while (*s && n < max) {
		char *end;
		double v = strtod(s, &end);
		if (end == s || !isfinite(v) || v < 0)
			return -1;
		t[n++] = v;
		s = end;
		if (*s == ',')
			++s;
		else if (*s)
			return -1;
	}
	return n;
}

/* ------------------------------------------------------------------------------------------- stages */

/* The command line; numbers are range-checked, names are checked by plan_runs. */
typedef struct compare_opts {
	const char *scene_list, *solver_list, *engine_arg, *outdir, *frames_arg;
	double seconds; /* simulated time per run; 0: each scene's default */
	double hz;
	int iters, json, pictures;
} compare_opts;

/* The runs the options ask for, scene by scene (scene x engine x solver), and what they share. */
typedef struct compare_plan {
	int engines[LK_ENGINE_COUNT], nengines;
	char scene_specs[MAX_ITEMS][160], solver_specs[MAX_ITEMS][160];
	int nscenes, nsolvers;
	lk_scene *scenes[MAX_ITEMS];
	run *runs;
	int nruns;           /* planned */
	int ndone;           /* finished, in order: fewer than nruns after a run failed */
	double frame_t[16];  /* --frames */
	int nframes;         /* 0: each scene's default picture times */
	double h;
} compare_plan;

/* What a scene's runs share: simulated time, steps, the step whose problem is solved again for the plot of
 * RES against work, and the times of the pictures. */
typedef struct scene_times {
	double t;
	int steps, conv_step;
	double ft[16];
	int nf;
} scene_times;

/* Reads the command line into o: -1 to go on, else the exit status (--help printed, or a usage error). */
static int parse_options(int argc, char **argv, compare_opts *o)
{
	*o = (compare_opts){DEFAULT_SCENES, DEFAULT_SOLVERS, "both", "lcpkit-report", NULL, 0, 60, 20, 0, 1};
	for (int i = 1; i < argc; ++i) {
		const char *a = argv[i], *v = NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return LK_EXIT_OK;
		}
		if (!strcmp(a, "--json")) {
			o->json = 1;
			continue;
		}
		if (!strcmp(a, "--no-pictures")) {
			o->pictures = 0;
			continue;
		}
		if (a[0] != '-' || !(v = lk_cli_value("compare", argc, argv, &i))) {
			if (a[0] != '-')
				lk_cli_error("compare", "unexpected argument '%s' (see lcpkit compare --help)", a);
			return LK_EXIT_USAGE;
		}
		if (!strcmp(a, "--scene") || !strcmp(a, "--scenes"))
			o->scene_list = v;
		else if (!strcmp(a, "--solvers") || !strcmp(a, "--solver"))
			o->solver_list = v;
		else if (!strcmp(a, "--engine"))
			o->engine_arg = v;
		else if (!strcmp(a, "--out"))
			o->outdir = v;
		else if (!strcmp(a, "--frames"))
			o->frames_arg = v;
		else if (!strcmp(a, "--time")) {
			if (!lk_cli_double(v, &o->seconds) || o->seconds <= 0 || o->seconds > 3600) {
				lk_cli_error("compare", "--time needs seconds in (0, 3600], got '%s'", v);
				return LK_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--hz")) {
			if (!lk_cli_double(v, &o->hz) || o->hz < 1 || o->hz > 10000) {
				lk_cli_error("compare", "--hz needs a rate in [1, 10000], got '%s'", v);
				return LK_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--iters")) {
			if (!lk_cli_int(v, 1, 100000, &o->iters)) {
				lk_cli_error("compare", "--iters needs a whole number in [1, 100000], got '%s'", v);
				return LK_EXIT_USAGE;
			}
		} else {
			lk_cli_error("compare", "unknown option '%s' (see lcpkit compare --help)", a);
			return LK_EXIT_USAGE;
		}
	}
	return -1;
}

/* The solver a spec names on an engine: 'own' is the engine's default. */
static const char *solver_on(const char *spec, int engine)
{
	return !strcmp(spec, "own") ? lk_engine_default_solver((lk_engine)engine) : spec;
}

/* Checks the engines, scenes, solvers and picture times of the options and plans the runs, before anything
 * runs or is written: an engine's own solver runs on that engine only, and a solver no engine runs is an
 * error. LK_EXIT_OK, or the exit status with the message printed. */
static int plan_runs(const compare_opts *o, compare_plan *p)
{
	if (!strcmp(o->engine_arg, "both")) {
		for (int e = 0; e < LK_ENGINE_COUNT; ++e)
			if (lk_engine_available((lk_engine)e))
				p->engines[p->nengines++] = e;
	} else {
		int e = lk_engine_from_name(o->engine_arg);
		if (e < 0) {
			lk_cli_error("compare", "unknown engine '%s' (choose from ode, bullet, both)", o->engine_arg);
			return LK_EXIT_USAGE;
		}
		p->engines[p->nengines++] = e;
	}
	if (p->nengines == 0) {
		lk_cli_error("compare", "no engine was built into this lcpkit");
		return LK_EXIT_USAGE;
	}
	p->nscenes = split_specs(o->scene_list, p->scene_specs, MAX_ITEMS);
	p->nsolvers = split_specs(o->solver_list, p->solver_specs, MAX_ITEMS);
	if (p->nscenes <= 0 || p->nsolvers <= 0) {
		lk_cli_error("compare", "give between 1 and %d scenes and solvers", MAX_ITEMS);
		return LK_EXIT_USAGE;
	}
	char err[512];
	for (int s = 0; s < p->nscenes; ++s) {
		if (lk_scene_create(p->scene_specs[s], &p->scenes[s], err, sizeof err) != LK_OK) {
			lk_cli_error("compare", "%s", err);
			return LK_EXIT_USAGE;
		}
	}
	p->runs = calloc((size_t)p->nscenes * p->nengines * p->nsolvers, sizeof *p->runs);
	if (!p->runs)
		return LK_EXIT_FAIL;
	for (int v = 0; v < p->nsolvers; ++v) {
		int ok_somewhere = 0;
		for (int e = 0; e < p->nengines; ++e)
			if (lk_sim_check_solver((lk_engine)p->engines[e], solver_on(p->solver_specs[v], p->engines[e]), err,
			                        sizeof err) == LK_OK)
				ok_somewhere = 1;
		if (!ok_somewhere) {
			lk_cli_error("compare", "%s", err);
			return LK_EXIT_USAGE;
		}
	}
	for (int s = 0; s < p->nscenes; ++s)
		for (int e = 0; e < p->nengines; ++e)
			for (int v = 0; v < p->nsolvers; ++v) {
				const char *name = solver_on(p->solver_specs[v], p->engines[e]);
				if (lk_sim_check_solver((lk_engine)p->engines[e], name, err, sizeof err) != LK_OK)
					continue;
				run *r = &p->runs[p->nruns++];
				r->scene = p->scenes[s];
				r->scene_index = s;
				r->engine = (lk_engine)p->engines[e];
				snprintf(r->solver, sizeof r->solver, "%s", name);
			}
	if (o->frames_arg) {
		p->nframes = parse_times(o->frames_arg, p->frame_t, 16);
		if (p->nframes <= 0) {
			lk_cli_error("compare", "--frames needs times in seconds like 1,2,4,10, got '%s'", o->frames_arg);
			return LK_EXIT_USAGE;
		}
	}
	p->h = 1.0 / o->hz;
	return LK_EXIT_OK;
}

/* The time of a scene's runs (--time, else 4 s for stacks and 3 s for pools) and its picture times (--frames,
 * else those of 1, 2, 4 and 10 s within the run, and its end). */
static scene_times times_of(const compare_opts *o, const compare_plan *p, const lk_scene *sc)
{
	scene_times st;
	st.t = o->seconds > 0 ? o->seconds : (sc->stack_top >= 0 ? 4.0 : 3.0);
	st.nf = p->nframes;
	if (st.nf > 0) {
		memcpy(st.ft, p->frame_t, sizeof st.ft);
	} else {
		const double def_t[4] = {1, 2, 4, 10};
		for (int k = 0; k < 4; ++k)
			if (def_t[k] <= st.t + 1e-9)
				st.ft[st.nf++] = def_t[k];
		if (st.nf == 0 || st.ft[st.nf - 1] < st.t - 1e-9)
			st.ft[st.nf++] = st.t;
	}
	st.steps = (int)lround(st.t / p->h);
	st.conv_step = st.steps >= 100 ? 100 : st.steps; /* seed 000 plots the 100th step */
	return st;
}

/* Runs the plan in order, each run writing its CSV; stops at the first run that fails. */
static int run_all(const compare_opts *o, compare_plan *p)
{
	char err[512];
	for (int i = 0; i < p->nruns; ++i) {
		run *r = &p->runs[i];
		const lk_scene *sc = r->scene;
		scene_times st = times_of(o, p, sc);
		if (run_one(r, sc, st.t, p->h, o->iters, st.ft, st.nf, st.conv_step, o->outdir, err, sizeof err) != 0) {
			lk_cli_error("compare", "%s on %s with %s: %s", sc->spec, lk_engine_name(r->engine), r->solver, err);
			return LK_EXIT_FAIL;
		}
		p->ndone = i + 1;
	}
	return LK_EXIT_OK;
}

/* DIR/SCENE-convergence.png: RES against work on the problem of step conv_step, for the runs that solved it
 * again (lcpkit's solvers). */
static void plot_convergence(const compare_opts *o, const run *runs, int cnt, const scene_times *st)
{
	const lk_scene *sc = runs[0].scene;
	lk_series ser[MAX_ITEMS * LK_ENGINE_COUNT];
	char names[MAX_ITEMS * LK_ENGINE_COUNT][200], path[1024], title[256];
	int ns = 0;
	for (int k = 0; k < cnt; ++k) {
		const run *q = &runs[k];
		if (!q->conv_res)
			continue;
		snprintf(names[ns], sizeof names[ns], "%s %s", lk_engine_name(q->engine), q->solver);
		ser[ns] = (lk_series){.name = names[ns], .n = q->conv_n, .x = q->conv_work, .y = q->conv_res};
		++ns;
	}
	snprintf(path, sizeof path, "%s/%s-convergence.png", o->outdir, sc->name);
	snprintf(title, sizeof title, "%s: RES against work on the problem of step %d", sc->spec, st->conv_step);
	lk_plot pl = {.title = title, .xlabel = "work (PGS sweeps: row updates / rows)", .ylabel = "RES", .log_y = 1,
	              .width = 900, .height = 520};
	if (ns > 0 && lk_plot_png(path, &pl, ser, ns) != LK_OK)
		lk_cli_error("compare", "cannot write %s", path);
}

/* DIR/SCENE-residual.png: RES after each step, every run. */
static void plot_residual(const compare_opts *o, double h, const run *runs, int cnt, const scene_times *st)
{
	const lk_scene *sc = runs[0].scene;
	double *ts = malloc(sizeof(double) * (size_t)st->steps);
	if (!ts)
		return;
	for (int k = 0; k < st->steps; ++k)
		ts[k] = (k + 1) * h;
	lk_series ser[MAX_ITEMS * LK_ENGINE_COUNT];
	char names[MAX_ITEMS * LK_ENGINE_COUNT][200], path[1024], title[256];
	for (int k = 0; k < cnt; ++k) {
		snprintf(names[k], sizeof names[k], "%s %s", lk_engine_name(runs[k].engine), runs[k].solver);
		ser[k] = (lk_series){.name = names[k], .n = runs[k].steps, .x = ts, .y = runs[k].res};
	}
	snprintf(path, sizeof path, "%s/%s-residual.png", o->outdir, sc->name);
	snprintf(title, sizeof title, "%s: RES after each step (%d iterations)", sc->spec, o->iters);
	lk_plot pl = {.title = title, .xlabel = "time (s)", .ylabel = "RES", .log_y = 1, .width = 900, .height = 520};
	if (lk_plot_png(path, &pl, ser, cnt) != LK_OK)
		lk_cli_error("compare", "cannot write %s", path);
	free(ts);
}

/* DIR/SCENE-frames.png: the runs side by side (columns) at the picture times (rows). */
static void picture_frames(const compare_opts *o, const run *runs, int cnt, const scene_times *st)
{
	const lk_scene *sc = runs[0].scene;
	lk_pose *grid = malloc(sizeof(lk_pose) * (size_t)st->nf * cnt * sc->nbodies);
	if (!grid)
		return;
	const char *ctitles[MAX_ITEMS * LK_ENGINE_COUNT], *rtitles[16];
	char names[MAX_ITEMS * LK_ENGINE_COUNT][200], rbuf[16][32], path[1024];
	for (int row = 0; row < st->nf; ++row) {
		snprintf(rbuf[row], sizeof rbuf[row], "%g s", st->ft[row]);
		rtitles[row] = rbuf[row];
		for (int col = 0; col < cnt; ++col)
			memcpy(grid + ((size_t)row * cnt + col) * sc->nbodies, runs[col].frames + (size_t)row * sc->nbodies,
			       sizeof(lk_pose) * sc->nbodies);
	}
	for (int col = 0; col < cnt; ++col) {
		snprintf(names[col], sizeof names[col], "%s %s", lk_engine_name(runs[col].engine), runs[col].solver);
		ctitles[col] = names[col];
	}
	snprintf(path, sizeof path, "%s/%s-frames.png", o->outdir, sc->name);
	if (lk_render_grid_png(path, sc, st->nf, cnt, ctitles, rtitles, grid, 220) != LK_OK)
		lk_cli_error("compare", "cannot write %s", path);
	free(grid);
}

/* The plots and pictures of each scene whose runs all finished; one that cannot be written is reported and
 * left out. */
static void write_plots(const compare_opts *o, const compare_plan *p)
{
	for (int first = 0, last = 0; first < p->ndone; first = last + 1) {
		const lk_scene *sc = p->runs[first].scene;
		for (last = first; last + 1 < p->nruns && p->runs[last + 1].scene == sc; ++last)
			;
		if (last >= p->ndone)
			break;
		scene_times st = times_of(o, p, sc);
		int cnt = last - first + 1;
		plot_convergence(o, &p->runs[first], cnt, &st);
		plot_residual(o, p->h, &p->runs[first], cnt, &st);
		if (o->pictures && st.nf > 0)
			picture_frames(o, &p->runs[first], cnt, &st);
	}
}

/* DIR/report.md: the settings, the table of the finished runs, what its columns mean and each scene's plots;
 * then its path on stdout (the table went there before, unless --json). LK_EXIT_FAIL if it cannot be
 * written. */
static int write_report(const compare_opts *o, const compare_plan *p)
{
	int rc = LK_EXIT_OK;
	char path[1024];
	snprintf(path, sizeof path, "%s/report.md", o->outdir);
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, "# lcpkit compare\n\nSettings: %d iterations per step, %g Hz, engines:", o->iters, o->hz);
		for (int e = 0; e < p->nengines; ++e)
			fprintf(f, " %s", lk_engine_name((lk_engine)p->engines[e]));
		fprintf(f, ". Times are medians over the steps of each run.\n\n");
		print_table(f, p->runs, p->ndone, 1);
		fprintf(f, "\nColumns: solver ms is the constraint solve alone, step ms the whole engine step; RES is the\n"
		           "natural residual ||lambda - mid(lo, lambda - w, hi)|| of the step's own rows after the solve;\n"
		           "max pen. the deepest contact penetration; KE end the kinetic energy at the end; top drift the\n"
		           "horizontal displacement of the top body; fell the time the top sank by half its height.\n\n");
		for (int s = 0; s < p->nscenes; ++s) {
			fprintf(f, "## %s\n\n", p->scenes[s]->spec);
			fprintf(f, "![residual over the steps](%s-residual.png)\n\n", p->scenes[s]->name);
			fprintf(f, "![residual against work](%s-convergence.png)\n\n", p->scenes[s]->name);
			if (o->pictures)
				fprintf(f, "![frames](%s-frames.png)\n\n", p->scenes[s]->name);
		}
		fprintf(f, "Per-step values of each run are in the CSV files next to this report.\n");
		fclose(f);
	} else {
		lk_cli_error("compare", "cannot write %s", path);
		rc = LK_EXIT_FAIL;
	}
	if (!o->json)
		printf("\nreport: %s/report.md\n", o->outdir);
	return rc;
}

static void free_plan(compare_plan *p)
{
	for (int i = 0; p->runs && i < p->nruns; ++i)
		free_run(&p->runs[i]);
	free(p->runs);
	for (int s = 0; s < MAX_ITEMS; ++s)
		lk_scene_destroy(p->scenes[s]);
}

int lk_cmd_compare(int argc, char **argv)
{
	compare_opts o;
	int rc = parse_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	compare_plan p;
	memset(&p, 0, sizeof p);
	rc = plan_runs(&o, &p);
	if (rc == LK_EXIT_OK && lk_cli_mkdirs(o.outdir) != 0) {
		lk_cli_error("compare", "cannot create directory '%s': %s", o.outdir, strerror(errno));
		rc = LK_EXIT_FAIL;
	}
	if (rc == LK_EXIT_OK) {
		rc = run_all(&o, &p);
		write_plots(&o, &p);
		if (o.json)
			print_json(p.runs, p.ndone, o.outdir);
		else
			print_table(stdout, p.runs, p.ndone, 0);
		if (write_report(&o, &p) != LK_EXIT_OK)
			rc = LK_EXIT_FAIL;
	}
	free_plan(&p);
	return rc;
}

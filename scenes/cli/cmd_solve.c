/* lcpkit solve: solve problem files with any solver and report what happened. */
#include "cli.h"
#include "lcpkit/io.h"
#include "peer_siconos.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

static int write_history(const char *path, const lk_history *h)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "iteration,res,theta,fischer,seconds,row_updates\n");
	for (int i = 0; i < h->count; ++i) {
		const lk_history_entry *e = &h->entries[i];
		fprintf(f, "%d,%.17g,%.17g,%.17g,%.9g,%lld\n", e->iteration, e->res, e->theta, e->fischer, e->seconds,
		        (long long)e->row_updates);
	}
	return fclose(f) == 0 ? 0 : -1;
}

/* row,lambda[,w] for every row, full precision */
static int write_solution(const char *path, lk_problem *p, int with_w)
{
	int n = lk_problem_row_count(p);
	double *w = NULL;
	if (with_w) {
		w = malloc(((size_t)n + 1) * sizeof *w);
		if (!w || lk_problem_apply(p, lk_problem_lambda(p), w, 1) != LK_OK) {
			free(w);
			return -1;
		}
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		free(w);
		return -1;
	}
	fprintf(f, with_w ? "row,lambda,w\n" : "row,lambda\n");
	const double *l = lk_problem_lambda(p);
	for (int i = 0; i < n; ++i) {
		if (with_w)
			fprintf(f, "%d,%.17g,%.17g\n", i, l[i], w[i]);
		else
			fprintf(f, "%d,%.17g\n", i, l[i]);
	}
	free(w);
	return fclose(f) == 0 ? 0 : -1;
}

/* The exit status a solve earns (usage text, docs/solvers.md "Exit status"). */
static int solve_status(const lk_stats *st, double tol, lk_merit merit)
{
	switch (st->stop_reason) {
	case LK_STOP_BAD_DIAGONAL:
	case LK_STOP_LOCAL_MINIMUM:
	case LK_STOP_NON_DESCENT:
	case LK_STOP_NONFINITE:
	case LK_STOP_DIVERGED:
		return LK_EXIT_SOLVER_FAILED;
	default:
		break;
	}
	if (tol > 0 && !((merit == LK_MERIT_FC3D ? st->fc3d_final : st->res_final) < tol))
		return LK_EXIT_TOL_UNMET;
	return LK_EXIT_OK;
}

static void print_json(const char *file, const char *spec, const lk_stats *s)
{
	printf("{\"file\": ");
	lk_cli_json_string(stdout, file);
	printf(", \"solver\": ");
	lk_cli_json_string(stdout, spec);
	printf(", \"rows\": %d, \"bodies\": %d, \"iterations\": %d", s->rows, s->bodies, s->iterations);
	const struct {
		const char *key;
		double value;
	} num[] = {{"res_initial", s->res_initial},     {"res_final", s->res_final},
	           {"theta_initial", s->theta_initial}, {"theta_final", s->theta_final},
	           {"fischer_final", s->fischer_final}, {"fc3d_final", s->fc3d_final}, {"seconds", s->seconds},
	           {"work", s->work}};
	for (size_t k = 0; k < sizeof num / sizeof num[0]; ++k) {
		printf(", \"%s\": ", num[k].key);
		lk_cli_json_number(stdout, num[k].value);
	}
	printf(", \"row_updates\": %lld, \"stop_reason\": ", (long long)s->row_updates);
	lk_cli_json_string(stdout, lk_stop_reason_name(s->stop_reason));
	printf("}\n");
}

/* The time of `repeat` runs: the minimum, and the spread (max - min) / min */
static double spread_of(const double *t, int n, double *min_out)
{
	double lo = INFINITY, hi = 0.0;
	for (int k = 0; k < n; ++k) {
		lo = fmin(lo, t[k]);
		hi = fmax(hi, t[k]);
	}
	*min_out = lo;
	return lo > 0 ? (hi - lo) / lo : 0.0;
}

static void peer_line(const lk_solve_args *a, const char *file, const char *name, int iterations, double error,
                      double seconds, double spread, const char *verdict)
{
	if (a->json) {
		printf("{\"file\": ");
		lk_cli_json_string(stdout, file);
		printf(", \"solver\": ");
		lk_cli_json_string(stdout, name);
		printf(", \"iterations\": %d, \"fc3d_final\": ", iterations);
		lk_cli_json_number(stdout, error);
		printf(", \"seconds\": ");
		lk_cli_json_number(stdout, seconds);
		printf(", \"spread\": ");
		lk_cli_json_number(stdout, spread);
		printf(", \"verdict\": ");
		lk_cli_json_string(stdout, verdict);
		printf("}\n");
	} else if (!(seconds >= 0)) {
		printf("    %-44s %10s  %-9s  %10s  %6s  %s\n", name, "-", "-", "-", "-", verdict); /* a solver that failed */
	} else {
		printf("    %-44s %10d  %.3e  %10.3g  %5.1f%%  %s\n", name, iterations, error, seconds, 100.0 * spread,
		       verdict);
	}
}

/* Siconos's error of p's current lambda (an lcpkit solver's answer) on f, NaN where it cannot be had */
static double siconos_error_of(const lk_peer_fc3d *f, lk_problem *p, double tol)
{
	double e = NAN;
	return lk_peer_siconos_error(f, lk_problem_lambda(p), tol, &e) == LK_OK ? e : NAN;
}

/* Whole calls of lk_solve, timed on the clock the user chose (--clock), with lcpkit's own statistics clock the wall
 * clock during them: a read of the thread's CPU clock is a system call (1.6 us on the development machine, a
 * virtual one, against 30 ns for the wall clock), lk_solve asked for statistics reads its clock twice, and a whole
 * call timed on the CPU clock would count two reads that a user on the default clock does not pay and that
 * Siconos's call, timed from outside, does not make: on problems of a few contacts, half of lcpkit's call */
static lk_status whole_call(lk_problem *p, const lk_solver_config *cfg, lk_stats *st, int calls, double *seconds)
{
	/* `calls` calls timed together, as Siconos's are (lk_peer_batch_calls): each a whole solve from the same start,
	 * the last one's statistics kept (the others ask for none, as Siconos's calls read no clock) */
	const lk_clock clock = lk_stats_clock();
	const double t0 = lk_stats_now();
	lk_set_stats_clock(LK_CLOCK_WALL);
	lk_status s = LK_OK;
	for (int k = 0; k < calls && s == LK_OK; ++k)
		s = lk_solve(p, cfg, k + 1 == calls ? st : NULL, NULL);
	lk_set_stats_clock(clock);
	*seconds = (lk_stats_now() - t0) / calls;
	return s;
}

/* --peer siconos: Siconos's fc3d_nsgs and fc3d_nsn_ac (in the plane fc2d_nsgs and fc2d_cpg) on the contacts of p,
 * beside each lcpkit solver (the solve's own spec, then each further --solver), all from zero. Every error in the
 * table is Siconos's own function's, on every solver's answer; every time a whole call, as Siconos's driver's is:
 * lcpkit's with its set-up and final statistics, which its own time (lk_stats.seconds) leaves out and which on a
 * problem of a few contacts are most of it */
static int peer_compare(const lk_solve_args *a, const char *file, lk_problem *p)
{
	lk_peer_fc3d f;
	char err[256];
	lk_peer_set_memory_limit(a->peer_memory);
	if (lk_peer_fc3d_make(p, 0, &f, err, sizeof err) != LK_OK) {
		lk_cli_error("solve", "%s: --peer siconos: %s", file, err);
		return LK_EXIT_FAIL;
	}
	const double tol = a->cfg.tol_abs;
	double *r = malloc(sizeof(double) * (size_t)f.dim * f.nc), *t = malloc(sizeof(double) * (size_t)a->repeat);
	int rc = r && t ? LK_EXIT_OK : LK_EXIT_FAIL;
	if (!a->json && rc == LK_EXIT_OK) {
		printf("  peer siconos: %d contacts%s, every solver from zero, judged by Siconos's error (%s),\n"
		       "  tolerance %g, at most %d iterations for Siconos; time: of the whole call (set-up and statistics\n"
		       "  included), the minimum of %d run%s and the spread\n",
		       f.nc, f.dim == 2 ? " of the plane" : "", f.dim == 2 ? "fc2d_compute_error" : "fc3d_compute_error", tol,
		       a->peer_iters, a->repeat, a->repeat > 1 ? "s" : "");
		printf("    %-44s %10s  %-9s  %10s  %6s  %s\n", "solver", "iterations", "error", "time (s)", "spread",
		       "verdict");
	}
	/* lcpkit's solvers, the solve's own first; one that fails (a method that refuses the problem) has its row with
	 * the reason, the others theirs, and the exit status says so */
	int failed = 0;
	/* the summary's: the fastest lcpkit solver to the tolerance, or where none reached it the lowest error */
	char best[300] = "";
	double best_time = INFINITY, best_error = INFINITY;
	int best_solved = 0;
	for (int k = -1; rc == LK_EXIT_OK && k < a->nmore; ++k) {
		const char *spec = k < 0 ? a->spec : a->more_spec[k];
		/* the table shows none of lcpkit's own statistics (the error is Siconos's function's on the answer): the
		 * solver runs as a caller who wants only the answer runs it, measure=0 unless the spec names it, as
		 * Siconos's call returns the error of its last check and measures no start. A tolerance's checks still
		 * run, and the methods that can run away still measure for their guard (docs/solvers.md, "measure") */
		lk_solver_config answer = k < 0 ? a->cfg : a->more_cfg[k];
		if (!lk_config_spec_sets(spec, "measure"))
			answer.measure = 0;
		const lk_solver_config *cfg = &answer;
		lk_stats sk;
		/* first a call of one iteration, not timed, as Siconos's process makes one: the timed calls find the
		 * memory and caches a solve in a running program finds (timed cold, a first call of a few contacts paid
		 * its page faults, twenty times the others) */
		lk_solver_config warm = *cfg;
		warm.max_iterations = 1;
		double unused;
		(void)whole_call(p, &warm, &sk, 1, &unused); /* one iteration may be too few for a method (ipm): not its verdict */
		double single = 0.0;
		lk_status s = whole_call(p, cfg, &sk, 1, &single);
		const int calls = lk_peer_batch_calls(single);
		int rep = 0;
		if (calls == 1)
			t[rep++] = single; /* a call long enough to be timed alone is the first run */
		for (; rep < a->repeat && s == LK_OK; ++rep)
			s = whole_call(p, cfg, &sk, calls, &t[rep]);
		char name[300];
		snprintf(name, sizeof name, "lcpkit %s", spec);
		if (s != LK_OK) {
			char why[600];
			snprintf(why, sizeof why, "failed: %s", lk_problem_error(p));
			lk_cli_error("solve", "%s: %s: %s", file, spec, lk_problem_error(p));
			peer_line(a, file, name, 0, NAN, NAN, NAN, why);
			failed = 1;
			continue;
		}
		double tmin, sp = spread_of(t, a->repeat, &tmin);
		const double e = siconos_error_of(&f, p, tol);
		peer_line(a, file, name, sk.iterations, e, tmin, sp, e < tol ? "solved" : lk_stop_reason_name(sk.stop_reason));
		if (e < tol ? !best_solved || tmin < best_time : !best_solved && e < best_error) {
			snprintf(best, sizeof best, "%s", name);
			best_time = tmin;
			best_error = e;
			best_solved = e < tol;
		}
	}
	double peer_time[LK_PEER_FC3D_COUNT] = {0};
	int peer_solved[LK_PEER_FC3D_COUNT] = {0};
	for (int s = 0; rc == LK_EXIT_OK && s < LK_PEER_FC3D_COUNT; ++s) {
		lk_peer_result pr;
		for (int k = 0; k < a->repeat && rc == LK_EXIT_OK; ++k) {
			if (lk_peer_siconos_fc3d_solve((lk_peer_fc3d_solver)s, &f, r, a->peer_iters, tol, &pr) != LK_OK)
				rc = LK_EXIT_FAIL;
			t[k] = pr.seconds;
		}
		if (rc != LK_EXIT_OK)
			break;
		double tmin, sp = spread_of(t, a->repeat, &tmin);
		if (pr.info == LK_PEER_ABNORMAL) {
			failed = 1;
			tmin = sp = NAN;
		}
		peer_time[s] = tmin;
		peer_solved[s] = pr.info != LK_PEER_ABNORMAL && pr.error < tol;
		peer_line(a, file, lk_peer_fc3d_name(f.dim, (lk_peer_fc3d_solver)s), pr.iterations, pr.error, tmin, sp,
		          pr.info == LK_PEER_ABNORMAL ? "failed: Siconos's process ended without a result (out of the memory "
		                                        "it may use, --peer-memory, or a crash)"
		          : pr.error < tol            ? "solved"
		          : pr.info                   ? "not solved (Siconos: no convergence)"
		                                      : "not solved");
	}
	/* one line a user reads first: lcpkit's fastest to the tolerance against Siconos's solvers' times */
	if (!a->json && rc == LK_EXIT_OK && best[0]) {
		if (best_solved) {
			printf("  fastest to %g: %s, %.3g s", tol, best, best_time);
			const char *sep = ":";
			for (int s = 0; s < LK_PEER_FC3D_COUNT; ++s)
				if (peer_time[s] > 0) {
					printf("%s %.2gx %s's time%s", sep, best_time / peer_time[s],
					       lk_peer_fc3d_name(f.dim, (lk_peer_fc3d_solver)s), peer_solved[s] ? "" : " (not solved)");
					sep = ",";
				}
			printf("\n");
		} else {
			printf("  no lcpkit solver reached %g; the lowest error %.2e: %s\n", tol, best_error, best);
		}
	}
	free(r);
	free(t);
	lk_peer_fc3d_free(&f);
	return failed && rc == LK_EXIT_OK ? LK_EXIT_FAIL : rc;
}

int lk_cmd_solve(int argc, char **argv)
{
	lk_solve_args args;
	int rc = lk_solve_parse_args(argc, argv, &args);
	if (rc >= 0) {
		free((void *)args.files);
		return rc;
	}
	rc = LK_EXIT_OK;
	const char **files = args.files, *history_path = args.history_path, *canon = args.canon;
	int nfiles = args.nfiles, json = args.json;
	lk_solver_config cfg = args.cfg;
	char err[512];

	for (int f = 0; f < nfiles; ++f) {
		lk_problem *p = NULL;
		if (lk_problem_read(files[f], NULL, &p, NULL, err, sizeof err) != LK_OK) {
			lk_cli_error("solve", "%s", err);
			rc = LK_EXIT_FAIL;
			continue;
		}
		lk_history hist = {0, 0, 0};
		if (history_path) {
			/* PGS-SM and the staggered schedules record more than one entry per outer iteration */
			long cap = 64L * cfg.max_iterations + 1;
			hist.capacity = (int)(cap < 10000000 ? cap : 10000000);
			hist.entries = calloc((size_t)hist.capacity, sizeof *hist.entries);
			if (!hist.entries) {
				lk_cli_error("solve", "out of memory for the history");
				lk_problem_destroy(p);
				rc = LK_EXIT_FAIL;
				break;
			}
		}
		lk_stats st;
		/* --repeat: every run from the same start; the minimum time stands for the solve */
		const int n = lk_problem_row_count(p);
		double *start = malloc(sizeof(double) * ((size_t)n + 1)), *times = malloc(sizeof(double) * (size_t)args.repeat);
		if (!start || !times) {
			lk_cli_error("solve", "out of memory");
			free(start);
			free(times);
			free(hist.entries);
			lk_problem_destroy(p);
			rc = LK_EXIT_FAIL;
			break;
		}
		memcpy(start, lk_problem_lambda(p), sizeof(double) * (size_t)n);
		lk_status s = LK_OK;
		for (int k = 0; k < args.repeat && s == LK_OK; ++k) {
			lk_problem_set_lambda(p, start, n);
			s = lk_solve(p, &cfg, &st, history_path ? &hist : NULL);
			times[k] = st.seconds;
		}
		double spread = spread_of(times, args.repeat, &st.seconds);
		free(start);
		free(times);
		if (s != LK_OK) {
			lk_cli_error("solve", "%s: %s", files[f], lk_problem_error(p));
			rc = LK_EXIT_FAIL;
		} else {
			if (json) {
				print_json(files[f], canon, &st);
			} else {
				printf("%s\n", files[f]);
				printf("  solver      %s\n", canon);
				printf("  rows        %d (%d bodies)\n", st.rows, st.bodies);
				printf("  iterations  %d (stopped: %s; work %.1f sweep-equivalents)\n", st.iterations,
				       lk_stop_reason_name(st.stop_reason), st.work);
				printf("  RES         %.6e -> %.6e\n", st.res_initial, st.res_final);
				printf("  theta       %.6e -> %.6e\n", st.theta_initial, st.theta_final);
				printf("  fc3d error  %.6e (Siconos's relative error)\n", st.fc3d_final);
				if (args.repeat > 1)
					printf("  time        %.6f s (the minimum of %d runs; spread %.1f%%)\n", st.seconds, args.repeat,
					       100.0 * spread);
				else
					printf("  time        %.6f s\n", st.seconds);
			}
			if (history_path && write_history(history_path, &hist) != 0) {
				lk_cli_error("solve", "cannot write %s", history_path);
				rc = LK_EXIT_FAIL;
			}
			if (args.out_path && write_solution(args.out_path, p, args.out_w) != 0) {
				lk_cli_error("solve", "cannot write %s", args.out_path);
				rc = LK_EXIT_FAIL;
			}
			if (args.peer && peer_compare(&args, files[f], p) != LK_EXIT_OK)
				rc = LK_EXIT_FAIL;
			int fs = solve_status(&st, args.tol, cfg.merit);
			if (fs != LK_EXIT_OK && !json)
				fprintf(stderr, "lcpkit solve: %s: %s\n", files[f],
				        fs == LK_EXIT_TOL_UNMET ? "--tol not met" : "the solver stopped on a failure");
			if (fs > rc)
				rc = fs;
		}
		free(hist.entries);
		lk_problem_destroy(p);
	}
	free((void *)files);
	return rc;
}

/* lcpkit bench pgs-sm: PGS-SM against PGS, merit against work in PGS sweeps.
 *
 * Silcowitz, Niebe & Erleben compare PGS-SM with PGS on eight set-ups (their Fig. 2), measuring time in
 * PGS iterations (sec. 5). The same here, on generated one-step problems mirroring their cases: box stacks
 * small and large (c), a heavy box on light boxes (d), a hinge chain held by its joint limits (a), the same
 * with a heavy last link (b), boxes at rest on an incline (e), and a larger random packing (h). For each case
 * and start (lambda = 0; lambda = 0 with the relative rule of the PGS phase, sec. 5.1; a warm start) PGS-SM
 * runs 1, 2, 4, 8 outer iterations (k_pgs = 25, k_sm = 5 as in sec. 5); its work, counted in row updates, is
 * converted to sweeps (row updates / rows), and PGS gets the same number of sweeps from the same start.
 * Also reported: how many PGS sweeps it takes to reach PGS-SM's final RES. */
#include "bench.h"
#include "bench_util.h"
#include "cli_util.h"
#include "lcpkit/generate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BUDGETS 8
#define MATCH_CAP 100000 /* PGS sweeps tried when matching PGS-SM's accuracy */

typedef struct bcase {
	const char *name;
	const char *what;
	int full_only;
	lk_gen_kind kind; /* or -1: limited chain */
	int n;
	double mu, mass_ratio;
} bcase;

static const bcase cases[] = {
	{"boxstack-5", "5 boxes, 4 contacts per face, mu 0.5 (Fig. 2c, small)", 0, LK_GEN_BOXSTACK, 5, 0.5, 1},
	{"boxstack-20", "20 boxes, mu 0.5 (Fig. 2c)", 1, LK_GEN_BOXSTACK, 20, 0.5, 1},
	{"heavy-on-light", "4 boxes, top one 100x heavier (Fig. 2d)", 0, LK_GEN_HEAVY_ON_LIGHT, 4, 0.5, 100},
	{"chain-limits", "10 hinged links held by their limits (Fig. 2a)", 0, (lk_gen_kind)-1, 10, 0, 1},
	{"chain-limits-heavy", "the same, last link 100x heavier (Fig. 2b)", 1, (lk_gen_kind)-1, 10, 0, 100},
	{"incline", "4 boxes at rest on a 0.3 rad slope, mu 0.5 (Fig. 2e)", 0, LK_GEN_INCLINE, 4, 0.5, 1},
	{"packing-200", "200 spheres, random packing, mu 0.5 (Fig. 2h, large)", 1, LK_GEN_PACKING, 200, 0.5, 1},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* ------------------------------------------------------------------------------------- limited chain */

static void chain_row(lk_row_def *r, int a, int b, const double anchor[3])
{
	*r = lk_default_row_def();
	r->body[0] = a;
	r->body[1] = b;
	memcpy(r->point, anchor, sizeof r->point);
}

/* A cantilever of n links (1 x 0.2 x 0.2, mass 1, the last one mass_ratio) along +x from a wall, joined by
 * hinges about y. Under gravity every link would droop (rotate about +y relative to its parent); a joint
 * limit per hinge stops that, so each limit row is on its stop and carries the moment of the links beyond.
 * Rows per hinge: 3 ball rows and 2 hinge rows (bilateral) and 1 limit row (lo = 0, hi = inf). */
static lk_problem *limited_chain(int n, double tip_mass, double g, char *err, size_t esz)
{
	const double h = 1.0 / 60.0, len = 1.0, wid = 0.2;
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	if (!p) {
		snprintf(err, esz, "out of memory");
		return NULL;
	}
	lk_status st = LK_OK;
	for (int i = 0; i < n && st == LK_OK; ++i) {
		double m = i == n - 1 ? tip_mass : 1.0;
		double Ix = m * (2 * wid * wid) / 12.0, Iyz = m * (len * len + wid * wid) / 12.0;
		lk_body_def b = lk_default_body_def();
		for (int k = 0; k < 3; ++k)
			b.inv_mass[k] = 1.0 / m;
		b.inv_inertia[0] = 1.0 / Ix;
		b.inv_inertia[4] = 1.0 / Iyz;
		b.inv_inertia[8] = 1.0 / Iyz;
		b.u[2] = -g * h;
		st = lk_problem_add_body(p, &b, NULL);
	}
	for (int i = 0; i < n && st == LK_OK; ++i) {
		int a = i, b = i == 0 ? LK_STATIC : i - 1;
		double anchor[3] = {len * i, 0, 0};
		double pa[3] = {len * (i + 0.5), 0, 0}, pb[3] = {len * (i - 0.5), 0, 0};
		/* ball: v_a + w_a x (anchor - pa) - (v_b + w_b x (anchor - pb)) = 0 along each axis */
		for (int k = 0; k < 3 && st == LK_OK; ++k) {
			lk_row_def r;
			chain_row(&r, a, b, anchor);
			double e[3] = {0, 0, 0};
			e[k] = 1.0;
			double ra[3], rb[3];
			for (int d = 0; d < 3; ++d) {
				ra[d] = anchor[d] - pa[d];
				rb[d] = anchor[d] - pb[d];
			}
			/* e . (w x r) = w . (r x e) */
			double rxe_a[3] = {ra[1] * e[2] - ra[2] * e[1], ra[2] * e[0] - ra[0] * e[2], ra[0] * e[1] - ra[1] * e[0]};
			double rxe_b[3] = {rb[1] * e[2] - rb[2] * e[1], rb[2] * e[0] - rb[0] * e[2], rb[0] * e[1] - rb[1] * e[0]};
			for (int d = 0; d < 3; ++d) {
				r.J[0][d] = e[d];
				r.J[0][3 + d] = rxe_a[d];
				if (b != LK_STATIC) {
					r.J[1][d] = -e[d];
					r.J[1][3 + d] = -rxe_b[d];
				}
			}
			r.kind = LK_ROW_JOINT;
			st = lk_problem_add_row(p, &r, NULL);
		}
		/* hinge about y: no relative rotation about x and z */
		for (int k = 0; k < 3 && st == LK_OK; k += 2) {
			lk_row_def r;
			chain_row(&r, a, b, anchor);
			r.J[0][3 + k] = 1.0;
			if (b != LK_STATIC)
				r.J[1][3 + k] = -1.0;
			r.kind = LK_ROW_JOINT;
			st = lk_problem_add_row(p, &r, NULL);
		}
		/* the limit: relative rotation rate about y <= 0, i.e. w = -(w_a,y - w_b,y) >= 0 */
		if (st == LK_OK) {
			lk_row_def r;
			chain_row(&r, a, b, anchor);
			r.J[0][4] = -1.0;
			if (b != LK_STATIC)
				r.J[1][4] = 1.0;
			r.lo = 0.0;
			r.hi = INFINITY;
			r.kind = LK_ROW_LIMIT;
			st = lk_problem_add_row(p, &r, NULL);
		}
	}
	if (st != LK_OK) {
		snprintf(err, esz, "%s", lk_problem_error(p));
		lk_problem_destroy(p);
		return NULL;
	}
	return p;
}

/* The case's problem, with gravity scaled by gscale (the warm start comes from a lighter load). */
static lk_problem *make_case(const bcase *bc, double gscale, char *err, size_t esz)
{
	if ((int)bc->kind < 0)
		return limited_chain(bc->n, bc->mass_ratio, 9.81 * gscale, err, esz);
	lk_gen_params g = lk_default_gen_params(bc->kind);
	g.n = bc->n;
	g.mu = bc->mu;
	g.mass_ratio = bc->mass_ratio;
	g.gravity *= gscale;
	lk_problem *p = NULL;
	if (lk_generate(&g, &p, err, esz) != LK_OK)
		return NULL;
	return p;
}

/* -------------------------------------------------------------------------------------------- runs */

/* The variants measured on every case: where the solve starts and which PGS-SM options it uses. */
typedef struct variant {
	const char *name;
	int warm;         /* start from the solution of the same scene under 0.9 g, else from 0 */
	double pgs_rtol;  /* sec. 5.1: relative rule for the PGS phase */
	int quick;        /* also in --quick */
} variant;

static const variant variants[] = {
	{"cold", 0, 0.0, 1},
	{"cold+rtol", 0, 1e-4, 0},
	{"warm", 1, 0.0, 1},
};
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))

typedef struct run {
	lk_stats st;
	double seconds; /* median */
} run;

/* Solves from start (or 0) `repeat` times; the stats of the last, the median time of lk_solve proper. */
static int solve_repeated(lk_problem *p, const lk_solver_config *cfg, const double *start, int repeat, run *out)
{
	double t[64];
	int n = lk_problem_row_count(p);
	if (repeat > 64)
		repeat = 64;
	for (int r = 0; r < repeat; ++r) {
		if (lk_problem_set_lambda(p, start, n) != LK_OK || lk_solve(p, cfg, &out->st, NULL) != LK_OK)
			return -1;
		t[r] = out->st.seconds;
	}
	out->seconds = lk_cli_median(t, repeat);
	return 0;
}

static lk_solver_config sm_config(int outer, double pgs_rtol)
{
	lk_solver_config c = lk_default_config(LK_METHOD_PGS_SM);
	c.max_iterations = outer;
	c.tol_abs = 0; /* the budgets are the point: no early stop on the merit */
	c.pgs_sm.pgs_rel_tol = pgs_rtol;
	return c;
}

static lk_solver_config pgs_config(int sweeps)
{
	lk_solver_config c = lk_default_config(LK_METHOD_PGS);
	c.max_iterations = sweeps < 1 ? 1 : sweeps;
	return c;
}

/* PGS sweeps needed to bring RES below target, or -1 beyond MATCH_CAP. */
static int sweeps_to_match(lk_problem *p, const double *start, double target)
{
	lk_solver_config c = pgs_config(MATCH_CAP);
	c.tol_abs = target;
	c.merit = LK_MERIT_RES;
	lk_stats st;
	if (lk_problem_set_lambda(p, start, lk_problem_row_count(p)) != LK_OK || lk_solve(p, &c, &st, NULL) != LK_OK)
		return -1;
	return st.stop_reason == LK_STOP_ABSOLUTE ? st.iterations : -1;
}

/* The warm start: the solution of the scene under 0.9 g, as the previous time step of a resting scene would
 * leave it (found by PGS-SM run long; any accurate lambda would do, both methods get the same). */
static int warm_start(const bcase *bc, double *out, int n, char *err, size_t esz)
{
	lk_problem *q = make_case(bc, 0.9, err, esz);
	if (!q)
		return -1;
	lk_solver_config c = sm_config(40, 1e-4);
	c.tol_abs = 1e-28;
	int ok = lk_problem_row_count(q) == n && lk_solve(q, &c, NULL, NULL) == LK_OK;
	if (ok)
		memcpy(out, lk_problem_lambda(q), (size_t)n * sizeof(double));
	else
		snprintf(err, esz, "warm start: %s", lk_problem_error(q));
	lk_problem_destroy(q);
	return ok ? 0 : -1;
}

static int write_curves(FILE *f, const char *name, const char *vname, lk_problem *p, const double *start,
                        const lk_solver_config *sm, double sweeps)
{
	enum { CAP = 20000 };
	lk_history_entry *e = malloc(CAP * sizeof *e);
	if (!e)
		return -1;
	int n = lk_problem_row_count(p);
	for (int m = 0; m < 2; ++m) {
		lk_history h = {e, CAP, 0};
		lk_solver_config c = m ? pgs_config((int)ceil(sweeps)) : *sm;
		lk_stats st;
		if (lk_problem_set_lambda(p, start, n) != LK_OK || lk_solve(p, &c, &st, &h) != LK_OK) {
			free(e);
			return -1;
		}
		for (int i = 0; i < h.count; ++i)
			fprintf(f, "%s,%s,%s,%.6f,%.17g,%.17g\n", name, vname, m ? "pgs" : "pgs-sm",
			        (double)e[i].row_updates / n, e[i].res, e[i].fischer);
	}
	free(e);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit bench pgs-sm [--quick] [--repeat N] [--out DIR]\n\n"
	        "PGS-SM (k_pgs = 25, k_sm = 5) against PGS at equal work, counted in PGS sweeps, on generated\n"
	        "problems mirroring Silcowitz, Niebe & Erleben's test cases, from lambda = 0 (cold), from lambda = 0\n"
	        "with the relative rule for the PGS phase (cold+rtol, pgs_rtol = 1e-4), and from the solution under\n"
	        "0.9 g (warm). Prints a table and writes DIR/pgs_sm.csv (one line per case, variant and budget)\n"
	        "and DIR/pgs_sm_curves.csv (merit against work, for plots).\n\n"
	        "  --quick      the four small cases, cold and warm, budgets of 1 and 4 outer iterations, 3 repeats\n"
	        "  --repeat N   timing repeats per run, median reported (default 5)\n"
	        "  --out DIR    output directory (default bench-out)\n");
}

int lk_bench_pgs_sm(int argc, char **argv)
{
	int quick = 0, repeat = 0; /* 0 until --repeat gives it */
	const char *out = "bench-out";
	const lk_cli_option table[] = {
		LK_CLI_OPT_FLAG("--quick", &quick),
		LK_CLI_OPT_INT("--repeat", &repeat, 1, 64),
		LK_CLI_OPT_STRING("--out", &out),
		LK_CLI_OPT_END};
	const int parsed = lk_cli_parse("bench pgs-sm", argc, argv, 1, table, usage, NULL, NULL);
	if (parsed >= 0)
		return parsed;
	if (repeat == 0)
		repeat = quick ? 3 : 5;
	static const int budgets_full[] = {1, 2, 4, 8}, budgets_quick[] = {1, 4};
	const int *budgets = quick ? budgets_quick : budgets_full;
	int nbudgets = quick ? 2 : 4;

	lk_bench_csv files[2] = {{.name = "pgs_sm.csv"}, {.name = "pgs_sm_curves.csv"}};
	if (lk_bench_open_csvs("bench pgs-sm", out, files, 2) != 0)
		return LK_EXIT_FAIL;
	FILE *csv = files[0].f, *curves = files[1].f;
	fprintf(csv, "case,rows,variant,outer,work_sweeps,pgs_sweeps,sm_res,pgs_res,sm_fischer,pgs_fischer,"
	             "sm_seconds,pgs_seconds,sm_subspace_steps,sm_cg_iterations,sm_stop,sm_used_best,"
	             "pgs_sweeps_to_match\n");
	fprintf(curves, "case,variant,method,work_sweeps,res,fischer\n");

	printf("PGS-SM (kpgs=25, ksm=5) vs PGS at equal work; work in PGS sweeps; times are medians of %d runs;\n"
	       "match = PGS sweeps to reach PGS-SM's final RES of the variant (- : not within %d)\n\n",
	       repeat, MATCH_CAP);
	printf("%-18s %4s %-9s %3s %7s | %9s %9s %7s | %9s %9s | %8s %8s | %6s | %s\n", "case", "rows", "variant",
	       "out", "work", "RES sm", "RES pgs", "pgs/sm", "Fis sm", "Fis pgs", "ms sm", "ms pgs", "match",
	       "stop (sm)");
	int status = LK_EXIT_OK, total = 0, done = 0;
	for (int k = 0; k < NCASES; ++k)
		total += !(quick && cases[k].full_only);
	for (int k = 0; k < NCASES && status == LK_EXIT_OK; ++k) {
		const bcase *bc = &cases[k];
		if (quick && bc->full_only)
			continue;
		char err[256];
		lk_problem *p = make_case(bc, 1.0, err, sizeof err);
		if (!p) {
			lk_cli_error("bench pgs-sm", "%s: %s", bc->name, err);
			status = LK_EXIT_FAIL;
			break;
		}
		int n = lk_problem_row_count(p);
		double *zero = calloc((size_t)n + 1, sizeof(double)), *warm = calloc((size_t)n + 1, sizeof(double));
		if (!zero || !warm || warm_start(bc, warm, n, err, sizeof err) != 0) {
			lk_cli_error("bench pgs-sm", "%s: %s", bc->name, zero && warm ? err : "out of memory");
			status = LK_EXIT_FAIL;
		}
		for (int v = 0; v < NVARIANTS && status == LK_EXIT_OK; ++v) {
			const variant *va = &variants[v];
			if (quick && !va->quick)
				continue;
			const double *start = va->warm ? warm : zero;
			run sm = {0}, pg = {0};
			double work = 0;
			lk_solver_config cs = sm_config(1, va->pgs_rtol);
			for (int b = 0; b < nbudgets && status == LK_EXIT_OK; ++b) {
				cs = sm_config(budgets[b], va->pgs_rtol);
				if (solve_repeated(p, &cs, start, repeat, &sm) != 0) {
					lk_cli_error("bench pgs-sm", "%s: %s", bc->name, lk_problem_error(p));
					status = LK_EXIT_FAIL;
					break;
				}
				work = (double)sm.st.row_updates / n;
				int sweeps = (int)lround(work);
				lk_solver_config cp = pgs_config(sweeps);
				if (solve_repeated(p, &cp, start, repeat, &pg) != 0) {
					lk_cli_error("bench pgs-sm", "%s: %s", bc->name, lk_problem_error(p));
					status = LK_EXIT_FAIL;
					break;
				}
				int last = b == nbudgets - 1;
				int match = last ? sweeps_to_match(p, start, sm.st.res_final) : 0;
				char mbuf[16] = "";
				if (last)
					snprintf(mbuf, sizeof mbuf, match >= 0 ? "%d" : "-", match);
				double ratio = pg.st.res_final / fmax(sm.st.res_final, 1e-300);
				char rows[16] = "";
				if (v == 0 && b == 0)
					snprintf(rows, sizeof rows, "%d", n);
				printf("%-18s %4s %-9s %3d %7.1f | %9.2e %9.2e %7.0e | %9.2e %9.2e | %8.3f %8.3f | %6s | %s%s\n",
				       v == 0 && b == 0 ? bc->name : "", rows, b == 0 ? va->name : "",
				       budgets[b], work, sm.st.res_final, pg.st.res_final, ratio, sm.st.fischer_final,
				       pg.st.fischer_final, 1e3 * sm.seconds, 1e3 * pg.seconds, mbuf,
				       lk_stop_reason_name(sm.st.stop_reason), sm.st.used_best_iterate ? ", best" : "");
				fprintf(csv, "%s,%d,%s,%d,%.6f,%d,%.17g,%.17g,%.17g,%.17g,%.9g,%.9g,%d,%d,%s,%d,%d\n", bc->name,
				        n, va->name, budgets[b], work, sweeps, sm.st.res_final, pg.st.res_final,
				        sm.st.fischer_final, pg.st.fischer_final, sm.seconds, pg.seconds, sm.st.subspace_steps,
				        sm.st.inner_iterations, lk_stop_reason_name(sm.st.stop_reason),
				        sm.st.used_best_iterate, last ? match : 0);
			}
			if (status == LK_EXIT_OK && write_curves(curves, bc->name, va->name, p, start, &cs, work) != 0)
				status = LK_EXIT_FAIL;
		}
		printf("%-18s %s\n", "", bc->what);
		free(zero);
		free(warm);
		lk_problem_destroy(p);
		lk_cli_progress("pgs-sm", ++done, total);
	}
	lk_bench_close_csvs(files, 2);
	if (status == LK_EXIT_OK)
		printf("\nwrote %s and %s\n", files[0].path, files[1].path);
	return status;
}

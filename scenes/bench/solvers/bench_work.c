/* lcpkit bench work: what a counted row of each kind costs against a row update of the PGS production sweep,
 * the weights of the work budget (common/src/context.h, docs/solvers.md "Work").
 *
 * For each problem, from the same warm start (60 PGS sweeps from zero, so that a subspace has active rows and
 * Newton a direction), the minimum thread CPU time over the repeats of:
 *   pgs      200 sweeps                                         -> time per row update
 *   pgs-sm   one PGS sweep and one subspace step with CG capped at 10 and at 110 products; the difference
 *            over the difference of counted rows                 -> time per reduced-product row
 *   newton   one minimum-map Newton iteration with GMRES capped at 5 and at 45 products, the same way
 *                                                                -> time per product row
 *   nncg     100 NNCG iterations against 100 PGS sweeps, the difference over the momentum rows counted
 *                                                                -> time per momentum row
 *   apgd     120 against 20 APGD iterations, the difference over the product rows counted
 *                                                                -> time per whole-product row
 *   direct   one PGS sweep and one subspace step solved by the envelope factor, against one PGS sweep:
 *            the difference in PGS row updates over the multiply-adds counted -> weight of a multiply-add
 *   coarse   two PGS sweeps and the two-level correction after them (its coarse rows, factor and the
 *            correction itself), against two sweeps: the difference in PGS row updates over the work counted
 *            -> 1 when the correction's count is right (coarse.c; nan where no coarse level is made)
 * Each ratio to pgs is the measured weight; the weights in use are printed beside them. */
#include "bench.h"
#include "bench_util.h"
#include "cli_util.h"
#include "clock.h"
#include "internal.h"
#include "lcpkit/generate.h"
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: lcpkit bench work [--quick] [--repeat N] [--out DIR]\n"
	           "CPU time per counted row of each kind of work (a PGS sweep's row update, a PGS-SM reduced-product\n"
	           "row, a Newton product row, an NNCG momentum row), on generated packings and box stacks and on\n"
	           "problems captured in the engines (step 100 of boxstack:n=20 in ODE and Bullet and of heavy-on-light\n"
	           "in Bullet, under auto at 10 iterations; quick: the first); the ratios to the PGS row are the\n"
	           "weights of the work budget. Minimum over N repeats (default 20).\n"
	           "  --out DIR   CSV directory (default bench-out): bench_work.csv\n");
}

typedef struct timed {
	double seconds;
	lk_stats st;
} timed;

/* min CPU time of `spec` from `warm` over `repeats` runs, and the stats of the last */
static int time_spec(lk_problem *p, const double *warm, const char *spec, int repeats, timed *out)
{
	lk_solver_config c;
	char err[256];
	if (lk_config_parse(spec, &c, err, sizeof err) != LK_OK) {
		lk_cli_error("bench work", "%s", err);
		return -1;
	}
	out->seconds = INFINITY;
	for (int r = 0; r < repeats; ++r) {
		lk_problem_set_lambda(p, warm, lk_problem_row_count(p));
		double t0 = lk__cpu_now();
		if (lk_solve(p, &c, &out->st, NULL) != LK_OK) {
			lk_cli_error("bench work", "%s: %s", spec, lk_problem_error(p));
			return -1;
		}
		double t = lk__cpu_now() - t0;
		out->seconds = t < out->seconds ? t : out->seconds;
	}
	return 0;
}

/* time per counted row of the work two specs differ by */
static double per_row(const timed *a, const timed *b)
{
	double rows = (double)(b->st.row_updates - a->st.row_updates);
	return rows > 0 ? (b->seconds - a->seconds) / rows : NAN;
}

/* The weights on problem p (destroyed here), from its own lambda (captured: the engine's warm start) or from
 * 60 PGS sweeps from zero (generated). */
static int bench_problem(FILE *csv, const char *kind, lk_problem *p, int own_warm_start, int repeats)
{
	int rows = lk_problem_row_count(p);
	double *warm = malloc(((size_t)rows + 1) * sizeof(double));
	timed t[13];
	int bad = !warm;
	if (!bad && own_warm_start)
		memcpy(warm, lk_problem_lambda(p), (size_t)rows * sizeof(double));
	else if (!bad) {
		lk_solver_config c = lk_default_config(LK_METHOD_PGS);
		c.max_iterations = 60;
		c.warm_start = 0;
		bad = lk_solve(p, &c, NULL, NULL) != LK_OK;
		if (!bad)
			memcpy(warm, lk_problem_lambda(p), (size_t)rows * sizeof(double));
	}
	const char *specs[13] = {"pgs:iters=200",
	                        "pgs-sm:kpgs=1,ksm=1,iters=1,cg_max=10,tol=0",
	                        "pgs-sm:kpgs=1,ksm=1,iters=1,cg_max=110,tol=0",
	                        "newton-minmap:iters=1,tol=0,krylov_max=5,pgs_warm=0",
	                        "newton-minmap:iters=1,tol=0,krylov_max=45,pgs_warm=0",
	                        "pgs:iters=100",
	                        "nncg:iters=100",
	                        "apgd:iters=20",
	                        "apgd:iters=120",
	                        "pgs:iters=1",
	                        "pgs-sm:kpgs=1,ksm=1,iters=1,sub=direct,tol=0",
	                        "pgs:iters=2",
	                        "pgs:iters=2,coarse=2"};
	for (int k = 0; k < 13 && !bad; ++k)
		bad = time_spec(p, warm, specs[k], repeats, &t[k]) != 0;
	if (!bad) {
		double pgs = t[0].seconds / (double)t[0].st.row_updates;
		double cg = per_row(&t[1], &t[2]), newton = per_row(&t[3], &t[4]);
		/* NNCG's sweeps are PGS's: what it spends beyond them is the momentum rows and the vector updates */
		double moment_rows = (t[6].st.work - (double)t[6].st.iterations) * rows / LK_WORK_MOMENTUM_ROW;
		double moment = moment_rows > 0 ? (t[6].seconds - t[5].seconds) / moment_rows : NAN;
		double product = per_row(&t[7], &t[8]);
		/* the subspace step's counted work beyond its sweep is the factor's multiply-adds at their weight (and
		 * the right-hand side's rows, which a sweep's row weighs alike) */
		double counted = (t[10].st.work - t[9].st.work) * rows, mac = NAN;
		if (counted > 0 && t[10].st.subspace_steps > 0)
			mac = (t[10].seconds - t[9].seconds) / pgs / counted * LK_WORK_FACTOR_MAC;
		/* the correction's counted work against its time in PGS row updates (more than a sweep counted: a
		 * coarse level was made) */
		const double coarse_counted = (t[12].st.work - t[11].st.work) * rows;
		const double coarse = coarse_counted > rows ? (t[12].seconds - t[11].seconds) / pgs / coarse_counted : NAN;
		printf("%-24s %7d %9.2f %9.2f %5.2f %9.2f %5.2f %9.2f %5.2f %9.2f %5.2f %9.4f %8.2f\n", kind, rows,
		       1e9 * pgs, 1e9 * cg, cg / pgs, 1e9 * newton, newton / pgs, 1e9 * moment, moment / pgs,
		       1e9 * product, product / pgs, mac, coarse);
		fprintf(csv, "%s,%d,%.4g,%.4g,%.4g,%.4g,%.4g,%.4g,%.4g\n", kind, rows, 1e9 * pgs, cg / pgs, newton / pgs,
		        moment / pgs, product / pgs, mac, coarse);
	}
	free(warm);
	lk_problem_destroy(p);
	return bad ? -1 : 0;
}

int lk_bench_work(int argc, char **argv)
{
	int quick = 0, repeats = 20;
	const char *out = "bench-out";
	const lk_cli_option table[] = {
		LK_CLI_OPT_FLAG("--quick", &quick),
		LK_CLI_OPT_INT("--repeat", &repeats, 1, 1000),
		LK_CLI_OPT_STRING("--out", &out),
		LK_CLI_OPT_END};
	const int parsed = lk_cli_parse("bench work", argc, argv, 1, table, usage, NULL, NULL);
	if (parsed >= 0)
		return parsed;
	if (quick)
		repeats = repeats < 5 ? repeats : 5;
	printf("weights in use: pgs-sm CG row %.2f, Newton product row %.2f, NNCG momentum row %.2f, APGD product "
	       "row %.2f, factor multiply-add %.4f\n", LK_WORK_CG_ROW, LK_WORK_NEWTON_ROW, LK_WORK_MOMENTUM_ROW,
	       LK_WORK_PRODUCT_ROW, LK_WORK_FACTOR_MAC);
	printf("%-24s %7s %9s %9s %5s %9s %5s %9s %5s %9s %5s %9s %8s\n", "problem", "rows", "pgs ns", "cg ns", "x",
	       "newton ns", "x", "nncg ns", "x", "apgd ns", "x", "mac x", "coarse x");
	lk_bench_csv csv = {"bench_work.csv", "", NULL};
	if (lk_bench_open_csvs("bench work", out, &csv, 1) != 0)
		return LK_EXIT_FAIL;
	fprintf(csv.f, "problem,rows,pgs_ns_per_row,cg_weight,newton_weight,momentum_weight,product_weight,"
	               "factor_mac_weight,coarse_time_per_counted\n");
	/* generated: box stacks and packings */
	const struct {
		const char *kind;
		int n;
	} gen[4] = {{"boxstack", 20}, {"boxstack", 50}, {"packing", quick ? 100 : 400}, {"packing", 2000}};
	int bad = 0;
	for (int k = 0; k < (quick ? 3 : 4) && !bad; ++k) {
		lk_gen_params g = lk_default_gen_params((lk_gen_kind)lk_gen_kind_from_name(gen[k].kind));
		g.n = gen[k].n;
		g.mu = 0.5;
		lk_problem *p = NULL;
		char err[256];
		if (lk_generate(&g, &p, err, sizeof err) != LK_OK) {
			lk_cli_error("bench work", "%s", err);
			bad = 1;
		} else
			bad = bench_problem(csv.f, gen[k].kind, p, 0, repeats) != 0;
	}
	/* captured in the engines (step 100 under auto at 10 iterations, from the engine's warm start): the
	 * problems the weights price inside the engines, where a small stack's coarse level costs more than its
	 * structure counts */
	const struct {
		const char *scene;
		lk_engine engine;
	} cap[3] = {{"boxstack:n=20", LK_ENGINE_ODE}, {"boxstack:n=20", LK_ENGINE_BULLET}, {"heavy-on-light", LK_ENGINE_BULLET}};
	for (int k = 0; k < (quick ? 1 : 3) && !bad; ++k) {
		if (!lk_engine_available(cap[k].engine))
			continue;
		char err[256], label[64];
		lk_problem *p = lk_bench_capture(cap[k].scene, cap[k].engine, "auto", 10, 100, err, sizeof err);
		if (!p) {
			lk_cli_error("bench work", "%s", err);
			bad = 1;
			break;
		}
		snprintf(label, sizeof label, "%s/%s", cap[k].scene, lk_engine_name(cap[k].engine));
		bad = bench_problem(csv.f, label, p, 1, repeats) != 0;
	}
	lk_bench_close_csvs(&csv, 1);
	return bad ? LK_EXIT_FAIL : LK_EXIT_OK;
}

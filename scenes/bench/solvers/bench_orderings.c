/* lcpkit bench orderings: the permutation and staggering heuristics of Poulsen, Abel & Erleben 2010 (IPP,
 * CP, ESP, GSP) against plain PGS on the three problem classes of their Table 1:
 *   non-structured    a packing of spheres given random velocities: most contacts separate, few are active;
 *   loosely structured a heap of spheres on a jittered body-centred cubic lattice: many contacts, normals
 *                      in many directions;
 *   densely structured a box stack (the paper's own has 68 contacts): many contacts, parallel normals.
 * For each heuristic: the merit theta (eq. 23) against iterations (history CSV) and against time, the time
 * per iteration relative to PGS (the paper's "speedup", eq. 24), and the time to reach the merit PGS reaches
 * in K iterations. Timings are medians of repeated runs, all heuristics measured side by side in each
 * repetition. The small problems are also run in the matrix form (CSR of A = J M^-1 J^T), where the frozen
 * coupling b' of eq. (20)-(21) is a separate vector as in the paper. */
#include "bench.h"
#include "bench_util.h"
#include "cli_util.h"
#include "clock.h"
#include "rng.h"
#include "lcpkit/generate.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct heuristic {
	const char *label;
	const char *spec;
	int rows_only; /* needs contact points: not in the matrix form */
} heuristic;

static const heuristic heuristics[] = {
	{"pgs", "pgs", 0},
	{"random", "pgs:order=random", 0},
	{"ipp", "pgs:order=ipp", 0},
	{"ipp-desc", "pgs:order=ipp-desc", 0},
	{"cp-x", "pgs:order=cp-x", 1},
	{"cp-y-desc", "pgs:order=cp-y-desc", 1},
	{"cp-z", "pgs:order=cp-z", 1},
	{"cp-z-desc", "pgs:order=cp-z-desc", 1},
	{"cp-z-desc-blk", "pgs:order=cp-z-desc,blocked=1", 1},
	{"cp-gravity", "pgs:order=cp-gravity", 1},
	{"esp", "esp", 0},
	{"gsp", "gsp", 0},
};
#define NH ((int)(sizeof heuristics / sizeof heuristics[0]))

/* ------------------------------------------------------------------------------------------ problems */

static double rng_sym(lk__rng *r) /* uniform in [-1, 1) */
{
	return lk__rng_uniform(r) * 2.0 - 1.0;
}

typedef struct bproblem {
	char name[48];
	const char *cls;
	lk_problem *rows;   /* row form */
	lk_problem *matrix; /* matrix form, or NULL */
	int contacts, bodies, n, n_normal, n_friction;
} bproblem;

/* A copy of p whose bodies get random extra velocities (linear up to v m/s, angular up to v rad/s). */
static lk_problem *with_random_velocities(const lk_problem *p, double v, uint64_t seed)
{
	lk_problem *out = lk_problem_create(LK_FORM_ROWS);
	if (!out)
		return NULL;
	lk__rng s = {seed};
	for (int b = 0; b < lk_problem_body_count(p); ++b) {
		lk_body_def d = *lk_problem_body(p, b);
		for (int k = 0; k < 6; ++k)
			d.u[k] += v * rng_sym(&s);
		if (lk_problem_add_body(out, &d, NULL) != LK_OK)
			goto fail;
	}
	for (int i = 0; i < lk_problem_row_count(p); ++i) {
		lk_row_def r;
		if (lk_problem_get_row(p, i, &r) != LK_OK || lk_problem_add_row(out, &r, NULL) != LK_OK)
			goto fail;
	}
	return out;
fail:
	lk_problem_destroy(out);
	return NULL;
}

static void cross3(const double a[3], const double b[3], double o[3])
{
	o[0] = a[1] * b[2] - a[2] * b[1];
	o[1] = a[2] * b[0] - a[0] * b[2];
	o[2] = a[0] * b[1] - a[1] * b[0];
}

/* One contact row along d at point pt between a (pushed along +d) and b (static if b < 0). */
static int add_contact_row(lk_problem *p, const double (*pos)[3], int a, int b, const double pt[3],
                           const double d[3], lk_row_kind kind, int findex, double mu, double c)
{
	lk_row_def r = lk_default_row_def();
	if (lk_row_def_set_contact(&r, a, pos[a], b < 0 ? LK_STATIC : b, b < 0 ? NULL : pos[b], pt, d) != LK_OK)
		return -1;
	r.kind = kind;
	r.c = c;
	r.findex = findex;
	r.mu = findex >= 0 ? mu : 0.0;
	if (findex < 0) {
		r.lo = 0.0;
		r.hi = INFINITY;
	}
	int idx = -1;
	if (lk_problem_add_row(p, &r, &idx) != LK_OK)
		return -1;
	return idx;
}

static int add_sphere_contact(lk_problem *p, const double (*pos)[3], int a, int b, const double pt[3],
                              const double nrm[3], double mu, double c)
{
	int ni = add_contact_row(p, pos, a, b, pt, nrm, LK_ROW_NORMAL, -1, mu, c);
	if (ni < 0)
		return -1;
	double t1[3], t2[3], ax[3] = {1, 0, 0};
	if (fabs(nrm[0]) > 0.7) {
		ax[0] = 0;
		ax[1] = 1;
	}
	cross3(nrm, ax, t1);
	double l = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
	for (int k = 0; k < 3; ++k)
		t1[k] /= l;
	cross3(nrm, t1, t2);
	if (add_contact_row(p, pos, a, b, pt, t1, LK_ROW_FRICTION, ni, mu, 0.0) < 0 ||
	    add_contact_row(p, pos, a, b, pt, t2, LK_ROW_FRICTION, ni, mu, 0.0) < 0)
		return -1;
	return 0;
}

/* A loose heap: n unit spheres (r = 0.5) on the sites of a face-centred cubic lattice filled from the
 * ground up, about four half-layers high, each moved at random by up to 0.1 r. Nearest neighbours sit
 * along the face diagonals, so contact normals point in many directions (at 45 degrees to the vertical
 * and horizontal) and the contact graph has loops: about 3 to 4 contacts per body, like the card house
 * (154 contacts, 43 bodies) of Poulsen et al. Table 1. Pairs closer than 1.02 diameters are in contact
 * (resting: no error reduction, c = 0). */
static lk_problem *make_heap(int n, uint64_t seed, double mu, double h, double g)
{
	const double r = 0.5, half = r * sqrt(2.0), reach = 2 * r * 1.02;
	int m = (int)ceil(sqrt(n / 2.0));
	int cap = n + m * m;
	double(*site)[3] = malloc(sizeof *site * (size_t)cap);
	double(*pos)[3] = malloc(sizeof *pos * (size_t)n);
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	lk__rng s = {seed};
	if (!site || !pos || !p)
		goto fail;
	/* half-layer k at z = r + k a/2 (a = 2 sqrt(2) r) holds the sites (ix, iy) a/2 with ix + iy + k even */
	int ns = 0;
	for (int k = 0; ns < n; ++k)
		for (int ix = 0; ix < m; ++ix)
			for (int iy = 0; iy < m; ++iy)
				if ((ix + iy + k) % 2 == 0 && ns < cap) {
					site[ns][0] = half * ix;
					site[ns][1] = half * iy;
					site[ns][2] = r + half * k;
					++ns;
				}
	for (int i = 0; i < n; ++i) {
		for (int k = 0; k < 3; ++k)
			pos[i][k] = site[i][k] + 0.1 * r * rng_sym(&s);
		lk_body_def b = lk_default_body_def();
		double I = 0.4 * r * r;
		for (int k = 0; k < 3; ++k) {
			b.inv_mass[k] = 1.0;
			b.inv_inertia[4 * k] = 1.0 / I;
			b.u[k] = 0.05 * rng_sym(&s);
		}
		b.u[2] -= g * h;
		if (lk_problem_add_body(p, &b, NULL) != LK_OK)
			goto fail;
	}
	for (int i = 0; i < n; ++i) {
		if (pos[i][2] < r * 1.03) {
			double pt[3] = {pos[i][0], pos[i][1], 0}, up[3] = {0, 0, 1};
			if (add_sphere_contact(p, (const double(*)[3])pos, i, -1, pt, up, mu, 0.0) < 0)
				goto fail;
		}
		for (int j = 0; j < i; ++j) {
			double d[3], l = 0;
			for (int k = 0; k < 3; ++k) {
				d[k] = pos[i][k] - pos[j][k];
				l += d[k] * d[k];
			}
			l = sqrt(l);
			if (l >= reach)
				continue;
			double pt[3];
			for (int k = 0; k < 3; ++k) {
				d[k] /= l;
				pt[k] = pos[j][k] + r * d[k];
			}
			if (add_sphere_contact(p, (const double(*)[3])pos, i, j, pt, d, mu, 0.0) < 0)
				goto fail;
		}
	}
	free(site);
	free(pos);
	return p;
fail:
	free(site);
	free(pos);
	lk_problem_destroy(p);
	return NULL;
}

/* The matrix form of a row-form problem: A assembled densely, exact zeros dropped (the CSR of A). */
static lk_problem *to_matrix(lk_problem *p)
{
	int n = lk_problem_row_count(p);
	double *A = malloc(sizeof(double) * (size_t)n * (size_t)n), *q = malloc(sizeof(double) * (size_t)n);
	double *lo = malloc(sizeof(double) * (size_t)n), *hi = malloc(sizeof(double) * (size_t)n);
	double *mu = malloc(sizeof(double) * (size_t)n);
	int *fx = malloc(sizeof(int) * (size_t)n);
	lk_problem *m = lk_problem_create(LK_FORM_MATRIX);
	int ok = A && q && lo && hi && mu && fx && m && lk_problem_assemble_dense(p, n, A, q) == LK_OK;
	for (int i = 0; ok && i < n; ++i)
		ok = lk_problem_get_bounds(p, i, &lo[i], &hi[i], &mu[i], &fx[i], NULL) == LK_OK;
	if (ok)
		ok = lk_problem_set_dense(m, n, A, q, lo, hi, mu, fx) == LK_OK;
	free(A);
	free(q);
	free(lo);
	free(hi);
	free(mu);
	free(fx);
	if (!ok) {
		lk_problem_destroy(m);
		return NULL;
	}
	return m;
}

static int bproblem_init(bproblem *b, const char *cls, const char *name, lk_problem *p, int with_matrix)
{
	memset(b, 0, sizeof *b);
	if (!p)
		return -1;
	snprintf(b->name, sizeof b->name, "%s", name);
	b->cls = cls;
	b->rows = p;
	b->n = lk_problem_row_count(p);
	b->bodies = lk_problem_body_count(p);
	for (int i = 0; i < b->n; ++i) {
		int f;
		lk_row_kind kind;
		lk_problem_get_bounds(p, i, NULL, NULL, NULL, &f, &kind);
		if (f >= 0)
			++b->n_friction;
		else
			++b->n_normal;
		b->contacts += kind == LK_ROW_NORMAL;
	}
	if (with_matrix) {
		b->matrix = to_matrix(p);
		if (!b->matrix)
			return -1;
	}
	return 0;
}

static lk_problem *generated(lk_gen_kind kind, int n)
{
	lk_gen_params g = lk_default_gen_params(kind);
	g.n = n;
	lk_problem *p = NULL;
	char err[200];
	if (lk_generate(&g, &p, err, sizeof err) != LK_OK)
		return NULL;
	return p;
}

static lk_problem *scattered_packing(int n, uint64_t seed)
{
	lk_problem *base = generated(LK_GEN_PACKING, n);
	if (!base)
		return NULL;
	lk_problem *p = with_random_velocities(base, 1.0, seed);
	lk_problem_destroy(base);
	return p;
}

/* ------------------------------------------------------------------------------------------ running */

typedef struct result {
	int used;
	double *theta;        /* K + 1 entries */
	double sec_iter;      /* median seconds per iteration */
	double sweeps_iter;   /* set sweeps per iteration (ESP, GSP) */
} result;

static int run_one(lk_problem *p, const lk_solver_config *base, int K, lk_history *h, lk_stats *st)
{
	lk_solver_config cfg = *base;
	cfg.max_iterations = K;
	cfg.warm_start = 0;
	cfg.tol_abs = cfg.tol_rel = cfg.tol_stag = 0;
	cfg.merit = LK_MERIT_THETA;
	cfg.check_every = 1;
	return lk_solve(p, &cfg, st, h) == LK_OK ? 0 : -1;
}

typedef struct opts {
	int K, reps, quick;
	const char *out;
} opts;

static void print_usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit bench orderings [--quick] [--iters K] [--reps R] [--out DIR]\n"
	        "  Sweep orders and staggered schedules of Poulsen, Abel & Erleben 2010 against PGS on the three\n"
	        "  problem classes of their Table 1 (non-structured, loosely structured, densely structured).\n"
	        "  --iters K   iterations per run (default 200, quick 60)\n"
	        "  --reps R    timed repetitions, median reported (default 15, quick 5)\n"
	        "  --quick     small problems only, fewer iterations and repetitions\n"
	        "  --out DIR   CSV directory (default bench-out): orderings.csv, orderings_history.csv\n");
}

/* Runs every applicable heuristic on one form of one problem; prints and writes its rows. */
static int bench_problem(const bproblem *b, int matrix, const opts *o, FILE *csv, FILE *hist)
{
	lk_problem *p = matrix ? b->matrix : b->rows;
	int K = o->K;
	result res[NH];
	memset(res, 0, sizeof res);
	lk_history_entry *entries = malloc(sizeof *entries * ((size_t)K + 1));
	double *secs = malloc(sizeof(double) * (size_t)NH * (size_t)o->reps);
	if (!entries || !secs) {
		free(entries);
		free(secs);
		return -1;
	}
	lk_solver_config cfgs[NH];
	for (int h = 0; h < NH; ++h) {
		char err[200];
		if (lk_config_parse(heuristics[h].spec, &cfgs[h], err, sizeof err) != LK_OK) {
			lk_cli_error("bench orderings", "%s: %s", heuristics[h].spec, err);
			free(entries);
			free(secs);
			return -1;
		}
		res[h].used = !(matrix && heuristics[h].rows_only);
	}
	/* merit against iterations */
	for (int h = 0; h < NH; ++h) {
		if (!res[h].used)
			continue;
		lk_history hi = {entries, K + 1, 0};
		lk_stats st;
		res[h].theta = malloc(sizeof(double) * ((size_t)K + 1));
		if (!res[h].theta || run_one(p, &cfgs[h], K, &hi, &st) != 0) {
			lk_cli_error("bench orderings", "%s on %s: %s", heuristics[h].label, b->name, lk_problem_error(p));
			res[h].used = 0;
			continue;
		}
		for (int k = 0; k <= K; ++k)
			res[h].theta[k] = k < hi.count ? entries[k].theta : NAN;
		res[h].sweeps_iter = (double)st.inner_iterations / st.iterations;
	}
	/* time per iteration: every repetition runs every heuristic, so drifts of the machine hit all alike */
	char label[96];
	snprintf(label, sizeof label, "%s %s", b->name, matrix ? "matrix" : "rows");
	for (int r = 0; r < o->reps; ++r) {
		lk_cli_progress(label, r, o->reps);
		for (int h = 0; h < NH; ++h) {
			if (!res[h].used)
				continue;
			lk_stats st;
			/* includes lk_solve's merit evaluations before and after the iterations (about one sweep's
			 * worth, the same for every heuristic) */
			double t0 = lk__cpu_now();
			run_one(p, &cfgs[h], K, NULL, &st);
			secs[h * o->reps + r] = (lk__cpu_now() - t0) / st.iterations;
		}
	}
	lk_cli_progress(label, o->reps, o->reps);
	for (int h = 0; h < NH; ++h)
		if (res[h].used)
			res[h].sec_iter = lk_cli_median(secs + h * o->reps, o->reps);

	double nn = b->n_normal, nt = b->n_friction, n = b->n;
	double dense_pred = n * n / (nn * nn + nt * nt);
	printf("\n== %s: %s, %s form: %d rows (%d normal-set, %d friction), %d contacts, %d bodies ==\n", b->cls,
	       b->name, matrix ? "matrix (CSR)" : "row", b->n, b->n_normal, b->n_friction, b->contacts, b->bodies);
	printf("   dense-arithmetic cost ratio of ESP, n^2 / (|N|^2 + |T|^2): %.2f\n", dense_pred);
	printf("%-14s %10s %10s %9s %8s %7s %8s %10s %8s\n", "heuristic", "theta@10", "theta@K", "k->PGS@K", "us/iter",
	       "x/iter", "sweeps/it", "ms->PGS@K", "x time");
	const result *pg = &res[0];
	double target = pg->theta[K], t_pgs = pg->sec_iter;
	for (int h = 0; h < NH; ++h) {
		const result *R = &res[h];
		if (!R->used)
			continue;
		int reach = -1;
		for (int k = 0; k <= K; ++k)
			if (R->theta[k] <= target) {
				reach = k;
				break;
			}
		double x_iter = t_pgs / R->sec_iter;
		double ms_reach = reach >= 0 ? 1e3 * reach * R->sec_iter : NAN;
		double x_time = reach > 0 ? (K * t_pgs) / (reach * R->sec_iter) : NAN;
		int stag = R->sweeps_iter > 0;
		char kbuf[16], msbuf[16], xbuf[16], swbuf[16];
		if (reach >= 0) {
			snprintf(kbuf, sizeof kbuf, "%d", reach);
			snprintf(msbuf, sizeof msbuf, "%.3f", ms_reach);
			snprintf(xbuf, sizeof xbuf, "%.2f", x_time);
		} else {
			snprintf(kbuf, sizeof kbuf, ">%d", K);
			snprintf(msbuf, sizeof msbuf, "-");
			snprintf(xbuf, sizeof xbuf, "<%.2f", 1.0 * t_pgs / R->sec_iter);
		}
		snprintf(swbuf, sizeof swbuf, stag ? "%.2f" : "-", R->sweeps_iter);
		printf("%-14s %10.3e %10.3e %9s %8.2f %7.2f %8s %10s %8s\n", heuristics[h].label, R->theta[K < 10 ? K : 10],
		       R->theta[K], kbuf, 1e6 * R->sec_iter, x_iter, swbuf, msbuf, xbuf);
		fprintf(csv, "%s,%s,%s,%d,%d,%d,%d,%d,%s,%d,%.6e,%.6e,%.6e,%d,%.6e,%.4f,%.4f,%.4f,%.6e,%.4f,%.4f\n", b->cls,
		        b->name, matrix ? "matrix" : "rows", b->n, b->n_normal, b->n_friction, b->contacts, b->bodies,
		        heuristics[h].label, K, R->theta[0], R->theta[K < 10 ? K : 10], R->theta[K], reach,
		        1e6 * R->sec_iter, x_iter, R->sweeps_iter,
		        stag ? t_pgs / (R->sec_iter / R->sweeps_iter) : NAN, ms_reach, x_time, dense_pred);
		for (int k = 0; k <= K; ++k)
			fprintf(hist, "%s,%s,%s,%d,%.6e,%.6e\n", b->name, matrix ? "matrix" : "rows", heuristics[h].label, k,
			        R->theta[k], k * R->sec_iter);
	}
	for (int h = 0; h < NH; ++h)
		free(res[h].theta);
	free(entries);
	free(secs);
	return 0;
}

int lk_bench_orderings(int argc, char **argv)
{
	opts o = {200, 15, 0, "bench-out"};
	int K = 0, reps = 0;
	const lk_cli_option table[] = {
		LK_CLI_OPT_FLAG("--quick", &o.quick),
		LK_CLI_OPT_INT("--iters", &K, 1, 1000000),
		LK_CLI_OPT_INT("--reps", &reps, 1, 1000),
		LK_CLI_OPT_STRING("--out", &o.out),
		LK_CLI_OPT_END};
	const int parsed = lk_cli_parse("bench orderings", argc, argv, 1, table, print_usage, NULL, NULL);
	if (parsed >= 0)
		return parsed;
	const int K_set = K > 0, reps_set = reps > 0;
	if (K_set)
		o.K = K;
	if (reps_set)
		o.reps = reps;
	if (o.quick) {
		if (!K_set)
			o.K = 60;
		if (!reps_set)
			o.reps = 5;
	}
	lk_bench_csv files[2] = {{.name = "orderings.csv"}, {.name = "orderings_history.csv"}};
	if (lk_bench_open_csvs("bench orderings", o.out, files, 2) != 0)
		return LK_EXIT_FAIL;
	FILE *csv = files[0].f, *hist = files[1].f;
	fprintf(csv, "class,problem,form,rows,normal_rows,friction_rows,contacts,bodies,heuristic,iters,theta0,"
	             "theta10,thetaK,iters_to_pgsK,us_per_iter,speedup_per_iter,sweeps_per_iter,speedup_per_sweep,"
	             "ms_to_pgsK,speedup_to_pgsK,dense_cost_ratio\n");
	fprintf(hist, "problem,form,heuristic,iteration,theta,seconds_est\n");

	/* the paper's Table 1 sizes: diku 105 contacts / 1001 bodies, card 154 / 43, box stack 68 / 10 */
	enum { NP = 6 };
	bproblem probs[NP];
	int np = 0, rc = LK_EXIT_OK;
	struct {
		const char *cls, *name;
		int small;
	} spec[NP] = {
		{"non-structured", "packing-40-v1", 1}, {"loosely structured", "heap-43", 1},
		{"densely structured", "boxstack-17", 1}, {"non-structured", "packing-1000-v1", 0},
		{"loosely structured", "heap-1000", 0},   {"densely structured", "boxstack-300", 0},
	};
	for (int k = 0; k < NP; ++k) {
		if (o.quick && !spec[k].small)
			continue;
		lk_problem *p = NULL;
		switch (k % 3) {
		case 0: p = scattered_packing(spec[k].small ? 40 : 1000, 7); break;
		case 1: p = make_heap(spec[k].small ? 43 : 1000, 3, 0.5, 1.0 / 60, 9.81); break;
		default: p = generated(LK_GEN_BOXSTACK, spec[k].small ? 17 : 300); break;
		}
		if (bproblem_init(&probs[np], spec[k].cls, spec[k].name, p, spec[k].small) != 0) {
			lk_cli_error("bench orderings", "cannot build %s", spec[k].name);
			lk_problem_destroy(p);
			rc = LK_EXIT_FAIL;
			break;
		}
		++np;
	}
	printf("lcpkit bench orderings: %d iterations per run, median of %d timed runs; theta = 1/2 ||H||^2 "
	       "(Poulsen et al. eq. 23)\n",
	       o.K, o.reps);
	printf("x/iter = PGS time per iteration / heuristic's (the paper's speedup, eq. 24); k->PGS@K = iterations to "
	       "reach PGS's theta after K; x time = PGS time for K / heuristic's time to that merit\n");
	for (int k = 0; rc == LK_EXIT_OK && k < np; ++k) {
		if (bench_problem(&probs[k], 0, &o, csv, hist) != 0 ||
		    (probs[k].matrix && bench_problem(&probs[k], 1, &o, csv, hist) != 0))
			rc = LK_EXIT_FAIL;
	}
	for (int k = 0; k < np; ++k) {
		lk_problem_destroy(probs[k].rows);
		lk_problem_destroy(probs[k].matrix);
	}
	lk_bench_close_csvs(files, 2);
	if (rc == LK_EXIT_OK)
		printf("\nCSV: %s, %s\n", files[0].path, files[1].path);
	return rc;
}

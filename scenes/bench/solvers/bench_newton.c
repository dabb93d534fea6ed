/* lcpkit bench newton: Erleben 2013 sec. 7 on our generators, with Siconos numerics' Newton solvers as peers.
 *
 * Problems. "fluid": the generator's fluid LCP (2D Poisson matrix, known solution, sec. 4.2), 1024
 * variables (32 x 32, the paper's 1000). "contact": the paper's contact LCP, eq. (27), built from one time
 * step of a generated sphere packing: B = J M^-1 J^T over nc contacts, K = 4 friction directions (+/-t1,
 * +/-t2), so 6 nc variables: normal impulses, friction impulses and the sliding speeds beta. A is
 * non-symmetric with a zero diagonal block, so PGS/PSOR do not apply (they stop with "bad-diagonal").
 * "stack": the engine form of contact, boxed rows with friction bounds (row form), a packing of 30 spheres.
 * "pd"/"psd": dense LCPs A = B B^T (+ shift I) with a known complementary solution (sec. 7, Fig. 6 and the
 * zero-eigenvalue study).
 *
 * Experiments (numbering of the paper):
 *   1. convergence (Fig. 2): PGS, PSOR (w = 1.4), minimum-map Newton and Fischer-Newton from lambda = 0 on a
 *      fluid LCP and a 300-variable contact LCP; RES per iteration into newton_curves.csv; Siconos's
 *      lcp_newton_min and lcp_newton_FB on the same problems;
 *   2. Fischer strategies (Fig. 3): perturbation, random, zero, approximation on a fluid and a 180-variable
 *      contact LCP;
 *   3. robustness (Table 1) and iteration statistics (Table 2): 100 problems of each kind, relative tolerance
 *      1e-6, absolute 1e-3 on each method's natural merit (theta, Fischer, and eq. 106 for PGS/PSOR), at
 *      most 100 iterations; final states counted; Siconos's two Newton solvers on the first --peers problems;
 *   4. PGS warm start (Fig. 6): 100 dense PD problems of 100 variables, 10 PGS sweeps or none, relative
 *      1e-6, absolute 1e-2, at most 30 Newton iterations;
 *   5. PSD problems with a growing share of zero eigenvalues: relative 1e-4, absolute 1e-2, at most 100
 *      iterations, Fischer with the approximation strategy (as the paper).
 * Times are medians of --repeat runs of the same solve, measured one after the other in this run. */
#include "bench.h"
#include "bench_util.h"
#include "cli_util.h"
#include "lcpkit/generate.h"
#include "peer_siconos.h"
#include "rng.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { M_PGS, M_PSOR, M_MINMAP, M_FISCHER, M_COUNT };
static const char *const mnames[M_COUNT] = {"pgs", "psor", "newton-minmap", "newton-fischer"};
static const char *const strategy_names[4] = {"perturbation", "random", "zero", "approximation"};

/* final-state columns of Table 1 */
enum { S_ABS, S_REL, S_STAG, S_LOCMIN, S_NONDESC, S_ITERS, S_OTHER, S_COUNT };
static const char *const snames[S_COUNT] = {"absolute", "relative", "stagnation", "local-min", "non-descent",
                                            "iter-limit", "other"};

static int state_of(lk_stop_reason r)
{
	switch (r) {
	case LK_STOP_ABSOLUTE: return S_ABS;
	case LK_STOP_RELATIVE: return S_REL;
	case LK_STOP_STAGNATION: return S_STAG;
	case LK_STOP_LOCAL_MINIMUM: return S_LOCMIN;
	case LK_STOP_NON_DESCENT: return S_NONDESC;
	case LK_STOP_ITERATIONS: return S_ITERS;
	default: return S_OTHER;
	}
}

static lk_method method_of(int m)
{
	static const lk_method ms[M_COUNT] = {LK_METHOD_PGS, LK_METHOD_PSOR, LK_METHOD_NEWTON_MINMAP,
	                                      LK_METHOD_NEWTON_FISCHER};
	return ms[m];
}

/* ------------------------------------------------------------------------------------------ problems */

/* A generated problem with the kind's default parameters but n and seed; NULL when it cannot be made. */
static lk_problem *generated(lk_gen_kind kind, int n, uint64_t seed)
{
	lk_gen_params g = lk_default_gen_params(kind);
	g.n = n;
	g.seed = seed;
	lk_problem *p = NULL;
	char err[200];
	if (lk_generate(&g, &p, err, sizeof err) != LK_OK)
		return NULL;
	return p;
}

/* The matrix-form LCP(q, A) (lo = 0, hi = inf) with A (n x n, row-major) and q copied; NULL on failure. */
static lk_problem *dense_lcp(int n, const double *A, const double *q)
{
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	if (p && lk_problem_set_dense(p, n, A, q, NULL, NULL, NULL, NULL) != LK_OK) {
		lk_problem_destroy(p);
		p = NULL;
	}
	return p;
}

/* Erleben 2013 eq. (27) from the first nc contacts of a generated packing: x = (lambda_n, lambda_t, beta),
 *   A = [B_nn B_nt 0; B_tn B_tt E; mu I -E^T 0],  b = (b_n, b_t, 0),
 * with the friction directions +t1, +t2, -t1, -t2 of each contact, so B over them is B over (t1, t2) with
 * signs. Packings grow until they have nc contacts. */
static lk_problem *make_contact(int nc, uint64_t seed)
{
	for (int bodies = 2 * nc; bodies <= 16 * nc; bodies += nc) {
		lk_problem *src = generated(LK_GEN_PACKING, bodies, seed);
		if (!src)
			return NULL;
		int nr = lk_problem_row_count(src);
		int *normal = malloc(sizeof(int) * (size_t)nr), *t1 = malloc(sizeof(int) * (size_t)nr);
		int *t2 = malloc(sizeof(int) * (size_t)nr);
		int found = 0;
		for (int i = 0; i + 2 < nr && found < nc; ++i) {
			lk_row_def r0, r1, r2;
			lk_problem_get_row(src, i, &r0);
			lk_problem_get_row(src, i + 1, &r1);
			lk_problem_get_row(src, i + 2, &r2);
			if (r0.kind == LK_ROW_NORMAL && r1.findex == i && r2.findex == i) {
				normal[found] = i;
				t1[found] = i + 1;
				t2[found] = i + 2;
				++found;
			}
		}
		if (found < nc || nr > 6000) {
			free(normal);
			free(t1);
			free(t2);
			lk_problem_destroy(src);
			if (nr > 6000)
				return NULL;
			continue;
		}
		double *Af = malloc(sizeof(double) * (size_t)nr * nr), *qf = malloc(sizeof(double) * (size_t)nr);
		int n = 6 * nc;
		double *A = calloc((size_t)n * n, sizeof(double)), *q = calloc((size_t)n, sizeof(double));
		int *row = malloc(sizeof(int) * (size_t)n);
		double *sg = malloc(sizeof(double) * (size_t)n);
		lk_problem *p = NULL;
		if (Af && qf && A && q && row && sg && lk_problem_assemble_dense(src, nr, Af, qf) == LK_OK) {
			/* variables 0..nc-1 normals, then 4 per contact, then beta */
			for (int c = 0; c < nc; ++c) {
				row[c] = normal[c];
				sg[c] = 1.0;
				int base = nc + 4 * c;
				row[base + 0] = t1[c], sg[base + 0] = 1.0;
				row[base + 1] = t2[c], sg[base + 1] = 1.0;
				row[base + 2] = t1[c], sg[base + 2] = -1.0;
				row[base + 3] = t2[c], sg[base + 3] = -1.0;
			}
			int nb = 5 * nc; /* the B part */
			for (int i = 0; i < nb; ++i) {
				for (int j = 0; j < nb; ++j)
					A[(size_t)i * n + j] = sg[i] * sg[j] * Af[(size_t)row[i] * nr + row[j]];
				q[i] = sg[i] * qf[row[i]];
			}
			for (int c = 0; c < nc; ++c) {
				double mu = 0;
				lk_problem_get_bounds(src, t1[c], NULL, NULL, &mu, NULL, NULL);
				int beta = 5 * nc + c;
				for (int k = 0; k < 4; ++k) {
					int t = nc + 4 * c + k;
					A[(size_t)t * n + beta] = 1.0;  /* E */
					A[(size_t)beta * n + t] = -1.0; /* -E^T */
				}
				A[(size_t)beta * n + c] = mu;
			}
			p = dense_lcp(n, A, q);
		}
		free(Af);
		free(qf);
		free(A);
		free(q);
		free(row);
		free(sg);
		free(normal);
		free(t1);
		free(t2);
		lk_problem_destroy(src);
		return p;
	}
	return NULL;
}

/* A = B B^T / k + shift I with B n x k, k = n (1 - zero_share) (so a share of the eigenvalues is zero when
 * shift = 0), and q = y* - A x* for a random complementary pair: the LCP has a solution by construction. */
static lk_problem *make_dense(int n, double zero_share, double shift, uint64_t seed)
{
	int k = (int)lround(n * (1.0 - zero_share));
	if (k < 1)
		k = 1;
	double *B = malloc(sizeof(double) * (size_t)n * k), *A = malloc(sizeof(double) * (size_t)n * n);
	double *q = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
	lk_problem *p = NULL;
	if (B && A && q && x) {
		lk__rng s = {seed * 7919 + 13};
		for (size_t i = 0; i < (size_t)n * k; ++i)
			B[i] = 2.0 * lk__rng_uniform(&s) - 1.0;
		for (int i = 0; i < n; ++i) {
			for (int j = 0; j <= i; ++j) {
				double a = 0;
				for (int l = 0; l < k; ++l)
					a += B[(size_t)i * k + l] * B[(size_t)j * k + l];
				a /= k;
				A[(size_t)i * n + j] = A[(size_t)j * n + i] = a;
			}
			A[(size_t)i * n + i] += shift;
			x[i] = lk__rng_uniform(&s) < 0.5 ? 0.0 : lk__rng_uniform(&s);
		}
		for (int i = 0; i < n; ++i) {
			double ax = 0;
			for (int j = 0; j < n; ++j)
				ax += A[(size_t)i * n + j] * x[j];
			q[i] = (x[i] > 0 ? 0.0 : lk__rng_uniform(&s)) - ax;
		}
		p = dense_lcp(n, A, q);
	}
	free(B);
	free(A);
	free(q);
	free(x);
	return p;
}

/* ------------------------------------------------------------------------------------------ solving */

typedef struct run {
	lk_stats st;
	double seconds; /* median */
	int ok;
} run;

static void zero_lambda(lk_problem *p)
{
	int n = lk_problem_row_count(p);
	double *z = calloc((size_t)n + 1, sizeof(double));
	if (z)
		lk_problem_set_lambda(p, z, n);
	free(z);
}

/* Solves from lambda = 0 repeat times; stats of the last run, median time. */
static run solve(lk_problem *p, const lk_solver_config *cfg, lk_history *h, int repeat)
{
	run r;
	memset(&r, 0, sizeof r);
	double t[64];
	if (repeat > 64)
		repeat = 64;
	if (repeat < 1)
		repeat = 1;
	for (int k = 0; k < repeat; ++k) {
		zero_lambda(p);
		r.ok = lk_solve(p, cfg, &r.st, k == repeat - 1 ? h : NULL) == LK_OK;
		t[k] = r.st.seconds;
	}
	r.seconds = lk_cli_median(t, repeat);
	return r;
}

/* The configuration of method m with its natural merit for the tolerances: theta (eq. 64) for the minimum
 * map, the Fischer merit (eq. 103) for Fischer-Newton. The paper measures PGS and PSOR with eq. (106),
 * x^T |A x + b|, which is zero at the start x = 0: the relative test (eq. 108) and the divergence guard
 * cannot work from there, so PGS and PSOR are measured with theta like the minimum map. */
static lk_solver_config config_of(int m)
{
	lk_solver_config c = lk_default_config(method_of(m));
	c.merit = m == M_FISCHER ? LK_MERIT_FISCHER : LK_MERIT_THETA;
	return c;
}

/* Siconos reports failed factorizations on stderr; the tables count them instead. */
static int quiet_begin(void)
{
	fflush(stdout);
	fflush(stderr);
	int saved = dup(2);
	int fd = open("/dev/null", O_WRONLY);
	if (saved >= 0 && fd >= 0)
		dup2(fd, 2);
	if (fd >= 0)
		close(fd);
	return saved;
}

static void quiet_end(int saved)
{
	fflush(stderr);
	if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
}

typedef struct peer_run {
	int ran;
	lk_peer_result r;
	double res;     /* our RES at Siconos's answer */
	double seconds; /* median */
} peer_run;

static peer_run run_peer(lk_problem *p, lk_peer_solver s, int max_iter, double tol, int repeat)
{
	peer_run out;
	memset(&out, 0, sizeof out);
	int n = lk_problem_row_count(p);
	double *A = malloc(sizeof(double) * (size_t)n * n), *q = malloc(sizeof(double) * (size_t)n);
	double *z = malloc(sizeof(double) * (size_t)n);
	double t[64];
	if (repeat > 64)
		repeat = 64;
	if (A && q && z && lk_problem_assemble_dense(p, n, A, q) == LK_OK) {
		int k;
		int saved = quiet_begin();
		for (k = 0; k < repeat; ++k) {
			if (lk_peer_siconos_lcp(s, n, A, q, z, max_iter, tol, &out.r) != LK_OK)
				break;
			t[k] = out.r.seconds;
		}
		quiet_end(saved);
		if (k == repeat) {
			out.ran = 1;
			out.seconds = lk_cli_median(t, repeat);
			lk_metrics m;
			out.res = lk_problem_metrics(p, z, &m) == LK_OK ? m.res : NAN;
		}
	}
	free(A);
	free(q);
	free(z);
	return out;
}

/* Iterations of the history until RES first fell below tol, or -1. */
static int iters_to(const lk_history *h, double tol)
{
	for (int k = 0; k < h->count; ++k)
		if (h->entries[k].res < tol)
			return h->entries[k].iteration;
	return -1;
}

static void fmt_its(char *buf, size_t size, int its)
{
	if (its < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%d", its);
}

/* -------------------------------------------------------------------- 1 and 2: convergence curves */

enum { HCAP = 512 };

static void curve_rows(FILE *curves, const char *exp, const char *prob, const char *label, const lk_history *h)
{
	for (int k = 0; k < h->count; ++k)
		fprintf(curves, "%s,%s,%s,%d,%.17g,%.17g,%.17g,%.9g\n", exp, prob, label, h->entries[k].iteration,
		        h->entries[k].res, h->entries[k].theta, h->entries[k].fischer, h->entries[k].seconds);
}

static void print_conv_header(void)
{
	printf("  %-28s %6s %6s %6s %6s | %10s %-13s %8s %9s\n", "method", "1e-2", "1e-5", "1e-8", "iters", "RES",
	       "stop", "inner", "ms (med)");
}

static void conv_row(FILE *csv, const char *exp, const char *prob, const char *label, const run *r,
                     const lk_history *h)
{
	char a[16], b[16], c[16];
	fmt_its(a, sizeof a, iters_to(h, 1e-2));
	fmt_its(b, sizeof b, iters_to(h, 1e-5));
	fmt_its(c, sizeof c, iters_to(h, 1e-8));
	printf("  %-28s %6s %6s %6s %6d | %10.2e %-13s %8d %9.3f\n", label, a, b, c, r->st.iterations, r->st.res_final,
	       lk_stop_reason_name(r->st.stop_reason), r->st.inner_iterations, 1e3 * r->seconds);
	fprintf(csv, "%s,%s,%s,%d,%d,%d,%d,%.17g,%s,%d,%.9g\n", exp, prob, label, iters_to(h, 1e-2), iters_to(h, 1e-5),
	        iters_to(h, 1e-8), r->st.iterations, r->st.res_final, lk_stop_reason_name(r->st.stop_reason),
	        r->st.inner_iterations, r->seconds);
}

static void peer_conv_row(FILE *csv, const char *exp, const char *prob, lk_peer_solver s, const peer_run *pr)
{
	if (!pr->ran) {
		printf("  %-28s (did not run)\n", lk_peer_name(s));
		return;
	}
	printf("  %-28s %6s %6s %6s %6d | %10.2e %-13s %8s %9.3f   (Siconos error %.1e)\n", lk_peer_name(s), "", "", "",
	       pr->r.iterations, pr->res, pr->r.info == 0 ? "converged" : "failed", "", 1e3 * pr->seconds,
	       pr->r.error);
	fprintf(csv, "%s,%s,%s,,,,%d,%.17g,%s,,%.9g\n", exp, prob, lk_peer_name(s), pr->r.iterations, pr->res,
	        pr->r.info == 0 ? "converged" : "failed", pr->seconds);
}

static void experiment_convergence(FILE *csv, FILE *curves, int quick, int repeat)
{
	lk_history_entry *e = malloc(sizeof(lk_history_entry) * HCAP);
	if (!e)
		return;
	printf("\n1. Convergence from lambda = 0 (Erleben 2013 Fig. 2): iterations until RES < 1e-2 / 1e-5 / 1e-8\n");
	for (int prob = 0; prob < 2; ++prob) {
		lk_problem *p = prob == 0 ? generated(LK_GEN_FLUID, 1000, 1) : make_contact(50, 1);
		const char *pname = prob == 0 ? "fluid" : "contact";
		if (!p) {
			printf("  %s: could not generate\n", pname);
			continue;
		}
		printf(" %s LCP, %d variables\n", pname, lk_problem_row_count(p));
		print_conv_header();
		for (int m = 0; m < M_COUNT; ++m) {
			lk_solver_config cfg = lk_default_config(method_of(m));
			cfg.max_iterations = m < M_MINMAP ? (quick ? 200 : 500) : 50;
			lk_history h = {e, HCAP, 0};
			run r = solve(p, &cfg, &h, repeat);
			conv_row(csv, "convergence", pname, mnames[m], &r, &h);
			curve_rows(curves, "convergence", pname, mnames[m], &h);
		}
		for (int s = LK_PEER_NEWTON_MIN; s <= LK_PEER_NEWTON_FB; ++s) {
			peer_run pr = run_peer(p, (lk_peer_solver)s, 50, 1e-12, quick ? 1 : repeat);
			peer_conv_row(csv, "convergence", pname, (lk_peer_solver)s, &pr);
		}
		lk_problem_destroy(p);
	}

	printf("\n2. Fischer-Newton strategies at x_i = y_i = 0 (Erleben 2013 Fig. 3)\n");
	for (int prob = 0; prob < 2; ++prob) {
		lk_problem *p = prob == 0 ? generated(LK_GEN_FLUID, 1000, 2) : make_contact(30, 2);
		const char *pname = prob == 0 ? "fluid" : "contact";
		if (!p)
			continue;
		printf(" %s LCP, %d variables\n", pname, lk_problem_row_count(p));
		print_conv_header();
		for (int s = 0; s < 4; ++s) {
			lk_solver_config cfg = lk_default_config(LK_METHOD_NEWTON_FISCHER);
			cfg.newton.strategy = (lk_fischer_strategy)s;
			cfg.max_iterations = 50;
			lk_history h = {e, HCAP, 0};
			run r = solve(p, &cfg, &h, repeat);
			char label[64];
			snprintf(label, sizeof label, "fischer:%s", strategy_names[s]);
			conv_row(csv, "strategies", pname, label, &r, &h);
			curve_rows(curves, "strategies", pname, label, &h);
		}
		lk_problem_destroy(p);
	}
	free(e);
}

/* -------------------------------------------------------------------- 3: robustness and statistics */

typedef struct tally {
	int count[S_COUNT];
	int abs_its[1024];
	int nabs;
	double seconds;
	int runs;
} tally;

static void stats_of(const int *v, int n, double *mean, double *mn, double *mx, double *sd)
{
	double s = 0, ss = 0;
	*mn = INFINITY;
	*mx = -INFINITY;
	for (int i = 0; i < n; ++i) {
		s += v[i];
		*mn = fmin(*mn, v[i]);
		*mx = fmax(*mx, v[i]);
	}
	*mean = n ? s / n : NAN;
	for (int i = 0; i < n; ++i)
		ss += (v[i] - *mean) * (v[i] - *mean);
	*sd = n ? sqrt(ss / n) : NAN;
	if (!n)
		*mn = *mx = NAN;
}

static void print_tally_row(const char *label, const tally *t)
{
	double mean, mn, mx, sd;
	stats_of(t->abs_its, t->nabs, &mean, &mn, &mx, &sd);
	printf("  %-16s", label);
	for (int s = 0; s < S_COUNT; ++s)
		printf(" %10d", t->count[s]);
	printf(" | %6.2f %5.0f %5.0f %6.2f | %8.3f\n", mean, mn, mx, sd, t->runs ? 1e3 * t->seconds / t->runs : NAN);
}

static void experiment_robustness(FILE *runs, int nprob, int npeer)
{
	static const char *const kinds[3] = {"fluid", "contact", "stack"};
	printf("\n3. Robustness over %d problems of each kind (Erleben 2013 Tables 1 and 2): final states; iteration\n"
	       "   statistics over the runs that reached the absolute tolerance; relative 1e-6, absolute 1e-3 on the\n"
	       "   natural merit (Fischer for Fischer-Newton, theta for the others), at most 100 iterations\n",
	       nprob);
	for (int kind = 0; kind < 3; ++kind) {
		tally t[M_COUNT];
		memset(t, 0, sizeof t);
		int peer_ok[2] = {0, 0}, peer_runs = 0;
		int peer_its[2][1024];
		double peer_sec[2] = {0, 0}, peer_res_max[2] = {0, 0};
		int n = 0;
		for (int k = 0; k < nprob; ++k) {
			lk_cli_progress(kinds[kind], k, nprob);
			uint64_t seed = 1000 + (uint64_t)k;
			lk_problem *p = kind == 0   ? generated(LK_GEN_FLUID, 1000, seed)
			                : kind == 1 ? make_contact(30, seed)
			                            : generated(LK_GEN_PACKING, 30, seed);
			if (!p)
				continue;
			n = lk_problem_row_count(p);
			for (int m = 0; m < M_COUNT; ++m) {
				lk_solver_config cfg = config_of(m);
				cfg.tol_rel = 1e-6;
				cfg.tol_abs = 1e-3;
				cfg.max_iterations = 100;
				run r = solve(p, &cfg, NULL, 1);
				int s = state_of(r.st.stop_reason);
				t[m].count[s]++;
				if (s == S_ABS && t[m].nabs < 1024)
					t[m].abs_its[t[m].nabs++] = r.st.iterations;
				t[m].seconds += r.seconds;
				t[m].runs++;
				fprintf(runs, "%s,%llu,%d,%s,%s,%d,%d,%.17g,%.17g,%.9g\n", kinds[kind], (unsigned long long)seed, n,
				        mnames[m], lk_stop_reason_name(r.st.stop_reason), r.st.iterations, r.st.inner_iterations,
				        r.st.res_final, r.st.fischer_final, r.seconds);
			}
			/* Siconos solves LCPs only (not the boxed friction rows of "stack") */
			if (kind < 2 && k < npeer) {
				++peer_runs;
				for (int s = 0; s < 2; ++s) {
					lk_peer_solver ps = s ? LK_PEER_NEWTON_FB : LK_PEER_NEWTON_MIN;
					peer_run pr = run_peer(p, ps, 100, 1e-6, 1);
					if (!pr.ran)
						continue;
					if (pr.r.info == 0)
						peer_its[s][peer_ok[s]++] = pr.r.iterations;
					peer_sec[s] += pr.seconds;
					peer_res_max[s] = fmax(peer_res_max[s], pr.res);
					fprintf(runs, "%s,%llu,%d,%s,%s,%d,,%.17g,,%.9g\n", kinds[kind], (unsigned long long)seed, n,
					        lk_peer_name(ps), pr.r.info == 0 ? "converged" : "failed", pr.r.iterations, pr.res,
					        pr.seconds);
				}
			}
			lk_problem_destroy(p);
		}
		lk_cli_progress(kinds[kind], nprob, nprob);
		printf(" %s (%d variables)%s\n  %-16s", kinds[kind], n,
		       kind == 1 ? "; other = bad-diagonal: the zero diagonal block stops PGS and PSOR" : "", "method");
		for (int s = 0; s < S_COUNT; ++s)
			printf(" %10s", snames[s]);
		printf(" | %6s %5s %5s %6s | %8s\n", "mean", "min", "max", "std", "ms/solve");
		for (int m = 0; m < M_COUNT; ++m)
			print_tally_row(mnames[m], &t[m]);
		for (int s = 0; s < 2 && peer_runs > 0; ++s) {
			double mean, mn, mx, sd;
			stats_of(peer_its[s], peer_ok[s], &mean, &mn, &mx, &sd);
			printf("  %-16s converged %d of %d (Siconos's own test, tol 1e-6) | %6.2f %5.0f %5.0f %6.2f | %8.3f"
			       "   max RES %.1e\n",
			       s ? "siconos-fb" : "siconos-min", peer_ok[s], peer_runs, mean, mn, mx, sd,
			       1e3 * peer_sec[s] / peer_runs, peer_res_max[s]);
		}
	}
}

/* ---------------------------------------------------------------------------- 4: PGS warm start */

static void experiment_warm(FILE *csv, int nprob)
{
	printf("\n4. PGS warm start (Erleben 2013 Fig. 6): %d dense PD problems of 100 variables; Newton iterations to\n"
	       "   the paper's absolute tolerance 1e-2 (natural merit, relative 1e-6, at most 30 iterations) and to\n"
	       "   RES < 1e-10; warm: 10 PGS sweeps first\n",
	       nprob);
	printf("  %-16s %-5s | %8s %6s %5s %5s %6s | %8s %6s %5s %5s %6s\n", "method", "start", "reached", "mean", "min",
	       "max", "std", "reached", "mean", "min", "max", "std");
	for (int m = M_MINMAP; m <= M_FISCHER; ++m) {
		for (int w = 0; w < 2; ++w) {
			int its[2][1024], nabs[2] = {0, 0};
			for (int k = 0; k < nprob; ++k) {
				lk_problem *p = make_dense(100, 0.0, 0.1, 5000 + (uint64_t)k);
				if (!p)
					continue;
				for (int v = 0; v < 2; ++v) {
					lk_solver_config cfg = config_of(m);
					cfg.tol_rel = v ? 0.0 : 1e-6;
					cfg.tol_abs = v ? 1e-10 : 1e-2;
					if (v)
						cfg.merit = LK_MERIT_RES;
					cfg.max_iterations = 30;
					cfg.newton.pgs_warm = w ? 10 : 0;
					run r = solve(p, &cfg, NULL, 1);
					if (r.st.stop_reason == LK_STOP_ABSOLUTE && nabs[v] < 1024)
						its[v][nabs[v]++] = r.st.iterations;
					fprintf(csv, "%s,%s,%s,%d,%s,%d,%.17g\n", mnames[m], w ? "pgs10" : "zero", v ? "res<1e-10" : "paper",
					        k, lk_stop_reason_name(r.st.stop_reason), r.st.iterations, r.st.res_final);
				}
				lk_problem_destroy(p);
			}
			printf("  %-16s %-5s", mnames[m], w ? "pgs10" : "zero");
			for (int v = 0; v < 2; ++v) {
				double mean, mn, mx, sd;
				stats_of(its[v], nabs[v], &mean, &mn, &mx, &sd);
				printf(" | %4d/%-3d %6.2f %5.0f %5.0f %6.2f", nabs[v], nprob, mean, mn, mx, sd);
			}
			printf("\n");
		}
	}
}

/* ------------------------------------------------------------------ 5: zero eigenvalues (PSD) */

static void experiment_psd(FILE *csv, int nprob, int quick)
{
	printf("\n5. PSD problems with a growing share of zero eigenvalues: %d dense problems of 100 variables per\n"
	       "   share; relative 1e-4, absolute 1e-2, at most 100 iterations; Fischer with the approximation\n"
	       "   strategy (as the paper); final states, and how many reach RES < 1e-8 in 100 iterations when\n"
	       "   asked to (other: bad-diagonal, nonfinite or diverged)\n",
	       nprob);
	printf("  %5s %-16s", "zeros", "method");
	for (int s = 0; s < S_COUNT; ++s)
		printf(" %10s", snames[s]);
	printf(" | %8s\n", "RES<1e-8");
	int nshare = quick ? 4 : 10;
	for (int z = 0; z < nshare; ++z) {
		double share = quick ? 0.3 * z : 0.1 * z;
		int count[M_COUNT][S_COUNT], tight[M_COUNT];
		memset(count, 0, sizeof count);
		memset(tight, 0, sizeof tight);
		for (int k = 0; k < nprob; ++k) {
			lk_problem *p = make_dense(100, share, 0.0, 9000 + 100 * (uint64_t)z + (uint64_t)k);
			if (!p)
				continue;
			for (int m = 0; m < M_COUNT; ++m) {
				lk_solver_config cfg = config_of(m);
				cfg.tol_rel = 1e-4;
				cfg.tol_abs = 1e-2;
				cfg.max_iterations = 100;
				cfg.newton.strategy = LK_FISCHER_APPROXIMATION;
				run r = solve(p, &cfg, NULL, 1);
				count[m][state_of(r.st.stop_reason)]++;
				cfg.merit = LK_MERIT_RES;
				cfg.tol_rel = 0;
				cfg.tol_abs = 1e-8;
				run r2 = solve(p, &cfg, NULL, 1);
				tight[m] += r2.st.stop_reason == LK_STOP_ABSOLUTE;
				fprintf(csv, "%.2f,%d,%s,%s,%d,%.17g,%s,%d,%.17g\n", share, k, mnames[m],
				        lk_stop_reason_name(r.st.stop_reason), r.st.iterations, r.st.res_final,
				        lk_stop_reason_name(r2.st.stop_reason), r2.st.iterations, r2.st.res_final);
			}
			lk_problem_destroy(p);
		}
		for (int m = 0; m < M_COUNT; ++m) {
			printf("  %5.2f %-16s", share, mnames[m]);
			for (int s = 0; s < S_COUNT; ++s)
				printf(" %10d", count[m][s]);
			printf(" | %8d\n", tight[m]);
		}
	}
}

/* -------------------------------------------------------------------------------------------- main */

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: lcpkit bench newton [--quick] [--repeat N] [--problems N] [--peers N] [--out DIR]\n\n"
	        "Erleben 2013 sec. 7 on lcpkit's generators: PGS, PSOR (w = 1.4), minimum-map Newton and\n"
	        "Fischer-Newton on fluid and contact LCPs (convergence, Fischer strategies, robustness table,\n"
	        "iteration statistics, PGS warm start, PSD problems with zero eigenvalues), with Siconos numerics'\n"
	        "lcp_newton_min and lcp_newton_FB on the same problems. Prints tables and writes\n"
	        "DIR/newton_convergence.csv, newton_curves.csv, newton_runs.csv, newton_warm.csv, newton_psd.csv.\n\n"
	        "  --quick       20 problems per kind, 3 Siconos problems, 4 zero-eigenvalue shares, 1 repeat\n"
	        "  --repeat N    timing repeats of the convergence runs (default 5)\n"
	        "  --problems N  problems per kind in experiments 3-5 (default 100)\n"
	        "  --peers N     problems per kind also given to Siconos in experiment 3 (default 10)\n"
	        "  --out DIR     output directory (default bench-out)\n");
}

int lk_bench_newton(int argc, char **argv)
{
	const char *out = "bench-out";
	int quick = 0, repeat = -1, nprob = -1, npeer = -1;
	const lk_cli_option table[] = {
		LK_CLI_OPT_FLAG("--quick", &quick),
		LK_CLI_OPT_INT("--repeat", &repeat, 1, 64),
		LK_CLI_OPT_INT("--problems", &nprob, 0, 1024),
		LK_CLI_OPT_INT("--peers", &npeer, 0, 1024),
		LK_CLI_OPT_STRING("--out", &out),
		LK_CLI_OPT_END};
	const int parsed = lk_cli_parse("bench newton", argc, argv, 1, table, usage, NULL, NULL);
	if (parsed >= 0)
		return parsed;
	if (repeat < 0)
		repeat = quick ? 1 : 5;
	if (nprob < 0)
		nprob = quick ? 20 : 100;
	if (npeer < 0)
		npeer = quick ? 3 : 10;
	lk_bench_csv csv[5] = {{.name = "newton_convergence.csv"}, {.name = "newton_curves.csv"},
	                       {.name = "newton_runs.csv"},        {.name = "newton_warm.csv"},
	                       {.name = "newton_psd.csv"}};
	if (lk_bench_open_csvs("bench newton", out, csv, 5) != 0)
		return LK_EXIT_FAIL;
	fprintf(csv[0].f,
	        "experiment,problem,method,iters_1e-2,iters_1e-5,iters_1e-8,iterations,res,stop,inner,seconds\n");
	fprintf(csv[1].f, "experiment,problem,method,iteration,res,theta,fischer,seconds\n");
	fprintf(csv[2].f, "kind,seed,rows,method,stop,iterations,inner,res,fischer,seconds\n");
	fprintf(csv[3].f, "method,start,target,problem,stop,iterations,res\n");
	fprintf(csv[4].f, "zero_share,problem,method,stop,iterations,res,stop_tight,iterations_tight,res_tight\n");

	printf("lcpkit bench newton%s: Erleben 2013 sec. 7; RES = ||lambda - mid(lo, lambda - w, hi)||; times are "
	       "medians of %d runs\n",
	       quick ? " --quick" : "", repeat);
	experiment_convergence(csv[0].f, csv[1].f, quick, repeat);
	experiment_robustness(csv[2].f, nprob, npeer);
	experiment_warm(csv[3].f, nprob);
	experiment_psd(csv[4].f, nprob, quick);
	lk_bench_close_csvs(csv, 5);
	printf("\nCSV written to %s/newton_*.csv\n", out);
	return LK_EXIT_OK;
}

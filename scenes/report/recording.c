/* lk_record and lk_regress: recorded solver problems as regression tests for engines and solvers. */
#include "recording.h"
#include "cli_util.h"
#include "junit.h"
#include "lcpkit/io.h"
#include "peer_siconos.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------------------------------------ record */

lk_status lk_record(const lk_recording_def *def, int *written, char *err, size_t esz)
{
	*written = 0;
	if (!def || !def->scene || !def->dir || def->first < 1 || def->last < def->first) {
		snprintf(err, esz, "lk_record: bad definition");
		return LK_ERR_INVALID_ARGUMENT;
	}
	if (lk_cli_mkdirs(def->dir) != 0) {
		snprintf(err, esz, "cannot create %s: %s", def->dir, strerror(errno));
		return LK_ERR_IO;
	}
	lk_solver_config cfg;
	char perr[256];
	int lcpkit_solver = lk_config_parse(def->solver, &cfg, perr, sizeof perr) == LK_OK;
	if (lcpkit_solver)
		cfg.max_iterations = def->iterations;
	lk_sim_def sd = {def->scene, def->engine, def->solver, def->iterations, 0, 0, 0};
	lk_sim *sim = NULL;
	lk_status st = lk_sim_create(&sd, &sim, err, esz);
	if (st != LK_OK)
		return st;
	char path[1024];
	snprintf(path, sizeof path, "%s/manifest.txt", def->dir);
	FILE *man = fopen(path, "w");
	if (!man) {
		snprintf(err, esz, "cannot write %s: %s", path, strerror(errno));
		lk_sim_destroy(sim);
		return LK_ERR_IO;
	}
	double h = def->scene->h;
	fprintf(man, "lcpkit-recording 1\nscene %s\nengine %s\nsolver %s\niterations %d\nh %.17g\nsteps %d %d\n",
	        def->scene->spec, lk_engine_name(def->engine), def->solver, def->iterations, h, def->first, def->last);
	for (int k = 1; k <= def->last && st == LK_OK; ++k) {
		int rec = k >= def->first;
		if (rec)
			lk_sim_capture_next(sim);
		st = lk_sim_step(sim, NULL);
		if (st != LK_OK) {
			snprintf(err, esz, "step %d failed", k);
			break;
		}
		if (!rec)
			continue;
		lk_problem *p = lk_sim_take_captured(sim);
		if (!p || lk_problem_row_count(p) == 0) {
			lk_problem_destroy(p);
			continue; /* nothing to solve this step */
		}
		lk_problem_extra extra;
		memset(&extra, 0, sizeof extra);
		extra.h = h;
		snprintf(extra.source, sizeof extra.source, "%s %s %s step %d", lk_engine_name(def->engine),
		         def->scene->spec, def->solver, k);
		int n = lk_problem_row_count(p);
		double *warm = malloc(sizeof(double) * (size_t)n);
		if (!warm) {
			lk_problem_destroy(p);
			st = LK_ERR_NO_MEMORY;
			snprintf(err, esz, "out of memory");
			break;
		}
		memcpy(warm, lk_problem_lambda(p), sizeof(double) * (size_t)n);
		if (lcpkit_solver && lk_solve(p, &cfg, NULL, NULL) == LK_OK) {
			extra.solution = malloc(sizeof(double) * (size_t)n);
			if (extra.solution) {
				memcpy(extra.solution, lk_problem_lambda(p), sizeof(double) * (size_t)n);
				extra.has_solution = 1;
			}
			lk_problem_set_lambda(p, warm, n); /* the file's lambda is the warm start */
		}
		snprintf(path, sizeof path, "%s/step-%05d.lkp", def->dir, k);
		st = lk_problem_write(p, &extra, path, err, esz);
		free(extra.solution);
		free(warm);
		if (st == LK_OK) {
			fprintf(man, "file step-%05d.lkp rows %d\n", k, n);
			++*written;
		}
		lk_problem_destroy(p);
	}
	if (fclose(man) != 0 && st == LK_OK) {
		snprintf(err, esz, "cannot write the manifest in %s", def->dir);
		st = LK_ERR_IO;
	}
	lk_sim_destroy(sim);
	return st;
}

/* ----------------------------------------------------------------------------------------------- regress */

lk_regress_opts lk_default_regress_opts(void)
{
	lk_regress_opts o;
	memset(&o, 0, sizeof o);
	o.solvers = "pgs,psor,amgs,pgs-sm,gsp";
	o.sweeps = 20;
	o.tol = 1e-6;
	o.max_iterations = 5000;
	o.out = stdout;
	return o;
}

typedef struct golden {
	char file[128];
	char label[96];
	int iterations;     /* to tolerance; -1: not reached within the cap */
	double res_sweeps;  /* RES after the fixed number of sweeps */
	int unique;         /* the solution is unique: lambda is compared */
} golden;

typedef struct result {
	golden g;
	double *lambda;     /* converged lambda when unique */
	int n;
	double seconds;
	lk_stop_reason stop_sweeps, stop_tol; /* why the fixed-budget solve and the tolerance solve stopped */
	int iterations_tol; /* iterations the tolerance solve ran */
	double res_tol;     /* its final RES */
} result;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The problem files of DIR: from the manifest when there is one, else every *.lkp, sorted. */
static int list_files(const char *dir, char ***out, char *err, size_t esz)
{
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, esz, "cannot open %s: %s", dir, strerror(errno));
		return -1;
	}
	int n = 0, cap = 64;
	char **names = malloc(sizeof(char *) * (size_t)cap);
	struct dirent *e;
	while (names && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 5 || strcmp(e->d_name + len - 4, ".lkp"))
			continue;
		if (n == cap) {
			cap *= 2;
			char **nn = realloc(names, sizeof(char *) * (size_t)cap);
			if (!nn)
				break;
			names = nn;
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (!names) {
		snprintf(err, esz, "out of memory");
		return -1;
	}
	qsort(names, (size_t)n, sizeof *names, cmp_str);
	*out = names;
	return n;
}

static int read_golden(const char *dir, golden **out, int *count)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/golden.txt", dir);
	*out = NULL;
	*count = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return 0; /* no golden results yet: every pair is new */
	char line[1024];
	int cap = 0;
	if (!fgets(line, sizeof line, f) || strncmp(line, "lcpkit-golden 1", 15)) {
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		golden g;
		memset(&g, 0, sizeof g);
		if (sscanf(line, "%127s %95s %d %lf %d", g.file, g.label, &g.iterations, &g.res_sweeps, &g.unique) != 5) {
			fclose(f);
			return -1;
		}
		if (*count == cap) {
			cap = cap ? 2 * cap : 64;
			golden *ng = realloc(*out, sizeof(golden) * (size_t)cap);
			if (!ng) {
				fclose(f);
				return -1;
			}
			*out = ng;
		}
		(*out)[(*count)++] = g;
	}
	fclose(f);
	return 0;
}

static const golden *find_golden(const golden *g, int n, const char *file, const char *label)
{
	for (int i = 0; i < n; ++i)
		if (!strcmp(g[i].file, file) && !strcmp(g[i].label, label))
			return &g[i];
	return NULL;
}

/* Positive definiteness of the dense A by Cholesky: then the LCP with fixed bounds has one solution. */
static int positive_definite(lk_problem *p)
{
	int n = lk_problem_row_count(p);
	if (n > 1500)
		return 0;
	double *A = malloc(sizeof(double) * (size_t)n * n);
	if (!A || lk_problem_assemble_dense(p, n, A, NULL) != LK_OK) {
		free(A);
		return 0;
	}
	int ok = 1;
	for (int j = 0; j < n && ok; ++j) {
		double d = A[(size_t)j * n + j];
		for (int k = 0; k < j; ++k)
			d -= A[(size_t)j * n + k] * A[(size_t)j * n + k];
		if (!(d > 1e-12)) {
			ok = 0;
			break;
		}
		d = sqrt(d);
		A[(size_t)j * n + j] = d;
		for (int i = j + 1; i < n; ++i) {
			double s = A[(size_t)i * n + j];
			for (int k = 0; k < j; ++k)
				s -= A[(size_t)i * n + k] * A[(size_t)j * n + k];
			A[(size_t)i * n + j] = s / d;
		}
	}
	free(A);
	return ok;
}

static int has_friction(const lk_problem *p)
{
	for (int i = 0; i < lk_problem_row_count(p); ++i) {
		int f;
		lk_problem_get_bounds(p, i, NULL, NULL, NULL, &f, NULL);
		if (f >= 0)
			return 1;
	}
	return 0;
}

/* Replays one problem with one solver. */
static int replay(lk_problem *p, const double *warm, const lk_solver_config *base, const lk_regress_opts *o,
                  int unique, result *r)
{
	int n = lk_problem_row_count(p);
	lk_solver_config cfg = *base;
	lk_stats st;
	/* RES after a fixed budget, from the recorded warm start */
	lk_problem_set_lambda(p, warm, n);
	cfg.max_iterations = o->sweeps;
	cfg.tol_abs = 0;
	if (lk_solve(p, &cfg, &st, NULL) != LK_OK)
		return -1;
	r->g.res_sweeps = st.res_final;
	r->seconds = st.seconds;
	r->stop_sweeps = st.stop_reason;
	/* iterations to the tolerance */
	lk_problem_set_lambda(p, warm, n);
	cfg = *base;
	cfg.max_iterations = o->max_iterations;
	cfg.tol_abs = o->tol;
	cfg.merit = LK_MERIT_RES;
	if (lk_solve(p, &cfg, &st, NULL) != LK_OK)
		return -1;
	r->g.iterations = st.stop_reason == LK_STOP_ABSOLUTE ? st.iterations : -1;
	r->seconds += st.seconds;
	r->stop_tol = st.stop_reason;
	r->iterations_tol = st.iterations;
	r->res_tol = st.res_final;
	r->g.unique = unique && r->g.iterations >= 0;
	r->n = n;
	if (r->g.unique) {
		r->lambda = malloc(sizeof(double) * (size_t)n);
		if (r->lambda)
			memcpy(r->lambda, lk_problem_lambda(p), sizeof(double) * (size_t)n);
	}
	return 0;
}

static void lambda_path(char *buf, size_t n, const char *dir, const char *file, const char *label)
{
	snprintf(buf, n, "%s/golden/%s.%s.txt", dir, file, label);
}

static int read_lambda(const char *path, double *x, int n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int k = 0;
	while (k < n && fscanf(f, "%lf", &x[k]) == 1)
		++k;
	int extra = fgetc(f);
	while (extra == '\n' || extra == ' ')
		extra = fgetc(f);
	fclose(f);
	return k == n && extra == EOF ? 0 : -1;
}

/* The frictionless LCP part of a problem (rows with lo = 0, hi = inf) as dense A, q for Siconos. */
static int lcp_part(lk_problem *p, double **A_out, double **q_out)
{
	int n = lk_problem_row_count(p), m = 0;
	if (n > 1500)
		return 0;
	int *idx = malloc(sizeof(int) * (size_t)n);
	double *A = malloc(sizeof(double) * (size_t)n * n), *q = malloc(sizeof(double) * (size_t)n);
	if (!idx || !A || !q || lk_problem_assemble_dense(p, n, A, q) != LK_OK) {
		free(idx);
		free(A);
		free(q);
		return 0;
	}
	for (int i = 0; i < n; ++i) {
		double lo, hi;
		int f;
		lk_problem_get_bounds(p, i, &lo, &hi, NULL, &f, NULL);
		if (f < 0 && lo == 0 && hi == INFINITY)
			idx[m++] = i;
	}
	double *B = malloc(sizeof(double) * (size_t)(m ? m : 1) * (m ? m : 1)), *qb = malloc(sizeof(double) * (size_t)(m ? m : 1));
	if (B && qb)
		for (int i = 0; i < m; ++i) {
			qb[i] = q[idx[i]];
			for (int j = 0; j < m; ++j)
				B[(size_t)i * m + j] = A[(size_t)idx[i] * n + idx[j]];
		}
	free(idx);
	free(A);
	free(q);
	if (!B || !qb || m == 0) {
		free(B);
		free(qb);
		return 0;
	}
	*A_out = B;
	*q_out = qb;
	return m;
}

static void peer_report(FILE *out, const char *file, lk_problem *p)
{
	double *A, *q;
	int m = lcp_part(p, &A, &q);
	if (m == 0) {
		fprintf(out, "  %-22s siconos: no LCP rows to compare\n", file);
		return;
	}
	double *z = malloc(sizeof(double) * (size_t)m);
	/* our PGS on the same LCP, to the same tolerance */
	lk_problem *lcp = lk_problem_create(LK_FORM_MATRIX);
	if (z && lcp && lk_problem_set_dense(lcp, m, A, q, NULL, NULL, NULL, NULL) == LK_OK) {
		lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
		cfg.max_iterations = 5000;
		cfg.tol_abs = 1e-8;
		lk_stats st;
		if (lk_solve(lcp, &cfg, &st, NULL) == LK_OK)
			fprintf(out, "  %-22s %-20s LCP %4d rows  iterations %6d  time %9.6f s  RES %.2e\n", file, "lcpkit-pgs", m,
			        st.iterations, st.seconds, st.res_final);
		const lk_peer_solver peers[] = {LK_PEER_PGS, LK_PEER_PSOR, LK_PEER_NEWTON_FB, LK_PEER_LEMKE};
		for (size_t k = 0; k < sizeof peers / sizeof peers[0]; ++k) {
			lk_peer_result pr;
			if (lk_peer_siconos_lcp(peers[k], m, A, q, z, 5000, 1e-8, &pr) != LK_OK)
				continue;
			lk_metrics mt;
			lk_problem_metrics(lcp, z, &mt);
			fprintf(out, "  %-22s %-20s LCP %4d rows  iterations %6d  time %9.6f s  RES %.2e  (info %d, error %.2e)\n",
			        file, lk_peer_name(peers[k]), m, pr.iterations, pr.seconds, mt.res, pr.info, pr.error);
		}
	}
	lk_problem_destroy(lcp);
	free(z);
	free(A);
	free(q);
}

/* A contact problem (every row a normal row or one of exactly two friction rows on a normal row, the two next
 * to each other, one mu): lcpkit's cone sweep and Siconos's fc3d_nsgs on it, both judged by Siconos's fc3d
 * error measure. Siconos wants each contact's rows as (normal, tangent, tangent): the rows are permuted. */
static void friction_peer_report(FILE *out, const char *file, lk_problem *p)
{
	lk_peer_fc3d f;
	char err[160];
	if (lk_peer_fc3d_make(p, 3000, &f, err, sizeof err) != LK_OK)
		return;
	if (f.dim != 3 || !f.W) { /* a problem of the plane, or one beyond 3,000 rows: not reported */
		lk_peer_fc3d_free(&f);
		return;
	}
	const int nc = f.nc, n = 3 * nc;
	double *r = malloc(sizeof(double) * (size_t)n);
	lk_problem *cone = r ? lk_peer_fc3d_problem(&f) : NULL;
	lk_solver_config cfg;
	char perr[128];
	lk_stats st;
	if (cone && lk_config_parse("pgs:friction=cone,iters=5000,tol=1e-8,warm=0", &cfg, perr, sizeof perr) == LK_OK &&
	    lk_solve(cone, &cfg, &st, NULL) == LK_OK) {
		const double *lp = lk_problem_lambda(cone);
		lk_peer_result pr;
		double ours = NAN;
		if (lk_peer_siconos_fc3d(nc, f.W, f.q, f.mu, r, 5000, 1e-8, &pr, lp, &ours) == LK_OK) {
			fprintf(out, "  %-22s %-20s cone %3d contacts  iterations %6d  time %9.6f s  fc3d error %.2e\n", file,
			        "lcpkit-pgs-cone", nc, st.iterations, st.seconds, ours);
			double diff = 0.0;
			for (int a = 0; a < n; ++a)
				diff = fmax(diff, fabs(lp[a] - r[a]));
			fprintf(out, "  %-22s %-20s cone %3d contacts  iterations %6d  time %9.6f s  fc3d error %.2e  (info %d; "
			        "reactions differ by %.2e)\n",
			        file, "siconos-fc3d-nsgs", nc, pr.iterations, pr.seconds, pr.error, pr.info, diff);
		}
	}
	lk_problem_destroy(cone);
	lk_peer_fc3d_free(&f);
	free(r);
}

/* A pair's iterations to the tolerance (">cap" when the cap came first) and the golden count and RES ("-"
 * without golden results), as the reports print them; each buffer holds 32 bytes. */
static void report_words(const result *r, const golden *g, int cap, char *ri, char *gi, char *gr)
{
	snprintf(ri, 32, r->g.iterations >= 0 ? "%d" : ">%d", r->g.iterations >= 0 ? r->g.iterations : cap);
	snprintf(gi, 32, "-");
	snprintf(gr, 32, "-");
	if (g) {
		snprintf(gi, 32, g->iterations >= 0 ? "%d" : ">%d", g->iterations >= 0 ? g->iterations : cap);
		snprintf(gr, 32, "%.3e", g->res_sweeps);
	}
}

/* The JUnit report of a replay (lk_regress_opts.junit): one test case per problem file and solver. */
typedef struct junit_entry {
	char suite[260], classname[300], name[256], message[600], details[1400];
	lk_junit_outcome outcome;
	double seconds;
} junit_entry;

typedef struct junit_log {
	int on, failed;     /* failed: out of memory, the report is incomplete */
	junit_entry *e;
	int n, cap;
	char prefix[128];   /* the directory's name, the first part of every classname */
} junit_log;

/* A new case for (file, solver suite), or NULL when off or out of memory. */
static junit_entry *junit_add(junit_log *j, const char *suite, const char *file, lk_junit_outcome outcome)
{
	if (!j->on || j->failed)
		return NULL;
	if (j->n == j->cap) {
		int cap = j->cap ? 2 * j->cap : 64;
		junit_entry *ne = realloc(j->e, sizeof *ne * (size_t)cap);
		if (!ne) {
			j->failed = 1;
			return NULL;
		}
		j->e = ne;
		j->cap = cap;
	}
	junit_entry *e = &j->e[j->n++];
	memset(e, 0, sizeof *e);
	snprintf(e->suite, sizeof e->suite, "%s", suite);
	/* DIR.SUITE, the dots inside either part made '_': CI systems read the classname's dots as packages */
	snprintf(e->classname, sizeof e->classname, "%s.%s", j->prefix, suite);
	for (char *c = e->classname + strlen(j->prefix) + 1; *c; ++c)
		if (*c == '.')
			*c = '_';
	snprintf(e->name, sizeof e->name, "%s", file);
	e->outcome = outcome;
	return e;
}

static void junit_prefix(junit_log *j, const char *dir)
{
	size_t len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		--len;
	const char *base = dir;
	for (size_t k = 0; k < len; ++k)
		if (dir[k] == '/' && k + 1 < len)
			base = dir + k + 1;
	snprintf(j->prefix, sizeof j->prefix, "%.*s", (int)(len - (size_t)(base - dir)), base);
	for (char *c = j->prefix; *c; ++c)
		if (*c == '.')
			*c = '_';
}

static lk_status junit_finish(junit_log *j, const lk_regress_opts *o, char *err, size_t esz)
{
	lk_status st = LK_OK;
	lk_junit_case *cases = malloc(sizeof *cases * (size_t)(j->n ? j->n : 1));
	if (!cases || j->failed) {
		snprintf(err, esz, "out of memory for the JUnit report %s", o->junit);
		st = LK_ERR_NO_MEMORY;
	} else {
		for (int i = 0; i < j->n; ++i) {
			const junit_entry *e = &j->e[i];
			cases[i] = (lk_junit_case){e->suite, e->classname, e->name, e->outcome, e->message, e->details,
			                           e->seconds};
		}
		char sweeps[32], tol[32], cap[32], name[1100];
		snprintf(sweeps, sizeof sweeps, "%d", o->sweeps);
		snprintf(tol, sizeof tol, "%g", o->tol);
		snprintf(cap, sizeof cap, "%d", o->max_iterations);
		snprintf(name, sizeof name, "lcpkit regress %s", o->dir);
		const char *names[] = {"directory", "budget_iterations", "tolerance", "tolerance_cap_iterations"};
		const char *values[] = {o->dir, sweeps, tol, cap};
		st = lk_junit_write(o->junit, name, cases, j->n, names, values, 4, err, esz);
	}
	free(cases);
	return st;
}

/* The message and text of a compared pair's case: the verdict, then RES after the budget and the tolerance
 * solve, each with the reason it stopped. */
static void junit_describe(junit_entry *e, const result *r, const golden *g, const char *spec, const char *label,
                           const char *verdict, const lk_regress_opts *o)
{
	char ri[32], gi[32], gr[32];
	report_words(r, g, o->max_iterations, ri, gi, gr);
	snprintf(e->message, sizeof e->message,
	         "%s; RES %.3e after the budget of %d iterations (golden %s), stopped: %s; %s iterations to RES < %.3g "
	         "(golden %s), stopped: %s",
	         verdict, r->g.res_sweeps, o->sweeps, gr, lk_stop_reason_name(r->stop_sweeps), ri, o->tol, gi,
	         lk_stop_reason_name(r->stop_tol));
	snprintf(e->details, sizeof e->details,
	         "problem %s, solver %s (golden results of %s)\n"
	         "budget: %d iterations, RES %.17g (golden %s), stopped: %s\n"
	         "tolerance: RES < %g within %d iterations: %d iterations, RES %.17g, stopped: %s (golden %s)\n",
	         e->name, spec, label, o->sweeps, r->g.res_sweeps, gr, lk_stop_reason_name(r->stop_sweeps), o->tol,
	         o->max_iterations, r->iterations_tol, r->res_tol, lk_stop_reason_name(r->stop_tol), gi);
}

lk_status lk_regress(const lk_regress_opts *o, lk_regress_summary *sum, char *err, size_t esz)
{
	memset(sum, 0, sizeof *sum);
	FILE *out = o->out ? o->out : stdout;
	/* solvers: LABEL@SPEC or SPEC (label = spec) */
	char labels[32][96], specs[32][160], suites[32][260];
	int nsolvers = 0;
	{
		char items[32][160];
		const char *s = o->solvers;
		int n = 0;
		while (*s && n < 32) {
			size_t len = strcspn(s, ",");
			int cont = n > 0 && memchr(s, '=', len) && !memchr(s, ':', len) && !memchr(s, '@', len);
			if (cont) {
				size_t u = strlen(items[n - 1]);
				snprintf(items[n - 1] + u, sizeof items[0] - u, ",%.*s", (int)len, s);
			} else if (len) {
				snprintf(items[n++], sizeof items[0], "%.*s", (int)len, s);
			}
			s += len;
			if (*s == ',')
				++s;
		}
		for (int i = 0; i < n; ++i) {
			char *at = strchr(items[i], '@');
			if (at) {
				*at = '\0';
				snprintf(labels[nsolvers], sizeof labels[0], "%s", items[i]);
				snprintf(specs[nsolvers], sizeof specs[0], "%s", at + 1);
			} else {
				snprintf(labels[nsolvers], sizeof labels[0], "%s", items[i]);
				snprintf(specs[nsolvers], sizeof specs[0], "%s", items[i]);
			}
			for (char *c = labels[nsolvers]; *c; ++c)
				if (*c == ' ' || *c == '/')
					*c = '_';
			if (strcmp(labels[nsolvers], specs[nsolvers]))
				snprintf(suites[nsolvers], sizeof suites[0], "%s@%s", labels[nsolvers], specs[nsolvers]);
			else
				snprintf(suites[nsolvers], sizeof suites[0], "%s", specs[nsolvers]);
			++nsolvers;
		}
	}
	lk_solver_config cfgs[32];
	for (int i = 0; i < nsolvers; ++i) {
		char perr[400];
		if (lk_config_parse(specs[i], &cfgs[i], perr, sizeof perr) != LK_OK) {
			snprintf(err, esz, "%s", perr);
			return LK_ERR_PARSE;
		}
	}
	if (nsolvers == 0) {
		snprintf(err, esz, "no solvers");
		return LK_ERR_PARSE;
	}
	char **files = NULL;
	int nfiles = list_files(o->dir, &files, err, esz);
	if (nfiles < 0)
		return LK_ERR_IO;
	golden *gold = NULL;
	int ngold = 0;
	if (read_golden(o->dir, &gold, &ngold) != 0) {
		snprintf(err, esz, "%s/golden.txt is not a golden file (lcpkit-golden 1)", o->dir);
		for (int i = 0; i < nfiles; ++i)
			free(files[i]);
		free(files);
		return LK_ERR_PARSE;
	}
	result *results = calloc((size_t)(nfiles ? nfiles : 1) * nsolvers, sizeof *results);
	int nres = 0;
	junit_log junit = {o->junit != NULL, 0, NULL, 0, 0, ""};
	junit_prefix(&junit, o->dir);
	if (!o->json)
		fprintf(out, "%-22s %-16s %10s %10s %12s %12s  %s\n", "problem", "solver", "iters", "golden", "RES@sweeps",
		        "golden", "status");
	for (int f = 0; f < nfiles && results; ++f) {
		char path[1024], rerr[512];
		snprintf(path, sizeof path, "%s/%s", o->dir, files[f]);
		lk_problem *p = NULL;
		if (lk_problem_read(path, NULL, &p, NULL, rerr, sizeof rerr) != LK_OK) {
			fprintf(out, "%-22s unreadable: %s\n", files[f], rerr);
			++sum->unreadable;
			for (int s = 0; s < nsolvers; ++s) {
				junit_entry *e = junit_add(&junit, suites[s], files[f], LK_JUNIT_ERROR);
				if (e)
					snprintf(e->message, sizeof e->message, "unreadable: %s", rerr);
			}
			continue;
		}
		++sum->problems;
		int n = lk_problem_row_count(p);
		double *warm = malloc(sizeof(double) * (size_t)(n ? n : 1));
		if (!warm) {
			lk_problem_destroy(p);
			continue;
		}
		memcpy(warm, lk_problem_lambda(p), sizeof(double) * (size_t)n);
		int unique = !has_friction(p) && positive_definite(p);
		for (int s = 0; s < nsolvers; ++s) {
			result *r = &results[nres];
			memset(r, 0, sizeof *r);
			snprintf(r->g.file, sizeof r->g.file, "%s", files[f]);
			snprintf(r->g.label, sizeof r->g.label, "%s", labels[s]);
			if (replay(p, warm, &cfgs[s], o, unique, r) != 0) {
				fprintf(out, "%-22s %-16s failed: %s\n", files[f], labels[s], lk_problem_error(p));
				junit_entry *e = junit_add(&junit, suites[s], files[f], LK_JUNIT_ERROR);
				if (e)
					snprintf(e->message, sizeof e->message, "the solve failed: %s", lk_problem_error(p));
				continue;
			}
			++nres;
			const golden *g = find_golden(gold, ngold, files[f], labels[s]);
			const char *status = "new";
			char detail[200] = "";
			if (!g) {
				++sum->missing;
			} else {
				++sum->compared;
				int worse = 0, better = 0;
				/* iterations: 10% and one iteration of slack */
				if (g->iterations >= 0 && (r->g.iterations < 0 || r->g.iterations > g->iterations * 1.1 + 1)) {
					worse = 1;
					snprintf(detail, sizeof detail, "iterations %d > %d", r->g.iterations, g->iterations);
				} else if (r->g.iterations >= 0 && (g->iterations < 0 || r->g.iterations < g->iterations * 0.9 - 1)) {
					better = 1;
				}
				/* RES after the fixed budget: 25% of slack (and the rounding floor) */
				if (r->g.res_sweeps > g->res_sweeps * 1.25 + 1e-13) {
					worse = 1;
					snprintf(detail + strlen(detail), sizeof detail - strlen(detail), "%sRES %.3g > %.3g",
					         detail[0] ? ", " : "", r->g.res_sweeps, g->res_sweeps);
				} else if (r->g.res_sweeps < g->res_sweeps * 0.8 - 1e-13) {
					better = 1;
				}
				if (g->unique && r->g.unique && r->lambda) {
					double *x = malloc(sizeof(double) * (size_t)n);
					lambda_path(path, sizeof path, o->dir, files[f], labels[s]);
					if (x && read_lambda(path, x, n) == 0) {
						double d = 0, scale = 1;
						for (int i = 0; i < n; ++i) {
							d = fmax(d, fabs(x[i] - r->lambda[i]));
							scale = fmax(scale, fabs(x[i]));
						}
						if (d > 1e-5 * scale) {
							worse = 1;
							snprintf(detail + strlen(detail), sizeof detail - strlen(detail),
							         "%slambda differs by %.3g", detail[0] ? ", " : "", d);
						}
					}
					free(x);
				}
				status = worse ? "REGRESSION" : better ? "improved" : "ok";
				sum->regressions += worse;
				sum->improvements += better && !worse;
			}
			junit_entry *je = junit_add(&junit, suites[s], files[f],
			                            !g ? LK_JUNIT_SKIPPED : !strcmp(status, "REGRESSION") ? LK_JUNIT_FAILURE
			                                                                                  : LK_JUNIT_PASSED);
			if (je) {
				char verdict[260];
				if (g)
					snprintf(verdict, sizeof verdict, "%s%s%s", status, detail[0] ? ": " : "", detail);
				else
					snprintf(verdict, sizeof verdict, "no golden result for %s (lcpkit regress --update stores them)",
					         labels[s]);
				junit_describe(je, r, g, specs[s], labels[s], verdict, o);
				if (je->outcome == LK_JUNIT_PASSED)
					je->message[0] = '\0'; /* the details keep the numbers */
				je->seconds = r->seconds;
			}
			if (o->json) {
				fprintf(out, "{\"problem\": \"%s\", \"solver\": \"%s\", \"iterations\": %d, \"res_sweeps\": %.17g, "
				        "\"status\": \"%s\"}\n", files[f], labels[s], r->g.iterations, r->g.res_sweeps, status);
			} else {
				char ri[32], gi[32], gr[32];
				report_words(r, g, o->max_iterations, ri, gi, gr);
				fprintf(out, "%-22s %-16s %10s %10s %12.3e %12s  %s%s%s\n", files[f], labels[s], ri, gi, r->g.res_sweeps,
				        gr, status, detail[0] ? ": " : "", detail);
			}
		}
		if (o->peer_siconos) {
			lk_problem_set_lambda(p, warm, n);
			peer_report(out, files[f], p);
			friction_peer_report(out, files[f], p);
		}
		free(warm);
		lk_problem_destroy(p);
	}
	lk_status st = LK_OK;
	if (o->update && results) {
		char path[1024];
		snprintf(path, sizeof path, "%s/golden", o->dir);
		if (lk_cli_mkdirs(path) != 0) {
			snprintf(err, esz, "cannot create %s: %s", path, strerror(errno));
			st = LK_ERR_IO;
		}
		snprintf(path, sizeof path, "%s/golden.txt", o->dir);
		FILE *g = st == LK_OK ? fopen(path, "w") : NULL;
		if (!g && st == LK_OK) {
			snprintf(err, esz, "cannot write %s", path);
			st = LK_ERR_IO;
		}
		if (g) {
			fprintf(g, "lcpkit-golden 1\n# problem solver iterations-to-%.3g res-after-%d-iterations unique\n", o->tol,
			        o->sweeps);
			for (int i = 0; i < nres; ++i) {
				result *r = &results[i];
				fprintf(g, "%s %s %d %.17g %d\n", r->g.file, r->g.label, r->g.iterations, r->g.res_sweeps, r->g.unique);
				if (r->g.unique && r->lambda) {
					char lp[1024];
					lambda_path(lp, sizeof lp, o->dir, r->g.file, r->g.label);
					FILE *lf = fopen(lp, "w");
					if (lf) {
						for (int k = 0; k < r->n; ++k)
							fprintf(lf, "%.17g\n", r->lambda[k]);
						fclose(lf);
					}
				}
			}
			if (fclose(g) != 0) {
				snprintf(err, esz, "cannot write %s", path);
				st = LK_ERR_IO;
			}
		}
	}
	if (o->junit && results) {
		char jerr[512];
		lk_status js = junit_finish(&junit, o, jerr, sizeof jerr);
		if (js != LK_OK && st == LK_OK) {
			snprintf(err, esz, "%s", jerr);
			st = js;
		}
	}
	free(junit.e);
	if (!o->json)
		fprintf(out, "\n%d problems, %d unreadable; %d compared: %d regressions, %d improvements; %d without golden "
		        "results%s\n", sum->problems, sum->unreadable, sum->compared, sum->regressions, sum->improvements,
		        sum->missing, o->update ? " (golden results rewritten)" : "");
	for (int i = 0; i < nres; ++i)
		free(results[i].lambda);
	free(results);
	free(gold);
	for (int i = 0; i < nfiles; ++i)
		free(files[i]);
	free(files);
	return st;
}

/* The solver collection: generated problems x every method x every merit, with the expected outcome of each
 * as data (after Siconos's LCP test collection). Every run must
 *   - return LK_OK with a finite lambda inside its bounds (friction bounds from the normal row's lambda),
 *   - stop for one of the reasons its row of the table allows (a failure reason only where the table lists
 *     the pair as an expected failure, with the reason it fails for),
 *   - end with RES no larger than the start's and, unless an expected failure, below the table's bound.
 * A new method is added to `methods` and meets every guard here without new test code.
 * LK_COLLECTION_PRINT=1 prints the outcome of every run (for writing the table). */
#include "test_util.h"
#include "lcpkit/generate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct problem_case {
	const char *name;
	lk_gen_kind kind;
	int n;
	double mu;
} problem_case;

static const problem_case problems[] = {
	{"boxstack10", LK_GEN_BOXSTACK, 10, 0.0},       /* frictionless: an LCP, the PGS-SM regression case */
	{"boxstack5-mu", LK_GEN_BOXSTACK, 5, 0.5},      /* friction bounds through findex */
	{"spherestack20", LK_GEN_SPHERESTACK, 20, 0.0}, /* Miyamoto & Yamashita's Stacking, in 3D */
	{"chain8", LK_GEN_CHAIN, 8, 0.0},               /* bilateral joint rows: lo = -inf, hi = inf */
	{"incline3", LK_GEN_INCLINE, 3, 0.6},           /* friction at an angle */
	{"fluid64", LK_GEN_FLUID, 64, 0.0},             /* matrix form (Erleben 2013 sec. 4) */
};
#define N_PROBLEMS (int)(sizeof problems / sizeof problems[0])

/* The methods, each with the budget it is given here: sweeps for the Gauss-Seidel family, outer iterations
 * for PGS-SM and the Newton methods. */
static const char *const methods[] = {
	"pgs:iters=3000",        "psor:iters=3000",  "pgs:order=random,iters=3000", "pgs:order=ipp,iters=3000",
	"esp:iters=3000",        "gsp:iters=3000",   "amgs:iters=3000",             "amsor:iters=3000",
	"amgs-dense:iters=3000", "pgs-sm:iters=30",  "newton-minmap:iters=60",      "newton-fischer:iters=60",
	"nncg:iters=3000",       "apgd:iters=20000", "mprgp:iters=20000",
	/* Coulomb's cone (docs/solvers.md, "Coulomb's cone"): the bounds of a contact's pair are a disc */
	"pgs:friction=cone,iters=3000", "newton-minmap:friction=cone,iters=60", "apgd:friction=cone,iters=20000",
	"pgs-sm:friction=cone,iters=30",
	/* the interior point on the cones (docs/solvers.md, "Interior point"): the box's two-dimensional ones, and
	 * Coulomb's */
	"ipm:iters=400", "ipm:friction=cone,iters=400",
};
#define N_METHODS (int)(sizeof methods / sizeof methods[0])

/* Each merit with the tolerance that makes an absolute stop mean RES of about 1e-6 or less: theta = RES^2 / 2;
 * the Fischer-Burmeister function is within a factor 2 + sqrt(2) of the natural residual row by row (Tseng
 * 1996), so its merit bounds RES to about 3.4e-6 at this tolerance; the merit "modified" has impulse times
 * velocity units and no such relation to RES. */
typedef struct merit_case {
	const char *name;
	double tol;
} merit_case;

static const merit_case merits[] = {
	{"res", 1e-6},
	{"theta", 5e-13},
	{"fischer", 5e-13},
	{"modified", 1e-12},
	/* Siconos's relative error, divided by max(||q||, ||lambda||, ||w||), at most about 10 here */
	{"fc3d", 1e-8},
};
#define N_MERITS (int)(sizeof merits / sizeof merits[0])

/* What every run that is not an expected failure must reach: RES at most this (the worst of the tolerances
 * above with room for the iteration limit's last sweep). */
#define RES_BOUND 5e-6

/* The expected failures, with the reason each stops for. */
typedef struct expected_failure {
	const char *problem, *method, *merit;
	lk_stop_reason stop;
	const char *why;
	double res_rise; /* RES may end this factor above the start's (1 where it may not rise) */
} expected_failure;

static const expected_failure expected_failures[] = {
	/* Erleben 2013 eq. 106: x^T |A x + b| "does not work for x = 0", and more generally adds nothing for a
	 * row with lambda_i = 0 whatever its w_i. After one minimum-map Newton step on the incline every row
	 * sits at lambda_i = 0 or at w_i ~ 0 while sliding rows still violate their bounds: the merit falls
	 * below 1e-12 and the absolute rule stops with RES 8e-2. Exactly 0 is recognised as blind (monitor.c);
	 * a tiny positive value cannot be told from convergence by this merit alone. */
	{"incline3", "newton-minmap:iters=60", "modified", LK_STOP_ABSOLUTE, "eq. 106 blind to rows at zero", 1.0},
	/* the same blindness after an MPRGP phase on frozen friction boxes: every row at 0 or at w ~ 0, while
	 * friction rows still lie outside the boxes their normals' new impulses give (RES 2.9e-3) */
	{"boxstack5-mu", "mprgp:iters=20000", "modified", LK_STOP_ABSOLUTE, "eq. 106 blind to rows at zero", 1.0},
	/* eq. 106 is a merit of the LCP (lo = 0, hi = inf, lcpkit.h); on the chain's free joint rows it weighs w
	 * by lambda, and MPRGP's second CG step lands where that is below 1e-12 with RES 2.2e-2 */
	{"chain8", "mprgp:iters=20000", "modified", LK_STOP_ABSOLUTE, "eq. 106 is for LCP rows", 1.0},
	{"incline3", "mprgp:iters=20000", "modified", LK_STOP_ABSOLUTE, "eq. 106 blind to rows at zero", 1.0},
	/* the natural map's Newton on the cone (newton_cone.c) takes full steps to infeasible iterates: after the
	 * first one on the frictionless stack every row has lambda_i ~ 0 or w_i ~ 0 (the merit 1e-13) while RES is
	 * 0.327, 0.5% above the start's, and the projection onto the cone that would bring it back raises the merit
	 * it was asked for */
	{"boxstack10", "newton-minmap:friction=cone,iters=60", "modified", LK_STOP_ABSOLUTE,
	 "eq. 106 blind to rows at zero", 1.01},
	{"spherestack20", "newton-minmap:friction=cone,iters=60", "modified", LK_STOP_ABSOLUTE,
	 "eq. 106 blind to rows at zero", 1.0},
	/* the Fischer merit is the box's (lcpkit.h), blind to the disc: the natural map's Newton on the cone meets
	 * 5e-13 on it at an iterate whose cone residual RES is 6.1e-6 */
	{"boxstack5-mu", "newton-minmap:friction=cone,iters=60", "fischer", LK_STOP_ABSOLUTE,
	 "the Fischer merit is the box's", 1.0},
};
#define N_EXPECTED_FAILURES (int)(sizeof expected_failures / sizeof expected_failures[0])

static const expected_failure *find_expected_failure(const char *problem, const char *method, const char *merit)
{
	for (int i = 0; i < N_EXPECTED_FAILURES; ++i) {
		const expected_failure *e = &expected_failures[i];
		if (!strcmp(e->problem, problem) && !strcmp(e->method, method) && !strcmp(e->merit, merit))
			return e;
	}
	return NULL;
}

static int is_failure(lk_stop_reason r)
{
	return r == LK_STOP_NONE || r == LK_STOP_LOCAL_MINIMUM || r == LK_STOP_NON_DESCENT || r == LK_STOP_NONFINITE ||
	       r == LK_STOP_DIVERGED || r == LK_STOP_BAD_DIAGONAL;
}

static int print_mode(void)
{
	const char *e = getenv("LK_COLLECTION_PRINT");
	return e && *e == '1';
}

static lk_problem *make_problem(const problem_case *pc)
{
	return tu_generate(lk_gen_kind_name(pc->kind), pc->n, pc->mu);
}

/* lambda inside its box: lo <= lambda <= hi to rounding; a friction row within mu |lambda_normal| up to
 * `lag` (a Gauss-Seidel sweep may move the normal row after its friction rows, so their boxes lag by one
 * update; the natural residual counts that violation, so it is at most RES). */
static void assert_in_bounds(lk_problem *p, double lag, const char *what)
{
	const double *l = lk_problem_lambda(p);
	for (int i = 0; i < lk_problem_row_count(p); ++i) {
		double lo, hi, mu;
		int findex;
		assert_int_equal(lk_problem_get_bounds(p, i, &lo, &hi, &mu, &findex, NULL), LK_OK);
		if (findex >= 0)
			hi = mu * fabs(l[findex]), lo = -hi;
		double slack = 1e-12 * (1.0 + fabs(l[i])) + (findex >= 0 ? lag : 0.0);
		if (!isfinite(l[i]) || l[i] < lo - slack || l[i] > hi + slack)
			fail_msg("%s: lambda[%d] = %g outside [%g, %g]", what, i, l[i], lo, hi);
	}
}

static void run_one(const problem_case *pc, const char *method, const merit_case *mc)
{
	char spec[200], what[300];
	snprintf(spec, sizeof spec, "%s,merit=%s,tol=%g,warm=0", method, mc->name, mc->tol);
	snprintf(what, sizeof what, "%s with %s", pc->name, spec);
	lk_solver_config cfg = tu_spec(spec);
	lk_problem *p = make_problem(pc);
	lk_stats st;
	lk_status s = lk_solve(p, &cfg, &st, NULL);
	const expected_failure *xf = find_expected_failure(pc->name, method, mc->name);
	if (print_mode())
		printf("%-14s %-30s %-9s %-7s %-13s it %5d RES %.3e -> %.3e best %d%s\n", pc->name, method, mc->name,
		       s == LK_OK ? "ok" : lk_status_string(s), lk_stop_reason_name(st.stop_reason), st.iterations,
		       st.res_initial, st.res_final, st.used_best_iterate, xf ? " (expected failure)" : "");
	if (s != LK_OK)
		fail_msg("%s: %s", what, lk_problem_error(p));
	assert_in_bounds(p, st.res_final, what);
	if (!(st.res_final <= st.res_initial * (xf ? xf->res_rise : 1.0)))
		fail_msg("%s: RES %g rose above the start's %g", what, st.res_final, st.res_initial);
	if (xf) {
		if (st.stop_reason != xf->stop)
			fail_msg("%s: an expected failure (%s) stopped for %s, not %s: update the table", what, xf->why,
			         lk_stop_reason_name(st.stop_reason), lk_stop_reason_name(xf->stop));
	} else {
		if (is_failure(st.stop_reason))
			fail_msg("%s: stopped for %s", what, lk_stop_reason_name(st.stop_reason));
		if (!(st.res_final <= RES_BOUND))
			fail_msg("%s: RES %g after %d iterations (%s), above %g", what, st.res_final, st.iterations,
			         lk_stop_reason_name(st.stop_reason), RES_BOUND);
	}
	lk_problem_destroy(p);
}

static void test_collection(void **state)
{
	(void)state;
	for (int i = 0; i < N_PROBLEMS; ++i)
		for (int j = 0; j < N_METHODS; ++j)
			for (int k = 0; k < N_MERITS; ++k)
				run_one(&problems[i], methods[j], &merits[k]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

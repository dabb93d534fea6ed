/* The two-level correction of PGS and PSOR (coarse=K, common/src/coarse.c): what it is for, a stack's slow
 * mode removed in a few sweeps, checked against the complementarity conditions; its safeguard, the objective
 * f(lambda) = 1/2 lambda^T A lambda + q^T lambda never rising on a frictionless problem (every Gauss-Seidel
 * row update lowers it, and a correction's line search never raises it); the weak modes of nearly coplanar
 * contacts left out; the budget; and the cases without a coarse level, where it must change nothing. */
#include "test_util.h"
#include "lcpkit/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static lk_stats solve_cold(lk_problem *p, const char *spec)
{
	const int n = lk_problem_row_count(p);
	double *zero = calloc((size_t)n + 1, sizeof *zero);
	assert_int_equal(lk_problem_set_lambda(p, zero, n), LK_OK);
	free(zero);
	lk_solver_config c = tu_spec(spec);
	lk_stats st;
	assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
	return st;
}

/* A stack's weight reaches its bottom face after about as many sweeps as the stack is high; with the faces
 * welded in one coarse solve it is there after the first correction. Frictionless and with friction, 20 and
 * 50 boxes (four contacts per face: A is semidefinite). */
static void test_stack_in_a_few_sweeps(void **state)
{
	(void)state;
	const struct {
		int n;
		double mu;
		const char *spec;
		double tol;
	} cases[] = {
		{20, 0.0, "pgs:iters=20,coarse=2", 1e-12},
		{20, 0.5, "pgs:iters=20,coarse=2", 1e-10},
		{50, 0.5, "pgs:iters=40,coarse=2", 1e-6},
		{20, 0.5, "psor:w=1.2,iters=30,coarse=3", 1e-8},
		/* Coulomb's cone: the correction's friction projected onto each contact's disc */
		{20, 0.5, "pgs:iters=20,coarse=2,friction=cone", 1e-10},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
		lk_problem *p = tu_generate("boxstack", cases[k].n, cases[k].mu);
		char plain[64];
		snprintf(plain, sizeof plain, "pgs:iters=%d%s", cases[k].n == 50 ? 40 : 30,
		         strstr(cases[k].spec, "cone") ? ",friction=cone" : "");
		const lk_stats ps = solve_cold(p, plain);
		const lk_stats cs = solve_cold(p, cases[k].spec);
		if (!(cs.res_final < cases[k].tol))
			fail_msg("%d boxes, mu %g, %s: RES %g (plain PGS: %g)", cases[k].n, cases[k].mu, cases[k].spec,
			         cs.res_final, ps.res_final);
		/* plain PGS, with as many sweeps or more, is nowhere near */
		assert_true(ps.res_final > 1e-2);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e3 * cases[k].tol);
		lk_problem_destroy(p);
	}
}

/* f along the iterates of pgs:coarse=1 on frictionless problems: the iterate after k sweeps of a run is the
 * result of the same solve with iters=k (deterministic), so f(lambda_k) over k is the run's trajectory. */
static double objective(lk_problem *p, const double *lambda)
{
	const int n = lk_problem_row_count(p);
	double *w = malloc(((size_t)n + 1) * sizeof *w), *q = malloc(((size_t)n + 1) * sizeof *q);
	double *zero = calloc((size_t)n + 1, sizeof *zero);
	assert_int_equal(lk_problem_apply(p, lambda, w, 1), LK_OK);
	assert_int_equal(lk_problem_apply(p, zero, q, 1), LK_OK);
	double f = 0.0; /* 1/2 lambda^T A lambda + q^T lambda = 1/2 lambda^T (w + q) */
	for (int i = 0; i < n; ++i)
		f += 0.5 * lambda[i] * (w[i] + q[i]);
	free(w);
	free(q);
	free(zero);
	return f;
}

static void test_objective_never_rises(void **state)
{
	(void)state;
	/* generated stacks and packings, and random rows, where several rows share a body pair at random and the
	 * welded faces often ask for tension: there the projected correction would raise f, and is undone */
	const char *kinds[] = {"boxstack", "heavy-on-light", "packing", "random", "random", "random"};
	const int sizes[] = {20, 10, 60, 1, 2, 3};
	for (int k = 0; k < 6; ++k) {
		lk_problem *p = strcmp(kinds[k], "random") ? tu_generate(kinds[k], sizes[k], 0.0)
		                                           : tu_random_rows(6, 40, (uint64_t)sizes[k], 0.0);
		const int n = lk_problem_row_count(p);
		double *lambda = malloc((size_t)n * sizeof *lambda);
		double prev = 0.0; /* f(0) */
		for (int it = 1; it <= 24; ++it) {
			char spec[64];
			snprintf(spec, sizeof spec, "pgs:iters=%d,coarse=1", it);
			solve_cold(p, spec);
			memcpy(lambda, lk_problem_lambda(p), (size_t)n * sizeof *lambda);
			const double f = objective(p, lambda);
			if (f > prev + 1e-12 * fabs(prev))
				fail_msg("%s: f rose from %.17g to %.17g at sweep %d", kinds[k], prev, f, it);
			prev = f;
		}
		free(lambda);
		lk_problem_destroy(p);
	}
}

/* A step recorded from Bullet's 20-box stack (tests/data/bullet-boxstack20-step6.lkp, warm-started, no CFM):
 * the four contacts of a face are a rounding away from coplanar (Bullet's margins), so the face's rows span a
 * fourth direction whose energy J_c M^-1 J_c^T is 5e-9 of the others'. Kept, the coarse solve put an impulse
 * of 2e4 there, every correction had to be undone and the solve ended where plain PGS does (RES 0.83); with
 * that mode left out, the corrections are descents and the same 20 sweeps end at RES 0.64. */
static void test_weak_mode_left_out(void **state)
{
	(void)state;
	lk_problem *p = NULL;
	char err[256];
	assert_int_equal(lk_problem_read(tu_data_path("bullet-boxstack20-step6.lkp"), NULL, &p, NULL, err, sizeof err), LK_OK);
	const int n = lk_problem_row_count(p);
	double *warm = malloc((size_t)n * sizeof *warm);
	memcpy(warm, lk_problem_lambda(p), (size_t)n * sizeof *warm);
	lk_solver_config c = tu_spec("pgs:iters=20");
	lk_stats plain, coarse;
	assert_int_equal(lk_solve(p, &c, &plain, NULL), LK_OK);
	assert_int_equal(lk_problem_set_lambda(p, warm, n), LK_OK);
	c = tu_spec("pgs:iters=20,coarse=2");
	assert_int_equal(lk_solve(p, &c, &coarse, NULL), LK_OK);
	assert_int_equal(coarse.stop_reason, LK_STOP_ITERATIONS);
	if (!(coarse.res_final < 0.85 * plain.res_final && plain.res_final < coarse.res_initial))
		fail_msg("RES %g with the correction, %g without (start %g)", coarse.res_final, plain.res_final,
		         coarse.res_initial);
	free(warm);
	lk_problem_destroy(p);
}

/* Under a budget a correction is made only when the work left pays for it, and its work is counted: the
 * budget holds to half a sweep, as for every method; a budget too small for one leaves plain PGS, bit for
 * bit. */
static void test_budget(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 20, 0.5);
	const int n = lk_problem_row_count(p);
	/* the first correction also makes the coarse rows and their factor, about 14 sweeps here */
	const lk_stats big = solve_cold(p, "pgs:budget=40,iters=1000,coarse=2");
	assert_true(big.work <= 40.5);
	const lk_stats same = solve_cold(p, "pgs:budget=40,iters=1000");
	if (!(big.res_final < 1e-4 && same.res_final > 1e-2))
		fail_msg("budget 40: RES %g with the correction, %g without", big.res_final, same.res_final);
	/* every budget holds, those too small for the first correction's coarse rows and factor included: its
	 * cost is bounded from the coarse structure before any of it is spent (an estimate of the first correction
	 * used to let a budget of 12 end at 15.9 inside ODE) */
	for (int b = 8; b <= 20; ++b) {
		char spec[64];
		snprintf(spec, sizeof spec, "pgs:budget=%d,iters=1000,coarse=2", b);
		const lk_stats st = solve_cold(p, spec);
		if (!(st.work <= b + 0.5))
			fail_msg("%s: work %g", spec, st.work);
	}
	const lk_stats plain = solve_cold(p, "pgs:budget=5,iters=1000");
	double *ref = malloc((size_t)n * sizeof *ref);
	memcpy(ref, lk_problem_lambda(p), (size_t)n * sizeof *ref);
	const lk_stats small = solve_cold(p, "pgs:budget=5,iters=1000,coarse=2");
	assert_int_equal(small.iterations, plain.iterations);
	assert_memory_equal(ref, lk_problem_lambda(p), (size_t)n * sizeof *ref);
	free(ref);
	lk_problem_destroy(p);
}

/* Nothing to aggregate (a chain of joints: no normal rows), or no coarse level worth its factor (a packing of
 * spheres, every contact its own face): the solve is plain PGS, bit for bit. */
/* Boxes sliding down a slope (a recorded step of the `slide` scene in ODE): the welded solution asks for
 * more friction than the boxes' boxes allow, and its projection clips 70-75 % of the faces' rows. Such a
 * correction is not taken, and PSOR with it ends near PSOR alone instead of far above (RES 0.38 after 40
 * sweep-equivalents when it was taken, 4e-9 for PSOR alone). */
static void test_sliding_faces_left_alone(void **state)
{
	(void)state;
	char err[256];
	double res[2];
	const char *specs[2] = {"psor:w=1.2,budget=40,measure=1", "psor:w=1.2,coarse=2,budget=40,measure=1"};
	for (int k = 0; k < 2; ++k) {
		lk_problem *p = NULL;
		assert_int_equal(lk_problem_read(tu_data_path("ode-slide-step10.lkp"), NULL, &p, NULL, err, sizeof err),
		                 LK_OK);
		lk_solver_config c = tu_spec(specs[k]);
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		assert_true(st.work <= 40.5);
		res[k] = st.res_final;
		lk_problem_destroy(p);
	}
	print_message("sliding boxes, budget 40: PSOR RES %.2e, with the correction %.2e\n", res[0], res[1]);
	if (!(res[0] < 1e-6 && res[1] < 1e-4))
		fail_msg("RES %g alone, %g with the correction", res[0], res[1]);
}

/* A stack whose bottom face lifts at one corner (a recorded step of Bullet's 25-box stack, its boxes shifted
 * sideways by 1e-4 of their size, as it lands): the welded faces ask that corner to pull, and once it is open
 * they ask again at every correction, whose projection the line search then cut to 1-4 % of a step (RES 1.9e-2
 * after three corrections, 3.9e-3 after fifteen). Left out of its face after the second time, the corner no
 * longer bends the correction, which solves the landing in a few (the stack stands instead of rocking). */
static void test_lifting_corner_left_out(void **state)
{
	(void)state;
	char err[256];
	lk_problem *p = NULL;
	assert_int_equal(lk_problem_read(tu_data_path("bullet-boxstack25-seed1-step5.lkp"), NULL, &p, NULL, err,
	                                 sizeof err),
	                 LK_OK);
	lk_solver_config c = tu_spec("pgs:coarse=1,iters=4");
	lk_stats st;
	assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
	print_message("lifting corner: RES %.2e -> %.2e in %d iterations\n", st.res_initial, st.res_final, st.iterations);
	if (!(st.res_final < 1e-5))
		fail_msg("RES %g after four corrections", st.res_final);
	/* the corner (row 64, the bottom box on the ground) is open: next to no load, and not closing */
	const double *lambda = lk_problem_lambda(p);
	double most = 0.0;
	for (int i = 65; i <= 67; ++i)
		most = fmax(most, lambda[i]);
	assert_true(lambda[64] < 1e-4 * most);
	tu_assert_complementarity(p, lambda, 1e-3);
	lk_problem_destroy(p);
}

static void test_no_coarse_level(void **state)
{
	(void)state;
	const char *kinds[] = {"chain", "packing"};
	const int sizes[] = {20, 300};
	for (int k = 0; k < 2; ++k) {
		lk_problem *p = tu_generate(kinds[k], sizes[k], 0.5);
		const int n = lk_problem_row_count(p);
		solve_cold(p, "pgs:iters=40");
		double *ref = malloc((size_t)n * sizeof *ref);
		memcpy(ref, lk_problem_lambda(p), (size_t)n * sizeof *ref);
		const lk_stats st = solve_cold(p, "pgs:iters=40,coarse=2");
		assert_memory_equal(ref, lk_problem_lambda(p), (size_t)n * sizeof *ref);
		/* what was looked at is counted: the faces' normal rows once and the coarse structure's analysis
		 * (a row update a face; with friction a face has three rows at least), and no more */
		if (!(st.work >= 40.0 && st.work <= 40.0 + 0.5 / 3.0 + 0.5 + 1e-9))
			fail_msg("%s: work %g for 40 sweeps", kinds[k], st.work);
		free(ref);
		lk_problem_destroy(p);
	}
}

static void test_config(void **state)
{
	(void)state;
	lk_solver_config c;
	char err[256];
	assert_int_equal(lk_config_parse("pgs:coarse=3", &c, err, sizeof err), LK_OK);
	assert_int_equal(c.coarse, 3);
	assert_int_equal(lk_config_parse("psor:coarse=2", &c, err, sizeof err), LK_OK);
	assert_int_not_equal(lk_config_parse("pgs:coarse=-1", &c, err, sizeof err), LK_OK);
	/* the correction belongs to the Gauss-Seidel sweeps of PGS and PSOR */
	assert_int_not_equal(lk_config_parse("amgs:coarse=2", &c, err, sizeof err), LK_OK);
	assert_int_not_equal(lk_config_parse("apgd:coarse=2", &c, err, sizeof err), LK_OK);
	/* with either friction model (the cone's pairs projected onto their discs), and not under a staggered
	 * schedule, which would sweep without it */
	assert_int_equal(lk_config_parse("pgs:coarse=2,friction=cone", &c, err, sizeof err), LK_OK);
	assert_int_equal(lk_config_parse("gsp:coarse=2", &c, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "not the gsp schedule"));
	assert_int_equal(lk_config_parse("pgs:order=esp,coarse=2", &c, err, sizeof err), LK_ERR_PARSE);
	/* a matrix has no faces: refused, lambda as it was */
	lk_problem *m = tu_random_spd_matrix(12, 3, 0.5);
	double before[12];
	memcpy(before, lk_problem_lambda(m), sizeof before);
	lk_solver_config cc = tu_spec("pgs:coarse=2,iters=10");
	assert_int_equal(lk_solve(m, &cc, NULL, NULL), LK_ERR_UNSUPPORTED);
	assert_non_null(strstr(lk_problem_error(m), "coarse=2 works on the row form"));
	assert_memory_equal(before, lk_problem_lambda(m), sizeof before);
	lk_problem_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_in_a_few_sweeps),
		cmocka_unit_test(test_objective_never_rises),
		cmocka_unit_test(test_weak_mode_left_out),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_sliding_faces_left_alone),
		cmocka_unit_test(test_lifting_corner_left_out),
		cmocka_unit_test(test_no_coarse_level),
		cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

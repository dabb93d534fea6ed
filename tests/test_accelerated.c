/* The accelerated methods, NNCG (Silcowitz, Niebe & Erleben 2010) and APGD (Mazhar et al. 2015, with the
 * adaptive restart of O'Donoghue & Candes 2015): the properties their papers report and the conditions of
 * the LCP.
 * - Fletcher-Reeves momentum on the PGS step: on box stacks, where PGS converges slowly, NNCG needs several
 *   times fewer iterations than PGS to the same residual (their Figures on stacked boxes);
 * - what it returns is a projected PGS iterate, so it satisfies the bounds, and the solution it reaches
 *   satisfies complementarity;
 * - deterministic: the same problem gives the same lambda, bit for bit;
 * - APGD: Nesterov's acceleration needs O(sqrt(kappa)) iterations where gradient-like methods need
 *   O(kappa); on a stack (kappa grows with the square of its height) it needs several times fewer
 *   iterations than PGS, and on the 20-box stack with friction a small fraction of PGS's time. */
#include "test_util.h"

#include "lcpkit/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int iterations_to(const char *kind, int n, double mu, const char *method, double tol)
{
	char s[128];
	snprintf(s, sizeof s, "%s%siters=20000,tol=%g,warm=0", method, strchr(method, ':') ? "," : ":", tol);
	lk_solver_config c = tu_spec(s);
	lk_problem *p = tu_generate(kind, n, mu);
	lk_stats st;
	assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	tu_assert_complementarity(p, lk_problem_lambda(p), tol > 1e-6 ? 10 * tol : 1e-5);
	lk_problem_destroy(p);
	return st.iterations;
}

/* Work to RES 1e-4 from zero on 20 boxes with mu = 0.5 (PGS: 26,679 sweeps). */
static double stack20_work(const char *method)
{
	char spec[128];
	snprintf(spec, sizeof spec, "%s:iters=100000,tol=1e-4,warm=0", method);
	lk_problem *p = tu_generate("boxstack", 20, 0.5);
	lk_solver_config c = tu_spec(spec);
	lk_stats st;
	assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
	lk_problem_destroy(p);
	return st.work;
}

/* The method needs at most a third of PGS's iterations to RES 1e-6 from zero on box and sphere stacks. */
static void assert_third_of_pgs_on_stacks(const char *method)
{
	const struct {
		const char *kind;
		int n;
		double mu;
	} cases[] = {{"boxstack", 10, 0.0}, {"boxstack", 5, 0.5}, {"spherestack", 20, 0.0}};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
		int pgs = iterations_to(cases[k].kind, cases[k].n, cases[k].mu, "pgs", 1e-6);
		int it = iterations_to(cases[k].kind, cases[k].n, cases[k].mu, method, 1e-6);
		print_message("%s n=%d mu=%g: pgs %d, %s %d iterations to RES 1e-6\n", cases[k].kind, cases[k].n,
		              cases[k].mu, pgs, method, it);
		if (!(it * 3 <= pgs))
			fail_msg("%s: %s %d iterations, pgs %d", cases[k].kind, method, it, pgs);
	}
}

static void test_fewer_iterations_than_pgs_on_stacks(void **state)
{
	(void)state;
	/* measured: 500 against 140 (boxes, frictionless), 2,716 against 223 (boxes, mu 0.5), 1,752 against
	 * 157 (spheres); asserted with room */
	assert_third_of_pgs_on_stacks("nncg");
}

/* At equal work, a 20-box stack with friction from a cold start: a lower residual than PGS's. */
static void test_better_at_equal_budget(void **state)
{
	(void)state;
	double res[2];
	const char *specs[2] = {"pgs:budget=100,warm=0", "nncg:budget=100,warm=0"};
	for (int k = 0; k < 2; ++k) {
		lk_problem *p = tu_generate("boxstack", 20, 0.5);
		lk_solver_config c = tu_spec(specs[k]);
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		assert_true(st.work <= 100.5 + 1e-9); /* half a sweep past: the monitor's rule */
		res[k] = st.res_final;
		lk_problem_destroy(p);
	}
	print_message("20 boxes, 100 sweep-equivalents: RES pgs %.3e, nncg %.3e\n", res[0], res[1]);
	assert_true(res[1] < 0.6 * res[0]);
}

static void test_apgd_on_stacks(void **state)
{
	(void)state;
	/* measured: 500 against 112 (boxes, frictionless), 2,716 against 218 (boxes, mu 0.5), 1,752 against 202
	 * (spheres) iterations to RES 1e-6 */
	assert_third_of_pgs_on_stacks("apgd");
	/* 20 boxes with mu = 0.5, to RES 1e-4: PGS needs 26,679 sweeps, APGD 252 sweep-equivalents of work
	 * (216 iterations) */
	double pgs = stack20_work("pgs"), apgd = stack20_work("apgd");
	print_message("20 boxes, mu 0.5, to RES 1e-4: pgs %.0f, apgd %.0f sweep-equivalents\n", pgs, apgd);
	assert_true(apgd * 10 < pgs);
}

/* The diagonal metric makes the gradient methods' iterates independent of the rows' units: on the problem with
 * rows scaled by R they give R^-1 lambda, to rounding. APGD's step D^-1 g, the model's norm sum_i A_ii d_i^2,
 * the restart test g^T d and the start estimate of L (a Rayleigh quotient of D^-1/2 A D^-1/2) do not change
 * with the scaling; MPRGP with metric=diag runs on D^-1/2 A D^-1/2 and D^-1/2 q, the same numbers for both
 * problems. With one scale for every row they are not: rows 100 times stiffer than the others set L (APGD) or
 * |A| and the CG's directions (MPRGP). A 10-box stack with mu = 0.5, every other row scaled by 100, 80
 * iterations from zero. */
static void test_row_scaling(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("boxstack", 10, 0.5);
	const int n = lk_problem_row_count(p);
	double *scale = malloc((size_t)n * sizeof *scale), *ref = malloc((size_t)n * sizeof *ref);
	assert_non_null(scale);
	assert_non_null(ref);
	for (int i = 0; i < n; ++i)
		scale[i] = i % 2 ? 100.0 : 1.0;
	lk_problem *q = tu_copy_problem(p, NULL, 0, scale);
	const char *specs[4] = {"apgd:iters=80,warm=0", "apgd:metric=identity,iters=80,warm=0",
	                        "mprgp:metric=diag,iters=80,warm=0", "mprgp:iters=80,warm=0"};
	for (int k = 0; k < 4; ++k) {
		lk_solver_config c = tu_spec(specs[k]);
		assert_int_equal(lk_solve(p, &c, NULL, NULL), LK_OK);
		memcpy(ref, lk_problem_lambda(p), (size_t)n * sizeof *ref);
		assert_int_equal(lk_solve(q, &c, NULL, NULL), LK_OK);
		const double *l = lk_problem_lambda(q);
		double top = 0.0, diff = 0.0;
		for (int i = 0; i < n; ++i) {
			top = fmax(top, fabs(ref[i]));
			diff = fmax(diff, fabs(l[i] * scale[i] - ref[i]));
		}
		print_message("rows scaled by 100, %s: lambda off by %.2e of its largest\n", specs[k], diff / top);
		if (k % 2 == 0 && !(diff < 1e-9 * top))
			fail_msg("%s: off by %g of the largest impulse", specs[k], diff / top);
		if (k % 2 == 1 && !(diff > 1e-2 * top))
			fail_msg("%s: off by only %g of the largest impulse", specs[k], diff / top);
	}
	free(scale);
	free(ref);
	lk_problem_destroy(p);
	lk_problem_destroy(q);
}

/* APGD to rounding on a universal joint of ODE's demo_joints (test 741; tests/data/ode-universal-step20.lkp:
 * two bodies, the joint's four rows and its motor's), where PGS gets RES 1e-17 in 20 sweeps. Its backtracking
 * once tested f(trial) <= f(y) + g^T d + L/2 |d|^2 on values of f, whose rounding (|f| times the unit roundoff)
 * hid every step below its square root: it stalled at RES 6e-11 (2.7e-9 with the identity metric) at any
 * budget, and the joint drifted past what the demo accepts. For the quadratic f the test is d^T A d <= L |d|^2,
 * tested on d's own scale. */
static void test_apgd_to_rounding(void **state)
{
	(void)state;
	lk_problem *p = NULL;
	char err[256];
	assert_int_equal(lk_problem_read(tu_data_path("ode-universal-step20.lkp"), NULL, &p, NULL, err, sizeof err),
	                 LK_OK);
	const char *specs[2] = {"apgd:budget=100,warm=0", "apgd:metric=identity,budget=100,warm=0"};
	for (int k = 0; k < 2; ++k) {
		lk_solver_config c = tu_spec(specs[k]);
		c.max_iterations = INT32_MAX;
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		print_message("%s: %d iterations, RES %.3g -> %.3g\n", specs[k], st.iterations, st.res_initial, st.res_final);
		assert_true(st.res_final < 1e-14);
	}
	lk_problem_destroy(p);
}

/* One product an iteration: the gradient at the extrapolated point comes from the products at the last two
 * iterates, and a failed trial costs one more, so the work stays near a product an iteration; and the
 * rounding slack of the decrease test lets it reach the rounding level (it stalled doubling L before:
 * 150 spheres and a 300-sphere packing did not reach 1e-8 in 200,000 iterations; measured now 1,822 and
 * 120, at 1.16 and 1.19 products an iteration). */
static void test_apgd_one_product(void **state)
{
	(void)state;
	const struct {
		const char *kind;
		int n;
	} cases[] = {{"spherestack", 150}, {"packing", 300}};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
		lk_problem *p = tu_generate(cases[k].kind, cases[k].n, 0.0);
		lk_solver_config c = tu_spec("apgd:iters=20000,tol=1e-8,warm=0");
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-7);
		/* products counted in sweep-equivalents (weight 1), the one for the start estimate of L included */
		double per_iteration = st.work / st.iterations;
		if (!(per_iteration < 1.35))
			fail_msg("%s: %.2f products an iteration", cases[k].kind, per_iteration);
		lk_problem_destroy(p);
	}
}

/* MPRGP (Dostal & Schoberl 2005): on a frictionless problem the QP has fixed bounds, and MPRGP terminates
 * finitely, in exact arithmetic at the solution: here at the rounding level of RES within a few dozen
 * iterations (measured: 10 boxes 25, 20 spheres 74), where PGS is at 1e-4 after 302 and 1,006 sweeps; on the
 * 20-box stack with friction (bounds refrozen every 25 iterations) it needs 1/50 of PGS's work to 1e-4. */
static void test_mprgp(void **state)
{
	(void)state;
	const char *kinds[2] = {"boxstack", "spherestack"};
	const int ns[2] = {10, 20};
	for (int k = 0; k < 2; ++k) {
		lk_problem *p = tu_generate(kinds[k], ns[k], 0.0);
		lk_solver_config c = tu_spec("mprgp:iters=200,tol=1e-12,warm=0");
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		print_message("%s n=%d frictionless: mprgp RES %.2e after %d iterations\n", kinds[k], ns[k], st.res_final,
		              st.iterations);
		assert_int_equal(st.stop_reason, LK_STOP_ABSOLUTE);
		assert_true(st.iterations <= 100);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-9);
		lk_problem_destroy(p);
	}
	double pgs = stack20_work("pgs"), mprgp = stack20_work("mprgp");
	print_message("20 boxes, mu 0.5, to RES 1e-4: pgs %.0f, mprgp %.0f sweep-equivalents\n", pgs, mprgp);
	assert_true(mprgp * 50 < pgs);
}

/* A solved iterate stays solved: on a box resting on one edge in Bullet (two contacts, six rows, recorded from
 * tests/test_bullet's scene), MPRGP reaches RES 1e-16 within 20 sweep-equivalents. It used to go on with CG
 * steps whose p^T A p was rounding, and ended at budget 100 with RES 0.18, five times the start's, which
 * lk_solve's end check turned into a "diverged" stop and the adapter into a fallback. Every budget from 20
 * to 150 now ends solved. */
static void test_mprgp_stays_solved(void **state)
{
	(void)state;
	char err[256];
	for (int budget = 20; budget <= 150; budget += 10) {
		lk_problem *p = NULL;
		assert_int_equal(lk_problem_read(tu_data_path("bullet-box-edge.lkp"), NULL, &p, NULL, err, sizeof err),
		                 LK_OK);
		char spec[64];
		snprintf(spec, sizeof spec, "mprgp:budget=%d,measure=1", budget);
		lk_solver_config c = tu_spec(spec);
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		if (!(st.res_final < 1e-12) || st.stop_reason == LK_STOP_DIVERGED)
			fail_msg("budget %d: RES %.3e -> %.3e, stop %s", budget, st.res_initial, st.res_final,
			         lk_stop_reason_name(st.stop_reason));
		assert_true(st.work <= budget);
		tu_assert_complementarity(p, lk_problem_lambda(p), 1e-10);
		lk_problem_destroy(p);
	}
}

/* psor:w=auto: parsed and formatted as such; on a frictionless sphere stack it needs well under PGS's sweeps
 * (measured 317 against 1,006 to RES 1e-4), and on a frictional packing it converges with w capped at 1.5
 * (a fixed w = 1.8 does not converge there within 100,000 sweeps). */
static void test_psor_auto(void **state)
{
	(void)state;
	lk_solver_config c = tu_spec("psor:w=auto");
	assert_true(c.sor_w == LK_SOR_AUTO);
	char buf[128];
	assert_int_equal(lk_config_format(&c, buf, sizeof buf), LK_OK);
	assert_string_equal(buf, "psor:w=auto");
	int pgs = iterations_to("spherestack", 20, 0.0, "pgs", 1e-4);
	int autow = iterations_to("spherestack", 20, 0.0, "psor:w=auto", 1e-4);
	print_message("20 spheres to RES 1e-4: pgs %d, psor:w=auto %d sweeps\n", pgs, autow);
	assert_true(autow * 2 < pgs);
	int fixed = iterations_to("packing", 60, 0.5, "psor:w=auto", 1e-4);
	assert_true(fixed < 2000);
	/* auto takes a relaxation as a number only */
	lk_solver_config a;
	char err[200];
	assert_int_equal(lk_config_parse("auto:w=1.3", &a, err, sizeof err), LK_OK);
	assert_true(a.sor_w == 1.3);
	assert_int_equal(lk_config_parse("auto:w=auto", &a, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "w=auto is PSOR's"));
}

static void test_deterministic(void **state)
{
	(void)state;
	lk_problem *a = tu_generate("packing", 80, 0.5), *b = tu_generate("packing", 80, 0.5);
	const char *specs[2] = {"nncg:iters=60,warm=0", "apgd:iters=60,warm=0"};
	for (int k = 0; k < 2; ++k) {
		lk_solver_config c = tu_spec(specs[k]);
		assert_int_equal(lk_solve(a, &c, NULL, NULL), LK_OK);
		assert_int_equal(lk_solve(b, &c, NULL, NULL), LK_OK);
		int n = lk_problem_row_count(a);
		assert_memory_equal(lk_problem_lambda(a), lk_problem_lambda(b), (size_t)n * sizeof(double));
	}
	lk_problem_destroy(a);
	lk_problem_destroy(b);
}

/* A step of ODE's cylinder demo (tests/data/ode-cylinder-step160.lkp: a cylinder and a box on a mesh, soft
 * contacts with slip, mu = 50), from lambda = 0 as ODE starts every step, at an engine's budget. A cold start
 * freezes every friction box at the point [0, 0]; with phases of 25 iterations the box never opened within
 * 7 iterations, the friction rows' residual grew with their normals' impulses, and the solve ended at twice
 * the start's RES: `diverged`, which made ODE's stepper take 778 of the demo's 9,600 steps. Under a budget a
 * phase now lasts half the iterations the budget leaves, so the friction rows get their boxes. */
static void test_mprgp_friction_under_budget(void **state)
{
	(void)state;
	lk_problem *p = NULL;
	char err[256];
	assert_int_equal(lk_problem_read(tu_data_path("ode-cylinder-step160.lkp"), NULL, &p, NULL, err, sizeof err),
	                 LK_OK);
	const char *specs[2] = {"mprgp:warm=0", "mprgp:metric=diag,warm=0"};
	const double budgets[3] = {12, 16, 20};
	for (int k = 0; k < 2; ++k)
		for (int b = 0; b < 3; ++b) {
			lk_solver_config c = tu_spec(specs[k]);
			lk_config_set_engine_budget(&c, (int)budgets[b]);
			lk_stats st;
			assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
			print_message("%s, budget %g: %d iterations, work %.1f, RES %.3g -> %.3g (%s)\n", specs[k], budgets[b],
			              st.iterations, st.work, st.res_initial, st.res_final, lk_stop_reason_name(st.stop_reason));
			assert_int_equal(st.stop_reason, LK_STOP_BUDGET);
			assert_true(st.res_final < 0.6 * st.res_initial);
			assert_true(st.work <= budgets[b] + 1.0);
		}
	lk_problem_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fewer_iterations_than_pgs_on_stacks),
		cmocka_unit_test(test_better_at_equal_budget),
		cmocka_unit_test(test_apgd_on_stacks),
		cmocka_unit_test(test_apgd_one_product),
		cmocka_unit_test(test_apgd_to_rounding),
		cmocka_unit_test(test_row_scaling),
		cmocka_unit_test(test_psor_auto),
		cmocka_unit_test(test_mprgp),
		cmocka_unit_test(test_mprgp_stays_solved),
		cmocka_unit_test(test_mprgp_friction_under_budget),
		cmocka_unit_test(test_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The work budget (docs/solvers.md, "Work"): one unit for every method, the work of one PGS sweep. Each
 * method given a budget it cannot converge within must stop for "budget" having spent it, and no more than
 * one step of its own beyond it; PGS under budget=N is PGS with iters=N, bit for bit; a time budget stops a
 * solve too, on the wall clock whatever clock the statistics read. */
#include "test_util.h"
#include "lcpkit/generate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static lk_problem *packing(void)
{
	return tu_generate("packing", 60, 0.5);
}

/* Every method, with an iteration limit far beyond what the budget pays for, so that the budget binds. The
 * Gauss-Seidel family spends whole sweeps and stops on the budget exactly; PGS-SM sizes its PGS phase and its
 * CG products by what is left, and may overshoot by the right-hand side of a subspace step (|A| row updates);
 * a Newton iteration starts only when the budget pays for its three products at least (a Krylov product, the
 * slope's, one line-search evaluation), its Krylov products and GMRES's restarts are capped by what is left,
 * its line search stops where the budget does, and what cannot pay for an iteration goes into PGS sweeps: it
 * ends within half a sweep of the budget, as PGS-SM does (it used to spend up to five line-search evaluations,
 * 18.5 sweep-equivalents, beyond it). */
typedef struct budget_case {
	const char *spec;
	double overshoot; /* sweep-equivalents the method may spend beyond the budget */
} budget_case;

static const budget_case cases[] = {
	{"pgs:iters=100000", 0},           {"psor:iters=100000", 0},     {"gsp:iters=100000", 0},
	{"esp:iters=100000", 0},           {"amgs:iters=100000", 0},     {"amsor:iters=100000", 0},
	{"pgs-sm:iters=100000", 1.0},         {"pgs-sm:iters=100000,kpgs=3,ksm=2", 1.0},
	{"newton-minmap:iters=100000", 0.5}, {"newton-fischer:iters=100000", 0.5},
	{"newton-fischer:iters=100000,strategy=approximation", 0.5},
	{"nncg:iters=100000", 0.5},
	{"apgd:iters=100000", 3.0},        {"mprgp:iters=100000", 2.0},
	{"pgs:friction=cone,iters=100000", 0}, {"newton-minmap:friction=cone,iters=100000", 0.5},
	{"apgd:friction=cone,iters=100000", 3.0}, {"pgs-sm:friction=cone,iters=100000", 1.0},
};

static void test_budget_binds(void **state)
{
	(void)state;
	const double budgets[] = {5, 12, 40};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
		for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; ++b) {
			char s[160];
			snprintf(s, sizeof s, "%s,budget=%g,warm=0", cases[k].spec, budgets[b]);
			lk_solver_config c = tu_spec(s);
			lk_problem *p = packing();
			lk_stats st;
			assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
			if (st.stop_reason != LK_STOP_BUDGET)
				fail_msg("%s: stopped for %s after work %g", s, lk_stop_reason_name(st.stop_reason), st.work);
			/* spent: within half a sweep of the budget from below (the rule stops when less than half a
			 * sweep is left), and at most the method's largest step above it */
			if (!(st.work >= budgets[b] - 0.5 - 1e-12 && st.work <= budgets[b] + cases[k].overshoot + 1e-12))
				fail_msg("%s: spent %g sweep-equivalents", s, st.work);
			/* the weights of docs/solvers.md: a sweep's row 1, a CG row 1.6, a Newton row 3.7, an NNCG
			 * momentum row 0.7 */
			if (!(st.work >= 0.5 * (double)st.row_updates / st.rows - 1e-9 &&
			      st.work <= 3.7 * (double)st.row_updates / st.rows + 1e-9))
				fail_msg("%s: work %g against %lld row updates", s, st.work, (long long)st.row_updates);
			lk_problem_destroy(p);
		}
	}
}

static void test_budget_is_iterations_for_pgs(void **state)
{
	(void)state;
	lk_problem *a = packing(), *b = packing();
	lk_solver_config ci = tu_spec("pgs:iters=17,warm=0"), cb = tu_spec("pgs:iters=1000,budget=17,warm=0");
	lk_stats si, sb;
	assert_int_equal(lk_solve(a, &ci, &si, NULL), LK_OK);
	assert_int_equal(lk_solve(b, &cb, &sb, NULL), LK_OK);
	assert_int_equal(si.iterations, 17);
	assert_int_equal(sb.iterations, 17);
	assert_int_equal(sb.stop_reason, LK_STOP_BUDGET);
	int n = lk_problem_row_count(a);
	assert_memory_equal(lk_problem_lambda(a), lk_problem_lambda(b), (size_t)n * sizeof(double));
	lk_problem_destroy(a);
	lk_problem_destroy(b);
}

/* A time budget of one microsecond: every method stops for "budget" after its first step, never before it
 * (a solve always makes progress). */
static void test_time_budget(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
		char s[160];
		snprintf(s, sizeof s, "%s,time_us=1,warm=0", cases[k].spec);
		lk_solver_config c = tu_spec(s);
		lk_problem *p = packing();
		lk_stats st;
		assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
		if (st.stop_reason != LK_STOP_BUDGET || st.iterations < 1)
			fail_msg("%s: stopped for %s after %d iterations", s, lk_stop_reason_name(st.stop_reason),
			         st.iterations);
		assert_true(st.res_final <= st.res_initial);
		lk_problem_destroy(p);
	}
}

/* The statistics clock (lk_set_stats_clock): the thread's CPU time does not advance while the thread sleeps,
 * the wall clock does; a solve's seconds follow the chosen clock, and the time budget keeps the wall clock
 * (a budget of 1 us still stops a solve whose statistics read CPU time). */
static void test_stats_clock(void **state)
{
	(void)state;
	assert_int_equal(lk_stats_clock(), LK_CLOCK_WALL);
	assert_int_equal(lk_set_stats_clock((lk_clock)7), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_stats_clock(), LK_CLOCK_WALL);
	const struct timespec nap = {0, 50 * 1000 * 1000};
	double t0 = lk_stats_now();
	nanosleep(&nap, NULL);
	const double wall = lk_stats_now() - t0;
	assert_int_equal(lk_set_stats_clock(LK_CLOCK_THREAD_CPU), LK_OK);
	assert_int_equal(lk_stats_clock(), LK_CLOCK_THREAD_CPU);
	t0 = lk_stats_now();
	nanosleep(&nap, NULL);
	const double cpu = lk_stats_now() - t0;
	if (!(wall >= 0.045 && cpu < 0.02))
		fail_msg("50 ms asleep: %g s on the wall clock, %g s on the CPU clock", wall, cpu);
	lk_solver_config c = tu_spec("pgs:iters=1000000,time_us=1,warm=0");
	lk_problem *p = packing();
	lk_stats st;
	assert_int_equal(lk_solve(p, &c, &st, NULL), LK_OK);
	assert_int_equal(st.stop_reason, LK_STOP_BUDGET);
	assert_true(st.seconds > 0 && st.seconds < 1.0);
	lk_problem_destroy(p);
	assert_int_equal(lk_set_stats_clock(LK_CLOCK_WALL), LK_OK);
}

static void test_budget_parse(void **state)
{
	(void)state;
	lk_solver_config c;
	char err[256];
	assert_int_equal(lk_config_parse("pgs:budget=-1", &c, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "budget"));
	assert_int_equal(lk_config_parse("pgs-sm:share=0", &c, err, sizeof err), LK_ERR_PARSE);
	assert_int_equal(lk_config_parse("amgs:budget=7.5,time_us=300", &c, err, sizeof err), LK_OK);
	assert_double_equal(c.budget, 7.5, 0);
	assert_double_equal(c.time_budget_us, 300, 0);
	char buf[200];
	assert_int_equal(lk_config_format(&c, buf, sizeof buf), LK_OK);
	assert_string_equal(buf, "amgs:budget=7.5,time_us=300");
	assert_int_equal(lk_config_spec_sets("amgs:budget=7.5,time_us=300", "budget"), 1);
	assert_int_equal(lk_config_spec_sets("amgs:budget=7.5,time_us=300", "iters"), 0);
	assert_int_equal(lk_config_spec_sets("amgs:iters=3", "iters"), 1);
	assert_int_equal(lk_config_spec_sets("amgs:bogus=3", "bogus"), 0);
	assert_int_equal(lk_config_spec_sets("pgs", "iters"), 0);
	/* a shorthand names the order it stands for: an engine's random order must not replace gsp's schedule */
	assert_int_equal(lk_config_spec_sets("gsp", "order"), 1);
	assert_int_equal(lk_config_spec_sets("esp:iters=4", "order"), 1);
	assert_int_equal(lk_config_spec_sets("pgs", "order"), 0);
	assert_int_equal(lk_config_spec_sets("pgs:order=natural", "order"), 1);
	/* options after a comma instead of a colon: the message shows the colon form, and what is wrong with it */
	assert_int_equal(lk_config_parse("pgs,friction=cone", &c, err, sizeof err), LK_ERR_PARSE);
	assert_string_equal(err, "unknown solver 'pgs,friction=cone': options follow a colon, as in 'pgs:friction=cone'");
	assert_int_equal(lk_config_parse("gsp,iters=5,w=1.2", &c, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "as in 'gsp:iters=5,w=1.2'"));
	assert_int_equal(lk_config_parse("pgs,frictio=cone", &c, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "options follow a colon ('pgs:frictio=cone': unknown parameter 'frictio'"));
	assert_int_equal(lk_config_parse("pgz,iters=5", &c, err, sizeof err), LK_ERR_PARSE);
	assert_non_null(strstr(err, "unknown solver 'pgz,iters=5' (choose from"));
	/* the adapters' rule: a spec with its own limit keeps it; otherwise the engine's count is the budget */
	assert_int_equal(lk_config_spec_sets_limit("pgs-sm:iters=3"), 1);
	assert_int_equal(lk_config_spec_sets_limit("amgs:budget=4"), 1);
	assert_int_equal(lk_config_spec_sets_limit("newton-minmap:tol=1e-6"), 0);
	lk_solver_config e = lk_default_config(LK_METHOD_PGS_SM);
	lk_config_set_engine_budget(&e, 20);
	assert_true(e.budget == 20.0 && e.max_iterations == INT32_MAX);
	lk_config_set_engine_budget(&e, 0);
	assert_true(e.budget == 1.0);
	/* a tool's option reaches a spec that does not choose the key itself */
	char with[64];
	assert_int_equal(lk_config_spec_with("pgs", "threads", "2", with, sizeof with), LK_OK);
	assert_string_equal(with, "pgs:threads=2");
	assert_int_equal(lk_config_spec_with("psor:w=1.3", "threads", "2", with, sizeof with), LK_OK);
	assert_string_equal(with, "psor:w=1.3,threads=2");
	assert_int_equal(lk_config_spec_with("pgs:threads=4", "threads", "2", with, sizeof with), LK_OK);
	assert_string_equal(with, "pgs:threads=4");
	assert_int_equal(lk_config_spec_with("pgs", "threads", "0", with, sizeof with), LK_ERR_PARSE);
	assert_int_equal(lk_config_spec_with("nope", "threads", "2", with, sizeof with), LK_ERR_PARSE);
	assert_int_equal(lk_config_spec_with("pgs", "threads", "2", with, 5), LK_ERR_LIMIT);
	assert_int_equal(lk_config_spec_with(NULL, "threads", "2", with, sizeof with), LK_ERR_INVALID_ARGUMENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_binds),
		cmocka_unit_test(test_budget_is_iterations_for_pgs),
		cmocka_unit_test(test_time_budget),
		cmocka_unit_test(test_stats_clock),
		cmocka_unit_test(test_budget_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

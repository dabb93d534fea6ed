/* Parallel sweeps (common/src/parallel.c, docs/solvers.md "Threads"): the colouring and the partition are
 * valid (no two units of a colour share a dynamic body or a normal impulse one of them reads; the order is a
 * permutation); a sweep in the colour order gives bitwise the same lambda on 1, 2, 3 and 4 threads, run after
 * run, for PGS, PSOR, AMGS and PGS-SM; the part order, the default of threads > 1, the same lambda run after
 * run for a thread count, and on two threads the lambda of one thread sweeping its two parts, which goes run
 * by run through the records where its runs are long, as the natural order would in the same order; both orders
 * converge as PGS does; the configuration refuses what it cannot do; rows added on threads are the rows added
 * one by one. Run under ThreadSanitizer by
 * tools/test.sh. */
#include "test_util.h"
#include "internal.h"
#include "parallel.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nparts 0: the colour order; >= 2: the part order, whose first colour's units are the parts */
static void check_colouring(lk_problem *p, int nparts)
{
	int n = p->nrows, nb = p->nbodies;
	int *perm = malloc((size_t)n * sizeof *perm), *seen = calloc((size_t)n, sizeof *seen);
	int *owner = malloc(((size_t)nb + 1) * sizeof *owner), *group_of_pos = malloc((size_t)n * sizeof(int));
	lk__arena a = {0};
	lk__colouring *col;
	assert_int_equal(lk__colour_rows(p, &a, nparts, perm, &col), LK_OK);
	if (nparts >= 2)
		assert_true(col->colour_group[1] == nparts);
	assert_true(col->ncolours >= 1 && col->ncolours <= LK_MAX_COLOURS + 1);
	for (int k = 0; k < n; ++k) {
		assert_true(perm[k] >= 0 && perm[k] < n);
		assert_int_equal(seen[perm[k]]++, 0);
	}
	assert_int_equal(col->group_pos[0], 0);
	assert_int_equal(col->group_pos[col->ngroups], n);
	for (int g = 0; g < col->ngroups; ++g)
		for (int q = col->group_pos[g]; q < col->group_pos[g + 1]; ++q)
			group_of_pos[q] = g;
	/* the runs, where kept: maximal stretches of consecutive rows, long on average */
	if (col->run_pos) {
		assert_true(col->nruns >= 1 && n / col->nruns >= LK_RUN_MIN_ROWS);
		assert_int_equal(col->run_pos[0], 0);
		assert_int_equal(col->run_pos[col->nruns], n);
		for (int r = 0; r < col->nruns; ++r) {
			assert_true(col->run_pos[r + 1] > col->run_pos[r]);
			for (int q = col->run_pos[r] + 1; q < col->run_pos[r + 1]; ++q)
				assert_int_equal(perm[q], perm[q - 1] + 1);
			if (r > 0)
				assert_true(perm[col->run_pos[r]] != perm[col->run_pos[r] - 1] + 1);
		}
	}
	int *pos_of_row = seen; /* reuse */
	for (int q = 0; q < n; ++q)
		pos_of_row[perm[q]] = q;
	for (int k = 0; k < col->ncolours - col->serial; ++k) {
		for (int b = 0; b <= nb; ++b)
			owner[b] = -1;
		for (int g = col->colour_group[k]; g < col->colour_group[k + 1]; ++g)
			for (int q = col->group_pos[g]; q < col->group_pos[g + 1]; ++q) {
				const lk__row *r = &p->rows[perm[q]];
				const int bodies[2] = {r->a, r->b};
				for (int s = 0; s < 2; ++s) {
					if (bodies[s] >= nb)
						continue; /* the static world */
					if (owner[bodies[s]] >= 0 && owner[bodies[s]] != g)
						fail_msg("colour %d: groups %d and %d share body %d", k, owner[bodies[s]], g, bodies[s]);
					owner[bodies[s]] = g;
				}
				/* a friction row's normal row is in its own group or in another colour */
				if (r->findex >= 0) {
					int gf = group_of_pos[pos_of_row[r->findex]];
					assert_true(gf == g || gf < col->colour_group[k] || gf >= col->colour_group[k + 1]);
				}
			}
	}
	lk__arena_free(&a);
	free(perm);
	free(seen);
	free(owner);
	free(group_of_pos);
}

static void test_colouring_is_valid(void **state)
{
	(void)state;
	const char *kinds[4] = {"packing", "boxstack", "chain", "incline"};
	const int sizes[4] = {400, 30, 40, 20};
	for (int k = 0; k < 4; ++k) {
		lk_problem *p = tu_generate(kinds[k], sizes[k], 0.5);
		for (int parts = 0; parts <= 4; parts += 1 + (parts == 0))
			check_colouring(p, parts);
		lk_problem_destroy(p);
	}
	/* random rows: any pairs, friction rows pointing anywhere the generator puts them */
	for (uint64_t seed = 1; seed <= 5; ++seed) {
		lk_problem *p = tu_random_rows(30, 200, seed, 0.4);
		assert_int_equal(lk_problem_validate(p), LK_OK);
		check_colouring(p, 0);
		check_colouring(p, 3);
		lk_problem_destroy(p);
	}
}

/* lambda after `spec` from the same cold start */
static double *solved(lk_problem *p, const char *spec, lk_stats *st)
{
	lk_solver_config cfg = tu_spec(spec);
	cfg.warm_start = 0;
	assert_int_equal(lk_solve(p, &cfg, st, NULL), LK_OK);
	int n = lk_problem_row_count(p);
	double *l = malloc((size_t)n * sizeof *l);
	memcpy(l, lk_problem_lambda(p), (size_t)n * sizeof *l);
	return l;
}

/* Solves with spec `runs` times and checks that every run gives ref's lambda, iterations and work bit for
 * bit (ref_stats NULL: lambda only). */
static void expect_same(lk_problem *p, const char *spec, const double *ref, const lk_stats *ref_stats, int runs)
{
	const int n = lk_problem_row_count(p);
	for (int run = 0; run < runs; ++run) {
		lk_stats st;
		double *l = solved(p, spec, &st);
		if (memcmp(l, ref, (size_t)n * sizeof *l) != 0)
			fail_msg("%s run %d: lambda differs from the reference by up to %g", spec, run, tu_max_diff(l, ref, n));
		if (ref_stats) {
			assert_int_equal(st.iterations, ref_stats->iterations);
			assert_true(st.work == ref_stats->work);
		}
		free(l);
	}
}

/* The rows of the part order that cross parts (the serial colour's), for nparts parts; the parts' rows in
 * rows_in[k]. */
static int crossing_rows(lk_problem *p, int nparts, int *rows_in)
{
	int n = p->nrows;
	int *perm = malloc((size_t)n * sizeof *perm);
	lk__arena a = {0};
	lk__colouring *col;
	assert_int_equal(lk__colour_rows(p, &a, nparts, perm, &col), LK_OK);
	for (int k = 0; k < nparts; ++k)
		rows_in[k] = col->group_pos[k + 1] - col->group_pos[k];
	const int crossing = n - col->group_pos[nparts];
	lk__arena_free(&a);
	free(perm);
	return crossing;
}

/* The same problem with its bodies renumbered by a seeded shuffle (as an engine may number them: Bullet in
 * the order its manifolds come from the broadphase). */
static lk_problem *shuffled_bodies(const lk_problem *p, unsigned seed)
{
	const int nb = lk_problem_body_count(p);
	int *from = malloc(((size_t)nb + 1) * sizeof *from);
	for (int b = 0; b < nb; ++b)
		from[b] = b;
	for (int b = nb - 1; b > 0; --b) {
		seed = seed * 1103515245u + 12345u;
		const int j = (int)((seed >> 8) % (unsigned)(b + 1)), t = from[b];
		from[b] = from[j];
		from[j] = t;
	}
	lk_problem *q = tu_copy_problem(p, from, 0, NULL);
	free(from);
	return q;
}

/* The part order cuts the bodies in breadth-first order over the contact graph, not by their numbers: on a
 * pile whose bodies are numbered at random, a cut of the numbers into two ranges leaves about half of the
 * rows crossing (each contact's two bodies fall in different halves with probability one half); the cut
 * across the graph leaves few, in parts of about equal rows. */
static void test_part_order_follows_the_graph(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("packing", 400, 0.5);
	lk_problem *q = shuffled_bodies(p, 7u);
	const int n = lk_problem_row_count(q);
	for (int nparts = 2; nparts <= 4; nparts += 2) {
		int rows_in[4];
		const int crossing = crossing_rows(q, nparts, rows_in);
		print_message("packing:400, bodies shuffled, %d parts: %d of %d rows cross (%.1f %%), parts", nparts,
		              crossing, n, 100.0 * crossing / n);
		for (int k = 0; k < nparts; ++k)
			print_message(" %d", rows_in[k]);
		print_message("\n");
		assert_true(crossing < n / (nparts == 2 ? 8 : 4));
		for (int k = 0; k < nparts; ++k)
			assert_true(rows_in[k] > (n - crossing) / (2 * nparts));
	}
	lk_problem_destroy(q);
	lk_problem_destroy(p);
}

static void test_same_result_on_any_thread_count(void **state)
{
	(void)state;
	const char *methods[4] = {"pgs:iters=40", "psor:w=1.3,iters=40", "amgs:iters=40", "pgs-sm:budget=30"};
	lk_problem *p = tu_generate("packing", 1500, 0.5);
	for (int m = 0; m < 4; ++m) {
		char spec[96];
		snprintf(spec, sizeof spec, "%s,order=colour", methods[m]);
		lk_stats s1;
		double *ref = solved(p, spec, &s1);
		for (int t = 2; t <= 4; ++t) {
			snprintf(spec, sizeof spec, "%s,order=colour,threads=%d", methods[m], t);
			expect_same(p, spec, ref, &s1, 3);
		}
		free(ref);
	}
	lk_problem_destroy(p);
}

/* The part order (threads > 1 by default) depends on the thread count, which sets the number of parts: the
 * same lambda run after run for one count, and two threads give what one thread gives in the order of two
 * parts (order=part alone). */
static void test_part_order_deterministic(void **state)
{
	(void)state;
	const char *methods[3] = {"pgs:iters=40", "psor:w=1.3,iters=40", "pgs-sm:budget=30"};
	lk_problem *p = tu_generate("packing", 1500, 0.5);
	for (int m = 0; m < 3; ++m) {
		char spec[96];
		snprintf(spec, sizeof spec, "%s,order=part", methods[m]);
		lk_stats s1;
		double *ref = solved(p, spec, &s1);
		snprintf(spec, sizeof spec, "%s,threads=2", methods[m]);
		expect_same(p, spec, ref, &s1, 3);
		free(ref);
		snprintf(spec, sizeof spec, "%s,threads=3", methods[m]);
		ref = solved(p, spec, &s1);
		expect_same(p, spec, ref, &s1, 2);
		free(ref);
	}
	lk_problem_destroy(p);
}

/* The part order's sweeps go run by run through the records where its runs are long (parallel.h,
 * LK_RUN_MIN_ROWS): the rows of the permutation, in its order, so that one thread in the part order gives
 * bit for bit what the natural order gives on a copy of the problem with its rows laid out in that order. */
static void test_part_order_runs(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("packing", 1500, 0.5);
	const int n = lk_problem_row_count(p);
	int *perm = malloc((size_t)n * sizeof *perm);
	lk__arena a = {0};
	lk__colouring *col;
	assert_int_equal(lk__colour_rows(p, &a, 2, perm, &col), LK_OK);
	print_message("packing:1500, part order: %d rows in %d runs\n", n, col->nruns);
	assert_non_null(col->run_pos); /* the generator numbers bodies in space: long runs */
	assert_true(col->nruns > 1);
	lk_problem *q = tu_permute_rows(p, perm);
	for (int m = 0; m < 2; ++m) {
		const char *spec = m ? "amgs:iters=30,measure=0" : "pgs:iters=30,measure=0";
		char spec_part[64];
		snprintf(spec_part, sizeof spec_part, "%s,order=part", spec);
		lk_stats s;
		double *in_part = solved(p, spec_part, &s), *laid_out = solved(q, spec, &s);
		for (int k = 0; k < n; ++k)
			if (memcmp(&in_part[perm[k]], &laid_out[k], sizeof(double)) != 0)
				fail_msg("%s: row %d (position %d): %.17g in the part order, %.17g laid out", spec, perm[k], k,
				         in_part[perm[k]], laid_out[k]);
		free(in_part);
		free(laid_out);
	}
	lk_problem_destroy(q);
	lk__arena_free(&a);
	free(perm);
	lk_problem_destroy(p);
}

/* The colour order is a Gauss-Seidel order like any other: on frictionless problems, where PGS converges,
 * PGS in it on two threads reaches RES 1e-8 in about the natural order's sweeps (measured: 2,556 against
 * 2,498 on a 20-sphere stack, 133 against 129 on a 300-sphere packing) */
/* Schedulers an application could lend (lk_problem_set_executor): one that runs the tasks one after another
 * in reverse order on the caller, and one that starts a thread per task; and a count of the calls. */
typedef struct lent_count {
	int calls, tasks;
} lent_count;

static void run_reversed(void *context, int tasks, lk_task_fn task, void *arg)
{
	lent_count *n = context;
	n->calls++;
	n->tasks += tasks;
	for (int i = tasks - 1; i >= 0; --i)
		task(arg, i);
}

typedef struct thread_task {
	lk_task_fn task;
	void *arg;
	int index;
} thread_task;

static void *thread_task_main(void *a)
{
	const thread_task *t = a;
	t->task(t->arg, t->index);
	return NULL;
}

static void run_threads(void *context, int tasks, lk_task_fn task, void *arg)
{
	lent_count *n = context;
	n->calls++;
	n->tasks += tasks;
	pthread_t th[8];
	thread_task tt[8];
	assert_true(tasks <= 8);
	for (int i = 0; i < tasks; ++i) {
		tt[i] = (thread_task){task, arg, i};
		assert_int_equal(pthread_create(&th[i], NULL, thread_task_main, &tt[i]), 0);
	}
	for (int i = 0; i < tasks; ++i)
		pthread_join(th[i], NULL);
}

/* A scheduler lent to the problem runs the sweeps' colours (and the blocked metrics) as its tasks, and the
 * result is bit for bit that of lcpkit's own threads, whatever order or threads the scheduler runs them in;
 * taking it back returns to the problem's own threads. */
static void test_lent_scheduler_same_result(void **state)
{
	(void)state;
	const char *specs[4] = {"pgs:iters=30,threads=2", "pgs:iters=30,threads=3", "amgs:iters=30,threads=2",
	                        "psor:w=1.3,iters=30,threads=4,order=colour"};
	lk_problem *p = tu_generate("packing", 1500, 0.5);
	for (int s = 0; s < 4; ++s) {
		lk_stats s1;
		assert_int_equal(lk_problem_set_executor(p, NULL), LK_OK);
		double *ref = solved(p, specs[s], &s1);
		for (int kind = 0; kind < 2; ++kind) {
			lent_count count = {0, 0};
			const lk_executor ex = {kind ? run_threads : run_reversed, &count};
			assert_int_equal(lk_problem_set_executor(p, &ex), LK_OK);
			expect_same(p, specs[s], ref, &s1, 2);
			/* two solves of 30 sweeps, each colour of each sweep one call of `threads` tasks (the serial colour
			 * on the caller), and the start and end metrics */
			const lk_solver_config cfg = tu_spec(specs[s]);
			assert_true(count.calls >= 2 * 30);
			assert_true(count.tasks == count.calls * cfg.threads);
		}
		assert_int_equal(lk_problem_set_executor(p, NULL), LK_OK);
		expect_same(p, specs[s], ref, &s1, 1);
		free(ref);
	}
	/* what a scheduler must have */
	const lk_executor none = {NULL, NULL};
	assert_int_equal(lk_problem_set_executor(p, &none), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(lk_problem_error(p), "run"));
	assert_int_equal(lk_problem_set_executor(NULL, NULL), LK_ERR_INVALID_ARGUMENT);
	lk_problem_destroy(p);
}


/* lk_problem_add_rows: the rows of a source problem, row k's definition read back from it (a source of
 * definitions that only reads, as an adapter's); `bad` >= 0 spoils that row with a NaN in J, `refuse` >= 0
 * makes fill refuse that row, `huge` >= 0 gives that row a J of 1e308 (its M^-1 J^T overflows). */
typedef struct rows_source {
	const lk_problem *src;
	int bad, refuse, huge;
} rows_source;

static lk_status fill_from(void *arg, int k, lk_row_def *d)
{
	const rows_source *rs = arg;
	if (k == rs->refuse)
		return LK_ERR_UNSUPPORTED;
	lk_status st = lk_problem_get_row(rs->src, k, d);
	if (k == rs->bad)
		d->J[0][1] = NAN;
	if (k == rs->huge)
		d->J[0][0] = 1e308;
	return st;
}

/* A problem with src's bodies and no rows. */
static lk_problem *bodies_of(const lk_problem *src)
{
	lk_problem *q = lk_problem_create(LK_FORM_ROWS);
	assert_non_null(q);
	for (int b = 0; b < lk_problem_body_count(src); ++b)
		assert_int_equal(lk_problem_add_body(q, lk_problem_body(src, b), NULL), LK_OK);
	return q;
}

/* q holds ref's rows, bit for bit. */
static void expect_same_rows(const lk_problem *ref, const lk_problem *q)
{
	const int n = lk_problem_row_count(ref);
	assert_int_equal(lk_problem_row_count(q), n);
	for (int k = 0; k < n; ++k) {
		lk_row_def a, b;
		assert_int_equal(lk_problem_get_row(ref, k, &a), LK_OK);
		assert_int_equal(lk_problem_get_row(q, k, &b), LK_OK);
		assert_memory_equal(&a, &b, sizeof a);
	}
}

/* A copy of src's bodies, and its rows added by add_rows on `threads` threads (or add_row one by one for
 * threads 0), under executor ex (or none). */
static lk_problem *rows_copy(const lk_problem *src, const rows_source *rs, int threads, const lk_executor *ex,
                             lk_status *st, int *refused)
{
	lk_problem *q = bodies_of(src);
	if (ex)
		assert_int_equal(lk_problem_set_executor(q, ex), LK_OK);
	const int n = lk_problem_row_count(src);
	if (threads == 0) {
		*st = LK_OK;
		for (int k = 0; k < n && *st == LK_OK; ++k) {
			lk_row_def d;
			*st = fill_from((void *)rs, k, &d);
			if (*st == LK_OK)
				*st = lk_problem_add_row(q, &d, NULL);
		}
		return q;
	}
	*st = lk_problem_add_rows(q, n, fill_from, (void *)rs, threads, refused);
	return q;
}

/* APGD and MPRGP make their products A x on the threads, PGS-SM its subspace products and the Newton methods
 * their evaluations and Krylov products (product.c, newton.c): each body gathers its rows' M^-1 J^T x_i in row
 * order, the sum one thread's scatter makes, so APGD's, MPRGP's and Newton's lambda, iterations and work are
 * those of one thread to the bit, on 2 and 3 threads and on a lent scheduler (a body's rows summed in another
 * order fail it; so do the minimum map's reduced rows taken in another order). PGS-SM's sweeps run in the part
 * order there, so its threaded solves, with conjugate gradients on the subspace, are compared with its one-thread
 * solve in the part order (order=part). Small budgets: the test also runs under ThreadSanitizer. */
static void test_products_on_threads(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("packing", 1500, 0.5);
	assert_true(lk_problem_row_count(p) >= LK_PARALLEL_MIN_ROWS);
	const char *methods[5] = {"apgd:iters=20", "mprgp:iters=20", "pgs-sm:iters=2,kpgs=5,ksm=2,sub=cg,cg_max=30",
	                          "newton-minmap:iters=2,krylov_max=10", "newton-fischer:iters=2,krylov_max=10"};
	for (int m = 0; m < 5; ++m) {
		char one[96];
		snprintf(one, sizeof one, "%s%s", methods[m], m == 2 ? ",order=part" : "");
		lk_stats s1;
		double *ref = solved(p, one, &s1);
		for (int t = 2; t <= 3; ++t) {
			char spec[96];
			snprintf(spec, sizeof spec, "%s,threads=%d", methods[m], t);
			if (m == 2 && t == 3) { /* three parts: the same run after run */
				lk_stats s3;
				double *ref3 = solved(p, spec, &s3);
				expect_same(p, spec, ref3, &s3, 2);
				free(ref3);
				continue;
			}
			expect_same(p, spec, ref, &s1, 2);
		}
		lent_count n = {0, 0};
		lk_problem_set_executor(p, &(lk_executor){run_reversed, &n});
		char spec[96];
		snprintf(spec, sizeof spec, "%s,threads=2", methods[m]);
		expect_same(p, spec, ref, &s1, 1);
		/* two calls (slots, then rows) a product; Newton: at least its two iterations' evaluations */
		assert_true(n.calls >= (m == 2 ? 4 : m > 2 ? 2 * 2 : 2 * 20));
		lk_problem_set_executor(p, NULL);
		free(ref);
	}
	lk_problem_destroy(p);
}

/* add_row_array reads the definitions in place, in the order it is given: stored back to front and ordered
 * front to back, or stored in order with no order, on one and two threads, it makes the rows add_row makes,
 * bit for bit; a bad row is refused with its position in the order and add_row's message, and nothing is
 * added; an order entry outside the array is refused before anything is read. */
static void test_add_row_array(void **state)
{
	(void)state;
	lk_problem *src = tu_generate("packing", 1500, 0.5);
	const int n = lk_problem_row_count(src);
	assert_true(n >= 8192);
	rows_source rs = {src, -1, -1, -1};
	lk_status st;
	lk_problem *ref = rows_copy(src, &rs, 0, NULL, &st, NULL);
	assert_int_equal(st, LK_OK);
	lk_row_def *back = malloc((size_t)n * sizeof *back), *front = malloc((size_t)n * sizeof *front);
	int *order = malloc((size_t)n * sizeof *order);
	assert_true(back && front && order);
	for (int k = 0; k < n; ++k) {
		assert_int_equal(lk_problem_get_row(src, k, &front[k]), LK_OK);
		back[n - 1 - k] = front[k];
		order[k] = n - 1 - k;
	}
	for (int v = 0; v < 4; ++v) {
		lk_problem *q = bodies_of(src);
		int refused = 7;
		const int threads = v % 2 ? 2 : 1;
		assert_int_equal(lk_problem_add_row_array(q, n, v < 2 ? back : front, v < 2 ? order : NULL, threads,
		                                          &refused), LK_OK);
		assert_int_equal(refused, -1);
		expect_same_rows(ref, q);
		/* a bad row: refused where the order puts it */
		const int at = n / 2 + 3;
		lk_row_def *spoiled = v < 2 ? &back[order[at]] : &front[at];
		const double keep = spoiled->J[0][1];
		spoiled->J[0][1] = NAN;
		rows_source bad = {src, at, -1, -1};
		lk_status st0;
		lk_problem *serial = rows_copy(src, &bad, 0, NULL, &st0, NULL);
		lk_problem_destroy(q);
		q = bodies_of(src);
		assert_int_equal(lk_problem_add_row_array(q, n, v < 2 ? back : front, v < 2 ? order : NULL, threads,
		                                          &refused), LK_ERR_NONFINITE);
		assert_int_equal(st0, LK_ERR_NONFINITE);
		assert_int_equal(refused, at);
		assert_int_equal(lk_problem_row_count(q), 0);
		assert_string_equal(lk_problem_error(q), lk_problem_error(serial));
		spoiled->J[0][1] = keep;
		lk_problem_destroy(serial);
		lk_problem_destroy(q);
	}
	/* what it refuses outright */
	lk_problem *q = bodies_of(src);
	order[5] = n;
	assert_int_equal(lk_problem_add_row_array(q, n, back, order, 1, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(lk_problem_error(q), "order[5]"));
	order[5] = -1;
	assert_int_equal(lk_problem_add_row_array(q, n, back, order, 1, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_row_count(q), 0);
	assert_int_equal(lk_problem_add_row_array(NULL, 1, front, NULL, 1, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_add_row_array(q, 1, NULL, NULL, 1, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(lk_problem_error(q), "defs is NULL"));
	assert_int_equal(lk_problem_add_row_array(q, -1, front, NULL, 1, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_add_row_array(q, 1, front, NULL, 0, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_add_row_array(q, 0, front, NULL, 2, NULL), LK_OK);
	assert_int_equal(lk_problem_add_row_array(q, 0, NULL, NULL, 1, NULL), LK_OK); /* no rows from nothing */
	assert_int_equal(lk_problem_row_count(q), 0);
	lk_problem_destroy(q);
	free(back);
	free(front);
	free(order);
	lk_problem_destroy(ref);
	lk_problem_destroy(src);
}

/* add_rows on 1, 2 and 4 threads, and on a lent scheduler, makes the rows add_row makes, bit for bit: the
 * same definitions back, the same lambda after a solve; a row refused in the middle of a share leaves the
 * problem as it was and reports add_row's status and message for that row. */
static void test_add_rows_on_threads(void **state)
{
	(void)state;
	lk_problem *src = tu_generate("packing", 1500, 0.5);
	const int n = lk_problem_row_count(src);
	assert_true(n >= 8192); /* past LK_PARALLEL_MIN_ROWS, with room for four shares */
	rows_source rs = {src, -1, -1, -1};
	lk_status st;
	lk_problem *ref = rows_copy(src, &rs, 0, NULL, &st, NULL);
	assert_int_equal(st, LK_OK);
	lk_stats s1;
	double *lref = solved(ref, "pgs:iters=20", &s1);
	lent_count count = {0, 0};
	const lk_executor lent = {run_threads, &count};
	const int threads[4] = {1, 2, 4, 2};
	for (int v = 0; v < 4; ++v) {
		int refused = 7;
		lk_problem *q = rows_copy(src, &rs, threads[v], v == 3 ? &lent : NULL, &st, &refused);
		assert_int_equal(st, LK_OK);
		assert_int_equal(refused, -1);
		expect_same_rows(ref, q);
		expect_same(q, "pgs:iters=20", lref, &s1, 1);
		lk_problem_destroy(q);
	}
	assert_int_equal(count.calls, 1);
	assert_int_equal(count.tasks, 2);
	/* a row refused: the first one's status and message, nothing added; a later bad row in another share
	 * does not hide it */
	const int at = n / 2 + 3;
	for (int how = 0; how < 3; ++how) {
		rows_source spoiled = {src, how == 0 ? at : n - 5, how == 1 ? at : -1, how == 2 ? at : -1};
		lk_status st0, st2;
		lk_problem *serial = rows_copy(src, &spoiled, 0, NULL, &st0, NULL);
		int refused = -1;
		lk_problem *q = rows_copy(src, &spoiled, 2, NULL, &st2, &refused);
		assert_int_equal(st2, st0);
		assert_int_equal(refused, at);
		assert_int_equal(lk_problem_row_count(q), 0);
		if (how != 1) /* a fill's own refusal has add_rows' words, not add_row's */
			assert_string_equal(lk_problem_error(q), lk_problem_error(serial));
		else
			assert_non_null(strstr(lk_problem_error(q), "fill returned"));
		assert_int_equal(st0, how == 1 ? LK_ERR_UNSUPPORTED : LK_ERR_NONFINITE);
		lk_problem_destroy(q);
		lk_problem_destroy(serial);
	}
	/* what it refuses outright */
	lk_problem *q = lk_problem_create(LK_FORM_ROWS);
	assert_int_equal(lk_problem_add_rows(NULL, 1, fill_from, &rs, 1, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_add_rows(q, 1, NULL, &rs, 1, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_add_rows(q, -1, fill_from, &rs, 1, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_add_rows(q, 1, fill_from, &rs, 0, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_add_rows(q, 1, fill_from, &rs, 65, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_add_rows(q, 0, fill_from, &rs, 2, NULL), LK_OK);
	lk_problem_destroy(q);
	free(lref);
	lk_problem_destroy(ref);
	lk_problem_destroy(src);
}


/* lk_problem_add_bodies: the bodies of a source problem; `bad` >= 0 spoils that body with a NaN velocity,
 * `refuse` >= 0 makes fill refuse that body. */
typedef struct bodies_source {
	const lk_problem *src;
	int bad, refuse;
} bodies_source;

static lk_status body_from(void *arg, int k, lk_body_def *d)
{
	const bodies_source *bs = arg;
	if (k == bs->refuse)
		return LK_ERR_UNSUPPORTED;
	*d = *lk_problem_body(bs->src, k);
	if (k == bs->bad)
		d->u[4] = NAN;
	return LK_OK;
}

/* src's bodies added by add_bodies on `threads` threads (add_body one by one for threads 0), under executor ex
 * (or none), then its rows one by one. */
static lk_problem *bodies_copy(const bodies_source *bs, int threads, const lk_executor *ex, lk_status *st,
                               int *refused)
{
	lk_problem *q = lk_problem_create(LK_FORM_ROWS);
	assert_non_null(q);
	if (ex)
		assert_int_equal(lk_problem_set_executor(q, ex), LK_OK);
	const int nb = lk_problem_body_count(bs->src);
	*st = LK_OK;
	if (threads == 0) {
		for (int b = 0; b < nb && *st == LK_OK; ++b) {
			lk_body_def d;
			*st = body_from((void *)bs, b, &d);
			if (*st == LK_OK)
				*st = lk_problem_add_body(q, &d, NULL);
		}
	} else {
		*st = lk_problem_add_bodies(q, nb, body_from, (void *)bs, threads, refused);
	}
	for (int k = 0; k < lk_problem_row_count(bs->src) && *st == LK_OK; ++k) {
		lk_row_def d;
		assert_int_equal(lk_problem_get_row(bs->src, k, &d), LK_OK);
		assert_int_equal(lk_problem_add_row(q, &d, NULL), LK_OK);
	}
	return q;
}

/* add_bodies on 1, 2 and 4 threads, and on a lent scheduler, keeps the bodies add_body keeps: the same
 * definitions back, the same lambda after a solve (which starts from the bodies' zeroed velocity slots); a
 * body refused in the middle of a share leaves the problem as it was, with add_body's status and message. */
static void test_add_bodies_on_threads(void **state)
{
	(void)state;
	lk_problem *src = tu_generate("packing", 9000, 0.5);
	const int nb = lk_problem_body_count(src);
	assert_true(nb >= 8192); /* past LK_PARALLEL_MIN_BODIES, four shares and more */
	bodies_source bs = {src, -1, -1};
	lk_status st;
	lk_problem *ref = bodies_copy(&bs, 0, NULL, &st, NULL);
	assert_int_equal(st, LK_OK);
	lk_stats s1;
	double *lref = solved(ref, "pgs:iters=10", &s1);
	lent_count count = {0, 0};
	const lk_executor lent = {run_threads, &count};
	const int threads[4] = {1, 2, 4, 2};
	for (int v = 0; v < 4; ++v) {
		int refused = 7;
		lk_problem *q = bodies_copy(&bs, threads[v], v == 3 ? &lent : NULL, &st, &refused);
		assert_int_equal(st, LK_OK);
		assert_int_equal(refused, -1);
		assert_int_equal(lk_problem_body_count(q), nb);
		for (int b = 0; b < nb; ++b)
			assert_memory_equal(lk_problem_body(q, b), lk_problem_body(src, b), sizeof(lk_body_def));
		expect_same(q, "pgs:iters=10", lref, &s1, 1);
		lk_problem_destroy(q);
	}
	assert_int_equal(count.calls, 1);
	assert_int_equal(count.tasks, 2);
	/* a body refused: the first one's status and message, nothing added; a later bad body in another share
	 * does not hide it */
	const int at = nb / 2 + 3;
	for (int how = 0; how < 2; ++how) {
		bodies_source spoiled = {src, how == 0 ? at : nb - 5, how == 1 ? at : -1};
		lk_status st0, st2;
		lk_problem *serial = bodies_copy(&spoiled, 0, NULL, &st0, NULL);
		int refused = -1;
		lk_problem *q = bodies_copy(&spoiled, 2, NULL, &st2, &refused);
		assert_int_equal(st2, st0);
		assert_int_equal(refused, at);
		assert_int_equal(lk_problem_body_count(q), 0);
		if (how == 0)
			assert_string_equal(lk_problem_error(q), lk_problem_error(serial));
		else /* a fill's own refusal has add_bodies' words */
			assert_non_null(strstr(lk_problem_error(q), "fill returned"));
		assert_int_equal(st0, how == 1 ? LK_ERR_UNSUPPORTED : LK_ERR_NONFINITE);
		lk_problem_destroy(q);
		lk_problem_destroy(serial);
	}
	/* what it refuses outright; bodies come before rows */
	lk_problem *q = lk_problem_create(LK_FORM_ROWS);
	assert_int_equal(lk_problem_add_bodies(NULL, 1, body_from, &bs, 1, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_add_bodies(q, 1, NULL, &bs, 1, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_add_bodies(q, -1, body_from, &bs, 1, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_add_bodies(q, 1, body_from, &bs, 0, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_add_bodies(q, 1, body_from, &bs, 65, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_add_bodies(q, 0, body_from, &bs, 2, NULL), LK_OK);
	assert_int_equal(lk_problem_add_bodies(q, 2, body_from, &bs, 2, NULL), LK_OK);
	lk_row_def d = lk_default_row_def();
	d.body[0] = 0;
	d.body[1] = 1;
	d.J[0][0] = 1;
	d.J[1][0] = -1;
	assert_int_equal(lk_problem_add_row(q, &d, NULL), LK_OK);
	assert_int_equal(lk_problem_add_bodies(q, 1, body_from, &bs, 1, NULL), LK_ERR_STATE);
	assert_int_equal(lk_problem_body_count(q), 2);
	lk_problem *m = lk_problem_create(LK_FORM_MATRIX);
	assert_int_equal(lk_problem_add_bodies(m, 1, body_from, &bs, 1, NULL), LK_ERR_FORM);
	lk_problem_destroy(m);
	lk_problem_destroy(q);
	free(lref);
	lk_problem_destroy(ref);
	lk_problem_destroy(src);
}


/* lk_problem_run_tasks: every task once, on the problem's threads, on a lent scheduler or on the caller. */
static void count_task(void *arg, int t)
{
	int *ran = arg;
	ran[t]++;
}

static void test_run_tasks(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("packing", 100, 0.5);
	lent_count count = {0, 0};
	const lk_executor lent = {run_threads, &count};
	for (int v = 0; v < 4; ++v) {
		const int threads = v == 0 ? 1 : v == 1 ? 2 : 4;
		if (v == 3)
			assert_int_equal(lk_problem_set_executor(p, &lent), LK_OK);
		int ran[7] = {0};
		assert_int_equal(lk_problem_run_tasks(p, threads, 7, count_task, ran), LK_OK);
		for (int t = 0; t < 7; ++t)
			assert_int_equal(ran[t], 1);
	}
	assert_int_equal(count.calls, 1);
	assert_int_equal(count.tasks, 7);
	int ran[1] = {0};
	assert_int_equal(lk_problem_run_tasks(p, 2, 0, count_task, ran), LK_OK);
	assert_int_equal(lk_problem_run_tasks(NULL, 2, 1, count_task, ran), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_run_tasks(p, 2, 1, NULL, ran), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_run_tasks(p, 2, -1, count_task, ran), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_run_tasks(p, 0, 1, count_task, ran), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_problem_run_tasks(p, 65, 1, count_task, ran), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(ran[0], 0);
	lk_problem_destroy(p);
}

static void test_colour_order_converges(void **state)
{
	(void)state;
	const char *kinds[2] = {"spherestack", "packing"};
	const int sizes[2] = {20, 300};
	for (int k = 0; k < 2; ++k) {
		lk_problem *p = tu_generate(kinds[k], sizes[k], 0.0);
		lk_stats nat, col;
		double *l = solved(p, "pgs:iters=50000,tol=1e-8", &nat);
		free(l);
		const char *orders[2] = {"colour", "part"};
		for (int o = 0; o < 2; ++o) {
			char spec[96];
			snprintf(spec, sizeof spec, "pgs:iters=50000,tol=1e-8,order=%s,threads=2", orders[o]);
			l = solved(p, spec, &col);
			assert_int_equal(nat.stop_reason, LK_STOP_ABSOLUTE);
			assert_int_equal(col.stop_reason, LK_STOP_ABSOLUTE);
			if (!(col.iterations <= 1.2 * nat.iterations))
				fail_msg("%s: %d sweeps in the %s order, %d in the natural one", kinds[k], col.iterations,
				         orders[o], nat.iterations);
			tu_assert_complementarity(p, l, 1e-7);
			free(l);
		}
		lk_problem_destroy(p);
	}
}

/* Below LK_PARALLEL_MIN_ROWS rows threads > 1 leaves the natural order on one thread: bitwise plain PGS */
static void test_small_problem_stays_natural(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("packing", 200, 0.5);
	int n = lk_problem_row_count(p);
	assert_true(n < LK_PARALLEL_MIN_ROWS);
	lk_stats st;
	double *a = solved(p, "pgs:iters=25", &st), *b = solved(p, "pgs:iters=25,threads=2", &st);
	assert_memory_equal(a, b, (size_t)n * sizeof *a);
	free(a);
	free(b);
	lk_problem_destroy(p);
}

/* The matrix form has no bodies to colour: threads leave it to one thread, in its natural order */
static void test_matrix_form_single_threaded(void **state)
{
	(void)state;
	lk_problem *a = tu_random_spd_matrix(80, 3, 0.5), *b = tu_random_spd_matrix(80, 3, 0.5);
	lk_stats sa, sb;
	double *la = solved(a, "pgs:iters=30", &sa), *lb = solved(b, "pgs:iters=30,threads=2", &sb);
	assert_memory_equal(la, lb, 80 * sizeof(double));
	free(la);
	free(lb);
	lk_problem_destroy(a);
	lk_problem_destroy(b);
}

/* The thread count may change from one solve to the next on the same problem (the pool is rebuilt) */
static void test_thread_count_changes(void **state)
{
	(void)state;
	lk_problem *p = tu_generate("packing", 300, 0.3);
	int n = lk_problem_row_count(p);
	lk_stats st;
	double *ref = solved(p, "pgs:iters=15,order=colour", &st);
	const int counts[5] = {2, 4, 1, 3, 2};
	for (int k = 0; k < 5; ++k) {
		char spec[64];
		snprintf(spec, sizeof spec, "pgs:iters=15,order=colour,threads=%d", counts[k]);
		double *l = solved(p, spec, &st);
		assert_memory_equal(l, ref, (size_t)n * sizeof *l);
		free(l);
	}
	free(ref);
	lk_problem_destroy(p);
}

/* A solve's scratch comes from the problem's arena, reset at every solve (lk__arena_recycle): a problem that
 * grows a little at each solve, as a settling pool's contacts do, must not leave a block behind at each one.
 * Solved in the part order on two threads (its order's scratch is the largest), 60 solves of a problem that
 * gains a contact's rows every time keep at most two blocks after the first solve, holding at most three times
 * what one solve takes (before lk__arena_recycle: a block more at every solve). */
static int arena_blocks(const lk__arena *a, size_t *bytes, size_t *used)
{
	int n = 0;
	*bytes = *used = 0;
	for (const lk__arena_block *b = a->head; b; b = b->next) {
		++n;
		*bytes += b->size;
		*used += b->used;
	}
	return n;
}

static void test_arena_bounded_as_the_problem_grows(void **state)
{
	(void)state;
	/* rows enough that the order's scratch arrays exceed the arena's default block */
	lk_problem *src = tu_generate("packing", 5000, 0.5);
	const int n = lk_problem_row_count(src), nb = lk_problem_body_count(src);
	assert_true(n > 40000);
	lk_problem *q = lk_problem_create(LK_FORM_ROWS);
	for (int b = 0; b < nb; ++b)
		assert_int_equal(lk_problem_add_body(q, lk_problem_body(src, b), NULL), LK_OK);
	int added = 0;
	const int start = n - 60 * 3;
	assert_true(start >= LK_PARALLEL_MIN_ROWS);
	lk_solver_config cfg = tu_spec("pgs:iters=3,measure=0,threads=2");
	size_t bytes = 0, peak = 0;
	for (int solve = 0; solve < 60; ++solve) {
		/* rows in the source's order: a contact's normal before its friction rows, whose findex stays valid */
		for (const int upto = start + 3 * solve; added < upto; ++added) {
			lk_row_def d;
			assert_int_equal(lk_problem_get_row(src, added, &d), LK_OK);
			assert_int_equal(lk_problem_add_row(q, &d, NULL), LK_OK);
		}
		lk_stats st;
		assert_int_equal(lk_solve(q, &cfg, &st, NULL), LK_OK);
		size_t used;
		const int blocks = arena_blocks(&q->arena, &bytes, &used);
		peak = used > peak ? used : peak;
		if (solve > 0 && (blocks > 2 || bytes > 3 * peak))
			fail_msg("solve %d of %d rows: %d blocks, %zu bytes, for %zu a solve", solve, added, blocks, bytes, used);
	}
	lk_problem_destroy(q);
	lk_problem_destroy(src);
}

static void test_config_refuses(void **state)
{
	(void)state;
	const char *bad[5] = {"pgs:threads=0", "pgs:threads=65", "pgs:threads=2,order=random", "pgs:threads=2,order=gsp",
	                      "pgs:threads=2,friction=cone"};
	for (int k = 0; k < 5; ++k) {
		lk_solver_config cfg;
		char err[256];
		lk_status st = lk_config_parse(bad[k], &cfg, err, sizeof err);
		if (st == LK_OK)
			st = lk_config_validate(&cfg, err, sizeof err);
		if (st == LK_OK)
			fail_msg("'%s' accepted", bad[k]);
		assert_true(strlen(err) > 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_colouring_is_valid),
		cmocka_unit_test(test_part_order_follows_the_graph),
		cmocka_unit_test(test_same_result_on_any_thread_count),
		cmocka_unit_test(test_part_order_deterministic),
		cmocka_unit_test(test_part_order_runs),
		cmocka_unit_test(test_products_on_threads),
		cmocka_unit_test(test_lent_scheduler_same_result),
		cmocka_unit_test(test_add_rows_on_threads),
		cmocka_unit_test(test_add_row_array),
		cmocka_unit_test(test_add_bodies_on_threads),
		cmocka_unit_test(test_run_tasks),
		cmocka_unit_test(test_colour_order_converges),
		cmocka_unit_test(test_small_problem_stays_natural),
		cmocka_unit_test(test_matrix_form_single_threaded),
		cmocka_unit_test(test_thread_count_changes),
		cmocka_unit_test(test_arena_bounded_as_the_problem_grows),
		cmocka_unit_test(test_config_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

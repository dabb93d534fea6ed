/* Parallel sweeps (parallel.c): the colouring of a row-form problem's rows, the thread pool a problem owns, and
 * the barrier the threads of one sweep meet at.
 *
 * A group is a run of consecutive rows on the same pair of bodies (a contact's normal and friction rows, a
 * joint's rows). Groups that share no dynamic body, and whose friction rows read no normal impulse that another
 * group of the colour writes, can be swept at the same time: the colouring gives each group the lowest colour
 * none of its bodies has yet (greedy first fit, as Box2D v3's graph colouring), with at most LK_MAX_COLOURS
 * colours; a group that finds none left goes to a last, serial colour that one thread sweeps. The order is the
 * colours one after the other, the groups of a colour by their first dynamic body (then in row order): the
 * order `order=colour` names.
 *
 * Swept in this order, the groups of a colour are independent, so how they are shared out among threads does
 * not change a bit of the result: a sweep gives the same lambda on 1, 2 or 8 threads, run after run. */
#ifndef LCPKIT_PARALLEL_H
#define LCPKIT_PARALLEL_H

#include "arena.h"
#include "problem.h"

#define LK_MAX_COLOURS 64

/* LK_PARALLEL_MIN_ROWS (lcpkit.h, 4,096): rows below which threads > 1 leaves a problem to one thread in the
 * natural order: waking the threads and meeting at a barrier per colour costs more than a sweep of a few
 * thousand rows saves, and the colour order reads the records out of order (`lcpkit bench threads`,
 * docs/benchmarks.md "Threads": 0.97-1.18x at 3,888 rows, 1.2-1.9x at 14,946). Islands of an engine are mostly
 * below it. Making such a problem's rows (lk_problem_add_rows) and an adapter's reading of them stay on the
 * caller too: they take tens of microseconds, what waking the threads costs. LK_PARALLEL_MIN_BODIES (1,024):
 * bodies from which lk_problem_add_bodies makes them on threads: a body's checks and an adapter's state of it
 * (ODE's world inertia and gyroscopic term, Bullet's inverse inertia) cost several rows' worth, about the
 * same work as LK_PARALLEL_MIN_ROWS rows. */

/* Share t of nt of n items, [*b, *e): contiguous, in order, as even as integers allow. */
static inline void lk__share(int n, int t, int nt, int *b, int *e)
{
	*b = (int)((int64_t)n * t / nt);
	*e = (int)((int64_t)n * (t + 1) / nt);
}

/* Rows per block of the metrics of a colour-order solve: each block's sums are formed on one thread and the
 * blocks' sums added in block order, so the metrics, like lambda, are the same on any number of threads. */
#define LK_METRIC_BLOCK 2048

typedef struct lk__colouring {
	const int *perm;     /* the sweep order: colour after colour (the caller's buffer, n rows) */
	int ncolours;        /* colours, the serial one included */
	int serial;          /* the last colour is the serial overflow colour */
	int *colour_group;   /* ncolours + 1: the colour's first group */
	int *group_pos;      /* ngroups + 1: each group's first position in perm */
	int ngroups;
	/* The runs of perm, maximal stretches of consecutive rows (perm[k + 1] = perm[k] + 1): run r starts at
	 * position run_pos[r], run_pos[nruns] = n. NULL where the runs are short (fewer than LK_RUN_MIN_ROWS rows
	 * on average): the sweeps then follow perm row by row. */
	int *run_pos;
	int nruns;
} lk__colouring;

/* Rows a run of the part order holds on average, at least, for the sweeps to go through the records run by
 * run as the natural order does (no index per row, the records prefetched in address order) instead of row by
 * row through perm: a run costs a call and a cold start of the sweep cursor and of the prefetch. */
#define LK_RUN_MIN_ROWS 32

/* Colours the rows of a row-form problem and writes the colour order into perm (n entries); the structure is
 * taken from the arena a. Returns LK_OK or LK_ERR_NO_MEMORY.
 *
 * nparts >= 2 makes the part order instead: the dynamic bodies, in breadth-first order over the contact
 * graph, are cut into nparts ranges holding about as many rows each, and a group whose bodies all lie in one
 * part belongs to it. The parts make the first colour, each part one unit (col->group_pos) in the natural
 * order of its rows: the parts share no body, so a thread sweeps a part whole while another sweeps another.
 * The groups that cross parts follow in the serial colour, which one thread sweeps: a sweep has one barrier
 * after the parts and one after the crossing rows, instead of one per colour. The cut runs across one level
 * of the breadth-first order, whatever the engine's body numbering: 228 of the 15,930 rows of a Bullet
 * 3,000-box pile island (1.4 %) for two parts, where Bullet's numbering (its manifolds' broadphase order) cut
 * into two index ranges left about 5,100 crossing. The order depends on nparts, not on how many threads run
 * it. */
lk_status lk__colour_rows(const lk_problem *p, lk__arena *a, int nparts, int *perm, lk__colouring **out);

typedef struct lk__pool lk__pool;
typedef void (*lk__job_fn)(void *arg, int thread, int nthreads);

/* A pool of `threads` threads counting the caller (threads - 1 workers), at most the processors online; NULL
 * if that leaves fewer than 2 or a thread could not be started. Waiting threads spin briefly, then sleep. */
lk__pool *lk__pool_create(int threads);
void lk__pool_destroy(lk__pool *pool);
int lk__pool_threads(const lk__pool *pool);
/* Runs fn(arg, t, n) on every thread t of the pool (the caller is thread 0) and returns when all are done. */
void lk__pool_run(lk__pool *pool, lk__job_fn fn, void *arg);
/* Every thread of the running job waits here until all have arrived; memory written before it is visible to
 * every thread after it. */
void lk__pool_barrier(lk__pool *pool);

#endif

/* Colouring and the thread pool of the parallel sweeps (parallel.h). */
#define _GNU_SOURCE
#include "parallel.h"

#include "kernel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------ colouring */

/* The bodies a group touches: its own dynamic bodies and those of a normal row outside the group that one of
 * its friction rows reads. More than this many and the group goes to the serial colour. */
#define GROUP_BODIES 8

/* Adds a dynamic body to the group's set; 0 when the set is full. The static world is shared freely: the
 * sweeps never write its slot. */
static int touch(int *set, int *n, int body, int nbodies)
{
	if (body < 0 || body >= nbodies)
		return 1;
	for (int k = 0; k < *n; ++k)
		if (set[k] == body)
			return 1;
	if (*n == GROUP_BODIES)
		return 0;
	set[(*n)++] = body;
	return 1;
}

/* The body a group is sorted by within its colour: its first row's lower dynamic body (nbodies: none). */
static inline int group_key(const lk_problem *p, int first_row)
{
	const lk__row *r = &p->rows[first_row];
	int a = r->a < p->nbodies ? r->a : p->nbodies, b = r->b < p->nbodies ? r->b : p->nbodies;
	return a < b ? a : b;
}

/* The bodies group g touches (touch), into set; 0 when there are more than GROUP_BODIES. */
static int group_bodies(const lk_problem *p, const int *group_start, int g, int *set, int *ns)
{
	const int nb = p->nbodies;
	int fits = 1;
	*ns = 0;
	for (int i = group_start[g]; i < group_start[g + 1] && fits; ++i) {
		const lk__row *r = &p->rows[i];
		int f = r->findex, outside = f >= 0 && (f < group_start[g] || f >= group_start[g + 1]);
		fits = touch(set, ns, r->a, nb) && touch(set, ns, r->b, nb) &&
		       (!outside || (touch(set, ns, p->rows[f].a, nb) && touch(set, ns, p->rows[f].b, nb)));
	}
	return fits;
}

/* Partition order (nparts >= 2): each dynamic body belongs to one of nparts ranges of body indices, cut so
 * that the ranges hold about as many rows each (a row counted on its lower dynamic body). A group whose
 * bodies all lie in part k goes to part k; the parts, each in the natural order of its rows, make the first
 * colour, every part one unit of work that a thread sweeps whole (the parts share no body, so they are
 * independent). The groups that cross parts are coloured greedily after it. Returns the part of each group in
 * part_of (-1: crossing). */
static void partition_groups(const lk_problem *p, const int *group_start, int ng, int nparts, int *part_of,
                             int *body_part)
{
	const int nb = p->nbodies;
	/* rows per body, then the cuts */
	memset(body_part, 0, ((size_t)nb + 1) * sizeof(int));
	for (int g = 0; g < ng; ++g) {
		const int key = group_key(p, group_start[g]);
		if (key < nb)
			body_part[key] += group_start[g + 1] - group_start[g];
	}
	int64_t total = 0;
	for (int b = 0; b < nb; ++b)
		total += body_part[b];
	int64_t acc = 0;
	for (int b = 0; b < nb; ++b) {
		const int rows = body_part[b];
		int k = total > 0 ? (int)((acc * nparts) / total) : 0;
		body_part[b] = k < nparts ? k : nparts - 1;
		acc += rows;
	}
	for (int g = 0; g < ng; ++g) {
		int set[GROUP_BODIES], ns = 0;
		part_of[g] = -1;
		if (!group_bodies(p, group_start, g, set, &ns))
			continue;
		int k = ns > 0 ? body_part[set[0]] : 0;
		for (int j = 1; j < ns && k >= 0; ++j)
			if (body_part[set[j]] != k)
				k = -1;
		part_of[g] = k;
	}
}

lk_status lk__colour_rows(const lk_problem *p, lk__arena *a, int nparts, int *perm, lk__colouring **out)
{
	const int n = p->nrows, nb = p->nbodies;
	lk__colouring *col = lk__arena_alloc(a, sizeof *col);
	int *group_start = lk__arena_alloc(a, ((size_t)n + 1) * sizeof(int));
	unsigned char *colour_of = lk__arena_alloc(a, (size_t)n + 1);
	uint64_t *used = lk__arena_alloc(a, ((size_t)nb + 1) * sizeof(uint64_t));
	int *count = lk__arena_alloc(a, (LK_MAX_COLOURS + 2) * sizeof(int));
	int *part_of = nparts >= 2 ? lk__arena_alloc(a, ((size_t)n + 1) * sizeof(int)) : NULL;
	int *body_part = nparts >= 2 ? lk__arena_alloc(a, ((size_t)nb + 1) * sizeof(int)) : NULL;
	if (!col || !group_start || !colour_of || !used || !count || (nparts >= 2 && (!part_of || !body_part)))
		return LK_ERR_NO_MEMORY;
	memset(used, 0, ((size_t)nb + 1) * sizeof(uint64_t));
	memset(count, 0, (LK_MAX_COLOURS + 2) * sizeof(int));

	/* groups: maximal runs of one body pair */
	int ng = 0;
	for (int i = 0; i < n; ++i)
		if (i == 0 || p->rows[i].a != p->rows[i - 1].a || p->rows[i].b != p->rows[i - 1].b)
			group_start[ng++] = i;
	group_start[ng] = n;
	if (nparts >= 2)
		partition_groups(p, group_start, ng, nparts, part_of, body_part);

	/* greedy first fit over the groups in row order (in the part order, the parts are the first colour and
	 * the crossing groups the serial one) */
	const int serial_colour = LK_MAX_COLOURS, first = nparts >= 2;
	int top = 0, in_parts = 0;
	for (int g = 0; g < ng; ++g) {
		if (first && part_of[g] >= 0) {
			colour_of[g] = 0;
			++in_parts;
			continue;
		}
		int set[GROUP_BODIES], ns = 0;
		/* in the part order the few groups that cross parts go to the serial colour: one barrier a sweep
		 * after the parts instead of one per colour */
		const int fits = !first && group_bodies(p, group_start, g, set, &ns);
		int colour = serial_colour;
		if (fits) {
			uint64_t busy = 0;
			for (int k = 0; k < ns; ++k)
				busy |= used[set[k]];
			const uint64_t free = ~busy;
			if (free) {
				colour = __builtin_ctzll(free);
				for (int k = 0; k < ns; ++k)
					used[set[k]] |= (uint64_t)1 << colour;
			}
		}
		colour_of[g] = (unsigned char)colour;
		count[colour]++;
		if (colour != serial_colour && colour + 1 > top)
			top = colour + 1;
	}
	if (first && top < 1)
		top = 1;

	/* the order: colour after colour, the serial colour last (within a colour, by body: below). In the
	 * partition order the first colour's units are the parts, not the groups. */
	const int serial = count[serial_colour] > 0;
	const int units0 = first ? nparts : count[0];
	const int nunits = ng - (first ? in_parts : 0) + (first ? nparts : 0);
	col->ncolours = top + serial;
	col->serial = serial;
	col->ngroups = nunits;
	col->colour_group = lk__arena_alloc(a, ((size_t)col->ncolours + 1) * sizeof(int));
	col->group_pos = lk__arena_alloc(a, ((size_t)nunits + 1) * sizeof(int));
	int *slot = lk__arena_alloc(a, ((size_t)col->ncolours + 1) * sizeof(int));
	if (!col->colour_group || !col->group_pos || !slot)
		return LK_ERR_NO_MEMORY;
	int acc = 0;
	for (int k = 0; k < col->ncolours; ++k) {
		int c = serial && k == top ? serial_colour : k;
		col->colour_group[k] = acc;
		slot[k] = acc;
		acc += k == 0 && first ? units0 : count[c];
	}
	col->colour_group[col->ncolours] = nunits;
	int pos = 0;
	if (first) {
		/* the parts, each in row order */
		int *part_rows = lk__arena_alloc(a, ((size_t)nparts + 1) * sizeof(int));
		if (!part_rows)
			return LK_ERR_NO_MEMORY;
		memset(part_rows, 0, ((size_t)nparts + 1) * sizeof(int));
		for (int g = 0; g < ng; ++g)
			if (part_of[g] >= 0)
				part_rows[part_of[g] + 1] += group_start[g + 1] - group_start[g];
		for (int k = 0; k < nparts; ++k) {
			part_rows[k + 1] += part_rows[k];
			col->group_pos[k] = part_rows[k];
		}
		pos = part_rows[nparts]; /* the rows in parts */
		for (int g = 0; g < ng; ++g)
			if (part_of[g] >= 0)
				for (int i = group_start[g]; i < group_start[g + 1]; ++i)
					perm[part_rows[part_of[g]]++] = i;
	}
	/* within a colour, groups by their first dynamic body (a counting sort, stable in row order), so that a
	 * colour's sweep walks du in address order: its groups share no body, and in row order each would load
	 * two slots from anywhere */
	int *by_body = lk__arena_alloc(a, ((size_t)ng + 1) * sizeof(int));
	int *bucket = lk__arena_alloc(a, ((size_t)nb + 2) * sizeof(int));
	int *group_at = lk__arena_alloc(a, ((size_t)nunits + 1) * sizeof(int)); /* the groups in the order */
	if (!by_body || !bucket || !group_at)
		return LK_ERR_NO_MEMORY;
	memset(bucket, 0, ((size_t)nb + 2) * sizeof(int));
	for (int g = 0; g < ng; ++g)
		bucket[group_key(p, group_start[g]) + 1]++;
	for (int b = 0; b <= nb; ++b)
		bucket[b + 1] += bucket[b];
	for (int g = 0; g < ng; ++g)
		by_body[bucket[group_key(p, group_start[g])]++] = g;
	for (int j = 0; j < ng; ++j) {
		int g = by_body[j];
		if (first && part_of[g] >= 0)
			continue;
		int k = colour_of[g] == serial_colour ? top : colour_of[g];
		group_at[slot[k]++] = g;
	}
	for (int q = first ? nparts : 0; q < nunits; ++q) {
		const int g = group_at[q];
		col->group_pos[q] = pos;
		for (int i = group_start[g]; i < group_start[g + 1]; ++i)
			perm[pos++] = i;
	}
	col->group_pos[nunits] = pos;
	col->perm = perm;
	*out = col;
	return LK_OK;
}

/* -------------------------------------------------------------------------------------------- the pool */

/* Spins of a waiting thread before it sleeps: about the time of a colour's share on a large problem (tens of
 * microseconds), so that the threads of one sweep meet without a system call, short enough not to hold a core
 * between solves or against threads that have no core to run on. */
#define SPIN_YIELD 4000

struct lk__pool {
	int threads;
	pthread_t *workers;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	atomic_uint job;       /* generation of the current job */
	atomic_int done;       /* workers finished with it */
	atomic_uint finished;  /* jobs every worker has finished */
	atomic_int quit;
	lk__job_fn fn;
	void *arg;
	atomic_int arrived;    /* barrier */
	atomic_uint phase;
	atomic_int sleepers;   /* threads asleep on `wake` in the barrier or in lk__pool_run */
};

typedef struct worker_arg {
	lk__pool *pool;
	int index;
} worker_arg;

static inline void pause_once(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Waits until *word differs from seen: spins a little (the other threads of a sweep are a few microseconds
 * away), then sleeps on the pool's condition variable, so that a pool with more threads than free cores does
 * not spin against the very threads it waits for. Whoever changes a word a thread may sleep on calls
 * wake_sleepers after the change. */
static void wait_change(lk__pool *pool, atomic_uint *word, unsigned seen)
{
	for (unsigned spins = 0; spins < SPIN_YIELD; ++spins) {
		if (atomic_load(word) != seen)
			return;
		pause_once();
	}
	pthread_mutex_lock(&pool->lock);
	atomic_fetch_add(&pool->sleepers, 1);
	while (atomic_load(word) == seen)
		pthread_cond_wait(&pool->wake, &pool->lock);
	atomic_fetch_sub(&pool->sleepers, 1);
	pthread_mutex_unlock(&pool->lock);
}

/* After a change of a word others may wait on: wakes the sleepers. (A thread counts itself a sleeper under
 * the lock before it looks at the word a last time; every operation here is sequentially consistent, so
 * either it sees the change or the changer sees it counted.) */
static void wake_sleepers(lk__pool *pool)
{
	if (atomic_load(&pool->sleepers) > 0) {
		pthread_mutex_lock(&pool->lock);
		pthread_cond_broadcast(&pool->wake);
		pthread_mutex_unlock(&pool->lock);
	}
}

static void *worker_main(void *varg)
{
	worker_arg wa = *(worker_arg *)varg;
	free(varg);
	lk__pool *pool = wa.pool;
	unsigned seen = 0;
	for (;;) {
		/* the next job: a sweep of the same solve is microseconds away, the next solve maybe a frame */
		wait_change(pool, &pool->job, seen);
		if (atomic_load(&pool->quit))
			return NULL;
		seen = atomic_load(&pool->job);
		pool->fn(pool->arg, wa.index, pool->threads);
		if (atomic_fetch_add(&pool->done, 1) == pool->threads - 2) {
			atomic_fetch_add(&pool->finished, 1);
			wake_sleepers(pool);
		}
	}
}

lk__pool *lk__pool_create(int threads)
{
	/* more threads than processors would only wait for each other: the result is the same on any number
	 * (parallel.h), so the pool takes at most the processors online */
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	if (online >= 1 && threads > online)
		threads = (int)online;
	if (threads > LK_MAX_THREADS)
		threads = LK_MAX_THREADS;
	if (threads < 2)
		return NULL;
	lk__pool *pool = calloc(1, sizeof *pool);
	if (!pool)
		return NULL;
	pool->threads = threads;
	pool->workers = calloc((size_t)threads, sizeof *pool->workers);
	if (!pool->workers || pthread_mutex_init(&pool->lock, NULL) != 0) {
		free(pool->workers);
		free(pool);
		return NULL;
	}
	if (pthread_cond_init(&pool->wake, NULL) != 0) {
		pthread_mutex_destroy(&pool->lock);
		free(pool->workers);
		free(pool);
		return NULL;
	}
	atomic_init(&pool->job, 0);
	atomic_init(&pool->done, 0);
	atomic_init(&pool->quit, 0);
	atomic_init(&pool->arrived, 0);
	atomic_init(&pool->phase, 0);
	atomic_init(&pool->sleepers, 0);
	atomic_init(&pool->finished, 0);
	int started = 0;
	for (int t = 1; t < threads; ++t) {
		worker_arg *wa = malloc(sizeof *wa);
		if (!wa)
			break;
		wa->pool = pool;
		wa->index = t;
		if (pthread_create(&pool->workers[t], NULL, worker_main, wa) != 0) {
			free(wa);
			break;
		}
		++started;
	}
	if (started != threads - 1) {
		pool->threads = started + 1;
		lk__pool_destroy(pool);
		return NULL;
	}
	return pool;
}

void lk__pool_destroy(lk__pool *pool)
{
	if (!pool)
		return;
	pthread_mutex_lock(&pool->lock);
	atomic_store(&pool->quit, 1);
	atomic_fetch_add(&pool->job, 1); /* what the workers wait on */
	pthread_cond_broadcast(&pool->wake);
	pthread_mutex_unlock(&pool->lock);
	for (int t = 1; t < pool->threads; ++t)
		pthread_join(pool->workers[t], NULL);
	pthread_cond_destroy(&pool->wake);
	pthread_mutex_destroy(&pool->lock);
	free(pool->workers);
	free(pool);
}

int lk__pool_threads(const lk__pool *pool)
{
	return pool ? pool->threads : 1;
}

void lk__pool_run(lk__pool *pool, lk__job_fn fn, void *arg)
{
	pool->fn = fn;
	pool->arg = arg;
	atomic_store(&pool->done, 0);
	const unsigned finished = atomic_load(&pool->finished);
	atomic_fetch_add(&pool->job, 1);
	wake_sleepers(pool);
	fn(arg, 0, pool->threads);
	wait_change(pool, &pool->finished, finished);
}

void lk__pool_barrier(lk__pool *pool)
{
	const unsigned phase = atomic_load(&pool->phase);
	if (atomic_fetch_add(&pool->arrived, 1) == pool->threads - 1) {
		atomic_store(&pool->arrived, 0);
		atomic_fetch_add(&pool->phase, 1);
		wake_sleepers(pool);
		return;
	}
	wait_change(pool, &pool->phase, phase);
}

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

/* Every group (a maximal run of rows on one body pair) with the bodies it touches: its own dynamic bodies and
 * those of a normal row outside the group that one of its friction rows reads (a normal row inside the
 * group, or on the same pair, adds none); and the body it is sorted by within its colour, its lower dynamic
 * body (nbodies: none). Found in one pass over the records, since each row's pair and findex lie in its
 * record's last line, and read several times by the partition and the colouring. */
typedef struct group_sets {
	int *start;          /* first row of each group, then nrows */
	int *set;            /* the groups' sets one after another (at most GROUP_BODIES each) */
	int *off;            /* where each group's set starts in set, then the end: its bodies off[g + 1] - off[g] */
	int *key;
	unsigned char *fits; /* 0: the group touches more than GROUP_BODIES (the set holds some of them) */
} group_sets;

/* Group g's set: its bodies, *ns of them. */
static inline const int *group_set(const group_sets *gs, int g, int *ns)
{
	*ns = gs->off[g + 1] - gs->off[g];
	return gs->set + gs->off[g];
}

/* Returns the number of groups, or -1 without memory. */
static int find_groups(const lk_problem *p, lk__arena *a, group_sets *gs)
{
	const int n = p->nrows, nb = p->nbodies;
	gs->start = lk__arena_alloc(a, ((size_t)n + 1) * sizeof(int));
	gs->set = lk__arena_alloc(a, ((size_t)n + 1) * GROUP_BODIES * sizeof(int));
	gs->off = lk__arena_alloc(a, ((size_t)n + 1) * sizeof(int));
	gs->key = lk__arena_alloc(a, ((size_t)n + 1) * sizeof(int));
	gs->fits = lk__arena_alloc(a, (size_t)n + 1);
	if (!gs->start || !gs->set || !gs->off || !gs->key || !gs->fits)
		return -1;
	/* the sets packed one after another: most groups touch two bodies, and a set's place each of
	 * GROUP_BODIES was mostly stores to lines of memory that held nothing else of use */
	int ng = 0, ns = 0, fits = 1, last_f = -1, pos = 0;
	int32_t pa = -1, pb = -1;
	int *set = gs->set;
	for (int i = 0; i < n; ++i) {
		const lk__row_link *r = &p->link[i];
		if (i == 0 || r->a != pa || r->b != pb) {
			if (ng > 0) {
				gs->fits[ng - 1] = (unsigned char)fits;
				pos += ns;
			}
			pa = r->a;
			pb = r->b;
			gs->start[ng] = i;
			gs->off[ng] = pos;
			set = gs->set + pos;
			ns = 0;
			fits = touch(set, &ns, pa, nb) && touch(set, &ns, pb, nb);
			const int ka = pa < nb ? pa : nb, kb = pb < nb ? pb : nb;
			gs->key[ng] = ka < kb ? ka : kb;
			last_f = -1;
			++ng;
		}
		const int f = r->findex;
		if (f >= 0 && f != last_f && fits) {
			last_f = f;
			const lk__row_link *rf = &p->link[f];
			if (rf->a != pa || rf->b != pb)
				fits = touch(set, &ns, rf->a, nb) && touch(set, &ns, rf->b, nb);
		}
	}
	if (ng > 0) {
		gs->fits[ng - 1] = (unsigned char)fits;
		pos += ns;
	}
	gs->start[ng] = n;
	gs->off[ng] = pos;
	return ng;
}

/* The dynamic bodies in breadth-first order over the graph in which a group joins every pair of the bodies it
 * touches (find_groups): rank[b] is body b's place. Each connected part starts from a pseudo-peripheral body
 * (George & Liu 1979: a first search from the part's lowest body, the second from the last body the first
 * reached), so that the order runs across the part in level sets, as the reverse Cuthill-McKee ordering does:
 * bodies near each other in the graph get near ranks, and a cut of the ranks into ranges is a cut across
 * one level. The engines' body numbering need not follow their graph (Bullet numbers its solver bodies in
 * the order its manifolds come from the broadphase). Linear in bodies and groups. */
static lk_status bfs_ranks(const lk_problem *p, lk__arena *a, const group_sets *gs, int ng, int *rank)
{
	const int nb = p->nbodies;
	int *deg = lk__arena_alloc(a, ((size_t)nb + 2) * sizeof(int));
	int *queue = lk__arena_alloc(a, ((size_t)nb + 1) * sizeof(int));
	int *seen = lk__arena_alloc(a, ((size_t)nb + 1) * sizeof(int));
	if (!deg || !queue || !seen)
		return LK_ERR_NO_MEMORY;
	memset(deg, 0, ((size_t)nb + 2) * sizeof(int));
	int64_t edges = 0;
	for (int g = 0; g < ng; ++g) {
		int ns;
		const int *set = group_set(gs, g, &ns);
		for (int k = 0; k < ns; ++k)
			deg[set[k] + 1] += ns - 1;
		edges += (int64_t)ns * (ns - 1);
	}
	for (int b = 0; b < nb; ++b)
		deg[b + 1] += deg[b];
	int *adj = lk__arena_alloc(a, ((size_t)edges + 1) * sizeof(int));
	int *fill = lk__arena_alloc(a, ((size_t)nb + 1) * sizeof(int));
	if (!adj || !fill)
		return LK_ERR_NO_MEMORY;
	memcpy(fill, deg, (size_t)nb * sizeof(int));
	for (int g = 0; g < ng; ++g) {
		int ns;
		const int *set = group_set(gs, g, &ns);
		for (int k = 0; k < ns; ++k)
			for (int j = 0; j < ns; ++j)
				if (j != k)
					adj[fill[set[k]]++] = set[j];
	}
	for (int b = 0; b < nb; ++b)
		seen[b] = -1;
	int ranked = 0;
	for (int s = 0; s < nb; ++s) {
		if (seen[s] >= 0)
			continue;
		/* two searches: the first (marked with s) finds the far end, the second (marked nb + s) ranks */
		int start = s;
		for (int pass = 0; pass < 2; ++pass) {
			const int mark = pass ? nb + s : s;
			int head = 0, tail = 0;
			queue[tail++] = start;
			seen[start] = mark;
			while (head < tail) {
				const int b = queue[head++];
				for (int e = deg[b]; e < deg[b + 1]; ++e)
					if (seen[adj[e]] != mark) {
						seen[adj[e]] = mark;
						queue[tail++] = adj[e];
					}
			}
			if (!pass) {
				start = queue[tail - 1];
				continue;
			}
			for (int k = 0; k < tail; ++k)
				rank[queue[k]] = ranked++;
		}
	}
	return LK_OK;
}

/* Cuts the dynamic bodies, in the order `rank` gives them (NULL: their numbers), into nparts ranges that hold
 * about as many rows each. A group whose bodies all lie in part k goes to part k, the others cross (part_of -1).
 * A group's rows are counted on its first body in that order and again on its last: the groups that cross a cut
 * leave both parts alike. Counted on the first alone, they left the part below, and the parts of two threads
 * came out unequal by the crossing rows, the thread of the smaller part waiting at the barrier for the other
 * (docs/benchmarks.md, "Threads"). Returns the rows that cross.
 * rows_at and body_part are scratch of nbodies + 1. */
static int cut_parts(const lk_problem *p, const group_sets *gs, int ng, int nparts, const int *rank, int *rows_at,
                     int *body_part, int *part_of)
{
	const int nb = p->nbodies;
	memset(rows_at, 0, ((size_t)nb + 1) * sizeof(int));
	for (int g = 0; g < ng; ++g) {
		int ns;
		const int *set = group_set(gs, g, &ns);
		int first = nb, last = -1;
		for (int k = 0; k < ns; ++k) {
			const int r = rank ? rank[set[k]] : set[k];
			first = r < first ? r : first;
			last = r > last ? r : last;
		}
		if (first < nb) {
			const int rows = gs->start[g + 1] - gs->start[g];
			rows_at[first] += rows;
			rows_at[last] += rows;
		}
	}
	int64_t total = 0;
	for (int r = 0; r < nb; ++r)
		total += rows_at[r];
	/* rows_at becomes the part of each place in the order */
	int64_t acc = 0;
	for (int r = 0; r < nb; ++r) {
		const int rows = rows_at[r];
		int k = total > 0 ? (int)((acc * nparts) / total) : 0;
		rows_at[r] = k < nparts ? k : nparts - 1;
		acc += rows;
	}
	for (int b = 0; b < nb; ++b)
		body_part[b] = rows_at[rank ? rank[b] : b];
	int crossing = 0;
	for (int g = 0; g < ng; ++g) {
		int ns;
		const int *set = group_set(gs, g, &ns);
		int k = -1;
		if (gs->fits[g]) {
			k = ns > 0 ? body_part[set[0]] : 0;
			for (int j = 1; j < ns && k >= 0; ++j)
				if (body_part[set[j]] != k)
					k = -1;
		}
		part_of[g] = k;
		if (k < 0)
			crossing += gs->start[g + 1] - gs->start[g];
	}
	return crossing;
}

/* Partition order (nparts >= 2): the parts, each in the natural order of its rows, make the first colour,
 * every part one unit of work that a thread sweeps whole (the parts share no body, so they are
 * independent); the groups that cross parts are coloured after it. Returns the part of each group in
 * part_of (-1: crossing).
 *
 * The cut of the engine's own body numbers comes first: ODE numbers bodies in the order of its walk over
 * the joints, so that cut follows the graph, and each part's rows lie in long runs of the record array,
 * which one thread sweeps as fast as the natural order. Where more than one row in 16 would cross (Bullet
 * numbers its solver bodies in the order its manifolds come from the broadphase: a third of a pile's rows
 * cross), the cut of the breadth-first order (bfs_ranks) is taken instead if fewer rows cross it. Both cuts
 * depend on the problem alone. */
static lk_status partition_groups(const lk_problem *p, lk__arena *a, const group_sets *gs, int ng, int nparts,
                                  int *part_of)
{
	const int nb = p->nbodies;
	int *rows_at = lk__arena_alloc(a, ((size_t)nb + 1) * sizeof(int));
	int *body_part = lk__arena_alloc(a, ((size_t)nb + 1) * sizeof(int));
	if (!rows_at || !body_part)
		return LK_ERR_NO_MEMORY;
	const int crossing = cut_parts(p, gs, ng, nparts, NULL, rows_at, body_part, part_of);
	if (crossing <= p->nrows / 16)
		return LK_OK;
	int *rank = lk__arena_alloc(a, ((size_t)nb + 1) * sizeof(int));
	int *part_of2 = lk__arena_alloc(a, ((size_t)ng + 1) * sizeof(int));
	if (!rank || !part_of2)
		return LK_ERR_NO_MEMORY;
	lk_status st = bfs_ranks(p, a, gs, ng, rank);
	if (st != LK_OK)
		return st;
	if (cut_parts(p, gs, ng, nparts, rank, rows_at, body_part, part_of2) < crossing)
		memcpy(part_of, part_of2, (size_t)ng * sizeof(int));
	return LK_OK;
}

lk_status lk__colour_rows(const lk_problem *p, lk__arena *a, int nparts, int *perm, lk__colouring **out)
{
	const int n = p->nrows, nb = p->nbodies;
	lk__colouring *col = lk__arena_alloc(a, sizeof *col);
	unsigned char *colour_of = lk__arena_alloc(a, (size_t)n + 1);
	uint64_t *used = lk__arena_alloc(a, ((size_t)nb + 1) * sizeof(uint64_t));
	int *count = lk__arena_alloc(a, (LK_MAX_COLOURS + 2) * sizeof(int));
	int *part_of = nparts >= 2 ? lk__arena_alloc(a, ((size_t)n + 1) * sizeof(int)) : NULL;
	if (!col || !colour_of || !used || !count || (nparts >= 2 && !part_of))
		return LK_ERR_NO_MEMORY;
	memset(used, 0, ((size_t)nb + 1) * sizeof(uint64_t));
	memset(count, 0, (LK_MAX_COLOURS + 2) * sizeof(int));

	group_sets gs;
	const int ng = find_groups(p, a, &gs);
	if (ng < 0)
		return LK_ERR_NO_MEMORY;
	const int *group_start = gs.start;
	if (nparts >= 2) {
		lk_status st = partition_groups(p, a, &gs, ng, nparts, part_of);
		if (st != LK_OK)
			return st;
	}

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
		int ns;
		const int *set = group_set(&gs, g, &ns);
		/* in the part order the few groups that cross parts go to the serial colour: one barrier a sweep
		 * after the parts instead of one per colour */
		const int fits = !first && gs.fits[g];
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
	/* in the part order only the crossing groups: the parts keep their rows' order */
	memset(bucket, 0, ((size_t)nb + 2) * sizeof(int));
	for (int g = 0; g < ng; ++g)
		bucket[gs.key[g] + 1] += !first || part_of[g] < 0;
	for (int b = 0; b <= nb; ++b)
		bucket[b + 1] += bucket[b];
	for (int g = 0; g < ng; ++g)
		if (!first || part_of[g] < 0)
			by_body[bucket[gs.key[g]]++] = g;
	for (int j = 0; j < bucket[nb]; ++j) {
		int g = by_body[j];
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
	/* the runs, kept when they are long: ODE numbers bodies along its walk, so a part's rows lie in long runs
	 * of the records, and the colour order's groups (a contact's rows) in runs of a few */
	int nruns = n > 0;
	for (int k = 1; k < n; ++k)
		nruns += perm[k] != perm[k - 1] + 1;
	col->run_pos = NULL;
	col->nruns = 0;
	if (nruns > 0 && n / nruns >= LK_RUN_MIN_ROWS) {
		int *run_pos = lk__arena_alloc(a, ((size_t)nruns + 1) * sizeof(int));
		if (run_pos) { /* without room, the sweeps follow perm */
			int r = 0;
			for (int k = 0; k < n; ++k)
				if (k == 0 || perm[k] != perm[k - 1] + 1)
					run_pos[r++] = k;
			run_pos[nruns] = n;
			col->run_pos = run_pos;
			col->nruns = nruns;
		}
	}
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

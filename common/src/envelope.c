/* The envelope factorisation of a row subset (envelope.h).
 *
 * Order: reverse Cuthill-McKee (Cuthill & McKee 1969; George & Liu, "Computer Solution of Large Sparse
 * Positive Definite Systems", 1981, ch. 4) on the graph whose edges join rows that share a dynamic body. The
 * breadth-first search runs over bodies: a row reached first expands its bodies, each body once, so the
 * search is linear in the rows and their bodies, and the rows of one body stay together. Each component
 * starts from the far end of a first search (a pseudo-peripheral row), which on a stack is its top or its
 * bottom, and the envelope becomes the band of two neighbouring contact groups.
 *
 * Factor: the row-by-row envelope Cholesky of George & Liu sec. 4.2, L_pq = (A_pq - sum_m L_pm L_qm) / L_qq
 * over the overlap of the two envelope rows, with the semidefinite pivot rule of envelope.h. */
#include "envelope.h"

#include <math.h>
#include <string.h>

/* The body slot of a row side that is dynamic, or -1 for the static world slot. */
static inline int dyn(const lk_problem *p, int body)
{
	return lk__env_body(body, p->nbodies);
}

typedef struct bodies {
	int *ptr;  /* nbodies + 1: items on body b are list[ptr[b] .. ptr[b+1]) */
	int *list; /* item indices */
} bodies;

static int body_lists(bodies *bl, lk__arena *a, int nb, const int *pair, int n)
{
	bl->ptr = lk__arena_alloc(a, ((size_t)nb + 2) * sizeof(int));
	bl->list = lk__arena_alloc(a, (2 * (size_t)n + 1) * sizeof(int));
	if (!bl->ptr || !bl->list)
		return -1;
	memset(bl->ptr, 0, ((size_t)nb + 2) * sizeof(int));
	for (int k = 0; k < n; ++k) {
		int ba = lk__env_body(pair[2 * k], nb), bb = lk__env_body(pair[2 * k + 1], nb);
		if (ba >= 0)
			bl->ptr[ba + 2]++;
		if (bb >= 0)
			bl->ptr[bb + 2]++;
	}
	for (int b = 0; b < nb; ++b)
		bl->ptr[b + 2] += bl->ptr[b + 1];
	/* ptr[b + 1] is now where body b's items start; filling advances it to where they end */
	for (int k = 0; k < n; ++k) {
		int ba = lk__env_body(pair[2 * k], nb), bb = lk__env_body(pair[2 * k + 1], nb);
		if (ba >= 0)
			bl->list[bl->ptr[ba + 1]++] = k;
		if (bb >= 0)
			bl->list[bl->ptr[bb + 1]++] = k;
	}
	return 0;
}

static inline int body_rows(const bodies *bl, int b)
{
	return b >= 0 ? bl->ptr[b + 1] - bl->ptr[b] : 0;
}

static inline int degree(const int *pair, int nb, const bodies *bl, int k)
{
	return body_rows(bl, lk__env_body(pair[2 * k], nb)) + body_rows(bl, lk__env_body(pair[2 * k + 1], nb));
}

/* Breadth-first search over the component of item `root`, items marked with `stamp` once queued, bodies once
 * expanded. Appends the visit order to queue[*len ..] and returns the last item visited. */
static int bfs(const int *pair, int nb, const bodies *bl, int root, int stamp, int *item_mark, int *body_mark,
               int *queue, int *len)
{
	int head = *len, tail = *len;
	queue[tail++] = root;
	item_mark[root] = stamp;
	int last = root;
	while (head < tail) {
		int k = queue[head++];
		last = k;
		int side[2] = {lk__env_body(pair[2 * k], nb), lk__env_body(pair[2 * k + 1], nb)};
		int level = tail;
		for (int s = 0; s < 2; ++s) {
			int b = side[s];
			if (b < 0 || body_mark[b] == stamp)
				continue;
			body_mark[b] = stamp;
			for (int e = bl->ptr[b]; e < bl->ptr[b + 1]; ++e) {
				int j = bl->list[e];
				if (item_mark[j] != stamp) {
					item_mark[j] = stamp;
					queue[tail++] = j;
				}
			}
		}
		/* Cuthill-McKee's rule: the new neighbours by ascending degree (an item's degree is the items of its
		 * bodies), so that a stack's ground contacts come before the contacts above them. Insertion sort:
		 * the items one item adds are the items of two bodies. */
		for (int i = level + 1; i < tail; ++i) {
			int j = queue[i], dj = degree(pair, nb, bl, j), t = i;
			while (t > level && degree(pair, nb, bl, queue[t - 1]) > dj) {
				queue[t] = queue[t - 1];
				--t;
			}
			queue[t] = j;
		}
	}
	*len = tail;
	return last;
}

int lk__env_order(lk__arena *a, int nb, int n, const int *pair, int *order, int *pos, int *first)
{
	if (n <= 0)
		return 0;
	bodies bl;
	if (body_lists(&bl, a, nb, pair, n) != 0)
		return -1;
	int *item_mark = lk__arena_alloc(a, (size_t)n * sizeof(int));
	int *body_mark = lk__arena_alloc(a, ((size_t)nb + 1) * sizeof(int));
	int *bmin = lk__arena_alloc(a, ((size_t)nb + 1) * sizeof(int));
	if (!item_mark || !body_mark || !bmin)
		return -1;
	for (int k = 0; k < n; ++k)
		item_mark[k] = 0;
	for (int b = 0; b < nb; ++b)
		body_mark[b] = 0;

	/* Cuthill-McKee per component from a pseudo-peripheral item (the last item of a first search), reversed */
	int len = 0, stamp = 0;
	for (int k = 0; k < n; ++k) {
		if (item_mark[k] > 0)
			continue;
		int probe = len;
		int far = bfs(pair, nb, &bl, k, ++stamp, item_mark, body_mark, order, &probe);
		bfs(pair, nb, &bl, far, ++stamp, item_mark, body_mark, order, &len);
	}
	for (int i = 0, j = n - 1; i < j; ++i, --j) {
		int t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (int q = 0; q < n; ++q)
		pos[order[q]] = q;

	/* the envelope: an item's row starts at the first position among the items of its bodies */
	for (int b = 0; b < nb; ++b) {
		int m = n;
		for (int t = bl.ptr[b]; t < bl.ptr[b + 1]; ++t)
			if (pos[bl.list[t]] < m)
				m = pos[bl.list[t]];
		bmin[b] = m;
	}
	for (int q = 0; q < n; ++q) {
		const int k = order[q];
		int f = q, ba = lk__env_body(pair[2 * k], nb), bb = lk__env_body(pair[2 * k + 1], nb);
		if (ba >= 0 && bmin[ba] < f)
			f = bmin[ba];
		if (bb >= 0 && bmin[bb] < f)
			f = bmin[bb];
		first[q] = f;
	}
	return 0;
}

/* e for n items: its arrays but the values (0; -1 without memory) */
static int env_begin(lk__env *e, lk__arena *a, int n)
{
	memset(e, 0, sizeof *e);
	e->n = n;
	e->order = lk__arena_alloc(a, (size_t)n * sizeof(int));
	e->pos = lk__arena_alloc(a, (size_t)n * sizeof(int));
	e->first = lk__arena_alloc(a, (size_t)n * sizeof(int));
	e->start = lk__arena_alloc(a, ((size_t)n + 1) * sizeof(size_t));
	e->dead = lk__arena_alloc(a, (size_t)n);
	e->y = lk__arena_alloc(a, (size_t)n * sizeof(double));
	return e->order && e->pos && e->first && e->start && e->dead && e->y ? 0 : -1;
}

/* The offsets of the envelope rows from first[]; returns the factor's multiply-adds */
static double env_offsets(lk__env *e)
{
	double macs = 0.0;
	size_t entries = 0;
	for (int q = 0; q < e->n; ++q) {
		e->start[q] = entries;
		double h = (double)(q - e->first[q]);
		entries += (size_t)(q - e->first[q]) + 1;
		macs += 0.5 * h * (h + 1.0);
	}
	e->start[e->n] = entries;
	e->entries = entries;
	return macs;
}

int lk__env_analyse(lk__env *e, lk__arena *a, const lk_problem *p, const int *idx, int n, double max_macs)
{
	if (n <= 0) {
		memset(e, 0, sizeof *e);
		return 0;
	}
	int nb = p->nbodies;
	int fail = env_begin(e, a, n);
	int *pair = lk__arena_alloc(a, 2 * (size_t)n * sizeof(int));
	int *count = lk__arena_alloc(a, ((size_t)nb + 1) * sizeof(int));
	if (fail || !pair || !count)
		return -1;
	memset(count, 0, ((size_t)nb + 1) * sizeof(int));
	for (int k = 0; k < n; ++k) {
		const lk__row *r = &p->rows[idx[k]];
		pair[2 * k] = r->a;
		pair[2 * k + 1] = r->b;
		if (dyn(p, r->a) >= 0)
			count[r->a]++;
		if (dyn(p, r->b) >= 0)
			count[r->b]++;
	}
	if (lk__env_order(a, nb, n, pair, e->order, e->pos, e->first) != 0)
		return -1;
	double macs = env_offsets(e);
	/* assembly: a 6-term product for every pair of rows on one body */
	for (int b = 0; b < nb; ++b) {
		double m = (double)count[b];
		macs += 3.0 * m * (m + 1.0);
	}
	e->macs = macs + 2.0 * (double)e->entries; /* and the two triangular solves */
	if (macs > max_macs)
		return 1;
	e->val = lk__arena_alloc(a, e->entries * sizeof(double));
	return e->val ? 0 : -1;
}

/* J_i on the side of body slot b, and M^-1 J^T likewise */
static inline const double *side_of(const lk__row *r, int b, const double *v)
{
	return r->a == b ? v : v + 6;
}

void lk__env_assemble(lk__env *e, const lk_problem *p, const int *idx, const double *reg)
{
	int n = e->n;
	double *val = e->val;
	memset(val, 0, e->entries * sizeof(double));
	/* assembly of the strict lower envelope through the shared bodies, and the diagonal A_ii (+ CFM) + reg */
	for (int q = 0; q < n; ++q) {
		int k = e->order[q];
		const lk__row *ri = &p->rows[idx[k]];
		double *row = val + e->start[q] - e->first[q];
		row[q] = ri->diag + (reg ? reg[k] : 0.0);
		int side[2] = {dyn(p, ri->a), dyn(p, ri->b)};
		for (int s = 0; s < 2; ++s) {
			int b = side[s];
			if (b < 0)
				continue;
			const double *Ji = side_of(ri, b, ri->J);
			/* every earlier row on body b lies inside this row's envelope (first[q] is the first position
			 * among the rows of its bodies); the envelope also holds rows of neither body, skipped here */
			for (int t = e->first[q]; t < q; ++t) {
				const lk__row *rj = &p->rows[idx[e->order[t]]];
				if (rj->a != b && rj->b != b)
					continue;
				const double *MJj = side_of(rj, b, rj->MJ);
				double v = 0.0;
				for (int m = 0; m < 6; ++m)
					v += Ji[m] * MJj[m];
				row[t] += v;
			}
		}
	}
}

/* sum of a[m] b[m] over m in [from, to), in four running sums: the factor's and the solves' inner loops are
 * these dot products, and one running sum makes each multiply-add wait for the last (the sum's rounding differs
 * from one sum's in the last bits) */
static inline double dot(const double *a, const double *b, int from, int to)
{
	double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
	int m = from;
	for (; m + 4 <= to; m += 4) {
		s0 += a[m] * b[m];
		s1 += a[m + 1] * b[m + 1];
		s2 += a[m + 2] * b[m + 2];
		s3 += a[m + 3] * b[m + 3];
	}
	for (; m < to; ++m)
		s0 += a[m] * b[m];
	return (s0 + s1) + (s2 + s3);
}

void lk__env_factor_assembled(lk__env *e, double dead_pivot)
{
	int n = e->n;
	double *val = e->val;
	/* L L^T, row by row */
	e->ndead = 0;
	for (int q = 0; q < n; ++q) {
		int fq = e->first[q];
		double *Lq = val + e->start[q] - fq;
		for (int t = fq; t < q; ++t) {
			if (e->dead[t]) {
				Lq[t] = 0.0;
				continue;
			}
			int ft = e->first[t];
			const double *Lt = val + e->start[t] - ft;
			Lq[t] = (Lq[t] - dot(Lq, Lt, ft > fq ? ft : fq, t)) / Lt[t];
		}
		double d0 = Lq[q], d = d0 - dot(Lq, Lq, fq, q);
		if (!(d > dead_pivot * d0)) {
			e->dead[q] = 1;
			e->ndead++;
			Lq[q] = 1.0;
		} else {
			e->dead[q] = 0;
			Lq[q] = sqrt(d);
		}
	}
}

void lk__env_factor(lk__env *e, const lk_problem *p, const int *idx, const double *reg)
{
	lk__env_assemble(e, p, idx, reg);
	lk__env_factor_assembled(e, LK_ENV_DEAD_PIVOT);
}

/* breadth-first levels from root over the unvisited part (pos[v] < 0): level[] of the nodes reached, in
 * queue[0 .. returned); stamp marks them for this search */
static int graph_levels(int root, const int *ptr, const int *adj, const int *pos, int *mark, int stamp, int *queue,
                        int *level)
{
	int head = 0, tail = 0;
	queue[tail++] = root;
	mark[root] = stamp;
	level[root] = 0;
	while (head < tail) {
		const int v = queue[head++];
		for (int k = ptr[v]; k < ptr[v + 1]; ++k) {
			const int u = adj[k];
			if (pos[u] < 0 && mark[u] != stamp) {
				mark[u] = stamp;
				level[u] = level[v] + 1;
				queue[tail++] = u;
			}
		}
	}
	return tail;
}

int lk__env_graph(lk__env *e, lk__arena *a, int n, const int *ptr, const int *adj, double max_macs)
{
	if (n <= 0) {
		memset(e, 0, sizeof *e);
		return 0;
	}
	const int fail = env_begin(e, a, n);
	int *mark = lk__arena_alloc(a, (size_t)n * sizeof(int));
	int *level = lk__arena_alloc(a, (size_t)n * sizeof(int));
	int *queue = lk__arena_alloc(a, (size_t)n * sizeof(int));
	if (fail || !mark || !level || !queue)
		return -1;
	for (int v = 0; v < n; ++v) {
		e->pos[v] = -1;
		mark[v] = -1;
	}
	/* Cuthill-McKee per component from a pseudo-peripheral node (George & Liu ch. 4.3: the last level's node of
	 * least degree, searched from twice), then reversed */
	int placed = 0, stamp = 0;
	for (int v0 = 0; v0 < n; ++v0) {
		if (e->pos[v0] >= 0)
			continue;
		int root = v0;
		for (int round = 0; round < 2; ++round) {
			const int reached = graph_levels(root, ptr, adj, e->pos, mark, stamp++, queue, level);
			const int last = level[queue[reached - 1]];
			int best = queue[reached - 1];
			for (int k = reached - 1; k >= 0 && level[queue[k]] == last; --k)
				if (ptr[queue[k] + 1] - ptr[queue[k]] < ptr[best + 1] - ptr[best])
					best = queue[k];
			root = best;
		}
		int head = placed;
		e->order[placed] = root;
		e->pos[root] = placed++;
		while (head < placed) {
			const int v = e->order[head++];
			const int from = placed;
			for (int k = ptr[v]; k < ptr[v + 1]; ++k) {
				const int u = adj[k];
				if (e->pos[u] < 0) {
					e->pos[u] = placed;
					e->order[placed++] = u;
				}
			}
			/* the new neighbours by increasing degree (insertion sort: a node has few) */
			for (int i = from + 1; i < placed; ++i) {
				const int u = e->order[i], du = ptr[u + 1] - ptr[u];
				int j = i - 1;
				while (j >= from && ptr[e->order[j] + 1] - ptr[e->order[j]] > du) {
					e->order[j + 1] = e->order[j];
					--j;
				}
				e->order[j + 1] = u;
			}
		}
	}
	for (int q = 0; q < n / 2; ++q) {
		const int t = e->order[q];
		e->order[q] = e->order[n - 1 - q];
		e->order[n - 1 - q] = t;
	}
	for (int q = 0; q < n; ++q)
		e->pos[e->order[q]] = q;
	for (int q = 0; q < n; ++q) {
		const int v = e->order[q];
		int f = q;
		for (int k = ptr[v]; k < ptr[v + 1]; ++k)
			if (e->pos[adj[k]] < f)
				f = e->pos[adj[k]];
		e->first[q] = f;
	}
	e->macs = env_offsets(e) + 3.0 * (double)e->entries; /* the assembly and the two triangular solves */
	if (e->macs > max_macs)
		return 1;
	e->val = lk__arena_alloc(a, e->entries * sizeof(double));
	return e->val ? 0 : -1;
}

double *lk__env_at(const lk__env *e, int k1, int k2)
{
	int p = e->pos[k1], t = e->pos[k2];
	if (p < t) {
		int x = p;
		p = t;
		t = x;
	}
	return t < e->first[p] ? NULL : e->val + e->start[p] - e->first[p] + t;
}

void lk__env_solve(const lk__env *e, const double *b, double *x)
{
	int n = e->n;
	double *y = e->y;
	const double *val = e->val;
	for (int q = 0; q < n; ++q) {
		int fq = e->first[q];
		const double *Lq = val + e->start[q] - fq;
		const double v = b[e->order[q]] - dot(Lq, y, fq, q);
		y[q] = e->dead[q] ? 0.0 : v / Lq[q];
	}
	for (int q = n - 1; q >= 0; --q) {
		int fq = e->first[q];
		const double *Lq = val + e->start[q] - fq;
		double xq = e->dead[q] ? 0.0 : y[q] / Lq[q];
		y[q] = xq;
		for (int m = fq; m < q; ++m)
			y[m] -= Lq[m] * xq;
	}
	for (int q = 0; q < n; ++q)
		x[e->order[q]] = y[q];
}

/* Sweep orders and schedules of the Gauss-Seidel family: Poulsen, Abel & Erleben 2010, section 5.
 *
 * A permutation Pi of the rows changes line 2 of their PGS pseudocode into "for p = 1..n: i <- Pi(p)"; it is
 * built once per solve, before the iteration, and then used like any other order by PGS, PSOR and the
 * methods whose sweeps take an order (lk__order_build):
 *   IPP  impulse propagation permutation: rows sorted by their relative velocity J u* (a preprocessing
 *        sort, as the paper does; re-sorting every sweep would add O(n log n) per iteration),
 *   CP   coordinate permutation: rows sorted by the position of their contact point along x, y, z or the
 *        gravity direction, optionally blocked so each normal row comes right before its friction rows,
 *   ESP  as a permutation: the normal set, then the friction set.
 * The staggered schedules themselves (ESP and GSP proper, with frozen sets) are in stagger.c. */
#include "ordering.h"

#include "kernel.h"
#include "parallel.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------------------------------- permutations */

/* A row with its sort key as an unsigned integer in the keys' order (sortable_bits). */
typedef struct keyed_row {
	uint64_t key;
	int row;
} keyed_row;

/* The bits of x as an unsigned integer that orders as x does (the sign bit set for x >= 0, every bit flipped
 * for x < 0), reversed for a descending order. -0 and +0 are one key. Keys are never NaN: the problem's
 * validation refuses a non-finite q, c or contact point (J u* = q + c may overflow to an infinity, which orders). */
static uint64_t sortable_bits(double x, int descending)
{
	x += 0.0; /* -0 + 0 = +0 */
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	/* without a branch on the sign, which is a coin toss for relative velocities */
	u ^= (uint64_t)((int64_t)u >> 63) | (UINT64_C(1) << 63);
	return descending ? ~u : u;
}

/* The longest run of keys with the same upper bits that the radix sort's fix-up orders by insertion. */
#define LK_SORT_RUN 16

static int by_key_and_row(const void *x, const void *y)
{
	const keyed_row *u = x, *v = y;
	if (u->key != v->key)
		return u->key < v->key ? -1 : 1;
	return (u->row > v->row) - (u->row < v->row);
}

/* The m rows of a sorted by key, ties by row index, into a or b (the one returned). A radix sort of the keys'
 * upper 32 bits, a byte a pass from the lowest (Knuth, "The Art of Computer Programming" vol. 3, sec. 5.2.5),
 * each pass stable, so rows given in index order keep it among keys with the same upper bits; a pass whose byte
 * is the same in every key is skipped. Only rows whose upper bits tie can then be out of order, and they are
 * next to each other: each such run is ordered by its whole key and the row index, which moves no other row.
 * The result is the order of a comparison sort on (key, row). On a recorded Bullet stack step of 240 rows the
 * sort costs about one and a half sweeps' time, where the C library's comparison sort cost ten (its branches
 * on keys in no order mispredicted about every other time). */
static keyed_row *radix_sort(keyed_row *a, keyed_row *b, int m)
{
	unsigned count[4][256];
	memset(count, 0, sizeof count);
	for (int i = 0; i < m; ++i)
		for (int d = 0; d < 4; ++d)
			count[d][(a[i].key >> (32 + 8 * d)) & 255u]++;
	for (int d = 0; d < 4 && m > 0; ++d) {
		unsigned *c = count[d];
		const int shift = 32 + 8 * d;
		if (c[(a[0].key >> shift) & 255u] == (unsigned)m)
			continue;
		unsigned sum = 0;
		for (int v = 0; v < 256; ++v) {
			const unsigned t = c[v];
			c[v] = sum;
			sum += t;
		}
		for (int i = 0; i < m; ++i)
			b[c[(a[i].key >> shift) & 255u]++] = a[i];
		keyed_row *t = a;
		a = b;
		b = t;
	}
	/* the runs of rows whose upper bits tie (keys within a millionth of each other), in row order: each ordered
	 * by its whole key, by insertion, or a run longer than LK_SORT_RUN by the C library's sort, so that no
	 * input makes the fix-up quadratic */
	for (int i = 0; i < m;) {
		int j = i + 1;
		while (j < m && (a[j].key >> 32) == (a[i].key >> 32))
			++j;
		if (j - i > LK_SORT_RUN) {
			int sorted = 1; /* exact ties, the usual long run, are in order already */
			for (int k = i + 1; k < j && sorted; ++k)
				sorted = by_key_and_row(&a[k - 1], &a[k]) < 0;
			if (!sorted)
				qsort(a + i, (size_t)(j - i), sizeof *a, by_key_and_row);
		} else {
			for (int k = i + 1; k < j; ++k) {
				const keyed_row x = a[k];
				int t = k;
				for (; t > i && by_key_and_row(&a[t - 1], &x) > 0; --t)
					a[t] = a[t - 1];
				a[t] = x;
			}
		}
		i = j;
	}
	return a;
}

/* The unit axis of a coordinate permutation; 0 if the configured gravity direction is zero. */
static int cp_axis(const lk_solver_config *cfg, double axis[3])
{
	axis[0] = axis[1] = axis[2] = 0.0;
	switch (cfg->order) {
	case LK_ORDER_CP_X: axis[0] = 1.0; return 1;
	case LK_ORDER_CP_Y: axis[1] = 1.0; return 1;
	case LK_ORDER_CP_Z: axis[2] = 1.0; return 1;
	default: break;
	}
	const double *g = cfg->gravity;
	double len = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
	if (!(len > 0.0) || !isfinite(len))
		return 0;
	for (int k = 0; k < 3; ++k)
		axis[k] = g[k] / len;
	return 1;
}

int lk_config_reads_points(const lk_solver_config *cfg)
{
	if (!cfg)
		return 0;
	switch (cfg->order) {
	case LK_ORDER_CP_X:
	case LK_ORDER_CP_Y:
	case LK_ORDER_CP_Z:
	case LK_ORDER_CP_GRAVITY: return 1;
	default: return 0;
	}
}

/* Sort key of row i: IPP the relative velocity along the row before any impulse, y = J u* (the b of
 * Poulsen et al. eq. (3); q = J u* - c in the row form, q itself in the matrix form); CP the contact point's
 * coordinate along the axis. */
static double row_key(const lk_problem *p, lk_order order, const double axis[3], int i)
{
	if (order == LK_ORDER_IPP)
		return p->form == LK_FORM_ROWS ? p->rows[i].q + p->cold[i].c : p->rows[i].q;
	const double *x = p->cold[i].point;
	return x[0] * axis[0] + x[1] * axis[1] + x[2] * axis[2];
}

static lk_status sorted_permutation(lk_problem *p, const lk_solver_config *cfg, int *perm)
{
	int n = p->nrows;
	double axis[3] = {0, 0, 0};
	if (cfg->order != LK_ORDER_IPP) {
		if (p->form != LK_FORM_ROWS)
			return lk__fail(p, LK_ERR_UNSUPPORTED,
			                "order %s sorts rows by their contact points, which a matrix-form problem does "
			                "not have (use natural, random, ipp, esp or gsp)",
			                lk_order_name(cfg->order));
		if (!cp_axis(cfg, axis))
			return lk__fail(p, LK_ERR_INVALID_ARGUMENT, "order cp-gravity needs a non-zero gravity direction");
	}
	keyed_row *kr = lk__arena_alloc(&p->arena, ((size_t)n + 1) * sizeof *kr);
	keyed_row *spare = lk__arena_alloc(&p->arena, ((size_t)n + 1) * sizeof *spare);
	if (!kr || !spare)
		return lk__fail(p, LK_ERR_NO_MEMORY, "order %s: out of memory for %d rows", lk_order_name(cfg->order),
		                n);
	/* Blocked: only the rows with fixed bounds are sorted; each takes its friction rows along, right behind
	 * it, so a friction row always sees the normal impulse of the same sweep (Poulsen et al. sec. 5, CP). */
	int blocked = cfg->order_blocked != 0;
	int m = 0;
	for (int i = 0; i < n; ++i)
		if (!blocked || !lk__is_friction(&p->rows[i]))
			kr[m++] = (keyed_row){sortable_bits(row_key(p, cfg->order, axis, i), cfg->order_descending), i};
	kr = radix_sort(kr, spare, m);
	if (!blocked) {
		for (int k = 0; k < n; ++k)
			perm[k] = kr[k].row;
		return LK_OK;
	}
	/* the friction rows of each normal row, in row order (a CSR of children) */
	int *start = lk__arena_alloc(&p->arena, ((size_t)n + 2) * sizeof(int));
	int *child = lk__arena_alloc(&p->arena, ((size_t)n + 1) * sizeof(int));
	if (!start || !child)
		return lk__fail(p, LK_ERR_NO_MEMORY, "order %s: out of memory for %d rows", lk_order_name(cfg->order),
		                n);
	memset(start, 0, ((size_t)n + 2) * sizeof(int));
	for (int i = 0; i < n; ++i)
		if (p->link[i].findex >= 0)
			++start[p->link[i].findex + 2];
	for (int i = 0; i < n; ++i)
		start[i + 2] += start[i + 1];
	for (int i = 0; i < n; ++i)
		if (p->link[i].findex >= 0)
			child[start[p->link[i].findex + 1]++] = i;
	int out = 0;
	for (int k = 0; k < m; ++k) {
		int r = kr[k].row;
		perm[out++] = r;
		for (int e = start[r]; e < start[r + 1]; ++e)
			perm[out++] = child[e];
	}
	return LK_OK;
}

/* The colour order (nparts 0) or the part order in nparts parts (parallel.h) into perm and its colours into
 * *col; the matrix form has no bodies to colour by: its rows keep their order (the identity, *col NULL). */
static lk_status colour_permutation(lk_problem *p, int nparts, int *perm, const lk__colouring **col)
{
	*col = NULL;
	if (p->form != LK_FORM_ROWS) {
		for (int i = 0; i < p->nrows; ++i)
			perm[i] = i;
		return LK_OK;
	}
	lk__colouring *made;
	if (lk__colour_rows(p, &p->arena, nparts, perm, &made) != LK_OK)
		return lk__fail(p, LK_ERR_NO_MEMORY, "order %s: out of memory for %d rows", nparts ? "part" : "colour",
		                p->nrows);
	*col = made;
	return LK_OK;
}

lk_status lk__order_permutation(lk_problem *p, const lk_solver_config *cfg, int *perm)
{
	int n = p->nrows;
	for (int i = 0; i < n; ++i)
		perm[i] = i;
	switch (cfg->order) {
	case LK_ORDER_NATURAL:
	case LK_ORDER_RANDOM: /* shuffled by the sweep loop, every sweep */
		return LK_OK;
	case LK_ORDER_IPP:
	case LK_ORDER_CP_X:
	case LK_ORDER_CP_Y:
	case LK_ORDER_CP_Z:
	case LK_ORDER_CP_GRAVITY:
		return sorted_permutation(p, cfg, perm);
	case LK_ORDER_ESP: {
		/* Poulsen et al. sec. 5: the normal and the friction impulses as two disjoint sequences. Swept
		 * this way, each half sees the other half's impulses of the previous half-sweep, frozen: exactly
		 * the alternation of eq. (20) and (21). */
		int k = 0;
		for (int i = 0; i < n; ++i)
			if (!lk__is_friction(&p->rows[i]))
				perm[k++] = i;
		for (int i = 0; i < n; ++i)
			if (lk__is_friction(&p->rows[i]))
				perm[k++] = i;
		return LK_OK;
	}
	case LK_ORDER_COLOUR:
	case LK_ORDER_PART: {
		const lk__colouring *col;
		return colour_permutation(p, lk__order_parts(cfg), perm, &col);
	}
	case LK_ORDER_GSP:
		return lk__fail(p, LK_ERR_UNSUPPORTED,
		                "order gsp chooses the set to sweep from the sets' errors as it goes; it is a schedule "
		                "of pgs and psor, not a fixed order for %s",
		                "this method");
	default:
		break;
	}
	return lk__fail(p, LK_ERR_UNSUPPORTED, "order %s is not available in this build", lk_order_name(cfg->order));
}

/* ------------------------------------------------------------------------ the latency order of "natural" */

/* A Gauss-Seidel sweep in the natural order is a chain: consecutive rows mostly act on the same bodies (a
 * joint's rows, a contact's), so each row update waits for the one before it (its velocity slots) and the
 * processor runs one update at a time. Two rows on disjoint bodies commute in a sweep: neither reads what
 * the other writes (the static world's slot stays zero). So every order that keeps, for each body, its rows
 * in their natural order gives the same iterate to the bit, and the sweep may take one in which consecutive
 * rows share no body, so that the processor overlaps their updates.
 *
 * Level scheduling of the rows' conflict graph gives one in a single pass: a row's level is one more than
 * the levels of the rows before it on its bodies, so rows of one level share no body, and ordering rows by
 * level keeps each body's rows in order. The levels are sorted within blocks of LK_LATENCY_BLOCK rows of
 * the natural order (blocks in their order, the rows of a block by level, then by index: a stable counting
 * sort), which keeps every body's rows in order too and moves no row further than a block, so that the
 * sweep still streams through the records. On 32 ragdolls the rows sharing a body with the row before fall
 * from 73 % to a few per cent and a sweep takes about 0.8x the time (docs/benchmarks.md); the iterates are
 * the natural order's to the bit. Where three rows in four keep their place (a stack: each row on a body of
 * the row before), there is none. */
#define LK_LATENCY_BLOCK 256

int lk__latency_order(lk_problem *p, int *perm)
{
	const int n = p->nrows, nb = p->nbodies;
	if (p->form != LK_FORM_ROWS || n < 2)
		return 0;
	lk__arena *ar = &p->arena;
	int *level = lk__arena_alloc(ar, (size_t)n * sizeof(int));
	/* per body, the level of its last row, counted from the first block: the current block's levels are base + 1
	 * .. base + its rows, so a level at or below base is from an earlier block (and counts as 0) without a
	 * second array to tell the blocks apart */
	int *last = lk__arena_alloc(ar, ((size_t)nb + 1) * sizeof(int));
	int *count = lk__arena_alloc(ar, ((size_t)LK_LATENCY_BLOCK + 1) * sizeof(int));
	if (!level || !last || !count)
		return 0;
	const lk__row_link *rows = p->link;
	for (int b = 0; b <= nb; ++b)
		last[b] = 0;
	int kept = 0; /* rows at their own place */
	for (int b0 = 0, base = 0; b0 < n; b0 += LK_LATENCY_BLOCK) {
		const int b1 = b0 + LK_LATENCY_BLOCK < n ? b0 + LK_LATENCY_BLOCK : n;
		/* levels within the block, 1 .. b1 - b0 */
		for (int i = b0; i < b1; ++i) {
			const int a = rows[i].a, b = rows[i].b;
			int la = last[a] - base, lb = last[b] - base;
			la = la > 0 ? la : 0;
			lb = lb > 0 ? lb : 0;
			const int l = (la > lb ? la : lb) + 1;
			level[i] = l;
			last[a] = last[b] = base + l;
			last[nb] = 0; /* the static slot: shared by no one */
		}
		base += b1 - b0;
		memset(count, 0, ((size_t)(b1 - b0) + 1) * sizeof(int));
		for (int i = b0; i < b1; ++i)
			++count[level[i]];
		for (int l = 1; l <= b1 - b0; ++l)
			count[l] += count[l - 1];
		/* count[l - 1]: where level l's rows begin */
		for (int i = b0; i < b1; ++i) {
			const int at = b0 + count[level[i] - 1]++;
			perm[at] = i;
			kept += at == i;
		}
	}
	/* a chain (a stack's rows: each on a body of the row before) keeps its order: then the order would cost
	 * its permutation and give nothing */
	return kept <= n - n / 4;
}

lk_status lk__order_build(lk__ctx *c, int *perm)
{
	/* the colour and part orders' sweeps need their colours, not only their permutation */
	if (lk__order_coloured(c->cfg->order))
		return colour_permutation(c->p, lk__order_parts(c->cfg), perm, &c->colouring);
	return lk__order_permutation(c->p, c->cfg, perm);
}


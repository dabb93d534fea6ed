/* The block envelope factorisation of a grouped coarse problem (faceblock.h). */
#include "faceblock.h"

#include <math.h>
#include <string.h>

#define M LK_FB_MAX

static inline double *block(const lk__fblock *f, int q, int t)
{
	return f->blocks + (f->start[q] + (size_t)(t - f->first[q])) * (M * M);
}

/* The ordering and envelope of lk__fb_analyse, and in *macs its bound on the multiply-adds of assembling and
 * factoring; 0, or -1 when the arena has no memory. */
static int envelope(lk__fblock *f, lk__arena *a, int nbodies, int n, const int *pair, const int *size,
                    double *macs_out)
{
	f->order = lk__arena_alloc(a, (size_t)n * sizeof(int));
	f->first = lk__arena_alloc(a, (size_t)n * sizeof(int));
	f->start = lk__arena_alloc(a, ((size_t)n + 1) * sizeof(size_t));
	f->size = lk__arena_alloc(a, (size_t)n * sizeof(int));
	int *pos = lk__arena_alloc(a, (size_t)n * sizeof(int));
	if (!f->order || !f->first || !f->start || !f->size || !pos)
		return -1;
	/* the groups ordered and their envelope found as the row-by-row factor does its rows (envelope.h): a
	 * group is an item on its two bodies */
	if (lk__env_order(a, nbodies, n, pair, f->order, pos, f->first) != 0)
		return -1;
	size_t blocks = 0;
	double width = 0.0, macs = 0.0;
	int tail = 0; /* the groups of the running width: positions tail .. q - 1 */
	for (int q = 0; q < n; ++q) {
		const int g = f->order[q], first = f->first[q];
		f->start[q] = blocks;
		blocks += (size_t)(q - first) + 1;
		f->size[g] = size[g];
		/* the rows of the envelope before the block row, kept as a running sum: the row-by-row envelope's
		 * count, h (h + 1) / 2 for a row with h entries before its diagonal, bounds the block factor's (the
		 * blocks hold the same entries), and a structure past max_macs is declined before its blocks exist */
		while (tail < first)
			width -= size[f->order[tail++]];
		for (; tail > first; --tail)
			width += size[f->order[tail - 1]];
		for (int i = 0; i < size[g]; ++i)
			macs += 0.5 * (width + i) * (width + i + 1.0) + 6.0 * (width + i + 1.0);
		width += size[g];
	}
	f->start[n] = blocks;
	f->nblocks = blocks;
	*macs_out = macs;
	return 0;
}

int lk__fb_analyse(lk__fblock *f, lk__arena *a, int nbodies, int n, const int *pair, const int *size,
                   double max_macs)
{
	memset(f, 0, sizeof *f);
	f->n = n;
	if (n <= 0)
		return 0;
	double macs = 0.0;
	if (envelope(f, a, nbodies, n, pair, size, &macs) != 0)
		return -1;
	if (macs > max_macs)
		return 1;
	/* the factor's own arrays, which lk__fb_within's check has no use for */
	f->off = lk__arena_alloc(a, (size_t)n * sizeof(int));
	f->y = lk__arena_alloc(a, (size_t)n * M * sizeof(double));
	f->inv = lk__arena_alloc(a, (size_t)n * M * sizeof(double));
	f->blocks = lk__arena_alloc(a, f->nblocks * M * M * sizeof(double));
	return f->off && f->y && f->inv && f->blocks ? 0 : -1;
}

int lk__fb_within(lk__arena *a, int nbodies, int n, const int *pair, const int *size, double max_macs)
{
	if (n <= 0)
		return 0;
	lk__fblock f;
	memset(&f, 0, sizeof f);
	f.n = n;
	double macs = 0.0;
	if (envelope(&f, a, nbodies, n, pair, size, &macs) != 0)
		return -1;
	return macs > max_macs;
}

/* whether group h is on the dynamic body b (b < 0: the static world, shared with nobody) */
static inline int shares(const int *pair, int h, int b)
{
	return b >= 0 && (pair[2 * h] == b || pair[2 * h + 1] == b);
}

double lk__fb_macs(lk__fblock *f, const int *pair, int nbodies)
{
	double macs = 0.0, solve = 0.0;
	for (int q = 0; q < f->n; ++q) {
		const int g = f->order[q];
		const double mq = f->size[g];
		double width = 0.0; /* rows of the envelope block row before the diagonal block */
		for (int t = f->first[q]; t <= q; ++t) {
			const int h = f->order[t];
			const double mt = f->size[h];
			/* the entries of the block: all of an off-diagonal one, the lower triangle of the diagonal one */
			const double entries = t < q ? mq * mt : 0.5 * mq * (mq + 1.0);
			/* assembly: six terms an entry, per shared body */
			for (int s = 0; s < 2; ++s) {
				const int b = lk__env_body(pair[2 * g + s], nbodies);
				if (shares(pair, h, b) && (s == 0 || b != lk__env_body(pair[2 * g], nbodies)))
					macs += 6.0 * entries;
			}
			/* the updates from the blocks both rows hold, then the triangular solve or the Cholesky */
			const int k0 = f->first[q] > f->first[t] ? f->first[q] : f->first[t];
			for (int k = k0; k < t; ++k)
				macs += entries * f->size[f->order[k]];
			macs += t < q ? 0.5 * mq * mt * (mt + 1.0) : mq * mq * mq / 6.0 + mq;
			if (t < q)
				width += mt;
		}
		solve += 2.0 * mq * (width + 0.5 * (mq + 1.0)); /* the two triangular solves */
	}
	f->solve_macs = solve;
	return macs;
}

/* sum_k x_k y_k over six */
static inline double dot6(const double *x, const double *y)
{
	return (x[0] * y[0] + x[1] * y[1] + x[2] * y[2]) + (x[3] * y[3] + x[4] * y[4] + x[5] * y[5]);
}

void lk__fb_factor(lk__fblock *f, const lk__row *rows, const int *pair, int nbodies, const double *reg)
{
	const int n = f->n;
	f->ndead = 0;
	for (int q = 0; q < n; ++q) {
		const int g = f->order[q], mq = f->size[g];
		const lk__row *rq = rows + f->off[g];
		/* the block row of A: for each earlier group sharing a body, the products of the two groups' rows on
		 * it; the rest of the envelope is zero */
		for (int t = f->first[q]; t <= q; ++t) {
			const int h = f->order[t], mt = f->size[h];
			const lk__row *rt = rows + f->off[h];
			double *B = block(f, q, t);
			memset(B, 0, M * M * sizeof(double));
			for (int s = 0; s < 2; ++s) {
				const int b = lk__env_body(pair[2 * g + s], nbodies);
				if (!shares(pair, h, b) || (s == 1 && b == lk__env_body(pair[2 * g], nbodies)))
					continue;
				const int so = 6 * s, ho = pair[2 * h] == b ? 0 : 6;
				for (int i = 0; i < mq; ++i)
					for (int j = 0; j < (t == q ? i + 1 : mt); ++j)
						B[M * i + j] += dot6(rq[i].J + so, rt[j].MJ + ho);
			}
			if (t == q)
				for (int i = 0; i < mq; ++i)
					B[M * i + i] += rq[i].s + (reg ? reg[f->off[g] + i] : 0.0);
		}
		double d0[M];
		for (int i = 0; i < mq; ++i)
			d0[i] = block(f, q, q)[M * i + i];
		/* L_qt = (A_qt - sum_k L_qk L_tk^T) L_tt^-T, then L_qq = chol(A_qq - sum_k L_qk L_qk^T) */
		for (int t = f->first[q]; t <= q; ++t) {
			const int mt = f->size[f->order[t]];
			double *B = block(f, q, t);
			const int k0 = f->first[q] > f->first[t] ? f->first[q] : f->first[t];
			for (int k = k0; k < t; ++k) {
				/* over all M columns of the two blocks: those past the group's size are zero (assembly
				 * cleared them and the factorisation writes none), and a loop of fixed length unrolls */
				const double *Lq = block(f, q, k), *Lt = block(f, t, k);
				for (int i = 0; i < mq; ++i)
					for (int j = 0; j < (t == q ? i + 1 : mt); ++j) {
						double v = 0.0;
						for (int l = 0; l < M; ++l)
							v += Lq[M * i + l] * Lt[M * j + l];
						B[M * i + j] -= v;
					}
			}
			if (t < q) {
				/* column by column, each row of the block its own chain, times the pivots' reciprocals
				 * (row by row, every entry waited for a division and the entry before it) */
				const double *Ltt = block(f, t, t), *it = f->inv + (size_t)t * M;
				for (int j = 0; j < mt; ++j)
					for (int i = 0; i < mq; ++i) {
						double v = B[M * i + j];
						for (int l = 0; l < j; ++l)
							v -= B[M * i + l] * Ltt[M * j + l];
						B[M * i + j] = v * it[j]; /* 0 for a dead pivot */
					}
			} else {
				/* the diagonal block's own Cholesky, each pivot against its assembled diagonal (envelope.h's
				 * rule) */
				double *iq = f->inv + (size_t)q * M;
				for (int j = 0; j < mq; ++j) {
					double d = B[M * j + j];
					for (int l = 0; l < j; ++l)
						d -= B[M * j + l] * B[M * j + l];
					if (!(d > LK_ENV_DEAD_PIVOT * d0[j])) {
						iq[j] = 0.0;
						f->ndead++;
						B[M * j + j] = 1.0;
						for (int i = j + 1; i < mq; ++i)
							B[M * i + j] = 0.0;
						continue;
					}
					const double ljj = sqrt(d);
					B[M * j + j] = ljj;
					iq[j] = 1.0 / ljj;
					for (int i = j + 1; i < mq; ++i) {
						double v = B[M * i + j];
						for (int l = 0; l < j; ++l)
							v -= B[M * i + l] * B[M * j + l];
						B[M * i + j] = v * iq[j];
					}
				}
			}
		}
	}
}

void lk__fb_solve(const lk__fblock *f, const double *b, double *x)
{
	const int n = f->n;
	double *y = f->y;
	/* L y = b, block row by block row */
	for (int q = 0; q < n; ++q) {
		const int g = f->order[q], mq = f->size[g];
		double *yq = y + (size_t)q * M;
		for (int i = 0; i < mq; ++i)
			yq[i] = b[f->off[g] + i];
		for (int t = f->first[q]; t < q; ++t) {
			const int mt = f->size[f->order[t]];
			const double *L = block(f, q, t), *yt = y + (size_t)t * M;
			for (int i = 0; i < mq; ++i) {
				double v = 0.0;
				for (int j = 0; j < mt; ++j)
					v += L[M * i + j] * yt[j];
				yq[i] -= v;
			}
		}
		const double *D = block(f, q, q), *iq = f->inv + (size_t)q * M;
		for (int i = 0; i < mq; ++i) {
			double v = yq[i];
			for (int l = 0; l < i; ++l)
				v -= D[M * i + l] * yq[l];
			yq[i] = v * iq[i]; /* 0 for a dead pivot, whose column below it is 0 */
		}
	}
	/* L^T x = y, from the last block row back, each block's x then taken out of the rows before it */
	for (int q = n - 1; q >= 0; --q) {
		const int g = f->order[q], mq = f->size[g];
		double *yq = y + (size_t)q * M;
		const double *D = block(f, q, q), *iq = f->inv + (size_t)q * M;
		for (int i = mq - 1; i >= 0; --i) {
			double v = yq[i];
			for (int l = i + 1; l < mq; ++l)
				v -= D[M * l + i] * yq[l];
			yq[i] = v * iq[i];
		}
		for (int t = f->first[q]; t < q; ++t) {
			const int mt = f->size[f->order[t]];
			const double *L = block(f, q, t);
			double *yt = y + (size_t)t * M;
			for (int j = 0; j < mt; ++j) {
				double v = 0.0;
				for (int i = 0; i < mq; ++i)
					v += L[M * i + j] * yq[i];
				yt[j] -= v;
			}
		}
		for (int i = 0; i < mq; ++i)
			x[f->off[g] + i] = yq[i];
	}
}

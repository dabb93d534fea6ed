/* A direct solve of a coarse problem whose unknowns come in groups, each group's rows on one body pair (the
 * modes of a contact face, coarse.c): the envelope Cholesky factorisation of envelope.h (George & Liu,
 * "Computer Solution of Large Sparse Positive Definite Systems", 1981, ch. 4) with the groups as its blocks.
 * Every row of a group has the same bodies, so the envelope of one of its rows is the envelope of all of
 * them: ordering the groups (reverse Cuthill-McKee over the groups' bodies), finding the envelope and
 * assembling it take one step per group or per pair of groups that share a body instead of one per row or
 * per pair of rows, and the factorisation works on dense blocks of at most LK_FB_MAX x LK_FB_MAX. The
 * arithmetic is that of the row-by-row envelope factor, with its semidefinite pivot rule (LK_ENV_DEAD_PIVOT)
 * and the caller's proximal term on the diagonal. */
#ifndef LCPKIT_FACEBLOCK_H
#define LCPKIT_FACEBLOCK_H

#include "arena.h"
#include "envelope.h"
#include "problem.h"

/* the largest group */
#define LK_FB_MAX 6

typedef struct lk__fblock {
	int n;                /* groups */
	int *order;           /* position -> group */
	int *first;           /* per position: the first position of its envelope block row */
	size_t *start;        /* per position: index of its block (q, first[q]) among the blocks */
	int *size;            /* per group: its rows (set by the caller before lk__fb_factor) */
	int *off;             /* per group: its first row among the caller's rows (likewise) */
	double *blocks;       /* LK_FB_MAX^2 doubles per block, row-major: the envelope of A, then of L */
	double *y;            /* the solve's scratch, LK_FB_MAX per position */
	double *inv;          /* LK_FB_MAX per position: 1 / the pivot, 0 for a dependent row (envelope.h) */
	size_t nblocks;
	double solve_macs;    /* multiply-adds of one solve (lk__fb_macs) */
	int ndead;
} lk__fblock;

/* Orders n groups, group g of size[g] rows on the bodies pair[2 g], pair[2 g + 1] (a slot >= nbodies is the
 * static world, which couples nothing), and finds their block envelope; f->size gets the sizes and, with 0
 * returned, f->off is allocated for the caller to fill. Returns 0; 1 (and allocates no blocks) when assembling and
 * factoring would take more than about max_macs multiply-adds; -1 when the arena has no memory. Linear in the
 * groups and their bodies. */
int lk__fb_analyse(lk__fblock *f, lk__arena *a, int nbodies, int n, const int *pair, const int *size,
                   double max_macs);
/* Whether lk__fb_analyse would decline the structure: 0 within max_macs, 1 past it, -1 when the arena has no
 * memory; the ordering's arrays from a, and no blocks. */
int lk__fb_within(lk__arena *a, int nbodies, int n, const int *pair, const int *size, double max_macs);
/* Multiply-adds of assembling and factoring the envelope with the groups' sizes in f->size (what the budget
 * counts); those of one solve go to f->solve_macs. */
double lk__fb_macs(lk__fblock *f, const int *pair, int nbodies);
/* Assembles A + diag(reg) from the rows (group g's rows at rows[f->off[g] ..], their J and M^-1 J^T on the
 * group's bodies) and factors it in place. */
void lk__fb_factor(lk__fblock *f, const lk__row *rows, const int *pair, int nbodies, const double *reg);
/* Solves (A + R) x = b; b and x are indexed like the rows and may be the same array. */
void lk__fb_solve(const lk__fblock *f, const double *b, double *x);

#endif

/* A direct solve of a subset S of the rows of a row-form problem: A_SS + R, assembled from the rows' J and
 * M^-1 J^T in envelope (skyline) storage under a reverse Cuthill-McKee order, factored as L L^T (envelope.c).
 * PGS-SM uses it for its subspace solve where the factor is cheap: on a stack or a chain the rows couple only
 * through shared bodies, the envelope is a band of a few dozen rows, and the factor costs a few sweeps where
 * conjugate gradients on the same ill-conditioned system need hundreds of products. The cost is known before
 * any arithmetic (lk__env_analyse), so a caller under a budget can decline a factor it cannot pay for.
 *
 * A contact matrix is only semidefinite (four contacts of a box on a face carry three degrees of freedom), so
 * the factorisation is the semidefinite one: a pivot that falls below LK_ENV_DEAD_PIVOT of its diagonal marks
 * its row dependent on the rows before it, and the solve leaves that row's unknown at 0 (a solution of every
 * consistent system, bounded for an inconsistent one). */
#ifndef LCPKIT_ENVELOPE_H
#define LCPKIT_ENVELOPE_H

#include "arena.h"
#include "problem.h"

/* relative pivot below which a row counts as linearly dependent on the rows before it: above the rounding
 * of an exact dependency (1e-14) and above the CFM an engine adds to make a dependent contact regular (ODE:
 * 1e-10 / h against a diagonal of order 1 / m), whose solution would otherwise be the inconsistent part of
 * the right-hand side divided by the CFM */
#define LK_ENV_DEAD_PIVOT 1e-9

/* The proximal term PGS-SM adds to every diagonal of a factored subspace (A_AA + rho diag(A_AA)): the
 * correction a factor returns is then the small-norm one of a semidefinite A_AA, as CG's from a zero start is,
 * rather than a basic one that pushes dependent contacts apart; measured on generated box stacks (docs/
 * benchmarks.md, "PGS-SM's subspace by a factor"): at 0 or 1e-8, a 50-box stack took 851 outer iterations to
 * RES 1e-4, at 1e-6 six. */
#define LK_ENV_PROXIMAL 1e-6

typedef struct lk__env {
	int n;                /* rows in the system */
	int *order;           /* position -> index into the caller's idx */
	int *pos;             /* index into idx -> position */
	int *first;           /* per position: the first column of its envelope row */
	size_t *start;        /* per position: offset in val of the entry (p, first[p]) */
	double *val;          /* the envelope rows of A, then of L */
	double *y;            /* the solve's scratch, by position */
	unsigned char *dead;  /* per position: dependent row */
	size_t entries;       /* envelope entries, the diagonal included */
	double macs;          /* multiply-adds of assembly, factorisation and one solve */
	int ndead;
} lk__env;

/* Orders the rows idx[0..n) of the row-form problem p and measures their envelope. Returns 1 (and builds
 * nothing more) when assembling and factoring would take more than max_macs multiply-adds, 0 when e is ready
 * for lk__env_factor, -1 when the arena has no memory. Linear in n plus the rows per body. */
int lk__env_analyse(lk__env *e, lk__arena *a, const lk_problem *p, const int *idx, int n, double max_macs);
/* A body slot of lk__env_order's items as a dynamic body index, or -1 outside 0 .. nbodies - 1 (the static
 * world). */
static inline int lk__env_body(int body, int nbodies)
{
	return body >= 0 && body < nbodies ? body : -1;
}

/* The ordering and envelope under lk__env_analyse, for any n items each on two bodies: item k on the bodies
 * pair[2 k], pair[2 k + 1] (a slot outside 0 .. nbodies - 1 is the static world, which couples nothing).
 * order gets position -> item (reverse Cuthill-McKee per component, from a pseudo-peripheral item), pos item
 * -> position, first the first position of each position's envelope row (the first among the items of its
 * bodies). Scratch from the arena; 0, or -1 without memory. Linear in the items plus the items per body. */
int lk__env_order(lk__arena *a, int nbodies, int n, const int *pair, int *order, int *pos, int *first);
/* Assembles A_SS + diag(reg) (reg[k] belongs to idx[k]; NULL for none) and factors it in place. */
void lk__env_factor(lk__env *e, const lk_problem *p, const int *idx, const double *reg);
/* lk__env_factor in two halves, for a caller that adds entries of its own in between (lk__env_at): the
 * assembly of A_SS + diag(reg), then L L^T in place with the pivot rule of envelope.h at `dead_pivot` of the
 * diagonal (LK_ENV_DEAD_PIVOT where A_SS is the matrix; lower where the caller's terms make it definite). */
void lk__env_assemble(lk__env *e, const lk_problem *p, const int *idx, const double *reg);
void lk__env_factor_assembled(lk__env *e, double dead_pivot);
/* The envelope of a symmetric matrix given entry by entry (the matrix form), its n items ordered by reverse
 * Cuthill-McKee on the graph ptr/adj (item v's neighbours adj[ptr[v] .. ptr[v + 1]), both directions listed):
 * the caller writes the entries through lk__env_at into a zeroed e->val. Returns as lk__env_analyse does,
 * max_macs against the assembly, the factor and one solve. */
int lk__env_graph(lk__env *e, lk__arena *a, int n, const int *ptr, const int *adj, double max_macs);
/* The stored entry (k1, k2) = (k2, k1) of the lower envelope (k1, k2 indices into the caller's items), or NULL
 * where it lies outside the envelope. */
double *lk__env_at(const lk__env *e, int k1, int k2);
/* Solves (A_SS + R) x = b; b and x are indexed like idx and may be the same array. */
void lk__env_solve(const lk__env *e, const double *b, double *x);

#endif

/* A two-level correction between Gauss-Seidel sweeps (coarse.c): the faces of a contact problem (the rows
 * between two bodies) as rigid joints, one wrench of six unknowns per face. */
#ifndef LCPKIT_COARSE_H
#define LCPKIT_COARSE_H

#include "arena.h"
#include "envelope.h"
#include "faceblock.h"
#include "context.h"

typedef struct lk__coarse {
	int nfaces;         /* aggregates: the normal rows of one body pair and their friction rows */
	int nentries;       /* rows in the faces */
	int *rows;          /* per face: its normal rows, then its friction rows */
	int *face_start;    /* nfaces + 1 offsets into rows */
	int *face_normals;  /* per face: how many of its rows are normal rows */
	int *face_in;       /* per face: in the last correction */
	unsigned char *out; /* per entry of rows: left out of its face (truncated: a contact the welded faces
	                     * asked to pull, still open, and the friction rows on it) */
	unsigned char *pulled; /* per entry of rows: a normal row the last correction asked to pull */
	int *idx;           /* scratch: a face's entries that are not out */
	int nout;           /* normal rows out */
	int carried;        /* the entries left out by the last solve's kept level taken over (its first correction) */
	int nfriction;      /* friction rows in the problem (the work of their boxes) */
	double *rhs;        /* the coarse right-hand side, then the correction */
	int *gface;         /* per group of the factor (a face in the correction): its face */
	int *gpair;         /* per group: its two bodies (the factor's blocks, faceblock.h) */
	int *gsize;         /* per group: the coarse rows its face has at most */
	double *reg;        /* the factor's proximal term per coarse row */
	double *P;          /* per entry t of rows: the prolongation's columns, P[6 t + q] */
	int *face_modes;    /* per face: its columns in the last correction */
	double *dl;         /* per entry of rows: the change a correction makes */
	double *wold;       /* per entry of rows: w before it */
	int *changed;       /* the entries a correction changed */
	int rejected;       /* corrections not taken: too many rows clipped (misfit), or no descent direction */
	double last_work;   /* the work of the last correction (lk__count units) */
	lk__row *crows;     /* the coarse rows, six per face, records on the fine bodies */
	lk__arena *arena;   /* the problem's, for every array here and the factor (reset by the next solve) */
	lk__fblock fb;      /* the factor by face blocks, kept while the same faces are in */
	int prepared;       /* 1: basis, coarse rows and factor made for the faces in face_in */
	int too_costly;     /* the coarse factor would cost more than LK_COARSE_MAX_FACTOR sweeps: no corrections */
	int whole_checked;  /* the factor of every face, in contact or not, was found within that (prepare) */
	int unaffordable;   /* the budget left could not pay for the coarse rows and factor: none in this solve */
	struct lk__coarse_keep **keep; /* where the coarse level is kept for the problem's next solve, or NULL */
	lk__arena *keep_arena; /* the kept level's arrays and factor (with keep) */
} lk__coarse;

/* A coarse level kept from one solve of a problem to the next (coarse.c): a method that sets lk__coarse.keep
 * and keep_arena to the problem's (coarse_keep, coarse_arena; a plain struct the problem frees) has its basis
 * and factor made again only where the faces changed. */
typedef struct lk__coarse_keep lk__coarse_keep;

/* Finds the faces of p (row form). LK_OK, or LK_ERR_NO_MEMORY with k empty. */
lk_status lk__coarse_setup(lk__coarse *k, lk_problem *p);
/* One correction of c's iterate; counts its work; returns the largest change of lambda. */
double lk__coarse_correct(lk__coarse *k, lk__ctx *c);
void lk__coarse_free(lk__coarse *k);
/* The pivoted Cholesky factor of the Gram matrix of rows[idx[0..m)]'s Jacobians on one body (column `side`):
 * perm, and L's first r columns, r the rank it returns (coarse.c). Also auto's face warm start. */
int lk__span_factor(const lk__row *rows, const int *idx, int m, int side, int perm[6], double L[6][6]);
/* The work a correction is expected to cost (lk__count units): a method under a budget makes one only when
 * the work left pays for it. */
double lk__coarse_cost(const lk__coarse *k);
/* The same before the faces are found, from the rows they will hold. */
double lk__coarse_cost_of(int face_rows);
/* The same where the level kept in *keep may serve (a problem of the same size as the one it was made for). */
double lk__coarse_cost_kept(const lk__coarse_keep *keep, const lk_problem *p, int face_rows);

#endif

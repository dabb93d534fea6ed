/* Shared helpers of the unit tests: random problems with known structure and checks of the LCP conditions. */
#ifndef LCPKIT_TEST_UTIL_H
#define LCPKIT_TEST_UTIL_H

#include "lcpkit/lcpkit.h"
#include "rng.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

/* cmocka 1.1 compares only floats; this compares doubles: |a - b| <= eps, NaN never passes. */
#define assert_double_equal(a, b, eps) tu_assert_close((a), (b), (eps), __FILE__, __LINE__)
void tu_assert_close(double a, double b, double eps, const char *file, int line);

/* Uniform in [-1, 1), from lcpkit's generator (rng.h), so that a seed draws the same problem in every test. */
double tu_rng_sym(lk__rng *r);

/* A row-form problem: nbodies free bodies with random masses and inertias, nrows rows with random J between
 * random body pairs (or a body and the world) and random q in [-1, 1]. lo = 0, hi = inf on every row unless
 * friction is set, in which case every third row is a normal row followed by two friction rows (findex). */
lk_problem *tu_random_rows(int nbodies, int nrows, uint64_t seed, double mu);
/* A random dense symmetric positive definite LCP in matrix form: A = B B^T + shift I. */
lk_problem *tu_random_spd_matrix(int n, uint64_t seed, double shift);
/* Asserts that lambda solves the problem's boxed LCP to tol: bounds, and the sign of w at the bounds. */
void tu_assert_complementarity(lk_problem *p, const double *lambda, double tol);
/* max_i |a_i - b_i| */
double tu_max_diff(const double *a, const double *b, int n);
/* The median of v[0..n) (the mean of the middle two for even n); sorts v. */
double tu_median(double *v, int n);
/* The configuration of a solver spec; fails the test with the parser's message if it is not valid. */
lk_solver_config tu_spec(const char *spec);
/* A generated problem (lcpkit/generate.h) of `kind` ("boxstack", ...) with n bodies and friction mu, the
 * other parameters at their defaults; fails the test if it cannot be made. */
lk_problem *tu_generate(const char *kind, int n, double mu);
/* A copy of a row-form problem through the public API: its bodies in the order `from` gives (new body k is
 * body from[k]; NULL: as they are), its rows with their bodies renumbered to match, and their contact points
 * 0 ("unknown") if zero_points. With row_scale (NULL: none) row i is multiplied by row_scale[i]: its J and c by
 * s, its CFM by s^2, its own bounds divided by s, a friction row's mu by s_normal / s (the box |lambda_f| <=
 * mu lambda_n in the new unknowns lambda / s); A' = S A S and q' = S q, the same problem with each unknown in
 * its own unit. Validated. */
lk_problem *tu_copy_problem(const lk_problem *p, const int *from, int zero_points, const double *row_scale);
/* A copy of a row-form problem with its rows laid out in another order: new row k is p's row order[k], the friction
 * rows' normal rows renumbered to match, the bodies as they are. Validated. */
lk_problem *tu_permute_rows(const lk_problem *p, const int *order);
/* Path of a file in tests/data. */
const char *tu_data_path(const char *name);

/* merit=fc3d's evaluations behind Siconos's light error (monitor.c) on p: the solve under `spec` (merit=fc3d and a
 * tolerance tol, at most 200,000 sweeps) stops on the merit below tol, within a quarter (at least four sweeps) and a
 * sweep of where the same solve checked after every sweep (a history asks for it) stops, on the iterates of a solve
 * of as many sweeps under `plain` (a spec with one %d, the sweeps) without any check, to the bit. Returns the gated
 * solve's sweeps. */
int tu_assert_light_gate(lk_problem *p, const char *spec, const char *plain, double tol, const char *label);

#endif

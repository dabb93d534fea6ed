/* FCLIB (Debian libfclib-dev) local frictional contact problems to and from lcpkit problems. */
#ifndef LCPKIT_FCLIB_IO_H
#define LCPKIT_FCLIB_IO_H

#include "lcpkit/lcpkit.h"

/* Writes the contact rows of p as an FCLIB local problem (W, q, mu; 3D): every row must be a contact normal
 * (lo = 0, hi = inf) followed by its two friction rows (findex), the layout lcpkit's adapters and generators
 * produce; joint rows have no place in a local problem and are refused. At most max_rows rows. */
lk_status lk_fclib_export(lk_problem *p, int max_rows, const char *path, char *err, size_t err_size);

/* Reads an FCLIB local problem into the matrix form: per contact a normal row (lo = 0, hi = inf) and its
 * tangent rows as friction rows (findex to the normal, mu of the contact). This is lcpkit's boxed-friction
 * approximation of the Coulomb cone (a box, not a disc, in the tangent plane), stated as such. */
lk_status lk_fclib_import(const char *path, lk_problem **out, char *err, size_t err_size);

#endif

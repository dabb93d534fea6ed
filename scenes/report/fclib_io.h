/* FCLIB (Debian libfclib-dev) local frictional contact problems to and from lcpkit problems. */
#ifndef LCPKIT_FCLIB_IO_H
#define LCPKIT_FCLIB_IO_H

#include "lcpkit/lcpkit.h"

/* Writes the contact rows of p as an FCLIB local problem (W, q, mu; 3D): every row must be a contact normal
 * (lo = 0, hi = inf) followed by its two friction rows (findex), the layout lcpkit's adapters and generators
 * produce; joint rows have no place in a local problem and are refused. At most max_rows rows. */
lk_status lk_fclib_export(lk_problem *p, int max_rows, const char *path, char *err, size_t err_size);

/* Reads an FCLIB problem into the matrix form: per contact a normal row (lo = 0, hi = inf) and its tangent rows
 * as friction rows (findex to the normal, mu of the contact). This is lcpkit's boxed-friction approximation of
 * the Coulomb cone (a box, not a disc, in the tangent plane), stated as such; a cone solve (pgs:friction=cone)
 * reads the rows as the cone. A local problem gives its W and q; a global one (M, H, f, w) the local problem of
 * its reactions, W = H^T M^-1 H and q = H^T M^-1 f + w. Matrices in each of FCLIB's storages as the public
 * files and Siconos write them (a triplet's i the row, p the column). Every size the file states is checked
 * against the others before anything is read: a file that disagrees with itself is refused (LK_ERR_PARSE)
 * with a message naming what, as is one with a non-finite entry or an index outside its matrix.
 * On failure *out is NULL and err says why; on LK_OK err holds "" or a note of what the reader made of the file
 * where it was not plain (an M stored as one triangle, or not symmetric; docs/regress.md), for the caller to
 * show. */
lk_status lk_fclib_import(const char *path, lk_problem **out, char *err, size_t err_size);

/* Whether path is an HDF5 file (FCLIB's container) */
int lk_fclib_is_hdf5(const char *path);

/* The matrix form of a local problem given by W's entries (count of them, at (row, col); duplicates add up),
 * q (n) and each contact's mu (n / d contacts of d rows: a normal row and its d - 1 friction rows), as
 * lk_fclib_import makes it from a file: for problems read by other readers (Siconos's .dat files). An index
 * outside W, a value that is not finite or a mu below 0 is refused (LK_ERR_PARSE) with what in err. */
lk_status lk_fclib_local_from_entries(int n, int d, int count, const int *row, const int *col, const double *val,
                                      const double *q, const double *contact_mu, lk_problem **out, char *err,
                                      size_t err_size);

#endif

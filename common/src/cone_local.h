/* The local problem of one contact under Coulomb's cone, solved exactly: the step of nonsmooth block Gauss-Seidel
 * (Jean 1999, "The non-smooth contact dynamics method", sec. 4; Siconos's fc3d_nsgs) that the cone sweep takes
 * per contact (sweep.c). */
#ifndef LCPKIT_CONE_LOCAL_H
#define LCPKIT_CONE_LOCAL_H

/* A contact's 3 x 3 block of A, row by row in the order (normal, first friction row, second friction row). It
 * need not be symmetric: a matrix read from a file may not be to its last digits. */
typedef struct lk__block3 {
	double m[3][3];
} lk__block3;

/* inv = W^-1 by W's LU factors without pivoting; 0 where a pivot is not positive, a small fraction of its diagonal
 * entry (W singular, or not near a positive definite matrix), and then the local solve does not apply. */
int lk__block3_invert(const lk__block3 *W, lk__block3 *inv);

/* Solves the local problem of a contact whose reactions are r (in K) and velocities u = W r + b: the r' with
 * u' = W r' + b, r' in K = {|r_T| <= mu r_n}, u_hat' = (u'_n + mu |u'_T|, u'_T) in K's dual, r' . u_hat' = 0
 * (Coulomb's law in De Saxce's form), with inv = W^-1 (lk__block3_invert): take-off (r' = 0 where b_n >= 0),
 * sticking (r' = r - W^-1 u inside K) or sliding (on K's rim, u'_n = 0, r'_T = -mu r'_n u'_T / |u'_T|: Newton's
 * method on the direction of slip). Replaces r by r' and returns 1; returns 0 with r untouched where the sliding
 * iteration does not settle on a root that obeys the law (the caller then takes its inexact step). */
int lk__cone_local_solve(const lk__block3 *W, const lk__block3 *inv, const double u[3], double mu, double r[3]);

#endif

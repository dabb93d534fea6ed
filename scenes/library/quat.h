/* Unit quaternions (w, x, y, z) shared by the scene descriptions and the engine backends. */
#ifndef LCPKIT_SCENES_QUAT_H
#define LCPKIT_SCENES_QUAT_H

#include <string.h>

/* The Hamilton product a b: the rotation b, then a. out may alias a or b. */
static inline void lk_quat_mul(const double a[4], const double b[4], double out[4])
{
	double r[4] = {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
	               a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
	               a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
	               a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
	memcpy(out, r, sizeof r);
}

#endif

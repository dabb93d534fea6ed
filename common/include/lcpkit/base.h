/* lcpkit: base definitions shared by every public header. */
#ifndef LCPKIT_BASE_H
#define LCPKIT_BASE_H

#include <stddef.h>
#include <stdint.h>

#if defined(LCPKIT_STATIC)
#define LK_API
#elif defined(LCPKIT_BUILDING)
#define LK_API __attribute__((visibility("default")))
#else
#define LK_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define LK_VERSION_MAJOR 0
#define LK_VERSION_MINOR 1
#define LK_VERSION_PATCH 0

/* Every fallible function returns one of these; the object that failed keeps a message. */
typedef enum lk_status {
	LK_OK = 0,
	LK_ERR_INVALID_ARGUMENT, /* a NULL pointer, a negative count, an unknown enum value */
	LK_ERR_NONFINITE,        /* a NaN or an Inf where a finite number is required */
	LK_ERR_OUT_OF_RANGE,     /* an index (body, row, column) outside its array */
	LK_ERR_BOUNDS,           /* lo > hi, a negative mu */
	LK_ERR_FINDEX,           /* a friction index pointing at itself, out of range, or at a friction row */
	LK_ERR_MASS,             /* a negative inverse mass, a non-symmetric or indefinite inverse inertia */
	LK_ERR_NO_MEMORY,
	LK_ERR_FORM,             /* the operation needs the other problem form */
	LK_ERR_STATE,            /* called in the wrong order (e.g. a row before its bodies) */
	LK_ERR_IO,               /* a file could not be opened, read or written */
	LK_ERR_PARSE,            /* a file or a string is malformed; the message says where */
	LK_ERR_LIMIT,            /* a size limit was exceeded */
	LK_ERR_UNSUPPORTED       /* the method does not handle this kind of problem */
} lk_status;

/* A short constant name for a status ("invalid argument", ...). Never NULL. */
LK_API const char *lk_status_string(lk_status status);

#ifdef __cplusplus
}
#endif

#endif

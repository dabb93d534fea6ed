/* LK_ASSERT: the invariants the kernels rely on (a row's two body slots differ, indices in range, ...),
 * checked in debug builds and compiled out of release builds (NDEBUG), so that a hot loop pays nothing. Not
 * for input validation: bad input is an error code with a message (lk_problem_add_row and friends). */
#ifndef LCPKIT_DEBUG_H
#define LCPKIT_DEBUG_H

#ifdef NDEBUG
#define LK_ASSERT(cond) ((void)0)
#else
#include <assert.h>
#define LK_ASSERT(cond) assert(cond)
#endif

#endif

/* Helpers of the fuzz targets (fuzz_util.c). */
#ifndef LCPKIT_FUZZ_UTIL_H
#define LCPKIT_FUZZ_UTIL_H

#include "fuzz.h"
#include "lcpkit/lcpkit.h"

/* FNV-1a of the input: picks a solver deterministically from the input. */
uint64_t lk_fuzz_hash(const uint8_t *data, size_t size);
/* Solves p briefly with the method and order the selector picks and checks the promises of lk_solve. */
void lk_fuzz_solve_check(lk_problem *p, uint64_t selector);

#endif

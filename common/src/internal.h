/* Every private header of the core, for the tests and tools that look inside it. The core's own files
 * include only the headers they use:
 *   arena.h    the per-solve arena            problem.h  row record and problem storage (problem*.c)
 *   kernel.h   row kernels and sweep cursor   context.h  solve context and the monitor (monitor.c)
 *   sweep.h    the sweep layer (sweep.c)      ordering.h sweep orders (ordering.c)
 *   krylov.h   CG and GMRES (krylov.c)        methods.h  the methods' entry points
 *   envelope.h the envelope Cholesky of a row subset (envelope.c)
 *   clock.h    the one clock                  rng.h      the one random number generator
 *   debug.h    LK_ASSERT */
#ifndef LCPKIT_INTERNAL_H
#define LCPKIT_INTERNAL_H

#include "arena.h"
#include "clock.h"
#include "context.h"
#include "debug.h"
#include "envelope.h"
#include "kernel.h"
#include "krylov.h"
#include "method_table.h"
#include "methods.h"
#include "ordering.h"
#include "problem.h"
#include "rng.h"
#include "sweep.h"

#endif

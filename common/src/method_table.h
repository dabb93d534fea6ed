/* The table of methods (method_table.c), read by the driver (solve.c): each lk_method's entry point and the
 * traits (context.h, lk__method_desc) the driver and the monitor decide by. */
#ifndef LCPKIT_METHOD_TABLE_H
#define LCPKIT_METHOD_TABLE_H

#include "context.h"

/* The method's row, or NULL for a value with none. */
const lk__method_desc *lk__method_desc_of(lk_method m);

/* lk_solve with the method `desc` in place of cfg->method's row (cfg->method still names it in the statistics):
 * the driver every method runs through, open to a method that is not in the table (tests). */
lk_status lk__solve_with(lk_problem *p, const lk_solver_config *cfg, const lk__method_desc *desc, lk_stats *stats,
                         lk_history *history);

#endif

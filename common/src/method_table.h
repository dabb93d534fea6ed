/* The table of methods (method_table.c), read by the driver (solve.c): each lk_method's entry point and the
 * traits (context.h, lk__method_desc) the driver and the monitor decide by. */
#ifndef LCPKIT_METHOD_TABLE_H
#define LCPKIT_METHOD_TABLE_H

#include "context.h"

#include <stddef.h>

/* The most methods lk__method_add takes: their values LK_METHOD_COUNT .. LK_METHOD_COUNT + 3 share the keys every
 * method takes (config.c's M_ALL) */
#define LK__METHODS_ADDED_MAX 4

/* The method's row, or NULL for a value with none. */
const lk__method_desc *lk__method_desc_of(lk_method m);
/* The methods with a row: the library's LK_METHOD_COUNT and those added. */
int lk__method_count(void);
/* The value of the method named name[0..len), or -1. */
int lk__method_of_name(const char *name, size_t len);
/* Adds a row to the table at run time (a method outside the library: tests, experiments): its value, from
 * LK_METHOD_COUNT on, which lk_solve, lk_config_parse (by d->name) and lk_method_name then take as a library
 * method's; d->method is ignored. -1 where d has no entry point or no name, the name is taken or holds ':', ',',
 * '=' or a space, or LK__METHODS_ADDED_MAX are added. Not thread-safe: add before solving. */
lk_method lk__method_add(const lk__method_desc *d);

/* lk_solve with the method `desc` in place of cfg->method's row (cfg->method still names it in the statistics):
 * the driver every method runs through, open to a method that is not in the table (tests). */
lk_status lk__solve_with(lk_problem *p, const lk_solver_config *cfg, const lk__method_desc *desc, lk_stats *stats,
                         lk_history *history);

#endif

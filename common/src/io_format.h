/* Problem files (docs/problem-format.md): what the reader (io_lex.c, io_read.c) and the writer (io_write.c)
 * share, in io_format.c. */
#ifndef LCPKIT_IO_FORMAT_H
#define LCPKIT_IO_FORMAT_H

#include "lcpkit/lcpkit.h"

#include <locale.h>
#include <stddef.h>

/* The first word of a problem file, before the format's version. */
#define LK__IO_MAGIC "lcpkit-problem"

/* The words of the row kinds (lk_row_kind) in a file. */
extern const char *const lk__io_kind_names[LK_ROW_KIND_COUNT];

/* A message into the caller's buffer err[size] (none where err is NULL or size 0). */
void lk__io_set_err(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Numbers are written and read in the "C" numeric locale whatever the application chose, so that a file
 * written in one locale reads back bit for bit in another. uselocale is per thread. */
typedef struct lk__io_c_numeric {
	locale_t c, old;
} lk__io_c_numeric;
void lk__io_c_numeric_enter(lk__io_c_numeric *l);
void lk__io_c_numeric_leave(lk__io_c_numeric *l);

/* Whether c may stand in the free text of a file (the source line). */
int lk__io_text_byte_ok(unsigned char c);

/* malloc of count elements of elem bytes, at least one. */
void *lk__io_alloc_array(size_t count, size_t elem);

#endif

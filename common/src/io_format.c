/* Problem files (docs/problem-format.md): what the reader and the writer share (io_format.h): the row kinds'
 * words, messages into the caller's buffer, numbers in the "C" locale, the bytes free text may hold. */
#include "io_format.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *const lk__io_kind_names[LK_ROW_KIND_COUNT] = {"joint", "normal", "friction", "limit", "motor"};

void lk__io_set_err(char *err, size_t size, const char *fmt, ...)
{
	if (!err || size == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
}

void lk__io_c_numeric_enter(lk__io_c_numeric *l)
{
	l->c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	l->old = l->c ? uselocale(l->c) : (locale_t)0;
}

void lk__io_c_numeric_leave(lk__io_c_numeric *l)
{
	if (l->c) {
		uselocale(l->old);
		freelocale(l->c);
	}
}

/* Bytes allowed in the free text of a source line: tab and printable ASCII; bytes >= 0x80 pass (UTF-8). */
int lk__io_text_byte_ok(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

void *lk__io_alloc_array(size_t count, size_t elem)
{
	return malloc((count ? count : 1) * elem);
}

/* Problem files (docs/problem-format.md): the reader's lowest layer (io_lex.h). It never reads outside the
 * buffer, which need not end in a newline or a NUL and may contain NUL bytes; it takes a line only of the
 * bytes the format allows and a number only as the format writes it; every refusal is a message at the
 * line. */
#include "io_lex.h"

#include "io_format.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lk_status lk__io_rfail(lk__io_reader *rd, lk_status st, const char *fmt, ...)
{
	if (!rd->err || rd->err_size == 0)
		return st;
	int n = snprintf(rd->err, rd->err_size, "%s:%lld: ", rd->name, rd->line);
	if (n >= 0 && (size_t)n < rd->err_size) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(rd->err + n, rd->err_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return st;
}

/* Prefix of messages about a field: "row 3: hi" or "body 0: u[2]". */
static void field_label(const lk__io_reader *rd, const char *field, int comp, char *out, size_t size)
{
	if (rd->item_index >= 0 && comp >= 0)
		snprintf(out, size, "%s %lld: %s[%d]", rd->item, rd->item_index, field, comp);
	else if (rd->item_index >= 0)
		snprintf(out, size, "%s %lld: %s", rd->item, rd->item_index, field);
	else
		snprintf(out, size, "%s", field);
}

/* The line number where the data end: the last line, or one past it when the data end in a newline. */
long long lk__io_eof_line(const lk__io_reader *rd)
{
	return rd->size > 0 && rd->data[rd->size - 1] == '\n' ? rd->line + 1 : (rd->line > 0 ? rd->line : 1);
}

/* Reads the next line into buf. Returns 1, 0 at the end of the data, or -1 after an error. */
int lk__io_read_line(lk__io_reader *rd, lk_status *st)
{
	if (rd->pos >= rd->size)
		return 0;
	const char *s = rd->data + rd->pos;
	size_t avail = rd->size - rd->pos;
	const char *nl = memchr(s, '\n', avail);
	size_t len = nl ? (size_t)(nl - s) : avail;
	rd->line++;
	rd->pos += len + (nl ? 1 : 0);
	if (len > 0 && s[len - 1] == '\r')
		len--; /* CRLF line ends */
	if (len > LK_IO_MAX_LINE) {
		*st = lk__io_rfail(rd, LK_ERR_LIMIT, "line is longer than %d bytes", LK_IO_MAX_LINE);
		return -1;
	}
	for (size_t i = 0; i < len; ++i) {
		unsigned char c = (unsigned char)s[i];
		if (c == 0) {
			*st = lk__io_rfail(rd, LK_ERR_PARSE, "NUL byte in column %zu", i + 1);
			return -1;
		}
		if (!lk__io_text_byte_ok(c)) {
			*st = lk__io_rfail(rd, LK_ERR_PARSE, "control character 0x%02x in column %zu", c, i + 1);
			return -1;
		}
	}
	memcpy(rd->buf, s, len);
	rd->buf[len] = '\0';
	rd->len = len;
	return 1;
}

void lk__io_tokenize(lk__io_reader *rd)
{
	char *s = rd->buf;
	rd->ntok = 0;
	for (;;) {
		while (*s == ' ' || *s == '\t')
			++s;
		if (!*s)
			break;
		if (rd->ntok == LK__IO_MAX_TOKENS + 1)
			break;
		rd->tok[rd->ntok++] = s;
		while (*s && *s != ' ' && *s != '\t')
			++s;
		if (*s)
			*s++ = '\0';
	}
}

/* Next line that is neither blank nor a comment, tokenized. 1, 0 at the end of the data, -1 on error. */
int lk__io_next_content(lk__io_reader *rd, lk_status *st)
{
	for (;;) {
		int r = lk__io_read_line(rd, st);
		if (r <= 0)
			return r;
		const char *s = rd->buf;
		while (*s == ' ' || *s == '\t')
			++s;
		if (*s == '\0' || *s == '#')
			continue;
		return 1;
	}
}

lk_status lk__io_expect_fields(lk__io_reader *rd, int n)
{
	char what[64];
	if (rd->item_index >= 0)
		snprintf(what, sizeof what, "%s %lld", rd->item, rd->item_index);
	else
		snprintf(what, sizeof what, "%s", rd->item);
	if (rd->ntok < n)
		return lk__io_rfail(rd, LK_ERR_PARSE, "%s: expected %d fields, found %d", what, n, rd->ntok);
	if (rd->ntok > n)
		return lk__io_rfail(rd, LK_ERR_PARSE, "%s: unexpected field '%.40s' after %d fields", what, rd->tok[n], n);
	return LK_OK;
}

int lk__io_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* [+-] digits [. digits] [(e|E) [+-] digits] or [+-] . digits [...]: what %.17g writes and people type. */
int lk__io_is_decimal(const char *s)
{
	if (*s == '+' || *s == '-')
		++s;
	int mant = 0;
	while (lk__io_is_digit(*s)) {
		++s;
		mant = 1;
	}
	if (*s == '.') {
		++s;
		while (lk__io_is_digit(*s)) {
			++s;
			mant = 1;
		}
	}
	if (!mant)
		return 0;
	if (*s == 'e' || *s == 'E') {
		++s;
		if (*s == '+' || *s == '-')
			++s;
		if (!lk__io_is_digit(*s))
			return 0;
		while (lk__io_is_digit(*s))
			++s;
	}
	return *s == '\0';
}

static int ieq(const char *a, const char *b)
{
	for (; *a && *b; ++a, ++b) {
		char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
		if (x != *b)
			return 0;
	}
	return *a == *b;
}

/* A double from token i. Infinity ("inf", "-inf", any case, or "infinity") only where allow_inf. */
lk_status lk__io_get_double(lk__io_reader *rd, int i, const char *field, int comp, int allow_inf, double *out)
{
	const char *t = rd->tok[i];
	const char *u = t + (*t == '+' || *t == '-');
	char what[80];
	if (ieq(u, "inf") || ieq(u, "infinity")) {
		if (!allow_inf) {
			field_label(rd, field, comp, what, sizeof what);
			return lk__io_rfail(rd, LK_ERR_NONFINITE, "%s: '%.40s' is not finite (only lo and hi may be inf)",
			                    what, t);
		}
		*out = *t == '-' ? -INFINITY : INFINITY;
		return LK_OK;
	}
	if (ieq(u, "nan")) {
		field_label(rd, field, comp, what, sizeof what);
		return lk__io_rfail(rd, LK_ERR_NONFINITE, "%s: NaN is not allowed", what);
	}
	if (!lk__io_is_decimal(t)) {
		field_label(rd, field, comp, what, sizeof what);
		return lk__io_rfail(rd, LK_ERR_PARSE, "%s: expected a number, found '%.40s'", what, t);
	}
	char *end;
	errno = 0;
	double v = strtod(t, &end);
	if (*end != '\0') {
		field_label(rd, field, comp, what, sizeof what);
		return lk__io_rfail(rd, LK_ERR_PARSE, "%s: cannot read the number '%.40s'", what, t);
	}
	/* an underflow to a subnormal or zero is fine (%.17g writes subnormals); an overflow is not */
	if (errno == ERANGE && isinf(v)) {
		field_label(rd, field, comp, what, sizeof what);
		return lk__io_rfail(rd, LK_ERR_PARSE, "%s: '%.40s' is out of the range of a double", what, t);
	}
	*out = v;
	return LK_OK;
}

/* An integer from token i: [+-] digits. *overflow is set (and *out saturated) beyond int64. */
int lk__io_parse_int(const char *t, int64_t *out, int *overflow)
{
	int neg = *t == '-';
	if (*t == '+' || *t == '-')
		++t;
	if (!lk__io_is_digit(*t))
		return 0;
	uint64_t v = 0;
	*overflow = 0;
	for (; lk__io_is_digit(*t); ++t) {
		unsigned d = (unsigned)(*t - '0');
		if (v > (UINT64_MAX - d) / 10)
			*overflow = 1;
		else
			v = v * 10 + d;
	}
	if (*t)
		return 0;
	if (v > (uint64_t)INT64_MAX)
		*overflow = 1;
	if (*overflow)
		*out = neg ? INT64_MIN : INT64_MAX;
	else
		*out = neg ? -(int64_t)v : (int64_t)v;
	return 1;
}

/* An index that must fit an int; the range against the problem is checked by the caller. */
lk_status lk__io_get_int(lk__io_reader *rd, int i, const char *field, int *out)
{
	int64_t v = 0;
	int of = 0;
	char what[80];
	if (!lk__io_parse_int(rd->tok[i], &v, &of)) {
		field_label(rd, field, -1, what, sizeof what);
		return lk__io_rfail(rd, LK_ERR_PARSE, "%s: expected an integer, found '%.40s'", what, rd->tok[i]);
	}
	if (of || v < INT_MIN || v > INT_MAX) {
		field_label(rd, field, -1, what, sizeof what);
		return lk__io_rfail(rd, LK_ERR_OUT_OF_RANGE, "%s: %.40s is out of range", what, rd->tok[i]);
	}
	*out = (int)v;
	return LK_OK;
}

lk_status lk__io_get_u64(lk__io_reader *rd, int i, const char *field, uint64_t *out)
{
	const char *t = rd->tok[i];
	char what[80];
	uint64_t v = 0;
	if (!lk__io_is_digit(*t))
		goto bad;
	for (; lk__io_is_digit(*t); ++t) {
		unsigned d = (unsigned)(*t - '0');
		if (v > (UINT64_MAX - d) / 10) {
			field_label(rd, field, -1, what, sizeof what);
			return lk__io_rfail(rd, LK_ERR_PARSE, "%s: %.40s does not fit 64 bits", what, rd->tok[i]);
		}
		v = v * 10 + d;
	}
	if (*t)
		goto bad;
	*out = v;
	return LK_OK;
bad:
	field_label(rd, field, -1, what, sizeof what);
	return lk__io_rfail(rd, LK_ERR_PARSE, "%s: expected an unsigned integer, found '%.40s'", what, rd->tok[i]);
}

/* The count of a section header "name N": checked against the limit and against the bytes left (every
 * data line has at least `fields` fields of one byte, each followed by one separator or the newline), so
 * that nothing is ever allocated for lines that cannot be there. */
lk_status lk__io_get_count(lk__io_reader *rd, const char *section, int64_t limit, int fields, int64_t *out)
{
	rd->item = section;
	rd->item_index = -1;
	lk_status st = lk__io_expect_fields(rd, 2);
	if (st != LK_OK)
		return st;
	int64_t v = 0;
	int of = 0;
	if (!lk__io_parse_int(rd->tok[1], &v, &of))
		return lk__io_rfail(rd, LK_ERR_PARSE, "%s: expected a count, found '%.40s'", section, rd->tok[1]);
	if (v < 0)
		return lk__io_rfail(rd, LK_ERR_PARSE, "%s: negative count %.40s", section, rd->tok[1]);
	if (of || v > limit)
		return lk__io_rfail(rd, LK_ERR_LIMIT, "%s: count %.40s exceeds the limit %lld", section, rd->tok[1],
		                    (long long)limit);
	uint64_t left = (uint64_t)(rd->size - rd->pos);
	if ((uint64_t)v > (left + 1) / (2 * (uint64_t)fields))
		return lk__io_rfail(rd, LK_ERR_PARSE,
		                    "%s: %lld lines declared but only %llu bytes follow (truncated file?)", section,
		                    (long long)v, (unsigned long long)left);
	*out = v;
	return LK_OK;
}

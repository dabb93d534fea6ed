/* Problem files (docs/problem-format.md): the writer, the strict reader and the dense export.
 *
 * The reader treats its input as hostile: it never trusts a count before checking it against the limits
 * and against the bytes that are left, never reads outside the buffer (which need not end in a newline or
 * a NUL and may contain NUL bytes), and builds the problem through the public validating functions so that
 * a file can hold nothing a program could not have built. */
#include "problem.h"
#include "kernel.h"
#include "lcpkit/io.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC        "lcpkit-problem"
#define MAX_TOKENS   32
#define BODY_FIELDS  19 /* index u[6] inv_mass[3] inv_inertia[9] */
#define ROW_FIELDS   26 /* index kind body0 body1 id findex mu lo hi c s J0[6] J1[6] point[3] */
#define MROW_FIELDS  6  /* index q lo hi mu findex */
#define ENTRY_FIELDS 3  /* row column value */

static const char *const kind_names[LK_ROW_KIND_COUNT] = {"joint", "normal", "friction", "limit", "motor"};

/* ------------------------------------------------------------------------------------- small helpers */

static void set_err(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t size, const char *fmt, ...)
{
	if (!err || size == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
}

/* Numbers are written and read in the "C" numeric locale whatever the application chose, so that a file
 * written in one locale reads back bit for bit in another. uselocale is per thread. */
typedef struct c_numeric {
	locale_t c, old;
} c_numeric;

static void c_numeric_enter(c_numeric *l)
{
	l->c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	l->old = l->c ? uselocale(l->c) : (locale_t)0;
}

static void c_numeric_leave(c_numeric *l)
{
	if (l->c) {
		uselocale(l->old);
		freelocale(l->c);
	}
}

lk_io_limits lk_default_io_limits(void)
{
	lk_io_limits l;
	l.max_rows = 1 << 22;
	l.max_bodies = 1 << 22;
	l.max_nnz = (int64_t)1 << 27;
	l.max_bytes = (int64_t)1 << 31;
	return l;
}

void lk_problem_extra_free(lk_problem_extra *extra)
{
	if (!extra)
		return;
	free(extra->solution);
	memset(extra, 0, sizeof *extra);
}

/* Bytes allowed in the free text of a source line: tab and printable ASCII; bytes >= 0x80 pass (UTF-8). */
static int text_byte_ok(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* --------------------------------------------------------------------------------------------- reader */

enum section {
	SEC_SOURCE = 0,
	SEC_H,
	SEC_FORM,
	SEC_BODIES,
	SEC_ROWS,
	SEC_ENTRIES,
	SEC_LAMBDA,
	SEC_SOLUTION,
	SEC_END,
	SEC_COUNT
};

/* In the order a file must have them. */
static const char *const sec_names[SEC_COUNT] = {"source",  "h",      "form",     "bodies", "rows",
                                                 "entries", "lambda", "solution", "end"};

typedef struct reader {
	const char *data;
	size_t size, pos;
	const char *name;
	long long line; /* number of the current line, 1-based */
	char buf[LK_IO_MAX_LINE + 1];
	size_t len;
	char *tok[MAX_TOKENS + 1];
	int ntok;         /* MAX_TOKENS + 1 means "more than MAX_TOKENS" */
	const char *item; /* what the current line describes ("body", "row", ...), for messages */
	long long item_index;
	char *err;
	size_t err_size;

	lk_io_limits lim;
	lk_problem *p;
	int form; /* -1 until the form section */
	long long seen[SEC_COUNT];
	int last; /* the last section seen, -1 before the first */
	int nbodies, nrows;
	int64_t nnz;
	long long *row_line;      /* line of each row, for checks that need all rows */
	double *q, *lo, *hi, *mu; /* matrix form, until set_matrix */
	int *findex;
	int *row_ptr, *col, *mark;
	double *val;
	double *lambda, *solution;
	int has_solution;
	double h;
	char source[sizeof(((lk_problem_extra *)0)->source)];
} reader;

static lk_status rfail(reader *rd, lk_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static lk_status rfail(reader *rd, lk_status st, const char *fmt, ...)
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
static void field_label(const reader *rd, const char *field, int comp, char *out, size_t size)
{
	if (rd->item_index >= 0 && comp >= 0)
		snprintf(out, size, "%s %lld: %s[%d]", rd->item, rd->item_index, field, comp);
	else if (rd->item_index >= 0)
		snprintf(out, size, "%s %lld: %s", rd->item, rd->item_index, field);
	else
		snprintf(out, size, "%s", field);
}

/* The line number where the data end: the last line, or one past it when the data end in a newline. */
static long long eof_line(const reader *rd)
{
	return rd->size > 0 && rd->data[rd->size - 1] == '\n' ? rd->line + 1 : (rd->line > 0 ? rd->line : 1);
}

/* Reads the next line into buf. Returns 1, 0 at the end of the data, or -1 after an error. */
static int read_line(reader *rd, lk_status *st)
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
		*st = rfail(rd, LK_ERR_LIMIT, "line is longer than %d bytes", LK_IO_MAX_LINE);
		return -1;
	}
	for (size_t i = 0; i < len; ++i) {
		unsigned char c = (unsigned char)s[i];
		if (c == 0) {
			*st = rfail(rd, LK_ERR_PARSE, "NUL byte in column %zu", i + 1);
			return -1;
		}
		if (!text_byte_ok(c)) {
			*st = rfail(rd, LK_ERR_PARSE, "control character 0x%02x in column %zu", c, i + 1);
			return -1;
		}
	}
	memcpy(rd->buf, s, len);
	rd->buf[len] = '\0';
	rd->len = len;
	return 1;
}

static void tokenize(reader *rd)
{
	char *s = rd->buf;
	rd->ntok = 0;
	for (;;) {
		while (*s == ' ' || *s == '\t')
			++s;
		if (!*s)
			break;
		if (rd->ntok == MAX_TOKENS + 1)
			break;
		rd->tok[rd->ntok++] = s;
		while (*s && *s != ' ' && *s != '\t')
			++s;
		if (*s)
			*s++ = '\0';
	}
}

/* Next line that is neither blank nor a comment, tokenized. 1, 0 at the end of the data, -1 on error. */
static int next_content(reader *rd, lk_status *st)
{
	for (;;) {
		int r = read_line(rd, st);
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

static int section_of(const char *word)
{
	for (int i = 0; i < SEC_COUNT; ++i)
		if (!strcmp(word, sec_names[i]))
			return i;
	return -1;
}

/* Next data line of a section that declared `count` lines, `done` of them read so far. */
static lk_status next_data(reader *rd, const char *section, long long count, long long done)
{
	lk_status st = LK_OK;
	int r = next_content(rd, &st);
	if (r < 0)
		return st;
	if (r == 0) {
		rd->line = eof_line(rd);
		return rfail(rd, LK_ERR_PARSE, "unexpected end of file: section '%s' declares %lld lines, found %lld",
		             section, count, done);
	}
	tokenize(rd);
	if (section_of(rd->tok[0]) >= 0)
		return rfail(rd, LK_ERR_PARSE, "section '%s' declares %lld lines, found %lld before '%s'", section,
		             count, done, rd->tok[0]);
	return LK_OK;
}

static lk_status expect_fields(reader *rd, int n)
{
	char what[64];
	if (rd->item_index >= 0)
		snprintf(what, sizeof what, "%s %lld", rd->item, rd->item_index);
	else
		snprintf(what, sizeof what, "%s", rd->item);
	if (rd->ntok < n)
		return rfail(rd, LK_ERR_PARSE, "%s: expected %d fields, found %d", what, n, rd->ntok);
	if (rd->ntok > n)
		return rfail(rd, LK_ERR_PARSE, "%s: unexpected field '%.40s' after %d fields", what, rd->tok[n], n);
	return LK_OK;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* [+-] digits [. digits] [(e|E) [+-] digits] or [+-] . digits [...]: what %.17g writes and people type. */
static int is_decimal(const char *s)
{
	if (*s == '+' || *s == '-')
		++s;
	int mant = 0;
	while (is_digit(*s)) {
		++s;
		mant = 1;
	}
	if (*s == '.') {
		++s;
		while (is_digit(*s)) {
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
		if (!is_digit(*s))
			return 0;
		while (is_digit(*s))
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
static lk_status get_double(reader *rd, int i, const char *field, int comp, int allow_inf, double *out)
{
	const char *t = rd->tok[i];
	const char *u = t + (*t == '+' || *t == '-');
	char what[80];
	if (ieq(u, "inf") || ieq(u, "infinity")) {
		if (!allow_inf) {
			field_label(rd, field, comp, what, sizeof what);
			return rfail(rd, LK_ERR_NONFINITE, "%s: '%.40s' is not finite (only lo and hi may be inf)",
			             what, t);
		}
		*out = *t == '-' ? -INFINITY : INFINITY;
		return LK_OK;
	}
	if (ieq(u, "nan")) {
		field_label(rd, field, comp, what, sizeof what);
		return rfail(rd, LK_ERR_NONFINITE, "%s: NaN is not allowed", what);
	}
	if (!is_decimal(t)) {
		field_label(rd, field, comp, what, sizeof what);
		return rfail(rd, LK_ERR_PARSE, "%s: expected a number, found '%.40s'", what, t);
	}
	char *end;
	errno = 0;
	double v = strtod(t, &end);
	if (*end != '\0') {
		field_label(rd, field, comp, what, sizeof what);
		return rfail(rd, LK_ERR_PARSE, "%s: cannot read the number '%.40s'", what, t);
	}
	/* an underflow to a subnormal or zero is fine (%.17g writes subnormals); an overflow is not */
	if (errno == ERANGE && isinf(v)) {
		field_label(rd, field, comp, what, sizeof what);
		return rfail(rd, LK_ERR_PARSE, "%s: '%.40s' is out of the range of a double", what, t);
	}
	*out = v;
	return LK_OK;
}

/* An integer from token i: [+-] digits. *overflow is set (and *out saturated) beyond int64. */
static int parse_int(const char *t, int64_t *out, int *overflow)
{
	int neg = *t == '-';
	if (*t == '+' || *t == '-')
		++t;
	if (!is_digit(*t))
		return 0;
	uint64_t v = 0;
	*overflow = 0;
	for (; is_digit(*t); ++t) {
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
static lk_status get_int(reader *rd, int i, const char *field, int *out)
{
	int64_t v = 0;
	int of = 0;
	char what[80];
	if (!parse_int(rd->tok[i], &v, &of)) {
		field_label(rd, field, -1, what, sizeof what);
		return rfail(rd, LK_ERR_PARSE, "%s: expected an integer, found '%.40s'", what, rd->tok[i]);
	}
	if (of || v < INT_MIN || v > INT_MAX) {
		field_label(rd, field, -1, what, sizeof what);
		return rfail(rd, LK_ERR_OUT_OF_RANGE, "%s: %.40s is out of range", what, rd->tok[i]);
	}
	*out = (int)v;
	return LK_OK;
}

static lk_status get_u64(reader *rd, int i, const char *field, uint64_t *out)
{
	const char *t = rd->tok[i];
	char what[80];
	uint64_t v = 0;
	if (!is_digit(*t))
		goto bad;
	for (; is_digit(*t); ++t) {
		unsigned d = (unsigned)(*t - '0');
		if (v > (UINT64_MAX - d) / 10) {
			field_label(rd, field, -1, what, sizeof what);
			return rfail(rd, LK_ERR_PARSE, "%s: %.40s does not fit 64 bits", what, rd->tok[i]);
		}
		v = v * 10 + d;
	}
	if (*t)
		goto bad;
	*out = v;
	return LK_OK;
bad:
	field_label(rd, field, -1, what, sizeof what);
	return rfail(rd, LK_ERR_PARSE, "%s: expected an unsigned integer, found '%.40s'", what, rd->tok[i]);
}

/* The count of a section header "name N": checked against the limit and against the bytes left (every
 * data line has at least `fields` fields of one byte, each followed by one separator or the newline), so
 * that nothing is ever allocated for lines that cannot be there. */
static lk_status get_count(reader *rd, const char *section, int64_t limit, int fields, int64_t *out)
{
	rd->item = section;
	rd->item_index = -1;
	lk_status st = expect_fields(rd, 2);
	if (st != LK_OK)
		return st;
	int64_t v = 0;
	int of = 0;
	if (!parse_int(rd->tok[1], &v, &of))
		return rfail(rd, LK_ERR_PARSE, "%s: expected a count, found '%.40s'", section, rd->tok[1]);
	if (v < 0)
		return rfail(rd, LK_ERR_PARSE, "%s: negative count %.40s", section, rd->tok[1]);
	if (of || v > limit)
		return rfail(rd, LK_ERR_LIMIT, "%s: count %.40s exceeds the limit %lld", section, rd->tok[1],
		             (long long)limit);
	uint64_t left = (uint64_t)(rd->size - rd->pos);
	if ((uint64_t)v > (left + 1) / (2 * (uint64_t)fields))
		return rfail(rd, LK_ERR_PARSE, "%s: %lld lines declared but only %llu bytes follow (truncated file?)",
		             section, (long long)v, (unsigned long long)left);
	*out = v;
	return LK_OK;
}

static void *alloc_array(size_t count, size_t elem)
{
	return malloc((count ? count : 1) * elem);
}

static lk_status oom(reader *rd, const char *what)
{
	return rfail(rd, LK_ERR_NO_MEMORY, "out of memory for %s", what);
}

/* A failure of the problem's own validation, reported at the current line. */
static lk_status pfail(reader *rd, lk_status st)
{
	return rfail(rd, st, "%s", lk_problem_error(rd->p));
}

static lk_status read_form(reader *rd)
{
	rd->item = "form";
	rd->item_index = -1;
	lk_status st = expect_fields(rd, 2);
	if (st != LK_OK)
		return st;
	if (!strcmp(rd->tok[1], "rows"))
		rd->form = LK_FORM_ROWS;
	else if (!strcmp(rd->tok[1], "matrix"))
		rd->form = LK_FORM_MATRIX;
	else
		return rfail(rd, LK_ERR_PARSE, "unknown form '%.40s' (expected rows or matrix)", rd->tok[1]);
	rd->p = lk_problem_create((lk_form)rd->form);
	return rd->p ? LK_OK : oom(rd, "the problem");
}

static lk_status read_h(reader *rd)
{
	rd->item = "h";
	rd->item_index = -1;
	lk_status st = expect_fields(rd, 2);
	if (st == LK_OK)
		st = get_double(rd, 1, "h", -1, 0, &rd->h);
	if (st == LK_OK && rd->h < 0)
		st = rfail(rd, LK_ERR_PARSE, "h: the time step %.15g is negative", rd->h);
	return st;
}

static lk_status check_index(reader *rd, long long expected)
{
	int idx = 0;
	lk_status st = get_int(rd, 0, "index", &idx);
	if (st == LK_OK && idx != expected)
		st = rfail(rd, LK_ERR_PARSE, "%s line has index %d, expected %lld", rd->item, idx, expected);
	return st;
}

static lk_status read_bodies(reader *rd)
{
	int64_t n = 0;
	lk_status st = get_count(rd, "bodies", rd->lim.max_bodies, BODY_FIELDS, &n);
	if (st != LK_OK)
		return st;
	if ((st = lk_problem_reserve(rd->p, (int)n, 0)) != LK_OK)
		return pfail(rd, st);
	for (int64_t i = 0; i < n; ++i) {
		if ((st = next_data(rd, "bodies", n, i)) != LK_OK)
			return st;
		rd->item = "body";
		rd->item_index = i;
		if ((st = expect_fields(rd, BODY_FIELDS)) != LK_OK || (st = check_index(rd, i)) != LK_OK)
			return st;
		lk_body_def b;
		for (int k = 0; k < 6 && st == LK_OK; ++k)
			st = get_double(rd, 1 + k, "u", k, 0, &b.u[k]);
		for (int k = 0; k < 3 && st == LK_OK; ++k)
			st = get_double(rd, 7 + k, "inv_mass", k, 0, &b.inv_mass[k]);
		for (int k = 0; k < 9 && st == LK_OK; ++k)
			st = get_double(rd, 10 + k, "inv_inertia", k, 0, &b.inv_inertia[k]);
		if (st != LK_OK)
			return st;
		if ((st = lk_problem_add_body(rd->p, &b, NULL)) != LK_OK)
			return pfail(rd, st);
	}
	rd->nbodies = (int)n;
	return LK_OK;
}

static lk_status check_findex(reader *rd, int i, int f)
{
	if (f < -1 || f >= rd->nrows)
		return rfail(rd, LK_ERR_FINDEX, "row %d: friction index %d is out of range (%d rows)", i, f, rd->nrows);
	if (f == i)
		return rfail(rd, LK_ERR_FINDEX, "row %d: friction index points at itself", i);
	return LK_OK;
}

static lk_status read_row(reader *rd, int i)
{
	lk_row_def d = lk_default_row_def();
	lk_status st = check_index(rd, i);
	if (st != LK_OK)
		return st;
	int kind = -1;
	for (int k = 0; k < LK_ROW_KIND_COUNT; ++k)
		if (!strcmp(rd->tok[1], kind_names[k]))
			kind = k;
	if (kind < 0)
		return rfail(rd, LK_ERR_PARSE,
		             "row %d: unknown row kind '%.40s' (expected joint, normal, friction, limit or motor)", i,
		             rd->tok[1]);
	d.kind = (lk_row_kind)kind;
	if ((st = get_int(rd, 2, "body0", &d.body[0])) != LK_OK ||
	    (st = get_int(rd, 3, "body1", &d.body[1])) != LK_OK || (st = get_u64(rd, 4, "id", &d.id)) != LK_OK ||
	    (st = get_int(rd, 5, "findex", &d.findex)) != LK_OK || (st = check_findex(rd, i, d.findex)) != LK_OK ||
	    (st = get_double(rd, 6, "mu", -1, 0, &d.mu)) != LK_OK ||
	    (st = get_double(rd, 7, "lo", -1, 1, &d.lo)) != LK_OK ||
	    (st = get_double(rd, 8, "hi", -1, 1, &d.hi)) != LK_OK ||
	    (st = get_double(rd, 9, "c", -1, 0, &d.c)) != LK_OK || (st = get_double(rd, 10, "s", -1, 0, &d.s)) != LK_OK)
		return st;
	for (int k = 0; k < 6 && st == LK_OK; ++k)
		st = get_double(rd, 11 + k, "J0", k, 0, &d.J[0][k]);
	for (int k = 0; k < 6 && st == LK_OK; ++k)
		st = get_double(rd, 17 + k, "J1", k, 0, &d.J[1][k]);
	for (int k = 0; k < 3 && st == LK_OK; ++k)
		st = get_double(rd, 23 + k, "point", k, 0, &d.point[k]);
	if (st != LK_OK)
		return st;
	if ((st = lk_problem_add_row(rd->p, &d, NULL)) != LK_OK)
		return pfail(rd, st);
	return LK_OK;
}

static lk_status read_mrow(reader *rd, int i)
{
	lk_status st = check_index(rd, i);
	int f = -1;
	if (st == LK_OK && (st = get_double(rd, 1, "q", -1, 0, &rd->q[i])) == LK_OK &&
	    (st = get_double(rd, 2, "lo", -1, 1, &rd->lo[i])) == LK_OK &&
	    (st = get_double(rd, 3, "hi", -1, 1, &rd->hi[i])) == LK_OK &&
	    (st = get_double(rd, 4, "mu", -1, 0, &rd->mu[i])) == LK_OK && (st = get_int(rd, 5, "findex", &f)) == LK_OK)
		st = check_findex(rd, i, f);
	if (st != LK_OK)
		return st;
	rd->findex[i] = f;
	if (rd->mu[i] < 0)
		return rfail(rd, LK_ERR_BOUNDS, "row %d: negative friction coefficient %.15g", i, rd->mu[i]);
	if (f < 0) {
		if (rd->lo[i] == INFINITY || rd->hi[i] == -INFINITY)
			return rfail(rd, LK_ERR_NONFINITE, "row %d: bounds [%g, %g] are not valid", i, rd->lo[i],
			             rd->hi[i]);
		if (rd->lo[i] > rd->hi[i])
			return rfail(rd, LK_ERR_BOUNDS, "row %d: lo %.15g > hi %.15g", i, rd->lo[i], rd->hi[i]);
	}
	return LK_OK;
}

static lk_status read_rows(reader *rd)
{
	int matrix = rd->form == LK_FORM_MATRIX;
	int64_t n = 0;
	lk_status st = get_count(rd, "rows", rd->lim.max_rows, matrix ? MROW_FIELDS : ROW_FIELDS, &n);
	if (st != LK_OK)
		return st;
	rd->nrows = (int)n;
	size_t c = (size_t)n;
	rd->row_line = alloc_array(c, sizeof *rd->row_line);
	if (!rd->row_line)
		return oom(rd, "the rows");
	if (matrix) {
		rd->q = alloc_array(c, sizeof(double));
		rd->lo = alloc_array(c, sizeof(double));
		rd->hi = alloc_array(c, sizeof(double));
		rd->mu = alloc_array(c, sizeof(double));
		rd->findex = alloc_array(c, sizeof(int));
		if (!rd->q || !rd->lo || !rd->hi || !rd->mu || !rd->findex)
			return oom(rd, "the rows");
	} else if ((st = lk_problem_reserve(rd->p, rd->nbodies, (int)n)) != LK_OK) {
		return pfail(rd, st);
	}
	for (int i = 0; i < (int)n; ++i) {
		if ((st = next_data(rd, "rows", n, i)) != LK_OK)
			return st;
		rd->item = "row";
		rd->item_index = i;
		if ((st = expect_fields(rd, matrix ? MROW_FIELDS : ROW_FIELDS)) != LK_OK)
			return st;
		if ((st = matrix ? read_mrow(rd, i) : read_row(rd, i)) != LK_OK)
			return st;
		rd->row_line[i] = rd->line;
	}
	/* a friction row takes its bounds from a normal row, never from another friction row */
	for (int i = 0; i < (int)n; ++i) {
		int f = matrix ? rd->findex[i] : rd->p->rows[i].findex;
		if (f >= 0 && (matrix ? rd->findex[f] : rd->p->rows[f].findex) >= 0) {
			rd->line = rd->row_line[i];
			return rfail(rd, LK_ERR_FINDEX, "row %d: friction index %d points at another friction row", i,
			             f);
		}
	}
	return LK_OK;
}

static lk_status read_entries(reader *rd)
{
	int64_t nnz = 0;
	int64_t limit = rd->lim.max_nnz < INT_MAX ? rd->lim.max_nnz : INT_MAX;
	lk_status st = get_count(rd, "entries", limit, ENTRY_FIELDS, &nnz);
	if (st != LK_OK)
		return st;
	int n = rd->nrows;
	long long header = rd->line;
	rd->row_ptr = calloc((size_t)n + 1, sizeof(int));
	rd->mark = alloc_array((size_t)n, sizeof(int));
	rd->col = alloc_array((size_t)nnz, sizeof(int));
	rd->val = alloc_array((size_t)nnz, sizeof(double));
	if (!rd->row_ptr || !rd->mark || !rd->col || !rd->val)
		return oom(rd, "the matrix entries");
	for (int i = 0; i < n; ++i)
		rd->mark[i] = -1;
	int prev = 0;
	for (int64_t k = 0; k < nnz; ++k) {
		if ((st = next_data(rd, "entries", nnz, k)) != LK_OK)
			return st;
		rd->item = "entry";
		rd->item_index = k;
		if ((st = expect_fields(rd, ENTRY_FIELDS)) != LK_OK)
			return st;
		int i, j;
		if ((st = get_int(rd, 0, "row", &i)) != LK_OK || (st = get_int(rd, 1, "column", &j)) != LK_OK ||
		    (st = get_double(rd, 2, "value", -1, 0, &rd->val[k])) != LK_OK)
			return st;
		if (i < 0 || i >= n || j < 0 || j >= n)
			return rfail(rd, LK_ERR_OUT_OF_RANGE, "entry %lld: (%d, %d) is outside the %d x %d matrix",
			             (long long)k, i, j, n, n);
		if (i < prev)
			return rfail(rd, LK_ERR_PARSE,
			             "entry %lld: row %d after row %d (entries must be sorted by row)", (long long)k, i,
			             prev);
		if (rd->mark[j] == i)
			return rfail(rd, LK_ERR_PARSE, "entry %lld: A(%d, %d) appears twice", (long long)k, i, j);
		rd->mark[j] = i;
		prev = i;
		rd->col[k] = j;
		rd->row_ptr[i + 1]++;
	}
	for (int i = 0; i < n; ++i)
		rd->row_ptr[i + 1] += rd->row_ptr[i];
	rd->nnz = nnz;
	st = lk_problem_set_matrix(rd->p, n, rd->row_ptr, rd->col, rd->val, rd->q, rd->lo, rd->hi, rd->mu, rd->findex);
	if (st != LK_OK) {
		rd->line = header;
		return pfail(rd, st);
	}
	return LK_OK;
}

/* lambda and solution: one value per line, as many as rows. */
static lk_status read_vector(reader *rd, const char *section, double **out)
{
	int64_t n = 0;
	lk_status st = get_count(rd, section, rd->lim.max_rows, 1, &n);
	if (st != LK_OK)
		return st;
	if (n != rd->nrows)
		return rfail(rd, LK_ERR_PARSE, "%s: %lld values for %d rows", section, (long long)n, rd->nrows);
	*out = alloc_array((size_t)n, sizeof(double));
	if (!*out)
		return oom(rd, section);
	for (int i = 0; i < (int)n; ++i) {
		if ((st = next_data(rd, section, n, i)) != LK_OK)
			return st;
		rd->item = section;
		rd->item_index = i;
		if ((st = expect_fields(rd, 1)) != LK_OK ||
		    (st = get_double(rd, 0, "value", -1, 0, &(*out)[i])) != LK_OK)
			return st;
	}
	return LK_OK;
}

/* Checks that a section may come now: once, in order, with what it needs before it. */
static lk_status check_section(reader *rd, int sec)
{
	const char *name = sec_names[sec];
	if (rd->seen[sec])
		return rfail(rd, LK_ERR_PARSE, "duplicate section '%s' (first on line %lld)", name, rd->seen[sec]);
	if (rd->last > sec)
		return rfail(rd, LK_ERR_PARSE, "section '%s' must come before '%s' (line %lld)", name,
		             sec_names[rd->last], rd->seen[rd->last]);
	if (sec <= SEC_FORM)
		return LK_OK;
	if (!rd->seen[SEC_FORM])
		return rfail(rd, LK_ERR_PARSE, "missing section 'form' before '%s'", name);
	int matrix = rd->form == LK_FORM_MATRIX;
	if ((sec == SEC_BODIES && matrix) || (sec == SEC_ENTRIES && !matrix))
		return rfail(rd, LK_ERR_PARSE, "section '%s' is not allowed in the %s form", name,
		             matrix ? "matrix" : "row");
	if (sec == SEC_ROWS && !matrix && !rd->seen[SEC_BODIES])
		return rfail(rd, LK_ERR_PARSE, "missing section 'bodies' before 'rows'");
	if (sec > SEC_ROWS && !rd->seen[SEC_ROWS])
		return rfail(rd, LK_ERR_PARSE, "missing section 'rows' before '%s'", name);
	if (sec > SEC_ENTRIES && matrix && !rd->seen[SEC_ENTRIES])
		return rfail(rd, LK_ERR_PARSE, "missing section 'entries' before '%s'", name);
	if (sec == SEC_END && !rd->seen[SEC_LAMBDA])
		return rfail(rd, LK_ERR_PARSE, "missing section 'lambda' before 'end'");
	return LK_OK;
}

static lk_status read_magic(reader *rd)
{
	lk_status st = LK_OK;
	int r = read_line(rd, &st);
	if (r < 0)
		return st;
	if (r == 0) {
		rd->line = 1;
		return rfail(rd, LK_ERR_PARSE, "empty file (expected '" MAGIC " %d')", LK_IO_FORMAT_VERSION);
	}
	tokenize(rd);
	if (rd->ntok == 0 || strcmp(rd->tok[0], MAGIC) != 0)
		return rfail(rd, LK_ERR_PARSE, "not an lcpkit problem file (the first line must be '" MAGIC " %d')",
		             LK_IO_FORMAT_VERSION);
	rd->item = MAGIC;
	rd->item_index = -1;
	if ((st = expect_fields(rd, 2)) != LK_OK)
		return st;
	int64_t v = 0;
	int of = 0;
	if (!parse_int(rd->tok[1], &v, &of))
		return rfail(rd, LK_ERR_PARSE, "format version '%.40s' is not a number", rd->tok[1]);
	if (of || v != LK_IO_FORMAT_VERSION)
		return rfail(rd, LK_ERR_PARSE, "format version %.40s is not supported (this reader reads version %d)",
		             rd->tok[1], LK_IO_FORMAT_VERSION);
	return LK_OK;
}

static lk_status parse(reader *rd)
{
	lk_status st = read_magic(rd);
	if (st != LK_OK)
		return st;
	for (;;) {
		int r = next_content(rd, &st);
		if (r < 0)
			return st;
		if (r == 0) {
			rd->line = eof_line(rd);
			return rfail(rd, LK_ERR_PARSE, "unexpected end of file (missing 'end')");
		}
		/* the source text is the raw rest of the line, so it is taken before tokenizing */
		const char *s = rd->buf;
		while (*s == ' ' || *s == '\t')
			++s;
		const char *text = NULL;
		if (!strncmp(s, "source", 6) && (s[6] == ' ' || s[6] == '\t' || s[6] == '\0'))
			text = s[6] ? s + 7 : s + 6;
		if (text) {
			if ((st = check_section(rd, SEC_SOURCE)) != LK_OK)
				return st;
			rd->seen[SEC_SOURCE] = rd->line;
			rd->last = SEC_SOURCE;
			size_t len = strlen(text);
			if (len >= sizeof rd->source)
				return rfail(rd, LK_ERR_PARSE, "source text is %zu bytes long (at most %zu)", len,
				             sizeof rd->source - 1);
			memcpy(rd->source, text, len + 1);
			continue;
		}
		tokenize(rd);
		int sec = section_of(rd->tok[0]);
		if (sec < 0) {
			if (is_decimal(rd->tok[0]) || (*rd->tok[0] == '-' && is_digit(rd->tok[0][1])))
				return rfail(rd, LK_ERR_PARSE, "expected a section name, found the number '%.40s'",
				             rd->tok[0]);
			return rfail(rd, LK_ERR_PARSE, "unknown section '%.40s'", rd->tok[0]);
		}
		if ((st = check_section(rd, sec)) != LK_OK)
			return st;
		rd->seen[sec] = rd->line;
		rd->last = sec;
		switch (sec) {
		case SEC_H: st = read_h(rd); break;
		case SEC_FORM: st = read_form(rd); break;
		case SEC_BODIES: st = read_bodies(rd); break;
		case SEC_ROWS: st = read_rows(rd); break;
		case SEC_ENTRIES: st = read_entries(rd); break;
		case SEC_LAMBDA:
			if ((st = read_vector(rd, "lambda", &rd->lambda)) == LK_OK &&
			    (st = lk_problem_set_lambda(rd->p, rd->lambda, rd->nrows)) != LK_OK)
				st = pfail(rd, st);
			break;
		case SEC_SOLUTION:
			st = read_vector(rd, "solution", &rd->solution);
			rd->has_solution = st == LK_OK;
			break;
		case SEC_END:
			rd->item = "end";
			rd->item_index = -1;
			if ((st = expect_fields(rd, 1)) != LK_OK)
				return st;
			if ((st = lk_problem_validate(rd->p)) != LK_OK)
				return pfail(rd, st);
			r = next_content(rd, &st);
			if (r < 0)
				return st;
			if (r > 0)
				return rfail(rd, LK_ERR_PARSE, "unexpected content after 'end' (line %lld)",
				             rd->seen[SEC_END]);
			return LK_OK;
		default: break;
		}
		if (st != LK_OK)
			return st;
	}
}

static void reader_free(reader *rd)
{
	free(rd->row_line);
	free(rd->q);
	free(rd->lo);
	free(rd->hi);
	free(rd->mu);
	free(rd->findex);
	free(rd->row_ptr);
	free(rd->col);
	free(rd->mark);
	free(rd->val);
	free(rd->lambda);
	free(rd->solution);
}

static lk_status check_limits(const lk_io_limits *lim, char *err, size_t err_size)
{
	if (lim->max_rows < 0 || lim->max_bodies < 0 || lim->max_nnz < 0 || lim->max_bytes < 0) {
		set_err(err, err_size, "read: negative limit");
		return LK_ERR_INVALID_ARGUMENT;
	}
	return LK_OK;
}

lk_status lk_problem_read_buffer(const char *data, size_t size, const char *name, const lk_io_limits *limits,
                                 lk_problem **out, lk_problem_extra *extra, char *err, size_t err_size)
{
	set_err(err, err_size, "%s", "");
	if (extra)
		memset(extra, 0, sizeof *extra);
	if (!out) {
		set_err(err, err_size, "read: output is NULL");
		return LK_ERR_INVALID_ARGUMENT;
	}
	*out = NULL;
	if (!data && size > 0) {
		set_err(err, err_size, "read: data is NULL");
		return LK_ERR_INVALID_ARGUMENT;
	}
	if (!name)
		name = "(buffer)";
	lk_io_limits lim = limits ? *limits : lk_default_io_limits();
	lk_status st = check_limits(&lim, err, err_size);
	if (st != LK_OK)
		return st;
	if ((uint64_t)size > (uint64_t)lim.max_bytes) {
		set_err(err, err_size, "%s: %zu bytes exceed the limit of %lld bytes", name, size,
		        (long long)lim.max_bytes);
		return LK_ERR_LIMIT;
	}
	reader *rd = calloc(1, sizeof *rd);
	if (!rd) {
		set_err(err, err_size, "%s: out of memory", name);
		return LK_ERR_NO_MEMORY;
	}
	rd->data = data ? data : "";
	rd->size = size;
	rd->name = name;
	rd->err = err;
	rd->err_size = err_size;
	rd->lim = lim;
	rd->form = -1;
	rd->last = -1;
	rd->item = "line";
	rd->item_index = -1;

	c_numeric loc;
	c_numeric_enter(&loc);
	st = parse(rd);
	c_numeric_leave(&loc);

	if (st == LK_OK) {
		*out = rd->p;
		if (extra) {
			extra->h = rd->h;
			memcpy(extra->source, rd->source, sizeof extra->source);
			extra->has_solution = rd->has_solution;
			extra->solution = rd->has_solution ? rd->solution : NULL;
			if (rd->has_solution)
				rd->solution = NULL;
		}
	} else {
		lk_problem_destroy(rd->p);
	}
	reader_free(rd);
	free(rd);
	return st;
}

lk_status lk_problem_read(const char *path, const lk_io_limits *limits, lk_problem **out, lk_problem_extra *extra,
                          char *err, size_t err_size)
{
	set_err(err, err_size, "%s", "");
	if (extra)
		memset(extra, 0, sizeof *extra);
	if (!out || !path) {
		set_err(err, err_size, "read: %s is NULL", out ? "path" : "output");
		return LK_ERR_INVALID_ARGUMENT;
	}
	*out = NULL;
	lk_io_limits lim = limits ? *limits : lk_default_io_limits();
	lk_status st = check_limits(&lim, err, err_size);
	if (st != LK_OK)
		return st;
	FILE *f = fopen(path, "rb");
	if (!f) {
		set_err(err, err_size, "%s: cannot open: %s", path, strerror(errno));
		return LK_ERR_IO;
	}
	/* read in chunks up to the limit: the size a file claims (or a pipe) is not trusted */
	size_t cap = 1 << 16, len = 0;
	struct stat sb;
	if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode)) {
		if ((uint64_t)sb.st_size > (uint64_t)lim.max_bytes) {
			fclose(f);
			set_err(err, err_size, "%s: %lld bytes exceed the limit of %lld bytes", path,
			        (long long)sb.st_size, (long long)lim.max_bytes);
			return LK_ERR_LIMIT;
		}
		cap = (size_t)sb.st_size + 1;
	}
	char *buf = malloc(cap);
	st = buf ? LK_OK : LK_ERR_NO_MEMORY;
	while (st == LK_OK) {
		if (len == cap) {
			if ((uint64_t)len > (uint64_t)lim.max_bytes) {
				set_err(err, err_size, "%s: more than the limit of %lld bytes", path,
				        (long long)lim.max_bytes);
				st = LK_ERR_LIMIT;
				break;
			}
			size_t nc = cap * 2;
			if ((uint64_t)nc > (uint64_t)lim.max_bytes + 1)
				nc = (size_t)lim.max_bytes + 1;
			char *nb = nc > cap ? realloc(buf, nc) : NULL;
			if (!nb) {
				st = LK_ERR_NO_MEMORY;
				break;
			}
			buf = nb;
			cap = nc;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f)) {
				set_err(err, err_size, "%s: read error: %s", path, strerror(errno));
				st = LK_ERR_IO;
			}
			break;
		}
	}
	fclose(f);
	if (st == LK_ERR_NO_MEMORY)
		set_err(err, err_size, "%s: out of memory reading the file", path);
	if (st == LK_OK && (uint64_t)len > (uint64_t)lim.max_bytes) {
		set_err(err, err_size, "%s: more than the limit of %lld bytes", path, (long long)lim.max_bytes);
		st = LK_ERR_LIMIT;
	}
	if (st == LK_OK)
		st = lk_problem_read_buffer(buf, len, path, &lim, out, extra, err, err_size);
	free(buf);
	return st;
}

/* --------------------------------------------------------------------------------------------- writer */

/* The output file: a temporary file beside a regular target, renamed over it once everything is written. */
typedef struct out_file {
	FILE *f;
	char *tmp;
	const char *path;
} out_file;

static lk_status out_open(out_file *o, const char *path, char *err, size_t err_size)
{
	o->f = NULL;
	o->tmp = NULL;
	o->path = path;
	struct stat sb;
	int direct = lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
	if (!direct) {
		size_t n = strlen(path) + 64;
		o->tmp = malloc(n);
		if (!o->tmp) {
			set_err(err, err_size, "%s: out of memory", path);
			return LK_ERR_NO_MEMORY;
		}
		struct timespec ts;
		timespec_get(&ts, TIME_UTC);
		int fd = -1;
		for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
			snprintf(o->tmp, n, "%s.tmp-%ld-%ld", path, (long)getpid(), (long)ts.tv_nsec + attempt);
			fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
			if (fd < 0 && errno != EEXIST)
				break;
		}
		if (fd >= 0) {
			o->f = fdopen(fd, "w");
			if (!o->f) {
				close(fd);
				unlink(o->tmp);
			}
		}
		if (!o->f) {
			/* no temporary file beside it (a read-only directory, say): write in place */
			free(o->tmp);
			o->tmp = NULL;
			direct = 1;
		}
	}
	if (direct)
		o->f = fopen(path, "w");
	if (!o->f) {
		set_err(err, err_size, "%s: cannot open for writing: %s", path, strerror(errno));
		return LK_ERR_IO;
	}
	return LK_OK;
}

static lk_status out_close(out_file *o, lk_status st, char *err, size_t err_size)
{
	int e = 0;
	if (ferror(o->f))
		e = errno ? errno : EIO;
	if (fclose(o->f) != 0 && !e)
		e = errno ? errno : EIO;
	if (o->tmp) {
		if (st == LK_OK && !e && rename(o->tmp, o->path) != 0)
			e = errno;
		if (st != LK_OK || e)
			unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
	if (st == LK_OK && e) {
		set_err(err, err_size, "%s: write failed: %s", o->path, strerror(e));
		st = LK_ERR_IO;
	}
	return st;
}

static void put_doubles(FILE *f, const double *x, int n)
{
	for (int k = 0; k < n; ++k)
		fprintf(f, " %.17g", x[k]);
}

/* The ignored bounds of a friction row may hold anything but NaN in the file. */
static double bound_for_file(double v, double if_nan)
{
	return isnan(v) ? if_nan : v;
}

static void write_rows_form(FILE *f, const lk_problem *p)
{
	fprintf(f, "bodies %d\n# index u[6] inv_mass[3] inv_inertia[9]\n", p->nbodies);
	for (int i = 0; i < p->nbodies; ++i) {
		const lk_body_def *b = &p->bodies[i];
		fprintf(f, "%d", i);
		put_doubles(f, b->u, 6);
		put_doubles(f, b->inv_mass, 3);
		put_doubles(f, b->inv_inertia, 9);
		fputc('\n', f);
	}
	fprintf(f, "rows %d\n# index kind body0 body1 id findex mu lo hi c s J0[6] J1[6] point[3]\n", p->nrows);
	for (int i = 0; i < p->nrows; ++i) {
		lk_row_def row;
		lk_problem_get_row(p, i, &row);
		const lk_row_def *d = &row;
		fprintf(f, "%d %s %d %d %" PRIu64 " %d %.17g %.17g %.17g %.17g %.17g", i, kind_names[d->kind],
		        d->body[0], d->body[1], d->id, d->findex, d->mu, bound_for_file(d->lo, -INFINITY),
		        bound_for_file(d->hi, INFINITY), d->c, d->s);
		put_doubles(f, d->J[0], 6);
		put_doubles(f, d->J[1], 6);
		put_doubles(f, d->point, 3);
		fputc('\n', f);
	}
}

static void write_matrix_form(FILE *f, const lk_problem *p)
{
	fprintf(f, "rows %d\n# index q lo hi mu findex\n", p->nrows);
	for (int i = 0; i < p->nrows; ++i) {
		const lk__row *r = &p->rows[i];
		fprintf(f, "%d %.17g %.17g %.17g %.17g %d\n", i, p->qv[i], r->lo, r->hi, r->mu, r->findex);
	}
	fprintf(f, "entries %d\n# row column value (sorted by row)\n", p->nnz);
	for (int i = 0; i < p->nrows; ++i)
		for (int k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k)
			fprintf(f, "%d %d %.17g\n", i, p->col[k], p->val[k]);
}

static void write_vector(FILE *f, const char *name, const double *x, int n)
{
	fprintf(f, "%s %d\n", name, n);
	for (int i = 0; i < n; ++i)
		fprintf(f, "%.17g\n", x[i]);
}

static int all_finite(const double *x, int n)
{
	for (int i = 0; i < n; ++i)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

lk_status lk_problem_write(const lk_problem *p, const lk_problem_extra *extra, const char *path, char *err,
                           size_t err_size)
{
	set_err(err, err_size, "%s", "");
	if (!p || !path) {
		set_err(err, err_size, "write: %s is NULL", p ? "path" : "problem");
		return LK_ERR_INVALID_ARGUMENT;
	}
	/* refuse what the reader would refuse, before touching the file */
	if (!all_finite(p->lambda, p->nrows)) {
		set_err(err, err_size, "%s: lambda is not finite", path);
		return LK_ERR_NONFINITE;
	}
	if (extra) {
		if (!isfinite(extra->h) || extra->h < 0) {
			set_err(err, err_size, "%s: time step h = %g is not a finite number >= 0", path, extra->h);
			return LK_ERR_INVALID_ARGUMENT;
		}
		size_t len = strnlen(extra->source, sizeof extra->source);
		if (len == sizeof extra->source) {
			set_err(err, err_size, "%s: source text is not terminated", path);
			return LK_ERR_INVALID_ARGUMENT;
		}
		for (size_t i = 0; i < len; ++i)
			if (!text_byte_ok((unsigned char)extra->source[i])) {
				set_err(err, err_size, "%s: source text has the control character 0x%02x", path,
				        (unsigned char)extra->source[i]);
				return LK_ERR_INVALID_ARGUMENT;
			}
		if (extra->has_solution && !extra->solution) {
			set_err(err, err_size, "%s: has_solution is set but solution is NULL", path);
			return LK_ERR_INVALID_ARGUMENT;
		}
		if (extra->has_solution && !all_finite(extra->solution, p->nrows)) {
			set_err(err, err_size, "%s: the reference solution is not finite", path);
			return LK_ERR_NONFINITE;
		}
	}
	out_file o;
	lk_status st = out_open(&o, path, err, err_size);
	if (st != LK_OK)
		return st;
	c_numeric loc;
	c_numeric_enter(&loc);
	FILE *f = o.f;
	fprintf(f, MAGIC " %d\n", LK_IO_FORMAT_VERSION);
	if (extra) {
		if (extra->source[0])
			fprintf(f, "source %s\n", extra->source);
		fprintf(f, "h %.17g\n", extra->h);
	}
	fprintf(f, "form %s\n", p->form == LK_FORM_ROWS ? "rows" : "matrix");
	if (p->form == LK_FORM_ROWS)
		write_rows_form(f, p);
	else
		write_matrix_form(f, p);
	write_vector(f, "lambda", p->lambda, p->nrows);
	if (extra && extra->has_solution)
		write_vector(f, "solution", extra->solution, p->nrows);
	fputs("end\n", f);
	c_numeric_leave(&loc);
	return out_close(&o, LK_OK, err, err_size);
}

/* ----------------------------------------------------------------------------------------- dense export */

lk_status lk_problem_export_dense(lk_problem *p, int max_n, const char *path, char *err, size_t err_size)
{
	set_err(err, err_size, "%s", "");
	if (!p || !path) {
		set_err(err, err_size, "export_dense: %s is NULL", p ? "path" : "problem");
		return LK_ERR_INVALID_ARGUMENT;
	}
	int n = p->nrows;
	if (n > max_n || n > 46340) {
		set_err(err, err_size, "%s: %d rows exceed the dense export limit %d", path, n,
		        max_n < 46340 ? max_n : 46340);
		return LK_ERR_LIMIT;
	}
	double *A = alloc_array((size_t)n * (size_t)n, sizeof(double));
	double *q = alloc_array((size_t)n, sizeof(double));
	if (!A || !q) {
		free(A);
		free(q);
		set_err(err, err_size, "%s: out of memory for a %d x %d matrix", path, n, n);
		return LK_ERR_NO_MEMORY;
	}
	lk_status st = lk_problem_assemble_dense(p, max_n, A, q);
	if (st != LK_OK) {
		set_err(err, err_size, "%s: %s", path, lk_problem_error(p));
	} else {
		out_file o;
		st = out_open(&o, path, err, err_size);
		if (st == LK_OK) {
			c_numeric loc;
			c_numeric_enter(&loc);
			fprintf(o.f,
			        "# lcpkit dense export %d (docs/problem-format.md): n = %d\n"
			        "# line i: A[i][0] ... A[i][n-1] q[i] lo[i] hi[i]; w = A lambda + q;\n"
			        "# lo, hi are the effective bounds at the problem's lambda (friction: -+mu "
			        "|lambda_findex|)\n",
			        LK_IO_FORMAT_VERSION, n);
			for (int i = 0; i < n; ++i) {
				double lo, hi;
				lk__bounds(&p->rows[i], p->lambda, &lo, &hi);
				for (int j = 0; j < n; ++j)
					fprintf(o.f, j ? " %.17g" : "%.17g", A[(size_t)i * n + j]);
				fprintf(o.f, " %.17g %.17g %.17g\n", q[i], lo, hi);
			}
			c_numeric_leave(&loc);
			st = out_close(&o, LK_OK, err, err_size);
		}
	}
	free(A);
	free(q);
	return st;
}

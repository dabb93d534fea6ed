/* The problem file reader's state and its lowest layer, in io_lex.c: the lines, their tokens and the numbers
 * of the fields, each refusal a message "name:line: ..." in the caller's buffer. io_read.c reads the sections
 * of a file with them. */
#ifndef LCPKIT_IO_LEX_H
#define LCPKIT_IO_LEX_H

#include "problem.h"
#include "lcpkit/io.h"

#include <stddef.h>
#include <stdint.h>

#define LK__IO_MAX_TOKENS 32

/* The sections of a problem file, in the order a file must have them. */
enum lk__io_section {
	LK__IO_SEC_SOURCE = 0,
	LK__IO_SEC_H,
	LK__IO_SEC_FORM,
	LK__IO_SEC_BODIES,
	LK__IO_SEC_ROWS,
	LK__IO_SEC_ENTRIES,
	LK__IO_SEC_LAMBDA,
	LK__IO_SEC_SOLUTION,
	LK__IO_SEC_END,
	LK__IO_SEC_COUNT
};

typedef struct lk__io_reader {
	const char *data;
	size_t size, pos;
	const char *name;
	long long line; /* number of the current line, 1-based */
	char buf[LK_IO_MAX_LINE + 1];
	size_t len;
	char *tok[LK__IO_MAX_TOKENS + 1];
	int ntok;         /* LK__IO_MAX_TOKENS + 1 means "more than LK__IO_MAX_TOKENS" */
	const char *item; /* what the current line describes ("body", "row", ...), for messages */
	long long item_index;
	char *err;
	size_t err_size;

	lk_io_limits lim;
	lk_problem *p;
	int form; /* -1 until the form section */
	long long seen[LK__IO_SEC_COUNT];
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
} lk__io_reader;

/* Returns st, its message in the caller's buffer: "name:line: " and fmt's. */
lk_status lk__io_rfail(lk__io_reader *rd, lk_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The line number where the data end. */
long long lk__io_eof_line(const lk__io_reader *rd);
/* The next line into buf: 1, 0 at the end of the data, -1 after an error (*st). */
int lk__io_read_line(lk__io_reader *rd, lk_status *st);
/* buf's tokens into tok, ntok (LK__IO_MAX_TOKENS + 1: more than LK__IO_MAX_TOKENS). */
void lk__io_tokenize(lk__io_reader *rd);
/* The next line that is neither blank nor a comment: 1, 0 at the end of the data, -1 after an error (*st). */
int lk__io_next_content(lk__io_reader *rd, lk_status *st);
/* The current line has exactly n fields. */
lk_status lk__io_expect_fields(lk__io_reader *rd, int n);
int lk__io_is_digit(char c);
/* A decimal number as %.17g writes it (no inf, no nan). */
int lk__io_is_decimal(const char *s);
/* The fields of the current line: token i as a double (infinity only where allow_inf), an int, an unsigned
 * 64-bit integer; field and comp name it in messages. */
lk_status lk__io_get_double(lk__io_reader *rd, int i, const char *field, int comp, int allow_inf, double *out);
int lk__io_parse_int(const char *t, int64_t *out, int *overflow);
lk_status lk__io_get_int(lk__io_reader *rd, int i, const char *field, int *out);
lk_status lk__io_get_u64(lk__io_reader *rd, int i, const char *field, uint64_t *out);
/* The count of a section header "name N", within limit and the bytes left for lines of `fields` fields. */
lk_status lk__io_get_count(lk__io_reader *rd, const char *section, int64_t limit, int fields, int64_t *out);

#endif

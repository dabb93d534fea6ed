/* Problem files (docs/problem-format.md): the strict reader, lk_problem_read and lk_problem_read_buffer, and
 * the sections of a file, on the lines and fields of io_lex.c.
 *
 * The reader treats its input as hostile: it never trusts a count before checking it against the limits
 * and against the bytes that are left, never reads outside the buffer (which need not end in a newline or
 * a NUL and may contain NUL bytes), and builds the problem through the public validating functions so that
 * a file can hold nothing a program could not have built. */
#include "io_lex.h"

#include "io_format.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BODY_FIELDS  19 /* index u[6] inv_mass[3] inv_inertia[9] */
#define ROW_FIELDS   26 /* index kind body0 body1 id findex mu lo hi c s J0[6] J1[6] point[3] */
#define MROW_FIELDS  6  /* index q lo hi mu findex */
#define ENTRY_FIELDS 3  /* row column value */

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

/* In the order a file must have them. */
static const char *const sec_names[LK__IO_SEC_COUNT] = {"source",  "h",      "form",     "bodies", "rows",
                                                        "entries", "lambda", "solution", "end"};

static int section_of(const char *word)
{
	for (int i = 0; i < LK__IO_SEC_COUNT; ++i)
		if (!strcmp(word, sec_names[i]))
			return i;
	return -1;
}

/* Next data line of a section that declared `count` lines, `done` of them read so far. */
static lk_status next_data(lk__io_reader *rd, const char *section, long long count, long long done)
{
	lk_status st = LK_OK;
	int r = lk__io_next_content(rd, &st);
	if (r < 0)
		return st;
	if (r == 0) {
		rd->line = lk__io_eof_line(rd);
		return lk__io_rfail(rd, LK_ERR_PARSE,
		                    "unexpected end of file: section '%s' declares %lld lines, found %lld", section, count,
		                    done);
	}
	lk__io_tokenize(rd);
	if (section_of(rd->tok[0]) >= 0)
		return lk__io_rfail(rd, LK_ERR_PARSE, "section '%s' declares %lld lines, found %lld before '%s'", section,
		                    count, done, rd->tok[0]);
	return LK_OK;
}

static lk_status oom(lk__io_reader *rd, const char *what)
{
	return lk__io_rfail(rd, LK_ERR_NO_MEMORY, "out of memory for %s", what);
}

/* A failure of the problem's own validation, reported at the current line. */
static lk_status pfail(lk__io_reader *rd, lk_status st)
{
	return lk__io_rfail(rd, st, "%s", lk_problem_error(rd->p));
}

static lk_status read_form(lk__io_reader *rd)
{
	rd->item = "form";
	rd->item_index = -1;
	lk_status st = lk__io_expect_fields(rd, 2);
	if (st != LK_OK)
		return st;
	if (!strcmp(rd->tok[1], "rows"))
		rd->form = LK_FORM_ROWS;
	else if (!strcmp(rd->tok[1], "matrix"))
		rd->form = LK_FORM_MATRIX;
	else
		return lk__io_rfail(rd, LK_ERR_PARSE, "unknown form '%.40s' (expected rows or matrix)", rd->tok[1]);
	rd->p = lk_problem_create((lk_form)rd->form);
	return rd->p ? LK_OK : oom(rd, "the problem");
}

static lk_status read_h(lk__io_reader *rd)
{
	rd->item = "h";
	rd->item_index = -1;
	lk_status st = lk__io_expect_fields(rd, 2);
	if (st == LK_OK)
		st = lk__io_get_double(rd, 1, "h", -1, 0, &rd->h);
	if (st == LK_OK && rd->h < 0)
		st = lk__io_rfail(rd, LK_ERR_PARSE, "h: the time step %.15g is negative", rd->h);
	return st;
}

static lk_status check_index(lk__io_reader *rd, long long expected)
{
	int idx = 0;
	lk_status st = lk__io_get_int(rd, 0, "index", &idx);
	if (st == LK_OK && idx != expected)
		st = lk__io_rfail(rd, LK_ERR_PARSE, "%s line has index %d, expected %lld", rd->item, idx, expected);
	return st;
}

static lk_status read_bodies(lk__io_reader *rd)
{
	int64_t n = 0;
	lk_status st = lk__io_get_count(rd, "bodies", rd->lim.max_bodies, BODY_FIELDS, &n);
	if (st != LK_OK)
		return st;
	if ((st = lk_problem_reserve(rd->p, (int)n, 0)) != LK_OK)
		return pfail(rd, st);
	for (int64_t i = 0; i < n; ++i) {
		if ((st = next_data(rd, "bodies", n, i)) != LK_OK)
			return st;
		rd->item = "body";
		rd->item_index = i;
		if ((st = lk__io_expect_fields(rd, BODY_FIELDS)) != LK_OK || (st = check_index(rd, i)) != LK_OK)
			return st;
		lk_body_def b;
		for (int k = 0; k < 6 && st == LK_OK; ++k)
			st = lk__io_get_double(rd, 1 + k, "u", k, 0, &b.u[k]);
		for (int k = 0; k < 3 && st == LK_OK; ++k)
			st = lk__io_get_double(rd, 7 + k, "inv_mass", k, 0, &b.inv_mass[k]);
		for (int k = 0; k < 9 && st == LK_OK; ++k)
			st = lk__io_get_double(rd, 10 + k, "inv_inertia", k, 0, &b.inv_inertia[k]);
		if (st != LK_OK)
			return st;
		if ((st = lk_problem_add_body(rd->p, &b, NULL)) != LK_OK)
			return pfail(rd, st);
	}
	rd->nbodies = (int)n;
	return LK_OK;
}

static lk_status check_findex(lk__io_reader *rd, int i, int f)
{
	if (f < -1 || f >= rd->nrows)
		return lk__io_rfail(rd, LK_ERR_FINDEX, "row %d: friction index %d is out of range (%d rows)", i, f,
		                    rd->nrows);
	if (f == i)
		return lk__io_rfail(rd, LK_ERR_FINDEX, "row %d: friction index points at itself", i);
	return LK_OK;
}

static lk_status read_row(lk__io_reader *rd, int i)
{
	lk_row_def d = lk_default_row_def();
	lk_status st = check_index(rd, i);
	if (st != LK_OK)
		return st;
	int kind = -1;
	for (int k = 0; k < LK_ROW_KIND_COUNT; ++k)
		if (!strcmp(rd->tok[1], lk__io_kind_names[k]))
			kind = k;
	if (kind < 0)
		return lk__io_rfail(rd, LK_ERR_PARSE,
		                    "row %d: unknown row kind '%.40s' (expected joint, normal, friction, limit or motor)",
		                    i, rd->tok[1]);
	d.kind = (lk_row_kind)kind;
	if ((st = lk__io_get_int(rd, 2, "body0", &d.body[0])) != LK_OK ||
	    (st = lk__io_get_int(rd, 3, "body1", &d.body[1])) != LK_OK ||
	    (st = lk__io_get_u64(rd, 4, "id", &d.id)) != LK_OK ||
	    (st = lk__io_get_int(rd, 5, "findex", &d.findex)) != LK_OK ||
	    (st = check_findex(rd, i, d.findex)) != LK_OK ||
	    (st = lk__io_get_double(rd, 6, "mu", -1, 0, &d.mu)) != LK_OK ||
	    (st = lk__io_get_double(rd, 7, "lo", -1, 1, &d.lo)) != LK_OK ||
	    (st = lk__io_get_double(rd, 8, "hi", -1, 1, &d.hi)) != LK_OK ||
	    (st = lk__io_get_double(rd, 9, "c", -1, 0, &d.c)) != LK_OK ||
	    (st = lk__io_get_double(rd, 10, "s", -1, 0, &d.s)) != LK_OK)
		return st;
	for (int k = 0; k < 6 && st == LK_OK; ++k)
		st = lk__io_get_double(rd, 11 + k, "J0", k, 0, &d.J[0][k]);
	for (int k = 0; k < 6 && st == LK_OK; ++k)
		st = lk__io_get_double(rd, 17 + k, "J1", k, 0, &d.J[1][k]);
	for (int k = 0; k < 3 && st == LK_OK; ++k)
		st = lk__io_get_double(rd, 23 + k, "point", k, 0, &d.point[k]);
	if (st != LK_OK)
		return st;
	if ((st = lk_problem_add_row(rd->p, &d, NULL)) != LK_OK)
		return pfail(rd, st);
	return LK_OK;
}

static lk_status read_mrow(lk__io_reader *rd, int i)
{
	lk_status st = check_index(rd, i);
	int f = -1;
	if (st == LK_OK && (st = lk__io_get_double(rd, 1, "q", -1, 0, &rd->q[i])) == LK_OK &&
	    (st = lk__io_get_double(rd, 2, "lo", -1, 1, &rd->lo[i])) == LK_OK &&
	    (st = lk__io_get_double(rd, 3, "hi", -1, 1, &rd->hi[i])) == LK_OK &&
	    (st = lk__io_get_double(rd, 4, "mu", -1, 0, &rd->mu[i])) == LK_OK &&
	    (st = lk__io_get_int(rd, 5, "findex", &f)) == LK_OK)
		st = check_findex(rd, i, f);
	if (st != LK_OK)
		return st;
	rd->findex[i] = f;
	if (rd->mu[i] < 0)
		return lk__io_rfail(rd, LK_ERR_BOUNDS, "row %d: negative friction coefficient %.15g", i, rd->mu[i]);
	if (f < 0) {
		if (rd->lo[i] == INFINITY || rd->hi[i] == -INFINITY)
			return lk__io_rfail(rd, LK_ERR_NONFINITE, "row %d: bounds [%g, %g] are not valid", i, rd->lo[i],
			                    rd->hi[i]);
		if (rd->lo[i] > rd->hi[i])
			return lk__io_rfail(rd, LK_ERR_BOUNDS, "row %d: lo %.15g > hi %.15g", i, rd->lo[i], rd->hi[i]);
	}
	return LK_OK;
}

static lk_status read_rows(lk__io_reader *rd)
{
	int matrix = rd->form == LK_FORM_MATRIX;
	int64_t n = 0;
	lk_status st = lk__io_get_count(rd, "rows", rd->lim.max_rows, matrix ? MROW_FIELDS : ROW_FIELDS, &n);
	if (st != LK_OK)
		return st;
	rd->nrows = (int)n;
	size_t c = (size_t)n;
	rd->row_line = lk__io_alloc_array(c, sizeof *rd->row_line);
	if (!rd->row_line)
		return oom(rd, "the rows");
	if (matrix) {
		rd->q = lk__io_alloc_array(c, sizeof(double));
		rd->lo = lk__io_alloc_array(c, sizeof(double));
		rd->hi = lk__io_alloc_array(c, sizeof(double));
		rd->mu = lk__io_alloc_array(c, sizeof(double));
		rd->findex = lk__io_alloc_array(c, sizeof(int));
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
		if ((st = lk__io_expect_fields(rd, matrix ? MROW_FIELDS : ROW_FIELDS)) != LK_OK)
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
			return lk__io_rfail(rd, LK_ERR_FINDEX, "row %d: friction index %d points at another friction row", i,
			                    f);
		}
	}
	return LK_OK;
}

static lk_status read_entries(lk__io_reader *rd)
{
	int64_t nnz = 0;
	int64_t limit = rd->lim.max_nnz < INT_MAX ? rd->lim.max_nnz : INT_MAX;
	lk_status st = lk__io_get_count(rd, "entries", limit, ENTRY_FIELDS, &nnz);
	if (st != LK_OK)
		return st;
	int n = rd->nrows;
	long long header = rd->line;
	rd->row_ptr = calloc((size_t)n + 1, sizeof(int));
	rd->mark = lk__io_alloc_array((size_t)n, sizeof(int));
	rd->col = lk__io_alloc_array((size_t)nnz, sizeof(int));
	rd->val = lk__io_alloc_array((size_t)nnz, sizeof(double));
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
		if ((st = lk__io_expect_fields(rd, ENTRY_FIELDS)) != LK_OK)
			return st;
		int i, j;
		if ((st = lk__io_get_int(rd, 0, "row", &i)) != LK_OK ||
		    (st = lk__io_get_int(rd, 1, "column", &j)) != LK_OK ||
		    (st = lk__io_get_double(rd, 2, "value", -1, 0, &rd->val[k])) != LK_OK)
			return st;
		if (i < 0 || i >= n || j < 0 || j >= n)
			return lk__io_rfail(rd, LK_ERR_OUT_OF_RANGE, "entry %lld: (%d, %d) is outside the %d x %d matrix",
			                    (long long)k, i, j, n, n);
		if (i < prev)
			return lk__io_rfail(rd, LK_ERR_PARSE,
			                    "entry %lld: row %d after row %d (entries must be sorted by row)", (long long)k, i,
			                    prev);
		if (rd->mark[j] == i)
			return lk__io_rfail(rd, LK_ERR_PARSE, "entry %lld: A(%d, %d) appears twice", (long long)k, i, j);
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
static lk_status read_vector(lk__io_reader *rd, const char *section, double **out)
{
	int64_t n = 0;
	lk_status st = lk__io_get_count(rd, section, rd->lim.max_rows, 1, &n);
	if (st != LK_OK)
		return st;
	if (n != rd->nrows)
		return lk__io_rfail(rd, LK_ERR_PARSE, "%s: %lld values for %d rows", section, (long long)n, rd->nrows);
	*out = lk__io_alloc_array((size_t)n, sizeof(double));
	if (!*out)
		return oom(rd, section);
	for (int i = 0; i < (int)n; ++i) {
		if ((st = next_data(rd, section, n, i)) != LK_OK)
			return st;
		rd->item = section;
		rd->item_index = i;
		if ((st = lk__io_expect_fields(rd, 1)) != LK_OK ||
		    (st = lk__io_get_double(rd, 0, "value", -1, 0, &(*out)[i])) != LK_OK)
			return st;
	}
	return LK_OK;
}

/* Checks that a section may come now: once, in order, with what it needs before it. */
static lk_status check_section(lk__io_reader *rd, int sec)
{
	const char *name = sec_names[sec];
	if (rd->seen[sec])
		return lk__io_rfail(rd, LK_ERR_PARSE, "duplicate section '%s' (first on line %lld)", name, rd->seen[sec]);
	if (rd->last > sec)
		return lk__io_rfail(rd, LK_ERR_PARSE, "section '%s' must come before '%s' (line %lld)", name,
		                    sec_names[rd->last], rd->seen[rd->last]);
	if (sec <= LK__IO_SEC_FORM)
		return LK_OK;
	if (!rd->seen[LK__IO_SEC_FORM])
		return lk__io_rfail(rd, LK_ERR_PARSE, "missing section 'form' before '%s'", name);
	int matrix = rd->form == LK_FORM_MATRIX;
	if ((sec == LK__IO_SEC_BODIES && matrix) || (sec == LK__IO_SEC_ENTRIES && !matrix))
		return lk__io_rfail(rd, LK_ERR_PARSE, "section '%s' is not allowed in the %s form", name,
		                    matrix ? "matrix" : "row");
	if (sec == LK__IO_SEC_ROWS && !matrix && !rd->seen[LK__IO_SEC_BODIES])
		return lk__io_rfail(rd, LK_ERR_PARSE, "missing section 'bodies' before 'rows'");
	if (sec > LK__IO_SEC_ROWS && !rd->seen[LK__IO_SEC_ROWS])
		return lk__io_rfail(rd, LK_ERR_PARSE, "missing section 'rows' before '%s'", name);
	if (sec > LK__IO_SEC_ENTRIES && matrix && !rd->seen[LK__IO_SEC_ENTRIES])
		return lk__io_rfail(rd, LK_ERR_PARSE, "missing section 'entries' before '%s'", name);
	if (sec == LK__IO_SEC_END && !rd->seen[LK__IO_SEC_LAMBDA])
		return lk__io_rfail(rd, LK_ERR_PARSE, "missing section 'lambda' before 'end'");
	return LK_OK;
}

static lk_status read_magic(lk__io_reader *rd)
{
	lk_status st = LK_OK;
	int r = lk__io_read_line(rd, &st);
	if (r < 0)
		return st;
	if (r == 0) {
		rd->line = 1;
		return lk__io_rfail(rd, LK_ERR_PARSE, "empty file (expected '" LK__IO_MAGIC " %d')", LK_IO_FORMAT_VERSION);
	}
	lk__io_tokenize(rd);
	if (rd->ntok == 0 || strcmp(rd->tok[0], LK__IO_MAGIC) != 0)
		return lk__io_rfail(rd, LK_ERR_PARSE,
		                    "not an lcpkit problem file (the first line must be '" LK__IO_MAGIC " %d')",
		                    LK_IO_FORMAT_VERSION);
	rd->item = LK__IO_MAGIC;
	rd->item_index = -1;
	if ((st = lk__io_expect_fields(rd, 2)) != LK_OK)
		return st;
	int64_t v = 0;
	int of = 0;
	if (!lk__io_parse_int(rd->tok[1], &v, &of))
		return lk__io_rfail(rd, LK_ERR_PARSE, "format version '%.40s' is not a number", rd->tok[1]);
	if (of || v != LK_IO_FORMAT_VERSION)
		return lk__io_rfail(rd, LK_ERR_PARSE,
		                    "format version %.40s is not supported (this reader reads version %d)", rd->tok[1],
		                    LK_IO_FORMAT_VERSION);
	return LK_OK;
}

static lk_status parse(lk__io_reader *rd)
{
	lk_status st = read_magic(rd);
	if (st != LK_OK)
		return st;
	for (;;) {
		int r = lk__io_next_content(rd, &st);
		if (r < 0)
			return st;
		if (r == 0) {
			rd->line = lk__io_eof_line(rd);
			return lk__io_rfail(rd, LK_ERR_PARSE, "unexpected end of file (missing 'end')");
		}
		/* the source text is the raw rest of the line, so it is taken before tokenizing */
		const char *s = rd->buf;
		while (*s == ' ' || *s == '\t')
			++s;
		const char *text = NULL;
		if (!strncmp(s, "source", 6) && (s[6] == ' ' || s[6] == '\t' || s[6] == '\0'))
			text = s[6] ? s + 7 : s + 6;
		if (text) {
			if ((st = check_section(rd, LK__IO_SEC_SOURCE)) != LK_OK)
				return st;
			rd->seen[LK__IO_SEC_SOURCE] = rd->line;
			rd->last = LK__IO_SEC_SOURCE;
			size_t len = strlen(text);
			if (len >= sizeof rd->source)
				return lk__io_rfail(rd, LK_ERR_PARSE, "source text is %zu bytes long (at most %zu)", len,
				                    sizeof rd->source - 1);
			memcpy(rd->source, text, len + 1);
			continue;
		}
		lk__io_tokenize(rd);
		int sec = section_of(rd->tok[0]);
		if (sec < 0) {
			if (lk__io_is_decimal(rd->tok[0]) || (*rd->tok[0] == '-' && lk__io_is_digit(rd->tok[0][1])))
				return lk__io_rfail(rd, LK_ERR_PARSE, "expected a section name, found the number '%.40s'",
				                    rd->tok[0]);
			return lk__io_rfail(rd, LK_ERR_PARSE, "unknown section '%.40s'", rd->tok[0]);
		}
		if ((st = check_section(rd, sec)) != LK_OK)
			return st;
		rd->seen[sec] = rd->line;
		rd->last = sec;
		switch (sec) {
		case LK__IO_SEC_H: st = read_h(rd); break;
		case LK__IO_SEC_FORM: st = read_form(rd); break;
		case LK__IO_SEC_BODIES: st = read_bodies(rd); break;
		case LK__IO_SEC_ROWS: st = read_rows(rd); break;
		case LK__IO_SEC_ENTRIES: st = read_entries(rd); break;
		case LK__IO_SEC_LAMBDA:
			if ((st = read_vector(rd, "lambda", &rd->lambda)) == LK_OK &&
			    (st = lk_problem_set_lambda(rd->p, rd->lambda, rd->nrows)) != LK_OK)
				st = pfail(rd, st);
			break;
		case LK__IO_SEC_SOLUTION:
			st = read_vector(rd, "solution", &rd->solution);
			rd->has_solution = st == LK_OK;
			break;
		case LK__IO_SEC_END:
			rd->item = "end";
			rd->item_index = -1;
			if ((st = lk__io_expect_fields(rd, 1)) != LK_OK)
				return st;
			if ((st = lk_problem_validate(rd->p)) != LK_OK)
				return pfail(rd, st);
			r = lk__io_next_content(rd, &st);
			if (r < 0)
				return st;
			if (r > 0)
				return lk__io_rfail(rd, LK_ERR_PARSE, "unexpected content after 'end' (line %lld)",
				                    rd->seen[LK__IO_SEC_END]);
			return LK_OK;
		default: break;
		}
		if (st != LK_OK)
			return st;
	}
}

static void reader_free(lk__io_reader *rd)
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
		lk__io_set_err(err, err_size, "read: negative limit");
		return LK_ERR_INVALID_ARGUMENT;
	}
	return LK_OK;
}

lk_status lk_problem_read_buffer(const char *data, size_t size, const char *name, const lk_io_limits *limits,
                                 lk_problem **out, lk_problem_extra *extra, char *err, size_t err_size)
{
	lk__io_set_err(err, err_size, "%s", "");
	if (extra)
		memset(extra, 0, sizeof *extra);
	if (!out) {
		lk__io_set_err(err, err_size, "read: output is NULL");
		return LK_ERR_INVALID_ARGUMENT;
	}
	*out = NULL;
	if (!data && size > 0) {
		lk__io_set_err(err, err_size, "read: data is NULL");
		return LK_ERR_INVALID_ARGUMENT;
	}
	if (!name)
		name = "(buffer)";
	lk_io_limits lim = limits ? *limits : lk_default_io_limits();
	lk_status st = check_limits(&lim, err, err_size);
	if (st != LK_OK)
		return st;
	if ((uint64_t)size > (uint64_t)lim.max_bytes) {
		lk__io_set_err(err, err_size, "%s: %zu bytes exceed the limit of %lld bytes", name, size,
		               (long long)lim.max_bytes);
		return LK_ERR_LIMIT;
	}
	lk__io_reader *rd = calloc(1, sizeof *rd);
	if (!rd) {
		lk__io_set_err(err, err_size, "%s: out of memory", name);
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

	lk__io_c_numeric loc;
	lk__io_c_numeric_enter(&loc);
	st = parse(rd);
	lk__io_c_numeric_leave(&loc);

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
	lk__io_set_err(err, err_size, "%s", "");
	if (extra)
		memset(extra, 0, sizeof *extra);
	if (!out || !path) {
		lk__io_set_err(err, err_size, "read: %s is NULL", out ? "path" : "output");
		return LK_ERR_INVALID_ARGUMENT;
	}
	*out = NULL;
	lk_io_limits lim = limits ? *limits : lk_default_io_limits();
	lk_status st = check_limits(&lim, err, err_size);
	if (st != LK_OK)
		return st;
	FILE *f = fopen(path, "rb");
	if (!f) {
		lk__io_set_err(err, err_size, "%s: cannot open: %s", path, strerror(errno));
		return LK_ERR_IO;
	}
	/* read in chunks up to the limit: the size a file claims (or a pipe) is not trusted */
	size_t cap = 1 << 16, len = 0;
	struct stat sb;
	if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode)) {
		if ((uint64_t)sb.st_size > (uint64_t)lim.max_bytes) {
			fclose(f);
			lk__io_set_err(err, err_size, "%s: %lld bytes exceed the limit of %lld bytes", path,
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
				lk__io_set_err(err, err_size, "%s: more than the limit of %lld bytes", path,
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
				lk__io_set_err(err, err_size, "%s: read error: %s", path, strerror(errno));
				st = LK_ERR_IO;
			}
			break;
		}
	}
	fclose(f);
	if (st == LK_ERR_NO_MEMORY)
		lk__io_set_err(err, err_size, "%s: out of memory reading the file", path);
	if (st == LK_OK && (uint64_t)len > (uint64_t)lim.max_bytes) {
		lk__io_set_err(err, err_size, "%s: more than the limit of %lld bytes", path, (long long)lim.max_bytes);
		st = LK_ERR_LIMIT;
	}
	if (st == LK_OK)
		st = lk_problem_read_buffer(buf, len, path, &lim, out, extra, err, err_size);
	free(buf);
	return st;
}

#include "cli_util.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int lk_cli_is_tty(FILE *f)
{
	return isatty(fileno(f));
}

void lk_cli_progress(const char *label, int done, int total)
{
	if (!lk_cli_is_tty(stderr) || total <= 0)
		return;
	int width = 30, filled = (int)((long long)width * done / total);
	fprintf(stderr, "\r%-24.24s [", label);
	for (int i = 0; i < width; ++i)
		fputc(i < filled ? '#' : ' ', stderr);
	fprintf(stderr, "] %d/%d", done, total);
	if (done >= total)
		fputc('\n', stderr);
	fflush(stderr);
}

int lk_cli_int(const char *s, int lo, int hi, int *out)
{
	if (!s || !*s)
		return 0;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (*end || errno || v < lo || v > hi)
		return 0;
	*out = (int)v;
	return 1;
}

int lk_cli_double(const char *s, double *out)
{
	if (!s || !*s)
		return 0;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*end || errno || !isfinite(v))
		return 0;
	*out = v;
	return 1;
}

void lk_cli_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; ++s) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void lk_cli_json_number(FILE *f, double x)
{
	if (isfinite(x))
		fprintf(f, "%.17g", x);
	else
		fputs("null", f);
}

int lk_cli_mkdirs(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof buf) {
		errno = n == 0 ? ENOENT : ENAMETOOLONG; /* what mkdir(2) says of such a path, for the caller's message */
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; ++p) {
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0777) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	}
	if (mkdir(buf, 0777) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double lk_cli_median(double *v, int n)
{
	if (n <= 0)
		return NAN;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The value at fraction f of v[0..n), sorted ascending, between its neighbours. */
static double sorted_quantile(const double *v, int n, double f)
{
	const double at = f * (n - 1);
	const int i = (int)at;
	return i + 1 < n ? v[i] + (at - i) * (v[i + 1] - v[i]) : v[n - 1];
}

lk_cli_spread lk_cli_spread_of(double *v, int n)
{
	lk_cli_spread s = {NAN, NAN, NAN, NAN};
	if (n <= 0)
		return s;
	s.median = lk_cli_median(v, n);
	s.min = v[0];
	s.q25 = sorted_quantile(v, n, 0.25);
	s.q75 = sorted_quantile(v, n, 0.75);
	return s;
}

const char *lk_cli_quartiles(const lk_cli_spread *s, double scale, char *buf, size_t size)
{
	snprintf(buf, size, "%.3f-%.3f", scale * s->q25, scale * s->q75);
	return buf;
}

/* One line on stderr: "lcpkit CMD: " and the kind ("note: " or ""), then the message. */
static void say(const char *cmd, const char *kind, const char *fmt, va_list ap)
{
	fprintf(stderr, "lcpkit %s: %s", cmd, kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void lk_cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(cmd, "", fmt, ap);
	va_end(ap);
}

int lk_cli_quiet(void)
{
	const char *q = getenv("LCPKIT_QUIET");
	return q && !strcmp(q, "1");
}

void lk_cli_note(const char *cmd, const char *fmt, ...)
{
	if (lk_cli_quiet())
		return;
	va_list ap;
	va_start(ap, fmt);
	say(cmd, "note: ", fmt, ap);
	va_end(ap);
}

/* The option value after argv[*i] (advancing *i), or NULL with an error printed. */
static const char *option_value(const char *cmd, int argc, char **argv, int *i)
{
	if (*i + 1 >= argc) {
		lk_cli_error(cmd, "option %s needs a value", argv[*i]);
		return NULL;
	}
	return argv[++*i];
}

int lk_cli_first_word(int argc, char **argv, void (*usage)(FILE *))
{
	if (argc < 2) {
		usage(stderr);
		return LK_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return LK_EXIT_OK;
	}
	return -1;
}

int lk_cli_split_specs(const char *list, char out[][LK_CLI_SPEC_LEN], int max)
{
	int n = 0;
	for (const char *s = list; *s;) {
		size_t len = strcspn(s, ",");
		if (n > 0 && memchr(s, '=', len) && !memchr(s, ':', len) && !memchr(s, '@', len)) {
			size_t used = strlen(out[n - 1]);
			snprintf(out[n - 1] + used, LK_CLI_SPEC_LEN - used, ",%.*s", (int)len, s);
		} else if (len > 0) {
			if (n >= max)
				return -1;
			snprintf(out[n++], LK_CLI_SPEC_LEN, "%.*s", (int)len, s);
		}
		s += len;
		if (*s == ',')
			++s;
	}
	return n;
}

/* "a whole number from 1 to 64", "a number from 0 to 1", "a number of at least 0", "a positive number". */
static void describe_range(const lk_cli_option *o, char *buf, size_t size)
{
	if (o->what)
		snprintf(buf, size, "%s", o->what);
	else if (o->kind == LK_CLI_INT)
		snprintf(buf, size, "a whole number from %.0f to %.0f", o->lo, o->hi);
	else if (o->lo > 0 && o->lo <= DBL_MIN && isinf(o->hi))
		snprintf(buf, size, "a positive number");
	else if (isinf(o->hi))
		snprintf(buf, size, "a number of at least %g", o->lo);
	else
		snprintf(buf, size, "a number from %g to %g", o->lo, o->hi);
}

/* Option o with the value v (NULL for a flag): 1 taken, or 0 with the error printed. */
static int take_option(const char *cmd, const lk_cli_option *o, const char *v)
{
	char what[160];
	switch (o->kind) {
	case LK_CLI_FLAG:
		*(int *)o->out = 1;
		return 1;
	case LK_CLI_STRING:
		*(const char **)o->out = v;
		return 1;
	case LK_CLI_INT:
		/* the range as whole numbers: lo and hi of an int option are whole and within int */
		if (lk_cli_int(v, (int)o->lo, (int)o->hi, (int *)o->out))
			return 1;
		break;
	case LK_CLI_DOUBLE: {
		double x;
		if (lk_cli_double(v, &x) && x >= o->lo && x <= o->hi) {
			*(double *)o->out = x;
			return 1;
		}
		break;
	}
	case LK_CLI_CHOICE: {
		for (int k = 0; o->choices[k]; ++k)
			if (!strcmp(v, o->choices[k])) {
				*(int *)o->out = k;
				return 1;
			}
		/* "a, b or c" */
		size_t len = 0;
		what[0] = '\0';
		for (int k = 0; o->choices[k] && len < sizeof what; ++k)
			len += (size_t)snprintf(what + len, sizeof what - len, "%s%s",
			                        k == 0 ? "" : o->choices[k + 1] ? ", " : " or ", o->choices[k]);
		lk_cli_error(cmd, "%s needs %s, got '%s'", o->name, o->what ? o->what : what, v);
		return 0;
	}
	case LK_CLI_CALL: {
		const int r = o->call(o->out, v);
		if (r != 0)
			return r > 0;
		if (!o->what) {
			lk_cli_error(cmd, "bad value '%s' for %s", v, o->name);
			return 0;
		}
		break;
	}
	}
	describe_range(o, what, sizeof what);
	lk_cli_error(cmd, "%s needs %s, got '%s'", o->name, what, v);
	return 0;
}

int lk_cli_parse(const char *cmd, int argc, char **argv, int first, const lk_cli_option *opts,
                 void (*usage)(FILE *), int (*positional)(void *ctx, const char *arg), void *ctx)
{
	for (int i = first; i < argc; ++i) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return LK_EXIT_OK;
		}
		const lk_cli_option *o = opts;
		while (o->name && strcmp(o->name, a))
			++o;
		if (o->name) {
			const char *v = NULL;
			if (o->kind != LK_CLI_FLAG && !(v = option_value(cmd, argc, argv, &i)))
				return LK_EXIT_USAGE;
			if (!take_option(cmd, o, v))
				return LK_EXIT_USAGE;
			continue;
		}
		if (a[0] == '-' && a[1]) {
			lk_cli_error(cmd, "unknown option '%s' (see lcpkit %s --help)", a, cmd);
			return LK_EXIT_USAGE;
		}
		const int r = positional ? positional(ctx, a) : 0;
		if (r == 0)
			lk_cli_error(cmd, "unexpected argument '%s' (see lcpkit %s --help)", a, cmd);
		if (r <= 0)
			return LK_EXIT_USAGE;
	}
	return -1;
}

int lk_cli_one_argument(void *ctx, const char *arg)
{
	const char **slot = ctx;
	if (*slot)
		return 0;
	*slot = arg;
	return 1;
}

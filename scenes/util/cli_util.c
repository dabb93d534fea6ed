#include "cli_util.h"

#include <errno.h>
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

const char *lk_cli_value(const char *cmd, int argc, char **argv, int *i)
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

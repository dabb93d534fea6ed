/* JUnit XML reports (junit.h). */
#include "junit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The length of the UTF-8 sequence at s (1-4), or 0 when s does not start a well-formed one that XML allows
 * (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF; XML 1.0: no U+FFFE, U+FFFF). */
static int utf8_length(const unsigned char *s)
{
	unsigned c = s[0];
	int n;
	unsigned cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (int k = 1; k < n; ++k) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff) || cp >= 0xfffe)) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* Text for an attribute value or an element: markup escaped, control characters XML 1.0 cannot hold and
 * malformed UTF-8 replaced by '?'. Newlines in an attribute become spaces (an attribute is one line). */
static void put_text(FILE *f, const char *text, int attribute)
{
	const unsigned char *s = (const unsigned char *)(text ? text : "");
	while (*s) {
		unsigned c = *s;
		int n = utf8_length(s);
		if (n == 0) {
			fputc('?', f);
			++s;
			continue;
		}
		if (n > 1) {
			fwrite(s, 1, (size_t)n, f);
			s += n;
			continue;
		}
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs(attribute ? "&quot;" : "\"", f); break;
		case '\n':
		case '\r': fputs(attribute ? " " : "\n", f); break;
		case '\t': fputc(attribute ? ' ' : '\t', f); break;
		default: fputc(c < 0x20 ? '?' : (int)c, f); break;
		}
		++s;
	}
}

static void put_attr(FILE *f, const char *key, const char *value)
{
	fprintf(f, " %s=\"", key);
	put_text(f, value, 1);
	fputc('"', f);
}

/* tests, failures, errors, skipped and time of the cases of one suite (NULL: of all) */
static void put_counts(FILE *f, const lk_junit_case *c, int n, const char *suite)
{
	int count[4] = {0, 0, 0, 0}, tests = 0;
	double seconds = 0;
	for (int i = 0; i < n; ++i)
		if (!suite || !strcmp(c[i].suite, suite)) {
			++tests;
			++count[c[i].outcome];
			seconds += c[i].seconds;
		}
	fprintf(f, " tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.6f\"", tests,
	        count[LK_JUNIT_FAILURE], count[LK_JUNIT_ERROR], count[LK_JUNIT_SKIPPED], seconds);
}

static void put_case(FILE *f, const lk_junit_case *c)
{
	static const char *const element[] = {NULL, "failure", "error", "skipped"};
	fputs("    <testcase", f);
	put_attr(f, "name", c->name);
	put_attr(f, "classname", c->classname);
	fprintf(f, " time=\"%.6f\"", c->seconds);
	if (c->outcome == LK_JUNIT_PASSED) {
		/* a pass keeps its numbers in its output, where CI systems show them */
		if (c->details && c->details[0]) {
			fputs(">\n      <system-out>", f);
			put_text(f, c->details, 0);
			fputs("</system-out>\n    </testcase>\n", f);
		} else {
			fputs("/>\n", f);
		}
		return;
	}
	fputs(">\n      <", f);
	fputs(element[c->outcome], f);
	put_attr(f, "message", c->message);
	if (c->outcome != LK_JUNIT_SKIPPED)
		put_attr(f, "type", c->outcome == LK_JUNIT_FAILURE ? "regression" : "error");
	if (c->details && c->details[0]) {
		fputc('>', f);
		put_text(f, c->details, 0);
		fprintf(f, "</%s>\n", element[c->outcome]);
	} else {
		fputs("/>\n", f);
	}
	fputs("    </testcase>\n", f);
}

lk_status lk_junit_write(const char *path, const char *name, const lk_junit_case *cases, int ncases,
                         const char *const *prop_names, const char *const *prop_values, int nprops, char *err,
                         size_t esz)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
		snprintf(err, esz, "%s: path too long", path);
		return LK_ERR_IO;
	}
	FILE *f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, esz, "cannot write %s: %s", path, strerror(errno));
		return LK_ERR_IO;
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", f);
	put_attr(f, "name", name);
	put_counts(f, cases, ncases, NULL);
	fputs(">\n", f);
	for (int i = 0; i < ncases; ++i) {
		int first = 1;
		for (int k = 0; k < i && first; ++k)
			first = strcmp(cases[k].suite, cases[i].suite) != 0;
		if (!first)
			continue;
		fputs("  <testsuite", f);
		put_attr(f, "name", cases[i].suite);
		put_counts(f, cases, ncases, cases[i].suite);
		fputs(">\n", f);
		if (nprops > 0) {
			fputs("    <properties>\n", f);
			for (int k = 0; k < nprops; ++k) {
				fputs("      <property", f);
				put_attr(f, "name", prop_names[k]);
				put_attr(f, "value", prop_values[k]);
				fputs("/>\n", f);
			}
			fputs("    </properties>\n", f);
		}
		for (int k = i; k < ncases; ++k)
			if (!strcmp(cases[k].suite, cases[i].suite))
				put_case(f, &cases[k]);
		fputs("  </testsuite>\n", f);
	}
	fputs("</testsuites>\n", f);
	int bad = ferror(f);
	if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
		snprintf(err, esz, "cannot write %s: %s", path, strerror(errno));
		remove(tmp);
		return LK_ERR_IO;
	}
	return LK_OK;
}

/* JUnit XML, the test report format CI systems read (CTest dashboards, GitLab, Jenkins, GitHub's test
 * reports): testsuites > testsuite > testcase, each case passed, failed, in error or skipped. */
#ifndef LCPKIT_JUNIT_H
#define LCPKIT_JUNIT_H

#include "lcpkit/base.h"

typedef enum lk_junit_outcome {
	LK_JUNIT_PASSED = 0,
	LK_JUNIT_FAILURE, /* the check ran and found a regression */
	LK_JUNIT_ERROR,   /* the check could not run (an unreadable file, a solve refused) */
	LK_JUNIT_SKIPPED  /* nothing to check against */
} lk_junit_outcome;

typedef struct lk_junit_case {
	const char *suite;     /* the suite it belongs to; cases of one suite need not be adjacent */
	const char *classname;
	const char *name;
	lk_junit_outcome outcome;
	const char *message;   /* one line: the failure's, error's or skip's reason ("" for a pass) */
	const char *details;   /* the failure's, error's or skip's text, a pass's <system-out>, any number of
	                        * lines (may be "") */
	double seconds;
} lk_junit_case;

/* Writes the cases as one <testsuites> named `name`, one <testsuite> per distinct suite in the order each
 * first appears, each with the properties (names[i], values[i]) given; text is escaped, and bytes that are
 * not UTF-8 become '?'. Written to a temporary file beside `path` and renamed. LK_ERR_IO with a message in
 * err when the file cannot be written. */
lk_status lk_junit_write(const char *path, const char *name, const lk_junit_case *cases, int ncases,
                         const char *const *prop_names, const char *const *prop_values, int nprops, char *err,
                         size_t err_size);

#endif

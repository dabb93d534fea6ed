/* The command line's one option parser (scenes/util/cli_util.h, lk_cli_parse): every kind of option taken,
 * and every refusal a usage error that leaves the values as they were. */
#include "cli_util.h"
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int usage_calls;

static void usage(FILE *f)
{
	(void)f;
	++usage_calls;
}

/* What one table writes. */
typedef struct parsed {
	int flag, n, choice;
	double x;
	const char *text, *file;
	int calls;
} parsed;

static int count_call(void *arg, const char *v)
{
	parsed *p = arg;
	if (!strcmp(v, "bad"))
		return 0;
	++p->calls;
	return 1;
}

/* Parses the arguments (after a command name) into a fresh parsed; the status of lk_cli_parse. */
static int parse(parsed *p, int argc, const char **args)
{
	static const char *const colours[] = {"red", "green", "blue", NULL};
	*p = (parsed){.n = -1, .choice = -1, .x = -1};
	const lk_cli_option opts[] = {
		LK_CLI_OPT_FLAG("--flag", &p->flag),
		LK_CLI_OPT_INT("--n", &p->n, 1, 10),
		LK_CLI_OPT_DOUBLE("--x", &p->x, DBL_MIN, 5, NULL),
		LK_CLI_OPT_STRING("--text", &p->text),
		LK_CLI_OPT_CHOICE("--colour", &p->choice, colours),
		LK_CLI_OPT_CALL("--call", p, count_call, NULL),
		LK_CLI_OPT_END};
	char *argv[16] = {"cmd"};
	for (int k = 0; k < argc; ++k)
		argv[k + 1] = (char *)args[k];
	return lk_cli_parse("test", argc + 1, argv, 1, opts, usage, lk_cli_one_argument, &p->file);
}

static void test_every_kind_taken(void **state)
{
	(void)state;
	parsed p;
	const char *args[] = {"--n", "7", "file.lkp", "--x", "2.5", "--flag", "--text", "hello",
	                      "--colour", "blue", "--call", "a", "--call", "b"};
	assert_int_equal(parse(&p, 14, args), -1);
	assert_int_equal(p.flag, 1);
	assert_int_equal(p.n, 7);
	assert_double_equal(p.x, 2.5, 0);
	assert_string_equal(p.text, "hello");
	assert_int_equal(p.choice, 2);
	assert_int_equal(p.calls, 2);
	assert_string_equal(p.file, "file.lkp");
	/* nothing given: nothing written */
	assert_int_equal(parse(&p, 0, args), -1);
	assert_int_equal(p.flag, 0);
	assert_int_equal(p.n, -1);
	assert_null(p.file);
}

static void test_refusals_are_usage_errors(void **state)
{
	(void)state;
	static const char *const bad[][2] = {
		{"--n", "0"},        /* below the range */
		{"--n", "11"},       /* above it */
		{"--n", "3.5"},      /* not whole */
		{"--x", "0"},        /* not positive */
		{"--x", "nan"},      /* not finite */
		{"--colour", "red,"}, /* not a choice */
		{"--call", "bad"},   /* refused by the call */
		{"--bogus", "1"},    /* unknown */
		{"-n", "1"},         /* unknown: a single dash is not a spelling of --n */
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
		parsed p;
		const char *args[2] = {bad[k][0], bad[k][1]};
		assert_int_equal(parse(&p, 2, args), LK_EXIT_USAGE);
		assert_int_equal(p.n, -1);
		assert_true(p.x == -1);
		assert_int_equal(p.choice, -1);
		assert_int_equal(p.calls, 0);
	}
	parsed p;
	const char *missing[] = {"--n"};
	assert_int_equal(parse(&p, 1, missing), LK_EXIT_USAGE);
	const char *two_files[] = {"a.lkp", "b.lkp"};
	assert_int_equal(parse(&p, 2, two_files), LK_EXIT_USAGE);
	assert_string_equal(p.file, "a.lkp");
}

static void test_help_prints_usage(void **state)
{
	(void)state;
	parsed p;
	usage_calls = 0;
	const char *help[] = {"--n", "2", "--help", "--bogus"};
	assert_int_equal(parse(&p, 4, help), LK_EXIT_OK);
	const char *h[] = {"-h"};
	assert_int_equal(parse(&p, 1, h), LK_EXIT_OK);
	assert_int_equal(usage_calls, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind_taken),
		cmocka_unit_test(test_refusals_are_usage_errors),
		cmocka_unit_test(test_help_prints_usage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

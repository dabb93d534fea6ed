/* Fuzz target: the command line of `lcpkit solve` (lk_solve_parse_args in scenes/cli/solve_args.c) and the
 * solver spec strings it hands to lk_config_parse.
 *
 * The input is split at line feeds: the first line is a spec, parsed on its own; all lines then form the
 * argument vector after "solve". Checked: no crash or undefined behaviour; a spec that parses gives a
 * configuration that lk_config_validate accepts, whose canonical spec (lk_config_format) parses back to the
 * same canonical spec; a refused spec comes with a message; a command line that parses names at least one
 * file and a valid configuration. Nothing is read or written: the parser never touches the files. */
#include "cli.h"
#include "fuzz_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 64

static void check_spec(const char *spec)
{
	lk_solver_config cfg, again;
	char err[512], canon[256], canon2[256];
	err[0] = '\0';
	if (lk_config_parse(spec, &cfg, err, sizeof err) != LK_OK) {
		if (!err[0])
			lk_fuzz_fail("a refused spec gave no message");
		return;
	}
	if (lk_config_validate(&cfg, err, sizeof err) != LK_OK) {
		fprintf(stderr, "spec '%s': %s\n", spec, err);
		lk_fuzz_fail("a parsed spec does not validate");
	}
	if (lk_config_format(&cfg, canon, sizeof canon) != LK_OK)
		return; /* too long for the buffer: nothing to compare */
	if (lk_config_parse(canon, &again, err, sizeof err) != LK_OK) {
		fprintf(stderr, "spec '%s' -> '%s': %s\n", spec, canon, err);
		lk_fuzz_fail("a canonical spec does not parse");
	}
	if (lk_config_format(&again, canon2, sizeof canon2) != LK_OK || strcmp(canon, canon2) != 0) {
		fprintf(stderr, "spec '%s' -> '%s' -> '%s'\n", spec, canon, canon2);
		lk_fuzz_fail("the canonical spec is not a fixed point");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	char *argv[MAX_ARGS + 2];
	int argc = 0;
	argv[argc++] = "solve";
	char *line = buf;
	for (;;) {
		char *nl = memchr(line, '\n', (size_t)(buf + size - line));
		if (nl)
			*nl = '\0';
		if (argc == 1)
			check_spec(line);
		if (argc <= MAX_ARGS)
			argv[argc++] = line;
		if (!nl)
			break;
		line = nl + 1;
	}
	argv[argc] = NULL;
	lk_solve_args args;
	int rc = lk_solve_parse_args(argc, argv, &args);
	if (rc < 0) {
		char err[512];
		if (args.nfiles < 1 || !args.files || lk_config_validate(&args.cfg, err, sizeof err) != LK_OK)
			lk_fuzz_fail("a parsed command line has no file or an invalid configuration");
		for (int i = 0; i < args.nfiles; ++i)
			if (!args.files[i])
				lk_fuzz_fail("a parsed command line has a NULL file");
	} else if (rc != LK_EXIT_OK && rc != LK_EXIT_USAGE && rc != LK_EXIT_FAIL) {
		lk_fuzz_fail("unexpected exit status");
	}
	free((void *)args.files);
	free(buf);
	return 0;
}

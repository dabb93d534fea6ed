/* Replays a fuzz target's seed corpus (tests/fuzz/corpus/TARGET) and its regression inputs
 * (tests/fuzz/regress/TARGET: every input that once crashed or broke an invariant) through the target's
 * LLVMFuzzerTestOneInput, in the ordinary build and under its sanitizers. A broken invariant aborts. */
#include "fuzz.h"
#include "test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef LK_FUZZ_TARGET
#error "LK_FUZZ_TARGET names the target's corpus directory"
#endif

static int replay_dir(const char *kind)
{
	const char *root = getenv("LK_FUZZ_DIR");
	assert_non_null(root);
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/%s/%s", root, kind, LK_FUZZ_TARGET);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int count = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char path[2048];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		fseek(f, 0, SEEK_END);
		long size = ftell(f);
		fseek(f, 0, SEEK_SET);
		assert_true(size >= 0);
		uint8_t *buf = malloc((size_t)size + 1);
		assert_non_null(buf);
		assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, (size_t)size);
		free(buf);
		++count;
	}
	closedir(d);
	return count;
}

static void test_corpus(void **state)
{
	(void)state;
	/* an empty corpus would make this test pass without running anything */
	assert_true(replay_dir("corpus") >= 3);
}

static void test_regressions(void **state)
{
	(void)state;
	int n = replay_dir("regress");
	assert_true(n >= 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_regressions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* `lcpkit compare` end to end: table, CSVs, PNGs of the expected size, JSON that matches the CSVs, and
 * bad input rejected with status 2 and nothing written. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *bin(void)
{
	const char *b = getenv("LK_BIN");
	return b ? b : "./lcpkit";
}

/* runs a command, returns its exit status and its stdout (malloc'd) */
static int run(const char *cmd, char **out)
{
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	size_t n;
	while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 1024) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[len] = '\0';
	int st = pclose(p);
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* the number after "key": in s (the first occurrence at or after s) */
static double json_number(const char *s, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\": ", key);
	const char *p = strstr(s, pat);
	if (!p)
		fail_msg("no %s in JSON", key);
	return strtod(p + strlen(pat), NULL);
}

static void json_string(const char *s, const char *key, char *out, size_t n)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\": \"", key);
	const char *p = strstr(s, pat);
	if (!p)
		fail_msg("no %s in JSON", key);
	p += strlen(pat);
	size_t k = 0;
	while (*p && *p != '"' && k + 1 < n)
		out[k++] = *p++;
	out[k] = '\0';
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* a PNG's width and height from its IHDR chunk */
static void png_size(const char *path, int *w, int *h)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("missing %s", path);
	unsigned char b[24];
	assert_int_equal(fread(b, 1, 24, f), 24);
	fclose(f);
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	assert_memory_equal(b, sig, 8);
	assert_memory_equal(b + 12, "IHDR", 4);
	*w = (b[16] << 24) | (b[17] << 16) | (b[18] << 8) | b[19];
	*h = (b[20] << 24) | (b[21] << 16) | (b[22] << 8) | b[23];
}

static void test_compare_outputs(void **state)
{
	(void)state;
	char dir[] = "/tmp/lk-compare-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char cmd[1024], *out;
	snprintf(cmd, sizeof cmd, "%s compare --scene boxstack:n=3 --solvers pgs,psor --time 2 --iters 10 --out %s/rep --json",
	         bin(), dir);
	assert_int_equal(run(cmd, &out), 0);
	/* every run's JSON summary agrees with its CSV */
	int runs = 0;
	for (const char *r = strstr(out, "{\"scene\""); r; r = strstr(r + 1, "{\"scene\"")) {
		++runs;
		char csv[512], solver[64];
		json_string(r, "csv", csv, sizeof csv);
		json_string(r, "solver", solver, sizeof solver);
		double steps = json_number(r, "steps");
		assert_double_equal(steps, 120, 0); /* 2 s at 60 Hz */
		FILE *f = fopen(csv, "r");
		if (!f)
			fail_msg("missing %s", csv);
		char line[1024];
		assert_non_null(fgets(line, sizeof line, f));
		assert_non_null(strstr(line, "step,time,solver_ms,step_ms,iterations,res,max_penetration"));
		double solver_ms[200], res[200], pen_max = 0, res_max = 0, ke = 0;
		int n = 0;
		while (fgets(line, sizeof line, f) && n < 200) {
			double t, sm, stm, it, rs, pen, e, top;
			int k;
			assert_int_equal(sscanf(line, "%d,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &k, &t, &sm, &stm, &it, &rs, &pen, &e, &top), 9);
			solver_ms[n] = sm;
			res[n] = rs;
			res_max = fmax(res_max, rs);
			pen_max = fmax(pen_max, pen);
			ke = e;
			++n;
		}
		fclose(f);
		assert_int_equal(n, 120);
		/* the CSV keeps 6 decimals of milliseconds, the JSON 17 digits */
		assert_double_equal(json_number(r, "solver_ms_median"), median(solver_ms, n), 1e-6);
		assert_double_equal(json_number(r, "res_median"), median(res, n), 1e-8 * (1 + median(res, n)));
		assert_double_equal(json_number(r, "res_max"), res_max, 1e-8 * (1 + res_max));
		assert_double_equal(json_number(r, "max_penetration"), pen_max, 1e-8);
		assert_double_equal(json_number(r, "kinetic_energy_end"), ke, 1e-8 * (1 + ke));
		assert_double_equal(json_number(r, "iterations"), 10, 0);
	}
	assert_true(runs >= 2);
	/* plots and pictures: valid PNGs of the documented sizes */
	int w, h;
	snprintf(cmd, sizeof cmd, "%s/rep/boxstack-residual.png", dir);
	png_size(cmd, &w, &h);
	assert_int_equal(w, 900);
	assert_int_equal(h, 520);
	snprintf(cmd, sizeof cmd, "%s/rep/boxstack-convergence.png", dir);
	png_size(cmd, &w, &h);
	assert_int_equal(w, 900);
	snprintf(cmd, sizeof cmd, "%s/rep/boxstack-frames.png", dir);
	png_size(cmd, &w, &h);
	/* one column per run (220 px) and a 60 px label column; rows at 1 and 2 s */
	assert_int_equal(w, 60 + runs * 220);
	assert_int_equal(h, 28 + 2 * 220);
	snprintf(cmd, sizeof cmd, "%s/rep/report.md", dir);
	struct stat sb;
	assert_int_equal(stat(cmd, &sb), 0);
	assert_true(sb.st_size > 200);
	free(out);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_compare_bad_input(void **state)
{
	(void)state;
	char dir[] = "/tmp/lk-compare-XXXXXX";
	assert_non_null(mkdtemp(dir));
	const char *bad[] = {"--scene nosuchscene", "--solvers pgs,nosuchsolver", "--engine havok",
	                     "--scene boxstack:q=1", "--time -1", "--iters 0", "--bogus"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
		char cmd[1024], *out;
		snprintf(cmd, sizeof cmd, "%s compare %s --out %s/rep 2>%s/err", bin(), bad[i], dir, dir);
		assert_int_equal(run(cmd, &out), 2);
		free(out);
		struct stat sb;
		snprintf(cmd, sizeof cmd, "%s/rep", dir);
		assert_int_not_equal(stat(cmd, &sb), 0); /* nothing written */
		snprintf(cmd, sizeof cmd, "%s/err", dir);
		FILE *f = fopen(cmd, "r");
		char line[1024] = "";
		assert_non_null(f);
		assert_non_null(fgets(line, sizeof line, f));
		fclose(f);
		assert_non_null(strstr(line, "lcpkit compare: "));
	}
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare_outputs),
		cmocka_unit_test(test_compare_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

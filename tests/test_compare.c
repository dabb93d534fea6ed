/* `lcpkit compare` end to end: table, CSVs, PNGs of the expected size, JSON that matches the CSVs, and
 * bad input rejected with status 2 and nothing written. */
#include "test_util.h"

#include <math.h>
#include <stdarg.h>
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

/* Field k of a CSV line (quoted fields may hold commas) into buf. */
static void csv_field(const char *line, int k, char *buf, size_t size)
{
	int quoted = 0, at = 0;
	size_t n = 0;
	for (const char *c = line; *c && *c != '\n'; ++c) {
		if (*c == '"') {
			quoted = !quoted;
			continue;
		}
		if (*c == ',' && !quoted) {
			++at;
			continue;
		}
		if (at == k && n + 1 < size)
			buf[n++] = *c;
	}
	buf[n] = '\0';
}

/* The fields of a CSV line (quoted fields may hold commas). */
static int csv_field_count(const char *line)
{
	int fields = 1, quoted = 0;
	for (const char *c = line; *c && *c != '\n'; ++c) {
		quoted ^= *c == '"';
		fields += *c == ',' && !quoted;
	}
	return fields;
}

/* The column of `name` in a CSV header line; fails the test where there is none. */
static int csv_column(const char *header, const char *name)
{
	const int fields = csv_field_count(header);
	char buf[128];
	for (int k = 0; k < fields; ++k) {
		csv_field(header, k, buf, sizeof buf);
		if (!strcmp(buf, name))
			return k;
	}
	fail_msg("no column %s in %s", name, header);
	return -1;
}

/* Field `k` of a CSV line as a number. */
static double csv_number(const char *line, int k)
{
	char buf[128];
	csv_field(line, k, buf, sizeof buf);
	return strtod(buf, NULL);
}

/* Makes the temporary folder dir (a mkdtemp template) and runs `lcpkit ARGS`, ARGS from fmt and what follows
 * (the folder's name among them); expects exit status 0 and returns the output. */
static char *lcpkit_in(char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *lcpkit_in(char *dir, const char *fmt, ...)
{
	assert_non_null(mkdtemp(dir));
	char cmd[1024], *out;
	const int len = snprintf(cmd, sizeof cmd, "%s ", bin());
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd + len, sizeof cmd - (size_t)len, fmt, ap);
	va_end(ap);
	assert_int_equal(run(cmd, &out), 0);
	return out;
}

static void test_compare_outputs(void **state)
{
	(void)state;
	char dir[] = "/tmp/lk-compare-XXXXXX";
	char cmd[1024], *out;
	out = lcpkit_in(dir, "compare --scene boxstack:n=3 --solvers pgs,psor --time 2 --iters 10 --out %s/rep --json",
	                dir);
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
		const int c_ms = csv_column(line, "solver_ms"), c_res = csv_column(line, "res");
		const int c_pen = csv_column(line, "max_penetration"), c_ke = csv_column(line, "kinetic_energy");
		/* the top's horizontal displacement from its start */
		const int c_drift = csv_column(line, "top_drift");
		double solver_ms[200], res[200], kes[200], pen_max = 0, res_max = 0, drift = 0, drift_max = 0;
		int n = 0;
		while (fgets(line, sizeof line, f) && n < 200) {
			const double rs = csv_number(line, c_res);
			solver_ms[n] = csv_number(line, c_ms);
			res[n] = rs;
			res_max = fmax(res_max, rs);
			pen_max = fmax(pen_max, csv_number(line, c_pen));
			kes[n] = csv_number(line, c_ke);
			drift = csv_number(line, c_drift);
			drift_max = fmax(drift_max, drift);
			++n;
		}
		fclose(f);
		assert_int_equal(n, 120);
		/* the CSV keeps 6 decimals of milliseconds, the JSON 17 digits */
		assert_double_equal(json_number(r, "solver_ms_median"), tu_median(solver_ms, n), 1e-6);
		assert_double_equal(json_number(r, "res_median"), tu_median(res, n), 1e-8 * (1 + tu_median(res, n)));
		assert_double_equal(json_number(r, "res_max"), res_max, 1e-8 * (1 + res_max));
		assert_double_equal(json_number(r, "max_penetration"), pen_max, 1e-8);
		/* the energy at the end: the median over the last second, 60 steps */
		const double ke_end = tu_median(kes + n - 60, 60);
		assert_double_equal(json_number(r, "kinetic_energy_end"), ke_end, 1e-8 * (1 + ke_end));
		/* the 3-box stack stands the 2 s: its largest drift is the largest of every step's, the end's the last */
		const char *fell = strstr(r, "\"fell\": ");
		assert_non_null(fell);
		assert_int_equal(strncmp(fell, "\"fell\": false", strlen("\"fell\": false")), 0);
		assert_double_equal(json_number(r, "top_drift"), drift, 1e-8);
		assert_double_equal(json_number(r, "top_drift_max"), drift_max, 1e-8);
		assert_true(json_number(r, "top_drift_max") >= json_number(r, "top_drift"));
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

/* two scenes of one name (a stack of 2 and one of 3): each run's CSV and each scene's plots its own, none
 * written over by the other's */
static void test_compare_scenes_of_one_name(void **state)
{
	(void)state;
	char dir[] = "/tmp/lk-compare-XXXXXX";
	char cmd[1024], *out;
	out = lcpkit_in(dir, "compare --scene boxstack:n=2,boxstack:n=3 --solvers pgs --time 0.5 --no-pictures "
	                     "--out %s/rep --json",
	                dir);
	char csvs[8][512];
	int runs = 0;
	for (const char *r = strstr(out, "{\"scene\""); r && runs < 8; r = strstr(r + 1, "{\"scene\"")) {
		char scene[64];
		json_string(r, "scene", scene, sizeof scene);
		json_string(r, "csv", csvs[runs], sizeof csvs[runs]);
		/* the CSV is the scene's: its top starts at the height of the scene's stack */
		FILE *f = fopen(csvs[runs], "r");
		if (!f)
			fail_msg("missing %s", csvs[runs]);
		char line[1024];
		assert_non_null(fgets(line, sizeof line, f));
		const int c_top = csv_column(line, "top_height");
		assert_non_null(fgets(line, sizeof line, f));
		fclose(f);
		const double top = csv_number(line, c_top);
		if (strstr(scene, "n=2"))
			assert_true(top > 1.0 && top < 2.0);
		else
			assert_true(top > 2.0 && top < 3.0);
		for (int k = 0; k < runs; ++k)
			assert_string_not_equal(csvs[k], csvs[runs]);
		++runs;
	}
	assert_true(runs >= 2);
	struct stat sb;
	snprintf(cmd, sizeof cmd, "%s/rep/boxstack_n_2-residual.png", dir);
	assert_int_equal(stat(cmd, &sb), 0);
	snprintf(cmd, sizeof cmd, "%s/rep/boxstack_n_3-residual.png", dir);
	assert_int_equal(stat(cmd, &sb), 0);
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
	                     "--scene boxstack:q=1", "--time -1", "--iters 0", "--bogus", "--frontier --budgets 2,0",
	                     "--frontier --budgets 2,x", "--frontier --iters 5"};
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

/* The field of column `title` in the table row of scene, engine and solver: the whitespace-separated word of
 * the row that overlaps the title's span in the header line (the table's columns are right-aligned under their
 * titles, the names left-aligned), so that a test names a column, not its position. */
static int table_field(const char *out, const char *scene, const char *engine, const char *solver, const char *title,
                       char *field, size_t size)
{
	const char *header = strstr(out, "scene ");
	if (!header)
		return 0;
	const char *at = strstr(header, title), *eol = strchr(header, '\n');
	if (!at || (eol && at > eol))
		return 0;
	const size_t from = (size_t)(at - header), to = from + strlen(title);
	for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char f[3][64];
		if (sscanf(line, "%63s %63s %63s", f[0], f[1], f[2]) != 3 || strcmp(f[0], scene) || strcmp(f[1], engine) ||
		    strcmp(f[2], solver))
			continue;
		const size_t len = strcspn(line, "\n");
		for (size_t b = 0; b < len;) {
			if (line[b] == ' ') {
				++b;
				continue;
			}
			size_t e = b;
			while (e < len && line[e] != ' ')
				++e;
			if (b < to && e > from) {
				snprintf(field, size, "%.*s", (int)(e - b), line + b);
				return 1;
			}
			b = e;
		}
		return 0;
	}
	return 0;
}

/* the JSON object of the run of scene, engine and solver, from its opening brace */
static const char *json_run(const char *out, const char *scene, const char *engine, const char *solver)
{
	char pat[256];
	snprintf(pat, sizeof pat, "{\"scene\": \"%s\", \"engine\": \"%s\", \"solver\": \"%s\"", scene, engine, solver);
	const char *r = strstr(out, pat);
	if (!r)
		fail_msg("no run %s/%s/%s in the JSON", scene, engine, solver);
	return r;
}

/* "key": null in the run's object */
static int json_null(const char *r, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\": null", key);
	const char *p = strstr(r, pat), *end = strchr(r, '}');
	return p && p < end;
}

static void rm_rf(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* --iters is every solver's budget: PGS spends exactly its 7 sweeps a step, PGS-SM (the median step) at most
 * one sweep-equivalent more; the table's work column and the JSON say so. A 10-box stack: on a 3-box stack's
 * 36 rows PGS-SM's last subspace step can take its median step 1.1 past the budget. */
static void test_compare_work_is_the_budget(void **state)
{
	(void)state;
	char dir[] = "/tmp/lk-compare-XXXXXX";
	char cmd[1024], *out, field[64];
	out = lcpkit_in(dir, "compare --scene boxstack --solvers pgs,pgs-sm --engine both --iters 7 --time 1 --no-pictures "
	                     "--out %s/rep", dir);
	assert_non_null(strstr(out, " work "));
	const char *engines[] = {"ode", "bullet"};
	for (int e = 0; e < 2; ++e) {
		/* scene, engine, solver, solver ms, step ms, work */
		assert_true(table_field(out, "boxstack", engines[e], "pgs", "work", field, sizeof field));
		assert_string_equal(field, "7.0");
		assert_true(table_field(out, "boxstack", engines[e], "pgs-sm", "work", field, sizeof field));
		double w = strtod(field, NULL);
		assert_true(w >= 6.5 && w <= 8.0);
	}
	free(out);
	snprintf(cmd, sizeof cmd, "%s compare --scene boxstack --solvers pgs,pgs-sm --engine ode --iters 7 --time 1 "
	                          "--no-pictures --out %s/rep --json",
	         bin(), dir);
	assert_int_equal(run(cmd, &out), 0);
	const char *r = json_run(out, "boxstack", "ode", "pgs");
	assert_double_equal(json_number(r, "work"), 7.0, 0);
	assert_double_equal(json_number(r, "iterations"), 7.0, 0);
	assert_double_equal(json_number(r, "budget"), 7.0, 0);
	r = json_run(out, "boxstack", "ode", "pgs-sm");
	assert_true(json_number(r, "work") <= 8.0);
	/* summary.csv has a work column too */
	snprintf(cmd, sizeof cmd, "%s/rep/summary.csv", dir);
	FILE *f = fopen(cmd, "r");
	assert_non_null(f);
	char line[2048];
	assert_non_null(fgets(line, sizeof line, f));
	assert_non_null(strstr(line, ",work,iterations,"));
	fclose(f);
	free(out);
	rm_rf(dir);
}

/* Joint error: a short hinge chain under PGS with 40 sweeps holds to well under a millimetre, with 2 sweeps
 * it does not; a scene without joints has none ('-', null). */
static void test_compare_joint_error(void **state)
{
	(void)state;
	char dir[] = "/tmp/lk-compare-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char cmd[1024], *out, field[64];
	double err[2];
	const int budgets[2] = {40, 2};
	for (int b = 0; b < 2; ++b) {
		snprintf(cmd, sizeof cmd, "%s compare --scene snake:n=5,boxstack:n=3 --solvers pgs --engine both --iters %d "
		                          "--time 2 --no-pictures --out %s/rep --json",
		         bin(), budgets[b], dir);
		assert_int_equal(run(cmd, &out), 0);
		err[b] = 0;
		for (int e = 0; e < 2; ++e) {
			const char *eng = e ? "bullet" : "ode";
			double j = json_number(json_run(out, "snake:n=5", eng, "pgs"), "joint_error");
			assert_true(j > 0);
			err[b] = fmax(err[b], j);
			assert_true(json_null(json_run(out, "boxstack:n=3", eng, "pgs"), "joint_error"));
		}
		free(out);
	}
	assert_true(err[0] < 1e-3);
	assert_true(err[1] > 1e-3);
	snprintf(cmd, sizeof cmd, "%s compare --scene boxstack:n=3 --solvers pgs --engine ode --iters 5 --time 1 "
	                          "--no-pictures --out %s/rep",
	         bin(), dir);
	assert_int_equal(run(cmd, &out), 0);
	assert_true(table_field(out, "boxstack:n=3", "ode", "pgs", "joint err m", field, sizeof field));
	assert_string_equal(field, "-");
	free(out);
	rm_rf(dir);
}

/* The incline against Coulomb's law. At 40 degrees with 3 boxes the engines' friction against the slope (the
 * geometric mean of the box's and the slope's 1.0) is 0.65, 0.92 and 1.12 against tan 40 = 0.84: one box
 * slides with 1.44 m/s^2, two rest. Had the metric taken the box's own coefficient (0.42) it would expect
 * 3.1 m/s^2 and report an error above 0.5. At the default 25 degrees no box should slide. */
static void test_compare_incline(void **state)
{
	(void)state;
	char dir[] = "/tmp/lk-compare-XXXXXX";
	char *out = lcpkit_in(dir, "compare --scene incline:n=3,angle=40,incline --solvers pgs-sm --engine both "
	                           "--iters 40 --time 2 --no-pictures --out %s/rep --json", dir);
	for (int e = 0; e < 2; ++e) {
		const char *eng = e ? "bullet" : "ode";
		const char *r = json_run(out, "incline:n=3,angle=40", eng, "pgs-sm");
		assert_false(json_null(r, "accel_error"));
		assert_true(json_number(r, "accel_error") < 0.05);
		assert_false(json_null(r, "creep"));
		assert_true(json_number(r, "creep") < 0.01);
		r = json_run(out, "incline", eng, "pgs-sm");
		assert_true(json_null(r, "accel_error"));
		assert_false(json_null(r, "creep"));
	}
	free(out);
	rm_rf(dir);
}

/* --frontier on a tiny set-up: one row per solver and budget in frontier.csv, in order, a valid PNG, a stack
 * of 3 that stands the whole second, and Pareto marks that no other point beats. */
static void test_compare_frontier(void **state)
{
	(void)state;
	char dir[] = "/tmp/lk-compare-XXXXXX";
	char cmd[1024], *out;
	out = lcpkit_in(dir, "compare --frontier --scene boxstack:n=3 --engine bullet --solvers pgs,amgs "
	                     "--budgets 2,5 --time 1 --out %s/fr", dir);
	assert_non_null(strstr(out, "frontier.csv"));
	assert_non_null(strstr(out, "frontier-boxstack-bullet.png"));
	/* a stack that stood: the second picture, of the top's drift */
	assert_non_null(strstr(out, "frontier-boxstack-bullet-drift.png"));
	/* it stood the whole second at both budgets: level, never worse */
	assert_non_null(strstr(out, "pgs: more work never worse on 1 of 1 scene x engine\n"));
	free(out);
	snprintf(cmd, sizeof cmd, "%s/fr/frontier.csv", dir);
	FILE *f = fopen(cmd, "r");
	assert_non_null(f);
	char line[2048];
	assert_non_null(fgets(line, sizeof line, f));
	const int c_scene = csv_column(line, "scene"), c_engine = csv_column(line, "engine");
	const int c_solver = csv_column(line, "solver"), c_budget = csv_column(line, "budget");
	const int c_ms = csv_column(line, "solver_ms_median"), c_fallbacks = csv_column(line, "fallbacks");
	const int c_standing = csv_column(line, "seconds_standing"), c_pareto = csv_column(line, "pareto");
	const char *solvers[4] = {"pgs", "pgs", "amgs", "amgs"};
	const int budgets[4] = {2, 5, 2, 5};
	double ms[4], standing[4];
	int pareto[4], n = 0;
	while (fgets(line, sizeof line, f)) {
		assert_true(n < 4);
		char field[64];
		csv_field(line, c_scene, field, sizeof field);
		assert_string_equal(field, "boxstack:n=3");
		csv_field(line, c_engine, field, sizeof field);
		assert_string_equal(field, "bullet");
		csv_field(line, c_solver, field, sizeof field);
		assert_string_equal(field, solvers[n]);
		assert_double_equal(csv_number(line, c_fallbacks), 0, 0);
		assert_double_equal(csv_number(line, c_budget), budgets[n], 0);
		ms[n] = csv_number(line, c_ms);
		standing[n] = csv_number(line, c_standing);
		csv_field(line, c_pareto, field, sizeof field);
		pareto[n] = !strcmp(field, "yes");
		++n;
	}
	fclose(f);
	assert_int_equal(n, 4);
	/* 1 s at 60 Hz: never fell */
	assert_double_equal(standing[1], 1.0, 1e-9);
	int on_front = 0;
	for (int i = 0; i < 4; ++i) {
		int beaten = 0;
		for (int j = 0; j < 4; ++j)
			if ((ms[j] < ms[i] && standing[j] >= standing[i]) || (ms[j] <= ms[i] && standing[j] > standing[i]))
				beaten = 1;
		if (pareto[i])
			assert_false(beaten);
		on_front += pareto[i];
	}
	assert_true(on_front >= 1);
	int w, h;
	snprintf(cmd, sizeof cmd, "%s/fr/frontier-boxstack-bullet.png", dir);
	png_size(cmd, &w, &h);
	assert_int_equal(w, 1000);
	assert_int_equal(h, 560);
	snprintf(cmd, sizeof cmd, "%s/fr/frontier-boxstack-bullet-drift.png", dir);
	png_size(cmd, &w, &h);
	assert_int_equal(w, 1000);
	snprintf(cmd, sizeof cmd, "%s/fr/frontier.json", dir);
	struct stat sb;
	assert_int_equal(stat(cmd, &sb), 0);
	rm_rf(dir);

	/* one sweep falls sooner than ten on a 20-box stack, in every seed; budgets given in any order are run
	 * ascending, and with seeds the monotone line still finds more work better */
	strcpy(dir, "/tmp/lk-compare-XXXXXX");
	out = lcpkit_in(dir, "compare --frontier --scene boxstack:n=20 --engine ode --solvers pgs "
	                     "--budgets 10,1 --time 2 --seeds 2 --no-pictures --out %s/fr", dir);
	assert_non_null(strstr(out, "pgs: more work never worse on 1 of 1 scene x engine\n"));
	free(out);
	rm_rf(dir);

	/* a stack that fell in every run: no drift picture (one point of budget 1 with one sweep) */
	strcpy(dir, "/tmp/lk-compare-XXXXXX");
	out = lcpkit_in(dir, "compare --frontier --scene boxstack:n=20 --engine bullet --solvers pgs "
	                     "--budgets 1 --time 3 --out %s/fr", dir);
	assert_non_null(strstr(out, "frontier-boxstack-bullet.png"));
	assert_null(strstr(out, "-drift.png"));
	free(out);
	snprintf(cmd, sizeof cmd, "%s/fr/frontier-boxstack-bullet-drift.png", dir);
	assert_int_not_equal(stat(cmd, &sb), 0);
	rm_rf(dir);
}

/* lcpkit bench phase's CSV: a scene or a solver whose spec holds commas is one quoted field, so every line has
 * the header's sixteen fields. */
static void test_bench_phase_csv_fields(void **state)
{
	(void)state;
	char dir[] = "/tmp/lk-compare-XXXXXX";
	char cmd[1024], *out;
	out = lcpkit_in(dir, "bench phase --scenes boxstack:n=3,mu=0.4 --engines bullet --solvers "
	                     "own,pgs:coarse=2,tol=1e-4 --steps 3 --warmup 1 --out %s", dir);
	free(out);
	snprintf(cmd, sizeof cmd, "%s/bench_phase.csv", dir);
	FILE *f = fopen(cmd, "r");
	assert_non_null(f);
	char line[2048];
	int lines = 0;
	while (fgets(line, sizeof line, f)) {
		assert_int_equal(csv_field_count(line), 16);
		if (lines == 2)
			assert_non_null(strstr(line, "\"boxstack:n=3,mu=0.4\",bullet,\"pgs:coarse=2,tol=1e-4\","));
		++lines;
	}
	fclose(f);
	assert_int_equal(lines, 3);
	rm_rf(dir);

	/* in a multibody world (Bullet's btMultiBodyConstraintSolver its own solver, lk::BulletMultiBodySolver
	 * lcpkit's), said in the table's title and the CSV's engine, both solvers with the stack's rows */
	char dir2[] = "/tmp/lk-compare-XXXXXX";
	out = lcpkit_in(dir2, "bench phase --scenes boxstack:n=3 --engines bullet --bullet-world multibody --solvers "
	                      "own,auto --steps 3 --warmup 30 --out %s", dir2);
	assert_non_null(strstr(out, "boxstack:n=3 in bullet (multibody world)"));
	free(out);
	snprintf(cmd, sizeof cmd, "%s/bench_phase.csv", dir2);
	f = fopen(cmd, "r");
	assert_non_null(f);
	lines = 0;
	while (fgets(line, sizeof line, f)) {
		if (lines > 0) {
			assert_non_null(strstr(line, "\"boxstack:n=3\",bullet-multibody,"));
			/* the rows: three faces of four points (Bullet's manifolds), a normal and two friction rows each */
			assert_non_null(strstr(line, ",10,3,36,"));
		}
		++lines;
	}
	fclose(f);
	assert_int_equal(lines, 3);
	rm_rf(dir2);
}

/* lcpkit solve's exit status (0 met, 3 --tol unmet, 4 a failure stop) and --out with and without w. */
static void test_solve_exit_status_and_out(void **state)
{
	(void)state;
	const char *dir = "solve-test";
	rm_rf(dir);
	char cmd[1024], *out = NULL;
	snprintf(cmd, sizeof cmd, "mkdir -p %s && %s gen boxstack --n 10 --friction 0 --out %s/p.lkp", dir, bin(), dir);
	assert_int_equal(system(cmd), 0);
	/* five sweeps do not reach 1e-10 */
	snprintf(cmd, sizeof cmd, "%s solve %s/p.lkp --solver pgs --iters 5 --tol 1e-10 2>/dev/null", bin(), dir);
	assert_int_equal(run(cmd, &out), 3);
	free(out);
	/* enough sweeps do; the solution file satisfies the LCP: lambda >= 0, w >= 0, lambda w = 0 */
	snprintf(cmd, sizeof cmd, "%s solve %s/p.lkp --solver pgs:iters=5000 --tol 1e-10 --out %s/s.csv --out-w", bin(),
	         dir, dir);
	assert_int_equal(run(cmd, &out), 0);
	free(out);
	snprintf(cmd, sizeof cmd, "%s/s.csv", dir);
	FILE *f = fopen(cmd, "r");
	assert_non_null(f);
	char line[256];
	assert_non_null(fgets(line, sizeof line, f));
	assert_string_equal(line, "row,lambda,w\n");
	int rows = 0, idx;
	double l, w, sum = 0;
	while (fscanf(f, "%d,%lf,%lf", &idx, &l, &w) == 3) {
		assert_int_equal(idx, rows);
		assert_true(l >= 0 && w >= -1e-9 && fabs(l * w) < 1e-9);
		sum += l;
		++rows;
	}
	fclose(f);
	assert_int_equal(rows, 40);
	assert_true(sum > 1.0); /* the stack's weight is carried */
	/* PGS-SM honours --tol: its active-set rule waits for it */
	snprintf(cmd, sizeof cmd, "%s solve %s/p.lkp --solver pgs-sm --tol 1e-12 --json", bin(), dir);
	assert_int_equal(run(cmd, &out), 0);
	assert_true(json_number(out, "res_final") < 1e-12);
	free(out);
	/* a zero diagonal stops every Gauss-Seidel method with bad-diagonal: status 4 */
	snprintf(cmd, sizeof cmd, "%s/z.lkp", dir);
	f = fopen(cmd, "w");
	assert_non_null(f);
	fprintf(f, "lcpkit-problem 1\nform matrix\nrows 2\n0 -1 0 inf 0 -1\n1 -1 0 inf 0 -1\nentries 1\n0 0 1\n"
	           "lambda 2\n0\n0\nend\n");
	fclose(f);
	snprintf(cmd, sizeof cmd, "%s solve %s/z.lkp --solver pgs 2>/dev/null", bin(), dir);
	assert_int_equal(run(cmd, &out), 4);
	assert_non_null(strstr(out, "bad-diagonal"));
	free(out);
	/* --out with several files, --out-w alone: usage errors */
	snprintf(cmd, sizeof cmd, "%s solve %s/p.lkp %s/p.lkp --out %s/x.csv 2>/dev/null", bin(), dir, dir, dir);
	assert_int_equal(run(cmd, &out), 2);
	free(out);
	snprintf(cmd, sizeof cmd, "%s solve %s/p.lkp --out-w 2>/dev/null", bin(), dir);
	assert_int_equal(run(cmd, &out), 2);
	free(out);
	rm_rf(dir);
}


/* Runs `compare --verdict ARGS --iters 10 --seeds 2 --json` in dir; the verdict of the run of scene, engine and
 * solver compares the outcome `judged` and leaves `left` out. */
static void verdict_judges(const char *dir, const char *args, const char *scene, const char *engine,
                           const char *solver, const char *judged, const char *left)
{
	char cmd[1024], key[64], *out = NULL;
	snprintf(cmd, sizeof cmd, "%s compare --verdict %s --iters 10 --seeds 2 --no-pictures --out %s/rep --json", bin(),
	         args, dir);
	assert_int_equal(run(cmd, &out), 0);
	const char *v = strstr(json_run(out, scene, engine, solver), "\"verdict\": {");
	assert_non_null(v);
	const char *v_end = strchr(v, '}');
	snprintf(key, sizeof key, "\"%s\": ", judged);
	const char *j = strstr(v, key);
	assert_true(j && j < v_end);
	snprintf(key, sizeof key, "\"%s\"", left);
	const char *l = strstr(v, key);
	assert_true(!l || l > v_end);
	free(out);
}

/* --verdict: every solver against the engine's own at the same budget, over scene seeds. PGS with a single
 * sweep a step against the engines' own ten on a 4-box stack sinks deeper than either engine's solver in every
 * seed: worse, in the table, the JSON and verdict.csv; the engines' own runs carry no verdict, and each seed has
 * its CSV. The outcomes that are not compared: the sliders' energy on a steep incline and of boxes that slide to
 * the end of the run, the deepest contact of a stack that fell in every run of both, the depth at rest of one that
 * fell under one solver only. */
static void test_compare_verdict(void **state)
{
	(void)state;
	char dir[] = "/tmp/lk-compare-XXXXXX";
	char path[512], *out;
	out = lcpkit_in(dir, "compare --verdict --scene boxstack:n=4 --engine both --solvers pgs:iters=1 --iters 10 "
	                     "--time 2 --seeds 2 --no-pictures --out %s/rep",
	                dir);
	assert_non_null(strstr(out, "pgs:iters=1: worse than the engine's own on 2 of 2"));
	assert_non_null(strstr(out, "Each outcome against the engine's own solver"));
	/* worse over two runs: the verdict says it may be noise and how to confirm it */
	assert_non_null(strstr(out, "a row worse over 2 runs may be noise"));
	assert_non_null(strstr(out, "--seeds 6"));
	free(out);
	snprintf(path, sizeof path, "%s/rep/boxstack-ode-pgs_iters_1-seed1.csv", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("missing %s", path);
	fclose(f);
	snprintf(path, sizeof path, "%s/rep/verdict.csv", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	char line[4096];
	assert_non_null(fgets(line, sizeof line, f));
	assert_non_null(strstr(line, "scene,engine,solver,seeds,time_ratio,verdict,max_penetration_own,max_penetration,"
	                             "max_penetration_band,max_penetration_verdict"));
	int rows = 0;
	while (fgets(line, sizeof line, f)) {
		++rows;
		assert_non_null(strstr(line, "\"pgs:iters=1\",2,"));
		assert_non_null(strstr(line, ",worse,"));
	}
	assert_int_equal(rows, 2);
	fclose(f);
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "%s compare --verdict --scene boxstack:n=4 --engine ode --solvers pgs:iters=1 --iters 10 "
	                          "--time 2 --seeds 2 --no-pictures --out %s/rep --json",
	         bin(), dir);
	assert_int_equal(run(cmd, &out), 0);
	const char *r = json_run(out, "boxstack:n=4", "ode", "pgs:iters=1");
	const char *v = strstr(r, "\"verdict\": {\"overall\": \"worse\", \"time_ratio\": ");
	assert_non_null(v);
	assert_true(v < strstr(r, "\"csv\""));
	assert_non_null(strstr(v, "\"max_penetration\": \"worse\""));
	r = json_run(out, "boxstack:n=4", "ode", "ode-quickstep");
	const char *next = strstr(r + 1, "{\"scene\"");
	const char *own_verdict = strstr(r, "\"verdict\"");
	assert_true(!own_verdict || (next && own_verdict > next));
	free(out);
	/* no worse row, no such line: the engines' own ten iterations against PGS's forty */
	snprintf(cmd, sizeof cmd, "%s compare --verdict --scene boxstack:n=4 --engine ode --solvers pgs:iters=40 "
	                          "--iters 10 --time 1 --seeds 2 --no-pictures --out %s/rep2",
	         bin(), dir);
	assert_int_equal(run(cmd, &out), 0);
	assert_non_null(strstr(out, "pgs:iters=40: worse than the engine's own on 0 of 1"));
	assert_null(strstr(out, "may be noise"));
	free(out);
	/* on the incline past the friction angle the sliders' speed is judged by their acceleration, not by the
	 * kinetic energy they end with */
	verdict_judges(dir, "--scene incline:angle=40 --engine ode --solvers pgs --time 1", "incline:angle=40", "ode",
	               "pgs", "accel_error", "kinetic_energy_end");
	/* boxes launched across the floor at 12 m/s with mu 0.1 slide for 12 s: in a run of 2 s their energy at the
	 * end is their speed, not compared; at 4 m/s with mu 0.5 they stop in 0.8 s and the energy they rest with
	 * is */
	verdict_judges(dir, "--scene slide:speed=12,mu=0.1 --engine bullet --solvers pgs --time 2",
	               "slide:speed=12,mu=0.1", "bullet", "pgs", "max_penetration", "kinetic_energy_end");
	verdict_judges(dir, "--scene slide --engine bullet --solvers pgs --time 2", "slide", "bullet", "pgs",
	               "kinetic_energy_end", "accel_error");
	/* Bullet's 20-box stack at 30 Hz falls in every seed under its own solver and under one sweep a step: the
	 * deepest contacts are its boxes landing on each other, not compared; when it fell is */
	verdict_judges(dir, "--scene boxstack:n=20 --engine bullet --hz 30 --solvers pgs:iters=1 --time 3",
	               "boxstack:n=20", "bullet", "pgs:iters=1", "seconds_standing", "max_penetration");
	/* ODE's 10-box stack stands under quickstep and falls under one sweep a step: the fallen boxes' depth at rest
	 * is not that of a standing stack's bottom box, and is not compared; when it fell is */
	verdict_judges(dir, "--scene boxstack:n=10 --engine ode --solvers pgs:iters=1 --time 3", "boxstack", "ode",
	               "pgs:iters=1", "seconds_standing", "penetration_rest");
	rm_rf(dir);
}

/* `lcpkit fclib import` on the public global problems of tests/data/fclib, then `lcpkit solve` with box and
 * cone friction: the reading of CubeH8's M is one note on stderr (none under LCPKIT_QUIET=1, none for a file
 * that leaves nothing open); a spec with its options after a comma is refused with the colon form shown. */
static void test_fclib_import_and_solve(void **state)
{
	(void)state;
	const char *dir = "fclib-test";
	rm_rf(dir);
	char cmd[1024], *out = NULL, data[512];
	snprintf(data, sizeof data, "%s", tu_data_path("fclib"));
	snprintf(cmd, sizeof cmd, "mkdir -p %s && %s fclib import %s/CubeH8.hdf5 %s/cube.lkp 2>&1", dir, bin(), data, dir);
	assert_int_equal(run(cmd, &out), 0);
	assert_non_null(strstr(out, "lcpkit fclib: note: "));
	assert_non_null(strstr(out, "CubeH8.hdf5: M holds only its upper triangle: read as the symmetric matrix"));
	free(out);
	snprintf(cmd, sizeof cmd, "LCPKIT_QUIET=1 %s fclib import %s/CubeH8.hdf5 %s/cube.lkp 2>&1", bin(), data, dir);
	assert_int_equal(run(cmd, &out), 0);
	assert_string_equal(out, "");
	free(out);
	snprintf(cmd, sizeof cmd, "%s fclib import %s/Box_Stacks-i0122-82-5.hdf5 %s/stack.lkp 2>&1", bin(), data, dir);
	assert_int_equal(run(cmd, &out), 0);
	assert_string_equal(out, "");
	free(out);
	const char *specs[2] = {"pgs", "pgs:friction=cone"};
	for (int k = 0; k < 2; ++k) {
		snprintf(cmd, sizeof cmd, "%s solve %s/cube.lkp %s/stack.lkp --solver %s --iters 10000 --tol 1e-9 --json",
		         bin(), dir, dir, specs[k]);
		assert_int_equal(run(cmd, &out), 0);
		const char *second = strstr(out + 1, "{\"file\"");
		assert_non_null(second);
		assert_int_equal((int)json_number(second, "rows"), 246);
		assert_true(json_number(out, "res_final") < 1e-9 && json_number(second, "res_final") < 1e-9);
		free(out);
	}
	snprintf(cmd, sizeof cmd, "%s solve %s/stack.lkp --solver pgs,friction=cone 2>&1", bin(), dir);
	assert_int_equal(run(cmd, &out), 2);
	assert_non_null(strstr(out, "unknown solver 'pgs,friction=cone': options follow a colon, as in "
	                            "'pgs:friction=cone'"));
	free(out);
	/* a file that disagrees with itself: status 1 and what */
	snprintf(cmd, sizeof cmd, "head -c 3000 %s/CubeH8.hdf5 > %s/cut.hdf5; %s fclib import %s/cut.hdf5 %s/x.lkp 2>&1",
	         data, dir, bin(), dir, dir);
	assert_int_equal(run(cmd, &out), 1);
	assert_non_null(strstr(out, "lcpkit fclib: "));
	free(out);
	rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare_outputs),
		cmocka_unit_test(test_compare_scenes_of_one_name),
		cmocka_unit_test(test_compare_bad_input),
		cmocka_unit_test(test_compare_work_is_the_budget),
		cmocka_unit_test(test_compare_joint_error),
		cmocka_unit_test(test_compare_incline),
		cmocka_unit_test(test_compare_frontier),
		cmocka_unit_test(test_compare_verdict),
		cmocka_unit_test(test_bench_phase_csv_fields),
		cmocka_unit_test(test_solve_exit_status_and_out),
		cmocka_unit_test(test_fclib_import_and_solve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

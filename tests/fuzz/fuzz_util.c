/* What the fuzz targets share: the invariant failure, and a short solve of whatever problem an input
 * produced, checked for the promises of lcpkit.h (an error leaves lambda untouched and says why; a solve
 * never hands back a non-finite lambda or du). */
#include "fuzz_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lk_fuzz_fail(const char *what)
{
	fprintf(stderr, "fuzz invariant broken: %s\n", what);
	/* tools/fuzz.sh closes the target's stderr (-close_fd_mask): it names a file for the message instead */
	const char *path = getenv("LK_FUZZ_FAIL_LOG");
	FILE *f = path ? fopen(path, "a") : NULL;
	if (f) {
		fprintf(f, "fuzz invariant broken: %s\n", what);
		fclose(f);
	}
	abort();
}

uint64_t lk_fuzz_hash(const uint8_t *data, size_t size)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < size; ++i) {
		h ^= data[i];
		h *= 1099511628211ull;
	}
	return h;
}

void lk_fuzz_solve_check(lk_problem *p, uint64_t selector)
{
	int n = lk_problem_row_count(p);
	if (n < 0)
		lk_fuzz_fail("negative row count");
	lk_method method = (lk_method)(selector % LK_METHOD_COUNT);
	lk_solver_config cfg = lk_default_config(method);
	cfg.max_iterations = method == LK_METHOD_PGS_SM ? 2 : 8;
	cfg.order = (lk_order)((selector >> 8) % LK_ORDER_COUNT);
	if (method != LK_METHOD_PGS && method != LK_METHOD_PSOR &&
	    (cfg.order == LK_ORDER_ESP || cfg.order == LK_ORDER_GSP))
		cfg.order = LK_ORDER_NATURAL;
	cfg.warm_start = (int)((selector >> 16) & 1);
	double *before = malloc(((size_t)n + 1) * sizeof(double));
	if (!before)
		return;
	/* an empty problem has no lambda array (NULL): memcpy and memcmp must not see it */
	if (n > 0)
		memcpy(before, lk_problem_lambda(p), (size_t)n * sizeof(double));
	lk_stats stats;
	lk_status st = lk_solve(p, &cfg, &stats, NULL);
	const double *lambda = lk_problem_lambda(p);
	if (st != LK_OK) {
		if (n > 0 && memcmp(before, lambda, (size_t)n * sizeof(double)) != 0)
			lk_fuzz_fail("a failed solve changed lambda");
		if (!lk_problem_error(p)[0])
			lk_fuzz_fail("a failed solve left no message");
	} else {
		for (int i = 0; i < n; ++i)
			if (!isfinite(lambda[i]))
				lk_fuzz_fail("lk_solve returned a non-finite lambda");
		if (stats.stop_reason == LK_STOP_NONE || stats.stop_reason >= LK_STOP_COUNT)
			lk_fuzz_fail("lk_solve returned without a stop reason");
		if (lk_problem_form(p) == LK_FORM_ROWS) {
			for (int b = 0; b < lk_problem_body_count(p); ++b) {
				double du[6];
				if (lk_problem_delta_velocity(p, b, du) != LK_OK)
					lk_fuzz_fail("delta velocity of a solved problem failed");
				for (int k = 0; k < 6; ++k)
					if (!isfinite(du[k]))
						lk_fuzz_fail("lk_solve left a non-finite du");
			}
		}
	}
	free(before);
}

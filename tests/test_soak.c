/* Soak (docs/reliability.md): pool1 and boxstack in both engines under every lcpkit solver family, stepped
 * for a while: no non-finite state, bounded velocities, and memory flat (resident set size from
 * /proc/self/statm after a warm-up and at the end of each run).
 *
 * The suite runs a short length on a smaller pool (60 circles); LK_SOAK_STEPS=100000 is the long run,
 * LK_SOAK_SCENES=pool1,boxstack the full scenes, and LK_SOAK_ONLY=TEXT keeps only the runs whose
 * "scene engine solver" label contains TEXT (the whole label if TEXT ends with '$'; to split a long run over
 * processes), e.g.
 *     LK_SOAK_STEPS=100000 LK_SOAK_SCENES=pool1,boxstack LK_SOAK_ONLY="boxstack ode" build/tests/test_soak
 * Under AddressSanitizer the freed-memory quarantine grows the resident set by design, so the RSS bound is
 * checked in builds without it (LeakSanitizer covers leaks there). */
#include "test_util.h"
#include "scene.h"
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define LK_SOAK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LK_SOAK_ASAN 1
#endif
#endif
#ifndef LK_SOAK_ASAN
#define LK_SOAK_ASAN 0
#endif

/* short in the suite: enough for the pool to land and the stack to settle in; shorter still under the
 * sanitizers, which look for memory errors, not for drift */
#if LK_SOAK_ASAN
#define DEFAULT_STEPS 12
#define WARMUP 4
#else
#define DEFAULT_STEPS 60
#define WARMUP 20
#endif
/* no body in these scenes moves faster than a free fall from their height allows (a few m/s) */
#define MAX_SPEED 50.0
/* allowed growth of the resident set between the warm-up and the end of one run */
#define MAX_RSS_GROWTH (4.0 * 1024 * 1024)

#define DEFAULT_SCENES "pool1:n=60,boxstack"
static const char *const solvers[] = {"pgs",           "psor",          "amgs",
                                      "amsor",         "pgs-sm",        "gsp",
                                      "pgs:order=ipp", "newton-minmap", "newton-fischer"};

static double rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return -1;
	long size = 0, resident = 0;
	int n = fscanf(f, "%ld %ld", &size, &resident);
	fclose(f);
	return n == 2 ? (double)resident * (double)sysconf(_SC_PAGESIZE) : -1;
}

/* LK_SOAK_ONLY: a part of the label, or the whole label when it ends with '$' */
static int label_matches(const char *label, const char *only)
{
	size_t n = strlen(only);
	if (n > 0 && only[n - 1] == '$')
		return strlen(label) == n - 1 && !strncmp(label, only, n - 1);
	return strstr(label, only) != NULL;
}

static int env_steps(void)
{
	const char *s = getenv("LK_SOAK_STEPS");
	int n = s ? atoi(s) : DEFAULT_STEPS;
	return n > 0 ? n : DEFAULT_STEPS;
}

typedef struct soak_result {
	double max_speed;
	double rss_growth;
	int64_t fallbacks;
	lk_stop_reason last_stop;
} soak_result;

static void soak(const lk_scene *sc, lk_engine e, const char *solver, int steps, soak_result *out)
{
	char err[256];
	lk_sim_def def = {sc, e, solver, 20, 0, 0, 0};
	lk_sim *sim = NULL;
	if (lk_sim_create(&def, &sim, err, sizeof err) != LK_OK)
		fail_msg("%s %s %s: %s", sc->name, lk_engine_name(e), solver, err);
	double rss0 = 0, vmax = 0;
	lk_engine_step_stats st;
	memset(&st, 0, sizeof st);
	for (int k = 0; k < WARMUP + steps; ++k) {
		if (k == WARMUP)
			rss0 = rss_bytes();
		lk_status s = lk_sim_step(sim, &st);
		if (s != LK_OK)
			fail_msg("%s %s %s: step %d failed (%d)", sc->name, lk_engine_name(e), solver, k, (int)s);
		for (int i = 0; i < sc->nbodies; ++i) {
			lk_pose p;
			double v[3], w[3];
			lk_sim_pose(sim, i, &p);
			lk_sim_velocity(sim, i, v, w);
			for (int c = 0; c < 3; ++c)
				if (!isfinite(p.pos[c]) || !isfinite(v[c]) || !isfinite(w[c]))
					fail_msg("%s %s %s: step %d, body %d is not finite", sc->name, lk_engine_name(e), solver,
					         k, i);
			for (int c = 0; c < 4; ++c)
				if (!isfinite(p.quat[c]))
					fail_msg("%s %s %s: step %d, body %d: orientation not finite", sc->name,
					         lk_engine_name(e), solver, k, i);
			double speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
			if (speed > vmax)
				vmax = speed;
		}
		if (!(vmax <= MAX_SPEED))
			fail_msg("%s %s %s: step %d: a body moves at %g m/s", sc->name, lk_engine_name(e), solver, k, vmax);
	}
	double rss1 = rss_bytes();
	out->max_speed = vmax;
	out->rss_growth = rss1 - rss0;
	out->fallbacks = st.fallback_total;
	out->last_stop = st.stop_reason;
	lk_sim_destroy(sim);
}

static void test_soak(void **state)
{
	(void)state;
	int steps = env_steps();
	const char *only = getenv("LK_SOAK_ONLY");
	const char *list = getenv("LK_SOAK_SCENES") ? getenv("LK_SOAK_SCENES") : DEFAULT_SCENES;
	char specs[512];
	snprintf(specs, sizeof specs, "%s", list);
	int runs = 0;
	for (char *save = NULL, *spec = strtok_r(specs, ",", &save); spec; spec = strtok_r(NULL, ",", &save)) {
		lk_scene *sc = NULL;
		char err[256];
		if (lk_scene_create(spec, &sc, err, sizeof err) != LK_OK)
			fail_msg("%s: %s", spec, err);
		for (int e = 0; e < LK_ENGINE_COUNT; ++e) {
			if (!lk_engine_available((lk_engine)e))
				continue;
			for (size_t k = 0; k < sizeof solvers / sizeof solvers[0]; ++k) {
				char label[160];
				snprintf(label, sizeof label, "%s %s %s", sc->name, lk_engine_name((lk_engine)e), solvers[k]);
				if (only && !label_matches(label, only))
					continue;
				soak_result r;
				soak(sc, (lk_engine)e, solvers[k], steps, &r);
				print_message("soak %-36s %6d steps: max |v| %6.3f m/s, RSS %+8.1f KiB, fallbacks %lld\n", label,
				              steps, r.max_speed, r.rss_growth / 1024.0, (long long)r.fallbacks);
				if (!LK_SOAK_ASAN && !(r.rss_growth < MAX_RSS_GROWTH))
					fail_msg("%s: the resident set grew by %.1f KiB over %d steps", label, r.rss_growth / 1024.0,
					         steps);
				++runs;
			}
		}
		lk_scene_destroy(sc);
	}
	/* a filter that matches nothing must not pass silently */
	assert_true(runs > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soak),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

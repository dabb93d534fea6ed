/* The verdict of one outcome against the engine's own solver (verdict.h). */
#include "verdict.h"

#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 64

/* Median and range of the finite values of v[0..n): 0 when there are none. */
static int summary(const double *v, int n, double *median, double *spread)
{
	double s[MAX_RUNS];
	int m = 0;
	for (int i = 0; i < n && m < MAX_RUNS; ++i)
		if (!isnan(v[i]))
			s[m++] = v[i];
	if (m == 0)
		return 0;
	for (int i = 1; i < m; ++i) /* insertion sort: a handful of runs */
		for (int j = i; j > 0 && s[j - 1] > s[j]; --j) {
			double t = s[j];
			s[j] = s[j - 1];
			s[j - 1] = t;
		}
	*median = m % 2 ? s[m / 2] : 0.5 * (s[m / 2 - 1] + s[m / 2]);
	*spread = s[m - 1] - s[0];
	return 1;
}

lk_verdict lk_verdict_of(const double *own, int n_own, const double *cand, int n_cand, double resolution,
                         int higher_better)
{
	lk_verdict v = {LK_VERDICT_LEVEL, 0, NAN, NAN, NAN};
	double so = 0, sc = 0;
	if (!summary(own, n_own, &v.own, &so) || !summary(cand, n_cand, &v.cand, &sc))
		return v;
	v.compared = 1;
	v.band = fmax(fmax(resolution, 0.0), fmax(so, sc));
	const double d = higher_better ? v.cand - v.own : v.own - v.cand;
	if (d > v.band)
		v.sign = LK_VERDICT_BETTER;
	else if (d < -v.band)
		v.sign = LK_VERDICT_WORSE;
	return v;
}

static const struct {
	const char *key, *head;
	int higher_better;
} outcomes[LK_OUTCOME_COUNT] = {
	{"max_penetration", "max pen.", 0}, {"penetration_rest", "pen. rest", 0}, {"joint_error", "joint err", 0},
	{"accel_error", "accel err", 0},    {"creep", "creep", 0},                {"kinetic_energy_end", "KE end", 0},
	{"seconds_standing", "standing", 1}, {"top_drift_max", "drift max", 0},
};

const char *lk_outcome_key(lk_outcome o)
{
	return (unsigned)o < LK_OUTCOME_COUNT ? outcomes[o].key : "unknown";
}

const char *lk_outcome_head(lk_outcome o)
{
	return (unsigned)o < LK_OUTCOME_COUNT ? outcomes[o].head : "unknown";
}

int lk_outcome_higher_better(lk_outcome o)
{
	return (unsigned)o < LK_OUTCOME_COUNT && outcomes[o].higher_better;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The scene's length: the median largest dimension of its moving bodies (1 m for a scene without one); and
 * their total mass. */
static double scene_size(const lk_scene *sc, double *mass)
{
	double *d = malloc(sizeof(double) * (size_t)(sc->nbodies > 0 ? sc->nbodies : 1));
	int n = 0;
	*mass = 0;
	for (int i = 0; i < sc->nbodies; ++i) {
		const lk_scene_body *b = &sc->bodies[i];
		if (b->mass <= 0)
			continue;
		*mass += b->mass;
		if (d)
			d[n++] = b->shape == LK_SHAPE_SPHERE    ? 2 * b->size[0]
			         : b->shape == LK_SHAPE_CAPSULE ? 2 * (b->size[0] + b->size[1])
			                                        : 2 * fmax(b->size[0], fmax(b->size[1], b->size[2]));
	}
	double size = 1.0;
	if (n > 0) {
		qsort(d, (size_t)n, sizeof *d, cmp_double);
		size = d[n / 2];
	}
	free(d);
	return size;
}

double lk_outcome_resolution(lk_outcome o, const lk_scene *sc, double h)
{
	double mass, size = scene_size(sc, &mass);
	double g = sqrt(sc->gravity[0] * sc->gravity[0] + sc->gravity[1] * sc->gravity[1] +
	                sc->gravity[2] * sc->gravity[2]);
	switch (o) {
	case LK_OUTCOME_MAX_PENETRATION:
	case LK_OUTCOME_PENETRATION_REST:
		/* a depth within the contact layer, which no solver pushes out, is where a body came to rest, as the
		 * seeds fell (docs/benchmarks.md, "More work never worse") */
		return fmax(1e-4 * size, LK_SIM_CONTACT_LAYER);
	case LK_OUTCOME_CREEP:
		return 1e-4 * size;
	case LK_OUTCOME_JOINT_ERROR:
		return 1e-5 * size;
	case LK_OUTCOME_ACCEL_ERROR:
		return 0.005;
	case LK_OUTCOME_ENERGY_END:
		return mass * g * 1e-4 * size;
	case LK_OUTCOME_STANDING:
		return h;
	case LK_OUTCOME_DRIFT_MAX:
		return 1e-3 * size;
	default:
		return 0;
	}
}

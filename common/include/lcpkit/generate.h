/* lcpkit: generated test problems, used by tests and benchmarks before engine scenes exist. */
#ifndef LCPKIT_GENERATE_H
#define LCPKIT_GENERATE_H

#include "lcpkit/lcpkit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lk_gen_kind {
	LK_GEN_BOXSTACK = 0,   /* n unit boxes stacked on the ground, 4 contacts per interface */
	LK_GEN_SPHERESTACK,    /* n spheres stacked vertically (Miyamoto & Yamashita 2019 Stacking, in 3D) */
	LK_GEN_PACKING,        /* a random packing of about n spheres in a box, resting on the ground */
	LK_GEN_FLUID,          /* Erleben 2013 sec. 4 fluid LCP: 2D Poisson matrix, known solution, matrix form */
	LK_GEN_CHAIN,          /* a chain of n links on hinges hanging from the world */
	LK_GEN_HEAVY_ON_LIGHT, /* a box stack whose top box is mass_ratio times heavier */
	LK_GEN_INCLINE,        /* n boxes resting on a slope (rows with friction at an angle) */
	LK_GEN_KIND_COUNT
} lk_gen_kind;

typedef struct lk_gen_params {
	lk_gen_kind kind;
	int n;              /* bodies (stacks, packings, chains) or grid cells (fluid) */
	uint64_t seed;
	double mu;          /* friction coefficient; 0 = frictionless (no friction rows) */
	double mass_ratio;  /* packing: masses log-uniform in [1, ratio]; heavy-on-light: top / others */
	double h;           /* time step, s */
	double gravity;     /* m/s^2, acting along -z */
	double erp;         /* error reduction (Baumgarte) for penetration / joint drift */
	double slope;       /* incline angle, radians */
} lk_gen_params;

LK_API lk_gen_params lk_default_gen_params(lk_gen_kind kind);
LK_API const char *lk_gen_kind_name(lk_gen_kind kind);
/* Parses a kind name ("boxstack", ...); returns -1 if unknown. */
LK_API int lk_gen_kind_from_name(const char *name);
/* Creates the problem; *out is NULL on error and err has a message. */
LK_API lk_status lk_generate(const lk_gen_params *params, lk_problem **out, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif

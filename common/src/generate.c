/* Generated test problems: one time step of small physical set-ups, built row by row as an engine would. */
#include "problem.h"
#include "rng.h"

#include <math.h>
#include "lcpkit/generate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[LK_GEN_KIND_COUNT] = {
	"boxstack", "spherestack", "packing", "fluid", "chain", "heavy-on-light", "incline",
};

const char *lk_gen_kind_name(lk_gen_kind kind)
{
	return (unsigned)kind < LK_GEN_KIND_COUNT ? kind_names[kind] : "unknown";
}

int lk_gen_kind_from_name(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < LK_GEN_KIND_COUNT; ++i)
		if (!strcmp(name, kind_names[i]))
			return i;
	return -1;
}

lk_gen_params lk_default_gen_params(lk_gen_kind kind)
{
	lk_gen_params g;
	memset(&g, 0, sizeof g);
	g.kind = kind;
	g.n = 10;
	g.seed = 1;
	g.mu = 0.5;
	g.mass_ratio = 1.0;
	g.h = 1.0 / 60.0;
	g.gravity = 9.81;
	g.erp = 0.2;
	g.slope = 0.3;
	switch (kind) {
	case LK_GEN_SPHERESTACK:
		g.n = 30; /* Miyamoto & Yamashita 2019 sec. 5: 30 circles; Table 1 uses 150 */
		g.mu = 0.0;
		g.gravity = 9.80665;
		break;
	case LK_GEN_PACKING:
		g.n = 100;
		break;
	case LK_GEN_FLUID:
		g.n = 1000; /* Erleben 2013 sec. 7: 1000-variable fluid problems */
		g.mu = 0.0;
		break;
	case LK_GEN_HEAVY_ON_LIGHT:
		g.n = 4;
		g.mass_ratio = 100.0;
		break;
	case LK_GEN_INCLINE:
		g.n = 4;
		break;
	default:
		break;
	}
	return g;
}

/* ------------------------------------------------------------------------------------------- helpers */

typedef struct gen {
	lk_problem *p;
	const lk_gen_params *g;
	double (*pos)[3]; /* body centres */
	lk__rng rng;
	lk_status st;
} gen;

static void cross(const double a[3], const double b[3], double out[3])
{
	out[0] = a[1] * b[2] - a[2] * b[1];
	out[1] = a[2] * b[0] - a[0] * b[2];
	out[2] = a[0] * b[1] - a[1] * b[0];
}

static void normalize(double v[3])
{
	double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
	for (int k = 0; k < 3; ++k)
		v[k] /= l;
}

/* Two unit tangents orthogonal to n and to each other. */
static void tangents(const double n[3], double t1[3], double t2[3])
{
	double a[3] = {1, 0, 0};
	if (fabs(n[0]) > 0.7) {
		a[0] = 0;
		a[1] = 1;
	}
	cross(n, a, t1);
	normalize(t1);
	cross(n, t1, t2);
}

static int add_body(gen *G, const double pos[3], double mass, const double inertia_diag[3], const double v[3])
{
	if (G->st != LK_OK)
		return -1;
	lk_body_def b = lk_default_body_def();
	for (int k = 0; k < 3; ++k) {
		b.u[k] = v[k];
		b.inv_mass[k] = 1.0 / mass;
		b.inv_inertia[4 * k] = 1.0 / inertia_diag[k];
	}
	b.u[2] -= G->g->gravity * G->g->h; /* u* = u + h M^-1 f_ext */
	int idx = -1;
	G->st = lk_problem_add_body(G->p, &b, &idx);
	if (idx >= 0)
		memcpy(G->pos[idx], pos, sizeof G->pos[idx]);
	return idx;
}

/* One row along direction d at point pt between body a (pushed along +d) and body b (along -d). */
static int add_dir_row(gen *G, int a, int b, const double pt[3], const double d[3], lk_row_kind kind, double lo,
                       double hi, int findex, double c)
{
	if (G->st != LK_OK)
		return -1;
	lk_row_def r = lk_default_row_def();
	G->st = lk_row_def_set_contact(&r, a, a == LK_STATIC ? NULL : G->pos[a], b, b == LK_STATIC ? NULL : G->pos[b], pt, d);
	if (G->st != LK_OK)
		return -1;
	r.kind = kind;
	r.lo = lo;
	r.hi = hi;
	r.findex = findex;
	r.mu = findex >= 0 ? G->g->mu : 0.0;
	r.c = c;
	r.id = (uint64_t)lk_problem_row_count(G->p);
	int idx = -1;
	G->st = lk_problem_add_row(G->p, &r, &idx);
	return idx;
}

/* A contact: normal row, then two friction rows when mu > 0 (findex to the normal, as ODE's contact). */
static void add_contact(gen *G, int a, int b, const double pt[3], const double n[3], double depth)
{
	double c = depth > 0 ? G->g->erp * depth / G->g->h : 0.0;
	int ni = add_dir_row(G, a, b, pt, n, LK_ROW_NORMAL, 0.0, INFINITY, -1, c);
	if (G->g->mu > 0 && ni >= 0) {
		double t1[3], t2[3];
		tangents(n, t1, t2);
		add_dir_row(G, a, b, pt, t1, LK_ROW_FRICTION, 0, 0, ni, 0.0);
		add_dir_row(G, a, b, pt, t2, LK_ROW_FRICTION, 0, 0, ni, 0.0);
	}
}

/* A box face contact: 4 corner contacts of a square of half side e centred at c with normal n. */
static void add_face(gen *G, int a, int b, const double ctr[3], const double n[3], const double t1[3],
                     const double t2[3], double e)
{
	for (int s = 0; s < 4; ++s) {
		double u = (s & 1) ? e : -e, v = (s & 2) ? e : -e, pt[3];
		for (int k = 0; k < 3; ++k)
			pt[k] = ctr[k] + u * t1[k] + v * t2[k];
		add_contact(G, a, b, pt, n, 0.0);
	}
}

static double small_noise(gen *G)
{
	return 1e-3 * (2.0 * lk__rng_uniform(&G->rng) - 1.0);
}

/* -------------------------------------------------------------------------------------------- scenes */

static void gen_boxstack(gen *G, double top_mass_factor)
{
	const double up[3] = {0, 0, 1}, ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0};
	int n = G->g->n;
	for (int i = 0; i < n; ++i) {
		double m = (i == n - 1) ? top_mass_factor : 1.0, I = m / 6.0; /* unit cube: m s^2 / 6 */
		double pos[3] = {0, 0, 0.5 + i}, inertia[3] = {I, I, I};
		double v[3] = {small_noise(G), small_noise(G), small_noise(G)};
		add_body(G, pos, m, inertia, v);
	}
	for (int i = 0; i < n; ++i) {
		double ctr[3] = {0, 0, (double)i};
		add_face(G, i, i == 0 ? LK_STATIC : i - 1, ctr, up, ex, ey, 0.5);
	}
}

static void gen_spherestack(gen *G)
{
	const double up[3] = {0, 0, 1}, r = 0.18, m = 1.0, I = 0.4 * m * r * r;
	int n = G->g->n;
	for (int i = 0; i < n; ++i) {
		double pos[3] = {0, 0, r + 2 * r * i}, inertia[3] = {I, I, I}, v[3] = {0, 0, 0};
		add_body(G, pos, m, inertia, v);
	}
	for (int i = 0; i < n; ++i) {
		double pt[3] = {0, 0, 2 * r * i};
		add_contact(G, i, i == 0 ? LK_STATIC : i - 1, pt, up, 0.0);
	}
}

static void gen_packing(gen *G)
{
	const double r = 0.5;
	int n = G->g->n;
	int side = (int)ceil(sqrt((double)n / 4.0));
	if (side < 1)
		side = 1;
	int layers = (n + side * side - 1) / (side * side);
	double ln_ratio = log(G->g->mass_ratio > 1 ? G->g->mass_ratio : 1.0);
	for (int i = 0; i < n; ++i) {
		int ix = i % side, iy = (i / side) % side, iz = i / (side * side);
		double pos[3] = {2 * r * ix + 0.05 * r * (2 * lk__rng_uniform(&G->rng) - 1),
		                 2 * r * iy + 0.05 * r * (2 * lk__rng_uniform(&G->rng) - 1), r + 2 * r * iz};
		double m = exp(ln_ratio * lk__rng_uniform(&G->rng)), I = 0.4 * m * r * r;
		double inertia[3] = {I, I, I};
		double v[3] = {0.1 * (2 * lk__rng_uniform(&G->rng) - 1), 0.1 * (2 * lk__rng_uniform(&G->rng) - 1),
		               0.1 * (2 * lk__rng_uniform(&G->rng) - 1)};
		add_body(G, pos, m, inertia, v);
	}
	(void)layers;
	for (int i = 0; i < n && G->st == LK_OK; ++i) {
		int ix = i % side, iy = (i / side) % side, iz = i / (side * side);
		if (iz == 0) {
			double pt[3] = {G->pos[i][0], G->pos[i][1], 0}, up[3] = {0, 0, 1};
			add_contact(G, i, LK_STATIC, pt, up, 0.0);
		}
		int nb[3] = {ix > 0 ? i - 1 : -1, iy > 0 ? i - side : -1, iz > 0 ? i - side * side : -1};
		for (int k = 0; k < 3; ++k) {
			int j = nb[k];
			if (j < 0)
				continue;
			double nrm[3], pt[3];
			for (int d = 0; d < 3; ++d) {
				nrm[d] = G->pos[i][d] - G->pos[j][d];
				pt[d] = 0.5 * (G->pos[i][d] + G->pos[j][d]);
			}
			normalize(nrm);
			add_contact(G, i, j, pt, nrm, 0.0);
		}
	}
}

static void gen_chain(gen *G)
{
	const double m = 1.0, len = 1.0, wid = 0.2;
	const double Ix = m * (2 * wid * wid) / 12.0, Iyz = m * (len * len + wid * wid) / 12.0;
	const double axes[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	int n = G->g->n;
	for (int i = 0; i < n; ++i) {
		double pos[3] = {len * (i + 0.5), 0, 0}, inertia[3] = {Ix, Iyz, Iyz}, v[3] = {0, 0, 0};
		add_body(G, pos, m, inertia, v);
	}
	for (int i = 0; i < n; ++i) {
		double anchor[3] = {len * i, 0, 0};
		int a = i, b = i == 0 ? LK_STATIC : i - 1;
		/* ball part: the anchor points of both links coincide */
		for (int k = 0; k < 3; ++k)
			add_dir_row(G, a, b, anchor, axes[k], LK_ROW_JOINT, -INFINITY, INFINITY, -1, 0.0);
		/* hinge about y: relative rotation about x and z is zero */
		for (int k = 0; k < 3; k += 2) {
			if (G->st != LK_OK)
				return;
			lk_row_def r = lk_default_row_def();
			r.body[0] = a;
			r.body[1] = b;
			for (int d = 0; d < 3; ++d) {
				r.J[0][3 + d] = axes[k][d];
				if (b != LK_STATIC)
					r.J[1][3 + d] = -axes[k][d];
			}
			memcpy(r.point, anchor, sizeof r.point);
			r.id = (uint64_t)lk_problem_row_count(G->p);
			G->st = lk_problem_add_row(G->p, &r, NULL);
		}
	}
}

static void gen_incline(gen *G)
{
	double th = G->g->slope;
	double n[3] = {-sin(th), 0, cos(th)}, t1[3] = {cos(th), 0, sin(th)}, t2[3] = {0, 1, 0};
	int count = G->g->n;
	for (int i = 0; i < count; ++i) {
		double s = 1.5 * i, pos[3], inertia[3] = {1.0 / 6, 1.0 / 6, 1.0 / 6}, v[3] = {0, 0, 0};
		for (int k = 0; k < 3; ++k)
			pos[k] = s * t1[k] + 0.5 * n[k];
		add_body(G, pos, 1.0, inertia, v);
	}
	for (int i = 0; i < count; ++i) {
		double ctr[3];
		for (int k = 0; k < 3; ++k)
			ctr[k] = G->pos[i][k] - 0.5 * n[k];
		add_face(G, i, LK_STATIC, ctr, n, t1, t2, 0.5);
	}
}

/* Erleben 2013 sec. 4: the pressure LCP 0 <= p perp A p + b >= 0 of a fluid next to solid walls, A the
 * discrete Poisson matrix (here the 2D five-point Laplacian, symmetric positive definite). b is made from a
 * complementary pair (p*, y*) so that the problem has the known solution p*. */
static lk_status gen_fluid(lk_problem *p, const lk_gen_params *g, lk__rng *rng, char *err, size_t esz)
{
	int k = (int)ceil(sqrt((double)g->n));
	int n = k * k;
	int *rp = malloc(((size_t)n + 1) * sizeof(int));
	int *col = malloc((size_t)n * 5 * sizeof(int));
	double *val = malloc((size_t)n * 5 * sizeof(double));
	double *x = malloc((size_t)n * sizeof(double)), *q = malloc((size_t)n * sizeof(double));
	lk_status st = LK_ERR_NO_MEMORY;
	if (rp && col && val && x && q) {
		int nz = 0;
		rp[0] = 0;
		for (int i = 0; i < n; ++i) {
			int r = i / k, c = i % k;
			int nb[5] = {r > 0 ? i - k : -1, c > 0 ? i - 1 : -1, i, c < k - 1 ? i + 1 : -1,
			             r < k - 1 ? i + k : -1};
			for (int j = 0; j < 5; ++j) {
				if (nb[j] < 0)
					continue;
				col[nz] = nb[j];
				val[nz++] = nb[j] == i ? 4.0 : -1.0;
			}
			rp[i + 1] = nz;
			x[i] = lk__rng_uniform(rng) < 0.5 ? 0.0 : lk__rng_uniform(rng);
		}
		for (int i = 0; i < n; ++i) {
			double y = x[i] > 0 ? 0.0 : lk__rng_uniform(rng), ax = 0;
			for (int j = rp[i]; j < rp[i + 1]; ++j)
				ax += val[j] * x[col[j]];
			q[i] = y - ax;
		}
		st = lk_problem_set_matrix(p, n, rp, col, val, q, NULL, NULL, NULL, NULL);
		if (st != LK_OK)
			snprintf(err, esz, "fluid: %s", lk_problem_error(p));
	} else {
		snprintf(err, esz, "fluid: out of memory for %d cells", n);
	}
	free(rp);
	free(col);
	free(val);
	free(x);
	free(q);
	return st;
}

lk_status lk_generate(const lk_gen_params *g, lk_problem **out, char *err, size_t err_size)
{
	char dummy[8];
	if (!err || err_size == 0) {
		err = dummy;
		err_size = sizeof dummy;
	}
	err[0] = '\0';
	if (!out) {
		snprintf(err, err_size, "generate: output is NULL");
		return LK_ERR_INVALID_ARGUMENT;
	}
	*out = NULL;
	if (!g || (unsigned)g->kind >= LK_GEN_KIND_COUNT) {
		snprintf(err, err_size, "generate: unknown kind");
		return LK_ERR_INVALID_ARGUMENT;
	}
	if (g->n < 1 || g->n > 10000000) {
		snprintf(err, err_size, "generate: n = %d outside 1..10000000", g->n);
		return LK_ERR_LIMIT;
	}
	if (!isfinite(g->mu) || g->mu < 0 || !isfinite(g->h) || g->h <= 0 || !isfinite(g->gravity) ||
	    !isfinite(g->mass_ratio) || g->mass_ratio <= 0 || !isfinite(g->erp) || g->erp < 0 ||
	    !isfinite(g->slope) || fabs(g->slope) >= 1.5) {
		snprintf(err, err_size, "generate: mu, h, gravity, mass_ratio, erp or slope out of range");
		return LK_ERR_INVALID_ARGUMENT;
	}
	lk__rng rng = {g->seed};
	lk_problem *p = lk_problem_create(g->kind == LK_GEN_FLUID ? LK_FORM_MATRIX : LK_FORM_ROWS);
	if (!p) {
		snprintf(err, err_size, "generate: out of memory");
		return LK_ERR_NO_MEMORY;
	}
	lk_status st = LK_OK;
	if (g->kind == LK_GEN_FLUID) {
		st = gen_fluid(p, g, &rng, err, err_size);
	} else {
		gen G = {p, g, malloc((size_t)g->n * sizeof *G.pos), rng, LK_OK};
		if (!G.pos) {
			G.st = LK_ERR_NO_MEMORY;
		} else {
			lk_problem_reserve(p, g->n, g->n * 12);
			switch (g->kind) {
			case LK_GEN_BOXSTACK: gen_boxstack(&G, 1.0); break;
			case LK_GEN_HEAVY_ON_LIGHT: gen_boxstack(&G, g->mass_ratio); break;
			case LK_GEN_SPHERESTACK: gen_spherestack(&G); break;
			case LK_GEN_PACKING: gen_packing(&G); break;
			case LK_GEN_CHAIN: gen_chain(&G); break;
			case LK_GEN_INCLINE: gen_incline(&G); break;
			default: break;
			}
		}
		st = G.st;
		if (st != LK_OK)
			snprintf(err, err_size, "%s: %s", lk_gen_kind_name(g->kind),
			         G.pos ? lk_problem_error(p) : "out of memory");
		free(G.pos);
	}
	if (st != LK_OK) {
		lk_problem_destroy(p);
		return st;
	}
	*out = p;
	return LK_OK;
}

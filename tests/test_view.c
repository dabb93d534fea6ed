/* lcpkit view: the camera and poke geometry, bodies added to running sims, the overlay, the command line
 * without a display and, run as `test_view xvfb`, a screenshot of the real window under Xvfb. */
#include "test_util.h"
#include "sim.h"
#include "view.h"

#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SKIP_STATUS 77

static const char *bin(void)
{
	const char *b = getenv("LK_BIN");
	return b ? b : "./lcpkit";
}

static lk_scene *scene(const char *spec)
{
	lk_scene *s = NULL;
	char err[300];
	if (lk_scene_create(spec, &s, err, sizeof err) != LK_OK)
		fail_msg("%s: %s", spec, err);
	return s;
}

/* distance from p to the line o + t d (d a unit vector) */
static double line_distance(const double o[3], const double d[3], const double p[3])
{
	double v[3] = {p[0] - o[0], p[1] - o[1], p[2] - o[2]};
	double t = v[0] * d[0] + v[1] * d[1] + v[2] * d[2];
	double q[3] = {v[0] - t * d[0], v[1] - t * d[1], v[2] - t * d[2]};
	return sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
}

/* ------------------------------------------------------------------------------------------- camera */

static void test_camera_center_ray(void **state)
{
	(void)state;
	lk_scene *sc = scene("boxstack");
	lk_view_camera c = lk_view_camera_frame(sc, 640, 720, 0, 720);
	double o[3], d[3], e[3], f[3], r[3], u[3];
	lk_view_camera_ray(&c, 320, 360, 640, 720, o, d);
	assert_true(line_distance(o, d, sc->view_center) < 1e-9 * c.distance);
	/* the basis is orthonormal and right-handed, with the eye at the distance from the target */
	lk_view_camera_basis(&c, e, f, r, u);
	assert_double_equal(f[0] * r[0] + f[1] * r[1] + f[2] * r[2], 0, 1e-12);
	assert_double_equal(f[0] * u[0] + f[1] * u[1] + f[2] * u[2], 0, 1e-12);
	assert_double_equal(r[2], 0, 1e-12); /* no roll: right stays horizontal */
	assert_true(u[2] > 0);
	double dd = sqrt(pow(e[0] - c.target[0], 2) + pow(e[1] - c.target[1], 2) + pow(e[2] - c.target[2], 2));
	assert_double_equal(dd, c.distance, 1e-9 * c.distance);
	/* the matrices agree: the target lands in the middle of clip space */
	double P[16], V[16], x[4] = {0}, y[4] = {0};
	lk_view_camera_matrices(&c, 640.0 / 720.0, 0.1, 1000, P, V);
	for (int i = 0; i < 4; ++i)
		x[i] = V[i] * c.target[0] + V[4 + i] * c.target[1] + V[8 + i] * c.target[2] + V[12 + i];
	assert_double_equal(x[0], 0, 1e-9);
	assert_double_equal(x[1], 0, 1e-9);
	assert_double_equal(x[2], -c.distance, 1e-9 * c.distance); /* OpenGL looks down -z */
	for (int i = 0; i < 4; ++i)
		y[i] = P[i] * x[0] + P[4 + i] * x[1] + P[8 + i] * x[2] + P[12 + i] * x[3];
	assert_double_equal(y[0] / y[3], 0, 1e-12);
	assert_double_equal(y[1] / y[3], 0, 1e-12);
	lk_scene_destroy(sc);
}

/* A point projected to a pixel lies on the ray through that pixel; and the matrices put it on the same pixel. */
static void test_camera_project_roundtrip(void **state)
{
	(void)state;
	lk_scene *sc = scene("pyramid");
	lk_view_camera c = lk_view_camera_frame(sc, 800, 640, 0, 640);
	c.yaw = 0.7;
	c.pitch = 0.4;
	const int w = 800, h = 640;
	double P[16], V[16];
	lk_view_camera_matrices(&c, (double)w / h, 0.1, 1000, P, V);
	uint64_t seed = 12345;
	for (int k = 0; k < 50; ++k) {
		double p[3];
		for (int i = 0; i < 3; ++i) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			p[i] = c.target[i] + 6.0 * ((double)(seed >> 11) / 9007199254740992.0 - 0.5);
		}
		double px[2], o[3], d[3];
		assert_int_equal(lk_view_camera_project(&c, p, w, h, px), 1);
		lk_view_camera_ray(&c, px[0], px[1], w, h, o, d);
		assert_true(line_distance(o, d, p) < 1e-9 * c.distance);
		double x[4], y[4];
		for (int i = 0; i < 4; ++i)
			x[i] = V[i] * p[0] + V[4 + i] * p[1] + V[8 + i] * p[2] + V[12 + i];
		for (int i = 0; i < 4; ++i)
			y[i] = P[i] * x[0] + P[4 + i] * x[1] + P[8 + i] * x[2] + P[12 + i] * x[3];
		assert_double_equal(0.5 * (y[0] / y[3] + 1) * w, px[0], 1e-7);
		assert_double_equal(0.5 * (1 - y[1] / y[3]) * h, px[1], 1e-7);
	}
	/* behind the eye: no pixel */
	double e[3], f[3], px[2];
	lk_view_camera_basis(&c, e, f, NULL, NULL);
	double behind[3] = {e[0] - f[0], e[1] - f[1], e[2] - f[2]};
	assert_int_equal(lk_view_camera_project(&c, behind, w, h, px), 0);
	lk_scene_destroy(sc);
}

static void test_camera_controls(void **state)
{
	(void)state;
	lk_scene *sc = scene("boxstack");
	lk_view_camera c = lk_view_camera_frame(sc, 600, 600, 0, 600);
	const int w = 600, h = 600;
	/* pan: the point under the mouse follows it, pixel for pixel */
	double t0[3] = {c.target[0], c.target[1], c.target[2]}, px[2];
	lk_view_camera_pan(&c, 37, -21, h);
	assert_int_equal(lk_view_camera_project(&c, t0, w, h, px), 1);
	assert_double_equal(px[0], 0.5 * w + 37, 1e-7);
	assert_double_equal(px[1], 0.5 * h - 21, 1e-7);
	/* orbit keeps target and distance and never tips over */
	lk_view_camera before = c;
	lk_view_camera_orbit(&c, 120, 10000);
	assert_memory_equal(c.target, before.target, sizeof c.target);
	assert_double_equal(c.distance, before.distance, 0);
	assert_double_equal(c.pitch, 1.55, 0);
	assert_double_equal(c.yaw, before.yaw + 0.006 * 120, 1e-12);
	lk_view_camera_orbit(&c, 0, -1e6);
	assert_double_equal(c.pitch, -0.6, 0);
	/* zoom: 0.88 per wheel step */
	lk_view_camera_zoom(&c, 3);
	assert_double_equal(c.distance, before.distance * pow(0.88, 3), 1e-9 * before.distance);
	lk_view_camera_zoom(&c, -1e9);
	assert_double_equal(c.distance, 1e6, 0);
	lk_scene_destroy(sc);
}

/* Every scene's bodies are on screen, clear of the overlay, in the view the viewer opens with; and the
 * view centre is in the middle of the free rows. */
static void test_frame_shows_scene(void **state)
{
	(void)state;
	const int W = 1280, h = 720, w = W / 2;
	int rc[4];
	lk_view_panel_rect(0, W, h, rc);
	double top = rc[1] + rc[3] + 6, bottom = h - lk_view_bar_height(W, h) - 6;
	for (const char *const *n = lk_scene_names(); *n; ++n) {
		if (!strcmp(*n, "bigpool"))
			continue; /* ten thousand bodies: the same code, only slower */
		lk_scene *sc = scene(*n);
		lk_view_camera c = lk_view_camera_frame(sc, w, h, top, bottom);
		double pc[2];
		assert_int_equal(lk_view_camera_project(&c, sc->view_center, w, h, pc), 1);
		assert_double_equal(pc[0], 0.5 * w, 1e-6);
		assert_double_equal(pc[1], 0.5 * (top + bottom), 1e-6);
		for (int i = 0; i < sc->nbodies; ++i) {
			const lk_scene_body *b = &sc->bodies[i];
			if (b->shape == LK_SHAPE_PLANE || !(b->mass > 0))
				continue;
			double px[2];
			assert_int_equal(lk_view_camera_project(&c, b->pos, w, h, px), 1);
			if (px[0] < 0 || px[0] > w || px[1] < top || px[1] > bottom)
				fail_msg("%s: body %d at (%g, %g, %g) projects to (%g, %g), off the %dx%d view", *n, i, b->pos[0],
				         b->pos[1], b->pos[2], px[0], px[1], w, h);
		}
		lk_scene_destroy(sc);
	}
}

/* -------------------------------------------------------------------------------------- poke geometry */

static void test_drop_box(void **state)
{
	(void)state;
	lk_scene *sc = scene("boxstack:n=3");
	double r, m;
	lk_view_typical_body(sc, &r, &m);
	assert_double_equal(r, 0.5, 1e-12); /* unit boxes */
	assert_double_equal(m, 1.0, 1e-12);
	/* a ray from (1, -10, 8) through the ground point (1.5, -0.5, 0) */
	double o[3] = {1, -10, 8}, g[3] = {1.5, -0.5, 0}, d[3] = {g[0] - o[0], g[1] - o[1], g[2] - o[2]};
	double n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
	for (int k = 0; k < 3; ++k)
		d[k] /= n;
	lk_scene_body b;
	lk_view_drop_box(sc, o, d, 3.2, &b);
	assert_int_equal(b.shape, LK_SHAPE_BOX);
	assert_double_equal(b.pos[0], 1.5, 1e-9);
	assert_double_equal(b.pos[1], -0.5, 1e-9);
	assert_double_equal(b.pos[2], 3.2 + 3 * 0.5, 1e-12);
	assert_double_equal(b.size[0], 0.5, 1e-12);
	assert_double_equal(b.size[2], 0.5, 1e-12);
	assert_double_equal(b.vel[2], 0, 0);
	assert_double_equal(b.quat[0], 1, 0);
	/* a ray into the sky falls back to the view centre */
	double up[3] = {0, 0.6, 0.8};
	lk_view_drop_box(sc, o, up, 0, &b);
	assert_double_equal(b.pos[0], sc->view_center[0], 0);
	assert_double_equal(b.pos[1], sc->view_center[1], 0);
	/* a ray grazing the ground far away is held within two view extents */
	double far[3] = {0, 1, -1e-4};
	lk_view_drop_box(sc, o, far, 0, &b);
	assert_double_equal(b.pos[1], sc->view_center[1] + 2 * sc->view_extent, 1e-9);
	lk_scene_destroy(sc);

	/* 2D: the box goes where the ray meets the x-z plane, at y = 0 */
	sc = scene("pool1:n=20");
	assert_true(sc->plane2d);
	double o2[3] = {0.7, -20, 3}, p2[3] = {-1.2, 0, 2.0}, d2[3] = {p2[0] - o2[0], p2[1] - o2[1], p2[2] - o2[2]};
	n = sqrt(d2[0] * d2[0] + d2[1] * d2[1] + d2[2] * d2[2]);
	for (int k = 0; k < 3; ++k)
		d2[k] /= n;
	lk_view_drop_box(sc, o2, d2, 1.0, &b);
	assert_double_equal(b.pos[0], -1.2, 1e-9);
	assert_double_equal(b.pos[1], 0, 0);
	lk_view_typical_body(sc, &r, &m);
	assert_double_equal(r, 0.21, 1e-12);
	assert_double_equal(b.pos[2], 2.0 + 3 * r, 1e-9); /* above the point: it is higher than top_z */
	lk_scene_destroy(sc);
}

static void test_shoot_sphere(void **state)
{
	(void)state;
	lk_scene *sc = scene("pyramid");
	double r, m;
	lk_view_typical_body(sc, &r, &m);
	double o[3] = {-3, -12, 5}, d[3] = {0.3, 0.9, -0.2};
	double n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
	for (int k = 0; k < 3; ++k)
		d[k] /= n;
	lk_scene_body b;
	lk_view_shoot_sphere(sc, o, d, &b);
	assert_int_equal(b.shape, LK_SHAPE_SPHERE);
	assert_double_equal(b.size[0], 0.8 * r, 1e-12);
	assert_double_equal(b.mass, 3 * m, 1e-12);
	double speed = 5 * sqrt(9.81 * sc->view_extent);
	for (int k = 0; k < 3; ++k) {
		assert_double_equal(b.vel[k], speed * d[k], 1e-9);
		assert_double_equal(b.pos[k], o[k] + 3 * r * d[k], 1e-12);
	}
	lk_scene_destroy(sc);

	/* 2D: from the left edge of the view, in the x-z plane, aimed at the point under the ray */
	sc = scene("stacking");
	double o2[3] = {0.3, -15, 2}, p2[3] = {0.5, 0, 1.5}, d2[3] = {p2[0] - o2[0], p2[1] - o2[1], p2[2] - o2[2]};
	lk_view_typical_body(sc, &r, &m);
	lk_view_shoot_sphere(sc, o2, d2, &b);
	assert_double_equal(b.pos[1], 0, 0);
	assert_double_equal(b.vel[1], 0, 0);
	assert_double_equal(b.pos[0], sc->view_center[0] - 1.1 * sc->view_extent, 1e-12);
	assert_true(b.vel[0] > 0);
	double to[3] = {p2[0] - b.pos[0], 0, p2[2] - b.pos[2]};
	assert_double_equal(to[0] * b.vel[2] - to[2] * b.vel[0], 0, 1e-9 * speed);
	lk_scene_destroy(sc);
}

/* ------------------------------------------------------------------------------------ lk_sim_add_body */

/* A box dropped into a running world falls freely (symplectic Euler: v_k = -g h k, z_k = z_0 - g h^2 k (k + 1)
 * / 2), then comes to rest on the ground; the caller's scene is left as it was. */
static void add_body_check(lk_engine engine, const char *solver, double tol)
{
	lk_scene *sc = scene("boxstack:n=1");
	int n0 = sc->nbodies;
	lk_sim_def def = {sc, engine, solver, 20, 0, 0, 0};
	lk_sim *sim = NULL;
	char err[300];
	if (lk_sim_create(&def, &sim, err, sizeof err) != LK_OK)
		fail_msg("%s", err);
	for (int k = 0; k < 10; ++k)
		assert_int_equal(lk_sim_step(sim, NULL), LK_OK);

	lk_scene_body b;
	memset(&b, 0, sizeof b);
	b.shape = LK_SHAPE_BOX;
	b.size[0] = b.size[1] = b.size[2] = 0.25;
	b.mass = 2;
	b.pos[0] = 3;
	b.pos[2] = 4;
	b.quat[0] = 2; /* normalized on the way in */
	b.friction = 0.5;
	b.vel[0] = 0.5;
	assert_int_equal(lk_sim_add_body(sim, &b), LK_OK);
	assert_int_equal(sc->nbodies, n0);
	assert_int_equal(lk_sim_scene(sim)->nbodies, n0 + 1);
	assert_ptr_not_equal(lk_sim_scene(sim), sc);
	int i = n0;
	assert_double_equal(lk_sim_scene(sim)->bodies[i].quat[0], 1, 0);

	double h = sc->h, g = 9.81;
	lk_pose p;
	lk_sim_pose(sim, i, &p);
	assert_double_equal(p.pos[2], 4, tol);
	const int k = 20; /* 0.33 s: 0.56 m down, far from the ground */
	for (int s = 0; s < k; ++s)
		assert_int_equal(lk_sim_step(sim, NULL), LK_OK);
	lk_sim_pose(sim, i, &p);
	double v[3], w[3];
	lk_sim_velocity(sim, i, v, w);
	assert_double_equal(v[2], -g * h * k, tol);
	assert_double_equal(p.pos[2], 4 - g * h * h * k * (k + 1) / 2.0, tol);
	assert_double_equal(p.pos[0], 3 + 0.5 * h * k, tol);

	/* a second body, then rest: both on the ground at their half heights */
	b.shape = LK_SHAPE_SPHERE;
	b.size[0] = 0.3;
	b.pos[0] = -3;
	b.vel[0] = 0;
	assert_int_equal(lk_sim_add_body(sim, &b), LK_OK);
	assert_int_equal(lk_sim_scene(sim)->nbodies, n0 + 2);
	for (int s = 0; s < 180; ++s)
		assert_int_equal(lk_sim_step(sim, NULL), LK_OK);
	lk_sim_pose(sim, i, &p);
	assert_double_equal(p.pos[2], 0.25, 0.02);
	lk_sim_pose(sim, i + 1, &p);
	assert_double_equal(p.pos[2], 0.3, 0.02);
	lk_sim_velocity(sim, i + 1, v, w);
	assert_true(fabs(v[2]) < 0.05);

	/* rejected, and nothing added */
	lk_scene_body bad = b;
	bad.mass = 0;
	assert_int_equal(lk_sim_add_body(sim, &bad), LK_ERR_INVALID_ARGUMENT);
	bad = b;
	bad.shape = LK_SHAPE_PLANE;
	assert_int_equal(lk_sim_add_body(sim, &bad), LK_ERR_INVALID_ARGUMENT);
	bad = b;
	bad.pos[1] = NAN;
	assert_int_equal(lk_sim_add_body(sim, &bad), LK_ERR_INVALID_ARGUMENT);
	bad = b;
	bad.size[0] = -1;
	assert_int_equal(lk_sim_add_body(sim, &bad), LK_ERR_INVALID_ARGUMENT);
	bad = b;
	memset(bad.quat, 0, sizeof bad.quat);
	assert_int_equal(lk_sim_add_body(sim, &bad), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_sim_add_body(sim, NULL), LK_ERR_INVALID_ARGUMENT);
	assert_int_equal(lk_sim_scene(sim)->nbodies, n0 + 2);
	lk_sim_destroy(sim);
	assert_int_equal(sc->nbodies, n0);
	lk_scene_destroy(sc);
}

static void test_add_body_ode(void **state)
{
	(void)state;
	if (!lk_engine_available(LK_ENGINE_ODE))
		skip();
	add_body_check(LK_ENGINE_ODE, "pgs", 1e-9);
	add_body_check(LK_ENGINE_ODE, "ode-quickstep", 1e-9);
}

static void test_add_body_bullet(void **state)
{
	(void)state;
	if (!lk_engine_available(LK_ENGINE_BULLET))
		skip();
	add_body_check(LK_ENGINE_BULLET, "pgs", 1e-9);
	add_body_check(LK_ENGINE_BULLET, "bullet-si", 1e-9);
}

/* In a 2D scene an added body stays in the x-z plane even when given a y offset and y velocity. */
static void test_add_body_2d(void **state)
{
	(void)state;
	lk_engine engines[2] = {LK_ENGINE_ODE, LK_ENGINE_BULLET};
	for (int e = 0; e < 2; ++e) {
		if (!lk_engine_available(engines[e]))
			continue;
		lk_scene *sc = scene("pool1:n=10");
		lk_sim_def def = {sc, engines[e], "pgs", 20, 0, 0, 0};
		lk_sim *sim = NULL;
		char err[300];
		if (lk_sim_create(&def, &sim, err, sizeof err) != LK_OK)
			fail_msg("%s", err);
		lk_scene_body b;
		memset(&b, 0, sizeof b);
		b.shape = LK_SHAPE_SPHERE;
		b.size[0] = 0.2;
		b.mass = 1;
		b.pos[0] = 0.5;
		b.pos[1] = 0.7;
		b.pos[2] = 5;
		b.vel[1] = 3;
		b.angvel[0] = 2;
		b.quat[0] = 1;
		b.quat[1] = 0.3; /* a tilt out of the plane is dropped, the turn about y kept */
		b.quat[2] = 0.2;
		b.friction = 0.3;
		assert_int_equal(lk_sim_add_body(sim, &b), LK_OK);
		int i = sc->nbodies;
		const double *q = lk_sim_scene(sim)->bodies[i].quat;
		assert_double_equal(q[0], 1 / sqrt(1.04), 1e-12);
		assert_double_equal(q[1], 0, 0);
		assert_double_equal(q[2], 0.2 / sqrt(1.04), 1e-12);
		assert_double_equal(q[3], 0, 0);
		for (int s = 0; s < 60; ++s)
			assert_int_equal(lk_sim_step(sim, NULL), LK_OK);
		lk_pose p;
		double v[3], w[3];
		lk_sim_pose(sim, i, &p);
		lk_sim_velocity(sim, i, v, w);
		assert_double_equal(p.pos[1], 0, 1e-9);
		assert_double_equal(v[1], 0, 1e-9);
		assert_true(p.pos[2] < 5 - 1.0); /* it fell */
		lk_sim_destroy(sim);
		lk_scene_destroy(sc);
	}
}

/* ------------------------------------------------------------------------------------------- overlay */

static int is_text_white(const unsigned char *px)
{
	/* ARGB32 native-endian, premultiplied; white text: opaque and bright */
	uint32_t v;
	memcpy(&v, px, 4);
	unsigned a = v >> 24, r = (v >> 16) & 255, g = (v >> 8) & 255, b = v & 255;
	return a > 230 && r > 230 && g > 230 && b > 230;
}

static void test_overlay(void **state)
{
	(void)state;
	const int W = 1280, H = 720;
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, W, H);
	cairo_t *cr = cairo_create(s);
	double hist[2][100];
	for (int i = 0; i < 100; ++i) {
		hist[0][i] = 1e-2 * pow(0.97, i);
		hist[1][i] = 1e-4;
	}
	lk_view_overlay o;
	memset(&o, 0, sizeof o);
	o.side[0] = (lk_view_panel){"A  ODE  ode-quickstep", "ODE's own PGS", 0.123, 20, 1e-3, hist[0], 100, 300, NULL};
	o.side[1] = (lk_view_panel){"B  ODE  pgs", "projected Gauss-Seidel", 0.2, 20, 1e-4, hist[1], 100, 300, "note"};
	o.scene_line = "scene boxstack";
	o.help = "Space pause";
	o.history_seconds = 5;
	lk_view_overlay_draw(cr, W, H, &o);
	cairo_surface_flush(s);
	const unsigned char *data = cairo_image_surface_get_data(s);
	int stride = cairo_image_surface_get_stride(s);
	for (int side = 0; side < 2; ++side) {
		int rc[4];
		lk_view_panel_rect(side, W, H, rc);
		assert_true(rc[0] + rc[2] <= (side + 1) * W / 2);
		int white = 0, opaque = 0;
		for (int y = rc[1]; y < rc[1] + rc[3]; ++y)
			for (int x = rc[0]; x < rc[0] + rc[2]; ++x) {
				white += is_text_white(data + (size_t)y * stride + 4 * x);
				uint32_t v;
				memcpy(&v, data + (size_t)y * stride + 4 * x, 4);
				opaque += (v >> 24) > 0;
			}
		assert_true(white > 300);
		assert_true(opaque > rc[2] * rc[3] / 2);
	}
	/* between the panels and the bar the views show through: nothing drawn but the seam */
	int rc[4];
	lk_view_panel_rect(0, W, H, rc);
	int bar = lk_view_bar_height(W, H), drawn = 0;
	for (int y = rc[1] + rc[3] + 1; y < H - bar - 50; ++y)
		for (int x = 0; x < W; ++x) {
			if (x == W / 2 - 1 || x == W / 2)
				continue;
			uint32_t v;
			memcpy(&v, data + (size_t)y * stride + 4 * x, 4);
			drawn += v != 0;
		}
	assert_int_equal(drawn, 0);
	/* the bar is drawn */
	int white = 0;
	for (int y = H - bar; y < H; ++y)
		for (int x = 0; x < 400; ++x)
			white += is_text_white(data + (size_t)y * stride + 4 * x);
	assert_true(white > 50);
	cairo_destroy(cr);
	cairo_surface_destroy(s);
	cairo_debug_reset_static_data(); /* cairo's font caches, so leak checkers see only real leaks */
}

/* ------------------------------------------------------------------------------------- command line */

/* Runs a shell command; returns its exit status and its combined output (malloc'd). */
static int run(const char *cmd, char **out)
{
	char full[2048];
	snprintf(full, sizeof full, "%s 2>&1", cmd);
	FILE *p = popen(full, "r");
	assert_non_null(p);
	size_t cap = 1 << 14, len = 0, n;
	char *buf = malloc(cap);
	assert_non_null(buf);
	while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 512) {
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

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; ++s)
		n += *s == '\n';
	return n;
}

static void test_no_display(void **state)
{
	(void)state;
	const char *png = "test_view_nodisplay.png";
	remove(png);
	char cmd[1024], *out;
	snprintf(cmd, sizeof cmd, "env -u DISPLAY -u WAYLAND_DISPLAY '%s' view --screenshot %s --frames 2", bin(), png);
	int rc = run(cmd, &out);
	assert_int_equal(rc, 2);
	assert_int_equal(count_lines(out), 1);
	assert_non_null(strstr(out, "lcpkit view: "));
	assert_non_null(strstr(out, "lcpkit compare"));
	struct stat sb;
	assert_int_not_equal(stat(png, &sb), 0);
	free(out);
}

static void test_bad_options(void **state)
{
	(void)state;
	const char *bad[] = {"--left ode:nosuch", "--right bullet-si:x", "--scene nosuch", "--iters 0", "--size 10x10",
	                     "--frames 5", "--size 1280", "--left", "extra"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
		char cmd[1024], *out;
		snprintf(cmd, sizeof cmd, "env -u DISPLAY '%s' view %s", bin(), bad[i]);
		int rc = run(cmd, &out);
		if (rc != 2)
			fail_msg("view %s: status %d, output %s", bad[i], rc, out);
		assert_int_equal(count_lines(out), 1);
		assert_non_null(strstr(out, "lcpkit view: "));
		free(out);
	}
	char cmd[1024], *out;
	snprintf(cmd, sizeof cmd, "'%s' view --help", bin());
	assert_int_equal(run(cmd, &out), 0);
	assert_non_null(strstr(out, "--screenshot"));
	free(out);
}

/* ------------------------------------------------------------------------------------ under Xvfb */

/* 1: saturated (a lit body); ground, sky, walls and text are grey or nearly so */
static int saturated(uint32_t v)
{
	int r = (v >> 16) & 255, g = (v >> 8) & 255, b = v & 255;
	int mx = r > g ? (r > b ? r : b) : (g > b ? g : b), mn = r < g ? (r < b ? r : b) : (g < b ? g : b);
	return mx - mn >= 60;
}

static int white(uint32_t v)
{
	return ((v >> 16) & 255) > 230 && ((v >> 8) & 255) > 230 && (v & 255) > 230;
}

static int in_rect(int x, int y, const int rc[4])
{
	return x >= rc[0] && x < rc[0] + rc[2] && y >= rc[1] && y < rc[1] + rc[3];
}

static void test_screenshot_xvfb(void **state)
{
	(void)state;
	const int W = 960, H = 540;
	const char *png = "test_view_shot.png";
	remove(png);
	char cmd[2048], *out;
	snprintf(cmd, sizeof cmd,
	         "xvfb-run -a -s '-screen 0 1280x720x24' '%s' view --size %dx%d --frames 30 --screenshot %s", bin(), W, H,
	         png);
	int rc = run(cmd, &out);
	if (rc != 0)
		fail_msg("%s: status %d: %s", cmd, rc, out);
	free(out);

	cairo_surface_t *img = cairo_image_surface_create_from_png(png);
	assert_int_equal(cairo_surface_status(img), CAIRO_STATUS_SUCCESS);
	assert_int_equal(cairo_image_surface_get_width(img), W);
	assert_int_equal(cairo_image_surface_get_height(img), H);
	cairo_surface_flush(img);
	const unsigned char *data = cairo_image_surface_get_data(img);
	int stride = cairo_image_surface_get_stride(img);
	int panel[2][4], bar = lk_view_bar_height(W, H);
	lk_view_panel_rect(0, W, H, panel[0]);
	lk_view_panel_rect(1, W, H, panel[1]);
	int bodies[2] = {0, 0}, text[2] = {0, 0}, stray_text = 0;
	for (int y = 0; y < H; ++y)
		for (int x = 0; x < W; ++x) {
			uint32_t v;
			memcpy(&v, data + (size_t)y * stride + 4 * x, 4);
			int side = x < W / 2 ? 0 : 1;
			if (in_rect(x, y, panel[side])) {
				text[side] += white(v);
				continue;
			}
			if (y >= H - bar || x == W / 2 - 1 || x == W / 2)
				continue;
			bodies[side] += saturated(v);
			stray_text += white(v);
		}
	print_message("body pixels %d | %d, panel text pixels %d | %d, white outside the overlay %d\n", bodies[0],
	              bodies[1], text[0], text[1], stray_text);
	/* a stack of ten unit boxes, about 20 x 200 pixels at this size, on each side */
	assert_true(bodies[0] > 1500);
	assert_true(bodies[1] > 1500);
	/* the panels' text; and white appears nowhere else, so it is the overlay that was counted */
	assert_true(text[0] > 300);
	assert_true(text[1] > 300);
	assert_int_equal(stray_text, 0);
	cairo_surface_destroy(img);
	remove(png);
}

static int on_path(const char *prog)
{
	const char *path = getenv("PATH");
	if (!path)
		return 0;
	char buf[4096];
	while (*path) {
		size_t n = strcspn(path, ":");
		snprintf(buf, sizeof buf, "%.*s/%s", (int)n, path, prog);
		if (access(buf, X_OK) == 0)
			return 1;
		path += n;
		if (*path == ':')
			++path;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "xvfb")) {
		if (!on_path("xvfb-run")) {
			fprintf(stderr, "xvfb-run not found (Debian package xvfb): skipped\n");
			return SKIP_STATUS;
		}
		const struct CMUnitTest xvfb[] = {cmocka_unit_test(test_screenshot_xvfb)};
		return cmocka_run_group_tests_name("view under Xvfb", xvfb, NULL, NULL);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_camera_center_ray),  cmocka_unit_test(test_camera_project_roundtrip),
		cmocka_unit_test(test_camera_controls),    cmocka_unit_test(test_frame_shows_scene),
		cmocka_unit_test(test_drop_box),           cmocka_unit_test(test_shoot_sphere),
		cmocka_unit_test(test_add_body_ode),       cmocka_unit_test(test_add_body_bullet),
		cmocka_unit_test(test_add_body_2d),        cmocka_unit_test(test_overlay),
		cmocka_unit_test(test_no_display),         cmocka_unit_test(test_bad_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

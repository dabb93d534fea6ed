/* The viewer's orbit camera and the bodies it drops into a scene: plain geometry, no display needed. */
#include "view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double dot3(const double a[3], const double b[3])
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross3(const double a[3], const double b[3], double out[3])
{
	double r[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
	memcpy(out, r, sizeof r);
}

static void normalize3(double v[3])
{
	double n = sqrt(dot3(v, v));
	if (n > 0)
		for (int k = 0; k < 3; ++k)
			v[k] /= n;
}

lk_view_camera lk_view_camera_frame(const lk_scene *sc, int w, int h, double top, double bottom)
{
	lk_view_camera c;
	memcpy(c.target, sc->view_center, sizeof c.target);
	c.fovy = 45.0 * 3.14159265358979323846 / 180.0;
	/* 2D scenes face the viewer square on; 3D ones from a little to the side so depth shows */
	c.yaw = sc->plane2d ? 0.0 : 0.45;
	c.pitch = sc->plane2d ? 0.08 : 0.30;
	if (w < 1)
		w = 1;
	if (h < 1)
		h = 1;
	if (!(bottom - top >= 0.3 * h) || top < 0 || bottom > h) {
		top = 0;
		bottom = h;
	}
	/* the extent E must fit half the free height and half the width; the target distance d shows
	 * (h / 2) / (d tan(fovy / 2)) pixels per metre */
	double extent = sc->view_extent > 0 ? sc->view_extent : 5.0;
	double room = fmin(0.5 * w, 0.5 * (bottom - top)), t = tan(0.5 * c.fovy);
	c.distance = 1.05 * extent * 0.5 * h / (t * room);
	/* the view centre in the middle of the free rows */
	lk_view_camera_pan(&c, 0, 0.5 * (top + bottom) - 0.5 * h, h);
	return c;
}

void lk_view_camera_basis(const lk_view_camera *c, double eye[3], double fwd[3], double right[3], double up[3])
{
	double f[3] = {sin(c->yaw) * cos(c->pitch), cos(c->yaw) * cos(c->pitch), -sin(c->pitch)};
	const double z[3] = {0, 0, 1};
	double r[3], u[3];
	cross3(f, z, r);
	normalize3(r);
	cross3(r, f, u);
	for (int k = 0; k < 3; ++k) {
		if (eye)
			eye[k] = c->target[k] - c->distance * f[k];
		if (fwd)
			fwd[k] = f[k];
		if (right)
			right[k] = r[k];
		if (up)
			up[k] = u[k];
	}
}

void lk_view_camera_matrices(const lk_view_camera *c, double aspect, double zn, double zf, double P[16], double V[16])
{
	double t = 1.0 / tan(0.5 * c->fovy);
	memset(P, 0, 16 * sizeof(double));
	P[0] = t / aspect;
	P[5] = t;
	P[10] = (zf + zn) / (zn - zf);
	P[11] = -1;
	P[14] = 2 * zf * zn / (zn - zf);
	double e[3], f[3], r[3], u[3];
	lk_view_camera_basis(c, e, f, r, u);
	/* rows right, up, -forward; then the eye moved to the origin */
	for (int k = 0; k < 3; ++k) {
		V[4 * k + 0] = r[k];
		V[4 * k + 1] = u[k];
		V[4 * k + 2] = -f[k];
		V[4 * k + 3] = 0;
	}
	V[12] = -dot3(r, e);
	V[13] = -dot3(u, e);
	V[14] = dot3(f, e);
	V[15] = 1;
}

void lk_view_camera_ray(const lk_view_camera *c, double x, double y, int w, int h, double origin[3], double dir[3])
{
	double e[3], f[3], r[3], u[3];
	lk_view_camera_basis(c, e, f, r, u);
	double t = tan(0.5 * c->fovy), aspect = (double)w / (double)h;
	double nx = 2.0 * x / w - 1.0, ny = 1.0 - 2.0 * y / h;
	for (int k = 0; k < 3; ++k) {
		origin[k] = e[k];
		dir[k] = f[k] + nx * t * aspect * r[k] + ny * t * u[k];
	}
	normalize3(dir);
}

int lk_view_camera_project(const lk_view_camera *c, const double p[3], int w, int h, double px[2])
{
	double e[3], f[3], r[3], u[3];
	lk_view_camera_basis(c, e, f, r, u);
	double d[3] = {p[0] - e[0], p[1] - e[1], p[2] - e[2]};
	double zc = dot3(d, f);
	if (!(zc > 0))
		return 0;
	double t = tan(0.5 * c->fovy), aspect = (double)w / (double)h;
	double nx = dot3(d, r) / (zc * t * aspect), ny = dot3(d, u) / (zc * t);
	px[0] = 0.5 * (nx + 1.0) * w;
	px[1] = 0.5 * (1.0 - ny) * h;
	return 1;
}

void lk_view_camera_orbit(lk_view_camera *c, double dx, double dy)
{
	c->yaw += 0.006 * dx;
	c->pitch += 0.006 * dy;
	/* never past straight down or far below the ground: the up vector would flip */
	if (c->pitch > 1.55)
		c->pitch = 1.55;
	if (c->pitch < -0.6)
		c->pitch = -0.6;
}

void lk_view_camera_pan(lk_view_camera *c, double dx, double dy, int h)
{
	double r[3], u[3];
	lk_view_camera_basis(c, NULL, NULL, r, u);
	/* metres per pixel in the plane through the target, so the point under the mouse follows it */
	double s = 2.0 * c->distance * tan(0.5 * c->fovy) / (h > 0 ? h : 1);
	for (int k = 0; k < 3; ++k)
		c->target[k] += s * (-dx * r[k] + dy * u[k]);
}

void lk_view_camera_zoom(lk_view_camera *c, double steps)
{
	c->distance *= pow(0.88, steps);
	if (c->distance < 1e-3)
		c->distance = 1e-3;
	if (c->distance > 1e6)
		c->distance = 1e6;
}

/* ------------------------------------------------------------------------------------ poking a scene */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void lk_view_typical_body(const lk_scene *sc, double *radius, double *mass)
{
	int n = 0;
	for (int i = 0; i < sc->nbodies; ++i)
		n += sc->bodies[i].mass > 0 && sc->bodies[i].shape != LK_SHAPE_PLANE;
	double extent = sc->view_extent > 0 ? sc->view_extent : 5.0;
	if (n == 0) {
		*radius = 0.05 * extent;
		*mass = 1.0;
		return;
	}
	double *r = malloc(sizeof *r * (size_t)n), *m = malloc(sizeof *m * (size_t)n);
	if (!r || !m) {
		free(r);
		free(m);
		*radius = 0.05 * extent;
		*mass = 1.0;
		return;
	}
	int k = 0;
	for (int i = 0; i < sc->nbodies; ++i) {
		const lk_scene_body *b = &sc->bodies[i];
		if (!(b->mass > 0) || b->shape == LK_SHAPE_PLANE)
			continue;
		if (b->shape == LK_SHAPE_CAPSULE)
			r[k] = cbrt(b->size[0] * b->size[0] * (b->size[0] + b->size[1]));
		else
			r[k] = b->shape == LK_SHAPE_SPHERE ? b->size[0] : cbrt(b->size[0] * b->size[1] * b->size[2]);
		m[k++] = b->mass;
	}
	qsort(r, (size_t)n, sizeof *r, cmp_double);
	qsort(m, (size_t)n, sizeof *m, cmp_double);
	*radius = r[n / 2];
	*mass = m[n / 2];
	free(r);
	free(m);
}

static int has_ground(const lk_scene *sc)
{
	for (int i = 0; i < sc->nbodies; ++i)
		if (sc->bodies[i].shape == LK_SHAPE_PLANE)
			return 1;
	return 0;
}

/* Where the ray meets the ground plane z = 0 (the plane y = 0 in 2D scenes, the level of the view centre
 * when the scene has no ground), kept within two view extents of the view centre. */
static void ray_target(const lk_scene *sc, const double o[3], const double d[3], double p[3])
{
	int axis = sc->plane2d ? 1 : 2;
	double level = sc->plane2d ? 0.0 : (has_ground(sc) ? 0.0 : sc->view_center[2]);
	memcpy(p, sc->view_center, 3 * sizeof(double));
	if (fabs(d[axis]) > 1e-12) {
		double t = (level - o[axis]) / d[axis];
		if (t > 0)
			for (int k = 0; k < 3; ++k)
				p[k] = o[k] + t * d[k];
	}
	p[axis] = level;
	double lim = 2.0 * (sc->view_extent > 0 ? sc->view_extent : 5.0);
	for (int k = 0; k < 3; ++k) {
		if (k == axis)
			continue;
		if (p[k] > sc->view_center[k] + lim)
			p[k] = sc->view_center[k] + lim;
		if (p[k] < sc->view_center[k] - lim)
			p[k] = sc->view_center[k] - lim;
	}
}

static void new_body(lk_scene_body *b, lk_scene_shape shape, double r, double mass)
{
	memset(b, 0, sizeof *b);
	b->shape = shape;
	b->size[0] = b->size[1] = b->size[2] = r;
	b->mass = mass;
	b->quat[0] = 1;
	b->friction = 0.5;
}

void lk_view_drop_box(const lk_scene *sc, const double origin[3], const double dir[3], double top_z,
                      lk_scene_body *out)
{
	double r, m, p[3];
	lk_view_typical_body(sc, &r, &m);
	ray_target(sc, origin, dir, p);
	new_body(out, LK_SHAPE_BOX, r, m);
	out->pos[0] = p[0];
	out->pos[1] = sc->plane2d ? 0.0 : p[1];
	out->pos[2] = fmax(top_z, p[2]) + 3.0 * r;
}

void lk_view_shoot_sphere(const lk_scene *sc, const double origin[3], const double dir[3], lk_scene_body *out)
{
	double r, m;
	lk_view_typical_body(sc, &r, &m);
	double extent = sc->view_extent > 0 ? sc->view_extent : 5.0;
	double g = sqrt(dot3(sc->gravity, sc->gravity));
	/* fast enough to cross the view before gravity bends the path much: it falls g (2E/v)^2 / 2 = E / 12.5
	 * over two view extents E */
	double speed = fmax(5.0, 5.0 * sqrt((g > 0 ? g : 9.81) * extent));
	/* three times the typical mass, so the poke shows in both solvers */
	new_body(out, LK_SHAPE_SPHERE, 0.8 * r, 3.0 * m);
	out->friction = 0.3;
	double d[3];
	if (sc->plane2d) {
		double p[3];
		ray_target(sc, origin, dir, p);
		out->pos[0] = sc->view_center[0] - 1.1 * extent;
		out->pos[1] = 0;
		out->pos[2] = p[2] + 0.5 * r;
		d[0] = p[0] - out->pos[0];
		d[1] = 0;
		d[2] = p[2] - out->pos[2];
		if (!(dot3(d, d) > 0))
			d[0] = 1;
		normalize3(d);
	} else {
		memcpy(d, dir, sizeof d);
		normalize3(d);
		for (int k = 0; k < 3; ++k)
			out->pos[k] = origin[k] + 3.0 * r * d[k];
	}
	for (int k = 0; k < 3; ++k)
		out->vel[k] = speed * d[k];
}

/* lcpkit view: a scene's bodies and ground in fixed-function OpenGL. */
#include "view_draw.h"

#include <GLFW/glfw3.h>
#include <math.h>
#include <stdlib.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* saturated colours only: the tests tell bodies from ground, background and text by their saturation */
static const double palette[][3] = {
	{0.90, 0.33, 0.25}, {0.22, 0.52, 0.86}, {0.30, 0.72, 0.32}, {0.95, 0.62, 0.15}, {0.60, 0.38, 0.80},
	{0.12, 0.70, 0.72}, {0.88, 0.36, 0.62}, {0.70, 0.72, 0.14}, {0.40, 0.33, 0.85}, {0.82, 0.48, 0.22},
};
#define NPALETTE ((int)(sizeof palette / sizeof palette[0]))

/* ------------------------------------------------------------------------------------------- drawing */

void lk__view_build_sphere(lk__view_mesh *m, int nlat, int nlon)
{
	int ntri = 2 * nlat * nlon;
	for (int t = 0; t < 2; ++t) {
		m->data[t] = malloc(sizeof(float) * 18 * (size_t)ntri);
		m->n[t] = 0;
	}
	if (!m->data[0] || !m->data[1])
		return;
	for (int i = 0; i < nlat; ++i)
		for (int j = 0; j < nlon; ++j) {
			double th0 = M_PI * i / nlat, th1 = M_PI * (i + 1) / nlat;
			double ph0 = 2 * M_PI * j / nlon, ph1 = 2 * M_PI * (j + 1) / nlon;
			double p[4][3] = {{sin(th0) * cos(ph0), sin(th0) * sin(ph0), cos(th0)},
			                  {sin(th1) * cos(ph0), sin(th1) * sin(ph0), cos(th1)},
			                  {sin(th1) * cos(ph1), sin(th1) * sin(ph1), cos(th1)},
			                  {sin(th0) * cos(ph1), sin(th0) * sin(ph1), cos(th0)}};
			/* octants in two tones, so rolling and spinning show */
			int tone = ((i < nlat / 2) ^ ((j * 4 / nlon) & 1)) & 1;
			const int tri[2][3] = {{0, 1, 2}, {0, 2, 3}};
			for (int t = 0; t < 2; ++t) {
				const double *a = p[tri[t][0]], *b = p[tri[t][1]], *c = p[tri[t][2]];
				double n[3] = {a[0] + b[0] + c[0], a[1] + b[1] + c[1], a[2] + b[2] + c[2]};
				double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
				float *out = m->data[tone] + 6 * m->n[tone];
				for (int v = 0; v < 3; ++v) {
					const double *q = p[tri[t][v]];
					for (int k = 0; k < 3; ++k) {
						out[6 * v + k] = (float)(n[k] / len);
						out[6 * v + 3 + k] = (float)q[k];
					}
				}
				m->n[tone] += 3;
			}
		}
}

void lk__view_free_mesh(lk__view_mesh *m)
{
	free(m->data[0]);
	free(m->data[1]);
}

static void pose_matrix(const lk_pose *p, double M[16])
{
	double w = p->quat[0], x = p->quat[1], y = p->quat[2], z = p->quat[3];
	double R[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
	                  {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
	                  {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
	for (int c = 0; c < 3; ++c) {
		for (int r = 0; r < 3; ++r)
			M[4 * c + r] = R[r][c];
		M[4 * c + 3] = 0;
		M[12 + c] = p->pos[c];
	}
	M[15] = 1;
}

static void draw_box_faces(void)
{
	static const float n[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
	static const float v[6][4][3] = {
		{{1, -1, -1}, {1, 1, -1}, {1, 1, 1}, {1, -1, 1}},     {{-1, -1, -1}, {-1, -1, 1}, {-1, 1, 1}, {-1, 1, -1}},
		{{-1, 1, -1}, {-1, 1, 1}, {1, 1, 1}, {1, 1, -1}},     {{-1, -1, -1}, {1, -1, -1}, {1, -1, 1}, {-1, -1, 1}},
		{{-1, -1, 1}, {1, -1, 1}, {1, 1, 1}, {-1, 1, 1}},     {{-1, -1, -1}, {-1, 1, -1}, {1, 1, -1}, {1, -1, -1}},
	};
	glBegin(GL_QUADS);
	for (int f = 0; f < 6; ++f) {
		glNormal3fv(n[f]);
		for (int k = 0; k < 4; ++k)
			glVertex3fv(v[f][k]);
	}
	glEnd();
}

static void draw_box_edges(void)
{
	glBegin(GL_LINES);
	for (int axis = 0; axis < 3; ++axis)
		for (int s = 0; s < 4; ++s) {
			float a[3], b[3];
			int u = (axis + 1) % 3, w = (axis + 2) % 3;
			a[axis] = -1;
			b[axis] = 1;
			a[u] = b[u] = (s & 1) ? 1.0f : -1.0f;
			a[w] = b[w] = (s & 2) ? 1.0f : -1.0f;
			glVertex3fv(a);
			glVertex3fv(b);
		}
	glEnd();
}

static void draw_sphere(const lk__view_mesh *m, const double c[3], double alpha)
{
	for (int t = 0; t < 2; ++t) {
		if (t == 0)
			glColor4d(c[0], c[1], c[2], alpha);
		else
			glColor4d(0.55 * c[0] + 0.45 * 0.95, 0.55 * c[1] + 0.45 * 0.93, 0.55 * c[2] + 0.45 * 0.85, alpha);
		glInterleavedArrays(GL_N3F_V3F, 0, m->data[t]);
		glDrawArrays(GL_TRIANGLES, 0, m->n[t]);
	}
}

/* A capsule along its body z: a ball at each end of an open cylinder. */
static void draw_capsule(const lk__view_mesh *m, double r, double hh, const double c[3], double alpha)
{
	for (int end = -1; end <= 1; end += 2) {
		glPushMatrix();
		glTranslated(0, 0, end * hh);
		glScaled(r, r, r);
		draw_sphere(m, c, alpha);
		glPopMatrix();
	}
	const int sides = 24;
	glColor4d(c[0], c[1], c[2], alpha);
	glBegin(GL_QUAD_STRIP);
	for (int k = 0; k <= sides; ++k) {
		double a = 2 * M_PI * k / sides;
		glNormal3d(cos(a), sin(a), 0);
		glVertex3d(r * cos(a), r * sin(a), -hh);
		glVertex3d(r * cos(a), r * sin(a), hh);
	}
	glEnd();
}

void lk__view_draw_ground(const lk_scene *sc)
{
	double extent = sc->view_extent > 0 ? sc->view_extent : 5;
	/* tiles of a round size near a quarter of the view */
	double raw = extent / 4, mag = pow(10, floor(log10(raw))), f = raw / mag;
	double tile = (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
	int n = (int)ceil(8 * extent / tile);
	if (n > 200)
		n = 200;
	double cx = tile * floor(sc->view_center[0] / tile), cy = tile * floor(sc->view_center[1] / tile);
	glNormal3d(0, 0, 1);
	glBegin(GL_QUADS);
	for (int i = -n; i < n; ++i)
		for (int j = -n; j < n; ++j) {
			double g = ((i + j) & 1) ? 0.50 : 0.56;
			glColor3d(g, g, g * 1.02);
			double x = cx + i * tile, y = cy + j * tile;
			glVertex3d(x, y, 0);
			glVertex3d(x + tile, y, 0);
			glVertex3d(x + tile, y + tile, 0);
			glVertex3d(x, y + tile, 0);
		}
	glEnd();
}

void lk__view_draw_bodies(const lk__view_mesh sphere[2], const lk_sim *sim, int pass)
{
	const lk_scene *sc = lk_sim_scene(sim);
	const lk__view_mesh *sm = &sphere[sc->nbodies > 1500 ? 1 : 0];
	for (int i = 0; i < sc->nbodies; ++i) {
		const lk_scene_body *b = &sc->bodies[i];
		if (b->shape == LK_SHAPE_PLANE)
			continue;
		int is_static = !(b->mass > 0);
		/* pass 0: dynamic bodies, opaque; pass 1: static ones see-through, so walls hide nothing */
		if (is_static != pass)
			continue;
		lk_pose p;
		lk_sim_pose(sim, i, &p);
		double M[16];
		pose_matrix(&p, M);
		glPushMatrix();
		glMultMatrixd(M);
		const double *c = palette[i % NPALETTE];
		if (b->shape == LK_SHAPE_SPHERE) {
			static const double grey[3] = {0.6, 0.6, 0.62};
			glScaled(b->size[0], b->size[0], b->size[0]);
			draw_sphere(sm, is_static ? grey : c, is_static ? 0.5 : 1.0);
		} else if (b->shape == LK_SHAPE_CAPSULE) {
			draw_capsule(sm, b->size[0], b->size[1], c, is_static ? 0.5 : 1.0);
		} else {
			glScaled(b->size[0], b->size[1], b->size[2]);
			if (is_static)
				glColor4d(0.62, 0.63, 0.66, 0.5);
			else
				glColor3d(c[0], c[1], c[2]);
			glEnable(GL_POLYGON_OFFSET_FILL);
			draw_box_faces();
			glDisable(GL_POLYGON_OFFSET_FILL);
			glDisable(GL_LIGHTING);
			if (is_static)
				glColor4d(0.3, 0.3, 0.32, 0.5);
			else
				glColor3d(0.3 * c[0], 0.3 * c[1], 0.3 * c[2]);
			draw_box_edges();
			glEnable(GL_LIGHTING);
		}
		glPopMatrix();
	}
}

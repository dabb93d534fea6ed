/* lcpkit view, the live split-screen viewer, in parts: the camera and the geometry of poking a scene
 * (view_camera.c) and the text overlay (view_overlay.c) need no display, so the tests use them directly;
 * view_app.c is the GLFW and OpenGL window; scenes/cli/cmd_view.c the command line. */
#ifndef LCPKIT_VIEW_H
#define LCPKIT_VIEW_H

#include "scene.h"
#include "sim.h"

#include <cairo.h>

/* ------------------------------------------------------------------------------------------- camera */

/* An orbit camera around a target, z up. */
typedef struct lk_view_camera {
	double target[3];
	double yaw;      /* radians about z; 0 looks along +y, so the x-z plane of 2D scenes faces the viewer */
	double pitch;    /* radians; positive looks down onto the target */
	double distance; /* metres from the eye to the target */
	double fovy;     /* vertical field of view, radians */
} lk_view_camera;

/* A camera that shows the scene's view_center +- view_extent within pixel rows top to bottom of a w x h
 * viewport (the overlay covers the rest); top = 0, bottom = h for all of it. */
lk_view_camera lk_view_camera_frame(const lk_scene *sc, int w, int h, double top, double bottom);
/* The eye position and the unit forward, right and up vectors. */
void lk_view_camera_basis(const lk_view_camera *c, double eye[3], double fwd[3], double right[3], double up[3]);
/* Column-major 4x4 projection and view matrices (for glLoadMatrixd). */
void lk_view_camera_matrices(const lk_view_camera *c, double aspect, double znear, double zfar, double proj[16],
                             double view[16]);
/* The world ray through point (x, y) of a w x h pixel viewport (origin top left): origin = eye, unit dir. */
void lk_view_camera_ray(const lk_view_camera *c, double x, double y, int w, int h, double origin[3], double dir[3]);
/* The viewport point (origin top left) of world point p; 0 if p is not in front of the eye. */
int lk_view_camera_project(const lk_view_camera *c, const double p[3], int w, int h, double px[2]);
/* Mouse motion in pixels: orbit about the target, pan in the view plane (h = viewport height), zoom
 * (positive steps come closer). */
void lk_view_camera_orbit(lk_view_camera *c, double dx, double dy);
void lk_view_camera_pan(lk_view_camera *c, double dx, double dy, int h);
void lk_view_camera_zoom(lk_view_camera *c, double steps);

/* ------------------------------------------------------------------------------------ poking a scene */

/* The typical size (radius of a sphere, half edge of a cube of the same volume) and mass of the scene's
 * dynamic bodies (medians); from the view extent when there are none. */
void lk_view_typical_body(const lk_scene *sc, double *radius, double *mass);
/* A box dropped above the point under a mouse ray: where the ray meets the ground (the x-z plane of a 2D
 * scene), held within two view extents of the view centre, top_z + 3 sizes high (top_z: the highest body
 * top now). */
void lk_view_drop_box(const lk_scene *sc, const double origin[3], const double dir[3], double top_z,
                      lk_scene_body *out);
/* A sphere shot along a mouse ray from just in front of the eye; in a 2D scene from the left edge of the
 * view towards the point under the ray, in the x-z plane. */
void lk_view_shoot_sphere(const lk_scene *sc, const double origin[3], const double dir[3], lk_scene_body *out);

/* ------------------------------------------------------------------------------------------- overlay */

/* What one side's panel shows. */
typedef struct lk_view_panel {
	const char *title;      /* "A  ode  pgs" */
	const char *params;     /* the solver's description and parameters */
	double solve_ms;        /* solver time per step, ms (mean of the last steps); < 0: none yet */
	double iterations;      /* of the last step */
	double res;             /* RES after the last step's solve */
	const double *res_hist; /* RES after each of the last steps, oldest first */
	int res_n;
	int res_cap;            /* steps the plot spans (history length) */
	const char *status;     /* an error or a note in red, or NULL */
} lk_view_panel;

typedef struct lk_view_overlay {
	lk_view_panel side[2];
	const char *scene_line; /* scene, time, state */
	const char *help;       /* the keys */
	const char *message;    /* a transient note shown at the top centre, or NULL */
	double history_seconds; /* time the RES plot spans */
} lk_view_overlay;

/* The panel rectangle {x, y, w, h} of side 0 (left) or 1 (right) in a W x H window. */
void lk_view_panel_rect(int side, int W, int H, int rect[4]);
/* The height of the bottom bar (scene line and help) in a W x H window. */
int lk_view_bar_height(int W, int H);
/* Draws the overlay onto a transparent W x H ARGB32 surface. */
void lk_view_overlay_draw(cairo_t *cr, int W, int H, const lk_view_overlay *o);

/* ------------------------------------------------------------------------------------------ the window */

typedef struct lk_view_options {
	char scene[160];
	lk_engine engine[2];
	char solver[2][160];
	int iterations;
	int width, height;
	const char *screenshot; /* write the window to this PNG after `frames` frames and exit */
	int frames;
} lk_view_options;

/* Opens the window and runs until closed; returns an exit status (LK_EXIT_USAGE when there is no display).
 * Only built with GLFW and OpenGL. */
int lk__view_run(const lk_view_options *opt);

#endif

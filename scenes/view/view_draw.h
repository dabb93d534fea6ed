/* lcpkit view's drawing of a scene's bodies and ground in fixed-function OpenGL (view_draw.c), apart from the
 * window's events and overlay (view_app.c). */
#ifndef LK_VIEW_DRAW_H
#define LK_VIEW_DRAW_H

#include "scene.h"
#include "sim.h"

typedef struct lk__view_mesh {
	float *data[2]; /* interleaved normal and vertex (GL_N3F_V3F) triangles of the two tones */
	int n[2];       /* vertices */
} lk__view_mesh;

/* A unit sphere of nlat x nlon quads in two tones; freed by lk__view_free_mesh. */
void lk__view_build_sphere(lk__view_mesh *m, int nlat, int nlon);
void lk__view_free_mesh(lk__view_mesh *m);
/* The scene's ground plane and static boxes. */
void lk__view_draw_ground(const lk_scene *sc);
/* The moving bodies of sim: pass 0 their faces, pass 1 their edges (sphere: the fine and the coarse mesh). */
void lk__view_draw_bodies(const lk__view_mesh sphere[2], const lk_sim *sim, int pass);

#endif

/* PNG line plots and scene pictures drawn with cairo. */
#ifndef LCPKIT_PLOT_H
#define LCPKIT_PLOT_H

#include "scene.h"

typedef struct lk_series {
	const char *name;
	int n;
	const double *x;
	const double *y;
} lk_series;

typedef struct lk_plot {
	const char *title;
	const char *xlabel;
	const char *ylabel;
	int log_y;          /* logarithmic y axis (non-positive values are left out) */
	int width, height;  /* pixels */
} lk_plot;

/* Draws the series into a PNG file. LK_OK, or LK_ERR_IO if the file cannot be written. */
lk_status lk_plot_png(const char *path, const lk_plot *plot, const lk_series *series, int nseries);

/* A grid of side views (x-z plane, orthographic) of a scene: columns are runs (solvers), rows are times.
 * poses[(row * cols + col) * nbodies + body]. LK_OK, or LK_ERR_IO if the file cannot be written. */
lk_status lk_render_grid_png(const char *path, const lk_scene *scene, int rows, int cols,
                             const char *const *col_titles, const char *const *row_titles, const lk_pose *poses,
                             int cell_px);

#endif

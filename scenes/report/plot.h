/* PNG line plots and scene pictures drawn with cairo. */
#ifndef LCPKIT_PLOT_H
#define LCPKIT_PLOT_H

#include "scene.h"

typedef struct lk_series {
	const char *name;
	int n;
	const double *x;
	const double *y;
	const char *const *labels; /* a label next to each point, or NULL */
	int markers;               /* 1: a dot at each point */
	int underlay;              /* 1: a thick grey line under the other series (a frontier, a bound) */
} lk_series;

typedef struct lk_plot {
	const char *title;
	const char *xlabel;
	const char *ylabel;
	int log_y;          /* logarithmic y axis (non-positive values are left out) */
	int width, height;  /* pixels */
	int log_x;          /* logarithmic x axis (non-positive values are left out) */
	double ymin, ymax;  /* the y range; ymin >= ymax: from the data */
} lk_plot;

/* Draws the series into a PNG file. LK_OK, or LK_ERR_IO if the file cannot be written. */
lk_status lk_plot_png(const char *path, const lk_plot *plot, const lk_series *series, int nseries);

/* A grid of side views (x-z plane, orthographic) of a scene: columns are runs (solvers), rows are times.
 * poses[(row * cols + col) * nbodies + body]. LK_OK, or LK_ERR_IO if the file cannot be written. */
lk_status lk_render_grid_png(const char *path, const lk_scene *scene, int rows, int cols,
                             const char *const *col_titles, const char *const *row_titles, const lk_pose *poses,
                             int cell_px);

#endif

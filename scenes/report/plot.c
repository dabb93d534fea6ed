/* Plots and pictures with cairo (Debian libcairo2-dev). */
#include "plot.h"

#include <cairo.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_PI_2
#define M_PI_2 1.57079632679489661923
#endif

static const double palette[][3] = {
	{0.122, 0.467, 0.706}, {0.839, 0.153, 0.157}, {0.173, 0.627, 0.173}, {1.000, 0.498, 0.055},
	{0.580, 0.404, 0.741}, {0.549, 0.337, 0.294}, {0.890, 0.467, 0.761}, {0.498, 0.498, 0.498},
	{0.737, 0.741, 0.133}, {0.090, 0.745, 0.812}, {0.100, 0.100, 0.100}, {0.000, 0.420, 0.380},
	{0.550, 0.400, 0.000}, {0.450, 0.000, 0.450},
};
#define NPALETTE ((int)(sizeof palette / sizeof palette[0]))

static double nice_step(double range, int target)
{
	double raw = range / target, mag = pow(10, floor(log10(raw))), f = raw / mag;
	return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

static void text(cairo_t *cr, double x, double y, const char *s, double align_x, double align_y)
{
	cairo_text_extents_t e;
	cairo_text_extents(cr, s, &e);
	cairo_move_to(cr, x - align_x * e.width - e.x_bearing, y - align_y * e.height - e.y_bearing);
	cairo_show_text(cr, s);
}

/* A value as the axis places it (log10 on a log axis); 0 if the axis cannot show it. */
static int axis_value(double v, int log_axis, double *out)
{
	if (!isfinite(v) || (log_axis && v <= 0))
		return 0;
	*out = log_axis ? log10(v) : v;
	return 1;
}

#define MAX_TICKS 64

/* The ticks of an axis over [lo, hi] (axis units) and their labels: nice steps on a linear axis; on a log
 * axis decades, or 1, 2 and 5 of each decade where the axis spans less than three. */
static int axis_ticks(double lo, double hi, int log_axis, double *at, char (*label)[24])
{
	int n = 0;
	if (!log_axis) {
		double st = nice_step(hi - lo, 6);
		for (double v = ceil(lo / st) * st; v <= hi + 1e-9 * st && n < MAX_TICKS; v += st) {
			at[n] = v;
			snprintf(label[n++], 24, "%g", fabs(v) < 1e-12 * st ? 0.0 : v);
		}
		return n;
	}
	if (hi - lo >= 3) {
		double st = fmax(1, ceil((hi - lo) / 8));
		for (double v = ceil(lo / st) * st; v <= hi + 1e-9 && n < MAX_TICKS; v += st) {
			at[n] = v;
			snprintf(label[n++], 24, "1e%+d", (int)lround(v));
		}
		return n;
	}
	static const double mant[3] = {1, 2, 5};
	for (int d = (int)floor(lo); d <= (int)ceil(hi) && n < MAX_TICKS; ++d)
		for (int k = 0; k < 3 && n < MAX_TICKS; ++k) {
			double v = d + log10(mant[k]);
			if (v < lo - 1e-9 || v > hi + 1e-9)
				continue;
			at[n] = v;
			snprintf(label[n++], 24, "%g", mant[k] * pow(10, d));
		}
	return n;
}

static void series_color(const lk_series *sr, int index, cairo_t *cr)
{
	if (sr->underlay) {
		cairo_set_source_rgb(cr, 0.72, 0.72, 0.72);
		return;
	}
	const double *c = palette[index % NPALETTE];
	cairo_set_source_rgb(cr, c[0], c[1], c[2]);
}

lk_status lk_plot_png(const char *path, const lk_plot *plot, const lk_series *series, int nseries)
{
	int W = plot->width > 0 ? plot->width : 800, H = plot->height > 0 ? plot->height : 500;
	cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
	cairo_t *cr = cairo_create(surf);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);

	double xmin = DBL_MAX, xmax = -DBL_MAX, ymin = DBL_MAX, ymax = -DBL_MAX;
	for (int s = 0; s < nseries; ++s)
		for (int i = 0; i < series[s].n; ++i) {
			double x, y;
			if (!axis_value(series[s].x[i], plot->log_x, &x) || !axis_value(series[s].y[i], plot->log_y, &y))
				continue;
			xmin = fmin(xmin, x);
			xmax = fmax(xmax, x);
			ymin = fmin(ymin, y);
			ymax = fmax(ymax, y);
		}
	if (xmin > xmax) {
		xmin = 0;
		xmax = 1;
		ymin = 0;
		ymax = 1;
	}
	if (xmax - xmin < 1e-300)
		xmax = xmin + 1;
	if (plot->log_x) {
		/* room for the points and their labels at both ends */
		double pad = fmax(0.05, 0.05 * (xmax - xmin));
		xmin -= pad;
		xmax += pad;
	}
	if (plot->log_y) {
		ymin = floor(ymin);
		ymax = ceil(ymax);
	}
	double fy0, fy1;
	if (plot->ymin < plot->ymax && axis_value(plot->ymin, plot->log_y, &fy0) &&
	    axis_value(plot->ymax, plot->log_y, &fy1)) {
		ymin = fy0;
		ymax = fy1;
	}
	if (ymax - ymin < 1e-300) {
		ymax += 0.5;
		ymin -= 0.5;
	}
	double L = 80, R = 280, T = 40, B = 55;
	double pw = W - L - R, ph = H - T - B;
#define PX(x) (L + ((x) - xmin) / (xmax - xmin) * pw)
#define PY(y) (T + ph - ((y) - ymin) / (ymax - ymin) * ph)

	/* grid and ticks */
	cairo_set_font_size(cr, 12);
	cairo_set_line_width(cr, 1);
	double at[MAX_TICKS];
	char lab[MAX_TICKS][24];
	int nt = axis_ticks(xmin, xmax, plot->log_x, at, lab);
	for (int t = 0; t < nt; ++t) {
		cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
		cairo_move_to(cr, PX(at[t]), T);
		cairo_line_to(cr, PX(at[t]), T + ph);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
		text(cr, PX(at[t]), T + ph + 6, lab[t], 0.5, 0);
	}
	nt = axis_ticks(ymin, ymax, plot->log_y, at, lab);
	for (int t = 0; t < nt; ++t) {
		cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
		cairo_move_to(cr, L, PY(at[t]));
		cairo_line_to(cr, L + pw, PY(at[t]));
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
		text(cr, L - 6, PY(at[t]), lab[t], 1, 0.5);
	}
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_rectangle(cr, L, T, pw, ph);
	cairo_stroke(cr);

	/* series, clipped to the plot area: underlays first, so the others stay visible on them */
	cairo_save(cr);
	cairo_rectangle(cr, L, T, pw, ph);
	cairo_clip(cr);
	cairo_set_font_size(cr, 10);
	for (int pass = 0; pass < 2; ++pass)
		for (int s = 0, colour = 0; s < nseries; colour += !series[s].underlay, ++s) {
			const lk_series *sr = &series[s];
			if (sr->underlay != (pass == 0))
				continue;
			series_color(sr, colour, cr);
			cairo_set_line_width(cr, sr->underlay ? 7 : 1.6);
			cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
			int pen = 0;
			for (int i = 0; i < sr->n; ++i) {
				double x, y;
				if (!axis_value(sr->x[i], plot->log_x, &x) || !axis_value(sr->y[i], plot->log_y, &y)) {
					pen = 0;
					continue;
				}
				(pen ? cairo_line_to : cairo_move_to)(cr, PX(x), PY(y));
				pen = 1;
			}
			cairo_stroke(cr);
			for (int i = 0; i < sr->n && (sr->markers || sr->labels); ++i) {
				double x, y;
				if (!axis_value(sr->x[i], plot->log_x, &x) || !axis_value(sr->y[i], plot->log_y, &y))
					continue;
				if (sr->markers) {
					cairo_arc(cr, PX(x), PY(y), 3.5, 0, 2 * M_PI);
					cairo_fill(cr);
				}
				if (sr->labels && sr->labels[i])
					text(cr, PX(x) + 5, PY(y) - 4, sr->labels[i], 0, 1);
			}
		}
	cairo_restore(cr);

	/* legend, labels, title */
	cairo_set_font_size(cr, 12);
	for (int s = 0, colour = 0; s < nseries; colour += !series[s].underlay, ++s) {
		double y = T + 10 + 20 * s;
		series_color(&series[s], colour, cr);
		cairo_set_line_width(cr, series[s].underlay ? 7 : 3);
		cairo_move_to(cr, L + pw + 12, y);
		cairo_line_to(cr, L + pw + 36, y);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		char label[40];
		const char *nm = series[s].name ? series[s].name : "";
		/* long specs are cut to fit the legend; the report's table has them whole */
		if (strlen(nm) > 34)
			snprintf(label, sizeof label, "%.31s...", nm);
		else
			snprintf(label, sizeof label, "%s", nm);
		text(cr, L + pw + 42, y, label, 0, 0.5);
	}
	cairo_set_font_size(cr, 13);
	if (plot->xlabel)
		text(cr, L + pw / 2, H - 18, plot->xlabel, 0.5, 0.5);
	if (plot->ylabel) {
		cairo_save(cr);
		cairo_translate(cr, 18, T + ph / 2);
		cairo_rotate(cr, -M_PI_2);
		text(cr, 0, 0, plot->ylabel, 0.5, 0.5);
		cairo_restore(cr);
	}
	cairo_set_font_size(cr, 15);
	if (plot->title)
		text(cr, L + pw / 2, 18, plot->title, 0.5, 0.5);
#undef PX
#undef PY
	cairo_surface_flush(surf);
	cairo_status_t st = cairo_surface_write_to_png(surf, path);
	cairo_destroy(cr);
	cairo_surface_destroy(surf);
	return st == CAIRO_STATUS_SUCCESS ? LK_OK : LK_ERR_IO;
}

/* ------------------------------------------------------------------------------------------- pictures */

static void rotate(const double q[4], const double v[3], double out[3])
{
	double w = q[0], x = q[1], y = q[2], z = q[3];
	double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
	               2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
	               2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)};
	for (int k = 0; k < 3; ++k)
		out[k] = R[3 * k] * v[0] + R[3 * k + 1] * v[1] + R[3 * k + 2] * v[2];
}

/* The silhouette of a box seen along y: the convex hull of its 8 projected corners. */
/* The (x, z) of the two ends of a capsule's axis segment. */
static void capsule_ends(const lk_scene_body *b, const lk_pose *pose, double ends[2][2])
{
	const double v[3] = {0, 0, b->size[1]};
	double w[3];
	rotate(pose->quat, v, w);
	for (int k = 0; k < 2; ++k) {
		double s = k ? 1 : -1;
		ends[k][0] = pose->pos[0] + s * w[0];
		ends[k][1] = pose->pos[2] + s * w[2];
	}
}

/* A capsule seen from the side is its axis segment widened by its radius: two half circles joined by
 * straight sides (a circle when the axis points at the viewer). */
static void capsule_path(cairo_t *cr, double x0, double y0, double x1, double y1, double r)
{
	double a = atan2(y1 - y0, x1 - x0);
	cairo_new_sub_path(cr);
	cairo_arc(cr, x1, y1, r, a - M_PI / 2, a + M_PI / 2);
	cairo_arc(cr, x0, y0, r, a + M_PI / 2, a + 3 * M_PI / 2);
	cairo_close_path(cr);
}

static int box_outline(const lk_scene_body *b, const lk_pose *pose, double pts[8][2])
{
	double c[8][2];
	for (int i = 0; i < 8; ++i) {
		double v[3] = {(i & 1 ? 1 : -1) * b->size[0], (i & 2 ? 1 : -1) * b->size[1], (i & 4 ? 1 : -1) * b->size[2]};
		double w[3];
		rotate(pose->quat, v, w);
		c[i][0] = pose->pos[0] + w[0];
		c[i][1] = pose->pos[2] + w[2];
	}
	/* gift wrapping over 8 points */
	int n = 0, start = 0;
	for (int i = 1; i < 8; ++i)
		if (c[i][0] < c[start][0] || (c[i][0] == c[start][0] && c[i][1] < c[start][1]))
			start = i;
	int p = start;
	do {
		pts[n][0] = c[p][0];
		pts[n][1] = c[p][1];
		++n;
		int q = (p + 1) % 8;
		for (int r = 0; r < 8; ++r) {
			double cr = (c[q][0] - c[p][0]) * (c[r][1] - c[p][1]) - (c[q][1] - c[p][1]) * (c[r][0] - c[p][0]);
			double dq = hypot(c[q][0] - c[p][0], c[q][1] - c[p][1]), dr = hypot(c[r][0] - c[p][0], c[r][1] - c[p][1]);
			if (cr < -1e-12 || (fabs(cr) <= 1e-12 && dr > dq))
				q = r;
		}
		p = q;
	} while (p != start && n < 8);
	return n;
}

lk_status lk_render_grid_png(const char *path, const lk_scene *scene, int rows, int cols, const char *const *col_titles,
                       const char *const *row_titles, const lk_pose *poses, int cell_px)
{
	int cell = cell_px > 0 ? cell_px : 240, head = 28, side = 60;
	int W = side + cols * cell, H = head + rows * cell;
	cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
	cairo_t *cr = cairo_create(surf);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
	cairo_set_font_size(cr, 13);
	cairo_set_source_rgb(cr, 0, 0, 0);
	for (int c = 0; c < cols; ++c) {
		/* a title is cut to its cell's width */
		char t[128];
		snprintf(t, sizeof t, "%s", col_titles ? col_titles[c] : "");
		cairo_text_extents_t e;
		for (size_t len = strlen(t); len > 4; --len) {
			cairo_text_extents(cr, t, &e);
			if (e.width <= cell - 8)
				break;
			memcpy(t + len - 4, "...", 4);
		}
		text(cr, side + c * cell + cell / 2.0, head / 2.0, t, 0.5, 0.5);
	}
	for (int r = 0; r < rows; ++r)
		text(cr, side / 2.0, head + r * cell + cell / 2.0, row_titles ? row_titles[r] : "", 0.5, 0.5);

	double ext = scene->view_extent > 0 ? scene->view_extent : 5;
	double scale = (cell - 16) / (2 * ext);
	for (int r = 0; r < rows; ++r) {
		for (int c = 0; c < cols; ++c) {
			double ox = side + c * cell, oy = head + r * cell;
			cairo_save(cr);
			cairo_rectangle(cr, ox + 2, oy + 2, cell - 4, cell - 4);
			cairo_clip_preserve(cr);
			cairo_set_source_rgb(cr, 0.96, 0.97, 0.99);
			cairo_fill(cr);
			/* world (x, z) -> pixels: centred on the view centre, z up */
			double cx = ox + cell / 2.0, cy = oy + cell / 2.0;
#define WX(x) (cx + ((x) - scene->view_center[0]) * scale)
#define WZ(z) (cy - ((z) - scene->view_center[2]) * scale)
			const lk_pose *ps = poses + ((size_t)r * cols + c) * scene->nbodies;
			for (int i = 0; i < scene->nbodies; ++i) {
				const lk_scene_body *b = &scene->bodies[i];
				if (b->shape == LK_SHAPE_PLANE) {
					cairo_set_source_rgb(cr, 0.55, 0.55, 0.55);
					cairo_rectangle(cr, ox, WZ(0), cell, oy + cell - WZ(0));
					cairo_fill(cr);
					continue;
				}
				double shade = b->mass <= 0 ? 0.6 : 0.35 + 0.5 * (double)(i % 7) / 6.0;
				if (b->mass <= 0)
					cairo_set_source_rgb(cr, shade, shade, shade);
				else
					cairo_set_source_rgb(cr, 0.95 * shade + 0.05, 0.55 * shade + 0.2, 0.25);
				if (b->shape == LK_SHAPE_SPHERE) {
					cairo_arc(cr, WX(ps[i].pos[0]), WZ(ps[i].pos[2]), b->size[0] * scale, 0, 2 * M_PI);
				} else if (b->shape == LK_SHAPE_CAPSULE) {
					double ends[2][2];
					capsule_ends(b, &ps[i], ends);
					capsule_path(cr, WX(ends[0][0]), WZ(ends[0][1]), WX(ends[1][0]), WZ(ends[1][1]),
					             b->size[0] * scale);
				} else {
					double pts[8][2];
					int n = box_outline(b, &ps[i], pts);
					for (int k = 0; k < n; ++k)
						(k ? cairo_line_to : cairo_move_to)(cr, WX(pts[k][0]), WZ(pts[k][1]));
					cairo_close_path(cr);
				}
				cairo_fill_preserve(cr);
				cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
				cairo_set_line_width(cr, 1);
				cairo_stroke(cr);
			}
#undef WX
#undef WZ
			cairo_restore(cr);
			cairo_set_source_rgb(cr, 0.7, 0.7, 0.7);
			cairo_rectangle(cr, ox + 2, oy + 2, cell - 4, cell - 4);
			cairo_stroke(cr);
		}
	}
	cairo_surface_flush(surf);
	cairo_status_t st = cairo_surface_write_to_png(surf, path);
	cairo_destroy(cr);
	cairo_surface_destroy(surf);
	return st == CAIRO_STATUS_SUCCESS ? LK_OK : LK_ERR_IO;
}

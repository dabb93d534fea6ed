/* The viewer's text and plots, drawn with cairo onto a transparent surface that the window lays over the
 * two views (GLFW has no text). */
#include "view.h"

#include <math.h>
#include <stdio.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* side colours: A orange, B cyan, used for the title marker and the RES curve */
static const double side_rgb[2][3] = {{1.0, 0.62, 0.18}, {0.30, 0.82, 1.0}};

void lk_view_panel_rect(int side, int W, int H, int rect[4])
{
	int half = W / 2;
	int w = half - 20 < 420 ? half - 20 : 420;
	int h = H / 3 < 152 ? H / 3 : 152;
	rect[0] = side * half + 10;
	rect[1] = 10;
	rect[2] = w > 40 ? w : 40;
	rect[3] = h > 40 ? h : 40;
}

int lk_view_bar_height(int W, int H)
{
	(void)W;
	return H < 300 ? 36 : 44;
}

static void rounded_rect(cairo_t *cr, double x, double y, double w, double h, double r)
{
	cairo_new_sub_path(cr);
	cairo_arc(cr, x + w - r, y + r, r, -M_PI / 2, 0);
	cairo_arc(cr, x + w - r, y + h - r, r, 0, M_PI / 2);
	cairo_arc(cr, x + r, y + h - r, r, M_PI / 2, M_PI);
	cairo_arc(cr, x + r, y + r, r, M_PI, 1.5 * M_PI);
	cairo_close_path(cr);
}

/* Shows s at (x, baseline y), shrinking the font until it fits in max_w. */
static void fit_text(cairo_t *cr, double x, double y, const char *s, double size, double max_w)
{
	cairo_text_extents_t e;
	cairo_set_font_size(cr, size);
	cairo_text_extents(cr, s, &e);
	if (e.x_advance > max_w && e.x_advance > 0) {
		double sz = size * max_w / e.x_advance;
		cairo_set_font_size(cr, sz < 6 ? 6 : sz);
	}
	cairo_move_to(cr, x, y);
	cairo_show_text(cr, s);
}

/* The shared log10 range of both sides' RES histories, whole decades, at least two of them. */
static void res_range(const lk_view_overlay *o, double *lo, double *hi)
{
	double a = INFINITY, b = -INFINITY;
	for (int s = 0; s < 2; ++s)
		for (int i = 0; i < o->side[s].res_n; ++i) {
			double r = o->side[s].res_hist[i];
			if (r > 0 && isfinite(r)) {
				a = fmin(a, log10(r));
				b = fmax(b, log10(r));
			}
		}
	if (a > b) {
		a = -6;
		b = 0;
	}
	/* eight decades at most: an exact early step (no contacts yet) would squash the rest flat */
	a = floor(fmax(a, b - 8));
	b = ceil(b);
	if (b - a < 2)
		a = b - 2;
	*lo = a;
	*hi = b;
}

static void curve(cairo_t *cr, const lk_view_panel *p, double x, double y, double w, double h, double lo, double hi)
{
	int cap = p->res_cap > 1 ? p->res_cap : (p->res_n > 1 ? p->res_n : 2);
	int pen = 0;
	for (int i = 0; i < p->res_n; ++i) {
		double r = p->res_hist[i];
		/* an exact solve (RES 0) sits on the floor of the plot */
		double v = r > 0 && isfinite(r) ? fmax(log10(r), lo) : lo;
		if (!isfinite(r)) {
			pen = 0;
			continue;
		}
		/* newest at the right edge */
		double px = x + w - (double)(p->res_n - 1 - i) / (double)(cap - 1) * w;
		double py = y + h - (v - lo) / (hi - lo) * h;
		if (pen)
			cairo_line_to(cr, px, py);
		else
			cairo_move_to(cr, px, py);
		pen = 1;
	}
	cairo_stroke(cr);
}

static void panel(cairo_t *cr, int side, int W, int H, const lk_view_overlay *o, double lo, double hi)
{
	const lk_view_panel *p = &o->side[side];
	int rc[4];
	lk_view_panel_rect(side, W, H, rc);
	double x = rc[0], y = rc[1], w = rc[2], h = rc[3];
	cairo_set_source_rgba(cr, 0.05, 0.06, 0.08, 0.62);
	rounded_rect(cr, x, y, w, h, 8);
	cairo_fill(cr);

	double pad = 11, tw = w - 2 * pad, line = h < 140 ? 15 : 18;
	double ty = y + pad + 12;
	/* side marker */
	cairo_set_source_rgb(cr, side_rgb[side][0], side_rgb[side][1], side_rgb[side][2]);
	cairo_rectangle(cr, x + pad, ty - 11, 5, 13);
	cairo_fill(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
	cairo_set_source_rgb(cr, 1, 1, 1);
	fit_text(cr, x + pad + 11, ty, p->title ? p->title : "", 15, tw - 11);
	ty += line - 2;
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_source_rgb(cr, 0.82, 0.84, 0.88);
	fit_text(cr, x + pad, ty, p->params ? p->params : "", 11.5, tw);
	ty += line;

	char buf[200];
	cairo_select_font_face(cr, "monospace", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
	cairo_set_source_rgb(cr, 1, 1, 1);
	if (p->solve_ms >= 0)
		snprintf(buf, sizeof buf, "solver %7.3f ms/step   iters %4.0f   RES %.2e", p->solve_ms, p->iterations, p->res);
	else
		snprintf(buf, sizeof buf, "solver       - ms/step   iters    -   RES        -");
	fit_text(cr, x + pad, ty, buf, 12.5, tw);
	ty += 6;

	if (p->status && *p->status) {
		double sy = y + h - pad;
		cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
		cairo_set_source_rgb(cr, 1.0, 0.42, 0.38);
		fit_text(cr, x + pad, sy, p->status, 12, tw);
	}

	/* RES over the last seconds, log scale shared by both sides; the other side in grey for comparison */
	double lx = 44, px = x + pad + lx, py = ty + 4, pw = tw - lx, ph = y + h - pad - (p->status ? 18 : 12) - py;
	if (ph < 16)
		return;
	cairo_set_line_width(cr, 1);
	cairo_set_source_rgba(cr, 1, 1, 1, 0.18);
	cairo_rectangle(cr, px + 0.5, py + 0.5, pw - 1, ph - 1);
	cairo_stroke(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, 10);
	int step = (int)ceil((hi - lo) / 4);
	for (double d = lo; d <= hi + 1e-9; d += step) {
		double gy = py + ph - (d - lo) / (hi - lo) * ph;
		cairo_set_source_rgba(cr, 1, 1, 1, 0.12);
		cairo_move_to(cr, px, floor(gy) + 0.5);
		cairo_line_to(cr, px + pw, floor(gy) + 0.5);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0.75, 0.77, 0.8);
		snprintf(buf, sizeof buf, "1e%+d", (int)lround(d));
		cairo_move_to(cr, x + pad, gy + 3.5);
		cairo_show_text(cr, buf);
	}
	cairo_save(cr);
	cairo_rectangle(cr, px, py, pw, ph);
	cairo_clip(cr);
	cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
	cairo_set_line_width(cr, 1.2);
	cairo_set_source_rgba(cr, 0.8, 0.8, 0.8, 0.45);
	curve(cr, &o->side[1 - side], px, py + 1, pw, ph - 2, lo, hi);
	cairo_set_line_width(cr, 1.8);
	cairo_set_source_rgb(cr, side_rgb[side][0], side_rgb[side][1], side_rgb[side][2]);
	curve(cr, p, px, py + 1, pw, ph - 2, lo, hi);
	cairo_restore(cr);
	/* the label on a backing of its own: the curves may run under it */
	snprintf(buf, sizeof buf, "RES, last %.0f s", o->history_seconds);
	cairo_text_extents_t e;
	cairo_text_extents(cr, buf, &e);
	cairo_set_source_rgba(cr, 0.05, 0.06, 0.08, 0.75);
	cairo_rectangle(cr, px + 2, py + 2, e.x_advance + 6, 13);
	cairo_fill(cr);
	cairo_set_source_rgb(cr, 0.75, 0.77, 0.8);
	cairo_move_to(cr, px + 5, py + 12);
	cairo_show_text(cr, buf);
}

void lk_view_overlay_draw(cairo_t *cr, int W, int H, const lk_view_overlay *o)
{
	cairo_save(cr);
	cairo_set_operator(cr, CAIRO_OPERATOR_CLEAR);
	cairo_paint(cr);
	cairo_restore(cr);

	/* the seam between the two views */
	cairo_set_source_rgb(cr, 0.1, 0.1, 0.12);
	cairo_rectangle(cr, W / 2 - 1, 0, 2, H);
	cairo_fill(cr);

	double lo, hi;
	res_range(o, &lo, &hi);
	for (int s = 0; s < 2; ++s)
		panel(cr, s, W, H, o, lo, hi);

	int bh = lk_view_bar_height(W, H);
	cairo_set_source_rgba(cr, 0.05, 0.06, 0.08, 0.72);
	cairo_rectangle(cr, 0, H - bh, W, bh);
	cairo_fill(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
	cairo_set_source_rgb(cr, 1, 1, 1);
	fit_text(cr, 10, H - bh + 0.42 * bh, o->scene_line ? o->scene_line : "", 12.5, W - 20);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_source_rgb(cr, 0.82, 0.84, 0.88);
	fit_text(cr, 10, H - bh + 0.86 * bh, o->help ? o->help : "", 11.5, W - 20);

	if (o->message && *o->message) {
		cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
		cairo_set_font_size(cr, 14);
		cairo_text_extents_t e;
		cairo_text_extents(cr, o->message, &e);
		double mw = e.x_advance + 24, mx = 0.5 * (W - mw), my = H - bh - 44;
		cairo_set_source_rgba(cr, 0.05, 0.06, 0.08, 0.8);
		rounded_rect(cr, mx, my, mw, 30, 6);
		cairo_fill(cr);
		cairo_set_source_rgb(cr, 1, 0.9, 0.5);
		cairo_move_to(cr, mx + 12, my + 20);
		cairo_show_text(cr, o->message);
	}
}

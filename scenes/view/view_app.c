/* lcpkit view's window: one scene run by two engine/solver choices in lock step, drawn side by side from
 * one orbit camera with GLFW and fixed-function OpenGL, and a cairo overlay of each side's numbers. */
#include "cli_util.h"
#include "view.h"
#include "view_draw.h"

#include <GLFW/glfw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define HIST_SECONDS 5.0
#define MAX_HIST 4096
#define MS_WINDOW 30          /* steps the solver time is averaged over */
#define MAX_STEPS_PER_FRAME 4 /* catch-up limit, so a slow scene slows down rather than freezing the window */
#define FRAME_BUDGET 0.035    /* seconds of stepping per frame */
#define MAX_CHOICES 48
#define SLOW_FACTOR 0.2

typedef struct choice {
	lk_engine engine;
	char solver[160];
} choice;

typedef struct side {
	lk_engine engine;
	char solver[160];
	lk_sim *sim;
	double res_hist[MAX_HIST];
	int hist_n;
	double ms[MS_WINDOW];
	int ms_n, ms_head;
	double res, iters;
	char title[200], params[400], status[400];
} side;

typedef struct app {
	const lk_view_options *opt;
	GLFWwindow *win;
	lk_scene *scene;
	int scene_index; /* in lk_scene_names(); -1 when the scene is not one of them */
	side s[2];
	int iterations;
	lk_view_camera cam;
	int paused, step_once, slow, show_overlay, shot_pending;
	double acc, sim_time;
	long steps;
	int hist_cap;
	int drag; /* 0 none, 1 orbit, 2 pan */
	double mx, my;
	char message[300];
	double message_until;
	choice choices[MAX_CHOICES];
	int nchoices;
	unsigned int tex;
	int tex_w, tex_h;
	cairo_surface_t *ov;
	lk__view_mesh sphere[2]; /* fine, coarse */
} app;

static const double bg[3] = {0.62, 0.67, 0.72};

static const int iteration_steps[] = {1,  2,  3,  4,   5,   6,   8,   10,  12,  15,  20,  25,  30,  40,
                                      50, 60, 80, 100, 120, 150, 200, 250, 300, 400, 500, 600, 800, 1000};
#define NITER_STEPS ((int)(sizeof iteration_steps / sizeof iteration_steps[0]))

static const char *help_line =
	"Space pause  S step  R reset  1/2 next left/right solver (Shift: back)  +/- iterations  N/P scene  "
	"M slow motion  C screenshot  Shift+click drop box  Shift+right-click shoot sphere (or B/F)  drag orbit  "
	"right-drag pan  wheel zoom  V camera  H overlay  Esc quit";

/* ---------------------------------------------------------------------------------------- descriptions */

static const char *engine_label(lk_engine e)
{
	return e == LK_ENGINE_ODE ? "ODE" : e == LK_ENGINE_BULLET ? "Bullet" : "?";
}

static const char *method_description(lk_method m)
{
	switch (m) {
	case LK_METHOD_PGS: return "projected Gauss-Seidel (Erleben 2013, 5.2)";
	case LK_METHOD_PSOR: return "projected SOR (Erleben 2013, 5.3)";
	case LK_METHOD_AMGS: return "accelerated modulus-based GS (Miyamoto & Yamashita 2019)";
	case LK_METHOD_AMGS_DENSE: return "AMGS Method 2.2, dense (Miyamoto & Yamashita 2019)";
	case LK_METHOD_AMSOR: return "accelerated modulus-based SOR";
	case LK_METHOD_PGS_SM: return "PGS subspace minimization (Silcowitz, Niebe & Erleben)";
	case LK_METHOD_NEWTON_MINMAP: return "minimum-map Newton (Erleben 2013, 5.4)";
	case LK_METHOD_NEWTON_FISCHER: return "Fischer-Newton (Erleben 2013, 5.5)";
	case LK_METHOD_NNCG: return "nonsmooth nonlinear CG (Silcowitz, Niebe & Erleben 2010)";
	case LK_METHOD_APGD: return "accelerated projected gradient (Mazhar et al. 2015)";
	case LK_METHOD_MPRGP: return "MPRGP (Dostal & Schoberl 2005)";
	default: return "lcpkit";
	}
}

static void describe(app *a, side *sd)
{
	/* through a copy: at -O1 (the sanitizer build) GCC cannot tell the title from the solver's name, both in *a */
	char solver[sizeof sd->solver];
	memcpy(solver, sd->solver, sizeof solver);
	snprintf(sd->title, sizeof sd->title, "%s  %s  %s", sd == &a->s[0] ? "A" : "B", engine_label(sd->engine), solver);
	const lk_engine_solver *own = lk_engine_solver_find(sd->solver);
	char what[300];
	lk_solver_config cfg;
	char err[200];
	if (own) {
		snprintf(what, sizeof what, "%s", own->description);
	} else if (lk_config_parse(sd->solver, &cfg, err, sizeof err) == LK_OK) {
		char canon[200];
		if (lk_config_format(&cfg, canon, sizeof canon) == LK_OK && strchr(canon, ':'))
			snprintf(what, sizeof what, "%s, %s", method_description(cfg.method), strchr(canon, ':') + 1);
		else
			snprintf(what, sizeof what, "%s", method_description(cfg.method));
	} else {
		snprintf(what, sizeof what, "%s", sd->solver);
	}
	double h = a->scene ? a->scene->h : 0;
	snprintf(sd->params, sizeof sd->params, "%s  |  %d iterations, h %.1f ms", what, a->iterations, 1e3 * h);
}

/* ---------------------------------------------------------------------------------------- simulation */

static void message(app *a, const char *text)
{
	snprintf(a->message, sizeof a->message, "%s", text);
	a->message_until = glfwGetTime() + 2.5;
}

/* Both sides from the scene's start: solver, iteration or scene changes and reset. */
static void restart(app *a)
{
	for (int k = 0; k < 2; ++k) {
		side *sd = &a->s[k];
		lk_sim_destroy(sd->sim);
		sd->sim = NULL;
		sd->hist_n = sd->ms_n = sd->ms_head = 0;
		sd->res = sd->iters = 0;
		sd->status[0] = '\0';
		lk_sim_def def = {a->scene, sd->engine, sd->solver, a->iterations, 0, 0, 0};
		char err[400];
		if (lk_sim_create(&def, &sd->sim, err, sizeof err) != LK_OK) {
			snprintf(sd->status, sizeof sd->status, "cannot run: %s", err);
			sd->sim = NULL;
		}
		describe(a, sd);
	}
	a->sim_time = 0;
	a->steps = 0;
	a->acc = 0;
	int cap = (int)lround(HIST_SECONDS / a->scene->h);
	a->hist_cap = cap < 2 ? 2 : cap > MAX_HIST ? MAX_HIST : cap;
}

static void step_both(app *a)
{
	for (int k = 0; k < 2; ++k) {
		side *sd = &a->s[k];
		if (!sd->sim)
			continue;
		lk_engine_step_stats st;
		memset(&st, 0, sizeof st);
		lk_status rc = lk_sim_step(sd->sim, &st);
		if (rc != LK_OK) {
			snprintf(sd->status, sizeof sd->status, "step %ld failed (status %d); stopped", a->steps + 1, (int)rc);
			lk_sim_destroy(sd->sim);
			sd->sim = NULL;
			continue;
		}
		sd->ms[sd->ms_head] = 1e3 * st.solve_seconds;
		sd->ms_head = (sd->ms_head + 1) % MS_WINDOW;
		if (sd->ms_n < MS_WINDOW)
			++sd->ms_n;
		sd->res = st.res_final;
		sd->iters = st.iterations;
		if (sd->hist_n == a->hist_cap) {
			memmove(sd->res_hist, sd->res_hist + 1, sizeof(double) * (size_t)(a->hist_cap - 1));
			--sd->hist_n;
		}
		sd->res_hist[sd->hist_n++] = st.res_final;
		if (st.fallback_total > 0)
			snprintf(sd->status, sizeof sd->status, "%lld steps fell back to the engine's own solver",
			         (long long)st.fallback_total);
	}
	a->sim_time += a->scene->h;
	++a->steps;
}

/* Frames the scene in the part of each half the panels and the bar leave free. */
static void frame_camera(app *a)
{
	int W, H, rc[4];
	glfwGetFramebufferSize(a->win, &W, &H);
	lk_view_panel_rect(0, W, H, rc);
	a->cam = lk_view_camera_frame(a->scene, W / 2, H, rc[1] + rc[3] + 6, H - lk_view_bar_height(W, H) - 6);
}

static void set_scene(app *a, int index)
{
	const char *const *names = lk_scene_names();
	int n = 0;
	while (names[n])
		++n;
	index = ((index % n) + n) % n;
	lk_scene *sc = NULL;
	char err[400];
	if (lk_scene_create(names[index], &sc, err, sizeof err) != LK_OK) {
		message(a, err);
		return;
	}
	for (int k = 0; k < 2; ++k) {
		lk_sim_destroy(a->s[k].sim);
		a->s[k].sim = NULL;
	}
	lk_scene_destroy(a->scene);
	a->scene = sc;
	a->scene_index = index;
	frame_camera(a);
	restart(a);
}

static void cycle_solver(app *a, int k, int dir)
{
	side *sd = &a->s[k];
	if (a->nchoices == 0)
		return;
	int cur = -1;
	for (int i = 0; i < a->nchoices; ++i)
		if (a->choices[i].engine == sd->engine && !strcmp(a->choices[i].solver, sd->solver))
			cur = i;
	if (cur < 0)
		for (int i = 0; i < a->nchoices && cur < 0; ++i)
			if (a->choices[i].engine == sd->engine)
				cur = dir > 0 ? i - 1 : i;
	int next = ((cur + dir) % a->nchoices + a->nchoices) % a->nchoices;
	sd->engine = a->choices[next].engine;
	memcpy(sd->solver, a->choices[next].solver, sizeof sd->solver);
	restart(a);
	char m[300];
	snprintf(m, sizeof m, "%s side: %s %s (both sides restarted)", k ? "right" : "left", engine_label(sd->engine),
	         sd->solver);
	message(a, m);
}

static void change_iterations(app *a, int dir)
{
	int n = a->iterations;
	if (dir > 0) {
		for (int i = 0; i < NITER_STEPS; ++i)
			if (iteration_steps[i] > n) {
				n = iteration_steps[i];
				break;
			}
	} else {
		for (int i = NITER_STEPS - 1; i >= 0; --i)
			if (iteration_steps[i] < n) {
				n = iteration_steps[i];
				break;
			}
	}
	if (n == a->iterations)
		return;
	a->iterations = n;
	restart(a);
	char m[100];
	snprintf(m, sizeof m, "%d iterations per step (both sides restarted)", n);
	message(a, m);
}

/* The highest body top on either side, for dropping a box above everything. */
static double top_z(const app *a)
{
	double top = a->scene->view_center[2];
	for (int k = 0; k < 2; ++k) {
		const lk_sim *sim = a->s[k].sim;
		if (!sim)
			continue;
		const lk_scene *sc = lk_sim_scene(sim);
		for (int i = 0; i < sc->nbodies; ++i) {
			const lk_scene_body *b = &sc->bodies[i];
			if (b->shape == LK_SHAPE_PLANE)
				continue;
			lk_pose p;
			lk_sim_pose(sim, i, &p);
			double r = b->shape == LK_SHAPE_SPHERE ? b->size[0]
			                                       : sqrt(b->size[0] * b->size[0] + b->size[1] * b->size[1] +
			                                              b->size[2] * b->size[2]);
			if (p.pos[2] + r > top)
				top = p.pos[2] + r;
		}
	}
	return top;
}

/* Window pixel (x, y) -> the ray through it in whichever half it lies; both halves share the camera. */
static void cursor_ray(app *a, double x, double y, double o[3], double d[3])
{
	int W, H, ww, wh;
	glfwGetFramebufferSize(a->win, &W, &H);
	glfwGetWindowSize(a->win, &ww, &wh);
	double sx = ww > 0 ? (double)W / ww : 1, sy = wh > 0 ? (double)H / wh : 1;
	x *= sx;
	y *= sy;
	int half = W / 2;
	int vw = x < half ? half : W - half;
	if (x >= half)
		x -= half;
	lk_view_camera_ray(&a->cam, x, y, vw, H, o, d);
}

/* The same body into both sides. */
static void poke(app *a, int sphere)
{
	double o[3], d[3];
	cursor_ray(a, a->mx, a->my, o, d);
	lk_scene_body b;
	if (sphere)
		lk_view_shoot_sphere(a->scene, o, d, &b);
	else
		lk_view_drop_box(a->scene, o, d, top_z(a), &b);
	int ok = 0;
	for (int k = 0; k < 2; ++k)
		if (a->s[k].sim && lk_sim_add_body(a->s[k].sim, &b) == LK_OK)
			++ok;
	char m[200];
	if (ok == 2)
		snprintf(m, sizeof m, "%s into both sides", sphere ? "sphere shot" : "box dropped");
	else
		snprintf(m, sizeof m, "could not add the %s to %s", sphere ? "sphere" : "box", ok ? "one side" : "either side");
	message(a, m);
}

static void draw_side(const app *a, const side *sd, int x0, int w, int H)
{
	glViewport(x0, 0, w, H);
	glScissor(x0, 0, w, H);
	glEnable(GL_SCISSOR_TEST);
	glClearColor((float)bg[0], (float)bg[1], (float)bg[2], 1);
	glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
	if (!sd->sim) {
		glDisable(GL_SCISSOR_TEST);
		return;
	}
	const lk_scene *sc = lk_sim_scene(sd->sim);
	double extent = sc->view_extent > 0 ? sc->view_extent : 5;
	double P[16], V[16], d = a->cam.distance;
	double zn = fmax(1e-3, 0.02 * fmin(d, extent)), zf = d + 30 * extent;
	lk_view_camera_matrices(&a->cam, (double)w / H, zn, zf, P, V);
	glMatrixMode(GL_PROJECTION);
	glLoadMatrixd(P);
	glMatrixMode(GL_MODELVIEW);
	glLoadMatrixd(V);

	glEnable(GL_DEPTH_TEST);
	glDepthMask(GL_TRUE);
	glEnable(GL_LIGHTING);
	glEnable(GL_LIGHT0);
	glEnable(GL_LIGHT1);
	glEnable(GL_COLOR_MATERIAL);
	glColorMaterial(GL_FRONT_AND_BACK, GL_AMBIENT_AND_DIFFUSE);
	glEnable(GL_NORMALIZE);
	glShadeModel(GL_FLAT);
	const float amb[4] = {0.30f, 0.30f, 0.32f, 1}, key[4] = {0.66f, 0.66f, 0.62f, 1}, fill[4] = {0.22f, 0.24f, 0.28f, 1};
	const float zero[4] = {0, 0, 0, 1};
	/* directional lights fixed in the world (w = 0), set with the view matrix loaded */
	const float key_dir[4] = {0.35f, -0.55f, 1.0f, 0}, fill_dir[4] = {-0.6f, 0.5f, 0.3f, 0};
	glLightModelfv(GL_LIGHT_MODEL_AMBIENT, amb);
	glLightModeli(GL_LIGHT_MODEL_TWO_SIDE, 0);
	glLightfv(GL_LIGHT0, GL_DIFFUSE, key);
	glLightfv(GL_LIGHT0, GL_AMBIENT, zero);
	glLightfv(GL_LIGHT0, GL_SPECULAR, zero);
	glLightfv(GL_LIGHT0, GL_POSITION, key_dir);
	glLightfv(GL_LIGHT1, GL_DIFFUSE, fill);
	glLightfv(GL_LIGHT1, GL_AMBIENT, zero);
	glLightfv(GL_LIGHT1, GL_SPECULAR, zero);
	glLightfv(GL_LIGHT1, GL_POSITION, fill_dir);
	glPolygonOffset(1, 1);
	glLineWidth(1);

	/* the ground fades into the background towards the horizon */
	const float fog[4] = {(float)bg[0], (float)bg[1], (float)bg[2], 1};
	glEnable(GL_FOG);
	glFogi(GL_FOG_MODE, GL_LINEAR);
	glFogfv(GL_FOG_COLOR, fog);
	glFogf(GL_FOG_START, (float)(d + 2 * extent));
	glFogf(GL_FOG_END, (float)(d + 9 * extent));

	int ground = 0;
	for (int i = 0; i < sc->nbodies; ++i)
		ground |= sc->bodies[i].shape == LK_SHAPE_PLANE;
	if (ground) {
		glEnable(GL_POLYGON_OFFSET_FILL);
		lk__view_draw_ground(sc);
		glDisable(GL_POLYGON_OFFSET_FILL);
	}
	glEnableClientState(GL_VERTEX_ARRAY);
	glEnableClientState(GL_NORMAL_ARRAY);
	lk__view_draw_bodies(a->sphere, sd->sim, 0);
	glEnable(GL_BLEND);
	glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
	glDepthMask(GL_FALSE);
	lk__view_draw_bodies(a->sphere, sd->sim, 1);
	glDepthMask(GL_TRUE);
	glDisable(GL_BLEND);
	glDisableClientState(GL_VERTEX_ARRAY);
	glDisableClientState(GL_NORMAL_ARRAY);
	glDisable(GL_FOG);
	glDisable(GL_LIGHTING);
	glDisable(GL_DEPTH_TEST);
	glDisable(GL_SCISSOR_TEST);
}

static int next_pow2(int x)
{
	int p = 64;
	while (p < x)
		p *= 2;
	return p;
}

static void draw_overlay(app *a, int W, int H)
{
	if (!a->ov || cairo_image_surface_get_width(a->ov) != W || cairo_image_surface_get_height(a->ov) != H) {
		if (a->ov)
			cairo_surface_destroy(a->ov);
		a->ov = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, W, H);
	}
	lk_view_overlay o;
	memset(&o, 0, sizeof o);
	double ms[2];
	for (int k = 0; k < 2; ++k) {
		side *sd = &a->s[k];
		ms[k] = -1;
		if (sd->ms_n > 0) {
			ms[k] = 0;
			for (int i = 0; i < sd->ms_n; ++i)
				ms[k] += sd->ms[i];
			ms[k] /= sd->ms_n;
		}
		o.side[k] = (lk_view_panel){sd->title, sd->params, sd->hist_n > 0 ? ms[k] : -1, sd->iters, sd->res,
		                            sd->res_hist, sd->hist_n, a->hist_cap, sd->status[0] ? sd->status : NULL};
	}
	char line[512];
	int nb = a->s[0].sim ? lk_sim_scene(a->s[0].sim)->nbodies : a->scene->nbodies;
	int nscenes = 0;
	for (const char *const *n = lk_scene_names(); *n; ++n)
		++nscenes;
	char idx[32] = "";
	if (a->scene_index >= 0)
		snprintf(idx, sizeof idx, " (%d/%d)", a->scene_index + 1, nscenes);
	snprintf(line, sizeof line, "scene %s%s   %d bodies   t %.2f s   step %ld   %s%s", a->scene->spec, idx, nb,
	         a->sim_time, a->steps, a->paused ? "PAUSED" : "running",
	         a->slow ? "   slow motion x0.2" : "");
	o.scene_line = line;
	o.help = help_line;
	o.message = glfwGetTime() < a->message_until ? a->message : NULL;
	o.history_seconds = a->hist_cap * a->scene->h;
	cairo_t *cr = cairo_create(a->ov);
	lk_view_overlay_draw(cr, W, H, &o);
	cairo_destroy(cr);
	cairo_surface_flush(a->ov);

	if (!a->tex)
		glGenTextures(1, &a->tex);
	glBindTexture(GL_TEXTURE_2D, a->tex);
	if (a->tex_w < W || a->tex_h < H) {
		a->tex_w = next_pow2(W);
		a->tex_h = next_pow2(H);
		glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
		glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
		glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, a->tex_w, a->tex_h, 0, GL_BGRA, GL_UNSIGNED_INT_8_8_8_8_REV, NULL);
	}
	/* cairo's ARGB32 is native-endian 32-bit words: BGRA with the _REV packing on every byte order */
	glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
	glPixelStorei(GL_UNPACK_ROW_LENGTH, cairo_image_surface_get_stride(a->ov) / 4);
	glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, W, H, GL_BGRA, GL_UNSIGNED_INT_8_8_8_8_REV,
	                cairo_image_surface_get_data(a->ov));
	glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);

	glViewport(0, 0, W, H);
	glMatrixMode(GL_PROJECTION);
	glLoadIdentity();
	glOrtho(0, W, H, 0, -1, 1);
	glMatrixMode(GL_MODELVIEW);
	glLoadIdentity();
	glEnable(GL_TEXTURE_2D);
	glEnable(GL_BLEND);
	glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA); /* cairo's alpha is premultiplied */
	glTexEnvi(GL_TEXTURE_ENV, GL_TEXTURE_ENV_MODE, GL_REPLACE);
	double u = (double)W / a->tex_w, v = (double)H / a->tex_h;
	glBegin(GL_QUADS);
	glTexCoord2d(0, 0);
	glVertex2d(0, 0);
	glTexCoord2d(u, 0);
	glVertex2d(W, 0);
	glTexCoord2d(u, v);
	glVertex2d(W, H);
	glTexCoord2d(0, v);
	glVertex2d(0, H);
	glEnd();
	glDisable(GL_BLEND);
	glDisable(GL_TEXTURE_2D);
}

static void render(app *a)
{
	int W, H;
	glfwGetFramebufferSize(a->win, &W, &H);
	if (W <= 0 || H <= 0)
		return;
	int half = W / 2;
	draw_side(a, &a->s[0], 0, half, H);
	draw_side(a, &a->s[1], half, W - half, H);
	if (a->show_overlay)
		draw_overlay(a, W, H);
}

/* The back buffer (what the next swap shows) to a PNG. */
static int save_png(app *a, const char *path)
{
	int W, H;
	glfwGetFramebufferSize(a->win, &W, &H);
	cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
	unsigned char *buf = malloc((size_t)W * (size_t)H * 4);
	if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS || !buf) {
		free(buf);
		cairo_surface_destroy(img);
		return -1;
	}
	glPixelStorei(GL_PACK_ALIGNMENT, 4);
	glPixelStorei(GL_PACK_ROW_LENGTH, 0);
	glReadBuffer(GL_BACK);
	glReadPixels(0, 0, W, H, GL_BGRA, GL_UNSIGNED_INT_8_8_8_8_REV, buf);
	unsigned char *data = cairo_image_surface_get_data(img);
	int stride = cairo_image_surface_get_stride(img);
	cairo_surface_flush(img);
	/* OpenGL's rows run bottom up */
	for (int y = 0; y < H; ++y)
		memcpy(data + (size_t)y * stride, buf + (size_t)(H - 1 - y) * W * 4, (size_t)W * 4);
	free(buf);
	cairo_surface_mark_dirty(img);
	cairo_status_t st = cairo_surface_write_to_png(img, path);
	cairo_surface_destroy(img);
	return st == CAIRO_STATUS_SUCCESS ? 0 : -1;
}

static void interactive_shot(app *a)
{
	char path[64];
	struct stat sb;
	for (int i = 1; i < 10000; ++i) {
		snprintf(path, sizeof path, "lcpkit-view-%03d.png", i);
		if (stat(path, &sb) != 0)
			break;
	}
	char m[200];
	if (save_png(a, path) == 0)
		snprintf(m, sizeof m, "saved %s", path);
	else
		snprintf(m, sizeof m, "cannot write %s", path);
	lk_cli_error("view", "%s", m);
	message(a, m);
}

/* ------------------------------------------------------------------------------------------- input */

static void on_key(GLFWwindow *w, int key, int scancode, int action, int mods)
{
	(void)scancode;
	app *a = glfwGetWindowUserPointer(w);
	if (action == GLFW_RELEASE)
		return;
	int back = (mods & GLFW_MOD_SHIFT) != 0;
	switch (key) {
	case GLFW_KEY_SPACE: a->paused = !a->paused; break;
	case GLFW_KEY_S:
	case GLFW_KEY_RIGHT:
		a->paused = 1;
		a->step_once = 1;
		break;
	case GLFW_KEY_R:
		restart(a);
		message(a, "reset: both sides from the start");
		break;
	case GLFW_KEY_1: cycle_solver(a, 0, back ? -1 : 1); break;
	case GLFW_KEY_2: cycle_solver(a, 1, back ? -1 : 1); break;
	case GLFW_KEY_EQUAL:
	case GLFW_KEY_KP_ADD: change_iterations(a, 1); break;
	case GLFW_KEY_MINUS:
	case GLFW_KEY_KP_SUBTRACT: change_iterations(a, -1); break;
	case GLFW_KEY_N:
	case GLFW_KEY_PAGE_DOWN: set_scene(a, a->scene_index + 1); break;
	case GLFW_KEY_P:
	case GLFW_KEY_PAGE_UP: set_scene(a, a->scene_index - 1); break;
	case GLFW_KEY_M: a->slow = !a->slow; break;
	case GLFW_KEY_C:
	case GLFW_KEY_F12: a->shot_pending = 1; break;
	case GLFW_KEY_B: poke(a, 0); break;
	case GLFW_KEY_F: poke(a, 1); break;
	case GLFW_KEY_V:
	case GLFW_KEY_HOME: frame_camera(a); break;
	case GLFW_KEY_H: a->show_overlay = !a->show_overlay; break;
	case GLFW_KEY_ESCAPE:
	case GLFW_KEY_Q: glfwSetWindowShouldClose(w, 1); break;
	default: break;
	}
}

static void on_button(GLFWwindow *w, int button, int action, int mods)
{
	app *a = glfwGetWindowUserPointer(w);
	glfwGetCursorPos(w, &a->mx, &a->my);
	if (action == GLFW_RELEASE) {
		a->drag = 0;
		return;
	}
	int shift = (mods & GLFW_MOD_SHIFT) != 0;
	if (button == GLFW_MOUSE_BUTTON_LEFT) {
		if (shift)
			poke(a, 0);
		else
			a->drag = 1;
	} else if (button == GLFW_MOUSE_BUTTON_RIGHT) {
		if (shift)
			poke(a, 1);
		else
			a->drag = 2;
	} else if (button == GLFW_MOUSE_BUTTON_MIDDLE) {
		a->drag = 2;
	}
}

static void on_cursor(GLFWwindow *w, double x, double y)
{
	app *a = glfwGetWindowUserPointer(w);
	double dx = x - a->mx, dy = y - a->my;
	a->mx = x;
	a->my = y;
	int wh;
	glfwGetWindowSize(w, NULL, &wh);
	if (a->drag == 1)
		lk_view_camera_orbit(&a->cam, dx, dy);
	else if (a->drag == 2)
		lk_view_camera_pan(&a->cam, dx, dy, wh);
}

static void on_scroll(GLFWwindow *w, double dx, double dy)
{
	(void)dx;
	app *a = glfwGetWindowUserPointer(w);
	lk_view_camera_zoom(&a->cam, dy);
}

/* ---------------------------------------------------------------------------------------------- run */

static char glfw_error[300];

static void on_glfw_error(int code, const char *text)
{
	snprintf(glfw_error, sizeof glfw_error, "%s (GLFW error 0x%x)", text ? text : "unknown", code);
	for (char *c = glfw_error; *c; ++c)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
}

/* Adds a choice if the engine runs the solver and there is room. */
static void add_choice(app *a, lk_engine e, const char *solver)
{
	char err[400];
	if (a->nchoices >= MAX_CHOICES || lk_sim_check_solver(e, solver, err, sizeof err) != LK_OK)
		return;
	a->choices[a->nchoices].engine = e;
	snprintf(a->choices[a->nchoices].solver, sizeof a->choices[0].solver, "%s", solver);
	++a->nchoices;
}

static void build_choices(app *a)
{
	static const char *const ours[] = {"pgs", "psor", "amgs", "amsor", "pgs-sm", "newton-minmap", "newton-fischer",
	                                   "pgs:order=gsp", NULL};
	for (int e = 0; e < LK_ENGINE_COUNT; ++e) {
		if (!lk_engine_available((lk_engine)e))
			continue;
		/* the engine's own solvers first, then lcpkit's */
		for (const lk_engine_solver *own = lk_engine_solvers(); own->name; ++own)
			if (own->engine == (lk_engine)e)
				add_choice(a, (lk_engine)e, own->name);
		for (int i = 0; ours[i]; ++i)
			add_choice(a, (lk_engine)e, ours[i]);
	}
}

int lk__view_run(const lk_view_options *opt)
{
	static app A; /* the sides' histories are large; one viewer per process */
	app *a = &A;
	memset(a, 0, sizeof *a);
	a->opt = opt;
	a->iterations = opt->iterations;
	a->show_overlay = 1;
	for (int k = 0; k < 2; ++k) {
		a->s[k].engine = opt->engine[k];
		snprintf(a->s[k].solver, sizeof a->s[k].solver, "%s", opt->solver[k]);
	}
	char err[400];
	if (lk_scene_create(opt->scene, &a->scene, err, sizeof err) != LK_OK) {
		lk_cli_error("view", "%s", err);
		return LK_EXIT_USAGE;
	}
	a->scene_index = -1;
	for (int i = 0; lk_scene_names()[i]; ++i)
		if (!strcmp(lk_scene_names()[i], a->scene->name))
			a->scene_index = i;
	build_choices(a);

	glfwSetErrorCallback(on_glfw_error);
	if (!glfwInit()) {
		lk_cli_error("view", "no display available (%s); for headless runs use lcpkit compare",
		             glfw_error[0] ? glfw_error : "glfwInit failed");
		lk_scene_destroy(a->scene);
		return LK_EXIT_USAGE;
	}
	glfwWindowHint(GLFW_SAMPLES, getenv("LK_NOMSAA") ? 0 : 4);
	glfwWindowHint(GLFW_RESIZABLE, opt->screenshot ? GLFW_FALSE : GLFW_TRUE);
	char title[300];
	snprintf(title, sizeof title, "lcpkit view: %s", a->scene->spec);
	a->win = glfwCreateWindow(opt->width, opt->height, title, NULL, NULL);
	if (!a->win) {
		lk_cli_error("view", "cannot open an OpenGL window (%s); for headless runs use lcpkit compare",
		             glfw_error[0] ? glfw_error : "glfwCreateWindow failed");
		glfwTerminate();
		lk_scene_destroy(a->scene);
		return LK_EXIT_USAGE;
	}
	glfwSetWindowUserPointer(a->win, a);
	glfwMakeContextCurrent(a->win);
	glfwSwapInterval(opt->screenshot ? 0 : 1);
	if (!opt->screenshot) {
		glfwSetKeyCallback(a->win, on_key);
		glfwSetMouseButtonCallback(a->win, on_button);
		glfwSetCursorPosCallback(a->win, on_cursor);
		glfwSetScrollCallback(a->win, on_scroll);
	}
	lk__view_build_sphere(&a->sphere[0], 10, 16);
	lk__view_build_sphere(&a->sphere[1], 6, 8);
	frame_camera(a);
	restart(a);
	for (int k = 0; k < 2; ++k)
		if (!a->s[k].sim)
			lk_cli_error("view", "%s side: %s", k ? "right" : "left", a->s[k].status);

	int rc = LK_EXIT_OK;
	double last = glfwGetTime();
	for (int frame = 1; !glfwWindowShouldClose(a->win); ++frame) {
		double now = glfwGetTime(), dt = now - last;
		last = now;
		if (opt->screenshot) {
			/* one step a frame: the picture depends on the frame count only */
			step_both(a);
		} else {
			if (!a->paused) {
				a->acc += fmin(dt, 0.1) * (a->slow ? SLOW_FACTOR : 1.0);
				int n = 0;
				while (a->acc >= a->scene->h && n < MAX_STEPS_PER_FRAME && glfwGetTime() - now < FRAME_BUDGET) {
					step_both(a);
					a->acc -= a->scene->h;
					++n;
				}
				if (a->acc > a->scene->h)
					a->acc = a->scene->h;
			}
			if (a->step_once) {
				step_both(a);
				a->step_once = 0;
			}
		}
		render(a);
		if (opt->screenshot && frame >= opt->frames) {
			glFinish();
			if (save_png(a, opt->screenshot) != 0) {
				lk_cli_error("view", "cannot write %s", opt->screenshot);
				rc = LK_EXIT_FAIL;
			}
			break;
		}
		if (a->shot_pending) {
			a->shot_pending = 0;
			interactive_shot(a);
		}
		glfwSwapBuffers(a->win);
		glfwPollEvents();
	}

	for (int k = 0; k < 2; ++k)
		lk_sim_destroy(a->s[k].sim);
	if (a->ov)
		cairo_surface_destroy(a->ov);
	if (a->tex)
		glDeleteTextures(1, &a->tex);
	lk__view_free_mesh(&a->sphere[0]);
	lk__view_free_mesh(&a->sphere[1]);
	glfwDestroyWindow(a->win);
	glfwTerminate();
	lk_scene_destroy(a->scene);
	return rc;
}

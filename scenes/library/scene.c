/* The built-in scenes, with the papers' set-ups as defaults. */
#include "scene.h"
#include "quat.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LK_PI 3.14159265358979323846

typedef struct param {
	const char *key;
	double value;
	double lo, hi;
} param;

#define MAX_PARAMS 10

typedef struct builder {
	const char *name;
	const char *help;
	param params[MAX_PARAMS];
	void (*build)(lk_scene *s, const double *v);
} builder;

/* --------------------------------------------------------------------------------------- body helpers */

static lk_scene_body *add_body(lk_scene *s)
{
	lk_scene_body *b = &s->bodies[s->nbodies++];
	memset(b, 0, sizeof *b);
	b->quat[0] = 1.0;
	b->friction = 0.5;
	return b;
}

static void ground(lk_scene *s, double mu, double e)
{
	lk_scene_body *g = add_body(s);
	g->shape = LK_SHAPE_PLANE;
	g->friction = mu;
	g->restitution = e;
}

static lk_scene_body *box(lk_scene *s, double hx, double hy, double hz, double mass, double x, double y, double z,
                          double mu)
{
	lk_scene_body *b = add_body(s);
	b->shape = LK_SHAPE_BOX;
	b->size[0] = hx;
	b->size[1] = hy;
	b->size[2] = hz;
	b->mass = mass;
	b->pos[0] = x;
	b->pos[1] = y;
	b->pos[2] = z;
	b->friction = mu;
	return b;
}

static lk_scene_body *sphere(lk_scene *s, double r, double mass, double x, double y, double z, double mu, double e)
{
	lk_scene_body *b = add_body(s);
	b->shape = LK_SHAPE_SPHERE;
	b->size[0] = r;
	b->mass = mass;
	b->pos[0] = x;
	b->pos[1] = y;
	b->pos[2] = z;
	b->friction = mu;
	b->restitution = e;
	return b;
}

static void view(lk_scene *s, double cx, double cz, double extent)
{
	s->view_center[0] = cx;
	s->view_center[2] = cz;
	s->view_extent = extent;
}

static void track_top(lk_scene *s, int body, double drop)
{
	s->stack_top = body;
	s->stack_top_height = s->bodies[body].pos[2];
	s->fall_drop = drop;
}

/* A deterministic jitter so that stacks and pools are not perfectly symmetric. */
static double jitter(unsigned *state)
{
	*state = *state * 1664525u + 1013904223u;
	return ((double)(*state >> 8) / 16777216.0) * 2.0 - 1.0;
}

/* --------------------------------------------------------------------------------------------- scenes */

/* Poulsen, Abel & Erleben 2010, Figure 3: a vertical stack of unit boxes. */
static void build_boxstack(lk_scene *s, const double *v)
{
	int n = (int)v[0];
	double size = v[1], mu = v[2], ratio = v[3];
	ground(s, mu, 0);
	for (int i = 0; i < n; ++i) {
		double m = (i == n - 1) ? ratio : 1.0;
		box(s, size / 2, size / 2, size / 2, m, 0, 0, size / 2 + i * size, mu);
	}
	track_top(s, s->nbodies - 1, size / 2);
	view(s, 0, n * size / 2, fmax(n * size / 2 + size, 2 * size));
}

static void build_pyramid(lk_scene *s, const double *v)
{
	int n = (int)v[0];
	double size = v[1], mu = v[2];
	ground(s, mu, 0);
	for (int row = 0; row < n; ++row)
		for (int i = 0; i < n - row; ++i)
			box(s, size / 2, size / 2, size / 2, 1.0, (i - (n - row - 1) / 2.0) * size * 1.02, 0,
			    size / 2 + row * size, mu);
	track_top(s, s->nbodies - 1, size / 2);
	view(s, 0, n * size / 2, n * size / 2 + size);
}

/* Silcowitz, Niebe & Erleben, case h: a large friction-inducing layout, a brick wall in running bond. */
static void build_wall(lk_scene *s, const double *v)
{
	int w = (int)v[0], rows = (int)v[1];
	double mu = v[2], bl = 1.0, bh = 0.5, bd = 0.5;
	ground(s, mu, 0);
	for (int r = 0; r < rows; ++r) {
		int count = (r % 2) ? w - 1 : w;
		double off = (r % 2) ? bl / 2 : 0;
		for (int i = 0; i < count; ++i)
			box(s, bl / 2, bd / 2, bh / 2, 1.0, (i - (w - 1) / 2.0) * bl + off, 0, bh / 2 + r * bh, mu);
	}
	track_top(s, s->nbodies - 1, bh / 2);
	view(s, 0, rows * bh / 2, fmax(w * bl / 2, rows * bh / 2) + 1);
}

/* Miyamoto & Yamashita 2019 sec. 5, Pool 1 and Pool 2: 221 circles of radius 0.21 m in a 6 m wide pool,
 * friction 0.1, restitution 0.2, g = 9.80665. Pool 2 raises the mass linearly with the initial height from
 * 1 to 3 kg. dim=3 gives the 3D variant: spheres in a square box. */
static void build_pool(lk_scene *s, const double *v, int pool2)
{
	int n = (int)v[0], dim = (int)v[5];
	double r = v[1], mass = v[2], mu = v[3], width = v[4];
	s->plane2d = dim == 2;
	s->gravity[2] = -9.80665;
	ground(s, mu, 0.2);
	/* walls 8 m high, or higher where the circles would fill that: a pool, not a heap pouring over its walls
	 * (600 circles of 0.15 m settle 8.3 m high in the 6 m pool, and those that roll over the top land from
	 * there, the deepest contact of the run). The pile's height in rows of a square packing, which is looser
	 * than the settled one, with 15 % to spare. */
	const double across = fmax(1.0, floor(width / (2 * r)));
	const double rows = ceil(n / (dim == 2 ? across : across * across));
	const double wall_h = fmax(4.0, 0.5 * 1.15 * rows * 2 * r);
	/* walls: static boxes just outside [-width/2, width/2] */
	box(s, 0.25, dim == 2 ? 1.0 : width / 2 + 0.5, wall_h, 0, -width / 2 - 0.25, 0, wall_h, mu);
	box(s, 0.25, dim == 2 ? 1.0 : width / 2 + 0.5, wall_h, 0, width / 2 + 0.25, 0, wall_h, mu);
	if (dim == 3) {
		box(s, width / 2 + 0.5, 0.25, wall_h, 0, 0, -width / 2 - 0.25, wall_h, mu);
		box(s, width / 2 + 0.5, 0.25, wall_h, 0, 0, width / 2 + 0.25, wall_h, mu);
	}
	double gap = 2.1 * r;
	int cols = (int)floor(width / gap);
	int per_layer = dim == 2 ? cols : cols * cols;
	int layers = (n + per_layer - 1) / per_layer;
	unsigned seed = 12345u;
	for (int i = 0; i < n; ++i) {
		int layer = i / per_layer, k = i % per_layer;
		int cx = k % cols, cy = k / cols;
		double x = (cx - (cols - 1) / 2.0) * gap + 0.1 * r * jitter(&seed);
		double y = dim == 2 ? 0 : (cy - (cols - 1) / 2.0) * gap + 0.1 * r * jitter(&seed);
		double z = r + 0.01 + layer * gap;
		double m = pool2 ? 1.0 + 2.0 * (layers > 1 ? (double)layer / (layers - 1) : 0.0) : mass;
		sphere(s, r, m, x, y, z, mu, 0.2);
	}
	s->stack_top = -1;
	view(s, 0, fmax(layers * gap / 2, 1.5), fmax(width / 2 + 0.5, layers * gap / 2 + 0.5));
}

static void build_pool1(lk_scene *s, const double *v)
{
	build_pool(s, v, 0);
}

static void build_pool2(lk_scene *s, const double *v)
{
	build_pool(s, v, 1);
}

/* Miyamoto & Yamashita 2019 sec. 5, Stacking: 30 circles of radius 0.18 m, 1 kg, stacked vertically, in 2D;
 * Table 1 uses 150. */
static void build_stacking(lk_scene *s, const double *v)
{
	int n = (int)v[0];
	double r = v[1], mu = v[2];
	s->plane2d = 1;
	s->gravity[2] = -9.80665;
	ground(s, mu, 0.2);
	for (int i = 0; i < n; ++i)
		sphere(s, r, 1.0, 0, 0, r + 2 * r * i, mu, 0.2);
	track_top(s, s->nbodies - 1, r);
	view(s, 0, n * r, n * r + 0.5);
}

/* Silcowitz, Niebe & Erleben: a heavy box on light boxes (mass ratio at least 100). */
static void build_heavy(lk_scene *s, const double *v)
{
	double w[4] = {v[0], 1.0, v[2], v[1]};
	build_boxstack(s, w);
}

/* Boxes on a slope, below and above the friction angle: the first half holds, the second half slides. */
static void build_incline(lk_scene *s, const double *v)
{
	int n = (int)v[0];
	double angle = v[1] * LK_PI / 180.0, t = tan(angle);
	ground(s, 0.5, 0);
	/* the slope: a static box rotated about y */
	double L = 4.0 * n, th = 0.5;
	lk_scene_body *slope = box(s, L / 2, 2.0 * n / 2 + 1, th / 2, 0, 0, 0, L / 2 * sin(angle), 1.0);
	slope->quat[0] = cos(-angle / 2);
	slope->quat[2] = sin(-angle / 2);
	/* the rotation about y by -angle maps body x to dir = (cos a, 0, sin a) and body z to the slope
	 * normal (-sin a, 0, cos a) */
	const double nrm[3] = {-sin(angle), 0, cos(angle)};
	for (int i = 0; i < n; ++i) {
		double mu = t * (n > 1 ? 0.5 + 1.0 * i / (n - 1) : 1.5); /* from half to 1.5 times tan(angle) */
		double c[3];
		for (int k = 0; k < 3; ++k)
			c[k] = slope->pos[k] + (th / 2 + 0.25 + 0.001) * nrm[k];
		c[1] = (i - (n - 1) / 2.0) * 1.5;
		lk_scene_body *b = box(s, 0.25, 0.25, 0.25, 1.0, c[0], c[1], c[2], mu);
		b->quat[0] = slope->quat[0];
		b->quat[2] = slope->quat[2];
	}
	s->stack_top = -1;
	view(s, 0, L / 2 * sin(angle), L / 2 + 1);
}

/* Boxes sliding across the floor, launched at angles from 0 to 45 degrees to the x axis: friction of the box
 * model decelerates each tangent axis of the contact frame at mu g separately and so turns a slide that is not
 * along an axis towards the diagonal; Coulomb's cone decelerates along the velocity and keeps the heading. */
static void build_slide(lk_scene *s, const double *v)
{
	int n = (int)v[0];
	double speed = v[1], mu = v[2];
	ground(s, mu, 0);
	for (int i = 0; i < n; ++i) {
		double a = (n > 1 ? (double)i / (n - 1) : 0.5) * LK_PI / 4.0;
		lk_scene_body *b = box(s, 0.25, 0.25, 0.25, 1.0, 0, 2.0 * i, 0.25, mu);
		b->vel[0] = speed * cos(a);
		b->vel[1] = speed * sin(a);
	}
	s->stack_top = -1;
	view(s, speed * speed / (4 * mu * 9.81), n - 1.0, n + 2.0);
}

/* Silcowitz, Niebe & Erleben cases a and b: an arched chain of boxes on hinges with limits, optionally with a
 * heavy box on top. */
static void build_snake(lk_scene *s, const double *v)
{
	int n = (int)v[0], heavy = (int)v[1];
	double limit = v[2];
	ground(s, 0.5, 0);
	double R = n * 0.5 / LK_PI, link = 0.5, th = 0.2;
	int first = s->nbodies;
	for (int i = 0; i < n; ++i) {
		double a0 = LK_PI - LK_PI * i / n, a1 = LK_PI - LK_PI * (i + 1) / n, am = 0.5 * (a0 + a1);
		lk_scene_body *b = box(s, link * 0.48, th / 2, th / 2, 1.0, R * cos(am), 0, th + R * sin(am), 0.5);
		/* rotate about y so the link follows the arc: tangent angle = am - pi/2 */
		double rot = -(am - LK_PI / 2);
		b->quat[0] = cos(rot / 2);
		b->quat[2] = sin(rot / 2);
	}
	for (int i = 0; i <= n; ++i) {
		double a = LK_PI - LK_PI * i / n;
		lk_scene_joint *j = &s->joints[s->njoints++];
		memset(j, 0, sizeof *j);
		j->type = LK_JOINT_HINGE;
		j->anchor[0] = R * cos(a);
		j->anchor[2] = th + R * sin(a);
		j->axis[1] = 1;
		j->lo = -limit;
		j->hi = limit;
		if (i == 0) {
			j->body[0] = first;
			j->body[1] = -1;
		} else if (i == n) {
			j->body[0] = first + n - 1;
			j->body[1] = -1;
		} else {
			j->body[0] = first + i;
			j->body[1] = first + i - 1;
		}
	}
	if (heavy) {
		box(s, 0.3, 0.3, 0.3, v[3], 0, 0, th + R + th / 2 + 0.3 + 0.01, 0.5);
		track_top(s, s->nbodies - 1, 0.3);
	} else {
		track_top(s, first + n / 2, 0.2);
	}
	view(s, 0, R / 2 + 0.5, R + 1);
}

/* Scale: thousands of spheres in a square box. */
static void build_bigpool(lk_scene *s, const double *v)
{
	double w[6] = {v[0], v[1], 1.0, 0.3, v[2], 3};
	build_pool(s, w, 0);
}


/* A uniform draw in [-1, 1) from lcpkit's generator. */
static double rng_sym(lk__rng *r)
{
	return 2.0 * lk__rng_uniform(r) - 1.0;
}

/* The unit quaternion (w, x, y, z) of a turn by angle about a unit axis. */
static void axis_angle(double q[4], double ax, double ay, double az, double angle)
{
	double s = sin(angle / 2);
	q[0] = cos(angle / 2);
	q[1] = ax * s;
	q[2] = ay * s;
	q[3] = az * s;
}

/* Half the inner width of the pile's walls: the grid of columns and a margin for the heap to spread. */
static double pile_half_width(int n, double size)
{
	int cols = (int)ceil(sqrt(n / 6.0));
	return cols * 1.85 * size / 2 + 1.5 * size;
}

/* Bullet's "3000 boxes" benchmark, and the heaps of games: boxes dropped from a grid of columns, each one
 * shifted and tilted a little so that the columns topple into a heap; low walls keep the heap compact. */
static void build_pile(lk_scene *s, const double *v)
{
	int n = (int)v[0], walls = (int)v[3];
	double size = v[1], mu = v[2];
	int cols = (int)ceil(sqrt(n / 6.0));
	int layers = (n + cols * cols - 1) / (cols * cols);
	/* a turned box reaches out to its half diagonal, 0.87 size: columns and layers keep them apart */
	double gap = 1.85 * size, rise = 1.8 * size, z0 = size;
	double half = pile_half_width(n, size), wall_h = 2.5 * size;
	ground(s, mu, 0);
	if (walls) {
		box(s, size / 4, half + size / 2, wall_h / 2, 0, -half - size / 4, 0, wall_h / 2, mu);
		box(s, size / 4, half + size / 2, wall_h / 2, 0, half + size / 4, 0, wall_h / 2, mu);
		box(s, half, size / 4, wall_h / 2, 0, 0, -half - size / 4, wall_h / 2, mu);
		box(s, half, size / 4, wall_h / 2, 0, 0, half + size / 4, wall_h / 2, mu);
	}
	lk__rng rng = {20240519u};
	for (int i = 0; i < n; ++i) {
		int layer = i / (cols * cols), k = i % (cols * cols);
		/* every other layer sits half a gap over, so boxes land on the edges of the ones below */
		double shift = (layer % 2 ? 0.25 : -0.25) * gap;
		double x = (k % cols - (cols - 1) / 2.0) * gap + shift + 0.05 * size * rng_sym(&rng);
		double y = (k / cols - (cols - 1) / 2.0) * gap + shift + 0.05 * size * rng_sym(&rng);
		lk_scene_body *b = box(s, size / 2, size / 2, size / 2, 1.0, x, y, z0 + layer * rise, mu);
		/* any orientation: a box landing on a corner tumbles */
		double u = lk__rng_uniform(&rng), a = 2 * LK_PI * lk__rng_uniform(&rng),
		       c = 2 * LK_PI * lk__rng_uniform(&rng);
		b->quat[0] = sqrt(1 - u) * sin(a);
		b->quat[1] = sqrt(1 - u) * cos(a);
		b->quat[2] = sqrt(u) * sin(c);
		b->quat[3] = sqrt(u) * cos(c);
	}
	s->stack_top = -1;
	s->time = 5.0;
	double top = z0 + (layers - 1) * rise + size;
	view(s, 0, top / 2, fmax(half + size, top / 2 + size / 2));
}

/* A house of cards: storeys of A-frames, two cards leaning on each other, with flat cards across
 * neighbouring peaks carrying the next storey; the top A-frame is the stack's top. The flat cards lie end to
 * end, each from one peak to the next: a peak's highest points are its cards' outer top corners, t cos(tilt)
 * either side of its middle, and the two flat cards over it end halfway between, so that each rests on one
 * corner. Frames a card apart where they are narrower than a card (tilts up to about 27 degrees), and a
 * tenth of a card apart at their feet where they are wider, with flat cards long enough to bridge them. */
static void build_cards(lk_scene *s, const double *v)
{
	int levels = (int)v[0];
	double mu = v[1], tilt = v[2] * LK_PI / 180.0, t = v[3];
	const double L = 1.2, W = 0.9, mass = 0.1;
	double ca = cos(tilt), sa = sin(tilt);
	/* a leaning card's top inner corner touches its partner at the frame's middle, its bottom inner corner
	 * stands on the floor of the storey */
	double cx = L / 2 * sa + t / 2 * ca, cz = L / 2 * ca + t / 2 * sa;
	double peak = L * ca + t * sa, gap = t * ca;
	double pitch = fmax(L + gap, 2 * (L * sa + t * ca) + 0.1 * L), flat = pitch - gap;
	ground(s, mu, 0);
	double floor_z = 0;
	for (int level = 0; level < levels; ++level) {
		int frames = levels - level;
		for (int f = 0; f < frames; ++f) {
			double x = (f - (frames - 1) / 2.0) * pitch;
			for (int side = -1; side <= 1; side += 2) {
				lk_scene_body *c = box(s, t / 2, W / 2, L / 2, mass, x + side * cx, 0, floor_z + cz, mu);
				axis_angle(c->quat, 0, 1, 0, -side * tilt);
			}
		}
		floor_z += peak;
		if (frames > 1) {
			for (int f = 0; f + 1 < frames; ++f)
				box(s, flat / 2, W / 2, t / 2, mass, (f - (frames - 2) / 2.0) * pitch, 0, floor_z + t / 2, mu);
			floor_z += t;
		}
	}
	track_top(s, s->nbodies - 1, 0.3 * L);
	s->time = 5.0;
	view(s, 0, floor_z / 2, fmax(levels * pitch / 2, floor_z / 2) + 0.5);
}

static lk_scene_joint *add_joint(lk_scene *s, lk_scene_joint_type type, int b0, int b1, double ax, double ay,
                                 double az)
{
	lk_scene_joint *j = &s->joints[s->njoints++];
	memset(j, 0, sizeof *j);
	j->type = type;
	j->body[0] = b0;
	j->body[1] = b1;
	j->axis[0] = ax;
	j->axis[1] = ay;
	j->axis[2] = az;
	j->lo = 1;
	j->hi = -1;
	return j;
}

static void anchor(lk_scene_joint *j, double x, double y, double z)
{
	j->anchor[0] = x;
	j->anchor[1] = y;
	j->anchor[2] = z;
}

static void motor(lk_scene_joint *j, double lo, double hi, double vel, double fmax)
{
	j->lo = lo;
	j->hi = hi;
	j->motor_vel = vel;
	j->motor_fmax = fmax;
}

/* Powered joints held at their limits, the load of a robot arm at its end stop: a row of hanging arms whose
 * hinge motors push them up against stops from 0.4 to 1.2 rad (to either side in turn), a door whose motor
 * shuts it against its stop, a slider pushed to its end and a wheel driven without a limit. */
static void build_motor_limit(lk_scene *s, const double *v)
{
	int n = (int)v[0];
	double force = v[1], speed = v[2], pitch = 2.2;
	double x0 = -(pitch * (n - 1) + 7.0) / 2;
	ground(s, 0.5, 0);
	for (int i = 0; i < n; ++i) {
		double x = x0 + i * pitch, a = 0.4 + 0.8 * (n > 1 ? (double)i / (n - 1) : 0.0);
		box(s, 0.1, 0.1, 0.5, 1.0, x, 0, 1.5, 0.5);
		lk_scene_joint *j = add_joint(s, LK_JOINT_HINGE, s->nbodies - 1, -1, 0, 1, 0);
		anchor(j, x, 0, 2.0);
		if (i % 2 == 0)
			motor(j, -0.2, a, speed, force);
		else
			motor(j, -a, 0.2, -speed, force);
	}
	double x = x0 + n * pitch;
	box(s, 0.5, 0.05, 0.8, 5.0, x, 0, 0.95, 0.5);
	anchor(add_joint(s, LK_JOINT_HINGE, s->nbodies - 1, -1, 0, 0, 1), x - 0.5, 0, 0.95);
	motor(&s->joints[s->njoints - 1], 0, 1.2, speed, force);
	box(s, 0.3, 0.3, 0.3, 1.0, x + 2.5, 0, 0.5, 0.5);
	anchor(add_joint(s, LK_JOINT_SLIDER, s->nbodies - 1, -1, 1, 0, 0), x + 2.5, 0, 0.5);
	motor(&s->joints[s->njoints - 1], -0.5, 1.0, speed, force);
	box(s, 0.5, 0.1, 0.5, 2.0, x + 5.5, 0, 1.5, 0.5);
	anchor(add_joint(s, LK_JOINT_HINGE, s->nbodies - 1, -1, 0, 1, 0), x + 5.5, 0, 1.5);
	motor(&s->joints[s->njoints - 1], 1, -1, 2 * speed, force);
	s->stack_top = -1;
	s->time = 5.0;
	/* the row is wider than tall: the ground low in the picture */
	view(s, 0, 0.7 * (-x0 + 1), -x0 + 1);
}

/* The rotation matrix (row-major) of a unit quaternion q = (w, x, y, z). */
static void quat_matrix(const double q[4], double R[9])
{
	double w = q[0], x = q[1], y = q[2], z = q[3];
	const double m[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
	                     2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
	                     2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)};
	memcpy(R, m, sizeof m);
}

/* q v q^-1 for a unit quaternion q. */
static void rotate(const double q[4], const double v[3], double out[3])
{
	double R[9];
	quat_matrix(q, R);
	for (int k = 0; k < 3; ++k)
		out[k] = R[3 * k] * v[0] + R[3 * k + 1] * v[1] + R[3 * k + 2] * v[2];
}

/* One ragdoll's parts, standing with its face towards +y and the pelvis 1 m up: capsules along the local z
 * of each part, which for the arms (held out sideways) is the world x. */
typedef struct ragdoll_part {
	double r, hh, mass, pos[3];
	int sideways;
} ragdoll_part;

enum { PELVIS, SPINE, HEAD, UPPER_LEG_L, UPPER_LEG_R, LOWER_LEG_L, LOWER_LEG_R, UPPER_ARM_L, UPPER_ARM_R,
       LOWER_ARM_L, LOWER_ARM_R, RAGDOLL_PARTS };

static const ragdoll_part ragdoll_parts[RAGDOLL_PARTS] = {
	{0.14, 0.08, 10, {0, 0, 1.0}, 0},      {0.14, 0.12, 15, {0, 0, 1.38}, 0},
	{0.10, 0.04, 5, {0, 0, 1.80}, 0},      {0.07, 0.16, 8, {-0.10, 0, 0.60}, 0},
	{0.07, 0.16, 8, {0.10, 0, 0.60}, 0},   {0.06, 0.13, 4, {-0.10, 0, 0.20}, 0},
	{0.06, 0.13, 4, {0.10, 0, 0.20}, 0},   {0.05, 0.11, 3, {-0.36, 0, 1.55}, 1},
	{0.05, 0.11, 3, {0.36, 0, 1.55}, 1},   {0.045, 0.10, 2, {-0.66, 0, 1.55}, 1},
	{0.045, 0.10, 2, {0.66, 0, 1.55}, 1},
};

/* Joints from a part (body[0]) to the part it hangs from (body[1]): hinges about their axis with limits,
 * balls with a cone around their axis (the limb's length). Knees and elbows bend forwards only. */
typedef struct ragdoll_joint {
	int child, parent;
	lk_scene_joint_type type;
	double anchor[3], axis[3];
	double lo, hi;      /* hinge */
	double cone, twist; /* ball */
} ragdoll_joint;

static const ragdoll_joint ragdoll_joints[] = {
	{SPINE, PELVIS, LK_JOINT_HINGE, {0, 0, 1.20}, {1, 0, 0}, -0.8, 0.4, 0, 0},
	{HEAD, SPINE, LK_JOINT_BALL, {0, 0, 1.65}, {0, 0, 1}, 0, 0, 0.6, 0.6},
	{UPPER_LEG_L, PELVIS, LK_JOINT_BALL, {-0.10, 0, 0.84}, {0, 0, -1}, 0, 0, 0.8, 0.3},
	{UPPER_LEG_R, PELVIS, LK_JOINT_BALL, {0.10, 0, 0.84}, {0, 0, -1}, 0, 0, 0.8, 0.3},
	{LOWER_LEG_L, UPPER_LEG_L, LK_JOINT_HINGE, {-0.10, 0, 0.38}, {-1, 0, 0}, 0, 2.2, 0, 0},
	{LOWER_LEG_R, UPPER_LEG_R, LK_JOINT_HINGE, {0.10, 0, 0.38}, {-1, 0, 0}, 0, 2.2, 0, 0},
	{UPPER_ARM_L, SPINE, LK_JOINT_BALL, {-0.20, 0, 1.55}, {-1, 0, 0}, 0, 0, 1.0, 0.5},
	{UPPER_ARM_R, SPINE, LK_JOINT_BALL, {0.20, 0, 1.55}, {1, 0, 0}, 0, 0, 1.0, 0.5},
	{LOWER_ARM_L, UPPER_ARM_L, LK_JOINT_HINGE, {-0.52, 0, 1.55}, {0, 0, -1}, 0, 2.2, 0, 0},
	{LOWER_ARM_R, UPPER_ARM_R, LK_JOINT_HINGE, {0.52, 0, 1.55}, {0, 0, 1}, 0, 2.2, 0, 0},
};
#define RAGDOLL_JOINTS ((int)(sizeof ragdoll_joints / sizeof ragdoll_joints[0]))

/* A ragdoll turned by q about its middle and moved there to c. */
static void ragdoll(lk_scene *s, const double q[4], const double c[3], double mu)
{
	static const double middle[3] = {0, 0, 0.97};
	double sideways[4];
	axis_angle(sideways, 0, 1, 0, LK_PI / 2);
	int first = s->nbodies;
	for (int i = 0; i < RAGDOLL_PARTS; ++i) {
		const ragdoll_part *p = &ragdoll_parts[i];
		lk_scene_body *b = add_body(s);
		b->shape = LK_SHAPE_CAPSULE;
		b->size[0] = p->r;
		b->size[1] = p->hh;
		b->mass = p->mass;
		b->friction = mu;
		double d[3] = {p->pos[0] - middle[0], p->pos[1] - middle[1], p->pos[2] - middle[2]};
		rotate(q, d, b->pos);
		for (int k = 0; k < 3; ++k)
			b->pos[k] += c[k];
		if (p->sideways)
			lk_quat_mul(q, sideways, b->quat);
		else
			memcpy(b->quat, q, sizeof b->quat);
	}
	for (int k = 0; k < RAGDOLL_JOINTS; ++k) {
		const ragdoll_joint *rj = &ragdoll_joints[k];
		double ax[3], d[3] = {rj->anchor[0] - middle[0], rj->anchor[1] - middle[1], rj->anchor[2] - middle[2]};
		rotate(q, rj->axis, ax);
		lk_scene_joint *j = add_joint(s, rj->type, first + rj->child, first + rj->parent, ax[0], ax[1], ax[2]);
		rotate(q, d, j->anchor);
		for (int i = 0; i < 3; ++i)
			j->anchor[i] += c[i];
		if (rj->type == LK_JOINT_HINGE) {
			j->lo = rj->lo;
			j->hi = rj->hi;
		} else {
			j->cone = rj->cone;
			j->twist = rj->twist;
		}
	}
}

/* Bullet's ragdoll demo and benchmark: capsule ragdolls dropped lying down in layers, each layer turned across
 * the one below, onto the ground and onto each other. */
static void build_ragdolls(lk_scene *s, const double *v)
{
	int n = (int)v[0];
	double mu = v[1], pitch = 2.2, rise = 0.8;
	int cols = (int)ceil(sqrt(n / 2.0));
	int layers = (n + cols * cols - 1) / (cols * cols);
	ground(s, mu, 0);
	lk__rng rng = {77u};
	double lie[4];
	axis_angle(lie, 1, 0, 0, -LK_PI / 2); /* face down, head towards +y */
	for (int i = 0; i < n; ++i) {
		int layer = i / (cols * cols), k = i % (cols * cols);
		double yaw[4], q[4];
		axis_angle(yaw, 0, 0, 1, (layer % 2) * LK_PI / 2 + 0.3 * rng_sym(&rng));
		lk_quat_mul(yaw, lie, q);
		double c[3] = {(k % cols - (cols - 1) / 2.0) * pitch, (k / cols - (cols - 1) / 2.0) * pitch,
		               1.0 + layer * rise};
		ragdoll(s, q, c, mu);
	}
	s->stack_top = -1;
	s->time = 5.0;
	double top = 1.0 + (layers - 1) * rise, extent = fmax(cols * pitch / 2 + 0.5, top / 2 + 1);
	/* they end on the ground: the ground low in the picture */
	view(s, 0, 0.75 * extent, extent);
}

static const builder builders[] = {
	{"boxstack", "n boxes stacked (Poulsen et al. 2010 Fig. 3): n, size, mu, ratio (top box mass)",
	 {{"n", 10, 1, 1000}, {"size", 1, 0.01, 100}, {"mu", 0.5, 0, 10}, {"ratio", 1, 1e-3, 1e6}}, build_boxstack},
	{"pyramid", "a pyramid of boxes: n (base), size, mu",
	 {{"n", 6, 1, 100}, {"size", 1, 0.01, 100}, {"mu", 0.5, 0, 10}}, build_pyramid},
	{"wall", "a brick wall in running bond (Silcowitz et al. case h): w, rows, mu",
	 {{"w", 8, 2, 200}, {"rows", 8, 1, 200}, {"mu", 0.6, 0, 10}}, build_wall},
	{"pool1", "Miyamoto & Yamashita Pool 1, 2D: n, r, mass, mu, width, dim (2 or 3)",
	 {{"n", 221, 1, 100000}, {"r", 0.21, 0.01, 10}, {"mass", 2, 1e-3, 1e6}, {"mu", 0.1, 0, 10},
	  {"width", 6, 0.5, 1000}, {"dim", 2, 2, 3}},
	 build_pool1},
	{"pool2", "Pool 2: masses rise from 1 to 3 kg with initial height: n, r, mass, mu, width, dim",
	 {{"n", 221, 1, 100000}, {"r", 0.21, 0.01, 10}, {"mass", 2, 1e-3, 1e6}, {"mu", 0.1, 0, 10},
	  {"width", 6, 0.5, 1000}, {"dim", 2, 2, 3}},
	 build_pool2},
	{"stacking", "Miyamoto & Yamashita Stacking, 2D: n (30; Table 1 uses 150), r, mu",
	 {{"n", 30, 1, 10000}, {"r", 0.18, 0.01, 10}, {"mu", 0.1, 0, 10}}, build_stacking},
	{"heavy-on-light", "a heavy box on light boxes: n, ratio (>= 100), mu",
	 {{"n", 4, 2, 100}, {"ratio", 100, 1, 1e6}, {"mu", 0.5, 0, 10}}, build_heavy},
	{"incline", "boxes on a slope with friction from 0.5 to 1.5 tan(angle): n, angle (degrees)",
	 {{"n", 4, 1, 100}, {"angle", 25, 1, 60}}, build_incline},
	{"slide", "boxes sliding across the floor at 0 to 45 degrees (box friction steers them, the cone does not): "
	          "n, speed, mu",
	 {{"n", 4, 1, 100}, {"speed", 4, 0.1, 100}, {"mu", 0.5, 0.01, 10}}, build_slide},
	{"snake", "an arched chain of boxes on limited hinges (Silcowitz et al. cases a, b): n, heavy, limit, mass",
	 {{"n", 10, 2, 200}, {"heavy", 0, 0, 1}, {"limit", 0.2, 0, 3}, {"mass", 50, 1, 1e5}}, build_snake},
	{"bigpool", "spheres in a square box, for scale: n, r, width",
	 {{"n", 10000, 1, 1000000}, {"r", 0.1, 0.01, 10}, {"width", 5, 0.5, 1000}}, build_bigpool},
	{"pile", "boxes dropped from a grid of columns into a heap (Bullet's 3000 boxes: n=3000): n, size, mu, walls",
	 {{"n", 200, 1, 100000}, {"size", 1, 0.01, 100}, {"mu", 0.5, 0, 10}, {"walls", 1, 0, 1}}, build_pile},
	{"cards", "a house of cards, A-frames under flat cards: levels, mu, tilt (degrees from vertical), thick",
	 {{"levels", 3, 1, 30}, {"mu", 0.7, 0, 10}, {"tilt", 18, 5, 40}, {"thick", 0.02, 0.005, 0.2}},
	 build_cards},
	{"motor-limit", "hinge motors pushing arms and a door against their stops, a slider to its end, a wheel: "
	 "n (arms), force, speed",
	 {{"n", 4, 1, 100}, {"force", 50, 0.1, 1e5}, {"speed", 1, 0.01, 100}}, build_motor_limit},
	{"ragdolls", "capsule ragdolls dropped in layers onto each other (Bullet's ragdoll benchmark: n=136): n, mu",
	 {{"n", 8, 1, 10000}, {"mu", 0.7, 0, 10}}, build_ragdolls},
};
#define NBUILDERS ((int)(sizeof builders / sizeof builders[0]))

const char *const *lk_scene_names(void)
{
	static const char *names[NBUILDERS + 1];
	for (int i = 0; i < NBUILDERS; ++i)
		names[i] = builders[i].name;
	names[NBUILDERS] = NULL;
	return names;
}

const char *lk_scene_help(const char *name)
{
	for (int i = 0; i < NBUILDERS; ++i)
		if (name && !strcmp(name, builders[i].name))
			return builders[i].help;
	return NULL;
}

/* seed=K > 0: the same scene with every dynamic body moved sideways (x and y; x alone in a 2D scene) by an
 * amount uniform in +-1e-4 of its largest dimension, drawn from K. A change no one could see or measure in a
 * real set-up, which a chaotic scene (a stack that falls, a pile, a pool) turns into a different outcome: runs
 * over several seeds show how much of an outcome is chance (`lcpkit compare --seeds`, --verdict). Joints keep
 * their world anchors, so a jointed body starts up to that far off its joint. seed=0 is the scene as built. */
static void scene_seed(lk_scene *sc, uint64_t seed)
{
	if (seed == 0)
		return;
	lk__rng rng = {seed * 0x9E3779B97F4A7C15ull};
	for (int i = 0; i < sc->nbodies; ++i) {
		lk_scene_body *b = &sc->bodies[i];
		if (b->mass <= 0)
			continue;
		double size = b->shape == LK_SHAPE_SPHERE ? 2 * b->size[0]
		              : b->shape == LK_SHAPE_CAPSULE ? 2 * (b->size[0] + b->size[1])
		                                             : 2 * fmax(b->size[0], fmax(b->size[1], b->size[2]));
		for (int k = 0; k < (sc->plane2d ? 1 : 2); ++k)
			b->pos[k] += 1e-4 * size * (2 * lk__rng_uniform(&rng) - 1);
	}
	/* the stack's top starts where it now is */
	if (sc->stack_top >= 0)
		sc->stack_top_height = sc->bodies[sc->stack_top].pos[2];
}

static int nparams(const builder *b)
{
	int k = 0;
	while (k < MAX_PARAMS && b->params[k].key)
		++k;
	return k;
}

/* Bodies (and joints) a scene needs at most: its count parameter, plus walls and ground. */
static int capacity(const char *name, const double *v)
{
	int n = (int)v[0];
	if (!strcmp(name, "pyramid"))
		return 16 + n * n;
	if (!strcmp(name, "wall"))
		return 16 + n * (int)v[1];
	if (!strcmp(name, "cards"))
		return 16 + 3 * n * (n + 1) / 2;
	if (!strcmp(name, "motor-limit"))
		return 16 + n + 3;
	if (!strcmp(name, "ragdolls"))
		return 16 + RAGDOLL_PARTS * n;
	return 16 + n;
}

lk_status lk_scene_create(const char *spec, lk_scene **out, char *err, size_t esz)
{
	if (err && esz)
		err[0] = '\0';
	if (!out)
		return LK_ERR_INVALID_ARGUMENT;
	*out = NULL;
	if (!spec)
		spec = "";
	size_t nlen = strcspn(spec, ":");
	const builder *b = NULL;
	for (int i = 0; i < NBUILDERS; ++i)
		if (strlen(builders[i].name) == nlen && !strncmp(builders[i].name, spec, nlen))
			b = &builders[i];
	if (!b) {
		char names[400];
		size_t used = 0;
		for (int i = 0; i < NBUILDERS; ++i)
			used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", builders[i].name);
		snprintf(err, esz, "unknown scene '%.*s' (choose from %s)", (int)nlen, spec, names);
		return LK_ERR_PARSE;
	}
	int np = nparams(b);
	double v[MAX_PARAMS];
	for (int k = 0; k < np; ++k)
		v[k] = b->params[k].value;
	const char *s = spec + nlen;
	if (*s == ':')
		++s;
	/* every scene's parameters, then the one all scenes take: seed (scene_seed) */
	const param seed_param = {"seed", 0, 0, 1e6};
	double seed = 0;
	while (*s) {
		size_t len = strcspn(s, ",");
		const char *eq = memchr(s, '=', len);
		int k = -1;
		const param *pk = NULL;
		if (eq) {
			for (int j = 0; j < np; ++j)
				if (strlen(b->params[j].key) == (size_t)(eq - s) && !strncmp(b->params[j].key, s, (size_t)(eq - s)))
					k = j, pk = &b->params[j];
			if (!pk && (size_t)(eq - s) == strlen(seed_param.key) && !strncmp(s, seed_param.key, (size_t)(eq - s)))
				pk = &seed_param;
		}
		if (!pk) {
			char keys[200];
			size_t used = 0;
			for (int j = 0; j < np; ++j)
				used += (size_t)snprintf(keys + used, sizeof keys - used, "%s, ", b->params[j].key);
			snprintf(keys + used, sizeof keys - used, "%s", seed_param.key);
			snprintf(err, esz, "scene %s: unknown parameter '%.*s' (valid: %s)", b->name,
			         (int)(eq ? (size_t)(eq - s) : len), s, keys);
			return LK_ERR_PARSE;
		}
		char tmp[64];
		size_t vlen = len - (size_t)(eq - s) - 1;
		if (vlen == 0 || vlen >= sizeof tmp) {
			snprintf(err, esz, "scene %s: '%s' needs a value", b->name, pk->key);
			return LK_ERR_PARSE;
		}
		memcpy(tmp, eq + 1, vlen);
		tmp[vlen] = '\0';
		char *end;
		double x = strtod(tmp, &end);
		if (*end || !isfinite(x) || x < pk->lo || x > pk->hi || (pk == &seed_param && x != floor(x))) {
			snprintf(err, esz, "scene %s: %s = '%s' is not a %s in [%g, %g]", b->name, pk->key, tmp,
			         pk == &seed_param ? "whole number" : "number", pk->lo, pk->hi);
			return LK_ERR_PARSE;
		}
		if (k >= 0)
			v[k] = x;
		else
			seed = x;
		s += len;
		if (*s == ',')
			++s;
	}
	int cap = capacity(b->name, v);
	lk_scene *sc = calloc(1, sizeof *sc);
	if (!sc) {
		snprintf(err, esz, "out of memory");
		return LK_ERR_NO_MEMORY;
	}
	sc->bodies = calloc((size_t)cap, sizeof *sc->bodies);
	sc->joints = calloc((size_t)cap, sizeof *sc->joints);
	if (!sc->bodies || !sc->joints) {
		lk_scene_destroy(sc);
		snprintf(err, esz, "out of memory");
		return LK_ERR_NO_MEMORY;
	}
	snprintf(sc->name, sizeof sc->name, "%s", b->name);
	size_t used = (size_t)snprintf(sc->spec, sizeof sc->spec, "%s", b->name);
	for (int k = 0; k < np && used < sizeof sc->spec; ++k)
		if (v[k] != b->params[k].value)
			used += (size_t)snprintf(sc->spec + used, sizeof sc->spec - used, "%s%s=%g",
			                         strchr(sc->spec, ':') ? "," : ":", b->params[k].key, v[k]);
	if (seed > 0 && used < sizeof sc->spec)
		snprintf(sc->spec + used, sizeof sc->spec - used, "%sseed=%.0f", strchr(sc->spec, ':') ? "," : ":", seed);
	sc->gravity[2] = -9.81;
	sc->h = 1.0 / 60.0;
	sc->time = 10.0;
	sc->stack_top = -1;
	b->build(sc, v);
	scene_seed(sc, (uint64_t)seed);
	*out = sc;
	return LK_OK;
}

void lk_scene_destroy(lk_scene *s)
{
	if (!s)
		return;
	free(s->bodies);
	free(s->joints);
	free(s);
}

void lk_scene_body_inertia(const lk_scene_body *b, double I[3])
{
	double m = b->mass;
	if (b->shape == LK_SHAPE_SPHERE) {
		I[0] = I[1] = I[2] = 0.4 * m * b->size[0] * b->size[0];
	} else if (b->shape == LK_SHAPE_CAPSULE) {
		/* a solid cylinder of length l and two half balls of uniform density, the halves' centres of mass
		 * 3 r / 8 from the cylinder's ends */
		double r = b->size[0], l = 2 * b->size[1];
		double vc = LK_PI * r * r * l, vs = 4.0 / 3.0 * LK_PI * r * r * r;
		double mc = m * vc / (vc + vs), ms = m - mc;
		I[2] = mc * r * r / 2 + ms * 0.4 * r * r;
		I[0] = I[1] = mc * (r * r / 4 + l * l / 12) + ms * (0.4 * r * r + l * l / 4 + 3 * l * r / 8);
	} else {
		double x = 2 * b->size[0], y = 2 * b->size[1], z = 2 * b->size[2];
		I[0] = m * (y * y + z * z) / 12.0;
		I[1] = m * (x * x + z * z) / 12.0;
		I[2] = m * (x * x + y * y) / 12.0;
	}
}

double lk_scene_body_energy(const lk_scene_body *b, const double q[4], const double v[3], const double w[3])
{
	if (b->mass <= 0)
		return 0;
	double I[3];
	lk_scene_body_inertia(b, I);
	/* w in the body frame: R^T w with R from the unit quaternion q */
	double R[9];
	quat_matrix(q, R);
	double wb[3];
	for (int k = 0; k < 3; ++k)
		wb[k] = R[k] * w[0] + R[3 + k] * w[1] + R[6 + k] * w[2];
	double e = 0.5 * b->mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
	for (int k = 0; k < 3; ++k)
		e += 0.5 * I[k] * wb[k] * wb[k];
	return e;
}

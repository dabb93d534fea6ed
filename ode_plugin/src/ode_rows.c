/* Finding the bodies and joints of a step and turning ODE's rows into lcpkit's problem.
 *
 * Conversion (docs/maths.md). ODE's quickstep solves, in force units,
 *     (J M^-1 J^T + cfm/h) lambda_f = c/h - J (u/h + M^-1 f)
 * with c, cfm as getInfo2 returns them (c is already a velocity: fps * erp * error, motor speed, ...; cfm is
 * ODE's force-level CFM) and lo, hi forces. With lambda = h lambda_f and u* = u + h M^-1 f this is
 *     (J M^-1 J^T + s) lambda + J u* - c = w,   s = cfm / h,   lo, hi scaled by h,
 * lcpkit's impulse form. A friction row whose findex points at its normal keeps ODE's rule
 * |lambda| <= |hi lambda_normal|, so mu = |hi| is scale free. */
#include "ode_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lk_status lk__ode_fail(lk_ode *ctx, lk_status st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
	va_end(ap);
	return st;
}

void lk__ode_note(lk_ode *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ctx->note, sizeof ctx->note, fmt, ap);
	va_end(ap);
}

void lk__ode_note_more(lk_ode *ctx, const char *fmt, ...)
{
	size_t used = strlen(ctx->note);
	if (used > 0 && used + 2 < sizeof ctx->note) {
		memcpy(ctx->note + used, "; ", 3);
		used += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ctx->note + used, sizeof ctx->note - used, fmt, ap);
	va_end(ap);
}

/* ----------------------------------------------------------------------------------------- pointer map */

static unsigned hash_ptr(const void *p, int cap)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (unsigned)(x & (uint64_t)(cap - 1));
}

int lk__ptrmap_reserve(lk__ptrmap *m, int n)
{
	int cap = 16;
	while (cap < 2 * n + 2)
		cap *= 2;
	if (cap > m->cap) {
		const void **k = realloc(m->keys, (size_t)cap * sizeof *k);
		if (!k)
			return 0;
		m->keys = k;
		int *v = realloc(m->vals, (size_t)cap * sizeof *v);
		if (!v)
			return 0;
		m->vals = v;
		m->cap = cap;
	}
	memset(m->keys, 0, (size_t)m->cap * sizeof *m->keys);
	m->count = 0;
	return 1;
}

int lk__ptrmap_get(const lk__ptrmap *m, const void *key)
{
	if (!m->cap)
		return -1;
	for (unsigned i = hash_ptr(key, m->cap);; i = (i + 1) & (unsigned)(m->cap - 1)) {
		if (m->keys[i] == key)
			return m->vals[i];
		if (!m->keys[i])
			return -1;
	}
}

static void put_nogrow(lk__ptrmap *m, const void *key, int val)
{
	unsigned i = hash_ptr(key, m->cap);
	while (m->keys[i])
		i = (i + 1) & (unsigned)(m->cap - 1);
	m->keys[i] = key;
	m->vals[i] = val;
	m->count++;
}

int lk__ptrmap_put(lk__ptrmap *m, const void *key, int val)
{
	if (lk__ptrmap_get(m, key) >= 0)
		return 0;
	if (2 * (m->count + 1) > m->cap) {
		lk__ptrmap old = *m;
		lk__ptrmap grown = {NULL, NULL, 0, 0};
		if (!lk__ptrmap_reserve(&grown, old.cap ? old.cap : 8))
			return -1;
		for (int i = 0; i < old.cap; ++i)
			if (old.keys[i])
				put_nogrow(&grown, old.keys[i], old.vals[i]);
		free(old.keys);
		free(old.vals);
		*m = grown;
	}
	put_nogrow(m, key, val);
	return 1;
}

void lk__ptrmap_free(lk__ptrmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------------------------------ the walk */

/* ODE's bodies and joints lie where its allocator and joint groups put them, and a large pile's do not stay in
 * the cache from one pass over them to the next (a step reads each a few times: its count of rows, its rows,
 * its state): the passes ask for the object a few places ahead (a contact joint, its base and its dContact, is
 * about 400 bytes; a body about 500). A hint only: any address is safe. */
static inline void prefetch_object(const void *object, int bytes)
{
	for (int k = 0; k < bytes; k += 64)
		__builtin_prefetch((const char *)object + k);
}

/* *ptr reallocated to `bytes`; on failure 0, *ptr unchanged. */
static int grow_to(void **ptr, size_t bytes)
{
	void *q = realloc(*ptr, bytes);
	if (!q)
		return 0;
	*ptr = q;
	return 1;
}

static int grow_array(void **ptr, int *cap, int need, size_t elem)
{
	if (need <= *cap)
		return 1;
	int c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	if (!grow_to(ptr, (size_t)c * elem))
		return 0;
	*cap = c;
	return 1;
}

/* Body b, not gathered yet, appended with index ctx->nbodies. The walk's own fields are set and the forces
 * zeroed; the inertia and the saved accumulators are written by every read of the rows before anything
 * reads them (body_state, lk__ode_state_save). */
static lk_status append_body(lk_ode *ctx, dBodyID b, int parent)
{
	if (lk__ptrmap_put(&ctx->body_map, b, ctx->nbodies) < 0)
		return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "ode: out of memory for the body map");
	if (!grow_array((void **)&ctx->bodies, &ctx->cap_bodies, ctx->nbodies + 1, sizeof *ctx->bodies))
		return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "ode: out of memory for %d bodies", ctx->nbodies + 1);
	lk__ode_body *e = &ctx->bodies[ctx->nbodies++];
	e->id = b;
	e->parent = parent;
	e->was_disabled = !dBodyIsEnabled(b);
	e->kinematic = dBodyIsKinematic(b) != 0;
	memset(e->user_force, 0, sizeof e->user_force);
	memset(e->force, 0, sizeof e->force);
	if (e->was_disabled || dBodyGetAutoDisableFlag(b))
		ctx->need_islands = 1;
	return LK_OK;
}

/* The parts of a body's state ODE's steppers read, and whether each is finite (x - x is 0 for a finite x and
 * NaN otherwise: one sum a part instead of a test a number). */
static const char *body_fault(dBodyID b)
{
	const dReal *part[6] = {dBodyGetPosition(b), dBodyGetQuaternion(b), dBodyGetLinearVel(b),
	                        dBodyGetAngularVel(b), dBodyGetForce(b), dBodyGetTorque(b)};
	static const char *const name[6] = {"position", "orientation", "linear velocity", "angular velocity",
	                                    "force", "torque"};
	for (int i = 0; i < 6; ++i) {
		const dReal *v = part[i];
		double z = (v[0] - v[0]) + (v[1] - v[1]) + (v[2] - v[2]) + (i == 1 ? v[3] - v[3] : 0.0);
		if (z != 0.0)
			return name[i];
	}
	dMass m;
	dBodyGetMass(b, &m);
	double z = m.mass - m.mass;
	for (int k = 0; k < 12; ++k)
		z += (k & 3) == 3 ? 0.0 : m.I[k] - m.I[k];
	return z != 0.0 ? "mass" : NULL;
}

const char *lk__ode_body_fault(dBodyID b)
{
	return body_fault(b);
}

/* Body b frozen for this step (once): *index -1. */
static lk_status freeze(lk_ode *ctx, dBodyID b, int *index)
{
	if (index)
		*index = -1;
	if (lk__ptrmap_get(&ctx->frozen_map, b) >= 0)
		return LK_OK;
	if (lk__ptrmap_put(&ctx->frozen_map, b, ctx->nfrozen) < 0 ||
	    !grow_array((void **)&ctx->frozen, &ctx->cap_frozen, ctx->nfrozen + 1, sizeof *ctx->frozen))
		return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "ode: out of memory for the frozen bodies");
	ctx->frozen[ctx->nfrozen++] = b;
	return LK_OK;
}

/* Body b gathered (once), its index in *index (or NULL): most calls find it gathered already. A body the
 * step froze (lk__ode_freeze_faulty_bodies) is not: *index -1. */
static inline lk_status add_body(lk_ode *ctx, dBodyID b, int parent, int *index)
{
	const int at = lk__ptrmap_get(&ctx->body_map, b);
	if (at >= 0) {
		if (index)
			*index = at;
		return LK_OK;
	}
	if (ctx->nfrozen > 0 && lk__ptrmap_get(&ctx->frozen_map, b) >= 0) {
		if (index)
			*index = -1;
		return LK_OK;
	}
	if (index)
		*index = ctx->nbodies;
	return append_body(ctx, b, parent);
}

void lk__ode_thaw(lk_ode *ctx)
{
	if (ctx->nfrozen > 0 || !ctx->frozen_map.cap)
		lk__ptrmap_reserve(&ctx->frozen_map, 8);
	ctx->nfrozen = 0;
}

int lk__ode_freeze_faulty_bodies(lk_ode *ctx)
{
	int found = 0;
	for (int k = 0; k < ctx->nbodies; ++k)
		if (body_fault(ctx->bodies[k].id)) {
			if (freeze(ctx, ctx->bodies[k].id, NULL) != LK_OK)
				return found;
			++found;
		}
	return found;
}

static lk_status add_space_bodies(lk_ode *ctx, dSpaceID s, int depth)
{
	if (depth > 64)
		return lk__ode_fail(ctx, LK_ERR_LIMIT, "ode: spaces nested more than 64 deep");
	int n = dSpaceGetNumGeoms(s);
	/* dSpaceGetGeom is O(1) for consecutive indices (ODE caches the position) */
	for (int i = 0; i < n; ++i) {
		dGeomID g = dSpaceGetGeom(s, i);
		if (dGeomIsSpace(g)) {
			lk_status st = add_space_bodies(ctx, (dSpaceID)g, depth + 1);
			if (st != LK_OK)
				return st;
			continue;
		}
		dBodyID b = dGeomGetBody(g);
		if (b && dBodyIsEnabled(b)) {
			lk_status st = add_body(ctx, b, -1, NULL);
			if (st != LK_OK)
				return st;
		}
	}
	return LK_OK;
}

/* ODE's node order: node[0] is always a body; a joint attached as (0, b) reports its body as body 1. */
static void joint_nodes(dJointID j, dBodyID *b0, dBodyID *b1)
{
	*b0 = dJointGetBody(j, 0);
	*b1 = dJointGetBody(j, 1);
	if (!*b0) {
		*b0 = *b1;
		*b1 = NULL;
	}
}

/* The bodies ODE's island builder would step from these starting points: every enabled starting body and
 * everything reachable from it through enabled joints (dxJoint::isEnabled: not disabled and attached to at
 * least one dynamic body). Each joint is recorded once, from its node[0] body. The cost is linear in bodies
 * and joints: a body's joints are read in one pass over its list (lk__ode_next_joint) where the list's layout
 * was found (lk__ode_node_layout); by dBodyGetJoint, which walks the list from its head at every call, a body
 * with k joints costs k^2/2 steps (on a pile of boxes the gathering's largest part). */
lk_status lk__ode_gather(lk_ode *ctx)
{
	int last = ctx->nbodies;
	ctx->nbodies = 0;
	ctx->njoints = 0;
	ctx->need_islands = 0;
	ctx->nrows = ctx->nprows = ctx->nleft_out = 0; /* until the rows are read again */
	if (!lk__ptrmap_reserve(&ctx->body_map, (last > ctx->nreg ? last : ctx->nreg) + 64))
		return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "ode: out of memory for the body map");
	for (int i = 0; i < ctx->nspaces; ++i) {
		lk_status st = add_space_bodies(ctx, ctx->spaces[i], 0);
		if (st != LK_OK)
			return st;
	}
	for (int i = 0; i < ctx->nreg; ++i) {
		if (!dBodyIsEnabled(ctx->reg_bodies[i]))
			continue;
		lk_status st = add_body(ctx, ctx->reg_bodies[i], -1, NULL);
		if (st != LK_OK)
			return st;
	}
	lk__ode_node_layout(&ctx->abi);
	for (int k = 0; k < ctx->nbodies; ++k) {
		dBodyID b = ctx->bodies[k].id;
		dJointID j;
		lk__ode_joint_walk walk = lk__ode_walk_joints(&ctx->abi, b);
		while ((j = lk__ode_next_joint(&walk)) != NULL) {
			if (!dJointIsEnabled(j))
				continue;
			dBodyID b0, b1;
			joint_nodes(j, &b0, &b1);
			if (!b0 || b0 == b1)
				continue;
			dBodyID other = b0 == b ? b1 : b0;
			/* kinematic on both sides (or on its only side): no row moves anything; b is gathered, so
			 * ODE is asked only about the other side of a kinematic body's joint */
			if (ctx->bodies[k].kinematic && (!other || dBodyIsKinematic(other)))
				continue;
			int other_index = -1;
			if (other) {
				lk_status st = add_body(ctx, other, k, &other_index);
				if (st != LK_OK)
					return st;
				if (other_index < 0)
					continue; /* frozen: the joint is left out with it */
			}
			if (b0 != b)
				continue;
			int type = (int)dJointGetType(j);
			if (type <= 0 || type >= LK__ODE_JOINT_TYPES)
				return lk__ode_fail(ctx, LK_ERR_UNSUPPORTED, "ode: joint %p has unknown type %d",
				                    (void *)j, type);
			if (!grow_array((void **)&ctx->joints, &ctx->cap_joints, ctx->njoints + 1,
			                sizeof *ctx->joints))
				return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "ode: out of memory for %d joints",
				                    ctx->njoints + 1);
			lk__ode_joint *e = &ctx->joints[ctx->njoints++];
			memset(e, 0, sizeof *e);
			e->id = j;
			e->type = type;
			e->body[0] = k;
			e->body[1] = b1 ? other_index : -1;
			e->bid[0] = b;
			e->bid[1] = b1;
		}
	}
	return LK_OK;
}

/* ---------------------------------------------------------------------------------------- extraction */

/* The contact point from the contact's own rows. ODE writes a contact row along a unit direction l as
 * J1 = (l, r x l) with r = point - body position, so l x (r x l) = r - (r.l) l gives r across the normal n,
 * and a friction row t (t perpendicular to n) gives r.n = n . (t x (r x t)). Without friction rows the
 * point is the one nearest the body's centre on the contact normal line. */
static void contact_point(const lk_row_def *row, int m, const double *pos, double out[3])
{
	const double *n = row[0].J[0], *a = row[0].J[0] + 3;
	double r[3];
	dCalcVectorCross3(r, n, a);
	double nn = dCalcVectorDot3(n, n);
	if (nn > 0)
		for (int k = 0; k < 3; ++k)
			r[k] /= nn;
	if (m >= 2) {
		const double *t = row[1].J[0], *at = t + 3;
		if (fabs(dCalcVectorDot3(t, n)) < 1e-9 && nn > 0) {
			double v[3];
			dCalcVectorCross3(v, t, at);
			double tt = dCalcVectorDot3(t, t);
			double rn = tt > 0 ? dCalcVectorDot3(v, n) / tt : 0.0;
			for (int k = 0; k < 3; ++k)
				r[k] += rn * n[k] / nn;
		}
	}
	for (int k = 0; k < 3; ++k)
		out[k] = pos[k] + r[k];
}

static void joint_anchor(dJointID j, int type, dBodyID b0, double out[3])
{
	dVector3 a = {0, 0, 0, 0};
	switch (type) {
	case dJointTypeBall: dJointGetBallAnchor(j, a); break;
	case dJointTypeHinge: dJointGetHingeAnchor(j, a); break;
	case dJointTypeUniversal: dJointGetUniversalAnchor(j, a); break;
	case dJointTypeHinge2: dJointGetHinge2Anchor(j, a); break;
	case dJointTypePR: dJointGetPRAnchor(j, a); break;
	case dJointTypePU: dJointGetPUAnchor(j, a); break;
	case dJointTypePiston: dJointGetPistonAnchor(j, a); break;
	case dJointTypeDBall: dJointGetDBallAnchor1(j, a); break;
	case dJointTypeDHinge: dJointGetDHingeAnchor1(j, a); break;
	case dJointTypeTransmission: dJointGetTransmissionContactPoint1(j, a); break;
	default: {
		const dReal *p = dBodyGetPosition(b0);
		a[0] = p[0];
		a[1] = p[1];
		a[2] = p[2];
	} break;
	}
	for (int k = 0; k < 3; ++k)
		out[k] = isfinite(a[k]) ? a[k] : 0.0;
}

/* What a row is, for the orderings: bilateral rows are joint rows, one-sided rows (one bound 0, the other
 * infinite) limits, rows with finite force bounds motors (ODE's limot rows). */
static lk_row_kind row_kind(int type, int r, double lo, double hi, int findex)
{
	if (type == dJointTypeContact)
		return r == 0 ? LK_ROW_NORMAL : LK_ROW_FRICTION;
	if (findex >= 0)
		return LK_ROW_FRICTION;
	if (isinf(lo) && isinf(hi))
		return LK_ROW_JOINT;
	if ((lo == 0.0 && isinf(hi)) || (hi == 0.0 && isinf(lo)))
		return LK_ROW_LIMIT;
	return LK_ROW_MOTOR;
}

/* Twelve numbers (a row's J, a dMatrix3) set to zero by six stores of two: an inlined memset of these 96 bytes
 * becomes `rep stos`, whose start-up took a third of the joint walk's time on the ragdolls (`perf annotate`). */
static inline void zero12(double *x)
{
	typedef double pair __attribute__((vector_size(16)));
	const pair zero = {0, 0};
	memcpy(x, &zero, sizeof zero); /* six stores written out: a loop of them is made a memset again */
	memcpy(x + 2, &zero, sizeof zero);
	memcpy(x + 4, &zero, sizeof zero);
	memcpy(x + 6, &zero, sizeof zero);
	memcpy(x + 8, &zero, sizeof zero);
	memcpy(x + 10, &zero, sizeof zero);
}

/* R S R^T of a symmetric S (3 x 3, ODE's 3 x 4 layout: S[4 r + c]) into out (the same layout, its padding 0): the
 * upper triangle formed and mirrored, so that the result is symmetric to the bit */
static void rotate_symmetric(const dReal *restrict R, const double *restrict S, double *restrict out)
{
	double T[3][3]; /* S R^T */
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j)
			T[i][j] = S[4 * i] * R[4 * j] + S[4 * i + 1] * R[4 * j + 1] + S[4 * i + 2] * R[4 * j + 2];
	double o[3][3];
	for (int i = 0; i < 3; ++i)
		for (int j = i; j < 3; ++j)
			o[i][j] = R[4 * i] * T[0][j] + R[4 * i + 1] * T[1][j] + R[4 * i + 2] * T[2][j];
	out[0] = o[0][0], out[1] = o[0][1], out[2] = o[0][2], out[3] = 0.0;
	out[4] = o[0][1], out[5] = o[1][1], out[6] = o[1][2], out[7] = 0.0;
	out[8] = o[0][2], out[9] = o[1][2], out[10] = o[2][2], out[11] = 0.0;
}

/* The determinant of a 3 x 3 M (3 x 4 layout), as invert3 forms it */
static double det3(const double *M)
{
	return M[0] * (M[5] * M[10] - M[6] * M[9]) + M[1] * (M[6] * M[8] - M[4] * M[10]) +
	       M[2] * (M[4] * M[9] - M[5] * M[8]);
}

/* The inverse of a 3 x 3 M (3 x 4 layout) into out (the same layout) by its adjugate; 0 where det M = 0, as ODE's
 * dInvertMatrix3 */
static int invert3(const double *restrict M, double *restrict out)
{
	const double c00 = M[5] * M[10] - M[6] * M[9], c01 = M[6] * M[8] - M[4] * M[10], c02 = M[4] * M[9] - M[5] * M[8];
	const double det = M[0] * c00 + M[1] * c01 + M[2] * c02;
	if (det == 0.0)
		return 0;
	const double d = 1.0 / det;
	out[0] = c00 * d;
	out[1] = (M[2] * M[9] - M[1] * M[10]) * d;
	out[2] = (M[1] * M[6] - M[2] * M[5]) * d;
	out[4] = c01 * d;
	out[5] = (M[0] * M[10] - M[2] * M[8]) * d;
	out[6] = (M[2] * M[4] - M[0] * M[6]) * d;
	out[8] = c02 * d;
	out[9] = (M[1] * M[8] - M[0] * M[9]) * d;
	out[10] = (M[0] * M[5] - M[1] * M[4]) * d;
	out[3] = out[7] = out[11] = 0.0;
	return 1;
}

/* Inertia in the world frame and u* as ODE's quickstep forms them (stage 0 and 2b): gravity into the force, the
 * implicit gyroscopic torque of Lacoursiere 2006 ("Stabilizing gyroscopic forces in rigid multibody simulations")
 * when the body has it on, then u* = u + h M^-1 (f, tau). The same quantities as quickstep's, in fewer operations
 * (to rounding: tests/test_ode_rows.c): the body's inertia rotated once, as the symmetric matrix it is, and the
 * world's inverse inertia the inverse of that (quickstep rotates the body frame's inverse, and its gyroscopic
 * term rotates the inertia again: two rotations a body, where this makes one); the gyroscopic torque,
 * quickstep's (I M^-1 - 1) L / h with M = I - h [L]x, as L x (M^-1 L), since I - M = h [L]x: one solve instead
 * of an inverse and two products. */
static void body_state(lk_ode *ctx, lk__ode_body *e, double h, double u[6])
{
	dBodyID b = e->id;
	const dReal *R = dBodyGetRotation(b);
	const dReal *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b);
	const dReal *f = dBodyGetForce(b), *t = dBodyGetTorque(b);
	dMass mass;
	dBodyGetMass(b, &mass);
	_Static_assert(sizeof e->inv_inertia == 12 * sizeof(double), "a dMatrix3");
	double facc[3] = {f[0], f[1], f[2]}, tacc[3] = {t[0], t[1], t[2]};
	for (int k = 0; k < 3; ++k) {
		e->user_force[k] = f[k];
		e->user_force[3 + k] = t[k];
	}
	if (e->kinematic || !(mass.mass > 0)) {
		zero12(e->inv_inertia);
		e->inv_mass = 0.0;
		for (int k = 0; k < 3; ++k) {
			u[k] = v[k];
			u[3 + k] = w[k];
		}
		return;
	}
	e->inv_mass = 1.0 / mass.mass;
	double I[12];
	rotate_symmetric(R, mass.I, I);
	/* singular where the body's own inertia is (as quickstep's dInvertMatrix3 finds it): the rotated one's
	 * determinant is rounded, and would give a singular inertia an enormous inverse instead of none */
	if (det3(mass.I) == 0.0 || !invert3(I, e->inv_inertia))
		zero12(e->inv_inertia);
	if (dBodyGetGravityMode(b)) {
		dVector3 g;
		dWorldGetGravity(ctx->world, g);
		for (int k = 0; k < 3; ++k)
			facc[k] += mass.mass * g[k];
	}
	if (dBodyGetGyroscopicMode(b)) {
		double M[12], Mi[12];
		const double L[3] = {I[0] * w[0] + I[1] * w[1] + I[2] * w[2], I[4] * w[0] + I[5] * w[1] + I[6] * w[2],
		                     I[8] * w[0] + I[9] * w[1] + I[10] * w[2]};
		/* M = I - h [L]x */
		memcpy(M, I, sizeof M);
		M[1] += h * L[2];
		M[2] -= h * L[1];
		M[4] -= h * L[2];
		M[6] += h * L[0];
		M[8] += h * L[1];
		M[9] -= h * L[0];
		if (invert3(M, Mi)) {
			const double x[3] = {Mi[0] * L[0] + Mi[1] * L[1] + Mi[2] * L[2], Mi[4] * L[0] + Mi[5] * L[1] + Mi[6] * L[2],
			                     Mi[8] * L[0] + Mi[9] * L[1] + Mi[10] * L[2]};
			tacc[0] += L[1] * x[2] - L[2] * x[1];
			tacc[1] += L[2] * x[0] - L[0] * x[2];
			tacc[2] += L[0] * x[1] - L[1] * x[0];
		}
	}
	const double *Iw = e->inv_inertia;
	for (int k = 0; k < 3; ++k) {
		u[k] = v[k] + h * (facc[k] * e->inv_mass);
		u[3 + k] = w[k] + h * (Iw[4 * k] * tacc[0] + Iw[4 * k + 1] * tacc[1] + Iw[4 * k + 2] * tacc[2]);
	}
}

/* The reading of the rows (lk__ode_extract_rows): the step's constants, and for the contacts read on threads
 * their share and the first joint of each share whose rows were refused. */
typedef struct extract_args {
	lk_ode *ctx;
	double h, fps, erp, cfm;
	int points; /* whose points are made (LK__ODE_POINTS_*; the others 0, "unknown") */
	int tasks;
	int first_bad[LK_MAX_THREADS];
} extract_args;

/* Why a row made lcpkit's (extract_joint) cannot be solved, or NULL: a J that is not finite or is zero on
 * every side with a body (ODE 0.16's convex collider returns contacts with a zero normal; their friction
 * directions from dPlaneSpace are then NaN), a target or CFM that is not finite, a NaN bound. Such a row
 * moves nothing or cannot be solved, and rejecting the step for it would freeze the world. */
static const char *row_fault(const lk_row_def *d, int two)
{
	double z = (d->c - d->c) + (d->s - d->s), len = 0.0;
	for (int k = 0; k < 6; ++k) {
		z += d->J[0][k] - d->J[0][k];
		len += fabs(d->J[0][k]);
	}
	if (two)
		for (int k = 0; k < 6; ++k) {
			z += d->J[1][k] - d->J[1][k];
			len += fabs(d->J[1][k]);
		}
	if (z != 0.0)
		return isfinite(d->c) && isfinite(d->s) ? "J is not finite" : "its target or CFM is not finite";
	if (isnan(d->lo) || isnan(d->hi))
		return "a bound is NaN";
	return len == 0.0 ? "J is zero" : NULL;
}

const char *lk__ode_row_fault(const lk_ode *ctx, int g)
{
	if (g < 0 || g >= ctx->nrows || ctx->nleft_out == 0 || !ctx->left_out[g])
		return NULL;
	const int f = ctx->findex[g];
	const char *own = row_fault(&ctx->defs[g], ctx->joints[ctx->row_joint[g]].body[1] >= 0);
	return own ? own : f >= 0 && ctx->left_out[f] ? "its normal row is left out" : "left out";
}

/* getInfo2 writes a row's J1 and J2 (6 numbers each, rowskip apart), its (rhs, cfm) and (lo, hi) pairs (pairskip
 * apart): lk_row_def holds J[0], J[1], (c, s) and (lo, hi) in that shape, so ODE writes straight into the
 * definitions, one record apart. */
_Static_assert(sizeof(lk_row_def) % sizeof(double) == 0, "lk_row_def is a whole number of doubles");
_Static_assert(offsetof(lk_row_def, s) == offsetof(lk_row_def, c) + sizeof(double), "(c, s) is ODE's (rhs, cfm)");
_Static_assert(offsetof(lk_row_def, hi) == offsetof(lk_row_def, lo) + sizeof(double), "(lo, hi) is ODE's pair");
enum { DEF_SKIP = (int)(sizeof(lk_row_def) / sizeof(double)) };

/* Joint i's rows through its getInfo2 into their definitions, set up exactly as quickstep does before the call
 * (J zero, rhs 0, cfm the world's, bounds -/+ infinity, findex -1), then made lcpkit's (the conversion at the
 * top of this file): bodies, s = cfm / h, bounds times h or the friction coefficient, kind, id and point. A
 * friction row's findex stays ODE's (global) until the problem's order is known (lk__ode_extract_rows). Writes
 * only joint i's rows. A friction index out of the joint's rows is LK_ERR_FINDEX (with its message when
 * `say`). */
static lk_status extract_joint(const extract_args *ea, int i, int say)
{
	lk_ode *ctx = ea->ctx;
	lk__ode_joint *j = &ctx->joints[i];
	if (!j->m)
		return LK_OK;
	lk_row_def *def = ctx->defs + j->row0;
	int *fi = ctx->findex + j->row0;
	for (int r = 0; r < j->m; ++r) {
		lk_row_def *d = &def[r];
		zero12(&d->J[0][0]);
		d->c = 0.0;
		d->s = ea->cfm;
		d->lo = -dInfinity;
		d->hi = dInfinity;
		fi[r] = -1;
	}
	ctx->abi.info2[j->type](j->id, ea->fps, ea->erp, DEF_SKIP, def->J[0], def->J[1], DEF_SKIP, &def->c, &def->lo,
	                        fi);
	dBodyID b0 = ctx->bodies[j->body[0]].id;
	double anchor[3] = {0, 0, 0};
	if (ea->points != LK__ODE_POINTS_NONE && j->type == dJointTypeContact)
		contact_point(def, j->m, dBodyGetPosition(b0), anchor);
	else if (ea->points == LK__ODE_POINTS_ALL)
		joint_anchor(j->id, j->type, b0, anchor);
	const double h = ea->h;
	for (int r = 0; r < j->m; ++r) {
		const int g = j->row0 + r;
		lk_row_def *d = &def[r];
		/* ODE's findex is relative to the joint's first row (quickstep adds the offset) */
		if (fi[r] != -1) {
			if (fi[r] < 0 || fi[r] >= j->m || fi[r] == r)
				return say ? lk__ode_fail(ctx, LK_ERR_FINDEX, "ode: %s row %d has findex %d",
				                          lk__ode_joint_class(j->type), r, fi[r])
				           : LK_ERR_FINDEX;
			fi[r] += j->row0;
		}
		ctx->row_joint[g] = i;
		d->kind = row_kind(j->type, r, d->lo, d->hi, fi[r]);
		memcpy(d->point, anchor, sizeof anchor);
		d->body[0] = j->body[0];
		d->body[1] = j->body[1] >= 0 ? j->body[1] : LK_STATIC;
		if (j->body[1] < 0)
			memset(d->J[1], 0, sizeof d->J[1]);
		d->s /= h;
		d->mu = 0.0;
		if (fi[r] >= 0 && isfinite(d->hi)) {
			d->mu = fabs(d->hi);
			d->lo = -d->mu;
			d->hi = d->mu;
			d->findex = fi[r];
		} else {
			/* an infinite friction coefficient bounds nothing */
			d->findex = -1;
			d->lo = isinf(d->lo) ? d->lo : h * d->lo;
			d->hi = isinf(d->hi) ? d->hi : h * d->hi;
		}
		d->id = ((uint64_t)(uintptr_t)j->id << 3) | (uint64_t)r;
	}
	return LK_OK;
}

/* The target of a contact's normal row at rest inside ODE's surface layer (lk_ode_def.sink_to_layer). ODE's
 * contact row asks for k (depth - layer) of separating velocity, k = fps erp, and for nothing (c = 0) while
 * the depth is under the layer: there the bodies stay at whatever depth an exact solve leaves them, which for
 * a contact made at rest is 0, the depth at which ODE's colliders make a contact in one step and not in the
 * next. A box of a stack then stands on three corners and rocks: ODE's own exact stepper (dWorldStep) drops the
 * 20-box stack in a third of a second, and quickstep is spared only by its error, which sinks the bodies into
 * the layer. Here a row shallower than half the layer asks for k (depth - layer / 2), which is negative: the
 * body may sink at the rate the contact's error reduction would push it out, to half the layer, where a tilt
 * of a box by half a millimetre across still leaves every corner in contact. Between half the layer and the
 * layer the row stays ODE's, asking for nothing: a target on both sides of one depth kept every contact of a
 * brick wall pushing and pulling, and the wall shook. The target is made of the row's own targets at the
 * layers 0 and -layer (k depth and k (depth + layer)). Where the contact joint's dContact can be read
 * (lk__ode_contact_layout) they are ODE's formula on its depth (lk__ode_contact_target), the same numbers to
 * the bit (with a bounce too: lk__ode_resting_target_known); otherwise, and for a contact with a normal motion,
 * the row's generator gives them, read again with the world's layer set to 0 and to -layer
 * (dxJointContact::getInfo2 reads the layer from the world at each call): two more calls a resting contact,
 * which on a resting stack cost as much as the rest of the rows' reading. A row capped by the world's
 * largest correcting velocity is left as ODE made it. Runs on one thread, after the parallel read. */
static void sink_target(lk_row_def *normal, double at0, double at1, double maxvel)
{
	/* k depth and k (depth + layer): the target k (depth - layer / 2) under half the layer, where neither was
	 * capped */
	if (at1 > at0 && at1 < maxvel && at0 >= 0.0)
		normal->c = fmin(0.0, at0 - 0.5 * (at1 - at0));
}

static void sink_to_layer(lk_ode *ctx, const extract_args *ea)
{
	const double layer = dWorldGetContactSurfaceLayer(ctx->world);
	const double maxvel = dWorldGetContactMaxCorrectingVel(ctx->world);
	if (!(layer > 0.0) || !isfinite(layer) || !grow_array((void **)&ctx->sink_at, &ctx->cap_sink_at,
	                                                        ctx->njoints > 0 ? ctx->njoints : 1, sizeof(double)))
		return;
	/* the resting contacts: their targets made from the read depth where they can be, the others marked for
	 * their generator (sink_at 0; NaN: nothing to do) */
	const int direct = lk__ode_contact_layout(&ctx->abi);
	int generated = 0;
	for (int i = 0; i < ctx->njoints; ++i) {
		const lk__ode_joint *j = &ctx->joints[i];
		lk_row_def *normal = &ctx->defs[j->row0];
		ctx->sink_at[i] = NAN;
		if (j->type != dJointTypeContact || !j->m || normal->c != 0.0)
			continue;
		if (direct) {
			dContact k;
			lk__ode_contact_of(&ctx->abi, j->id, &k);
			if (lk__ode_resting_target_known(&k, ea->fps, ea->erp)) {
				sink_target(normal, lk__ode_contact_target(&k, ea->fps, ea->erp, 0.0, maxvel),
				            lk__ode_contact_target(&k, ea->fps, ea->erp, -layer, maxvel), maxvel);
				continue;
			}
		}
		ctx->sink_at[i] = 0.0;
		++generated;
	}
	if (!generated)
		return;
	/* two passes over the contacts marked, the world's layer set once for each: 0, then -layer */
	for (int k = 0; k < 2; ++k) {
		dWorldSetContactSurfaceLayer(ctx->world, k ? -layer : 0.0);
		for (int i = 0; i < ctx->njoints; ++i) {
			if (isnan(ctx->sink_at[i]))
				continue;
			const lk__ode_joint *j = &ctx->joints[i];
			const double at = lk__ode_generated_target(&ctx->abi, j->id, ea->fps, ea->erp);
			if (k == 0)
				ctx->sink_at[i] = at;
			else
				sink_target(&ctx->defs[j->row0], ctx->sink_at[i], at, maxvel);
		}
	}
	dWorldSetContactSurfaceLayer(ctx->world, layer);
}

/* Tasks of the reading (lk_problem_run_tasks): the solver's threads for a problem of LK_PARALLEL_MIN_ROWS rows
 * and more, which the solve sweeps on them, else one task on the caller; and task t's share of n items. */
static int read_tasks(int threads, int rows)
{
	return threads > 1 && rows >= LK_PARALLEL_MIN_ROWS ? threads : 1;
}

static void task_share(int n, int t, int tasks, int *b, int *e)
{
	*b = (int)((int64_t)n * t / tasks);
	*e = (int)((int64_t)n * (t + 1) / tasks);
}

/* Task t's share of the contact joints: ODE's contact joint reads its rows without writing anything
 * (keeps_state below), so contacts are read at once on several threads; a refused one is noted and read again
 * alone for its message. */
static void extract_contacts(void *arg, int t)
{
	extract_args *ea = arg;
	int b, e;
	task_share(ea->ctx->njoints, t, ea->tasks, &b, &e);
	for (int i = b; i < e; ++i) {
		if (i + 4 < e)
			prefetch_object(ea->ctx->joints[i + 4].id, 448);
		if (ea->ctx->joints[i].type == dJointTypeContact && extract_joint(ea, i, 0) != LK_OK) {
			ea->first_bad[t] = i;
			return;
		}
	}
}

/* lk_body_fill_fn: body k's definition (body_state), which writes only that body's own fields, so that the
 * bodies are made on the solver's threads. */
typedef struct body_args {
	lk_ode *ctx;
	double h;
} body_args;

static lk_status body_def_of(void *arg, int k, lk_body_def *d)
{
	const body_args *ba = arg;
	if (k + 4 < ba->ctx->nbodies)
		prefetch_object(ba->ctx->bodies[k + 4].id, 512);
	lk__ode_body *body = &ba->ctx->bodies[k];
	body_state(ba->ctx, body, ba->h, d->u);
	for (int r = 0; r < 3; ++r) {
		d->inv_mass[r] = body->inv_mass;
		for (int c = 0; c < 3; ++c)
			d->inv_inertia[3 * r + c] = body->inv_inertia[4 * r + c];
	}
	return LK_OK;
}

/* The problem's order of the extracted rows (prow, problem_row_of) and the friction rows' findex in it: ODE's
 * quickstep order, the rows without a friction index first, the friction rows after, each group in joint
 * order; so a friction row's normal is always updated before it in a sweep, and is numbered when the friction
 * row's findex is made the problem's. `screened`: the rows left_out marks are not in it, nor is a friction row
 * whose normal is, and nleft_out counts them; the rest of the world is solved without them. */
static void order_rows(lk_ode *ctx, int screened)
{
	const int total = ctx->nrows;
	const int *findex = ctx->findex;
	int *prow = ctx->prow, *row_of = ctx->problem_row_of;
	unsigned char *out = ctx->left_out;
	lk_row_def *defs = ctx->defs;
	int k = 0, left = 0, first = -1;
	memset(ctx->rows_by_kind, 0, sizeof ctx->rows_by_kind);
	for (int pass = 0; pass < 2; ++pass)
		for (int g = 0; g < total; ++g)
			if ((findex[g] >= 0) == pass) {
				if (screened && (out[g] || (pass && out[findex[g]]))) {
					out[g] = 1;
					row_of[g] = -1;
					if (left++ == 0 || g < first)
						first = g;
					continue;
				}
				prow[k] = g;
				row_of[g] = k++;
				if (defs[g].findex >= 0)
					defs[g].findex = row_of[findex[g]];
				ctx->rows_by_kind[defs[g].kind]++;
			}
	ctx->nprows = k;
	ctx->nleft_out = left;
	ctx->first_left_out = first;
}

/* Every joint's rows through ODE's own getInfo1/getInfo2, set up exactly as quickstep does before the call
 * (J zero, rhs 0, cfm the world's, bounds -/+ infinity, findex -1). Bodies' u* are read after the rows,
 * as quickstep does, because a row generator may touch the force accumulators. */
lk_status lk__ode_extract_rows(lk_ode *ctx, double h, int threads, int points)
{
	if (ctx->njoints > 0 && !lk__ode_world_ready(&ctx->abi, ctx->world, h))
		return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "ode: out of memory for the world's processing context, "
		                    "which ODE's row generators need");
	int total = 0;
	for (int i = 0; i < ctx->njoints; ++i) {
		if (i + 4 < ctx->njoints)
			prefetch_object(ctx->joints[i + 4].id, 448);
		lk__ode_joint *j = &ctx->joints[i];
		lk__ode_info1 info = {0, 0};
		ctx->abi.info1[j->type](j->id, &info);
		if (info.m > LK__ODE_MAX_M)
			return lk__ode_fail(ctx, LK_ERR_UNSUPPORTED, "ode: %s reports %d rows (more than 6)",
			                    lk__ode_joint_class(j->type), info.m);
		j->m = info.m;
		j->row0 = total;
		j->feedback = dJointGetFeedback(j->id);
		j->temp_feedback = 0;
		total += info.m;
	}
	int ok = grow_array((void **)&ctx->defs, &ctx->cap_rows, total > 0 ? total : 1, sizeof *ctx->defs);
	/* the per-row arrays follow the capacity of defs, reallocated only when it grew (a realloc of the same size
	 * each read is not free on a tiny scene); one that fails keeps the old and the arrays' capacity, so that the
	 * next read tries again */
	const int cap = ctx->cap_rows;
	if (ok && cap > ctx->cap_row_arrays) {
		const size_t n = (size_t)cap;
		ok = grow_to((void **)&ctx->findex, n * sizeof(int)) && grow_to((void **)&ctx->row_joint, n * sizeof(int)) &&
		     grow_to((void **)&ctx->left_out, n) && grow_to((void **)&ctx->lambda, n * sizeof(double) + 8) &&
		     grow_to((void **)&ctx->plambda, n * sizeof(double) + 8) && grow_to((void **)&ctx->prow, n * sizeof(int)) &&
		     grow_to((void **)&ctx->problem_row_of, n * sizeof(int));
		if (ok)
			ctx->cap_row_arrays = cap;
	}
	if (!ok)
		return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "ode: out of memory for %d rows", total);
	ctx->nrows = total;

	const extract_args ea = {ctx, h, 1.0 / h, dWorldGetERP(ctx->world), dWorldGetCFM(ctx->world), points, 1, {0}};
	/* the joints with state or side effects one after the other, in joint order, as quickstep reads them;
	 * then the contacts, on the solver's threads for a problem that the threads sweep */
	for (int i = 0; i < ctx->njoints; ++i)
		if (ctx->joints[i].type != dJointTypeContact) {
			lk_status st = extract_joint(&ea, i, 1);
			if (st != LK_OK)
				return st;
		}
	extract_args par = ea;
	par.tasks = read_tasks(threads, total);
	for (int t = 0; t < par.tasks; ++t)
		par.first_bad[t] = ctx->njoints;
	lk_problem_run_tasks(ctx->problem, threads, par.tasks, extract_contacts, &par);
	int bad = ctx->njoints;
	for (int t = 0; t < par.tasks; ++t)
		bad = par.first_bad[t] < bad ? par.first_bad[t] : bad;
	if (bad < ctx->njoints)
		return extract_joint(&ea, bad, 1); /* again, alone, for its message (a contact's read changes nothing) */
	if (ctx->sink_to_layer)
		sink_to_layer(ctx, &ea);
	ctx->nleft_out = 0;
	order_rows(ctx, 0);
	return LK_OK;
}

int lk__ode_leave_out_faulty_rows(lk_ode *ctx)
{
	for (int g = 0; g < ctx->nrows; ++g)
		ctx->left_out[g] = row_fault(&ctx->defs[g], ctx->joints[ctx->row_joint[g]].body[1] >= 0) != NULL;
	order_rows(ctx, 1);
	return ctx->nleft_out;
}

/* ----------------------------------------------------------------------------------- passive reads */

/* What ODE 0.16's row generators change besides the rows:
 *  - dxJointLimitMotor::addLimot and addTwoPointLimot add the motor force of a powered joint at its limit
 *    to the bodies' accumulators (dBodyAddForce / dBodyAddTorque) inside getInfo2, so that a second read
 *    in one step applies it twice;
 *  - dxJointTransmission::getInfo2 advances its phase estimate and contact points (and on its first call
 *    fixes its reference frames and ratio), so a second read moves the phase on;
 *  - getInfo1 of the joints with limits records which limit is active (recomputed by every getInfo1).
 * The accumulators are kept per body; the joints are kept whole, as bytes (dxJoint<Type>::size() says how
 * many): a read only ever writes into the joint object itself, so putting its bytes back is exact for every
 * joint type without knowing its fields. */
/* Whether reading a joint's rows can leave it other than a second read finds it, so that its bytes are
 * saved: only the transmission joint. The others' getInfo1 and getInfo2 (ode/src/joints, 0.16) write
 * nothing of their own but what every getInfo1 recomputes from the bodies and the joint's parameters: the
 * row count, which limit is active and by how much (dxJointLimitMotor::limit, limit_err), the Euler angles
 * of an Euler-mode angular motor, a 2D-plane joint's motor row numbers, a contact's friction coefficients
 * clamped at 0. Copying the others' objects, a few hundred bytes each all over ODE's joint memory, was a
 * third of the plugin's cache misses in reading a pile's rows, and 4.2 M of the 311 M instructions of a
 * ragdolls step (docs/benchmarks.md). tests/test_ode_joints.c, which steps a scene of every joint type,
 * checks that ODE's own steppers after the plugin's read still give ODE's trajectory bit for bit. */
static int keeps_state(const lk__ode_joint *j)
{
	return j->type == dJointTypeTransmission;
}

lk_status lk__ode_state_save(lk_ode *ctx)
{
	size_t need = 0;
	for (int i = 0; i < ctx->njoints; ++i)
		if (keeps_state(&ctx->joints[i]))
			need += ctx->abi.size[ctx->joints[i].type](ctx->joints[i].id);
	if (need > ctx->cap_joint_bytes) {
		/* grown by half again, so that a scene whose joints grow does not copy the buffer every step */
		const size_t cap = need + need / 2;
		unsigned char *b = realloc(ctx->joint_bytes, cap);
		if (!b)
			return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "ode: out of memory for %zu bytes of joint state", need);
		ctx->joint_bytes = b;
		ctx->cap_joint_bytes = cap;
	}
	size_t at = 0;
	for (int i = 0; i < ctx->njoints; ++i) {
		if (!keeps_state(&ctx->joints[i]))
			continue;
		size_t n = ctx->abi.size[ctx->joints[i].type](ctx->joints[i].id);
		memcpy(ctx->joint_bytes + at, (const void *)ctx->joints[i].id, n);
		at += n;
	}
	ctx->state_saved = 1;
	for (int i = 0; i < ctx->nbodies; ++i) {
		lk__ode_body *e = &ctx->bodies[i];
		const dReal *f = dBodyGetForce(e->id), *t = dBodyGetTorque(e->id);
		for (int k = 0; k < 3; ++k) {
			e->saved_force[k] = f[k];
			e->saved_force[3 + k] = t[k];
		}
	}
	return LK_OK;
}

void lk__ode_state_restore(lk_ode *ctx)
{
	if (!ctx->state_saved)
		return;
	ctx->state_saved = 0;
	size_t at = 0;
	for (int i = 0; i < ctx->njoints; ++i) {
		if (!keeps_state(&ctx->joints[i]))
			continue;
		size_t n = ctx->abi.size[ctx->joints[i].type](ctx->joints[i].id);
		memcpy((void *)ctx->joints[i].id, ctx->joint_bytes + at, n);
		at += n;
	}
	for (int i = 0; i < ctx->nbodies; ++i) {
		const lk__ode_body *e = &ctx->bodies[i];
		dBodySetForce(e->id, e->saved_force[0], e->saved_force[1], e->saved_force[2]);
		dBodySetTorque(e->id, e->saved_force[3], e->saved_force[4], e->saved_force[5]);
	}
}

void lk__ode_count_kinds(const lk_ode *ctx, lk_engine_step_stats *st)
{
	memcpy(st->rows_by_kind, ctx->rows_by_kind, sizeof st->rows_by_kind);
	st->rows = ctx->nprows;
	st->bodies = ctx->nbodies;
	st->rows_left_out = ctx->nleft_out;
	st->bodies_frozen = ctx->nfrozen;
}

lk_status lk__ode_build_problem(lk_ode *ctx, double h, lk_problem *p, const double *lambda0, int threads)
{
	lk_problem_clear(p);
	lk_status st = lk_problem_reserve(p, ctx->nbodies, ctx->nprows);
	if (st != LK_OK)
		return lk__ode_fail(ctx, st, "ode: %s", lk_problem_error(p));
	/* the bodies' states, on the solver's threads for LK_PARALLEL_MIN_BODIES bodies and more */
	body_args ba = {ctx, h};
	int refused = -1;
	st = lk_problem_add_bodies(p, ctx->nbodies, body_def_of, &ba, threads, &refused);
	if (st != LK_OK)
		return lk__ode_fail(ctx, st, "ode: body %p rejected (%s)",
		                    refused >= 0 ? (void *)ctx->bodies[refused].id : NULL, lk_problem_error(p));
	/* problem row k is extraction row prow[k], read in place; when rows are left out, the problem's rows are
	 * copied out in its order first (add_row_array reads a permutation of its rows) */
	const lk_row_def *defs = ctx->defs;
	const int *order = ctx->prow;
	if (ctx->nleft_out > 0) {
		if (!grow_array((void **)&ctx->kept_defs, &ctx->cap_kept, ctx->nprows, sizeof *ctx->kept_defs))
			return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "ode: out of memory for %d rows", ctx->nprows);
		for (int k = 0; k < ctx->nprows; ++k)
			ctx->kept_defs[k] = ctx->defs[ctx->prow[k]];
		defs = ctx->kept_defs;
		order = NULL;
	}
	st = lk_problem_add_row_array(p, ctx->nprows, defs, order, threads, &refused);
	if (st != LK_OK && refused < 0)
		return lk__ode_fail(ctx, st, "ode: %s", lk_problem_error(p));
	if (st != LK_OK) {
		const int g = ctx->prow[refused];
		const lk__ode_joint *j = &ctx->joints[ctx->row_joint[g]];
		return lk__ode_fail(ctx, st, "ode: %s %p row %d rejected (problem %s)", lk__ode_joint_class(j->type),
		                    (void *)j->id, g - j->row0, lk_problem_error(p));
	}
	/* the rows start at lambda = 0 (lk_problem_add_row): a cold start has nothing to set */
	if (ctx->nprows > 0 && lambda0) {
		for (int k = 0; k < ctx->nprows; ++k)
			ctx->plambda[k] = lambda0[ctx->prow[k]];
		st = lk_problem_set_lambda(p, ctx->plambda, ctx->nprows);
		if (st != LK_OK)
			return lk__ode_fail(ctx, st, "ode: warm start: %s", lk_problem_error(p));
	}
	return LK_OK;
}

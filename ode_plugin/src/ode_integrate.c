/* The step after the solve: the constraint forces and ODE's own integration of them.
 *
 * Every body gets the force and torque (J^T lambda) / h; the joints that were solved are switched off for one
 * call of ODE's dWorldQuickStep, which then integrates u + h M^-1 (f + J^T lambda / h) = u* + M^-1 J^T lambda
 * with everything ODE does around it (gravity, gyroscopic term, damping, maximum angular speed, finite
 * rotation, auto-disable), and are switched on again. When bodies can sleep, null joints (no rows) along a
 * spanning forest of the solved joints keep ODE's islands, so ODE wakes and puts to sleep whole islands as it
 * would with the real joints. */
#include "ode_internal.h"

#include <stdlib.h>
#include <string.h>

/* Joint j switched off for a call of ODE's stepper (lk__ode_hold_out), if it is on. */
static void hold_joint(lk_ode *ctx, dJointID j)
{
	if (!dJointIsEnabled(j))
		return;
	if (ctx->nheld == ctx->cap_held) {
		int c = ctx->cap_held ? 2 * ctx->cap_held : 16;
		dJointID *h = realloc(ctx->held_joints, (size_t)c * sizeof *h);
		if (!h)
			return; /* without memory to remember it, it stays on: ODE meets it as ODE would */
		ctx->held_joints = h;
		ctx->cap_held = c;
	}
	dJointDisable(j);
	ctx->held_joints[ctx->nheld++] = j;
}

/* What the step left out, switched off around a call of ODE's stepper, which would assert on it: the frozen
 * bodies with their joints (an enabled joint would also wake a switched-off body that it ties to an awake
 * one), and the joints with a row left out; switched on again after (lk__ode_release_out). */
void lk__ode_hold_out(lk_ode *ctx)
{
	ctx->nheld = ctx->nheld_bodies = 0;
	for (int g = 0; g < ctx->nrows && ctx->nleft_out > 0; ++g)
		if (ctx->left_out[g])
			hold_joint(ctx, ctx->joints[ctx->row_joint[g]].id);
	if (ctx->nfrozen == 0)
		return;
	unsigned char *en = realloc(ctx->held_enabled, (size_t)ctx->nfrozen);
	if (!en)
		return;
	ctx->held_enabled = en;
	for (int i = 0; i < ctx->nfrozen; ++i) {
		dBodyID b = ctx->frozen[i];
		dJointID j;
		lk__ode_joint_walk walk = lk__ode_walk_joints(&ctx->abi, b);
		while ((j = lk__ode_next_joint(&walk)) != NULL)
			hold_joint(ctx, j);
		en[i] = dBodyIsEnabled(b) != 0;
		dBodyDisable(b);
		ctx->nheld_bodies = i + 1;
	}
}

void lk__ode_release_out(lk_ode *ctx)
{
	for (int k = 0; k < ctx->nheld; ++k)
		dJointEnable(ctx->held_joints[k]);
	for (int i = 0; i < ctx->nheld_bodies; ++i)
		if (ctx->held_enabled[i])
			dBodyEnable(ctx->frozen[i]);
	ctx->nheld = ctx->nheld_bodies = 0;
}

/* The constraint forces J^T lambda / h into the bodies' accumulators, for ODE's stepper to integrate. */
static void add_body_forces(lk_ode *ctx, double inv_h)
{
	for (int i = 0; i < ctx->nbodies; ++i)
		memset(ctx->bodies[i].force, 0, sizeof ctx->bodies[i].force);
	for (int g = 0; g < ctx->nrows; ++g) {
		if (ctx->nleft_out > 0 && ctx->left_out[g])
			continue; /* its J may not be finite */
		const lk__ode_joint *j = &ctx->joints[ctx->row_joint[g]];
		const lk_row_def *x = &ctx->defs[g];
		double f = ctx->lambda[g] * inv_h;
		double *F0 = ctx->bodies[j->body[0]].force;
		for (int k = 0; k < 6; ++k)
			F0[k] += x->J[0][k] * f;
		if (j->body[1] >= 0) {
			double *F1 = ctx->bodies[j->body[1]].force;
			for (int k = 0; k < 6; ++k)
				F1[k] += x->J[1][k] * f;
		}
	}
	for (int i = 0; i < ctx->nbodies; ++i) {
		const lk__ode_body *e = &ctx->bodies[i];
		if (e->kinematic)
			continue;
		dBodyAddForce(e->id, e->force[0], e->force[1], e->force[2]);
		dBodyAddTorque(e->id, e->force[3], e->force[4], e->force[5]);
	}
}

/* The constraint forces J^T lambda / h: into the bodies' accumulators when ODE's stepper integrates them
 * (to_bodies), and into the joints' dJointFeedback either way. */
void lk__ode_apply_forces(lk_ode *ctx, double h, int to_bodies)
{
	const double inv_h = 1.0 / h;
	if (to_bodies)
		add_body_forces(ctx, inv_h);
	/* ODE's dJointFeedback holds forces: J_k^T lambda / h for each side */
	for (int i = 0; i < ctx->njoints; ++i) {
		const lk__ode_joint *j = &ctx->joints[i];
		if (!j->m || !j->feedback)
			continue;
		double s[12] = {0};
		for (int r = 0; r < j->m; ++r) {
			if (ctx->nleft_out > 0 && ctx->left_out[j->row0 + r])
				continue;
			const double *x = ctx->defs[j->row0 + r].J[0]; /* J[0] and J[1], 12 numbers */
			double f = ctx->lambda[j->row0 + r] * inv_h;
			for (int k = 0; k < 12; ++k)
				s[k] += x[k] * f;
		}
		dJointFeedback *fb = j->feedback;
		for (int k = 0; k < 3; ++k) {
			fb->f1[k] = s[k];
			fb->t1[k] = s[3 + k];
		}
		if (j->body[1] >= 0)
			for (int k = 0; k < 3; ++k) {
				fb->f2[k] = s[6 + k];
				fb->t2[k] = s[9 + k];
			}
	}
}

/* ODE's dWorldQuickStep called to integrate (lcpkit's rows are off for it): its islands one after the other.
 * On a multi-threaded implementation that the application gave its world, ODE steps islands in parallel, and
 * the order in which their geoms move (dGeomMoved puts a moved geom at the front of its space's list), and with
 * it the next step's contacts and rows, would follow the threads: a world with sleeping bodies ended elsewhere
 * run after run. One at a time they move in ODE's island order. */
static int integrating_quickstep(lk_ode *ctx, double h)
{
	const unsigned was = dWorldGetStepIslandsProcessingMaxThreadCount(ctx->world);
	if (was != 1)
		dWorldSetStepIslandsProcessingMaxThreadCount(ctx->world, 1);
	const int ok = ctx->abi.quickstep(ctx->world, h);
	if (was != 1)
		dWorldSetStepIslandsProcessingMaxThreadCount(ctx->world, was);
	return ok;
}

static int uf_root(lk__ode_body *b, int i)
{
	while (b[i].parent != i) {
		b[i].parent = b[b[i].parent].parent;
		i = b[i].parent;
	}
	return i;
}

/* ODE's islands without the solved joints: one null joint (no rows) per edge of a spanning forest of the
 * solved joints' body graph, so that ODE wakes and puts to sleep the same islands it would with them. */
static void keep_islands(lk_ode *ctx)
{
	lk__ode_body *b = ctx->bodies;
	for (int i = 0; i < ctx->nbodies; ++i)
		b[i].parent = i;
	for (int i = 0; i < ctx->njoints; ++i) {
		const lk__ode_joint *j = &ctx->joints[i];
		if (!j->m || j->body[1] < 0)
			continue;
		int r0 = uf_root(b, j->body[0]), r1 = uf_root(b, j->body[1]);
		if (r0 == r1)
			continue;
		b[r1].parent = r0;
		dJointID nj = dJointCreateNull(ctx->world, ctx->island_group);
		dJointAttach(nj, b[j->body[0]].id, b[j->body[1]].id);
	}
}

/* What ODE's quickstep does to each body of an island at the end of its step (quickstep.cpp, stages 6a and
 * 6b): the velocity becomes u + h M^-1 (f + J^T lambda / h), which is lcpkit's u* + M^-1 J^T lambda, then its
 * own dxStepBody moves the body (position, orientation, its geoms, the moved callback, damping, the angular
 * speed cap) and the accumulators are cleared. Run on the gathered bodies directly, this costs a fraction of
 * a dWorldQuickStep with the solved joints switched off, which treats every body as an island of its own
 * (callgrind, 3,000-box pile: 2,200 instructions a body). Only for a step without auto-disabling and
 * disabled bodies (need_islands 0), whose bookkeeping is ODE's. Bodies the plugin did not gather (no geom
 * in a registered space, no joint to a gathered body, not registered) are still stepped by
 * dWorldQuickStep, with the gathered ones switched off for its call. */
static int integrate_gathered(lk_ode *ctx, double h)
{
	/* in reverse: dGeomMoved puts a moved geom at the front of its space's list, so this keeps the list, and
	 * with it the order of the next step's contacts and rows, as it was; in gather order it would reverse
	 * every step, and a cold-started PGS on rows in alternating orders jitters (a heap of 48 boxes, median
	 * kinetic energy from 4 to 10 s: 0.078 J in gather order, 0.0038 J in reverse, 0.0093 J through ODE's
	 * stepper) */
	for (int i = ctx->nbodies - 1; i >= 0; --i) {
		const lk__ode_body *e = &ctx->bodies[i];
		const lk_body_def *d = lk_problem_body(ctx->problem, i);
		double du[6];
		if (lk_problem_delta_velocity(ctx->problem, i, du) != LK_OK)
			memset(du, 0, sizeof du);
		dBodySetLinearVel(e->id, d->u[0] + du[0], d->u[1] + du[1], d->u[2] + du[2]);
		dBodySetAngularVel(e->id, d->u[3] + du[3], d->u[4] + du[4], d->u[5] + du[5]);
		ctx->abi.step_body(e->id, h);
		dBodySetForce(e->id, 0, 0, 0);
		dBodySetTorque(e->id, 0, 0, 0);
	}
	/* the rest of the world, unless the application says there is none (lk_ode_def.whole_world): ODE's stepper
	 * with the gathered bodies and the solved joints switched off */
	if (ctx->def.whole_world)
		return 1;
	for (int i = 0; i < ctx->nbodies; ++i)
		dBodyDisable(ctx->bodies[i].id);
	for (int i = 0; i < ctx->njoints; ++i)
		if (ctx->joints[i].m)
			dJointDisable(ctx->joints[i].id);
	lk__ode_hold_out(ctx);
	const int ok = integrating_quickstep(ctx, h);
	lk__ode_release_out(ctx);
	for (int i = 0; i < ctx->njoints; ++i)
		if (ctx->joints[i].m)
			dJointEnable(ctx->joints[i].id);
	for (int i = 0; i < ctx->nbodies; ++i)
		dBodyEnable(ctx->bodies[i].id);
	/* the gathered bodies have moved whatever happened to the others */
	if (!ok)
		lk__ode_note(ctx, "ode: ODE's dWorldQuickStep could not step the bodies outside lcpkit's registered "
		                  "spaces (out of memory for its working memory); they did not move this step");
	return 1;
}

/* Whether the step integrates the gathered bodies itself (integrate_gathered): without auto-disabling and
 * disabled bodies, and with the world's processing context, which dxStepBody locks (the read of the rows made
 * sure of it when there were joints). */
int lk__ode_integrates_directly(lk_ode *ctx, double h)
{
	return !ctx->need_islands && (ctx->njoints > 0 || lk__ode_world_ready(&ctx->abi, ctx->world, h));
}

/* 0 when ODE's stepper failed (no memory); then nothing moved and the accumulators are the application's. */
int lk__ode_integrate(lk_ode *ctx, double h, int directly)
{
	if (directly)
		return integrate_gathered(ctx, h);
	if (ctx->need_islands)
		keep_islands(ctx);
	for (int i = 0; i < ctx->njoints; ++i)
		if (ctx->joints[i].m)
			dJointDisable(ctx->joints[i].id);
	lk__ode_hold_out(ctx);
	int ok = integrating_quickstep(ctx, h);
	lk__ode_release_out(ctx);
	for (int i = 0; i < ctx->njoints; ++i)
		if (ctx->joints[i].m)
			dJointEnable(ctx->joints[i].id);
	if (ctx->need_islands)
		dJointGroupEmpty(ctx->island_group);
	/* a body ODE did not step (its whole island fell asleep) keeps the application's accumulators only */
	for (int i = 0; i < ctx->nbodies; ++i) {
		const lk__ode_body *e = &ctx->bodies[i];
		if (ok && dBodyIsEnabled(e->id))
			continue;
		dBodySetForce(e->id, e->user_force[0], e->user_force[1], e->user_force[2]);
		dBodySetTorque(e->id, e->user_force[3], e->user_force[4], e->user_force[5]);
	}
	return ok;
}

/* The replacement step: ODE's rows -> lk_solve -> constraint forces -> ODE's own integration.
 *
 * After the solve every body gets the force and torque (J^T lambda) / h; the joints that were solved are
 * switched off for one call of ODE's dWorldQuickStep, which then integrates u + h M^-1 (f + J^T lambda / h)
 * = u* + M^-1 J^T lambda with everything ODE does around it (gravity, gyroscopic term, damping, maximum
 * angular speed, finite rotation, auto-disable), and are switched on again. When bodies can sleep, null
 * joints (no rows) along a spanning forest of the solved joints keep ODE's islands, so ODE wakes and puts to
 * sleep whole islands as it would with the real joints. */
#include "ode_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lk_ode_def lk_ode_default_def(void)
{
	lk_ode_def d;
	memset(&d, 0, sizeof d);
	d.solver = "auto";
	d.warm_distance = 0.01;
	d.warm_normal_cos = 0.95;
	d.warm_factor = 0.85;
	d.ode_residual = 1;
	d.sink_to_layer = -1;
	return d;
}

/* ----------------------------------------------------------------------------------- configuration */

/* Whether the solver now set rests contacts at the surface layer's depth (lk_ode_def.sink_to_layer) */
static void set_sink_to_layer(lk_ode *ctx)
{
	ctx->sink_to_layer = ctx->stepper == LK_ODE_LCPKIT &&
	                     (ctx->def.sink_to_layer > 0 || (ctx->def.sink_to_layer < 0 && ctx->cfg.method == LK_METHOD_AUTO));
}

static lk_status parse_solver(const char *spec, double warm_factor, lk_ode_stepper *stepper, lk_solver_config *cfg,
                              int *from_world, char *err, size_t err_size)
{
	if (!spec)
		spec = "auto";
	*from_world = 0;
	const lk_engine_solver *own = lk_engine_solver_find(spec);
	if (!strcmp(spec, "ode") || (own && own->engine == LK_ENGINE_ODE)) {
		*stepper = !strcmp(spec, "ode-step") ? LK_ODE_STEP : LK_ODE_QUICKSTEP;
		*cfg = lk_default_config(LK_METHOD_PGS);
		return LK_OK;
	}
	lk_status st = lk_config_parse(spec, cfg, err, err_size);
	if (st != LK_OK) {
		char names[128];
		lk_engine_solver_list(LK_ENGINE_ODE, names, sizeof names);
		size_t used = strlen(err);
		if (used < err_size)
			snprintf(err + used, err_size - used, "%s; ODE's own: %s",
			         own ? " (another engine's own solver)" : "", names);
		return st;
	}
	*stepper = LK_ODE_LCPKIT;
	/* the world's quickstep iterations become the budget (lk_config_set_engine_budget) unless the spec names
	 * iters= or budget= */
	*from_world = !lk_config_spec_sets_limit(spec);
	/* ODE's quickstep starts every step from zero, and so do the plugin's specs unless they say warm=1; auto
	 * starts from the previous step's impulses, scaled by warm_factor (docs/ode.md, "Warm starting") */
	if (!lk_config_spec_sets(spec, "warm"))
		cfg->warm_start = cfg->method == LK_METHOD_AUTO;
	/* auto makes the wrench of a stack's faces whole from the warm start damped by warm_factor (auto.c) */
	if (cfg->method == LK_METHOD_AUTO && !lk_config_spec_sets(spec, "carry"))
		cfg->adapt.carry = warm_factor;
	return LK_OK;
}

lk_status lk_ode_create(dWorldID world, const lk_ode_def *def, lk_ode **out, char *err, size_t err_size)
{
	char tmp[8];
	if (!err || !err_size) {
		err = tmp;
		err_size = sizeof tmp;
	}
	err[0] = '\0';
	if (!out) {
		snprintf(err, err_size, "lk_ode_create: out is NULL");
		return LK_ERR_INVALID_ARGUMENT;
	}
	*out = NULL;
	if (!world) {
		snprintf(err, err_size, "lk_ode_create: world is NULL");
		return LK_ERR_INVALID_ARGUMENT;
	}
	lk_ode_def d = def ? *def : lk_ode_default_def();
	if (!(d.warm_distance >= 0) || !isfinite(d.warm_distance) || !(d.warm_normal_cos >= -1.0) ||
	    !(d.warm_normal_cos <= 1.0) || !(d.warm_factor >= 0.0) || !(d.warm_factor <= 1.0)) {
		snprintf(err, err_size,
		         "lk_ode_create: warm_distance must be >= 0, warm_normal_cos and warm_factor in [-1, 1] and [0, 1]");
		return LK_ERR_INVALID_ARGUMENT;
	}
	if (d.sink_to_layer < -1 || d.sink_to_layer > 1) {
		snprintf(err, err_size, "lk_ode_create: sink_to_layer must be -1 (under auto), 0 or 1, got %d",
		         d.sink_to_layer);
		return LK_ERR_INVALID_ARGUMENT;
	}
	lk_ode *ctx = calloc(1, sizeof *ctx);
	if (!ctx) {
		snprintf(err, err_size, "lk_ode_create: out of memory");
		return LK_ERR_NO_MEMORY;
	}
	lk_status st = lk__ode_abi_load(&ctx->abi, err, err_size);
	if (st != LK_OK) {
		free(ctx);
		return st;
	}
	ctx->world = world;
	ctx->def = d;
	ctx->fallback = LK_ODE_QUICKSTEP;
	st = parse_solver(d.solver, d.warm_factor, &ctx->stepper, &ctx->cfg, &ctx->iters_from_world, err, err_size);
	if (st != LK_OK) {
		free(ctx);
		return st;
	}
	snprintf(ctx->spec, sizeof ctx->spec, "%s", d.solver ? d.solver : "auto");
	ctx->measure_open = !lk_config_spec_sets(ctx->spec, "measure");
	ctx->def.solver = ctx->spec;
	set_sink_to_layer(ctx);
	ctx->problem = lk_problem_create(LK_FORM_ROWS);
	ctx->island_group = dJointGroupCreate(0);
	if (!ctx->problem || !ctx->island_group) {
		lk_ode_destroy(ctx);
		snprintf(err, err_size, "lk_ode_create: out of memory");
		return LK_ERR_NO_MEMORY;
	}
	*out = ctx;
	return LK_OK;
}

void lk_ode_destroy(lk_ode *ctx)
{
	if (!ctx)
		return;
	if (ctx->island_group)
		dJointGroupDestroy(ctx->island_group);
	lk__ode_threading_release(&ctx->threading);
	lk_problem_destroy(ctx->problem);
	free(ctx->spaces);
	free(ctx->reg_bodies);
	lk__ptrmap_free(&ctx->reg_map);
	lk__ptrmap_free(&ctx->body_map);
	free(ctx->bodies);
	free(ctx->joints);
	free(ctx->defs);
	free(ctx->findex);
	free(ctx->row_joint);
	free(ctx->left_out);
	free(ctx->kept_defs);
	free(ctx->frozen);
	lk__ptrmap_free(&ctx->frozen_map);
	free(ctx->held_joints);
	free(ctx->held_enabled);
	free(ctx->lambda);
	free(ctx->plambda);
	free(ctx->prow);
	free(ctx->problem_row_of);
	free(ctx->feedback_store);
	free(ctx->joint_bytes);
	free(ctx->warm);
	free(ctx->warm_next);
	free(ctx->warm_heads);
	free(ctx->face_order);
	free(ctx);
}

const char *lk_ode_error(const lk_ode *ctx)
{
	return ctx ? ctx->error : "lk_ode: context is NULL";
}

lk_status lk_ode_set_solver(lk_ode *ctx, const char *spec)
{
	if (!ctx)
		return LK_ERR_INVALID_ARGUMENT;
	if (!spec)
		return lk__ode_fail(ctx, LK_ERR_INVALID_ARGUMENT, "lk_ode_set_solver: spec is NULL");
	lk_ode_stepper s;
	lk_solver_config c;
	int fw;
	char err[512] = "";
	lk_status st = parse_solver(spec, ctx->def.warm_factor, &s, &c, &fw, err, sizeof err);
	if (st != LK_OK)
		return lk__ode_fail(ctx, st, "%s", err);
	ctx->stepper = s;
	ctx->cfg = c;
	set_sink_to_layer(ctx);
	ctx->iters_from_world = fw;
	ctx->measure_open = !lk_config_spec_sets(spec, "measure");
	snprintf(ctx->spec, sizeof ctx->spec, "%s", spec);
	ctx->nwarm = 0;
	return LK_OK;
}

lk_status lk_ode_set_config(lk_ode *ctx, const lk_solver_config *cfg)
{
	if (!ctx)
		return LK_ERR_INVALID_ARGUMENT;
	if (!cfg)
		return lk__ode_fail(ctx, LK_ERR_INVALID_ARGUMENT, "lk_ode_set_config: cfg is NULL");
	char err[512];
	lk_status st = lk_config_validate(cfg, err, sizeof err);
	if (st != LK_OK)
		return lk__ode_fail(ctx, st, "lk_ode_set_config: %s", err);
	ctx->stepper = LK_ODE_LCPKIT;
	ctx->cfg = *cfg;
	set_sink_to_layer(ctx);
	ctx->iters_from_world = 0;
	ctx->measure_open = 0;
	if (lk_config_format(cfg, ctx->spec, sizeof ctx->spec) != LK_OK)
		snprintf(ctx->spec, sizeof ctx->spec, "%s", lk_method_name(cfg->method));
	ctx->nwarm = 0;
	return LK_OK;
}

lk_status lk_ode_set_ode_residual(lk_ode *ctx, int on)
{
	if (!ctx)
		return LK_ERR_INVALID_ARGUMENT;
	ctx->def.ode_residual = on != 0;
	return LK_OK;
}

lk_status lk_ode_set_fallback(lk_ode *ctx, lk_ode_stepper stepper)
{
	if (!ctx)
		return LK_ERR_INVALID_ARGUMENT;
	if (stepper != LK_ODE_QUICKSTEP && stepper != LK_ODE_STEP)
		return lk__ode_fail(ctx, LK_ERR_INVALID_ARGUMENT,
		                    "lk_ode_set_fallback: %d is not one of ODE's steppers (LK_ODE_QUICKSTEP, LK_ODE_STEP)",
		                    (int)stepper);
	ctx->fallback = stepper;
	return LK_OK;
}

lk_ode_stepper lk_ode_get_stepper(const lk_ode *ctx)
{
	return ctx ? ctx->stepper : LK_ODE_QUICKSTEP;
}

lk_solver_config lk_ode_get_config(const lk_ode *ctx)
{
	if (!ctx)
		return lk_default_config(LK_METHOD_PGS);
	lk_solver_config c = ctx->cfg;
	if (ctx->iters_from_world)
		lk_config_set_engine_budget(&c, dWorldGetQuickStepNumIterations(ctx->world));
	/* RES before and after the solve only when the step's statistics are measured */
	if (ctx->measure_open && !ctx->def.ode_residual)
		c.measure = 0;
	return c;
}

/* ------------------------------------------------------------------------------------ registration */

lk_status lk_ode_add_space(lk_ode *ctx, dSpaceID space)
{
	if (!ctx)
		return LK_ERR_INVALID_ARGUMENT;
	if (!space)
		return lk__ode_fail(ctx, LK_ERR_INVALID_ARGUMENT, "lk_ode_add_space: space is NULL");
	if (!dGeomIsSpace((dGeomID)space))
		return lk__ode_fail(ctx, LK_ERR_INVALID_ARGUMENT, "lk_ode_add_space: %p is a geom, not a space",
		                    (void *)space);
	for (int i = 0; i < ctx->nspaces; ++i)
		if (ctx->spaces[i] == space)
			return LK_OK;
	if (ctx->nspaces == ctx->cap_spaces) {
		int c = ctx->cap_spaces ? 2 * ctx->cap_spaces : 4;
		dSpaceID *s = realloc(ctx->spaces, (size_t)c * sizeof *s);
		if (!s)
			return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "lk_ode_add_space: out of memory");
		ctx->spaces = s;
		ctx->cap_spaces = c;
	}
	ctx->spaces[ctx->nspaces++] = space;
	return LK_OK;
}

lk_status lk_ode_remove_space(lk_ode *ctx, dSpaceID space)
{
	if (!ctx)
		return LK_ERR_INVALID_ARGUMENT;
	if (!space)
		return lk__ode_fail(ctx, LK_ERR_INVALID_ARGUMENT, "lk_ode_remove_space: space is NULL");
	for (int i = 0; i < ctx->nspaces; ++i)
		if (ctx->spaces[i] == space) {
			ctx->spaces[i] = ctx->spaces[--ctx->nspaces];
			return LK_OK;
		}
	return LK_OK;
}

lk_status lk_ode_add_body(lk_ode *ctx, dBodyID body)
{
	if (!ctx)
		return LK_ERR_INVALID_ARGUMENT;
	if (!body)
		return lk__ode_fail(ctx, LK_ERR_INVALID_ARGUMENT, "lk_ode_add_body: body is NULL");
	if (dBodyGetWorld(body) != ctx->world)
		return lk__ode_fail(ctx, LK_ERR_INVALID_ARGUMENT,
		                    "lk_ode_add_body: body %p belongs to world %p, not to the context's world %p",
		                    (void *)body, (void *)dBodyGetWorld(body), (void *)ctx->world);
	if (lk__ptrmap_get(&ctx->reg_map, body) >= 0)
		return LK_OK;
	if (ctx->nreg == ctx->cap_reg) {
		int c = ctx->cap_reg ? 2 * ctx->cap_reg : 64;
		dBodyID *b = realloc(ctx->reg_bodies, (size_t)c * sizeof *b);
		if (!b)
			return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "lk_ode_add_body: out of memory");
		ctx->reg_bodies = b;
		ctx->cap_reg = c;
	}
	if (lk__ptrmap_put(&ctx->reg_map, body, ctx->nreg) < 0)
		return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "lk_ode_add_body: out of memory");
	ctx->reg_bodies[ctx->nreg++] = body;
	return LK_OK;
}

lk_status lk_ode_remove_body(lk_ode *ctx, dBodyID body)
{
	if (!ctx)
		return LK_ERR_INVALID_ARGUMENT;
	if (!body)
		return lk__ode_fail(ctx, LK_ERR_INVALID_ARGUMENT, "lk_ode_remove_body: body is NULL");
	int i = lk__ptrmap_get(&ctx->reg_map, body);
	if (i < 0)
		return LK_OK;
	/* keep the registration order (it is the walk order): shift, then rebuild the index map */
	memmove(ctx->reg_bodies + i, ctx->reg_bodies + i + 1, (size_t)(ctx->nreg - i - 1) * sizeof *ctx->reg_bodies);
	ctx->nreg--;
	if (!lk__ptrmap_reserve(&ctx->reg_map, ctx->nreg))
		return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "lk_ode_remove_body: out of memory");
	for (int k = 0; k < ctx->nreg; ++k)
		lk__ptrmap_put(&ctx->reg_map, ctx->reg_bodies[k], k);
	/* its warm-start records must not be matched by a body created at the same address */
	ctx->nwarm = 0;
	return LK_OK;
}

/* --------------------------------------------------------------------------------------- the steps */

static void reset_stats(lk_ode *ctx)
{
	int64_t total = ctx->stats.fallback_total;
	memset(&ctx->stats, 0, sizeof ctx->stats);
	memset(&ctx->timing, 0, sizeof ctx->timing);
	ctx->stats.fallback_total = total;
	ctx->stats.notes_total = ctx->notes_total;
	ctx->error[0] = '\0';
}

/* What a step did that the application should hear of, each kind said once a context on stderr ("lcpkit:
 * ..."), unless lk_ode_def.quiet or LCPKIT_QUIET=1, and counted in the statistics either way (notes_total):
 * the core never prints, the adapter does. */
enum { SAY_FALLBACK = 1u << 0, SAY_LEFT_OUT = 1u << 1, SAY_FROZEN = 1u << 2 };

static void say(lk_ode *ctx, unsigned kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(lk_ode *ctx, unsigned kind, const char *fmt, ...)
{
	if (ctx->said & kind)
		return;
	ctx->said |= kind;
	ctx->stats.notes_total = ++ctx->notes_total;
	const char *q = getenv("LCPKIT_QUIET");
	if (ctx->def.quiet || (q && !strcmp(q, "1")))
		return;
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "lcpkit: %s\n", line);
}

/* The rows left out and the bodies frozen by this step's read (lk__ode_gather, lk__ode_extract_rows): in the
 * step's note, and said once each. */
static void note_left_out(lk_ode *ctx)
{
	if (ctx->nleft_out > 0) {
		const int g = ctx->first_left_out;
		const lk__ode_joint *j = &ctx->joints[ctx->row_joint[g]];
		char what[200];
		snprintf(what, sizeof what, "%d row%s left out of the solve (%s %p row %d: %s)", ctx->nleft_out,
		         ctx->nleft_out == 1 ? "" : "s", lk__ode_joint_class(j->type), (void *)j->id, g - j->row0,
		         lk__ode_row_fault(ctx, g));
		lk__ode_note_more(ctx, "ode: %s", what);
		say(ctx, SAY_LEFT_OUT, "step %lld of world %p: %s; the rest of the world was stepped",
		    (long long)ctx->steps, (void *)ctx->world, what);
	}
	if (ctx->nfrozen > 0) {
		dBodyID b = ctx->frozen[0];
		char what[200];
		snprintf(what, sizeof what, "%d bod%s frozen (body %p: its %s is not finite), out of the step with "
		         "its joints until the application repairs it", ctx->nfrozen, ctx->nfrozen == 1 ? "y" : "ies",
		         (void *)b, lk__ode_body_fault(b));
		lk__ode_note_more(ctx, "ode: %s", what);
		say(ctx, SAY_FROZEN, "step %lld of world %p: %s", (long long)ctx->steps, (void *)ctx->world, what);
	}
}

/* Joint j switched off for a call of ODE's stepper (hold_out), if it is on. */
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
 * one), and the joints with a row left out; switched on again after (release_out). */
static void hold_out(lk_ode *ctx)
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
		for (int k = 0; (j = dBodyGetJoint(b, k)) != NULL; ++k)
			hold_joint(ctx, j);
		en[i] = dBodyIsEnabled(b) != 0;
		dBodyDisable(b);
		ctx->nheld_bodies = i + 1;
	}
}

static void release_out(lk_ode *ctx)
{
	for (int k = 0; k < ctx->nheld; ++k)
		dJointEnable(ctx->held_joints[k]);
	for (int i = 0; i < ctx->nheld_bodies; ++i)
		if (ctx->held_enabled[i])
			dBodyEnable(ctx->frozen[i]);
	ctx->nheld = ctx->nheld_bodies = 0;
}

/* The rows ODE's joints give now, as an lcpkit problem whose lambda is the warm start (warm) or zero. */
static lk_status extract_problem(lk_ode *ctx, double h, lk_problem *p, int warm)
{
	if (warm)
		lk__ode_warm_lookup(ctx, h, ctx->lambda);
	return lk__ode_build_problem(ctx, h, p, warm ? ctx->lambda : NULL, lk_ode_get_config(ctx).threads);
}

/* Gather, rows and problem p, with the times after each in t_marks. A passive read leaves ODE as it found
 * it (a read that is not the step's own: the step reads the rows again); any other read can be undone with
 * lk__ode_state_restore until the next read (when ODE's stepper steps instead).
 * What is not finite is looked for only where the core refuses it (a sound step pays nothing for the look): a
 * body whose state is not finite is frozen and the rows are read again without it and its joints; a row that
 * cannot be solved (a contact with a zero normal) is left out and the problem made again without it. */
static lk_status read_problem(lk_ode *ctx, double h, lk_problem *p, int warm, int passive, double *t_marks)
{
	lk_status st;
	for (int attempt = 0;; ++attempt) {
		ctx->state_saved = 0;
		st = lk__ode_gather(ctx);
		t_marks[0] = lk_stats_now();
		if (st == LK_OK)
			st = lk__ode_state_save(ctx);
		if (st != LK_OK) {
			t_marks[1] = t_marks[0];
			break;
		}
		/* the rows' points where something reads them: a passive read (lk_ode_extract: a problem file), the
		 * warm start's matching, a coordinate order (their making, ODE's anchor calls and the contacts'
		 * recovery, was a tenth of the reading on the ragdolls) */
		const lk_solver_config cfg = lk_ode_get_config(ctx);
		const int points = passive || warm || lk_config_reads_points(&cfg);
		st = lk__ode_extract_rows(ctx, h, cfg.threads, points);
		t_marks[1] = lk_stats_now();
		if (st == LK_OK)
			st = extract_problem(ctx, h, p, warm);
		/* a frozen body's joints go with it: read again, after undoing this read (a motor at its limit added
		 * its force to the bodies); each attempt freezes one body at least */
		if (st == LK_ERR_NONFINITE && attempt < 64 && lk__ode_freeze_faulty_bodies(ctx) > 0) {
			lk__ode_state_restore(ctx);
			continue;
		}
		if (st == LK_ERR_NONFINITE && ctx->nrows > 0 && lk__ode_leave_out_faulty_rows(ctx) > 0)
			st = extract_problem(ctx, h, p, warm);
		break;
	}
	if (passive)
		lk__ode_state_restore(ctx);
	t_marks[2] = lk_stats_now();
	return st;
}

static lk_status prepare(lk_ode *ctx, double h, int warm, int passive, double *t_marks)
{
	lk_status st = read_problem(ctx, h, ctx->problem, warm, passive, t_marks);
	if (st == LK_OK) {
		lk__ode_count_kinds(ctx, &ctx->stats);
		note_left_out(ctx);
	}
	return st;
}

/* ODE's own solver produces this step (nothing of lcpkit's has been applied): the step succeeds, the stats
 * count a fallback, and the note lk_ode_error returns (already saying why) says so. Only ODE's stepper
 * failing (it returns 0 when it cannot allocate its working memory) fails the step. */
static lk_status fallback(lk_ode *ctx, double h)
{
	/* ODE's stepper reads the rows again: what the plugin's read changed goes first */
	lk__ode_state_restore(ctx);
	ctx->stats.fallback = 1;
	ctx->stats.fallback_total++;
	int step = ctx->fallback == LK_ODE_STEP;
	const char *name = step ? "dWorldStep" : "dWorldQuickStep";
	double t = lk_stats_now();
	hold_out(ctx);
	int ok = step ? ctx->abi.step(ctx->world, h) : ctx->abi.quickstep(ctx->world, h);
	release_out(ctx);
	ctx->timing.integrate = lk_stats_now() - t;
	ctx->nwarm = 0;
	char why[sizeof ctx->error];
	snprintf(why, sizeof why, "%s", ctx->error);
	if (!ok)
		return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "%s; ODE's %s, stepping instead, failed too (out of memory)",
		                    why, name);
	lk__ode_note(ctx, "%s; ODE's %s stepped instead", why, name);
	say(ctx, SAY_FALLBACK, "step %lld of world %p fell back to ODE's own stepper: %s", (long long)ctx->steps,
	    (void *)ctx->world, ctx->error);
	return LK_OK;
}

/* Each joint's force from ODE's dJointFeedback: f = J^T lambda_f with lambda = h lambda_f, recovered by
 * the least-squares solve (J J^T) lambda = J g, g = h (f1, t1, f2, t2), at most 6 x 6. */
static void recover_lambda(const lk_row_def *rows, int m, int two, const dJointFeedback *fb, double h, double *lam)
{
	double g[12] = {fb->f1[0], fb->f1[1], fb->f1[2], fb->t1[0], fb->t1[1], fb->t1[2],
	                fb->f2[0], fb->f2[1], fb->f2[2], fb->t2[0], fb->t2[1], fb->t2[2]};
	int nc = two ? 12 : 6;
	double A[LK__ODE_MAX_M][LK__ODE_MAX_M], b[LK__ODE_MAX_M];
	double trace = 0;
	for (int r = 0; r < m; ++r) {
		const double *x = rows[r].J[0]; /* J[0] and J[1], 12 numbers */
		b[r] = 0;
		for (int k = 0; k < nc; ++k)
			b[r] += x[k] * h * g[k];
		for (int s = 0; s < m; ++s) {
			const double *y = rows[s].J[0];
			double a = 0;
			for (int k = 0; k < nc; ++k)
				a += x[k] * y[k];
			A[r][s] = a;
		}
		trace += A[r][r];
	}
	/* a tiny ridge keeps dependent rows (which share their force arbitrarily) solvable */
	double ridge = 1e-13 * (trace / (m > 0 ? m : 1)) + 1e-300;
	for (int r = 0; r < m; ++r)
		A[r][r] += ridge;
	for (int c = 0; c < m; ++c) {
		double d = A[c][c];
		for (int k = 0; k < c; ++k)
			d -= A[c][k] * A[c][k];
		d = d > 0 ? sqrt(d) : 1e-150;
		A[c][c] = d;
		for (int r = c + 1; r < m; ++r) {
			double v = A[r][c];
			for (int k = 0; k < c; ++k)
				v -= A[r][k] * A[c][k];
			A[r][c] = v / d;
		}
	}
	for (int r = 0; r < m; ++r) {
		double v = b[r];
		for (int k = 0; k < r; ++k)
			v -= A[r][k] * lam[k];
		lam[r] = v / A[r][r];
	}
	for (int r = m - 1; r >= 0; --r) {
		double v = lam[r];
		for (int k = r + 1; k < m; ++k)
			v -= A[k][r] * lam[k];
		lam[r] = v / A[r][r];
	}
}

/* recover_lambda on the rows of joint j that are in the problem; a row left out (its J not finite or zero) has
 * no share of the joint's force to tell, and gets 0. */
static void recover_joint(lk_ode *ctx, const lk__ode_joint *j, const dJointFeedback *fb, double h)
{
	double *lam = ctx->lambda + j->row0;
	const int two = j->body[1] >= 0;
	int keep[LK__ODE_MAX_M], m = 0;
	for (int r = 0; r < j->m; ++r)
		if (ctx->nleft_out == 0 || !ctx->left_out[j->row0 + r])
			keep[m++] = r;
	if (m == j->m) {
		recover_lambda(ctx->defs + j->row0, j->m, two, fb, h, lam);
		return;
	}
	lk_row_def rows[LK__ODE_MAX_M];
	double kept[LK__ODE_MAX_M];
	for (int k = 0; k < m; ++k)
		rows[k] = ctx->defs[j->row0 + keep[k]];
	recover_lambda(rows, m, two, fb, h, kept);
	for (int r = 0; r < j->m; ++r)
		lam[r] = 0.0;
	for (int k = 0; k < m; ++k)
		lam[keep[k]] = kept[k];
}

static lk_status ode_own_step(lk_ode *ctx, double h, double t0)
{
	double marks[3];
	int measure = ctx->def.ode_residual;
	if (measure) {
		lk_status st = prepare(ctx, h, 0, 1, marks);
		if (st != LK_OK)
			measure = 0; /* the step itself still runs: the measurement is optional */
		ctx->timing.gather = marks[0] - t0;
		ctx->timing.extract = marks[1] - marks[0];
		ctx->timing.build = marks[2] - marks[1];
	}
	if (measure) {
		/* ODE's steppers start from zero: RES of lambda = 0 (the problem's lambda after a cold build) */
		lk_metrics m0;
		if (lk_problem_metrics(ctx->problem, NULL, &m0) == LK_OK)
			ctx->stats.res_before = m0.res;
	}
	if (measure && ctx->njoints > 0 && ctx->njoints > ctx->cap_feedback) {
		dJointFeedback *f = realloc(ctx->feedback_store, (size_t)ctx->njoints * sizeof *f);
		if (f) {
			ctx->feedback_store = f;
			ctx->cap_feedback = ctx->njoints;
		} else {
			measure = 0;
		}
	}
	if (measure) {
		for (int i = 0; i < ctx->njoints; ++i) {
			lk__ode_joint *j = &ctx->joints[i];
			if (j->m && !j->feedback) {
				memset(&ctx->feedback_store[i], 0, sizeof ctx->feedback_store[i]);
				dJointSetFeedback(j->id, &ctx->feedback_store[i]);
				j->temp_feedback = 1;
			}
		}
	}
	double t1 = lk_stats_now();
	int ok = ctx->stepper == LK_ODE_STEP ? ctx->abi.step(ctx->world, h) : ctx->abi.quickstep(ctx->world, h);
	double t2 = lk_stats_now();
	ctx->timing.solve = t2 - t1;
	ctx->stats.solve_seconds = t2 - t1;
	ctx->stats.iterations = ctx->stepper == LK_ODE_STEP ? 0 : dWorldGetQuickStepNumIterations(ctx->world);
	ctx->stats.work = ctx->stats.iterations;
	ctx->stats.stop_reason = ctx->stepper == LK_ODE_STEP ? LK_STOP_NONE : LK_STOP_ITERATIONS;
	if (measure) {
		for (int i = 0; i < ctx->njoints; ++i) {
			lk__ode_joint *j = &ctx->joints[i];
			if (!j->m)
				continue;
			const dJointFeedback *fb = j->temp_feedback ? &ctx->feedback_store[i] : j->feedback;
			recover_joint(ctx, j, fb, h);
			if (j->temp_feedback) {
				dJointSetFeedback(j->id, NULL);
				j->temp_feedback = 0;
			}
		}
		for (int k = 0; k < ctx->nprows; ++k)
			ctx->plambda[k] = ctx->lambda[ctx->prow[k]];
		lk_metrics m;
		if (lk_problem_metrics(ctx->problem, ctx->plambda, &m) == LK_OK)
			ctx->stats.res_after = m.res;
		ctx->stats.convert_seconds = ctx->timing.gather + ctx->timing.extract + ctx->timing.build;
	}
	if (!ok)
		return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "ode: ODE's %s failed (out of memory for its working memory)",
		                    ctx->stepper == LK_ODE_STEP ? "dWorldStep" : "dWorldQuickStep");
	return LK_OK;
}

static int guard_tripped(lk_stop_reason r)
{
	return r == LK_STOP_NONFINITE || r == LK_STOP_DIVERGED || r == LK_STOP_BAD_DIAGONAL;
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
static void apply_forces(lk_ode *ctx, double h, int to_bodies)
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
	hold_out(ctx);
	const int ok = integrating_quickstep(ctx, h);
	release_out(ctx);
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
static int integrates_directly(lk_ode *ctx, double h)
{
	return !ctx->need_islands && (ctx->njoints > 0 || lk__ode_world_ready(&ctx->abi, ctx->world, h));
}

/* 0 when ODE's stepper failed (no memory); then nothing moved and the accumulators are the application's. */
static int integrate(lk_ode *ctx, double h, int directly)
{
	if (directly)
		return integrate_gathered(ctx, h);
	if (ctx->need_islands)
		keep_islands(ctx);
	for (int i = 0; i < ctx->njoints; ++i)
		if (ctx->joints[i].m)
			dJointDisable(ctx->joints[i].id);
	hold_out(ctx);
	int ok = integrating_quickstep(ctx, h);
	release_out(ctx);
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

static lk_status lcpkit_step(lk_ode *ctx, double h, double t0)
{
	lk_solver_config cfg = lk_ode_get_config(ctx);
	double marks[3];
	lk_status st = prepare(ctx, h, cfg.warm_start, 0, marks);
	ctx->timing.gather = marks[0] - t0;
	ctx->timing.extract = marks[1] - marks[0];
	ctx->timing.build = marks[2] - marks[1];
	if (st == LK_ERR_NONFINITE) {
		/* what lcpkit's screening of the bodies (frozen ones) and rows (left out) did not catch: a world
		 * setting that is not finite (gravity) makes every body's u* so. ODE's own stepper would assert on
		 * it (dxNormalize4), so the world is not stepped at all */
		lk__ode_state_restore(ctx);
		return st;
	}
	if (st != LK_OK)
		return fallback(ctx, h);
	lk__ode_threading_lend(ctx, &cfg);
	lk_stats ls;
	double t3 = lk_stats_now();
	st = lk_solve(ctx->problem, &cfg, &ls, NULL);
	/* a row the solve cannot use (its diagonal is not positive): one with a zero J (a contact with a zero
	 * normal) is left out and the rest solved; anything else falls back below */
	if (st == LK_OK && ls.stop_reason == LK_STOP_BAD_DIAGONAL && ctx->nleft_out == 0 &&
	    lk__ode_leave_out_faulty_rows(ctx) > 0) {
		st = extract_problem(ctx, h, ctx->problem, cfg.warm_start);
		if (st == LK_OK) {
			lk__ode_count_kinds(ctx, &ctx->stats);
			note_left_out(ctx);
			st = lk_solve(ctx->problem, &cfg, &ls, NULL);
		}
	}
	double t4 = lk_stats_now();
	ctx->timing.solve = t4 - t3;
	if (st != LK_OK) {
		lk__ode_note_more(ctx, "ode: %s", lk_problem_error(ctx->problem));
		return fallback(ctx, h);
	}
	ctx->stats.iterations = ls.iterations;
	ctx->stats.work = ls.work;
	ctx->stats.stop_reason = ls.stop_reason;
	ctx->stats.res_before = ls.res_initial;
	ctx->stats.res_after = ls.res_final;
	ctx->stats.solve_seconds = ls.seconds;
	const double *lam = lk_problem_lambda(ctx->problem);
	int finite = 1;
	for (int k = 0; k < ctx->nprows; ++k)
		finite &= isfinite(lam[k]) != 0;
	if (guard_tripped(ls.stop_reason) || !finite) {
		lk__ode_note_more(ctx, "ode: solver stopped (%s)", lk_stop_reason_name(ls.stop_reason));
		return fallback(ctx, h);
	}
	for (int k = 0; k < ctx->nprows; ++k)
		ctx->lambda[ctx->prow[k]] = lam[k];
	for (int g = 0; g < ctx->nrows && ctx->nleft_out > 0; ++g)
		if (ctx->left_out[g])
			ctx->lambda[g] = 0.0;
	const int directly = integrates_directly(ctx, h);
	apply_forces(ctx, h, !directly);
	double t5 = lk_stats_now();
	ctx->timing.apply = t5 - t4;
	if (!integrate(ctx, h, directly))
		return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "ode: ODE's dWorldQuickStep failed to integrate the step "
		                    "(out of memory for its working memory); the world did not move");
	double t6 = lk_stats_now();
	ctx->timing.integrate = t6 - t5;
	if (cfg.warm_start)
		lk__ode_warm_store(ctx, h);
	else
		ctx->nwarm = 0;
	ctx->timing.apply += lk_stats_now() - t6;
	ctx->stats.convert_seconds =
	        ctx->timing.gather + ctx->timing.extract + ctx->timing.build + ctx->timing.apply;
	return LK_OK;
}

lk_status lk_ode_world_step(lk_ode *ctx, double dt)
{
	if (!ctx)
		return LK_ERR_INVALID_ARGUMENT;
	if (!(dt > 0) || !isfinite(dt))
		return lk__ode_fail(ctx, LK_ERR_INVALID_ARGUMENT, "lk_ode_world_step: dt %g must be positive and finite",
		                    dt);
	double t0 = lk_stats_now();
	reset_stats(ctx);
	lk__ode_thaw(ctx); /* a body frozen in the last step may have been repaired */
	lk_status st = ctx->stepper == LK_ODE_LCPKIT ? lcpkit_step(ctx, dt, t0) : ode_own_step(ctx, dt, t0);
	ctx->steps++;
	ctx->timing.total = lk_stats_now() - t0;
	ctx->stats.step_seconds = ctx->timing.total;
	/* ODE's own stepper: its call alone, without the optional residual measurement around it */
	ctx->stats.phase_seconds = ctx->stepper == LK_ODE_LCPKIT ? ctx->timing.total : ctx->stats.solve_seconds;
	return st;
}

lk_status lk_ode_get_stats(const lk_ode *ctx, lk_engine_step_stats *out)
{
	if (!ctx || !out)
		return LK_ERR_INVALID_ARGUMENT; /* ctx is const: the return says it all */
	*out = ctx->stats;
	return LK_OK;
}

lk_status lk_ode_get_timing(const lk_ode *ctx, lk_ode_timing *out)
{
	if (!ctx || !out)
		return LK_ERR_INVALID_ARGUMENT;
	*out = ctx->timing;
	return LK_OK;
}

lk_status lk_ode_extract(lk_ode *ctx, double dt, lk_problem *p)
{
	if (!ctx)
		return LK_ERR_INVALID_ARGUMENT;
	if (!p)
		return lk__ode_fail(ctx, LK_ERR_INVALID_ARGUMENT, "lk_ode_extract: problem is NULL");
	if (!(dt > 0) || !isfinite(dt))
		return lk__ode_fail(ctx, LK_ERR_INVALID_ARGUMENT, "lk_ode_extract: dt %g must be positive and finite", dt);
	if (lk_problem_form(p) != LK_FORM_ROWS)
		return lk__ode_fail(ctx, LK_ERR_FORM, "lk_ode_extract: the problem is in matrix form");
	ctx->error[0] = '\0';
	lk__ode_thaw(ctx);
	double marks[3];
	return read_problem(ctx, dt, p, ctx->stepper == LK_ODE_LCPKIT && ctx->cfg.warm_start, 1, marks);
}

dBodyID lk_ode_problem_body(const lk_ode *ctx, int i)
{
	return ctx && i >= 0 && i < ctx->nbodies ? ctx->bodies[i].id : NULL;
}

dJointID lk_ode_problem_joint(const lk_ode *ctx, int r, int *row_in_joint)
{
	if (!ctx || r < 0 || r >= ctx->nprows) {
		if (row_in_joint)
			*row_in_joint = -1;
		return NULL;
	}
	int g = ctx->prow[r];
	const lk__ode_joint *j = &ctx->joints[ctx->row_joint[g]];
	if (row_in_joint)
		*row_in_joint = g - j->row0;
	return j->id;
}

/* The plugin's context (lk_ode): its creation from a world and a definition, the solver and stepper it
 * steps with, and the spaces and bodies registered with it. The steps are in ode_step.c. */
#include "ode_internal.h"

#include <math.h>
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
	d.ode_residual = 0; /* statistics on request: RES costs two residual evaluations a step */
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
	/* auto sweeps in a random order drawn anew every eight sweeps, as quickstep reorders its rows
	 * (RANDOM_CONSTRAINTS_REORDERING_FREQUENCY in ODE's quickstep.cpp; auto.c) */
	if (cfg->method == LK_METHOD_AUTO && !lk_config_spec_sets(spec, "shuffle"))
		cfg->adapt.shuffle = 8;
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
	ctx->w_from_world = ctx->stepper == LK_ODE_LCPKIT && ctx->cfg.method == LK_METHOD_AUTO &&
	                    !lk_config_spec_sets(ctx->spec, "w");
	ctx->jw_from_world = ctx->w_from_world && !lk_config_spec_sets(ctx->spec, "jw");
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
	free(ctx->sink_at);
	free(ctx);
}

const char *lk_ode_error(const lk_ode *ctx)
{
	return ctx ? ctx->error : "lk_ode: context is NULL";
}

const char *lk_ode_note(const lk_ode *ctx)
{
	return ctx ? ctx->note : "";
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
	ctx->w_from_world = s == LK_ODE_LCPKIT && c.method == LK_METHOD_AUTO && !lk_config_spec_sets(spec, "w");
	ctx->jw_from_world = ctx->w_from_world && !lk_config_spec_sets(spec, "jw");
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
	ctx->w_from_world = 0;
	ctx->jw_from_world = 0;
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
	/* the solve measures nothing: where the step's statistics report RES, the step measures it around the
	 * solve (lcpkit_step), outside its clock, as it measures ODE's own answers */
	if (ctx->measure_open)
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

/* The step (lk_ode_world_step): ODE's rows -> lk_solve -> constraint forces -> ODE's own integration
 * (ode_integrate.c). A step lcpkit's solver cannot make falls back to ODE's stepper; with ODE's own stepper
 * chosen, it steps and the residual of its answer is measured (lk_ode_def.ode_residual). Also the read of a
 * problem without a step (lk_ode_extract) and the last step's statistics. */
#include "ode_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reset_stats(lk_ode *ctx)
{
	int64_t total = ctx->stats.fallback_total;
	memset(&ctx->stats, 0, sizeof ctx->stats);
	memset(&ctx->timing, 0, sizeof ctx->timing);
	ctx->stats.fallback_total = total;
	ctx->stats.notes_total = ctx->notes_total;
	ctx->error[0] = ctx->note[0] = '\0';
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

/* The rows ODE's joints give now, as an lcpkit problem whose lambda is the warm start (warm) or zero. */
static lk_status build_problem(lk_ode *ctx, double h, lk_problem *p, int warm)
{
	/* the articulated bodies, which the lookup and step_relaxation read, once a read */
	if (warm || ctx->w_from_world)
		lk__ode_mark_articulated(ctx);
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
		/* the rows' points where something reads them: every row's for a passive read (lk_ode_extract: a
		 * problem file) and a coordinate order, the contacts' for the warm start's matching (their making, ODE's
		 * anchor calls and the contacts' recovery, was a tenth of the reading on the ragdolls) */
		const lk_solver_config cfg = lk_ode_get_config(ctx);
		const int points = passive || lk_config_reads_points(&cfg) ? LK__ODE_POINTS_ALL
		                   : warm                                   ? LK__ODE_POINTS_CONTACTS
		                                                            : LK__ODE_POINTS_NONE;
		st = lk__ode_extract_rows(ctx, h, cfg.threads, points);
		t_marks[1] = lk_stats_now();
		if (st == LK_OK)
			st = build_problem(ctx, h, p, warm);
		/* a frozen body's joints go with it: read again, after undoing this read (a motor at its limit added
		 * its force to the bodies); each attempt freezes one body at least */
		if (st == LK_ERR_NONFINITE && attempt < 64 && lk__ode_freeze_faulty_bodies(ctx) > 0) {
			lk__ode_state_restore(ctx);
			continue;
		}
		if (st == LK_ERR_NONFINITE && ctx->nrows > 0 && lk__ode_leave_out_faulty_rows(ctx) > 0)
			st = build_problem(ctx, h, p, warm);
		break;
	}
	if (passive)
		lk__ode_state_restore(ctx);
	t_marks[2] = lk_stats_now();
	return st;
}

/* The step's problem read (read_problem), its rows counted by kind and any left out said. */
static lk_status read_step_problem(lk_ode *ctx, double h, int warm, int passive, double *t_marks)
{
	lk_status st = read_problem(ctx, h, ctx->problem, warm, passive, t_marks);
	if (st == LK_OK) {
		lk__ode_count_kinds(ctx, &ctx->stats);
		note_left_out(ctx);
	}
	return st;
}

/* ODE's own solver produces this step (nothing of lcpkit's has been applied): the step succeeds, the stats
 * count a fallback, and the step's note (lk_ode_note) says why: what failed, which lk_ode_error held. Only ODE's
 * stepper failing (it returns 0 when it cannot allocate its working memory) fails the step. */
static lk_status fallback(lk_ode *ctx, double h)
{
	/* ODE's stepper reads the rows again: what the plugin's read changed goes first */
	lk__ode_state_restore(ctx);
	ctx->stats.fallback = 1;
	ctx->stats.fallback_total++;
	int step = ctx->fallback == LK_ODE_STEP;
	const char *name = step ? "dWorldStep" : "dWorldQuickStep";
	double t = lk_stats_now();
	lk__ode_hold_out(ctx);
	int ok = step ? ctx->abi.step(ctx->world, h) : ctx->abi.quickstep(ctx->world, h);
	lk__ode_release_out(ctx);
	ctx->timing.integrate = lk_stats_now() - t;
	ctx->nwarm = 0;
	char why[sizeof ctx->error];
	snprintf(why, sizeof why, "%s", ctx->error);
	if (!ok)
		return lk__ode_fail(ctx, LK_ERR_NO_MEMORY, "%s; ODE's %s, stepping instead, failed too (out of memory)",
		                    why, name);
	lk__ode_note(ctx, "%s; ODE's %s stepped instead", why, name);
	ctx->error[0] = '\0'; /* the step succeeded */
	say(ctx, SAY_FALLBACK, "step %lld of world %p fell back to ODE's own stepper: %s", (long long)ctx->steps,
	    (void *)ctx->world, ctx->note);
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
		lk_status st = read_step_problem(ctx, h, 0, 1, marks);
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
			ctx->stats.res_initial = m0.res;
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
			ctx->stats.res_final = m.res;
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

/* The sweeps' relaxation of this step under auto when its spec leaves w open (lk_ode.w_from_world): where
 * articulated bodies rest on each other (a contact between two bodies that joints tie to other moving bodies:
 * a pile of ragdolls) and no contact is recovering, quickstep's own, the world's w (dWorldSetQuickStepW, 1.3
 * by default), as auto takes the world's iteration count; else w (1). Under plain sweeps at the engine's
 * iteration count such piles rest deeper than under quickstep's over-relaxed ones. Not on a step where a
 * contact recovers (a limb that lands deep in a step came out deeper than under quickstep), nor where joints
 * rest on the ground alone (a chain of boxes on hinges at 30 Hz kept its joints looser), nor on contacts alone
 * (pools, piles, walls rest deeper or shake): docs/benchmarks.md, "auto against the engines' own solvers".
 * The joints' bilateral rows alone (lk_auto_config.joint_w, where the spec leaves jw open too) take the world's
 * w on every step where no contact recovers: under plain sweeps a ragdoll alone on the ground or an arch of two
 * hinged links held their joints looser than quickstep's over-relaxed sweeps do (docs/benchmarks.md, "Joints
 * relaxed as quickstep relaxes them"). */
static void step_relaxation(lk_ode *ctx, double h, lk_solver_config *cfg)
{
	if (!ctx->w_from_world)
		return;
	const double world = dWorldGetQuickStepW(ctx->world);
	if (!(world > 0.0 && world < 2.0))
		return;
	int pile = 0; /* the bodies' articulated flags: build_problem's */
	for (int i = 0; i < ctx->njoints && !pile; ++i) {
		const lk__ode_joint *j = &ctx->joints[i];
		pile = j->type == dJointTypeContact && j->m > 0 && j->body[1] >= 0 && ctx->bodies[j->body[0]].articulated &&
		       ctx->bodies[j->body[1]].articulated;
	}
	if ((!pile && !ctx->jw_from_world) || lk__ode_contact_recovering(ctx, h))
		return;
	if (pile)
		cfg->sor_w = world;
	if (ctx->jw_from_world)
		cfg->adapt.joint_w = world;
}

static lk_status lcpkit_step(lk_ode *ctx, double h, double t0)
{
	lk_solver_config cfg = lk_ode_get_config(ctx);
	double marks[3];
	lk_status st = read_step_problem(ctx, h, cfg.warm_start, 0, marks);
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
	step_relaxation(ctx, h, &cfg);
	/* RES of the start and of the answer for the statistics, off the solve's clock: the solve itself runs as
	 * it runs without statistics (measure=0, the same impulses), and the solver time compares with
	 * quickstep's, whose answer is measured after it too */
	const int outside = ctx->measure_open && ctx->def.ode_residual;
	lk_metrics m0;
	double res0 = outside && lk_problem_metrics(ctx->problem, NULL, &m0) == LK_OK ? m0.res : NAN;
	lk_stats ls;
	double t3 = lk_stats_now();
	st = lk_solve(ctx->problem, &cfg, &ls, NULL);
	/* a row the solve cannot use (its diagonal is not positive): one with a zero J (a contact with a zero
	 * normal) is left out and the rest solved; anything else falls back below */
	if (st == LK_OK && ls.stop_reason == LK_STOP_BAD_DIAGONAL && ctx->nleft_out == 0 &&
	    lk__ode_leave_out_faulty_rows(ctx) > 0) {
		st = build_problem(ctx, h, ctx->problem, cfg.warm_start);
		if (st == LK_OK) {
			lk__ode_count_kinds(ctx, &ctx->stats);
			note_left_out(ctx);
			if (outside)
				res0 = lk_problem_metrics(ctx->problem, NULL, &m0) == LK_OK ? m0.res : NAN;
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
	ctx->stats.res_initial = ls.res_initial;
	ctx->stats.res_final = ls.res_final;
	ctx->stats.solve_seconds = ls.seconds;
	if (outside) {
		lk_metrics m;
		ctx->stats.res_initial = res0;
		ctx->stats.res_final = lk_problem_metrics(ctx->problem, NULL, &m) == LK_OK ? m.res : NAN;
	}
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
	const int directly = lk__ode_integrates_directly(ctx, h);
	lk__ode_apply_forces(ctx, h, !directly);
	double t5 = lk_stats_now();
	ctx->timing.apply = t5 - t4;
	if (!lk__ode_integrate(ctx, h, directly))
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
	ctx->error[0] = ctx->note[0] = '\0';
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

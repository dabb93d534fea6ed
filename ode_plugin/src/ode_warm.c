/* Warm start across steps: the previous step's impulses found again for this step's joints.
 *
 * Contacts are new joints every step (and a joint group hands out the same addresses again), so they are
 * matched by body pair, contact point and normal; other joints by handle, type, bodies and row count. A contact
 * of an articulated body (one a joint ties to another moving body) whose normal row asks for more separating
 * velocity than gravity adds in a step (|g| h) is not resting but recovering from a penetration (a limb
 * wedged against a joint of a ragdoll) or bouncing, and starts from zero, as in ODE's own steppers:
 * warm-started, such a contact's impulse and the friction it allows hold the bodies where the joint pulls
 * against it, and they never slide apart (ODE's piled ragdolls at 20 iterations stayed 6 cm deep;
 * docs/ode.md, "Warm starting"). A heap of free bodies keeps its deep contacts' impulses: its bottom needs
 * its load from the first sweep. Impulses scale with the step and the warm start's share: lambda_prev * h /
 * h_prev * warm_factor. Reads the rows lk__ode_extract_rows left in the context and nothing else of the
 * plugin. */
#include "ode_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static unsigned warm_hash(const void *a, const void *b, int cap)
{
	uint64_t x = (uint64_t)(uintptr_t)a * 0x9E3779B97F4A7C15ull;
	x ^= ((uint64_t)(uintptr_t)b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
	x ^= x >> 31;
	return (unsigned)(x & (uint64_t)(cap - 1));
}

static dBodyID joint_body(const lk_ode *ctx, const lk__ode_joint *j, int k)
{
	return j->body[k] >= 0 ? ctx->bodies[j->body[k]].id : NULL;
}

/* lambda (extraction order) from the records of the previous step; zero where nothing matches. Each record
 * serves one joint at most. */
void lk__ode_warm_lookup(lk_ode *ctx, double h, double *lambda)
{
	memset(lambda, 0, (size_t)ctx->nrows * sizeof(double));
	if (ctx->nwarm == 0 || !ctx->warm_heads)
		return;
	const double scale = (ctx->warm_dt > 0 ? h / ctx->warm_dt : 1.0) * ctx->def.warm_factor;
	double tol2 = ctx->def.warm_distance * ctx->def.warm_distance;
	for (int i = 0; i < ctx->nwarm; ++i)
		ctx->warm[i].used = 0;
	for (int i = 0; i < ctx->nbodies; ++i)
		ctx->bodies[i].articulated = 0;
	for (int i = 0; i < ctx->njoints; ++i) {
		const lk__ode_joint *j = &ctx->joints[i];
		if (j->type != dJointTypeContact && j->m > 0 && j->body[0] >= 0 && j->body[1] >= 0)
			ctx->bodies[j->body[0]].articulated = ctx->bodies[j->body[1]].articulated = 1;
	}
	/* the largest target velocity of a resting contact's normal row: what gravity adds in a step */
	dVector3 g;
	dWorldGetGravity(ctx->world, g);
	const double resting = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) * h;
	for (int i = 0; i < ctx->njoints; ++i) {
		const lk__ode_joint *j = &ctx->joints[i];
		if (!j->m)
			continue;
		dBodyID b0 = joint_body(ctx, j, 0), b1 = joint_body(ctx, j, 1);
		int best = -1;
		if (j->type == dJointTypeContact) {
			const double *n = ctx->defs[j->row0].J[0], *p = ctx->defs[j->row0].point;
			double bestd = INFINITY;
			for (int k = ctx->warm_heads[warm_hash(b0, b1, ctx->warm_hcap)]; k >= 0; k = ctx->warm[k].next) {
				const lk__ode_warm *w = &ctx->warm[k];
				if (w->key || w->used || w->body[0] != b0 || w->body[1] != b1)
					continue;
				double d2 = 0;
				for (int c = 0; c < 3; ++c)
					d2 += (p[c] - w->point[c]) * (p[c] - w->point[c]);
				if (d2 > tol2 || d2 >= bestd || dCalcVectorDot3(n, w->normal) < ctx->def.warm_normal_cos)
					continue;
				bestd = d2;
				best = k;
			}
		} else {
			for (int k = ctx->warm_heads[warm_hash(j->id, NULL, ctx->warm_hcap)]; k >= 0; k = ctx->warm[k].next) {
				const lk__ode_warm *w = &ctx->warm[k];
				if (w->key == (const void *)j->id && w->type == j->type && w->m == j->m &&
				    w->body[0] == b0 && w->body[1] == b1 && !w->used) {
					best = k;
					break;
				}
			}
		}
		if (best < 0)
			continue;
		lk__ode_warm *w = &ctx->warm[best];
		w->used = 1;
		int m = j->m < w->m ? j->m : w->m;
		/* a contact of an articulated body that is not resting starts from zero (module comment) */
		if (j->type == dJointTypeContact && ctx->defs[j->row0].c > resting &&
		    ((j->body[0] >= 0 && ctx->bodies[j->body[0]].articulated) ||
		     (j->body[1] >= 0 && ctx->bodies[j->body[1]].articulated)))
			continue;
		for (int r = 0; r < m; ++r)
			lambda[j->row0 + r] = w->lambda[r] * scale;
	}
}

/* Replaces the records by this step's joints and their impulses ctx->lambda. Out of memory forgets them. */
void lk__ode_warm_store(lk_ode *ctx, double h)
{
	int n = 0;
	for (int i = 0; i < ctx->njoints; ++i)
		n += ctx->joints[i].m > 0;
	if (n > ctx->cap_warm_next) {
		int c = ctx->cap_warm_next ? ctx->cap_warm_next : 64;
		while (c < n)
			c *= 2;
		lk__ode_warm *w = realloc(ctx->warm_next, (size_t)c * sizeof *w);
		if (!w) {
			ctx->nwarm = 0;
			return;
		}
		ctx->warm_next = w;
		ctx->cap_warm_next = c;
	}
	int hcap = 16;
	while (hcap < 2 * n)
		hcap *= 2;
	if (hcap > ctx->warm_hcap) {
		int *hd = realloc(ctx->warm_heads, (size_t)hcap * sizeof *hd);
		if (!hd) {
			ctx->nwarm = 0;
			return;
		}
		ctx->warm_heads = hd;
		ctx->warm_hcap = hcap;
	}
	for (int k = 0; k < ctx->warm_hcap; ++k)
		ctx->warm_heads[k] = -1;
	int k = 0;
	for (int i = 0; i < ctx->njoints; ++i) {
		const lk__ode_joint *j = &ctx->joints[i];
		if (!j->m)
			continue;
		lk__ode_warm *w = &ctx->warm_next[k];
		memset(w, 0, sizeof *w);
		w->body[0] = joint_body(ctx, j, 0);
		w->body[1] = joint_body(ctx, j, 1);
		w->type = j->type;
		w->m = j->m;
		w->key = j->type == dJointTypeContact ? NULL : (const void *)j->id;
		memcpy(w->point, ctx->defs[j->row0].point, sizeof w->point);
		memcpy(w->normal, ctx->defs[j->row0].J[0], sizeof w->normal);
		memcpy(w->lambda, ctx->lambda + j->row0, (size_t)j->m * sizeof(double));
		unsigned hb = w->key ? warm_hash(w->key, NULL, ctx->warm_hcap)
		                     : warm_hash(w->body[0], w->body[1], ctx->warm_hcap);
		w->next = ctx->warm_heads[hb];
		ctx->warm_heads[hb] = k;
		++k;
	}
	lk__ode_warm *t = ctx->warm;
	ctx->warm = ctx->warm_next;
	ctx->warm_next = t;
	int tc = ctx->cap_warm;
	ctx->cap_warm = ctx->cap_warm_next;
	ctx->cap_warm_next = tc;
	ctx->nwarm = k;
	ctx->warm_dt = h;
}

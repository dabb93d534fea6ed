/* Reaching ODE's own row generators.
 *
 * libode 0.16 exports, for every joint type, the C++ member functions dxJoint<Type>::getInfo1(Info1 *) and
 * dxJoint<Type>::getInfo2(fps, erp, rowskip, J1, J2, pairskip, pairRhsCfm, pairLoHi, findex). Their mangled
 * names encode the full parameter list, so resolving them also pins the 0.16 calling convention: an older or
 * newer ODE with another getInfo2 signature fails here, with the name of the symbol, instead of being called
 * wrongly. Under the Itanium C++ ABI these non-virtual members are called like C functions whose first
 * argument is `this`, which is the dJointID. */
#define _GNU_SOURCE 1
#include "ode_internal.h"

#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *const joint_class[LK__ODE_JOINT_TYPES] = {
	NULL,                 "dxJointBall",   "dxJointHinge",   "dxJointSlider",  "dxJointContact",
	"dxJointUniversal",   "dxJointHinge2", "dxJointFixed",   "dxJointNull",    "dxJointAMotor",
	"dxJointLMotor",      "dxJointPlane2D", "dxJointPR",     "dxJointPU",      "dxJointPiston",
	"dxJointDBall",       "dxJointDHinge", "dxJointTransmission",
};

const char *lk__ode_joint_class(int type)
{
	return type > 0 && type < LK__ODE_JOINT_TYPES ? joint_class[type] : "unknown";
}

/* The handle of the libode that the program uses: the object that defines dGetConfiguration. */
static void *libode_handle(char *path, size_t path_size)
{
	void *sym = dlsym(RTLD_DEFAULT, "dGetConfiguration");
	Dl_info info;
	if (sym && dladdr(sym, &info) && info.dli_fname) {
		snprintf(path, path_size, "%s", info.dli_fname);
		void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
		if (h)
			return h;
	}
	static const char *const sonames[] = {"libode.so.8", "libode.so"};
	for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; ++i) {
		void *h = dlopen(sonames[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			snprintf(path, path_size, "%s", sonames[i]);
			return h;
		}
	}
	return NULL;
}

/* dlsym returns an object pointer; copying its bytes is the portable way to get a function pointer. */
#define LOAD_FN(dst, handle, name)                                                                           \
	do {                                                                                                 \
		void *s_ = dlsym((handle), (name));                                                          \
		if (!s_)                                                                                     \
			goto missing;                                                                        \
		memcpy(&(dst), &s_, sizeof(dst));                                                            \
	} while (0)

lk_status lk__ode_abi_load(lk__ode_abi *abi, char *err, size_t err_size)
{
	memset(abi, 0, sizeof *abi);
	char path[512] = "libode";
	char name[128] = "";
	if (!dCheckConfiguration("ODE_double_precision")) {
		snprintf(err, err_size,
		         "lcpkit ode: libode is not double precision (dGetConfiguration: \"%s\"); lcpkit needs "
		         "the double-precision build (ODE 0.16, Debian libode8)",
		         dGetConfiguration());
		return LK_ERR_UNSUPPORTED;
	}
	void *h = libode_handle(path, sizeof path);
	if (!h) {
		snprintf(err, err_size, "lcpkit ode: cannot find the loaded libode (dlopen: %s)", dlerror());
		return LK_ERR_UNSUPPORTED;
	}
	for (int t = 1; t < LK__ODE_JOINT_TYPES; ++t) {
		const char *cls = joint_class[t];
		snprintf(name, sizeof name, "_ZN%zu%s8getInfo1EPN7dxJoint5Info1E", strlen(cls), cls);
		LOAD_FN(abi->info1[t], h, name);
		snprintf(name, sizeof name, "_ZN%zu%s8getInfo2EddiPdS0_iS0_S0_Pi", strlen(cls), cls);
		LOAD_FN(abi->info2[t], h, name);
		snprintf(name, sizeof name, "_ZNK%zu%s4sizeEv", strlen(cls), cls);
		LOAD_FN(abi->size[t], h, name);
	}
	static const struct {
		size_t offset;
		const char *name;
	} other[] = {
		{offsetof(lk__ode_abi, quickstep), "dWorldQuickStep"},
		{offsetof(lk__ode_abi, step), "dWorldStep"},
		{offsetof(lk__ode_abi, world_destroy), "dWorldDestroy"},
		{offsetof(lk__ode_abi, body_create), "dBodyCreate"},
		{offsetof(lk__ode_abi, world_context), "_ZNK7dxWorld31unsafeGetWorldProcessingContextEv"},
		{offsetof(lk__ode_abi, context_sync),
		 "_ZN21dxWorldProcessContext36EnsureStepperSyncObjectsAreAllocatedEP7dxWorld"},
		{offsetof(lk__ode_abi, realloc_context),
		 "_Z31dxReallocateWorldProcessContextP7dxWorldR25dxWorldProcessIslandsInfodPFmPKP6dxBodyjPKP7dxJointjE"},
		{offsetof(lk__ode_abi, quickstep_estimate), "_Z37dxEstimateQuickStepMemoryRequirementsPKP6dxBodyjPKP7dxJointj"},
		{offsetof(lk__ode_abi, step_body), "_Z10dxStepBodyP6dxBodyd"},
	};
	for (size_t i = 0; i < sizeof other / sizeof other[0]; ++i) {
		snprintf(name, sizeof name, "%s", other[i].name);
		void *s_ = dlsym(h, name);
		if (!s_)
			goto missing;
		/* every entry is a function pointer of the same size */
		memcpy((char *)abi + other[i].offset, &s_, sizeof s_);
	}
	dlclose(h); /* RTLD_NOLOAD took a reference; the library stays loaded by the program */
	return LK_OK;
missing:
	snprintf(err, err_size,
	         "lcpkit ode: symbol %s not found in %s (lcpkit needs the row generators of ODE 0.16, built "
	         "against ODE %s)",
	         name, path, dODE_VERSION);
	dlclose(h);
	memset(abi, 0, sizeof *abi);
	return LK_ERR_UNSUPPORTED;
}

lk_status lk_ode_check(char *err, size_t err_size)
{
	char tmp[8];
	if (!err || !err_size) {
		err = tmp;
		err_size = sizeof tmp;
	}
	err[0] = '\0';
	lk__ode_abi abi;
	return lk__ode_abi_load(&abi, err, err_size);
}

/* ODE 0.16's dxJointLimitMotor::addLimot applies, for a powered joint at its limit, the motor force to the
 * bodies inside getInfo2, under a lock of the world's processing context
 * (dxWorld::unsafeGetWorldProcessingContext()->LockForAddLimotSerialization()). ODE makes that context only
 * in its steppers (dxReallocateWorldProcessContext, the first thing dWorldStep and dWorldQuickStep do), so
 * before the world's first step, or after dWorldCleanupWorkingMemory or dWorldUseSharedWorkingMemory(world,
 * NULL), getInfo2 dereferences a NULL context. This makes the context as a stepper would, without the
 * stepper's work on the world itself (auto-disable counters, islands):
 *  - a probe world shares the world's working memory, which creates the world's if it has none (the
 *    context lives in it; dxWorld::unsafeGetWorldProcessingContext may only be called when it exists);
 *  - when there is no context, dxReallocateWorldProcessContext on the probe, an empty world, makes it;
 *  - destroying the probe frees the synchronisation objects it allocated for the context
 *    (dxWorld::~dxWorld -> CleanupWorldReferences), and EnsureStepperSyncObjectsAreAllocated allocates the
 *    world's own, from the world's threading implementation, exactly as the world's next step would.
 * Every step asks again: the application may have released the memory since. */
int lk__ode_world_ready(const lk__ode_abi *abi, dWorldID world, double h)
{
	dWorldID probe = dWorldCreate();
	if (!probe)
		return 0;
	int ok = dWorldUseSharedWorkingMemory(probe, world) != 0;
	if (ok && !abi->world_context(world)) {
		/* dxWorldProcessIslandsInfo: an island count and three pointers, filled for the probe (nothing) */
		void *islands_info[8] = {NULL};
		ok = abi->realloc_context(probe, islands_info, h, abi->quickstep_estimate);
	}
	abi->world_destroy(probe);
	void *context = ok ? abi->world_context(world) : NULL;
	return context && abi->context_sync(context, world);
}

/* ------------------------------------------------------------------------------ the contact joint's dContact */

/* A contact joint of ODE 0.16 (dxJointContact: dxJoint, int the_m, dContact contact) keeps the dContact it was
 * made from, and its normal row's target is a function of that contact's depth: ODE's API gives no way to read
 * either. The object's layout is ODE's own; rather than trust it, two probe joints made from contacts of
 * unmistakable numbers are read where their contacts should lie (the end of the object, dxJoint::size()), and
 * the place is used only where both hold their numbers there and where lk__ode_contact_target then gives, to
 * the bit, the targets getInfo2 writes for them (one with its own error reduction) over a range of surface
 * layers and velocity caps. Anything else (another ODE build, a struct that moved) leaves it unused. */
void lk__ode_contact_of(const lk__ode_abi *abi, dJointID j, dContact *out)
{
	memcpy(out, (const char *)j + abi->contact_at, sizeof *out);
}

/* The contact's error reduction: its own where it has one, else the world's. */
static double contact_erp(const dContact *c, double erp)
{
	return (c->surface.mode & dContactSoftERP) != 0 ? c->surface.soft_erp : erp;
}

double lk__ode_contact_target(const dContact *c, double fps, double erp, double layer, double maxvel)
{
	/* dxJointContact::getInfo2, ODE 0.16.2 (ode/src/joints/contact.cpp): the row's error reduction rate, the
	 * depth below the layer (none above it), the push out of it plus the normal motion (0 here), capped */
	const double k = fps * contact_erp(c, erp);
	double depth = c->geom.depth - layer;
	if (depth < 0)
		depth = 0;
	const double pushout = k * depth + 0.0;
	return pushout > maxvel ? maxvel : pushout;
}

/* A bounce makes the target max(ODE's formula, bounce (-outgoing)) where the contact closes faster than its bounce
 * threshold, which depends on the bodies' velocities and not on the layer. A contact whose target at the world's
 * layer is 0 either closes no faster (no bounce at any layer) or has a bounce target of 0 or less (a bounce factor
 * of 0 or less), which the formula's target, 0 or more at any layer when the rate is, never falls below: there the
 * formula is the target at every layer, bounce or not. A normal motion is added to both and is left to getInfo2. */
int lk__ode_resting_target_known(const dContact *c, double fps, double erp)
{
	return !(c->surface.mode & dContactMotionN) && fps * contact_erp(c, erp) >= 0.0;
}

double lk__ode_generated_target(const lk__ode_abi *abi, dJointID j, double fps, double erp)
{
	/* the rows getInfo2 writes go to a scratch block never read but for the normal's target (getInfo2 writes every
	 * number it reads back, so the block is not cleared) */
	double J1[6 * LK__ODE_MAX_M], J2[6 * LK__ODE_MAX_M], rhs[2 * LK__ODE_MAX_M], lohi[2 * LK__ODE_MAX_M];
	int findex[LK__ODE_MAX_M];
	abi->info2[dJointTypeContact](j, fps, erp, 6, J1, J2, 2, rhs, lohi, findex);
	return rhs[0];
}

/* The probe contacts' fields that are compared: numbers no contact made by a collider would have together. */
static int same_probe(const dContact *a, const dContact *b)
{
	return a->surface.mode == b->surface.mode && a->surface.mu == b->surface.mu &&
	       a->surface.soft_erp == b->surface.soft_erp && a->geom.depth == b->geom.depth &&
	       !memcmp(a->geom.pos, b->geom.pos, 3 * sizeof(dReal)) &&
	       !memcmp(a->geom.normal, b->geom.normal, 3 * sizeof(dReal)) && !memcmp(a->fdir1, b->fdir1, 3 * sizeof(dReal));
}

/* The contact is dxJointContact's last member (ODE 0.16: the joint, its row count, the contact), so it ends where
 * the object does: looked for there only, where every byte compared was written by the contact's copy (a search
 * over the object would read its padding, which nothing writes). */
static long find_contact(const lk__ode_abi *abi, dJointID j, const dContact *c)
{
	const size_t size = abi->size[dJointTypeContact](j);
	if (size <= sizeof *c || (size - sizeof *c) % sizeof(dReal) != 0)
		return -1;
	const size_t at = size - sizeof *c;
	dContact k;
	memcpy(&k, (const char *)j + at, sizeof k);
	return same_probe(&k, c) ? (long)at : -1;
}

/* Whether the target getInfo2 writes for probe joint j equals lk__ode_contact_target's over a range of layers
 * (above, at and below the contact's depth, and negative, as sink_to_layer sets it) and velocity caps. */
static int targets_agree(const lk__ode_abi *abi, dWorldID w, dJointID j, const dContact *c)
{
	static const double layers[] = {0.0, 0.001, -0.001, 0.0078125, 0.5}, caps[] = {INFINITY, 0.05};
	const double fps = 60.0, erp = 0.2;
	lk__ode_info1 info;
	abi->info1[dJointTypeContact](j, &info);
	for (size_t l = 0; l < sizeof layers / sizeof layers[0]; ++l)
		for (size_t v = 0; v < sizeof caps / sizeof caps[0]; ++v) {
			dWorldSetContactSurfaceLayer(w, layers[l]);
			dWorldSetContactMaxCorrectingVel(w, caps[v]);
			const double theirs = lk__ode_generated_target(abi, j, fps, erp);
			const double mine = lk__ode_contact_target(c, fps, erp, layers[l], caps[v]);
			if (memcmp(&theirs, &mine, sizeof mine) != 0)
				return 0;
		}
	return 1;
}

int lk__ode_contact_layout(lk__ode_abi *abi)
{
	if (abi->contact_at != 0)
		return abi->contact_at > 0;
	abi->contact_at = -1;
	dWorldID w = dWorldCreate();
	dJointGroupID g = dJointGroupCreate(0);
	dBodyID b = w ? abi->body_create(w) : NULL; /* libode's own: the preload library's would register it */
	if (!w || !g || !b)
		goto done;
	dBodySetPosition(b, 0.375, -0.25, 0.625);
	dContact c[2];
	memset(c, 0, sizeof c);
	long at[2] = {-1, -1};
	for (int k = 0; k < 2; ++k) {
		c[k].surface.mode = dContactMu2 | (k ? dContactSoftERP : 0);
		c[k].surface.mu = 0.3125 + 0.25 * k;
		c[k].surface.mu2 = 0.4375;
		c[k].surface.soft_erp = 0.1796875;
		c[k].geom.pos[0] = 1.25;
		c[k].geom.pos[1] = -2.5 - k;
		c[k].geom.pos[2] = 0.75;
		c[k].geom.normal[2] = 1.0;
		c[k].geom.depth = 0.0048828125 * (k + 1);
		c[k].fdir1[0] = 0.6;
		c[k].fdir1[1] = 0.8;
		dJointID j = dJointCreateContact(w, g, &c[k]);
		if (!j)
			goto done;
		dJointAttach(j, b, NULL);
		at[k] = find_contact(abi, j, &c[k]);
		if (at[k] <= 0 || (k && at[k] != at[0]) || !targets_agree(abi, w, j, &c[k]))
			goto done;
	}
	abi->contact_at = at[0];
done:
	if (g)
		dJointGroupDestroy(g);
	if (w)
		abi->world_destroy(w);
	return abi->contact_at > 0;
}

/* ------------------------------------------------------------------------------ a body's list of joints */

/* ODE keeps a body's joints in a list whose nodes lie in the joints (dxJoint::node[2], ODE 0.16's joint.h: the
 * joint, the other body, the next node), and its API reads the list only by index (dBodyGetJoint walks from the
 * head every call). The nodes' place in the object is ODE's own layout; rather than trust it, it is looked for
 * in a probe joint between two probe bodies (node[0] = {joint, first body}, node[1] = {joint, second body},
 * one after the other) and used only where the same place holds in joints of three other types and kinds of
 * attachment, and where the walks over the probe bodies' lists by it give, joint for joint, what
 * dBodyGetJoint gives. Anything else leaves it unused. */
static int node_holds(const char *node, dJointID j, dBodyID first, dBodyID second)
{
	const void *p[6];
	memcpy(p, node, sizeof p);
	return p[0] == (const void *)j && p[1] == (const void *)first && p[3] == (const void *)j &&
	       p[4] == (const void *)second;
}

static int walks_agree(const lk__ode_abi *abi, dBodyID b)
{
	lk__ode_joint_walk w = lk__ode_walk_joints(abi, b);
	for (int i = 0; i < 64; ++i) {
		dJointID theirs = dBodyGetJoint(b, i), mine = lk__ode_next_joint(&w);
		if (theirs != mine)
			return 0;
		if (!theirs)
			return 1;
	}
	return 0;
}

int lk__ode_node_layout(lk__ode_abi *abi)
{
	if (abi->node_at != 0)
		return abi->node_at > 0;
	abi->node_at = -1;
	dWorldID w = dWorldCreate();
	dBodyID b[3] = {NULL, NULL, NULL};
	for (int k = 0; w && k < 3; ++k)
		b[k] = abi->body_create(w); /* libode's own: the preload library's would register them */
	if (!w || !b[0] || !b[1] || !b[2])
		goto done;
	/* attached (first, second): stored as given, and with the first NULL stored the other way round */
	dJointID j[4] = {dJointCreateBall(w, 0), dJointCreateHinge(w, 0), dJointCreateSlider(w, 0),
	                 dJointCreateFixed(w, 0)};
	dBodyID first[4] = {b[0], b[2], b[0], b[1]}, second[4] = {b[1], b[0], NULL, NULL};
	for (int k = 0; k < 4; ++k) {
		if (!j[k])
			goto done;
		dJointAttach(j[k], k == 3 ? NULL : first[k], k == 3 ? first[k] : second[k]);
	}
	const size_t size = abi->size[dJointTypeBall](j[0]);
	long at = -1;
	for (size_t o = 0; o + 6 * sizeof(void *) <= size; o += sizeof(void *))
		if (node_holds((const char *)j[0] + o, j[0], first[0], second[0])) {
			at = (long)o;
			break;
		}
	if (at <= 0)
		goto done;
	const int types[4] = {dJointTypeBall, dJointTypeHinge, dJointTypeSlider, dJointTypeFixed};
	for (int k = 1; k < 4; ++k)
		if ((size_t)at + 6 * sizeof(void *) > abi->size[types[k]](j[k]) ||
		    !node_holds((const char *)j[k] + at, j[k], first[k], second[k]))
			goto done;
	abi->node_at = at;
	for (int k = 0; k < 3; ++k)
		if (!walks_agree(abi, b[k]))
			abi->node_at = -1;
done:
	if (w)
		abi->world_destroy(w); /* its joints and bodies with it */
	return abi->node_at > 0;
}

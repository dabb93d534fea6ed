/* The C boundary of lcpkit/bullet.h: world handles and their registry, error messages ("function: reason")
 * and the argument checks every entry point runs before Bullet sees a value. */
#include "world_internal.hpp"

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <mutex>

namespace lk {
namespace detail {

namespace {

/*
 * A handle is (generation << HALF) | (slot + 1), cast to lk_bt_world *: it is never an address and never
 * dereferenced, so a destroyed world's handle finds its slot's generation moved on instead of freed memory.
 * Slots are reused, generations not (until one slot has seen 2^HALF worlds).
 */
constexpr unsigned HALF = 4 * sizeof(uintptr_t);
constexpr uintptr_t SLOT_MASK = (uintptr_t(1) << HALF) - 1;

struct Slot {
	std::unique_ptr<World> world;
	uintptr_t generation = 1;
};

std::mutex registryMutex;
std::vector<Slot> slots;
std::vector<size_t> freeSlots;
thread_local std::string lastHandleError;

/* The slot a handle names, or nullptr with the reason in lastHandleError (unless function is NULL: a query
 * that leaves the last reason in place). Called with registryMutex held. */
Slot *slotOf(const lk_bt_world *handle, const char *function, lk_status *st)
{
	const uintptr_t h = reinterpret_cast<uintptr_t>(handle);
	const uintptr_t index = (h & SLOT_MASK) - 1;
	const uintptr_t generation = h >> HALF;
	char buf[160];
	if (!handle) {
		std::snprintf(buf, sizeof buf, "%s: world is NULL", function ? function : "");
		*st = LK_ERR_INVALID_ARGUMENT;
	} else if (index >= slots.size() || generation == 0 || generation > slots[index].generation) {
		std::snprintf(buf, sizeof buf, "%s: %p is not a world handle", function, (const void *)handle);
		*st = LK_ERR_INVALID_ARGUMENT;
	} else if (generation != slots[index].generation || !slots[index].world) {
		std::snprintf(buf, sizeof buf, "%s: world %p was destroyed", function, (const void *)handle);
		*st = LK_ERR_STATE;
	} else {
		return &slots[index];
	}
	if (function)
		lastHandleError = buf;
	return nullptr;
}

} // namespace

lk_bt_world *registerWorld(std::unique_ptr<World> w)
{
	std::lock_guard<std::mutex> lock(registryMutex);
	if (freeSlots.empty()) {
		if (slots.size() >= SLOT_MASK - 1)
			throw std::bad_alloc();
		slots.emplace_back();
		freeSlots.push_back(slots.size() - 1);
	}
	const size_t index = freeSlots.back();
	freeSlots.pop_back();
	Slot &slot = slots[index];
	slot.world = std::move(w);
	return reinterpret_cast<lk_bt_world *>((slot.generation << HALF) | (index + 1));
}

World *findWorld(const lk_bt_world *handle, const char *function, lk_status *st)
{
	std::lock_guard<std::mutex> lock(registryMutex);
	Slot *slot = slotOf(handle, function, st);
	return slot ? slot->world.get() : nullptr;
}

std::unique_ptr<World> unregisterWorld(lk_bt_world *handle, const char *function, lk_status *st)
{
	std::lock_guard<std::mutex> lock(registryMutex);
	Slot *slot = slotOf(handle, function, st);
	if (!slot)
		return nullptr;
	std::unique_ptr<World> w = std::move(slot->world);
	/* a slot whose generations ran out is retired rather than let an old handle name a new world */
	if (++slot->generation <= (~uintptr_t(0) >> HALF))
		freeSlots.push_back((size_t)(slot - slots.data()));
	return w;
}

const char *handleError()
{
	return lastHandleError.c_str();
}

lk_status fail(const World *w, lk_status st, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	w->error = std::string(w->function) + ": " + buf;
	return st;
}

bool finite_n(const double *x, int n)
{
	for (int i = 0; i < n; ++i)
		if (!std::isfinite(x[i]))
			return false;
	return true;
}

lk_status check_body(const World *w, int id, btRigidBody **out)
{
	btRigidBody *b = id >= 0 && id < (int)w->bodies.size() ? w->bodies[(size_t)id].body : nullptr;
	if (!b)
		return fail(w, LK_ERR_OUT_OF_RANGE, "body %d does not exist", id);
	*out = b;
	return LK_OK;
}

lk_status check_joint(const World *w, int id, JointRec **out)
{
	if (id < 0 || id >= (int)w->joints.size() || !w->joints[(size_t)id].c)
		return fail(w, LK_ERR_OUT_OF_RANGE, "joint %d does not exist", id);
	*out = const_cast<JointRec *>(&w->joints[(size_t)id]);
	return LK_OK;
}

lk_status check_vec(const World *w, const double *x, int n, const char *name)
{
	if (!x)
		return fail(w, LK_ERR_INVALID_ARGUMENT, "%s is NULL", name);
	if (!finite_n(x, n))
		return fail(w, LK_ERR_NONFINITE, "%s is not finite", name);
	return LK_OK;
}

lk_status check_quat(const World *w, const double *q, btQuaternion *out)
{
	lk_status st = check_vec(w, q, 4, "rotation");
	if (st != LK_OK)
		return st;
	double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
	if (!(n > 1e-12) || !std::isfinite(n))
		return fail(w, LK_ERR_INVALID_ARGUMENT, "rotation quaternion has zero length");
	*out = btQuaternion(q[0] / n, q[1] / n, q[2] / n, q[3] / n);
	return LK_OK;
}

lk_status check_range(const World *w, double x, double lo, double hi, const char *name)
{
	if (!std::isfinite(x))
		return fail(w, LK_ERR_NONFINITE, "%s is not finite", name);
	if (x < lo || x > hi)
		return fail(w, LK_ERR_INVALID_ARGUMENT, "%s = %g outside [%g, %g]", name, x, lo, hi);
	return LK_OK;
}

} // namespace detail
} // namespace lk

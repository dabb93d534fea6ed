/* The C boundary of lcpkit/bullet.h: error messages ("function: reason") and the argument checks every entry
 * point runs before Bullet sees a value. */
#include "world_internal.hpp"

#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace lk {
namespace detail {

lk_status fail(const lk_bt_world *w, lk_status st, const char *fmt, ...)
{
	if (!alive(w))
		return st;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	w->error = std::string(w->function) + ": " + buf;
	return st;
}

bool alive(const lk_bt_world *w)
{
	return w && w->magic == LK_BT_WORLD_MAGIC;
}

bool finite_n(const double *x, int n)
{
	for (int i = 0; i < n; ++i)
		if (!std::isfinite(x[i]))
			return false;
	return true;
}

lk_status check_body(const lk_bt_world *w, int id, btRigidBody **out)
{
	btRigidBody *b = id >= 0 && id < (int)w->bodies.size() ? w->bodies[(size_t)id].body : nullptr;
	if (!b)
		return fail(w, LK_ERR_OUT_OF_RANGE, "body %d does not exist", id);
	*out = b;
	return LK_OK;
}

lk_status check_joint(const lk_bt_world *w, int id, JointRec **out)
{
	if (id < 0 || id >= (int)w->joints.size() || !w->joints[(size_t)id].c)
		return fail(w, LK_ERR_OUT_OF_RANGE, "joint %d does not exist", id);
	*out = const_cast<JointRec *>(&w->joints[(size_t)id]);
	return LK_OK;
}

lk_status check_vec(const lk_bt_world *w, const double *x, int n, const char *name)
{
	if (!x)
		return fail(w, LK_ERR_INVALID_ARGUMENT, "%s is NULL", name);
	if (!finite_n(x, n))
		return fail(w, LK_ERR_NONFINITE, "%s is not finite", name);
	return LK_OK;
}

lk_status check_quat(const lk_bt_world *w, const double *q, btQuaternion *out)
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

lk_status check_range(const lk_bt_world *w, double x, double lo, double hi, const char *name)
{
	if (!std::isfinite(x))
		return fail(w, LK_ERR_NONFINITE, "%s is not finite", name);
	if (x < lo || x > hi)
		return fail(w, LK_ERR_INVALID_ARGUMENT, "%s = %g outside [%g, %g]", name, x, lo, hi);
	return LK_OK;
}

} // namespace detail
} // namespace lk

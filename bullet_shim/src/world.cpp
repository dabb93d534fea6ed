/* Worlds of the C API: creation and destruction, the choice of solver, stepping, statistics, contacts and
 * recording. */
#include "world_internal.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

using namespace lk::detail;

World::~World()
{
	if (world) {
		for (JointRec &j : joints)
			if (j.c)
				world->removeConstraint(j.c);
		for (BodyRec &b : bodies)
			if (b.body)
				world->removeRigidBody(b.body);
	}
	world.reset();
	solver.reset();
	mlcp.reset();
	for (JointRec &j : joints)
		delete j.c;
	for (BodyRec &b : bodies) {
		delete b.body;
		delete b.shape;
	}
}

void lk::detail::count_contacts(const World *w, const btRigidBody *body, int *manifolds, int *points)
{
	int m = 0, p = 0;
	btDispatcher *d = w->world->getDispatcher();
	for (int i = 0; i < d->getNumManifolds(); ++i) {
		const btPersistentManifold *pm = d->getManifoldByIndexInternal(i);
		if (body && pm->getBody0() != body && pm->getBody1() != body)
			continue;
		const int n = pm->getNumContacts();
		m += n > 0;
		p += n;
	}
	if (manifolds)
		*manifolds = m;
	if (points)
		*points = p;
}

namespace {

int64_t total_fallbacks(const World *w)
{
	return w->fallbacksBefore + (w->ins ? w->ins->fallbacks : 0);
}

/* "spec" names one of Bullet's own solvers or an lcpkit method; the first the engine table knows, the
 * second lk_config_parse. */
lk_status set_solver(World *w, const char *spec)
{
	if (!spec || !*spec)
		return fail(w, LK_ERR_INVALID_ARGUMENT, "spec is NULL or empty");
	char bulletNames[256];
	lk_engine_solver_list(LK_ENGINE_BULLET, bulletNames, sizeof bulletNames);
	OwnSolverParts parts;
	const lk_engine_solver *own = lk_engine_solver_find(spec);
	if (own && own->engine == LK_ENGINE_BULLET && w->multibody) {
		parts = makeOwnMultiBodySolver(spec);
		if (!parts.solver)
			return fail(w, LK_ERR_UNSUPPORTED, "Bullet solver '%s' does not solve a multibody world; its own "
			            "solver there is bullet-si (btMultiBodyConstraintSolver)", spec);
	} else if (own && own->engine == LK_ENGINE_BULLET) {
		parts = makeOwnSolver(spec);
		if (!parts.solver && parts.status != LK_OK)
			return fail(w, parts.status, "%s", parts.why.c_str());
		if (!parts.solver)
			return fail(w, LK_ERR_UNSUPPORTED, "Bullet solver '%s' is not built in", spec);
	} else if (own) {
		return fail(w, LK_ERR_PARSE, "'%s' is another engine's solver (Bullet's own: %s)", spec, bulletNames);
	} else if (std::strncmp(spec, "bullet-", 7) == 0) {
		return fail(w, LK_ERR_PARSE, "unknown Bullet solver '%s' (%s)", spec, bulletNames);
	} else {
		std::unique_ptr<btConstraintSolver> made;
		lk::BulletSolverCore *core;
		if (w->multibody) {
			auto *m = new lk::BulletMultiBodySolver(lk_default_config(LK_METHOD_PGS));
			made.reset(m);
			core = m;
		} else {
			auto *m = new lk::BulletSolver(lk_default_config(LK_METHOD_PGS));
			made.reset(m);
			core = m;
		}
		lk_status st = core->setSpec(spec);
		if (st != LK_OK) {
			/* an unknown method name: Bullet's own names are valid here too */
			lk_solver_config cfg;
			const std::string method(spec, std::strcspn(spec, ":"));
			if (st == LK_ERR_PARSE && lk_config_parse(method.c_str(), &cfg, nullptr, 0) != LK_OK)
				return fail(w, st, "%s, or Bullet's own: %s", core->error(), bulletNames);
			return fail(w, st, "%s", core->error());
		}
		parts.ins = core->instrument();
		parts.solver = std::move(made);
	}
	parts.ins->residuals = w->residuals;
	parts.ins->recording = w->recording;
	if (w->multibody)
		static_cast<btMultiBodyDynamicsWorld *>(w->world.get())
		    ->setMultiBodyConstraintSolver(static_cast<btMultiBodyConstraintSolver *>(parts.solver.get()));
	else
		w->world->setConstraintSolver(parts.solver.get());
	if (w->ins)
		w->fallbacksBefore += w->ins->fallbacks;
	if (w->ins && !w->ins->fallbackReason.empty())
		w->fallbackReason = w->ins->fallbackReason;
	w->solver = std::move(parts.solver);
	w->mlcp = std::move(parts.mlcp);
	w->ins = parts.ins;
	w->spec = spec;
	return LK_OK;
}

lk_status do_step(World *w, double dt, int maxSub, int *steps_out, lk_engine_step_stats *stats)
{
	w->ins->active = stats != nullptr || w->recording;
	w->ins->resetAccumulated();
	const double t0 = lk_stats_now();
	/* Bullet returns the fixed steps due, of which it takes at most maxSub (dropping the rest) */
	int n = w->world->stepSimulation(dt, maxSub, w->fixedStep);
	if (n > maxSub)
		n = maxSub;
	const double t1 = lk_stats_now();
	w->steps += n;
	if (steps_out)
		*steps_out = n;
	if (stats) {
		*stats = w->ins->accumulated();
		stats->step_seconds = t1 - t0;
		stats->fallback_total = total_fallbacks(w);
	}
	return LK_OK;
}

void write_err(char *err, size_t size, const char *msg)
{
	if (err && size) {
		std::snprintf(err, size, "%s", msg);
	}
}

} // namespace

extern "C" {

lk_bt_world_def lk_bt_default_world_def(void)
{
	lk_bt_world_def d;
	std::memset(&d, 0, sizeof d);
	d.gravity[2] = -9.81;
	d.fixed_time_step = 1.0 / 60.0;
	d.max_sub_steps = 1;
	d.solver = nullptr;
	d.iterations = 10;
	d.erp = 0.2;
	d.contact_erp = 0.2;
	d.cfm = 0.0;
	d.split_impulse = 1;
	d.warm_start = 1;
	d.friction_directions = 2;
	d.linear_slop = 0.0;
	d.plane_multipoint = 0;
	return d;
}

lk_status lk_bt_world_create(const lk_bt_world_def *def, lk_bt_world **out, char *err, size_t err_size)
{
	write_err(err, err_size, "");
	if (!out) {
		write_err(err, err_size, "lk_bt_world_create: out is NULL");
		return LK_ERR_INVALID_ARGUMENT;
	}
	*out = nullptr;
	if (!def) {
		write_err(err, err_size, "lk_bt_world_create: definition is NULL");
		return LK_ERR_INVALID_ARGUMENT;
	}
	char msg[384];
	if (!finite_n(def->gravity, 3) || !std::isfinite(def->fixed_time_step) || !std::isfinite(def->erp) ||
	    !std::isfinite(def->contact_erp) || !std::isfinite(def->cfm) || !std::isfinite(def->linear_slop)) {
		write_err(err, err_size, "lk_bt_world_create: gravity, time step, erp, cfm or linear slop is not finite");
		return LK_ERR_NONFINITE;
	}
	if (!(def->fixed_time_step > 0) || def->max_sub_steps < 1 || def->iterations < 1 || def->erp < 0 ||
	    def->erp > 1 || def->contact_erp < 0 || def->contact_erp > 1 || def->cfm < 0 ||
	    (def->friction_directions != 1 && def->friction_directions != 2) || def->linear_slop < 0 ||
	    (def->plane_multipoint != 0 && def->plane_multipoint != 1) || (def->multibody != 0 && def->multibody != 1)) {
		std::snprintf(msg, sizeof msg,
		              "lk_bt_world_create: needs time step > 0 (%g), sub-steps >= 1 (%d), iterations >= 1 (%d), erp "
		              "and contact erp in [0, 1] (%g, %g), cfm >= 0 (%g), 1 or 2 friction directions (%d), linear "
		              "slop >= 0 (%g), plane multipoint and multibody 0 or 1 (%d, %d)",
		              def->fixed_time_step, def->max_sub_steps, def->iterations, def->erp, def->contact_erp,
		              def->cfm, def->friction_directions, def->linear_slop, def->plane_multipoint, def->multibody);
		write_err(err, err_size, msg);
		return LK_ERR_INVALID_ARGUMENT;
	}
	try {
		std::unique_ptr<World> w(new World);
		w->collision.reset(new btDefaultCollisionConfiguration());
		/* before any body: each pair's plane algorithm takes the setting when the pair is first made */
		if (def->plane_multipoint)
			w->collision->setPlaneConvexMultipointIterations();
		w->dispatcher.reset(new btCollisionDispatcher(w->collision.get()));
		w->broadphase.reset(new btDbvtBroadphase());
		/* Bullet makes (and owns) a sequential impulse solver until set_solver replaces it; a multibody world
		 * takes its multibody solver at construction (Bullet's, until set_solver replaces it) */
		w->multibody = def->multibody != 0;
		if (w->multibody) {
			w->placeholder.reset(new btMultiBodyConstraintSolver());
			w->world.reset(new btMultiBodyDynamicsWorld(w->dispatcher.get(), w->broadphase.get(),
			                                            w->placeholder.get(), w->collision.get()));
		} else {
			w->world.reset(new btDiscreteDynamicsWorld(w->dispatcher.get(), w->broadphase.get(), nullptr,
			                                           w->collision.get()));
		}
		w->fixed.reset(new btRigidBody(0.0, nullptr, nullptr));
		w->fixedStep = def->fixed_time_step;
		w->maxSubSteps = def->max_sub_steps;
		w->iterations = def->iterations;
		w->world->setGravity(vec(def->gravity));
		btContactSolverInfo &si = w->world->getSolverInfo();
		si.m_numIterations = def->iterations;
		si.m_erp = def->erp;
		si.m_erp2 = def->contact_erp;
		si.m_globalCfm = def->cfm;
		si.m_splitImpulse = def->split_impulse ? 1 : 0;
		si.m_linearSlop = def->linear_slop;
		if (def->warm_start)
			si.m_solverMode |= SOLVER_USE_WARMSTARTING;
		else
			si.m_solverMode &= ~SOLVER_USE_WARMSTARTING;
		if (def->friction_directions == 2)
			si.m_solverMode |= SOLVER_USE_2_FRICTION_DIRECTIONS;
		w->function = __func__;
		lk_status st = set_solver(w.get(), def->solver ? def->solver : "auto");
		if (st != LK_OK) {
			write_err(err, err_size, w->error.c_str());
			return st;
		}
		*out = registerWorld(std::move(w));
		return LK_OK;
	} catch (const std::bad_alloc &) {
		write_err(err, err_size, "lk_bt_world_create: out of memory");
		return LK_ERR_NO_MEMORY;
	} catch (...) {
		write_err(err, err_size, "lk_bt_world_create: unexpected exception");
		return LK_ERR_STATE;
	}
}

lk_status lk_bt_world_destroy(lk_bt_world *world)
{
	if (!world)
		return LK_OK;
	lk_status st = LK_OK;
	try {
		unregisterWorld(world, __func__, &st);
	} catch (...) {
	}
	return st;
}

int lk_bt_world_is_valid(const lk_bt_world *world)
{
	lk_status st;
	return findWorld(world, nullptr, &st) != nullptr;
}

const char *lk_bt_world_error(const lk_bt_world *world)
{
	lk_status st;
	const World *w = findWorld(world, nullptr, &st);
	return w ? w->error.c_str() : handleError();
}

lk_status lk_bt_world_set_solver(lk_bt_world *world, const char *spec)
{
	return guarded(world, __func__, [&](World *w) { return set_solver(w, spec); });
}

const char *lk_bt_world_solver(const lk_bt_world *world)
{
	lk_status st;
	const World *w = findWorld(world, __func__, &st);
	return w ? w->spec.c_str() : "";
}

lk_status lk_bt_world_set_iterations(lk_bt_world *world, int iterations)
{
	return guarded(world, __func__, [&](World *w) {
		if (iterations < 1)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "%d is not >= 1", iterations);
		w->iterations = iterations;
		w->world->getSolverInfo().m_numIterations = iterations;
		return LK_OK;
	});
}

lk_status lk_bt_world_set_gravity(lk_bt_world *world, const double gravity[3])
{
	return guarded(world, __func__, [&](World *w) {
		lk_status st = check_vec(w, gravity, 3, "gravity");
		if (st != LK_OK)
			return st;
		w->world->setGravity(vec(gravity));
		return LK_OK;
	});
}

lk_status lk_bt_world_set_residuals(lk_bt_world *world, int on)
{
	return guarded(world, __func__, [&](World *w) {
		w->residuals = on != 0;
		w->ins->residuals = w->residuals;
		return LK_OK;
	});
}

lk_status lk_bt_world_step(lk_bt_world *world, lk_engine_step_stats *stats)
{
	return guarded(world, __func__, [&](World *w) { return do_step(w, w->fixedStep, 1, nullptr, stats); });
}

lk_status lk_bt_world_advance(lk_bt_world *world, double dt, int *steps_out, lk_engine_step_stats *stats)
{
	return guarded(world, __func__, [&](World *w) {
		if (!std::isfinite(dt) || dt < 0)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "dt %g is not a finite time >= 0", dt);
		return do_step(w, dt, w->maxSubSteps, steps_out, stats);
	});
}

double lk_bt_world_time(const lk_bt_world *world)
{
	lk_status st;
	const World *w = findWorld(world, __func__, &st);
	return w ? (double)w->steps * w->fixedStep : 0.0;
}

int64_t lk_bt_world_fallbacks(const lk_bt_world *world)
{
	lk_status st;
	const World *w = findWorld(world, __func__, &st);
	return w ? total_fallbacks(w) : 0;
}

const char *lk_bt_world_fallback_reason(const lk_bt_world *world)
{
	lk_status st;
	const World *w = findWorld(world, __func__, &st);
	if (!w)
		return "";
	if (w->ins && !w->ins->fallbackReason.empty())
		return w->ins->fallbackReason.c_str();
	return w->fallbackReason.c_str();
}

lk_status lk_bt_world_contact_count(const lk_bt_world *world, int *manifolds, int *points)
{
	return guarded(world, __func__, [&](World *w) {
		count_contacts(w, nullptr, manifolds, points);
		return LK_OK;
	});
}

lk_status lk_bt_world_max_penetration(const lk_bt_world *world, double *depth)
{
	return guarded(world, __func__, [&](World *w) {
		if (!depth)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "depth is NULL");
		double d = 0.0;
		btDispatcher *disp = w->world->getDispatcher();
		for (int i = 0; i < disp->getNumManifolds(); ++i) {
			const btPersistentManifold *m = disp->getManifoldByIndexInternal(i);
			for (int k = 0; k < m->getNumContacts(); ++k)
				d = std::fmax(d, -m->getContactPoint(k).getDistance());
		}
		*depth = d;
		return LK_OK;
	});
}

int lk_bt_world_body_count(const lk_bt_world *world)
{
	lk_status st;
	const World *w = findWorld(world, __func__, &st);
	if (!w)
		return 0;
	int n = 0;
	for (const BodyRec &b : w->bodies)
		n += b.body != nullptr;
	return n;
}

int lk_bt_world_joint_count(const lk_bt_world *world)
{
	lk_status st;
	const World *w = findWorld(world, __func__, &st);
	if (!w)
		return 0;
	int n = 0;
	for (const JointRec &j : w->joints)
		n += j.c != nullptr;
	return n;
}

lk_status lk_bt_world_set_recording(lk_bt_world *world, int on)
{
	return guarded(world, __func__, [&](World *w) {
		w->recording = on != 0;
		w->ins->recording = w->recording;
		if (!w->recording) {
			w->ins->current.clear();
			w->ins->last.clear();
		}
		return LK_OK;
	});
}

lk_status lk_bt_world_recorded_problem(lk_bt_world *world, lk_problem **out)
{
	return guarded(world, __func__, [&](World *w) {
		if (!out)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "out is NULL");
		*out = nullptr;
		if (!w->recording)
			return fail(w, LK_ERR_STATE, "recording is off");
		lk_status st = w->ins->last.build(out);
		if (st != LK_OK)
			return fail(w, st, "the recorded rows do not form a valid problem");
		return LK_OK;
	});
}

lk_status lk_bt_world_recorded_solution(const lk_bt_world *world, double *lambda, int n)
{
	return guarded(world, __func__, [&](World *w) {
		const std::vector<double> &s = w->ins->last.solution;
		if (!lambda && n > 0)
			return fail(w, LK_ERR_INVALID_ARGUMENT, "lambda is NULL");
		if (n != (int)s.size())
			return fail(w, LK_ERR_OUT_OF_RANGE, "%d values asked, %d recorded", n,
			            (int)s.size());
		if (n > 0)
			std::memcpy(lambda, s.data(), s.size() * sizeof(double));
		return LK_OK;
	});
}

} /* extern "C" */

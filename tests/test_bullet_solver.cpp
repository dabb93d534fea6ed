/* lk::BulletSolver in a plain Bullet world: what the world's btContactSolverInfo sets (iterations, random
 * order, SOR relaxation) reaches the lcpkit method unless the spec says otherwise, and the settings the adapter
 * cannot honour are reported once each. C++ because the adapter is a C++ class. */
#include "lcpkit/bullet_solver.hpp"

#include <btBulletDynamicsCommon.h>

#include <cstdarg>
#include <cstddef>
#include <csetjmp>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include <cmocka.h>
}

namespace {

/* A ground plane and a stack of three unit boxes. */
struct Scene {
	btDefaultCollisionConfiguration collision;
	btCollisionDispatcher dispatcher{&collision};
	btDbvtBroadphase broadphase;
	btSequentialImpulseConstraintSolver own;
	btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &own, &collision};
	btStaticPlaneShape groundShape{btVector3(0, 0, 1), 0};
	btBoxShape boxShape{btVector3(0.5, 0.5, 0.5)};
	std::vector<std::unique_ptr<btRigidBody>> bodies;

	Scene()
	{
		world.setGravity(btVector3(0, 0, -9.81));
		world.getSolverInfo().m_solverMode |= SOLVER_USE_2_FRICTION_DIRECTIONS;
		add(&groundShape, 0.0, 0.0);
		for (int i = 0; i < 3; ++i)
			add(&boxShape, 1.0, 0.5 + i);
	}
	~Scene()
	{
		world.setConstraintSolver(&own);
		for (auto &b : bodies)
			world.removeRigidBody(b.get());
	}
	void add(btCollisionShape *shape, double mass, double z)
	{
		btVector3 inertia(0, 0, 0);
		if (mass > 0)
			shape->calculateLocalInertia(mass, inertia);
		btRigidBody::btRigidBodyConstructionInfo info(mass, nullptr, shape, inertia);
		info.m_startWorldTransform.setIdentity();
		info.m_startWorldTransform.setOrigin(btVector3(0, 0, z));
		bodies.emplace_back(new btRigidBody(info));
		bodies.back()->setActivationState(DISABLE_DEACTIVATION);
		world.addRigidBody(bodies.back().get());
	}
	void step(int n)
	{
		for (int i = 0; i < n; ++i)
			world.stepSimulation(1.0 / 60.0, 1, 1.0 / 60.0);
	}
};

int count(const std::string &s, const char *what)
{
	int n = 0;
	for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
		++n;
	return n;
}

/* Iterations: m_numIterations is the budget in sweep-equivalents unless the spec sets iters= or budget=;
 * tolerances of "pgs" are off, so every sweep the budget pays for runs. */
void test_iterations_from_solver_info(void **)
{
	Scene sc;
	lk::BulletSolver solver("pgs");
	assert_string_equal(solver.error(), "");
	sc.world.setConstraintSolver(&solver);
	sc.world.getSolverInfo().m_numIterations = 1;
	sc.step(30);
	const lk_engine_step_stats &s = solver.lastStepStats();
	assert_true(s.rows > 0);
	assert_int_equal(s.iterations, 1);
	assert_int_equal(s.stop_reason, LK_STOP_BUDGET);
	assert_true(solver.lastConfig().budget == 1.0);

	sc.world.getSolverInfo().m_numIterations = 10;
	sc.step(1);
	assert_int_equal(solver.lastStepStats().iterations, 10);
	assert_int_equal(solver.lastStepStats().stop_reason, LK_STOP_BUDGET);

	assert_int_equal(solver.setSpec("pgs:iters=4"), LK_OK);
	sc.step(1);
	assert_int_equal(solver.lastStepStats().iterations, 4);
	assert_int_equal(solver.lastStepStats().stop_reason, LK_STOP_ITERATIONS);
	/* the same budget for PGS-SM: its PGS phase and subspace steps together spend 10 sweep-equivalents */
	assert_int_equal(solver.setSpec("pgs-sm"), LK_OK);
	sc.step(1);
	assert_int_equal(solver.lastStepStats().stop_reason, LK_STOP_BUDGET);
	assert_true(solver.lastConfig().budget == 10.0);
	assert_int_equal(solver.setSpec("pgs:iters=4"), LK_OK);
	sc.step(1);
	assert_int_equal(solver.fallbacks(), 0);
	assert_string_equal(solver.notes(), ""); /* Bullet's defaults all map */

	/* a configuration is taken as given */
	lk_solver_config cfg = lk_default_config(LK_METHOD_PGS);
	cfg.max_iterations = 3;
	assert_int_equal(solver.setConfig(cfg), LK_OK);
	sc.step(1);
	assert_int_equal(solver.lastStepStats().iterations, 3);

	lk::BulletSolver bad("no-such-method");
	assert_non_null(std::strstr(bad.error(), "no-such-method"));
	assert_int_equal(bad.config().method, LK_METHOD_PGS);
}

/* SOLVER_RANDMIZE_ORDER and m_sor fill what the spec leaves open; otherwise they are noted once. */
void test_order_and_relaxation_from_solver_info(void **)
{
	Scene sc;
	lk::BulletSolver solver("pgs");
	sc.world.setConstraintSolver(&solver);
	btContactSolverInfo &info = sc.world.getSolverInfo();
	info.m_solverMode |= SOLVER_RANDMIZE_ORDER;
	info.m_sor = 1.3;
	sc.step(10);
	assert_int_equal(solver.lastConfig().order, LK_ORDER_RANDOM);
	assert_true(solver.lastConfig().sor_w == 1.3);
	assert_string_equal(solver.notes(), "");
	assert_int_equal(solver.config().order, LK_ORDER_NATURAL); /* the given configuration is unchanged */

	/* the spec's own choices win, and the world's settings are noted once */
	assert_int_equal(solver.setSpec("psor:order=natural"), LK_OK);
	sc.step(10);
	assert_int_equal(solver.lastConfig().order, LK_ORDER_NATURAL);
	assert_true(solver.lastConfig().sor_w == 1.4);
	const std::string notes = solver.notes();
	assert_int_equal(count(notes, "SOLVER_RANDMIZE_ORDER not applied: the spec sets order="), 1);
	assert_int_equal(count(notes, "m_sor = 1.3 not applied"), 1);
	assert_int_equal(count(notes, "\n"), 2);
}

/* Settings without an lcpkit counterpart: one line each, however many steps. */
void test_unmapped_settings_noted_once(void **)
{
	Scene sc;
	lk::BulletSolver solver("amgs");
	sc.world.setConstraintSolver(&solver);
	btContactSolverInfo &info = sc.world.getSolverInfo();
	info.m_solverMode |= SOLVER_INTERLEAVE_CONTACT_AND_FRICTION_CONSTRAINTS | SOLVER_RANDMIZE_ORDER;
	info.m_leastSquaresResidualThreshold = 1e-6;
	info.m_sor = 0.9;
	info.m_numNonContactInnerIterations = 3;
	sc.step(20);
	const std::string notes = solver.notes();
	assert_int_equal(count(notes, "SOLVER_INTERLEAVE_CONTACT_AND_FRICTION_CONSTRAINTS not applied"), 1);
	assert_int_equal(count(notes, "m_leastSquaresResidualThreshold = 1e-06 not applied"), 1);
	assert_int_equal(count(notes, "m_sor = 0.9 not applied"), 1);
	assert_int_equal(count(notes, "m_numNonContactInnerIterations = 3 not applied"), 1);
	assert_int_equal(count(notes, "\n"), 4);
	/* amgs sweeps in order: the random order applies */
	assert_int_equal(solver.lastConfig().order, LK_ORDER_RANDOM);
	assert_int_equal(solver.fallbacks(), 0);
	/* the stack still stands */
	assert_true(sc.bodies.back()->getWorldTransform().getOrigin().z() > 2.45);
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iterations_from_solver_info),
		cmocka_unit_test(test_order_and_relaxation_from_solver_info),
		cmocka_unit_test(test_unmapped_settings_noted_once),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}

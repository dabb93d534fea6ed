// An ordinary Bullet program whose constraint solver is swapped for an lcpkit method in one line.
//
//   build: c++ -std=c++17 swap_solver.cpp -o swap_solver $(pkg-config --cflags --libs lcpkit-bullet)
//   run:   ./swap_solver [SPEC]        (SPEC: an lcpkit solver spec, default "pgs:iters=20")
//
// It drops a stack of ten boxes on the ground, runs two seconds with Bullet's sequential impulse solver and
// with the lcpkit solver side by side, and prints the height of the top box and the solver statistics.
#include <lcpkit/bullet_solver.hpp>

#include <btBulletDynamicsCommon.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace {

struct Scene {
	btDefaultCollisionConfiguration collision;
	btCollisionDispatcher dispatcher{&collision};
	btDbvtBroadphase broadphase;
	btSequentialImpulseConstraintSolver bulletSolver;
	btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &bulletSolver, &collision};
	btStaticPlaneShape groundShape{btVector3(0, 0, 1), 0};
	btBoxShape boxShape{btVector3(0.5, 0.5, 0.5)};
	std::vector<std::unique_ptr<btRigidBody>> bodies;

	Scene()
	{
		world.setGravity(btVector3(0, 0, -9.81));
		add(&groundShape, 0.0, btVector3(0, 0, 0));
		for (int i = 0; i < 10; ++i)
			add(&boxShape, 1.0, btVector3(0, 0, 0.5 + i));
	}
	~Scene()
	{
		for (auto &b : bodies)
			world.removeRigidBody(b.get());
	}
	void add(btCollisionShape *shape, double mass, const btVector3 &at)
	{
		btVector3 inertia(0, 0, 0);
		if (mass > 0)
			shape->calculateLocalInertia(mass, inertia);
		btRigidBody::btRigidBodyConstructionInfo info(mass, nullptr, shape, inertia);
		info.m_startWorldTransform.setIdentity();
		info.m_startWorldTransform.setOrigin(at);
		bodies.emplace_back(new btRigidBody(info));
		bodies.back()->setActivationState(DISABLE_DEACTIVATION);
		world.addRigidBody(bodies.back().get());
	}
	double topHeight() const { return bodies.back()->getWorldTransform().getOrigin().z(); }
};

} // namespace

int main(int argc, char **argv)
{
	const char *spec = argc > 1 ? argv[1] : "pgs:iters=20";
	lk_solver_config config;
	char err[256];
	if (lk_config_parse(spec, &config, err, sizeof err) != LK_OK) {
		std::fprintf(stderr, "swap_solver: %s\n", err);
		return 2;
	}

	Scene bullet, lcpkit;
	// same iterations for both; Bullet's split-impulse position pass also runs m_numIterations sweeps
	bullet.world.getSolverInfo().m_numIterations = config.max_iterations;
	lcpkit.world.getSolverInfo().m_numIterations = config.max_iterations;

	lk::BulletSolver solver(config); // outlives the world's use of it
	if (solver.error()[0]) {
		std::fprintf(stderr, "swap_solver: %s\n", solver.error());
		return 1;
	}
	solver.setResiduals(true); // RES in the statistics (off by default: it costs two evaluations a solve)
	lcpkit.world.setConstraintSolver(&solver); // the swap

	for (int step = 0; step < 120; ++step) {
		bullet.world.stepSimulation(1.0 / 60.0, 1, 1.0 / 60.0);
		lcpkit.world.stepSimulation(1.0 / 60.0, 1, 1.0 / 60.0);
	}
	const lk_engine_step_stats &s = solver.lastStepStats();
	std::printf("top box after 2 s: bullet-si %.6f m, %s %.6f m (expected 9.5)\n", bullet.topHeight(), spec,
	            lcpkit.topHeight());
	std::printf("last step: %d rows (%d normal, %d friction), %d iterations, RES %.3e -> %.3e, "
	            "solve %.1f us, convert %.1f us, fallbacks %lld\n",
	            s.rows, s.rows_by_kind[LK_ROW_NORMAL], s.rows_by_kind[LK_ROW_FRICTION], s.iterations,
	            s.res_initial, s.res_final, 1e6 * s.solve_seconds, 1e6 * s.convert_seconds,
	            (long long)solver.fallbacks());
	lcpkit.world.setConstraintSolver(&lcpkit.bulletSolver); // hand the world its own solver back
	return 0;
}

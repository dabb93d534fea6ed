/* lk::BulletSolver in a plain Bullet world: what the world's btContactSolverInfo sets (iterations, random
 * order, SOR relaxation) reaches the lcpkit method unless the spec says otherwise, and the settings the adapter
 * cannot honour are reported once each. lk::BulletMultiBodySolver in a multibody world. C++ because the
 * adapters are C++ classes. */
#include "lcpkit/bullet_multibody_solver.hpp"
#include "lcpkit/bullet_solver.hpp"

#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <BulletDynamics/Featherstone/btMultiBodyJointMotor.h>
#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>
#include <btBulletDynamicsCommon.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

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

/* A body that never sleeps, owned by bodies. */
void addBody(btDiscreteDynamicsWorld &world, std::vector<std::unique_ptr<btRigidBody>> &bodies,
             btCollisionShape *shape, double mass, const btVector3 &at)
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

/* A body of a mass near the least a double holds (1e-300 kg), whose rows lcpkit cannot solve: its island falls
 * back to Bullet's own iterations. */
void addFeatherweight(btDiscreteDynamicsWorld &world, std::vector<std::unique_ptr<btRigidBody>> &bodies,
                      btCollisionShape *shape, const btVector3 &at)
{
	btRigidBody::btRigidBodyConstructionInfo info(1e-300, nullptr, shape, btVector3(1e-302, 1e-302, 1e-302));
	info.m_startWorldTransform.setIdentity();
	info.m_startWorldTransform.setOrigin(at);
	bodies.emplace_back(new btRigidBody(info));
	bodies.back()->setActivationState(DISABLE_DEACTIVATION);
	world.addRigidBody(bodies.back().get());
}

/* A Bullet world of a kind with its own solver, and what it is made of. */
template <class Solver, class Dynamics>
struct WorldOf {
	btDefaultCollisionConfiguration collision;
	btCollisionDispatcher dispatcher{&collision};
	btDbvtBroadphase broadphase;
	Solver own;
	Dynamics world{&dispatcher, &broadphase, &own, &collision};
};
using World = WorldOf<btSequentialImpulseConstraintSolver, btDiscreteDynamicsWorld>;
using MultiBodyWorld = WorldOf<btMultiBodyConstraintSolver, btMultiBodyDynamicsWorld>;

/* A ground plane and a stack of three unit boxes. */
struct Scene : World {
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
		addBody(world, bodies, shape, mass, btVector3(0, 0, z));
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

/* An asymmetric box spinning about an axis off its principal ones, held at its centre by a ball joint (so that
 * lcpkit has rows to solve in the box's island), with gravity off. The joint's rows act on the centre alone and
 * are solved exactly by either solver; what turns the spin is the gyroscopic term of the body's setting, which
 * lk::BulletSolver's own making of the solver bodies (RigidRows::bodies) applies as Bullet's does: the box's
 * angular velocity after two seconds is Bullet's own to the bit, and has precessed. Each of the three gyroscopic
 * settings, and none. */
void test_gyroscopic_term_as_bullet(void **)
{
	const int flags[] = {BT_ENABLE_GYROSCOPIC_FORCE_IMPLICIT_BODY, BT_ENABLE_GYROSCOPIC_FORCE_IMPLICIT_WORLD,
	                     BT_ENABLE_GYROSCOPIC_FORCE_EXPLICIT, 0};
	for (int flag : flags) {
		btVector3 w[2];
		for (int k = 0; k < 2; ++k) {
			World wd;
			wd.world.setGravity(btVector3(0, 0, 0));
			btBoxShape shape(btVector3(0.1, 0.4, 0.9));
			std::vector<std::unique_ptr<btRigidBody>> bodies;
			addBody(wd.world, bodies, &shape, 2.0, btVector3(0, 0, 3));
			btRigidBody &box = *bodies[0];
			box.setFlags(flag);
			box.setWorldTransform(btTransform(btQuaternion(btVector3(1, 2, 3).normalized(), 0.7), btVector3(0, 0, 3)));
			box.setAngularVelocity(btVector3(4, -1, 2.5));
			btPoint2PointConstraint pin(box, btVector3(0, 0, 0));
			wd.world.addConstraint(&pin);
			lk::BulletSolver solver("pgs");
			if (k == 1)
				wd.world.setConstraintSolver(&solver);
			for (int i = 0; i < 120; ++i)
				wd.world.stepSimulation(1.0 / 60.0, 1, 1.0 / 60.0);
			w[k] = box.getAngularVelocity();
			assert_true(box.getLinearVelocity().length() < 1e-9);
			wd.world.removeConstraint(&pin);
			wd.world.setConstraintSolver(&wd.own);
			wd.world.removeRigidBody(&box);
		}
		assert_true(w[1] == w[0]);
		/* the spin has turned (it would not without the term: a box free of it keeps its angular velocity; the
		 * explicit term, capped by m_maxGyroscopicForce, turns it least, by 0.03 rad) */
		const double turned = w[0].angle(btVector3(4, -1, 2.5));
		if (flag != 0)
			assert_true(turned > 0.02);
		else
			assert_true(turned < 1e-12);
	}
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
	assert_int_equal(count(notes, "SOLVER_RANDMIZE_ORDER not applied: the spec sets its order, natural"), 1);
	assert_int_equal(count(notes, "m_sor = 1.3 not applied"), 1);
	assert_int_equal(count(notes, "\n"), 2);

	/* gsp and esp are orders (staggered schedules): the random order does not replace them, and m_sor, which
	 * sets plain PGS's relaxation, does not relax them; both said */
	const char *staggered[2] = {"gsp", "esp"};
	for (int k = 0; k < 2; ++k) {
		lk::BulletSolver st(staggered[k]);
		sc.world.setConstraintSolver(&st);
		sc.step(5);
		assert_int_equal(st.lastConfig().order, k ? LK_ORDER_ESP : LK_ORDER_GSP);
		assert_true(st.lastConfig().sor_w == 1.0);
		const std::string n = st.notes();
		assert_int_equal(count(n, "SOLVER_RANDMIZE_ORDER not applied: the spec sets its order, "), 1);
		assert_int_equal(count(n, std::string("its order, ").append(staggered[k]).c_str()), 1);
		assert_int_equal(count(n, "m_sor = 1.3 not applied: it sets the relaxation of \"pgs\" without w= only "
		                          "(gsp and esp stagger their own sweeps"),
		                 1);
		assert_int_equal(st.lastStepStats().notes_total, 2);
		sc.world.setConstraintSolver(&solver);
	}

	/* auto draws a new random order every sweep, as Bullet's iterations do, unless its spec sets shuffle= */
	lk::BulletSolver a("auto");
	sc.world.setConstraintSolver(&a);
	sc.step(5);
	assert_int_equal(a.lastConfig().adapt.shuffle, 1);
	assert_int_equal(a.config().adapt.shuffle, 0);
	assert_int_equal(a.setSpec("auto:shuffle=4"), LK_OK);
	sc.step(5);
	assert_int_equal(a.lastConfig().adapt.shuffle, 4);
	assert_int_equal(count(a.notes(), "SOLVER_RANDMIZE_ORDER not applied: the spec sets its shuffle="), 1);
	info.m_solverMode &= ~SOLVER_RANDMIZE_ORDER;
	assert_int_equal(a.setSpec("auto"), LK_OK);
	sc.step(5);
	assert_int_equal(a.lastConfig().adapt.shuffle, 0);
	sc.world.setConstraintSolver(&solver);
}

/* stderr into a file while f runs; returns what was written. */
template <typename F> std::string stderrOf(F f)
{
	char path[] = "/tmp/lk-bullet-stderr-XXXXXX";
	const int fd = mkstemp(path);
	assert_true(fd >= 0);
	std::fflush(stderr);
	const int saved = dup(2);
	dup2(fd, 2);
	f();
	std::fflush(stderr);
	dup2(saved, 2);
	close(saved);
	std::string out;
	char buf[4096];
	lseek(fd, 0, SEEK_SET);
	for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
		out.append(buf, (size_t)n);
	close(fd);
	unlink(path);
	return out;
}

/* A spec the constructor cannot read is said on stderr (there is no status to return), with what runs instead,
 * kept in notes() and counted; LCPKIT_QUIET=1 or setQuiet silences the line. */
void test_misread_spec_said(void **)
{
	std::unique_ptr<lk::BulletSolver> solver;
	std::string err = stderrOf([&] { solver.reset(new lk::BulletSolver("pgs,friction=cone")); });
	assert_int_equal(count(err, "\n"), 1);
	assert_int_equal(count(err, "lcpkit: lk::BulletSolver(\"pgs,friction=cone\"): unknown solver "
	                            "'pgs,friction=cone': options follow a colon, as in 'pgs:friction=cone'; it runs "
	                            "\"pgs\" instead"),
	                 1);
	assert_int_equal(count(solver->notes(), "options follow a colon"), 1);
	assert_int_equal(solver->config().method, LK_METHOD_PGS);
	Scene sc;
	sc.world.setConstraintSolver(solver.get());
	sc.step(2);
	assert_int_equal(solver->lastStepStats().notes_total, 1);
	setenv("LCPKIT_QUIET", "1", 1);
	err = stderrOf([&] { lk::BulletSolver quiet("pgz"); });
	unsetenv("LCPKIT_QUIET");
	assert_string_equal(err.c_str(), "");
}

/* Residuals on request: by default the statistics measure none (RES NaN, lcpkit's methods with measure=0);
 * setResiduals(true) measures them around the solve, which itself still measures nothing (measure=0: the same
 * impulses, and a solver time that compares with Bullet's iterations), and a spec's own measure= is kept. */
void test_statistics_on_request(void **)
{
	Scene sc;
	lk::BulletSolver solver("pgs");
	sc.world.setConstraintSolver(&solver);
	assert_false(solver.residuals());
	sc.step(5);
	assert_true(std::isnan(solver.lastStepStats().res_final) && std::isnan(solver.lastStepStats().res_initial));
	assert_int_equal(solver.lastConfig().measure, 0);
	assert_true(solver.lastStepStats().rows > 0);
	solver.setResiduals(true);
	sc.step(1);
	assert_true(std::isfinite(solver.lastStepStats().res_final) && solver.lastStepStats().res_final >= 0);
	assert_true(std::isfinite(solver.lastStepStats().res_initial) && solver.lastStepStats().res_initial >= 0);
	assert_int_equal(solver.lastConfig().measure, 0);
	solver.setResiduals(false);
	assert_int_equal(solver.setSpec("pgs:measure=1"), LK_OK);
	sc.step(1);
	assert_true(std::isfinite(solver.lastStepStats().res_final));
	/* the statistics change nothing: auto's stack with and without them, the same velocities to the bit */
	Scene a, b;
	lk::BulletSolver sa("auto"), sb("auto");
	sb.setResiduals(true);
	a.world.setConstraintSolver(&sa);
	b.world.setConstraintSolver(&sb);
	a.step(30);
	b.step(30);
	assert_true(std::isnan(sa.lastStepStats().res_final) && std::isfinite(sb.lastStepStats().res_final));
	for (size_t k = 0; k < a.bodies.size(); ++k) {
		const btVector3 va = a.bodies[k]->getLinearVelocity(), vb = b.bodies[k]->getLinearVelocity();
		const btVector3 wa = a.bodies[k]->getAngularVelocity(), wb = b.bodies[k]->getAngularVelocity();
		assert_memory_equal(&va[0], &vb[0], 3 * sizeof(btScalar));
		assert_memory_equal(&wa[0], &wb[0], 3 * sizeof(btScalar));
	}
}

/* A body of 1e-300 kg in a plain Bullet world makes rows the core cannot hold (M^-1 J^T overflows): its
 * island falls back to Bullet's iterations every step, which the solver says once on stderr and counts. */
void test_fallback_said_once(void **)
{
	Scene sc;
	btBoxShape tiny(btVector3(0.1, 0.1, 0.1));
	addFeatherweight(sc.world, sc.bodies, &tiny, btVector3(3, 0, 0.1));
	lk::BulletSolver solver("pgs");
	sc.world.setConstraintSolver(&solver);
	const std::string err = stderrOf([&] { sc.step(120); });
	assert_true(solver.fallbacks() > 0);
	assert_int_equal(count(err, "\n"), 1);
	assert_int_equal(count(err, "lcpkit: step "), 1);
	assert_int_equal(count(err, ": an island fell back to Bullet's own iterations: "), 1);
	assert_int_equal(count(solver.notes(), "fell back to Bullet's own iterations"), 1);
	assert_int_equal(solver.lastStepStats().notes_total, 1);
}

/* A NaN velocity set on one box of a stack: under Bullet's solver it spreads to the boxes it touches; under
 * lk::BulletSolver the box is frozen (stopped where it is, its velocity set to 0, its rows left out of that
 * step's solve), the rest of the world is solved, nothing falls back, and the note says so once. From the next
 * step on the stopped box is an ordinary body at rest again. */
void test_nan_velocity_contained(void **)
{
	for (int lcpkit = 0; lcpkit < 2; ++lcpkit) {
		Scene sc;
		sc.add(&sc.boxShape, 1.0, 0.5); /* a box beside the stack, 3 m away */
		sc.bodies.back()->getWorldTransform().setOrigin(btVector3(3, 0, 0.5));
		lk::BulletSolver solver("pgs");
		if (lcpkit)
			sc.world.setConstraintSolver(&solver);
		sc.step(30);
		btRigidBody *bad = sc.bodies[2].get(); /* the middle box */
		const btVector3 at = bad->getWorldTransform().getOrigin();
		bad->setLinearVelocity(btVector3(NAN, 0, 0));
		lk_engine_step_stats first;
		const std::string err = stderrOf([&] {
			sc.step(1);
			first = solver.lastStepStats();
			sc.step(29);
		});
		int finite = 0;
		for (auto &b : sc.bodies)
			finite += std::isfinite(b->getWorldTransform().getOrigin().z()) &&
			          std::isfinite(b->getLinearVelocity().x());
		if (!lcpkit) {
			/* Bullet's own: the NaN reaches the boxes above and below (the ground and the far box keep theirs) */
			assert_true(finite <= 3);
			continue;
		}
		assert_int_equal(finite, 5);
		assert_int_equal(solver.fallbacks(), 0);
		assert_int_equal(first.bodies_frozen, 1);
		assert_int_equal(first.fallback, 0);
		assert_true(first.rows_left_out >= 6); /* its contacts with the boxes above and below */
		assert_int_equal(solver.lastStepStats().bodies_frozen, 0);
		assert_true((bad->getWorldTransform().getOrigin() - at).length() < 0.01);
		assert_int_equal(count(err, "\n"), 2);
		assert_int_equal(count(err, "1 body frozen (body "), 1);
		if (count(err, "its velocity is not finite): stopped where it is, its velocity set to 0") != 1)
			fail_msg("stderr: %s", err.c_str());
		assert_int_equal(count(err, "rows left out of an island's solve"), 1);
		/* the box on top rests on it, and the stack stands */
		assert_true(std::fabs(sc.bodies[3]->getWorldTransform().getOrigin().z() - (at.z() + 1.0)) < 0.02);
		assert_true(solver.lastStepStats().notes_total == 2);
	}
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

/* A world of small boxes and one ball joint with Bullet's own solver (50 iterations), taken apart in order. */
struct JointWorld : World {
	btBoxShape boxShape{btVector3(0.1, 0.1, 0.1)};
	std::vector<std::unique_ptr<btRigidBody>> bodies;
	std::unique_ptr<btPoint2PointConstraint> joint;

	JointWorld()
	{
		world.setGravity(btVector3(0, 0, -9.81));
		world.getSolverInfo().m_numIterations = 50;
	}
	~JointWorld()
	{
		world.setConstraintSolver(&own);
		world.removeConstraint(joint.get());
		for (auto &b : bodies)
			world.removeRigidBody(b.get());
	}
};

/* A 2 kg box hanging 0.5 m under a soft ball joint to the world (CFM 0.01, joint feedback on). */
struct Hanging : JointWorld {
	btJointFeedback feedback;

	Hanging()
	{
		addBody(world, bodies, &boxShape, 2.0, btVector3(0, 0, 4.5));
		joint.reset(new btPoint2PointConstraint(*bodies[0], btVector3(0, 0, 0.5)));
		joint->setParam(BT_CONSTRAINT_CFM, 0.01);
		joint->setJointFeedback(&feedback);
		world.addConstraint(joint.get());
	}
	void step(int n)
	{
		for (int i = 0; i < n; ++i)
			world.stepSimulation(1.0 / 60.0, 1, 1.0 / 60.0);
	}
	double z() const { return bodies[0]->getWorldTransform().getOrigin().z(); }
};

/* A world of what only Bullet's own API sets: a kinematic platform carrying a box, a box with anisotropic
 * friction sliding across the ground and a box sunk 10 cm into it (Bullet's split impulse pushes it out), on the
 * solver given. */
struct ContactScene : World {
	btStaticPlaneShape groundShape{btVector3(0, 0, 1), 0};
	btBoxShape boxShape{btVector3(0.5, 0.5, 0.5)};
	btBoxShape smallShape{btVector3(0.3, 0.3, 0.3)};
	btBoxShape platformShape{btVector3(1.0, 1.0, 0.1)};
	btDefaultMotionState platformMotion;
	std::unique_ptr<btRigidBody> platform;
	std::vector<std::unique_ptr<btRigidBody>> bodies;

	ContactScene(btConstraintSolver *solver, int mode)
	{
		world.setGravity(btVector3(0, 0, -9.81));
		world.getSolverInfo().m_solverMode |= mode;
		if (solver)
			world.setConstraintSolver(solver);
		addBody(world, bodies, &groundShape, 0.0, btVector3(0, 0, 0));
		btRigidBody::btRigidBodyConstructionInfo pi(0.0, &platformMotion, &platformShape);
		platformMotion.m_graphicsWorldTrans.setOrigin(btVector3(0, 5, 1.0));
		platform.reset(new btRigidBody(pi));
		platform->setCollisionFlags(platform->getCollisionFlags() | btCollisionObject::CF_KINEMATIC_OBJECT);
		platform->setActivationState(DISABLE_DEACTIVATION);
		world.addRigidBody(platform.get());
		addBody(world, bodies, &smallShape, 1.0, btVector3(0, 5, 1.4));
		addBody(world, bodies, &smallShape, 1.0, btVector3(3, 0, 0.3));
		bodies.back()->setLinearVelocity(btVector3(1.5, 1.5, 0));
		bodies.back()->setAnisotropicFriction(btVector3(1.0, 0.2, 1.0), btCollisionObject::CF_ANISOTROPIC_FRICTION);
		addBody(world, bodies, &boxShape, 1.0, btVector3(-3, 0, 0.4));
	}
	~ContactScene()
	{
		world.setConstraintSolver(&own);
		world.removeRigidBody(platform.get());
		for (auto &b : bodies)
			world.removeRigidBody(b.get());
	}
	void step(int k)
	{
		/* the platform moves along x at 0.5 m/s (Bullet takes a kinematic body's velocity from its motion) */
		platformMotion.m_graphicsWorldTrans.setOrigin(btVector3(0.5 * (k + 1) / 60.0, 5, 1.0));
		world.stepSimulation(1.0 / 60.0, 1, 1.0 / 60.0);
	}
};

/* Bullet's own solver that also maps its contact rows, as Bullet's setup made them for its iterations, to the
 * problem's terms by hand (J from the row; c = J u* + rhs / jacDiagABInv, s = cfm / jacDiagABInv, so that
 * Bullet's update of the row is lcpkit's; the friction and rolling rows' findex the contact's normal row),
 * before its iterations run: the reference the adapter's rows made from the manifold points must equal. */
struct RowProbe : btSequentialImpulseConstraintSolver {
	struct Row {
		double J[2][6], c, s, lo, hi, mu, warm;
		int body[2], findex;
	};
	std::vector<Row> rows;
	btScalar solveGroupCacheFriendlyIterations(btCollisionObject **bodies, int numBodies, btPersistentManifold **m,
	                                           int numManifolds, btTypedConstraint **constraints, int numConstraints,
	                                           const btContactSolverInfo &info, btIDebugDraw *dd) override
	{
		rows.clear();
		std::vector<int> lk(m_tmpSolverBodyPool.size(), -1);
		for (int i = 0, n = 0; i < m_tmpSolverBodyPool.size(); ++i)
			if (m_tmpSolverBodyPool[i].m_originalBody)
				lk[i] = n++;
		const btConstraintArray *pools[3] = {&m_tmpSolverContactConstraintPool, &m_tmpSolverContactFrictionConstraintPool,
		                                     &m_tmpSolverContactRollingFrictionConstraintPool};
		for (int k = 0; k < 3; ++k)
			for (int j = 0; j < pools[k]->size(); ++j) {
				const btSolverConstraint &b = (*pools[k])[j];
				Row r;
				const int ids[2] = {b.m_solverBodyIdA, b.m_solverBodyIdB};
				const btVector3 *lin[2] = {&b.m_contactNormal1, &b.m_contactNormal2},
				                *ang[2] = {&b.m_relpos1CrossNormal, &b.m_relpos2CrossNormal};
				double ju = 0.0, energy = 0.0;
				for (int side = 0; side < 2; ++side) {
					const btSolverBody &sb = m_tmpSolverBodyPool[ids[side]];
					r.body[side] = lk[ids[side]];
					const btVector3 v = sb.m_linearVelocity + sb.m_externalForceImpulse,
					                w = sb.m_angularVelocity + sb.m_externalTorqueImpulse;
					for (int c = 0; c < 3; ++c) {
						r.J[side][c] = (*lin[side])[c];
						r.J[side][3 + c] = (*ang[side])[c];
					}
					if (!sb.m_originalBody)
						continue;
					ju += lin[side]->dot(v) + ang[side]->dot(w);
					/* J M^-1 J^T with the problem's masses (the factors applied: docs/bullet.md) */
					const btVector3 F = sb.m_angularFactor, L = sb.m_linearFactor;
					const btVector3 a = (*ang[side]) * F;
					energy += ((*lin[side]) * L * sb.m_invMass).dot(*lin[side]) +
					          (sb.m_originalBody->getInvInertiaTensorWorld() * a).dot(a);
				}
				/* a row no side can move along (a direction its factors lock) moves nothing: left out */
				if (!(energy + b.m_cfm / b.m_jacDiagABInv > 1e-9 / b.m_jacDiagABInv))
					continue;
				r.c = ju + b.m_rhs / b.m_jacDiagABInv;
				r.s = b.m_cfm / b.m_jacDiagABInv;
				r.findex = k == 0 ? -1 : b.m_frictionIndex;
				r.lo = k == 0 ? 0.0 : -INFINITY;
				r.hi = INFINITY;
				r.mu = k == 0 ? 0.0 : b.m_friction;
				r.warm = b.m_appliedImpulse;
				rows.push_back(r);
			}
		return btSequentialImpulseConstraintSolver::solveGroupCacheFriendlyIterations(bodies, numBodies, m, numManifolds,
		                                                                               constraints, numConstraints, info, dd);
	}
};

/* Bodies of every contact feature Bullet's setup reads of a point or an object, on the ground: a capsule with
 * rolling and spinning friction, a bouncing cylinder and sphere (restitution), a box with contact stiffness and
 * damping (the point's own CFM and ERP), a box with a friction anchor, a slow-friction box sliding, a ball with
 * anisotropic rolling friction, a spinning bar (implicit gyroscopic torque), a box locked to a plane by its
 * factors, a box under an applied torque and force. */
void addFeatureBodies(World &w, std::vector<std::unique_ptr<btCollisionShape>> &shapes,
                      std::vector<std::unique_ptr<btRigidBody>> &bodies)
{
	auto add = [&](btCollisionShape *shape, double mass, const btVector3 &at) {
		shapes.emplace_back(shape);
		addBody(w.world, bodies, shape, mass, at);
		return bodies.back().get();
	};
	add(new btStaticPlaneShape(btVector3(0, 0, 1), 0), 0.0, btVector3(0, 0, 0));
	btRigidBody *b = add(new btCapsuleShapeZ(0.2, 0.6), 1.0, btVector3(0, 3, 0.2));
	b->getWorldTransform().setRotation(btQuaternion(btVector3(1, 0, 0), 1.5));
	b->setRollingFriction(0.05);
	b->setSpinningFriction(0.02);
	b->setAngularVelocity(btVector3(0, 0, 2));
	b = add(new btCylinderShapeZ(btVector3(0.3, 0.3, 0.2)), 2.0, btVector3(2, 3, 0.2));
	b->setLinearVelocity(btVector3(1, 0.5, -2));
	b->setRestitution(0.5);
	b = add(new btSphereShape(0.25), 0.5, btVector3(-2, 3, 0.25));
	b->setLinearVelocity(btVector3(0, 2, -2));
	b->setRestitution(0.7);
	b = add(new btBoxShape(btVector3(0.5, 0.5, 0.5)), 1.0, btVector3(0, 0, 0.5));
	b->setContactStiffnessAndDamping(3000, 100);
	b = add(new btBoxShape(btVector3(0.3, 0.3, 0.3)), 1.0, btVector3(2, 0, 0.3));
	b->setCollisionFlags(b->getCollisionFlags() | btCollisionObject::CF_HAS_FRICTION_ANCHOR);
	b->setLinearVelocity(btVector3(0.5, 0, 0));
	b = add(new btBoxShape(btVector3(0.3, 0.3, 0.3)), 1.0, btVector3(-2, 0, 0.3));
	b->setFriction(0.1);
	b->setLinearVelocity(btVector3(1, 1, 0));
	b = add(new btSphereShape(0.3), 1.0, btVector3(-4, 0, 0.3));
	b->setAnisotropicFriction(btVector3(1, 0.1, 1), btCollisionObject::CF_ANISOTROPIC_ROLLING_FRICTION);
	b->setRollingFriction(0.1);
	b->setAngularVelocity(btVector3(3, 3, 0));
	b = add(new btBoxShape(btVector3(0.5, 0.2, 0.1)), 1.0, btVector3(0, -3, 0.1));
	b->setAngularVelocity(btVector3(0, 0, 20));
	b = add(new btBoxShape(btVector3(0.3, 0.3, 0.3)), 1.0, btVector3(2, -3, 0.3));
	b->setLinearFactor(btVector3(1, 0, 1));
	b->setAngularFactor(btVector3(0, 1, 0));
	b->setLinearVelocity(btVector3(1, 0, 0));
	b = add(new btBoxShape(btVector3(0.2, 0.2, 0.2)), 1.0, btVector3(-2, -3, 0.2));
	b->applyTorqueImpulse(btVector3(0.1, 0.2, 0.3));
	b->applyCentralForce(btVector3(5, 0, 0));
}

/* The adapter's contact rows are the ones Bullet's own setup makes, mapped (RowProbe), for every feature of
 * addFeatureBodies, with one friction direction along the sliding, two, and two cached ones, at the first, fifth
 * and fifteenth step of worlds that stepped alike on Bullet's own solver before: J, bounds, friction index and
 * coefficient and warm start to the bit (the sides with a body), targets and CFM to 1e-12. */
void test_contact_rows_of_every_feature(void **)
{
	const int modes[3] = {0, SOLVER_USE_2_FRICTION_DIRECTIONS,
	                      SOLVER_USE_2_FRICTION_DIRECTIONS | SOLVER_ENABLE_FRICTION_DIRECTION_CACHING |
	                              SOLVER_DISABLE_VELOCITY_DEPENDENT_FRICTION_DIRECTION};
	const int at[3] = {1, 5, 15};
	int compared = 0, rolling = 0;
	double dc = 0.0, ds = 0.0;
	for (int m = 0; m < 3; ++m)
		for (int t = 0; t < 3; ++t) {
			World a, b;
			RowProbe probe;
			lk::BulletSolver lk("pgs");
			lk.setRecording(true);
			std::vector<std::unique_ptr<btCollisionShape>> shapes[2];
			std::vector<std::unique_ptr<btRigidBody>> bodies[2];
			World *w[2] = {&a, &b};
			for (int k = 0; k < 2; ++k) {
				w[k]->world.setGravity(btVector3(0, 0, -9.81));
				w[k]->world.getSolverInfo().m_solverMode |= modes[m];
				addFeatureBodies(*w[k], shapes[k], bodies[k]);
			}
			a.world.setConstraintSolver(&probe);
			for (int k = 0; k < at[t]; ++k) {
				if (k + 1 == at[t])
					b.world.setConstraintSolver(&lk);
				a.world.stepSimulation(1.0 / 60.0, 1, 1.0 / 60.0);
				b.world.stepSimulation(1.0 / 60.0, 1, 1.0 / 60.0);
			}
			lk_problem *p = nullptr;
			assert_int_equal(lk.recordedProblem(&p), LK_OK);
			const int n = lk_problem_row_count(p);
			assert_int_equal(n, (int)probe.rows.size());
			for (int i = 0; i < n; ++i) {
				lk_row_def d;
				assert_int_equal(lk_problem_get_row(p, i, &d), LK_OK);
				const RowProbe::Row &r = probe.rows[(size_t)i];
				for (int side = 0; side < 2; ++side) {
					assert_int_equal(d.body[side] < 0 ? -1 : d.body[side], r.body[side] < 0 ? -1 : r.body[side]);
					for (int c = 0; side < 2 && r.body[side] >= 0 && c < 6; ++c)
						assert_true(d.J[side][c] == r.J[side][c]);
				}
				assert_int_equal(d.findex, r.findex);
				assert_true(d.lo == r.lo && d.hi == r.hi && d.mu == r.mu);
				assert_true(lk_problem_lambda(p)[i] == r.warm);
				dc = std::fmax(dc, std::fabs(d.c - r.c) / (1.0 + std::fabs(r.c)));
				ds = std::fmax(ds, std::fabs(d.s - r.s) / (1e-12 + std::fabs(r.s)));
				rolling += r.findex >= 0 && r.J[0][0] == 0 && r.J[0][1] == 0 && r.J[0][2] == 0;
			}
			compared += n;
			lk_problem_destroy(p);
			a.world.setConstraintSolver(&a.own);
			for (int k = 0; k < 2; ++k)
				for (auto &body : bodies[k])
					w[k]->world.removeRigidBody(body.get());
		}
	std::printf("%d rows compared (%d of rolling and spinning friction): targets apart by %.1e, CFM by %.1e\n", compared,
	            rolling, dc, ds);
	assert_true(compared > 300 && rolling > 20);
	assert_true(dc < 1e-12 && ds < 1e-12);
}

/* lk::BulletSolver makes the contacts' rows from the manifold points. With lcpkit's PGS in Bullet's order (no
 * relaxation, Bullet's iteration count, its warm start) it is Bullet's own solver, so a world stepping with it
 * moves as one stepping with Bullet's, step after step: the rows, the split impulse's rows, and the impulses
 * written back to the points (the next step's warm start, the cached friction directions) are Bullet's. With
 * Bullet's default of one friction direction along the sliding velocity, and with two fixed directions that
 * the first step writes to the points and the later ones read (SOLVER_ENABLE_FRICTION_DIRECTION_CACHING). */
void test_contact_rows_made_by_lcpkit(void **)
{
	const int modes[2] = {0, SOLVER_USE_2_FRICTION_DIRECTIONS | SOLVER_ENABLE_FRICTION_DIRECTION_CACHING |
	                             SOLVER_DISABLE_VELOCITY_DEPENDENT_FRICTION_DIRECTION};
	for (int m = 0; m < 2; ++m) {
		lk::BulletSolver lk("pgs:order=natural");
		ContactScene bullet(nullptr, modes[m]), mine(&lk, modes[m]);
		double apart = 0.0;
		for (int k = 0; k < 40; ++k) {
			bullet.step(k);
			mine.step(k);
			for (size_t i = 0; i < bullet.bodies.size(); ++i) {
				if (i == 3 && k >= 12)
					continue; /* below */
				const btRigidBody &a = *bullet.bodies[i], &b = *mine.bodies[i];
				const btVector3 dx = a.getWorldTransform().getOrigin() - b.getWorldTransform().getOrigin();
				const btVector3 dv = a.getLinearVelocity() - b.getLinearVelocity();
				const btVector3 dw = a.getAngularVelocity() - b.getAngularVelocity();
				apart = std::fmax(apart, std::fmax(dx.length(), std::fmax(dv.length(), dw.length())));
			}
		}
		assert_int_equal(lk.fallbacks(), 0);
		/* what happened: the box rode the platform along x, the sunk box came up (compared while the split impulse
		 * lifts it: once up, its points' normal impulses fall to zero within a sweep under friction, where Bullet
		 * leaves a friction row alone and the LCP clamps it to zero, test_bullet.c's match of the impulses), and
		 * the sliding box, launched along (1, 1), turned towards y, across which its friction is a fifth */
		const double carried = mine.bodies[1]->getWorldTransform().getOrigin().x();
		const double raised = mine.bodies[3]->getWorldTransform().getOrigin().z();
		const btVector3 &v = mine.bodies[2]->getLinearVelocity();
		std::printf("friction mode %d: lcpkit's world and Bullet's %.1e apart over 40 steps; the carried box at x = "
		            "%.3f, the sunk box at z = %.4f, the sliding box at (%.3f, %.3f) m/s\n",
		            m, apart, carried, raised, v.x(), v.y());
		assert_true(apart < 1e-9);
		assert_true(carried > 0.2 && mine.bodies[1]->getWorldTransform().getOrigin().z() > 1.3);
		assert_true(raised > 0.49);
		assert_true(v.y() > 1.2 * v.x() && v.x() > 0.0);
	}
}

/* lk::BulletSolver makes the joints' rows itself from their getInfo2 (convertJoints). A soft joint's sag
 * depends on its CFM mapping as Bullet's does (s = CFM J M^-1 J^T: at rest 0.5 m under the anchor the sag is
 * s m g h^2 / erp = 0.14 mm), and Bullet's finish reads lcpkit's impulses and Jacobians for the joint feedback
 * (the weight, 19.62 N up on the box). At rest both solvers agree on both. When lcpkit falls back to Bullet's
 * iterations, Bullet's own rows are made first: they hold the box as Bullet's solver alone does. */
void test_joint_rows_made_by_lcpkit(void **)
{
	Hanging a, b, c;
	lk::BulletSolver solver("pgs");
	b.world.setConstraintSolver(&solver);
	a.step(120);
	b.step(120);
	const double sag = 4.5 - a.z();
	const btVector3 fa = a.feedback.m_appliedForceBodyA, fb = b.feedback.m_appliedForceBodyA;
	print_message("sag %.6e (Bullet) and %.6e (lcpkit) m; feedback %.9f and %.9f N\n", sag, 4.5 - b.z(), fa.z(),
	              fb.z());
	assert_true(sag > 1.2e-4 && sag < 1.6e-4);
	assert_true(std::fabs(b.z() - a.z()) < 1e-9);
	assert_true(std::fabs(fa.z() - 2.0 * 9.81) < 1e-6);
	assert_true((fb - fa).length() < 1e-6);
	assert_int_equal(solver.fallbacks(), 0);

	/* a damped joint (Bullet's damping: the row's right-hand side takes back only part of the joint's velocity
	 * error) swinging: lcpkit's target carries the part that stays (error + (1 - damping) J v); both swing
	 * alike, and unlike the undamped joint. A ball joint sets its own damping in its getInfo2, which is the one
	 * Bullet applies, not the world's */
	Hanging d, e, f;
	lk::BulletSolver damped("pgs");
	e.world.setConstraintSolver(&damped);
	for (Hanging *h : {&d, &e}) {
		h->world.getSolverInfo().m_damping = 0.9;
		h->joint->m_setting.m_damping = 0.5;
		h->bodies[0]->setLinearVelocity(btVector3(1.0, 0, 0));
	}
	f.bodies[0]->setLinearVelocity(btVector3(1.0, 0, 0));
	d.step(30);
	e.step(30);
	f.step(30);
	const btVector3 pd = d.bodies[0]->getWorldTransform().getOrigin(), pe = e.bodies[0]->getWorldTransform().getOrigin(),
	                pf = f.bodies[0]->getWorldTransform().getOrigin();
	print_message("damped swing: (%.9f, %.9f) Bullet, (%.9f, %.9f) lcpkit, undamped (%.9f, %.9f)\n", pd.x(), pd.z(),
	              pe.x(), pe.z(), pf.x(), pf.z());
	assert_true((pe - pd).length() < 1e-6);
	assert_true((pf - pd).length() > 1e-4);
	assert_int_equal(damped.fallbacks(), 0);

	/* a body lcpkit refuses (a negative inverse inertia, which the joint at its centre of mass never meets):
	 * every step falls back to Bullet's iterations, which need Bullet's own rows */
	lk::BulletSolver fallback("pgs");
	c.world.setConstraintSolver(&fallback);
	btRigidBody &odd = *c.bodies[0];
	odd.setInvInertiaDiagLocal(btVector3(-1, -1, -1));
	odd.updateInertiaTensor();
	c.joint->setPivotA(btVector3(0, 0, 0));
	c.joint->setPivotB(btVector3(0, 0, 4.5));
	c.step(120);
	print_message("%lld fallbacks (%s): sag %.6e m\n", (long long)fallback.fallbacks(), fallback.fallbackReason(),
	              4.5 - c.z());
	assert_int_equal(fallback.fallbacks(), 120);
	assert_non_null(std::strstr(fallback.fallbackReason(), "not positive semidefinite"));
	assert_true(std::fabs(c.feedback.m_appliedForceBodyA.z() - 2.0 * 9.81) < 1e-6);
	assert_true(std::fabs(c.z() - a.z()) < 1e-9);
}

/* A 2 kg box hanging 0.5 m under a kinematic anchor by a ball joint; the anchor moves along x at 1 m/s. */
struct Towed : JointWorld {
	Towed()
	{
		addBody(world, bodies, &boxShape, 0.0, btVector3(0, 0, 5)); /* the anchor */
		bodies[0]->setCollisionFlags(bodies[0]->getCollisionFlags() | btCollisionObject::CF_KINEMATIC_OBJECT);
		addBody(world, bodies, &boxShape, 2.0, btVector3(0, 0, 4.5));
		/* the anchor's box and the hanging box overlap nowhere (0.3 m apart) */
		joint.reset(new btPoint2PointConstraint(*bodies[1], *bodies[0], btVector3(0, 0, 0.5), btVector3(0, 0, 0)));
		world.addConstraint(joint.get(), true);
	}
	void step(int n)
	{
		for (int i = 0; i < n; ++i) {
			/* Bullet takes a kinematic body's velocity from the change of its transform over the step */
			btTransform t = bodies[0]->getWorldTransform();
			t.setOrigin(t.getOrigin() + btVector3(1.0 / 60.0, 0, 0));
			bodies[0]->setWorldTransform(t);
			world.stepSimulation(1.0 / 60.0, 1, 1.0 / 60.0);
		}
	}
	btVector3 box() const { return bodies[1]->getWorldTransform().getOrigin(); }
};

/* A 1 kg box at rest on a 20-degree incline (the ground a plane, gravity tilted towards +x, mu 1): the friction
 * load of a step that holds it is m g sin(20) h down the slope. */
struct Incline : World {
	btStaticPlaneShape groundShape{btVector3(0, 0, 1), 0};
	btBoxShape boxShape{btVector3(0.5, 0.5, 0.5)};
	std::vector<std::unique_ptr<btRigidBody>> bodies;
	static constexpr double angle = 20.0 * M_PI / 180.0, g = 9.81, h = 1.0 / 60.0;

	std::unique_ptr<btGeneric6DofConstraint> joint;

	/* jointed: the box held by a joint that holds nothing (a 6-DOF joint whose every axis is free but one, whose
	 * motor has no force: a row with bounds 0) */
	explicit Incline(int mode, bool jointed = false)
	{
		world.setGravity(btVector3(g * std::sin(angle), 0, -g * std::cos(angle)));
		world.getSolverInfo().m_solverMode |= mode;
		addBody(world, bodies, &groundShape, 0.0, btVector3(0, 0, 0));
		addBody(world, bodies, &boxShape, 1.0, btVector3(0, 0, 0.5));
		for (auto &b : bodies)
			b->setFriction(1.0);
		if (jointed) {
			btTransform frame;
			frame.setIdentity();
			joint.reset(new btGeneric6DofConstraint(*bodies[1], frame, true));
			joint->setLinearLowerLimit(btVector3(1, 1, 1));
			joint->setLinearUpperLimit(btVector3(0, 0, 0));
			joint->setAngularLowerLimit(btVector3(1, 1, 1));
			joint->setAngularUpperLimit(btVector3(0, 0, 0));
			joint->getTranslationalLimitMotor()->m_enableMotor[2] = true;
			joint->getTranslationalLimitMotor()->m_maxMotorForce[2] = 0;
			world.addConstraint(joint.get());
		}
	}
	~Incline()
	{
		if (joint)
			world.removeConstraint(joint.get());
		world.setConstraintSolver(&own);
		for (auto &b : bodies)
			world.removeRigidBody(b.get());
	}
	/* The friction rows' impulses lambda[] (a warm start or a solution) as one force on the box, summed over
	 * its points: sum lambda_i t_i, t_i the row's direction on the box's side */
	static btVector3 frictionOnBox(const lk_problem *p, const double *lambda)
	{
		btVector3 f(0, 0, 0);
		for (int i = 0; i < lk_problem_row_count(p); ++i) {
			lk_row_def d;
			assert_int_equal(lk_problem_get_row(p, i, &d), LK_OK);
			if (d.kind != LK_ROW_FRICTION)
				continue;
			const int side = d.body[0] >= 0 ? 0 : 1;
			f += btVector3(d.J[side][0], d.J[side][1], d.J[side][2]) * lambda[i];
		}
		return f;
	}
};

/* Under auto the adapter warm-starts the friction rows as well as the normals (Bullet's own solver, and
 * lcpkit under any other spec, start them from zero): each point's friction impulse of the last step, a vector
 * in its contact plane, along this step's directions, damped by m_warmstartingFactor as the normal's warm
 * start is. At rest on the incline, with one friction direction (Bullet's default) and with two, the warm
 * start holds 0.85 of the load m g sin(20) h against the slope, and each point keeps its impulse along its
 * normal's plane axes (btPlaneSpace1): the basis a point Bullet's collision replaces comes with, whose
 * impulses it keeps. With this warm start auto's solve of a resting step stops within a few sweeps. A box a
 * joint holds starts its friction from zero, as under Bullet's solver. */
void test_friction_warm_start(void **)
{
	const int modes[2] = {0, SOLVER_USE_2_FRICTION_DIRECTIONS};
	const double load = 1.0 * Incline::g * std::sin(Incline::angle) * Incline::h;
	for (int m = 0; m < 2; ++m) {
		for (const char *spec : {"auto", "pgs", "auto jointed"}) {
			const bool jointed = std::strstr(spec, "jointed") != nullptr;
			Incline w(modes[m], jointed);
			lk::BulletSolver solver(jointed ? "auto" : spec);
			solver.setRecording(true);
			w.world.setConstraintSolver(&solver);
			for (int k = 0; k < 120; ++k)
				w.world.stepSimulation(Incline::h, 1, Incline::h);
			lk_problem *p = nullptr;
			assert_int_equal(solver.recordedProblem(&p), LK_OK);
			int n = 0;
			const double *solution = solver.recordedSolution(&n);
			assert_int_equal(n, lk_problem_row_count(p));
			const btVector3 warm = Incline::frictionOnBox(p, lk_problem_lambda(p));
			const btVector3 solved = Incline::frictionOnBox(p, solution);
			const btVector3 &v = w.bodies[1]->getLinearVelocity();
			print_message("%s, friction mode %d: friction warm start (%.6f, %.6f, %.6f), solved (%.6f, %.6f, %.6f) "
			              "N s against m g sin(20) h = %.6f; the box at %.1e m/s, %.2f sweeps (%d)\n",
			              spec, modes[m], warm.x(), warm.y(), warm.z(), solved.x(), solved.y(), solved.z(), load,
			              v.length(), solver.lastStepStats().work, solver.lastStepStats().iterations);
			/* the box rests: friction holds the load */
			assert_true(v.length() < 1e-3);
			assert_true(std::fabs(solved.x() + load) < 1e-3 * load && std::fabs(solved.y()) < 1e-3 * load);
			if (std::strcmp(spec, "auto") != 0) {
				assert_true(warm.length() == 0.0);
			} else {
				assert_true(std::fabs(warm.x() + 0.85 * load) < 2e-3 * load);
				assert_true(std::fabs(warm.y()) < 2e-3 * load && std::fabs(warm.z()) < 2e-3 * load);
				/* the points' impulses along their normals' plane axes, summing to what the solve applied */
				btDispatcher &d = *w.world.getDispatcher();
				assert_int_equal(d.getNumManifolds(), 1);
				const btPersistentManifold &man = *d.getManifoldByIndexInternal(0);
				btVector3 stored(0, 0, 0);
				for (int j = 0; j < man.getNumContacts(); ++j) {
					const btManifoldPoint &cp = man.getContactPoint(j);
					btVector3 e1, e2;
					btPlaneSpace1(cp.m_normalWorldOnB, e1, e2);
					assert_true((cp.m_lateralFrictionDir1 - e1).length() < 1e-12);
					assert_true((cp.m_lateralFrictionDir2 - e2).length() < 1e-12);
					stored += cp.m_lateralFrictionDir1 * cp.m_appliedImpulseLateral1 +
					          cp.m_lateralFrictionDir2 * cp.m_appliedImpulseLateral2;
				}
				/* the manifold's body 0 is the box or the ground: its points' impulses act on body 0 */
				const double sign = man.getBody0() == w.bodies[1].get() ? 1.0 : -1.0;
				assert_true((stored * sign - solved).length() < 1e-9);
				/* one sweep, as test_auto's settled box: the work counts the face's load restored besides (its
				 * projection, about a sweep of this one box's rows); without the friction made whole the solve
				 * ran seven or eight */
				assert_int_equal(solver.lastStepStats().iterations, 1);
				assert_true(solver.lastStepStats().work <= 3.5);
			}
			lk_problem_destroy(p);
		}
	}
}

/* A sphere sliding on the ground at 2 m/s (mu 0.5): its one point's friction is the kinetic friction, mu m g h
 * against the slip. Under auto the next step starts from it (damped by m_warmstartingFactor) while the ball slips
 * the same way; where its slip has turned (its velocity reversed by hand), the friction of the last step would
 * push it on along its new slip, and the point starts its friction from zero (a box's face keeps its
 * projection: test_friction_warm_start). */
void test_sphere_friction_turned(void **)
{
	const double h = 1.0 / 60.0, mu = 0.5, g = 9.81;
	for (int turned = 0; turned < 2; ++turned) {
		World w;
		btStaticPlaneShape groundShape(btVector3(0, 0, 1), 0);
		btSphereShape ballShape(0.5);
		std::vector<std::unique_ptr<btRigidBody>> bodies;
		w.world.setGravity(btVector3(0, 0, -g));
		addBody(w.world, bodies, &groundShape, 0.0, btVector3(0, 0, 0));
		addBody(w.world, bodies, &ballShape, 1.0, btVector3(0, 0, 0.5));
		/* Bullet multiplies the two coefficients */
		bodies[0]->setFriction(1.0);
		bodies[1]->setFriction(mu);
		lk::BulletSolver solver("auto");
		solver.setRecording(true);
		w.world.setConstraintSolver(&solver);
		w.world.stepSimulation(h, 1, h); /* the ball comes to rest on its point */
		bodies[1]->setLinearVelocity(btVector3(2, 0, 0));
		for (int k = 0; k < 3; ++k)
			w.world.stepSimulation(h, 1, h);
		if (turned) {
			bodies[1]->setLinearVelocity(btVector3(-2, 0, 0));
			bodies[1]->setAngularVelocity(btVector3(0, 0, 0));
		}
		w.world.stepSimulation(h, 1, h);
		lk_problem *p = nullptr;
		assert_int_equal(solver.recordedProblem(&p), LK_OK);
		int n = 0;
		const double *solution = solver.recordedSolution(&n);
		const btVector3 warm = Incline::frictionOnBox(p, lk_problem_lambda(p));
		const btVector3 solved = Incline::frictionOnBox(p, solution);
		const double kinetic = mu * g * h;
		print_message("slip %s: friction warm start (%.6f, %.6f, %.6f), solved (%.6f, %.6f, %.6f) N s, mu m g h = %.6f\n",
		              turned ? "turned" : "kept", warm.x(), warm.y(), warm.z(), solved.x(), solved.y(), solved.z(),
		              kinetic);
		/* the solve's friction opposes the slip in both: kinetic, mu m g h */
		assert_true(std::fabs(solved.x() - (turned ? kinetic : -kinetic)) < 1e-3 * kinetic);
		if (turned)
			assert_true(warm.length() == 0.0);
		else
			assert_true(std::fabs(warm.x() + 0.85 * kinetic) < 1e-3 * kinetic && std::fabs(warm.y()) < 1e-9);
		lk_problem_destroy(p);
		w.world.setConstraintSolver(&w.own);
		for (auto &b : bodies)
			w.world.removeRigidBody(b.get());
	}
}

/* A kinematic body gets its solver body only when a row first needs it (here the joint's, as convertJoints
 * sets up its rows): lk::BulletSolver maps it then, as a body of infinite mass that moves. The towed box
 * follows the anchor under lcpkit as under Bullet's own solver. */
void test_kinematic_anchor(void **)
{
	Towed a, b;
	lk::BulletSolver solver("pgs");
	b.world.setConstraintSolver(&solver);
	a.step(60);
	b.step(60);
	const btVector3 pa = a.box(), pb = b.box();
	print_message("towed box at (%.6f, %.6f) under Bullet, (%.6f, %.6f) under lcpkit\n", pa.x(), pa.z(), pb.x(),
	              pb.z());
	assert_true(pa.x() > 0.5);
	assert_true((pb - pa).length() < 1e-5);
	assert_int_equal(solver.fallbacks(), 0);
}

/* lk::BulletMultiBodySolver in a btMultiBodyDynamicsWorld: boxes on the ground are lcpkit's rows, a two-link
 * pendulum with a friction motor is Bullet's; and lk::BulletSolver, which such a world never calls, says so. */
const double kLink = 1.0;           /* pivot to centre of mass of each link */
const btVector3 kPivot(0, 10, 4);   /* far from the boxes: its own island */

/* A ground plane, three unit boxes resting on it side by side and a two-link pendulum starting horizontal,
 * whose second joint has a motor holding zero relative speed with a small impulse (joint friction). */
struct MultiBodyScene : MultiBodyWorld {
	btStaticPlaneShape groundShape{btVector3(0, 0, 1), 0};
	btBoxShape boxShape{btVector3(0.5, 0.5, 0.5)};
	std::vector<std::unique_ptr<btRigidBody>> bodies;
	std::unique_ptr<btMultiBody> pendulum;
	btSphereShape bobShape{0.1};
	/* a multibody without colliders is in no island, and the world then hands its constraints to no solver */
	std::vector<std::unique_ptr<btMultiBodyLinkCollider>> colliders;
	std::unique_ptr<btMultiBodyJointMotor> motor;

	MultiBodyScene()
	{
		world.setGravity(btVector3(0, 0, -9.81));
		world.getSolverInfo().m_numIterations = 10;
		add(&groundShape, 0.0, btVector3(0, 0, 0));
		for (int i = 0; i < 3; ++i)
			add(&boxShape, 1.0, btVector3(2.0 * i, 0, 0.5));

		pendulum.reset(new btMultiBody(2, 0, btVector3(0, 0, 0), true, false));
		pendulum->setBasePos(kPivot);
		pendulum->setWorldToBaseRot(btQuaternion::getIdentity());
		const btVector3 inertia(0.01, 0.01, 0.01);
		pendulum->setupRevolute(0, 1.0, inertia, -1, btQuaternion::getIdentity(), btVector3(0, 1, 0),
		                        btVector3(0, 0, 0), btVector3(kLink, 0, 0), true);
		pendulum->setupRevolute(1, 1.0, inertia, 0, btQuaternion::getIdentity(), btVector3(0, 1, 0),
		                        btVector3(0, 0, 0), btVector3(kLink, 0, 0), true);
		pendulum->finalizeMultiDof();
		pendulum->setLinearDamping(0);
		pendulum->setAngularDamping(0);
		pendulum->setCanSleep(false);
		world.addMultiBody(pendulum.get());
		for (int i = 0; i < 2; ++i) {
			colliders.emplace_back(new btMultiBodyLinkCollider(pendulum.get(), i));
			btTransform tr;
			tr.setIdentity();
			tr.setOrigin(kPivot + btVector3(kLink * (i + 1), 0, 0));
			colliders.back()->setWorldTransform(tr);
			colliders.back()->setCollisionShape(&bobShape);
			world.addCollisionObject(colliders.back().get());
			pendulum->getLink(i).m_collider = colliders.back().get();
		}
		motor.reset(new btMultiBodyJointMotor(pendulum.get(), 1, 0.0, 0.02));
		world.addMultiBodyConstraint(motor.get());
	}
	~MultiBodyScene()
	{
		world.setMultiBodyConstraintSolver(&own);
		world.removeMultiBodyConstraint(motor.get());
		for (auto &c : colliders)
			world.removeCollisionObject(c.get());
		world.removeMultiBody(pendulum.get());
		for (auto &b : bodies)
			world.removeRigidBody(b.get());
	}
	void add(btCollisionShape *shape, double mass, const btVector3 &at) { addBody(world, bodies, shape, mass, at); }
	void step(int n)
	{
		for (int i = 0; i < n; ++i)
			world.stepSimulation(1.0 / 60.0, 1, 1.0 / 60.0);
	}
	/* World positions of the pivot and the two links' centres of mass, from the current joint angles. */
	std::vector<btVector3> chain()
	{
		btAlignedObjectArray<btQuaternion> rot;
		btAlignedObjectArray<btVector3> at;
		rot.resize(3);
		at.resize(3);
		pendulum->forwardKinematics(rot, at);
		return {at[0], at[1], at[2]};
	}
};

void test_rigid_rows_to_lcpkit_multibody_to_bullet(void **)
{
	MultiBodyScene sc, ref; /* ref: Bullet's own btMultiBodyConstraintSolver for everything */
	lk::BulletMultiBodySolver solver("pgs");
	assert_string_equal(solver.error(), "");
	assert_int_equal(solver.getSolverType(), BT_MULTIBODY_SOLVER);
	sc.world.setMultiBodyConstraintSolver(&solver);

	const double q0 = sc.pendulum->getJointPos(0);
	for (int i = 0; i < 120; ++i) {
		sc.step(1);
		ref.step(1);
		const lk_engine_step_stats &s = solver.lastStepStats();
		assert_true(s.rows_by_kind[LK_ROW_NORMAL] >= 3);
		assert_int_equal(s.iterations, 10); /* m_numIterations; pgs has no tolerance by default */
		assert_int_equal(s.fallback, 0);
	}
	/* settled, three boxes on the ground: 4 contact points each, a normal and two friction rows per point */
	const lk_engine_step_stats &s = solver.lastStepStats();
	assert_int_equal(s.rows_by_kind[LK_ROW_NORMAL], 12);
	assert_int_equal(s.rows_by_kind[LK_ROW_FRICTION], 24);
	assert_int_equal(s.rows, 36);
	assert_true(solver.lastConfig().budget == 10.0);
	assert_int_equal(solver.fallbacks(), 0);

	for (int i = 0; i < 3; ++i) {
		const btRigidBody &b = *sc.bodies[i + 1];
		assert_true(std::fabs(b.getWorldTransform().getOrigin().z() - 0.5) < 2e-3);
		assert_true(std::fabs(b.getWorldTransform().getOrigin().x() - 2.0 * i) < 2e-3);
		assert_true(b.getLinearVelocity().length() < 1e-2);
		assert_true(b.getAngularVelocity().length() < 1e-2);
	}

	/* the pendulum swung, kept its links, and its rows were Bullet's: the boxes do not touch it, so it moved
	 * exactly as under Bullet's own solver */
	const double q[2] = {sc.pendulum->getJointPos(0), sc.pendulum->getJointPos(1)};
	assert_true(std::isfinite(q[0]) && std::isfinite(q[1]));
	assert_true(std::fabs(q[0] - q0) > 0.3);
	for (int j = 0; j < 2; ++j) {
		assert_true(std::fabs(q[j] - ref.pendulum->getJointPos(j)) < 1e-9);
		assert_true(std::fabs(sc.pendulum->getJointVel(j) - ref.pendulum->getJointVel(j)) < 1e-9);
	}
	const std::vector<btVector3> c = sc.chain();
	assert_true(std::fabs((c[0] - kPivot).length()) < 1e-12);
	assert_true(std::fabs((c[1] - c[0]).length() - kLink) < 1e-9);
	assert_true(std::fabs((c[2] - c[1]).length() - kLink) < 1e-9);
	/* the motor's friction took energy: the second joint is not free */
	assert_true(std::fabs(sc.motor->getAppliedImpulse(0)) > 0);

	const std::string notes = solver.notes();
	assert_int_equal(count(notes, "multibody constraints: 1 rows solved by Bullet's btMultiBodyConstraintSolver"),
	                 1);
	assert_int_equal(count(notes, "\n"), 1);
}

/* A btMultiBodyDynamicsWorld of rigid bodies only (a stack of three boxes, two boxes held by a hinge, one with a
 * motor) under lk::BulletMultiBodySolver moves as the same bodies in a btDiscreteDynamicsWorld under
 * lk::BulletSolver: the rigid bodies' rows are made the same way, straight from the manifold points and the
 * constraints' getInfo2, and solved by the same method. Then a body of a mass near the least a double holds makes
 * the island fall back: Bullet's own rows are made for its iterations, which hold the boxes up. */
void test_multibody_world_rigid_rows_as_discrete(void **)
{
	struct Rigid {
		btBoxShape boxShape{btVector3(0.5, 0.5, 0.5)};
		btStaticPlaneShape groundShape{btVector3(0, 0, 1), 0};
		std::vector<std::unique_ptr<btRigidBody>> bodies;
		std::unique_ptr<btHingeConstraint> hinge;
		void build(btDiscreteDynamicsWorld &world)
		{
			world.setGravity(btVector3(0, 0, -9.81));
			world.getSolverInfo().m_solverMode |= SOLVER_USE_2_FRICTION_DIRECTIONS;
			addBody(world, bodies, &groundShape, 0.0, btVector3(0, 0, 0));
			for (int i = 0; i < 3; ++i)
				addBody(world, bodies, &boxShape, 1.0, btVector3(0, 0, 0.5 + i));
			addBody(world, bodies, &boxShape, 1.0, btVector3(4, 0, 0.5));
			addBody(world, bodies, &boxShape, 1.0, btVector3(4, 0, 2.0));
			hinge.reset(new btHingeConstraint(*bodies[4], *bodies[5], btVector3(0, 0, 0.75), btVector3(0, 0, -0.75),
			                                  btVector3(1, 0, 0), btVector3(1, 0, 0)));
			hinge->enableAngularMotor(true, 1.0, 5.0);
			world.addConstraint(hinge.get(), true);
		}
		void clear(btDiscreteDynamicsWorld &world)
		{
			world.removeConstraint(hinge.get());
			for (auto &b : bodies)
				world.removeRigidBody(b.get());
		}
	};
	World flat;
	Rigid a;
	a.build(flat.world);
	lk::BulletSolver solver("auto");
	flat.world.setConstraintSolver(&solver);

	MultiBodyWorld mbw;
	btMultiBodyDynamicsWorld &world = mbw.world;
	Rigid b;
	b.build(world);
	lk::BulletMultiBodySolver mb("auto");
	world.setMultiBodyConstraintSolver(&mb);

	for (int i = 0; i < 120; ++i) {
		flat.world.stepSimulation(1.0 / 60.0, 1, 1.0 / 60.0);
		world.stepSimulation(1.0 / 60.0, 1, 1.0 / 60.0);
	}
	assert_int_equal(mb.lastStepStats().rows, solver.lastStepStats().rows);
	assert_true(mb.lastStepStats().rows_by_kind[LK_ROW_JOINT] >= 5);
	assert_true(mb.lastStepStats().rows_by_kind[LK_ROW_NORMAL] >= 12);
	for (size_t i = 1; i < a.bodies.size(); ++i) {
		const btVector3 d = a.bodies[i]->getWorldTransform().getOrigin() - b.bodies[i]->getWorldTransform().getOrigin();
		const btVector3 w = a.bodies[i]->getAngularVelocity() - b.bodies[i]->getAngularVelocity();
		assert_true(d.length() == 0.0);
		assert_true(w.length() == 0.0);
	}
	/* the stack stands and the motor turned the hinged box */
	assert_true(std::fabs(b.bodies[3]->getWorldTransform().getOrigin().z() - 2.5) < 5e-3);
	assert_true(std::fabs(b.hinge->getHingeAngle()) > 0.5);
	assert_int_equal(mb.fallbacks(), 0);

	btBoxShape tiny(btVector3(0.1, 0.1, 0.1));
	addFeatherweight(world, b.bodies, &tiny, btVector3(0.8, 0, 0.1));
	mb.setQuiet(true);
	for (int i = 0; i < 60; ++i)
		world.stepSimulation(1.0 / 60.0, 1, 1.0 / 60.0);
	assert_true(mb.fallbacks() > 0);
	for (int i = 1; i <= 3; ++i)
		assert_true(std::fabs(b.bodies[(size_t)i]->getWorldTransform().getOrigin().z() - (0.5 + (i - 1))) < 2e-2);
	world.setMultiBodyConstraintSolver(&mbw.own);
	b.clear(world);
	flat.world.setConstraintSolver(&flat.own);
	a.clear(flat.world);
}

/* One island of both kinds of rows: a box resting on a btMultiBody's link (a table top fixed to a fixed base: a
 * multibody contact) and a second box on the first (a rigid contact). lk::BulletMultiBodySolver solves the rigid
 * rows, then Bullet sweeps every row of the island from lcpkit's impulses: the two boxes rest on the table where
 * Bullet's own solver has them, and nothing falls back. Sweeping the link's rows alone after lcpkit's left the
 * lower box out of balance between the two kinds, and the upper box sank 2.7 cm into it. */
void test_multibody_island_of_both_kinds(void **)
{
	struct Table : MultiBodyWorld {
		btBoxShape topShape{btVector3(1.0, 1.0, 0.1)};
		btBoxShape boxShape{btVector3(0.25, 0.25, 0.25)};
		std::unique_ptr<btMultiBody> table;
		std::unique_ptr<btMultiBodyLinkCollider> top;
		std::vector<std::unique_ptr<btRigidBody>> boxes;
		Table()
		{
			world.setGravity(btVector3(0, 0, -9.81));
			world.getSolverInfo().m_numIterations = 10;
			world.getSolverInfo().m_solverMode |= SOLVER_USE_2_FRICTION_DIRECTIONS;
			table.reset(new btMultiBody(1, 0, btVector3(0, 0, 0), true, false));
			table->setBasePos(btVector3(0, 0, 0));
			table->setWorldToBaseRot(btQuaternion::getIdentity());
			table->setupFixed(0, 1.0, btVector3(0.1, 0.1, 0.1), -1, btQuaternion::getIdentity(), btVector3(0, 0, 1.0),
			                  btVector3(0, 0, 0));
			table->finalizeMultiDof();
			world.addMultiBody(table.get());
			top.reset(new btMultiBodyLinkCollider(table.get(), 0));
			btTransform tr;
			tr.setIdentity();
			tr.setOrigin(btVector3(0, 0, 1.0));
			top->setWorldTransform(tr);
			top->setCollisionShape(&topShape);
			world.addCollisionObject(top.get());
			table->getLink(0).m_collider = top.get();
			addBody(world, boxes, &boxShape, 1.0, btVector3(0, 0, 1.35));
			addBody(world, boxes, &boxShape, 1.0, btVector3(0, 0, 1.85));
		}
		~Table()
		{
			world.setMultiBodyConstraintSolver(&own);
			for (auto &b : boxes)
				world.removeRigidBody(b.get());
			world.removeCollisionObject(top.get());
			world.removeMultiBody(table.get());
		}
		void step(int n)
		{
			for (int i = 0; i < n; ++i)
				world.stepSimulation(1.0 / 60.0, 1, 1.0 / 60.0);
		}
	};
	Table sc, ref;
	lk::BulletMultiBodySolver solver("auto");
	solver.setQuiet(true);
	sc.world.setMultiBodyConstraintSolver(&solver);
	int rigidRows = 0;
	for (int i = 0; i < 180; ++i) {
		sc.step(1);
		ref.step(1);
		rigidRows = solver.lastStepStats().rows_by_kind[LK_ROW_NORMAL];
	}
	assert_int_equal(solver.fallbacks(), 0);
	assert_true(rigidRows >= 3); /* the box on the box: its face's points, lcpkit's */
	assert_int_equal(count(solver.notes(), "rows solved by Bullet's btMultiBodyConstraintSolver"), 1);
	for (int i = 0; i < 2; ++i) {
		const btVector3 p = sc.boxes[(size_t)i]->getWorldTransform().getOrigin();
		const btVector3 q = ref.boxes[(size_t)i]->getWorldTransform().getOrigin();
		assert_true(std::isfinite(p.z()));
		/* where Bullet's own solver has it (its top box creeps a centimetre sideways in either) */
		assert_true(std::fabs(p.z() - (1.35 + 0.5 * i)) < 1e-3);
		assert_true((p - q).length() < 5e-3);
		assert_true(sc.boxes[(size_t)i]->getLinearVelocity().length() < 2e-2);
	}
}

/* A multibody world keeps solving with its own solver whatever setConstraintSolver is given: the solver sees
 * steps without rows and says so once. */
void test_bullet_solver_in_multibody_world_says_so(void **)
{
	MultiBodyScene sc;
	lk::BulletSolver solver("pgs");
	sc.world.setConstraintSolver(&solver);
	sc.step(30);
	assert_int_equal(solver.lastStepStats().rows, 0);
	const std::string notes = solver.notes();
	assert_int_equal(count(notes, "no rows reached this solver in a step of 6 collision objects"), 1);
	assert_int_equal(count(notes, "lk::BulletMultiBodySolver through setMultiBodyConstraintSolver"), 1);
	assert_int_equal(count(notes, "\n"), 1);
	/* Bullet's own solver still held the boxes up */
	assert_true(std::fabs(sc.bodies[1]->getWorldTransform().getOrigin().z() - 0.5) < 2e-3);
	sc.world.setConstraintSolver(&sc.own);

	/* so does lk::BulletMultiBodySolver given through setConstraintSolver */
	lk::BulletMultiBodySolver mb("pgs");
	sc.world.setConstraintSolver(&mb);
	sc.step(2);
	assert_int_equal(count(mb.notes(), "no rows reached this solver"), 1);
	assert_int_equal(mb.lastStepStats().rows, 0);
	sc.world.setConstraintSolver(&sc.own);
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gyroscopic_term_as_bullet),
		cmocka_unit_test(test_iterations_from_solver_info),
		cmocka_unit_test(test_order_and_relaxation_from_solver_info),
		cmocka_unit_test(test_misread_spec_said),
		cmocka_unit_test(test_statistics_on_request),
		cmocka_unit_test(test_fallback_said_once),
		cmocka_unit_test(test_nan_velocity_contained),
		cmocka_unit_test(test_unmapped_settings_noted_once),
		cmocka_unit_test(test_joint_rows_made_by_lcpkit),
		cmocka_unit_test(test_contact_rows_made_by_lcpkit),
		cmocka_unit_test(test_contact_rows_of_every_feature),
		cmocka_unit_test(test_friction_warm_start),
		cmocka_unit_test(test_sphere_friction_turned),
		cmocka_unit_test(test_kinematic_anchor),
		cmocka_unit_test(test_rigid_rows_to_lcpkit_multibody_to_bullet),
		cmocka_unit_test(test_bullet_solver_in_multibody_world_says_so),
		cmocka_unit_test(test_multibody_world_rigid_rows_as_discrete),
		cmocka_unit_test(test_multibody_island_of_both_kinds),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}

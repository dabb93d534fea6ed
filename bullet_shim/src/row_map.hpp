/* Internal: one island of Bullet's solver pools as an lk_problem and the impulses back (RowMap), shared by the
 * lcpkit adapter (lk::BulletSolver) and the instrumented Bullet solvers of the C API. */
#ifndef LCPKIT_BULLET_ROW_MAP_HPP
#define LCPKIT_BULLET_ROW_MAP_HPP

#include "lcpkit/engine.h"
#include "lcpkit/lcpkit.h"

#include <BulletCollision/NarrowPhaseCollision/btPersistentManifold.h>
#include <BulletDynamics/ConstraintSolver/btSequentialImpulseConstraintSolver.h>

#include <memory>
#include <vector>

namespace lk {
namespace detail {

/* References to the protected pools of a btSequentialImpulseConstraintSolver, handed over by its subclass. */
struct Pools {
	btAlignedObjectArray<btSolverBody> &bodies;
	btConstraintArray &nonContact;
	btConstraintArray &contact;
	btConstraintArray &friction;
	btConstraintArray &rolling;
};

/* What a row reads of one of its bodies: its u* and inverse masses (the static world's: all zero). */
struct RowMotion {
	double u[6], inv_mass[3];
	bool locked; /* a linear or angular factor other than 1 */
};

/* A solver body's masses as the problem has them (fillBody, and the joints' screen before the problem's bodies
 * exist). Bullet applies the linear factor twice: m_invMass already holds it and applyImpulse scales again.
 * F I^-1 F keeps the inverse inertia symmetric; it equals Bullet's F^2 I^-1 on every row whose torque axis lies
 * in the unlocked axes (all rows of a planar scene) and whenever F is all ones. */
inline double problemInvMass(const btSolverBody &sb, int r)
{
	return sb.m_invMass[r] * sb.m_linearFactor[r];
}

inline double problemInvInertia(const btMatrix3x3 &I, const btVector3 &F, int r, int c)
{
	return F[r] * (0.5 * (I[r][c] + I[c][r])) * F[c];
}

/* Bullet's objects lie wherever its pools and allocator put them: a manifold, its points and a body are each
 * read once a step, so nearly every first read of one misses the cache (a manifold's bodies sit behind its
 * four points, 1.5 kB in). The loops over them ask for an object a few iterations ahead, which hides most of
 * those misses (docs/benchmarks.md, "Solver phase, end to end"). A hint only: any address is safe. */
inline void prefetchBytes(const void *object, size_t size)
{
	for (size_t k = 0; k < size; k += 64)
		__builtin_prefetch(static_cast<const char *>(object) + k);
}

/* A manifold's tail: its bodies, its point count and thresholds (its points are asked for once the count is in). */
inline void prefetchManifold(const btPersistentManifold &m)
{
	const btManifoldPoint *points = &m.getContactPoint(0);
	__builtin_prefetch(points + MANIFOLD_CACHE_SIZE);
}

/* A solver body's factors differ from 1: a direction of it is locked. */
inline bool lockedBody(const btSolverBody &sb)
{
	const btVector3 &L = sb.m_linearFactor, &F = sb.m_angularFactor;
	return L[0] != 1 || L[1] != 1 || L[2] != 1 || F[0] != 1 || F[1] != 1 || F[2] != 1;
}

/* Adds one side's part of J M^-1 J^T with the problem's masses to e. */
inline void addSideEnergy(const btSolverBody &sb, const double *J, double &e)
{
	const btMatrix3x3 &I = sb.m_originalBody->getInvInertiaTensorWorld();
	const btVector3 &F = sb.m_angularFactor;
	for (int r = 0; r < 3; ++r) {
		e += problemInvMass(sb, r) * J[r] * J[r];
		for (int c = 0; c < 3; ++c)
			e += J[3 + r] * problemInvInertia(I, F, r, c) * J[3 + c];
	}
}

/*
 * One island's rows as an lk_problem (docs/maths.md), in Bullet's sweep order: joint rows, contact
 * normals, friction, rolling friction.
 *
 * Bullet's row update (btSequentialImpulseConstraintSolver, resolveSingleConstraintRowGeneric) is
 *     dl = rhs - cfm_b lambda - jacDiagABInv (J du)
 * and lcpkit's Gauss-Seidel update of the same row is dl = -(J (u* + du) - c + s lambda) / A_ii. They are the
 * same update when jacDiagABInv = 1 / A_ii, which gives
 *     s = cfm_b / jacDiagABInv,     c = J u* + rhs / jacDiagABInv   (so q = J u* - c = -rhs / jacDiagABInv),
 * and this mapping holds for contacts (whose jacDiagABInv already includes the CFM) and joints alike. Joint
 * rows with CFM differ only in Bullet dividing by J M^-1 J^T instead of A_ii: same fixed point, another
 * relaxation.
 */
class RowMap {
public:
	RowMap();
	~RowMap();
	RowMap(const RowMap &) = delete;
	RowMap &operator=(const RowMap &) = delete;

	/* Builds the problem with lambda = the rows' current m_appliedImpulse (Bullet's warm start). On error
	 * the message is in lk_problem_error(problem()). `points`: the rows' contact points are read from the
	 * manifold points (one cache miss a contact, a manifold point lying elsewhere in memory: a quarter of the
	 * conversion on a large pile); without it they are 0, "unknown" in the problem's terms, which only the
	 * coordinate orders (lk_config_reads_points) and problem files read. `threads`: the bodies are made on up
	 * to that many threads (lk_problem_add_bodies; the problem's lent scheduler, if any). */
	lk_status build(const Pools &pools, bool points = true, int threads = 1);
	lk_problem *problem() { return m_p; }
	int rows() const { return (int)m_out.size(); }
	/* What the last build left out because it is not finite, looked for only where the core refused a body
	 * or a row as not finite (a sound step pays nothing for the look): rows whose J or target is not finite
	 * (and the friction rows on such a normal), and the bodies whose state is not finite (velocity, external
	 * impulse, transform, masses) with every row on them. A frozen body stays in the problem as an immovable
	 * placeholder, so that the rows keep their body indices; writeBack holds it still. */
	int leftOut() const { return m_leftOut; }
	int frozen() const { return (int)m_frozenSolver.size(); }
	/* The first frozen body's collision object and what of it is not finite, for the note. */
	const btCollisionObject *firstFrozen(const char **what) const;
	const int *rowsByKind() const { return m_kinds; }
	const std::vector<double> &warmStart() const { return m_lambda0; }

	/* Bullet's convertJoints for a solve by lcpkit (lk::BulletSolver): the joints' rows written by their
	 * getInfo2 straight into the definitions of the coming build, instead of Bullet's rows and its
	 * per-row setup for its own iterations (which lcpkit does not run). beginJoints(rows) before the
	 * first joint; addJoint for each enabled constraint with rows, in Bullet's order: its rows row0 ..
	 * row0 + count - 1 of Bullet's non-contact pool (pool: their btSolverConstraints, which get what
	 * Bullet's finish reads of them), and its bodies' solver body ids and solver bodies. The next build
	 * takes these rows as its joint rows; the pool's rows are not made, so that Bullet's own iterations
	 * need btSequentialImpulseConstraintSolver::convertJoints first. */
	void beginJoints(int rows, btSolverConstraint *pool, const btAlignedObjectArray<btSolverBody> &bodies);
	void addJoint(btTypedConstraint &constraint, int row0, int count, int solverBodyA, int solverBodyB,
	              const btSolverBody &bodyA, const btSolverBody &bodyB, const btContactSolverInfo &info);

	/* Bullet's convertContacts for a solve by lcpkit (lk::BulletSolver), as beginJoints and addJoint are its
	 * convertJoints: each manifold point's normal, friction and rolling friction rows defined straight from
	 * the point (contact_rows.cpp), as Bullet's setup defines them (btSequentialImpulseConstraintSolver::
	 * convertContact and the setup functions it calls: the same friction directions, written to the point as
	 * Bullet writes them, the same warm start), without Bullet's per-row data for its own iterations. A point
	 * deep enough for Bullet's split impulse also gets the btSolverConstraint Bullet's position pass reads, in
	 * `split` (Bullet's contact pool, which then holds those rows only). beginContacts after beginJoints;
	 * addManifold for each manifold, in Bullet's order, with its bodies' solver body ids. The next build takes
	 * these rows as its contact rows (in Bullet's order: normals, friction, rolling friction), and writeBack
	 * writes their impulses to the points as Bullet's finish does (SOLVER_USE_WARMSTARTING). `frictionWarm`
	 * (auto's): the friction rows start from the point's last friction impulse too, except on a body one of the
	 * step's joints holds or that rests against a far heavier moving body (markUnequal), and writeBack leaves
	 * each point's friction along its normal's plane axes (frictionToPlaneAxes). */
	void beginContacts(const btAlignedObjectArray<btSolverBody> &bodies, const btContactSolverInfo &info,
	                   bool frictionWarm = false);
	/* Under frictionWarm, before the manifolds are added: the manifold's lighter body when its two moving bodies'
	 * masses differ more than kFrictionWarmRatio times (contact_rows.cpp); every contact of such a body starts its
	 * friction from zero. */
	void markUnequal(const btPersistentManifold &manifold, int solverBodyA, int solverBodyB);
	bool frictionWarm() const { return m_frictionWarm; }
	void addManifold(btPersistentManifold &manifold, int solverBodyA, int solverBodyB, btConstraintArray &split);

	/* lambda -> the rows' impulses (Bullet's m_appliedImpulse of a pool row, a contact point's impulses), du ->
	 * the solver bodies' delta velocities; a frozen body's velocities all zero, so that Bullet's finish leaves
	 * it where it is. */
	void writeBack(const Pools &pools);
	/* The impulses of the contact rows the last build left out (made from the manifolds) to their points, as
	 * writeBack writes them: for an island whose rows were all left out, which is not solved. */
	void writeKept();
	/* The rows' current m_appliedImpulse (after Bullet's own solver); false, with nothing read, where the
	 * contact rows were made from the manifolds (Bullet's own solver then solves rows of its own making). */
	bool readImpulses(std::vector<double> &out) const;

private:
	/* lk_body_fill_fn: the definition of the problem's body k, from its solver body (m_pools). */
	static lk_status fillBody(void *arg, int k, lk_body_def *d);
	/* Row m_n's definition from Bullet's row c, in m_defs[m_n] (and m_n counted), or the row left out
	 * (it moves nothing), or refused (a solver body index out of range). */
	enum { ROW_MADE, ROW_LEFT_OUT, ROW_BAD };
	int makeRow(const btSolverConstraint &c, lk_row_kind kind, int findex, const double *point, bool normalRow);
	/* Whether Bullet's row c is made (ROW_MADE, its problem bodies in *a and *b), left out or refused, as
	 * makeRow decides it. */
	int screenRow(const btSolverConstraint &c, int *a, int *b) const;
	/* Row m_n is Bullet's row c, of that kind, starting from impulse: counted. */
	void keepRow(const btSolverConstraint &c, lk_row_kind kind, double impulse)
	{
		m_out[(size_t)m_n] = &c.m_appliedImpulse; /* mutable in btSolverConstraint: Bullet's sweeps write it */
		m_lambda0[(size_t)m_n] = impulse;
		m_kinds[kind]++;
		++m_n;
	}
	const RowMotion &motion(int body) const
	{
		static const RowMotion still = {{0, 0, 0, 0, 0, 0}, {0, 0, 0}, false};
		return body != LK_STATIC ? m_motion[(size_t)body] : still;
	}
	/* The contact pools' rows, planned (planContacts: m_out from m_fused on, each one's findex and point in
	 * m_plan) and made by lk_problem_add_rows on the build's threads with fillContact, without a definition
	 * array in between; false where a row is refused. */
	bool planContacts(const Pools &pools);
	static lk_status fillContact(void *arg, int k, lk_row_def *d);
	/* The lcpkit index of each solver body of a rigid body, in Bullet's order (m_lkOfSolver, m_solverOfLk). */
	void mapBodies(const btAlignedObjectArray<btSolverBody> &bodies);
	/* The contact rows made from the manifolds (beginContacts .. addManifold) for the next build, by block in
	 * Bullet's order, each row's definition, impulse destination and warm start; storage that only grows and
	 * is not cleared (every field of a definition is written where the row is made). */
	struct ContactBlock {
		std::unique_ptr<lk_row_def[]> defs;
		std::unique_ptr<btScalar *[]> out;
		std::unique_ptr<double[]> warm;
		int n = 0, cap = 0;
		/* A new row with its destination and warm start: its definition, to write whole. */
		lk_row_def &add(btScalar *o, double w)
		{
			if (n == cap)
				grow();
			out[n] = o;
			warm[n] = w;
			return defs[n++];
		}
		void grow();
	};
	enum { BLOCK_NORMAL, BLOCK_FRICTION, BLOCK_ROLLING, BLOCK_COUNT };
	ContactBlock m_block[BLOCK_COUNT];
	/* the impulses of contact rows left out, for writeBack to write to their points */
	struct Keep {
		btScalar *to;
		double impulse;
	};
	std::vector<Keep> m_keep;
	bool m_contactsMade = false;       /* the next build's contact rows are in m_block */
	bool m_contactsFromManifolds = false; /* the last build's were */
	bool m_contactsBad = false;        /* addManifold met a solver body out of range */
	int m_contactBase = 0;             /* the first contact row's index (the joint rows made before) */
	const btContactSolverInfo *m_info = nullptr; /* the solve's settings, while contacts are added */
	bool m_frictionWarm = false;                 /* friction rows warm-started (beginContacts) */
	/* the points whose friction impulses writeKept turns to the normal's plane axes (m_frictionWarm) */
	std::vector<btManifoldPoint *> m_frictionPoints;
	/* Each point's friction impulse, a vector in its contact plane, written as its components along the
	 * normal's plane axes (btPlaneSpace1), which become the point's friction directions: the basis that a
	 * point Bullet's collision replaces between steps comes with (btManifoldResult::addContactPoint), where
	 * the replaced point's impulses stay. Along the directions the rows were solved in, a replaced point's
	 * impulses would be read along other axes the next step. */
	void frictionToPlaneAxes();
	/* One manifold point's rows (contact_rows.cpp), on the problem's bodies a and b of solver bodies A and B
	 * (ia, ib), one of which has a locked direction if `locked`. */
	void addPoint(btManifoldPoint &cp, const btPersistentManifold &m, const btSolverBody &A, const btSolverBody &B,
	              int ia, int ib, int a, int b, bool locked, btConstraintArray &split);
	/* Moves the blocks' rows into the build (m_out, m_lambda0, the ids of the friction blocks), or into
	 * m_defs as well (a screened build); m_n counts them. */
	void takeContactRows(bool intoDefs);
	/* One build (build): screened, with what is not finite left out. */
	lk_status buildOnce(const Pools &pools, bool points, int threads, bool jointsMade, int jointRows,
	               bool screened);
	/* The rows made without those on frozen bodies or not finite, and the friction rows of such normal rows,
	 * in place (counted in m_leftOut). */
	void screenRows();
	/* fillBody of a screened build: a frozen body's placeholder. */
	static lk_status fillScreenedBody(void *arg, int k, lk_body_def *d);


	lk_problem *m_p;
	std::vector<int> m_lkOfSolver;     /* solver body -> lk body or LK_STATIC */
	std::vector<int> m_solverOfLk;     /* lk body -> solver body */
	std::vector<lk_row_def> m_defs;    /* the joint rows' definitions (a screened build's: every row's), read in
	                                    * place by lk_problem_add_row_array */
	int m_n = 0;                       /* rows made */
	int m_jointRows = -1;              /* joint rows Bullet has for the next build, made by addJoint (the first
	                                    * m_n rows: those that move something), or -1: none */
	bool m_jointsBad = false;          /* addJoint met a solver body out of range */
	std::vector<char> m_jointed;       /* by solver body: a moving body one of this step's joints holds */
	std::vector<char> m_lighter;       /* by solver body: it touches a far heavier moving body (markUnequal) */
	const btAlignedObjectArray<btSolverBody> *m_jointBodies = nullptr; /* Bullet's solver bodies (beginJoints,
	                                                                    * beginContacts) */
	btSolverConstraint *m_jointPool = nullptr; /* Bullet's rows of those joint rows */
	std::vector<btScalar *> m_out;     /* where each row's impulse goes (writeBack), or nullptr: nowhere */
	/* a planned contact row (planContacts): Bullet's row, its final findex, its contact (whose point it
	 * reads) and kind */
	struct Planned {
		const btSolverConstraint *row;
		int a, b, findex, contact;
		lk_row_kind kind;
	};
	std::vector<Planned> m_plan;
	int m_fused = 0;                   /* the first planned row (the rows before it are in m_defs) */
	const Pools *m_planPools = nullptr; /* while add_rows makes the planned rows */
	bool m_planPoints = false;
	std::vector<int> m_contactRow;     /* contact pool index -> lk row or -1 */
	std::vector<double> m_lambda0;
	int m_kinds[LK_ROW_KIND_COUNT];
	const Pools *m_pools = nullptr;    /* while build makes the bodies */
	std::vector<RowMotion> m_motion; /* by lcpkit body, kept as fillBody makes them */
	/* the screened build's: frozen bodies (solver body indices), by lcpkit index, and rows left out */
	bool m_screened = false;
	std::vector<int> m_frozenSolver;
	std::vector<unsigned char> m_frozenLk;
	int m_leftOut = 0;
	const char *m_firstFault = nullptr;             /* what of the first frozen body is not finite */
	const btCollisionObject *m_firstFrozen = nullptr;
};

} // namespace detail
} // namespace lk

#endif

/* The lcpkit Bullet C API: a box falls on the ground and a pendulum swings, solved by an lcpkit method.
 *
 *   build: cc hello_bullet.c -o hello_bullet $(pkg-config --cflags --libs lcpkit-bullet) -lm
 *   run:   ./hello_bullet [SPEC]        (SPEC: "bullet-si", "pgs", "amgs", ...; default "pgs")
 */
#include <lcpkit/bullet.h>

#include <math.h>
#include <stdio.h>

#define CHECK(call)                                                                                          \
	do {                                                                                                     \
		lk_status st_ = (call);                                                                              \
		if (st_ != LK_OK) {                                                                                  \
			fprintf(stderr, "hello_bullet: %s: %s\n", lk_status_string(st_), lk_bt_world_error(w));          \
			lk_bt_world_destroy(w);                                                                          \
			return 1;                                                                                        \
		}                                                                                                    \
	} while (0)

int main(int argc, char **argv)
{
	lk_bt_world_def def = lk_bt_default_world_def();
	def.solver = argc > 1 ? argv[1] : "pgs";
	def.iterations = 20;
	lk_bt_world *w = NULL;
	char err[256];
	if (lk_bt_world_create(&def, &w, err, sizeof err) != LK_OK) {
		fprintf(stderr, "hello_bullet: %s\n", err);
		return 1;
	}

	lk_bt_body_def ground = lk_bt_default_body_def();
	ground.shape = lk_bt_shape_plane(0, 0, 1, 0);
	ground.mass = 0;
	CHECK(lk_bt_body_create(w, &ground, NULL));

	lk_bt_body_def box = lk_bt_default_body_def(); /* a 1 m cube of 1 kg */
	box.position[2] = 2.0;
	int box_id;
	CHECK(lk_bt_body_create(w, &box, &box_id));

	lk_bt_body_def bob = lk_bt_default_body_def();
	bob.shape = lk_bt_shape_sphere(0.1);
	bob.position[0] = 3.0;
	bob.position[2] = 3.0;
	int bob_id;
	CHECK(lk_bt_body_create(w, &bob, &bob_id));

	lk_bt_joint_def hinge = lk_bt_default_joint_def(LK_BT_JOINT_HINGE);
	hinge.body_a = bob_id;
	hinge.body_b = LK_BT_WORLD;
	hinge.anchor[0] = 2.0; /* 1 m from the bob */
	hinge.anchor[2] = 3.0;
	hinge.axis[0] = 0.0;
	hinge.axis[1] = 1.0;
	CHECK(lk_bt_joint_create(w, &hinge, NULL));

	lk_engine_step_stats stats;
	for (int i = 0; i < 120; ++i)
		CHECK(lk_bt_world_step(w, &stats));

	double p[3], q[4], b[3];
	CHECK(lk_bt_body_get_transform(w, box_id, p, q));
	CHECK(lk_bt_body_get_transform(w, bob_id, b, NULL));
	int points = 0;
	CHECK(lk_bt_world_contact_count(w, NULL, &points));
	printf("solver %s, t = %.2f s\n", lk_bt_world_solver(w), lk_bt_world_time(w));
	printf("box at z = %.4f m (rests at 0.5), %d contact points\n", p[2], points);
	double len = sqrt((b[0] - 2) * (b[0] - 2) + b[1] * b[1] + (b[2] - 3) * (b[2] - 3));
	printf("pendulum bob at (%.3f, %.3f, %.3f), %.4f m from the hinge\n", b[0], b[1], b[2], len);
	printf("last step: %d rows, %d iterations, RES %.3e -> %.3e, fallbacks %lld\n", stats.rows, stats.iterations,
	       stats.res_initial, stats.res_final, (long long)lk_bt_world_fallbacks(w));
	if (lk_bt_world_fallbacks(w) > 0)
		printf("last fallback to Bullet's iterations: %s\n", lk_bt_world_fallback_reason(w));
	lk_bt_world_destroy(w);
	return 0;
}

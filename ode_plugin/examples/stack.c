/* stack.c: cc stack.c $(pkg-config --cflags --libs ode) -llcpkit_ode -llcpkit -ldl -lm */
#include <lcpkit/ode.h>   /* lcpkit */
#include <ode/ode.h>
#include <stdio.h>

static dWorldID world;
static dJointGroupID contacts;

static void near_callback(void *data, dGeomID a, dGeomID b)
{
	(void)data;
	dContact c[4];
	int n = dCollide(a, b, 4, &c[0].geom, sizeof c[0]);
	for (int i = 0; i < n; ++i) {
		c[i].surface.mode = dContactApprox1;
		c[i].surface.mu = 0.5;
		dJointID j = dJointCreateContact(world, contacts, &c[i]);
		dJointAttach(j, dGeomGetBody(a), dGeomGetBody(b));
	}
}

int main(void)
{
	dInitODE2(0);
	world = dWorldCreate();
	dWorldSetGravity(world, 0, 0, -9.81);
	dSpaceID space = dHashSpaceCreate(0);
	contacts = dJointGroupCreate(0);
	dCreatePlane(space, 0, 0, 1, 0);
	dBodyID top = NULL;
	for (int i = 0; i < 10; ++i) {
		dMass m;
		dMassSetBox(&m, 1, 1, 1, 1);
		top = dBodyCreate(world);
		dBodySetMass(top, &m);
		dBodySetPosition(top, 0, 0, 0.5 + i);
		dGeomSetBody(dCreateBox(space, 1, 1, 1), top);
	}

	lk_ode_def def = lk_ode_default_def();                           /* lcpkit */
	def.solver = "amgs:alpha=0.3";                                   /* lcpkit */
	def.ode_residual = 1;                                            /* lcpkit: RES in the statistics */
	char err[256];                                                    /* lcpkit */
	lk_ode *ctx;                                                      /* lcpkit */
	if (lk_ode_create(world, &def, &ctx, err, sizeof err) != LK_OK) { /* lcpkit */
		fprintf(stderr, "%s\n", err);                             /* lcpkit */
		return 1;                                                 /* lcpkit */
	}                                                                 /* lcpkit */
	lk_ode_add_space(ctx, space);                                     /* lcpkit: where the bodies are */

	for (int step = 0; step < 500; ++step) {
		dSpaceCollide(space, NULL, near_callback);
		lk_ode_world_step(ctx, 0.01);   /* lcpkit; was: dWorldQuickStep(world, 0.01); */
		dJointGroupEmpty(contacts);
	}
	printf("top box at z = %.4f\n", dBodyGetPosition(top)[2]);
	lk_engine_step_stats st;                                          /* lcpkit */
	lk_ode_get_stats(ctx, &st);                                       /* lcpkit */
	printf("%d rows, RES %.3g -> %.3g\n", st.rows, st.res_initial, st.res_final); /* lcpkit */

	lk_ode_destroy(ctx);                                              /* lcpkit */
	dJointGroupDestroy(contacts);
	dSpaceDestroy(space);
	dWorldDestroy(world);
	dCloseODE();
	return 0;
}

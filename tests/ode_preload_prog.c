/* An ordinary ODE program (it knows nothing of lcpkit): the scene of ode_preload_scene.h on
 * dWorldQuickStep. The preload test runs it plainly and under liblcpkit_ode_preload.so. */
#include "ode_preload_scene.h"

static int quickstep(dWorldID w, dReal h, void *user)
{
	(void)user;
	return dWorldQuickStep(w, h);
}

int main(void)
{
	pl_scene_run(150, quickstep, NULL, NULL, stdout);
	return 0;
}

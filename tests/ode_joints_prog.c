/* An ordinary ODE program (it knows nothing of lcpkit): the scene of ode_joints_scene.h, every joint type
 * with motors at their limits from the first step, stepped `steps` times with dWorldQuickStep ("quickstep")
 * or dWorldStep ("step"); prints every body's final state. A third argument "negcfm" sets a negative world
 * CFM, which lcpkit's solvers reject (so that every replaced step falls back to ODE's stepper). The preload
 * tests run it plainly and under liblcpkit_ode_preload.so. */
#include "ode_joints_scene.h"

#include <stdlib.h>
#include <string.h>

static int quickstep(dWorldID w, dReal h, void *user)
{
	(void)user;
	return dWorldQuickStep(w, h);
}

static int step(dWorldID w, dReal h, void *user)
{
	(void)user;
	return dWorldStep(w, h);
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4 || (strcmp(argv[1], "quickstep") && strcmp(argv[1], "step")) ||
	    (argc == 4 && strcmp(argv[3], "negcfm")))
		return 2;
	int steps = atoi(argv[2]);
	dInitODE2(0);
	js_scene sc;
	js_build(&sc);
	if (argc == 4)
		dWorldSetCFM(sc.w, -1e-7);
	for (int s = 0; s < steps; ++s)
		if (!js_step(&sc, strcmp(argv[1], "step") ? quickstep : step, NULL))
			return 1;
	js_print(&sc, stdout);
	js_done(&sc);
	dCloseODE();
	return 0;
}

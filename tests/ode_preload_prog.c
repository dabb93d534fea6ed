/* An ordinary ODE program (it knows nothing of lcpkit): the scene of ode_preload_scene.h on
 * dWorldQuickStep. The preload test runs it plainly and under liblcpkit_ode_preload.so. With the argument
 * "threads N" it runs N copies of the scene at once, each world in its own thread with its own threading
 * implementation as ODE asks of a program that steps worlds in parallel, and prints their results one after
 * the other. With "pool" it runs the scene once on a pool of two threads that serves ODE's built-in threading
 * implementation. With "zero-normal" every step also has a contact with a zero normal. */
#include "ode_preload_scene.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int quickstep(dWorldID w, dReal h, void *user)
{
	(void)user;
	return dWorldQuickStep(w, h);
}

typedef struct worker {
	pthread_t thread;
	dThreadingImplementationID impl;
	char *text;
	size_t size;
} worker;

static void own_threading(dWorldID w, int created, void *user)
{
	worker *k = user;
	if (created)
		dWorldSetStepThreadingImplementation(w, dThreadingImplementationGetFunctions(k->impl), k->impl);
	else
		dWorldSetStepThreadingImplementation(w, NULL, NULL);
}

static void *work(void *arg)
{
	worker *k = arg;
	dAllocateODEDataForThread(dAllocateMaskAll);
	k->impl = dThreadingAllocateSelfThreadedImplementation();
	FILE *out = open_memstream(&k->text, &k->size);
	if (!k->impl || !out)
		return NULL;
	pl_scene_run_world(150, quickstep, NULL, own_threading, k, out);
	fclose(out);
	dThreadingFreeImplementation(k->impl);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "threads")) {
		int n = atoi(argv[2]);
		if (n < 1 || n > 16)
			return 2;
		worker k[16];
		memset(k, 0, sizeof k);
		dInitODE2(0);
		for (int i = 0; i < n; ++i)
			if (pthread_create(&k[i].thread, NULL, work, &k[i]) != 0)
				return 1;
		int rc = 0;
		for (int i = 0; i < n; ++i) {
			pthread_join(k[i].thread, NULL);
			if (!k[i].text)
				rc = 1;
			else
				fputs(k[i].text, stdout);
			free(k[i].text);
		}
		dCloseODE();
		return rc;
	}
	if (argc == 2 && !strcmp(argv[1], "pool")) {
		/* the scene's world stepped on a pool of two threads serving ODE's built-in implementation */
		dInitODE2(0);
		worker k;
		memset(&k, 0, sizeof k);
		k.impl = dThreadingAllocateMultiThreadedImplementation();
		dThreadingThreadPoolID pool = dThreadingAllocateThreadPool(2, 0, dAllocateFlagBasicData, NULL);
		if (!k.impl || !pool)
			return 1;
		dThreadingThreadPoolServeMultiThreadedImplementation(pool, k.impl);
		pl_scene_run_world(150, quickstep, NULL, own_threading, &k, stdout);
		dThreadingImplementationShutdownProcessing(k.impl);
		dThreadingThreadPoolWaitIdleState(pool);
		dThreadingFreeThreadPool(pool);
		dThreadingFreeImplementation(k.impl);
		dCloseODE();
		return 0;
	}
	pl_zero_normal = argc == 2 && !strcmp(argv[1], "zero-normal");
	pl_scene_run(150, quickstep, NULL, NULL, stdout);
	return 0;
}

/* The engines' own solver names: the one table the adapters, the command and the viewer read. The core
 * solves nothing here; it only keeps the names so that every part spells them alike. */
#include "lcpkit/engine.h"

#include <stdio.h>
#include <string.h>

static const lk_engine_solver engine_solvers[] = {
	{"ode-quickstep", LK_ENGINE_ODE, "ODE's own PGS (dWorldQuickStep)"},
	{"ode-step", LK_ENGINE_ODE, "ODE's own Dantzig LCP (dWorldStep)"},
	{"bullet-si", LK_ENGINE_BULLET, "Bullet's own sequential impulse"},
	{"bullet-nncg", LK_ENGINE_BULLET, "Bullet's own NNCG"},
	{"bullet-dantzig", LK_ENGINE_BULLET, "Bullet's own MLCP, Dantzig"},
	{"bullet-lemke", LK_ENGINE_BULLET, "Bullet's own MLCP, Lemke"},
	{"bullet-pgs", LK_ENGINE_BULLET, "Bullet's own MLCP, PGS"},
	{"bullet-si-mt", LK_ENGINE_BULLET,
	 "Bullet's own multithreaded sequential impulse (bullet-si-mt:threads=N; a Bullet built with BT_THREADSAFE)"},
	{NULL, LK_ENGINE_COUNT, NULL},
};

const lk_engine_solver *lk_engine_solvers(void)
{
	return engine_solvers;
}

/* The engine solvers that take options after a colon; the others are names only. */
static int takes_options(const lk_engine_solver *s)
{
	return !strcmp(s->name, "bullet-si-mt");
}

const lk_engine_solver *lk_engine_solver_find(const char *name)
{
	for (const lk_engine_solver *s = engine_solvers; name && s->name; ++s) {
		if (!strcmp(s->name, name))
			return s;
		const size_t n = strlen(s->name);
		if (takes_options(s) && !strncmp(s->name, name, n) && name[n] == ':')
			return s;
	}
	return NULL;
}

const char *lk_engine_solver_list(lk_engine engine, char *buf, size_t size)
{
	if (!buf || !size)
		return buf;
	size_t used = 0;
	buf[0] = '\0';
	for (const lk_engine_solver *s = engine_solvers; s->name && used < size; ++s)
		if (engine == LK_ENGINE_COUNT || s->engine == engine)
			used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", s->name);
	return buf;
}

/* Solver configurations: the papers' defaults, validation, and the "name:key=value,..." spec syntax. */
#include "lcpkit/lcpkit.h"
#include "method_table.h"

#include <math.h>
#include <stdarg.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const order_names[LK_ORDER_COUNT] = {
	"natural", "random", "ipp", "cp-x", "cp-y", "cp-z", "cp-gravity", "esp", "gsp", "colour", "part",
};

const char *lk_method_name(lk_method m)
{
	const lk__method_desc *d = lk__method_desc_of(m);
	return d ? d->name : "unknown";
}

const char *lk_order_name(lk_order o)
{
	return (unsigned)o < LK_ORDER_COUNT ? order_names[o] : "unknown";
}

lk_solver_config lk_default_config(lk_method method)
{
	lk_solver_config c;
	memset(&c, 0, sizeof c);
	c.method = lk__method_desc_of(method) ? method : LK_METHOD_PGS;
	c.max_iterations = 100;
	c.merit = LK_MERIT_RES;
	c.check_every = 1;
	c.warm_start = 1;
	c.measure = 1;
	/* Erleben 2013 sec. 7, Fig. 4: lambda = 1.4 works best for PSOR */
	c.sor_w = c.method == LK_METHOD_PSOR ? 1.4 : 1.0;
	c.order = LK_ORDER_NATURAL;
	/* the latency order (ordering.c) only where asked: inside the engines, where each step's problem is new,
	 * the natural order's sweeps with the pair cursor were as fast or faster on 12 of the 14 scenes of
	 * compare in each engine (docs/benchmarks.md, "The latency order of natural") */
	c.order_latency = 0;
	c.cone_local = 0;
	c.gravity[2] = -1.0;
	c.seed = 1;
	c.threads = 1;

	/* Miyamoto & Yamashita 2019: gamma = 2 throughout. alpha = 1/gamma (their Remark 4.4, AMGS[D/gamma] of
	 * Table 1) reproduces the PGS iterates exactly (amgs.c); their Figures 6-8 favour about 0.2. Measured
	 * from lambda = 0 to RES < 1e-4 (`lcpkit bench amgs`, docs/benchmarks.md): frictionless, sweeps relative
	 * to PGS are 0.20-0.46 for alpha = 0.1, 0.32-0.40 for 0.2 and 0.56-0.60 for 0.3 (stack of 150 spheres,
	 * packings of 517 to 9,937 rows). With friction (mu = 0.5 packings of 501, 1,629 and 1,965 rows) alpha =
	 * 0.1 never gets there, 0.2 does not on the 1,629-row packing and needs 1.03x PGS on the 1,965-row one,
	 * while 0.3 gets there on all, with 0.53-0.81x PGS (0.60x on the stack with mu = 0.1), and with 0.91-1.0x
	 * on the box stack, heavy-on-light, chain and incline generators (on a 10,206-row frictional packing no
	 * alpha reaches it in 39,192 sweeps; 0.3 ends at RES 8.7e-4, PGS at 7.9e-4). So 0.3: robust first, fast
	 * second; it over-relaxes rows inside their bounds by 2 / (1 + alpha gamma) = 1.25. */
	c.amgs.gamma = 2.0;
	c.amgs.alpha = 0.3;
	c.amgs.omega = LK_AMGS_OMEGA_ALPHA_D;
	c.amgs.amsor_w = 1.2;

	/* Silcowitz, Niebe & Erleben: k_pgs PGS sweeps then k_sm subspace steps per outer iteration */
	c.pgs_sm.k_pgs = 25;
	c.pgs_sm.k_sm = 5;
	c.pgs_sm.best_iterate = 1;
	c.pgs_sm.pgs_share = 0.8;
	/* relative to the reduced right-hand side, so that it does not depend on the units of the scene; the
	 * paper's eps_residual = 1e-15 (sec. 5) is absolute. cg_tol= tightens it. */
	c.pgs_sm.cg_tol = 1e-10;
	if (c.method == LK_METHOD_PGS_SM) {
		c.max_iterations = 10;
		/* sec. 5: eps_abs = 1e-15 on the Fischer merit, which the paper prefers (sec. 4.3); without an
		 * absolute rule a solved problem would still run a further outer iteration, until eq. (26) */
		c.merit = LK_MERIT_FISCHER;
		c.tol_abs = 1e-15;
	}

	/* the gradient methods' metric: APGD steps each row by its own scale (measured in docs/benchmarks.md,
	 * "APGD's metric"); MPRGP keeps the paper's one scale unless asked (mprgp:metric=diag: fewer iterations on
	 * stacks and ragdolls, but a stall on a 200-sphere frictional packing where the paper's method gets there,
	 * docs/solvers.md, "MPRGP") */
	c.metric = c.method == LK_METHOD_MPRGP ? LK_METRIC_IDENTITY : LK_METRIC_DIAG;

	/* Erleben 2013 sec. 5.4-5.5 and 7: perturbation (fewest iterations on contact problems, Fig. 3), GMRES
	 * (sec. 5.4), alpha = 1e-4 and beta = 1/2 (Nocedal & Wright, as quoted there).
	 * Measured on 20 generated box stacks and 20 heavy-on-light stacks with friction, solved to
	 * RES < 1e-10: restarting GMRES every 30 products stalls on their near-singular Newton systems (heavy-
	 * on-light: 14 and 12 of 20 solved, 36-47 iterations), every 50 products does not (19 of 20, 7-9
	 * iterations). The forcing term caps the Eisenstat-Walker sequence of newton.c: a looser cap solves
	 * more box stacks (Fischer 19 instead of 16 of 20 at 0.3 against 0.1, minimum map 15 instead of 11 at
	 * 0.2), but the minimum map's 500-variable SPD test needs 29 iterations at 0.3 against 23 at 0.2. */
	c.newton.strategy = LK_FISCHER_PERTURBATION;
	c.newton.krylov = LK_KRYLOV_GMRES;
	c.newton.krylov_max = 100;
	c.newton.gmres_restart = 50;
	c.newton.forcing = c.method == LK_METHOD_NEWTON_FISCHER ? 0.3 : 0.2;
	c.newton.ls_alpha = 1e-4;
	c.newton.ls_beta = 0.5;
	c.newton.ls_tau_min = 1e-12;
	c.newton.perturbation = 1e-8;
	c.newton.fd_h = 1e-7;
	c.newton.pgs_warm = -1;
	/* measured on Siconos's local test problems (docs/benchmarks.md, "Coulomb's cone"): spheres-in-a-box
	 * reaches 1e-8 in 121 iterations at 3, 180-210 at 10; Capsules and BoxesStack take 20-30 and 100-200 at
	 * either */
	c.newton.lm = 3.0;
	if (c.method == LK_METHOD_NEWTON_MINMAP || c.method == LK_METHOD_NEWTON_FISCHER)
		c.max_iterations = 50;

	/* auto (auto.c, docs/solvers.md "auto"): chosen by the measurements there */
	c.adapt.tol = 1e-3;
	if (c.method == LK_METHOD_AUTO)
		c.coarse = 1;
	c.adapt.cap = 4.0;
	c.adapt.bank = 30.0;
	c.adapt.carry = 0.85;
	c.adapt.shuffle = 0;
	c.adapt.touch = 0;
	c.adapt.joint_w = 0.0;

	/* ipm: Newton from where the interior point's answer is within a thousand tolerances (docs/solvers.md,
	 * "Interior point: ipm", has the measurements that chose it) */
	c.ipm.polish = 1e3;
	return c;
}

/* ------------------------------------------------------------------------------------ parameter table */

typedef enum { P_INT, P_DOUBLE, P_BOOL, P_ENUM, P_U64 } ptype;

/* which methods a key belongs to */
/* every method, the ones lk__method_add adds too (LK_METHOD_COUNT + LK__METHODS_ADDED_MAX <= 32) */
#define M_ALL 0xffffffffu
_Static_assert(LK_METHOD_COUNT + LK__METHODS_ADDED_MAX <= 32, "M_ALL holds every method's bit");
#define M_GS ((1u << LK_METHOD_PGS) | (1u << LK_METHOD_PSOR))
#define M_AMGS ((1u << LK_METHOD_AMGS) | (1u << LK_METHOD_AMGS_DENSE) | (1u << LK_METHOD_AMSOR))
#define M_SM (1u << LK_METHOD_PGS_SM)
#define M_NEWTON ((1u << LK_METHOD_NEWTON_MINMAP) | (1u << LK_METHOD_NEWTON_FISCHER))
#define M_NNCG (1u << LK_METHOD_NNCG)
#define M_GRADIENT ((1u << LK_METHOD_APGD) | (1u << LK_METHOD_MPRGP))
#define M_AUTO (1u << LK_METHOD_AUTO)
#define M_ORDERED (M_GS | M_AMGS | M_SM | M_NNCG)
/* the methods with Coulomb's cone (docs/solvers.md, "Coulomb's cone") */
#define M_IPM (1u << LK_METHOD_IPM)
#define M_CONE (M_GS | M_SM | (1u << LK_METHOD_NEWTON_MINMAP) | (1u << LK_METHOD_APGD) | M_IPM)

static const char *const merit_names[] = {"res", "theta", "fischer", "modified", "fc3d", NULL};
static const char *const friction_names[] = {"box", "cone", NULL};
static const char *const omega_names[] = {"D", "E", NULL};
static const char *const strategy_names[] = {"perturbation", "random", "zero", "approximation", NULL};
static const char *const krylov_names[] = {"gmres", "cg", NULL};
static const char *const subspace_names[] = {"cg", "direct", NULL};
static const char *const subspace_rows_names[] = {"free", "normal", NULL};
static const char *const metric_names[] = {"diag", "identity", NULL};
static const char *const order_list[] = {"natural", "random", "ipp", "cp-x", "cp-y", "cp-z",
                                          "cp-gravity", "esp", "gsp", "colour", "part", NULL};

typedef struct param {
	const char *key;
	ptype type;
	size_t offset;
	unsigned methods;
	const char *const *names; /* P_ENUM */
	const char *help;
} param;

#define OFF(f) offsetof(lk_solver_config, f)
static const param params[] = {
	{"iters", P_INT, OFF(max_iterations), M_ALL, NULL, "iteration limit"},
	{"budget", P_DOUBLE, OFF(budget), M_ALL, NULL, "work limit in sweep-equivalents (0: off)"},
	{"time_us", P_DOUBLE, OFF(time_budget_us), M_ALL, NULL, "time limit in microseconds (0: off)"},
	{"tol", P_DOUBLE, OFF(tol_abs), M_ALL, NULL, "absolute tolerance on the merit"},
	{"rtol", P_DOUBLE, OFF(tol_rel), M_ALL, NULL, "relative tolerance on the merit"},
	{"stag", P_DOUBLE, OFF(tol_stag), M_ALL, NULL, "stagnation tolerance on lambda"},
	{"merit", P_ENUM, OFF(merit), M_ALL, merit_names, "merit of the tolerances"},
	{"check", P_INT, OFF(check_every), M_ALL, NULL, "evaluate the merit every N iterations"},
	{"warm", P_BOOL, OFF(warm_start), M_ALL, NULL, "start from the incoming lambda"},
	{"measure", P_BOOL, OFF(measure), M_ALL, NULL, "RES of the start and the result (0: skipped where unused)"},
	{"seed", P_U64, OFF(seed), M_ALL, NULL, "random seed"},
	{"threads", P_INT, OFF(threads), M_ALL, NULL, "threads of the sweeps (> 1: order=colour)"},
	{"w", P_DOUBLE, OFF(sor_w), M_GS | M_NNCG | M_AUTO, NULL, "SOR relaxation"},
	{"order", P_ENUM, OFF(order), M_ORDERED, order_list, "sweep order"},
	{"friction", P_ENUM, OFF(friction), M_CONE, friction_names, "friction model: box or cone"},
	{"local", P_BOOL, OFF(cone_local), M_GS | M_SM | (1u << LK_METHOD_NEWTON_MINMAP), NULL,
	 "friction=cone: each contact's problem solved exactly in the cone sweep (0: one projected step)"},
	{"coarse", P_INT, OFF(coarse), M_GS | M_AUTO, NULL, "two-level correction of the normal rows every N sweeps (0: off)"},
	{"desc", P_BOOL, OFF(order_descending), M_ORDERED, NULL, "descending IPP/CP order"},
	{"blocked", P_BOOL, OFF(order_blocked), M_ORDERED, NULL, "CP keeps normal rows before friction"},
	{"latency", P_BOOL, OFF(order_latency), M_ORDERED, NULL,
	 "natural order swept in its latency order (same iterates; 0: as it is)"},
	{"alpha", P_DOUBLE, OFF(amgs.alpha), M_AMGS, NULL, "Omega = alpha D"},
	{"gamma", P_DOUBLE, OFF(amgs.gamma), M_AMGS, NULL, "modulus parameter gamma"},
	{"omega", P_ENUM, OFF(amgs.omega), M_AMGS, omega_names, "Omega = alpha*D or omega_bar*E"},
	{"w", P_DOUBLE, OFF(amgs.amsor_w), 1u << LK_METHOD_AMSOR, NULL, "AMSOR relaxation"},
	{"kpgs", P_INT, OFF(pgs_sm.k_pgs), M_SM, NULL, "PGS sweeps per outer iteration"},
	{"ksm", P_INT, OFF(pgs_sm.k_sm), M_SM, NULL, "subspace steps per outer iteration"},
	{"pgs_rtol", P_DOUBLE, OFF(pgs_sm.pgs_rel_tol), M_SM, NULL, "relative termination of the PGS phase"},
	{"share", P_DOUBLE, OFF(pgs_sm.pgs_share), M_SM, NULL, "share of a budget for the PGS phases"},
	{"reg", P_DOUBLE, OFF(pgs_sm.reg), M_SM, NULL, "regularization of A_AA"},
	{"reg_friction", P_BOOL, OFF(pgs_sm.reg_friction_only), M_SM, NULL, "regularize friction rows only"},
	{"lazy", P_BOOL, OFF(pgs_sm.lazy_friction), M_SM, NULL, "lazy friction bounds in the subspace"},
	{"best", P_BOOL, OFF(pgs_sm.best_iterate), M_SM, NULL, "fall back to the best iterate"},
	{"cg_tol", P_DOUBLE, OFF(pgs_sm.cg_tol), M_SM, NULL, "reduced CG relative tolerance"},
	{"cg_max", P_INT, OFF(pgs_sm.cg_max), M_SM, NULL, "reduced CG iteration cap (0: active count, at most 1000)"},
	{"jacobi", P_BOOL, OFF(pgs_sm.cg_jacobi), M_SM, NULL, "Jacobi preconditioner for the reduced CG"},
	{"sub", P_ENUM, OFF(pgs_sm.sub), M_SM, subspace_names, "reduced solve: cg or direct (envelope Cholesky)"},
	{"sub_rows", P_ENUM, OFF(pgs_sm.sub_rows), M_SM, subspace_rows_names, "subspace: free rows or free normal rows"},
	{"strategy", P_ENUM, OFF(newton.strategy), M_NEWTON, strategy_names, "Fischer x=y=0 strategy"},
	{"krylov", P_ENUM, OFF(newton.krylov), M_NEWTON, krylov_names, "Newton system solver"},
	{"krylov_max", P_INT, OFF(newton.krylov_max), M_NEWTON, NULL, "Krylov iteration cap"},
	{"restart", P_INT, OFF(newton.gmres_restart), M_NEWTON, NULL, "GMRES restart"},
	{"forcing", P_DOUBLE, OFF(newton.forcing), M_NEWTON, NULL, "forcing term eta"},
	{"ls_alpha", P_DOUBLE, OFF(newton.ls_alpha), M_NEWTON, NULL, "Armijo sufficient decrease"},
	{"ls_beta", P_DOUBLE, OFF(newton.ls_beta), M_NEWTON, NULL, "line search back-tracking factor"},
	{"tau_min", P_DOUBLE, OFF(newton.ls_tau_min), M_NEWTON, NULL, "minimum step length"},
	{"pgs_warm", P_INT, OFF(newton.pgs_warm), M_NEWTON, NULL, "PGS sweeps before Newton"},
	{"perturbation", P_DOUBLE, OFF(newton.perturbation), M_NEWTON, NULL, "perturbation size"},
	{"fd_h", P_DOUBLE, OFF(newton.fd_h), M_NEWTON, NULL, "finite-difference step"},
	{"lm", P_DOUBLE, OFF(newton.lm), M_NEWTON, NULL, "friction=cone: Levenberg-Marquardt weight (0: off)"},
	{"metric", P_ENUM, OFF(metric), M_GRADIENT, metric_names,
	 "scale of each row's gradient step: diag (1 / A_ii) or identity (one for all)"},
	{"vtol", P_DOUBLE, OFF(adapt.tol), M_AUTO, NULL, "tolerance on the velocity correction, relative to the step's scale"},
	{"cap", P_DOUBLE, OFF(adapt.cap), M_AUTO, NULL, "most work of one solve, in budgets"},
	{"bank", P_DOUBLE, OFF(adapt.bank), M_AUTO, NULL, "most work the account holds, saved or owed, in budgets"},
	{"carry", P_DOUBLE, OFF(adapt.carry), M_AUTO, NULL, "share of the previous impulses the warm start holds"},
	{"shuffle", P_INT, OFF(adapt.shuffle), M_AUTO, NULL,
	 "sweeps in order, then between new random orders of the contacts (0: in order)"},
	{"polish", P_DOUBLE, OFF(ipm.polish), M_IPM, NULL,
	 "Newton takes over within this many tolerances of the answer (0: off)"},
	{"touch", P_INT, OFF(adapt.touch), M_AUTO, NULL,
	 "where articulated bodies touch: sweeps between new random orders of every row (0: as shuffle)"},
	{"jw", P_DOUBLE, OFF(adapt.joint_w), M_AUTO, NULL, "relaxation of the joints' bilateral rows (0: the solve's w)"},
};
#define NPARAMS ((int)(sizeof params / sizeof params[0]))

static int enum_index(const char *const *names, const char *s, size_t len)
{
	for (int i = 0; names[i]; ++i)
		if (strlen(names[i]) == len && strncmp(names[i], s, len) == 0)
			return i;
	return -1;
}

static void list_names(const char *const *names, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; names[i] && used < size; ++i)
		used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", names[i]);
}

static lk_status perr(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static lk_status perr(char *err, size_t size, const char *fmt, ...)
{
	if (err && size) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, size, fmt, ap);
		va_end(ap);
	}
	return LK_ERR_PARSE;
}

static lk_status set_param(lk_solver_config *c, const param *pp, const char *v, size_t vlen, char *err,
                           size_t esz)
{
	char tmp[64];
	if (vlen == 0 || vlen >= sizeof tmp)
		return perr(err, esz, "value of '%s' is empty or too long", pp->key);
	memcpy(tmp, v, vlen);
	tmp[vlen] = '\0';
	char *end = NULL;
	void *dst = (char *)c + pp->offset;
	errno = 0;
	switch (pp->type) {
	case P_INT: {
		long x = strtol(tmp, &end, 10);
		if (*end || errno || x < INT32_MIN || x > INT32_MAX)
			return perr(err, esz, "'%s' needs an integer, got '%s'", pp->key, tmp);
		*(int *)dst = (int)x;
		return LK_OK;
	}
	case P_U64: {
		if (tmp[0] == '-')
			return perr(err, esz, "'%s' needs a non-negative integer, got '%s'", pp->key, tmp);
		unsigned long long x = strtoull(tmp, &end, 10);
		if (*end || errno)
			return perr(err, esz, "'%s' needs a non-negative integer, got '%s'", pp->key, tmp);
		*(uint64_t *)dst = (uint64_t)x;
		return LK_OK;
	}
	case P_DOUBLE: {
		if (pp->offset == OFF(sor_w) && !strcmp(tmp, "auto")) {
			*(double *)dst = LK_SOR_AUTO;
			return LK_OK;
		}
		double x = strtod(tmp, &end);
		if (*end || errno || !isfinite(x))
			return perr(err, esz, "'%s' needs a finite number, got '%s'", pp->key, tmp);
		*(double *)dst = x;
		return LK_OK;
	}
	case P_BOOL:
		if (!strcmp(tmp, "1") || !strcmp(tmp, "on") || !strcmp(tmp, "yes") || !strcmp(tmp, "true"))
			*(int *)dst = 1;
		else if (!strcmp(tmp, "0") || !strcmp(tmp, "off") || !strcmp(tmp, "no") || !strcmp(tmp, "false"))
			*(int *)dst = 0;
		else
			return perr(err, esz, "'%s' needs 0 or 1, got '%s'", pp->key, tmp);
		return LK_OK;
	case P_ENUM: {
		size_t len = vlen;
		int desc = 0;
		if (pp->names == order_list && len > 5 && !strcmp(tmp + len - 5, "-desc")) {
			len -= 5;
			desc = 1;
		}
		int idx = enum_index(pp->names, tmp, len);
		if (idx < 0) {
			char names[200];
			list_names(pp->names, names, sizeof names);
			return perr(err, esz, "unknown %s '%s' (choose from %s)", pp->key, tmp, names);
		}
		*(int *)dst = idx;
		if (desc)
			c->order_descending = 1;
		return LK_OK;
	}
	}
	return LK_ERR_PARSE;
}

/* A spec written with its options after a comma instead of a colon ("pgs,friction=cone"), whose name alone
 * is a spec: 1 with a message that shows it with the colon (and what is wrong with it then, if anything). */
static int comma_hint(const char *spec, size_t nlen, char *err, size_t err_size)
{
	const char *comma = memchr(spec, ',', nlen);
	char head[64], fixed[256];
	lk_solver_config c;
	if (!comma || (size_t)(comma - spec) >= sizeof head)
		return 0;
	snprintf(head, sizeof head, "%.*s", (int)(comma - spec), spec);
	if (strchr(head, '=') || lk_config_parse(head, &c, NULL, 0) != LK_OK)
		return 0;
	snprintf(fixed, sizeof fixed, "%s:%s", head, comma + 1);
	char why[200];
	if (lk_config_parse(fixed, &c, why, sizeof why) == LK_OK)
		perr(err, err_size, "unknown solver '%.*s': options follow a colon, as in '%s'", (int)nlen, spec, fixed);
	else
		perr(err, err_size, "unknown solver '%.*s': options follow a colon ('%s': %s)", (int)nlen, spec, fixed,
		     why);
	return 1;
}

lk_status lk_config_parse(const char *spec, lk_solver_config *out, char *err, size_t err_size)
{
	if (err && err_size)
		err[0] = '\0';
	if (!spec || !out)
		return perr(err, err_size, "no solver spec");
	size_t nlen = strcspn(spec, ":");
	int method = lk__method_of_name(spec, nlen);
	lk_order order = LK_ORDER_NATURAL;
	if (method < 0) {
		/* shorthands: a staggered schedule names PGS with that order */
		if (nlen == 3 && !strncmp(spec, "gsp", 3))
			method = LK_METHOD_PGS, order = LK_ORDER_GSP;
		else if (nlen == 3 && !strncmp(spec, "esp", 3))
			method = LK_METHOD_PGS, order = LK_ORDER_ESP;
		else if (comma_hint(spec, nlen, err, err_size))
			return LK_ERR_PARSE;
		else {
			char names[300];
			size_t used = 0;
			names[0] = '\0';
			for (int m = 0; m < lk__method_count() && used < sizeof names; ++m)
				used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", m ? ", " : "",
				                         lk_method_name((lk_method)m));
			return perr(err, err_size, "unknown solver '%.*s' (choose from %s, gsp, esp)", (int)nlen, spec,
			            names);
		}
	}
	lk_solver_config c = lk_default_config((lk_method)method);
	c.order = order;
	const char *s = spec + nlen;
	if (*s == ':')
		++s;
	while (*s) {
		size_t len = strcspn(s, ",");
		const char *eq = memchr(s, '=', len);
		if (!eq)
			return perr(err, err_size, "'%.*s' is not key=value", (int)len, s);
		size_t klen = (size_t)(eq - s);
		const param *pp = NULL;
		for (int i = 0; i < NPARAMS; ++i) {
			if (strlen(params[i].key) == klen && !strncmp(params[i].key, s, klen) &&
			    (params[i].methods & (1u << method))) {
				pp = &params[i];
				break;
			}
		}
		if (!pp) {
			char keys[600];
			size_t used = 0;
			keys[0] = '\0';
			for (int i = 0; i < NPARAMS && used < sizeof keys; ++i)
				if (params[i].methods & (1u << method))
					used += (size_t)snprintf(keys + used, sizeof keys - used, "%s%s", used ? ", " : "",
					                         params[i].key);
			return perr(err, err_size, "unknown parameter '%.*s' for %s (valid: %s)", (int)klen, s,
			            lk_method_name((lk_method)method), keys);
		}
		lk_status st = set_param(&c, pp, eq + 1, len - klen - 1, err, err_size);
		if (st != LK_OK)
			return st;
		s += len;
		if (*s == ',')
			++s;
	}
	char verr[200];
	if (lk_config_validate(&c, verr, sizeof verr) != LK_OK)
		return perr(err, err_size, "%s", verr);
	*out = c;
	return LK_OK;
}

int lk_config_spec_sets(const char *spec, const char *key)
{
	lk_solver_config c;
	if (!key || lk_config_parse(spec, &c, NULL, 0) != LK_OK)
		return 0;
	/* a shorthand names its order ("gsp" is pgs:order=gsp) */
	if (!strcmp(key, "order") && c.order != lk_default_config(c.method).order)
		return 1;
	const char *s = strchr(spec, ':');
	size_t n = strlen(key);
	while (s && *++s) {
		size_t len = strcspn(s, ",");
		if (len > n && s[n] == '=' && !strncmp(s, key, n))
			return 1;
		s = s[len] ? s + len : NULL;
	}
	return 0;
}

lk_status lk_config_spec_with(const char *spec, const char *key, const char *value, char *out, size_t size)
{
	lk_solver_config c;
	if (!spec || !key || !value || !out || size == 0)
		return LK_ERR_INVALID_ARGUMENT;
	if (lk_config_parse(spec, &c, NULL, 0) != LK_OK)
		return LK_ERR_PARSE;
	int n = lk_config_spec_sets(spec, key)
	            ? snprintf(out, size, "%s", spec)
	            : snprintf(out, size, "%s%s%s=%s", spec, strchr(spec, ':') ? "," : ":", key, value);
	if (n < 0 || (size_t)n >= size)
		return LK_ERR_LIMIT;
	return lk_config_parse(out, &c, NULL, 0) == LK_OK ? LK_OK : LK_ERR_PARSE;
}

int lk_config_spec_sets_limit(const char *spec)
{
	return lk_config_spec_sets(spec, "iters") || lk_config_spec_sets(spec, "budget");
}

void lk_config_set_engine_budget(lk_solver_config *cfg, int iterations)
{
	if (!cfg)
		return;
	cfg->budget = iterations > 1 ? iterations : 1;
	cfg->max_iterations = INT32_MAX;
}

lk_status lk_config_format(const lk_solver_config *cfg, char *buf, size_t size)
{
	if (!cfg || !buf || size == 0)
		return LK_ERR_INVALID_ARGUMENT;
	if (!lk__method_desc_of(cfg->method))
		return LK_ERR_INVALID_ARGUMENT;
	lk_solver_config d = lk_default_config(cfg->method);
	size_t used = (size_t)snprintf(buf, size, "%s", lk_method_name(cfg->method));
	int first = 1;
	for (int i = 0; i < NPARAMS && used < size; ++i) {
		const param *pp = &params[i];
		if (!(pp->methods & (1u << cfg->method)))
			continue;
		const void *a = (const char *)cfg + pp->offset, *b = (const char *)&d + pp->offset;
		char val[64];
		switch (pp->type) {
		case P_INT:
		case P_BOOL:
			if (*(const int *)a == *(const int *)b)
				continue;
			snprintf(val, sizeof val, "%d", *(const int *)a);
			break;
		case P_U64:
			if (*(const uint64_t *)a == *(const uint64_t *)b)
				continue;
			snprintf(val, sizeof val, "%llu", (unsigned long long)*(const uint64_t *)a);
			break;
		case P_DOUBLE:
			if (*(const double *)a == *(const double *)b)
				continue;
			if (pp->offset == OFF(sor_w) && *(const double *)a == LK_SOR_AUTO)
				snprintf(val, sizeof val, "auto");
			else
				snprintf(val, sizeof val, "%.17g", *(const double *)a);
			break;
		case P_ENUM: {
			int x = *(const int *)a;
			if (x == *(const int *)b)
				continue;
			int count = 0;
			while (pp->names[count])
				++count;
			if (x < 0 || x >= count)
				return LK_ERR_INVALID_ARGUMENT;
			snprintf(val, sizeof val, "%s", pp->names[x]);
			break;
		}
		}
		used += (size_t)snprintf(buf + used, size - used, "%s%s=%s", first ? ":" : ",", pp->key, val);
		first = 0;
	}
	return used < size ? LK_OK : LK_ERR_LIMIT;
}

#define CHECK(cond, ...)                                                                                    \
	do {                                                                                                    \
		if (!(cond)) {                                                                                      \
			if (err && err_size)                                                                            \
				snprintf(err, err_size, __VA_ARGS__);                                                       \
			return LK_ERR_INVALID_ARGUMENT;                                                                 \
		}                                                                                                   \
	} while (0)

static int finite_nonneg(double x)
{
	return isfinite(x) && x >= 0;
}

lk_status lk_config_validate(const lk_solver_config *cfg, char *err, size_t err_size)
{
	if (err && err_size)
		err[0] = '\0';
	CHECK(cfg, "configuration is NULL");
	CHECK(lk__method_desc_of(cfg->method) != NULL, "unknown method %d", (int)cfg->method);
	CHECK(cfg->max_iterations >= 1, "iteration limit %d must be at least 1", cfg->max_iterations);
	CHECK(finite_nonneg(cfg->tol_abs) && finite_nonneg(cfg->tol_rel) && finite_nonneg(cfg->tol_stag),
	      "tolerances must be finite and non-negative");
	CHECK(finite_nonneg(cfg->budget) && finite_nonneg(cfg->time_budget_us),
	      "budget and time_us must be finite and non-negative");
	CHECK((unsigned)cfg->merit <= LK_MERIT_FC3D, "unknown merit %d", (int)cfg->merit);
	CHECK(cfg->check_every >= 1, "check interval %d must be at least 1", cfg->check_every);
	CHECK(cfg->coarse >= 0, "coarse interval %d must not be negative", cfg->coarse);
	CHECK(cfg->coarse == 0 || (cfg->order != LK_ORDER_ESP && cfg->order != LK_ORDER_GSP),
	      "coarse=%d corrects the sweeps of PGS and PSOR, not the %s schedule", cfg->coarse,
	      lk_order_name(cfg->order));
	CHECK(cfg->sor_w == LK_SOR_AUTO || (isfinite(cfg->sor_w) && cfg->sor_w > 0 && cfg->sor_w < 2),
	      "relaxation w = %g must lie in (0, 2), or be auto", cfg->sor_w);
	CHECK(cfg->method != LK_METHOD_AUTO || cfg->sor_w != LK_SOR_AUTO,
	      "auto's relaxation w must be a number in (0, 2); w=auto is PSOR's own choice of it");
	CHECK((unsigned)cfg->order < LK_ORDER_COUNT, "unknown order %d", (int)cfg->order);
	CHECK(cfg->threads >= 1 && cfg->threads <= LK_MAX_THREADS, "threads = %d must lie in 1..%d", cfg->threads,
	      LK_MAX_THREADS);
	CHECK(cfg->threads == 1 || cfg->order == LK_ORDER_NATURAL || cfg->order == LK_ORDER_COLOUR ||
	          cfg->order == LK_ORDER_PART,
	      "threads > 1 sweeps in the colour or the part order: order must be natural, colour or part, not %s",
	      lk_order_name(cfg->order));
	CHECK(cfg->threads == 1 || cfg->friction == LK_FRICTION_BOX, "threads > 1 sweeps with box friction only");
	CHECK((unsigned)cfg->friction <= LK_FRICTION_CONE, "unknown friction model %d", (int)cfg->friction);
	CHECK(cfg->friction == LK_FRICTION_BOX || ((1u << cfg->method) & M_CONE),
	      "friction=cone is for pgs, psor, pgs-sm, newton-minmap, apgd and ipm, not %s", lk_method_name(cfg->method));
	CHECK(!cfg->cone_local || cfg->friction == LK_FRICTION_CONE,
	      "local=1 solves each contact of the cone sweep exactly: it goes with friction=cone");
	CHECK(cfg->friction == LK_FRICTION_BOX || cfg->order == LK_ORDER_NATURAL,
	      "friction=cone sweeps in the natural order, not %s", lk_order_name(cfg->order));
	CHECK(isfinite(cfg->gravity[0]) && isfinite(cfg->gravity[1]) && isfinite(cfg->gravity[2]),
	      "gravity direction is not finite");
	CHECK(isfinite(cfg->amgs.gamma) && cfg->amgs.gamma > 0, "gamma = %g must be positive", cfg->amgs.gamma);
	CHECK(isfinite(cfg->amgs.alpha) && cfg->amgs.alpha > 0, "alpha = %g must be positive", cfg->amgs.alpha);
	CHECK((unsigned)cfg->amgs.omega <= LK_AMGS_OMEGA_BAR_E, "unknown omega %d", (int)cfg->amgs.omega);
	CHECK((unsigned)cfg->metric <= LK_METRIC_IDENTITY, "unknown metric %d", (int)cfg->metric);
	CHECK(isfinite(cfg->amgs.amsor_w) && cfg->amgs.amsor_w > 0 && cfg->amgs.amsor_w < 2,
	      "AMSOR w = %g must lie in (0, 2)", cfg->amgs.amsor_w);
	CHECK(cfg->pgs_sm.k_pgs >= 0 && cfg->pgs_sm.k_sm >= 0 && cfg->pgs_sm.k_pgs + cfg->pgs_sm.k_sm >= 1,
	      "kpgs and ksm must be non-negative and not both zero");
	CHECK(finite_nonneg(cfg->pgs_sm.reg) && finite_nonneg(cfg->pgs_sm.pgs_rel_tol),
	      "reg and pgs_rtol must be finite and non-negative");
	CHECK(isfinite(cfg->pgs_sm.cg_tol) && cfg->pgs_sm.cg_tol > 0, "cg_tol must be positive");
	CHECK(isfinite(cfg->pgs_sm.pgs_share) && cfg->pgs_sm.pgs_share > 0 && cfg->pgs_sm.pgs_share <= 1,
	      "share must lie in (0, 1]");
	CHECK(cfg->pgs_sm.cg_max >= 0, "cg_max must be non-negative");
	CHECK((unsigned)cfg->pgs_sm.sub <= LK_SUBSPACE_DIRECT, "unknown subspace solver %d", (int)cfg->pgs_sm.sub);
	CHECK((unsigned)cfg->pgs_sm.sub_rows <= LK_SUBSPACE_NORMAL, "unknown subspace rows %d",
	      (int)cfg->pgs_sm.sub_rows);
	CHECK((unsigned)cfg->newton.strategy <= LK_FISCHER_APPROXIMATION, "unknown strategy");
	CHECK((unsigned)cfg->newton.krylov <= LK_KRYLOV_CG, "unknown Krylov solver");
	CHECK(cfg->newton.krylov_max >= 1 && cfg->newton.gmres_restart >= 1, "krylov_max and restart must be >= 1");
	CHECK(isfinite(cfg->newton.forcing) && cfg->newton.forcing > 0 && cfg->newton.forcing < 1,
	      "forcing term must lie in (0, 1)");
	CHECK(isfinite(cfg->newton.ls_alpha) && cfg->newton.ls_alpha > 0 && cfg->newton.ls_alpha < 0.5,
	      "ls_alpha must lie in (0, 0.5)");
	CHECK(isfinite(cfg->newton.ls_beta) && cfg->newton.ls_beta > 0 && cfg->newton.ls_beta < 1,
	      "ls_beta must lie in (0, 1)");
	CHECK(isfinite(cfg->newton.ls_tau_min) && cfg->newton.ls_tau_min > 0 && cfg->newton.ls_tau_min < 1,
	      "tau_min must lie in (0, 1)");
	CHECK(cfg->newton.pgs_warm >= -1, "pgs_warm must be -1 (automatic) or a number of sweeps");
	CHECK(isfinite(cfg->newton.perturbation) && cfg->newton.perturbation > 0, "perturbation must be positive");
	CHECK(isfinite(cfg->newton.fd_h) && cfg->newton.fd_h > 0, "fd_h must be positive");
	CHECK(finite_nonneg(cfg->newton.lm), "lm must be finite and non-negative");
	CHECK(finite_nonneg(cfg->adapt.tol), "vtol must be finite and non-negative");
	CHECK(isfinite(cfg->adapt.cap) && cfg->adapt.cap >= 1, "cap = %g must be at least 1", cfg->adapt.cap);
	CHECK(finite_nonneg(cfg->adapt.bank), "bank must be finite and non-negative");
	CHECK(cfg->adapt.carry >= 0 && cfg->adapt.carry <= 1, "carry = %g must lie in [0, 1]", cfg->adapt.carry);
	CHECK(cfg->adapt.shuffle >= 0, "shuffle = %d must be 0 or more", cfg->adapt.shuffle);
	CHECK(cfg->adapt.touch >= 0, "touch = %d must be 0 or more", cfg->adapt.touch);
	CHECK(cfg->adapt.joint_w == 0.0 || (cfg->adapt.joint_w > 0.0 && cfg->adapt.joint_w < 2.0),
	      "jw = %g must be 0 or in (0, 2)", cfg->adapt.joint_w);
	CHECK(finite_nonneg(cfg->ipm.polish), "polish must be finite and non-negative");
	return LK_OK;
}
